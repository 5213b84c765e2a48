/*
** exec.c — a running query: the run-time operator tree beside the plan.
**
** Owns: dp_exec (its arenas, the per-watermark maxima, the trigger and output
** mode chosen for the query) and the building, draining and closing of
** operator trees.  Does not own: the micro-batch loop (driver.c), the
** operators themselves (op_*.c) or which class runs which node
** (op_registry.c).
**
** A query whose plan still holds a correlated subquery is refused when it
** starts (refuse_correlated): the binder made joins of the correlated
** subqueries the engine runs, and the Spark backend runs the others, so the
** compile-time check (validate.c, shared by both engines) lets them by.
**
** Lifecycle of an operator: dp_op_build opens the children first, then the
** node's own class; an open that fails has cleaned up after itself, so only
** operators whose open succeeded are ever closed.  dp_exec_free closes the
** tree parents first (a parent may still hold a child's borrowed batch).
*/
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/session.h"
#include "exec/changelog.h"
#include "exec/exec.h"
#include "exec/eval_int.h"
#include "exec/exec_int.h"
#include "exec/parallel.h"
#include "plan/analyze.h"

/* Rows a source may put in one micro-batch unless the trigger says
** otherwise: big enough that the per-batch costs vanish, small enough that
** a large bounded input still shows progress and closes windows as it goes. */
#define DEFAULT_MAX_BATCH_ROWS (INT64_C(1) << 17)

void dp_op_walk(dp_op *op, void (*fn)(dp_op *op, void *user), void *user) {
  if (!op) return;
  for (int i = 0; i < op->nchildren; i++) dp_op_walk(op->children[i], fn, user);
  fn(op, user);
}

/* Parents before children: a parent's close may still look at what its
** children handed it. */
static void close_tree(dp_op *op) {
  if (!op) return;
  if (op->cls && op->cls->close) op->cls->close(op);
  op->cls = NULL;
  for (int i = 0; i < op->nchildren; i++) close_tree(op->children[i]);
}

int dp_op_build(dp_exec *ex, const dp_plan *p, dp_op **out) {
  *out = NULL;
  const dp_op_class *cls = dp_op_class_for(p->kind);
  /* An aggregation over an updating input takes retractions (changelog.h). */
  if (dp_analyze_retract_aggregate(p)) cls = &dp_op_agg_retract;
  if (dp_analyze_retract_join(p)) cls = &dp_op_join_retract;
  if (!cls)
    return dp_error(ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "the embedded engine does not run %s yet; rewrite the query without it",
                    dp_plan_kind_name(p->kind));
  dp_op *op = dp_arena_calloc(ex->arena, 1, sizeof *op);
  dp_op **children =
      p->ninputs > 0 ? dp_arena_calloc(ex->arena, (size_t)p->ninputs, sizeof *children) : NULL;
  if (!op || (p->ninputs > 0 && !children))
    return dp_error(ex->diags, DIPPER_NOMEM, p->span, "out of memory building the %s operator",
                    dp_plan_kind_name(p->kind));
  op->plan = p;
  op->ex = ex;
  op->children = children;
  for (int i = 0; i < p->ninputs; i++) {
    int rc = dp_op_build(ex, p->inputs[i], &children[i]);
    if (rc != DIPPER_OK) {
      for (int j = 0; j < i; j++) close_tree(children[j]);
      return rc;
    }
    op->nchildren = i + 1;
  }
  /* On a worker of a parallel query, rows meet a stateful operator through
  ** an exchange that hands each worker the keys it owns. */
  int rc = ex->par ? dp_par_wrap_inputs(ex, op) : DIPPER_OK;
  if (rc != DIPPER_OK) {
    for (int i = 0; i < op->nchildren; i++) close_tree(children[i]);
    return rc;
  }
  op->cls = cls;
  rc = cls->open(op);
  if (rc != DIPPER_OK) {
    op->cls = NULL; /* its open cleaned up: only the children are closed */
    for (int i = 0; i < op->nchildren; i++) close_tree(children[i]);
    /* An open that failed without saying why still leaves a message. */
    if (ex->diags->count == 0)
      dp_error(ex->diags, rc, p->span, "cannot start the %s operator: %s",
               dp_plan_kind_name(p->kind), dipper_strerror(rc));
    return rc;
  }
  /* An aggregation whose consumer takes retractions: its upserts become
     -U/+U pairs above it. */
  if (cls == &dp_op_aggregate && p->props.change_kinds) {
    rc = dp_change_wrap_upserts(ex, op, out);
    if (rc != DIPPER_OK) close_tree(op);
    return rc;
  }
  *out = op;
  return DIPPER_OK;
}

int dp_op_drain(dp_op *child, int (*fn)(dp_op *self, const dp_batch *b), dp_op *self) {
  for (;;) {
    dp_batch *b = NULL;
    int rc = child->cls->next(child, &b);
    if (rc != DIPPER_OK) return rc;
    if (!b) return DIPPER_OK;
    if (b->nrows == 0) continue;
    rc = fn(self, b);
    if (rc != DIPPER_OK) return rc;
  }
}

/* `dipper.trigger` as the catalog stores it (src/plan/options.c):
** "once", "available-now", "processing-time <duration>", "real-time <duration>". */
static int parse_trigger(const char *text, dp_trigger *out) {
  memset(out, 0, sizeof *out);
  out->kind = DP_TRIGGER_DEFAULT;
  if (!text) return DIPPER_OK;
  if (strcmp(text, "once") == 0) {
    out->kind = DP_TRIGGER_ONCE;
    return DIPPER_OK;
  }
  if (strcmp(text, "available-now") == 0) {
    out->kind = DP_TRIGGER_AVAILABLE_NOW;
    return DIPPER_OK;
  }
  static const char pt[] = "processing-time ";
  if (strncmp(text, pt, sizeof pt - 1) == 0) {
    int64_t us = 0;
    if (dp_parse_duration(text + sizeof pt - 1, &us) != DIPPER_OK) return DIPPER_OPTION;
    /* Spark's ProcessingTime(0) is "as fast as possible". */
    out->kind = us > 0 ? DP_TRIGGER_PROCESSING_TIME : DP_TRIGGER_DEFAULT;
    out->interval = us;
    return DIPPER_OK;
  }
  /* Spark's real-time mode keeps long batches running and emits as rows
  ** arrive; in-process, back-to-back micro-batches are the closest thing
  ** and have lower latency still. */
  if (strncmp(text, "real-time ", 10) == 0) return DIPPER_OK;
  return DIPPER_OPTION;
}

/* ---- correlated subqueries ---- */


static bool find_correlated_plan(const dp_plan *p, const dp_expr **found);

/* The first correlated subquery in e (outermost first), or NULL. */
static bool find_correlated(const dp_expr *e, void *ud) {
  const dp_expr **found = ud;
  if (!e) return false;
  switch (e->kind) {
  case DP_E_COLUMN: case DP_E_LITERAL: return false;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (find_correlated(e->u.call.args[i], ud)) return true;
    return false;
  case DP_E_CAST: return find_correlated(e->u.cast.arg, ud);
  case DP_E_FIELD: return find_correlated(e->u.field.arg, ud);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (find_correlated(e->u.case_.whens[i], ud) || find_correlated(e->u.case_.thens[i], ud)) return true;
    return find_correlated(e->u.case_.else_, ud);
  case DP_E_SUBQUERY:
    if (dp_plan_reads_outer(e->u.subquery.plan, 1)) {
      *found = e;
      return true;
    }
    return find_correlated(e->u.subquery.arg, ud) || find_correlated_plan(e->u.subquery.plan, found);
  }
  return false;
}

static bool find_correlated_plan(const dp_plan *p, const dp_expr **found) {
  if (!p) return false;
  if (dp_plan_any_expr(p, find_correlated, (void *)found)) return true;
  for (int i = 0; i < p->ninputs; i++)
    if (find_correlated_plan(p->inputs[i], found)) return true;
  return false;
}

/* Refuse, before anything runs, a correlated subquery the binder did not
** make a join of: the engine evaluates a subquery once per query run. */
static int refuse_correlated(dp_diags *d, const dp_plan *root) {
  const dp_expr *e = NULL;
  if (!find_correlated_plan(root, &e)) return DIPPER_OK;
  if (e->u.subquery.kind == DP_SUBQ_SCALAR)
    return dp_error(d, DIPPER_UNSUPPORTED, e->span,
                    "the embedded engine runs a correlated scalar subquery only as one "
                    "aggregate over rows the subquery's WHERE matches by equalities with the "
                    "outer row, as in (SELECT AVG(y) FROM t2 WHERE t2.k = t1.k); write the "
                    "join instead: LEFT JOIN (SELECT k, AVG(y) AS a FROM t2 GROUP BY k) AS s "
                    "ON s.k = t1.k, or run it on Spark (--engine sc://host:port)");
  return dp_error(d, DIPPER_UNSUPPORTED, e->span,
                  "the embedded engine runs a correlated %s only as a condition of WHERE, "
                  "joined to the others by AND, with the correlation in the subquery's WHERE; "
                  "move it there or write the join (LEFT JOIN the subquery and test its column "
                  "for NULL), or run it on Spark (--engine sc://host:port)",
                  e->u.subquery.kind == DP_SUBQ_EXISTS ? "EXISTS" : "IN (subquery)");
}

bool dp_exec_state_rocks(const dp_exec *ex) {
  const char *v = dp_session_option(ex->db, "state.backend");
  return v && strcmp(v, "rocksdb") == 0;
}

void dp_exec_note(dp_exec *ex, const char *fmt, ...) {
  if (!ex->db) return;
  dp_buf b = DP_BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  dp_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  if (!b.oom && b.len) dp_session_log(ex->db, DIPPER_LOG_NOTE, "%s", b.data);
  dp_buf_free(&b);
}

/* With 'state.backend' = 'rocksdb', the stateful operators that do not take
** it keep their state in memory (and in the checkpoint's state files, as
** without the option): the query says so, once per operator.  The join,
** aggregation, deduplication, DISTINCT and Top-N run over RocksDB or say for
** themselves why not. */
static void note_memory_state(dp_op *op, void *user) {
  dp_plan_kind k = op->plan->kind;
  if (!op->cls->save_state || k == DP_P_JOIN || k == DP_P_AGGREGATE || k == DP_P_DEDUPLICATE ||
      k == DP_P_DISTINCT || k == DP_P_TOPN)
    return;
  dp_exec_note(user, "the %s operator (line %d) keeps its state in memory: 'state.backend' = "
               "'rocksdb' holds the state of joins of two streams, aggregations, "
               "deduplications, DISTINCT and Top-N so far",
               op->cls->name, (int)op->plan->span.line);
}

/* The operator tree of ex: the root's own, a sink over it, or for a part of
** a parallel query its worker's tree or the coordinator's sink. */
static int build_root(dp_exec *ex, const dp_plan *root) {
  const dp_plan *input = root->kind == DP_P_SINK ? root->inputs[0] : root;
  /* A sink every worker may write its share to: each worker's own. */
  bool own_sink = ex->par && ex->worker >= 0 && dp_par_sink_per_worker(root);
  if (ex->par && ex->worker >= 0 && !own_sink) return dp_op_build(ex, input, &ex->root_op);
  if ((!ex->par || own_sink) && root->kind == DP_P_SINK) return dp_op_build(ex, root, &ex->root_op);
  dp_op *in = NULL;
  int rc = ex->par ? dp_par_gather_build(ex->par, ex, input, &in) : dp_op_build(ex, root, &in);
  if (rc == DIPPER_OK) {
    rc = dp_sink_op_build(ex, root, in, &ex->root_op);
    if (rc != DIPPER_OK) close_tree(in);
  }
  return rc;
}

int dp_exec_open(dipper *db, const dp_query_plan *q, const dp_plan *root, dp_diags *d,
                 const char *checkpoint, dp_exec **out) {
  return dp_exec_open_part(db, q, root, d, checkpoint, NULL, 0, out);
}

int dp_exec_open_part(dipper *db, const dp_query_plan *q, const dp_plan *root, dp_diags *d,
                      const char *checkpoint, struct dp_par *par, int worker, dp_exec **out) {
  if (!out) return DIPPER_MISUSE;
  *out = NULL;
  if (!q || !root || !d) return DIPPER_MISUSE;
  int rc = refuse_correlated(d, root);
  if (rc != DIPPER_OK) return rc;
  dp_span nowhere = {0, 0, 0, 0};
  dp_exec *ex = calloc(1, sizeof *ex);
  if (!ex) return dp_error(d, DIPPER_NOMEM, nowhere, "out of memory starting a query");
  ex->db = db;
  ex->query = q;
  ex->root = root;
  ex->diags = d;
  ex->arena = dp_arena_new(0);
  ex->batch_arena = dp_arena_new(0);
  int nwm = q->nwatermarks > 0 ? q->nwatermarks : 1;
  ex->max_event_time = ex->arena ? dp_arena_alloc(ex->arena, (size_t)nwm * sizeof(int64_t)) : NULL;
  if (!ex->arena || !ex->batch_arena || !ex->max_event_time) {
    dp_exec_free(ex);
    return dp_error(d, DIPPER_NOMEM, nowhere, "out of memory starting a query");
  }
  for (int i = 0; i < nwm; i++) ex->max_event_time[i] = DP_WATERMARK_NONE;
  ex->watermark = DP_WATERMARK_NONE;
  /* Operators that evaluate at open (VALUES) read the clock too. */
  ex->batch_start_time = dp_session_now(db);
  ex->output_mode = dp_analyze_output_mode(q, root);
  const char *trigger = dp_session_option(db, "dipper.trigger");
  if (parse_trigger(trigger, &ex->trigger) != DIPPER_OK) {
    dp_exec_free(ex);
    return dp_error(d, DIPPER_OPTION, root->span,
                    "'dipper.trigger' = '%s' is not a trigger; write 'once', 'available-now' or "
                    "'processing-time 10 s'",
                    trigger);
  }
  ex->max_batch_rows = ex->trigger.kind == DP_TRIGGER_ONCE ? 0 : DEFAULT_MAX_BATCH_ROWS;
  const char *cap = dp_session_option(db, "dipper.max-batch-rows");
  if (cap && ex->trigger.kind != DP_TRIGGER_ONCE) ex->max_batch_rows = strtoll(cap, NULL, 10);
  ex->checkpoint = checkpoint;
  ex->par = par;
  ex->worker = par ? worker : 0;
  ex->nworkers = par ? dp_par_count(par) : 1;

  rc = build_root(ex, root);
  if (rc != DIPPER_OK) {
    ex->root_op = NULL;
    dp_exec_free(ex);
    return rc;
  }
  if (q->streaming && dp_exec_state_rocks(ex) && ex->worker == 0)
    dp_op_walk(ex->root_op, note_memory_state, ex); /* once, not once per worker */
  *out = ex;
  return DIPPER_OK;
}

int dp_exec_new(const dp_query_plan *q, const dp_plan *root, dp_diags *d, dp_exec **out) {
  return dp_exec_open(NULL, q, root, d, NULL, out);
}

void dp_exec_free(dp_exec *ex) {
  if (!ex) return;
  close_tree(ex->root_op);
  dp_subq_cache_free(ex->subqueries);
  dp_arena_free(ex->batch_arena);
  dp_arena_free(ex->arena);
  free(ex);
}
