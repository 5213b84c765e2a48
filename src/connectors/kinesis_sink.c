/*
** kinesis_sink.c — the `kinesis` sink: PutRecords through kinesis_client.c.
**
** Each row becomes one record: its data is the row encoded in the table's
** format ('json': keys = column names; 'csv' without its line break; 'avro':
** one datum; 'raw': the one STRING or BYTES column), its partition key the
** writable metadata column `partition-key` when the row has one (not NULL),
** else the PARTITIONED BY columns, else the PRIMARY KEY columns, joined by
** 'sink.partitioner-field-delimiter' ('|'), each as its text (a NULL as
** "null"); a table with none of these spreads rows over the shards with a
** random key per row (Flink's 'random' partitioner).
**
** Rows are kept until the batch commits, then sent in calls of at most
** 'sink.batch.max-size' records (500, the API's limit) and 5 MiB of data
** and keys.  Entries that fail (ProvisionedThroughputExceeded,
** InternalFailure) are sent again with exponential backoff ('sink.backoff.base'
** 100 ms, 'sink.backoff.max' 5 s), at most 'sink.max-retries' (10) times,
** then the batch fails naming the entry's error; a call that is throttled
** or gets no answer (or an HTTP 5xx) is retried the same way.  At-least-once: a batch that
** failed, or ran again after a restart, writes its rows again; and as with
** Flink's sink, an entry sent again lands after records sent later, so order
** per key holds only when nothing was retried.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/kinesis_int.h"
#include "connectors/records.h"
#include "core/grow.h"

/* The API's limits. */
#define MAX_RECORDS_PER_CALL 500
#define MAX_BYTES_PER_CALL (5 * 1024 * 1024)
#define MAX_RECORD_BYTES (1024 * 1024)
#define MAX_KEY_CHARS 256

typedef enum kfmt { FMT_JSON, FMT_CSV, FMT_RAW, FMT_AVRO } kfmt;

typedef struct pending {
  size_t data, ndata, key, nkey; /* offsets into bytes */
} pending;

typedef struct kinesis_sink {
  dipper *db;
  dp_kinesis *kc;
  dp_arena *arena;
  dp_kin_json answer;
  kfmt fmt;
  dp_csv_options csv_opts;
  int nvalue, nkey;
  int *value_cols, *key_cols;
  dp_schema value_schema;
  int key_meta;                  /* the `partition-key` column, -1: none */
  const char *delim;
  dp_buf bytes;
  pending *recs;
  int64_t n, cap;
  int *send, *again;             /* indexes of a call's entries, and of those that failed */
  dp_buf req, val, key, text;
  int64_t batch_max;
  dp_kin_backoff call_backoff;   /* for the call itself (throttled, no answer) */
  dp_kin_backoff entry_backoff;  /* for failed entries */
  uint64_t rng;
} kinesis_sink;

static kfmt fmt_kind(const char *f) {
  if (!f) return FMT_JSON;
  if (!strcasecmp(f, "csv")) return FMT_CSV;
  if (!strcasecmp(f, "raw")) return FMT_RAW;
  if (!strcasecmp(f, "avro")) return FMT_AVRO;
  return FMT_JSON;
}

static void kinesis_sink_close(dp_sink *k) {
  kinesis_sink *ks = k->state;
  if (!ks) return;
  dp_kin_json_close(&ks->answer);
  free(ks->value_cols);
  free(ks->key_cols);
  free(ks->value_schema.cols);
  free(ks->recs);
  free(ks->send);
  free(ks->again);
  dp_buf_free(&ks->bytes);
  dp_buf_free(&ks->req);
  dp_buf_free(&ks->val);
  dp_buf_free(&ks->key);
  dp_buf_free(&ks->text);
  dp_kinesis_free(ks->kc);
  if (ks->arena) dp_arena_free(ks->arena);
  free(ks);
  k->state = NULL;
}

/* The key columns: PARTITIONED BY, else the PRIMARY KEY (table columns that
** the input has). */
static int key_columns(dp_sink *k, kinesis_sink *ks) {
  const dp_table_def *t = k->table;
  int n = t->npartition > 0 ? t->npartition : t->npk;
  const int *cols = t->npartition > 0 ? t->partition : t->pk;
  ks->key_cols = malloc(((size_t)n + 1) * sizeof *ks->key_cols);
  if (!ks->key_cols) return DIPPER_NOMEM;
  for (int i = 0; i < n; i++) {
    int c = dp_schema_find(k->schema, t->schema.cols[cols[i]].name);
    if (c >= 0) ks->key_cols[ks->nkey++] = c;
  }
  return DIPPER_OK;
}

static int sink_columns(dp_sink *k, kinesis_sink *ks) {
  const dp_table_def *t = k->table;
  const dp_schema *in = k->schema;
  ks->key_meta = -1;
  ks->value_cols = malloc(((size_t)in->ncols + 1) * sizeof *ks->value_cols);
  ks->value_schema.cols = malloc(((size_t)in->ncols + 1) * sizeof *ks->value_schema.cols);
  if (!ks->value_cols || !ks->value_schema.cols) return DIPPER_NOMEM;
  for (int i = 0; i < in->ncols; i++) {
    int tc = dp_schema_find(&t->schema, in->cols[i].name);
    if (tc >= 0 && t->cols[tc].kind == DP_CK_METADATA) {
      const char *key = t->cols[tc].metadata_key ? t->cols[tc].metadata_key : in->cols[i].name;
      if (!strcasecmp(key, "partition-key")) ks->key_meta = i;
      continue;
    }
    if (tc >= 0 && t->cols[tc].kind == DP_CK_COMPUTED) continue;
    ks->value_cols[ks->nvalue] = i;
    ks->value_schema.cols[ks->nvalue] = in->cols[i];
    ks->nvalue++;
  }
  ks->value_schema.ncols = ks->nvalue;
  if (ks->fmt == FMT_RAW &&
      (ks->nvalue != 1 || (ks->value_schema.cols[0].type->kind != DP_T_STRING &&
                           ks->value_schema.cols[0].type->kind != DP_T_BYTES)))
    return dp_kinesis_error(ks->kc, DIPPER_UNSUPPORTED,
                            "format 'raw' writes one STRING or BYTES column as the record; "
                            "write one such column, or use format 'json' or 'csv'");
  if (ks->fmt == FMT_AVRO) {
    dp_buf text = DP_BUF_INIT;
    int bad = -1;
    char why[200];
    int rc = dp_avro_schema_json(&ks->value_schema, NULL, &text, &bad, why, sizeof why);
    dp_buf_free(&text);
    if (rc == DIPPER_UNSUPPORTED && bad >= 0)
      return dp_kinesis_error(ks->kc, DIPPER_UNSUPPORTED,
                              "column `%s` has no Avro form (%s); change it, or use 'format' = "
                              "'json'",
                              ks->value_schema.cols[bad].name, why);
    if (rc != DIPPER_OK) return rc;
  }
  return key_columns(k, ks);
}

static int kinesis_sink_open(dp_sink *k) {
  kinesis_sink *ks = calloc(1, sizeof *ks);
  if (!ks) return DIPPER_NOMEM;
  k->state = ks;
  ks->db = k->db;
  const dp_table_def *t = k->table;
  ks->arena = dp_arena_new(0);
  if (!ks->arena) return DIPPER_NOMEM;
  int rc = dp_kinesis_new(k->db, k->diags, t, &ks->kc);
  if (rc != DIPPER_OK) return rc;
  ks->fmt = fmt_kind(t->format);
  ks->csv_opts = dp_csv_default_options();
  ks->delim = dp_table_option(t, "sink.partitioner-field-delimiter", "|");
  ks->batch_max = dp_kinesis_int_option(t, "sink.batch.max-size", MAX_RECORDS_PER_CALL);
  if (ks->batch_max < 1 || ks->batch_max > MAX_RECORDS_PER_CALL)
    ks->batch_max = MAX_RECORDS_PER_CALL;
  ks->entry_backoff = dp_kinesis_backoff(t, "sink.backoff.base", "sink.backoff.max", "-",
                                         "sink.max-retries", (dp_kin_backoff){100, 5000, 2.0, 10});
  ks->call_backoff = ks->entry_backoff;
  ks->rng = (uint64_t)dp_kinesis_now_ms() * 0x9E3779B97F4A7C15ull + (uintptr_t)ks;
  const dp_type *str = dp_type_of(DP_T_STRING);
  dp_field rec[] = {{"SequenceNumber", str}, {"ShardId", str}, {"ErrorCode", str},
                    {"ErrorMessage", str}};
  dp_field ans[] = {{"FailedRecordCount", dp_type_of(DP_T_BIGINT)},
                    {"Records", dp_type_array(ks->arena, dp_type_row(ks->arena, 4, rec))}};
  if (dp_arena_failed(ks->arena)) return DIPPER_NOMEM;
  rc = dp_kin_json_open(&ks->answer, ks->arena, 2, ans);
  if (rc == DIPPER_OK) rc = sink_columns(k, ks);
  return rc;
}

/* ---- one row ---- */

static int encode_value(kinesis_sink *ks, const dp_batch *b, int64_t row) {
  dp_buf *out = &ks->val;
  out->len = 0;
  out->oom = false;
  if (ks->fmt == FMT_RAW) {
    const dp_vector *v = b->cols[ks->value_cols[0]];
    if (!dp_vector_is_null(v, row)) {
      size_t len;
      const char *p = dp_vector_get_str(v, row, &len);
      dp_buf_put(out, p, len);
    }
    return out->oom ? DIPPER_NOMEM : DIPPER_OK;
  }
  dp_vector *view_cols[64];
  int n = ks->nvalue;
  dp_vector **vc = n <= 64 ? view_cols : malloc((size_t)n * sizeof *vc);
  if (!vc) return DIPPER_NOMEM;
  for (int i = 0; i < n; i++) vc[i] = b->cols[ks->value_cols[i]];
  dp_batch view = {&ks->value_schema, n, vc, b->nrows};
  int rc = ks->fmt == FMT_CSV    ? dp_csv_encode_row(&view, row, &ks->csv_opts, out)
           : ks->fmt == FMT_AVRO ? dp_avro_encode_row(&view, row, NULL, out)
                                 : dp_json_encode_row(&view, row, out);
  if (vc != view_cols) free(vc);
  if (rc == DIPPER_OK && ks->fmt == FMT_CSV)
    while (out->len > 0 && (out->data[out->len - 1] == '\n' || out->data[out->len - 1] == '\r'))
      out->len--;
  if (rc == DIPPER_OK && out->oom) rc = DIPPER_NOMEM;
  return rc;
}

/* One value's text in a partition key: a string as it is, others as their
** JSON text without quotes, NULL as "null". */
static void key_part(kinesis_sink *ks, const dp_vector *v, int64_t row) {
  if (dp_vector_is_null(v, row)) {
    dp_buf_puts(&ks->key, "null");
    return;
  }
  if (v->type->kind == DP_T_STRING) {
    size_t len;
    const char *p = dp_vector_get_str(v, row, &len);
    dp_buf_put(&ks->key, p, len);
    return;
  }
  ks->text.len = 0;
  dp_json_put_value(&ks->text, v, row);
  const char *p = ks->text.data ? ks->text.data : "";
  size_t len = ks->text.len;
  if (len >= 2 && p[0] == '"' && p[len - 1] == '"') p++, len -= 2;
  dp_buf_put(&ks->key, p, len);
}

static size_t utf8_chars(const char *p, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += ((unsigned char)p[i] & 0xC0) != 0x80;
  return c;
}

static int encode_key(kinesis_sink *ks, const dp_batch *b, int64_t row) {
  dp_buf *out = &ks->key;
  out->len = 0;
  out->oom = false;
  if (ks->key_meta >= 0 && !dp_vector_is_null(b->cols[ks->key_meta], row)) {
    size_t len;
    const char *p = dp_vector_get_str(b->cols[ks->key_meta], row, &len);
    dp_buf_put(out, p, len);
  } else if (ks->nkey > 0) {
    for (int i = 0; i < ks->nkey; i++) {
      if (i) dp_buf_puts(out, ks->delim);
      key_part(ks, b->cols[ks->key_cols[i]], row);
    }
  } else {
    ks->rng ^= ks->rng << 13, ks->rng ^= ks->rng >> 7, ks->rng ^= ks->rng << 17;
    dp_buf_printf(out, "%016llx", (unsigned long long)ks->rng);
  }
  if (out->oom) return DIPPER_NOMEM;
  size_t chars = utf8_chars(out->data ? out->data : "", out->len);
  if (chars == 0 || chars > MAX_KEY_CHARS)
    return dp_kinesis_error(ks->kc, DIPPER_DATA,
                            "row %lld: a Kinesis partition key has 1 to %d characters, this one "
                            "has %zu",
                            (long long)row, MAX_KEY_CHARS, chars);
  return DIPPER_OK;
}

static int kinesis_sink_write(dp_sink *k, int64_t batch_id, const dp_batch *b) {
  (void)batch_id;
  kinesis_sink *ks = k->state;
  for (int64_t r = 0; r < b->nrows; r++) {
    int rc = encode_value(ks, b, r);
    if (rc == DIPPER_OK) rc = encode_key(ks, b, r);
    if (rc != DIPPER_OK) return rc;
    if (ks->val.len + ks->key.len > MAX_RECORD_BYTES)
      return dp_kinesis_error(ks->kc, DIPPER_LIMIT,
                              "row %lld: a Kinesis record holds at most 1 MiB of data and key, "
                              "this one has %zu bytes",
                              (long long)r, ks->val.len + ks->key.len);
    if (dp_grow(&ks->recs, &ks->cap, ks->n + 1, sizeof *ks->recs, 256) != DIPPER_OK)
      return DIPPER_NOMEM;
    pending *p = &ks->recs[ks->n];
    p->data = ks->bytes.len;
    p->ndata = ks->val.len;
    dp_buf_put(&ks->bytes, ks->val.data, ks->val.len);
    p->key = ks->bytes.len;
    p->nkey = ks->key.len;
    dp_buf_put(&ks->bytes, ks->key.data, ks->key.len);
    if (ks->bytes.oom) return DIPPER_NOMEM;
    ks->n++;
  }
  return DIPPER_OK;
}

/* ---- sending ---- */

static int build_request(kinesis_sink *ks, const int *idx, int n) {
  dp_buf *q = &ks->req;
  q->len = 0;
  q->oom = false;
  const char *stream = dp_kinesis_stream(ks->kc);
  dp_buf_puts(q, "{\"StreamName\":");
  dp_json_put_string(q, stream, strlen(stream));
  dp_buf_puts(q, ",\"Records\":[");
  for (int i = 0; i < n; i++) {
    const pending *p = &ks->recs[idx[i]];
    dp_buf_puts(q, i ? ",{\"Data\":\"" : "{\"Data\":\"");
    dp_base64_put(q, (const unsigned char *)ks->bytes.data + p->data, p->ndata);
    dp_buf_puts(q, "\",\"PartitionKey\":");
    dp_json_put_string(q, ks->bytes.data + p->key, p->nkey);
    dp_buf_putc(q, '}');
  }
  dp_buf_puts(q, "]}");
  return q->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* Send the n entries idx[] until every one is in, or the retries are spent. */
static int put_records(kinesis_sink *ks, int *idx, int n) {
  for (int attempt = 0;; attempt++) {
    int rc = build_request(ks, idx, n);
    if (rc == DIPPER_OK)
      rc = dp_kinesis_call(ks->kc, "PutRecords", ks->req.data, ks->req.len, &ks->call_backoff);
    if (rc != DIPPER_OK) return rc == DIPPER_NOMEM ? rc : dp_kinesis_fail(ks->kc, "PutRecords");
    size_t len = 0;
    const char *body = dp_kinesis_answer(ks->kc, &len);
    dp_format_error fe;
    rc = dp_kin_json_parse(&ks->answer, body, len, &fe);
    if (rc == DIPPER_PROTOCOL)
      return dp_kinesis_error(ks->kc, DIPPER_PROTOCOL,
                              "Kinesis PutRecords: an answer that does not read (%s)", fe.msg);
    if (rc != DIPPER_OK) return rc;
    const dp_vector *list = ks->answer.row->cols[1];
    int64_t lo = 0, hi = 0;
    if (!dp_vector_is_null(list, 0)) dp_vector_list_bounds(list, 0, &lo, &hi);
    if (hi - lo != n)
      return dp_kinesis_error(ks->kc, DIPPER_PROTOCOL,
                              "Kinesis PutRecords answered %lld entries for %d records",
                              (long long)(hi - lo), n);
    const dp_vector *codes = list->children[0]->children[2];
    const dp_vector *msgs = list->children[0]->children[3];
    int failed = 0;
    char first[320] = "";
    for (int i = 0; i < n; i++) {
      size_t cn = 0, mn = 0;
      const char *code = dp_kin_str(codes, lo + i, &cn);
      if (!code || cn == 0) continue;
      if (!first[0]) {
        const char *msg = dp_kin_str(msgs, lo + i, &mn);
        snprintf(first, sizeof first, "%.*s: %.*s", (int)cn, code, (int)(msg ? mn : 0),
                 msg ? msg : "");
      }
      idx[failed++] = idx[i];
    }
    if (failed == 0) return DIPPER_OK;
    if (attempt >= ks->entry_backoff.max_retries)
      return dp_kinesis_error(ks->kc, DIPPER_REMOTE,
                              "Kinesis PutRecords on stream `%s`: %d records still failed after "
                              "%d retries (%s)",
                              dp_kinesis_stream(ks->kc), failed, attempt, first);
    dp_kinesis_note(ks->kc, "PutRecords: %d of %d records failed (%s); sending them again",
                    failed, n, first);
    if (!dp_kinesis_sleep(ks->db, dp_kinesis_backoff_ms(&ks->entry_backoff, attempt)))
      return dp_kinesis_error(ks->kc, DIPPER_INTERRUPTED,
                              "interrupted (dipper_interrupt) while sending to Kinesis");
    n = failed;
  }
}

static int kinesis_sink_commit(dp_sink *k, int64_t batch_id) {
  (void)batch_id;
  kinesis_sink *ks = k->state;
  if (ks->n == 0) return DIPPER_OK;
  free(ks->send);
  ks->send = malloc((size_t)ks->batch_max * sizeof *ks->send);
  if (!ks->send) return DIPPER_NOMEM;
  int64_t i = 0;
  int rc = DIPPER_OK;
  while (i < ks->n && rc == DIPPER_OK) {
    int n = 0;
    size_t bytes = 0;
    while (i < ks->n && n < ks->batch_max) {
      size_t sz = ks->recs[i].ndata + ks->recs[i].nkey;
      if (n > 0 && bytes + sz > MAX_BYTES_PER_CALL) break;
      bytes += sz;
      ks->send[n++] = (int)i++;
    }
    rc = put_records(ks, ks->send, n);
  }
  ks->n = 0;
  ks->bytes.len = 0;
  return rc;
}

const dp_sink_class dp_sink_kinesis = {
    .name = "kinesis",
    .open = kinesis_sink_open,
    .write = kinesis_sink_write,
    .commit = kinesis_sink_commit,
    .close = kinesis_sink_close,
};
