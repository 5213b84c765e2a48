/*
** op_filter.c — FILTER: the rows whose condition is TRUE (NULL is not).
**
** A batch that passes whole goes on as it is (borrowed, no copy); a batch
** that passes in part is compacted with dp_batch_take into a batch of ours;
** a batch that passes not at all is skipped, so that no empty batch travels
** up the tree.  Only the columns (and ROW fields) the plan above reads are
** compacted; the others go on as NULLs (exec/narrow.h).  A literal condition (WHERE TRUE, WHERE FALSE) is decided once.
*/
#include <stdlib.h>

#include "exec/changelog.h"
#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/narrow.h"

typedef enum { COND_ROWS, COND_ALL, COND_NONE } cond_kind;

typedef struct filter_state {
  cond_kind kind;
  dp_batch view;       /* a whole input batch under the node's schema */
  dp_batch *kept;      /* the compacted rows of a partly passing batch */
  dp_narrow *narrow;   /* compacts only the read columns; NULL: all are read */
  int64_t *sel;        /* row indexes that pass */
  int64_t sel_cap;
  dp_vector *change;   /* the passing rows' change kinds, when the input has them */
} filter_state;

static int filter_open(dp_op *op) {
  filter_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  const dp_expr *cond = op->plan->u.filter.cond;
  st->kind = COND_ROWS;
  if (cond->kind == DP_E_LITERAL) {
    const dp_value *v = &cond->u.value;
    bool pass = !v->is_null && v->type && v->type->kind == DP_T_BOOLEAN && v->u.b;
    st->kind = pass ? COND_ALL : COND_NONE;
  }
  int rc = dp_narrow_open(op, &st->narrow);
  if (rc) {
    free(st);
    return rc;
  }
  st->kept = dp_batch_new(&op->plan->schema, 0);
  if (!st->kept) {
    dp_narrow_free(st->narrow);
    free(st);
    return DIPPER_NOMEM;
  }
  op->state = st;
  return DIPPER_OK;
}

static int filter_next(dp_op *op, dp_batch **out) {
  filter_state *st = op->state;
  dp_op *child = op->children[0];
  *out = NULL;
  for (;;) {
    dp_batch *in = NULL;
    int rc = child->cls->next(child, &in);
    if (rc != DIPPER_OK || !in) return rc;
    if (in->nrows == 0) continue;
    op->metrics.rows_in += in->nrows;
    if (st->kind == COND_NONE) continue;
    int64_t n = in->nrows;
    if (st->kind == COND_ROWS) {
      if (st->sel_cap < in->nrows) {
        int64_t *grown = realloc(st->sel, (size_t)in->nrows * sizeof *grown);
        if (!grown) return DIPPER_NOMEM;
        st->sel = grown;
        st->sel_cap = in->nrows;
      }
      dp_vector *mask = NULL;
      rc = dp_eval(op->ex, op->plan->u.filter.cond, in, &mask);
      if (rc != DIPPER_OK) return rc;
      n = dp_eval_select(mask, st->sel);
      dp_vector_free(mask);
      if (n == 0) continue;
    }
    op->metrics.rows_out += n;
    if (n == in->nrows) {
      st->view.schema = &op->plan->schema;
      st->view.ncols = in->ncols;
      st->view.cols = in->cols;
      st->view.nrows = in->nrows;
      st->view.change = in->change;
      *out = &st->view;
      return DIPPER_OK;
    }
    if (st->narrow) {
      rc = dp_narrow_take(st->narrow, in, st->sel, n, out);
    } else {
      st->kept->change = NULL; /* ours is st->change */
      dp_batch_clear(st->kept);
      rc = dp_batch_take(st->kept, in, st->sel, 0, n);
      st->kept->nrows = n;
      *out = st->kept;
    }
    if (rc == DIPPER_OK) rc = dp_change_take(&st->change, in->change, st->sel, n);
    if (rc != DIPPER_OK) {
      *out = NULL;
      return rc;
    }
    (*out)->change = in->change ? st->change : NULL;
    return DIPPER_OK;
  }
}

static void filter_close(dp_op *op) {
  filter_state *st = op->state;
  if (!st) return;
  st->kept->change = NULL;
  dp_batch_free(st->kept);
  dp_vector_free(st->change);
  dp_narrow_free(st->narrow);
  free(st->sel);
  free(st);
  op->state = NULL;
}

const dp_op_class dp_op_filter = {
    .name = "Filter",
    .open = filter_open,
    .next = filter_next,
    .end_batch = NULL,
    .close = filter_close,
};
