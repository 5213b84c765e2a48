/*
** eval_arith.c — kernels of the operators (+ - * / %, comparisons, AND/OR/NOT
** with three-valued logic, IS [NOT] NULL/TRUE/FALSE/DISTINCT FROM, IN, bit
** operations), of math functions and of the conditionals (COALESCE, NULLIF,
** IFNULL, IF, GREATEST, LEAST).
**
** The hot cases — BIGINT and DOUBLE operands, one of them possibly a
** constant — are plain loops over the value arrays, with NULLs handled
** afterwards by combining validity bitmaps, so that compilers vectorize
** them.  Other widths and DECIMALs go through the row getters.  Overflow and
** division rules: see eval_int.h.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/eval_int.h"

#define DP_EV_PI 3.14159265358979323846

/* ---- storing ---- */

static void store_int(dp_vector *v, int64_t i, int64_t x) {
  switch (v->phys) {
  case DP_PHYS_I8: ((int8_t *)v->values)[i] = (int8_t)x; break;
  case DP_PHYS_I16: ((int16_t *)v->values)[i] = (int16_t)x; break;
  case DP_PHYS_I32: ((int32_t *)v->values)[i] = (int32_t)x; break;
  case DP_PHYS_I64: ((int64_t *)v->values)[i] = x; break;
  default: break;
  }
}

static void store_f64(dp_vector *v, int64_t i, double x) {
  if (v->phys == DP_PHYS_F64)
    ((double *)v->values)[i] = x;
  else
    ((float *)v->values)[i] = (float)x;
}

static inline int64_t wrap_add(int64_t x, int64_t y) { return (int64_t)((uint64_t)x + (uint64_t)y); }
static inline int64_t wrap_sub(int64_t x, int64_t y) { return (int64_t)((uint64_t)x - (uint64_t)y); }
static inline int64_t wrap_mul(int64_t x, int64_t y) { return (int64_t)((uint64_t)x * (uint64_t)y); }

/* Three loops for vector⊕vector, constant⊕vector, vector⊕constant. */
#define LOOP3(T, OUT, A, B, EXPR)                                 \
  do {                                                            \
    if (!a->is_const && !b->is_const) {                           \
      for (int64_t i = 0; i < n; i++) {                           \
        T x = (A)[i], y = (B)[i];                                 \
        (OUT)[i] = (EXPR);                                        \
      }                                                           \
    } else if (a->is_const) {                                     \
      T x = (A)[0];                                               \
      for (int64_t i = 0; i < n; i++) {                           \
        T y = (B)[i];                                             \
        (OUT)[i] = (EXPR);                                        \
      }                                                           \
    } else {                                                      \
      T y = (B)[0];                                               \
      for (int64_t i = 0; i < n; i++) {                           \
        T x = (A)[i];                                             \
        (OUT)[i] = (EXPR);                                        \
      }                                                           \
    }                                                             \
  } while (0)

/* ---- + - * / % on numbers ---- */

static int arith_int(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector *out) {
  int id = e->u.call.fn->id;
  const dp_ev_arg *a = &args[0], *b = &args[1];
  int rc = dp_ev_finish_nulls(out, args, 2, n);
  if (rc) return rc;
  if (a->v->phys == DP_PHYS_I64 && b->v->phys == DP_PHYS_I64 && out->phys == DP_PHYS_I64 &&
      (id == DP_F_ADD || id == DP_F_SUBTRACT || id == DP_F_MULTIPLY)) {
    const int64_t *A = a->v->values, *B = b->v->values;
    int64_t *O = out->values;
    if (id == DP_F_ADD) LOOP3(int64_t, O, A, B, wrap_add(x, y));
    else if (id == DP_F_SUBTRACT) LOOP3(int64_t, O, A, B, wrap_sub(x, y));
    else LOOP3(int64_t, O, A, B, wrap_mul(x, y));
    return DIPPER_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t x = dp_ev_i64(a, i), y = dp_ev_i64(b, i), r = 0;
    switch (id) {
    case DP_F_ADD: r = wrap_add(x, y); break;
    case DP_F_SUBTRACT: r = wrap_sub(x, y); break;
    case DP_F_MULTIPLY: r = wrap_mul(x, y); break;
    case DP_F_DIVIDE:
    case DP_F_MOD:
      if (y == 0) {
        if ((rc = dp_ev_set_null(out, i)) != DIPPER_OK) return rc;
        break;
      }
      if (y == -1) /* x / -1 wraps at the minimum; x % -1 is 0 */
        r = id == DP_F_DIVIDE ? wrap_sub(0, x) : 0;
      else
        r = id == DP_F_DIVIDE ? x / y : x % y;
      break;
    default: break;
    }
    store_int(out, i, r);
  }
  (void)c;
  return DIPPER_OK;
}

static int arith_float(const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector *out) {
  int id = e->u.call.fn->id;
  const dp_ev_arg *a = &args[0], *b = &args[1];
  int rc = dp_ev_finish_nulls(out, args, 2, n);
  if (rc) return rc;
  if (a->v->phys == DP_PHYS_F64 && b->v->phys == DP_PHYS_F64 && out->phys == DP_PHYS_F64 &&
      id != DP_F_DIVIDE && id != DP_F_MOD) {
    const double *A = a->v->values, *B = b->v->values;
    double *O = out->values;
    if (id == DP_F_ADD) LOOP3(double, O, A, B, x + y);
    else if (id == DP_F_SUBTRACT) LOOP3(double, O, A, B, x - y);
    else LOOP3(double, O, A, B, x * y);
    return DIPPER_OK;
  }
  if (a->v->phys == DP_PHYS_F64 && b->is_const && out->phys == DP_PHYS_F64 && id == DP_F_DIVIDE &&
      dp_ev_f64(b, 0) != 0) {
    const double *A = a->v->values;
    double y = dp_ev_f64(b, 0), *O = out->values;
    for (int64_t i = 0; i < n; i++) O[i] = A[i] / y;
    return DIPPER_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    double x = dp_ev_f64(a, i), y = dp_ev_f64(b, i), r = 0;
    switch (id) {
    case DP_F_ADD: r = x + y; break;
    case DP_F_SUBTRACT: r = x - y; break;
    case DP_F_MULTIPLY: r = x * y; break;
    default:
      if (y == 0) {
        if ((rc = dp_ev_set_null(out, i)) != DIPPER_OK) return rc;
        break;
      }
      r = id == DP_F_DIVIDE ? x / y : fmod(x, y);
      break;
    }
    store_f64(out, i, r);
  }
  return DIPPER_OK;
}

static const char *op_text(int id) {
  switch (id) {
  case DP_F_ADD: return "+";
  case DP_F_SUBTRACT: return "-";
  case DP_F_MULTIPLY: return "*";
  case DP_F_DIVIDE: return "/";
  case DP_F_MOD: return "%";
  default: return "the operation";
  }
}

static int dec_overflow(dp_ev *c, const dp_expr *e, dp_i128 x, int scale) {
  char a[64];
  dp_ev_dec_text(a, x, scale);
  return dp_ev_data_error(c, e,
                          "DECIMAL overflow: the result of %s (%s) does not fit DECIMAL(%d, %d); "
                          "CAST the operands to a wider DECIMAL or to DOUBLE",
                          op_text(e->kind == DP_E_CALL ? e->u.call.fn->id : 0), a,
                          e->type->precision, e->type->scale);
}

static int arith_dec(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector *out) {
  int id = e->u.call.fn->id;
  const dp_ev_arg *a = &args[0], *b = &args[1];
  int sx = a->v->type->kind == DP_T_DECIMAL ? a->v->type->scale : 0;
  int sy = b->v->type->kind == DP_T_DECIMAL ? b->v->type->scale : 0;
  int s = out->type->scale, p = out->type->precision;
  int hi = sx > sy ? sx : sy;
  int rc = dp_ev_finish_nulls(out, args, 2, n);
  if (rc) return rc;
  dp_i128 *O = out->values;
  if (id == DP_F_MULTIPLY && a->v->phys == DP_PHYS_D128 && b->v->phys == DP_PHYS_D128 &&
      !a->is_const && b->is_const && a->v->null_count == 0 && !dp_ev_null(b, 0) && sx + sy == s) {
    /* column * constant at the exact scale: one multiply and a range check per row */
    const dp_i128 *A = a->v->values;
    dp_i128 y = dp_ev_dec(b, 0), lim = dp_ev_pow10(p > 38 ? 38 : p);
    bool bad = false;
    for (int64_t i = 0; i < n; i++) {
      dp_i128 r;
      bad |= __builtin_mul_overflow(A[i], y, &r);
      bad |= r >= lim || r <= -lim;
      O[i] = r;
    }
    if (!bad) return DIPPER_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    if (dp_ev_null(a, i) || dp_ev_null(b, i)) {
      O[i] = 0;
      continue;
    }
    dp_i128 x = a->v->phys == DP_PHYS_D128 ? dp_ev_dec(a, i) : dp_ev_i64(a, i);
    dp_i128 y = b->v->phys == DP_PHYS_D128 ? dp_ev_dec(b, i) : dp_ev_i64(b, i);
    dp_i128 r = 0, t;
    bool ok = true;
    int rs = s; /* scale of r before the final rescale */
    switch (id) {
    case DP_F_ADD:
    case DP_F_SUBTRACT:
      ok = dp_ev_rescale(x, sx, hi, &x) && dp_ev_rescale(y, sy, hi, &y);
      if (ok) ok = id == DP_F_ADD ? !__builtin_add_overflow(x, y, &r) : !__builtin_sub_overflow(x, y, &r);
      rs = hi;
      break;
    case DP_F_MULTIPLY:
      ok = !__builtin_mul_overflow(x, y, &r);
      rs = sx + sy;
      break;
    case DP_F_DIVIDE: {
      if (y == 0) {
        O[i] = 0;
        if ((rc = dp_ev_set_null(out, i)) != DIPPER_OK) return rc;
        continue;
      }
      /* x/10^sx / (y/10^sy) at scale s = x * 10^(s - sx + sy) / y, rounded */
      int shift = s - sx + sy;
      if (shift >= 0) {
        ok = !__builtin_mul_overflow(x, dp_ev_pow10(shift), &t);
      } else {
        ok = dp_ev_rescale(x, -shift, 0, &t);
      }
      if (ok) {
        r = t / y;
        dp_i128 rem = t % y;
        dp_i128 ar = rem < 0 ? -rem : rem, ay = y < 0 ? -y : y;
        if (ar >= ay - ar) r += ((t < 0) != (y < 0)) ? -1 : 1;
      }
      rs = s;
      break;
    }
    default: /* MOD */
      if (y == 0) {
        O[i] = 0;
        if ((rc = dp_ev_set_null(out, i)) != DIPPER_OK) return rc;
        continue;
      }
      ok = dp_ev_rescale(x, sx, hi, &x) && dp_ev_rescale(y, sy, hi, &y);
      if (ok) r = x % y;
      rs = hi;
      break;
    }
    if (ok) ok = dp_ev_rescale(r, rs, s, &r);
    if (!ok || !dp_ev_dec_fits(r, p)) return dec_overflow(c, e, ok ? r : 0, ok ? s : 0);
    O[i] = r;
  }
  return DIPPER_OK;
}

/* ---- + - * / on dates, times and intervals ---- */

static int64_t shift_time(const dp_type *t, int64_t x, const dp_type *iv, int64_t amount) {
  switch (t->kind) {
  case DP_T_DATE:
    if (iv->kind == DP_T_INTERVAL_YM)
      return dp_ev_floordiv(dp_ev_add_months(x * DP_MICROS_PER_DAY, amount), DP_MICROS_PER_DAY);
    return x + dp_ev_floordiv(amount, DP_MICROS_PER_DAY);
  case DP_T_TIME: return dp_ev_floormod(wrap_add(x, amount), DP_MICROS_PER_DAY);
  default:
    if (iv->kind == DP_T_INTERVAL_YM) return dp_ev_add_months(x, amount);
    return wrap_add(x, amount);
  }
}

static int arith_temporal(const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector *out) {
  int id = e->u.call.fn->id;
  const dp_ev_arg *a = &args[0], *b = &args[1];
  const dp_type *ta = a->v->type, *tb = b->v->type;
  int rc = dp_ev_finish_nulls(out, args, 2, n);
  if (rc) return rc;
  bool ai = dp_type_is_interval(ta), bi = dp_type_is_interval(tb);
  for (int64_t i = 0; i < n; i++) {
    if (dp_ev_null(a, i) || dp_ev_null(b, i)) {
      store_int(out, i, 0);
      continue;
    }
    int64_t r = 0;
    if (id == DP_F_MULTIPLY || id == DP_F_DIVIDE) {
      const dp_ev_arg *iv = ai ? a : b, *num = ai ? b : a;
      int64_t x = dp_ev_i64(iv, i);
      double f;
      if (num->v->phys == DP_PHYS_D128)
        f = (double)dp_ev_dec(num, i) / (double)dp_ev_pow10(num->v->type->scale);
      else if (num->v->phys == DP_PHYS_F32 || num->v->phys == DP_PHYS_F64)
        f = dp_ev_f64(num, i);
      else
        f = (double)dp_ev_i64(num, i);
      if (id == DP_F_DIVIDE && f == 0) {
        if ((rc = dp_ev_set_null(out, i)) != DIPPER_OK) return rc;
        continue;
      }
      if (dp_type_is_integer(num->v->type))
        r = id == DP_F_MULTIPLY ? wrap_mul(x, dp_ev_i64(num, i))
                                : (dp_ev_i64(num, i) == -1 ? wrap_sub(0, x) : x / dp_ev_i64(num, i));
      else {
        double d = id == DP_F_MULTIPLY ? (double)x * f : (double)x / f;
        r = isnan(d) ? 0 : d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)llround(d);
      }
    } else if (ai && bi) {
      r = id == DP_F_ADD ? wrap_add(dp_ev_i64(a, i), dp_ev_i64(b, i))
                         : wrap_sub(dp_ev_i64(a, i), dp_ev_i64(b, i));
    } else if (bi) { /* time ± interval */
      int64_t amount = dp_ev_i64(b, i);
      r = shift_time(ta, dp_ev_i64(a, i), tb, id == DP_F_ADD ? amount : wrap_sub(0, amount));
    } else if (ai) { /* interval + time */
      r = shift_time(tb, dp_ev_i64(b, i), ta, dp_ev_i64(a, i));
    } else { /* time - time: an INTERVAL DAY TO SECOND */
      r = wrap_sub(dp_ev_micros_of(ta, dp_ev_i64(a, i)), dp_ev_micros_of(tb, dp_ev_i64(b, i)));
    }
    store_int(out, i, r);
  }
  return DIPPER_OK;
}

static int k_arith(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  const dp_type *ta = args[0].v->type, *tb = args[1].v->type;
  int rc;
  if (dp_type_is_temporal(ta) || dp_type_is_temporal(tb) || dp_type_is_interval(ta) ||
      dp_type_is_interval(tb))
    rc = arith_temporal(e, args, n, v);
  else if (v->phys == DP_PHYS_D128)
    rc = arith_dec(c, e, args, n, v);
  else if (v->phys == DP_PHYS_F64 || v->phys == DP_PHYS_F32)
    rc = arith_float(e, args, n, v);
  else if (v->phys >= DP_PHYS_I8 && v->phys <= DP_PHYS_I64)
    rc = arith_int(c, e, args, n, v);
  else {
    char tname[96];
    dp_type_print(tname, sizeof tname, ta);
    rc = dp_ev_fail(c, e, DIPPER_INTERNAL, "%s of %s has no kernel", e->u.call.fn->name, tname);
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

static int k_negate(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = dp_ev_finish_nulls(v, args, 1, n);
  for (int64_t i = 0; i < n && !rc; i++) {
    switch (v->phys) {
    case DP_PHYS_F32:
    case DP_PHYS_F64: store_f64(v, i, -dp_ev_f64(&args[0], i)); break;
    case DP_PHYS_D128: ((dp_i128 *)v->values)[i] = -dp_ev_dec(&args[0], i); break;
    default: store_int(v, i, wrap_sub(0, dp_ev_i64(&args[0], i))); break;
    }
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

/* ---- comparisons ---- */

/* Pack a per-row condition into the BOOLEAN bitmap of v. */
#define PACK(V, N, COND)                                          \
  do {                                                            \
    uint8_t *bits_ = (uint8_t *)(V)->values;                      \
    int64_t full_ = (N) / 8;                                      \
    for (int64_t byte_ = 0; byte_ < full_; byte_++) {             \
      unsigned m_ = 0;                                            \
      for (int k_ = 0; k_ < 8; k_++) {                            \
        int64_t i = byte_ * 8 + k_;                               \
        m_ |= (unsigned)(COND) << k_;                             \
      }                                                           \
      bits_[byte_] = (uint8_t)m_;                                 \
    }                                                             \
    for (int64_t i = full_ * 8; i < (N); i++) dp_bit_set(bits_, i, (COND)); \
  } while (0)

static int cmp_result(int id, int c) {
  switch (id) {
  case DP_F_EQ: return c == 0;
  case DP_F_NE: return c != 0;
  case DP_F_LT: return c < 0;
  case DP_F_LE: return c <= 0;
  case DP_F_GT: return c > 0;
  default: return c >= 0;
  }
}

/* IEEE: NaN compares unequal and unordered (see eval_int.h). */
static bool cmp_double(int id, double x, double y) {
  if (isnan(x) || isnan(y)) return id == DP_F_NE;
  return cmp_result(id, (x > y) - (x < y));
}

#define CMP_LOOPS(T, A, B)                                                          \
  do {                                                                              \
    const T *A_ = (const T *)(A), *B_ = (const T *)(B);                             \
    if (!a->is_const && !b->is_const) {                                             \
      switch (id) {                                                                 \
      case DP_F_EQ: PACK(v, n, A_[i] == B_[i]); break;                              \
      case DP_F_NE: PACK(v, n, A_[i] != B_[i]); break;                              \
      case DP_F_LT: PACK(v, n, A_[i] < B_[i]); break;                               \
      case DP_F_LE: PACK(v, n, A_[i] <= B_[i]); break;                              \
      case DP_F_GT: PACK(v, n, A_[i] > B_[i]); break;                               \
      default: PACK(v, n, A_[i] >= B_[i]); break;                                   \
      }                                                                             \
    } else if (b->is_const) {                                                       \
      T y_ = B_[0];                                                                 \
      switch (id) {                                                                 \
      case DP_F_EQ: PACK(v, n, A_[i] == y_); break;                                 \
      case DP_F_NE: PACK(v, n, A_[i] != y_); break;                                 \
      case DP_F_LT: PACK(v, n, A_[i] < y_); break;                                  \
      case DP_F_LE: PACK(v, n, A_[i] <= y_); break;                                 \
      case DP_F_GT: PACK(v, n, A_[i] > y_); break;                                  \
      default: PACK(v, n, A_[i] >= y_); break;                                      \
      }                                                                             \
    } else {                                                                        \
      T x_ = A_[0];                                                                 \
      switch (id) {                                                                 \
      case DP_F_EQ: PACK(v, n, x_ == B_[i]); break;                                 \
      case DP_F_NE: PACK(v, n, x_ != B_[i]); break;                                 \
      case DP_F_LT: PACK(v, n, x_ < B_[i]); break;                                  \
      case DP_F_LE: PACK(v, n, x_ <= B_[i]); break;                                 \
      case DP_F_GT: PACK(v, n, x_ > B_[i]); break;                                  \
      default: PACK(v, n, x_ >= B_[i]); break;                                      \
      }                                                                             \
    }                                                                               \
  } while (0)

static int k_compare(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  int id = e->u.call.fn->id;
  const dp_ev_arg *a = &args[0], *b = &args[1];
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = dp_ev_finish_nulls(v, args, 2, n);
  dp_phys pa = a->v->phys, pb = b->v->phys;
  if (rc) {
  } else if (pa == DP_PHYS_I64 && pb == DP_PHYS_I64 && !(a->is_const && b->is_const)) {
    CMP_LOOPS(int64_t, a->v->values, b->v->values);
  } else if (pa == DP_PHYS_F64 && pb == DP_PHYS_F64 && !(a->is_const && b->is_const)) {
    CMP_LOOPS(double, a->v->values, b->v->values);
  } else if (pa == DP_PHYS_I32 && pb == DP_PHYS_I32 && !(a->is_const && b->is_const)) {
    CMP_LOOPS(int32_t, a->v->values, b->v->values);
  } else if (pa == DP_PHYS_VARBIN && pb == DP_PHYS_VARBIN && b->is_const && !a->is_const &&
             (id == DP_F_EQ || id == DP_F_NE) && !dp_ev_null(b, 0)) {
    /* column = 'literal': a length check, then memcmp */
    size_t ylen;
    const char *y = dp_ev_str(b, 0, &ylen);
    const int32_t *off = a->v->offsets;
    const char *data = a->v->data ? a->v->data : "";
    bool eq = id == DP_F_EQ;
    PACK(v, n, ((size_t)(off[i + 1] - off[i]) == ylen && memcmp(data + off[i], y, ylen) == 0) == eq);
  } else if ((pa == DP_PHYS_F64 || pa == DP_PHYS_F32) && (pb == DP_PHYS_F64 || pb == DP_PHYS_F32)) {
    PACK(v, n, !dp_ev_null(a, i) && !dp_ev_null(b, i) && cmp_double(id, dp_ev_f64(a, i), dp_ev_f64(b, i)));
  } else {
    PACK(v, n, dp_ev_null(a, i) || dp_ev_null(b, i)
                   ? 0
                   : cmp_result(id, dp_vector_row_compare(a->v, dp_ev_row(a, i), b->v, dp_ev_row(b, i))));
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

static int k_distinct(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  bool want_distinct = e->u.call.fn->id == DP_F_IS_DISTINCT_FROM;
  const dp_ev_arg *a = &args[0], *b = &args[1];
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  PACK(v, n, dp_vector_row_equal(a->v, dp_ev_row(a, i), b->v, dp_ev_row(b, i)) != want_distinct);
  v->length = n;
  *out = v;
  return DIPPER_OK;
}

/* ---- logic ---- */

/* Byte b (8 rows) of an operand's value bits and validity bits. */
static void logic_byte(const dp_ev_arg *a, int64_t byte, uint8_t *val, uint8_t *ok) {
  if (a->is_const) {
    bool isnull = dp_vector_is_null(a->v, 0);
    *ok = isnull ? 0 : 0xff;
    *val = !isnull && dp_vector_get_bool(a->v, 0) ? 0xff : 0;
    return;
  }
  if (a->v->phys != DP_PHYS_BIT) {
    *ok = 0;
    *val = 0;
    return;
  }
  *val = ((const uint8_t *)a->v->values)[byte];
  *ok = a->v->validity && a->v->null_count > 0 ? a->v->validity[byte] : 0xff;
}

static int k_andor(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  bool is_and = e->u.call.fn->id == DP_F_AND;
  int nargs = e->u.call.nargs;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int64_t bytes = (n + 7) / 8;
  uint8_t *valid = malloc((size_t)(bytes ? bytes : 1));
  if (!valid) {
    dp_vector_free(v);
    return DIPPER_NOMEM;
  }
  uint8_t *vals = v->values;
  int64_t nulls = 0;
  for (int64_t byte = 0; byte < bytes; byte++) {
    uint8_t decided = 0, unknown = 0;
    for (int k = 0; k < nargs; k++) {
      uint8_t x, ok;
      logic_byte(&args[k], byte, &x, &ok);
      /* AND is decided by a known FALSE, OR by a known TRUE */
      decided |= (uint8_t)(ok & (is_and ? (uint8_t)~x : x));
      unknown |= (uint8_t)~ok;
    }
    vals[byte] = is_and ? (uint8_t)~decided : decided;
    valid[byte] = (uint8_t)(decided | (uint8_t)~unknown);
    if (byte == bytes - 1 && (n & 7)) valid[byte] = (uint8_t)(valid[byte] | ~((1u << (n & 7)) - 1u));
    nulls += 8 - __builtin_popcount(valid[byte]);
  }
  v->length = n;
  if (nulls) {
    v->validity = valid;
    v->null_count = nulls;
    /* reserve() grows a bitmap of capacity bits: keep it that large */
    size_t need = (size_t)((v->capacity + 7) / 8);
    if (need > (size_t)bytes) {
      uint8_t *p = realloc(valid, need);
      if (!p) {
        dp_vector_free(v);
        return DIPPER_NOMEM;
      }
      memset(p + bytes, 0, need - (size_t)bytes);
      v->validity = p;
    }
  } else {
    free(valid);
  }
  *out = v;
  return DIPPER_OK;
}

static int k_not(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = dp_ev_finish_nulls(v, args, 1, n);
  if (!rc) {
    if (args[0].is_const) {
      memset(v->values, dp_ev_bool(&args[0], 0) ? 0 : 0xff, (size_t)((n + 7) / 8));
    } else {
      const uint8_t *src = args[0].v->values;
      uint8_t *dst = v->values;
      for (int64_t b = 0; b < (n + 7) / 8; b++) dst[b] = (uint8_t)~src[b];
    }
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

static int k_is(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  int id = e->u.call.fn->id;
  const dp_ev_arg *a = &args[0];
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  switch (id) {
  case DP_F_IS_NULL: PACK(v, n, dp_ev_null(a, i)); break;
  case DP_F_IS_NOT_NULL: PACK(v, n, !dp_ev_null(a, i)); break;
  case DP_F_IS_TRUE: PACK(v, n, !dp_ev_null(a, i) && dp_ev_bool(a, i)); break;
  default: PACK(v, n, !dp_ev_null(a, i) && !dp_ev_bool(a, i)); break;
  }
  v->length = n;
  *out = v;
  return DIPPER_OK;
}

/* x IN (a, b, ...): TRUE on a match; else NULL when x or an item is NULL. */
static int k_in(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  int nargs = e->u.call.nargs;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  const dp_ev_arg *x = &args[0];
  for (int64_t i = 0; i < n && !rc; i++) {
    if (dp_ev_null(x, i)) {
      rc = dp_vector_append_null(v);
      continue;
    }
    bool found = false, saw_null = false;
    for (int k = 1; k < nargs && !found; k++) {
      if (dp_ev_null(&args[k], i))
        saw_null = true;
      else if (dp_vector_row_equal(x->v, dp_ev_row(x, i), args[k].v, dp_ev_row(&args[k], i)))
        found = true;
    }
    rc = !found && saw_null ? dp_vector_append_null(v) : dp_vector_append_bool(v, found);
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

static int k_bit(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  int id = e->u.call.fn->id;
  int nargs = e->u.call.nargs;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = dp_ev_finish_nulls(v, args, nargs, n);
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t x = dp_ev_i64(&args[0], i), r;
    if (id == DP_F_BITNOT) {
      r = ~x;
    } else {
      int64_t y = dp_ev_i64(&args[1], i);
      r = id == DP_F_BITAND ? (x & y) : id == DP_F_BITOR ? (x | y) : (x ^ y);
    }
    store_int(v, i, r);
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

/* ---- math ---- */

static double dec_to_double(const dp_ev_arg *a, int64_t i) {
  return (double)dp_ev_dec(a, i) / (double)dp_ev_pow10(a->v->type->scale);
}

static double num_at(const dp_ev_arg *a, int64_t i) {
  switch (a->v->phys) {
  case DP_PHYS_F32:
  case DP_PHYS_F64: return dp_ev_f64(a, i);
  case DP_PHYS_D128: return dec_to_double(a, i);
  default: return (double)dp_ev_i64(a, i);
  }
}

static int k_double_fn(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  int id = e->u.call.fn->id;
  int nargs = e->u.call.nargs;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = dp_ev_finish_nulls(v, args, nargs, n);
  double *O = v->values;
  for (int64_t i = 0; i < n && !rc; i++) {
    double x = nargs > 0 ? num_at(&args[0], i) : 0, y = nargs > 1 ? num_at(&args[1], i) : 0, r = 0;
    bool null = false;
    switch (id) {
    case DP_F_SQRT: r = sqrt(x); break;
    case DP_F_POWER: r = pow(x, y); break;
    case DP_F_EXP: r = exp(x); break;
    case DP_F_LN: null = x <= 0; r = log(x); break;
    case DP_F_LOG10: null = x <= 0; r = log10(x); break;
    case DP_F_LOG2: null = x <= 0; r = log2(x); break;
    case DP_F_LOG:
      if (nargs == 1) {
        null = x <= 0;
        r = log(x);
      } else { /* LOG(base, x) */
        null = x <= 0 || y <= 0 || x == 1;
        r = log(y) / log(x);
      }
      break;
    case DP_F_SIN: r = sin(x); break;
    case DP_F_COS: r = cos(x); break;
    case DP_F_TAN: r = tan(x); break;
    case DP_F_ASIN: r = asin(x); break;
    case DP_F_ACOS: r = acos(x); break;
    case DP_F_ATAN: r = atan(x); break;
    case DP_F_ATAN2: r = atan2(x, y); break;
    case DP_F_DEGREES: r = x * (180.0 / DP_EV_PI); break;
    case DP_F_RADIANS: r = x * (DP_EV_PI / 180.0); break;
    case DP_F_SINH: r = sinh(x); break;
    case DP_F_COSH: r = cosh(x); break;
    case DP_F_TANH: r = tanh(x); break;
    case DP_F_COT: r = 1.0 / tan(x); break; /* COT(0) is Infinity, as Java's 1.0d / Math.tan(0) */
    case DP_F_E: r = 2.718281828459045; break;
    default: r = DP_EV_PI; break; /* PI */
    }
    if (null && !dp_vector_is_null(v, i)) rc = dp_ev_set_null(v, i);
    O[i] = null ? 0 : r;
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

/* Per-query-run random state: seeded from the clock unless RAND(seed). */
static uint64_t next_random(uint64_t *s) {
  uint64_t x = (*s += UINT64_C(0x9e3779b97f4a7c15));
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static int k_rand(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  uint64_t state;
  bool seeded = e->u.call.fn->id == DP_F_RAND_INTEGER ? e->u.call.nargs == 2 : e->u.call.nargs == 1;
  if (seeded && !dp_ev_null(&args[0], 0)) {
    /* RAND(seed): the same sequence for the same seed, batch after batch
    ** continuing from the batch id */
    state = (uint64_t)dp_ev_i64(&args[0], 0) * UINT64_C(0x2545f4914f6cdd1d) +
            (uint64_t)(c->ex ? c->ex->batch_id : 0);
  } else {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    state = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)v;
  }
  if (e->u.call.fn->id == DP_F_RAND_INTEGER) {
    /* RAND_INTEGER([seed,] bound): 0 <= r < bound; NULL for a NULL bound */
    const dp_ev_arg *bound = &args[e->u.call.nargs - 1];
    int rc = dp_ev_finish_nulls(v, bound, 1, n);
    int32_t *I = v->values;
    for (int64_t i = 0; i < n && !rc; i++) {
      if (dp_ev_null(bound, i)) continue;
      int64_t b = dp_ev_i64(bound, i);
      if (b <= 0) {
        rc = dp_ev_data_error(c, e, "RAND_INTEGER needs a bound above 0, not %lld", (long long)b);
        break;
      }
      I[i] = (int32_t)((next_random(&state) >> 11) % (uint64_t)b);
    }
    if (rc) {
      dp_vector_free(v);
      return rc;
    }
    *out = v;
    return DIPPER_OK;
  }
  double *O = v->values;
  for (int64_t i = 0; i < n; i++) O[i] = (double)(next_random(&state) >> 11) * 0x1.0p-53;
  v->length = n;
  *out = v;
  return DIPPER_OK;
}

static int k_abs_sign(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  bool is_abs = e->u.call.fn->id == DP_F_ABS;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = dp_ev_finish_nulls(v, args, 1, n);
  const dp_ev_arg *a = &args[0];
  for (int64_t i = 0; i < n && !rc; i++) {
    switch (v->phys) {
    case DP_PHYS_F32:
    case DP_PHYS_F64: {
      double x = dp_ev_f64(a, i);
      store_f64(v, i, is_abs ? fabs(x) : isnan(x) ? x : (double)((x > 0) - (x < 0)));
      break;
    }
    case DP_PHYS_D128: {
      dp_i128 x = dp_ev_dec(a, i);
      ((dp_i128 *)v->values)[i] =
          is_abs ? (x < 0 ? -x : x) : (dp_i128)((x > 0) - (x < 0)) * dp_ev_pow10(v->type->scale);
      break;
    }
    default: {
      int64_t x = dp_ev_i64(a, i);
      store_int(v, i, is_abs ? (x < 0 ? wrap_sub(0, x) : x) : (x > 0) - (x < 0));
      break;
    }
    }
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

/* CEIL/FLOOR of a number (a DATE/TIME/TIMESTAMP goes to eval_time.c). */
static int k_floorceil(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  if (dp_type_is_temporal(args[0].v->type)) return dp_ev_time_floorceil(c, e, args, n, out);
  bool is_floor = e->u.call.fn->id == DP_F_FLOOR;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = dp_ev_finish_nulls(v, args, 1, n);
  const dp_ev_arg *a = &args[0];
  for (int64_t i = 0; i < n && !rc; i++) {
    switch (a->v->phys) {
    case DP_PHYS_F32:
    case DP_PHYS_F64: {
      double x = dp_ev_f64(a, i);
      store_f64(v, i, is_floor ? floor(x) : ceil(x));
      break;
    }
    case DP_PHYS_D128: {
      dp_i128 x = dp_ev_dec(a, i), f = dp_ev_pow10(a->v->type->scale);
      dp_i128 q = x / f, r = x % f;
      if (r != 0 && is_floor && x < 0) q -= 1;
      if (r != 0 && !is_floor && x > 0) q += 1;
      dp_i128 res;
      if (!dp_ev_rescale(q, 0, v->type->scale, &res)) res = q;
      ((dp_i128 *)v->values)[i] = res;
      break;
    }
    default: store_int(v, i, dp_ev_i64(a, i)); break;
    }
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

/* x rounded (or truncated) to `digits` decimal places, half away from zero. */
static double round_double(double x, int64_t digits, bool trunc_) {
  if (isnan(x) || isinf(x)) return x;
  if (digits > 300) return x;
  if (digits < -300) return 0 * x;
  double f = pow(10.0, (double)(digits < 0 ? -digits : digits));
  double s = digits >= 0 ? x * f : x / f;
  if (isinf(s)) return x;
  /* nudge values like 2.675 (stored as 2.67499..) that print as half */
  double r = trunc_ ? trunc(s) : round(s);
  if (!trunc_ && fabs(s - trunc(s)) != 0.5) {
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", s);
    r = round(strtod(buf, NULL));
  }
  return digits >= 0 ? r / f : r * f;
}

static int k_round(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  bool trunc_ = e->u.call.fn->id == DP_F_TRUNCATE;
  int nargs = e->u.call.nargs;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = dp_ev_finish_nulls(v, args, nargs, n);
  const dp_ev_arg *a = &args[0];
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t digits = nargs > 1 ? dp_ev_i64(&args[1], i) : 0;
    switch (a->v->phys) {
    case DP_PHYS_F32:
    case DP_PHYS_F64: store_f64(v, i, round_double(dp_ev_f64(a, i), digits, trunc_)); break;
    case DP_PHYS_D128: {
      int s = a->v->type->scale;
      dp_i128 x = dp_ev_dec(a, i), r = x;
      if (digits < s) {
        int drop = (int)(s - (digits < -38 ? -38 : digits));
        if (drop > 38) drop = 38;
        dp_i128 f = dp_ev_pow10(drop), q = x / f, rem = x % f;
        if (!trunc_ && 2 * (rem < 0 ? -rem : rem) >= f) q += x < 0 ? -1 : 1;
        if (__builtin_mul_overflow(q, f, &r)) r = 0;
      }
      dp_i128 res;
      if (!dp_ev_rescale(r, s, v->type->scale, &res)) res = 0;
      ((dp_i128 *)v->values)[i] = res;
      break;
    }
    default: {
      int64_t x = dp_ev_i64(a, i), r = x;
      if (digits < 0) {
        if (digits < -18) {
          r = 0;
        } else {
          int64_t f = 1;
          for (int64_t k = 0; k < -digits; k++) f *= 10;
          int64_t q = x / f, rem = x % f;
          if (!trunc_ && 2 * (rem < 0 ? -rem : rem) >= f) q += x < 0 ? -1 : 1;
          r = wrap_mul(q, f);
        }
      }
      store_int(v, i, r);
      break;
    }
    }
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

/* ---- conditionals ---- */

/* Build the result by picking, per row, argument pick(i) (-1: NULL). */
static int pick_rows(const dp_expr *e, const dp_ev_arg *args, int64_t n, const int *choice,
                     dp_vector **out) {
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    int k = choice[i];
    rc = k < 0 ? dp_vector_append_null(v)
               : dp_vector_append_from(v, args[k].v, dp_ev_row(&args[k], i));
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

static int k_conditional(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n,
                         dp_vector **out) {
  (void)c;
  int id = e->u.call.fn->id;
  int nargs = e->u.call.nargs;
  int *choice = malloc((size_t)(n ? n : 1) * sizeof *choice);
  if (!choice) return DIPPER_NOMEM;
  for (int64_t i = 0; i < n; i++) {
    int k = -1;
    switch (id) {
    case DP_F_COALESCE:
    case DP_F_IFNULL:
      for (int j = 0; j < nargs && k < 0; j++)
        if (!dp_ev_null(&args[j], i)) k = j;
      break;
    case DP_F_NULLIF:
      k = !dp_ev_null(&args[0], i) && !dp_ev_null(&args[1], i) &&
                  dp_vector_row_equal(args[0].v, dp_ev_row(&args[0], i), args[1].v,
                                      dp_ev_row(&args[1], i))
              ? -1
              : 0;
      break;
    case DP_F_IF: k = !dp_ev_null(&args[0], i) && dp_ev_bool(&args[0], i) ? 1 : 2; break;
    default: { /* GREATEST / LEAST: NULL when any argument is */
      bool greatest = id == DP_F_GREATEST;
      k = 0;
      for (int j = 0; j < nargs; j++) {
        if (dp_ev_null(&args[j], i)) {
          k = -1;
          break;
        }
        if (j == 0) continue;
        int cmp = dp_vector_row_compare(args[j].v, dp_ev_row(&args[j], i), args[k].v,
                                        dp_ev_row(&args[k], i));
        if (greatest ? cmp > 0 : cmp < 0) k = j;
      }
      break;
    }
    }
    choice[i] = k;
  }
  int rc = pick_rows(e, args, n, choice, out);
  free(choice);
  return rc;
}

dp_ev_kernel dp_ev_kernel_arith(int fn_id) {
  switch (fn_id) {
  case DP_F_ADD:
  case DP_F_SUBTRACT:
  case DP_F_MULTIPLY:
  case DP_F_DIVIDE:
  case DP_F_MOD: return k_arith;
  case DP_F_NEGATE: return k_negate;
  case DP_F_AND:
  case DP_F_OR: return k_andor;
  case DP_F_NOT: return k_not;
  case DP_F_EQ:
  case DP_F_NE:
  case DP_F_LT:
  case DP_F_LE:
  case DP_F_GT:
  case DP_F_GE: return k_compare;
  case DP_F_IS_NULL:
  case DP_F_IS_NOT_NULL:
  case DP_F_IS_TRUE:
  case DP_F_IS_FALSE: return k_is;
  case DP_F_IS_DISTINCT_FROM:
  case DP_F_IS_NOT_DISTINCT_FROM: return k_distinct;
  case DP_F_IN: return k_in;
  case DP_F_BITAND:
  case DP_F_BITOR:
  case DP_F_BITXOR:
  case DP_F_BITNOT: return k_bit;
  case DP_F_ABS:
  case DP_F_SIGN: return k_abs_sign;
  case DP_F_CEIL:
  case DP_F_FLOOR: return k_floorceil;
  case DP_F_ROUND:
  case DP_F_TRUNCATE: return k_round;
  case DP_F_SQRT:
  case DP_F_POWER:
  case DP_F_EXP:
  case DP_F_LN:
  case DP_F_LOG10:
  case DP_F_LOG2:
  case DP_F_LOG:
  case DP_F_SIN:
  case DP_F_COS:
  case DP_F_TAN:
  case DP_F_ASIN:
  case DP_F_ACOS:
  case DP_F_ATAN:
  case DP_F_ATAN2:
  case DP_F_DEGREES:
  case DP_F_RADIANS:
  case DP_F_SINH:
  case DP_F_COSH:
  case DP_F_TANH:
  case DP_F_COT:
  case DP_F_E:
  case DP_F_PI: return k_double_fn;
  case DP_F_RAND:
  case DP_F_RAND_INTEGER: return k_rand;
  case DP_F_GREATEST:
  case DP_F_LEAST:
  case DP_F_COALESCE:
  case DP_F_NULLIF:
  case DP_F_IFNULL:
  case DP_F_IF: return k_conditional;
  default: return NULL;
  }
}
