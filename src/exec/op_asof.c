/*
** op_asof.c — the as-of join (DP_P_ASOF_JOIN): each left row meets the one
** right row of its key nearest in time on the side the condition says.
**
**   l.t >= r.t   the latest right row at or before the left time (back)
**   l.t >  r.t   the latest strictly before
**   l.t <= r.t   the earliest at or after (forward)
**   l.t <  r.t   the earliest strictly after
**
** TOLERANCE d keeps only matches within d of the left time (|l.t - r.t| <=
** d, inclusive).  Right rows at the same time are tied: the one that
** arrived last wins (pandas' merge_asof takes the last too; Spark takes any
** one, docs/spark.md).  A NULL key or time never matches: a left row with
** one leaves padded (LEFT) or not at all (INNER); a right row with one is
** not kept.  Every left row leaves exactly once; the output is append-only.
**
** Three ways to run, fixed at open:
**   bounded      both inputs end: both sides are kept whole, and in the
**                last batch of the run the right rows are sorted by key and
**                time and every left row finds its match by binary search in
**                its key's run: O((left + right) log right);
**   stream-table the left side a stream, the right one bounded: the right
**                rows are kept, indexed by key, and each left row is matched
**                at once against the right rows read so far and leaves (the
**                driver reads a bounded input whole in the first micro-batch
**                unless it holds more than a batch's cap, as for op_join's
**                stream-static joins); nothing is late, nothing is dropped
**                (validate.c refuses a bounded left side against a stream);
**   two streams  the right rows are kept, indexed by key; a left row waits
**                until its match is known: looking back, once the watermark
**                reaches its time (every right row at or before it has come:
**                a later one would be late); looking forward, once the
**                watermark passes its best candidate so far, or its time +
**                tolerance (validate.c asks for a TOLERANCE forward).  Rows at
**                or before the late watermark (the previous batch's, exec.h)
**                are dropped and counted.  At the end of each batch the right
**                rows no row still to come can match are dropped: looking
**                back, those past the tolerance and those of a key that has a
**                later row at or before the watermark; looking forward,
**                those before the earliest waiting left row and the watermark.
**
** The key index is a chain per hash (rows.h's dp_rowhash).  Finding the
** right rows to drop is a pass over them, and dropping them a compaction
** that rebuilds the index: O(right rows kept).  So that a batch does not
** cost the whole state, the pass runs only once the store has grown by half
** since the last one left it (and the watermark has moved): each pass is
** paid for by the rows added since, O(1) a row.  Rows waiting for a pass
** change no answer — a match is the nearest row within range, and a row the
** rules drop is never that — and the store stays within half again of what
** the rules keep.  The waiting left rows are looked at every batch: those
** the watermark has not reached (back) or not passed with a match (forward).
** Checkpoints: the two stores and the pass's base.
*/
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "exec/exec.h"
#include "exec/rows.h"

typedef struct asof_state {
  bool bounded;        /* both inputs end */
  bool table;          /* the right side is bounded, the left a stream */
  bool back;           /* >=, >: the latest right row before */
  bool strict;         /* >, <: exact times do not match */
  bool outer;          /* LEFT: unmatched left rows leave padded */
  int lt, rt;          /* the time columns of the left and right rows */
  int64_t tol;         /* -1: none */
  dp_schema rkey_schema;
  dp_batch *right;     /* right rows kept */
  dp_rowhash index;    /* right row id -> hash of its keys */
  dp_batch *left;      /* left rows waiting for their match */
  dp_rowlog right_log, left_log; /* changes since the last checkpoint (rows.h) */
  int64_t *li, *ri;    /* the output: left row, matched right row or -1 */
  int64_t npairs, cap_pairs;
  int64_t *keep;       /* scratch: rows that stay */
  int64_t keep_cap;
  int64_t evicted_at;  /* the watermark of the last eviction pass */
  int64_t evict_base;  /* right rows it kept: the next pass waits for half as many more */
  bool drained;
  dp_batch *out;
} asof_state;

static int grow(int64_t **a, int64_t *cap, int64_t need) {
  return dp_grow(a, cap, need, sizeof **a, 1024);
}

static int add_pair(asof_state *st, int64_t l, int64_t r) {
  if (st->npairs == st->cap_pairs) {
    int64_t c1 = st->cap_pairs, c2 = st->cap_pairs; /* both grow alike */
    int rc = grow(&st->li, &c1, st->npairs + 1);
    if (!rc) rc = grow(&st->ri, &c2, st->npairs + 1);
    if (rc) return rc;
    st->cap_pairs = c1;
  }
  st->li[st->npairs] = l;
  st->ri[st->npairs++] = r;
  return DIPPER_OK;
}

static bool key_null(const dp_batch *b, int nkeys, const int *keys, int64_t r) {
  for (int k = 0; k < nkeys; k++)
    if (dp_vector_is_null(b->cols[keys[k]], r)) return true;
  return false;
}

static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

/* Does a right row at time tr match a left row at tl? */
static bool in_range(const asof_state *st, int64_t tl, int64_t tr) {
  if (st->back) {
    if (st->strict ? tr >= tl : tr > tl) return false;
    return st->tol < 0 || tl - tr <= st->tol;
  }
  if (st->strict ? tr <= tl : tr < tl) return false;
  return st->tol < 0 || tr - tl <= st->tol;
}

/* The best right row for left row l, or -1: walking its bucket newest
** first, a row replaces the best only when strictly nearer, so of tied rows
** the newest wins. */
static int64_t best_match(const dp_op *op, const asof_state *st, int64_t l) {
  const dp_plan *p = op->plan;
  int nk = p->u.asof.nkeys;
  const dp_vector *lk[64], *rk[64];
  for (int k = 0; k < nk; k++) {
    lk[k] = st->left->cols[p->u.asof.left_keys[k]];
    rk[k] = st->right->cols[p->u.asof.right_keys[k]];
  }
  int64_t tl = dp_vector_get_i64(st->left->cols[st->lt], l);
  uint64_t h = dp_rows_hash(lk, nk, l);
  const dp_vector *tv = st->right->cols[st->rt];
  int64_t best = -1, bt = 0;
  for (int64_t id = dp_rowhash_first(&st->index, h); id >= 0; id = dp_rowhash_next(&st->index, id)) {
    if (st->index.hashes[id] != h || !dp_rows_equal(lk, l, rk, id, nk)) continue;
    int64_t tr = dp_vector_get_i64(tv, id);
    if (!in_range(st, tl, tr)) continue;
    if (best < 0 || (st->back ? tr > bt : tr < bt)) {
      best = id;
      bt = tr;
    }
  }
  return best;
}

/* ---- bounded: the right rows sorted by key and time ---- */

typedef struct sorted_row { int64_t key, t, id; } sorted_row;

static int cmp_sorted(const void *a, const void *b) {
  const sorted_row *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* The match of every left row, into m[0..left rows): of the right rows of
** its key (a run of `s`, ordered by time then arrival) the last at or before
** (back) or the first at or after (forward) its time, the newest of a tie. */
static int sorted_matches(const dp_op *op, asof_state *st, int64_t *m) {
  const dp_plan *p = op->plan;
  int nk = p->u.asof.nkeys;
  int64_t nr = st->right->nrows, nl = st->left->nrows;
  dp_groups g;
  int rc = dp_groups_init(&g, &st->rkey_schema);
  sorted_row *s = rc ? NULL : malloc((size_t)(nr ? nr : 1) * sizeof *s);
  int64_t *start = NULL;
  if (!rc && !s) rc = DIPPER_NOMEM;
  const dp_vector *rk[64], *lk[64];
  for (int k = 0; k < nk; k++) {
    rk[k] = st->right->cols[p->u.asof.right_keys[k]];
    lk[k] = st->left->cols[p->u.asof.left_keys[k]];
  }
  for (int64_t r = 0; !rc && r < nr; r++) {
    bool fresh;
    s[r].id = r;
    s[r].t = dp_vector_get_i64(st->right->cols[st->rt], r);
    s[r].key = 0;
    if (nk > 0) rc = dp_groups_find_or_add(&g, rk, r, &s[r].key, &fresh);
  }
  int64_t ng = nk > 0 ? dp_groups_count(&g) : 1;
  if (!rc && !(start = calloc((size_t)ng + 1, sizeof *start))) rc = DIPPER_NOMEM;
  if (!rc) {
    qsort(s, (size_t)nr, sizeof *s, cmp_sorted);
    for (int64_t i = 0; i < nr; i++) start[s[i].key + 1]++;
    for (int64_t k = 0; k < ng; k++) start[k + 1] += start[k];
  }
  for (int64_t l = 0; !rc && l < nl; l++) {
    m[l] = -1;
    if (dp_vector_is_null(st->left->cols[st->lt], l) || key_null(st->left, nk, p->u.asof.left_keys, l))
      continue;
    int64_t key = nk > 0 ? dp_groups_find(&g, lk, l) : 0;
    if (key < 0) continue;
    int64_t tl = dp_vector_get_i64(st->left->cols[st->lt], l);
    int64_t lo = start[key], hi = start[key + 1];
    /* first position in [lo, hi) whose time is past the bound */
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      bool before = st->back != st->strict ? s[mid].t <= tl : s[mid].t < tl;
      if (before) lo = mid + 1;
      else hi = mid;
    }
    int64_t at = -1;
    if (st->back) {
      if (lo > start[key]) at = lo - 1;             /* the newest of the latest time */
    } else if (lo < start[key + 1]) {
      at = lo;
      while (at + 1 < start[key + 1] && s[at + 1].t == s[lo].t) at++; /* its newest */
    }
    if (at >= 0 && in_range(st, tl, s[at].t)) m[l] = s[at].id;
  }
  free(s);
  free(start);
  dp_groups_free(&g);
  return rc;
}

/* Is the match of waiting left row l known under watermark wm?  *m is it. */
static bool released(const dp_op *op, const asof_state *st, int64_t l, int64_t wm, int64_t *m) {
  const dp_plan *p = op->plan;
  *m = -1;
  if (dp_vector_is_null(st->left->cols[st->lt], l) ||
      key_null(st->left, p->u.asof.nkeys, p->u.asof.left_keys, l))
    return true;
  if (st->table) {
    *m = best_match(op, st, l);
    return true;
  }
  if (wm == DP_WATERMARK_NONE) return false;
  int64_t tl = dp_vector_get_i64(st->left->cols[st->lt], l);
  if (st->back) {
    if (tl > wm) return false;
    *m = best_match(op, st, l);
    return true;
  }
  *m = best_match(op, st, l);
  if (wm == DP_WATERMARK_END) return true;
  if (*m >= 0 && dp_vector_get_i64(st->right->cols[st->rt], *m) <= wm) return true;
  if (st->tol >= 0 && sat_add(tl, st->tol) <= wm) return true;
  *m = -1;
  return false;
}

static int64_t late_mark(const dp_op *op, const asof_state *st) {
  return st->bounded || st->table ? DP_WATERMARK_NONE : op->ex->late_watermark;
}

static int take_right(dp_op *op, const dp_batch *b) {
  asof_state *st = op->state;
  const dp_plan *p = op->plan;
  op->metrics.rows_in += b->nrows;
  int64_t late = late_mark(op, st), n = 0;
  int rc = grow(&st->keep, &st->keep_cap, b->nrows);
  for (int64_t r = 0; !rc && r < b->nrows; r++) {
    const dp_vector *tv = b->cols[st->rt];
    if (dp_vector_is_null(tv, r) || key_null(b, p->u.asof.nkeys, p->u.asof.right_keys, r)) continue;
    if (late != DP_WATERMARK_NONE && dp_vector_get_i64(tv, r) <= late) {
      op->metrics.late_dropped++;
      continue;
    }
    st->keep[n++] = r;
  }
  int64_t first = st->right->nrows;
  if (!rc && n) rc = dp_batch_take(st->right, b, st->keep, 0, n);
  if (!rc) rc = dp_rowhash_add_rows(&st->index, st->right, p->u.asof.right_keys, p->u.asof.nkeys, first);
  return rc;
}

static int take_left(dp_op *op, const dp_batch *b) {
  asof_state *st = op->state;
  op->metrics.rows_in += b->nrows;
  int64_t late = late_mark(op, st), n = 0;
  int rc = grow(&st->keep, &st->keep_cap, b->nrows);
  for (int64_t r = 0; !rc && r < b->nrows; r++) {
    const dp_vector *tv = b->cols[st->lt];
    if (late != DP_WATERMARK_NONE && !dp_vector_is_null(tv, r) && dp_vector_get_i64(tv, r) <= late) {
      op->metrics.late_dropped++;
      continue;
    }
    st->keep[n++] = r;
  }
  return rc || !n ? rc : dp_batch_take(st->left, b, st->keep, 0, n);
}

/* Match the left rows whose match is known, into the pairs; drop them. */
static int release(dp_op *op) {
  asof_state *st = op->state;
  dp_exec *ex = op->ex;
  int64_t wm = ex->final ? DP_WATERMARK_END : st->bounded ? DP_WATERMARK_NONE : ex->watermark;
  int64_t n = st->left->nrows, nkeep = 0, ndrop = 0, *all = NULL;
  int rc = grow(&st->keep, &st->keep_cap, n);
  if (rc) return rc;
  if (st->bounded && wm == DP_WATERMARK_END) {
    if (!(all = malloc((size_t)(n ? n : 1) * sizeof *all))) return DIPPER_NOMEM;
    if ((rc = sorted_matches(op, st, all))) {
      free(all);
      return rc;
    }
  }
  for (int64_t l = 0; l < n && !rc; l++) {
    int64_t m;
    if (all) {
      m = all[l];
    } else if (!released(op, st, l, wm, &m)) {
      st->keep[nkeep++] = l;
      continue;
    }
    ndrop++;
    if (m >= 0 || st->outer) rc = add_pair(st, l, m);
  }
  free(all);
  if (rc || ndrop == 0) return rc;
  /* the output first, from the rows as they are; then the store shrinks */
  if (st->npairs > 0) {
    int nl = st->left->ncols;
    for (int c = 0; c < nl && !rc; c++)
      rc = dp_vector_take(st->out->cols[c], st->left->cols[c], st->li, 0, st->npairs);
    for (int c = 0; c < st->right->ncols && !rc; c++)
      rc = dp_vector_take(st->out->cols[nl + c], st->right->cols[c], st->ri, 0, st->npairs);
    if (!rc) rc = dp_batch_sync(st->out);
    if (rc) return rc;
  }
  int64_t *gone = malloc((size_t)ndrop * sizeof *gone);
  if (!gone) return DIPPER_NOMEM;
  for (int64_t l = 0, k = 0, d = 0; l < n; l++) {
    if (k < nkeep && st->keep[k] == l) k++;
    else gone[d++] = l;
  }
  rc = dp_rowlog_drop(&st->left_log, gone, ndrop);
  free(gone);
  return rc ? rc : dp_rows_compact(&st->left, st->keep, nkeep);
}

static int asof_next(dp_op *op, dp_batch **out) {
  asof_state *st = op->state;
  *out = NULL;
  if (st->drained) return DIPPER_OK;
  int rc;
  if ((rc = dp_op_drain(op->children[1], take_right, op))) return rc;
  if ((rc = dp_op_drain(op->children[0], take_left, op))) return rc;
  st->drained = true;
  dp_batch_clear(st->out);
  st->npairs = 0;
  if ((rc = release(op))) return rc;
  op->metrics.state_rows = st->right->nrows + st->left->nrows;
  if (st->out->nrows == 0) return DIPPER_OK;
  op->metrics.rows_out += st->out->nrows;
  *out = st->out;
  return DIPPER_OK;
}

/* Looking back: per key, the latest right row at or before the watermark
** (ties: the newest); *latest[r] says whether row r is it. */
static int mark_latest(const dp_op *op, asof_state *st, int64_t wm, uint8_t *latest) {
  const dp_plan *p = op->plan;
  int64_t n = st->right->nrows;
  dp_groups g;
  int rc = dp_groups_init(&g, &st->rkey_schema);
  int64_t *best = rc ? NULL : malloc((size_t)(n ? n : 1) * sizeof *best);
  if (!rc && !best) rc = DIPPER_NOMEM;
  const dp_vector *kc[64];
  for (int k = 0; k < p->u.asof.nkeys; k++) kc[k] = st->right->cols[p->u.asof.right_keys[k]];
  const dp_vector *tv = st->right->cols[st->rt];
  memset(latest, 0, (size_t)n);
  if (best) best[0] = -1; /* the one group when there are no keys */
  for (int64_t r = 0; !rc && r < n; r++) {
    int64_t tr = dp_vector_get_i64(tv, r), id = 0;
    bool fresh = false;
    if (tr > wm) continue;
    if (p->u.asof.nkeys > 0 && (rc = dp_groups_find_or_add(&g, kc, r, &id, &fresh))) break;
    if (fresh || best[id] < 0 || tr >= dp_vector_get_i64(tv, best[id])) best[id] = r;
  }
  int64_t ng = p->u.asof.nkeys == 0 ? (n > 0 ? 1 : 0) : dp_groups_count(&g);
  for (int64_t id = 0; !rc && id < ng; id++)
    if (best[id] >= 0) latest[best[id]] = 1;
  free(best);
  dp_groups_free(&g);
  return rc;
}

/* Drop the right rows that no left row still waiting or still to come can
** match (the header's rules); the index is rebuilt when any go. */
static int evict(dp_op *op) {
  asof_state *st = op->state;
  int64_t wm = op->ex->watermark, n = st->right->nrows;
  if (st->bounded || st->table || wm == DP_WATERMARK_NONE || n == 0 || wm == st->evicted_at)
    return DIPPER_OK;
  if (n - st->evict_base < st->evict_base / 2) return DIPPER_OK; /* not yet paid for */
  const dp_vector *tv = st->right->cols[st->rt];
  uint8_t *latest = NULL;
  int64_t lower = wm; /* forward: right rows before it go */
  int rc = grow(&st->keep, &st->keep_cap, n);
  if (!rc && st->back) {
    latest = malloc((size_t)n);
    rc = latest ? mark_latest(op, st, wm, latest) : DIPPER_NOMEM;
  } else if (!rc) {
    lower = wm == INT64_MAX ? wm : wm + 1;
    const dp_vector *lv = st->left->cols[st->lt];
    for (int64_t l = 0; l < st->left->nrows; l++)
      if (!dp_vector_is_null(lv, l) && dp_vector_get_i64(lv, l) < lower) lower = dp_vector_get_i64(lv, l);
  }
  int64_t nkeep = 0;
  for (int64_t r = 0; !rc && r < n; r++) {
    int64_t tr = dp_vector_get_i64(tv, r);
    bool stay = st->back ? (tr > wm || latest[r]) && (st->tol < 0 || sat_add(tr, st->tol) > wm)
                         : tr >= lower;
    if (stay) st->keep[nkeep++] = r;
  }
  free(latest);
  if (rc || nkeep == n) {
    st->evicted_at = wm;
    st->evict_base = nkeep;
    return rc;
  }
  int64_t *gone = malloc((size_t)(n - nkeep) * sizeof *gone);
  if (!gone) return DIPPER_NOMEM;
  for (int64_t r = 0, k = 0, d = 0; r < n; r++) {
    if (k < nkeep && st->keep[k] == r) k++;
    else gone[d++] = r;
  }
  rc = dp_rowlog_drop(&st->right_log, gone, n - nkeep);
  free(gone);
  if (!rc) rc = dp_rows_compact(&st->right, st->keep, nkeep);
  if (rc) return rc;
  dp_rowhash_free(&st->index);
  const dp_plan *p = op->plan;
  rc = dp_rowhash_add_rows(&st->index, st->right, p->u.asof.right_keys, p->u.asof.nkeys, 0);
  st->evicted_at = wm;
  st->evict_base = nkeep;
  return rc;
}

static int asof_end_batch(dp_op *op) {
  asof_state *st = op->state;
  st->drained = false;
  int rc = evict(op);
  op->metrics.state_rows = st->right->nrows + st->left->nrows;
  return rc;
}

static void asof_close(dp_op *op);

static int asof_setup(dp_op *op) {
  const dp_plan *p = op->plan;
  asof_state *st = op->state;
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  if (p->u.asof.nkeys > 64)
    return dp_error(op->ex->diags, DIPPER_LIMIT, p->span, "an ASOF JOIN takes at most 64 keys");
  if (L->props.bounded && !R->props.bounded)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "the embedded engine runs an ASOF JOIN of a bounded left side only with a "
                    "bounded right side");
  st->bounded = L->props.bounded;
  st->table = !L->props.bounded && R->props.bounded;
  st->back = p->u.asof.op == DP_ASOF_GE || p->u.asof.op == DP_ASOF_GT;
  st->strict = p->u.asof.op == DP_ASOF_GT || p->u.asof.op == DP_ASOF_LT;
  st->outer = p->u.asof.kind == DP_J_LEFT;
  st->lt = p->u.asof.left_time;
  st->rt = p->u.asof.right_time;
  st->tol = p->u.asof.tolerance;
  st->evicted_at = DP_WATERMARK_NONE;
  int nk = p->u.asof.nkeys;
  st->rkey_schema.ncols = nk;
  st->rkey_schema.cols = dp_arena_calloc(op->ex->arena, (size_t)(nk + 1), sizeof(dp_field));
  if (!st->rkey_schema.cols) return DIPPER_NOMEM;
  for (int k = 0; k < nk; k++) st->rkey_schema.cols[k] = R->schema.cols[p->u.asof.right_keys[k]];
  dp_rowhash_init(&st->index);
  st->right = dp_batch_new(&R->schema, 0);
  st->left = dp_batch_new(&L->schema, 0);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  return st->right && st->left && st->out ? DIPPER_OK : DIPPER_NOMEM;
}

static int asof_open(dp_op *op) {
  asof_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  int rc = asof_setup(op);
  if (rc) asof_close(op);
  return rc;
}

static void asof_close(dp_op *op) {
  asof_state *st = op->state;
  if (!st) return;
  dp_rowhash_free(&st->index);
  dp_rowlog_free(&st->right_log);
  dp_rowlog_free(&st->left_log);
  dp_batch_free(st->right);
  dp_batch_free(st->left);
  dp_batch_free(st->out);
  free(st->li);
  free(st->ri);
  free(st->keep);
  free(st);
  op->state = NULL;
}

/* ---- checkpoints ----
** Blob, version 1:  version:u8  shape:u8 (0 streams, 1 bounded, 2 stream-table)  evicted_at:svar  evict_base:svar  right rows
** (rows.h's row store)  waiting left rows.  The index is not written: a
** restore adds the right rows again in order, which rebuilds it as it was.
** Delta (save_delta), the same version and header: per store, right then
** left, its rows.h log (the base rows dropped: evicted right rows,
** released left rows) and the rows appended since.  A batch that adds k
** rows and drops d costs O(k + d). */
#define ASOF_STATE_VERSION 1

static void mark_logs(asof_state *st) {
  dp_rowlog_mark(&st->right_log, st->right->nrows);
  dp_rowlog_mark(&st->left_log, st->left->nrows);
}

static void put_header(dp_buf *out, const asof_state *st) {
  dp_state_begin(out, ASOF_STATE_VERSION);
  dp_put_u8(out, (uint8_t)(st->bounded ? 1 : st->table ? 2 : 0));
  dp_put_svar(out, st->evicted_at);
  dp_put_svar(out, st->evict_base);
}

static int get_header(dp_op *op, dp_rd *in) {
  asof_state *st = op->state;
  int rc = dp_state_check(op, in, ASOF_STATE_VERSION);
  if (rc) return rc;
  uint8_t shape = dp_get_u8(in);
  int64_t at = dp_get_svar(in), base = dp_get_svar(in);
  if (in->bad || shape != (st->bounded ? 1 : st->table ? 2 : 0) || base < 0)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its shape");
  st->evicted_at = at;
  st->evict_base = base;
  return DIPPER_OK;
}

static int asof_save(dp_op *op, dp_buf *out) {
  asof_state *st = op->state;
  put_header(out, st);
  int rc = dp_rows_save(out, st->right);
  if (!rc) rc = dp_rows_save(out, st->left);
  if (!rc) mark_logs(st);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int asof_restore(dp_op *op, dp_rd *in) {
  asof_state *st = op->state;
  const dp_plan *p = op->plan;
  int rc = get_header(op, in);
  if (rc) return rc;
  rc = dp_rows_load(in, st->right);
  if (!rc) rc = dp_rowhash_add_rows(&st->index, st->right, p->u.asof.right_keys, p->u.asof.nkeys, 0);
  if (rc) return dp_state_corrupt(op, rc, "its right rows");
  if ((rc = dp_rows_load(in, st->left))) return dp_state_corrupt(op, rc, "its waiting left rows");
  op->metrics.state_rows = st->right->nrows + st->left->nrows;
  mark_logs(st);
  return DIPPER_OK;
}

static int save_store_delta(dp_buf *out, const dp_batch *rows, const dp_rowlog *log) {
  int64_t *at, nat;
  int rc = dp_rowlog_save(out, log, &at, &nat);
  free(at); /* no per-row data changes in place: nothing is dirty */
  return rc ? rc : dp_rows_save_from(out, rows, dp_rowlog_first_new(log));
}

/* Apply one store's delta: rows dropped, rows appended. */
static int load_store_delta(dp_rd *in, dp_batch **rows, bool *compacted) {
  dp_rowlog_delta d;
  int64_t n = (*rows)->nrows, *keep = NULL, nkeep = 0;
  int rc = dp_rowlog_load(in, n, &d);
  if (!rc && d.ndirty > 0) rc = DIPPER_CORRUPT;
  if (!rc) rc = dp_rowlog_keep(&d, n, &keep, &nkeep);
  *compacted = !rc && nkeep < n;
  if (*compacted) rc = dp_rows_compact(rows, keep, nkeep);
  if (!rc) rc = dp_rows_load(in, *rows);
  if (rc == DIPPER_CORRUPT) in->bad = true;
  free(keep);
  dp_rowlog_delta_free(&d);
  return rc;
}

static int asof_save_delta(dp_op *op, dp_buf *out) {
  asof_state *st = op->state;
  put_header(out, st);
  int rc = save_store_delta(out, st->right, &st->right_log);
  if (!rc) rc = save_store_delta(out, st->left, &st->left_log);
  if (!rc) mark_logs(st);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int asof_restore_delta(dp_op *op, dp_rd *in) {
  asof_state *st = op->state;
  const dp_plan *p = op->plan;
  int rc = get_header(op, in);
  if (rc) return rc;
  bool compacted;
  int64_t first = st->right->nrows;
  rc = load_store_delta(in, &st->right, &compacted);
  if (!rc && compacted) {
    dp_rowhash_free(&st->index);
    first = 0;
  }
  if (!rc) rc = dp_rowhash_add_rows(&st->index, st->right, p->u.asof.right_keys, p->u.asof.nkeys,
                                    compacted ? first : st->index.n);
  if (rc) return dp_state_corrupt(op, rc, "the change of its right rows");
  if ((rc = load_store_delta(in, &st->left, &compacted)))
    return dp_state_corrupt(op, rc, "the change of its waiting left rows");
  op->metrics.state_rows = st->right->nrows + st->left->nrows;
  mark_logs(st);
  return DIPPER_OK;
}

const dp_op_class dp_op_asof = {"AsOfJoin",      asof_open,        asof_next,
                                asof_end_batch,  asof_close,       asof_save,
                                asof_restore,    asof_save_delta,  asof_restore_delta};
