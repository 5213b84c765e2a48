/*
** callback.c — the `callback` sink, the embedded foreachBatch, and
** dipper_register_callback: C functions registered by name in the handle
** (its callbacks slot, core/session.h) and called with each micro-batch.
**
** The rows of a micro-batch are gathered as they are written and handed over
** at commit as one Arrow C Data struct array (one child per column), without
** a copy: the buffers move to the array, whose release callback frees them.
** The function is called for every committed micro-batch, empty ones too (as
** Spark's foreachBatch is), with the batch id.  A non-zero return fails the
** query with DIPPER_DATA naming the callback.
**
** The registration is looked up when the query starts: registering again
** under the same name replaces it for queries started later; unregistering
** (or registering NULL) removes it.  A registration may own its `user`
** (dipper_register_callback2's free_user): it is freed once neither the
** handle's list nor a running query's sink holds the registration.
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/session.h"
#include "connectors/records.h"

/* One registration.  It is referenced by the handle's list while it is
** registered and by every open sink that found it there (cb_open), and it
** ends — free_user runs — when the last of them lets go: a query keeps
** calling fn with user after the name was registered again or removed. */
typedef struct dp_callback_entry {
  char *name;
  dipper_batch_fn fn;
  void *user;
  dipper_free_fn free_user; /* NULL: the caller keeps user */
  int refs;                 /* the list's (while listed) + one per open sink */
  struct dp_callback_entry *next; /* the handle's list (dp_session_callbacks) */
} cb_entry;

static void entry_release(cb_entry *e) {
  if (--e->refs > 0) return;
  if (e->free_user) e->free_user(e->user);
  free(e->name);
  free(e);
}

/* The link that points at the registration under name, or at the list's
** NULL end when there is none. */
static cb_entry **find_link(dipper *db, const char *name) {
  cb_entry **at = dp_session_callbacks(db);
  while (*at && strcasecmp((*at)->name, name) != 0) at = &(*at)->next;
  return at;
}

/* Take the registration at *at off the list: the list's reference goes. */
static void unlist(cb_entry **at) {
  cb_entry *e = *at;
  *at = e->next;
  e->next = NULL;
  entry_release(e);
}

static int check_name(dipper *db, const char *name, const char *fn_name) {
  if (name && name[0]) return DIPPER_OK;
  return dp_session_fail(db, DIPPER_MISUSE,
                        "%s needs the name that the sink's 'name' option gives", fn_name);
}

int dipper_register_callback2(dipper *db, const char *name, dipper_batch_fn fn, void *user,
                              dipper_free_fn free_user) {
  if (!db) return DIPPER_MISUSE;
  int rc = check_name(db, name, "dipper_register_callback2");
  if (rc != DIPPER_OK) return rc;
  if (!fn)
    return dp_session_fail(db, DIPPER_MISUSE,
                          "dipper_register_callback2 needs a function for '%s'; to remove the "
                          "registration call dipper_unregister_callback",
                          name);
  cb_entry *e = calloc(1, sizeof *e);
  if (!e || !(e->name = strdup(name))) {
    free(e);
    return dp_session_fail(db, DIPPER_NOMEM, "out of memory registering callback '%s'", name);
  }
  e->fn = fn;
  e->user = user;
  e->free_user = free_user;
  e->refs = 1;
  cb_entry **at = find_link(db, name);
  if (*at) {
    cb_entry *old = *at;
    /* The same user handed over again is still owned once: by the new one. */
    if (old->user == user && old->free_user == free_user) old->free_user = NULL;
    e->next = old->next;
    old->next = NULL;
    *at = e;
    entry_release(old);
  } else {
    *at = e;
  }
  dp_session_ok(db);
  return DIPPER_OK;
}

int dipper_unregister_callback(dipper *db, const char *name) {
  if (!db) return DIPPER_MISUSE;
  int rc = check_name(db, name, "dipper_unregister_callback");
  if (rc != DIPPER_OK) return rc;
  cb_entry **at = find_link(db, name);
  if (!*at)
    return dp_session_fail(db, DIPPER_NAME, "no callback is registered under '%s'", name);
  unlist(at);
  dp_session_ok(db);
  return DIPPER_OK;
}

int dipper_register_callback(dipper *db, const char *name, dipper_batch_fn fn, void *user) {
  if (!db) return DIPPER_MISUSE;
  int rc = check_name(db, name, "dipper_register_callback");
  if (rc != DIPPER_OK) return rc;
  if (fn) return dipper_register_callback2(db, name, fn, user, NULL);
  cb_entry **at = find_link(db, name);
  if (*at) unlist(at);
  dp_session_ok(db);
  return DIPPER_OK;
}

void dp_callbacks_free(dipper *db) {
  if (!db) return;
  cb_entry **list = dp_session_callbacks(db);
  while (list && *list) unlist(list);
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
  cb_entry *e = k->db ? *dp_session_callbacks(k->db) : NULL;
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
  e->refs++; /* the sink's: see cb_entry */
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
  if (k->user) entry_release(k->user);
  k->user = NULL;
}

const dp_sink_class dp_sink_callback = {
    .name = "callback",
    .open = cb_open,
    .write = cb_write,
    .commit = cb_commit,
    .close = cb_close,
};
