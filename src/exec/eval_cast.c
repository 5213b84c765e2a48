/*
** eval_cast.c — CAST and TRY_CAST between every pair of types that
** dp_type_can_cast allows, and the text of any value (CAST to STRING).
**
** Text is read with dp_value_parse (the CAST-from-STRING rules of the type
** system); composite values are cast member by member: the children of an
** ARRAY, MAP or ROW are cast as whole vectors, then the rows re-assembled.
** Failure rules (wrap, truncate, error or NULL): see eval_int.h.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "exec/eval_int.h"

/* ---- text of a value ---- */

static bool put_str(dp_ev_buf *b, const char *s) { return dp_ev_buf_put(b, s, strlen(s)); }

static bool put_time_of_day(dp_ev_buf *b, int64_t micros, int precision) {
  char tmp[48];
  /* dp_format_timestamp of the epoch day gives "1970-01-01 hh:mm:ss.fff" */
  int n = dp_format_timestamp(tmp, sizeof tmp, dp_ev_floormod(micros, DP_MICROS_PER_DAY), precision);
  return n > 11 && dp_ev_buf_put(b, tmp + 11, (size_t)(n - 11));
}

static bool put_interval(dp_ev_buf *b, const dp_type *t, int64_t x) {
  char tmp[64];
  bool neg = x < 0;
  uint64_t m = neg ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
  int n;
  if (t->kind == DP_T_INTERVAL_YM) {
    n = snprintf(tmp, sizeof tmp, "%c%llu-%02llu", neg ? '-' : '+', (unsigned long long)(m / 12),
                 (unsigned long long)(m % 12));
  } else {
    uint64_t us = m % 1000000, s = m / 1000000;
    n = snprintf(tmp, sizeof tmp, "%c%llu %02llu:%02llu:%02llu.%03llu", neg ? '-' : '+',
                 (unsigned long long)(s / 86400), (unsigned long long)(s / 3600 % 24),
                 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60),
                 (unsigned long long)(us / 1000));
  }
  return n > 0 && dp_ev_buf_put(b, tmp, (size_t)n);
}

bool dp_ev_format(dp_ev_buf *b, const dp_vector *v, int64_t i) {
  if (dp_vector_is_null(v, i)) return put_str(b, "NULL");
  char tmp[96];
  int n = 0;
  const dp_type *t = v->type;
  switch (t->kind) {
  case DP_T_NULL: return put_str(b, "NULL");
  case DP_T_BOOLEAN: return put_str(b, dp_vector_get_bool(v, i) ? "true" : "false");
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT: n = snprintf(tmp, sizeof tmp, "%lld", (long long)dp_vector_get_i64(v, i)); break;
  case DP_T_FLOAT:
  case DP_T_DOUBLE:
    n = dp_ev_double_text(tmp, sizeof tmp, dp_vector_get_f64(v, i), t->kind == DP_T_FLOAT);
    break;
  case DP_T_DECIMAL: n = dp_ev_dec_text(tmp, dp_vector_get_dec(v, i), t->scale); break;
  case DP_T_STRING:
  case DP_T_BYTES: {
    size_t len;
    const char *p = dp_vector_get_str(v, i, &len);
    return dp_ev_buf_put(b, p, len);
  }
  case DP_T_DATE:
    n = dp_format_timestamp(tmp, sizeof tmp, dp_vector_get_i64(v, i) * DP_MICROS_PER_DAY, 0);
    if (n > 10) n -= 9; /* drop " 00:00:00" */
    break;
  case DP_T_TIME: return put_time_of_day(b, dp_vector_get_i64(v, i), t->precision);
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    n = dp_format_timestamp(tmp, sizeof tmp, dp_vector_get_i64(v, i), t->precision);
    break;
  case DP_T_INTERVAL_DT:
  case DP_T_INTERVAL_YM: return put_interval(b, t, dp_vector_get_i64(v, i));
  case DP_T_ARRAY: {
    int64_t s, e;
    dp_vector_list_bounds(v, i, &s, &e);
    bool ok = dp_ev_buf_putc(b, '[');
    for (int64_t k = s; k < e && ok; k++) {
      if (k > s) ok = put_str(b, ", ");
      ok = ok && dp_ev_format(b, v->children[0], k);
    }
    return ok && dp_ev_buf_putc(b, ']');
  }
  case DP_T_MAP: {
    int64_t s, e;
    dp_vector_list_bounds(v, i, &s, &e);
    const dp_vector *entries = v->children[0];
    bool ok = dp_ev_buf_putc(b, '{');
    for (int64_t k = s; k < e && ok; k++) {
      if (k > s) ok = put_str(b, ", ");
      ok = ok && dp_ev_format(b, entries->children[0], k) && put_str(b, " -> ") &&
           dp_ev_format(b, entries->children[1], k);
    }
    return ok && dp_ev_buf_putc(b, '}');
  }
  case DP_T_ROW: {
    bool ok = dp_ev_buf_putc(b, '{');
    for (int k = 0; k < v->nchildren && ok; k++) {
      if (k > 0) ok = put_str(b, ", ");
      ok = ok && dp_ev_format(b, v->children[k], i);
    }
    return ok && dp_ev_buf_putc(b, '}');
  }
  default: return put_str(b, "?");
  }
  return n >= 0 && dp_ev_buf_put(b, tmp, (size_t)n);
}

/* ---- the cast of one row ---- */

typedef enum row_result { ROW_OK, ROW_FAIL, ROW_ERR } row_result;

static int64_t double_to_int(double d, dp_phys to) {
  if (isnan(d)) return 0;
  double t = trunc(d);
  int64_t x;
  if (t >= 9223372036854775807.0)
    x = INT64_MAX;
  else if (t <= -9223372036854775808.0)
    x = INT64_MIN;
  else
    x = (int64_t)t;
  /* Java: (int) saturates at 32 bits, then (byte)/(short) wrap */
  if (to != DP_PHYS_I64) x = x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : x;
  return x;
}

/* A number of any numeric or boolean type as a DECIMAL of scale s. */
static bool to_decimal(const dp_vector *v, int64_t i, int s, dp_i128 *out) {
  switch (v->phys) {
  case DP_PHYS_BIT: *out = dp_vector_get_bool(v, i) ? dp_ev_pow10(s) : 0; return true;
  case DP_PHYS_D128: return dp_ev_rescale(dp_vector_get_dec(v, i), v->type->scale, s, out);
  case DP_PHYS_F32:
  case DP_PHYS_F64: {
    double d = dp_vector_get_f64(v, i);
    if (isnan(d) || isinf(d)) return false;
    /* long double keeps 0.1 * 100 at 10 after rounding */
    long double scaled = (long double)d * powl(10.0L, (long double)s);
    if (fabsl(scaled) >= 1e38L) return false;
    long double r = roundl(scaled);
    *out = (dp_i128)r;
    return true;
  }
  default: {
    dp_i128 x = dp_vector_get_i64(v, i);
    return dp_ev_rescale(x, 0, s, out);
  }
  }
}

static row_result cast_scalar(dp_vector *dst, const dp_vector *src, int64_t i, dp_ev_buf *buf) {
  const dp_type *from = src->type, *to = dst->type;
  dp_phys fp = src->phys, tp = dst->phys;
  /* to STRING/BYTES */
  if (to->kind == DP_T_STRING || to->kind == DP_T_BYTES) {
    buf->len = 0;
    if (!dp_ev_format(buf, src, i)) return ROW_ERR;
    size_t len = buf->len;
    if (to->kind == DP_T_STRING && to->length > 0) {
      /* VARCHAR(n)/CHAR(n): keep n characters */
      size_t chars = 0, k = 0;
      for (; k < len; k++) {
        if (((unsigned char)buf->p[k] & 0xC0) != 0x80) {
          if (chars == to->length) break;
          chars++;
        }
      }
      len = k;
    }
    return dp_vector_append_str(dst, buf->p, len) ? ROW_ERR : ROW_OK;
  }
  /* from STRING: the type system's parser */
  if (from->kind == DP_T_STRING || from->kind == DP_T_BYTES) {
    size_t len;
    const char *p = dp_vector_get_str(src, i, &len);
    dp_value val;
    if (!dp_value_parse(NULL, to, p, len, &val)) return ROW_FAIL;
    return dp_vector_append_value(dst, &val) ? ROW_FAIL : ROW_OK;
  }
  switch (to->kind) {
  case DP_T_BOOLEAN:
    switch (fp) {
    case DP_PHYS_BIT: return dp_vector_append_bool(dst, dp_vector_get_bool(src, i)) ? ROW_ERR : ROW_OK;
    case DP_PHYS_F32:
    case DP_PHYS_F64: return dp_vector_append_bool(dst, dp_vector_get_f64(src, i) != 0) ? ROW_ERR : ROW_OK;
    case DP_PHYS_D128: return dp_vector_append_bool(dst, dp_vector_get_dec(src, i) != 0) ? ROW_ERR : ROW_OK;
    default: return dp_vector_append_bool(dst, dp_vector_get_i64(src, i) != 0) ? ROW_ERR : ROW_OK;
    }
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT: {
    int64_t x;
    switch (fp) {
    case DP_PHYS_BIT: x = dp_vector_get_bool(src, i); break;
    case DP_PHYS_F32:
    case DP_PHYS_F64: x = double_to_int(dp_vector_get_f64(src, i), tp); break;
    case DP_PHYS_D128: {
      dp_i128 q = dp_vector_get_dec(src, i) / dp_ev_pow10(from->scale);
      x = (int64_t)(uint64_t)(unsigned __int128)q; /* wraps, like the integer narrowing */
      break;
    }
    default: x = dp_vector_get_i64(src, i); break;
    }
    return dp_vector_append_i64(dst, x) ? ROW_ERR : ROW_OK;
  }
  case DP_T_FLOAT:
  case DP_T_DOUBLE: {
    double d;
    switch (fp) {
    case DP_PHYS_BIT: d = dp_vector_get_bool(src, i); break;
    case DP_PHYS_F32:
    case DP_PHYS_F64: d = dp_vector_get_f64(src, i); break;
    case DP_PHYS_D128: d = (double)dp_vector_get_dec(src, i) / (double)dp_ev_pow10(from->scale); break;
    default: d = (double)dp_vector_get_i64(src, i); break;
    }
    return dp_vector_append_f64(dst, d) ? ROW_ERR : ROW_OK;
  }
  case DP_T_DECIMAL: {
    dp_i128 x;
    if (!to_decimal(src, i, to->scale, &x) || !dp_ev_dec_fits(x, to->precision)) return ROW_FAIL;
    return dp_vector_append_dec(dst, x) ? ROW_ERR : ROW_OK;
  }
  case DP_T_DATE: {
    int64_t x = dp_vector_get_i64(src, i);
    if (dp_type_is_timestamp(from)) x = dp_ev_floordiv(x, DP_MICROS_PER_DAY);
    return dp_vector_append_i64(dst, x) ? ROW_ERR : ROW_OK;
  }
  case DP_T_TIME:
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ: {
    int64_t x = dp_vector_get_i64(src, i);
    if (from->kind == DP_T_DATE) x *= DP_MICROS_PER_DAY;
    if (to->kind == DP_T_TIME) x = dp_ev_floormod(x, DP_MICROS_PER_DAY);
    if (to->precision < 6) { /* drop digits the target cannot show */
      int64_t unit = 1;
      for (int k = to->precision; k < 6; k++) unit *= 10;
      x = dp_ev_floordiv(x, unit) * unit;
    }
    return dp_vector_append_i64(dst, x) ? ROW_ERR : ROW_OK;
  }
  case DP_T_INTERVAL_DT:
  case DP_T_INTERVAL_YM: return dp_vector_append_i64(dst, dp_vector_get_i64(src, i)) ? ROW_ERR : ROW_OK;
  default: return ROW_FAIL;
  }
}

static int cast_failure(dp_ev *c, const dp_expr *e, const dp_vector *src, int64_t i, const dp_type *to) {
  dp_ev_buf b = {0};
  bool text = dp_ev_format(&b, src, i);
  char from_name[96], to_name[96];
  dp_type_print(from_name, sizeof from_name, src->type);
  dp_type_print(to_name, sizeof to_name, to);
  bool quote = dp_type_is_string(src->type);
  int rc = dp_ev_data_error(
      c, e, "CAST(%s%.*s%s AS %s) failed: the %s value %s%.*s%s is not a valid %s; fix the data, or "
            "write TRY_CAST to get NULL instead",
      quote ? "'" : "", text ? (int)(b.len > 200 ? 200 : b.len) : 0, text ? b.p : "", quote ? "'" : "",
      to_name, from_name, quote ? "'" : "", text ? (int)(b.len > 200 ? 200 : b.len) : 0,
      text ? b.p : "", quote ? "'" : "", to_name);
  free(b.p);
  return rc;
}

/* Cast every row of src (n rows, or the one row of a constant) into a new vector. */
static int cast_vector(dp_ev *c, const dp_expr *e, const dp_vector *src, bool is_const, const dp_type *to,
                       bool try_, int64_t n, dp_vector **out);

static int cast_composite(dp_ev *c, const dp_expr *e, const dp_vector *src, bool is_const,
                          const dp_type *to, bool try_, int64_t n, dp_vector *dst) {
  int rc = DIPPER_OK;
  if (to->kind == DP_T_ROW) {
    int nf = dst->nchildren;
    dp_vector **fields = calloc((size_t)(nf ? nf : 1), sizeof *fields);
    if (!fields) return DIPPER_NOMEM;
    int64_t rows = is_const ? 1 : src->length;
    for (int k = 0; k < nf && !rc; k++)
      rc = cast_vector(c, e, src->children[k], false, to->fields[k].type, try_, rows, &fields[k]);
    for (int64_t i = 0; i < n && !rc; i++) {
      int64_t r = is_const ? 0 : i;
      if (dp_vector_is_null(src, r)) {
        rc = dp_vector_append_null(dst);
        continue;
      }
      for (int k = 0; k < nf && !rc; k++) rc = dp_vector_append_from(dst->children[k], fields[k], r);
      if (!rc) rc = dp_vector_append_struct(dst);
    }
    for (int k = 0; k < nf; k++) dp_vector_free(fields[k]);
    free(fields);
    return rc;
  }
  /* ARRAY and MAP: cast the elements (or keys and values), then the lists */
  bool is_map = to->kind == DP_T_MAP;
  const dp_vector *elems = is_map ? src->children[0]->children[0] : src->children[0];
  dp_vector *keys = NULL, *vals = NULL;
  rc = cast_vector(c, e, elems, false, to->elem, try_, elems->length, &keys);
  if (!rc && is_map)
    rc = cast_vector(c, e, src->children[0]->children[1], false, to->value, try_,
                     src->children[0]->children[1]->length, &vals);
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t r = is_const ? 0 : i;
    if (dp_vector_is_null(src, r)) {
      rc = dp_vector_append_null(dst);
      continue;
    }
    int64_t s, end;
    dp_vector_list_bounds(src, r, &s, &end);
    for (int64_t k = s; k < end && !rc; k++) {
      if (is_map) {
        rc = dp_vector_append_from(dp_vector_map_keys(dst), keys, k);
        if (!rc) rc = dp_vector_append_from(dp_vector_map_values(dst), vals, k);
        if (!rc) rc = dp_vector_append_struct(dst->children[0]);
      } else {
        rc = dp_vector_append_from(dst->children[0], keys, k);
      }
    }
    if (!rc) rc = dp_vector_append_list(dst);
  }
  dp_vector_free(keys);
  dp_vector_free(vals);
  return rc;
}

static int cast_vector(dp_ev *c, const dp_expr *e, const dp_vector *src, bool is_const, const dp_type *to,
                       bool try_, int64_t n, dp_vector **out) {
  dp_vector *dst = dp_ev_new(to, n);
  if (!dst) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  const dp_type *from = src->type;
  if (from->kind == DP_T_NULL) {
    for (int64_t i = 0; i < n && !rc; i++) rc = dp_vector_append_null(dst);
  } else if ((to->kind == DP_T_ROW || to->kind == DP_T_ARRAY || to->kind == DP_T_MAP) &&
             from->kind == to->kind) {
    rc = cast_composite(c, e, src, is_const, to, try_, n, dst);
  } else if (!is_const && src->null_count == 0 && dst->phys == DP_PHYS_F64 &&
             src->phys >= DP_PHYS_I8 && src->phys <= DP_PHYS_I64) {
    /* the common widening: a loop */
    double *o = dst->values;
    for (int64_t i = 0; i < n; i++) o[i] = (double)dp_vector_get_i64(src, i);
    dst->length = n;
  } else if (!is_const && src->null_count == 0 && dst->phys == DP_PHYS_I64 &&
             src->phys >= DP_PHYS_I8 && src->phys <= DP_PHYS_I64 && dp_type_is_integer(from) &&
             dp_type_is_integer(to)) {
    int64_t *o = dst->values;
    for (int64_t i = 0; i < n; i++) o[i] = dp_vector_get_i64(src, i);
    dst->length = n;
  } else if (!is_const && src->null_count == 0 && dst->phys == DP_PHYS_D128 &&
             src->phys >= DP_PHYS_I8 && src->phys <= DP_PHYS_I64 && dp_type_is_integer(from) &&
             to->precision >= 19 + to->scale) {
    /* integers into a DECIMAL wide enough for any of them: a loop */
    dp_i128 *o = dst->values, f = dp_ev_pow10(to->scale);
    for (int64_t i = 0; i < n; i++) o[i] = (dp_i128)dp_vector_get_i64(src, i) * f;
    dst->length = n;
  } else {
    dp_ev_buf buf = {0};
    for (int64_t i = 0; i < n && !rc; i++) {
      int64_t r = is_const ? 0 : i;
      if (dp_vector_is_null(src, r)) {
        rc = dp_vector_append_null(dst);
        continue;
      }
      row_result res = cast_scalar(dst, src, r, &buf);
      if (res == ROW_ERR) rc = DIPPER_NOMEM;
      if (res == ROW_FAIL) rc = try_ ? dp_vector_append_null(dst) : cast_failure(c, e, src, r, to);
    }
    free(buf.p);
  }
  if (rc) {
    dp_vector_free(dst);
    return rc;
  }
  *out = dst;
  return DIPPER_OK;
}

int dp_ev_cast(dp_ev *c, const dp_expr *e, const dp_ev_arg *arg, const dp_type *to, bool try_,
               int64_t n, dp_vector **out) {
  return cast_vector(c, e, arg->v, arg->is_const, to, try_, n, out);
}
