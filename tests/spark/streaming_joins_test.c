/*
** streaming_joins_test.c — joins on a real Spark (127.0.0.1:15002): every
** kind Spark's streaming join matrix allows, from watched directories of
** JSON files (stream-stream) and a Kafka topic (stream-static) into Spark's
** memory sink, through dipper's compile pipeline, the Spark checks and the
** streaming backend.
**
** The queries of one test run side by side (each its own query, all reading
** the same inputs), so that a test costs one query's time: rows are written
** in phases, and after each phase every query processes what is
** available.  Phase 1 holds the rows that join or not; phase 2 moves both
** streams' event time (key z) far ahead, so the watermark passes every time
** range of phase 1 and the outer rows come out: in the batch with no data
** that Spark runs when the watermark moved (process-all-available returns
** only after it).  The rows are read back without key z, whose rows may or
** may not be out yet, and compared exactly.
**
** The session runs with one shuffle partition: half the state stores of the
** test server's two, and the same answers, in about half the time.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/dipper_int.h"
#include "spark/streaming.h"
#include "spark/translate_stream.h"
#include "test.h"
#include "spark/kafka_util.c" /* one source file per test target: the helpers come along */

/* A row of key k, value v at 2024-01-01 <time>, as the left (lv, lts) or
** right (rv, rts) stream writes it. */
#define L(k, v, t) "{\"k\":\"" k "\",\"lv\":" #v ",\"lts\":\"2024-01-01 " t "\"}\n"
#define R(k, v, t) "{\"k\":\"" k "\",\"rv\":" #v ",\"rts\":\"2024-01-01 " t "\"}\n"

/* Phase 1.  The ON clause of the stream-stream joins: same key and
** rts BETWEEN lts AND lts + 1 minute.  a matches (00:40 is within
** [00:10, 01:10]); b's right row is 1 min 40 s after the left one: no match;
** c has no right row, d no left row. */
static const char L1[] = L("a", 1, "00:00:10") L("b", 2, "00:00:20") L("c", 3, "00:00:30");
static const char R1[] = R("a", 10, "00:00:40") R("b", 20, "00:02:00") R("d", 40, "00:00:50");
/* Phase 2: time moves on both sides. */
static const char L2[] = L("z", 0, "00:10:00");
static const char R2[] = R("z", 0, "00:10:00");

#define TABLES \
  "SET 'execution.checkpointing.dir' = '%s/ck';\n" \
  "CREATE TABLE l (k STRING, lv INT, lts TIMESTAMP(3),\n" \
  "  WATERMARK FOR lts AS lts - INTERVAL '10' SECOND)\n" \
  "WITH ('connector' = 'filesystem', 'path' = '%s/l', 'format' = 'json',\n" \
  "  'source.monitor-interval' = '1 us');\n" \
  "CREATE TABLE r (k STRING, rv INT, rts TIMESTAMP(3),\n" \
  "  WATERMARK FOR rts AS rts - INTERVAL '10' SECOND)\n" \
  "WITH ('connector' = 'filesystem', 'path' = '%s/r', 'format' = 'json',\n" \
  "  'source.monitor-interval' = '1 us');\n" \
  "CREATE VIEW dim AS SELECT * FROM (VALUES ('a', 'one'), ('b', 'two'), ('d', 'four'))\n" \
  "  AS t(k, name);\n"

/* The same tables with the streams on Kafka: topics <tag>_l and <tag>_r. */
#define KAFKA_TABLES \
  "SET 'execution.checkpointing.dir' = '%s/ck';\n" \
  "CREATE TABLE l (k STRING, lv INT, lts TIMESTAMP(3),\n" \
  "  WATERMARK FOR lts AS lts - INTERVAL '10' SECOND)\n" \
  "WITH ('connector' = 'kafka', 'topic' = '%s_l', 'format' = 'json',\n" \
  "  'properties.bootstrap.servers' = '" ST_BROKERS "', 'scan.startup.mode' = 'earliest-offset');\n" \
  "CREATE TABLE r (k STRING, rv INT, rts TIMESTAMP(3),\n" \
  "  WATERMARK FOR rts AS rts - INTERVAL '10' SECOND)\n" \
  "WITH ('connector' = 'kafka', 'topic' = '%s_r', 'format' = 'json',\n" \
  "  'properties.bootstrap.servers' = '" ST_BROKERS "', 'scan.startup.mode' = 'earliest-offset');\n" \
  "CREATE VIEW dim AS SELECT * FROM (VALUES ('a', 'one'), ('b', 'two'), ('d', 'four'))\n" \
  "  AS t(k, name);\n"

/* Write one phase's rows of a side: a file in directory `side`, or (kafka)
** one record per line to topic <tag>_<side>. */
static int feed(const st_env *e, bool kafka, const char *side, int phase, const char *rows) {
  if (!kafka) {
    char name[24];
    snprintf(name, sizeof name, "%d.json", phase);
    return st_write_file(e, side, name, rows);
  }
  char topic[128], err[512], *copy = strdup(rows);
  const char *lines[16];
  int n = 0;
  for (char *ln = copy ? strtok(copy, "\n") : NULL; ln && n < 16; ln = strtok(NULL, "\n")) lines[n++] = ln;
  snprintf(topic, sizeof topic, "%s_%s", e->tag, side);
  int rc = copy ? dp_tk_produce(ST_BROKERS, topic, n, lines, err, sizeof err) : -1;
  if (rc) fprintf(stderr, "produce to %s: %s\n", topic, copy ? err : "out of memory");
  free(copy);
  return rc;
}

/* One query of a test: its sink table (memory, named `name`), the INSERT,
** and the rows it must hold at the end (JSON, sorted; NULLs left out). */
typedef struct jcase {
  const char *name;
  const char *body;  /* CREATE TABLE <name> ...; INSERT INTO <name> ... */
  const char *where; /* which rows to compare (Spark SQL) */
  const char *const *want;
  int nwant;
} jcase;

#define MAXQ 8

/* Start every case's query, feed the phases, stop them, compare each sink. */
static void run_cases(const char *what, bool kafka, const jcase *cases, int n) {
  time_t t0 = time(NULL);
  st_env e;
  CHECK_EQ(st_open(&e, what), 0);
  CHECK_EQ(st_mkdir(&e, "l"), 0);
  CHECK_EQ(st_mkdir(&e, "r"), 0);
  for (int i = 0; kafka && i < 2; i++) {
    char topic[128], err[512];
    snprintf(topic, sizeof topic, "%s_%s", e.tag, i ? "r" : "l");
    int rc = dp_tk_create_topic(ST_BROKERS, topic, 1, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK_EQ(rc, 0);
  }
  {
    const char *k = "spark.sql.shuffle.partitions", *v = "1";
    dp_sc_error err;
    dp_sc_error_init(&err);
    CHECK_EQ(dp_sc_config_set(e.s, 1, &k, &v, &err), 0);
    dp_sc_error_free(&err);
  }
  dp_sq q[MAXQ];
  memset(q, 0, sizeof q);
  int ok = 1;
  for (int i = 0; i < n && i < MAXQ; i++) {
    char sql[8192];
    if (kafka)
      snprintf(sql, sizeof sql, KAFKA_TABLES "%s", e.dir, e.tag, e.tag, cases[i].body);
    else
      snprintf(sql, sizeof sql, TABLES "%s", e.dir, e.dir, e.dir, cases[i].body);
    int rc = st_start(&e, sql, &q[i]);
    if (rc) fprintf(stderr, "%s: the query did not start\n", cases[i].name);
    CHECK_EQ(rc, 0);
    ok &= rc == 0;
  }
  static const char *const lf[] = {L1, L2}, *const rf[] = {R1, R2};
  fprintf(stderr, "%s: started at %ld s\n", what, (long)(time(NULL) - t0));
  for (int ph = 0; ph < 2 && ok; ph++) {
    CHECK_EQ(feed(&e, kafka, "l", ph + 1, lf[ph]), 0);
    CHECK_EQ(feed(&e, kafka, "r", ph + 1, rf[ph]), 0);
    for (int i = 0; i < n && ok; i++) {
      int rc = st_drain(&e, &q[i]);
      if (rc) fprintf(stderr, "%s: phase %d failed\n", cases[i].name, ph + 1);
      CHECK_EQ(rc, 0);
      ok &= rc == 0;
    }
    fprintf(stderr, "%s: phase %d done at %ld s\n", what, ph + 1, (long)(time(NULL) - t0));
  }
  for (int i = 0; i < n && i < MAXQ; i++) {
    if (q[i].id[0]) CHECK_EQ(st_finish(&e, &q[i], 0), 0);
    dp_sq_free(&q[i]);
  }
  for (int i = 0; i < n && ok; i++) {
    char **rows = NULL;
    int nr = st_table_json(&e, cases[i].name, cases[i].where, &rows);
    int bad = st_expect(rows, nr, cases[i].want, cases[i].nwant);
    if (bad) fprintf(stderr, "  (in %s)\n", cases[i].name);
    CHECK_EQ(bad, 0);
    for (int k = 0; k < nr; k++) free(rows[k]);
    free(rows);
  }
  st_close(&e);
}

#define SINK(name) \
  "CREATE TABLE " name " (lk STRING, lv INT, rk STRING, rv INT) WITH ('connector' = 'memory');\n" \
  "INSERT INTO " name " SELECT l.k, lv, r.k, rv\n"
#define IN_RANGE " ON l.k = r.k AND rts BETWEEN lts AND lts + INTERVAL '1' MINUTE"
#define NOT_Z "coalesce(lk, rk) <> 'z'"

TEST(stream_stream_joins) {
  static const char *const inner[] = {"{\"lk\":\"a\",\"lv\":1,\"rk\":\"a\",\"rv\":10}"};
  /* The outer rows: emitted once the watermark passes the time range. */
  static const char *const left[] = {
      "{\"lk\":\"a\",\"lv\":1,\"rk\":\"a\",\"rv\":10}", "{\"lk\":\"b\",\"lv\":2}",
      "{\"lk\":\"c\",\"lv\":3}"};
  static const char *const right[] = {
      "{\"lk\":\"a\",\"lv\":1,\"rk\":\"a\",\"rv\":10}", "{\"rk\":\"b\",\"rv\":20}",
      "{\"rk\":\"d\",\"rv\":40}"};
  static const char *const full[] = {
      "{\"lk\":\"a\",\"lv\":1,\"rk\":\"a\",\"rv\":10}", "{\"lk\":\"b\",\"lv\":2}",
      "{\"lk\":\"c\",\"lv\":3}", "{\"rk\":\"b\",\"rv\":20}", "{\"rk\":\"d\",\"rv\":40}"};
  static const char *const semi[] = {"{\"k\":\"a\",\"lv\":1}"};
  const jcase cases[] = {
      {"j_inner", SINK("j_inner") "FROM l JOIN r" IN_RANGE, NOT_Z, inner, 1},
      {"j_left", SINK("j_left") "FROM l LEFT JOIN r" IN_RANGE, NOT_Z, left, 3},
      {"j_right", SINK("j_right") "FROM l RIGHT JOIN r" IN_RANGE, NOT_Z, right, 3},
      {"j_full", SINK("j_full") "FROM l FULL JOIN r" IN_RANGE, NOT_Z, full, 5},
      {"j_semi",
       "CREATE TABLE j_semi (k STRING, lv INT) WITH ('connector' = 'memory');\n"
       "INSERT INTO j_semi SELECT k, lv FROM l WHERE EXISTS (\n"
       "  SELECT 1 FROM r WHERE r.k = l.k AND rts BETWEEN lts AND lts + INTERVAL '1' MINUTE)",
       "k <> 'z'", semi, 1},
  };
  run_cases("joins_ss", false, cases, (int)(sizeof cases / sizeof cases[0]));
}

TEST(stream_static_joins) {
  /* A bounded view joined with a stream read from Kafka: rows come out in
     the batch that reads the stream's record, no watermark involved. */
  static const char *const inner[] = {"{\"k\":\"a\",\"lv\":1,\"name\":\"one\"}",
                                      "{\"k\":\"b\",\"lv\":2,\"name\":\"two\"}"};
  static const char *const left[] = {"{\"k\":\"a\",\"lv\":1,\"name\":\"one\"}",
                                     "{\"k\":\"b\",\"lv\":2,\"name\":\"two\"}",
                                     "{\"k\":\"c\",\"lv\":3}"};
  const jcase cases[] = {
      {"s_inner",
       "CREATE TABLE s_inner (k STRING, lv INT, name STRING) WITH ('connector' = 'memory');\n"
       "INSERT INTO s_inner SELECT l.k, lv, name FROM l JOIN dim ON l.k = dim.k",
       "k <> 'z'", inner, 2},
      {"s_left",
       "CREATE TABLE s_left (k STRING, lv INT, name STRING) WITH ('connector' = 'memory');\n"
       "INSERT INTO s_left SELECT l.k, lv, name FROM l LEFT JOIN dim ON l.k = dim.k",
       "k <> 'z'", left, 3},
  };
  run_cases("joins_static", true, cases, (int)(sizeof cases / sizeof cases[0]));
}

int main(void) { return RUN_TESTS(); }
