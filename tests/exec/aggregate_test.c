/*
** aggregate_test.c — the group hash table and the AGGREGATE operator: every
** aggregate function, FILTER and DISTINCT, each output mode, late rows,
** session merging across micro-batches, the final flush and batch mode.
**
** The operators run below the driver (agg_fixture.h): each step is one
** micro-batch, and the test moves the watermark the way the driver does
** (max event time − delay, in effect from the next batch).  Late rows are
** judged by the watermark the previous step ran under, windows close by the
** current one (SPARK-40925; exec.h).
*/
#include <math.h>

#include "agg_fixture.h"
#include "exec/hashtable.h"

#define DDL                                                                                   \
  "CREATE TABLE bid (auction BIGINT, price BIGINT, ts TIMESTAMP(3), "                          \
  "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='memory');\n"
#define TUMBLE5 "FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
#define BYWIN " GROUP BY auction, window_start, window_end;"
#define NUL INT64_MIN

/* ---- the hash table ---- */

TEST(hashtable_groups_ints_strings_and_nulls) {
  dp_hashtable ht;
  const dp_type *types[2] = {dp_type_of(DP_T_BIGINT), dp_type_of(DP_T_STRING)};
  CHECK(dp_ht_init(&ht, 2, types) == DIPPER_OK);
  dp_vector *a = dp_vector_new(types[0], 0), *b = dp_vector_new(types[1], 0);
  int64_t n = 20000;
  for (int64_t i = 0; i < n; i++) {
    if (i % 1000 == 7)
      dp_vector_append_null(a);
    else
      dp_vector_append_i64(a, i % 5000);
    char s[8];
    int len = snprintf(s, sizeof s, "k%d", (int)(i % 2));
    dp_vector_append_str(b, s, (size_t)len);
  }
  const dp_vector *cols[2] = {a, b};
  uint64_t *h = malloc((size_t)n * sizeof *h);
  int64_t *ids = malloc((size_t)n * sizeof *ids), created = 0;
  dp_ht_hash(cols, 2, n, h);
  CHECK(dp_ht_find_or_insert(&ht, cols, h, NULL, n, ids, &created) == DIPPER_OK);
  /* (i % 5000, i % 2) has 5000 combinations (5000 is even), but the 5 of
  ** them with i % 1000 == 7 only ever appear as NULL: 4995 + (NULL, k1). */
  CHECK_EQ(created, 4996);
  CHECK_EQ(ht.ngroups, 4996);
  CHECK_EQ(ids[0], ids[5000]);
  CHECK(ids[0] != ids[1]);
  CHECK_EQ(ids[7], ids[1007]); /* NULL groups with NULL */
  CHECK(ht.nslots >= 2 * (uint64_t)ht.ngroups);
  CHECK_EQ(dp_ht_find(&ht, cols, h[123], 123), ids[123]);
  /* Keep the odd ids only: renumbered densely, still found. */
  bool *keep = malloc((size_t)ht.ngroups);
  int64_t *remap = malloc((size_t)ht.ngroups * sizeof *remap);
  for (int64_t g = 0; g < ht.ngroups; g++) keep[g] = g % 2 == 1;
  int64_t old123 = ids[123], old124 = ids[124];
  CHECK(dp_ht_compact(&ht, keep, remap) == DIPPER_OK);
  CHECK_EQ(ht.ngroups, 2498);
  CHECK_EQ(dp_ht_find(&ht, cols, h[123], 123), remap[old123]);
  CHECK_EQ(dp_ht_find(&ht, cols, h[124], 124), remap[old124]);
  CHECK(remap[old123] == -1 || remap[old124] == -1);
  free(keep);
  free(remap);
  free(h);
  free(ids);
  dp_vector_free(a);
  dp_vector_free(b);
  dp_ht_free(&ht);
}

TEST(hashtable_float_keys_group_zero_and_nan) {
  dp_hashtable ht;
  const dp_type *types[1] = {dp_type_of(DP_T_DOUBLE)};
  CHECK(dp_ht_init(&ht, 1, types) == DIPPER_OK);
  dp_vector *v = dp_vector_new(types[0], 0);
  dp_vector_append_f64(v, 0.0);
  dp_vector_append_f64(v, -0.0);
  dp_vector_append_f64(v, NAN);
  dp_vector_append_f64(v, -NAN);
  dp_vector_append_f64(v, 1.5);
  const dp_vector *cols[1] = {v};
  uint64_t h[5];
  int64_t ids[5], created;
  dp_ht_hash(cols, 1, 5, h);
  CHECK(dp_ht_find_or_insert(&ht, cols, h, NULL, 5, ids, &created) == DIPPER_OK);
  CHECK_EQ(created, 3);
  CHECK_EQ(ids[0], ids[1]);
  CHECK_EQ(ids[2], ids[3]);
  dp_vector_free(v);
  dp_ht_free(&ht);
}

/* ---- the operator ---- */

static bool open_agg(fixture *fx, const char *sql, unsigned mode) {
  return fixture_open(fx, sql, DP_P_AGGREGATE, DP_P_WATERMARK, mode);
}

/* The driver's watermark rule, for the tests: max event time − 1 s. */
static void advance(fixture *fx, int64_t max_ts) { fx->ex.watermark = max_ts - SEC(1); }

static const char *str_at(const dp_batch *b, int col, int64_t row, char *buf, size_t cap) {
  size_t len;
  const char *p = dp_vector_get_str(b->cols[col], row, &len);
  snprintf(buf, cap, "%.*s", (int)len, p);
  return buf;
}

TEST(tumble_append_emits_closed_windows_once_and_drops_late_rows) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, window_start, window_end, count(*), sum(price) " TUMBLE5 BYWIN,
                 DP_MODE_APPEND));
  if (!fx.nops) return;
  dp_op *agg = fx.top;
  int64_t b1[] = {1, 10, SEC(1), 1, 20, SEC(2), 2, 5, SEC(3), 1, 30, SEC(6)};
  CHECK(fixture_step(&fx, b1, 4, false) == NULL); /* no watermark yet */
  CHECK_EQ(agg->metrics.state_rows, 3);
  advance(&fx, SEC(6)); /* 5 s: closes [0, 5) */
  /* The row at 4 s is judged by the previous step's watermark (none), so it
  ** still counts in [0, 5), which closes in this step. */
  int64_t b2[] = {1, 40, SEC(7), 1, 99, SEC(4)};
  dp_batch *out = fixture_step(&fx, b2, 2, false);
  CHECK(out && out->nrows == 2);
  int64_t k1[] = {1, 0, SEC(5)}, k2[] = {2, 0, SEC(5)};
  int64_t r1 = find_row(out, k1, 3), r2 = find_row(out, k2, 3);
  CHECK(r1 >= 0 && r2 >= 0);
  if (r1 >= 0) CHECK_EQ(cell_i64(out, 3, r1), 3);
  if (r1 >= 0) CHECK_EQ(cell_i64(out, 4, r1), 129);
  if (r2 >= 0) CHECK_EQ(cell_i64(out, 4, r2), 5);
  CHECK_EQ(agg->metrics.late_dropped, 0);
  CHECK_EQ(agg->metrics.state_rows, 1);
  /* Same watermark, now also the late one: a row at 3 s (window end 5 s ≤
  ** 5 s) is dropped, so [0, 5) is neither made again nor emitted twice. */
  int64_t b3[] = {1, 7, SEC(3)};
  CHECK(fixture_step(&fx, b3, 1, false) == NULL);
  CHECK_EQ(agg->metrics.late_dropped, 1);
  CHECK_EQ(agg->metrics.state_rows, 1);
  /* The final batch of a bounded run closes the rest. */
  out = fixture_step(&fx, NULL, 0, true);
  CHECK(out && out->nrows == 1);
  int64_t k3[] = {1, SEC(5), SEC(10)};
  int64_t r3 = find_row(out, k3, 3);
  CHECK(r3 >= 0);
  if (r3 >= 0) CHECK_EQ(cell_i64(out, 3, r3), 2);
  if (r3 >= 0) CHECK_EQ(cell_i64(out, 4, r3), 70);
  CHECK_EQ(agg->metrics.state_rows, 0);
  fixture_close(&fx);
}

TEST(every_aggregate) {
  fixture fx;
  CHECK(open_agg(&fx, DDL
                 "SELECT auction, window_start, window_end, count(*), sum(price), avg(price), min(price), "
                 "max(price), first_value(price), last_value(price), count(DISTINCT price), "
                 "count(price) FILTER (WHERE price > 15), stddev_pop(price), var_samp(price), "
                 "bool_and(price > 0), approx_count_distinct(price), listagg(CAST(price AS STRING)), "
                 "collect(price), max(CAST(price AS STRING)), min(CAST(price AS STRING)), "
                 "bool_or(price > 25), var_pop(price), stddev_samp(price), sum(DISTINCT price), "
                 "listagg(CAST(price AS STRING), '-') " TUMBLE5 BYWIN,
                 DP_MODE_APPEND));
  if (!fx.nops) return;
  int64_t b1[] = {1, 10, 100000, 1, 20, 200000, 1, 20, 300000};
  CHECK(fixture_step(&fx, b1, 3, false) == NULL);
  int64_t b2[] = {1, NUL, 400000, 1, 30, 500000, 2, NUL, 600000};
  CHECK(fixture_step(&fx, b2, 3, false) == NULL);
  dp_batch *out = fixture_step(&fx, NULL, 0, true);
  CHECK(out && out->nrows == 2);
  int64_t key[] = {1, 0, SEC(5)};
  int64_t r = find_row(out, key, 3);
  CHECK(r >= 0);
  if (r < 0) {
    fixture_close(&fx);
    return;
  }
  char buf[64];
  CHECK_EQ(cell_i64(out, 3, r), 5);                                  /* count(*) */
  CHECK_EQ(cell_i64(out, 4, r), 80);                                 /* sum */
  CHECK(fabs(dp_vector_get_f64(out->cols[5], r) - 20.0) < 1e-9);     /* avg */
  CHECK_EQ(cell_i64(out, 6, r), 10);                                 /* min */
  CHECK_EQ(cell_i64(out, 7, r), 30);                                 /* max */
  CHECK_EQ(cell_i64(out, 8, r), 10);                                 /* first_value */
  CHECK_EQ(cell_i64(out, 9, r), 30);                                 /* last_value skips NULL */
  CHECK_EQ(cell_i64(out, 10, r), 3);                                 /* count(DISTINCT) */
  CHECK_EQ(cell_i64(out, 11, r), 3);                                 /* FILTER */
  CHECK(fabs(dp_vector_get_f64(out->cols[12], r) - sqrt(50.0)) < 1e-9);
  CHECK(fabs(dp_vector_get_f64(out->cols[13], r) - 200.0 / 3) < 1e-9);
  CHECK(dp_vector_get_bool(out->cols[14], r));
  CHECK_EQ(cell_i64(out, 15, r), 3);                                 /* approx_count_distinct */
  CHECK_STR(str_at(out, 16, r, buf, sizeof buf), "10,20,20,30");
  const dp_vector *arr = out->cols[17];
  int64_t s, e;
  dp_vector_list_bounds(arr, r, &s, &e);
  CHECK_EQ(e - s, 4);
  if (e - s == 4) {
    CHECK_EQ(dp_vector_get_i64(arr->children[0], s), 10);
    CHECK_EQ(dp_vector_get_i64(arr->children[0], s + 3), 30);
  }
  CHECK_STR(str_at(out, 18, r, buf, sizeof buf), "30");
  CHECK_STR(str_at(out, 19, r, buf, sizeof buf), "10");
  CHECK(dp_vector_get_bool(out->cols[20], r));
  CHECK(fabs(dp_vector_get_f64(out->cols[21], r) - 50.0) < 1e-9);
  CHECK(fabs(dp_vector_get_f64(out->cols[22], r) - sqrt(200.0 / 3)) < 1e-9);
  CHECK_EQ(cell_i64(out, 23, r), 60);                                /* sum(DISTINCT) */
  CHECK_STR(str_at(out, 24, r, buf, sizeof buf), "10-20-20-30");
  /* Auction 2 saw only a NULL price: NULL for the value aggregates. */
  int64_t key2[] = {2, 0, SEC(5)};
  int64_t r2 = find_row(out, key2, 3);
  CHECK(r2 >= 0);
  if (r2 >= 0) {
    CHECK_EQ(cell_i64(out, 3, r2), 1);
    CHECK(dp_vector_is_null(out->cols[4], r2));
    CHECK(dp_vector_is_null(out->cols[6], r2));
    CHECK(dp_vector_is_null(out->cols[9], r2));
    CHECK_EQ(cell_i64(out, 10, r2), 0);
    CHECK_EQ(cell_i64(out, 15, r2), 0);
    CHECK(dp_vector_is_null(out->cols[16], r2));
    dp_vector_list_bounds(out->cols[17], r2, &s, &e);
    CHECK_EQ(e - s, 0);
    CHECK(dp_vector_is_null(out->cols[18], r2));
  }
  fixture_close(&fx);
}

TEST(update_mode_emits_changed_groups_and_drops_closed_windows) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, window_start, window_end, count(*), count(DISTINCT price) " TUMBLE5
                     BYWIN,
                 DP_MODE_UPDATE));
  if (!fx.nops) return;
  int64_t b1[] = {1, 10, SEC(1), 2, 10, SEC(2), 1, 10, SEC(6)};
  dp_batch *out = fixture_step(&fx, b1, 3, false);
  CHECK(out && out->nrows == 3);
  advance(&fx, SEC(6)); /* 5 s */
  int64_t b2[] = {1, 10, SEC(7), 1, 11, SEC(8)};
  out = fixture_step(&fx, b2, 2, false);
  CHECK(out && out->nrows == 1);
  int64_t key[] = {1, SEC(5), SEC(10)};
  int64_t r = find_row(out, key, 3);
  CHECK(r >= 0);
  if (r >= 0) CHECK_EQ(cell_i64(out, 3, r), 3);
  if (r >= 0) CHECK_EQ(cell_i64(out, 4, r), 2); /* 10 seen before, 11 new */
  /* The [0, 5) windows closed under watermark 5 s and are gone. */
  CHECK_EQ(fx.top->metrics.state_rows, 1);
  /* After the drop, the DISTINCT set still knows 10 and 11 for [5, 10). */
  int64_t b3[] = {1, 11, SEC(9), 1, 12, SEC(9)};
  out = fixture_step(&fx, b3, 2, false);
  r = out ? find_row(out, key, 3) : -1;
  CHECK(r >= 0);
  if (r >= 0) CHECK_EQ(cell_i64(out, 3, r), 5);
  if (r >= 0) CHECK_EQ(cell_i64(out, 4, r), 3);
  fixture_close(&fx);
}

TEST(complete_mode_emits_everything_every_batch) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, max(price), count(*) FROM bid GROUP BY auction;", DP_MODE_COMPLETE));
  if (!fx.nops) return;
  int64_t b1[] = {1, 10, SEC(1), 2, 7, SEC(2)};
  dp_batch *out = fixture_step(&fx, b1, 2, false);
  CHECK(out && out->nrows == 2);
  int64_t b2[] = {1, 30, SEC(3)};
  out = fixture_step(&fx, b2, 1, false);
  CHECK(out && out->nrows == 2);
  int64_t k1[] = {1}, k2[] = {2};
  int64_t r1 = out ? find_row(out, k1, 1) : -1, r2 = out ? find_row(out, k2, 1) : -1;
  CHECK(r1 >= 0 && r2 >= 0);
  if (r1 >= 0) CHECK_EQ(cell_i64(out, 1, r1), 30);
  if (r1 >= 0) CHECK_EQ(cell_i64(out, 2, r1), 2);
  if (r2 >= 0) CHECK_EQ(cell_i64(out, 1, r2), 7);
  out = fixture_step(&fx, NULL, 0, false);
  CHECK(out && out->nrows == 2);
  fixture_close(&fx);
}

TEST(plain_group_by_update_mode) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, max(price), count(*) FROM bid GROUP BY auction;", DP_MODE_UPDATE));
  if (!fx.nops) return;
  int64_t b1[] = {1, 10, SEC(1), 2, 7, SEC(2)};
  CHECK(fixture_step(&fx, b1, 2, false) != NULL);
  int64_t b2[] = {2, 3, SEC(3)};
  dp_batch *out = fixture_step(&fx, b2, 1, false);
  CHECK(out && out->nrows == 1);
  if (out && out->nrows == 1) {
    CHECK_EQ(cell_i64(out, 0, 0), 2);
    CHECK_EQ(cell_i64(out, 1, 0), 7);
    CHECK_EQ(cell_i64(out, 2, 0), 2);
  }
  CHECK(fixture_step(&fx, NULL, 0, false) == NULL);
  CHECK_EQ(fx.top->metrics.state_rows, 2);
  fixture_close(&fx);
}

TEST(batch_mode_answers_once_at_the_end) {
  fixture fx;
  CHECK(open_agg(&fx,
                 "SET 'execution.runtime-mode' = 'batch';\n" DDL
                 "SELECT auction, window_start, window_end, sum(price) " TUMBLE5 BYWIN,
                 DP_MODE_APPEND));
  if (!fx.nops) return;
  CHECK(!fx.ex.query->streaming);
  int64_t b1[] = {1, 10, SEC(1), 1, 20, SEC(7), 1, 5, SEC(2)};
  fx.ex.final = true;
  dp_batch *out = fixture_step(&fx, b1, 3, true);
  CHECK(out && out->nrows == 2);
  int64_t k[] = {1, 0, SEC(5)};
  int64_t r = out ? find_row(out, k, 3) : -1;
  if (r >= 0) CHECK_EQ(cell_i64(out, 3, r), 15);
  CHECK(r >= 0);
  fixture_close(&fx);
}

TEST(hop_counts_per_window) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, window_start, window_end, count(*) FROM TABLE(HOP(TABLE bid, "
                     "DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))" BYWIN,
                 DP_MODE_APPEND));
  if (!fx.nops) return;
  int64_t b1[] = {1, 0, SEC(1), 1, 0, SEC(3), 1, 0, SEC(9)};
  CHECK(fixture_step(&fx, b1, 3, false) == NULL);
  dp_batch *out = fixture_step(&fx, NULL, 0, true);
  /* Windows starting at -8 .. 8 s step 2: 9 windows hold some row. */
  CHECK(out && out->nrows == 9);
  int64_t k0[] = {1, 0, SEC(10)}, k8[] = {1, SEC(8), SEC(18)}, km8[] = {1, -SEC(8), SEC(2)};
  int64_t r0 = out ? find_row(out, k0, 3) : -1, r8 = out ? find_row(out, k8, 3) : -1,
          rm8 = out ? find_row(out, km8, 3) : -1;
  CHECK(r0 >= 0 && r8 >= 0 && rm8 >= 0);
  if (r0 >= 0) CHECK_EQ(cell_i64(out, 3, r0), 3);
  if (r8 >= 0) CHECK_EQ(cell_i64(out, 3, r8), 1);
  if (rm8 >= 0) CHECK_EQ(cell_i64(out, 3, rm8), 1);
  fixture_close(&fx);
}

#define SESSION5                                                                              \
  "SELECT auction, window_start, window_end, count(*), sum(price), min(price), listagg(CAST(price AS " \
  "STRING)), collect(price), last_value(price) FROM TABLE(SESSION(TABLE bid PARTITION BY auction, "      \
  "DESCRIPTOR(ts), INTERVAL '5' SECOND))" BYWIN

TEST(session_windows_merge_across_batches) {
  fixture fx;
  CHECK(open_agg(&fx, DDL SESSION5, DP_MODE_APPEND));
  if (!fx.nops) return;
  /* Two sessions of auction 1: [0, 5) and [8, 13); one of auction 2. */
  int64_t b1[] = {1, 1, 0, 1, 3, SEC(8), 2, 100, SEC(1)};
  CHECK(fixture_step(&fx, b1, 3, false) == NULL);
  CHECK_EQ(fx.top->metrics.state_rows, 3);
  /* A row at 4 s, [4, 9), bridges them: [0, 13) for auction 1. */
  int64_t b2[] = {1, 2, SEC(4)};
  CHECK(fixture_step(&fx, b2, 1, false) == NULL);
  CHECK_EQ(fx.top->metrics.state_rows, 2);
  /* Watermark 7 s closes auction 2's [1, 6) but not auction 1's session. */
  advance(&fx, SEC(8));
  dp_batch *out = fixture_step(&fx, NULL, 0, false);
  CHECK(out && out->nrows == 1);
  if (out && out->nrows == 1) {
    CHECK_EQ(cell_i64(out, 0, 0), 2);
    CHECK_EQ(cell_i64(out, 1, 0), SEC(1));
    CHECK_EQ(cell_i64(out, 2, 0), SEC(6));
  }
  /* A late row: its session [2, 7) ends before the watermark. */
  int64_t b3[] = {3, 1, SEC(2)};
  CHECK(fixture_step(&fx, b3, 1, false) == NULL);
  CHECK_EQ(fx.top->metrics.late_dropped, 1);
  out = fixture_step(&fx, NULL, 0, true);
  CHECK(out && out->nrows == 1);
  if (out && out->nrows == 1) {
    char buf[64];
    CHECK_EQ(cell_i64(out, 0, 0), 1);
    CHECK_EQ(cell_i64(out, 1, 0), 0);
    CHECK_EQ(cell_i64(out, 2, 0), SEC(13));
    CHECK_EQ(cell_i64(out, 3, 0), 3);
    CHECK_EQ(cell_i64(out, 4, 0), 6);
    CHECK_EQ(cell_i64(out, 5, 0), 1);
    CHECK_STR(str_at(out, 6, 0, buf, sizeof buf), "1,3,2");
    int64_t s, e;
    dp_vector_list_bounds(out->cols[7], 0, &s, &e);
    CHECK_EQ(e - s, 3);
    CHECK_EQ(cell_i64(out, 8, 0), 2);
  }
  CHECK_EQ(fx.top->metrics.state_rows, 0);
  fixture_close(&fx);
}

TEST(session_update_mode_and_merge_within_a_batch) {
  fixture fx;
  CHECK(open_agg(&fx, DDL SESSION5, DP_MODE_UPDATE));
  if (!fx.nops) return;
  /* In one batch: [0,5) [20,25) [10,15), then [14,19) extends the third to
  ** [10,19); [5,10) touches both [0,5) and [10,19), which merges all three
  ** into [0,19); [9,14) falls inside.  [20,25) stays apart (19 < 20). */
  int64_t b1[] = {1, 1, 0, 1, 1, SEC(20), 1, 1, SEC(10), 1, 1, SEC(14), 1, 1, SEC(5), 1, 1, SEC(9)};
  dp_batch *out = fixture_step(&fx, b1, 6, false);
  CHECK(out && out->nrows == 2);
  int64_t ka[] = {1, 0, SEC(19)}, kc[] = {1, SEC(20), SEC(25)};
  int64_t ra = out ? find_row(out, ka, 3) : -1, rc = out ? find_row(out, kc, 3) : -1;
  CHECK(ra >= 0 && rc >= 0);
  if (ra >= 0) CHECK_EQ(cell_i64(out, 3, ra), 5);
  if (rc >= 0) CHECK_EQ(cell_i64(out, 3, rc), 1);
  /* Next batch touches only the last session. */
  int64_t b2[] = {1, 1, SEC(22)};
  out = fixture_step(&fx, b2, 1, false);
  CHECK(out && out->nrows == 1);
  if (out && out->nrows == 1) CHECK_EQ(cell_i64(out, 2, 0), SEC(27));
  fixture_close(&fx);
}


TEST(group_by_event_time_column_is_final_at_the_watermark) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT ts, count(*) FROM bid GROUP BY ts;", DP_MODE_APPEND));
  if (!fx.nops) return;
  int64_t b1[] = {1, 1, SEC(1), 2, 2, SEC(1), 3, 3, SEC(3)};
  CHECK(fixture_step(&fx, b1, 3, false) == NULL);
  advance(&fx, SEC(3)); /* 2 s */
  /* The row at 2 s is not late (the previous step had no watermark) and
  ** its group is final at once, with 1 s's. */
  int64_t b2[] = {4, 4, SEC(2), 5, 5, SEC(4)};
  dp_batch *out = fixture_step(&fx, b2, 2, false);
  CHECK(out && out->nrows == 2);
  int64_t k1[] = {SEC(1)}, k2[] = {SEC(2)};
  int64_t r1 = out ? find_row(out, k1, 1) : -1, r2 = out ? find_row(out, k2, 1) : -1;
  CHECK(r1 >= 0 && r2 >= 0);
  if (r1 >= 0) CHECK_EQ(cell_i64(out, 1, r1), 2);
  if (r2 >= 0) CHECK_EQ(cell_i64(out, 1, r2), 1);
  CHECK_EQ(fx.top->metrics.late_dropped, 0);
  CHECK_EQ(fx.top->metrics.state_rows, 2);
  /* Now 2 s is the late watermark too: 2 s ≤ 2 s is late, 3 s is not. */
  int64_t b3[] = {6, 6, SEC(2), 7, 7, SEC(3)};
  CHECK(fixture_step(&fx, b3, 2, false) == NULL);
  CHECK_EQ(fx.top->metrics.late_dropped, 1);
  out = fixture_step(&fx, NULL, 0, true);
  CHECK(out && out->nrows == 2);
  int64_t k3[] = {SEC(3)}, k4[] = {SEC(4)};
  int64_t r3 = out ? find_row(out, k3, 1) : -1, r4 = out ? find_row(out, k4, 1) : -1;
  CHECK(r3 >= 0 && r4 >= 0);
  if (r3 >= 0) CHECK_EQ(cell_i64(out, 1, r3), 2);
  if (r4 >= 0) CHECK_EQ(cell_i64(out, 1, r4), 1);
  fixture_close(&fx);
}

TEST(spark_window_legacy_tumble_and_cumulate) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, window.start, count(*) FROM bid GROUP BY auction, "
                          "window(ts, '10 seconds', '5 seconds');",
                 DP_MODE_APPEND));
  if (fx.nops) {
    int64_t b1[] = {1, 1, SEC(7), 1, 1, SEC(12)};
    fixture_step(&fx, b1, 2, false);
    dp_batch *out = fixture_step(&fx, NULL, 0, true);
    /* [0,10): 1 row, [5,15): 2 rows, [10,20): 1 row */
    CHECK(out && out->nrows == 3);
    int64_t k[] = {1, SEC(5), SEC(15)};
    int64_t r = out ? find_row(out, k, 3) : -1;
    CHECK(r >= 0);
    if (r >= 0) CHECK_EQ(cell_i64(out, 3, r), 2);
    fixture_close(&fx);
  }
  CHECK(open_agg(&fx, DDL "SELECT auction, TUMBLE_START(ts, INTERVAL '5' SECOND), count(*) FROM bid "
                          "GROUP BY auction, TUMBLE(ts, INTERVAL '5' SECOND);",
                 DP_MODE_APPEND));
  if (fx.nops) {
    int64_t b1[] = {1, 1, SEC(7), 1, 1, SEC(9), 1, 1, SEC(10)};
    fixture_step(&fx, b1, 3, false);
    dp_batch *out = fixture_step(&fx, NULL, 0, true);
    CHECK(out && out->nrows == 2);
    int64_t k[] = {1, SEC(5), SEC(10)};
    int64_t r = out ? find_row(out, k, 3) : -1;
    CHECK(r >= 0);
    if (r >= 0) CHECK_EQ(cell_i64(out, 3, r), 2);
    fixture_close(&fx);
  }
  CHECK(open_agg(&fx, DDL "SELECT auction, window_start, window_end, count(*) FROM TABLE(CUMULATE(TABLE bid, "
                          "DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))" BYWIN,
                 DP_MODE_APPEND));
  if (fx.nops) {
    int64_t b1[] = {1, 1, SEC(1), 1, 1, SEC(3), 1, 1, SEC(5)};
    fixture_step(&fx, b1, 3, false);
    dp_batch *out = fixture_step(&fx, NULL, 0, true);
    CHECK(out && out->nrows == 3);
    for (int e = 2; e <= 6; e += 2) {
      int64_t k[] = {1, 0, SEC(e)};
      int64_t r = out ? find_row(out, k, 3) : -1;
      CHECK(r >= 0);
      if (r >= 0) CHECK_EQ(cell_i64(out, 3, r), e / 2);
    }
    fixture_close(&fx);
  }
}

TEST(sessions_that_touch_merge) {
  fixture fx;
  CHECK(open_agg(&fx, DDL SESSION5, DP_MODE_APPEND));
  if (!fx.nops) return;
  /* Exactly one gap apart: [0,5) and [5,10) are one session. */
  int64_t b1[] = {1, 1, 0, 1, 2, SEC(5), 1, 4, SEC(11)};
  fixture_step(&fx, b1, 3, false);
  dp_batch *out = fixture_step(&fx, NULL, 0, true);
  CHECK(out && out->nrows == 2);
  int64_t k1[] = {1, 0, SEC(10)}, k2[] = {1, SEC(11), SEC(16)};
  int64_t r1 = out ? find_row(out, k1, 3) : -1;
  CHECK(r1 >= 0 && find_row(out, k2, 3) >= 0);
  if (r1 >= 0) CHECK_EQ(cell_i64(out, 3, r1), 2);
  fixture_close(&fx);
}

TEST(session_gap_per_row) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, count(*) FROM bid GROUP BY auction, session_window(ts, CASE WHEN "
                          "auction = 1 THEN INTERVAL '5' SECOND ELSE INTERVAL '1' SECOND END);",
                 DP_MODE_APPEND));
  if (!fx.nops) return;
  /* 3 s apart: one session with a 5 s gap, two with a 1 s gap. */
  int64_t b1[] = {1, 1, SEC(0), 1, 1, SEC(3), 2, 1, SEC(0), 2, 1, SEC(3)};
  fixture_step(&fx, b1, 4, false);
  dp_batch *out = fixture_step(&fx, NULL, 0, true);
  CHECK(out && out->nrows == 3);
  int64_t k1[] = {1, 0, SEC(8)}, k2[] = {2, 0, SEC(1)}, k3[] = {2, SEC(3), SEC(4)};
  CHECK(out && find_row(out, k1, 3) >= 0 && find_row(out, k2, 3) >= 0 && find_row(out, k3, 3) >= 0);
  fixture_close(&fx);
}

TEST(hop_expands_big_batches_in_chunks) {
  fixture fx;
  CHECK(fixture_open(&fx, DDL "SELECT * FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECOND, "
                              "INTERVAL '10' SECOND));",
                     DP_P_WINDOW, DP_P_WATERMARK, DP_MODE_APPEND));
  if (!fx.nops) return;
  enum { N = 40000 };
  int64_t *cells = malloc(N * 3 * sizeof *cells);
  for (int i = 0; i < N; i++) {
    cells[i * 3] = i;
    cells[i * 3 + 1] = 0;
    cells[i * 3 + 2] = (int64_t)i * 1000;
  }
  dp_batch *out = fixture_step(&fx, cells, N, false);
  int64_t total = 0, batches = 0, last_auction = -1;
  bool ordered = true;
  while (out) {
    batches++;
    for (int64_t r = 0; r < out->nrows; r++) {
      int64_t a = cell_i64(out, 0, r);
      if (a < last_auction) ordered = false;
      last_auction = a;
    }
    total += out->nrows;
    fx.top->cls->next(fx.top, &out);
  }
  CHECK_EQ(total, (int64_t)N * 5);
  CHECK(batches > 1);
  CHECK(ordered);
  free(cells);
  fixture_close(&fx);
}

TEST(approx_count_distinct_is_close_on_many_values) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, approx_count_distinct(price), count(DISTINCT price) FROM bid "
                          "GROUP BY auction;",
                 DP_MODE_UPDATE));
  if (!fx.nops) return;
  enum { N = 50000 };
  int64_t *cells = malloc(N * 3 * sizeof *cells);
  for (int i = 0; i < N; i++) {
    cells[i * 3] = i % 2;
    cells[i * 3 + 1] = (i * 7919) % 40000; /* 20000 distinct values per auction */
    cells[i * 3 + 2] = SEC(1);
  }
  dp_batch *out = fixture_step(&fx, cells, N, false);
  CHECK(out && out->nrows == 2);
  for (int64_t r = 0; out && r < out->nrows; r++) {
    int64_t exact = cell_i64(out, 2, r), approx = cell_i64(out, 1, r);
    CHECK_EQ(exact, 20000);
    CHECK(approx > 18000 && approx < 22000); /* within 10% */
  }
  free(cells);
  fixture_close(&fx);
}

TEST(complete_mode_keeps_windows_and_takes_late_rows) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, window_start, window_end, count(*), sum(price) " TUMBLE5 BYWIN,
                 DP_MODE_COMPLETE));
  if (!fx.nops) return;
  int64_t b1[] = {1, 1, SEC(1), 1, 1, SEC(8)};
  dp_batch *out = fixture_step(&fx, b1, 2, false);
  CHECK(out && out->nrows == 2);
  advance(&fx, SEC(20));
  int64_t b2[] = {1, 1, SEC(2)};
  out = fixture_step(&fx, b2, 1, false);
  CHECK(out && out->nrows == 2);
  int64_t k[] = {1, 0, SEC(5)};
  int64_t r = out ? find_row(out, k, 3) : -1;
  CHECK(r >= 0);
  if (r >= 0) CHECK_EQ(cell_i64(out, 3, r), 2);
  CHECK_EQ(fx.top->metrics.late_dropped, 0);
  fixture_close(&fx);
}

TEST(session_distinct_counts_each_value_once_across_merges) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, window_start, window_end, count(DISTINCT price), "
                          "sum(DISTINCT price), count(*) FROM TABLE(SESSION(TABLE bid PARTITION BY auction, "
                          "DESCRIPTOR(ts), INTERVAL '5' SECOND))" BYWIN,
                 DP_MODE_UPDATE));
  if (!fx.nops) return;
  /* [0,5) holds 1, 2; [8,13) holds 2, 3; then 4 s bridges them with 3 again. */
  int64_t b1[] = {1, 1, SEC(0), 1, 2, SEC(1), 1, 2, SEC(8), 1, 3, SEC(9)};
  dp_batch *out = fixture_step(&fx, b1, 4, false);
  CHECK(out && out->nrows == 2);
  int64_t b2[] = {1, 3, SEC(4)};
  out = fixture_step(&fx, b2, 1, false);
  CHECK(out && out->nrows == 1);
  if (out && out->nrows == 1) {
    CHECK_EQ(cell_i64(out, 1, 0), 0);
    CHECK_EQ(cell_i64(out, 2, 0), SEC(14));
    CHECK_EQ(cell_i64(out, 3, 0), 3); /* {1, 2, 3} */
    CHECK_EQ(cell_i64(out, 4, 0), 6);
    CHECK_EQ(cell_i64(out, 5, 0), 5);
  }
  /* Close it (its key leaves the table too), then a new session of the
  ** same key starts from nothing. */
  advance(&fx, SEC(20));
  CHECK(fixture_step(&fx, NULL, 0, false) == NULL);
  CHECK_EQ(fx.top->metrics.state_rows, 0);
  int64_t b3[] = {1, 3, SEC(30), 1, 3, SEC(31), 1, 7, SEC(32)};
  out = fixture_step(&fx, b3, 3, false);
  CHECK(out && out->nrows == 1);
  if (out && out->nrows == 1) {
    CHECK_EQ(cell_i64(out, 3, 0), 2);
    CHECK_EQ(cell_i64(out, 4, 0), 10);
  }
  fixture_close(&fx);
}

TEST(global_aggregate_answers_one_row_in_batch_mode_even_without_rows) {
  fixture fx;
  CHECK(open_agg(&fx, "SET 'execution.runtime-mode' = 'batch';\n" DDL "SELECT count(*), sum(price) FROM bid;",
                 DP_MODE_APPEND));
  if (!fx.nops) return;
  dp_batch *out = fixture_step(&fx, NULL, 0, true);
  CHECK(out && out->nrows == 1);
  if (out && out->nrows == 1) {
    CHECK_EQ(cell_i64(out, 0, 0), 0);
    CHECK(dp_vector_is_null(out->cols[1], 0));
  }
  fixture_close(&fx);
  CHECK(open_agg(&fx, "SET 'execution.runtime-mode' = 'batch';\n" DDL "SELECT count(*), sum(price) FROM bid;",
                 DP_MODE_APPEND));
  if (!fx.nops) return;
  int64_t b1[] = {1, 4, SEC(1), 2, 5, SEC(2)};
  out = fixture_step(&fx, b1, 2, true);
  CHECK(out && out->nrows == 1);
  if (out && out->nrows == 1) {
    CHECK_EQ(cell_i64(out, 0, 0), 2);
    CHECK_EQ(cell_i64(out, 1, 0), 9);
  }
  fixture_close(&fx);
}

/* Random out-of-order rows against a brute-force model of append mode: every
** (auction, window) is emitted exactly once with the count, sum, min and max
** of its rows that were not late when they arrived — late by the watermark
** the previous batch ran under. */
TEST(random_rows_match_a_model_of_append_mode) {
  fixture fx;
  CHECK(open_agg(&fx, DDL "SELECT auction, window_start, window_end, count(*), sum(price), min(price), "
                          "max(price) " TUMBLE5 BYWIN,
                 DP_MODE_APPEND));
  if (!fx.nops) return;
  enum { AUCTIONS = 7, WINDOWS = 64, BATCHES = 40, ROWS = 200 };
  static int64_t cnt[AUCTIONS][WINDOWS], sum[AUCTIONS][WINDOWS], mn[AUCTIONS][WINDOWS], mx[AUCTIONS][WINDOWS];
  static int emitted[AUCTIONS][WINDOWS];
  memset(cnt, 0, sizeof cnt);
  memset(emitted, 0, sizeof emitted);
  uint64_t seed = 12345;
  int64_t max_ts = INT64_MIN, late = 0, late_wm = DP_WATERMARK_NONE;
  int64_t cells[ROWS * 3];
  for (int b = 0; b <= BATCHES; b++) {
    bool final = b == BATCHES;
    int n = final ? 0 : ROWS;
    for (int i = 0; i < n; i++) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      int64_t a = (int64_t)((seed >> 33) % AUCTIONS);
      int64_t price = (int64_t)((seed >> 40) % 1000) - 500;
      /* Time moves forward 1.5 s per batch, with up to 8 s of disorder:
      ** enough for rows older than the previous batch's watermark. */
      int64_t t = (int64_t)b * 1500000 + (int64_t)((seed >> 20) % 8000000);
      cells[i * 3] = a;
      cells[i * 3 + 1] = price;
      cells[i * 3 + 2] = t;
      int64_t w = t / SEC(5);
      if (late_wm != DP_WATERMARK_NONE && (w + 1) * SEC(5) <= late_wm) {
        late++;
        continue;
      }
      if (!cnt[a][w] || price < mn[a][w]) mn[a][w] = price;
      if (!cnt[a][w] || price > mx[a][w]) mx[a][w] = price;
      cnt[a][w]++;
      sum[a][w] += price;
    }
    late_wm = fx.ex.watermark;
    dp_batch *out = fixture_step(&fx, cells, n, final);
    for (int64_t r = 0; out && r < out->nrows; r++) {
      int64_t a = cell_i64(out, 0, r), w = cell_i64(out, 1, r) / SEC(5);
      CHECK(a >= 0 && a < AUCTIONS && w >= 0 && w < WINDOWS);
      if (a < 0 || a >= AUCTIONS || w < 0 || w >= WINDOWS) continue;
      emitted[a][w]++;
      CHECK_EQ(cell_i64(out, 2, r), (w + 1) * SEC(5));
      CHECK_EQ(cell_i64(out, 3, r), cnt[a][w]);
      CHECK_EQ(cell_i64(out, 4, r), sum[a][w]);
      CHECK_EQ(cell_i64(out, 5, r), mn[a][w]);
      CHECK_EQ(cell_i64(out, 6, r), mx[a][w]);
      /* Emitted only once closed. */
      CHECK(final || (w + 1) * SEC(5) <= fx.ex.watermark);
    }
    for (int i = 0; i < n; i++)
      if (cells[i * 3 + 2] > max_ts) max_ts = cells[i * 3 + 2];
    if (!final) advance(&fx, max_ts);
  }
  int groups = 0;
  for (int a = 0; a < AUCTIONS; a++)
    for (int w = 0; w < WINDOWS; w++) {
      if (cnt[a][w]) groups++;
      CHECK_EQ(emitted[a][w], cnt[a][w] ? 1 : 0);
    }
  CHECK(groups > 50);
  CHECK(late > 0);
  CHECK_EQ(fx.top->metrics.late_dropped, late);
  CHECK_EQ(fx.top->metrics.state_rows, 0);
  fixture_close(&fx);
}

/* ---- through the public API: memory source, micro-batches, memory sink ---- */

/* Every row of the memory table as "v|v|..." lines, sorted, joined by ';'.
** Integers and timestamps print as numbers (µs for timestamps), doubles
** with %g, strings as they are, NULL as "null". */
static char *fetch_rows(dipper *db, const char *table, char *buf, size_t cap) {
  struct ArrowSchema sc;
  struct ArrowArray arr;
  buf[0] = 0;
  if (dipper_memory_fetch(db, table, &sc, &arr) != DIPPER_OK) return buf;
  char lines[64][160];
  int n = 0;
  for (int64_t r = 0; r < arr.length && n < 64; r++, n++) {
    size_t used = 0;
    lines[n][0] = 0;
    for (int64_t c = 0; c < arr.n_children; c++) {
      const struct ArrowArray *col = arr.children[c];
      const char *fmt = sc.children[c]->format;
      int64_t i = r + col->offset;
      const uint8_t *valid = col->buffers[0];
      char cell[64];
      if (valid && !((valid[i >> 3] >> (i & 7)) & 1))
        snprintf(cell, sizeof cell, "null");
      else if (fmt[0] == 'g')
        snprintf(cell, sizeof cell, "%g", ((const double *)col->buffers[1])[i]);
      else if (fmt[0] == 'u') {
        const int32_t *off = col->buffers[1];
        snprintf(cell, sizeof cell, "%.*s", (int)(off[i + 1] - off[i]), (const char *)col->buffers[2] + off[i]);
      } else
        snprintf(cell, sizeof cell, "%lld", (long long)((const int64_t *)col->buffers[1])[i]);
      used += (size_t)snprintf(lines[n] + used, sizeof lines[n] - used, "%s%s", c ? "|" : "", cell);
    }
  }
  arr.release(&arr);
  sc.release(&sc);
  /* Sort the lines: the order of groups in a batch is not part of the contract. */
  for (int a = 1; a < n; a++)
    for (int b = a; b > 0 && strcmp(lines[b - 1], lines[b]) > 0; b--) {
      char t[160];
      memcpy(t, lines[b], sizeof t);
      memcpy(lines[b], lines[b - 1], sizeof t);
      memcpy(lines[b - 1], t, sizeof t);
    }
  size_t used = 0;
  for (int a = 0; a < n; a++) used += (size_t)snprintf(buf + used, cap - used, "%s%s", a ? ";" : "", lines[a]);
  return buf;
}

typedef struct api_run {
  dipper *db;
  dipper_program *prog;
  dipper_query **qs;
  int n;
} api_run;

static bool api_start(api_run *run, const char *sql) {
  memset(run, 0, sizeof *run);
  if (dipper_open(&run->db, NULL) != DIPPER_OK) return false;
  if (dipper_compile(run->db, sql, (size_t)-1, "api.sql", &run->prog) != DIPPER_OK) {
    fprintf(stderr, "compile: %s\n", dipper_errmsg(run->db));
    return false;
  }
  if (dipper_query_start(run->prog, &run->qs, &run->n) != DIPPER_OK || run->n != 1) {
    fprintf(stderr, "start: %s\n", dipper_errmsg(run->db));
    return false;
  }
  return true;
}

static int api_step(api_run *run, const char *jsonl) {
  if (jsonl) CHECK(dipper_memory_push_json(run->db, "bid", jsonl, strlen(jsonl)) == DIPPER_OK);
  int finished = 0;
  CHECK(dipper_query_step(run->qs[0], &finished) == DIPPER_OK);
  return finished;
}

static void api_stop(api_run *run) {
  if (run->qs) dipper_query_free_all(run->qs, run->n);
  dipper_program_free(run->prog);
  dipper_close(run->db);
}

#define ROW(a, p, t) "{\"auction\": " #a ", \"price\": " #p ", \"ts\": \"1970-01-01 00:00:" t "\"}\n"
#define OUT_WIN "CREATE TABLE out1 (auction BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT) " \
                "WITH ('connector'='memory');\n"

TEST(api_tumble_append_late_rows_and_final_flush) {
  api_run run;
  char buf[2048];
  CHECK(api_start(&run, "CREATE TABLE bid (auction BIGINT, price BIGINT, ts TIMESTAMP(3), "
                        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='memory', "
                        "'bounded'='true');\n" OUT_WIN
                        "INSERT INTO out1 SELECT auction, window_start, window_end, count(*), sum(price) " TUMBLE5 BYWIN));
  if (!run.qs) return;
  api_step(&run, ROW(1, 10, "01") ROW(1, 20, "02") ROW(2, 5, "03") ROW(1, 30, "06"));
  CHECK_STR(fetch_rows(run.db, "out1", buf, sizeof buf), "");
  /* Watermark 5 s from the first batch: [0, 5) closes.  The row at 4 s is
  ** judged late by the first batch's watermark (none), so it counts. */
  api_step(&run, ROW(1, 40, "07") ROW(1, 99, "04"));
  CHECK_STR(fetch_rows(run.db, "out1", buf, sizeof buf), "1|0|5000000|3|129;2|0|5000000|1|5");
  dipper_progress pr = {sizeof pr};
  CHECK(dipper_query_progress(run.qs[0], &pr) == DIPPER_OK);
  CHECK_EQ(pr.late_rows_dropped, 0);
  CHECK_EQ(pr.state_rows, 1);
  /* Under watermark 6 s, late below 5 s: a row at 3 s is late. */
  api_step(&run, ROW(1, 7, "03"));
  CHECK_STR(fetch_rows(run.db, "out1", buf, sizeof buf), "1|0|5000000|3|129;2|0|5000000|1|5");
  CHECK(dipper_query_progress(run.qs[0], &pr) == DIPPER_OK);
  CHECK_EQ(pr.late_rows_dropped, 1);
  CHECK_EQ(pr.state_rows, 1);
  /* The source is bounded: once it is exhausted the last batch closes [5, 10). */
  int finished = 0;
  for (int i = 0; i < 5 && !finished; i++) finished = api_step(&run, NULL);
  CHECK(finished);
  CHECK_STR(fetch_rows(run.db, "out1", buf, sizeof buf),
            "1|0|5000000|3|129;1|5000000|10000000|2|70;2|0|5000000|1|5");
  api_stop(&run);
}

TEST(api_update_and_complete_modes) {
  static const char *const modes[2] = {"update", "complete"};
  for (int m = 0; m < 2; m++) {
    api_run run;
    char buf[2048], sql[1024];
    snprintf(sql, sizeof sql,
             "SET 'dipper.output-mode' = '%s';\n" DDL
             "CREATE TABLE out2 (auction BIGINT, c BIGINT, mx BIGINT) WITH ('connector'='memory');\n"
             "INSERT INTO out2 SELECT auction, count(*), max(price) FROM bid GROUP BY auction;",
             modes[m]);
    CHECK(api_start(&run, sql));
    if (!run.qs) continue;
    api_step(&run, ROW(1, 10, "01") ROW(2, 5, "02"));
    CHECK_STR(fetch_rows(run.db, "out2", buf, sizeof buf), "1|1|10;2|1|5");
    api_step(&run, ROW(1, 30, "03"));
    /* update appends the changed group; complete replaces the whole result. */
    CHECK_STR(fetch_rows(run.db, "out2", buf, sizeof buf), m == 0 ? "1|1|10;1|2|30;2|1|5" : "1|2|30;2|1|5");
    api_stop(&run);
  }
}

TEST(api_session_and_hop) {
  api_run run;
  char buf[2048];
  CHECK(api_start(&run, "CREATE TABLE bid (auction BIGINT, price BIGINT, ts TIMESTAMP(3), "
                        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='memory', "
                        "'bounded'='true');\n" OUT_WIN
                        "INSERT INTO out1 SELECT auction, window_start, window_end, count(*), sum(price) "
                        "FROM TABLE(SESSION(TABLE bid PARTITION BY auction, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
                        BYWIN));
  if (!run.qs) return;
  api_step(&run, ROW(1, 1, "00") ROW(1, 2, "08") ROW(2, 7, "01"));
  api_step(&run, ROW(1, 4, "04"));
  int finished = 0;
  for (int i = 0; i < 5 && !finished; i++) finished = api_step(&run, NULL);
  CHECK(finished);
  CHECK_STR(fetch_rows(run.db, "out1", buf, sizeof buf), "1|0|13000000|3|7;2|1000000|6000000|1|7");
  api_stop(&run);

  CHECK(api_start(&run, "CREATE TABLE bid (auction BIGINT, price BIGINT, ts TIMESTAMP(3), "
                        "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='memory', "
                        "'bounded'='true');\n" OUT_WIN
                        "INSERT INTO out1 SELECT auction, window_start, window_end, count(*), sum(price) "
                        "FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))"
                        BYWIN));
  if (!run.qs) return;
  api_step(&run, ROW(1, 1, "01") ROW(1, 2, "06"));
  finished = 0;
  for (int i = 0; i < 5 && !finished; i++) finished = api_step(&run, NULL);
  CHECK_STR(fetch_rows(run.db, "out1", buf, sizeof buf),
            "1|-5000000|5000000|1|1;1|0|10000000|2|3;1|5000000|15000000|1|2");
  api_stop(&run);
}

int main(void) { return RUN_TESTS(); }
