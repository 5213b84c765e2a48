/*
** op_sink.c — SINK, the root of every running query: rows to a connector.
**
** An INSERT's SINK node writes to its table's connector; any other root (a
** bare SELECT) is wrapped in a sink operator that writes to the console, as
** Spark's console sink would (dp_sink_op_build).  next() writes each batch
** of its input and hands it on, so that the driver counts the rows out; the
** driver commits the sink once the micro-batch is complete.
**
** An input that carries change kinds (exec/changelog.h) reaches the sinks
** that take retractions (memory, console, callback, blackhole) with a
** leading column `op` STRING NOT NULL: "+I", "-U", "+U" or "-D" per row, as
** Flink prints a changelog.  A sink table with a PRIMARY KEY takes upserts
** instead: the -U rows are left out (their +U follows with the same key);
** upsert-kafka gets the -D rows with their kind (it writes tombstones), on
** any other such sink a -D, which it has no way to write, fails the batch.
*/
#include <stdlib.h>
#include <string.h>

#include "connectors/connector.h"
#include "exec/changelog.h"
#include "exec/exec.h"
#include "exec/exec_int.h"

typedef enum { CH_NONE, CH_COLUMN, CH_UPSERT } change_form;

typedef struct sink_state {
  dp_sink sink;
  bool opened;
  change_form form;    /* how the input's change kinds reach the connector */
  dp_batch view;       /* CH_COLUMN: op ++ the input's columns */
  dp_vector *op;       /* CH_COLUMN: the op column of this batch */
  dp_batch *kept;      /* CH_UPSERT: the rows without the -U ones */
  bool deletes;        /* CH_UPSERT: the sink writes -D rows (upsert-kafka's tombstones) */
  int64_t *sel;
  int64_t sel_cap;
} sink_state;

static bool takes_retractions(const char *connector) {
  static const char *const names[] = {"memory", "console", "callback", "blackhole"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(connector, names[i]) == 0) return true;
  return false;
}

/* The schema `op` STRING NOT NULL ++ s, in the query's arena. */
static const dp_schema *with_op(dp_exec *ex, const dp_schema *s) {
  dp_schema *w = dp_schema_new(ex->arena, s->ncols + 1);
  if (!w) return NULL;
  w->cols[0].name = "op";
  w->cols[0].type = dp_type_with_nullability(ex->arena, dp_type_of(DP_T_STRING), true);
  if (!w->cols[0].type) return NULL;
  for (int i = 0; i < s->ncols; i++) w->cols[i + 1] = s->cols[i];
  return w;
}

static int setup_changes(dp_op *op, sink_state *st, const char *connector) {
  const dp_table_def *t = st->sink.table;
  if (!op->children[0]->plan->props.change_kinds) return DIPPER_OK;
  if (t && t->npk > 0 && !takes_retractions(connector)) {
    st->form = CH_UPSERT;
    st->deletes = strcmp(connector, "upsert-kafka") == 0;
    st->kept = dp_batch_new(st->sink.schema, 0);
    return st->kept ? DIPPER_OK : DIPPER_NOMEM;
  }
  st->form = CH_COLUMN;
  const dp_schema *w = with_op(op->ex, st->sink.schema);
  if (!w) return DIPPER_NOMEM;
  st->view.cols = calloc((size_t)w->ncols, sizeof *st->view.cols);
  st->op = dp_vector_new(w->cols[0].type, 0);
  if (!st->view.cols || !st->op) return DIPPER_NOMEM;
  st->view.schema = w;
  st->view.ncols = w->ncols;
  st->sink.schema = w;
  return DIPPER_OK;
}

/* *out = the batch the connector gets for `in`, or NULL: nothing to write. */
static int shape(dp_op *op, sink_state *st, dp_batch *in, dp_batch **out) {
  *out = in;
  if (st->form == CH_NONE) return DIPPER_OK;
  int rc = DIPPER_OK;
  if (st->form == CH_COLUMN) {
    dp_vector_clear(st->op);
    for (int64_t r = 0; r < in->nrows && !rc; r++) {
      const char *k = dp_change_name(dp_change_of(in, r));
      rc = dp_vector_append_str(st->op, k, strlen(k));
    }
    st->view.cols[0] = st->op;
    for (int c = 0; c < in->ncols && c + 1 < st->view.ncols; c++) st->view.cols[c + 1] = in->cols[c];
    st->view.nrows = in->nrows;
    *out = &st->view;
    return rc;
  }
  if (in->nrows > st->sel_cap) {
    int64_t *g = realloc(st->sel, (size_t)in->nrows * sizeof *g);
    if (!g) return DIPPER_NOMEM;
    st->sel = g;
    st->sel_cap = in->nrows;
  }
  int64_t n = 0;
  for (int64_t r = 0; r < in->nrows; r++) {
    int k = dp_change_of(in, r);
    if (k == DP_CHANGE_DELETE && !st->deletes)
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, op->plan->span,
                      "the %s sink `%s` takes upserts by its PRIMARY KEY, but this query deletes "
                      "a row (an aggregation over an updating input whose group lost its last "
                      "row), which it cannot write; write to an 'upsert-kafka' table (a "
                      "deletion is a tombstone there), or to a sink that takes retractions "
                      "(memory, console, callback)",
                      st->sink.table->connector, st->sink.table->name);
    if (k != DP_CHANGE_UPDATE_BEFORE) st->sel[n++] = r;
  }
  dp_batch_clear(st->kept);
  if ((rc = dp_batch_take(st->kept, in, st->sel, 0, n))) return rc;
  if (st->deletes && (rc = dp_change_take(&st->kept->change, in->change, st->sel, n))) return rc;
  st->kept->nrows = n;
  *out = n > 0 ? st->kept : NULL;
  return DIPPER_OK;
}

static int sink_open(dp_op *op) {
  const dp_plan *p = op->plan;
  const dp_table_def *t = p->kind == DP_P_SINK ? p->u.sink.table : NULL;
  const char *connector = t ? (t->connector ? t->connector : "") : "console";
  const dp_sink_class *cls = dp_sink_find(connector);
  if (!cls)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "the embedded engine has no sink for connector '%s' (table `%s`) yet; write "
                    "to 'console', 'memory', 'filesystem', 'blackhole' or 'callback'",
                    connector, t ? t->name : "?");
  sink_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  st->sink.cls = cls;
  st->sink.db = op->ex->db;
  st->sink.table = t;
  /* A SINK node's schema is its input's: the table's written columns in
  ** table order, already cast to the table's types by the binder. */
  st->sink.schema = &p->schema;
  st->sink.mode = op->ex->output_mode;
  st->sink.checkpoint = op->ex->checkpoint;
  /* a worker's own sink (parallel.h): the coordinator's is worker -1 */
  bool own = op->ex->par && op->ex->worker >= 0;
  st->sink.worker = own ? op->ex->worker : 0;
  st->sink.nworkers = own ? op->ex->nworkers : 1;
  st->sink.diags = op->ex->diags;
  int rc = setup_changes(op, st, connector);
  if (rc == DIPPER_OK) rc = cls->open(&st->sink);
  if (rc != DIPPER_OK) {
    free(st->view.cols);
    dp_vector_free(st->op);
    dp_batch_free(st->kept);
    free(st);
    return rc;
  }
  st->opened = true;
  op->state = st;
  return DIPPER_OK;
}

static int sink_next(dp_op *op, dp_batch **out) {
  sink_state *st = op->state;
  dp_op *child = op->children[0];
  *out = NULL;
  dp_batch *in = NULL;
  int rc = child->cls->next(child, &in);
  if (rc != DIPPER_OK || !in) return rc;
  if (in->nrows > 0) {
    dp_batch *w = NULL;
    rc = shape(op, st, in, &w);
    if (rc == DIPPER_OK && w) {
      int64_t t0 = op->ex->trace ? dp_mono_micros() : 0;
      rc = st->sink.cls->write(&st->sink, op->ex->batch_id, w);
      if (op->ex->trace) op->ex->trace_produce_us += dp_mono_micros() - t0;
    }
    if (rc != DIPPER_OK) return rc;
  }
  op->metrics.rows_in += in->nrows;
  op->metrics.rows_out += in->nrows;
  *out = in;
  return DIPPER_OK;
}

int64_t dp_sink_op_skipped(const dp_op *op) {
  const sink_state *st = op->state;
  return st->sink.rows_skipped;
}

bool dp_sink_op_defer(dp_op *op) {
  sink_state *st = op->state;
  st->sink.defer = st->sink.cls->settle != NULL;
  return st->sink.defer;
}

int dp_sink_op_settle(dp_op *op, int wait_ms, bool *settled) {
  sink_state *st = op->state;
  *settled = true;
  return st->sink.defer ? st->sink.cls->settle(&st->sink, wait_ms, settled) : DIPPER_OK;
}

int dp_sink_op_commit(dp_op *op, int64_t batch_id) {
  sink_state *st = op->state;
  return st->sink.cls->commit ? st->sink.cls->commit(&st->sink, batch_id) : DIPPER_OK;
}

static void sink_close(dp_op *op) {
  sink_state *st = op->state;
  if (!st) return;
  if (st->opened && st->sink.cls->close) st->sink.cls->close(&st->sink);
  free(st->view.cols);
  free(st->sel);
  dp_vector_free(st->op);
  dp_batch_free(st->kept);
  free(st);
  op->state = NULL;
}

const dp_op_class dp_op_sink = {
    .name = "Sink",
    .open = sink_open,
    .next = sink_next,
    .end_batch = NULL,
    .close = sink_close,
};

int dp_sink_op_build(dp_exec *ex, const dp_plan *root, dp_op *input, dp_op **out) {
  *out = NULL;
  dp_op *op = dp_arena_calloc(ex->arena, 1, sizeof *op);
  dp_op **children = dp_arena_calloc(ex->arena, 1, sizeof *children);
  if (!op || !children) return DIPPER_NOMEM;
  children[0] = input;
  op->plan = root;
  op->ex = ex;
  op->nchildren = 1;
  op->children = children;
  op->cls = &dp_op_sink;
  int rc = sink_open(op);
  if (rc != DIPPER_OK) return rc;
  *out = op;
  return DIPPER_OK;
}
