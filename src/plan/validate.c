/*
** validate.c — refuses, at compile time, what no engine can run incrementally.
**
** Reads the props that analyze.c recorded and applies the rules of streaming
** SQL that Spark Structured Streaming and Flink enforce at run time (or that
** would silently give an answer that never settles): ORDER BY and LIMIT on a
** stream, output modes a plan cannot produce, windows without an event-time
** attribute, outer joins that can never emit their padded rows, state that is
** never cleaned, chains of stateful operators outside append mode, sinks that
** cannot take updates.  In batch mode it refuses sources that never end.
** Subqueries the binder left in expressions run apart, once per query run:
** a stream in one is refused, and so is a correlated scalar subquery that
** does not aggregate (Spark's rule); the correlated ones an engine cannot
** decorrelate are that engine's to refuse (the embedded one's: exec.c).
**
** Every refusal is DIPPER_STREAMING at the clause's span, saying what is
** wrong, why, and what to write instead.  Owns nothing; never changes the plan.
*/
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/compiler.h"
#include "plan/analyze.h"
#include "plan/analyze_int.h"

typedef struct vctx {
  dp_diags *d;
  const dp_catalog *cat;
  const dp_query_plan *q;
  const dp_plan *root;
  unsigned mode;          /* effective output mode of the root being checked */
  int rc;
  /* Nodes already refused, so that one mistake gives one message. */
  const dp_plan *refused[64];
  int nrefused;
} vctx;

#define BATCH_HINT "run in batch mode (SET 'execution.runtime-mode' = 'batch')"

static void refuse_v(vctx *x, const dp_plan *p, dp_span span, const char *fmt, va_list ap)
    DP_PRINTF(4, 0)
    ;
static void refuse(vctx *x, const dp_plan *p, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;
static void refuse_at(vctx *x, const dp_plan *p, dp_span span, const char *fmt, ...)
    DP_PRINTF(4, 5)
    ;

static void refuse_v(vctx *x, const dp_plan *p, dp_span span, const char *fmt, va_list ap) {
  char msg[2048];
  vsnprintf(msg, sizeof msg, fmt, ap);
  dp_error(x->d, DIPPER_STREAMING, span, "%s", msg);
  if (!x->rc) x->rc = DIPPER_STREAMING;
  if (x->nrefused < (int)(sizeof x->refused / sizeof x->refused[0])) x->refused[x->nrefused++] = p;
}

/* Refuse node p, pointing at the clause that produced it. */
static void refuse(vctx *x, const dp_plan *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  refuse_v(x, p, p->span, fmt, ap);
  va_end(ap);
}

/* Refuse node p, pointing at a finer place (an argument) when one is known. */
static void refuse_at(vctx *x, const dp_plan *p, dp_span span, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  refuse_v(x, p, span.line > 0 ? span : p->span, fmt, ap);
  va_end(ap);
}

static bool is_refused(const vctx *x, const dp_plan *p) {
  for (int i = 0; i < x->nrefused; i++)
    if (x->refused[i] == p) return true;
  return false;
}

static bool any_refused_below(const vctx *x, const dp_plan *p) {
  if (!p) return false;
  if (is_refused(x, p)) return true;
  for (int i = 0; i < p->ninputs; i++)
    if (any_refused_below(x, p->inputs[i])) return true;
  return false;
}

static const char *mode_name(unsigned m) {
  return m == DP_MODE_APPEND ? "append" : m == DP_MODE_UPDATE ? "update" : "complete";
}

static bool unbounded_input(const dp_plan *p) {
  for (int i = 0; i < p->ninputs; i++)
    if (!p->inputs[i]->props.bounded) return true;
  return false;
}

static bool keeps_stream_state(const dp_plan *p) {
  return !p->props.bounded &&
         (p->props.state == DP_STATE_WATERMARK || p->props.state == DP_STATE_KEYS ||
          p->props.state == DP_STATE_UNBOUNDED);
}

static void upper_into(char *dst, size_t cap, const char *s) {
  size_t i = 0;
  for (; s && s[i] && i + 1 < cap; i++) dst[i] = (char)toupper((unsigned char)s[i]);
  dst[i] = '\0';
}

/* The table a column comes from, looking through row-preserving nodes. */
static const dp_table_def *source_table(const dp_plan *p, int col) {
  for (int guard = 0; p && guard < 10000; guard++) {
    const dp_plan *in = p->ninputs > 0 ? p->inputs[0] : NULL;
    switch (p->kind) {
    case DP_P_SCAN: return p->u.scan.table;
    case DP_P_PROJECT:
      if (col < 0 || col >= p->u.project.n) return NULL;
      col = dp_expr_as_column(p->u.project.exprs[col]);
      if (col < 0) return NULL;
      p = in;
      break;
    case DP_P_AGGREGATE:
      if (col < 0 || col >= p->u.aggregate.ngroup) return NULL;
      col = dp_expr_as_column(p->u.aggregate.group[col]);
      if (col < 0) return NULL;
      p = in;
      break;
    case DP_P_JOIN: case DP_P_ASOF_JOIN:
      if (in && col >= in->schema.ncols && p->ninputs > 1) {
        col -= in->schema.ncols;
        p = p->inputs[1];
      } else {
        p = in;
      }
      break;
    default:
      if (!in || col >= in->schema.ncols) return NULL;
      p = in;
      break;
    }
  }
  return NULL;
}

static const char *window_name(const dp_window_spec *w) {
  if (w->syntax == DP_WSYN_SPARK) return w->kind == DP_WIN_SESSION ? "session_window()" : "window()";
  switch (w->kind) {
  case DP_WIN_TUMBLE: return "TUMBLE";
  case DP_WIN_HOP: return "HOP";
  case DP_WIN_CUMULATE: return "CUMULATE";
  case DP_WIN_SESSION: return "SESSION";
  }
  return "the window";
}

static const char *node_phrase(const dp_plan *p) {
  switch (p->kind) {
  case DP_P_AGGREGATE: return p->u.aggregate.window ? "a window aggregation" : "an aggregation";
  case DP_P_JOIN: return "a join";
  case DP_P_ASOF_JOIN: return "an ASOF JOIN";
  case DP_P_DISTINCT:
    return p->inputs[0]->kind == DP_P_UNION && !p->inputs[0]->u.union_.all ? "UNION"
                                                                              : "SELECT DISTINCT";
  case DP_P_DEDUPLICATE: return "a deduplication";
  case DP_P_TOPN: return "a Top-N";
  case DP_P_OVER: return "an OVER aggregation";
  case DP_P_UNION: return "UNION";
  case DP_P_SETOP: return p->u.setop.except ? "EXCEPT" : "INTERSECT";
  case DP_P_SORT: return "ORDER BY";
  case DP_P_LIMIT: return "LIMIT";
  default: return dp_plan_kind_name(p->kind);
  }
}

/* A time column to show in a suggested condition: an attribute, else a
** timestamp column, else a placeholder. */
static const char *time_col_name(const dp_plan *p) {
  for (int i = 0; i < p->schema.ncols; i++)
    if (dp_analyze_attr(p, i) >= 0) return p->schema.cols[i].name;
  for (int i = 0; i < p->schema.ncols; i++)
    if (p->schema.cols[i].type && dp_type_is_timestamp(p->schema.cols[i].type))
      return p->schema.cols[i].name;
  return "ts";
}

/* "COUNT per user_id" for an aggregation, for messages. */
static void describe_aggregate(const dp_plan *p, char *buf, size_t cap) {
  char fn[64] = "the aggregate";
  if (p->u.aggregate.naggs > 0 && p->u.aggregate.aggs[0].fn)
    upper_into(fn, sizeof fn, p->u.aggregate.aggs[0].fn->name);
  if (p->u.aggregate.ngroup == 0) {
    snprintf(buf, cap, "the global %s", fn);
    return;
  }
  size_t n = (size_t)snprintf(buf, cap, "%s per ", fn);
  for (int i = 0; i < p->u.aggregate.ngroup && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "",
                          dp_analyze_col_name(&p->schema, i));
}

static const dp_plan *first_aggregate(const dp_plan *p) {
  if (!p) return NULL;
  if (p->kind == DP_P_AGGREGATE) return p;
  for (int i = 0; i < p->ninputs; i++) {
    const dp_plan *a = first_aggregate(p->inputs[i]);
    if (a) return a;
  }
  return NULL;
}

/* ---- the rules, one function each ---- */

static void check_watermark(vctx *x, const dp_plan *p) {
  int c = p->u.watermark.time_col;
  const dp_type *t = c >= 0 && c < p->schema.ncols ? p->schema.cols[c].type : NULL;
  if (t && dp_type_is_timestamp(t)) return;
  char tname[128] = "an unknown type";
  if (t) dp_type_print(tname, sizeof tname, t);
  const char *name = dp_analyze_col_name(&p->schema, c);
  char hint[160];
  if (dp_catalog_time_hint(hint, sizeof hint, &p->schema, name, t))
    refuse(x, p,
           "WATERMARK FOR %s needs a TIMESTAMP(3) or TIMESTAMP_LTZ(3) column, but %s is %s: "
           "declare a computed column (%s) and put the watermark on it",
           name, name, tname, hint);
  else
    refuse(x, p,
           "WATERMARK FOR %s needs a TIMESTAMP(3) or TIMESTAMP_LTZ(3) column, but %s is %s, "
           "which holds no point in time: put the watermark on a timestamp column",
           name, name, tname);
}

/* The UNION that column *col of p comes from through projections and filters, with
** *col its column there; NULL when there is none. */
static const dp_plan *union_below(const dp_plan *p, int *col) {
  for (int guard = 0; p && guard < 10000; guard++) {
    switch (p->kind) {
    case DP_P_UNION: return p;
    case DP_P_PROJECT:
      if (*col < 0 || *col >= p->u.project.n) return NULL;
      *col = dp_expr_as_column(p->u.project.exprs[*col]);
      if (*col < 0) return NULL;
      p = p->inputs[0];
      break;
    case DP_P_FILTER: p = p->inputs[0]; break;
    default: return NULL;
    }
  }
  return NULL;
}

static void check_window(vctx *x, const dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  if (in->props.bounded) return;
  int c = p->u.window.time_col;
  if (dp_analyze_attr(in, c) != -1) return;
  const char *col = dp_analyze_col_name(&in->schema, c);
  const dp_table_def *t = source_table(in, c);
  char tname[128] = "a column";
  const dp_type *ty = c >= 0 && c < in->schema.ncols ? in->schema.cols[c].type : NULL;
  if (ty) dp_type_print(tname, sizeof tname, ty);
  /* A union keeps the attribute only when every input has one: name the input that
     lacks it rather than a table that has a watermark. */
  int uc = c;
  const dp_plan *u = union_below(in, &uc);
  if (u) {
    for (int i = 0; i < u->ninputs; i++) {
      if (dp_analyze_attr(u->inputs[i], uc) != -1) continue;
      const dp_table_def *ut = source_table(u->inputs[i], uc);
      const char *ucol = dp_analyze_col_name(&u->inputs[i]->schema, uc);
      refuse_at(x, p, p->u.window.span,
                "%s needs an event-time attribute, but %s comes from a UNION whose input %d "
                "has no watermark on it, and a union's column is an event-time attribute only "
                "when it is one in every input: declare WATERMARK FOR %s AS %s - INTERVAL '5' "
                "SECOND on %s%s%s, or leave that input out of the union",
                window_name(&p->u.window), col, i + 1, ucol, ucol, ut ? "`" : "that input's table",
                ut ? ut->name : "", ut ? "`" : "");
      return;
    }
  }
  /* The window spec's span is the time column argument when the binder knows it. */
  refuse_at(x, p, p->u.window.span,
         "%s needs an event-time attribute, but %s is a plain %s column without a watermark, "
         "so no window would ever close: declare WATERMARK FOR %s AS %s - INTERVAL '5' SECOND on "
         "the table%s%s%s, or window on PROCTIME()",
         window_name(&p->u.window), col, tname, col, col, t ? " `" : "", t ? t->name : "",
         t ? "`" : "");
}

static bool sort_on_time_ascending(const dp_plan *p) {
  const dp_sort_key *k0 = p->u.sort.nkeys > 0 ? &p->u.sort.keys[0] : NULL;
  if (!k0 || k0->desc) return false;
  return dp_analyze_attr(p->inputs[0], dp_expr_as_column(k0->expr)) != -1;
}

static void check_sort(vctx *x, const dp_plan *p, const dp_plan *parent) {
  const dp_plan *in = p->inputs[0];
  if (in->props.bounded) return;
  if (x->q->output_mode == DP_MODE_COMPLETE && (in->props.modes & DP_MODE_COMPLETE)) return;
  bool under_limit = parent && parent->kind == DP_P_LIMIT;
  if (sort_on_time_ascending(p) && !under_limit) return;
  refuse(x, p,
         "ORDER BY on an unbounded stream never finishes: sort within windows (window Top-N: "
         "ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY ...)), sort an "
         "aggregation in complete mode (SET 'dipper.output-mode' = 'complete'), order by an "
         "event-time attribute ascending without LIMIT, or " BATCH_HINT);
}

static void check_limit(vctx *x, const dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  if (in->props.bounded) return;
  if (x->q->output_mode == DP_MODE_COMPLETE && (in->props.modes & DP_MODE_COMPLETE)) return;
  if (in->kind == DP_P_SORT && is_refused(x, in)) return; /* ORDER BY .. LIMIT: one message */
  refuse(x, p,
         "LIMIT on an unbounded stream depends on which rows arrive first and never finishes: "
         "keep the top rows per window (window Top-N: ROW_NUMBER() OVER (PARTITION BY "
         "window_start, window_end ORDER BY ...) <= N), limit an aggregation in complete mode "
         "(SET 'dipper.output-mode' = 'complete'), or " BATCH_HINT);
}

/* The SCAN a row-preserving chain (watermark, filter, projection) reads. */
static const dp_plan *scan_below(const dp_plan *p) {
  while (p && p->kind != DP_P_SCAN &&
         (p->kind == DP_P_WATERMARK || p->kind == DP_P_FILTER || p->kind == DP_P_PROJECT))
    p = p->inputs[0];
  return p && p->kind == DP_P_SCAN ? p : NULL;
}

/* FOR SYSTEM_TIME AS OF: the left row's time picks the right side's version. */
static void check_temporal(vctx *x, const dp_plan *p) {
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  const dp_expr *as_of = p->u.join.as_of;
  int c = dp_expr_as_column(as_of);
  int attr = dp_analyze_attr(L, c);
  if (attr == -1) {
    const char *col = c >= 0 ? dp_analyze_col_name(&L->schema, c) : "the expression";
    const dp_table_def *t = c >= 0 ? source_table(L, c) : NULL;
    refuse_at(x, p, as_of->span,
              "FOR SYSTEM_TIME AS OF needs a time attribute of the left side, but %s is not one "
              "(no watermark governs it): declare WATERMARK FOR %s AS %s - INTERVAL '5' SECOND "
              "on %s%s%s, or join AS OF a PROCTIME() column for a lookup join",
              col, col, col, t ? "`" : "the table", t ? t->name : "", t ? "`" : "");
    return;
  }
  /* A lookup join: a bounded table is read whole, and AS OF processing time
     reads the table's current rows (Flink's lookup join), so neither needs versions. */
  if (R->props.bounded || attr == -2) return;
  const dp_plan *scan = scan_below(R);
  const dp_table_def *t = scan ? scan->u.scan.table : NULL;
  if (t && t->npk == 0) {
    refuse_at(x, p, scan->span,
              "FOR SYSTEM_TIME AS OF joins each row with the version of `%s` valid at its time, "
              "which needs a versioned table, but `%s` has no primary key: declare PRIMARY KEY "
              "(..) NOT ENFORCED (and a WATERMARK) on `%s`, or use a regular join",
              t->name, t->name, t->name);
    return;
  }
  if (attr >= 0 && !dp_analyze_has_watermark(R)) {
    const char *name = t ? t->name : "the right side";
    refuse_at(x, p, scan ? scan->span : p->span,
              "an event-time temporal join keeps the versions of `%s` until the watermark passes "
              "them, but `%s` has no watermark: declare WATERMARK FOR <its update time> AS ... - "
              "INTERVAL '1' SECOND on it, or join AS OF a PROCTIME() column",
              name, name);
  }
}

/* A filesystem table is a stream only with 'source.monitor-interval': say
** so when such a side makes a join one of two streams. */
static const char *watched_files_hint(const dp_plan *L, const dp_plan *R) {
  const dp_plan *side[2] = {scan_below(L), scan_below(R)};
  for (int i = 0; i < 2; i++) {
    const dp_table_def *t = side[i] ? side[i]->u.scan.table : NULL;
    bool watched = false;
    for (int k = 0; t && t->connector && !strcmp(t->connector, "filesystem") && k < t->noptions; k++)
      watched |= !strcmp(t->options[k].key, "source.monitor-interval");
    if (watched)
      return "; or, to join with the files as a bounded table (read once), leave "
             "'source.monitor-interval' out of the filesystem table";
  }
  return "";
}

static void check_join(vctx *x, const dp_plan *p) {
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  dp_join_kind k = p->u.join.kind;
  if (L->props.bounded && R->props.bounded) return;
  if (p->u.join.as_of) {
    check_temporal(x, p);
    return;
  }
  const char *jn = dp_join_name(k);
  if (L->props.bounded != R->props.bounded) {
    bool stream_left = R->props.bounded;
    /* The preserved side must be the stream.  A SEMI join of a table against a
       stream emits a table row once, on its first match, and never takes it
       back, so it may go either way; an ANTI join could only emit at the end. */
    bool bad = k == DP_J_FULL || (k == DP_J_LEFT && !stream_left) ||
               (k == DP_J_RIGHT && stream_left) || (k == DP_J_ANTI && !stream_left);
    if (!bad) return;
    refuse(x, p,
           "%s of a stream and a bounded table would emit the unmatched rows of the bounded "
           "side only once the stream ends, which it never does: keep the stream on the "
           "preserved side (stream LEFT JOIN table, table RIGHT JOIN stream), use an INNER "
           "JOIN, or " BATCH_HINT,
           jn);
    return;
  }
  if (k == DP_J_INNER || k == DP_J_CROSS) return;
  /* An outer equi-join with an updating side takes its padded rows back as
     matches arrive (exec/op_join_retract.c); check_chain says what it reads. */
  if (dp_analyze_retract_join(p) && x->mode == DP_MODE_UPDATE) return;
  bool lwm = dp_analyze_has_watermark(L), rwm = dp_analyze_has_watermark(R);
  bool bound = p->props.has_time_bound;
  if (p->props.state == DP_STATE_WATERMARK) return; /* windows or a time range on both sides */
  char missing[512];
  size_t n = 0;
  missing[0] = '\0';
  if (!lwm) n += (size_t)snprintf(missing + n, sizeof missing - n, "the left side has no watermark");
  if (!rwm && n < sizeof missing)
    n += (size_t)snprintf(missing + n, sizeof missing - n, "%sthe right side has no watermark",
                          n ? " and " : "");
  if (!bound && n < sizeof missing)
    snprintf(missing + n, sizeof missing - n, "%sthe condition has no time range between the "
             "two sides' event times", n ? ", and " : "");
  const char *lt = time_col_name(L), *rt = time_col_name(R);
  refuse(x, p,
         "%s of two streams must know when a row can no longer find a match, but %s: declare "
         "a WATERMARK on both sources and bound the times in the ON clause, e.g. AND %s "
         "BETWEEN %s - INTERVAL '1' HOUR AND %s + INTERVAL '1' HOUR%s",
         jn, missing, lt, rt, rt, watched_files_hint(L, R));
}

/* An as-of join of two streams emits a left row once the watermark says its
** match is known, and drops right rows by the watermark: both times must be
** event-time attributes; looking forward, a left row without a match would
** wait forever, so TOLERANCE bounds the wait.  A stream against a bounded
** table matches each stream row at once and needs none of that; a bounded
** left side against a stream would wait for the stream's end.  (Spark has no
** streaming as-of join at all: spark/stream_rules.c.) */
static void check_asof(vctx *x, const dp_plan *p) {
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  if (L->props.bounded && R->props.bounded) return;
  if (L->props.bounded) {
    refuse(x, p,
           "an ASOF JOIN of a bounded table on the left and a stream on the right would match "
           "the table's rows only once the stream ends, which it never does: put the stream "
           "on the left, or " BATCH_HINT);
    return;
  }
  if (L->props.changelog != DP_CHANGELOG_INSERT_ONLY || R->props.changelog != DP_CHANGELOG_INSERT_ONLY) {
    refuse(x, p,
           "an ASOF JOIN emits each left row once, but its %s side revises rows it has already "
           "emitted: join the rows before they are aggregated, or window the aggregation and "
           "use append mode (SET 'dipper.output-mode' = 'append')",
           L->props.changelog != DP_CHANGELOG_INSERT_ONLY ? "left" : "right");
    return;
  }
  if (R->props.bounded) return; /* stream-table: each left row is matched at once */
  const char *lt = dp_analyze_col_name(&L->schema, p->u.asof.left_time);
  const char *rt = dp_analyze_col_name(&R->schema, p->u.asof.right_time);
  bool lwm = dp_analyze_attr(L, p->u.asof.left_time) >= 0;
  bool rwm = dp_analyze_attr(R, p->u.asof.right_time) >= 0;
  if (!lwm || !rwm) {
    refuse(x, p,
           "an ASOF JOIN of two streams emits a left row once the watermark says its match "
           "is known, but %s%s%s%s%s has no watermark: declare WATERMARK FOR <time> AS <time> - "
           "INTERVAL '5' SECOND on the table of each side's time",
           lwm ? "" : "the left time ", lwm ? "" : lt, !lwm && !rwm ? " and " : "",
           rwm ? "" : "the right time ", rwm ? "" : rt);
    return;
  }
  bool back = p->u.asof.op == DP_ASOF_GE || p->u.asof.op == DP_ASOF_GT;
  if (!back && p->u.asof.tolerance < 0)
    refuse(x, p,
           "an ASOF JOIN that looks forward (%s %s %s) on streams waits for a left row's match "
           "until the watermark passes it, and forever when none comes: add a TOLERANCE "
           "(TOLERANCE INTERVAL '1' MINUTE) so that the wait ends",
           lt, dp_asof_op_name(p->u.asof.op), rt);
}

/* SELECT DISTINCT (and UNION without ALL, a DISTINCT over UNION ALL) without
** a watermark or a state TTL keeps every distinct row forever: accepted, as
** Flink accepts it, with the warning of analyze_ttl.c
** (dp_validate_warnings). */
/* The binder writes UNION as a DISTINCT over UNION (all=false), and the
** DISTINCT keeps the rows (the union below it only concatenates,
** exec/op_union.c); a bare deduplicating union, which only a plan built by
** hand can hold, has nothing to keep them. */
static void check_union(vctx *x, const dp_plan *p) {
  if (p->u.union_.all || p->props.bounded || p->props.state != DP_STATE_KEYS) return;
  refuse(x, p,
         "UNION (without ALL) on a stream is a DISTINCT over UNION ALL: put a DISTINCT node above "
         "this union (as the binder does for UNION in SQL), or write UNION ALL");
}

static void check_setop(vctx *x, const dp_plan *p) {
  if (p->props.bounded) return;
  const char *op = p->u.setop.except ? "EXCEPT" : "INTERSECT";
  refuse(x, p,
         "%s on a stream keeps every row of both inputs forever and revises its answer with "
         "each new row: write it as a join with a time-range condition (%s JOIN over "
         "watermarked sources), or " BATCH_HINT,
         op, p->u.setop.except ? "ANTI" : "SEMI");
}

static void check_over(vctx *x, const dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  if (in->props.bounded) return;
  const dp_sort_key *k0 = p->u.over.norder > 0 ? &p->u.over.order[0] : NULL;
  int c = k0 ? dp_expr_as_column(k0->expr) : -1;
  if (!k0 || dp_analyze_attr(in, c) == -1) {
    refuse(x, p,
           "OVER on a stream must be ordered by a time attribute, so that each row is "
           "aggregated once its predecessors are known: write ORDER BY %s (an event-time column "
           "with a watermark, or a PROCTIME() column)%s",
           time_col_name(in),
           k0 ? ". Flink 2.3 runs an OVER ordered by another column as an updating changelog (each "
                "row's value changed again as rows come before it), which dipper does not yet; for "
                "the first N rows of each key write a Top-N (ROW_NUMBER() OVER (...) AS rn in a "
                "subquery, then WHERE rn <= N)"
              : " in the OVER clause");
    return;
  }
  if (k0->desc) {
    refuse(x, p,
           "OVER ... ORDER BY %s DESC on a stream would need the rows that have not arrived "
           "yet: order by the time attribute ascending (ORDER BY %s)",
           dp_analyze_col_name(&in->schema, c), dp_analyze_col_name(&in->schema, c));
    return;
  }
  if (p->u.over.has_frame && !p->u.over.rows && p->u.over.norder > 1) {
    refuse(x, p,
           "a RANGE frame on a stream is measured on the time attribute alone: order by %s "
           "only, or use a ROWS frame",
           dp_analyze_col_name(&in->schema, c));
  }
}

static void check_topn(vctx *x, const dp_plan *p) {
  if (p->props.bounded || x->q->output_mode != DP_MODE_APPEND) return;
  if ((p->props.modes & DP_MODE_APPEND) || any_refused_below(x, p)) return;
  refuse(x, p,
         "Top-N without window_start and window_end in PARTITION BY revises its ranking with "
         "every new row, so it cannot run in append mode: rank within windows (PARTITION BY "
         "window_start, window_end of a window TVF over an event-time column), or use update "
         "mode (SET 'dipper.output-mode' = 'update')");
}

/* The nearest stateful operator below p, looking through stateless nodes. */
static const dp_plan *stateful_below(const dp_plan *p) {
  for (int i = 0; i < p->ninputs; i++) {
    const dp_plan *in = p->inputs[i];
    if (keeps_stream_state(in) && in->kind != DP_P_SORT) return in;
    if (in->props.state == DP_STATE_NONE && !in->props.bounded) {
      const dp_plan *s = stateful_below(in);
      if (s) return s;
    }
  }
  return NULL;
}

/* node_phrase without its article: "aggregation" for "an aggregation". */
static const char *bare_phrase(const dp_plan *p) {
  const char *s = node_phrase(p);
  if (strncmp(s, "a ", 2) == 0) return s + 2;
  if (strncmp(s, "an ", 3) == 0) return s + 3;
  return s;
}

/* How to window an operator over the final rows of `inner`, for messages. */
static void suggest_window_over(const dp_plan *inner, char *buf, size_t cap) {
  if (inner->kind == DP_P_AGGREGATE && inner->u.aggregate.window)
    snprintf(buf, cap,
             "select the inner window's window_time and window over it: "
             "TABLE(TUMBLE(TABLE inner, DESCRIPTOR(window_time), INTERVAL ..)) with GROUP BY "
             "window_start, window_end");
  else
    snprintf(buf, cap,
             "window it over an event-time column of the inner result: "
             "TABLE(TUMBLE(TABLE inner, DESCRIPTOR(%s), INTERVAL ..)) with GROUP BY "
             "window_start, window_end",
             time_col_name(inner));
}

/* What keeps an operator that cannot run in append mode from ever being final. */
static void describe_unfinal(const dp_plan *p, char *buf, size_t cap) {
  if (p->kind == DP_P_AGGREGATE) {
    describe_aggregate(p, buf, cap);
    return;
  }
  snprintf(buf, cap, "the result of %s", node_phrase(p));
}

/* The chains the embedded engine runs as changes (exec/changelog.h), in
** update mode: a plain GROUP BY over an aggregation that revises its rows
** (not one of session windows, whose merged sessions vanish without a
** deletion), a plain GROUP BY or a Top-N without a window over an
** insert-only join, an equi-join (inner or outer) with such an updating side, or a
** plain GROUP BY over that join, read through projections and filters only.  True when p is such a chain (refused here when one of its
** aggregates cannot take a row back).  Spark refuses both itself
** (spark/stream_rules.c: chained stateful operators run only in append
** mode there). */
static const dp_plan *below_stateless(const dp_plan *q) {
  while (q->kind == DP_P_PROJECT || q->kind == DP_P_FILTER) q = q->inputs[0];
  return q;
}

/* What the embedded engine can read as changes (q below projections and
** filters): an aggregation that revises its rows (not of session windows), a
** join (insert-only, or one over updating inputs), or a stream without state. */
static bool feeds_changes(const dp_plan *q) {
  if (q->kind == DP_P_AGGREGATE) {
    const dp_plan *w = q->u.aggregate.window;
    return q->props.changelog != DP_CHANGELOG_INSERT_ONLY &&
           !(w && w->kind == DP_P_WINDOW && w->u.window.kind == DP_WIN_SESSION);
  }
  if (q->kind == DP_P_JOIN)
    return !q->u.join.as_of && (q->props.changelog == DP_CHANGELOG_INSERT_ONLY ||
                                dp_analyze_retract_join(q));
  return !keeps_stream_state(q) && !stateful_below(q);
}

static bool retract_calls_ok(vctx *x, const dp_plan *p, const dp_plan *inner);

/* A plain GROUP BY (UNION's DISTINCT among them) over a UNION ALL whose
** inputs are each an updating result the engine reads as changes, or a
** stream without state: the union hands on each input's kinds. */
static bool union_chain(vctx *x, const dp_plan *p, const dp_plan *u) {
  const dp_plan *inner = NULL;
  for (int i = 0; i < u->ninputs; i++) {
    const dp_plan *q = below_stateless(u->inputs[i]);
    if (q->kind == DP_P_UNION) return false;
    if (q->props.changelog == DP_CHANGELOG_INSERT_ONLY && !keeps_stream_state(q) &&
        !stateful_below(q))
      continue;
    if ((q->kind != DP_P_AGGREGATE && q->kind != DP_P_JOIN) || !feeds_changes(q)) return false;
    if (q->kind == DP_P_JOIN && q->props.changelog == DP_CHANGELOG_INSERT_ONLY) return false;
    if (!inner) inner = q;
  }
  if (!inner) return false;
  retract_calls_ok(x, p, inner);
  return true;
}

static bool changelog_chain(vctx *x, const dp_plan *p, const dp_plan *inner) {
  if (x->mode != DP_MODE_UPDATE) return false;
  /* An equi-join (inner or outer) with an updating side (exec/op_join_retract.c). */
  if (p->kind == DP_P_JOIN)
    return dp_analyze_retract_join(p) && feeds_changes(below_stateless(p->inputs[0])) &&
           feeds_changes(below_stateless(p->inputs[1]));
  const dp_plan *q = below_stateless(p->inputs[0]);
  if (q->kind == DP_P_UNION && p->kind == DP_P_AGGREGATE && !p->u.aggregate.window)
    return union_chain(x, p, q);
  if (q != inner) return false;
  /* A Top-N without a window over an insert-only join ranks a stream of
     new rows, as over a table's (Nexmark q9). */
  if (p->kind == DP_P_TOPN && !(p->props.modes & DP_MODE_APPEND))
    return inner->kind == DP_P_JOIN && !inner->u.join.as_of &&
           inner->props.changelog == DP_CHANGELOG_INSERT_ONLY;
  if (p->kind != DP_P_AGGREGATE || p->u.aggregate.window) return false;
  if (inner->kind != DP_P_AGGREGATE && inner->kind != DP_P_JOIN) return false;
  if (!feeds_changes(inner)) return false;
  if (inner->kind == DP_P_JOIN && inner->props.changelog == DP_CHANGELOG_INSERT_ONLY)
    return !(p->props.modes & DP_MODE_APPEND); /* an event-time key: windows' rules */
  retract_calls_ok(x, p, inner);
  return true;
}

/* Refuse the first aggregate of p that cannot take a row back out of its
** result.  False when refused. */
static bool retract_calls_ok(vctx *x, const dp_plan *p, const dp_plan *inner) {
  for (int i = 0; i < p->u.aggregate.naggs; i++) {
    const dp_agg_call *c = &p->u.aggregate.aggs[i];
    const char *why = dp_analyze_retract_refusal(c);
    if (!why) continue;
    char name[32] = "this aggregate";
    if (c->fn && c->fn->name && strlen(c->fn->name) < sizeof name) {
      size_t k = 0;
      for (; c->fn->name[k]; k++) name[k] = (char)toupper((unsigned char)c->fn->name[k]);
      name[k] = '\0';
    }
    refuse_at(x, p, c->span.line ? c->span : p->span,
              "%s over the result of %s: that result revises its rows, so each "
              "revision takes the old row back out of this one, but %s",
              name, node_phrase(inner), why);
    return false;
  }
  return true;
}

static void check_chain(vctx *x, const dp_plan *p) {
  if (x->mode == DP_MODE_APPEND || !keeps_stream_state(p) || p->kind == DP_P_SORT) return;
  if (p->kind == DP_P_JOIN && p->u.join.as_of) return;
  const dp_plan *inner = stateful_below(p);
  if (!inner || any_refused_below(x, p)) return;
  if (changelog_chain(x, p, inner)) return;
  if (!(inner->props.modes & DP_MODE_APPEND)) {
    refuse(x, p,
           "%s over the result of %s can only run in append mode: in %s mode the inner "
           "operator revises rows that the outer one has already consumed; make both final per "
           "window (window the outer one over the inner's window_time, with a watermark) and use "
           "append mode (SET 'dipper.output-mode' = 'append')",
           node_phrase(p), node_phrase(inner), mode_name(x->mode));
    return;
  }
  /* The inner operator emits final rows (a window aggregation, an interval join), so
     the chain itself is fine in append mode; what stops it is the outer operator. */
  if (p->props.modes & DP_MODE_APPEND) {
    refuse(x, p,
           "%s over the result of %s runs only in append mode, where each operator hands on "
           "final rows, and both are final per window here: use append mode (SET "
           "'dipper.output-mode' = 'append')",
           node_phrase(p), node_phrase(inner));
    return;
  }
  char what[256];
  describe_unfinal(p, what, sizeof what);
  if (p->kind == DP_P_TOPN)
    refuse(x, p,
           "%s over the result of %s on a stream runs only in append mode, and this Top-N has "
           "no window: its ranking changes with every new row, so it is never final; rank "
           "within windows (PARTITION BY window_start, window_end of a window TVF over an "
           "event-time column of the inner result) and use append mode (SET "
           "'dipper.output-mode' = 'append')",
           node_phrase(p), node_phrase(inner));
  else
  {
    char how[320];
    suggest_window_over(inner, how, sizeof how);
    refuse(x, p,
           "%s over the result of %s on a stream runs only in append mode, and this %s has no "
           "window: %s changes with every new row, so it is never final; %s, and use append "
           "mode (SET 'dipper.output-mode' = 'append')",
           node_phrase(p), node_phrase(inner), bare_phrase(p), what, how);
  }
}

/* Append mode with state that nothing ever cleans. */
static void check_append_state(vctx *x, const dp_plan *p) {
  if (x->q->output_mode != DP_MODE_APPEND || p->props.bounded) return;
  if (!(p->props.modes & DP_MODE_APPEND)) return; /* the mode check speaks for it */
  if (p->props.state != DP_STATE_KEYS && p->props.state != DP_STATE_UNBOUNDED) return;
  if (p->kind == DP_P_JOIN && p->u.join.as_of) return; /* versions go as the watermark passes */
  if (p->kind == DP_P_ASOF_JOIN) return; /* check_asof: bounded by the watermark and the keys */
  if (p->kind == DP_P_JOIN) {
    const char *lt = time_col_name(p->inputs[0]), *rt = time_col_name(p->inputs[1]);
    refuse(x, p,
           "append mode needs state that the watermark can clean, but this join keeps every "
           "row of both sides forever: add watermarks on both sides and a time-range "
           "condition (AND %s BETWEEN %s - INTERVAL '1' HOUR AND %s + INTERVAL '1' HOUR), or "
           "use update mode (SET 'dipper.output-mode' = 'update')",
           lt, rt, rt);
    return;
  }
  refuse(x, p,
         "append mode needs state that the watermark can clean, but %s keeps %s: key it on an "
         "event-time column with a watermark, or use update mode (SET 'dipper.output-mode' = "
         "'update')",
         node_phrase(p), p->props.state_desc ? p->props.state_desc : "its state forever");
}

/* Update mode emits the rows that changed in a batch: on a plan that only
** ever adds rows, those are the appended ones. */
static bool mode_ok(const dp_plan *p, unsigned mode) {
  unsigned m = p->props.modes;
  return (m & mode) || (mode == DP_MODE_UPDATE && (m & DP_MODE_APPEND));
}

static const dp_plan *mode_culprit(const dp_plan *p, unsigned mode) {
  for (int i = 0; i < p->ninputs; i++)
    if (!mode_ok(p->inputs[i], mode)) return mode_culprit(p->inputs[i], mode);
  return p;
}

static void check_output_mode(vctx *x, const dp_plan *root) {
  unsigned mode = x->q->output_mode;
  if (!mode || root->props.bounded) return;
  if (mode == DP_MODE_COMPLETE && !first_aggregate(root)) {
    refuse(x, root,
           "complete mode re-emits the whole result every batch and needs an aggregation to "
           "hold it, but this query has none: use append mode (SET 'dipper.output-mode' = "
           "'append') or update mode");
    return;
  }
  if (mode_ok(root, mode)) return;
  const dp_plan *c = mode_culprit(root, mode);
  if (is_refused(x, c) || any_refused_below(x, c)) return;
  if (c->kind == DP_P_AGGREGATE && mode == DP_MODE_APPEND) {
    char what[256];
    describe_aggregate(c, what, sizeof what);
    if (c->u.aggregate.window)
      refuse(x, c,
             "append mode emits a window only once it is final, but the window's time column "
             "has no watermark, so %s is never final: declare a WATERMARK on the time column, "
             "or use update mode (SET 'dipper.output-mode' = 'update')",
             what);
    else if (stateful_below(c) && (stateful_below(c)->props.modes & DP_MODE_APPEND)) {
      /* Update mode is no way out: a chain of stateful operators runs in append only. */
      char how[320];
      suggest_window_over(stateful_below(c), how, sizeof how);
      refuse(x, c,
             "append mode emits a row only once it is final, but %s changes with every new row "
             "and its state is never cleaned (and over the result of %s, update mode is no "
             "way out); %s",
             what, node_phrase(stateful_below(c)), how);
    }
    else
      refuse(x, c,
             "append mode emits a row only once it is final, but %s changes with every new row "
             "and its state is never cleaned; add a window (TUMBLE/HOP/SESSION over an "
             "event-time column with a watermark), or use update mode (SET "
             "'dipper.output-mode' = 'update')",
             what);
    return;
  }
  if (mode == DP_MODE_APPEND) {
    refuse(x, c,
           "append mode emits a row only once it is final, but %s revises rows it has already "
           "emitted: use update mode (SET 'dipper.output-mode' = 'update')%s",
           node_phrase(c),
           c->kind == DP_P_DEDUPLICATE ? ", or keep the first row per key (ORDER BY ts ASC)"
           : c->kind == DP_P_JOIN      ? ", or add watermarks on both sides and a time-range "
                                         "condition"
                                       : "");
    return;
  }
  if (mode == DP_MODE_COMPLETE) {
    refuse(x, c,
           "complete mode re-emits the whole result of an aggregation every batch, but %s "
           "cannot be recomputed that way: use append or update mode (SET "
           "'dipper.output-mode' = 'update')",
           node_phrase(c));
    return;
  }
  refuse(x, c, "%s cannot run in %s mode on a stream: use %s mode", node_phrase(c),
         mode_name(mode), (c->props.modes & DP_MODE_APPEND) ? "append" : "complete");
}

static bool takes_insert_only(const dp_table_def *t) {
  const char *c = t->connector ? t->connector : "";
  if (strcmp(c, "filesystem") == 0) return true;
  if ((strcmp(c, "kafka") == 0 || strcmp(c, "kinesis") == 0) && t->npk == 0) return true;
  return false;
}

/* The node below p (through the nodes that pass deletions on) that makes
** the -D rows p's input carries. */
static const dp_plan *deleting_node(const dp_plan *p) {
  const dp_plan *q = p;
  for (int guard = 0; guard < 10000; guard++) {
    const dp_plan *next = NULL;
    if (q->kind == DP_P_PROJECT || q->kind == DP_P_FILTER || q->kind == DP_P_UNION ||
        (q->kind == DP_P_JOIN && q->u.join.kind == DP_J_INNER))
      for (int i = 0; i < q->ninputs && !next; i++)
        if (q->inputs[i]->props.changes & DP_CHANGES_D) next = q->inputs[i];
    if (!next) return q;
    q = next;
  }
  return q;
}

/* "the LEFT JOIN of two streams takes back ...": what makes the -D rows. */
static void describe_deletes(const dp_plan *q, char *buf, size_t cap) {
  if (q->kind == DP_P_JOIN && q->u.join.kind != DP_J_INNER)
    snprintf(buf, cap,
             "the %s JOIN at %d:%d takes back (-D) the row it padded with NULLs when that row's "
             "first match arrives",
             dp_join_kind_name(q->u.join.kind), q->span.line, q->span.col);
  else if (q->kind == DP_P_AGGREGATE)
    snprintf(buf, cap,
             "the aggregation at %d:%d reads an updating input and deletes (-D) a group whose "
             "last row is taken back",
             q->span.line, q->span.col);
  else if (q->kind == DP_P_TOPN)
    snprintf(buf, cap, "the Top-N at %d:%d deletes (-D) a row that leaves the top",
             q->span.line, q->span.col);
  else if (q->kind == DP_P_SCAN && q->u.scan.table)
    snprintf(buf, cap, "the %s source `%s` deletes (-D) a key on each tombstone",
             q->u.scan.table->connector ? q->u.scan.table->connector : "",
             q->u.scan.table->name);
  else
    snprintf(buf, cap, "%s at %d:%d deletes rows (-D)", node_phrase(q), q->span.line,
             q->span.col);
}

/* kafka and kinesis with a PRIMARY KEY take upserts (the -U rows left out,
** exec/op_sink.c) but have no way to write a deletion; Flink's plain kafka
** sink takes no update at all (its json format is insert-only, and a
** PRIMARY KEY on such a table is refused).  Refused here rather than when
** the first -D reaches the sink at run time. */
static bool check_sink_deletes(vctx *x, const dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  const dp_table_def *t = p->u.sink.table;
  const char *c = t && t->connector ? t->connector : "";
  if (!t || t->npk == 0 || in->props.bounded || !(in->props.changes & DP_CHANGES_D)) return false;
  if (strcmp(c, "kafka") != 0 && strcmp(c, "kinesis") != 0) return false;
  if (any_refused_below(x, p)) return true;
  char what[320];
  describe_deletes(deleting_node(in), what, sizeof what);
  refuse(x, p,
         "the %s sink `%s` writes upserts by its PRIMARY KEY and has no way to write a "
         "deletion, but this query deletes rows: %s; write to an 'upsert-kafka' table with the "
         "same PRIMARY KEY (a deletion is a tombstone of its key there), or to a sink that takes "
         "retractions (memory, console, callback); Flink's %s sink takes no updating input at all",
         c, t->name, what, c);
  return true;
}

static void check_sink(vctx *x, const dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  const dp_table_def *t = p->u.sink.table;
  if (check_sink_deletes(x, p)) return;
  if (!t || in->props.bounded || !takes_insert_only(t)) return;
  const dp_plan *agg = first_aggregate(in);
  bool updates = in->props.changelog != DP_CHANGELOG_INSERT_ONLY ||
                 (x->mode != DP_MODE_APPEND && agg != NULL);
  if (!updates || any_refused_below(x, p)) return;
  char what[256] = "rows it has already written";
  char keys[256] = "..";
  bool keys_in_sink = true; /* the sink names its key columns as the GROUP BY does */
  if (agg) {
    describe_aggregate(agg, what, sizeof what);
    if (agg->u.aggregate.ngroup > 0) {
      size_t n = 0;
      keys[0] = '\0';
      for (int i = 0; i < agg->u.aggregate.ngroup && n < sizeof keys; i++) {
        const char *k = dp_analyze_col_name(&agg->schema, i);
        n += (size_t)snprintf(keys + n, sizeof keys - n, "%s%s", i ? ", " : "", k);
        keys_in_sink &= dp_schema_find(&t->schema, k) >= 0;
      }
    }
  }
  char pk[400];
  if (keys_in_sink)
    snprintf(pk, sizeof pk, "declare PRIMARY KEY (%s) NOT ENFORCED on `%s`", keys, t->name);
  else
    snprintf(pk, sizeof pk,
             "declare a PRIMARY KEY ... NOT ENFORCED on the columns of `%s` that hold %s", t->name,
             keys);
  /* A windowed aggregation is final per window in append mode: it is the
  ** update (or complete) mode chosen that makes it revise its rows. */
  bool windowed = agg && agg->u.aggregate.window && (agg->props.modes & DP_MODE_APPEND) &&
                  in->props.changelog == DP_CHANGELOG_INSERT_ONLY && x->mode != DP_MODE_APPEND;
  if (windowed) {
    refuse(x, p,
           "the %s sink `%s` takes insert-only rows, but this query runs in %s mode%s, where its "
           "windowed aggregation (%s) writes each window's running result every batch and "
           "revises it later; in append mode it writes each window once, final, when the "
           "watermark passes the window's end: %s (or SET 'dipper.output-mode' = 'append'), or "
           "%s to write the revisions as upserts",
           t->connector, t->name, mode_name(x->mode),
           x->q->output_mode ? " (SET 'dipper.output-mode')" : "", what,
           x->q->output_mode ? "remove the SET 'dipper.output-mode'" : "run it in append mode",
           pk);
    return;
  }
  if (strcmp(t->connector, "filesystem") == 0) {
    refuse(x, p,
           "the filesystem sink `%s` writes append-only files, but this query updates earlier "
           "results (%s) in %s mode: make the aggregation windowed over an event-time column "
           "with a watermark and use append mode, or write to a sink that takes updates (kafka "
           "with a PRIMARY KEY)",
           t->name, what, mode_name(x->mode));
    return;
  }
  refuse(x, p,
         "the %s sink `%s` takes insert-only rows, but this query updates earlier results (%s); "
         "%s to write upserts (upsert-kafka semantics), or make the aggregation windowed so "
         "that each row is final",
         t->connector, t->name, what, pk);
}

static void check_batch_scan(vctx *x, const dp_plan *p) {
  const dp_table_def *t = p->u.scan.table;
  if (!t) return;
  const char *c = t->connector ? t->connector : "this";
  /* Flink's batch planner takes insert-only sources alone, bounded or not
     (DynamicSourceUtils: "only possible for INSERT-only table sources"). */
  if (dp_connector_changelog(t)) {
    refuse(x, p,
           "%s source `%s` is a changelog (+I, -U, +U, -D), and batch mode reads insert-only "
           "sources (as in Flink, even with 'scan.bounded.mode'); run in streaming mode (SET "
           "'execution.runtime-mode' = 'streaming': with 'scan.bounded.mode' the query ends at "
           "the bound), or read the topic as a 'kafka' table with 'scan.bounded.mode' = "
           "'latest-offset'",
           c, t->name);
    return;
  }
  if (dp_connector_bounded(t, true)) return;
  bool kafka = strcmp(c, "kafka") == 0;
  refuse(x, p,
         "%s source `%s` is unbounded; %s or run in streaming mode (SET "
         "'execution.runtime-mode' = 'streaming')",
         c, t->name,
         kafka ? "set 'scan.bounded.mode' = 'latest-offset' in its WITH options,"
               : "read a bounded source,");
}

static void validate_node(vctx *x, const dp_plan *p, const dp_plan *parent);

/* ---- subqueries left in expressions ---- */




/* One aggregate row whatever the input: a global aggregate under filters
** and projections (Spark's rule for a correlated scalar subquery). */
static bool one_aggregate_row(const dp_plan *p) {
  while (p && (p->kind == DP_P_PROJECT || p->kind == DP_P_FILTER)) p = p->inputs[0];
  return p && p->kind == DP_P_AGGREGATE && p->u.aggregate.ngroup == 0;
}

/* A table read by p that does not end on its own in this mode, or NULL. */
static const dp_table_def *unbounded_table(const vctx *x, const dp_plan *p) {
  if (!p) return NULL;
  if (p->kind == DP_P_SCAN)
    return p->u.scan.table && !dp_connector_bounded(p->u.scan.table, !x->q->streaming) ? p->u.scan.table : NULL;
  for (int i = 0; i < p->ninputs; i++) {
    const dp_table_def *t = unbounded_table(x, p->inputs[i]);
    if (t) return t;
  }
  return NULL;
}

static void fail_at(vctx *x, int code, dp_span span, const char *fmt, ...)
    DP_PRINTF(4, 5)
    ;
static void fail_at(vctx *x, int code, dp_span span, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dp_error(x->d, code, span, "%s", msg);
  if (!x->rc) x->rc = code;
}

/* A subquery the binder left in an expression runs apart, once: refuse
** what cannot.  True when refused. */
static bool check_subquery(vctx *x, const dp_expr *e) {
  const dp_plan *sub = e->u.subquery.plan;
  if (!sub) return false;
  if (e->u.subquery.kind == DP_SUBQ_SCALAR && !one_aggregate_row(sub) && dp_plan_reads_outer(sub, 1)) {
    fail_at(x, DIPPER_UNSUPPORTED, e->span,
            "a correlated scalar subquery must give one value per row: aggregate what it selects "
            "(MAX(..), SUM(..), COUNT(*)), as Spark requires too, or write the join instead (JOIN "
            "the subquery's table ON the correlated columns)");
    return true;
  }
  const dp_table_def *t = x->q->streaming ? unbounded_table(x, sub) : NULL;
  if (t) {
    fail_at(x, DIPPER_STREAMING, e->span,
            "this subquery reads `%s`, which is unbounded: a subquery left in an expression runs "
            "once, to the end of its input, and a stream never ends; join the stream instead (a "
            "JOIN, or [NOT] EXISTS / IN as a condition of WHERE joined by AND), or read a "
            "bounded table in the subquery",
            t->name);
    return true;
  }
  return false;
}

static void validate_node(vctx *x, const dp_plan *p, const dp_plan *parent);

/* Subquery plans inside an expression are checked like any other plan. */
static bool validate_subqueries(const dp_expr *e, void *ud) {
  vctx *x = ud;
  if (!e) return false;
  switch (e->kind) {
  case DP_E_COLUMN: case DP_E_LITERAL: break;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++) validate_subqueries(e->u.call.args[i], x);
    break;
  case DP_E_CAST: validate_subqueries(e->u.cast.arg, x); break;
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++) {
      validate_subqueries(e->u.case_.whens[i], x);
      validate_subqueries(e->u.case_.thens[i], x);
    }
    validate_subqueries(e->u.case_.else_, x);
    break;
  case DP_E_FIELD: validate_subqueries(e->u.field.arg, x); break;
  case DP_E_SUBQUERY:
    validate_subqueries(e->u.subquery.arg, x);
    if (!check_subquery(x, e)) validate_node(x, e->u.subquery.plan, NULL);
    break;
  }
  return false;
}

/* A checkpoint folder promises that a restart resumes; a socket cannot
** give again what it gave (the other sources keep positions: connector.h). */
static void check_resumable_scan(vctx *x, const dp_plan *p) {
  const dp_table_def *t = p->u.scan.table;
  if (!t || !t->connector || strcmp(t->connector, "socket") != 0) return;
  if (!x->cat || !dp_catalog_option(x->cat, "execution.checkpointing.dir")) return;
  refuse(x, p,
         "socket source `%s` cannot give again what it has read, so a query over it cannot "
         "resume from the checkpoint folder that 'execution.checkpointing.dir' sets; RESET "
         "'execution.checkpointing.dir' for this query, or read from a replayable source "
         "(kafka, filesystem)",
         t->name);
}

/* Children first, so that a LIMIT sees whether its ORDER BY was refused. */
static void validate_node(vctx *x, const dp_plan *p, const dp_plan *parent) {
  if (!p) return;
  for (int i = 0; i < p->ninputs; i++) validate_node(x, p->inputs[i], p);
  dp_plan_any_expr(p, validate_subqueries, x);
  if (!x->q->streaming) {
    if (p->kind == DP_P_SCAN) check_batch_scan(x, p);
    return;
  }
  switch (p->kind) {
  case DP_P_SCAN: check_resumable_scan(x, p); break;
  case DP_P_WATERMARK: check_watermark(x, p); break;
  case DP_P_WINDOW: check_window(x, p); break;
  case DP_P_SORT: check_sort(x, p, parent); break;
  case DP_P_LIMIT: check_limit(x, p); break;
  case DP_P_JOIN: check_join(x, p); break;
  case DP_P_ASOF_JOIN: check_asof(x, p); break;
  case DP_P_UNION: check_union(x, p); break;
  case DP_P_SETOP: check_setop(x, p); break;
  case DP_P_OVER: check_over(x, p); break;
  case DP_P_TOPN: check_topn(x, p); break;
  case DP_P_SINK: break; /* after the mode is known to be good: see below */
  default: break;
  }
  if (is_refused(x, p) || !unbounded_input(p)) return;
  check_chain(x, p);
  if (!is_refused(x, p)) check_append_state(x, p);
}

int dp_validate(dp_diags *d, const dp_catalog *cat, dp_query_plan *q) {
  vctx x = {0};
  x.d = d;
  x.cat = cat;
  x.q = q;
  for (int r = 0; r < q->nroots; r++) {
    const dp_plan *root = q->roots[r];
    if (!root) continue;
    x.root = root;
    x.mode = dp_analyze_output_mode(q, root);
    validate_node(&x, root, NULL);
    if (!q->streaming) continue;
    check_output_mode(&x, root);
    if (root->kind == DP_P_SINK && !is_refused(&x, root)) check_sink(&x, root);
  }
  return x.rc;
}
