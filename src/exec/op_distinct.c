/*
** op_distinct.c — SELECT DISTINCT and UNION without ALL (DP_P_DISTINCT).
**
** A row leaves the first time it is seen and never again (NULLs are equal to
** each other here, as in GROUP BY), so the operator streams: it needs no end
** of input, and on a stream its output is append-only.  State: one stored
** row per distinct row.  When a column is an event-time attribute, rows at or
** before the watermark are late (Spark's rule: time <= watermark; dropped,
** counted) and stored rows at or before it are forgotten, since no row to come can equal them; otherwise the state
** lasts as long as the query.
*/
#include <stdlib.h>

#include "exec/exec.h"
#include "exec/rows.h"

typedef struct distinct_state {
  int time_col;      /* an event-time column of the rows, or -1 */
  dp_groups seen;
  dp_rowlog log;     /* the rows' changes since the last checkpoint (rows.h) */
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
    int64_t wm = op->ex->late_watermark; /* the previous batch's (exec.h): lateness */
    for (int64_t r = 0; r < b->nrows; r++) {
      if (st->time_col >= 0 && wm != DP_WATERMARK_NONE &&
          !dp_vector_is_null(b->cols[st->time_col], r) &&
          dp_vector_get_i64(b->cols[st->time_col], r) <= wm) {
        op->metrics.late_dropped++;
        continue;
      }
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
    if ((rc = dp_batch_take(st->out, b, st->sel, 0, n))) return rc;
    *out = st->out;
    return DIPPER_OK;
  }
}

/* Forget the rows at or before the watermark (time_col set). */
static int distinct_end_batch(dp_op *op) {
  distinct_state *st = op->state;
  int64_t wm = op->ex->watermark, n = dp_groups_count(&st->seen);
  if (st->time_col < 0 || wm == DP_WATERMARK_NONE || n == 0) return DIPPER_OK;
  const dp_vector *t = st->seen.keys->cols[st->time_col];
  int64_t old = 0;
  for (int64_t id = 0; id < n; id++)
    if (dp_vector_is_null(t, id) || dp_vector_get_i64(t, id) <= wm) old++;
  if (old == 0) return DIPPER_OK;
  int64_t *keep = malloc((size_t)n * sizeof *keep), *drop = malloc((size_t)old * sizeof *drop);
  int64_t k = 0, d = 0;
  int rc = keep && drop ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t id = 0; !rc && id < n; id++) {
    if (dp_vector_is_null(t, id) || dp_vector_get_i64(t, id) <= wm) drop[d++] = id;
    else keep[k++] = id;
  }
  if (!rc) rc = dp_groups_compact(&st->seen, keep, k);
  if (!rc) rc = dp_rowlog_drop(&st->log, drop, d);
  free(keep);
  free(drop);
  op->metrics.state_rows = dp_groups_count(&st->seen);
  return rc;
}

static int distinct_setup(dp_op *op) {
  distinct_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  const dp_plan *in = op->plan->inputs[0];
  st->time_col = -1;
  for (int c = 0; !in->props.bounded && in->props.time_attr && c < in->schema.ncols; c++)
    if (in->props.time_attr[c] >= 0 && st->time_col < 0) st->time_col = c;
  int rc = dp_groups_init(&st->seen, &in->schema);
  if (rc) return rc;
  st->out = dp_batch_new(&op->plan->schema, 0);
  return st->out ? DIPPER_OK : DIPPER_NOMEM;
}

static void distinct_close(dp_op *op) {
  distinct_state *st = op->state;
  if (!st) return;
  dp_groups_free(&st->seen);
  dp_rowlog_free(&st->log);
  dp_batch_free(st->out);
  free(st->sel);
  free(st);
  op->state = NULL;
}

/* An open that fails leaves nothing behind (exec.c closes only opened operators). */
/* 'state.backend' = 'rocksdb' is refused: this operator keeps its state in
** memory only (state_rocks.h serves joins, aggregations, deduplications). */
static int refuse_rocks(dp_op *op) {
  if (!op->ex->query || !op->ex->query->streaming || !dp_exec_state_rocks(op->ex)) return DIPPER_OK;
  return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, op->plan->span,
                  "'state.backend' = 'rocksdb' does not take the %s operator (line %d) yet: it "
                  "keeps its state in memory only; set 'state.backend' = 'hashmap' for this "
                  "query",
                  "DISTINCT", (int)op->plan->span.line);
}

static int distinct_open(dp_op *op) {
  int rc = refuse_rocks(op);
  if (rc) return rc;
  rc = distinct_setup(op);
  if (rc) distinct_close(op);
  return rc;
}

/* ---- checkpoints ----
** Blob, version 1:  version:u8  the rows seen (rows.h's group table).
** Delta (save_delta), the same version:  version:u8  the rows' log (rows.h:
** the rows the watermark dropped, by base position)  the rows added since
** (rows.h's group table form): O(rows added + rows dropped). */
#define DISTINCT_STATE_VERSION 1

static int distinct_save(dp_op *op, dp_buf *out) {
  distinct_state *st = op->state;
  dp_state_begin(out, DISTINCT_STATE_VERSION);
  int rc = dp_groups_save(out, &st->seen);
  if (!rc) dp_rowlog_mark(&st->log, dp_groups_count(&st->seen));
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int distinct_restore(dp_op *op, dp_rd *in) {
  distinct_state *st = op->state;
  int rc = dp_state_check(op, in, DISTINCT_STATE_VERSION);
  if (rc) return rc;
  if ((rc = dp_groups_load(in, &st->seen))) return dp_state_corrupt(op, rc, "its rows");
  op->metrics.state_rows = dp_groups_count(&st->seen);
  dp_rowlog_mark(&st->log, dp_groups_count(&st->seen));
  return DIPPER_OK;
}

static int distinct_save_delta(dp_op *op, dp_buf *out) {
  distinct_state *st = op->state;
  dp_state_begin(out, DISTINCT_STATE_VERSION);
  int64_t *at, nat;
  int rc = dp_rowlog_save(out, &st->log, &at, &nat);
  free(at); /* nothing here changes in place */
  if (!rc) rc = dp_groups_save_from(out, &st->seen, dp_rowlog_first_new(&st->log));
  if (!rc) dp_rowlog_mark(&st->log, dp_groups_count(&st->seen));
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int distinct_restore_delta(dp_op *op, dp_rd *in) {
  distinct_state *st = op->state;
  int rc = dp_state_check(op, in, DISTINCT_STATE_VERSION);
  if (rc) return rc;
  int64_t n = dp_groups_count(&st->seen), *keep = NULL, nkeep = 0;
  dp_rowlog_delta d;
  if ((rc = dp_rowlog_load(in, n, &d))) return dp_state_corrupt(op, rc, "the rows it dropped");
  if (d.ndirty > 0) rc = DIPPER_CORRUPT;
  if (!rc) rc = dp_rowlog_keep(&d, n, &keep, &nkeep);
  if (!rc) rc = dp_groups_compact(&st->seen, keep, nkeep);
  free(keep);
  dp_rowlog_delta_free(&d);
  if (rc) return dp_state_corrupt(op, rc, "the rows it dropped");
  if ((rc = dp_groups_load_more(in, &st->seen))) return dp_state_corrupt(op, rc, "its new rows");
  op->metrics.state_rows = dp_groups_count(&st->seen);
  dp_rowlog_mark(&st->log, dp_groups_count(&st->seen));
  return DIPPER_OK;
}

const dp_op_class dp_op_distinct = {"Distinct",     distinct_open,  distinct_next,
                                    distinct_end_batch, distinct_close, distinct_save,
                                    distinct_restore, distinct_save_delta,
                                    distinct_restore_delta};
