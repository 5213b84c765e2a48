/*
** kafka_parallel_test.c — the kafka source split by partition among the
** workers (partition i to worker i mod N, 'parallelism.default') against a
** real broker on loopback (scripts/kafka-local; the kafka_broker fixture of
** tests/CMakeLists.txt).
**
** A topic of 4 partitions holding different counts of records, with events
** out of order and some of them late, read bounded (latest-offset) in many
** micro-batches: on 2 and 3 workers a TUMBLE window aggregation (whose late
** rows depend on the watermark batch for batch), a deduplication and a
** projection give the rows one thread gives (per partition in the same
** order); the group's committed offsets are every partition's end; a topic
** of 1 partition on 2 workers (one reads nothing) gives the same rows in the
** same order; in batch mode the split gives the same answer too.
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

static rd_kafka_t *client(rd_kafka_type_t type, const char *group) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof err);
  if (group) rd_kafka_conf_set(conf, "group.id", group, err, sizeof err);
  rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "rd_kafka_new: %s\n", err);
    rd_kafka_conf_destroy(conf);
  }
  return rk;
}

static void create_topic(const char *name, int partitions) {
  rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, NULL);
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

/* n records {"k", "d", "v", "ts"}: record i has d = i / 3 (the
** deduplication's key, whose three records go to one partition) and an
** event time 100 ms after the one before, except every 17th, 4 s earlier
** (late when the watermark, 2 s behind the largest, has passed it: in some
** batches, not in others).  Of 4 partitions, 0 and 2 get two shares of six
** and 1 and 3 one: read in step by count, 0 and 2 fall behind in event time,
** and on 2 workers they are worker 0's (on 3, partition 2 is worker 2's
** alone), so a watermark taken as the workers' minimum would be behind one
** thread's and let rows in that one thread drops as late.  Each partition's
** count is put in `ends`. */
static void produce(const char *topic, int n, int parts, int64_t *ends) {
  rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, NULL);
  CHECK(rk != NULL);
  if (!rk) return;
  for (int p = 0; p < parts; p++) ends[p] = 0;
  for (int i = 0; i < n; i++) {
    int64_t ms = (int64_t)i * 100 - (i % 17 == 0 ? 4000 : 0) + 10000;
    char v[160];
    snprintf(v, sizeof v,
             "{\"k\":%d,\"d\":%d,\"v\":%d,\"ts\":\"2024-01-01 %02d:%02d:%02d.%03d\"}", i % 13, i / 3,
             i, (int)(ms / 3600000), (int)(ms / 60000 % 60), (int)(ms / 1000 % 60),
             (int)(ms % 1000));
    static const int32_t of_six[6] = {0, 1, 2, 3, 0, 2};
    int32_t p = parts == 4 ? of_six[(i / 3) % 6] : (int32_t)((i / 3) % parts);
    ends[p]++;
    CHECK_EQ(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(p),
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
static text run_on(int workers, const char *settings, const char *topic, const char *table_opts,
                   const char *sql, notes *log) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  memset(log, 0, sizeof *log);
  dipper_set_log(db, on_log, log);
  size_t cap = 4096 + strlen(sql) + strlen(settings) + strlen(table_opts);
  char *all = malloc(cap);
  CHECK(all != NULL);
  snprintf(all, cap,
           "SET 'parallelism.default' = '%d';\nSET 'dipper.max-batch-rows' = '300';\n%s"
           "CREATE TABLE src (k INT, d INT, v INT, ts TIMESTAMP(3),"
           " p INT METADATA FROM 'partition' VIRTUAL, o BIGINT METADATA FROM 'offset' VIRTUAL,"
           " WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'kafka',"
           " 'topic' = '%s', 'properties.bootstrap.servers' = '%s', 'format' = 'json',%s"
           " 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');\n%s",
           workers, settings, topic, bootstrap, table_opts, sql);
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

static int64_t count_lines(const text *t) {
  int64_t n = 0;
  for (size_t i = 0; i < t->len; i++) n += t->data[i] == '\n';
  return n;
}

/* On 2 and 3 workers (no note: the query ran on them): the same lines as
** on one thread, compared after a stable sort by their first key_fields
** fields (0: as they are); finals: each key's last line only. */
static void same_as_one(const char *what, const char *settings, const char *topic,
                        const char *sql, int key_fields, bool finals, int64_t min_lines) {
  notes log;
  text one = run_on(1, settings, topic, "", sql, &log);
  CHECK_EQ(log.count, 0);
  int64_t lines = count_lines(&one);
  if (lines < min_lines) fprintf(stderr, "%s: only %" PRId64 " rows\n", what, lines);
  CHECK(lines >= min_lines);
  text one_sorted = key_fields ? sort_keys(&one, key_fields, finals) : one;
  for (int workers = 2; workers <= 3; workers++) {
    text many = run_on(workers, settings, topic, "", sql, &log);
    if (log.count) fprintf(stderr, "%s: %s\n", what, log.last);
    CHECK_EQ(log.count, 0);
    text sorted = key_fields ? sort_keys(&many, key_fields, finals) : many;
    if (sorted.len != one_sorted.len || memcmp(sorted.data, one_sorted.data, sorted.len) != 0) {
      fprintf(stderr, "%s: %d workers differ from one thread (%" PRId64 " vs %" PRId64 " rows)\n",
              what, workers, count_lines(&sorted), count_lines(&one_sorted));
      CHECK(false);
    }
    if (key_fields) free(sorted.data);
    free(many.data);
  }
  fprintf(stderr, "%s: %" PRId64 " rows, the same on 1, 2 and 3 workers\n", what, lines);
  if (key_fields) free(one_sorted.data);
  free(one.data);
}

#define NREC 6000

static char topic4[128], topic1[128];
static int64_t ends4[4], ends1[1];

static void make_topics(void) {
  if (topic4[0]) return;
  snprintf(topic4, sizeof topic4, "dipper-par-%s-four", run_tag);
  snprintf(topic1, sizeof topic1, "dipper-par-%s-one", run_tag);
  create_topic(topic4, 4);
  create_topic(topic1, 1);
  produce(topic4, NREC, 4, ends4);
  produce(topic1, 1500, 1, ends1);
}

static const char *window_sql =
    "CREATE TABLE out_t (k INT, ws TIMESTAMP(3), s BIGINT, c BIGINT) WITH ('connector' = "
    "'memory');\n"
    "INSERT INTO out_t SELECT k, window_start, SUM(CAST(v AS BIGINT)), COUNT(*)\n"
    "FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND))\n"
    "GROUP BY k, window_start, window_end;\n";

TEST(window_aggregation_as_on_one_thread) {
  make_topics();
  /* the rows of a window come once each (append): compared whole */
  same_as_one("window", "", topic4, window_sql, 4, false, 500);
  /* late rows were dropped (else the test says nothing about the watermark) */
  notes log;
  text t = run_on(1, "", topic4, "", window_sql, &log);
  int64_t counted = 0;
  for (const char *p = t.data; (p = strchr(p, '\n')) != NULL; p++) {
    const char *bar = p;
    while (bar > t.data && bar[-1] != '|') bar--;
    counted += strtoll(bar, NULL, 10);
  }
  fprintf(stderr, "window: %" PRId64 " of %d records counted (the others late)\n", counted, NREC);
  CHECK(counted < NREC);
  CHECK(counted > NREC / 4);
  free(t.data);
}

TEST(deduplication_as_on_one_thread) {
  make_topics();
  const char *dedup = "CREATE TABLE out_t (d INT, v INT, k INT) WITH ('connector' = 'memory');\n"
                      "INSERT INTO out_t SELECT d, v, k FROM (\n"
                      "  SELECT *, ROW_NUMBER() OVER (PARTITION BY d ORDER BY ts ASC) AS rn FROM src)\n"
                      "WHERE rn = 1;\n";
  same_as_one("dedup", "", topic4, dedup, 1, false, NREC / 3);
}

TEST(partitions_keep_their_order) {
  make_topics();
  const char *q0 = "CREATE TABLE out_t (p INT, o BIGINT, k INT, v INT) WITH ('connector' = "
                   "'memory');\n"
                   "INSERT INTO out_t SELECT p, o, k, v FROM src WHERE MOD(v, 5) <> 2;\n";
  same_as_one("per partition", "", topic4, q0, 1, false, NREC / 2);
  /* one partition: worker 1 (and 2) read nothing, the order is the topic's */
  same_as_one("one partition", "", topic1, q0, 0, false, 1000);
  /* batch mode: each split plans by itself, to its partitions' bounds */
  same_as_one("batch mode", "SET 'execution.runtime-mode' = 'batch';\n", topic4, window_sql, 4,
              false, 500);
}

/* Each split commits its own partitions to the group: after a run on 2
** workers the group holds every partition's end. */
TEST(group_commit_per_split) {
  make_topics();
  char group[160], opts[256];
  snprintf(group, sizeof group, "dipper-par-%s-group", run_tag);
  snprintf(opts, sizeof opts, " 'properties.group.id' = '%s',", group);
  notes log;
  const char *q = "CREATE TABLE out_t (k INT) WITH ('connector' = 'memory');\n"
                  "INSERT INTO out_t SELECT k FROM src;\n";
  text t = run_on(2, "", topic4, opts, q, &log);
  CHECK_EQ(log.count, 0);
  CHECK_EQ(count_lines(&t), NREC);
  free(t.data);
  rd_kafka_t *rk = client(RD_KAFKA_CONSUMER, group);
  CHECK(rk != NULL);
  if (!rk) return;
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(4);
  for (int p = 0; p < 4; p++) rd_kafka_topic_partition_list_add(l, topic4, p);
  CHECK_EQ(rd_kafka_committed(rk, l, 15000), RD_KAFKA_RESP_ERR_NO_ERROR);
  for (int p = 0; p < 4; p++) {
    if (l->elems[p].offset != ends4[p])
      fprintf(stderr, "partition %d: committed %" PRId64 ", end %" PRId64 "\n", p,
              l->elems[p].offset, ends4[p]);
    CHECK_EQ(l->elems[p].offset, ends4[p]);
  }
  rd_kafka_topic_partition_list_destroy(l);
  rd_kafka_destroy(rk);
}

int main(void) {
  const char *port = getenv("DIPPER_KAFKA_PORT");
  snprintf(bootstrap, sizeof bootstrap, "127.0.0.1:%s", port && *port ? port : "9092");
  snprintf(run_tag, sizeof run_tag, "%ld-%ld", (long)getpid(), (long)time(NULL));
  rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, NULL);
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
