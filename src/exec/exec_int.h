/*
** exec_int.h — what the executor, the driver and the executor's own leaf and
** root operators share; private to src/exec/ and src/api/run.c.
**
** Owns the contracts between the driver (driver.c) and the operators it
** talks to directly: the inputs (scan, values), which the driver plans
** before each micro-batch and commits after it, and the sink at the root,
** which the driver commits.  Every other operator is reached only through
** dp_op_class (exec.h).
*/
#ifndef DP_EXEC_INT_H
#define DP_EXEC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "dipper.h"
#include "exec/exec.h"

/* ---- op_registry.c ---- */

/* The class that runs plan nodes of kind k, or NULL when the engine has none. */
const dp_op_class *dp_op_class_for(dp_plan_kind k);

/* ---- exec.c ---- */

/* Visit every operator of the tree below and including op, children first. */
void dp_op_walk(dp_op *op, void (*fn)(dp_op *op, void *user), void *user);

/* ---- inputs: op_scan.c, op_values.c ---- */

/* Fix the input of the coming micro-batch and read its first rows ahead, so
** that the driver knows whether the batch has data before running it.
** `max_rows` caps the batch (0: no cap).  `to_end` (batch mode) reads every
** row the source will ever give, planning again after each batch it reads.
** *has_data: rows are waiting; *exhausted: the input will never give more
** after this batch. */
int dp_scan_plan(dp_op *op, int64_t max_rows, bool to_end, bool *has_data, bool *exhausted);
/* The micro-batch was committed downstream: commit the source's offsets. */
int dp_scan_commit(dp_op *op);
/* Bad records the source skipped so far (policy `skip`). */
int64_t dp_scan_bad_records(const dp_op *op);

/* VALUES rows are a bounded input read once: in the first micro-batch. */
int dp_values_plan(dp_op *op, bool *has_data, bool *exhausted);

/* Checkpoints of the inputs (checkpoint.h): a scan passes its source's
** hooks through (connector.h); resumable when its source has all four.
** VALUES keeps whether its rows went out. */
bool dp_scan_resumable(const dp_op *op);
const char *dp_scan_connector(const dp_op *op);
/* The source's wait_fd (connector.h), or -1. */
int dp_scan_wait_fd(dp_op *op);
/* The source's `woken` and `outputs_pending` (connector.h). */
void dp_scan_set_woken(dp_op *op, bool woken);
void dp_scan_set_outputs_pending(dp_op *op, bool pending);
int dp_scan_save_plan(dp_op *op, dp_buf *out);
int dp_scan_save_position(dp_op *op, dp_buf *out);
int dp_scan_restore_position(dp_op *op, dp_rd *in);
int dp_scan_replay_plan(dp_op *op, dp_rd *in);
int dp_values_save_position(dp_op *op, dp_buf *out);
int dp_values_restore_position(dp_op *op, dp_rd *in);

/* ---- the root: op_sink.c ---- */

/* The sink operator over `input`, built for a plan root: a SINK node writes
** to its table's connector, any other root (a bare SELECT) to the console. */
int dp_sink_op_build(dp_exec *ex, const dp_plan *root, dp_op *input, dp_op **out);
/* Make the micro-batch's output visible (the sink's commit). */
int dp_sink_op_commit(dp_op *op, int64_t batch_id);
/* Let the sink's commit return before its writes are acknowledged, when
** it can settle them later (connector.h): true when it can. */
bool dp_sink_op_defer(dp_op *op);
/* The sink's settle (connector.h); *settled true when it does not defer. */
int dp_sink_op_settle(dp_op *op, int wait_ms, bool *settled);
/* Rows the sink was handed and did not write, since it opened (a batch it
** had written before a restart: connector.h). */
int64_t dp_sink_op_skipped(const dp_op *op);

/* ---- driver.c: one running query ---- */

typedef struct dp_driver dp_driver;

/* A query over `root` of `q`, named `name` in progress reports (copied).
** Errors (an operator or connector the engine lacks) go to the driver's own
** diagnostics, read with dp_driver_diags even when this fails: on failure
** *out is still set when a driver could be allocated, and the caller frees
** it with dp_driver_free. */
int dp_driver_new(dipper *db, const dp_query_plan *q, const dp_plan *root, const char *name,
                  dp_driver **out);
void dp_driver_free(dp_driver *dr);

/* Run the next micro-batch if one is due: new data, a watermark that moved
** under a stateful operator, or the last batch of a bounded run.  *ran tells
** whether a batch ran; *finished is set once the query has ended.  An error
** leaves the query failed: later calls return the same code. */
int dp_driver_step(dp_driver *dr, bool *ran, bool *finished);
void dp_driver_progress(const dp_driver *dr, dipper_progress *out);
const dp_diags *dp_driver_diags(const dp_driver *dr);
const dp_trigger *dp_driver_trigger(const dp_driver *dr);
/* The wait_fd of each of the query's inputs that has one, the first `cap`
** into fds; the count of them all (more than cap: ask again with room).
** *all: every input has one (fds may be NULL with cap 0 to ask only that,
** or how many).  A parallel query's inputs are its workers' and
** have none here. */
int dp_driver_wait_fds(dp_driver *dr, int *fds, int cap, bool *all);
/* Whether the next steps come when the inputs' wait_fds fire (a run loop)
** or by hand: every source's `woken` (connector.h). */
void dp_driver_set_woken(dp_driver *dr, bool woken);

/* Wall clock in µs since the epoch; a monotonic one for durations. */
int64_t dp_wall_micros(void);
int64_t dp_mono_micros(void);

#endif /* DP_EXEC_INT_H */
