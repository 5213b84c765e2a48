/*
** grpc_test.c — the gRPC transport (src/spark/grpc.c) against the real Spark
** Connect server on 127.0.0.1:15002 (DIPPER_SPARK_PORT overrides the port),
** through tests/spark/tls_proxy.py for TLS and the bearer token, and against
** a scripted HTTP/2 peer in a child process for what Spark never does
** (compressed messages, HTTP errors, GOAWAY, a peer that hangs up).
**
** Requests are built with the generated protobuf-c code of Spark's protos.
*/
#include "spark/grpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dipper.h"
#include "spark/connect/base.pb-c.h"
#include "test.h"

#define CONFIG "/spark.connect.SparkConnectService/Config"
#define EXECUTE "/spark.connect.SparkConnectService/ExecutePlan"

static int spark_port(void) {
  const char *p = getenv("DIPPER_SPARK_PORT");
  return p && *p ? atoi(p) : 15002;
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A version-4 UUID from /dev/urandom. */
static void uuid4(char out[37]) {
  uint8_t b[16] = {0};
  FILE *f = fopen("/dev/urandom", "rb");
  CHECK(f != NULL);
  if (f) {
    CHECK_EQ(fread(b, 1, sizeof b, f), sizeof b);
    fclose(f);
  }
  b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
  b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
  static const char hex[] = "0123456789abcdef";
  int o = 0;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = hex[b[i] >> 4];
    out[o++] = hex[b[i] & 15];
  }
  out[o] = '\0';
}

static void reset(dp_buf *b) {
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

static dp_grpc *open_conn(const char *host, int port, dp_buf *err) {
  dp_grpc_opts o = {.host = host, .port = port};
  dp_grpc *g = NULL;
  int rc = dp_grpc_connect(&g, &o, err);
  if (rc) fprintf(stderr, "connect: %s\n", dp_buf_cstr(err));
  CHECK_EQ(rc, DIPPER_OK);
  return g;
}

/* A serialized ConfigRequest that gets `key`; the caller frees. */
static uint8_t *config_get_request(const char *session, const char *key, size_t *len) {
  Spark__Connect__UserContext uc;
  spark__connect__user_context__init(&uc);
  uc.user_id = (char *)(uintptr_t)"dipper-test";
  Spark__Connect__ConfigRequest__Get get;
  spark__connect__config_request__get__init(&get);
  char *keys[1] = {(char *)(uintptr_t)key};
  get.n_keys = 1;
  get.keys = keys;
  Spark__Connect__ConfigRequest__Operation op;
  spark__connect__config_request__operation__init(&op);
  op.op_type_case = SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_GET;
  op.get = &get;
  Spark__Connect__ConfigRequest req;
  spark__connect__config_request__init(&req);
  req.session_id = (char *)(uintptr_t)session;
  req.user_context = &uc;
  req.operation = &op;
  req._client_type_case = SPARK__CONNECT__CONFIG_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
  req.client_type = (char *)(uintptr_t)"dipper/" DIPPER_VERSION " grpc_test";
  *len = spark__connect__config_request__get_packed_size(&req);
  uint8_t *buf = malloc(*len ? *len : 1);
  if (buf) spark__connect__config_request__pack(&req, buf);
  return buf;
}

/* Config get through a unary call: the value (malloc'd) or NULL. */
static char *config_get(dp_grpc *g, const char *session, const char *key, dp_buf *err) {
  size_t len;
  uint8_t *req = config_get_request(session, key, &len);
  dp_buf resp = DP_BUF_INIT;
  dp_grpc_status st;
  int rc = dp_grpc_unary(g, CONFIG, req, len, 30000, &resp, &st, err);
  free(req);
  char *value = NULL;
  if (rc != DIPPER_OK) {
    fprintf(stderr, "Config: %s\n", dp_buf_cstr(err));
  } else {
    CHECK_EQ(st.code, 0);
    Spark__Connect__ConfigResponse *r =
        spark__connect__config_response__unpack(NULL, resp.len, (const uint8_t *)resp.data);
    CHECK(r != NULL);
    if (r && r->n_pairs == 1 && r->pairs[0]->_value_case == SPARK__CONNECT__KEY_VALUE___VALUE_VALUE)
      value = strdup(r->pairs[0]->value);
    if (r) spark__connect__config_response__free_unpacked(r, NULL);
  }
  dp_grpc_status_free(&st);
  dp_buf_free(&resp);
  return value;
}

/* The server's version through AnalyzePlan (spark_version): malloc'd or NULL. */
static char *version_get(dp_grpc *g, const char *session, dp_buf *err) {
  Spark__Connect__UserContext uc;
  spark__connect__user_context__init(&uc);
  uc.user_id = (char *)(uintptr_t)"dipper-test";
  Spark__Connect__AnalyzePlanRequest__SparkVersion sv;
  spark__connect__analyze_plan_request__spark_version__init(&sv);
  Spark__Connect__AnalyzePlanRequest req;
  spark__connect__analyze_plan_request__init(&req);
  req.session_id = (char *)(uintptr_t)session;
  req.user_context = &uc;
  req.analyze_case = SPARK__CONNECT__ANALYZE_PLAN_REQUEST__ANALYZE_SPARK_VERSION;
  req.spark_version = &sv;
  req._client_type_case = SPARK__CONNECT__ANALYZE_PLAN_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
  req.client_type = (char *)(uintptr_t)"dipper/" DIPPER_VERSION " grpc_test";
  size_t len = spark__connect__analyze_plan_request__get_packed_size(&req);
  uint8_t *buf = malloc(len);
  CHECK(buf != NULL);
  if (!buf) return NULL;
  spark__connect__analyze_plan_request__pack(&req, buf);
  dp_buf resp = DP_BUF_INIT;
  int rc = dp_grpc_unary(g, "/spark.connect.SparkConnectService/AnalyzePlan", buf, len, 30000,
                         &resp, NULL, err);
  free(buf);
  char *v = NULL;
  if (rc) {
    fprintf(stderr, "AnalyzePlan: %s\n", dp_buf_cstr(err));
  } else {
    Spark__Connect__AnalyzePlanResponse *r =
        spark__connect__analyze_plan_response__unpack(NULL, resp.len, (const uint8_t *)resp.data);
    CHECK(r != NULL);
    if (r && r->result_case == SPARK__CONNECT__ANALYZE_PLAN_RESPONSE__RESULT_SPARK_VERSION)
      v = strdup(r->spark_version->version);
    if (r) spark__connect__analyze_plan_response__free_unpacked(r, NULL);
  }
  dp_buf_free(&resp);
  return v;
}

/* Config set key=value (one pair) through a unary call. */
static int config_set(dp_grpc *g, const char *session, const char *key, const char *value,
                      dp_buf *err) {
  Spark__Connect__UserContext uc;
  spark__connect__user_context__init(&uc);
  uc.user_id = (char *)(uintptr_t)"dipper-test";
  Spark__Connect__KeyValue kv;
  spark__connect__key_value__init(&kv);
  kv.key = (char *)(uintptr_t)key;
  kv._value_case = SPARK__CONNECT__KEY_VALUE___VALUE_VALUE;
  kv.value = (char *)(uintptr_t)value;
  Spark__Connect__KeyValue *pairs[1] = {&kv};
  Spark__Connect__ConfigRequest__Set set;
  spark__connect__config_request__set__init(&set);
  set.n_pairs = 1;
  set.pairs = pairs;
  Spark__Connect__ConfigRequest__Operation op;
  spark__connect__config_request__operation__init(&op);
  op.op_type_case = SPARK__CONNECT__CONFIG_REQUEST__OPERATION__OP_TYPE_SET;
  op.set = &set;
  Spark__Connect__ConfigRequest req;
  spark__connect__config_request__init(&req);
  req.session_id = (char *)(uintptr_t)session;
  req.user_context = &uc;
  req.operation = &op;
  size_t len = spark__connect__config_request__get_packed_size(&req);
  uint8_t *buf = malloc(len);
  CHECK(buf != NULL);
  if (!buf) return DIPPER_NOMEM;
  spark__connect__config_request__pack(&req, buf);
  dp_buf resp = DP_BUF_INIT;
  int rc = dp_grpc_unary(g, CONFIG, buf, len, 30000, &resp, NULL, err);
  free(buf);
  dp_buf_free(&resp);
  return rc;
}

/* A serialized ExecutePlanRequest of spark.range(0, n), reattachable; with
** sum_it, SELECT sum(id) over it instead. */
static uint8_t *range_request(const char *session, int64_t n, bool sum_it, size_t *len) {
  Spark__Connect__UserContext uc;
  spark__connect__user_context__init(&uc);
  uc.user_id = (char *)(uintptr_t)"dipper-test";
  Spark__Connect__Range range;
  spark__connect__range__init(&range);
  range._start_case = SPARK__CONNECT__RANGE___START_START;
  range.start = 0;
  range.end = n;
  range.step = 1;
  Spark__Connect__Relation rel;
  spark__connect__relation__init(&rel);
  rel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_RANGE;
  rel.range = &range;

  Spark__Connect__Expression__UnresolvedAttribute attr;
  spark__connect__expression__unresolved_attribute__init(&attr);
  attr.unparsed_identifier = (char *)(uintptr_t)"id";
  Spark__Connect__Expression id;
  spark__connect__expression__init(&id);
  id.expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE;
  id.unresolved_attribute = &attr;
  Spark__Connect__Expression *args[1] = {&id};
  Spark__Connect__Expression__UnresolvedFunction fn;
  spark__connect__expression__unresolved_function__init(&fn);
  fn.function_name = (char *)(uintptr_t)"sum";
  fn.n_arguments = 1;
  fn.arguments = args;
  Spark__Connect__Expression sum;
  spark__connect__expression__init(&sum);
  sum.expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION;
  sum.unresolved_function = &fn;
  Spark__Connect__Expression *aggs[1] = {&sum};
  Spark__Connect__Aggregate agg;
  spark__connect__aggregate__init(&agg);
  agg.input = &rel;
  agg.group_type = SPARK__CONNECT__AGGREGATE__GROUP_TYPE__GROUP_TYPE_GROUPBY;
  agg.n_aggregate_expressions = 1;
  agg.aggregate_expressions = aggs;
  Spark__Connect__Relation aggrel;
  spark__connect__relation__init(&aggrel);
  aggrel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_AGGREGATE;
  aggrel.aggregate = &agg;

  Spark__Connect__Plan plan;
  spark__connect__plan__init(&plan);
  plan.op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_ROOT;
  plan.root = sum_it ? &aggrel : &rel;
  Spark__Connect__ReattachOptions ro;
  spark__connect__reattach_options__init(&ro);
  ro.reattachable = 1;
  Spark__Connect__ExecutePlanRequest__RequestOption opt;
  spark__connect__execute_plan_request__request_option__init(&opt);
  opt.request_option_case =
      SPARK__CONNECT__EXECUTE_PLAN_REQUEST__REQUEST_OPTION__REQUEST_OPTION_REATTACH_OPTIONS;
  opt.reattach_options = &ro;
  Spark__Connect__ExecutePlanRequest__RequestOption *opts[1] = {&opt};
  Spark__Connect__ExecutePlanRequest req;
  spark__connect__execute_plan_request__init(&req);
  req.session_id = (char *)(uintptr_t)session;
  req.user_context = &uc;
  req.plan = &plan;
  req.n_request_options = 1;
  req.request_options = opts;
  req._client_type_case = SPARK__CONNECT__EXECUTE_PLAN_REQUEST___CLIENT_TYPE_CLIENT_TYPE;
  req.client_type = (char *)(uintptr_t)"dipper/" DIPPER_VERSION " grpc_test";
  *len = spark__connect__execute_plan_request__get_packed_size(&req);
  uint8_t *buf = malloc(*len);
  if (buf) spark__connect__execute_plan_request__pack(&req, buf);
  return buf;
}

static dp_grpc_call *open_range(dp_grpc *g, const char *session, int64_t n, bool sum_it,
                                int64_t deadline_ms, dp_buf *err) {
  size_t len;
  uint8_t *req = range_request(session, n, sum_it, &len);
  dp_grpc_call *c = NULL;
  int rc = dp_grpc_stream_open(g, EXECUTE, req, len, deadline_ms, &c, err);
  free(req);
  CHECK_EQ(rc, DIPPER_OK);
  return c;
}

/* Read a stream to its end: the rows of its arrow batches, whether a
** result_complete came, and the end code. */
typedef struct range_result { int64_t rows; int messages; bool complete; int rc; } range_result;

static range_result drain(dp_grpc_call *c, dp_grpc_status *st, dp_buf *err) {
  range_result r = {0, 0, false, 0};
  const uint8_t *msg;
  size_t len;
  int k;
  while ((k = dp_grpc_stream_next(c, 0, &msg, &len, st, err)) == 1) {
    r.messages++;
    Spark__Connect__ExecutePlanResponse *resp =
        spark__connect__execute_plan_response__unpack(NULL, len, msg);
    CHECK(resp != NULL);
    if (!resp) continue;
    if (resp->response_type_case == SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH)
      r.rows += resp->arrow_batch->row_count;
    if (resp->response_type_case ==
        SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_RESULT_COMPLETE)
      r.complete = true;
    spark__connect__execute_plan_response__free_unpacked(resp, NULL);
  }
  r.rc = k;
  return r;
}

/* ---- against Spark ---- */

TEST(unary_config_version) {
  dp_buf err = DP_BUF_INIT;
  dp_grpc *g = open_conn("127.0.0.1", spark_port(), &err);
  if (!g) return;
  char session[37];
  uuid4(session);
  char *v = version_get(g, session, &err);
  CHECK_STR(v, "4.1.1");
  free(v);
  /* Config: a session config set, then read back */
  char value[48];
  snprintf(value, sizeof value, "v-%s", session);
  CHECK_EQ(config_set(g, session, "dipper.grpc_test.key", value, &err), DIPPER_OK);
  v = config_get(g, session, "dipper.grpc_test.key", &err);
  CHECK_STR(v, value);
  free(v);
  CHECK(dp_grpc_usable(g));
  char peer[64];
  snprintf(peer, sizeof peer, "127.0.0.1:%d", spark_port());
  CHECK_STR(dp_grpc_peer(g), peer);
  dp_grpc_close(g);
  dp_buf_free(&err);
}

TEST(stream_range_to_the_end) {
  dp_buf err = DP_BUF_INIT;
  dp_grpc *g = open_conn("127.0.0.1", spark_port(), &err);
  if (!g) return;
  char session[37];
  uuid4(session);
  dp_grpc_call *c = open_range(g, session, 100000, false, 60000, &err);
  dp_grpc_status st = {0};
  range_result r = drain(c, &st, &err);
  if (r.rc) fprintf(stderr, "stream: %s\n", dp_buf_cstr(&err));
  CHECK_EQ(r.rc, 0);
  CHECK_EQ(r.rows, 100000);
  CHECK(r.complete);
  CHECK_EQ(st.code, 0);
  /* after the end, next keeps saying so */
  const uint8_t *msg;
  size_t len;
  CHECK_EQ(dp_grpc_stream_next(c, 0, &msg, &len, NULL, &err), 0);
  dp_grpc_status_free(&st);
  dp_grpc_stream_free(c);
  dp_grpc_close(g);
  dp_buf_free(&err);
}

TEST(invalid_session_is_remote_error) {
  dp_buf err = DP_BUF_INIT;
  dp_grpc *g = open_conn("127.0.0.1", spark_port(), &err);
  if (!g) return;
  dp_grpc_call *c = open_range(g, "not-a-uuid", 10, false, 30000, &err);
  dp_grpc_status st = {0};
  range_result r = drain(c, &st, &err);
  CHECK_EQ(r.rc, -DIPPER_REMOTE);
  CHECK(st.code > 0);
  CHECK_CONTAINS(st.message, "INVALID_HANDLE");
  CHECK(st.details != NULL && st.details_len > 0); /* a google.rpc.Status with ErrorInfo */
  CHECK_CONTAINS(dp_buf_cstr(&err), "INVALID_HANDLE");
  CHECK_CONTAINS(dp_buf_cstr(&err), EXECUTE);
  dp_grpc_status_free(&st);
  dp_grpc_stream_free(c);
  /* the connection survives a failed call */
  char session[37];
  uuid4(session);
  char *v = version_get(g, session, &err);
  CHECK_STR(v, "4.1.1");
  free(v);
  dp_grpc_close(g);
  dp_buf_free(&err);
}

TEST(connection_refused_names_the_address) {
  dp_buf err = DP_BUF_INIT;
  dp_grpc_opts o = {.host = "127.0.0.1", .port = 1};
  dp_grpc *g = (dp_grpc *)&o; /* must be set to NULL */
  CHECK_EQ(dp_grpc_connect(&g, &o, &err), DIPPER_CONNECT);
  CHECK(g == NULL);
  CHECK_STR(dp_buf_cstr(&err), "cannot reach Spark Connect at 127.0.0.1:1: connection refused");
  dp_buf_free(&err);
}

TEST(unknown_host) {
  dp_buf err = DP_BUF_INIT;
  dp_grpc_opts o = {.host = "no-such-host.invalid", .port = 15002};
  dp_grpc *g = NULL;
  CHECK_EQ(dp_grpc_connect(&g, &o, &err), DIPPER_CONNECT);
  CHECK_CONTAINS(dp_buf_cstr(&err), "cannot reach Spark Connect at no-such-host.invalid:15002: ");
  dp_buf_free(&err);
}

TEST(message_limit_both_ways) {
  dp_buf err = DP_BUF_INIT;
  dp_grpc_opts o = {.host = "127.0.0.1", .port = spark_port(), .max_message = 1024};
  dp_grpc *g = NULL;
  CHECK_EQ(dp_grpc_connect(&g, &o, &err), DIPPER_OK);
  if (!g) return;
  char session[37];
  uuid4(session);
  dp_grpc_call *c = open_range(g, session, 100000, false, 60000, &err);
  range_result r = drain(c, NULL, &err);
  CHECK_EQ(r.rc, -DIPPER_LIMIT);
  CHECK_CONTAINS(dp_buf_cstr(&err), "above the limit of 1024 bytes");
  CHECK_CONTAINS(dp_buf_cstr(&err), "grpc_max_message_size");
  dp_grpc_stream_free(c);
  /* a request above the limit is not sent */
  uint8_t big[2048] = {0};
  dp_buf resp = DP_BUF_INIT;
  reset(&err);
  CHECK_EQ(dp_grpc_unary(g, CONFIG, big, sizeof big, 0, &resp, NULL, &err), DIPPER_LIMIT);
  CHECK_CONTAINS(dp_buf_cstr(&err), "2048 bytes is above the message limit of 1024 bytes");
  /* and the connection is still good */
  char *v = version_get(g, session, &err);
  CHECK_STR(v, "4.1.1");
  free(v);
  dp_buf_free(&resp);
  dp_grpc_close(g);
  dp_buf_free(&err);
}

TEST(deadline_enforced_locally) {
  dp_buf err = DP_BUF_INIT;
  dp_grpc *g = open_conn("127.0.0.1", spark_port(), &err);
  if (!g) return;
  char session[37];
  uuid4(session);
  int64_t t0 = mono_ms();
  dp_grpc_call *c = open_range(g, session, 1000000000, true, 1, &err);
  range_result r = drain(c, NULL, &err);
  int64_t took = mono_ms() - t0;
  CHECK_EQ(r.rc, -DIPPER_TIMEOUT);
  CHECK_CONTAINS(dp_buf_cstr(&err), "the deadline of 1 ms for " EXECUTE);
  CHECK(took < 1000);
  dp_grpc_stream_free(c);
  /* one wait bounded by timeout_ms: the call stays usable */
  c = open_range(g, session, 1000000000, true, 0, &err);
  const uint8_t *msg;
  size_t len;
  reset(&err);
  /* progress messages may come first: read until a 20 ms silence */
  int k = 1;
  for (int i = 0; i < 1000 && k == 1; i++) {
    t0 = mono_ms();
    k = dp_grpc_stream_next(c, 20, &msg, &len, NULL, &err);
    took = mono_ms() - t0;
  }
  CHECK_EQ(k, -DIPPER_TIMEOUT);
  CHECK(took < 1000);
  CHECK_CONTAINS(dp_buf_cstr(&err), "within 20 ms");
  dp_grpc_stream_free(c); /* cancels the query */
  char *v = version_get(g, session, &err);
  CHECK_STR(v, "4.1.1");
  free(v);
  dp_grpc_close(g);
  dp_buf_free(&err);
}

TEST(two_calls_on_one_connection) {
  dp_buf err = DP_BUF_INIT;
  dp_grpc *g = open_conn("127.0.0.1", spark_port(), &err);
  if (!g) return;
  char session[37];
  uuid4(session);
  dp_grpc_call *a = open_range(g, session, 100000, false, 60000, &err);
  dp_grpc_call *b = open_range(g, session, 50000, false, 60000, &err);
  const uint8_t *msg;
  size_t len;
  /* one message of the first, then a unary call while both streams are open */
  CHECK_EQ(dp_grpc_stream_next(a, 0, &msg, &len, NULL, &err), 1);
  Spark__Connect__ExecutePlanResponse *first =
      spark__connect__execute_plan_response__unpack(NULL, len, msg);
  CHECK(first != NULL);
  int64_t rows_a = 0;
  if (first && first->response_type_case ==
                   SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH)
    rows_a = first->arrow_batch->row_count;
  if (first) spark__connect__execute_plan_response__free_unpacked(first, NULL);
  /* the message stays readable while other calls pump (and grow a's buffer) */
  uint8_t *copy = malloc(len);
  CHECK(copy != NULL);
  if (copy) memcpy(copy, msg, len);
  char *v = version_get(g, session, &err);
  CHECK_STR(v, "4.1.1");
  free(v);
  range_result rb = drain(b, NULL, &err);
  CHECK(copy && memcmp(copy, msg, len) == 0); /* ASan reports a freed or moved buffer */
  free(copy);
  range_result ra = drain(a, NULL, &err);
  CHECK_EQ(rb.rc, 0);
  CHECK_EQ(rb.rows, 50000);
  CHECK(rb.complete);
  CHECK_EQ(ra.rc, 0);
  CHECK_EQ(ra.rows + rows_a, 100000);
  dp_grpc_stream_free(a);
  dp_grpc_stream_free(b);
  dp_grpc_close(g);
  dp_buf_free(&err);
}

/* ---- a scripted HTTP/2 peer ---- */

/* Frames the peer sends (stream 1 = the client's first call). */
static size_t frame(uint8_t *out, uint8_t type, uint8_t flags, uint32_t sid, const void *payload,
                    size_t n) {
  out[0] = (uint8_t)(n >> 16);
  out[1] = (uint8_t)(n >> 8);
  out[2] = (uint8_t)n;
  out[3] = type;
  out[4] = flags;
  out[5] = (uint8_t)(sid >> 24);
  out[6] = (uint8_t)(sid >> 16);
  out[7] = (uint8_t)(sid >> 8);
  out[8] = (uint8_t)sid;
  if (n) memcpy(out + 9, payload, n);
  return 9 + n;
}

/* An HPACK "literal without indexing, new name" field (no Huffman). */
static size_t hpack_lit(uint8_t *out, const char *name, const char *value) {
  size_t nl = strlen(name), vl = strlen(value), o = 0;
  out[o++] = 0;
  out[o++] = (uint8_t)nl;
  memcpy(out + o, name, nl);
  o += nl;
  out[o++] = (uint8_t)vl;
  memcpy(out + o, value, vl);
  return o + vl;
}

typedef struct fake_peer { pid_t pid; int port; } fake_peer;

/* Read from the client until its HEADERS for stream 1 arrived. */
static void wait_request(int fd) {
  uint8_t buf[65536];
  size_t have = 0, pos = 24; /* the client preface */
  for (;;) {
    while (have >= pos + 9) {
      size_t len = (size_t)buf[pos] << 16 | (size_t)buf[pos + 1] << 8 | buf[pos + 2];
      if (buf[pos + 3] == 1) return; /* HEADERS */
      pos += 9 + len;
    }
    ssize_t n = read(fd, buf + have, sizeof buf - have);
    if (n <= 0) return;
    have += (size_t)n;
  }
}

/* Listen on a free port; the child answers one connection with SETTINGS,
** waits for the request, sends `script`, then closes at once (close_after)
** or waits for the client to hang up. */
static fake_peer fake_start(const uint8_t *script, size_t n, bool close_after) {
  fake_peer p = {-1, 0};
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0 &&
        getsockname(ls, (struct sockaddr *)&a, &al) == 0);
  p.port = ntohs(a.sin_port);
  fflush(NULL);
  p.pid = fork();
  if (p.pid == 0) {
    alarm(20); /* never outlive a broken test */
    int fd = accept(ls, NULL, NULL);
    uint8_t settings[9];
    size_t sl = frame(settings, 4, 0, 0, NULL, 0);
    if (write(fd, settings, sl) != (ssize_t)sl) _exit(1);
    wait_request(fd);
    if (n && write(fd, script, n) != (ssize_t)n) _exit(1);
    if (!close_after) {
      uint8_t sink[4096];
      while (read(fd, sink, sizeof sink) > 0) {
      }
    }
    _exit(0);
  }
  close(ls);
  return p;
}

static void fake_stop(fake_peer p) {
  if (p.pid > 0) {
    kill(p.pid, SIGKILL);
    waitpid(p.pid, NULL, 0);
  }
}

/* Run one unary call against a scripted peer. */
static int fake_unary(const uint8_t *script, size_t n, bool close_after, dp_grpc_status *st,
                      dp_buf *err, bool *usable) {
  fake_peer p = fake_start(script, n, close_after);
  dp_grpc_opts o = {.host = "127.0.0.1", .port = p.port, .connect_timeout_ms = 5000};
  dp_grpc *g = NULL;
  int rc = dp_grpc_connect(&g, &o, err);
  CHECK_EQ(rc, DIPPER_OK);
  if (g) {
    dp_buf resp = DP_BUF_INIT;
    rc = dp_grpc_unary(g, CONFIG, "x", 1, 5000, &resp, st, err);
    if (usable) *usable = dp_grpc_usable(g);
    dp_buf_free(&resp);
    dp_grpc_close(g);
  }
  fake_stop(p);
  return rc;
}

static size_t response_headers(uint8_t *out, uint8_t flags, const char *status,
                               const char *ctype) {
  uint8_t hb[256];
  size_t h = hpack_lit(hb, ":status", status);
  h += hpack_lit(hb + h, "content-type", ctype);
  return frame(out, 1, (uint8_t)(0x4 | flags), 1, hb, h); /* END_HEADERS */
}

TEST(peer_sends_compressed_message) {
  uint8_t s[512];
  size_t n = response_headers(s, 0, "200", "application/grpc");
  const uint8_t msg[] = {1, 0, 0, 0, 1, 'z'};
  n += frame(s + n, 0, 0, 1, msg, sizeof msg);
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(fake_unary(s, n, false, NULL, &err, NULL), DIPPER_PROTOCOL);
  CHECK_CONTAINS(dp_buf_cstr(&err), "compressed message");
  dp_buf_free(&err);
}

TEST(peer_trailers_only_status) {
  uint8_t hb[512];
  size_t h = hpack_lit(hb, ":status", "200");
  h += hpack_lit(hb + h, "content-type", "application/grpc");
  h += hpack_lit(hb + h, "grpc-status", "16");
  h += hpack_lit(hb + h, "grpc-message", "bad%20token%3A%20100%25");
  h += hpack_lit(hb + h, "grpc-status-details-bin", "CBASBWhlbGxv"); /* 08 10 12 05 "hello" */
  uint8_t s[600];
  size_t n = frame(s, 1, 0x4 | 0x1, 1, hb, h); /* END_HEADERS | END_STREAM */
  dp_buf err = DP_BUF_INIT;
  dp_grpc_status st;
  CHECK_EQ(fake_unary(s, n, false, &st, &err, NULL), DIPPER_REMOTE);
  CHECK_EQ(st.code, DP_GRPC_UNAUTHENTICATED);
  CHECK_STR(st.message, "bad token: 100%");
  CHECK_EQ(st.details_len, 9);
  CHECK(st.details && memcmp(st.details, "\x08\x10\x12\x05hello", 9) == 0);
  CHECK_CONTAINS(dp_buf_cstr(&err), "UNAUTHENTICATED (grpc-status 16): bad token: 100%");
  dp_grpc_status_free(&st);
  CHECK(st.message == NULL && st.details == NULL);
  dp_buf_free(&err);
}

TEST(peer_http_error) {
  uint8_t s[512];
  size_t n = response_headers(s, 0x1, "503", "text/plain");
  dp_buf err = DP_BUF_INIT;
  dp_grpc_status st;
  CHECK_EQ(fake_unary(s, n, false, &st, &err, NULL), DIPPER_REMOTE);
  CHECK_EQ(st.code, DP_GRPC_UNAVAILABLE);
  CHECK_CONTAINS(st.message, "HTTP status 503");
  dp_grpc_status_free(&st);
  /* a 200 that is not gRPC */
  n = response_headers(s, 0x1, "200", "text/html");
  reset(&err);
  CHECK_EQ(fake_unary(s, n, false, NULL, &err, NULL), DIPPER_PROTOCOL);
  CHECK_CONTAINS(dp_buf_cstr(&err), "content-type 'text/html', not application/grpc");
  dp_buf_free(&err);
}

TEST(peer_hangs_up_mid_call) {
  uint8_t s[512];
  size_t n = response_headers(s, 0, "200", "application/grpc");
  const uint8_t part[] = {0, 0, 0, 0, 100, 'a', 'b'}; /* a message cut short */
  n += frame(s + n, 0, 0, 1, part, sizeof part);
  dp_buf err = DP_BUF_INIT;
  bool usable = true;
  CHECK_EQ(fake_unary(s, n, true, NULL, &err, &usable), DIPPER_IO);
  /* a close with our request unread reaches us as a reset */
  CHECK(strstr(dp_buf_cstr(&err), "closed the connection") ||
        strstr(dp_buf_cstr(&err), "connection reset by peer"));
  CHECK_CONTAINS(dp_buf_cstr(&err), "127.0.0.1:");
  CHECK(!usable);
  dp_buf_free(&err);
}

TEST(peer_goaway) {
  uint8_t s[64];
  const uint8_t ga[8] = {0, 0, 0, 0, 0, 0, 0, 0}; /* last stream 0, NO_ERROR */
  size_t n = frame(s, 7, 0, 0, ga, sizeof ga);
  dp_buf err = DP_BUF_INIT;
  bool usable = true;
  int rc = fake_unary(s, n, false, NULL, &err, &usable);
  CHECK_EQ(rc, DIPPER_IO);
  CHECK(!usable);
  CHECK(err.len > 0);
  dp_buf_free(&err);
}

TEST(not_http2_peer) {
  /* a peer that answers with garbage instead of SETTINGS */
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0 &&
        getsockname(ls, (struct sockaddr *)&a, &al) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    int fd = accept(ls, NULL, NULL);
    const char junk[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    if (write(fd, junk, sizeof junk - 1) < 0) _exit(1);
    _exit(0);
  }
  close(ls);
  dp_grpc_opts o = {.host = "127.0.0.1", .port = ntohs(a.sin_port), .connect_timeout_ms = 5000};
  dp_grpc *g = NULL;
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(dp_grpc_connect(&g, &o, &err), DIPPER_CONNECT);
  CHECK_CONTAINS(dp_buf_cstr(&err), "does not speak HTTP/2");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  dp_buf_free(&err);
}

/* ---- TLS and the bearer token, through tests/spark/tls_proxy.py ---- */

typedef struct proxy { pid_t pid; int port; int in_fd; char dir[64]; } proxy;

/* Start the proxy with the Spark venv's python; port 0 on failure. */
static proxy proxy_start(const char *token) {
  proxy p = {-1, 0, -1, "/tmp/dipper-grpc-tls-XXXXXX"};
  CHECK(mkdtemp(p.dir) != NULL);
  char python[512] = {0};
  FILE *f = popen(DIPPER_SOURCE_DIR "/scripts/spark-local python", "r");
  CHECK(f != NULL);
  if (f) {
    if (!fgets(python, sizeof python, f)) python[0] = '\0';
    pclose(f);
  }
  python[strcspn(python, "\n")] = '\0';
  CHECK(python[0] != '\0');
  if (!python[0]) return p;
  int in[2], out[2];
  CHECK(pipe(in) == 0 && pipe(out) == 0);
  char upstream[32];
  snprintf(upstream, sizeof upstream, "127.0.0.1:%d", spark_port());
  fflush(NULL);
  p.pid = fork();
  if (p.pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    execl(python, python, DIPPER_SOURCE_DIR "/tests/spark/tls_proxy.py", p.dir, token, upstream,
          (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  p.in_fd = in[1]; /* closing it tells the proxy to exit */
  /* wait for "PORT n" */
  char line[64] = {0};
  size_t have = 0;
  int64_t until = mono_ms() + 60000;
  while (have < sizeof line - 1 && !strchr(line, '\n') && mono_ms() < until) {
    struct pollfd pfd = {.fd = out[0], .events = POLLIN};
    if (poll(&pfd, 1, 1000) <= 0) continue;
    ssize_t n = read(out[0], line + have, sizeof line - 1 - have);
    if (n <= 0) break;
    have += (size_t)n;
  }
  close(out[0]);
  if (strncmp(line, "PORT ", 5) == 0) p.port = atoi(line + 5);
  CHECK(p.port > 0);
  return p;
}

static void proxy_stop(proxy *p) {
  if (p->in_fd >= 0) close(p->in_fd);
  if (p->pid > 0) {
    kill(p->pid, SIGTERM);
    waitpid(p->pid, NULL, 0);
  }
  char path[128];
  snprintf(path, sizeof path, "%s/cert.pem", p->dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/key.pem", p->dir);
  unlink(path);
  rmdir(p->dir);
}

TEST(tls_and_token_through_proxy) {
  proxy p = proxy_start("s3cret-token");
  if (p.port <= 0) {
    proxy_stop(&p);
    return; /* the CHECKs above failed the test */
  }
  char ca[128];
  snprintf(ca, sizeof ca, "%s/cert.pem", p.dir);
  char session[37];
  uuid4(session);
  dp_buf err = DP_BUF_INIT;

  /* the right token, the test's certificate as the CA */
  dp_grpc_opts o = {.host = "127.0.0.1", .port = p.port, .tls = true, .token = "s3cret-token",
                    .ca_file = ca};
  dp_grpc *g = NULL;
  CHECK_EQ(dp_grpc_connect(&g, &o, &err), DIPPER_OK);
  if (g) {
    char *v = version_get(g, session, &err);
    CHECK_STR(v, "4.1.1");
    free(v);
    dp_grpc_call *c = open_range(g, session, 100000, false, 60000, &err);
    range_result r = drain(c, NULL, &err);
    CHECK_EQ(r.rc, 0);
    CHECK_EQ(r.rows, 100000);
    dp_grpc_stream_free(c);
    dp_grpc_close(g);
  }

  /* a wrong token */
  o.token = "wrong";
  reset(&err);
  CHECK_EQ(dp_grpc_connect(&g, &o, &err), DIPPER_OK);
  if (g) {
    size_t len;
    uint8_t *req = config_get_request(session, "spark.version", &len);
    dp_buf resp = DP_BUF_INIT;
    dp_grpc_status st;
    CHECK_EQ(dp_grpc_unary(g, CONFIG, req, len, 30000, &resp, &st, &err), DIPPER_REMOTE);
    CHECK_EQ(st.code, DP_GRPC_UNAUTHENTICATED);
    CHECK_CONTAINS(dp_buf_cstr(&err), "UNAUTHENTICATED");
    free(req);
    dp_grpc_status_free(&st);
    dp_buf_free(&resp);
    dp_grpc_close(g);
  }

  /* plaintext to the TLS port */
  dp_grpc_opts plain = {.host = "127.0.0.1", .port = p.port, .connect_timeout_ms = 5000};
  reset(&err);
  CHECK_EQ(dp_grpc_connect(&g, &plain, &err), DIPPER_CONNECT);
  CHECK(g == NULL);
  char where[64];
  snprintf(where, sizeof where, "cannot reach Spark Connect at 127.0.0.1:%d: ", p.port);
  CHECK_CONTAINS(dp_buf_cstr(&err), where);
  CHECK_CONTAINS(dp_buf_cstr(&err), "use_ssl=true");

  /* TLS checked against the system's CAs: the self-signed certificate fails */
  dp_grpc_opts sys = {.host = "127.0.0.1", .port = p.port, .tls = true, .token = "s3cret-token"};
  reset(&err);
  CHECK_EQ(dp_grpc_connect(&g, &sys, &err), DIPPER_CONNECT);
  CHECK(g == NULL);
  CHECK_CONTAINS(dp_buf_cstr(&err), where);
  CHECK_CONTAINS(dp_buf_cstr(&err), "certificate is not trusted");

  /* tls_no_verify skips the checks */
  sys.tls_no_verify = true;
  reset(&err);
  CHECK_EQ(dp_grpc_connect(&g, &sys, &err), DIPPER_OK);
  dp_grpc_close(g);

  proxy_stop(&p);
  dp_buf_free(&err);
}

int main(void) { return RUN_TESTS(); }
