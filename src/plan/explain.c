/*
** explain.c — EXPLAIN: the logical plan as an indented tree of text.
**
** Owns the text format documented in explain.h (SQL tests match substrings of
** it) and the one-line spelling of bound expressions.  Reads plans; never
** changes them.  Temporary strings (formatted types and literals) live in an
** arena private to one call, freed before returning.
*/
#include "plan/explain.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "core/types.h"
#include "dipper.h"
#include "plan/catalog.h"

typedef struct explain_ctx {
  dp_buf *out;
  dp_arena *scratch;   /* per-call strings; NULL when out of memory */
  unsigned flags;
  /* Subquery plans met while printing a node's expressions: printed as extra
     children of the node, numbered in order of appearance. */
  int nsubq, capsubq;
  const dp_plan **subq;
  int subq_seen;       /* how many have been numbered in the whole explain */
  const dp_query_plan *q; /* whose watermarks the nodes' time attributes name; may be NULL */
  int json_level;      /* DIPPER_EXPLAIN_JSON: the indentation level of a root node */
} explain_ctx;

static void put_expr(explain_ctx *x, const dp_expr *e, const dp_schema *in);

static void put_upper(dp_buf *out, const char *s) {
  for (; s && *s; s++) dp_buf_putc(out, (char)toupper((unsigned char)*s));
}

static void put_duration(dp_buf *out, int64_t micros) {
  char tmp[64];
  dp_format_duration(tmp, sizeof tmp, micros);
  dp_buf_puts(out, tmp);
}

static void put_type(explain_ctx *x, const dp_type *t) {
  char tmp[256];
  size_t need = dp_type_print(tmp, sizeof tmp, t);
  if (need < sizeof tmp || !x->scratch) {
    dp_buf_puts(x->out, tmp);
    return;
  }
  const char *s = dp_type_format(x->scratch, t);
  if (!s) x->out->oom = true; /* the text is then thrown away whole */
  else dp_buf_puts(x->out, s);
}

static void put_colname(dp_buf *out, const dp_schema *in, int i) {
  if (in && i >= 0 && i < in->ncols && in->cols[i].name)
    dp_buf_puts(out, in->cols[i].name);
  else
    dp_buf_printf(out, "$%d", i);
}

static void put_value(explain_ctx *x, const dp_value *v) {
  const char *s = x->scratch ? dp_value_format(x->scratch, v) : NULL;
  if (!s) x->out->oom = true;
  else dp_buf_puts(x->out, s);
}

/* Operators whose spelling comes after their single operand ("x IS NULL"). */
static bool is_postfix_op(const char *op) {
  return strncmp(op, "IS ", 3) == 0;
}

static bool is_word_op(const char *op) {
  return isalpha((unsigned char)op[0]) != 0;
}

static void note_subquery(explain_ctx *x, const dp_plan *p) {
  if (x->nsubq == x->capsubq) {
    int cap = x->capsubq ? x->capsubq * 2 : 4;
    const dp_plan **grown =
        x->scratch ? dp_arena_grow(x->scratch, (void *)x->subq, (size_t)x->capsubq, (size_t)cap,
                                   sizeof *grown)
                   : NULL;
    if (!grown) return;
    x->subq = grown;
    x->capsubq = cap;
  }
  x->subq[x->nsubq++] = p;
}

static bool fn_named(const dp_func *fn, const char *name) {
  return fn && fn->name && strcmp(fn->name, name) == 0;
}

/* Calls the SQL writes with syntax of their own, printed the way they are written. */
static bool put_special_call(explain_ctx *x, const dp_expr *e, const dp_schema *in) {
  const dp_func *fn = e->u.call.fn;
  int n = e->u.call.nargs;
  dp_expr **args = e->u.call.args;
  dp_buf *out = x->out;
  if (fn_named(fn, "in") && n >= 1) { /* (x IN (a, b)) */
    dp_buf_putc(out, '(');
    put_expr(x, args[0], in);
    dp_buf_puts(out, " IN (");
    for (int i = 1; i < n; i++) {
      if (i > 1) dp_buf_puts(out, ", ");
      put_expr(x, args[i], in);
    }
    dp_buf_puts(out, "))");
    return true;
  }
  if (fn_named(fn, "extract") && n == 2 && args[0] && args[0]->kind == DP_E_LITERAL &&
      !args[0]->u.value.is_null && dp_type_is_string(args[0]->type)) { /* EXTRACT(HOUR FROM x) */
    dp_buf_puts(out, "EXTRACT(");
    dp_buf_put(out, args[0]->u.value.u.s.ptr, args[0]->u.value.u.s.len);
    dp_buf_puts(out, " FROM ");
    put_expr(x, args[1], in);
    dp_buf_putc(out, ')');
    return true;
  }
  if (fn_named(fn, "element_at") && n == 2) { /* arr[1], m['k'] */
    put_expr(x, args[0], in);
    dp_buf_putc(out, '[');
    put_expr(x, args[1], in);
    dp_buf_putc(out, ']');
    return true;
  }
  if (fn_named(fn, "array") || fn_named(fn, "map")) { /* ARRAY[1, 2], MAP['a', 1] */
    put_upper(out, fn->name);
    dp_buf_putc(out, '[');
    for (int i = 0; i < n; i++) {
      if (i) dp_buf_puts(out, ", ");
      put_expr(x, args[i], in);
    }
    dp_buf_putc(out, ']');
    return true;
  }
  return false;
}

static void put_call(explain_ctx *x, const dp_expr *e, const dp_schema *in) {
  const dp_func *fn = e->u.call.fn;
  int n = e->u.call.nargs;
  dp_expr **args = e->u.call.args;
  if (put_special_call(x, e, in)) return;
  if (fn && fn->op && n >= 1) {
    dp_buf_putc(x->out, '(');
    if (n == 1 && is_postfix_op(fn->op)) {
      put_expr(x, args[0], in);
      dp_buf_putc(x->out, ' ');
      dp_buf_puts(x->out, fn->op);
    } else if (n == 1) {
      dp_buf_puts(x->out, fn->op);
      if (is_word_op(fn->op)) dp_buf_putc(x->out, ' ');
      put_expr(x, args[0], in);
    } else if (n == 3 && strstr(fn->op, "BETWEEN")) {
      put_expr(x, args[0], in);
      dp_buf_printf(x->out, " %s ", fn->op);
      put_expr(x, args[1], in);
      dp_buf_puts(x->out, " AND ");
      put_expr(x, args[2], in);
    } else if (n == 3 && strstr(fn->op, "LIKE")) {
      put_expr(x, args[0], in);
      dp_buf_printf(x->out, " %s ", fn->op);
      put_expr(x, args[1], in);
      dp_buf_puts(x->out, " ESCAPE ");
      put_expr(x, args[2], in);
    } else {
      for (int i = 0; i < n; i++) {
        if (i) dp_buf_printf(x->out, " %s ", fn->op);
        put_expr(x, args[i], in);
      }
    }
    dp_buf_putc(x->out, ')');
    return;
  }
  put_upper(x->out, fn ? fn->name : "?");
  dp_buf_putc(x->out, '(');
  for (int i = 0; i < n; i++) {
    if (i) dp_buf_puts(x->out, ", ");
    put_expr(x, args[i], in);
  }
  dp_buf_putc(x->out, ')');
}

static void put_expr(explain_ctx *x, const dp_expr *e, const dp_schema *in) {
  dp_buf *out = x->out;
  if (!e) {
    dp_buf_puts(out, "NULL");
    return;
  }
  switch (e->kind) {
  case DP_E_COLUMN:
    if (e->u.column.outer > 0)
      dp_buf_printf(out, "outer%d.$%d", e->u.column.outer, e->u.column.index);
    else
      put_colname(out, in, e->u.column.index);
    break;
  case DP_E_LITERAL: put_value(x, &e->u.value); break;
  case DP_E_CALL: put_call(x, e, in); break;
  case DP_E_CAST:
    dp_buf_puts(out, e->u.cast.try_ ? "TRY_CAST(" : "CAST(");
    put_expr(x, e->u.cast.arg, in);
    dp_buf_puts(out, " AS ");
    put_type(x, e->type);
    dp_buf_putc(out, ')');
    break;
  case DP_E_CASE:
    dp_buf_puts(out, "CASE");
    for (int i = 0; i < e->u.case_.n; i++) {
      dp_buf_puts(out, " WHEN ");
      put_expr(x, e->u.case_.whens[i], in);
      dp_buf_puts(out, " THEN ");
      put_expr(x, e->u.case_.thens[i], in);
    }
    if (e->u.case_.else_) {
      dp_buf_puts(out, " ELSE ");
      put_expr(x, e->u.case_.else_, in);
    }
    dp_buf_puts(out, " END");
    break;
  case DP_E_FIELD: {
    const dp_expr *arg = e->u.field.arg;
    const dp_type *rt = arg ? arg->type : NULL;
    int fi = e->u.field.index;
    put_expr(x, arg, in);
    dp_buf_putc(out, '.');
    if (rt && rt->kind == DP_T_ROW && fi >= 0 && fi < rt->nfields && rt->fields[fi].name)
      dp_buf_puts(out, rt->fields[fi].name);
    else
      dp_buf_printf(out, "$%d", fi);
    break;
  }
  case DP_E_SUBQUERY: {
    int number = x->subq_seen + x->nsubq;
    note_subquery(x, e->u.subquery.plan);
    switch (e->u.subquery.kind) {
    case DP_SUBQ_SCALAR: dp_buf_printf(out, "$subquery%d", number); break;
    case DP_SUBQ_EXISTS:
      dp_buf_printf(out, "%sEXISTS($subquery%d)", e->u.subquery.negated ? "NOT " : "", number);
      break;
    case DP_SUBQ_IN:
      dp_buf_putc(out, '(');
      put_expr(x, e->u.subquery.arg, in);
      dp_buf_printf(out, " %sIN $subquery%d)", e->u.subquery.negated ? "NOT " : "", number);
      break;
    }
    break;
  }
  }
}

/* ---- node lines ---- */

static void put_col_list(explain_ctx *x, const dp_schema *in, int n, const int *cols) {
  dp_buf_putc(x->out, '[');
  for (int i = 0; i < n; i++) {
    if (i) dp_buf_puts(x->out, ", ");
    put_colname(x->out, in, cols[i]);
  }
  dp_buf_putc(x->out, ']');
}

static void put_expr_list(explain_ctx *x, const dp_schema *in, int n, dp_expr *const *exprs) {
  dp_buf_putc(x->out, '[');
  for (int i = 0; i < n; i++) {
    if (i) dp_buf_puts(x->out, ", ");
    put_expr(x, exprs[i], in);
  }
  dp_buf_putc(x->out, ']');
}

static void put_sort_keys(explain_ctx *x, const dp_schema *in, int n, const dp_sort_key *keys) {
  dp_buf_putc(x->out, '[');
  for (int i = 0; i < n; i++) {
    if (i) dp_buf_puts(x->out, ", ");
    put_expr(x, keys[i].expr, in);
    if (keys[i].desc) dp_buf_puts(x->out, " DESC");
    /* The default is NULLS FIRST for ASC and NULLS LAST for DESC: print only a departure. */
    if (keys[i].nulls_first == keys[i].desc)
      dp_buf_puts(x->out, keys[i].nulls_first ? " NULLS FIRST" : " NULLS LAST");
  }
  dp_buf_putc(x->out, ']');
}

static const dp_schema *input_schema(const dp_plan *p, int i) {
  return i < p->ninputs && p->inputs[i] ? &p->inputs[i]->schema : NULL;
}

/* How the query named one side of a join: the alias or table of the scan it
** reads (through row-preserving nodes), else "left"/"right". */
static const char *side_name(const dp_plan *p, const char *fallback) {
  while (p && (p->kind == DP_P_WATERMARK || p->kind == DP_P_FILTER || p->kind == DP_P_PROJECT))
    p = p->inputs[0];
  if (p && p->kind == DP_P_SCAN) {
    if (p->u.scan.alias) return p->u.scan.alias;
    if (p->u.scan.table && p->u.scan.table->name) return p->u.scan.table->name;
  }
  return fallback;
}

static bool schema_has(const dp_schema *s, const char *name) {
  for (int i = 0; s && name && i < s->ncols; i++)
    if (s->cols[i].name && strcmp(s->cols[i].name, name) == 0) return true;
  return false;
}

/* A join's condition sees the left columns then the right ones; a name both
** sides have is qualified with its side ("o.order_id = s.order_id"). */
static const dp_schema *join_schema(explain_ctx *x, const dp_plan *p, dp_schema *tmp) {
  const dp_schema *l = input_schema(p, 0), *r = input_schema(p, 1);
  int nl = l ? l->ncols : 0, nr = r ? r->ncols : 0;
  tmp->ncols = 0;
  tmp->cols = x->scratch ? dp_arena_calloc(x->scratch, (size_t)(nl + nr) + 1, sizeof(dp_field)) : NULL;
  if (!tmp->cols) return l;
  const char *lq = side_name(p->inputs[0], "left");
  const char *rq = p->ninputs > 1 ? side_name(p->inputs[1], "right") : "right";
  if (strcmp(lq, rq) == 0) { /* a self-join without aliases */
    lq = "left";
    rq = "right";
  }
  for (int i = 0; i < nl + nr; i++) {
    dp_field f = i < nl ? l->cols[i] : r->cols[i - nl];
    if (schema_has(i < nl ? r : l, f.name)) {
      char *q = dp_arena_printf(x->scratch, "%s.%s", i < nl ? lq : rq, f.name);
      if (q) f.name = q;
    }
    tmp->cols[i] = f;
  }
  tmp->ncols = nl + nr;
  return tmp;
}

static const char *window_kind_name(dp_window_kind k) {
  switch (k) {
  case DP_WIN_TUMBLE: return "TUMBLE";
  case DP_WIN_HOP: return "HOP";
  case DP_WIN_CUMULATE: return "CUMULATE";
  case DP_WIN_SESSION: return "SESSION";
  }
  return "?";
}

static const char *rank_name(dp_rank_kind k) {
  switch (k) {
  case DP_RANK_ROW_NUMBER: return "row_number";
  case DP_RANK_RANK: return "rank";
  case DP_RANK_DENSE_RANK: return "dense_rank";
  }
  return "?";
}

static void put_frame_bound(explain_ctx *x, const dp_plan *p, int64_t v, bool lower) {
  if (v < 0) {
    dp_buf_puts(x->out, lower ? "UNBOUNDED PRECEDING" : "UNBOUNDED FOLLOWING");
    return;
  }
  if (v == 0) {
    dp_buf_puts(x->out, "CURRENT ROW");
    return;
  }
  /* A RANGE over a time column counts µs; everything else counts rows or values. */
  const dp_sort_key *k0 = p->u.over.norder > 0 ? &p->u.over.order[0] : NULL;
  bool time_range = !p->u.over.rows && k0 && k0->expr && k0->expr->type &&
                    dp_type_is_temporal(k0->expr->type);
  if (time_range)
    put_duration(x->out, v);
  else
    dp_buf_printf(x->out, "%lld", (long long)v);
  dp_buf_puts(x->out, lower ? " PRECEDING" : " FOLLOWING");
}

static void put_agg(explain_ctx *x, const dp_schema *in, const dp_func *fn, int nargs,
                    dp_expr *const *args, bool distinct, const dp_expr *filter) {
  put_upper(x->out, fn ? fn->name : "?");
  dp_buf_putc(x->out, '(');
  if (distinct) dp_buf_puts(x->out, "DISTINCT ");
  if (nargs == 0 && fn && fn->kind == DP_FN_AGGREGATE) dp_buf_putc(x->out, '*');
  for (int i = 0; i < nargs; i++) {
    if (i) dp_buf_puts(x->out, ", ");
    put_expr(x, args[i], in);
  }
  dp_buf_putc(x->out, ')');
  if (filter) {
    dp_buf_puts(x->out, " FILTER (WHERE ");
    put_expr(x, filter, in);
    dp_buf_putc(x->out, ')');
  }
}

static const char *table_connector(const dp_table_def *t) {
  return t && t->connector ? t->connector : "?";
}

/* The rest of a node's EXPLAIN line after its kind, one function per node kind
** with more than a few fields (`in` is the schema of its first input). */
static void put_project(explain_ctx *x, const dp_plan *p, const dp_schema *in) {
  dp_buf *out = x->out;
  dp_buf_puts(out, " exprs=[");
  for (int i = 0; i < p->u.project.n; i++) {
    if (i) dp_buf_puts(out, ", ");
    size_t start = out->len;
    put_expr(x, p->u.project.exprs[i], in);
    const char *name = i < p->schema.ncols ? p->schema.cols[i].name : NULL;
    size_t written = out->len - start;
    if (name && !out->oom &&
        (strlen(name) != written || memcmp(out->data + start, name, written) != 0))
      dp_buf_printf(out, " AS %s", name);
  }
  dp_buf_putc(out, ']');
}

static void put_watermark(explain_ctx *x, const dp_plan *p, const dp_schema *in) {
  dp_buf *out = x->out;
  dp_buf_puts(out, " column=");
  put_colname(out, in ? in : &p->schema, p->u.watermark.time_col);
  if (p->u.watermark.delay >= 0) {
    dp_buf_puts(out, " delay=");
    put_duration(out, p->u.watermark.delay);
  } else {
    dp_buf_puts(out, " expr=");
    put_expr(x, p->u.watermark.expr, in ? in : &p->schema);
  }
  dp_buf_printf(out, " source=%s", p->u.watermark.source ? p->u.watermark.source : "?");
}

static void put_window(explain_ctx *x, const dp_plan *p, const dp_schema *in) {
  dp_buf *out = x->out;
  const dp_window_spec *w = &p->u.window;
  dp_buf_printf(out, " kind=%s time=", window_kind_name(w->kind));
  put_colname(out, in, w->time_col);
  switch (w->kind) {
  case DP_WIN_TUMBLE:
    dp_buf_puts(out, " size=");
    put_duration(out, w->size);
    break;
  case DP_WIN_HOP:
    dp_buf_puts(out, " size=");
    put_duration(out, w->size);
    dp_buf_puts(out, " slide=");
    put_duration(out, w->slide);
    break;
  case DP_WIN_CUMULATE:
    dp_buf_puts(out, " step=");
    put_duration(out, w->slide);
    dp_buf_puts(out, " size=");
    put_duration(out, w->size);
    break;
  case DP_WIN_SESSION:
    dp_buf_puts(out, " gap=");
    if (w->gap_expr)
      put_expr(x, w->gap_expr, in);
    else
      put_duration(out, w->gap);
    break;
  }
  if (w->offset != 0) {
    dp_buf_puts(out, " offset=");
    put_duration(out, w->offset);
  }
  if (w->npartition > 0) {
    dp_buf_puts(out, " partition=");
    put_col_list(x, in, w->npartition, w->partition);
  }
  if (w->syntax == DP_WSYN_LEGACY) dp_buf_puts(out, " syntax=legacy");
  if (w->syntax == DP_WSYN_SPARK) dp_buf_puts(out, " syntax=spark");
}

static void put_aggregate(explain_ctx *x, const dp_plan *p, const dp_schema *in) {
  dp_buf *out = x->out;
  dp_buf_puts(out, " group=");
  put_expr_list(x, in, p->u.aggregate.ngroup, p->u.aggregate.group);
  dp_buf_puts(out, " aggs=[");
  for (int i = 0; i < p->u.aggregate.naggs; i++) {
    const dp_agg_call *c = &p->u.aggregate.aggs[i];
    if (i) dp_buf_puts(out, ", ");
    put_agg(x, in, c->fn, c->nargs, c->args, c->distinct, c->filter);
  }
  dp_buf_putc(out, ']');
  if (p->u.aggregate.window)
    dp_buf_printf(out, " window=%s", window_kind_name(p->u.aggregate.window->u.window.kind));
}

static void put_asof(explain_ctx *x, const dp_plan *p, const dp_schema *in) {
  dp_buf *out = x->out;
  const dp_schema *right = input_schema(p, 1);
  dp_buf_printf(out, " kind=%s match=", dp_join_kind_name(p->u.asof.kind));
  put_colname(out, in, p->u.asof.left_time);
  dp_buf_printf(out, " %s ", dp_asof_op_name(p->u.asof.op));
  put_colname(out, right, p->u.asof.right_time);
  if (p->u.asof.nkeys > 0) {
    dp_buf_puts(out, " keys=[");
    for (int i = 0; i < p->u.asof.nkeys; i++) {
      if (i) dp_buf_puts(out, ", ");
      put_colname(out, in, p->u.asof.left_keys[i]);
      dp_buf_putc(out, '=');
      put_colname(out, right, p->u.asof.right_keys[i]);
    }
    dp_buf_putc(out, ']');
  }
  if (p->u.asof.tolerance >= 0) {
    char tol[48];
    if (in && dp_type_is_timestamp(in->cols[p->u.asof.left_time].type))
      dp_format_duration(tol, sizeof tol, p->u.asof.tolerance);
    else
      snprintf(tol, sizeof tol, "%lld", (long long)p->u.asof.tolerance);
    dp_buf_printf(out, " tolerance=%s", tol);
  }
}

static void put_join(explain_ctx *x, const dp_plan *p, const dp_schema *in) {
  dp_buf *out = x->out;
  dp_schema both;
  const dp_schema *lr = join_schema(x, p, &both);
  const dp_schema *right = input_schema(p, 1);
  dp_buf_printf(out, " kind=%s", dp_join_kind_name(p->u.join.kind));
  if (p->u.join.nkeys > 0) {
    dp_buf_puts(out, " keys=[");
    for (int i = 0; i < p->u.join.nkeys; i++) {
      if (i) dp_buf_puts(out, ", ");
      put_colname(out, in, p->u.join.left_keys[i]);
      dp_buf_putc(out, '=');
      put_colname(out, right, p->u.join.right_keys[i]);
    }
    dp_buf_putc(out, ']');
  }
  if (p->u.join.cond) {
    dp_buf_puts(out, " cond=");
    put_expr(x, p->u.join.cond, lr);
  }
  if (p->u.join.as_of) {
    dp_buf_puts(out, " temporal as_of=");
    put_expr(x, p->u.join.as_of, in);
  }
}

static void put_dedup(explain_ctx *x, const dp_plan *p, const dp_schema *in) {
  dp_buf *out = x->out;
  dp_buf_puts(out, " keys=");
  put_col_list(x, in, p->u.dedup.nkeys, p->u.dedup.keys);
  dp_buf_printf(out, " keep=%s", p->u.dedup.keep_last ? "last" : "first");
  if (p->u.dedup.order_col >= 0) {
    dp_buf_puts(out, " order=");
    put_colname(out, in, p->u.dedup.order_col);
  }
  if (p->u.dedup.within_watermark) dp_buf_puts(out, " within_watermark");
}

static void put_over(explain_ctx *x, const dp_plan *p, const dp_schema *in) {
  dp_buf *out = x->out;
  dp_buf_puts(out, " partition=");
  put_expr_list(x, in, p->u.over.npartition, p->u.over.partition);
  dp_buf_puts(out, " order=");
  put_sort_keys(x, in, p->u.over.norder, p->u.over.order);
  if (p->u.over.has_frame) {
    dp_buf_printf(out, " frame=%s BETWEEN ", p->u.over.rows ? "ROWS" : "RANGE");
    put_frame_bound(x, p, p->u.over.lower, true);
    dp_buf_puts(out, " AND ");
    put_frame_bound(x, p, p->u.over.upper, false);
  }
  dp_buf_puts(out, " calls=[");
  for (int i = 0; i < p->u.over.ncalls; i++) {
    const dp_over_call *c = &p->u.over.calls[i];
    if (i) dp_buf_puts(out, ", ");
    put_agg(x, in, c->fn, c->nargs, c->args, c->distinct, c->filter);
  }
  dp_buf_putc(out, ']');
}

static void put_node_line(explain_ctx *x, const dp_plan *p) {
  dp_buf *out = x->out;
  const dp_schema *in = input_schema(p, 0);
  dp_buf_puts(out, dp_plan_kind_name(p->kind));
  switch (p->kind) {
  case DP_P_SCAN:
    dp_buf_printf(out, " table=%s connector=%s",
                  p->u.scan.table && p->u.scan.table->name ? p->u.scan.table->name : "?",
                  table_connector(p->u.scan.table));
    if (p->u.scan.alias) dp_buf_printf(out, " alias=%s", p->u.scan.alias);
    break;
  case DP_P_VALUES: dp_buf_printf(out, " rows=%d", p->u.values.nrows); break;
  case DP_P_PROJECT:
    put_project(x, p, in);
    break;
  case DP_P_FILTER:
    dp_buf_puts(out, " cond=");
    put_expr(x, p->u.filter.cond, in);
    break;
  case DP_P_WATERMARK:
    put_watermark(x, p, in);
    break;
  case DP_P_WINDOW:
    put_window(x, p, in);
    break;
  case DP_P_AGGREGATE:
    put_aggregate(x, p, in);
    break;
  case DP_P_ASOF_JOIN:
    put_asof(x, p, in);
    break;
  case DP_P_JOIN:
    put_join(x, p, in);
    break;
  case DP_P_UNION: dp_buf_printf(out, " all=%s", p->u.union_.all ? "true" : "false"); break;
  case DP_P_SETOP:
    dp_buf_printf(out, " op=%s all=%s", p->u.setop.except ? "EXCEPT" : "INTERSECT",
                  p->u.setop.all ? "true" : "false");
    break;
  case DP_P_SORT:
    dp_buf_puts(out, " keys=");
    put_sort_keys(x, in, p->u.sort.nkeys, p->u.sort.keys);
    break;
  case DP_P_LIMIT:
    if (p->u.limit.limit >= 0) dp_buf_printf(out, " limit=%lld", (long long)p->u.limit.limit);
    if (p->u.limit.offset > 0) dp_buf_printf(out, " offset=%lld", (long long)p->u.limit.offset);
    break;
  case DP_P_DISTINCT: break;
  case DP_P_DEDUPLICATE:
    put_dedup(x, p, in);
    break;
  case DP_P_TOPN:
    dp_buf_puts(out, " partition=");
    put_col_list(x, in, p->u.topn.npartition, p->u.topn.partition);
    dp_buf_puts(out, " order=");
    put_sort_keys(x, in, p->u.topn.nkeys, p->u.topn.order);
    dp_buf_printf(out, " n=%lld rank=%s", (long long)p->u.topn.n, rank_name(p->u.topn.rank));
    break;
  case DP_P_OVER:
    put_over(x, p, in);
    break;
  case DP_P_UNNEST:
    dp_buf_puts(out, " expr=");
    put_expr(x, p->u.unnest.arg, in);
    if (p->u.unnest.with_ordinality) dp_buf_puts(out, " with_ordinality");
    break;
  case DP_P_SINK:
    dp_buf_printf(out, " table=%s connector=%s",
                  p->u.sink.table && p->u.sink.table->name ? p->u.sink.table->name : "?",
                  table_connector(p->u.sink.table));
    break;
  case DP_P_COUNT_: break;
  }
  dp_buf_putc(out, '\n');
}

static const char *changelog_name(dp_changelog c) {
  switch (c) {
  case DP_CHANGELOG_INSERT_ONLY: return "insert-only";
  case DP_CHANGELOG_UPSERT: return "upsert";
  case DP_CHANGELOG_RETRACT: return "retract";
  }
  return "?";
}

static const char *state_name(dp_state_kind s) {
  switch (s) {
  case DP_STATE_NONE: return "none";
  case DP_STATE_WATERMARK: return "watermark";
  case DP_STATE_KEYS: return "keys";
  case DP_STATE_UNBOUNDED: return "unbounded";
  case DP_STATE_BOUNDED_INPUT: return "bounded-input";
  }
  return "?";
}

/* EXPLAIN CHANGELOG_MODE: " changelogMode=[I,UB,UA,D]", Flink's spelling. */
static void put_changes(dp_buf *out, unsigned changes) {
  static const struct { unsigned bit; const char *name; } kinds[] = {
      {DP_CHANGES_I, "I"}, {DP_CHANGES_UB, "UB"}, {DP_CHANGES_UA, "UA"}, {DP_CHANGES_D, "D"}};
  dp_buf_puts(out, " changelogMode=[");
  int n = 0;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (changes & kinds[i].bit) dp_buf_printf(out, "%s%s", n++ ? "," : "", kinds[i].name);
  dp_buf_putc(out, ']');
}

static void put_streaming_line(explain_ctx *x, const dp_plan *p) {
  dp_buf *out = x->out;
  const dp_stream_props *sp = &p->props;
  dp_buf_printf(out, "streaming: %s modes=", sp->bounded ? "bounded" : "unbounded");
  static const struct { unsigned bit; const char *name; } modes[] = {
      {DP_MODE_APPEND, "append"}, {DP_MODE_UPDATE, "update"}, {DP_MODE_COMPLETE, "complete"}};
  int nmodes = 0;
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    if (!(sp->modes & modes[i].bit)) continue;
    if (nmodes++) dp_buf_putc(out, ',');
    dp_buf_puts(out, modes[i].name);
  }
  if (nmodes == 0) dp_buf_puts(out, "none");
  dp_buf_printf(out, " changelog=%s", changelog_name(sp->changelog));
  if (x->q && x->q->changelog_mode) put_changes(out, sp->changes);
  dp_buf_puts(out, " time=[");
  int nattr = 0;
  for (int i = 0; sp->time_attr && i < p->schema.ncols; i++) {
    if (sp->time_attr[i] == -1) continue;
    if (nattr++) dp_buf_puts(out, ", ");
    put_colname(out, &p->schema, i);
    if (sp->time_attr[i] >= 0)
      dp_buf_printf(out, "@wm%d", sp->time_attr[i]);
    else
      dp_buf_puts(out, "@proctime");
  }
  dp_buf_printf(out, "] state=%s", state_name(sp->state));
  if (sp->state != DP_STATE_NONE && sp->state_desc) dp_buf_printf(out, " (%s)", sp->state_desc);
  dp_buf_putc(out, '\n');
}

static void put_schema_line(explain_ctx *x, const dp_plan *p) {
  dp_buf_puts(x->out, "schema: (");
  for (int i = 0; i < p->schema.ncols; i++) {
    if (i) dp_buf_puts(x->out, ", ");
    dp_buf_printf(x->out, "%s ", p->schema.cols[i].name ? p->schema.cols[i].name : "?");
    put_type(x, p->schema.cols[i].type);
  }
  dp_buf_puts(x->out, ")\n");
}

/* ---- the JSON printer ----
** The same walk as the text: each node an object of its kind, its
** arguments (the node line's text after the kind), its schema and streaming
** properties as fields, its inputs and subqueries as arrays of nodes. */

void dp_explain_json_string(dp_buf *out, const char *s) {
  dp_buf_putc(out, '"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      dp_buf_putc(out, '\\');
      dp_buf_putc(out, (char)c);
    } else if (c == '\n') {
      dp_buf_puts(out, "\\n");
    } else if (c == '\t') {
      dp_buf_puts(out, "\\t");
    } else if (c < 0x20) {
      dp_buf_printf(out, "\\u%04x", c);
    } else {
      dp_buf_putc(out, (char)c);
    }
  }
  dp_buf_putc(out, '"');
}

/* A new line at the indentation of `level`, after a comma unless first. */
static void json_item(explain_ctx *x, bool *first, int level) {
  if (!*first) dp_buf_putc(x->out, ',');
  *first = false;
  dp_buf_putc(x->out, '\n');
  dp_buf_indent(x->out, level * 2);
}

static void json_key(explain_ctx *x, bool *first, int level, const char *key) {
  json_item(x, first, level);
  dp_buf_printf(x->out, "\"%s\": ", key);
}

static void json_streaming(explain_ctx *x, const dp_plan *p, bool *first, int level) {
  dp_buf *out = x->out;
  const dp_stream_props *sp = &p->props;
  json_key(x, first, level, "bounded");
  dp_buf_puts(out, sp->bounded ? "true" : "false");
  json_key(x, first, level, "modes");
  static const struct { unsigned bit; const char *name; } modes[] = {
      {DP_MODE_APPEND, "append"}, {DP_MODE_UPDATE, "update"}, {DP_MODE_COMPLETE, "complete"}};
  dp_buf_putc(out, '[');
  int nmodes = 0;
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    if (sp->modes & modes[i].bit) dp_buf_printf(out, "%s\"%s\"", nmodes++ ? ", " : "", modes[i].name);
  dp_buf_putc(out, ']');
  json_key(x, first, level, "changelog");
  dp_explain_json_string(out, changelog_name(sp->changelog));
  json_key(x, first, level, "time");
  dp_buf_putc(out, '[');
  int nattr = 0;
  for (int i = 0; sp->time_attr && i < p->schema.ncols; i++) {
    int wm = sp->time_attr[i];
    if (wm == -1) continue;
    dp_buf_puts(out, nattr++ ? ", {\"column\": " : "{\"column\": ");
    dp_explain_json_string(out, i < p->schema.ncols ? p->schema.cols[i].name : "?");
    if (wm < 0) {
      dp_buf_puts(out, ", \"proctime\": true}");
      continue;
    }
    dp_buf_printf(out, ", \"watermark\": {\"id\": %d", wm);
    const dp_watermark_info *w = x->q && wm < x->q->nwatermarks ? &x->q->watermarks[wm] : NULL;
    if (w) {
      dp_buf_puts(out, ", \"source\": ");
      dp_explain_json_string(out, w->source);
      dp_buf_puts(out, ", \"column\": ");
      dp_explain_json_string(out, w->column);
      if (w->delay >= 0) {
        char tmp[64];
        dp_format_duration(tmp, sizeof tmp, w->delay);
        dp_buf_puts(out, ", \"delay\": ");
        dp_explain_json_string(out, tmp);
      }
      if (w->nmembers > 0) {
        dp_buf_puts(out, ", \"min_of\": [");
        for (int k = 0; k < w->nmembers; k++) dp_buf_printf(out, "%s%d", k ? ", " : "", w->members[k]);
        dp_buf_putc(out, ']');
      }
    }
    dp_buf_puts(out, "}}");
  }
  dp_buf_putc(out, ']');
  json_key(x, first, level, "state");
  dp_buf_puts(out, "{\"kind\": ");
  dp_explain_json_string(out, state_name(sp->state));
  if (sp->state != DP_STATE_NONE && sp->state_desc) {
    dp_buf_puts(out, ", \"description\": ");
    dp_explain_json_string(out, sp->state_desc);
  }
  dp_buf_putc(out, '}');
}

/* The fields of node p before its inputs: kind, args, schema, streaming. */
static void json_node_fields(explain_ctx *x, const dp_plan *p, const char *line, bool *first,
                             int level) {
  dp_buf *out = x->out;
  const char *kind = dp_plan_kind_name(p->kind);
  size_t klen = strlen(kind);
  const char *args = strncmp(line, kind, klen) == 0 ? line + klen : line;
  while (*args == ' ') args++;
  json_key(x, first, level, "kind");
  dp_explain_json_string(out, kind);
  json_key(x, first, level, "args");
  dp_explain_json_string(out, args);
  if (!(x->flags & DIPPER_EXPLAIN_NO_SCHEMA)) {
    json_key(x, first, level, "schema");
    dp_buf_putc(out, '[');
    for (int i = 0; i < p->schema.ncols; i++) {
      dp_buf_puts(out, i ? ", {\"name\": " : "{\"name\": ");
      dp_explain_json_string(out, p->schema.cols[i].name ? p->schema.cols[i].name : "?");
      dp_buf_puts(out, ", \"type\": \"");
      put_type(x, p->schema.cols[i].type); /* type spellings hold no quote or backslash */
      dp_buf_puts(out, "\"}");
    }
    dp_buf_putc(out, ']');
  }
  if (!(x->flags & DIPPER_EXPLAIN_NO_STREAMING) && p->props.analyzed)
    json_streaming(x, p, first, level);
}

/* ---- the walk, for both printers ---- */

static void explain_node(explain_ctx *x, const dp_plan *p, int depth) {
  if (!p) return;
  bool json = (x->flags & DIPPER_EXPLAIN_JSON) != 0;
  int level = x->json_level + depth * 2; /* JSON: the node object's fields */
  dp_buf line = DP_BUF_INIT, *out = x->out;
  x->nsubq = 0;
  if (json) { /* the node line is the "args" field: written aside */
    x->out = &line;
    put_node_line(x, p);
    x->out = out;
    if (line.oom) out->oom = true;
    if (line.len > 0 && line.data[line.len - 1] == '\n') line.data[--line.len] = '\0';
    dp_buf_putc(out, '{');
  } else {
    dp_buf_indent(out, depth * 2);
    put_node_line(x, p);
  }
  /* Keep this node's subqueries: printing the children reuses the list. */
  int nsubq = x->nsubq;
  const dp_plan **subq = NULL;
  if (nsubq > 0 && x->scratch) {
    subq = dp_arena_alloc(x->scratch, (size_t)nsubq * sizeof *subq);
    if (subq) memcpy(subq, x->subq, (size_t)nsubq * sizeof *subq);
  }
  int first_number = x->subq_seen;
  x->subq_seen += nsubq;
  x->nsubq = 0;
  bool first = true;
  if (json) {
    json_node_fields(x, p, dp_buf_cstr(&line), &first, level + 1);
    dp_buf_free(&line);
    json_key(x, &first, level + 1, "inputs");
    dp_buf_putc(out, '[');
  } else {
    if (!(x->flags & DIPPER_EXPLAIN_NO_SCHEMA)) {
      dp_buf_indent(out, depth * 2 + 2);
      put_schema_line(x, p);
    }
    if (!(x->flags & DIPPER_EXPLAIN_NO_STREAMING) && p->props.analyzed) {
      dp_buf_indent(out, depth * 2 + 2);
      put_streaming_line(x, p);
    }
  }
  bool first_input = true;
  for (int i = 0; i < p->ninputs; i++) {
    if (json) json_item(x, &first_input, level + 2);
    explain_node(x, p->inputs[i], depth + 1);
  }
  if (json) {
    if (!first_input) {
      dp_buf_putc(out, '\n');
      dp_buf_indent(out, (level + 1) * 2);
    }
    dp_buf_putc(out, ']');
    if (subq) {
      json_key(x, &first, level + 1, "subqueries");
      dp_buf_putc(out, '[');
    }
  }
  bool first_sub = true;
  for (int i = 0; subq && i < nsubq; i++) {
    if (json) {
      json_item(x, &first_sub, level + 2);
      dp_buf_printf(out, "{\"name\": \"$subquery%d\", \"plan\": ", first_number + i);
      explain_node(x, subq[i], depth + 1);
      dp_buf_putc(out, '}');
      continue;
    }
    dp_buf_indent(out, depth * 2 + 2);
    dp_buf_printf(out, "$subquery%d:\n", first_number + i);
    explain_node(x, subq[i], depth + 2);
  }
  if (json) {
    if (subq) {
      dp_buf_putc(out, '\n');
      dp_buf_indent(out, (level + 1) * 2);
      dp_buf_putc(out, ']');
    }
    dp_buf_putc(out, '\n');
    dp_buf_indent(out, level * 2);
    dp_buf_putc(out, '}');
  }
}

void dp_explain_plan(dp_buf *out, const dp_query_plan *q, unsigned flags) {
  explain_ctx x = {0};
  x.out = out;
  x.flags = flags & ~DIPPER_EXPLAIN_JSON;
  x.q = q;
  x.scratch = dp_arena_new(0);
  if (!x.scratch) out->oom = true;
  for (int r = 0; r < q->nroots; r++) explain_node(&x, q->roots[r], 0);
  if (dp_arena_failed(x.scratch)) out->oom = true; /* a name or type left out */
  dp_arena_free(x.scratch);
}

void dp_explain_stmt_json(dp_buf *out, const char *summary, const dp_query_plan *q,
                          unsigned flags, int level) {
  explain_ctx x = {0};
  x.out = out;
  x.flags = flags | DIPPER_EXPLAIN_JSON;
  x.q = q;
  x.json_level = level + 2;
  x.scratch = dp_arena_new(0);
  if (!x.scratch) out->oom = true;
  bool first = true;
  dp_buf_putc(out, '{');
  if (summary) {
    json_key(&x, &first, level + 1, "summary");
    dp_explain_json_string(out, summary);
  }
  if (q && q->nroots > 0) {
    json_key(&x, &first, level + 1, "streaming");
    dp_buf_puts(out, q->streaming ? "true" : "false");
    json_key(&x, &first, level + 1, "roots");
    dp_buf_putc(out, '[');
    bool first_root = true;
    for (int r = 0; r < q->nroots; r++) {
      json_item(&x, &first_root, level + 2);
      explain_node(&x, q->roots[r], 0);
    }
    dp_buf_putc(out, '\n');
    dp_buf_indent(out, (level + 1) * 2);
    dp_buf_putc(out, ']');
  }
  if (!first) {
    dp_buf_putc(out, '\n');
    dp_buf_indent(out, level * 2);
  }
  dp_buf_putc(out, '}');
  if (dp_arena_failed(x.scratch)) out->oom = true; /* a name or type left out */
  dp_arena_free(x.scratch);
}

void dp_explain_node(dp_buf *out, const dp_plan *p) {
  explain_ctx x = {0};
  x.out = out;
  x.scratch = dp_arena_new(0);
  if (!x.scratch) out->oom = true;
  put_node_line(&x, p);
  dp_buf_puts(out, " ");
  put_schema_line(&x, p);
  if (dp_arena_failed(x.scratch)) out->oom = true; /* a name or type left out */
  dp_arena_free(x.scratch);
}

void dp_explain_expr(dp_buf *out, const dp_expr *e, const dp_schema *in) {
  explain_ctx x = {0};
  x.out = out;
  x.scratch = dp_arena_new(0);
  if (!x.scratch) out->oom = true;
  put_expr(&x, e, in);
  if (dp_arena_failed(x.scratch)) out->oom = true; /* a name or type left out */
  dp_arena_free(x.scratch);
}
