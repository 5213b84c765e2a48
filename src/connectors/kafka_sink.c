/*
** kafka_sink.c — the `kafka` sink, through librdkafka.
**
** One producer; each row becomes one message: the value encoded by
** the format ('json': keys = column names; 'csv' without its line break;
** 'avro': one datum of the table's declared column types; 'raw'), the key from 'key.fields' in 'key.format', else from the PRIMARY
** KEY as JSON, else none; a row whose change kind is -D (exec/changelog.h:
** the upsert-kafka sink's deletions) is a tombstone, its value NULL; the writable metadata columns `timestamp` and
** `headers` set the message's timestamp and headers; keys are spread over
** partitions by murmur2, as the Java client does ('sink.partitioner' is not
** read).
**
** 'sink.delivery-guarantee': 'none' sends and does not wait; 'at-least-once'
** (the default) has an idempotent producer, and commit flushes it and fails
** the batch when a delivery report is an error (with k->defer, set by the
** driver when there is no checkpoint folder, commit only sends and
** kafka_sink_settle looks at or waits for the acks: connector.h); 'exactly-once' writes each
** batch in one transaction (transactional.id = 'sink.transactional-id-prefix'
** + the table's name).  Open runs init_transactions, which fences an earlier
** producer of the id and ends its open transaction, then reads the marker: the
** committed offset, in the group named after the transactional id, of the
** sink topic's partition 0, which each transaction sets to its batch id + 1
** (send_offsets_to_transaction, metadata "dipper batch N") atomically with the
** rows.  A write or commit of a batch id at or below the marker is skipped, so
** a batch Kafka committed before a crash, run again under the same id by the
** driver, is not written twice.  Without a checkpoint folder batch ids restart
** at 0 and exactly-once is refused.  Close without commit aborts.
*/
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "connectors/kafka_int.h"
#include "connectors/records.h"
#include "core/compiler.h"
#include "exec/changelog.h"
#include "formats/formats.h"

/* How long commit waits for the producer's deliveries. */
#define FLUSH_TIMEOUT_MS 60000

static const dp_span nowhere = {0, 0, 0, 0};

typedef enum kfmt { FMT_JSON, FMT_CSV, FMT_RAW, FMT_AVRO } kfmt;

typedef enum guarantee { DG_NONE, DG_AT_LEAST_ONCE, DG_EXACTLY_ONCE } guarantee;

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
  guarantee dg;
  /* exactly-once */
  char *txn_id;               /* 'sink.transactional-id-prefix' + the table's name */
  rd_kafka_consumer_group_metadata_t *cgmd; /* the marker group (= txn_id) */
  int64_t last_batch;         /* the last batch Kafka committed; -1: none */
  bool in_txn;                /* a transaction is open, for batch txn_batch */
  int64_t txn_batch;
  int64_t last_sent;          /* at-least-once: the last batch committed (sent) */
  bool fatal;                 /* the producer failed for good */
  struct marker_call *marker; /* a marker call still running (see below); NULL: none */
  pthread_t marker_thread;
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

static int sink_fail(dp_sink *k, int code, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;
static int sink_fail(dp_sink *k, int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return dp_error(k->diags, code, nowhere, "table `%s`: %s", k->table ? k->table->name : "?", msg);
}

/* ---- waits and transactions ---- */

static int sink_interrupted(dp_sink *k) {
  return sink_fail(k, DIPPER_INTERRUPTED,
                   "interrupted (dipper_interrupt) while waiting for the Kafka broker");
}

/* Deliver what the producer holds, in slices: DIPPER_OK when nothing is left. */
static int flush_sliced(dp_sink *k, kafka_sink *ks, int total_ms, int *why) {
  dp_kwait w = dp_kwait_start(k->db, total_ms);
  for (int slice; (slice = dp_kwait_slice(&w, why)) > 0;)
    if (rd_kafka_flush(ks->rk, slice) == RD_KAFKA_RESP_ERR_NO_ERROR) return DIPPER_OK;
  return *why;
}

/* Call a transaction step again while its error is retriable (each call
** blocks one slice at most; init, commit and abort resume where the last
** call left off).  NULL on success, else the error (the caller destroys it);
** *why is DIPPER_INTERRUPTED or DIPPER_TIMEOUT when the wait ran out. */
typedef rd_kafka_error_t *(*txn_step)(kafka_sink *ks, int timeout_ms);

static rd_kafka_error_t *txn_retry(dp_sink *k, kafka_sink *ks, txn_step step, int total_ms,
                                   int *why) {
  dp_kwait w = dp_kwait_start(k->db, total_ms);
  rd_kafka_error_t *e = NULL;
  *why = DIPPER_OK;
  for (int slice; (slice = dp_kwait_slice(&w, why)) > 0;) {
    if (e) rd_kafka_error_destroy(e);
    e = step(ks, slice);
    if (!e || !rd_kafka_error_is_retriable(e)) {
      *why = DIPPER_OK;
      return e;
    }
    if (rd_kafka_error_code(e) != RD_KAFKA_RESP_ERR__TIMED_OUT) dp_kwait_nap(&w);
  }
  return e ? e : rd_kafka_error_new(RD_KAFKA_RESP_ERR__TIMED_OUT, "timed out");
}

static rd_kafka_error_t *step_init(kafka_sink *ks, int ms) {
  return rd_kafka_init_transactions(ks->rk, ms);
}
static rd_kafka_error_t *step_commit(kafka_sink *ks, int ms) {
  return rd_kafka_commit_transaction(ks->rk, ms);
}
static rd_kafka_error_t *step_abort(kafka_sink *ks, int ms) {
  return rd_kafka_abort_transaction(ks->rk, ms);
}
/* ---- the batch's marker, on a thread of its own ----
**
** The marker is offset N + 1 of the sink topic's partition 0 in the group
** named after the transactional id, committed with the rows.  Its call,
** rd_kafka_send_offsets_to_transaction, waits for the coordinators' answers
** without a bound in librdkafka 2.0.2 (the timeout only caps its retries):
** with the broker stalled it held a SIGTERM off for as long as the broker
** stayed away.  So it runs on a thread and the batch waits for it in
** slices.  A wait cut short (interrupted, or past its deadline) leaves the
** call running and the sink unusable; close then hands the producer to the
** thread, which destroys it once the call returns. */
typedef struct marker_call {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  bool orphan; /* close left the producer and cgmd to the thread */
  rd_kafka_t *rk;
  rd_kafka_consumer_group_metadata_t *cgmd;
  rd_kafka_topic_partition_list_t *offsets;
  int timeout_ms;
  rd_kafka_error_t *result;
} marker_call;

static void marker_call_free(marker_call *c) {
  if (c->orphan) {
    rd_kafka_destroy(c->rk);
    rd_kafka_consumer_group_metadata_destroy(c->cgmd);
  }
  if (c->result) rd_kafka_error_destroy(c->result);
  rd_kafka_topic_partition_list_destroy(c->offsets);
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static void *marker_main(void *arg) {
  marker_call *c = arg;
  rd_kafka_error_t *e =
      rd_kafka_send_offsets_to_transaction(c->rk, c->offsets, c->cgmd, c->timeout_ms);
  pthread_mutex_lock(&c->mu);
  c->result = e;
  c->done = true;
  bool orphan = c->orphan;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
  if (orphan) marker_call_free(c);
  return NULL;
}

static int marker_start(kafka_sink *ks, int timeout_ms) {
  marker_call *c = calloc(1, sizeof *c);
  if (!c) return DIPPER_NOMEM;
  c->offsets = rd_kafka_topic_partition_list_new(1);
  if (!c->offsets) {
    free(c);
    return DIPPER_NOMEM;
  }
  rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(c->offsets, ks->topic, 0);
  tp->offset = ks->txn_batch + 1;
  char note[64];
  int n = snprintf(note, sizeof note, "dipper batch %lld", (long long)ks->txn_batch);
  if ((tp->metadata = malloc((size_t)n + 1)) != NULL) {
    memcpy(tp->metadata, note, (size_t)n + 1);
    tp->metadata_size = (size_t)n;
  }
  c->rk = ks->rk;
  c->cgmd = ks->cgmd;
  c->timeout_ms = timeout_ms;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&ks->marker_thread, NULL, marker_main, c) != 0) {
    marker_call_free(c);
    return DIPPER_NOMEM;
  }
  ks->marker = c;
  return DIPPER_OK;
}

/* Wait for the running call within w: its result (NULL: success), taken
** and the call freed; or, when w ran out first (*why says why), NULL with
** the call still in ks->marker. */
static rd_kafka_error_t *marker_wait(kafka_sink *ks, const dp_kwait *w, int *why) {
  marker_call *c = ks->marker;
  pthread_mutex_lock(&c->mu);
  for (int slice; !c->done && (slice = dp_kwait_slice(w, why)) > 0;) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_nsec += (long)slice % 1000 * 1000000;
    at.tv_sec += slice / 1000 + at.tv_nsec / 1000000000;
    at.tv_nsec %= 1000000000;
    pthread_cond_timedwait(&c->cv, &c->mu, &at);
  }
  bool done = c->done;
  pthread_mutex_unlock(&c->mu);
  if (!done) return NULL;
  pthread_join(ks->marker_thread, NULL);
  rd_kafka_error_t *e = c->result;
  c->result = NULL;
  marker_call_free(c);
  ks->marker = NULL;
  *why = DIPPER_OK;
  return e;
}

/* The marker into the open transaction, asked again while the error is
** retriable.  As txn_retry, and: when the wait ran out with the call still
** running, NULL with ks->marker set and *why saying why. */
static rd_kafka_error_t *send_marker(dp_sink *k, kafka_sink *ks, int total_ms, int *why) {
  dp_kwait w = dp_kwait_start(k->db, total_ms);
  rd_kafka_error_t *e = NULL;
  *why = DIPPER_OK;
  while (dp_kwait_slice(&w, why) > 0) {
    if (e) rd_kafka_error_destroy(e);
    int64_t left = w.deadline - dp_kafka_now_ms();
    if (marker_start(ks, left > 0 ? (int)left : 1) != DIPPER_OK)
      return rd_kafka_error_new(RD_KAFKA_RESP_ERR__FAIL, "cannot start a thread");
    e = marker_wait(ks, &w, why);
    if (ks->marker) return NULL;
    if (!e || !rd_kafka_error_is_retriable(e)) return e;
    if (rd_kafka_error_code(e) != RD_KAFKA_RESP_ERR__TIMED_OUT) dp_kwait_nap(&w);
  }
  return e ? e : rd_kafka_error_new(RD_KAFKA_RESP_ERR__TIMED_OUT, "timed out");
}

/* Close with a marker call still running: the thread gets the producer. */
static void marker_abandon(kafka_sink *ks) {
  marker_call *c = ks->marker;
  pthread_mutex_lock(&c->mu);
  bool done = c->done;
  if (!done) c->orphan = true;
  pthread_mutex_unlock(&c->mu);
  if (done) {
    pthread_join(ks->marker_thread, NULL);
    marker_call_free(c);
  } else {
    pthread_detach(ks->marker_thread);
    dp_kafka_disown(ks->rk); /* it may outlive the dipper handle: its lines are dropped */
    ks->rk = NULL;
    ks->cgmd = NULL;
  }
  ks->marker = NULL;
}

/* A transaction step failed: abort when the error allows, and say what the
** user can do.  Destroys e. */
static int txn_failed(dp_sink *k, kafka_sink *ks, rd_kafka_error_t *e, int why,
                      const char *what) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", rd_kafka_error_string(e));
  bool fatal = rd_kafka_error_is_fatal(e), abortable = rd_kafka_error_txn_requires_abort(e);
  rd_kafka_error_destroy(e);
  if (why == DIPPER_INTERRUPTED) return sink_interrupted(k);
  if (fatal) {
    ks->fatal = true;
    return sink_fail(k, DIPPER_IO,
                     "the transactional producer '%s' failed for good while %s: %s; if another "
                     "producer with this transactional id took over (a second copy of the query, "
                     "or of another query writing this table with the same "
                     "'sink.transactional-id-prefix'), stop it; then run the query again: it "
                     "resumes from its checkpoint",
                     ks->txn_id, what, msg);
  }
  if (abortable && ks->in_txn) {
    int w2 = DIPPER_OK;
    rd_kafka_error_t *ae = txn_retry(k, ks, step_abort, DP_KAFKA_QUERY_TIMEOUT_MS, &w2);
    if (!ae) ks->in_txn = false;
    if (ae) rd_kafka_error_destroy(ae);
    return sink_fail(k, DIPPER_IO,
                     "the transaction of batch %lld was aborted while %s: %s; read_committed "
                     "consumers never see its rows; run the query again: it resumes from its "
                     "checkpoint and writes the batch again",
                     (long long)ks->txn_batch, what, msg);
  }
  return sink_fail(k, why == DIPPER_TIMEOUT ? DIPPER_TIMEOUT : DIPPER_IO,
                   "Kafka did not complete %s for transactional id '%s': %s; is the broker up?",
                   what, ks->txn_id, msg);
}

/* The last batch whose transaction Kafka committed, from the marker group;
** -1 when none.  After init_transactions, which has finished or aborted any
** transaction a previous producer left. */
static int read_marker(dp_sink *k, kafka_sink *ks) {
  static const char *const fixed[] = {"enable.auto.commit", "false", "isolation.level",
                                      "read_committed", NULL};
  rd_kafka_conf_t *conf = NULL;
  int rc = dp_kafka_make_conf(k->diags, k->table, fixed, NULL, &conf);
  if (rc == DIPPER_OK) rc = dp_kafka_conf_set(k->diags, k->table, conf, "group.id", ks->txn_id);
  /* producer settings of the table mean nothing to this reader */
  if (rc == DIPPER_OK) rd_kafka_conf_set(conf, "log_level", "3", NULL, 0);
  char err[512];
  rd_kafka_t *c = rc == DIPPER_OK ? rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err) : NULL;
  dp_kafka_own(c, k->db);
  if (rc == DIPPER_OK && !c) {
    rd_kafka_conf_destroy(conf);
    return sink_fail(k, DIPPER_OPTION, "cannot create a Kafka consumer: %s", err);
  }
  if (rc != DIPPER_OK) {
    if (conf) rd_kafka_conf_destroy(conf);
    return rc;
  }
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR__TIMED_OUT;
  dp_kwait w = dp_kwait_start(k->db, DP_KAFKA_QUERY_TIMEOUT_MS);
  int why = DIPPER_OK;
  for (int slice; l && (slice = dp_kwait_slice(&w, &why)) > 0;) {
    rd_kafka_topic_partition_list_destroy(l);
    l = rd_kafka_topic_partition_list_new(1);
    if (!l) break;
    rd_kafka_topic_partition_list_add(l, ks->topic, 0);
    e = rd_kafka_committed(c, l, slice);
    if (!e) e = l->elems[0].err;
    if (!dp_kafka_transient(e)) break;
    if (e != RD_KAFKA_RESP_ERR__TIMED_OUT) dp_kwait_nap(&w);
  }
  ks->last_batch = -1;
  if (!l)
    rc = DIPPER_NOMEM;
  else if (e && why == DIPPER_INTERRUPTED)
    rc = sink_interrupted(k);
  else if (e)
    rc = sink_fail(k, DIPPER_CONNECT,
                   "cannot read which batch was last committed to Kafka (group '%s'): %s",
                   ks->txn_id, rd_kafka_err2str(e));
  else if (l->elems[0].offset > 0)
    ks->last_batch = l->elems[0].offset - 1;
  if (l) rd_kafka_topic_partition_list_destroy(l);
  dp_kafka_disown(c);
  rd_kafka_destroy_flags(c, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
  return rc;
}

/* init_transactions (fencing a previous producer of the id and ending its
** open transaction), then the last batch committed. */
static int open_transactions(dp_sink *k, kafka_sink *ks) {
  int why = DIPPER_OK;
  rd_kafka_error_t *e = txn_retry(k, ks, step_init, 3 * DP_KAFKA_QUERY_TIMEOUT_MS, &why);
  if (e) return txn_failed(k, ks, e, why, "initialising transactions");
  if (!(ks->cgmd = rd_kafka_consumer_group_metadata_new(ks->txn_id))) return DIPPER_NOMEM;
  return read_marker(k, ks);
}

/* The first write of a batch opens its transaction. */
static int begin_batch(dp_sink *k, kafka_sink *ks, int64_t batch_id) {
  if (ks->in_txn && ks->txn_batch == batch_id) return DIPPER_OK;
  if (ks->in_txn)
    return sink_fail(k, DIPPER_MISUSE, "batch %lld was written before batch %lld was committed",
                     (long long)batch_id, (long long)ks->txn_batch);
  if (ks->fatal || ks->marker)
    return sink_fail(k, DIPPER_IO, "the transactional producer '%s' failed earlier; run the "
                     "query again", ks->txn_id);
  rd_kafka_error_t *e = rd_kafka_begin_transaction(ks->rk);
  if (e) return txn_failed(k, ks, e, DIPPER_OK, "beginning a transaction");
  ks->in_txn = true;
  ks->txn_batch = batch_id;
  return DIPPER_OK;
}

/* The batch's rows and its marker, committed as one transaction. */
static int commit_batch(dp_sink *k, kafka_sink *ks, int64_t batch_id) {
  if (batch_id <= ks->last_batch || !ks->in_txn) return DIPPER_OK; /* done before, or empty */
  if (ks->marker)
    return sink_fail(k, DIPPER_IO, "the transactional producer '%s' failed earlier; run the "
                     "query again", ks->txn_id);
  int why = DIPPER_OK;
  rd_kafka_error_t *e = send_marker(k, ks, DP_KAFKA_QUERY_TIMEOUT_MS, &why);
  if (ks->marker && why == DIPPER_INTERRUPTED) return sink_interrupted(k);
  if (ks->marker)
    return sink_fail(k, DIPPER_TIMEOUT,
                     "Kafka did not answer within %d s while adding batch %lld's marker to its "
                     "transaction (transactional id '%s'); is the broker up? Run the query "
                     "again: it resumes from its checkpoint",
                     DP_KAFKA_QUERY_TIMEOUT_MS / 1000, (long long)ks->txn_batch, ks->txn_id);
  if (e) return txn_failed(k, ks, e, why, "adding the batch's marker to its transaction");
  e = txn_retry(k, ks, step_commit, FLUSH_TIMEOUT_MS, &why);
  if (e) return txn_failed(k, ks, e, why, "committing the transaction");
  ks->in_txn = false;
  ks->last_batch = batch_id;
  ks->failed = 0; /* a failed delivery fails the commit itself */
  return DIPPER_OK;
}

static void kafka_sink_close(dp_sink *k) {
  kafka_sink *ks = k->state;
  if (!ks) return;
  if (ks->rkt) rd_kafka_topic_destroy(ks->rkt);
  /* The transaction cannot be aborted while its marker call runs (one
  ** transaction call at a time): the broker aborts it (transaction.timeout.ms),
  ** or the next init_transactions of the id does. */
  if (ks->marker) marker_abandon(ks);
  int why = DIPPER_OK;
  if (ks->rk && ks->in_txn && !ks->fatal) {
    /* A batch that was not committed (a failure, a crash of the caller):
    ** its rows never become visible to read_committed consumers.  Should
    ** this not finish (interrupted, the broker away), the next
    ** init_transactions of the id, or transaction.timeout.ms, aborts it. */
    rd_kafka_error_t *e = txn_retry(k, ks, step_abort, 5000, &why);
    if (e) {
      dp_kafka_note(ks->rk, "table `%s`: cannot abort the open transaction of batch %lld: %s",
                    k->table ? k->table->name : "?", (long long)ks->txn_batch,
                    rd_kafka_error_string(e));
      rd_kafka_error_destroy(e);
    }
  } else if (ks->rk && ks->dg != DG_EXACTLY_ONCE) {
    flush_sliced(k, ks, 5000, &why);
  }
  if (ks->rk) {
    dp_kafka_disown(ks->rk);
    rd_kafka_destroy(ks->rk);
  }
  if (ks->cgmd) rd_kafka_consumer_group_metadata_destroy(ks->cgmd);
  free(ks->txn_id);
  free(ks->value_cols);
  free(ks->key_cols);
  free(ks->value_schema.cols);
  free(ks->key_schema.cols);
  dp_buf_free(&ks->value);
  dp_buf_free(&ks->key);
  free(ks);
  k->state = NULL;
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
  /* Flink's key record names its fields less 'key.fields-prefix' (the
  ** table's `k_id` is the key's `id`), as the kafka source reads them. */
  const char *prefix = dp_table_option(t, "key.fields-prefix", "");
  size_t plen = strlen(prefix);
  for (int i = 0; plen && i < nkey; i++)
    if (strncmp(ks->key_schema.cols[i].name, prefix, plen) == 0 &&
        ks->key_schema.cols[i].name[plen])
      ks->key_schema.cols[i].name += plen;
  return DIPPER_OK;
}

/* 'sink.delivery-guarantee', and for exactly-once its transactional id. */
static int open_guarantee(dp_sink *k, kafka_sink *ks) {
  const dp_table_def *t = k->table;
  const char *dg = dp_table_option(t, "sink.delivery-guarantee", "at-least-once");
  if (strcasecmp(dg, "none") == 0) {
    ks->dg = DG_NONE;
    return DIPPER_OK;
  }
  if (strcasecmp(dg, "at-least-once") == 0) {
    ks->dg = DG_AT_LEAST_ONCE;
    return DIPPER_OK;
  }
  if (strcasecmp(dg, "exactly-once") != 0)
    return sink_fail(k, DIPPER_OPTION,
                     "'sink.delivery-guarantee' = '%s' is not one dipper knows; write 'none', "
                     "'at-least-once' or 'exactly-once'",
                     dg);
  ks->dg = DG_EXACTLY_ONCE;
  const char *prefix = dp_table_option(t, "sink.transactional-id-prefix", NULL);
  if (!prefix || !*prefix)
    return sink_fail(k, DIPPER_OPTION,
                     "'sink.delivery-guarantee' = 'exactly-once' needs "
                     "'sink.transactional-id-prefix' (the transactional id is the prefix and the "
                     "table's name; give each query writing this table its own prefix)");
  /* Batch ids start again at 0 without a checkpoint: the batches of a new
  ** run would be taken for ones Kafka already has, and dropped. */
  if (!k->checkpoint)
    return sink_fail(k, DIPPER_UNSUPPORTED,
                     "'sink.delivery-guarantee' = 'exactly-once' needs a checkpoint folder (the "
                     "query's batch ids must carry over restarts); give the query one, or write "
                     "'sink.delivery-guarantee' = 'at-least-once'");
  size_t n = strlen(prefix) + strlen(t->name) + 1;
  if (!(ks->txn_id = malloc(n))) return DIPPER_NOMEM;
  snprintf(ks->txn_id, n, "%s%s", prefix, t->name);
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
  ks->last_batch = -1;
  int rc = sink_columns(k, ks);
  if (rc == DIPPER_OK) rc = open_guarantee(k, ks);
  /* murmur2 as the Java client hashes keys, so that a key lands on the
  ** partition a Java producer (Flink, Spark) would pick. */
  static const char *const defaults[] = {"client.id", "dipper", "partitioner", "murmur2_random",
                                         NULL};
  rd_kafka_conf_t *conf = NULL;
  if (rc == DIPPER_OK) rc = dp_kafka_make_conf(k->diags, k->table, NULL, defaults, &conf);
  /* Idempotence keeps each partition's messages in the order written when a
  ** send is retried (the Java client's default too); it needs acks=all, so
  ** a table that sets its own acks keeps librdkafka's default. */
  if (rc == DIPPER_OK && ks->dg == DG_AT_LEAST_ONCE &&
      !dp_table_option(k->table, "properties.enable.idempotence", NULL) &&
      !dp_table_option(k->table, "properties.acks", NULL) &&
      !dp_table_option(k->table, "properties.request.required.acks", NULL))
    rc = dp_kafka_conf_set(k->diags, k->table, conf, "enable.idempotence", "true");
  if (rc == DIPPER_OK && ks->dg == DG_EXACTLY_ONCE)
    rc = dp_kafka_conf_set(k->diags, k->table, conf, "transactional.id", ks->txn_id);
  if (rc != DIPPER_OK && conf) {
    rd_kafka_conf_destroy(conf);
    conf = NULL;
  }
  if (rc == DIPPER_OK) {
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, ks);
    char err[512];
    ks->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    dp_kafka_own(ks->rk, k->db);
    if (!ks->rk) {
      rd_kafka_conf_destroy(conf);
      rc = sink_fail(k, DIPPER_OPTION, "cannot create the Kafka producer: %s", err);
    }
  }
  if (rc == DIPPER_OK && !(ks->rkt = rd_kafka_topic_new(ks->rk, ks->topic, NULL)))
    rc = sink_fail(k, DIPPER_OPTION, "cannot use topic '%s': %s", ks->topic,
                   rd_kafka_err2str(rd_kafka_last_error()));
  if (rc == DIPPER_OK && ks->dg == DG_EXACTLY_ONCE) rc = open_transactions(k, ks);
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
  kafka_sink *ks = k->state;
  if (ks->dg == DG_EXACTLY_ONCE) {
    if (batch_id <= ks->last_batch) { /* Kafka has this batch already */
      k->rows_skipped += b->nrows;
      return DIPPER_OK;
    }
    if (b->nrows == 0) return DIPPER_OK;
    int rc = begin_batch(k, ks, batch_id);
    if (rc != DIPPER_OK) return rc;
  }
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
    bool tombstone = dp_change_of(b, r) == DP_CHANGE_DELETE;
    int rc = tombstone ? DIPPER_OK
                       : encode(ks, ks->value_fmt, b, ks->value_cols, ks->nvalue,
                                &ks->value_schema, r, &ks->value, &value_null);
    value_null |= tombstone;
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
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && !dp_kafka_interrupted(k->db)) {
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

/* Deliveries that failed, as the batch's error (and the count cleared). */
static int delivery_failed(dp_sink *k, kafka_sink *ks, int64_t batch_id) {
  int64_t n = ks->failed;
  ks->failed = 0;
  return dp_error(k->diags, DIPPER_IO, nowhere,
                  "table `%s`: %lld message(s) of batch %lld or before could not be delivered "
                  "to topic '%s': %s",
                  k->table->name, (long long)n, (long long)batch_id, ks->topic, ks->first_error);
}

/* At-least-once with k->defer: every message sent so far acknowledged? */
static int kafka_sink_settle(dp_sink *k, int wait_ms, bool *settled) {
  kafka_sink *ks = k->state;
  *settled = true;
  if (ks->dg != DG_AT_LEAST_ONCE) return DIPPER_OK; /* commit waited, or nothing waits */
  int why = DIPPER_OK;
  if (wait_ms < 0) wait_ms = FLUSH_TIMEOUT_MS;
  if (wait_ms > 0 && flush_sliced(k, ks, wait_ms, &why) != DIPPER_OK) {
    *settled = false;
    if (why == DIPPER_INTERRUPTED) return sink_interrupted(k);
    return dp_error(k->diags, DIPPER_TIMEOUT, nowhere,
                    "table `%s`: %d message(s) were not delivered to topic '%s' within %d ms; "
                    "is the broker up?",
                    k->table->name, rd_kafka_outq_len(ks->rk), ks->topic, wait_ms);
  }
  rd_kafka_poll(ks->rk, 0);
  if (ks->failed > 0) {
    *settled = false;
    return delivery_failed(k, ks, ks->last_sent);
  }
  *settled = rd_kafka_outq_len(ks->rk) == 0;
  return DIPPER_OK;
}

static int kafka_sink_commit(dp_sink *k, int64_t batch_id) {
  kafka_sink *ks = k->state;
  if (ks->dg == DG_EXACTLY_ONCE) return commit_batch(k, ks, batch_id);
  ks->last_sent = batch_id;
  if (ks->dg == DG_NONE) {
    /* Fire and forget: failures are noted, the batch goes on. */
    rd_kafka_poll(ks->rk, 0);
    if (ks->failed > 0)
      dp_kafka_note(ks->rk, "table `%s`: %lld message(s) were not delivered to topic '%s': %s",
                    k->table->name, (long long)ks->failed, ks->topic, ks->first_error);
    ks->failed = 0;
    return DIPPER_OK;
  }
  if (k->defer) {
    /* Sent; the driver settles (kafka_sink_settle) before the batch counts
    ** as done anywhere, so the next batch runs while the acks come.  A
    ** failure already reported fails this batch. */
    rd_kafka_poll(ks->rk, 0);
    return ks->failed > 0 ? delivery_failed(k, ks, batch_id) : DIPPER_OK;
  }
  int why = DIPPER_OK;
  if (flush_sliced(k, ks, FLUSH_TIMEOUT_MS, &why) != DIPPER_OK) {
    if (why == DIPPER_INTERRUPTED) return sink_interrupted(k);
    return dp_error(k->diags, DIPPER_TIMEOUT, nowhere,
                    "table `%s`: %d message(s) of batch %lld were not delivered to topic '%s' "
                    "within %d s; is the broker up?",
                    k->table->name, rd_kafka_outq_len(ks->rk), (long long)batch_id, ks->topic,
                    FLUSH_TIMEOUT_MS / 1000);
  }
  if (ks->failed > 0) return delivery_failed(k, ks, batch_id);
  return DIPPER_OK;
}

const dp_sink_class dp_sink_kafka = {
    .name = "kafka",
    .open = kafka_sink_open,
    .write = kafka_sink_write,
    .commit = kafka_sink_commit,
    .settle = kafka_sink_settle,
    .close = kafka_sink_close,
};
