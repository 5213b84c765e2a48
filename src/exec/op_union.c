/*
** op_union.c — UNION (ALL): the batches of each input in turn.
**
** The binder makes UNION without ALL a DISTINCT over this node, so here a
** union is pure concatenation.  Batches are passed on borrowed, under the
** node's schema (the inputs' column names may differ; the binder has cast
** their types to the union's), with the change kinds of an updating input
** (exec/changelog.h; NULL, all +I, from an insert-only one).
*/
#include "exec/exec.h"

typedef struct union_state {
  int current;   /* the input being read in this micro-batch */
  dp_batch view;
} union_state;

static int union_open(dp_op *op) {
  union_state *st = dp_arena_calloc(op->ex->arena, 1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  return DIPPER_OK;
}

static int union_next(dp_op *op, dp_batch **out) {
  union_state *st = op->state;
  *out = NULL;
  while (st->current < op->nchildren) {
    dp_op *child = op->children[st->current];
    dp_batch *in = NULL;
    int rc = child->cls->next(child, &in);
    if (rc != DIPPER_OK) return rc;
    if (!in) {
      st->current++; /* this input's part of the micro-batch is done */
      continue;
    }
    if (in->nrows == 0) continue;
    st->view.schema = &op->plan->schema;
    st->view.ncols = in->ncols;
    st->view.cols = in->cols;
    st->view.nrows = in->nrows;
    st->view.change = in->change; /* an updating input's kinds, batch by batch */
    op->metrics.rows_in += in->nrows;
    op->metrics.rows_out += in->nrows;
    *out = &st->view;
    return DIPPER_OK;
  }
  return DIPPER_OK;
}

static int union_end_batch(dp_op *op) {
  union_state *st = op->state;
  st->current = 0;
  return DIPPER_OK;
}

static void union_close(dp_op *op) { op->state = NULL; }

const dp_op_class dp_op_union = {
    .name = "Union",
    .open = union_open,
    .next = union_next,
    .end_batch = union_end_batch,
    .close = union_close,
};
