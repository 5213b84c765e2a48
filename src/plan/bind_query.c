/*
** bind_query.c — the query binder: queries and set operations to plan nodes.
**
** UNION / INTERSECT / EXCEPT with their columns unified; WITH; subqueries in
** expressions (IN, EXISTS, scalar subqueries: decorrelated into joins, NOT IN
** into NOT EXISTS).  Also the node helpers the other binder files share.
**
** Owns: nothing beyond the statement's arena.  Does not own: SELECT
** (bind_select.c), FROM (bind_from.c), windows (bind_window.c), expressions
** (bind_expr.c), statements (binder.c).
*/
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan/binder_int.h"


/* ------------------------------------------------------------------ */
/* nodes                                                               */
/* ------------------------------------------------------------------ */

dp_plan *dp_bind_new_node(dp_binder *b, dp_plan_kind kind, dp_span span, int ninputs, ...) {
  if (dp_bind_out_of_memory(b)) return NULL;
  dp_plan *p = dp_arena_calloc(b->a, 1, sizeof *p);
  if (!p) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory building the plan");
  p->kind = kind;
  p->span = span;
  p->ninputs = ninputs;
  if (ninputs > 0) {
    p->inputs = dp_arena_calloc(b->a, (size_t)ninputs, sizeof *p->inputs);
    if (!p->inputs) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory building the plan");
    va_list ap;
    va_start(ap, ninputs);
    for (int i = 0; i < ninputs; i++) p->inputs[i] = va_arg(ap, dp_plan *);
    va_end(ap);
  }
  return p;
}

void dp_bind_schema(dp_binder *b, dp_plan *p, int n) {
  p->schema.cols = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *p->schema.cols);
  p->schema.ncols = p->schema.cols ? n : 0; /* never a count without its columns */
  if (!p->schema.cols) dp_bind_err(b, DIPPER_NOMEM, p->span, "out of memory building the plan");
}

void dp_bind_copy_schema(dp_binder *b, dp_plan *p, const dp_plan *from, int extra) {
  dp_bind_schema(b, p, from->schema.ncols + extra);
  if (p->schema.cols)
    memcpy(p->schema.cols, from->schema.cols, (size_t)from->schema.ncols * sizeof(dp_field));
}

const dp_type *dp_bind_nullable(dp_binder *b, const dp_type *t) {
  if (!t->not_null) return t;
  const dp_type *r = dp_type_with_nullability(b->a, t, false);
  return r ? r : t;
}

const dp_type *dp_bind_not_null(dp_binder *b, const dp_type *t) {
  const dp_type *r = dp_type_with_nullability(b->a, t, true);
  return r ? r : t;
}

dp_expr *dp_bind_col_ref(dp_binder *b, int index, const dp_type *type, dp_span span) {
  dp_expr *e = dp_arena_calloc(b->a, 1, sizeof *e);
  if (!e) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory");
  e->kind = DP_E_COLUMN;
  e->type = type;
  e->span = span;
  e->u.column.index = index;
  return e;
}

int dp_bind_as_column(const dp_expr *e) {
  return e && e->kind == DP_E_COLUMN && e->u.column.outer == 0 ? e->u.column.index : -1;
}

const char *dp_bind_expr_name(dp_binder *b, int pos) {
  return dp_arena_printf(b->a, "EXPR$%d", pos);
}

/* Rewrite, in place, the columns of a fresh copy: input column i becomes
** map[i] (kept when map[i] < 0); with `decorrelate`, references one query out
** become input columns and deeper ones move one level in.  Recursion depth is
** bounded by the binder's expression depth limit. */
void dp_bind_rewrite_cols(dp_expr *x, const int *map, int nmap, bool decorrelate) {
  if (!x) return;
  switch (x->kind) {
  case DP_E_COLUMN:
    if (x->u.column.outer == 0) {
      if (map && x->u.column.index >= 0 && x->u.column.index < nmap && map[x->u.column.index] >= 0)
        x->u.column.index = map[x->u.column.index];
    } else if (decorrelate && x->u.column.outer > 0) {
      x->u.column.outer--;
    }
    break;
  case DP_E_CALL:
    for (int i = 0; i < x->u.call.nargs; i++) dp_bind_rewrite_cols(x->u.call.args[i], map, nmap, decorrelate);
    break;
  case DP_E_CAST:
    dp_bind_rewrite_cols(x->u.cast.arg, map, nmap, decorrelate);
    break;
  case DP_E_CASE:
    for (int i = 0; i < x->u.case_.n; i++) {
      dp_bind_rewrite_cols(x->u.case_.whens[i], map, nmap, decorrelate);
      dp_bind_rewrite_cols(x->u.case_.thens[i], map, nmap, decorrelate);
    }
    dp_bind_rewrite_cols(x->u.case_.else_, map, nmap, decorrelate);
    break;
  case DP_E_FIELD:
    dp_bind_rewrite_cols(x->u.field.arg, map, nmap, decorrelate);
    break;
  case DP_E_SUBQUERY:
    dp_bind_rewrite_cols(x->u.subquery.arg, map, nmap, decorrelate);
    break;
  case DP_E_LITERAL:
    break;
  }
}

/* Copy an expression replacing input column i by map[i] (map[i] < 0: keep). */
dp_expr *dp_bind_remap(dp_binder *b, const dp_expr *e, const int *map, int nmap) {
  dp_expr *c = dp_bexpr_copy(b->a, e);
  if (!c) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  dp_bind_rewrite_cols(c, map, nmap, false);
  return c;
}

/* ------------------------------------------------------------------ */
/* subqueries in expressions                                           */
/* (correlated references: dp_expr_reads_outer / dp_plan_reads_outer)  */
/* ------------------------------------------------------------------ */

/* Does p return at most one row whatever its input: a global aggregate,
** LIMIT 0 or 1, one row of VALUES, or row-preserving nodes over one? */
static bool at_most_one_row(const dp_plan *p) {
  for (int depth = 0; p && depth < 64; depth++) {
    switch (p->kind) {
    case DP_P_AGGREGATE: return p->u.aggregate.ngroup == 0;
    case DP_P_VALUES: return p->u.values.nrows <= 1;
    case DP_P_LIMIT: if (p->u.limit.limit >= 0 && p->u.limit.limit <= 1) return true; break;
    case DP_P_PROJECT: case DP_P_FILTER: case DP_P_SORT: case DP_P_DISTINCT: break;
    default: return false;
    }
    p = p->inputs[0];
  }
  return false;
}

/* A copy of e as seen from inside a subquery of its query: every column
** reference moves one level out.  NULL when e holds a subquery itself. */
static dp_expr *raise_outer(dp_binder *b, const dp_expr *e) {
  if (!e) return NULL;
  dp_expr *c = dp_arena_alloc(b->a, sizeof *c);
  if (!c) return NULL;
  *c = *e;
  switch (e->kind) {
  case DP_E_COLUMN: c->u.column.outer = e->u.column.outer + 1; return c;
  case DP_E_LITERAL: return c;
  case DP_E_CALL:
    c->u.call.args = dp_arena_calloc(b->a, (size_t)(e->u.call.nargs ? e->u.call.nargs : 1), sizeof(dp_expr *));
    if (!c->u.call.args) return NULL;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!(c->u.call.args[i] = raise_outer(b, e->u.call.args[i]))) return NULL;
    return c;
  case DP_E_CAST: return (c->u.cast.arg = raise_outer(b, e->u.cast.arg)) ? c : NULL;
  case DP_E_FIELD: return (c->u.field.arg = raise_outer(b, e->u.field.arg)) ? c : NULL;
  case DP_E_CASE:
    c->u.case_.whens = dp_arena_calloc(b->a, (size_t)e->u.case_.n + 1, sizeof(dp_expr *));
    c->u.case_.thens = dp_arena_calloc(b->a, (size_t)e->u.case_.n + 1, sizeof(dp_expr *));
    if (!c->u.case_.whens || !c->u.case_.thens) return NULL;
    for (int i = 0; i < e->u.case_.n; i++)
      if (!(c->u.case_.whens[i] = raise_outer(b, e->u.case_.whens[i])) ||
          !(c->u.case_.thens[i] = raise_outer(b, e->u.case_.thens[i])))
        return NULL;
    if (e->u.case_.else_ && !(c->u.case_.else_ = raise_outer(b, e->u.case_.else_))) return NULL;
    return c;
  case DP_E_SUBQUERY: return NULL;
  }
  return NULL;
}

/* `x NOT IN (SELECT v ...)` is TRUE only when every `x = v` is FALSE: a NULL
** on either side makes it NULL, never TRUE (SQL's three-valued logic).  An
** anti join on `x = v` alone would keep the row.  Uncorrelated, it becomes
** NOT (x IN (SELECT v ...)), which the evaluator answers by hashing; a
** correlated one becomes
** `NOT EXISTS (SELECT v ... WHERE x = v OR (x = v) IS NULL)` — an anti join
** on the null-aware condition, the plan Spark builds for NOT IN — with the
** condition merged into the subquery's own filter when it has one (where a
** correlation lives).  NULL (and no error) when the shape is not handled:
** the conjunct stays as it was. */
static dp_expr *not_in_as_not_exists(dp_binder *b, const dp_expr *conj) {
  if (conj->kind != DP_E_SUBQUERY || conj->u.subquery.kind != DP_SUBQ_IN || !conj->u.subquery.negated)
    return NULL;
  dp_plan *sub = conj->u.subquery.plan;
  if (!sub || sub->schema.ncols != 1) return NULL;
  if (!dp_plan_reads_outer(sub, 1)) {
    /* Uncorrelated: the engine hashes the list once and remembers whether
    ** it held a NULL (exec/subquery.c) — one probe per row, where an anti
    ** join on the condition below, which has no equality key, would compare
    ** every row with every value.  NOT (x IN ..) stays an expression: the
    ** WHERE rewrites make semi and anti joins only of bare subqueries. */
    dp_expr *in = dp_arena_alloc(b->a, sizeof *in);
    if (!in) return NULL;
    *in = *conj;
    in->u.subquery.negated = false;
    return dp_bind_call_named(b, "not", 1, &in, conj->span);
  }
  dp_plan *base = sub;    /* the rows the condition filters */
  dp_expr *val = NULL;    /* the compared value, over `base` */
  dp_expr *extra = NULL;  /* the subquery's own filter, kept */
  bool merge = sub->kind == DP_P_PROJECT && sub->inputs[0]->kind == DP_P_FILTER;
  if (merge) {
    base = sub->inputs[0]->inputs[0];
    extra = sub->inputs[0]->u.filter.cond;
    val = sub->u.project.exprs[0];
  } else {
    if (dp_plan_reads_outer(sub, 1)) return NULL;
    val = dp_bind_col_ref(b, 0, sub->schema.cols[0].type, conj->span);
  }
  dp_expr *x = raise_outer(b, conj->u.subquery.arg);
  if (!x || !val) return NULL;
  dp_expr *eargs[2] = {x, dp_bexpr_copy(b->a, val)};
  if (!eargs[1]) return NULL;
  dp_expr *eq = dp_bind_call_named(b, "eq", 2, eargs, conj->span);
  dp_expr *eq2 = eq ? dp_bexpr_copy(b->a, eq) : NULL;
  dp_expr *isnull = eq2 ? dp_bind_call_named(b, "is_null", 1, &eq2, conj->span) : NULL;
  dp_expr *oargs[2] = {eq, isnull};
  dp_expr *na = isnull ? dp_bind_call_named(b, "or", 2, oargs, conj->span) : NULL;
  if (!na) return NULL;
  if (extra) {
    dp_expr *aargs[2] = {extra, na};
    if (!(na = dp_bind_and(b, 2, aargs))) return NULL;
  }
  dp_plan *f = dp_bind_new_node(b, DP_P_FILTER, conj->span, 1, base);
  if (!f) return NULL;
  dp_bind_copy_schema(b, f, base, 0);
  f->u.filter.cond = na;
  dp_plan *proj = dp_bind_new_node(b, DP_P_PROJECT, sub->span, 1, f);
  if (!proj) return NULL;
  dp_bind_copy_schema(b, proj, sub, 0);
  proj->u.project.n = 1;
  proj->u.project.exprs = dp_arena_calloc(b->a, 1, sizeof(dp_expr *));
  if (!proj->u.project.exprs || !(proj->u.project.exprs[0] = dp_bexpr_copy(b->a, val))) return NULL;
  dp_expr *e = dp_arena_alloc(b->a, sizeof *e);
  if (!e) return NULL;
  *e = *conj;
  e->u.subquery.kind = DP_SUBQ_EXISTS;
  e->u.subquery.arg = NULL;
  e->u.subquery.plan = proj;
  return e;
}

dp_expr *dp_bind_rewrite_not_in(dp_binder *b, dp_expr *cond) {
  int n = 0, cap = 0;
  dp_expr **conj = NULL;
  dp_bind_conjuncts(b, cond, &n, &cap, &conj);
  bool changed = false;
  for (int i = 0; i < n; i++) {
    dp_expr *r = not_in_as_not_exists(b, conj[i]);
    if (r) {
      conj[i] = r;
      changed = true;
    }
  }
  return changed ? dp_bind_and(b, n, conj) : cond;
}

#define MAX_SCALARS 16

/* The scalar subqueries of one FILTER or PROJECT that become LEFT joins of
** its input: join k's right side, and its condition over the left side so
** far (the node's input, then the earlier right sides) ++ this right side. */
typedef struct scalar_joins {
  int nl;                 /* columns of the node's input */
  bool correlated_ok;     /* the node's correlated references name its input row */
  int n;
  dp_plan *right[MAX_SCALARS];
  dp_expr *cond[MAX_SCALARS]; /* NULL: no condition (one row for every left row) */
} scalar_joins;

/* The value of aggregate `a` over no rows: COUNT's 0, NULL for the others;
** NULL (no expression) when it is neither (a collection). */
static dp_expr *empty_value(dp_binder *b, const dp_agg_call *a, dp_span span) {
  const char *fn = a->fn->name;
  if (strcmp(fn, "count") == 0 || strcmp(fn, "approx_count_distinct") == 0)
    return dp_bind_literal_expr(b, dp_value_int(a->type, 0), span);
  if (strcmp(fn, "collect") == 0) return NULL;
  return dp_bind_literal_expr(b, dp_value_null(a->type), span);
}

/* A copy of e over an aggregate's output with column j replaced by vals[j]. */
static dp_expr *subst_cols(dp_binder *b, const dp_expr *e, dp_expr *const *vals, int nvals) {
  if (e->kind == DP_E_COLUMN && e->u.column.outer == 0) {
    int j = e->u.column.index;
    return j >= 0 && j < nvals ? dp_bexpr_copy(b->a, vals[j]) : NULL;
  }
  dp_expr *c = dp_arena_alloc(b->a, sizeof *c);
  if (!c) return NULL;
  *c = *e;
  switch (e->kind) {
  case DP_E_COLUMN: case DP_E_LITERAL: return c;
  case DP_E_CALL:
    c->u.call.args = dp_arena_calloc(b->a, (size_t)(e->u.call.nargs ? e->u.call.nargs : 1), sizeof(dp_expr *));
    if (!c->u.call.args) return NULL;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!(c->u.call.args[i] = subst_cols(b, e->u.call.args[i], vals, nvals))) return NULL;
    return c;
  case DP_E_CAST: return (c->u.cast.arg = subst_cols(b, e->u.cast.arg, vals, nvals)) ? c : NULL;
  case DP_E_FIELD: return (c->u.field.arg = subst_cols(b, e->u.field.arg, vals, nvals)) ? c : NULL;
  case DP_E_CASE:
    c->u.case_.whens = dp_arena_calloc(b->a, (size_t)e->u.case_.n + 1, sizeof(dp_expr *));
    c->u.case_.thens = dp_arena_calloc(b->a, (size_t)e->u.case_.n + 1, sizeof(dp_expr *));
    if (!c->u.case_.whens || !c->u.case_.thens) return NULL;
    for (int i = 0; i < e->u.case_.n; i++)
      if (!(c->u.case_.whens[i] = subst_cols(b, e->u.case_.whens[i], vals, nvals)) ||
          !(c->u.case_.thens[i] = subst_cols(b, e->u.case_.thens[i], vals, nvals)))
        return NULL;
    if (e->u.case_.else_ && !(c->u.case_.else_ = subst_cols(b, e->u.case_.else_, vals, nvals))) return NULL;
    return c;
  case DP_E_SUBQUERY: return NULL;
  }
  return NULL;
}

/* A correlated scalar subquery of the common shape
**     (SELECT f(AGG(y), ..) FROM t2 WHERE t2.k = t1.k AND <uncorrelated>)
** — one aggregate row over the rows the subquery's WHERE matches by
** equalities with columns of the outer row — as a right side grouped by the
** correlated inner expressions:
**     LEFT JOIN (SELECT k, f(AGG(y), ..) FROM t2 WHERE <uncorrelated> GROUP BY k) ON t1.k = k
** (Spark's decorrelation of such subqueries).  An outer row that matches no
** group still has a value — the aggregate over no rows: NULL, but COUNT's 0
** — so the expression that replaces the subquery is
**     CASE WHEN k IS NULL THEN <value over no rows> ELSE value END
** when that value is not NULL (an equality never matches a NULL key, so a
** NULL key means no group matched).  The right side goes to sj, its columns
** start at `col`; returns the replacement, or NULL when the shape is
** another (the subquery is left as it is). */
static dp_expr *decorrelate_scalar(dp_binder *b, const dp_expr *e, scalar_joins *sj, int col) {
  dp_plan *sub = e->u.subquery.plan, *top = sub, *proj = NULL;
  if (top->kind == DP_P_PROJECT) {
    proj = top;
    top = top->inputs[0];
  }
  if (top->kind != DP_P_AGGREGATE || top->u.aggregate.ngroup != 0 || top->u.aggregate.window) return NULL;
  const dp_plan *agg = top;
  dp_plan *filt = agg->inputs[0];
  if (filt->kind != DP_P_FILTER || dp_plan_reads_outer(filt->inputs[0], 1)) return NULL;
  int naggs = agg->u.aggregate.naggs;
  if (naggs < 1 || (!proj && naggs != 1)) return NULL;
  for (int i = 0; i < naggs; i++) {
    const dp_agg_call *a = &agg->u.aggregate.aggs[i];
    if (dp_expr_reads_outer(a->filter, 1)) return NULL;
    for (int k = 0; k < a->nargs; k++)
      if (dp_expr_reads_outer(a->args[k], 1)) return NULL;
  }
  if (proj && (proj->u.project.n != 1 || dp_expr_reads_outer(proj->u.project.exprs[0], 1))) return NULL;

  /* The WHERE: equalities inner = outer column, and uncorrelated conditions. */
  int n = 0, cap = 0;
  dp_expr **conj = NULL;
  dp_bind_conjuncts(b, filt->u.filter.cond, &n, &cap, &conj);
  dp_expr **inner = dp_arena_calloc(b->a, (size_t)n + 1, sizeof *inner);
  dp_expr **rest = dp_arena_calloc(b->a, (size_t)n + 1, sizeof *rest);
  const dp_expr **outer = dp_arena_calloc(b->a, (size_t)n + 1, sizeof *outer);
  if (!inner || !rest || !outer) return NULL;
  int nk = 0, nrest = 0;
  for (int i = 0; i < n; i++) {
    dp_expr *c = conj[i];
    if (!dp_expr_reads_outer(c, 1)) {
      rest[nrest++] = c;
      continue;
    }
    if (c->kind != DP_E_CALL || c->u.call.nargs != 2 || strcmp(c->u.call.fn->name, "eq") != 0) return NULL;
    /* one side a column of the outer row (no cast: it becomes a join key),
       the other free of it */
    int taken = nk;
    for (int side = 0; side < 2 && taken == nk; side++) {
      const dp_expr *o = c->u.call.args[side], *in = c->u.call.args[1 - side];
      if (o->kind != DP_E_COLUMN || o->u.column.outer != 1 || dp_expr_reads_outer(in, 1)) continue;
      if (o->u.column.index < 0 || o->u.column.index >= sj->nl) return NULL;
      outer[nk] = o;
      if (!(inner[nk++] = dp_bexpr_copy(b->a, in))) return NULL;
    }
    if (taken == nk) return NULL;
  }
  if (nk == 0) return NULL;

  /* The value over no rows, when it is not NULL. */
  dp_expr **empties = dp_arena_calloc(b->a, (size_t)naggs, sizeof *empties);
  if (!empties) return NULL;
  for (int i = 0; i < naggs; i++)
    if (!(empties[i] = empty_value(b, &agg->u.aggregate.aggs[i], e->span))) return NULL;
  dp_expr *empty = proj ? subst_cols(b, proj->u.project.exprs[0], empties, naggs) : empties[0];
  if (!empty) return NULL;
  bool empty_is_null = empty->kind == DP_E_LITERAL && empty->u.value.is_null;

  /* FILTER (the rest) → AGGREGATE grouped by the inner sides → PROJECT keys, value */
  dp_plan *below = filt->inputs[0];
  if (nrest > 0) {
    dp_plan *f = dp_bind_new_node(b, DP_P_FILTER, filt->span, 1, below);
    if (!f) return NULL;
    dp_bind_copy_schema(b, f, below, 0);
    if (!(f->u.filter.cond = dp_bind_and(b, nrest, rest))) return NULL;
    below = f;
  }
  dp_plan *g = dp_bind_new_node(b, DP_P_AGGREGATE, agg->span, 1, below);
  if (!g) return NULL;
  dp_bind_schema(b, g, nk + naggs);
  if (!g->schema.cols) return NULL;
  for (int i = 0; i < nk; i++) {
    int ic = dp_bind_as_column(inner[i]);
    const char *name = ic >= 0 && ic < below->schema.ncols ? below->schema.cols[ic].name : dp_bind_expr_name(b, i);
    g->schema.cols[i] = (dp_field){name, inner[i]->type};
  }
  for (int i = 0; i < naggs; i++) g->schema.cols[nk + i] = agg->schema.cols[i];
  g->u.aggregate.ngroup = nk;
  g->u.aggregate.group = inner;
  g->u.aggregate.naggs = naggs;
  g->u.aggregate.aggs = agg->u.aggregate.aggs;
  g->u.aggregate.wstart = g->u.aggregate.wend = -1;

  int *map = dp_arena_calloc(b->a, (size_t)naggs, sizeof *map);
  if (!map) return NULL;
  for (int i = 0; i < naggs; i++) map[i] = nk + i;
  dp_expr *value = proj ? dp_bind_remap(b, proj->u.project.exprs[0], map, naggs)
                        : dp_bind_col_ref(b, nk, agg->schema.cols[0].type, e->span);
  dp_plan *r = dp_bind_new_node(b, DP_P_PROJECT, sub->span, 1, g);
  dp_expr **exprs = dp_arena_calloc(b->a, (size_t)nk + 1, sizeof *exprs);
  if (!value || !r || !exprs) return NULL;
  dp_bind_schema(b, r, nk + 1);
  if (!r->schema.cols) return NULL;
  for (int i = 0; i < nk; i++) {
    if (!(exprs[i] = dp_bind_col_ref(b, i, inner[i]->type, e->span))) return NULL;
    r->schema.cols[i] = g->schema.cols[i];
  }
  exprs[nk] = value;
  r->schema.cols[nk] = (dp_field){sub->schema.cols[0].name, value->type};
  r->u.project.n = nk + 1;
  r->u.project.exprs = exprs;

  /* ON t1.k = k, ... over left (the input, then earlier right sides) ++ r */
  dp_expr **eqs = dp_arena_calloc(b->a, (size_t)nk, sizeof *eqs);
  if (!eqs) return NULL;
  for (int i = 0; i < nk; i++) {
    dp_expr *args[2] = {dp_bind_col_ref(b, outer[i]->u.column.index, outer[i]->type, e->span),
                        dp_bind_col_ref(b, col + i, dp_bind_nullable(b, inner[i]->type), e->span)};
    if (!args[0] || !args[1] || !(eqs[i] = dp_bind_call_named(b, "eq", 2, args, e->span))) return NULL;
  }
  dp_expr *on = dp_bind_and(b, nk, eqs);
  dp_expr *v = dp_bind_col_ref(b, col + nk, e->type, e->span);
  if (!on || !v) return NULL;
  if (!empty_is_null) {
    /* no group matched: the value over no rows */
    dp_expr *key = dp_bind_col_ref(b, col, dp_bind_nullable(b, inner[0]->type), e->span);
    dp_expr *nokey = key ? dp_bind_call_named(b, "is_null", 1, &key, e->span) : NULL;
    dp_expr *c = dp_arena_calloc(b->a, 1, sizeof *c);
    dp_expr **whens = dp_arena_calloc(b->a, 1, sizeof *whens);
    dp_expr **thens = dp_arena_calloc(b->a, 1, sizeof *thens);
    if (!nokey || !c || !whens || !thens) return NULL;
    whens[0] = nokey;
    thens[0] = empty;
    c->kind = DP_E_CASE;
    c->type = e->type;
    c->span = e->span;
    c->u.case_.n = 1;
    c->u.case_.whens = whens;
    c->u.case_.thens = thens;
    c->u.case_.else_ = v;
    v = c;
  }
  sj->right[sj->n] = r;
  sj->cond[sj->n++] = on;
  return v;
}

/* Replace, in e, the scalar subqueries that become joins by references to
** the joined columns: the uncorrelated ones that return at most one row (no
** condition), and, where the node allows it, the correlated ones of
** decorrelate_scalar's shape. */
static dp_expr *take_scalars(dp_binder *b, dp_expr *e, scalar_joins *sj) {
  if (!e) return e;
  switch (e->kind) {
  case DP_E_SUBQUERY: {
    if (e->u.subquery.kind != DP_SUBQ_SCALAR || sj->n >= MAX_SCALARS) return e;
    int col = sj->nl;
    for (int k = 0; k < sj->n; k++) col += sj->right[k]->schema.ncols;
    if (!dp_plan_reads_outer(e->u.subquery.plan, 1)) {
      if (!at_most_one_row(e->u.subquery.plan)) return e; /* run apart, once (exec/subquery.c) */
      sj->right[sj->n] = e->u.subquery.plan;
      sj->cond[sj->n++] = NULL;
      dp_expr *c = dp_bind_col_ref(b, col, e->type, e->span);
      return c ? c : e;
    }
    if (!sj->correlated_ok) return e;
    dp_expr *r = decorrelate_scalar(b, e, sj, col);
    return r ? r : e;
  }
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++) e->u.call.args[i] = take_scalars(b, e->u.call.args[i], sj);
    return e;
  case DP_E_CAST: e->u.cast.arg = take_scalars(b, e->u.cast.arg, sj); return e;
  case DP_E_FIELD: e->u.field.arg = take_scalars(b, e->u.field.arg, sj); return e;
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++) {
      e->u.case_.whens[i] = take_scalars(b, e->u.case_.whens[i], sj);
      e->u.case_.thens[i] = take_scalars(b, e->u.case_.thens[i], sj);
    }
    e->u.case_.else_ = take_scalars(b, e->u.case_.else_, sj);
    return e;
  default: return e;
  }
}

/* Scalar subqueries in the expressions of a FILTER or PROJECT become LEFT
** joins of the node's input with the subquery: an uncorrelated one that
** returns at most one row joins with no condition — each input row gets the
** one value, or NULL when the subquery is empty, a scalar subquery's
** meaning — and runs once, to its end, as the join's build side; a
** correlated one of the common shape joins on its correlation
** (decorrelate_scalar).  (Spark plans uncorrelated scalar subqueries apart
** and decorrelated ones as such joins.)  The others stay expressions: the
** uncorrelated ones run once (exec/subquery.c).  `safe` names the nodes whose
** correlated references name their input row — the WHERE's filter and the
** select list's projection of a query that does not aggregate.
** A FILTER keeps its schema: a projection drops the joined columns. */
void dp_bind_join_scalars(dp_binder *b, dp_plan *p, const dp_plan *const safe[2]) {
  if (!p) return;
  for (int i = 0; i < p->ninputs; i++) dp_bind_join_scalars(b, p->inputs[i], safe);
  if (p->kind != DP_P_FILTER && p->kind != DP_P_PROJECT) return;
  dp_plan *in = p->inputs[0];
  int nl = in->schema.ncols;
  scalar_joins sj;
  memset(&sj, 0, sizeof sj);
  sj.nl = nl;
  sj.correlated_ok = p == safe[0] || p == safe[1];
  if (p->kind == DP_P_FILTER) {
    p->u.filter.cond = take_scalars(b, p->u.filter.cond, &sj);
  } else {
    for (int i = 0; i < p->u.project.n; i++) p->u.project.exprs[i] = take_scalars(b, p->u.project.exprs[i], &sj);
  }
  int nj = sj.n;
  dp_plan **joins = sj.right;
  if (nj == 0) return;
  dp_plan *left = in;
  for (int k = 0; k < nj; k++) {
    dp_plan *j = dp_bind_new_node(b, DP_P_JOIN, joins[k]->span, 2, left, joins[k]);
    if (!j) return;
    int n0 = left->schema.ncols, nr = joins[k]->schema.ncols;
    dp_bind_schema(b, j, n0 + nr);
    if (!j->schema.cols) return;
    memcpy(j->schema.cols, left->schema.cols, (size_t)n0 * sizeof(dp_field));
    for (int c = 0; c < nr; c++) {
      j->schema.cols[n0 + c] = joins[k]->schema.cols[c];
      j->schema.cols[n0 + c].type = dp_bind_nullable(b, joins[k]->schema.cols[c].type);
    }
    j->u.join.kind = DP_J_LEFT;
    if (sj.cond[k]) {
      /* the decorrelated equalities: left column = right key k */
      int n = 0, cap = 0;
      dp_expr **eqs = NULL;
      dp_bind_conjuncts(b, sj.cond[k], &n, &cap, &eqs);
      j->u.join.cond = sj.cond[k];
      j->u.join.left_keys = dp_arena_calloc(b->a, (size_t)n + 1, sizeof(int));
      j->u.join.right_keys = dp_arena_calloc(b->a, (size_t)n + 1, sizeof(int));
      if (!j->u.join.left_keys || !j->u.join.right_keys) return;
      for (int i = 0; i < n; i++) {
        int l = dp_bind_as_column(eqs[i]->u.call.args[0]), r = dp_bind_as_column(eqs[i]->u.call.args[1]);
        if (l < 0 || r < n0) continue; /* an implicit cast: a condition, not a key */
        j->u.join.left_keys[j->u.join.nkeys] = l;
        j->u.join.right_keys[j->u.join.nkeys++] = r - n0;
      }
    }
    left = j;
  }
  if (p->kind == DP_P_PROJECT) {
    p->inputs[0] = left;
    return;
  }
  /* FILTER: filter over the joins, then keep the input's columns */
  dp_plan *f = dp_bind_new_node(b, DP_P_FILTER, p->span, 1, left);
  if (!f) return;
  dp_bind_copy_schema(b, f, left, 0);
  f->u.filter.cond = p->u.filter.cond;
  dp_expr **keep = dp_arena_calloc(b->a, (size_t)(nl ? nl : 1), sizeof *keep);
  if (!keep) return;
  for (int c = 0; c < nl; c++)
    if (!(keep[c] = dp_bind_col_ref(b, c, in->schema.cols[c].type, p->span))) return;
  p->kind = DP_P_PROJECT;
  p->inputs[0] = f;
  p->u.project.n = nl;
  p->u.project.exprs = keep;
}

/* ------------------------------------------------------------------ */
/* queries and set operations                                          */
/* ------------------------------------------------------------------ */

/* ORDER BY / LIMIT over a query's output (set operations, VALUES). */
static dp_plan *order_over_output(dp_binder *b, dp_plan *p, const dp_ast_query *q) {
  if (q->norder > 0) {
    dp_bscope os;
    memset(&os, 0, sizeof os);
    dp_bscope_from_plan(b, &os, p, NULL);
    dp_bout *items = dp_arena_calloc(b->a, (size_t)(p->schema.ncols ? p->schema.ncols : 1), sizeof *items);
    if (!items) return NULL;
    for (int i = 0; i < p->schema.ncols; i++) items[i].name = p->schema.cols[i].name;
    dp_plan *so = dp_bind_new_node(b, DP_P_SORT, q->order_span.line ? q->order_span : q->span, 1, p);
    if (!so) return NULL;
    dp_bind_copy_schema(b, so, p, 0);
    so->u.sort.nkeys = q->norder;
    so->u.sort.keys = dp_arena_calloc(b->a, (size_t)q->norder, sizeof(dp_sort_key));
    if (!so->u.sort.keys) return NULL;
    for (int i = 0; i < q->norder; i++) {
      int ref = dp_bind_order_output_ref(b, &q->order[i], items, p->schema.ncols, p->schema.ncols);
      dp_expr *e;
      if (ref == -2) return NULL;
      if (ref >= 0) {
        e = dp_bind_col_ref(b, ref, p->schema.cols[ref].type, q->order[i].span);
      } else {
        dp_bexpr x;
        dp_bexpr_init(&x, b, &os, 0, "ORDER BY");
        if (!(e = dp_bind_expr(&x, q->order[i].expr))) return NULL;
      }
      so->u.sort.keys[i].expr = e;
      so->u.sort.keys[i].desc = q->order[i].desc;
      so->u.sort.keys[i].nulls_first = q->order[i].nulls ? q->order[i].nulls == 1 : !q->order[i].desc;
    }
    p = so;
  }
  return dp_bind_apply_limit(b, p, q);
}

/* Cast the columns of a set operation's side to the unified types. */
static dp_plan *cast_side(dp_binder *b, dp_plan *p, const dp_type *const *types, const dp_plan *names) {
  bool need = false;
  for (int i = 0; i < p->schema.ncols; i++)
    if (!dp_type_equal(p->schema.cols[i].type, types[i])) need = true;
  if (!need) return p;
  dp_bout *items = dp_arena_calloc(b->a, (size_t)p->schema.ncols, sizeof *items);
  if (!items) return NULL;
  for (int i = 0; i < p->schema.ncols; i++) {
    dp_expr *c = dp_bind_col_ref(b, i, p->schema.cols[i].type, p->span);
    items[i].expr = dp_bind_coerce(b, c, types[i], "set operation");
    items[i].name = names->schema.cols[i].name;
    if (!items[i].expr) return NULL;
  }
  return dp_bind_make_project(b, p, p->schema.ncols, items, p->span);
}

static dp_plan *bind_setop(dp_binder *b, const dp_ast_query *q, dp_bscope *outer) {
  dp_plan *l = dp_bind_query(b, q->left, outer);
  dp_plan *r = dp_bind_query(b, q->right, outer);
  if (!l || !r) return NULL;
  const char *opname = q->op == DP_SET_UNION ? "UNION" : q->op == DP_SET_INTERSECT ? "INTERSECT" : "EXCEPT";
  if (l->schema.ncols != r->schema.ncols)
    return dp_bind_fail(b, DIPPER_TYPE, q->right->span,
                        "the two sides of %s have %d and %d columns; they must have the same number",
                        opname, l->schema.ncols, r->schema.ncols);
  int n = l->schema.ncols;
  const dp_type **types = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *types);
  if (!types) return NULL;
  for (int i = 0; i < n; i++) {
    const dp_type *lt = l->schema.cols[i].type, *rt = r->schema.cols[i].type;
    const dp_type *ct = dp_type_common(b->a, lt, rt);
    if (!ct)
      return dp_bind_fail(b, DIPPER_TYPE, q->right->span,
                          "column %d of %s is %s on the left and %s on the right; CAST one side", i + 1,
                          opname, dp_bind_type_str(b, lt), dp_bind_type_str(b, rt));
    types[i] = (lt->not_null && rt->not_null) ? dp_bind_not_null(b, ct) : dp_bind_nullable(b, ct);
  }
  if (!(l = cast_side(b, l, types, l)) || !(r = cast_side(b, r, types, l))) return NULL;
  dp_plan *p;
  if (q->op == DP_SET_UNION) {
    p = dp_bind_new_node(b, DP_P_UNION, q->span, 2, l, r);
    if (!p) return NULL;
    p->u.union_.all = q->all;
  } else {
    p = dp_bind_new_node(b, DP_P_SETOP, q->span, 2, l, r);
    if (!p) return NULL;
    p->u.setop.all = q->all;
    p->u.setop.except = q->op == DP_SET_EXCEPT;
  }
  dp_bind_schema(b, p, n);
  if (!p->schema.cols) return NULL;
  for (int i = 0; i < n; i++) p->schema.cols[i] = (dp_field){l->schema.cols[i].name, types[i]};
  if (q->op == DP_SET_UNION && !q->all) {
    dp_plan *d = dp_bind_new_node(b, DP_P_DISTINCT, q->span, 1, p);
    if (!d) return NULL;
    dp_bind_copy_schema(b, d, p, 0);
    p = d;
  }
  return p;
}

dp_plan *dp_bind_query(dp_binder *b, const dp_ast_query *q, dp_bscope *outer) {
  if (dp_bind_out_of_memory(b)) return NULL;
  if (!q) return dp_bind_fail(b, DIPPER_INTERNAL, (dp_span){0, 0, 0, 0}, "missing query");
  if (++b->depth > DP_BIND_MAX_DEPTH) {
    b->depth--;
    return dp_bind_fail(b, DIPPER_LIMIT, q->span, "queries nested more than %d deep", DP_BIND_MAX_DEPTH);
  }
  dp_bcte *saved = b->ctes;
  for (int i = 0; i < q->nctes; i++) {
    for (int k = 0; k < i; k++)
      if (dp_bind_name_eq(q->ctes[k].name.name, q->ctes[i].name.name)) {
        b->ctes = saved;
        b->depth--;
        return dp_bind_fail(b, DIPPER_DUPLICATE, q->ctes[i].name.span,
                            "WITH defines `%s` twice", q->ctes[i].name.name);
      }
    dp_bcte *c = dp_arena_calloc(b->a, 1, sizeof *c);
    if (!c) {
      b->ctes = saved;
      b->depth--;
      return dp_bind_fail(b, DIPPER_NOMEM, q->span, "out of memory");
    }
    c->cte = &q->ctes[i];
    c->env = b->ctes;
    c->next = b->ctes;
    b->ctes = c;
  }
  dp_plan *p = NULL;
  if (q->op == DP_SET_NONE) {
    if (q->select) {
      p = dp_bind_select(b, q->select, q, outer);
    } else if (q->values) {
      dp_bscope vs;
      memset(&vs, 0, sizeof vs);
      p = dp_bind_values(b, q->values, &vs);
      if (p) p = order_over_output(b, p, q);
    } else if (q->left) {
      p = dp_bind_query(b, q->left, outer);
      if (p) p = order_over_output(b, p, q);
    } else {
      p = dp_bind_fail(b, DIPPER_INTERNAL, q->span, "empty query");
    }
  } else {
    p = bind_setop(b, q, outer);
    if (p) p = order_over_output(b, p, q);
  }
  b->ctes = saved;
  b->depth--;
  return dp_bind_out_of_memory(b) ? NULL : p; /* its schema may hold a NULL type */
}
