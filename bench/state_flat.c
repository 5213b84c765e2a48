/*
** state_flat.c — the per-batch cost of a stateful operator against the size
** of its state (issue 15: "a per-batch cost proportional to the whole state
** is a bug").  For each case and each state size S (10k, 100k, 1M, 10M by
** default) the operators are filled with S groups, keys or rows, then run
** MEASURED micro-batches that each change a fixed amount (1,000 groups or
** keys) and, where the case has a watermark, close or forget as much as they
** add, so the state stays at S.  Each measured batch's thread CPU time is
** printed as median / mean / max in µs: flat across S is the goal.
**
**   build/bench/bench_state_flat [CASE|all] [MAX_STATE] [MEASURED]
**   scripts/state_flat_ab.sh  — this bench's old and new binaries, alternating
**
** Cases (the operators run straight under this driver, as the micro-batch
** driver runs them: next until NULL, then end_batch, children first):
**   group    SELECT k, count(*), sum(v) GROUP BY k, update mode; a batch is
**            10,000 rows over 1,000 keys spread across the state
**   window   TUMBLE 1 s windows, 1,000 keys each, S/1,000 windows open,
**            append mode; a batch opens a window (1,000 groups) and the
**            watermark closes the oldest (1,000 groups emitted, dropped)
**   dedup    ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) = 1 (keep
**            last, update mode); a batch is 10,000 newer rows over 1,000 keys
**   distinct SELECT DISTINCT k, ts with ts an event-time attribute; a batch
**            adds 1,000 rows and the watermark forgets the 1,000 oldest
**   dedupfirst  ROW_NUMBER() .. ORDER BY ts ASC = 1 on an event-time ts
**            (Spark's dropDuplicates with a watermark), likewise
**   sort     SELECT k, v, ts ORDER BY ts (rows wait for the watermark); a
**            batch adds 1,000 rows and the watermark releases the 1,000 oldest
**   groupttl `group` under 'table.exec.state.ttl' = '1 h' (nothing expires:
**            the clock stands still)
**   topn     ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) <= 3 (the
**            updating Top-N): S partitions of one row each; a batch is
**            1,000 rows over 1,000 of them, each a new best
**   topnwindow  the same per TUMBLE 1 s window (PARTITION BY window_start,
**            window_end, k), S rows waiting in S/1,000 windows; a batch
**            adds a window of 1,000 rows and the watermark closes the oldest
**   temporal the event-time temporal join of two streams, o JOIN r FOR
**            SYSTEM_TIME AS OF o.ts ON o.k = r.k: S versions of 1,000 keys
**            held; a batch brings a new version of each key and 1,000 orders
**            at its time, which the watermark releases
** The Top-N, temporal, sort, groupttl and TTL cases also save the operator's state after the fill (whole) and
** a delta after every measured batch (save_delta, not in the time), and
** print both sizes: the bytes a checkpoint writes per batch.
**   overrun  SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED
**            PRECEDING AND CURRENT ROW) on the stream: S rows of history
**            over 1,000 partitions; a batch brings 1,000 rows (one per
**            partition) and the watermark releases them
**   overlag  LAG(v) OVER (PARTITION BY k ORDER BY ts), likewise
**   overrows SUM(v) OVER (.. ROWS BETWEEN 10 PRECEDING AND CURRENT ROW): S/10
**            partitions of 10 kept rows; a batch brings 1,000 rows to 1,000
**            partitions spread across them
**   overpending  the running SUM with S rows waiting for the watermark (far
**            ahead of it); a batch brings 1,000 rows that it releases
**   topnttl  `topn` under 'table.exec.state.ttl' = '1 h' with the clock
**            moving (see ttl_clock): S partitions of one row; a batch
**            expires the 1,000 idlest partitions and brings 1,000 new ones
**   distinctttl  SELECT DISTINCT k, v (no event time) under the TTL, likewise
**   dedupttl ROW_NUMBER() .. ORDER BY ts DESC = 1 under the TTL, likewise
**   dedupfirstttl  .. ORDER BY ts ASC = 1 under the TTL, likewise
**   overrows1000  SUM, MIN, MAX OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN
**            1000 PRECEDING AND CURRENT ROW): S rows over 1,000 partitions, so
**            a frame holds min(S/1,000, 1,000) rows; a batch as overrun's
**   overrange1h  the same calls over RANGE BETWEEN INTERVAL '1' HOUR PRECEDING
**            AND CURRENT ROW (the fill's rows are µs apart: the frame is the
**            whole partition, S/1,000 rows)
** Filling is done in batches of up to 1 M rows without a watermark (the
** TTL cases: 1,000 rows a batch, the clock moving) and is not measured.  The machine is shared: read the medians.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "api/dipper_int.h"
#include "core/buf.h"
#include "exec/exec.h"
#include "exec/exec_int.h"

#define FILL_ROWS (1 << 20)
#define SEC 1000000LL
#define BASE (1700000000LL * SEC)

static double cpu_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The leaf: hands out one prepared batch per micro-batch. */
typedef struct feed {
  dp_batch *batch;
  bool given;
} feed;
static int feed_open(dp_op *op) {
  (void)op;
  return DIPPER_OK;
}
static int feed_next(dp_op *op, dp_batch **out) {
  feed *f = op->state;
  *out = f->given || f->batch->nrows == 0 ? NULL : f->batch;
  f->given = true;
  return DIPPER_OK;
}
static const dp_op_class feed_class = {"Feed", feed_open, feed_next, NULL, NULL};

typedef struct cse {
  const char *name, *select;
  dp_plan_kind kind; /* the stateful operator */
  unsigned mode;
  const char *ddl;   /* NULL: the one table t */
  const char *pre;   /* statements before the tables, or NULL */
  bool ckpt;         /* print the checkpoint bytes (Top-N and joins always) */
  bool clocked;      /* the TTL cases: the clock moves, keys expire (ttl_*) */
} cse;

/* The deduplications under a TTL read a table without a watermark: on an
** event-time column the watermark bounds their state and the analysis sets
** no TTL (plan/analyze_ttl.c). */
#define TTL_DDL "CREATE TABLE t (k BIGINT, v BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'memory');\n"

static const cse cases[] = {
    {"group", "SELECT k, count(*) AS c, sum(v) AS s FROM t GROUP BY k", DP_P_AGGREGATE,
     DP_MODE_UPDATE},
    {"window",
     "SELECT k, window_start, window_end, count(*) AS c FROM TABLE(TUMBLE(TABLE t, "
     "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end",
     DP_P_AGGREGATE, DP_MODE_APPEND},
    {"dedup",
     "SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn "
     "FROM t) WHERE rn = 1",
     DP_P_DEDUPLICATE, DP_MODE_UPDATE},
    {"distinct", "SELECT DISTINCT k, ts FROM t", DP_P_DISTINCT, DP_MODE_APPEND},
    {"dedupfirst",
     "SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn "
     "FROM t) WHERE rn = 1",
     DP_P_DEDUPLICATE, DP_MODE_APPEND},
    {"topn",
     "SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn "
     "FROM t) WHERE rn <= 3",
     DP_P_TOPN, DP_MODE_UPDATE},
    {"topnwindow",
     "SELECT k, v, window_end FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, "
     "window_end, k ORDER BY v DESC) AS rn FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
     "INTERVAL '1' SECOND))) WHERE rn <= 3",
     DP_P_TOPN, DP_MODE_APPEND},
    {"temporal",
     "SELECT o.k, o.v, r.v AS rv FROM t o JOIN r FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k",
     DP_P_JOIN, DP_MODE_APPEND,
     "CREATE TABLE t (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
     "WITH ('connector' = 'memory');\n"
     "CREATE TABLE r (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts, "
     "PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'memory');\n"},
    {"overrun",
     "SELECT k, ts, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING "
     "AND CURRENT ROW) AS s FROM t",
     DP_P_OVER, DP_MODE_APPEND},
    {"overlag", "SELECT k, ts, LAG(v) OVER (PARTITION BY k ORDER BY ts) AS p FROM t", DP_P_OVER,
     DP_MODE_APPEND},
    {"overrows",
     "SELECT k, ts, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 10 PRECEDING AND "
     "CURRENT ROW) AS s FROM t",
     DP_P_OVER, DP_MODE_APPEND},
    {"overpending",
     "SELECT k, ts, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING "
     "AND CURRENT ROW) AS s FROM t",
     DP_P_OVER, DP_MODE_APPEND},
    {"sort", "SELECT k, v, ts FROM t ORDER BY ts", DP_P_SORT, DP_MODE_APPEND, .ckpt = true},
    {"groupttl", "SELECT k, count(*) AS c, sum(v) AS s FROM t GROUP BY k", DP_P_AGGREGATE,
     DP_MODE_UPDATE, .pre = "SET 'table.exec.state.ttl' = '1 h';\n", .ckpt = true},
    {"topnttl",
     "SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn "
     "FROM t) WHERE rn <= 3",
     DP_P_TOPN, DP_MODE_UPDATE, .pre = "SET 'table.exec.state.ttl' = '1 h';\n", .clocked = true},
    {"distinctttl", "SELECT DISTINCT k, v FROM t", DP_P_DISTINCT, DP_MODE_APPEND,
     .pre = "SET 'table.exec.state.ttl' = '1 h';\n", .ckpt = true, .clocked = true},
    {"dedupttl",
     "SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn "
     "FROM t) WHERE rn = 1",
     DP_P_DEDUPLICATE, DP_MODE_UPDATE, .ddl = TTL_DDL, .pre = "SET 'table.exec.state.ttl' = '1 h';\n",
     .ckpt = true, .clocked = true},
    {"dedupfirstttl",
     "SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn "
     "FROM t) WHERE rn = 1",
     DP_P_DEDUPLICATE, DP_MODE_APPEND, .ddl = TTL_DDL, .pre = "SET 'table.exec.state.ttl' = '1 h';\n",
     .ckpt = true, .clocked = true},
    /* op_over's sliding frames (overframes) */
    {"overrows1000",
     "SELECT k, ts, SUM(v) OVER w AS s, MIN(v) OVER w AS lo, MAX(v) OVER w AS hi FROM t "
     "WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 1000 PRECEDING AND CURRENT ROW)",
     DP_P_OVER, DP_MODE_APPEND},
    {"overrange1h",
     "SELECT k, ts, SUM(v) OVER w AS s, MIN(v) OVER w AS lo, MAX(v) OVER w AS hi FROM t "
     "WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND "
     "CURRENT ROW)",
     DP_P_OVER, DP_MODE_APPEND},
};

/* ---- the TTL cases with a moving clock (topnttl, distinctttl, dedupttl,
** dedupfirstttl) ----
** Under 'table.exec.state.ttl' = '1 h': the fill writes 1,000 new keys per
** batch, its S/1,000 batches spread evenly over the hour of processing
** time, and measured batch b runs one step later than the one before, so
** that it expires the 1,000 keys of fill batch b and brings 1,000 new ones:
** the state stays at S and every measured batch expires keys. */
#define TTL_FILL 1000
static int64_t ttl_step(int64_t S) {
  int64_t nfill = S / TTL_FILL > 0 ? S / TTL_FILL : 1;
  return 3600 * SEC / nfill;
}
/* The clock of fill batch i (counted from 0), or of measured batch b at i = S/1,000 + b. */
static int64_t ttl_clock(int64_t S, int64_t i) { return BASE + i * ttl_step(S); }

/* The run: the operator tree over the feed, post-order for end_batch. */
typedef struct run {
  dp_exec ex;
  feed f, f2; /* the first leaf's and the second's (temporal: the versions) */
  int nfeeds;
  dp_op *ops[16];
  int nops;
  dp_op *root;
  int64_t emitted;
} run;

static dp_op *build(run *r, const dp_plan *p) {
  dp_op *op = calloc(1, sizeof *op);
  if (!op || r->nops == 16) return NULL;
  op->ex = &r->ex;
  op->plan = p;
  if (p->kind == DP_P_WATERMARK || p->kind == DP_P_SCAN) {
    feed *f = r->nfeeds++ == 0 ? &r->f : &r->f2;
    op->cls = &feed_class;
    op->state = f;
    f->batch = dp_batch_new(&p->schema, FILL_ROWS);
  } else {
    op->cls = dp_op_class_for(p->kind);
    op->nchildren = p->ninputs;
    op->children = calloc((size_t)p->ninputs, sizeof *op->children);
    for (int i = 0; i < p->ninputs; i++)
      if (!op->children || !(op->children[i] = build(r, p->inputs[i]))) return NULL;
    if (!op->cls || op->cls->open(op) != DIPPER_OK) return NULL;
  }
  r->ops[r->nops++] = op;
  return op;
}

/* One micro-batch of the rows in the feed under watermark wm. */
static int batch(run *r, int64_t wm) {
  r->ex.late_watermark = r->ex.watermark;
  r->ex.watermark = wm;
  r->f.given = r->f2.given = false;
  for (;;) {
    dp_batch *out = NULL;
    int rc = r->root->cls->next(r->root, &out);
    if (rc) return rc;
    if (!out) break;
    r->emitted += out->nrows;
  }
  for (int i = 0; i < r->nops; i++)
    if (r->ops[i]->cls->end_batch && r->ops[i]->cls->end_batch(r->ops[i]) != DIPPER_OK) return 1;
  r->ex.batch_id++;
  return DIPPER_OK;
}

/* Feed columns: k BIGINT, v BIGINT, ts TIMESTAMP(3) (µs). */
static void put_in(dp_batch *b, int64_t i, int64_t k, int64_t v, int64_t ts) {
  ((int64_t *)b->cols[0]->values)[i] = k;
  ((int64_t *)b->cols[1]->values)[i] = v;
  ((int64_t *)b->cols[2]->values)[i] = ts;
}
static void put(run *r, int64_t i, int64_t k, int64_t v, int64_t ts) { put_in(r->f.batch, i, k, v, ts); }
static void set_rows_in(dp_batch *b, int64_t n) {
  for (int c = 0; b && c < b->ncols; c++) b->cols[c]->length = n;
  if (b) b->nrows = n;
}
static void set_rows(run *r, int64_t n) {
  set_rows_in(r->f.batch, n);
  set_rows_in(r->f2.batch, 0);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* The state's first S entries: row i of the fill. */
static void fill_row(const cse *c, run *r, int64_t at, int64_t i, int64_t S) {
  if (!strcmp(c->name, "temporal")) put_in(r->f2.batch, at, i % 1000, i, BASE + i);
  else if (!strcmp(c->name, "overrows")) put(r, at, i % (S / 10 > 0 ? S / 10 : 1), 1, BASE + i);
  else if (!strcmp(c->name, "overpending")) put(r, at, i % 1000, 1, BASE + 1000 * SEC + i);
  else if (!strncmp(c->name, "over", 4)) put(r, at, i % 1000, 1, BASE + i);
  else if (!strcmp(c->name, "window") || !strcmp(c->name, "topnwindow"))
    put(r, at, i % 1000, 1, BASE + (i / 1000) * SEC + i % 1000);
  else put(r, at, i, 1, BASE + i);
}

/* The watermark of the fill's batch that ends at row `done`: the OVER
** cases release their history as it comes (overpending: nothing). */
static int64_t fill_wm(const cse *c, int64_t done) {
  if (!strcmp(c->name, "overpending")) return BASE;
  if (!strncmp(c->name, "over", 4)) return BASE + done - 1;
  return DP_WATERMARK_NONE;
}

/* Measured batch b over a state of S: its rows, and the watermark it runs
** under (DP_WATERMARK_NONE for the cases without one). */
static int64_t ttl_measured(run *r, int64_t S, int64_t b);

static int64_t measured(const cse *c, run *r, int64_t S, int64_t b) {
  int64_t spread = S / 1000 > 0 ? S / 1000 : 1;
  if (c->clocked) return ttl_measured(r, S, b);
  if (!strcmp(c->name, "overpending")) {
    for (int64_t j = 0; j < 1000; j++) put(r, j, j, 1, BASE + b * 1000 + j + 1);
    set_rows(r, 1000);
    return BASE + (b + 1) * 1000; /* this batch's rows, not the S far ahead */
  }
  if (!strncmp(c->name, "over", 4)) {
    int64_t parts = !strcmp(c->name, "overrows") ? (S / 10 > 0 ? S / 10 : 1) : 1000;
    int64_t step = parts / 1000 > 0 ? parts / 1000 : 1;
    for (int64_t j = 0; j < 1000; j++) put(r, j, (j * step) % parts, 1, BASE + S + b * 1000 + j);
    set_rows(r, 1000);
    return BASE + S + b * 1000 + 999; /* every row of the batch released */
  }
  if (!strcmp(c->name, "group") || !strcmp(c->name, "groupttl") || !strcmp(c->name, "dedup")) {
    for (int64_t j = 0; j < 10000; j++)
      put(r, j, (int64_t)(next_rand() % 1000) * spread, 1, BASE + S + b * 10000 + j);
    set_rows(r, 10000);
    return DP_WATERMARK_NONE;
  }
  if (!strcmp(c->name, "temporal")) {
    for (int64_t j = 0; j < 1000; j++) {
      int64_t t = BASE + S + b * 1000 + j;
      put_in(r->f2.batch, j, j, S + b * 1000 + j, t);
      put(r, j, j, j, t);
    }
    set_rows_in(r->f.batch, 1000);
    set_rows_in(r->f2.batch, 1000);
    return BASE + S + b * 1000 + 999; /* the batch's orders are released */
  }
  if (!strcmp(c->name, "topn")) {
    for (int64_t j = 0; j < 1000; j++)
      put(r, j, (int64_t)(next_rand() % 1000) * spread, 2 + b * 1000 + j, BASE + S + b * 1000 + j);
    set_rows(r, 1000);
    return DP_WATERMARK_NONE;
  }
  if (!strcmp(c->name, "window") || !strcmp(c->name, "topnwindow")) {
    for (int64_t j = 0; j < 1000; j++) put(r, j, j, 1, BASE + (spread + b) * SEC + j);
    set_rows(r, 1000);
    return BASE + (b + 1) * SEC; /* window b's end: it closes */
  }
  for (int64_t j = 0; j < 1000; j++) put(r, j, S + b * 1000 + j, 1, BASE + S + b * 1000 + j);
  set_rows(r, 1000);
  return BASE + (b + 1) * 1000 - 1; /* the 1,000 oldest rows are at or before it */
}

/* A TTL case's measured batch b: 1,000 keys never seen, at the next step. */
static int64_t ttl_measured(run *r, int64_t S, int64_t b) {
  for (int64_t j = 0; j < TTL_FILL; j++) put(r, j, S + b * TTL_FILL + j, 1, BASE + S + b * TTL_FILL + j);
  set_rows(r, TTL_FILL);
  r->ex.batch_start_time = ttl_clock(S, S / TTL_FILL + b);
  return DP_WATERMARK_NONE;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int run_case(const cse *c, int64_t S, int measured_n) {
  char sql[1024];
  snprintf(sql, sizeof sql, "%s%s%s;\n", c->pre ? c->pre : "",
           c->ddl ? c->ddl
                  : "CREATE TABLE t (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
                    "WITH ('connector' = 'memory');\n",
           c->select);
  dipper *db = NULL;
  dipper_program *prog = NULL;
  if (dipper_open(&db, NULL) != DIPPER_OK ||
      dipper_compile(db, sql, strlen(sql), "state_flat.sql", &prog) != DIPPER_OK) {
    fprintf(stderr, "state_flat: %s\n", db ? dipper_errmsg(db) : "cannot open");
    return 1;
  }
  const dp_query_plan *q = &prog->stmts[prog->n - 1].plan;
  dp_arena *diag_arena = dp_arena_new(0);
  dp_diags diags;
  dp_diags_init(&diags, diag_arena, "state_flat", NULL, 0);
  int64_t max_event[4] = {DP_WATERMARK_NONE, DP_WATERMARK_NONE, DP_WATERMARK_NONE,
                          DP_WATERMARK_NONE};
  run *r = calloc(1, sizeof *r);
  if (!r) return 1;
  r->ex.query = q;
  r->ex.root = q->roots[0];
  r->ex.arena = dp_arena_new(0);
  r->ex.batch_arena = dp_arena_new(0);
  r->ex.diags = &diags;
  r->ex.watermark = DP_WATERMARK_NONE;
  r->ex.max_event_time = max_event;
  r->ex.output_mode = c->mode;
  r->ex.batch_start_time = BASE;
  const dp_plan *top = q->roots[0];
  while (top->kind != c->kind && top->ninputs > 0) top = top->inputs[0];
  if (top->kind != c->kind || !(r->root = build(r, top))) {
    fprintf(stderr, "state_flat: %s: no %s operator to run (%s)\n", c->name,
            c->kind == DP_P_AGGREGATE ? "Aggregate" : "stateful",
            diags.count ? diags.items[0].message : "plan");
    return 1;
  }
  int rc = DIPPER_OK;
  for (int64_t done = 0; done < S && !rc;) {
    int64_t per = c->clocked ? TTL_FILL : FILL_ROWS;
    int64_t n = S - done < per ? S - done : per;
    if (c->clocked) r->ex.batch_start_time = ttl_clock(S, done / TTL_FILL);
    dp_batch *fb = !strcmp(c->name, "temporal") ? r->f2.batch : r->f.batch;
    for (int ci = 0; ci < fb->ncols; ci++) dp_vector_reserve(fb->cols[ci], n);
    for (int64_t j = 0; j < n; j++) fill_row(c, r, j, done + j, S);
    set_rows_in(r->f.batch, fb == r->f.batch ? n : 0);
    set_rows_in(r->f2.batch, fb == r->f2.batch ? n : 0);
    rc = batch(r, fill_wm(c, done + n));
    done += n;
  }
  int64_t state0 = r->root->metrics.state_rows, filled_out = r->emitted;
  double *t = calloc((size_t)measured_n, sizeof *t), sum = 0;
  double *dbytes = calloc((size_t)measured_n, sizeof *dbytes);
  bool ckpt = (c->ckpt || c->kind == DP_P_TOPN || c->kind == DP_P_JOIN) && r->root->cls->save_delta;
  size_t whole = 0;
  if (ckpt && !rc) {
    dp_buf w = DP_BUF_INIT;
    rc = r->root->cls->save_state(r->root, &w);
    whole = w.len;
    dp_buf_free(&w);
  }
  for (int b = 0; b < measured_n && !rc && t && dbytes; b++) {
    int64_t wm = measured(c, r, S, b);
    double t0 = cpu_sec();
    rc = batch(r, wm);
    t[b] = (cpu_sec() - t0) * 1e6;
    sum += t[b];
    if (ckpt && !rc) {
      dp_buf d = DP_BUF_INIT;
      rc = r->root->cls->save_delta(r->root, &d);
      dbytes[b] = (double)d.len;
      dp_buf_free(&d);
    }
  }
  if (rc || !t) {
    fprintf(stderr, "state_flat: %s: %s\n", c->name,
            diags.count ? diags.items[0].message : "failed");
    return 1;
  }
  int64_t emitted = r->emitted, state_after = r->root->metrics.state_rows;
  qsort(t, (size_t)measured_n, sizeof *t, cmp_d);
  qsort(dbytes, (size_t)measured_n, sizeof *dbytes, cmp_d);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("%-10s state %9lld (after: %9lld)  per batch CPU us: median %9.0f  mean %9.0f  max %9.0f"
         "  rows out %lld  peak RSS %ld MB\n",
         c->name, (long long)state0, (long long)state_after, t[measured_n / 2],
         sum / measured_n, t[measured_n - 1], (long long)(emitted - filled_out),
         ru.ru_maxrss / 1024);
  if (ckpt)
    printf("%-10s state %9lld  checkpoint bytes: whole %zu, delta per batch median %.0f max %.0f\n",
           c->name, (long long)state0, whole, dbytes[measured_n / 2], dbytes[measured_n - 1]);
  fflush(stdout);
  free(t);
  free(dbytes);
  for (int i = r->nops - 1; i >= 0; i--) {
    dp_op *op = r->ops[i];
    if (op->cls->close) op->cls->close(op);
    free(op->children);
    free(op);
  }
  dp_batch_free(r->f.batch);
  dp_batch_free(r->f2.batch);
  dp_arena_free(r->ex.arena);
  dp_arena_free(r->ex.batch_arena);
  free(r);
  dp_arena_free(diag_arena);
  dipper_program_free(prog);
  dipper_close(db);
  return 0;
}

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "all";
  long long max_state = argc > 2 ? atoll(argv[2]) : 10000000;
  int measured_n = argc > 3 ? atoi(argv[3]) : 21;
  if (measured_n < 1) measured_n = 1;
  int rc = 0, found = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    if (strcmp(which, "all") && strcmp(which, cases[i].name)) continue;
    found++;
    for (int64_t S = 10000; S <= max_state && !rc; S *= 10) rc = run_case(&cases[i], S, measured_n);
  }
  if (!found) fprintf(stderr, "state_flat: no case %s (group, window, dedup, distinct, dedupfirst, sort, groupttl, topn, topnwindow, temporal, overrun, overlag, overrows, overpending, topnttl, distinctttl, dedupttl, dedupfirstttl, all)\n", which);
  return rc || !found;
}
