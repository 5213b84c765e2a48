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
** Streaming mode on Spark is the next step of the backend (query start,
** progress and stop over StreamingQueryCommand); until then it is refused at
** start with DIPPER_UNSUPPORTED.  dp_spark_query is the shape it slots into.
**
** Errors: the client's messages ("cannot reach Spark Connect at host:port:
** ...", "Spark: [ERROR_CLASS] message") become unplaced diagnostics with
** the client's dipper code; translation refusals keep their span.
*/
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
#include "spark/translate.h"

static const dp_span nowhere = {0, 0, 0, 0};

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

/* Run one root of q on Spark: a SELECT's rows into *rows (when rows is not
** NULL) or through the console sink; a SINK by its kind.  *written counts
** the rows that reached a dipper sink. */
static int run_root(dipper *db, const dp_query_plan *q, const dp_plan *root, dp_diags *d,
                    dp_arrow_batches *rows, int64_t *written) {
  dp_sc *sc = NULL;
  int rc = session(db, d, &sc);
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

/* Batch mode only, for now: say so, and where. */
static int refuse_streaming(const dp_query_plan *q, const dp_plan *root, dp_diags *d) {
  if (!q->streaming) return DIPPER_OK;
  return dp_error(d, DIPPER_UNSUPPORTED, root->span,
                  "streaming queries on Spark are not supported yet (Structured Streaming "
                  "through Spark Connect is the next step of the backend); put "
                  "SET 'execution.runtime-mode' = 'batch' before the statement, or run it on "
                  "the embedded engine");
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
  return dp_spark_check(q, a, &db->diags);
}

/* ---- a query handle on Spark (dipper_query_start / step / run) ---- */

struct dp_spark_query {
  dipper *db;
  const dp_query_plan *q;
  const dp_plan *root;
  dp_arena *arena;   /* the name and the diagnostics */
  dp_diags diags;
  int failed;
  dipper_progress progress;
};

int dp_spark_query_new(dipper *db, const dp_query_plan *q, const dp_plan *root, const char *name,
                       dp_spark_query **out) {
  *out = NULL;
  dp_spark_query *sq = calloc(1, sizeof *sq);
  if (!sq) return DIPPER_NOMEM;
  sq->arena = dp_arena_new(0);
  const char *copy = sq->arena ? dp_arena_strdup(sq->arena, name) : NULL;
  if (!copy) {
    dp_arena_free(sq->arena);
    free(sq);
    return DIPPER_NOMEM;
  }
  *out = sq;
  sq->db = db;
  sq->q = q;
  sq->root = root;
  dp_diags_init(&sq->diags, sq->arena, NULL, NULL, 0);
  sq->progress.name = copy;
  sq->progress.batch_id = -1;
  sq->progress.watermark = DP_WATERMARK_NONE;
  int rc = refuse_streaming(q, root, &sq->diags);
  if (rc != DIPPER_OK) sq->failed = rc;
  return rc;
}

void dp_spark_query_free(dp_spark_query *sq) {
  if (!sq) return;
  dp_arena_free(sq->arena);
  free(sq);
}

const dp_diags *dp_spark_query_diags(const dp_spark_query *sq) { return &sq->diags; }

void dp_spark_query_progress(const dp_spark_query *sq, dipper_progress *out) {
  *out = sq->progress;
}

/* Batch mode: the one micro-batch is the whole statement on Spark. */
int dp_spark_query_step(dp_spark_query *sq, bool *ran, bool *finished) {
  *ran = false;
  *finished = sq->progress.finished != 0;
  if (sq->failed) return sq->failed;
  if (sq->progress.finished) return DIPPER_OK;
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
  *ran = true;
  *finished = true;
  return DIPPER_OK;
}
