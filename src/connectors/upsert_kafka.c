/*
** upsert_kafka.c — the `upsert-kafka` connector (Flink's): a Kafka topic as
** the changelog of a table keyed by its PRIMARY KEY, written and read.
**
** Sink.  Each row is one message keyed by the primary key columns in
** 'key.format' (named less 'key.fields-prefix'); an insertion or an update
** writes the row in 'value.format' (all columns, or 'value.fields-include' =
** 'EXCEPT_KEY' without the key's), and a deletion writes a tombstone: the key
** with a NULL value, which Kafka's log compaction and every upsert-kafka
** reader take as "the key is gone".  The rows come from the sink operator
** (exec/op_sink.c) as upserts: the -U rows of an updating query are left out
** there, the -D rows kept with their change kind, which the kafka sink writes
** as tombstones.  The producer, the formats, the delivery guarantees
** ('at-least-once', 'exactly-once' with 'sink.transactional-id-prefix',
** 'none') and the partitioning by key are the kafka sink's own
** (kafka_sink.c): this file checks what upsert-kafka needs on top and hands
** every call on.
**
** Source.  The topic is read from its earliest offset by the kafka source
** (kafka_source.c, dp_kafka_source_open_upsert) as a table whose
** 'key.fields' is the primary key: a record with a value is an upsert of its
** key, a tombstone (NULL value) a deletion, a record without a key a bad
** record ('dipper.bad-records', placed by topic, partition and offset).  This
** file then does what Flink's ChangelogNormalize does above that source,
** keyed by the primary key: it keeps each key's latest row, and turns
**   a value of a new key (or of a deleted one)  into +I new
**   a value of a live key                      into -U old, +U new
**                                              (nothing when the two rows are equal)
**   a tombstone of a live key                  into -D old (the old row, whole)
**   a tombstone of an unknown or deleted key   into nothing
** record by record in offset order within a partition (a key lives in one
** partition, so the order of a key's changes is the topic's).  The output is
** a retract stream, [I,UB,UA,D] (plan/analyze.c), for the operators that take
** one (exec/changelog.h) and the sinks that do.
**
** State and checkpoints.  The rows live in one batch in arrival order, a hash
** table of the keys (exec/hashtable.h) pointing each at its row or at none
** (deleted); a replaced or deleted row stays, dead, until dead rows outnumber
** the live ones (and are at least 1,024), when the live are copied into a new
** batch; keys deleted are dropped the same way.  The state is part of the
** source's position, which the driver writes to the commit log after each
** batch (connector.h):
**
**   'U' version:u8 (1)  kafka-position:bytes  live rows: one vector_codec
**   batch of the table's physical columns, one row per live key
**
** so a restart restores the rows with the offsets they were read to, and
** the batches logged after it replay to the same bounds and give the same
** changes.  It costs the whole state at every commit, which is right for
** tables of up to some hundred thousand keys; a delta format (as the
** operators' save_delta) is what a larger one would need.  The options are
** checked at CREATE TABLE (plan/connectors.c): 'topic',
** 'properties.bootstrap.servers', 'key.format' and 'value.format' required,
** a PRIMARY KEY required, 'key.fields-prefix' only with EXCEPT_KEY.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/connector.h"
#include "connectors/kafka_int.h"
#include "core/compiler.h"
#include "core/grow.h"
#include "core/vector_codec.h"
#include "exec/changelog.h"
#include "exec/hashtable.h"
#include "plan/catalog.h"

extern const dp_sink_class dp_sink_kafka;
extern const dp_source_class dp_source_kafka;

static const dp_span nowhere = {0, 0, 0, 0};

static int uk_open(dp_sink *k) {
  if (!k->table || k->table->npk == 0)
    return dp_error(k->diags, DIPPER_OPTION, nowhere,
                    "an upsert-kafka table needs a PRIMARY KEY (...) NOT ENFORCED: its columns "
                    "are each message's key");
  return dp_sink_kafka.open(k);
}

static int uk_write(dp_sink *k, int64_t batch_id, const dp_batch *b) {
  return dp_sink_kafka.write(k, batch_id, b);
}

static int uk_commit(dp_sink *k, int64_t batch_id) { return dp_sink_kafka.commit(k, batch_id); }

static void uk_close(dp_sink *k) { dp_sink_kafka.close(k); }

const dp_sink_class dp_sink_upsert_kafka = {
    .name = "upsert-kafka",
    .open = uk_open,
    .write = uk_write,
    .commit = uk_commit,
    .close = uk_close,
};

/* ---- the source ---- */

/* Dead rows (or deleted keys) kept before they are dropped. */
#define COMPACT_MIN 1024

typedef struct uk_source {
  dp_source inner;     /* the kafka source reading the topic */
  dp_table_def itab;   /* the table as it reads it: 'key.fields' = the primary key */
  dp_option *iopts;
  char *key_fields;
  dp_schema ischema;   /* the table's physical and metadata columns, in order */
  int *out_of;         /* per scan column: its column of ischema */
  int npk;
  int *pk;             /* the primary key's columns of ischema */
  const dp_type **ktypes;
  const dp_vector **kcols; /* scratch: key columns of the batch probed */
  dp_batch *raw;       /* one read of the inner source, +I / -D kinds */
  /* ChangelogNormalize's state */
  dp_hashtable ht;     /* primary key -> key id */
  int64_t *row_of;     /* per key id: its row of `rows`, or -1: deleted */
  int64_t row_cap;
  dp_batch *rows;      /* the latest row of each key, and dead rows */
  int64_t live;        /* live keys (= live rows) */
} uk_source;

/* A run-time error of the source's table: "table `t`: " and the message. */
static int uk_fail(dp_source *s, int code, const char *fmt, ...) DP_PRINTF(3, 4);
static int uk_fail(dp_source *s, int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return dp_error(s->diags, code, nowhere, "table `%s`: %s", s->table->name, msg);
}

static void uk_src_close(dp_source *s) {
  uk_source *u = s->state;
  if (!u) return;
  if (u->inner.state) dp_source_kafka.close(&u->inner);
  s->metrics = u->inner.metrics;
  dp_ht_free(&u->ht);
  dp_batch_free(u->raw);
  dp_batch_free(u->rows);
  free(u->row_of);
  free(u->iopts);
  free(u->key_fields);
  free(u->ischema.cols);
  free(u->out_of);
  free(u->pk);
  free(u->ktypes);
  free(u->kcols);
  free(u);
  s->state = NULL;
}

/* The table the kafka source reads: this one, with 'key.fields' naming the
** primary key's columns (their names as declared, prefix and all). */
static int derive_table(dp_source *s, uk_source *u) {
  const dp_table_def *t = s->table;
  size_t len = 1;
  for (int i = 0; i < t->npk; i++) len += strlen(t->schema.cols[t->pk[i]].name) + 1;
  u->key_fields = malloc(len);
  u->iopts = malloc(((size_t)t->noptions + 1) * sizeof *u->iopts);
  if (!u->key_fields || !u->iopts) return DIPPER_NOMEM;
  u->key_fields[0] = '\0';
  for (int i = 0; i < t->npk; i++) {
    if (i) strcat(u->key_fields, ";");
    strcat(u->key_fields, t->schema.cols[t->pk[i]].name);
  }
  int n = 0;
  for (int i = 0; i < t->noptions; i++)
    if (strcmp(t->options[i].key, "key.fields") != 0) u->iopts[n++] = t->options[i];
  memset(&u->iopts[n], 0, sizeof u->iopts[n]);
  u->iopts[n].key = "key.fields";
  u->iopts[n++].value = u->key_fields;
  u->itab = *t;
  u->itab.options = u->iopts;
  u->itab.noptions = n;
  return DIPPER_OK;
}

/* ischema, the scan's columns in it, and the key's. */
static int map_columns(dp_source *s, uk_source *u) {
  const dp_table_def *t = s->table;
  int n = t->schema.ncols;
  u->ischema.cols = malloc(((size_t)n + 1) * sizeof *u->ischema.cols);
  u->out_of = malloc(((size_t)s->schema->ncols + 1) * sizeof *u->out_of);
  u->pk = malloc(((size_t)t->npk + 1) * sizeof *u->pk);
  u->ktypes = malloc(((size_t)t->npk + 1) * sizeof *u->ktypes);
  u->kcols = malloc(((size_t)t->npk + 1) * sizeof *u->kcols);
  if (!u->ischema.cols || !u->out_of || !u->pk || !u->ktypes || !u->kcols) return DIPPER_NOMEM;
  int m = 0;
  for (int i = 0; i < n; i++)
    if (t->cols[i].kind != DP_CK_COMPUTED) u->ischema.cols[m++] = t->schema.cols[i];
  u->ischema.ncols = m;
  for (int c = 0; c < s->schema->ncols; c++) {
    u->out_of[c] = dp_schema_find(&u->ischema, s->schema->cols[c].name);
    if (u->out_of[c] < 0)
      return uk_fail(s, DIPPER_MISUSE, "the scan reads column `%s`, which is not one "
                     "of the table's", s->schema->cols[c].name);
  }
  u->npk = t->npk;
  for (int i = 0; i < t->npk; i++) {
    u->pk[i] = dp_schema_find(&u->ischema, t->schema.cols[t->pk[i]].name);
    if (u->pk[i] < 0)
      return uk_fail(s, DIPPER_MISUSE, "primary key column `%s` is not physical",
                     t->schema.cols[t->pk[i]].name);
    u->ktypes[i] = u->ischema.cols[u->pk[i]].type;
  }
  return DIPPER_OK;
}

static int uk_src_open(dp_source *s) {
  if (!s->table || s->table->npk == 0)
    return dp_error(s->diags, DIPPER_OPTION, nowhere,
                    "an upsert-kafka table needs a PRIMARY KEY (...) NOT ENFORCED: its columns "
                    "are each message's key");
  uk_source *u = calloc(1, sizeof *u);
  if (!u) return DIPPER_NOMEM;
  s->state = u;
  int rc = derive_table(s, u);
  if (rc == DIPPER_OK) rc = map_columns(s, u);
  if (rc == DIPPER_OK) rc = dp_ht_init(&u->ht, u->npk, u->ktypes);
  if (rc == DIPPER_OK) {
    u->raw = dp_batch_new(&u->ischema, 1024);
    u->rows = dp_batch_new(&u->ischema, 1024);
    if (!u->raw || !u->rows ||
        !(u->raw->change = dp_vector_new(dp_type_of(DP_T_TINYINT), 1024)))
      rc = DIPPER_NOMEM;
  }
  if (rc == DIPPER_OK) {
    u->inner = *s;
    u->inner.table = &u->itab;
    u->inner.schema = &u->ischema;
    u->inner.state = NULL;
    memset(&u->inner.metrics, 0, sizeof u->inner.metrics);
    rc = dp_kafka_source_open_upsert(&u->inner); /* closes itself when it fails */
  }
  if (rc != DIPPER_OK) uk_src_close(s);
  return rc;
}

static int uk_src_plan(dp_source *s, int64_t max_rows, bool *exhausted) {
  uk_source *u = s->state;
  return dp_source_kafka.plan_batch(&u->inner, max_rows, exhausted);
}

/* Row `row` of `src` (ischema's columns) out as the scan's row, of `kind`. */
static int emit(dp_batch *out, const uk_source *u, const dp_batch *src, int64_t row, int kind) {
  for (int c = 0; c < out->ncols; c++) {
    int rc = dp_vector_append_from(out->cols[c], src->cols[u->out_of[c]], row);
    if (rc != DIPPER_OK) return rc;
  }
  return dp_vector_append_i64(out->change, kind);
}

static bool rows_equal(const dp_batch *a, int64_t i, const dp_batch *b, int64_t j) {
  for (int c = 0; c < a->ncols; c++)
    if (!dp_ht_row_equal(a->cols[c], i, b->cols[c], j)) return false;
  return true;
}

/* Row r of `src` appended to the store; *at its row there. */
static int store(uk_source *u, const dp_batch *src, int64_t r, int64_t *at) {
  for (int c = 0; c < u->rows->ncols; c++) {
    int rc = dp_vector_append_from(u->rows->cols[c], src->cols[c], r);
    if (rc != DIPPER_OK) {
      for (int k = 0; k < c; k++) dp_vector_truncate(u->rows->cols[k], u->rows->nrows);
      return rc;
    }
  }
  *at = u->rows->nrows++;
  return DIPPER_OK;
}

/* A key id for row r's key (a new one when absent). */
static int key_id(uk_source *u, const dp_batch *b, int64_t r, bool add, int64_t *id) {
  for (int k = 0; k < u->npk; k++) u->kcols[k] = b->cols[u->pk[k]];
  const dp_vector *const *kc = (const dp_vector *const *)u->kcols;
  uint64_t h = dp_ht_hash_row(kc, u->npk, r);
  *id = dp_ht_find(&u->ht, kc, h, r);
  if (*id >= 0 || !add) return DIPPER_OK;
  int rc = dp_ht_add(&u->ht, kc, r, h, id);
  if (rc == DIPPER_OK && dp_grow(&u->row_of, &u->row_cap, *id + 1, sizeof *u->row_of, 1024))
    rc = DIPPER_NOMEM;
  if (rc == DIPPER_OK) u->row_of[*id] = -1;
  return rc;
}

/* One change of the topic, normalized (the table in the header). */
static int normalize(uk_source *u, dp_batch *out, int64_t r) {
  bool tombstone = dp_change_of(u->raw, r) == DP_CHANGE_DELETE;
  int64_t id;
  int rc = key_id(u, u->raw, r, !tombstone, &id);
  if (rc != DIPPER_OK) return rc;
  int64_t old = id >= 0 ? u->row_of[id] : -1;
  if (tombstone) {
    if (old < 0) return DIPPER_OK; /* an unknown key, or one deleted already */
    rc = emit(out, u, u->rows, old, DP_CHANGE_DELETE);
    if (rc == DIPPER_OK) {
      u->row_of[id] = -1;
      u->live--;
    }
    return rc;
  }
  if (old >= 0 && rows_equal(u->rows, old, u->raw, r)) return DIPPER_OK;
  int64_t at;
  rc = store(u, u->raw, r, &at);
  if (rc == DIPPER_OK && old >= 0) rc = emit(out, u, u->rows, old, DP_CHANGE_UPDATE_BEFORE);
  if (rc == DIPPER_OK)
    rc = emit(out, u, u->rows, at, old >= 0 ? DP_CHANGE_UPDATE_AFTER : DP_CHANGE_INSERT);
  if (rc != DIPPER_OK) return rc;
  u->row_of[id] = at;
  if (old < 0) u->live++;
  return DIPPER_OK;
}

/* The live rows, in key order, into a new store; the keys deleted dropped
** from the hash table once they outnumber the live ones. */
static int compact(uk_source *u, bool force) {
  int64_t nkeys = u->ht.ngroups, dead_rows = u->rows->nrows - u->live;
  if (dead_rows == 0 || (!force && (dead_rows < COMPACT_MIN || dead_rows <= u->live)))
    return DIPPER_OK;
  int64_t *sel = malloc(((size_t)u->live + 1) * sizeof *sel);
  dp_batch *rows = dp_batch_new(&u->ischema, u->live > 0 ? u->live : 1);
  int rc = sel && rows ? DIPPER_OK : DIPPER_NOMEM;
  int64_t n = 0;
  for (int64_t id = 0; rc == DIPPER_OK && id < nkeys; id++)
    if (u->row_of[id] >= 0) sel[n++] = u->row_of[id];
  if (rc == DIPPER_OK) rc = dp_batch_take(rows, u->rows, sel, 0, n);
  if (rc != DIPPER_OK) {
    free(sel);
    dp_batch_free(rows);
    return rc;
  }
  n = 0;
  for (int64_t id = 0; id < nkeys; id++)
    if (u->row_of[id] >= 0) u->row_of[id] = n++;
  dp_batch_free(u->rows);
  u->rows = rows;
  free(sel);
  if (nkeys - u->live < COMPACT_MIN || nkeys - u->live <= u->live) return DIPPER_OK;
  bool *keep = malloc((size_t)nkeys + 1);
  int64_t *remap = malloc(((size_t)nkeys + 1) * sizeof *remap);
  rc = keep && remap ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t id = 0; rc == DIPPER_OK && id < nkeys; id++) keep[id] = u->row_of[id] >= 0;
  if (rc == DIPPER_OK) rc = dp_ht_compact(&u->ht, keep, remap);
  if (rc == DIPPER_OK)
    for (int64_t id = 0; id < nkeys; id++)
      if (remap[id] >= 0) u->row_of[remap[id]] = u->row_of[id];
  free(keep);
  free(remap);
  return rc;
}

static int uk_src_read(dp_source *s, dp_batch *out, int64_t want, bool *done) {
  uk_source *u = s->state;
  if (!out->change && !(out->change = dp_vector_new(dp_type_of(DP_T_TINYINT), want)))
    return DIPPER_NOMEM;
  dp_batch_clear(u->raw);
  /* A record gives at most two rows (-U old, +U new). */
  int64_t ask = want / 2 > 0 ? want / 2 : 1;
  int rc = dp_source_kafka.read(&u->inner, u->raw, ask, done);
  s->metrics = u->inner.metrics;
  if (rc == DIPPER_OK) rc = dp_batch_sync(u->raw);
  for (int64_t r = 0; rc == DIPPER_OK && r < u->raw->nrows; r++) rc = normalize(u, out, r);
  if (rc == DIPPER_OK) rc = compact(u, false);
  return rc;
}

static int uk_src_commit(dp_source *s) {
  uk_source *u = s->state;
  int rc = dp_source_kafka.commit(&u->inner);
  s->metrics = u->inner.metrics;
  return rc;
}

#define UK_TAG 'U'
#define UK_VERSION 1

static int uk_src_save_plan(dp_source *s, dp_buf *out) {
  uk_source *u = s->state;
  return dp_source_kafka.save_plan(&u->inner, out);
}

static int uk_src_replay_plan(dp_source *s, dp_rd *in) {
  uk_source *u = s->state;
  return dp_source_kafka.replay_plan(&u->inner, in);
}

static int uk_src_save_position(dp_source *s, dp_buf *out) {
  uk_source *u = s->state;
  dp_buf pos = DP_BUF_INIT;
  int rc = dp_source_kafka.save_position(&u->inner, &pos);
  if (rc == DIPPER_OK) rc = compact(u, true); /* the live rows alone */
  if (rc == DIPPER_OK) {
    dp_put_u8(out, UK_TAG);
    dp_put_u8(out, UK_VERSION);
    dp_put_bytes(out, pos.data, pos.len);
    rc = dp_batch_encode(u->rows, 0, u->rows->nrows, out);
  }
  dp_buf_free(&pos);
  if (rc == DIPPER_OK && out->oom) rc = DIPPER_NOMEM;
  return rc;
}

static int uk_corrupt(dp_source *s, const char *why) {
  return uk_fail(s, DIPPER_CORRUPT,
                 "the checkpoint's position of this upsert-kafka source does not read "
                 "back (%s); it was damaged, or written by another table: start the query with a "
                 "new checkpoint folder",
                 why);
}

static int uk_src_restore_position(dp_source *s, dp_rd *in) {
  uk_source *u = s->state;
  uint8_t tag = dp_get_u8(in), version = dp_get_u8(in);
  size_t len = 0;
  const uint8_t *pos = dp_get_bytes(in, &len);
  if (in->bad) return uk_corrupt(s, "cut short");
  if (tag != UK_TAG) return uk_corrupt(s, "not an upsert-kafka source's position");
  if (version != UK_VERSION) return uk_corrupt(s, "an unknown version");
  dp_rd kin;
  dp_rd_init(&kin, pos, len);
  int rc = dp_source_kafka.restore_position(&u->inner, &kin);
  if (rc != DIPPER_OK) return rc;
  if (u->rows->nrows || u->ht.ngroups) return uk_corrupt(s, "a state restored twice");
  rc = dp_batch_decode(in, u->rows);
  if (rc == DIPPER_CORRUPT) return uk_corrupt(s, "its rows do not decode");
  if (rc != DIPPER_OK) return rc;
  if (!dp_rd_done(in)) return uk_corrupt(s, "bytes left over");
  for (int64_t r = 0; r < u->rows->nrows; r++) {
    int64_t id;
    rc = key_id(u, u->rows, r, false, &id);
    if (rc == DIPPER_OK && id >= 0) return uk_corrupt(s, "a key saved twice");
    if (rc == DIPPER_OK) rc = key_id(u, u->rows, r, true, &id);
    if (rc != DIPPER_OK) return rc;
    u->row_of[id] = r;
    u->live++;
  }
  return DIPPER_OK;
}

static int uk_src_wait_fd(dp_source *s) {
  uk_source *u = s->state;
  return u && u->inner.state ? dp_source_kafka.wait_fd(&u->inner) : -1;
}

const dp_source_class dp_source_upsert_kafka = {
    .name = "upsert-kafka",
    .open = uk_src_open,
    .plan_batch = uk_src_plan,
    .read = uk_src_read,
    .commit = uk_src_commit,
    .close = uk_src_close,
    .save_plan = uk_src_save_plan,
    .save_position = uk_src_save_position,
    .restore_position = uk_src_restore_position,
    .replay_plan = uk_src_replay_plan,
    .wait_fd = uk_src_wait_fd,
};
