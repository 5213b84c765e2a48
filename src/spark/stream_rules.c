/*
** stream_rules.c — Spark Structured Streaming's refusals, at compile time.
**
** Owns: the rules of Spark's UnsupportedOperationChecker (Spark 4.x) and of its
** streaming operators, applied to dipper's analysed plan so that a user never
** meets an AnalysisException that dipper could have predicted.  Every rule here
** is one that the engine-neutral validator (plan/validate.c) lets through
** because dipper's embedded engine runs the construct; the message says what
** Spark lacks, where, and what to write instead.
** Does not own: the engine-neutral rules (validate.c has run before), the
** translation (translate_*.c), or rules that depend on sink options (those are
** checked where the sink is translated).
**
** The rules follow the plan Spark would see after translation: DISTINCT and the
** ROW_NUMBER() = 1 pattern become Deduplicate; window aggregations become
** Aggregate over window()/session_window(); OVER and Top-N would be Spark
** Window nodes, which Spark refuses on streams.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/compiler.h"
#include "plan/analyze.h"
#include "plan/analyze_int.h"
#include "spark/stream_rules.h"

typedef struct rctx {
  dp_diags *d;
  const dp_query_plan *q;
  unsigned mode;  /* the output mode of the root being checked */
  int rc;
} rctx;

static void refuse(rctx *x, dp_span span, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;

static void refuse(rctx *x, dp_span span, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int rc = dp_error(x->d, DIPPER_STREAMING, span, "%s", msg);
  if (!x->rc) x->rc = rc;
}

static const char *mode_name(unsigned m) {
  return m == DP_MODE_APPEND ? "append" : m == DP_MODE_UPDATE ? "update" : "complete";
}

static bool stream(const dp_plan *p) { return p && !p->props.bounded; }

static bool any_stream_input(const dp_plan *p) {
  for (int i = 0; i < p->ninputs; i++)
    if (stream(p->inputs[i])) return true;
  return false;
}

/* An aggregation (or DISTINCT, which Spark plans as one) anywhere below p on a
** stream, p excluded. */
static const dp_plan *aggregate_below(const dp_plan *p) {
  for (int i = 0; i < p->ninputs; i++) {
    const dp_plan *in = p->inputs[i];
    if (!stream(in)) continue;
    if (in->kind == DP_P_AGGREGATE || in->kind == DP_P_DISTINCT) return in;
    const dp_plan *a = aggregate_below(in);
    if (a) return a;
  }
  return NULL;
}

/* A timestamp column of p to show in a suggestion: an event-time attribute first. */
static const char *time_col(const dp_plan *p) {
  for (int i = 0; i < p->schema.ncols; i++)
    if (dp_analyze_attr(p, i) >= 0) return p->schema.cols[i].name;
  for (int i = 0; i < p->schema.ncols; i++)
    if (p->schema.cols[i].type && dp_type_is_timestamp(p->schema.cols[i].type))
      return p->schema.cols[i].name;
  return "ts";
}

/* ---- the rules, one function per node kind ---- */

static void check_limit(rctx *x, const dp_plan *p) {
  if (!stream(p->inputs[0])) return;
  if (p->u.limit.offset > 0) {
    refuse(x, p->span,
           "OFFSET on a stream: Spark cannot skip the first rows of a streaming query "
           "(\"Offset is not supported on streaming DataFrames/Datasets\"); drop the OFFSET, "
           "filter on a rank computed in batch mode, or run the query in batch mode (SET "
           "'execution.runtime-mode' = 'batch')");
    return;
  }
  if (x->mode == DP_MODE_UPDATE)
    refuse(x, p->span,
           "LIMIT on a stream in update mode: Spark keeps a streaming limit only in append or "
           "complete mode; use complete mode (SET 'dipper.output-mode' = 'complete') for a "
           "top-N of an aggregation, or drop the LIMIT");
}

static void check_sort(rctx *x, const dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  if (!stream(in)) return;
  if (x->mode == DP_MODE_COMPLETE && (in->kind == DP_P_AGGREGATE || aggregate_below(p))) return;
  refuse(x, p->span,
         "ORDER BY on a stream: Spark sorts a streaming query only when it sorts an "
         "aggregation in complete mode; aggregate and use complete mode (SET "
         "'dipper.output-mode' = 'complete'), leave the ORDER BY out (a sink receives each "
         "batch's rows as they come), or run the query in batch mode");
}

static void check_over(rctx *x, const dp_plan *p) {
  if (!stream(p->inputs[0])) return;
  refuse(x, p->span,
         "OVER on a stream: Spark has no window functions on streaming queries "
         "(\"Non-time-based windows are not supported on streaming DataFrames/Datasets\"); "
         "aggregate per event-time window instead (GROUP BY window(%s, '1 minute') or a "
         "TUMBLE/HOP window TVF), or use the embedded engine, which runs OVER on streams",
         time_col(p->inputs[0]));
}

static void check_topn(rctx *x, const dp_plan *p) {
  if (!stream(p->inputs[0])) return;
  refuse(x, p->span,
         "a Top-N (ROW_NUMBER()/RANK() ... WHERE rn <= N) on a stream: Spark has no ranking "
         "functions on streaming queries; keep the top rows of an aggregation with ORDER BY "
         "... LIMIT N in complete mode (SET 'dipper.output-mode' = 'complete'), keep one row "
         "per window with MAX()/MIN() in a window aggregation, or use the embedded engine");
}

static void check_dedup(rctx *x, const dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  if (!stream(in)) return;
  if (p->u.dedup.keep_last) {
    refuse(x, p->span,
           "keeping the last row per key (ROW_NUMBER() OVER (... ORDER BY %s DESC) = 1) on a "
           "stream: Spark's streaming deduplication keeps the first row of each key and never "
           "replaces it; order by the time attribute ascending to keep the first row, or use "
           "the embedded engine",
           time_col(in));
    return;
  }
  if (p->u.dedup.within_watermark && !dp_analyze_has_watermark(in))
    refuse(x, p->span,
           "deduplication within the watermark needs a watermark on its input, and this "
           "input has none: declare WATERMARK FOR %s AS %s - INTERVAL '10' SECOND on the "
           "source table",
           time_col(in), time_col(in));
}

/* A key of an equi-join that carries an event-time watermark (an event-time
** column, or a window bound of an event-time window): Spark can then clean the
** join's state by the watermark whatever the join kind. */
static bool watermark_in_keys(const dp_plan *p) {
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  for (int i = 0; i < p->u.join.nkeys; i++) {
    int lc = p->u.join.left_keys[i], rc = p->u.join.right_keys[i];
    const dp_plan *w = NULL;
    if (dp_analyze_attr(L, lc) >= 0 || dp_analyze_attr(R, rc) >= 0) return true;
    if (dp_analyze_window_col(L, lc, &w) && w && dp_analyze_has_watermark(w->inputs[0]))
      return true;
    w = NULL;
    if (dp_analyze_window_col(R, rc, &w) && w && dp_analyze_has_watermark(w->inputs[0]))
      return true;
  }
  return false;
}

/* How the query names a join's side in a suggestion: the table's alias or
** name when the side is one table, else `dflt`. */
static const char *side_name(const dp_plan *p, const char *dflt) {
  while (p && p->kind == DP_P_WATERMARK) p = p->inputs[0];
  if (!p || p->kind != DP_P_SCAN) return dflt;
  return p->u.scan.alias ? p->u.scan.alias : p->u.scan.table->name;
}

/* Which sides an expression of a join's condition reads: 1 the left (input
** columns below nl), 2 the right, 4 something Spark cannot place on one side
** (a subquery, a correlated reference). */
static unsigned sides(const dp_expr *e, int nl) {
  if (!e) return 0;
  switch (e->kind) {
  case DP_E_COLUMN: return e->u.column.outer ? 4u : e->u.column.index < nl ? 1u : 2u;
  case DP_E_LITERAL: return 0;
  case DP_E_CALL: {
    unsigned m = 0;
    for (int i = 0; i < e->u.call.nargs; i++) m |= sides(e->u.call.args[i], nl);
    return m;
  }
  case DP_E_CAST: return sides(e->u.cast.arg, nl);
  case DP_E_FIELD: return sides(e->u.field.arg, nl);
  case DP_E_CASE: {
    unsigned m = sides(e->u.case_.else_, nl);
    for (int i = 0; i < e->u.case_.n; i++)
      m |= sides(e->u.case_.whens[i], nl) | sides(e->u.case_.thens[i], nl);
    return m;
  }
  case DP_E_SUBQUERY: return 4;
  }
  return 4;
}

/* Does the condition hold, among its AND-ed parts, an equality between an
** expression of the left side and one of the right (what Spark's streaming
** join finds its keys in: `=` or IS NOT DISTINCT FROM)? */
static bool has_equality(const dp_expr *e, int nl) {
  if (!e || e->kind != DP_E_CALL) return false;
  const dp_func *fn = e->u.call.fn;
  if (dp_analyze_fn_is(fn, "AND", "and")) {
    for (int i = 0; i < e->u.call.nargs; i++)
      if (has_equality(e->u.call.args[i], nl)) return true;
    return false;
  }
  if (e->u.call.nargs != 2 ||
      !(dp_analyze_fn_is(fn, "=", "eq") || dp_analyze_fn_is(fn, NULL, "is_not_distinct_from")))
    return false;
  unsigned a = sides(e->u.call.args[0], nl), b = sides(e->u.call.args[1], nl);
  return (a == 1 && b == 2) || (a == 2 && b == 1);
}

static void check_stream_stream_join(rctx *x, const dp_plan *p) {
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  dp_join_kind k = p->u.join.kind;
  const char *jn = dp_join_name(k);
  if (p->u.join.nkeys == 0 && !has_equality(p->u.join.cond, L->schema.ncols)) {
    refuse(x, p->span,
           "%s of two streams without an equality between them: Spark joins two streams only "
           "on equal keys (\"Stream-stream join without equality predicate is not "
           "supported\"); add a key to the ON clause (e.g. ON %s.id = %s.id AND ...), or join "
           "a stream with a bounded table",
           jn, side_name(L, "l"), side_name(R, "r"));
    return;
  }
  if (x->mode != DP_MODE_APPEND) {
    refuse(x, p->span,
           "%s of two streams in %s mode: Spark runs a stream-stream join only in append "
           "mode; use append mode (SET 'dipper.output-mode' = 'append'), or join a stream "
           "with a bounded table",
           jn, mode_name(x->mode));
    return;
  }
  if (k == DP_J_INNER || k == DP_J_CROSS) return;
  if (k == DP_J_ANTI) {
    refuse(x, p->span,
           "ANTI JOIN (NOT EXISTS / NOT IN) of two streams: Spark has no anti join with a "
           "stream on the right; write a LEFT JOIN with watermarks and a time-range condition "
           "and keep the rows whose right columns are NULL");
    return;
  }
  if (watermark_in_keys(p)) return;
  bool lwm = dp_analyze_has_watermark(L), rwm = dp_analyze_has_watermark(R);
  bool bound = p->props.has_time_bound;
  /* Spark cleans the preserved side's state from the other side's watermark
     through the time range: that side must have the watermark. */
  bool ok = k == DP_J_FULL ? (lwm || rwm) && bound
            : k == DP_J_RIGHT ? lwm && bound
                              : rwm && bound; /* LEFT, SEMI */
  if (ok) return;
  const char *nullable = k == DP_J_RIGHT ? "left" : k == DP_J_FULL ? "either" : "right";
  char missing[256];
  size_t n = 0;
  missing[0] = '\0';
  bool side_wm = k == DP_J_FULL ? (lwm || rwm) : k == DP_J_RIGHT ? lwm : rwm;
  if (!side_wm)
    n += (size_t)snprintf(missing, sizeof missing, "the %s side has no watermark", nullable);
  if (!bound && n < sizeof missing)
    snprintf(missing + n, sizeof missing - n,
             "%sthe ON clause has no time range between the two sides' event times",
             n ? " and " : "");
  const char *lt = time_col(L), *rt = time_col(R);
  refuse(x, p->span,
         "%s of two streams: Spark needs a watermark in the join keys, or a watermark on the "
         "%s side and a time range between the two sides, but %s; declare a WATERMARK on "
         "both sources and add e.g. AND %s BETWEEN %s - INTERVAL '1' HOUR AND %s + INTERVAL "
         "'1' HOUR to the ON clause",
         jn, nullable, missing, lt, rt, rt);
}

static void check_join(rctx *x, const dp_plan *p) {
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  bool ls = stream(L), rs = stream(R);
  if (!ls && !rs) return;
  dp_join_kind k = p->u.join.kind;
  if (p->u.join.as_of) {
    if (!rs) return; /* a bounded right side: a plain stream-static join */
    refuse(x, p->span,
           "FOR SYSTEM_TIME AS OF a stream: Spark has no temporal (versioned) join; join the "
           "stream with a bounded table (a lookup), or with the other stream on an interval "
           "(AND %s BETWEEN %s - INTERVAL '1' HOUR AND %s) and keep the latest version, or "
           "use the embedded engine",
           time_col(L), time_col(R), time_col(R));
    return;
  }
  if (ls && rs) {
    check_stream_stream_join(x, p);
    return;
  }
  /* Stream-static: Spark keeps the stream on the preserved side. */
  const char *jn = dp_join_name(k);
  if (k == DP_J_FULL)
    refuse(x, p->span,
           "FULL JOIN of a stream and a bounded table: Spark cannot emit the bounded side's "
           "unmatched rows of an unending stream; use %s JOIN with the stream on the left",
           ls ? "a LEFT" : "a RIGHT");
  else if ((k == DP_J_LEFT || k == DP_J_SEMI || k == DP_J_ANTI) && rs)
    refuse(x, p->span,
           "%s with the stream on the right and a bounded table on the left: Spark supports "
           "it only with the stream on the left; swap the sides (stream %s table)",
           jn, jn);
  else if (k == DP_J_RIGHT && ls)
    refuse(x, p->span,
           "RIGHT JOIN with the stream on the left and a bounded table on the right: Spark "
           "supports it only with the stream on the right; write stream LEFT JOIN table");
}

static void check_union(rctx *x, const dp_plan *p) {
  bool s = false, b = false;
  for (int i = 0; i < p->ninputs; i++) {
    if (stream(p->inputs[i])) s = true;
    else b = true;
  }
  if (s && b)
    refuse(x, p->span,
           "UNION of a stream and a bounded input: Spark cannot union streaming and batch "
           "inputs; make the bounded input a stream too (a filesystem table with "
           "'source.monitor-interval', or a Kafka topic), or union the bounded rows in batch "
           "mode");
}

static void check_setop(rctx *x, const dp_plan *p) {
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  bool except = p->u.setop.except;
  if (except ? !stream(R) : !stream(L) && !stream(R)) return;
  refuse(x, p->span,
         "%s with a stream%s: Spark refuses it on streaming queries; write it as a%s JOIN "
         "with the stream on the left and a bounded table on the right",
         except ? "EXCEPT" : "INTERSECT", except ? " on the right" : "",
         except ? "n ANTI" : " SEMI");
}

static void check_window(rctx *x, const dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  if (!stream(in)) return;
  const dp_window_spec *w = &p->u.window;
  dp_span at = w->span.line ? w->span : p->span;
  if (w->kind == DP_WIN_CUMULATE) {
    refuse(x, at,
           "CUMULATE on a stream: Spark has no cumulating windows (its window() and "
           "session_window() are tumbling, sliding and session windows); aggregate per TUMBLE "
           "of the step and add the steps up in the consumer, use HOP (slide = step, size = "
           "the max size) if overlapping windows will do, or use the embedded engine");
    return;
  }
  int attr = dp_analyze_attr(in, w->time_col);
  if (attr == -2 && x->mode == DP_MODE_APPEND)
    refuse(x, at,
           "a window on processing time in append mode: Spark closes a streaming window only "
           "when an event-time watermark passes it, and a PROCTIME() column has none; window "
           "on an event-time column with a WATERMARK, or use update mode (SET "
           "'dipper.output-mode' = 'update')");
}

static void check_aggregate(rctx *x, const dp_plan *p) {
  if (!stream(p->inputs[0])) return;
  for (int i = 0; i < p->u.aggregate.naggs; i++) {
    const dp_agg_call *c = &p->u.aggregate.aggs[i];
    if (!c->distinct) continue;
    const char *fn = c->fn ? c->fn->name : "the aggregate";
    refuse(x, c->span.line ? c->span : p->span,
           "%s(DISTINCT ...) on a stream: Spark has no distinct aggregates on streaming "
           "queries; use approx_count_distinct(...) for a count, or deduplicate first (SELECT "
           "DISTINCT in a view with the event-time column) and aggregate that",
           fn);
    return;
  }
  const dp_plan *w = p->u.aggregate.window;
  if (w && w->u.window.kind == DP_WIN_SESSION && x->mode == DP_MODE_UPDATE)
    refuse(x, p->span,
           "a session window aggregation in update mode: Spark runs session windows on streams "
           "only in append or complete mode; use append mode (SET 'dipper.output-mode' = "
           "'append'), or a TUMBLE/HOP window in update mode");
}

static void check_watermark(rctx *x, const dp_plan *p) {
  if (!stream(p->inputs[0]) || p->u.watermark.delay >= 0) return;
  const char *col = dp_analyze_col_name(&p->schema, p->u.watermark.time_col);
  refuse(x, p->span,
         "this WATERMARK is not the time column minus a constant interval: Spark's watermark "
         "is an event-time column and a fixed delay; write WATERMARK FOR %s AS %s - INTERVAL "
         "'5' SECOND (or AS %s for no delay)",
         col, col, col);
}

/* Spark's guard against chained stateful operators (its global-watermark
** correctness check): outside append mode an aggregation re-emits rows that a
** stateful operator above it would take for late ones. */
static bool stateful(const dp_plan *p) {
  if (!any_stream_input(p)) return false;
  switch (p->kind) {
  case DP_P_AGGREGATE: case DP_P_DISTINCT: return true;
  case DP_P_JOIN: return stream(p->inputs[0]) && stream(p->inputs[1]);
  case DP_P_DEDUPLICATE: {
    if (dp_spark_dedup_within_watermark(p)) return true;
    for (int i = 0; i < p->u.dedup.nkeys; i++)
      if (dp_analyze_attr(p->inputs[0], p->u.dedup.keys[i]) >= 0) return true;
    return false;
  }
  default: return false;
  }
}

static void check_chain(rctx *x, const dp_plan *p) {
  if (x->mode == DP_MODE_APPEND || !stateful(p)) return;
  const dp_plan *inner = aggregate_below(p);
  if (!inner) return;
  refuse(x, p->span,
         "a stateful operator over the result of %s in %s mode: Spark runs chained stateful "
         "operators only in append mode (in %s mode the inner aggregation re-emits rows that "
         "the outer operator would drop as late); window both over event time (the outer one "
         "over the inner window's window_time) and use append mode (SET 'dipper.output-mode' "
         "= 'append')",
         inner->kind == DP_P_DISTINCT ? "SELECT DISTINCT" : "an aggregation", mode_name(x->mode),
         mode_name(x->mode));
}

/* Spark's AsOfJoin is a batch operator (its rewrite is a join and an
** aggregation over the whole right side): UnsupportedOperationChecker
** refuses it on a stream. */
static void check_asof(rctx *x, const dp_plan *p) {
  if (!any_stream_input(p)) return;
  refuse(x, p->span,
         "an ASOF JOIN on a stream: Spark runs as-of joins (Dataset.joinAsOf) only in batch "
         "queries; run this statement in batch mode (SET 'execution.runtime-mode' = 'batch'), "
         "or on the embedded engine, which runs it on streams with watermarks");
}

/* Flink's idle state retention has no counterpart in Structured Streaming:
** its aggregations, deduplications and joins keep state until a watermark
** removes it (only flatMapGroupsWithState's timeouts expire keys, and SQL
** does not reach them).  Refused rather than ignored. */
static void check_ttl(rctx *x, const dp_plan *p) {
  if (!stream(p) || (p->props.state_ttl[0] <= 0 && p->props.state_ttl[1] <= 0)) return;
  refuse(x, p->span,
         "'table.exec.state.ttl' (or a STATE_TTL hint) would bound the state of this %s, but "
         "Spark Structured Streaming has no idle state retention: its state is removed only by "
         "a watermark. Bound it by one (a window over an event-time column with a watermark, "
         "or the event-time column among the keys), or run it on the embedded engine",
         p->kind == DP_P_AGGREGATE ? "aggregation"
         : p->kind == DP_P_DISTINCT ? "SELECT DISTINCT"
         : p->kind == DP_P_DEDUPLICATE ? "deduplication" : "operator");
}

static void check_node(rctx *x, const dp_plan *p) {
  if (!p) return;
  for (int i = 0; i < p->ninputs; i++) check_node(x, p->inputs[i]);
  int before = x->d->count;
  check_ttl(x, p);
  if (x->d->count != before) return;
  switch (p->kind) {
  case DP_P_LIMIT: check_limit(x, p); break;
  case DP_P_SORT: check_sort(x, p); break;
  case DP_P_OVER: check_over(x, p); break;
  case DP_P_TOPN: check_topn(x, p); break;
  case DP_P_DEDUPLICATE: check_dedup(x, p); break;
  case DP_P_JOIN: check_join(x, p); break;
  case DP_P_ASOF_JOIN: check_asof(x, p); break;
  case DP_P_UNION: check_union(x, p); break;
  case DP_P_SETOP: check_setop(x, p); break;
  case DP_P_WINDOW: check_window(x, p); break;
  case DP_P_AGGREGATE: check_aggregate(x, p); break;
  case DP_P_WATERMARK: check_watermark(x, p); break;
  default: break;
  }
  /* One message per node: the chain rule speaks only for a node that is
     otherwise fine. */
  if (x->d->count == before) check_chain(x, p);
}

int dp_spark_stream_check(const dp_query_plan *q, dp_diags *d) {
  if (!q || !q->streaming) return DIPPER_OK;
  rctx x = {.d = d, .q = q};
  for (int r = 0; r < q->nroots; r++) {
    const dp_plan *root = q->roots[r];
    if (!root || root->props.bounded) continue;
    x.mode = dp_analyze_output_mode(q, root);
    check_node(&x, root);
  }
  return x.rc;
}

/* The first node under p that keeps state across micro-batches, or NULL. */
static const dp_plan *state_kept(const dp_plan *p) {
  if (!p) return NULL;
  for (int i = 0; i < p->ninputs; i++) {
    const dp_plan *s = state_kept(p->inputs[i]);
    if (s) return s;
  }
  if (!any_stream_input(p)) return NULL;
  switch (p->kind) {
  case DP_P_AGGREGATE: case DP_P_DISTINCT: case DP_P_DEDUPLICATE: case DP_P_OVER:
  case DP_P_TOPN: case DP_P_SORT: case DP_P_LIMIT:
    return p;
  case DP_P_JOIN: return stream(p->inputs[0]) && stream(p->inputs[1]) ? p : NULL;
  default: return NULL;
  }
}

static const char *state_name(const dp_plan *p) {
  switch (p->kind) {
  case DP_P_AGGREGATE: return "an aggregation";
  case DP_P_DISTINCT: return "SELECT DISTINCT";
  case DP_P_DEDUPLICATE: return "a deduplication";
  case DP_P_OVER: return "an OVER aggregation";
  case DP_P_TOPN: return "a Top-N";
  case DP_P_SORT: return "an ORDER BY";
  case DP_P_LIMIT: return "a LIMIT";
  default: return "a join of two streams";
  }
}

int dp_spark_realtime_check(const dp_query_plan *q, const char *trigger, dp_diags *d) {
  if (!q || !q->streaming || !trigger || strncmp(trigger, "real-time", 9) != 0) return DIPPER_OK;
  rctx x = {.d = d, .q = q};
  for (int r = 0; r < q->nroots; r++) {
    const dp_plan *root = q->roots[r];
    const dp_plan *s = root && !root->props.bounded ? state_kept(root) : NULL;
    if (s)
      refuse(&x, s->span,
             "%s keeps state between micro-batches, and Spark's real-time mode ('dipper.trigger' = "
             "'%s') runs stateless queries only (filters, projections, unions, joins with a "
             "bounded table): use a 'processing-time' trigger for this statement",
             state_name(s), trigger);
  }
  return x.rc;
}

bool dp_spark_dedup_within_watermark(const dp_plan *p) {
  if (p->kind != DP_P_DEDUPLICATE) return false;
  if (p->u.dedup.within_watermark) return true;
  const dp_plan *in = p->inputs[0];
  if (p->props.bounded || in->props.bounded || p->u.dedup.order_col < 0 || p->u.dedup.keep_last)
    return false;
  for (int i = 0; i < p->u.dedup.nkeys; i++)
    if (dp_analyze_attr(in, p->u.dedup.keys[i]) >= 0) return false;
  return dp_analyze_attr(in, p->u.dedup.order_col) >= 0;
}

int dp_spark_stream_confs(const dp_catalog *c, const char **keys, const char **values, int cap) {
  int n = 0;
  /* options.c accepts only "min" and "max", stored lower-case: Spark's words */
  const char *policy = c ? dp_catalog_option(c, "dipper.spark.multiple-watermark-policy") : NULL;
  if (n < cap) {
    keys[n] = "spark.sql.streaming.multipleWatermarkPolicy";
    values[n] = policy ? policy : "min";
  }
  n++;
  return n;
}
