/*
** bind_literal.c — literals and intervals.
**
** Types literals the way Flink does (an integer is INT when it fits, else
** BIGINT, else DECIMAL; 1.5 is DECIMAL(2, 1); 1e3 is DOUBLE; DATE/TIMESTAMP
** literals are checked where they are written) and reads intervals in both
** spellings: SQL's INTERVAL '1:30' MINUTE TO SECOND / INTERVAL '10' MINUTES and
** Spark's '10 seconds' / '1 minute 30 seconds'.
**
** Owns: nothing beyond the statement's arena.
*/
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan/binder_int.h"

/* ------------------------------------------------------------------ */
/* literals and intervals                                              */
/* ------------------------------------------------------------------ */

static dp_expr *bind_integer(dp_binder *b, const char *text, dp_span span) {
  const char *p = text;
  while (*p == '0' && p[1]) p++;
  size_t ndig = strlen(p);
  uint64_t v = 0;
  bool overflow = false;
  for (const char *q = p; *q; q++) {
    if (*q < '0' || *q > '9')
      return dp_bind_fail(b, DIPPER_SYNTAX, span, "malformed integer literal `%s`", text);
    unsigned dgt = (unsigned)(*q - '0');
    if (v > (UINT64_MAX - dgt) / 10) overflow = true;
    else v = v * 10 + dgt;
  }
  if (!overflow && v <= INT32_MAX)
    return dp_bind_literal_expr(b, dp_value_int(dp_bind_not_null(b, dp_type_of(DP_T_INT)), (int64_t)v), span);
  if (!overflow && v <= INT64_MAX)
    return dp_bind_literal_expr(b, dp_value_int(dp_bind_not_null(b, dp_type_of(DP_T_BIGINT)), (int64_t)v),
                        span);
  if (ndig > 38)
    return dp_bind_fail(b, DIPPER_TYPE, span,
                        "integer literal `%s` has more than 38 digits, the most a DECIMAL holds",
                        text);
  const dp_type *t = dp_type_decimal(b->a, (int)ndig, 0);
  dp_value val;
  if (!t || !dp_value_parse(b->a, t, p, ndig, &val))
    return dp_bind_fail(b, DIPPER_TYPE, span, "cannot read integer literal `%s`", text);
  val.type = dp_bind_not_null(b, t);
  return dp_bind_literal_expr(b, val, span);
}

static dp_expr *bind_decimal(dp_binder *b, const char *text, dp_span span) {
  const char *dot = strchr(text, '.');
  const char *p = text;
  while (*p == '0' && p != dot) p++;
  int intdig = dot ? (int)(dot - p) : (int)strlen(p);
  int scale = dot ? (int)strlen(dot + 1) : 0;
  int prec = intdig + scale;
  if (prec < 1) prec = 1;
  if (prec > 38)
    return dp_bind_fail(b, DIPPER_TYPE, span,
                        "decimal literal `%s` has more than 38 digits; write it as a DOUBLE "
                        "(e.g. with an exponent: 1.5E3)",
                        text);
  const dp_type *t = dp_type_decimal(b->a, prec, scale);
  dp_value val;
  if (!t || !dp_value_parse(b->a, t, text, strlen(text), &val))
    return dp_bind_fail(b, DIPPER_TYPE, span, "cannot read decimal literal `%s`", text);
  val.type = dp_bind_not_null(b, t);
  return dp_bind_literal_expr(b, val, span);
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Precision of a timestamp literal: its fractional digits, as Flink types them. */
static int literal_precision(const char *s) {
  const char *dot = strrchr(s, '.');
  if (!dot) return 0;
  int n = 0;
  for (const char *p = dot + 1; *p >= '0' && *p <= '9'; p++) n++;
  return n > 9 ? 9 : n;
}

dp_expr *dp_bind_literal(dp_binder *b, const dp_ast_expr *e) {
  const char *text = e->u.lit.text ? e->u.lit.text : "";
  dp_span span = e->span;
  switch (e->u.lit.kind) {
  case DP_LIT_NULL:
    return dp_bind_literal_expr(b, dp_value_null(dp_type_of(DP_T_NULL)), span);
  case DP_LIT_TRUE:
  case DP_LIT_FALSE: {
    dp_value v = dp_value_bool(e->u.lit.kind == DP_LIT_TRUE);
    v.type = dp_bind_not_null(b, dp_type_of(DP_T_BOOLEAN));
    return dp_bind_literal_expr(b, v, span);
  }
  case DP_LIT_INTEGER:
    return bind_integer(b, text, span);
  case DP_LIT_DECIMAL:
    return bind_decimal(b, text, span);
  case DP_LIT_FLOAT: {
    errno = 0;
    char *end = NULL;
    double d = strtod(text, &end);
    if (errno == ERANGE || !end || *end)
      return dp_bind_fail(b, DIPPER_TYPE, span, "floating-point literal `%s` is out of range", text);
    return dp_bind_literal_expr(b, dp_value_double(dp_bind_not_null(b, dp_type_of(DP_T_DOUBLE)), d), span);
  }
  case DP_LIT_STRING: {
    dp_value v = dp_value_string(text, strlen(text));
    v.type = dp_bind_not_null(b, dp_type_of(DP_T_STRING));
    return dp_bind_literal_expr(b, v, span);
  }
  case DP_LIT_BINARY: {
    size_t n = strlen(text);
    if (n % 2)
      return dp_bind_fail(b, DIPPER_SYNTAX, span,
                          "binary literal X'%s' has an odd number of hex digits; write two per byte",
                          text);
    char *bytes = dp_arena_alloc(b->a, n / 2 + 1);
    if (!bytes) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory");
    for (size_t i = 0; i < n / 2; i++) {
      int hi = hexval((unsigned char)text[2 * i]), lo = hexval((unsigned char)text[2 * i + 1]);
      if (hi < 0 || lo < 0)
        return dp_bind_fail(b, DIPPER_SYNTAX, span, "binary literal X'%s' has a non-hex digit", text);
      bytes[i] = (char)(hi * 16 + lo);
    }
    dp_value v = dp_value_string(bytes, n / 2);
    v.type = dp_bind_not_null(b, dp_type_of(DP_T_BYTES));
    return dp_bind_literal_expr(b, v, span);
  }
  case DP_LIT_DATE:
  case DP_LIT_TIME:
  case DP_LIT_TIMESTAMP:
  case DP_LIT_TIMESTAMP_LTZ: {
    const dp_type *t;
    const char *what, *example;
    if (e->u.lit.kind == DP_LIT_DATE) {
      t = dp_type_of(DP_T_DATE);
      what = "DATE";
      example = "DATE '2024-01-31'";
    } else if (e->u.lit.kind == DP_LIT_TIME) {
      dp_type *tt = dp_type_new(b->a, DP_T_TIME);
      if (tt) tt->precision = (uint8_t)literal_precision(text);
      t = tt;
      what = "TIME";
      example = "TIME '12:30:00'";
    } else {
      bool ltz = e->u.lit.kind == DP_LIT_TIMESTAMP_LTZ;
      t = dp_type_timestamp(b->a, ltz ? DP_T_TIMESTAMP_LTZ : DP_T_TIMESTAMP, literal_precision(text));
      what = ltz ? "TIMESTAMP_LTZ" : "TIMESTAMP";
      example = "TIMESTAMP '2024-01-31 12:30:00.000'";
    }
    dp_value v;
    if (!t) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory");
    if (!dp_value_parse(b->a, t, text, strlen(text), &v))
      return dp_bind_fail(b, DIPPER_TYPE, span, "malformed %s literal '%s'; write it like %s", what,
                          text, example);
    v.type = dp_bind_not_null(b, t);
    return dp_bind_literal_expr(b, v, span);
  }
  }
  return dp_bind_fail(b, DIPPER_INTERNAL, span, "unknown literal kind");
}

const char *dp_bind_unit_name(dp_time_unit u) {
  switch (u) {
#define UNIT_NAME_(n) \
  case DP_UNIT_##n:   \
    return #n;
    DP_TIME_UNITS(UNIT_NAME_)
#undef UNIT_NAME_
  case DP_UNIT_NONE:
    break;
  }
  return "";
}

/* µs in one unit of u (DAY..MICROSECOND, WEEK); months for YEAR/QUARTER/MONTH; 0 otherwise. */
static int64_t unit_size(dp_time_unit u, bool *months) {
  *months = false;
  switch (u) {
  case DP_UNIT_YEAR: *months = true; return 12;
  case DP_UNIT_QUARTER: *months = true; return 3;
  case DP_UNIT_MONTH: *months = true; return 1;
  case DP_UNIT_WEEK: return 7 * DP_MICROS_PER_DAY;
  case DP_UNIT_DAY: return DP_MICROS_PER_DAY;
  case DP_UNIT_HOUR: return DP_MICROS_PER_HOUR;
  case DP_UNIT_MINUTE: return DP_MICROS_PER_MINUTE;
  case DP_UNIT_SECOND: return DP_MICROS_PER_SECOND;
  case DP_UNIT_MILLISECOND: return 1000;
  case DP_UNIT_MICROSECOND: return 1;
  default: return 0;
  }
}

/* Spark unit words: "seconds", "min", "ms", ... */
static dp_time_unit unit_word(const char *w, size_t n) {
  static const struct { const char *word; dp_time_unit unit; } words[] = {
      {"year", DP_UNIT_YEAR}, {"years", DP_UNIT_YEAR}, {"month", DP_UNIT_MONTH},
      {"months", DP_UNIT_MONTH}, {"week", DP_UNIT_WEEK}, {"weeks", DP_UNIT_WEEK},
      {"day", DP_UNIT_DAY}, {"days", DP_UNIT_DAY}, {"d", DP_UNIT_DAY}, {"hour", DP_UNIT_HOUR},
      {"hours", DP_UNIT_HOUR}, {"h", DP_UNIT_HOUR}, {"minute", DP_UNIT_MINUTE},
      {"minutes", DP_UNIT_MINUTE}, {"min", DP_UNIT_MINUTE}, {"mins", DP_UNIT_MINUTE},
      {"second", DP_UNIT_SECOND}, {"seconds", DP_UNIT_SECOND}, {"sec", DP_UNIT_SECOND},
      {"secs", DP_UNIT_SECOND}, {"s", DP_UNIT_SECOND}, {"millisecond", DP_UNIT_MILLISECOND},
      {"milliseconds", DP_UNIT_MILLISECOND}, {"ms", DP_UNIT_MILLISECOND},
      {"microsecond", DP_UNIT_MICROSECOND}, {"microseconds", DP_UNIT_MICROSECOND},
      {"us", DP_UNIT_MICROSECOND},
  };
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strlen(words[i].word) == n) {
      size_t k = 0;
      while (k < n && tolower((unsigned char)w[k]) == words[i].word[k]) k++;
      if (k == n) return words[i].unit;
    }
  return DP_UNIT_NONE;
}

/* Read a decimal number "12" or "1.5" scaled by `scale` units; false when malformed. */
static bool read_scaled(const char **pp, int64_t scale, int64_t *out) {
  const char *p = *pp;
  if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1]))) return false;
  int64_t whole = 0;
  while (isdigit((unsigned char)*p)) {
    if (whole > (INT64_MAX - 9) / 10) return false;
    whole = whole * 10 + (*p++ - '0');
  }
  if (scale != 0 && whole > INT64_MAX / scale) return false;
  int64_t v = whole * scale;
  if (*p == '.') {
    p++;
    int64_t div = 1;
    int64_t frac = 0;
    while (isdigit((unsigned char)*p)) {
      if (div < INT64_C(1000000000000)) {
        frac = frac * 10 + (*p - '0');
        div *= 10;
      }
      p++;
    }
    v += (int64_t)((__int128)frac * scale / div);
  }
  *pp = p;
  *out = v;
  return true;
}

/* Spark's "1 minute 30 seconds" / "10 seconds" / "interval 1 hour". */
static bool parse_spark_interval(const char *s, int64_t *value, bool *months) {
  const char *p = s;
  bool any = false, any_months = false, any_micros = false;
  int64_t total = 0;
  bool neg = false;
  while (isspace((unsigned char)*p)) p++;
  if (unit_word(p, 0) == DP_UNIT_NONE && strlen(p) > 8 && isspace((unsigned char)p[8])) {
    size_t k = 0;
    while (k < 8 && tolower((unsigned char)p[k]) == "interval"[k]) k++;
    if (k == 8) p += 8;
  }
  for (;;) {
    while (isspace((unsigned char)*p)) p++;
    if (!*p) break;
    bool this_neg = false;
    if (*p == '-' || *p == '+') {
      this_neg = *p == '-';
      p++;
    }
    const char *num = p;
    while (isdigit((unsigned char)*p) || *p == '.') p++;
    const char *numend = p;
    while (isspace((unsigned char)*p)) p++;
    const char *w = p;
    while (isalpha((unsigned char)*p)) p++;
    if (num == numend || w == p) return false;
    bool is_months;
    dp_time_unit u = unit_word(w, (size_t)(p - w));
    int64_t scale = unit_size(u, &is_months);
    if (scale == 0) return false;
    int64_t part;
    const char *q = num;
    if (!read_scaled(&q, scale, &part) || q != numend) return false;
    if (is_months) any_months = true;
    else any_micros = true;
    total += this_neg ? -part : part;
    any = true;
    if (this_neg) neg = true;
  }
  (void)neg;
  if (!any || (any_months && any_micros)) return false;
  *value = total;
  *months = any_months;
  return true;
}

/* Fields of an INTERVAL 'text' unit TO unit literal. */
static bool parse_sql_interval(const char *text, dp_time_unit unit, dp_time_unit to_unit,
                               int64_t *value, bool *months) {
  const char *p = text;
  bool neg = false;
  while (isspace((unsigned char)*p)) p++;
  if (*p == '-' || *p == '+') {
    neg = *p == '-';
    p++;
  }
  while (isspace((unsigned char)*p)) p++;
  int64_t v = 0;
  if (to_unit == DP_UNIT_NONE) {
    int64_t scale = unit_size(unit, months);
    if (scale == 0) return false;
    if (!read_scaled(&p, scale, &v)) return false;
    /* Flink also accepts INTERVAL '10 seconds'-like text with a unit word after it. */
    while (isspace((unsigned char)*p)) p++;
    if (*p) return false;
  } else if (unit == DP_UNIT_YEAR && to_unit == DP_UNIT_MONTH) {
    int64_t y, m;
    if (!read_scaled(&p, 12, &y) || *p++ != '-' || !read_scaled(&p, 1, &m) || *p) return false;
    v = y + m;
    *months = true;
  } else {
    static const dp_time_unit chain[] = {DP_UNIT_DAY, DP_UNIT_HOUR, DP_UNIT_MINUTE, DP_UNIT_SECOND};
    int from = -1, to = -1;
    for (int i = 0; i < 4; i++) {
      if (chain[i] == unit) from = i;
      if (chain[i] == to_unit) to = i;
    }
    if (from < 0 || to <= from) return false;
    *months = false;
    for (int i = from; i <= to; i++) {
      bool mo;
      int64_t part;
      if (i > from) {
        char sep = i == 1 ? ' ' : ':';
        if (*p != sep) return false;
        p++;
      }
      const char *start = p;
      if (i < 3) {
        int64_t whole = 0;
        if (!isdigit((unsigned char)*p)) return false;
        while (isdigit((unsigned char)*p)) {
          if (whole > 100000000) return false;
          whole = whole * 10 + (*p++ - '0');
        }
        part = whole * unit_size(chain[i], &mo);
      } else if (!read_scaled(&p, unit_size(chain[i], &mo), &part)) {
        return false;
      }
      (void)start;
      v += part;
    }
    while (isspace((unsigned char)*p)) p++;
    if (*p) return false;
  }
  *value = neg ? -v : v;
  return true;
}

/* Either spelling → value (µs or months); reports at e. */
static bool interval_value(dp_diags *d, const dp_ast_expr *e, int64_t *value, bool *months) {
  if (e->kind == DP_AX_INTERVAL) {
    const char *text = e->u.interval.text ? e->u.interval.text : "";
    bool ok;
    if (e->u.interval.unit == DP_UNIT_NONE)
      ok = parse_spark_interval(text, value, months);
    else
      ok = parse_sql_interval(text, e->u.interval.unit, e->u.interval.to_unit, value, months);
    if (!ok) {
      if (e->u.interval.to_unit != DP_UNIT_NONE)
        dp_error(d, DIPPER_SYNTAX, e->span,
                 "malformed interval '%s' for %s TO %s; write e.g. INTERVAL '1 02:30:00' DAY TO "
                 "SECOND or INTERVAL '1:30' MINUTE TO SECOND",
                 text, dp_bind_unit_name(e->u.interval.unit), dp_bind_unit_name(e->u.interval.to_unit));
      else if (e->u.interval.unit != DP_UNIT_NONE)
        dp_error(d, DIPPER_SYNTAX, e->span,
                 "malformed interval '%s' %s; write a number, e.g. INTERVAL '5' %s", text,
                 dp_bind_unit_name(e->u.interval.unit), dp_bind_unit_name(e->u.interval.unit));
      else
        dp_error(d, DIPPER_SYNTAX, e->span,
                 "malformed interval '%s'; write e.g. INTERVAL '10' SECOND or '1 minute 30 seconds'",
                 text);
      return false;
    }
    if (e->u.interval.negative) *value = -*value;
    return true;
  }
  if (e->kind == DP_AX_LITERAL && e->u.lit.kind == DP_LIT_STRING) {
    if (!parse_spark_interval(e->u.lit.text ? e->u.lit.text : "", value, months)) {
      dp_error(d, DIPPER_SYNTAX, e->span,
               "'%s' is not an interval; write e.g. '10 seconds', '1 minute 30 seconds' or "
               "INTERVAL '10' SECOND",
               e->u.lit.text ? e->u.lit.text : "");
      return false;
    }
    return true;
  }
  if (e->kind == DP_AX_UNARY && e->u.unary.op == DP_UOP_NEG) {
    if (!interval_value(d, e->u.unary.arg, value, months)) return false;
    *value = -*value;
    return true;
  }
  dp_error(d, DIPPER_TYPE, e->span,
           "expected an interval here; write e.g. INTERVAL '10' SECOND or '10 seconds'");
  return false;
}

int dp_bind_interval(dp_diags *d, const dp_ast_expr *e, int64_t *micros) {
  int64_t v;
  bool months = false;
  if (!interval_value(d, e, &v, &months)) return d->count > 0 ? d->items[d->count - 1].code : DIPPER_SYNTAX;
  if (months)
    return dp_error(d, DIPPER_TYPE, e->span,
                    "a duration in months or years has no fixed length; write it in days, hours, "
                    "minutes or seconds");
  *micros = v;
  return DIPPER_OK;
}

bool dp_bind_interval_arg(dp_binder *b, const dp_ast_expr *e, const char *what, int64_t *micros) {
  int before = b->d->count;
  int rc = dp_bind_interval(b->d, e, micros);
  if (rc != DIPPER_OK) {
    if (!b->first_error) b->first_error = rc;
    (void)before;
    return false;
  }
  if (*micros <= 0) {
    char buf[64];
    dp_format_duration(buf, sizeof buf, *micros);
    dp_bind_err(b, DIPPER_TYPE, e->span, "%s must be a positive interval, not %s", what, buf);
    return false;
  }
  return true;
}

dp_expr *dp_bind_interval_literal(dp_binder *b, const dp_ast_expr *e) {
  int64_t v;
  bool months = false;
  if (!interval_value(b->d, e, &v, &months)) {
    if (!b->first_error) b->first_error = DIPPER_SYNTAX;
    return NULL;
  }
  const dp_type *t = dp_bind_not_null(b, dp_type_of(months ? DP_T_INTERVAL_YM : DP_T_INTERVAL_DT));
  return dp_bind_literal_expr(b, dp_value_int(t, v), e->span);
}

