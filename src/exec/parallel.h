/*
** parallel.h — one query on N worker threads (docs/architecture.md,
** "Parallel execution").
**
** Owns: the workers — one dp_exec each, with its own arenas, diagnostics,
** operator tree and operator state — their threads, the split of every
** source among them, the hash exchange before each stateful operator, and
** the gather that hands the workers' output to the query's one sink in
** worker order.  Does not own the micro-batch loop: the driver (driver.c)
** plans, commits and computes the watermark for all workers at once, and a
** micro-batch is the barrier every worker reaches before the next begins.
**
** The split of a batch: worker w reads the w-th share of every source's
** planned rows (connector.h's split hook), in the order one reader reads
** them, so that the workers' output, gathered in worker order, is the
** output of one thread for a pipeline of stateless operators, row for row.
** Before a stateful operator (aggregation, DISTINCT, deduplication, Top-N)
** each worker sends each row to the worker that owns its key (a hash of the
** operator's key columns), and receives from worker 0 first, then 1, ...:
** each key lives on one worker and sees its rows in the one-thread order.
**
** Threads: worker 0 runs on the caller's thread, workers 1..N-1 on threads
** of their own that wait between batches.  What they share is read only
** while they run (the plan, the session's options, the coordinator's batch
** fields, copied into each worker first); each exchange's slots are written
** by their sender only and read by their receiver only after the barrier
** that ends the sending.
*/
#ifndef DP_PARALLEL_H
#define DP_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "connectors/connector.h"
#include "exec/exec.h"

typedef struct dp_par dp_par;

/* More workers than this are refused by the option's reader (driver.c). */
#define DP_PAR_MAX_WORKERS 256

/* NULL when the plan under `root` can run on workers; else why it runs on
** one thread (a static string naming what is missing). */
const char *dp_par_refusal(const dp_query_plan *q, const dp_plan *root);

/* Whether `op` is the workers' plumbing (a gather or an exchange): it
** carries the plan node of what it moves, holds no state between
** batches and saves none. */
bool dp_par_plumbing(const dp_op *op);

/* Build `n` (>= 2) workers for `root` of `q` and start their threads.
** `checkpoint`: the query's checkpoint folder (every worker's sink gets
** it), or NULL.
** DIPPER_UNSUPPORTED with *why set (static): a source would not split,
** nothing is in `d`, and the caller runs the query on one thread; any other
** failure is described in `d`.  *out is set whenever something was
** allocated, even on failure; the caller frees it with dp_par_free. */
int dp_par_new(dipper *db, const dp_query_plan *q, const dp_plan *root, int n,
               const char *checkpoint, dp_diags *d, const char **why, dp_par **out);
/* Stop the threads and free the workers; NULL is fine. */
void dp_par_free(dp_par *par);
int dp_par_count(const dp_par *par);
dp_exec *dp_par_worker(dp_par *par, int w);

/* Plan every worker's inputs for the coming micro-batch (dp_scan_plan):
** worker 0 plans, and in streaming the others are planned to its bounds
** (save_plan / replay_plan); in batch mode each plans from the same
** position.  *has_data when any worker has rows; *exhausted when all ended.
** Errors: the workers' diagnostics are copied into `d`. */
int dp_par_plan_inputs(dp_par *par, int64_t max_rows, bool to_end, bool *has_data,
                       bool *exhausted, dp_diags *d);
/* Run the micro-batch on every worker: copy the coordinator's batch fields
** (id, watermarks, final, clock) into each, let each drain its tree (the
** exchanges first, in build order, each ended by a barrier) into its
** outbox, then merge the workers' maxima of event time into `coord`'s
** (their max: what one thread reading every share would have seen).  On a
** failure the first failing worker's diagnostics are copied into `d`. */
int dp_par_run(dp_par *par, dp_exec *coord, dp_diags *d);
/* Rows the workers' own sinks (dp_par_sink_per_worker) wrote in the last
** micro-batch; commit those sinks after the coordinator's. */
int64_t dp_par_rows_sunk(const dp_par *par);
int dp_par_commit_sinks(dp_par *par, int64_t batch_id, dp_diags *d);
/* dp_driver_wait_fds over every worker's inputs: the first `cap`
** descriptors into fds, the count of them all, *all when every input of
** every worker has one. */
int dp_par_wait_fds(dp_par *par, int *fds, int cap, bool *all);
/* After every operator's end_batch: reset the workers' batch arenas. */
void dp_par_end_batch(dp_par *par);

/* ---- hooks of the operators (exec.c, op_scan.c) ---- */

/* The operator the coordinator's sink reads: every worker's output of the
** micro-batch, worker 0's first, in the order each produced it. */
int dp_par_gather_build(dp_par *par, dp_exec *coord, const dp_plan *input, dp_op **out);
/* Whether root's sink is opened on every worker (connector.h's per_worker)
** instead of once, fed by the gather. */
bool dp_par_sink_per_worker(const dp_plan *root);
/* On a worker: put an exchange between `op` (built, not yet opened) and
** its inputs when op keeps state by key. */
int dp_par_wrap_inputs(dp_exec *ex, dp_op *op);
/* On a worker: make `src` (just opened) the worker's split of its table. */
int dp_par_split(dp_exec *ex, dp_source *src);

#endif /* DP_PARALLEL_H */
