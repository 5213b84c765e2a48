/*
** bind_select.c — one SELECT to plan nodes, in the steps of bind_select:
** WHERE (through bind_from.c's rewrites), group windows (bind_window.c), the
** select list, HAVING / ORDER BY / QUALIFY, GROUP BY and aggregates (the
** aggregation rewrite points expressions at the AGGREGATE node's row), OVER,
** hidden sort and QUALIFY columns, then DISTINCT, ORDER BY and LIMIT.
**
** Owns: nothing beyond the statement's arena.  Does not own: set operations
** and subqueries (bind_query.c), FROM (bind_from.c), expressions
** (bind_expr.c).
*/
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "plan/binder_int.h"

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


static bool add_out(dp_binder *b, dp_bout **items, int *n, int *cap, dp_expr *e, const char *name) {
  if (dp_arena_grow_i(b->a, items, cap, *n + 1, sizeof **items, 16)) return false;
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

dp_plan *dp_bind_make_project(dp_binder *b, dp_plan *in, int n, const dp_bout *items, dp_span span) {
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
int dp_bind_order_output_ref(dp_binder *b, const dp_ast_order *o, const dp_bout *items, int nitems,
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

dp_plan *dp_bind_apply_limit(dp_binder *b, dp_plan *p, const dp_ast_query *q) {
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
static void alias_scope(dp_binder *b, const dp_bscope *sc, const dp_bout *items, int nvisible,
                        bool allow_over, dp_bscope *out) {
  memset(out, 0, sizeof *out);
  out->outer = sc->outer;
  for (int i = 0; i < sc->n; i++) {
    dp_bcol *added = dp_bscope_add(b, out, sc->cols[i].rel, sc->cols[i].name, sc->cols[i].type, sc->cols[i].index,
                                   sc->cols[i].expr);
    if (added) added->hidden = sc->cols[i].hidden;
  }
  for (int i = 0; i < nvisible; i++) {
    bool taken = !allow_over && has_marker(items[i].expr, DP_MARK_OVER);
    for (int k = 0; !taken && k < sc->n; k++)
      if (!sc->cols[k].hidden && dp_bind_name_eq(sc->cols[k].name, items[i].name)) taken = true;
    if (!taken) dp_bscope_add(b, out, NULL, items[i].name, items[i].expr->type, -1, items[i].expr);
  }
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
  dp_bout *items;            /* the select list, then hidden columns */
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
    if (!(cond = dp_bind_rewrite_not_in(b, cond))) return false;
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
    dp_bcol *added = dp_bscope_add(b, &st->sc, NULL, w->schema.cols[win_base + k].name,
                                   w->schema.cols[win_base + k].type, win_base + k, NULL);
    if (added) added->hidden = true;
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
    int ref = st->ok ? dp_bind_order_output_ref(b, &q->order[i], st->items, st->nvisible, st->nvisible) : -1;
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
  const dp_bout *items = st->items;
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
  if (s->from && s->from->kind != DP_AF_JOIN) agg->ttl_hint[0] = dp_bind_ttl_for(b, s->from);
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
  dp_plan *p = dp_bind_make_project(b, st->p, st->nitems, st->items, s->span);
  if (!p) return NULL;
  /* without aggregation the select list is over the FROM row (OVER appends) */
  if (!st->aggregating && p->kind == DP_P_PROJECT) st->safe[1] = p;

  if (st->qualify && !(p = dp_bind_apply_where(b, p, st->qualify, s->qualify->span, true))) return NULL;

  if (s->distinct) {
    dp_plan *d = dp_bind_new_node(b, DP_P_DISTINCT, s->span, 1, p);
    if (!d) return NULL;
    if (s->from && s->from->kind != DP_AF_JOIN) d->ttl_hint[0] = dp_bind_ttl_for(b, s->from);
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
  if (q && !(p = dp_bind_apply_limit(b, p, q))) return NULL;
  if (st->nitems > nvisible) {
    /* drop the hidden sort columns */
    dp_bout *vis = dp_arena_calloc(b->a, (size_t)nvisible, sizeof *vis);
    if (!vis) return NULL;
    for (int i = 0; i < nvisible; i++) {
      vis[i].name = st->items[i].name;
      vis[i].expr = dp_bind_col_ref(b, i, st->items[i].expr->type, st->items[i].expr->span);
    }
    p = dp_bind_make_project(b, p, nvisible, vis, s->span);
  }
  return p;
}

dp_plan *dp_bind_select(dp_binder *b, const dp_ast_select *s, const dp_ast_query *q,
                            dp_bscope *outer) {
  select_state st;
  memset(&st, 0, sizeof st);
  st.b = b;
  st.s = s;
  st.q = q;
  st.sc.outer = outer;
  st.ok = true;
  dp_bttl_saved ttl;
  if (!dp_bind_ttl_begin(b, s, &ttl)) return NULL;
  dp_plan *p = NULL;
  bool ok = select_from_where(&st, outer);
  if (ok) {
    dp_bexpr_init(&st.x, b, &st.sc, DP_BX_AGG | DP_BX_OVER, "the SELECT list");
    st.x.nwindows = s->nwindows;
    st.x.windows = s->windows;
    ok = select_group_window(&st) && select_list(&st) && select_having_order_qualify(&st) &&
         select_aggregate(&st) && select_overs(&st) && place_order_exprs(&st) &&
         place_qualify_columns(&st) && (p = select_output(&st)) != NULL;
  }
  if (!dp_bind_ttl_end(b, &ttl, ok)) return NULL;
  if (p) dp_bind_join_scalars(b, p, st.safe);
  return p;
}
