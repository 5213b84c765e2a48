/*
** sc_uri.h — the Spark Connect connection string (sc://...), parsed.
**
** Owns: the one grammar of an engine address, used both where the address
** is only checked (SET 'dipper.engine' in plan/options.c, dipper_open) and
** where it is connected to (spark/client.c), so that what a SET accepts is
** exactly what the client can use.  In core/ because both layers read it.
** Does not own: connecting (spark/grpc.c).
*/
#ifndef DP_CORE_SC_URI_H
#define DP_CORE_SC_URI_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

/* sc://host[:port][/;param=value;...] with params token, use_ssl (true/false),
** user_id, user_agent, session_id (a UUID) and grpc_max_message_size
** (bytes, 1..2147483647; dipper's own, not Spark's).  Keys are matched
** without regard to case.  Unknown params are an error (a typo must not pass silently).
** A token without use_ssl turns TLS on, as Spark's own clients do; an
** explicit use_ssl=false with a token is allowed (loopback tests). */
typedef struct dp_sc_uri {
  char *host;             /* malloc'd; an IPv6 literal without its brackets */
  int port;               /* 15002 when absent */
  bool use_ssl;
  char *token;            /* NULL when none */
  char *user_id;          /* NULL: the caller picks (getenv USER, then "dipper") */
  char *user_agent;       /* NULL: "dipper/<version>" */
  char *session_id;       /* NULL: the session makes a fresh UUID */
  size_t max_message;     /* 0: 128 MiB */
} dp_sc_uri;

/* DIPPER_OK, or DIPPER_OPTION with `err` saying what is wrong at which
** character and what to write instead.  *out is zeroed first; free it with
** dp_sc_uri_free (also after a failure). */
int dp_sc_uri_parse(const char *s, dp_sc_uri *out, dp_buf *err);
void dp_sc_uri_free(dp_sc_uri *u);

#endif /* DP_CORE_SC_URI_H */
