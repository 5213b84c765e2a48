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
** batch; keys deleted are dropped the same way.  With 'table.exec.state.ttl'
** a key not written for that long in processing time (the batch's time,
** taken when it is planned and logged with its bounds) is forgotten with no change out, as
** Flink's state TTL does to ChangelogNormalize: a later value of it is +I,
** a later tombstone nothing; and a value equal to the kept row gives -U/+U
** (Flink emits then too, so that the state downstream is renewed with it).
**
** The state is part of the source's position, which the driver writes to
** the commit log after each batch (connector.h), but not whole: with a
** checkpoint folder the source keeps files of its own in
** <query folder>/upsert-<table>-<n>/state/<seq> (exec/checkpoint.h's record
** format; n: the n-th upsert-kafka scan of that table in the query, as the
** plan opens them), one per batch that changed a key:
**
**   snapshot  'F' rows:batch  times          the live rows whole, key order
**   delta     'D' rows:batch  times  gone:batch   the rows of the keys the
**             batch wrote (inserted or updated), the keys it dropped
**             (tombstones, TTL); one vector_codec batch each
**   times     u8 (1: a TTL was set) [per row svar: its last write, as a
**             delta on the row's before]
**
** and the position names the chain a restart reads:
**
**   'U' version:u8 (2)  kafka-position:bytes  snapshot:svar  last:svar
**
** (-1 -1: nothing kept yet).  A file is a snapshot first, after 100 deltas,
** and when the deltas since the last snapshot would outweigh it; a snapshot
** purges the files before the snapshot it follows, so the two newest chains
** stay.  So a batch costs the keys it changed, and a restart reads the rows
** with the offsets they were read to from one commit record and its chain;
** a batch logged after it replays to the same bounds and gives the same
** changes, and writes its file again under the same number (a file after
** the chain, left by a crash before its commit record, is overwritten).
** Version 1 (the live rows whole, in the position, with no times) is still
** read; the first file after it is a snapshot.  The options are
** checked at CREATE TABLE (plan/connectors.c): 'topic',
** 'properties.bootstrap.servers', 'key.format' and 'value.format' required,
** a PRIMARY KEY required, 'key.fields-prefix' only with EXCEPT_KEY.
*/
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/connector.h"
#include "connectors/kafka_int.h"
#include "core/compiler.h"
#include "core/grow.h"
#include "core/session.h"
#include "core/vector_codec.h"
#include "exec/changelog.h"
#include "exec/checkpoint.h"
#include "exec/hashtable.h"
#include "exec/state_ttl.h"
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
/* A snapshot of the kept rows after this many deltas at most. */
#define DELTAS_PER_SNAPSHOT 100

typedef struct uk_source {
  dp_source inner;     /* the kafka source reading the topic */
  dp_table_def itab;   /* the table as it reads it: 'key.fields' = the primary key */
  dp_option *iopts;
  char *key_fields;
  dp_schema ischema;   /* the table's physical and metadata columns, in order */
  dp_schema kschema;   /* the primary key's columns */
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
  /* 'table.exec.state.ttl': the live keys by last write (processing time) */
  int64_t ttl;         /* µs; 0: kept forever */
  dp_state_ttl tl;
  int64_t now;         /* the planned batch's processing time (µs), in its bounds */
  int64_t replay_now;  /* replay_plan's, for the next plan; -1: none */
  /* The kept rows' files (the header): NULL without a checkpoint folder */
  dp_ckpt *ck;
  char *claim;         /* the folder's name, held in this process */
  int64_t *dirty;      /* key ids changed since the last file, each once */
  int64_t ndirty, dirty_cap;
  uint8_t *dirty_of;   /* per key id: in `dirty` */
  int64_t dirty_of_cap;
  bool all_dirty;      /* the next file is a snapshot (a version-1 position restored) */
  int64_t base, last;  /* the snapshot and the last file the next position names; -1: none */
  int64_t older;       /* the snapshot before `base`, or -1 */
  int64_t snap_bytes, chain_bytes, chain_len; /* base's size; the deltas' since it */
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

/* ---- the folders' names held in this process ----
** Each upsert-kafka scan of a query keeps its files in a folder of the
** query's checkpoint folder named by its table and an ordinal: the first one
** no scan of this process holds.  Scans open in the plan's order, so a
** restart of the same query gives each scan the folder it had. */

typedef struct uk_claim {
  struct uk_claim *next;
  char *path;
} uk_claim;

static pthread_mutex_t claims_lock = PTHREAD_MUTEX_INITIALIZER;
static uk_claim *claims;

static bool claimed(const char *path) {
  for (uk_claim *c = claims; c; c = c->next)
    if (strcmp(c->path, path) == 0) return true;
  return false;
}

/* *name: "upsert-<table>-<n>" for the first n free under `root`. */
static int claim_folder(const char *root, const char *table, char **name) {
  *name = NULL;
  int rc = DIPPER_OK;
  pthread_mutex_lock(&claims_lock);
  for (int n = 0; !*name && rc == DIPPER_OK; n++) {
    dp_buf nm = DP_BUF_INIT, path = DP_BUF_INIT;
    dp_buf_printf(&nm, "upsert-%s-%d", table, n);
    dp_buf_printf(&path, "%s/%s", root, dp_buf_cstr(&nm));
    uk_claim *c = NULL;
    if (nm.oom || path.oom) rc = DIPPER_NOMEM;
    else if (!claimed(dp_buf_cstr(&path))) {
      if (!(c = malloc(sizeof *c))) rc = DIPPER_NOMEM;
      else {
        c->path = dp_buf_take(&path);
        *name = dp_buf_take(&nm);
        if (!c->path || !*name) {
          free(c->path);
          free(*name);
          free(c);
          *name = NULL;
          rc = DIPPER_NOMEM;
        } else {
          c->next = claims;
          claims = c;
        }
      }
    }
    dp_buf_free(&nm);
    dp_buf_free(&path);
  }
  pthread_mutex_unlock(&claims_lock);
  return rc;
}

static void release_folder(const char *root, const char *name) {
  dp_buf path = DP_BUF_INIT;
  dp_buf_printf(&path, "%s/%s", root, name);
  pthread_mutex_lock(&claims_lock);
  for (uk_claim **pc = &claims; !path.oom && *pc; pc = &(*pc)->next)
    if (strcmp((*pc)->path, dp_buf_cstr(&path)) == 0) {
      uk_claim *c = *pc;
      *pc = c->next;
      free(c->path);
      free(c);
      break;
    }
  pthread_mutex_unlock(&claims_lock);
  dp_buf_free(&path);
}

static void uk_src_close(dp_source *s) {
  uk_source *u = s->state;
  if (!u) return;
  if (u->inner.state) dp_source_kafka.close(&u->inner);
  s->metrics = u->inner.metrics;
  dp_ckpt_close(u->ck);
  if (u->claim) release_folder(s->checkpoint, u->claim);
  free(u->claim);
  dp_ht_free(&u->ht);
  dp_state_ttl_free(&u->tl);
  dp_batch_free(u->raw);
  dp_batch_free(u->rows);
  free(u->row_of);
  free(u->dirty);
  free(u->dirty_of);
  free(u->iopts);
  free(u->key_fields);
  free(u->ischema.cols);
  free(u->kschema.cols);
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
  u->kschema.cols = malloc(((size_t)t->npk + 1) * sizeof *u->kschema.cols);
  u->out_of = malloc(((size_t)s->schema->ncols + 1) * sizeof *u->out_of);
  u->pk = malloc(((size_t)t->npk + 1) * sizeof *u->pk);
  u->ktypes = malloc(((size_t)t->npk + 1) * sizeof *u->ktypes);
  u->kcols = malloc(((size_t)t->npk + 1) * sizeof *u->kcols);
  if (!u->ischema.cols || !u->kschema.cols || !u->out_of || !u->pk || !u->ktypes || !u->kcols)
    return DIPPER_NOMEM;
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
    u->kschema.cols[i] = u->ischema.cols[u->pk[i]];
  }
  u->kschema.ncols = t->npk;
  return DIPPER_OK;
}

/* 'table.exec.state.ttl' of the session, µs (0: none). */
static int64_t session_ttl(const dp_source *s) {
  const char *v = s->db ? dp_session_option(s->db, "table.exec.state.ttl") : NULL;
  int64_t us = 0;
  if (!v || dp_parse_duration(v, &us) != DIPPER_OK || us < 0) return 0;
  return us;
}

static int uk_src_open(dp_source *s) {
  if (!s->table || s->table->npk == 0)
    return dp_error(s->diags, DIPPER_OPTION, nowhere,
                    "an upsert-kafka table needs a PRIMARY KEY (...) NOT ENFORCED: its columns "
                    "are each message's key");
  uk_source *u = calloc(1, sizeof *u);
  if (!u) return DIPPER_NOMEM;
  s->state = u;
  u->base = u->last = u->older = u->replay_now = -1;
  u->ttl = session_ttl(s);
  int rc = derive_table(s, u);
  if (rc == DIPPER_OK) rc = map_columns(s, u);
  if (rc == DIPPER_OK) rc = dp_ht_init(&u->ht, u->npk, u->ktypes);
  if (rc == DIPPER_OK && u->ttl > 0) rc = dp_state_ttl_init(&u->tl, u->ttl);
  if (rc == DIPPER_OK) {
    u->raw = dp_batch_new(&u->ischema, 1024);
    u->rows = dp_batch_new(&u->ischema, 1024);
    if (!u->raw || !u->rows ||
        !(u->raw->change = dp_vector_new(dp_type_of(DP_T_TINYINT), 1024)))
      rc = DIPPER_NOMEM;
  }
  if (rc == DIPPER_OK && s->checkpoint) {
    rc = claim_folder(s->checkpoint, s->table->name, &u->claim);
    if (rc == DIPPER_OK) rc = dp_ckpt_open(s->checkpoint, u->claim, s->diags, &u->ck);
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

/* The batch's time is the source's own, taken when it is planned and kept
** with its bounds (save_plan), so that a batch run again after a restart
** expires the keys it expired (the scan reads the first rows of a batch when
** it plans it, before the driver's batch time is set). */
static int uk_src_plan(dp_source *s, int64_t max_rows, bool *exhausted) {
  uk_source *u = s->state;
  u->now = u->replay_now >= 0 ? u->replay_now : dp_session_now(s->db);
  u->replay_now = -1;
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

/* Key `id` changed since the last file (only kept with a checkpoint folder). */
static int mark_dirty(uk_source *u, int64_t id) {
  if (!u->ck || u->all_dirty) return DIPPER_OK;
  if (id >= u->dirty_of_cap) {
    int64_t was = u->dirty_of_cap;
    if (dp_grow(&u->dirty_of, &u->dirty_of_cap, id + 1, 1, 1024)) return DIPPER_NOMEM;
    memset(u->dirty_of + was, 0, (size_t)(u->dirty_of_cap - was));
  }
  if (u->dirty_of[id]) return DIPPER_OK;
  if (dp_grow(&u->dirty, &u->dirty_cap, u->ndirty + 1, sizeof *u->dirty, 256)) return DIPPER_NOMEM;
  u->dirty[u->ndirty++] = id;
  u->dirty_of[id] = 1;
  return DIPPER_OK;
}

static void clear_dirty(uk_source *u) {
  for (int64_t i = 0; i < u->ndirty; i++) u->dirty_of[u->dirty[i]] = 0;
  u->ndirty = 0;
  u->all_dirty = false;
}

/* Key `id` now holds row `at` (a write at the batch's time). */
static int set_row(uk_source *u, int64_t id, int64_t at, int64_t now) {
  if (u->row_of[id] < 0) u->live++;
  u->row_of[id] = at;
  int rc = u->ttl > 0 ? dp_state_ttl_touch(&u->tl, id, now) : DIPPER_OK;
  return rc == DIPPER_OK ? mark_dirty(u, id) : rc;
}

/* Key `id` forgotten (a tombstone, or idle for the TTL). */
static int drop_row(uk_source *u, int64_t id) {
  if (u->row_of[id] < 0) return DIPPER_OK;
  u->row_of[id] = -1;
  u->live--;
  if (u->ttl > 0) dp_state_ttl_remove(&u->tl, id);
  return mark_dirty(u, id);
}

/* One change of the topic, normalized (the table in the header). */
static int normalize(uk_source *u, dp_batch *out, int64_t r, int64_t now) {
  bool tombstone = dp_change_of(u->raw, r) == DP_CHANGE_DELETE;
  int64_t id;
  int rc = key_id(u, u->raw, r, !tombstone, &id);
  if (rc != DIPPER_OK) return rc;
  int64_t old = id >= 0 ? u->row_of[id] : -1;
  if (tombstone) {
    if (old < 0) return DIPPER_OK; /* an unknown key, or one deleted already */
    rc = emit(out, u, u->rows, old, DP_CHANGE_DELETE);
    return rc == DIPPER_OK ? drop_row(u, id) : rc;
  }
  /* The same row again gives nothing, as Flink's equaliser; under a TTL it
  ** gives -U/+U all the same, as in Flink, so that what is kept downstream
  ** is written again too, and it renews the key. */
  if (old >= 0 && u->ttl <= 0 && rows_equal(u->rows, old, u->raw, r)) return DIPPER_OK;
  int64_t at;
  rc = store(u, u->raw, r, &at);
  if (rc == DIPPER_OK && old >= 0) rc = emit(out, u, u->rows, old, DP_CHANGE_UPDATE_BEFORE);
  if (rc == DIPPER_OK)
    rc = emit(out, u, u->rows, at, old >= 0 ? DP_CHANGE_UPDATE_AFTER : DP_CHANGE_INSERT);
  return rc == DIPPER_OK ? set_row(u, id, at, now) : rc;
}

/* The keys not written for the TTL by `now`, forgotten without a change
** out (Flink's state TTL: a later value of such a key is +I). */
static int expire(uk_source *u, int64_t now) {
  if (u->ttl <= 0) return DIPPER_OK;
  int64_t *ids = NULL, n = 0;
  int rc = dp_state_ttl_expire(&u->tl, now, &ids, &n);
  for (int64_t i = 0; rc == DIPPER_OK && i < n; i++) {
    int64_t id = ids[i];
    if (u->row_of[id] < 0) continue;
    u->row_of[id] = -1;
    u->live--;
    rc = mark_dirty(u, id);
  }
  free(ids);
  return rc;
}

/* The live rows, in key order, into a new store; the keys deleted dropped
** from the hash table once they outnumber the live ones, but not while a
** change of theirs waits for the next file (the ids in `dirty`). */
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
  if (u->ndirty > 0 || u->all_dirty) return DIPPER_OK;
  bool *keep = malloc((size_t)nkeys + 1);
  int64_t *remap = malloc(((size_t)nkeys + 1) * sizeof *remap);
  rc = keep && remap ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t id = 0; rc == DIPPER_OK && id < nkeys; id++) keep[id] = u->row_of[id] >= 0;
  if (rc == DIPPER_OK) rc = dp_ht_compact(&u->ht, keep, remap);
  if (rc == DIPPER_OK)
    for (int64_t id = 0; id < nkeys; id++)
      if (remap[id] >= 0) u->row_of[remap[id]] = u->row_of[id];
  if (rc == DIPPER_OK && u->ttl > 0) rc = dp_state_ttl_renumber(&u->tl, remap, nkeys);
  free(keep);
  free(remap);
  return rc;
}

static int uk_src_read(dp_source *s, dp_batch *out, int64_t want, bool *done) {
  uk_source *u = s->state;
  if (!out->change && !(out->change = dp_vector_new(dp_type_of(DP_T_TINYINT), want)))
    return DIPPER_NOMEM;
  int64_t now = u->now;
  int rc = expire(u, now);
  dp_batch_clear(u->raw);
  /* A record gives at most two rows (-U old, +U new). */
  int64_t ask = want / 2 > 0 ? want / 2 : 1;
  if (rc == DIPPER_OK) rc = dp_source_kafka.read(&u->inner, u->raw, ask, done);
  s->metrics = u->inner.metrics;
  if (rc == DIPPER_OK) rc = dp_batch_sync(u->raw);
  for (int64_t r = 0; rc == DIPPER_OK && r < u->raw->nrows; r++) rc = normalize(u, out, r, now);
  if (rc == DIPPER_OK) rc = compact(u, false);
  return rc;
}

static int uk_src_commit(dp_source *s) {
  uk_source *u = s->state;
  int rc = dp_source_kafka.commit(&u->inner);
  s->metrics = u->inner.metrics;
  return rc;
}

static int uk_corrupt(dp_source *s, const char *why);

#define UK_TAG 'U'
#define UK_VERSION 2 /* 1: the live rows whole in the position (still read) */
#define UK_SNAPSHOT 'F'
#define UK_DELTA 'D'

/* A batch's bounds: 'u' time:svar kafka-bounds:bytes (before the TTL: the
** kafka source's bytes alone, which start with its own tag; still read). */
#define UK_PLAN_TAG 'u'

static int uk_src_save_plan(dp_source *s, dp_buf *out) {
  uk_source *u = s->state;
  dp_buf b = DP_BUF_INIT;
  int rc = dp_source_kafka.save_plan(&u->inner, &b);
  if (rc == DIPPER_OK) {
    dp_put_u8(out, UK_PLAN_TAG);
    dp_put_svar(out, u->now);
    dp_put_bytes(out, b.data, b.len);
    if (b.oom || out->oom) rc = DIPPER_NOMEM;
  }
  dp_buf_free(&b);
  return rc;
}

static int uk_src_replay_plan(dp_source *s, dp_rd *in) {
  uk_source *u = s->state;
  if (dp_rd_left(in) == 0 || in->p[in->pos] != UK_PLAN_TAG)
    return dp_source_kafka.replay_plan(&u->inner, in); /* written before the time was */
  dp_get_u8(in);
  int64_t now = dp_get_svar(in);
  size_t len = 0;
  const uint8_t *kb = dp_get_bytes(in, &len);
  if (in->bad) return uk_corrupt(s, "a batch's bounds cut short");
  dp_rd kin;
  dp_rd_init(&kin, kb, len);
  int rc = dp_source_kafka.replay_plan(&u->inner, &kin);
  if (rc == DIPPER_OK) u->replay_now = now;
  return rc;
}

/* Per row of `rows` (key ids `ids`), its last write (with a TTL). */
static void put_times(const uk_source *u, const int64_t *ids, int64_t n, dp_buf *out) {
  dp_put_u8(out, u->ttl > 0 ? 1 : 0);
  if (u->ttl <= 0) return;
  int64_t prev = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t at = ids[i] < u->tl.cap ? u->tl.slot[ids[i]].at : -1;
    dp_put_svar(out, at - prev);
    prev = at;
  }
}

/* The live rows whole, in key order: 'F', rows, times. */
static int encode_snapshot(uk_source *u, dp_buf *out) {
  int rc = compact(u, true);
  int64_t *ids = malloc(((size_t)u->live + 1) * sizeof *ids);
  if (rc == DIPPER_OK && !ids) rc = DIPPER_NOMEM;
  /* compacted: the rows are the live ones (in key order, or in arrival
  ** order when nothing was dead), ids[row] their keys */
  int64_t n = u->rows->nrows;
  if (rc == DIPPER_OK && n != u->live) rc = DIPPER_MISUSE;
  for (int64_t id = 0; rc == DIPPER_OK && id < u->ht.ngroups; id++)
    if (u->row_of[id] >= 0) ids[u->row_of[id]] = id;
  if (rc == DIPPER_OK) {
    dp_put_u8(out, UK_SNAPSHOT);
    rc = dp_batch_encode(u->rows, 0, u->rows->nrows, out);
  }
  if (rc == DIPPER_OK) put_times(u, ids, n, out);
  free(ids);
  return rc;
}

/* The keys changed since the last file: 'D', their rows now, times, the
** keys gone (tombstones and TTL). */
static int encode_delta(uk_source *u, dp_buf *out) {
  int64_t nd = u->ndirty;
  int64_t *sel = malloc(((size_t)nd + 1) * sizeof *sel);
  int64_t *ids = malloc(((size_t)nd + 1) * sizeof *ids);
  dp_batch *up = dp_batch_new(&u->ischema, nd > 0 ? nd : 1);
  dp_batch *gone = dp_batch_new(&u->kschema, nd > 0 ? nd : 1);
  int rc = sel && ids && up && gone ? DIPPER_OK : DIPPER_NOMEM;
  int64_t nup = 0;
  for (int64_t i = 0; rc == DIPPER_OK && i < nd; i++) {
    int64_t id = u->dirty[i];
    if (u->row_of[id] >= 0) {
      sel[nup] = u->row_of[id];
      ids[nup++] = id;
      continue;
    }
    for (int k = 0; rc == DIPPER_OK && k < u->npk; k++)
      rc = dp_vector_append_from(gone->cols[k], u->ht.keys[k], id);
    if (rc == DIPPER_OK) rc = dp_batch_sync(gone);
  }
  if (rc == DIPPER_OK) rc = dp_batch_take(up, u->rows, sel, 0, nup);
  if (rc == DIPPER_OK) {
    dp_put_u8(out, UK_DELTA);
    rc = dp_batch_encode(up, 0, up->nrows, out);
  }
  if (rc == DIPPER_OK) {
    put_times(u, ids, nup, out);
    rc = dp_batch_encode(gone, 0, gone->nrows, out);
  }
  free(sel);
  free(ids);
  dp_batch_free(up);
  dp_batch_free(gone);
  return rc;
}

/* The file of this batch's changes, when there are any: a delta, or a
** snapshot when none is there yet, after DELTAS_PER_SNAPSHOT deltas, or once
** the deltas since the snapshot would outweigh it (a restart reads the
** snapshot and every delta after it).  A new snapshot purges the files
** before the one it follows: two snapshots stay, for a restart from an older
** commit record (the driver's, when the newest does not read back). */
static int write_file(dp_source *s, uk_source *u) {
  if (!u->ck || (!u->all_dirty && u->ndirty == 0 && u->base >= 0)) return DIPPER_OK;
  if (u->base < 0 && u->live == 0 && !u->all_dirty) {
    clear_dirty(u); /* nothing kept, nothing to say: no file */
    return DIPPER_OK;
  }
  dp_buf b = DP_BUF_INIT;
  int rc = DIPPER_OK;
  bool snapshot = u->base < 0 || u->all_dirty || u->chain_len + 1 >= DELTAS_PER_SNAPSHOT;
  if (!snapshot) {
    rc = encode_delta(u, &b);
    if (rc == DIPPER_OK && !b.oom && u->chain_bytes + (int64_t)b.len > u->snap_bytes) {
      snapshot = true;
      dp_buf_free(&b);
    }
  }
  if (rc == DIPPER_OK && snapshot) rc = encode_snapshot(u, &b);
  if (rc == DIPPER_OK && b.oom) rc = DIPPER_NOMEM;
  int64_t seq = u->last + 1;
  if (rc == DIPPER_OK) rc = dp_ckpt_write(u->ck, DP_CKPT_STATE, seq, b.data, b.len);
  if (rc == DIPPER_OK) {
    u->last = seq;
    if (snapshot) {
      if (u->older >= 0) dp_ckpt_purge(u->ck, DP_CKPT_STATE, u->older);
      u->older = u->base;
      u->base = seq;
      u->snap_bytes = (int64_t)b.len;
      u->chain_bytes = u->chain_len = 0;
    } else {
      u->chain_bytes += (int64_t)b.len;
      u->chain_len++;
    }
    clear_dirty(u);
  }
  dp_buf_free(&b);
  (void)s;
  return rc;
}

/* Version 2: 'U' 2 kafka-position:bytes snapshot:svar last:svar (the files
** of the kept rows as of this position; -1 -1: none, nothing kept). */
static int uk_src_save_position(dp_source *s, dp_buf *out) {
  uk_source *u = s->state;
  dp_buf pos = DP_BUF_INIT;
  int rc = dp_source_kafka.save_position(&u->inner, &pos);
  if (rc == DIPPER_OK && !u->ck) {
    /* no folder of files (a source saved outside a query): version 1 */
    rc = compact(u, true);
    if (rc == DIPPER_OK) {
      dp_put_u8(out, UK_TAG);
      dp_put_u8(out, 1);
      dp_put_bytes(out, pos.data, pos.len);
      rc = dp_batch_encode(u->rows, 0, u->rows->nrows, out);
    }
  } else if (rc == DIPPER_OK) {
    rc = write_file(s, u);
    if (rc == DIPPER_OK) rc = compact(u, false); /* the keys deleted may go now */
    if (rc == DIPPER_OK) {
      dp_put_u8(out, UK_TAG);
      dp_put_u8(out, UK_VERSION);
      dp_put_bytes(out, pos.data, pos.len);
      dp_put_svar(out, u->base);
      dp_put_svar(out, u->last);
    }
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

typedef struct uk_time {
  int64_t at, id;
} uk_time;

static int cmp_time(const void *a, const void *b) {
  const uk_time *x = a, *y = b;
  return x->at < y->at ? -1 : x->at > y->at ? 1 : x->id < y->id ? -1 : x->id > y->id;
}

/* Rows of `b` as the keys' latest (a snapshot's or a delta's), their times
** after them when `in` has them (without: written at `now`). */
static int apply_rows(dp_source *s, uk_source *u, const dp_batch *b, dp_rd *in, bool fresh,
                      int64_t now) {
  uint8_t has_times = dp_get_u8(in);
  if (in->bad || has_times > 1) return uk_corrupt(s, "its times do not read back");
  uk_time *times = malloc(((size_t)b->nrows + 1) * sizeof *times);
  if (!times) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  int64_t prev = 0;
  for (int64_t r = 0; rc == DIPPER_OK && r < b->nrows; r++) {
    int64_t id, at;
    rc = key_id(u, b, r, false, &id);
    if (rc == DIPPER_OK && fresh && id >= 0) rc = uk_corrupt(s, "a key saved twice");
    if (rc == DIPPER_OK && id < 0) rc = key_id(u, b, r, true, &id);
    if (rc == DIPPER_OK) rc = store(u, b, r, &at);
    if (rc != DIPPER_OK) break;
    if (u->row_of[id] < 0) u->live++;
    u->row_of[id] = at;
    times[r].id = id;
    times[r].at = now;
    if (has_times) {
      prev += dp_get_svar(in);
      times[r].at = prev;
    }
  }
  if (rc == DIPPER_OK && in->bad) rc = uk_corrupt(s, "its times do not read back");
  if (rc == DIPPER_OK && u->ttl > 0) {
    /* oldest first: the list's order is the order of the writes */
    qsort(times, (size_t)b->nrows, sizeof *times, cmp_time);
    for (int64_t r = 0; rc == DIPPER_OK && r < b->nrows; r++)
      rc = dp_state_ttl_touch(&u->tl, times[r].id, times[r].at);
  }
  free(times);
  return rc;
}

/* One file of the chain applied to the rows restored so far. */
static int apply_file(dp_source *s, uk_source *u, int64_t seq, bool first, int64_t now) {
  dp_ckpt_mapping m = {0};
  int rc = dp_ckpt_map(u->ck, DP_CKPT_STATE, seq, true, &m);
  if (rc == DIPPER_NAME)
    return uk_fail(s, DIPPER_CORRUPT,
                   "the checkpoint names file '%s' of the kept rows, which is missing; start the "
                   "query with a new checkpoint folder",
                   dp_ckpt_path(u->ck, DP_CKPT_STATE, seq));
  if (rc != DIPPER_OK) return rc;
  dp_rd in;
  dp_rd_init(&in, m.payload, m.n);
  uint8_t kind = dp_get_u8(&in);
  dp_batch *b = dp_batch_new(&u->ischema, 1024);
  dp_batch *gone = dp_batch_new(&u->kschema, 16);
  if (!b || !gone) rc = DIPPER_NOMEM;
  else if (in.bad || kind != (first ? UK_SNAPSHOT : UK_DELTA))
    rc = uk_corrupt(s, first ? "the chain does not start with a snapshot" : "a delta is not one");
  if (rc == DIPPER_OK) {
    rc = dp_batch_decode(&in, b);
    if (rc == DIPPER_CORRUPT) rc = uk_corrupt(s, "its rows do not decode");
  }
  if (rc == DIPPER_OK) rc = apply_rows(s, u, b, &in, first, now);
  if (rc == DIPPER_OK && kind == UK_DELTA) {
    rc = dp_batch_decode(&in, gone);
    if (rc == DIPPER_CORRUPT) rc = uk_corrupt(s, "its keys gone do not decode");
    for (int64_t r = 0; rc == DIPPER_OK && r < gone->nrows; r++) {
      int64_t id = -1;
      for (int k = 0; k < u->npk; k++) u->kcols[k] = gone->cols[k];
      const dp_vector *const *kc = (const dp_vector *const *)u->kcols;
      id = dp_ht_find(&u->ht, kc, dp_ht_hash_row(kc, u->npk, r), r);
      if (id >= 0 && u->row_of[id] >= 0) {
        u->row_of[id] = -1;
        u->live--;
        if (u->ttl > 0) dp_state_ttl_remove(&u->tl, id);
      }
    }
  }
  if (rc == DIPPER_OK && !dp_rd_done(&in)) rc = uk_corrupt(s, "bytes left over in a file");
  dp_batch_free(b);
  dp_batch_free(gone);
  dp_ckpt_unmap(&m);
  if (rc == DIPPER_OK) rc = compact(u, false);
  return rc;
}

static int uk_src_restore_position(dp_source *s, dp_rd *in) {
  uk_source *u = s->state;
  uint8_t tag = dp_get_u8(in), version = dp_get_u8(in);
  size_t len = 0;
  const uint8_t *pos = dp_get_bytes(in, &len);
  if (in->bad) return uk_corrupt(s, "cut short");
  if (tag != UK_TAG) return uk_corrupt(s, "not an upsert-kafka source's position");
  if (version != 1 && version != UK_VERSION) return uk_corrupt(s, "an unknown version");
  dp_rd kin;
  dp_rd_init(&kin, pos, len);
  int rc = dp_source_kafka.restore_position(&u->inner, &kin);
  if (rc != DIPPER_OK) return rc;
  if (u->rows->nrows || u->ht.ngroups) return uk_corrupt(s, "a state restored twice");
  int64_t now = dp_session_now(s->db);
  if (version == 1) {
    /* the live rows whole: the next file (with a folder) is a snapshot */
    dp_batch *b = dp_batch_new(&u->ischema, 1024);
    if (!b) return DIPPER_NOMEM;
    rc = dp_batch_decode(in, b);
    if (rc == DIPPER_CORRUPT) rc = uk_corrupt(s, "its rows do not decode");
    if (rc == DIPPER_OK) {
      /* no times in version 1: every key counts as written now */
      static const uint8_t none = 0;
      dp_rd t;
      dp_rd_init(&t, &none, 1);
      rc = apply_rows(s, u, b, &t, true, now);
    }
    dp_batch_free(b);
    if (rc == DIPPER_OK && !dp_rd_done(in)) rc = uk_corrupt(s, "bytes left over");
    u->all_dirty = u->ck != NULL;
    return rc;
  }
  int64_t base = dp_get_svar(in), last = dp_get_svar(in);
  if (in->bad || base < -1 || last < base || (base < 0 && last >= 0))
    return uk_corrupt(s, "its files are not a chain");
  if (!dp_rd_done(in)) return uk_corrupt(s, "bytes left over");
  if (base >= 0 && !u->ck)
    return uk_corrupt(s, "its kept rows are in files, and this run has no checkpoint folder");
  for (int64_t seq = base; rc == DIPPER_OK && base >= 0 && seq <= last; seq++)
    rc = apply_file(s, u, seq, seq == base, now);
  if (rc != DIPPER_OK) return rc;
  /* the chain goes on from here; a file after `last` (written before a
  ** crash, its commit record not) is written again */
  u->base = base;
  u->last = last;
  u->older = -1;
  u->chain_len = last - base;
  if (base >= 0) {
    dp_ckpt_mapping m = {0};
    rc = dp_ckpt_map(u->ck, DP_CKPT_STATE, base, true, &m);
    u->snap_bytes = (int64_t)m.n;
    dp_ckpt_unmap(&m);
    for (int64_t seq = base + 1; rc == DIPPER_OK && seq <= last; seq++) {
      rc = dp_ckpt_map(u->ck, DP_CKPT_STATE, seq, true, &m);
      u->chain_bytes += (int64_t)m.n;
      dp_ckpt_unmap(&m);
    }
  }
  return rc;
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
