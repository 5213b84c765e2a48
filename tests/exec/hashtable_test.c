/*
** hashtable_test.c — the group hash table: the fast path for BIGINT keys
** without NULLs and the general path give the same groups, across growth,
** a NULL key (which moves the table to the general path), and compaction.
** Checked against a model: the first row of each distinct key, in order.
** The bulk path of a restore (dp_ht_add_appended) gives the groups that
** inserting the same keys one batch at a time gives, and refuses a repeat;
** after dp_ht_reserve it grows no more.
*/
#include <stdio.h>
#include <stdlib.h>

#include "exec/hashtable.h"
#include "test.h"

enum { N = 20000 };

/* Key of row i: (i*7 mod 1500, i mod 3), so every key repeats. */
static void fill(dp_vector *a, dp_vector *b, int64_t from, int64_t n, int64_t null_at) {
  dp_vector_clear(a);
  dp_vector_clear(b);
  for (int64_t i = from; i < from + n; i++) {
    if (i == null_at)
      dp_vector_append_null(a);
    else
      dp_vector_append_i64(a, (i * 7) % 1500);
    dp_vector_append_i64(b, i % 3);
  }
}

/* The model: the group of a key is the order of its first appearance. */
static int64_t model_id(int64_t *first_a, int64_t *first_b, bool *first_null, int64_t *ngroups,
                        bool is_null, int64_t a, int64_t b) {
  for (int64_t g = 0; g < *ngroups; g++)
    if (first_null[g] == is_null && (is_null || first_a[g] == a) && first_b[g] == b) return g;
  first_a[*ngroups] = a;
  first_b[*ngroups] = b;
  first_null[*ngroups] = is_null;
  return (*ngroups)++;
}

static void probe_batch(dp_hashtable *ht, dp_vector *a, dp_vector *b, int64_t *fa, int64_t *fb,
                        bool *fnull, int64_t *ng, int64_t *bad) {
  int64_t n = a->length;
  const dp_vector *cols[2] = {a, b};
  uint64_t *h = calloc((size_t)n, sizeof *h);
  int64_t *ids = calloc((size_t)n, sizeof *ids);
  dp_ht_hash(cols, 2, n, h);
  int64_t created = 0, before = *ng;
  CHECK_EQ(dp_ht_find_or_insert(ht, cols, h, NULL, n, ids, &created), DIPPER_OK);
  for (int64_t i = 0; i < n; i++) {
    bool isnull = dp_vector_is_null(a, i);
    int64_t want = model_id(fa, fb, fnull, ng, isnull, isnull ? 0 : dp_vector_get_i64(a, i),
                            dp_vector_get_i64(b, i));
    if (ids[i] != want) (*bad)++;
  }
  CHECK_EQ(created, *ng - before);
  CHECK_EQ(ht->ngroups, *ng);
  free(h);
  free(ids);
}

TEST(fast_and_general_paths_agree) {
  const dp_type *types[2] = {dp_type_of(DP_T_BIGINT), dp_type_of(DP_T_BIGINT)};
  dp_hashtable ht;
  CHECK_EQ(dp_ht_init(&ht, 2, types), DIPPER_OK);
  dp_vector *a = dp_vector_new(types[0], 0), *b = dp_vector_new(types[1], 0);
  int64_t *fa = calloc(N, sizeof *fa), *fb = calloc(N, sizeof *fb);
  bool *fnull = calloc(N, sizeof *fnull);
  int64_t ng = 0, bad = 0;
  fill(a, b, 0, 5000, -1); /* fast path, the table grows several times */
  probe_batch(&ht, a, b, fa, fb, fnull, &ng, &bad);
  CHECK_EQ(ng, 1500);
  CHECK(ht.keys[0]->validity == NULL);
  fill(a, b, 5000, 3000, 6000); /* a NULL key: general path */
  probe_batch(&ht, a, b, fa, fb, fnull, &ng, &bad);
  CHECK(ht.keys[0]->validity != NULL);
  fill(a, b, 100000, 4000, -1); /* no NULL probed, but one stored: general path */
  probe_batch(&ht, a, b, fa, fb, fnull, &ng, &bad);
  CHECK_EQ(bad, 0);
  /* Keep the groups of even `b`; lookups after compaction still agree. */
  bool *keep = calloc((size_t)ht.ngroups, sizeof *keep);
  for (int64_t g = 0; g < ht.ngroups; g++) keep[g] = fb[g] % 2 == 0;
  CHECK_EQ(dp_ht_compact(&ht, keep, NULL), DIPPER_OK);
  int64_t kept = 0;
  for (int64_t g = 0; g < ng; g++)
    if (keep[g]) {
      fa[kept] = fa[g];
      fb[kept] = fb[g];
      fnull[kept] = fnull[g];
      kept++;
    }
  ng = kept;
  fill(a, b, 0, 6000, -1);
  probe_batch(&ht, a, b, fa, fb, fnull, &ng, &bad);
  CHECK_EQ(bad, 0);
  free(keep);
  free(fa);
  free(fb);
  free(fnull);
  dp_vector_free(a);
  dp_vector_free(b);
  dp_ht_free(&ht);
}

/* The distinct keys of `src` (a table filled by find_or_insert) appended
** to a fresh table's key vectors in rows [0, at) and [at, n), each part
** with dp_ht_add_appended: every key of a probe batch finds the group the
** one-by-one table gave it. */
static void check_bulk_like(const dp_hashtable *src, const dp_type *const *types, int64_t at,
                            bool reserve) {
  dp_hashtable ht;
  CHECK_EQ(dp_ht_init(&ht, 2, types), DIPPER_OK);
  int64_t n = src->ngroups, dup = 0;
  int64_t parts[2] = {at, n};
  uint64_t nslots = 0;
  for (int p = 0; p < 2; p++) {
    int64_t from = ht.ngroups;
    for (int k = 0; k < 2; k++)
      CHECK_EQ(dp_vector_take(ht.keys[k], src->keys[k], NULL, from, parts[p] - from), DIPPER_OK);
    CHECK_EQ(dp_ht_add_appended(&ht, parts[p], &dup), DIPPER_OK);
    CHECK_EQ(dup, -1);
    CHECK_EQ(ht.ngroups, parts[p]);
    if (reserve && p == 0) { /* sized for all n: the second part grows nothing */
      CHECK_EQ(dp_ht_reserve(&ht, n), DIPPER_OK);
      CHECK(ht.nslots >= (uint64_t)n * 2);
      CHECK(ht.hashes_cap >= n);
      nslots = ht.nslots;
      for (int64_t g = 0; g < ht.ngroups; g++) /* what it held is found still */
        CHECK_EQ(dp_ht_find(&ht, (const dp_vector *const *)ht.keys, ht.hashes[g], g), g);
    }
  }
  if (reserve) CHECK_EQ(ht.nslots, nslots);
  for (int64_t g = 0; g < n; g++) CHECK_EQ(ht.hashes[g], src->hashes[g]);
  const dp_vector *cols[2] = {src->keys[0], src->keys[1]};
  int64_t wrong = 0;
  for (int64_t g = 0; g < n; g++)
    wrong += dp_ht_find(&ht, cols, src->hashes[g], g) != g;
  CHECK_EQ(wrong, 0);
  /* a key repeated in the rows appended: refused, the table as it was */
  for (int k = 0; k < 2; k++) {
    int64_t row = n / 2;
    CHECK_EQ(dp_vector_take(ht.keys[k], src->keys[k], &row, 0, 1), DIPPER_OK);
  }
  CHECK_EQ(dp_ht_add_appended(&ht, n + 1, &dup), DIPPER_OK);
  CHECK_EQ(dup, n);
  CHECK_EQ(ht.ngroups, n);
  CHECK_EQ(ht.keys[0]->length, n);
  CHECK_EQ(dp_ht_add_appended(&ht, n + 1, &dup), DIPPER_MISUSE); /* vectors hold n rows */
  wrong = 0;
  for (int64_t g = 0; g < n; g++)
    wrong += dp_ht_find(&ht, cols, src->hashes[g], g) != g;
  CHECK_EQ(wrong, 0);
  /* and the table goes on growing one batch at a time */
  uint64_t h[1];
  int64_t ids[1], created = 0;
  dp_vector *a = dp_vector_new(types[0], 0), *b = dp_vector_new(types[1], 0);
  dp_vector_append_i64(a, -5);
  dp_vector_append_i64(b, -5);
  const dp_vector *probe[2] = {a, b};
  dp_ht_hash(probe, 2, 1, h);
  CHECK_EQ(dp_ht_find_or_insert(&ht, probe, h, NULL, 1, ids, &created), DIPPER_OK);
  CHECK_EQ(ids[0], n);
  CHECK_EQ(created, 1);
  dp_vector_free(a);
  dp_vector_free(b);
  dp_ht_free(&ht);
}

TEST(bulk_add_gives_the_groups_of_one_by_one_inserts) {
  const dp_type *types[2] = {dp_type_of(DP_T_BIGINT), dp_type_of(DP_T_BIGINT)};
  dp_hashtable ht;
  CHECK_EQ(dp_ht_init(&ht, 2, types), DIPPER_OK);
  dp_vector *a = dp_vector_new(types[0], 0), *b = dp_vector_new(types[1], 0);
  int64_t *fa = calloc(N, sizeof *fa), *fb = calloc(N, sizeof *fb);
  bool *fnull = calloc(N, sizeof *fnull);
  int64_t ng = 0, bad = 0;
  fill(a, b, 0, 5000, -1);
  probe_batch(&ht, a, b, fa, fb, fnull, &ng, &bad);
  check_bulk_like(&ht, types, 0, false);   /* BIGINT keys, no NULL: one part */
  check_bulk_like(&ht, types, 700, false); /* into a table that holds some */
  check_bulk_like(&ht, types, 0, true);    /* sized first (dp_ht_reserve), empty */
  check_bulk_like(&ht, types, 700, true);  /* sized with groups in: placed again */
  dp_hashtable big;
  CHECK_EQ(dp_ht_init(&big, 2, types), DIPPER_OK);
  CHECK_EQ(dp_ht_reserve(&big, (int64_t)UINT32_MAX), DIPPER_LIMIT);
  CHECK_EQ(big.nslots, 64u);
  dp_ht_free(&big);
  fill(a, b, 5000, 3000, 6000);     /* a NULL key: the general compare */
  probe_batch(&ht, a, b, fa, fb, fnull, &ng, &bad);
  CHECK_EQ(bad, 0);
  check_bulk_like(&ht, types, 1, false);
  check_bulk_like(&ht, types, 1, true);
  free(fa);
  free(fb);
  free(fnull);
  dp_vector_free(a);
  dp_vector_free(b);
  dp_ht_free(&ht);
}

/* A NULL key is one group whatever bytes its slot holds: gathers keep a
** NULL row's slot as it is (dp_vector_take), and kernels may leave values
** under a NULL bit (NULLIF(x, 5) keeps the 5). */
TEST(null_keys_ignore_slot_contents) {
  const dp_type *types[2] = {dp_type_of(DP_T_INT), dp_type_of(DP_T_STRING)};
  dp_hashtable ht;
  CHECK_EQ(dp_ht_init(&ht, 2, types), DIPPER_OK);
  dp_vector *a = dp_vector_new(types[0], 0), *s = dp_vector_new(types[1], 0);
  /* rows: (NULL[5], 'x'), (NULL[0], 'x'), (7, NULL['abc']), (7, NULL[''])  */
  dp_vector_append_i64(a, 5);
  dp_vector_append_null(a);
  dp_vector_append_i64(a, 7);
  dp_vector_append_i64(a, 7);
  dp_vector_append_str(s, "x", 1);
  dp_vector_append_str(s, "x", 1);
  dp_vector_append_str(s, "abc", 3);
  dp_vector_append_null(s);
  a->validity[0] &= (uint8_t)~1u; /* row 0: NULL over the value 5 */
  a->null_count++;
  s->validity[0] &= (uint8_t)~4u; /* row 2: NULL over 'abc' */
  s->null_count++;
  const dp_vector *cols[2] = {a, s};
  uint64_t h[4];
  dp_ht_hash(cols, 2, 4, h);
  CHECK(h[0] == h[1]);
  CHECK(h[2] == h[3]);
  CHECK(h[0] != h[2]);
  int64_t ids[4], nnew = 0;
  CHECK_EQ(dp_ht_find_or_insert(&ht, cols, h, NULL, 4, ids, &nnew), DIPPER_OK);
  CHECK_EQ(nnew, 2);
  CHECK_EQ(ids[0], 0);
  CHECK_EQ(ids[1], 0);
  CHECK_EQ(ids[2], 1);
  CHECK_EQ(ids[3], 1);
  dp_vector_free(a);
  dp_vector_free(s);
  dp_ht_free(&ht);
}

/* The row-at-a-time hash (dp_groups) is the batch hash of the same row, for
** every layout, NULLs included; and dp_ht_find / dp_ht_add one row at a
** time number the keys as dp_ht_find_or_insert does. */
TEST(row_hash_is_batch_hash) {
  dp_arena *a = dp_arena_new(0);
  const dp_type *types[8] = {
      dp_type_of(DP_T_TINYINT), dp_type_of(DP_T_BIGINT),  dp_type_of(DP_T_DOUBLE),
      dp_type_of(DP_T_BOOLEAN), dp_type_decimal(a, 20, 2), dp_type_of(DP_T_STRING),
      dp_type_array(a, dp_type_of(DP_T_INT)), dp_type_of(DP_T_NULL)};
  enum { ROWS = 300 };
  dp_vector *cols[8];
  for (int c = 0; c < 8; c++) cols[c] = dp_vector_new(types[c], 0);
  for (int64_t i = 0; i < ROWS; i++) {
    bool null = i % 5 == 3;
    int64_t k = i % 37; /* keys repeat */
    for (int c = 0; c < 8; c++) {
      dp_vector *v = cols[c];
      if ((null && c % 2 == i % 2) || c == 7) {
        dp_vector_append_null(v);
        continue;
      }
      switch (c) {
      case 0: dp_vector_append_i64(v, k - 18); break;
      case 1: dp_vector_append_i64(v, k * 1000003); break;
      case 2: dp_vector_append_f64(v, k % 3 == 0 ? -0.0 : (double)k / 8); break;
      case 3: dp_vector_append_bool(v, k % 2); break;
      case 4: dp_vector_append_dec(v, (dp_i128)k * 12345); break;
      case 5: {
        char txt[16];
        int len = snprintf(txt, sizeof txt, "key-%d", (int)k);
        dp_vector_append_str(v, txt, (size_t)len);
        break;
      }
      default:
        for (int64_t e = 0; e < k % 4; e++) dp_vector_append_i64(v->children[0], e + k);
        dp_vector_append_list(v);
      }
    }
  }
  const dp_vector *const *cc = (const dp_vector *const *)cols;
  uint64_t *h = calloc(ROWS, sizeof *h);
  dp_ht_hash(cc, 8, ROWS, h);
  int64_t differ = 0;
  for (int64_t i = 0; i < ROWS; i++) differ += dp_ht_hash_row(cc, 8, i) != h[i];
  CHECK_EQ(differ, 0);
  /* one row at a time against the batch insert */
  dp_hashtable batch, rows;
  CHECK_EQ(dp_ht_init(&batch, 8, types), DIPPER_OK);
  CHECK_EQ(dp_ht_init(&rows, 8, types), DIPPER_OK);
  int64_t *ids = calloc(ROWS, sizeof *ids), nnew = 0;
  CHECK_EQ(dp_ht_find_or_insert(&batch, cc, h, NULL, ROWS, ids, &nnew), DIPPER_OK);
  int64_t mismatched = 0;
  for (int64_t i = 0; i < ROWS; i++) {
    uint64_t hr = dp_ht_hash_row(cc, 8, i);
    int64_t id = dp_ht_find(&rows, cc, hr, i);
    if (id < 0) CHECK_EQ(dp_ht_add(&rows, cc, i, hr, &id), DIPPER_OK);
    mismatched += id != ids[i];
  }
  CHECK_EQ(mismatched, 0);
  CHECK_EQ(rows.ngroups, nnew);
  CHECK(nnew > 37 && nnew < ROWS); /* NULL patterns split keys, repeats merge */
  free(ids);
  free(h);
  dp_ht_free(&batch);
  dp_ht_free(&rows);
  for (int c = 0; c < 8; c++) dp_vector_free(cols[c]);
  dp_arena_free(a);
}

int main(void) { return RUN_TESTS(); }
