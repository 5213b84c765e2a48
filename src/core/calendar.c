/*
** calendar.c — proleptic Gregorian calendar arithmetic and the text forms of
** instants and durations (types.h).
**
** Dates are counted in 400-year eras (146097 days each) with years starting
** on March 1st, so that the leap day is the last day of a year and every
** month length follows from one linear formula.  Floor division keeps days
** before 1970 and years before 1 AD (astronomical numbering: 0 is 1 BC)
** correct.
*/
#include <stdio.h>

#include "core/types.h"

#define DAYS_PER_ERA 146097
/* Days from 0000-03-01 to 1970-01-01. */
#define EPOCH_SHIFT 719468

static int64_t floor_div(int64_t x, int64_t y) {
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

int64_t dp_days_from_civil(int64_t y, unsigned m, unsigned d) {
  if (m <= 2) y -= 1; /* January and February belong to the previous March-year */
  int64_t era = floor_div(y, 400);
  int64_t year_of_era = y - era * 400;                  /* 0..399 */
  int64_t month_from_march = (int64_t)((m + 9) % 12);   /* March = 0 */
  int64_t day_of_year = (153 * month_from_march + 2) / 5 + (int64_t)d - 1;
  int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * DAYS_PER_ERA + day_of_era - EPOCH_SHIFT;
}

void dp_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d) {
  int64_t z = days + EPOCH_SHIFT;
  int64_t era = floor_div(z, DAYS_PER_ERA);
  int64_t day_of_era = z - era * DAYS_PER_ERA; /* 0..146096 */
  int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  int64_t month_from_march = (5 * day_of_year + 2) / 153;
  *d = (unsigned)(day_of_year - (153 * month_from_march + 2) / 5 + 1);
  *m = (unsigned)(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
  *y = year_of_era + era * 400 + (*m <= 2 ? 1 : 0);
}

int dp_format_timestamp(char *buf, size_t cap, int64_t micros, int precision) {
  if (precision < 0) precision = 0;
  if (precision > 9) precision = 9;
  int64_t days = floor_div(micros, DP_MICROS_PER_DAY);
  int64_t in_day = micros % DP_MICROS_PER_DAY; /* not micros - days*DAY: that overflows */
  if (in_day < 0) in_day += DP_MICROS_PER_DAY;
  int64_t y;
  unsigned m, d;
  dp_civil_from_days(days, &y, &m, &d);
  int64_t secs = in_day / DP_MICROS_PER_SECOND;
  int64_t frac = in_day % DP_MICROS_PER_SECOND;
  char date[32];
  /* Four-digit years as ISO 8601 writes them; beyond, a sign says so. */
  if (y >= 0 && y <= 9999)
    snprintf(date, sizeof date, "%04lld", (long long)y);
  else if (y > 9999)
    snprintf(date, sizeof date, "+%lld", (long long)y);
  else
    snprintf(date, sizeof date, "-%04lld", -(long long)y);
  char digits[16] = "";
  if (precision > 0) {
    /* µs are what is stored: digits past the sixth are always zero. */
    snprintf(digits, sizeof digits, ".%06lld000", (long long)frac);
    digits[precision + 1] = '\0';
  }
  return snprintf(buf, cap, "%s-%02u-%02u %02lld:%02lld:%02lld%s", date, m, d,
                  (long long)(secs / 3600), (long long)(secs / 60 % 60), (long long)(secs % 60),
                  digits);
}

static const struct {
  uint64_t micros;
  const char *name;
} duration_units[] = {
    {(uint64_t)DP_MICROS_PER_DAY, "d"},     {(uint64_t)DP_MICROS_PER_HOUR, "h"},
    {(uint64_t)DP_MICROS_PER_MINUTE, "min"}, {(uint64_t)DP_MICROS_PER_SECOND, "s"},
    {1000u, "ms"},                          {1u, "us"},
};

int dp_format_duration(char *buf, size_t cap, int64_t micros) {
  if (micros == 0) return snprintf(buf, cap, "0 s");
  /* Unsigned magnitude: INT64_MIN has no positive counterpart. */
  uint64_t left = micros < 0 ? 0u - (uint64_t)micros : (uint64_t)micros;
  char tmp[128];
  size_t len = 0;
  if (micros < 0) tmp[len++] = '-';
  bool first = true;
  for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++) {
    uint64_t count = left / duration_units[i].micros;
    if (!count) continue;
    left %= duration_units[i].micros;
    int n = snprintf(tmp + len, sizeof tmp - len, "%s%llu %s", first ? "" : " ",
                     (unsigned long long)count, duration_units[i].name);
    if (n > 0) len += (size_t)n;
    first = false;
  }
  return snprintf(buf, cap, "%s", tmp);
}
