/*
** sc_uri.c — the Spark Connect connection string, parsed into a dp_sc_uri.
**
** Owns: the grammar sc://host[:port][/;key=value;...] (Spark's
** client-connection-string document) with dipper's one addition,
** grpc_max_message_size, and the errors that say at which character a
** string goes wrong and what to write instead.
** Its users: SET 'dipper.engine' (plan/options.c) and dipper_open check an
** address with it; the Spark client (spark/client.c) connects with it.
** Does not own: connecting (spark/grpc.c).
**
** Keys are matched without regard to case, as options.c does; values are
** taken as written (no percent-decoding), and may not hold spaces or control
** characters, which only a mistake puts there.
*/
#include "core/sc_uri.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/compiler.h"
#include "dipper.h"

#define DP_SC_DEFAULT_PORT 15002

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
static bool is_hex(char ch) {
  return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}
static bool is_alnum(char ch) {
  return is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool eq_ci(const char *a, size_t n, const char *lit) {
  if (strlen(lit) != n) return false;
  for (size_t i = 0; i < n; i++) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
    if (x != lit[i]) return false;
  }
  return true;
}

static char *dup_n(const char *p, size_t n) {
  char *s = malloc(n + 1);
  if (s) {
    memcpy(s, p, n);
    s[n] = '\0';
  }
  return s;
}

/* 8-4-4-4-12 hex digits. */
static bool is_uuid(const char *p, size_t n) {
  if (n != 36) return false;
  for (size_t i = 0; i < n; i++) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? p[i] != '-' : !is_hex(p[i])) return false;
  }
  return true;
}

/* The error: where (1-based character) and what. */
DP_PRINTF(4, 5)
static int fail(dp_buf *err, const char *s, const char *at, const char *fmt, ...) {
  dp_buf_printf(err, "connection string '%s', character %zu: ", s, (size_t)(at - s) + 1);
  va_list ap;
  va_start(ap, fmt);
  dp_buf_vprintf(err, fmt, ap);
  va_end(ap);
  return DIPPER_OPTION;
}

enum { K_TOKEN, K_USE_SSL, K_USER_ID, K_USER_AGENT, K_SESSION_ID, K_MAX_MESSAGE, K_COUNT };
static const char *const keys[K_COUNT] = {"token",      "use_ssl",    "user_id",
                                          "user_agent", "session_id", "grpc_max_message_size"};

/* One ;key=value parameter at p (n bytes). */
static int parse_param(const char *s, const char *p, size_t n, dp_sc_uri *u, bool seen[K_COUNT],
                       bool *ssl_given, dp_buf *err) {
  const char *eq = memchr(p, '=', n);
  if (!eq || eq == p)
    return fail(err, s, p, "a parameter must be written key=value (e.g. ;token=abc)");
  size_t klen = (size_t)(eq - p);
  const char *v = eq + 1;
  size_t vlen = n - klen - 1;
  int k = -1;
  for (int i = 0; i < K_COUNT; i++)
    if (eq_ci(p, klen, keys[i])) k = i;
  if (k < 0)
    return fail(err, s, p,
                "unknown parameter '%.*s': Spark Connect takes token, use_ssl, user_id, "
                "user_agent, session_id and grpc_max_message_size",
                (int)klen, p);
  if (seen[k]) return fail(err, s, p, "the parameter %s is given twice; keep one", keys[k]);
  seen[k] = true;
  if (vlen == 0) return fail(err, s, v, "the parameter %s needs a value: ;%s=...", keys[k], keys[k]);
  for (size_t i = 0; i < vlen; i++)
    if ((unsigned char)v[i] <= ' ' || v[i] == 0x7f)
      return fail(err, s, v + i,
                  "the value of %s holds a space or a control character; remove it", keys[k]);
  char **dst = NULL;
  switch (k) {
  case K_TOKEN: dst = &u->token; break;
  case K_USER_ID: dst = &u->user_id; break;
  case K_USER_AGENT: dst = &u->user_agent; break;
  case K_SESSION_ID:
    if (!is_uuid(v, vlen))
      return fail(err, s, v,
                  "session_id must be a UUID like 00112233-4455-6677-8899-aabbccddeeff; "
                  "leave it out for a fresh session");
    dst = &u->session_id;
    break;
  case K_USE_SSL:
    if (eq_ci(v, vlen, "true"))
      u->use_ssl = true;
    else if (eq_ci(v, vlen, "false"))
      u->use_ssl = false;
    else
      return fail(err, s, v, "use_ssl must be true or false");
    *ssl_given = true;
    return DIPPER_OK;
  case K_MAX_MESSAGE: {
    size_t m = 0;
    for (size_t i = 0; i < vlen; i++) {
      if (!is_digit(v[i]) || m > 0x7fffffff)
        return fail(err, s, v + i,
                    "grpc_max_message_size must be a number of bytes from 1 to 2147483647 "
                    "(e.g. 268435456 for 256 MiB)");
      m = m * 10 + (size_t)(v[i] - '0');
    }
    if (m == 0 || m > 0x7fffffff)
      return fail(err, s, v,
                  "grpc_max_message_size must be a number of bytes from 1 to 2147483647 "
                  "(e.g. 268435456 for 256 MiB)");
    u->max_message = m;
    return DIPPER_OK;
  }
  default: break;
  }
  *dst = dup_n(v, vlen);
  return *dst ? DIPPER_OK : DIPPER_NOMEM;
}

int dp_sc_uri_parse(const char *s, dp_sc_uri *out, dp_buf *err) {
  memset(out, 0, sizeof *out);
  out->port = DP_SC_DEFAULT_PORT;
  if (!s) {
    dp_buf_printf(err, "no connection string: write sc://host:15002");
    return DIPPER_OPTION;
  }
  if (strncmp(s, "sc://", 5) != 0)
    return fail(err, s, s, "a Spark Connect address starts with sc:// (e.g. sc://localhost:15002)");
  const char *p = s + 5;
  const char *host = p;
  size_t hlen;
  if (*p == '[') {
    host = ++p;
    while (is_hex(*p) || *p == ':' || *p == '.') p++;
    if (*p != ']')
      return fail(err, s, p,
                  "an IPv6 address in [...] holds only hex digits, ':' and '.' and ends with ']' "
                  "(e.g. sc://[::1]:15002)");
    hlen = (size_t)(p - host);
    if (hlen == 0 || !memchr(host, ':', hlen))
      return fail(err, s, host, "the brackets hold no IPv6 address (e.g. sc://[::1]:15002)");
    p++;
  } else {
    while (is_alnum(*p) || *p == '.' || *p == '-' || *p == '_') p++;
    hlen = (size_t)(p - host);
    if (hlen == 0)
      return fail(err, s, p, "the host is missing (e.g. sc://localhost:15002)");
    if (*p == ';')
      return fail(err, s, p, "parameters follow a '/': sc://host:15002/;key=value");
    if (*p && *p != ':' && *p != '/')
      return fail(err, s, p,
                  "a host name holds only letters, digits, '.', '-' and '_'; an IPv6 address "
                  "goes in brackets (sc://[::1]:15002)");
  }
  if (*p == ':') {
    const char *port = ++p;
    long v = 0;
    while (is_digit(*p) && v <= 65535) v = v * 10 + (*p++ - '0');
    if (p > port && v >= 1 && v <= 65535 && *p == ';')
      return fail(err, s, p, "parameters follow a '/': sc://host:15002/;key=value");
    if (p == port || v < 1 || v > 65535 || (*p && *p != '/'))
      return fail(err, s, port, "the port must be a number from 1 to 65535 (e.g. :15002)");
    out->port = (int)v;
  } else if (*p && *p != '/') {
    return fail(err, s, p, "expected ':port' or '/;key=value' after the host");
  }
  out->host = dup_n(host, hlen);
  if (!out->host) return DIPPER_NOMEM;
  bool seen[K_COUNT] = {false};
  bool ssl_given = false;
  if (*p == '/') {
    p++;
    if (*p && *p != ';')
      return fail(err, s, p, "parameters follow '/;' (e.g. sc://host:15002/;token=abc)");
    while (*p) {
      if (*p == ';') {
        p++;
        continue;
      }
      size_t n = strcspn(p, ";");
      int rc = parse_param(s, p, n, out, seen, &ssl_given, err);
      if (rc) return rc;
      p += n;
    }
  }
  /* A token travels only over TLS unless the string says otherwise. */
  if (out->token && !ssl_given) out->use_ssl = true;
  return DIPPER_OK;
}

void dp_sc_uri_free(dp_sc_uri *u) {
  if (!u) return;
  free(u->host);
  free(u->token);
  free(u->user_id);
  free(u->user_agent);
  free(u->session_id);
  memset(u, 0, sizeof *u);
}
