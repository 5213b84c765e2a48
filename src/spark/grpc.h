/*
** grpc.h — gRPC over HTTP/2, the transport of the Spark Connect client.
**
** One dp_grpc is one HTTP/2 connection (nghttp2 for the framing, a plain TCP
** socket or OpenSSL TLS under it) on which unary and server-streaming calls
** run.  Several calls may be open at once on one connection (a listener-bus
** stream next to ordinary calls): reading one call pumps the connection and
** buffers what arrives for the others.  One thread at a time per connection;
** every wait is a poll() bounded by the call's deadline.  Reading never
** raises SIGPIPE (sends use MSG_NOSIGNAL, also under TLS).
**
** Messages are opaque bytes here (serialized protobuf); grpc.c knows the
** gRPC framing (1-byte compressed flag, 4-byte big-endian length), the
** request headers (:path, content-type application/grpc, te: trailers,
** authorization, user-agent, grpc-timeout) and the status in the trailers
** (grpc-status, grpc-message percent-decoded, grpc-status-details-bin
** base64-decoded), or in the headers of a trailers-only response.
**
** Errors: every call returns a dipper code and, on failure, writes one line
** saying what happened and where into `err` (which the caller owns):
**   DIPPER_CONNECT   the address does not answer (refused, unknown host, TLS
**                    handshake failed, certificate not trusted, the peer does
**                    not speak HTTP/2); the message names host:port
**   DIPPER_IO        the connection broke in the middle of a call
**   DIPPER_PROTOCOL  the peer broke HTTP/2 or gRPC framing
**   DIPPER_TIMEOUT   the deadline passed
**   DIPPER_LIMIT     a message above the size limit (either direction)
**   DIPPER_REMOTE    the call ended with a non-OK grpc-status: *st holds it
**                    (a non-200 HTTP status without one is mapped to a gRPC
**                    code the way gRPC does, e.g. 503 -> UNAVAILABLE)
**   DIPPER_NOMEM
** `err` is appended to, never cleared.  A compressed response message (flag 1)
** is refused with DIPPER_PROTOCOL: requests say grpc-accept-encoding:
** identity.  After GOAWAY the calls already running finish; new ones fail.
*/
#ifndef DP_SPARK_GRPC_H
#define DP_SPARK_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/sc_uri.h"

/* ---- connections and calls ---- */

typedef struct dp_grpc dp_grpc;           /* one HTTP/2 connection */
typedef struct dp_grpc_call dp_grpc_call; /* one server-streaming call */

typedef struct dp_grpc_opts {
  const char *host;
  int port;
  bool tls;
  const char *token;        /* sent as "authorization: Bearer <token>" when not NULL */
  const char *user_agent;   /* NULL: "dipper/<version>" */
  size_t max_message;       /* largest message accepted or sent; 0: 128 MiB */
  int connect_timeout_ms;   /* 0: 10000 */
  const char *ca_file;      /* TLS: a CA bundle; NULL: the system's default paths */
  bool tls_no_verify;       /* TLS: skip certificate checks (tests against self-signed) */
} dp_grpc_opts;

/* gRPC status codes used by callers (the full list is in grpc.c). */
enum {
  DP_GRPC_OK = 0, DP_GRPC_CANCELLED = 1, DP_GRPC_UNKNOWN = 2, DP_GRPC_INVALID_ARGUMENT = 3,
  DP_GRPC_DEADLINE_EXCEEDED = 4, DP_GRPC_NOT_FOUND = 5, DP_GRPC_RESOURCE_EXHAUSTED = 8,
  DP_GRPC_FAILED_PRECONDITION = 9, DP_GRPC_INTERNAL = 13, DP_GRPC_UNAVAILABLE = 14,
  DP_GRPC_UNAUTHENTICATED = 16,
};

typedef struct dp_grpc_status {
  int code;                 /* grpc-status; -1 when the call ended without one */
  char *message;            /* grpc-message, percent-decoded; malloc'd or NULL */
  uint8_t *details;         /* grpc-status-details-bin decoded (a google.rpc.Status); or NULL */
  size_t details_len;
} dp_grpc_status;
void dp_grpc_status_free(dp_grpc_status *st); /* frees the members, zeroes; NULL fine */

/* Connect (TCP, then TLS when asked, then the HTTP/2 preface and SETTINGS). */
int dp_grpc_connect(dp_grpc **out, const dp_grpc_opts *o, dp_buf *err);
/* GOAWAY and close.  Calls still open are cut off: their next
** dp_grpc_stream_next gives -DIPPER_IO; free them with dp_grpc_stream_free
** as usual (before or after this).  NULL is fine. */
void dp_grpc_close(dp_grpc *g);
/* "host:port", for messages; borrowed until dp_grpc_close. */
const char *dp_grpc_peer(const dp_grpc *g);
/* false once the connection has failed or the peer sent GOAWAY: open a new one. */
bool dp_grpc_usable(const dp_grpc *g);

/* A unary call: `method` is the full path "/spark.connect.SparkConnectService/Config".
** deadline_ms: relative, 0 for none.  On DIPPER_OK *resp holds the one response
** message (appended to resp) and st->code == 0; on DIPPER_REMOTE *st holds the
** failing status.  `st` may be NULL when the caller does not need it (it is
** then freed inside); else it is zeroed first and the caller frees it. */
int dp_grpc_unary(dp_grpc *g, const char *method, const void *req, size_t len,
                  int64_t deadline_ms, dp_buf *resp, dp_grpc_status *st, dp_buf *err);

/* Start a server-streaming call (the request is sent whole, then END_STREAM). */
int dp_grpc_stream_open(dp_grpc *g, const char *method, const void *req, size_t len,
                        int64_t deadline_ms, dp_grpc_call **out, dp_buf *err);
/* The next message of the call, waiting for it: 1 with *msg and *len set
** (borrowed until the next call on c, even when other calls pump the
** connection meanwhile), 0 at the end of a call that ended with status OK,
** or a negative dipper code (-DIPPER_REMOTE with *st filled when the status is
** not OK; -DIPPER_IO when the connection broke; -DIPPER_TIMEOUT ...).
** Messages that arrived before a failure are handed out first.  `st` (may be
** NULL) is written only when the call ends (0 or -DIPPER_REMOTE), without
** freeing what it held: the caller frees it with dp_grpc_status_free.
** timeout_ms bounds this one wait (0: only the call's deadline); when it
** passes with nothing read, the result is -DIPPER_TIMEOUT and the call stays
** usable.  When the call's deadline passes, the call is cancelled and ends
** with -DIPPER_TIMEOUT. */
int dp_grpc_stream_next(dp_grpc_call *c, int64_t timeout_ms, const uint8_t **msg, size_t *len,
                        dp_grpc_status *st, dp_buf *err);
/* Cancel (RST_STREAM CANCEL) if still open, and free.  NULL is fine. */
void dp_grpc_stream_free(dp_grpc_call *c);

#endif /* DP_SPARK_GRPC_H */
