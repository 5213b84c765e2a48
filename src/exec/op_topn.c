/*
** op_topn.c — Top-N (DP_P_TOPN): the ROW_NUMBER()/RANK()/DENSE_RANK() OVER
** (PARTITION BY .. ORDER BY ..) <= N pattern, over bounded inputs.
**
** When the input has ended, the rows are sorted by the ORDER BY keys (a
** stable sort: ties keep their arrival order) and walked once, each
** partition counting its own ranks:
**   ROW_NUMBER  1, 2, 3, ... ;
**   RANK        ties share a rank, the next rank skips (1, 1, 3);
**   DENSE_RANK  ties share a rank, no gaps (1, 1, 2);
** rows ranked <= N leave, with the rank as last column when the query reads
** it.  A Top-N over a stream is refused at open: its windowed form (emit
** when the window closes) is not implemented by this engine yet.
*/
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/rows.h"

typedef struct topn_state {
  dp_batch *rows;
  bool drained, emitted;
  int64_t *sel, *rank; /* rows that leave, and their ranks */
  int64_t nout, cursor;
  dp_batch *out;
} topn_state;

static int keep_rows(dp_op *op, const dp_batch *b) {
  op->metrics.rows_in += b->nrows;
  return dp_rows_append(((topn_state *)op->state)->rows, b);
}

static int rank_rows(dp_op *op) {
  topn_state *st = op->state;
  const dp_plan *p = op->plan;
  int64_t n = st->rows->nrows;
  size_t sz = (size_t)(n ? n : 1) * sizeof(int64_t);
  int64_t *order = malloc(sz), *count = calloc((size_t)(n ? n : 1), sizeof(int64_t));
  int64_t *last = malloc(sz), *rank = malloc(sz);
  st->sel = malloc(sz);
  st->rank = malloc(sz);
  dp_schema ks = {p->u.topn.npartition, NULL};
  dp_groups parts;
  memset(&parts, 0, sizeof parts);
  dp_rows_order o;
  memset(&o, 0, sizeof o);
  int rc = order && count && last && rank && st->sel && st->rank ? DIPPER_OK : DIPPER_NOMEM;
  const dp_vector *pc[64];
  if (!rc && p->u.topn.npartition > 64) rc = DIPPER_LIMIT;
  if (!rc) {
    ks.cols = dp_arena_calloc(op->ex->batch_arena, (size_t)ks.ncols + 1, sizeof(dp_field));
    if (!ks.cols) rc = DIPPER_NOMEM;
    for (int k = 0; !rc && k < ks.ncols; k++) {
      ks.cols[k] = st->rows->schema->cols[p->u.topn.partition[k]];
      pc[k] = st->rows->cols[p->u.topn.partition[k]];
    }
  }
  if (!rc) rc = dp_groups_init(&parts, &ks);
  if (!rc) rc = dp_rows_order_eval(op->ex, p->u.topn.order, p->u.topn.nkeys, st->rows, &o);
  for (int64_t r = 0; !rc && r < n; r++) order[r] = r;
  if (!rc) rc = dp_rows_sort(order, n, &o);
  for (int64_t k = 0; !rc && k < n; k++) {
    int64_t r = order[k], g;
    bool fresh;
    if ((rc = dp_groups_find_or_add(&parts, pc, r, &g, &fresh))) break;
    int64_t c = ++count[g];
    bool tie = c > 1 && dp_rows_order_compare(&o, last[g], r) == 0;
    switch (p->u.topn.rank) {
    case DP_RANK_ROW_NUMBER: rank[g] = c; break;
    case DP_RANK_RANK: if (!tie) rank[g] = c; break;
    case DP_RANK_DENSE_RANK: if (!tie) rank[g] = c == 1 ? 1 : rank[g] + 1; break;
    }
    last[g] = r;
    if (rank[g] <= p->u.topn.n) {
      st->sel[st->nout] = r;
      st->rank[st->nout++] = rank[g];
    }
  }
  dp_rows_order_free(&o, p->u.topn.order);
  dp_groups_free(&parts);
  free(order);
  free(count);
  free(last);
  free(rank);
  return rc;
}

static int topn_next(dp_op *op, dp_batch **out) {
  topn_state *st = op->state;
  const dp_plan *p = op->plan;
  *out = NULL;
  int rc;
  if (!st->drained) {
    if ((rc = dp_op_drain(op->children[0], keep_rows, op))) return rc;
    st->drained = true;
    op->metrics.state_rows = st->rows->nrows;
    if (op->ex->final && !st->emitted) {
      st->emitted = true;
      if ((rc = rank_rows(op))) return rc;
    }
  }
  if (st->cursor >= st->nout) return DIPPER_OK;
  int64_t n = st->nout - st->cursor;
  if (n > DP_ROWS_CHUNK) n = DP_ROWS_CHUNK;
  dp_batch_clear(st->out);
  int nin = st->rows->ncols;
  for (int c = 0; c < nin; c++)
    if ((rc = dp_rows_gather(st->out->cols[c], st->rows->cols[c], st->sel, st->cursor, n))) return rc;
  if (p->u.topn.emit_rank)
    for (int64_t k = 0; k < n; k++)
      if ((rc = dp_vector_append_i64(st->out->cols[nin], st->rank[st->cursor + k]))) return rc;
  if ((rc = dp_batch_sync(st->out))) return rc;
  st->cursor += n;
  op->metrics.rows_out += n;
  *out = st->out;
  return DIPPER_OK;
}

static int topn_end_batch(dp_op *op) {
  topn_state *st = op->state;
  st->drained = false;
  if (st->emitted) {
    dp_batch_clear(st->rows);
    st->nout = st->cursor = 0;
  }
  op->metrics.state_rows = st->rows->nrows;
  return DIPPER_OK;
}

static void topn_close(dp_op *op) {
  topn_state *st = op->state;
  if (!st) return;
  dp_batch_free(st->rows);
  dp_batch_free(st->out);
  free(st->sel);
  free(st->rank);
  free(st);
  op->state = NULL;
}

static int topn_open(dp_op *op) {
  const dp_plan *p = op->plan;
  if (!p->inputs[0]->props.bounded && !p->props.bounded)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "the embedded engine runs Top-N (ROW_NUMBER() .. <= N) only over bounded "
                    "inputs yet; run it in batch mode (SET 'execution.runtime-mode' = 'batch')");
  topn_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  st->rows = dp_batch_new(&p->inputs[0]->schema, 0);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  if (!st->rows || !st->out) {
    topn_close(op);
    return DIPPER_NOMEM;
  }
  return DIPPER_OK;
}

const dp_op_class dp_op_topn = {"TopN", topn_open, topn_next, topn_end_batch, topn_close};
