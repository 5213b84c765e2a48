/*
** op_over.c — window functions (DP_P_OVER): agg(..) OVER (PARTITION BY ..
** ORDER BY .. [ROWS|RANGE BETWEEN .. AND ..]) and ROW_NUMBER, RANK,
** DENSE_RANK, PERCENT_RANK, CUME_DIST, NTILE, LAG, LEAD, over bounded inputs.
**
** When the input has ended the rows are sorted by (partition, ORDER BY keys),
** stably, and each partition is walked once.  The output is the input row
** plus one column per call, partition after partition in that order.
**
** Frames (the binder's lower/upper: -1 unbounded, else PRECEDING offsets;
** upper 0 is CURRENT ROW):
**   no ORDER BY, no frame   the whole partition;
**   ORDER BY, no frame      RANGE UNBOUNDED PRECEDING .. CURRENT ROW: the
**                           rows up to the current one and its peers (ties);
**   ROWS n PRECEDING .. m   positions k-n .. k-m;
**   RANGE x PRECEDING .. y  rows whose key is within [key-x, key-y] (for a
**                           DESC key: [key+y, key+x]), peers included at 0.
** Aggregates reuse the aggregation's states (agg_func.h), so they mean the
** same as in GROUP BY; a frame that only grows is folded in incrementally, a
** sliding one is folded afresh for each row (on a stream, ROWS n and RANGE x
** PRECEDING .. CURRENT ROW slide instead: "sliding frames" below).
**
** Over a stream (ORDER BY an event-time column, ascending) rows wait until
** the watermark reaches them and are then computed with what earlier rows
** of their partition left behind: each row leaves once, with the frame it
** has when released.  Rows at or before the watermark on arrival are late
** (Spark's `<=`), dropped and counted, so a released row's time is above
** every time released before it: a partition's rows are released in order.
** A bounded input in streaming mode ordered by event time runs this way too.
** Ordered by processing time (PROCTIME()), rows are computed as they arrive.
**
** A stream's batch costs what it brings and releases, not what is held
** (docs/architecture.md, "OVER on a stream"):
**   - the pending rows are a store with an index by time (due_heap.h): a
**     release pops what the watermark passed, the store is compacted once
**     its released rows are half of it;
**   - each partition (`parts`, ids by first arrival) has a running state per
**     aggregate whose frame starts UNBOUNDED PRECEDING (agg_func.h's states,
**     one group per partition), the count of its rows released and of those
**     folded in, and the list of its kept rows: only those a later frame can
**     reach (n rows for ROWS n or LAG(.., n), x µs for RANGE x, and for a
**     frame ending m rows or µs back the rows not folded in yet);
**   - a release lays out only its rows and the kept rows of their
**     partitions, computes them as the bounded path does, and prunes: the
**     touched partitions by count and time, the others through an index of
**     the kept rows by time (for RANGE frames);
**   - with a sliding frame (ROWS n / RANGE x PRECEDING .. CURRENT ROW) each
**     partition has a window of two stacks of aggregate states, so that a
**     row costs O(1) merges whatever n or x, and its kept rows are not laid
**     out at all unless LAG or an aggregate that does not slide reads them;
**   - partitions are laid out by a rank (first release; a partition whose
**     kept rows all went, with a bounded frame, ranks anew), the order the
**     whole-history layout of earlier versions gave.
** With a state TTL ('table.exec.state.ttl', STATE_TTL) on a stream, a
** partition that received no row for that long, in processing time, forgets
** its state before the next batch's input (state_ttl.h): its next row is
** computed as the first of a new partition (a running SUM starts again).
** Rows still waiting for the watermark stay.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/agg_func.h"
#include "exec/due_heap.h"
#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/rows.h"
#include "exec/state_ttl.h"

/* A stream's partition: rows released, folded into the running states, its
** rank in the layout (-1: none yet) and its kept rows (positions in the
** history store, oldest first: keep[head..len)). */
typedef struct over_part {
  int64_t count, folded, rank;
  int64_t dense;  /* its peer groups released (DENSE_RANK) */
  int64_t nfold;  /* a release's scratch: the fold count its rows reach */
  int64_t ndense; /* a release's scratch: the peer groups its rows reach */
  int64_t stamp;  /* a release's scratch: the release that last touched it */
  bool dirty;     /* changed since the last checkpoint (listed in `dirty`) */
  int64_t *keep;
  int64_t head, len, cap;
  /* A sliding frame's window (two stacks, see "sliding frames" below): the
  ** partition's last wlen rows, all kept; the oldest wfront of them are the
  ** front stack.  Built (groups made): their groups and times are
  ** wg/wt[wh..wh+wlen), and wback the back stack's fold. */
  int64_t wlen, wfront;
  bool wbuilt;
  int64_t *wg, *wt, wh, wend, wcap, wback;
  int64_t hoff;   /* a release's scratch: its kept rows' start in the work batch (-1: absent) */
} over_part;

typedef struct over_state {
  dp_batch *rows;    /* bounded: every row; stream: the history store (kept rows and tombstones) */
  bool stream;       /* ordered by an event-time column, rows released by the watermark */
  int time_col;      /* stream: the input column of the first ORDER BY key */
  bool proctime;     /* stream: ordered by processing time: every row is ready at once */
  dp_batch *pending; /* stream: rows the watermark has not reached (and tombstones) */
  dp_rowlog rows_log, pending_log; /* bounded: their changes since the last checkpoint (rows.h) */
  bool drained, emitted;
  dp_batch *result;  /* input columns + calls, in output order */
  int64_t cursor;
  dp_batch *out;
  /* ---- stream ---- */
  dp_due_heap due;          /* pending rows by time */
  uint8_t *pgone;           /* per pending row: released */
  int64_t pgone_cap, npgone;
  uint8_t *hgone;           /* per history row: pruned */
  int64_t hgone_cap, nhgone;
  dp_due_heap hdue;         /* RANGE reach: (time, partition) per kept row */
  int64_t reach_rows;       /* rows a partition keeps for ROWS n / LAG(.., n) */
  int64_t reach_time;       /* µs back a RANGE frame reaches (-1: none) */
  bool running;             /* the frame starts UNBOUNDED PRECEDING */
  bool rank_resets;         /* a partition with no kept rows ranks anew (bounded frames) */
  int64_t horizon;          /* the least time a row still to come can have */
  int64_t next_rank;
  int64_t epoch;            /* releases so far (the partitions' stamps) */
  int64_t *dirty;           /* the partitions changed since the last checkpoint */
  int64_t ndirty, dirty_cap;
  int64_t base_parts;       /* partitions at the last checkpoint */
  bool renumbered;          /* partitions renumbered since (a TTL expiry): the next delta is whole */
  dp_agg_call *acalls;      /* per call (aggregates), the running states' calls */
  dp_agg_state *run;        /* per call: the running state (aggregates, running frame) */
  bool *skip;               /* per call: computed from its running state or its window */
  bool *ranked;             /* per call: ROW_NUMBER, RANK, DENSE_RANK (from the counts) */
  bool *apart;              /* per call: skip or ranked, computed apart from the layout */
  bool any_ranked;
  /* sliding frames (ROWS n / RANGE x PRECEDING .. CURRENT ROW) */
  bool *slide;              /* per call: computed from the partitions' windows */
  bool need_hist;           /* a call is computed over the kept rows laid out (LAG, an
                            ** aggregate that does not slide) */
  dp_agg_state *ws;         /* per sliding call: the windows' groups (ids of wfree/wnext) */
  int64_t *wfree, nwfree, wfree_cap, wnext, wtmp;
  over_part *pv;            /* per partition id */
  int64_t pv_cap;
  /* the partitions' keys by id, in order of first release; with a state TTL
  ** (ttl.ttl > 0) in order of their last row too (state_ttl.h) */
  dp_schema part_schema;
  dp_groups parts;
  dp_state_ttl ttl;
  uint8_t load_version;     /* the version of the blob being read (check_version) */
  bool sliding;             /* a call slides (partitions have windows) */
} over_state;

/* Evaluate the PARTITION BY expressions over b into pv[0..np) (the caller
** frees them with free_parts). */
static int eval_parts(dp_op *op, const dp_batch *b, dp_vector **pv) {
  const dp_plan *p = op->plan;
  for (int k = 0; k < p->u.over.npartition; k++) pv[k] = NULL;
  for (int k = 0; k < p->u.over.npartition; k++) {
    int rc = dp_eval(op->ex, p->u.over.partition[k], b, &pv[k]);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

static void free_parts(const dp_plan *p, dp_vector **pv) {
  for (int k = 0; k < p->u.over.npartition; k++) dp_vector_free(pv[k]);
}

static int reserve_parts(dp_op *op, int64_t n);

/* A batch's rows write their partitions (the TTL's clock restarts). */
static int touch_parts(dp_op *op, const dp_batch *b) {
  over_state *st = op->state;
  dp_vector *pv[64];
  int rc = eval_parts(op, b, pv);
  for (int64_t r = 0; !rc && r < b->nrows; r++) {
    int64_t g;
    bool fresh;
    rc = dp_groups_find_or_add(&st->parts, (const dp_vector *const *)pv, r, &g, &fresh);
    if (!rc) rc = dp_state_ttl_touch(&st->ttl, g, op->ex->batch_start_time);
  }
  free_parts(op->plan, pv);
  /* a partition known before its first release has its (empty) place:
  ** a checkpoint in between writes it */
  return rc ? rc : reserve_parts(op, dp_groups_count(&st->parts));
}

/* ---- a stream's stores ---- */

static int win_trim(dp_op *op, over_part *P);
static int win_unbuild(over_state *st, over_part *P);

static bool is_agg(const dp_over_call *c) { return c->fn->kind == DP_FN_AGGREGATE; }

/* ROW_NUMBER, RANK, DENSE_RANK: on a stream, numbered from the partitions' counts. */
static bool is_ranked(const dp_over_call *c) {
  int id = c->fn->id;
  return c->fn->kind == DP_FN_WINDOW && (id == DP_F_ROW_NUMBER || id == DP_F_RANK || id == DP_F_DENSE_RANK);
}

/* Room for partitions 0..n-1 (new ones empty, unranked) and their running
** states. */
static int reserve_pv(over_state *st, int64_t n) {
  if (n > st->pv_cap) {
    int64_t cap = st->pv_cap ? st->pv_cap : 16;
    while (cap < n) cap *= 2;
    over_part *v = realloc(st->pv, (size_t)cap * sizeof *v);
    if (!v) return DIPPER_NOMEM;
    memset(v + st->pv_cap, 0, (size_t)(cap - st->pv_cap) * sizeof *v);
    for (int64_t g = st->pv_cap; g < cap; g++) v[g].rank = -1;
    st->pv = v;
    st->pv_cap = cap;
  }
  return DIPPER_OK;
}

static int reserve_parts(dp_op *op, int64_t n) {
  over_state *st = op->state;
  int rc = reserve_pv(st, n);
  if (rc) return rc;
  for (int c = 0; st->run && c < op->plan->u.over.ncalls; c++)
    if (is_agg(&op->plan->u.over.calls[c])) {
      if ((rc = dp_agg_state_reserve(&st->run[c], n))) return rc;
    }
  return DIPPER_OK;
}

/* Grow a flag array to hold index n-1. */
static int grow_flags(uint8_t **f, int64_t *cap, int64_t n) {
  if (n <= *cap) return DIPPER_OK;
  int64_t c = *cap ? *cap : 1024;
  while (c < n) c *= 2;
  uint8_t *v = realloc(*f, (size_t)c);
  if (!v) return DIPPER_NOMEM;
  memset(v + *cap, 0, (size_t)(c - *cap));
  *f = v;
  *cap = c;
  return DIPPER_OK;
}

/* Append vals[0..narr) to the parallel arrays arr[0..narr) holding
** [*head, *len) of *cap entries: moved down to 0 when full with room at the
** front, else grown twice. */
static int deque_push(int64_t **arr, int narr, int64_t *head, int64_t *len, int64_t *cap,
                      const int64_t *vals) {
  if (*head > 0 && *len == *cap) {
    for (int a = 0; a < narr; a++)
      memmove(arr[a], arr[a] + *head, (size_t)(*len - *head) * sizeof **arr);
    *len -= *head;
    *head = 0;
  }
  if (*len == *cap) {
    int64_t c = *cap ? *cap * 2 : 4;
    for (int a = 0; a < narr; a++) {
      int64_t *v = realloc(arr[a], (size_t)c * sizeof *v);
      if (!v) return DIPPER_NOMEM;
      arr[a] = v;
    }
    *cap = c;
  }
  for (int a = 0; a < narr; a++) arr[a][*len] = vals[a];
  (*len)++;
  return DIPPER_OK;
}

static int part_push(over_part *P, int64_t pos) {
  return deque_push(&P->keep, 1, &P->head, &P->len, &P->cap, &pos);
}

static int64_t live_of(const over_part *P) { return P->len - P->head; }

/* Append x to the list *v of *n entries (room for *cap), grown twice. */
static int push_i64(int64_t **v, int64_t *n, int64_t *cap, int64_t x) {
  if (*n == *cap) {
    int64_t c = *cap ? *cap * 2 : 64;
    int64_t *w = realloc(*v, (size_t)c * sizeof *w);
    if (!w) return DIPPER_NOMEM;
    *v = w;
    *cap = c;
  }
  (*v)[(*n)++] = x;
  return DIPPER_OK;
}

/* Partition g changed: the next delta writes it. */
static int mark_dirty(over_state *st, int64_t g) {
  if (st->pv[g].dirty) return DIPPER_OK;
  int rc = push_i64(&st->dirty, &st->ndirty, &st->dirty_cap, g);
  if (!rc) st->pv[g].dirty = true;
  return rc;
}

/* A checkpoint was written or read: the base of the next delta. */
static void mark_base(over_state *st) {
  for (int64_t i = 0; i < st->ndirty; i++)
    if (st->dirty[i] < st->pv_cap) st->pv[st->dirty[i]].dirty = false;
  st->ndirty = 0;
  st->base_parts = dp_groups_count(&st->parts);
  st->renumbered = false;
}

/* The pending store without its released rows, once they are half of it
** (and 1,024 or more): O(n) once per n/2 rows released, the index rebuilt
** from the survivors in the same pass. */
static int compact_pending(over_state *st, bool force) {
  int64_t n = st->pending->nrows;
  if (st->npgone == 0 || (!force && (st->npgone < 1024 || 2 * st->npgone < n))) return DIPPER_OK;
  int64_t *keep = malloc((size_t)(n ? n : 1) * sizeof *keep), nk = 0;
  if (!keep) return DIPPER_NOMEM;
  for (int64_t r = 0; r < n; r++)
    if (!st->pgone[r]) keep[nk++] = r;
  int rc = dp_rows_compact(&st->pending, keep, nk);
  free(keep);
  if (rc) return rc;
  memset(st->pgone, 0, (size_t)st->pgone_cap);
  st->npgone = 0;
  st->due.n = 0;
  if ((rc = dp_due_reserve(&st->due, nk))) return rc;
  const dp_vector *t = st->pending->cols[st->time_col];
  for (int64_t r = 0; r < nk; r++) st->due.v[r] = (dp_due){dp_vector_get_i64(t, r), r};
  st->due.n = nk;
  dp_due_heapify(&st->due);
  return DIPPER_OK;
}

/* The time index of the kept rows (RANGE reach), made again from the
** partitions' lists (after a renumbering of partitions or rows). */
static int rebuild_hdue(over_state *st, int64_t nparts) {
  st->hdue.n = 0;
  if (st->reach_time < 0) return DIPPER_OK;
  const dp_vector *t = st->rows->cols[st->time_col];
  for (int64_t g = 0; g < nparts; g++)
    for (int64_t i = st->pv[g].head; i < st->pv[g].len; i++) {
      int rc = dp_due_push(&st->hdue, dp_vector_get_i64(t, st->pv[g].keep[i]), g);
      if (rc) return rc;
    }
  return DIPPER_OK;
}

/* The history store without its pruned rows, once they are half of it (and
** 1,024 or more); the partitions' lists follow. */
static int compact_hist(over_state *st, int64_t nparts, bool force) {
  int64_t n = st->rows->nrows;
  if (st->nhgone == 0 || (!force && (st->nhgone < 1024 || 2 * st->nhgone < n))) return DIPPER_OK;
  int64_t *keep = malloc((size_t)(n ? n : 1) * sizeof *keep), nk = 0;
  int64_t *remap = malloc((size_t)(n ? n : 1) * sizeof *remap);
  int rc = keep && remap ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t r = 0; !rc && r < n; r++) {
    remap[r] = st->hgone[r] ? -1 : nk;
    if (!st->hgone[r]) keep[nk++] = r;
  }
  if (!rc) rc = dp_rows_compact(&st->rows, keep, nk);
  for (int64_t g = 0; !rc && g < nparts; g++) {
    over_part *P = &st->pv[g];
    int64_t m = 0;
    for (int64_t i = P->head; i < P->len; i++) P->keep[m++] = remap[P->keep[i]];
    P->head = 0;
    P->len = m;
  }
  if (!rc) {
    memset(st->hgone, 0, (size_t)st->hgone_cap);
    st->nhgone = 0;
  }
  free(keep);
  free(remap);
  return rc;
}

/* Prune partition g's oldest kept rows that no later frame can reach: past
** the rows a ROWS frame or LAG reaches, before the time a RANGE frame
** reaches (below the horizon by more than its offset), folded into the
** running states already. */
static int prune_part(dp_op *op, int64_t g) {
  over_state *st = op->state;
  over_part *P = &st->pv[g];
  int64_t head0 = P->head;
  const dp_vector *t = st->rows->cols[st->time_col];
  while (P->head < P->len) {
    int64_t live = P->len - P->head, abs = P->count - live, pos = P->keep[P->head];
    if (live <= st->reach_rows || abs >= P->folded) break;
    if (st->reach_time >= 0 && st->horizon != DP_WATERMARK_END &&
        !(dp_vector_get_i64(t, pos) < st->horizon - st->reach_time))
      break;
    st->hgone[pos] = 1;
    st->nhgone++;
    P->head++;
  }
  if (P->head == head0) return DIPPER_OK;
  int rc = win_trim(op, P);
  return rc ? rc : mark_dirty(st, g);
}

/* Before the batch's input: the partitions idle for the TTL forget their
** state (found at the cost of what expires; a renumbering of the partitions,
** O(partitions + kept rows), only in a batch where one expired). */
static int expire_parts(dp_op *op) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  int64_t *keep = NULL, nkeep = 0, *drop = NULL, ndrop = 0, ng = dp_groups_count(&st->parts);
  int rc = dp_state_ttl_expire_compact(&st->ttl, op->ex->batch_start_time, ng, &keep, &nkeep,
                                       &drop, &ndrop);
  if (rc || ndrop == 0) {
    free(keep);
    free(drop);
    return rc;
  }
  int64_t *remap = malloc((size_t)(ng ? ng : 1) * sizeof *remap);
  if (!remap) rc = DIPPER_NOMEM;
  if (!rc) rc = reserve_parts(op, ng);
  for (int64_t g = 0; !rc && g < ng; g++) remap[g] = -1;
  for (int64_t k = 0; !rc && k < nkeep; k++) remap[keep[k]] = k;
  for (int64_t k = 0; !rc && k < ndrop; k++) {
    over_part *P = &st->pv[drop[k]];
    for (int64_t i = P->head; i < P->len; i++) st->hgone[P->keep[i]] = 1;
    st->nhgone += P->len - P->head;
    rc = win_unbuild(st, P);
    free(P->keep);
    free(P->wg);
    free(P->wt);
    memset(P, 0, sizeof *P);
    P->rank = -1;
  }
  for (int64_t k = 0; !rc && k < nkeep; k++) {
    if (keep[k] == k) continue;
    st->pv[k] = st->pv[keep[k]];
    memset(&st->pv[keep[k]], 0, sizeof st->pv[keep[k]]);
    st->pv[keep[k]].rank = -1;
  }
  for (int c = 0; !rc && st->run && c < p->u.over.ncalls; c++)
    if (is_agg(&p->u.over.calls[c])) rc = dp_agg_state_compact(&st->run[c], remap, ng, nkeep);
  if (!rc) rc = dp_groups_compact(&st->parts, keep, nkeep);
  for (int64_t g = 0; g < st->pv_cap; g++) st->pv[g].dirty = false;
  st->ndirty = 0;
  st->renumbered = true; /* the next delta is the whole state */
  if (!rc) rc = compact_hist(st, nkeep, false);
  if (!rc) rc = rebuild_hdue(st, nkeep);
  free(remap);
  free(keep);
  free(drop);
  return rc;
}

static int keep_rows(dp_op *op, const dp_batch *b) {
  over_state *st = op->state;
  op->metrics.rows_in += b->nrows;
  if (st->ttl.ttl > 0) {
    int rc = touch_parts(op, b);
    if (rc) return rc;
  }
  if (!st->stream) return dp_rows_append(st->rows, b);
  /* Rows at or before the late watermark (the previous batch's) may come
  ** after rows of their time were emitted: late, dropped and counted
  ** (Spark's rule: late when event time <= watermark). */
  int64_t wm = st->proctime ? DP_WATERMARK_NONE : op->ex->late_watermark;
  const dp_vector *t = b->cols[st->time_col];
  int64_t *keep = malloc((size_t)(b->nrows ? b->nrows : 1) * sizeof *keep);
  if (!keep) return DIPPER_NOMEM;
  int64_t n = 0, at = st->pending->nrows;
  for (int64_t r = 0; r < b->nrows; r++) {
    if (wm != DP_WATERMARK_NONE && (dp_vector_is_null(t, r) || dp_vector_get_i64(t, r) <= wm)) {
      op->metrics.late_dropped++;
      continue;
    }
    keep[n++] = r;
  }
  int rc = dp_batch_take(st->pending, b, keep, 0, n);
  if (!rc) rc = grow_flags(&st->pgone, &st->pgone_cap, st->pending->nrows);
  if (!rc) rc = dp_due_reserve(&st->due, st->due.n + n);
  const dp_vector *pt = st->pending->cols[st->time_col];
  for (int64_t r = at; !rc && r < st->pending->nrows; r++)
    rc = dp_due_push(&st->due, dp_vector_get_i64(pt, r), r);
  free(keep);
  return rc;
}

/* The sorted layout every call walks. */
typedef struct layout {
  int64_t n;
  int64_t *ord;      /* positions -> rows */
  int64_t *pend;     /* per position: end of its partition (exclusive) */
  int64_t *pstart;   /* per position: start of its partition */
  int64_t *gstart, *gend; /* per position: its peer group [start, end) */
  dp_rows_order keys;  /* the ORDER BY keys (for peers and RANGE) */
} layout;

/* A RANGE key as a number comparable with the frame offsets (µs for time). */
static double range_key(const dp_vector *v, int64_t row) {
  switch (v->phys) {
  case DP_PHYS_F32: case DP_PHYS_F64: return dp_vector_get_f64(v, row);
  case DP_PHYS_D128: {
    double x = (double)dp_vector_get_dec(v, row);
    for (int s = 0; s < v->type->scale; s++) x /= 10;
    return x;
  }
  default: {
    int64_t x = dp_vector_get_i64(v, row);
    return v->type->kind == DP_T_DATE ? (double)x * (double)DP_MICROS_PER_DAY : (double)x;
  }
  }
}

/* The frame of position k: [*fs, *fe) in positions. */
static void frame_of(const dp_plan *p, const layout *L, int64_t k, int64_t *fs, int64_t *fe) {
  int64_t ps = L->pstart[k], pe = L->pend[k];
  const struct over_frame {
    bool has_frame, rows;
    int norder;
    int64_t lower, upper;
  } f = {p->u.over.has_frame, p->u.over.rows, p->u.over.norder, p->u.over.lower, p->u.over.upper},
    *o = &f;
  if (!o->has_frame) {
    *fs = ps;
    *fe = o->norder == 0 ? pe : L->gend[k];
    return;
  }
  if (o->rows) {
    *fs = o->lower < 0 ? ps : (k - o->lower > ps ? k - o->lower : ps);
    *fe = k - o->upper + 1;
    if (*fe < *fs) *fe = *fs;
    return;
  }
  const dp_vector *kv = L->keys.cols[0];
  int64_t row = L->ord[k];
  if (dp_vector_is_null(kv, row) || (o->lower < 0 && o->upper == 0)) {
    *fs = o->lower < 0 ? ps : L->gstart[k];
    *fe = L->gend[k];
    return;
  }
  double key = range_key(kv, row), sign = L->keys.desc[0] ? -1.0 : 1.0;
  /* distance of position j "before" k: (key - key_j) * sign, NULLs outside */
  int64_t s = k, e = L->gend[k];
  if (o->lower < 0) {
    s = ps;
  } else {
    while (s > ps && !dp_vector_is_null(kv, L->ord[s - 1]) &&
           (key - range_key(kv, L->ord[s - 1])) * sign <= (double)o->lower)
      s--;
  }
  if (o->upper > 0) {
    e = k + 1;
    while (e > s && (key - range_key(kv, L->ord[e - 1])) * sign < (double)o->upper) e--;
  }
  *fs = s;
  *fe = e > s ? e : s;
}

/* One aggregate call over every position's frame, appended to res. */
static int run_agg(dp_op *op, const dp_batch *in, const layout *L, const dp_over_call *call,
                   dp_vector *res) {
  dp_exec *ex = op->ex;
  dp_agg_call ac = {call->fn, call->nargs, call->args, false, call->filter, call->type, call->span};
  dp_agg_state s;
  memset(&s, 0, sizeof s);
  dp_vector *args[4] = {NULL, NULL, NULL, NULL};
  dp_vector *mask = NULL;
  int64_t *gids = calloc((size_t)(in->nrows ? in->nrows : 1), sizeof *gids);
  int64_t *rows = malloc((size_t)(in->nrows ? in->nrows : 1) * sizeof *rows);
  int rc = gids && rows ? dp_agg_state_init(&s, &ac) : DIPPER_NOMEM;
  s.diags = ex->diags; /* a C aggregate's failure message goes there */
  if (!rc) rc = dp_agg_state_reserve(&s, 1);
  for (int a = 0; !rc && a < call->nargs && a < 4; a++) rc = dp_eval(ex, call->args[a], in, &args[a]);
  if (!rc && call->filter) rc = dp_eval(ex, call->filter, in, &mask);
  int64_t cur_s = -1, cur_e = -1; /* the frame folded into group 0 */
  int64_t g0 = 0;
  for (int64_t k = 0; !rc && k < L->n; k++) {
    int64_t fs, fe;
    frame_of(op->plan, L, k, &fs, &fe);
    int64_t from;
    if (fs == cur_s && fe >= cur_e) {
      from = cur_e; /* the frame grew: fold in the new rows only */
    } else {
      dp_agg_state_reset(&s, 0);
      from = fs;
    }
    int64_t nr = 0;
    for (int64_t j = from; j < fe; j++) {
      int64_t r = L->ord[j];
      if (mask && (dp_vector_is_null(mask, r) || !dp_vector_get_bool(mask, r))) continue;
      rows[nr++] = r;
    }
    if (nr > 0) rc = dp_agg_state_update(&s, (const dp_vector *const *)args, gids, rows, nr);
    cur_s = fs;
    cur_e = fe;
    if (!rc) rc = dp_agg_state_finish(&s, &g0, 1, res);
  }
  for (int a = 0; a < 4; a++) dp_vector_free(args[a]);
  dp_vector_free(mask);
  dp_agg_state_free(&s);
  free(gids);
  free(rows);
  return rc;
}

/* A constant integer argument (NTILE's buckets, LAG's offset) at row 0. */
static int const_int(dp_op *op, const dp_expr *e, int64_t dflt, int64_t *out) {
  *out = dflt;
  if (!e) return DIPPER_OK;
  dp_schema none = {0, NULL};
  dp_batch one = {&none, 0, NULL, 1};
  dp_vector *v = NULL;
  int rc = dp_eval(op->ex, e, &one, &v);
  if (rc) return rc;
  if (v->length > 0 && !dp_vector_is_null(v, 0)) *out = dp_vector_get_i64(v, 0);
  dp_vector_free(v);
  return DIPPER_OK;
}

/* Ranking and offset functions, appended to res. */
static int run_window_fn(dp_op *op, const dp_batch *in, const layout *L, const dp_over_call *call,
                         dp_vector *res) {
  int id = call->fn->id;
  int rc = DIPPER_OK;
  if (id == DP_F_LAG || id == DP_F_LEAD) {
    int64_t off;
    if ((rc = const_int(op, call->nargs > 1 ? call->args[1] : NULL, 1, &off))) return rc;
    dp_vector *arg = NULL, *dflt = NULL;
    rc = dp_eval(op->ex, call->args[0], in, &arg);
    if (!rc && call->nargs > 2) rc = dp_eval(op->ex, call->args[2], in, &dflt);
    for (int64_t k = 0; !rc && k < L->n; k++) {
      int64_t j = id == DP_F_LAG ? k - off : k + off;
      if (j >= L->pstart[k] && j < L->pend[k]) {
        int64_t r = L->ord[j];
        rc = dp_vector_take(res, arg, &r, 0, 1);
      } else if (dflt) {
        int64_t r = L->ord[k];
        rc = dp_vector_take(res, dflt, &r, 0, 1);
      } else {
        rc = dp_vector_append_null(res);
      }
    }
    dp_vector_free(arg);
    dp_vector_free(dflt);
    return rc;
  }
  int64_t buckets = 1;
  if (id == DP_F_NTILE) {
    if ((rc = const_int(op, call->args[0], 1, &buckets))) return rc;
    if (buckets <= 0)
      return dp_error(op->ex->diags, DIPPER_DATA, call->span,
                      "NTILE needs a positive number of buckets, not %lld", (long long)buckets);
  }
  int64_t dense = 0;
  for (int64_t k = 0; !rc && k < L->n; k++) {
    int64_t ps = L->pstart[k], n = L->pend[k] - ps, pos = k - ps;
    if (k == ps) dense = 0;
    if (k == L->gstart[k]) dense++;
    int64_t rank = L->gstart[k] - ps + 1;
    switch (id) {
    case DP_F_ROW_NUMBER: rc = dp_vector_append_i64(res, pos + 1); break;
    case DP_F_RANK: rc = dp_vector_append_i64(res, rank); break;
    case DP_F_DENSE_RANK: rc = dp_vector_append_i64(res, dense); break;
    case DP_F_PERCENT_RANK:
      rc = dp_vector_append_f64(res, n > 1 ? (double)(rank - 1) / (double)(n - 1) : 0.0);
      break;
    case DP_F_CUME_DIST: rc = dp_vector_append_f64(res, (double)(L->gend[k] - ps) / (double)n); break;
    case DP_F_NTILE: {
      /* The first n % buckets buckets hold one row more. */
      int64_t size = n / buckets, rem = n % buckets, big = rem * (size + 1), b;
      b = pos < big ? pos / (size + 1) + 1 : (size ? (pos - big) / size : 0) + rem + 1;
      rc = dp_vector_append_i64(res, b);
      break;
    }
    default:
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, call->span,
                      "the embedded engine does not run %s(..) OVER (..) yet", call->fn->name);
    }
  }
  return rc;
}

/* The layout of `in`: sorted by (partition, ORDER BY keys), stably; the
** partitions numbered by first appearance in `in`, or (rank not NULL) by
** rank[row]. */
static int build_layout(dp_op *op, const dp_batch *in, const int64_t *rank, layout *L) {
  const dp_plan *p = op->plan;
  int64_t n = in->nrows;
  memset(L, 0, sizeof *L);
  L->n = n;
  size_t sz = (size_t)(n ? n : 1) * sizeof(int64_t);
  L->ord = malloc(sz);
  L->pstart = malloc(sz);
  L->pend = malloc(sz);
  L->gstart = malloc(sz);
  L->gend = malloc(sz);
  if (!L->ord || !L->pstart || !L->pend || !L->gstart || !L->gend) return DIPPER_NOMEM;
  /* Partition ids, as a first sort key. */
  int np = p->u.over.npartition;
  dp_vector *pv[64] = {NULL};
  dp_vector *pid = dp_vector_new(dp_type_of(DP_T_BIGINT), n);
  dp_schema ks = {np, dp_arena_calloc(op->ex->batch_arena, (size_t)np + 1, sizeof(dp_field))};
  dp_groups parts;
  memset(&parts, 0, sizeof parts);
  int rc = pid && ks.cols ? DIPPER_OK : DIPPER_NOMEM;
  if (!rc && np > 64) rc = DIPPER_LIMIT;
  if (rank) np = 0;
  for (int64_t r = 0; !rc && rank && r < n; r++) rc = dp_vector_append_i64(pid, rank[r]);
  for (int k = 0; !rc && k < np; k++) {
    rc = dp_eval(op->ex, p->u.over.partition[k], in, &pv[k]);
    if (!rc) ks.cols[k] = (dp_field){"p", pv[k]->type};
  }
  if (!rc && !rank) rc = dp_groups_init(&parts, &ks);
  for (int64_t r = 0; !rc && !rank && r < n; r++) {
    int64_t g = 0;
    bool fresh;
    if (np > 0) rc = dp_groups_find_or_add(&parts, (const dp_vector *const *)pv, r, &g, &fresh);
    if (!rc) rc = dp_vector_append_i64(pid, g);
  }
  dp_rows_order o;
  memset(&o, 0, sizeof o);
  if (!rc) rc = dp_rows_order_eval(op->ex, p->u.over.order, p->u.over.norder, in, &L->keys);
  /* (partition, keys...) */
  const dp_vector **cols = calloc((size_t)p->u.over.norder + 1, sizeof *cols);
  bool *desc = calloc((size_t)p->u.over.norder + 1, sizeof *desc);
  bool *nf = calloc((size_t)p->u.over.norder + 1, sizeof *nf);
  if (!rc && (!cols || !desc || !nf)) rc = DIPPER_NOMEM;
  if (!rc) {
    cols[0] = pid;
    for (int k = 0; k < p->u.over.norder; k++) {
      cols[k + 1] = L->keys.cols[k];
      desc[k + 1] = L->keys.desc[k];
      nf[k + 1] = L->keys.nulls_first[k];
    }
    o = (dp_rows_order){p->u.over.norder + 1, cols, desc, nf};
    for (int64_t r = 0; r < n; r++) L->ord[r] = r;
    rc = dp_rows_sort(L->ord, n, &o);
  }
  if (!rc) {
    for (int64_t s = 0; s < n;) {
      int64_t e = s + 1;
      while (e < n && dp_vector_get_i64(pid, L->ord[e]) == dp_vector_get_i64(pid, L->ord[s])) e++;
      for (int64_t k = s; k < e;) {
        int64_t ge = k + 1;
        while (ge < e && dp_rows_order_compare(&L->keys, L->ord[k], L->ord[ge]) == 0) ge++;
        for (int64_t j = k; j < ge; j++) {
          L->pstart[j] = s;
          L->pend[j] = e;
          L->gstart[j] = k;
          L->gend[j] = ge;
        }
        k = ge;
      }
      s = e;
    }
  }
  free(cols);
  free(desc);
  free(nf);
  for (int k = 0; k < np && k < 64; k++) dp_vector_free(pv[k]);
  dp_vector_free(pid);
  dp_groups_free(&parts);
  return rc;
}

static void free_layout(const dp_plan *p, layout *L) {
  free(L->ord);
  free(L->pstart);
  free(L->pend);
  free(L->gstart);
  free(L->gend);
  dp_rows_order_free(&L->keys, p->u.over.order);
}

/* Compute every call over `in` (partitions by rank, or NULL: by first
** appearance) into `dst`; calls with skip[c] set get NULLs (a stream's
** running calls, computed apart). */
static int compute_into(dp_op *op, const dp_batch *in, const int64_t *rank, const bool *skip,
                        dp_batch *dst, layout *L) {
  const dp_plan *p = op->plan;
  int rc = build_layout(op, in, rank, L);
  int nin = in->ncols;
  for (int c = 0; !rc && c < nin; c++) rc = dp_vector_take(dst->cols[c], in->cols[c], L->ord, 0, L->n);
  for (int c = 0; !rc && c < p->u.over.ncalls; c++) {
    const dp_over_call *call = &p->u.over.calls[c];
    dp_vector *res = dst->cols[nin + c];
    if (skip && skip[c]) rc = dp_vector_append_nulls(res, L->n);
    else rc = is_agg(call) ? run_agg(op, in, L, call, res) : run_window_fn(op, in, L, call, res);
  }
  if (!rc) rc = dp_batch_sync(dst);
  return rc;
}

/* Compute every call over the whole input into st->result. */
static int compute(dp_op *op) {
  over_state *st = op->state;
  layout L;
  int rc = compute_into(op, st->rows, NULL, NULL, st->result, &L);
  free_layout(op->plan, &L);
  return rc;
}

/* ---- a stream's release ---- */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* A running call (its frame starts UNBOUNDED PRECEDING) over the released
** rows of `work` (rows [nh, n): those before are kept rows of the same
** partitions, rows gid[row] of partition gid[row]): each partition's state
** folds in the rows its frames reach, from its `folded` count on, and each
** released row gets the state's result, in layout order.  Every call ends
** with the same fold count per partition, left in its `nfold`. */
static int run_running(dp_op *op, const dp_batch *work, const layout *L, int64_t nh,
                       const int64_t *gid, const dp_over_call *call, dp_agg_state *s,
                       dp_vector *res) {
  over_state *st = op->state;
  dp_exec *ex = op->ex;
  dp_vector *args[4] = {NULL, NULL, NULL, NULL}, *mask = NULL;
  int64_t *rows = malloc((size_t)(L->n ? L->n : 1) * sizeof *rows);
  int rc = rows ? DIPPER_OK : DIPPER_NOMEM;
  for (int a = 0; !rc && a < call->nargs && a < 4; a++) rc = dp_eval(ex, call->args[a], work, &args[a]);
  if (!rc && call->filter) rc = dp_eval(ex, call->filter, work, &mask);
  int64_t g = -1, base = 0, at = 0, ps = 0, pe = 0;
  for (int64_t k = 0; !rc && k < L->n; k++) {
    if (L->ord[k] < nh) continue;
    if (L->pstart[k] != ps || g < 0) { /* a partition's first released row */
      g = gid[L->ord[k]];
      ps = L->pstart[k];
      pe = L->pend[k];
      base = st->pv[g].count - live_of(&st->pv[g]); /* the rank of its first kept row */
      at = st->pv[g].folded;
    }
    int64_t fs, fe;
    frame_of(op->plan, L, k, &fs, &fe);
    int64_t fe_abs = base + (fe - ps), nr = 0;
    for (; at < fe_abs; at++) {
      int64_t j = ps + (at - base);
      if (j < ps || j >= pe) continue; /* not kept: cannot happen for ordered times */
      int64_t r = L->ord[j];
      if (mask && (dp_vector_is_null(mask, r) || !dp_vector_get_bool(mask, r))) continue;
      rows[nr++] = r;
    }
    if (nr > 0) rc = dp_agg_state_update(s, (const dp_vector *const *)args, gid, rows, nr);
    st->pv[g].nfold = at;
    if (!rc) rc = dp_agg_state_finish(s, &g, 1, res);
  }
  for (int a = 0; a < 4; a++) dp_vector_free(args[a]);
  dp_vector_free(mask);
  free(rows);
  return rc;
}

/* ROW_NUMBER, RANK or DENSE_RANK over the released rows of `work` (rows
** [nh, n), as in run_running), from their partitions' counts: a row's number
** is its partition's rows released before plus its place among the released
** ones (ties in arrival order, as Flink's ROWS frame of ROW_NUMBER); a peer
** group is the released rows of one ORDER BY value.  On event time a peer
** group leaves whole in one release (a row at or before the watermark is
** late), so these are the bounded answers.  By processing time every row is
** a peer group of its own, as each row arrives at its own instant in Flink
** (whose three functions then agree), though the rows of one micro-batch
** share their PROCTIME().  Each partition's peer groups after the release
** are left in its `ndense`. */
static int run_ranked(dp_op *op, const layout *L, int64_t nh, const int64_t *gid,
                      const dp_over_call *call, dp_vector *res) {
  over_state *st = op->state;
  int id = call->fn->id, rc = DIPPER_OK;
  int64_t g = -1, ps = -1, n = 0, grank = 0, prev = -1;
  for (int64_t k = 0; !rc && k < L->n; k++) {
    int64_t r = L->ord[k];
    if (r < nh) continue;
    if (L->pstart[k] != ps || g < 0) { /* a partition's first released row */
      g = gid[r];
      ps = L->pstart[k];
      n = 0;
      prev = -1;
      st->pv[g].ndense = st->pv[g].dense;
    }
    over_part *P = &st->pv[g];
    n++;
    if (prev < 0 || st->proctime || dp_rows_order_compare(&L->keys, prev, r) != 0) {
      P->ndense++;
      grank = P->count + n;
    }
    prev = r;
    int64_t v = id == DP_F_ROW_NUMBER ? P->count + n : id == DP_F_RANK ? grank : P->ndense;
    rc = dp_vector_append_i64(res, v);
  }
  return rc;
}

/* ---- sliding frames ----
** ROWS n PRECEDING .. CURRENT ROW and RANGE x PRECEDING .. CURRENT ROW on a
** stream: each partition keeps a window of its last rows, the rows the next
** frame can reach, as two stacks of aggregate states (agg_func.h's groups,
** one per row, numbered from wfree/wnext): the front stack, oldest first,
** where a row's group holds the fold of its row and of every front row after
** it; the back stack, whose rows are folded in wback as they come.  A frame
** is the front's oldest group merged with wback; a row enters the back, the
** oldest leaves the front, and when the front is empty the back becomes the
** front (its suffix folds made by merges, newest first).  O(1) merges per
** row amortised, whatever the frame's size, and no subtraction: a frame's
** DOUBLE sum is the sum of its own values (in the order (front) + (back)),
** with no drift from the rows that left.  Only the aggregates whose merge is
** O(1) and keeps both states slide (COUNT, SUM, AVG, MIN/MAX of numbers,
** times and booleans, VAR/STDDEV, BOOL_AND/OR); the others (MIN/MAX of
** strings, FIRST/LAST_VALUE, LISTAGG, COLLECT, APPROX_COUNT_DISTINCT, C
** aggregates) fold each frame afresh from the kept rows laid out.
** The groups are not checkpointed: a window is the last wlen kept rows with
** wfront of them in front, so a restore writes (wlen, wfront) per partition
** and rebuilds the groups from the kept rows on the partition's next release
** (the same folds and merges, so the same bits). */

/* Does call c slide (the frame, and its aggregate: see above)? */
static bool call_slides(const dp_plan *p, const dp_over_call *call) {
  if (!p->u.over.has_frame || p->u.over.lower < 0 || p->u.over.upper != 0) return false;
  if (call->fn->kind != DP_FN_AGGREGATE || call->fn->cfunc) return false;
  switch ((dp_func_id)call->fn->id) {
  case DP_F_COUNT: case DP_F_SUM: case DP_F_AVG: case DP_F_VAR_POP: case DP_F_VAR_SAMP:
  case DP_F_STDDEV_POP: case DP_F_STDDEV_SAMP: case DP_F_BOOL_AND: case DP_F_BOOL_OR: return true;
  case DP_F_MIN: case DP_F_MAX: {
    dp_phys ph = call->nargs > 0 ? dp_phys_of(call->args[0]->type) : DP_PHYS_NULL;
    return ph >= DP_PHYS_BIT && ph <= DP_PHYS_D128;
  }
  default: return false;
  }
}

/* A fresh group id for every sliding call's state, reset. */
static int win_alloc(dp_op *op, int64_t *g) {
  over_state *st = op->state;
  int nc = op->plan->u.over.ncalls;
  if (st->nwfree > 0) {
    *g = st->wfree[--st->nwfree];
  } else {
    *g = st->wnext++;
    for (int c = 0; c < nc; c++)
      if (st->slide[c] && st->wnext > st->ws[c].cap) {
        int rc = dp_agg_state_reserve(&st->ws[c], 2 * st->wnext);
        if (rc) return rc;
      }
  }
  for (int c = 0; c < nc; c++)
    if (st->slide[c]) dp_agg_state_reset(&st->ws[c], *g);
  return DIPPER_OK;
}

static int win_free(over_state *st, int64_t g) { return push_i64(&st->wfree, &st->nwfree, &st->wfree_cap, g); }

/* Partition P's window forgets its groups (its wlen and wfront stay). */
static int win_unbuild(over_state *st, over_part *P) {
  int rc = DIPPER_OK;
  for (int64_t i = P->wh; P->wbuilt && !rc && i < P->wend; i++) rc = win_free(st, P->wg[i]);
  if (P->wbuilt && !rc) rc = win_free(st, P->wback);
  P->wh = P->wend = 0;
  P->wbuilt = false;
  return rc;
}

/* Merge group src into dst in every sliding call. */
static int win_merge(dp_op *op, int64_t dst, int64_t src) {
  over_state *st = op->state;
  int rc = DIPPER_OK;
  for (int c = 0; !rc && c < op->plan->u.over.ncalls; c++)
    if (st->slide[c]) rc = dp_agg_state_merge(&st->ws[c], dst, src);
  return rc;
}

/* The back stack becomes the front: each group the fold of its row and the
** rows after it. */
static int win_flip(dp_op *op, over_part *P) {
  over_state *st = op->state;
  int rc = DIPPER_OK;
  if (P->wbuilt) {
    for (int64_t i = P->wend - 2; !rc && i >= P->wh + P->wfront; i--) rc = win_merge(op, P->wg[i], P->wg[i + 1]);
    for (int c = 0; c < op->plan->u.over.ncalls; c++)
      if (st->slide[c]) dp_agg_state_reset(&st->ws[c], P->wback);
  }
  P->wfront = P->wlen;
  return rc;
}

/* The window's oldest row leaves. */
static int win_pop(dp_op *op, over_part *P) {
  if (P->wfront == 0) {
    int rc = win_flip(op, P);
    if (rc) return rc;
  }
  if (P->wbuilt) {
    int rc = win_free(op->state, P->wg[P->wh++]);
    if (rc) return rc;
  }
  P->wlen--;
  P->wfront--;
  return DIPPER_OK;
}

/* The window keeps no more than the kept rows (after a prune). */
static int win_trim(dp_op *op, over_part *P) {
  int rc = DIPPER_OK;
  while (!rc && P->wlen > live_of(P)) rc = win_pop(op, P);
  return rc;
}

/* The columns a release's sliding calls read over the work batch. */
typedef struct win_args {
  dp_vector *(*args)[4]; /* per call */
  dp_vector **mask;      /* per call, or NULL */
  int64_t *gids;         /* per work row: the group an update goes to */
  const dp_vector *time;
} win_args;

/* Work row r enters group g of every sliding call (unless its FILTER says no). */
static int win_fold(dp_op *op, win_args *A, int64_t g, int64_t r) {
  over_state *st = op->state;
  int rc = DIPPER_OK;
  A->gids[r] = g;
  for (int c = 0; !rc && c < op->plan->u.over.ncalls; c++) {
    if (!st->slide[c]) continue;
    const dp_vector *m = A->mask[c];
    if (m && (dp_vector_is_null(m, r) || !dp_vector_get_bool(m, r))) continue;
    rc = dp_agg_state_update(&st->ws[c], (const dp_vector *const *)A->args[c], A->gids, &r, 1);
  }
  return rc;
}

/* Work row r enters the window: a group of its own, and the back's fold. */
static int win_push(dp_op *op, over_part *P, win_args *A, int64_t r) {
  int64_t g;
  int rc = win_alloc(op, &g);
  int64_t vals[2] = {g, dp_vector_get_i64(A->time, r)};
  int64_t *arr[2] = {P->wg, P->wt};
  if (!rc) rc = deque_push(arr, 2, &P->wh, &P->wend, &P->wcap, vals);
  P->wg = arr[0];
  P->wt = arr[1];
  if (rc) return rc;
  P->wlen++;
  if ((rc = win_fold(op, A, g, r))) return rc;
  return P->wlen > P->wfront ? win_fold(op, A, P->wback, r) : DIPPER_OK;
}

/* The groups of P's window, from its kept rows in the work batch (rows
** hoff .. hoff+live). */
static int win_build(dp_op *op, over_part *P, win_args *A) {
  int64_t n = P->wlen, front = P->wfront;
  int rc = win_alloc(op, &P->wback);
  if (rc) return rc;
  P->wbuilt = true;
  P->wh = P->wend = 0;
  P->wlen = 0;
  P->wfront = n; /* every row enters as front (no back fold) */
  for (int64_t i = 0; !rc && i < n; i++) rc = win_push(op, P, A, P->hoff + live_of(P) - n + i);
  for (int64_t i = front - 2; !rc && i >= 0; i--) rc = win_merge(op, P->wg[P->wh + i], P->wg[P->wh + i + 1]);
  P->wfront = front;
  for (int64_t i = front; !rc && i < n; i++) rc = win_fold(op, A, P->wback, P->hoff + live_of(P) - n + i);
  return rc;
}

/* Every sliding call over the released rows of `work` (from nh on, in layout
** order, rows gid[row] of partition gid[row]), into res[c]. */
static int run_sliding(dp_op *op, const dp_batch *work, const layout *L, int64_t nh,
                       const int64_t *gid, dp_vector **res) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  int nc = p->u.over.ncalls;
  win_args A = {calloc((size_t)nc + 1, sizeof *A.args), calloc((size_t)nc + 1, sizeof *A.mask),
                malloc((size_t)(work->nrows + 1) * sizeof *A.gids), work->cols[st->time_col]};
  int rc = A.args && A.mask && A.gids ? DIPPER_OK : DIPPER_NOMEM;
  for (int c = 0; !rc && c < nc; c++) {
    const dp_over_call *call = &p->u.over.calls[c];
    if (!st->slide[c]) continue;
    for (int a = 0; !rc && a < call->nargs && a < 4; a++) rc = dp_eval(op->ex, call->args[a], work, &A.args[c][a]);
    if (!rc && call->filter) rc = dp_eval(op->ex, call->filter, work, &A.mask[c]);
  }
  int64_t n = p->u.over.lower;
  for (int64_t k = 0; !rc && k < L->n; k++) {
    int64_t r = L->ord[k];
    if (r < nh) continue;
    over_part *P = &st->pv[gid[r]];
    if (!P->wbuilt && (rc = win_build(op, P, &A))) break;
    if (p->u.over.rows) {
      if ((rc = win_push(op, P, &A, r))) break;
      while (!rc && P->wlen > n + 1) rc = win_pop(op, P);
    } else if (k == L->gstart[k] || L->ord[k - 1] < nh) {
      /* a time's first released row: its peers enter with it */
      for (int64_t j = k; !rc && j < L->gend[k]; j++) rc = win_push(op, P, &A, L->ord[j]);
      int64_t lo = dp_vector_get_i64(A.time, r) - n;
      while (!rc && P->wlen > 0 && P->wt[P->wh] < lo) rc = win_pop(op, P);
    }
    for (int c = 0; !rc && c < nc; c++) {
      if (!st->slide[c]) continue;
      dp_agg_state_reset(&st->ws[c], st->wtmp);
      if (P->wfront > 0) rc = dp_agg_state_merge(&st->ws[c], st->wtmp, P->wg[P->wh]);
      if (!rc) rc = dp_agg_state_merge(&st->ws[c], st->wtmp, P->wback);
      if (!rc) rc = dp_agg_state_finish(&st->ws[c], &st->wtmp, 1, res[c]);
    }
  }
  for (int c = 0; A.args && c < nc; c++)
    for (int a = 0; a < 4; a++) dp_vector_free(A.args[c][a]);
  for (int c = 0; A.mask && c < nc; c++) dp_vector_free(A.mask[c]);
  free(A.args);
  free(A.mask);
  free(A.gids);
  return rc;
}

/* Pop the pending rows at or before wm, in arrival order, into *ready. */
static int take_ready(over_state *st, int64_t wm, dp_batch **ready) {
  int64_t n = 0, cap = 64;
  int64_t *pos = malloc((size_t)cap * sizeof *pos);
  if (!pos) return DIPPER_NOMEM;
  while (st->due.n > 0 && (wm == DP_WATERMARK_END || dp_due_top(&st->due) <= wm)) {
    dp_due e = dp_due_pop(&st->due);
    if (st->pgone[e.id]) continue;
    if (n == cap) {
      int64_t *v = realloc(pos, (size_t)(cap *= 2) * sizeof *v);
      if (!v) {
        free(pos);
        return DIPPER_NOMEM;
      }
      pos = v;
    }
    pos[n++] = e.id;
    st->pgone[e.id] = 1;
  }
  if (n > 1) qsort(pos, (size_t)n, sizeof *pos, cmp_i64);
  st->npgone += n;
  *ready = dp_batch_new(st->pending->schema, n);
  int rc = *ready ? dp_batch_take(*ready, st->pending, pos, 0, n) : DIPPER_NOMEM;
  free(pos);
  return rc;
}

/* The released rows' partitions: gid[r] (new partitions registered, with
** the TTL's clock for one made again after it expired). */
static int find_parts(dp_op *op, const dp_batch *b, int64_t *gid) {
  over_state *st = op->state;
  dp_vector *pv[64];
  int rc = eval_parts(op, b, pv);
  for (int64_t r = 0; !rc && r < b->nrows; r++) {
    bool fresh;
    rc = dp_groups_find_or_add(&st->parts, (const dp_vector *const *)pv, r, &gid[r], &fresh);
    if (!rc && fresh && st->ttl.ttl > 0) rc = dp_state_ttl_touch(&st->ttl, gid[r], op->ex->batch_start_time);
  }
  free_parts(op->plan, pv);
  return rc ? rc : reserve_parts(op, dp_groups_count(&st->parts));
}

/* After a release: partition g had `live` kept rows and gets the released
** rows work[newrows[0..nnew)] (in order); the rows no later frame reaches
** are dropped from the front of the two, the others kept (appended to the
** history store, and to the time index for a RANGE frame). */
static int keep_released(dp_op *op, int64_t g, const dp_batch *work, const int64_t *newrows,
                         int64_t nnew, int64_t *hsel, int64_t *nhsel) {
  over_state *st = op->state;
  over_part *P = &st->pv[g];
  int rc0 = mark_dirty(st, g);
  if (rc0) return rc0;
  int64_t live = live_of(P), total = live + nnew, base = P->count - live;
  P->count += nnew;
  if (st->any_ranked) P->dense = P->ndense;
  P->folded = st->running ? P->nfold : P->count;
  const dp_vector *ht = st->rows->cols[st->time_col], *wt = work->cols[st->time_col];
  int64_t i = 0;
  for (; i < total; i++) {
    if (total - i <= st->reach_rows || base + i >= P->folded) break;
    if (st->reach_time >= 0 && st->horizon != DP_WATERMARK_END) {
      int64_t t = i < live ? dp_vector_get_i64(ht, P->keep[P->head + i])
                           : dp_vector_get_i64(wt, newrows[i - live]);
      if (!(t < st->horizon - st->reach_time)) break;
    }
  }
  for (int64_t k = 0; k < i && k < live; k++) {
    st->hgone[P->keep[P->head]] = 1;
    st->nhgone++;
    P->head++;
  }
  int64_t first = st->rows->nrows + *nhsel;
  for (int64_t k = i > live ? i - live : 0; k < nnew; k++) {
    int rc = part_push(P, first++);
    if (!rc && st->reach_time >= 0) rc = dp_due_push(&st->hdue, dp_vector_get_i64(wt, newrows[k]), g);
    if (rc) return rc;
    hsel[(*nhsel)++] = newrows[k];
  }
  return win_trim(op, P);
}

/* Stream: release the pending rows the watermark has reached.  They are
** laid out with the kept rows of their partitions (whose results left
** earlier), the calls computed over that, and only their own results leave;
** then what no later frame reaches is pruned.  O(released + kept rows of the
** partitions they touch + pruned), never a pass over every partition. */
static int release(dp_op *op) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  int64_t wm = op->ex->final || st->proctime ? DP_WATERMARK_END : op->ex->watermark;
  if (wm == DP_WATERMARK_NONE || st->due.n == 0) return DIPPER_OK;
  if (!op->ex->final && !st->proctime && dp_due_top(&st->due) > wm) return DIPPER_OK;
  dp_batch *ready = NULL, *work = NULL, *all = NULL;
  int64_t *gid = NULL, *rank = NULL, *touched = NULL, *hsel = NULL, *sel = NULL, *newrows = NULL;
  dp_vector **rv = NULL;
  layout L;
  memset(&L, 0, sizeof L);
  int rc = take_ready(st, wm, &ready);
  int64_t nready = ready ? ready->nrows : 0;
  if (rc || nready == 0) goto done;
  st->epoch++;
  if (st->proctime) {
    const dp_vector *t = ready->cols[st->time_col];
    for (int64_t r = 0; r < nready; r++)
      if (!dp_vector_is_null(t, r) && dp_vector_get_i64(t, r) > st->horizon) st->horizon = dp_vector_get_i64(t, r);
  } else {
    st->horizon = wm;
  }
  /* the partitions touched, in order of first appearance; their kept rows */
  int64_t ntouched = 0, nh = 0;
  gid = malloc((size_t)nready * sizeof *gid);
  touched = malloc((size_t)nready * sizeof *touched);
  if (!gid || !touched) rc = DIPPER_NOMEM;
  if (!rc) rc = find_parts(op, ready, gid);
  for (int64_t r = 0; !rc && r < nready; r++) {
    over_part *P = &st->pv[gid[r]];
    if (P->stamp == st->epoch) continue;
    P->stamp = st->epoch;
    touched[ntouched++] = gid[r];
    if (P->rank < 0 || (st->rank_resets && live_of(P) == 0)) P->rank = st->next_rank++;
    /* laid out: for a call that reads them, or a window to build */
    P->hoff = st->need_hist || (!P->wbuilt && P->wlen > 0) ? nh : -1;
    if (P->hoff >= 0) nh += live_of(P);
  }
  int64_t nw = nh + nready;
  hsel = malloc((size_t)(nh + nready) * sizeof *hsel);
  int64_t *wgid = rc ? NULL : malloc((size_t)nw * sizeof *wgid);
  rank = malloc((size_t)nw * sizeof *rank);
  if (!rc && (!hsel || !wgid || !rank)) rc = DIPPER_NOMEM;
  int64_t k = 0;
  for (int64_t t = 0; !rc && t < ntouched; t++) {
    over_part *P = &st->pv[touched[t]];
    for (int64_t i = P->head; P->hoff >= 0 && i < P->len; i++, k++) {
      hsel[k] = P->keep[i];
      wgid[k] = touched[t];
    }
  }
  for (int64_t r = 0; !rc && r < nready; r++) wgid[nh + r] = gid[r];
  for (int64_t r = 0; !rc && r < nw; r++) rank[r] = st->pv[wgid[r]].rank;
  work = rc ? NULL : dp_batch_new(st->pending->schema, nw);
  all = rc ? NULL : dp_batch_new(&p->schema, nw);
  if (!rc && (!work || !all)) rc = DIPPER_NOMEM;
  if (!rc) rc = dp_batch_take(work, st->rows, hsel, 0, nh);
  if (!rc) rc = dp_batch_take(work, ready, NULL, 0, nready);
  /* the calls: those over bounded frames and LAG as the bounded path does,
  ** the running ones from their partitions' states */
  int nc = p->u.over.ncalls, nin = work->ncols;
  const bool *skip = st->apart;
  if (!rc) rc = compute_into(op, work, rank, skip, all, &L);
  int64_t nsel = 0;
  sel = rc ? NULL : malloc((size_t)(L.n ? L.n : 1) * sizeof *sel);
  if (!rc && !sel) rc = DIPPER_NOMEM;
  for (int64_t j = 0; !rc && j < L.n; j++)
    if (L.ord[j] >= nh) sel[nsel++] = j;
  rv = rc ? NULL : calloc((size_t)nc + 1, sizeof *rv);
  if (!rc && !rv) rc = DIPPER_NOMEM;
  bool any_slide = false;
  for (int c = 0; !rc && c < nc; c++) {
    if (!skip[c]) continue;
    rv[c] = dp_vector_new(p->u.over.calls[c].type, nsel);
    if (!rv[c]) rc = DIPPER_NOMEM;
    else if (st->slide[c]) any_slide = true;
    else if (st->ranked[c]) rc = run_ranked(op, &L, nh, wgid, &p->u.over.calls[c], rv[c]);
    else rc = run_running(op, work, &L, nh, wgid, &p->u.over.calls[c], &st->run[c], rv[c]);
  }
  if (!rc && any_slide) rc = run_sliding(op, work, &L, nh, wgid, rv);
  for (int c = 0; !rc && c < nin + nc; c++) {
    dp_vector *dst = st->result->cols[c];
    rc = c >= nin && skip[c - nin] ? dp_vector_take(dst, rv[c - nin], NULL, 0, nsel)
                                   : dp_vector_take(dst, all->cols[c], sel, 0, nsel);
  }
  if (!rc) rc = dp_batch_sync(st->result);
  /* keep what later frames reach, partition by partition in layout order */
  newrows = rc ? NULL : malloc((size_t)(nsel ? nsel : 1) * sizeof *newrows);
  if (!rc && !newrows) rc = DIPPER_NOMEM;
  int64_t nkeep = 0;
  for (int64_t j = 0; !rc && j < nsel;) {
    int64_t g = wgid[L.ord[sel[j]]], m = 0;
    while (j < nsel && wgid[L.ord[sel[j]]] == g) newrows[m++] = L.ord[sel[j++]];
    rc = keep_released(op, g, work, newrows, m, hsel, &nkeep);
  }
  if (!rc) rc = dp_batch_take(st->rows, work, hsel, 0, nkeep);
  if (!rc) rc = grow_flags(&st->hgone, &st->hgone_cap, st->rows->nrows);
  /* the partitions not touched, by time */
  int64_t nparts = dp_groups_count(&st->parts);
  while (!rc && st->reach_time >= 0 && st->hdue.n > 0 &&
         (st->horizon == DP_WATERMARK_END || dp_due_top(&st->hdue) < st->horizon - st->reach_time)) {
    dp_due e = dp_due_pop(&st->hdue);
    if (e.id < nparts) rc = prune_part(op, e.id);
  }
  if (!rc) rc = compact_pending(st, false);
  if (!rc) rc = compact_hist(st, nparts, false);
  free(wgid);
done:
  if (L.ord) free_layout(p, &L);
  for (int c = 0; rv && c < p->u.over.ncalls; c++) dp_vector_free(rv[c]);
  free(rv);
  dp_batch_free(ready);
  dp_batch_free(work);
  dp_batch_free(all);
  free(gid);
  free(rank);
  free(touched);
  free(hsel);
  free(sel);
  free(newrows);
  return rc;
}

/* A stream's state entries: the kept and the pending rows, and with a
** running frame each partition's states. */
static int64_t stream_rows(const over_state *st) {
  return st->rows->nrows - st->nhgone + st->pending->nrows - st->npgone +
         (st->running ? dp_groups_count(&st->parts) : 0);
}

static int over_next(dp_op *op, dp_batch **out) {
  over_state *st = op->state;
  *out = NULL;
  int rc;
  if (!st->drained) {
    /* expiry before the input: a row of this batch starts an expired partition afresh */
    if (st->ttl.ttl > 0 && (rc = expire_parts(op))) return rc;
    if ((rc = dp_op_drain(op->children[0], keep_rows, op))) return rc;
    st->drained = true;
    op->metrics.state_rows = st->rows->nrows;
    if (st->stream) {
      if ((rc = release(op))) return rc;
      op->metrics.state_rows = stream_rows(st);
    } else if (op->ex->final && !st->emitted) {
      st->emitted = true;
      if ((rc = compute(op))) return rc;
    }
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

static int over_end_batch(dp_op *op) {
  over_state *st = op->state;
  st->drained = false;
  if (st->emitted) {
    dp_batch_clear(st->rows);
    dp_rowlog_clear(&st->rows_log);
  }
  if (st->emitted || st->stream) {
    dp_batch_clear(st->result);
    st->cursor = 0;
  }
  op->metrics.state_rows = st->stream ? stream_rows(st) : st->rows->nrows;
  return DIPPER_OK;
}

/* A stream's partitions, running states and indexes freed (the stores stay). */
static void free_stream(dp_op *op) {
  over_state *st = op->state;
  for (int64_t g = 0; g < st->pv_cap; g++) {
    free(st->pv[g].keep);
    free(st->pv[g].wg);
    free(st->pv[g].wt);
  }
  free(st->pv);
  st->pv = NULL;
  st->pv_cap = 0;
  for (int c = 0; st->run && c < op->plan->u.over.ncalls; c++)
    if (is_agg(&op->plan->u.over.calls[c])) dp_agg_state_free(&st->run[c]);
  for (int c = 0; st->slide && c < op->plan->u.over.ncalls; c++)
    if (st->slide[c]) dp_agg_state_free(&st->ws[c]);
  free(st->wfree);
  st->wfree = NULL;
  st->nwfree = st->wfree_cap = st->wnext = 0;
  dp_due_free(&st->due);
  dp_due_free(&st->hdue);
  free(st->pgone);
  free(st->hgone);
  free(st->dirty);
  st->dirty = NULL;
  st->ndirty = st->dirty_cap = 0;
  st->pgone = st->hgone = NULL;
  st->pgone_cap = st->hgone_cap = st->npgone = st->nhgone = 0;
  dp_groups_free(&st->parts);
  dp_state_ttl_free(&st->ttl);
}

static void over_close(dp_op *op) {
  over_state *st = op->state;
  if (!st) return;
  free_stream(op);
  free(st->run);
  free(st->acalls);
  free(st->skip);
  free(st->ranked);
  free(st->apart);
  free(st->slide);
  free(st->ws);
  dp_batch_free(st->rows);
  dp_batch_free(st->pending);
  dp_rowlog_free(&st->rows_log);
  dp_rowlog_free(&st->pending_log);
  dp_batch_free(st->result);
  dp_batch_free(st->out);
  free(st);
  op->state = NULL;
}

/* A stream's partitions table, running states and TTL list, empty (at open,
** and before a restore loads a whole state). */
static int stream_setup(dp_op *op) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  int np = p->u.over.npartition;
  if (!st->part_schema.cols) {
    st->part_schema.ncols = np;
    st->part_schema.cols = dp_arena_calloc(op->ex->arena, (size_t)np + 1, sizeof(dp_field));
    if (!st->part_schema.cols) return DIPPER_NOMEM;
    for (int k = 0; k < np; k++) {
      st->part_schema.cols[k].name = "partition";
      st->part_schema.cols[k].type = p->u.over.partition[k]->type;
    }
  }
  st->next_rank = 0;
  st->epoch = 0;
  st->horizon = DP_WATERMARK_NONE;
  int rc = dp_groups_init(&st->parts, &st->part_schema);
  for (int c = 0; !rc && st->run && c < p->u.over.ncalls; c++) {
    if (!is_agg(&p->u.over.calls[c])) continue;
    rc = dp_agg_state_init(&st->run[c], &st->acalls[c]);
    st->run[c].diags = op->ex->diags; /* a C aggregate's failure message goes there */
  }
  bool any_slide = false;
  for (int c = 0; !rc && st->slide && c < p->u.over.ncalls; c++) {
    if (!st->slide[c]) continue;
    any_slide = true;
    rc = dp_agg_state_init(&st->ws[c], &st->acalls[c]);
    st->ws[c].diags = op->ex->diags;
  }
  if (!rc && any_slide) rc = win_alloc(op, &st->wtmp);
  int64_t ttl = p->props.state_ttl[0];
  if (!rc && ttl > 0) rc = dp_state_ttl_init(&st->ttl, ttl);
  return rc;
}

/* A stream's frame: what a later row can reach back to, and the running
** states when the frame starts UNBOUNDED PRECEDING. */
static int stream_frame(dp_op *op) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  bool bounded = p->u.over.has_frame && p->u.over.lower >= 0;
  st->running = !bounded;
  st->reach_rows = bounded && p->u.over.rows ? p->u.over.lower : 0;
  st->reach_time = bounded && !p->u.over.rows ? p->u.over.lower : -1;
  /* the layout of earlier versions kept every row unless the frame was
  ** bounded (and no LAG): with bounded frames a partition that kept nothing
  ** came back as new */
  st->rank_resets = bounded && !(st->proctime && !p->u.over.rows);
  int nc = p->u.over.ncalls;
  st->skip = calloc((size_t)nc + 1, sizeof *st->skip);
  st->acalls = calloc((size_t)nc + 1, sizeof *st->acalls);
  st->run = st->running ? calloc((size_t)nc + 1, sizeof *st->run) : NULL;
  if (!st->skip || !st->acalls || (st->running && !st->run)) return DIPPER_NOMEM;
  st->ranked = calloc((size_t)nc + 1, sizeof *st->ranked);
  st->apart = calloc((size_t)nc + 1, sizeof *st->apart);
  if (!st->ranked || !st->apart) return DIPPER_NOMEM;
  for (int c = 0; c < nc; c++) {
    const dp_over_call *call = &p->u.over.calls[c];
    if (is_ranked(call)) { /* from the partitions' counts (run_ranked) */
      st->ranked[c] = st->any_ranked = true;
      continue;
    }
    if (call->fn->kind == DP_FN_WINDOW) { /* LAG */
      int64_t off;
      int rc = const_int(op, call->nargs > 1 ? call->args[1] : NULL, 1, &off);
      if (rc) return rc;
      if (off > st->reach_rows) st->reach_rows = off;
      st->rank_resets = false;
      continue;
    }
    st->acalls[c] = (dp_agg_call){call->fn, call->nargs, call->args, false, call->filter,
                                  call->type, call->span};
    st->skip[c] = st->running;
  }
  bool any_agg = false;
  for (int c = 0; c < nc; c++) any_agg |= st->skip[c];
  if (!any_agg) { /* LAG and ranks alone: nothing to fold, every row counts as folded */
    st->running = false;
    free(st->run);
    st->run = NULL;
  }
  /* sliding calls; the others over a bounded frame and LAG need the kept rows laid out */
  st->slide = calloc((size_t)nc + 1, sizeof *st->slide);
  st->ws = calloc((size_t)nc + 1, sizeof *st->ws);
  if (!st->slide || !st->ws) return DIPPER_NOMEM;
  for (int c = 0; c < nc; c++) {
    const dp_over_call *call = &p->u.over.calls[c];
    st->slide[c] = bounded && call_slides(p, call);
    st->sliding |= st->slide[c];
    st->skip[c] |= st->slide[c];
    st->apart[c] = st->skip[c] || st->ranked[c];
    if (!st->apart[c]) st->need_hist = true;
  }
  if (p->u.over.npartition > 64)
    return dp_error(op->ex->diags, DIPPER_LIMIT, p->span,
                    "an OVER on a stream takes at most 64 PARTITION BY expressions");
  return stream_setup(op);
}

static int over_open(dp_op *op) {
  const dp_plan *p = op->plan;
  const dp_plan *in = p->inputs[0];
  bool stream = !in->props.bounded && !p->props.bounded;
  int tc = p->u.over.norder > 0 ? dp_expr_as_column(p->u.over.order[0].expr) : -1;
  bool by_time = tc >= 0 && !p->u.over.order[0].desc && in->props.time_attr && in->props.time_attr[tc] != -1;
  /* A bounded input in streaming mode still runs as a stream when it is
  ** ordered by event time, so that rows leave as the watermark passes them
  ** (as window aggregations over it do), not all in the final batch.  Calls
  ** that need the whole partition keep the bounded way. */
  if (!stream && by_time && in->props.time_attr[tc] >= 0 && op->ex->query && op->ex->query->streaming) {
    stream = true;
    for (int c = 0; c < p->u.over.ncalls; c++)
      if (p->u.over.calls[c].fn->kind == DP_FN_WINDOW && p->u.over.calls[c].fn->id != DP_F_LAG &&
          !is_ranked(&p->u.over.calls[c]))
        stream = false;
  }
  if (stream && !by_time)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "the embedded engine runs OVER on a stream only ordered ascending by a time "
                    "attribute (an event-time column: rows leave as the watermark passes them; "
                    "or PROCTIME(): rows leave as they arrive); order by it, "
                    "or run the query in batch mode (SET 'execution.runtime-mode' = 'batch')");
  for (int c = 0; stream && c < p->u.over.ncalls; c++) {
    int id = p->u.over.calls[c].fn->id;
    if (p->u.over.calls[c].fn->kind != DP_FN_WINDOW) continue;
    if (id == DP_F_LEAD) /* Flink 2.3 refuses it as well (its AggFunctionFactory) */
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->u.over.calls[c].span,
                      "LEAD(..) OVER (..) on a stream needs rows that have not arrived yet; Flink "
                      "refuses it too (\"LEAD Function is not supported in stream mode\"): use "
                      "LAG(..) and take each pair at its later row, or run in batch mode "
                      "(SET 'execution.runtime-mode' = 'batch')");
    /* Flink 2.3 refuses these as well (its AggFunctionFactory) */
    const char *flink = id == DP_F_PERCENT_RANK ? "PERCENT_RANK" : id == DP_F_CUME_DIST ? "CUME_DIST"
                        : id == DP_F_NTILE      ? "NTILE" : NULL;
    if (flink)
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->u.over.calls[c].span,
                      "%s(..) OVER (..) on a stream needs the whole partition, which a stream never "
                      "has; Flink refuses it too (\"%s Function is not supported in stream mode\"): "
                      "use ROW_NUMBER, RANK, DENSE_RANK, COUNT(*) or LAG, or run in batch mode "
                      "(SET 'execution.runtime-mode' = 'batch')", flink, flink);
    if (id != DP_F_LAG && !is_ranked(&p->u.over.calls[c]))
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->u.over.calls[c].span,
                      "%s(..) OVER (..) on a stream needs rows that have not arrived yet or the "
                      "whole partition; use an aggregate, LAG, ROW_NUMBER, RANK or DENSE_RANK, "
                      "or run in batch mode", p->u.over.calls[c].fn->name);
  }
  for (int c = 0; c < p->u.over.ncalls; c++)
    if (p->u.over.calls[c].distinct || p->u.over.calls[c].nargs > 4)
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->u.over.calls[c].span,
                      "the embedded engine does not run DISTINCT inside an OVER call yet; "
                      "aggregate the distinct values in a subquery first");
  over_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  st->stream = stream;
  st->time_col = tc;
  st->proctime = stream && in->props.time_attr[tc] < 0;
  st->rows = dp_batch_new(&in->schema, 0);
  st->pending = dp_batch_new(&in->schema, 0);
  st->result = dp_batch_new(&p->schema, 0);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  int rc = !st->rows || !st->pending || !st->result || !st->out ? DIPPER_NOMEM : DIPPER_OK;
  if (!rc && stream) rc = stream_frame(op);
  if (rc) over_close(op);
  return rc;
}

/* ---- checkpoints ----
** Blob, version 4 (version 3 has no peer groups, dense, in the partition
** records and reads with none: no rank ran on a stream then; version 2 has
** no windows in the partition records and
** the TTL list whole after has_ttl, and still reads: a sliding window then
** starts as every kept row in its back stack; version 1 differs only for a
** stream, whose whole history it held: a bounded run's version 1 reads, a
** stream's is refused with the checkpoint folder named):
**   version:u8  stream:u8  emitted:u8  then
**   bounded: rows (rows.h's row store: every row)  pending (none)
**   stream:  the partitions (rows.h's group table, by id)  next_rank:svar
**            horizon:svar  per partition: count, folded, rank (svar),
**            kept rows, window rows wlen, of them in front wfront, peer
**            groups released dense (uvar)  the kept rows (a row store, partition after partition, oldest
**            first)  per running call (an aggregate when the frame starts
**            UNBOUNDED PRECEDING): its states by partition (agg_func.h)  the
**            pending rows (a row store, in arrival order)  has_ttl:u8
**            [state_ttl.h's section: 'T' and the list whole]
** The time indexes and the windows' groups are not written: a restore
** builds them from the rows (the groups at a partition's next release).
** Delta (save_delta), the same version:  version:u8  stream:u8  emitted:u8
**   then, bounded: per store, rows then pending: its log (rows.h: all of
**   them once a bounded run emitted) and the rows added since;  stream:
**   save_stream_delta's form ('C': the partitions changed since, 'W': the
**   whole state after a TTL renumbered them) with the pending rows whole
**   and has_ttl:u8 [the TTL section: 'U' and the list's delta since the
**   last save or restore, or 'T' and the list whole when that is smaller].
** Version 1's TTL section of a bounded run ('P', never written: a TTL takes
** only a stream) is not read. */
#define OVER_STATE_VERSION 4

/* The version byte: 4, 3, 2, or 1 for a bounded run (the same blob). */
static int check_version(dp_op *op, dp_rd *in) {
  over_state *st = op->state;
  size_t at = in->pos;
  if (dp_rd_left(in) > 0 && in->p[at] == 1 && !st->stream) {
    (void)dp_get_u8(in);
    return DIPPER_OK;
  }
  if (dp_rd_left(in) > 0 && in->p[at] == 1)
    return dp_error(op->ex->diags, DIPPER_CORRUPT, op->plan->span,
                    "the checkpoint folder '%s' holds the state of the %s operator (line %d) in "
                    "version 1, which kept a stream's whole history; this build keeps what later "
                    "rows reach (version 2) and does not read it: start the query from a fresh "
                    "checkpoint folder (remove '%s' or set another one), the stream read again "
                    "from its start",
                    op->ex->checkpoint ? op->ex->checkpoint : "(none)", op->cls->name,
                    (int)op->plan->span.line, op->ex->checkpoint ? op->ex->checkpoint : "(none)");
  st->load_version = OVER_STATE_VERSION;
  if (dp_rd_left(in) > 0 && in->p[at] == 2) { /* no windows, the TTL list whole */
    (void)dp_get_u8(in);
    st->load_version = 2;
    return DIPPER_OK;
  }
  if (dp_rd_left(in) > 0 && in->p[at] == 3) { /* no peer groups (no ranks on a stream) */
    (void)dp_get_u8(in);
    st->load_version = 3;
    return DIPPER_OK;
  }
  return dp_state_check(op, in, OVER_STATE_VERSION);
}

/* The end of a stream's blob, whole or delta: the pending rows still
** waiting (whole: they are what the watermark has not passed), has_ttl:u8
** and the TTL section (state_ttl.h's: the list whole in a whole state, its
** delta when smaller in a delta; version 2: the list whole). */
static int save_tail(over_state *st, dp_buf *out, bool delta) {
  int64_t np = st->pending->nrows, m = 0;
  int64_t *sel = malloc((size_t)(np + 1) * sizeof *sel);
  dp_batch *tmp = dp_batch_new(st->pending->schema, np - st->npgone);
  int rc = sel && tmp ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t r = 0; !rc && r < np; r++)
    if (!st->pgone[r]) sel[m++] = r;
  if (!rc) rc = dp_batch_take(tmp, st->pending, sel, 0, m);
  if (!rc) rc = dp_rows_save(out, tmp);
  dp_batch_free(tmp);
  free(sel);
  dp_put_u8(out, st->ttl.ttl > 0);
  if (!rc && delta) rc = dp_state_ttl_save_section_delta(&st->ttl, out);
  else if (!rc) dp_state_ttl_save_section_base(&st->ttl, out);
  return rc;
}

/* The TTL section: has_ttl:u8, then (version 3) state_ttl.h's section or
** (version 2) the list whole.  Without one (the TTL set since) every
** partition counts as written now; one read while no TTL is set is read
** past. */
static int load_ttl(dp_op *op, dp_rd *in, int64_t ng) {
  over_state *st = op->state;
  int rc = DIPPER_OK;
  uint8_t has_ttl = dp_get_u8(in);
  if (in->bad || has_ttl > 1) return DIPPER_CORRUPT;
  if (has_ttl && st->load_version >= 3) {
    uint8_t kind = dp_rd_left(in) > 0 ? (uint8_t)in->p[in->pos] : 0;
    if (kind != 'T' && kind != 'U') return DIPPER_CORRUPT;
    return dp_state_ttl_load_section(&st->ttl, in, ng, op->ex->batch_start_time);
  }
  if (has_ttl) {
    dp_state_ttl other;
    memset(&other, 0, sizeof other);
    dp_state_ttl *t = st->ttl.ttl > 0 ? &st->ttl : &other;
    if (t == &other) rc = dp_state_ttl_init(&other, 1); /* read past: the TTL was unset */
    if (!rc) rc = dp_state_ttl_load(t, in, ng);
    dp_state_ttl_free(&other);
  } else {
    /* a TTL set at the restart: every partition written now */
    for (int64_t g = 0; st->ttl.ttl > 0 && g < ng && !rc; g++)
      rc = dp_state_ttl_touch(&st->ttl, g, op->ex->batch_start_time);
  }
  if (!rc && st->ttl.ttl > 0) dp_state_ttl_mark(&st->ttl);
  return rc;
}

static int load_tail(dp_op *op, dp_rd *in, int64_t ng) {
  over_state *st = op->state;
  int rc;
  dp_batch_clear(st->pending);
  st->npgone = 0;
  if (st->pgone) memset(st->pgone, 0, (size_t)st->pgone_cap);
  if ((rc = dp_rows_load(in, st->pending))) return dp_state_corrupt(op, rc, "its pending rows");
  rc = load_ttl(op, in, ng);
  return rc ? dp_state_corrupt(op, rc, "its partitions' state TTL") : DIPPER_OK;
}

/* The time indexes of a restored state, from its rows. */
static int load_indexes(dp_op *op, int64_t ng) {
  over_state *st = op->state;
  int rc = grow_flags(&st->hgone, &st->hgone_cap, st->rows->nrows);
  if (!rc) rc = grow_flags(&st->pgone, &st->pgone_cap, st->pending->nrows);
  st->due.n = 0;
  if (!rc && st->pending->nrows > 0) {
    const dp_vector *t = st->pending->cols[st->time_col];
    rc = dp_due_reserve(&st->due, st->pending->nrows);
    for (int64_t r = 0; !rc && r < st->pending->nrows; r++)
      st->due.v[r] = (dp_due){dp_vector_get_i64(t, r), r};
    if (!rc) {
      st->due.n = st->pending->nrows;
      dp_due_heapify(&st->due);
    }
  }
  if (!rc) rc = rebuild_hdue(st, ng);
  return rc ? dp_state_corrupt(op, rc, "its indexes") : DIPPER_OK;
}

/* A partition's record: count, folded, rank (svar), kept rows, (version
** 3) its window's wlen and wfront (uvar), and (version 4) its peer groups
** released, dense (uvar). */
typedef struct part_rec {
  int64_t count, folded, rank, live, wlen, wfront, dense;
} part_rec;

static void put_part(dp_buf *out, const over_part *P) {
  dp_put_svar(out, P->count);
  dp_put_svar(out, P->folded);
  dp_put_svar(out, P->rank);
  dp_put_uvar(out, (uint64_t)live_of(P));
  dp_put_uvar(out, (uint64_t)P->wlen);
  dp_put_uvar(out, (uint64_t)P->wfront);
  dp_put_uvar(out, (uint64_t)P->dense);
}

/* Read a record; false (and in->bad) for one that does not fit.  A version
** 2 record has no window: a sliding one starts as every kept row in back. */
static bool get_part(const over_state *st, dp_rd *in, part_rec *r) {
  r->count = dp_get_svar(in);
  r->folded = dp_get_svar(in);
  r->rank = dp_get_svar(in);
  uint64_t live = dp_get_uvar(in), wlen = 0, wfront = 0, dense = 0;
  if (st->load_version >= 3) {
    wlen = dp_get_uvar(in);
    wfront = dp_get_uvar(in);
  } else if (st->sliding) {
    wlen = live;
  }
  if (st->load_version >= 4) dense = dp_get_uvar(in);
  if (in->bad || r->count < 0 || r->folded < 0 || r->folded > r->count || r->rank < -1 ||
      r->rank >= st->next_rank || live > (uint64_t)r->count || live > dp_rd_left(in) * 64 + 64 ||
      wlen > live || wfront > wlen || (!st->sliding && wlen > 0) || dense > (uint64_t)r->count) {
    in->bad = true;
    return false;
  }
  r->live = (int64_t)live;
  r->wlen = (int64_t)wlen;
  r->wfront = (int64_t)wfront;
  r->dense = (int64_t)dense;
  return true;
}

/* Partition P takes a record read (its window unbuilt). */
static int set_part(over_state *st, over_part *P, const part_rec *r) {
  int rc = win_unbuild(st, P);
  P->count = r->count;
  P->folded = r->folded;
  P->rank = r->rank;
  P->wlen = r->wlen;
  P->wfront = r->wfront;
  P->dense = r->dense;
  return rc;
}

/* The kept rows of partitions ids[0..n) (NULL: 0..n-1), partition after
** partition, oldest first, as a row store. */
static int save_kept(const over_state *st, const int64_t *ids, int64_t n, dp_buf *out) {
  int64_t nkept = 0, k = 0;
  for (int64_t i = 0; i < n; i++) nkept += live_of(&st->pv[ids ? ids[i] : i]);
  int64_t *sel = malloc((size_t)(nkept + 1) * sizeof *sel);
  dp_batch *tmp = dp_batch_new(st->rows->schema, nkept);
  int rc = sel && tmp ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t i = 0; !rc && i < n; i++) {
    const over_part *P = &st->pv[ids ? ids[i] : i];
    for (int64_t j = P->head; j < P->len; j++) sel[k++] = P->keep[j];
  }
  if (!rc) rc = dp_batch_take(tmp, st->rows, sel, 0, nkept);
  if (!rc) rc = dp_rows_save(out, tmp);
  dp_batch_free(tmp);
  free(sel);
  return rc;
}

static int save_stream(dp_op *op, dp_buf *out) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  int64_t ng = dp_groups_count(&st->parts);
  int rc = dp_groups_save(out, &st->parts);
  dp_put_svar(out, st->next_rank);
  dp_put_svar(out, st->horizon);
  for (int64_t g = 0; g < ng; g++) put_part(out, &st->pv[g]);
  if (!rc) rc = save_kept(st, NULL, ng, out);
  for (int c = 0; !rc && st->run && c < p->u.over.ncalls; c++)
    if (st->skip[c] && !st->slide[c]) rc = dp_agg_state_save(&st->run[c], ng, out);
  return rc ? rc : save_tail(st, out, false);
}

/* A stream's whole state read into a fresh one (the stores cleared). */
static int load_stream(dp_op *op, dp_rd *in) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  free_stream(op);
  dp_batch_clear(st->rows);
  dp_batch_clear(st->pending);
  int rc = stream_setup(op);
  if (rc) return rc;
  if ((rc = dp_groups_load(in, &st->parts))) return dp_state_corrupt(op, rc, "its partitions");
  int64_t ng = dp_groups_count(&st->parts), nkept = 0;
  st->next_rank = dp_get_svar(in);
  st->horizon = dp_get_svar(in);
  if ((rc = reserve_pv(st, ng))) return dp_state_corrupt(op, rc, "its partitions");
  for (int64_t g = 0; g < ng && !in->bad; g++) {
    over_part *P = &st->pv[g];
    part_rec r;
    if (!get_part(st, in, &r)) break;
    set_part(st, P, &r);
    if (r.live > 0) {
      P->keep = malloc((size_t)r.live * sizeof *P->keep);
      if (!P->keep) return dp_state_corrupt(op, DIPPER_NOMEM, "its partitions");
      for (int64_t i = 0; i < r.live; i++) P->keep[i] = nkept++;
      P->len = P->cap = r.live;
    }
  }
  if (in->bad) return dp_state_corrupt(op, DIPPER_CORRUPT, "its partitions");
  if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its kept rows");
  if (st->rows->nrows != nkept) return dp_state_corrupt(op, DIPPER_CORRUPT, "its kept rows");
  for (int c = 0; st->run && c < p->u.over.ncalls; c++)
    if (st->skip[c] && !st->slide[c] && (rc = dp_agg_state_load(&st->run[c], ng, in)))
      return dp_state_corrupt(op, rc, "its running aggregates");
  if ((rc = reserve_parts(op, ng))) return dp_state_corrupt(op, rc, "its partitions");
  if ((rc = load_tail(op, in, ng))) return rc;
  if ((rc = load_indexes(op, ng))) return rc;
  mark_base(st);
  return DIPPER_OK;
}

/* A stream's delta: 'W' and the whole state after a renumbering of the
** partitions (a TTL expiry), else 'C' and what changed since the base: the
** partitions added (their keys), and for each partition changed (a release
** touched it, or its kept rows were pruned) its record, kept rows and
** running states; then the tail (save_tail: the pending rows whole, the TTL
** section as a delta).  O(partitions changed + their kept rows + pending
** rows + TTL keys written or gone), not O(partitions). */
static int save_stream_delta(dp_op *op, dp_buf *out) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  if (st->renumbered) {
    dp_put_u8(out, 'W');
    return save_stream(op, out);
  }
  dp_put_u8(out, 'C');
  if (st->ndirty > 1) qsort(st->dirty, (size_t)st->ndirty, sizeof *st->dirty, cmp_i64);
  int rc = dp_groups_save_from(out, &st->parts, st->base_parts);
  dp_put_svar(out, st->next_rank);
  dp_put_svar(out, st->horizon);
  dp_put_uvar(out, (uint64_t)st->ndirty);
  for (int64_t i = 0; i < st->ndirty; i++) {
    dp_put_uvar(out, (uint64_t)st->dirty[i]);
    put_part(out, &st->pv[st->dirty[i]]);
  }
  if (!rc) rc = save_kept(st, st->dirty, st->ndirty, out);
  for (int c = 0; !rc && st->run && c < p->u.over.ncalls; c++)
    for (int64_t i = 0; !rc && st->skip[c] && !st->slide[c] && i < st->ndirty; i++)
      rc = dp_agg_state_save_group(&st->run[c], st->dirty[i], out);
  return rc ? rc : save_tail(st, out, true);
}

/* save_stream_delta's 'C' applied to the state of its base. */
static int load_stream_changes(dp_op *op, dp_rd *in) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  int rc = dp_groups_load_more(in, &st->parts);
  if (rc) return dp_state_corrupt(op, rc, "its partitions added");
  int64_t ng = dp_groups_count(&st->parts);
  if ((rc = reserve_parts(op, ng))) return dp_state_corrupt(op, rc, "its partitions");
  st->next_rank = dp_get_svar(in);
  st->horizon = dp_get_svar(in);
  uint64_t nd = dp_get_uvar(in);
  if (in->bad || nd > (uint64_t)ng) return dp_state_corrupt(op, DIPPER_CORRUPT, "its partitions changed");
  int64_t *ids = malloc((size_t)(nd + 1) * sizeof *ids), *live = malloc((size_t)(nd + 1) * sizeof *live);
  dp_batch *tmp = dp_batch_new(st->rows->schema, 0);
  if (!ids || !live || !tmp) rc = DIPPER_NOMEM;
  int64_t nkept = 0;
  for (uint64_t i = 0; !rc && i < nd && !in->bad; i++) {
    uint64_t g = dp_get_uvar(in);
    part_rec r;
    if (g >= (uint64_t)ng || (i > 0 && (int64_t)g <= ids[i - 1])) in->bad = true;
    if (in->bad || !get_part(st, in, &r)) break;
    rc = set_part(st, &st->pv[g], &r);
    ids[i] = (int64_t)g;
    live[i] = r.live;
    nkept += r.live;
  }
  if (!rc && in->bad) rc = DIPPER_CORRUPT;
  if (!rc) rc = dp_rows_load(in, tmp);
  if (!rc && tmp->nrows != nkept) rc = DIPPER_CORRUPT;
  /* each changed partition's kept rows replaced by those of the delta */
  int64_t first = st->rows->nrows, at = 0;
  if (!rc) rc = dp_batch_take(st->rows, tmp, NULL, 0, tmp->nrows);
  if (!rc) rc = grow_flags(&st->hgone, &st->hgone_cap, st->rows->nrows);
  for (uint64_t i = 0; !rc && i < nd; i++) {
    over_part *P = &st->pv[ids[i]];
    for (int64_t j = P->head; j < P->len; j++) st->hgone[P->keep[j]] = 1;
    st->nhgone += P->len - P->head;
    P->head = P->len = 0;
    for (int64_t j = 0; !rc && j < live[i]; j++) rc = part_push(P, first + at++);
  }
  for (int c = 0; !rc && st->run && c < p->u.over.ncalls; c++)
    for (uint64_t i = 0; !rc && st->skip[c] && !st->slide[c] && i < nd; i++) {
      dp_agg_state_reset(&st->run[c], ids[i]);
      rc = dp_agg_state_load_group(&st->run[c], &st->acalls[c], ids[i], in);
    }
  free(ids);
  free(live);
  dp_batch_free(tmp);
  if (rc) return dp_state_corrupt(op, rc, "the change of its partitions");
  if (st->load_version == 2) { /* the list whole, in version 2's form */
    dp_state_ttl_free(&st->ttl);
    if (p->props.state_ttl[0] > 0 && (rc = dp_state_ttl_init(&st->ttl, p->props.state_ttl[0])))
      return dp_state_corrupt(op, rc, "its partitions' state TTL");
  }
  if ((rc = load_tail(op, in, ng))) return rc;
  if ((rc = compact_hist(st, ng, false))) return dp_state_corrupt(op, rc, "its kept rows");
  if ((rc = load_indexes(op, ng))) return rc;
  mark_base(st);
  return DIPPER_OK;
}

/* The blob's head (read_head reads it). */
static void save_head(const over_state *st, dp_buf *out) {
  dp_state_begin(out, OVER_STATE_VERSION);
  dp_put_u8(out, st->stream);
  dp_put_u8(out, st->emitted);
}

/* A bounded run's stores as they are: the base of the next delta. */
static void mark_logs(over_state *st) {
  dp_rowlog_mark(&st->rows_log, st->rows->nrows);
  dp_rowlog_mark(&st->pending_log, st->pending->nrows);
}

/* A save's code: the failure, or the buffer's. */
static int saved(int rc, const dp_buf *out) { return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK; }

static int save_store_delta(dp_buf *out, const dp_batch *rows, const dp_rowlog *log) {
  int64_t *at, nat;
  int rc = dp_rowlog_save(out, log, &at, &nat);
  free(at); /* no row changes in place */
  return rc ? rc : dp_rows_save_from(out, rows, dp_rowlog_first_new(log));
}

static int load_store_delta(dp_rd *in, dp_batch **rows) {
  int64_t n = (*rows)->nrows, *keep = NULL, nkeep = 0;
  dp_rowlog_delta d;
  int rc = dp_rowlog_load(in, n, &d);
  if (!rc && d.ndirty > 0) rc = DIPPER_CORRUPT;
  if (!rc) rc = dp_rowlog_keep(&d, n, &keep, &nkeep);
  if (!rc) rc = dp_rows_compact(rows, keep, nkeep);
  if (!rc) rc = dp_rows_load(in, *rows);
  if (rc == DIPPER_CORRUPT) in->bad = true;
  free(keep);
  dp_rowlog_delta_free(&d);
  return rc;
}

/* A whole state (delta false) or a delta since the last save or restore. */
static int save_blob(dp_op *op, dp_buf *out, bool delta) {
  over_state *st = op->state;
  save_head(st, out);
  int rc;
  if (st->stream) {
    rc = delta ? save_stream_delta(op, out) : save_stream(op, out);
    if (!rc) mark_base(st);
  } else if (delta) {
    rc = save_store_delta(out, st->rows, &st->rows_log);
    if (!rc) rc = save_store_delta(out, st->pending, &st->pending_log);
  } else {
    rc = dp_rows_save(out, st->rows);
    if (!rc) rc = dp_rows_save(out, st->pending);
  }
  if (!rc && !st->stream) mark_logs(st);
  return saved(rc, out);
}

static int over_save(dp_op *op, dp_buf *out) { return save_blob(op, out, false); }
static int over_save_delta(dp_op *op, dp_buf *out) { return save_blob(op, out, true); }

/* The blob's head: the version (check_version), the mode and `emitted`. */
static int read_head(dp_op *op, dp_rd *in) {
  over_state *st = op->state;
  int rc = check_version(op, in);
  if (rc) return rc;
  uint8_t stream = dp_get_u8(in), emitted = dp_get_u8(in);
  if (in->bad || stream != st->stream || emitted > 1)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted = emitted;
  return DIPPER_OK;
}

/* A whole state (delta false) or a delta on the state of its base. */
static int restore_blob(dp_op *op, dp_rd *in, bool delta) {
  over_state *st = op->state;
  int rc = read_head(op, in);
  if (rc) return rc;
  if (st->stream) {
    uint8_t kind = delta ? dp_get_u8(in) : 'W';
    if (in->bad || (kind != 'W' && kind != 'C')) return dp_state_corrupt(op, DIPPER_CORRUPT, "its kind");
    if ((rc = kind == 'W' ? load_stream(op, in) : load_stream_changes(op, in))) return rc;
    op->metrics.state_rows = stream_rows(st);
    return DIPPER_OK;
  }
  if (delta) {
    if ((rc = load_store_delta(in, &st->rows))) return dp_state_corrupt(op, rc, "the change of its rows");
    if ((rc = load_store_delta(in, &st->pending)))
      return dp_state_corrupt(op, rc, "the change of its pending rows");
  } else {
    dp_batch_clear(st->rows);
    dp_batch_clear(st->pending);
    if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its rows");
    if ((rc = dp_rows_load(in, st->pending))) return dp_state_corrupt(op, rc, "its pending rows");
  }
  op->metrics.state_rows = st->rows->nrows + st->pending->nrows;
  mark_logs(st);
  return DIPPER_OK;
}

static int over_restore(dp_op *op, dp_rd *in) { return restore_blob(op, in, false); }
static int over_restore_delta(dp_op *op, dp_rd *in) { return restore_blob(op, in, true); }

const dp_op_class dp_op_over = {"Over",         over_open,       over_next,
                                over_end_batch, over_close,      over_save,
                                over_restore,   over_save_delta, over_restore_delta};
