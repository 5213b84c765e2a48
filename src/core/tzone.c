/*
** tzone.c — time zones by Java's names (tzone.h): the names resolved, the
** zone file read (RFC 8536, TZif), offsets looked up by instant and by wall
** time.
*/
#include "core/tzone.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/types.h"
#include "dipper.h"

/* A POSIX TZ rule's change of offset: Mm.w.d ('M'), Jn ('J', no Feb 29) or n
** ('N', 0-based), at `time` seconds of local time. */
typedef struct tz_change {
  char kind;
  int m, w, d, n;
  int64_t time;
} tz_change;

struct dp_tz {
  int32_t initial;  /* the offset before the first transition (or the fixed one) */
  int64_t n;        /* transitions */
  int64_t *at;      /* their instants, UTC seconds, ascending */
  int32_t *offset;  /* the offset from each on */
  /* after the last transition: the file footer's rule, when it has DST */
  bool rule;
  int32_t std_off, dst_off;
  tz_change start, end;
};

/* Java's three-letter IDs (ZoneInfoFile's old mappings); EST, MST and HST
** are fixed offsets there. */
static const struct {
  const char *id, *zone;
  int32_t fixed;
} java_ids[] = {
    {"ACT", "Australia/Darwin", 0},      {"AET", "Australia/Sydney", 0},
    {"AGT", "America/Argentina/Buenos_Aires", 0},
    {"ART", "Africa/Cairo", 0},          {"AST", "America/Anchorage", 0},
    {"BET", "America/Sao_Paulo", 0},     {"BST", "Asia/Dhaka", 0},
    {"CAT", "Africa/Harare", 0},         {"CNT", "America/St_Johns", 0},
    {"CST", "America/Chicago", 0},       {"CTT", "Asia/Shanghai", 0},
    {"EAT", "Africa/Addis_Ababa", 0},    {"ECT", "Europe/Paris", 0},
    {"IET", "America/Indiana/Indianapolis", 0},
    {"IST", "Asia/Kolkata", 0},          {"JST", "Asia/Tokyo", 0},
    {"MIT", "Pacific/Apia", 0},          {"NET", "Asia/Yerevan", 0},
    {"NST", "Pacific/Auckland", 0},      {"PLT", "Asia/Karachi", 0},
    {"PNT", "America/Phoenix", 0},       {"PRT", "America/Puerto_Rico", 0},
    {"PST", "America/Los_Angeles", 0},   {"SST", "Pacific/Guadalcanal", 0},
    {"VST", "Asia/Ho_Chi_Minh", 0},      {"EST", NULL, -5 * 3600},
    {"MST", NULL, -7 * 3600},            {"HST", NULL, -10 * 3600},
};

static dp_tz *fixed_zone(int32_t offset) {
  dp_tz *z = calloc(1, sizeof *z);
  if (z) z->initial = offset;
  return z;
}

/* Java's parseCustomTimeZone: GMT+h, GMT+hh, GMT+hhmm, GMT+h:mm, GMT+hh:mm
** (or -); false for anything else. */
static bool custom_offset(const char *s, size_t len, int32_t *out) {
  if (len < 5 || memcmp(s, "GMT", 3) != 0 || (s[3] != '+' && s[3] != '-')) return false;
  bool negative = s[3] == '-';
  int hours = 0, num = 0, delims = 0, digits = 0;
  for (size_t i = 4; i < len; i++) {
    char c = s[i];
    if (c == ':') {
      if (delims > 0 || digits > 2) return false;
      hours = num, num = 0, digits = 0, delims++;
      continue;
    }
    if (c < '0' || c > '9' || digits >= 4) return false;
    num = num * 10 + (c - '0');
    digits++;
  }
  if (delims == 0) {
    if (digits <= 2) hours = num, num = 0;
    else hours = num / 100, num %= 100;
  } else if (digits != 2) {
    return false;
  }
  if (hours > 23 || num > 59) return false;
  int32_t off = (int32_t)((hours * 60 + num) * 60);
  *out = negative ? -off : off;
  return true;
}

/* A name the tz database may hold as a file: letters, digits, '_', '-',
** '+', '/' between parts, no "." parts, not the folders of other flavours. */
static bool plain_zone_name(const char *s, size_t len) {
  if (len == 0 || len > 200 || s[0] == '/' || s[len - 1] == '/') return false;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '+' || (c == '/' && s[i + 1] != '/');
    if (!ok) return false;
  }
  static const char *const skip[] = {"posix/", "right/"};
  for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++)
    if (len > strlen(skip[k]) && memcmp(s, skip[k], strlen(skip[k])) == 0) return false;
  return !(len == 9 && !memcmp(s, "localtime", 9)) && !(len == 10 && !memcmp(s, "posixrules", 10)) &&
         !(len == 7 && !memcmp(s, "Factory", 7));
}

static int64_t be(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v = v << 8 | p[i];
  if (n == 4) return (int32_t)(uint32_t)v;
  return (int64_t)v;
}

/* ---- the POSIX TZ rule of a version 2+ file's footer ---- */

static const char *posix_name(const char *p) {
  if (*p == '<') {
    while (*p && *p != '>') p++;
    return *p ? p + 1 : NULL;
  }
  const char *q = p;
  while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z')) q++;
  return q - p >= 3 ? q : NULL;
}

/* [+-]h[h][:mm[:ss]] as seconds; NULL when malformed. */
static const char *posix_time(const char *p, int64_t *out) {
  int sign = 1;
  if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
  int64_t part[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) {
    if (*p < '0' || *p > '9') return k == 0 ? NULL : p;
    while (*p >= '0' && *p <= '9' && part[k] < 1000) part[k] = part[k] * 10 + (*p++ - '0');
    if (k < 2 && *p == ':') p++;
    else break;
  }
  *out = sign * (part[0] * 3600 + part[1] * 60 + part[2]);
  return p;
}

static const char *posix_change(const char *p, tz_change *c) {
  c->time = 7200;
  if (*p == 'M') {
    c->kind = 'M';
    if (sscanf(p + 1, "%d.%d.%d", &c->m, &c->w, &c->d) != 3 || c->m < 1 || c->m > 12 || c->w < 1 || c->w > 5 ||
        c->d < 0 || c->d > 6)
      return NULL;
    p++;
    while ((*p >= '0' && *p <= '9') || *p == '.') p++;
  } else {
    c->kind = *p == 'J' ? 'J' : 'N';
    if (*p == 'J') p++;
    if (*p < '0' || *p > '9') return NULL;
    c->n = 0;
    while (*p >= '0' && *p <= '9' && c->n < 1000) c->n = c->n * 10 + (*p++ - '0');
  }
  if (*p == '/') p = posix_time(p + 1, &c->time);
  return p;
}

/* "STDoff[DST[off][,start[/time],end[/time]]]": only a rule with DST matters. */
static void parse_posix(dp_tz *z, const char *p) {
  int64_t std, dst;
  if (!(p = posix_name(p)) || !(p = posix_time(p, &std)) || !*p) return;
  if (!(p = posix_name(p))) return;
  dst = std - 3600;
  if (*p && *p != ',' && !(p = posix_time(p, &dst))) return;
  if (*p != ',' || !(p = posix_change(p + 1, &z->start)) || *p != ',' || !(p = posix_change(p + 1, &z->end)))
    return;
  z->std_off = (int32_t)-std; /* POSIX offsets are west of UTC */
  z->dst_off = (int32_t)-dst;
  z->rule = true;
}

static bool leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* The local second, in year y, at which change c happens. */
static int64_t change_local(const tz_change *c, int64_t y) {
  int64_t jan1 = dp_days_from_civil(y, 1, 1), day;
  if (c->kind == 'J') {
    day = jan1 + c->n - 1 + (leap(y) && c->n >= 60 ? 1 : 0);
  } else if (c->kind == 'N') {
    day = jan1 + c->n;
  } else {
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t first = dp_days_from_civil(y, (unsigned)c->m, 1);
    int64_t wd = ((first + 4) % 7 + 7) % 7; /* 1970-01-01 was a Thursday */
    int64_t md = 1 + (c->d - wd + 7) % 7 + (c->w - 1) * 7;
    int64_t len = dim[c->m - 1] + (c->m == 2 && leap(y) ? 1 : 0);
    while (md > len) md -= 7;
    day = first + md - 1;
  }
  return day * 86400 + c->time;
}

static int64_t year_of(int64_t secs) {
  int64_t y;
  unsigned m, d;
  int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  dp_civil_from_days(days, &y, &m, &d);
  return y;
}

/* The rule's offset at UTC second t (wall = false) or wall-clock second t. */
static int32_t rule_offset(const dp_tz *z, int64_t t, bool wall) {
  int64_t y = year_of(wall ? t : t + z->std_off);
  /* the changes as UTC instants, or as the wall time each brings (Java's lookup) */
  int64_t start = change_local(&z->start, y) - z->std_off, end = change_local(&z->end, y) - z->dst_off;
  if (wall) start += z->dst_off, end += z->std_off;
  bool dst = start < end ? t >= start && t < end : !(t >= end && t < start);
  return dst ? z->dst_off : z->std_off;
}

/* The transitions of a TZif file's contents; NULL when it is not one. */
static dp_tz *parse_tzif(const unsigned char *d, size_t n, bool *nomem) {
  if (n < 44 || memcmp(d, "TZif", 4) != 0) return NULL;
  int64_t cnt[6];
  for (int i = 0; i < 6; i++) cnt[i] = be(d + 20 + 4 * i, 4);
  int tsize = 4;
  size_t off = 44;
  if (d[4] >= '2') { /* skip the 32-bit block to the 64-bit one */
    size_t v1 = (size_t)(cnt[3] * 5 + cnt[4] * 6 + cnt[5] + cnt[2] * 8 + cnt[1] + cnt[0]);
    if (44 + v1 + 44 > n || memcmp(d + 44 + v1, "TZif", 4) != 0) return NULL;
    off = 44 + v1 + 44;
    for (int i = 0; i < 6; i++) cnt[i] = be(d + off - 24 + 4 * i, 4);
    tsize = 8;
  }
  int64_t timecnt = cnt[3], typecnt = cnt[4];
  if (timecnt < 0 || typecnt < 1 || typecnt > 256 || cnt[5] < 0) return NULL;
  size_t need = off + (size_t)timecnt * (size_t)(tsize + 1) + (size_t)typecnt * 6;
  if (need > n) return NULL;
  const unsigned char *times = d + off, *idx = times + timecnt * tsize, *types = idx + timecnt;
  dp_tz *z = calloc(1, sizeof *z);
  if (z && timecnt) {
    z->at = malloc((size_t)timecnt * sizeof *z->at);
    z->offset = malloc((size_t)timecnt * sizeof *z->offset);
  }
  if (!z || (timecnt && (!z->at || !z->offset))) {
    dp_tz_free(z);
    *nomem = true;
    return NULL;
  }
  /* before the first transition: the first standard-time type (RFC 8536 3.2) */
  int first = 0;
  for (int64_t t = 0; t < typecnt; t++)
    if (!types[t * 6 + 4]) {
      first = (int)t;
      break;
    }
  z->initial = (int32_t)be(types + first * 6, 4);
  for (int64_t i = 0; i < timecnt; i++) {
    if (idx[i] >= typecnt) {
      dp_tz_free(z);
      return NULL;
    }
    z->at[i] = be(times + i * tsize, tsize);
    z->offset[i] = (int32_t)be(types + idx[i] * 6, 4);
  }
  z->n = timecnt;
  if (tsize == 8) { /* the footer after the 64-bit block: "\nTZ\n" */
    size_t foot = need + (size_t)cnt[5] + (size_t)cnt[2] * 12 + (size_t)cnt[1] + (size_t)cnt[0];
    if (foot + 2 < n && d[foot] == '\n') {
      char tz[128];
      size_t k = 0;
      for (size_t i = foot + 1; i < n && d[i] != '\n' && k + 1 < sizeof tz; i++) tz[k++] = (char)d[i];
      tz[k] = '\0';
      parse_posix(z, tz);
    }
  }
  return z;
}

static dp_tz *load_file(const char *name, size_t len, bool *nomem) {
  const char *dir = getenv("TZDIR");
  if (!dir || !*dir) dir = "/usr/share/zoneinfo";
  char path[512];
  if ((size_t)snprintf(path, sizeof path, "%s/%.*s", dir, (int)len, name) >= sizeof path) return NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = malloc(1 << 17);
  size_t n = buf ? fread(buf, 1, 1 << 17, f) : 0;
  fclose(f);
  if (!buf) {
    *nomem = true;
    return NULL;
  }
  dp_tz *z = parse_tzif(buf, n, nomem);
  free(buf);
  return z;
}

int dp_tz_open(const char *name, size_t len, dp_tz **out) {
  *out = NULL;
  bool nomem = false;
  for (size_t i = 0; i < sizeof java_ids / sizeof java_ids[0]; i++) {
    if (len != 3 || memcmp(name, java_ids[i].id, 3) != 0) continue;
    if (!java_ids[i].zone) return (*out = fixed_zone(java_ids[i].fixed)) ? DIPPER_OK : DIPPER_NOMEM;
    name = java_ids[i].zone;
    len = strlen(name);
    break;
  }
  dp_tz *z = plain_zone_name(name, len) ? load_file(name, len, &nomem) : NULL;
  if (nomem) return DIPPER_NOMEM;
  if (!z) {
    int32_t off = 0;
    if (!custom_offset(name, len, &off)) off = 0; /* unknown: GMT */
    z = fixed_zone(off);
  }
  *out = z;
  return z ? DIPPER_OK : DIPPER_NOMEM;
}

void dp_tz_free(dp_tz *z) {
  if (!z) return;
  free(z->at);
  free(z->offset);
  free(z);
}

int64_t dp_tz_offset_utc(const dp_tz *z, int64_t utc) {
  if (z->rule && (z->n == 0 || utc >= z->at[z->n - 1])) return rule_offset(z, utc, false);
  int64_t lo = 0, hi = z->n; /* the first transition after utc */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (z->at[mid] <= utc) lo = mid + 1;
    else hi = mid;
  }
  return lo == 0 ? z->initial : z->offset[lo - 1];
}

int64_t dp_tz_offset_wall(const dp_tz *z, int64_t wall) {
  /* a transition starts, in wall time, at its instant plus the offset it
  ** brings (java.util.ZoneInfo's wall-time lookup) */
  if (z->rule && (z->n == 0 || wall >= z->at[z->n - 1] + z->offset[z->n - 1])) return rule_offset(z, wall, true);
  int64_t lo = 0, hi = z->n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (z->at[mid] + z->offset[mid] <= wall) lo = mid + 1;
    else hi = mid;
  }
  return lo == 0 ? z->initial : z->offset[lo - 1];
}
