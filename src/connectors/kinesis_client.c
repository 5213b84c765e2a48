/*
** kinesis_client.c — the kinesis connector's HTTP client (kinesis_int.h):
** endpoint, region and credentials from the table and the environment, one
** signed POST per call through libcurl, retries with backoff, and the JSON
** answers decoded by the formats layer's JSON decoder (no parser of its own).
**
** Owns: the curl handle and the secrets.  Does not own: what the calls
** mean (kinesis_source.c, kinesis_sink.c).
*/
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "connectors/kinesis_int.h"
#include "core/session.h"

static const dp_span nowhere = {0, 0, 0, 0};

struct dp_kinesis {
  CURL *curl;
  CURLM *multi;            /* drives curl in 100 ms slices that watch the interrupt flag */
  dipper *db;
  dp_diags *diags;
  const dp_table_def *table;
  const char *stream;
  char *url;
  char sigv4[128];
  char *access_key;        /* the user name of the signature: not secret */
  char *secret_key;        /* secret: only ever handed to libcurl */
  char *token_header;      /* "X-Amz-Security-Token: ..." or NULL; secret */
  dp_buf answer;
  long status;
  dp_kin_err err;
  char err_type[96];
  char err_msg[320];
  uint64_t rng;
  dp_arena *arena;
  dp_kin_json err_json;    /* {"__type", "message"} */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

int64_t dp_kinesis_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool dp_kinesis_sleep(dipper *db, int64_t ms) {
  int64_t end = dp_kinesis_now_ms() + ms;
  for (;;) {
    if (dp_session_interrupted(db)) return false;
    int64_t left = end - dp_kinesis_now_ms();
    if (left <= 0) return true;
    long slice = left < 100 ? (long)left : 100;
    nanosleep(&(struct timespec){0, slice * 1000 * 1000}, NULL);
  }
}

int64_t dp_kinesis_backoff_ms(const dp_kin_backoff *b, int attempt) {
  double ms = (double)b->base_ms;
  for (int i = 0; i < attempt && ms < (double)b->max_ms; i++) ms *= b->expconst;
  if (ms > (double)b->max_ms) ms = (double)b->max_ms;
  return ms < 1 ? 1 : (int64_t)ms;
}

int64_t dp_kinesis_int_option(const dp_table_def *t, const char *key, int64_t dflt) {
  const char *v = dp_table_option(t, key, NULL);
  if (!v || !*v) return dflt;
  char *end = NULL;
  long long x = strtoll(v, &end, 10);
  return end && *end == '\0' ? (int64_t)x : dflt;
}

/* A duration option ("300 ms", "2 s", or bare milliseconds), in ms. */
static int64_t ms_option(const dp_table_def *t, const char *key, int64_t dflt) {
  const char *v = dp_table_option(t, key, NULL);
  if (!v || !*v) return dflt;
  char *end = NULL;
  long long x = strtoll(v, &end, 10);
  if (end && *end == '\0') return (int64_t)x;
  int64_t us = 0;
  return dp_parse_duration(v, &us) == DIPPER_OK ? us / 1000 : dflt;
}

dp_kin_backoff dp_kinesis_backoff(const dp_table_def *t, const char *base_key,
                                  const char *max_key, const char *exp_key,
                                  const char *retries_key, dp_kin_backoff dflt) {
  dp_kin_backoff b = dflt;
  b.base_ms = ms_option(t, base_key, dflt.base_ms);
  b.max_ms = ms_option(t, max_key, dflt.max_ms);
  const char *e = dp_table_option(t, exp_key, NULL);
  if (e && *e) b.expconst = strtod(e, NULL);
  if (b.expconst < 1) b.expconst = 1;
  if (b.max_ms < b.base_ms) b.max_ms = b.base_ms;
  b.max_retries = (int)dp_kinesis_int_option(t, retries_key, dflt.max_retries);
  return b;
}

int dp_kinesis_seq_cmp(const char *a, const char *b) {
  while (*a == '0' && a[1]) a++;
  while (*b == '0' && b[1]) b++;
  size_t na = strlen(a), nb = strlen(b);
  if (na != nb) return na < nb ? -1 : 1;
  int c = strcmp(a, b);
  return (c > 0) - (c < 0);
}

/* ---- diagnostics ---- */

int dp_kinesis_error(dp_kinesis *kc, int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return dp_error(kc->diags, code, nowhere, "table `%s`: %s", kc->table->name, msg);
}

void dp_kinesis_note(dp_kinesis *kc, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dp_session_log(kc->db, DIPPER_LOG_WARNING, "kinesis: table `%s`: %s", kc->table->name, msg);
}

int dp_kinesis_fail(dp_kinesis *kc, const char *action) {
  int code = kc->err == KIN_INTERRUPTED ? DIPPER_INTERRUPTED
             : kc->status == 0          ? DIPPER_CONNECT
                                        : DIPPER_REMOTE;
  if (kc->err == KIN_INTERRUPTED)
    return dp_kinesis_error(kc, code, "interrupted (dipper_interrupt) during Kinesis %s", action);
  if (kc->status == 0)
    return dp_kinesis_error(kc, code, "Kinesis %s on stream `%s`: no answer from %s: %s", action,
                            kc->stream, kc->url, kc->err_msg);
  return dp_kinesis_error(kc, code, "Kinesis %s on stream `%s`: HTTP %ld %s: %s", action,
                          kc->stream, kc->status, kc->err_type[0] ? kc->err_type : "error",
                          kc->err_msg[0] ? kc->err_msg : "(no message)");
}

const char *dp_kinesis_answer(const dp_kinesis *kc, size_t *n) {
  if (n) *n = kc->answer.len;
  return kc->answer.data ? kc->answer.data : "";
}

dp_kin_err dp_kinesis_err(const dp_kinesis *kc) { return kc->err; }
const char *dp_kinesis_stream(const dp_kinesis *kc) { return kc->stream; }

/* ---- JSON answers ---- */

int dp_kin_json_open(dp_kin_json *j, dp_arena *a, int n, const dp_field *cols) {
  memset(j, 0, sizeof *j);
  j->arena = a;
  j->schema.ncols = n;
  j->schema.cols = dp_arena_alloc(a, (size_t)n * sizeof *j->schema.cols);
  if (!j->schema.cols) return DIPPER_NOMEM;
  memcpy(j->schema.cols, cols, (size_t)n * sizeof *cols);
  j->dec = dp_json_decoder_new(&j->schema, NULL, NULL);
  j->row = dp_batch_new(&j->schema, 1);
  return j->dec && j->row ? DIPPER_OK : DIPPER_NOMEM;
}

void dp_kin_json_close(dp_kin_json *j) {
  if (j->dec) dp_json_decoder_free(j->dec);
  if (j->row) dp_batch_free(j->row);
  j->dec = NULL;
  j->row = NULL;
}

int dp_kin_json_parse(dp_kin_json *j, const char *p, size_t n, dp_format_error *e) {
  dp_batch_clear(j->row);
  int rc = dp_json_decode(j->dec, p, n, j->row, e);
  if (rc == DIPPER_DATA) return DIPPER_PROTOCOL;
  if (rc != DIPPER_OK) return rc;
  j->row->nrows = 1;
  return dp_batch_sync(j->row);
}

const char *dp_kin_str(const dp_vector *v, int64_t i, size_t *n) {
  if (dp_vector_is_null(v, i)) return NULL;
  return dp_vector_get_str(v, i, n);
}

/* ---- the client ---- */

static char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? strdup(v) : NULL;
}

static int credentials(dp_kinesis *kc, const dp_table_def *t) {
  const char *provider = dp_table_option(t, "aws.credentials.provider", "AUTO");
  const char *ak = dp_table_option(t, "aws.credentials.basic.accesskeyid", NULL);
  const char *sk = dp_table_option(t, "aws.credentials.basic.secretkey", NULL);
  bool basic = strcasecmp(provider, "BASIC") == 0 || (strcasecmp(provider, "AUTO") == 0 && ak);
  char *token = NULL;
  if (basic) {
    if (!ak || !sk || !*ak || !*sk)
      return dp_kinesis_error(kc, DIPPER_OPTION,
                              "credentials BASIC need both 'aws.credentials.basic.accesskeyid' "
                              "and 'aws.credentials.basic.secretkey'");
    kc->access_key = strdup(ak);
    kc->secret_key = strdup(sk);
  } else {
    kc->access_key = env("AWS_ACCESS_KEY_ID");
    kc->secret_key = env("AWS_SECRET_ACCESS_KEY");
    token = env("AWS_SESSION_TOKEN");
    if (!kc->access_key || !kc->secret_key) {
      free(token);
      return dp_kinesis_error(kc, DIPPER_OPTION,
                              "no AWS credentials: set AWS_ACCESS_KEY_ID and "
                              "AWS_SECRET_ACCESS_KEY, or 'aws.credentials.provider' = 'BASIC' "
                              "with 'aws.credentials.basic.accesskeyid' and '.secretkey'");
    }
  }
  if (!kc->access_key || !kc->secret_key) return DIPPER_NOMEM;
  if (token) {
    size_t n = strlen(token) + 32;
    kc->token_header = malloc(n);
    if (kc->token_header) snprintf(kc->token_header, n, "X-Amz-Security-Token: %s", token);
    memset(token, 0, strlen(token));
    free(token);
    if (!kc->token_header) return DIPPER_NOMEM;
  }
  return DIPPER_OK;
}

static size_t on_body(char *p, size_t size, size_t n, void *user) {
  dp_buf *b = user;
  dp_buf_put(b, p, size * n);
  return b->oom ? 0 : size * n;
}

int dp_kinesis_new(dipper *db, dp_diags *d, const dp_table_def *t, dp_kinesis **out) {
  *out = NULL;
  dp_kinesis *kc = calloc(1, sizeof *kc);
  if (!kc) return DIPPER_NOMEM;
  kc->db = db;
  kc->diags = d;
  kc->table = t;
  kc->stream = dp_table_option(t, "stream", "");
  kc->rng = (uint64_t)dp_kinesis_now_ms() * 0x9E3779B97F4A7C15ull + (uintptr_t)kc;
  const char *region = dp_table_option(t, "aws.region", NULL);
  if (!region || !*region) region = getenv("AWS_REGION");
  if (!region || !*region) {
    dp_kinesis_free(kc);
    return dp_error(d, DIPPER_OPTION, nowhere,
                    "table `%s`: no AWS region: set 'aws.region' (or AWS_REGION)", t->name);
  }
  snprintf(kc->sigv4, sizeof kc->sigv4, "aws:amz:%s:kinesis", region);
  const char *ep = dp_table_option(t, "aws.endpoint", NULL);
  char dflt[160];
  snprintf(dflt, sizeof dflt, "https://kinesis.%s.amazonaws.com", region);
  kc->url = strdup(ep && *ep ? ep : dflt);
  kc->arena = dp_arena_new(0);
  if (!kc->url || !kc->arena) {
    dp_kinesis_free(kc);
    return DIPPER_NOMEM;
  }
  int rc = credentials(kc, t);
  const dp_field ecols[] = {{"__type", dp_type_of(DP_T_STRING)},
                            {"message", dp_type_of(DP_T_STRING)}};
  if (rc == DIPPER_OK) rc = dp_kin_json_open(&kc->err_json, kc->arena, 2, ecols);
  pthread_once(&curl_once, curl_init);
  if (rc == DIPPER_OK && (curl_init_rc != CURLE_OK || !(kc->curl = curl_easy_init()) ||
                          !(kc->multi = curl_multi_init())))
    rc = dp_kinesis_error(kc, DIPPER_INTERNAL, "libcurl could not start");
  if (rc != DIPPER_OK) {
    dp_kinesis_free(kc);
    return rc;
  }
  CURL *c = kc->curl;
  curl_easy_setopt(c, CURLOPT_URL, kc->url);
  curl_easy_setopt(c, CURLOPT_AWS_SIGV4, kc->sigv4);
  curl_easy_setopt(c, CURLOPT_USERNAME, kc->access_key);
  curl_easy_setopt(c, CURLOPT_PASSWORD, kc->secret_key);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &kc->answer);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)DP_KINESIS_CALL_TIMEOUT_MS);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  *out = kc;
  return DIPPER_OK;
}

static void wipe(char *s) {
  if (s) memset(s, 0, strlen(s));
  free(s);
}

void dp_kinesis_free(dp_kinesis *kc) {
  if (!kc) return;
  if (kc->curl) curl_easy_cleanup(kc->curl);
  if (kc->multi) curl_multi_cleanup(kc->multi);
  dp_kin_json_close(&kc->err_json);
  if (kc->arena) dp_arena_free(kc->arena);
  dp_buf_free(&kc->answer);
  free(kc->url);
  free(kc->access_key);
  wipe(kc->secret_key);
  wipe(kc->token_header);
  free(kc);
}

/* What an error answer says: its __type (less any "namespace#"), message. */
static void classify(dp_kinesis *kc) {
  kc->err_type[0] = kc->err_msg[0] = '\0';
  dp_format_error fe;
  size_t n = 0;
  const char *body = dp_kinesis_answer(kc, &n);
  if (n > 0 && dp_kin_json_parse(&kc->err_json, body, n, &fe) == DIPPER_OK) {
    size_t tl = 0, ml = 0;
    const char *ty = dp_kin_str(kc->err_json.row->cols[0], 0, &tl);
    const char *msg = dp_kin_str(kc->err_json.row->cols[1], 0, &ml);
    if (ty) {
      const char *hash = memchr(ty, '#', tl);
      if (hash) {
        tl -= (size_t)(hash + 1 - ty);
        ty = hash + 1;
      }
      snprintf(kc->err_type, sizeof kc->err_type, "%.*s", (int)tl, ty);
    }
    if (msg) snprintf(kc->err_msg, sizeof kc->err_msg, "%.*s", (int)ml, msg);
  } else if (n > 0) {
    snprintf(kc->err_msg, sizeof kc->err_msg, "%.200s", body);
  }
  const char *t = kc->err_type;
  if (!strcmp(t, "ProvisionedThroughputExceededException") ||
      !strcmp(t, "LimitExceededException") || !strcmp(t, "ThrottlingException") ||
      kc->status == 429)
    kc->err = KIN_THROTTLED;
  else if (!strcmp(t, "ExpiredIteratorException"))
    kc->err = KIN_EXPIRED;
  else if (!strcmp(t, "ResourceNotFoundException"))
    kc->err = KIN_NOT_FOUND;
  else if (kc->status >= 500 || !strcmp(t, "InternalFailure") ||
           !strcmp(t, "ServiceUnavailable"))
    kc->err = KIN_TRANSIENT;
  else
    kc->err = KIN_FATAL;
}

/* The transfer, through the multi handle in slices of at most 100 ms, so
** that dipper_interrupt ends it within about that (an easy handle's progress
** callback comes only once a second while a server keeps quiet). */
static CURLcode perform(dp_kinesis *kc) {
  if (curl_multi_add_handle(kc->multi, kc->curl) != CURLM_OK) return CURLE_FAILED_INIT;
  CURLcode cc = CURLE_OK;
  for (int running = 1; running;) {
    if (curl_multi_perform(kc->multi, &running) != CURLM_OK) {
      cc = CURLE_FAILED_INIT;
      break;
    }
    if (!running) break;
    if (dp_session_interrupted(kc->db)) {
      cc = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    curl_multi_poll(kc->multi, NULL, 0, 100, NULL);
  }
  if (cc == CURLE_OK) {
    int left = 0;
    for (CURLMsg *m; (m = curl_multi_info_read(kc->multi, &left)) != NULL;)
      if (m->msg == CURLMSG_DONE && m->easy_handle == kc->curl) cc = m->data.result;
  }
  curl_multi_remove_handle(kc->multi, kc->curl);
  return cc;
}

/* One attempt. */
static int post(dp_kinesis *kc, const char *action, const char *body, size_t n) {
  char target[96];
  snprintf(target, sizeof target, "X-Amz-Target: Kinesis_20131202.%s", action);
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-amz-json-1.1");
  struct curl_slist *h2 = h ? curl_slist_append(h, target) : NULL;
  /* No "Expect:" to turn 100-continue off: libcurl 7.88 lists a header it
  ** does not send in the signature's SignedHeaders, and AWS refuses it. */
  struct curl_slist *hl = h2 && kc->token_header ? curl_slist_append(h2, kc->token_header) : h2;
  if (!hl) {
    curl_slist_free_all(h);
    return DIPPER_NOMEM;
  }
  kc->answer.len = 0;
  kc->answer.oom = false;
  kc->status = 0;
  curl_easy_setopt(kc->curl, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(kc->curl, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(kc->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
  CURLcode cc = perform(kc);
  curl_easy_setopt(kc->curl, CURLOPT_HTTPHEADER, NULL);
  curl_slist_free_all(hl);
  dp_buf_cstr(&kc->answer);
  if (kc->answer.oom) return DIPPER_NOMEM;
  if (cc != CURLE_OK) {
    kc->err = cc == CURLE_ABORTED_BY_CALLBACK ? KIN_INTERRUPTED : KIN_TRANSIENT;
    kc->err_type[0] = '\0';
    snprintf(kc->err_msg, sizeof kc->err_msg, "%s", curl_easy_strerror(cc));
    return kc->err == KIN_INTERRUPTED ? DIPPER_INTERRUPTED : DIPPER_CONNECT;
  }
  curl_easy_getinfo(kc->curl, CURLINFO_RESPONSE_CODE, &kc->status);
  if (kc->status == 200) {
    kc->err = KIN_OK;
    return DIPPER_OK;
  }
  classify(kc);
  return DIPPER_REMOTE;
}

int dp_kinesis_call(dp_kinesis *kc, const char *action, const char *body, size_t n,
                    const dp_kin_backoff *b) {
  for (int attempt = 0;; attempt++) {
    int rc = post(kc, action, body, n);
    if (rc == DIPPER_OK || rc == DIPPER_NOMEM || rc == DIPPER_INTERRUPTED) return rc;
    if (kc->err != KIN_THROTTLED && kc->err != KIN_TRANSIENT) return rc;
    if (attempt >= b->max_retries) return rc;
    int64_t wait = dp_kinesis_backoff_ms(b, attempt);
    kc->rng ^= kc->rng << 13, kc->rng ^= kc->rng >> 7, kc->rng ^= kc->rng << 17;
    wait = wait / 2 + (int64_t)(kc->rng % (uint64_t)(wait / 2 + 1)); /* jitter */
    if (!dp_kinesis_sleep(kc->db, wait)) {
      kc->err = KIN_INTERRUPTED;
      return DIPPER_INTERRUPTED;
    }
  }
}
