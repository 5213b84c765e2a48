/*
** exec.h — the embedded engine: a micro-batch executor over the logical plan.
**
** A running query (dp_exec) pairs the immutable plan with a separate tree of
** operator states (dp_op), one per plan node, built by dp_exec_new.  The
** driver (driver.c) runs micro-batches:
**
**   1. each source plans the end offset of the batch (what is available now,
**      capped by its rate and the batch size limit);
**   2. the root operator is pulled with next() until it returns no batch —
**      the end of this micro-batch; stateful operators consume their input
**      to that point, then emit by output mode;
**   3. the sink commits the batch's output, the sources commit their offsets;
**   4. the watermark of each input = max event time seen − delay; the global
**      watermark (the minimum over inputs) takes effect from the next batch.
**
** A stateful operator uses two watermarks in a batch (Spark since 3.5,
** SPARK-40925): it drops input rows as late by `late_watermark`, the one the
** previous batch ran under, and emits and evicts state by `watermark`.  With
** one watermark for both, a window over the output of another window would
** drop as late the rows its input emitted in the same batch.
**
** When every source is bounded and exhausted, the driver runs one last batch
** with `final` set and the watermark at +infinity, so that append-mode
** windows still open are emitted — a bounded run gives the complete answer
** (Flink's end-of-input watermark; Spark's available-now trigger does not do
** this, and the Spark backend documents the difference).
**
** Operators are vectorized: they pass dp_batch (Arrow layout) and evaluate
** expressions a whole column at a time (eval.h).  One file per operator,
** op_<kind>.c, each exporting its dp_op_class.
**
** Memory: the query arena (ex->arena) lives as long as the query; the batch
** arena (ex->batch_arena) is reset after every micro-batch.  A batch returned
** by next() is borrowed by the caller until its next call of next() on that
** operator.  Operator state that outlives a micro-batch (hash tables) is
** malloc'd and freed by close().
*/
#ifndef DP_EXEC_H
#define DP_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/bytes.h"
#include "core/compiler.h"
#include "core/diag.h"
#include "core/vector.h"
#include "plan/plan.h"

typedef struct dp_exec dp_exec;
typedef struct dp_op dp_op;

#define DP_WATERMARK_NONE INT64_MIN /* no event seen yet */
#define DP_WATERMARK_END INT64_MAX  /* bounded input exhausted */

/* Counters of one operator, summed over the query's life; the driver reads
** them for progress lines. */
typedef struct dp_op_metrics {
  int64_t rows_in, rows_out;
  int64_t late_dropped; /* rows older than the watermark, dropped by a stateful operator */
  int64_t state_rows;   /* rows (groups, windows, keys) held now */
} dp_op_metrics;

typedef struct dp_op_class {
  const char *name;
  /* Build run-time state for op->plan (children are already open). */
  int (*open)(dp_op *op);
  /* Produce the next output batch of the current micro-batch into *out, or
  ** *out = NULL at its end.  The batch is borrowed until the next call. */
  int (*next)(dp_op *op, dp_batch **out);
  /* Called once after every micro-batch, children first (reset per-batch
  ** cursors, drop state).  ex->watermark is still the batch's own here: the
  ** watermark computed at its end takes effect from the next batch. May be NULL. */
  int (*end_batch)(dp_op *op);
  void (*close)(dp_op *op);
  /* Checkpoints (checkpoint.h): save_state appends the operator's whole
  ** state after end_batch to `out`; restore_state reads it back into an
  ** operator just opened for the same plan, before its first batch
  ** (DIPPER_CORRUPT with a diagnostic on bytes that do not read back whole).
  ** Both NULL on a stateless operator; a stateful operator without them
  ** cannot be checkpointed and the query is refused at start, naming it. */
  int (*save_state)(dp_op *op, dp_buf *out);
  int (*restore_state)(dp_op *op, dp_rd *in);
  /* Optional, with the two above: save_delta appends only what changed
  ** since the last save_state, save_delta, restore_state or restore_delta
  ** (rows added, changed and
  ** dropped), so that a checkpoint costs what the batches changed, not the
  ** whole state; restore_delta applies one such delta to the state restored
  ** so far (save_state's, then each delta after it, in order).  All four
  ** calls make the current state the base of the next delta.  NULL: every
  ** checkpoint holds the operator's whole state (fine for state that stays
  ** small: a LIMIT's counts). */
  int (*save_delta)(dp_op *op, dp_buf *out);
  int (*restore_delta)(dp_op *op, dp_rd *in);
  /* Optional: before restore_state, the n deltas that will follow it (read
  ** only, not yet checked), so that a large state is sized once, not grown
  ** part-way through the chain.  A hint: what it cannot read it passes over. */
  void (*restore_expect)(dp_op *op, const dp_rd *deltas, int n);
} dp_op_class;

struct dp_op {
  const dp_op_class *cls;
  const dp_plan *plan;  /* borrowed, immutable */
  dp_exec *ex;          /* the query it belongs to */
  int nchildren;
  dp_op **children;
  dp_op_metrics metrics;
  void *state;          /* the operator's own run-time state */
};

/* Trigger of the micro-batches (`dipper.trigger`). */
typedef enum dp_trigger_kind {
  DP_TRIGGER_DEFAULT,        /* as fast as possible: next batch when the last ends */
  DP_TRIGGER_PROCESSING_TIME,/* every `interval` µs */
  DP_TRIGGER_AVAILABLE_NOW,  /* everything available at start, in batches, then stop */
  DP_TRIGGER_ONCE,           /* everything available at start in one batch, then stop */
} dp_trigger_kind;

typedef struct dp_trigger {
  dp_trigger_kind kind;
  int64_t interval; /* µs, PROCESSING_TIME */
} dp_trigger;

struct dp_exec {
  dipper *db;                 /* the handle: registered callbacks, memory tables */
  const dp_query_plan *query; /* borrowed */
  const dp_plan *root;        /* the root this exec runs (a SINK or a query root) */
  dp_arena *arena;            /* query lifetime */
  dp_arena *batch_arena;      /* reset after every micro-batch */
  dp_diags *diags;            /* run-time errors (bad records, I/O) go here */
  dp_op *root_op;
  int64_t batch_id;           /* current micro-batch, from 0 */
  int64_t watermark;          /* global watermark in effect for this batch (µs) */
  int64_t late_watermark;     /* the watermark the previous batch ran under: stateful
                                 operators drop rows older than this one and evict state
                                 by `watermark`, so that rows an upstream operator emits
                                 in this batch (closed at `watermark`) are not late for
                                 the next operator — Spark's rule since 3.5 for chained
                                 stateful operators */
  int64_t *max_event_time;    /* per watermark id: max event time seen (µs), or
                                 DP_WATERMARK_NONE; the driver subtracts the delay */
  unsigned output_mode;       /* DP_MODE_*: the chosen output mode */
  bool final;                 /* the last batch of a bounded run */
  dp_trigger trigger;
  int64_t max_batch_rows;     /* cap per source per micro-batch (0: none):
                                 'dipper.max-batch-rows', or DEFAULT_MAX_BATCH_ROWS */
  const char *checkpoint;     /* the query's checkpoint folder, or NULL (checkpoint.h) */
  int64_t batch_start_time;   /* µs since the epoch when this micro-batch began: what
                                 CURRENT_TIMESTAMP and PROCTIME() read (eval.c) */
  struct dp_subq_cache *subqueries; /* results of the uncorrelated subqueries left in
                                 expressions, each run once per query run (subquery.c) */
  /* Parallel execution (parallel.h): this exec is worker `worker` of
  ** `nworkers`, running its split of every source, or (worker -1) the
  ** coordinator whose sink reads what the workers made; 0 of 1 alone. */
  struct dp_par *par;         /* NULL when the query runs on one thread */
  int worker, nworkers;
  /* The batch trace (batch_trace.h), on one thread only: µs spent reading
  ** the sources and in the sink's writes since the driver last reset them. */
  bool trace;
  int64_t trace_fetch_us, trace_produce_us;
};

/* Build the operator tree for `root` of `q`.  Returns DIPPER_OK and *out, or a
** code with a diagnostic (an operator the engine does not run). The caller
** frees it with dp_exec_free. */
int dp_exec_new(const dp_query_plan *q, const dp_plan *root, dp_diags *d, dp_exec **out);
void dp_exec_free(dp_exec *ex);
/* Like dp_exec_new, for a query of the handle `db` (NULL: none): operators
** reach its memory tables and callbacks, and the trigger is its session
** option `dipper.trigger`.  `checkpoint` is the query's checkpoint folder
** (borrowed while the query lives), or NULL. */
int dp_exec_open(dipper *db, const dp_query_plan *q, const dp_plan *root, dp_diags *d,
                 const char *checkpoint, dp_exec **out);

/* Like dp_exec_open, for one part of a query run on par's workers
** (parallel.h): worker >= 0 builds the root's input only (no sink) with
** every source split and an exchange before each stateful operator; worker
** -1 builds the coordinator, a sink over par's gather of the workers'
** output. */
int dp_exec_open_part(dipper *db, const dp_query_plan *q, const dp_plan *root, dp_diags *d,
                      const char *checkpoint, struct dp_par *par, int worker, dp_exec **out);

/* 'state.backend' = 'rocksdb' in the session of ex's handle (state_rocks.h);
** else the state stays in memory (Flink's 'hashmap'). */
bool dp_exec_state_rocks(const dp_exec *ex);
/* A note of the query to the handle's log (dipper_set_log): what it does
** differently from what the session asked, once. */
void dp_exec_note(dp_exec *ex, const char *fmt, ...) DP_PRINTF(2, 3);

/* Build and open the operator for one plan node (and its children). */
int dp_op_build(dp_exec *ex, const dp_plan *p, dp_op **out);

/* Pull a child until the end of the micro-batch, calling fn on each batch. */
int dp_op_drain(dp_op *child, int (*fn)(dp_op *self, const dp_batch *b), dp_op *self);

/* Report that `ts` (µs) was seen on the input governed by watermark `wm_id`. */
static inline void dp_exec_observe(dp_exec *ex, int wm_id, int64_t ts) {
  if (ts > ex->max_event_time[wm_id]) ex->max_event_time[wm_id] = ts;
}

/* The operator classes, one per plan node kind that the engine runs. */
extern const dp_op_class dp_op_scan, dp_op_values, dp_op_project, dp_op_filter,
    dp_op_watermark, dp_op_window, dp_op_aggregate, dp_op_union, dp_op_sink;

#endif /* DP_EXEC_H */
