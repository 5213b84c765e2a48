/*
** op_setop.c — INTERSECT [ALL] and EXCEPT [ALL] (DP_P_SETOP) over bounded
** inputs.
**
** Each distinct row is counted on both sides (NULLs equal, as SQL's set
** operations compare rows); when the inputs have ended, a row leaves
**   INTERSECT      once if both counts are > 0;
**   INTERSECT ALL  min(left, right) times;
**   EXCEPT         once if the left count is > 0 and the right one is 0;
**   EXCEPT ALL     max(left - right, 0) times;
** in the order the rows were first seen on the left.  On a stream the answer
** would be revised by every new row: the validator refuses that, and so does
** open.
*/
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "exec/exec.h"
#include "exec/rows.h"

typedef struct setop_state {
  dp_groups rows;
  int64_t *count[2]; /* per distinct row: occurrences on the left, the right */
  int64_t cap;
  bool drained, done;
  int64_t cursor;    /* next distinct row to emit */
  int64_t *rep;      /* row ids of the output chunk */
  int64_t rep_cap;
  dp_batch *out;
} setop_state;

static int count_side(dp_op *op, const dp_batch *b, int side) {
  setop_state *st = op->state;
  op->metrics.rows_in += b->nrows;
  const dp_vector *const *cols = (const dp_vector *const *)b->cols;
  for (int64_t r = 0; r < b->nrows; r++) {
    int64_t id;
    bool fresh;
    int rc = dp_groups_find_or_add(&st->rows, cols, r, &id, &fresh);
    if (rc) return rc;
    if (id >= st->cap) {
      int64_t cap = dp_grow_cap(st->cap, id + 1, 1024, INT64_MAX);
      for (int s = 0; s < 2; s++) {
        int64_t *c = realloc(st->count[s], (size_t)cap * sizeof *c);
        if (!c) return DIPPER_NOMEM;
        memset(c + st->cap, 0, (size_t)(cap - st->cap) * sizeof *c);
        st->count[s] = c;
      }
      st->cap = cap;
    }
    st->count[side][id]++;
  }
  return DIPPER_OK;
}

static int count_left(dp_op *op, const dp_batch *b) { return count_side(op, b, 0); }
static int count_right(dp_op *op, const dp_batch *b) { return count_side(op, b, 1); }

/* How many times distinct row id leaves. */
static int64_t copies(const dp_plan *p, const setop_state *st, int64_t id) {
  int64_t l = st->count[0][id], r = st->count[1][id];
  if (p->u.setop.except) {
    if (p->u.setop.all) return l > r ? l - r : 0;
    return l > 0 && r == 0;
  }
  if (p->u.setop.all) return l < r ? l : r;
  return l > 0 && r > 0;
}

static int setop_next(dp_op *op, dp_batch **out) {
  setop_state *st = op->state;
  *out = NULL;
  int rc;
  if (!st->drained) {
    if ((rc = dp_op_drain(op->children[0], count_left, op))) return rc;
    if ((rc = dp_op_drain(op->children[1], count_right, op))) return rc;
    st->drained = true;
    op->metrics.state_rows = dp_groups_count(&st->rows);
  }
  if (!op->ex->final || st->done) return DIPPER_OK;
  int64_t ngroups = dp_groups_count(&st->rows), n = 0;
  while (st->cursor < ngroups && n < DP_ROWS_CHUNK) {
    int64_t id = st->cursor++;
    int64_t k = copies(op->plan, st, id);
    if (n + k > st->rep_cap) {
      int64_t cap = (n + k) * 2;
      int64_t *rep = realloc(st->rep, (size_t)cap * sizeof *rep);
      if (!rep) return DIPPER_NOMEM;
      st->rep = rep;
      st->rep_cap = cap;
    }
    while (k-- > 0) st->rep[n++] = id;
  }
  if (n == 0) {
    st->done = true;
    return DIPPER_OK;
  }
  dp_batch_clear(st->out);
  if ((rc = dp_batch_take(st->out, st->rows.keys, st->rep, 0, n))) return rc;
  op->metrics.rows_out += n;
  *out = st->out;
  return DIPPER_OK;
}

static int setop_end_batch(dp_op *op) {
  ((setop_state *)op->state)->drained = false;
  return DIPPER_OK;
}

static void setop_close(dp_op *op);

static int setop_open(dp_op *op) {
  const dp_plan *p = op->plan;
  if (!p->inputs[0]->props.bounded || !p->inputs[1]->props.bounded)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "%s of streams would revise its answer with every new row; run it in "
                    "batch mode (SET 'execution.runtime-mode' = 'batch') or write it as a join",
                    p->u.setop.except ? "EXCEPT" : "INTERSECT");
  setop_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  int rc = dp_groups_init(&st->rows, &p->schema);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  if (!rc && !st->out) rc = DIPPER_NOMEM;
  if (rc) setop_close(op);
  return rc;
}

static void setop_close(dp_op *op) {
  setop_state *st = op->state;
  if (!st) return;
  dp_groups_free(&st->rows);
  dp_batch_free(st->out);
  free(st->count[0]);
  free(st->count[1]);
  free(st->rep);
  free(st);
  op->state = NULL;
}

/* ---- checkpoints ----
** Blob, version 1:
**   version:u8  done:u8  cursor:uvar  rows (rows.h's group table)
**   left:uvar right:uvar per row
** (the cursor is 0 until the final batch, which ends with done).  A
** per-batch delta would write the rows added since the last checkpoint and
** the counts that changed, by row id. */
#define SETOP_STATE_VERSION 1
#define SETOP_MAX_COUNT ((UINT64_C(1) << 48) - 1)

static int setop_save(dp_op *op, dp_buf *out) {
  setop_state *st = op->state;
  int64_t n = dp_groups_count(&st->rows);
  dp_state_begin(out, SETOP_STATE_VERSION);
  dp_put_u8(out, st->done);
  dp_put_uvar(out, (uint64_t)st->cursor);
  int rc = dp_groups_save(out, &st->rows);
  for (int64_t id = 0; id < n; id++) {
    dp_put_uvar(out, (uint64_t)st->count[0][id]);
    dp_put_uvar(out, (uint64_t)st->count[1][id]);
  }
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int setop_restore(dp_op *op, dp_rd *in) {
  setop_state *st = op->state;
  int rc = dp_state_check(op, in, SETOP_STATE_VERSION);
  if (rc) return rc;
  uint8_t done = dp_get_u8(in);
  uint64_t cursor = dp_get_uvar(in);
  if (in->bad || done > 1) return dp_state_corrupt(op, DIPPER_CORRUPT, "its progress");
  if ((rc = dp_groups_load(in, &st->rows))) return dp_state_corrupt(op, rc, "its rows");
  int64_t n = dp_groups_count(&st->rows);
  if (cursor > (uint64_t)n) return dp_state_corrupt(op, DIPPER_CORRUPT, "its progress");
  /* room for every row read, zeroed past them as count_side expects */
  int64_t cap = n > 1024 ? n : 1024;
  for (int s = 0; s < 2; s++) {
    int64_t *c = calloc((size_t)cap, sizeof *c);
    if (!c) return dp_state_corrupt(op, DIPPER_NOMEM, "its counts");
    free(st->count[s]);
    st->count[s] = c;
  }
  st->cap = cap;
  for (int64_t id = 0; id < n; id++)
    for (int s = 0; s < 2; s++) {
      uint64_t k = dp_get_uvar(in);
      if (k > SETOP_MAX_COUNT) in->bad = true; /* more rows than any run could hold */
      st->count[s][id] = (int64_t)(k & SETOP_MAX_COUNT);
    }
  if (in->bad) return dp_state_corrupt(op, DIPPER_CORRUPT, "its counts");
  st->done = done;
  st->cursor = (int64_t)cursor;
  op->metrics.state_rows = n;
  return DIPPER_OK;
}

const dp_op_class dp_op_setop = {"SetOp",     setop_open,  setop_next,   setop_end_batch,
                                 setop_close, setop_save, setop_restore};
