/*
** bind_query.c — the query binder: SELECT and set operations to plan nodes.
**
** SELECT: WHERE (through bind_from.c's rewrites), group windows (bind_window.c),
** GROUP BY / aggregates / HAVING, OVER, the select list, QUALIFY, DISTINCT,
** ORDER BY (hidden sort columns), LIMIT; UNION / INTERSECT / EXCEPT with their
** columns unified; WITH.  Also the node helpers the other binder files share.
**
** Owns: nothing beyond the statement's arena.  Does not own: FROM
** (bind_from.c), windows (bind_window.c), expressions (bind_expr.c),
** statements (binder.c).
*/
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan/binder_int.h"

/* ------------------------------------------------------------------ */
/* nodes                                                               */
/* ------------------------------------------------------------------ */

dp_plan *dp_bind_new_node(dp_binder *b, dp_plan_kind kind, dp_span span, int ninputs, ...) {
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
  p->schema.ncols = n;
  p->schema.cols = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *p->schema.cols);
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
/* aggregation rewrite                                                 */
/* ------------------------------------------------------------------ */

typedef struct agg_ctx {
  dp_binder *b;
  const dp_bscope *sc;    /* the pre-aggregation scope, for names in errors */
  int ngroup;
  dp_expr **group;
  bool failed;
} agg_ctx;

static const char *scope_name_of(const dp_bscope *sc, int index) {
  for (int i = 0; i < sc->n; i++)
    if (sc->cols[i].index == index && !sc->cols[i].expr) return sc->cols[i].name;
  return "?";
}

/* Rewrite an expression over the aggregate's input into one over its output. */
static dp_expr *agg_rewrite(agg_ctx *c, const dp_expr *e) {
  if (!e) return NULL;
  for (int i = 0; i < c->ngroup; i++)
    if (dp_bexpr_same(e, c->group[i])) return dp_bind_col_ref(c->b, i, c->group[i]->type, e->span);
  if (e->kind == DP_E_COLUMN) {
    if (e->u.column.outer == DP_MARK_AGG) return dp_bind_col_ref(c->b, c->ngroup + e->u.column.index, e->type, e->span);
    if (e->u.column.outer != 0) return dp_bexpr_copy(c->b->a, e);
    if (!c->failed) {
      const char *nm = scope_name_of(c->sc, e->u.column.index);
      dp_bind_err(c->b, DIPPER_TYPE, e->span,
                  "column `%s` is neither grouped nor aggregated; add it to GROUP BY or wrap it in an "
                  "aggregate such as MAX(%s)",
                  nm, nm);
    }
    c->failed = true;
    return NULL;
  }
  dp_expr *r = dp_arena_alloc(c->b->a, sizeof *r);
  if (!r) return NULL;
  *r = *e;
  switch (e->kind) {
  case DP_E_CALL:
    r->u.call.args = dp_arena_calloc(c->b->a, (size_t)(e->u.call.nargs ? e->u.call.nargs : 1), sizeof(dp_expr *));
    if (!r->u.call.args) return NULL;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!(r->u.call.args[i] = agg_rewrite(c, e->u.call.args[i]))) return NULL;
    break;
  case DP_E_CAST:
    if (!(r->u.cast.arg = agg_rewrite(c, e->u.cast.arg))) return NULL;
    break;
  case DP_E_FIELD:
    if (!(r->u.field.arg = agg_rewrite(c, e->u.field.arg))) return NULL;
    break;
  case DP_E_CASE:
    r->u.case_.whens = dp_arena_calloc(c->b->a, (size_t)e->u.case_.n, sizeof(dp_expr *));
    r->u.case_.thens = dp_arena_calloc(c->b->a, (size_t)e->u.case_.n, sizeof(dp_expr *));
    if (!r->u.case_.whens || !r->u.case_.thens) return NULL;
    for (int i = 0; i < e->u.case_.n; i++)
      if (!(r->u.case_.whens[i] = agg_rewrite(c, e->u.case_.whens[i])) ||
          !(r->u.case_.thens[i] = agg_rewrite(c, e->u.case_.thens[i])))
        return NULL;
    if (e->u.case_.else_ && !(r->u.case_.else_ = agg_rewrite(c, e->u.case_.else_))) return NULL;
    break;
  case DP_E_SUBQUERY:
    if (e->u.subquery.arg && !(r->u.subquery.arg = agg_rewrite(c, e->u.subquery.arg))) return NULL;
    break;
  default:
    break;
  }
  return r;
}

/* Replace OVER markers by the OVER nodes' output columns. */
static dp_expr *over_rewrite(dp_binder *b, const dp_expr *e, const dp_bover *overs) {
  if (!e) return NULL;
  if (e->kind == DP_E_COLUMN && e->u.column.outer == DP_MARK_OVER)
    return dp_bind_col_ref(b, overs[e->u.column.index].out_col, e->type, e->span);
  dp_expr *r = dp_arena_alloc(b->a, sizeof *r);
  if (!r) return NULL;
  *r = *e;
  switch (e->kind) {
  case DP_E_CALL:
    r->u.call.args = dp_arena_calloc(b->a, (size_t)(e->u.call.nargs ? e->u.call.nargs : 1), sizeof(dp_expr *));
    if (!r->u.call.args) return NULL;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!(r->u.call.args[i] = over_rewrite(b, e->u.call.args[i], overs))) return NULL;
    break;
  case DP_E_CAST:
    if (!(r->u.cast.arg = over_rewrite(b, e->u.cast.arg, overs))) return NULL;
    break;
  case DP_E_FIELD:
    if (!(r->u.field.arg = over_rewrite(b, e->u.field.arg, overs))) return NULL;
    break;
  case DP_E_CASE:
    r->u.case_.whens = dp_arena_calloc(b->a, (size_t)e->u.case_.n, sizeof(dp_expr *));
    r->u.case_.thens = dp_arena_calloc(b->a, (size_t)e->u.case_.n, sizeof(dp_expr *));
    if (!r->u.case_.whens || !r->u.case_.thens) return NULL;
    for (int i = 0; i < e->u.case_.n; i++)
      if (!(r->u.case_.whens[i] = over_rewrite(b, e->u.case_.whens[i], overs)) ||
          !(r->u.case_.thens[i] = over_rewrite(b, e->u.case_.thens[i], overs)))
        return NULL;
    if (e->u.case_.else_ && !(r->u.case_.else_ = over_rewrite(b, e->u.case_.else_, overs))) return NULL;
    break;
  default:
    break;
  }
  return r;
}

static bool has_marker(const dp_expr *e, int mark) {
  if (!e) return false;
  switch (e->kind) {
  case DP_E_COLUMN: return e->u.column.outer == mark;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (has_marker(e->u.call.args[i], mark)) return true;
    return false;
  case DP_E_CAST: return has_marker(e->u.cast.arg, mark);
  case DP_E_FIELD: return has_marker(e->u.field.arg, mark);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (has_marker(e->u.case_.whens[i], mark) || has_marker(e->u.case_.thens[i], mark)) return true;
    return has_marker(e->u.case_.else_, mark);
  default: return false;
  }
}

static bool same_over_spec(const dp_bover *x, const dp_bover *y) {
  if (x->npartition != y->npartition || x->norder != y->norder || x->has_frame != y->has_frame ||
      x->rows != y->rows || x->lower != y->lower || x->upper != y->upper)
    return false;
  for (int i = 0; i < x->npartition; i++)
    if (!dp_bexpr_same(x->partition[i], y->partition[i])) return false;
  for (int i = 0; i < x->norder; i++)
    if (x->order[i].desc != y->order[i].desc || !dp_bexpr_same(x->order[i].expr, y->order[i].expr))
      return false;
  return true;
}

/* ------------------------------------------------------------------ */
/* SELECT                                                              */
/* ------------------------------------------------------------------ */

typedef struct out_item {
  dp_expr *expr;
  const char *name;
} out_item;

static bool add_out(dp_binder *b, out_item **items, int *n, int *cap, dp_expr *e, const char *name) {
  if (*n == *cap) {
    int nc = *cap ? *cap * 2 : 16;
    out_item *g = dp_arena_grow(b->a, *items, (size_t)*cap, (size_t)nc, sizeof *g);
    if (!g) return false;
    *items = g;
    *cap = nc;
  }
  (*items)[*n].expr = e;
  (*items)[*n].name = name;
  (*n)++;
  return true;
}

dp_plan *dp_bind_simplify_project(dp_binder *b, dp_plan *p) {
  dp_plan *in = p->inputs[0];
  int n = p->u.project.n;
  bool identity = n == in->schema.ncols;
  for (int i = 0; identity && i < n; i++)
    identity = dp_bind_as_column(p->u.project.exprs[i]) == i &&
               dp_type_equal(p->u.project.exprs[i]->type, in->schema.cols[i].type) &&
               p->schema.cols[i].name && in->schema.cols[i].name &&
               strcmp(p->schema.cols[i].name, in->schema.cols[i].name) == 0;
  if (identity) return in;
  if (in->kind != DP_P_PROJECT) return p;
  /* Over a projection: when either one only picks columns, the pair is one projection. */
  int m = in->u.project.n;
  bool outer_picks = true, inner_picks = true;
  for (int i = 0; outer_picks && i < n; i++) {
    int c = dp_bind_as_column(p->u.project.exprs[i]);
    outer_picks = c >= 0 && c < m &&
                  dp_type_equal(p->u.project.exprs[i]->type, in->u.project.exprs[c]->type);
  }
  int *map = dp_arena_calloc(b->a, (size_t)(m ? m : 1), sizeof *map);
  if (!map) return p;
  for (int j = 0; inner_picks && j < m; j++) {
    map[j] = dp_bind_as_column(in->u.project.exprs[j]);
    inner_picks = map[j] >= 0;
  }
  if (!outer_picks && !inner_picks) return p;
  dp_expr **exprs = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *exprs);
  if (!exprs) return p;
  for (int i = 0; i < n; i++) {
    exprs[i] = outer_picks ? in->u.project.exprs[dp_bind_as_column(p->u.project.exprs[i])]
                           : dp_expr_remap(b->a, p->u.project.exprs[i], map);
    if (!exprs[i]) return p;
  }
  p->u.project.exprs = exprs;
  p->inputs[0] = in->inputs[0];
  return dp_bind_simplify_project(b, p);
}

static dp_plan *make_project(dp_binder *b, dp_plan *in, int n, const out_item *items, dp_span span) {
  dp_plan *p = dp_bind_new_node(b, DP_P_PROJECT, span, 1, in);
  if (!p) return NULL;
  dp_bind_schema(b, p, n);
  p->u.project.n = n;
  p->u.project.exprs = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof(dp_expr *));
  if (!p->u.project.exprs || !p->schema.cols) return NULL;
  for (int i = 0; i < n; i++) {
    p->u.project.exprs[i] = items[i].expr;
    p->schema.cols[i] = (dp_field){items[i].name, items[i].expr->type};
  }
  return dp_bind_simplify_project(b, p);
}

static bool is_plain_int(const dp_ast_expr *e, int64_t *v) {
  if (e->kind != DP_AX_LITERAL || e->u.lit.kind != DP_LIT_INTEGER) return false;
  *v = strtoll(e->u.lit.text, NULL, 10);
  return true;
}

/* ORDER BY item that names an output column (alias or position): its index, else -1. */
static int order_output_ref(dp_binder *b, const dp_ast_order *o, const out_item *items, int nitems,
                            int nvisible) {
  int64_t pos;
  if (is_plain_int(o->expr, &pos)) {
    if (pos < 1 || pos > nvisible) {
      dp_bind_err(b, DIPPER_TYPE, o->expr->span, "ORDER BY position %lld is not in the select list (1..%d)",
                  (long long)pos, nvisible);
      return -2;
    }
    return (int)pos - 1;
  }
  if (o->expr->kind == DP_AX_COLUMN && o->expr->u.name.n == 1) {
    int found = -1;
    for (int i = 0; i < nitems; i++)
      if (items[i].name && dp_bind_name_eq(items[i].name, o->expr->u.name.parts[0].name)) {
        if (found >= 0) return -1; /* let the expression binder report ambiguity */
        found = i;
      }
    return found;
  }
  return -1;
}

static bool bind_limit(dp_binder *b, const dp_ast_expr *e, const char *what, int64_t *out) {
  int64_t v;
  if (!e) {
    *out = -1;
    return true;
  }
  if (!is_plain_int(e, &v) || v < 0) {
    dp_bind_err(b, DIPPER_TYPE, e->span, "%s takes a non-negative integer constant", what);
    return false;
  }
  *out = v;
  return true;
}

static dp_plan *apply_limit(dp_binder *b, dp_plan *p, const dp_ast_query *q) {
  if (!q->limit && !q->offset) return p;
  int64_t lim, off;
  if (!bind_limit(b, q->limit, "LIMIT", &lim) || !bind_limit(b, q->offset, "OFFSET", &off)) return NULL;
  dp_plan *l = dp_bind_new_node(b, DP_P_LIMIT, q->limit_span.line ? q->limit_span : q->span, 1, p);
  if (!l) return NULL;
  dp_bind_copy_schema(b, l, p, 0);
  l->u.limit.limit = lim;
  l->u.limit.offset = off;
  return l;
}

static const char *item_name(dp_binder *b, const dp_ast_select_item *it, int pos) {
  if (it->alias.name) return it->alias.name;
  const dp_ast_expr *e = it->expr;
  if (e->kind == DP_AX_COLUMN && e->u.name.n > 0) return e->u.name.parts[e->u.name.n - 1].name;
  if (e->kind == DP_AX_FIELD) return e->u.field.field.name;
  return dp_bind_expr_name(b, pos);
}

/* The FROM scope plus the select list's aliases that no input column already
** names (as virtual columns holding the items' expressions). */
static void alias_scope(dp_binder *b, const dp_bscope *sc, const out_item *items, int nvisible,
                        bool allow_over, dp_bscope *out) {
  memset(out, 0, sizeof *out);
  out->outer = sc->outer;
  for (int i = 0; i < sc->n; i++) {
    dp_bscope_add(b, out, sc->cols[i].rel, sc->cols[i].name, sc->cols[i].type, sc->cols[i].index,
                  sc->cols[i].expr);
    out->cols[out->n - 1].hidden = sc->cols[i].hidden;
  }
  for (int i = 0; i < nvisible; i++) {
    bool taken = !allow_over && has_marker(items[i].expr, DP_MARK_OVER);
    for (int k = 0; !taken && k < sc->n; k++)
      if (!sc->cols[k].hidden && dp_bind_name_eq(sc->cols[k].name, items[i].name)) taken = true;
    if (!taken) dp_bscope_add(b, out, NULL, items[i].name, items[i].expr->type, -1, items[i].expr);
  }
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

static dp_expr *rewrite_not_in(dp_binder *b, dp_expr *cond) {
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
static void join_scalars(dp_binder *b, dp_plan *p, const dp_plan *const safe[2]) {
  if (!p) return;
  for (int i = 0; i < p->ninputs; i++) join_scalars(b, p->inputs[i], safe);
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

/* One SELECT being bound: what its steps below hand on to each other.  A
** step returns false after a hard error (the statement cannot go on); `ok`
** goes false on errors after which the other items are still bound, so that
** their errors are reported too. */
typedef struct select_state {
  dp_binder *b;
  const dp_ast_select *s;
  const dp_ast_query *q;      /* for ORDER BY and LIMIT; NULL in set operations */
  dp_bscope sc;               /* the FROM row, then the group window's columns */
  dp_bexpr x;                 /* the select list's; collects aggregates and OVER calls */
  dp_plan *p;                 /* the plan so far */
  bool ok;
  const dp_plan *safe[2];     /* see join_scalars */
  int gw;                     /* the GROUP BY item that is a group window, or -1 */
  int win_base;               /* the group window's first column, or -1 */
  out_item *items;            /* the select list, then hidden columns */
  int nitems, capitems, nvisible;
  dp_expr *having, *qualify;
  int norder;
  int *order_out;             /* ORDER BY i: an output column, or -1 until placed */
  dp_expr **order_expr;       /* ... or the expression to place */
  bool aggregating;
} select_state;

/* FROM (or one row of no columns) and WHERE. */
static bool select_from_where(select_state *st, dp_bscope *outer) {
  dp_binder *b = st->b;
  const dp_ast_select *s = st->s;
  dp_plan *p;
  if (s->from) {
    p = dp_bind_from(b, s->from, &st->sc, outer);
  } else {
    p = dp_bind_new_node(b, DP_P_VALUES, s->span, 0);
    if (p) {
      dp_bind_schema(b, p, 0);
      p->u.values.nrows = 1;
    }
  }
  if (!p) return false;
  if (s->where) {
    dp_bexpr x;
    dp_bexpr_init(&x, b, &st->sc, 0, "WHERE");
    dp_expr *cond = dp_bind_cond(&x, s->where);
    if (!cond) return false;
    if (!(cond = rewrite_not_in(b, cond))) return false;
    /* the ROW_NUMBER() patterns apply over subqueries, views and CTEs alike: the
       plan's shape decides */
    int from_cols = p->schema.ncols;
    p = dp_bind_apply_where(b, p, cond, s->where->span, true);
    if (!p) return false;
    if (p->kind == DP_P_FILTER && p->inputs[0]->schema.ncols == from_cols) st->safe[0] = p;
  }
  st->p = p;
  return true;
}

/* Spark's `window` column over the WINDOW node w: a struct of start and end,
** named after the function (window, session_window). */
static bool add_spark_window_column(select_state *st, const dp_plan *w) {
  dp_binder *b = st->b;
  const dp_ast_expr *g = st->s->group[st->gw];
  int win_base = st->win_base;
  const dp_type *ts = w->schema.cols[win_base].type;
  dp_field fields[2] = {{"start", ts}, {"end", ts}};
  const dp_type *rt = dp_type_row(b->a, 2, fields);
  const dp_func *rowfn = dp_func_lookup("row");
  dp_expr **args = dp_arena_calloc(b->a, 2, sizeof *args);
  dp_expr *e = dp_arena_calloc(b->a, 1, sizeof *e);
  if (!rt || !rowfn || !args || !e) {
    dp_bind_fail(b, DIPPER_INTERNAL, g->span, "cannot build the window struct");
    return false;
  }
  args[0] = dp_bind_col_ref(b, win_base, ts, g->span);
  args[1] = dp_bind_col_ref(b, win_base + 1, ts, g->span);
  e->kind = DP_E_CALL;
  e->type = dp_bind_not_null(b, rt);
  e->span = g->span;
  e->u.call.fn = rowfn;
  e->u.call.nargs = 2;
  e->u.call.args = args;
  dp_bscope_add(b, &st->sc, NULL, g->u.call.name.parts[g->u.call.name.n - 1].name, e->type, -1, e);
  return true;
}

/* Group windows of the legacy and Spark syntaxes become a WINDOW node first;
** its start, end and time columns join the scope, hidden. */
static bool select_group_window(select_state *st) {
  dp_binder *b = st->b;
  dp_bexpr *x = &st->x;
  st->gw = dp_bind_find_group_window(st->s);
  st->win_base = -1;
  if (st->gw < 0) return true;
  bool spark_window = false;
  dp_plan *w = dp_bind_group_window(b, st->p, &st->sc, st->s->group[st->gw], &spark_window);
  if (!w) return false;
  st->p = w;
  int win_base = st->win_base = w->inputs[0]->schema.ncols;
  for (int k = 0; k < 3; k++) {
    dp_bscope_add(b, &st->sc, NULL, w->schema.cols[win_base + k].name,
                  w->schema.cols[win_base + k].type, win_base + k, NULL);
    st->sc.cols[st->sc.n - 1].hidden = true;
  }
  x->win_start = win_base;
  x->win_end = win_base + 1;
  x->win_time = win_base + 2;
  if (!spark_window) x->legacy = &w->u.window;
  return spark_window ? add_spark_window_column(st, w) : true;
}

/* `*` or `t.*` in the select list: the visible columns (of t). */
static bool expand_star(select_state *st, const dp_ast_select_item *it) {
  dp_binder *b = st->b;
  const dp_ast_name *qual = &it->expr->u.star.qualifier;
  int before = st->nitems;
  for (int k = 0; k < st->sc.n; k++) {
    dp_bcol *c = &st->sc.cols[k];
    if (c->hidden) continue;
    if (qual->n > 0 && (!c->rel || !dp_bind_name_eq(c->rel, qual->parts[qual->n - 1].name))) continue;
    dp_expr *e = c->expr ? dp_bexpr_copy(b->a, c->expr) : dp_bind_col_ref(b, c->index, c->type, it->span);
    if (!e || !add_out(b, &st->items, &st->nitems, &st->capitems, e, c->name)) return false;
  }
  if (st->nitems == before) {
    if (qual->n > 0)
      dp_bind_err(b, DIPPER_NAME, it->span, "no input is named `%s`; the inputs are listed in FROM",
                  qual->parts[qual->n - 1].name);
    else
      dp_bind_err(b, DIPPER_NAME, it->span, "SELECT * needs a FROM clause with columns");
    st->ok = false;
  }
  return true;
}

/* The select list, bound over the FROM row; aggregates and OVER calls are collected. */
static bool select_list(select_state *st) {
  const dp_ast_select *s = st->s;
  for (int i = 0; i < s->nitems; i++) {
    const dp_ast_select_item *it = &s->items[i];
    if (it->expr->kind == DP_AX_STAR) {
      if (!expand_star(st, it)) return false;
      continue;
    }
    dp_expr *e = dp_bind_expr(&st->x, it->expr);
    if (!e) {
      st->ok = false; /* keep binding the other items to report their errors too */
      continue;
    }
    e->span = it->expr->span;
    if (!add_out(st->b, &st->items, &st->nitems, &st->capitems, e, item_name(st->b, it, i)))
      return false;
  }
  st->nvisible = st->nitems;
  return true;
}

/* HAVING and ORDER BY may aggregate too; QUALIFY sees the FROM row, the
** select list's aliases and OVER calls of its own. */
static bool select_having_order_qualify(select_state *st) {
  dp_binder *b = st->b;
  const dp_ast_select *s = st->s;
  const dp_ast_query *q = st->q;
  dp_bexpr *x = &st->x;
  if (s->having) {
    /* HAVING may name an output alias (Spark: HAVING cnt > 1) */
    dp_bscope hs;
    alias_scope(b, &st->sc, st->items, st->nvisible, false, &hs);
    dp_bexpr hx = *x;
    hx.sc = &hs;
    hx.allow = DP_BX_AGG;
    hx.clause = "HAVING";
    st->having = dp_bind_cond(&hx, s->having);
    x->aggs = hx.aggs;
    x->naggs = hx.naggs;
    x->capaggs = hx.capaggs;
    if (!st->having) st->ok = false;
  }
  int norder = st->norder = q ? q->norder : 0;
  st->order_out = dp_arena_calloc(b->a, (size_t)(norder ? norder : 1), sizeof(int));
  st->order_expr = dp_arena_calloc(b->a, (size_t)(norder ? norder : 1), sizeof(dp_expr *));
  if (!st->order_out || !st->order_expr) return false;
  for (int i = 0; i < norder; i++) {
    int ref = st->ok ? order_output_ref(b, &q->order[i], st->items, st->nvisible, st->nvisible) : -1;
    if (ref == -2) {
      st->ok = false;
      continue;
    }
    st->order_out[i] = ref;
    if (ref >= 0) continue;
    x->clause = "ORDER BY";
    if (!(st->order_expr[i] = dp_bind_expr(x, q->order[i].expr))) st->ok = false;
  }
  if (st->ok && s->qualify) {
    dp_bscope qs;
    alias_scope(b, &st->sc, st->items, st->nvisible, true, &qs);
    dp_bexpr qx = *x;
    qx.sc = &qs;
    qx.clause = "QUALIFY";
    st->qualify = dp_bind_cond(&qx, s->qualify);
    x->aggs = qx.aggs;
    x->naggs = qx.naggs;
    x->capaggs = qx.capaggs;
    x->overs = qx.overs;
    x->novers = qx.novers;
    x->capovers = qx.capovers;
    if (!st->qualify) st->ok = false;
  }
  return st->ok;
}

/* GROUP BY item i: a position (GROUP BY 1), Spark's output alias when no
** input column has that name, or an expression over the FROM row.  NULL after
** an error. */
static dp_expr *group_item(select_state *st, dp_bexpr *gx, int i) {
  dp_binder *b = st->b;
  const out_item *items = st->items;
  int64_t pos;
  int alias = -1;
  const dp_ast_expr *ge = st->s->group[i];
  if (ge->kind == DP_AX_COLUMN && ge->u.name.n == 1) {
    bool is_col = false;
    for (int k = 0; k < st->sc.n; k++)
      if (!st->sc.cols[k].hidden && dp_bind_name_eq(st->sc.cols[k].name, ge->u.name.parts[0].name))
        is_col = true;
    for (int k = 0; !is_col && k < st->nvisible; k++)
      if (dp_bind_name_eq(items[k].name, ge->u.name.parts[0].name) &&
          !has_marker(items[k].expr, DP_MARK_AGG) && !has_marker(items[k].expr, DP_MARK_OVER))
        alias = k;
  }
  if (is_plain_int(ge, &pos) && pos >= 1 && pos <= st->nvisible &&
      !has_marker(items[pos - 1].expr, DP_MARK_AGG))
    return dp_bexpr_copy(b->a, items[pos - 1].expr);
  if (alias >= 0) return dp_bexpr_copy(b->a, items[alias].expr);
  return dp_bind_expr(gx, ge);
}

/* The grouping keys with their column names, duplicates dropped; the group
** window's item gives window_start, window_end (and window_time when used). */
static bool group_keys(select_state *st, dp_expr **group, const char **gnames, int *ngroup) {
  dp_binder *b = st->b;
  const dp_ast_select *s = st->s;
  const dp_plan *p = st->p;
  int ng = 0, win_base = st->win_base;
  dp_bexpr gx;
  dp_bexpr_init(&gx, b, &st->sc, 0, "GROUP BY");
  for (int i = 0; i < s->ngroup; i++) {
    if (i == st->gw) {
      const dp_plan *w = p;
      group[ng] = dp_bind_col_ref(b, win_base, w->schema.cols[win_base].type, s->group[i]->span);
      gnames[ng++] = "window_start";
      group[ng] = dp_bind_col_ref(b, win_base + 1, w->schema.cols[win_base + 1].type, s->group[i]->span);
      gnames[ng++] = "window_end";
      if (st->x.used_rowtime) {
        group[ng] = dp_bind_col_ref(b, win_base + 2, w->schema.cols[win_base + 2].type, s->group[i]->span);
        gnames[ng++] = "window_time";
      }
      continue;
    }
    dp_expr *g = group_item(st, &gx, i);
    if (!g) {
      st->ok = false;
      continue;
    }
    bool dup = false;
    for (int k = 0; k < ng; k++)
      if (dp_bexpr_same(group[k], g)) dup = true;
    if (dup) continue;
    int gc = dp_bind_as_column(g);
    gnames[ng] = gc >= 0 ? p->schema.cols[gc].name : dp_bind_expr_name(b, ng);
    group[ng++] = g;
  }
  *ngroup = ng;
  return st->ok;
}

/* A window aggregation groups by the window's start and end: find them, or
** refuse a window TVF's aggregation that does not group by both. */
static bool mark_window_keys(select_state *st, dp_plan *agg, dp_span aspan) {
  const int ng = agg->u.aggregate.ngroup;
  dp_expr **group = agg->u.aggregate.group;
  agg->u.aggregate.wstart = agg->u.aggregate.wend = -1;
  for (int i = 0; i < ng; i++) {
    int which, gc = dp_bind_as_column(group[i]);
    const dp_plan *w = gc >= 0 ? dp_bind_trace_window(st->p, gc, &which) : NULL;
    if (!w) continue;
    if (agg->u.aggregate.window && agg->u.aggregate.window != w) continue;
    if (which == 0) agg->u.aggregate.wstart = i;
    else if (which == 1) agg->u.aggregate.wend = i;
    else continue;
    agg->u.aggregate.window = w;
  }
  if (agg->u.aggregate.wstart < 0 || agg->u.aggregate.wend < 0) {
    if (agg->u.aggregate.window && agg->u.aggregate.window->u.window.syntax == DP_WSYN_TVF) {
      dp_bind_fail(st->b, DIPPER_TYPE, aspan,
                   "a window aggregation must GROUP BY both window_start and window_end");
      return false;
    }
    agg->u.aggregate.window = NULL;
    agg->u.aggregate.wstart = agg->u.aggregate.wend = -1;
  }
  return true;
}

/* Everything bound over the FROM row now reads the AGGREGATE node's row. */
static bool rewrite_over_aggregate(select_state *st, int ng, dp_expr **group) {
  dp_bexpr *x = &st->x;
  agg_ctx ac = {st->b, &st->sc, ng, group, false};
  for (int i = 0; i < st->nitems; i++)
    if (!(st->items[i].expr = agg_rewrite(&ac, st->items[i].expr))) st->ok = false;
  if (st->having && !(st->having = agg_rewrite(&ac, st->having))) st->ok = false;
  if (st->qualify && !(st->qualify = agg_rewrite(&ac, st->qualify))) st->ok = false;
  for (int i = 0; i < st->norder; i++)
    if (st->order_expr[i] && !(st->order_expr[i] = agg_rewrite(&ac, st->order_expr[i]))) st->ok = false;
  for (int i = 0; i < x->novers; i++) {
    dp_bover *o = &x->overs[i];
    for (int k = 0; k < o->call.nargs; k++)
      if (!(o->call.args[k] = agg_rewrite(&ac, o->call.args[k]))) st->ok = false;
    for (int k = 0; k < o->npartition; k++)
      if (!(o->partition[k] = agg_rewrite(&ac, o->partition[k]))) st->ok = false;
    for (int k = 0; k < o->norder; k++)
      if (!(o->order[k].expr = agg_rewrite(&ac, o->order[k].expr))) st->ok = false;
    if (o->call.filter && !(o->call.filter = agg_rewrite(&ac, o->call.filter))) st->ok = false;
  }
  return st->ok;
}

/* GROUP BY and aggregates: an AGGREGATE node, then HAVING's FILTER. */
static bool select_aggregate(select_state *st) {
  dp_binder *b = st->b;
  const dp_ast_select *s = st->s;
  dp_bexpr *x = &st->x;
  st->aggregating = s->ngroup > 0 || x->naggs > 0 || st->having;
  if (!st->aggregating) return true;
  int ng = 0;
  dp_expr **group = dp_arena_calloc(b->a, (size_t)s->ngroup + 4, sizeof *group);
  const char **gnames = dp_arena_calloc(b->a, (size_t)s->ngroup + 4, sizeof *gnames);
  if (!group || !gnames) return false;
  if (!group_keys(st, group, gnames, &ng)) return false;
  dp_span aspan = s->group_span.line ? s->group_span : x->naggs > 0 ? x->aggs[0].span : s->span;
  dp_plan *agg = dp_bind_new_node(b, DP_P_AGGREGATE, aspan, 1, st->p);
  if (!agg) return false;
  dp_bind_schema(b, agg, ng + x->naggs);
  if (!agg->schema.cols) return false;
  for (int i = 0; i < ng; i++) agg->schema.cols[i] = (dp_field){gnames[i], group[i]->type};
  for (int i = 0; i < x->naggs; i++)
    agg->schema.cols[ng + i] = (dp_field){dp_bind_expr_name(b, ng + i), x->aggs[i].type};
  agg->u.aggregate.ngroup = ng;
  agg->u.aggregate.group = group;
  agg->u.aggregate.naggs = x->naggs;
  agg->u.aggregate.aggs = x->aggs;
  if (!mark_window_keys(st, agg, aspan)) return false;
  if (!rewrite_over_aggregate(st, ng, group)) return false;
  st->p = agg;
  if (st->having) {
    dp_plan *f = dp_bind_new_node(b, DP_P_FILTER, s->having->span, 1, st->p);
    if (!f) return false;
    dp_bind_copy_schema(b, f, st->p, 0);
    f->u.filter.cond = st->having;
    st->p = f;
  }
  return true;
}

/* OVER calls: one node per distinct window, each appending its calls. */
static bool select_overs(select_state *st) {
  dp_binder *b = st->b;
  dp_bexpr *x = &st->x;
  if (x->novers == 0) return true;
  dp_plan *p = st->p, *cur = NULL;
  int first = 0;
  for (int i = 0; i <= x->novers; i++) {
    bool flush = i == x->novers || (cur && !same_over_spec(&x->overs[first], &x->overs[i]));
    if (flush && cur) {
      int ncalls = i - first, nin = p->schema.ncols;
      dp_bind_copy_schema(b, cur, p, ncalls);
      cur->u.over.ncalls = ncalls;
      cur->u.over.calls = dp_arena_calloc(b->a, (size_t)ncalls, sizeof(dp_over_call));
      if (!cur->u.over.calls || !cur->schema.cols) return false;
      for (int k = 0; k < ncalls; k++) {
        dp_bover *o = &x->overs[first + k];
        cur->u.over.calls[k] = o->call;
        o->out_col = nin + k;
        cur->schema.cols[nin + k] = (dp_field){dp_bind_expr_name(b, nin + k), o->call.type};
      }
      p = cur;
      cur = NULL;
    }
    if (i == x->novers) break;
    if (!cur) {
      dp_bover *o = &x->overs[i];
      for (int k = 0; k < o->npartition; k++)
        if (has_marker(o->partition[k], DP_MARK_OVER)) {
          dp_bind_fail(b, DIPPER_TYPE, o->span, "OVER calls cannot nest");
          return false;
        }
      cur = dp_bind_new_node(b, DP_P_OVER, o->span, 1, p);
      if (!cur) return false;
      cur->u.over.npartition = o->npartition;
      cur->u.over.partition = o->partition;
      cur->u.over.norder = o->norder;
      cur->u.over.order = o->order;
      cur->u.over.has_frame = o->has_frame;
      cur->u.over.rows = o->rows;
      cur->u.over.lower = o->lower;
      cur->u.over.upper = o->upper;
      first = i;
    }
  }
  st->p = p;
  for (int i = 0; i < st->nitems; i++)
    if (!(st->items[i].expr = over_rewrite(b, st->items[i].expr, x->overs))) return false;
  for (int i = 0; i < st->norder; i++)
    if (st->order_expr[i] && !(st->order_expr[i] = over_rewrite(b, st->order_expr[i], x->overs)))
      return false;
  if (st->qualify && !(st->qualify = over_rewrite(b, st->qualify, x->overs))) return false;
  return true;
}

/* ORDER BY expressions not in the select list become hidden columns. */
static bool place_order_exprs(select_state *st) {
  dp_binder *b = st->b;
  const dp_ast_query *q = st->q;
  for (int i = 0; i < st->norder; i++) {
    if (st->order_out[i] >= 0) continue;
    int found = -1;
    for (int k = 0; k < st->nitems; k++)
      if (dp_bexpr_same(st->items[k].expr, st->order_expr[i])) found = k;
    if (found < 0) {
      if (st->s->distinct) {
        dp_bind_fail(b, DIPPER_TYPE, q->order[i].span,
                     "with SELECT DISTINCT, ORDER BY expressions must appear in the select list");
        return false;
      }
      found = st->nitems;
      /* a hidden sort column keeps its column's name, for EXPLAIN */
      const dp_ast_expr *oe = q->order[i].expr;
      const char *hn = oe->kind == DP_AX_COLUMN ? oe->u.name.parts[oe->u.name.n - 1].name
                                                : dp_bind_expr_name(b, st->nitems);
      if (!add_out(b, &st->items, &st->nitems, &st->capitems, st->order_expr[i], hn)) return false;
    }
    st->order_out[i] = found;
  }
  return true;
}

/* QUALIFY filters the projection: the columns it reads become (hidden) outputs. */
static bool place_qualify_columns(select_state *st) {
  dp_binder *b = st->b;
  const dp_plan *p = st->p;
  if (!st->qualify) return true;
  int width = p->schema.ncols;
  int *map = dp_arena_calloc(b->a, (size_t)(width ? width : 1), sizeof *map);
  if (!map) return false;
  for (int c = 0; c < width; c++) {
    map[c] = -1;
    if (!dp_bexpr_uses_range(st->qualify, c, c + 1)) continue;
    for (int k = 0; k < st->nitems && map[c] < 0; k++)
      if (dp_bind_as_column(st->items[k].expr) == c) map[c] = k;
    if (map[c] < 0) {
      map[c] = st->nitems;
      if (!add_out(b, &st->items, &st->nitems, &st->capitems,
                   dp_bind_col_ref(b, c, p->schema.cols[c].type, st->s->qualify->span),
                   p->schema.cols[c].name))
        return false;
    }
  }
  return (st->qualify = dp_bind_remap(b, st->qualify, map, width)) != NULL;
}

/* The projection, then QUALIFY, DISTINCT, ORDER BY and LIMIT over it, and
** last a projection without the hidden columns.  NULL after an error. */
static dp_plan *select_output(select_state *st) {
  dp_binder *b = st->b;
  const dp_ast_select *s = st->s;
  const dp_ast_query *q = st->q;
  int norder = st->norder, nvisible = st->nvisible;
  dp_plan *p = make_project(b, st->p, st->nitems, st->items, s->span);
  if (!p) return NULL;
  /* without aggregation the select list is over the FROM row (OVER appends) */
  if (!st->aggregating && p->kind == DP_P_PROJECT) st->safe[1] = p;

  if (st->qualify && !(p = dp_bind_apply_where(b, p, st->qualify, s->qualify->span, true))) return NULL;

  if (s->distinct) {
    dp_plan *d = dp_bind_new_node(b, DP_P_DISTINCT, s->span, 1, p);
    if (!d) return NULL;
    dp_bind_copy_schema(b, d, p, 0);
    p = d;
  }
  if (norder > 0) {
    dp_plan *so = dp_bind_new_node(b, DP_P_SORT, q->order_span.line ? q->order_span : q->span, 1, p);
    if (!so) return NULL;
    dp_bind_copy_schema(b, so, p, 0);
    so->u.sort.nkeys = norder;
    so->u.sort.keys = dp_arena_calloc(b->a, (size_t)norder, sizeof(dp_sort_key));
    if (!so->u.sort.keys) return NULL;
    for (int i = 0; i < norder; i++) {
      dp_sort_key *k = &so->u.sort.keys[i];
      int col = st->order_out[i];
      k->expr = dp_bind_col_ref(b, col, p->schema.cols[col].type, q->order[i].span);
      k->desc = q->order[i].desc;
      k->nulls_first = q->order[i].nulls ? q->order[i].nulls == 1 : !q->order[i].desc;
    }
    p = so;
  }
  if (q && !(p = apply_limit(b, p, q))) return NULL;
  if (st->nitems > nvisible) {
    /* drop the hidden sort columns */
    out_item *vis = dp_arena_calloc(b->a, (size_t)nvisible, sizeof *vis);
    if (!vis) return NULL;
    for (int i = 0; i < nvisible; i++) {
      vis[i].name = st->items[i].name;
      vis[i].expr = dp_bind_col_ref(b, i, st->items[i].expr->type, st->items[i].expr->span);
    }
    p = make_project(b, p, nvisible, vis, s->span);
  }
  return p;
}

static dp_plan *bind_select(dp_binder *b, const dp_ast_select *s, const dp_ast_query *q,
                            dp_bscope *outer) {
  select_state st;
  memset(&st, 0, sizeof st);
  st.b = b;
  st.s = s;
  st.q = q;
  st.sc.outer = outer;
  st.ok = true;
  if (!select_from_where(&st, outer)) return NULL;
  dp_bexpr_init(&st.x, b, &st.sc, DP_BX_AGG | DP_BX_OVER, "the SELECT list");
  st.x.nwindows = s->nwindows;
  st.x.windows = s->windows;
  if (!select_group_window(&st) || !select_list(&st) || !select_having_order_qualify(&st) ||
      !select_aggregate(&st) || !select_overs(&st) || !place_order_exprs(&st) ||
      !place_qualify_columns(&st))
    return NULL;
  dp_plan *p = select_output(&st);
  if (p) join_scalars(b, p, st.safe);
  return p;
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
    out_item *items = dp_arena_calloc(b->a, (size_t)(p->schema.ncols ? p->schema.ncols : 1), sizeof *items);
    if (!items) return NULL;
    for (int i = 0; i < p->schema.ncols; i++) items[i].name = p->schema.cols[i].name;
    dp_plan *so = dp_bind_new_node(b, DP_P_SORT, q->order_span.line ? q->order_span : q->span, 1, p);
    if (!so) return NULL;
    dp_bind_copy_schema(b, so, p, 0);
    so->u.sort.nkeys = q->norder;
    so->u.sort.keys = dp_arena_calloc(b->a, (size_t)q->norder, sizeof(dp_sort_key));
    if (!so->u.sort.keys) return NULL;
    for (int i = 0; i < q->norder; i++) {
      int ref = order_output_ref(b, &q->order[i], items, p->schema.ncols, p->schema.ncols);
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
  return apply_limit(b, p, q);
}

/* Cast the columns of a set operation's side to the unified types. */
static dp_plan *cast_side(dp_binder *b, dp_plan *p, const dp_type *const *types, const dp_plan *names) {
  bool need = false;
  for (int i = 0; i < p->schema.ncols; i++)
    if (!dp_type_equal(p->schema.cols[i].type, types[i])) need = true;
  if (!need) return p;
  out_item *items = dp_arena_calloc(b->a, (size_t)p->schema.ncols, sizeof *items);
  if (!items) return NULL;
  for (int i = 0; i < p->schema.ncols; i++) {
    dp_expr *c = dp_bind_col_ref(b, i, p->schema.cols[i].type, p->span);
    items[i].expr = dp_bind_coerce(b, c, types[i], "set operation");
    items[i].name = names->schema.cols[i].name;
    if (!items[i].expr) return NULL;
  }
  return make_project(b, p, p->schema.ncols, items, p->span);
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
      p = bind_select(b, q->select, q, outer);
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
  return p;
}
