/*
** streaming_dedup_test.c — deduplication on a real Spark (127.0.0.1:15002),
** from a watched directory of JSON files into Spark's memory sink, through
** dipper's compile pipeline, the Spark checks and the streaming backend.
**
** Three queries run side by side over the same input (a test costs one
** query's time), fed three files, each processed before the next:
**   - ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) = 1, ts an event time
**     with a 10 s watermark: Spark's dropDuplicatesWithinWatermark.  A key is
**     forgotten once the watermark passes its first row's time (Spark: plus
**     the delay), so it may come out again later; late rows are dropped.
**   - the same ordered by processing time: Spark's plain Deduplicate on k,
**     which keeps every key for ever and drops nothing as late.
**   - SELECT DISTINCT k, v, ts: Deduplicate on every column, the event time
**     among them (dipper wants it there, so that old rows can be forgotten):
**     the re-sent row goes, the late one too.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "spark/streaming.h"
#include "spark/translate_stream.h"
#include "test.h"
#include "spark/kafka_util.c" /* one source file per test target: the helpers come along */

#define EV(k, v, t) "{\"k\":\"" k "\",\"v\":" #v ",\"ts\":\"2024-01-01 " t "\"}\n"

/* File 1: a twice (the first one stays), b.  Watermark after: 00:00:00. */
static const char F1[] = EV("a", 1, "00:00:05") EV("b", 2, "00:00:10") EV("a", 3, "00:00:08");
/* File 2: a again, 15 s after its first row: the watermark (00:00:00) has
** not passed a's first time, so it is a duplicate everywhere; a's first row
** sent once more (a producer's retry).  c moves the watermark to 00:00:50. */
static const char F2[] = EV("a", 4, "00:00:20") EV("a", 1, "00:00:05") EV("c", 5, "00:01:00");
/* File 3: a once more, now that the watermark (00:00:50) has passed a's first
** row (and its 10 s delay): within the watermark it is a new row.  e is late
** (00:00:30 < 00:00:50): dropped within the watermark, kept by the plain
** deduplication, which has no watermark. */
static const char F3[] = EV("a", 6, "00:01:05") EV("e", 8, "00:00:30");

#define SOURCE \
  "SET 'execution.checkpointing.dir' = '%s/ck';\n" \
  "CREATE TABLE ev (k STRING, v INT, ts TIMESTAMP(3), p AS PROCTIME(),\n" \
  "  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND)\n" \
  "WITH ('connector' = 'filesystem', 'path' = '%s/in', 'format' = 'json',\n" \
  "  'source.monitor-interval' = '1 us');\n"

typedef struct dcase {
  const char *name;
  const char *body;
  const char *const *want;
  int nwant;
} dcase;

TEST(deduplication) {
  static const char *const within[] = {
      "{\"k\":\"a\",\"v\":1}", "{\"k\":\"a\",\"v\":6}", "{\"k\":\"b\",\"v\":2}",
      "{\"k\":\"c\",\"v\":5}"};
  static const char *const plain[] = {
      "{\"k\":\"a\",\"v\":1}", "{\"k\":\"b\",\"v\":2}", "{\"k\":\"c\",\"v\":5}",
      "{\"k\":\"e\",\"v\":8}"};
#define ROW(k, v, t) "{\"k\":\"" k "\",\"v\":" #v ",\"ts\":\"2024-01-01 " t "\"}"
  static const char *const distinct[] = {ROW("a", 1, "00:00:05"), ROW("a", 3, "00:00:08"),
                                         ROW("a", 4, "00:00:20"), ROW("a", 6, "00:01:05"),
                                         ROW("b", 2, "00:00:10"), ROW("c", 5, "00:01:00")};
  const dcase cases[] = {
      {"d_within",
       "CREATE TABLE d_within (k STRING, v INT) WITH ('connector' = 'memory');\n"
       "INSERT INTO d_within SELECT k, v FROM (\n"
       "  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM ev)\n"
       "WHERE rn = 1",
       within, 4},
      {"d_plain",
       "CREATE TABLE d_plain (k STRING, v INT) WITH ('connector' = 'memory');\n"
       "INSERT INTO d_plain SELECT k, v FROM (\n"
       "  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY p) AS rn FROM ev)\n"
       "WHERE rn = 1",
       plain, 4},
      {"d_distinct",
       "CREATE TABLE d_distinct (k STRING, v INT, ts TIMESTAMP(3)) WITH ('connector' = 'memory');\n"
       "INSERT INTO d_distinct SELECT DISTINCT k, v, ts FROM ev",
       distinct, 6},
  };
  enum { N = (int)(sizeof cases / sizeof cases[0]) };
  st_env e;
  CHECK_EQ(st_open(&e, "dedup"), 0);
  CHECK_EQ(st_mkdir(&e, "in"), 0);
  {
    /* one shuffle partition: half the state stores, the same answers */
    const char *k = "spark.sql.shuffle.partitions", *v = "1";
    dp_sc_error err;
    dp_sc_error_init(&err);
    CHECK_EQ(dp_sc_config_set(e.s, 1, &k, &v, &err), 0);
    dp_sc_error_free(&err);
  }
  dp_sq q[N];
  memset(q, 0, sizeof q);
  int ok = 1;
  for (int i = 0; i < N; i++) {
    char sql[4096];
    snprintf(sql, sizeof sql, SOURCE "%s", e.dir, e.dir, cases[i].body);
    int rc = st_start(&e, sql, &q[i]);
    if (rc) fprintf(stderr, "%s: the query did not start\n", cases[i].name);
    CHECK_EQ(rc, 0);
    ok &= rc == 0;
  }
  static const char *const files[] = {F1, F2, F3};
  for (int f = 0; f < 3 && ok; f++) {
    char name[16];
    snprintf(name, sizeof name, "%d.json", f + 1);
    CHECK_EQ(st_write_file(&e, "in", name, files[f]), 0);
    for (int i = 0; i < N && ok; i++) {
      int rc = st_drain(&e, &q[i]);
      CHECK_EQ(rc, 0);
      ok &= rc == 0;
    }
  }
  for (int i = 0; i < N; i++) {
    if (q[i].id[0]) CHECK_EQ(st_finish(&e, &q[i], 0), 0);
    dp_sq_free(&q[i]);
  }
  for (int i = 0; i < N && ok; i++) {
    char **rows = NULL;
    int n = st_table_json(&e, cases[i].name, NULL, &rows);
    int bad = st_expect(rows, n, cases[i].want, cases[i].nwant);
    if (bad) fprintf(stderr, "  (in %s)\n", cases[i].name);
    CHECK_EQ(bad, 0);
    for (int k = 0; k < n; k++) free(rows[k]);
    free(rows);
  }
  st_close(&e);
}

int main(void) { return RUN_TESTS(); }
