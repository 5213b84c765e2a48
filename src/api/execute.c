/*
** execute.c — dipper_execute: one statement run to completion, its rows
** handed out through the Arrow C Stream Interface.
**
** Owns: the result stream (a schema and the arrays of a finished run, handed
** out one by one, moved not copied), the collecting sink of the embedded
** engine, and the choice of engine for the call.  Does not own: the
** micro-batch loop (exec/driver.c), the connectors, or the Spark side of the
** call (spark_run.c: translate, collect).
**
** The embedded engine runs the statement inside the call: a bare SELECT gets
** a synthetic SINK node above its root, writing to a `callback` sink whose
** function (registered under a name no user can spell, for the call only)
** keeps each committed micro-batch's struct array.  The driver, the
** operators and the sink are the ones dipper_run uses: dipper_execute is not
** a second executor.  The whole result is collected before the call returns,
** so every error is the call's return code; the stream itself never fails.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "connectors/records.h"
#include "core/grow.h"
#include "exec/exec.h"
#include "exec/exec_int.h"
#include "plan/analyze.h"

static const dp_span nowhere = {0, 0, 0, 0};

/* ---- a deep copy of an ArrowSchema (what get_schema hands out) ---- */

typedef struct schema_copy {
  char *format, *name, *metadata;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
} schema_copy;

static void copy_release(struct ArrowSchema *s) {
  if (!s || !s->release) return;
  schema_copy *c = s->private_data;
  for (int64_t i = 0; i < s->n_children; i++) {
    struct ArrowSchema *ch = c->children[i];
    if (ch->release) ch->release(ch);
    free(ch);
  }
  if (c->dictionary) {
    if (c->dictionary->release) c->dictionary->release(c->dictionary);
    free(c->dictionary);
  }
  free(c->children);
  free(c->format);
  free(c->name);
  free(c->metadata);
  free(c);
  s->release = NULL;
}

/* Arrow metadata is binary: an int32 count, then length-prefixed keys and
** values.  Its size is read from the layout, not from a NUL. */
static size_t metadata_size(const char *m) {
  if (!m) return 0;
  int32_t n, len;
  memcpy(&n, m, 4);
  size_t at = 4;
  for (int32_t i = 0; i < 2 * n; i++) {
    memcpy(&len, m + at, 4);
    at += 4 + (size_t)(len > 0 ? len : 0);
  }
  return at;
}

static char *dup_or_null(const char *s, size_t n, bool *oom) {
  if (!s) return NULL;
  char *p = malloc(n + 1);
  if (!p) {
    *oom = true;
    return NULL;
  }
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

int dp_api_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *dst) {
  memset(dst, 0, sizeof *dst);
  schema_copy *c = calloc(1, sizeof *c);
  if (!c) return DIPPER_NOMEM;
  bool oom = false;
  c->format = dup_or_null(src->format, src->format ? strlen(src->format) : 0, &oom);
  c->name = dup_or_null(src->name, src->name ? strlen(src->name) : 0, &oom);
  c->metadata = dup_or_null(src->metadata, metadata_size(src->metadata), &oom);
  dst->format = c->format;
  dst->name = c->name;
  dst->metadata = c->metadata;
  dst->flags = src->flags;
  dst->private_data = c;
  dst->release = copy_release;
  if (src->n_children > 0) {
    c->children = calloc((size_t)src->n_children, sizeof *c->children);
    if (!c->children) oom = true;
    for (int64_t i = 0; !oom && i < src->n_children; i++) {
      c->children[i] = malloc(sizeof **c->children);
      if (!c->children[i] || dp_api_schema_copy(src->children[i], c->children[i]) != DIPPER_OK) {
        free(c->children[i]);
        c->children[i] = NULL;
        oom = true;
        break;
      }
      dst->n_children = i + 1;
    }
    dst->children = c->children;
  }
  if (!oom && src->dictionary) {
    c->dictionary = malloc(sizeof *c->dictionary);
    if (!c->dictionary || dp_api_schema_copy(src->dictionary, c->dictionary) != DIPPER_OK) {
      free(c->dictionary);
      c->dictionary = NULL;
      oom = true;
    }
    dst->dictionary = c->dictionary;
  }
  if (oom) {
    copy_release(dst);
    return DIPPER_NOMEM;
  }
  return DIPPER_OK;
}

/* ---- results and their stream ---- */

int dp_api_result_push(dp_api_result *r, struct ArrowArray *a) {
  if (dp_grow_i(&r->arrays, &r->cap, r->n + 1, sizeof *r->arrays, 4)) {
    if (a->release) a->release(a);
    return DIPPER_NOMEM;
  }
  r->arrays[r->n++] = *a;
  a->release = NULL; /* moved */
  return DIPPER_OK;
}

void dp_api_result_free(dp_api_result *r) {
  if (!r) return;
  for (int i = r->next; i < r->n; i++)
    if (r->arrays[i].release) r->arrays[i].release(&r->arrays[i]);
  free(r->arrays);
  if (r->schema.release) r->schema.release(&r->schema);
  memset(r, 0, sizeof *r);
}

static int stream_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  dp_api_result *r = s->private_data;
  return dp_api_schema_copy(&r->schema, out) == DIPPER_OK ? 0 : ENOMEM;
}

static int stream_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  dp_api_result *r = s->private_data;
  if (r->next >= r->n) {
    memset(out, 0, sizeof *out); /* release NULL: the end */
    return 0;
  }
  *out = r->arrays[r->next];
  r->arrays[r->next++].release = NULL;
  return 0;
}

static const char *stream_error(struct ArrowArrayStream *s) {
  (void)s;
  return NULL; /* the run is over before the stream exists: it cannot fail */
}

static void stream_release(struct ArrowArrayStream *s) {
  if (!s || !s->release) return;
  dp_api_result *r = s->private_data;
  dp_api_result_free(r);
  free(r);
  s->release = NULL;
}

int dp_api_result_stream(dp_api_result *r, struct ArrowArrayStream *out) {
  dp_api_result *own = malloc(sizeof *own);
  if (!own) {
    dp_api_result_free(r);
    return DIPPER_NOMEM;
  }
  *own = *r;
  memset(r, 0, sizeof *r);
  out->get_schema = stream_schema;
  out->get_next = stream_next;
  out->get_last_error = stream_error;
  out->release = stream_release;
  out->private_data = own;
  return DIPPER_OK;
}

/* A struct schema with no columns: what an INSERT or DDL statement yields. */
int dp_api_result_empty(dp_api_result *r) {
  memset(r, 0, sizeof *r);
  struct ArrowSchema empty = {.format = "+s", .name = ""};
  return dp_api_schema_copy(&empty, &r->schema);
}

/* ---- the embedded engine ---- */

/* The Arrow schema of a plan's output: that of an empty batch. */
static int schema_of(const dp_schema *schema, struct ArrowSchema *out) {
  dp_batch *b = dp_batch_new(schema, 0);
  if (!b) return DIPPER_NOMEM;
  struct ArrowArray array;
  int rc = dp_batch_export(b, out, &array);
  if (rc == DIPPER_OK && array.release) array.release(&array);
  dp_batch_free(b);
  return rc;
}

/* The name the collecting callback is registered under: a control
** character first, so no table's 'name' option can reach it by accident. */
#define COLLECTOR_NAME "\x01dipper_execute"

typedef struct collector {
  dp_api_result *result;
  int rc;
} collector;

static int collect_batch(void *user, int64_t batch_id, struct ArrowSchema *schema,
                         struct ArrowArray *array) {
  (void)batch_id;
  dipper *db = user;
  collector *c = db->collector;
  if (!c) { /* only dipper_execute's own sink names this callback */
    if (schema->release) schema->release(schema);
    array->release(array);
    return 1;
  }
  if (schema->release) schema->release(schema);
  if (array->length == 0) {
    array->release(array);
    return 0;
  }
  c->rc = dp_api_result_push(c->result, array);
  return c->rc == DIPPER_OK ? 0 : 1;
}

/* Run one root to its end; the driver's errors go to the handle. */
static int run_root(dipper *db, const dp_query_plan *q, const dp_plan *root, const char *name) {
  dp_driver *dr = NULL;
  int rc = dp_driver_new(db, q, root, name, &dr);
  bool ran = false, finished = false;
  while (rc == DIPPER_OK && !finished) {
    if (dp_api_honour_interrupt(db)) {
      dp_driver_free(dr);
      return dp_error(&db->diags, DIPPER_INTERRUPTED, nowhere,
                      "dipper_execute was interrupted (dipper_interrupt)");
    }
    rc = dp_driver_step(dr, &ran, &finished);
  }
  if (rc != DIPPER_OK) {
    if (!dr) return dp_error(&db->diags, rc, nowhere, "out of memory starting the query");
    dp_api_copy_diags(db, dp_driver_diags(dr), rc);
  }
  dp_driver_free(dr);
  return rc;
}

/* Streaming mode gives the whole answer only over bounded inputs and in
** append mode (update and complete mode hand out changes, not a result). */
static int check_completes(dipper *db, const dp_query_plan *q, const dp_plan *root, int stmt) {
  if (!q->streaming) return DIPPER_OK;
  if (!root->props.bounded)
    return dp_error(&db->diags, DIPPER_STREAMING, root->span,
                    "dipper_execute runs statement %d to completion, but it reads an unbounded "
                    "input in streaming mode; put SET 'execution.runtime-mode' = 'batch' before "
                    "it, or run it with dipper_query_start",
                    stmt);
  if (dp_analyze_output_mode(q, root) != DP_MODE_APPEND)
    return dp_error(&db->diags, DIPPER_STREAMING, root->span,
                    "dipper_execute hands out a complete result, but statement %d runs in "
                    "streaming mode with update or complete output, whose batches are changes; "
                    "put SET 'execution.runtime-mode' = 'batch' before it",
                    stmt);
  return DIPPER_OK;
}

static int execute_embedded(dipper *db, const dp_program_stmt *ps, int stmt, dp_api_result *res) {
  const dp_query_plan *q = &ps->plan;
  if (ps->explain || q->nroots == 0) return dp_api_result_empty(res);
  for (int r = 0; r < q->nroots; r++) {
    int rc = check_completes(db, q, q->roots[r], stmt);
    if (rc != DIPPER_OK) return rc;
  }
  if (q->roots[0]->kind == DP_P_SINK) { /* INSERTs: run each, hand out nothing */
    for (int r = 0; r < q->nroots; r++) {
      const dp_plan *root = q->roots[r];
      int rc = run_root(db, q, root, root->u.sink.table ? root->u.sink.table->name : "insert");
      if (rc != DIPPER_OK) return rc;
    }
    return dp_api_result_empty(res);
  }

  /* A SELECT: a callback sink under a private name collects its batches. */
  const dp_plan *root = q->roots[0];
  dp_arena *arena = dp_arena_new(0);
  dp_plan *sink = arena ? dp_plan_new(arena, DP_P_SINK, 1) : NULL;
  dp_table_def *table = arena ? dp_arena_calloc(arena, 1, sizeof *table) : NULL;
  dp_option *opt = arena ? dp_arena_calloc(arena, 1, sizeof *opt) : NULL;
  if (!sink || !table || !opt) {
    dp_arena_free(arena);
    return dp_error(&db->diags, DIPPER_NOMEM, nowhere, "out of memory starting the query");
  }
  opt->key = "name";
  opt->value = COLLECTOR_NAME;
  table->name = "result";
  table->schema = root->schema;
  table->watermark_col = -1;
  table->watermark_delay = -1;
  table->noptions = 1;
  table->options = opt;
  table->connector = "callback";
  table->bounded = true;
  sink->schema = root->schema;
  sink->span = root->span;
  sink->props = root->props;
  sink->inputs[0] = (dp_plan *)(uintptr_t)root; /* read only: the driver never writes plans */
  sink->u.sink.table = table;

  int rc = schema_of(&root->schema, &res->schema);
  collector c = {res, DIPPER_OK};
  if (rc == DIPPER_OK) {
    db->collector = &c;
    rc = run_root(db, q, sink, "select");
    db->collector = NULL;
  }
  /* a collector that failed stopped the query: its reason is the one */
  if (c.rc != DIPPER_OK) rc = c.rc;
  if (rc == DIPPER_NOMEM && db->diags.count == 0)
    dp_error(&db->diags, rc, nowhere, "out of memory collecting the result");
  dp_arena_free(arena);
  return rc;
}

/* ---- the call ---- */

int dipper_execute(dipper_program *prog, int stmt, struct ArrowArrayStream *out) {
  if (out) out->release = NULL;
  if (!prog) return DIPPER_MISUSE;
  dipper *db = prog->db;
  /* Registered before the call's diagnostics begin: registering clears them.
  ** It replaces the previous registration, so the list does not grow. */
  int reg = dipper_register_callback(db, COLLECTOR_NAME, collect_batch, db);
  dp_api_diags_begin(db, prog->file, prog->text, prog->text ? strlen(prog->text) : 0);
  if (!out || stmt < 0 || stmt >= prog->n) {
    dp_error(&db->diags, DIPPER_MISUSE, nowhere,
             !out ? "dipper_execute needs a place for the stream: pass &stream"
                  : "dipper_execute: statement %d does not exist; the program has %d "
                    "(0 to %d)",
             stmt, prog->n, prog->n - 1);
    dp_api_diags_finish(db);
    return DIPPER_MISUSE;
  }
  if (reg != DIPPER_OK) {
    dp_error(&db->diags, reg, nowhere, "out of memory starting the query");
    dp_api_diags_finish(db);
    return reg;
  }
  dp_api_result res;
  memset(&res, 0, sizeof res);
  const dp_program_stmt *ps = &prog->stmts[stmt];
  /* SHOW, DESCRIBE, SET alone, EXPLAIN: answered from compile time, on
  ** either engine (the catalog is dipper's own). */
  int rc = ps->rows                ? dp_api_rows_result(ps->rows, &res)
           : dp_api_on_spark(db) ? dp_spark_execute(db, prog, ps, stmt, &res)
                                 : execute_embedded(db, ps, stmt, &res);
  if (rc == DIPPER_OK) rc = dp_api_result_stream(&res, out);
  dp_api_result_free(&res);
  if (rc != DIPPER_OK) {
    if (db->diags.count == 0) dp_error(&db->diags, rc, nowhere, "%s", dipper_strerror(rc));
    dp_api_diags_finish(db);
    return rc;
  }
  return DIPPER_OK;
}
