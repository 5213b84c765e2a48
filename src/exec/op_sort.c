/*
** op_sort.c — ORDER BY (DP_P_SORT): a stable sort by the keys, ASC/DESC with
** NULLS FIRST/LAST.
**
** Three ways to run, fixed at open by what the analysis says of the input:
**   bounded   every input row is kept until the last batch of the run (the
**             input is complete only then), sorted and emitted once;
**   complete  the input is an aggregation re-emitted whole every batch
**             (complete mode): each batch's rows are sorted on their own;
**   time      the first key is an event-time attribute, ascending: rows wait
**             until the watermark reaches them and leave in order; rows
**             at or before the watermark on arrival are late (Spark's rule:
**             time <= watermark), dropped and counted.
*/
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/rows.h"

typedef enum sort_mode { SORT_BOUNDED, SORT_COMPLETE, SORT_TIME } sort_mode;

typedef struct sort_state {
  sort_mode mode;
  int time_col;     /* SORT_TIME: the input column of the first key */
  dp_batch *rows;   /* rows waiting to be sorted */
  dp_batch *out;
  bool drained;     /* the input of this micro-batch has been read */
  int64_t *perm;    /* rows in output order */
  int64_t nperm, cursor;
  bool emitted_all; /* SORT_BOUNDED: the one output has been made */
} sort_state;

static int keep_rows(dp_op *op, const dp_batch *b) {
  sort_state *st = op->state;
  op->metrics.rows_in += b->nrows;
  if (st->mode != SORT_TIME) return dp_rows_append(st->rows, b);
  int64_t wm = op->ex->late_watermark; /* the previous batch's (exec.h): lateness */
  const dp_vector *t = b->cols[st->time_col];
  int64_t *keep = malloc((size_t)(b->nrows ? b->nrows : 1) * sizeof *keep);
  if (!keep) return DIPPER_NOMEM;
  int64_t n = 0;
  for (int64_t r = 0; r < b->nrows; r++) {
    if (wm != DP_WATERMARK_NONE && !dp_vector_is_null(t, r) && dp_vector_get_i64(t, r) <= wm) {
      op->metrics.late_dropped++;
      continue;
    }
    keep[n++] = r;
  }
  int rc = dp_batch_take(st->rows, b, keep, 0, n);
  free(keep);
  return rc;
}

/* Order the rows that may leave now into st->perm. */
static int plan_output(dp_op *op) {
  sort_state *st = op->state;
  dp_exec *ex = op->ex;
  st->nperm = st->cursor = 0;
  if (st->mode == SORT_BOUNDED && (!ex->final || st->emitted_all)) return DIPPER_OK;
  int64_t n = st->rows->nrows;
  free(st->perm);
  st->perm = malloc((size_t)(n ? n : 1) * sizeof *st->perm);
  if (!st->perm) return DIPPER_NOMEM;
  if (st->mode == SORT_TIME) {
    /* A row is ready when the watermark has reached its time; NULL times
    ** wait for the end of the input. */
    int64_t wm = ex->final ? DP_WATERMARK_END : ex->watermark;
    const dp_vector *t = st->rows->cols[st->time_col];
    for (int64_t r = 0; r < n; r++)
      if (wm == DP_WATERMARK_END ||
          (wm != DP_WATERMARK_NONE && !dp_vector_is_null(t, r) && dp_vector_get_i64(t, r) <= wm))
        st->perm[st->nperm++] = r;
  } else {
    for (int64_t r = 0; r < n; r++) st->perm[r] = r;
    st->nperm = n;
  }
  if (st->mode == SORT_BOUNDED) st->emitted_all = true;
  dp_rows_order o;
  int rc = dp_rows_order_eval(ex, op->plan->u.sort.keys, op->plan->u.sort.nkeys, st->rows, &o);
  if (!rc) rc = dp_rows_sort(st->perm, st->nperm, &o);
  dp_rows_order_free(&o, op->plan->u.sort.keys);
  return rc;
}

static int sort_next(dp_op *op, dp_batch **out) {
  sort_state *st = op->state;
  *out = NULL;
  if (!st->drained) {
    int rc = dp_op_drain(op->children[0], keep_rows, op);
    if (rc) return rc;
    st->drained = true;
    if ((rc = plan_output(op))) return rc;
    op->metrics.state_rows = st->rows->nrows;
  }
  if (st->cursor >= st->nperm) return DIPPER_OK;
  dp_batch_clear(st->out);
  int64_t n = st->nperm - st->cursor;
  if (n > DP_ROWS_CHUNK) n = DP_ROWS_CHUNK;
  int rc = dp_batch_take(st->out, st->rows, st->perm, st->cursor, n);
  if (rc) return rc;
  st->cursor += n;
  op->metrics.rows_out += n;
  *out = st->out;
  return DIPPER_OK;
}

/* Keep the rows that have not left yet (SORT_TIME). */
static int compact(sort_state *st) {
  int64_t n = st->rows->nrows;
  if (st->nperm == 0) return DIPPER_OK;
  uint8_t *gone = calloc((size_t)(n ? n : 1), 1);
  int64_t *keep = malloc((size_t)(n ? n : 1) * sizeof *keep);
  dp_batch *rest = dp_batch_new(st->rows->schema, 0);
  int rc = gone && keep && rest ? DIPPER_OK : DIPPER_NOMEM;
  if (!rc) {
    for (int64_t i = 0; i < st->nperm; i++) gone[st->perm[i]] = 1;
    int64_t k = 0;
    for (int64_t r = 0; r < n; r++)
      if (!gone[r]) keep[k++] = r;
    rc = dp_batch_take(rest, st->rows, keep, 0, k);
  }
  if (!rc) {
    dp_batch_free(st->rows);
    st->rows = rest;
    rest = NULL;
  }
  dp_batch_free(rest);
  free(gone);
  free(keep);
  return rc;
}

static int sort_end_batch(dp_op *op) {
  sort_state *st = op->state;
  st->drained = false;
  int rc = DIPPER_OK;
  if (st->mode == SORT_COMPLETE || (st->mode == SORT_BOUNDED && st->emitted_all))
    dp_batch_clear(st->rows);
  else if (st->mode == SORT_TIME)
    rc = compact(st);
  st->nperm = st->cursor = 0;
  op->metrics.state_rows = st->rows->nrows;
  return rc;
}

static int sort_setup(dp_op *op) {
  const dp_plan *p = op->plan;
  const dp_plan *in = p->inputs[0];
  sort_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  st->time_col = -1;
  if (in->props.bounded || p->props.bounded) {
    st->mode = SORT_BOUNDED;
  } else if (op->ex->output_mode == DP_MODE_COMPLETE) {
    st->mode = SORT_COMPLETE;
  } else {
    const dp_sort_key *k0 = p->u.sort.nkeys > 0 ? &p->u.sort.keys[0] : NULL;
    int c = k0 ? dp_expr_as_column(k0->expr) : -1;
    if (!k0 || k0->desc || c < 0 || !in->props.time_attr || in->props.time_attr[c] < 0)
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                      "ORDER BY on a stream runs only ascending on an event-time column (rows "
                      "leave as the watermark passes them) or over an aggregation in complete "
                      "mode; order by the event-time column, or run in batch mode");
    st->mode = SORT_TIME;
    st->time_col = c;
  }
  st->rows = dp_batch_new(&in->schema, 0);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  return st->rows && st->out ? DIPPER_OK : DIPPER_NOMEM;
}

static void sort_close(dp_op *op) {
  sort_state *st = op->state;
  if (!st) return;
  dp_batch_free(st->rows);
  dp_batch_free(st->out);
  free(st->perm);
  free(st);
  op->state = NULL;
}

/* An open that fails leaves nothing behind (exec.c closes only opened operators). */
static int sort_open(dp_op *op) {
  int rc = sort_setup(op);
  if (rc) sort_close(op);
  return rc;
}

/* ---- checkpoints ----
** Blob, version 1:  version:u8  mode:u8  emitted_all:u8  the rows waiting
** (rows.h's row store; none in complete mode).  The order is recomputed
** from the rows when they leave, so nothing else is kept.  A per-batch
** delta would write the rows added in the batch and the watermark that
** released rows (SORT_TIME leaves exactly those at or before it). */
#define SORT_STATE_VERSION 1

static int sort_save(dp_op *op, dp_buf *out) {
  sort_state *st = op->state;
  dp_state_begin(out, SORT_STATE_VERSION);
  dp_put_u8(out, (uint8_t)st->mode);
  dp_put_u8(out, st->emitted_all);
  int rc = dp_rows_save(out, st->rows);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int sort_restore(dp_op *op, dp_rd *in) {
  sort_state *st = op->state;
  int rc = dp_state_check(op, in, SORT_STATE_VERSION);
  if (rc) return rc;
  uint8_t mode = dp_get_u8(in), emitted = dp_get_u8(in);
  if (in->bad || mode != st->mode || emitted > 1)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted_all = emitted;
  if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its rows");
  op->metrics.state_rows = st->rows->nrows;
  return DIPPER_OK;
}

const dp_op_class dp_op_sort = {"Sort",     sort_open,  sort_next,   sort_end_batch,
                                sort_close, sort_save, sort_restore};
