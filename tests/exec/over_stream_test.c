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
enum fn { F_SUM, F_COUNT_STAR, F_COUNT, F_MIN, F_MAX, F_LAG1, F_LAG3, F_ROWNUM, F_RANK, F_DENSE };

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
    case F_ROWNUM: dp_buf_printf(out, ", %d", i + 1); break;
    case F_RANK: { /* the first peer's place */
      int j = i;
      while (j > 0 && p[j - 1]->ms == e->ms) j--;
      dp_buf_printf(out, ", %d", j + 1);
      break;
    }
    case F_DENSE: { /* the distinct times up to e's */
      int d = 0;
      for (int j = 0; j <= i; j++) d += j == 0 || p[j]->ms != p[j - 1]->ms;
      dp_buf_printf(out, ", %d", d);
      break;
    }
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
    /* ranks: ties among a partition's rows in arrival order (ROW_NUMBER), peers (RANK, DENSE_RANK) */
    {"ORDER BY ts", RANGE_UNB, 0, true, 4, {F_ROWNUM, F_RANK, F_DENSE, F_SUM},
     "ROW_NUMBER() OVER w, RANK() OVER w, DENSE_RANK() OVER w, SUM(v) OVER w"},
    {"ORDER BY ts", RANGE_UNB, 0, false, 4, {F_DENSE, F_LAG3, F_ROWNUM, F_RANK},
     "DENSE_RANK() OVER w, LAG(v, 3, CAST(-1 AS BIGINT)) OVER w, ROW_NUMBER() OVER w, RANK() OVER w"},
    {"ORDER BY ts", RANGE_UNB, 0, true, 1, {F_DENSE}, "DENSE_RANK() OVER w"},
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

/* A sliding SUM of DOUBLE subtracts nothing: the third row's frame {1, 2}
** sums to 3, where adding 2 and taking 1e20 out of 1e20 + 1 would give 2. */
TEST(a_sliding_double_sum_carries_no_error_from_rows_that_left) {
  static const script sc = {
      "CREATE TABLE d (id INT, x DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)"
      " WITH ('connector' = 'memory');\n"
      "SELECT id, SUM(x) OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM d;",
      {"d"},
      {{"{\"id\": 1, \"x\": 1e20, \"ts\": \"2024-01-01 00:00:01\"}\n"
        "{\"id\": 2, \"x\": 1, \"ts\": \"2024-01-01 00:00:02\"}\n"},
       {"{\"id\": 3, \"x\": 2, \"ts\": \"2024-01-01 00:00:03\"}\n"
        "{\"id\": 4, \"x\": 0.5, \"ts\": \"2024-01-01 00:00:04\"}\n"}},
      2};
  check_script(&sc, "#0\n#1\n1, 1E20\n2, 1E20\n#2\n3, 3E0\n4, 2.5E0\n");
}

/* LEAD on a stream is refused, as Flink 2.3 refuses it, saying so and what
** to use instead. */
TEST(lead_on_a_stream_is_refused_as_flink_refuses_it) {
  harness *h = calloc(1, sizeof *h);
  int rc = harness_open_at(h, EV_SQL "SELECT id, LEAD(v) OVER (PARTITION BY k ORDER BY ts) FROM ev;", NULL);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  dp_buf all = DP_BUF_INIT;
  for (int i = 0; i < h->diags.count; i++) dp_buf_printf(&all, "%s\n", h->diags.items[i].message);
  CHECK_CONTAINS(dp_buf_cstr(&all), "Flink refuses it too");
  CHECK_CONTAINS(dp_buf_cstr(&all), "use LAG(..)");
  dp_buf_free(&all);
  harness_close(h);
  free(h);
}

/* ---- a state TTL ('table.exec.state.ttl') ---- */

static const int64_t ttl_clock[] = {100, 103, 106, 109, 112, 125, 128, 131, 134, 137, 150};

/* The TTL takes the frames whose state is per partition for ever (the
** planner's analyze_ttl.c): running ones, and LAG. */
#define TTL_SQL(calls, frame)                                                              \
  EV_SQL "SET 'table.exec.state.ttl' = '7 s';\n"                                          \
         "SELECT id, " calls " FROM ev WINDOW w AS (PARTITION BY k ORDER BY ts " frame ");"
#define SLIDE_SQL(frame)                                                                   \
  EV_SQL "SELECT id, SUM(v) OVER w, MIN(v) OVER w, COUNT(*) OVER w FROM ev WINDOW w AS "   \
         "(PARTITION BY k ORDER BY ts " frame ");"

/* Partitions idle for 7 s of the script's clock expire (a running SUM
** starts again); resumed after every batch from whole states and chains of
** deltas (the TTL list written as a delta), the same output. */
TEST(a_state_ttl_resumed_after_every_batch) {
  static const char *sqls[] = {
      TTL_SQL("SUM(v) OVER w, MAX(v) OVER w", "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"),
      TTL_SQL("LAG(v, 2) OVER w, COUNT(*) OVER w", "")};
  for (int q = 0; q < 2; q++) {
    gen *g = malloc(sizeof *g);
    make_rows(g, 4242 + (uint64_t)q, 4, 10);
    script *sc = calloc(1, sizeof *sc);
    sc->sql = sqls[q];
    sc->tables[0] = "ev";
    sc->nbatches = 10;
    sc->clock = ttl_clock;
    for (int b = 0; b < 10; b++) sc->data[b][0] = g->batch[b];
    check_script(sc, NULL);
    free(sc);
    free_rows(g);
    free(g);
  }
}

/* The TTL list in a delta holds the partitions a batch wrote, not all of
** them: 3,000 partitions in batch 0 (released in batch 2), one written in
** each batch after. */
TEST(a_delta_writes_the_ttl_list_of_the_partitions_written) {
  static script sc;
  dp_buf first = DP_BUF_INIT;
  for (int k = 0; k < 3000; k++)
    dp_buf_printf(&first, "{\"id\": %d, \"k\": %d, \"v\": 1, \"ts\": \"2024-01-01 00:00:10\"}\n", k, k);
  char later[3][128];
  for (int b = 0; b < 3; b++)
    snprintf(later[b], sizeof later[b],
             "{\"id\": %d, \"k\": 7, \"v\": 2, \"ts\": \"2024-01-01 00:00:%02d\"}\n", 3000 + b, 20 + 5 * b);
  sc.sql = TTL_SQL("SUM(v) OVER w", "");
  sc.tables[0] = "ev";
  sc.data[0][0] = dp_buf_cstr(&first);
  for (int b = 0; b < 3; b++) sc.data[b + 1][0] = later[b];
  sc.nbatches = 4;
  static const int64_t clock[] = {100, 101, 102, 103, 104};
  sc.clock = clock;
  run r;
  bool ok = run_open(&r, &sc);
  size_t whole = 0, delta = 0;
  for (int b = 0; ok && b < 4; b++) {
    ok = run_batch(&r, b) == DIPPER_OK;
    blobs bl;
    save_all_as(&r, &bl, b > 0);
    CHECK_EQ(bl.n, 1);
    if (b == 2) whole = bl.b[0].len; /* the delta of the batch that released the 3,000 */
    if (b == 3) delta = bl.b[0].len;
    free_blobs(&bl);
  }
  CHECK(whole > 3000 * 3);
  if (delta >= 400) fprintf(stderr, "  batch 2's delta %zu B, batch 3's %zu B\n", whole, delta);
  CHECK(delta > 0 && delta < 400);
  run_close(&r);
  dp_buf_free(&first);
}

/* ---- states written by version 2 ----
** The blobs below were written by op_over.c as of eb93500 (version 2: no
** windows, the TTL list whole after a has_ttl byte) for check_v2's scripts
** (two sliding frames, a running one under a TTL): a whole state after
** batch 3 and a delta after batch 4.  With OVER_DUMP=1 in
** the environment this test prints the blobs the build it runs writes, in
** the same form (how these were made). */
typedef struct v2_state {
  const char *whole, *delta; /* hex */
  int64_t batch_wm, next_wm, max_event;
} v2_state;

static void hex_into(dp_buf *b, const char *hex) {
  for (size_t i = 0; hex[i] && hex[i + 1]; i += 2) {
    unsigned v;
    sscanf(hex + i, "%2x", &v);
    dp_buf_putc(b, (char)v);
  }
}

static void dump_blob(const char *what, const blobs *bl) {
  fprintf(stderr, "%s batch_wm=%lld next_wm=%lld max_event=%lld\n  \"", what,
          (long long)bl->batch_wm, (long long)bl->next_wm,
          (long long)(bl->nwm > 0 ? bl->max_event_time[0] : 0));
  for (size_t j = 0; j < bl->b[0].len; j++) fprintf(stderr, "%02x", (unsigned)(uint8_t)bl->b[0].data[j]);
  fprintf(stderr, "\"\n");
}

static void check_v2(const char *sql, uint64_t seed, const v2_state *v2) {
  gen *g = malloc(sizeof *g);
  make_rows(g, seed, 4, 8);
  script *sc = calloc(1, sizeof *sc);
  sc->sql = sql;
  sc->tables[0] = "ev";
  sc->nbatches = 8;
  sc->clock = ttl_clock;
  for (int b = 0; b < 8; b++) sc->data[b][0] = g->batch[b];
  run a, c;
  bool ok = run_open(&a, sc);
  for (int b = 0; ok && b <= sc->nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
  if (ok && getenv("OVER_DUMP")) {
    blobs w, d;
    ok = run_open(&c, sc);
    for (int b = 0; ok && b <= 4; b++) {
      ok = run_batch(&c, b) == DIPPER_OK;
      if (b == 3) save_all_as(&c, &w, false);
      if (b == 4) save_all_as(&c, &d, true);
    }
    dump_blob("whole", &w);
    dump_blob("delta", &d);
    free_blobs(&w);
    free_blobs(&d);
    run_close(&c);
  }
  blobs w, d;
  memset(&w, 0, sizeof w);
  memset(&d, 0, sizeof d);
  w.n = d.n = 1;
  d.delta[0] = true;
  hex_into(&w.b[0], v2->whole);
  hex_into(&d.b[0], v2->delta);
  CHECK(w.b[0].len > 0 && w.b[0].data[0] == 2 && d.b[0].len > 0 && d.b[0].data[0] == 2);
  d.batch_wm = v2->batch_wm;
  d.next_wm = v2->next_wm;
  d.nwm = 1;
  d.max_event_time[0] = v2->max_event;
  if (ok && run_open(&c, sc)) {
    const blobs *seq[2] = {&w, &d};
    CHECK_EQ(restore_seq(&c, seq, 2), DIPPER_OK);
    for (int b = 5; b <= sc->nbatches && ok; b++) ok = run_batch(&c, b) == DIPPER_OK;
    CHECK_STR(dp_buf_cstr(&c.out), a.out.data + a.mark[5]);
    blobs now; /* what it saves now is of the new version */
    save_all(&c, &now);
    CHECK(now.n == 1 && now.b[0].data[0] == 4);
    free_blobs(&now);
    run_close(&c);
  }
  run_close(&a);
  free_blobs(&w);
  free_blobs(&d);
  free(sc);
  free_rows(g);
  free(g);
}

static const v2_state v2_rows = {
    "020100010404040100000000000000020000000300000008c0f9f88ee2f58606040400020202020102020401"
    "0202060104050405000000000200000001000000050000000600000004050100000001000000000000000200"
    "0000030000002505160d0a05102505c0de8a8ce2f58606c096b102bf843dff887ac0843d0408040803000000"
    "0400000008000000090000000a0000000b0000000c0000000d00000004080100000002000000000000000200"
    "000003000000030000000300000000000000a508fb091c11051c0307132508c082f38fe2f58606bf843d0080"
    "897ac0843d00bf843d8092f40100",
    "0201004301000400088087b090e2f58606040006060003010404020202060604030304040602040a040a0000"
    "000002000000030000000100000008000000050000000400000009000000060000000c000000040a01000000"
    "010000000100000000000000000000000200000002000000020000000300000003000000a50aef03160d111c"
    "110c06172211250ac0de8a8ce2f58606c096b102c08db701ff91f401c08db701bf96b102c096b10280897aff"
    "9aee02809bee02040704070a0000000b0000000d0000000e0000001000000011000000120000000407030000"
    "00030000000000000000000000020000000200000003000000250716031b241306132507c08bed90e2f58606"
    "00c08db70100c0843d80897abf8db70100",
    1704067215000000LL, 1704067216500000LL, 1704067218500000LL};
static const v2_state v2_range = {
    "0201000103040302000000000000000300000006c0f9f88ee2f5860602020000040402020a0a040504070407"
    "0200000001000000040000000800000003000000070000000600000004070000000000000000030000000300"
    "0000030000000300000003000000a5076f080f0c040708072507c0e7848de2f5860680897abf8db701c08db7"
    "01c0843d00c0843d0403040305000000090000000a0000000403000000000000000003000000250304031625"
    "0380feb58fe2f58606c08db701c0843d00",
    "02010043010004000680feb58fe2f58606010106060203040304030200000001000000050000000403000000"
    "0000000000000000002503080f0c2503c0e7848de2f5860680897ac08db70104050405090000000a0000000b"
    "0000000c0000000d00000004050000000003000000010000000000000002000000a505170016061b102505c0"
    "8bed90e2f58606c0843dc08db701bf843dbf96b10200",
    1704067214000000LL, 1704067215500000LL, 1704067217500000LL};
static const v2_state v2_ttl = {
    "020100010304030000000001000000020000000680e3c78ce2f5860604040001020202010202040104030403"
    "01000000040000000700000004030000000001000000020000002503080b14250380e3c78ce2f58606000002"
    "020101000003010a000a040a040a0000000003000000050000000600000008000000090000000a0000000b00"
    "00000d0000000e000000040a0300000001000000010000000200000002000000000000000100000002000000"
    "0100000001000000a50aaf03010e1302061c1b07200d250a80ecc18de2f58606bf843d00c0843d80897a00bf"
    "843dc08db701bf8db701ff887a010380d5f96780ba8b650100809bee02020201",
    "0201004301010401030000000880ecc18de2f5860603010808020102040404010302020601040304030e0000"
    "000600000000000000040301000000020000000300000025030a0f042503c0e7848de2f58606c0843d000002"
    "08000a00000204000a000002020001000409040908000000090000000a0000000b0000000d0000000f000000"
    "1000000011000000120000000409020000000000000001000000020000000100000000000000020000000100"
    "000003000000a509fa01001c1b0720211c0600250980f5bb8ee2f5860600bf843dc08db701bf8db701809bee"
    "02ff887aff887a8092f401010480f0e76a80f0e76a0400020103",
    1704067212000000LL, 1704067213500000LL, 1704067215500000LL};

TEST(version_2_states_still_restore) {
  check_v2(SLIDE_SQL("ROWS BETWEEN 4 PRECEDING AND CURRENT ROW"), 515, &v2_rows);
  check_v2(SLIDE_SQL("RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW"), 516, &v2_range);
  check_v2(TTL_SQL("SUM(v) OVER w, LAG(v) OVER w", ""), 517, &v2_ttl);
}

int main(void) { return RUN_TESTS(); }
