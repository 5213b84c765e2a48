/*
** session.c — core/session.h over struct dipper: the typed seam through
** which the engine and the connectors reach the handle.
*/
#include "core/session.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "api/dipper_int.h"

const struct dp_catalog *dp_session_catalog(const dipper *db) { return db ? db->catalog : NULL; }

const char *dp_session_option(const dipper *db, const char *key) {
  return db && db->catalog ? dp_catalog_option(db->catalog, key) : NULL;
}

bool dp_session_streaming(const dipper *db) {
  return !db || !db->catalog || dp_catalog_streaming(db->catalog);
}

bool dp_session_interrupted(dipper *db) { return dp_api_interrupted(db); }

int64_t dp_session_now(const dipper *db) {
  if (db && db->clock_fn) return db->clock_fn(db->clock_user);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void dp_session_log(dipper *db, int level, const char *fmt, ...) {
  if (!db || !db->log_fn) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  db->log_fn(db->log_user, level, msg);
}

void dp_session_ok(dipper *db) {
  dp_arena_reset(db->diag_arena);
  db->pub = NULL;
  db->text = NULL;
  db->file = NULL;
  dp_diags_init(&db->diags, db->diag_arena, "<api>", NULL, 0);
}

int dp_session_fail(dipper *db, int code, const char *fmt, ...) {
  dp_session_ok(db);
  va_list ap;
  va_start(ap, fmt);
  char *msg = dp_arena_vprintf(db->diag_arena, fmt, ap);
  va_end(ap);
  dp_span nowhere = {0, 0, 0, 0};
  dp_error(&db->diags, code, nowhere, "%s", msg ? msg : dipper_strerror(code));
  db->pub = dp_arena_calloc(db->diag_arena, (size_t)db->diags.count, sizeof *db->pub);
  if (!db->pub) return code;
  for (int i = 0; i < db->diags.count; i++) {
    db->pub[i].code = db->diags.items[i].code;
    db->pub[i].message = db->diags.items[i].message ? db->diags.items[i].message
                                                    : dipper_strerror(db->diags.items[i].code);
  }
  return code;
}

struct dp_mem_store **dp_session_memory(dipper *db) { return db ? &db->memory : NULL; }

struct dp_callback_entry **dp_session_callbacks(dipper *db) { return db ? &db->callbacks : NULL; }
