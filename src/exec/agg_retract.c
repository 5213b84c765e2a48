/*
** agg_retract.c — AGGREGATE over an updating input (changelog.h): a plain
** GROUP BY whose input rows come with change kinds, as Flink's group
** aggregation over a retract stream.
**
** Per group: the net count of rows (+I/+U add one, -U/-D take one away) and
** per call a retractable state — COUNT(*) the row count, COUNT(x) the
** count of non-NULL x, SUM(x) and AVG(x) that count and the sum of x (a
** retraction subtracts).  MIN(x) and MAX(x) keep the multiset of the
** group's values (agg_multiset.h, Flink's MinWithRetract: value -> count),
** so that taking the extreme value's last copy away finds the next one; a
** DISTINCT COUNT, SUM or AVG keeps it too and folds a value in when its
** count becomes positive and out when it returns to 0 (Flink's distinct
** view).  FIRST_VALUE, LAST_VALUE and LISTAGG keep the group's values in
** arrival order (agg_vlist.h, Flink's *WithRetract functions): a
** retraction takes back its value's oldest copy; with DISTINCT the list
** gets a value when its multiset count turns positive and loses it when
** the count returns to 0.  The other aggregates are refused over an updating input by the
** plan validator (dp_analyze_retract_refusal), and again by open for a plan
** built by the API.
**
** A micro-batch folds every input row in, marking the groups it touches;
** at its end each touched group's result is compared with the one last
** emitted (kept per group beside the live states): a group that had no rows
** and now has some emits +I; one whose rows all went emits -D of the old
** result (and its states return to empty: a later row starts it afresh);
** one that changed emits -U old, +U new; an unchanged result emits nothing.
** With a state TTL (table.exec.state.ttl, state_ttl.h) every row that
** reaches a group writes it; a group not written for the TTL is dropped
** without output before a micro-batch reads its input (its states empty, as
** an emptied group's), and a retraction of a group without rows is dropped,
** as Flink's GroupAggFunction drops one without an accumulator.
** So a transient retraction inside one micro-batch (the -U/+U pair of an
** upstream group moving) nets out before anything is emitted.
**
** Checkpoints: the whole state after end_batch (then "last emitted" equals
** the live states): the group keys (vector_codec), per group its row count
** and per call its count and sum, then each multiset (dp_multiset_save),
** then each value list (dp_vlist_save), then the TTL section (version 4;
** nothing without a TTL; a version 3 state under a TTL counts each live
** group as written at the restart).  A
** restore re-inserts the keys in their order.  A group whose rows all went keeps its key (with zero
** counts) until the query restarts without it; its bytes are the key's.
*/
#include <stdlib.h>
#include <string.h>

#include "core/vector_codec.h"
#include "exec/agg_multiset.h"
#include "exec/agg_vlist.h"
#include "exec/changelog.h"
#include "exec/eval.h"
#include "exec/hashtable.h"
#include "exec/state_ttl.h"
#include "plan/analyze.h"

#define STATE_VERSION 4 /* 3: the same without the TTL section; 2: without value lists; 1: without multisets either */

typedef struct ra_vals {
  int64_t *cnt;    /* per group: rows (COUNT(*)) or non-NULL arguments */
  int64_t *isum;   /* integer sums */
  double *fsum;    /* floating sums (and AVG's) */
} ra_vals;

typedef struct ra_call {
  const dp_agg_call *call;
  bool star;       /* COUNT(*) */
  bool count;      /* COUNT(x) */
  bool fsum;       /* the sum is kept as a double (a float argument, or AVG) */
  bool avg;
  bool minmax;     /* MIN or MAX: the result is the multiset's extreme */
  bool multi;      /* keeps `ms` (MIN, MAX, a DISTINCT aggregate) */
  dp_multiset ms;
  bool listed;     /* FIRST_VALUE, LAST_VALUE, LISTAGG: the result is `vl`'s */
  dp_vlist vl;
  ra_vals now, emitted;
} ra_call;

typedef struct ra_state {
  int ngroup, naggs;
  dp_hashtable ht;
  bool has_ht;
  int64_t ngroups, gcap;
  int64_t *rows, *rows_emitted; /* net rows per group */
  int64_t nlive;                /* groups with rows_emitted > 0: kept, not counted per batch */
  ra_call *calls;
  uint8_t *touched;             /* per group: in `list` this batch */
  int64_t *list, nlist, lcap;
  int64_t *ids;
  uint64_t *hashes;
  int64_t scap;
  dp_batch *out;
  bool done;
  dp_state_ttl ttl;             /* ttl.ttl > 0: the groups by last write (state_ttl.h) */
} ra_state;

static void vals_free(ra_vals *v) {
  free(v->cnt);
  free(v->isum);
  free(v->fsum);
}

static void ra_close(dp_op *op) {
  ra_state *st = op->state;
  if (!st) return;
  if (st->has_ht) dp_ht_free(&st->ht);
  for (int a = 0; st->calls && a < st->naggs; a++) {
    vals_free(&st->calls[a].now);
    vals_free(&st->calls[a].emitted);
    if (st->calls[a].multi) dp_multiset_free(&st->calls[a].ms);
    if (st->calls[a].listed) dp_vlist_free(&st->calls[a].vl);
  }
  free(st->calls);
  free(st->rows);
  free(st->rows_emitted);
  free(st->touched);
  free(st->list);
  free(st->ids);
  free(st->hashes);
  dp_batch_free(st->out);
  dp_state_ttl_free(&st->ttl);
  free(st);
  op->state = NULL;
}

static int grow(void *pp, int64_t old, int64_t n, size_t elem) {
  char *p;
  memcpy(&p, pp, sizeof p);
  char *g = realloc(p, (size_t)n * elem);
  if (!g) return DIPPER_NOMEM;
  memset(g + (size_t)old * elem, 0, (size_t)(n - old) * elem);
  memcpy(pp, &g, sizeof g);
  return DIPPER_OK;
}

static int grow_vals(ra_vals *v, int64_t old, int64_t n) {
  if (grow(&v->cnt, old, n, sizeof *v->cnt) || grow(&v->isum, old, n, sizeof *v->isum) ||
      grow(&v->fsum, old, n, sizeof *v->fsum))
    return DIPPER_NOMEM;
  return DIPPER_OK;
}

/* Room for groups [0, n). */
static int grow_groups(ra_state *st, int64_t n) {
  if (n <= st->gcap) return DIPPER_OK;
  int64_t cap = st->gcap ? st->gcap : 64;
  while (cap < n) cap *= 2;
  int64_t old = st->gcap;
  if (grow(&st->rows, old, cap, sizeof *st->rows) ||
      grow(&st->rows_emitted, old, cap, sizeof *st->rows_emitted) ||
      grow(&st->touched, old, cap, sizeof *st->touched) || grow(&st->list, old, cap, sizeof *st->list))
    return DIPPER_NOMEM;
  for (int a = 0; a < st->naggs; a++)
    if (grow_vals(&st->calls[a].now, old, cap) || grow_vals(&st->calls[a].emitted, old, cap) ||
        (st->calls[a].multi && dp_multiset_reserve(&st->calls[a].ms, cap)) ||
        (st->calls[a].listed && dp_vlist_reserve(&st->calls[a].vl, cap)))
      return DIPPER_NOMEM;
  st->gcap = cap;
  return DIPPER_OK;
}

static int open_state(dp_op *op) {
  const dp_plan *p = op->plan;
  ra_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  st->ngroup = p->u.aggregate.ngroup;
  st->naggs = p->u.aggregate.naggs;
  st->calls = calloc((size_t)(st->naggs ? st->naggs : 1), sizeof *st->calls);
  if (!st->calls) return DIPPER_NOMEM;
  for (int a = 0; a < st->naggs; a++) {
    const dp_agg_call *c = &p->u.aggregate.aggs[a];
    const char *why = dp_analyze_retract_refusal(c);
    if (why)
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, c->span,
                      "%s over an updating input: %s", c->fn->name, why);
    ra_call *rc = &st->calls[a];
    rc->call = c;
    rc->star = c->fn->id == DP_F_COUNT && c->nargs == 0;
    rc->count = c->fn->id == DP_F_COUNT && c->nargs > 0;
    rc->avg = c->fn->id == DP_F_AVG;
    rc->fsum = rc->avg || (c->nargs > 0 && !dp_type_is_integer(c->args[0]->type));
    rc->minmax = c->fn->id == DP_F_MIN || c->fn->id == DP_F_MAX;
    if (rc->minmax || c->distinct) {
      if (dp_multiset_init(&rc->ms, c->args[0]->type,
                           !rc->minmax ? 0 : c->fn->id == DP_F_MAX ? 1 : -1) != DIPPER_OK) {
        dp_multiset_free(&rc->ms);
        return DIPPER_NOMEM;
      }
      rc->multi = true;
    }
    int id = c->fn->id;
    if (id == DP_F_FIRST_VALUE || id == DP_F_LAST_VALUE || id == DP_F_LISTAGG) {
      dp_vlist_kind k = id == DP_F_FIRST_VALUE  ? DP_VLIST_FIRST
                        : id == DP_F_LAST_VALUE ? DP_VLIST_LAST
                                                : DP_VLIST_LISTAGG;
      if (dp_vlist_init(&rc->vl, c->args[0]->type, k) != DIPPER_OK) {
        dp_vlist_free(&rc->vl);
        return DIPPER_NOMEM;
      }
      rc->listed = true;
    }
  }
  if (st->ngroup > 64)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "an aggregation over an updating input takes at most 64 group keys, this "
                    "one has %d", st->ngroup);
  const dp_type *types[64];
  for (int i = 0; i < st->ngroup; i++) types[i] = p->schema.cols[i].type;
  if (st->ngroup > 0) {
    if (dp_ht_init(&st->ht, st->ngroup, types) != DIPPER_OK) return DIPPER_NOMEM;
    st->has_ht = true;
  }
  st->out = dp_batch_new(&p->schema, 0);
  if (!st->out || !(st->out->change = dp_vector_new(dp_type_of(DP_T_TINYINT), 0)))
    return DIPPER_NOMEM;
  if (p->props.state_ttl[0] > 0 && dp_state_ttl_init(&st->ttl, p->props.state_ttl[0]))
    return DIPPER_NOMEM;
  if (dp_exec_state_rocks(op->ex))
    dp_exec_note(op->ex, "the aggregation over an updating input at line %u keeps its state in "
                         "memory: 'state.backend' = 'rocksdb' does not cover it yet",
                 p->span.line);
  return DIPPER_OK;
}

/* An open that fails cleans up after itself (exec.c never closes it). */
static int ra_open(dp_op *op) {
  int rc = open_state(op);
  if (rc != DIPPER_OK) ra_close(op);
  return rc;
}

/* ids[r] = the group of every row of `in`. */
static int find_groups(dp_op *op, const dp_batch *in) {
  ra_state *st = op->state;
  int64_t n = in->nrows;
  if (n > st->scap) {
    int64_t *ids = realloc(st->ids, (size_t)n * sizeof *ids);
    if (ids) st->ids = ids;
    uint64_t *h = realloc(st->hashes, (size_t)n * sizeof *h);
    if (h) st->hashes = h;
    if (!ids || !h) return DIPPER_NOMEM;
    st->scap = n;
  }
  if (st->ngroup == 0) {
    memset(st->ids, 0, (size_t)n * sizeof *st->ids);
    if (st->ngroups == 0) st->ngroups = 1;
    return grow_groups(st, 1);
  }
  dp_vector *keys[64] = {0};
  int rc = DIPPER_OK;
  for (int j = 0; j < st->ngroup && !rc; j++)
    rc = dp_eval(op->ex, op->plan->u.aggregate.group[j], in, &keys[j]);
  if (!rc) {
    dp_ht_hash((const dp_vector *const *)keys, st->ngroup, n, st->hashes);
    rc = dp_ht_find_or_insert(&st->ht, (const dp_vector *const *)keys, st->hashes, NULL, n,
                              st->ids, NULL);
  }
  for (int j = 0; j < st->ngroup; j++) dp_vector_free(keys[j]);
  if (rc) return rc;
  st->ngroups = st->ht.ngroups;
  return grow_groups(st, st->ngroups);
}

/* The multiset of call c: rows whose argument counts (non-NULL, passing the
** filter) go in and out of it; a DISTINCT aggregate then folds a value in
** (or out) only when its count turns positive (or returns to 0), as the
** sign that `eff` gets; MIN and MAX read the multiset's extreme. */
static int fold_multi(ra_state *st, ra_call *c, const dp_vector *arg, const dp_vector *mask,
                      const int8_t *sign, int8_t *eff, int64_t nrows) {
  int64_t *rows = malloc((size_t)(nrows ? nrows : 1) * sizeof *rows);
  int8_t *moved = malloc((size_t)(nrows ? nrows : 1));
  int rc = rows && moved ? DIPPER_OK : DIPPER_NOMEM;
  int64_t n = 0;
  for (int64_t r = 0; r < nrows && !rc; r++) {
    eff[r] = 0;
    if (!sign[r]) continue; /* a retraction consume() dropped */
    if (mask && (dp_vector_is_null(mask, r) || !dp_vector_get_bool(mask, r))) continue;
    if (!dp_vector_is_null(arg, r)) rows[n++] = r;
  }
  if (!rc) rc = dp_multiset_update(&c->ms, arg, st->ids, rows, n, sign, moved);
  for (int64_t i = 0; i < n && !rc; i++) eff[rows[i]] = c->minmax ? sign[rows[i]] : moved[i];
  free(rows);
  free(moved);
  return rc;
}

/* The value list of call c (FIRST_VALUE, LAST_VALUE, LISTAGG): the rows
** whose argument counts, in order, each added (+1) or taken back (-1); a
** DISTINCT call's sign is the multiset's move (0: not a change of the list). */
static int fold_list(dp_op *op, ra_call *c, const dp_batch *in, const dp_vector *arg,
                     const dp_vector *mask, const int8_t *sign) {
  ra_state *st = op->state;
  int rc = DIPPER_OK;
  if (c->call->nargs > 1 && !c->vl.sep) {
    /* LISTAGG's separator: the first row's that is not NULL stays. */
    dp_vector *sepv = NULL;
    rc = dp_eval(op->ex, c->call->args[1], in, &sepv);
    for (int64_t r = 0; r < in->nrows && !rc; r++) {
      if (dp_vector_is_null(sepv, r)) continue;
      size_t n;
      const char *p = dp_vector_get_str(sepv, r, &n);
      rc = dp_vlist_set_sep(&c->vl, p, n);
      break;
    }
    dp_vector_free(sepv);
    if (rc) return rc;
  }
  int64_t *rows = malloc((size_t)(in->nrows ? in->nrows : 1) * sizeof *rows);
  if (!rows) return DIPPER_NOMEM;
  int64_t n = 0;
  for (int64_t r = 0; r < in->nrows; r++) {
    if (!sign[r] || dp_vector_is_null(arg, r)) continue;
    if (mask && (dp_vector_is_null(mask, r) || !dp_vector_get_bool(mask, r))) continue;
    rows[n++] = r;
  }
  rc = dp_vlist_update(&c->vl, arg, st->ids, rows, n, sign);
  free(rows);
  return rc;
}

/* Fold call a's argument over the batch's rows, each +1 or -1 (sign). */
static int fold_call(dp_op *op, ra_call *c, const dp_batch *in, const int8_t *sign) {
  ra_state *st = op->state;
  const dp_agg_call *call = c->call;
  dp_vector *arg = NULL, *mask = NULL;
  int8_t *eff = NULL;
  int rc = DIPPER_OK;
  if (call->filter) rc = dp_eval(op->ex, call->filter, in, &mask);
  if (!rc && call->nargs > 0) rc = dp_eval(op->ex, call->args[0], in, &arg);
  if (!rc && c->multi) {
    /* Every row the multiset did not take gets 0: the loop below skips it. */
    eff = malloc((size_t)(in->nrows ? in->nrows : 1));
    rc = eff ? fold_multi(st, c, arg, mask, sign, eff, in->nrows) : DIPPER_NOMEM;
    sign = eff;
  }
  if (!rc && c->listed) rc = fold_list(op, c, in, arg, mask, sign);
  for (int64_t r = 0; r < in->nrows && !rc; r++) {
    if (c->listed) break;
    if (!sign[r] || (eff && !eff[r])) continue;
    if (mask && (dp_vector_is_null(mask, r) || !dp_vector_get_bool(mask, r))) continue;
    int64_t g = st->ids[r];
    if (c->star) {
      c->now.cnt[g] += sign[r];
      continue;
    }
    if (dp_vector_is_null(arg, r)) continue;
    c->now.cnt[g] += sign[r];
    if (c->count) continue;
    if (c->fsum)
      c->now.fsum[g] += sign[r] * (dp_type_is_integer(arg->type) ? (double)dp_vector_get_i64(arg, r)
                                                                 : dp_vector_get_f64(arg, r));
    else
      c->now.isum[g] += sign[r] * dp_vector_get_i64(arg, r);
  }
  dp_vector_free(arg);
  dp_vector_free(mask);
  free(eff);
  return rc;
}

static int settle(ra_state *st, int64_t g);

static int consume(dp_op *op, const dp_batch *in) {
  ra_state *st = op->state;
  op->metrics.rows_in += in->nrows;
  int rc = find_groups(op, in);
  if (rc) return rc;
  int8_t *sign = malloc((size_t)in->nrows);
  if (!sign) return DIPPER_NOMEM;
  int64_t now = op->ex->batch_start_time;
  for (int64_t r = 0; r < in->nrows && !rc; r++) {
    sign[r] = dp_change_retracts(dp_change_of(in, r)) ? -1 : 1;
    int64_t g = st->ids[r];
    /* A retraction of a group without rows (one its TTL dropped) is
       dropped, as Flink's GroupAggFunction drops one without an
       accumulator; any other row writes its group (OnCreateAndWrite). */
    if (sign[r] < 0 && st->rows[g] <= 0) sign[r] = 0;
    else if (st->ttl.ttl > 0) rc = dp_state_ttl_touch(&st->ttl, g, now);
    st->rows[g] += sign[r];
    if (!st->touched[g]) {
      st->touched[g] = 1;
      st->list[st->nlist++] = g;
    }
  }
  for (int a = 0; a < st->naggs && !rc; a++) rc = fold_call(op, &st->calls[a], in, sign);
  free(sign);
  return rc;
}

/* table.exec.state.ttl: drop, without output, every group not written for
** the TTL before this micro-batch reads its input (Flink never returns an
** expired state); a later row starts the group afresh (+I), and a
** retraction for it is dropped (consume). */
static int expire(ra_state *st, int64_t now) {
  if (st->ttl.ttl <= 0) return DIPPER_OK;
  int64_t *ids = NULL, n = 0;
  int rc = dp_state_ttl_expire(&st->ttl, now, &ids, &n);
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t g = ids[i];
    if (g < 0 || g >= st->ngroups) continue;
    st->nlive -= st->rows_emitted[g] > 0;
    st->rows[g] = 0;
    rc = settle(st, g);
  }
  free(ids);
  return rc;
}

/* Append group g's result under `rows` / `v` to the output, as `kind`: the
** one last emitted (old) or the one now. */
static int put_result(ra_state *st, int64_t g, const ra_vals *const *v, int kind, bool old) {
  dp_batch *out = st->out;
  int rc = DIPPER_OK;
  for (int j = 0; j < st->ngroup && !rc; j++)
    rc = dp_vector_append_from(out->cols[j], st->ht.keys[j], g);
  for (int a = 0; a < st->naggs && !rc; a++) {
    const ra_call *c = &st->calls[a];
    dp_vector *col = out->cols[st->ngroup + a];
    int64_t cnt = v[a]->cnt[g];
    bool fl = col->phys == DP_PHYS_F64 || col->phys == DP_PHYS_F32;
    if (c->listed) {
      rc = dp_vlist_put(&st->calls[a].vl, g, old, col);
    } else if (c->minmax) {
      ra_call *mc = &st->calls[a];
      int64_t pair = old ? mc->ms.shown[g] : dp_multiset_best(&mc->ms, g);
      rc = pair < 0 ? dp_vector_append_null(col)
                    : dp_vector_append_from(col, mc->ms.ht.keys[1], pair);
    } else if (c->star || c->count)
      rc = dp_vector_append_i64(col, cnt);
    else if (cnt == 0)
      rc = dp_vector_append_null(col);
    else if (c->avg)
      rc = fl ? dp_vector_append_f64(col, v[a]->fsum[g] / (double)cnt)
              : dp_vector_append_i64(col, (int64_t)(v[a]->fsum[g] / (double)cnt));
    else if (c->fsum)
      rc = fl ? dp_vector_append_f64(col, v[a]->fsum[g]) : dp_vector_append_i64(col, (int64_t)v[a]->fsum[g]);
    else
      rc = fl ? dp_vector_append_f64(col, (double)v[a]->isum[g]) : dp_vector_append_i64(col, v[a]->isum[g]);
  }
  if (!rc) rc = dp_vector_append_i64(out->change, kind);
  if (!rc) out->nrows++;
  return rc;
}

/* Group g's result now is the one last emitted: the values put_result
** gives, compared as Flink compares the rows (a 0 added to a SUM, or a row
** that leaves an AVG where it was, changes nothing that is emitted). */
static bool same_result(ra_state *st, int64_t g) {
  for (int a = 0; a < st->naggs; a++) {
    ra_call *c = &st->calls[a];
    if (c->listed) {
      if (dp_vlist_changed(&c->vl, g)) return false;
      continue;
    }
    if (c->minmax) {
      if (dp_multiset_changed(&c->ms, g)) return false;
      continue;
    }
    int64_t cn = c->now.cnt[g], ce = c->emitted.cnt[g];
    if (c->star || c->count) {
      if (cn != ce) return false;
      continue;
    }
    if ((cn == 0) != (ce == 0)) return false;
    if (cn == 0) continue; /* NULL both times */
    const dp_vector *col = st->out->cols[st->ngroup + a];
    bool fl = col->phys == DP_PHYS_F64 || col->phys == DP_PHYS_F32;
    double dn, de;
    if (c->avg) {
      dn = c->now.fsum[g] / (double)cn;
      de = c->emitted.fsum[g] / (double)ce;
    } else if (c->fsum) {
      dn = c->now.fsum[g];
      de = c->emitted.fsum[g];
    } else if (c->now.isum[g] != c->emitted.isum[g]) {
      return false;
    } else {
      continue;
    }
    if (fl ? dn != de : (int64_t)dn != (int64_t)de) return false;
  }
  return true;
}

/* Group g as emitted = as now (an emptied group starts afresh). */
static int settle(ra_state *st, int64_t g) {
  int rc = DIPPER_OK;
  if (st->rows[g] <= 0) {
    st->rows[g] = 0;
    for (int a = 0; a < st->naggs; a++) {
      st->calls[a].now.cnt[g] = 0;
      st->calls[a].now.isum[g] = 0;
      st->calls[a].now.fsum[g] = 0;
      if (st->calls[a].multi) dp_multiset_clear(&st->calls[a].ms, g);
      if (st->calls[a].listed) dp_vlist_clear(&st->calls[a].vl, g);
    }
  }
  st->rows_emitted[g] = st->rows[g];
  for (int a = 0; a < st->naggs; a++) {
    ra_call *c = &st->calls[a];
    if (c->multi) dp_multiset_settle(&c->ms, g);
    if (c->listed && !rc) rc = dp_vlist_settle(&c->vl, g);
    c->emitted.cnt[g] = c->now.cnt[g];
    c->emitted.isum[g] = c->now.isum[g];
    c->emitted.fsum[g] = c->now.fsum[g];
  }
  return rc;
}

static int emit(ra_state *st) {
  const ra_vals *now[64], *old[64];
  const ra_vals **vn = st->naggs <= 64 ? now : calloc((size_t)st->naggs, sizeof *vn);
  const ra_vals **vo = st->naggs <= 64 ? old : calloc((size_t)st->naggs, sizeof *vo);
  int rc = vn && vo ? DIPPER_OK : DIPPER_NOMEM;
  for (int a = 0; a < st->naggs && !rc; a++) {
    vn[a] = &st->calls[a].now;
    vo[a] = &st->calls[a].emitted;
  }
  for (int64_t k = 0; k < st->nlist && !rc; k++) {
    int64_t g = st->list[k];
    st->touched[g] = 0;
    bool had = st->rows_emitted[g] > 0, has = st->rows[g] > 0;
    st->nlive += (int64_t)has - (int64_t)had;
    if (!had && has) rc = put_result(st, g, vn, DP_CHANGE_INSERT, false);
    else if (had && !has) rc = put_result(st, g, vo, DP_CHANGE_DELETE, true);
    else if (had && has && !same_result(st, g)) {
      rc = put_result(st, g, vo, DP_CHANGE_UPDATE_BEFORE, true);
      if (!rc) rc = put_result(st, g, vn, DP_CHANGE_UPDATE_AFTER, false);
    }
    int src = settle(st, g);
    if (!rc) rc = src;
    if (st->rows[g] == 0 && st->ttl.ttl > 0) dp_state_ttl_remove(&st->ttl, g); /* emptied */
  }
  st->nlist = 0;
  if (vn != now) free(vn);
  if (vo != old) free(vo);
  return rc;
}

static int ra_next(dp_op *op, dp_batch **out) {
  ra_state *st = op->state;
  *out = NULL;
  if (st->done) return DIPPER_OK;
  int rc = expire(st, op->ex->batch_start_time);
  if (!rc) rc = dp_op_drain(op->children[0], consume, op);
  if (rc) return rc;
  st->done = true;
  dp_batch_clear(st->out);
  if ((rc = emit(st))) return rc;
  op->metrics.state_rows = st->nlive;
  if (st->out->nrows == 0) return DIPPER_OK;
  op->metrics.rows_out += st->out->nrows;
  *out = st->out;
  return DIPPER_OK;
}

static int ra_end_batch(dp_op *op) {
  ra_state *st = op->state;
  st->done = false;
  int rc = DIPPER_OK;
  for (int a = 0; a < st->naggs && !rc; a++)
    if (st->calls[a].multi) rc = dp_multiset_compact(&st->calls[a].ms, 1024);
  for (int a = 0; a < st->naggs && !rc; a++)
    if (st->calls[a].listed) rc = dp_vlist_compact(&st->calls[a].vl, 1024);
  return rc;
}

/* ---- checkpoints ---- */

static int ra_save(dp_op *op, dp_buf *out) {
  ra_state *st = op->state;
  dp_put_u8(out, STATE_VERSION);
  dp_put_uvar(out, (uint64_t)st->ngroups);
  for (int j = 0; j < st->ngroup; j++) {
    int rc = dp_vector_encode(st->ht.keys[j], 0, st->ngroups, out);
    if (rc) return rc;
  }
  for (int64_t g = 0; g < st->ngroups; g++) {
    dp_put_svar(out, st->rows[g]);
    for (int a = 0; a < st->naggs; a++) {
      const ra_call *c = &st->calls[a];
      dp_put_svar(out, c->now.cnt[g]);
      dp_put_svar(out, c->now.isum[g]);
      dp_put_f64(out, c->now.fsum[g]);
    }
  }
  for (int a = 0; a < st->naggs; a++) {
    if (!st->calls[a].multi) continue;
    int rc = dp_multiset_save(&st->calls[a].ms, out);
    if (rc) return rc;
  }
  for (int a = 0; a < st->naggs; a++) {
    if (!st->calls[a].listed) continue;
    int rc = dp_vlist_save(&st->calls[a].vl, out);
    if (rc) return rc;
  }
  dp_state_ttl_save_section(&st->ttl, out); /* nothing without a TTL */
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static bool has_multisets(const ra_state *st) {
  for (int a = 0; a < st->naggs; a++)
    if (st->calls[a].multi) return true;
  return false;
}

static bool has_lists(const ra_state *st) {
  for (int a = 0; a < st->naggs; a++)
    if (st->calls[a].listed) return true;
  return false;
}

static int load(ra_state *st, dp_rd *in, int64_t now) {
  int version = dp_get_u8(in);
  bool ok = version == STATE_VERSION || version == 3 || (version == 2 && !has_lists(st)) ||
            (version == 1 && !has_lists(st) && !has_multisets(st));
  if (!ok) return DIPPER_CORRUPT;
  if (st->ngroups != 0) return DIPPER_CORRUPT;
  int64_t n = (int64_t)dp_get_count(in, 1);
  if (in->bad) return DIPPER_CORRUPT;
  if (st->ngroup == 0 && n > 1) return DIPPER_CORRUPT;
  for (int j = 0; j < st->ngroup; j++) {
    if (dp_vector_decode(in, st->ht.keys[j]) != DIPPER_OK) return DIPPER_CORRUPT;
    if (st->ht.keys[j]->length != n) return DIPPER_CORRUPT;
  }
  if (st->ngroup > 0) {
    int64_t dup = -1;
    int rc = dp_ht_add_appended(&st->ht, n, &dup);
    if (rc) return rc;
    if (dup >= 0) return DIPPER_CORRUPT;
  }
  st->ngroups = n;
  int rc = grow_groups(st, n);
  if (rc) return rc;
  for (int64_t g = 0; g < n && !in->bad; g++) {
    st->rows[g] = dp_get_svar(in);
    for (int a = 0; a < st->naggs; a++) {
      ra_call *c = &st->calls[a];
      c->now.cnt[g] = dp_get_svar(in);
      c->now.isum[g] = dp_get_svar(in);
      c->now.fsum[g] = dp_get_f64(in);
    }
  }
  for (int a = 0; a < st->naggs && !in->bad; a++) {
    if (!st->calls[a].multi || version == 1) continue;
    if ((rc = dp_multiset_load(&st->calls[a].ms, n, in))) return rc;
  }
  for (int a = 0; a < st->naggs && !in->bad; a++) {
    if (!st->calls[a].listed) continue;
    if ((rc = dp_vlist_load(&st->calls[a].vl, n, in))) return rc;
  }
  for (int64_t g = 0; g < n && !in->bad; g++) {
    if ((rc = settle(st, g))) return rc;
    st->nlive += st->rows[g] > 0;
  }
  /* Before version 4 no TTL section: with a TTL now, every group counts as
     written at the restart. */
  if (in->bad) return DIPPER_CORRUPT;
  if (version >= 4 || st->ttl.ttl > 0) {
    if (version < 4)
      for (int64_t g = 0; g < n && !rc; g++)
        if (st->rows[g] > 0) rc = dp_state_ttl_touch(&st->ttl, g, now);
    if (version >= 4) rc = dp_state_ttl_load_section(&st->ttl, in, n, now);
    if (rc) return rc;
  }
  return dp_rd_done(in) ? DIPPER_OK : DIPPER_CORRUPT;
}

static int ra_restore(dp_op *op, dp_rd *in) {
  int rc = load(op->state, in, op->ex->batch_start_time);
  if (rc == DIPPER_CORRUPT)
    return dp_error(op->ex->diags, DIPPER_CORRUPT, op->plan->span,
                    "cannot restore the aggregation over an updating input from the "
                    "checkpoint: its state is damaged or of another version; start the query "
                    "with a new checkpoint folder");
  return rc;
}

const dp_op_class dp_op_agg_retract = {
    .name = "RetractAggregate",
    .open = ra_open,
    .next = ra_next,
    .end_batch = ra_end_batch,
    .close = ra_close,
    .save_state = ra_save,
    .restore_state = ra_restore,
};
