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
** sliding one is folded afresh for each row.
**
** Over a stream (ORDER BY an event-time column, ascending) rows wait until
** the watermark reaches them and are then computed with the rows emitted
** before that later frames can still reach (all of them for frames that
** start UNBOUNDED PRECEDING, n rows per partition for ROWS n, the last x µs
** for RANGE x): each row leaves once, with the frame it has when released.
** Rows at or before the watermark on arrival are late (Spark's `<=`),
** dropped and counted.  A bounded input in streaming mode ordered by event
** time runs this way too.
** Ordered by processing time (PROCTIME()), rows are computed as they arrive.
** With a state TTL ('table.exec.state.ttl', STATE_TTL) on a stream, a
** partition that received no row for that long, in processing time, forgets
** its history before the next batch's input (state_ttl.h; the partitions by
** id in `parts`): its next row is computed as the first of a new partition
** (a running SUM starts again).  Rows still waiting for the watermark stay.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/agg_func.h"
#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/rows.h"
#include "exec/state_ttl.h"

typedef struct over_state {
  dp_batch *rows;    /* bounded: every row; stream: the rows already emitted still needed */
  bool stream;       /* ordered by an event-time column, rows released by the watermark */
  int time_col;      /* stream: the input column of the first ORDER BY key */
  bool proctime;     /* stream: ordered by processing time: every row is ready at once */
  int64_t keep_rows; /* stream: rows per partition a frame can reach back (-1: all) */
  int64_t keep_time; /* stream: µs a RANGE frame reaches back (-1: all) */
  dp_batch *pending; /* stream: rows the watermark has not reached */
  dp_rowlog rows_log, pending_log; /* their changes since the last checkpoint (rows.h) */
  bool drained, emitted;
  dp_batch *result;  /* input columns + calls, in output order */
  int64_t cursor;
  dp_batch *out;
  /* stream with a state TTL (ttl.ttl > 0): the partitions' keys by id, in
  ** order of their last row (state_ttl.h) */
  dp_schema part_schema;
  dp_groups parts;
  dp_state_ttl ttl;
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
  return rc;
}

/* Before the batch's input: the partitions idle for the TTL forget their
** history (found at the cost of what expires; a pass over the history only
** in a batch where one expired). */
static int expire_parts(dp_op *op) {
  over_state *st = op->state;
  int64_t *keep = NULL, nkeep = 0, *drop = NULL, ndrop = 0, ng = dp_groups_count(&st->parts);
  int rc = dp_state_ttl_expire_compact(&st->ttl, op->ex->batch_start_time, ng, &keep, &nkeep,
                                       &drop, &ndrop);
  if (rc || ndrop == 0) return rc;
  int64_t n = st->rows->nrows, nrows = 0;
  uint8_t *gone = calloc((size_t)ng, 1);
  int64_t *sel = malloc((size_t)(n ? n : 1) * sizeof *sel);
  dp_vector *pv[64];
  rc = gone && sel ? eval_parts(op, st->rows, pv) : DIPPER_NOMEM;
  for (int64_t k = 0; !rc && k < ndrop; k++) gone[drop[k]] = 1;
  for (int64_t r = 0; !rc && r < n; r++) {
    int64_t g = dp_groups_find(&st->parts, (const dp_vector *const *)pv, r);
    if (g < 0 || !gone[g]) sel[nrows++] = r;
  }
  if (gone && sel) free_parts(op->plan, pv);
  if (!rc && nrows < n) {
    dp_batch *kept = dp_batch_new(st->rows->schema, 0);
    rc = kept ? dp_batch_take(kept, st->rows, sel, 0, nrows) : DIPPER_NOMEM;
    if (!rc) {
      dp_batch_free(st->rows);
      st->rows = kept;
      dp_rowlog_clear(&st->rows_log); /* the history laid out afresh */
    } else {
      dp_batch_free(kept);
    }
  }
  if (!rc) rc = dp_groups_compact(&st->parts, keep, nkeep);
  free(gone);
  free(sel);
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
  if (!st->stream || st->proctime) return dp_rows_append(st->stream ? st->pending : st->rows, b);
  /* Rows at or before the late watermark (the previous batch's) may come
  ** after rows of their time were emitted: late, dropped and counted
  ** (Spark's rule: late when event time <= watermark). */
  int64_t wm = op->ex->late_watermark;
  const dp_vector *t = b->cols[st->time_col];
  int64_t *keep = malloc((size_t)(b->nrows ? b->nrows : 1) * sizeof *keep);
  if (!keep) return DIPPER_NOMEM;
  int64_t n = 0;
  for (int64_t r = 0; r < b->nrows; r++) {
    if (wm != DP_WATERMARK_NONE && (dp_vector_is_null(t, r) || dp_vector_get_i64(t, r) <= wm)) {
      op->metrics.late_dropped++;
      continue;
    }
    keep[n++] = r;
  }
  int rc = dp_batch_take(st->pending, b, keep, 0, n);
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

static bool is_agg(const dp_over_call *c) { return c->fn->kind == DP_FN_AGGREGATE; }

/* One aggregate call over every position's frame, appended to res. */
static int run_agg(dp_op *op, const layout *L, const dp_over_call *call, dp_vector *res) {
  dp_exec *ex = op->ex;
  over_state *st = op->state;
  const dp_batch *in = st->rows;
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
static int run_window_fn(dp_op *op, const layout *L, const dp_over_call *call, dp_vector *res) {
  over_state *st = op->state;
  int id = call->fn->id;
  int rc = DIPPER_OK;
  if (id == DP_F_LAG || id == DP_F_LEAD) {
    int64_t off;
    if ((rc = const_int(op, call->nargs > 1 ? call->args[1] : NULL, 1, &off))) return rc;
    dp_vector *arg = NULL, *dflt = NULL;
    rc = dp_eval(op->ex, call->args[0], st->rows, &arg);
    if (!rc && call->nargs > 2) rc = dp_eval(op->ex, call->args[2], st->rows, &dflt);
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

static int build_layout(dp_op *op, layout *L) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  const dp_batch *in = st->rows;
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
  for (int k = 0; !rc && k < np; k++) {
    rc = dp_eval(op->ex, p->u.over.partition[k], in, &pv[k]);
    if (!rc) ks.cols[k] = (dp_field){"p", pv[k]->type};
  }
  if (!rc) rc = dp_groups_init(&parts, &ks);
  for (int64_t r = 0; !rc && r < n; r++) {
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

/* Compute every call over st->rows into `dst`. */
static int compute_into(dp_op *op, dp_batch *dst, layout *L) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  int rc = build_layout(op, L);
  int nin = st->rows->ncols;
  for (int c = 0; !rc && c < nin; c++)
    rc = dp_vector_take(dst->cols[c], st->rows->cols[c], L->ord, 0, L->n);
  for (int c = 0; !rc && c < p->u.over.ncalls; c++) {
    const dp_over_call *call = &p->u.over.calls[c];
    dp_vector *res = dst->cols[nin + c];
    rc = is_agg(call) ? run_agg(op, L, call, res) : run_window_fn(op, L, call, res);
  }
  if (!rc) rc = dp_batch_sync(dst);
  return rc;
}

/* Compute every call over the whole input into st->result. */
static int compute(dp_op *op) {
  over_state *st = op->state;
  layout L;
  int rc = compute_into(op, st->result, &L);
  free_layout(op->plan, &L);
  return rc;
}

/* The history trimmed to rows keep[0..nkeep) of n, in the layout's order:
** when that is the rows' own order the log records the rows dropped, else
** the history was laid out afresh. */
static int log_trim(dp_rowlog *log, const int64_t *keep, int64_t nkeep, int64_t n) {
  for (int64_t k = 1; k < nkeep; k++)
    if (keep[k] < keep[k - 1]) {
      dp_rowlog_clear(log);
      return DIPPER_OK;
    }
  int64_t *drop = malloc((size_t)(n - nkeep + 1) * sizeof *drop), nd = 0;
  if (!drop) return DIPPER_NOMEM;
  for (int64_t r = 0, k = 0; r < n; r++) {
    if (k < nkeep && keep[k] == r) k++;
    else drop[nd++] = r;
  }
  int rc = dp_rowlog_drop(log, drop, nd);
  free(drop);
  return rc;
}

/* Stream: release the pending rows the watermark has reached.  They are
** computed together with the kept history (whose results left earlier), and
** only their own results leave; then the history is trimmed to what later
** frames can reach. */
static int release(dp_op *op) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  int64_t wm = op->ex->final || st->proctime ? DP_WATERMARK_END : op->ex->watermark;
  if (wm == DP_WATERMARK_NONE) return DIPPER_OK;
  int64_t np = st->pending->nrows, nready = 0, nwait = 0, nhist = st->rows->nrows;
  size_t sz = (size_t)(np ? np : 1) * sizeof(int64_t);
  int64_t *ready = malloc(sz), *wait = malloc(sz);
  dp_batch *still = dp_batch_new(st->pending->schema, 0);
  dp_batch *all = dp_batch_new(&p->schema, 0);
  int rc = ready && wait && still && all ? DIPPER_OK : DIPPER_NOMEM;
  const dp_vector *t = st->pending->cols[st->time_col];
  for (int64_t r = 0; !rc && r < np; r++) {
    if (wm == DP_WATERMARK_END || dp_vector_get_i64(t, r) <= wm)
      ready[nready++] = r;
    else
      wait[nwait++] = r;
  }
  layout L;
  memset(&L, 0, sizeof L);
  if (!rc && nready > 0) {
    rc = dp_batch_take(st->rows, st->pending, ready, 0, nready);
    if (!rc) rc = dp_batch_take(still, st->pending, wait, 0, nwait);
    if (!rc) rc = dp_rowlog_drop(&st->pending_log, ready, nready);
    if (!rc) rc = compute_into(op, all, &L);
    /* the new rows' results, in (partition, time) order */
    int64_t nsel = 0;
    int64_t *sel = !rc ? malloc((size_t)(L.n ? L.n : 1) * sizeof *sel) : NULL;
    if (!rc && !sel) rc = DIPPER_NOMEM;
    for (int64_t k = 0; !rc && k < L.n; k++)
      if (L.ord[k] >= nhist) sel[nsel++] = k;
    if (!rc) rc = dp_batch_take(st->result, all, sel, 0, nsel);
    /* trim: keep, per partition, what a later row's frame can reach */
    if (!rc && (st->keep_rows >= 0 || st->keep_time >= 0)) {
      int64_t *keep = malloc((size_t)(L.n ? L.n : 1) * sizeof *keep), nkeep = 0;
      dp_batch *hist = dp_batch_new(st->rows->schema, 0);
      if (!keep || !hist) rc = DIPPER_NOMEM;
      const dp_vector *ht = st->rows->cols[st->time_col];
      for (int64_t k = 0; !rc && k < L.n; k++) {
        int64_t r = L.ord[k];
        bool by_rows = st->keep_rows >= 0 && L.pend[k] - k <= st->keep_rows;
        bool by_time = st->keep_time >= 0 && dp_vector_get_i64(ht, r) >= wm - st->keep_time;
        if (by_rows || by_time) keep[nkeep++] = r;
      }
      if (!rc) rc = dp_batch_take(hist, st->rows, keep, 0, nkeep);
      if (!rc) rc = log_trim(&st->rows_log, keep, nkeep, L.n);
      if (!rc) {
        dp_batch_free(st->rows);
        st->rows = hist;
        hist = NULL;
      }
      dp_batch_free(hist);
      free(keep);
    }
    free(sel);
    if (!rc) {
      dp_batch_free(st->pending);
      st->pending = still;
      still = NULL;
    }
  }
  if (L.ord) free_layout(p, &L);
  dp_batch_free(still);
  dp_batch_free(all);
  free(ready);
  free(wait);
  return rc;
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
      op->metrics.state_rows = st->rows->nrows + st->pending->nrows;
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
  op->metrics.state_rows = st->rows->nrows + (st->pending ? st->pending->nrows : 0);
  return DIPPER_OK;
}

static void over_close(dp_op *op) {
  over_state *st = op->state;
  if (!st) return;
  dp_batch_free(st->rows);
  dp_batch_free(st->pending);
  dp_rowlog_free(&st->rows_log);
  dp_rowlog_free(&st->pending_log);
  dp_batch_free(st->result);
  dp_batch_free(st->out);
  dp_groups_free(&st->parts);
  dp_state_ttl_free(&st->ttl);
  free(st);
  op->state = NULL;
}

/* 'state.backend' = 'rocksdb' is refused: this operator keeps its state in
** memory only (state_rocks.h serves joins, aggregations, deduplications). */
static int refuse_rocks(dp_op *op) {
  if (!op->ex->query || !op->ex->query->streaming || !dp_exec_state_rocks(op->ex)) return DIPPER_OK;
  return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, op->plan->span,
                  "'state.backend' = 'rocksdb' does not take the %s operator (line %d) yet: it "
                  "keeps its state in memory only; set 'state.backend' = 'hashmap' for this "
                  "query",
                  "OVER (window function)", (int)op->plan->span.line);
}

/* A stream with a state TTL: the partitions' table and the list. */
static int ttl_setup(dp_op *op) {
  over_state *st = op->state;
  const dp_plan *p = op->plan;
  int64_t ttl = st->stream ? p->props.state_ttl[0] : 0;
  if (!st->stream) return DIPPER_OK;
  if (p->u.over.npartition > 64 && ttl <= 0) return DIPPER_OK;
  if (p->u.over.npartition > 64)
    return dp_error(op->ex->diags, DIPPER_LIMIT, p->span,
                    "an OVER with a state TTL takes at most 64 PARTITION BY expressions");
  int np = p->u.over.npartition;
  st->part_schema.ncols = np;
  st->part_schema.cols = dp_arena_calloc(op->ex->arena, (size_t)np + 1, sizeof(dp_field));
  if (!st->part_schema.cols) return DIPPER_NOMEM;
  for (int k = 0; k < np; k++) {
    st->part_schema.cols[k].name = "partition";
    st->part_schema.cols[k].type = p->u.over.partition[k]->type;
  }
  if (ttl <= 0) return DIPPER_OK; /* the schema alone: a restore reads a section past */
  int rc = dp_groups_init(&st->parts, &st->part_schema);
  return rc ? rc : dp_state_ttl_init(&st->ttl, ttl);
}

static int over_open(dp_op *op) {
  int rc0 = refuse_rocks(op);
  if (rc0) return rc0;
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
      if (p->u.over.calls[c].fn->kind == DP_FN_WINDOW && p->u.over.calls[c].fn->id != DP_F_LAG)
        stream = false;
  }
  if (stream && !by_time)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "the embedded engine runs OVER on a stream only ordered ascending by a time "
                    "attribute (an event-time column: rows leave as the watermark passes them; "
                    "or PROCTIME(): rows leave as they arrive); order by it, "
                    "or run the query in batch mode (SET 'execution.runtime-mode' = 'batch')");
  /* How far back a later row's frame can reach, to trim the kept history. */
  int64_t keep_rows = -1, keep_time = -1;
  if (stream && p->u.over.has_frame && p->u.over.lower >= 0) {
    if (p->u.over.rows) keep_rows = p->u.over.lower;
    else keep_time = p->u.over.lower;
  }
  for (int c = 0; stream && c < p->u.over.ncalls; c++) {
    int id = p->u.over.calls[c].fn->id;
    if (p->u.over.calls[c].fn->kind != DP_FN_WINDOW) continue;
    if (id != DP_F_LAG)
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->u.over.calls[c].span,
                      "%s(..) OVER (..) on a stream needs rows that have not arrived yet or the "
                      "whole partition; use an aggregate or LAG, or run in batch mode",
                      p->u.over.calls[c].fn->name);
    keep_rows = keep_time = -1; /* LAG reaches back by rows: keep the history */
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
  st->keep_rows = keep_rows;
  st->keep_time = keep_time;
  if (st->proctime) st->keep_time = -1; /* the clock, not the watermark: keep by rows or all */
  st->rows = dp_batch_new(&in->schema, 0);
  st->pending = dp_batch_new(&in->schema, 0);
  st->result = dp_batch_new(&p->schema, 0);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  int rc = !st->rows || !st->pending || !st->result || !st->out ? DIPPER_NOMEM : ttl_setup(op);
  if (rc) over_close(op);
  return rc;
}

/* ---- checkpoints ----
** Blob, version 1:
**   version:u8  stream:u8  emitted:u8  rows (rows.h's row store: bounded,
**   every row; stream, the history later frames reach)  pending (the rows
**   the watermark has not reached; none when bounded)
** Delta (save_delta), the same version:  version:u8  stream:u8  emitted:u8
**   per store, rows then pending: its log (rows.h: the rows released from
**   pending, the history trimmed, by base position; all of them once a
**   bounded run emitted) and the rows added since.
** A batch costs the rows it added, released and trimmed; but a trim that
** lays the history out in another order (several partitions: the layout
** sorts by partition) writes the history whole, which a frame of n rows or
** x µs keeps small; a history that is not trimmed (LAG, UNBOUNDED
** PRECEDING) only grows at its end.
** With a state TTL (a stream), whole and delta alike end with 'P', the
** partitions (rows.h's group table, by id, whole) and state_ttl.h's
** section; at the blob's end, so that a blob without it (written before
** the TTL was set) reads as before: its partitions, found again from the
** rows kept, count as written at the restart. */
#define OVER_STATE_VERSION 1

static int save_parts(const over_state *st, dp_buf *out) {
  if (st->ttl.ttl <= 0) return DIPPER_OK;
  dp_put_u8(out, 'P');
  int rc = dp_groups_save(out, &st->parts);
  dp_state_ttl_save_section(&st->ttl, out);
  return rc;
}

/* The rest of a blob: save_parts' section, or (none) the partitions of the
** rows restored, every one written at the restart. */
static int load_parts(dp_op *op, dp_rd *in) {
  over_state *st = op->state;
  if (st->ttl.ttl <= 0 && dp_rd_left(in) == 0) return DIPPER_OK;
  int rc = DIPPER_OK;
  if (dp_rd_left(in) == 0) {
    dp_groups_free(&st->parts);
    dp_state_ttl_free(&st->ttl);
    rc = dp_groups_init(&st->parts, &st->part_schema);
    if (!rc) rc = dp_state_ttl_init(&st->ttl, op->plan->props.state_ttl[0]);
    if (!rc) rc = touch_parts(op, st->rows);
    if (!rc) rc = touch_parts(op, st->pending);
    return rc;
  }
  dp_groups fresh;
  memset(&fresh, 0, sizeof fresh);
  if (dp_get_u8(in) != 'P' || st->part_schema.cols == NULL) in->bad = true;
  rc = in->bad ? DIPPER_CORRUPT : dp_groups_init(&fresh, &st->part_schema);
  if (!rc) rc = dp_groups_load(in, &fresh);
  if (!rc) rc = dp_state_ttl_load_section(&st->ttl, in, dp_groups_count(&fresh),
                                          op->ex->batch_start_time);
  if (!rc && st->ttl.ttl > 0) {
    dp_groups_free(&st->parts);
    st->parts = fresh;
  } else {
    dp_groups_free(&fresh);
  }
  return rc ? dp_state_corrupt(op, rc, "its partitions' state TTL") : DIPPER_OK;
}

static int over_save(dp_op *op, dp_buf *out) {
  over_state *st = op->state;
  dp_state_begin(out, OVER_STATE_VERSION);
  dp_put_u8(out, st->stream);
  dp_put_u8(out, st->emitted);
  int rc = dp_rows_save(out, st->rows);
  if (!rc) rc = dp_rows_save(out, st->pending);
  if (!rc) rc = save_parts(st, out);
  if (!rc) {
    dp_rowlog_mark(&st->rows_log, st->rows->nrows);
    dp_rowlog_mark(&st->pending_log, st->pending->nrows);
  }
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

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

static int over_save_delta(dp_op *op, dp_buf *out) {
  over_state *st = op->state;
  dp_state_begin(out, OVER_STATE_VERSION);
  dp_put_u8(out, st->stream);
  dp_put_u8(out, st->emitted);
  int rc = save_store_delta(out, st->rows, &st->rows_log);
  if (!rc) rc = save_store_delta(out, st->pending, &st->pending_log);
  if (!rc) rc = save_parts(st, out);
  if (!rc) {
    dp_rowlog_mark(&st->rows_log, st->rows->nrows);
    dp_rowlog_mark(&st->pending_log, st->pending->nrows);
  }
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int over_restore_delta(dp_op *op, dp_rd *in) {
  over_state *st = op->state;
  int rc = dp_state_check(op, in, OVER_STATE_VERSION);
  if (rc) return rc;
  uint8_t stream = dp_get_u8(in), emitted = dp_get_u8(in);
  if (in->bad || stream != st->stream || emitted > 1)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted = emitted;
  if ((rc = load_store_delta(in, &st->rows))) return dp_state_corrupt(op, rc, "the change of its rows");
  if ((rc = load_store_delta(in, &st->pending)))
    return dp_state_corrupt(op, rc, "the change of its pending rows");
  if ((rc = load_parts(op, in))) return rc;
  op->metrics.state_rows = st->rows->nrows + st->pending->nrows;
  dp_rowlog_mark(&st->rows_log, st->rows->nrows);
  dp_rowlog_mark(&st->pending_log, st->pending->nrows);
  return DIPPER_OK;
}

static int over_restore(dp_op *op, dp_rd *in) {
  over_state *st = op->state;
  int rc = dp_state_check(op, in, OVER_STATE_VERSION);
  if (rc) return rc;
  uint8_t stream = dp_get_u8(in), emitted = dp_get_u8(in);
  if (in->bad || stream != st->stream || emitted > 1)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted = emitted;
  if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its rows");
  if ((rc = dp_rows_load(in, st->pending))) return dp_state_corrupt(op, rc, "its pending rows");
  if ((rc = load_parts(op, in))) return rc;
  op->metrics.state_rows = st->rows->nrows + st->pending->nrows;
  dp_rowlog_mark(&st->rows_log, st->rows->nrows);
  dp_rowlog_mark(&st->pending_log, st->pending->nrows);
  return DIPPER_OK;
}

const dp_op_class dp_op_over = {"Over",         over_open,       over_next,
                                over_end_batch, over_close,      over_save,
                                over_restore,   over_save_delta, over_restore_delta};
