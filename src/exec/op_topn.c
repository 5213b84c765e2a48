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
**            the waiting rows are indexed by window end (due_heap.h), so a
**            batch costs the rows it adds and the windows it closes;
**   update   any other stream: the state is the current top rows of every
**            partition with the rank each was last emitted with, each
**            partition's top one run of the store; each micro-batch
**            re-ranks only the tops its rows hit, with those rows, and emits
**            the top rows that changed: rows new to the top, and (when the
**            query reads the rank) rows whose rank moved — Flink's updating Top-N,
**            as upserts keyed by (partition, rank).  A row pushed out of the
**            top is not retracted: update mode has no deletes, and the row
**            that took its rank is emitted in its place.
**            A replaced top is left as tombstones (`dead`), the new one
**            appended; the store compacts once they are half of it.
**            With a state TTL ('table.exec.state.ttl', STATE_TTL) a
**            partition that received no row for that long, in processing
**            time, is dropped with its top rows before the next batch's
**            input, without output (state_ttl.h; the partitions by id in
**            `parts`): a row of it that comes later starts it afresh.
**            An expired partition keeps its id, its top empty and off the
**            TTL list, until such partitions are half of `parts`: then
**            `parts` is compacted (O(1) amortized per expired partition),
**            so a batch costs the partitions that expire, not `parts`.
**            With 'state.backend' = 'rocksdb' the tops live in RocksDB,
**            one entry per partition (topn_rocks.h), and this state is a
**            write-back cache of them: a batch's partitions are loaded
**            before update_top, which runs over them unchanged.
*/
#include <stdlib.h>
#include <string.h>

#include "exec/agg_rocks.h"
#include "exec/due_heap.h"
#include "exec/exec.h"
#include "exec/rows.h"
#include "exec/state_ttl.h"
#include "exec/topn_int.h"
#include "exec/topn_rocks.h"

static int rocks_close_windows(dp_op *op);
static int rocks_save(dp_op *op, dp_buf *out);
static int rocks_restore(dp_op *op, dp_rd *in);

/* Room for n rows' per-row data. */
int dp_topn_grow_rows(topn_state *st, int64_t n) {
  if (n <= st->row_cap) return DIPPER_OK;
  int64_t cap = st->row_cap > 0 ? st->row_cap : 64;
  while (cap < n) cap *= 2;
  int64_t *r = realloc(st->rank_of, (size_t)cap * sizeof *r);
  if (r) st->rank_of = r;
  int64_t *s = r ? realloc(st->seq, (size_t)cap * sizeof *s) : NULL;
  if (s) st->seq = s;
  uint8_t *d = s ? realloc(st->dead, (size_t)cap) : NULL;
  if (!d) return DIPPER_NOMEM;
  st->dead = d;
  st->row_cap = cap;
  return DIPPER_OK;
}

/* Rows [first, nrows) were appended: alive, rank and number 0. */
static int sync_rows(topn_state *st, int64_t first) {
  int64_t n = st->rows->nrows;
  int rc = dp_topn_grow_rows(st, n);
  for (int64_t r = first; !rc && r < n; r++) {
    st->dead[r] = 0;
    st->rank_of[r] = st->seq[r] = 0;
  }
  return rc;
}

/* Room for n partitions; the new ones empty. */
int dp_topn_grow_parts(topn_state *st, int64_t n) {
  if (n <= st->part_cap) return DIPPER_OK;
  int64_t cap = st->part_cap > 0 ? st->part_cap : 64;
  while (cap < n) cap *= 2;
  int64_t **arr[4] = {&st->pstart, &st->pcount, &st->pmark, &st->ptix};
  for (int i = 0; i < 4; i++) {
    int64_t *a = realloc(*arr[i], (size_t)cap * sizeof *a);
    if (!a) return DIPPER_NOMEM;
    memset(a + st->part_cap, 0, (size_t)(cap - st->part_cap) * sizeof *a);
    *arr[i] = a;
  }
  st->part_cap = cap;
  return DIPPER_OK;
}

int dp_topn_mark_dead(topn_state *st, int64_t pos) {
  st->dead[pos] = 1;
  st->ndead++;
  return dp_rowlog_touch(&st->log, pos);
}

static inline int64_t wend_of(const dp_vector *we, int64_t r) {
  return dp_vector_is_null(we, r) ? INT64_MIN : dp_vector_get_i64(we, r);
}

/* TOPN_WINDOW: the heap made again over the live rows (after a compaction or
** a restore), O(n). */
static int rebuild_due(topn_state *st) {
  int64_t n = st->rows->nrows, k = 0;
  int rc = dp_due_reserve(&st->due, n);
  if (rc) return rc;
  const dp_vector *we = st->rows->cols[st->wend_col];
  for (int64_t r = 0; r < n; r++)
    if (!st->dead[r]) st->due.v[k++] = (dp_due){wend_of(we, r), r};
  st->due.n = k;
  dp_due_heapify(&st->due);
  st->nindexed = n;
  return DIPPER_OK;
}

/* Drop the tombstones once they are half the store (and at least 1,024):
** O(n) in one batch of n/2 that each made one, O(1) amortized.  The delta
** names the base rows dropped (dp_rowlog_drop). */
int dp_topn_maybe_compact(topn_state *st) {
  int64_t n = st->rows->nrows;
  if (st->ndead < 1024 || st->ndead * 2 < n) return DIPPER_OK;
  dp_gone_split s;
  int rc = dp_gone_split_ids(st->dead, n, n, st->ndead, true, &s);
  if (!rc) rc = dp_rowlog_drop(&st->log, s.drop, s.ndrop);
  if (!rc) rc = dp_rows_compact(&st->rows, s.keep, s.nkeep);
  if (!rc) {
    for (int64_t k = 0; k < s.nkeep; k++) {
      st->rank_of[k] = st->rank_of[s.keep[k]];
      st->seq[k] = st->seq[s.keep[k]];
      st->dead[k] = 0;
    }
    st->ndead = 0;
    if (st->mode == TOPN_UPDATE)
      for (int64_t g = 0; g < dp_groups_count(&st->parts); g++)
        if (st->pcount[g] > 0) st->pstart[g] = s.remap[st->pstart[g]];
    if (st->mode == TOPN_WINDOW) rc = rebuild_due(st);
  }
  dp_gone_split_free(&s);
  return rc;
}

static int keep_rows(dp_op *op, const dp_batch *b) {
  topn_state *st = op->state;
  op->metrics.rows_in += b->nrows;
  if (st->mode == TOPN_UPDATE) {
    const dp_vector *pc[64];
    /* over RocksDB the partitions are touched once they are loaded (dp_topn_rocks_fetch) */
    bool touch = st->ttl.ttl > 0 && !st->urocks;
    for (int k = 0; touch && k < st->part_schema.ncols; k++)
      pc[k] = b->cols[op->plan->u.topn.partition[k]];
    for (int64_t r = 0; touch && r < b->nrows; r++) {
      int64_t g;
      bool fresh;
      int rc = dp_groups_find_or_add(&st->parts, pc, r, &g, &fresh);
      if (!rc) rc = dp_state_ttl_touch(&st->ttl, g, op->ex->batch_start_time);
      if (rc) return rc;
    }
    return dp_rows_append(st->fresh, b);
  }
  int64_t first = st->rows->nrows;
  if (st->mode != TOPN_WINDOW || st->prev_wm == DP_WATERMARK_NONE) {
    int rc = dp_rows_append(st->rows, b);
    return rc ? rc : sync_rows(st, first);
  }
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
  return rc ? rc : sync_rows(st, first);
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

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* TOPN_WINDOW: rank and emit the windows the watermark has closed, found
** by the heap of window ends: the batch indexes the rows it brought and
** pops the closed ones, O((added + closed) log n); the closed rows become
** tombstones, ranked in arrival order as a pass over the store gave them. */
static int close_windows(dp_op *op) {
  topn_state *st = op->state;
  int64_t wm = op->ex->final ? DP_WATERMARK_END : op->ex->watermark;
  int64_t n = st->rows->nrows;
  const dp_vector *we = st->rows->cols[st->wend_col];
  int rc = DIPPER_OK;
  for (int64_t r = st->nindexed; !rc && r < n; r++) rc = dp_due_push(&st->due, wend_of(we, r), r);
  if (rc) return rc;
  st->nindexed = n;
  if (wm == DP_WATERMARK_NONE) return DIPPER_OK;
  int64_t nclosed = 0, cap = 0, *closed = NULL;
  while (st->due.n > 0 && dp_due_top(&st->due) <= wm) {
    dp_due d = dp_due_pop(&st->due);
    if (st->dead[d.id]) continue;
    if (nclosed == cap) {
      cap = cap ? 2 * cap : 256;
      int64_t *c = realloc(closed, (size_t)cap * sizeof *c);
      if (!c) {
        free(closed);
        return DIPPER_NOMEM;
      }
      closed = c;
    }
    closed[nclosed++] = d.id;
  }
  if (nclosed == 0) return DIPPER_OK;
  qsort(closed, (size_t)nclosed, sizeof *closed, cmp_i64);
  dp_batch *done = dp_batch_new(st->rows->schema, 0);
  rc = done ? dp_batch_take(done, st->rows, closed, 0, nclosed) : DIPPER_NOMEM;
  for (int64_t k = 0; !rc && k < nclosed; k++) rc = dp_topn_mark_dead(st, closed[k]);
  if (!rc) rc = rank_into_result(op, done);
  if (!rc) rc = dp_topn_maybe_compact(st);
  dp_batch_free(done);
  free(closed);
  return rc;
}

typedef struct cand {
  int64_t seq, pos, g;
} cand;

static int cmp_cand(const void *a, const void *b) {
  int64_t x = ((const cand *)a)->seq, y = ((const cand *)b)->seq;
  return (x > y) - (x < y);
}

/* TOPN_UPDATE: re-rank the tops of the partitions the batch's rows hit
** with those rows; each such partition whose top changed gets its new top
** appended (the old one becomes tombstones), and the top rows that are new
** or changed rank are emitted.  The other partitions are not looked at:
** the batch costs its rows and the tops they hit.  The rows ranked are laid
** out in arrival order (a top's rows by their numbers, then the batch's),
** so ties rank, and the emitted rows come out, as one ranking of every
** partition's rows in arrival order would give them. */
static int update_top(dp_op *op) {
  topn_state *st = op->state;
  const dp_plan *p = op->plan;
  int64_t nf = st->fresh->nrows;
  if (nf == 0) return DIPPER_OK;
  const dp_vector *pc[64];
  for (int k = 0; k < st->part_schema.ncols; k++) pc[k] = st->fresh->cols[p->u.topn.partition[k]];
  size_t szf = (size_t)nf * sizeof(int64_t);
  int64_t *fg = malloc(szf), *touched = malloc(szf), ntouched = 0, nc = 0;
  int rc = fg && touched ? DIPPER_OK : DIPPER_NOMEM;
  st->stamp++;
  for (int64_t r = 0; !rc && r < nf; r++) {
    int64_t g;
    bool is_new;
    rc = dp_groups_find_or_add(&st->parts, pc, r, &g, &is_new);
    if (!rc) rc = dp_topn_grow_parts(st, g + 1);
    if (rc) break;
    fg[r] = g;
    if (st->pmark[g] != st->stamp) {
      st->pmark[g] = st->stamp;
      st->ptix[g] = ntouched;
      touched[ntouched++] = g;
      nc += st->pcount[g];
    }
  }
  /* the candidates: the touched tops in arrival order, then the batch's rows */
  int64_t n = nc + nf, nsel = 0, nemit = 0;
  size_t sz = (size_t)n * sizeof(int64_t);
  cand *cs = rc ? NULL : malloc((size_t)(nc ? nc : 1) * sizeof *cs);
  int64_t *cpos = malloc(sz), *cg = malloc(sz), *cseq = malloc(sz), *crank = malloc(sz);
  int64_t *sel = malloc(sz), *ranks = malloc(sz), *emit = malloc(sz), *emit_rank = malloc(sz);
  int64_t *ncnt = calloc((size_t)ntouched + 1, sizeof *ncnt), *off = malloc(szf + sizeof *off);
  uint8_t *changed = calloc((size_t)ntouched + 1, 1);
  dp_batch *c = dp_batch_new(st->rows->schema, 0);
  if (!rc && (!cs || !cpos || !cg || !cseq || !crank || !sel || !ranks || !emit || !emit_rank ||
              !ncnt || !off || !changed || !c))
    rc = DIPPER_NOMEM;
  int64_t k = 0;
  for (int64_t t = 0; !rc && t < ntouched; t++) {
    int64_t g = touched[t];
    for (int64_t q = st->pstart[g]; q < st->pstart[g] + st->pcount[g]; q++)
      cs[k++] = (cand){st->seq[q], q, g};
  }
  if (!rc && nc > 1) qsort(cs, (size_t)nc, sizeof *cs, cmp_cand);
  for (k = 0; !rc && k < nc; k++) {
    cpos[k] = cs[k].pos;
    cg[k] = cs[k].g;
    cseq[k] = cs[k].seq;
    crank[k] = st->rank_of[cs[k].pos];
  }
  for (int64_t r = 0; !rc && r < nf; r++) {
    cg[nc + r] = fg[r];
    cseq[nc + r] = st->next_seq++;
    crank[nc + r] = 0;
  }
  if (!rc) rc = dp_batch_take(c, st->rows, cpos, 0, nc);
  if (!rc) rc = dp_rows_append(c, st->fresh);
  if (!rc) rc = rank_rows(op, c, sel, ranks, &nsel);
  for (k = 0; !rc && k < nsel; k++) {
    int64_t t = st->ptix[cg[sel[k]]];
    ncnt[t]++;
    bool same = sel[k] < nc && (!p->u.topn.emit_rank || crank[sel[k]] == ranks[k]);
    if (!(sel[k] < nc && crank[sel[k]] == ranks[k])) changed[t] = 1;
    if (same) continue;
    emit[nemit] = sel[k];
    emit_rank[nemit++] = ranks[k];
  }
  if (!rc) rc = add_result(st, p, c, emit, emit_rank, nemit);
  /* the new tops of the partitions whose top changed, each in one run */
  int64_t total = 0;
  for (int64_t t = 0; !rc && t < ntouched; t++) {
    if (ncnt[t] != st->pcount[touched[t]]) changed[t] = 1;
    off[t] = total;
    if (changed[t]) total += ncnt[t];
  }
  int64_t *fill = emit; /* reused: the rows of each new top placed so far */
  for (int64_t t = 0; !rc && t < ntouched; t++) fill[t] = 0;
  for (k = 0; !rc && k < nsel; k++) {
    int64_t t = st->ptix[cg[sel[k]]];
    if (!changed[t]) continue;
    int64_t at = off[t] + fill[t]++;
    cpos[at] = sel[k]; /* cpos is free now: the places of the rows to append */
    emit_rank[at] = ranks[k];
  }
  for (int64_t t = 0; !rc && t < ntouched; t++) {
    int64_t g = touched[t];
    for (int64_t q = st->pstart[g]; changed[t] && !rc && q < st->pstart[g] + st->pcount[g]; q++)
      rc = dp_topn_mark_dead(st, q);
  }
  int64_t base = st->rows->nrows;
  if (!rc) rc = dp_batch_take(st->rows, c, cpos, 0, total);
  if (!rc) rc = dp_topn_grow_rows(st, base + total);
  for (k = 0; !rc && k < total; k++) {
    st->dead[base + k] = 0;
    st->rank_of[base + k] = emit_rank[k];
    st->seq[base + k] = cseq[cpos[k]];
  }
  for (int64_t t = 0; !rc && t < ntouched; t++) {
    if (!changed[t]) continue;
    st->pstart[touched[t]] = base + off[t];
    st->pcount[touched[t]] = ncnt[t];
    if (st->urocks) rc = dp_topn_rocks_dirty(st->urocks, touched[t]);
  }
  if (!rc) rc = dp_topn_maybe_compact(st);
  dp_batch_clear(st->fresh);
  dp_batch_free(c);
  free(fg);
  free(touched);
  free(cs);
  free(cpos);
  free(cg);
  free(cseq);
  free(crank);
  free(sel);
  free(ranks);
  free(emit);
  free(emit_rank);
  free(ncnt);
  free(off);
  free(changed);
  return rc;
}

static bool part_listed(const topn_state *st, int64_t g) {
  return g >= 0 && g < st->ttl.cap && st->ttl.slot[g].at >= 0;
}

/* TOPN_UPDATE with a TTL: the expired partitions (off the TTL list, their
** tops empty) dropped from `parts` once they are half of it and at least
** 1,024, the others renumbered in their order (the TTL list follows; the
** partitions' log records the drops): O(parts) once per parts/2 expiries. */
static int maybe_compact_parts(topn_state *st) {
  int64_t ng = dp_groups_count(&st->parts), idle = ng - st->ttl.count;
  if (idle < 1024 || idle * 2 < ng) return DIPPER_OK;
  size_t sz = (size_t)ng * sizeof(int64_t);
  int64_t *keep = malloc(sz), *remap = malloc(sz), *drop = malloc(sz), nkeep = 0, ndrop = 0;
  int rc = keep && remap && drop ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t g = 0; !rc && g < ng; g++) {
    if (part_listed(st, g)) {
      remap[g] = nkeep;
      keep[nkeep++] = g;
    } else {
      if (st->pcount[g] != 0) rc = DIPPER_INTERNAL; /* a live top off the list */
      remap[g] = -1;
      drop[ndrop++] = g;
    }
  }
  if (!rc) rc = dp_groups_compact(&st->parts, keep, nkeep);
  if (!rc) rc = dp_rowlog_drop(&st->plog, drop, ndrop);
  if (!rc) rc = dp_state_ttl_renumber(&st->ttl, remap, ng);
  for (int64_t k = 0; !rc && k < nkeep; k++) {
    st->pstart[k] = st->pstart[keep[k]];
    st->pcount[k] = st->pcount[keep[k]];
    st->pmark[k] = st->pmark[keep[k]];
  }
  for (int64_t g = nkeep; !rc && g < ng; g++) st->pcount[g] = st->pmark[g] = 0;
  free(keep);
  free(remap);
  free(drop);
  return rc;
}

/* TOPN_UPDATE with a TTL, before the batch's input: the partitions idle
** for it get empty tops, their rows tombstones; found at the cost of what
** expires (state_ttl.h), and `parts` left as it is (maybe_compact_parts). */
static int expire_parts(dp_op *op) {
  topn_state *st = op->state;
  int64_t *ids = NULL, n = 0;
  int rc = dp_topn_grow_parts(st, dp_groups_count(&st->parts));
  if (!rc) rc = dp_state_ttl_expire(&st->ttl, op->ex->batch_start_time, &ids, &n);
  for (int64_t k = 0; !rc && k < n; k++) {
    int64_t g = ids[k];
    for (int64_t q = st->pstart[g]; !rc && q < st->pstart[g] + st->pcount[g]; q++)
      rc = dp_topn_mark_dead(st, q);
    st->pcount[g] = 0;
  }
  free(ids);
  if (!rc && n > 0) rc = dp_topn_maybe_compact(st);
  if (!rc && n > 0) rc = maybe_compact_parts(st);
  return rc;
}

/* The rows kept; over RocksDB in update mode, the partitions kept. */
static int64_t state_rows(const topn_state *st) {
  if (st->urocks) return dp_topn_rocks_parts(st->urocks);
  return st->rocks ? st->rcount : st->rows->nrows - st->ndead;
}

static int topn_next(dp_op *op, dp_batch **out) {
  topn_state *st = op->state;
  *out = NULL;
  int rc;
  if (!st->drained) {
    /* expiry before the input: a row of this batch starts an expired partition afresh */
    if (st->urocks && (rc = dp_topn_rocks_begin(op))) return rc;
    if (!st->urocks && st->ttl.ttl > 0 && (rc = expire_parts(op))) return rc;
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
      if (st->urocks && st->fresh->nrows > 0) rc = dp_topn_rocks_fetch(op);
      if (!rc) rc = update_top(op);
    }
    if (rc) return rc;
    op->metrics.state_rows = state_rows(st);
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
    st->ndead = 0;
  }
  op->metrics.state_rows = state_rows(st);
  return st->urocks ? dp_topn_rocks_end_batch(op) : DIPPER_OK;
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
  dp_topn_rocks_free(st->urocks);
  dp_batch_free(st->fresh);
  free(st->rank_of);
  free(st->seq);
  free(st->dead);
  free(st->pstart);
  free(st->pcount);
  free(st->pmark);
  free(st->ptix);
  dp_due_free(&st->due);
  dp_groups_free(&st->parts);
  dp_state_ttl_free(&st->ttl);
  dp_rowlog_free(&st->plog);
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
  if (st->mode == TOPN_UPDATE) {
    int rc = dp_groups_init(&st->parts, &st->part_schema);
    if (!rc && ttl > 0) rc = dp_state_ttl_init(&st->ttl, ttl);
    if (rc) return rc;
  }
  if (st->mode == TOPN_BOUNDED || !op->ex->query || !op->ex->query->streaming ||
      !dp_exec_state_rocks(op->ex))
    return DIPPER_OK;
  /* update mode: the partitions' tops in RocksDB, the state above their cache */
  if (st->mode == TOPN_UPDATE) return dp_topn_rocks_new(op, &st->urocks);
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
** Blob, version 2:
**   version:u8  mode:u8  emitted:u8  prev_wm:svar  next_seq:svar
**   rows (rows.h's row store, tombstones included: the layout is kept, so
**   that the deltas after it name its rows by position)  dead (flags, one
**   per row)  [update: rank:uvar seq:uvar per row]
** Delta (save_delta), the same version:  the same header, the rows' log
**   (rows.h: as drops the base rows a compaction dropped since, as dirty
**   rows, which carry no data, the base rows that became tombstones)  the
**   rows appended since, their flags [and ranks and numbers].
** So a delta costs what the batches since changed: in window mode the rows
** added and closed, in update mode the new tops of the partitions whose
** top changed and the old tops they replace (a few bytes per run of them).
** With a state TTL (update mode), a whole blob ends with 'P', the
** partitions (rows.h's group table, by id) and state_ttl.h's section
** (their last rows' times); at the blob's end, so that a blob without it
** (written before the TTL was set) reads as before: its partitions, found
** again from the top's rows, count as written at the restart.  A delta
** (version 3) ends with 'D': the partitions' log (rows.h: those a
** compaction of `parts` dropped since, by base position), the partitions
** added since, and state_ttl.h's delta section ('U': the partitions that
** left the list or were written since; 'T', the list whole, after a
** compaction of `parts`), so that it costs the partitions the batches
** touched and expired.  A partition off the list has an empty top (it
** expired); a top row of one is refused as corrupt.  Version 2's deltas
** ended with 'P' as its whole blobs do, and still read.
** Version 1 (written before the tombstones: no next_seq, no flags, ranks
** only, the update mode's top in rank order across partitions and its
** delta always the whole top) still reads: a top's rows get their
** positions as numbers (the order they ranked in) and are laid out again
** by partition; a version 1 update-mode delta that keeps part of its
** base, which that version never wrote, is refused as corrupt. */
#define TOPN_STATE_VERSION 3

/* The TTL's section of a blob: 'P' and the partitions whole, or ('D', a
** delta) their changes since the last save or restore; either way the
** base of the next delta. */
static int save_parts(topn_state *st, dp_buf *out, bool delta) {
  if (st->ttl.ttl <= 0) return DIPPER_OK;
  int rc;
  if (!delta) {
    dp_put_u8(out, 'P');
    rc = dp_groups_save(out, &st->parts);
    dp_state_ttl_save_section_base(&st->ttl, out);
  } else {
    dp_put_u8(out, 'D');
    int64_t *at = NULL, nat = 0;
    rc = dp_rowlog_save(out, &st->plog, &at, &nat);
    free(at); /* a partition's key never changes in place */
    if (!rc) rc = dp_groups_save_from(out, &st->parts, dp_rowlog_first_new(&st->plog));
    if (!rc) rc = dp_state_ttl_save_section_delta(&st->ttl, out);
  }
  if (!rc) dp_rowlog_mark(&st->plog, dp_groups_count(&st->parts));
  return rc;
}

/* 'D': the partitions' changes applied to `parts` (which holds their base). */
static int load_parts_delta(topn_state *st, dp_rd *in) {
  int64_t n = dp_groups_count(&st->parts), *keep = NULL, nkeep = 0;
  dp_rowlog_delta d;
  int rc = dp_rowlog_load(in, n, &d);
  if (rc) return rc;
  if (d.ndirty > 0) rc = DIPPER_CORRUPT;
  if (!rc) rc = dp_rowlog_keep(&d, n, &keep, &nkeep);
  if (!rc && nkeep < n) rc = dp_groups_compact(&st->parts, keep, nkeep);
  free(keep);
  dp_rowlog_delta_free(&d);
  return rc ? rc : dp_groups_load_more(in, &st->parts);
}

/* The rest of a blob: save_parts' section, or (none) the partitions of the
** restored top, every one written at `now`.  Without a TTL now, a section
** written under one is passed over (the blob's last: the partitions are
** found again from the top's rows). */
static int load_parts(dp_op *op, dp_rd *in, int version) {
  topn_state *st = op->state;
  int64_t now = op->ex->batch_start_time;
  uint8_t kind = dp_rd_left(in) > 0 ? in->p[in->pos] : 0;
  if (kind == 'D') {
    dp_get_u8(in);
    if (st->ttl.ttl <= 0) {
      in->pos = in->n;
      return DIPPER_OK;
    }
    int rc = version < 3 ? DIPPER_CORRUPT : load_parts_delta(st, in);
    if (!rc) rc = dp_state_ttl_load_section(&st->ttl, in, dp_groups_count(&st->parts), now);
    if (!rc) dp_rowlog_mark(&st->plog, dp_groups_count(&st->parts));
    if (rc == DIPPER_CORRUPT) in->bad = true;
    return rc ? dp_state_corrupt(op, rc, "its partitions' state TTL") : DIPPER_OK;
  }
  dp_groups fresh;
  int rc = dp_groups_init(&fresh, &st->part_schema);
  if (!rc && dp_rd_left(in) == 0) {
    const dp_vector *pc[64];
    for (int k = 0; k < st->part_schema.ncols; k++)
      pc[k] = st->rows->cols[op->plan->u.topn.partition[k]];
    for (int64_t r = 0; !rc && st->ttl.ttl > 0 && r < st->rows->nrows; r++) {
      int64_t g;
      bool is_new;
      if (st->dead[r]) continue;
      rc = dp_groups_find_or_add(&fresh, pc, r, &g, &is_new);
      if (!rc && is_new) rc = dp_state_ttl_touch(&st->ttl, g, now);
    }
    if (!rc && st->ttl.ttl > 0) dp_state_ttl_mark(&st->ttl);
  } else if (!rc) {
    if (dp_get_u8(in) != 'P') in->bad = true;
    rc = in->bad ? DIPPER_CORRUPT : dp_groups_load(in, &fresh);
    if (!rc) rc = dp_state_ttl_load_section(&st->ttl, in, dp_groups_count(&fresh), now);
  }
  if (!rc && st->ttl.ttl > 0) {
    dp_groups_free(&st->parts);
    st->parts = fresh;
    dp_rowlog_mark(&st->plog, dp_groups_count(&st->parts));
  } else {
    dp_groups_free(&fresh);
  }
  return rc ? dp_state_corrupt(op, rc, "its partitions' state TTL") : DIPPER_OK;
}

static void save_header(const topn_state *st, dp_buf *out) {
  dp_state_begin(out, TOPN_STATE_VERSION);
  dp_put_u8(out, (uint8_t)st->mode);
  dp_put_u8(out, st->emitted);
  dp_put_svar(out, st->prev_wm);
  dp_put_svar(out, st->next_seq);
}

/* The per-row data of rows [first, nrows). */
static void save_row_data(const topn_state *st, dp_buf *out, int64_t first) {
  int64_t n = st->rows->nrows;
  dp_flags_save(out, n > first ? st->dead + first : NULL, n - first);
  for (int64_t r = first; st->mode == TOPN_UPDATE && r < n; r++) {
    dp_put_uvar(out, (uint64_t)st->rank_of[r]);
    dp_put_uvar(out, (uint64_t)st->seq[r]);
  }
}

static int topn_save(dp_op *op, dp_buf *out) {
  topn_state *st = op->state;
  if (st->urocks) return dp_topn_rocks_save(op, out);
  if (st->rocks) return rocks_save(op, out);
  save_header(st, out);
  int rc = dp_rows_save(out, st->rows);
  save_row_data(st, out, 0);
  if (!rc) rc = save_parts(st, out, false);
  if (!rc) dp_rowlog_mark(&st->log, st->rows->nrows);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int topn_save_delta(dp_op *op, dp_buf *out) {
  topn_state *st = op->state;
  if (st->urocks) return dp_topn_rocks_save(op, out);
  if (st->rocks) return rocks_save(op, out);
  save_header(st, out);
  int64_t *at, nat, first = dp_rowlog_first_new(&st->log);
  int rc = dp_rowlog_save(out, &st->log, &at, &nat);
  free(at); /* a dirty row is a tombstone: no data */
  if (!rc) rc = dp_rows_save_from(out, st->rows, first);
  save_row_data(st, out, first);
  if (!rc) rc = save_parts(st, out, true);
  if (!rc) dp_rowlog_mark(&st->log, st->rows->nrows);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* The version byte: 1 to 3 (anything else refused by dp_state_check). */
static int read_version(dp_op *op, dp_rd *in, int *version) {
  dp_rd peek = *in;
  uint8_t v = dp_get_u8(&peek);
  *version = !peek.bad && (v == 1 || v == 2) ? v : TOPN_STATE_VERSION;
  return dp_state_check(op, in, (uint8_t)*version);
}

static int read_header(dp_op *op, dp_rd *in, int version) {
  topn_state *st = op->state;
  uint8_t mode = dp_get_u8(in), emitted = dp_get_u8(in);
  int64_t prev_wm = dp_get_svar(in), next_seq = version >= 2 ? dp_get_svar(in) : 0;
  if (in->bad || mode != st->mode || emitted > 1 || next_seq < 0)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted = emitted;
  st->prev_wm = prev_wm;
  st->next_seq = next_seq;
  return DIPPER_OK;
}

/* The per-row data of rows [first, nrows), as save_row_data wrote it (or,
** version 1, the ranks alone: the rows alive, numbered by position). */
static int load_row_data(dp_op *op, dp_rd *in, int64_t first, int version) {
  topn_state *st = op->state;
  int64_t n = st->rows->nrows;
  int rc = dp_topn_grow_rows(st, n);
  if (rc) return rc;
  if (version >= 2 && (rc = dp_flags_load(in, n > first ? st->dead + first : NULL, n - first)))
    return rc;
  for (int64_t k = first; k < n; k++) {
    if (version < 2) st->dead[k] = 0;
    if (st->mode != TOPN_UPDATE) {
      st->rank_of[k] = st->seq[k] = 0;
      continue;
    }
    uint64_t rank = dp_get_uvar(in), seq = version >= 2 ? dp_get_uvar(in) : (uint64_t)k;
    /* a row of a top has a rank from 1 to N and a number below the next one */
    if (rank < 1 || rank > (uint64_t)op->plan->u.topn.n) in->bad = true;
    if (version >= 2 && seq >= (uint64_t)st->next_seq) in->bad = true;
    st->rank_of[k] = (int64_t)(rank & INT64_MAX);
    st->seq[k] = (int64_t)(seq & INT64_MAX);
  }
  if (version < 2) st->next_seq = n;
  return in->bad ? DIPPER_CORRUPT : DIPPER_OK;
}

/* Version 1's top, in rank order across partitions, laid out by partition
** (each partition's rows in their order). */
static int relayout(dp_op *op) {
  topn_state *st = op->state;
  int64_t n = st->rows->nrows;
  dp_groups tmp;
  const dp_vector *pc[64];
  for (int k = 0; k < st->part_schema.ncols; k++) pc[k] = st->rows->cols[op->plan->u.topn.partition[k]];
  size_t sz = (size_t)(n ? n : 1) * sizeof(int64_t);
  int64_t *g = malloc(sz), *start = calloc((size_t)n + 1, sizeof(int64_t)), *perm = malloc(sz);
  int64_t *tmp_rank = malloc(sz), *tmp_seq = malloc(sz);
  int rc = dp_groups_init(&tmp, &st->part_schema);
  if (!rc && (!g || !start || !perm || !tmp_rank || !tmp_seq)) rc = DIPPER_NOMEM;
  for (int64_t r = 0; !rc && r < n; r++) {
    bool is_new;
    rc = dp_groups_find_or_add(&tmp, pc, r, &g[r], &is_new);
    if (!rc) start[g[r] + 1]++;
  }
  int64_t ng = rc ? 0 : dp_groups_count(&tmp);
  for (int64_t i = 0; i < ng; i++) start[i + 1] += start[i];
  for (int64_t r = 0; !rc && r < n; r++) perm[start[g[r]]++] = r;
  dp_batch *b = rc ? NULL : dp_batch_new(st->rows->schema, 0);
  if (!rc && !b) rc = DIPPER_NOMEM;
  if (!rc) rc = dp_batch_take(b, st->rows, perm, 0, n);
  if (!rc) {
    for (int64_t k = 0; k < n; k++) {
      tmp_rank[k] = st->rank_of[perm[k]];
      tmp_seq[k] = st->seq[perm[k]];
    }
    if (n > 0) memcpy(st->rank_of, tmp_rank, sz);
    if (n > 0) memcpy(st->seq, tmp_seq, sz);
    dp_batch_free(st->rows);
    st->rows = b;
    b = NULL;
  }
  dp_batch_free(b);
  dp_groups_free(&tmp);
  free(g);
  free(start);
  free(perm);
  free(tmp_rank);
  free(tmp_seq);
  return rc;
}

/* After a restore: the tombstones counted and the indexes made again over
** the live rows (O(n), once): the partitions' tops (each must be one run of
** live rows) or the heap of window ends. */
static int rebuild_index(dp_op *op) {
  topn_state *st = op->state;
  int64_t n = st->rows->nrows;
  st->ndead = 0;
  for (int64_t r = 0; r < n; r++) st->ndead += st->dead[r];
  int rc = DIPPER_OK;
  if (st->mode == TOPN_WINDOW) rc = rebuild_due(st);
  if (st->mode == TOPN_UPDATE) {
    if (st->ttl.ttl <= 0) {
      dp_groups_free(&st->parts);
      rc = dp_groups_init(&st->parts, &st->part_schema);
    }
    const dp_vector *pc[64];
    for (int k = 0; k < st->part_schema.ncols; k++)
      pc[k] = st->rows->cols[op->plan->u.topn.partition[k]];
    if (!rc) rc = dp_topn_grow_parts(st, dp_groups_count(&st->parts));
    for (int64_t g = 0; !rc && g < st->part_cap; g++) st->pcount[g] = st->pmark[g] = 0;
    st->stamp = 0;
    for (int64_t r = 0; !rc && r < n; r++) {
      if (st->dead[r]) continue;
      int64_t g = -1;
      bool is_new;
      if (st->ttl.ttl > 0) g = dp_groups_find(&st->parts, pc, r);
      else rc = dp_groups_find_or_add(&st->parts, pc, r, &g, &is_new);
      /* a partition off the TTL list expired: its top is empty */
      if (!rc && st->ttl.ttl > 0 && !part_listed(st, g)) rc = DIPPER_CORRUPT;
      if (!rc) rc = g < 0 ? DIPPER_CORRUPT : dp_topn_grow_parts(st, g + 1);
      if (rc) break;
      if (st->pcount[g] == 0) st->pstart[g] = r;
      else if (st->pstart[g] + st->pcount[g] != r) rc = DIPPER_CORRUPT;
      st->pcount[g]++;
    }
  }
  if (rc) return dp_state_corrupt(op, rc, "its tops");
  op->metrics.state_rows = n - st->ndead;
  st->nindexed = n;
  dp_rowlog_mark(&st->log, n);
  return DIPPER_OK;
}

static int topn_restore_delta(dp_op *op, dp_rd *in) {
  topn_state *st = op->state;
  if (st->urocks) return dp_topn_rocks_restore(op, in);
  if (st->rocks) return rocks_restore(op, in);
  int version, rc = read_version(op, in, &version);
  if (!rc) rc = read_header(op, in, version);
  if (rc) return rc;
  int64_t n = st->rows->nrows, *keep = NULL, nkeep = 0;
  dp_rowlog_delta d;
  if ((rc = dp_rowlog_load(in, n, &d))) return dp_state_corrupt(op, rc, "the rows it dropped");
  if (version < 2 && d.ndirty > 0) rc = DIPPER_CORRUPT;
  for (int64_t k = 0; !rc && k < d.ndirty; k++) st->dead[d.dirty[k]] = 1;
  if (!rc) rc = dp_rowlog_keep(&d, n, &keep, &nkeep);
  /* version 1's update mode wrote the whole top or nothing */
  if (!rc && version < 2 && st->mode == TOPN_UPDATE && nkeep != 0 && nkeep != n) rc = DIPPER_CORRUPT;
  if (!rc) rc = dp_rows_compact(&st->rows, keep, nkeep);
  for (int64_t k = 0; !rc && k < nkeep; k++) {
    st->rank_of[k] = st->rank_of[keep[k]];
    st->seq[k] = st->seq[keep[k]];
    st->dead[k] = st->dead[keep[k]];
  }
  free(keep);
  dp_rowlog_delta_free(&d);
  if (rc) return dp_state_corrupt(op, rc, "the rows it dropped");
  int64_t first = st->rows->nrows;
  if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its new rows");
  if (version < 2 && st->mode == TOPN_UPDATE && first > 0 && st->rows->nrows > first)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its new rows");
  if ((rc = load_row_data(op, in, first, version))) return dp_state_corrupt(op, rc, "its ranks");
  if (version < 2 && st->mode == TOPN_UPDATE && (rc = relayout(op)))
    return dp_state_corrupt(op, rc, "its ranks");
  if (st->mode == TOPN_UPDATE && (rc = load_parts(op, in, version))) return rc;
  return rebuild_index(op);
}

static int topn_restore(dp_op *op, dp_rd *in) {
  topn_state *st = op->state;
  if (st->urocks) return dp_topn_rocks_restore(op, in);
  if (st->rocks) return rocks_restore(op, in);
  int version, rc = read_version(op, in, &version);
  if (!rc) rc = read_header(op, in, version);
  if (rc) return rc;
  if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its rows");
  if ((rc = load_row_data(op, in, 0, version))) return dp_state_corrupt(op, rc, "its ranks");
  if (version < 2 && st->mode == TOPN_UPDATE && (rc = relayout(op)))
    return dp_state_corrupt(op, rc, "its ranks");
  if (st->mode == TOPN_UPDATE && (rc = load_parts(op, in, version))) return rc;
  return rebuild_index(op);
}

/* ---- over RocksDB ('state.backend' = 'rocksdb'): window mode ----
** The rows waiting for their window live in state_rocks.h's keyed row store
** (space 0), keyed by the PARTITION BY columns (window_end among them) with
** window_end as the time: a micro-batch's rows of one partition are one
** chunk, and the windows the watermark closes come back from the time index
** (dp_rocks_rows_expire: a range scan up to the watermark, each chunk read
** and deleted), a partition's rows in arrival order, to be ranked as in
** memory.  `rows` holds only the batch's new rows.  The update mode (the
** current top of every partition) is topn_rocks.c's. */
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
