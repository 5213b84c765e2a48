/*
** value.c — literal values (types.h): constructors, SQL literal spelling,
** ordering, and parsing from text by the CAST-from-STRING rules.
**
** DECIMAL text is converted exactly through 128-bit integers (no detour
** through double), rounding half away from zero when the text has more
** fractional digits than the scale, as Flink's CAST does.  Timestamps keep
** µs; finer digits are dropped.  Values are UTC; a TIMESTAMP_LTZ text may
** name its offset ('Z', '+02:00').
*/
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/types.h"

typedef unsigned __int128 dp_u128;

#define MAX_DECIMAL_DIGITS 38

/* 10^n for n <= 38 */
static dp_u128 pow10_u128(int n) {
  dp_u128 p = 1;
  for (int i = 0; i < n; i++) p *= 10;
  return p;
}

/* ---- constructors ---- */

dp_value dp_value_null(const dp_type *t) {
  dp_value v;
  memset(&v, 0, sizeof v);
  v.type = t ? t : dp_type_of(DP_T_NULL);
  v.is_null = true;
  return v;
}

static dp_value make(const dp_type *t) {
  dp_value v;
  memset(&v, 0, sizeof v);
  v.type = t;
  return v;
}

dp_value dp_value_bool(bool b) {
  dp_value v = make(dp_type_of(DP_T_BOOLEAN));
  v.u.b = b;
  return v;
}

dp_value dp_value_int(const dp_type *t, int64_t i) {
  dp_value v = make(t ? t : dp_type_of(DP_T_BIGINT));
  v.u.i = i;
  return v;
}

dp_value dp_value_double(const dp_type *t, double d) {
  dp_value v = make(t ? t : dp_type_of(DP_T_DOUBLE));
  v.u.d = d;
  return v;
}

dp_value dp_value_string(const char *p, size_t n) {
  dp_value v = make(dp_type_of(DP_T_STRING));
  v.u.s.ptr = p;
  v.u.s.len = n;
  return v;
}

/* ---- formatting ---- */

/* Digits of a scaled 128-bit integer with the point `scale` from the right. */
static void put_decimal(dp_buf *out, dp_i128 value, int scale) {
  char digits[48];
  int n = 0;
  dp_u128 mag = value < 0 ? (dp_u128)0 - (dp_u128)value : (dp_u128)value;
  do {
    digits[n++] = (char)('0' + (int)(mag % 10));
    mag /= 10;
  } while (mag && n < 40);
  while (n <= scale) digits[n++] = '0'; /* 0.05 needs its leading zeros */
  if (value < 0) dp_buf_putc(out, '-');
  for (int i = n - 1; i >= 0; i--) {
    dp_buf_putc(out, digits[i]);
    if (i == scale && scale > 0) dp_buf_putc(out, '.');
  }
}

/* Shortest text that reads back as the same double, in the approximate
** literal form SQL reads as DOUBLE (and Flink's EXPLAIN prints): "1.5E0",
** "3E0", "1E20", "-2.5E-7".  SQL has no FLOAT literal: CAST(0.1E0 AS FLOAT). */
static void put_double(dp_buf *out, double d, bool is_float) {
  const char *type_name = is_float ? "FLOAT" : "DOUBLE";
  if (isnan(d) || isinf(d)) {
    dp_buf_printf(out, "CAST('%s' AS %s)", isnan(d) ? "NaN" : d < 0 ? "-Infinity" : "Infinity",
                  type_name);
    return;
  }
  char tmp[400];
  int prec = 1;
  for (; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
    double back = strtod(tmp, NULL);
    if (is_float ? (float)back == (float)d : back == d) break;
  }
  if (is_float) dp_buf_puts(out, "CAST(");
  char *e = strchr(tmp, 'e');
  int exp10 = atoi(e + 1);
  if (exp10 >= -6 && exp10 < 17) {
    /* plain digits, exactly the significant ones found above, then E0 */
    int decimals = prec - 1 - exp10;
    snprintf(tmp, sizeof tmp, "%.*f", decimals > 0 ? decimals : 0, d);
    dp_buf_puts(out, tmp);
    dp_buf_puts(out, "E0");
  } else {
    /* "1.5e+07" -> "1.5E7" */
    dp_buf_put(out, tmp, (size_t)(e - tmp));
    dp_buf_putc(out, 'E');
    const char *exp = e + 1;
    if (*exp == '+') exp++;
    if (*exp == '-') dp_buf_putc(out, *exp++);
    while (*exp == '0' && exp[1]) exp++;
    dp_buf_puts(out, exp);
  }
  if (is_float) dp_buf_puts(out, " AS FLOAT)");
}

static bool is_control(char c) { return (unsigned char)c < 0x20 || c == 0x7f; }

/* 'it''s'; text with control characters (a newline would break a one-line
** EXPLAIN) becomes a Unicode-escaped literal: U&'a\000Ab'. */
static void put_quoted(dp_buf *out, const char *p, size_t n) {
  bool escape = false;
  for (size_t i = 0; i < n && !escape; i++) escape = is_control(p[i]);
  dp_buf_puts(out, escape ? "U&'" : "'");
  for (size_t i = 0; i < n; i++) {
    if (escape && is_control(p[i])) {
      dp_buf_printf(out, "\\%04X", (unsigned)(unsigned char)p[i]);
      continue;
    }
    /* quotes double; in an escaped literal so does the escape character */
    if (p[i] == '\'' || (escape && p[i] == '\\')) dp_buf_putc(out, p[i]);
    dp_buf_putc(out, p[i]);
  }
  dp_buf_putc(out, '\'');
}

static void put_date(dp_buf *out, int64_t days) {
  int64_t y;
  unsigned m, d;
  dp_civil_from_days(days, &y, &m, &d);
  /* same year spelling as dp_format_timestamp */
  const char *sign = y < 0 ? "-" : y > 9999 ? "+" : "";
  dp_buf_printf(out, "DATE '%s%04lld-%02u-%02u'", sign, y < 0 ? -(long long)y : (long long)y, m, d);
}

static void put_time_of_day(dp_buf *out, int64_t micros, int precision) {
  int64_t secs = micros / DP_MICROS_PER_SECOND;
  dp_buf_printf(out, "%02lld:%02lld:%02lld", (long long)(secs / 3600), (long long)(secs / 60 % 60),
                (long long)(secs % 60));
  if (precision > 0) {
    char digits[16];
    snprintf(digits, sizeof digits, "%06lld000", (long long)(micros % DP_MICROS_PER_SECOND));
    digits[precision > 9 ? 9 : precision] = '\0';
    dp_buf_printf(out, ".%s", digits);
  }
}

static const struct {
  int64_t micros;
  const char *unit;
} interval_units[] = {
    {DP_MICROS_PER_DAY, "DAY"},
    {DP_MICROS_PER_HOUR, "HOUR"},
    {DP_MICROS_PER_MINUTE, "MINUTE"},
    {DP_MICROS_PER_SECOND, "SECOND"},
};

/* The largest single unit that holds the interval exactly; seconds with a
** fraction otherwise: INTERVAL '90' SECOND, INTERVAL '1.500' SECOND. */
static void put_interval_dt(dp_buf *out, int64_t micros) {
  for (size_t i = 0; i < sizeof interval_units / sizeof interval_units[0]; i++) {
    if (micros % interval_units[i].micros == 0) {
      dp_buf_printf(out, "INTERVAL '%lld' %s", (long long)(micros / interval_units[i].micros),
                    interval_units[i].unit);
      return;
    }
  }
  dp_i128 scaled = micros;
  int scale = 6;
  if (micros % 1000 == 0) {
    scaled = micros / 1000;
    scale = 3;
  }
  dp_buf_puts(out, "INTERVAL '");
  put_decimal(out, scaled, scale);
  dp_buf_puts(out, "' SECOND");
}

static void put_value(dp_buf *out, const dp_value *v);

static void put_list(dp_buf *out, const char *open, const char *close, int n,
                     const dp_value *items) {
  dp_buf_puts(out, open);
  for (int i = 0; i < n; i++) {
    if (i) dp_buf_puts(out, ", ");
    put_value(out, &items[i]);
  }
  dp_buf_puts(out, close);
}

static void put_value(dp_buf *out, const dp_value *v) {
  const dp_type *t = v->type;
  if (v->is_null || !t || t->kind == DP_T_NULL) {
    dp_buf_puts(out, "NULL");
    return;
  }
  char tmp[48];
  switch (t->kind) {
  case DP_T_BOOLEAN:
    dp_buf_puts(out, v->u.b ? "TRUE" : "FALSE");
    break;
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT:
    dp_buf_printf(out, "%lld", (long long)v->u.i);
    break;
  case DP_T_FLOAT:
  case DP_T_DOUBLE:
    put_double(out, v->u.d, t->kind == DP_T_FLOAT);
    break;
  case DP_T_DECIMAL:
    put_decimal(out, v->u.dec, t->scale);
    break;
  case DP_T_STRING:
    put_quoted(out, v->u.s.ptr, v->u.s.len);
    break;
  case DP_T_BYTES:
    dp_buf_puts(out, "X'");
    for (size_t i = 0; i < v->u.s.len; i++)
      dp_buf_printf(out, "%02X", (unsigned)(unsigned char)v->u.s.ptr[i]);
    dp_buf_putc(out, '\'');
    break;
  case DP_T_DATE:
    put_date(out, v->u.i);
    break;
  case DP_T_TIME:
    dp_buf_puts(out, "TIME '");
    put_time_of_day(out, v->u.i, t->precision);
    dp_buf_putc(out, '\'');
    break;
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    dp_format_timestamp(tmp, sizeof tmp, v->u.i, t->precision);
    dp_buf_printf(out, "%s '%s'", t->kind == DP_T_TIMESTAMP ? "TIMESTAMP" : "TIMESTAMP_LTZ", tmp);
    break;
  case DP_T_INTERVAL_DT:
    put_interval_dt(out, v->u.i);
    break;
  case DP_T_INTERVAL_YM:
    if (v->u.i % 12 == 0)
      dp_buf_printf(out, "INTERVAL '%lld' YEAR", (long long)(v->u.i / 12));
    else
      dp_buf_printf(out, "INTERVAL '%lld' MONTH", (long long)v->u.i);
    break;
  case DP_T_ROW:
    put_list(out, "ROW(", ")", v->u.list.n, v->u.list.items);
    break;
  case DP_T_ARRAY:
    put_list(out, "ARRAY[", "]", v->u.list.n, v->u.list.items);
    break;
  case DP_T_MAP:
    /* items hold the n keys, then the n values; SQL interleaves them */
    dp_buf_puts(out, "MAP[");
    for (int i = 0; i < v->u.list.n; i++) {
      if (i) dp_buf_puts(out, ", ");
      put_value(out, &v->u.list.items[i]);
      dp_buf_puts(out, ", ");
      put_value(out, &v->u.list.items[v->u.list.n + i]);
    }
    dp_buf_putc(out, ']');
    break;
  default:
    dp_buf_puts(out, "NULL");
    break;
  }
}

char *dp_value_format(dp_arena *a, const dp_value *v) {
  dp_buf out = DP_BUF_INIT;
  put_value(&out, v);
  char *s = out.oom ? NULL : dp_arena_strndup(a, dp_buf_cstr(&out), out.len);
  dp_buf_free(&out);
  return s;
}

/* ---- ordering ---- */

static int sign_of(int64_t x, int64_t y) { return (x > y) - (x < y); }

/* NaN sorts after every number, equal to itself, so sorting is total. */
static int compare_double(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
  return (x > y) - (x < y);
}

/* Compare x*10^-sx with y*10^-sy without overflowing: whole parts first,
** then the fractions brought to the common scale (they stay below 10^38). */
static int compare_decimal(dp_i128 x, int sx, dp_i128 y, int sy) {
  dp_i128 px = (dp_i128)pow10_u128(sx), py = (dp_i128)pow10_u128(sy);
  dp_i128 wx = x / px, wy = y / py;
  if (wx != wy) return wx < wy ? -1 : 1;
  dp_i128 fx = x % px, fy = y % py;
  int s = sx > sy ? sx : sy;
  fx *= (dp_i128)pow10_u128(s - sx);
  fy *= (dp_i128)pow10_u128(s - sy);
  return (fx > fy) - (fx < fy);
}

static double as_double(const dp_value *v) {
  if (v->type->kind == DP_T_FLOAT || v->type->kind == DP_T_DOUBLE) return v->u.d;
  if (v->type->kind == DP_T_DECIMAL) return (double)v->u.dec / pow((double)10, v->type->scale);
  return (double)v->u.i;
}

static int compare_numeric(const dp_value *x, const dp_value *y) {
  dp_type_kind kx = x->type->kind, ky = y->type->kind;
  bool approx = kx == DP_T_FLOAT || kx == DP_T_DOUBLE || ky == DP_T_FLOAT || ky == DP_T_DOUBLE;
  if (approx) return compare_double(as_double(x), as_double(y));
  if (kx == DP_T_DECIMAL || ky == DP_T_DECIMAL) {
    dp_i128 dx = kx == DP_T_DECIMAL ? x->u.dec : x->u.i;
    dp_i128 dy = ky == DP_T_DECIMAL ? y->u.dec : y->u.i;
    return compare_decimal(dx, kx == DP_T_DECIMAL ? x->type->scale : 0, dy,
                           ky == DP_T_DECIMAL ? y->type->scale : 0);
  }
  return sign_of(x->u.i, y->u.i);
}

static int compare_bytes(const dp_value *x, const dp_value *y) {
  size_t n = x->u.s.len < y->u.s.len ? x->u.s.len : y->u.s.len;
  int c = n ? memcmp(x->u.s.ptr, y->u.s.ptr, n) : 0;
  if (c) return c < 0 ? -1 : 1;
  return (x->u.s.len > y->u.s.len) - (x->u.s.len < y->u.s.len);
}

static int compare_items(const dp_value *x, int nx, const dp_value *y, int ny) {
  int n = nx < ny ? nx : ny;
  for (int i = 0; i < n; i++) {
    int c = dp_value_compare(&x[i], &y[i]);
    if (c) return c;
  }
  return (nx > ny) - (nx < ny);
}

int dp_value_compare(const dp_value *x, const dp_value *y) {
  bool xnull = x->is_null || x->type->kind == DP_T_NULL;
  bool ynull = y->is_null || y->type->kind == DP_T_NULL;
  if (xnull || ynull) return ynull - xnull;
  if (dp_type_is_numeric(x->type) && dp_type_is_numeric(y->type)) return compare_numeric(x, y);
  switch (x->type->kind) {
  case DP_T_BOOLEAN:
    return (int)x->u.b - (int)y->u.b;
  case DP_T_STRING:
  case DP_T_BYTES:
    return compare_bytes(x, y);
  case DP_T_MAP: /* pairwise: key, then value */
    for (int i = 0; i < x->u.list.n && i < y->u.list.n; i++) {
      int c = dp_value_compare(&x->u.list.items[i], &y->u.list.items[i]);
      if (!c) c = dp_value_compare(&x->u.list.items[x->u.list.n + i],
                                   &y->u.list.items[y->u.list.n + i]);
      if (c) return c;
    }
    return (x->u.list.n > y->u.list.n) - (x->u.list.n < y->u.list.n);
  case DP_T_ROW:
  case DP_T_ARRAY:
    return compare_items(x->u.list.items, x->u.list.n, y->u.list.items, y->u.list.n);
  default: /* temporal and intervals: one integer */
    return sign_of(x->u.i, y->u.i);
  }
}

/* ---- parsing ---- */

typedef struct cursor {
  const char *p, *end;
} cursor;

static bool at_end(const cursor *c) { return c->p >= c->end; }
static char peek(const cursor *c) { return at_end(c) ? '\0' : *c->p; }
static bool eat(cursor *c, char ch) {
  if (peek(c) != ch) return false;
  c->p++;
  return true;
}
static void skip_spaces(cursor *c) {
  while (!at_end(c) && isspace((unsigned char)*c->p)) c->p++;
}
static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* 1..max_digits decimal digits into *out. */
static bool digits(cursor *c, int max_digits, int64_t *out) {
  int64_t v = 0;
  int n = 0;
  while (!at_end(c) && is_digit(*c->p) && n < max_digits) {
    v = v * 10 + (*c->p++ - '0');
    n++;
  }
  *out = v;
  return n > 0;
}

/* Case-insensitive match of a whole word at the cursor. */
static bool eat_word(cursor *c, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(c->end - c->p) < n || strncasecmp(c->p, word, n) != 0) return false;
  c->p += n;
  return true;
}

static bool word_is(const char *s, size_t n, const char *word) {
  return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

static bool parse_bool(cursor *c, bool *out) {
  static const char *const yes[] = {"true", "t", "yes", "y", "1"};
  static const char *const no[] = {"false", "f", "no", "n", "0"};
  size_t n = (size_t)(c->end - c->p);
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (word_is(c->p, n, yes[i]) || word_is(c->p, n, no[i])) {
      *out = word_is(c->p, n, yes[i]);
      return true;
    }
  }
  return false;
}

static bool parse_integer(cursor *c, dp_type_kind kind, int64_t *out) {
  static const int64_t limits[] = {INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
  bool negative = eat(c, '-');
  if (!negative) eat(c, '+');
  if (at_end(c)) return false;
  uint64_t limit = (uint64_t)limits[kind - DP_T_TINYINT] + (negative ? 1u : 0u);
  uint64_t v = 0;
  while (!at_end(c)) {
    if (!is_digit(*c->p)) return false;
    unsigned digit = (unsigned)(*c->p++ - '0');
    if (v > (limit - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = negative ? (int64_t)(0u - v) : (int64_t)v;
  return true;
}

/* Java's spellings of the special values, which Flink prints and reads. */
static bool parse_special_double(cursor *c, double *out) {
  static const struct {
    const char *word;
    double value;
  } specials[] = {{"NaN", NAN},        {"Infinity", INFINITY}, {"+Infinity", INFINITY},
                  {"-Infinity", -INFINITY}, {"inf", INFINITY}, {"-inf", -INFINITY}};
  size_t n = (size_t)(c->end - c->p);
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
    if (word_is(c->p, n, specials[i].word)) {
      *out = specials[i].value;
      return true;
    }
  return false;
}

/* [+-] digits [. digits] [e [+-] digits], at least one digit in the mantissa. */
static bool scan_number(const char *p, const char *end) {
  const char *q = p;
  if (q < end && (*q == '+' || *q == '-')) q++;
  int mantissa = 0;
  while (q < end && is_digit(*q)) q++, mantissa++;
  if (q < end && *q == '.')
    for (q++; q < end && is_digit(*q); q++) mantissa++;
  if (!mantissa) return false;
  if (q < end && (*q == 'e' || *q == 'E')) {
    q++;
    if (q < end && (*q == '+' || *q == '-')) q++;
    if (q >= end || !is_digit(*q)) return false;
    while (q < end && is_digit(*q)) q++;
  }
  return q == end;
}

static bool parse_double(cursor *c, bool is_float, double *out) {
  if (parse_special_double(c, out)) return true;
  size_t n = (size_t)(c->end - c->p);
  if (!scan_number(c->p, c->end) || n >= 400) return false;
  char tmp[400];
  memcpy(tmp, c->p, n);
  tmp[n] = '\0';
  double d = strtod(tmp, NULL);
  if (isinf(d)) return false; /* out of range: the text named a finite number */
  if (is_float) {
    if (fabs(d) > 3.4028234663852886e38) return false;
    d = (double)(float)d;
  }
  *out = d;
  return true;
}

/*
** Exact DECIMAL(precision, scale) from [+-]digits[.digits][e[+-]digits].
** The significant digits are read into a 128-bit integer up to the position
** of the target scale; the first dropped digit decides the rounding.
*/
static bool parse_decimal(cursor *c, int precision, int scale, dp_i128 *out) {
  if (!scan_number(c->p, c->end)) return false;
  bool negative = eat(c, '-');
  if (!negative) eat(c, '+');
  const char *mant = c->p;
  while (!at_end(c) && (is_digit(*c->p) || *c->p == '.')) c->p++;
  const char *mant_end = c->p;
  int64_t exponent = 0;
  if (eat(c, 'e') || eat(c, 'E')) {
    bool exp_negative = eat(c, '-');
    if (!exp_negative) eat(c, '+');
    int64_t e;
    if (!digits(c, 6, &e) || !at_end(c)) return false;
    exponent = exp_negative ? -e : e;
  }
  /* Count fraction digits: the value is D * 10^(exponent - frac). */
  const char *dot = memchr(mant, '.', (size_t)(mant_end - mant));
  int64_t frac = dot ? (int64_t)(mant_end - dot - 1) : 0;
  int64_t shift = exponent - frac + scale; /* scaled = D * 10^shift */
  int64_t ndigits = (int64_t)(mant_end - mant) - (dot ? 1 : 0);
  int64_t keep = shift < 0 ? ndigits + shift : ndigits; /* digits before the cut */
  dp_u128 limit = pow10_u128(MAX_DECIMAL_DIGITS);
  dp_u128 v = 0;
  int64_t seen = 0;
  int round_digit = 0;
  for (const char *p = mant; p < mant_end; p++) {
    if (*p == '.') continue;
    if (seen < keep) {
      v = v * 10u + (unsigned)(*p - '0');
      if (v >= limit) return false;
    } else if (seen == keep) {
      round_digit = *p - '0';
    }
    seen++;
  }
  if (round_digit >= 5) v++;
  for (int64_t i = 0; i < shift && v; i++) {
    v *= 10;
    if (v >= limit) return false;
  }
  if (v >= pow10_u128(precision)) return false;
  *out = negative ? -(dp_i128)v : (dp_i128)v;
  return true;
}

static const unsigned char days_in_month[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

static bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* [+-]Y-M-D with 1..6 year digits; *days since the epoch. */
static bool parse_date(cursor *c, int64_t *days) {
  bool negative = eat(c, '-');
  if (!negative) eat(c, '+');
  int64_t y, m, d;
  if (!digits(c, 6, &y) || !eat(c, '-') || !digits(c, 2, &m) || !eat(c, '-') || !digits(c, 2, &d))
    return false;
  if (negative) y = -y;
  if (m < 1 || m > 12 || d < 1) return false;
  int64_t last = days_in_month[m - 1] + (m == 2 && is_leap(y) ? 1 : 0);
  if (d > last) return false;
  *days = dp_days_from_civil(y, (unsigned)m, (unsigned)d);
  return true;
}

/* hh:mm[:ss[.fffffffff]] into µs of the day, fraction cut to `precision`
** digits (at most 6 survive: µs is the storage unit). */
static bool parse_time(cursor *c, int precision, int64_t *micros) {
  int64_t h, m, s = 0, frac = 0;
  if (!digits(c, 2, &h) || !eat(c, ':') || !digits(c, 2, &m)) return false;
  if (eat(c, ':')) {
    if (!digits(c, 2, &s)) return false;
    if (eat(c, '.')) {
      int n = 0;
      if (!is_digit(peek(c))) return false;
      while (is_digit(peek(c))) {
        int digit = *c->p++ - '0';
        if (++n > 9) return false;
        if (n <= 6 && n <= precision) frac += digit * (int64_t)pow10_u128(6 - n);
      }
    }
  }
  if (h > 23 || m > 59 || s > 59) return false;
  *micros = ((h * 60 + m) * 60 + s) * DP_MICROS_PER_SECOND + frac;
  return true;
}

/* Z | UTC | [+-]hh[[:]mm] into seconds east of UTC. */
static bool parse_zone(cursor *c, int64_t *offset_seconds) {
  if (eat(c, 'Z') || eat(c, 'z') || eat_word(c, "UTC")) {
    *offset_seconds = 0;
    return true;
  }
  int sign = eat(c, '+') ? 1 : eat(c, '-') ? -1 : 0;
  int64_t h, m = 0;
  if (!sign || !digits(c, 2, &h)) return false;
  eat(c, ':');
  if (!at_end(c) && !digits(c, 2, &m)) return false;
  if (h > 18 || m > 59) return false;
  *offset_seconds = sign * (h * 3600 + m * 60);
  return true;
}

static bool parse_timestamp(cursor *c, const dp_type *t, int64_t *micros) {
  int64_t days, in_day = 0, offset = 0;
  if (!parse_date(c, &days)) return false;
  if (eat(c, ' ') || eat(c, 'T') || eat(c, 't')) {
    if (!parse_time(c, t->precision, &in_day)) return false;
  }
  if (!at_end(c)) {
    if (t->kind != DP_T_TIMESTAMP_LTZ) return false; /* a zone needs an instant type */
    eat(c, ' ');
    if (!parse_zone(c, &offset)) return false;
  }
  int64_t day_micros;
  if (__builtin_mul_overflow(days, DP_MICROS_PER_DAY, &day_micros) ||
      __builtin_add_overflow(day_micros, in_day - offset * DP_MICROS_PER_SECOND, micros))
    return false;
  return true;
}

/* Units a duration text may name, for "10 s", "1 min 30 s", "5 minutes". */
static const struct {
  const char *name;
  int64_t micros; /* for INTERVAL_DT */
  int64_t months; /* for INTERVAL_YM */
} duration_words[] = {
    {"us", 1, 0},
    {"microsecond", 1, 0},
    {"microseconds", 1, 0},
    {"ms", 1000, 0},
    {"millisecond", 1000, 0},
    {"milliseconds", 1000, 0},
    {"s", DP_MICROS_PER_SECOND, 0},
    {"sec", DP_MICROS_PER_SECOND, 0},
    {"second", DP_MICROS_PER_SECOND, 0},
    {"seconds", DP_MICROS_PER_SECOND, 0},
    {"min", DP_MICROS_PER_MINUTE, 0},
    {"minute", DP_MICROS_PER_MINUTE, 0},
    {"minutes", DP_MICROS_PER_MINUTE, 0},
    {"h", DP_MICROS_PER_HOUR, 0},
    {"hour", DP_MICROS_PER_HOUR, 0},
    {"hours", DP_MICROS_PER_HOUR, 0},
    {"d", DP_MICROS_PER_DAY, 0},
    {"day", DP_MICROS_PER_DAY, 0},
    {"days", DP_MICROS_PER_DAY, 0},
    {"week", 7 * DP_MICROS_PER_DAY, 0},
    {"weeks", 7 * DP_MICROS_PER_DAY, 0},
    {"month", 0, 1},
    {"months", 0, 1},
    {"mon", 0, 1},
    {"year", 0, 12},
    {"years", 0, 12},
    {"y", 0, 12},
};

/* One or more "<integer> <unit>" parts, summed: "1 min 30 s", "2 years". */
static bool parse_duration_words(cursor *c, bool months, int64_t *out) {
  int sign = eat(c, '-') ? -1 : 1;
  int64_t total = 0;
  int parts = 0;
  for (skip_spaces(c); !at_end(c); skip_spaces(c)) {
    int64_t count;
    if (!digits(c, 18, &count)) return false;
    skip_spaces(c);
    const char *word = c->p;
    while (!at_end(c) && isalpha((unsigned char)*c->p)) c->p++;
    size_t n = (size_t)(c->p - word);
    int64_t unit = 0;
    for (size_t i = 0; i < sizeof duration_words / sizeof duration_words[0]; i++)
      if (word_is(word, n, duration_words[i].name))
        unit = months ? duration_words[i].months : duration_words[i].micros;
    int64_t part;
    if (!unit || __builtin_mul_overflow(count, unit, &part) ||
        __builtin_add_overflow(total, part, &total))
      return false;
    parts++;
  }
  *out = sign * total;
  return parts > 0;
}

/* Flink's own interval text: [+-]D hh:mm:ss[.f] or [+-]hh:mm:ss[.f]. */
static bool parse_day_time(cursor *c, int64_t *out) {
  int sign = eat(c, '-') ? -1 : 1;
  if (sign > 0) eat(c, '+');
  cursor save = *c;
  int64_t days = 0, in_day;
  if (!digits(c, 9, &days) || !eat(c, ' ')) {
    *c = save;
    days = 0;
  }
  if (!parse_time(c, 6, &in_day) || !at_end(c)) return false;
  int64_t day_micros;
  if (__builtin_mul_overflow(days, DP_MICROS_PER_DAY, &day_micros) ||
      __builtin_add_overflow(day_micros, in_day, out))
    return false;
  *out *= sign;
  return true;
}

/* Flink's own text: [+-]Y-M. */
static bool parse_year_month(cursor *c, int64_t *out) {
  int sign = eat(c, '-') ? -1 : 1;
  if (sign > 0) eat(c, '+');
  int64_t y, m;
  if (!digits(c, 9, &y) || !eat(c, '-') || !digits(c, 2, &m) || !at_end(c) || m > 11)
    return false;
  *out = sign * (y * 12 + m);
  return true;
}

static bool parse_interval(cursor *c, bool months, int64_t *out) {
  cursor save = *c;
  if (months ? parse_year_month(c, out) : parse_day_time(c, out)) return true;
  *c = save;
  return parse_duration_words(c, months, out);
}

static bool parse_scalar(const dp_type *t, cursor *c, dp_value *out) {
  switch (t->kind) {
  case DP_T_BOOLEAN:
    return parse_bool(c, &out->u.b);
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT:
    return parse_integer(c, t->kind, &out->u.i);
  case DP_T_FLOAT:
  case DP_T_DOUBLE:
    return parse_double(c, t->kind == DP_T_FLOAT, &out->u.d);
  case DP_T_DECIMAL:
    return parse_decimal(c, t->precision, t->scale, &out->u.dec);
  case DP_T_DATE:
    return parse_date(c, &out->u.i) && at_end(c);
  case DP_T_TIME:
    return parse_time(c, t->precision, &out->u.i) && at_end(c);
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    return parse_timestamp(c, t, &out->u.i);
  case DP_T_INTERVAL_DT:
    return parse_interval(c, false, &out->u.i);
  case DP_T_INTERVAL_YM:
    return parse_interval(c, true, &out->u.i);
  default:
    return false; /* ROW, ARRAY, MAP have no text form to parse */
  }
}

bool dp_value_parse(dp_arena *a, const dp_type *t, const char *s, size_t n, dp_value *out) {
  if (!t || (!s && n)) return false;
  dp_value v = make(t);
  if (t->kind == DP_T_STRING || t->kind == DP_T_BYTES) {
    /* Text is kept exactly, spaces and NUL bytes included, in memory that
    ** outlives the input. */
    char *copy = dp_arena_alloc(a, n + 1);
    if (!copy) return false;
    if (n) memcpy(copy, s, n);
    copy[n] = '\0';
    v.u.s.ptr = copy;
    v.u.s.len = n;
    *out = v;
    return true;
  }
  cursor c = {s, s + n};
  skip_spaces(&c);
  while (c.end > c.p && isspace((unsigned char)c.end[-1])) c.end--;
  if (t->kind == DP_T_NULL) {
    if (!word_is(c.p, (size_t)(c.end - c.p), "NULL")) return false;
    *out = dp_value_null(t);
    return true;
  }
  if (!parse_scalar(t, &c, &v)) return false;
  *out = v;
  return true;
}
