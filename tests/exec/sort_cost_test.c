/*
** sort_cost_test.c — ORDER BY an event-time column on a stream (op_sort.c's
** time mode): its output row for row against a reference sort computed here,
** over batches that arrive out of time order, with ties, NULL times and late
** rows, released over several batches (the index's runs merged, the store
** compacted); resumed after every batch from whole states and from chains of
** deltas (ops_state_harness.h); and the size of a checkpoint after a small
** batch over a large held state: bytes that follow the batch, not the state.
*/
#include "ops_state_harness.h"

#define DDL(delay)                                                                     \
  "CREATE TABLE ev (k INT, v STRING, ts TIMESTAMP(3),"                                 \
  " WATERMARK FOR ts AS ts - INTERVAL '" delay "' SECOND) WITH ('connector' = 'memory');\n"

/* ---- the reference ---- */

typedef struct ref_row {
  int k;
  int v;        /* printed 'v<v>' */
  int64_t ms;   /* -1: NULL */
  int64_t seq;  /* arrival */
} ref_row;

static bool v_desc; /* the second key: v DESC (else none) */

static int ref_cmp(const void *a, const void *b) {
  const ref_row *x = a, *y = b;
  int64_t tx = x->ms < 0 ? INT64_MIN : x->ms, ty = y->ms < 0 ? INT64_MIN : y->ms; /* NULLS FIRST */
  if (tx != ty) return tx < ty ? -1 : 1;
  if (v_desc) {
    char sx[16], sy[16];
    snprintf(sx, sizeof sx, "v%d", x->v);
    snprintf(sy, sizeof sy, "v%d", y->v);
    int c = strcmp(sy, sx);
    if (c) return c;
  }
  return (x->seq > y->seq) - (x->seq < y->seq);
}

#define NB 6
#define PER 1500

/* Batch b's rows: times over 15 s starting at b * 10 s + 3 s, in a scrambled
** order, three rows per 30 ms (ties); every 97th row without a time; batch 3
** also brings late rows (at 0.5 s). */
static int gen(int b, ref_row *rows) {
  int n = 0;
  for (int i = 0; i < PER; i++) {
    int p = (i * 7919) % PER;
    ref_row r = {(b * PER + i) % 13, b * PER + i, (int64_t)b * 10000 + 3000 + (p % 500) * 30, 0};
    if ((b * PER + i) % 97 == 0) r.ms = -1;
    rows[n++] = r;
  }
  if (b == 3)
    for (int i = 0; i < 5; i++) rows[n++] = (ref_row){99, 90000 + i, 500 + i, 0};
  return n;
}

static char *to_json(const ref_row *rows, int n) {
  dp_buf out = DP_BUF_INIT;
  for (int i = 0; i < n; i++) {
    if (rows[i].ms < 0) {
      dp_buf_printf(&out, "{\"k\": %d, \"v\": \"v%d\", \"ts\": null}\n", rows[i].k, rows[i].v);
      continue;
    }
    int64_t ms = rows[i].ms;
    dp_buf_printf(&out, "{\"k\": %d, \"v\": \"v%d\", \"ts\": \"2024-01-01 %02d:%02d:%02d.%03d\"}\n",
                  rows[i].k, rows[i].v, (int)(ms / 3600000), (int)(ms / 60000 % 60),
                  (int)(ms / 1000 % 60), (int)(ms % 1000));
  }
  return out.data;
}

/* What the operator must emit: batch b runs under the greatest time of the
** batches before it less the delay, drops rows at or before the watermark of
** the batch before (late), and releases the held rows at or before its own;
** the final batch releases every held row (those without a time first:
** ASC sorts NULLS FIRST). */
static char *expected(ref_row (*batches)[PER + 8], const int *counts, int64_t delay_ms) {
  static ref_row held[NB * (PER + 8)], out[NB * (PER + 8)];
  int nheld = 0;
  int64_t seq = 0, max_ms = -1, wm = INT64_MIN, late = INT64_MIN;
  dp_buf text = DP_BUF_INIT;
  for (int b = 0; b <= NB; b++) {
    late = wm;
    wm = b == NB ? INT64_MAX : max_ms < 0 ? INT64_MIN : max_ms - delay_ms;
    dp_buf_printf(&text, "#%d\n", b);
    for (int i = 0; b < NB && i < counts[b]; i++) {
      ref_row r = batches[b][i];
      r.seq = seq++;
      if (r.ms >= 0 && r.ms > max_ms) max_ms = r.ms;
      if (r.ms >= 0 && late != INT64_MIN && r.ms <= late) continue;
      held[nheld++] = r;
    }
    int nout = 0, kept = 0;
    for (int i = 0; i < nheld; i++) {
      bool ready = wm == INT64_MAX || (wm != INT64_MIN && held[i].ms >= 0 && held[i].ms <= wm);
      if (ready) out[nout++] = held[i];
      else held[kept++] = held[i];
    }
    nheld = kept;
    qsort(out, (size_t)nout, sizeof *out, ref_cmp);
    for (int i = 0; i < nout; i++) dp_buf_printf(&text, "%d, 'v%d'\n", out[i].k, out[i].v);
  }
  return text.data;
}

static void check_case(const char *sql, bool second_key) {
  static ref_row batches[NB][PER + 8];
  int counts[NB];
  char *json[NB];
  script sc = {sql, {"ev"}, {{NULL}}, NB};
  for (int b = 0; b < NB; b++) {
    counts[b] = gen(b, batches[b]);
    json[b] = to_json(batches[b], counts[b]);
    sc.data[b][0] = json[b];
  }
  v_desc = second_key;
  char *want = expected(batches, counts, 2000);
  run a;
  bool ok = run_open(&a, &sc);
  for (int b = 0; ok && b <= sc.nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
  CHECK(ok);
  if (ok && strcmp(dp_buf_cstr(&a.out), want) != 0) {
    FILE *f = fopen("sort_cost_got.txt", "w"), *g = fopen("sort_cost_want.txt", "w");
    if (f) fputs(dp_buf_cstr(&a.out), f);
    if (g) fputs(want, g);
    if (f) fclose(f);
    if (g) fclose(g);
    CHECK(!"the output differs from the reference (sort_cost_got.txt, sort_cost_want.txt)");
  }
  /* the late rows were dropped, every other row came out once */
  CHECK(ok && !strstr(dp_buf_cstr(&a.out), "99, "));
  for (int at = 0; ok && at <= sc.nbatches; at++) check_resume_at(&sc, &a, at);
  if (ok) check_deltas(&sc, &a, 1, false);
  if (ok) check_deltas(&sc, &a, 2, false);
  run_close(&a);
  free(want);
  for (int b = 0; b < NB; b++) free(json[b]);
}

TEST(event_time_order_out_of_order_batches_with_ties_nulls_and_late_rows) {
  check_case(DDL("2") "SELECT k, v FROM ev ORDER BY ts;", false);
}

TEST(event_time_order_with_a_second_key) {
  check_case(DDL("2") "SELECT k, v FROM ev ORDER BY ts, v DESC;", true);
}

/* A few rows, every truncation and damaged byte of each blob fed back
** (check_script): ties leave in arrival order, a NULL time at the end. */
#define E(k, s) "{\"k\": " #k ", \"v\": \"v" #k "\", \"ts\": \"2024-01-01 00:00:" s "\"}\n"
TEST(event_time_order_small_with_damaged_checkpoints) {
  static const script sc = {
      DDL("2") "SELECT k, v FROM ev ORDER BY ts;",
      {"ev"},
      {{E(1, "05") E(2, "03") E(3, "05")},
       {E(4, "04") "{\"k\": 5, \"v\": \"v5\", \"ts\": null}\n" E(6, "09")},
       {E(7, "08") E(8, "12")},
       {E(9, "01") E(10, "13")}},
      4};
  check_script(&sc, "#0\n#1\n2, 'v2'\n#2\n4, 'v4'\n1, 'v1'\n3, 'v3'\n#3\n7, 'v7'\n6, 'v6'\n"
                    "#4\n5, 'v5'\n8, 'v8'\n10, 'v10'\n");
}

/* A blob of version 1 (before the deltas: the held rows, none released)
** still reads, and the run goes on as the straight one; another version is
** refused with a message naming it. */
TEST(a_version_1_blob_still_reads) {
  static const script sc = {
      DDL("2") "SELECT k, v FROM ev ORDER BY ts;",
      {"ev"},
      {{E(1, "05") E(2, "03") E(3, "05")}, {E(4, "04") E(6, "09")}, {E(7, "08") E(8, "12")}},
      3};
  run a, b;
  blobs bl;
  CHECK(run_open(&a, &sc));
  CHECK_EQ(run_batch(&a, 0), DIPPER_OK); /* no watermark yet: all three held, none released */
  save_all(&a, &bl);
  CHECK_EQ(bl.n, 1);
  dp_buf *blob = &bl.b[0];
  /* version 2 with no released rows is version 1's bytes and an empty list */
  CHECK_EQ((unsigned char)blob->data[0], 2);
  CHECK_EQ((unsigned char)blob->data[blob->len - 1], 0);
  blob->data[0] = 1;
  blob->len--;
  CHECK(run_open(&b, &sc));
  CHECK_EQ(restore_seq(&b, (const blobs *const[]){&bl}, 1), DIPPER_OK);
  size_t mark_a = a.out.len;
  for (int i = 1; i <= sc.nbatches; i++) {
    CHECK_EQ(run_batch(&a, i), DIPPER_OK);
    CHECK_EQ(run_batch(&b, i), DIPPER_OK);
  }
  CHECK_STR(dp_buf_cstr(&b.out), a.out.data + mark_a);
  CHECK(strstr(dp_buf_cstr(&b.out), "1, 'v1'\n3, 'v3'"));
  run_close(&b);
  /* version 3: refused, and says so */
  blob->data[0] = 3;
  CHECK(run_open(&b, &sc));
  CHECK_EQ(restore_seq(&b, (const blobs *const[]){&bl}, 1), DIPPER_CORRUPT);
  CHECK(b.h->diags.count > 0 && strstr(b.h->diags.items[0].message, "version 3"));
  run_close(&b);
  run_close(&a);
  free_blobs(&bl);
}

/* ---- checkpoint bytes ---- */

/* Rows i0..i1 at i * 10 ms from `t0_ms`. */
static char *spread_rows(int i0, int i1, int64_t t0_ms) {
  ref_row *rows = malloc((size_t)(i1 - i0) * sizeof *rows);
  for (int i = i0; i < i1; i++) rows[i - i0] = (ref_row){i % 7, i, t0_ms + (int64_t)(i - i0) * 10, 0};
  char *j = to_json(rows, i1 - i0);
  free(rows);
  return j;
}

/* 100,000 rows held (an hour's delay), then batches of 10 rows: one that
** releases 10 held rows, then one that releases 60,000 (the store compacts).
** Each delta is a few hundred bytes against a whole state of megabytes, and
** the whole state restored from the base and its deltas is the straight
** run's, byte for byte, as is the output after it. */
TEST(a_checkpoint_after_a_small_batch_is_small) {
  char *big = spread_rows(0, 100000, 0);
  char *b1 = spread_rows(100000, 100010, 3600000);       /* the watermark: 90 ms */
  char *b2 = spread_rows(100010, 100020, 3600100);       /* 190 ms */
  char *b3 = spread_rows(100020, 100030, 4200000);       /* 600 s */
  char *b4 = spread_rows(100030, 100031, 4200100);
  script sc = {DDL("3600") "SELECT k, v FROM ev ORDER BY ts;", {"ev"}, {{big}, {b1}, {b2}, {b3}, {b4}}, 5};
  run r, again;
  blobs base, d2, d4, whole2, whole4;
  CHECK(run_open(&r, &sc));
  for (int b = 0; b < 2; b++) CHECK_EQ(run_batch(&r, b), DIPPER_OK);
  save_all(&r, &base); /* 100,010 held, none released yet */
  size_t before = r.out.len;
  CHECK_EQ(run_batch(&r, 2), DIPPER_OK); /* releases rows 0..9 */
  CHECK(strstr(r.out.data + before, "2, 'v9'\n") && !strstr(r.out.data + before, "'v10'"));
  save_all_as(&r, &d2, true);
  save_all(&r, &whole2);
  CHECK_EQ(run_batch(&r, 3), DIPPER_OK); /* releases rows 10..19 */
  CHECK_EQ(run_batch(&r, 4), DIPPER_OK); /* releases up to 600 s: 60,000 rows, a compaction */
  blobs d34;
  save_all_as(&r, &d34, true);
  save_all(&r, &whole4);
  CHECK_EQ(base.n, 1);
  fprintf(stderr,
          "  sort holding 100,010 rows: whole state %zu bytes; delta of a batch of 10 rows in and 10 "
          "out %zu bytes; of two batches, 60,010 rows out, compacted: %zu bytes (whole %zu)\n",
          base.b[0].len, d2.b[0].len, d34.b[0].len, whole4.b[0].len);
  CHECK(base.b[0].len > 1000000);
  CHECK(d2.b[0].len < 600);
  CHECK(d34.b[0].len < 600);
  CHECK(whole4.b[0].len > 300000);
  d4 = d34;
  const blobs *seq2[] = {&base, &d2}, *seq4[] = {&base, &d2, &d4};
  CHECK(run_open(&again, &sc));
  CHECK_EQ(restore_seq(&again, seq2, 2), DIPPER_OK);
  check_same_state(&again, &whole2, "a held sort from its delta", 2);
  run_close(&again);
  CHECK(run_open(&again, &sc));
  CHECK_EQ(restore_seq(&again, seq4, 3), DIPPER_OK);
  check_same_state(&again, &whole4, "a compacted sort from its deltas", 4);
  /* and it goes on as the straight run does (restore_seq set the watermarks) */
  size_t mark_r = r.out.len;
  CHECK_EQ(run_batch(&r, 5), DIPPER_OK);
  CHECK_EQ(run_batch(&again, 5), DIPPER_OK);
  CHECK_STR(dp_buf_cstr(&again.out), r.out.data + mark_r);
  CHECK(strstr(dp_buf_cstr(&again.out), "'v100030'"));
  run_close(&again);
  run_close(&r);
  free_blobs(&base);
  free_blobs(&d2);
  free_blobs(&d4);
  free_blobs(&whole2);
  free_blobs(&whole4);
  free(big);
  free(b1);
  free(b2);
  free(b3);
  free(b4);
}

int main(void) { return RUN_TESTS(); }
