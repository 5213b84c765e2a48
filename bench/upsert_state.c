/*
** upsert_state.c — what the upsert-kafka source's kept rows cost per batch
** in a checkpointed query: a topic of K keys (one partition, JSON key and
** value) read whole in the first batches, then M measured batches that each
** update C keys; per measured batch the wall time of dipper_query_step and
** the bytes it wrote to the checkpoint folder: its commit record (commits/N:
** the sources' positions, and the kept rows with them before the delta
** format), its offsets record, and the source's own files (upsert-kv-0/state/:
** the delta or snapshot of the kept rows).  Prints medians and totals, one
** line a figure, for bench/upsert_state_ab.sh to put side by side.
**
** Needs a Kafka broker on 127.0.0.1 ($DIPPER_KAFKA_PORT, default 9092):
** scripts/kafka-local start (take /tmp/dipper-services.lock around it).
**
**   usage: bench_upsert_state [KEYS] [MEASURED] [CHANGED]   (1000000 21 100)
*/
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "dipper.h"

static char bootstrap[64];

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static rd_kafka_t *producer(void) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof err);
  rd_kafka_conf_set(conf, "linger.ms", "20", err, sizeof err);
  rd_kafka_conf_set(conf, "queue.buffering.max.messages", "1000000", err, sizeof err);
  rd_kafka_conf_set(conf, "compression.type", "lz4", err, sizeof err);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "rd_kafka_new: %s\n", err);
    exit(1);
  }
  return rk;
}

static void create_topic(const char *name) {
  rd_kafka_t *rk = producer();
  char err[512];
  rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(name, 1, 1, err, sizeof err);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
  rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
  if (!ev) {
    fprintf(stderr, "no answer to CreateTopics from %s\n", bootstrap);
    exit(1);
  }
  rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_destroy(rk);
  sleep(1);
}

/* Keys from..from+n-1 (mod keys), each with a value of round `round`. */
static void produce(const char *topic, int64_t from, int64_t n, int64_t keys, int round) {
  rd_kafka_t *rk = producer();
  for (int64_t i = 0; i < n; i++) {
    int64_t k = (from + i) % keys;
    char key[48], val[160];
    int kl = snprintf(key, sizeof key, "{\"id\":%" PRId64 "}", k);
    int vl = snprintf(val, sizeof val,
                      "{\"id\":%" PRId64 ",\"name\":\"user-%" PRId64 "\",\"region\":\"r%d\","
                      "\"score\":%" PRId64 "}",
                      k, k, round % 7, k * 31 + round);
    for (;;) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, (size_t)kl),
          RD_KAFKA_V_VALUE(val, (size_t)vl), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        fprintf(stderr, "produce: %s\n", rd_kafka_err2str(err));
        exit(1);
      }
      rd_kafka_poll(rk, 10);
    }
  }
  if (rd_kafka_flush(rk, 120000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    fprintf(stderr, "flush timed out\n");
    exit(1);
  }
  rd_kafka_destroy(rk);
}

static long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : 0;
}

/* The bytes of the newest file of folder `dir` (numbered files), and its number. */
static long newest_file(const char *dir, long *number) {
  DIR *d = opendir(dir);
  long best = -1, size = 0;
  if (d) {
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      char *end;
      long n = strtol(de->d_name, &end, 10);
      if (*end || end == de->d_name || n <= best) continue;
      best = n;
      char p[2048];
      snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
      size = file_size(p);
    }
    closedir(d);
  }
  *number = best;
  return size;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static int64_t median(int64_t *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_i64);
  return n ? v[n / 2] : 0;
}

static void rm_rf(const char *path) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", path);
}

int main(int argc, char **argv) {
  int64_t keys = argc > 1 ? atoll(argv[1]) : 1000000;
  int measured = argc > 2 ? atoi(argv[2]) : 21;
  int64_t changed = argc > 3 ? atoll(argv[3]) : 100;
  if (keys <= 0 || measured <= 0 || measured > 1000 || changed <= 0) {
    fprintf(stderr, "usage: bench_upsert_state [KEYS] [MEASURED] [CHANGED]\n");
    return 2;
  }
  const char *port = getenv("DIPPER_KAFKA_PORT");
  snprintf(bootstrap, sizeof bootstrap, "127.0.0.1:%s", port && *port ? port : "9092");
  char topic[96], dir[] = "/tmp/dipper-upsert-bench-XXXXXX";
  snprintf(topic, sizeof topic, "dipper-upsert-bench-%ld-%ld", (long)getpid(), (long)time(NULL));
  if (!mkdtemp(dir)) return 1;
  create_topic(topic);
  int64_t t0 = now_us();
  produce(topic, 0, keys, keys, 0);
  fprintf(stderr, "produced %" PRId64 " records in %.1f s\n", keys, (double)(now_us() - t0) / 1e6);

  char sql[4096];
  snprintf(sql, sizeof sql,
           "SET 'execution.checkpointing.dir' = '%s';\n"
           "CREATE TABLE kv (id BIGINT, name STRING, region STRING, score BIGINT,"
           " PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = '%s',"
           " 'properties.bootstrap.servers' = '%s', 'key.format' = 'json',"
           " 'value.format' = 'json');\n"
           "CREATE TABLE out (id BIGINT, name STRING, region STRING, score BIGINT)"
           " WITH ('connector' = 'blackhole');\n"
           "INSERT INTO out SELECT * FROM kv;",
           dir, topic, bootstrap);
  dipper *db = NULL;
  dipper_program *prog = NULL;
  dipper_query **qs = NULL;
  int n = 0, finished = 0;
  if (dipper_open(&db, NULL) || dipper_compile(db, sql, (size_t)-1, "bench.sql", &prog) ||
      dipper_query_start(prog, &qs, &n) || n != 1) {
    fprintf(stderr, "start: %s\n", db ? dipper_errmsg(db) : "no handle");
    return 1;
  }
  dipper_progress pr;
  memset(&pr, 0, sizeof pr);
  pr.size = sizeof pr;
  t0 = now_us();
  int64_t read = 0;
  for (int guard = 0; read < keys && guard < 100000; guard++) {
    if (dipper_query_step(qs[0], &finished)) {
      fprintf(stderr, "step: %s\n", dipper_errmsg(db));
      return 1;
    }
    dipper_query_progress(qs[0], &pr);
    read = pr.total_input_rows;
  }
  fprintf(stderr, "read %" PRId64 " keys in %.1f s (%" PRId64 " batches)\n", read,
          (double)(now_us() - t0) / 1e6, pr.batch_id + 1);

  int64_t *step_us = calloc((size_t)measured, sizeof *step_us);
  int64_t *commit_b = calloc((size_t)measured, sizeof *commit_b);
  int64_t *files_b = calloc((size_t)measured, sizeof *files_b);
  int64_t *offsets_b = calloc((size_t)measured, sizeof *offsets_b);
  char commits[1200], offsets[1200], files[1200];
  snprintf(commits, sizeof commits, "%s/out/commits", dir);
  snprintf(offsets, sizeof offsets, "%s/out/offsets", dir);
  snprintf(files, sizeof files, "%s/out/upsert-kv-0/state", dir);
  long last_file = -1;
  newest_file(files, &last_file);
  for (int m = 0; m < measured; m++) {
    /* C keys spread over the key space, a new value each */
    produce(topic, (int64_t)m * 7919 * changed % keys, changed, keys, m + 1);
    int64_t before = pr.total_input_rows, s0 = now_us();
    for (int guard = 0; pr.total_input_rows < before + changed && guard < 1000; guard++) {
      if (dipper_query_step(qs[0], &finished)) {
        fprintf(stderr, "step: %s\n", dipper_errmsg(db));
        return 1;
      }
      dipper_query_progress(qs[0], &pr);
    }
    step_us[m] = now_us() - s0;
    long num;
    commit_b[m] = newest_file(commits, &num);
    offsets_b[m] = newest_file(offsets, &num);
    long fsize = newest_file(files, &num);
    files_b[m] = num > last_file ? fsize : 0;
    last_file = num;
  }
  int64_t total_commit = 0, total_files = 0;
  for (int m = 0; m < measured; m++) total_commit += commit_b[m], total_files += files_b[m];
  printf("keys %" PRId64 " measured-batches %d changed-per-batch %" PRId64 "\n", keys, measured,
         changed);
  printf("median-step-ms %.2f\n", (double)median(step_us, measured) / 1000.0);
  printf("median-commit-record-bytes %" PRId64 "\n", median(commit_b, measured));
  printf("median-offsets-record-bytes %" PRId64 "\n", median(offsets_b, measured));
  printf("median-source-file-bytes %" PRId64 "\n", median(files_b, measured));
  printf("total-bytes-per-batch %.0f\n",
         (double)(total_commit + total_files) / (double)measured);
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
  free(step_us);
  free(commit_b);
  free(files_b);
  free(offsets_b);
  rm_rf(dir);
  return 0;
}
