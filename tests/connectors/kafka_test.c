/*
** kafka_test.c — the kafka source and sink against a real broker on
** loopback (scripts/kafka-local; ctest starts it through the kafka_broker
** fixture, tests/CMakeLists.txt).  Through the public API: topics are created
** and records produced with librdkafka (known partitions, timestamps and
** event times), queries are stepped batch by batch with dipper_query_step and
** read back from memory tables, or from a Kafka topic for the sink.
**
** Covers: a windowed aggregation over two partitions with out-of-order and
** late events; metadata columns; each startup mode; bounded modes; records
** produced after a bounded query opened are not read; bad records under
** 'fail' (the error names topic, partition and offset) and 'skip' (counted);
** format raw; the sink's JSON and CSV values and keys; format 'avro' (values
** and keys written with dp_avro_encode_row and read back exactly, a bad datum
** skipped; the sink's datums decoded back with dp_avro_decode); exactly-once
** refused without a transactional id or a checkpoint folder (kafka_ft_test.c
** has the rest of fault tolerance).
**
** No broker is no reason to pass: every test fails when it cannot reach one.
** Topic names carry the process id and time, so reruns against one broker do
** not see each other's records.
*/
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "core/arena.h"
#include "dipper.h"
#include "formats/avro.h"
#include "formats/formats.h"
#include "test.h"
#include "conn_harness.h"


/* ---- the broker: topics and records ---- */

static void topic_name(char *buf, size_t cap, const char *what) {
  snprintf(buf, cap, "dipper-test-%s-%s", h_run_tag, what);
}


/* Create a topic with n partitions, seen in the cluster's metadata. */
static void create_topic(const char *name, int partitions) {
  CHECK_EQ(h_create_topic(name, partitions), RD_KAFKA_RESP_ERR_NO_ERROR);
}

typedef h_rec rec;

/* Produce values one per partition-0 record. */
static void produce_values(const char *topic, const char *const *values, int n) {
  rec rs[32];
  for (int i = 0; i < n && i < 32; i++) rs[i] = (rec){0, 0, NULL, values[i], NULL, NULL};
  h_produce(topic, rs, n);
}

/* Commit `offset` for partition 0 of topic under group. */
static void commit_group(const char *group, const char *topic, int64_t offset) {
  rd_kafka_t *rk = h_kafka_client(RD_KAFKA_CONSUMER, group, false);
  CHECK(rk != NULL);
  if (!rk) return;
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(l, topic, 0)->offset = offset;
  CHECK_EQ(rd_kafka_commit(rk, l, 0), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(l);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

/* ---- dipper ---- */

static dipper *open_db(void) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  return db;
}

static dipper_program *compile(dipper *db, const char *sql) {
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "kafka.sql", &prog);
  if (rc) fprintf(stderr, "compile: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  return prog;
}

static dipper_query *start(dipper *db, dipper_program *prog, dipper_query ***qs) {
  int n = 0;
  *qs = NULL;
  int rc = prog ? dipper_query_start(prog, qs, &n) : DIPPER_MISUSE;
  if (rc) fprintf(stderr, "start: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(n, 1);
  return rc == DIPPER_OK && n == 1 ? (*qs)[0] : NULL;
}

/* One micro-batch; the code, with the message in *msg. */
static int step(dipper *db, dipper_query *q, int *finished, const char **msg) {
  *finished = 0;
  int rc = dipper_query_step(q, finished);
  *msg = dipper_errmsg(db);
  return rc;
}

/* Step until the query finishes (bounded inputs); the steps it took. */
static int run_to_end(dipper *db, dipper_query *q) {
  int finished = 0, steps = 0;
  const char *msg;
  while (!finished && steps < 50) {
    int rc = step(db, q, &finished, &msg);
    if (rc) fprintf(stderr, "step: %s\n", msg);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) break;
    steps++;
  }
  CHECK(finished);
  return steps;
}

static void put_cell(char *buf, size_t cap, const struct ArrowSchema *s, const struct ArrowArray *a,
                     int64_t r) {
  int64_t i = r + a->offset;
  const uint8_t *valid = a->buffers[0];
  if (a->null_count != 0 && valid && !((valid[i >> 3] >> (i & 7)) & 1)) {
    snprintf(buf, cap, "NULL");
    return;
  }
  const char *f = s->format;
  if (strcmp(f, "l") == 0 || strncmp(f, "ts", 2) == 0)
    snprintf(buf, cap, "%" PRId64, ((const int64_t *)a->buffers[1])[i]);
  else if (strcmp(f, "i") == 0)
    snprintf(buf, cap, "%d", ((const int32_t *)a->buffers[1])[i]);
  else if (strcmp(f, "g") == 0)
    snprintf(buf, cap, "%g", ((const double *)a->buffers[1])[i]);
  else if (strcmp(f, "b") == 0)
    snprintf(buf, cap, "%s",
             (((const uint8_t *)a->buffers[1])[i >> 3] >> (i & 7)) & 1 ? "true" : "false");
  else if (strcmp(f, "u") == 0 || strcmp(f, "z") == 0) {
    const int32_t *off = a->buffers[1];
    snprintf(buf, cap, "%.*s", (int)(off[i + 1] - off[i]), (const char *)a->buffers[2] + off[i]);
  } else
    snprintf(buf, cap, "?%s", f);
}

static int cmp_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every row of memory table `table` as "a|b" lines, sorted (rows from two
** partitions arrive in no set order). */
static const char *fetch(dipper *db, const char *table) {
  static char text[16384];
  char rows[256][160];
  char *order[256];
  int nrows = 0;
  text[0] = '\0';
  struct ArrowSchema schema;
  struct ArrowArray array;
  int rc = dipper_memory_fetch(db, table, &schema, &array);
  if (rc) {
    snprintf(text, sizeof text, "ERROR %s: %s", dipper_strerror(rc), dipper_errmsg(db));
    return text;
  }
  for (int64_t r = 0; r < array.length && nrows < 256; r++) {
    size_t len = 0;
    rows[nrows][0] = '\0';
    for (int64_t c = 0; c < array.n_children; c++) {
      char cell[128];
      put_cell(cell, sizeof cell, schema.children[c], array.children[c], r);
      len += (size_t)snprintf(rows[nrows] + len, sizeof rows[nrows] - len, "%s%s", c ? "|" : "",
                              cell);
    }
    order[nrows] = rows[nrows];
    nrows++;
  }
  array.release(&array);
  schema.release(&schema);
  qsort(order, (size_t)nrows, sizeof order[0], cmp_line);
  size_t len = 0;
  for (int i = 0; i < nrows; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "%s\n", order[i]);
  return text;
}

/* SQL text with the broker and topic put in (BOOT, TOPIC). */
static char *sql_of(const char *tmpl, const char *topic) { return h_kafka_sql(tmpl, topic, NULL); }

/* Run `sql` (one INSERT into memory table out_t) to its end; the rows of out_t. */
static const char *run_bounded(const char *tmpl, const char *topic) {
  static char result[16384];
  dipper *db = open_db();
  char *sql = sql_of(tmpl, topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  snprintf(result, sizeof result, "(no query)");
  if (q) {
    run_to_end(db, q);
    snprintf(result, sizeof result, "%s", fetch(db, "out_t"));
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
  return result;
}

/* ---- the broker is there ---- */

/* Without a broker every test would wait out its timeouts: say so at once
** and fail the run. */

/* ---- a windowed aggregation over two partitions, batch by batch ---- */

#define PAYMENTS_DDL                                                                         \
  "CREATE TABLE payments (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE,"        \
  " provinceId INT, WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND) WITH ("    \
  " 'connector' = 'kafka', 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT',"      \
  " 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"

#define PAY(p, t, id, amt, prov)                                                            \
  {p, 0, NULL,                                                                               \
   "{\"createTime\":\"2024-01-01 " t "\",\"orderId\":" #id ",\"payAmount\":" #amt            \
   ",\"provinceId\":" #prov "}",                                                             \
   NULL, NULL}

TEST(windowed_sums_with_out_of_order_and_late_events) {
  char topic[160];
  topic_name(topic, sizeof topic, "payments");
  create_topic(topic, 2);
  dipper *db = open_db();
  char *sql = sql_of(PAYMENTS_DDL
                     "CREATE TABLE out_t (province INT, wstart TIMESTAMP(3), total DOUBLE,"
                     " n BIGINT) WITH ('connector' = 'memory');\n"
                     "INSERT INTO out_t SELECT provinceId, window_start, SUM(payAmount), COUNT(*)"
                     " FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(createTime),"
                     " INTERVAL '1' MINUTE)) GROUP BY provinceId, window_start, window_end;",
                     topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    /* Batch 1: event times out of order across and within partitions; the
    ** maximum is 00:01:15, so the watermark becomes 00:01:05. */
    rec b1[] = {PAY(0, "00:00:50", 2, 2, 1), PAY(0, "00:00:05", 1, 1, 1),
                PAY(1, "00:00:20", 3, 4, 2), PAY(1, "00:01:15", 4, 8, 1)};
    h_produce(topic, b1, 4);
    int finished = 0;
    const char *msg = NULL;
    int rc = step(db, q, &finished, &msg);
    CHECK_EQ(rc, DIPPER_OK);
    dipper_progress pr = {sizeof pr};
    CHECK_EQ(dipper_query_progress(q, &pr), DIPPER_OK);
    CHECK_EQ(pr.total_input_rows, 4);
    CHECK_EQ(pr.watermark, INT64_C(1704067200000000) + 65 * INT64_C(1000000));
    /* A batch with no new records lets the new watermark close [00:00, 00:01). */
    CHECK_EQ(step(db, q, &finished, &msg), DIPPER_OK);
    CHECK_STR(fetch(db, "out_t"), "1|1704067200000000|3|2\n"
                                  "2|1704067200000000|4|1\n");
    /* Batch 2: 00:00:58 is behind the watermark (late, dropped); 00:01:07 is
    ** out of order but in time; 00:02:30 moves the watermark to 00:02:20. */
    rec b2[] = {PAY(0, "00:00:58", 5, 16, 1), PAY(1, "00:01:07", 6, 32, 2),
                PAY(0, "00:02:30", 7, 64, 1)};
    h_produce(topic, b2, 3);
    CHECK_EQ(step(db, q, &finished, &msg), DIPPER_OK);
    CHECK_EQ(step(db, q, &finished, &msg), DIPPER_OK);
    CHECK_EQ(dipper_query_progress(q, &pr), DIPPER_OK);
    CHECK_EQ(pr.total_input_rows, 7);
    CHECK_EQ(pr.late_rows_dropped, 1);
    CHECK_EQ(pr.watermark, INT64_C(1704067200000000) + 140 * INT64_C(1000000));
    CHECK_STR(fetch(db, "out_t"), "1|1704067200000000|3|2\n"
                                  "1|1704067260000000|8|1\n"
                                  "2|1704067200000000|4|1\n"
                                  "2|1704067260000000|32|1\n");
    CHECK(!finished); /* an unbounded source never ends */
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
}

/* ---- metadata columns and the bounded end ---- */

TEST(metadata_columns_and_bounded_latest_offset) {
  char topic[160];
  topic_name(topic, sizeof topic, "meta");
  create_topic(topic, 2);
  rec rs[] = {{0, 1700000000001, "k1", "{\"id\":1}", "h", "x"},
              {0, 1700000000002, NULL, "{\"id\":2}", NULL, NULL},
              {1, 1700000000003, NULL, "{\"id\":3}", NULL, NULL},
              {0, 1700000000004, NULL, NULL, NULL, NULL}, /* a tombstone: no row */
              {1, 1700000000005, NULL, "{\"id\":5}", NULL, NULL}};
  h_produce(topic, rs, 5);
  dipper *db = open_db();
  char *sql = sql_of(
      "CREATE TABLE t (id BIGINT, tp STRING METADATA FROM 'topic' VIRTUAL,"
      " part INT METADATA FROM 'partition' VIRTUAL, off BIGINT METADATA FROM 'offset' VIRTUAL,"
      " ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', tt STRING METADATA FROM 'timestamp-type'"
      " VIRTUAL, hs MAP<STRING, BYTES> METADATA FROM 'headers') WITH ('connector' = 'kafka', 'topic' = 'TOPIC',"
      " 'properties.bootstrap.servers' = 'BOOT', 'scan.bounded.mode' = 'latest-offset',"
      " 'format' = 'json');\n"
      "CREATE TABLE out_t (id BIGINT, same_topic BOOLEAN, part INT, off BIGINT,"
      " ts TIMESTAMP_LTZ(3), tt STRING, h STRING, nh INT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT id, tp = 'TOPIC', part, off, ts, tt, CAST(hs['h'] AS STRING),"
      " CARDINALITY(hs) FROM t;",
      topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    /* produced after the source opened: past the bounded end, never read */
    rec late[] = {{0, 1700000000009, NULL, "{\"id\":9}", NULL, NULL}};
    h_produce(topic, late, 1);
    run_to_end(db, q);
    const char *got = fetch(db, "out_t");
    CHECK_STR(got, "1|true|0|0|1700000000001000|CreateTime|x|1\n"
                   "2|true|0|1|1700000000002000|CreateTime|NULL|0\n"
                   "3|true|1|0|1700000000003000|CreateTime|NULL|0\n"
                   "5|true|1|1|1700000000005000|CreateTime|NULL|0\n");
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
}

/* ---- startup modes ---- */

#define IDS_TABLE(options)                                                                    \
  "CREATE TABLE t (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'TOPIC',"               \
  " 'properties.bootstrap.servers' = 'BOOT', 'format' = 'json', " options ");\n"             \
  "CREATE TABLE out_t (id BIGINT) WITH ('connector' = 'memory');\n"                          \
  "INSERT INTO out_t SELECT id FROM t;"

static void produce_ids(const char *topic) {
  rec rs[5];
  static const char *const values[] = {"{\"id\":1}", "{\"id\":2}", "{\"id\":3}", "{\"id\":4}",
                                       "{\"id\":5}"};
  for (int i = 0; i < 5; i++)
    rs[i] = (rec){0, 1700000001000 + 1000 * (int64_t)i, NULL, values[i], NULL, NULL};
  h_produce(topic, rs, 5);
}

TEST(startup_modes) {
  char topic[160];
  topic_name(topic, sizeof topic, "startup");
  create_topic(topic, 1);
  produce_ids(topic);
  CHECK_STR(run_bounded(IDS_TABLE("'scan.startup.mode' = 'earliest-offset',"
                                  " 'scan.bounded.mode' = 'latest-offset'"),
                        topic),
            "1\n2\n3\n4\n5\n");
  CHECK_STR(run_bounded(IDS_TABLE("'scan.startup.mode' = 'latest-offset',"
                                  " 'scan.bounded.mode' = 'latest-offset'"),
                        topic),
            "");
  CHECK_STR(run_bounded(IDS_TABLE("'scan.startup.mode' = 'specific-offsets',"
                                  " 'scan.startup.specific-offsets' = 'partition:0,offset:3',"
                                  " 'scan.bounded.mode' = 'latest-offset'"),
                        topic),
            "4\n5\n");
  CHECK_STR(run_bounded(IDS_TABLE("'scan.startup.mode' = 'timestamp',"
                                  " 'scan.startup.timestamp-millis' = '1700000003000',"
                                  " 'scan.bounded.mode' = 'latest-offset'"),
                        topic),
            "3\n4\n5\n");
  char group[200];
  snprintf(group, sizeof group, "dipper-test-%s-group", h_run_tag);
  commit_group(group, topic, 2);
  char opts[1024];
  snprintf(opts, sizeof opts,
           IDS_TABLE("'scan.startup.mode' = 'group-offsets', 'properties.group.id' = '%s',"
                     " 'scan.bounded.mode' = 'latest-offset'"),
           group);
  CHECK_STR(run_bounded(opts, topic), "3\n4\n5\n");
  /* bounded by specific offsets and by timestamp: the end is exclusive */
  CHECK_STR(run_bounded(IDS_TABLE("'scan.bounded.mode' = 'specific-offsets',"
                                  " 'scan.bounded.specific-offsets' = 'partition:0,offset:2'"),
                        topic),
            "1\n2\n");
  CHECK_STR(run_bounded(IDS_TABLE("'scan.bounded.mode' = 'timestamp',"
                                  " 'scan.bounded.timestamp-millis' = '1700000004000'"),
                        topic),
            "1\n2\n3\n");
}

/* 'topic-pattern' reads every matching topic; 'topic' = 'a;b' a list. */
TEST(topic_pattern_and_topic_list) {
  char a[160], b[160], c[160], pattern[200], list[400];
  topic_name(a, sizeof a, "pat-a");
  topic_name(b, sizeof b, "pat-b");
  topic_name(c, sizeof c, "other-c");
  create_topic(a, 1);
  create_topic(b, 2);
  create_topic(c, 1);
  rec ra[] = {{0, 0, NULL, "{\"id\":1}", NULL, NULL}};
  rec rb[] = {{0, 0, NULL, "{\"id\":2}", NULL, NULL}, {1, 0, NULL, "{\"id\":3}", NULL, NULL}};
  rec rc_[] = {{0, 0, NULL, "{\"id\":4}", NULL, NULL}};
  h_produce(a, ra, 1);
  h_produce(b, rb, 2);
  h_produce(c, rc_, 1);
  topic_name(pattern, sizeof pattern, "pat-.*");
  const char *tmpl =
      "CREATE TABLE t (id BIGINT, tp STRING METADATA FROM 'topic' VIRTUAL) WITH ("
      "'connector' = 'kafka', 'topic-pattern' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT',"
      " 'format' = 'json', 'scan.bounded.mode' = 'latest-offset');\n"
      "CREATE TABLE out_t (id BIGINT, from_a BOOLEAN) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT id, tp LIKE '%pat-a' FROM t;";
  CHECK_STR(run_bounded(tmpl, pattern), "1|true\n2|false\n3|false\n");
  snprintf(list, sizeof list, "%s;%s", a, c);
  CHECK_STR(run_bounded(IDS_TABLE("'scan.bounded.mode' = 'latest-offset'"), list), "1\n4\n");
}

TEST(group_offsets_without_a_committed_offset_fail_clearly) {
  char topic[160];
  topic_name(topic, sizeof topic, "nogroup");
  create_topic(topic, 1);
  produce_ids(topic);
  dipper *db = open_db();
  char *sql = sql_of(IDS_TABLE("'scan.startup.mode' = 'group-offsets',"
                               " 'properties.group.id' = 'dipper-test-never-committed'"),
                     topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  int n = 0;
  int rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  int finished = 0;
  const char *msg = dipper_errmsg(db);
  if (rc == DIPPER_OK && n == 1) rc = step(db, qs[0], &finished, &msg);
  CHECK(rc != DIPPER_OK);
  CHECK_CONTAINS(msg, "has no committed offset");
  CHECK_CONTAINS(msg, "'properties.auto.offset.reset' = 'earliest'");
  if (qs) dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
}

/* An unbounded source at latest-offset reads only what comes after it opened. */
TEST(latest_offset_reads_what_comes_later) {
  char topic[160];
  topic_name(topic, sizeof topic, "latest");
  create_topic(topic, 1);
  produce_ids(topic);
  dipper *db = open_db();
  char *sql = sql_of(IDS_TABLE("'scan.startup.mode' = 'latest-offset'"), topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    int finished = 0;
    const char *msg;
    CHECK_EQ(step(db, q, &finished, &msg), DIPPER_OK);
    CHECK_STR(fetch(db, "out_t"), "");
    static const char *const more[] = {"{\"id\":6}", "{\"id\":7}"};
    produce_values(topic, more, 2);
    CHECK_EQ(step(db, q, &finished, &msg), DIPPER_OK);
    CHECK_STR(fetch(db, "out_t"), "6\n7\n");
    CHECK(!finished);
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
}

/* ---- bad records ---- */

TEST(bad_records_fail_with_the_offset_or_are_skipped) {
  char topic[160];
  topic_name(topic, sizeof topic, "bad");
  create_topic(topic, 1);
  static const char *const values[] = {"{\"id\":1}", "{\"id\": \"one\"}", "{\"id\":3}",
                                       "{not json"};
  produce_values(topic, values, 4);

  dipper *db = open_db();
  char *sql = sql_of(IDS_TABLE("'scan.bounded.mode' = 'latest-offset'"), topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    int finished = 0;
    const char *msg;
    int rc = step(db, q, &finished, &msg);
    CHECK_EQ(rc, DIPPER_DATA);
    CHECK_CONTAINS(msg, "partition 0 offset 1");
    CHECK_CONTAINS(msg, topic);
    CHECK_CONTAINS(msg, "'dipper.bad-records' = 'skip'");
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);

  db = open_db();
  sql = sql_of(IDS_TABLE("'scan.bounded.mode' = 'latest-offset', 'dipper.bad-records' = 'skip'"),
               topic);
  prog = compile(db, sql);
  q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    run_to_end(db, q);
    CHECK_STR(fetch(db, "out_t"), "1\n3\n");
    dipper_progress pr = {sizeof pr};
    CHECK_EQ(dipper_query_progress(q, &pr), DIPPER_OK);
    CHECK_EQ(pr.bad_records_skipped, 2);
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);

  /* dead-letter: the bad records with where they came from, in a file */
  char dead[256], opts[1024];
  snprintf(dead, sizeof dead, "/tmp/dipper-kafka-test-%s.jsonl", h_run_tag);
  snprintf(opts, sizeof opts,
           IDS_TABLE("'scan.bounded.mode' = 'latest-offset', 'dipper.bad-records' = "
                     "'dead-letter', 'dipper.dead-letter.path' = '%s'"),
           dead);
  CHECK_STR(run_bounded(opts, topic), "1\n3\n");
  FILE *f = fopen(dead, "r");
  CHECK(f != NULL);
  if (f) {
    char text[2048];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    CHECK_CONTAINS(text, "partition 0 offset 1\"");
    CHECK_CONTAINS(text, "partition 0 offset 3\"");
    CHECK_CONTAINS(text, "\"record\":\"{not json\"");
    remove(dead);
  }
}

/* ---- formats ---- */

TEST(raw_and_csv_values) {
  char topic[160];
  topic_name(topic, sizeof topic, "raw");
  create_topic(topic, 1);
  static const char *const values[] = {"7,seven", "8,\"eight, with a comma\""};
  produce_values(topic, values, 2);
  CHECK_STR(run_bounded("CREATE TABLE t (line STRING) WITH ('connector' = 'kafka',"
                        " 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT',"
                        " 'format' = 'raw', 'scan.bounded.mode' = 'latest-offset');\n"
                        "CREATE TABLE out_t (line STRING) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out_t SELECT line FROM t;",
                        topic),
            "7,seven\n8,\"eight, with a comma\"\n");
  CHECK_STR(run_bounded("CREATE TABLE t (id BIGINT, name STRING) WITH ('connector' = 'kafka',"
                        " 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT',"
                        " 'format' = 'csv', 'scan.bounded.mode' = 'latest-offset');\n"
                        "CREATE TABLE out_t (id BIGINT, name STRING) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out_t SELECT id, name FROM t;",
                        topic),
            "7|seven\n8|eight, with a comma\n");
}

TEST(unknown_topic_and_unknown_property_are_errors) {
  char topic[160];
  topic_name(topic, sizeof topic, "never-created");
  dipper *db = open_db();
  char *sql = sql_of(IDS_TABLE("'scan.bounded.mode' = 'latest-offset'"), topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  int n = 0;
  int rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  int finished = 0;
  const char *msg = dipper_errmsg(db);
  if (rc == DIPPER_OK && n == 1) rc = step(db, qs[0], &finished, &msg);
  CHECK(rc != DIPPER_OK);
  CHECK_CONTAINS(msg, "does not exist");
  if (qs) dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
  db = open_db();
  sql = sql_of(IDS_TABLE("'properties.fetch.wait.max.msx' = '5'"), "x");
  dipper_program *prog2 = compile(db, sql);
  qs = NULL;
  n = 0;
  rc = prog2 ? dipper_query_start(prog2, &qs, &n) : DIPPER_MISUSE;
  msg = dipper_errmsg(db);
  if (rc == DIPPER_OK && n == 1) rc = step(db, qs[0], &finished, &msg);
  CHECK(rc != DIPPER_OK);
  CHECK_CONTAINS(msg, "'fetch.wait.max.msx' is not known to librdkafka");
  if (qs) dipper_query_free_all(qs, n);
  dipper_program_free(prog2);
  dipper_close(db);
  free(sql);
}

/* EXCEPT_KEY: the key's columns from the message key, the rest from the value. */
TEST(key_columns_from_the_message_key) {
  char topic[160];
  topic_name(topic, sizeof topic, "keyed");
  create_topic(topic, 1);
  rec rs[] = {{0, 0, "{\"id\":7}", "{\"name\":\"x\"}", NULL, NULL},
              {0, 0, NULL, "{\"name\":\"y\"}", NULL, NULL},
              {0, 0, "{\"id\":\"bad\"}", "{\"name\":\"z\"}", NULL, NULL},
              {0, 0, "{\"id\":9}", "{\"name\":", NULL, NULL},
              {0, 0, "{\"id\":10}", "{\"name\":\"w\"}", NULL, NULL}};
  h_produce(topic, rs, 5);
  dipper *db = open_db();
  char *sql = sql_of("CREATE TABLE t (k_id BIGINT, name STRING) WITH ('connector' = 'kafka',"
                     " 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT',"
                     " 'format' = 'json', 'key.format' = 'json', 'key.fields' = 'k_id',"
                     " 'key.fields-prefix' = 'k_', 'value.fields-include' = 'EXCEPT_KEY',"
                     " 'scan.bounded.mode' = 'latest-offset', 'dipper.bad-records' = 'skip');\n"
                     "CREATE TABLE out_t (id BIGINT, name STRING) WITH ('connector' = 'memory');\n"
                     "INSERT INTO out_t SELECT k_id, name FROM t;",
                     topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    run_to_end(db, q);
    /* the bad key and the bad value are skipped, and leave no half row */
    CHECK_STR(fetch(db, "out_t"), "10|w\n7|x\nNULL|y\n");
    dipper_progress pr = {sizeof pr};
    CHECK_EQ(dipper_query_progress(q, &pr), DIPPER_OK);
    CHECK_EQ(pr.bad_records_skipped, 2);
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
}

/* A csv key is positional: its fields are in 'key.fields' order (Flink's key
** format), not the table's, both when written and when read back. */
TEST(csv_key_fields_in_key_fields_order) {
  char topic[160];
  topic_name(topic, sizeof topic, "keyorder");
  create_topic(topic, 1);
  rec rs[] = {{0, 0, "7,1", "{\"b\":\"x\"}", NULL, NULL}, {0, 0, ",2", "{\"b\":\"y\"}", NULL, NULL}};
  h_produce(topic, rs, 2);
  dipper *db = open_db();
  char *sql = sql_of("CREATE TABLE t (a INT, b STRING, c INT) WITH ('connector' = 'kafka',"
                     " 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT',"
                     " 'format' = 'json', 'key.format' = 'csv', 'key.fields' = 'c;a',"
                     " 'value.fields-include' = 'EXCEPT_KEY', 'scan.bounded.mode' = 'latest-offset');\n"
                     "CREATE TABLE out_k (a INT, b STRING, c INT) WITH ('connector' = 'memory');\n"
                     "INSERT INTO out_k SELECT a, b, c FROM t;",
                     topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    run_to_end(db, q);
    CHECK_STR(fetch(db, "out_k"), "1|x|7\n2|y|NULL\n");
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  free(sql);
  /* the sink writes the key in the same order: a round trip keeps the rows */
  char out[160];
  topic_name(out, sizeof out, "keyorder-out");
  create_topic(out, 1);
  char tmpl[1024];
  snprintf(tmpl, sizeof tmpl,
           "CREATE TABLE o (a INT, b STRING, c INT) WITH ('connector' = 'kafka', 'topic' = '%s',"
           " 'properties.bootstrap.servers' = 'BOOT', 'format' = 'json', 'key.format' = 'csv',"
           " 'key.fields' = 'c;a', 'value.fields-include' = 'EXCEPT_KEY');\n"
           "INSERT INTO o SELECT a, b, c FROM t;",
           out);
  sql = sql_of(tmpl, topic);
  prog = compile(db, sql);
  qs = NULL;
  q = prog ? start(db, prog, &qs) : NULL;
  if (q) run_to_end(db, q);
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
  CHECK_STR(h_consume_all(out, 2, false, ""), "7,1\t{\"b\":\"x\"}\n"
                                        ",2\t{\"b\":\"y\"}\n");
}

/* ---- the sink ---- */

TEST(sink_writes_json_and_csv_with_keys) {
  char in[160], out_json[160], out_csv[160];
  topic_name(in, sizeof in, "sink-in");
  topic_name(out_json, sizeof out_json, "sink-json");
  topic_name(out_csv, sizeof out_csv, "sink-csv");
  create_topic(in, 1);
  create_topic(out_json, 1);
  create_topic(out_csv, 1);
  static const char *const values[] = {
      "{\"id\":1,\"name\":\"a\",\"ts\":\"2024-01-01 00:00:01.000\"}",
      "{\"id\":2,\"name\":\"b \\\"q\\\"\",\"ts\":\"2024-01-01 00:00:02.500\"}",
      "{\"id\":3,\"name\":null,\"ts\":\"2024-01-01 00:00:03.000\"}"};
  produce_values(in, values, 3);
  char tmpl[2048];
  snprintf(tmpl, sizeof tmpl,
           "CREATE TABLE t (id BIGINT, name STRING, ts TIMESTAMP(3)) WITH ('connector' = "
           "'kafka', 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT', 'format' = "
           "'json', 'scan.bounded.mode' = 'latest-offset');\n"
           "CREATE TABLE o1 (id BIGINT, name STRING, ts TIMESTAMP(3), kts TIMESTAMP_LTZ(3) METADATA"
           " FROM 'timestamp', hdr MAP<STRING, BYTES> METADATA FROM 'headers') WITH ('connector' = "
           "'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = 'BOOT', 'format' = "
           "'json', 'key.format' = 'json', 'key.fields' = 'id');\n"
           "CREATE TABLE o2 (id BIGINT, name STRING) WITH ('connector' = 'kafka', 'topic' = "
           "'%s', 'properties.bootstrap.servers' = 'BOOT', 'format' = 'csv', 'key.format' = "
           "'raw', 'key.fields' = 'name', 'value.fields-include' = 'EXCEPT_KEY');\n"
           "EXECUTE STATEMENT SET BEGIN\n"
           "INSERT INTO o1 SELECT id, name, ts, TO_TIMESTAMP_LTZ(1700000000000 + id, 3),"
           " MAP['src', CAST('dipper' AS BYTES)] FROM t;\n"
           "INSERT INTO o2 SELECT id * 10, name FROM t;\n"
           "END;",
           out_json, out_csv);
  dipper *db = open_db();
  char *sql = sql_of(tmpl, in);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  int n = 0;
  int rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(n, 2);
  for (int i = 0; rc == DIPPER_OK && i < n; i++) run_to_end(db, qs[i]);
  if (qs) dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
  /* the metadata columns are the message's timestamp and headers, not value fields */
  CHECK_STR(h_consume_all(out_json, 3, true, ""),
            "{\"id\":1}\t{\"id\":1,\"name\":\"a\",\"ts\":\"2024-01-01 00:00:01.000\"}"
            "\t1700000000001\tdipper\n"
            "{\"id\":2}\t{\"id\":2,\"name\":\"b \\\"q\\\"\",\"ts\":\"2024-01-01 00:00:02.500\"}"
            "\t1700000000002\tdipper\n"
            "{\"id\":3}\t{\"id\":3,\"name\":null,\"ts\":\"2024-01-01 00:00:03.000\"}"
            "\t1700000000003\tdipper\n");
  CHECK_STR(h_consume_all(out_csv, 3, false, ""), "a\t10\n"
                                     "b \"q\"\t20\n"
                                     "\t30\n");
}

/* The first batch's error of a one-statement program writing `o`. */
static int first_step(const char *tmpl, const char *topic, char *msg, size_t cap) {
  dipper *db = open_db();
  char *sql = sql_of(tmpl, topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  int n = 0;
  int rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  int finished = 0;
  const char *m = dipper_errmsg(db);
  if (rc == DIPPER_OK && n == 1) rc = step(db, qs[0], &finished, &m);
  snprintf(msg, cap, "%s", m);
  if (qs) dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
  return rc;
}

/* Exactly-once needs a transactional id, and batch ids that carry over
** restarts (a checkpoint folder): without either it is refused. */
TEST(sink_exactly_once_needs_a_prefix_and_a_checkpoint) {
  char topic[160], msg[1024];
  topic_name(topic, sizeof topic, "eos");
  int rc = first_step("CREATE TABLE o (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'TOPIC',"
                      " 'properties.bootstrap.servers' = 'BOOT', 'format' = 'json',"
                      " 'sink.delivery-guarantee' = 'exactly-once');\n"
                      "INSERT INTO o VALUES (1);",
                      topic, msg, sizeof msg);
  CHECK_EQ(rc, DIPPER_OPTION);
  CHECK_CONTAINS(msg, "'sink.transactional-id-prefix'");
  rc = first_step("CREATE TABLE o (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'TOPIC',"
                  " 'properties.bootstrap.servers' = 'BOOT', 'format' = 'json',"
                  " 'sink.delivery-guarantee' = 'exactly-once',"
                  " 'sink.transactional-id-prefix' = 'dipper-test-');\n"
                  "INSERT INTO o VALUES (1);",
                  topic, msg, sizeof msg);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK_CONTAINS(msg, "needs a checkpoint folder");
  CHECK_CONTAINS(msg, "'sink.delivery-guarantee' = 'at-least-once'");
}

/* ---- the example of the README ---- */

/* Sort the lines of text in place. */
static const char *sorted_lines(const char *text) {
  static char out[8192];
  char copy[8192];
  char *lines[128];
  int n = 0;
  snprintf(copy, sizeof copy, "%s", text);
  for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l && n < 128;
       l = strtok_r(NULL, "\n", &save))
    lines[n++] = l;
  qsort(lines, (size_t)n, sizeof lines[0], cmp_line);
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < n; i++) len += (size_t)snprintf(out + len, sizeof out - len, "%s\n", lines[i]);
  return out;
}

/* Replace every `from` in the malloc'd string s by `to`. */
static char *replace_all(char *s, const char *from, const char *to) {
  size_t nf = strlen(from), nt = strlen(to), count = 0;
  for (const char *p = strstr(s, from); p; p = strstr(p + nf, from)) count++;
  char *out = malloc(strlen(s) + count * nt + 1);
  size_t len = 0;
  const char *p = s;
  for (const char *q = strstr(p, from); q; p = q + nf, q = strstr(p, from)) {
    memcpy(out + len, p, (size_t)(q - p));
    len += (size_t)(q - p);
    memcpy(out + len, to, nt);
    len += nt;
  }
  strcpy(out + len, p);
  free(s);
  return out;
}

TEST(examples_payments_sql_runs) {
  FILE *f = fopen(DIPPER_SOURCE_DIR "/examples/payments.sql", "r");
  CHECK(f != NULL);
  if (!f) return;
  char *sql = calloc(1, 16384);
  size_t n = fread(sql, 1, 16383, f);
  fclose(f);
  sql[n] = '\0';
  char in[160], out[160], opt[256];
  topic_name(in, sizeof in, "payment_msg");
  topic_name(out, sizeof out, "payments-sink");
  create_topic(in, 2);
  create_topic(out, 1);
  snprintf(opt, sizeof opt, "'topic' = '%s'", in);
  sql = replace_all(sql, "'topic' = 'payment_msg'", opt);
  snprintf(opt, sizeof opt, "'topic' = '%s'", out);
  sql = replace_all(sql, "'topic' = 'sink'", opt);
  sql = replace_all(sql, "127.0.0.1:9092", h_bootstrap);
  /* A checkpoint folder of this run's own: the example's fixed one would
  ** hold an earlier run's checkpoint (other topics, maybe another build),
  ** which this run would resume from or refuse. */
  char ck[200];
  snprintf(ck, sizeof ck, "'/tmp/dipper-kafka-test-%s-checkpoints'", h_run_tag);
  sql = replace_all(sql, "'/tmp/dipper/payments-checkpoints'", ck);
  /* the same events as the README's walk-through: 00:01:40 moves the
  ** watermark to 00:01:30, which closes the windows ending by then */
  rec rs[] = {{0, 0, NULL,
               "{\"createTime\":\"2024-01-01 00:00:05.000\",\"orderId\":1,\"payAmount\":10.5,"
               "\"payPlatform\":0,\"provinceId\":1}",
               NULL, NULL},
              {1, 0, NULL,
               "{\"createTime\":\"2024-01-01 00:00:20.000\",\"orderId\":2,\"payAmount\":2.0,"
               "\"payPlatform\":1,\"provinceId\":1}",
               NULL, NULL},
              {0, 0, NULL,
               "{\"createTime\":\"2024-01-01 00:01:40.000\",\"orderId\":3,\"payAmount\":1.0,"
               "\"payPlatform\":1,\"provinceId\":2}",
               NULL, NULL}};
  h_produce(in, rs, 3);
  dipper *db = open_db();
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    int finished = 0;
    const char *msg;
    for (int i = 0; i < 3; i++) {
      int rc = step(db, q, &finished, &msg);
      if (rc) fprintf(stderr, "step: %s\n", msg);
      CHECK_EQ(rc, DIPPER_OK);
    }
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
  CHECK_STR(sorted_lines(h_consume_all(out, 2, false, "")),
            "\t{\"province_id\":1,\"window_start\":\"2023-12-31 23:59:30.000\","
            "\"window_end\":\"2024-01-01 00:00:30.000\",\"pay_amount\":12.5}\n"
            "\t{\"province_id\":1,\"window_start\":\"2024-01-01 00:00:00.000\","
            "\"window_end\":\"2024-01-01 00:01:00.000\",\"pay_amount\":12.5}\n");
  char rm[260];
  snprintf(rm, sizeof rm, "rm -rf /tmp/dipper-kafka-test-%s-checkpoints", h_run_tag);
  CHECK_EQ(system(rm), 0);
}

/* ---- format avro ---- */

/* Binary records: keys[i] NULL = no key. */
static void produce_bin(const char *topic, int n, const dp_buf *keys, const dp_buf *values) {
  rd_kafka_t *rk = h_kafka_client(RD_KAFKA_PRODUCER, NULL, false);
  CHECK(rk != NULL);
  if (!rk) return;
  for (int i = 0; i < n; i++) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(values[i].data, values[i].len),
        RD_KAFKA_V_KEY(keys[i].data, keys[i].len), RD_KAFKA_V_END);
    CHECK_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  CHECK_EQ(rd_kafka_flush(rk, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(rk);
}

static dp_schema *test_schema(dp_arena *a, int n, const char *const *names,
                              const dp_type *const *types) {
  dp_schema *s = dp_schema_new(a, n);
  for (int i = 0; i < n; i++) {
    s->cols[i].name = names[i];
    s->cols[i].type = types[i];
  }
  return s;
}

TEST(avro_values_and_keys_are_read) {
  char topic[160];
  topic_name(topic, sizeof topic, "avro-in");
  create_topic(topic, 1);
  dp_arena *a = dp_arena_new(0);
  /* the value: every column but the key and the metadata, in table order */
  const char *vnames[] = {"uid", "name", "amount", "ts", "tags"};
  const dp_type *vtypes[] = {dp_type_with_nullability(a, dp_type_of(DP_T_BIGINT), true),
                             dp_type_of(DP_T_STRING), dp_type_decimal(a, 10, 2),
                             dp_type_timestamp(a, DP_T_TIMESTAMP, 3),
                             dp_type_array(a, dp_type_of(DP_T_STRING))};
  dp_schema *vs = test_schema(a, 5, vnames, vtypes);
  const char *knames[] = {"id"};
  const dp_type *ktypes[] = {dp_type_of(DP_T_BIGINT)};
  dp_schema *ks = test_schema(a, 1, knames, ktypes);
  dp_batch *v = dp_batch_new(vs, 0), *k = dp_batch_new(ks, 0);
  /* row 0: key 7: 1, "a", 12.34, 2024-01-01 00:00:01, ["x", "y"] */
  dp_vector_append_i64(k->cols[0], 7);
  dp_vector_append_i64(v->cols[0], 1);
  dp_vector_append_str(v->cols[1], "a", 1);
  dp_vector_append_dec(v->cols[2], 1234);
  dp_vector_append_i64(v->cols[3], INT64_C(1704067201000000));
  dp_vector_append_str(v->cols[4]->children[0], "x", 1);
  dp_vector_append_str(v->cols[4]->children[0], "y", 1);
  dp_vector_append_list(v->cols[4]);
  /* row 1: no key: 2, NULL, NULL, NULL, NULL */
  dp_vector_append_null(k->cols[0]);
  dp_vector_append_i64(v->cols[0], 2);
  for (int c = 1; c < 5; c++) dp_vector_append_null(v->cols[c]);
  /* row 2: key 9: -3, "\u00fc", -0.01, 1969-12-31 23:59:59.999, [] */
  dp_vector_append_i64(k->cols[0], 9);
  dp_vector_append_i64(v->cols[0], -3);
  dp_vector_append_str(v->cols[1], "\xc3\xbc", 2);
  dp_vector_append_dec(v->cols[2], -1);
  dp_vector_append_i64(v->cols[3], -1000);
  dp_vector_append_list(v->cols[4]);
  dp_batch_sync(v);
  dp_batch_sync(k);
  dp_buf keys[5] = {DP_BUF_INIT, DP_BUF_INIT, DP_BUF_INIT, DP_BUF_INIT, DP_BUF_INIT};
  dp_buf vals[5] = {DP_BUF_INIT, DP_BUF_INIT, DP_BUF_INIT, DP_BUF_INIT, DP_BUF_INIT};
  /* messages: row 0, row 1 (no key), a value cut short, a bad key, row 2 */
  CHECK_EQ(dp_avro_encode_row(k, 0, NULL, &keys[0]), DIPPER_OK);
  CHECK_EQ(dp_avro_encode_row(v, 0, NULL, &vals[0]), DIPPER_OK);
  CHECK_EQ(dp_avro_encode_row(v, 1, NULL, &vals[1]), DIPPER_OK);
  CHECK_EQ(dp_avro_encode_row(k, 2, NULL, &keys[2]), DIPPER_OK);
  CHECK_EQ(dp_avro_encode_row(v, 0, NULL, &vals[2]), DIPPER_OK);
  vals[2].len -= 3;
  dp_buf_put(&keys[3], "\x04", 1); /* union branch 2 */
  CHECK_EQ(dp_avro_encode_row(v, 2, NULL, &vals[3]), DIPPER_OK);
  CHECK_EQ(dp_avro_encode_row(k, 2, NULL, &keys[4]), DIPPER_OK);
  CHECK_EQ(dp_avro_encode_row(v, 2, NULL, &vals[4]), DIPPER_OK);
  produce_bin(topic, 5, keys, vals);
  for (int i = 0; i < 5; i++) {
    dp_buf_free(&keys[i]);
    dp_buf_free(&vals[i]);
  }
  dp_batch_free(v);
  dp_batch_free(k);
  dp_arena_free(a);

  dipper *db = open_db();
  char *sql = sql_of(
      "CREATE TABLE t (k_id BIGINT, off BIGINT METADATA FROM 'offset' VIRTUAL, uid BIGINT NOT "
      "NULL, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<STRING>) WITH ("
      "'connector' = 'kafka', 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT',"
      " 'format' = 'avro', 'key.format' = 'avro', 'key.fields' = 'k_id',"
      " 'key.fields-prefix' = 'k_', 'value.fields-include' = 'EXCEPT_KEY',"
      " 'scan.bounded.mode' = 'latest-offset', 'dipper.bad-records' = 'skip');\n"
      "CREATE TABLE out_t (k BIGINT, off BIGINT, uid BIGINT, name STRING, amount STRING,"
      " ts TIMESTAMP(3), tag1 STRING, n INT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT k_id, off, uid, name, CAST(amount AS STRING), ts, tags[1],"
      " CARDINALITY(tags) FROM t;",
      topic);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    run_to_end(db, q);
    CHECK_STR(fetch(db, "out_t"), "7|0|1|a|12.34|1704067201000000|x|2\n"
                                  "9|4|-3|\xc3\xbc|-0.01|-1000|NULL|0\n"
                                  "NULL|1|2|NULL|NULL|NULL|NULL|NULL\n");
    dipper_progress pr = {sizeof pr};
    CHECK_EQ(dipper_query_progress(q, &pr), DIPPER_OK);
    CHECK_EQ(pr.bad_records_skipped, 2);
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);

  /* the same topic under 'fail': the cut-short value is named with its offset */
  db = open_db();
  sql = sql_of("CREATE TABLE t (uid BIGINT NOT NULL, name STRING, amount DECIMAL(10, 2),"
               " ts TIMESTAMP(3), tags ARRAY<STRING>) WITH ('connector' = 'kafka',"
               " 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT', 'format' = 'avro',"
               " 'scan.bounded.mode' = 'latest-offset');\n"
               "CREATE TABLE out_t (uid BIGINT) WITH ('connector' = 'memory');\n"
               "INSERT INTO out_t SELECT uid FROM t;",
               topic);
  prog = compile(db, sql);
  q = prog ? start(db, prog, &qs) : NULL;
  if (q) {
    int finished = 0;
    const char *msg;
    CHECK_EQ(step(db, q, &finished, &msg), DIPPER_DATA);
    CHECK_CONTAINS(msg, "partition 0 offset 2 (byte ");
    CHECK_CONTAINS(msg, "field `tags");
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
}

/* Every message of partition 0 of a topic, key and value as bytes. */
static int consume_bin(const char *topic, int expect, dp_buf *keys, dp_buf *vals) {
  rd_kafka_t *rk = h_kafka_client(RD_KAFKA_CONSUMER, "dipper-test-reader", false);
  CHECK(rk != NULL);
  if (!rk) return 0;
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(l, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, l);
  rd_kafka_topic_partition_list_destroy(l);
  int got = 0;
  for (int polls = 0; got < expect && polls < 200; polls++) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (!m->err) {
      keys[got].len = vals[got].len = 0;
      dp_buf_put(&keys[got], m->key ? m->key : "", m->key_len);
      dp_buf_put(&vals[got], m->payload ? m->payload : "", m->len);
      got++;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return got;
}

TEST(avro_sink_writes_datums_of_the_table_schema) {
  char in[160], out[160];
  topic_name(in, sizeof in, "avro-sink-in");
  topic_name(out, sizeof out, "avro-sink-out");
  create_topic(in, 1);
  create_topic(out, 1);
  static const char *const values[] = {
      "{\"id\":1,\"name\":\"a\",\"price\":\"1.50\",\"ts\":\"2024-01-01 00:00:01.000\"}",
      "{\"id\":2,\"name\":null,\"price\":null,\"ts\":null}",
      "{\"id\":3,\"name\":\"c\",\"price\":\"-99.99\",\"ts\":\"1969-12-31 23:59:59.999\"}"};
  produce_values(in, values, 3);
  char tmpl[2048];
  snprintf(tmpl, sizeof tmpl,
           "CREATE TABLE t (id BIGINT, name STRING, price DECIMAL(6, 2), ts TIMESTAMP(3)) WITH ("
           "'connector' = 'kafka', 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT',"
           " 'format' = 'json', 'scan.bounded.mode' = 'latest-offset');\n"
           "CREATE TABLE o (id BIGINT, name STRING, price DECIMAL(6, 2), ts TIMESTAMP(3),"
           " tags ARRAY<BIGINT>, r ROW<a INT, b STRING>, flag BOOLEAN NOT NULL) WITH ("
           "'connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = 'BOOT',"
           " 'format' = 'avro', 'key.format' = 'avro', 'key.fields' = 'id');\n"
           "INSERT INTO o SELECT id, name, price, ts, ARRAY[id, id * 10],"
           " CAST(ROW(CAST(id AS INT), name) AS ROW<a INT, b STRING>), id > 1 FROM t;",
           out);
  dipper *db = open_db();
  char *sql = sql_of(tmpl, in);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  if (q) run_to_end(db, q);
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
  dp_buf keys[3] = {DP_BUF_INIT, DP_BUF_INIT, DP_BUF_INIT};
  dp_buf vals[3] = {DP_BUF_INIT, DP_BUF_INIT, DP_BUF_INIT};
  CHECK_EQ(consume_bin(out, 3, keys, vals), 3);
  /* decode them with the schema the table's columns give */
  dp_arena *a = dp_arena_new(0);
  dp_field rf[2] = {{"a", dp_type_of(DP_T_INT)}, {"b", dp_type_of(DP_T_STRING)}};
  const char *names[] = {"id", "name", "price", "ts", "tags", "r", "flag"};
  const dp_type *types[] = {dp_type_of(DP_T_BIGINT),
                            dp_type_of(DP_T_STRING),
                            dp_type_decimal(a, 6, 2),
                            dp_type_timestamp(a, DP_T_TIMESTAMP, 3),
                            dp_type_array(a, dp_type_of(DP_T_BIGINT)),
                            dp_type_row(a, 2, rf),
                            dp_type_with_nullability(a, dp_type_of(DP_T_BOOLEAN), true)};
  dp_schema *s = test_schema(a, 7, names, types);
  dp_buf sch = DP_BUF_INIT;
  CHECK_EQ(dp_avro_schema_json(s, NULL, &sch, NULL, NULL, 0), DIPPER_OK);
  CHECK_CONTAINS(dp_buf_cstr(&sch), "{\"name\":\"flag\",\"type\":\"boolean\"}");
  dp_buf_free(&sch);
  dp_schema *kschema = test_schema(a, 1, names, types);
  dp_avro_decoder *vd = dp_avro_decoder_new(s, NULL), *kd = dp_avro_decoder_new(kschema, NULL);
  dp_batch *b = dp_batch_new(s, 0), *kb = dp_batch_new(kschema, 0);
  for (int i = 0; i < 3; i++) {
    dp_format_error err;
    CHECK_EQ(dp_avro_decode(vd, vals[i].data, vals[i].len, b, &err), DIPPER_OK);
    CHECK_EQ(dp_avro_decode(kd, keys[i].data, keys[i].len, kb, &err), DIPPER_OK);
    dp_buf_free(&keys[i]);
    dp_buf_free(&vals[i]);
  }
  dp_batch_sync(b);
  dp_batch_sync(kb);
  CHECK_EQ(b->nrows, 3);
  CHECK_EQ(kb->nrows, 3);
  dp_buf text = DP_BUF_INIT;
  for (int64_t r = 0; r < b->nrows && r < kb->nrows; r++) {
    dp_json_encode_row(kb, r, &text);
    dp_buf_putc(&text, '\t');
    dp_json_encode_row(b, r, &text);
    dp_buf_putc(&text, '\n');
  }
  CHECK_STR(dp_buf_cstr(&text),
            "{\"id\":1}\t{\"id\":1,\"name\":\"a\",\"price\":1.50,\"ts\":\"2024-01-01 "
            "00:00:01.000\",\"tags\":[1,10],\"r\":{\"a\":1,\"b\":\"a\"},\"flag\":false}\n"
            "{\"id\":2}\t{\"id\":2,\"name\":null,\"price\":null,\"ts\":null,\"tags\":[2,20],"
            "\"r\":{\"a\":2,\"b\":null},\"flag\":true}\n"
            "{\"id\":3}\t{\"id\":3,\"name\":\"c\",\"price\":-99.99,\"ts\":\"1969-12-31 "
            "23:59:59.999\",\"tags\":[3,30],\"r\":{\"a\":3,\"b\":\"c\"},\"flag\":true}\n");
  dp_buf_free(&text);
  dp_batch_free(b);
  dp_batch_free(kb);
  dp_avro_decoder_free(vd);
  dp_avro_decoder_free(kd);
  dp_arena_free(a);
}

/* upsert-kafka (connectors/upsert_kafka.c): an aggregation over an
** aggregation writes its changes keyed by the PRIMARY KEY; -U rows are left
** out, a -D is a tombstone (the key, a NULL value: printed empty here). */
TEST(upsert_kafka_writes_upserts_and_tombstones) {
  char out[160];
  topic_name(out, sizeof out, "upsert");
  create_topic(out, 1);
  char tmpl[1024];
  snprintf(tmpl, sizeof tmpl,
           "CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'memory');\n"
           "CREATE TABLE o (c BIGINT, n BIGINT, PRIMARY KEY (c) NOT ENFORCED) WITH ("
           "'connector' = 'upsert-kafka', 'topic' = '%s', 'properties.bootstrap.servers' = "
           "'BOOT', 'key.format' = 'json', 'value.format' = 'json');\n"
           "SET 'dipper.output-mode' = 'update';\n"
           "INSERT INTO o SELECT c, COUNT(*) FROM (SELECT k, COUNT(*) AS c FROM src GROUP BY k)"
           " GROUP BY c;",
           out);
  dipper *db = open_db();
  char *sql = sql_of(tmpl, out);
  dipper_program *prog = compile(db, sql);
  dipper_query **qs = NULL;
  dipper_query *q = prog ? start(db, prog, &qs) : NULL;
  static const char *const pushes[] = {
      "{\"k\": \"a\", \"v\": 1}\n{\"k\": \"a\", \"v\": 2}\n{\"k\": \"b\", \"v\": 3}\n",
      /* b: 1 -> 2: the count-1 group goes (a tombstone), the count-2 one has two keys */
      "{\"k\": \"b\", \"v\": 4}\n"};
  for (int i = 0; q && i < 2; i++) {
    CHECK_EQ(dipper_memory_push_json(db, "src", pushes[i], strlen(pushes[i])), DIPPER_OK);
    int finished = 0;
    const char *msg = NULL;
    int rc = step(db, q, &finished, &msg);
    if (rc) fprintf(stderr, "step: %s\n", msg);
    CHECK_EQ(rc, DIPPER_OK);
  }
  if (qs) dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
  CHECK_STR(h_consume_all(out, 4, false, ""), "{\"c\":2}\t{\"c\":2,\"n\":1}\n"
                                         "{\"c\":1}\t{\"c\":1,\"n\":1}\n"
                                         "{\"c\":1}\t\n"
                                         "{\"c\":2}\t{\"c\":2,\"n\":2}\n");
}

int main(void) {
  if (!h_kafka_start("kafka_test")) return 1;
  return RUN_TESTS();
}
