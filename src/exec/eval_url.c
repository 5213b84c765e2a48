/*
** eval_url.c — PARSE_URL(url, part [, key]) with Flink's semantics, which
** are java.net.URL's: the protocol is one Java has a handler for (http,
** https, ftp, file, jar, mailto; case-insensitive, given in lower case),
** else the URL is malformed and the result NULL.  After the protocol, the
** fragment is what follows the first '#' (REF), the query what follows the
** first '?' before it (QUERY), and `//authority` runs up to the next '/',
** '?' or '#' (AUTHORITY); USERINFO is the authority before its '@', HOST
** the rest without its ':port' (a port that is not digits is malformed),
** PATH what is left ('' when nothing), FILE the path with '?query'.  A
** part that is not there is NULL (QUERY, REF, USERINFO; HOST and PATH are
** '').  The part names are upper case, as in Flink; another name gives
** NULL.  With a key, QUERY gives the value of the first `key=value` of the
** query ('' when written `key=`), NULL when the key is not there.
*/
#include <strings.h>

#include "exec/eval_int.h"
#include "plan/functions.h"

typedef struct url_parts {
  const char *proto, *auth, *path, *query, *ref;
  size_t proto_n, auth_n, path_n, query_n, ref_n;
  bool has_auth, has_query, has_ref;
} url_parts;

static bool known_protocol(const char *p, size_t n) {
  static const char *const names[] = {"http", "https", "ftp", "file", "jar", "mailto"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == n && !strncasecmp(p, names[i], n)) return true;
  return false;
}

static bool port_ok(const char *host, size_t n) {
  /* [v6]:port or host:port; the port digits only (or empty) */
  size_t at = 0;
  if (n && host[0] == '[') {
    while (at < n && host[at] != ']') at++;
    if (at == n) return false;
    at++;
    if (at == n) return true;
    if (host[at] != ':') return false;
  } else {
    while (at < n && host[at] != ':') at++;
    if (at == n) return true;
  }
  for (size_t i = at + 1; i < n; i++)
    if (host[i] < '0' || host[i] > '9') return false;
  return true;
}

static bool split_url(const char *s, size_t n, url_parts *u) {
  memset(u, 0, sizeof *u);
  while (n && (unsigned char)*s <= ' ') s++, n--; /* Java trims the spec */
  while (n && (unsigned char)s[n - 1] <= ' ') n--;
  size_t i = 0;
  while (i < n && s[i] != ':' && s[i] != '/' && s[i] != '?' && s[i] != '#') i++;
  if (i == n || s[i] != ':' || !known_protocol(s, i)) return false;
  u->proto = s;
  u->proto_n = i;
  const char *p = s + i + 1, *end = s + n;
  const char *hash = memchr(p, '#', (size_t)(end - p));
  if (hash) {
    u->has_ref = true;
    u->ref = hash + 1;
    u->ref_n = (size_t)(end - hash - 1);
    end = hash;
  }
  const char *q = memchr(p, '?', (size_t)(end - p));
  if (q) {
    u->has_query = true;
    u->query = q + 1;
    u->query_n = (size_t)(end - q - 1);
    end = q;
  }
  if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
    p += 2;
    const char *a = p;
    while (p < end && *p != '/') p++;
    u->has_auth = true;
    u->auth = a;
    u->auth_n = (size_t)(p - a);
    const char *host = memchr(a, '@', u->auth_n);
    host = host ? host + 1 : a;
    if (!port_ok(host, (size_t)(p - host))) return false;
  }
  u->path = p;
  u->path_n = (size_t)(end - p);
  return true;
}

/* The part of u named `part` as [*s, *s + *n); false when it is NULL. */
static bool url_part(const url_parts *u, const char *part, size_t pn, const char **s, size_t *n) {
#define IS(w) (pn == sizeof w - 1 && !memcmp(part, w, pn))
  const char *a = u->auth, *at = u->has_auth ? memchr(a, '@', u->auth_n) : NULL;
  if (IS("PROTOCOL")) {
    *s = u->proto, *n = u->proto_n;
  } else if (IS("AUTHORITY")) {
    if (!u->has_auth) return false;
    *s = a, *n = u->auth_n;
  } else if (IS("USERINFO")) {
    if (!at) return false;
    *s = a, *n = (size_t)(at - a);
  } else if (IS("HOST")) {
    const char *h = at ? at + 1 : a, *he = a ? a + u->auth_n : NULL;
    size_t hn = he ? (size_t)(he - h) : 0;
    size_t k = 0;
    if (hn && h[0] == '[') {
      while (k < hn && h[k] != ']') k++;
      k++;
    }
    while (k < hn && h[k] != ':') k++;
    *s = h ? h : "", *n = h ? k : 0;
  } else if (IS("PATH")) {
    *s = u->path, *n = u->path_n;
  } else if (IS("QUERY")) {
    if (!u->has_query) return false;
    *s = u->query, *n = u->query_n;
  } else if (IS("REF")) {
    if (!u->has_ref) return false;
    *s = u->ref, *n = u->ref_n;
  } else if (IS("FILE")) {
    *s = u->path, *n = u->path_n + (u->has_query ? 1 + u->query_n : 0); /* path?query is contiguous */
  } else {
    return false;
  }
  return true;
#undef IS
}

/* The value of `key` in a query: the first (&|^)key=([^&]*). */
static bool query_value(const char *q, size_t n, const char *key, size_t kn, const char **s, size_t *vn) {
  for (size_t i = 0; i + kn < n; i++) {
    if ((i == 0 || q[i - 1] == '&') && !memcmp(q + i, key, kn) && q[i + kn] == '=') {
      size_t b = i + kn + 1, e = b;
      while (e < n && q[e] != '&') e++;
      *s = q + b;
      *vn = e - b;
      return true;
    }
  }
  return false;
}

static int k_parse_url(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  int nargs = e->u.call.nargs;
  dp_vector *res = dp_ev_new(e->type, n);
  if (!res) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    url_parts u;
    size_t un, pn, kn = 0, vn;
    const char *v;
    if (dp_ev_any_null(args, nargs, i)) {
      rc = dp_vector_append_null(res);
      continue;
    }
    const char *url = dp_ev_str(&args[0], i, &un), *part = dp_ev_str(&args[1], i, &pn);
    const char *key = nargs > 2 ? dp_ev_str(&args[2], i, &kn) : NULL;
    bool ok = split_url(url, un, &u) && (!key || (pn == 5 && !memcmp(part, "QUERY", 5))) &&
              url_part(&u, part, pn, &v, &vn) && (!key || query_value(v, vn, key, kn, &v, &vn));
    char lower[8];
    if (ok && pn == 8 && !memcmp(part, "PROTOCOL", 8)) { /* Java gives it in lower case */
      for (size_t k = 0; k < vn && k < sizeof lower; k++)
        lower[k] = (char)(v[k] >= 'A' && v[k] <= 'Z' ? v[k] + 32 : v[k]);
      v = lower;
    }
    rc = ok ? dp_vector_append_str(res, v, vn) : dp_vector_append_null(res);
  }
  if (rc) {
    dp_vector_free(res);
    return rc;
  }
  *out = res;
  return DIPPER_OK;
}

dp_ev_kernel dp_ev_kernel_url(int fn_id) { return fn_id == DP_F_PARSE_URL ? k_parse_url : NULL; }
