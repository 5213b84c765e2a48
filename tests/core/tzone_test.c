/*
** tzone_test.c — zones by Java's names (core/tzone.c): custom GMT offsets,
** Java's three-letter IDs, unknown names as GMT, and a zone file of the test's
** own (a "slim" TZif with no transitions, only the footer's POSIX rule) read
** from $TZDIR: summer and winter offsets, the spring-forward gap and the
** repeated autumn hour resolved by wall time as Java does, a southern rule.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/types.h"
#include "core/tzone.h"
#include "dipper.h"
#include "test.h"

static int64_t at(int64_t y, unsigned m, unsigned d, int h, int mi) {
  return dp_days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60;
}

static int64_t off_utc(const char *name, int64_t utc) {
  dp_tz *z = NULL;
  if (dp_tz_open(name, strlen(name), &z) != DIPPER_OK) return -999999;
  int64_t o = dp_tz_offset_utc(z, utc);
  dp_tz_free(z);
  return o;
}

static int64_t off_wall(const char *name, int64_t wall) {
  dp_tz *z = NULL;
  if (dp_tz_open(name, strlen(name), &z) != DIPPER_OK) return -999999;
  int64_t o = dp_tz_offset_wall(z, wall);
  dp_tz_free(z);
  return o;
}

static void put32(FILE *f, uint32_t v) {
  unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
  fwrite(b, 1, 4, f);
}

/* A TZif v2 file with one type (the standard offset) and no transitions. */
static void write_slim(const char *path, int32_t std, const char *abbr, const char *rule) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  for (int block = 0; block < 2; block++) {
    fwrite("TZif2", 1, 5, f);
    for (int i = 0; i < 15; i++) fputc(0, f);
    uint32_t counts[6] = {0, 0, 0, 0, 1, (uint32_t)strlen(abbr) + 1}; /* isut isstd leap time type char */
    for (int i = 0; i < 6; i++) put32(f, counts[i]);
    put32(f, (uint32_t)std);
    fputc(0, f); /* isdst */
    fputc(0, f); /* abbreviation index */
    fwrite(abbr, 1, strlen(abbr) + 1, f);
  }
  fprintf(f, "\n%s\n", rule);
  fclose(f);
}

TEST(custom_ids_short_ids_and_unknown_names) {
  int64_t t = at(2024, 7, 1, 12, 0);
  CHECK_EQ(off_utc("GMT+8", t), 8 * 3600);
  CHECK_EQ(off_utc("GMT-08:00", t), -8 * 3600);
  CHECK_EQ(off_utc("GMT+0530", t), 5 * 3600 + 30 * 60);
  CHECK_EQ(off_utc("GMT+5:30", t), 5 * 3600 + 30 * 60);
  CHECK_EQ(off_utc("GMT+24", t), 0);     /* hours above 23: not an ID, so GMT */
  CHECK_EQ(off_utc("GMT+5:3", t), 0);    /* minutes of one digit */
  CHECK_EQ(off_utc("EST", t), -5 * 3600); /* fixed, not New York's summer time */
  CHECK_EQ(off_utc("HST", t), -10 * 3600);
  CHECK_EQ(off_utc("utc", t), 0);
  CHECK_EQ(off_utc("Nowhere/Zone", t), 0);
  CHECK_EQ(off_utc("../etc/passwd", t), 0); /* never a path out of the folder */
  CHECK_EQ(off_utc("", t), 0);
}

TEST(a_slim_file_answers_by_its_footer_rule) {
  char dir[] = "/tmp/dipper-tzone-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/Test", dir);
  CHECK_EQ(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/Test/Berlin", dir);
  write_slim(path, 3600, "CET", "CET-1CEST,M3.5.0,M10.5.0/3");
  snprintf(path, sizeof path, "%s/Test/Sydney", dir);
  write_slim(path, 36000, "AEST", "AEST-10AEDT,M10.1.0,M4.1.0/3");
  snprintf(path, sizeof path, "%s/Test/Fixed", dir);
  write_slim(path, -3 * 3600, "-03", "<-03>3");
  const char *old = getenv("TZDIR");
  char *saved = old ? strdup(old) : NULL;
  setenv("TZDIR", dir, 1);

  CHECK_EQ(off_utc("Test/Berlin", at(2024, 7, 1, 12, 0)), 7200);
  CHECK_EQ(off_utc("Test/Berlin", at(2024, 1, 15, 12, 0)), 3600);
  CHECK_EQ(off_utc("Test/Berlin", at(2050, 7, 1, 12, 0)), 7200);
  /* 2024-03-31: CEST from 01:00 UTC; 2024-10-27: CET from 01:00 UTC */
  CHECK_EQ(off_utc("Test/Berlin", at(2024, 3, 31, 0, 59)), 3600);
  CHECK_EQ(off_utc("Test/Berlin", at(2024, 3, 31, 1, 0)), 7200);
  CHECK_EQ(off_utc("Test/Berlin", at(2024, 10, 27, 0, 59)), 7200);
  CHECK_EQ(off_utc("Test/Berlin", at(2024, 10, 27, 1, 0)), 3600);
  /* wall time: 02:30 in the gap takes the offset before it, 02:30 twice the one after */
  CHECK_EQ(off_wall("Test/Berlin", at(2024, 3, 31, 2, 30)), 3600);
  CHECK_EQ(off_wall("Test/Berlin", at(2024, 3, 31, 3, 0)), 7200);
  CHECK_EQ(off_wall("Test/Berlin", at(2024, 10, 27, 1, 59)), 7200);
  CHECK_EQ(off_wall("Test/Berlin", at(2024, 10, 27, 2, 30)), 3600);
  /* southern: summer time across the new year */
  CHECK_EQ(off_utc("Test/Sydney", at(2024, 1, 15, 0, 0)), 39600);
  CHECK_EQ(off_utc("Test/Sydney", at(2024, 7, 1, 0, 0)), 36000);
  CHECK_EQ(off_utc("Test/Sydney", at(2024, 12, 25, 0, 0)), 39600);
  CHECK_EQ(off_utc("Test/Fixed", at(2024, 7, 1, 0, 0)), -3 * 3600);
  CHECK_EQ(off_utc("Test/Missing", at(2024, 7, 1, 0, 0)), 0);

  if (saved) setenv("TZDIR", saved, 1);
  else unsetenv("TZDIR");
  free(saved);
  const char *names[] = {"Test/Berlin", "Test/Sydney", "Test/Fixed"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/Test", dir);
  rmdir(path);
  rmdir(dir);
}

int main(void) { return RUN_TESTS(); }
