/*
** op_distinct.c — SELECT DISTINCT and UNION without ALL (DP_P_DISTINCT).
**
** A row leaves the first time it is seen and never again (NULLs are equal to
** each other here, as in GROUP BY), so the operator streams: it needs no end
** of input, and on a stream its output is append-only.  State: one stored
** row per distinct row, for the life of the query.
*/
#include <stdlib.h>

#include "exec/exec.h"
#include "exec/rows.h"

typedef struct distinct_state {
  dp_groups seen;
  int64_t *sel;
  int64_t cap;
  dp_batch *out;
} distinct_state;

static int distinct_next(dp_op *op, dp_batch **out) {
  distinct_state *st = op->state;
  *out = NULL;
  for (;;) {
    dp_batch *b = NULL;
    dp_op *child = op->children[0];
    int rc = child->cls->next(child, &b);
    if (rc || !b) return rc;
    op->metrics.rows_in += b->nrows;
    if (b->nrows > st->cap) {
      int64_t *sel = realloc(st->sel, (size_t)b->nrows * sizeof *sel);
      if (!sel) return DIPPER_NOMEM;
      st->sel = sel;
      st->cap = b->nrows;
    }
    int64_t n = 0;
    const dp_vector *const *cols = (const dp_vector *const *)b->cols;
    for (int64_t r = 0; r < b->nrows; r++) {
      int64_t id;
      bool fresh;
      if ((rc = dp_groups_find_or_add(&st->seen, cols, r, &id, &fresh))) return rc;
      if (fresh) st->sel[n++] = r;
    }
    op->metrics.state_rows = dp_groups_count(&st->seen);
    if (n == 0) continue;
    op->metrics.rows_out += n;
    if (n == b->nrows) {
      *out = b;
      return DIPPER_OK;
    }
    dp_batch_clear(st->out);
    if ((rc = dp_rows_gather_batch(st->out, b, st->sel, 0, n))) return rc;
    *out = st->out;
    return DIPPER_OK;
  }
}

static int distinct_open(dp_op *op) {
  distinct_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  int rc = dp_groups_init(&st->seen, &op->plan->inputs[0]->schema);
  if (rc) return rc;
  st->out = dp_batch_new(&op->plan->schema, 0);
  return st->out ? DIPPER_OK : DIPPER_NOMEM;
}

static void distinct_close(dp_op *op) {
  distinct_state *st = op->state;
  if (!st) return;
  dp_groups_free(&st->seen);
  dp_batch_free(st->out);
  free(st->sel);
  free(st);
  op->state = NULL;
}

const dp_op_class dp_op_distinct = {"Distinct", distinct_open, distinct_next, NULL, distinct_close};
