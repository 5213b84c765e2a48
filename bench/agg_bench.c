/*
** agg_bench.c — the core of Nexmark q5: bids counted per auction in HOP
** windows of 10 s sliding every 2 s, in append mode under an advancing
** watermark, through the WINDOW and AGGREGATE operators on one core.
**
**   scripts/bench            or      build/bench/bench_agg_bench [MILLIONS_OF_EVENTS]
**
** The bids are synthetic and already in memory (columnar batches of 2^20
** rows, the driver's default batch cap), so the figure is the operators'
** own cost: window assignment (5 rows out per row in), hashing the group
** keys, the count, emission and eviction of closed windows.  Event time
** advances 100 µs per bid (10,000 bids per second of event time, so a window
** sees 100,000 bids); auctions are drawn from the 1,000 newest, a quarter of
** the bids going to the 10 hottest (Nexmark's skew, simplified).  The
** watermark trails the newest bid by 1 s, moved after each batch as the
** driver does.
**
** Prints events per second per core (thread CPU time), windows emitted, and
** peak RSS.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "api/dipper_int.h"
#include "exec/exec.h"

#define BATCH_ROWS (1 << 20)

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
  *out = f->given ? NULL : f->batch;
  f->given = true;
  return DIPPER_OK;
}
static const dp_op_class feed_class = {"Feed", feed_open, feed_next, NULL, NULL};

static const dp_plan *find_kind(const dp_plan *p, dp_plan_kind k) {
  if (p->kind == k) return p;
  for (int i = 0; i < p->ninputs; i++) {
    const dp_plan *q = find_kind(p->inputs[i], k);
    if (q) return q;
  }
  return NULL;
}

/* CPU time of this thread: the figure is per core, and a loaded machine
** (other builds) should not count against it; wall time is printed too. */
static double cpu_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static double wall_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t next_rand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

int main(int argc, char **argv) {
  long millions = argc > 1 ? atol(argv[1]) : 20;
  if (millions < 1) millions = 1;
  int64_t total = (int64_t)millions * 1000000;
  static const char sql[] =
      "CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), "
      "WATERMARK FOR dateTime AS dateTime - INTERVAL '1' SECOND) WITH ('connector' = 'memory');\n"
      "SELECT auction, window_start, window_end, count(*) AS num FROM TABLE(HOP(TABLE bid, "
      "DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) "
      "GROUP BY auction, window_start, window_end;\n";
  dipper *db = NULL;
  dipper_program *prog = NULL;
  if (dipper_open(&db, NULL) != DIPPER_OK ||
      dipper_compile(db, sql, sizeof sql - 1, "q5.sql", &prog) != DIPPER_OK) {
    fprintf(stderr, "agg_bench: %s\n", db ? dipper_errmsg(db) : "cannot open");
    return 1;
  }
  const dp_query_plan *q = &prog->stmts[prog->n - 1].plan;
  const dp_plan *agg_plan = find_kind(q->roots[0], DP_P_AGGREGATE);
  const dp_plan *win_plan = find_kind(q->roots[0], DP_P_WINDOW);
  const dp_plan *wm_plan = find_kind(q->roots[0], DP_P_WATERMARK);

  dp_arena *diag_arena = dp_arena_new(0);
  dp_diags diags;
  dp_diags_init(&diags, diag_arena, "q5", NULL, 0);
  int64_t max_event[1] = {DP_WATERMARK_NONE};
  dp_exec ex = {0};
  ex.query = q;
  ex.root = q->roots[0];
  ex.arena = dp_arena_new(0);
  ex.batch_arena = dp_arena_new(0);
  ex.diags = &diags;
  ex.watermark = DP_WATERMARK_NONE;
  ex.max_event_time = max_event;
  ex.output_mode = DP_MODE_APPEND;

  feed f = {dp_batch_new(&wm_plan->schema, BATCH_ROWS), true};
  dp_op feed_op = {.cls = &feed_class, .ex = &ex, .state = &f};
  dp_op *win_children[1] = {&feed_op};
  dp_op win = {.cls = &dp_op_window, .plan = win_plan, .ex = &ex, .nchildren = 1, .children = win_children};
  dp_op *agg_children[1] = {&win};
  dp_op agg = {.cls = &dp_op_aggregate, .plan = agg_plan, .ex = &ex, .nchildren = 1, .children = agg_children};
  if (win.cls->open(&win) != DIPPER_OK || agg.cls->open(&agg) != DIPPER_OK) {
    fprintf(stderr, "agg_bench: cannot open the operators: %s\n",
            diags.count ? diags.items[0].message : "?");
    return 1;
  }

  int64_t ts = 1700000000LL * 1000000, emitted = 0, done = 0;
  int64_t newest_auction = 1000;
  double busy = 0, wall = 0;
  while (done < total) {
    int64_t n = total - done < BATCH_ROWS ? total - done : BATCH_ROWS;
    dp_batch_clear(f.batch);
    for (int c = 0; c < f.batch->ncols; c++) dp_vector_reserve(f.batch->cols[c], n);
    int64_t *auction = f.batch->cols[0]->values, *bidder = f.batch->cols[1]->values,
            *price = f.batch->cols[2]->values, *when = f.batch->cols[3]->values;
    for (int64_t i = 0; i < n; i++) {
      uint64_t r = next_rand();
      if (i % 50 == 0) newest_auction++; /* new auctions keep opening */
      auction[i] = (r & 3) == 0 ? newest_auction - (int64_t)((r >> 2) % 10)
                                : newest_auction - (int64_t)((r >> 8) % 1000);
      bidder[i] = (int64_t)((r >> 20) % 100000);
      price[i] = (int64_t)((r >> 40) % 10000);
      ts += 100;
      when[i] = ts;
    }
    for (int c = 0; c < f.batch->ncols; c++) f.batch->cols[c]->length = n;
    f.batch->nrows = n;
    f.given = false;

    double t0 = cpu_sec(), w0 = wall_sec();
    dp_batch *out = NULL;
    if (agg.cls->next(&agg, &out) != DIPPER_OK) {
      fprintf(stderr, "agg_bench: %s\n", diags.count ? diags.items[0].message : "failed");
      return 1;
    }
    if (out) emitted += out->nrows;
    agg.cls->next(&agg, &out);
    agg.cls->end_batch(&agg);
    busy += cpu_sec() - t0;
    wall += wall_sec() - w0;
    ex.watermark = ts - 1000000; /* the driver's rule: max event time − delay */
    ex.batch_id++;
    done += n;
  }
  /* The final flush of a bounded run. */
  double t0 = cpu_sec(), w0 = wall_sec();
  ex.final = true;
  ex.watermark = DP_WATERMARK_END;
  f.batch->nrows = 0;
  f.given = false;
  dp_batch *out = NULL;
  agg.cls->next(&agg, &out);
  if (out) emitted += out->nrows;
  busy += cpu_sec() - t0;
  wall += wall_sec() - w0;

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("q5 core (HOP 10 s / 2 s, count per auction, append): %lld events in %.3f s CPU "
         "(%.3f s wall): %.2f M events/s/core; %lld window rows emitted; late rows %lld; "
         "peak RSS %ld MB\n",
         (long long)total, busy, wall, (double)total / busy / 1e6, (long long)emitted,
         (long long)agg.metrics.late_dropped, ru.ru_maxrss / 1024);

  agg.cls->close(&agg);
  win.cls->close(&win);
  dp_batch_free(f.batch);
  dp_arena_free(ex.arena);
  dp_arena_free(ex.batch_arena);
  dp_arena_free(diag_arena);
  dipper_program_free(prog);
  dipper_close(db);
  return 0;
}
