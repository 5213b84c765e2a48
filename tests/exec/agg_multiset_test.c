/*
** agg_multiset_test.c — the per-group multisets of MIN, MAX and the
** DISTINCT aggregates over an updating input (exec/agg_multiset.h),
** checked against a model (a count per group and value) through random
** additions and retractions — some of values never added, whose count goes
** negative —, compactions that drop thousands of dead pairs, and
** checkpoints: a save read back into a fresh multiset gives every group's
** extreme again, and every truncation of the blob is refused.
*/
#include <stdlib.h>
#include <string.h>

#include "core/vector_codec.h"
#include "exec/agg_multiset.h"
#include "test.h"

enum { G = 4, V = 3000 };

static int64_t model[G][V];

static int64_t model_best(int g, int order) {
  int64_t best = -1;
  for (int64_t v = 0; v < V; v++)
    if (model[g][v] > 0 && (best < 0 || (order > 0 ? v > best : v < best))) best = v;
  return best;
}

static int64_t value_of_best(dp_multiset *m, int64_t g) {
  int64_t p = dp_multiset_best(m, g);
  return p < 0 ? -1 : dp_vector_get_i64(m->ht.keys[1], p);
}

static void check_against_model(dp_multiset *m, int order) {
  for (int g = 0; g < G; g++) CHECK_EQ(value_of_best(m, g), model_best(g, order));
}

static void roundtrip(dp_multiset *m, int order) {
  dp_buf b = {0};
  CHECK_EQ(dp_multiset_save(m, &b), DIPPER_OK);
  dp_multiset back;
  CHECK_EQ(dp_multiset_init(&back, dp_type_of(DP_T_BIGINT), order), DIPPER_OK);
  CHECK_EQ(dp_multiset_reserve(&back, G), DIPPER_OK);
  dp_rd in;
  dp_rd_init(&in, b.data, b.len);
  CHECK_EQ(dp_multiset_load(&back, G, &in), DIPPER_OK);
  CHECK(dp_rd_done(&in));
  if (order) check_against_model(&back, order);
  for (int g = 0; g < G; g++) CHECK(!dp_multiset_changed(&back, g));
  dp_multiset_free(&back);
  dp_buf_free(&b);
}

static void run(int order) {
  memset(model, 0, sizeof model);
  dp_multiset m;
  CHECK_EQ(dp_multiset_init(&m, dp_type_of(DP_T_BIGINT), order), DIPPER_OK);
  CHECK_EQ(dp_multiset_reserve(&m, G), DIPPER_OK);
  dp_vector *vals = dp_vector_new(dp_type_of(DP_T_BIGINT), 0);
  enum { N = 512 };
  int64_t gids[N], rows[N];
  int8_t sign[N], moved[N];
  srand(7);
  int compacted = 0;
  for (int round = 0; round < 60; round++) {
    dp_vector_clear(vals);
    /* the first rounds fill, the middle ones empty most values, the last ones mix */
    int fill = round < 20 ? 90 : round < 40 ? 3 : 50;
    for (int64_t r = 0; r < N; r++) {
      int g = rand() % G;
      int64_t v = rand() % V;
      if (rand() % 100 >= fill) {
        /* retract: mostly a value that is there */
        for (int t = 0; t < 50 && model[g][v] <= 0; t++) v = rand() % V;
        sign[r] = -1;
      } else {
        sign[r] = 1;
      }
      gids[r] = g;
      rows[r] = r;
      dp_vector_append_i64(vals, v);
    }
    CHECK_EQ(dp_multiset_update(&m, vals, gids, rows, N, sign, moved), DIPPER_OK);
    for (int64_t r = 0; r < N; r++) {
      int64_t v = dp_vector_get_i64(vals, r), *c = &model[gids[r]][v];
      int64_t old = *c;
      *c += sign[r];
      CHECK_EQ(moved[r], old <= 0 && *c > 0 ? 1 : old > 0 && *c <= 0 ? -1 : 0);
    }
    if (order) check_against_model(&m, order);
    for (int g = 0; g < G; g++) dp_multiset_settle(&m, g);
    int64_t before = dp_multiset_pairs(&m);
    CHECK_EQ(dp_multiset_compact(&m, 1024), DIPPER_OK);
    compacted += dp_multiset_pairs(&m) < before;
    if (order) check_against_model(&m, order);
    if (round % 10 == 9) roundtrip(&m, order);
  }
  CHECK(compacted > 0); /* the dead pairs went */
  /* A group cleared holds nothing, and a value added again counts from 1. */
  dp_multiset_clear(&m, 0);
  memset(model[0], 0, sizeof model[0]);
  if (order) check_against_model(&m, order);
  dp_vector_clear(vals);
  dp_vector_append_i64(vals, 5);
  gids[0] = 0;
  rows[0] = 0;
  sign[0] = 1;
  CHECK_EQ(dp_multiset_update(&m, vals, gids, rows, 1, sign, moved), DIPPER_OK);
  CHECK_EQ(moved[0], 1);
  if (order) CHECK_EQ(value_of_best(&m, 0), 5);
  dp_vector_free(vals);
  dp_multiset_free(&m);
}

TEST(min_against_a_model) { run(-1); }
TEST(max_against_a_model) { run(1); }
TEST(distinct_counts_against_a_model) { run(0); }

TEST(every_truncation_is_refused) {
  dp_multiset m;
  CHECK_EQ(dp_multiset_init(&m, dp_type_of(DP_T_STRING), 1), DIPPER_OK);
  CHECK_EQ(dp_multiset_reserve(&m, 2), DIPPER_OK);
  dp_vector *vals = dp_vector_new(dp_type_of(DP_T_STRING), 0);
  const char *words[] = {"pear", "apple", "fig", "apple"};
  int64_t gids[] = {0, 1, 1, 1}, rows[] = {0, 1, 2, 3};
  int8_t sign[] = {1, 1, 1, 1};
  for (int i = 0; i < 4; i++) dp_vector_append_str(vals, words[i], strlen(words[i]));
  CHECK_EQ(dp_multiset_update(&m, vals, gids, rows, 4, sign, NULL), DIPPER_OK);
  dp_buf b = {0};
  CHECK_EQ(dp_multiset_save(&m, &b), DIPPER_OK);
  for (size_t cut = 0; cut < b.len; cut++) {
    dp_multiset back;
    CHECK_EQ(dp_multiset_init(&back, dp_type_of(DP_T_STRING), 1), DIPPER_OK);
    CHECK_EQ(dp_multiset_reserve(&back, 2), DIPPER_OK);
    dp_rd in;
    dp_rd_init(&in, b.data, cut);
    int rc = dp_multiset_load(&back, 2, &in);
    CHECK(rc == DIPPER_CORRUPT || !dp_rd_done(&in) || in.pos < b.len);
    CHECK(rc != DIPPER_OK || cut == b.len);
    dp_multiset_free(&back);
  }
  /* A group id past the groups the aggregation has is refused. */
  dp_multiset back;
  CHECK_EQ(dp_multiset_init(&back, dp_type_of(DP_T_STRING), 1), DIPPER_OK);
  CHECK_EQ(dp_multiset_reserve(&back, 1), DIPPER_OK);
  dp_rd in;
  dp_rd_init(&in, b.data, b.len);
  CHECK_EQ(dp_multiset_load(&back, 1, &in), DIPPER_CORRUPT);
  dp_multiset_free(&back);
  /* The full blob gives each group's MAX. */
  CHECK_EQ(dp_multiset_init(&back, dp_type_of(DP_T_STRING), 1), DIPPER_OK);
  CHECK_EQ(dp_multiset_reserve(&back, 2), DIPPER_OK);
  dp_rd_init(&in, b.data, b.len);
  CHECK_EQ(dp_multiset_load(&back, 2, &in), DIPPER_OK);
  size_t n = 0;
  const char *s0 = dp_vector_get_str(back.ht.keys[1], dp_multiset_best(&back, 0), &n);
  CHECK(n == 4 && !memcmp(s0, "pear", 4));
  const char *s1 = dp_vector_get_str(back.ht.keys[1], dp_multiset_best(&back, 1), &n);
  CHECK(n == 3 && !memcmp(s1, "fig", 3));
  dp_multiset_free(&back);
  dp_buf_free(&b);
  dp_vector_free(vals);
  dp_multiset_free(&m);
}
int main(void) { return RUN_TESTS(); }
