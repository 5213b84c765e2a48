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

int main(void) { return RUN_TESTS(); }
