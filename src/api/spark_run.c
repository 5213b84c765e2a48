/*
** spark_run.c — programs of a handle that runs on Spark Connect ("sc://...",
** at dipper_open or by SET 'dipper.engine'): statements in batch mode,
** translated to Spark Connect relations and run by the server.
**
** Owns: the handle's Spark session (opened by the first call that runs
** something, so that compiling and checking need no server; reopened when
** the address in effect changes), the rows of memory tables sent to Spark,
** the Spark side of a query handle (dp_spark_query: one INSERT or bare
** SELECT, run by its first step), and dipper_execute on Spark.
** Does not own: the protocol (spark/client.c), plans as relations
** (spark/translate.c), Arrow to dipper vectors (core/vector_import.c), the
** sink connectors (connectors/).
**
** Where the rows go:
**   - a bare SELECT: collected (ExecutePlan of its relation, Arrow batches
**     decoded by the client) and handed out by dipper_execute, or printed by
**     dipper's console sink under dipper_run, as on the embedded engine;
**   - an INSERT into a memory, console, blackhole or callback table: the
**     input relation collected, imported into dipper batches and written
**     through dipper's own sink connector (one micro-batch, id 0);
**   - an INSERT into a filesystem or kafka table: Spark writes, by the
**     translator's WriteOperation command.
** Streaming mode: an INSERT into a callback table is foreachBatch from C
** (spark/handoff.h): dipper's own Spark sink, its jar uploaded once per
** session, holds each micro-batch until this side read it, handed it to the
** registered callback (dipper's callback sink, with Spark's batch id) and
** acknowledged it; the calls that look at the query (step, await) take the
** batches, so a query nobody steps fails after the sink's timeout.
** Each INSERT is one Spark Structured Streaming query,
** started when the query handle is made (WriteStreamOperationStart, built by
** translate_stream.c with the session's trigger and checkpoint options, and
** the Spark settings of stream_rules.c set first) and then watched: a step
** polls its status and takes in every progress report Spark made since the
** last one (lastProgress, or recentProgress when batches were missed), so
** that totals and late-row counts add up over every batch; the exception of
** a query that failed becomes the error.  dipper_execute refuses streaming
** statements (they run by their trigger, not to an end).
**
** Errors: the client's messages ("cannot reach Spark Connect at host:port:
** ...", "Spark: [ERROR_CLASS] message") become unplaced diagnostics with
** the client's dipper code; translation refusals keep their span.
*/
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/dipper_int.h"
#include "connectors/connector.h"
#include "core/vector_import.h"
#include "exec/exec_int.h"
#include "plan/analyze.h"
#include "spark/client.h"
#include "spark/grpc.h"
#include "spark/handoff.h"
#include "spark/stream_rules.h"
#include "spark/streaming.h"
#include "spark/translate.h"
#include "spark/translate_stream.h"
#include "spark/udf.h"
#include "spark/uuid.h"

static const dp_span nowhere = {0, 0, 0, 0};

#define STREAMING_SELECT_REFUSAL                                                            \
  "on Spark, a streaming SELECT over an unbounded input has no place to show its rows "     \
  "(Spark's console sink prints on the server): write it into a table with INSERT INTO "    \
  "(kafka, filesystem, or a memory table that Spark keeps queryable by its name), or run it " \
  "on the embedded engine"

/* ---- the address and the session ---- */

bool dp_spark_address_check(const char *addr, char *why, size_t cap) {
  /* The client's own parser: the address is checked by the code that will
  ** connect with it, every parameter included (grpc_max_message_size). */
  dp_sc_uri uri;
  dp_buf err = DP_BUF_INIT;
  int rc = dp_sc_uri_parse(addr, &uri, &err);
  dp_sc_uri_free(&uri);
  if (rc != DIPPER_OK)
    snprintf(why, cap, "%s", err.len ? dp_buf_cstr(&err) : "the Spark Connect address is malformed");
  dp_buf_free(&err);
  return rc == DIPPER_OK;
}

void dp_spark_disconnect(dipper *db) {
  if (!db || !db->spark) return;
  dp_sc_close(db->spark);
  db->spark = NULL;
  for (int i = 0; i < db->nspark_jars; i++) free(db->spark_jars[i]);
  free(db->spark_jars);
  db->spark_jars = NULL;
  db->nspark_jars = 0;
  free(db->spark_address);
  db->spark_address = NULL;
}

/* Record a client error as an unplaced diagnostic; returns its code. */
static int client_error(dp_diags *d, dp_sc_error *e, int rc) {
  int code = e->code ? e->code : rc;
  const char *msg = dp_buf_cstr(&e->message);
  dp_error(d, code, nowhere, "%s", msg && msg[0] ? msg : dipper_strerror(code));
  dp_sc_error_free(e);
  return code;
}

/* The handle's session, connecting (or reconnecting to a new address) now. */
static int session(dipper *db, dp_diags *d, dp_sc **out) {
  const char *addr = dp_api_spark_address(db);
  if (db->spark && db->spark_address && strcmp(db->spark_address, addr) == 0) {
    *out = db->spark;
    return DIPPER_OK;
  }
  dp_spark_disconnect(db);
  dp_sc_error err;
  dp_sc_error_init(&err);
  int rc = dp_sc_open(&db->spark, addr, &err);
  if (rc != DIPPER_OK) {
    db->spark = NULL;
    return client_error(d, &err, rc);
  }
  dp_sc_error_free(&err);
  db->spark_address = strdup(addr);
  if (!db->spark_address) {
    dp_spark_disconnect(db);
    return dp_error(d, DIPPER_NOMEM, nowhere, "out of memory connecting to Spark");
  }
  *out = db->spark;
  return DIPPER_OK;
}

/* ---- memory tables: their pushed rows as a LocalRelation ---- */

typedef struct spark_ctx {
  dipper *db;
  dp_diags *diags;
} spark_ctx;

/* The table's stored columns (what its source reads): every column but the
** computed ones, in declared order. */
static dp_schema *stored_columns(dp_arena *a, const dp_table_def *t) {
  dp_schema *s = dp_arena_calloc(a, 1, sizeof *s);
  if (!s) return NULL;
  s->cols = dp_arena_calloc(a, (size_t)(t->schema.ncols ? t->schema.ncols : 1), sizeof *s->cols);
  if (!s->cols) return NULL;
  for (int i = 0; i < t->schema.ncols; i++)
    if (!t->cols || t->cols[i].kind != DP_CK_COMPUTED) s->cols[s->ncols++] = t->schema.cols[i];
  return s;
}

/* Read every row pushed to a memory table through the memory connector's
** own source (its JSON decoding and bad-record policy), as one batch. */
static int memory_rows(void *user, const dp_table_def *t, struct ArrowSchema *schema,
                       struct ArrowArray *array) {
  spark_ctx *c = user;
  const dp_source_class *cls = dp_source_find("memory");
  dp_arena *a = dp_arena_new(0);
  dp_schema *cols = a ? stored_columns(a, t) : NULL;
  dp_batch *b = cols ? dp_batch_new(cols, 0) : NULL;
  if (!cls || !b) {
    dp_batch_free(b);
    dp_arena_free(a);
    return cls ? DIPPER_NOMEM : DIPPER_INTERNAL;
  }
  dp_source src;
  memset(&src, 0, sizeof src);
  src.cls = cls;
  src.db = c->db;
  src.table = t;
  src.schema = cols;
  src.diags = c->diags;
  int rc = cls->open(&src);
  /* One push per planned batch; a bounded memory table (batch mode) says
  ** when none is left. */
  for (int guard = 0; rc == DIPPER_OK; guard++) {
    bool exhausted = false, done = false;
    int64_t before = b->nrows;
    rc = cls->plan_batch(&src, 0, &exhausted);
    if (rc != DIPPER_OK || exhausted) break;
    while (rc == DIPPER_OK && !done) rc = cls->read(&src, b, INT64_C(1) << 20, &done);
    if (rc == DIPPER_OK) rc = cls->commit(&src);
    if (b->nrows == before && guard > (1 << 20)) break; /* a streaming table with no end */
  }
  if (src.state) cls->close(&src);
  if (rc == DIPPER_OK) rc = dp_batch_export_move(b, schema, array);
  dp_batch_free(b);
  dp_arena_free(a);
  return rc;
}

/* ---- running one root ---- */

/* Write collected Arrow batches through a dipper sink connector (one
** micro-batch, id 0), as the embedded engine's sink operator would. */
static int write_local(dipper *db, const dp_query_plan *q, const dp_plan *root,
                       const dp_table_def *table, const dp_arrow_batches *rows, dp_diags *d,
                       int64_t *written) {
  const char *connector = table ? (table->connector ? table->connector : "") : "console";
  const dp_sink_class *cls = dp_sink_find(connector);
  if (!cls)
    return dp_error(d, DIPPER_UNSUPPORTED, root->span,
                    "dipper has no sink for connector '%s' (table `%s`) to write Spark's rows to",
                    connector, table ? table->name : "?");
  dp_sink sink;
  memset(&sink, 0, sizeof sink);
  sink.cls = cls;
  sink.db = db;
  sink.table = table;
  sink.schema = &root->schema;
  sink.mode = dp_analyze_output_mode(q, root);
  sink.diags = d;
  int rc = cls->open(&sink);
  if (rc != DIPPER_OK) return rc;
  dp_batch *b = dp_batch_new(&root->schema, 0);
  dp_buf err = DP_BUF_INIT;
  if (!b) rc = DIPPER_NOMEM;
  for (int i = 0; rc == DIPPER_OK && i < rows->n; i++) {
    dp_batch_clear(b);
    rc = dp_batch_import(b, &rows->schema, &rows->arrays[i], &err);
    if (rc != DIPPER_OK) {
      dp_error(d, rc, root->span,
               "Spark's result does not fit the columns of %s%s%s: %s", table ? "table `" : "",
               table ? table->name : "the query", table ? "`" : "", dp_buf_cstr(&err));
      break;
    }
    if (b->nrows > 0) rc = cls->write(&sink, 0, b);
    *written += b->nrows;
  }
  if (rc == DIPPER_OK && cls->commit) rc = cls->commit(&sink, 0);
  if (cls->close) cls->close(&sink);
  dp_batch_free(b);
  dp_buf_free(&err);
  return rc;
}

static int ignore_response(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  (void)user;
  (void)r;
  return DIPPER_OK;
}

/* ---- Java functions: their jars uploaded, then registered (spark/udf.h) ---- */

/* The whole file at path, malloc'd, into *data; an error into d. */
static int read_jar(const char *path, dp_diags *d, dp_span span, uint8_t **data, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return dp_error(d, DIPPER_IO, span, "cannot read the jar '%s': %s", path, strerror(errno));
  dp_buf b = DP_BUF_INIT;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) dp_buf_put(&b, chunk, n);
  bool bad = ferror(fp) != 0;
  fclose(fp);
  if (bad || b.oom) {
    dp_buf_free(&b);
    return dp_error(d, bad ? DIPPER_IO : DIPPER_NOMEM, span, "cannot read the jar '%s'", path);
  }
  *len = b.len;
  *data = (uint8_t *)dp_buf_take(&b);
  return DIPPER_OK;
}

/* Upload the jar at path into the session, once per session. */
static int upload_jar(dipper *db, dp_sc *sc, const char *path, dp_span span, dp_diags *d) {
  for (int i = 0; i < db->nspark_jars; i++)
    if (strcmp(db->spark_jars[i], path) == 0) return DIPPER_OK;
  uint8_t *data = NULL;
  size_t len = 0;
  int rc = read_jar(path, d, span, &data, &len);
  if (rc != DIPPER_OK) return rc;
  dp_arena *a = dp_arena_new(0);
  const char *name = a ? dp_spark_jar_artifact(a, path) : NULL;
  dp_sc_error err;
  dp_sc_error_init(&err);
  rc = name ? dp_sc_add_artifact(sc, name, data, len, &err) : DIPPER_NOMEM;
  if (rc != DIPPER_OK) rc = client_error(d, &err, rc);
  dp_sc_error_free(&err);
  dp_arena_free(a);
  free(data);
  char **g = rc ? NULL : realloc(db->spark_jars, (size_t)(db->nspark_jars + 1) * sizeof *g);
  if (g) {
    db->spark_jars = g;
    if ((g[db->nspark_jars] = strdup(path))) db->nspark_jars++;
  }
  return rc;
}

/* Make the session know every Java function q calls, before q runs. */
static int java_functions(dipper *db, dp_sc *sc, const dp_query_plan *q, dp_diags *d) {
  int rc = DIPPER_OK;
  for (int i = 0; i < q->njava && rc == DIPPER_OK; i++) {
    const dp_udf_def *f = q->java[i];
    if (f->jar) rc = upload_jar(db, sc, f->jar, f->span, d);
    if (rc != DIPPER_OK) break;
    dp_arena *a = dp_arena_new(0);
    if (!a) return dp_error(d, DIPPER_NOMEM, nowhere, "out of memory registering %s", f->name);
    dp_spark_ctx ctx = {a, d, NULL, NULL};
    Spark__Connect__Plan *plan = NULL;
    rc = dp_spark_java_register_plan(&ctx, f, &plan);
    if (rc == DIPPER_OK) {
      dp_sc_error err;
      dp_sc_error_init(&err);
      rc = dp_sc_execute(sc, plan, ignore_response, NULL, 0, &err);
      if (rc != DIPPER_OK) rc = client_error(d, &err, rc);
      dp_sc_error_free(&err);
    }
    dp_arena_free(a);
  }
  return rc;
}

/* Run one root of q on Spark: a SELECT's rows into *rows (when rows is not
** NULL) or through the console sink; a SINK by its kind.  *written counts
** the rows that reached a dipper sink. */
static int run_root(dipper *db, const dp_query_plan *q, const dp_plan *root, dp_diags *d,
                    dp_arrow_batches *rows, int64_t *written) {
  dp_sc *sc = NULL;
  int rc = session(db, d, &sc);
  if (rc == DIPPER_OK) rc = java_functions(db, sc, q, d);
  if (rc != DIPPER_OK) return rc;
  dp_arena *arena = dp_arena_new(0);
  if (!arena) return dp_error(d, DIPPER_NOMEM, nowhere, "out of memory translating the query");
  spark_ctx user = {db, d};
  dp_spark_ctx ctx = {arena, d, memory_rows, &user};
  dp_sc_error err;
  dp_sc_error_init(&err);
  dp_arrow_batches got;
  memset(&got, 0, sizeof got);
  if (root->kind != DP_P_SINK) {
    Spark__Connect__Relation *rel = NULL;
    rc = dp_spark_relation(&ctx, q, root, &rel);
    if (rc == DIPPER_OK) {
      rc = dp_sc_collect(sc, rel, rows ? rows : &got, &err);
      if (rc != DIPPER_OK) rc = client_error(d, &err, rc);
    }
    if (rc == DIPPER_OK && !rows) rc = write_local(db, q, root, NULL, &got, d, written);
  } else {
    dp_spark_sink sink;
    memset(&sink, 0, sizeof sink);
    rc = dp_spark_sink_plan(&ctx, q, root, &sink);
    if (rc == DIPPER_OK && sink.kind == DP_SPARK_SINK_WRITE) {
      rc = dp_sc_execute(sc, sink.command, ignore_response, NULL, 0, &err);
      if (rc != DIPPER_OK) rc = client_error(d, &err, rc);
    } else if (rc == DIPPER_OK) {
      rc = dp_sc_collect(sc, sink.input, &got, &err);
      if (rc != DIPPER_OK) rc = client_error(d, &err, rc);
      if (rc == DIPPER_OK) rc = write_local(db, q, root, root->u.sink.table, &got, d, written);
    }
  }
  if (rc != DIPPER_OK && d->count == 0)
    dp_error(d, rc, root->span, "running the query on Spark failed: %s", dipper_strerror(rc));
  dp_arrow_batches_free(&got);
  dp_sc_error_free(&err);
  dp_arena_free(arena);
  return rc;
}

/* A SELECT in streaming mode over bounded inputs only: its append-mode
** result is the batch one, which Spark computes as a batch query. */
static bool bounded_select(const dp_query_plan *q, const dp_plan *root) {
  return q->streaming && root->kind != DP_P_SINK && root->props.analyzed && root->props.bounded;
}

/* dipper_execute runs a statement to its end; on Spark a streaming one is a
** Structured Streaming query, which runs by its trigger: say where it goes. */
static int refuse_streaming(const dp_query_plan *q, const dp_plan *root, dp_diags *d) {
  if (!q->streaming || bounded_select(q, root)) return DIPPER_OK;
  return dp_error(d, DIPPER_STREAMING, root->span,
                  "this statement is a streaming query on Spark, which runs by its trigger "
                  "rather than to an end: start it with dipper_query_start or dipper_run "
                  "(`dipper run`), or put SET 'execution.runtime-mode' = 'batch' before it");
}

/* ---- dipper_execute on Spark ---- */

int dp_spark_execute(dipper *db, const dipper_program *prog, const dp_program_stmt *ps, int stmt,
                     dp_api_result *res) {
  (void)prog;
  (void)stmt;
  const dp_query_plan *q = &ps->plan;
  if (ps->explain || q->nroots == 0) return dp_api_result_empty(res);
  for (int r = 0; r < q->nroots; r++) {
    int rc = refuse_streaming(q, q->roots[r], &db->diags);
    if (rc != DIPPER_OK) return rc;
  }
  int64_t written = 0;
  if (q->roots[0]->kind == DP_P_SINK) {
    for (int r = 0; r < q->nroots; r++) {
      int rc = run_root(db, q, q->roots[r], &db->diags, NULL, &written);
      if (rc != DIPPER_OK) return rc;
    }
    return dp_api_result_empty(res);
  }
  dp_arrow_batches rows;
  memset(&rows, 0, sizeof rows);
  int rc = run_root(db, q, q->roots[0], &db->diags, &rows, &written);
  if (rc != DIPPER_OK) return rc;
  /* Spark names the columns as the translator aliased them: the plan's names. */
  res->schema = rows.schema;
  rows.schema.release = NULL;
  for (int i = 0; rc == DIPPER_OK && i < rows.n; i++)
    if (rows.arrays[i].length > 0) rc = dp_api_result_push(res, &rows.arrays[i]);
  dp_arrow_batches_free(&rows);
  if (rc != DIPPER_OK)
    return dp_error(&db->diags, rc, nowhere, "out of memory handing out Spark's result");
  return DIPPER_OK;
}

/* ---- compile-time checks ---- */

int dp_spark_check_stmt(dipper *db, dp_arena *a, const dp_query_plan *q) {
  if (q->nroots == 0) return DIPPER_OK;
  int rc = dp_spark_check(q, a, &db->diags);
  int rt = dp_spark_realtime_check(q, dp_catalog_option(db->catalog, "dipper.trigger"), &db->diags);
  if (rc == DIPPER_OK) rc = rt;
  for (int r = 0; r < q->nroots; r++) {
    const dp_plan *root = q->roots[r];
    if (q->streaming && root->kind != DP_P_SINK && !bounded_select(q, root)) {
      dp_error(&db->diags, DIPPER_UNSUPPORTED, root->span, STREAMING_SELECT_REFUSAL);
      if (rc == DIPPER_OK) rc = DIPPER_UNSUPPORTED;
    }
  }
  return rc;
}

/* ---- a query handle on Spark (dipper_query_start / step / run) ---- */

/* A streaming query's server-side calls wait at most this long each, so that
** dipper_interrupt is seen soon while awaiting. */
#define AWAIT_SLICE_MS 1000
/* dp_sc_keepalive's interval: far below Spark Connect's idle session timeout. */
#define KEEPALIVE_MS 30000

struct dp_spark_query {
  dipper *db;
  const dp_query_plan *q;
  const dp_plan *root;
  dp_arena *arena;      /* the name */
  dp_arena *call_arena; /* the diagnostics of the last call (reset by the next) */
  dp_diags diags;
  int failed;           /* the query failed: every later call returns this */
  dipper_progress progress;
  /* streaming: the Spark query */
  bool streaming, started, ended, stopped;
  dp_sc *session;       /* the session that started it (the handle's; checked before use) */
  dp_sq sq;
  int64_t last_report_us; /* timestamp of the newest report taken in */
  /* a callback sink: foreachBatch from C (spark/handoff.h) */
  bool handoff;         /* the query writes to dipper's Spark sink */
  int64_t last_look_us; /* when a step last looked at the query (poll_stream) */
  char handoff_key[DP_UUID_LEN + 1]; /* this run's key */
  uint64_t handoff_nonce; /* one per read: no plan cached for an earlier one fits */
  dp_sink hsink;        /* dipper's callback sink, open from the start to the free */
  bool hsink_open;
  dp_batch *hbatch;     /* a batch of Spark's rows, imported */
};

/* Forget the last call's diagnostics, unless the query failed: its error is
** what every later call reports. */
static void begin_call(dp_spark_query *sq) {
  if (sq->failed) return;
  dp_arena_reset(sq->call_arena);
  dp_diags_init(&sq->diags, sq->call_arena, NULL, NULL, 0);
}

/* The session the streaming query runs on, if the handle still has it. */
static int stream_session(dp_spark_query *sq, dp_sc **out) {
  if (sq->session && sq->db->spark == sq->session) {
    *out = sq->session;
    return DIPPER_OK;
  }
  return dp_error(&sq->diags, DIPPER_MISUSE, nowhere,
                  "query `%s` was started on a Spark Connect session that this handle has "
                  "since closed (the engine address changed): a Spark query is reached only "
                  "through its session; free the queries before changing 'dipper.engine'",
                  sq->progress.name);
}

/* ---- foreachBatch from C: a callback table's batches (spark/handoff.h) ---- */

/* How long a step waits for dipper's Spark sink to hold a batch (as long as
** dipper_run's pause between two looks at a Spark query, which it skips for
** these queries: dp_spark_query_waits), and for how long it goes on taking
** batches while they come (dipper_run's other queries wait meanwhile; an
** interrupt ends it sooner).  The sink answers a poll as soon as it holds a
** batch, so the wait costs no latency; the looks at the query's status and
** reports (three calls) do, as nothing polls during them, so a step makes
** them at most once every HANDOFF_LOOK_US, and after a wait that brought no
** batch. */
#define HANDOFF_STEP_WAIT_MS 500
#define HANDOFF_STEP_BUDGET_US INT64_C(2000000)
#define HANDOFF_LOOK_US INT64_C(1000000)

/* Open dipper's callback sink (the registration is looked up now: a name
** nobody registered fails the start, before Spark runs anything), upload
** dipper's Spark sink into the session, and make this run's key. */
static int open_handoff(dp_spark_query *sq, dp_sc *sc) {
  const dp_table_def *t = sq->root->u.sink.table;
  dp_sink *k = &sq->hsink;
  memset(k, 0, sizeof *k);
  k->cls = dp_sink_find("callback");
  k->db = sq->db;
  k->table = t;
  k->schema = &sq->root->schema;
  k->mode = dp_analyze_output_mode(sq->q, sq->root);
  k->diags = &sq->diags;
  if (!k->cls) return dp_error(&sq->diags, DIPPER_INTERNAL, nowhere, "dipper has no callback sink");
  int rc = k->cls->open(k);
  if (rc != DIPPER_OK) return rc;
  sq->hsink_open = true;
  if (!(sq->hbatch = dp_batch_new(&sq->root->schema, 0)))
    return dp_error(&sq->diags, DIPPER_NOMEM, nowhere, "out of memory starting a query");
  char path[4096];
  dp_buf why = DP_BUF_INIT;
  rc = dp_handoff_jar(path, sizeof path, &why);
  if (rc != DIPPER_OK) dp_error(&sq->diags, rc, t->with_span, "%s", dp_buf_cstr(&why));
  dp_buf_free(&why);
  if (rc == DIPPER_OK && path[0]) rc = upload_jar(sq->db, sc, path, t->with_span, &sq->diags);
  if (rc == DIPPER_OK && dp_uuid_v4(sq->handoff_key) != DIPPER_OK)
    rc = dp_error(&sq->diags, DIPPER_IO, nowhere,
                  "cannot make the key of dipper's Spark sink (/dev/urandom cannot be read)");
  sq->handoff = rc == DIPPER_OK;
  return rc;
}

/* Forget the sink's slot on the server (best effort: the query has ended)
** and close dipper's callback sink. */
static void close_handoff(dp_spark_query *sq) {
  if (sq->handoff && sq->started && sq->db->spark == sq->session) {
    dp_sc_error err;
    dp_sc_error_init(&err);
    (void)dp_handoff_close(sq->session, sq->handoff_key, &err);
    dp_sc_error_free(&err);
  }
  sq->handoff = false;
  if (sq->hsink_open && sq->hsink.cls->close) sq->hsink.cls->close(&sq->hsink);
  sq->hsink_open = false;
  dp_batch_free(sq->hbatch);
  sq->hbatch = NULL;
}

/* Start the INSERT as a Spark streaming query. */
static int start_stream(dp_spark_query *sq) {
  dipper *db = sq->db;
  dp_sc *sc = NULL;
  int rc = session(db, &sq->diags, &sc);
  if (rc == DIPPER_OK) rc = java_functions(db, sc, sq->q, &sq->diags);
  if (rc != DIPPER_OK) return rc;
  dp_sc_error err;
  dp_sc_error_init(&err);
  /* Settings Spark copies into a new query's checkpoint: set before the start. */
  const char *keys[16], *values[16];
  int nconf = dp_spark_stream_confs(db->catalog, keys, values, 16);
  if (nconf > 16) nconf = 16;
  if (nconf > 0) {
    rc = dp_sc_config_set(sc, nconf, keys, values, &err);
    if (rc != DIPPER_OK) return client_error(&sq->diags, &err, rc);
  }
  dp_arena *a = dp_arena_new(0);
  if (!a) return dp_error(&sq->diags, DIPPER_NOMEM, nowhere, "out of memory starting a query");
  spark_ctx user = {db, &sq->diags};
  dp_spark_ctx ctx = {a, &sq->diags, memory_rows, &user};
  dp_spark_stream_opts o;
  memset(&o, 0, sizeof o);
  o.trigger = dp_catalog_option(db->catalog, "dipper.trigger");
  o.checkpoint_dir = dp_catalog_option(db->catalog, "execution.checkpointing.dir");
  o.server_version = dp_sc_server_version(sc);
  const dp_table_def *t = sq->root->u.sink.table;
  if (t && t->connector && !strcmp(t->connector, "callback")) {
    rc = open_handoff(sq, sc);
    if (rc != DIPPER_OK) {
      dp_arena_free(a);
      dp_sc_error_free(&err);
      return rc;
    }
    o.handoff_key = sq->handoff_key;
  }
  Spark__Connect__Plan *plan = NULL;
  rc = dp_spark_stream_start_plan(&ctx, sq->q, sq->root, &o, &plan);
  if (rc == DIPPER_OK) {
    rc = dp_sq_start(sc, plan, &sq->sq, &err);
    if (rc != DIPPER_OK) rc = client_error(&sq->diags, &err, rc);
  }
  if (rc == DIPPER_OK) {
    sq->started = true;
    sq->session = sc;
  } else if (sq->diags.count == 0) {
    dp_error(&sq->diags, rc, sq->root->span, "starting the streaming query on Spark failed: %s",
             dipper_strerror(rc));
  }
  dp_arena_free(a);
  dp_sc_error_free(&err);
  return rc;
}

/* Add one of Spark's progress reports to the query's progress. */
static void take_report(dp_spark_query *sq, const dp_spark_progress *r, dp_progress_ring *ring) {
  dipper_progress *p = &sq->progress;
  sq->last_report_us = r->timestamp_us;
  /* While a query waits for data Spark reports its idle triggers too (every
  ** noDataProgressEventInterval): no batch ran (no addBatch duration), and
  ** the batchId is the next batch's.  Taken as a batch it would make that
  ** batch look seen already, and take_new_reports would then skip its
  ** report (its rows, its late rows) when the one after it comes. */
  if (r->add_batch_ms < 0) return;
  p->batch_id = r->batch_id;
  /* Spark 4.1's report leaves the query's totals out (clients sum the
  ** sources, as pyspark does): sum them when they are missing. */
  int64_t in = r->num_input_rows;
  double rate = r->processed_rows_per_second;
  if (in < 0 || isnan(rate)) {
    int64_t sum_in = 0;
    double sum_rate = 0;
    for (int i = 0; i < r->nsources; i++) {
      if (r->sources[i].num_input_rows > 0) sum_in += r->sources[i].num_input_rows;
      if (!isnan(r->sources[i].processed_rows_per_second))
        sum_rate += r->sources[i].processed_rows_per_second;
    }
    if (in < 0) in = sum_in;
    if (isnan(rate)) rate = sum_rate;
  }
  p->input_rows = in > 0 ? in : 0;
  p->output_rows = r->sink_output_rows > 0 ? r->sink_output_rows : 0;
  /* dipper's rates are over the batch's duration: Spark's processed rate. */
  p->input_rows_per_sec = rate;
  p->batch_duration_us = r->batch_duration_ms > 0 ? r->batch_duration_ms * 1000 : 0;
  p->output_rows_per_sec =
      p->batch_duration_us > 0 ? (double)p->output_rows * 1e6 / (double)p->batch_duration_us : 0;
  /* Spark says 1970-01-01T00:00:00Z until an event has been seen. */
  p->watermark = r->has_watermark && r->watermark_us > 0 ? r->watermark_us : DP_WATERMARK_NONE;
  p->state_rows = r->state_rows_total > 0 ? r->state_rows_total : 0;
  /* Per batch in Spark; since the start in dipper_progress. */
  if (r->state_rows_dropped_by_watermark > 0) p->late_rows_dropped += r->state_rows_dropped_by_watermark;
  p->total_input_rows += p->input_rows;
  p->total_output_rows += p->output_rows;
  if (ring) dp_progress_ring_push(ring, p);
}

/* Take in every report newer than the last one taken: lastProgress, or the
** recent list when batches ran since (a poll sees one report, Spark may run
** several batches meanwhile, and each counts in the totals). */
static int take_new_reports(dp_spark_query *sq, dp_sc *sc, dp_progress_ring *ring, bool *ran,
                            dp_sc_error *err) {
  dp_spark_progress last;
  bool has = false;
  int rc = dp_sq_last_progress(sc, &sq->sq, &last, &has, err);
  if (rc != DIPPER_OK || !has || last.timestamp_us <= sq->last_report_us) {
    dp_spark_progress_free(&last);
    return rc;
  }
  if (last.batch_id <= sq->progress.batch_id + 1) {
    *ran = last.add_batch_ms >= 0; /* not an idle trigger's report */
    take_report(sq, &last, ring);
    dp_spark_progress_free(&last);
    return DIPPER_OK;
  }
  dp_spark_progress_free(&last);
  *ran = true; /* batches ran since the last look */
  dp_spark_progress *recent = NULL;
  int n = 0;
  rc = dp_sq_recent_progress(sc, &sq->sq, &recent, &n, err);
  for (int i = 0; i < n; i++) {
    if (rc == DIPPER_OK && recent[i].timestamp_us > sq->last_report_us)
      take_report(sq, &recent[i], ring);
    dp_spark_progress_free(&recent[i]);
  }
  free(recent);
  return rc;
}

/* Is s[0..n) a Java class name ("org.apache.spark...Exception")? */
static bool java_class(const char *s, size_t n) {
  bool dot = false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '.') dot = true;
    else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '$'))
      return false;
  }
  return dot && n > 0;
}

/* "Spark: [CLASS] message" from the query's exception ("CLASS: message").
** Spark wraps the cause: "[STREAM_FAILED] org.apache...StreamingQueryException:
** [CAUSE] text\n=== Streaming Query ===\n<the query's plan>".  The cause is
** what the user must act on: keep it, its class and text, and leave out the
** wrapper and the plan dump. */
static int record_exception(dp_spark_query *sq, const char *ex) {
  const char *msg = ex;
  size_t cls = 0;
  const char *colon = strstr(ex, ": ");
  if (colon) {
    cls = (size_t)(colon - ex);
    for (size_t i = 0; i < cls; i++)
      if (!(ex[i] == '_' || (ex[i] >= 'A' && ex[i] <= 'Z') || (ex[i] >= '0' && ex[i] <= '9')))
        cls = 0;
    if (cls) msg = colon + 2;
  }
  const char *cls_text = ex;
  /* "org....Exception: [CAUSE] text" (after the class): the cause */
  const char *jcolon0 = strstr(msg, ": ");
  if (jcolon0 && java_class(msg, (size_t)(jcolon0 - msg)) && jcolon0[2] == '[') {
    msg = jcolon0 + 2;
    cls = 0;
  }
  /* "[STREAM_FAILED] org....Exception: [CAUSE] text": the cause */
  if (msg[0] == '[') {
    const char *close = strchr(msg, ']');
    const char *jc = close ? close + 1 : NULL;
    while (jc && *jc == ' ') jc++;
    const char *jcolon = jc ? strstr(jc, ": ") : NULL;
    if (jcolon && java_class(jc, (size_t)(jcolon - jc)) && jcolon[2] == '[') {
      msg = jcolon + 2;
      cls = 0; /* the cause carries its own class */
    } else if (cls && close && (size_t)(close - msg - 1) == cls &&
               strncmp(msg + 1, cls_text, cls) == 0) {
      cls = 0; /* "[CLASS] text" already */
    }
  }
  size_t len = strlen(msg);
  const char *dump = strstr(msg, "\n=== Streaming Query ===");
  if (dump) len = (size_t)(dump - msg);
  /* the listener bus's terminated event carries the Java stack after it */
  const char *stack = strstr(msg, "\n\tat ");
  if (stack && (size_t)(stack - msg) < len) len = (size_t)(stack - msg);
  while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) len--;
  if (cls)
    dp_error(&sq->diags, DIPPER_REMOTE, nowhere, "Spark: [%.*s] %.*s (query `%s`)", (int)cls,
             cls_text, (int)len, msg, sq->progress.name);
  else
    dp_error(&sq->diags, DIPPER_REMOTE, nowhere, "Spark: %.*s (query `%s`)", (int)len, msg,
             sq->progress.name);
  sq->failed = DIPPER_REMOTE;
  return DIPPER_REMOTE;
}

/* The query is no longer active on the server: failed, stopped, or done. */
static int take_end(dp_spark_query *sq, dp_sc *sc, dp_sc_error *err) {
  char *ex = NULL;
  int rc = dp_sq_exception(sc, &sq->sq, &ex, err);
  if (rc != DIPPER_OK) return rc;
  sq->ended = true;
  if (ex) {
    rc = record_exception(sq, ex);
    free(ex);
    return rc;
  }
  if (!sq->stopped) sq->progress.finished = 1;
  return DIPPER_OK;
}

/* A call to dipper's Spark sink failed.  When the query ended meanwhile
** (its sink timed out, it failed, it was stopped), its end is what the
** caller sees: the query's error, or none for a clean end. */
static int handoff_failed(dp_spark_query *sq, dp_sc *sc, dp_sc_error *err, int rc) {
  dp_sc_error e;
  dp_sc_error_init(&e);
  dp_sq_status st;
  if (dp_sq_get_status(sc, &sq->sq, &st, &e) == DIPPER_OK && !st.active) {
    dp_sc_error_free(err);
    int end = take_end(sq, sc, &e);
    if (end != DIPPER_OK && !sq->failed) return client_error(&sq->diags, &e, end);
    dp_sc_error_free(&e);
    return end;
  }
  dp_sc_error_free(&e);
  return client_error(&sq->diags, err, rc);
}

/* Spark's rows of micro-batch id through dipper's callback sink: the
** callback runs at the commit, with Spark's batch id. */
static int hand_to_callback(dp_spark_query *sq, int64_t id, const dp_arrow_batches *rows) {
  const dp_sink_class *cls = sq->hsink.cls;
  const dp_table_def *t = sq->root->u.sink.table;
  dp_buf why = DP_BUF_INIT;
  int rc = DIPPER_OK;
  for (int i = 0; rc == DIPPER_OK && i < rows->n; i++) {
    dp_batch_clear(sq->hbatch);
    rc = dp_batch_import(sq->hbatch, &rows->schema, &rows->arrays[i], &why);
    if (rc != DIPPER_OK)
      dp_error(&sq->diags, rc, sq->root->span,
               "Spark's micro-batch %lld does not fit the columns of table `%s`: %s",
               (long long)id, t->name, dp_buf_cstr(&why));
    else if (sq->hbatch->nrows > 0)
      rc = cls->write(&sq->hsink, id, sq->hbatch);
  }
  if (rc == DIPPER_OK) rc = cls->commit(&sq->hsink, id);
  dp_buf_free(&why);
  return rc;
}

/* Take the batch dipper's Spark sink holds, if one comes within wait_ms:
** read it, hand it to the callback, acknowledge it (Spark then commits it).
** A callback that fails stops the query with the batch unacknowledged, so
** uncommitted: a restart from the checkpoint runs it again. */
static int serve_one(dp_spark_query *sq, dp_sc *sc, int64_t wait_ms, bool *served) {
  *served = false;
  dp_sc_error err;
  dp_sc_error_init(&err);
  int64_t id = -1;
  int rc = dp_handoff_poll(sc, sq->handoff_key, wait_ms, &id, &err);
  if (rc != DIPPER_OK) return handoff_failed(sq, sc, &err, rc);
  if (id < 0) {
    dp_sc_error_free(&err);
    return DIPPER_OK;
  }
  dp_arrow_batches rows;
  rc = dp_handoff_read(sc, sq->handoff_key, id, ++sq->handoff_nonce, &rows, &err);
  if (rc != DIPPER_OK) return handoff_failed(sq, sc, &err, rc);
  rc = hand_to_callback(sq, id, &rows);
  dp_arrow_batches_free(&rows);
  if (rc != DIPPER_OK) {
    sq->failed = rc;
    (void)dp_sq_stop(sc, &sq->sq, &err);
    sq->ended = true;
    dp_sc_error_free(&err);
    return rc;
  }
  rc = dp_handoff_ack(sc, sq->handoff_key, id, &err);
  if (rc != DIPPER_OK) return handoff_failed(sq, sc, &err, rc);
  dp_sc_error_free(&err);
  *served = true;
  return DIPPER_OK;
}

/* A step's share: the batches that come while they come (up to the budget);
** *idle when the wait brought none. */
static int serve_handoff(dp_spark_query *sq, bool *ran, bool *idle) {
  dp_sc *sc = NULL;
  int rc = stream_session(sq, &sc);
  int64_t t0 = dp_mono_micros();
  bool served = true;
  while (rc == DIPPER_OK && served && !sq->ended && !dp_api_interrupted(sq->db) &&
         dp_mono_micros() - t0 < HANDOFF_STEP_BUDGET_US) {
    /* after a batch, only one already waiting: the step returns soon after
       its callback ran (Spark's next batch comes after the ack's commit) */
    int64_t wait = *ran ? 0 : HANDOFF_STEP_WAIT_MS;
    rc = serve_one(sq, sc, wait, &served);
    if (served) *ran = true;
    else *idle = true;
  }
  return rc;
}

/* One look at the running query: its status, its new reports, its end. */
static int poll_stream(dp_spark_query *sq, dp_progress_ring *ring, bool *ran) {
  *ran = false;
  if (sq->ended) return DIPPER_OK;
  dp_sc *sc = NULL;
  int rc = stream_session(sq, &sc);
  if (rc != DIPPER_OK) return rc;
  dp_sc_error err;
  dp_sc_error_init(&err);
  dp_sq_status st;
  /* Status first: when it says the query ended, the reports read next are
  ** its last. */
  rc = dp_sq_get_status(sc, &sq->sq, &st, &err);
  if (rc == DIPPER_OK) rc = take_new_reports(sq, sc, ring, ran, &err);
  if (rc == DIPPER_OK && !st.active) {
    rc = take_end(sq, sc, &err);
    if (rc == DIPPER_REMOTE && sq->failed) {
      dp_sc_error_free(&err);
      return rc;
    }
  }
  if (rc == DIPPER_OK) rc = dp_sc_keepalive(sc, KEEPALIVE_MS, &err);
  if (rc != DIPPER_OK) return client_error(&sq->diags, &err, rc);
  dp_sc_error_free(&err);
  return DIPPER_OK;
}

int dp_spark_query_new(dipper *db, const dp_query_plan *q, const dp_plan *root, const char *name,
                       dp_spark_query **out) {
  *out = NULL;
  dp_spark_query *sq = calloc(1, sizeof *sq);
  if (!sq) return DIPPER_NOMEM;
  sq->arena = dp_arena_new(0);
  sq->call_arena = dp_arena_new(0);
  const char *copy = sq->arena ? dp_arena_strdup(sq->arena, name) : NULL;
  if (!copy || !sq->call_arena) {
    dp_arena_free(sq->arena);
    dp_arena_free(sq->call_arena);
    free(sq);
    return DIPPER_NOMEM;
  }
  *out = sq;
  sq->db = db;
  sq->q = q;
  sq->root = root;
  sq->streaming = q->streaming;
  sq->last_report_us = INT64_MIN;
  dp_diags_init(&sq->diags, sq->call_arena, NULL, NULL, 0);
  sq->progress.name = copy;
  sq->progress.batch_id = -1;
  sq->progress.watermark = DP_WATERMARK_NONE;
  if (!q->streaming) return DIPPER_OK;
  if (bounded_select(q, root)) {
    sq->streaming = false; /* runs as a batch query: see bounded_select */
    return DIPPER_OK;
  }
  int rc = DIPPER_OK;
  if (root->kind != DP_P_SINK)
    rc = dp_error(&sq->diags, DIPPER_UNSUPPORTED, root->span, STREAMING_SELECT_REFUSAL);
  else
    rc = start_stream(sq);
  if (rc != DIPPER_OK) sq->failed = rc;
  return rc;
}

void dp_progress_ring_push(dp_progress_ring *r, const dipper_progress *p) {
  dipper_progress *to = &r->items[r->pushed % DIPPER_RECENT_PROGRESS];
  *to = *p;
  to->size = sizeof *to; /* handed out whole, to callbacks and events */
  r->pushed++;
}

void dp_spark_query_free(dp_spark_query *sq) {
  if (!sq) return;
  if (sq->started && !sq->ended && sq->db->spark == sq->session) {
    /* A query handle that goes stops its query: nothing keeps running unseen. */
    dp_sc_error err;
    dp_sc_error_init(&err);
    (void)dp_sq_stop(sq->session, &sq->sq, &err);
    dp_sc_error_free(&err);
  }
  close_handoff(sq);
  dp_sq_free(&sq->sq);
  dp_arena_free(sq->call_arena);
  dp_arena_free(sq->arena);
  free(sq);
}

const dp_diags *dp_spark_query_diags(const dp_spark_query *sq) { return &sq->diags; }

void dp_spark_query_progress(const dp_spark_query *sq, dipper_progress *out) {
  *out = sq->progress;
  out->size = sizeof *out;
}

bool dp_spark_query_streaming(const dp_spark_query *sq) { return sq->streaming; }

bool dp_spark_query_waits(const dp_spark_query *sq) {
  return sq->streaming && sq->handoff && !sq->ended;
}

const char *dp_spark_query_id(const dp_spark_query *sq) {
  return sq->started && sq->sq.id[0] ? sq->sq.id : NULL;
}

const char *dp_spark_query_run_id(const dp_spark_query *sq) {
  return sq->started && sq->sq.run_id[0] ? sq->sq.run_id : NULL;
}

/* Batch mode: the one micro-batch is the whole statement on Spark.
** Streaming: a look at the query the server runs. */
int dp_spark_query_step(dp_spark_query *sq, dp_progress_ring *ring, bool *ran, bool *finished) {
  begin_call(sq);
  *ran = false;
  *finished = sq->progress.finished != 0 || sq->ended || sq->stopped;
  if (sq->failed) return sq->failed;
  if (*finished) return DIPPER_OK;
  if (sq->streaming) {
    bool served = false, idle = false;
    int rc = sq->handoff ? serve_handoff(sq, &served, &idle) : DIPPER_OK;
    int64_t now = dp_mono_micros();
    bool look = !sq->handoff || sq->ended ||
                (idle && now - sq->last_look_us >= HANDOFF_LOOK_US);
    if (rc == DIPPER_OK && look) {
      rc = poll_stream(sq, ring, ran);
      sq->last_look_us = now;
    }
    *ran = *ran || served;
    *finished = sq->ended;
    return rc;
  }
  int64_t t0 = dp_mono_micros();
  int64_t written = 0;
  int rc = run_root(sq->db, sq->q, sq->root, &sq->diags, NULL, &written);
  if (rc != DIPPER_OK) {
    sq->failed = rc;
    return rc;
  }
  dipper_progress *p = &sq->progress;
  p->batch_id = 0;
  p->batch_duration_us = dp_mono_micros() - t0;
  p->output_rows = p->total_output_rows = written;
  double secs = p->batch_duration_us > 0 ? (double)p->batch_duration_us / 1e6 : 1e-6;
  p->output_rows_per_sec = (double)written / secs;
  p->finished = 1;
  if (ring) dp_progress_ring_push(ring, p);
  *ran = true;
  *finished = true;
  return DIPPER_OK;
}

int dp_spark_query_await(dp_spark_query *sq, dp_progress_ring *ring, int64_t timeout_ms,
                         bool *terminated) {
  begin_call(sq);
  *terminated = sq->ended;
  if (sq->failed) {
    *terminated = true;
    return sq->failed;
  }
  if (sq->ended) return DIPPER_OK;
  dp_sc *sc = NULL;
  int rc = stream_session(sq, &sc);
  if (rc != DIPPER_OK) return rc;
  int64_t deadline = timeout_ms < 0 ? -1 : dp_mono_micros() / 1000 + timeout_ms;
  dp_sc_error err;
  dp_sc_error_init(&err);
  bool done = false;
  while (!done) {
    if (dp_api_interrupted(sq->db)) {
      dp_sc_error_free(&err);
      return dp_error(&sq->diags, DIPPER_INTERRUPTED, nowhere,
                      "waiting for query `%s` was interrupted (dipper_interrupt); it still runs "
                      "on Spark: stop it with dipper_query_stop",
                      sq->progress.name);
    }
    int64_t slice = AWAIT_SLICE_MS;
    if (deadline >= 0) {
      int64_t left = deadline - dp_mono_micros() / 1000;
      if (left <= 0) break;
      if (left < slice) slice = left;
    }
    if (sq->handoff) {
      /* the batches are taken while waiting: the sink holds each until then */
      bool served = false;
      rc = serve_one(sq, sc, slice, &served);
      if (rc != DIPPER_OK || sq->ended) {
        dp_sc_error_free(&err);
        *terminated = sq->ended;
        return rc;
      }
      slice = 1;
    }
    rc = dp_sq_await(sc, &sq->sq, slice, &done, &err);
    if (rc != DIPPER_OK) return client_error(&sq->diags, &err, rc);
  }
  dp_sc_error_free(&err);
  bool ran = false;
  rc = poll_stream(sq, ring, &ran);
  *terminated = sq->ended;
  return rc;
}

int dp_spark_query_stop(dp_spark_query *sq, dp_progress_ring *ring) {
  begin_call(sq);
  if (!sq->streaming || sq->failed || sq->ended || !sq->started) {
    sq->stopped = true;
    return DIPPER_OK;
  }
  dp_sc *sc = NULL;
  int rc = stream_session(sq, &sc);
  if (rc != DIPPER_OK) return rc;
  dp_sc_error err;
  dp_sc_error_init(&err);
  sq->stopped = true;
  rc = dp_sq_stop(sc, &sq->sq, &err);
  if (rc != DIPPER_OK) return client_error(&sq->diags, &err, rc);
  dp_sc_error_free(&err);
  /* Spark's stop returns once the query's thread has ended: its last report
  ** and its end are there to take in. */
  bool ran = false;
  rc = poll_stream(sq, ring, &ran);
  sq->ended = true;
  return rc;
}

int dp_spark_query_status(dp_spark_query *sq, dipper_status *out) {
  begin_call(sq);
  memset(out, 0, sizeof *out);
  if (!sq->streaming || !sq->started || sq->ended) {
    bool done = sq->progress.finished || sq->ended;
    out->active = !(done || sq->stopped || sq->failed);
    snprintf(out->message, sizeof out->message, "%s",
             sq->failed ? "Failed" : sq->stopped ? "Stopped" : done ? "Finished"
                                                             : "Waiting to run");
    return DIPPER_OK;
  }
  dp_sc *sc = NULL;
  int rc = stream_session(sq, &sc);
  if (rc != DIPPER_OK) return rc;
  dp_sc_error err;
  dp_sc_error_init(&err);
  dp_sq_status st;
  rc = dp_sq_get_status(sc, &sq->sq, &st, &err);
  if (rc != DIPPER_OK) return client_error(&sq->diags, &err, rc);
  dp_sc_error_free(&err);
  out->active = st.active;
  out->data_available = st.data_available;
  out->trigger_active = st.trigger_active;
  snprintf(out->message, sizeof out->message, "%.127s", st.message);
  return DIPPER_OK;
}

int dp_spark_active_ids(dipper *db, dp_diags *d, char (**ids)[40], int *n) {
  *ids = NULL;
  *n = 0;
  if (!db->spark) return DIPPER_OK; /* no session yet: nothing runs */
  dp_sc_error err;
  dp_sc_error_init(&err);
  dp_sq *qs = NULL;
  int m = 0;
  int rc = dp_sq_active(db->spark, &qs, &m, &err);
  if (rc != DIPPER_OK) return client_error(d, &err, rc);
  dp_sc_error_free(&err);
  char(*out)[40] = calloc((size_t)(m ? m : 1), sizeof *out);
  for (int i = 0; i < m; i++) {
    if (out) memcpy(out[i], qs[i].id, sizeof out[i]);
    dp_sq_free(&qs[i]);
  }
  free(qs);
  if (!out) return dp_error(d, DIPPER_NOMEM, nowhere, "out of memory listing Spark's queries");
  *ids = out;
  *n = m;
  return DIPPER_OK;
}

/* ---- the listener bus (dipper_listen) ---- */

int dp_spark_listen(dipper *db, int (*fn)(void *user, const struct dp_sq_event *ev), void *user,
                    int64_t timeout_ms, dp_diags *d) {
  if (!db->spark || timeout_ms == 0) return DIPPER_OK;
  dp_sc_error err;
  dp_sc_error_init(&err);
  /* The bus may stay quiet for minutes: the session looks at the interrupt
  ** flag meanwhile (dipper_interrupt from a signal handler). */
  dp_sc_set_abort(db->spark, &db->interrupted);
  int rc = dp_sq_listen(db->spark, fn, user, timeout_ms > 0 ? timeout_ms : 0, &err);
  dp_sc_set_abort(db->spark, NULL);
  if (rc == DIPPER_TIMEOUT && timeout_ms > 0) rc = DIPPER_OK; /* the caller's own limit */
  if (rc == DIPPER_INTERRUPTED) {
    dp_sc_error_free(&err);
    return dp_error(d, rc, nowhere, "listening to the queries was interrupted (dipper_interrupt)");
  }
  if (rc != DIPPER_OK) return client_error(d, &err, rc);
  dp_sc_error_free(&err);
  return DIPPER_OK;
}

void dp_spark_query_take_event(dp_spark_query *sq, const struct dp_sq_event *ev,
                               dp_progress_ring *ring, bool *news, const char **error) {
  *news = false;
  *error = NULL;
  switch (ev->kind) {
  case DP_SQ_EVENT_PROGRESS:
    /* a report that a poll took in already counts once */
    if (ev->progress && ev->progress->timestamp_us > sq->last_report_us) {
      take_report(sq, ev->progress, ring);
      *news = ev->progress->add_batch_ms >= 0; /* an idle trigger ran no batch */
    }
    return;
  case DP_SQ_EVENT_IDLE: *news = !sq->ended; return;
  case DP_SQ_EVENT_LISTENING: return; /* about the bus, not a query */
  case DP_SQ_EVENT_TERMINATED:
    if (sq->ended) return;
    sq->ended = true;
    *news = true;
    if (ev->exception && ev->exception[0]) {
      (void)record_exception(sq, ev->exception);
      if (sq->diags.count > 0) *error = sq->diags.items[sq->diags.count - 1].message;
    } else if (!sq->stopped) {
      sq->progress.finished = 1;
    }
    return;
  }
}
