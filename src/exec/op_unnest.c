/*
** op_unnest.c — t CROSS JOIN UNNEST(arr) (DP_P_UNNEST): one output row per
** element of the array (or entry of the map) of each input row: the input
** columns, then the element — spread into its fields when it is a ROW, key
** and value for a MAP — then the 1-based ordinality WITH ORDINALITY.  A NULL
** or empty array gives no row (a CROSS JOIN).  Stateless: it streams.
*/
#include <stdlib.h>

#include "core/grow.h"
#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/rows.h"

typedef struct unnest_state {
  int64_t *in_idx, *el_idx, *field_idx;
  int64_t cap;
  dp_batch *out;
} unnest_state;

static int reserve(unnest_state *st, int64_t n) {
  if (n <= st->cap) return DIPPER_OK;
  int64_t cap = dp_grow_cap(st->cap, n, 1024, INT64_MAX);
  int64_t *a = realloc(st->in_idx, (size_t)cap * sizeof *a);
  if (!a) return DIPPER_NOMEM;
  st->in_idx = a;
  int64_t *b = realloc(st->el_idx, (size_t)cap * sizeof *b);
  if (!b) return DIPPER_NOMEM;
  st->el_idx = b;
  int64_t *c = realloc(st->field_idx, (size_t)cap * sizeof *c);
  if (!c) return DIPPER_NOMEM;
  st->field_idx = c;
  st->cap = cap;
  return DIPPER_OK;
}

/* Expand one input batch into st->out. */
static int expand(dp_op *op, const dp_batch *b, const dp_vector *arr) {
  unnest_state *st = op->state;
  const dp_plan *p = op->plan;
  int64_t n = 0;
  for (int64_t r = 0; r < b->nrows; r++) {
    if (dp_vector_is_null(arr, r)) continue;
    int64_t s, e;
    dp_vector_list_bounds(arr, r, &s, &e);
    int rc = reserve(st, n + (e - s));
    if (rc) return rc;
    for (int64_t j = s; j < e; j++) {
      st->in_idx[n] = r;
      st->el_idx[n++] = j;
    }
  }
  int nin = b->ncols, col = nin, rc;
  for (int c = 0; c < nin; c++)
    if ((rc = dp_vector_take(st->out->cols[c], b->cols[c], st->in_idx, 0, n))) return rc;
  const dp_vector *elems = arr->children[0];
  const dp_type *t = p->u.unnest.arg->type;
  if (t->kind == DP_T_MAP) {
    for (int k = 0; k < 2; k++)
      if ((rc = dp_vector_take(st->out->cols[col++], elems->children[k], st->el_idx, 0, n)))
        return rc;
  } else if (t->elem && t->elem->kind == DP_T_ROW) {
    /* A NULL element gives NULL fields. */
    for (int64_t k = 0; k < n; k++)
      st->field_idx[k] = dp_vector_is_null(elems, st->el_idx[k]) ? -1 : st->el_idx[k];
    for (int f = 0; f < elems->nchildren; f++)
      if ((rc = dp_vector_take(st->out->cols[col++], elems->children[f], st->field_idx, 0, n)))
        return rc;
  } else {
    if ((rc = dp_vector_take(st->out->cols[col++], elems, st->el_idx, 0, n))) return rc;
  }
  if (p->u.unnest.with_ordinality)
    for (int64_t k = 0; k < n; k++) {
      int64_t s, e;
      dp_vector_list_bounds(arr, st->in_idx[k], &s, &e);
      if ((rc = dp_vector_append_i64(st->out->cols[col], st->el_idx[k] - s + 1))) return rc;
    }
  return dp_batch_sync(st->out);
}

static int unnest_next(dp_op *op, dp_batch **out) {
  unnest_state *st = op->state;
  *out = NULL;
  for (;;) {
    dp_batch *b = NULL;
    dp_op *child = op->children[0];
    int rc = child->cls->next(child, &b);
    if (rc || !b) return rc;
    op->metrics.rows_in += b->nrows;
    dp_vector *arr = NULL;
    if ((rc = dp_eval(op->ex, op->plan->u.unnest.arg, b, &arr))) return rc;
    dp_batch_clear(st->out);
    rc = arr->phys == DP_PHYS_LIST ? expand(op, b, arr) : DIPPER_INTERNAL;
    dp_vector_free(arr);
    if (rc) return rc;
    if (st->out->nrows > 0) {
      op->metrics.rows_out += st->out->nrows;
      *out = st->out;
      return DIPPER_OK;
    }
  }
}

static void unnest_close(dp_op *op) {
  unnest_state *st = op->state;
  if (!st) return;
  dp_batch_free(st->out);
  free(st->in_idx);
  free(st->el_idx);
  free(st->field_idx);
  free(st);
  op->state = NULL;
}

static int unnest_open(dp_op *op) {
  unnest_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  st->out = dp_batch_new(&op->plan->schema, 0);
  if (!st->out) {
    unnest_close(op);
    return DIPPER_NOMEM;
  }
  return DIPPER_OK;
}

const dp_op_class dp_op_unnest = {"Unnest", unnest_open, unnest_next, NULL, unnest_close};
