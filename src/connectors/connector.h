/*
** connector.h — sources and sinks of the embedded engine.
**
** A connector is a class (a table of functions) registered under the name
** that `'connector' = '...'` selects; one file per connector.  Sources are
** replayable where the medium allows (files, Kafka offsets, generators with a
** seed): with a checkpoint folder (exec/checkpoint.h) the driver writes the
** bounds of each planned batch to the offset log before it runs, and the
** source's position after each committed batch to the commit log, both as
** bytes only the source class reads (core/bytes.h), so a restart resumes
** exactly: at the last committed position, with a batch that was logged and
** not committed planned again to exactly its logged bounds.
**
** Sources produce rows in the layout of the SCAN node's schema (the table's
** physical and metadata columns, in declared order); computed columns and
** watermarks are plan nodes above the scan.  Bad records follow the table's
** policy option `dipper.bad-records` = fail | skip | dead-letter (DESIGN §4).
*/
#ifndef DP_CONNECTOR_H
#define DP_CONNECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/bytes.h"
#include "core/diag.h"
#include "core/vector.h"
#include "plan/catalog.h"

typedef struct dp_source dp_source;
typedef struct dp_sink dp_sink;

typedef struct dp_source_metrics {
  int64_t rows, bytes;
  int64_t bad_records_skipped;
} dp_source_metrics;

typedef struct dp_source_class {
  const char *name;
  /* Read the options of `t` (already validated by the catalog) and prepare.
  ** `schema` is the scan's output schema. */
  int (*open)(dp_source *s);
  /* Fix the end of the next micro-batch: what is available now, at most
  ** `max_rows` (0: no cap).  *exhausted is set when a bounded source has
  ** nothing more, ever. */
  int (*plan_batch)(dp_source *s, int64_t max_rows, bool *exhausted);
  /* Append up to `want` rows of the planned batch to `out` (columns of the
  ** scan schema); *done when the planned batch is fully read. */
  int (*read)(dp_source *s, dp_batch *out, int64_t want, bool *done);
  /* The batch was committed downstream: make its end the new start. */
  int (*commit)(dp_source *s);
  void (*close)(dp_source *s);

  /* Fault tolerance.  A source without these four cannot resume: a query
  ** over it with a checkpoint folder is refused when it starts.
  ** save_plan: after plan_batch, the bounds of the planned batch (what
  ** replay_plan needs to plan the same rows again), appended to `out`.
  ** save_position: after commit, where the next batch starts.
  ** restore_position: right after open, before any plan_batch: resume at a
  ** position save_position wrote (a source of the same table definition).
  ** replay_plan: the next plan_batch plans exactly the rows of the bounds
  ** save_plan wrote, whatever is available by then (more rows waiting are
  ** left for the batches after it).  Bytes that do not read back whole give
  ** DIPPER_CORRUPT with a diagnostic. */
  int (*save_plan)(dp_source *s, dp_buf *out);
  int (*save_position)(dp_source *s, dp_buf *out);
  int (*restore_position)(dp_source *s, dp_rd *in);
  int (*replay_plan)(dp_source *s, dp_rd *in);

  /* Parallel execution (exec/parallel.h).  Optional: make this source one of
  ** `count` splits of the table, the one numbered `index` (0-based), right
  ** after open.  Each split of a batch reads its share of the rows that
  ** plan_batch planned, and the shares of all splits together are the
  ** batch's rows, each read once, split `index` holding the rows that come
  ** after those of split index-1 in the order one reader would read them.
  ** Every split is planned to the same bounds: by worker 0, replayed on the
  ** others through save_plan/replay_plan when `replayed`, else by each split
  ** itself from the same position (batch mode), which a source whose plans
  ** depend on the clock cannot promise.  DIPPER_UNSUPPORTED with a reason
  ** in `why` (a static string): the query runs on one thread.  NULL: the
  ** source cannot be split and its queries run on one thread. */
  int (*split)(dp_source *s, int index, int count, bool replayed, const char **why);
  /* The splits read units of their own (files), each with its own position
  ** and cap, not shares of one batch: their event times move apart, and the
  ** watermark is then the minimum over the workers that saw an event
  ** (exec/parallel.h), not the maximum.  (Kafka's splits read partitions of
  ** their own, but of one batch planned for all: false.) */
  bool split_units;

  /* Optional: a file descriptor that turns readable when rows may have
  ** come (the source drains it when it plans), so that an idle run waits on
  ** it rather than sleeping between plans; -1 or NULL: the run polls the
  ** source on its timer. */
  int (*wait_fd)(dp_source *s);
} dp_source_class;

struct dp_source {
  const dp_source_class *cls;
  dipper *db;                /* the handle (memory tables, callbacks) */
  const dp_table_def *table; /* borrowed */
  const dp_schema *schema;   /* the scan's output schema, borrowed */
  dp_diags *diags;           /* run-time errors */
  /* The checkpoint folder of the query reading it (exec/checkpoint.h), or
  ** NULL: where a source may keep files of its own (upsert-kafka's kept
  ** rows), named by its position. */
  const char *checkpoint;
  dp_source_metrics metrics;
  void *state;
  /* Set by the run loops (dipper_run, dipper_query_await, dipper_listen)
  ** for an as-fast-as-possible query, whose next step comes as soon as the
  ** source's wait_fd fires: a plan may then take an input that looks idle
  ** at what it has (the Kafka source: no round trip to the broker), since
  ** its rows wake the run when they come.  false for a hand-stepped query
  ** (dipper_query_step) and the triggers that stop at the first plan
  ** finding nothing: what was produced before the step is in its batch. */
  bool woken;
  /* Set by the driver before commit (and close): the sink's writes of the
  ** batches read so far may not all be acknowledged yet (dp_sink_class
  ** settle), so a source records no position for others to resume from
  ** (Kafka: the group commit stays owed). */
  bool outputs_pending;
};

typedef struct dp_sink_class {
  const char *name;
  int (*open)(dp_sink *k);
  /* Rows of micro-batch `batch_id` in the sink's input schema; called zero or
  ** more times per batch. `mode` is the DP_MODE_* of the query. */
  int (*write)(dp_sink *k, int64_t batch_id, const dp_batch *b);
  /* The batch is complete: make its output visible atomically where the
  ** medium allows (rename a file, flush a producer).  With a checkpoint
  ** folder, batch ids carry over restarts and a batch whose commit record
  ** was not written is run again under the same id with the same rows
  ** (exec/checkpoint.h): a sink that claims exactly-once makes a second
  ** commit of one batch id replace, or skip, the first. */
  int (*commit)(dp_sink *k, int64_t batch_id);
  /* Optional, with `defer` below: commit sends the batch's writes and
  ** returns before they are acknowledged; settle tells whether every write
  ** so far is (*settled), waiting up to wait_ms for it (-1: the sink's own
  ** commit timeout, 0: not at all), and fails when one was not delivered.  The driver settles before anything records a batch as
  ** done (a source's group commit, the query's end), so that the next batch
  ** runs while the acknowledgements come (at-least-once stays exact). */
  int (*settle)(dp_sink *k, int wait_ms, bool *settled);
  void (*close)(dp_sink *k);
  /* Parallel execution (exec/parallel.h): each worker may open a sink of
  ** its own and write its share (the blackhole; the filesystem's part files,
  ** one per worker and batch).  false: one sink is fed every worker's rows
  ** in worker order.  per_worker_if, when set: per_worker holds only for the
  ** tables it says (not a PARTITIONED BY one, say). */
  bool per_worker;
  bool (*per_worker_if)(const dp_table_def *t);
} dp_sink_class;

struct dp_sink {
  const dp_sink_class *cls;
  dipper *db;
  const dp_table_def *table; /* borrowed; NULL for a bare SELECT's result */
  const dp_schema *schema;   /* input rows' schema, borrowed */
  unsigned mode;             /* DP_MODE_* */
  const char *checkpoint;    /* the query's checkpoint folder, or NULL: none */
  int worker, nworkers;      /* a per-worker sink's worker of nworkers; else 0 of 1 */
  int64_t rows_skipped;      /* rows handed to write() that it did not write: their batch
                                was written before a restart (exactly-once); the driver
                                counts rows out without them */
  dp_diags *diags;
  void *state;
  void *user;                /* the callback connector's registration, console's FILE* */
  bool defer;                /* set by the driver: commit need not wait (settle above) */
};

/* Look a connector up by name; NULL when the engine has no such source/sink. */
const dp_source_class *dp_source_find(const char *name);
const dp_sink_class *dp_sink_find(const char *name);

/* Table option value, or `dflt`. */
const char *dp_table_option(const dp_table_def *t, const char *key, const char *dflt);

#endif /* DP_CONNECTOR_H */
