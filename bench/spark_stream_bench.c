/*
** spark_stream_bench.c — the seed's payment pipeline on Spark Structured
** Streaming, as dipper runs it (examples/payments.sql compiled, translated and
** started from C), next to the same pipeline written by hand with pyspark
** (bench/payments_pyspark.py).  scripts/bench-spark-stream drives it:
**
**   bench_spark_stream_bench produce --topic T [--records N] [--partitions P] [--seed S]
**       create a fresh topic and fill it with N JSON payments (librdkafka):
**       34 provinces, two platforms, amounts 0.01 .. 1000.00, event times from
**       2024-01-01 00:00:00 UTC at --rate events per event-time second
**       (default 1000), most a little out of order (up to 2 s), 9 % up to
**       10 s behind, 1 % up to 30 s (later than the 10 s watermark allows).
**   bench_spark_stream_bench topic --topic T [--partitions P]
**       create a fresh (sink) topic.
**   bench_spark_stream_bench run --topic T --sink S --checkpoint DIR [--plan-out F]
**       examples/payments.sql with the topics and broker substituted, the
**       checkpoint directory and trigger available-now SET before its
**       INSERT (so that they win over the file's own SETs), compiled by
**       dipper, checked against Spark's streaming rules, translated into a
**       WriteStreamOperationStart and started (the internal layers: the
**       public API does not start streaming queries on Spark yet); awaited to
**       its end.  Prints "key value" lines: rows (sum of numInputRows of the
**       progress reports), batches, batch_ms (sum of batchDuration),
**       rows_per_s, start_ms (compile + translate + start command), wall_s
**       (from the compile to the end of the query), sink_rows; the physical
**       plan (StreamingQueryCommand explain, extended) goes to F.
**   bench_spark_stream_bench plans A B
**       normalise two explain texts (the physical plan's operator names in
**       order; ids, codegen stage marks and expressions dropped) and compare:
**       plan_match yes/no, the operators found in one and not the other.
**   bench_spark_stream_bench sinks S1 S2
**       read two sink topics to their end and compare the records (the
**       pay_amount sums to a relative 1e-9): outputs_agree yes/no.
**   bench_spark_stream_bench delete T...
**       delete the topics of a run.
**
** Options shared by all: --uri sc://127.0.0.1:15002, --brokers 127.0.0.1:9092.
** With no command it says where to start and exits 0 (scripts/bench runs
** every bench_* without arguments).
*/
#include <ctype.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/dipper_int.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/diag.h"
#include "plan/catalog.h"
#include "spark/client.h"
#include "spark/stream_rules.h"
#include "spark/streaming.h"
#include "spark/translate.h"
#include "spark/translate_stream.h"

#define PROG "spark_stream_bench"
#define MAX_ARGS 64

typedef struct opts {
  const char *uri, *brokers, *topic, *sink, *checkpoint, *plan_out;
  int64_t records;
  int partitions;
  uint64_t seed;
  int64_t rate;        /* events per event-time second */
  int64_t timeout_s;   /* the longest a run may take */
  const char *args[MAX_ARGS]; /* positional: plans A B, sinks S1 S2, delete T... */
  int nargs;
} opts;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  dp_buf b = DP_BUF_INIT;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) dp_buf_put(&b, chunk, n);
  fclose(f);
  if (len) *len = b.len;
  (void)dp_buf_cstr(&b); /* a string even when the file is empty */
  return dp_buf_take(&b);
}

/* ---- Kafka ---- */

static rd_kafka_t *kclient(rd_kafka_type_t type, const char *brokers, int nconf,
                           const char *const *conf_kv, char *err, size_t errlen) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, err, errlen) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return NULL;
  }
  for (int i = 0; i < nconf; i++)
    if (rd_kafka_conf_set(conf, conf_kv[2 * i], conf_kv[2 * i + 1], err, errlen) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return NULL;
    }
  rd_kafka_t *rk = rd_kafka_new(type, conf, err, errlen);
  if (!rk) rd_kafka_conf_destroy(conf); /* on success the client owns conf */
  return rk;
}

/* Create a topic that must not exist yet (a benchmark reads a fresh one). */
static int create_topic(const char *brokers, const char *topic, int partitions) {
  char err[512] = "";
  rd_kafka_t *rk = kclient(RD_KAFKA_PRODUCER, brokers, 0, NULL, err, sizeof err);
  if (!rk) {
    fprintf(stderr, PROG ": Kafka client for %s: %s\n", brokers, err);
    return -1;
  }
  int rc = -1;
  rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, 1, err, sizeof err);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  if (nt && q) {
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    const rd_kafka_CreateTopics_result_t *res = ev ? rd_kafka_event_CreateTopics_result(ev) : NULL;
    size_t n = 0;
    const rd_kafka_topic_result_t **tr = res ? rd_kafka_CreateTopics_result_topics(res, &n) : NULL;
    if (n == 1 && rd_kafka_topic_result_error(tr[0]) == RD_KAFKA_RESP_ERR_NO_ERROR)
      rc = 0;
    else
      fprintf(stderr, PROG ": create topic %s at %s: %s\n", topic, brokers,
              n == 1 ? rd_kafka_topic_result_error_string(tr[0])
                     : "no answer (is Kafka running? scripts/kafka-local start)");
    if (ev) rd_kafka_event_destroy(ev);
  } else {
    fprintf(stderr, PROG ": create topic %s: %s\n", topic, err);
  }
  if (q) rd_kafka_queue_destroy(q);
  if (nt) rd_kafka_NewTopic_destroy(nt);
  /* Wait until every partition has a leader: a reader started at once must see them. */
  bool seen = false;
  for (int tries = 0; rc == 0 && tries < 100 && !seen; tries++) {
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    if (rkt && rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      seen = md->topic_cnt == 1 && !md->topics[0].err && md->topics[0].partition_cnt == partitions;
      for (int i = 0; seen && i < md->topics[0].partition_cnt; i++)
        seen = md->topics[0].partitions[i].leader >= 0;
      rd_kafka_metadata_destroy(md);
    }
    if (rkt) rd_kafka_topic_destroy(rkt);
    if (!seen) {
      struct timespec ts = {0, 100000000L};
      nanosleep(&ts, NULL);
    }
  }
  if (rc == 0 && !seen) {
    fprintf(stderr, PROG ": topic %s did not show up in the metadata of %s\n", topic, brokers);
    rc = -1;
  }
  rd_kafka_destroy(rk);
  return rc;
}

/* xorshift64*: the generator's only randomness, reproducible from --seed. */
static uint64_t next_rand(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

typedef struct delivery {
  int64_t failed;
  rd_kafka_resp_err_t first_error;
} delivery;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  delivery *d = opaque;
  if (m->err) {
    if (d->failed++ == 0) d->first_error = m->err;
  }
}

/* One payment as JSON into buf (cap bytes); its length. */
static int payment_json(char *buf, size_t cap, int64_t i, int64_t event_us, uint64_t *rnd) {
  time_t secs = (time_t)(event_us / 1000000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  int64_t cents = (int64_t)(next_rand(rnd) % 100000) + 1;
  unsigned r = (unsigned)(next_rand(rnd) >> 32);
  int n = snprintf(buf, cap,
                   "{\"createTime\":\"%04d-%02d-%02d %02d:%02d:%02d.%03d\",\"orderId\":%" PRId64
                   ",\"payAmount\":%" PRId64 ".%02d,\"payPlatform\":%u,\"provinceId\":%u}",
                   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                   (int)(event_us / 1000 % 1000), i + 1, cents / 100, (int)(cents % 100), r & 1u,
                   (r >> 1) % 34u);
  return n;
}

static int cmd_produce(const opts *o) {
  if (!o->topic || o->records <= 0 || o->partitions <= 0 || o->rate <= 0) {
    fprintf(stderr, PROG " produce: needs --topic, and --records, --partitions, --rate > 0\n");
    return 2;
  }
  if (create_topic(o->brokers, o->topic, o->partitions)) return 1;
  char err[512] = "";
  /* Large batches and idempotence: fast, and every record exactly once. */
  static const char *const conf[] = {"enable.idempotence", "true",
                                     "linger.ms", "20",
                                     "batch.size", "1000000",
                                     "queue.buffering.max.kbytes", "262144",
                                     "queue.buffering.max.messages", "1000000"};
  rd_kafka_conf_t *c = rd_kafka_conf_new();
  delivery d = {0, RD_KAFKA_RESP_ERR_NO_ERROR};
  rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
  rd_kafka_conf_set_opaque(c, &d);
  bool ok = rd_kafka_conf_set(c, "bootstrap.servers", o->brokers, err, sizeof err) ==
            RD_KAFKA_CONF_OK;
  for (size_t i = 0; ok && i < sizeof conf / sizeof conf[0]; i += 2)
    ok = rd_kafka_conf_set(c, conf[i], conf[i + 1], err, sizeof err) == RD_KAFKA_CONF_OK;
  rd_kafka_t *rk = ok ? rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof err) : NULL;
  if (!rk) {
    rd_kafka_conf_destroy(c);
    fprintf(stderr, PROG ": Kafka producer for %s: %s\n", o->brokers, err);
    return 1;
  }
  uint64_t rnd = o->seed ? o->seed : 0x9E3779B97F4A7C15ULL;
  const int64_t base_us = INT64_C(1704067200) * 1000000; /* 2024-01-01 00:00:00 UTC */
  const int64_t step_us = 1000000 / o->rate;
  int64_t min_us = INT64_MAX, max_us = INT64_MIN, late = 0, max_seen = base_us;
  char buf[256];
  double t0 = now_s();
  int rc = 0;
  for (int64_t i = 0; i < o->records && rc == 0; i++) {
    /* Arrival order is i; the event time lags behind it by a delay. */
    uint64_t r = next_rand(&rnd);
    unsigned kind = (unsigned)(r % 100);
    int64_t span_us = kind < 90 ? 2000000 : kind < 99 ? 10000000 : 30000000;
    int64_t delay_us = (int64_t)((r >> 8) % (uint64_t)span_us);
    int64_t ev = base_us + i * step_us - delay_us;
    if (ev < max_seen - 10000000) late++;
    if (ev > max_seen) max_seen = ev; /* late: behind the 10 s watermark of what came before */
    if (ev < min_us) min_us = ev;
    if (ev > max_us) max_us = ev;
    int n = payment_json(buf, sizeof buf, i, ev, &rnd);
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(o->topic), RD_KAFKA_V_PARTITION((int32_t)(i % o->partitions)),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(buf, (size_t)n),
          RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk, 10); /* let deliveries drain the queue */
        continue;
      }
      if (e) {
        fprintf(stderr, PROG ": produce to %s: %s\n", o->topic, rd_kafka_err2str(e));
        rc = 1;
      }
      break;
    }
    if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
  }
  rd_kafka_resp_err_t fe = rd_kafka_flush(rk, 120000);
  double dt = now_s() - t0;
  if (rc == 0 && fe) {
    fprintf(stderr, PROG ": flush to %s: %s\n", o->topic, rd_kafka_err2str(fe));
    rc = 1;
  }
  if (rc == 0 && d.failed) {
    fprintf(stderr, PROG ": %" PRId64 " records to %s not delivered: %s\n", d.failed, o->topic,
            rd_kafka_err2str(d.first_error));
    rc = 1;
  }
  rd_kafka_destroy(rk);
  if (rc) return rc;
  printf("produced %" PRId64 "\n", o->records);
  printf("produce_s %.3f\n", dt);
  printf("produce_rows_per_s %.0f\n", (double)o->records / dt);
  printf("event_time_span_s %.0f\n", (double)(max_us - min_us) / 1e6);
  printf("late_records %" PRId64 "\n", late);
  return 0;
}

/* Delete the topics a run made (their records would stay on the broker's disk). */
static int cmd_delete(const opts *o) {
  if (o->nargs < 1) {
    fprintf(stderr, PROG " delete: needs topics\n");
    return 2;
  }
  char err[512] = "";
  rd_kafka_t *rk = kclient(RD_KAFKA_PRODUCER, o->brokers, 0, NULL, err, sizeof err);
  if (!rk) {
    fprintf(stderr, PROG ": Kafka client for %s: %s\n", o->brokers, err);
    return 1;
  }
  rd_kafka_DeleteTopic_t *dt[MAX_ARGS];
  for (int i = 0; i < o->nargs; i++) dt[i] = rd_kafka_DeleteTopic_new(o->args[i]);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  int rc = 1;
  if (q) {
    rd_kafka_DeleteTopics(rk, dt, (size_t)o->nargs, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    const rd_kafka_DeleteTopics_result_t *res = ev ? rd_kafka_event_DeleteTopics_result(ev) : NULL;
    size_t n = 0;
    const rd_kafka_topic_result_t **tr = res ? rd_kafka_DeleteTopics_result_topics(res, &n) : NULL;
    rc = n == (size_t)o->nargs ? 0 : 1;
    for (size_t i = 0; i < n; i++)
      if (rd_kafka_topic_result_error(tr[i])) {
        fprintf(stderr, PROG ": delete topic %s: %s\n", rd_kafka_topic_result_name(tr[i]),
                rd_kafka_topic_result_error_string(tr[i]));
        rc = 1;
      }
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
  }
  rd_kafka_DeleteTopic_destroy_array(dt, (size_t)o->nargs);
  rd_kafka_destroy(rk);
  return rc;
}

static int cmd_topic(const opts *o) {
  if (!o->topic || o->partitions <= 0) {
    fprintf(stderr, PROG " topic: needs --topic and --partitions > 0\n");
    return 2;
  }
  return create_topic(o->brokers, o->topic, o->partitions) ? 1 : 0;
}

/* Every record of a topic, from its start to the end it had when asked. */
typedef struct records {
  char **v;
  int64_t n, cap;
} records;

static void records_free(records *r) {
  for (int64_t i = 0; i < r->n; i++) free(r->v[i]);
  free(r->v);
  r->v = NULL;
  r->n = r->cap = 0;
}

static int read_topic(const char *brokers, const char *topic, records *out) {
  memset(out, 0, sizeof *out);
  char err[512] = "";
  static const char *const conf[] = {"group.id", "dipper-spark-stream-bench",
                                     "enable.auto.commit", "false"};
  rd_kafka_t *rk = kclient(RD_KAFKA_CONSUMER, brokers, 2, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, PROG ": Kafka consumer for %s: %s\n", brokers, err);
    return -1;
  }
  int rc = 0;
  rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
  const struct rd_kafka_metadata *md = NULL;
  if (!rkt || rd_kafka_metadata(rk, 0, rkt, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      md->topic_cnt != 1 || md->topics[0].err) {
    fprintf(stderr, PROG ": no topic %s at %s\n", topic, brokers);
    rc = -1;
  }
  int np = rc ? 0 : md->topics[0].partition_cnt;
  int64_t *end = calloc((size_t)(np ? np : 1), sizeof *end);
  int64_t want = 0;
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(np ? np : 1);
  if (!end || !l) rc = -1;
  for (int p = 0; rc == 0 && p < np; p++) {
    int64_t lo = 0, hi = 0;
    rd_kafka_resp_err_t e =
        rd_kafka_query_watermark_offsets(rk, topic, md->topics[0].partitions[p].id, &lo, &hi, 10000);
    if (e) {
      fprintf(stderr, PROG ": offsets of %s: %s\n", topic, rd_kafka_err2str(e));
      rc = -1;
      break;
    }
    end[p] = hi;
    want += hi - lo;
    if (hi > lo) rd_kafka_topic_partition_list_add(l, topic, md->topics[0].partitions[p].id)->offset = lo;
  }
  if (md) rd_kafka_metadata_destroy(md);
  if (rkt) rd_kafka_topic_destroy(rkt);
  if (rc == 0 && want > 0) rd_kafka_assign(rk, l);
  double deadline = now_s() + 120;
  while (rc == 0 && out->n < want) {
    if (now_s() > deadline) {
      fprintf(stderr, PROG ": read %" PRId64 " of %" PRId64 " records of %s in 120 s\n", out->n,
              want, topic);
      rc = -1;
      break;
    }
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 200);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (out->n == out->cap) {
        int64_t cap = out->cap ? out->cap * 2 : 1024;
        char **nv = realloc(out->v, (size_t)cap * sizeof *nv);
        if (!nv) rc = -1;
        else {
          out->v = nv;
          out->cap = cap;
        }
      }
      char *s = rc ? NULL : malloc(m->len + 1);
      if (s) {
        if (m->len) memcpy(s, m->payload, m->len);
        s[m->len] = '\0';
        out->v[out->n++] = s;
      } else {
        rc = -1;
      }
    } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      fprintf(stderr, PROG ": read %s: %s\n", topic, rd_kafka_message_errstr(m));
      rc = -1;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_topic_partition_list_destroy(l);
  free(end);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  if (rc) records_free(out);
  return rc;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Two sink records agree when they are equal up to "pay_amount": and the two
** sums agree to a relative 1e-9 (Spark adds a window's doubles in the order
** its partitions arrive). */
static bool same_record(const char *a, const char *b) {
  const char *pa = strstr(a, "\"pay_amount\":"), *pb = strstr(b, "\"pay_amount\":");
  if (!pa || !pb) return strcmp(a, b) == 0;
  if (pa - a != pb - b || strncmp(a, b, (size_t)(pa - a)) != 0) return false;
  double x = strtod(pa + 13, NULL), y = strtod(pb + 13, NULL);
  return fabs(x - y) <= 1e-9 * fmax(1.0, fmax(fabs(x), fabs(y)));
}

static int cmd_sinks(const opts *o) {
  if (o->nargs != 2) {
    fprintf(stderr, PROG " sinks: needs two topics\n");
    return 2;
  }
  records r[2];
  if (read_topic(o->brokers, o->args[0], &r[0])) return 1;
  if (read_topic(o->brokers, o->args[1], &r[1])) {
    records_free(&r[0]);
    return 1;
  }
  for (int k = 0; k < 2; k++) qsort(r[k].v, (size_t)r[k].n, sizeof *r[k].v, cmp_str);
  int64_t differ = 0;
  for (int64_t i = 0; i < r[0].n && i < r[1].n; i++)
    if (!same_record(r[0].v[i], r[1].v[i])) {
      if (differ++ < 3) fprintf(stderr, "  differ: %s\n          %s\n", r[0].v[i], r[1].v[i]);
    }
  bool agree = r[0].n == r[1].n && differ == 0 && r[0].n > 0;
  printf("sink_records_a %" PRId64 "\n", r[0].n);
  printf("sink_records_b %" PRId64 "\n", r[1].n);
  printf("outputs_agree %s\n", agree ? "yes" : "no");
  if (r[0].n > 0) printf("sink_example %s\n", r[0].v[r[0].n / 2]);
  records_free(&r[0]);
  records_free(&r[1]);
  return 0;
}

/* ---- dipper's run ---- */

/* s with every `from` replaced by `to`, appended to b; how many were replaced. */
static int replace_all(dp_buf *b, const char *s, const char *from, const char *to) {
  size_t fl = strlen(from);
  int n = 0;
  for (const char *p; (p = strstr(s, from)) != NULL; s = p + fl, n++) {
    dp_buf_put(b, s, (size_t)(p - s));
    dp_buf_puts(b, to);
  }
  dp_buf_puts(b, s);
  return n;
}

/* examples/payments.sql for this run: topics, broker, checkpoint, trigger. */
static char *pipeline_sql(const opts *o) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/payments.sql", DIPPER_SOURCE_DIR);
  char *text = read_file(path, NULL);
  if (!text) {
    fprintf(stderr, PROG ": cannot read %s\n", path);
    return NULL;
  }
  static const char *const from[3] = {"'topic' = 'payment_msg'", "'topic' = 'sink'",
                                     "'127.0.0.1:9092'"};
  char *cur = text;
  for (int i = 0; i < 3 && cur; i++) {
    char to[512];
    if (i == 0) snprintf(to, sizeof to, "'topic' = '%s'", o->topic);
    if (i == 1) snprintf(to, sizeof to, "'topic' = '%s'", o->sink);
    if (i == 2) snprintf(to, sizeof to, "'%s'", o->brokers);
    dp_buf b = DP_BUF_INIT;
    int n = replace_all(&b, cur, from[i], to);
    free(cur);
    cur = dp_buf_take(&b);
    if (n == 0) {
      fprintf(stderr, PROG ": %s no longer holds %s: update the benchmark\n", path, from[i]);
      free(cur);
      return NULL;
    }
  }
  if (!cur) return NULL;
  /* This run's SETs just before the INSERT: they win over any the file makes. */
  const char *ins = strstr(cur, "\nINSERT INTO");
  if (!ins) {
    fprintf(stderr, PROG ": %s has no INSERT INTO at the start of a line\n", path);
    free(cur);
    return NULL;
  }
  dp_buf b = DP_BUF_INIT;
  dp_buf_put(&b, cur, (size_t)(ins - cur) + 1);
  dp_buf_printf(&b,
                "SET 'execution.checkpointing.dir' = '%s';\n"
                "SET 'dipper.trigger' = 'available-now';\n",
                o->checkpoint);
  dp_buf_puts(&b, ins + 1);
  free(cur);
  return dp_buf_take(&b);
}

/* Compile the script, check it for Spark, build its start command and start
** it: what dipper run will do once the public API starts streams on Spark. */
static int start_pipeline(dp_sc *s, const char *sql, dp_sq *q) {
  memset(q, 0, sizeof *q);
  dipper *db = NULL;
  if (dipper_open(&db, "embedded") != DIPPER_OK || !db) {
    fprintf(stderr, PROG ": dipper_open failed\n");
    return -1;
  }
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "payments.sql", &prog);
  if (rc) {
    char *m = dipper_diag_render(db, 0);
    fprintf(stderr, PROG ": examples/payments.sql: %s\n", m ? m : "does not compile");
    free(m);
    dipper_close(db);
    return rc;
  }
  dp_query_plan *qp = &prog->stmts[prog->n - 1].plan;
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, "payments.sql", sql, strlen(sql));
  rc = a ? dp_spark_stream_check(qp, &d) : DIPPER_NOMEM;
  if (rc == DIPPER_OK) {
    dp_spark_ctx c;
    memset(&c, 0, sizeof c);
    c.arena = a;
    c.diags = &d;
    dp_spark_stream_opts so = {
        .trigger = dp_catalog_option(db->catalog, "dipper.trigger"),
        .checkpoint_dir = dp_catalog_option(db->catalog, "execution.checkpointing.dir")};
    Spark__Connect__Plan *plan = NULL;
    rc = dp_spark_stream_start_plan(&c, qp, qp->roots[0], &so, &plan);
    if (rc == DIPPER_OK) {
      dp_sc_error err;
      dp_sc_error_init(&err);
      rc = dp_sq_start(s, plan, q, &err);
      if (rc) fprintf(stderr, PROG ": start: %s\n", dp_buf_cstr(&err.message));
      dp_sc_error_free(&err);
    }
  }
  for (int i = 0; i < d.count; i++)
    fprintf(stderr, PROG ": refused at %d:%d: %s\n", d.items[i].span.line, d.items[i].span.col,
            d.items[i].message);
  dp_arena_free(a);
  dipper_program_free(prog);
  dipper_close(db);
  return rc;
}

/* A plan read from a batch that had input (the last batch of an available-now
** query is often an empty one, whose scan Spark folds into an empty
** LocalTableScan). */
static bool plan_reads_input(const char *text) {
  const char *phys = strstr(text, "== Physical Plan ==");
  return phys && strstr(phys, "MicroBatchScan") != NULL;
}

static int cmd_run(const opts *o) {
  if (!o->topic || !o->sink || !o->checkpoint) {
    fprintf(stderr, PROG " run: needs --topic, --sink and --checkpoint\n");
    return 2;
  }
  char *sql = pipeline_sql(o);
  if (!sql) return 1;
  dp_sc *s = NULL;
  dp_sc_error err;
  dp_sc_error_init(&err);
  if (dp_sc_open(&s, o->uri, &err) != DIPPER_OK) {
    fprintf(stderr, PROG ": %s\n", dp_buf_cstr(&err.message));
    dp_sc_error_free(&err);
    free(sql);
    return 1;
  }
  int rc = 0;
  dp_sq q;
  double t0 = now_s();
  if (start_pipeline(s, sql, &q) != DIPPER_OK) {
    rc = 1;
    goto done;
  }
  double started = now_s();
  /* Await in steps of a second, and meanwhile keep the plan of a batch that
     reads input: the explain after the end shows the last batch only. */
  char *plan = NULL;
  bool ended = false;
  while (!ended) {
    if (now_s() - t0 > (double)o->timeout_s) {
      fprintf(stderr, PROG ": the query did not end within %" PRId64 " s\n", o->timeout_s);
      (void)dp_sq_stop(s, &q, &err);
      rc = 1;
      break;
    }
    if (dp_sq_await(s, &q, 1000, &ended, &err) != DIPPER_OK) {
      fprintf(stderr, PROG ": await: %s\n", dp_buf_cstr(&err.message));
      rc = 1;
      break;
    }
    if (!ended && !(plan && plan_reads_input(plan))) {
      char *text = NULL;
      if (dp_sq_explain(s, &q, true, &text, &err) == DIPPER_OK && text &&
          (plan_reads_input(text) || !plan)) {
        free(plan);
        plan = text;
      } else {
        free(text);
      }
    }
  }
  double wall = now_s() - t0;
  char *ex = NULL;
  if (rc == 0 && dp_sq_exception(s, &q, &ex, &err) == DIPPER_OK && ex) {
    fprintf(stderr, PROG ": the query failed: %s\n", ex);
    rc = 1;
  }
  free(ex);
  if (rc == 0 && !(plan && plan_reads_input(plan))) {
    char *text = NULL;
    if (dp_sq_explain(s, &q, true, &text, &err) == DIPPER_OK && text) {
      free(plan);
      plan = text;
    } else {
      free(text);
    }
  }
  dp_spark_progress *pr = NULL;
  int np = 0;
  if (rc == 0 && dp_sq_recent_progress(s, &q, &pr, &np, &err) != DIPPER_OK) {
    fprintf(stderr, PROG ": recent progress: %s\n", dp_buf_cstr(&err.message));
    rc = 1;
  }
  if (rc == 0) {
    int64_t rows = 0, ms = 0, sink_rows = 0;
    for (int i = 0; i < np; i++) {
      /* Spark 4.1 leaves the batch's numInputRows out of the JSON (its
         StreamingQueryProgress derives it from the sources): sum those. */
      int64_t in = pr[i].num_input_rows;
      if (in < 0) {
        in = 0;
        for (int k = 0; k < pr[i].nsources; k++)
          in += pr[i].sources[k].num_input_rows > 0 ? pr[i].sources[k].num_input_rows : 0;
      }
      rows += in;
      ms += pr[i].batch_duration_ms;
      if (sink_rows >= 0) sink_rows = pr[i].sink_output_rows >= 0 ? sink_rows + pr[i].sink_output_rows : -1;
    }
    if (np >= 100)
      fprintf(stderr, PROG ": %d progress reports: Spark keeps only the newest, the sums "
                      "miss the oldest batches\n", np);
    printf("rows %" PRId64 "\n", rows);
    printf("batches %d\n", np);
    printf("batch_ms %" PRId64 "\n", ms);
    printf("rows_per_s %.0f\n", ms > 0 ? (double)rows / ((double)ms / 1e3) : 0.0);
    printf("start_ms %.1f\n", (started - t0) * 1e3);
    printf("wall_s %.3f\n", wall);
    printf("sink_rows %" PRId64 "\n", sink_rows);
  }
  for (int i = 0; i < np; i++) dp_spark_progress_free(&pr[i]);
  free(pr);
  if (rc == 0 && o->plan_out) {
    FILE *f = fopen(o->plan_out, "w");
    if (!f || !plan || fputs(plan, f) < 0) {
      fprintf(stderr, PROG ": cannot write the plan to %s\n", o->plan_out);
      rc = 1;
    }
    if (f) fclose(f);
  }
  free(plan);
  dp_sq_free(&q);
done:
  dp_sc_error_free(&err);
  dp_sc_close(s);
  free(sql);
  return rc;
}

/* ---- plans ---- */

#define MAX_OPS 256

typedef struct ops {
  char name[MAX_OPS][48];
  int n;
} ops;

/* The physical plan's operators in the order Spark prints them (pre-order):
** the tree marks ("+- ", ":- ", "|  "), whole-stage codegen marks ("*(3) "),
** everything after the name (ids, expressions, state info) dropped. */
static int normalise(const char *text, ops *out) {
  out->n = 0;
  const char *p = strstr(text, "== Physical Plan ==");
  if (!p) return -1;
  p = strchr(p, '\n');
  while (p && *p) {
    p++;
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    if (eol - p >= 3 && !strncmp(p, "== ", 3)) break; /* the next section */
    const char *s = p;
    while (s < eol && strchr(" :|+-", *s)) s++;
    if (s + 1 < eol && s[0] == '*' && s[1] == '(') {
      const char *c = memchr(s, ')', (size_t)(eol - s));
      s = c ? c + 1 : eol;
      while (s < eol && *s == ' ') s++;
    }
    size_t len = 0;
    while (s + len < eol && (isalnum((unsigned char)s[len]) || s[len] == '_')) len++;
    if (len > 0 && isupper((unsigned char)s[0]) && out->n < MAX_OPS) {
      if (len >= sizeof out->name[0]) len = sizeof out->name[0] - 1;
      memcpy(out->name[out->n], s, len);
      out->name[out->n][len] = '\0';
      out->n++;
    }
    p = *eol ? eol : NULL;
  }
  return out->n > 0 ? 0 : -1;
}

static int count_of(const ops *o, const char *name) {
  int k = 0;
  for (int i = 0; i < o->n; i++) k += !strcmp(o->name[i], name);
  return k;
}

/* The operators a has more often than b, as "Name" or "Name x2", joined. */
static void only_in(const ops *a, const ops *b, dp_buf *out) {
  for (int i = 0; i < a->n; i++) {
    bool first = true;
    for (int j = 0; j < i && first; j++) first = strcmp(a->name[j], a->name[i]) != 0;
    if (!first) continue;
    int extra = count_of(a, a->name[i]) - count_of(b, a->name[i]);
    if (extra <= 0) continue;
    if (out->len) dp_buf_puts(out, ", ");
    dp_buf_puts(out, a->name[i]);
    if (extra > 1) dp_buf_printf(out, " x%d", extra);
  }
  if (!out->len) dp_buf_puts(out, "-");
}

/* Python code in a plan: a UDF evaluated in Python workers, or pandas. */
static void python_ops(const ops *a, dp_buf *out) {
  for (int i = 0; i < a->n; i++)
    if (strstr(a->name[i], "Python") || strstr(a->name[i], "Pandas") ||
        strstr(a->name[i], "InArrow")) {
      if (out->len) dp_buf_puts(out, ", ");
      dp_buf_puts(out, a->name[i]);
    }
  if (!out->len) dp_buf_puts(out, "none");
}

static int cmd_plans(const opts *o) {
  if (o->nargs != 2) {
    fprintf(stderr, PROG " plans: needs two explain files\n");
    return 2;
  }
  ops *op = calloc(2, sizeof *op);
  if (!op) return 1;
  int rc = 0;
  for (int k = 0; k < 2 && rc == 0; k++) {
    char *text = read_file(o->args[k], NULL);
    if (!text || normalise(text, &op[k])) {
      fprintf(stderr, PROG ": no physical plan in %s\n", o->args[k]);
      rc = 1;
    }
    free(text);
  }
  if (rc == 0) {
    bool same = op[0].n == op[1].n;
    int first_diff = -1;
    for (int i = 0; i < op[0].n && i < op[1].n; i++)
      if (strcmp(op[0].name[i], op[1].name[i])) {
        same = false;
        if (first_diff < 0) first_diff = i;
      }
    for (int k = 0; k < 2; k++) {
      printf("plan_%c ", "ab"[k]);
      for (int i = 0; i < op[k].n; i++) printf("%s%s", i ? " < " : "", op[k].name[i]);
      printf("\n");
    }
    dp_buf b = DP_BUF_INIT;
    printf("plan_match %s\n", same ? "yes" : "no");
    only_in(&op[0], &op[1], &b);
    printf("plan_only_a %s\n", dp_buf_cstr(&b));
    b.len = 0;
    only_in(&op[1], &op[0], &b);
    printf("plan_only_b %s\n", dp_buf_cstr(&b));
    if (!same && first_diff < 0) /* one plan is the other's start: it ends first */
      first_diff = op[0].n < op[1].n ? op[0].n : op[1].n;
    if (!same)
      printf("plan_first_difference operator %d: %s vs %s\n", first_diff + 1,
             first_diff < op[0].n ? op[0].name[first_diff] : "(end)",
             first_diff < op[1].n ? op[1].name[first_diff] : "(end)");
    for (int k = 0; k < 2; k++) {
      b.len = 0;
      python_ops(&op[k], &b);
      printf("plan_python_%c %s\n", "ab"[k], dp_buf_cstr(&b));
    }
    for (int k = 0; k < 2; k++)
      printf("plan_exchanges_%c %d\n", "ab"[k], count_of(&op[k], "Exchange"));
    dp_buf_free(&b);
  }
  free(op);
  return rc;
}

/* ---- main ---- */

static int parse_int(const char *flag, const char *v, int64_t *out) {
  char *end = NULL;
  long long x = strtoll(v, &end, 10);
  if (!*v || *end || x < 0) {
    fprintf(stderr, PROG ": %s wants a number, not '%s'\n", flag, v);
    return -1;
  }
  *out = x;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    printf(PROG ": skipped (needs Kafka and Spark: run scripts/bench-spark-stream)\n");
    return 0;
  }
  opts o = {.uri = "sc://127.0.0.1:15002", .brokers = "127.0.0.1:9092", .records = 2000000,
            .partitions = 2, .rate = 1000, .timeout_s = 1800};
  const char *cmd = argv[1];
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    const char **str = !strcmp(a, "--uri")          ? &o.uri
                       : !strcmp(a, "--brokers")    ? &o.brokers
                       : !strcmp(a, "--topic")      ? &o.topic
                       : !strcmp(a, "--sink")       ? &o.sink
                       : !strcmp(a, "--checkpoint") ? &o.checkpoint
                       : !strcmp(a, "--plan-out")   ? &o.plan_out
                                                    : NULL;
    int64_t *num = !strcmp(a, "--records")   ? &o.records
                   : !strcmp(a, "--rate")    ? &o.rate
                   : !strcmp(a, "--timeout") ? &o.timeout_s
                                             : NULL;
    bool small = !strcmp(a, "--partitions") || !strcmp(a, "--seed");
    if (str || num || small) {
      if (i + 1 >= argc) {
        fprintf(stderr, PROG ": %s needs a value\n", a);
        return 2;
      }
      const char *v = argv[++i];
      if (str) {
        *str = v;
        continue;
      }
      int64_t x = 0;
      if (parse_int(a, v, num ? num : &x)) return 2;
      if (!strcmp(a, "--partitions")) {
        if (x < 1 || x > 1024) {
          fprintf(stderr, PROG ": --partitions between 1 and 1024\n");
          return 2;
        }
        o.partitions = (int)x;
      } else if (!strcmp(a, "--seed")) {
        o.seed = (uint64_t)x;
      }
    } else if (a[0] != '-' && o.nargs < MAX_ARGS) {
      o.args[o.nargs++] = a;
    } else {
      fprintf(stderr, PROG ": unknown argument '%s'\n", a);
      return 2;
    }
  }
  if (!strcmp(cmd, "produce")) return cmd_produce(&o);
  if (!strcmp(cmd, "topic")) return cmd_topic(&o);
  if (!strcmp(cmd, "run")) return cmd_run(&o);
  if (!strcmp(cmd, "plans")) return cmd_plans(&o);
  if (!strcmp(cmd, "sinks")) return cmd_sinks(&o);
  if (!strcmp(cmd, "delete")) return cmd_delete(&o);
  fprintf(stderr, PROG ": unknown command '%s' (produce, topic, run, plans, sinks, delete)\n",
          cmd);
  return 2;
}
