/*
** op_join.c — joins (DP_P_JOIN): a hash join on the equi-join keys with the
** rest of the ON condition checked on the joined rows, or a nested loop when
** there are no keys (CROSS JOIN, ON with only inequalities).
**
** Kinds: INNER, LEFT, RIGHT, FULL, SEMI, ANTI, CROSS.  A NULL key matches
** nothing (SQL's `=`), so such rows only appear padded in outer joins.
**
** Two ways to run, fixed at open:
**   bounded        both inputs end: the right side is the build side, kept
**                  whole in a hash index; the left rows are kept too and
**                  probed in the last batch of the run, when both inputs are
**                  complete; unmatched right rows (RIGHT, FULL) follow.
**   stream-static  one input is a stream, the other bounded: the bounded side
**                  is the build side, read as its rows arrive (the driver
**                  reads a bounded input to its end in the first batch unless
**                  it holds more than a batch's cap); each micro-batch's stream
**                  rows probe it and leave at once; stream rows are not kept.
**                  Only the shapes whose padded rows come from the stream side
**                  run: INNER, LEFT/SEMI/ANTI with the stream on the left,
**                  RIGHT with the stream on the right, and SEMI with the
**                  stream on the right (a left row leaves at its first match).
**   two streams    both sides are kept, each in its own hash index; each
**                  micro-batch's new left rows probe the stored right rows,
**                  join the left store, then the new right rows probe it.
**                  With a time range between the sides (props.has_time_bound:
**                  an interval join, or a window join on window bounds), rows
**                  at or before the late watermark (the previous batch's)
**                  are dropped and counted; a stored row leaves the state once
**                  the current watermark says no row still to come can meet
**                  it (Spark's rule) — padded first, when its side is outer
**                  and it never matched.  INNER joins without a
**                  range keep every row (unbounded state, as EXPLAIN says).
**
** Temporal joins (FOR SYSTEM_TIME AS OF) over a bounded right side: of the
** matches of a left row, the one whose version time (the right side's
** event-time column) is the latest at or before the AS OF time; without such
** a column every match counts (a lookup join).  When the versions are a
** stream too, a left row waits until the watermark reaches its AS OF time
** (every version up to it has arrived), then joins; with keys and no other
** condition the versions are kept in order per key and those the watermark
** makes unreachable dropped ("versions in order" below; left rows at or
** before the late watermark are then late), else every version is kept.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "exec/eval.h"
#include "exec/narrow.h"
#include "exec/op_join_int.h"
#include "plan/prune.h"

int dp_join_add_pair(join_state *st, int64_t p, int64_t b) {
  if (st->npairs == st->cap_pairs) {
    int64_t cap = st->cap_pairs ? st->cap_pairs * 2 : 1024;
    int64_t *pi = realloc(st->pi, (size_t)cap * sizeof *pi);
    if (!pi) return DIPPER_NOMEM;
    st->pi = pi;
    int64_t *bi = realloc(st->bi, (size_t)cap * sizeof *bi);
    if (!bi) return DIPPER_NOMEM;
    st->bi = bi;
    st->cap_pairs = cap;
  }
  st->pi[st->npairs] = p;
  st->bi[st->npairs++] = b;
  return DIPPER_OK;
}

/* The view of dst handed on: its gathered columns, fillers for the others. */
static int make_view(const bool *need, dp_vector **fill, const dp_batch *dst, dp_batch *view) {
  for (int c = 0; c < dst->ncols; c++) {
    if (need[c]) {
      view->cols[c] = dst->cols[c];
      continue;
    }
    int rc = dp_narrow_filler(&fill[c], dst->schema->cols[c].type, dst->nrows);
    if (rc) return rc;
    view->cols[c] = fill[c];
  }
  view->nrows = dst->nrows;
  return DIPPER_OK;
}

/* Gather the pairs [0, npairs) as joined rows (left ++ right) onto dst, the
** columns in `need` only, and make its view. */
static int gather_pairs(join_state *st, dp_batch *dst, const bool *need, dp_vector **fill,
                        dp_batch *view) {
  const dp_batch *left = st->pside == 0 ? st->probe : st->build;
  const dp_batch *right = st->pside == 0 ? st->build : st->probe;
  const int64_t *li = st->pside == 0 ? st->pi : st->bi;
  const int64_t *ri = st->pside == 0 ? st->bi : st->pi;
  int nl = st->nleft;
  for (int c = 0; c < nl; c++) {
    if (!need[c]) continue;
    const dp_vector *src = left->cols[st->lmap ? st->lmap[c] : c];
    int rc = dp_vector_take(dst->cols[c], src, li, 0, st->npairs);
    if (rc) return rc;
  }
  if (!st->semi)
    for (int c = 0; c < st->nright; c++) {
      if (!need[nl + c]) continue;
      const dp_vector *src = right->cols[st->rmap ? st->rmap[c] : c];
      int rc = dp_vector_take(dst->cols[nl + c], src, ri, 0, st->npairs);
      if (rc) return rc;
    }
  dst->nrows += st->npairs;
  return make_view(need, fill, dst, view);
}

int dp_join_gather_out(join_state *st) {
  return gather_pairs(st, st->out, st->out_need, st->out_fill, &st->out_view);
}

/* Keep the pairs that satisfy the residual condition. */
static int check_pairs(dp_op *op) {
  join_state *st = op->state;
  if (!st->residual || st->npairs == 0) return DIPPER_OK;
  bool semi = st->semi;
  st->semi = false; /* the condition sees both sides, even for SEMI/ANTI */
  dp_batch_clear(st->cand);
  int rc = gather_pairs(st, st->cand, st->cand_need, st->cand_fill, &st->cand_view);
  st->semi = semi;
  if (rc) return rc;
  dp_vector *mask = NULL;
  if ((rc = dp_eval(op->ex, op->plan->u.join.cond, &st->cand_view, &mask))) return rc;
  int64_t n = 0;
  for (int64_t k = 0; k < st->npairs; k++)
    if (!dp_vector_is_null(mask, k) && dp_vector_get_bool(mask, k)) {
      st->pi[n] = st->pi[k];
      st->bi[n++] = st->bi[k];
    }
  st->npairs = n;
  dp_vector_free(mask);
  return DIPPER_OK;
}

/* Temporal join: of the pairs of each probe row keep the one whose version
** time is the latest at or before the row's AS OF time (none when every
** version is newer).  Pairs come grouped by probe row, in order. */
static int pick_versions(dp_op *op) {
  join_state *st = op->state;
  if (!st->as_of) {
    int rc = dp_eval(op->ex, op->plan->u.join.as_of, st->probe, &st->as_of);
    if (rc) return rc;
  }
  const dp_vector *vt = st->build->cols[st->version_col];
  int64_t n = 0;
  for (int64_t k = 0; k < st->npairs;) {
    int64_t r = st->pi[k], e = k, best = -1, best_t = 0;
    while (e < st->npairs && st->pi[e] == r) e++;
    if (!dp_vector_is_null(st->as_of, r)) {
      int64_t at = dp_vector_get_i64(st->as_of, r);
      for (int64_t j = k; j < e; j++) {
        int64_t b = st->bi[j];
        if (dp_vector_is_null(vt, b)) continue;
        int64_t t = dp_vector_get_i64(vt, b);
        if (t <= at && (best < 0 || t >= best_t)) {
          best = b;
          best_t = t;
        }
      }
    }
    if (best >= 0) {
      st->pi[n] = r;
      st->bi[n++] = best;
    }
    k = e;
  }
  st->npairs = n;
  return DIPPER_OK;
}

/* ---- the temporal join of two streams: versions in order ----
** With keys, a version time and no condition beyond the keys (vord), each
** key's versions are a list of build row ids in (time, arrival) order, and
** a probe row finds its key through the hash index (the first row of its
** bucket with its key: O(1) expected, however many versions the key has)
** and its version by binary search: the latest at or before its AS OF
** time, of tied ones the first to arrive (pick_versions' choice).
** Pruning: a left row at or before the late watermark is dropped (late,
** counted; keep_probe), so every left row still to come, and every one
** waiting, has an AS OF time past the watermark W of the batch before:
** of a key's versions at or before W only the one chosen at W can be
** chosen again.  At the start of a batch, the keys whose second version is
** at or before W (a heap of that time per key: what a batch pushes and
** pops) drop theirs, which become tombstones; the store compacts once they
** are half of it (and at least 1,024), the index and the lists made again,
** O(1) amortized a row.  A version with a NULL key or time never matches:
** a tombstone at once.  Tombstones are not checkpointed: saved as live
** rows, they are found unreachable again by the first batch after a
** restore (the lists are made again from the store, and the heap prunes
** what W makes unreachable: the same tombstones). */

static int rebuild_keys(dp_op *op);

static inline int64_t vtime(const join_state *st, int64_t b) {
  return dp_vector_get_i64(st->build->cols[st->version_col], b);
}

static void vkey_cols(const join_state *st, const dp_vector **bk) {
  for (int k = 0; k < st->nkeys; k++) bk[k] = (st->ekeys ? st->bkb : st->build)->cols[st->bkeys[k]];
}

/* The first list position whose time is past t. */
static int64_t vupper(const join_state *st, const struct vlist *l, int64_t t) {
  int64_t lo = 0, hi = l->n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (vtime(st, l->id[mid]) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The version chosen at time t among l's: the first of the last tie group at
** or before t, or -1 (as a list position). */
static int64_t vchoose(const join_state *st, const struct vlist *l, int64_t t) {
  int64_t j = vupper(st, l, t) - 1;
  if (j < 0) return -1;
  int64_t tj = vtime(st, l->id[j]);
  while (j > 0 && vtime(st, l->id[j - 1]) == tj) j--;
  return j;
}

static void vfree_lists(join_state *st) {
  for (int64_t k = 0; k < st->nvl; k++) free(st->vl[k].id);
  st->nvl = 0;
  st->vdue.n = 0;
}

/* Build rows [vindexed, nrows) into their keys' lists. */
static int vindex_rows(dp_op *op) {
  join_state *st = op->state;
  int64_t n = st->build->nrows;
  if (n > st->vrow_cap) {
    int64_t cap = st->vrow_cap > 0 ? st->vrow_cap : 1024;
    while (cap < n) cap *= 2;
    int64_t *k = realloc(st->vkey, (size_t)cap * sizeof *k);
    if (!k) return DIPPER_NOMEM;
    st->vkey = k;
    uint8_t *d = realloc(st->vdead, (size_t)cap);
    if (!d) return DIPPER_NOMEM;
    st->vdead = d;
    st->vrow_cap = cap;
  }
  const dp_vector *bk[64];
  vkey_cols(st, bk);
  const dp_vector *tv = st->build->cols[st->version_col];
  for (int64_t b = st->vindexed; b < n; b++) {
    st->vkey[b] = -1;
    st->vdead[b] = 0;
    if (dp_vector_is_null(tv, b) || dp_rows_any_null(bk, st->nkeys, b)) {
      st->vdead[b] = 1;
      st->vndead++;
      continue;
    }
    uint64_t h = st->index->hashes[b];
    int64_t key = -1;
    for (int64_t id = dp_rowhash_next(st->index, b); id >= 0 && key < 0; id = dp_rowhash_next(st->index, id))
      if (st->index->hashes[id] == h && st->vkey[id] >= 0 && dp_rows_equal(bk, id, bk, b, st->nkeys))
        key = st->vkey[id];
    if (key < 0) {
      if (st->nvl == st->vl_cap) {
        int64_t cap = st->vl_cap ? 2 * st->vl_cap : 1024;
        struct vlist *v = realloc(st->vl, (size_t)cap * sizeof *v);
        if (!v) return DIPPER_NOMEM;
        st->vl = v;
        st->vl_cap = cap;
      }
      key = st->nvl++;
      st->vl[key] = (struct vlist){NULL, 0, 0};
    }
    st->vkey[b] = key;
    struct vlist *l = &st->vl[key];
    if (l->n == l->cap) {
      int64_t cap = l->cap ? 2 * l->cap : 2;
      int64_t *a = realloc(l->id, (size_t)cap * sizeof *a);
      if (!a) return DIPPER_NOMEM;
      l->id = a;
      l->cap = cap;
    }
    /* in (time, arrival) order: mostly at the end */
    int64_t t = vtime(st, b), i = l->n++;
    while (i > 0 && vtime(st, l->id[i - 1]) > t) {
      l->id[i] = l->id[i - 1];
      i--;
    }
    l->id[i] = b;
    if (l->n >= 2) {
      int rc = dp_due_push(&st->vdue, vtime(st, l->id[1]), key);
      if (rc) return rc;
    }
  }
  st->vindexed = n;
  return DIPPER_OK;
}

/* The lists made again over the whole store (after a restore or a
** compaction), O(n). */
static int vreindex(dp_op *op) {
  join_state *st = op->state;
  vfree_lists(st);
  st->vindexed = st->vndead = 0;
  st->vstale = false;
  return vindex_rows(op);
}

/* Drop the tombstones from the store: it, its hash index and the lists
** made again; the delta records the drops (rows.h). */
static int vcompact(dp_op *op) {
  join_state *st = op->state;
  int64_t n = st->build->nrows;
  dp_gone_split s;
  int rc = dp_gone_split_ids(st->vdead, n, n, st->vndead, false, &s);
  if (!rc) rc = dp_rowlog_drop(&st->build_log, s.drop, s.ndrop);
  if (!rc) rc = dp_rows_compact(&st->build, s.keep, s.nkeep);
  dp_gone_split_free(&s);
  if (rc) return rc;
  if (st->ekeys) {
    rc = rebuild_keys(op);
  } else {
    dp_rowhash_free(st->index);
    rc = dp_rowhash_add_rows(st->index, st->build, st->bkeys, st->nkeys, 0);
  }
  return rc ? rc : vreindex(op);
}

/* At a batch's start: the versions the watermark w (the previous batch's)
** makes unreachable become tombstones. */
static int vprune(dp_op *op, int64_t w) {
  join_state *st = op->state;
  if (w == DP_WATERMARK_NONE) return DIPPER_OK;
  while (st->vdue.n > 0 && dp_due_top(&st->vdue) <= w) {
    int64_t key = dp_due_pop(&st->vdue).id;
    struct vlist *l = &st->vl[key];
    if (l->n < 2 || vtime(st, l->id[1]) > w) continue; /* stale */
    int64_t j = vchoose(st, l, w), ub = vupper(st, l, w), m = 0;
    for (int64_t i = 0; i < l->n; i++) {
      if (i < ub && i != j) {
        st->vdead[l->id[i]] = 1;
        st->vndead++;
      } else {
        l->id[m++] = l->id[i];
      }
    }
    l->n = m;
    if (m >= 2) {
      int rc = dp_due_push(&st->vdue, vtime(st, l->id[1]), key);
      if (rc) return rc;
    }
  }
  int64_t n = st->build->nrows;
  if (st->vndead >= 1024 && 2 * st->vndead >= n) return vcompact(op);
  return DIPPER_OK;
}

/* Probe rows [start, end) against their keys' versions: the pairs. */
static int probe_versions(dp_op *op, const dp_vector *const *pk, const dp_vector *const *bk,
                          int64_t start, int64_t end) {
  join_state *st = op->state;
  if (!st->as_of) {
    int rc = dp_eval(op->ex, op->plan->u.join.as_of, st->probe, &st->as_of);
    if (rc) return rc;
  }
  for (int64_t r = start; r < end; r++) {
    if (dp_vector_is_null(st->as_of, r) || dp_rows_any_null(pk, st->nkeys, r)) continue;
    uint64_t h = dp_rows_hash(pk, st->nkeys, r);
    int64_t key = -1;
    for (int64_t b = dp_rowhash_first(st->index, h); b >= 0 && key < 0; b = dp_rowhash_next(st->index, b))
      if (st->index->hashes[b] == h && st->vkey[b] >= 0 && dp_rows_equal(bk, b, pk, r, st->nkeys))
        key = st->vkey[b];
    if (key < 0) continue;
    const struct vlist *l = &st->vl[key];
    int64_t j = vchoose(st, l, dp_vector_get_i64(st->as_of, r));
    if (j >= 0) {
      int rc = dp_join_add_pair(st, r, l->id[j]);
      if (rc) return rc;
    }
  }
  return DIPPER_OK;
}

/* Rows of the probe side per slice: a nested loop makes |build| pairs per
** probe row, so its slices shrink to keep the pair list near one chunk. */
static int64_t slice_rows(const join_state *st) {
  if (st->nkeys > 0) return DP_ROWS_CHUNK;
  int64_t nb = st->build->nrows > 0 ? st->build->nrows : 1;
  int64_t s = DP_ROWS_CHUNK / nb;
  return s > 0 ? s : 1;
}

/* Room for n probe rows' hit marks, all clear, and no pairs yet. */
static int clear_probe(join_state *st, int64_t n) {
  if (n > st->probe_hit_cap) {
    uint8_t *h = realloc(st->probe_hit, (size_t)n);
    if (!h) return DIPPER_NOMEM;
    st->probe_hit = h;
    st->probe_hit_cap = n;
  }
  memset(st->probe_hit, 0, (size_t)n);
  st->npairs = 0;
  return DIPPER_OK;
}

/* ekeys: the key values of the rows of `rows` (the build side's schema)
** appended to bkb and indexed. */
static int build_keys(dp_op *op, const dp_batch *rows) {
  join_state *st = op->state;
  dp_vector *v[64] = {0};
  int rc = DIPPER_OK;
  for (int k = 0; k < st->nkeys && !rc; k++) rc = dp_eval(op->ex, st->bkexpr[k], rows, &v[k]);
  int64_t first = st->bkb->nrows;
  if (!rc) {
    dp_batch vals = {&st->kschema, st->nkeys, v, rows->nrows, NULL};
    rc = dp_rows_append(st->bkb, &vals);
  }
  for (int k = 0; k < st->nkeys; k++) dp_vector_free(v[k]);
  if (!rc) rc = dp_rowhash_add_rows(st->index, st->bkb, st->bkeys, st->nkeys, first);
  return rc;
}

/* ekeys: bkb and the index again, over every build row (after a restore). */
static int rebuild_keys(dp_op *op) {
  join_state *st = op->state;
  dp_batch_clear(st->bkb);
  dp_rowhash_free(st->index);
  return st->build->nrows > 0 ? build_keys(op, st->build) : DIPPER_OK;
}

/* ekeys: the key values of every row of st->probe. */
static int probe_keys(dp_op *op) {
  join_state *st = op->state;
  st->pkv = calloc((size_t)st->nkeys, sizeof *st->pkv);
  if (!st->pkv) return DIPPER_NOMEM;
  for (int k = 0; k < st->nkeys; k++) {
    int rc = dp_eval(op->ex, st->pkexpr[k], st->probe, &st->pkv[k]);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

static void free_probe_keys(join_state *st) {
  for (int k = 0; st->pkv && k < st->nkeys; k++) dp_vector_free(st->pkv[k]);
  free(st->pkv);
  st->pkv = NULL;
}

/* Join probe rows [start, end) into st->out. */
static int probe_slice(dp_op *op, int64_t start, int64_t end) {
  join_state *st = op->state;
  const dp_batch *P = st->probe, *B = st->build;
  int64_t n = end - start;
  if (clear_probe(st, n)) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  const dp_vector *pk[64], *bk[64];
  if (st->ekeys && !st->pkv && (rc = probe_keys(op))) return rc;
  for (int k = 0; k < st->nkeys; k++) {
    pk[k] = st->ekeys ? st->pkv[k] : P->cols[st->pkeys[k]];
    bk[k] = (st->ekeys ? st->bkb : B)->cols[st->bkeys[k]];
  }
  const uint8_t *dead = st->build_dead;
  if (st->vord) {
    rc = probe_versions(op, pk, bk, start, end);
    if (rc) return rc;
  }
  for (int64_t r = start; !st->vord && r < end; r++) {
    if (st->nkeys == 0) {
      for (int64_t b = 0; b < B->nrows; b++)
        if ((!dead || !dead[b]) && (rc = dp_join_add_pair(st, r, b))) return rc;
      continue;
    }
    if (dp_rows_any_null(pk, st->nkeys, r)) continue;
    uint64_t h = dp_rows_hash(pk, st->nkeys, r);
    for (int64_t b = dp_rowhash_first(st->index, h); b >= 0; b = dp_rowhash_next(st->index, b))
      if (st->index->hashes[b] == h && (!dead || !dead[b]) &&
          dp_rows_equal(bk, b, pk, r, st->nkeys))
        if ((rc = dp_join_add_pair(st, r, b))) return rc;
  }
  if ((rc = check_pairs(op))) return rc;
  if (st->version_col >= 0 && !st->vord && (rc = pick_versions(op))) return rc;
  for (int64_t k = 0; k < st->npairs; k++) {
    st->probe_hit[st->pi[k] - start] = 1;
    int64_t b = st->bi[k];
    if (st->mark_build && !(st->semi && st->pside == 1) && !st->build_hit[b]) {
      st->build_hit[b] = 1;
      if ((rc = dp_rowlog_touch(st->hit_log, b))) return rc;
    }
  }
  if (st->semi && st->pside == 1) {
    /* SEMI with the stream probing the bounded left side: a left row leaves
    ** the first time a stream row matches it, and never again. */
    int64_t nhit = 0;
    for (int64_t k = 0; k < st->npairs; k++) {
      int64_t b = st->bi[k];
      if (st->build_hit[b]) continue;
      st->build_hit[b] = 1;
      if ((rc = dp_rowlog_touch(st->hit_log, b))) return rc;
      st->pi[nhit] = -1;
      st->bi[nhit++] = b;
    }
    st->npairs = nhit;
  } else if (st->semi) {
    /* One row per probe row that found a match (SEMI) or none (ANTI). */
    bool want = st->kind == DP_J_SEMI;
    st->npairs = 0;
    for (int64_t r = start; r < end; r++)
      if ((st->probe_hit[r - start] != 0) == want && (rc = dp_join_add_pair(st, r, -1))) return rc;
  } else if (st->probe_outer) {
    for (int64_t r = start; r < end; r++)
      if (!st->probe_hit[r - start] && (rc = dp_join_add_pair(st, r, -1))) return rc;
  }
  return dp_join_gather_out(st);
}

/* Build rows that never matched, padded on the probe side (RIGHT, FULL). */
static int emit_unmatched(join_state *st) {
  st->npairs = 0;
  int64_t nb = st->build->nrows;
  while (st->unmatched_cursor < nb && st->npairs < DP_ROWS_CHUNK) {
    int64_t b = st->unmatched_cursor++;
    if (!st->build_hit[b]) {
      int rc = dp_join_add_pair(st, -1, b);
      if (rc) return rc;
    }
  }
  return dp_join_gather_out(st);
}

static int keep_build(dp_op *op, const dp_batch *b) {
  join_state *st = op->state;
  op->metrics.rows_in += b->nrows;
  int64_t first = st->build->nrows;
  int rc = dp_rows_append(st->build, b);
  if (rc) return rc;
  if (st->ekeys) {
    if (b->nrows > 0 && (rc = build_keys(op, b))) return rc;
  } else {
    const dp_vector *bk[64];
    for (int k = 0; k < st->nkeys; k++) bk[k] = st->build->cols[st->bkeys[k]];
    for (int64_t r = first; r < st->build->nrows; r++)
      if ((rc = dp_rowhash_add(st->index, dp_rows_hash(bk, st->nkeys, r)))) return rc;
  }
  if (st->mark_build && st->build->nrows > st->hit_cap) {
    int64_t cap = st->build->nrows * 2;
    uint8_t *h = realloc(st->build_hit, (size_t)cap);
    if (!h) return DIPPER_NOMEM;
    memset(h + st->hit_cap, 0, (size_t)(cap - st->hit_cap));
    st->build_hit = h;
    st->hit_cap = cap;
  }
  return DIPPER_OK;
}

static int keep_probe(dp_op *op, const dp_batch *b) {
  join_state *st = op->state;
  op->metrics.rows_in += b->nrows;
  int64_t wm = op->ex->late_watermark;
  if (!st->vord || wm == DP_WATERMARK_NONE || b->nrows == 0)
    return dp_rows_append(st->versions_stream ? st->pending : st->probe, b);
  /* vord: a row at or before the late watermark is late (the versions it
  ** would need may be pruned); "versions in order" above */
  dp_vector *at = NULL;
  int rc = dp_eval(op->ex, op->plan->u.join.as_of, b, &at);
  int64_t *keep = rc ? NULL : malloc((size_t)b->nrows * sizeof *keep), n = 0;
  if (!rc && !keep) rc = DIPPER_NOMEM;
  for (int64_t r = 0; !rc && r < b->nrows; r++) {
    if (!dp_vector_is_null(at, r) && dp_vector_get_i64(at, r) <= wm) {
      op->metrics.late_dropped++;
      continue;
    }
    keep[n++] = r;
  }
  if (!rc) rc = dp_batch_take(st->pending, b, keep, 0, n);
  free(keep);
  dp_vector_free(at);
  return rc;
}

/* Temporal join of two streams: a left row is joined once the watermark has
** reached its AS OF time, when every version up to that time has arrived. */
static int release_pending(dp_op *op) {
  join_state *st = op->state;
  int64_t wm = op->ex->final ? DP_WATERMARK_END : op->ex->watermark;
  int64_t n = st->pending->nrows;
  if (wm == DP_WATERMARK_NONE || n == 0) return DIPPER_OK;
  dp_vector *at = NULL;
  int rc = dp_eval(op->ex, op->plan->u.join.as_of, st->pending, &at);
  if (rc) return rc;
  size_t sz = (size_t)n * sizeof(int64_t);
  int64_t *ready = malloc(sz), *wait = malloc(sz), nready = 0, nwait = 0;
  dp_batch *rest = dp_batch_new(st->pending->schema, 0);
  rc = ready && wait && rest ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t r = 0; !rc && r < n; r++) {
    if (wm == DP_WATERMARK_END || dp_vector_is_null(at, r) || dp_vector_get_i64(at, r) <= wm)
      ready[nready++] = r;
    else
      wait[nwait++] = r;
  }
  if (!rc && nready > 0) {
    rc = dp_batch_take(st->probe, st->pending, ready, 0, nready);
    if (!rc) rc = dp_batch_take(rest, st->pending, wait, 0, nwait);
    if (!rc) rc = dp_rowlog_drop(&st->pending_log, ready, nready);
    if (!rc) {
      dp_batch_free(st->pending);
      st->pending = rest;
      rest = NULL;
    }
  }
  dp_batch_free(rest);
  dp_vector_free(at);
  free(ready);
  free(wait);
  return rc;
}

/* ---- two streams ---- */

/* The watermark below which input rows are late in this batch: the one the
** previous batch ran under (exec.h, SPARK-40925), so that rows a stateful
** operator below emitted in this batch are not late here. */
static int64_t late_mark(const dp_op *op) { return op->ex->late_watermark; }

static int keep_delta(dp_op *op, const dp_batch *in, int s) {
  join_state *st = op->state;
  op->metrics.rows_in += in->nrows;
  struct side *sd = &st->side[s];
  /* the read columns only: a view of them, in the store's order */
  for (int j = 0; j < sd->nkept; j++) sd->vcols[j] = in->cols[sd->kept[j]];
  dp_batch view = {&sd->kschema, sd->nkept, sd->vcols, in->nrows};
  const dp_batch *b = &view;
  int64_t wm = late_mark(op);
  if (sd->time_col < 0 || wm == DP_WATERMARK_NONE) return dp_rows_append(sd->delta, b);
  /* Rows at or before the watermark are late (Spark's rule): they could not
  ** be matched fairly. */
  const dp_vector *tv = b->cols[sd->time_col];
  int64_t *keep = malloc((size_t)(b->nrows ? b->nrows : 1) * sizeof *keep);
  if (!keep) return DIPPER_NOMEM;
  int64_t n = 0;
  for (int64_t r = 0; r < b->nrows; r++) {
    if (!dp_vector_is_null(tv, r) && dp_vector_get_i64(tv, r) <= wm) {
      op->metrics.late_dropped++;
      continue;
    }
    keep[n++] = r;
  }
  int rc = dp_batch_take(sd->delta, b, keep, 0, n);
  free(keep);
  return rc;
}
static int keep_left(dp_op *op, const dp_batch *b) { return keep_delta(op, b, 0); }
static int keep_right(dp_op *op, const dp_batch *b) { return keep_delta(op, b, 1); }

/* ---- two streams over RocksDB ('state.backend' = 'rocksdb') ----
** Each side's rows — the columns it keeps, as its in-memory store would —
** live in state_rocks.h's keyed row store (space 0 the left side, 1 the
** right), its time index the eviction's order; the in-memory stores stay
** empty.  A slice of new rows probes with each of its
** distinct keys once, the matches read into fetched[] with their places
** (refs), so that the condition and the gathering are the in-memory path's;
** a matched flag of an outer side is written back to RocksDB. */

/* The join's number among the joins of the plan, in preorder: its folder's
** name, the same in every run of the same plan. */
static bool join_ordinal(const dp_plan *at, const dp_plan *p, int *n) {
  if (at == p) return true;
  if (at->kind == DP_P_JOIN) ++*n;
  for (int i = 0; i < at->ninputs; i++)
    if (join_ordinal(at->inputs[i], p, n)) return true;
  return false;
}

static int rocks_setup(dp_op *op) {
  join_state *st = op->state;
  dp_exec *ex = op->ex;
  int n = 0;
  if (!ex->root || !join_ordinal(ex->root, op->plan, &n)) n = 0;
  char name[32];
  snprintf(name, sizeof name, "join-%d", n);
  int rc = dp_rocks_new(ex->checkpoint, name, ex->diags, &st->rocks);
  for (int s = 0; !rc && s < 2; s++) {
    dp_rocks_space(st->rocks, s, &st->side[s].kschema);
    if (!(st->fetched[s] = dp_batch_new(&st->side[s].kschema, 0))) rc = DIPPER_NOMEM;
  }
  return rc;
}

static void rocks_close(join_state *st) {
  dp_rocks_free(st->rocks);
  dp_rocks_refs_free(&st->refs);
  for (int s = 0; s < 2; s++) dp_batch_free(st->fetched[s]);
}

/* Rows of a slice: a keyless probe pairs each row with the whole other side. */
static int64_t rocks_slice_rows(const join_state *st, int s) {
  int64_t nb = st->rocks_rows[1 - s] > 0 ? st->rocks_rows[1 - s] : 1;
  return st->nkeys > 0 ? DP_ROWS_CHUNK : DP_ROWS_CHUNK / nb > 0 ? DP_ROWS_CHUNK / nb : 1;
}

/* probe_slice over RocksDB: new rows [start, end) of side s against the other side. */
static int rocks_probe_slice(dp_op *op, int s, int64_t start, int64_t end) {
  join_state *st = op->state;
  struct side *P = &st->side[s], *B = &st->side[1 - s];
  dp_batch *F = st->fetched[1 - s];
  dp_batch_clear(F);
  st->build = F;
  int64_t n = end - start;
  if (clear_probe(st, n)) return DIPPER_NOMEM;
  dp_rocks_refs *rf = &st->refs;
  int rc = dp_rocks_rows_probe(st->rocks, 1 - s, P->delta, start, end, P->keys, st->nkeys, F, rf);
  for (int64_t r = start; !rc && r < end; r++)
    for (int64_t b = 0; !rc && b < rf->count[r - start]; b++)
      rc = dp_join_add_pair(st, r, rf->first[r - start] + b);
  if (!rc) rc = check_pairs(op);
  for (int64_t k = 0; !rc && k < st->npairs; k++) {
    st->probe_hit[st->pi[k] - start] = 1;
    if (B->outer) dp_rocks_rows_mark(rf, st->bi[k]);
  }
  if (!rc && B->outer) rc = dp_rocks_rows_write_marks(st->rocks, rf);
  return rc ? rc : dp_join_gather_out(st);
}

/* store_delta over RocksDB: side s's new rows, with what they matched. */
static int rocks_store_delta(join_state *st, int s) {
  struct side *sd = &st->side[s];
  dp_rocks_rows_time(st->rocks, st->rocks_ttl[s] > 0 ? st->now : 0);
  int rc = dp_rocks_rows_add(st->rocks, s, sd->delta, sd->keys, st->nkeys, sd->time_col,
                             sd->delta->nrows ? sd->dhit : NULL);
  if (!rc) rc = dp_rocks_commit(st->rocks);
  if (rc) return rc;
  st->rocks_rows[s] += sd->delta->nrows;
  dp_batch_clear(sd->delta);
  if (sd->dhit) memset(sd->dhit, 0, (size_t)sd->dhit_cap);
  return DIPPER_OK;
}

/* a + b and a - b, held inside the times (INT64_MAX means "everything"). */
static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX - 1 : INT64_MIN;
}
static int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? INT64_MAX - 1 : INT64_MIN;
}

/* The state TTL over RocksDB (a regular join: no time range, so the time
** index is free): a side's rows are stored at the start of the batch that
** brought them, and go, without output, once that is ttl or more before
** this batch's start — a range scan of the index (chunks wholly expired go
** unread), as memory's dp_join_expire_ttl drops the rows by insertion.
** Rows stored before rocks_from count as stored at it (a row's time is the
** greater of the two), so none goes while rocks_from is within the TTL:
** the rows of a checkpoint written without the TTL (at time 0) count from
** the restore, as memory's dp_join_ttl_load has them inserted then, with
** no rewrite of the stored rows. */
static int rocks_expire_ttl(join_state *st) {
  for (int s = 0; s < 2; s++) {
    if (st->rocks_ttl[s] <= 0) continue;
    int64_t removed = 0, upto = sat_sub(st->now, st->rocks_ttl[s]);
    if (st->rocks_from[s] > upto) continue;
    int rc = dp_rocks_rows_expire(st->rocks, s, upto, NULL, &removed);
    if (rc) return rc;
    st->rocks_rows[s] -= removed;
  }
  return DIPPER_OK;
}

/* evict() over RocksDB: a scan of each side's time index up to its bound. */
static int rocks_evict(dp_op *op) {
  join_state *st = op->state;
  int64_t wm = op->ex->final ? DP_WATERMARK_END : op->ex->watermark;
  for (int s = 0; s < 2; s++) {
    struct side *sd = &st->side[s];
    if (wm == DP_WATERMARK_NONE) continue;
    if (sd->time_col < 0 && !op->ex->final) continue;
    /* expired(): left t - lower <= wm, right t + upper <= wm */
    int64_t upto = op->ex->final ? INT64_MAX
                   : s == 0      ? sat_add(wm, st->evict_lower)
                                 : sat_sub(wm, st->evict_upper);
    dp_batch *un = sd->outer ? st->fetched[s] : NULL;
    if (un) dp_batch_clear(un);
    int64_t removed = 0;
    int rc = dp_rocks_rows_expire(st->rocks, s, upto, un, &removed);
    if (rc) return rc;
    st->rocks_rows[s] -= removed;
    if (un && un->nrows > 0) {
      st->npairs = 0;
      for (int64_t r = 0; r < un->nrows && !rc; r++) rc = dp_join_add_pair(st, r, -1);
      dp_join_aim(st, s);
      st->probe = un; /* the padded rows come from this side's expired rows */
      if (!rc) rc = dp_join_gather_out(st);
      if (rc) return rc;
    }
  }
  return DIPPER_OK;
}

static int stream2_next(dp_op *op, dp_batch **out) {
  join_state *st = op->state;
  int rc;
  if (!st->drained) {
    rc = st->rocks ? dp_rocks_begin(st->rocks) : dp_join_sides_ready(st);
    st->now = op->ex->batch_start_time;
    /* expiry by the state TTL before the input: a row of this batch never
    ** meets one that expired (Flink's NeverReturnExpired) */
    if (!rc) rc = st->rocks ? rocks_expire_ttl(st) : dp_join_expire_ttl(st);
    if (rc) return rc;
    if ((rc = dp_op_drain(op->children[0], keep_left, op))) return rc;
    if ((rc = dp_op_drain(op->children[1], keep_right, op))) return rc;
    st->drained = true;
    st->phase = 0;
    st->probe_cursor = 0;
  }
  for (;;) {
    dp_batch_clear(st->out);
    if (st->phase == 0 || st->phase == 1) {
      int s = st->phase;
      struct side *sd = &st->side[s];
      dp_join_aim(st, s);
      if (st->probe_cursor < sd->delta->nrows) {
        if ((rc = dp_join_grow_hits(&sd->dhit, &sd->dhit_cap, sd->delta->nrows))) return rc;
        int64_t start = st->probe_cursor;
        int64_t end = start + (st->rocks ? rocks_slice_rows(st, s) : slice_rows(st));
        if (end > sd->delta->nrows) end = sd->delta->nrows;
        rc = st->rocks ? rocks_probe_slice(op, s, start, end) : probe_slice(op, start, end);
        for (int64_t r = start; !rc && r < end; r++)
          if (st->probe_hit[r - start]) sd->dhit[r] = 1;
        st->probe_cursor = end;
      } else {
        /* Left rows join the store before the right ones probe it, so that
        ** pairs of two new rows are found exactly once. */
        rc = st->rocks ? rocks_store_delta(st, s) : dp_join_side_append(st, s);
        st->phase++;
        st->probe_cursor = 0;
      }
    } else if (st->phase == 2) {
      rc = st->rocks ? rocks_evict(op) : dp_join_evict(op);
      st->phase = 3;
    } else {
      return DIPPER_OK;
    }
    if (rc) return rc;
    if (st->out->nrows > 0) {
      op->metrics.rows_out += st->out->nrows;
      *out = &st->out_view;
      return DIPPER_OK;
    }
  }
}

/* The first event-time column of side s that the condition reads, else its
** first event-time column, else -1. */
static int bound_column(const dp_plan *p, int s) {
  const dp_plan *in = p->inputs[s];
  int off = s == 0 ? 0 : p->inputs[0]->schema.ncols, first = -1;
  for (int c = 0; in->props.time_attr && c < in->schema.ncols; c++) {
    if (in->props.time_attr[c] < 0) continue;
    if (first < 0) first = c;
    if (p->u.join.cond && dp_expr_uses_column(p->u.join.cond, off + c)) return c;
  }
  return first;
}

/* The columns side s keeps of its input: what the condition reads, the
** keys, the time bound, and what the plan above reads of the join's output
** (out_need).  Sets map, kept, nkept, kschema and vcols. */
static int keep_columns(dp_op *op, int s, const int *keys) {
  join_state *st = op->state;
  const dp_plan *p = op->plan;
  struct side *sd = &st->side[s];
  const dp_schema *in = &p->inputs[s]->schema;
  int n = in->ncols, off = s == 0 ? 0 : st->nleft;
  dp_arena *a = op->ex->arena;
  size_t slots = (size_t)(n ? n : 1);
  sd->ncols = n;
  sd->map = dp_arena_calloc(a, slots, sizeof *sd->map);
  sd->kept = dp_arena_calloc(a, slots, sizeof *sd->kept);
  sd->vcols = dp_arena_calloc(a, slots, sizeof *sd->vcols);
  sd->kschema.cols = dp_arena_calloc(a, slots, sizeof *sd->kschema.cols);
  if (!sd->map || !sd->kept || !sd->vcols || !sd->kschema.cols) return DIPPER_NOMEM;
  for (int c = 0; c < n; c++) {
    bool read = c == sd->time_col || st->out_need[off + c] ||
                (p->u.join.cond && dp_expr_uses_column(p->u.join.cond, off + c));
    for (int k = 0; k < st->nkeys && !read; k++) read = keys[k] == c;
    sd->map[c] = -1;
    if (!read) continue;
    sd->map[c] = sd->nkept;
    sd->kschema.cols[sd->nkept] = in->cols[c];
    sd->kept[sd->nkept++] = c;
  }
  sd->kschema.ncols = sd->nkept;
  return DIPPER_OK;
}

static int stream2_setup(dp_op *op, const char *kname) {
  const dp_plan *p = op->plan;
  join_state *st = op->state;
  dp_exec *ex = op->ex;
  bool outer = st->kind == DP_J_LEFT || st->kind == DP_J_RIGHT || st->kind == DP_J_FULL;
  if (st->kind == DP_J_SEMI || st->kind == DP_J_ANTI)
    return dp_error(ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "the embedded engine does not run %s joins of two streams (EXISTS / IN over "
                    "a stream) yet; write an INNER JOIN with a time range between the two sides, "
                    "or run in batch mode (SET 'execution.runtime-mode' = 'batch')",
                    kname);
  if (outer && !p->props.has_time_bound)
    return dp_error(ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "%s JOINs of two streams run only with a time range between the two sides, "
                    "which says when a row can no longer find a match: bound the times in the "
                    "ON clause (AND l.ts BETWEEN r.ts - INTERVAL '1' HOUR AND r.ts + INTERVAL "
                    "'1' HOUR), or run in batch mode",
                    kname);
  st->stream2 = true;
  st->evict_lower = p->props.time_lower;
  st->evict_upper = p->props.time_upper;
  for (int s = 0; s < 2; s++) {
    struct side *sd = &st->side[s];
    sd->time_col = p->props.has_time_bound ? bound_column(p, s) : -1;
    sd->outer = s == 0 ? (st->kind == DP_J_LEFT || st->kind == DP_J_FULL)
                       : (st->kind == DP_J_RIGHT || st->kind == DP_J_FULL);
    if (sd->outer && sd->time_col < 0)
      return dp_error(ex->diags, DIPPER_UNSUPPORTED, p->span,
                      "%s JOINs of two streams need an event-time column on their %s side to "
                      "know when a row can no longer find a match; declare a WATERMARK there",
                      kname, s == 0 ? "left" : "right");
    sd->evict_wm = DP_WATERMARK_NONE;
    /* the key columns per side, as join_setup chose them for pside == 0 */
    const int *keys = s == 0 ? st->pkeys : st->bkeys;
    int rc = keep_columns(op, s, keys);
    if (rc) return rc;
    sd->store = dp_batch_new(&sd->kschema, 0);
    sd->delta = dp_batch_new(&sd->kschema, 0);
    sd->keys = dp_arena_calloc(ex->arena, (size_t)st->nkeys + 1, sizeof(int));
    if (!sd->store || !sd->delta || !sd->keys) return DIPPER_NOMEM;
    for (int k = 0; k < st->nkeys; k++) sd->keys[k] = sd->map[keys[k]];
    if (sd->time_col >= 0) sd->time_col = sd->map[sd->time_col];
    dp_rowhash_init(&sd->index);
    int64_t ttl = p->props.state_ttl[s];
    if (ttl > 0 && dp_exec_state_rocks(ex) && sd->time_col >= 0)
      return dp_error(ex->diags, DIPPER_UNSUPPORTED, p->span,
                      "the %s JOIN's state TTL ('table.exec.state.ttl' or STATE_TTL) with a time "
                      "range between its sides is carried out in memory only so far: set "
                      "'state.backend' = 'hashmap', or drop the TTL",
                      kname);
    st->rocks_from[s] = INT64_MIN;
    if (ttl > 0 && dp_exec_state_rocks(ex)) st->rocks_ttl[s] = ttl; /* rocks_expire_ttl */
    else if (ttl > 0 && (rc = dp_state_ttl_init(&sd->ttl, ttl))) return rc;
  }
  st->lmap = st->side[0].map;
  st->rmap = st->side[1].map;
  return dp_exec_state_rocks(ex) ? rocks_setup(op) : DIPPER_OK;
}

static int stream2_end_batch(dp_op *op) {
  join_state *st = op->state;
  st->drained = false;
  int rc = dp_join_sides_ready(st);
  if (rc) return rc;
  op->metrics.state_rows = dp_join_rows(st);
  return DIPPER_OK;
}

static int join_next(dp_op *op, dp_batch **out) {
  join_state *st = op->state;
  dp_exec *ex = op->ex;
  *out = NULL;
  int rc;
  if (st->stream2) return stream2_next(op, out);
  if (st->keys_stale) {
    if ((rc = rebuild_keys(op))) return rc;
    st->keys_stale = false;
  }
  if (!st->drained) {
    if (st->vord && st->vstale && (rc = vreindex(op))) return rc;
    if (st->vord && (rc = vprune(op, ex->late_watermark))) return rc;
    /* The build side first: stream rows of this batch must see all of it. */
    if ((rc = dp_op_drain(op->children[st->bside], keep_build, op))) return rc;
    if (st->vord && (rc = vindex_rows(op))) return rc;
    if ((rc = dp_op_drain(op->children[st->pside], keep_probe, op))) return rc;
    if (st->versions_stream && (rc = release_pending(op))) return rc;
    st->drained = true;
    op->metrics.state_rows = st->build->nrows - st->vndead + (st->bounded ? st->probe->nrows : 0) +
                             (st->pending ? st->pending->nrows : 0);
  }
  if (st->done || (st->bounded && !ex->final)) return DIPPER_OK;
  for (;;) {
    dp_batch_clear(st->out);
    if (st->probe_cursor < st->probe->nrows) {
      int64_t end = st->probe_cursor + slice_rows(st);
      if (end > st->probe->nrows) end = st->probe->nrows;
      rc = probe_slice(op, st->probe_cursor, end);
      st->probe_cursor = end;
    } else if (st->build_outer && st->bounded && st->unmatched_cursor < st->build->nrows) {
      rc = emit_unmatched(st);
    } else {
      if (st->bounded) st->done = true;
      return DIPPER_OK;
    }
    if (rc) return rc;
    if (st->out->nrows > 0) {
      op->metrics.rows_out += st->out->nrows;
      *out = &st->out_view;
      return DIPPER_OK;
    }
  }
}

static int join_end_batch(dp_op *op) {
  join_state *st = op->state;
  if (st->stream2) return stream2_end_batch(op);
  st->drained = false;
  if (!st->bounded || st->done) {
    dp_vector_free(st->as_of);
    st->as_of = NULL;
    free_probe_keys(st);
    dp_batch_clear(st->probe);
    dp_rowlog_clear(&st->probe_log);
    st->probe_cursor = 0;
  }
  if (st->done) {
    /* The bounded run has ended: nothing is needed any more. */
    dp_batch_clear(st->build);
    if (st->bkb) dp_batch_clear(st->bkb);
    dp_rowlog_clear(&st->build_log);
    dp_rowhash_free(st->index);
  }
  op->metrics.state_rows = st->build->nrows + st->probe->nrows;
  return DIPPER_OK;
}

/* Is e, an AND of conjuncts, made only of the key equalities? */
static bool only_keys(const dp_expr *e, const dp_plan *p, int nl) {
  if (!e) return true;
  if (e->kind == DP_E_CALL && e->u.call.fn->id == DP_F_AND) {
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!only_keys(e->u.call.args[i], p, nl)) return false;
    return true;
  }
  if (e->kind != DP_E_CALL || e->u.call.fn->id != DP_F_EQ || e->u.call.nargs != 2) return false;
  int a = dp_expr_as_column(e->u.call.args[0]), b = dp_expr_as_column(e->u.call.args[1]);
  if (a < 0 || b < 0) return false;
  if (a >= nl) {
    int t = a;
    a = b;
    b = t;
  }
  for (int k = 0; k < p->u.join.nkeys; k++)
    if (p->u.join.left_keys[k] == a && p->u.join.right_keys[k] + nl == b) return true;
  return false;
}

/* Can e be evaluated once per row of its side, ahead of the pairs: columns
** of this row, literals, deterministic scalar calls, casts, fields? */
static bool key_expr(const dp_expr *e) {
  switch (e->kind) {
  case DP_E_COLUMN: return e->u.column.outer == 0;
  case DP_E_LITERAL: return true;
  case DP_E_CALL:
    if (!e->u.call.fn || e->u.call.fn->kind != DP_FN_SCALAR || !e->u.call.fn->deterministic)
      return false;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!key_expr(e->u.call.args[i])) return false;
    return true;
  case DP_E_CAST: return key_expr(e->u.cast.arg);
  case DP_E_FIELD: return key_expr(e->u.field.arg);
  default: return false;
  }
}

/* Does e read a column of [lo, hi)? */
static bool uses_range(const dp_expr *e, int lo, int hi) {
  for (int c = lo; c < hi; c++)
    if (dp_expr_uses_column(e, c)) return true;
  return false;
}

/* The conjuncts of e (an AND tree) onto out, at most cap. */
static void conjuncts(const dp_expr *e, const dp_expr **out, int *n, int cap) {
  if (e->kind == DP_E_CALL && e->u.call.fn->id == DP_F_AND) {
    for (int i = 0; i < e->u.call.nargs; i++) conjuncts(e->u.call.args[i], out, n, cap);
    return;
  }
  if (*n < cap) out[(*n)++] = e;
  else *n = cap + 1; /* too many: no expression keys */
}

/* Expression keys (join_state.ekeys): when the condition equates an
** expression over the left side with one over the right that is not a plain
** column pair, every such equality becomes a hash key, the expressions
** remapped onto their side's columns.  The residual condition is still
** checked on the pairs unless the condition is only these equalities.  Not
** for two streams, whose stores keep only the columns they read. */
static int setup_ekeys(dp_op *op) {
  join_state *st = op->state;
  const dp_plan *p = op->plan;
  dp_arena *a = op->ex->arena;
  if (!p->u.join.cond) return DIPPER_OK;
  enum { CAP = 64 };
  const dp_expr *conj[CAP];
  int n = 0;
  conjuncts(p->u.join.cond, conj, &n, CAP);
  if (n > CAP) return DIPPER_OK;
  int nl = st->nleft, nb = st->both.ncols;
  int *lmap = dp_arena_calloc(a, (size_t)nb, sizeof(int));
  int *rmap = dp_arena_calloc(a, (size_t)nb, sizeof(int));
  dp_expr **le = dp_arena_calloc(a, CAP, sizeof *le), **re = dp_arena_calloc(a, CAP, sizeof *re);
  if (!lmap || !rmap || !le || !re) return DIPPER_NOMEM;
  for (int c = 0; c < nb; c++) {
    lmap[c] = c < nl ? c : -1;
    rmap[c] = c < nl ? -1 : c - nl;
  }
  int nk = 0;
  bool any_expr = false, rest = false;
  for (int i = 0; i < n; i++) {
    const dp_expr *c = conj[i];
    bool key = false;
    if (c->kind == DP_E_CALL && c->u.call.fn->id == DP_F_EQ && c->u.call.nargs == 2 &&
        key_expr(c->u.call.args[0]) && key_expr(c->u.call.args[1])) {
      for (int o = 0; o < 2 && !key; o++) {
        const dp_expr *x = c->u.call.args[o], *y = c->u.call.args[1 - o];
        if (!uses_range(x, 0, nl) || uses_range(x, nl, nb) || !uses_range(y, nl, nb) ||
            uses_range(y, 0, nl))
          continue;
        const dp_type *xt = x->type, *yt = y->type;
        bool ints = dp_type_is_integer(xt) && dp_type_is_integer(yt);
        bool strs = xt->kind == yt->kind && (xt->kind == DP_T_STRING || xt->kind == DP_T_BYTES);
        if (!ints && !strs && (!dp_type_equal(xt, yt) || dp_phys_of(xt) != dp_phys_of(yt)))
          continue;
        /* ROWs and ARRAYs compare field by field here but not so in SQL (a NULL
        ** field); NaN meets NaN in the index but not through `=`: floats are
        ** keys, and the equality is checked again on the pairs */
        dp_phys ph = dp_phys_of(xt);
        if (ph == DP_PHYS_STRUCT || ph == DP_PHYS_LIST) continue;
        if (ph == DP_PHYS_F32 || ph == DP_PHYS_F64) rest = true;
        dp_expr *lx = dp_expr_remap(a, x, lmap), *ry = dp_expr_remap(a, y, rmap);
        if (!lx || !ry) return DIPPER_NOMEM;
        if (ints && !dp_type_equal(xt, yt)) { /* every integer type fits a BIGINT */
          lx = dp_expr_cast(a, lx, dp_type_of(DP_T_BIGINT), false);
          ry = dp_expr_cast(a, ry, dp_type_of(DP_T_BIGINT), false);
          if (!lx || !ry) return DIPPER_NOMEM;
        }
        if (x->kind != DP_E_COLUMN || y->kind != DP_E_COLUMN) any_expr = true;
        le[nk] = lx;
        re[nk++] = ry;
        key = true;
      }
    }
    if (!key) rest = true;
  }
  if (!any_expr) return DIPPER_OK; /* column keys only: the plan's keys say it all */
  st->ekeys = true;
  st->nkeys = nk;
  st->residual = rest;
  st->pkexpr = st->pside == 0 ? le : re;
  st->bkexpr = st->pside == 0 ? re : le;
  st->kschema.ncols = nk;
  st->kschema.cols = dp_arena_calloc(a, (size_t)nk, sizeof(dp_field));
  st->bkeys = dp_arena_calloc(a, (size_t)nk, sizeof(int));
  st->pkeys = dp_arena_calloc(a, (size_t)nk, sizeof(int));
  if (!st->kschema.cols || !st->bkeys || !st->pkeys) return DIPPER_NOMEM;
  for (int k = 0; k < nk; k++) {
    st->kschema.cols[k] = (dp_field){"key", st->bkexpr[k]->type};
    st->bkeys[k] = st->pkeys[k] = k;
  }
  st->bkb = dp_batch_new(&st->kschema, 0);
  return st->bkb ? DIPPER_OK : DIPPER_NOMEM;
}

static void join_close(dp_op *op);

/* What is gathered: the columns of the candidate pairs the condition reads,
** the output columns the plan above reads; and the views handed on. */
static int setup_views(dp_op *op) {
  join_state *st = op->state;
  const dp_plan *p = op->plan;
  dp_arena *a = op->ex->arena;
  int nb = st->both.ncols, no = p->schema.ncols;
  dp_col_need *need = NULL;
  int rc = dp_prune_need(a, op->ex->root, p, &need);
  if (rc) return rc;
  size_t sb = (size_t)(nb ? nb : 1), so = (size_t)(no ? no : 1);
  st->cand_need = dp_arena_calloc(a, sb, sizeof *st->cand_need);
  st->out_need = dp_arena_calloc(a, so, sizeof *st->out_need);
  st->cand_view.cols = dp_arena_calloc(a, sb, sizeof *st->cand_view.cols);
  st->out_view.cols = dp_arena_calloc(a, so, sizeof *st->out_view.cols);
  st->cand_fill = calloc(sb, sizeof *st->cand_fill);
  st->out_fill = calloc(so, sizeof *st->out_fill);
  if (!st->cand_need || !st->out_need || !st->cand_view.cols || !st->out_view.cols ||
      !st->cand_fill || !st->out_fill)
    return DIPPER_NOMEM;
  for (int c = 0; c < nb; c++)
    st->cand_need[c] = p->u.join.cond && dp_expr_uses_column(p->u.join.cond, c);
  for (int c = 0; c < no; c++) st->out_need[c] = dp_col_needed(&need[c]);
  st->cand_view.schema = &st->both;
  st->cand_view.ncols = nb;
  st->out_view.schema = &p->schema;
  st->out_view.ncols = no;
  return DIPPER_OK;
}

static int join_setup(dp_op *op) {
  const dp_plan *p = op->plan;
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  dp_exec *ex = op->ex;
  join_state *st = op->state;
  st->kind = p->u.join.kind;
  st->bounded = L->props.bounded && R->props.bounded;
  const char *kname = st->kind == DP_J_INNER ? "INNER" : st->kind == DP_J_LEFT ? "LEFT"
                    : st->kind == DP_J_RIGHT ? "RIGHT" : st->kind == DP_J_FULL ? "FULL"
                    : st->kind == DP_J_SEMI ? "SEMI" : st->kind == DP_J_ANTI ? "ANTI" : "CROSS";
  /* A temporal join reads the versions of a bounded right side: each left
  ** row meets the version valid at its AS OF time.  A right side without an
  ** event-time column holds one version per row (a lookup join). */
  st->version_col = -1;
  if (p->u.join.as_of) {
    if (!R->props.bounded && (L->props.bounded || (st->kind != DP_J_INNER && st->kind != DP_J_LEFT)))
      return dp_error(ex->diags, DIPPER_UNSUPPORTED, p->span,
                      "a temporal join (FOR SYSTEM_TIME AS OF) of a stream of versions runs as "
                      "an INNER or LEFT JOIN with the stream of rows on the left; rewrite it so, "
                      "or run in batch mode (SET 'execution.runtime-mode' = 'batch')");
    st->versions_stream = !R->props.bounded;
    for (int c = 0; R->props.time_attr && c < R->schema.ncols && st->version_col < 0; c++)
      if (R->props.time_attr[c] >= 0) st->version_col = c;
  }
  bool two_streams = !L->props.bounded && !R->props.bounded && !st->versions_stream;
  /* In streaming mode, two bounded inputs with event times and a time range
  ** between them join as two streams do, their state evicted by the
  ** watermark as they are read, rather than both held whole until the end
  ** (memory in proportion to the input: 1.7 GB for 10 M Nexmark events). */
  if (st->bounded && ex->query && ex->query->streaming && p->props.has_time_bound &&
      !p->u.join.as_of && st->kind != DP_J_SEMI && st->kind != DP_J_ANTI &&
      L->props.time_attr && R->props.time_attr) {
    two_streams = true;
    st->bounded = false;
  }
  st->bside = 1;
  if (!st->bounded && !two_streams && !R->props.bounded) st->bside = 0; /* the bounded side builds */
  st->pside = 1 - st->bside;
  bool left_pad = st->kind == DP_J_RIGHT || st->kind == DP_J_FULL;
  bool right_pad = st->kind == DP_J_LEFT || st->kind == DP_J_FULL;
  st->semi = st->kind == DP_J_SEMI || st->kind == DP_J_ANTI;
  st->probe_outer = st->pside == 0 ? right_pad : left_pad;
  st->build_outer = st->pside == 0 ? left_pad : right_pad;
  st->mark_build = st->build_outer;
  if (st->versions_stream) {
    /* the versions build, the rows probe once the watermark reaches them */
    st->bside = 1;
    st->pside = 0;
    st->probe_outer = st->kind == DP_J_LEFT;
    st->build_outer = st->mark_build = false;
  }
  if (st->semi && st->pside == 1) st->mark_build = true; /* SEMI: left rows matched so far */
  if (!two_streams && !st->bounded &&
      (st->build_outer || (st->kind == DP_J_ANTI && st->pside != 0)))
    return dp_error(ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "%s JOINs of a stream with a bounded table would have to wait for the "
                    "stream's end to emit the unmatched rows of the bounded side; put the stream "
                    "on the %s side (or use an INNER JOIN), or run in batch mode",
                    kname, st->bside == 1 ? "right" : "left");
  /* Hash on the keys whose two columns are laid out alike. */
  int nl = L->schema.ncols;
  int nk = p->u.join.nkeys;
  st->bkeys = dp_arena_calloc(ex->arena, (size_t)(nk ? nk : 1), sizeof(int));
  st->pkeys = dp_arena_calloc(ex->arena, (size_t)(nk ? nk : 1), sizeof(int));
  if (!st->bkeys || !st->pkeys) return DIPPER_NOMEM;
  bool all_keys = true;
  for (int k = 0; k < nk && st->nkeys < 64; k++) {
    int lc = p->u.join.left_keys[k], rc = p->u.join.right_keys[k];
    const dp_type *lt = L->schema.cols[lc].type, *rt = R->schema.cols[rc].type;
    if (!dp_type_equal(lt, rt) || dp_phys_of(lt) != dp_phys_of(rt)) {
      all_keys = false;
      continue;
    }
    st->pkeys[st->nkeys] = st->pside == 0 ? lc : rc;
    st->bkeys[st->nkeys++] = st->pside == 0 ? rc : lc;
  }
  if (st->nkeys < nk) all_keys = false;
  st->residual = p->u.join.cond && !(all_keys && only_keys(p->u.join.cond, p, nl));
  /* left ++ right, what the condition reads */
  st->nleft = nl;
  st->nright = R->schema.ncols;
  st->both.ncols = nl + R->schema.ncols;
  st->both.cols = dp_arena_calloc(ex->arena, (size_t)(st->both.ncols ? st->both.ncols : 1),
                                  sizeof(dp_field));
  if (!st->both.cols) return DIPPER_NOMEM;
  memcpy(st->both.cols, L->schema.cols, (size_t)nl * sizeof(dp_field));
  memcpy(st->both.cols + nl, R->schema.cols, (size_t)R->schema.ncols * sizeof(dp_field));
  if (!two_streams) {
    int erc = setup_ekeys(op);
    if (erc) return erc;
  }
  st->vord = st->versions_stream && st->version_col >= 0 && st->nkeys > 0 && !st->residual;
  st->build = dp_batch_new(&p->inputs[st->bside]->schema, 0);
  st->probe = dp_batch_new(&p->inputs[st->pside]->schema, 0);
  st->cand = dp_batch_new(&st->both, 0);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  int vrc = st->cand && st->out ? setup_views(op) : DIPPER_NOMEM;
  if (vrc) return vrc;
  st->index = &st->own_index;
  st->hit_log = &st->build_log;
  dp_rowhash_init(st->index);
  if (st->versions_stream && !(st->pending = dp_batch_new(&L->schema, 0))) return DIPPER_NOMEM;
  if (!st->build || !st->probe || !st->cand || !st->out) return DIPPER_NOMEM;
  if (!two_streams && ex->query && ex->query->streaming && dp_exec_state_rocks(ex))
    dp_exec_note(ex, "the %s JOIN (line %d) keeps its state in memory: 'state.backend' = "
                 "'rocksdb' holds only the state of joins of two streams so far",
                 kname, (int)p->span.line);
  if (two_streams) {
    /* the stores of the two sides replace build and probe */
    dp_batch_free(st->build);
    dp_batch_free(st->probe);
    st->build = st->probe = NULL;
    return stream2_setup(op, kname);
  }
  return DIPPER_OK;
}

static int join_open(dp_op *op) {
  join_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  int rc = join_setup(op);
  if (rc) join_close(op);
  return rc;
}

static void join_close(dp_op *op) {
  join_state *st = op->state;
  if (!st) return;
  if (!st->stream2) {
    dp_batch_free(st->build);
    dp_batch_free(st->probe);
  }
  for (int s = 0; s < 2; s++) {
    dp_rowlog_free(&st->side[s].log);
    dp_batch_free(st->side[s].store);
    dp_batch_free(st->side[s].delta);
    dp_rowhash_free(&st->side[s].index);
    free(st->side[s].hit);
    free(st->side[s].dead);
    free(st->side[s].tix);
    free(st->side[s].runs);
    free(st->side[s].dhit);
    dp_state_ttl_free(&st->side[s].ttl);
  }
  rocks_close(st);
  dp_batch_free(st->cand);
  dp_batch_free(st->out);
  for (int c = 0; st->cand_fill && c < st->both.ncols; c++) dp_vector_free(st->cand_fill[c]);
  for (int c = 0; st->out_fill && c < op->plan->schema.ncols; c++) dp_vector_free(st->out_fill[c]);
  free(st->cand_fill);
  free(st->out_fill);
  dp_rowhash_free(&st->own_index);
  vfree_lists(st);
  free(st->vl);
  free(st->vkey);
  free(st->vdead);
  dp_due_free(&st->vdue);
  dp_vector_free(st->as_of);
  free_probe_keys(st);
  dp_batch_free(st->bkb);
  dp_batch_free(st->pending);
  dp_rowlog_free(&st->build_log);
  dp_rowlog_free(&st->probe_log);
  dp_rowlog_free(&st->pending_log);
  if (!st->stream2) free(st->build_hit);
  free(st->probe_hit);
  free(st->pi);
  free(st->bi);
  free(st);
  op->state = NULL;
}

/* ---- checkpoints ----
** Blob, version 1, by the way the join runs:
**   version:u8  shape:u8 (0 one build side, 1 two streams)
**   shape 0   done:u8  build (rows.h's row store)  build_hit (rows.h's
**             flags, one per build row when they are kept, else none)
**             probe rows (bounded: every left row so far; a stream's are
**             not kept, so none)  [temporal join of two streams: the left
**             rows waiting for the watermark]
**   shape 1   per side, left then right: the input columns it keeps
**             (count:uvar, each index:uvar, ascending)  the watermark of
**             its last eviction (svar)  store (those columns; compacted
**             first, so only live rows)  hit flags (outer sides); then,
**             when a side has a state TTL, 'T', a mask of the sides that
**             have one, and each such side's list of live rows by insertion
**             (op_join_side.c's dp_join_ttl_save; at the blob's end, so a
**             blob without it reads as before the TTL: every row counts as
**             inserted at the restart)
** The hash indexes are not written: a restore adds the rows again in
** order, which rebuilds each bucket chain as it was, so probes find their
** matches in the same order.  Nor are a side's time index and its expired
** rows: a restore sorts the rows by expiry again and marks dead those the
** last eviction's watermark had passed, which are the rows the writer had
** marked (a watermark never moves back).  A checkpoint whose sides kept
** other columns than this query reads (the plan above the join changed)
** is refused, naming the side.
** Delta (save_delta), the same version, after the same shape byte: every
** store above as its rows.h log (the base rows dropped, by base position:
** the two streams' eviction, the temporal join's released rows, a store
** cleared; the base rows whose matched flag was set, which needs no more
** bytes: a flag only goes from 0 to 1), then the rows appended since with
** their flags — shape 0: done:u8, build, probe, [pending]; shape 1: per
** side, left then right, the watermark of its last eviction (svar), then
** its log and rows as above, and the TTL lists whole as in the blob (about
** two bytes a row: a batch rewrites none of the old rows' times, but a
** delta of the list would need the order of the rows it drops).  Two streams: the stored rows keep their
** positions until a compaction, which the log records as runs of dropped
** rows; rows that expired since are found again from that watermark.  A
** batch that adds k rows costs O(k) bytes, one that compacts a few bytes
** more per run of dropped rows.
** Over RocksDB (shape 2, or 3 when a side has a state TTL), whole and
** delta alike:
**   version:u8  2|3  checkpoint:svar  left rows:svar  right rows:svar
**   shape 3: mask:u8 (bit s: side s has a TTL; bit 2 + s: it has a
**            rocks_from), then each side's rocks_from:svar by its bit
** (a side with a TTL now that had none in the blob, shape 2 included,
** counts its rows from the restore: rocks_from is the restore's time)
** where the checkpoint is the batch id of the RocksDB checkpoint written
** into <query folder>/rocksdb/join-<n>/<batch> (state_rocks.h; the driver
** purges those folders with the state files that name them).  Each one is
** whole (RocksDB hard-links the SST files it shares with the one before:
** incremental on disk), so a restore opens the last one it is given. */
#define JOIN_STATE_VERSION 2

static int save_side(dp_buf *out, const dp_batch *rows, const uint8_t *hit, bool flags) {
  int rc = dp_rows_save(out, rows);
  dp_flags_save(out, hit, flags ? rows->nrows : 0);
  return rc;
}

/* Rows, then their flags (when kept), into an empty store; *hit grows to fit. */
static int load_side(dp_rd *in, dp_batch *rows, uint8_t **hit, int64_t *cap, bool flags) {
  int rc = dp_rows_load(in, rows);
  if (!rc && flags) rc = dp_join_grow_hits(hit, cap, rows->nrows);
  if (!rc) rc = dp_flags_load(in, flags ? *hit : NULL, flags ? rows->nrows : 0);
  return rc;
}

static void mark_logs(join_state *st) {
  if (st->stream2) {
    for (int s = 0; s < 2; s++) dp_rowlog_mark(&st->side[s].log, st->side[s].store->nrows);
    return;
  }
  dp_rowlog_mark(&st->build_log, st->build->nrows);
  dp_rowlog_mark(&st->probe_log, st->probe->nrows);
  dp_rowlog_mark(&st->pending_log, st->pending ? st->pending->nrows : 0);
}

/* The blob of a join over RocksDB: a new checkpoint of it unless nothing
** changed since the last one or the restore. */
static int rocks_save(dp_op *op, dp_buf *out) {
  join_state *st = op->state;
  int64_t ck;
  int rc = dp_rocks_save(st->rocks, op->ex->batch_id, &ck);
  if (rc) return rc;
  unsigned mask = 0;
  for (int s = 0; s < 2; s++)
    if (st->rocks_ttl[s] > 0)
      mask |= (1u << s) | (st->rocks_from[s] != INT64_MIN ? 4u << s : 0u);
  dp_state_begin(out, JOIN_STATE_VERSION);
  dp_put_u8(out, mask ? 3 : 2);
  dp_put_svar(out, ck);
  dp_put_svar(out, st->rocks_rows[0]);
  dp_put_svar(out, st->rocks_rows[1]);
  if (mask) dp_put_u8(out, (uint8_t)mask);
  for (int s = 0; s < 2; s++)
    if (mask & (4u << s)) dp_put_svar(out, st->rocks_from[s]);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* Restore (whole or delta: each names a whole checkpoint): the instance is
** opened from it when the next batch runs. */
static int rocks_restore(dp_op *op, dp_rd *in, uint8_t shape) {
  join_state *st = op->state;
  int64_t ck = dp_get_svar(in), nl = dp_get_svar(in), nr = dp_get_svar(in), from[2];
  unsigned mask = shape == 3 ? dp_get_u8(in) : 0;
  for (int s = 0; s < 2; s++) from[s] = mask & (4u << s) ? dp_get_svar(in) : INT64_MIN;
  /* a rocks_from only with its side's TTL bit, and never INT64_MIN written */
  bool bad_mask = mask > 15 || (shape == 3 && mask == 0) || ((mask >> 2) & ~mask & 3) ||
                  (mask & 4 && from[0] == INT64_MIN) || (mask & 8 && from[1] == INT64_MIN);
  if (in->bad || bad_mask) return dp_state_corrupt(op, DIPPER_CORRUPT, "its state TTL");
  int rc = ck < 0 || nl < 0 || nr < 0 ? DIPPER_CORRUPT : dp_rocks_restore(st->rocks, ck);
  if (rc) return dp_state_corrupt(op, rc, "its rocksdb checkpoint");
  st->rocks_rows[0] = nl;
  st->rocks_rows[1] = nr;
  for (int s = 0; s < 2; s++)
    st->rocks_from[s] = st->rocks_ttl[s] <= 0 ? INT64_MIN
                        : mask & (1u << s)     ? from[s]
                                               : op->ex->batch_start_time;
  op->metrics.state_rows = nl + nr;
  return DIPPER_OK;
}

/* The shape byte of a blob against this join's: the backend is the
** checkpoint's (changing 'state.backend' needs a new checkpoint folder).
** Over RocksDB both 2 and 3 (a side's TTL section) are this join's. */
static int check_shape(dp_op *op, dp_rd *in, uint8_t *shape_out) {
  join_state *st = op->state;
  uint8_t shape = dp_get_u8(in), want = st->rocks ? 2 : st->stream2;
  *shape_out = shape;
  if (st->rocks && shape == 3) return in->bad ? dp_state_corrupt(op, DIPPER_CORRUPT, "its shape")
                                              : DIPPER_OK;
  if (in->bad || shape != want)
    return dp_state_corrupt(op, DIPPER_CORRUPT,
                            in->bad || shape == 0 || shape > 3 || !st->stream2 ||
                                    (shape >= 2) == (st->rocks != NULL)
                                ? "its shape"
                                : "its backend (the checkpoint was written with another "
                                  "'state.backend'; a new one needs a new checkpoint folder)");
  return DIPPER_OK;
}

static int join_save(dp_op *op, dp_buf *out) {
  join_state *st = op->state;
  if (st->rocks) return rocks_save(op, out);
  dp_state_begin(out, JOIN_STATE_VERSION);
  dp_put_u8(out, st->stream2);
  int rc = DIPPER_OK;
  if (st->stream2) {
    rc = dp_join_sides_ready(st);
    for (int s = 0; s < 2 && !rc; s++) rc = dp_join_side_save(op, out, s);
    if (!rc) dp_join_ttl_save(st, out);
  } else {
    dp_put_u8(out, st->done);
    rc = save_side(out, st->build, st->build_hit, st->mark_build);
    if (!rc) rc = dp_rows_save(out, st->probe);
    if (!rc && st->versions_stream) rc = dp_rows_save(out, st->pending);
  }
  if (!rc) mark_logs(st);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int join_restore(dp_op *op, dp_rd *in) {
  join_state *st = op->state;
  int rc = dp_state_check(op, in, JOIN_STATE_VERSION);
  if (rc) return rc;
  uint8_t shape;
  if ((rc = check_shape(op, in, &shape))) return rc;
  if (st->rocks) return rocks_restore(op, in, shape);
  if (st->stream2) {
    for (int s = 0; s < 2; s++)
      if ((rc = dp_join_side_load(op, in, s))) return rc;
    if ((rc = dp_join_ttl_load(op, in, op->ex->batch_start_time))) return rc;
    op->metrics.state_rows = dp_join_rows(st);
    mark_logs(st);
    return DIPPER_OK;
  }
  uint8_t done = dp_get_u8(in);
  if (in->bad || done > 1) return dp_state_corrupt(op, DIPPER_CORRUPT, "its progress");
  st->done = done;
  rc = load_side(in, st->build, &st->build_hit, &st->hit_cap, st->mark_build);
  if (!rc && !st->ekeys) rc = dp_rowhash_add_rows(st->index, st->build, st->bkeys, st->nkeys, 0);
  st->keys_stale = st->ekeys;
  st->vstale = st->vord;
  if (rc) return dp_state_corrupt(op, rc, "its build side");
  if ((rc = dp_rows_load(in, st->probe))) return dp_state_corrupt(op, rc, "its probe side");
  /* a stream's probe rows leave with their batch: only a bounded run keeps them */
  if (!st->bounded && st->probe->nrows > 0)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its probe side");
  if (st->versions_stream && (rc = dp_rows_load(in, st->pending)))
    return dp_state_corrupt(op, rc, "its waiting rows");
  op->metrics.state_rows = st->build->nrows + st->probe->nrows +
                           (st->pending ? st->pending->nrows : 0);
  mark_logs(st);
  return DIPPER_OK;
}

static int join_save_delta(dp_op *op, dp_buf *out) {
  join_state *st = op->state;
  if (st->rocks) return rocks_save(op, out);
  dp_state_begin(out, JOIN_STATE_VERSION);
  dp_put_u8(out, st->stream2);
  int rc = DIPPER_OK;
  if (st->stream2) {
    for (int s = 0; s < 2 && !rc; s++) rc = dp_join_side_save_delta(op, out, s);
    if (!rc) dp_join_ttl_save(st, out);
  } else {
    dp_put_u8(out, st->done);
    rc = dp_join_store_save_delta(out, st->build, st->build_hit, st->mark_build, &st->build_log);
    if (!rc) rc = dp_join_store_save_delta(out, st->probe, NULL, false, &st->probe_log);
    if (!rc && st->versions_stream)
      rc = dp_join_store_save_delta(out, st->pending, NULL, false, &st->pending_log);
  }
  if (!rc) mark_logs(st);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int join_restore_delta(dp_op *op, dp_rd *in) {
  join_state *st = op->state;
  int rc = dp_state_check(op, in, JOIN_STATE_VERSION);
  if (rc) return rc;
  uint8_t shape;
  if ((rc = check_shape(op, in, &shape))) return rc;
  if (st->rocks) return rocks_restore(op, in, shape);
  if (st->stream2) {
    for (int s = 0; s < 2; s++)
      if ((rc = dp_join_side_load_delta(op, in, s))) return rc;
    if ((rc = dp_join_ttl_load(op, in, op->ex->batch_start_time))) return rc;
    op->metrics.state_rows = dp_join_rows(st);
    mark_logs(st);
    return DIPPER_OK;
  }
  uint8_t done = dp_get_u8(in);
  if (in->bad || done > 1 || (st->done && !done))
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its progress");
  st->done = done;
  rc = dp_join_store_load_delta(in, &st->build, &st->build_hit, &st->hit_cap, st->mark_build,
                                st->ekeys ? NULL : st->index, st->bkeys, st->nkeys);
  st->keys_stale = st->ekeys;
  st->vstale = st->vord;
  if (rc) return dp_state_corrupt(op, rc, "the change of its build side");
  rc = dp_join_store_load_delta(in, &st->probe, NULL, NULL, false, NULL, NULL, 0);
  if (!rc && !st->bounded && st->probe->nrows > 0) rc = DIPPER_CORRUPT;
  if (rc) return dp_state_corrupt(op, rc, "the change of its probe side");
  if (st->versions_stream &&
      (rc = dp_join_store_load_delta(in, &st->pending, NULL, NULL, false, NULL, NULL, 0)))
    return dp_state_corrupt(op, rc, "the change of its waiting rows");
  op->metrics.state_rows = st->build->nrows + st->probe->nrows +
                           (st->pending ? st->pending->nrows : 0);
  mark_logs(st);
  return DIPPER_OK;
}

const dp_op_class dp_op_join = {"Join",          join_open,         join_next,
                                join_end_batch,  join_close,        join_save,
                                join_restore,    join_save_delta,   join_restore_delta};
