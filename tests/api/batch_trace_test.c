/*
** batch_trace_test.c — DIPPER_TRACE_BATCHES (exec/batch_trace.h): a
** streaming query's steps written at its end, one line per step under a
** header, the batches' input rows adding up to what the query read; and
** nothing written without the variable.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dipper.h"
#include "test.h"

static int run(void) {
  const char *sql =
      "SET 'dipper.max-batch-rows' = '500';\n"
      "CREATE TABLE ev (k INT, v BIGINT, ts TIMESTAMP(3),\n"
      "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen',\n"
      "  'number-of-rows' = '2000', 'seed' = '7');\n"
      "CREATE TABLE out (k INT, s BIGINT) WITH ('connector' = 'blackhole');\n"
      "INSERT INTO out SELECT k, v FROM ev;\n";
  dipper *db = NULL;
  dipper_program *prog = NULL;
  int rc = dipper_open(&db, NULL);
  if (!rc) rc = dipper_compile(db, sql, (size_t)-1, "trace.sql", &prog);
  if (!rc) rc = dipper_run(prog, NULL, NULL);
  if (rc) fprintf(stderr, "  run: %s\n", dipper_errmsg(db));
  dipper_program_free(prog);
  dipper_close(db);
  return rc;
}

TEST(a_streaming_query_writes_one_line_per_step) {
  char path[256];
  snprintf(path, sizeof path, "%s/dipper-trace-%d.tsv", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  unlink(path);
  setenv("DIPPER_TRACE_BATCHES", path, 1);
  CHECK_EQ(run(), DIPPER_OK);
  unsetenv("DIPPER_TRACE_BATCHES");
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  if (!f) return;
  char line[1024];
  CHECK(fgets(line, sizeof line, f) != NULL);
  const char *head = "query\tbatch\tt_plan\twait_us\tplan_us\tfetch_us\tpull_us\t";
  CHECK_EQ(strncmp(line, head, strlen(head)), 0);
  long long rows = 0, batches = 0, last_batch = -1;
  int bad = 0;
  while (fgets(line, sizeof line, f)) {
    char name[64];
    long long v[14];
    int n = sscanf(line, "%63s %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", name,
                   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11],
                   &v[12], &v[13]);
    if (n != 15) {
      bad++;
      continue;
    }
    for (int i = 2; i <= 10; i++)
      if (v[i] < 0) bad++; /* durations and rows */
    if (v[0] < 0) continue;  /* a plan that found nothing */
    if (v[0] != last_batch + 1) bad++;
    last_batch = v[0];
    batches++;
    rows += v[10];
  }
  fclose(f);
  CHECK_EQ(bad, 0);
  CHECK_EQ(rows, 2000);
  CHECK(batches >= 4); /* 500 rows a batch at most */
  /* without the variable: nothing written */
  unlink(path);
  CHECK_EQ(run(), DIPPER_OK);
  CHECK(access(path, F_OK) != 0);
}

int main(void) { return RUN_TESTS(); }
