/*
** plan.c — construction and generic utilities of the logical plan (plan.h):
** node and expression builders, walking, column-use tests, remapping copies,
** structural equality and constancy of expressions.
**
** Owns nothing: every node and expression is carved from the caller's arena.
** Plans are treated as immutable: utilities that change an expression return
** a copy and leave the original (and any plan it shares) untouched.
*/
#include "plan/plan.h"

#include <string.h>

/* ---- names ---- */

const char *dp_plan_kind_name(dp_plan_kind k) {
#define DP_PLAN_NAME_(n, s) s,
  static const char *const names[] = {DP_PLAN_KINDS(DP_PLAN_NAME_)};
#undef DP_PLAN_NAME_
  return (int)k >= 0 && k < DP_P_COUNT_ ? names[k] : "?";
}

/* In dp_join_kind's order: the keyword, and the clause as a message names it. */
static const char *const join_names[][2] = {
    {"INNER", "INNER JOIN"}, {"LEFT", "LEFT JOIN"}, {"RIGHT", "RIGHT JOIN"},
    {"FULL", "FULL JOIN"},   {"SEMI", "SEMI JOIN"}, {"ANTI", "ANTI JOIN"},
    {"CROSS", "CROSS JOIN"},
};

static bool join_kind_known(dp_join_kind k) {
  return (int)k >= 0 && (size_t)k < sizeof join_names / sizeof join_names[0];
}

const char *dp_join_kind_name(dp_join_kind k) {
  return join_kind_known(k) ? join_names[k][0] : "?";
}

const char *dp_join_name(dp_join_kind k) {
  return join_kind_known(k) ? join_names[k][1] : "JOIN";
}

const char *dp_asof_op_name(dp_asof_op op) {
  switch (op) {
  case DP_ASOF_GE: return ">=";
  case DP_ASOF_GT: return ">";
  case DP_ASOF_LE: return "<=";
  case DP_ASOF_LT: return "<";
  }
  return "?";
}

/* ---- builders ---- */

dp_plan *dp_plan_new(dp_arena *a, dp_plan_kind kind, int ninputs) {
  if (ninputs < 0) return NULL;
  dp_plan *p = dp_arena_calloc(a, 1, sizeof *p);
  if (!p) return NULL;
  p->kind = kind;
  p->ninputs = ninputs;
  if (ninputs > 0 && !(p->inputs = dp_arena_calloc(a, (size_t)ninputs, sizeof *p->inputs)))
    return NULL;
  /* The "absent" markers plan.h documents, so a builder that leaves a field
  ** alone gets the neutral meaning rather than a misleading 0. */
  switch (kind) {
  case DP_P_WATERMARK:
    p->u.watermark.time_col = -1;
    p->u.watermark.delay = -1;
    p->u.watermark.id = -1;
    break;
  case DP_P_WINDOW: p->u.window.time_col = -1; break;
  case DP_P_AGGREGATE:
    p->u.aggregate.wstart = -1;
    p->u.aggregate.wend = -1;
    break;
  case DP_P_LIMIT:
    p->u.limit.limit = -1;
    p->u.limit.offset = -1;
    break;
  case DP_P_DEDUPLICATE: p->u.dedup.order_col = -1; break;
  case DP_P_ASOF_JOIN:
    p->u.asof.left_time = p->u.asof.right_time = -1;
    p->u.asof.tolerance = -1;
    break;
  case DP_P_OVER: p->u.over.lower = -1; break; /* UNBOUNDED PRECEDING .. CURRENT ROW */
  default: break;
  }
  return p;
}

static dp_expr *new_expr(dp_arena *a, dp_expr_kind kind, const dp_type *type) {
  dp_expr *e = dp_arena_calloc(a, 1, sizeof *e);
  if (!e) return NULL;
  e->kind = kind;
  e->type = type;
  return e;
}

dp_expr *dp_expr_column(dp_arena *a, int index, const dp_type *type) {
  dp_expr *e = new_expr(a, DP_E_COLUMN, type);
  if (e) e->u.column.index = index;
  return e;
}

dp_expr *dp_expr_literal(dp_arena *a, dp_value v) {
  dp_expr *e = new_expr(a, DP_E_LITERAL, v.type);
  if (e) e->u.value = v;
  return e;
}

dp_expr *dp_expr_call(dp_arena *a, const dp_func *fn, const dp_type *type, int nargs, dp_expr **args) {
  if (nargs < 0) return NULL;
  dp_expr *e = new_expr(a, DP_E_CALL, type);
  if (!e) return NULL;
  e->u.call.fn = fn;
  e->u.call.nargs = nargs;
  /* The caller's array may live on its stack: keep our own. */
  if (nargs > 0) {
    e->u.call.args = dp_arena_calloc(a, (size_t)nargs, sizeof *e->u.call.args);
    if (!e->u.call.args) return NULL;
    memcpy(e->u.call.args, args, (size_t)nargs * sizeof *args);
  }
  return e;
}

dp_expr *dp_expr_cast(dp_arena *a, dp_expr *arg, const dp_type *type, bool try_) {
  dp_expr *e = new_expr(a, DP_E_CAST, type);
  if (!e) return NULL;
  e->span = arg ? arg->span : e->span;
  e->u.cast.arg = arg;
  e->u.cast.try_ = try_;
  return e;
}

/* ---- walking ---- */

void dp_plan_walk(dp_plan *p, void (*fn)(dp_plan *, void *), void *ud) {
  if (!p) return;
  for (int i = 0; i < p->ninputs; i++) dp_plan_walk(p->inputs[i], fn, ud);
  fn(p, ud);
}

/* Call fn on every expression slot of one node (not its inputs), stopping
** when fn returns false.  The one list of "where a node keeps expressions",
** shared by the read-only walks and the remapping copy. */
static bool node_expr_slots(dp_plan *p, bool (*fn)(dp_expr **slot, void *ud), void *ud) {
#define SLOT_(s) \
  do {           \
    if ((s) && !fn(&(s), ud)) return false; \
  } while (0)
  switch (p->kind) {
  case DP_P_VALUES:
    if (p->u.values.cells)
      for (int i = 0; i < p->u.values.nrows * p->schema.ncols; i++) SLOT_(p->u.values.cells[i]);
    break;
  case DP_P_PROJECT:
    for (int i = 0; i < p->u.project.n; i++) SLOT_(p->u.project.exprs[i]);
    break;
  case DP_P_FILTER: SLOT_(p->u.filter.cond); break;
  case DP_P_WATERMARK: SLOT_(p->u.watermark.expr); break;
  case DP_P_WINDOW: SLOT_(p->u.window.gap_expr); break;
  case DP_P_AGGREGATE:
    for (int i = 0; i < p->u.aggregate.ngroup; i++) SLOT_(p->u.aggregate.group[i]);
    for (int i = 0; i < p->u.aggregate.naggs; i++) {
      dp_agg_call *ac = &p->u.aggregate.aggs[i];
      for (int j = 0; j < ac->nargs; j++) SLOT_(ac->args[j]);
      SLOT_(ac->filter);
    }
    break;
  case DP_P_JOIN:
    SLOT_(p->u.join.cond);
    SLOT_(p->u.join.as_of);
    break;
  case DP_P_ASOF_JOIN: SLOT_(p->u.asof.cond); break;
  case DP_P_SORT:
    for (int i = 0; i < p->u.sort.nkeys; i++) SLOT_(p->u.sort.keys[i].expr);
    break;
  case DP_P_TOPN:
    for (int i = 0; i < p->u.topn.nkeys; i++) SLOT_(p->u.topn.order[i].expr);
    break;
  case DP_P_OVER:
    for (int i = 0; i < p->u.over.npartition; i++) SLOT_(p->u.over.partition[i]);
    for (int i = 0; i < p->u.over.norder; i++) SLOT_(p->u.over.order[i].expr);
    for (int i = 0; i < p->u.over.ncalls; i++) {
      dp_over_call *oc = &p->u.over.calls[i];
      for (int j = 0; j < oc->nargs; j++) SLOT_(oc->args[j]);
      SLOT_(oc->filter);
    }
    break;
  case DP_P_UNNEST: SLOT_(p->u.unnest.arg); break;
  default: break; /* SCAN, UNION, SETOP, LIMIT, DISTINCT, DEDUPLICATE, SINK hold none */
  }
#undef SLOT_
  return true;
}

/* ---- column use ---- */

static bool expr_uses(const dp_expr *e, int col, int depth);

typedef struct use_ctx {
  int col, depth;
  bool found;
} use_ctx;

static bool slot_uses(dp_expr **slot, void *ud) {
  use_ctx *u = ud;
  if (expr_uses(*slot, u->col, u->depth)) u->found = true;
  return !u->found;
}

/* Does any expression in plan p refer to column `col` of the row `depth`
** subquery levels out? */
static bool plan_uses(dp_plan *p, int col, int depth) {
  if (!p) return false;
  use_ctx u = {col, depth, false};
  node_expr_slots(p, slot_uses, &u);
  if (u.found) return true;
  for (int i = 0; i < p->ninputs; i++)
    if (plan_uses(p->inputs[i], col, depth)) return true;
  return false;
}

/* col < 0: any column of that level. */
static bool expr_uses(const dp_expr *e, int col, int depth) {
  if (!e) return false;
  switch (e->kind) {
  case DP_E_COLUMN:
    return e->u.column.outer == depth && (col < 0 || e->u.column.index == col);
  case DP_E_LITERAL: return false;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (expr_uses(e->u.call.args[i], col, depth)) return true;
    return false;
  case DP_E_CAST: return expr_uses(e->u.cast.arg, col, depth);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (expr_uses(e->u.case_.whens[i], col, depth) || expr_uses(e->u.case_.thens[i], col, depth))
        return true;
    return expr_uses(e->u.case_.else_, col, depth);
  case DP_E_FIELD: return expr_uses(e->u.field.arg, col, depth);
  case DP_E_SUBQUERY:
    return expr_uses(e->u.subquery.arg, col, depth) ||
           plan_uses(e->u.subquery.plan, col, depth + 1);
  }
  return false;
}

bool dp_expr_uses_column(const dp_expr *e, int i) { return i >= 0 && expr_uses(e, i, 0); }

int dp_expr_as_column(const dp_expr *e) {
  return e && e->kind == DP_E_COLUMN && e->u.column.outer == 0 ? e->u.column.index : -1;
}

/* ---- remapping copy ---- */

typedef struct remap_ctx {
  dp_arena *a;
  const int *map;
  int depth;
  bool failed;
} remap_ctx;

static dp_expr *remap(remap_ctx *r, const dp_expr *e);

static dp_expr **remap_array(remap_ctx *r, dp_expr *const *src, int n) {
  if (n <= 0) return NULL;
  dp_expr **out = dp_arena_calloc(r->a, (size_t)n, sizeof *out);
  if (!out) {
    r->failed = true;
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (src[i] && !(out[i] = remap(r, src[i]))) return NULL;
  return out;
}

static void *dup_array(remap_ctx *r, const void *src, int n, size_t elem) {
  if (n <= 0 || !src) return NULL;
  void *out = dp_arena_alloc(r->a, (size_t)n * elem);
  if (!out) {
    r->failed = true;
    return NULL;
  }
  memcpy(out, src, (size_t)n * elem);
  return out;
}

static bool slot_remap(dp_expr **slot, void *ud) {
  remap_ctx *r = ud;
  *slot = remap(r, *slot);
  return *slot != NULL;
}

/* Copy plan p (already known to refer to the row r->depth levels out) with
** those references renumbered.  Each node is copied by value, then every
** array that holds expressions is duplicated and its slots rewritten. */
static dp_plan *remap_plan(remap_ctx *r, const dp_plan *p) {
  dp_plan *n = dp_arena_alloc(r->a, sizeof *n);
  if (!n) {
    r->failed = true;
    return NULL;
  }
  *n = *p;
  if (p->ninputs > 0) {
    n->inputs = dp_arena_calloc(r->a, (size_t)p->ninputs, sizeof *n->inputs);
    if (!n->inputs) {
      r->failed = true;
      return NULL;
    }
    for (int i = 0; i < p->ninputs; i++)
      if (p->inputs[i] && !(n->inputs[i] = remap_plan(r, p->inputs[i]))) return NULL;
  }
  switch (n->kind) {
  case DP_P_VALUES:
    n->u.values.cells = dup_array(r, p->u.values.cells, p->u.values.nrows * p->schema.ncols,
                                  sizeof(dp_expr *));
    break;
  case DP_P_PROJECT:
    n->u.project.exprs = dup_array(r, p->u.project.exprs, p->u.project.n, sizeof(dp_expr *));
    break;
  case DP_P_AGGREGATE:
    n->u.aggregate.group =
        dup_array(r, p->u.aggregate.group, p->u.aggregate.ngroup, sizeof(dp_expr *));
    n->u.aggregate.aggs = dup_array(r, p->u.aggregate.aggs, p->u.aggregate.naggs, sizeof(dp_agg_call));
    for (int i = 0; n->u.aggregate.aggs && i < p->u.aggregate.naggs; i++) {
      dp_agg_call *ac = &n->u.aggregate.aggs[i];
      ac->args = dup_array(r, ac->args, ac->nargs, sizeof(dp_expr *));
    }
    break;
  case DP_P_SORT:
    n->u.sort.keys = dup_array(r, p->u.sort.keys, p->u.sort.nkeys, sizeof(dp_sort_key));
    break;
  case DP_P_TOPN:
    n->u.topn.order = dup_array(r, p->u.topn.order, p->u.topn.nkeys, sizeof(dp_sort_key));
    break;
  case DP_P_OVER:
    n->u.over.partition = dup_array(r, p->u.over.partition, p->u.over.npartition, sizeof(dp_expr *));
    n->u.over.order = dup_array(r, p->u.over.order, p->u.over.norder, sizeof(dp_sort_key));
    n->u.over.calls = dup_array(r, p->u.over.calls, p->u.over.ncalls, sizeof(dp_over_call));
    for (int i = 0; n->u.over.calls && i < p->u.over.ncalls; i++) {
      dp_over_call *oc = &n->u.over.calls[i];
      oc->args = dup_array(r, oc->args, oc->nargs, sizeof(dp_expr *));
    }
    break;
  default: break; /* single expression fields were copied with the node */
  }
  if (r->failed || !node_expr_slots(n, slot_remap, r)) return NULL;
  return n;
}

static dp_expr *remap(remap_ctx *r, const dp_expr *e) {
  if (r->failed) return NULL;
  dp_expr *c = dp_arena_alloc(r->a, sizeof *c);
  if (!c) {
    r->failed = true;
    return NULL;
  }
  *c = *e;
  switch (e->kind) {
  case DP_E_COLUMN:
    if (r->map && e->u.column.outer == r->depth) {
      int to = e->u.column.index >= 0 ? r->map[e->u.column.index] : -1;
      if (to < 0) {
        r->failed = true;
        return NULL;
      }
      c->u.column.index = to;
    }
    break;
  case DP_E_LITERAL: break;
  case DP_E_CALL:
    c->u.call.args = remap_array(r, e->u.call.args, e->u.call.nargs);
    break;
  case DP_E_CAST: c->u.cast.arg = e->u.cast.arg ? remap(r, e->u.cast.arg) : NULL; break;
  case DP_E_CASE:
    c->u.case_.whens = remap_array(r, e->u.case_.whens, e->u.case_.n);
    c->u.case_.thens = remap_array(r, e->u.case_.thens, e->u.case_.n);
    c->u.case_.else_ = e->u.case_.else_ ? remap(r, e->u.case_.else_) : NULL;
    break;
  case DP_E_FIELD: c->u.field.arg = e->u.field.arg ? remap(r, e->u.field.arg) : NULL; break;
  case DP_E_SUBQUERY:
    c->u.subquery.arg = e->u.subquery.arg ? remap(r, e->u.subquery.arg) : NULL;
    /* Share the plan unless it looks back at the row being renumbered. */
    if (r->map && plan_uses(e->u.subquery.plan, -1, r->depth + 1)) {
      r->depth++;
      c->u.subquery.plan = remap_plan(r, e->u.subquery.plan);
      r->depth--;
    }
    break;
  }
  return r->failed ? NULL : c;
}

dp_expr *dp_expr_remap(dp_arena *a, const dp_expr *e, const int *map) {
  if (!e) return NULL;
  remap_ctx r = {a, map, 0, false};
  dp_expr *c = remap(&r, e);
  return r.failed ? NULL : c;
}

/* ---- equality ---- */

static bool value_equal(const dp_value *x, const dp_value *y) {
  if (x->is_null || y->is_null) return x->is_null == y->is_null && dp_type_equal(x->type, y->type);
  if (!dp_type_equal(x->type, y->type)) return false;
  switch (x->type->kind) {
  case DP_T_NULL: return true;
  case DP_T_BOOLEAN: return x->u.b == y->u.b;
  case DP_T_FLOAT:
  case DP_T_DOUBLE: /* bitwise: -0.0 and 0.0 print differently, NaN equals itself */
    return memcmp(&x->u.d, &y->u.d, sizeof x->u.d) == 0;
  case DP_T_DECIMAL: return x->u.dec == y->u.dec;
  case DP_T_STRING:
  case DP_T_BYTES:
    return x->u.s.len == y->u.s.len &&
           (x->u.s.len == 0 || memcmp(x->u.s.ptr, y->u.s.ptr, x->u.s.len) == 0);
  case DP_T_ROW:
  case DP_T_ARRAY:
  case DP_T_MAP: {
    if (x->u.list.n != y->u.list.n) return false;
    int items = x->type->kind == DP_T_MAP ? 2 * x->u.list.n : x->u.list.n;
    for (int i = 0; i < items; i++)
      if (!value_equal(&x->u.list.items[i], &y->u.list.items[i])) return false;
    return true;
  }
  default: return x->u.i == y->u.i; /* integers, dates, times, timestamps, intervals */
  }
}

static bool exprs_equal(dp_expr *const *x, dp_expr *const *y, int n) {
  for (int i = 0; i < n; i++)
    if (!dp_expr_equal(x[i], y[i])) return false;
  return true;
}

bool dp_expr_equal(const dp_expr *x, const dp_expr *y) {
  if (x == y) return true;
  if (!x || !y || x->kind != y->kind) return false;
  if (x->type != y->type && (!x->type || !y->type || !dp_type_equal(x->type, y->type))) return false;
  switch (x->kind) {
  case DP_E_COLUMN:
    return x->u.column.index == y->u.column.index && x->u.column.outer == y->u.column.outer;
  case DP_E_LITERAL: return value_equal(&x->u.value, &y->u.value);
  case DP_E_CALL:
    return x->u.call.fn == y->u.call.fn && x->u.call.nargs == y->u.call.nargs &&
           exprs_equal(x->u.call.args, y->u.call.args, x->u.call.nargs);
  case DP_E_CAST:
    return x->u.cast.try_ == y->u.cast.try_ && dp_expr_equal(x->u.cast.arg, y->u.cast.arg);
  case DP_E_CASE:
    return x->u.case_.n == y->u.case_.n &&
           exprs_equal(x->u.case_.whens, y->u.case_.whens, x->u.case_.n) &&
           exprs_equal(x->u.case_.thens, y->u.case_.thens, x->u.case_.n) &&
           dp_expr_equal(x->u.case_.else_, y->u.case_.else_);
  case DP_E_FIELD:
    return x->u.field.index == y->u.field.index && dp_expr_equal(x->u.field.arg, y->u.field.arg);
  case DP_E_SUBQUERY:
    return x->u.subquery.kind == y->u.subquery.kind &&
           x->u.subquery.negated == y->u.subquery.negated &&
           x->u.subquery.plan == y->u.subquery.plan &&
           dp_expr_equal(x->u.subquery.arg, y->u.subquery.arg);
  }
  return false;
}

/* ---- constancy ---- */

bool dp_expr_is_constant(const dp_expr *e) {
  if (!e) return false;
  switch (e->kind) {
  case DP_E_LITERAL: return true;
  case DP_E_COLUMN:
  case DP_E_SUBQUERY: return false;
  case DP_E_CALL: {
    const dp_func *fn = e->u.call.fn;
    if (!fn || fn->kind != DP_FN_SCALAR || !fn->deterministic) return false;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!dp_expr_is_constant(e->u.call.args[i])) return false;
    return true;
  }
  case DP_E_CAST: return dp_expr_is_constant(e->u.cast.arg);
  case DP_E_FIELD: return dp_expr_is_constant(e->u.field.arg);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (!dp_expr_is_constant(e->u.case_.whens[i]) || !dp_expr_is_constant(e->u.case_.thens[i]))
        return false;
    return !e->u.case_.else_ || dp_expr_is_constant(e->u.case_.else_);
  }
  return false;
}

/* ---- expressions of a node; correlated references (plan.h) ---- */

bool dp_expr_reads_outer(const dp_expr *e, int level) {
  if (!e) return false;
  switch (e->kind) {
  case DP_E_COLUMN: return e->u.column.outer >= level;
  case DP_E_LITERAL: return false;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (dp_expr_reads_outer(e->u.call.args[i], level)) return true;
    return false;
  case DP_E_CAST: return dp_expr_reads_outer(e->u.cast.arg, level);
  case DP_E_FIELD: return dp_expr_reads_outer(e->u.field.arg, level);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (dp_expr_reads_outer(e->u.case_.whens[i], level) || dp_expr_reads_outer(e->u.case_.thens[i], level))
        return true;
    return dp_expr_reads_outer(e->u.case_.else_, level);
  case DP_E_SUBQUERY:
    return dp_expr_reads_outer(e->u.subquery.arg, level) || dp_plan_reads_outer(e->u.subquery.plan, level + 1);
  }
  return false;
}

bool dp_plan_any_expr(const dp_plan *p, bool (*fn)(const dp_expr *e, void *ud), void *ud) {
  switch (p->kind) {
  case DP_P_VALUES:
    for (int i = 0; i < p->u.values.nrows * p->schema.ncols; i++)
      if (fn(p->u.values.cells[i], ud)) return true;
    return false;
  case DP_P_PROJECT:
    for (int i = 0; i < p->u.project.n; i++)
      if (fn(p->u.project.exprs[i], ud)) return true;
    return false;
  case DP_P_FILTER: return fn(p->u.filter.cond, ud);
  case DP_P_WATERMARK: return fn(p->u.watermark.expr, ud);
  case DP_P_WINDOW: return fn(p->u.window.gap_expr, ud);
  case DP_P_JOIN: return fn(p->u.join.cond, ud) || fn(p->u.join.as_of, ud);
  case DP_P_ASOF_JOIN: return fn(p->u.asof.cond, ud);
  case DP_P_AGGREGATE:
    for (int i = 0; i < p->u.aggregate.ngroup; i++)
      if (fn(p->u.aggregate.group[i], ud)) return true;
    for (int i = 0; i < p->u.aggregate.naggs; i++) {
      const dp_agg_call *a = &p->u.aggregate.aggs[i];
      if (fn(a->filter, ud)) return true;
      for (int k = 0; k < a->nargs; k++)
        if (fn(a->args[k], ud)) return true;
    }
    return false;
  case DP_P_SORT:
    for (int i = 0; i < p->u.sort.nkeys; i++)
      if (fn(p->u.sort.keys[i].expr, ud)) return true;
    return false;
  case DP_P_TOPN:
    for (int i = 0; i < p->u.topn.nkeys; i++)
      if (fn(p->u.topn.order[i].expr, ud)) return true;
    return false;
  case DP_P_OVER:
    for (int i = 0; i < p->u.over.npartition; i++)
      if (fn(p->u.over.partition[i], ud)) return true;
    for (int i = 0; i < p->u.over.norder; i++)
      if (fn(p->u.over.order[i].expr, ud)) return true;
    for (int i = 0; i < p->u.over.ncalls; i++) {
      const dp_over_call *a = &p->u.over.calls[i];
      if (fn(a->filter, ud)) return true;
      for (int k = 0; k < a->nargs; k++)
        if (fn(a->args[k], ud)) return true;
    }
    return false;
  case DP_P_UNNEST: return fn(p->u.unnest.arg, ud);
  default: return false;
  }
}

static bool reads_outer_cb(const dp_expr *e, void *ud) { return dp_expr_reads_outer(e, *(const int *)ud); }

bool dp_plan_reads_outer(const dp_plan *p, int level) {
  if (!p) return false;
  if (dp_plan_any_expr(p, reads_outer_cb, &level)) return true;
  for (int i = 0; i < p->ninputs; i++)
    if (dp_plan_reads_outer(p->inputs[i], level)) return true;
  return false;
}
