/*
** kafka_sink.c — the `kafka` sink, through librdkafka.
**
** One producer; each row becomes one message: the value encoded by
** the format ('json': keys = column names; 'csv' without its line break;
** 'avro': one datum of the table's declared column types; 'raw'), the key from 'key.fields' in 'key.format', else from the PRIMARY
** KEY as JSON, else none; the writable metadata columns `timestamp` and
** `headers` set the message's timestamp and headers; keys are spread over
** partitions by murmur2, as the Java client does.  commit flushes the
** producer and fails the batch when a message was not delivered
** (at least once: 'sink.delivery-guarantee' = 'exactly-once' is refused,
** there are no transactions; 'sink.partitioner' is not read).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/kafka_int.h"
#include "connectors/records.h"
#include "formats/formats.h"

/* How long commit waits for the producer's deliveries. */
#define FLUSH_TIMEOUT_MS 60000

static const dp_span nowhere = {0, 0, 0, 0};

typedef enum kfmt { FMT_JSON, FMT_CSV, FMT_RAW, FMT_AVRO } kfmt;

typedef struct kafka_sink {
  rd_kafka_t *rk;
  rd_kafka_topic_t *rkt;
  const char *topic;
  kfmt value_fmt, key_fmt;
  dp_csv_options csv_opts;
  int nvalue, nkey;
  int *value_cols, *key_cols; /* input columns of the value and of the key */
  dp_schema value_schema, key_schema;
  int ts_col, headers_col;    /* writable metadata, -1: none */
  dp_buf value, key;
  /* Filled by the delivery callback (on the thread of rd_kafka_poll/flush). */
  int64_t failed;
  char first_error[400];
} kafka_sink;

static kfmt fmt_kind(const char *f) {
  if (f && strcasecmp(f, "csv") == 0) return FMT_CSV;
  if (f && strcasecmp(f, "raw") == 0) return FMT_RAW;
  if (f && strcasecmp(f, "avro") == 0) return FMT_AVRO;
  return FMT_JSON;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  kafka_sink *ks = opaque;
  if (!m->err) return;
  if (ks->failed++ == 0)
    snprintf(ks->first_error, sizeof ks->first_error, "%s", rd_kafka_err2str(m->err));
}

static void kafka_sink_close(dp_sink *k) {
  kafka_sink *ks = k->state;
  if (!ks) return;
  if (ks->rkt) rd_kafka_topic_destroy(ks->rkt);
  if (ks->rk) {
    rd_kafka_flush(ks->rk, 5000);
    rd_kafka_destroy(ks->rk);
  }
  free(ks->value_cols);
  free(ks->key_cols);
  free(ks->value_schema.cols);
  free(ks->key_schema.cols);
  dp_buf_free(&ks->value);
  dp_buf_free(&ks->key);
  free(ks);
  k->state = NULL;
}

static int sink_fail(dp_sink *k, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int sink_fail(dp_sink *k, int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return dp_error(k->diags, code, nowhere, "table `%s`: %s", k->table ? k->table->name : "?", msg);
}

/* The input column named `name` (case-insensitive), or -1. */
static int input_col(const dp_schema *s, const char *name, size_t len) {
  for (int i = 0; i < s->ncols; i++)
    if (strlen(s->cols[i].name) == len && strncasecmp(s->cols[i].name, name, len) == 0) return i;
  return -1;
}

static int set_columns(dp_schema *sch, int **idx, int n, const int *cols, const dp_schema *in) {
  *idx = malloc(((size_t)n + 1) * sizeof **idx);
  sch->cols = malloc(((size_t)n + 1) * sizeof *sch->cols);
  if (!*idx || !sch->cols) return DIPPER_NOMEM;
  sch->ncols = n;
  for (int i = 0; i < n; i++) {
    (*idx)[i] = cols[i];
    sch->cols[i] = in->cols[cols[i]];
  }
  return DIPPER_OK;
}

/* An Avro datum is written with the table's declared types: a reader of the
** table derives its schema from them, NOT NULL (no union) included, and the
** binder's casts may leave an input column nullable where the table's is not. */
static int avro_columns(dp_sink *k, dp_schema *sch, const char *option) {
  const dp_table_def *t = k->table;
  for (int i = 0; i < sch->ncols; i++) {
    int tc = dp_schema_find(&t->schema, sch->cols[i].name);
    if (tc >= 0 && dp_type_equal(t->schema.cols[tc].type, sch->cols[i].type))
      sch->cols[i].type = t->schema.cols[tc].type;
  }
  dp_buf text = DP_BUF_INIT;
  int bad = -1;
  char why[200];
  int rc = dp_avro_schema_json(sch, NULL, &text, &bad, why, sizeof why);
  dp_buf_free(&text);
  if (rc == DIPPER_UNSUPPORTED && bad >= 0)
    return sink_fail(k, DIPPER_UNSUPPORTED,
                     "column `%s` has no Avro form (%s); change it, or use '%s' = 'json'",
                     sch->cols[bad].name, why, option);
  return rc;
}

/* A NULL in a NOT NULL column, which an Avro datum of the table's schema
** cannot hold: the column, or -1. */
static int avro_null_col(const dp_batch *b, const int *cols, int n, const dp_schema *sch,
                         int64_t row) {
  for (int i = 0; i < n; i++)
    if (sch->cols[i].type->not_null && dp_vector_is_null(b->cols[cols[i]], row)) return i;
  return -1;
}

/* Value columns, key columns and the writable metadata of the input. */
static int sink_columns(dp_sink *k, kafka_sink *ks) {
  const dp_table_def *t = k->table;
  const dp_schema *in = k->schema;
  int n = in->ncols;
  int *cols = malloc(((size_t)n + 1) * sizeof *cols);
  if (!cols) return DIPPER_NOMEM;
  int nkey = 0, nvalue = 0, rc = DIPPER_OK;
  ks->ts_col = ks->headers_col = -1;
  /* the key: 'key.fields', else the primary key */
  const char *fields = dp_table_option(t, "key.fields", NULL);
  if (fields) {
    for (const char *p = fields; *p && rc == DIPPER_OK;) {
      size_t len = strcspn(p, ";");
      int c = input_col(in, p, len);
      if (c < 0) {
        char name[160];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        rc = sink_fail(k, DIPPER_NAME, "key field `%s` is not a written column",
                       name);
      } else {
        cols[nkey++] = c;
      }
      p += len + (p[len] == ';');
    }
  } else {
    for (int i = 0; i < t->npk; i++) {
      int c = dp_schema_find(in, t->schema.cols[t->pk[i]].name);
      if (c >= 0) cols[nkey++] = c;
    }
  }
  if (rc == DIPPER_OK) rc = set_columns(&ks->key_schema, &ks->key_cols, nkey, cols, in);
  bool except_key =
      strcasecmp(dp_table_option(t, "value.fields-include", "ALL"), "EXCEPT_KEY") == 0;
  for (int i = 0; i < n && rc == DIPPER_OK; i++) {
    int tc = dp_schema_find(&t->schema, in->cols[i].name);
    if (tc >= 0 && t->cols[tc].kind == DP_CK_METADATA) {
      const char *key = t->cols[tc].metadata_key ? t->cols[tc].metadata_key : in->cols[i].name;
      if (strcasecmp(key, "timestamp") == 0) ks->ts_col = i;
      if (strcasecmp(key, "headers") == 0) ks->headers_col = i;
      continue;
    }
    if (tc >= 0 && t->cols[tc].kind == DP_CK_COMPUTED) continue;
    bool is_key = false;
    for (int j = 0; j < nkey; j++) is_key |= ks->key_cols[j] == i;
    if (except_key && is_key) continue;
    cols[nvalue++] = i;
  }
  if (rc == DIPPER_OK) rc = set_columns(&ks->value_schema, &ks->value_cols, nvalue, cols, in);
  free(cols);
  if (rc != DIPPER_OK) return rc;
  ks->nkey = nkey;
  ks->nvalue = nvalue;
  if (ks->value_fmt == FMT_RAW &&
      (nvalue != 1 || (ks->value_schema.cols[0].type->kind != DP_T_STRING &&
                       ks->value_schema.cols[0].type->kind != DP_T_BYTES)))
    return sink_fail(k, DIPPER_UNSUPPORTED,
                     "format 'raw' writes one STRING or BYTES column as the "
                     "message; write one such column, or use format 'json' or 'csv'");
  if (ks->key_fmt == FMT_RAW && nkey > 0 &&
      (nkey != 1 || (ks->key_schema.cols[0].type->kind != DP_T_STRING &&
                     ks->key_schema.cols[0].type->kind != DP_T_BYTES)))
    return sink_fail(k, DIPPER_UNSUPPORTED,
                     "key format 'raw' writes one STRING or BYTES key column; use "
                     "'key.format' = 'json'");
  if (ks->value_fmt == FMT_AVRO && (rc = avro_columns(k, &ks->value_schema, "format")) != DIPPER_OK)
    return rc;
  if (ks->key_fmt == FMT_AVRO && nkey > 0 &&
      (rc = avro_columns(k, &ks->key_schema, "key.format")) != DIPPER_OK)
    return rc;
  return DIPPER_OK;
}

static int kafka_sink_open(dp_sink *k) {
  if (!k->table)
    return dp_error(k->diags, DIPPER_MISUSE, nowhere, "the Kafka sink needs a table definition");
  kafka_sink *ks = calloc(1, sizeof *ks);
  if (!ks) return DIPPER_NOMEM;
  k->state = ks;
  ks->topic = dp_table_option(k->table, "topic", "");
  ks->value_fmt = fmt_kind(dp_kafka_format(k->table));
  ks->key_fmt = fmt_kind(dp_table_option(k->table, "key.format", "json"));
  ks->csv_opts = dp_csv_default_options();
  const char *delim = dp_table_option(k->table, "csv.field-delimiter",
                                      dp_table_option(k->table, "value.csv.field-delimiter", NULL));
  if (delim && delim[0]) ks->csv_opts.delimiter = delim[0] == '\\' && delim[1] == 't' ? '\t' : delim[0];
  int rc = sink_columns(k, ks);
  if (rc == DIPPER_OK &&
      strcasecmp(dp_table_option(k->table, "sink.delivery-guarantee", "at-least-once"),
                 "exactly-once") == 0)
    rc = sink_fail(k, DIPPER_UNSUPPORTED,
                   "the embedded engine's Kafka sink delivers at least once (a replayed batch "
                   "may be written again); it has no transactions for 'exactly-once': write "
                   "'sink.delivery-guarantee' = 'at-least-once'");
  /* murmur2 as the Java client hashes keys, so that a key lands on the
  ** partition a Java producer (Flink, Spark) would pick. */
  static const char *const defaults[] = {"client.id", "dipper", "partitioner", "murmur2_random",
                                         NULL};
  rd_kafka_conf_t *conf = NULL;
  if (rc == DIPPER_OK) rc = dp_kafka_make_conf(k->diags, k->table, NULL, defaults, &conf);
  /* Idempotence keeps each partition's messages in the order written when a
  ** send is retried (the Java client's default too); it needs acks=all, so
  ** a table that sets its own acks keeps librdkafka's default. */
  if (rc == DIPPER_OK && !dp_table_option(k->table, "properties.enable.idempotence", NULL) &&
      !dp_table_option(k->table, "properties.acks", NULL) &&
      !dp_table_option(k->table, "properties.request.required.acks", NULL))
    rc = dp_kafka_conf_set(k->diags, k->table, conf, "enable.idempotence", "true");
  if (rc != DIPPER_OK && conf) {
    rd_kafka_conf_destroy(conf);
    conf = NULL;
  }
  if (rc == DIPPER_OK) {
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, ks);
    char err[512];
    ks->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!ks->rk) {
      rd_kafka_conf_destroy(conf);
      rc = sink_fail(k, DIPPER_OPTION, "cannot create the Kafka producer: %s", err);
    }
  }
  if (rc == DIPPER_OK && !(ks->rkt = rd_kafka_topic_new(ks->rk, ks->topic, NULL)))
    rc = sink_fail(k, DIPPER_OPTION, "cannot use topic '%s': %s", ks->topic,
                   rd_kafka_err2str(rd_kafka_last_error()));
  if (rc != DIPPER_OK) kafka_sink_close(k);
  return rc;
}

/* Row `row` of the columns `cols` in format f, into out. */
static int encode(kafka_sink *ks, kfmt f, const dp_batch *b, const int *cols, int n,
                  const dp_schema *sch, int64_t row, dp_buf *out, bool *is_null) {
  out->len = 0;
  *is_null = false;
  if (f == FMT_RAW) {
    const dp_vector *v = b->cols[cols[0]];
    if (dp_vector_is_null(v, row)) {
      *is_null = true;
      return DIPPER_OK;
    }
    size_t len;
    const char *p = dp_vector_get_str(v, row, &len);
    dp_buf_put(out, p, len);
    return out->oom ? DIPPER_NOMEM : DIPPER_OK;
  }
  dp_vector *view_cols[64];
  dp_vector **vc = n <= 64 ? view_cols : malloc((size_t)n * sizeof *vc);
  if (!vc) return DIPPER_NOMEM;
  for (int i = 0; i < n; i++) vc[i] = b->cols[cols[i]];
  dp_batch view = {sch, n, vc, b->nrows};
  int rc = f == FMT_CSV    ? dp_csv_encode_row(&view, row, &ks->csv_opts, out)
           : f == FMT_AVRO ? dp_avro_encode_row(&view, row, NULL, out)
                           : dp_json_encode_row(&view, row, out);
  if (vc != view_cols) free(vc);
  if (rc == DIPPER_OK && f == FMT_CSV)
    while (out->len > 0 && (out->data[out->len - 1] == '\n' || out->data[out->len - 1] == '\r'))
      out->len--;
  if (rc == DIPPER_OK && out->oom) rc = DIPPER_NOMEM;
  return rc;
}

static rd_kafka_headers_t *row_headers(const dp_vector *v, int64_t row) {
  if (dp_vector_is_null(v, row)) return NULL;
  int64_t a, z;
  dp_vector_list_bounds(v, row, &a, &z);
  rd_kafka_headers_t *h = rd_kafka_headers_new((size_t)(z - a));
  if (!h) return NULL;
  const dp_vector *keys = v->children[0]->children[0], *vals = v->children[0]->children[1];
  for (int64_t i = a; i < z; i++) {
    size_t klen, vlen = 0;
    const char *key = dp_vector_get_str(keys, i, &klen);
    bool null_val = dp_vector_is_null(vals, i);
    const char *val = null_val ? NULL : dp_vector_get_str(vals, i, &vlen);
    rd_kafka_header_add(h, key, (ssize_t)klen, val, null_val ? 0 : (ssize_t)vlen);
  }
  return h;
}

static int kafka_sink_write(dp_sink *k, int64_t batch_id, const dp_batch *b) {
  (void)batch_id;
  kafka_sink *ks = k->state;
  for (int64_t r = 0; r < b->nrows; r++) {
    bool value_null = false, key_null = true;
    const char *null_col = NULL;
    int bad = -1;
    if (ks->value_fmt == FMT_AVRO &&
        (bad = avro_null_col(b, ks->value_cols, ks->nvalue, &ks->value_schema, r)) >= 0)
      null_col = ks->value_schema.cols[bad].name;
    else if (ks->key_fmt == FMT_AVRO && ks->nkey > 0 &&
             (bad = avro_null_col(b, ks->key_cols, ks->nkey, &ks->key_schema, r)) >= 0)
      null_col = ks->key_schema.cols[bad].name;
    if (null_col)
      return sink_fail(k, DIPPER_DATA,
                       "a row has NULL in column `%s`, declared NOT NULL: an Avro datum of the "
                       "table's schema cannot hold it; filter the NULLs out, or drop NOT NULL",
                       null_col);
    int rc = encode(ks, ks->value_fmt, b, ks->value_cols, ks->nvalue, &ks->value_schema, r,
                    &ks->value, &value_null);
    if (rc == DIPPER_OK && ks->nkey > 0)
      rc = encode(ks, ks->key_fmt, b, ks->key_cols, ks->nkey, &ks->key_schema, r, &ks->key,
                  &key_null);
    if (rc != DIPPER_OK) return rc;
    int64_t ts_ms = 0;
    if (ks->ts_col >= 0 && !dp_vector_is_null(b->cols[ks->ts_col], r)) {
      int64_t us = dp_vector_get_i64(b->cols[ks->ts_col], r);
      ts_ms = us >= 0 ? us / 1000 : -((-us + 999) / 1000);
    }
    rd_kafka_headers_t *hdrs =
        ks->headers_col >= 0 ? row_headers(b->cols[ks->headers_col], r) : NULL;
    for (;;) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          ks->rk, RD_KAFKA_V_RKT(ks->rkt), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_VALUE(value_null ? NULL : ks->value.data, value_null ? 0 : ks->value.len),
          RD_KAFKA_V_KEY(key_null ? NULL : ks->key.data, key_null ? 0 : ks->key.len),
          RD_KAFKA_V_TIMESTAMP(ts_ms), RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break; /* the producer owns hdrs now */
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(ks->rk, 100); /* deliveries make room */
        continue;
      }
      if (hdrs) rd_kafka_headers_destroy(hdrs);
      return sink_fail(k, DIPPER_IO, "cannot send a message to topic '%s': %s",
                       ks->topic, rd_kafka_err2str(err));
    }
  }
  rd_kafka_poll(ks->rk, 0);
  return DIPPER_OK;
}

static int kafka_sink_commit(dp_sink *k, int64_t batch_id) {
  kafka_sink *ks = k->state;
  rd_kafka_resp_err_t err = rd_kafka_flush(ks->rk, FLUSH_TIMEOUT_MS);
  if (err)
    return dp_error(k->diags, DIPPER_TIMEOUT, nowhere,
                    "table `%s`: %d message(s) of batch %lld were not delivered to topic '%s' "
                    "within %d s; is the broker up?",
                    k->table->name, rd_kafka_outq_len(ks->rk), (long long)batch_id, ks->topic,
                    FLUSH_TIMEOUT_MS / 1000);
  if (ks->failed > 0) {
    int64_t n = ks->failed;
    ks->failed = 0;
    return dp_error(k->diags, DIPPER_IO, nowhere,
                    "table `%s`: %lld message(s) of batch %lld could not be delivered to topic "
                    "'%s': %s",
                    k->table->name, (long long)n, (long long)batch_id, ks->topic, ks->first_error);
  }
  return DIPPER_OK;
}

const dp_sink_class dp_sink_kafka = {
    .name = "kafka",
    .open = kafka_sink_open,
    .write = kafka_sink_write,
    .commit = kafka_sink_commit,
    .close = kafka_sink_close,
};
