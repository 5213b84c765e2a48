/*
** session.h — what the engine (src/exec/) and the connectors ask of the
** dipper handle they run under, and nothing more: its catalog (tables and
** session options), its interrupt flag, its log callback, the result of a
** public call made in a connector, and two slots the connectors own (the
** memory tables, the registered callbacks).  src/api/session.c implements
** it over struct dipper, which stays private to src/api/ (dipper_int.h):
** the layers below the API see a typed interface, not the handle.
**
** Every function takes a NULL handle (a query built without one, as unit
** tests do): no catalog, no interrupt, no log.
*/
#ifndef DP_SESSION_H
#define DP_SESSION_H

#include <stdbool.h>

#include "core/compiler.h"
#include "dipper.h"

struct dp_catalog;
struct dp_mem_store;
struct dp_callback_entry;

/* The handle's catalog, or NULL; borrowed while the handle lives. */
const struct dp_catalog *dp_session_catalog(const dipper *db);
/* A session option (SET), or NULL when unset or without a handle. */
const char *dp_session_option(const dipper *db, const char *key);
/* Whether statements compile for streaming (the default) or batch. */
bool dp_session_streaming(const dipper *db);
/* dipper_interrupt was called and not yet honoured (the flag stays set). */
bool dp_session_interrupted(dipper *db);
/* Processing time, µs since the epoch: the handle's clock (dipper_set_clock)
** or, without one (or without a handle), the wall clock. */
int64_t dp_session_now(const dipper *db);
/* A note, warning or debug line (DIPPER_LOG_*) to the log callback. */
void dp_session_log(dipper *db, int level, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;
/* A public call implemented in a connector (dipper_memory_*,
** dipper_register_callback*) starts and ends: dp_session_ok clears the
** handle's last error; dp_session_fail sets it (dipper_errmsg) and returns
** `code`. */
void dp_session_ok(dipper *db);
int dp_session_fail(dipper *db, int code, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;
/* The slots the connectors keep in the handle: connectors/memory.c's
** tables and connectors/callback.c's registrations (each freed by its own
** module's dp_memory_free / dp_callbacks_free when the handle closes). */
struct dp_mem_store **dp_session_memory(dipper *db);
struct dp_callback_entry **dp_session_callbacks(dipper *db);

/* connectors/: free the handle's memory tables and registered callbacks
** (called by dipper_close). */
void dp_memory_free(dipper *db);
void dp_callbacks_free(dipper *db);

#endif /* DP_SESSION_H */
