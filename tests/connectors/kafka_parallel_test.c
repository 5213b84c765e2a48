/*
** kafka_parallel_test.c — the kafka source's split (parallel execution:
** partition i to worker i mod N) against a real broker on loopback
** (scripts/kafka-local; the kafka_broker fixture of tests/CMakeLists.txt).
**
** A topic of 3 partitions (more records in some than in others), read
** bounded (latest-offset) in many micro-batches on 1, 2 and 3 workers into
** a memory table: every partition's records in the same order as on one
** thread (the rows compared per partition after a stable sort), an
** aggregation's final rows per key the same, and a topic of 1 partition on
** 3 workers (two of them read nothing) the same rows in the same order.  In
** batch mode a kafka table runs on one thread, with a note saying why.
*/
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "dipper.h"
#include "exec/par_rows.h"
#include "test.h"

static char bootstrap[64];
static char run_tag[64];

static rd_kafka_t *producer(void) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof err);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "rd_kafka_new: %s\n", err);
    rd_kafka_conf_destroy(conf);
  }
  return rk;
}

static void create_topic(const char *name, int partitions) {
  rd_kafka_t *rk = producer();
  CHECK(rk != NULL);
  if (!rk) return;
  char err[512];
  rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(name, partitions, 1, err, sizeof err);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
  rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
  CHECK(ev != NULL);
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  bool seen = false;
  for (int tries = 0; tries < 100 && !seen; tries++) {
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, name, NULL);
    const struct rd_kafka_metadata *md = NULL;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      seen = md->topic_cnt == 1 && !md->topics[0].err && md->topics[0].partition_cnt == partitions;
      for (int i = 0; seen && i < md->topics[0].partition_cnt; i++)
        seen = md->topics[0].partitions[i].leader >= 0;
      rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(rkt);
    if (!seen) nanosleep(&(struct timespec){0, 100000000}, NULL);
  }
  CHECK(seen);
  rd_kafka_destroy(rk);
}

/* n records {"k": i % 11, "v": i}: record i to partition (i * i) % parts, so
** that the partitions hold different counts. */
static void produce(const char *topic, int n, int parts) {
  rd_kafka_t *rk = producer();
  CHECK(rk != NULL);
  if (!rk) return;
  for (int i = 0; i < n; i++) {
    char v[64];
    snprintf(v, sizeof v, "{\"k\":%d,\"v\":%d}", i % 11, i);
    CHECK_EQ(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic),
                               RD_KAFKA_V_PARTITION((int32_t)((i * i) % parts)),
                               RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                               RD_KAFKA_V_VALUE(v, strlen(v)), RD_KAFKA_V_END),
             RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  CHECK_EQ(rd_kafka_flush(rk, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(rk);
}

typedef struct notes {
  char last[1024];
  int count;
} notes;

static void on_log(void *user, int level, const char *message) {
  notes *n = user;
  if (level != DIPPER_LOG_NOTE || !strstr(message, "runs on one thread")) return;
  snprintf(n->last, sizeof n->last, "%s", message);
  n->count++;
}

/* `sql` over table src (the topic) on `workers`; the rows of out_t. */
static text run_on(int workers, const char *settings, const char *topic, const char *sql,
                   notes *log) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  memset(log, 0, sizeof *log);
  dipper_set_log(db, on_log, log);
  char *all = malloc(4096 + strlen(sql));
  CHECK(all != NULL);
  snprintf(all, 4096 + strlen(sql),
           "SET 'parallelism.default' = '%d';\nSET 'dipper.max-batch-rows' = '250';\n%s"
           "CREATE TABLE src (k INT, v INT, p INT METADATA FROM 'partition' VIRTUAL,"
           " o BIGINT METADATA FROM 'offset' VIRTUAL) WITH ('connector' = 'kafka',"
           " 'topic' = '%s', 'properties.bootstrap.servers' = '%s', 'format' = 'json',"
           " 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');\n%s",
           workers, settings, topic, bootstrap, sql);
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, all, (size_t)-1, "k.sql", &prog);
  if (rc) fprintf(stderr, "compile: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  rc = dipper_run(prog, NULL, NULL);
  if (rc) fprintf(stderr, "run on %d: %s\n", workers, dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  text t = fetch(db, "out_t");
  dipper_program_free(prog);
  dipper_close(db);
  free(all);
  return t;
}

static void check_same(const char *what, const text *one, const text *many, int workers) {
  if (one->len != many->len || memcmp(one->data, many->data, one->len) != 0) {
    fprintf(stderr, "%s: %d workers differ from one thread (%zu vs %zu bytes)\n", what, workers,
            many->len, one->len);
    CHECK(false);
  }
}

/* On 2 and 3 workers: the same lines per key (key_fields 0: in the same
** order), and the query on its workers (no note). */
static void same_as_one(const char *what, const char *topic, const char *sql, int key_fields,
                        bool finals, int64_t min_lines) {
  notes log;
  text one = run_on(1, "", topic, sql, &log);
  CHECK_EQ(log.count, 0);
  int64_t lines = 0;
  for (size_t i = 0; i < one.len; i++) lines += one.data[i] == '\n';
  if (lines < min_lines) fprintf(stderr, "%s: only %" PRId64 " rows\n", what, lines);
  CHECK(lines >= min_lines);
  text one_sorted = key_fields ? sort_keys(&one, key_fields, finals) : one;
  for (int workers = 2; workers <= 3; workers++) {
    text many = run_on(workers, "", topic, sql, &log);
    if (log.count) fprintf(stderr, "%s: %s\n", what, log.last);
    CHECK_EQ(log.count, 0);
    if (key_fields) {
      text sorted = sort_keys(&many, key_fields, finals);
      check_same(what, &one_sorted, &sorted, workers);
      free(sorted.data);
    } else {
      check_same(what, &one, &many, workers);
    }
    free(many.data);
  }
  if (key_fields) free(one_sorted.data);
  free(one.data);
}

TEST(partitions_split_among_workers) {
  char topic[128], single[128];
  snprintf(topic, sizeof topic, "dipper-par-%s-three", run_tag);
  snprintf(single, sizeof single, "dipper-par-%s-one", run_tag);
  create_topic(topic, 3);
  create_topic(single, 1);
  produce(topic, 3000, 3);
  produce(single, 700, 1);
  const char *q0 = "CREATE TABLE out_t (p INT, o BIGINT, k INT, v INT) WITH ('connector' = 'memory');\n"
                   "INSERT INTO out_t SELECT p, o, k, v FROM src WHERE MOD(v, 5) <> 2;\n";
  const char *agg = "CREATE TABLE out_t (k INT, n BIGINT, total BIGINT) WITH ('connector' = 'memory');\n"
                    "SET 'dipper.output-mode' = 'update';\n"
                    "INSERT INTO out_t SELECT k, COUNT(*), SUM(CAST(v AS BIGINT)) FROM src GROUP BY k;\n";
  same_as_one("per partition", topic, q0, 1, false, 2000);
  same_as_one("count per key", topic, agg, 1, true, 11);
  same_as_one("one partition", single, q0, 0, false, 500);
  /* batch mode: each split would plan to the broker's offsets of its own moment */
  notes log;
  text t = run_on(2, "SET 'execution.runtime-mode' = 'batch';\n", topic, q0, &log);
  CHECK_EQ(log.count, 1);
  CHECK_CONTAINS(log.last, "batch-mode query");
  free(t.data);
}

int main(void) {
  const char *port = getenv("DIPPER_KAFKA_PORT");
  snprintf(bootstrap, sizeof bootstrap, "127.0.0.1:%s", port && *port ? port : "9092");
  snprintf(run_tag, sizeof run_tag, "%ld-%ld", (long)getpid(), (long)time(NULL));
  rd_kafka_t *rk = producer();
  const struct rd_kafka_metadata *md = NULL;
  rd_kafka_resp_err_t err = rk ? rd_kafka_metadata(rk, 1, NULL, &md, 15000) : RD_KAFKA_RESP_ERR__FAIL;
  if (md) rd_kafka_metadata_destroy(md);
  if (rk) rd_kafka_destroy(rk);
  if (err) {
    fprintf(stderr, "kafka_parallel_test: FAILED: no Kafka broker answers on %s (%s); start one "
                    "with scripts/kafka-local start\n", bootstrap, rd_kafka_err2str(err));
    return 1;
  }
  return RUN_TESTS();
}
