/*
** grpc.c — gRPC over HTTP/2: the transport of the Spark Connect client.
**
** Owns: the TCP socket (non-blocking, every wait a poll() bounded by a
** deadline), TLS through OpenSSL 3 (ALPN "h2", SNI, certificate and host
** name checks), the HTTP/2 session (nghttp2, client side), the gRPC request
** headers, the gRPC message framing both ways, the size limit, deadlines and
** the status of each call (grpc-status, grpc-message, grpc-status-details-bin
** in the trailers or in a trailers-only response).
** Does not own: what the messages mean (serialized protobuf, client.c), the
** connection string (core/sc_uri.c), retries and reconnecting (client.c).
**
** Why nghttp2 and not gRPC core: Spark Connect needs only unary and
** server-streaming calls (AddArtifacts, the one client-streaming method, is
** not used), and those are a thin layer over HTTP/2.  nghttp2 is a small C
** library packaged by Debian that does the framing and no I/O, so the poll
** loop, deadlines and errors stay ours; gRPC core is C++ underneath, large,
** and brings its own threads and event engine into a library that promises
** one thread per handle.
**
** Flow control: we announce big windows (the stream window and the
** connection window both DP_WINDOW) and let nghttp2 hand credit back as soon
** as a DATA chunk is copied into the call's buffer, so a 128 MiB message
** streams without a stall.  The cost is that a call nobody reads buffers
** what arrives for it; callers read their calls.
**
** Memory: each call owns one byte buffer that holds its framed messages
** (prefix + body) as they arrive; a message announced by its prefix is
** reserved whole, so a large one is copied once, and the buffer is reused
** for the call's next messages.  dp_grpc_stream_next hands out a pointer
** into it.  The only per-call allocations are the call, its request copy
** and that buffer.
*/
#include "spark/grpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "core/compiler.h"
#include "dipper.h"

#define DP_DEFAULT_MAX_MESSAGE ((size_t)128 << 20)
#define DP_WINDOW ((int32_t)1 << 30)      /* stream and connection receive windows */
#define DP_MAX_FRAME ((uint32_t)1 << 20)  /* largest DATA frame we accept */
#define DP_RBUF_SIZE ((size_t)256 << 10)  /* socket read buffer */
#define DP_MSG_LIMIT_CAP ((size_t)0x7fffffff)

/* The gRPC status codes by number, for messages. */
static const char *const status_names[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED"};

static const char *status_name(int code) {
  if (code >= 0 && code < (int)(sizeof status_names / sizeof status_names[0]))
    return status_names[code];
  return "unknown status";
}

struct dp_grpc {
  int fd;
  SSL_CTX *ssl_ctx;
  SSL *ssl;
  BIO_METHOD *bio_method;
  nghttp2_session *h2;
  bool tls;
  char *host;
  int port;
  char *peer;        /* "host:port" ([v6]:port), also :authority */
  char *auth;        /* "Bearer <token>" or NULL */
  char *user_agent;
  size_t max_message;
  int connect_timeout_ms;
  uint8_t *rbuf;     /* DP_RBUF_SIZE bytes */
  bool blocked;      /* the last write would have blocked: poll for POLLOUT */
  bool got_settings; /* the server's first SETTINGS arrived */
  bool goaway;
  uint32_t goaway_code;
  int fail_code;     /* the connection is dead: DIPPER_IO / DIPPER_PROTOCOL ... */
  char fail_msg[384];
  dp_grpc_call *calls; /* open calls, for dp_grpc_close */
};

struct dp_grpc_call {
  dp_grpc *g;        /* NULL once the connection was closed under the call */
  dp_grpc_call *prev, *next;
  int32_t stream_id;
  char path[160];
  /* the request: prefix + message, sent by the data provider */
  uint8_t *req;
  size_t req_len, req_off;
  /* framed response bytes: [head, tail) not yet handed out; the first `lent`
  ** bytes after head were handed out by the last dp_grpc_stream_next */
  uint8_t *buf;
  size_t head, tail, cap, lent;
  uint8_t *old_buf;  /* the buffer a lent message lives in, after a regrow */
  uint8_t prefix[5];
  uint8_t prefix_have; /* 5 while inside a message body */
  uint32_t body_left;
  /* response state */
  int http_status;
  bool headers_done;
  bool closed;       /* on_stream_close ran */
  uint32_t h2_error; /* its error code */
  int64_t deadline;  /* absolute monotonic ms; 0: none */
  int64_t deadline_ms;
  dp_grpc_status st;
  int err_code;      /* a local failure of this call */
  char err_msg[384];
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* nghttp2_nv takes non-const pointers but copies the bytes (we never pass
** NGHTTP2_NV_FLAG_NO_COPY_*), so string constants may be handed to it. */
static uint8_t *nv_bytes(const char *s) { return (uint8_t *)(uintptr_t)s; }

static void errno_text(int e, char *out, size_t cap) {
  switch (e) {
  case ECONNREFUSED: snprintf(out, cap, "connection refused"); return;
  case ETIMEDOUT: snprintf(out, cap, "connection timed out"); return;
  case EHOSTUNREACH: snprintf(out, cap, "host unreachable"); return;
  case ENETUNREACH: snprintf(out, cap, "network unreachable"); return;
  case ECONNRESET: snprintf(out, cap, "connection reset by peer"); return;
  case EPIPE: snprintf(out, cap, "broken pipe"); return;
  default:
    if (strerror_r(e, out, cap) != 0) snprintf(out, cap, "errno %d", e);
  }
}

/* ---- connection failure ---- */

/* Mark the connection dead (the first reason wins). */
DP_PRINTF(3, 4)
static void conn_fail(dp_grpc *g, int code, const char *fmt, ...) {
  if (g->fail_code) return;
  g->fail_code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->fail_msg, sizeof g->fail_msg, fmt, ap);
  va_end(ap);
}

/* Fail one call (the first reason wins) and reset its stream. */
DP_PRINTF(3, 4)
static void call_fail(dp_grpc_call *c, int code, const char *fmt, ...) {
  if (c->err_code) return;
  c->err_code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err_msg, sizeof c->err_msg, fmt, ap);
  va_end(ap);
  if (c->g && !c->closed && c->stream_id > 0)
    nghttp2_submit_rst_stream(c->g->h2, NGHTTP2_FLAG_NONE, c->stream_id, NGHTTP2_CANCEL);
}

/* ---- socket and TLS I/O ---- */

/* A BIO over our socket that writes with MSG_NOSIGNAL: OpenSSL's own socket
** BIO uses write(), which raises SIGPIPE when the peer has gone. */
static int bio_write(BIO *b, const char *data, int len) {
  dp_grpc *g = BIO_get_data(b);
  BIO_clear_retry_flags(b);
  ssize_t n = send(g->fd, data, (size_t)len, MSG_NOSIGNAL);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_write(b);
    return -1;
  }
  return (int)n;
}

static int bio_read(BIO *b, char *out, int len) {
  dp_grpc *g = BIO_get_data(b);
  BIO_clear_retry_flags(b);
  ssize_t n = recv(g->fd, out, (size_t)len, 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_read(b);
    return -1;
  }
  return (int)n;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr) {
  (void)b;
  (void)num;
  (void)ptr;
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int bio_create(BIO *b) {
  BIO_set_init(b, 1);
  return 1;
}

enum { IO_AGAIN = -1, IO_ERROR = -2 };

/* Read up to n bytes: > 0 bytes read, 0 at end of stream, IO_AGAIN, or
** IO_ERROR with the connection failed. */
static ssize_t conn_read(dp_grpc *g, uint8_t *out, size_t n) {
  if (!g->ssl) {
    ssize_t r = recv(g->fd, out, n, 0);
    if (r >= 0) return r;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return IO_AGAIN;
    char why[128];
    errno_text(errno, why, sizeof why);
    conn_fail(g, DIPPER_IO, "the connection to %s broke: %s", g->peer, why);
    return IO_ERROR;
  }
  ERR_clear_error();
  int r = SSL_read(g->ssl, out, n > INT32_MAX ? INT32_MAX : (int)n);
  if (r > 0) return r;
  int e = SSL_get_error(g->ssl, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return IO_AGAIN;
  if (e == SSL_ERROR_ZERO_RETURN) return 0;
  if (e == SSL_ERROR_SYSCALL && errno == 0) return 0;
  unsigned long ossl = ERR_peek_last_error();
  if (ossl && ERR_GET_REASON(ossl) == SSL_R_UNEXPECTED_EOF_WHILE_READING) return 0;
  char why[200];
  if (ossl)
    ERR_error_string_n(ossl, why, sizeof why);
  else
    errno_text(errno, why, sizeof why);
  conn_fail(g, DIPPER_IO, "the TLS connection to %s broke: %s", g->peer, why);
  return IO_ERROR;
}

static ssize_t conn_write(dp_grpc *g, const uint8_t *p, size_t n) {
  if (!g->ssl) {
    ssize_t r = send(g->fd, p, n, MSG_NOSIGNAL);
    if (r >= 0) return r;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return IO_AGAIN;
    char why[128];
    errno_text(errno, why, sizeof why);
    conn_fail(g, DIPPER_IO, "the connection to %s broke while sending: %s", g->peer, why);
    return IO_ERROR;
  }
  ERR_clear_error();
  int r = SSL_write(g->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
  if (r > 0) return r;
  int e = SSL_get_error(g->ssl, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return IO_AGAIN;
  char why[200];
  unsigned long ossl = ERR_peek_last_error();
  if (ossl)
    ERR_error_string_n(ossl, why, sizeof why);
  else
    errno_text(errno, why, sizeof why);
  conn_fail(g, DIPPER_IO, "the TLS connection to %s broke while sending: %s", g->peer, why);
  return IO_ERROR;
}

/* ---- nghttp2 callbacks ---- */

static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *ud) {
  (void)s;
  (void)flags;
  dp_grpc *g = ud;
  ssize_t n = conn_write(g, data, len);
  if (n == IO_AGAIN) {
    g->blocked = true;
    return NGHTTP2_ERR_WOULDBLOCK;
  }
  if (n < 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
  return n;
}

static ssize_t read_request(nghttp2_session *s, int32_t sid, uint8_t *out, size_t len,
                            uint32_t *flags, nghttp2_data_source *src, void *ud) {
  (void)src;
  (void)ud;
  /* Through the stream's user data, not src->ptr: a call freed before its
  ** request went out has cleared it, and the stream is reset instead. */
  dp_grpc_call *c = nghttp2_session_get_stream_user_data(s, sid);
  if (!c) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  size_t n = c->req_len - c->req_off;
  if (n > len) n = len;
  memcpy(out, c->req + c->req_off, n);
  c->req_off += n;
  if (c->req_off == c->req_len) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return (ssize_t)n;
}

/* Room for n more bytes at the tail.  Bytes lent to the caller stay where
** they are until the next dp_grpc_stream_next: a regrow while some are lent
** moves the rest to a new buffer and keeps the old one alive until then. */
static bool buf_reserve(dp_grpc_call *c, size_t n) {
  if (c->cap - c->tail >= n) return true;
  size_t keep = c->head + c->lent; /* bytes before this may go */
  size_t live = c->tail - keep;
  if (n > SIZE_MAX / 2 - live) return false;
  if (c->lent == 0 && c->cap - live >= n) {
    memmove(c->buf, c->buf + keep, live);
  } else {
    size_t cap = c->cap ? c->cap : 4096;
    while (cap < live + n) cap *= 2;
    uint8_t *nb;
    if (c->lent == 0) {
      if (keep) memmove(c->buf, c->buf + keep, live);
      nb = realloc(c->buf, cap);
      if (!nb) return false;
    } else {
      nb = malloc(cap);
      if (!nb) return false;
      memcpy(nb, c->buf + keep, live);
      free(c->old_buf); /* cannot hold anything lent: only one message is out at a time */
      c->old_buf = c->buf;
      c->lent = 0;
    }
    c->buf = nb;
    c->cap = cap;
  }
  c->head = 0;
  c->tail = live;
  return true;
}

static void buf_append(dp_grpc_call *c, const uint8_t *p, size_t n) {
  memcpy(c->buf + c->tail, p, n);
  c->tail += n;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *data, size_t len,
                   void *ud) {
  (void)flags;
  dp_grpc *g = ud;
  dp_grpc_call *c = nghttp2_session_get_stream_user_data(s, sid);
  if (!c || c->err_code) return 0;
  while (len > 0) {
    if (c->prefix_have < 5) {
      size_t n = 5u - c->prefix_have;
      if (n > len) n = len;
      memcpy(c->prefix + c->prefix_have, data, n);
      c->prefix_have = (uint8_t)(c->prefix_have + n);
      data += n;
      len -= n;
      if (c->prefix_have < 5) break;
      uint32_t mlen = (uint32_t)c->prefix[1] << 24 | (uint32_t)c->prefix[2] << 16 |
                      (uint32_t)c->prefix[3] << 8 | c->prefix[4];
      if (c->prefix[0] == 1) {
        call_fail(c, DIPPER_PROTOCOL,
                  "%s sent a compressed message on %s although dipper asked for none "
                  "(grpc-accept-encoding: identity); turn compression off on the server",
                  g->peer, c->path);
        return 0;
      }
      if (c->prefix[0] != 0) {
        call_fail(c, DIPPER_PROTOCOL,
                  "%s sent a gRPC message with flag byte %u on %s (only 0 or 1 exist)", g->peer,
                  c->prefix[0], c->path);
        return 0;
      }
      if (mlen > g->max_message) {
        call_fail(c, DIPPER_LIMIT,
                  "a response message of %u bytes from %s on %s is above the limit of %zu bytes; "
                  "raise it with the grpc_max_message_size parameter of the connection string "
                  "(sc://host:port/;grpc_max_message_size=%u)",
                  mlen, g->peer, c->path, g->max_message, mlen);
        return 0;
      }
      if (!buf_reserve(c, 5 + (size_t)mlen)) {
        call_fail(c, DIPPER_NOMEM, "out of memory for a %u-byte message from %s on %s", mlen,
                  g->peer, c->path);
        return 0;
      }
      buf_append(c, c->prefix, 5);
      c->body_left = mlen;
      if (mlen == 0) c->prefix_have = 0;
      continue;
    }
    size_t n = len < c->body_left ? len : c->body_left;
    buf_append(c, data, n); /* room reserved when the prefix arrived */
    data += n;
    len -= n;
    c->body_left -= (uint32_t)n;
    if (c->body_left == 0) c->prefix_have = 0;
  }
  return 0;
}

static bool name_is(const uint8_t *name, size_t len, const char *lit) {
  size_t n = strlen(lit);
  return len == n && memcmp(name, lit, n) == 0;
}

static int hexval(uint8_t ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* grpc-message is percent-encoded UTF-8; a malformed escape stays as it is. */
static char *percent_decode(const uint8_t *v, size_t n) {
  char *out = malloc(n + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    int hi, lo;
    if (v[i] == '%' && i + 2 < n && (hi = hexval(v[i + 1])) >= 0 && (lo = hexval(v[i + 2])) >= 0) {
      out[o++] = (char)(hi << 4 | lo);
      i += 2;
    } else {
      out[o++] = (char)v[i];
    }
  }
  out[o] = '\0';
  return out;
}

static int b64val(uint8_t ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '+' || ch == '-') return 62;
  if (ch == '/' || ch == '_') return 63;
  return -1;
}

/* Base64, padded or not (gRPC sends -bin headers unpadded).  false when the
** text is not base64. */
static bool base64_decode(const uint8_t *v, size_t n, uint8_t **out, size_t *outlen) {
  while (n > 0 && v[n - 1] == '=') n--;
  if (n % 4 == 1) return false;
  uint8_t *o = malloc(n / 4 * 3 + 3);
  if (!o) return false;
  size_t k = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int d = b64val(v[i]);
    if (d < 0) {
      free(o);
      return false;
    }
    acc = acc << 6 | (uint32_t)d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      o[k++] = (uint8_t)(acc >> bits);
    }
  }
  *out = o;
  *outlen = k;
  return true;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *ud) {
  (void)flags;
  dp_grpc *g = ud;
  if (f->hd.type != NGHTTP2_HEADERS) return 0;
  dp_grpc_call *c = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
  if (!c || c->err_code) return 0;
  if (name_is(name, namelen, ":status")) {
    int v = 0;
    for (size_t i = 0; i < valuelen && i < 4; i++) v = v * 10 + (value[i] - '0');
    c->http_status = v;
  } else if (name_is(name, namelen, "content-type")) {
    if (c->http_status == 200 && (valuelen < 16 || memcmp(value, "application/grpc", 16) != 0))
      call_fail(c, DIPPER_PROTOCOL,
                "%s answered %s with content-type '%.*s', not application/grpc: is it a gRPC "
                "(Spark Connect) server?",
                g->peer, c->path, (int)(valuelen > 60 ? 60 : valuelen), (const char *)value);
  } else if (name_is(name, namelen, "grpc-status")) {
    int v = 0;
    bool ok = valuelen > 0 && valuelen <= 3;
    for (size_t i = 0; ok && i < valuelen; i++) {
      if (value[i] < '0' || value[i] > '9') ok = false;
      v = v * 10 + (value[i] - '0');
    }
    if (!ok)
      call_fail(c, DIPPER_PROTOCOL, "%s sent a malformed grpc-status on %s", g->peer, c->path);
    else
      c->st.code = v;
  } else if (name_is(name, namelen, "grpc-message")) {
    free(c->st.message);
    c->st.message = percent_decode(value, valuelen);
    if (!c->st.message) call_fail(c, DIPPER_NOMEM, "out of memory reading grpc-message");
  } else if (name_is(name, namelen, "grpc-status-details-bin")) {
    free(c->st.details);
    c->st.details = NULL;
    c->st.details_len = 0;
    if (!base64_decode(value, valuelen, &c->st.details, &c->st.details_len))
      call_fail(c, DIPPER_PROTOCOL, "%s sent grpc-status-details-bin that is not base64 on %s",
                g->peer, c->path);
  }
  return 0;
}

/* The HTTP status of a failed call in gRPC's terms (gRPC's HTTP-to-gRPC
** status mapping), used when no grpc-status came with it. */
static int http_to_grpc(int http) {
  switch (http) {
  case 400: return DP_GRPC_INTERNAL;
  case 401: return DP_GRPC_UNAUTHENTICATED;
  case 403: return 7; /* PERMISSION_DENIED */
  case 404: return 12; /* UNIMPLEMENTED */
  case 429: case 502: case 503: case 504: return DP_GRPC_UNAVAILABLE;
  default: return DP_GRPC_UNKNOWN;
  }
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud) {
  dp_grpc *g = ud;
  if (f->hd.type == NGHTTP2_SETTINGS && !(f->hd.flags & NGHTTP2_FLAG_ACK)) g->got_settings = true;
  if (f->hd.type == NGHTTP2_GOAWAY) {
    g->goaway = true;
    g->goaway_code = f->goaway.error_code;
  }
  if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_RESPONSE) return 0;
  dp_grpc_call *c = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
  if (!c) return 0;
  c->headers_done = true;
  if (c->http_status != 200 && !c->err_code) {
    if (c->st.code < 0) c->st.code = http_to_grpc(c->http_status);
    if (!c->st.message) {
      dp_buf text = DP_BUF_INIT;
      dp_buf_printf(&text, "HTTP status %d from %s for %s (not a gRPC answer)", c->http_status,
                    g->peer, c->path);
      c->st.message = dp_buf_take(&text); /* NULL on no memory: the code still tells */
    }
    /* DIPPER_REMOTE with the mapped status: the caller sees it like any other */
    if (!(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
      nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, c->stream_id, NGHTTP2_CANCEL);
  }
  return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t sid, uint32_t code, void *ud) {
  (void)ud;
  dp_grpc_call *c = nghttp2_session_get_stream_user_data(s, sid);
  if (c) {
    c->closed = true;
    c->h2_error = code;
  }
  return 0;
}

/* ---- the I/O loop ---- */

static int flush(dp_grpc *g) {
  if (g->fail_code) return g->fail_code;
  g->blocked = false;
  int rv = nghttp2_session_send(g->h2);
  if (rv != 0) {
    conn_fail(g, DIPPER_IO, "HTTP/2 send to %s failed: %s", g->peer, nghttp2_strerror(rv));
    return g->fail_code;
  }
  return DIPPER_OK;
}

/* Give bytes read to nghttp2. */
static int feed(dp_grpc *g, const uint8_t *p, size_t n) {
  ssize_t rv = nghttp2_session_mem_recv(g->h2, p, n);
  if (rv < 0) {
    conn_fail(g, DIPPER_PROTOCOL, "%s broke the HTTP/2 protocol: %s", g->peer,
              nghttp2_strerror((int)rv));
    return g->fail_code;
  }
  return DIPPER_OK;
}

/* Read what the socket has (a bounded amount, so deadlines are looked at
** between bursts) and feed it to nghttp2. */
static int read_some(dp_grpc *g) {
  size_t total = 0;
  while (total < ((size_t)8 << 20)) {
    ssize_t n = conn_read(g, g->rbuf, DP_RBUF_SIZE);
    if (n == IO_AGAIN) break;
    if (n == IO_ERROR) return g->fail_code;
    if (n == 0) {
      if (g->goaway)
        conn_fail(g, DIPPER_IO, "%s closed the connection after GOAWAY; open a new one", g->peer);
      else
        conn_fail(g, DIPPER_IO, "%s closed the connection", g->peer);
      return g->fail_code;
    }
    int rc = feed(g, g->rbuf, (size_t)n);
    if (rc) return rc;
    total += (size_t)n;
  }
  return flush(g); /* SETTINGS ACK, WINDOW_UPDATE, PING ACK, RST_STREAM */
}

/* One round: send what is queued, wait up to wait_ms (-1: no limit) for the
** socket, then read.  DIPPER_OK also when nothing happened. */
static int pump(dp_grpc *g, int wait_ms) {
  int rc = flush(g);
  if (rc) return rc;
  if (!nghttp2_session_want_read(g->h2) && !nghttp2_session_want_write(g->h2)) {
    conn_fail(g, DIPPER_IO, "the HTTP/2 session with %s has ended%s", g->peer,
              g->goaway ? " (the server sent GOAWAY); open a new connection" : "");
    return g->fail_code;
  }
  if (g->ssl && SSL_pending(g->ssl) > 0) return read_some(g);
  struct pollfd pfd = {.fd = g->fd, .events = (short)(POLLIN | (g->blocked ? POLLOUT : 0))};
  int n = poll(&pfd, 1, wait_ms);
  if (n < 0 && errno != EINTR) {
    conn_fail(g, DIPPER_IO, "poll on the connection to %s failed", g->peer);
    return g->fail_code;
  }
  if (n <= 0) return DIPPER_OK;
  if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
    rc = read_some(g);
    if (rc) return rc;
  }
  if (pfd.revents & POLLOUT) return flush(g);
  return DIPPER_OK;
}

/* Milliseconds to wait until `until` (absolute; 0: none): -1 for no limit. */
static int wait_for(int64_t until) {
  if (until == 0) return -1;
  int64_t left = until - now_ms();
  if (left <= 0) return 0;
  return left > 60000 ? 60000 : (int)left;
}

/* ---- connecting ---- */

static bool is_ip_literal(const char *host) {
  unsigned char tmp[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, host, tmp) == 1 || inet_pton(AF_INET6, host, tmp) == 1;
}

static int set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL, 0);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -1;
  return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static int tcp_connect(dp_grpc *g, int64_t until, dp_buf *err) {
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  char port[16];
  snprintf(port, sizeof port, "%d", g->port);
  int gai = getaddrinfo(g->host, port, &hints, &res);
  if (gai != 0) {
    dp_buf_printf(err, "cannot reach Spark Connect at %s: %s (%s)", g->peer,
                  gai == EAI_NONAME ? "unknown host" : "cannot resolve the host name",
                  gai_strerror(gai));
    return DIPPER_CONNECT;
  }
  int last = 0;
  bool timed_out = false;
  for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
      last = errno;
      continue;
    }
    if (set_nonblock(fd) < 0) {
      last = errno;
      close(fd);
      continue;
    }
    int rv = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rv < 0 && errno == EINPROGRESS) {
      struct pollfd pfd = {.fd = fd, .events = POLLOUT};
      int n;
      do n = poll(&pfd, 1, wait_for(until));
      while (n < 0 && errno == EINTR);
      if (n == 0) {
        timed_out = true;
        last = ETIMEDOUT;
        close(fd);
        continue;
      }
      int soerr = 0;
      socklen_t sl = sizeof soerr;
      if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) soerr = errno;
      rv = soerr ? -1 : 0;
      errno = soerr;
    }
    if (rv < 0) {
      last = errno;
      close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    g->fd = fd;
    freeaddrinfo(res);
    return DIPPER_OK;
  }
  freeaddrinfo(res);
  char why[128];
  if (timed_out && last == ETIMEDOUT)
    snprintf(why, sizeof why, "no answer within %d ms", g->connect_timeout_ms);
  else
    errno_text(last, why, sizeof why);
  dp_buf_printf(err, "cannot reach Spark Connect at %s: %s", g->peer, why);
  return DIPPER_CONNECT;
}

/* Wait for the socket during the TLS handshake. */
static bool wait_io(int fd, short events, int64_t until) {
  struct pollfd pfd = {.fd = fd, .events = events};
  int n;
  do n = poll(&pfd, 1, wait_for(until));
  while (n < 0 && errno == EINTR);
  return n > 0;
}

static int tls_connect(dp_grpc *g, const dp_grpc_opts *o, int64_t until, dp_buf *err) {
  g->ssl_ctx = SSL_CTX_new(TLS_client_method());
  if (!g->ssl_ctx) return DIPPER_NOMEM;
  SSL_CTX_set_min_proto_version(g->ssl_ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(g->ssl_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (!o->tls_no_verify) {
    SSL_CTX_set_verify(g->ssl_ctx, SSL_VERIFY_PEER, NULL);
    int ok = o->ca_file ? SSL_CTX_load_verify_locations(g->ssl_ctx, o->ca_file, NULL)
                        : SSL_CTX_set_default_verify_paths(g->ssl_ctx);
    if (ok != 1) {
      dp_buf_printf(err, "cannot reach Spark Connect at %s: cannot load the CA certificates %s%s",
                    g->peer, o->ca_file ? "from " : "(the system's default paths)",
                    o->ca_file ? o->ca_file : "");
      ERR_clear_error();
      return DIPPER_CONNECT;
    }
  }
  static const unsigned char alpn[] = {2, 'h', '2'};
  if (SSL_CTX_set_alpn_protos(g->ssl_ctx, alpn, sizeof alpn) != 0) return DIPPER_NOMEM;
  g->bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "dipper socket");
  if (!g->bio_method) return DIPPER_NOMEM;
  BIO_meth_set_write(g->bio_method, bio_write);
  BIO_meth_set_read(g->bio_method, bio_read);
  BIO_meth_set_ctrl(g->bio_method, bio_ctrl);
  BIO_meth_set_create(g->bio_method, bio_create);
  g->ssl = SSL_new(g->ssl_ctx);
  BIO *bio = BIO_new(g->bio_method);
  if (!g->ssl || !bio) {
    BIO_free(bio);
    return DIPPER_NOMEM;
  }
  BIO_set_data(bio, g);
  SSL_set_bio(g->ssl, bio, bio);
  bool ip = is_ip_literal(g->host);
  if (!ip) SSL_set_tlsext_host_name(g->ssl, g->host);
  if (!o->tls_no_verify) {
    X509_VERIFY_PARAM *vp = SSL_get0_param(g->ssl);
    int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, g->host) : SSL_set1_host(g->ssl, g->host);
    if (ok != 1) return DIPPER_NOMEM;
  }
  for (;;) {
    ERR_clear_error();
    int r = SSL_connect(g->ssl);
    if (r == 1) break;
    int e = SSL_get_error(g->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      if (!wait_io(g->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, until)) {
        dp_buf_printf(err, "cannot reach Spark Connect at %s: the TLS handshake did not finish "
                      "within %d ms", g->peer, g->connect_timeout_ms);
        return DIPPER_CONNECT;
      }
      continue;
    }
    long vr = SSL_get_verify_result(g->ssl);
    if (vr != X509_V_OK) {
      dp_buf_printf(err,
                    "cannot reach Spark Connect at %s: TLS handshake failed: the server's "
                    "certificate is not trusted (%s); point SSL_CERT_FILE at a CA bundle that "
                    "holds its issuer",
                    g->peer, X509_verify_cert_error_string(vr));
    } else {
      char why[200];
      unsigned long ossl = ERR_peek_last_error();
      if (ossl)
        ERR_error_string_n(ossl, why, sizeof why);
      else if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN)
        snprintf(why, sizeof why, "the server closed the connection (is it a TLS port?)");
      else
        snprintf(why, sizeof why, "TLS error %d", e);
      dp_buf_printf(err, "cannot reach Spark Connect at %s: TLS handshake failed: %s", g->peer,
                    why);
    }
    ERR_clear_error();
    return DIPPER_CONNECT;
  }
  const unsigned char *proto = NULL;
  unsigned plen = 0;
  SSL_get0_alpn_selected(g->ssl, &proto, &plen);
  if (plen != 2 || memcmp(proto, "h2", 2) != 0) {
    dp_buf_printf(err, "cannot reach Spark Connect at %s: the TLS server did not agree to HTTP/2 "
                  "(ALPN h2); is it a gRPC endpoint?", g->peer);
    return DIPPER_CONNECT;
  }
  return DIPPER_OK;
}

static int h2_start(dp_grpc *g) {
  nghttp2_session_callbacks *cb;
  if (nghttp2_session_callbacks_new(&cb) != 0) return DIPPER_NOMEM;
  nghttp2_session_callbacks_set_send_callback(cb, on_send);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
  nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
  int rv = nghttp2_session_client_new(&g->h2, cb, g);
  nghttp2_session_callbacks_del(cb);
  if (rv != 0) return DIPPER_NOMEM;
  nghttp2_settings_entry iv[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (uint32_t)DP_WINDOW},
      {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, DP_MAX_FRAME},
  };
  if (nghttp2_submit_settings(g->h2, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0]) != 0 ||
      nghttp2_session_set_local_window_size(g->h2, NGHTTP2_FLAG_NONE, 0, DP_WINDOW) != 0)
    return DIPPER_NOMEM;
  return DIPPER_OK;
}

int dp_grpc_connect(dp_grpc **out, const dp_grpc_opts *o, dp_buf *err) {
  *out = NULL;
  if (!o || !o->host || !*o->host || o->port < 1 || o->port > 65535) {
    dp_buf_printf(err, "dp_grpc_connect: a host and a port from 1 to 65535 are required");
    return DIPPER_MISUSE;
  }
  dp_grpc *g = calloc(1, sizeof *g);
  if (!g) return DIPPER_NOMEM;
  g->fd = -1;
  g->tls = o->tls;
  g->port = o->port;
  g->max_message = o->max_message ? o->max_message : DP_DEFAULT_MAX_MESSAGE;
  if (g->max_message > DP_MSG_LIMIT_CAP) g->max_message = DP_MSG_LIMIT_CAP;
  g->connect_timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
  g->host = strdup(o->host);
  size_t plen = strlen(o->host) + 16;
  g->peer = malloc(plen);
  const char *ua = o->user_agent ? o->user_agent : "dipper/" DIPPER_VERSION;
  g->user_agent = strdup(ua);
  g->rbuf = malloc(DP_RBUF_SIZE);
  if (o->token) {
    size_t tl = strlen(o->token) + 8;
    g->auth = malloc(tl);
    if (g->auth) snprintf(g->auth, tl, "Bearer %s", o->token);
  }
  if (!g->host || !g->peer || !g->user_agent || !g->rbuf || (o->token && !g->auth)) {
    dp_grpc_close(g);
    return DIPPER_NOMEM;
  }
  if (strchr(o->host, ':'))
    snprintf(g->peer, plen, "[%s]:%d", o->host, o->port);
  else
    snprintf(g->peer, plen, "%s:%d", o->host, o->port);

  int64_t until = now_ms() + g->connect_timeout_ms;
  int rc = tcp_connect(g, until, err);
  if (!rc && g->tls) rc = tls_connect(g, o, until, err);
  if (!rc) rc = h2_start(g);
  /* Wait for the server's SETTINGS: a peer that does not speak HTTP/2 (a TLS
  ** port reached in plaintext, another service) is caught here, not in the
  ** middle of the first call. */
  while (!rc && !g->got_settings) {
    int w = wait_for(until);
    if (w == 0) {
      dp_buf_printf(err, "cannot reach Spark Connect at %s: no HTTP/2 answer within %d ms%s",
                    g->peer, g->connect_timeout_ms, g->tls ? "" : " (a TLS port? use_ssl=true)");
      rc = DIPPER_CONNECT;
      break;
    }
    if (pump(g, w) != DIPPER_OK) {
      dp_buf_printf(err, "cannot reach Spark Connect at %s: it does not speak HTTP/2 (%s)%s",
                    g->peer, g->fail_msg,
                    g->tls ? "" : "; if the server uses TLS, add ;use_ssl=true");
      rc = DIPPER_CONNECT;
    }
  }
  if (rc) {
    if (rc == DIPPER_NOMEM && err) dp_buf_printf(err, "out of memory connecting to %s", g->peer);
    dp_grpc_close(g);
    return rc;
  }
  *out = g;
  return DIPPER_OK;
}

void dp_grpc_close(dp_grpc *g) {
  if (!g) return;
  for (dp_grpc_call *c = g->calls; c; c = c->next) {
    c->g = NULL;
    if (!c->closed && !c->err_code) {
      c->err_code = DIPPER_IO;
      snprintf(c->err_msg, sizeof c->err_msg, "the connection to %s was closed under the call %s",
               g->peer, c->path);
    }
  }
  if (g->h2) {
    if (!g->fail_code) {
      nghttp2_session_terminate_session(g->h2, NGHTTP2_NO_ERROR);
      nghttp2_session_send(g->h2); /* best effort, non-blocking */
    }
    nghttp2_session_del(g->h2);
  }
  if (g->ssl) {
    if (!g->fail_code) SSL_shutdown(g->ssl);
    SSL_free(g->ssl);
  }
  SSL_CTX_free(g->ssl_ctx);
  BIO_meth_free(g->bio_method);
  if (g->fd >= 0) close(g->fd);
  free(g->host);
  free(g->peer);
  free(g->auth);
  free(g->user_agent);
  free(g->rbuf);
  free(g);
}

const char *dp_grpc_peer(const dp_grpc *g) { return g->peer; }

bool dp_grpc_usable(const dp_grpc *g) { return g && !g->fail_code && !g->goaway; }

void dp_grpc_status_free(dp_grpc_status *st) {
  if (!st) return;
  free(st->message);
  free(st->details);
  memset(st, 0, sizeof *st);
}

/* ---- calls ---- */

/* grpc-timeout: at most 8 digits and a unit. */
static void format_timeout(char *out, size_t cap, int64_t ms) {
  if (ms <= 99999999)
    snprintf(out, cap, "%lldm", (long long)ms);
  else if (ms / 1000 <= 99999999)
    snprintf(out, cap, "%lldS", (long long)(ms / 1000));
  else
    snprintf(out, cap, "%lldH", (long long)(ms / 3600000 > 99999999 ? 99999999 : ms / 3600000));
}

static void call_unlink(dp_grpc_call *c) {
  if (!c->g) return;
  if (c->prev)
    c->prev->next = c->next;
  else
    c->g->calls = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
}

int dp_grpc_stream_open(dp_grpc *g, const char *method, const void *req, size_t len,
                        int64_t deadline_ms, dp_grpc_call **out, dp_buf *err) {
  *out = NULL;
  if (g->fail_code) {
    dp_buf_printf(err, "%s (the connection cannot be used; open a new one)", g->fail_msg);
    return g->fail_code;
  }
  if (g->goaway) {
    dp_buf_printf(err, "%s sent GOAWAY: this connection takes no new calls; open a new one",
                  g->peer);
    return DIPPER_IO;
  }
  if (len > g->max_message) {
    dp_buf_printf(err,
                  "the request to %s of %zu bytes is above the message limit of %zu bytes; raise "
                  "it with the grpc_max_message_size parameter of the connection string",
                  method, len, g->max_message);
    return DIPPER_LIMIT;
  }
  dp_grpc_call *c = calloc(1, sizeof *c);
  if (!c) return DIPPER_NOMEM;
  c->g = g;
  c->st.code = -1;
  snprintf(c->path, sizeof c->path, "%s", method);
  c->req_len = len + 5;
  c->req = malloc(c->req_len);
  if (!c->req) {
    free(c);
    return DIPPER_NOMEM;
  }
  c->req[0] = 0;
  c->req[1] = (uint8_t)(len >> 24);
  c->req[2] = (uint8_t)(len >> 16);
  c->req[3] = (uint8_t)(len >> 8);
  c->req[4] = (uint8_t)len;
  if (len) memcpy(c->req + 5, req, len);
  if (deadline_ms > 0) {
    c->deadline_ms = deadline_ms;
    c->deadline = now_ms() + deadline_ms;
  }

  char timeout[24];
  format_timeout(timeout, sizeof timeout, deadline_ms);
  nghttp2_nv nv[12];
  size_t n = 0;
  /* the token is never put in the HPACK dynamic table */
#define NV(k, v, fl)                    \
  do {                                  \
    const char *v_ = (v);               \
    nv[n].name = nv_bytes(k);           \
    nv[n].namelen = sizeof(k) - 1;      \
    nv[n].value = nv_bytes(v_);         \
    nv[n].valuelen = strlen(v_);        \
    nv[n].flags = (fl);                 \
    n++;                                \
  } while (0)
  NV(":method", "POST", NGHTTP2_NV_FLAG_NONE);
  NV(":scheme", g->tls ? "https" : "http", NGHTTP2_NV_FLAG_NONE);
  NV(":path", method, NGHTTP2_NV_FLAG_NONE);
  NV(":authority", g->peer, NGHTTP2_NV_FLAG_NONE);
  NV("content-type", "application/grpc", NGHTTP2_NV_FLAG_NONE);
  NV("te", "trailers", NGHTTP2_NV_FLAG_NONE);
  NV("user-agent", g->user_agent, NGHTTP2_NV_FLAG_NONE);
  NV("grpc-accept-encoding", "identity", NGHTTP2_NV_FLAG_NONE);
  if (g->auth) NV("authorization", g->auth, NGHTTP2_NV_FLAG_NO_INDEX);
  if (deadline_ms > 0) NV("grpc-timeout", timeout, NGHTTP2_NV_FLAG_NONE);
#undef NV

  nghttp2_data_provider prd;
  prd.source.ptr = c;
  prd.read_callback = read_request;
  int32_t sid = nghttp2_submit_request(g->h2, NULL, nv, n, &prd, c);
  if (sid < 0) {
    free(c->req);
    free(c);
    if (sid == NGHTTP2_ERR_NOMEM) return DIPPER_NOMEM;
    dp_buf_printf(err, "cannot start %s on %s: %s", method, g->peer, nghttp2_strerror(sid));
    return DIPPER_IO;
  }
  c->stream_id = sid;
  c->next = g->calls;
  if (g->calls) g->calls->prev = c;
  g->calls = c;
  int rc = flush(g);
  if (rc) {
    dp_buf_printf(err, "%s", g->fail_msg);
    dp_grpc_stream_free(c);
    return rc;
  }
  *out = c;
  return DIPPER_OK;
}

/* The end of a call, once its buffered messages are gone: 0 for OK or a
** negative dipper code. */
static int call_end(dp_grpc_call *c, dp_grpc_status *st, dp_buf *err) {
  if (c->err_code) {
    dp_buf_printf(err, "%s", c->err_msg);
    return -c->err_code;
  }
  const char *peer = c->g ? c->g->peer : "the server";
  /* The server enforces our grpc-timeout too and may end the call first
  ** (RST_STREAM, or DEADLINE_EXCEEDED): that is our deadline passing. */
  if (c->deadline && now_ms() >= c->deadline &&
      (c->st.code < 0 || c->st.code == DP_GRPC_DEADLINE_EXCEEDED)) {
    dp_buf_printf(err, "the deadline of %lld ms for %s on %s passed", (long long)c->deadline_ms,
                  c->path, peer);
    snprintf(c->err_msg, sizeof c->err_msg, "%s already ended: its deadline passed", c->path);
    c->err_code = DIPPER_TIMEOUT;
    return -DIPPER_TIMEOUT;
  }
  if (c->prefix_have != 0) {
    dp_buf_printf(err, "%s ended %s in the middle of a message", peer, c->path);
    return -DIPPER_PROTOCOL;
  }
  if (c->st.code < 0) {
    if (c->h2_error == NGHTTP2_REFUSED_STREAM) {
      dp_buf_printf(err, "%s refused the call %s (it is shutting the connection down); retry on a "
                    "new connection", peer, c->path);
      return -DIPPER_IO;
    }
    if (c->h2_error != NGHTTP2_NO_ERROR) {
      dp_buf_printf(err, "%s reset the call %s (HTTP/2 %s)", peer, c->path,
                    nghttp2_http2_strerror(c->h2_error));
      return -DIPPER_IO;
    }
    dp_buf_printf(err, "%s ended the call %s without a grpc-status", peer, c->path);
    return -DIPPER_PROTOCOL;
  }
  int code = c->st.code;
  if (code != DP_GRPC_OK)
    dp_buf_printf(err, "%s on %s: %s (grpc-status %d): %s", c->path, peer, status_name(code),
                  code, c->st.message ? c->st.message : "(no message)");
  if (st) {
    *st = c->st;
  } else {
    free(c->st.message);
    free(c->st.details);
  }
  memset(&c->st, 0, sizeof c->st);
  c->st.code = code;
  c->err_code = code != DP_GRPC_OK ? DIPPER_REMOTE : 0;
  if (c->err_code)
    snprintf(c->err_msg, sizeof c->err_msg, "%s already ended with %s", c->path,
             status_name(code));
  else
    c->st.code = -2; /* ended OK and reported: later calls give 0 again */
  return code != DP_GRPC_OK ? -DIPPER_REMOTE : 0;
}

int dp_grpc_stream_next(dp_grpc_call *c, int64_t timeout_ms, const uint8_t **msg, size_t *len,
                        dp_grpc_status *st, dp_buf *err) {
  /* the message handed out last time is done with */
  c->head += c->lent;
  c->lent = 0;
  free(c->old_buf);
  c->old_buf = NULL;
  if (c->head == c->tail) c->head = c->tail = 0;
  int64_t wait_until = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
  for (;;) {
    size_t avail = c->tail - c->head;
    if (avail >= 5) {
      const uint8_t *p = c->buf + c->head;
      size_t mlen = (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4];
      if (avail - 5 >= mlen) {
        *msg = p + 5;
        *len = mlen;
        c->lent = 5 + mlen;
        return 1;
      }
    }
    if (c->st.code == -2) return 0;
    if (c->closed || c->err_code || !c->g) return call_end(c, st, err);
    dp_grpc *g = c->g;
    if (g->fail_code) {
      dp_buf_printf(err, "%s (during %s)", g->fail_msg, c->path);
      return -g->fail_code;
    }
    int64_t now = now_ms();
    if (c->deadline && now >= c->deadline) {
      call_fail(c, DIPPER_TIMEOUT, "the deadline of %lld ms for %s on %s passed",
                (long long)c->deadline_ms, c->path, g->peer);
      flush(g);
      continue;
    }
    if (wait_until && now >= wait_until) {
      dp_buf_printf(err, "no message on %s from %s within %lld ms", c->path, g->peer,
                    (long long)timeout_ms);
      return -DIPPER_TIMEOUT;
    }
    int64_t until = c->deadline;
    if (wait_until && (!until || wait_until < until)) until = wait_until;
    /* a connection failure is seen at the top of the loop, after what had
    ** already arrived for this call */
    pump(g, wait_for(until));
  }
}

void dp_grpc_stream_free(dp_grpc_call *c) {
  if (!c) return;
  dp_grpc *g = c->g;
  if (g) {
    if (c->stream_id > 0) {
      nghttp2_session_set_stream_user_data(g->h2, c->stream_id, NULL);
      if (!c->closed && !g->fail_code) {
        nghttp2_submit_rst_stream(g->h2, NGHTTP2_FLAG_NONE, c->stream_id, NGHTTP2_CANCEL);
        flush(g);
      }
    }
    call_unlink(c);
  }
  free(c->st.message); /* NULL once handed to the caller */
  free(c->st.details);
  free(c->req);
  free(c->buf);
  free(c->old_buf);
  free(c);
}

int dp_grpc_unary(dp_grpc *g, const char *method, const void *req, size_t len,
                  int64_t deadline_ms, dp_buf *resp, dp_grpc_status *st, dp_buf *err) {
  if (st) memset(st, 0, sizeof *st);
  dp_grpc_call *c;
  int rc = dp_grpc_stream_open(g, method, req, len, deadline_ms, &c, err);
  if (rc) return rc;
  const uint8_t *msg;
  size_t mlen;
  int got = 0;
  for (;;) {
    int r = dp_grpc_stream_next(c, 0, &msg, &mlen, st, err);
    if (r < 0) {
      rc = -r;
      break;
    }
    if (r == 0) {
      if (got == 0) {
        dp_buf_printf(err, "%s on %s ended OK without a response message", method, g->peer);
        rc = DIPPER_PROTOCOL;
      }
      break;
    }
    if (++got > 1) {
      dp_buf_printf(err, "%s on %s sent more than one response to a unary call", method, g->peer);
      rc = DIPPER_PROTOCOL;
      break;
    }
    dp_buf_put(resp, msg, mlen);
    if (resp->oom) {
      rc = DIPPER_NOMEM;
      break;
    }
  }
  dp_grpc_stream_free(c);
  return rc;
}
