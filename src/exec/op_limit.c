/*
** op_limit.c — LIMIT n OFFSET m (DP_P_LIMIT).
**
** Rows pass through in arrival order: the first `offset` are skipped, the
** next `limit` kept.  Once the limit is reached the child is not pulled
** again, so a LIMIT over a scan of a bounded input stops reading it.  Over an
** aggregation in complete mode every micro-batch is a whole new result, so
** the count starts again with each batch.
*/
#include <stdlib.h>

#include "exec/exec.h"
#include "exec/rows.h"

typedef struct limit_state {
  int64_t seen;      /* input rows passed (skipped or kept) */
  int64_t kept;
  bool per_batch;    /* complete mode: the count restarts each micro-batch */
  dp_batch *out;
} limit_state;

static int limit_next(dp_op *op, dp_batch **out) {
  limit_state *st = op->state;
  int64_t limit = op->plan->u.limit.limit, offset = op->plan->u.limit.offset;
  if (offset < 0) offset = 0;
  *out = NULL;
  for (;;) {
    if (limit >= 0 && st->kept >= limit) return DIPPER_OK;
    dp_batch *b = NULL;
    dp_op *child = op->children[0];
    int rc = child->cls->next(child, &b);
    if (rc || !b) return rc;
    op->metrics.rows_in += b->nrows;
    int64_t first = offset > st->seen ? offset - st->seen : 0;
    if (first > b->nrows) first = b->nrows;
    int64_t n = b->nrows - first;
    if (limit >= 0 && n > limit - st->kept) n = limit - st->kept;
    st->seen += b->nrows;
    if (n <= 0) continue;
    st->kept += n;
    op->metrics.rows_out += n;
    if (first == 0 && n == b->nrows) {
      *out = b; /* all of it: hand the child's batch on, borrowed the same way */
      return DIPPER_OK;
    }
    dp_batch_clear(st->out);
    if ((rc = dp_batch_take(st->out, b, NULL, first, n))) return rc;
    *out = st->out;
    return DIPPER_OK;
  }
}

static int limit_end_batch(dp_op *op) {
  limit_state *st = op->state;
  if (st->per_batch) st->seen = st->kept = 0;
  return DIPPER_OK;
}

static int limit_setup(dp_op *op) {
  limit_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  const dp_plan *in = op->plan->inputs[0];
  st->per_batch = !in->props.bounded && op->ex->output_mode == DP_MODE_COMPLETE;
  st->out = dp_batch_new(&op->plan->schema, 0);
  return st->out ? DIPPER_OK : DIPPER_NOMEM;
}

static void limit_close(dp_op *op) {
  limit_state *st = op->state;
  if (!st) return;
  dp_batch_free(st->out);
  free(st);
  op->state = NULL;
}

/* An open that fails leaves nothing behind (exec.c closes only opened operators). */
static int limit_open(dp_op *op) {
  int rc = limit_setup(op);
  if (rc) limit_close(op);
  return rc;
}

/* ---- checkpoints ----
** Blob, version 1:  version:u8  seen:uvar  kept:uvar  (the counts; in
** complete mode both 0 after every batch).  The whole state is this small:
** a delta would be the same two numbers. */
#define LIMIT_STATE_VERSION 1

static int limit_save(dp_op *op, dp_buf *out) {
  limit_state *st = op->state;
  dp_state_begin(out, LIMIT_STATE_VERSION);
  dp_put_uvar(out, (uint64_t)st->seen);
  dp_put_uvar(out, (uint64_t)st->kept);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int limit_restore(dp_op *op, dp_rd *in) {
  limit_state *st = op->state;
  int rc = dp_state_check(op, in, LIMIT_STATE_VERSION);
  if (rc) return rc;
  uint64_t seen = dp_get_uvar(in), kept = dp_get_uvar(in);
  if (in->bad || seen > INT64_MAX || kept > seen)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its counts");
  st->seen = (int64_t)seen;
  st->kept = (int64_t)kept;
  return DIPPER_OK;
}

const dp_op_class dp_op_limit = {"Limit",     limit_open,  limit_next,   limit_end_batch,
                                 limit_close, limit_save, limit_restore};
