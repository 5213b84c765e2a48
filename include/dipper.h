/*
** dipper.h — the whole public interface of dipper, a streaming query engine.
**
** A program opens a handle (dipper_open), compiles SQL into a program
** (dipper_compile), and inspects or runs it.  Every function that can fail
** returns an int code (DIPPER_OK == 0); the details of the last failure —
** one or more diagnostics with file:line:col — are read from the handle.
**
** Ownership is stated on every call in fixed words:
**   "borrowed until X"  the pointer stays valid until X happens; do not free it;
**   "the caller frees"  release it with the function named next to it.
** Every *_free and *_close accepts NULL.
*/
#ifndef DIPPER_H
#define DIPPER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* On every function of this header: the library is built with
** -fvisibility=hidden, so these are the only symbols libdipper.so exports
** (tests/install/exports_test.sh checks both ways).  Defined beforehand
** (e.g. empty), it is left alone. */
#ifndef DIPPER_API
#if defined(__GNUC__) || defined(__clang__)
#define DIPPER_API __attribute__((visibility("default")))
#else
#define DIPPER_API
#endif
#endif

#define DIPPER_VERSION_MAJOR 0
#define DIPPER_VERSION_MINOR 1
#define DIPPER_VERSION_PATCH 0
#define DIPPER_VERSION "0.1.0"
/* One number that grows with every release: 0x00MMmmpp. */
#define DIPPER_VERSION_NUM \
  ((DIPPER_VERSION_MAJOR << 16) | (DIPPER_VERSION_MINOR << 8) | DIPPER_VERSION_PATCH)

/* The version of the library actually linked, e.g. "0.1.0". Static string. */
DIPPER_API const char *dipper_version(void);

/*
** Result codes.  Generated once from this list (the strings live in
** src/core/error.c); a code is never renumbered, new ones go at the end.
*/
#define DIPPER_CODES(X)                                                        \
  X(OK, 0, "not an error")                                                     \
  X(NOMEM, 1, "out of memory")                                                 \
  X(MISUSE, 2, "library used incorrectly")                                     \
  X(IO, 3, "I/O error")                                                        \
  X(SYNTAX, 4, "syntax error")                                                 \
  X(NAME, 5, "unknown name")                                                   \
  X(TYPE, 6, "type error")                                                     \
  X(STREAMING, 7, "not supported on an unbounded input")                       \
  X(UNSUPPORTED, 8, "not supported")                                           \
  X(OPTION, 9, "invalid option")                                               \
  X(DUPLICATE, 10, "name already defined")                                     \
  X(INTERNAL, 11, "internal error")                                            \
  X(LIMIT, 12, "a limit was exceeded")                                         \
  X(CONNECT, 13, "cannot reach the engine")                                    \
  X(PROTOCOL, 14, "protocol error")                                            \
  X(REMOTE, 15, "the engine reported an error")                                \
  X(DATA, 16, "bad record")                                                    \
  X(TIMEOUT, 17, "timed out")                                                  \
  X(INTERRUPTED, 18, "interrupted")                                            \
  X(CORRUPT, 19, "corrupt or incompatible checkpoint")

#define DIPPER_CODE_ENUM_(name, num, str) DIPPER_##name = num,
typedef enum dipper_code { DIPPER_CODES(DIPPER_CODE_ENUM_) DIPPER_CODE_END_ } dipper_code;
#undef DIPPER_CODE_ENUM_

/* The English text of a code, e.g. "syntax error". Static string; never NULL. */
DIPPER_API const char *dipper_strerror(int code);

/* An opaque handle: a catalog of tables and views, session options, and the
** diagnostics of the last call that failed. One thread at a time. */
typedef struct dipper dipper;

/* A compiled list of statements (DDL, SET, queries, INSERTs), bound and
** validated.  Immutable once compiled. */
typedef struct dipper_program dipper_program;

/*
** Open a handle.  `engine` is NULL or "embedded" for the in-process engine,
** or a Spark Connect address
**   sc://host[:port][/;token=..;use_ssl=true;user_id=..;grpc_max_message_size=N]
** The address is checked here; the connection is made lazily, by the first
** call that runs something on Spark (so `check` and `explain` need no server).
** On success *out holds the handle: the caller frees it with dipper_close.
** A bad address gives DIPPER_OPTION and, as sqlite3_open does, still a handle
** in *out whose dipper_errmsg says what is wrong: the caller frees it with
** dipper_close; every later call on it fails with the same error.
** Only DIPPER_MISUSE (out is NULL) and DIPPER_NOMEM leave *out NULL.
*/
DIPPER_API int dipper_open(dipper **out, const char *engine);
DIPPER_API void dipper_close(dipper *db);

/*
** Compile SQL text: parse, bind, analyse and validate every statement.
** DDL (CREATE TABLE/VIEW, DROP) and SET/RESET take effect in the handle's
** catalog as they are compiled, so later statements see them.
** `filename` names the text in diagnostics ("<string>" when NULL).
** `len` may be (size_t)-1 for a NUL-terminated string.
** On success *out is a program the caller frees with dipper_program_free.
** On failure *out is NULL and the diagnostics are read with dipper_diag_*.
*/
DIPPER_API int dipper_compile(dipper *db, const char *sql, size_t len, const char *filename,
                              dipper_program **out);
DIPPER_API void dipper_program_free(dipper_program *prog);

/* How many statements the program holds. */
DIPPER_API int dipper_program_count(const dipper_program *prog);

/* 1 when a query or INSERT of the program was compiled in streaming mode
** ('execution.runtime-mode' = 'streaming', the default): it runs by its
** trigger (dipper_query_start, dipper_run), not to an end; 0 otherwise. */
DIPPER_API int dipper_program_streaming(const dipper_program *prog);

/* Flags for dipper_explain. */
#define DIPPER_EXPLAIN_DEFAULT 0u
#define DIPPER_EXPLAIN_NO_SCHEMA 1u   /* leave out each node's schema line */
#define DIPPER_EXPLAIN_NO_STREAMING 2u/* leave out the streaming properties */

/*
** Render the logical plan of every query and INSERT in the program (and the
** effect of each DDL/SET statement) as an indented tree.  On success *out is a
** NUL-terminated string the caller frees with dipper_free.
*/
DIPPER_API int dipper_explain(const dipper_program *prog, unsigned flags, char **out);

/* Free memory that dipper handed to the caller. NULL is fine. */
DIPPER_API void dipper_free(void *p);

/*
** Diagnostics of the last failing call on `db`.  A call that succeeds clears
** them.  Each points into the text that was compiled with line and column
** counted from 1 (column in bytes); line == 0 when no place applies.
*/
typedef struct dipper_diag {
  int code;            /* a dipper_code */
  const char *message; /* what went wrong and what to write instead */
  const char *file;    /* the filename given to dipper_compile, or NULL */
  int line, col;       /* 1-based; 0 when unknown */
  int length;          /* bytes underlined by the caret, >= 1 when line > 0 */
} dipper_diag;

DIPPER_API int dipper_diag_count(const dipper *db);
/* Borrowed until the next call on db. NULL when i is out of range. */
DIPPER_API const dipper_diag *dipper_diag_get(const dipper *db, int i);
/* The first diagnostic's message, or "" when the last call succeeded.
** Borrowed until the next call on db. */
DIPPER_API const char *dipper_errmsg(const dipper *db);
/*
** Render diagnostic i the way a compiler does:
**   file.sql:3:10: error: message
**      3 | SELECT a FROM t ORDER BY a
**        |                 ^~~~~~~~~~
** The caller frees the result with dipper_free; NULL on bad i or no memory.
*/
DIPPER_API char *dipper_diag_render(const dipper *db, int i);

/*
** Warnings of a compiled program: what compiles and runs but is likely not
** what was meant, as Flink warns — a streaming operator whose state grows
** forever (no watermark cleans it, no 'table.exec.state.ttl' bounds it),
** naming the operator and the option.  The same dipper_diag form (code
** DIPPER_STREAMING) with the place in the text.  dipper_query_start (and
** so dipper_run) also hands each query's warnings to the log callback
** (DIPPER_LOG_WARNING), once, as the query starts.  Borrowed until the
** program is freed; NULL when i is out of range.
*/
DIPPER_API int dipper_program_warning_count(const dipper_program *prog);
DIPPER_API const dipper_diag *dipper_program_warning(const dipper_program *prog, int i);
/* Rendered as dipper_diag_render does, with "warning:"; the caller frees it
** with dipper_free; NULL on bad i or no memory. */
DIPPER_API char *dipper_program_warning_render(const dipper_program *prog, int i);


/* ---- running programs (the embedded engine, or Spark) ----
**
** Every INSERT (each INSERT of a statement set) and every bare SELECT of a
** program is one query.  A bare SELECT's rows go to standard output as a
** table, like the console sink.  Queries run in micro-batches: in streaming
** mode until their sources end (bounded ones) or dipper_interrupt; in batch
** mode to completion. */

typedef struct dipper_query dipper_query;
struct ArrowSchema; /* defined below (Arrow C Data Interface) */
struct ArrowArray;
struct ArrowArrayStream;

/*
** Structs that grow: dipper_progress, dipper_status and dipper_event begin
** with `size`, and new fields only ever go at the end (as Windows' cbSize).
**   - One the caller gives to be filled (dipper_query_progress,
**     dipper_query_recent_progress, dipper_query_status): the caller sets
**     size = sizeof first, e.g. `dipper_progress p = {sizeof p};`.  The library
**     writes at most size bytes — the fields of a caller built against an
**     older dipper.h, nothing past its struct — and sets size to the bytes it
**     filled (smaller than the caller's when the library is the older one: the
**     fields past it keep what the caller put there).  A size smaller than the
**     size field itself (0: not set) is DIPPER_MISUSE.
**   - One the library hands out (a dipper_progress_fn's report, a
**     dipper_event and its progress): size is the library's sizeof; a field
**     is there when offsetof(field) + sizeof field <= size.
*/

/* A snapshot of a query's progress (Spark's StreamingQueryProgress, in C). */
typedef struct dipper_progress {
  size_t size;               /* see "Structs that grow" above */
  const char *name;          /* the sink table, or "select#N"; borrowed until the query is freed */
  int64_t batch_id;          /* the last completed micro-batch, -1 before the first */
  int64_t input_rows;        /* rows read by the sources in the last batch */
  int64_t output_rows;       /* rows written to the sink in the last batch */
  double input_rows_per_sec; /* over the last batch's duration */
  double output_rows_per_sec;
  int64_t batch_duration_us; /* wall time of the last batch */
  int64_t watermark;         /* µs since the epoch, INT64_MIN when none yet: the one computed
                                at the end of the last batch, in effect from the next */
  int64_t state_rows;        /* rows held by stateful operators now */
  int64_t late_rows_dropped; /* since the start */
  int64_t bad_records_skipped; /* since the start (policy `skip`) */
  int64_t total_input_rows, total_output_rows;
  int finished;              /* 1 once every source has ended and the last batch ran */
  /* embedded, with a checkpoint folder: the last batch's checkpoint files (its
  ** offsets record, state file if one was due, commit record) — bytes and
  ** wall µs spent writing them; 0 otherwise */
  int64_t checkpoint_bytes;
  int64_t checkpoint_us;
} dipper_progress;

/* Start one query per INSERT / SELECT of the program, in order.  *out is an
** array of *n queries the caller frees with dipper_query_free_all (which stops
** them).  The program must outlive the queries. */
DIPPER_API int dipper_query_start(dipper_program *prog, dipper_query ***out, int *n);
/* Run one micro-batch of q now, whatever its trigger says. *finished is set
** when the query has ended (bounded sources exhausted and emitted).  As in
** Spark, a batch runs only when it has something to do: new input rows, a
** watermark that moved under a stateful operator (a no-data batch), or the
** last batch of a bounded run; otherwise the call does nothing, and
** dipper_query_progress's batch_id shows that no batch ran. */
DIPPER_API int dipper_query_step(dipper_query *q, int *finished);
DIPPER_API int dipper_query_progress(const dipper_query *q, dipper_progress *out);
DIPPER_API void dipper_query_free_all(dipper_query **qs, int n);

/* Called after every micro-batch of every query, from the thread that runs it. */
typedef void (*dipper_progress_fn)(void *user, const dipper_progress *p);

/* Run the whole program: start its queries and drive them by their triggers
** until all have finished or dipper_interrupt is called; a final progress
** report is made for each query.  `fn` may be NULL. */
DIPPER_API int dipper_run(dipper_program *prog, dipper_progress_fn fn, void *user);

/*
** Run statement `stmt` (0-based, < dipper_program_count) of the program to
** completion and hand its rows out as an Arrow C stream of struct arrays (one
** child per column, named as the SELECT names them).  Batch semantics: the
** statement's inputs must be bounded — compile it after
** SET 'execution.runtime-mode' = 'batch', or in streaming mode over bounded
** inputs with an append-mode result (anything else is DIPPER_STREAMING:
** run it with dipper_query_start instead).
**   - a query (a bare SELECT): its rows;
**   - an INSERT or a statement set: it runs (its sinks get the rows) and the
**     stream holds no columns and no rows;
**   - DDL and SET 'k' = 'v': nothing runs (they took effect at compile); an
**     empty stream as for an INSERT;
**   - SHOW, DESCRIBE, SET alone and EXPLAIN: their rows, taken at compile
**     (DIPPER_STMT_RESULT below).
** Embedded: the query runs inside this call; the stream hands out the
** result's micro-batches (one for batch mode).  On Spark: the statement is
** translated to Spark Connect relations, sent, and its result collected.
** On DIPPER_OK *out is a stream the caller releases (out->release(out)),
** before freeing the program; until then it borrows the program and its
** handle.  On failure out->release is NULL and dipper_errmsg says why (a
** Spark error reads "Spark: [ERROR_CLASS] message").
*/
DIPPER_API int dipper_execute(dipper_program *prog, int stmt, struct ArrowArrayStream *out);

/* Ask a running dipper_run to stop at the end of the current micro-batch
** (on Spark: to stop every query it started, StreamingQuery.stop), and a
** waiting dipper_query_await to return DIPPER_INTERRUPTED.  The flag is
** cleared by the call that honours it.  Async-signal-safe and thread-safe
** (the flag is a lock-free C11 atomic): call it from a SIGINT/SIGTERM
** handler or from another thread than the one running the handle. */
DIPPER_API void dipper_interrupt(dipper *db);

/* Messages of the library that are not a call's error: warnings (a Kafka
** connector's own, e.g. an offset commit that failed), notes (a query whose
** sinks a restart would write again, because the session sets no
** checkpoint folder) and debug lines (the Kafka client library's own log:
** connections, retries).  `fn` gets the message (borrowed for the call) and
** its level; it may be called from the library's own threads (the Kafka
** client's), so it must be thread-safe.  NULL (the default) keeps the
** library quiet.  Setting a new one replaces the old; set it before
** starting queries. */
/* The processing-time clock of the handle's queries: what CURRENT_TIMESTAMP,
** PROCTIME() and the state TTL ('table.exec.state.ttl') read at the start of
** each micro-batch, in µs since the epoch (>= 0, never going back; a value
** that does is read as the latest one).  NULL (the default) is the wall
** clock.  For tests and simulations: a query then sees the time `fn` says.
** Set it before starting queries; `fn` runs on the thread that steps them. */
typedef int64_t (*dipper_clock_fn)(void *user);
DIPPER_API void dipper_set_clock(dipper *db, dipper_clock_fn fn, void *user);

#define DIPPER_LOG_WARNING 1
#define DIPPER_LOG_NOTE 2
#define DIPPER_LOG_DEBUG 3
typedef void (*dipper_log_fn)(void *user, int level, const char *message);
DIPPER_API void dipper_set_log(dipper *db, dipper_log_fn fn, void *user);

/* ---- managing running queries (both engines) ----
**
** On a Spark handle in streaming mode, dipper_query_start starts one Spark
** Structured Streaming query per INSERT (each INSERT of a statement set),
** named after its sink table; the query runs on the server by its trigger
** ('dipper.trigger') while the calls below look at it.  dipper_query_step
** then runs nothing itself: it asks Spark for the query's state and newest
** progress (a report per micro-batch Spark ran since the last call) and sets
** *finished once the query has ended by itself (available-now, once); a
** query that failed on Spark makes it fail with DIPPER_REMOTE and Spark's
** exception ("Spark: [ERROR_CLASS] message").  dipper_run polls every query
** this way about twice a second, calls fn with each new report, keeps the
** session alive, returns when every query has ended or on dipper_interrupt,
** and then stops the queries still running and reports their last progress.
** dipper_query_free_all stops the queries that still run.
** On the embedded engine the same calls drive the query in-process. */

/* What a query is doing now (Spark's StreamingQueryStatus). */
typedef struct dipper_status {
  size_t size;         /* see "Structs that grow" above */
  int active;          /* 1 until the query has finished, been stopped, or failed */
  int data_available;  /* Spark: input is waiting for the next batch (0 embedded) */
  int trigger_active;  /* Spark: a micro-batch runs right now (0 embedded: a batch
                          runs only inside a call) */
  char message[128];   /* "Waiting for data to arrive", "Stopped", "Finished", ... */
} dipper_status;

DIPPER_API int dipper_query_status(dipper_query *q, dipper_status *out);

/* Wait until q has ended, at most timeout_ms (< 0: no limit).  *terminated
** tells whether it has (finished, stopped or failed).  Embedded: runs q by
** its trigger meanwhile (the query advances only inside calls).  Spark: waits
** on the server.  DIPPER_OK when q ended well or is still running at the
** timeout; the query's error when it failed; DIPPER_INTERRUPTED (q still
** running) after dipper_interrupt. */
DIPPER_API int dipper_query_await(dipper_query *q, int64_t timeout_ms, int *terminated);

/* Stop q: Spark stops the query (its checkpoint keeps what was committed, so
** a later run resumes there); embedded, no further batch runs.  The last
** progress is taken in first.  Stopping a query that has ended is DIPPER_OK. */
DIPPER_API int dipper_query_stop(dipper_query *q);

/* The most recent progress reports of q, oldest first: up to cap of the last
** DIPPER_RECENT_PROGRESS (one per micro-batch, as taken in by step, await,
** stop or dipper_run) copied to out[0..*n).  out[0].size is the size of
** every element (`dipper_progress r[8] = {{sizeof r[0]}};`); each one filled
** gets size set as dipper_query_progress sets it.  Names are borrowed until
** the query is freed. */
#define DIPPER_RECENT_PROGRESS 32
DIPPER_API int dipper_query_recent_progress(const dipper_query *q, dipper_progress *out, int cap, int *n);

/* The sink table's name ("select#N" for a bare SELECT).  Borrowed until the
** query is freed. */
DIPPER_API const char *dipper_query_name(const dipper_query *q);
/* Spark: the query's id (a UUID, the same after a restart from its
** checkpoint) and this run's id.  NULL on the embedded engine, in batch mode,
** and before the query started.  Borrowed until the query is freed. */
DIPPER_API const char *dipper_query_id(const dipper_query *q);
DIPPER_API const char *dipper_query_run_id(const dipper_query *q);

/* The handle's queries that are active now (started by dipper_query_start
** and not yet freed, on Spark as the server's active list says): up to cap
** of them in out (borrowed until freed by dipper_query_free_all), and their
** number in *n (which may exceed cap). */
DIPPER_API int dipper_active_queries(dipper *db, dipper_query **out, int cap, int *n);

/* ---- the listener bus (Spark's StreamingQueryListener, in C) ---- */

typedef enum dipper_event_kind {
  DIPPER_EVENT_PROGRESS = 1, /* a micro-batch ended: `progress` is its report */
  DIPPER_EVENT_IDLE,         /* Spark: the trigger fired and found no new input */
  DIPPER_EVENT_TERMINATED    /* the query ended: finished, stopped, or failed (`error`) */
} dipper_event_kind;

/* One event.  Everything it points to is borrowed for the callback only. */
typedef struct dipper_event {
  size_t size;               /* the library's sizeof (see "Structs that grow" above) */
  dipper_event_kind kind;
  dipper_query *query;       /* the handle's query it is about; NULL for a Spark query
                                of the session that is no longer (or never was) one
                                of the handle's */
  const char *name;          /* the query's name (its sink table), NULL if unknown */
  const char *id, *run_id;   /* Spark: the query's ids; NULL on the embedded engine */
  const dipper_progress *progress; /* PROGRESS: the report, as dipper_query_progress
                                gives it right after that batch; else NULL */
  const char *error;         /* TERMINATED: why it failed ("Spark: [CLASS] ..."), NULL
                                when it finished or was stopped */
  const char *json;          /* Spark: the event as the server sent it; else NULL */
} dipper_event;

/* Return 0 to go on listening, anything else to stop dipper_listen. */
typedef int (*dipper_event_fn)(void *user, const dipper_event *ev);

/* Hand the events of the handle's running queries (started by
** dipper_query_start and not yet freed) to fn as they happen, until every
** one of them has ended (its TERMINATED event delivered), fn returns
** non-zero, timeout_ms passes (< 0: no limit) or dipper_interrupt is called.
** Spark: the session's listener bus (one registered listener for the call;
** the server pushes the events, nothing is polled); a query found ended
** when the call begins gets its TERMINATED event at once.  Embedded: the
** queries run inside the call by their triggers, as in dipper_run, and
** each batch is a PROGRESS event.  Reports delivered here are also taken
** into each query's progress and recent progress.  fn runs on the calling
** thread and must not call into the handle except for dipper_query_progress,
** _recent_progress, _name, _id and _run_id (on Spark the session is busy
** with the bus): to stop a query, return non-zero, then dipper_query_stop.
** A query that fails is an event, not this call's error: DIPPER_OK in all
** the cases above but DIPPER_INTERRUPTED (after dipper_interrupt, which it
** clears); an error when listening itself fails (the server went away). */
DIPPER_API int dipper_listen(dipper *db, dipper_event_fn fn, void *user, int64_t timeout_ms);

/* The embedded foreachBatch: a sink declared WITH ('connector' = 'callback',
** 'name' = NAME) calls fn with each micro-batch as an Arrow C Data struct array
** (one child per column) and the batch id.  fn owns the arrays: it must call
** their release callbacks.  Return 0 to go on, non-zero to fail the query. */
typedef int (*dipper_batch_fn)(void *user, int64_t batch_id, struct ArrowSchema *schema,
                               struct ArrowArray *array);
/* Frees the `user` of a registration (see dipper_register_callback2). */
typedef void (*dipper_free_fn)(void *user);

/* Register fn under name (case-insensitive) for the queries started from now
** on; a query started before keeps the registration it found.  On
** DIPPER_OK the handle owns user: free_user (NULL: nothing to free) is
** called with it exactly once, when the registration has ended — replaced
** by another under the same name (by either function), removed
** (dipper_unregister_callback, or dipper_register_callback with fn NULL), or
** the handle closed (dipper_close) — and no query started under it is left
** (until dipper_query_free_all, a running query may still call fn with
** user).  Registering the same user with the same free_user again only
** changes fn: user is not freed then.  fn must not be NULL.  On failure
** (DIPPER_MISUSE, DIPPER_NOMEM) nothing changed and the caller frees user. */
DIPPER_API int dipper_register_callback2(dipper *db, const char *name, dipper_batch_fn fn,
                                         void *user, dipper_free_fn free_user);
/* End the registration under name; its free_user runs as above.
** DIPPER_NAME when nothing is registered under name. */
DIPPER_API int dipper_unregister_callback(dipper *db, const char *name);
/* The first form: dipper_register_callback2 with no free_user (user stays
** the caller's: it must outlive every query started under it); fn NULL
** removes the registration under name (DIPPER_OK also when there is none). */
DIPPER_API int dipper_register_callback(dipper *db, const char *name, dipper_batch_fn fn, void *user);

/* The `memory` connector, for tests and embedding.  As a source, each push is
** one micro-batch of rows given as JSON lines (one object per row, keys =
** column names); as a sink, fetch returns every row written so far as a struct
** array the caller releases. */
DIPPER_API int dipper_memory_push_json(dipper *db, const char *table, const char *jsonl, size_t len);
DIPPER_API int dipper_memory_fetch(dipper *db, const char *table, struct ArrowSchema *schema,
                                   struct ArrowArray *array);

/* A flag for dipper_explain: the plan as one JSON object instead of text,
**   {"statements": [{"summary": "CreateTable t ...", ...}, {"streaming": true, "roots": [node]}]}
** a statement with "summary" (DDL, SET, SHOW: the line of the text) and/or
** "streaming" and "roots" (queries, INSERTs), each node
**   {"kind": "Window", "args": "kind=HOP time=ts size=1 min slide=30 s",
**    "schema": [{"name": "ts", "type": "TIMESTAMP(3)"}],
**    "bounded": false, "modes": ["append", "update"], "changelog": "insert-only",
**    "time": [{"column": "ts", "watermark": {"id": 0, "source": "t", "column": "ts",
**              "delay": "10 s"}}],       (or {"column": "p", "proctime": true})
**    "state": {"kind": "watermark", "description": "..."},
**    "inputs": [node, ...], "subqueries": [{"name": "$subquery0", "plan": node}]}
** ("args" is the text line after the kind; NO_SCHEMA and NO_STREAMING leave
** out "schema" and bounded..state as they leave out the text's lines). */
#define DIPPER_EXPLAIN_JSON 4u

/* ---- what each statement of a program is ----
**
** For a caller that runs a program statement by statement (a SQL client). */
typedef enum dipper_stmt_kind {
  DIPPER_STMT_SESSION = 1, /* CREATE, DROP, SET 'k' = 'v', RESET, USE: it took effect
                              when it compiled; nothing to run, no rows */
  DIPPER_STMT_QUERY,       /* a bare SELECT: rows (dipper_run prints them, dipper_execute
                              hands them out) */
  DIPPER_STMT_INSERT,      /* an INSERT or a statement set: its sinks get the rows */
  DIPPER_STMT_RESULT       /* SHOW TABLES|VIEWS|FUNCTIONS, DESCRIBE, SET alone, EXPLAIN:
                              rows taken when it compiled (the catalog at that point of
                              the text); nothing runs.  dipper_execute hands the rows
                              out on either engine and in either mode (not the empty
                              stream of other DDL); dipper_run and dipper_query_start
                              pass over it */
} dipper_stmt_kind;

/* The kind of statement `stmt` (0-based, < dipper_program_count) in *out, a
** dipper_stmt_kind.  DIPPER_MISUSE when prog or out is NULL or stmt is out
** of range. */
DIPPER_API int dipper_program_stmt_kind(const dipper_program *prog, int stmt, int *out);

/* ---- the text of values ----
**
** The one formatter of what dipper shows a person: the console sink and a
** bare SELECT's tables print values with it, and so does the `dipper`
** command (tables, CSV, JSON lines, the progress line's watermark), so a
** value reads the same everywhere.  Text forms: integers and DECIMAL exact
** (every digit of the scale), FLOAT/DOUBLE the shortest text that reads back
** the same (NaN, Infinity), BOOLEAN true/false, DATE 2024-01-31, TIME and
** TIMESTAMP(p) with p fraction digits (2024-01-31 12:30:00.500 for p = 3,
** .500000 for p = 6), INTERVAL as Flink prints it (+0 00:01:30.000,
** +1-02), BYTES in base64, ROW {1, a}, ARRAY [1, 2], MAP
** {k -> v}, NULL as NULL.  With DIPPER_FORMAT_JSON each cell is JSON text
** instead: strings quoted, NULL as null, ROW and MAP as objects, ARRAY as a
** list, timestamps as strings (at least 3 fraction digits, 'Z' after a
** TIMESTAMP_LTZ), NaN and Infinity as strings. */
#define DIPPER_FORMAT_JSON 1u

/*
** The text of every value of a struct array (one child per column, as
** dipper_execute's stream and the callback sink hand out): on DIPPER_OK *out
** is an array of array->length * n_children NUL-terminated strings, row
** by row (cell [r * ncols + c]), in one block the caller frees with
** dipper_free.  The precision of a TIMESTAMP(p) or TIME(p) column comes from
** the field metadata {"dipper.precision": "p"} that dipper's arrays carry
** (6 without it, Arrow's µs); a column of an Arrow format dipper has no type
** for shows "<format F>" in each cell.  DIPPER_MISUSE when schema is not a
** struct matching array; DIPPER_NOMEM.  Borrows schema and array for the call.
*/
DIPPER_API int dipper_format_values(const struct ArrowSchema *schema,
                                    const struct ArrowArray *array, unsigned flags, char ***out);

/* A TIMESTAMP(precision) value (µs since the epoch) as the text above, e.g.
** "2024-01-31 12:30:00.500", into buf (always NUL-terminated when cap > 0);
** returns the length it needed, like snprintf. */
DIPPER_API int dipper_format_timestamp(int64_t micros, int precision, char *buf, size_t cap);

/* ---- user-defined functions in C ----
**
** Modelled on SQLite's sqlite3_create_function_v2 and DuckDB's C API, with
** Arrow C Data arrays for the values: a function is called once per batch of
** rows (vectorized), with one array per argument, and answers with one array.
** A C function is usable wherever a built-in one is (SELECT, WHERE, GROUP BY,
** OVER, streaming and batch) on the embedded engine; on Spark a query that
** calls one is refused at compile time (Spark cannot run C code).  SQL
** functions (CREATE FUNCTION f(a INT) RETURNS INT RETURN ..) need no API.
**
** Types are SQL type names, as in CREATE TABLE: "INT", "STRING",
** "DECIMAL(10, 2)", "TIMESTAMP(3)", "ARRAY<STRING>".  The arrays are in the
** formats dipper exports (vector_import.h lists them): INT "i" (int32),
** BIGINT "l", DOUBLE "g", BOOLEAN "b", STRING "u" (int32 offsets), DATE
** "tdD", TIMESTAMP(p) "tsu:" (µs), DECIMAL "d:P,S" (128-bit), ... .
** Arguments are cast to the declared types before the call (an implicit cast
** only: an INT argument for a BIGINT parameter, not a STRING for an INT).
** NULL arguments reach the function (their validity bits are clear): a
** function decides what NULL gives. */

/* What a function is called with besides its arrays: borrowed for the call. */
typedef struct dipper_function_ctx dipper_function_ctx;

/* The user pointer given when the function was created. */
DIPPER_API void *dipper_function_user(dipper_function_ctx *ctx);
/* Fail the call: the query's batch fails with DIPPER_DATA and "function
** NAME: MESSAGE (row R: the arguments' values)", R the 0-based row of the
** arrays the call got (-1: no row in particular).  The function then returns
** non-zero.  `message` is copied.  Returns DIPPER_DATA. */
DIPPER_API int dipper_function_error(dipper_function_ctx *ctx, int64_t row, const char *message);

/* A scalar function: args[0..nargs) (with their schemas), each `nrows` long,
** borrowed for the call.  It fills *out with an array of nrows values of the
** declared result type, as an Arrow producer does (its buffers and a release
** callback of its own; dipper calls release once it has copied the values).
** Returns 0, or non-zero to fail (after dipper_function_error, or with a
** generic message). */
typedef int (*dipper_scalar_fn)(dipper_function_ctx *ctx, int nargs,
                                const struct ArrowSchema *const *schemas,
                                const struct ArrowArray *const *args, int64_t nrows,
                                struct ArrowArray *out);

/* Flags of dipper_create_*_function. */
#define DIPPER_FUNCTION_DETERMINISTIC 1u /* the same arguments give the same result: a
                                            call of constants may be computed once */

/* The callbacks of an aggregate.  Its state is `state_size` bytes per group
** that dipper keeps (aligned to 16 bytes) and writes into checkpoints as
** they are: a state must be plain bytes — no pointers, nothing that would not
** mean the same after a restart.
**   init      makes a new group's state (the bytes are zero before).
**   update    folds rows into their groups: row r of the args goes into
**             states[r] (several rows may share one state).  0 or non-zero
**             (after dipper_function_error) to fail.
**   combine   folds the state src into dst (session windows merging, OVER
**             frames); src is left as it was.
**   finalize  fills *out (as a scalar function does) with one value per state
**             of states[0..n), in the declared result type.
** A struct the caller hands in: set size to sizeof(dipper_aggregate_fns). */
typedef struct dipper_aggregate_fns {
  size_t size;
  size_t state_size;         /* > 0, at most 1 MiB */
  void (*init)(void *user, void *state);
  int (*update)(dipper_function_ctx *ctx, int nargs, const struct ArrowSchema *const *schemas,
                const struct ArrowArray *const *args, int64_t nrows, void *const *states);
  int (*combine)(dipper_function_ctx *ctx, const void *src, void *dst);
  int (*finalize)(dipper_function_ctx *ctx, int64_t n, const void *const *states,
                  struct ArrowArray *out);
} dipper_aggregate_fns;

/* Create (or replace) the function `name` (case-insensitive) of nargs
** parameters of arg_types[0..nargs) and result type return_type, for the
** statements compiled from now on.  On DIPPER_OK the handle owns user:
** destroy (NULL: nothing to free) is called with it exactly once, when the
** function has ended — replaced by another of the same name, dropped (DROP
** FUNCTION, dipper_drop_function) or the handle closed — and no program
** compiled with a call of it is left (dipper_program_free).  On failure
** nothing changed and the caller keeps user: DIPPER_MISUSE (NULL name or fn,
** nargs < 0 or > 64, a NULL type), DIPPER_TYPE (a type that does not parse,
** with a diagnostic), DIPPER_DUPLICATE (a built-in function or a SQL
** function has the name), DIPPER_NOMEM. */
DIPPER_API int dipper_create_scalar_function(dipper *db, const char *name, int nargs,
                                             const char *const *arg_types, const char *return_type,
                                             unsigned flags, dipper_scalar_fn fn, void *user,
                                             dipper_free_fn destroy);
/* The same for an aggregate (usable with GROUP BY, windows, OVER, FILTER and
** DISTINCT); fns is copied; every callback must be set. */
DIPPER_API int dipper_create_aggregate_function(dipper *db, const char *name, int nargs,
                                                const char *const *arg_types,
                                                const char *return_type, unsigned flags,
                                                const dipper_aggregate_fns *fns, void *user,
                                                dipper_free_fn destroy);
/* Drop a C or SQL function, as DROP FUNCTION does.  DIPPER_NAME when there is
** none of that name. */
DIPPER_API int dipper_drop_function(dipper *db, const char *name);

/* ---- Arrow C Data Interface (https://arrow.apache.org/docs/format/CDataInterface.html).
** Columnar results cross the API in this form.  The definitions are the
** standard ones, guarded so that they coexist with Arrow's own header. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  void (*release)(struct ArrowSchema *);
  void *private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  void (*release)(struct ArrowArray *);
  void *private_data;
};
#endif /* ARROW_C_DATA_INTERFACE */

/* The Arrow C Stream Interface
** (https://arrow.apache.org/docs/format/CStreamInterface.html): a pull-based
** stream of arrays sharing one schema.  get_next sets out->release to NULL at
** the end of the stream; the callbacks return 0 or an errno value (EIO, ENOMEM,
** EINVAL), and get_last_error then describes the failure (borrowed until the
** next call on the stream). */
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  const char *(*get_last_error)(struct ArrowArrayStream *);
  void (*release)(struct ArrowArrayStream *);
  void *private_data;
};
#endif /* ARROW_C_STREAM_INTERFACE */

#ifdef __cplusplus
}
#endif
#endif /* DIPPER_H */
