/*
** text.c — the text forms of values that the JSON and CSV codecs and the
** console share (formats.h): scalars parsed from text straight into a vector,
** any value rendered as text, base64, and undoing a part-written row.
**
** Parsing goes through dp_value_parse (core/value.c) for the forms it knows
** (DECIMAL exactly, dates, times, timestamps, intervals); integers, floats
** and epoch-millisecond timestamps take a direct path because they are the
** common case of every record.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"

static bool is_digit(int ch) { return ch >= '0' && ch <= '9'; }

static bool eq_ci(const char *a, size_t n, const char *b) {
  size_t i = 0;
  for (; i < n; i++) {
    int x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (!y) return false;
    if (x >= 'A' && x <= 'Z') x += 'a' - 'A';
    if (x != y) return false;
  }
  return b[i] == '\0';
}

/* [-]digits into *out with overflow checks; the whole text must be the number. */
static bool parse_i64(const char *p, size_t n, int64_t *out) {
  size_t i = 0;
  bool negative = false;
  if (i < n && (p[i] == '-' || p[i] == '+')) negative = p[i++] == '-';
  if (i == n) return false;
  uint64_t mag = 0;
  for (; i < n; i++) {
    if (!is_digit(p[i])) return false;
    unsigned digit = (unsigned)(p[i] - '0');
    if (mag > (UINT64_MAX - digit) / 10) return false;
    mag = mag * 10 + digit;
  }
  if (negative) {
    if (mag > (uint64_t)INT64_MAX + 1) return false;
    *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
  } else {
    if (mag > (uint64_t)INT64_MAX) return false;
    *out = (int64_t)mag;
  }
  return true;
}

static bool int_fits(dp_type_kind k, int64_t x) {
  switch (k) {
  case DP_T_TINYINT: return x >= INT8_MIN && x <= INT8_MAX;
  case DP_T_SMALLINT: return x >= INT16_MIN && x <= INT16_MAX;
  case DP_T_INT:
  case DP_T_DATE:
  case DP_T_INTERVAL_YM: return x >= INT32_MIN && x <= INT32_MAX;
  default: return true;
  }
}

/* A JSON/SQL number for FLOAT/DOUBLE, or NaN / Infinity spelled out. */
static bool parse_real(const char *p, size_t n, bool is_float, double *out) {
  if (eq_ci(p, n, "nan")) {
    *out = NAN;
    return true;
  }
  if (eq_ci(p, n, "infinity") || eq_ci(p, n, "+infinity") || eq_ci(p, n, "inf")) {
    *out = INFINITY;
    return true;
  }
  if (eq_ci(p, n, "-infinity") || eq_ci(p, n, "-inf")) {
    *out = -INFINITY;
    return true;
  }
  /* Clinger's fast path: an integer mantissa below 2^53 times an exact power
  ** of ten up to 10^22 is one correctly rounded operation; most data hits it */
  {
    size_t i = 0;
    bool negative = false;
    if (i < n && (p[i] == '-' || p[i] == '+')) negative = p[i++] == '-';
    uint64_t mant = 0;
    int digits = 0, exp10 = 0;
    bool any = false, dot = false, ok = true;
    for (; i < n; i++) {
      char ch = p[i];
      if (is_digit(ch)) {
        any = true;
        if (mant == 0 && ch == '0') {
          if (dot) exp10--;
          continue;
        }
        if (++digits > 17) {
          ok = false;
          break;
        }
        mant = mant * 10 + (uint64_t)(ch - '0');
        if (dot) exp10--;
      } else if (ch == '.' && !dot) {
        dot = true;
      } else {
        ok = false; /* an exponent or anything else: the general path */
        break;
      }
    }
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (ok && any && mant < (UINT64_C(1) << 53) && exp10 >= -22) {
      double d = (double)mant;
      d = exp10 < 0 ? d / pow10[-exp10] : d;
      if (negative) d = -d;
      if (is_float && fabs(d) > 3.4028234663852886e38) return false;
      *out = d;
      return true;
    }
  }
  char tmp[512];
  if (n == 0 || n >= sizeof tmp) return false;
  /* strtod also takes hex, "nan(..)" and leading spaces: allow digits only */
  for (size_t i = 0; i < n; i++) {
    char ch = p[i];
    if (!is_digit(ch) && ch != '-' && ch != '+' && ch != '.' && ch != 'e' && ch != 'E')
      return false;
  }
  memcpy(tmp, p, n);
  tmp[n] = '\0';
  char *end = NULL;
  double d = strtod(tmp, &end);
  if (end != tmp + n || end == tmp || isinf(d)) return false;
  if (is_float && fabs(d) > 3.4028234663852886e38) return false;
  *out = d;
  return true;
}

int dp_text_append_scalar(dp_vector *v, const char *p, size_t n) {
  const dp_type *t = v->type;
  int64_t x;
  switch (t->kind) {
  case DP_T_BOOLEAN:
    if (eq_ci(p, n, "true")) return dp_vector_append_bool(v, true);
    if (eq_ci(p, n, "false")) return dp_vector_append_bool(v, false);
    return DIPPER_DATA;
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT:
    if (!parse_i64(p, n, &x) || !int_fits(t->kind, x)) return DIPPER_DATA;
    return dp_vector_append_i64(v, x);
  case DP_T_FLOAT:
  case DP_T_DOUBLE: {
    double d;
    if (!parse_real(p, n, t->kind == DP_T_FLOAT, &d)) return DIPPER_DATA;
    return dp_vector_append_f64(v, d);
  }
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    /* a bare integer is epoch milliseconds (Flink, Kafka timestamps) */
    if (n > 0 && n < 20 && parse_i64(p, n, &x)) {
      if (x > INT64_MAX / 1000 || x < INT64_MIN / 1000) return DIPPER_DATA;
      return dp_vector_append_i64(v, x * 1000);
    }
    /* ISO-8601's 'Z' names UTC, which is what a TIMESTAMP holds anyway */
    if (t->kind == DP_T_TIMESTAMP && n > 0 && (p[n - 1] == 'Z' || p[n - 1] == 'z')) n--;
    break;
  case DP_T_INTERVAL_DT:
  case DP_T_INTERVAL_YM:
    if (parse_i64(p, n, &x)) {
      if (!int_fits(t->kind, x)) return DIPPER_DATA;
      return dp_vector_append_i64(v, x);
    }
    break;
  case DP_T_DECIMAL:
  case DP_T_DATE:
  case DP_T_TIME:
    break;
  default:
    return DIPPER_DATA;
  }
  if (n == 0) return DIPPER_DATA;
  dp_value val;
  if (!dp_value_parse(NULL, t, p, n, &val) || val.is_null) return DIPPER_DATA;
  if (t->kind == DP_T_DECIMAL) return dp_vector_append_dec(v, val.u.dec);
  return dp_vector_append_i64(v, val.u.i);
}

/* ---- rendering ---- */

static void put_decimal(dp_buf *out, dp_i128 value, int scale) {
  char digits[48];
  int n = 0;
  unsigned __int128 mag = value < 0 ? (unsigned __int128)0 - (unsigned __int128)value
                                    : (unsigned __int128)value;
  do {
    digits[n++] = (char)('0' + (int)(mag % 10));
    mag /= 10;
  } while (mag && n < 40);
  while (n <= scale && n < 47) digits[n++] = '0';
  if (value < 0) dp_buf_putc(out, '-');
  for (int i = n - 1; i >= 0; i--) {
    dp_buf_putc(out, digits[i]);
    if (i == scale && scale > 0) dp_buf_putc(out, '.');
  }
}

/* Shortest %g text that reads back as the same value. */
static void put_real(dp_buf *out, double d, bool is_float) {
  if (isnan(d)) {
    dp_buf_puts(out, "NaN");
    return;
  }
  if (isinf(d)) {
    dp_buf_puts(out, d < 0 ? "-Infinity" : "Infinity");
    return;
  }
  char tmp[64];
  for (int prec = is_float ? 6 : 15; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, d);
    double back = strtod(tmp, NULL);
    if (is_float ? (float)back == (float)d : back == d) break;
  }
  dp_buf_puts(out, tmp);
  /* "1e+20" is a JSON number; "3" stays an integer-looking double, as Flink writes it */
}

static void put_time(dp_buf *out, int64_t micros, int precision) {
  int64_t secs = micros / DP_MICROS_PER_SECOND, frac = micros % DP_MICROS_PER_SECOND;
  dp_buf_printf(out, "%02lld:%02lld:%02lld", (long long)(secs / 3600), (long long)(secs / 60 % 60),
                (long long)(secs % 60));
  if (precision > 0) {
    char digits[16];
    snprintf(digits, sizeof digits, "%06lld000", (long long)frac);
    dp_buf_putc(out, '.');
    dp_buf_put(out, digits, (size_t)(precision > 9 ? 9 : precision));
  }
}

void dp_base64_put(dp_buf *out, const unsigned char *p, size_t n) {
  static const char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    unsigned w = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
    char q[4] = {alphabet[w >> 18], alphabet[(w >> 12) & 63], alphabet[(w >> 6) & 63],
                 alphabet[w & 63]};
    dp_buf_put(out, q, 4);
  }
  if (n - i == 1) {
    unsigned w = (unsigned)p[i] << 16;
    char q[4] = {alphabet[w >> 18], alphabet[(w >> 12) & 63], '=', '='};
    dp_buf_put(out, q, 4);
  } else if (n - i == 2) {
    unsigned w = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
    char q[4] = {alphabet[w >> 18], alphabet[(w >> 12) & 63], alphabet[(w >> 6) & 63], '='};
    dp_buf_put(out, q, 4);
  }
}

static int b64_value(int ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '+' || ch == '-') return 62;
  if (ch == '/' || ch == '_') return 63;
  return -1;
}

bool dp_base64_decode(const char *p, size_t n, unsigned char *dst, size_t *dst_len) {
  /* padding is optional (URL-safe writers leave it out) */
  while (n > 0 && p[n - 1] == '=') n--;
  if (n % 4 == 1) return false;
  size_t out = 0;
  unsigned acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = b64_value((unsigned char)p[i]);
    if (v < 0) return false;
    acc = (acc << 6 | (unsigned)v) & 0xFFFFFFu;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      dst[out++] = (unsigned char)(acc >> bits);
    }
  }
  *dst_len = out;
  return true;
}

/* Flink's text of a day-time interval: +D HH:MM:SS.fff (6 fraction digits
** when the value has microseconds), and of a year-month one: +Y-MM. */
static void put_interval_dt(dp_buf *out, int64_t us) {
  uint64_t m = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
  uint64_t frac = m % 1000000, secs = m / 1000000;
  dp_buf_printf(out, "%c%llu %02llu:%02llu:%02llu", us < 0 ? '-' : '+',
                (unsigned long long)(secs / 86400), (unsigned long long)(secs / 3600 % 24),
                (unsigned long long)(secs / 60 % 60), (unsigned long long)(secs % 60));
  if (frac % 1000) dp_buf_printf(out, ".%06llu", (unsigned long long)frac);
  else dp_buf_printf(out, ".%03llu", (unsigned long long)(frac / 1000));
}

static void put_interval_ym(dp_buf *out, int64_t months) {
  uint64_t m = months < 0 ? (uint64_t)0 - (uint64_t)months : (uint64_t)months;
  dp_buf_printf(out, "%c%llu-%02llu", months < 0 ? '-' : '+', (unsigned long long)(m / 12),
                (unsigned long long)(m % 12));
}

void dp_text_put_value(dp_buf *out, const dp_vector *v, int64_t row, const char *null_text,
                       unsigned flags) {
  if (dp_vector_is_null(v, row)) {
    dp_buf_puts(out, null_text);
    return;
  }
  const dp_type *t = v->type;
  char tmp[64];
  switch (t->kind) {
  case DP_T_BOOLEAN: dp_buf_puts(out, dp_vector_get_bool(v, row) ? "true" : "false"); return;
  case DP_T_FLOAT:
  case DP_T_DOUBLE: put_real(out, dp_vector_get_f64(v, row), t->kind == DP_T_FLOAT); return;
  case DP_T_DECIMAL: put_decimal(out, dp_vector_get_dec(v, row), t->scale); return;
  case DP_T_STRING: {
    size_t n;
    const char *s = dp_vector_get_str(v, row, &n);
    dp_buf_put(out, s, n);
    return;
  }
  case DP_T_BYTES: {
    size_t n;
    const char *s = dp_vector_get_str(v, row, &n);
    dp_base64_put(out, (const unsigned char *)s, n);
    return;
  }
  case DP_T_DATE: {
    int64_t y;
    unsigned m, d;
    dp_civil_from_days(dp_vector_get_i64(v, row), &y, &m, &d);
    if (y >= 0 && y <= 9999)
      dp_buf_printf(out, "%04lld-%02u-%02u", (long long)y, m, d);
    else
      dp_buf_printf(out, "%lld-%02u-%02u", (long long)y, m, d);
    return;
  }
  case DP_T_TIME: put_time(out, dp_vector_get_i64(v, row), t->precision); return;
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ: {
    int precision = t->precision;
    if ((flags & DP_TEXT_CODEC) && precision < 3) precision = 3;
    int len = dp_format_timestamp(tmp, sizeof tmp, dp_vector_get_i64(v, row), precision);
    dp_buf_put(out, tmp, (size_t)len);
    if ((flags & DP_TEXT_CODEC) && t->kind == DP_T_TIMESTAMP_LTZ) dp_buf_putc(out, 'Z');
    return;
  }
  case DP_T_ROW:
    dp_buf_putc(out, '{');
    for (int i = 0; i < v->nchildren; i++) {
      if (i) dp_buf_puts(out, ", ");
      dp_text_put_value(out, v->children[i], row, null_text, flags);
    }
    dp_buf_putc(out, '}');
    return;
  case DP_T_ARRAY: {
    int64_t start, end;
    dp_vector_list_bounds(v, row, &start, &end);
    dp_buf_putc(out, '[');
    for (int64_t i = start; i < end; i++) {
      if (i > start) dp_buf_puts(out, ", ");
      dp_text_put_value(out, v->children[0], i, null_text, flags);
    }
    dp_buf_putc(out, ']');
    return;
  }
  case DP_T_MAP: {
    int64_t start, end;
    dp_vector_list_bounds(v, row, &start, &end);
    const dp_vector *keys = v->children[0]->children[0], *vals = v->children[0]->children[1];
    dp_buf_putc(out, '{');
    for (int64_t i = start; i < end; i++) {
      if (i > start) dp_buf_puts(out, ", ");
      dp_text_put_value(out, keys, i, null_text, flags);
      dp_buf_puts(out, " -> ");
      dp_text_put_value(out, vals, i, null_text, flags);
    }
    dp_buf_putc(out, '}');
    return;
  }
  case DP_T_NULL: dp_buf_puts(out, null_text); return;
  case DP_T_INTERVAL_DT: put_interval_dt(out, dp_vector_get_i64(v, row)); return;
  case DP_T_INTERVAL_YM: put_interval_ym(out, dp_vector_get_i64(v, row)); return;
  default: /* integers */
    dp_buf_printf(out, "%lld", (long long)dp_vector_get_i64(v, row));
    return;
  }
}

/* ---- undo ---- */

void dp_format_cut(dp_vector *v, int64_t length) {
  /* A row is closed last, so a part-written one shows as children longer
  ** than their parent: cut them even when the parent itself has no extra row. */
  if (length > v->length) length = v->length;
  if (v->phys == DP_PHYS_NULL) {
    v->null_count = length;
  } else if (v->validity) {
    for (int64_t i = length; i < v->length; i++)
      if (!dp_bit_get(v->validity, i)) v->null_count--;
  }
  if (v->phys == DP_PHYS_VARBIN && v->offsets) v->data_len = v->offsets[length];
  if (v->phys == DP_PHYS_LIST && v->offsets) dp_format_cut(v->children[0], v->offsets[length]);
  if (v->phys == DP_PHYS_STRUCT)
    for (int i = 0; i < v->nchildren; i++) dp_format_cut(v->children[i], length);
  v->length = length;
}

/* ---- UTF-8 ---- */

size_t dp_utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n;
  unsigned min;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if ((size_t)(end - p) < n) return 0;
  unsigned cp = c & (0x7Fu >> n);
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3Fu);
  }
  /* overlong forms, beyond U+10FFFF, and UTF-16 surrogates are not UTF-8 */
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

size_t dp_utf8_valid_prefix(const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      i++;
      continue;
    }
    size_t k = dp_utf8_len(p + i, p + n);
    if (!k) return i;
    i += k;
  }
  return n;
}
