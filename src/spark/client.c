/*
** client.c — a Spark Connect session over one gRPC connection (see client.h).
**
** Owns: the session identity (session id, user context, client_type), the
** unary calls (Config, AnalyzePlan, Interrupt, FetchErrorDetails,
** ReleaseSession) with a retry on a broken connection, reattachable
** execution (ExecutePlan, ReattachExecute, ReleaseExecute), the translation
** of a failed call into a dp_sc_error a user can act on (google.rpc.Status
** and ErrorInfo are decoded by hand: those protos are not generated), and
** the merge of a result's Arrow batches.
** Does not own: HTTP/2 and gRPC framing (grpc.c), Arrow IPC (arrow_ipc.c),
** plan building (translate.c).
**
** Releases are fire-and-forget: the ReleaseExecute call is opened and left
** pending; its answer is collected at the start of a later call (or at
** close), so a query does not pay a round trip for it.
*/
#include "spark/client.h"
#include "spark/udf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/compiler.h"
#include "dipper.h"
#include "spark/grpc.h"
#include "spark/uuid.h"

#define SVC "/spark.connect.SparkConnectService/"

enum {
  UNARY_DEADLINE_MS = 120000, /* Config, AnalyzePlan, ...: generous, Spark may be busy */
  RELEASE_DEADLINE_MS = 10000,
  UNARY_RETRIES = 3,          /* a unary call retried on a broken connection */
  EXEC_RETRIES = 8,           /* reattaches in a row without a response in between */
  BACKOFF_FIRST_MS = 50,
  BACKOFF_MAX_MS = 2000,
  MAX_PENDING = 8,            /* fire-and-forget releases not yet answered */
};

struct dp_sc {
  dp_sc_uri uri;
  dp_grpc_opts gopts;
  dp_grpc *g;                 /* NULL between a broken connection and the next call */
  char address[300];          /* "host:port", IPv6 in brackets */
  char session_id[DP_UUID_LEN + 1];
  char client_type[48];
  char *user_id;
  char *server_version;
  char *ss_sid;               /* the server-side session id the server first reported */
  Spark__Connect__UserContext uctx;
  int64_t last_call_ms;
  dp_grpc_call *pending[MAX_PENDING];
  int npending;
  int cut_after;              /* tests: cut the next execution after this many responses */
  int reattaches;
  atomic_int *abort;          /* dp_sc_set_abort: a set flag ends the running execution */
};

/* protobuf-c's message structs hold `char *` and non-const sub-message
** pointers even where packing only reads them; this hands a borrowed const
** pointer to such a field without a cast that hides a real mistake. */
static void *unconst(const void *p) {
  void *q;
  memcpy(&q, &p, sizeof q);
  return q;
}

/* How often a running execution looks at its abort flag (dp_sc_set_abort). */
#define ABORT_SLICE_MS 200

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms) {
  if (ms <= 0) return;
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* ---- errors ---- */

void dp_sc_error_init(dp_sc_error *e) {
  if (!e) return;
  memset(e, 0, sizeof *e);
}

void dp_sc_error_free(dp_sc_error *e) {
  if (!e) return;
  dp_buf_free(&e->message);
  e->code = 0;
  e->error_class[0] = '\0';
  e->sql_state[0] = '\0';
}

static void sc_err_reset(dp_sc_error *e, int code) {
  dp_buf_free(&e->message);
  e->code = code;
  e->error_class[0] = '\0';
  e->sql_state[0] = '\0';
}

DP_PRINTF(3, 4)
static int sc_err(dp_sc_error *e, int code, const char *fmt, ...) {
  if (!e) return code;
  sc_err_reset(e, code);
  va_list ap;
  va_start(ap, fmt);
  dp_buf_vprintf(&e->message, fmt, ap);
  va_end(ap);
  return code;
}

static int sc_nomem(dp_sc_error *e) { return sc_err(e, DIPPER_NOMEM, "out of memory in the Spark Connect client"); }

static void copy_trunc(char *dst, size_t cap, const void *src, size_t n) {
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* ---- google.rpc.Status / ErrorInfo, read by hand ----
** Status {code=1, message=2, details=3 repeated Any{type_url=1, value=2}};
** ErrorInfo {reason=1, domain=2, metadata=3 map<string,string>}.  Nothing
** here trusts a length: every field is checked against the bytes left. */

typedef struct pb_field {
  uint32_t num;
  int wire;
  uint64_t v;           /* wire 0 */
  const uint8_t *data;  /* wire 2 */
  size_t len;
} pb_field;

static int pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
  uint64_t r = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (*pp >= end) return -1;
    uint8_t b = *(*pp)++;
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return 0;
    }
  }
  return -1;
}

/* 1: a field read; 0: the end; -1: malformed. */
static int pb_next(const uint8_t **pp, const uint8_t *end, pb_field *f) {
  if (*pp >= end) return 0;
  uint64_t key;
  if (pb_varint(pp, end, &key) != 0 || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) return -1;
  f->num = (uint32_t)(key >> 3);
  f->wire = (int)(key & 7);
  size_t left = (size_t)(end - *pp);
  switch (f->wire) {
  case 0: return pb_varint(pp, end, &f->v) == 0 ? 1 : -1;
  case 1:
    if (left < 8) return -1;
    *pp += 8;
    return 1;
  case 5:
    if (left < 4) return -1;
    *pp += 4;
    return 1;
  case 2: {
    uint64_t n;
    if (pb_varint(pp, end, &n) != 0 || n > (uint64_t)(end - *pp)) return -1;
    f->data = *pp;
    f->len = (size_t)n;
    *pp += n;
    return 1;
  }
  default: return -1;
  }
}

static bool slice_is(const pb_field *f, const char *s) {
  size_t n = strlen(s);
  return f->len == n && memcmp(f->data, s, n) == 0;
}

typedef struct sc_errinfo {
  char error_class[160];
  char sql_state[8];
  char error_id[64];
} sc_errinfo;

static void parse_errorinfo(const uint8_t *p, const uint8_t *end, sc_errinfo *o) {
  pb_field f = {0};
  while (pb_next(&p, end, &f) == 1) {
    if (f.num != 3 || f.wire != 2) continue;
    const uint8_t *q = f.data, *qend = f.data + f.len;
    pb_field k = {0}, v = {0}, e = {0};
    bool hk = false, hv = false;
    while (pb_next(&q, qend, &e) == 1) {
      if (e.wire != 2) continue;
      if (e.num == 1) k = e, hk = true;
      else if (e.num == 2) v = e, hv = true;
    }
    if (!hk || !hv) continue;
    if (slice_is(&k, "errorClass")) copy_trunc(o->error_class, sizeof o->error_class, v.data, v.len);
    else if (slice_is(&k, "sqlState")) copy_trunc(o->sql_state, sizeof o->sql_state, v.data, v.len);
    else if (slice_is(&k, "errorId")) copy_trunc(o->error_id, sizeof o->error_id, v.data, v.len);
  }
}

static void parse_status(const uint8_t *d, size_t n, sc_errinfo *o) {
  memset(o, 0, sizeof *o);
  if (!d) return;
  static const char want[] = "google.rpc.ErrorInfo";
  const uint8_t *p = d, *end = d + n;
  pb_field f = {0};
  while (pb_next(&p, end, &f) == 1) {
    if (f.num != 3 || f.wire != 2) continue;
    const uint8_t *q = f.data, *qend = f.data + f.len;
    pb_field a = {0}, url = {0}, val = {0};
    bool hu = false, hv = false;
    while (pb_next(&q, qend, &a) == 1) {
      if (a.wire != 2) continue;
      if (a.num == 1) url = a, hu = true;
      else if (a.num == 2) val = a, hv = true;
    }
    size_t wl = sizeof want - 1;
    if (hu && hv && url.len >= wl && memcmp(url.data + url.len - wl, want, wl) == 0) {
      parse_errorinfo(val.data, val.data + val.len, o);
      return;
    }
  }
}

/* "Spark: [CLASS] text (SQLSTATE xxxxx)".  Spark's own message repeats the
** class in front and the state ("SQLSTATE: 42703;") after, followed by the
** analyzed plan and a JVM stack trace: those are dropped, the class and the
** state are said once. */
static void spark_message(dp_buf *out, const char *cls, const char *state, const char *msg) {
  const char *t = msg ? msg : "";
  size_t cl = strlen(cls);
  if (cl && t[0] == '[' && strncmp(t + 1, cls, cl) == 0 && t[cl + 1] == ']') {
    t += cl + 2;
    while (*t == ' ') t++;
  }
  size_t n = strlen(t);
  const char *cut = strstr(t, "SQLSTATE: ");
  if (!cut) cut = strstr(t, "\n\nJVM stacktrace:");
  if (cut) n = (size_t)(cut - t);
  while (n && isspace((unsigned char)t[n - 1])) n--;
  dp_buf_puts(out, "Spark: ");
  if (cl) dp_buf_printf(out, "[%s] ", cls);
  dp_buf_put(out, t, n);
  if (state[0]) dp_buf_printf(out, " (SQLSTATE %s)", state);
}

/* ---- requests: the fields every request carries ---- */

#define SC_HEAD(s, req, PFX)                                                                 \
  do {                                                                                       \
    (req).session_id = (s)->session_id;                                                      \
    (req).user_context = &(s)->uctx;                                                         \
    (req)._client_type_case = PFX##___CLIENT_TYPE_CLIENT_TYPE;                               \
    (req).client_type = (s)->client_type;                                                    \
    if ((s)->ss_sid) {                                                                       \
      (req)._client_observed_server_side_session_id_case =                                   \
          PFX##___CLIENT_OBSERVED_SERVER_SIDE_SESSION_ID_CLIENT_OBSERVED_SERVER_SIDE_SESSION_ID; \
      (req).client_observed_server_side_session_id = (s)->ss_sid;                            \
    }                                                                                        \
  } while (0)

static uint8_t *sc_pack(const ProtobufCMessage *m, size_t *len) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *p = malloc(n ? n : 1);
  if (!p) return NULL;
  *len = protobuf_c_message_pack(m, p);
  return p;
}

/* Every response carries server_side_session_id; the first one seen is sent
** back as client_observed_server_side_session_id, so that a server that
** restarted (and lost the session) says so instead of silently starting a
** fresh session without this one's config. */
static void sc_note_server_session(dp_sc *s, const ProtobufCMessage *m) {
  if (s->ss_sid || !m) return;
  const ProtobufCFieldDescriptor *fd =
      protobuf_c_message_descriptor_get_field_by_name(m->descriptor, "server_side_session_id");
  if (!fd || fd->type != PROTOBUF_C_TYPE_STRING) return;
  char *v;
  memcpy(&v, (const char *)m + fd->offset, sizeof v);
  if (v && v[0]) s->ss_sid = strdup(v); /* NULL on OOM: then simply not sent */
}

/* ---- the connection ---- */

static void sc_drop_conn(dp_sc *s) {
  for (int i = 0; i < s->npending; i++) dp_grpc_stream_free(s->pending[i]);
  s->npending = 0;
  dp_grpc_close(s->g);
  s->g = NULL;
}

/* Collect the answers of fire-and-forget calls.  wait: until each ends (at
** close, or when the table is full); else only what has arrived already. */
static void sc_reap(dp_sc *s, bool wait) {
  int kept = 0;
  for (int i = 0; i < s->npending; i++) {
    dp_grpc_call *c = s->pending[i];
    int r;
    do {
      const uint8_t *m;
      size_t len;
      dp_grpc_status st = {0};
      dp_buf gerr = DP_BUF_INIT;
      r = dp_grpc_stream_next(c, wait ? RELEASE_DEADLINE_MS : 1, &m, &len, &st, &gerr);
      dp_grpc_status_free(&st);
      dp_buf_free(&gerr);
    } while (r == 1);
    if (r == -DIPPER_TIMEOUT && !wait) s->pending[kept++] = c;
    else dp_grpc_stream_free(c);
  }
  s->npending = kept;
}

static int sc_transport_error(dp_sc *s, int rc, dp_buf *gerr, dp_sc_error *err) {
  static const char reach[] = "cannot reach Spark Connect at ";
  const char *why = gerr->len ? dp_buf_cstr(gerr) : dipper_strerror(rc);
  if (rc == DIPPER_NOMEM) return sc_nomem(err);
  if (rc != DIPPER_CONNECT) return sc_err(err, rc, "Spark Connect at %s: %s", s->address, why);
  /* The transport already names the address; say it once. */
  if (strncmp(why, reach, sizeof reach - 1) == 0)
    return sc_err(err, rc, "%s (start one with scripts/spark-local start, or check the sc:// address)",
                  why);
  return sc_err(err, rc,
                "cannot reach Spark Connect at %s: %s (start one with scripts/spark-local start, or "
                "check the sc:// address)",
                s->address, why);
}

/* A usable connection: the current one, or a new one when it broke. */
static int sc_connect(dp_sc *s, dp_sc_error *err) {
  if (s->g && dp_grpc_usable(s->g)) return DIPPER_OK;
  sc_drop_conn(s);
  dp_buf gerr = DP_BUF_INIT;
  int rc = dp_grpc_connect(&s->g, &s->gopts, &gerr);
  if (rc != DIPPER_OK) {
    s->g = NULL;
    /* Whatever failed while connecting (refused, TLS, not HTTP/2), the
       user's next step is the same: reach a Spark Connect server. */
    rc = sc_transport_error(s, rc == DIPPER_NOMEM ? rc : DIPPER_CONNECT, &gerr, err);
  }
  dp_buf_free(&gerr);
  return rc;
}

static bool sc_retriable(int rc, const dp_grpc_status *st) {
  return rc == DIPPER_IO || (rc == DIPPER_REMOTE && st->code == DP_GRPC_UNAVAILABLE);
}

static int64_t backoff_ms(int failures) {
  int64_t d = BACKOFF_FIRST_MS;
  for (int i = 1; i < failures && d < BACKOFF_MAX_MS; i++) d *= 2;
  return d < BACKOFF_MAX_MS ? d : BACKOFF_MAX_MS;
}

static int sc_unary(dp_sc *s, const char *method, const ProtobufCMessage *req,
                    const ProtobufCMessageDescriptor *rdesc, ProtobufCMessage **out,
                    int64_t deadline_ms, bool fetch_details, dp_sc_error *err);

/* A failed call's status as the user's error: the ErrorInfo's errorId is
** completed with FetchErrorDetails (the root error's message, class and
** state); without one, the status message and the ErrorInfo's metadata. */
static int sc_remote_error(dp_sc *s, const dp_grpc_status *st, bool fetch, dp_sc_error *err) {
  sc_errinfo info;
  parse_status(st->details, st->details_len, &info);
  Spark__Connect__FetchErrorDetailsResponse *fr = NULL;
  const char *msg = st->message;
  if (fetch && info.error_id[0]) {
    Spark__Connect__FetchErrorDetailsRequest q;
    spark__connect__fetch_error_details_request__init(&q);
    SC_HEAD(s, q, SPARK__CONNECT__FETCH_ERROR_DETAILS_REQUEST);
    q.error_id = info.error_id;
    ProtobufCMessage *m = NULL;
    if (sc_unary(s, SVC "FetchErrorDetails", &q.base,
                 &spark__connect__fetch_error_details_response__descriptor, &m,
                 UNARY_DEADLINE_MS, false, NULL) == DIPPER_OK) {
      fr = (Spark__Connect__FetchErrorDetailsResponse *)m;
      size_t i = 0;
      if (fr->_root_error_idx_case ==
              SPARK__CONNECT__FETCH_ERROR_DETAILS_RESPONSE___ROOT_ERROR_IDX_ROOT_ERROR_IDX &&
          fr->root_error_idx >= 0)
        i = (size_t)fr->root_error_idx;
      if (i < fr->n_errors && fr->errors[i]) {
        const Spark__Connect__FetchErrorDetailsResponse__Error *e = fr->errors[i];
        if (e->message && e->message[0]) msg = e->message;
        if (e->_spark_throwable_case ==
                SPARK__CONNECT__FETCH_ERROR_DETAILS_RESPONSE__ERROR___SPARK_THROWABLE_SPARK_THROWABLE &&
            e->spark_throwable) {
          const Spark__Connect__FetchErrorDetailsResponse__SparkThrowable *t = e->spark_throwable;
          if (t->_error_class_case ==
                  SPARK__CONNECT__FETCH_ERROR_DETAILS_RESPONSE__SPARK_THROWABLE___ERROR_CLASS_ERROR_CLASS &&
              t->error_class)
            copy_trunc(info.error_class, sizeof info.error_class, t->error_class, strlen(t->error_class));
          if (t->_sql_state_case ==
                  SPARK__CONNECT__FETCH_ERROR_DETAILS_RESPONSE__SPARK_THROWABLE___SQL_STATE_SQL_STATE &&
              t->sql_state)
            copy_trunc(info.sql_state, sizeof info.sql_state, t->sql_state, strlen(t->sql_state));
        }
      }
    }
  }
  if (err) {
    sc_err_reset(err, DIPPER_REMOTE);
    if ((msg && msg[0]) || info.error_class[0]) {
      spark_message(&err->message, info.error_class, info.sql_state, msg);
    } else {
      dp_buf_printf(&err->message, "Spark Connect at %s: the call failed with gRPC status %d",
                    s->address, st->code);
    }
    if (st->code == DP_GRPC_UNAUTHENTICATED)
      dp_buf_puts(&err->message, " (check the token=... of the sc:// address)");
    copy_trunc(err->error_class, sizeof err->error_class, info.error_class, strlen(info.error_class));
    copy_trunc(err->sql_state, sizeof err->sql_state, info.sql_state, strlen(info.sql_state));
    if (err->message.oom) sc_nomem(err);
  }
  if (fr) protobuf_c_message_free_unpacked(&fr->base, NULL);
  return err && err->code == DIPPER_NOMEM ? DIPPER_NOMEM : DIPPER_REMOTE;
}

static const char *method_name(const char *path) {
  const char *p = strrchr(path, '/');
  return p ? p + 1 : path;
}

static int sc_unary(dp_sc *s, const char *method, const ProtobufCMessage *req,
                    const ProtobufCMessageDescriptor *rdesc, ProtobufCMessage **out,
                    int64_t deadline_ms, bool fetch_details, dp_sc_error *err) {
  *out = NULL;
  sc_reap(s, false);
  size_t len = 0;
  uint8_t *buf = sc_pack(req, &len);
  if (!buf) return sc_nomem(err);
  int rc;
  for (int attempt = 0;; attempt++) {
    rc = sc_connect(s, err);
    if (rc != DIPPER_OK) break;
    dp_buf resp = DP_BUF_INIT, gerr = DP_BUF_INIT;
    dp_grpc_status st = {0};
    rc = dp_grpc_unary(s->g, method, buf, len, deadline_ms, &resp, &st, &gerr);
    bool again = false;
    if (rc == DIPPER_OK) {
      static const uint8_t empty[1];
      const uint8_t *d = resp.data ? (const uint8_t *)resp.data : empty;
      *out = protobuf_c_message_unpack(rdesc, NULL, resp.len, d);
      if (*out) {
        s->last_call_ms = now_ms();
        sc_note_server_session(s, *out);
      } else {
        rc = sc_err(err, DIPPER_PROTOCOL,
                    "Spark Connect at %s: the %s answer (%zu bytes) does not decode as %s",
                    s->address, method_name(method), resp.len, rdesc->name);
      }
    } else if (sc_retriable(rc, &st) && attempt < UNARY_RETRIES) {
      again = true;
    } else if (rc == DIPPER_REMOTE) {
      rc = sc_remote_error(s, &st, fetch_details, err);
    } else {
      rc = sc_transport_error(s, rc, &gerr, err);
    }
    dp_buf_free(&resp);
    dp_buf_free(&gerr);
    dp_grpc_status_free(&st);
    if (!again) break;
    sleep_ms(backoff_ms(attempt + 1));
  }
  free(buf);
  return rc;
}

/* ---- open / close ---- */

static int sc_spark_version(dp_sc *s, dp_sc_error *err) {
  Spark__Connect__AnalyzePlanRequest q;
  Spark__Connect__AnalyzePlanRequest__SparkVersion v;
  spark__connect__analyze_plan_request__init(&q);
  spark__connect__analyze_plan_request__spark_version__init(&v);
  SC_HEAD(s, q, SPARK__CONNECT__ANALYZE_PLAN_REQUEST);
  q.analyze_case = SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_SPARK_VERSION;
  q.spark_version = &v;
  ProtobufCMessage *m;
  int rc = sc_unary(s, SVC "AnalyzePlan", &q.base, &spark__connect__analyze_plan_response__descriptor,
                    &m, UNARY_DEADLINE_MS, true, err);
  if (rc != DIPPER_OK) return rc;
  Spark__Connect__AnalyzePlanResponse *r = (Spark__Connect__AnalyzePlanResponse *)m;
  if (r->result_case == SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_SPARK_VERSION && r->spark_version &&
      r->spark_version->version) {
    s->server_version = strdup(r->spark_version->version);
    if (!s->server_version) rc = sc_nomem(err);
  } else {
    rc = sc_err(err, DIPPER_PROTOCOL, "Spark Connect at %s: AnalyzePlan(spark_version) gave no version",
                s->address);
  }
  protobuf_c_message_free_unpacked(m, NULL);
  return rc;
}

int dp_sc_open(dp_sc **out, const char *uri, dp_sc_error *err) {
  *out = NULL;
  dp_sc *s = calloc(1, sizeof *s);
  if (!s) return sc_nomem(err);
  dp_buf perr = DP_BUF_INIT;
  int rc = dp_sc_uri_parse(uri ? uri : "", &s->uri, &perr);
  if (rc != DIPPER_OK) {
    rc = sc_err(err, rc, "%s", perr.len ? dp_buf_cstr(&perr) : "bad Spark Connect address");
    dp_buf_free(&perr);
    dp_sc_close(s);
    return rc;
  }
  dp_buf_free(&perr);
  const char *h = s->uri.host;
  snprintf(s->address, sizeof s->address, strchr(h, ':') ? "[%s]:%d" : "%s:%d", h, s->uri.port);

  if (s->uri.session_id) {
    if (!dp_uuid_valid(s->uri.session_id)) {
      rc = sc_err(err, DIPPER_OPTION, "session_id=%s in the sc:// address is not a UUID "
                  "(write one like 123e4567-e89b-42d3-a456-426614174000, or leave it out)",
                  s->uri.session_id);
      dp_sc_close(s);
      return rc;
    }
    memcpy(s->session_id, s->uri.session_id, DP_UUID_LEN + 1);
  } else if (dp_uuid_v4(s->session_id) != DIPPER_OK) {
    rc = sc_err(err, DIPPER_IO, "cannot read /dev/urandom for a Spark Connect session id");
    dp_sc_close(s);
    return rc;
  }
  const char *user = s->uri.user_id;
  if (!user || !user[0]) user = getenv("USER");
  if (!user || !user[0]) user = "dipper";
  s->user_id = strdup(user);
  if (!s->user_id) {
    dp_sc_close(s);
    return sc_nomem(err);
  }
  spark__connect__user_context__init(&s->uctx);
  s->uctx.user_id = s->user_id;
  snprintf(s->client_type, sizeof s->client_type, "dipper/%s", DIPPER_VERSION);

  s->gopts.host = s->uri.host;
  s->gopts.port = s->uri.port;
  s->gopts.tls = s->uri.use_ssl;
  s->gopts.token = s->uri.token;
  s->gopts.user_agent = s->uri.user_agent;
  s->gopts.max_message = s->uri.max_message;

  rc = sc_connect(s, err);
  /* Timestamps: the session time zone is UTC so that Spark renders, casts and
     windows timestamps as the embedded engine does (dipper keeps UTC
     microseconds).  Arrow compression stays at the server's default (none);
     the decoder handles LZ4 and ZSTD should a server be set to compress. */
  if (rc == DIPPER_OK) {
    const char *k = "spark.sql.session.timeZone", *v = "UTC";
    rc = dp_sc_config_set(s, 1, &k, &v, err);
  }
  if (rc == DIPPER_OK) rc = sc_spark_version(s, err);
  if (rc != DIPPER_OK) {
    dp_sc_close(s);
    return rc;
  }
  *out = s;
  return DIPPER_OK;
}

void dp_sc_close(dp_sc *s) {
  if (!s) return;
  if (s->g && dp_grpc_usable(s->g)) {
    sc_reap(s, true);
    /* Best effort: frees the session's state on the server now rather than
       after its idle timeout.  No reconnect for it. */
    Spark__Connect__ReleaseSessionRequest q;
    spark__connect__release_session_request__init(&q);
    q.session_id = s->session_id;
    q.user_context = &s->uctx;
    q._client_type_case = SPARK__CONNECT__RELEASE_SESSION_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
    q.client_type = s->client_type;
    size_t len;
    uint8_t *buf = sc_pack(&q.base, &len);
    if (buf) {
      dp_buf resp = DP_BUF_INIT, gerr = DP_BUF_INIT;
      dp_grpc_unary(s->g, SVC "ReleaseSession", buf, len, RELEASE_DEADLINE_MS, &resp, NULL, &gerr);
      dp_buf_free(&resp);
      dp_buf_free(&gerr);
      free(buf);
    }
  }
  sc_drop_conn(s);
  dp_sc_uri_free(&s->uri);
  free(s->user_id);
  free(s->server_version);
  free(s->ss_sid);
  free(s);
}

const char *dp_sc_session_id(const dp_sc *s) { return s->session_id; }
const char *dp_sc_server_version(const dp_sc *s) { return s->server_version; }
const char *dp_sc_address(const dp_sc *s) { return s->address; }

/* ---- artifacts (Java functions' jars: spark/udf.h) ---- */

int dp_sc_add_artifact(dp_sc *s, const char *name, const void *data, size_t len, dp_sc_error *err) {
  dp_arena *a = dp_arena_new(0);
  if (!a) return sc_nomem(err);
  Spark__Connect__AddArtifactsRequest q;
  spark__connect__add_artifacts_request__init(&q);
  SC_HEAD(s, q, SPARK__CONNECT__ADD_ARTIFACTS_REQUEST);
  q.payload_case = SPARK__CONNECT__ADD_ARTIFACTS_REQUEST__PAYLOAD_BATCH;
  q.batch = dp_spark_artifact_batch(a, name, data, len);
  int rc = DIPPER_OK;
  ProtobufCMessage *m = NULL;
  if (!q.batch) rc = sc_nomem(err);
  if (!rc)
    rc = sc_unary(s, SVC "AddArtifacts", &q.base, &spark__connect__add_artifacts_response__descriptor,
                  &m, UNARY_DEADLINE_MS, true, err);
  const Spark__Connect__AddArtifactsResponse *r = (const Spark__Connect__AddArtifactsResponse *)m;
  if (!rc && (!r || r->n_artifacts != 1 || !r->artifacts[0]->is_crc_successful))
    rc = sc_err(err, DIPPER_REMOTE, "Spark Connect at %s did not take the artifact %s whole (its CRC "
                "check failed)", s->address, name);
  if (m) protobuf_c_message_free_unpacked(m, NULL);
  dp_arena_free(a);
  return rc;
}

/* ---- config ---- */

static int sc_config(dp_sc *s, Spark__Connect__ConfigRequest__Operation *op,
                     Spark__Connect__ConfigResponse **out, dp_sc_error *err) {
  Spark__Connect__ConfigRequest q;
  spark__connect__config_request__init(&q);
  SC_HEAD(s, q, SPARK__CONNECT__CONFIG_REQUEST);
  q.operation = op;
  ProtobufCMessage *m = NULL;
  int rc = sc_unary(s, SVC "Config", &q.base, &spark__connect__config_response__descriptor, &m,
                    UNARY_DEADLINE_MS, true, err);
  *out = (Spark__Connect__ConfigResponse *)m;
  return rc;
}

int dp_sc_config_set(dp_sc *s, int n, const char *const *keys, const char *const *values,
                     dp_sc_error *err) {
  if (n <= 0) return DIPPER_OK;
  Spark__Connect__KeyValue *kv = calloc((size_t)n, sizeof *kv);
  Spark__Connect__KeyValue **pkv = calloc((size_t)n, sizeof *pkv);
  if (!kv || !pkv) {
    free(kv);
    free(pkv);
    return sc_nomem(err);
  }
  for (int i = 0; i < n; i++) {
    spark__connect__key_value__init(&kv[i]);
    kv[i].key = unconst(keys[i]);
    kv[i]._value_case = SPARK__CONNECT__KEY_VALUE___VALUE_VALUE;
    kv[i].value = unconst(values[i]);
    pkv[i] = &kv[i];
  }
  Spark__Connect__ConfigRequest__Set set;
  spark__connect__config_request__set__init(&set);
  set.n_pairs = (size_t)n;
  set.pairs = pkv;
  Spark__Connect__ConfigRequest__Operation op;
  spark__connect__config_request__operation__init(&op);
  op.op_type_case = SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_SET;
  op.set = &set;
  Spark__Connect__ConfigResponse *r = NULL;
  int rc = sc_config(s, &op, &r, err);
  if (r) protobuf_c_message_free_unpacked(&r->base, NULL);
  free(kv);
  free(pkv);
  return rc;
}

int dp_sc_config_get(dp_sc *s, const char *key, char **value, dp_sc_error *err) {
  *value = NULL;
  char *k = unconst(key);
  Spark__Connect__ConfigRequest__GetOption get;
  spark__connect__config_request__get_option__init(&get);
  get.n_keys = 1;
  get.keys = &k;
  Spark__Connect__ConfigRequest__Operation op;
  spark__connect__config_request__operation__init(&op);
  op.op_type_case = SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_GET_OPTION;
  op.get_option = &get;
  Spark__Connect__ConfigResponse *r = NULL;
  int rc = sc_config(s, &op, &r, err);
  if (rc != DIPPER_OK) return rc;
  for (size_t i = 0; i < r->n_pairs; i++) {
    const Spark__Connect__KeyValue *p = r->pairs[i];
    if (p && p->key && strcmp(p->key, key) == 0 &&
        p->_value_case == SPARK__CONNECT__KEY_VALUE___VALUE_VALUE && p->value) {
      *value = strdup(p->value);
      if (!*value) rc = sc_nomem(err);
      break;
    }
  }
  protobuf_c_message_free_unpacked(&r->base, NULL);
  return rc;
}

/* ---- execution ---- */

/* The ExecutePlan request: reattachable, with our operation id. */
static uint8_t *sc_encode_execute(dp_sc *s, const Spark__Connect__Plan *plan, const char *op_id,
                                  size_t *len) {
  Spark__Connect__ReattachOptions ro;
  spark__connect__reattach_options__init(&ro);
  ro.reattachable = 1;
  Spark__Connect__ExecutePlanRequest__RequestOption opt;
  spark__connect__execute_plan_request__request_option__init(&opt);
  opt.request_option_case =
      SPARK__CONNECT__EXECUTE_PLAN_REQUEST__REQUEST_OPTION__REQUEST_OPTION_REATTACH_OPTIONS;
  opt.reattach_options = &ro;
  Spark__Connect__ExecutePlanRequest__RequestOption *opts[1] = {&opt};
  Spark__Connect__ExecutePlanRequest q;
  spark__connect__execute_plan_request__init(&q);
  SC_HEAD(s, q, SPARK__CONNECT__EXECUTE_PLAN_REQUEST);
  q.plan = unconst(plan);
  q._operation_id_case = SPARK__CONNECT__EXECUTE_PLAN_REQUEST___OPERATION_ID_OPERATION_ID;
  q.operation_id = unconst(op_id);
  q.n_request_options = 1;
  q.request_options = opts;
  return sc_pack(&q.base, len);
}

uint8_t *dp_sc__encode_execute(dp_sc *s, const Spark__Connect__Plan *plan, const char *operation_id,
                               size_t *len) {
  return sc_encode_execute(s, plan, operation_id, len);
}

static uint8_t *sc_encode_reattach(dp_sc *s, char *op_id, char *last_rid, size_t *len) {
  Spark__Connect__ReattachExecuteRequest q;
  spark__connect__reattach_execute_request__init(&q);
  SC_HEAD(s, q, SPARK__CONNECT__REATTACH_EXECUTE_REQUEST);
  q.operation_id = op_id;
  if (last_rid) {
    q._last_response_id_case = SPARK__CONNECT__REATTACH_EXECUTE_REQUEST___LAST_RESPONSE_ID_LAST_RESPONSE_ID;
    q.last_response_id = last_rid;
  }
  return sc_pack(&q.base, len);
}

/* ReleaseExecute(release_all), not waited for.  Also interrupts the
** operation if it still runs (the protocol's ReleaseAll), which is what an
** abandoned execution needs.  Without a live connection nothing is sent: the
** server drops detached operations itself after its timeout. */
static void sc_release_async(dp_sc *s, char *op_id) {
  if (!s->g || !dp_grpc_usable(s->g)) return;
  if (s->npending == MAX_PENDING) sc_reap(s, true);
  if (s->npending == MAX_PENDING) return;
  Spark__Connect__ReleaseExecuteRequest__ReleaseAll all;
  spark__connect__release_execute_request__release_all__init(&all);
  Spark__Connect__ReleaseExecuteRequest q;
  spark__connect__release_execute_request__init(&q);
  SC_HEAD(s, q, SPARK__CONNECT__RELEASE_EXECUTE_REQUEST);
  q.operation_id = op_id;
  q.release_case = SPARK__CONNECT__RELEASE_EXECUTE_REQUEST__RELEASE_RELEASE_ALL;
  q.release_all = &all;
  size_t len;
  uint8_t *buf = sc_pack(&q.base, &len);
  if (!buf) return;
  dp_grpc_call *c = NULL;
  dp_buf gerr = DP_BUF_INIT;
  if (dp_grpc_stream_open(s->g, SVC "ReleaseExecute", buf, len, RELEASE_DEADLINE_MS, &c, &gerr) ==
      DIPPER_OK)
    s->pending[s->npending++] = c;
  free(buf);
  dp_buf_free(&gerr);
}

typedef struct sc_exec {
  char op_id[DP_UUID_LEN + 1];
  char *last_rid;  /* the last response id seen; malloc'd */
  bool sent;       /* ExecutePlan went out once: resume with ReattachExecute */
  bool any;        /* a response arrived */
  bool complete;   /* ResultComplete arrived */
} sc_exec;

/* One run of an operation (sc_run): the reader, the retry count, and the
** stream of the current try. */
typedef struct sc_run_ctx {
  sc_exec *x;
  dp_sc_response_fn fn;
  void *user;
  int64_t t_end;          /* the deadline, ms; 0: none */
  int failures;           /* tries in a row that brought no response */
  dp_grpc_call *call;     /* this try's ExecutePlan or ReattachExecute stream */
  dp_buf gerr;
  int nstream;            /* responses read on it */
  bool lost_before_start; /* a reattach before any response: see OPERATION_NOT_FOUND */
  bool resume;            /* the stream broke or ended early: go on from the last response */
} sc_run_ctx;

/* Too many tries in a row without a response: the last one's error. */
static int give_up(dp_sc *s, const sc_exec *x, int rc, int failures, dp_sc_error *err) {
  if (rc == DIPPER_IO)
    rc = sc_err(err, DIPPER_IO,
                "Spark Connect at %s: the result stream of operation %s broke %d times in a "
                "row; gave up (is the server overloaded or restarting?)",
                s->address, x->op_id, failures);
  return rc;
}

/* The pause before the next try, cut at the deadline. */
static void back_off(int failures, int64_t t_end) {
  int64_t d = backoff_ms(failures);
  if (t_end && now_ms() + d >= t_end) d = t_end - now_ms();
  sleep_ms(d);
}

/* One response of the stream, handed to the reader.  *more: read on. */
static int take_response(dp_sc *s, sc_run_ctx *r, const uint8_t *m, size_t mlen, bool *more, dp_sc_error *err) {
  sc_exec *x = r->x;
  *more = false;
  Spark__Connect__ExecutePlanResponse *resp = spark__connect__execute_plan_response__unpack(NULL, mlen, m);
  if (!resp)
    return sc_err(err, DIPPER_PROTOCOL,
                  "Spark Connect at %s: response %d of operation %s (%zu bytes) does not decode "
                  "as ExecutePlanResponse",
                  s->address, r->nstream + 1, x->op_id, mlen);
  r->failures = 0;
  x->any = true;
  r->nstream++;
  sc_note_server_session(s, &resp->base);
  if (resp->response_id && resp->response_id[0]) {
    char *rid = strdup(resp->response_id);
    if (!rid) {
      spark__connect__execute_plan_response__free_unpacked(resp, NULL);
      return sc_nomem(err);
    }
    free(x->last_rid);
    x->last_rid = rid;
  }
  if (resp->response_type_case == SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_RESULT_COMPLETE)
    x->complete = true;
  int frc = r->fn ? r->fn(r->user, resp) : DIPPER_OK;
  spark__connect__execute_plan_response__free_unpacked(resp, NULL);
  if (frc != DIPPER_OK) {
    if (err && (err->code != frc || err->message.len == 0))
      sc_err(err, frc, "the result of operation %s was abandoned by its reader (%s)", x->op_id,
             dipper_strerror(frc));
    return frc;
  }
  if (s->cut_after > 0 && r->nstream == s->cut_after && !x->complete) {
    /* Test hook: the stream and its connection go away as if the
       network had failed; the operation must be resumed. */
    s->cut_after = 0;
    dp_grpc_stream_free(r->call);
    r->call = NULL;
    sc_drop_conn(s);
    r->resume = true;
    return DIPPER_OK;
  }
  *more = true;
  return DIPPER_OK;
}

/* The stream ended with error `code` (status st): done, resumed, or failed. */
static int stream_failed(dp_sc *s, sc_run_ctx *r, int code, const dp_grpc_status *st, dp_sc_error *err) {
  sc_exec *x = r->x;
  if (x->complete) return DIPPER_OK; /* everything arrived; how the call ended does not matter */
  if (sc_retriable(code, st)) {
    r->failures++;
    r->resume = true;
    return DIPPER_IO;
  }
  if (code == DIPPER_REMOTE && st->code != DP_GRPC_DEADLINE_EXCEEDED) {
    sc_errinfo info;
    parse_status(st->details, st->details_len, &info);
    if (r->lost_before_start && strstr(info.error_class, "OPERATION_NOT_FOUND")) {
      /* The first ExecutePlan never reached the server: send it again. */
      x->sent = false;
      r->failures++;
      r->resume = true;
      return DIPPER_OK;
    }
    return sc_remote_error(s, st, true, err);
  }
  if (code == DIPPER_TIMEOUT || (code == DIPPER_REMOTE && st->code == DP_GRPC_DEADLINE_EXCEEDED))
    return sc_err(err, DIPPER_TIMEOUT, "Spark Connect at %s: operation %s ran past its deadline",
                  s->address, x->op_id);
  return sc_transport_error(s, code, &r->gerr, err);
}

/* Read the stream until it ends, breaks, the reader stops or the abort flag is set. */
static int read_stream(dp_sc *s, sc_run_ctx *r, dp_sc_error *err) {
  sc_exec *x = r->x;
  for (;;) {
    const uint8_t *m;
    size_t mlen;
    dp_grpc_status st = {0};
    /* With an abort flag the wait is sliced, so that the flag is seen while
       the server sends nothing (a listener bus between events). */
    int got = dp_grpc_stream_next(r->call, s->abort ? ABORT_SLICE_MS : 0, &m, &mlen, &st, &r->gerr);
    if (got == -DIPPER_TIMEOUT && s->abort && !(r->t_end && now_ms() >= r->t_end)) {
      r->gerr.len = 0; /* "no message within ..." is no error here */
      if (!atomic_load(s->abort)) continue;
      s->abort = NULL; /* consumed: what the caller runs next is not cut short */
      return sc_err(err, DIPPER_INTERRUPTED, "Spark Connect at %s: operation %s was interrupted",
                    s->address, x->op_id);
    }
    if (got == 1) {
      bool more;
      int rc = take_response(s, r, m, mlen, &more, err);
      if (more) continue;
      return rc;
    }
    if (got == 0) {
      /* A reattachable stream may end before the result does (the
         server bounds each stream's duration and size): resume. */
      if (!x->complete) {
        r->resume = true;
        if (r->nstream == 0) r->failures++;
      }
      return DIPPER_OK;
    }
    int rc = stream_failed(s, r, -got, &st, err);
    dp_grpc_status_free(&st);
    return rc;
  }
}

/* Run an operation to its end: connect, ExecutePlan (then ReattachExecute
** from the last response), read; retried with back-off while tries bring
** no response, up to EXEC_RETRIES in a row, and within the deadline. */
static int sc_run(dp_sc *s, sc_exec *x, const uint8_t *ebuf, size_t elen, dp_sc_response_fn fn,
                  void *user, int64_t t_end, dp_sc_error *err) {
  sc_run_ctx r = {.x = x, .fn = fn, .user = user, .t_end = t_end};
  int rc = DIPPER_OK;
  for (;;) {
    if (r.failures > 0) {
      if (r.failures > EXEC_RETRIES) return give_up(s, x, rc, r.failures, err);
      back_off(r.failures, t_end);
    }
    int64_t left = 0;
    if (t_end && (left = t_end - now_ms()) <= 0)
      return sc_err(err, DIPPER_TIMEOUT, "Spark Connect at %s: operation %s ran past its deadline",
                    s->address, x->op_id);
    rc = sc_connect(s, err);
    if (rc != DIPPER_OK) {
      /* Before the plan went out, a server that does not answer is the
         user's error to see at once; after, it may be restarting. */
      if (rc != DIPPER_CONNECT || !x->sent) return rc;
      r.failures++;
      continue;
    }
    r.call = NULL;
    r.gerr = (dp_buf)DP_BUF_INIT;
    r.nstream = 0;
    r.resume = false;
    bool is_reattach = x->sent;
    if (is_reattach) {
      size_t rlen;
      uint8_t *rbuf = sc_encode_reattach(s, x->op_id, x->last_rid, &rlen);
      if (!rbuf) return sc_nomem(err);
      rc = dp_grpc_stream_open(s->g, SVC "ReattachExecute", rbuf, rlen, left, &r.call, &r.gerr);
      free(rbuf);
      s->reattaches++;
    } else {
      rc = dp_grpc_stream_open(s->g, SVC "ExecutePlan", ebuf, elen, left, &r.call, &r.gerr);
      if (rc == DIPPER_OK) x->sent = true;
    }
    if (rc != DIPPER_OK) {
      if (rc == DIPPER_IO) {
        dp_buf_free(&r.gerr);
        r.failures++;
        continue;
      }
      rc = sc_transport_error(s, rc, &r.gerr, err);
      dp_buf_free(&r.gerr);
      return rc;
    }
    r.lost_before_start = is_reattach && !x->any;
    rc = read_stream(s, &r, err);
    dp_buf_free(&r.gerr);
    dp_grpc_stream_free(r.call);
    if (!r.resume) return rc;
    rc = DIPPER_IO;
  }
}

int dp_sc_execute(dp_sc *s, const Spark__Connect__Plan *plan, dp_sc_response_fn fn, void *user,
                  int64_t deadline_ms, dp_sc_error *err) {
  if (!s || !plan) return sc_err(err, DIPPER_MISUSE, "dp_sc_execute: no session or no plan");
  if (err) sc_err_reset(err, DIPPER_OK);
  sc_reap(s, false);
  sc_exec x;
  memset(&x, 0, sizeof x);
  if (dp_uuid_v4(x.op_id) != DIPPER_OK)
    return sc_err(err, DIPPER_IO, "cannot read /dev/urandom for a Spark Connect operation id");
  size_t elen;
  uint8_t *ebuf = sc_encode_execute(s, plan, x.op_id, &elen);
  if (!ebuf) return sc_nomem(err);
  int64_t t_end = deadline_ms > 0 ? now_ms() + deadline_ms : 0;
  int rc = sc_run(s, &x, ebuf, elen, fn, user, t_end, err);
  free(ebuf);
  if (x.sent) sc_release_async(s, x.op_id);
  free(x.last_rid);
  if (rc == DIPPER_OK) s->last_call_ms = now_ms();
  return rc;
}

/* ---- collect ---- */

typedef struct sc_collect {
  dp_arrow_batches *out;
  int cap;
  dp_sc_error *err;
} sc_collect;

static void batches_clear(dp_arrow_batches *b) {
  for (int i = 0; i < b->n; i++)
    if (b->arrays[i].release) b->arrays[i].release(&b->arrays[i]);
  free(b->arrays);
  if (b->schema.release) b->schema.release(&b->schema);
  memset(b, 0, sizeof *b);
}

static int collect_fn(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  sc_collect *c = user;
  if (r->response_type_case != SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH ||
      !r->arrow_batch)
    return DIPPER_OK;
  const Spark__Connect__ExecutePlanResponse__ArrowBatch *ab = r->arrow_batch;
  dp_arrow_batches part;
  memset(&part, 0, sizeof part);
  dp_buf derr = DP_BUF_INIT;
  int rc = dp_arrow_ipc_decode(ab->data.data, ab->data.len, &part, &derr);
  if (rc != DIPPER_OK) {
    sc_err(c->err, rc, "Arrow batch at row %lld of the result: %s", (long long)c->out->rows,
           derr.len ? dp_buf_cstr(&derr) : dipper_strerror(rc));
    dp_buf_free(&derr);
    return rc;
  }
  dp_buf_free(&derr);
  if (part.rows != ab->row_count) {
    rc = sc_err(c->err, DIPPER_PROTOCOL,
                "Arrow batch at row %lld of the result: the batch says %lld rows, its data holds %lld",
                (long long)c->out->rows, (long long)ab->row_count, (long long)part.rows);
    dp_arrow_batches_free(&part);
    return rc;
  }
  dp_arrow_batches *o = c->out;
  if (o->n + part.n > c->cap) {
    int cap = c->cap ? c->cap : 8;
    while (cap < o->n + part.n) cap *= 2;
    struct ArrowArray *a = realloc(o->arrays, (size_t)cap * sizeof *a);
    if (!a) {
      dp_arrow_batches_free(&part);
      return sc_nomem(c->err);
    }
    o->arrays = a;
    c->cap = cap;
  }
  /* Arrays move by value (the C Data Interface allows it: the release
     callback and private data travel with the struct).  Every batch of one
     result has the result's schema: the first one is kept. */
  for (int i = 0; i < part.n; i++) o->arrays[o->n++] = part.arrays[i];
  o->rows += part.rows;
  if (!o->schema.release) {
    o->schema = part.schema;
  } else if (part.schema.release) {
    part.schema.release(&part.schema);
  }
  free(part.arrays);
  return DIPPER_OK;
}

int dp_sc_collect(dp_sc *s, const Spark__Connect__Relation *root, dp_arrow_batches *out,
                  dp_sc_error *err) {
  memset(out, 0, sizeof *out);
  Spark__Connect__Plan plan;
  spark__connect__plan__init(&plan);
  plan.op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_ROOT;
  plan.root = unconst(root);
  sc_collect c = {out, 0, err};
  int rc = dp_sc_execute(s, &plan, collect_fn, &c, 0, err);
  if (rc != DIPPER_OK) batches_clear(out);
  return rc;
}

/* ---- AnalyzePlan: a schema in Spark's DDL ---- */

static void ddl_name(dp_buf *b, const char *name) {
  bool plain = name[0] && !isdigit((unsigned char)name[0]);
  for (const char *p = name; *p && plain; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') plain = false;
  if (plain) {
    dp_buf_puts(b, name);
    return;
  }
  dp_buf_putc(b, '`');
  for (const char *p = name; *p; p++) {
    if (*p == '`') dp_buf_putc(b, '`');
    dp_buf_putc(b, *p);
  }
  dp_buf_putc(b, '`');
}

static const char *const interval_dt[] = {"DAY", "HOUR", "MINUTE", "SECOND"};
static const char *const interval_ym[] = {"YEAR", "MONTH"};

static void ddl_interval(dp_buf *b, const char *const *names, int nnames, int has_s, int s, int has_e,
                         int e) {
  int lo = has_s && s >= 0 && s < nnames ? s : 0;
  int hi = has_e && e >= 0 && e < nnames ? e : nnames - 1;
  dp_buf_printf(b, "INTERVAL %s", names[lo]);
  if (hi != lo) dp_buf_printf(b, " TO %s", names[hi]);
}

static int ddl_type(dp_buf *b, const Spark__Connect__DataType *t, int depth) {
  if (!t || depth > 64) return DIPPER_PROTOCOL;
  switch (t->kind_case) {
  case SPARK__CONNECT__DATA_TYPE__KIND_NULL: dp_buf_puts(b, "VOID"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_BINARY: dp_buf_puts(b, "BINARY"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_BOOLEAN: dp_buf_puts(b, "BOOLEAN"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_BYTE: dp_buf_puts(b, "TINYINT"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_SHORT: dp_buf_puts(b, "SMALLINT"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_INTEGER: dp_buf_puts(b, "INT"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_LONG: dp_buf_puts(b, "BIGINT"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_FLOAT: dp_buf_puts(b, "FLOAT"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_DOUBLE: dp_buf_puts(b, "DOUBLE"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_STRING: dp_buf_puts(b, "STRING"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_DATE: dp_buf_puts(b, "DATE"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_TIMESTAMP: dp_buf_puts(b, "TIMESTAMP"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_TIMESTAMP_NTZ: dp_buf_puts(b, "TIMESTAMP_NTZ"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_CALENDAR_INTERVAL: dp_buf_puts(b, "INTERVAL"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_VARIANT: dp_buf_puts(b, "VARIANT"); return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_DECIMAL: {
    const Spark__Connect__DataType__Decimal *d = t->decimal;
    int p = d && d->_precision_case == SPARK__CONNECT__DATA_TYPE__DECIMAL___PRECISION_PRECISION ? d->precision : 10;
    int s = d && d->_scale_case == SPARK__CONNECT__DATA_TYPE__DECIMAL___SCALE_SCALE ? d->scale : 0;
    dp_buf_printf(b, "DECIMAL(%d,%d)", p, s);
    return DIPPER_OK;
  }
  case SPARK__CONNECT__DATA_TYPE__KIND_CHAR:
    dp_buf_printf(b, "CHAR(%d)", t->char_ ? t->char_->length : 1);
    return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_VAR_CHAR:
    dp_buf_printf(b, "VARCHAR(%d)", t->var_char ? t->var_char->length : 1);
    return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_TIME:
    if (t->time && t->time->_precision_case == SPARK__CONNECT__DATA_TYPE__TIME___PRECISION_PRECISION)
      dp_buf_printf(b, "TIME(%d)", t->time->precision);
    else
      dp_buf_puts(b, "TIME");
    return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_DAY_TIME_INTERVAL: {
    const Spark__Connect__DataType__DayTimeInterval *i = t->day_time_interval;
    ddl_interval(b, interval_dt, 4,
                 i && i->_start_field_case == SPARK__CONNECT__DATA_TYPE__DAY_TIME_INTERVAL___START_FIELD_START_FIELD,
                 i ? i->start_field : 0,
                 i && i->_end_field_case == SPARK__CONNECT__DATA_TYPE__DAY_TIME_INTERVAL___END_FIELD_END_FIELD,
                 i ? i->end_field : 0);
    return DIPPER_OK;
  }
  case SPARK__CONNECT__DATA_TYPE__KIND_YEAR_MONTH_INTERVAL: {
    const Spark__Connect__DataType__YearMonthInterval *i = t->year_month_interval;
    ddl_interval(b, interval_ym, 2,
                 i && i->_start_field_case == SPARK__CONNECT__DATA_TYPE__YEAR_MONTH_INTERVAL___START_FIELD_START_FIELD,
                 i ? i->start_field : 0,
                 i && i->_end_field_case == SPARK__CONNECT__DATA_TYPE__YEAR_MONTH_INTERVAL___END_FIELD_END_FIELD,
                 i ? i->end_field : 0);
    return DIPPER_OK;
  }
  case SPARK__CONNECT__DATA_TYPE__KIND_ARRAY:
    if (!t->array) return DIPPER_PROTOCOL;
    dp_buf_puts(b, "ARRAY<");
    if (ddl_type(b, t->array->element_type, depth + 1) != DIPPER_OK) return DIPPER_PROTOCOL;
    dp_buf_putc(b, '>');
    return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_MAP:
    if (!t->map) return DIPPER_PROTOCOL;
    dp_buf_puts(b, "MAP<");
    if (ddl_type(b, t->map->key_type, depth + 1) != DIPPER_OK) return DIPPER_PROTOCOL;
    dp_buf_puts(b, ", ");
    if (ddl_type(b, t->map->value_type, depth + 1) != DIPPER_OK) return DIPPER_PROTOCOL;
    dp_buf_putc(b, '>');
    return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_STRUCT:
    if (!t->struct_) return DIPPER_PROTOCOL;
    dp_buf_puts(b, "STRUCT<");
    for (size_t i = 0; i < t->struct_->n_fields; i++) {
      const Spark__Connect__DataType__StructField *f = t->struct_->fields[i];
      if (!f || !f->name) return DIPPER_PROTOCOL;
      if (i) dp_buf_puts(b, ", ");
      ddl_name(b, f->name);
      dp_buf_puts(b, ": ");
      if (ddl_type(b, f->data_type, depth + 1) != DIPPER_OK) return DIPPER_PROTOCOL;
      if (!f->nullable) dp_buf_puts(b, " NOT NULL");
    }
    dp_buf_putc(b, '>');
    return DIPPER_OK;
  case SPARK__CONNECT__DATA_TYPE__KIND_UDT:
    if (t->udt && t->udt->_sql_type_case == SPARK__CONNECT__DATA_TYPE__UDT___SQL_TYPE_SQL_TYPE)
      return ddl_type(b, t->udt->sql_type, depth + 1);
    return DIPPER_PROTOCOL;
  case SPARK__CONNECT__DATA_TYPE__KIND_UNPARSED:
    if (!t->unparsed || !t->unparsed->data_type_string) return DIPPER_PROTOCOL;
    dp_buf_puts(b, t->unparsed->data_type_string);
    return DIPPER_OK;
  default: return DIPPER_PROTOCOL;
  }
}

int dp_sc_analyze_schema(dp_sc *s, const Spark__Connect__Relation *root, char **ddl,
                         dp_sc_error *err) {
  *ddl = NULL;
  Spark__Connect__Plan plan;
  spark__connect__plan__init(&plan);
  plan.op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_ROOT;
  plan.root = unconst(root);
  Spark__Connect__AnalyzePlanRequest__Schema sch;
  spark__connect__analyze_plan_request__schema__init(&sch);
  sch.plan = &plan;
  Spark__Connect__AnalyzePlanRequest q;
  spark__connect__analyze_plan_request__init(&q);
  SC_HEAD(s, q, SPARK__CONNECT__ANALYZE_PLAN_REQUEST);
  q.analyze_case = SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_SCHEMA;
  q.schema = &sch;
  ProtobufCMessage *m;
  int rc = sc_unary(s, SVC "AnalyzePlan", &q.base, &spark__connect__analyze_plan_response__descriptor,
                    &m, UNARY_DEADLINE_MS, true, err);
  if (rc != DIPPER_OK) return rc;
  const Spark__Connect__AnalyzePlanResponse *r = (const Spark__Connect__AnalyzePlanResponse *)m;
  const Spark__Connect__DataType *t =
      r->result_case == SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_SCHEMA && r->schema ? r->schema->schema
                                                                                     : NULL;
  dp_buf b = DP_BUF_INIT;
  if (t && t->kind_case == SPARK__CONNECT__DATA_TYPE__KIND_STRUCT && t->struct_) {
    /* The top level as a column list, "id BIGINT NOT NULL, s STRING", the
       form a CREATE TABLE or Spark's schema option takes. */
    for (size_t i = 0; i < t->struct_->n_fields && rc == DIPPER_OK; i++) {
      const Spark__Connect__DataType__StructField *f = t->struct_->fields[i];
      if (!f || !f->name) {
        rc = DIPPER_PROTOCOL;
        break;
      }
      if (i) dp_buf_puts(&b, ", ");
      ddl_name(&b, f->name);
      dp_buf_putc(&b, ' ');
      rc = ddl_type(&b, f->data_type, 1);
      if (!f->nullable) dp_buf_puts(&b, " NOT NULL");
    }
  } else {
    rc = t ? ddl_type(&b, t, 0) : DIPPER_PROTOCOL;
  }
  protobuf_c_message_free_unpacked(m, NULL);
  if (rc != DIPPER_OK) {
    dp_buf_free(&b);
    return sc_err(err, rc, "Spark Connect at %s: AnalyzePlan(schema) gave a schema dipper cannot read",
                  s->address);
  }
  if (b.oom) {
    dp_buf_free(&b);
    return sc_nomem(err);
  }
  dp_buf_cstr(&b);
  *ddl = dp_buf_take(&b);
  return *ddl ? DIPPER_OK : sc_nomem(err);
}

/* ---- keep-alive, interrupt ---- */

int dp_sc_keepalive(dp_sc *s, int64_t interval_ms, dp_sc_error *err) {
  if (now_ms() - s->last_call_ms < interval_ms) return DIPPER_OK;
  char *v = NULL;
  int rc = dp_sc_config_get(s, "spark.sql.session.timeZone", &v, err);
  free(v);
  return rc;
}

void dp_sc_set_abort(dp_sc *s, atomic_int *flag) {
  if (s) s->abort = flag;
}

int dp_sc_interrupt_all(dp_sc *s, dp_sc_error *err) {
  Spark__Connect__InterruptRequest q;
  spark__connect__interrupt_request__init(&q);
  SC_HEAD(s, q, SPARK__CONNECT__INTERRUPT_REQUEST);
  q.interrupt_type = SPARK__CONNECT__INTERRUPT_REQUEST__INTERRUPT_TYPE__INTERRUPT_TYPE_ALL;
  ProtobufCMessage *m;
  int rc = sc_unary(s, SVC "Interrupt", &q.base, &spark__connect__interrupt_response__descriptor, &m,
                    UNARY_DEADLINE_MS, true, err);
  if (rc == DIPPER_OK) protobuf_c_message_free_unpacked(m, NULL);
  return rc;
}

/* ---- for tests ---- */

void dp_sc__test_cut_after(dp_sc *s, int n) { s->cut_after = n > 0 ? n : 0; }
int dp_sc__test_reattaches(const dp_sc *s) { return s->reattaches; }
