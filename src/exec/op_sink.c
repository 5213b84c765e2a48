/*
** op_sink.c — SINK, the root of every running query: rows to a connector.
**
** An INSERT's SINK node writes to its table's connector; any other root (a
** bare SELECT) is wrapped in a sink operator that writes to the console, as
** Spark's console sink would (dp_sink_op_build).  next() writes each batch
** of its input and hands it on, so that the driver counts the rows out; the
** driver commits the sink once the micro-batch is complete.
*/
#include <stdlib.h>

#include "connectors/connector.h"
#include "exec/exec.h"
#include "exec/exec_int.h"

typedef struct sink_state {
  dp_sink sink;
  bool opened;
} sink_state;

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
  st->sink.diags = op->ex->diags;
  int rc = cls->open(&st->sink);
  if (rc != DIPPER_OK) {
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
    rc = st->sink.cls->write(&st->sink, op->ex->batch_id, in);
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

int dp_sink_op_commit(dp_op *op, int64_t batch_id) {
  sink_state *st = op->state;
  return st->sink.cls->commit ? st->sink.cls->commit(&st->sink, batch_id) : DIPPER_OK;
}

static void sink_close(dp_op *op) {
  sink_state *st = op->state;
  if (!st) return;
  if (st->opened && st->sink.cls->close) st->sink.cls->close(&st->sink);
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
