/*
** op_values.c — VALUES: literal rows, a bounded input read once.
**
** The rows are evaluated when the operator opens (cells are constant
** expressions: literals, casts, calls on literals) and handed out by the
** first next() of the query's life, whichever micro-batch that is; afterwards
** the input is exhausted.  The driver asks dp_values_plan whether rows are
** still waiting, as it asks the scans.
*/
#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/exec_int.h"

typedef struct values_state {
  dp_batch *rows;
  bool emitted;
} values_state;

/* One cell into its column: a literal directly, anything else through the
** evaluator over a one-row batch with no columns. */
static int append_cell(dp_op *op, const dp_expr *cell, dp_vector *col) {
  if (cell->kind == DP_E_LITERAL &&
      (cell->u.value.is_null || dp_type_equal(cell->type, col->type)))
    return dp_vector_append_value(col, &cell->u.value);
  dp_schema none = {0, NULL};
  dp_batch one = {&none, 0, NULL, 1};
  dp_vector *v = NULL;
  int rc = dp_eval(op->ex, cell, &one, &v);
  if (rc != DIPPER_OK) return rc;
  rc = v->length >= 1 ? dp_vector_append_from(col, v, 0) : DIPPER_INTERNAL;
  dp_vector_free(v);
  return rc;
}

static int values_open(dp_op *op) {
  const dp_plan *p = op->plan;
  int ncols = p->schema.ncols, nrows = p->u.values.nrows;
  values_state *st = dp_arena_calloc(op->ex->arena, 1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  st->rows = dp_batch_new(&p->schema, nrows > 0 ? nrows : 1);
  if (!st->rows) return DIPPER_NOMEM;
  for (int r = 0; r < nrows; r++)
    for (int c = 0; c < ncols; c++) {
      int rc = append_cell(op, p->u.values.cells[(size_t)r * (size_t)ncols + (size_t)c],
                           st->rows->cols[c]);
      if (rc != DIPPER_OK) {
        dp_batch_free(st->rows);
        return rc;
      }
    }
  /* No columns (SELECT 1's FROM-less input): the rows are counted, not stored. */
  st->rows->nrows = nrows;
  op->state = st;
  return DIPPER_OK;
}

static int values_next(dp_op *op, dp_batch **out) {
  values_state *st = op->state;
  *out = NULL;
  if (st->emitted) return DIPPER_OK;
  st->emitted = true;
  if (st->rows->nrows == 0) return DIPPER_OK;
  op->metrics.rows_out += st->rows->nrows;
  *out = st->rows;
  return DIPPER_OK;
}

int dp_values_plan(dp_op *op, bool *has_data, bool *exhausted) {
  values_state *st = op->state;
  *has_data = !st->emitted && st->rows->nrows > 0;
  *exhausted = true;
  return DIPPER_OK;
}

static void values_close(dp_op *op) {
  values_state *st = op->state;
  if (st) dp_batch_free(st->rows);
  op->state = NULL;
}

/* Checkpoints: the rows are part of the plan, so the one thing to keep is
** whether they went out; a batch planned before they did emits them again
** on its own when it is run again. */
int dp_values_save_position(dp_op *op, dp_buf *out) {
  const values_state *st = op->state;
  dp_put_u8(out, st->emitted ? 1 : 0);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_values_restore_position(dp_op *op, dp_rd *in) {
  values_state *st = op->state;
  uint8_t emitted = dp_get_u8(in);
  if (in->bad || emitted > 1) return DIPPER_CORRUPT;
  st->emitted = emitted != 0;
  return DIPPER_OK;
}

const dp_op_class dp_op_values = {
    .name = "Values",
    .open = values_open,
    .next = values_next,
    .end_batch = NULL,
    .close = values_close,
};
