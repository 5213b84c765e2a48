/*
** client.h — a Spark Connect session: the layer between dipper's Spark
** backend and the gRPC transport (grpc.h).
**
** Owns: the session (a UUID session id, the user context, client_type
** "dipper/<version>"), the server-side session config, reattachable
** execution (ExecutePlan with reattach_options; a stream that ends without
** ResultComplete is resumed with ReattachExecute from the last response id;
** ReleaseExecute after ResultComplete or on abandon), errors (a non-OK status
** carrying an ErrorInfo with an errorId is completed with FetchErrorDetails so
** that the user sees the error class, the message and the SQL state),
** reconnecting a connection that broke between calls, ReleaseSession at
** close, and a keep-alive (dp_sc_keepalive) that a caller driving a
** long-running streaming query calls periodically.
** Does not own: building plans (translate.h) or decoding Arrow (arrow_ipc.h;
** dp_sc_collect calls it).
**
** The session is one connection used by one thread at a time.
*/
#ifndef DP_SPARK_CLIENT_H
#define DP_SPARK_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "spark/arrow_ipc.h"
#include "spark/connect/base.pb-c.h"

typedef struct dp_sc dp_sc;

/* What went wrong, for the user: `code` a dipper code; `message` one or more
** lines; `error_class` Spark's error class (e.g.
** "UNRESOLVED_COLUMN.WITH_SUGGESTION") and `sql_state` when Spark sent them. */
typedef struct dp_sc_error {
  int code;
  dp_buf message;
  char error_class[160];
  char sql_state[8];
} dp_sc_error;
void dp_sc_error_init(dp_sc_error *e);
void dp_sc_error_free(dp_sc_error *e);   /* frees message; keeps the struct reusable */

/* Parse the connection string, connect, set the session time zone to UTC
** (Config) and read the server's version (AnalyzePlan spark_version).
** Failures name the address: "cannot reach Spark Connect at
** 127.0.0.1:15002: connection refused (start one with scripts/spark-local
** start, or check the sc:// address)" (DIPPER_CONNECT). */
int dp_sc_open(dp_sc **out, const char *uri, dp_sc_error *err);
/* ReleaseSession (best effort) and close.  NULL is fine. */
void dp_sc_close(dp_sc *s);

const char *dp_sc_session_id(const dp_sc *s);     /* borrowed until close */
const char *dp_sc_server_version(const dp_sc *s); /* "4.1.1"; borrowed until close */
const char *dp_sc_address(const dp_sc *s);        /* "host:port"; borrowed until close */

/* Set session configs (Config / ConfigRequest.Set). */
int dp_sc_config_set(dp_sc *s, int n, const char *const *keys, const char *const *values,
                     dp_sc_error *err);
/* Read one config; *value malloc'd (free()), NULL when unset. */
int dp_sc_config_get(dp_sc *s, const char *key, char **value, dp_sc_error *err);

/* Called with every response of an execution, in order, after reattaching
** transparently.  Return DIPPER_OK to go on, anything else to stop (the
** execution is then interrupted and released, and that code returned). */
typedef int (*dp_sc_response_fn)(void *user, const Spark__Connect__ExecutePlanResponse *r);

/* Run a plan (a relation or a command) to its end: ExecutePlan, reattachable;
** `tags` may be NULL.  deadline_ms 0: none (commands that start a streaming
** query return at once; relations run as long as Spark needs). */
int dp_sc_execute(dp_sc *s, const Spark__Connect__Plan *plan, dp_sc_response_fn fn, void *user,
                  int64_t deadline_ms, dp_sc_error *err);

/* Run a relation and collect its result: every arrow_batch decoded and
** appended (all batches share one schema).  *out owns the result. */
int dp_sc_collect(dp_sc *s, const Spark__Connect__Relation *root, dp_arrow_batches *out,
                  dp_sc_error *err);

/* AnalyzePlan: the schema of a relation as Spark sees it, in Spark's DDL
** form (malloc'd).  Used by tests and EXPLAIN on Spark. */
int dp_sc_analyze_schema(dp_sc *s, const Spark__Connect__Relation *root, char **ddl,
                         dp_sc_error *err);

/* Keep the session alive (a cheap call when the last one is older than
** interval_ms); returns at once otherwise. */
/* AddArtifacts with one artifact in one chunk (a client-streaming call of one
** message, sent as a unary one): `name` as Spark files it ("jars/f.jar"),
** data borrowed for the call.  DIPPER_REMOTE when the server reports the
** chunk's CRC did not match. */
int dp_sc_add_artifact(dp_sc *s, const char *name, const void *data, size_t len, dp_sc_error *err);
int dp_sc_keepalive(dp_sc *s, int64_t interval_ms, dp_sc_error *err);

/* While flag is set (not NULL), every execution of the session looks at
** *flag at least every 200 ms while it waits for the server; when *flag is
** non-zero the execution ends with DIPPER_INTERRUPTED (abandoned and
** released as after a callback that stops) and the hook is cleared, so that
** what the caller sends next (a clean-up) runs to its end.  NULL: no hook.
** For long waits on a quiet stream (the listener bus) that a signal handler
** must be able to end; the flag is read (atomic_load), never written. */
void dp_sc_set_abort(dp_sc *s, atomic_int *flag);
/* Interrupt every running operation of this session (InterruptRequest ALL). */
int dp_sc_interrupt_all(dp_sc *s, dp_sc_error *err);

/* ---- for tests and benchmarks only (not part of the backend's interface) ---- */

/* Cut the next execution's result stream, and drop its connection, after n
** responses (once; 0: off), as a network failure would: the execution must
** then be resumed with ReattachExecute on a new connection. */
void dp_sc__test_cut_after(dp_sc *s, int n);
/* How many ReattachExecute calls this session has made. */
int dp_sc__test_reattaches(const dp_sc *s);
/* The ExecutePlan request dp_sc_execute sends for `plan` (reattachable, with
** this operation id), serialized; malloc'd (free()), NULL when out of memory.
** The client's own cost per query, for bench/spark_bench.c. */
uint8_t *dp_sc__encode_execute(dp_sc *s, const Spark__Connect__Plan *plan, const char *operation_id,
                               size_t *len);

#endif /* DP_SPARK_CLIENT_H */
