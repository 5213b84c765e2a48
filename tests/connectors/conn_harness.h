/*
** conn_harness.h — what the connector tests share: a handle, running SQL
** through the public API, a source opened by hand over a table the SQL
** declared, files in a scratch directory, and an exported result read back.
*/
#ifndef DP_CONN_HARNESS_H
#define DP_CONN_HARNESS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/dipper_int.h"
#include "connectors/connector.h"
#include "formats/formats.h"

/* Compile and run `sql`; on failure the first message is in *msg (static). */
static inline int h_run(dipper *db, const char *sql, const char **msg) {
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "test.sql", &prog);
  if (rc == DIPPER_OK) rc = dipper_run(prog, NULL, NULL);
  static char saved[1024];
  snprintf(saved, sizeof saved, "%s", dipper_errmsg(db));
  if (msg) *msg = saved;
  dipper_program_free(prog);
  return rc;
}

/* A scratch directory, removed (with its files) by h_rmdir. */
static inline char *h_tempdir(void) {
  char *d = strdup("/tmp/dipper-conn-XXXXXX");
  if (!d || !mkdtemp(d)) abort();
  return d;
}

static inline void h_rmdir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
      size_t n = strlen(dir) + strlen(de->d_name) + 2;
      char *p = malloc(n);
      if (!p) abort();
      snprintf(p, n, "%s/%s", dir, de->d_name);
      struct stat sb;
      if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
        h_rmdir(p);
      else
        unlink(p);
      free(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

static inline void h_write(const char *dir, const char *name, const char *text) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  if (!f) abort();
  fputs(text, f);
  fclose(f);
}

/* The file's text (the caller frees it), or NULL when it does not exist. */
static inline char *h_read(const char *dir, const char *name) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 20);
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* Names in dir, sorted, joined by spaces (static). */
static inline int h_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}
static inline const char *h_list(const char *dir) {
  static char out[4096];
  char *names[256];
  int n = 0;
  DIR *d = opendir(dir);
  out[0] = '\0';
  if (!d) return out;
  struct dirent *de;
  while ((de = readdir(d)) != NULL && n < 256)
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) names[n++] = strdup(de->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, h_cmp);
  size_t len = 0;
  for (int i = 0; i < n; i++) {
    len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? " " : "", names[i]);
    free(names[i]);
  }
  return out;
}

/* Column `col` of an exported struct array, as 64-bit integers (int32 or int64). */
static inline int64_t h_i64(const struct ArrowArray *a, const struct ArrowSchema *s, int col,
                            int64_t row) {
  const struct ArrowArray *c = a->children[col];
  const char *fmt = s->children[col]->format;
  if (fmt[0] == 'i') return ((const int32_t *)c->buffers[1])[c->offset + row];
  return ((const int64_t *)c->buffers[1])[c->offset + row];
}

static inline bool h_null(const struct ArrowArray *a, int col, int64_t row) {
  const struct ArrowArray *c = a->children[col];
  const uint8_t *bits = c->buffers[0];
  if (!bits) return false;
  int64_t i = c->offset + row;
  return !((bits[i >> 3] >> (i & 7)) & 1);
}

/* A string cell of an exported array, copied into a static buffer. */
static inline const char *h_str(const struct ArrowArray *a, int col, int64_t row) {
  static char out[256];
  const struct ArrowArray *c = a->children[col];
  const int32_t *offs = c->buffers[1];
  const char *data = c->buffers[2];
  int64_t i = c->offset + row;
  int n = offs[i + 1] - offs[i];
  snprintf(out, sizeof out, "%.*s", n, data + offs[i]);
  return out;
}

/* ---- Kafka: the broker the kafka tests share ----
** For the tests that include librdkafka's header and test.h before this one
** (kafka_test.c, kafka_ft_test.c, upsert_kafka_test.c): the broker's address
** on loopback ($DIPPER_KAFKA_PORT, default 9092; ctest's kafka_broker fixture
** starts it), a tag of this run for topic names, clients, topics made and
** seen with a leader per partition, records produced to known partitions,
** and partition 0 read back as text. */
#ifdef RD_KAFKA_VERSION
#ifndef CHECK
#error "conn_harness.h's Kafka part needs test.h first"
#endif
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

static char h_bootstrap[64];
static char h_run_tag[64]; /* the process id and the time: reruns see their own topics */

/* Fill h_bootstrap and h_run_tag; true when the broker answers (else why on
** stderr, in the words of test `name`). */
static inline bool h_kafka_start(const char *name);

/* A producer (idempotent: a partition keeps the order produced when a send
** is retried) or a consumer of `group` (or none), reading only committed
** records when `committed_only` (transactions) and all otherwise. */
static inline rd_kafka_t *h_kafka_client(rd_kafka_type_t type, const char *group,
                                         bool committed_only) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", h_bootstrap, err, sizeof err);
  if (group) rd_kafka_conf_set(conf, "group.id", group, err, sizeof err);
  if (type == RD_KAFKA_CONSUMER)
    rd_kafka_conf_set(conf, "isolation.level",
                      committed_only ? "read_committed" : "read_uncommitted", err, sizeof err);
  if (type == RD_KAFKA_PRODUCER) rd_kafka_conf_set(conf, "enable.idempotence", "true", err, sizeof err);
  rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "rd_kafka_new: %s\n", err);
    rd_kafka_conf_destroy(conf);
  }
  return rk;
}

static inline bool h_kafka_start(const char *name) {
  const char *port = getenv("DIPPER_KAFKA_PORT");
  snprintf(h_bootstrap, sizeof h_bootstrap, "127.0.0.1:%s", port && *port ? port : "9092");
  snprintf(h_run_tag, sizeof h_run_tag, "%ld-%ld", (long)getpid(), (long)time(NULL));
  rd_kafka_t *rk = h_kafka_client(RD_KAFKA_PRODUCER, NULL, false);
  if (!rk) return false;
  const struct rd_kafka_metadata *md = NULL;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &md, 15000);
  if (err)
    fprintf(stderr,
            "%s: FAILED: no Kafka broker answers on %s (%s); start one with "
            "scripts/kafka-local start (ctest does it through the kafka_broker fixture)\n",
            name, h_bootstrap, rd_kafka_err2str(err));
  if (md) rd_kafka_metadata_destroy(md);
  rd_kafka_destroy(rk);
  return err == RD_KAFKA_RESP_ERR_NO_ERROR;
}

/* Create topic `name` of `partitions` and wait until the metadata shows
** every partition with a leader; the CreateTopics answer's error (printed). */
static inline rd_kafka_resp_err_t h_create_topic(const char *name, int partitions) {
  rd_kafka_t *rk = h_kafka_client(RD_KAFKA_PRODUCER, NULL, false);
  CHECK(rk != NULL);
  if (!rk) return RD_KAFKA_RESP_ERR__FAIL;
  char err[512];
  rd_kafka_resp_err_t made = RD_KAFKA_RESP_ERR__FAIL;
  rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(name, partitions, 1, err, sizeof err);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
  rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
  CHECK(ev != NULL);
  if (ev) {
    const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
    size_t n = 0;
    const rd_kafka_topic_result_t **tr = res ? rd_kafka_CreateTopics_result_topics(res, &n) : NULL;
    if (n == 1) made = rd_kafka_topic_result_error(tr[0]);
    if (n == 1 && made)
      fprintf(stderr, "create topic %s: %s\n", name, rd_kafka_topic_result_error_string(tr[0]));
    rd_kafka_event_destroy(ev);
  }
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
  return made;
}

/* A record to produce: to `partition`, at `ts_ms` (0: the producer's clock),
** `key` and `value` (NULL: none, a tombstone), one header when named. */
typedef struct h_rec {
  int partition;
  int64_t ts_ms;
  const char *key, *value;
  const char *header_name, *header_value;
} h_rec;

static inline void h_produce(const char *topic, const h_rec *recs, int n) {
  rd_kafka_t *rk = h_kafka_client(RD_KAFKA_PRODUCER, NULL, false);
  CHECK(rk != NULL);
  if (!rk) return;
  for (int i = 0; i < n; i++) {
    rd_kafka_headers_t *h = NULL;
    if (recs[i].header_name) {
      h = rd_kafka_headers_new(1);
      rd_kafka_header_add(h, recs[i].header_name, -1, recs[i].header_value, -1);
    }
    const char *v = recs[i].value, *k = recs[i].key;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(recs[i].partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE((void *)(uintptr_t)v, v ? strlen(v) : 0),
        RD_KAFKA_V_KEY((void *)(uintptr_t)k, k ? strlen(k) : 0), RD_KAFKA_V_TIMESTAMP(recs[i].ts_ms),
        RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
    CHECK_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR);
    if (err && h) rd_kafka_headers_destroy(h);
  }
  CHECK_EQ(rd_kafka_flush(rk, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(rk);
}

/* Every record of the topic's partition 0 (up to `expect` of them) as
** "key\tvalue" lines, `null_value` for a tombstone's; with_meta adds the
** timestamp (ms) and header `src`.  Static text. */
static inline const char *h_consume_all(const char *topic, int expect, bool with_meta,
                                        const char *null_value) {
  static char text[8192];
  text[0] = '\0';
  rd_kafka_t *rk = h_kafka_client(RD_KAFKA_CONSUMER, "dipper-test-reader", false);
  CHECK(rk != NULL);
  if (!rk) return text;
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(l, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, l);
  rd_kafka_topic_partition_list_destroy(l);
  size_t len = 0;
  for (int polls = 0, got = 0; got < expect && polls < 300; polls++) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (!m->err) {
      const char *v = m->payload ? (const char *)m->payload : null_value;
      len += (size_t)snprintf(text + len, sizeof text - len, "%.*s\t%.*s", (int)m->key_len,
                              m->key ? (const char *)m->key : "",
                              m->payload ? (int)m->len : (int)strlen(null_value), v);
      if (with_meta) {
        rd_kafka_headers_t *h = NULL;
        const void *hv = NULL;
        size_t hn = 0;
        if (rd_kafka_message_headers(m, &h) || rd_kafka_header_get_last(h, "src", &hv, &hn))
          hv = NULL;
        len += (size_t)snprintf(text + len, sizeof text - len, "\t%" PRId64 "\t%.*s",
                                rd_kafka_message_timestamp(m, NULL), (int)hn,
                                hv ? (const char *)hv : "-");
      }
      len += (size_t)snprintf(text + len, sizeof text - len, "\n");
      got++;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return text;
}
/* SQL text with the broker and topics put in ("%1$s" is not C11): BOOT the
** broker, TOPIC2 `topic2` (when not NULL), TOPIC `topic`.  malloc'd. */
static inline char *h_kafka_sql(const char *tmpl, const char *topic, const char *topic2) {
  size_t cap = strlen(tmpl) * 2 + 1024;
  char *out = malloc(cap);
  if (!out) abort();
  size_t len = 0;
  for (const char *p = tmpl; *p;) {
    if (strncmp(p, "BOOT", 4) == 0) {
      len += (size_t)snprintf(out + len, cap - len, "%s", h_bootstrap);
      p += 4;
    } else if (topic2 && strncmp(p, "TOPIC2", 6) == 0) {
      len += (size_t)snprintf(out + len, cap - len, "%s", topic2);
      p += 6;
    } else if (strncmp(p, "TOPIC", 5) == 0) {
      len += (size_t)snprintf(out + len, cap - len, "%s", topic);
      p += 5;
    } else {
      out[len++] = *p++;
    }
  }
  out[len] = '\0';
  return out;
}
#endif /* RD_KAFKA_VERSION */

#endif /* DP_CONN_HARNESS_H */
