/*
** streaming_sources_test.c — dipper's kafka source on a real Spark
** (127.0.0.1:15002) reading a real Kafka (127.0.0.1:9092), through the
** compile pipeline and the streaming backend (translate_stream.h,
** streaming.h): a topic list with every metadata column, a topic pattern
** with CSV values, raw values from specific offsets, the start at a record
** timestamp, the start at the latest offset, and Avro refused at compile
** time.  Topics are unique per run; each query writes Spark's memory sink,
** read back as sorted JSON and compared exactly.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "spark/streaming.h"
#include "spark/translate_stream.h"
#include "test.h"
#include "spark/kafka_util.c" /* one source file per test target: the helpers come along */

/* 2024-01-01 00:00:00 UTC in ms */
#define T0 1704067200000LL

static char err[512];

static int topic(const st_env *e, char *name, size_t cap, const char *suffix) {
  snprintf(name, cap, "%s_%s", e->tag, suffix);
  int rc = dp_tk_create_topic(ST_BROKERS, name, 1, err, sizeof err);
  if (rc) fprintf(stderr, "%s\n", err);
  return rc;
}

static int produce(const char *t, int n, const char *const *keys, const char *const *values,
                   const int64_t *ts) {
  int rc = dp_tk_produce_records(ST_BROKERS, t, 0, n, keys, values, ts, err, sizeof err);
  if (rc) fprintf(stderr, "%s\n", err);
  return rc;
}

/* The memory table `out` equals want (sorted JSON lines). */
static void expect_out(st_env *e, const char *const *want, int nwant) {
  char **rows = NULL;
  int n = st_table_json(e, "out", NULL, &rows);
  CHECK_EQ(st_expect(rows, n, want, nwant), 0);
  st_free_rows(rows, n);
}

#define KAFKA_WITH(topic_opt) \
  "WITH ('connector' = 'kafka', " topic_opt ", 'properties.bootstrap.servers' = '" ST_BROKERS "'"

TEST(topic_list_json_with_metadata_columns) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_list"), 0);
  char a[160], b[160], sql[4096];
  CHECK_EQ(topic(&e, a, sizeof a, "a"), 0);
  CHECK_EQ(topic(&e, b, sizeof b, "b"), 0);
  static const char *const va[] = {"{\"id\":1,\"name\":\"ann\"}", "{\"id\":2,\"name\":\"bob\"}"};
  static const int64_t ta[] = {T0, T0 + 1500};
  static const char *const vb[] = {"{\"id\":3,\"name\":null}"};
  static const int64_t tb[] = {T0 + 60000};
  CHECK_EQ(produce(a, 2, NULL, va, ta), 0);
  CHECK_EQ(produce(b, 1, NULL, vb, tb), 0);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src (id INT, name STRING,\n"
           "  tp STRING METADATA FROM 'topic' VIRTUAL, part INT METADATA FROM 'partition' VIRTUAL,\n"
           "  off BIGINT METADATA FROM 'offset' VIRTUAL,\n"
           "  kts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,\n"
           "  ttype STRING METADATA FROM 'timestamp-type' VIRTUAL)\n"
           KAFKA_WITH("'topic' = '%s;%s'") ",\n"
           "  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"
           "CREATE TABLE out (id INT, name STRING, tp STRING, part INT, off BIGINT,\n"
           "  kts TIMESTAMP_LTZ(3), ttype STRING) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT id, name, tp, part, off, kts, ttype FROM src",
           a, b);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  char w[3][512];
  snprintf(w[0], sizeof w[0],
           "{\"id\":1,\"name\":\"ann\",\"tp\":\"%s\",\"part\":0,\"off\":0,"
           "\"kts\":\"2024-01-01 00:00:00\",\"ttype\":\"CreateTime\"}", a);
  snprintf(w[1], sizeof w[1],
           "{\"id\":2,\"name\":\"bob\",\"tp\":\"%s\",\"part\":0,\"off\":1,"
           "\"kts\":\"2024-01-01 00:00:01\",\"ttype\":\"CreateTime\"}", a);
  snprintf(w[2], sizeof w[2],
           "{\"id\":3,\"tp\":\"%s\",\"part\":0,\"off\":0,"
           "\"kts\":\"2024-01-01 00:01:00\",\"ttype\":\"CreateTime\"}", b);
  const char *want[] = {w[0], w[1], w[2]};
  expect_out(&e, want, 3);
  st_close(&e);
}

TEST(topic_pattern_csv) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_pattern"), 0);
  char p1[160], p2[160], other[160], sql[4096];
  CHECK_EQ(topic(&e, p1, sizeof p1, "p1"), 0);
  CHECK_EQ(topic(&e, p2, sizeof p2, "p2"), 0);
  CHECK_EQ(topic(&e, other, sizeof other, "q1"), 0); /* not matched by the pattern */
  static const char *const v1[] = {"1,apple,0.5", "2,\"pear, ripe\",1.25"};
  static const char *const v2[] = {"3,fig,"};
  static const char *const vo[] = {"9,nope,9"};
  CHECK_EQ(produce(p1, 2, NULL, v1, NULL), 0);
  CHECK_EQ(produce(p2, 1, NULL, v2, NULL), 0);
  CHECK_EQ(produce(other, 1, NULL, vo, NULL), 0);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src (id INT, fruit STRING, price DOUBLE)\n"
           KAFKA_WITH("'topic-pattern' = '%s_p[0-9]+'") ",\n"
           "  'scan.startup.mode' = 'earliest-offset', 'format' = 'csv');\n"
           "CREATE TABLE out (id INT, fruit STRING, price DOUBLE) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT * FROM src",
           e.tag);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  static const char *const want[] = {
      "{\"id\":1,\"fruit\":\"apple\",\"price\":0.5}",
      "{\"id\":2,\"fruit\":\"pear, ripe\",\"price\":1.25}",
      "{\"id\":3,\"fruit\":\"fig\"}",
  };
  expect_out(&e, want, 3);
  st_close(&e);
}

TEST(raw_from_specific_offsets) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_offsets"), 0);
  char t[160], sql[4096];
  CHECK_EQ(topic(&e, t, sizeof t, "raw"), 0);
  static const char *const v[] = {"r0", "r1", "r2", "line three {not json}", "r4"};
  CHECK_EQ(produce(t, 5, NULL, v, NULL), 0);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src (line STRING, off BIGINT METADATA FROM 'offset' VIRTUAL)\n"
           KAFKA_WITH("'topic' = '%s'") ",\n"
           "  'scan.startup.mode' = 'specific-offsets',\n"
           "  'scan.startup.specific-offsets' = 'partition:0,offset:3', 'format' = 'raw');\n"
           "CREATE TABLE out (off BIGINT, line STRING) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT off, line FROM src",
           t);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  static const char *const want[] = {
      "{\"off\":3,\"line\":\"line three {not json}\"}",
      "{\"off\":4,\"line\":\"r4\"}",
  };
  expect_out(&e, want, 2);
  st_close(&e);
}

TEST(start_at_timestamp) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_ts"), 0);
  char t[160], sql[4096];
  CHECK_EQ(topic(&e, t, sizeof t, "ts"), 0);
  static const char *const v[] = {"{\"n\":1}", "{\"n\":2}", "{\"n\":3}"};
  static const int64_t ts[] = {T0, T0 + 10000, T0 + 20000};
  CHECK_EQ(produce(t, 3, NULL, v, ts), 0);
  /* from the first record at or after T0 + 10 s */
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src (n INT) " KAFKA_WITH("'topic' = '%s'") ",\n"
           "  'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '%lld',\n"
           "  'format' = 'json');\n"
           "CREATE TABLE out (n INT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT n FROM src",
           t, (long long)(T0 + 10000));
  CHECK_EQ(st_run(&e, sql, 1), 0);
  static const char *const want[] = {"{\"n\":2}", "{\"n\":3}"};
  expect_out(&e, want, 2);
  st_close(&e);
}

TEST(start_at_latest_offset) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_latest"), 0);
  char t[160], sql[4096];
  CHECK_EQ(topic(&e, t, sizeof t, "latest"), 0);
  static const char *const old[] = {"{\"n\":1}", "{\"n\":2}"};
  static const char *const fresh[] = {"{\"n\":3}", "{\"n\":4}"};
  CHECK_EQ(produce(t, 2, NULL, old, NULL), 0);
  snprintf(sql, sizeof sql,
           "CREATE TABLE src (n INT) " KAFKA_WITH("'topic' = '%s'") ",\n"
           "  'scan.startup.mode' = 'latest-offset', 'format' = 'json');\n"
           "CREATE TABLE out (n INT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT n FROM src",
           t);
  dp_sq q;
  CHECK_EQ(st_start(&e, sql, &q), 0);
  /* the first batch fixes the start at the end of the topic */
  CHECK_EQ(st_drain(&e, &q), 0);
  CHECK_EQ(produce(t, 2, NULL, fresh, NULL), 0);
  if (q.id[0]) CHECK_EQ(st_finish(&e, &q, 0), 0);
  dp_sq_free(&q);
  static const char *const want[] = {"{\"n\":3}", "{\"n\":4}"};
  expect_out(&e, want, 2);
  st_close(&e);
}

TEST(avro_refused_at_compile_time) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_avro"), 0);
  char why[1024];
  int rc = st_refusal(&e,
                      "CREATE TABLE src (n INT) WITH ('connector' = 'kafka', 'topic' = 't',\n"
                      "  'properties.bootstrap.servers' = '" ST_BROKERS "', 'format' = 'avro');\n"
                      "CREATE TABLE out (n INT) WITH ('connector' = 'memory');\n"
                      "INSERT INTO out SELECT n FROM src",
                      why, sizeof why);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK(strncmp(why, "2:", 2) == 0);
  CHECK_CONTAINS(why, "table `src`: 'format' = 'avro' on Spark needs the spark-avro package");
  st_close(&e);
}

int main(void) { return RUN_TESTS(); }
