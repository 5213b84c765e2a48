/*
** over_stream_test.c — OVER on a stream (op_over.c's stream path): each
** frame kind over many small micro-batches of several partitions, with late
** rows and ties, checked row by row against a naive recomputation (every
** row's frame found again from all the rows that were not late), then
** resumed from a checkpoint after every batch (ops_state_harness.h: whole
** states, chains of deltas, damaged blobs) giving the same output in the
** same order.
**
** The rows are made so that which are late needs no model of the
** watermark: the harness's watermark in batch b is the largest time seen up
** to batch b-1 less the delay (2 s), and rows are late by the one of batch
** b-1.  An on-time row lies at most 1.5 s below the largest time seen
** before its batch; a late one at least 2.5 s below the largest seen two
** batches before.
*/
#include <inttypes.h>

#define MAX_BATCHES 40
#include "ops_state_harness.h"

#define NB 30   /* data batches (a final one follows) */
#define MAXEV 200

typedef struct ev {
  int id, k;
  bool vnull, late;
  int64_t v, ms;
} ev;

typedef struct gen {
  ev e[MAXEV];
  int n;
  char *batch[NB];
} gen;

static uint64_t rnd_state;
static unsigned rnd(unsigned n) {
  rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((rnd_state >> 33) % n);
}

static void make_rows(gen *g, uint64_t seed, int nparts, int nb) {
  memset(g, 0, sizeof *g);
  rnd_state = seed;
  int64_t max1 = -1, max2 = -1; /* the largest times up to batch b-1, b-2 */
  for (int b = 0; b < nb; b++) {
    dp_buf text = DP_BUF_INIT;
    int64_t max_now = max1;
    int nrows = 1 + (int)rnd(6);
    for (int i = 0; i < nrows && g->n < MAXEV; i++) {
      ev *e = &g->e[g->n];
      e->id = g->n++;
      e->k = (int)rnd((unsigned)nparts);
      e->vnull = rnd(8) == 0;
      e->v = (int64_t)rnd(20) - 5;
      if (max2 >= 0 && rnd(8) == 0) { /* late: below the late watermark */
        e->late = true;
        e->ms = max2 - 2500 - 500 * (int64_t)rnd(4);
      } else { /* on time, on a 500 ms grid: ties within a partition */
        e->ms = (max1 < 0 ? 10000 : max1 - 1500) + 500 * (int64_t)rnd(7);
      }
      if (e->ms < 0) e->ms = 0;
      if (e->ms > max_now) max_now = e->ms;
      int64_t s = e->ms / 1000;
      dp_buf_printf(&text, "{\"id\": %d, \"k\": %d, \"v\": ", e->id, e->k);
      if (e->vnull) dp_buf_printf(&text, "null");
      else dp_buf_printf(&text, "%" PRId64, e->v);
      dp_buf_printf(&text, ", \"ts\": \"2024-01-01 %02d:%02d:%02d.%03d\"}\n", (int)(s / 3600),
                    (int)(s / 60 % 60), (int)(s % 60), (int)(e->ms % 1000));
    }
    g->batch[b] = strdup(dp_buf_cstr(&text) ? dp_buf_cstr(&text) : "");
    dp_buf_free(&text);
    max2 = max1;
    max1 = max_now;
  }
}

static void free_rows(gen *g) {
  for (int b = 0; b < NB; b++) free(g->batch[b]); /* NULL past the batches made */
}

/* ---- the naive recomputation ---- */

enum frame { ROWS_UNB, RANGE_UNB, ROWS_N, RANGE_X };
enum fn { F_SUM, F_COUNT_STAR, F_COUNT, F_MIN, F_MAX, F_LAG1, F_LAG3 };

typedef struct query {
  const char *over;  /* the window */
  enum frame frame;
  int64_t n;         /* ROWS_N: rows; RANGE_X: ms */
  bool partitioned;
  int nfn;
  enum fn fn[5];
  const char *calls; /* the calls, in fn's order */
} query;

/* The other rows of e's partition that were not late, by (time, arrival). */
static int part_rows(const gen *g, const query *q, const ev *e, const ev **out) {
  int n = 0;
  for (int i = 0; i < g->n; i++) {
    const ev *x = &g->e[i];
    if (x->late || (q->partitioned && x->k != e->k)) continue;
    int j = n++;
    while (j > 0 && (out[j - 1]->ms > x->ms || (out[j - 1]->ms == x->ms && out[j - 1]->id > x->id))) {
      out[j] = out[j - 1];
      j--;
    }
    out[j] = x;
  }
  return n;
}

static void naive_line(const gen *g, const query *q, const ev *e, dp_buf *out) {
  const ev *p[MAXEV];
  int n = part_rows(g, q, e, p), i = 0;
  while (p[i] != e) i++;
  int lo = 0, hi = i + 1;
  if (q->frame == RANGE_UNB || q->frame == RANGE_X)
    while (hi < n && p[hi]->ms == e->ms) hi++; /* peers */
  if (q->frame == ROWS_N) lo = i - (int)q->n > 0 ? i - (int)q->n : 0;
  if (q->frame == RANGE_X)
    while (p[lo]->ms < e->ms - q->n) lo++;
  dp_buf_printf(out, "%d", e->id);
  for (int f = 0; f < q->nfn; f++) {
    int64_t acc = 0, cnt = 0, cstar = 0;
    bool any = false;
    for (int j = lo; j < hi; j++) {
      cstar++;
      if (p[j]->vnull) continue;
      cnt++;
      int64_t v = p[j]->v;
      switch (q->fn[f]) {
      case F_SUM: acc += v; break;
      case F_MIN: acc = !any || v < acc ? v : acc; break;
      case F_MAX: acc = !any || v > acc ? v : acc; break;
      default: break;
      }
      any = true;
    }
    switch (q->fn[f]) {
    case F_COUNT_STAR: dp_buf_printf(out, ", %" PRId64, cstar); break;
    case F_COUNT: dp_buf_printf(out, ", %" PRId64, cnt); break;
    case F_LAG1:
    case F_LAG3: {
      int off = q->fn[f] == F_LAG1 ? 1 : 3;
      if (i - off >= 0 && !p[i - off]->vnull) dp_buf_printf(out, ", %" PRId64, p[i - off]->v);
      else if (i - off < 0 && q->fn[f] == F_LAG3) dp_buf_printf(out, ", -1");
      else dp_buf_printf(out, ", NULL");
      break;
    }
    default:
      if (any) dp_buf_printf(out, ", %" PRId64, acc);
      else dp_buf_printf(out, ", NULL");
    }
  }
  dp_buf_putc(out, '\n');
}

/* The lines of `text` that are rows (not "#<batch>"), sorted (the caller frees). */
static char *rows_sorted(const char *text) {
  dp_buf rows = DP_BUF_INIT;
  const char *s = text;
  while (*s) {
    const char *e = strchr(s, '\n');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len > 0 && s[0] != '#') {
      dp_buf_put(&rows, s, len);
      dp_buf_putc(&rows, '\n');
    }
    s += len + (e ? 1 : 0);
  }
  char *sorted = strdup(sorted_lines(dp_buf_cstr(&rows) ? dp_buf_cstr(&rows) : ""));
  dp_buf_free(&rows);
  return sorted;
}

#define EV_SQL                                                                            \
  "CREATE TABLE ev (id INT, k INT, v BIGINT, ts TIMESTAMP(3),"                             \
  " WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'memory');\n"

/* q over nb batches of the rows of seed: the stream's rows against the
** naive ones, then (resume) the checkpoint checks.  The late rows. */
static int check_query(const query *q, uint64_t seed, int nb, bool resume) {
  gen *g = malloc(sizeof *g);
  make_rows(g, seed, 3, nb);
  int nlate = 0;
  char sql[1024];
  snprintf(sql, sizeof sql, EV_SQL "SELECT id, %s FROM ev WINDOW w AS (%s%s);", q->calls,
           q->partitioned ? "PARTITION BY k " : "", q->over);
  script *sc = calloc(1, sizeof *sc);
  sc->sql = sql;
  sc->tables[0] = "ev";
  sc->nbatches = nb;
  for (int b = 0; b < nb; b++) sc->data[b][0] = g->batch[b];
  run a;
  bool ok = run_open(&a, sc);
  for (int b = 0; ok && b <= nb; b++) ok = run_batch(&a, b) == DIPPER_OK;
  if (ok) {
    dp_buf want = DP_BUF_INIT;
    for (int i = 0; i < g->n; i++) {
      if (g->e[i].late) nlate++;
      else naive_line(g, q, &g->e[i], &want);
    }
    char *got = rows_sorted(dp_buf_cstr(&a.out));
    char *exp = strdup(sorted_lines(dp_buf_cstr(&want) ? dp_buf_cstr(&want) : ""));
    if (strcmp(got, exp) != 0) fprintf(stderr, "  query: %s\n", sql);
    CHECK_STR(got, exp);
    CHECK(g->n - nlate > 2 * nb); /* the rows make a case */
    free(got);
    free(exp);
    dp_buf_free(&want);
  }
  run_close(&a);
  if (ok && resume) check_script(sc, NULL);
  free(sc);
  free_rows(g);
  free(g);
  return nlate;
}

static const query queries[] = {
    {"ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", ROWS_UNB, 0, true, 5,
     {F_SUM, F_COUNT_STAR, F_COUNT, F_MIN, F_MAX},
     "SUM(v) OVER w, COUNT(*) OVER w, COUNT(v) OVER w, MIN(v) OVER w, MAX(v) OVER w"},
    {"ORDER BY ts", RANGE_UNB, 0, true, 3, {F_SUM, F_COUNT_STAR, F_MAX},
     "SUM(v) OVER w, COUNT(*) OVER w, MAX(v) OVER w"},
    {"ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", RANGE_UNB, 0, true, 2,
     {F_SUM, F_MIN}, "SUM(v) OVER w, MIN(v) OVER w"},
    {"ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW", ROWS_N, 2, true, 3,
     {F_SUM, F_COUNT_STAR, F_MIN}, "SUM(v) OVER w, COUNT(*) OVER w, MIN(v) OVER w"},
    {"ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW", RANGE_X, 2000,
     true, 3, {F_SUM, F_COUNT_STAR, F_MAX}, "SUM(v) OVER w, COUNT(*) OVER w, MAX(v) OVER w"},
    {"ORDER BY ts", RANGE_UNB, 0, true, 3, {F_LAG1, F_LAG3, F_SUM},
     "LAG(v) OVER w, LAG(v, 3, CAST(-1 AS BIGINT)) OVER w, SUM(v) OVER w"},
    {"ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW", ROWS_N, 3, true, 2, {F_LAG1, F_MAX},
     "LAG(v) OVER w, MAX(v) OVER w"},
    {"ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW", ROWS_N, 1, false, 2,
     {F_SUM, F_COUNT}, "SUM(v) OVER w, COUNT(v) OVER w"},
    {"ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW", RANGE_X, 1000,
     false, 1, {F_COUNT_STAR}, "COUNT(*) OVER w"},
    /* large frames (the windows' two stacks turn over many times) */
    {"ORDER BY ts ROWS BETWEEN 40 PRECEDING AND CURRENT ROW", ROWS_N, 40, false, 5,
     {F_SUM, F_COUNT_STAR, F_COUNT, F_MIN, F_MAX},
     "SUM(v) OVER w, COUNT(*) OVER w, COUNT(v) OVER w, MIN(v) OVER w, MAX(v) OVER w"},
    {"ORDER BY ts ROWS BETWEEN 17 PRECEDING AND CURRENT ROW", ROWS_N, 17, true, 4,
     {F_MAX, F_LAG3, F_SUM, F_MIN},
     "MAX(v) OVER w, LAG(v, 3, CAST(-1 AS BIGINT)) OVER w, SUM(v) OVER w, MIN(v) OVER w"},
    {"ORDER BY ts RANGE BETWEEN INTERVAL '30' SECOND PRECEDING AND CURRENT ROW", RANGE_X, 30000,
     false, 4, {F_SUM, F_COUNT, F_MIN, F_MAX},
     "SUM(v) OVER w, COUNT(v) OVER w, MIN(v) OVER w, MAX(v) OVER w"},
    {"ORDER BY ts RANGE BETWEEN INTERVAL '12' SECOND PRECEDING AND CURRENT ROW", RANGE_X, 12000,
     true, 3, {F_MIN, F_COUNT_STAR, F_SUM}, "MIN(v) OVER w, COUNT(*) OVER w, SUM(v) OVER w"},
};
#define NQUERIES (int)(sizeof queries / sizeof queries[0])

TEST(each_frame_against_a_naive_recomputation) {
  for (int q = 0; q < NQUERIES; q++) {
    int nlate = 0;
    for (uint64_t seed = 1; seed <= 3; seed++)
      nlate += check_query(&queries[q], seed * 7919 + (uint64_t)q, NB, false);
    CHECK(nlate > 3); /* late rows were dropped, not counted in */
  }
}

/* Ten batches (the checks resume after each, from whole states and chains
** of deltas, and damage the blobs: quadratic in the batches). */
TEST(each_frame_resumed_from_a_checkpoint_after_every_batch) {
  for (int q = 0; q < NQUERIES; q++) check_query(&queries[q], 104729 + (uint64_t)q, 10, true);
}

/* A state blob of version 1 (the whole history of a stream) is refused with
** the checkpoint folder named and what to do. */
TEST(a_version_1_stream_state_is_refused_naming_the_folder) {
  static const script sc = {EV_SQL "SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts) FROM ev;",
                            {"ev"},
                            {{"{\"id\": 1, \"k\": 1, \"v\": 2, \"ts\": \"2024-01-01 00:00:01\"}\n"}},
                            1};
  run r;
  if (!run_open(&r, &sc)) {
    run_close(&r);
    return;
  }
  CHECK_EQ(run_batch(&r, 0), DIPPER_OK);
  dp_op *op = r.h->root;
  while (op && strcmp(op->cls->name, "Over") != 0) op = op->nchildren ? op->children[0] : NULL;
  CHECK(op != NULL);
  if (op) {
    const uint8_t v1[] = {1, 1, 0};
    const char *saved = r.h->ex.checkpoint;
    r.h->ex.checkpoint = "/tmp/some-checkpoint";
    dp_rd in;
    dp_rd_init(&in, v1, sizeof v1);
    CHECK_EQ(op->cls->restore_state(op, &in), DIPPER_CORRUPT);
    dp_buf all = DP_BUF_INIT;
    for (int i = 0; i < r.h->ex.diags->count; i++)
      dp_buf_printf(&all, "%s\n", r.h->ex.diags->items[i].message);
    CHECK(strstr(dp_buf_cstr(&all), "/tmp/some-checkpoint") != NULL);
    CHECK(strstr(dp_buf_cstr(&all), "fresh checkpoint folder") != NULL);
    dp_buf_free(&all);
    r.h->ex.checkpoint = saved;
  }
  run_close(&r);
}

int main(void) { return RUN_TESTS(); }
