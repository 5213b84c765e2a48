/*
** streaming.c — streaming queries on Spark, managed over Spark Connect.
**
** Owns: the commands that start and manage Structured Streaming queries
** (WriteStreamOperationStart, StreamingQueryCommand,
** StreamingQueryManagerCommand, StreamingQueryListenerBusCommand) and the
** reading of their results into dipper's structs (streaming.h).
** Does not own: the session and transport (client.c), building the start
** command from a plan (translate_stream.c), the progress JSON (progress.c).
**
** Every call is one ExecutePlan of a command; the response callback copies
** what it needs out of the borrowed response, so nothing of a response
** outlives its call.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/compiler.h"
#include "spark/progress_int.h"
#include "spark/streaming.h"

/* Slack over a server-side wait (await termination) before the client gives up. */
#define AWAIT_SLACK_MS 30000

static int set_error(dp_sc_error *err, int code, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;

static int set_error(dp_sc_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    dp_buf_vprintf(&err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

static int run_command(dp_sc *s, Spark__Connect__Command *cmd, dp_sc_response_fn fn, void *user,
                       int64_t deadline_ms, dp_sc_error *err) {
  Spark__Connect__Plan plan;
  spark__connect__plan__init(&plan);
  plan.op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_COMMAND;
  plan.command = cmd;
  return dp_sc_execute(s, &plan, fn, user, deadline_ms, err);
}

static void copy_id(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

/* ---- start ---- */

typedef struct start_ctx {
  dp_sq *q;
  bool got;
  bool oom;
} start_ctx;

static int on_start(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  start_ctx *c = user;
  if (r->response_type_case !=
      SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_WRITE_STREAM_OPERATION_START_RESULT)
    return DIPPER_OK;
  const Spark__Connect__WriteStreamOperationStartResult *res = r->write_stream_operation_start_result;
  if (!res || !res->query_id) return DIPPER_OK;
  copy_id(c->q->id, sizeof c->q->id, res->query_id->id);
  copy_id(c->q->run_id, sizeof c->q->run_id, res->query_id->run_id);
  free(c->q->name);
  c->q->name = NULL;
  if (res->name && res->name[0]) {
    c->q->name = strdup(res->name);
    if (!c->q->name) c->oom = true;
  }
  c->got = true;
  return DIPPER_OK;
}

int dp_sq_start(dp_sc *s, const Spark__Connect__Plan *command, dp_sq *q, dp_sc_error *err) {
  memset(q, 0, sizeof *q);
  if (!command || command->op_type_case != SPARK__CONNECT__PLAN__OP_TYPE_COMMAND ||
      !command->command ||
      command->command->command_type_case !=
          SPARK__CONNECT__COMMAND__COMMAND_TYPE_WRITE_STREAM_OPERATION_START)
    return set_error(err, DIPPER_MISUSE,
                     "dp_sq_start: the plan is not a WriteStreamOperationStart command");
  start_ctx c = {.q = q};
  int rc = dp_sc_execute(s, command, on_start, &c, 0, err);
  if (rc) return rc;
  if (c.oom) return set_error(err, DIPPER_NOMEM, "out of memory");
  if (!c.got)
    return set_error(err, DIPPER_PROTOCOL,
                     "Spark at %s answered the start of a streaming query without its query id",
                     dp_sc_address(s));
  return DIPPER_OK;
}

void dp_sq_free(dp_sq *q) {
  if (!q) return;
  free(q->name);
  q->name = NULL;
}

/* ---- StreamingQueryCommand ---- */

typedef struct sq_ctx {
  Spark__Connect__StreamingQueryCommandResult__ResultTypeCase want;
  bool got;
  bool oom;
  int rc;
  /* the outputs, by kind */
  dp_sq_status *status;
  char **text;                /* explain, exception */
  bool *terminated;
  dp_spark_progress *progress;/* recent/last: parsed reports */
  int nprogress, capprogress;
  bool last_only;
  bool optional;              /* a command whose answer may carry no result */
  dp_buf *perr;
} sq_ctx;

static int add_progress(sq_ctx *c, const char *json) {
  if (c->last_only && c->nprogress > 0) { /* keep only the newest report */
    dp_spark_progress_free(&c->progress[0]);
    c->nprogress = 0;
  }
  if (c->nprogress == c->capprogress) {
    int cap = c->capprogress ? c->capprogress * 2 : 8;
    dp_spark_progress *p = realloc(c->progress, (size_t)cap * sizeof *p);
    if (!p) return DIPPER_NOMEM;
    c->progress = p;
    c->capprogress = cap;
  }
  dp_spark_progress *p = &c->progress[c->nprogress];
  int rc = dp_spark_progress_parse(json, strlen(json), p, c->perr);
  if (rc) {
    dp_spark_progress_free(p);
    return rc;
  }
  c->nprogress++;
  return DIPPER_OK;
}

static int on_query_result(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  sq_ctx *c = user;
  if (r->response_type_case !=
      SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_STREAMING_QUERY_COMMAND_RESULT)
    return DIPPER_OK;
  const Spark__Connect__StreamingQueryCommandResult *res = r->streaming_query_command_result;
  if (!res || res->result_type_case != c->want) return DIPPER_OK;
  c->got = true;
  switch (res->result_type_case) {
  case SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_STATUS: {
    const Spark__Connect__StreamingQueryCommandResult__StatusResult *st = res->status;
    if (!st || !c->status) break;
    snprintf(c->status->message, sizeof c->status->message, "%s",
             st->status_message ? st->status_message : "");
    c->status->data_available = st->is_data_available;
    c->status->trigger_active = st->is_trigger_active;
    c->status->active = st->is_active;
    break;
  }
  case SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_RECENT_PROGRESS: {
    /* last_progress answers with a recent_progress result of zero or one report */
    const Spark__Connect__StreamingQueryCommandResult__RecentProgressResult *rp =
        res->recent_progress;
    for (size_t i = 0; rp && i < rp->n_recent_progress_json; i++) {
      int rc = add_progress(c, rp->recent_progress_json[i]);
      if (rc) {
        c->rc = rc;
        return rc;
      }
    }
    break;
  }
  case SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_EXPLAIN:
    if (c->text && res->explain && res->explain->result) {
      free(*c->text);
      *c->text = strdup(res->explain->result);
      if (!*c->text) c->oom = true;
    }
    break;
  case SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_EXCEPTION: {
    const Spark__Connect__StreamingQueryCommandResult__ExceptionResult *ex = res->exception;
    if (!c->text || !ex) break;
    bool has_msg = ex->_exception_message_case ==
                   SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__EXCEPTION_RESULT___EXCEPTION_MESSAGE_EXCEPTION_MESSAGE;
    bool has_class = ex->_error_class_case ==
                     SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__EXCEPTION_RESULT___ERROR_CLASS_ERROR_CLASS;
    if (!has_msg) break;
    dp_buf b = DP_BUF_INIT;
    if (has_class && ex->error_class && ex->error_class[0])
      dp_buf_printf(&b, "%s: ", ex->error_class);
    dp_buf_puts(&b, ex->exception_message ? ex->exception_message : "");
    free(*c->text);
    *c->text = dp_buf_take(&b);
    if (!*c->text) c->oom = true;
    break;
  }
  case SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_AWAIT_TERMINATION:
    if (c->terminated && res->await_termination)
      *c->terminated = res->await_termination->terminated;
    break;
  default: break;
  }
  return DIPPER_OK;
}

/* Run one StreamingQueryCommand (its command case set) on query q. */
static int query_command(dp_sc *s, const dp_sq *q, Spark__Connect__StreamingQueryCommand *cmd,
                         sq_ctx *c, int64_t deadline_ms, dp_sc_error *err) {
  if (!q || !q->id[0])
    return set_error(err, DIPPER_MISUSE, "a streaming query handle without an id");
  Spark__Connect__StreamingQueryInstanceId qid;
  spark__connect__streaming_query_instance_id__init(&qid);
  qid.id = (char *)(uintptr_t)q->id;          /* protobuf-c's char * fields; only read */
  qid.run_id = (char *)(uintptr_t)q->run_id;
  cmd->query_id = &qid;
  Spark__Connect__Command command;
  spark__connect__command__init(&command);
  command.command_type_case = SPARK__CONNECT__COMMAND__COMMAND_TYPE_STREAMING_QUERY_COMMAND;
  command.streaming_query_command = cmd;
  dp_buf perr = DP_BUF_INIT;
  c->perr = &perr;
  int rc = run_command(s, &command, on_query_result, c, deadline_ms, err);
  if (rc == DIPPER_OK && c->rc) rc = c->rc;
  if (rc == DIPPER_DATA && err) {
    err->code = DIPPER_DATA;
    dp_buf_printf(&err->message, "query %s: %s", q->id, dp_buf_cstr(&perr));
  }
  dp_buf_free(&perr);
  if (rc) return rc;
  if (c->oom) return set_error(err, DIPPER_NOMEM, "out of memory");
  if (!c->got && !c->optional)
    return set_error(err, DIPPER_PROTOCOL,
                     "Spark answered a command on streaming query %s without its result", q->id);
  return DIPPER_OK;
}

int dp_sq_get_status(dp_sc *s, const dp_sq *q, dp_sq_status *st, dp_sc_error *err) {
  memset(st, 0, sizeof *st);
  Spark__Connect__StreamingQueryCommand cmd;
  spark__connect__streaming_query_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_COMMAND__COMMAND_STATUS;
  cmd.status = 1;
  sq_ctx c = {.want = SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_STATUS,
              .status = st};
  return query_command(s, q, &cmd, &c, 0, err);
}

static void free_progress_list(dp_spark_progress *p, int n) {
  for (int i = 0; i < n; i++) dp_spark_progress_free(&p[i]);
  free(p);
}

int dp_sq_last_progress(dp_sc *s, const dp_sq *q, dp_spark_progress *p, bool *has,
                        dp_sc_error *err) {
  memset(p, 0, sizeof *p);
  *has = false;
  Spark__Connect__StreamingQueryCommand cmd;
  spark__connect__streaming_query_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_COMMAND__COMMAND_LAST_PROGRESS;
  cmd.last_progress = 1;
  sq_ctx c = {.want = SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_RECENT_PROGRESS,
              .last_only = true};
  int rc = query_command(s, q, &cmd, &c, 0, err);
  if (rc == DIPPER_OK && c.nprogress == 1) {
    *p = c.progress[0];
    *has = true;
    free(c.progress);
    return DIPPER_OK;
  }
  free_progress_list(c.progress, c.nprogress);
  return rc;
}

int dp_sq_recent_progress(dp_sc *s, const dp_sq *q, dp_spark_progress **out, int *n,
                          dp_sc_error *err) {
  *out = NULL;
  *n = 0;
  Spark__Connect__StreamingQueryCommand cmd;
  spark__connect__streaming_query_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_COMMAND__COMMAND_RECENT_PROGRESS;
  cmd.recent_progress = 1;
  sq_ctx c = {.want = SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_RECENT_PROGRESS};
  int rc = query_command(s, q, &cmd, &c, 0, err);
  if (rc) {
    free_progress_list(c.progress, c.nprogress);
    return rc;
  }
  *out = c.progress;
  *n = c.nprogress;
  return DIPPER_OK;
}

int dp_sq_await(dp_sc *s, const dp_sq *q, int64_t timeout_ms, bool *terminated,
                dp_sc_error *err) {
  *terminated = false;
  Spark__Connect__StreamingQueryCommand__AwaitTerminationCommand aw;
  spark__connect__streaming_query_command__await_termination_command__init(&aw);
  if (timeout_ms >= 0) {
    aw._timeout_ms_case =
        SPARK__CONNECT__STREAMING_QUERY_COMMAND__AWAIT_TERMINATION_COMMAND___TIMEOUT_MS_TIMEOUT_MS;
    aw.timeout_ms = timeout_ms;
  }
  Spark__Connect__StreamingQueryCommand cmd;
  spark__connect__streaming_query_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_COMMAND__COMMAND_AWAIT_TERMINATION;
  cmd.await_termination = &aw;
  sq_ctx c = {
      .want = SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_AWAIT_TERMINATION,
      .terminated = terminated};
  return query_command(s, q, &cmd, &c, timeout_ms >= 0 ? timeout_ms + AWAIT_SLACK_MS : 0, err);
}

/* Commands whose result carries nothing but the query id. */
static int simple_command(dp_sc *s, const dp_sq *q, Spark__Connect__StreamingQueryCommand *cmd,
                          dp_sc_error *err) {
  /* The server answers these with a result of no type (just the query id). */
  sq_ctx c = {.want = SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE__NOT_SET,
              .optional = true};
  return query_command(s, q, cmd, &c, 0, err);
}

int dp_sq_stop(dp_sc *s, const dp_sq *q, dp_sc_error *err) {
  Spark__Connect__StreamingQueryCommand cmd;
  spark__connect__streaming_query_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_COMMAND__COMMAND_STOP;
  cmd.stop = 1;
  return simple_command(s, q, &cmd, err);
}

int dp_sq_process_all_available(dp_sc *s, const dp_sq *q, dp_sc_error *err) {
  Spark__Connect__StreamingQueryCommand cmd;
  spark__connect__streaming_query_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_COMMAND__COMMAND_PROCESS_ALL_AVAILABLE;
  cmd.process_all_available = 1;
  return simple_command(s, q, &cmd, err);
}

int dp_sq_exception(dp_sc *s, const dp_sq *q, char **text, dp_sc_error *err) {
  *text = NULL;
  Spark__Connect__StreamingQueryCommand cmd;
  spark__connect__streaming_query_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_COMMAND__COMMAND_EXCEPTION;
  cmd.exception = 1;
  /* A query without an exception may be answered with no exception result. */
  sq_ctx c = {.want = SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_EXCEPTION,
              .text = text, .optional = true};
  int rc = query_command(s, q, &cmd, &c, 0, err);
  if (rc) {
    free(*text);
    *text = NULL;
  }
  return rc;
}

int dp_sq_explain(dp_sc *s, const dp_sq *q, bool extended, char **text, dp_sc_error *err) {
  *text = NULL;
  Spark__Connect__StreamingQueryCommand__ExplainCommand ex;
  spark__connect__streaming_query_command__explain_command__init(&ex);
  ex.extended = extended;
  Spark__Connect__StreamingQueryCommand cmd;
  spark__connect__streaming_query_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_COMMAND__COMMAND_EXPLAIN;
  cmd.explain = &ex;
  sq_ctx c = {.want = SPARK__CONNECT__STREAMING_QUERY_COMMAND_RESULT__RESULT_TYPE_EXPLAIN,
              .text = text};
  int rc = query_command(s, q, &cmd, &c, 0, err);
  if (rc) {
    free(*text);
    *text = NULL;
  }
  return rc;
}

/* ---- StreamingQueryManagerCommand ---- */

typedef struct mgr_ctx {
  Spark__Connect__StreamingQueryManagerCommandResult__ResultTypeCase want;
  bool got;
  bool oom;
  dp_sq *queries;
  int nqueries;
  bool *terminated;
} mgr_ctx;

static int on_manager_result(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  mgr_ctx *c = user;
  if (r->response_type_case !=
      SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_STREAMING_QUERY_MANAGER_COMMAND_RESULT)
    return DIPPER_OK;
  const Spark__Connect__StreamingQueryManagerCommandResult *res =
      r->streaming_query_manager_command_result;
  if (!res || res->result_type_case != c->want) return DIPPER_OK;
  c->got = true;
  if (res->result_type_case ==
          SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND_RESULT__RESULT_TYPE_ACTIVE &&
      res->active) {
    size_t n = res->active->n_active_queries;
    if (n == 0) return DIPPER_OK;
    if (n > 100000) n = 100000;
    dp_sq *qs = calloc(n, sizeof *qs);
    if (!qs) {
      c->oom = true;
      return DIPPER_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
      const Spark__Connect__StreamingQueryManagerCommandResult__StreamingQueryInstance *in =
          res->active->active_queries[i];
      if (!in || !in->id) continue;
      copy_id(qs[i].id, sizeof qs[i].id, in->id->id);
      copy_id(qs[i].run_id, sizeof qs[i].run_id, in->id->run_id);
      if (in->_name_case ==
              SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND_RESULT__STREAMING_QUERY_INSTANCE___NAME_NAME &&
          in->name) {
        qs[i].name = strdup(in->name);
        if (!qs[i].name) c->oom = true;
      }
    }
    for (int i = 0; i < c->nqueries; i++) dp_sq_free(&c->queries[i]);
    free(c->queries);
    c->queries = qs;
    c->nqueries = (int)n;
  } else if (res->result_type_case ==
                 SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND_RESULT__RESULT_TYPE_AWAIT_ANY_TERMINATION &&
             res->await_any_termination && c->terminated) {
    *c->terminated = res->await_any_termination->terminated;
  }
  return DIPPER_OK;
}

static int manager_command(dp_sc *s, Spark__Connect__StreamingQueryManagerCommand *cmd,
                           mgr_ctx *c, int64_t deadline_ms, dp_sc_error *err) {
  Spark__Connect__Command command;
  spark__connect__command__init(&command);
  command.command_type_case =
      SPARK__CONNECT__COMMAND__COMMAND_TYPE_STREAMING_QUERY_MANAGER_COMMAND;
  command.streaming_query_manager_command = cmd;
  int rc = run_command(s, &command, on_manager_result, c, deadline_ms, err);
  if (rc) return rc;
  if (c->oom) return set_error(err, DIPPER_NOMEM, "out of memory");
  if (!c->got)
    return set_error(err, DIPPER_PROTOCOL,
                     "Spark at %s answered a streaming query manager command without its result",
                     dp_sc_address(s));
  return DIPPER_OK;
}

int dp_sq_active(dp_sc *s, dp_sq **out, int *n, dp_sc_error *err) {
  *out = NULL;
  *n = 0;
  Spark__Connect__StreamingQueryManagerCommand cmd;
  spark__connect__streaming_query_manager_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND__COMMAND_ACTIVE;
  cmd.active = 1;
  mgr_ctx c = {.want = SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND_RESULT__RESULT_TYPE_ACTIVE};
  int rc = manager_command(s, &cmd, &c, 0, err);
  if (rc) {
    for (int i = 0; i < c.nqueries; i++) dp_sq_free(&c.queries[i]);
    free(c.queries);
    return rc;
  }
  *out = c.queries;
  *n = c.nqueries;
  return DIPPER_OK;
}

int dp_sq_await_any(dp_sc *s, int64_t timeout_ms, bool *terminated, dp_sc_error *err) {
  *terminated = false;
  Spark__Connect__StreamingQueryManagerCommand__AwaitAnyTerminationCommand aw;
  spark__connect__streaming_query_manager_command__await_any_termination_command__init(&aw);
  if (timeout_ms >= 0) {
    aw._timeout_ms_case =
        SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND__AWAIT_ANY_TERMINATION_COMMAND___TIMEOUT_MS_TIMEOUT_MS;
    aw.timeout_ms = timeout_ms;
  }
  Spark__Connect__StreamingQueryManagerCommand cmd;
  spark__connect__streaming_query_manager_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND__COMMAND_AWAIT_ANY_TERMINATION;
  cmd.await_any_termination = &aw;
  mgr_ctx c = {
      .want = SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND_RESULT__RESULT_TYPE_AWAIT_ANY_TERMINATION,
      .terminated = terminated};
  return manager_command(s, &cmd, &c, timeout_ms >= 0 ? timeout_ms + AWAIT_SLACK_MS : 0, err);
}

int dp_sq_reset_terminated(dp_sc *s, dp_sc_error *err) {
  Spark__Connect__StreamingQueryManagerCommand cmd;
  spark__connect__streaming_query_manager_command__init(&cmd);
  cmd.command_case = SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND__COMMAND_RESET_TERMINATED;
  cmd.reset_terminated = 1;
  mgr_ctx c = {
      .want = SPARK__CONNECT__STREAMING_QUERY_MANAGER_COMMAND_RESULT__RESULT_TYPE_RESET_TERMINATED};
  return manager_command(s, &cmd, &c, 0, err);
}

/* ---- the listener bus ---- */

typedef struct listen_ctx {
  dp_sq_event_fn fn;
  void *user;
  int stop_rc;      /* what fn returned when it stopped; 0 while it has not */
  bool stopped;
  int rc;
  dp_arena *arena;  /* one event's tree; reset per event */
} listen_ctx;

static int deliver(listen_ctx *c, const Spark__Connect__StreamingQueryListenerEvent *e) {
  if (!e || !e->event_json) return DIPPER_OK;
  dp_arena_reset(c->arena);
  dp_jv *root = NULL;
  int rc = dp_jv_parse(c->arena, e->event_json, strlen(e->event_json), &root, NULL);
  if (rc == DIPPER_NOMEM) return rc;
  dp_sq_event ev = {.json = e->event_json, .id = "", .run_id = ""};
  dp_spark_progress prog;
  memset(&prog, 0, sizeof prog);
  switch (e->event_type) {
  case SPARK__CONNECT__STREAMING_QUERY_EVENT_TYPE__QUERY_PROGRESS_EVENT: {
    ev.kind = DP_SQ_EVENT_PROGRESS;
    /* {"progress": {...}}; the report itself from servers that send it bare */
    const dp_jv *p = dp_jv_get(root, "progress");
    if (!p && dp_jv_get(root, "batchId")) p = root;
    if (p && dp_spark_progress_from(c->arena, p, &prog, NULL) == DIPPER_OK) {
      ev.progress = &prog;
      if (prog.id) ev.id = prog.id;
      if (prog.run_id) ev.run_id = prog.run_id;
    }
    break;
  }
  case SPARK__CONNECT__STREAMING_QUERY_EVENT_TYPE__QUERY_TERMINATED_EVENT:
    ev.kind = DP_SQ_EVENT_TERMINATED;
    ev.exception = dp_jv_str(root, "exception");
    break;
  case SPARK__CONNECT__STREAMING_QUERY_EVENT_TYPE__QUERY_IDLE_EVENT:
    ev.kind = DP_SQ_EVENT_IDLE;
    break;
  default: return DIPPER_OK; /* an event kind of a newer server: not ours to judge */
  }
  if (ev.kind != DP_SQ_EVENT_PROGRESS) {
    if (dp_jv_str(root, "id")) ev.id = dp_jv_str(root, "id");
    if (dp_jv_str(root, "runId")) ev.run_id = dp_jv_str(root, "runId");
  }
  return c->fn(c->user, &ev);
}

static int on_listener_event(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  listen_ctx *c = user;
  if (r->response_type_case !=
      SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_STREAMING_QUERY_LISTENER_EVENTS_RESULT)
    return DIPPER_OK;
  const Spark__Connect__StreamingQueryListenerEventsResult *res =
      r->streaming_query_listener_events_result;
  if (res && res->_listener_bus_listener_added_case ==
                 SPARK__CONNECT__STREAMING_QUERY_LISTENER_EVENTS_RESULT___LISTENER_BUS_LISTENER_ADDED_LISTENER_BUS_LISTENER_ADDED &&
      res->listener_bus_listener_added) {
    dp_sq_event ev = {.kind = DP_SQ_EVENT_LISTENING, .id = "", .run_id = ""};
    int rc = c->fn(c->user, &ev);
    if (rc) {
      c->stopped = true;
      c->stop_rc = rc;
      return rc;
    }
  }
  for (size_t i = 0; res && i < res->n_events; i++) {
    int rc = deliver(c, res->events[i]);
    if (rc) {
      c->stopped = true;
      c->stop_rc = rc;
      return rc;
    }
  }
  return DIPPER_OK;
}

static int on_nothing(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  (void)user;
  (void)r;
  return DIPPER_OK;
}

static int listener_bus(dp_sc *s, bool add, dp_sc_response_fn fn, void *user,
                        int64_t deadline_ms, dp_sc_error *err) {
  Spark__Connect__StreamingQueryListenerBusCommand bus;
  spark__connect__streaming_query_listener_bus_command__init(&bus);
  if (add) {
    bus.command_case =
        SPARK__CONNECT__STREAMING_QUERY_LISTENER_BUS_COMMAND__COMMAND_ADD_LISTENER_BUS_LISTENER;
    bus.add_listener_bus_listener = 1;
  } else {
    bus.command_case =
        SPARK__CONNECT__STREAMING_QUERY_LISTENER_BUS_COMMAND__COMMAND_REMOVE_LISTENER_BUS_LISTENER;
    bus.remove_listener_bus_listener = 1;
  }
  Spark__Connect__Command command;
  spark__connect__command__init(&command);
  command.command_type_case =
      SPARK__CONNECT__COMMAND__COMMAND_TYPE_STREAMING_QUERY_LISTENER_BUS_COMMAND;
  command.streaming_query_listener_bus_command = &bus;
  return run_command(s, &command, fn, user, deadline_ms, err);
}

int dp_sq_listen(dp_sc *s, dp_sq_event_fn fn, void *user, int64_t deadline_ms,
                 dp_sc_error *err) {
  if (!fn) return set_error(err, DIPPER_MISUSE, "dp_sq_listen without a callback");
  listen_ctx c = {.fn = fn, .user = user, .arena = dp_arena_new(16384)};
  if (!c.arena) return set_error(err, DIPPER_NOMEM, "out of memory");
  int rc = listener_bus(s, true, on_listener_event, &c, deadline_ms, err);
  dp_arena_free(c.arena);
  if (c.stopped) {
    /* fn asked to stop: the execution was interrupted; the callback's code is
       the answer, not the interruption. */
    dp_sc_error_free(err);
    if (err) err->code = DIPPER_OK;
    rc = c.stop_rc == DIPPER_INTERRUPTED ? DIPPER_OK : c.stop_rc;
  }
  /* Whatever ended the stream, take the listener off the session's bus so that
     the server stops queueing events for nobody. */
  dp_sc_error rm;
  dp_sc_error_init(&rm);
  (void)listener_bus(s, false, on_nothing, NULL, 10000, &rm);
  dp_sc_error_free(&rm);
  return rc;
}
