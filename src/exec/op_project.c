/*
** op_project.c — PROJECT: one expression per output column.
**
** A column that is a bare reference to an input column is not copied: the
** output batch borrows the input's vector (a projection that only reorders
** or drops columns touches no data).  The other columns are evaluated a
** batch at a time by dp_eval; their vectors are ours and live until the next
** call of next().  A column no operator above reads (plan/prune.h: a join
** above that reads a few columns of a view, say) is not evaluated at all:
** it is an all-NULL filler of narrow.h, so its expression costs nothing.
*/
#include <stdlib.h>

#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/narrow.h"

typedef struct project_state {
  dp_batch out;        /* schema = the node's; cols mix borrowed and owned vectors */
  int *input_col;      /* per output column: the input column it passes through, or -1 */
  dp_vector **owned;   /* per output column: the vector dp_eval made for it, or NULL */
  dp_narrow *nw;       /* the demand on the node, or NULL when every column is read */
} project_state;

static void free_owned(project_state *st) {
  for (int i = 0; i < st->out.ncols; i++) {
    dp_vector_free(st->owned[i]);
    st->owned[i] = NULL;
  }
}

static int project_open(dp_op *op) {
  const dp_plan *p = op->plan;
  int n = p->u.project.n;
  size_t slots = (size_t)(n > 0 ? n : 1);
  project_state *st = dp_arena_calloc(op->ex->arena, 1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  st->out.schema = &p->schema;
  st->out.ncols = n;
  st->out.cols = dp_arena_calloc(op->ex->arena, slots, sizeof *st->out.cols);
  st->input_col = dp_arena_calloc(op->ex->arena, slots, sizeof *st->input_col);
  st->owned = dp_arena_calloc(op->ex->arena, slots, sizeof *st->owned);
  if (!st->out.cols || !st->input_col || !st->owned) return DIPPER_NOMEM;
  for (int i = 0; i < n; i++) {
    const dp_expr *e = p->u.project.exprs[i];
    st->input_col[i] = e->kind == DP_E_COLUMN && e->u.column.outer == 0 ? e->u.column.index : -1;
  }
  op->state = st;
  return dp_narrow_open(op, &st->nw);
}

static int project_next(dp_op *op, dp_batch **out) {
  project_state *st = op->state;
  *out = NULL;
  free_owned(st);
  dp_op *child = op->children[0];
  dp_batch *in = NULL;
  int rc = child->cls->next(child, &in);
  if (rc != DIPPER_OK || !in) return rc;
  const dp_plan *p = op->plan;
  const dp_col_need *need = st->nw ? dp_narrow_need(st->nw) : NULL;
  for (int i = 0; i < st->out.ncols; i++) {
    int c = st->input_col[i];
    if (need && !dp_col_needed(&need[i])) {
      /* no one reads it: a filler (borrowed from nw until the next call) */
      if ((rc = dp_narrow_null(st->nw, i, in->nrows, &st->out.cols[i]))) return rc;
      continue;
    }
    if (c >= 0 && c < in->ncols) {
      st->out.cols[i] = in->cols[c];
      continue;
    }
    rc = dp_eval(op->ex, p->u.project.exprs[i], in, &st->owned[i]);
    if (rc != DIPPER_OK) {
      free_owned(st);
      return rc;
    }
    st->out.cols[i] = st->owned[i];
  }
  st->out.nrows = in->nrows;
  st->out.change = in->change; /* borrowed, as the passed columns */
  op->metrics.rows_in += in->nrows;
  op->metrics.rows_out += in->nrows;
  *out = &st->out;
  return DIPPER_OK;
}

static void project_close(dp_op *op) {
  project_state *st = op->state;
  if (st) {
    free_owned(st);
    dp_narrow_free(st->nw);
  }
  op->state = NULL;
}

const dp_op_class dp_op_project = {
    .name = "Project",
    .open = project_open,
    .next = project_next,
    .end_batch = NULL,
    .close = project_close,
};
