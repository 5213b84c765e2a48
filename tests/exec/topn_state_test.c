/*
** topn_state_test.c — the Top-N over a stream (op_topn.c), updating and per
** window, against a naive reference over many rows in eight micro-batches:
** the reference keeps every row ever seen and ranks every partition from
** scratch each batch, the operator keeps only the tops and touches the
** partitions a batch hits (update mode) or the windows the watermark closes
** (window mode), with tombstones compacted once they are half its store.
** Each case is also checked by ops_state_harness.h: resumed after every
** batch from a whole state and from chains of deltas, byte for byte.  The
** small cases feed every truncation and damaged byte of the blobs back; a
** state written by the version before the tombstones (1) still restores.
*/
#include "ops_state_harness.h"

#define DDL                                                                              \
  "CREATE TABLE ev (k INT, g INT, v INT, ts TIMESTAMP(3),"                               \
  " WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'memory');\n"

#define NB 8

typedef struct row {
  int k, g, v;
  int64_t ts; /* ms since 2024-01-01 00:00 */
  int batch;
} row;

static uint64_t rng_state;
static int rnd(int n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (int)(rng_state % (uint64_t)n);
}

/* The script's JSON lines for rows [0, n), batch by batch. */
static void make_script(script *sc, const char *sql, const row *rows, int n, char **texts) {
  memset(sc, 0, sizeof *sc);
  sc->sql = sql;
  sc->tables[0] = "ev";
  sc->nbatches = NB;
  for (int b = 0; b < NB; b++) {
    dp_buf t = DP_BUF_INIT;
    for (int i = 0; i < n; i++)
      if (rows[i].batch == b)
        dp_buf_printf(&t, "{\"k\": %d, \"g\": %d, \"v\": %d, \"ts\": \"2024-01-01 %02d:%02d:%02d.%03d\"}\n",
                      rows[i].k, rows[i].g, rows[i].v, (int)(rows[i].ts / 3600000),
                      (int)(rows[i].ts / 60000 % 60), (int)(rows[i].ts / 1000 % 60),
                      (int)(rows[i].ts % 1000));
    texts[b] = dp_buf_cstr(&t) ? t.data : NULL;
    sc->data[b][0] = texts[b];
  }
}

/* Rows in ranking order: v descending, then arrival (k is the arrival number). */
static const row *sort_rows;
static int by_rank(const void *a, const void *b) {
  const row *x = &sort_rows[*(const int *)a], *y = &sort_rows[*(const int *)b];
  if (x->v != y->v) return x->v > y->v ? -1 : 1;
  return (x->k > y->k) - (x->k < y->k);
}

enum { ROWNUM, RANK, DENSE };

/* The rank of each row of idx[0..n) (sorted by_rank) within its partition
** part[]; into rk[row]. */
static void rank_sorted(const row *rows, const int *idx, int n, const int *part, int nparts, int kind,
                        int *rk) {
  int *count = calloc((size_t)nparts, sizeof *count), *last = calloc((size_t)nparts, sizeof *last);
  int *cur = calloc((size_t)nparts, sizeof *cur);
  for (int j = 0; j < n; j++) {
    int i = idx[j], p = part[i], c = ++count[p];
    bool tie = c > 1 && rows[last[p]].v == rows[i].v;
    if (kind == ROWNUM || (kind == RANK && !tie)) cur[p] = c;
    if (kind == DENSE && !tie) cur[p] = c == 1 ? 1 : cur[p] + 1;
    last[p] = i;
    rk[i] = cur[p];
  }
  free(count);
  free(last);
  free(cur);
}

/* The updating Top-N, from scratch every batch: the rows new to a top or
** (with the rank shown) whose rank moved, in ranking order. */
static char *reference_update(const row *rows, int n, int top, int kind, bool show_rank) {
  dp_buf out = DP_BUF_INIT;
  int *idx = malloc((size_t)n * sizeof *idx), *part = malloc((size_t)n * sizeof *part);
  int *rk = malloc((size_t)n * sizeof *rk), *was = malloc((size_t)n * sizeof *was);
  int nparts = 0;
  for (int i = 0; i < n; i++) {
    part[i] = rows[i].g;
    if (rows[i].g + 1 > nparts) nparts = rows[i].g + 1;
    was[i] = 0; /* the rank it was last emitted with while in the top; 0: not in it */
  }
  sort_rows = rows;
  for (int b = 0; b <= NB; b++) {
    dp_buf_printf(&out, "#%d\n", b);
    int m = 0;
    for (int i = 0; i < n; i++)
      if (rows[i].batch <= b) idx[m++] = i;
    qsort(idx, (size_t)m, sizeof *idx, by_rank);
    rank_sorted(rows, idx, m, part, nparts, kind, rk);
    bool any = false;
    for (int i = 0; i < n; i++) any |= rows[i].batch == b;
    for (int j = 0; j < m && any; j++) {
      int i = idx[j];
      if (rk[i] > top) {
        was[i] = 0;
        continue;
      }
      /* the subquery's SELECT * keeps rn, so a moved rank is emitted even
         when the outer query does not show it */
      bool emit = was[i] != rk[i];
      was[i] = rk[i];
      if (!emit) continue;
      if (show_rank) dp_buf_printf(&out, "%d, %d, %d, %d\n", rows[i].k, rows[i].g, rows[i].v, rk[i]);
      else dp_buf_printf(&out, "%d, %d, %d\n", rows[i].k, rows[i].g, rows[i].v);
    }
  }
  free(idx);
  free(part);
  free(rk);
  free(was);
  return dp_buf_cstr(&out) ? out.data : NULL;
}

/* The window Top-N (1 s TUMBLE windows, partitions (window, g)): batch b
** runs under the watermark the batches before it gave (their latest event
** time less 2 s), drops the rows of windows the previous batch's watermark
** had closed, and emits each window its watermark closes, ranked with
** every window closed with it, in ranking order. */
static char *reference_window(const row *rows, int n, int top, int kind) {
  dp_buf out = DP_BUF_INIT;
  int *idx = malloc((size_t)n * sizeof *idx), *part = malloc((size_t)n * sizeof *part);
  int *rk = malloc((size_t)n * sizeof *rk);
  bool *kept = calloc((size_t)n, 1), *done = calloc((size_t)n, 1);
  int nparts = 0;
  for (int i = 0; i < n; i++) {
    part[i] = (int)(rows[i].ts / 1000) * 16 + rows[i].g;
    if (part[i] + 1 > nparts) nparts = part[i] + 1;
  }
  const int64_t none = INT64_MIN;
  int64_t wm = none, prev = none, maxts = none;
  sort_rows = rows;
  for (int b = 0; b <= NB; b++) {
    dp_buf_printf(&out, "#%d\n", b);
    if (b == NB) wm = INT64_MAX;
    for (int i = 0; i < n; i++) {
      if (rows[i].batch != b) continue;
      int64_t wend = rows[i].ts / 1000 * 1000 + 1000;
      kept[i] = prev == none || wend > prev;
      if (rows[i].ts > maxts) maxts = rows[i].ts;
    }
    int m = 0;
    for (int i = 0; i < n && wm != none; i++) {
      int64_t wend = rows[i].ts / 1000 * 1000 + 1000;
      if (kept[i] && !done[i] && rows[i].batch <= b && wend <= wm) {
        idx[m++] = i;
        done[i] = true;
      }
    }
    qsort(idx, (size_t)m, sizeof *idx, by_rank);
    rank_sorted(rows, idx, m, part, nparts, kind, rk);
    for (int j = 0; j < m; j++)
      if (rk[idx[j]] <= top)
        dp_buf_printf(&out, "%d, %d, %d, %d\n", rows[idx[j]].k, rows[idx[j]].g, rows[idx[j]].v,
                      rk[idx[j]]);
    prev = wm;
    if (maxts != none && maxts - 2000 > wm) wm = maxts - 2000;
  }
  free(idx);
  free(part);
  free(rk);
  free(kept);
  free(done);
  return dp_buf_cstr(&out) ? out.data : NULL;
}

/* Rows for the updating cases: per batch `per` rows over `nparts`
** partitions, values 0..vmax (ties when vmax is small). */
static int gen_update(row *rows, int per, int nparts, int vmax, uint64_t seed) {
  rng_state = seed;
  int n = 0;
  for (int b = 0; b < NB; b++)
    for (int j = 0; j < per; j++, n++)
      rows[n] = (row){n, rnd(nparts), rnd(vmax + 1), 1000LL * b + j % 1000, b};
  return n;
}

/* Rows for the window cases: batch b's rows in [3b, 3b + 4) s, now and then
** one from long before (late). */
static int gen_window(row *rows, int per, int vmax, uint64_t seed) {
  rng_state = seed;
  int n = 0;
  for (int b = 0; b < NB; b++)
    for (int j = 0; j < per; j++, n++) {
      int64_t ts = 3000LL * b + rnd(4000);
      if (b > 2 && rnd(20) == 0) ts = 3000LL * (b - 3) + rnd(1000);
      rows[n] = (row){n, rnd(4), rnd(vmax + 1), ts, b};
    }
  return n;
}

static const char *rank_fn(int kind) {
  return kind == ROWNUM ? "ROW_NUMBER()" : kind == RANK ? "RANK()" : "DENSE_RANK()";
}

/* Run A against the reference; then resumes from whole states and from
** deltas (damage: every truncation and damaged byte too, for small cases). */
static void check_case(const char *sql, const row *rows, int n, const char *want, bool damage) {
  script sc;
  char *texts[NB];
  make_script(&sc, sql, rows, n, texts);
  if (damage) {
    check_script(&sc, want);
  } else {
    run a;
    if (run_open(&a, &sc)) {
      bool ok = true;
      for (int b = 0; ok && b <= sc.nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
      CHECK_STR(dp_buf_cstr(&a.out), want);
      for (int k = 0; ok && k <= sc.nbatches; k++) check_resume_at(&sc, &a, k);
      if (ok) check_deltas(&sc, &a, 1, false);
      if (ok) check_deltas(&sc, &a, 3, false);
    }
    run_close(&a);
  }
  for (int b = 0; b < NB; b++) free(texts[b]);
}

static void update_case(int per, int nparts, int vmax, int top, int kind, bool show_rank, bool damage,
                        uint64_t seed) {
  row *rows = malloc((size_t)(NB * per) * sizeof *rows);
  int n = gen_update(rows, per, nparts, vmax, seed);
  char sql[512];
  snprintf(sql, sizeof sql,
           DDL "SELECT k, g, v%s FROM (SELECT *, %s OVER (PARTITION BY g ORDER BY v DESC) AS rn"
               " FROM ev) WHERE rn <= %d;",
           show_rank ? ", rn" : "", rank_fn(kind), top);
  char *want = reference_update(rows, n, top, kind, show_rank);
  check_case(sql, rows, n, want, damage);
  free(want);
  free(rows);
}

static void window_case(int per, int vmax, int top, int kind, bool damage, uint64_t seed) {
  row *rows = malloc((size_t)(NB * per) * sizeof *rows);
  int n = gen_window(rows, per, vmax, seed);
  char sql[640];
  snprintf(sql, sizeof sql,
           DDL "SELECT k, g, v, rn FROM (SELECT *, %s OVER (PARTITION BY window_start, window_end, g"
               " ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts),"
               " INTERVAL '1' SECOND))) WHERE rn <= %d;",
           rank_fn(kind), top);
  char *want = reference_window(rows, n, top, kind);
  check_case(sql, rows, n, want, damage);
  free(want);
  free(rows);
}

TEST(updating_topn_small_batches_against_the_reference) {
  update_case(6, 3, 5, 2, ROWNUM, true, true, 11);
  update_case(6, 3, 3, 2, RANK, true, true, 12);
  update_case(6, 2, 3, 2, DENSE, false, true, 13);
}

/* 600 rows a batch over 300 partitions: most tops are replaced each batch,
** so the tombstones pass half the store and it compacts, mid-run and
** between checkpoints. */
TEST(updating_topn_many_rows_compacts_its_tombstones) {
  update_case(600, 300, 1000, 3, ROWNUM, true, false, 21);
  update_case(600, 300, 20, 2, RANK, true, false, 22);
  update_case(600, 300, 50, 3, DENSE, false, false, 23);
  /* few partitions, most rows never reach the top */
  update_case(500, 7, 100000, 4, ROWNUM, true, false, 24);
}

TEST(window_topn_small_batches_against_the_reference) {
  window_case(5, 4, 2, ROWNUM, true, 31);
  window_case(5, 2, 2, RANK, true, 32);
}

TEST(window_topn_many_rows_against_the_reference) {
  window_case(700, 1000, 3, ROWNUM, false, 41);
  window_case(700, 30, 2, DENSE, false, 42);
}

/* ---- states written by version 1 ----
** The blobs below were written by op_topn.c as of b4f3cd9 (version 1: no
** tombstones) for the small cases' scripts: a whole state after batch 2, a
** delta after batch 3 (the driver's watermarks with them).  With
** TOPN_DUMP=1 in the environment this test prints the blobs the build it
** runs writes, in the same form (how these were made). */
typedef struct v1_state {
  const char *whole, *delta; /* hex, the Top-N's blob (the only operator with state) */
  int64_t batch_wm, next_wm, max_event;
} v1_state;

static void hex_into(dp_buf *b, const char *hex) {
  for (size_t i = 0; hex[i] && hex[i + 1]; i += 2) {
    unsigned v;
    sscanf(hex + i, "%2x", &v);
    dp_buf_putc(b, (char)v);
  }
}

static void dump_blob(const char *what, const blobs *bl) {
  fprintf(stderr, "%s n=%d batch_wm=%lld next_wm=%lld max_event=%lld\n", what, bl->n,
          (long long)bl->batch_wm, (long long)bl->next_wm,
          (long long)(bl->nwm > 0 ? bl->max_event_time[0] : 0));
  for (int i = 0; i < bl->n; i++) {
    fprintf(stderr, "  \"");
    for (size_t j = 0; j < bl->b[i].len; j++) fprintf(stderr, "%02x", (unsigned)(uint8_t)bl->b[i].data[j]);
    fprintf(stderr, "\"\n");
  }
}

static void check_v1(const char *sql, const row *rows, int n, const v1_state *v1) {
  script sc;
  char *texts[NB];
  make_script(&sc, sql, rows, n, texts);
  run a, c;
  bool ok = run_open(&a, &sc);
  for (int b = 0; ok && b <= sc.nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
  if (ok && getenv("TOPN_DUMP")) {
    static blobs w, d;
    ok = run_open(&c, &sc);
    for (int b = 0; ok && b <= 3; b++) {
      ok = run_batch(&c, b) == DIPPER_OK;
      if (b == 2) save_all_as(&c, &w, false);
      if (b == 3) save_all_as(&c, &d, true);
    }
    dump_blob("whole", &w);
    dump_blob("delta", &d);
    free_blobs(&w);
    free_blobs(&d);
    run_close(&c);
  }
  static blobs w, d;
  memset(&w, 0, sizeof w);
  memset(&d, 0, sizeof d);
  w.n = d.n = 1;
  d.delta[0] = true;
  hex_into(&w.b[0], v1->whole);
  hex_into(&d.b[0], v1->delta);
  CHECK(w.b[0].len > 0 && w.b[0].data[0] == 1 && d.b[0].data[0] == 1);
  d.batch_wm = v1->batch_wm;
  d.next_wm = v1->next_wm;
  d.nwm = 1;
  d.max_event_time[0] = v1->max_event;
  if (ok && run_open(&c, &sc)) {
    const blobs *seq[2] = {&w, &d};
    CHECK_EQ(restore_seq(&c, seq, 2), DIPPER_OK);
    for (int b = 4; b <= sc.nbatches && ok; b++) ok = run_batch(&c, b) == DIPPER_OK;
    CHECK_STR(dp_buf_cstr(&c.out), a.out.data + a.mark[4]);
    /* and what it saves now is of the new version, and restores */
    blobs now;
    save_all(&c, &now);
    CHECK(now.n == 1 && now.b[0].data[0] == 3);
    free_blobs(&now);
  }
  run_close(&c);
  run_close(&a);
  free_blobs(&w);
  free_blobs(&d);
  for (int b = 0; b < NB; b++) free(texts[b]);
}

static const v1_state v1_update = {
    "01020090c58f81e2f58606040604060b0000000c00000004000000050000000f000000070000000406010000"
    "0000000000020000000200000000000000010000000406050000000500000003000000030000000300000001"
    "000000250690d78383e2f58606f0ba79bfd3f301d00fe0f2f3019fa87a010101020202",
    "01020090ce8982e2f586060601040604060b0000000c00000017000000040000000500000014000000040601"
    "0000000000000000000000020000000200000001000000040605000000050000000500000003000000030000"
    "0003000000250690d78383e2f58606f0ba7990d77acfaaee02d00f90eced02010102010202",
    1704067200005000LL, 1704067201005000LL, 1704067203005000LL};
static const v1_state v1_window = {
    "010100d0e6dd86e2f58606070a040a05000000060000000700000008000000090000000a0000000b0000000c"
    "0000000d0000000e000000040a01000000000000000000000001000000010000000200000000000000000000"
    "000100000002000000040a000000000200000001000000010000000300000004000000030000000000000002"
    "00000003000000250a90f0c586e2f58606d0b96fbf940ebff916f0dcc10180b595018f9e8d01f0968501a0cc"
    "eb01dfe5a401250a80a4f185e2f5860680897a000080897a8092f401ff91f4018092f40180897aff887a250a"
    "80adeb86e2f5860680897a000080897a8092f401ff91f4018092f40180897aff887a250afeaceb86e2f58606"
    "80897a000080897a8092f401ff91f4018092f40180897aff887a",
    "010100d0e0d689e2f586060a02020004000000070404040f0000001000000011000000120000000404010000"
    "0003000000020000000000000004040200000001000000030000000300000025049088a98de2f58606c09262"
    "df8c92038ffd1a250480e3c78ce2f5860680897aff9aee0200250480ecc18de2f5860680897aff9aee020025"
    "04feebc18de2f5860680897aff9aee0200",
    1704067207977000LL, 1704067210601000LL, 1704067212601000LL};

TEST(version_1_states_still_restore) {
  row rows[NB * 6];
  int n = gen_update(rows, 6, 3, 5, 11);
  check_v1(DDL "SELECT k, g, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC)"
               " AS rn FROM ev) WHERE rn <= 2;",
           rows, n, &v1_update);
  n = gen_window(rows, 5, 4, 31);
  check_v1(DDL "SELECT k, g, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start,"
               " window_end, g ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts),"
               " INTERVAL '1' SECOND))) WHERE rn <= 2;",
           rows, n, &v1_window);
}

int main(void) { return RUN_TESTS(); }
