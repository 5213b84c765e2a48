/*
** streaming_sources_test.c — dipper's kafka source on a real Spark
** (127.0.0.1:15002, or $DIPPER_SPARK_REMOTE) reading a real Kafka
** (127.0.0.1:9092), through the compile pipeline and the streaming backend
** (translate_stream.h, streaming.h): a topic list with every metadata column, a topic pattern
** with CSV values, raw values from specific offsets, the start at a record
** timestamp, the start at the latest offset, Avro values written as the
** embedded engine writes them (every time, a DECIMAL, NULLs; bad records
** skipped), JSON and Avro keys read into the 'key.fields' columns
** ('value.fields-include' = 'EXCEPT_KEY'), and what Spark cannot read
** refused at compile time.  Topics are unique per run; each
** query writes Spark's memory sink, read back as sorted JSON and compared
** exactly.
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

/* The memory table `out` as JSON with milliseconds in every time. */
static void expect_out_ms(st_env *e, const char *const *want, int nwant) {
  char **rows = NULL;
  int n = st_rows(e,
                  "SELECT to_json(struct(*), map('timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSS', "
                  "'timestampNTZFormat', 'yyyy-MM-dd HH:mm:ss.SSS')) AS j FROM out ORDER BY j",
                  &rows);
  CHECK_EQ(st_expect(rows, n, want, nwant), 0);
  st_free_rows(rows, n);
}

/* Produce the JSON rows as Avro datums of table `table` in `script`. */
static int produce_avro(const char *t, const char *script, const char *table, int n,
                        const char *const *json) {
  char **v = NULL;
  size_t *lens = NULL;
  int rc = st_avro_encode(script, table, NULL, n, json, &v, &lens);
  if (rc == 0) rc = dp_tk_produce_bytes(ST_BROKERS, t, 0, n, NULL, NULL, (const char *const *)v,
                                        lens, err, sizeof err);
  if (rc) fprintf(stderr, "%s\n", err);
  dp_tk_free(v, v ? n : 0);
  free(lens);
  return rc;
}

#define AVRO_SRC \
  "CREATE TABLE src (id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3),\n" \
  "  lts TIMESTAMP_LTZ(3), small SMALLINT)\n" \
  KAFKA_WITH("'topic' = '%s'") ",\n" \
  "  'scan.startup.mode' = 'earliest-offset', 'format' = 'avro');\n"

TEST(avro_values_as_the_embedded_engine_writes_them) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_avro"), 0);
  char t[160], ddl[1024], sql[4096];
  CHECK_EQ(topic(&e, t, sizeof t, "avro"), 0);
  snprintf(ddl, sizeof ddl, AVRO_SRC, t);
  /* TIMESTAMP(3) is local-timestamp-millis, TIMESTAMP_LTZ(3) timestamp-millis
     (the session's zone is UTC), DECIMAL bytes, SMALLINT an Avro int */
  static const char *const rows[] = {
      "{\"id\":1,\"name\":\"ann\",\"price\":12.34,\"ts\":\"2024-01-01 10:00:00.123\","
      "\"lts\":\"2024-01-01 10:00:00.456Z\",\"small\":-7}",
      "{\"id\":2,\"name\":null,\"price\":-0.5,\"ts\":\"1969-12-31 23:59:59.999\","
      "\"lts\":\"2024-06-30 23:59:59.001Z\",\"small\":300}",
      "{\"id\":3,\"name\":\"\\u00e9t\\u00e9\",\"price\":null,\"ts\":null,\"lts\":null,\"small\":null}",
  };
  CHECK_EQ(produce_avro(t, ddl, "src", 3, rows), 0);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n%s"
           "CREATE TABLE out (id BIGINT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3),\n"
           "  lts TIMESTAMP_LTZ(3), small SMALLINT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT * FROM src",
           ddl);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  static const char *const want[] = {
      "{\"id\":1,\"name\":\"ann\",\"price\":12.34,\"ts\":\"2024-01-01 10:00:00.123\","
      "\"lts\":\"2024-01-01 10:00:00.456\",\"small\":-7}",
      "{\"id\":2,\"price\":-0.50,\"ts\":\"1969-12-31 23:59:59.999\","
      "\"lts\":\"2024-06-30 23:59:59.001\",\"small\":300}",
      "{\"id\":3,\"name\":\"\xc3\xa9t\xc3\xa9\"}",
  };
  expect_out_ms(&e, want, 3);
  st_close(&e);
}

TEST(avro_bad_records_skipped) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_avro_bad"), 0);
  char t[160], ddl[1024], sql[4096];
  CHECK_EQ(topic(&e, t, sizeof t, "avro_bad"), 0);
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE src (a INT, b STRING) " KAFKA_WITH("'topic' = '%s'") ",\n"
           "  'format' = 'avro', 'dipper.bad-records' = 'skip');\n",
           t);
  /* a record, a datum whose first union branch is 7 (bad: skipped), the
     record whose fields are all NULL (00 00: kept), a datum cut short in
     its string (bad: skipped), a record */
  static const char *const good[] = {"{\"a\":1,\"b\":\"x\"}", "{\"a\":null,\"b\":null}",
                                     "{\"a\":2,\"b\":null}"};
  char **v = NULL;
  size_t *lens = NULL;
  CHECK_EQ(st_avro_encode(ddl, "src", NULL, 3, good, &v, &lens), 0);
  if (v) {
    static const char bad1[] = "\x0e\x01", bad2[] = "\x02\x02\x02";
    const char *recs[] = {v[0], bad1, v[1], bad2, v[2]};
    size_t rl[] = {lens[0], 2, lens[1], 3, lens[2]};
    CHECK_EQ(lens[1], 2);
    int rc = dp_tk_produce_bytes(ST_BROKERS, t, 0, 5, NULL, NULL, recs, rl, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK_EQ(rc, 0);
  }
  dp_tk_free(v, v ? 3 : 0);
  free(lens);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n%s"
           "CREATE TABLE out (a INT, b STRING) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT * FROM src",
           ddl);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  static const char *const want[] = {"{\"a\":1,\"b\":\"x\"}", "{\"a\":2}", "{}"};
  expect_out(&e, want, 3);
  st_close(&e);
}

TEST(json_key_fields_except_key) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_key"), 0);
  char t[160], sql[4096];
  CHECK_EQ(topic(&e, t, sizeof t, "key"), 0);
  /* the key holds id and region (named without the table's prefix k_), the
     value the rest: its own k_id is not read; no key gives NULLs */
  static const char *const keys[] = {"{\"id\":1,\"region\":\"eu\"}",
                                     "{\"region\":\"us\",\"id\":2}", NULL};
  static const char *const values[] = {"{\"amount\":1.5,\"note\":\"a\"}",
                                       "{\"amount\":2,\"note\":null,\"k_id\":99}",
                                       "{\"amount\":3,\"note\":\"c\"}"};
  CHECK_EQ(produce(t, 3, keys, values, NULL), 0);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src (k_id INT, amount DOUBLE, k_region STRING, note STRING)\n"
           KAFKA_WITH("'topic' = '%s'") ",\n"
           "  'format' = 'json', 'key.format' = 'json', 'key.fields' = 'k_id;k_region',\n"
           "  'key.fields-prefix' = 'k_', 'value.fields-include' = 'EXCEPT_KEY');\n"
           "CREATE TABLE out (k_id INT, k_region STRING, amount DOUBLE, note STRING)\n"
           "  WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT k_id, k_region, amount, note FROM src",
           t);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  static const char *const want[] = {
      "{\"amount\":3.0,\"note\":\"c\"}",
      "{\"k_id\":1,\"k_region\":\"eu\",\"amount\":1.5,\"note\":\"a\"}",
      "{\"k_id\":2,\"k_region\":\"us\",\"amount\":2.0}",
  };
  expect_out(&e, want, 3);
  st_close(&e);
}

/* json and csv values with 'dipper.bad-records' as on the embedded engine:
** skip drops a record that does not parse (a value of the wrong type, a
** broken object) and keeps the others; fail (the default) fails the query. */
TEST(json_and_csv_bad_records_skipped_or_failing) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_bad_text"), 0);
  char tj[160], tc[160], sql[4096];
  CHECK_EQ(topic(&e, tj, sizeof tj, "bad_json"), 0);
  CHECK_EQ(topic(&e, tc, sizeof tc, "bad_csv"), 0);
  static const char *const vj[] = {"{\"id\":1,\"name\":\"a\"}", "{\"id\":\"x\",\"name\":\"b\"}",
                                   "{\"id\":3,", "{\"id\":4}"};
  static const char *const vc[] = {"1,a", "y,b", "3,c"};
  CHECK_EQ(produce(tj, 4, NULL, vj, NULL), 0);
  CHECK_EQ(produce(tc, 3, NULL, vc, NULL), 0);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src (id INT, name STRING)\n"
           KAFKA_WITH("'topic' = '%s'") ",\n"
           "  'scan.startup.mode' = 'earliest-offset', 'format' = 'json',\n"
           "  'dipper.bad-records' = 'skip');\n"
           "CREATE TABLE out (id INT, name STRING) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT id, name FROM src",
           tj);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  static const char *const want_json[] = {"{\"id\":1,\"name\":\"a\"}", "{\"id\":4}"};
  expect_out(&e, want_json, 2);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src_c (id INT, name STRING)\n"
           KAFKA_WITH("'topic' = '%s'") ",\n"
           "  'scan.startup.mode' = 'earliest-offset', 'format' = 'csv',\n"
           "  'csv.ignore-parse-errors' = 'true');\n"
           "CREATE TABLE out_c (id INT, name STRING) WITH ('connector' = 'memory');\n"
           "INSERT INTO out_c SELECT id, name FROM src_c",
           tc);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  char **rows = NULL;
  int n = st_table_json(&e, "out_c", NULL, &rows);
  static const char *const want_csv[] = {"{\"id\":1,\"name\":\"a\"}", "{\"id\":3,\"name\":\"c\"}"};
  CHECK_EQ(st_expect(rows, n, want_csv, 2), 0);
  st_free_rows(rows, n);
  /* the default: the query fails on the first bad record */
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src_f (id INT, name STRING)\n"
           KAFKA_WITH("'topic' = '%s'") ",\n"
           "  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"
           "CREATE TABLE out_f (id INT, name STRING) WITH ('connector' = 'memory');\n"
           "INSERT INTO out_f SELECT id, name FROM src_f",
           tj);
  dp_sq q;
  CHECK_EQ(st_start(&e, sql, &q), 0);
  dp_sc_error er;
  dp_sc_error_init(&er);
  bool done = false;
  /* the wait ends with the query's failure */
  int rc = dp_sq_await(e.s, &q, 240000, &done, &er);
  CHECK(rc == DIPPER_REMOTE || (rc == DIPPER_OK && done));
  char *ex = NULL;
  CHECK_EQ(dp_sq_exception(e.s, &q, &ex, &er), DIPPER_OK);
  CHECK(ex != NULL);
  if (ex) CHECK_CONTAINS(ex, "[MALFORMED_RECORD_IN_PARSING");
  free(ex);
  dp_sc_error_free(&er);
  dp_sq_free(&q);
  st_close(&e);
}

TEST(avro_key_fields_except_key) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_avro_key"), 0);
  char t[160], ddl[1024], sql[4096];
  CHECK_EQ(topic(&e, t, sizeof t, "avro_key"), 0);
  snprintf(ddl, sizeof ddl,
           "CREATE TABLE src (id BIGINT, region STRING, amount DOUBLE)\n"
           KAFKA_WITH("'topic' = '%s'") ",\n"
           "  'format' = 'json', 'key.format' = 'avro', 'key.fields' = 'region;id',\n"
           "  'value.fields-include' = 'EXCEPT_KEY');\n",
           t);
  /* keys: Avro datums of (region, id), the 'key.fields' order (Flink's key
     format, and the embedded engine's); the value holds amount only */
  static const char *const key_rows[] = {"{\"id\":7,\"region\":\"eu\"}",
                                         "{\"id\":null,\"region\":\"us\"}"};
  char **k = NULL;
  size_t *kl = NULL;
  CHECK_EQ(st_avro_encode(ddl, "src", "region;id", 2, key_rows, &k, &kl), 0);
  if (k) {
    static const char *const values[] = {"{\"amount\":1.5}", "{\"amount\":-2}"};
    size_t vl[] = {strlen(values[0]), strlen(values[1])};
    int rc = dp_tk_produce_bytes(ST_BROKERS, t, 0, 2, (const char *const *)k, kl, values, vl,
                                 err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK_EQ(rc, 0);
  }
  dp_tk_free(k, k ? 2 : 0);
  free(kl);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n%s"
           "CREATE TABLE out (id BIGINT, region STRING, amount DOUBLE) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT * FROM src",
           ddl);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  static const char *const want[] = {"{\"id\":7,\"region\":\"eu\",\"amount\":1.5}",
                                     "{\"region\":\"us\",\"amount\":-2.0}"};
  expect_out(&e, want, 2);
  st_close(&e);
}

/* What Spark cannot do with these tables is refused at compile time, at
** the place in the SQL. */
TEST(avro_and_key_refusals) {
  st_env e;
  CHECK_EQ(st_open(&e, "src_refused"), 0);
  char why[1024];
  /* a column Avro has no form for */
  int rc = st_refusal(&e,
                      "CREATE TABLE src (n INT,\n  m MAP<INT, STRING>) WITH ('connector' = 'kafka', "
                      "'topic' = 't',\n"
                      "  'properties.bootstrap.servers' = '" ST_BROKERS "', 'format' = 'avro');\n"
                      "CREATE TABLE out (n INT) WITH ('connector' = 'memory');\n"
                      "INSERT INTO out SELECT n FROM src",
                      why, sizeof why);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK(strncmp(why, "2:3:", 4) == 0);
  CHECK_CONTAINS(why, "table `src`: column `m` has no Avro form (MAP<INT, STRING>: Avro map "
                      "keys are strings); declare another type or use 'format' = 'json'");
  /* no dead-letter file on Spark */
  rc = st_refusal(&e,
                  "CREATE TABLE src (n INT) WITH ('connector' = 'kafka', 'topic' = 't',\n"
                  "  'properties.bootstrap.servers' = '" ST_BROKERS "', 'format' = 'avro',\n"
                  "  'dipper.bad-records' = 'dead-letter');\n"
                  "CREATE TABLE out (n INT) WITH ('connector' = 'memory');\n"
                  "INSERT INTO out SELECT n FROM src",
                  why, sizeof why);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK(strncmp(why, "3:", 2) == 0);
  CHECK_CONTAINS(why, "Spark has no dead-letter file for bad records; use 'dipper.bad-records' = "
                      "'skip' or 'fail'");
  st_close(&e);
}

int main(void) { return RUN_TESTS(); }
