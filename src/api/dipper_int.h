/*
** dipper_int.h — the structs behind the public handles of dipper.h.
**
** Private to src/api/ (and to tests and benchmarks that look inside); the CLI
** and every other caller see only the opaque types of dipper.h.
*/
#ifndef DP_DIPPER_INT_H
#define DP_DIPPER_INT_H

#include <stdatomic.h>

#include "core/arena.h"
#include "core/diag.h"
#include "core/session.h" /* the seam below the API, which session.c implements */
#include "dipper.h"
#include "plan/plan.h" /* before catalog.h: it declares dp_table_def */
#include "plan/catalog.h"
#include "sql/ast.h"

struct dipper {
  struct dp_mem_store *memory; /* connectors/memory.c: named in-memory tables (pushed source
                              batches, rows written by sinks; private to it); freed by
                              dp_memory_free */
  struct dp_callback_entry *callbacks; /* connectors/callback.c: registered dipper_batch_fn
                              by name (private to it); freed by dp_callbacks_free */
  atomic_int interrupted;  /* set by dipper_interrupt, from a signal handler or another
                              thread: read and cleared only through atomic_load and
                              atomic_exchange (dp_api_interrupted, dp_api_honour_interrupt) */
  char *engine;            /* the Spark Connect address given to dipper_open, or NULL */
  bool engine_explicit;    /* dipper_open named an engine ("embedded" too): it overrides
                              SET 'dipper.engine' */
  int open_failed;         /* dipper_open refused the address: every call fails with this
                              code and open_error (malloc'd) */
  char *open_error;
  struct dp_sc *spark;     /* spark_run.c: the Spark Connect session, opened by the first
                              call that runs on Spark; closed by dipper_close */
  char *spark_address;     /* the address that session was opened with (malloc'd) */
  char **spark_jars;       /* spark_run.c: jars uploaded into that session (AddArtifacts),
                              malloc'd paths; forgotten with the session */
  int nspark_jars;
  void *collector;         /* execute.c: where the running dipper_execute collects */
  struct dipper_query *queries; /* run.c: the queries started and not yet freed (a list) */
  dipper_log_fn log_fn;    /* dipper_set_log: where notes go, or NULL: nowhere */
  void *log_user;
  dipper_clock_fn clock_fn;  /* dipper_set_clock: processing time, or NULL: the wall clock */
  void *clock_user;
  dp_catalog *catalog;
  dp_arena *diag_arena;    /* diagnostics of the last call; reset at every call */
  dp_diags diags;
  dipper_diag *pub;        /* public copies of diags, built when a call fails */
  char *text;              /* copy of the failed text in diag_arena, for rendering */
  char *file;              /* the filename of the last call, in diag_arena */
};

/* run.c: whether dipper_interrupt was called (the flag stays set), and the
** same for the call that honours it (the flag is cleared: true once per
** dipper_interrupt). */
bool dp_api_interrupted(dipper *db);
bool dp_api_honour_interrupt(dipper *db);


/* One compiled statement. */
typedef struct dp_program_stmt {
  const dp_ast_stmt *ast;
  dp_query_plan plan;      /* no roots for DDL/SET */
  bool explain;            /* an EXPLAIN statement */
  const char *summary;     /* EXPLAIN's line for DDL/SET/DROP/USE/...; NULL otherwise */
  const struct dp_api_rows *rows; /* SHOW, DESCRIBE, SET alone, EXPLAIN: the answer, taken
                              when the statement compiled (show.c); NULL for the others */
  int warn_begin;          /* its warnings in the program's list: root r's are */
  int *warn_end;           /* [warn_begin or warn_end[r-1], warn_end[r]) */
} dp_program_stmt;

struct dipper_program {
  dipper *db;              /* borrowed */
  dp_arena *arena;         /* AST, plans, copies of the text */
  const char *text;
  const char *file;
  int n;
  dp_program_stmt *stmts;
  dp_diags warnings;       /* compile-time warnings (dp_validate_warnings), in the arena */
  dipper_diag *warn_pub;   /* their public form, built once compiled */
};

/* dipper.c: log the warnings of root r of statement i (dipper_set_log),
** each as "file:line:col: message", when the query starts. */
void dp_api_log_warnings(dipper *db, const dipper_program *prog, int i, int r);

/* dipper.c: the diagnostics of a call on db.  begin forgets the last call's
** and starts a list naming `file` whose spans point into `text` (borrowed for
** the call); finish keeps them past the call (copies the text, builds the
** public array) and returns DIPPER_OK or DIPPER_NOMEM. */
void dp_api_diags_begin(dipper *db, const char *file, const char *text, size_t len);
int dp_api_diags_finish(dipper *db);

/* run.c: append a query's diagnostics to the handle's (an unplaced one with
** rc's text when it has none).  Does not finish them. */
void dp_api_copy_diags(dipper *db, const dp_diags *from, int rc);

/* ---- execute.c: results handed out as an ArrowArrayStream ---- */

typedef struct dp_api_result {
  struct ArrowSchema schema; /* a "+s" schema, owned */
  struct ArrowArray *arrays; /* n struct arrays of it, owned until handed out */
  int n, cap;
  int next;                  /* the next one get_next hands out */
} dp_api_result;

/* Move *a (its release set to NULL) to the end of r; on failure *a is released. */
int dp_api_result_push(dp_api_result *r, struct ArrowArray *a);
/* r with a schema of no columns and no arrays (INSERT, DDL). */
int dp_api_result_empty(dp_api_result *r);
/* Move r into *out (r is left empty, also on failure). */
int dp_api_result_stream(dp_api_result *r, struct ArrowArrayStream *out);
void dp_api_result_free(dp_api_result *r);
/* A deep copy that dst->release frees. */
int dp_api_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *dst);

/* ---- show.c: statements that answer with rows and run nothing ---- */

/* A small table of text in a program's arena: ncols columns, each a STRING
** or (boolean[c]) a BOOLEAN written "true"/"false"; nrows * ncols cells, row
** by row, NULL for SQL NULL. */
typedef struct dp_api_rows {
  int ncols;
  const char *const *names;
  const bool *boolean;
  int nrows;
  const char *const *cells;
} dp_api_rows;

/* The answer of SHOW, DESCRIBE, SET with no key or EXPLAIN (whose analysed
** plan is `plan`) as the catalog is now; *out NULL for the other statements.
** DESCRIBE of a view binds its query: errors into d. */
int dp_api_stmt_rows(dp_arena *a, dp_diags *d, const dp_catalog *cat, const dp_ast_stmt *s,
                     const dp_query_plan *plan, const dp_api_rows **out);
/* The rows as a result of one struct array (none when there are no rows). */
int dp_api_rows_result(const dp_api_rows *r, dp_api_result *res);

/* ---- the engine of a call ---- */

/* Does the program's handle run on Spark: an sc:// address at dipper_open,
** or SET 'dipper.engine' = 'sc://...' when dipper_open named no engine. */
bool dp_api_on_spark(const dipper *db);
/* The Spark Connect address in effect (NULL when embedded); borrowed. */
const char *dp_api_spark_address(const dipper *db);

/* ---- spark_run.c: the program on Spark ---- */

/* true when addr is a well-formed Spark Connect address, else false with
** why[0..cap) saying what is wrong. */
bool dp_spark_address_check(const char *addr, char *why, size_t cap);
/* Close the handle's Spark session, if one was opened. */
void dp_spark_disconnect(dipper *db);
/* dipper_execute on Spark: errors into db->diags. */
int dp_spark_execute(dipper *db, const dipper_program *prog, const dp_program_stmt *ps, int stmt,
                     dp_api_result *res);
/* dipper_compile on Spark: what Spark cannot run, refused into db->diags
** with the construct's place (spark/translate.h's dp_spark_check). */
int dp_spark_check_stmt(dipper *db, dp_arena *a, const dp_query_plan *q);

/* The last DIPPER_RECENT_PROGRESS reports of a query (run.c keeps one per
** dipper_query; the Spark side pushes every report it takes in). */
typedef struct dp_progress_ring {
  dipper_progress items[DIPPER_RECENT_PROGRESS];
  int64_t pushed;          /* reports pushed so far; the newest is items[(pushed-1) % N] */
} dp_progress_ring;
void dp_progress_ring_push(dp_progress_ring *r, const dipper_progress *p);

/* The Spark side of a dipper_query: one INSERT or bare SELECT.  new fails
** (and still sets *out, for its diagnostics) for what cannot run on Spark;
** in streaming mode it starts the Spark query (an INSERT; a streaming bare
** SELECT is refused).  step: batch mode runs the statement (its one
** micro-batch); streaming polls Spark (status, new progress reports pushed
** to ring, *ran when there was one; *finished once the query has ended).
** Errors of a call go to the query's diagnostics, forgotten at the next
** call unless the query failed. */
typedef struct dp_spark_query dp_spark_query;
int dp_spark_query_new(dipper *db, const dp_query_plan *q, const dp_plan *root, const char *name,
                       dp_spark_query **out);
int dp_spark_query_step(dp_spark_query *sq, dp_progress_ring *ring, bool *ran, bool *finished);
void dp_spark_query_progress(const dp_spark_query *sq, dipper_progress *out);
const dp_diags *dp_spark_query_diags(const dp_spark_query *sq);
/* Stops a streaming query that still runs (errors ignored: best effort). */
void dp_spark_query_free(dp_spark_query *sq);
/* Streaming on Spark: a query the server runs by its own trigger. */
bool dp_spark_query_streaming(const dp_spark_query *sq);
/* Streaming into a callback table (foreachBatch from C): each step waits on
** the server for the next batch itself, so a caller that paces its steps
** (dipper_run) calls again at once instead of pausing. */
bool dp_spark_query_waits(const dp_spark_query *sq);
/* Streaming: wait on the server (in slices, so that dipper_interrupt is seen:
** DIPPER_INTERRUPTED), then take in the last progress when it ended. */
int dp_spark_query_await(dp_spark_query *sq, dp_progress_ring *ring, int64_t timeout_ms,
                         bool *terminated);
/* Streaming: StreamingQuery.stop, then the last progress taken in.  Batch
** mode: the statement will not run. */
int dp_spark_query_stop(dp_spark_query *sq, dp_progress_ring *ring);
int dp_spark_query_status(dp_spark_query *sq, dipper_status *out);
/* The Spark query id and run id; NULL when none (batch mode, not started). */
const char *dp_spark_query_id(const dp_spark_query *sq);
const char *dp_spark_query_run_id(const dp_spark_query *sq);
/* The ids of the queries the handle's session runs now: *ids malloc'd (free()),
** *n of them; errors into d. */
int dp_spark_active_ids(dipper *db, dp_diags *d, char (**ids)[40], int *n);
/* dipper_listen on Spark: the session's listener bus until fn stops (any
** non-zero code ends it: DIPPER_OK), timeout_ms passes (> 0; < 0 none:
** DIPPER_OK) or db->interrupted is set (DIPPER_INTERRUPTED, within about
** 200 ms).  Errors into d.  Nothing to listen to without a session: OK. */
struct dp_sq_event; /* spark/streaming.h */
int dp_spark_listen(dipper *db, int (*fn)(void *user, const struct dp_sq_event *ev), void *user,
                    int64_t timeout_ms, dp_diags *d);
/* Take in a bus event about sq: a progress report not taken before (pushed
** to ring), or its end (with the error it failed with, *error then borrowed
** until the query is freed).  *news: whether the event tells something new
** (an already-taken report does not). */
void dp_spark_query_take_event(dp_spark_query *sq, const struct dp_sq_event *ev, dp_progress_ring *ring,
                               bool *news, const char **error);

#endif /* DP_DIPPER_INT_H */
