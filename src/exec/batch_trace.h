/*
** batch_trace.h — a per-micro-batch timing trace of the embedded engine, off
** by default: DIPPER_TRACE_BATCHES=FILE in the environment turns it on for
** every streaming query the process runs (docs/benchmarks.md, "Latency").
**
** Owns: the records (kept in memory, one per planned step: about 100 bytes
** each, at most DP_BTRACE_MAX), and writing them at the end of the query, as
** tab-separated lines appended to FILE under one header line.  Does not own:
** the clocks' readings, which the driver (exec/driver.c), the scan and the
** sink operators take; with the trace off each costs one branch on
** ex->trace.
**
** Times are CLOCK_MONOTONIC µs (dp_mono_micros: the clock every process of
** the machine shares, so a harness can line them up with its own), durations
** µs.  Columns, one line per step that planned its inputs:
**   query      the query's name
**   batch      the micro-batch's id, or -1: the plan found nothing to run
**   t_plan     when planning began
**   wait_us    from the end of the step before to t_plan (the run loop's sleep)
**   plan_us    planning every input, with the first chunk's read
**   fetch_us   reading the sources (read_chunk: the plan's first chunk too)
**   pull_us    pulling the sink to the batch's end: reads, operators, writes
**   produce_us the sink's writes (encoding and handing rows to its client)
**   flush_us   the sink's commit (for Kafka at-least-once: the acks awaited)
**   commit_us  the sources' commits (for Kafka: positions, group commits)
**   end_us     end_batch of every operator and the checkpoint, if any
**   rows_in, rows_out, the batch's watermark and the one computed at its end
**   (µs since the epoch, event time; the minimum int64 for none).
*/
#ifndef DP_BATCH_TRACE_H
#define DP_BATCH_TRACE_H

#include <stdint.h>

#define DP_BTRACE_MAX 2000000

typedef struct dp_btrace_rec {
  int64_t batch, t_plan, wait_us, plan_us, fetch_us, pull_us, produce_us, flush_us, commit_us,
      end_us, rows_in, rows_out, watermark, next_watermark;
} dp_btrace_rec;

typedef struct dp_btrace {
  char *path;
  dp_btrace_rec *recs;
  int64_t n, cap, dropped;
  int64_t last_end; /* when the last step ended, 0: none yet */
} dp_btrace;

/* A trace when DIPPER_TRACE_BATCHES names a file, else NULL. */
dp_btrace *dp_btrace_open(void);
/* A new record (zeroed but for t_plan and wait_us), or NULL past the cap. */
dp_btrace_rec *dp_btrace_add(dp_btrace *t, int64_t t_plan);
/* Note the end of a step. */
void dp_btrace_step_end(dp_btrace *t, int64_t now);
/* Append the records to the file and free the trace (NULL: nothing). */
void dp_btrace_close(dp_btrace *t, const char *query);

#endif
