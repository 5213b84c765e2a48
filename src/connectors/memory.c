/*
** memory.c — the `memory` connector and its handle-side API
** (dipper_memory_push_json, dipper_memory_fetch): named in-memory tables kept
** in the handle (its memory slot, core/session.h), for tests and for programs that embed dipper.
**
** A memory table is named by its 'name' option, else by the table's name
** (case-insensitive).  As a source, each dipper_memory_push_json is one
** micro-batch of JSON lines, decoded when read with the table's schema and
** bad-records policy; pushes are kept, so every query that reads the table
** sees them all from the first.  The source is unbounded (it waits for more
** pushes) unless the table says 'bounded' = 'true' or the program runs in
** batch mode: then it ends once every push has been read.  As a sink, rows
** become visible at commit: appended in append and update mode, replacing the
** previous result in complete mode (Spark's memory sink).  Opening a sink
** starts its table's result afresh; rows outlive the program that wrote them
** (the schema is copied), until the handle is closed.
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/grow.h"
#include "core/session.h"
#include "plan/plan.h"
#include "connectors/records.h"

typedef struct mem_push {
  char *text;
  size_t len;
} mem_push;

typedef struct mem_table {
  char *name;
  mem_push *pushes;
  int npushes, cap;
  dp_arena *arena;  /* the result's schema */
  dp_schema *schema;
  dp_batch *rows;   /* committed sink rows, or NULL */
  struct mem_table *next;
} mem_table;

typedef struct dp_mem_store {
  mem_table *tables;
} mem_store;

static mem_table *find_table(dipper *db, const char *name, bool create) {
  mem_store *store = *dp_session_memory(db);
  if (!store) {
    if (!create) return NULL;
    store = calloc(1, sizeof *store);
    if (!store) return NULL;
    *dp_session_memory(db) = store;
  }
  for (mem_table *t = store->tables; t; t = t->next)
    if (strcasecmp(t->name, name) == 0) return t;
  if (!create) return NULL;
  mem_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->name = strdup(name);
  if (!t->name) {
    free(t);
    return NULL;
  }
  t->next = store->tables;
  store->tables = t;
  return t;
}

void dp_memory_free(dipper *db) {
  if (!db || !*dp_session_memory(db)) return;
  mem_store *store = *dp_session_memory(db);
  for (mem_table *t = store->tables, *next; t; t = next) {
    next = t->next;
    for (int i = 0; i < t->npushes; i++) free(t->pushes[i].text);
    free(t->pushes);
    dp_batch_free(t->rows);
    dp_arena_free(t->arena);
    free(t->name);
    free(t);
  }
  free(store);
  *dp_session_memory(db) = NULL;
}

static const char *table_key(const dp_table_def *t) {
  return dp_table_option(t, "name", t ? t->name : "");
}

/* ---- the public calls ---- */

int dipper_memory_push_json(dipper *db, const char *table, const char *jsonl, size_t len) {
  if (!db) return DIPPER_MISUSE;
  if (!table || (!jsonl && len))
    return dp_session_fail(db, DIPPER_MISUSE,
                          "dipper_memory_push_json needs a table name and the JSON lines to push");
  if (len == (size_t)-1) len = strlen(jsonl);
  const dp_table_def *def = dp_catalog_table(dp_session_catalog(db), table);
  if (def && def->connector && strcasecmp(def->connector, "memory") != 0)
    return dp_session_fail(db, DIPPER_MISUSE,
                          "table `%s` reads connector '%s', so rows cannot be pushed to it; "
                          "declare it WITH ('connector' = 'memory')",
                          table, def->connector);
  mem_table *t = find_table(db, def ? table_key(def) : table, true);
  if (!t) return dp_session_fail(db, DIPPER_NOMEM, "out of memory pushing rows to `%s`", table);
  if (dp_grow_i(&t->pushes, &t->cap, t->npushes + 1, sizeof *t->pushes, 8))
    return dp_session_fail(db, DIPPER_NOMEM, "out of memory pushing rows to `%s`", table);
  char *copy = malloc(len + 1);
  if (!copy) return dp_session_fail(db, DIPPER_NOMEM, "out of memory pushing rows to `%s`", table);
  if (len) memcpy(copy, jsonl, len);
  copy[len] = '\0';
  t->pushes[t->npushes].text = copy;
  t->pushes[t->npushes].len = len;
  t->npushes++;
  dp_session_ok(db);
  return DIPPER_OK;
}

int dipper_memory_fetch(dipper *db, const char *table, struct ArrowSchema *schema,
                        struct ArrowArray *array) {
  if (schema) schema->release = NULL;
  if (array) array->release = NULL;
  if (!db) return DIPPER_MISUSE;
  if (!table || !schema || !array)
    return dp_session_fail(db, DIPPER_MISUSE,
                          "dipper_memory_fetch needs a table name and places for the schema and "
                          "the array");
  const dp_table_def *def = dp_catalog_table(dp_session_catalog(db), table);
  mem_table *t = find_table(db, def ? table_key(def) : table, false);
  if (!t || !t->rows)
    return dp_session_fail(db, DIPPER_NAME,
                          "no query has written to memory table `%s`; run an INSERT INTO a table "
                          "declared WITH ('connector' = 'memory') first",
                          table);
  int rc = dp_batch_export(t->rows, schema, array);
  if (rc) return dp_session_fail(db, rc, "cannot export the rows of memory table `%s`", table);
  dp_session_ok(db);
  return DIPPER_OK;
}

/* ---- source ---- */

typedef struct mem_source {
  char *key;
  bool bounded;
  dp_record_decoder dec;
  dp_bad_records bad;
  int push;          /* the push being read */
  size_t pos;        /* bytes of it read */
  int64_t line;      /* lines of it read */
  bool planned;
  bool push_done;    /* the push is read to its end */
  int64_t cap_left;  /* rows the planned batch may still take; -1: no cap */
  int64_t cap_planned;
  int replay;        /* a batch run again: -1 none, 0 no push planned, 1 the push */
  int64_t replay_cap;
} mem_source;

static void mem_source_close(dp_source *s);

static int mem_source_open(dp_source *s) {
  mem_source *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  s->state = st;
  st->replay = -1;
  st->key = strdup(table_key(s->table));
  const char *b = dp_table_option(s->table, "bounded", "false");
  st->bounded = strcasecmp(b, "true") == 0 || (s->db && !dp_session_streaming(s->db));
  dp_bad_records_init(&st->bad, s->table);
  int rc = st->key ? dp_record_decoder_open(&st->dec, s->table, s->schema, "json", s->diags)
                   : DIPPER_NOMEM;
  if (rc) mem_source_close(s); /* the caller does not close a source that failed to open */
  return rc;
}

static int mem_source_plan(dp_source *s, int64_t max_rows, bool *exhausted) {
  mem_source *st = s->state;
  mem_table *t = s->db ? find_table(s->db, st->key, false) : NULL;
  int npushes = t ? t->npushes : 0;
  st->planned = st->push < npushes;
  st->push_done = false;
  st->cap_left = max_rows > 0 ? max_rows : -1;
  if (st->replay >= 0) {
    /* the same push (which the embedder must have pushed again) and cap */
    st->planned = st->replay == 1 && st->push < npushes;
    st->cap_left = st->replay_cap;
    st->replay = -1;
  }
  st->cap_planned = st->cap_left;
  *exhausted = st->bounded && !st->planned;
  return DIPPER_OK;
}

static int mem_source_read(dp_source *s, dp_batch *out, int64_t want, bool *done) {
  mem_source *st = s->state;
  *done = true;
  if (!st->planned || st->push_done) return DIPPER_OK;
  mem_table *t = find_table(s->db, st->key, false);
  if (!t || st->push >= t->npushes) return DIPPER_OK;
  const mem_push *p = &t->pushes[st->push];
  int64_t got = 0;
  dp_format_error err;
  while (st->pos < p->len) {
    if (got >= want || st->cap_left == 0) {
      *done = st->cap_left == 0;
      goto out;
    }
    bool complete;
    size_t len = dp_record_end(&st->dec, p->text + st->pos, p->len - st->pos, &complete);
    const char *rec = p->text + st->pos;
    st->pos += len;
    st->line++;
    s->metrics.bytes += (int64_t)len;
    bool skipped;
    int rc = dp_record_decode(&st->dec, rec, len, out, &skipped, &err);
    if (rc == DIPPER_DATA) {
      char where[96];
      snprintf(where, sizeof where, "push %d, line %lld", st->push + 1, (long long)st->line);
      if ((rc = dp_bad_record(&st->bad, s, where, &err, rec, len)) != DIPPER_OK) return rc;
      continue;
    }
    if (rc) return rc;
    if (skipped) continue;
    got++;
    if (st->cap_left > 0) st->cap_left--;
  }
  st->push_done = true;
out:
  s->metrics.rows += got;
  if (out->ncols > 0) return dp_batch_sync(out);
  out->nrows += got;
  return DIPPER_OK;
}

static int mem_source_commit(dp_source *s) {
  mem_source *st = s->state;
  if (st->push_done) {
    st->push++;
    st->pos = 0;
    st->line = 0;
    st->push_done = false;
  }
  st->planned = false;
  return dp_bad_records_flush(&st->bad, s);
}

static void mem_source_close(dp_source *s) {
  mem_source *st = s->state;
  if (!st) return;
  dp_record_decoder_close(&st->dec);
  dp_bad_records_close(&st->bad);
  free(st->key);
  free(st);
  s->state = NULL;
}

/* Checkpoints.  A memory table lives in the process, so a restarted one
** resumes only over the same pushes made again (an embedder that replays
** its input): the position is the push, the bytes and lines of it read. */
static int mem_save_plan(dp_source *s, dp_buf *out) {
  const mem_source *st = s->state;
  dp_put_u8(out, st->planned ? 1 : 0);
  dp_put_svar(out, st->cap_planned);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int mem_save_position(dp_source *s, dp_buf *out) {
  const mem_source *st = s->state;
  dp_put_uvar(out, (uint64_t)st->push);
  dp_put_uvar(out, st->pos);
  dp_put_svar(out, st->line);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int mem_bad_bytes(dp_source *s) {
  dp_span nowhere = {0, 0, 0, 0};
  return dp_error(s->diags, DIPPER_CORRUPT, nowhere,
                  "table `%s`: the checkpoint's position does not fit this memory table",
                  s->table->name);
}

static int mem_restore_position(dp_source *s, dp_rd *in) {
  mem_source *st = s->state;
  uint64_t push = dp_get_uvar(in), pos = dp_get_uvar(in);
  int64_t line = dp_get_svar(in);
  if (in->bad || push > INT32_MAX || line < 0) return mem_bad_bytes(s);
  st->push = (int)push;
  st->pos = (size_t)pos;
  st->line = line;
  return DIPPER_OK;
}

static int mem_replay_plan(dp_source *s, dp_rd *in) {
  mem_source *st = s->state;
  uint8_t planned = dp_get_u8(in);
  int64_t cap = dp_get_svar(in);
  if (in->bad || planned > 1) return mem_bad_bytes(s);
  st->replay = planned;
  st->replay_cap = cap;
  return DIPPER_OK;
}

const dp_source_class dp_source_memory = {
    .name = "memory",
    .open = mem_source_open,
    .plan_batch = mem_source_plan,
    .read = mem_source_read,
    .commit = mem_source_commit,
    .close = mem_source_close,
    .save_plan = mem_save_plan,
    .save_position = mem_save_position,
    .restore_position = mem_restore_position,
    .replay_plan = mem_replay_plan,
};

/* ---- sink ---- */

typedef struct mem_sink {
  char *key;
  dp_arena *arena;   /* the pending batch's schema */
  dp_batch *pending; /* rows of the batch being written */
  bool complete;
} mem_sink;

static void mem_sink_close(dp_sink *k);
static int open_sink(dp_sink *k, mem_sink *st);

static int mem_sink_open(dp_sink *k) {
  mem_sink *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  k->state = st;
  int rc = open_sink(k, st);
  if (rc) mem_sink_close(k); /* the caller does not close a sink that failed to open */
  return rc;
}

static int open_sink(dp_sink *k, mem_sink *st) {
  st->key = strdup(k->table ? table_key(k->table) : "result");
  st->arena = dp_arena_new(0);
  if (!st->key || !st->arena) return DIPPER_NOMEM;
  dp_schema *own = dp_schema_copy(st->arena, k->schema);
  if (!own || !(st->pending = dp_batch_new(own, 0))) return DIPPER_NOMEM;
  st->complete = k->mode == DP_MODE_COMPLETE;
  mem_table *t = find_table(k->db, st->key, true);
  if (!t) return DIPPER_NOMEM;
  /* a new query's result starts empty */
  dp_batch_free(t->rows);
  t->rows = NULL;
  dp_arena_free(t->arena);
  t->arena = dp_arena_new(0);
  if (!t->arena || !(t->schema = dp_schema_copy(t->arena, k->schema)) ||
      !(t->rows = dp_batch_new(t->schema, 0)))
    return DIPPER_NOMEM;
  return DIPPER_OK;
}

static int mem_sink_write(dp_sink *k, int64_t batch_id, const dp_batch *b) {
  (void)batch_id;
  mem_sink *st = k->state;
  return dp_batch_append(st->pending, b);
}

static int mem_sink_commit(dp_sink *k, int64_t batch_id) {
  (void)batch_id;
  mem_sink *st = k->state;
  mem_table *t = find_table(k->db, st->key, false);
  if (!t || !t->rows) return DIPPER_INTERNAL;
  if (st->complete) dp_batch_clear(t->rows);
  int rc = dp_batch_append(t->rows, st->pending);
  dp_batch_clear(st->pending);
  return rc;
}

static void mem_sink_close(dp_sink *k) {
  mem_sink *st = k->state;
  if (!st) return;
  dp_batch_free(st->pending);
  dp_arena_free(st->arena);
  free(st->key);
  free(st);
  k->state = NULL;
}

const dp_sink_class dp_sink_memory = {
    .name = "memory",
    .open = mem_sink_open,
    .write = mem_sink_write,
    .commit = mem_sink_commit,
    .close = mem_sink_close,
};
