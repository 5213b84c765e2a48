/*
** agg_vlist_test.c — the per-group value lists of FIRST_VALUE, LAST_VALUE
** and LISTAGG over an updating input (exec/agg_vlist.h), checked against a
** model (per group, its values in arrival order; a retraction removes the
** first equal one, as Flink's *WithRetract functions do) through random
** additions and retractions — some of values not there, which change
** nothing —, compactions that drop dead pairs, groups cleared, and
** checkpoints: a save read back into a fresh list gives every group's
** result again and keeps the order, and every truncation of the blob is
** refused.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vector_codec.h"
#include "exec/agg_vlist.h"
#include "test.h"

enum { G = 3, V = 40, CAP = 4096 };

static int64_t model[G][CAP];
static int64_t mlen[G];

static void model_add(int g, int64_t v) {
  CHECK(mlen[g] < CAP);
  model[g][mlen[g]++] = v;
}

static void model_retract(int g, int64_t v) {
  for (int64_t i = 0; i < mlen[g]; i++)
    if (model[g][i] == v) {
      memmove(&model[g][i], &model[g][i + 1], (size_t)(mlen[g] - i - 1) * sizeof model[g][0]);
      mlen[g]--;
      return;
    }
}

/* The three lists, fed the same rows: FIRST and LAST of BIGINT, LISTAGG of
** the values' text. */
typedef struct trio {
  dp_vlist first, last, agg;
} trio;

static void trio_init(trio *t, int64_t groups) {
  CHECK_EQ(dp_vlist_init(&t->first, dp_type_of(DP_T_BIGINT), DP_VLIST_FIRST), DIPPER_OK);
  CHECK_EQ(dp_vlist_init(&t->last, dp_type_of(DP_T_BIGINT), DP_VLIST_LAST), DIPPER_OK);
  CHECK_EQ(dp_vlist_init(&t->agg, dp_type_of(DP_T_STRING), DP_VLIST_LISTAGG), DIPPER_OK);
  CHECK_EQ(dp_vlist_reserve(&t->first, groups), DIPPER_OK);
  CHECK_EQ(dp_vlist_reserve(&t->last, groups), DIPPER_OK);
  CHECK_EQ(dp_vlist_reserve(&t->agg, groups), DIPPER_OK);
}

static void trio_free(trio *t) {
  dp_vlist_free(&t->first);
  dp_vlist_free(&t->last);
  dp_vlist_free(&t->agg);
}

/* Group g's three results, as put() writes them, against the model. */
static void check_group(trio *t, int g, bool old) {
  dp_vector *f = dp_vector_new(dp_type_of(DP_T_BIGINT), 0);
  dp_vector *l = dp_vector_new(dp_type_of(DP_T_BIGINT), 0);
  dp_vector *a = dp_vector_new(dp_type_of(DP_T_STRING), 0);
  CHECK_EQ(dp_vlist_put(&t->first, g, old, f), DIPPER_OK);
  CHECK_EQ(dp_vlist_put(&t->last, g, old, l), DIPPER_OK);
  CHECK_EQ(dp_vlist_put(&t->agg, g, old, a), DIPPER_OK);
  if (mlen[g] == 0) {
    CHECK(dp_vector_is_null(f, 0) && dp_vector_is_null(l, 0) && dp_vector_is_null(a, 0));
  } else {
    CHECK_EQ(dp_vector_get_i64(f, 0), model[g][0]);
    CHECK_EQ(dp_vector_get_i64(l, 0), model[g][mlen[g] - 1]);
    char want[CAP * 4];
    size_t n = 0;
    for (int64_t i = 0; i < mlen[g]; i++)
      n += (size_t)snprintf(want + n, sizeof want - n, "%s%lld", i ? "|" : "", (long long)model[g][i]);
    size_t len = 0;
    const char *got = dp_vector_get_str(a, 0, &len);
    CHECK(len == n && memcmp(got, want, n) == 0);
  }
  dp_vector_free(f);
  dp_vector_free(l);
  dp_vector_free(a);
}

static void settle_all(trio *t) {
  for (int g = 0; g < G; g++) {
    CHECK(!dp_vlist_settle(&t->first, g) && !dp_vlist_settle(&t->last, g) &&
          !dp_vlist_settle(&t->agg, g));
    CHECK(!dp_vlist_changed(&t->first, g) && !dp_vlist_changed(&t->last, g) &&
          !dp_vlist_changed(&t->agg, g));
  }
}

static void roundtrip(trio *t) {
  dp_buf b = {0};
  CHECK_EQ(dp_vlist_save(&t->first, &b), DIPPER_OK);
  CHECK_EQ(dp_vlist_save(&t->last, &b), DIPPER_OK);
  CHECK_EQ(dp_vlist_save(&t->agg, &b), DIPPER_OK);
  trio back;
  trio_init(&back, G);
  dp_rd in;
  dp_rd_init(&in, b.data, b.len);
  CHECK_EQ(dp_vlist_load(&back.first, G, &in), DIPPER_OK);
  CHECK_EQ(dp_vlist_load(&back.last, G, &in), DIPPER_OK);
  CHECK_EQ(dp_vlist_load(&back.agg, G, &in), DIPPER_OK);
  CHECK(dp_rd_done(&in));
  for (int g = 0; g < G; g++) {
    check_group(&back, g, false);
    check_group(&back, g, true); /* restored results count as emitted */
    CHECK(!dp_vlist_changed(&back.agg, g));
  }
  /* the separator came back too */
  CHECK(back.agg.sep && back.agg.sep_len == 1 && back.agg.sep[0] == '|');
  trio_free(&back);
  dp_buf_free(&b);
}

static void feed(trio *t, const int64_t *vals, const int64_t *gids, const int8_t *sign, int64_t n) {
  dp_vector *iv = dp_vector_new(dp_type_of(DP_T_BIGINT), 0);
  dp_vector *sv = dp_vector_new(dp_type_of(DP_T_STRING), 0);
  int64_t *rows = malloc((size_t)n * sizeof *rows);
  for (int64_t r = 0; r < n; r++) {
    char s[24];
    int k = snprintf(s, sizeof s, "%lld", (long long)vals[r]);
    dp_vector_append_i64(iv, vals[r]);
    dp_vector_append_str(sv, s, (size_t)k);
    rows[r] = r;
  }
  CHECK_EQ(dp_vlist_update(&t->first, iv, gids, rows, n, sign), DIPPER_OK);
  CHECK_EQ(dp_vlist_update(&t->last, iv, gids, rows, n, sign), DIPPER_OK);
  CHECK_EQ(dp_vlist_update(&t->agg, sv, gids, rows, n, sign), DIPPER_OK);
  for (int64_t r = 0; r < n; r++) {
    if (sign[r] > 0) model_add((int)gids[r], vals[r]);
    else model_retract((int)gids[r], vals[r]);
  }
  free(rows);
  dp_vector_free(iv);
  dp_vector_free(sv);
}

TEST(value_lists_against_a_model) {
  memset(mlen, 0, sizeof mlen);
  trio t;
  trio_init(&t, G);
  CHECK_EQ(dp_vlist_set_sep(&t.agg, "|", 1), DIPPER_OK);
  CHECK_EQ(dp_vlist_set_sep(&t.agg, ";", 1), DIPPER_OK); /* the first stays */
  enum { N = 256 };
  int64_t vals[N], gids[N];
  int8_t sign[N];
  srand(11);
  int compacted = 0;
  for (int round = 0; round < 60; round++) {
    /* fill, then mostly take back, then mix */
    int fill = round < 20 ? 80 : round < 40 ? 25 : 55;
    for (int64_t r = 0; r < N; r++) {
      int g = rand() % G;
      int64_t v = rand() % V;
      sign[r] = rand() % 100 < fill ? 1 : -1;
      /* a retraction mostly of a value that is there (not always) */
      if (sign[r] < 0 && mlen[g] > 0 && rand() % 10) v = model[g][rand() % mlen[g]];
      gids[r] = g;
      vals[r] = v;
    }
    feed(&t, vals, gids, sign, N);
    for (int g = 0; g < G; g++) check_group(&t, g, false);
    settle_all(&t);
    int64_t before = t.agg.ht.ngroups;
    CHECK_EQ(dp_vlist_compact(&t.first, 16), DIPPER_OK);
    CHECK_EQ(dp_vlist_compact(&t.last, 16), DIPPER_OK);
    CHECK_EQ(dp_vlist_compact(&t.agg, 0), DIPPER_OK);
    compacted += t.agg.ht.ngroups < before;
    for (int g = 0; g < G; g++) {
      check_group(&t, g, false);
      check_group(&t, g, true); /* the shown results survive compaction */
    }
    if (round % 10 == 9) roundtrip(&t);
  }
  CHECK(compacted > 0);
  /* A group cleared holds nothing; a value added again is its only one. */
  dp_vlist_clear(&t.first, 1);
  dp_vlist_clear(&t.last, 1);
  dp_vlist_clear(&t.agg, 1);
  mlen[1] = 0;
  check_group(&t, 1, false);
  CHECK(dp_vlist_changed(&t.agg, 1) == (t.agg.shown_str[1].has));
  int64_t v = 7, gid = 1;
  int8_t plus = 1;
  feed(&t, &v, &gid, &plus, 1);
  check_group(&t, 1, false);
  trio_free(&t);
}

/* Equal values keep their own places: the oldest copy goes first. */
TEST(a_retraction_takes_the_oldest_copy) {
  memset(mlen, 0, sizeof mlen);
  trio t;
  trio_init(&t, 1);
  CHECK_EQ(dp_vlist_set_sep(&t.agg, "|", 1), DIPPER_OK);
  int64_t vals[] = {1, 2, 1, 3, 1, 2}, gids[6] = {0};
  int8_t sign[] = {1, 1, 1, 1, -1, -1};
  feed(&t, vals, gids, sign, 6); /* [1 2 1 3] - 1 - 2 = [1 3] */
  CHECK_EQ(mlen[0], 2);
  check_group(&t, 0, false);
  dp_vector *a = dp_vector_new(dp_type_of(DP_T_STRING), 0);
  CHECK_EQ(dp_vlist_put(&t.agg, 0, false, a), DIPPER_OK);
  size_t n = 0;
  const char *s = dp_vector_get_str(a, 0, &n);
  CHECK(n == 3 && memcmp(s, "1|3", 3) == 0);
  dp_vector_free(a);
  trio_free(&t);
}

TEST(every_truncation_is_refused) {
  dp_vlist m;
  CHECK_EQ(dp_vlist_init(&m, dp_type_of(DP_T_STRING), DP_VLIST_LISTAGG), DIPPER_OK);
  CHECK_EQ(dp_vlist_reserve(&m, 2), DIPPER_OK);
  CHECK_EQ(dp_vlist_set_sep(&m, ", ", 2), DIPPER_OK);
  dp_vector *vals = dp_vector_new(dp_type_of(DP_T_STRING), 0);
  const char *words[] = {"pear", "apple", "fig", "apple"};
  int64_t gids[] = {0, 1, 1, 1}, rows[] = {0, 1, 2, 3};
  int8_t sign[] = {1, 1, 1, 1};
  for (int i = 0; i < 4; i++) dp_vector_append_str(vals, words[i], strlen(words[i]));
  CHECK_EQ(dp_vlist_update(&m, vals, gids, rows, 4, sign), DIPPER_OK);
  dp_buf b = {0};
  CHECK_EQ(dp_vlist_save(&m, &b), DIPPER_OK);
  for (size_t cut = 0; cut < b.len; cut++) {
    dp_vlist back;
    CHECK_EQ(dp_vlist_init(&back, dp_type_of(DP_T_STRING), DP_VLIST_LISTAGG), DIPPER_OK);
    dp_rd in;
    dp_rd_init(&in, b.data, cut);
    int rc = dp_vlist_load(&back, 2, &in);
    CHECK(rc == DIPPER_CORRUPT || !dp_rd_done(&in) || in.pos < b.len);
    CHECK(rc != DIPPER_OK || cut == b.len);
    dp_vlist_free(&back);
  }
  /* A group id past the groups the aggregation has is refused. */
  dp_vlist back;
  CHECK_EQ(dp_vlist_init(&back, dp_type_of(DP_T_STRING), DP_VLIST_LISTAGG), DIPPER_OK);
  dp_rd in;
  dp_rd_init(&in, b.data, b.len);
  CHECK_EQ(dp_vlist_load(&back, 1, &in), DIPPER_CORRUPT);
  dp_vlist_free(&back);
  /* The full blob gives each group's list in its order. */
  CHECK_EQ(dp_vlist_init(&back, dp_type_of(DP_T_STRING), DP_VLIST_LISTAGG), DIPPER_OK);
  dp_rd_init(&in, b.data, b.len);
  CHECK_EQ(dp_vlist_load(&back, 2, &in), DIPPER_OK);
  dp_vector *out = dp_vector_new(dp_type_of(DP_T_STRING), 0);
  CHECK_EQ(dp_vlist_put(&back, 1, true, out), DIPPER_OK);
  size_t n = 0;
  const char *s = dp_vector_get_str(out, 0, &n);
  CHECK(n == 17 && memcmp(s, "apple, fig, apple", 17) == 0);
  dp_vector_free(out);
  dp_vlist_free(&back);
  dp_buf_free(&b);
  dp_vector_free(vals);
  dp_vlist_free(&m);
}

int main(void) { return RUN_TESTS(); }
