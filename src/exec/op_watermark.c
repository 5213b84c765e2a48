/*
** op_watermark.c — WATERMARK: observe the event time of every row.
**
** Rows pass unchanged; the operator records the largest event time of each
** batch with dp_exec_observe under the node's watermark id.  The driver turns
** that maximum into the input's watermark (max − delay) at the end of the
** micro-batch.  When the watermark is not `col - INTERVAL c` (a general
** expression), the expression is evaluated on every row and its largest
** value is observed; the driver then subtracts nothing (delay −1 in the plan).
** Rows are never dropped here: lateness is judged by the stateful operators
** against the watermark of the batch.
*/
#include "exec/eval.h"
#include "exec/exec.h"

typedef struct watermark_state {
  dp_batch view;
} watermark_state;

static int watermark_open(dp_op *op) {
  const dp_plan *p = op->plan;
  if (p->u.watermark.id < 0 || p->u.watermark.id >= op->ex->query->nwatermarks)
    return dp_error(op->ex->diags, DIPPER_INTERNAL, p->span,
                    "the watermark on `%s` has no id in the query (%d of %d)",
                    p->u.watermark.source ? p->u.watermark.source : "?", p->u.watermark.id,
                    op->ex->query->nwatermarks);
  watermark_state *st = dp_arena_calloc(op->ex->arena, 1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  return DIPPER_OK;
}

/* The largest non-null value of a µs column, or DP_WATERMARK_NONE. */
static int64_t column_max(const dp_vector *v, int64_t nrows) {
  int64_t best = DP_WATERMARK_NONE;
  if (v->phys != DP_PHYS_I64) {
    for (int64_t i = 0; i < nrows; i++)
      if (!dp_vector_is_null(v, i)) {
        int64_t x = dp_vector_get_i64(v, i);
        if (x > best) best = x;
      }
    return best;
  }
  const int64_t *vals = v->values;
  if (!v->validity) {
    for (int64_t i = 0; i < nrows; i++) best = vals[i] > best ? vals[i] : best;
    return best;
  }
  for (int64_t i = 0; i < nrows; i++)
    if (dp_bit_get(v->validity, i) && vals[i] > best) best = vals[i];
  return best;
}

static int watermark_next(dp_op *op, dp_batch **out) {
  watermark_state *st = op->state;
  const dp_plan *p = op->plan;
  dp_op *child = op->children[0];
  *out = NULL;
  dp_batch *in = NULL;
  int rc = child->cls->next(child, &in);
  if (rc != DIPPER_OK || !in) return rc;
  int64_t seen;
  if (p->u.watermark.delay >= 0) {
    seen = column_max(in->cols[p->u.watermark.time_col], in->nrows);
  } else {
    dp_vector *v = NULL;
    rc = dp_eval(op->ex, p->u.watermark.expr, in, &v);
    if (rc != DIPPER_OK) return rc;
    seen = column_max(v, in->nrows);
    dp_vector_free(v);
  }
  if (seen != DP_WATERMARK_NONE) dp_exec_observe(op->ex, p->u.watermark.id, seen);
  st->view.schema = &p->schema;
  st->view.ncols = in->ncols;
  st->view.cols = in->cols;
  st->view.nrows = in->nrows;
  op->metrics.rows_in += in->nrows;
  op->metrics.rows_out += in->nrows;
  *out = &st->view;
  return DIPPER_OK;
}

static void watermark_close(dp_op *op) { op->state = NULL; }

const dp_op_class dp_op_watermark = {
    .name = "Watermark",
    .open = watermark_open,
    .next = watermark_next,
    .end_batch = NULL,
    .close = watermark_close,
};
