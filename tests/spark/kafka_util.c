/*
** kafka_util.c — Kafka helpers for the Spark streaming tests (kafka_util.h).
*/
#include <dirent.h>
#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/dipper_int.h"
#include "formats/avro.h"
#include "formats/formats.h"
#include "kafka_util.h"
#include "spark_env.h"
#include "spark/stream_rules.h"
#include "spark/streaming.h"
#include "spark/translate_stream.h"

static rd_kafka_t *tk_client(rd_kafka_type_t type, const char *brokers, const char *group,
                             char *err, size_t errlen) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, err, errlen) != RD_KAFKA_CONF_OK ||
      (group && rd_kafka_conf_set(conf, "group.id", group, err, errlen) != RD_KAFKA_CONF_OK) ||
      (type == RD_KAFKA_PRODUCER &&
       rd_kafka_conf_set(conf, "enable.idempotence", "true", err, errlen) != RD_KAFKA_CONF_OK)) {
    rd_kafka_conf_destroy(conf);
    return NULL;
  }
  rd_kafka_t *rk = rd_kafka_new(type, conf, err, errlen);
  if (!rk) rd_kafka_conf_destroy(conf); /* on success the client owns conf */
  return rk;
}

static void tk_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int dp_tk_create_topic(const char *brokers, const char *topic, int partitions, char *err,
                       size_t errlen) {
  rd_kafka_t *rk = tk_client(RD_KAFKA_PRODUCER, brokers, NULL, err, errlen);
  if (!rk) return -1;
  int rc = -1;
  rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, 1, err, errlen);
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
      snprintf(err, errlen, "create topic %s at %s: %s", topic, brokers,
               n == 1 ? rd_kafka_topic_result_error_string(tr[0]) : "no answer (is Kafka running? scripts/kafka-local start)");
    if (ev) rd_kafka_event_destroy(ev);
  }
  if (q) rd_kafka_queue_destroy(q);
  if (nt) rd_kafka_NewTopic_destroy(nt);
  /* Wait until the metadata shows every partition with a leader. */
  bool seen = false;
  for (int tries = 0; rc == 0 && tries < 100 && !seen; tries++) {
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    if (rkt && rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      seen = md->topic_cnt == 1 && !md->topics[0].err &&
             md->topics[0].partition_cnt == partitions;
      for (int i = 0; seen && i < md->topics[0].partition_cnt; i++)
        seen = md->topics[0].partitions[i].leader >= 0;
      rd_kafka_metadata_destroy(md);
    }
    if (rkt) rd_kafka_topic_destroy(rkt);
    if (!seen) tk_sleep_ms(100);
  }
  if (rc == 0 && !seen) {
    snprintf(err, errlen, "topic %s did not show up in the metadata of %s", topic, brokers);
    rc = -1;
  }
  rd_kafka_destroy(rk);
  return rc;
}

int dp_tk_produce(const char *brokers, const char *topic, int n, const char *const *values,
                  char *err, size_t errlen) {
  rd_kafka_t *rk = tk_client(RD_KAFKA_PRODUCER, brokers, NULL, err, errlen);
  if (!rk) return -1;
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    rd_kafka_resp_err_t e = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE((void *)(uintptr_t)values[i], strlen(values[i])), RD_KAFKA_V_END);
    if (e) {
      snprintf(err, errlen, "produce to %s: %s", topic, rd_kafka_err2str(e));
      rc = -1;
    }
  }
  rd_kafka_resp_err_t fe = rd_kafka_flush(rk, 30000);
  if (rc == 0 && fe) {
    snprintf(err, errlen, "flush to %s: %s", topic, rd_kafka_err2str(fe));
    rc = -1;
  }
  rd_kafka_destroy(rk);
  return rc;
}

/* Keys and values with their lengths (NULL lens: NUL-terminated text). */
static int tk_produce(const char *brokers, const char *topic, int partition, int n,
                      const char *const *keys, const size_t *key_lens, const char *const *values,
                      const size_t *value_lens, const int64_t *timestamps_ms, char *err,
                      size_t errlen) {
  rd_kafka_t *rk = tk_client(RD_KAFKA_PRODUCER, brokers, NULL, err, errlen);
  if (!rk) return -1;
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    const char *k = keys ? keys[i] : NULL;
    size_t klen = !k ? 0 : key_lens ? key_lens[i] : strlen(k);
    size_t vlen = value_lens ? value_lens[i] : strlen(values[i]);
    rd_kafka_resp_err_t e = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY((void *)(uintptr_t)k, klen),
        RD_KAFKA_V_VALUE((void *)(uintptr_t)values[i], vlen),
        RD_KAFKA_V_TIMESTAMP(timestamps_ms ? timestamps_ms[i] : 0), RD_KAFKA_V_END);
    if (e) {
      snprintf(err, errlen, "produce to %s: %s", topic, rd_kafka_err2str(e));
      rc = -1;
    }
  }
  rd_kafka_resp_err_t fe = rd_kafka_flush(rk, 30000);
  if (rc == 0 && fe) {
    snprintf(err, errlen, "flush to %s: %s", topic, rd_kafka_err2str(fe));
    rc = -1;
  }
  rd_kafka_destroy(rk);
  return rc;
}

int dp_tk_produce_records(const char *brokers, const char *topic, int partition, int n,
                          const char *const *keys, const char *const *values,
                          const int64_t *timestamps_ms, char *err, size_t errlen) {
  return tk_produce(brokers, topic, partition, n, keys, NULL, values, NULL, timestamps_ms, err,
                    errlen);
}

int dp_tk_produce_bytes(const char *brokers, const char *topic, int partition, int n,
                        const char *const *keys, const size_t *key_lens,
                        const char *const *values, const size_t *value_lens, char *err,
                        size_t errlen) {
  return tk_produce(brokers, topic, partition, n, keys, key_lens, values, value_lens, NULL, err,
                    errlen);
}

void dp_tk_free(char **values, int n) {
  for (int i = 0; values && i < n; i++) free(values[i]);
  free(values);
}

void dp_tk_free_records(dp_tk_record *r, int n) {
  for (int i = 0; r && i < n; i++) {
    free(r[i].key);
    free(r[i].value);
  }
  free(r);
}

static char *copy_bytes(const void *p, size_t n) {
  char *c = malloc(n + 1);
  if (!c) return NULL;
  if (n) memcpy(c, p, n);
  c[n] = '\0';
  return c;
}

int dp_tk_consume_records(const char *brokers, const char *topic, int partitions, int expect,
                          int64_t timeout_ms, dp_tk_record **out, char *err, size_t errlen) {
  *out = NULL;
  rd_kafka_t *rk = tk_client(RD_KAFKA_CONSUMER, brokers, "dipper-stream-test-reader", err, errlen);
  if (!rk) return -1;
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; p++)
    rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, l);
  rd_kafka_topic_partition_list_destroy(l);
  int n = 0, cap = 0;
  dp_tk_record *v = NULL;
  int rc = 0;
  /* After the expected count, listen 2 s more: a duplicate must show. */
  int64_t quiet = 0;
  for (int64_t waited = 0; waited < timeout_ms && (n < expect || quiet < 2000); waited += 100) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (n >= expect) quiet += 100;
    if (!m) continue;
    if (!m->err) {
      if (n == cap) {
        cap = cap ? cap * 2 : 16;
        dp_tk_record *nv = realloc(v, (size_t)cap * sizeof *nv);
        if (!nv) {
          rc = -1;
          rd_kafka_message_destroy(m);
          break;
        }
        v = nv;
      }
      memset(&v[n], 0, sizeof v[n]);
      v[n].value = copy_bytes(m->payload, m->len);
      v[n].value_len = m->len;
      if (m->key) {
        v[n].key = copy_bytes(m->key, m->key_len);
        v[n].key_len = m->key_len;
      }
      n++;
      if (!v[n - 1].value || (m->key && !v[n - 1].key)) {
        rc = -1;
        rd_kafka_message_destroy(m);
        break;
      }
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  if (rc) {
    snprintf(err, errlen, "out of memory reading %s", topic);
    dp_tk_free_records(v, n);
    return -1;
  }
  *out = v;
  return n;
}

/* Records as text: the value, or "<key>\t<value>" ("(null)" for no key). */
static int tk_consume(const char *brokers, const char *topic, int partitions, int expect,
                      int64_t timeout_ms, bool with_key, char ***out, char *err, size_t errlen) {
  *out = NULL;
  dp_tk_record *r = NULL;
  int n = dp_tk_consume_records(brokers, topic, partitions, expect, timeout_ms, &r, err, errlen);
  if (n < 0) return -1;
  char **v = calloc((size_t)n + 1, sizeof *v);
  for (int i = 0; v && i < n; i++) {
    if (!with_key) {
      v[i] = r[i].value;
      r[i].value = NULL;
      continue;
    }
    const char *k = r[i].key ? r[i].key : "(null)";
    size_t klen = r[i].key ? r[i].key_len : 6;
    v[i] = malloc(klen + 1 + r[i].value_len + 1);
    if (!v[i]) {
      dp_tk_free(v, i);
      v = NULL;
      break;
    }
    memcpy(v[i], k, klen);
    v[i][klen] = '\t';
    memcpy(v[i] + klen + 1, r[i].value, r[i].value_len + 1);
  }
  dp_tk_free_records(r, n);
  if (!v) {
    snprintf(err, errlen, "out of memory reading %s", topic);
    return -1;
  }
  *out = v;
  return n;
}

int dp_tk_consume(const char *brokers, const char *topic, int partitions, int expect,
                  int64_t timeout_ms, char ***out, char *err, size_t errlen) {
  return tk_consume(brokers, topic, partitions, expect, timeout_ms, false, out, err, errlen);
}

int dp_tk_consume_keyed(const char *brokers, const char *topic, int partitions, int expect,
                        int64_t timeout_ms, char ***out, char *err, size_t errlen) {
  return tk_consume(brokers, topic, partitions, expect, timeout_ms, true, out, err, errlen);
}

/* ---- the Spark streaming harness ---- */


const char *st_spark_remote(void) { return spark_remote(); }

int st_open(st_env *e, const char *what) {
  memset(e, 0, sizeof *e);
  snprintf(e->tag, sizeof e->tag, "dipper_%s_%ld_%ld", what, (long)getpid(), (long)time(NULL));
  snprintf(e->dir, sizeof e->dir, "/tmp/%s", e->tag);
  e->opened_ms = spark_now_ms();
  if (mkdir(e->dir, 0755) != 0) {
    fprintf(stderr, "mkdir %s failed\n", e->dir);
    return -1;
  }
  dp_sc_error err;
  dp_sc_error_init(&err);
  int rc = dp_sc_open(&e->s, st_spark_remote(), &err);
  if (rc) fprintf(stderr, "Spark Connect %s: %s\n", st_spark_remote(), dp_buf_cstr(&err.message));
  dp_sc_error_free(&err);
  return rc;
}

static void st_rmtree(const char *path) {
  DIR *d = opendir(path);
  if (!d) {
    unlink(path);
    return;
  }
  struct dirent *de;
  char sub[1024];
  while ((de = readdir(d)) != NULL) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
    st_rmtree(sub);
  }
  closedir(d);
  rmdir(path);
}

void st_close(st_env *e) {
  if (e->s) {
    /* Stop whatever this session still runs: a failed test leaves nothing behind. */
    dp_sc_error err;
    dp_sc_error_init(&err);
    dp_sq *qs = NULL;
    int n = 0;
    if (dp_sq_active(e->s, &qs, &n, &err) == DIPPER_OK) {
      for (int i = 0; i < n; i++) {
        fprintf(stderr, "stopping query %s left running\n", qs[i].name ? qs[i].name : qs[i].id);
        (void)dp_sq_stop(e->s, &qs[i], &err);
        dp_sq_free(&qs[i]);
      }
      free(qs);
    }
    dp_sc_error_free(&err);
    dp_sc_close(e->s);
    e->s = NULL;
  }
  if (e->dir[0]) st_rmtree(e->dir);
  if (e->tag[0])
    fprintf(stderr, "%s: %.1f s\n", e->tag, (double)(spark_now_ms() - e->opened_ms) / 1000.0);
}

int st_mkdir(const st_env *e, const char *sub) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/%s", e->dir, sub);
  return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

int st_write_file(const st_env *e, const char *sub, const char *name, const char *text) {
  char dir[512], tmp[768], path[768];
  snprintf(dir, sizeof dir, "%s/%s", e->dir, sub);
  mkdir(dir, 0755);
  snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", tmp);
    return -1;
  }
  size_t len = strlen(text);
  int ok = fwrite(text, 1, len, f) == len;
  ok &= fclose(f) == 0;
  if (!ok || rename(tmp, path) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    return -1;
  }
  return 0;
}

static int st_compile(st_env *e, const char *sql, dp_sq *qs, int cap, int *nq, char *why,
                      size_t whylen);

int st_start(st_env *e, const char *sql, dp_sq *q) {
  int n = 0;
  memset(q, 0, sizeof *q);
  return st_compile(e, sql, q, 1, &n, NULL, 0);
}

int st_start_all(st_env *e, const char *sql, dp_sq *qs, int cap, int *n) {
  *n = 0;
  return st_compile(e, sql, qs, cap, n, NULL, 0);
}

int st_refusal(st_env *e, const char *sql, char *why, size_t whylen) {
  int n = 0;
  why[0] = '\0';
  return st_compile(e, sql, NULL, 0, &n, why, whylen);
}

/* Compile sql; check and translate each root of its last statement (the
** first `cap` of them); start each when qs is given.  why: the first
** refusal as "line:col: message" (then nothing is printed). */
static int st_compile(st_env *e, const char *sql, dp_sq *qs, int cap, int *nq, char *why,
                      size_t whylen) {
  for (int i = 0; i < cap; i++) memset(&qs[i], 0, sizeof qs[i]);
  dipper *db = NULL;
  if (dipper_open(&db, "embedded") != DIPPER_OK || !db) return -1;
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "test.sql", &prog);
  if (rc) {
    char *m = dipper_diag_render(db, 0);
    if (why)
      snprintf(why, whylen, "%s", m ? m : "?");
    else
      fprintf(stderr, "compile: %s\n", m ? m : "?");
    free(m);
    dipper_close(db);
    return rc;
  }
  dp_query_plan *qp = &prog->stmts[prog->n - 1].plan;
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, "test.sql", sql, strlen(sql));
  /* What dp_spark_check does at compile time: Spark's streaming rules. */
  rc = dp_spark_stream_check(qp, &d);
  if (rc == DIPPER_OK && qs) {
    /* Settings Spark copies into a new query's checkpoint, set before the
       start as api/spark_run.c sets them. */
    const char *k[16], *v[16];
    int n = dp_spark_stream_confs(db->catalog, k, v, 16);
    dp_sc_error err;
    dp_sc_error_init(&err);
    if (n > 0) rc = dp_sc_config_set(e->s, n < 16 ? n : 16, k, v, &err);
    if (rc) fprintf(stderr, "config: %s\n", dp_buf_cstr(&err.message));
    dp_sc_error_free(&err);
  }
  if (rc == DIPPER_OK) {
    dp_spark_ctx c;
    memset(&c, 0, sizeof c);
    c.arena = a;
    c.diags = &d;
    dp_spark_stream_opts o = {
        .trigger = dp_catalog_option(db->catalog, "dipper.trigger"),
        .checkpoint_dir = dp_catalog_option(db->catalog, "execution.checkpointing.dir")};
    /* One streaming query per INSERT (a statement set has several). */
    for (int r = 0; r < qp->nroots && rc == DIPPER_OK && (!qs || *nq < cap); r++) {
      Spark__Connect__Plan *plan = NULL;
      rc = dp_spark_stream_start_plan(&c, qp, qp->roots[r], &o, &plan);
      if (rc == DIPPER_OK && qs) {
        dp_sc_error err;
        dp_sc_error_init(&err);
        rc = dp_sq_start(e->s, plan, &qs[*nq], &err);
        if (rc)
          fprintf(stderr, "start: %s\n", dp_buf_cstr(&err.message));
        else
          (*nq)++;
        dp_sc_error_free(&err);
      }
    }
  }
  if (why && d.count > 0)
    snprintf(why, whylen, "%d:%d: %s", d.items[0].span.line, d.items[0].span.col,
             d.items[0].message);
  for (int i = 0; i < d.count && !why; i++)
    fprintf(stderr, "refused at %d:%d: %s\n", d.items[i].span.line, d.items[i].span.col,
            d.items[i].message);
  dp_arena_free(a);
  dipper_program_free(prog);
  dipper_close(db);
  return rc;
}

int st_finish(st_env *e, dp_sq *q, int available_now) {
  dp_sc_error err;
  dp_sc_error_init(&err);
  int rc;
  if (available_now) {
    bool done = false;
    rc = dp_sq_await(e->s, q, 240000, &done, &err);
    if (rc == DIPPER_OK && !done) {
      fprintf(stderr, "query %s did not end within 240 s\n", q->name ? q->name : q->id);
      (void)dp_sq_stop(e->s, q, &err);
      rc = -1;
    }
  } else {
    rc = dp_sq_process_all_available(e->s, q, &err);
    int rs = dp_sq_stop(e->s, q, &err);
    if (!rc) rc = rs;
  }
  if (rc > 0) fprintf(stderr, "query %s: %s\n", q->id, dp_buf_cstr(&err.message));
  char *ex = NULL;
  if (dp_sq_exception(e->s, q, &ex, &err) == DIPPER_OK && ex) {
    fprintf(stderr, "query %s failed: %s\n", q->name ? q->name : q->id, ex);
    if (!rc) rc = -1;
  }
  free(ex);
  dp_sc_error_free(&err);
  return rc;
}

int st_drain(st_env *e, dp_sq *q) {
  dp_sc_error err;
  dp_sc_error_init(&err);
  int rc = dp_sq_process_all_available(e->s, q, &err);
  if (rc) fprintf(stderr, "process all available: %s\n", dp_buf_cstr(&err.message));
  dp_sc_error_free(&err);
  return rc;
}

int st_run(st_env *e, const char *sql, int available_now) {
  dp_sq q;
  int rc = st_start(e, sql, &q);
  if (rc == 0) rc = st_finish(e, &q, available_now);
  dp_sq_free(&q);
  return rc;
}

/* The string at row i of a utf8 ("u") or large_utf8 ("U") array. */
static char *st_cell(const struct ArrowSchema *sc, const struct ArrowArray *col, int64_t i) {
  int64_t r = col->offset + i;
  const uint8_t *valid = col->buffers[0];
  if (col->null_count != 0 && valid && !(valid[r / 8] >> (r % 8) & 1)) return strdup("NULL");
  int64_t lo, hi;
  if (sc->format[0] == 'U') {
    const int64_t *off = col->buffers[1];
    lo = off[r];
    hi = off[r + 1];
  } else {
    const int32_t *off = col->buffers[1];
    lo = off[r];
    hi = off[r + 1];
  }
  char *v = malloc((size_t)(hi - lo) + 1);
  if (!v) return NULL;
  memcpy(v, (const char *)col->buffers[2] + lo, (size_t)(hi - lo));
  v[hi - lo] = '\0';
  return v;
}

int st_rows(st_env *e, const char *query, char ***rows) {
  *rows = NULL;
  Spark__Connect__SQL sql;
  spark__connect__sql__init(&sql);
  sql.query = (char *)(uintptr_t)query;
  Spark__Connect__Relation rel;
  spark__connect__relation__init(&rel);
  rel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_SQL;
  rel.sql = &sql;
  dp_arrow_batches b;
  dp_sc_error err;
  dp_sc_error_init(&err);
  int rc = dp_sc_collect(e->s, &rel, &b, &err);
  if (rc) {
    fprintf(stderr, "%s: %s\n", query, dp_buf_cstr(&err.message));
    dp_sc_error_free(&err);
    return -1;
  }
  dp_sc_error_free(&err);
  int n = 0;
  char **v = calloc((size_t)b.rows + 1, sizeof *v);
  const struct ArrowSchema *cs = b.schema.n_children == 1 ? b.schema.children[0] : NULL;
  if (!v || !cs || (strcmp(cs->format, "u") && strcmp(cs->format, "U"))) {
    fprintf(stderr, "%s: wanted one string column\n", query);
    free(v);
    dp_arrow_batches_free(&b);
    return -1;
  }
  for (int k = 0; k < b.n; k++)
    for (int64_t i = 0; i < b.arrays[k].length; i++) v[n++] = st_cell(cs, b.arrays[k].children[0], i);
  dp_arrow_batches_free(&b);
  *rows = v;
  return n;
}

int st_sql(st_env *e, const char *query) {
  Spark__Connect__SQL sql;
  spark__connect__sql__init(&sql);
  sql.query = (char *)(uintptr_t)query;
  Spark__Connect__Relation rel;
  spark__connect__relation__init(&rel);
  rel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_SQL;
  rel.sql = &sql;
  dp_arrow_batches b;
  dp_sc_error err;
  dp_sc_error_init(&err);
  int rc = dp_sc_collect(e->s, &rel, &b, &err);
  if (rc)
    fprintf(stderr, "%s: %s\n", query, dp_buf_cstr(&err.message));
  else
    dp_arrow_batches_free(&b);
  dp_sc_error_free(&err);
  return rc ? -1 : 0;
}

/* The schema of `cols` of `table` in `script`, into s (s->cols malloc'd). */
static int st_avro_schema(const char *script, const char *table, const char *cols, dp_schema *s,
                          dipper **db) {
  s->ncols = 0;
  s->cols = NULL;
  if (dipper_open(db, "embedded") != DIPPER_OK || !*db) return -1;
  dipper_program *prog = NULL;
  if (dipper_compile(*db, script, (size_t)-1, "avro.sql", &prog) != DIPPER_OK) {
    char *m = dipper_diag_render(*db, 0);
    fprintf(stderr, "compile: %s\n", m ? m : "?");
    free(m);
    return -1;
  }
  dipper_program_free(prog);
  const dp_table_def *t = dp_catalog_table((*db)->catalog, table);
  if (!t) {
    fprintf(stderr, "no table `%s` in the script\n", table);
    return -1;
  }
  s->cols = calloc((size_t)t->schema.ncols + 1, sizeof *s->cols);
  if (!s->cols) return -1;
  if (!cols) {
    for (int i = 0; i < t->schema.ncols; i++)
      if (t->cols[i].kind == DP_CK_PHYSICAL) s->cols[s->ncols++] = t->schema.cols[i];
    return 0;
  }
  for (const char *p = cols; *p && s->ncols < t->schema.ncols;) {
    size_t len = strcspn(p, ";");
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)len, p);
    int c = dp_schema_find(&t->schema, name);
    if (c < 0) {
      fprintf(stderr, "no column `%s` in `%s`\n", name, table);
      return -1;
    }
    s->cols[s->ncols++] = t->schema.cols[c];
    p += len + (p[len] == ';');
  }
  return 0;
}

int st_avro_encode(const char *script, const char *table, const char *cols, int n,
                   const char *const *json, char ***out, size_t **lens) {
  *out = calloc((size_t)n + 1, sizeof **out);
  *lens = calloc((size_t)n + 1, sizeof **lens);
  dipper *db = NULL;
  dp_schema s;
  int rc = *out && *lens ? st_avro_schema(script, table, cols, &s, &db) : -1;
  dp_batch *b = rc == 0 ? dp_batch_new(&s, 0) : NULL;
  dp_json_decoder *dec = b ? dp_json_decoder_new(&s, NULL, NULL) : NULL;
  if (!dec) rc = -1;
  dp_buf buf = DP_BUF_INIT;
  for (int i = 0; i < n && rc == 0; i++) {
    dp_format_error fe = {0, ""};
    if (dp_json_decode(dec, json[i], strlen(json[i]), b, &fe) != DIPPER_OK ||
        dp_batch_sync(b) != DIPPER_OK) {
      fprintf(stderr, "row %d %s: %s\n", i, json[i], fe.msg);
      rc = -1;
      break;
    }
    buf.len = 0;
    if (dp_avro_encode_row(b, i, NULL, &buf) != DIPPER_OK || buf.oom) {
      fprintf(stderr, "row %d: Avro encoding failed\n", i);
      rc = -1;
      break;
    }
    (*out)[i] = malloc(buf.len + 1);
    if (!(*out)[i]) rc = -1;
    else memcpy((*out)[i], buf.data, buf.len);
    (*lens)[i] = buf.len;
  }
  dp_buf_free(&buf);
  dp_json_decoder_free(dec);
  dp_batch_free(b);
  free(s.cols);
  dipper_close(db);
  if (rc) {
    dp_tk_free(*out, n);
    free(*lens);
    *out = NULL;
    *lens = NULL;
  }
  return rc;
}

int st_avro_decode(const char *script, const char *table, const char *cols, int n,
                   const dp_tk_record *records, int key, char ***json) {
  *json = calloc((size_t)n + 1, sizeof **json);
  dipper *db = NULL;
  dp_schema s;
  int rc = *json ? st_avro_schema(script, table, cols, &s, &db) : -1;
  dp_batch *b = rc == 0 ? dp_batch_new(&s, 0) : NULL;
  dp_avro_decoder *dec = b ? dp_avro_decoder_new(&s, NULL) : NULL;
  if (!dec) rc = -1;
  dp_buf buf = DP_BUF_INIT;
  for (int i = 0; i < n && rc == 0; i++) {
    const char *d = key ? records[i].key : records[i].value;
    size_t len = key ? records[i].key_len : records[i].value_len;
    dp_format_error fe = {0, ""};
    if (!d || dp_avro_decode(dec, d, len, b, &fe) != DIPPER_OK || dp_batch_sync(b) != DIPPER_OK) {
      fprintf(stderr, "record %d: %s\n", i, d ? fe.msg : "no bytes");
      rc = -1;
      break;
    }
    buf.len = 0;
    dp_json_encode_row(b, i, &buf);
    (*json)[i] = strdup(buf.oom ? "" : dp_buf_cstr(&buf));
    if (!(*json)[i]) rc = -1;
  }
  dp_buf_free(&buf);
  dp_avro_decoder_free(dec);
  dp_batch_free(b);
  free(s.cols);
  dipper_close(db);
  if (rc) {
    dp_tk_free(*json, n);
    *json = NULL;
  }
  return rc;
}

static int st_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void st_sort(char **rows, int n) {
  if (rows && n > 1) qsort(rows, (size_t)n, sizeof *rows, st_cmp);
}

void st_free_rows(char **rows, int n) {
  for (int i = 0; rows && i < n; i++) free(rows[i]);
  free(rows);
}

int st_wait_rows(st_env *e, const char *table, const char *where, int want, int64_t timeout_ms,
                 char ***rows) {
  *rows = NULL;
  int n = -1;
  for (int64_t waited = 0;; waited += 500) {
    n = st_table_json(e, table, where, rows);
    if (n < 0 || n >= want || waited >= timeout_ms) break;
    st_free_rows(*rows, n);
    *rows = NULL;
    tk_sleep_ms(500);
  }
  return n;
}

int st_table_json(st_env *e, const char *table, const char *where, char ***rows) {
  char q[1024];
  snprintf(q, sizeof q,
           "SELECT to_json(struct(*), map('timestampFormat', 'yyyy-MM-dd HH:mm:ss', "
           "'timestampNTZFormat', 'yyyy-MM-dd HH:mm:ss')) AS j FROM %s WHERE %s ORDER BY j",
           table, where ? where : "true");
  return st_rows(e, q, rows);
}

int st_expect(char **rows, int n, const char *const *want, int nwant) {
  int bad = n != nwant;
  for (int i = 0; i < n || i < nwant; i++) {
    const char *got = i < n ? rows[i] : "(none)", *w = i < nwant ? want[i] : "(none)";
    if (strcmp(got, w) != 0) bad = 1;
  }
  if (bad) {
    fprintf(stderr, "rows differ; got %d:\n", n);
    for (int i = 0; i < n; i++) fprintf(stderr, "  %s\n", rows[i]);
    fprintf(stderr, "expected %d:\n", nwant);
    for (int i = 0; i < nwant; i++) fprintf(stderr, "  %s\n", want[i]);
  }
  return bad;
}
