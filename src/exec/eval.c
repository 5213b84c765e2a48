/*
** eval.c — the expression evaluator (eval.h): the walk over a bound
** expression, constant operands, CASE and its lazily evaluated branches,
** and the row-level vector operations the operators share (select, hash,
** equality, order; copying rows is core/vector_take.c's).
**
** Owns: dispatch of calls to the kernel families (eval_arith.c,
** eval_string.c, eval_time.c, eval_coll.c) and casts (eval_cast.c), and the
** helpers of eval_int.h for building results.  Does not own: vectors'
** layout (core/vector.c) or the function catalog (plan/functions.c).
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/eval_int.h"

/* ---- errors ---- */

static int vfail(dp_ev *c, const dp_expr *e, int code, const char *fmt, va_list ap) {
  if (!c->ex || !c->ex->diags || !c->ex->diags->arena) return code;
  char *msg = dp_arena_vprintf(c->ex->diags->arena, fmt, ap);
  dp_span span = e ? e->span : (dp_span){0, 0, 0, 0};
  return dp_error(c->ex->diags, code, span, "%s", msg ? msg : "out of memory");
}

int dp_ev_data_error(dp_ev *c, const dp_expr *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vfail(c, e, DIPPER_DATA, fmt, ap);
  va_end(ap);
  return rc;
}

int dp_ev_fail(dp_ev *c, const dp_expr *e, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vfail(c, e, code, fmt, ap);
  va_end(ap);
  return rc;
}

/* ---- building results ---- */

dp_vector *dp_ev_new(const dp_type *t, int64_t n) { return dp_vector_new(t, n > 0 ? n : 1); }

static size_t bitmap_bytes(int64_t rows) { return (size_t)((rows + 7) / 8); }

/* A validity bitmap for v's capacity with rows [0, n) valid. */
static int ensure_validity(dp_vector *v, int64_t n) {
  if (v->validity) return DIPPER_OK;
  size_t bytes = bitmap_bytes(v->capacity > n ? v->capacity : n);
  v->validity = calloc(bytes ? bytes : 1, 1);
  if (!v->validity) return DIPPER_NOMEM;
  memset(v->validity, 0xff, bitmap_bytes(n));
  if (n & 7) v->validity[n >> 3] = (uint8_t)((1u << (unsigned)(n & 7)) - 1u);
  return DIPPER_OK;
}

int dp_ev_set_null(dp_vector *v, int64_t i) {
  if (v->phys == DP_PHYS_NULL) return DIPPER_OK;
  int rc = ensure_validity(v, v->length);
  if (rc) return rc;
  if (dp_bit_get(v->validity, i)) {
    dp_bit_set(v->validity, i, false);
    v->null_count++;
  }
  return DIPPER_OK;
}

int dp_ev_finish_nulls(dp_vector *out, const dp_ev_arg *args, int nargs, int64_t n) {
  out->length = n;
  out->null_count = 0;
  bool all_null = false, any = false;
  for (int k = 0; k < nargs; k++) {
    const dp_vector *v = args[k].v;
    if (args[k].is_const) {
      if (dp_vector_is_null(v, 0)) all_null = true;
    } else if (v->phys == DP_PHYS_NULL) {
      all_null = true;
    } else if (v->validity && v->null_count > 0) {
      any = true;
    }
  }
  if (!all_null && !any) return DIPPER_OK;
  int rc = ensure_validity(out, n);
  if (rc) return rc;
  size_t bytes = bitmap_bytes(n);
  if (all_null) {
    memset(out->validity, 0, bytes);
    out->null_count = n;
    return DIPPER_OK;
  }
  for (int k = 0; k < nargs; k++) {
    const dp_vector *v = args[k].v;
    if (args[k].is_const || !v->validity || v->null_count == 0) continue;
    for (size_t b = 0; b < bytes; b++) out->validity[b] &= v->validity[b];
  }
  /* ensure_validity left the bits past n clear, so only rows < n are counted */
  int64_t valid = 0;
  for (size_t b = 0; b < bytes; b++) valid += __builtin_popcount(out->validity[b]);
  out->null_count = n - valid;
  return DIPPER_OK;
}

/* A constant table: no first-use initialisation for threads to race on. */
static const dp_i128 pow10_table[39] = {
    (dp_i128)1ULL,
    (dp_i128)10ULL,
    (dp_i128)100ULL,
    (dp_i128)1000ULL,
    (dp_i128)10000ULL,
    (dp_i128)100000ULL,
    (dp_i128)1000000ULL,
    (dp_i128)10000000ULL,
    (dp_i128)100000000ULL,
    (dp_i128)1000000000ULL,
    (dp_i128)10000000000ULL,
    (dp_i128)100000000000ULL,
    (dp_i128)1000000000000ULL,
    (dp_i128)10000000000000ULL,
    (dp_i128)100000000000000ULL,
    (dp_i128)1000000000000000ULL,
    (dp_i128)10000000000000000ULL,
    (dp_i128)100000000000000000ULL,
    (dp_i128)1000000000000000000ULL,
    (dp_i128)10000000000000000000ULL,
    (dp_i128)10000000000000000000ULL * 10ULL,
    (dp_i128)10000000000000000000ULL * 100ULL,
    (dp_i128)10000000000000000000ULL * 1000ULL,
    (dp_i128)10000000000000000000ULL * 10000ULL,
    (dp_i128)10000000000000000000ULL * 100000ULL,
    (dp_i128)10000000000000000000ULL * 1000000ULL,
    (dp_i128)10000000000000000000ULL * 10000000ULL,
    (dp_i128)10000000000000000000ULL * 100000000ULL,
    (dp_i128)10000000000000000000ULL * 1000000000ULL,
    (dp_i128)10000000000000000000ULL * 10000000000ULL,
    (dp_i128)10000000000000000000ULL * 100000000000ULL,
    (dp_i128)10000000000000000000ULL * 1000000000000ULL,
    (dp_i128)10000000000000000000ULL * 10000000000000ULL,
    (dp_i128)10000000000000000000ULL * 100000000000000ULL,
    (dp_i128)10000000000000000000ULL * 1000000000000000ULL,
    (dp_i128)10000000000000000000ULL * 10000000000000000ULL,
    (dp_i128)10000000000000000000ULL * 100000000000000000ULL,
    (dp_i128)10000000000000000000ULL * 1000000000000000000ULL,
    (dp_i128)10000000000000000000ULL * 10000000000000000000ULL};

dp_i128 dp_ev_pow10(int n) {
  if (n < 0) n = 0;
  if (n > 38) n = 38;
  return pow10_table[n];
}

bool dp_ev_rescale(dp_i128 x, int from, int to, dp_i128 *out) {
  if (to == from) {
    *out = x;
    return true;
  }
  if (to > from) {
    if (to - from > 38) return x == 0 ? (*out = 0, true) : false;
    return !__builtin_mul_overflow(x, dp_ev_pow10(to - from), out);
  }
  if (from - to > 38) {
    *out = 0;
    return true;
  }
  dp_i128 f = dp_ev_pow10(from - to);
  dp_i128 q = x / f, r = x % f;
  if (2 * (r < 0 ? -r : r) >= f) q += x < 0 ? -1 : 1;
  *out = q;
  return true;
}

bool dp_ev_dec_fits(dp_i128 x, int precision) {
  if (precision >= 39) return true;
  dp_i128 lim = dp_ev_pow10(precision);
  return x < lim && x > -lim;
}

int dp_ev_dec_text(char *buf, dp_i128 x, int scale) {
  char digits[48];
  int nd = 0;
  bool neg = x < 0;
  /* work on the magnitude as unsigned so that the minimum value has one */
  unsigned __int128 m = neg ? (unsigned __int128)0 - (unsigned __int128)x : (unsigned __int128)x;
  do {
    digits[nd++] = (char)('0' + (int)(m % 10));
    m /= 10;
  } while (m && nd < 46);
  while (nd <= scale) digits[nd++] = '0';
  int len = 0;
  if (neg) buf[len++] = '-';
  for (int i = nd - 1; i >= 0; i--) {
    buf[len++] = digits[i];
    if (i == scale && scale > 0) buf[len++] = '.';
  }
  buf[len] = '\0';
  return len;
}

int dp_ev_double_text(char *buf, size_t cap, double d, bool is_float) {
  if (isnan(d)) return snprintf(buf, cap, "NaN");
  if (isinf(d)) return snprintf(buf, cap, d > 0 ? "Infinity" : "-Infinity");
  if (d == 0) return snprintf(buf, cap, signbit(d) ? "-0.0" : "0.0");
  double mag = fabs(d);
  /* Java's Double.toString: plain between 1e-3 and 1e7, else scientific. */
  int digits = is_float ? 6 : 15;
  char tmp[64];
  for (; digits <= 17; digits++) {
    snprintf(tmp, sizeof tmp, "%.*e", digits - 1, d);
    double back = is_float ? (double)strtof(tmp, NULL) : strtod(tmp, NULL);
    if (back == d) break;
  }
  if (digits > 17) digits = 17;
  if (mag >= 1e-3 && mag < 1e7) {
    int n = snprintf(buf, cap, "%.*f", digits, d);
    /* trim trailing zeros but keep one decimal */
    char *dot = strchr(buf, '.');
    if (dot && n > 0 && (size_t)n < cap) {
      char *end = buf + n - 1;
      while (end > dot + 1 && *end == '0') *end-- = '\0';
      n = (int)(end - buf + 1);
    }
    return n;
  }
  /* mantissa E exponent */
  char mant[64];
  snprintf(mant, sizeof mant, "%.*e", digits - 1, d);
  char *e = strchr(mant, 'e');
  if (!e) return snprintf(buf, cap, "%s", mant);
  int exp10 = atoi(e + 1);
  *e = '\0';
  char *end = e - 1;
  char *dot = strchr(mant, '.');
  if (dot) {
    while (end > dot + 1 && *end == '0') *end-- = '\0';
    return snprintf(buf, cap, "%sE%d", mant, exp10);
  }
  return snprintf(buf, cap, "%s.0E%d", mant, exp10);
}

bool dp_ev_buf_put(dp_ev_buf *b, const void *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return false;
    b->p = p;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
  return true;
}

bool dp_ev_buf_putc(dp_ev_buf *b, char ch) { return dp_ev_buf_put(b, &ch, 1); }

dp_ev_unit dp_ev_unit_of(const char *s, size_t n) {
  static const char *const names[] = {"",       "YEAR",        "QUARTER",     "MONTH",
                                      "WEEK",   "DAY",         "HOUR",        "MINUTE",
                                      "SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND",
                                      "DOW",    "DOY",         "EPOCH"};
  for (int u = 1; u < (int)(sizeof names / sizeof names[0]); u++) {
    size_t len = strlen(names[u]);
    if (len != n) continue;
    size_t i = 0;
    for (; i < n; i++) {
      char ch = s[i];
      if (ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
      if (ch != names[u][i]) break;
    }
    if (i == n) return (dp_ev_unit)u;
  }
  return DP_EV_U_NONE;
}

int64_t dp_ev_add_months(int64_t micros, int64_t months) {
  /* beyond ±10 million years nothing is representable in µs anyway */
  const int64_t limit = INT64_C(120000000);
  if (months > limit) months = limit;
  if (months < -limit) months = -limit;
  int64_t days = dp_ev_floordiv(micros, DP_MICROS_PER_DAY);
  int64_t tod = micros - days * DP_MICROS_PER_DAY;
  int64_t y;
  unsigned m, d;
  dp_civil_from_days(days, &y, &m, &d);
  int64_t total = y * 12 + (int64_t)m - 1 + months;
  int64_t ny = dp_ev_floordiv(total, 12);
  unsigned nm = (unsigned)(total - ny * 12) + 1;
  static const unsigned mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  unsigned last = mdays[nm - 1];
  if (nm == 2 && ((ny % 4 == 0 && ny % 100 != 0) || ny % 400 == 0)) last = 29;
  if (d > last) d = last;
  return dp_days_from_civil(ny, nm, d) * DP_MICROS_PER_DAY + tod;
}

/* ---- operands ---- */

void dp_ev_arg_free(dp_ev_arg *a) {
  if (a->owned) dp_vector_free(a->v);
  a->v = NULL;
  a->owned = false;
}

int dp_ev_broadcast(const dp_ev_arg *a, int64_t n, dp_vector **out) {
  dp_vector *v = dp_ev_new(a->v->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  int width = dp_phys_width(v->phys);
  if (width && !dp_vector_is_null(a->v, 0)) {
    /* fixed width: a fill, no per-row call */
    const char *src = (const char *)a->v->values;
    char *dst = (char *)v->values;
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * width, src, (size_t)width);
    v->length = n;
  } else if (v->phys == DP_PHYS_BIT && !dp_vector_is_null(a->v, 0)) {
    memset(v->values, dp_vector_get_bool(a->v, 0) ? 0xff : 0, bitmap_bytes(n));
    v->length = n;
  } else {
    for (int64_t i = 0; i < n && !rc; i++) rc = dp_vector_append_from(v, a->v, 0);
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

/* Functions that read the batch's clock or watermark: one value per batch. */
static bool per_batch_constant(int id) {
  switch (id) {
  case DP_F_CURRENT_TIMESTAMP:
  case DP_F_LOCALTIMESTAMP:
  case DP_F_CURRENT_DATE:
  case DP_F_PROCTIME:
  case DP_F_UNIX_TIMESTAMP:
  case DP_F_CURRENT_WATERMARK: return true;
  default: return false;
  }
}

/* Can evaluating e raise a data error (so that CASE must not run it on rows
** that do not reach it)? */
static bool may_fail(const dp_expr *e) {
  if (!e) return false;
  switch (e->kind) {
  case DP_E_CAST:
    if (!e->u.cast.try_) return true;
    return may_fail(e->u.cast.arg);
  case DP_E_CALL:
    if (e->type->kind == DP_T_DECIMAL || e->u.call.fn->cfunc) return true;
    if (e->u.call.fn->id == DP_F_ELEMENT || e->u.call.fn->id == DP_F_MAP_FROM_ARRAYS) return true;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (may_fail(e->u.call.args[i])) return true;
    return false;
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (may_fail(e->u.case_.whens[i]) || may_fail(e->u.case_.thens[i])) return true;
    return may_fail(e->u.case_.else_);
  case DP_E_FIELD: return may_fail(e->u.field.arg);
  default: return false;
  }
}

static int eval_call(dp_ev *c, const dp_expr *e, dp_ev_arg *out);
static int eval_case(dp_ev *c, const dp_expr *e, dp_ev_arg *out);

static int eval_literal(const dp_expr *e, dp_ev_arg *out) {
  dp_vector *v = dp_ev_new(e->type, 1);
  if (!v) return DIPPER_NOMEM;
  int rc = dp_vector_append_value(v, &e->u.value);
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = (dp_ev_arg){v, true, true};
  return DIPPER_OK;
}

/* A copy of `child` (n rows) that is also NULL wherever `row` is: the rows
** gathered in bulk, then the ROW's bitmap ANDed in a byte at a time. */
static int field_masked(const dp_vector *row, const dp_vector *child, const dp_type *t, int64_t n,
                        dp_vector **out) {
  dp_vector *v = dp_ev_new(t, n);
  int rc = v ? dp_vector_take(v, child, NULL, 0, n) : DIPPER_NOMEM;
  if (!rc && v->phys != DP_PHYS_NULL) rc = ensure_validity(v, n);
  if (!rc && v->phys != DP_PHYS_NULL) {
    int64_t nulls = 0;
    for (int64_t b = 0; b < (int64_t)bitmap_bytes(n); b++) {
      v->validity[b] &= row->validity[b];
      unsigned live = b == (n >> 3) ? (1u << (unsigned)(n & 7)) - 1u : 0xffu;
      nulls += __builtin_popcount(~(unsigned)v->validity[b] & live);
    }
    v->null_count = nulls;
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

/* A field of a ROW hands out the ROW's child vector itself when that child
** is already NULL wherever the ROW is (borrowed from a batch column, or
** taken over from a ROW we own); only otherwise is the column copied. */
static int eval_field(dp_ev *c, const dp_expr *e, dp_ev_arg *out) {
  dp_ev_arg row;
  int rc = dp_ev_eval(c, e->u.field.arg, &row);
  if (rc) return rc;
  int64_t n = row.is_const ? 1 : c->nrows;
  int idx = e->u.field.index;
  if (row.v->phys != DP_PHYS_STRUCT || idx < 0 || idx >= row.v->nchildren ||
      row.v->children[idx]->length < n) {
    dp_ev_arg_free(&row);
    return dp_ev_fail(c, e, DIPPER_INTERNAL, "field %d of a value that has no such field", idx + 1);
  }
  bool is_const = row.is_const;
  dp_vector *child = row.v->children[idx];
  /* the child vector is then the field as it stands (sources build ROWs that way) */
  if (dp_vector_nulls_covered(row.v, child, n)) {
    if (!row.owned) {
      *out = (dp_ev_arg){child, is_const, false};
      return DIPPER_OK;
    }
    row.v->children[idx] = NULL; /* ours now; dp_vector_free skips a NULL child */
    dp_ev_arg_free(&row);
    *out = (dp_ev_arg){child, is_const, true};
    return DIPPER_OK;
  }
  dp_vector *v = NULL;
  rc = field_masked(row.v, child, e->type, n, &v);
  dp_ev_arg_free(&row);
  if (rc) return rc;
  *out = (dp_ev_arg){v, is_const, true};
  return DIPPER_OK;
}

static int eval_cast(dp_ev *c, const dp_expr *e, dp_ev_arg *out) {
  dp_ev_arg arg;
  int rc = dp_ev_eval(c, e->u.cast.arg, &arg);
  if (rc) return rc;
  int64_t n = arg.is_const ? 1 : c->nrows;
  dp_vector *v = NULL;
  rc = dp_ev_cast(c, e, &arg, e->type, e->u.cast.try_, n, &v);
  bool is_const = arg.is_const;
  dp_ev_arg_free(&arg);
  if (rc) return rc;
  *out = (dp_ev_arg){v, is_const, true};
  return DIPPER_OK;
}

int dp_ev_eval(dp_ev *c, const dp_expr *e, dp_ev_arg *out) {
  *out = (dp_ev_arg){NULL, false, false};
  switch (e->kind) {
  case DP_E_COLUMN:
    if (e->u.column.outer > 0)
      return dp_ev_fail(c, e, DIPPER_UNSUPPORTED,
                        "the embedded engine runs a correlated subquery only when it becomes a "
                        "join (EXISTS / IN in WHERE, an aggregate correlated by equalities); "
                        "write the join instead");
    if (!c->in || e->u.column.index < 0 || e->u.column.index >= c->in->ncols)
      return dp_ev_fail(c, e, DIPPER_INTERNAL, "column %d is not in the operator's input",
                        e->u.column.index + 1);
    *out = (dp_ev_arg){c->in->cols[e->u.column.index], false, false};
    return DIPPER_OK;
  case DP_E_LITERAL: return eval_literal(e, out);
  case DP_E_CALL: return eval_call(c, e, out);
  case DP_E_CAST: return eval_cast(c, e, out);
  case DP_E_CASE: return eval_case(c, e, out);
  case DP_E_FIELD: return eval_field(c, e, out);
  case DP_E_SUBQUERY:
    /* The binder turns most subqueries into joins; the uncorrelated ones left
    ** run once per query run (subquery.c).  Correlated ones never get here:
    ** validate.c and exec.c refuse them before the query runs. */
    return dp_ev_subquery(c, e, out);
  }
  return dp_ev_fail(c, e, DIPPER_INTERNAL, "unknown expression kind %d", (int)e->kind);
}

/* ---- evaluation over a subset of rows (lazy branches) ---- */

/* e over the rows sel[0..n) of the batch: a vector of n rows. */
static int eval_on_rows(dp_ev *c, const dp_expr *e, const int64_t *sel, int64_t n, dp_vector **out) {
  /* the sub-batch is built from the columns themselves: an operator's batch
  ** need not carry a schema */
  dp_batch *sub = calloc(1, sizeof *sub);
  if (!sub) return DIPPER_NOMEM;
  sub->schema = c->in->schema;
  sub->ncols = c->in->ncols;
  sub->cols = calloc((size_t)(sub->ncols ? sub->ncols : 1), sizeof *sub->cols);
  int rc = sub->cols ? DIPPER_OK : DIPPER_NOMEM;
  for (int k = 0; k < sub->ncols && !rc; k++)
    if (!(sub->cols[k] = dp_ev_new(c->in->cols[k]->type, n))) rc = DIPPER_NOMEM;
  if (!rc) rc = dp_batch_take(sub, c->in, sel, 0, n);
  sub->nrows = n;
  if (!rc) {
    dp_ev sc = {c->ex, sub, n};
    dp_ev_arg a;
    rc = dp_ev_eval(&sc, e, &a);
    if (!rc) {
      if (a.is_const) {
        rc = dp_ev_broadcast(&a, n, out);
        dp_ev_arg_free(&a);
      } else if (a.owned) {
        *out = a.v;
      } else {
        /* a bare column of sub: copy it out before sub goes */
        dp_vector *v = dp_ev_new(e->type, n);
        if (!v) rc = DIPPER_NOMEM;
        for (int64_t i = 0; i < n && !rc; i++) rc = dp_vector_append_from(v, a.v, i);
        if (rc)
          dp_vector_free(v);
        else
          *out = v;
      }
    }
  }
  for (int k = 0; sub->cols && k < sub->ncols; k++) dp_vector_free(sub->cols[k]);
  free(sub->cols);
  free(sub);
  return rc;
}

/* Which branch each row takes (CASE, IF): branch[i] in 0..nb-1, nb = ELSE. */
typedef struct branches {
  int nb;                 /* number of THEN branches; index nb is ELSE */
  const dp_expr **exprs;  /* nb + 1, ELSE may be NULL: NULL value */
} branches;

/* Build the result from the chosen branch of every row.  Branches that may
** fail are evaluated only on their rows. */
static int assemble(dp_ev *c, const dp_expr *e, const branches *br, const int *choice, int64_t n,
                    dp_ev_arg *out) {
  int nb = br->nb + 1;
  int rc = DIPPER_OK;
  dp_ev_arg *vals = calloc((size_t)nb, sizeof *vals);
  int64_t *counts = calloc((size_t)nb, sizeof *counts);
  int64_t *pos = calloc((size_t)(n ? n : 1), sizeof *pos);
  int64_t *sel = calloc((size_t)(n ? n : 1), sizeof *sel);
  bool *sparse = calloc((size_t)nb, sizeof *sparse);
  dp_vector *res = dp_ev_new(e->type, n);
  if (!vals || !counts || !pos || !sel || !sparse || !res) rc = DIPPER_NOMEM;
  for (int64_t i = 0; i < n && !rc; i++) pos[i] = counts[choice[i]]++;
  for (int b = 0; b < nb && !rc; b++) {
    const dp_expr *x = br->exprs[b];
    if (!x || counts[b] == 0) continue;
    if (may_fail(x) && counts[b] < n) {
      int64_t k = 0;
      for (int64_t i = 0; i < n; i++)
        if (choice[i] == b) sel[k++] = i;
      dp_vector *v = NULL;
      rc = eval_on_rows(c, x, sel, k, &v);
      if (!rc) vals[b] = (dp_ev_arg){v, false, true};
      sparse[b] = true;
    } else {
      rc = dp_ev_eval(c, x, &vals[b]);
    }
  }
  /* 4- and 8-byte results (integers, timestamps) are gathered with one store
  ** per row; nulls are marked afterwards, only where they are. */
  int width = res ? dp_phys_width(res->phys) : 0;
  bool gather = !rc && (width == 4 || width == 8);
  for (int b = 0; b < nb && gather; b++)
    if (vals[b].v && vals[b].v->phys != res->phys) gather = false;
  if (gather) {
    rc = dp_vector_reserve(res, n);
    for (int64_t i = 0; i < n && !rc; i++) {
      int b = choice[i];
      const dp_vector *src = vals[b].v;
      int64_t row = !src ? 0 : vals[b].is_const ? 0 : sparse[b] ? pos[i] : i;
      bool null = !src || dp_vector_is_null(src, row);
      if (width == 8)
        ((int64_t *)res->values)[i] = null ? 0 : ((const int64_t *)src->values)[row];
      else
        ((int32_t *)res->values)[i] = null ? 0 : ((const int32_t *)src->values)[row];
    }
    if (!rc) res->length = n;
    for (int64_t i = 0; i < n && !rc; i++) {
      int b = choice[i];
      int64_t row = vals[b].is_const ? 0 : sparse[b] ? pos[i] : i;
      if (!vals[b].v || dp_vector_is_null(vals[b].v, row)) rc = dp_ev_set_null(res, i);
    }
  }
  for (int64_t i = 0; i < n && !rc && !gather; i++) {
    int b = choice[i];
    if (!vals[b].v) {
      rc = dp_vector_append_null(res);
      continue;
    }
    int64_t row = vals[b].is_const ? 0 : sparse[b] ? pos[i] : i;
    rc = dp_vector_append_from(res, vals[b].v, row);
  }
  if (vals)
    for (int b = 0; b < nb; b++) dp_ev_arg_free(&vals[b]);
  free(vals);
  free(counts);
  free(pos);
  free(sel);
  free(sparse);
  if (rc) {
    dp_vector_free(res);
    return rc;
  }
  *out = (dp_ev_arg){res, false, true};
  return DIPPER_OK;
}

static bool all_constant(const dp_expr *e) { return dp_expr_is_constant(e); }

static int eval_case(dp_ev *c, const dp_expr *e, dp_ev_arg *out) {
  int nw = e->u.case_.n;
  /* A constant CASE is evaluated on one row. */
  bool constant = all_constant(e);
  int64_t n = constant ? 1 : c->nrows;
  int *choice = calloc((size_t)(n ? n : 1), sizeof *choice);
  const dp_expr **exprs = calloc((size_t)nw + 1, sizeof *exprs);
  if (!choice || !exprs) {
    free(choice);
    free(exprs);
    return DIPPER_NOMEM;
  }
  for (int64_t i = 0; i < n; i++) choice[i] = -1;
  int rc = DIPPER_OK;
  int64_t undecided = n;
  for (int w = 0; w < nw && !rc && undecided > 0; w++) {
    exprs[w] = e->u.case_.thens[w];
    dp_ev_arg cond;
    rc = dp_ev_eval(c, e->u.case_.whens[w], &cond);
    if (rc) break;
    for (int64_t i = 0; i < n; i++) {
      if (choice[i] >= 0) continue;
      if (!dp_ev_null(&cond, i) && dp_ev_bool(&cond, i)) {
        choice[i] = w;
        undecided--;
      }
    }
    dp_ev_arg_free(&cond);
  }
  for (int w = 0; w < nw; w++) exprs[w] = e->u.case_.thens[w];
  exprs[nw] = e->u.case_.else_;
  for (int64_t i = 0; i < n; i++)
    if (choice[i] < 0) choice[i] = nw;
  if (!rc) {
    branches br = {nw, exprs};
    dp_ev sc = *c;
    if (constant) sc.nrows = 1;
    rc = assemble(&sc, e, &br, choice, n, out);
    if (!rc && constant) out->is_const = true;
  }
  free(choice);
  free(exprs);
  return rc;
}

/* IF(cond, a, b), COALESCE and IFNULL/NVL with branches that may fail: the
** same row-picking as CASE. */
static int eval_lazy_call(dp_ev *c, const dp_expr *e, int64_t n, dp_ev_arg *out) {
  int id = e->u.call.fn->id;
  int nargs = e->u.call.nargs;
  dp_expr **args = e->u.call.args;
  int *choice = calloc((size_t)(n ? n : 1), sizeof *choice);
  if (!choice) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  branches br;
  const dp_expr *pair[2];
  const dp_expr **list = NULL;
  if (id == DP_F_IF) {
    dp_ev_arg cond;
    rc = dp_ev_eval(c, args[0], &cond);
    if (!rc) {
      for (int64_t i = 0; i < n; i++)
        choice[i] = !dp_ev_null(&cond, i) && dp_ev_bool(&cond, i) ? 0 : 1;
      dp_ev_arg_free(&cond);
    }
    pair[0] = args[1];
    pair[1] = args[2];
    br = (branches){1, pair};
  } else {
    /* COALESCE/IFNULL: each argument is evaluated on the rows still NULL */
    list = calloc((size_t)nargs + 1, sizeof *list);
    if (!list) rc = DIPPER_NOMEM;
    for (int64_t i = 0; i < n; i++) choice[i] = nargs; /* the NULL "else" */
    int64_t *sel = calloc((size_t)(n ? n : 1), sizeof *sel);
    if (!sel) rc = DIPPER_NOMEM;
    int64_t left = n;
    for (int k = 0; k < nargs && !rc && left > 0; k++) {
      list[k] = args[k];
      int64_t m = 0;
      for (int64_t i = 0; i < n; i++)
        if (choice[i] == nargs) sel[m++] = i;
      dp_vector *v = NULL;
      if (m == n) {
        dp_ev_arg a;
        rc = dp_ev_eval(c, args[k], &a);
        if (rc) break;
        for (int64_t i = 0; i < n; i++)
          if (!dp_ev_null(&a, i)) choice[i] = k, left--;
        dp_ev_arg_free(&a);
        continue;
      }
      rc = eval_on_rows(c, args[k], sel, m, &v);
      if (rc) break;
      for (int64_t j = 0; j < m; j++)
        if (!dp_vector_is_null(v, j)) choice[sel[j]] = k, left--;
      dp_vector_free(v);
    }
    free(sel);
    if (list) list[nargs] = NULL;
    br = (branches){nargs, list};
  }
  if (!rc) rc = assemble(c, e, &br, choice, n, out);
  free(list);
  free(choice);
  return rc;
}

static int eval_call(dp_ev *c, const dp_expr *e, dp_ev_arg *out) {
  const dp_func *fn = e->u.call.fn;
  int nargs = e->u.call.nargs;
  if (fn->kind != DP_FN_SCALAR)
    return dp_ev_fail(c, e, DIPPER_INTERNAL,
                      "%s is an aggregate or window function; it is computed by its operator, "
                      "not as a scalar",
                      fn->name);
  int id = fn->id;
  bool lazy = false;
  if (id == DP_F_IF || id == DP_F_COALESCE || id == DP_F_IFNULL)
    for (int k = 0; k < nargs && !lazy; k++) lazy = may_fail(e->u.call.args[k]);
  bool constant = per_batch_constant(id) || fn->deterministic;
  if (lazy) {
    constant = dp_expr_is_constant(e);
    dp_ev sc = *c;
    if (constant) sc.nrows = 1;
    int rc = eval_lazy_call(&sc, e, constant ? 1 : c->nrows, out);
    if (!rc && constant) out->is_const = true;
    return rc;
  }
  dp_ev_kernel k = fn->cfunc ? dp_ev_cfunc : dp_ev_kernel_arith(id);
  if (!k) k = dp_ev_kernel_string(id);
  if (!k) k = dp_ev_kernel_time(id);
  if (!k) k = dp_ev_kernel_coll(id);
  if (!k)
    return dp_ev_fail(c, e, DIPPER_UNSUPPORTED,
                      "%s is not run by the embedded engine%s", fn->name,
                      (id >= DP_F_TUMBLE_START && id <= DP_F_SESSION_PROCTIME)
                          ? ": it names a column of a GROUP BY window and may only appear in "
                            "that query's SELECT list"
                          : "");
  dp_ev_arg stack[4];
  dp_ev_arg *args = nargs <= 4 ? stack : calloc((size_t)nargs, sizeof *args);
  if (!args) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  int done = 0;
  for (; done < nargs && !rc; done++) {
    rc = dp_ev_eval(c, e->u.call.args[done], &args[done]);
    if (!rc && !args[done].is_const) constant = false;
  }
  if (!rc) {
    int64_t n = constant ? 1 : c->nrows;
    dp_vector *v = NULL;
    rc = k(c, e, args, n, &v);
    if (!rc) *out = (dp_ev_arg){v, constant, true};
  }
  for (int i = 0; i < done; i++) dp_ev_arg_free(&args[i]);
  if (args != stack) free(args);
  return rc;
}

/* ---- eval.h ---- */

int dp_eval(dp_exec *ex, const dp_expr *e, const dp_batch *in, dp_vector **out) {
  *out = NULL;
  if (!e || !in) return DIPPER_MISUSE;
  dp_ev c = {ex, in, in->nrows};
  dp_ev_arg a;
  int rc = dp_ev_eval(&c, e, &a);
  if (rc) return rc;
  if (a.is_const) {
    rc = dp_ev_broadcast(&a, in->nrows, out);
    dp_ev_arg_free(&a);
    return rc;
  }
  if (a.owned) {
    *out = a.v;
    return DIPPER_OK;
  }
  /* A bare column: the caller gets its own copy. */
  dp_vector *v = dp_ev_new(e->type, in->nrows);
  if (!v) return DIPPER_NOMEM;
  rc = dp_vector_take(v, a.v, NULL, 0, in->nrows);
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

int64_t dp_eval_select(const dp_vector *mask, int64_t *sel) {
  int64_t n = mask->length, k = 0;
  if (mask->phys != DP_PHYS_BIT) return 0;
  const uint8_t *vals = mask->values;
  const uint8_t *valid = mask->null_count > 0 ? mask->validity : NULL;
  int64_t full = n / 8;
  for (int64_t b = 0; b < full; b++) {
    unsigned bits = vals[b];
    if (valid) bits &= valid[b];
    while (bits) {
      sel[k++] = b * 8 + __builtin_ctz(bits);
      bits &= bits - 1;
    }
  }
  for (int64_t i = full * 8; i < n; i++)
    if (dp_bit_get(vals, i) && (!valid || dp_bit_get(valid, i))) sel[k++] = i;
  return k;
}

/* ---- hashing ---- */

#define K0 UINT64_C(0xa0761d6478bd642f)
#define K1 UINT64_C(0xe7037ed1a0b428db)
#define K2 UINT64_C(0x8ebc6af09c88c6e3)

static inline uint64_t mix(uint64_t a, uint64_t b) {
  unsigned __int128 r = (unsigned __int128)a * b;
  return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t read64(const unsigned char *p) {
  uint64_t x;
  memcpy(&x, p, 8);
  return x;
}

static uint64_t hash_bytes(const char *s, size_t n, uint64_t seed) {
  const unsigned char *p = (const unsigned char *)s;
  uint64_t h = seed ^ mix(seed ^ K0, (uint64_t)n ^ K1);
  while (n >= 16) {
    h = mix(read64(p) ^ K1, read64(p + 8) ^ h);
    p += 16;
    n -= 16;
  }
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = read64(p);
    b = read64(p + n - 8);
  } else if (n > 0) {
    for (size_t i = 0; i < n; i++) a |= (uint64_t)p[i] << (8 * i);
    b = (uint64_t)p[n - 1] << 3 ^ (uint64_t)n;
  }
  return mix(a ^ K1 ^ h, b ^ K2);
}

static inline uint64_t hash_u64(uint64_t x, uint64_t seed) { return mix(x ^ K0, seed ^ K1); }

uint64_t dp_vector_hash(const dp_vector *v, int64_t row, uint64_t seed) {
  if (dp_vector_is_null(v, row)) return hash_u64(UINT64_C(0x9e3779b97f4a7c15), seed);
  switch (v->phys) {
  case DP_PHYS_NULL: return hash_u64(UINT64_C(0x9e3779b97f4a7c15), seed);
  case DP_PHYS_BIT: return hash_u64(dp_vector_get_bool(v, row) ? 1 : 2, seed);
  case DP_PHYS_I8:
  case DP_PHYS_I16:
  case DP_PHYS_I32:
  case DP_PHYS_I64: return hash_u64((uint64_t)dp_vector_get_i64(v, row), seed);
  case DP_PHYS_F32:
  case DP_PHYS_F64: {
    double d = dp_vector_get_f64(v, row);
    if (d == 0) d = 0; /* -0.0 groups with 0.0 */
    if (isnan(d)) d = NAN;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    return hash_u64(bits, seed);
  }
  case DP_PHYS_D128: {
    dp_i128 x = dp_vector_get_dec(v, row);
    unsigned __int128 u = (unsigned __int128)x;
    return hash_u64((uint64_t)u ^ mix((uint64_t)(u >> 64), K2), seed);
  }
  case DP_PHYS_VARBIN: {
    size_t len;
    const char *p = dp_vector_get_str(v, row, &len);
    return hash_bytes(p, len, seed);
  }
  case DP_PHYS_STRUCT: {
    uint64_t h = hash_u64(K2, seed);
    for (int i = 0; i < v->nchildren; i++) h = dp_vector_hash(v->children[i], row, h);
    return h;
  }
  case DP_PHYS_LIST: {
    int64_t start, end;
    dp_vector_list_bounds(v, row, &start, &end);
    uint64_t h = hash_u64((uint64_t)(end - start), seed);
    for (int64_t k = start; k < end; k++) h = dp_vector_hash(v->children[0], k, h);
    return h;
  }
  }
  return seed;
}

/* ---- equality and order ---- */

static int cmp_double(double x, double y) {
  /* NaN is larger than any number and equal to itself (Spark) */
  bool xn = isnan(x), yn = isnan(y);
  if (xn || yn) return (int)xn - (int)yn;
  return (x > y) - (x < y);
}

static int cmp_dec(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j) {
  dp_i128 x = dp_vector_get_dec(a, i), y = dp_vector_get_dec(b, j);
  int sx = a->type->scale, sy = b->type->scale;
  if (sx != sy) {
    dp_i128 xs, ys;
    int hi = sx > sy ? sx : sy;
    if (dp_ev_rescale(x, sx, hi, &xs) && dp_ev_rescale(y, sy, hi, &ys)) {
      x = xs;
      y = ys;
    }
  }
  return (x > y) - (x < y);
}

static int compare_rows(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j, bool eq_only) {
  bool an = dp_vector_is_null(a, i), bn = dp_vector_is_null(b, j);
  if (an || bn) return (int)bn - (int)an; /* NULL first */
  if (a->phys != b->phys) {
    /* mixed widths of one family (INT vs BIGINT) */
    if (a->phys >= DP_PHYS_I8 && a->phys <= DP_PHYS_I64 && b->phys >= DP_PHYS_I8 && b->phys <= DP_PHYS_I64) {
      int64_t x = dp_vector_get_i64(a, i), y = dp_vector_get_i64(b, j);
      return (x > y) - (x < y);
    }
    if ((a->phys == DP_PHYS_F32 || a->phys == DP_PHYS_F64) && (b->phys == DP_PHYS_F32 || b->phys == DP_PHYS_F64))
      return cmp_double(dp_vector_get_f64(a, i), dp_vector_get_f64(b, j));
    return (int)a->phys < (int)b->phys ? -1 : 1;
  }
  switch (a->phys) {
  case DP_PHYS_NULL: return 0;
  case DP_PHYS_BIT: return (int)dp_vector_get_bool(a, i) - (int)dp_vector_get_bool(b, j);
  case DP_PHYS_I8:
  case DP_PHYS_I16:
  case DP_PHYS_I32:
  case DP_PHYS_I64: {
    int64_t x = dp_vector_get_i64(a, i), y = dp_vector_get_i64(b, j);
    return (x > y) - (x < y);
  }
  case DP_PHYS_F32:
  case DP_PHYS_F64: return cmp_double(dp_vector_get_f64(a, i), dp_vector_get_f64(b, j));
  case DP_PHYS_D128: return cmp_dec(a, i, b, j);
  case DP_PHYS_VARBIN: {
    size_t la, lb;
    const char *pa = dp_vector_get_str(a, i, &la), *pb = dp_vector_get_str(b, j, &lb);
    if (eq_only && la != lb) return 1;
    int c = memcmp(pa, pb, la < lb ? la : lb);
    if (c) return c < 0 ? -1 : 1;
    return (la > lb) - (la < lb);
  }
  case DP_PHYS_STRUCT:
    for (int k = 0; k < a->nchildren && k < b->nchildren; k++) {
      int c = compare_rows(a->children[k], i, b->children[k], j, eq_only);
      if (c) return c;
    }
    return (a->nchildren > b->nchildren) - (a->nchildren < b->nchildren);
  case DP_PHYS_LIST: {
    int64_t s1, e1, s2, e2;
    dp_vector_list_bounds(a, i, &s1, &e1);
    dp_vector_list_bounds(b, j, &s2, &e2);
    if (eq_only && e1 - s1 != e2 - s2) return 1;
    for (; s1 < e1 && s2 < e2; s1++, s2++) {
      int c = compare_rows(a->children[0], s1, b->children[0], s2, eq_only);
      if (c) return c;
    }
    return (e1 - s1 > e2 - s2) - (e1 - s1 < e2 - s2);
  }
  }
  return 0;
}

bool dp_vector_row_equal(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j) {
  return compare_rows(a, i, b, j, true) == 0;
}

int dp_vector_row_compare(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j) {
  return compare_rows(a, i, b, j, false);
}
