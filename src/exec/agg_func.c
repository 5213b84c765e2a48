/*
** agg_func.c — the aggregate function states of agg_func.h: update a batch
** at a time, merge, finish, compact.
*/
#include "exec/agg_func.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "core/grow.h"
#include "core/vector_codec.h"
#include "exec/eval.h"
#include "exec/hashtable.h"

enum {
  AGG_COUNT_STAR,
  AGG_COUNT,
  AGG_SUM_INT,   /* integers and INTERVAL DAY TO SECOND / YEAR TO MONTH: int64 */
  AGG_SUM_DBL,
  AGG_SUM_DEC,
  AGG_AVG_DBL,
  AGG_AVG_DEC,
  AGG_MIN_INT,   /* integers, temporal kinds, booleans (as 0/1) */
  AGG_MAX_INT,
  AGG_MIN_DBL,
  AGG_MAX_DBL,
  AGG_MIN_DEC,
  AGG_MAX_DEC,
  AGG_MIN_ANY,   /* strings and the rest: kept in the store */
  AGG_MAX_ANY,
  AGG_FIRST,
  AGG_LAST,
  AGG_LISTAGG,
  AGG_COLLECT,
  AGG_VAR_POP,
  AGG_VAR_SAMP,
  AGG_STDDEV_POP,
  AGG_STDDEV_SAMP,
  AGG_BOOL_AND,
  AGG_BOOL_OR,
  AGG_HLL,
};

#define HLL_P 10
#define HLL_M (1 << HLL_P)

struct agg_strbuf {
  char *p;
  int64_t len, cap;
  bool has;
};

static bool is_int_phys(dp_phys p) { return p >= DP_PHYS_I8 && p <= DP_PHYS_I64; }

int dp_agg_state_init(dp_agg_state *s, const dp_agg_call *call) {
  memset(s, 0, sizeof *s);
  s->type = call->type;
  s->arg_type = call->nargs > 0 ? call->args[0]->type : NULL;
  dp_phys ap = s->arg_type ? dp_phys_of(s->arg_type) : DP_PHYS_NULL;
  s->arg_scale = s->arg_type ? s->arg_type->scale : 0;
  s->res_scale = call->type ? call->type->scale : 0;
  bool is_min = false;
  if (call->fn->cfunc) return dp_agg_cfunc_init(s, call);
  switch ((dp_func_id)call->fn->id) {
  case DP_F_COUNT: s->kind = call->nargs == 0 ? AGG_COUNT_STAR : AGG_COUNT; break;
  case DP_F_SUM:
    s->kind = ap == DP_PHYS_D128 ? AGG_SUM_DEC : (ap == DP_PHYS_F32 || ap == DP_PHYS_F64) ? AGG_SUM_DBL
                                                                                       : AGG_SUM_INT;
    break;
  case DP_F_AVG: s->kind = ap == DP_PHYS_D128 ? AGG_AVG_DEC : AGG_AVG_DBL; break;
  case DP_F_MIN: is_min = true; /* fall through */
  case DP_F_MAX:
    if (is_int_phys(ap) || ap == DP_PHYS_BIT)
      s->kind = is_min ? AGG_MIN_INT : AGG_MAX_INT;
    else if (ap == DP_PHYS_F32 || ap == DP_PHYS_F64)
      s->kind = is_min ? AGG_MIN_DBL : AGG_MAX_DBL;
    else if (ap == DP_PHYS_D128)
      s->kind = is_min ? AGG_MIN_DEC : AGG_MAX_DEC;
    else
      s->kind = is_min ? AGG_MIN_ANY : AGG_MAX_ANY;
    break;
  case DP_F_FIRST_VALUE: s->kind = AGG_FIRST; break;
  case DP_F_LAST_VALUE: s->kind = AGG_LAST; break;
  case DP_F_LISTAGG: s->kind = AGG_LISTAGG; break;
  case DP_F_COLLECT: s->kind = AGG_COLLECT; break;
  case DP_F_VAR_POP: s->kind = AGG_VAR_POP; break;
  case DP_F_VAR_SAMP: s->kind = AGG_VAR_SAMP; break;
  case DP_F_STDDEV_POP: s->kind = AGG_STDDEV_POP; break;
  case DP_F_STDDEV_SAMP: s->kind = AGG_STDDEV_SAMP; break;
  case DP_F_BOOL_AND: s->kind = AGG_BOOL_AND; break;
  case DP_F_BOOL_OR: s->kind = AGG_BOOL_OR; break;
  case DP_F_APPROX_COUNT_DISTINCT: s->kind = AGG_HLL; break;
  default: return DIPPER_UNSUPPORTED;
  }
  if (s->kind == AGG_MIN_ANY || s->kind == AGG_MAX_ANY || s->kind == AGG_FIRST || s->kind == AGG_LAST ||
      s->kind == AGG_COLLECT) {
    s->store = dp_vector_new(s->arg_type, 0);
    if (!s->store) return DIPPER_NOMEM;
  }
  return DIPPER_OK;
}

static bool uses_store(const dp_agg_state *s) { return s->store != NULL; }

void dp_agg_state_free(dp_agg_state *s) {
  if (!s) return;
  if (s->bufs)
    for (int64_t g = 0; g < s->cap; g++) free(s->bufs[g].p);
  if (s->regs)
    for (int64_t g = 0; g < s->cap; g++) free(s->regs[g]);
  free(s->n);
  free(s->i);
  free(s->d);
  free(s->d2);
  free(s->x);
  free(s->bufs);
  free(s->sep);
  free(s->regs);
  dp_vector_free(s->store);
  free(s->idx);
  free(s->tail);
  free(s->next);
  free(s->cand);
  free(s->touched);
  free(s->patched);
  if (s->cfunc) dp_agg_cfunc_free(s);
  memset(s, 0, sizeof *s);
}

/* realloc an array of `elem`-byte entries from oldn to newn, zeroing the
** new part from `from` on (the entries below it the caller writes). */
static int grow_from(void *pp, int64_t oldn, int64_t newn, int64_t from, size_t elem) {
  void **p = pp;
  void *q = realloc(*p, (size_t)newn * elem);
  if (!q) return DIPPER_NOMEM;
  /* the new part is zeroed or loaded next: its pages in one call */
  if (newn > oldn) dp_prefault((char *)q + (size_t)oldn * elem, (size_t)(newn - oldn) * elem);
  if (from < oldn) from = oldn;
  if (from < newn) memset((char *)q + (size_t)from * elem, 0, (size_t)(newn - from) * elem);
  *p = q;
  return DIPPER_OK;
}

static int grow(void *pp, int64_t oldn, int64_t newn, size_t elem) {
  return grow_from(pp, oldn, newn, oldn, elem);
}

void dp_agg_state_reset(dp_agg_state *s, int64_t g) {
  if (s->n) s->n[g] = 0;
  if (s->i) s->i[g] = 0;
  if (s->d) s->d[g] = 0;
  if (s->d2) s->d2[g] = 0;
  if (s->x) s->x[g] = 0;
  if (s->bufs) {
    s->bufs[g].len = 0;
    s->bufs[g].has = false;
  }
  if (s->regs && s->regs[g]) memset(s->regs[g], 0, HLL_M);
  if (s->idx) s->idx[g] = -1;
  if (s->tail) s->tail[g] = -1;
  if (s->cand) s->cand[g] = -1;
  if (s->cfunc) dp_agg_cfunc_reset(s, g);
}

/* dp_agg_state_reserve, but the plain number columns (n, i, d, d2, x) of
** groups below `filled` are left unzeroed: a load writes them all. */
static int reserve_to(dp_agg_state *s, int64_t cap, int64_t filled);

/* The per-group arrays a kind keeps besides `n` (what reserve grows).  The
** saved layout follows the kind, never whether an array is allocated yet: a
** state that never held a group has none, and one emptied by eviction has
** them, yet both save the same bytes. */
enum { ARR_I = 1, ARR_D = 2, ARR_D2 = 4, ARR_X = 8 };

static unsigned arrays_of(int kind) {
  switch (kind) {
  case AGG_SUM_INT:
  case AGG_MIN_INT:
  case AGG_MAX_INT:
  case AGG_BOOL_AND:
  case AGG_BOOL_OR: return ARR_I;
  case AGG_SUM_DBL:
  case AGG_AVG_DBL:
  case AGG_MIN_DBL:
  case AGG_MAX_DBL: return ARR_D;
  case AGG_VAR_POP:
  case AGG_VAR_SAMP:
  case AGG_STDDEV_POP:
  case AGG_STDDEV_SAMP: return ARR_D | ARR_D2;
  case AGG_SUM_DEC:
  case AGG_AVG_DEC:
  case AGG_MIN_DEC:
  case AGG_MAX_DEC: return ARR_X;
  default: return 0;
  }
}

static int reserve(dp_agg_state *s, int64_t ngroups, int64_t filled) {
  if (ngroups <= s->cap) return DIPPER_OK;
  int64_t cap = s->cap ? s->cap : 64;
  while (cap < ngroups) cap *= 2;
  return reserve_to(s, cap, filled);
}

int dp_agg_state_reserve_restore(dp_agg_state *s, int64_t ngroups, int64_t loaded) {
  if (ngroups < 0 || loaded < 0 || loaded > ngroups) return DIPPER_MISUSE;
  return ngroups > s->cap ? reserve_to(s, ngroups, loaded) : DIPPER_OK;
}

/* Every array of the state at `cap` entries (from s->cap, which is less). */
static int reserve_to(dp_agg_state *s, int64_t cap, int64_t filled) {
  int64_t old = s->cap;
  int rc = grow_from(&s->n, old, cap, filled, sizeof *s->n);
  switch (s->kind) {
  case AGG_SUM_INT:
  case AGG_MIN_INT:
  case AGG_MAX_INT:
  case AGG_BOOL_AND:
  case AGG_BOOL_OR: if (!rc) rc = grow_from(&s->i, old, cap, filled, sizeof *s->i); break;
  case AGG_SUM_DBL:
  case AGG_AVG_DBL:
  case AGG_MIN_DBL:
  case AGG_MAX_DBL: if (!rc) rc = grow_from(&s->d, old, cap, filled, sizeof *s->d); break;
  case AGG_VAR_POP:
  case AGG_VAR_SAMP:
  case AGG_STDDEV_POP:
  case AGG_STDDEV_SAMP:
    if (!rc) rc = grow_from(&s->d, old, cap, filled, sizeof *s->d);
    if (!rc) rc = grow_from(&s->d2, old, cap, filled, sizeof *s->d2);
    break;
  case AGG_SUM_DEC:
  case AGG_AVG_DEC:
  case AGG_MIN_DEC:
  case AGG_MAX_DEC: if (!rc) rc = grow_from(&s->x, old, cap, filled, sizeof *s->x); break;
  case AGG_LISTAGG: if (!rc) rc = grow(&s->bufs, old, cap, sizeof *s->bufs); break;
  case AGG_HLL: if (!rc) rc = grow(&s->regs, old, cap, sizeof *s->regs); break;
  default: break;
  }
  if (!rc && uses_store(s)) {
    rc = grow(&s->idx, old, cap, sizeof *s->idx);
    if (!rc && s->kind == AGG_COLLECT) rc = grow(&s->tail, old, cap, sizeof *s->tail);
    if (!rc) rc = grow(&s->cand, old, cap, sizeof *s->cand);
    if (!rc)
      for (int64_t g = old; g < cap; g++) {
        s->idx[g] = -1;
        s->cand[g] = -1;
        if (s->tail) s->tail[g] = -1;
      }
  }
  if (!rc && s->cfunc) rc = dp_agg_cfunc_grow(s, old, cap);
  if (rc) return rc; /* the arrays that grew keep their size: cap stays, which is safe */
  s->cap = cap;
  return DIPPER_OK;
}

int dp_agg_state_reserve(dp_agg_state *s, int64_t ngroups) { return reserve(s, ngroups, 0); }

/* Any numeric row as a double (VAR/STDDEV/AVG take DOUBLE, but a caller that
** skipped the cast still gets the right number). */
static double num_at(const dp_vector *v, int64_t r, int scale) {
  switch (v->phys) {
  case DP_PHYS_F32:
  case DP_PHYS_F64: return dp_vector_get_f64(v, r);
  case DP_PHYS_D128: return (double)dp_vector_get_dec(v, r) / pow(10, scale);
  default: return (double)dp_vector_get_i64(v, r);
  }
}

static inline bool valid(const dp_vector *v, int64_t r) {
  return !v->validity || dp_bit_get(v->validity, r);
}

static int buf_append(agg_strbuf *b, const char *p, size_t n) {
  if (dp_grow(&b->p, &b->cap, b->len + (int64_t)n, 1, 32)) return DIPPER_NOMEM;
  if (n) memcpy(b->p + b->len, p, n);
  b->len += (int64_t)n;
  return DIPPER_OK;
}

static int hll_add(dp_agg_state *s, int64_t g, uint64_t h) {
  if (!s->regs[g]) {
    s->regs[g] = calloc(HLL_M, 1);
    if (!s->regs[g]) return DIPPER_NOMEM;
  }
  unsigned reg = (unsigned)(h >> (64 - HLL_P));
  uint64_t rest = h << HLL_P;
  /* Rank: leading zeros of the remaining 54 bits, plus one. */
  uint8_t rank = 1;
  while (rank <= 64 - HLL_P && !(rest & (UINT64_C(1) << 63))) {
    rank++;
    rest <<= 1;
  }
  if (rank > s->regs[g][reg]) s->regs[g][reg] = rank;
  return DIPPER_OK;
}

static int64_t hll_estimate(const uint8_t *regs) {
  if (!regs) return 0;
  double sum = 0;
  int zeros = 0;
  for (int k = 0; k < HLL_M; k++) {
    sum += ldexp(1.0, -(int)regs[k]);
    if (!regs[k]) zeros++;
  }
  double m = HLL_M, alpha = 0.7213 / (1 + 1.079 / m);
  double e = alpha * m * m / sum;
  if (e <= 2.5 * m && zeros) e = m * log(m / zeros);
  return (int64_t)llround(e);
}

static int touch(dp_agg_state *s, int64_t g, int64_t *ntouched) {
  if (dp_grow(&s->touched, &s->touched_cap, *ntouched + 1, sizeof *s->touched, 256))
    return DIPPER_NOMEM;
  s->touched[(*ntouched)++] = g;
  return DIPPER_OK;
}

/* COLLECT is about to set next[row], -1 until now: a row of the base
** changes, which the next delta must carry. */
static int note_patch(dp_agg_state *s, int64_t row) {
  if (row >= s->base_rows) return DIPPER_OK;
  if (dp_grow(&s->patched, &s->patched_cap, s->npatched + 1, sizeof *s->patched, 64))
    return DIPPER_NOMEM;
  s->patched[s->npatched++] = row;
  return DIPPER_OK;
}

static int store_append(dp_agg_state *s, const dp_vector *v, int64_t r, int64_t *row_out) {
  int rc = dp_vector_take(s->store, v, &r, 0, 1);
  if (rc) return rc;
  *row_out = s->store->length - 1;
  if (s->kind == AGG_COLLECT) {
    if (dp_grow(&s->next, &s->next_cap, s->store->length, sizeof *s->next, 256))
      return DIPPER_NOMEM;
    s->next[*row_out] = -1;
  }
  return DIPPER_OK;
}

/* MIN/MAX of strings and nested values, FIRST, LAST: pick one batch row per
** group (cand), then compare it with the stored one and store it if better. */
static int update_pick(dp_agg_state *s, const dp_vector *v, const int64_t *gids, const int64_t *rows,
                       int64_t n) {
  int64_t ntouched = 0;
  int rc = DIPPER_OK;
  int sign = s->kind == AGG_MIN_ANY ? -1 : 1;
  for (int64_t k = 0; k < n && !rc; k++) {
    int64_t r = rows ? rows[k] : k;
    if (!valid(v, r)) continue;
    int64_t g = gids[r];
    int64_t c = s->cand[g];
    s->n[g]++;
    if (c < 0) {
      if (s->kind == AGG_FIRST && s->idx[g] >= 0) continue;
      s->cand[g] = r;
      rc = touch(s, g, &ntouched);
    } else if (s->kind == AGG_LAST) {
      s->cand[g] = r;
    } else if (s->kind != AGG_FIRST && dp_ht_row_compare(v, r, v, c) * sign > 0) {
      s->cand[g] = r;
    }
  }
  for (int64_t t = 0; t < ntouched; t++) {
    int64_t g = s->touched[t], r = s->cand[g];
    s->cand[g] = -1;
    if (rc) continue;
    bool take = s->idx[g] < 0 || s->kind == AGG_LAST ||
                (s->kind != AGG_FIRST && dp_ht_row_compare(v, r, s->store, s->idx[g]) * sign > 0);
    if (take) rc = store_append(s, v, r, &s->idx[g]);
  }
  return rc;
}

static int update_collect(dp_agg_state *s, const dp_vector *v, const int64_t *gids, const int64_t *rows,
                          int64_t n) {
  for (int64_t k = 0; k < n; k++) {
    int64_t r = rows ? rows[k] : k;
    if (!valid(v, r)) continue;
    int64_t g = gids[r], at;
    s->n[g]++;
    int rc = store_append(s, v, r, &at);
    if (!rc && s->tail[g] >= 0) rc = note_patch(s, s->tail[g]);
    if (rc) return rc;
    if (s->tail[g] < 0)
      s->idx[g] = at;
    else
      s->next[s->tail[g]] = at;
    s->tail[g] = at;
  }
  return DIPPER_OK;
}

int dp_agg_state_update(dp_agg_state *s, const dp_vector *const *args, const int64_t *gids,
                        const int64_t *rows, int64_t n) {
  if (s->cfunc) return dp_agg_cfunc_update(s, args, gids, rows, n);
  const dp_vector *v = s->kind == AGG_COUNT_STAR ? NULL : args[0];
  int64_t *cnt = s->n;
#define EACH_ROW(...)                                                           \
  for (int64_t k = 0; k < n; k++) {                                            \
    int64_t r = rows ? rows[k] : k;                                            \
    if (v && !valid(v, r)) continue;                                           \
    int64_t g = gids[r];                                                       \
    __VA_ARGS__;                                                               \
  }
  switch (s->kind) {
  case AGG_COUNT_STAR:
    if (rows)
      for (int64_t k = 0; k < n; k++) cnt[gids[rows[k]]]++;
    else
      for (int64_t k = 0; k < n; k++) cnt[gids[k]]++;
    return DIPPER_OK;
  case AGG_COUNT: EACH_ROW(cnt[g]++) return DIPPER_OK;
  case AGG_SUM_INT:
    if (v->phys == DP_PHYS_I64) {
      const int64_t *x = v->values;
      EACH_ROW(s->i[g] = (int64_t)((uint64_t)s->i[g] + (uint64_t)x[r]); cnt[g]++)
    } else {
      EACH_ROW(s->i[g] = (int64_t)((uint64_t)s->i[g] + (uint64_t)dp_vector_get_i64(v, r)); cnt[g]++)
    }
    return DIPPER_OK;
  case AGG_SUM_DBL:
  case AGG_AVG_DBL: EACH_ROW(s->d[g] += num_at(v, r, s->arg_scale); cnt[g]++) return DIPPER_OK;
  case AGG_SUM_DEC:
  case AGG_AVG_DEC: EACH_ROW(s->x[g] += dp_vector_get_dec(v, r); cnt[g]++) return DIPPER_OK;
  case AGG_MIN_INT:
  case AGG_MAX_INT: {
    bool is_min = s->kind == AGG_MIN_INT;
    EACH_ROW({
      int64_t x = v->phys == DP_PHYS_BIT ? dp_vector_get_bool(v, r) : dp_vector_get_i64(v, r);
      if (!cnt[g] || (is_min ? x < s->i[g] : x > s->i[g])) s->i[g] = x;
      cnt[g]++;
    })
    return DIPPER_OK;
  }
  case AGG_MIN_DBL:
  case AGG_MAX_DBL: {
    bool is_min = s->kind == AGG_MIN_DBL;
    EACH_ROW({
      double x = dp_vector_get_f64(v, r), cur = s->d[g];
      /* NaN is the largest value (Spark). */
      bool better = !cnt[g] || (is_min ? (isnan(cur) ? !isnan(x) : x < cur)
                                       : (!isnan(cur) && (isnan(x) || x > cur)));
      if (better) s->d[g] = x;
      cnt[g]++;
    })
    return DIPPER_OK;
  }
  case AGG_MIN_DEC:
  case AGG_MAX_DEC: {
    bool is_min = s->kind == AGG_MIN_DEC;
    EACH_ROW({
      dp_i128 x = dp_vector_get_dec(v, r);
      if (!cnt[g] || (is_min ? x < s->x[g] : x > s->x[g])) s->x[g] = x;
      cnt[g]++;
    })
    return DIPPER_OK;
  }
  case AGG_MIN_ANY:
  case AGG_MAX_ANY:
  case AGG_FIRST:
  case AGG_LAST: return update_pick(s, v, gids, rows, n);
  case AGG_COLLECT: return update_collect(s, v, gids, rows, n);
  case AGG_LISTAGG: {
    const dp_vector *sepv = args[1];
    int rc = DIPPER_OK;
    EACH_ROW({
      size_t len, slen = s->sep ? s->sep_len : 1;
      const char *p = dp_vector_get_str(v, r, &len), *sep = s->sep ? s->sep : ",";
      if (sepv && valid(sepv, r)) sep = dp_vector_get_str(sepv, r, &slen);
      if (!s->sep) {
        s->sep = malloc(slen + 1);
        if (!s->sep) return DIPPER_NOMEM;
        memcpy(s->sep, sep, slen);
        s->sep_len = slen;
      }
      agg_strbuf *b = &s->bufs[g];
      if (b->has) rc = buf_append(b, sep, slen);
      if (!rc) rc = buf_append(b, p, len);
      if (rc) return rc;
      b->has = true;
      cnt[g]++;
    })
    return DIPPER_OK;
  }
  case AGG_VAR_POP:
  case AGG_VAR_SAMP:
  case AGG_STDDEV_POP:
  case AGG_STDDEV_SAMP:
    /* Welford's update: stable where sum-of-squares cancels. */
    EACH_ROW({
      double x = num_at(v, r, s->arg_scale);
      cnt[g]++;
      double delta = x - s->d[g];
      s->d[g] += delta / (double)cnt[g];
      s->d2[g] += delta * (x - s->d[g]);
    })
    return DIPPER_OK;
  case AGG_BOOL_AND:
    EACH_ROW({
      bool x = dp_vector_get_bool(v, r);
      s->i[g] = cnt[g] ? (s->i[g] && x) : x;
      cnt[g]++;
    })
    return DIPPER_OK;
  case AGG_BOOL_OR:
    EACH_ROW({
      bool x = dp_vector_get_bool(v, r);
      s->i[g] = cnt[g] ? (s->i[g] || x) : x;
      cnt[g]++;
    })
    return DIPPER_OK;
  case AGG_HLL:
    EACH_ROW({
      /* dp_vector_hash is not avalanched enough for HLL's leading-zero
      ** ranks on its own: mix it once more. */
      uint64_t h = dp_vector_hash(v, r, UINT64_C(0x2545f4914f6cdd1d));
      h ^= h >> 33;
      h *= UINT64_C(0xff51afd7ed558ccd);
      h ^= h >> 33;
      h *= UINT64_C(0xc4ceb9fe1a85ec53);
      h ^= h >> 33;
      int rc = hll_add(s, g, h);
      if (rc) return rc;
      cnt[g]++;
    })
    return DIPPER_OK;
  }
#undef EACH_ROW
  return DIPPER_UNSUPPORTED;
}

int dp_agg_state_merge(dp_agg_state *s, int64_t dst, int64_t src) {
  int64_t *cnt = s->n;
  if (src == dst) return DIPPER_OK;
  if (s->cfunc) return dp_agg_cfunc_merge(s, dst, src);
  switch (s->kind) {
  case AGG_COUNT_STAR:
  case AGG_COUNT: break;
  case AGG_SUM_INT: s->i[dst] = (int64_t)((uint64_t)s->i[dst] + (uint64_t)s->i[src]); break;
  case AGG_SUM_DBL:
  case AGG_AVG_DBL: s->d[dst] += s->d[src]; break;
  case AGG_SUM_DEC:
  case AGG_AVG_DEC: s->x[dst] += s->x[src]; break;
  case AGG_MIN_INT:
  case AGG_MAX_INT:
    if (cnt[src] && (!cnt[dst] || (s->kind == AGG_MIN_INT ? s->i[src] < s->i[dst] : s->i[src] > s->i[dst])))
      s->i[dst] = s->i[src];
    break;
  case AGG_MIN_DBL:
  case AGG_MAX_DBL:
    if (cnt[src]) {
      double x = s->d[src], cur = s->d[dst];
      bool better = !cnt[dst] || (s->kind == AGG_MIN_DBL ? (isnan(cur) ? !isnan(x) : x < cur)
                                                         : (!isnan(cur) && (isnan(x) || x > cur)));
      if (better) s->d[dst] = x;
    }
    break;
  case AGG_MIN_DEC:
  case AGG_MAX_DEC:
    if (cnt[src] && (!cnt[dst] || (s->kind == AGG_MIN_DEC ? s->x[src] < s->x[dst] : s->x[src] > s->x[dst])))
      s->x[dst] = s->x[src];
    break;
  case AGG_MIN_ANY:
  case AGG_MAX_ANY: {
    int64_t a = s->idx[dst], b = s->idx[src];
    int sign = s->kind == AGG_MIN_ANY ? -1 : 1;
    if (b >= 0 && (a < 0 || dp_ht_row_compare(s->store, b, s->store, a) * sign > 0)) s->idx[dst] = b;
    break;
  }
  case AGG_FIRST:
    if (s->idx[dst] < 0) s->idx[dst] = s->idx[src];
    break;
  case AGG_LAST:
    if (s->idx[src] >= 0) s->idx[dst] = s->idx[src];
    break;
  case AGG_COLLECT:
    /* Chains are disjoint: link src's after dst's.  src must not be used
    ** afterwards (the caller drops it). */
    if (s->idx[src] >= 0) {
      int rc = s->tail[dst] < 0 ? DIPPER_OK : note_patch(s, s->tail[dst]);
      if (rc) return rc;
      if (s->tail[dst] < 0)
        s->idx[dst] = s->idx[src];
      else
        s->next[s->tail[dst]] = s->idx[src];
      s->tail[dst] = s->tail[src];
      s->idx[src] = s->tail[src] = -1;
    }
    break;
  case AGG_LISTAGG: {
    agg_strbuf *a = &s->bufs[dst], *b = &s->bufs[src];
    if (b->has) {
      int rc = a->has ? buf_append(a, s->sep, s->sep_len) : DIPPER_OK;
      if (!rc) rc = buf_append(a, b->p, (size_t)b->len);
      if (rc) return rc;
      a->has = true;
    }
    break;
  }
  case AGG_VAR_POP:
  case AGG_VAR_SAMP:
  case AGG_STDDEV_POP:
  case AGG_STDDEV_SAMP:
    if (cnt[src]) {
      /* Chan et al.: combine two (count, mean, M2). */
      double na = (double)cnt[dst], nb = (double)cnt[src], n = na + nb;
      double delta = s->d[src] - s->d[dst];
      s->d[dst] += delta * nb / n;
      s->d2[dst] += s->d2[src] + delta * delta * na * nb / n;
    }
    break;
  case AGG_BOOL_AND:
    if (cnt[src]) s->i[dst] = cnt[dst] ? (s->i[dst] && s->i[src]) : s->i[src];
    break;
  case AGG_BOOL_OR:
    if (cnt[src]) s->i[dst] = cnt[dst] ? (s->i[dst] || s->i[src]) : s->i[src];
    break;
  case AGG_HLL:
    if (s->regs[src]) {
      if (!s->regs[dst]) {
        s->regs[dst] = calloc(HLL_M, 1);
        if (!s->regs[dst]) return DIPPER_NOMEM;
      }
      for (int k = 0; k < HLL_M; k++)
        if (s->regs[src][k] > s->regs[dst][k]) s->regs[dst][k] = s->regs[src][k];
    }
    break;
  }
  cnt[dst] += cnt[src];
  return DIPPER_OK;
}

static dp_i128 pow10_128(int n) {
  dp_i128 p = 1;
  for (int k = 0; k < n; k++) p *= 10;
  return p;
}

/* sum / count, rescaled from the argument's scale to the result's, rounded half up. */
static dp_i128 dec_avg(dp_i128 sum, int64_t count, int from_scale, int to_scale) {
  dp_i128 num = sum * pow10_128(to_scale > from_scale ? to_scale - from_scale : 0);
  dp_i128 q = num / count, r = num % count;
  if ((r < 0 ? -r : r) * 2 >= count) q += num < 0 ? -1 : 1;
  return q;
}

int dp_agg_state_finish(dp_agg_state *s, const int64_t *groups, int64_t n, dp_vector *out) {
  if (s->cfunc) return dp_agg_cfunc_finish(s, groups, n, out);
  int rc = dp_vector_reserve(out, n);
  for (int64_t k = 0; k < n && !rc; k++) {
    int64_t g = groups[k], c = s->n[g];
    bool empty = c == 0 && s->kind != AGG_COUNT_STAR && s->kind != AGG_COUNT && s->kind != AGG_HLL &&
                 s->kind != AGG_COLLECT;
    if (empty) {
      rc = dp_vector_append_null(out);
      continue;
    }
    switch (s->kind) {
    case AGG_COUNT_STAR:
    case AGG_COUNT: rc = dp_vector_append_i64(out, c); break;
    case AGG_HLL: rc = dp_vector_append_i64(out, hll_estimate(s->regs[g])); break;
    case AGG_SUM_INT:
      rc = out->phys == DP_PHYS_D128 ? dp_vector_append_dec(out, s->i[g]) : dp_vector_append_i64(out, s->i[g]);
      break;
    case AGG_SUM_DBL: rc = dp_vector_append_f64(out, s->d[g]); break;
    case AGG_AVG_DBL: rc = dp_vector_append_f64(out, s->d[g] / (double)c); break;
    case AGG_SUM_DEC: rc = dp_vector_append_dec(out, s->x[g]); break;
    case AGG_AVG_DEC:
      if (out->phys == DP_PHYS_D128)
        rc = dp_vector_append_dec(out, dec_avg(s->x[g], c, s->arg_scale, s->res_scale));
      else
        rc = dp_vector_append_f64(out, (double)s->x[g] / pow(10, s->arg_scale) / (double)c);
      break;
    case AGG_MIN_INT:
    case AGG_MAX_INT:
      rc = out->phys == DP_PHYS_BIT ? dp_vector_append_bool(out, s->i[g] != 0) : dp_vector_append_i64(out, s->i[g]);
      break;
    case AGG_MIN_DBL:
    case AGG_MAX_DBL: rc = dp_vector_append_f64(out, s->d[g]); break;
    case AGG_MIN_DEC:
    case AGG_MAX_DEC: rc = dp_vector_append_dec(out, s->x[g]); break;
    case AGG_MIN_ANY:
    case AGG_MAX_ANY:
    case AGG_FIRST:
    case AGG_LAST:
      rc = dp_vector_take(out, s->store, &s->idx[g], 0, 1); /* -1: no value, a NULL */
      break;
    case AGG_COLLECT:
      for (int64_t e = s->idx[g]; e >= 0 && !rc; e = s->next[e])
        rc = dp_vector_take(out->children[0], s->store, &e, 0, 1);
      if (!rc) rc = dp_vector_append_list(out);
      break;
    case AGG_LISTAGG: rc = dp_vector_append_str(out, s->bufs[g].p ? s->bufs[g].p : "", (size_t)s->bufs[g].len); break;
    case AGG_VAR_POP:
    case AGG_VAR_SAMP:
    case AGG_STDDEV_POP:
    case AGG_STDDEV_SAMP: {
      bool samp = s->kind == AGG_VAR_SAMP || s->kind == AGG_STDDEV_SAMP;
      if (samp && c < 2) {
        rc = dp_vector_append_null(out);
        break;
      }
      double var = s->d2[g] / (double)(samp ? c - 1 : c);
      if (var < 0) var = 0;
      bool root = s->kind == AGG_STDDEV_POP || s->kind == AGG_STDDEV_SAMP;
      rc = dp_vector_append_f64(out, root ? sqrt(var) : var);
      break;
    }
    case AGG_BOOL_AND:
    case AGG_BOOL_OR: rc = dp_vector_append_bool(out, s->i[g] != 0); break;
    }
  }
  return rc;
}

/* Copy the store keeping only the rows live groups point at (and, for
** COLLECT, their chains), so that it does not grow with replaced values. */
static int rebuild_store(dp_agg_state *s, int64_t ngroups) {
  dp_vector *fresh = dp_vector_new(s->store->type, 0);
  if (!fresh) return DIPPER_NOMEM;
  int64_t *next = NULL;
  int64_t next_cap = 0;
  int rc = DIPPER_OK;
  for (int64_t g = 0; g < ngroups && !rc; g++) {
    if (s->idx[g] < 0) continue;
    if (s->kind != AGG_COLLECT) {
      rc = dp_vector_take(fresh, s->store, &s->idx[g], 0, 1);
      s->idx[g] = fresh->length - 1;
      continue;
    }
    int64_t head = -1, prev = -1;
    for (int64_t e = s->idx[g]; e >= 0 && !rc; e = s->next[e]) {
      rc = dp_vector_take(fresh, s->store, &e, 0, 1);
      if (rc) break;
      int64_t at = fresh->length - 1;
      if (at >= next_cap) {
        int64_t cap = next_cap ? next_cap * 2 : 256;
        int64_t *q = realloc(next, (size_t)cap * sizeof *q);
        if (!q) {
          rc = DIPPER_NOMEM;
          break;
        }
        next = q;
        next_cap = cap;
      }
      next[at] = -1;
      if (prev >= 0) next[prev] = at;
      else head = at;
      prev = at;
    }
    s->idx[g] = head;
    s->tail[g] = prev;
  }
  if (rc) {
    dp_vector_free(fresh);
    free(next);
    return rc;
  }
  dp_vector_free(s->store);
  s->store = fresh;
  s->store_rebuilt = true;
  if (s->kind == AGG_COLLECT) {
    free(s->next);
    s->next = next;
    s->next_cap = next_cap;
  }
  return DIPPER_OK;
}

int dp_agg_state_compact(dp_agg_state *s, const int64_t *remap, int64_t old_n, int64_t new_n) {
  dp_agg_state_renumber(s, remap, old_n, new_n);
  /* Compact the store only when mostly garbage: amortized O(1) per value. */
  if (s->store && s->store->length > 2 * new_n + 1024) return rebuild_store(s, new_n);
  return DIPPER_OK;
}

int dp_agg_state_renumber(dp_agg_state *s, const int64_t *remap, int64_t old_n, int64_t new_n) {
  if (s->cfunc) return dp_agg_cfunc_renumber(s, remap, old_n, new_n);
  for (int64_t g = 0; g < old_n; g++) {
    int64_t to = remap[g];
    if (to < 0) {
      if (s->bufs) free(s->bufs[g].p), s->bufs[g].p = NULL;
      if (s->regs) free(s->regs[g]), s->regs[g] = NULL;
      continue;
    }
    if (to == g) continue;
    s->n[to] = s->n[g];
    if (s->i) s->i[to] = s->i[g];
    if (s->d) s->d[to] = s->d[g];
    if (s->d2) s->d2[to] = s->d2[g];
    if (s->x) s->x[to] = s->x[g];
    if (s->bufs) s->bufs[to] = s->bufs[g], s->bufs[g].p = NULL;
    if (s->regs) s->regs[to] = s->regs[g], s->regs[g] = NULL;
    if (s->idx) s->idx[to] = s->idx[g];
    if (s->tail) s->tail[to] = s->tail[g];
  }
  for (int64_t g = new_n; g < old_n; g++) {
    if (s->bufs) memset(&s->bufs[g], 0, sizeof s->bufs[g]);
    dp_agg_state_reset(s, g);
  }
  return DIPPER_OK;
}

/* ---- checkpoints ----
** One call's states as bytes (agg_func.h).  Every group's record is written
** on its own, with nothing carried from one group to the next, so that a
** later per-batch delta can write the records of only the groups a batch
** changed: save_groups/load_groups take a list of group ids (NULL: all of
** 0..n) for that.  The store of the kept values is shared by the groups: a
** whole state writes it whole, a delta the rows appended since the mark
** (all that changes between rebuild_store calls, but for the COLLECT rows
** that were tails and got a next: `patched`) and falls back to the whole
** state after a rebuild.
**
**   kind:u8                     AGG_*, checked against the plan's
**   columns, each over the groups in order (so a load is a few straight
**   loops or a memcpy per column, not a record per group):
**              n                every kind: dp_put_i64s (bytes.h)
**              i                SUM/MIN/MAX of integers, BOOL_AND/OR: likewise
**              d [d2]           float SUM/AVG/MIN/MAX; VAR's mean and M2:
**                               8 bytes a group, the double's bits
**              x                DECIMAL: 16 bytes a group (low, high u64)
**   LISTAGG    has_sep:u8 [sep:bytes], then per group has:u8 bytes:bytes
**   HLL        per group: 0 (no registers) | 1 count:uvar (gap:uvar reg:u8)*
**              (the non-zero registers) | 2 the 1024 registers
**   store      the store vector (vector_codec.h), then per group idx:svar
**              (COLLECT: idx then tail), then COLLECT's next:svar per store
**              row
** A delta: mode:u8 — 1: the whole state as above over every group (the store
** was rebuilt); 0: the same fields for the listed groups only, the store
** holding the rows past the mark and `next` theirs, then COLLECT's
** npatched:uvar (row:uvar next:svar)* for the rows below the mark.
*/

#define HLL_MAX_RANK (64 - HLL_P + 1)

static inline int64_t group_at(const int64_t *groups, int64_t k) { return groups ? groups[k] : k; }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "agg_func.c memcpy's doubles and DECIMALs as little-endian: add a byte swap for this host"
#endif

/* A column of `w`-byte values of groups[0..n) (all of 0..n when NULL), as
** the machine holds them (little-endian: the build refuses other hosts). */
static void put_raw(dp_buf *out, const void *v, const int64_t *groups, int64_t n, size_t w) {
  if (!groups) {
    if (n) dp_buf_put(out, v, (size_t)n * w);
    return;
  }
  char *p = n ? dp_buf_append_room(out, (size_t)n * w) : NULL;
  for (int64_t k = 0; p && k < n; k++) memcpy(p + (size_t)k * w, (const char *)v + (size_t)groups[k] * w, w);
}

static bool get_raw(dp_rd *in, void *v, const int64_t *groups, int64_t n, size_t w) {
  if (in->bad || (uint64_t)n > dp_rd_left(in) / w) {
    in->bad = true;
    return false;
  }
  const uint8_t *p = in->p + in->pos;
  in->pos += (size_t)n * w;
  if (!groups) {
    if (n) memcpy(v, p, (size_t)n * w);
  } else {
    for (int64_t k = 0; k < n; k++) memcpy((char *)v + (size_t)groups[k] * w, p + (size_t)k * w, w);
  }
  return true;
}

static void save_regs(const uint8_t *regs, dp_buf *out) {
  if (!regs) {
    dp_put_u8(out, 0);
    return;
  }
  int nz = 0;
  for (int k = 0; k < HLL_M; k++) nz += regs[k] != 0;
  if (nz * 3 >= HLL_M) {
    dp_put_u8(out, 2);
    dp_buf_put(out, regs, HLL_M);
    return;
  }
  dp_put_u8(out, 1);
  dp_put_uvar(out, (uint64_t)nz);
  int last = -1;
  for (int k = 0; k < HLL_M; k++)
    if (regs[k]) {
      dp_put_uvar(out, (uint64_t)(k - last - 1));
      dp_put_u8(out, regs[k]);
      last = k;
    }
}

/* The records of groups[0..n), the store from row `from` (delta: and the
** patched rows below it). */
static void save_groups(const dp_agg_state *s, const int64_t *groups, int64_t n, int64_t from,
                        bool delta, dp_buf *out) {
  if (s->cfunc) {
    dp_agg_cfunc_save(s, groups, n, out);
    return;
  }
  dp_put_u8(out, (uint8_t)s->kind);
  unsigned arr = arrays_of(s->kind);
  dp_put_i64s(out, s->n, groups, n);
  if (arr & ARR_I) dp_put_i64s(out, s->i, groups, n);
  if (arr & ARR_D) put_raw(out, s->d, groups, n, sizeof *s->d);
  if (arr & ARR_D2) put_raw(out, s->d2, groups, n, sizeof *s->d2);
  if (arr & ARR_X) put_raw(out, s->x, groups, n, sizeof *s->x);
  if (s->kind == AGG_LISTAGG) {
    dp_put_u8(out, s->sep != NULL);
    if (s->sep) dp_put_bytes(out, s->sep, s->sep_len);
    for (int64_t k = 0; k < n; k++) {
      const agg_strbuf *b = &s->bufs[group_at(groups, k)];
      dp_put_u8(out, b->has);
      dp_put_bytes(out, b->p, (size_t)b->len);
    }
  }
  if (s->kind == AGG_HLL)
    for (int64_t k = 0; k < n; k++) save_regs(s->regs[group_at(groups, k)], out);
  if (uses_store(s)) {
    if (dp_vector_encode(s->store, from, s->store->length - from, out) != DIPPER_OK) out->oom = true;
    for (int64_t k = 0; k < n; k++) {
      int64_t g = group_at(groups, k);
      dp_put_svar(out, s->idx[g]);
      if (s->kind == AGG_COLLECT) dp_put_svar(out, s->tail[g]);
    }
    if (s->kind == AGG_COLLECT)
      for (int64_t e = from; e < s->store->length; e++) dp_put_svar(out, s->next[e]);
    if (delta && s->kind == AGG_COLLECT) {
      dp_put_uvar(out, (uint64_t)s->npatched);
      for (int64_t k = 0; k < s->npatched; k++) {
        dp_put_uvar(out, (uint64_t)s->patched[k]);
        dp_put_svar(out, s->next[s->patched[k]]);
      }
    }
  }
}

int dp_agg_state_save(const dp_agg_state *s, int64_t ngroups, dp_buf *out) {
  if (ngroups < 0 || ngroups > s->cap) return DIPPER_MISUSE;
  save_groups(s, NULL, ngroups, 0, false, out);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

void dp_agg_state_mark(dp_agg_state *s) {
  s->base_rows = s->store ? s->store->length : 0;
  s->store_rebuilt = false;
  s->npatched = 0;
}

int dp_agg_state_save_delta(const dp_agg_state *s, const int64_t *groups, int64_t n,
                            int64_t ngroups, dp_buf *out) {
  if (ngroups < 0 || ngroups > s->cap || n < 0) return DIPPER_MISUSE;
  for (int64_t k = 0; k < n; k++)
    if (groups[k] < 0 || groups[k] >= ngroups) return DIPPER_MISUSE;
  if (s->store_rebuilt) {
    dp_put_u8(out, 1);
    return dp_agg_state_save(s, ngroups, out);
  }
  dp_put_u8(out, 0);
  save_groups(s, groups, n, s->base_rows, true, out);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int load_regs(dp_rd *in, uint8_t **regs) {
  uint8_t mode = dp_get_u8(in);
  if (in->bad || mode > 2) return DIPPER_CORRUPT;
  if (mode == 0) { /* a delta may load over a group that had registers */
    free(*regs);
    *regs = NULL;
    return DIPPER_OK;
  }
  uint8_t *r = *regs ? *regs : calloc(HLL_M, 1);
  if (!r) return DIPPER_NOMEM;
  memset(r, 0, HLL_M);
  *regs = r;
  if (mode == 2) {
    if (dp_rd_left(in) < HLL_M) return DIPPER_CORRUPT;
    memcpy(r, in->p + in->pos, HLL_M);
    in->pos += HLL_M;
  } else {
    uint64_t nz = dp_get_count(in, 2);
    int64_t at = -1;
    for (uint64_t k = 0; k < nz && !in->bad; k++) {
      uint64_t gap = dp_get_uvar(in);
      uint8_t v = dp_get_u8(in);
      if (gap >= HLL_M || at + 1 + (int64_t)gap >= HLL_M || v == 0) return DIPPER_CORRUPT;
      at += 1 + (int64_t)gap;
      r[at] = v;
    }
  }
  for (int k = 0; k < HLL_M; k++)
    if (r[k] > HLL_MAX_RANK) return DIPPER_CORRUPT;
  return in->bad ? DIPPER_CORRUPT : DIPPER_OK;
}

static int load_listagg(dp_agg_state *s, const int64_t *groups, int64_t n, dp_rd *in) {
  uint8_t has_sep = dp_get_u8(in);
  if (in->bad || has_sep > 1) return DIPPER_CORRUPT;
  if (has_sep) {
    size_t len;
    const uint8_t *p = dp_get_bytes(in, &len);
    if (!p && in->bad) return DIPPER_CORRUPT;
    free(s->sep);
    if (!(s->sep = malloc(len + 1))) return DIPPER_NOMEM;
    if (len) memcpy(s->sep, p, len);
    s->sep_len = len;
  }
  for (int64_t k = 0; k < n; k++) {
    agg_strbuf *b = &s->bufs[group_at(groups, k)];
    uint8_t has = dp_get_u8(in);
    size_t len;
    const uint8_t *p = dp_get_bytes(in, &len);
    if (in->bad || has > 1 || (!has && len)) return DIPPER_CORRUPT;
    b->len = 0;
    b->has = has;
    if (len > INT32_MAX) return DIPPER_CORRUPT;
    if (buf_append(b, (const char *)p, len)) return DIPPER_NOMEM;
  }
  return DIPPER_OK;
}

/* COLLECT's chains: each group's runs from idx to tail through next, over
** store rows that no other chain holds (so finish always ends). */
static int check_chains(const dp_agg_state *s, const int64_t *groups, int64_t n) {
  int64_t len = s->store->length;
  uint8_t *seen = calloc((size_t)(len > 0 ? len : 1), 1);
  if (!seen) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int64_t k = 0; k < n && !rc; k++) {
    int64_t g = group_at(groups, k), last = -1;
    for (int64_t e = s->idx[g]; e >= 0 && !rc; e = s->next[e]) {
      if (seen[e]) rc = DIPPER_CORRUPT;
      seen[e] = 1;
      last = e;
    }
    if (last != s->tail[g]) rc = DIPPER_CORRUPT;
  }
  free(seen);
  return rc;
}

/* The store's rows from `from` (its length so far) on, the listed groups'
** idx, the rows' next; a delta's patches.  COLLECT's chains are checked
** over groups 0..nall (NULL groups: the listed ones are all). */
static int load_store(dp_agg_state *s, const int64_t *groups, int64_t n, bool delta, int64_t nall,
                      dp_rd *in) {
  int64_t from = s->store->length;
  int rc = dp_vector_decode(in, s->store);
  if (rc) return rc == DIPPER_NOMEM ? rc : DIPPER_CORRUPT;
  int64_t len = s->store->length;
  for (int64_t k = 0; k < n; k++) {
    int64_t g = group_at(groups, k);
    s->idx[g] = dp_get_svar(in);
    if (s->kind == AGG_COLLECT) s->tail[g] = dp_get_svar(in);
    if (in->bad || s->idx[g] < -1 || s->idx[g] >= len) return DIPPER_CORRUPT;
    if (s->tail && (s->tail[g] < -1 || s->tail[g] >= len)) return DIPPER_CORRUPT;
  }
  if (s->kind != AGG_COLLECT) return DIPPER_OK;
  if (len > s->next_cap) {
    int64_t *q = realloc(s->next, (size_t)len * sizeof *q);
    if (!q) return DIPPER_NOMEM;
    s->next = q;
    s->next_cap = len;
  }
  for (int64_t e = from; e < len; e++) {
    s->next[e] = dp_get_svar(in);
    if (in->bad || s->next[e] < -1 || s->next[e] >= len) return DIPPER_CORRUPT;
  }
  if (!delta) return check_chains(s, groups, n);
  uint64_t np = dp_get_count(in, 2);
  for (uint64_t k = 0; k < np && !in->bad; k++) {
    uint64_t row = dp_get_uvar(in);
    int64_t next = dp_get_svar(in);
    /* a row of the base that was a tail (-1), linked once */
    if (in->bad || row >= (uint64_t)from || s->next[row] != -1 || next < 0 || next >= len)
      return DIPPER_CORRUPT;
    s->next[row] = next;
  }
  if (in->bad) return DIPPER_CORRUPT;
  return check_chains(s, NULL, nall);
}

static int load_groups(dp_agg_state *s, const int64_t *groups, int64_t n, bool delta, int64_t nall,
                       dp_rd *in) {
  if (s->cfunc) return dp_agg_cfunc_load(s, groups, n, in);
  if (dp_get_u8(in) != s->kind || in->bad) return DIPPER_CORRUPT;
  if (!dp_get_i64s(in, s->n, groups, n)) return DIPPER_CORRUPT;
  /* no update makes a negative count: one pass over the column, no branch */
  uint64_t sign = 0;
  if (groups)
    for (int64_t k = 0; k < n; k++) sign |= (uint64_t)s->n[groups[k]];
  else
    for (int64_t k = 0; k < n; k++) sign |= (uint64_t)s->n[k];
  if (sign >> 63) return DIPPER_CORRUPT;
  unsigned arr = arrays_of(s->kind);
  if ((arr & ARR_I) && !dp_get_i64s(in, s->i, groups, n)) return DIPPER_CORRUPT;
  if ((arr & ARR_D) && !get_raw(in, s->d, groups, n, sizeof *s->d)) return DIPPER_CORRUPT;
  if ((arr & ARR_D2) && !get_raw(in, s->d2, groups, n, sizeof *s->d2)) return DIPPER_CORRUPT;
  if ((arr & ARR_X) && !get_raw(in, s->x, groups, n, sizeof *s->x)) return DIPPER_CORRUPT;
  int rc = DIPPER_OK;
  if (s->kind == AGG_LISTAGG) rc = load_listagg(s, groups, n, in);
  for (int64_t k = 0; s->kind == AGG_HLL && k < n && !rc; k++)
    rc = load_regs(in, &s->regs[group_at(groups, k)]);
  if (!rc && uses_store(s)) rc = load_store(s, groups, n, delta, nall, in);
  if (!rc && in->bad) rc = DIPPER_CORRUPT;
  return rc;
}

int dp_agg_state_load(dp_agg_state *s, int64_t ngroups, dp_rd *in) {
  if (ngroups < 0) return DIPPER_MISUSE;
  if (uses_store(s) && s->store->length != 0) return DIPPER_MISUSE;
  int rc = reserve(s, ngroups, ngroups); /* the load writes every group's numbers */
  if (!rc) rc = load_groups(s, NULL, ngroups, false, ngroups, in);
  if (rc == DIPPER_CORRUPT) in->bad = true;
  if (!rc) dp_agg_state_mark(s);
  return rc;
}

int dp_agg_state_load_delta(dp_agg_state *s, const dp_agg_call *call, const int64_t *groups,
                            int64_t n, int64_t ngroups, dp_rd *in) {
  if (ngroups < 0 || n < 0) return DIPPER_MISUSE;
  for (int64_t k = 0; k < n; k++)
    if (groups[k] < 0 || groups[k] >= ngroups) return DIPPER_MISUSE;
  uint8_t mode = dp_get_u8(in);
  int rc = in->bad || mode > 1 ? DIPPER_CORRUPT : DIPPER_OK;
  if (!rc && mode == 1) {
    dp_agg_state fresh;
    rc = dp_agg_state_init(&fresh, call);
    if (!rc) rc = dp_agg_state_load(&fresh, ngroups, in);
    if (rc) {
      dp_agg_state_free(&fresh);
    } else {
      fresh.diags = s->diags;
      dp_agg_state_free(s);
      *s = fresh;
    }
  } else if (!rc) {
    rc = dp_agg_state_reserve(s, ngroups);
    if (!rc) rc = load_groups(s, groups, n, true, ngroups, in);
  }
  if (rc == DIPPER_CORRUPT) in->bad = true;
  if (!rc) dp_agg_state_mark(s);
  return rc;
}

/* ---- one group's record (a keyed store: agg_rocks.c) ----
** Self-contained: nothing of the store's other rows or of any mark.
**   mode 0: dp_agg_state_save_delta's record of the group (kinds without a
**           store: the same bytes as before, so the values stored by
**           earlier runs still read)
**   mode 2: kind:u8  n (dp_put_i64s of one)  the group's kept values (a
**           vector, vector_codec.h: none, the chosen one, or COLLECT's
**           chain in order)
** A load appends the values to the store: the store grows with the groups
** loaded, and the operator's compaction (dp_agg_state_compact) bounds it. */

int dp_agg_state_save_group(const dp_agg_state *s, int64_t g, dp_buf *out) {
  if (g < 0 || g >= s->cap) return DIPPER_MISUSE;
  if (!uses_store(s)) return dp_agg_state_save_delta(s, &g, 1, g + 1, out);
  dp_put_u8(out, 2);
  dp_put_u8(out, (uint8_t)s->kind);
  dp_put_i64s(out, s->n, &g, 1);
  int64_t head = s->idx[g], len = head >= 0, e = head;
  bool runs = true; /* the chain is rows head..head+len-1 */
  if (s->kind == AGG_COLLECT && head >= 0)
    for (len = 1; s->next[e] >= 0; e = s->next[e], len++) runs &= s->next[e] == e + 1;
  int rc;
  if (runs) {
    rc = dp_vector_encode(s->store, head >= 0 ? head : 0, len, out);
  } else {
    dp_vector *v = dp_vector_new(s->store->type, len);
    rc = v ? DIPPER_OK : DIPPER_NOMEM;
    for (e = head; e >= 0 && !rc; e = s->next[e]) rc = dp_vector_take(v, s->store, &e, 0, 1);
    if (!rc) rc = dp_vector_encode(v, 0, len, out);
    dp_vector_free(v);
  }
  if (rc) return rc;
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_agg_state_load_group(dp_agg_state *s, const dp_agg_call *call, int64_t g, dp_rd *in) {
  if (g < 0) return DIPPER_MISUSE;
  uint8_t mode = dp_rd_left(in) > 0 ? in->p[in->pos] : 0xff;
  /* mode 1 (a whole state) would replace every group's: not a group's record */
  if (mode == 0) return dp_agg_state_load_delta(s, call, &g, 1, g + 1, in);
  int rc = dp_agg_state_reserve(s, g + 1);
  if (rc) return rc;
  (void)dp_get_u8(in);
  if (mode != 2 || !uses_store(s) || dp_get_u8(in) != s->kind || in->bad || !dp_get_i64s(in, s->n, &g, 1) ||
      s->n[g] < 0) {
    in->bad = true;
    return DIPPER_CORRUPT;
  }
  int64_t from = s->store->length;
  rc = dp_vector_decode(in, s->store);
  if (rc) return rc == DIPPER_NOMEM ? rc : DIPPER_CORRUPT;
  int64_t len = s->store->length, m = len - from;
  /* a value for each one counted (COLLECT), one for any (the others) */
  if (s->kind == AGG_COLLECT ? m != s->n[g] : m != (s->n[g] > 0)) {
    in->bad = true;
    return DIPPER_CORRUPT;
  }
  s->idx[g] = m ? from : -1;
  if (s->kind != AGG_COLLECT) return DIPPER_OK;
  if (len > s->next_cap && dp_grow(&s->next, &s->next_cap, len, sizeof *s->next, 256))
    return DIPPER_NOMEM;
  for (int64_t e = from; e < len; e++) s->next[e] = e + 1 < len ? e + 1 : -1;
  s->tail[g] = m ? len - 1 : -1;
  return DIPPER_OK;
}
