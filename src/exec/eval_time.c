/*
** eval_time.c — kernels of the date and time functions: EXTRACT and its
** shorthands (YEAR, HOUR, ...), DATE_FORMAT / FROM_UNIXTIME with Java-style
** patterns (yyyy-MM-dd HH:mm:ss.SSS), TO_TIMESTAMP / TO_DATE /
** UNIX_TIMESTAMP parsing with the same patterns, TO_TIMESTAMP_LTZ from epoch
** numbers, TIMESTAMPADD / TIMESTAMPDIFF, DATE_ADD / DATE_SUB / DATEDIFF,
** FLOOR/CEIL to a unit, and the clock: CURRENT_TIMESTAMP, LOCALTIMESTAMP,
** CURRENT_DATE and PROCTIME() read the batch's start time (one value per
** micro-batch, as in Spark), CURRENT_WATERMARK the watermark in effect.
**
** Calendar: proleptic Gregorian in UTC (the session zone); weeks are ISO
** weeks (Monday first, week 1 holds the year's first Thursday); DAYOFWEEK
** and DOW count 1 = Sunday .. 7 = Saturday; FLOOR to WEEK goes back to
** Monday.  Text that does not parse gives NULL.
*/
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>

#include "core/tzone.h"
#include "exec/eval_int.h"

typedef struct civil {
  int64_t year;
  unsigned month, day;
  int64_t days;                 /* since the epoch */
  int hour, minute, second;
  int64_t micros;               /* within the second */
} civil;

static civil civil_of(int64_t us) {
  civil t;
  t.days = dp_ev_floordiv(us, DP_MICROS_PER_DAY);
  int64_t tod = us - t.days * DP_MICROS_PER_DAY;
  dp_civil_from_days(t.days, &t.year, &t.month, &t.day);
  t.hour = (int)(tod / DP_MICROS_PER_HOUR);
  t.minute = (int)(tod / DP_MICROS_PER_MINUTE % 60);
  t.second = (int)(tod / DP_MICROS_PER_SECOND % 60);
  t.micros = tod % DP_MICROS_PER_SECOND;
  return t;
}

static int64_t day_of_year(const civil *t) { return t->days - dp_days_from_civil(t->year, 1, 1) + 1; }
static int64_t iso_weekday(int64_t days) { return dp_ev_floormod(days + 3, 7) + 1; } /* Mon=1 */
static int64_t sunday_weekday(int64_t days) { return dp_ev_floormod(days + 4, 7) + 1; } /* Sun=1 */

static int64_t iso_week(int64_t days) {
  int64_t thursday = days - (iso_weekday(days) - 1) + 3;
  int64_t y;
  unsigned m, d;
  dp_civil_from_days(thursday, &y, &m, &d);
  return (thursday - dp_days_from_civil(y, 1, 1)) / 7 + 1;
}

/* µs of a DATE/TIME/TIMESTAMP row (a DATE is its midnight). */
static int64_t micros_at(const dp_ev_arg *a, int64_t i) {
  return dp_ev_micros_of(a->v->type, dp_ev_i64(a, i));
}

static int64_t extract(dp_ev_unit u, const dp_type *t, int64_t x) {
  if (t->kind == DP_T_INTERVAL_YM) {
    switch (u) {
    case DP_EV_U_YEAR: return x / 12;
    case DP_EV_U_QUARTER: return x % 12 / 3 + 1;
    default: return x % 12;
    }
  }
  if (t->kind == DP_T_INTERVAL_DT) {
    switch (u) {
    case DP_EV_U_DAY: return x / DP_MICROS_PER_DAY;
    case DP_EV_U_HOUR: return x / DP_MICROS_PER_HOUR % 24;
    case DP_EV_U_MINUTE: return x / DP_MICROS_PER_MINUTE % 60;
    case DP_EV_U_SECOND: return x / DP_MICROS_PER_SECOND % 60;
    case DP_EV_U_MILLISECOND: return x / 1000 % 60000;
    case DP_EV_U_MICROSECOND: return x % 60000000;
    case DP_EV_U_NANOSECOND: return x % 60000000 * 1000;
    default: return x / DP_MICROS_PER_SECOND; /* EPOCH */
    }
  }
  int64_t us = dp_ev_micros_of(t, x);
  civil c = civil_of(us);
  switch (u) {
  case DP_EV_U_YEAR: return c.year;
  case DP_EV_U_QUARTER: return (c.month - 1) / 3 + 1;
  case DP_EV_U_MONTH: return c.month;
  case DP_EV_U_WEEK: return iso_week(c.days);
  case DP_EV_U_DAY: return c.day;
  case DP_EV_U_HOUR: return c.hour;
  case DP_EV_U_MINUTE: return c.minute;
  case DP_EV_U_SECOND: return c.second;
  /* Calcite: milli/microseconds include the seconds */
  case DP_EV_U_MILLISECOND: return c.second * 1000 + c.micros / 1000;
  case DP_EV_U_MICROSECOND: return c.second * 1000000 + c.micros;
  case DP_EV_U_NANOSECOND: return (c.second * 1000000 + c.micros) * 1000;
  case DP_EV_U_DOW: return sunday_weekday(c.days);
  case DP_EV_U_DOY: return day_of_year(&c);
  case DP_EV_U_EPOCH: return dp_ev_floordiv(us, DP_MICROS_PER_SECOND);
  default: return 0;
  }
}

static dp_ev_unit unit_arg(const dp_ev_arg *a) {
  size_t n;
  const char *s = dp_ev_str(a, 0, &n);
  return dp_ev_unit_of(s, n);
}

static int64_t unit_micros(dp_ev_unit u) {
  switch (u) {
  case DP_EV_U_WEEK: return 7 * DP_MICROS_PER_DAY;
  case DP_EV_U_DAY: return DP_MICROS_PER_DAY;
  case DP_EV_U_HOUR: return DP_MICROS_PER_HOUR;
  case DP_EV_U_MINUTE: return DP_MICROS_PER_MINUTE;
  case DP_EV_U_SECOND: return DP_MICROS_PER_SECOND;
  case DP_EV_U_MILLISECOND: return 1000;
  default: return 1;
  }
}

static int64_t unit_months(dp_ev_unit u) {
  return u == DP_EV_U_YEAR ? 12 : u == DP_EV_U_QUARTER ? 3 : u == DP_EV_U_MONTH ? 1 : 0;
}

/* floor (or ceil) of µs to the unit */
static int64_t floor_to(int64_t us, dp_ev_unit u, bool ceil_) {
  int64_t months = unit_months(u), r;
  if (months) {
    civil c = civil_of(us);
    int64_t total = c.year * 12 + c.month - 1;
    total -= dp_ev_floormod(total, months);
    int64_t y = dp_ev_floordiv(total, 12);
    r = dp_days_from_civil(y, (unsigned)(total - y * 12 + 1), 1) * DP_MICROS_PER_DAY;
    if (ceil_ && r != us) r = dp_ev_add_months(r, months);
    return r;
  }
  int64_t unit = unit_micros(u);
  int64_t base = u == DP_EV_U_WEEK ? 4 * DP_MICROS_PER_DAY : 0; /* 1970-01-05 was a Monday */
  r = dp_ev_floordiv(us - base, unit) * unit + base;
  if (ceil_ && r != us) r += unit;
  return r;
}

/* ---- Java-style patterns ---- */

static const char *const month_names[12] = {"January", "February", "March",     "April",
                                             "May",     "June",     "July",      "August",
                                             "September", "October", "November", "December"};
static const char *const day_names[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                         "Friday", "Saturday", "Sunday"};

static bool put_num(dp_ev_buf *b, int64_t x, int width) {
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%0*lld", width, (long long)x);
  return n > 0 && dp_ev_buf_put(b, tmp, (size_t)n);
}

static bool format_time(dp_ev_buf *b, int64_t us, const char *f, size_t fn) {
  civil c = civil_of(us);
  bool ok = true;
  for (size_t i = 0; i < fn && ok;) {
    char ch = f[i];
    if (ch == '\'') {
      size_t j = i + 1;
      if (j < fn && f[j] == '\'') {
        ok = dp_ev_buf_putc(b, '\'');
        i += 2;
        continue;
      }
      while (j < fn && f[j] != '\'') j++;
      ok = dp_ev_buf_put(b, f + i + 1, j - i - 1);
      i = j + 1;
      continue;
    }
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
      ok = dp_ev_buf_putc(b, ch);
      i++;
      continue;
    }
    size_t run = 1;
    while (i + run < fn && f[i + run] == ch) run++;
    int w = (int)run;
    switch (ch) {
    case 'y':
    case 'Y':
    case 'u': ok = run == 2 ? put_num(b, dp_ev_floormod(c.year, 100), 2) : put_num(b, c.year, w); break;
    case 'M':
    case 'L':
      if (run >= 4)
        ok = dp_ev_buf_put(b, month_names[c.month - 1], strlen(month_names[c.month - 1]));
      else if (run == 3)
        ok = dp_ev_buf_put(b, month_names[c.month - 1], 3);
      else
        ok = put_num(b, c.month, w);
      break;
    case 'd': ok = put_num(b, c.day, w); break;
    case 'D': ok = put_num(b, day_of_year(&c), w); break;
    case 'H': ok = put_num(b, c.hour, w); break;
    case 'k': ok = put_num(b, c.hour == 0 ? 24 : c.hour, w); break;
    case 'h': ok = put_num(b, c.hour % 12 == 0 ? 12 : c.hour % 12, w); break;
    case 'K': ok = put_num(b, c.hour % 12, w); break;
    case 'm': ok = put_num(b, c.minute, w); break;
    case 's': ok = put_num(b, c.second, w); break;
    case 'S': {
      char frac[16];
      snprintf(frac, sizeof frac, "%06lld000", (long long)c.micros);
      for (size_t k = 0; k < run && ok; k++) ok = dp_ev_buf_putc(b, k < 9 ? frac[k] : '0');
      break;
    }
    case 'a': ok = dp_ev_buf_put(b, c.hour < 12 ? "AM" : "PM", 2); break;
    case 'E': {
      const char *name = day_names[iso_weekday(c.days) - 1];
      ok = dp_ev_buf_put(b, name, run >= 4 ? strlen(name) : 3);
      break;
    }
    case 'X':
    case 'Z':
    case 'x': ok = run == 1 && ch == 'X' ? dp_ev_buf_putc(b, 'Z') : dp_ev_buf_put(b, "+0000", 5); break;
    default:
      for (size_t k = 0; k < run && ok; k++) ok = dp_ev_buf_putc(b, ch);
      break;
    }
    i += run;
  }
  return ok;
}

static bool read_num(const char **p, const char *end, int max_digits, int64_t *out) {
  int64_t x = 0;
  int n = 0;
  bool neg = false;
  if (*p < end && **p == '-' && max_digits > 4) {
    neg = true;
    (*p)++;
  }
  while (*p < end && n < max_digits && **p >= '0' && **p <= '9') {
    x = x * 10 + (**p - '0');
    (*p)++;
    n++;
  }
  *out = neg ? -x : x;
  return n > 0;
}

/* Parse s with the pattern; false when it does not match. */
static bool parse_time(const char *s, size_t sn, const char *f, size_t fn, int64_t *out) {
  const char *p = s, *end = s + sn;
  int64_t year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, micros = 0;
  bool pm = false, has_ampm = false;
  for (size_t i = 0; i < fn;) {
    char ch = f[i];
    if (ch == '\'') {
      size_t j = i + 1;
      while (j < fn && f[j] != '\'') j++;
      size_t len = j - i - 1;
      if ((size_t)(end - p) < len || memcmp(p, f + i + 1, len) != 0) return false;
      p += len;
      i = j + 1;
      continue;
    }
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
      if (p >= end || *p != ch) return false;
      p++;
      i++;
      continue;
    }
    size_t run = 1;
    while (i + run < fn && f[i + run] == ch) run++;
    /* adjacent numeric fields (yyyyMMdd) read exactly their width */
    bool next_is_field = i + run < fn && ((f[i + run] >= 'a' && f[i + run] <= 'z') || (f[i + run] >= 'A' && f[i + run] <= 'Z'));
    int width = next_is_field ? (int)run : (run < 2 ? 2 : (int)run);
    int64_t x;
    switch (ch) {
    case 'y':
    case 'Y':
    case 'u':
      if (!read_num(&p, end, next_is_field ? (int)run : 9, &x)) return false;
      year = run == 2 ? 2000 + x : x;
      break;
    case 'M':
      if (run >= 3) {
        bool found = false;
        for (int m = 0; m < 12 && !found; m++) {
          size_t len = run == 3 ? 3 : strlen(month_names[m]);
          if ((size_t)(end - p) >= len && strncasecmp(p, month_names[m], len) == 0) {
            month = m + 1;
            p += len;
            found = true;
          }
        }
        if (!found) return false;
      } else {
        if (!read_num(&p, end, width, &month)) return false;
      }
      break;
    case 'd': if (!read_num(&p, end, width, &day)) return false; break;
    case 'H':
    case 'h':
    case 'k':
    case 'K':
      if (!read_num(&p, end, width, &hour)) return false;
      if (ch == 'k' && hour == 24) hour = 0;
      break;
    case 'm': if (!read_num(&p, end, width, &minute)) return false; break;
    case 's': if (!read_num(&p, end, width, &second)) return false; break;
    case 'S': {
      int64_t frac = 0;
      int digits = 0;
      while (p < end && *p >= '0' && *p <= '9' && digits < (next_is_field ? (int)run : 9)) {
        if (digits < 6) frac = frac * 10 + (*p - '0');
        p++;
        digits++;
      }
      if (digits == 0) return false;
      for (int k = digits; k < 6; k++) frac *= 10;
      micros = frac;
      break;
    }
    case 'a':
      if (end - p < 2) return false;
      has_ampm = true;
      pm = (p[0] | 32) == 'p';
      p += 2;
      break;
    case 'E': {
      while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) p++;
      break;
    }
    case 'X':
    case 'Z':
    case 'x':
      if (p < end && *p == 'Z') {
        p++;
      } else if (p < end && (*p == '+' || *p == '-')) {
        int sign = *p == '-' ? -1 : 1;
        p++;
        int64_t hh = 0, mm = 0;
        if (!read_num(&p, end, 2, &hh)) return false;
        if (p < end && *p == ':') p++;
        read_num(&p, end, 2, &mm);
        /* the text names its own offset: convert to UTC */
        minute -= sign * (hh * 60 + mm);
      } else {
        return false;
      }
      break;
    default: return false;
    }
    i += run;
  }
  if (p != end) return false;
  if (has_ampm) {
    if (hour == 12) hour = 0;
    if (pm) hour += 12;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || second > 59) return false;
  int64_t days = dp_days_from_civil(year, (unsigned)month, (unsigned)day);
  *out = days * DP_MICROS_PER_DAY + hour * DP_MICROS_PER_HOUR + minute * DP_MICROS_PER_MINUTE +
         second * DP_MICROS_PER_SECOND + micros;
  return true;
}

static const char default_format[] = "yyyy-MM-dd HH:mm:ss";

/* Text to µs: with a pattern, or the lenient CAST rules without. */
static bool text_to_micros(const char *s, size_t n, const char *f, size_t fn, bool has_format, int64_t *out) {
  if (has_format) return parse_time(s, n, f, fn, out);
  static const dp_type ts6 = {.kind = DP_T_TIMESTAMP, .precision = 6};
  dp_value v;
  if (!dp_value_parse(NULL, &ts6, s, n, &v)) return false;
  *out = v.u.i;
  return true;
}

/* ---- the kernel ---- */

typedef struct tctx {
  dp_ev *c;
  const dp_expr *e;
  const dp_ev_arg *args;
  int nargs;
  int id;
  dp_vector *v;
  dp_ev_buf b;     /* DATE_FORMAT's text */
  int64_t now;     /* the batch's start time, µs */
  int64_t row_now; /* the clock now (CURRENT_ROW_TIMESTAMP), µs */
  dp_tz *tz[2];    /* CONVERT_TZ's zones, named tzname[k] (the last rows') */
  char *tzname[2];
  size_t tzlen[2];
  dp_ev_unit unit; /* EXTRACT's, TIMESTAMPADD's and TIMESTAMPDIFF's */
} tctx;

static int64_t clock_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * DP_MICROS_PER_SECOND + ts.tv_nsec / 1000;
}

/* The batch's start time, or the clock outside a query (or before its first batch). */
static int64_t batch_now(const dp_ev *c) {
  int64_t now = c->ex ? c->ex->batch_start_time : 0;
  return !c->ex || now == 0 ? clock_now() : now;
}

/* Java's SimpleDateFormat("yyyy-MM-dd HH:mm:ss").parse, lenient as it is
** (Flink's CONVERT_TZ): spaces before each number, any number of digits, a
** field out of range carried into the next larger one, text after the
** seconds ignored.  The wall-clock seconds since the epoch, or false. */
static bool parse_java_datetime(const char *s, size_t n, int64_t *wall) {
  static const char after[6] = {'-', '-', ' ', ':', ':', 0};
  int64_t f[6];
  size_t i = 0;
  for (int k = 0; k < 6; k++) {
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    size_t start = i;
    int64_t v = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 9) v = v * 10 + (s[i++] - '0');
    if (i == start || (i < n && s[i] >= '0' && s[i] <= '9')) return false;
    f[k] = v;
    if (after[k]) {
      if (i >= n || s[i] != after[k]) return false;
      i++;
    }
  }
  int64_t months = f[0] * 12 + f[1] - 1;
  int64_t y = dp_ev_floordiv(months, 12);
  int64_t days = dp_days_from_civil(y, (unsigned)(months - y * 12 + 1), 1) + f[2] - 1;
  *wall = days * 86400 + f[3] * 3600 + f[4] * 60 + f[5];
  return true;
}

/* CONVERT_TZ's zone k (0 from, 1 to) named s[0..n): the last one's if the
** name is the same. */
static int zone_of(tctx *t, int k, const char *s, size_t n, dp_tz **out) {
  if (!t->tz[k] || t->tzlen[k] != n || memcmp(t->tzname[k], s, n) != 0) {
    dp_tz_free(t->tz[k]);
    free(t->tzname[k]);
    t->tz[k] = NULL;
    t->tzname[k] = malloc(n + 1);
    if (!t->tzname[k]) return DIPPER_NOMEM;
    memcpy(t->tzname[k], s, n);
    t->tzlen[k] = n;
    int rc = dp_tz_open(s, n, &t->tz[k]);
    if (rc) return rc;
  }
  *out = t->tz[k];
  return DIPPER_OK;
}

static int convert_tz_row(tctx *t, int64_t i) {
  size_t n, fn, tn;
  const char *s = dp_ev_str(&t->args[0], i, &n);
  const char *from = dp_ev_str(&t->args[1], i, &fn), *to = dp_ev_str(&t->args[2], i, &tn);
  int64_t wall;
  if (!parse_java_datetime(s, n, &wall)) return dp_vector_append_null(t->v);
  dp_tz *zf, *zt;
  int rc = zone_of(t, 0, from, fn, &zf);
  if (!rc) rc = zone_of(t, 1, to, tn, &zt);
  if (rc) return rc;
  int64_t utc = wall - dp_tz_offset_wall(zf, wall);
  int64_t local = utc + dp_tz_offset_utc(zt, utc);
  char buf[64];
  int len = dp_format_timestamp(buf, sizeof buf, local * DP_MICROS_PER_SECOND, 0);
  return len < 0 ? dp_vector_append_null(t->v) : dp_vector_append_str(t->v, buf, (size_t)len);
}

/* The unit of EXTRACT's shorthands: YEAR(x) is EXTRACT(YEAR FROM x). */
static dp_ev_unit shorthand_unit(int id) {
  static const struct { int id; dp_ev_unit u; } map[] = {
      {DP_F_YEAR, DP_EV_U_YEAR},         {DP_F_QUARTER, DP_EV_U_QUARTER}, {DP_F_MONTH, DP_EV_U_MONTH},
      {DP_F_WEEK, DP_EV_U_WEEK},         {DP_F_DAYOFMONTH, DP_EV_U_DAY},  {DP_F_DAYOFYEAR, DP_EV_U_DOY},
      {DP_F_DAYOFWEEK, DP_EV_U_DOW},     {DP_F_HOUR, DP_EV_U_HOUR},       {DP_F_MINUTE, DP_EV_U_MINUTE},
      {DP_F_SECOND, DP_EV_U_SECOND}};
  dp_ev_unit u = DP_EV_U_NONE;
  for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
    if (map[k].id == id) u = map[k].u;
  return u;
}

/* DATE_FORMAT (of a time, or of text read as a timestamp), FROM_UNIXTIME. */
static int format_row(tctx *t, int64_t i) {
  const dp_ev_arg *args = t->args;
  size_t fn = sizeof default_format - 1;
  const char *f = default_format;
  if (t->nargs > 1) f = dp_ev_str(&args[1], i, &fn);
  int64_t us;
  if (t->id == DP_F_FROM_UNIXTIME) {
    us = dp_ev_i64(&args[0], i) * DP_MICROS_PER_SECOND;
  } else if (args[0].v->phys == DP_PHYS_VARBIN) {
    size_t sn;
    const char *s = dp_ev_str(&args[0], i, &sn);
    if (!text_to_micros(s, sn, NULL, 0, false, &us)) return dp_vector_append_null(t->v);
  } else {
    us = micros_at(&args[0], i);
  }
  t->b.len = 0;
  if (!format_time(&t->b, us, f, fn) || !dp_ev_buf_put(&t->b, "", 0)) return DIPPER_NOMEM;
  return dp_vector_append_str(t->v, t->b.p, t->b.len);
}

/* TO_TIMESTAMP, TO_DATE, UNIX_TIMESTAMP: of text (with a pattern, or the CAST
** rules; UNIX_TIMESTAMP's default pattern), of a time, or of now. */
static int parse_row(tctx *t, int64_t i) {
  const dp_ev_arg *args = t->args;
  int64_t us;
  bool ok = true;
  if (t->nargs == 0) {
    us = t->now;
  } else if (args[0].v->phys == DP_PHYS_VARBIN) {
    size_t sn, fn = 0;
    const char *s = dp_ev_str(&args[0], i, &sn), *f = NULL;
    bool has = t->nargs > 1;
    if (has) f = dp_ev_str(&args[1], i, &fn);
    if (!has && t->id == DP_F_UNIX_TIMESTAMP) {
      has = true;
      f = default_format;
      fn = sizeof default_format - 1;
    }
    ok = text_to_micros(s, sn, f, fn, has, &us);
  } else {
    us = micros_at(&args[0], i);
  }
  if (!ok) return dp_vector_append_null(t->v);
  if (t->id == DP_F_TO_DATE) return dp_vector_append_i64(t->v, dp_ev_floordiv(us, DP_MICROS_PER_DAY));
  if (t->id == DP_F_UNIX_TIMESTAMP) return dp_vector_append_i64(t->v, dp_ev_floordiv(us, DP_MICROS_PER_SECOND));
  return dp_vector_append_i64(t->v, floor_to(us, DP_EV_U_MILLISECOND, false));
}

/* TO_TIMESTAMP_LTZ: an epoch number in seconds, ms or µs; NULL outside the
** range of a timestamp. */
static int ltz_row(tctx *t, int64_t i) {
  int64_t precision = t->nargs > 1 ? dp_ev_i64(&t->args[1], i) : 3;
  if (precision != 0 && precision != 3 && precision != 6)
    return dp_ev_data_error(t->c, t->e, "TO_TIMESTAMP_LTZ takes precision 0 (seconds), 3 (milliseconds) or 6 "
                                        "(microseconds), not %lld",
                            (long long)precision);
  int64_t scale = precision == 0 ? DP_MICROS_PER_SECOND : precision == 3 ? 1000 : 1;
  const dp_ev_arg *a = &t->args[0];
  int64_t us;
  bool fits = true;
  if (a->v->phys == DP_PHYS_F64 || a->v->phys == DP_PHYS_F32) {
    double d = dp_ev_f64(a, i) * (double)scale;
    fits = d == d && d > -9.2e18 && d < 9.2e18;
    us = fits ? (int64_t)d : 0;
  } else if (a->v->phys == DP_PHYS_D128) {
    dp_i128 x;
    fits = !__builtin_mul_overflow(dp_ev_dec(a, i), (dp_i128)scale, &x);
    x /= dp_ev_pow10(a->v->type->scale);
    fits = fits && x > INT64_MIN && x < INT64_MAX;
    us = fits ? (int64_t)x : 0;
  } else {
    fits = !__builtin_mul_overflow(dp_ev_i64(a, i), scale, &us);
  }
  if (!fits) return dp_vector_append_null(t->v); /* out of the range of a timestamp */
  return dp_vector_append_i64(t->v, us);
}

static int current_watermark_row(tctx *t) {
  const dp_ev *c = t->c;
  if (!c->ex || c->ex->watermark == DP_WATERMARK_NONE) return dp_vector_append_null(t->v);
  return dp_vector_append_i64(t->v, c->ex->watermark);
}

/* TIMESTAMPADD(unit, amount, x): months by the calendar, a DATE stays a DATE. */
static int timestampadd_row(tctx *t, int64_t i) {
  const dp_ev_arg *args = t->args;
  dp_ev_unit unit = t->unit;
  int64_t amount = dp_ev_i64(&args[1], i), x = dp_ev_i64(&args[2], i);
  bool is_date = args[2].v->type->kind == DP_T_DATE;
  int64_t us = dp_ev_micros_of(args[2].v->type, x), r;
  if (unit_months(unit))
    r = dp_ev_add_months(us, (int64_t)((uint64_t)amount * (uint64_t)unit_months(unit)));
  else if (unit == DP_EV_U_QUARTER)
    r = us;
  else
    r = (int64_t)((uint64_t)us + (uint64_t)amount * (uint64_t)unit_micros(unit));
  return dp_vector_append_i64(t->v, is_date ? dp_ev_floordiv(r, DP_MICROS_PER_DAY) : r);
}

#define MILLIS_PER_DAY (DP_MICROS_PER_DAY / 1000)

/* Calcite's DateTimeUtils.subtractMonths of two dates (days): the whole
** months from d1 to d0, a month counted once d1 plus it (its day clamped to
** the month's last, as TIMESTAMPADD) reaches d0: Jan 31 to Feb 29 is one. */
static int64_t months_between_days(int64_t d0, int64_t d1) {
  if (d0 < d1) return -months_between_days(d1, d0);
  int64_t m = (d0 - d1) / 31; /* no month is longer: at most the answer */
  for (;;) {
    int64_t d2 = dp_ev_add_months(d1 * DP_MICROS_PER_DAY, m) / DP_MICROS_PER_DAY;
    if (d2 >= d0) return m;
    int64_t d3 = dp_ev_add_months(d1 * DP_MICROS_PER_DAY, m + 1) / DP_MICROS_PER_DAY;
    if (d3 > d0) return m;
    ++m;
  }
}

/* TIMESTAMPDIFF(unit, a, z) as Flink 2.3 computes it (Calcite's convertlet,
** checked on Flink 2.3.0), on the milliseconds of a and z (floored: what
** Flink's TimestampData holds):
**   - MONTH, QUARTER, YEAR: Calcite's subtractMonths(z, a) (whole months of
**     the dates, one less when z's date is a's plus them and z's time of day
**     is before a's, also for a negative count), divided by 3 or 12;
**   - DAY, HOUR, MINUTE, SECOND: (z - a) in ms divided by the unit;
**   - WEEK, MILLISECOND, MICROSECOND: through whole seconds as an INT,
**     (int) ((z - a) / 1000), then / 604800, * 1000 or * 1000000 (so a
**     MILLISECOND difference is a multiple of 1000, and 2^32 s and more of
**     WEEK wrap before the division: 1970 to 2100 is -318 weeks);
** divisions truncate toward zero, and the result is Flink's INT: the long
** cast to 32 bits, wrapping (a SECOND difference of 2^32 + 5 s is 5). */
static int timestampdiff_row(tctx *t, int64_t i) {
  int64_t a = dp_ev_floordiv(micros_at(&t->args[1], i), 1000);
  int64_t z = dp_ev_floordiv(micros_at(&t->args[2], i), 1000);
  int64_t months = unit_months(t->unit), r;
  if (months) {
    int64_t ms_a = a - dp_ev_floordiv(a, MILLIS_PER_DAY) * MILLIS_PER_DAY;
    int64_t ms_z = z - dp_ev_floordiv(z, MILLIS_PER_DAY) * MILLIS_PER_DAY;
    int64_t da = dp_ev_floordiv(a, MILLIS_PER_DAY), dz = dp_ev_floordiv(z, MILLIS_PER_DAY);
    int64_t m = months_between_days(dz, da);
    if (dp_ev_add_months(da * DP_MICROS_PER_DAY, m) / DP_MICROS_PER_DAY == dz && ms_z < ms_a) m--;
    r = m / months;
  } else {
    int64_t d = (int64_t)((uint64_t)z - (uint64_t)a);
    int64_t secs = (int32_t)(uint32_t)(uint64_t)(d / 1000);
    switch (t->unit) {
    case DP_EV_U_WEEK: r = secs / (7 * 86400); break;
    case DP_EV_U_MILLISECOND: r = secs * 1000; break;
    case DP_EV_U_MICROSECOND: r = secs * 1000000; break;
    default: r = d / (unit_micros(t->unit) / 1000); break;
    }
  }
  return dp_vector_append_i64(t->v, (int32_t)(uint32_t)(uint64_t)r);
}

/* DATE_ADD, DATE_SUB: days, wrapping as unsigned arithmetic does. */
static int date_add_row(tctx *t, int64_t i) {
  int64_t days = dp_ev_i64(&t->args[1], i), x = dp_ev_i64(&t->args[0], i);
  uint64_t moved = t->id == DP_F_DATE_ADD ? (uint64_t)x + (uint64_t)days : (uint64_t)x - (uint64_t)days;
  return dp_vector_append_i64(t->v, (int64_t)moved);
}

/* One row whose arguments are all non-NULL (CURRENT_WATERMARK aside). */
static int time_row(tctx *t, int64_t i) {
  const dp_ev_arg *args = t->args;
  dp_vector *v = t->v;
  switch (t->id) {
  case DP_F_EXTRACT: return dp_vector_append_i64(v, extract(t->unit, args[1].v->type, dp_ev_i64(&args[1], i)));
  case DP_F_YEAR:
  case DP_F_QUARTER:
  case DP_F_MONTH:
  case DP_F_WEEK:
  case DP_F_DAYOFMONTH:
  case DP_F_DAYOFYEAR:
  case DP_F_DAYOFWEEK:
  case DP_F_HOUR:
  case DP_F_MINUTE:
  case DP_F_SECOND:
    return dp_vector_append_i64(v, extract(shorthand_unit(t->id), args[0].v->type, dp_ev_i64(&args[0], i)));
  case DP_F_DATE_FORMAT:
  case DP_F_FROM_UNIXTIME: return format_row(t, i);
  case DP_F_TO_TIMESTAMP:
  case DP_F_TO_DATE:
  case DP_F_UNIX_TIMESTAMP: return parse_row(t, i);
  case DP_F_TO_TIMESTAMP_LTZ: return ltz_row(t, i);
  case DP_F_CURRENT_TIMESTAMP:
  case DP_F_LOCALTIMESTAMP:
  case DP_F_PROCTIME: return dp_vector_append_i64(v, floor_to(t->now, DP_EV_U_MILLISECOND, false));
  case DP_F_CURRENT_DATE: return dp_vector_append_i64(v, dp_ev_floordiv(t->now, DP_MICROS_PER_DAY));
  case DP_F_LOCALTIME:
  case DP_F_CURRENT_TIME:
    return dp_vector_append_i64(v, floor_to(dp_ev_floormod(t->now, DP_MICROS_PER_DAY), DP_EV_U_SECOND, false));
  case DP_F_CURRENT_ROW_TIMESTAMP: return dp_vector_append_i64(v, floor_to(t->row_now, DP_EV_U_MILLISECOND, false));
  case DP_F_CURRENT_WATERMARK: return current_watermark_row(t);
  case DP_F_TIMESTAMPADD: return timestampadd_row(t, i);
  case DP_F_TIMESTAMPDIFF: return timestampdiff_row(t, i);
  case DP_F_DATE_ADD:
  case DP_F_DATE_SUB: return date_add_row(t, i);
  case DP_F_DATEDIFF: return dp_vector_append_i64(v, dp_ev_i64(&args[0], i) - dp_ev_i64(&args[1], i));
  case DP_F_CONVERT_TZ: return convert_tz_row(t, i);
  default: return dp_ev_fail(t->c, t->e, DIPPER_INTERNAL, "no time kernel for %s", t->e->u.call.fn->name);
  }
}

static int k_time(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  tctx t = {0};
  t.c = c;
  t.e = e;
  t.args = args;
  t.nargs = e->u.call.nargs;
  t.id = e->u.call.fn->id;
  t.v = dp_ev_new(e->type, n);
  if (!t.v) return DIPPER_NOMEM;
  t.now = batch_now(c);
  if (t.id == DP_F_CURRENT_ROW_TIMESTAMP) t.row_now = clock_now();
  t.unit = DP_EV_U_NONE;
  if (t.id == DP_F_EXTRACT || t.id == DP_F_TIMESTAMPADD || t.id == DP_F_TIMESTAMPDIFF) t.unit = unit_arg(&args[0]);
  int rc = DIPPER_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    /* CURRENT_WATERMARK's argument only names the rowtime: its value does not matter */
    if (t.id != DP_F_CURRENT_WATERMARK && dp_ev_any_null(args, t.nargs, i))
      rc = dp_vector_append_null(t.v);
    else
      rc = time_row(&t, i);
  }
  free(t.b.p);
  for (int k = 0; k < 2; k++) {
    dp_tz_free(t.tz[k]);
    free(t.tzname[k]);
  }
  if (rc) {
    dp_vector_free(t.v);
    return rc;
  }
  *out = t.v;
  return DIPPER_OK;
}

int dp_ev_time_floorceil(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  bool ceil_ = e->u.call.fn->id == DP_F_CEIL;
  dp_ev_unit u = e->u.call.nargs > 1 ? unit_arg(&args[1]) : DP_EV_U_DAY;
  if (u == DP_EV_U_NONE)
    return dp_ev_fail(c, e, DIPPER_TYPE, "FLOOR/CEIL needs a unit such as HOUR or DAY");
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  const dp_type *t = args[0].v->type;
  for (int64_t i = 0; i < n && !rc; i++) {
    if (dp_ev_null(&args[0], i)) {
      rc = dp_vector_append_null(v);
      continue;
    }
    int64_t x = dp_ev_i64(&args[0], i);
    int64_t r = floor_to(dp_ev_micros_of(t, x), u, ceil_);
    if (t->kind == DP_T_DATE) r = dp_ev_floordiv(r, DP_MICROS_PER_DAY);
    if (t->kind == DP_T_TIME) r = dp_ev_floormod(r, DP_MICROS_PER_DAY);
    rc = dp_vector_append_i64(v, r);
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

dp_ev_kernel dp_ev_kernel_time(int fn_id) {
  switch (fn_id) {
  case DP_F_EXTRACT:
  case DP_F_YEAR:
  case DP_F_QUARTER:
  case DP_F_MONTH:
  case DP_F_WEEK:
  case DP_F_DAYOFMONTH:
  case DP_F_DAYOFYEAR:
  case DP_F_DAYOFWEEK:
  case DP_F_HOUR:
  case DP_F_MINUTE:
  case DP_F_SECOND:
  case DP_F_DATE_FORMAT:
  case DP_F_TO_TIMESTAMP:
  case DP_F_TO_TIMESTAMP_LTZ:
  case DP_F_TO_DATE:
  case DP_F_UNIX_TIMESTAMP:
  case DP_F_FROM_UNIXTIME:
  case DP_F_CURRENT_TIMESTAMP:
  case DP_F_LOCALTIMESTAMP:
  case DP_F_CURRENT_DATE:
  case DP_F_LOCALTIME:
  case DP_F_CURRENT_TIME:
  case DP_F_CURRENT_ROW_TIMESTAMP:
  case DP_F_CURRENT_WATERMARK:
  case DP_F_PROCTIME:
  case DP_F_TIMESTAMPADD:
  case DP_F_TIMESTAMPDIFF:
  case DP_F_DATE_ADD:
  case DP_F_DATE_SUB:
  case DP_F_DATEDIFF:
  case DP_F_CONVERT_TZ: return k_time;
  default: return NULL;
  }
}
