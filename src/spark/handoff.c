/*
** handoff.c — the client side of dipper's Spark sink (handoff.h): the poll,
** read, ack and close calls, and where the sink's jar is.
**
** An external command's answer is an ExecutePlanResponse.sql_command_result
** whose relation is a LocalRelation: Arrow IPC of one string column, a row
** per string the runner returned (poll: none, or the batch id).
*/
#include "spark/handoff.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/arena.h"

/* Slack over a server-side wait before the client gives up on the call. */
#define CALL_SLACK_MS 30000

/* ---- the jar ---- */

static bool readable(const char *p) { return p && p[0] && access(p, R_OK) == 0; }

static int copy_path(char *path, size_t cap, const char *p, dp_buf *why) {
  if (strlen(p) >= cap) {
    dp_buf_printf(why, "the path of dipper's Spark sink jar is too long: %s", p);
    return DIPPER_IO;
  }
  memcpy(path, p, strlen(p) + 1);
  return DIPPER_OK;
}

int dp_handoff_jar(char *path, size_t cap, dp_buf *why) {
  if (cap) path[0] = '\0';
  const char *env = getenv("DIPPER_SPARK_HANDOFF_JAR");
  if (env && env[0]) {
    if (strcmp(env, "server") == 0) return DIPPER_OK;
    if (readable(env)) return copy_path(path, cap, env, why);
    dp_buf_printf(why,
                  "DIPPER_SPARK_HANDOFF_JAR names '%s', which cannot be read (%s): point it at "
                  "the jar scripts/spark-handoff-jar builds (" DP_HANDOFF_JAR_NAME
                  "), or set it to 'server' when the Spark server loads that jar itself",
                  env, strerror(errno));
    return DIPPER_IO;
  }
  const char *places[2] = {NULL, NULL};
#ifdef DIPPER_HANDOFF_JAR_BUILD
  places[0] = DIPPER_HANDOFF_JAR_BUILD;
#endif
#ifdef DIPPER_HANDOFF_JAR_INSTALLED
  places[1] = DIPPER_HANDOFF_JAR_INSTALLED;
#endif
  for (int i = 0; i < 2; i++)
    if (readable(places[i])) return copy_path(path, cap, places[i], why);
  dp_buf_printf(why,
                "a 'callback' table on Spark needs dipper's Spark sink, the jar " DP_HANDOFF_JAR_NAME
                ", which is not at %s%s%s: build it (cmake builds it when a JDK's javac is there, "
                "or run scripts/spark-handoff-jar OUT.jar), then set DIPPER_SPARK_HANDOFF_JAR to "
                "its path (or to 'server' when the Spark server loads it already, e.g. --jars)",
                places[0] ? places[0] : "(no build path)", places[1] ? " or " : "",
                places[1] ? places[1] : "");
  return DIPPER_IO;
}

/* ---- the calls ---- */

static int nomem(dp_sc_error *err) {
  if (err) {
    err->code = DIPPER_NOMEM;
    dp_buf_printf(&err->message, "out of memory talking to dipper's Spark sink");
  }
  return DIPPER_NOMEM;
}

static int protocol(dp_sc_error *err, const char *what) {
  if (err) {
    err->code = DIPPER_PROTOCOL;
    dp_buf_printf(&err->message, "dipper's Spark sink answered %s", what);
  }
  return DIPPER_PROTOCOL;
}

typedef struct kv {
  const char *k, *v;
} kv;

/* The answer of an external command: its strings' first row. */
typedef struct answer {
  bool got;
  int rc;
  char first[64]; /* "" when the runner returned no string */
  dp_buf why;
} answer;

/* The string at row 0 of a one-column (utf8 or large_utf8) struct array. */
static int first_string(const dp_arrow_batches *b, char *out, size_t cap) {
  out[0] = '\0';
  if (b->schema.n_children != 1) return DIPPER_PROTOCOL;
  const char *fmt = b->schema.children[0]->format;
  bool large = fmt && strcmp(fmt, "U") == 0;
  if (!fmt || (!large && strcmp(fmt, "u") != 0)) return DIPPER_PROTOCOL;
  for (int i = 0; i < b->n; i++) {
    const struct ArrowArray *col = b->arrays[i].n_children == 1 ? b->arrays[i].children[0] : NULL;
    if (!col || col->n_buffers != 3) return DIPPER_PROTOCOL;
    if (col->length < 1) continue;
    int64_t at = col->offset + b->arrays[i].offset;
    int64_t s, e;
    if (large) {
      const int64_t *off = col->buffers[1];
      s = off[at];
      e = off[at + 1];
    } else {
      const int32_t *off = col->buffers[1];
      s = off[at];
      e = off[at + 1];
    }
    if (s < 0 || e < s || (size_t)(e - s) >= cap) return DIPPER_PROTOCOL;
    memcpy(out, (const char *)col->buffers[2] + s, (size_t)(e - s));
    out[e - s] = '\0';
    return DIPPER_OK;
  }
  return DIPPER_OK;
}

static int on_answer(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  answer *a = user;
  if (r->response_type_case != SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_SQL_COMMAND_RESULT)
    return DIPPER_OK;
  const Spark__Connect__Relation *rel = r->sql_command_result ? r->sql_command_result->relation : NULL;
  const Spark__Connect__LocalRelation *lr =
      rel && rel->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_LOCAL_RELATION ? rel->local_relation
                                                                                    : NULL;
  a->got = true;
  if (!lr || lr->_data_case != SPARK__CONNECT__LOCAL_RELATION___DATA_DATA || lr->data.len == 0)
    return DIPPER_OK; /* no string */
  dp_arrow_batches b;
  a->rc = dp_arrow_ipc_decode(lr->data.data, lr->data.len, &b, &a->why);
  if (a->rc == DIPPER_OK) {
    a->rc = first_string(&b, a->first, sizeof a->first);
    dp_arrow_batches_free(&b);
  }
  return DIPPER_OK;
}

/* Run command `cmd` of the sink under key with the options kv[0..n). */
static int command(dp_sc *s, const char *cmd, const char *key, const kv *opts, int n,
                   int64_t deadline_ms, answer *a, dp_sc_error *err) {
  Spark__Connect__ExecuteExternalCommand__OptionsEntry e[4], *pe[4];
  if (n > 3) return nomem(err);
  Spark__Connect__ExecuteExternalCommand x;
  spark__connect__execute_external_command__init(&x);
  x.runner = (char *)(uintptr_t)DP_HANDOFF_CLASS;
  x.command = (char *)(uintptr_t)cmd;
  for (int i = 0; i <= n; i++) {
    spark__connect__execute_external_command__options_entry__init(&e[i]);
    e[i].key = (char *)(uintptr_t)(i == 0 ? "key" : opts[i - 1].k);
    e[i].value = (char *)(uintptr_t)(i == 0 ? key : opts[i - 1].v);
    pe[i] = &e[i];
  }
  x.n_options = (size_t)n + 1;
  x.options = pe;
  Spark__Connect__Command c;
  spark__connect__command__init(&c);
  c.command_type_case = SPARK__CONNECT__COMMAND__COMMAND_TYPE_EXECUTE_EXTERNAL_COMMAND;
  c.execute_external_command = &x;
  Spark__Connect__Plan plan;
  spark__connect__plan__init(&plan);
  plan.op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_COMMAND;
  plan.command = &c;
  memset(a, 0, sizeof *a);
  a->why = (dp_buf)DP_BUF_INIT;
  int rc = dp_sc_execute(s, &plan, on_answer, a, deadline_ms, err);
  if (rc == DIPPER_OK && a->rc != DIPPER_OK) {
    if (err) {
      err->code = a->rc;
      dp_buf_printf(&err->message, "dipper's Spark sink answered '%s' with broken Arrow data: %s",
                    cmd, dp_buf_cstr(&a->why));
    }
    rc = a->rc;
  } else if (rc == DIPPER_OK && !a->got) {
    rc = protocol(err, "a command without its result");
  }
  dp_buf_free(&a->why);
  return rc;
}

int dp_handoff_poll(dp_sc *s, const char *key, int64_t wait_ms, int64_t *batch,
                    dp_sc_error *err) {
  *batch = -1;
  char w[24];
  snprintf(w, sizeof w, "%" PRId64, wait_ms > 0 ? wait_ms : 0);
  kv o[1] = {{"wait_ms", w}};
  answer a;
  int rc = command(s, "poll", key, o, 1, (wait_ms > 0 ? wait_ms : 0) + CALL_SLACK_MS, &a, err);
  if (rc != DIPPER_OK || !a.first[0]) return rc;
  char *end = NULL;
  errno = 0;
  long long id = strtoll(a.first, &end, 10);
  if (errno || !end || *end || id < 0) return protocol(err, "a poll with a batch id that is not one");
  *batch = id;
  return DIPPER_OK;
}

int dp_handoff_read(dp_sc *s, const char *key, int64_t batch, uint64_t nonce,
                    dp_arrow_batches *out, dp_sc_error *err) {
  memset(out, 0, sizeof *out);
  char b[24], n[24];
  snprintf(b, sizeof b, "%" PRId64, batch);
  snprintf(n, sizeof n, "%" PRIu64, nonce);
  Spark__Connect__Read__DataSource__OptionsEntry e[3], *pe[3];
  const char *kvs[6] = {"key", key, "batch", b, "nonce", n};
  for (int i = 0; i < 3; i++) {
    spark__connect__read__data_source__options_entry__init(&e[i]);
    e[i].key = (char *)(uintptr_t)kvs[2 * i];
    e[i].value = (char *)(uintptr_t)kvs[2 * i + 1];
    pe[i] = &e[i];
  }
  Spark__Connect__Read__DataSource ds;
  spark__connect__read__data_source__init(&ds);
  ds._format_case = SPARK__CONNECT__READ__DATA_SOURCE___FORMAT_FORMAT;
  ds.format = (char *)(uintptr_t)DP_HANDOFF_CLASS;
  ds.n_options = 3;
  ds.options = pe;
  Spark__Connect__Read rd;
  spark__connect__read__init(&rd);
  rd.read_type_case = SPARK__CONNECT__READ__READ_TYPE_DATA_SOURCE;
  rd.data_source = &ds;
  Spark__Connect__Relation rel;
  spark__connect__relation__init(&rel);
  rel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_READ;
  rel.read = &rd;
  return dp_sc_collect(s, &rel, out, err);
}

int dp_handoff_ack(dp_sc *s, const char *key, int64_t batch, dp_sc_error *err) {
  char b[24];
  snprintf(b, sizeof b, "%" PRId64, batch);
  kv o[1] = {{"batch", b}};
  answer a;
  return command(s, "ack", key, o, 1, CALL_SLACK_MS, &a, err);
}

int dp_handoff_close(dp_sc *s, const char *key, dp_sc_error *err) {
  answer a;
  return command(s, "close", key, NULL, 0, CALL_SLACK_MS, &a, err);
}
