/*
** callback.c — the `callback` sink, the embedded foreachBatch, and
** dipper_register_callback: C functions registered by name in the handle
** (db->callbacks) and called with each micro-batch.
**
** The rows of a micro-batch are gathered as they are written and handed over
** at commit as one Arrow C Data struct array (one child per column), without
** a copy: the buffers move to the array, whose release callback frees them.
** The function is called for every committed micro-batch, empty ones too (as
** Spark's foreachBatch is), with the batch id.  A non-zero return fails the
** query with DIPPER_DATA naming the callback.
**
** The registration is looked up when the query starts: registering again
** under the same name replaces it for queries started later; registering
** NULL removes it.
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/dipper_int.h"
#include "connectors/records.h"

typedef struct cb_entry {
  char *name;
  dipper_batch_fn fn;
  void *user;
  struct cb_entry *next;
} cb_entry;

int dipper_register_callback(dipper *db, const char *name, dipper_batch_fn fn, void *user) {
  if (!db) return DIPPER_MISUSE;
  if (!name || !name[0])
    return dp_handle_fail(db, DIPPER_MISUSE,
                          "dipper_register_callback needs the name that the sink's 'name' option "
                          "gives");
  cb_entry *head = db->callbacks, *prev = NULL, *e = head;
  while (e && strcasecmp(e->name, name) != 0) {
    prev = e;
    e = e->next;
  }
  if (!fn) {
    if (e) {
      if (prev)
        prev->next = e->next;
      else
        db->callbacks = e->next;
      free(e->name);
      free(e);
    }
    dp_handle_ok(db);
    return DIPPER_OK;
  }
  if (!e) {
    e = calloc(1, sizeof *e);
    if (!e || !(e->name = strdup(name))) {
      free(e);
      return dp_handle_fail(db, DIPPER_NOMEM, "out of memory registering callback '%s'", name);
    }
    e->next = head;
    db->callbacks = e;
  }
  e->fn = fn;
  e->user = user;
  dp_handle_ok(db);
  return DIPPER_OK;
}

void dp_callbacks_free(dipper *db) {
  if (!db) return;
  for (cb_entry *e = db->callbacks, *next; e; e = next) {
    next = e->next;
    free(e->name);
    free(e);
  }
  db->callbacks = NULL;
}

typedef struct cb_sink {
  dipper_batch_fn fn;
  void *user;
  const char *name;
  dp_batch *pending;
} cb_sink;

static int cb_open(dp_sink *k) {
  dp_span nowhere = {0, 0, 0, 0};
  const char *name = dp_table_option(k->table, "name", NULL);
  const char *table = k->table ? k->table->name : "?";
  if (!name)
    return dp_error(k->diags, DIPPER_OPTION, nowhere,
                    "callback table `%s` names no callback; add 'name' = 'on_rows' and register "
                    "it with dipper_register_callback",
                    table);
  cb_entry *e = k->db ? k->db->callbacks : NULL;
  while (e && strcasecmp(e->name, name) != 0) e = e->next;
  if (!e)
    return dp_error(k->diags, DIPPER_NAME, k->table ? k->table->with_span : nowhere,
                    "no callback is registered under '%s' (table `%s`); call "
                    "dipper_register_callback(db, \"%s\", fn, user) before running the query",
                    name, table, name);
  cb_sink *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  st->fn = e->fn;
  st->user = e->user;
  st->name = name;
  st->pending = dp_batch_new(k->schema, 0);
  if (!st->pending) {
    free(st);
    return DIPPER_NOMEM;
  }
  k->state = st;
  k->user = e;
  return DIPPER_OK;
}

static int cb_write(dp_sink *k, int64_t batch_id, const dp_batch *b) {
  (void)batch_id;
  cb_sink *st = k->state;
  return dp_batch_append(st->pending, b);
}

static int cb_commit(dp_sink *k, int64_t batch_id) {
  cb_sink *st = k->state;
  struct ArrowSchema schema;
  struct ArrowArray array;
  int rc = dp_batch_export_move(st->pending, &schema, &array);
  st->pending->nrows = 0;
  if (rc) return rc;
  int ret = st->fn(st->user, batch_id, &schema, &array);
  if (ret != 0) {
    dp_span nowhere = {0, 0, 0, 0};
    return dp_error(k->diags, DIPPER_DATA, k->table ? k->table->with_span : nowhere,
                    "callback '%s' returned %d for micro-batch %lld, so the query stops; return "
                    "0 from the callback to go on",
                    st->name, ret, (long long)batch_id);
  }
  return DIPPER_OK;
}

static void cb_close(dp_sink *k) {
  cb_sink *st = k->state;
  if (!st) return;
  dp_batch_free(st->pending);
  free(st);
  k->state = NULL;
}

const dp_sink_class dp_sink_callback = {
    .name = "callback",
    .open = cb_open,
    .write = cb_write,
    .commit = cb_commit,
    .close = cb_close,
};
