/*
** analyze.c — streaming analysis: fills dp_stream_props of every plan node.
**
** Bottom-up, per node: is the output bounded; which output columns are
** event-time attributes (and which watermark governs each) or processing-time
** attributes; which output modes the node can produce its result in; the
** changelog it emits; the state it keeps and what removes it.  The rules are
** the intersection of Flink's and Spark Structured Streaming's semantics, so
** that a plan both engines accept means the same on both.
**
** Owns: the props (time_attr arrays and state descriptions live in the
** statement's arena).  Does not refuse anything: validate.c does, reading what
** is recorded here.  The helpers shared with validate.c are in analyze_int.h.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/compiler.h"
#include "plan/analyze.h"
#include "plan/analyze_int.h"

#define MODES_ALL (DP_MODE_APPEND | DP_MODE_UPDATE | DP_MODE_COMPLETE)
#define MODES_STREAM (DP_MODE_APPEND | DP_MODE_UPDATE)

typedef struct actx {
  dp_arena *a;
  dp_diags *d;
  const dp_catalog *cat;
  dp_query_plan *q;
  int rc;
} actx;

static void analyze_node(actx *x, dp_plan *p);
static void analyze_union_as(actx *x, dp_plan *p, bool dedups);

/* ---- small helpers, some shared with validate.c ---- */

int dp_analyze_attr(const dp_plan *p, int col) {
  if (!p || !p->props.time_attr || col < 0 || col >= p->schema.ncols) return -1;
  return p->props.time_attr[col];
}

bool dp_analyze_has_watermark(const dp_plan *p) {
  for (int i = 0; p && p->props.time_attr && i < p->schema.ncols; i++)
    if (p->props.time_attr[i] >= 0) return true;
  return false;
}

/* The function's infix spelling or canonical name equals `s`. */
bool dp_analyze_fn_is(const dp_func *fn, const char *op, const char *name) {
  if (!fn) return false;
  if (op && fn->op && strcmp(fn->op, op) == 0) return true;
  return name && fn->name && strcmp(fn->name, name) == 0;
}

const char *dp_analyze_col_list(dp_arena *a, const dp_schema *s, int n, const int *cols) {
  dp_buf b = DP_BUF_INIT;
  for (int i = 0; i < n; i++) {
    if (i) dp_buf_puts(&b, ", ");
    int c = cols[i];
    if (s && c >= 0 && c < s->ncols && s->cols[c].name)
      dp_buf_puts(&b, s->cols[c].name);
    else
      dp_buf_printf(&b, "$%d", c);
  }
  char *r = dp_arena_strdup(a, dp_buf_cstr(&b));
  dp_buf_free(&b);
  return r;
}

const char *dp_analyze_col_name(const dp_schema *s, int col) {
  if (s && col >= 0 && col < s->ncols && s->cols[col].name) return s->cols[col].name;
  return "?";
}

/* Where did column `col` of p come from, looking through nodes that pass
** columns unchanged: a WINDOW's window_start ('S'), window_end ('E') or
** window_time ('T'), or the window keys of a window aggregation.  Returns the
** letter (0 when none) and the WINDOW node in *win. */
int dp_analyze_window_col(const dp_plan *p, int col, const dp_plan **win) {
  for (int guard = 0; p && guard < 10000; guard++) {
    const dp_plan *in = p->ninputs > 0 ? p->inputs[0] : NULL;
    switch (p->kind) {
    case DP_P_WINDOW: {
      int nin = in ? in->schema.ncols : 0;
      if (col >= nin) {
        *win = p;
        if (col == nin) return 'S';
        if (col == nin + 1) return 'E';
        if (col == nin + 2) return 'T';
        return 0;
      }
      p = in;
      break;
    }
    case DP_P_AGGREGATE:
      if (col < 0 || col >= p->u.aggregate.ngroup) return 0;
      if (p->u.aggregate.window) {
        if (col == p->u.aggregate.wstart) {
          *win = p->u.aggregate.window;
          return 'S';
        }
        if (col == p->u.aggregate.wend) {
          *win = p->u.aggregate.window;
          return 'E';
        }
      }
      col = dp_expr_as_column(p->u.aggregate.group[col]);
      if (col < 0) return 0;
      p = in;
      break;
    case DP_P_PROJECT:
      if (col < 0 || col >= p->u.project.n) return 0;
      col = dp_expr_as_column(p->u.project.exprs[col]);
      if (col < 0) return 0;
      p = in;
      break;
    case DP_P_FILTER: case DP_P_WATERMARK: case DP_P_SORT: case DP_P_LIMIT:
    case DP_P_DISTINCT: case DP_P_DEDUPLICATE: case DP_P_TOPN: case DP_P_OVER:
    case DP_P_UNNEST:
      if (!in || col >= in->schema.ncols) return 0;
      p = in;
      break;
    case DP_P_JOIN: case DP_P_ASOF_JOIN: {
      int nl = in ? in->schema.ncols : 0;
      if (col < nl) {
        p = in;
      } else if (p->ninputs > 1) {
        col -= nl;
        p = p->inputs[1];
      } else {
        return 0;
      }
      break;
    }
    default: return 0;
    }
  }
  return 0;
}

/* ---- time-range conditions of joins ---- */

/* An operand of a time comparison: column + constant offset (µs). */
typedef struct time_term {
  int col;
  int64_t offset;
} time_term;

static bool interval_literal(const dp_expr *e, int64_t *micros) {
  if (!e || e->kind != DP_E_LITERAL || e->u.value.is_null) return false;
  if (!e->type || e->type->kind != DP_T_INTERVAL_DT) return false;
  *micros = e->u.value.u.i;
  return true;
}

static bool as_time_term(const dp_expr *e, time_term *t) {
  int c = dp_expr_as_column(e);
  if (c >= 0) {
    t->col = c;
    t->offset = 0;
    return true;
  }
  if (!e || e->kind != DP_E_CALL || e->u.call.nargs != 2) return false;
  const dp_func *fn = e->u.call.fn;
  dp_expr *l = e->u.call.args[0], *r = e->u.call.args[1];
  int64_t v;
  bool plus = dp_analyze_fn_is(fn, "+", "add") || dp_analyze_fn_is(fn, NULL, "plus");
  bool minus = dp_analyze_fn_is(fn, "-", "subtract") || dp_analyze_fn_is(fn, NULL, "minus") ||
               dp_analyze_fn_is(fn, NULL, "sub");
  if ((plus || minus) && (c = dp_expr_as_column(l)) >= 0 && interval_literal(r, &v)) {
    t->col = c;
    t->offset = plus ? v : -v;
    return true;
  }
  if (plus && (c = dp_expr_as_column(r)) >= 0 && interval_literal(l, &v)) {
    t->col = c;
    t->offset = v;
    return true;
  }
  return false;
}

typedef struct bound_acc {
  const dp_plan *join;
  int nleft;
  bool has_lo, has_hi;
  int64_t lo, hi;
  int lcol, rcol;          /* the time columns (join row indexes) of the bound */
  bool win_start, win_end; /* window join: equal window_start / window_end */
  int win_wm[2];           /* watermark of each side's window time column */
} bound_acc;

/* Record `L op R + c` (op one of >=, >, <=, <, =) for a left and right time column. */
static void note_comparison(bound_acc *b, int cmp, const dp_expr *a, const dp_expr *c) {
  time_term ta, tc;
  if (!as_time_term(a, &ta) || !as_time_term(c, &tc)) return;
  const dp_plan *L = b->join->inputs[0], *R = b->join->inputs[1];
  bool a_left = ta.col < b->nleft, c_left = tc.col < b->nleft;
  if (a_left == c_left) return;
  if (!a_left) { /* flip so that the left column is on the left */
    time_term t = ta;
    ta = tc;
    tc = t;
    cmp = cmp == '>' ? '<' : cmp == '<' ? '>' : cmp;
  }
  int lcol = ta.col, rcol = tc.col - b->nleft;
  /* Window join: window_start = window_start AND window_end = window_end. */
  if (cmp == '=' && ta.offset == 0 && tc.offset == 0) {
    const dp_plan *lw = NULL, *rw = NULL;
    int lk = dp_analyze_window_col(L, lcol, &lw), rk = dp_analyze_window_col(R, rcol, &rw);
    if (lk && lk == rk && lk != 'T') {
      if (lk == 'S') b->win_start = true;
      if (lk == 'E') b->win_end = true;
      b->win_wm[0] = dp_analyze_attr(lw->inputs[0], lw->u.window.time_col);
      b->win_wm[1] = dp_analyze_attr(rw->inputs[0], rw->u.window.time_col);
      return;
    }
  }
  if (dp_analyze_attr(L, lcol) < 0 || dp_analyze_attr(R, rcol) < 0) return;
  int64_t rel = tc.offset - ta.offset; /* L op R + rel */
  if (cmp == '>' || cmp == '=') {
    if (!b->has_lo || rel > b->lo) b->lo = rel;
    b->has_lo = true;
  }
  if (cmp == '<' || cmp == '=') {
    if (!b->has_hi || rel < b->hi) b->hi = rel;
    b->has_hi = true;
  }
  b->lcol = lcol;
  b->rcol = rcol;
}

static void scan_conjuncts(bound_acc *b, const dp_expr *e) {
  if (!e || e->kind != DP_E_CALL) return;
  const dp_func *fn = e->u.call.fn;
  dp_expr **args = e->u.call.args;
  int n = e->u.call.nargs;
  if (dp_analyze_fn_is(fn, "AND", "and")) {
    for (int i = 0; i < n; i++) scan_conjuncts(b, args[i]);
    return;
  }
  if (n == 3 && dp_analyze_fn_is(fn, "BETWEEN", "between")) {
    note_comparison(b, '>', args[0], args[1]);
    note_comparison(b, '<', args[0], args[2]);
    return;
  }
  if (n != 2) return;
  if (dp_analyze_fn_is(fn, ">=", NULL) || dp_analyze_fn_is(fn, ">", NULL))
    note_comparison(b, '>', args[0], args[1]);
  else if (dp_analyze_fn_is(fn, "<=", NULL) || dp_analyze_fn_is(fn, "<", NULL))
    note_comparison(b, '<', args[0], args[1]);
  else if (dp_analyze_fn_is(fn, "=", NULL))
    note_comparison(b, '=', args[0], args[1]);
}

/* ---- props helpers ---- */

static int *attrs_new(actx *x, int n) {
  int *t = dp_arena_alloc(x->a, (size_t)(n > 0 ? n : 1) * sizeof *t);
  if (!t) {
    x->rc = DIPPER_NOMEM;
    return NULL;
  }
  for (int i = 0; i < n; i++) t[i] = -1;
  return t;
}

/* Keep the array only when some column is an attribute. */
static void attrs_set(dp_plan *p, int *t) {
  p->props.time_attr = NULL;
  p->props.proctime = false;
  if (!t) return;
  bool any = false;
  for (int i = 0; i < p->schema.ncols; i++) {
    if (t[i] != -1) any = true;
    if (t[i] == -2) p->props.proctime = true;
  }
  if (any) p->props.time_attr = t;
}

/* Output column i is input column i for i < n; the rest are ordinary. */
static void attrs_pass(actx *x, dp_plan *p, const dp_plan *in, int n) {
  if (!in || !in->props.time_attr) {
    attrs_set(p, NULL);
    return;
  }
  int *t = attrs_new(x, p->schema.ncols);
  if (!t) return;
  for (int i = 0; i < p->schema.ncols && i < n && i < in->schema.ncols; i++)
    t[i] = in->props.time_attr[i];
  attrs_set(p, t);
}

static const char *fmt(actx *x, const char *f, ...)
    DP_PRINTF(2, 3)
    ;
static const char *fmt(actx *x, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  const char *s = dp_arena_vprintf(x->a, f, ap);
  va_end(ap);
  if (!s) x->rc = DIPPER_NOMEM;
  return s;
}

static void set_state(dp_plan *p, dp_state_kind k, const char *desc) {
  p->props.state = k;
  p->props.state_desc = k == DP_STATE_NONE ? NULL : desc;
}

static dp_changelog worse(dp_changelog a, dp_changelog b) { return a > b ? a : b; }

static bool is_proctime_call(const dp_expr *e) {
  return e && e->kind == DP_E_CALL && dp_analyze_fn_is(e->u.call.fn, NULL, "proctime");
}

/* The group keys of an aggregate by output name: "(a, b)". */
static const char *group_names(actx *x, const dp_plan *p, int n) {
  int *cols = dp_arena_alloc(x->a, (size_t)(n > 0 ? n : 1) * sizeof *cols);
  if (!cols) {
    x->rc = DIPPER_NOMEM;
    return "";
  }
  for (int i = 0; i < n; i++) cols[i] = i;
  return dp_analyze_col_list(x->a, &p->schema, n, cols);
}

/* ---- per node kind ---- */

static void analyze_scan(actx *x, dp_plan *p) {
  const dp_table_def *t = p->u.scan.table;
  /* Asked again rather than read from t->bounded: that was computed in the
     runtime mode in force at CREATE TABLE, which a later SET may have changed. */
  p->props.bounded = !x->q->streaming || (t && dp_connector_bounded(t, false));
  /* A stream of new rows: append.  (Update mode over it emits the same rows;
     validate.c accepts update wherever append is possible.) */
  p->props.modes = p->props.bounded ? MODES_ALL : DP_MODE_APPEND;
  /* upsert-kafka: Flink's ChangelogNormalize runs in the source, which emits
     +I, -U/+U and -D (connectors/upsert_kafka.c). */
  if (!p->props.bounded && t && dp_connector_changelog(t)) {
    p->props.modes = DP_MODE_UPDATE;
    p->props.changelog = DP_CHANGELOG_RETRACT;
  }
  int *attrs = attrs_new(x, p->schema.ncols);
  if (!attrs) return;
  /* A PROCTIME() computed column is a processing-time attribute from the start. */
  for (int i = 0; t && t->cols && i < t->schema.ncols && i < p->schema.ncols; i++)
    if (t->cols[i].proctime) attrs[i] = -2;
  attrs_set(p, attrs);
}

static void analyze_project(actx *x, dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  int *attrs = attrs_new(x, p->schema.ncols);
  if (!attrs) return;
  for (int i = 0; i < p->u.project.n && i < p->schema.ncols; i++) {
    const dp_expr *e = p->u.project.exprs[i];
    if (is_proctime_call(e)) {
      attrs[i] = -2;
      continue;
    }
    /* A CAST to the same kind of timestamp keeps the attribute (Flink does too);
       anything else computed from it is an ordinary value. */
    if (e && e->kind == DP_E_CAST && !e->u.cast.try_ && e->type && e->u.cast.arg &&
        e->u.cast.arg->type && dp_type_is_timestamp(e->type) &&
        e->type->kind == e->u.cast.arg->type->kind)
      e = e->u.cast.arg;
    if (e && e->kind == DP_E_COLUMN && e->u.column.outer == 0)
      attrs[i] = dp_analyze_attr(in, e->u.column.index);
  }
  attrs_set(p, attrs);
}

static void analyze_watermark(actx *x, dp_plan *p) {
  attrs_pass(x, p, p->inputs[0], p->schema.ncols);
  int *attrs = p->props.time_attr;
  if (!attrs && !(attrs = attrs_new(x, p->schema.ncols))) return;
  if (p->u.watermark.time_col >= 0 && p->u.watermark.time_col < p->schema.ncols)
    attrs[p->u.watermark.time_col] = p->u.watermark.id;
  attrs_set(p, attrs);
}

static void analyze_window(actx *x, dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  int nin = in->schema.ncols;
  attrs_pass(x, p, in, nin);
  int *attrs = p->props.time_attr;
  if (!attrs && !(attrs = attrs_new(x, p->schema.ncols))) return;
  /* window_time inherits the time column's watermark; start and end are plain values. */
  if (nin + 2 < p->schema.ncols) attrs[nin + 2] = dp_analyze_attr(in, p->u.window.time_col);
  attrs_set(p, attrs);
}

static void analyze_aggregate(actx *x, dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  int ngroup = p->u.aggregate.ngroup;
  const dp_plan *win = p->u.aggregate.window;
  int *attrs = attrs_new(x, p->schema.ncols);
  if (!attrs) return;
  int key_wm = -1; /* a plain GROUP BY over an event-time key (Spark keeps it governed) */
  int key_col = -1;
  for (int i = 0; i < ngroup && i < p->schema.ncols; i++) {
    int c = dp_expr_as_column(p->u.aggregate.group[i]);
    int t = c >= 0 ? dp_analyze_attr(in, c) : -1;
    if (win) {
      attrs[i] = t; /* window_time (and Flink's *_ROWTIME) stays an attribute: windows chain */
    } else if (t >= 0) {
      attrs[i] = t;
      if (key_wm < 0) {
        key_wm = t;
        key_col = i;
      }
    }
  }
  attrs_set(p, attrs);
  if (p->props.bounded) return;

  bool insert_only = in->props.changelog == DP_CHANGELOG_INSERT_ONLY;
  if (win) {
    /* The keys besides the window's own columns, for the description. */
    int *other = dp_arena_alloc(x->a, (size_t)(ngroup > 0 ? ngroup : 1) * sizeof *other);
    int nother = 0;
    for (int i = 0; other && i < ngroup; i++)
      if (i != p->u.aggregate.wstart && i != p->u.aggregate.wend && dp_analyze_attr(p, i) == -1)
        other[nother++] = i;
    const char *groups =
        nother > 0 ? fmt(x, "; groups: (%s)", dp_analyze_col_list(x->a, &p->schema, nother, other))
                   : "";
    int wm = dp_analyze_attr(win->inputs[0], win->u.window.time_col);
    if (wm != -1 && insert_only) {
      p->props.modes = MODES_ALL;
      p->props.changelog = DP_CHANGELOG_INSERT_ONLY;
      set_state(p, DP_STATE_WATERMARK,
                wm >= 0 ? fmt(x, "one row per group and window; dropped when the watermark "
                                 "passes window_end%s", groups)
                        : fmt(x, "one row per group and window; dropped when the processing-time "
                                 "clock passes window_end%s", groups));
    } else {
      p->props.modes = DP_MODE_UPDATE | DP_MODE_COMPLETE;
      p->props.changelog = DP_CHANGELOG_UPSERT;
      set_state(p, DP_STATE_KEYS,
                fmt(x, "one row per group and window; never dropped: the window time has no "
                       "watermark%s", groups));
    }
    return;
  }
  const char *keys = group_names(x, p, ngroup);
  if (!insert_only) {
    /* Over revised rows: each retraction takes its row back out of the
       group's states, and the group's result is revised with -U/+U, or -D
       once its last row is gone (plan/analyze_changelog.c). */
    p->props.modes = DP_MODE_UPDATE;
    p->props.changelog = DP_CHANGELOG_RETRACT;
    set_state(p, DP_STATE_KEYS,
              ngroup > 0 ? fmt(x, "one row per group (%s) with its row count; never dropped, "
                                  "grows with the number of groups", keys)
                         : "one row for the whole stream; never dropped");
    return;
  }
  if (key_wm >= 0 && insert_only) {
    p->props.modes = MODES_ALL;
    p->props.changelog = DP_CHANGELOG_INSERT_ONLY;
    set_state(p, DP_STATE_WATERMARK,
              fmt(x, "one row per group (%s); dropped when the watermark passes %s", keys,
                  dp_analyze_col_name(&p->schema, key_col)));
    return;
  }
  p->props.modes = DP_MODE_UPDATE | DP_MODE_COMPLETE;
  p->props.changelog = DP_CHANGELOG_UPSERT;
  set_state(p, DP_STATE_KEYS,
            ngroup > 0 ? fmt(x, "one row per group (%s); never dropped, grows with the number "
                                "of groups", keys)
                       : "one row for the whole stream; never dropped");
}

/* q (below projections and filters) is an aggregation or a join, or a
** UNION whose every input is one or has no change kinds. */
static bool reads_as_changes(const dp_plan *q) {
  while (q->kind == DP_P_PROJECT || q->kind == DP_P_FILTER) q = q->inputs[0];
  if (q->kind == DP_P_AGGREGATE || q->kind == DP_P_JOIN) return true;
  if (q->kind != DP_P_UNION) return false;
  for (int i = 0; i < q->ninputs; i++)
    if (q->inputs[i]->props.changelog != DP_CHANGELOG_INSERT_ONLY &&
        !reads_as_changes(q->inputs[i]))
      return false;
  return true;
}

/* SELECT DISTINCT over an updating input, as Flink plans every SELECT
** DISTINCT: a GROUP BY on all its columns without aggregates, which the
** embedded engine runs over changes (exec/agg_retract.c): a row is +I when
** its count turns positive and -D when it returns to 0.  p becomes that
** AGGREGATE in place (a DISTINCT node has no fields of its own). */
static bool distinct_as_aggregate(actx *x, dp_plan *p) {
  dp_plan *in = p->inputs[0];
  if (p->props.bounded || in->props.changelog == DP_CHANGELOG_INSERT_ONLY) return false;
  /* Only over what the engine reads as changes (an aggregation or a join,
     through projections and filters, or a UNION of such inputs and
     streams); elsewhere the DISTINCT stays, and validate.c refuses it by
     name. */
  if (!reads_as_changes(in)) return false;
  /* UNION without ALL is this GROUP BY over the union, as Flink plans it:
     the union below only concatenates. */
  if (in->kind == DP_P_UNION && !in->u.union_.all) analyze_union_as(x, in, false);
  int n = in->schema.ncols;
  dp_expr **group = dp_arena_alloc(x->a, (size_t)(n > 0 ? n : 1) * sizeof *group);
  if (!group) {
    x->rc = DIPPER_NOMEM;
    return true;
  }
  for (int i = 0; i < n; i++)
    if (!(group[i] = dp_expr_column(x->a, i, in->schema.cols[i].type))) {
      x->rc = DIPPER_NOMEM;
      return true;
    }
  p->kind = DP_P_AGGREGATE;
  memset(&p->u.aggregate, 0, sizeof p->u.aggregate);
  p->u.aggregate.ngroup = n;
  p->u.aggregate.group = group;
  p->u.aggregate.wstart = p->u.aggregate.wend = -1;
  analyze_aggregate(x, p);
  return true;
}

static void analyze_distinct(actx *x, dp_plan *p) {
  dp_plan *in = p->inputs[0];
  if (distinct_as_aggregate(x, p)) return;
  /* The binder writes UNION as DISTINCT over UNION (all=false): the DISTINCT
     keeps the state, the union below only concatenates. */
  if (in->kind == DP_P_UNION && !in->u.union_.all && !in->props.bounded)
    analyze_union_as(x, in, false);
  attrs_pass(x, p, in, p->schema.ncols);
  if (p->props.bounded) return;
  p->props.modes = in->props.modes & MODES_STREAM;
  p->props.changelog = in->props.changelog;
  int wm_col = -1;
  for (int i = 0; i < p->schema.ncols && wm_col < 0; i++)
    if (dp_analyze_attr(p, i) >= 0) wm_col = i;
  if (wm_col >= 0)
    set_state(p, DP_STATE_WATERMARK,
              fmt(x, "one row per distinct row; dropped when the watermark passes %s",
                  dp_analyze_col_name(&p->schema, wm_col)));
  else
    set_state(p, DP_STATE_KEYS,
              "one row per distinct row; never dropped, grows with the number of distinct rows");
}

static void analyze_dedup(actx *x, dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  bool keep_last = p->u.dedup.keep_last;
  /* Keeping the first row never revises an output row, so its time columns stay
     attributes; keeping the last one replaces rows. */
  if (keep_last)
    attrs_set(p, NULL);
  else
    attrs_pass(x, p, in, in->schema.ncols);
  if (p->props.bounded) return;
  if (keep_last) {
    p->props.modes = DP_MODE_UPDATE;
    p->props.changelog = worse(in->props.changelog, DP_CHANGELOG_UPSERT);
  } else {
    p->props.modes = in->props.modes & MODES_STREAM;
    p->props.changelog = in->props.changelog;
  }
  const char *keys = dp_analyze_col_list(x->a, &in->schema, p->u.dedup.nkeys, p->u.dedup.keys);
  int wm_col = -1;
  for (int i = 0; i < p->u.dedup.nkeys && wm_col < 0; i++)
    if (dp_analyze_attr(in, p->u.dedup.keys[i]) >= 0) wm_col = p->u.dedup.keys[i];
  if (wm_col < 0 && dp_analyze_attr(in, p->u.dedup.order_col) >= 0) wm_col = p->u.dedup.order_col;
  if (wm_col >= 0)
    set_state(p, DP_STATE_WATERMARK,
              fmt(x, "one row per key (%s); dropped when the watermark passes %s", keys,
                  dp_analyze_col_name(&in->schema, wm_col)));
  else if (p->u.dedup.within_watermark && dp_analyze_has_watermark(in))
    set_state(p, DP_STATE_WATERMARK,
              fmt(x, "one row per key (%s); dropped when the watermark passes the first row's "
                     "event time", keys));
  else
    set_state(p, DP_STATE_KEYS,
              fmt(x, "one row per key (%s); never dropped, grows with the number of keys", keys));
}

/* "ts", "ts + 30 min", "ts - 1 h" */
static const char *offset_text(actx *x, const char *col, int64_t micros) {
  if (micros == 0) return col;
  char dur[48];
  dp_format_duration(dur, sizeof dur, micros); /* "-1 h" for negative offsets */
  return fmt(x, "%s %c %s", col, micros < 0 ? '-' : '+', dur[0] == '-' ? dur + 1 : dur);
}

static void analyze_join(actx *x, dp_plan *p) {
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  int nl = L->schema.ncols;
  bool semi = p->u.join.kind == DP_J_SEMI || p->u.join.kind == DP_J_ANTI;
  bound_acc b = {.join = p, .nleft = nl, .win_wm = {-1, -1}};
  scan_conjuncts(&b, p->u.join.cond);
  bool window_join = b.win_start && b.win_end;
  p->props.has_time_bound = window_join || (b.has_lo && b.has_hi);
  if (window_join) {
    p->props.time_lower = p->props.time_upper = 0;
  } else if (p->props.has_time_bound) {
    p->props.time_lower = b.lo;
    p->props.time_upper = b.hi;
  }

  /* Time attributes: a time-bounded join keeps both sides' (rows come out in
     event-time order up to the bound); a temporal or stream-static join keeps
     the stream's; a regular join loses them. */
  bool keep_left = p->props.has_time_bound || p->u.join.as_of || R->props.bounded;
  bool keep_right = p->props.has_time_bound || (L->props.bounded && !R->props.bounded);
  int *attrs = attrs_new(x, p->schema.ncols);
  if (!attrs) return;
  for (int i = 0; i < p->schema.ncols; i++) {
    if (i < nl)
      attrs[i] = keep_left ? dp_analyze_attr(L, i) : -1;
    else if (!semi)
      attrs[i] = keep_right ? dp_analyze_attr(R, i - nl) : -1;
  }
  attrs_set(p, attrs);
  if (p->props.bounded) return;

  const char *lname = p->u.join.nkeys > 0
                          ? dp_analyze_col_list(x->a, &L->schema, p->u.join.nkeys,
                                                p->u.join.left_keys)
                          : NULL;
  dp_changelog in_log = worse(L->props.changelog, R->props.changelog);

  if (p->u.join.as_of) {
    /* Temporal join: each left row meets the right version valid at its time. */
    p->props.modes = L->props.modes & MODES_STREAM;
    p->props.changelog = L->props.changelog;
    const char *rkeys = p->u.join.nkeys > 0
                            ? dp_analyze_col_list(x->a, &R->schema, p->u.join.nkeys,
                                                  p->u.join.right_keys)
                            : "no key";
    set_state(p, DP_STATE_KEYS,
              fmt(x, "the versions per key (%s) of the right side; older versions dropped as "
                     "the watermark passes them", rkeys));
    return;
  }
  if (L->props.bounded != R->props.bounded) {
    /* Stream-static: the bounded side is read whole; stream rows are not kept. */
    const dp_plan *stream = L->props.bounded ? R : L;
    p->props.modes = stream->props.modes & MODES_STREAM;
    p->props.changelog = stream->props.changelog;
    set_state(p, DP_STATE_BOUNDED_INPUT,
              fmt(x, "every row of the bounded %s side; stream rows are not kept",
                  L->props.bounded ? "left" : "right"));
    return;
  }

  bool both_wm = (dp_analyze_has_watermark(L) || b.win_wm[0] >= 0) &&
                 (dp_analyze_has_watermark(R) || b.win_wm[1] >= 0);
  bool bounded_state = both_wm && p->props.has_time_bound;
  bool outer = p->u.join.kind != DP_J_INNER && p->u.join.kind != DP_J_CROSS;
  if (in_log != DP_CHANGELOG_INSERT_ONLY) {
    /* A join over revised rows must revise its own output. */
    p->props.modes = L->props.modes & R->props.modes & DP_MODE_UPDATE;
    p->props.changelog = DP_CHANGELOG_RETRACT;
  } else if (!outer || bounded_state) {
    /* Inner joins emit each match once; time-bounded outer joins emit the
       unmatched rows, padded, once the watermark passes the bound. */
    p->props.modes = L->props.modes & R->props.modes & MODES_STREAM;
    p->props.changelog = DP_CHANGELOG_INSERT_ONLY;
  } else {
    /* An outer join without a bound emits a padded row and retracts it later. */
    p->props.modes = DP_MODE_UPDATE;
    p->props.changelog = DP_CHANGELOG_RETRACT;
  }
  if (bounded_state && window_join) {
    set_state(p, DP_STATE_WATERMARK,
              "rows of both sides per window; dropped when the watermark passes window_end");
  } else if (bounded_state) {
    const char *rt = dp_analyze_col_name(&R->schema, b.rcol);
    set_state(p, DP_STATE_WATERMARK,
              fmt(x, "rows of both sides while %s is within [%s, %s] of the other side; "
                     "dropped when the watermark passes that bound",
                  dp_analyze_col_name(&L->schema, b.lcol), offset_text(x, rt, b.lo),
                  offset_text(x, rt, b.hi)));
  } else {
    set_state(p, DP_STATE_UNBOUNDED,
              lname ? fmt(x, "every row of both sides per key (%s); never dropped, grows with "
                             "the input", lname)
                    : "every row of both sides; never dropped, grows with the input");
  }
}

/* An as-of join emits each left row once, when the watermark says its match
** is known (exec/op_asof.c): append-only.  Looking back, a row leaves in the
** first batch whose watermark reaches its time, so its time column stays an
** event-time attribute; looking forward it may wait past that (for the
** watermark to pass its match), so the attribute is lost.  Against a
** bounded right side every stream row leaves at once: its attributes stay. */
static void analyze_asof(actx *x, dp_plan *p) {
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  int nl = L->schema.ncols;
  bool back = p->u.asof.op == DP_ASOF_GE || p->u.asof.op == DP_ASOF_GT;
  bool table = !L->props.bounded && R->props.bounded;
  int *attrs = attrs_new(x, p->schema.ncols);
  if (!attrs) return;
  for (int i = 0; i < p->schema.ncols; i++)
    attrs[i] = i < nl && (back || table) ? dp_analyze_attr(L, i) : -1;
  attrs_set(p, attrs);
  if (p->props.bounded) return;
  p->props.modes = L->props.modes & R->props.modes & MODES_STREAM;
  p->props.changelog = worse(L->props.changelog, R->props.changelog);
  if (table) {
    p->props.modes = L->props.modes & MODES_STREAM;
    set_state(p, DP_STATE_BOUNDED_INPUT,
              "every row of the bounded right side; stream rows are matched at once, not kept");
    return;
  }
  const char *lt = dp_analyze_col_name(&L->schema, p->u.asof.left_time);
  const char *rt = dp_analyze_col_name(&R->schema, p->u.asof.right_time);
  const char *keys = p->u.asof.nkeys > 0 ? dp_analyze_col_list(x->a, &R->schema, p->u.asof.nkeys,
                                                                p->u.asof.right_keys)
                                          : "no key";
  char tol[48] = "";
  if (p->u.asof.tolerance >= 0 && dp_type_is_timestamp(L->schema.cols[p->u.asof.left_time].type))
    dp_format_duration(tol, sizeof tol, p->u.asof.tolerance);
  else if (p->u.asof.tolerance >= 0)
    snprintf(tol, sizeof tol, "%lld", (long long)p->u.asof.tolerance);
  if (back && p->u.asof.tolerance < 0) {
    set_state(p, DP_STATE_KEYS,
              fmt(x, "left rows until the watermark reaches %s; right rows after the watermark, "
                     "and the latest at or before it per key (%s)", lt, keys));
  } else if (back) {
    set_state(p, DP_STATE_WATERMARK,
              fmt(x, "left rows until the watermark reaches %s; right rows until the watermark "
                     "passes %s + %s", lt, rt, tol));
  } else if (p->u.asof.tolerance >= 0) {
    set_state(p, DP_STATE_WATERMARK,
              fmt(x, "left rows until the watermark passes their match or %s + %s; right rows "
                     "until no waiting or later left row can match them", lt, tol));
  } else {
    set_state(p, DP_STATE_UNBOUNDED,
              fmt(x, "left rows until the watermark passes their match, forever for those "
                     "without one; right rows from the earliest waiting left row on"));
  }
}

/* `dedups`: this union also removes duplicates (UNION without ALL built
** without a DISTINCT above it). */
/* Add watermark id `id` (its members when derived) to a sorted set without repeats. */
static void add_members(const dp_query_plan *q, int id, int *set, int *n) {
  if (id < 0 || id >= q->nwatermarks) return;
  const dp_watermark_info *w = &q->watermarks[id];
  if (w->nmembers > 0) {
    for (int i = 0; i < w->nmembers; i++) add_members(q, w->members[i], set, n);
    return;
  }
  int at = 0;
  while (at < *n && set[at] < id) at++;
  if (at < *n && set[at] == id) return;
  memmove(set + at + 1, set + at, (size_t)(*n - at) * sizeof *set);
  set[at] = id;
  (*n)++;
}

/* The id of the watermark that is the minimum of those governing column c in
** p's inputs: an existing derived id with the same members, or a new one. */
static int combined_watermark(actx *x, const dp_plan *p, int c) {
  dp_query_plan *q = x->q;
  if (!q || q->nwatermarks <= 0) return -1;
  int *set = dp_arena_alloc(x->a, (size_t)q->nwatermarks * sizeof *set);
  if (!set) return -1;
  int n = 0;
  for (int i = 0; i < p->ninputs; i++) add_members(q, dp_analyze_attr(p->inputs[i], c), set, &n);
  if (n == 0) return -1;
  if (n == 1) return set[0];
  for (int id = 0; id < q->nwatermarks; id++) {
    const dp_watermark_info *w = &q->watermarks[id];
    if (w->nmembers == n && memcmp(w->members, set, (size_t)n * sizeof *set) == 0) return id;
  }
  dp_watermark_info *g = dp_arena_grow(x->a, q->watermarks, (size_t)q->nwatermarks,
                                       (size_t)q->nwatermarks + 1, sizeof *g);
  if (!g) return -1;
  q->watermarks = g;
  int id = q->nwatermarks++;
  g[id] = (dp_watermark_info){.source = "UNION",
                              .column = dp_analyze_col_name(&p->schema, c),
                              .delay = -1,
                              .node = NULL,
                              .nmembers = n,
                              .members = set};
  return id;
}

static void analyze_union_as(actx *x, dp_plan *p, bool dedups) {
  int *attrs = attrs_new(x, p->schema.ncols);
  if (!attrs) return;
  /* A column is an attribute when it is one in every input: with one watermark
     that one, with several their minimum (a derived id, see plan.h). */
  for (int c = 0; c < p->schema.ncols; c++) {
    int t = dp_analyze_attr(p->inputs[0], c);
    bool same = true, all_event = t >= 0;
    for (int i = 1; i < p->ninputs; i++) {
      int ti = dp_analyze_attr(p->inputs[i], c);
      if (ti != t) same = false;
      if (ti < 0) all_event = false;
    }
    attrs[c] = same ? t : all_event ? combined_watermark(x, p, c) : -1;
  }
  attrs_set(p, attrs);
  if (p->props.bounded) return;
  unsigned modes = MODES_ALL;
  dp_changelog log = DP_CHANGELOG_INSERT_ONLY;
  for (int i = 0; i < p->ninputs; i++) log = worse(log, p->inputs[i]->props.changelog);
  for (int i = 0; i < p->ninputs; i++) {
    unsigned m = p->inputs[i]->props.modes;
    /* beside an updating input, a stream of new rows is its own update
       stream (validate.c's mode_ok) */
    if ((m & DP_MODE_APPEND) && log != DP_CHANGELOG_INSERT_ONLY) m |= DP_MODE_UPDATE;
    modes &= m;
  }
  p->props.modes = modes;
  p->props.changelog = log;
  set_state(p, DP_STATE_NONE, NULL);
  if (!dedups) return;
  /* UNION without ALL is a DISTINCT over the union. */
  p->props.modes &= MODES_STREAM;
  int wm_col = -1;
  for (int i = 0; i < p->schema.ncols && wm_col < 0; i++)
    if (attrs[i] >= 0) wm_col = i;
  if (wm_col >= 0)
    set_state(p, DP_STATE_WATERMARK,
              fmt(x, "one row per distinct row; dropped when the watermark passes %s",
                  dp_analyze_col_name(&p->schema, wm_col)));
  else
    set_state(p, DP_STATE_KEYS,
              "one row per distinct row; never dropped, grows with the number of distinct rows");
}

static void analyze_union(actx *x, dp_plan *p) { analyze_union_as(x, p, !p->u.union_.all); }

static void analyze_setop(dp_plan *p) {
  attrs_set(p, NULL);
  if (p->props.bounded) return;
  /* A row of INTERSECT/EXCEPT can appear and disappear as either side grows. */
  p->props.modes = DP_MODE_UPDATE;
  p->props.changelog = DP_CHANGELOG_RETRACT;
  set_state(p, DP_STATE_KEYS,
            "every distinct row of both inputs; never dropped, grows with the number of "
            "distinct rows");
}

/* Does this node produce an aggregation's whole result (complete mode)? */
static bool complete_capable(const dp_plan *in) {
  return (in->props.modes & DP_MODE_COMPLETE) != 0;
}

static void analyze_sort(actx *x, dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  attrs_pass(x, p, in, p->schema.ncols);
  if (p->props.bounded) return;
  p->props.changelog = in->props.changelog;
  const dp_sort_key *k0 = p->u.sort.nkeys > 0 ? &p->u.sort.keys[0] : NULL;
  int c = k0 ? dp_expr_as_column(k0->expr) : -1;
  int t = dp_analyze_attr(in, c);
  if (k0 && !k0->desc && t != -1) {
    /* Time order: rows are released as the watermark (or clock) passes them. */
    p->props.modes = in->props.modes;
    set_state(p, DP_STATE_WATERMARK,
              t >= 0 ? fmt(x, "rows until the watermark passes their %s, then emitted in order",
                           dp_analyze_col_name(&in->schema, c))
                     : fmt(x, "rows until the processing-time clock passes their %s",
                           dp_analyze_col_name(&in->schema, c)));
    return;
  }
  if (complete_capable(in)) {
    /* Sorting the whole result of an aggregation, re-emitted every batch. */
    p->props.modes = DP_MODE_COMPLETE;
    set_state(p, DP_STATE_NONE, NULL);
    return;
  }
  p->props.modes = 0;
  set_state(p, DP_STATE_UNBOUNDED, "every input row; a sort of an unbounded input never ends");
}

static void analyze_limit(actx *x, dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  attrs_pass(x, p, in, p->schema.ncols);
  if (p->props.bounded) return;
  p->props.changelog = in->props.changelog;
  if (complete_capable(in)) {
    p->props.modes = DP_MODE_COMPLETE;
    return;
  }
  /* The first N rows of a stream depend on arrival order: no engine gives the
     same answer twice, so no mode is offered (validate.c says what to do). */
  p->props.modes = 0;
}

static void analyze_topn(actx *x, dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  bool win_s = false, win_e = false;
  int wm = -1;
  for (int i = 0; i < p->u.topn.npartition; i++) {
    const dp_plan *w = NULL;
    int k = dp_analyze_window_col(in, p->u.topn.partition[i], &w);
    if (k == 'S') win_s = true;
    if (k == 'E') win_e = true;
    if (w && (k == 'S' || k == 'E')) wm = dp_analyze_attr(w->inputs[0], w->u.window.time_col);
  }
  bool window_topn = win_s && win_e && wm != -1;
  if (window_topn)
    attrs_pass(x, p, in, in->schema.ncols);
  else
    attrs_set(p, NULL);
  if (p->props.bounded) return;
  const char *parts =
      dp_analyze_col_list(x->a, &in->schema, p->u.topn.npartition, p->u.topn.partition);
  if (window_topn && in->props.changelog == DP_CHANGELOG_INSERT_ONLY) {
    p->props.modes = in->props.modes & MODES_STREAM;
    p->props.changelog = DP_CHANGELOG_INSERT_ONLY;
    set_state(p, DP_STATE_WATERMARK,
              fmt(x, "the top %lld rows per partition (%s); dropped when the watermark passes "
                     "window_end", (long long)p->u.topn.n, parts));
    return;
  }
  p->props.modes = DP_MODE_UPDATE;
  p->props.changelog = DP_CHANGELOG_RETRACT;
  set_state(p, DP_STATE_KEYS,
            p->u.topn.npartition > 0
                ? fmt(x, "the top %lld rows per partition (%s); never dropped, grows with the "
                         "number of partitions", (long long)p->u.topn.n, parts)
                : fmt(x, "the top %lld rows; never dropped", (long long)p->u.topn.n));
}

static void analyze_over(actx *x, dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  attrs_pass(x, p, in, in->schema.ncols);
  if (p->props.bounded) return;
  const dp_sort_key *k0 = p->u.over.norder > 0 ? &p->u.over.order[0] : NULL;
  int c = k0 ? dp_expr_as_column(k0->expr) : -1;
  int t = dp_analyze_attr(in, c);
  dp_buf parts = DP_BUF_INIT;
  for (int i = 0; i < p->u.over.npartition; i++) {
    if (i) dp_buf_puts(&parts, ", ");
    int pc = dp_expr_as_column(p->u.over.partition[i]);
    dp_buf_puts(&parts, pc >= 0 ? dp_analyze_col_name(&in->schema, pc) : "expr");
  }
  const char *pnames = fmt(x, "%s", dp_buf_cstr(&parts));
  dp_buf_free(&parts);
  if (k0 && !k0->desc && t != -1 && in->props.changelog == DP_CHANGELOG_INSERT_ONLY) {
    /* Rows are processed in time order once the watermark (or clock) passes them. */
    p->props.modes = in->props.modes & MODES_STREAM;
    p->props.changelog = DP_CHANGELOG_INSERT_ONLY;
    if (p->u.over.has_frame && p->u.over.lower >= 0)
      set_state(p, DP_STATE_WATERMARK,
                fmt(x, "rows within the frame per partition (%s); dropped as the watermark "
                       "passes them", pnames));
    else
      set_state(p, DP_STATE_KEYS,
                fmt(x, "one accumulator per partition (%s); never dropped, grows with the "
                       "number of partitions", pnames));
    return;
  }
  p->props.modes = 0;
  p->props.changelog = DP_CHANGELOG_RETRACT;
  set_state(p, DP_STATE_UNBOUNDED,
            fmt(x, "every input row per partition (%s); never dropped", pnames));
}

static void analyze_sink(actx *x, dp_plan *p) {
  const dp_plan *in = p->inputs[0];
  int *attrs = attrs_new(x, p->schema.ncols);
  if (!attrs) return;
  for (int i = 0; i < p->schema.ncols; i++) {
    int c = p->u.sink.col_map ? p->u.sink.col_map[i] : i;
    attrs[i] = dp_analyze_attr(in, c);
  }
  attrs_set(p, attrs);
}

/* What a node keeps when its inputs end, for EXPLAIN. */
static const char *bounded_state_desc(const dp_plan *p) {
  switch (p->kind) {
  case DP_P_AGGREGATE: return "one row per group until the input ends";
  case DP_P_JOIN: return "the rows of both sides until the inputs end";
  case DP_P_ASOF_JOIN: return "the rows of both sides until the inputs end";
  case DP_P_DISTINCT: case DP_P_UNION: case DP_P_SETOP:
    return "one row per distinct row until the input ends";
  case DP_P_SORT: return "every input row until the input ends";
  case DP_P_DEDUPLICATE: return "one row per key until the input ends";
  case DP_P_TOPN: return "the top rows per partition until the input ends";
  case DP_P_OVER: return "the rows of each partition until the input ends";
  default: return NULL;
  }
}

static void analyze_subqueries(actx *x, const dp_expr *e) {
  if (!e) return;
  switch (e->kind) {
  case DP_E_COLUMN: case DP_E_LITERAL: break;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++) analyze_subqueries(x, e->u.call.args[i]);
    break;
  case DP_E_CAST: analyze_subqueries(x, e->u.cast.arg); break;
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++) {
      analyze_subqueries(x, e->u.case_.whens[i]);
      analyze_subqueries(x, e->u.case_.thens[i]);
    }
    analyze_subqueries(x, e->u.case_.else_);
    break;
  case DP_E_FIELD: analyze_subqueries(x, e->u.field.arg); break;
  case DP_E_SUBQUERY:
    analyze_subqueries(x, e->u.subquery.arg);
    analyze_node(x, e->u.subquery.plan);
    break;
  }
}

static void analyze_node(actx *x, dp_plan *p) {
  if (!p || p->props.analyzed || x->rc) return;
  for (int i = 0; i < p->ninputs; i++) analyze_node(x, p->inputs[i]);
  if (p->kind == DP_P_FILTER) analyze_subqueries(x, p->u.filter.cond);
  if (p->kind == DP_P_PROJECT)
    for (int i = 0; i < p->u.project.n; i++) analyze_subqueries(x, p->u.project.exprs[i]);
  if (p->kind == DP_P_JOIN) analyze_subqueries(x, p->u.join.cond);
  if (x->rc) return;

  /* Defaults: a node over bounded inputs is bounded and can produce any mode;
     a stateless node passes its input's stream through unchanged. */
  dp_stream_props *sp = &p->props;
  sp->bounded = true;
  for (int i = 0; i < p->ninputs; i++)
    if (!p->inputs[i]->props.bounded) sp->bounded = false;
  sp->modes = MODES_ALL;
  sp->changelog = DP_CHANGELOG_INSERT_ONLY;
  sp->state = DP_STATE_NONE;
  sp->state_desc = NULL;
  sp->has_time_bound = false;
  sp->time_lower = sp->time_upper = 0;
  if (!sp->bounded && p->ninputs > 0) {
    sp->modes = p->inputs[0]->props.modes;
    sp->changelog = p->inputs[0]->props.changelog;
  }

  switch (p->kind) {
  case DP_P_SCAN: analyze_scan(x, p); break;
  case DP_P_VALUES: attrs_set(p, NULL); break;
  case DP_P_PROJECT: analyze_project(x, p); break;
  case DP_P_FILTER: attrs_pass(x, p, p->inputs[0], p->schema.ncols); break;
  case DP_P_WATERMARK: analyze_watermark(x, p); break;
  case DP_P_WINDOW: analyze_window(x, p); break;
  case DP_P_AGGREGATE: analyze_aggregate(x, p); break;
  case DP_P_JOIN: analyze_join(x, p); break;
  case DP_P_UNION: analyze_union(x, p); break;
  case DP_P_SETOP: analyze_setop(p); break;
  case DP_P_SORT: analyze_sort(x, p); break;
  case DP_P_LIMIT: analyze_limit(x, p); break;
  case DP_P_DISTINCT: analyze_distinct(x, p); break;
  case DP_P_DEDUPLICATE: analyze_dedup(x, p); break;
  case DP_P_TOPN: analyze_topn(x, p); break;
  case DP_P_OVER: analyze_over(x, p); break;
  case DP_P_UNNEST: attrs_pass(x, p, p->inputs[0], p->inputs[0]->schema.ncols); break;
  case DP_P_SINK: analyze_sink(x, p); break;
  case DP_P_ASOF_JOIN: analyze_asof(x, p); break;
  case DP_P_COUNT_: break;
  }
  dp_analyze_ttl(x->a, x->cat, p);
  if (sp->bounded && p->ninputs > 0) {
    sp->modes = MODES_ALL;
    sp->changelog = DP_CHANGELOG_INSERT_ONLY;
    const char *desc = bounded_state_desc(p);
    bool stateful = desc && (p->kind != DP_P_UNION || !p->u.union_.all);
    set_state(p, stateful ? DP_STATE_BOUNDED_INPUT : DP_STATE_NONE, desc);
  }
  sp->analyzed = true;
}

unsigned dp_analyze_output_mode(const dp_query_plan *q, const dp_plan *root) {
  if (q->output_mode) return q->output_mode;
  if (!root || (root->props.modes & DP_MODE_APPEND)) return DP_MODE_APPEND;
  return DP_MODE_UPDATE;
}

int dp_analyze(dp_arena *a, dp_diags *d, const dp_catalog *cat, dp_query_plan *q) {
  actx x = {a, d, cat, q, DIPPER_OK};
  for (int r = 0; r < q->nroots && !x.rc; r++) analyze_node(&x, q->roots[r]);
  for (int r = 0; r < q->nroots && !x.rc; r++) dp_analyze_changes(q->roots[r]);
  if (x.rc) {
    dp_span nowhere = {0, 0, 0, 0};
    return dp_error(d, x.rc, nowhere, "out of memory while analysing the streaming plan");
  }
  return DIPPER_OK;
}
