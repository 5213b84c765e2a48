/*
** op_topn.c — Top-N (DP_P_TOPN): the ROW_NUMBER()/RANK()/DENSE_RANK() OVER
** (PARTITION BY .. ORDER BY ..) <= N pattern.
**
** Ranking a set of rows: sort them by the ORDER BY keys (stable: ties keep
** their arrival order) and walk them once, each partition counting its own
** ranks — ROW_NUMBER 1, 2, 3; RANK shares a rank between ties and skips
** after them (1, 1, 3); DENSE_RANK shares without gaps (1, 1, 2) — keeping
** the rows ranked <= N, with the rank as last column when the query reads it.
**
** Three ways to run, fixed at open:
**   bounded  the whole input is ranked once, when it has ended;
**   window   PARTITION BY holds the window_end of a window (a window Top-N,
**            append mode; also over a bounded input in streaming mode): rows wait until the watermark reaches their
**            window's end, then that window is ranked, emitted and dropped;
**            rows of a window already emitted are late (dropped, counted);
**   update   any other stream: the state is the current top rows of every
**            partition with the rank each was last emitted with; each
**            micro-batch re-ranks them with its new rows and emits the top
**            rows that changed: rows new to the top, and (when the query
**            reads the rank) rows whose rank moved — Flink's updating Top-N,
**            as upserts keyed by (partition, rank).  A row pushed out of the
**            top is not retracted: update mode has no deletes, and the row
**            that took its rank is emitted in its place.
**            With a state TTL ('table.exec.state.ttl', STATE_TTL) a
**            partition that received no row for that long, in processing
**            time, is dropped with its top rows before the next batch's
**            input, without output (state_ttl.h; the partitions by id in
**            `parts`): a row of it that comes later starts it afresh.
*/
#include <stdlib.h>
#include <string.h>

#include "exec/agg_rocks.h"
#include "exec/exec.h"
#include "exec/rows.h"
#include "exec/state_ttl.h"

typedef enum topn_mode { TOPN_BOUNDED, TOPN_WINDOW, TOPN_UPDATE } topn_mode;

typedef struct topn_state {
  topn_mode mode;
  int wend_col;        /* TOPN_WINDOW: the input column holding window_end */
  int64_t prev_wm;     /* the watermark of the previous batch */
  dp_schema part_schema;
  dp_batch *rows;      /* rows waiting (bounded, window) or the current top (update) */
  dp_rowlog log;       /* the changes of `rows` since the last checkpoint (rows.h) */
  dp_batch *fresh;     /* TOPN_UPDATE: this batch's new rows */
  int64_t *rank_of;    /* TOPN_UPDATE: per row of `rows`, the rank it was emitted with */
  int64_t rank_cap;
  bool drained, emitted;
  dp_batch *result;    /* rows to emit in this batch, output layout */
  int64_t cursor;
  dp_batch *out;
  /* 'state.backend' = 'rocksdb', window mode (the section "over RocksDB"
  ** below): `rows` holds only the batch's new rows */
  dp_rocks *rocks;
  int64_t rcount;      /* rows stored */
  /* TOPN_UPDATE with a state TTL (ttl.ttl > 0): the partitions, by id, in
  ** order of their last row (state_ttl.h) */
  dp_groups parts;
  dp_state_ttl ttl;
} topn_state;

static int rocks_close_windows(dp_op *op);
static int rocks_save(dp_op *op, dp_buf *out);
static int rocks_restore(dp_op *op, dp_rd *in);

static int keep_rows(dp_op *op, const dp_batch *b) {
  topn_state *st = op->state;
  op->metrics.rows_in += b->nrows;
  if (st->mode == TOPN_UPDATE) {
    const dp_vector *pc[64];
    for (int k = 0; st->ttl.ttl > 0 && k < st->part_schema.ncols; k++)
      pc[k] = b->cols[op->plan->u.topn.partition[k]];
    for (int64_t r = 0; st->ttl.ttl > 0 && r < b->nrows; r++) {
      int64_t g;
      bool fresh;
      int rc = dp_groups_find_or_add(&st->parts, pc, r, &g, &fresh);
      if (!rc) rc = dp_state_ttl_touch(&st->ttl, g, op->ex->batch_start_time);
      if (rc) return rc;
    }
    return dp_rows_append(st->fresh, b);
  }
  if (st->mode != TOPN_WINDOW || st->prev_wm == DP_WATERMARK_NONE) return dp_rows_append(st->rows, b);
  /* A row of a window whose end the watermark had passed: its window is gone. */
  const dp_vector *we = b->cols[st->wend_col];
  int64_t *keep = malloc((size_t)(b->nrows ? b->nrows : 1) * sizeof *keep);
  if (!keep) return DIPPER_NOMEM;
  int64_t n = 0;
  for (int64_t r = 0; r < b->nrows; r++) {
    if (!dp_vector_is_null(we, r) && dp_vector_get_i64(we, r) <= st->prev_wm) {
      op->metrics.late_dropped++;
      continue;
    }
    keep[n++] = r;
  }
  int rc = dp_batch_take(st->rows, b, keep, 0, n);
  free(keep);
  return rc;
}

/* Rank `rows`: the rows kept, in output order, into sel[0..*n) and their ranks. */
static int rank_rows(dp_op *op, const dp_batch *rows, int64_t *sel, int64_t *ranks, int64_t *nsel) {
  topn_state *st = op->state;
  const dp_plan *p = op->plan;
  int64_t n = rows->nrows;
  *nsel = 0;
  size_t sz = (size_t)(n ? n : 1) * sizeof(int64_t);
  int64_t *order = malloc(sz), *count = calloc((size_t)(n ? n : 1), sizeof(int64_t));
  int64_t *last = malloc(sz), *rank = malloc(sz);
  dp_groups parts;
  memset(&parts, 0, sizeof parts);
  dp_rows_order o;
  memset(&o, 0, sizeof o);
  int rc = order && count && last && rank ? DIPPER_OK : DIPPER_NOMEM;
  const dp_vector *pc[64];
  for (int k = 0; k < st->part_schema.ncols; k++) pc[k] = rows->cols[p->u.topn.partition[k]];
  if (!rc) rc = dp_groups_init(&parts, &st->part_schema);
  if (!rc) rc = dp_rows_order_eval(op->ex, p->u.topn.order, p->u.topn.nkeys, rows, &o);
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
      sel[*nsel] = r;
      ranks[(*nsel)++] = rank[g];
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

/* Append rows sel[0..n) of `rows` with their ranks to st->result. */
static int add_result(topn_state *st, const dp_plan *p, const dp_batch *rows, const int64_t *sel,
                      const int64_t *ranks, int64_t n) {
  int nin = rows->ncols, rc;
  for (int c = 0; c < nin; c++)
    if ((rc = dp_vector_take(st->result->cols[c], rows->cols[c], sel, 0, n))) return rc;
  if (p->u.topn.emit_rank)
    for (int64_t k = 0; k < n; k++)
      if ((rc = dp_vector_append_i64(st->result->cols[nin], ranks[k]))) return rc;
  return dp_batch_sync(st->result);
}

/* Rank `rows` and put every kept row into the result. */
static int rank_into_result(dp_op *op, const dp_batch *rows) {
  topn_state *st = op->state;
  size_t sz = (size_t)(rows->nrows ? rows->nrows : 1) * sizeof(int64_t);
  int64_t *sel = malloc(sz), *ranks = malloc(sz), n = 0;
  int rc = sel && ranks ? rank_rows(op, rows, sel, ranks, &n) : DIPPER_NOMEM;
  if (!rc) rc = add_result(st, op->plan, rows, sel, ranks, n);
  free(sel);
  free(ranks);
  return rc;
}

/* TOPN_WINDOW: rank and emit the windows the watermark has closed. */
static int close_windows(dp_op *op) {
  topn_state *st = op->state;
  int64_t wm = op->ex->final ? DP_WATERMARK_END : op->ex->watermark;
  if (wm == DP_WATERMARK_NONE) return DIPPER_OK;
  int64_t n = st->rows->nrows, nclosed = 0, nopen = 0;
  size_t sz = (size_t)(n ? n : 1) * sizeof(int64_t);
  int64_t *closed = malloc(sz), *open = malloc(sz);
  dp_batch *done = dp_batch_new(st->rows->schema, 0), *rest = dp_batch_new(st->rows->schema, 0);
  int rc = closed && open && done && rest ? DIPPER_OK : DIPPER_NOMEM;
  const dp_vector *we = rc ? NULL : st->rows->cols[st->wend_col];
  for (int64_t r = 0; !rc && r < n; r++) {
    if (wm == DP_WATERMARK_END || dp_vector_is_null(we, r) || dp_vector_get_i64(we, r) <= wm)
      closed[nclosed++] = r;
    else
      open[nopen++] = r;
  }
  if (!rc && nclosed > 0) {
    rc = dp_batch_take(done, st->rows, closed, 0, nclosed);
    if (!rc) rc = dp_batch_take(rest, st->rows, open, 0, nopen);
    if (!rc) rc = dp_rowlog_drop(&st->log, closed, nclosed);
    if (!rc) rc = rank_into_result(op, done);
    if (!rc) {
      dp_batch_free(st->rows);
      st->rows = rest;
      rest = NULL;
    }
  }
  dp_batch_free(done);
  dp_batch_free(rest);
  free(closed);
  free(open);
  return rc;
}

/* TOPN_UPDATE: re-rank the kept rows with the new ones; the new top becomes
** the state, and its rows that are new or changed rank are emitted. */
static int update_top(dp_op *op) {
  topn_state *st = op->state;
  const dp_plan *p = op->plan;
  if (st->fresh->nrows == 0) return DIPPER_OK;
  int64_t nold = st->rows->nrows; /* rows [0, nold) were emitted before, with rank_of */
  int rc = dp_rows_append(st->rows, st->fresh);
  int64_t n = st->rows->nrows, nsel = 0, nemit = 0;
  size_t sz = (size_t)(n ? n : 1) * sizeof(int64_t);
  int64_t *sel = malloc(sz), *ranks = malloc(sz), *emit = malloc(sz), *emit_rank = malloc(sz);
  dp_batch *top = dp_batch_new(st->rows->schema, 0);
  if (!rc && (!sel || !ranks || !emit || !emit_rank || !top)) rc = DIPPER_NOMEM;
  if (!rc) rc = rank_rows(op, st->rows, sel, ranks, &nsel);
  for (int64_t k = 0; !rc && k < nsel; k++) {
    bool same = sel[k] < nold && (!p->u.topn.emit_rank || st->rank_of[sel[k]] == ranks[k]);
    if (same) continue;
    emit[nemit] = sel[k];
    emit_rank[nemit++] = ranks[k];
  }
  if (!rc) rc = add_result(st, p, st->rows, emit, emit_rank, nemit);
  if (!rc) rc = dp_batch_take(top, st->rows, sel, 0, nsel);
  if (!rc && nsel > st->rank_cap) {
    int64_t *r = realloc(st->rank_of, (size_t)nsel * sizeof *r);
    if (!r) rc = DIPPER_NOMEM;
    else {
      st->rank_of = r;
      st->rank_cap = nsel;
    }
  }
  if (!rc) {
    if (nsel > 0) memcpy(st->rank_of, ranks, (size_t)nsel * sizeof *ranks);
    dp_batch_free(st->rows);
    dp_rowlog_clear(&st->log); /* the new top is laid out afresh */
    st->rows = top;
    top = NULL;
  }
  dp_batch_clear(st->fresh);
  dp_batch_free(top);
  free(sel);
  free(ranks);
  free(emit);
  free(emit_rank);
  return rc;
}

/* TOPN_UPDATE with a TTL, before the batch's input: the partitions idle
** for it dropped, with their rows (found at the cost of what expires; a
** pass over the top only in a batch where a partition expired). */
static int expire_parts(dp_op *op) {
  topn_state *st = op->state;
  int64_t *keep = NULL, nkeep = 0, *drop = NULL, ndrop = 0, ng = dp_groups_count(&st->parts);
  int rc = dp_state_ttl_expire_compact(&st->ttl, op->ex->batch_start_time, ng, &keep, &nkeep,
                                       &drop, &ndrop);
  if (rc || ndrop == 0) return rc;
  int64_t n = st->rows->nrows, nrows = 0;
  uint8_t *gone = calloc((size_t)ng, 1);
  int64_t *sel = malloc((size_t)(n ? n : 1) * sizeof *sel);
  rc = gone && sel ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t k = 0; !rc && k < ndrop; k++) gone[drop[k]] = 1;
  const dp_vector *pc[64];
  for (int k = 0; k < st->part_schema.ncols; k++) pc[k] = st->rows->cols[op->plan->u.topn.partition[k]];
  for (int64_t r = 0; !rc && r < n; r++) {
    int64_t g = dp_groups_find(&st->parts, pc, r);
    if (g < 0 || !gone[g]) {
      st->rank_of[nrows] = st->rank_of[r];
      sel[nrows++] = r;
    }
  }
  if (!rc) rc = dp_rows_compact(&st->rows, sel, nrows);
  if (!rc) rc = dp_groups_compact(&st->parts, keep, nkeep);
  dp_rowlog_clear(&st->log); /* the top is laid out afresh, as update_top does */
  free(gone);
  free(sel);
  free(keep);
  free(drop);
  return rc;
}

static int topn_next(dp_op *op, dp_batch **out) {
  topn_state *st = op->state;
  *out = NULL;
  int rc;
  if (!st->drained) {
    /* expiry before the input: a row of this batch starts an expired partition afresh */
    if (st->ttl.ttl > 0 && (rc = expire_parts(op))) return rc;
    if ((rc = dp_op_drain(op->children[0], keep_rows, op))) return rc;
    st->drained = true;
    st->cursor = 0;
    dp_batch_clear(st->result);
    if (st->mode == TOPN_BOUNDED && op->ex->final && !st->emitted) {
      st->emitted = true;
      rc = rank_into_result(op, st->rows);
    } else if (st->mode == TOPN_WINDOW) {
      rc = st->rocks ? rocks_close_windows(op) : close_windows(op);
    } else if (st->mode == TOPN_UPDATE) {
      rc = update_top(op);
    }
    if (rc) return rc;
    op->metrics.state_rows = st->rocks ? st->rcount : st->rows->nrows;
  }
  if (st->cursor >= st->result->nrows) return DIPPER_OK;
  int64_t n = st->result->nrows - st->cursor;
  if (n > DP_ROWS_CHUNK) n = DP_ROWS_CHUNK;
  dp_batch_clear(st->out);
  if ((rc = dp_batch_take(st->out, st->result, NULL, st->cursor, n))) return rc;
  st->cursor += n;
  op->metrics.rows_out += n;
  *out = st->out;
  return DIPPER_OK;
}

static int topn_end_batch(dp_op *op) {
  topn_state *st = op->state;
  st->drained = false;
  st->prev_wm = op->ex->watermark;
  dp_batch_clear(st->result);
  st->cursor = 0;
  if (st->mode == TOPN_BOUNDED && st->emitted) {
    dp_batch_clear(st->rows);
    dp_rowlog_clear(&st->log);
  }
  op->metrics.state_rows = st->rocks ? st->rcount : st->rows->nrows;
  return DIPPER_OK;
}

/* Does input column `col` of p hold the window_end of a window? */
static bool is_window_end(const dp_plan *p, int col) {
  for (int depth = 0; p && col >= 0 && depth < 64; depth++) {
    switch (p->kind) {
    case DP_P_WINDOW: {
      int nin = p->inputs[0]->schema.ncols;
      if (col == nin + 1) return true;
      if (col >= nin) return false;
      p = p->inputs[0];
      break;
    }
    case DP_P_AGGREGATE:
      if (col >= p->u.aggregate.ngroup) return false;
      if (p->u.aggregate.window && col == p->u.aggregate.wend) return true;
      col = dp_expr_as_column(p->u.aggregate.group[col]);
      p = p->inputs[0];
      break;
    case DP_P_PROJECT:
      col = dp_expr_as_column(p->u.project.exprs[col]);
      p = p->inputs[0];
      break;
    case DP_P_FILTER: case DP_P_WATERMARK: case DP_P_SORT: case DP_P_LIMIT:
    case DP_P_DISTINCT: case DP_P_DEDUPLICATE: case DP_P_TOPN: case DP_P_OVER: case DP_P_UNNEST:
      if (col >= p->inputs[0]->schema.ncols) return false;
      p = p->inputs[0];
      break;
    default:
      return false;
    }
  }
  return false;
}

static void topn_close(dp_op *op) {
  topn_state *st = op->state;
  if (!st) return;
  dp_batch_free(st->rows);
  dp_rowlog_free(&st->log);
  dp_rocks_free(st->rocks);
  dp_batch_free(st->fresh);
  free(st->rank_of);
  dp_groups_free(&st->parts);
  dp_state_ttl_free(&st->ttl);
  dp_batch_free(st->result);
  dp_batch_free(st->out);
  free(st);
  op->state = NULL;
}

static int topn_setup(dp_op *op) {
  const dp_plan *p = op->plan;
  const dp_plan *in = p->inputs[0];
  topn_state *st = op->state;
  if (p->u.topn.npartition > 64)
    return dp_error(op->ex->diags, DIPPER_LIMIT, p->span,
                    "a Top-N takes at most 64 PARTITION BY columns");
  st->prev_wm = DP_WATERMARK_NONE;
  st->wend_col = -1;
  for (int k = 0; k < p->u.topn.npartition && st->wend_col < 0; k++)
    if (is_window_end(in, p->u.topn.partition[k])) st->wend_col = p->u.topn.partition[k];
  bool window = st->wend_col >= 0 && op->ex->output_mode == DP_MODE_APPEND;
  if (in->props.bounded || p->props.bounded) {
    /* a window Top-N over a bounded input in streaming mode still closes
    ** its windows as the watermark passes them, as window aggregations do */
    bool streaming = op->ex->query && op->ex->query->streaming;
    st->mode = window && streaming ? TOPN_WINDOW : TOPN_BOUNDED;
  } else {
    st->mode = window ? TOPN_WINDOW : TOPN_UPDATE;
  }
  st->part_schema.ncols = p->u.topn.npartition;
  st->part_schema.cols = dp_arena_calloc(op->ex->arena, (size_t)p->u.topn.npartition + 1, sizeof(dp_field));
  if (!st->part_schema.cols) return DIPPER_NOMEM;
  for (int k = 0; k < p->u.topn.npartition; k++)
    st->part_schema.cols[k] = in->schema.cols[p->u.topn.partition[k]];
  st->rows = dp_batch_new(&in->schema, 0);
  st->fresh = dp_batch_new(&in->schema, 0);
  st->result = dp_batch_new(&p->schema, 0);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  if (!st->rows || !st->fresh || !st->result || !st->out) return DIPPER_NOMEM;
  int64_t ttl = st->mode == TOPN_UPDATE ? p->props.state_ttl[0] : 0;
  if (ttl > 0 && dp_exec_state_rocks(op->ex))
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "the Top-N's state TTL ('table.exec.state.ttl' or STATE_TTL) is carried out "
                    "in memory only so far: set 'state.backend' = 'hashmap', or drop the TTL");
  if (ttl > 0) {
    int rc = dp_groups_init(&st->parts, &st->part_schema);
    if (!rc) rc = dp_state_ttl_init(&st->ttl, ttl);
    if (rc) return rc;
  }
  if (st->mode == TOPN_BOUNDED || !op->ex->query || !op->ex->query->streaming ||
      !dp_exec_state_rocks(op->ex))
    return DIPPER_OK;
  if (st->mode == TOPN_UPDATE)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "'state.backend' = 'rocksdb' does not take the Top-N operator (line %d) in "
                    "update mode yet (only a window Top-N, in append mode): it keeps its state "
                    "in memory only; set 'state.backend' = 'hashmap' for this query",
                    (int)p->span.line);
  int rc = dp_rocks_open_op(op, "topn", &st->rocks);
  if (!rc) dp_rocks_space(st->rocks, 0, &in->schema);
  return rc;
}

static int topn_open(dp_op *op) {
  topn_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  int rc = topn_setup(op);
  if (rc) topn_close(op);
  return rc;
}

/* ---- checkpoints ----
** Blob, version 1:
**   version:u8  mode:u8  emitted:u8  prev_wm:svar  rows (rows.h's row
**   store: waiting, or the current top)  [update: rank:uvar per row]
** Delta (save_delta), the same version:  version:u8  mode:u8  emitted:u8
**   prev_wm:svar  the rows' log (rows.h: the rows of the windows closed, by
**   base position; all of them once a bounded run emitted)  the rows added
**   since  [update: rank:uvar per added row]
** The window mode's delta costs the rows added and the rows closed.  The
** update mode lays out a new top in every batch that has rows (a
** re-ranking of old and new rows), so its delta holds the whole top, as a
** whole state would: a top stays N rows per partition.
** With a state TTL (update mode), whole and delta alike end with 'P', the
** partitions (rows.h's group table, by id) and state_ttl.h's section
** (their last rows' times); at the blob's end, so that a blob without it
** (written before the TTL was set) reads as before: its partitions, found
** again from the top's rows, count as written at the restart. */
#define TOPN_STATE_VERSION 1

static int save_parts(const topn_state *st, dp_buf *out) {
  if (st->ttl.ttl <= 0) return DIPPER_OK;
  dp_put_u8(out, 'P');
  int rc = dp_groups_save(out, &st->parts);
  dp_state_ttl_save_section(&st->ttl, out);
  return rc;
}

/* The rest of a blob: save_parts' section, or (none) the partitions of the
** restored top, every one written at `now`. */
static int load_parts(dp_op *op, dp_rd *in) {
  topn_state *st = op->state;
  int64_t now = op->ex->batch_start_time;
  dp_groups fresh;
  int rc = dp_groups_init(&fresh, &st->part_schema);
  if (!rc && dp_rd_left(in) == 0) {
    const dp_vector *pc[64];
    for (int k = 0; k < st->part_schema.ncols; k++)
      pc[k] = st->rows->cols[op->plan->u.topn.partition[k]];
    for (int64_t r = 0; !rc && st->ttl.ttl > 0 && r < st->rows->nrows; r++) {
      int64_t g;
      bool is_new;
      rc = dp_groups_find_or_add(&fresh, pc, r, &g, &is_new);
      if (!rc && is_new) rc = dp_state_ttl_touch(&st->ttl, g, now);
    }
  } else if (!rc) {
    if (dp_get_u8(in) != 'P') in->bad = true;
    rc = in->bad ? DIPPER_CORRUPT : dp_groups_load(in, &fresh);
    if (!rc) rc = dp_state_ttl_load_section(&st->ttl, in, dp_groups_count(&fresh), now);
  }
  if (!rc && st->ttl.ttl > 0) {
    dp_groups_free(&st->parts);
    st->parts = fresh;
  } else {
    dp_groups_free(&fresh);
  }
  return rc ? dp_state_corrupt(op, rc, "its partitions' state TTL") : DIPPER_OK;
}

static int topn_save(dp_op *op, dp_buf *out) {
  topn_state *st = op->state;
  if (st->rocks) return rocks_save(op, out);
  dp_state_begin(out, TOPN_STATE_VERSION);
  dp_put_u8(out, (uint8_t)st->mode);
  dp_put_u8(out, st->emitted);
  dp_put_svar(out, st->prev_wm);
  int rc = dp_rows_save(out, st->rows);
  if (st->mode == TOPN_UPDATE)
    for (int64_t r = 0; r < st->rows->nrows; r++) dp_put_uvar(out, (uint64_t)st->rank_of[r]);
  if (!rc) rc = save_parts(st, out);
  if (!rc) dp_rowlog_mark(&st->log, st->rows->nrows);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* Ranks of rows [first, nrows): each from 1 to N. */
static int load_ranks(dp_op *op, dp_rd *in, int64_t first) {
  topn_state *st = op->state;
  int64_t n = st->rows->nrows;
  if (n > st->rank_cap) {
    int64_t *r = realloc(st->rank_of, (size_t)n * sizeof *r);
    if (!r) return DIPPER_NOMEM;
    st->rank_of = r;
    st->rank_cap = n;
  }
  for (int64_t k = first; k < n; k++) {
    uint64_t rank = dp_get_uvar(in);
    /* a row of the top has a rank from 1 to N */
    if (rank < 1 || rank > (uint64_t)op->plan->u.topn.n) in->bad = true;
    st->rank_of[k] = (int64_t)(rank & INT64_MAX);
  }
  return in->bad ? DIPPER_CORRUPT : DIPPER_OK;
}

static int topn_save_delta(dp_op *op, dp_buf *out) {
  topn_state *st = op->state;
  if (st->rocks) return rocks_save(op, out);
  dp_state_begin(out, TOPN_STATE_VERSION);
  dp_put_u8(out, (uint8_t)st->mode);
  dp_put_u8(out, st->emitted);
  dp_put_svar(out, st->prev_wm);
  int64_t *at, nat, first = dp_rowlog_first_new(&st->log);
  int rc = dp_rowlog_save(out, &st->log, &at, &nat);
  free(at); /* no row changes in place */
  if (!rc) rc = dp_rows_save_from(out, st->rows, first);
  if (st->mode == TOPN_UPDATE)
    for (int64_t r = first; r < st->rows->nrows; r++) dp_put_uvar(out, (uint64_t)st->rank_of[r]);
  if (!rc) rc = save_parts(st, out);
  if (!rc) dp_rowlog_mark(&st->log, st->rows->nrows);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int topn_restore_delta(dp_op *op, dp_rd *in) {
  topn_state *st = op->state;
  if (st->rocks) return rocks_restore(op, in);
  int rc = dp_state_check(op, in, TOPN_STATE_VERSION);
  if (rc) return rc;
  uint8_t mode = dp_get_u8(in), emitted = dp_get_u8(in);
  int64_t prev_wm = dp_get_svar(in);
  if (in->bad || mode != st->mode || emitted > 1)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted = emitted;
  st->prev_wm = prev_wm;
  int64_t n = st->rows->nrows, *keep = NULL, nkeep = 0;
  dp_rowlog_delta d;
  if ((rc = dp_rowlog_load(in, n, &d))) return dp_state_corrupt(op, rc, "the rows it dropped");
  if (d.ndirty > 0) rc = DIPPER_CORRUPT;
  if (!rc) rc = dp_rowlog_keep(&d, n, &keep, &nkeep);
  if (!rc) rc = dp_rows_compact(&st->rows, keep, nkeep);
  for (int64_t k = 0; !rc && st->mode == TOPN_UPDATE && k < nkeep; k++)
    st->rank_of[k] = st->rank_of[keep[k]];
  free(keep);
  dp_rowlog_delta_free(&d);
  if (rc) return dp_state_corrupt(op, rc, "the rows it dropped");
  int64_t first = st->rows->nrows;
  if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its new rows");
  if (st->mode == TOPN_UPDATE && (rc = load_ranks(op, in, first)))
    return dp_state_corrupt(op, rc, "its ranks");
  if (st->mode == TOPN_UPDATE && (rc = load_parts(op, in))) return rc;
  op->metrics.state_rows = st->rows->nrows;
  dp_rowlog_mark(&st->log, st->rows->nrows);
  return DIPPER_OK;
}

static int topn_restore(dp_op *op, dp_rd *in) {
  topn_state *st = op->state;
  if (st->rocks) return rocks_restore(op, in);
  int rc = dp_state_check(op, in, TOPN_STATE_VERSION);
  if (rc) return rc;
  uint8_t mode = dp_get_u8(in), emitted = dp_get_u8(in);
  int64_t prev_wm = dp_get_svar(in);
  if (in->bad || mode != st->mode || emitted > 1)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted = emitted;
  st->prev_wm = prev_wm;
  if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its rows");
  int64_t n = st->rows->nrows;
  if (st->mode == TOPN_UPDATE && (rc = load_ranks(op, in, 0)))
    return dp_state_corrupt(op, rc, "its ranks");
  if (st->mode == TOPN_UPDATE && (rc = load_parts(op, in))) return rc;
  op->metrics.state_rows = n;
  dp_rowlog_mark(&st->log, n);
  return DIPPER_OK;
}

/* ---- over RocksDB ('state.backend' = 'rocksdb'): window mode ----
** The rows waiting for their window live in state_rocks.h's keyed row store
** (space 0), keyed by the PARTITION BY columns (window_end among them) with
** window_end as the time: a micro-batch's rows of one partition are one
** chunk, and the windows the watermark closes come back from the time index
** (dp_rocks_rows_expire: a range scan up to the watermark, each chunk read
** and deleted), a partition's rows in arrival order, to be ranked as in
** memory.  `rows` holds only the batch's new rows.  The update mode (the
** current top of every partition) is refused. */
#define TOPN_ROCKS_VERSION 2

static int rocks_close_windows(dp_op *op) {
  topn_state *st = op->state;
  int64_t wm = op->ex->final ? DP_WATERMARK_END : op->ex->watermark, removed = 0;
  const dp_plan *p = op->plan;
  int rc = dp_rocks_begin(st->rocks);
  if (!rc && st->rows->nrows > 0)
    rc = dp_rocks_rows_add(st->rocks, 0, st->rows, p->u.topn.partition, p->u.topn.npartition,
                           st->wend_col, NULL);
  if (!rc) rc = dp_rocks_commit(st->rocks);
  if (rc) return rc;
  st->rcount += st->rows->nrows;
  dp_batch_clear(st->rows);
  if (wm == DP_WATERMARK_NONE) return DIPPER_OK;
  dp_batch *done = dp_batch_new(st->rows->schema, 0);
  if (!done) return DIPPER_NOMEM;
  rc = dp_rocks_rows_expire(st->rocks, 0, wm, done, &removed);
  st->rcount -= removed;
  if (!rc && done->nrows > 0) rc = rank_into_result(op, done);
  dp_batch_free(done);
  return rc;
}

/*   version:u8 (2)  prev_wm:svar  checkpoint:svar  rows:svar
** the checkpoint the batch id of the RocksDB checkpoint under
** <query folder>/rocksdb/topn-<n>/. */
static int rocks_save(dp_op *op, dp_buf *out) {
  topn_state *st = op->state;
  int64_t ck;
  int rc = dp_rocks_save(st->rocks, op->ex->batch_id, &ck);
  if (rc) return rc;
  dp_state_begin(out, TOPN_ROCKS_VERSION);
  dp_put_svar(out, st->prev_wm);
  dp_put_svar(out, ck);
  dp_put_svar(out, st->rcount);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int rocks_restore(dp_op *op, dp_rd *in) {
  topn_state *st = op->state;
  int rc = dp_state_check(op, in, TOPN_ROCKS_VERSION);
  if (rc) return rc;
  int64_t wm = dp_get_svar(in), ck = dp_get_svar(in), count = dp_get_svar(in);
  if (in->bad || ck < 0 || count < 0)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its rocksdb checkpoint");
  if ((rc = dp_rocks_restore(st->rocks, ck))) return dp_state_corrupt(op, rc, "its rocksdb checkpoint");
  st->prev_wm = wm;
  st->rcount = count;
  op->metrics.state_rows = count;
  return DIPPER_OK;
}

const dp_op_class dp_op_topn = {"TopN",         topn_open,       topn_next,
                                topn_end_batch, topn_close,      topn_save,
                                topn_restore,   topn_save_delta, topn_restore_delta};
