/*
** bind_operator.c — operators as catalog calls: arithmetic, comparison and
** logic, negation (folded into a literal), BETWEEN, IN lists, the IS forms,
** LIKE / SIMILAR TO / RLIKE and CASE (a simple CASE rewritten to searched).
**
** Owns: the operators' rewrites.  Does not own: the casts they need
** (bind_cast.c), IN and EXISTS subqueries (bind_expr.c).
*/
#include "plan/binder_int.h"

/* ------------------------------------------------------------------ */
/* operators                                                           */
/* ------------------------------------------------------------------ */

static dp_expr *negate_literal(dp_binder *b, dp_expr *e, dp_span span) {
  dp_value v = e->u.value;
  switch (e->type->kind) {
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT:
  case DP_T_INTERVAL_DT:
  case DP_T_INTERVAL_YM:
    if (v.u.i == INT64_MIN) return NULL;
    v.u.i = -v.u.i;
    break;
  case DP_T_FLOAT:
  case DP_T_DOUBLE:
    v.u.d = -v.u.d;
    break;
  case DP_T_DECIMAL:
    v.u.dec = -v.u.dec;
    break;
  default:
    return NULL;
  }
  return dp_bind_literal_expr(b, v, span);
}

/* (t0, t1) OVERLAPS (t2, t3) as Calcite (so Flink) rewrites it: a period's
** second item is its end, or an INTERVAL added to its start; the ends of
** each period are put in order (a NULL comparison keeps them swapped: CASE
** takes the ELSE branch), then e0 >= s1 AND e1 >= s0, so periods that only
** touch overlap. */
static dp_expr *bind_overlaps(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  const dp_ast_expr *sides[2] = {e->u.binary.left, e->u.binary.right};
  dp_expr *pt[4];
  for (int k = 0; k < 2; k++) {
    dp_expr *s = dp_bind_expr(x, sides[k]->u.construct.items[0]);
    dp_expr *t = dp_bind_expr(x, sides[k]->u.construct.items[1]);
    if (!s || !t) return NULL;
    if (!dp_type_is_temporal(s->type) || s->type->kind == DP_T_NULL)
      return dp_bind_fail(b, DIPPER_TYPE, sides[k]->u.construct.items[0]->span,
                          "a period of OVERLAPS starts at a DATE, TIME or TIMESTAMP, not %s",
                          dp_bind_type_str(b, s->type));
    if (dp_type_is_interval(t->type)) t = dp_bind_call2(b, "add", s, t, sides[k]->span);
    if (!t) return NULL;
    pt[2 * k] = s;
    pt[2 * k + 1] = t;
  }
  if (!dp_bind_unify_n(b, 4, pt, "OVERLAPS", e->span)) return NULL;
  dp_expr *lo[2], *hi[2];
  for (int k = 0; k < 2; k++) {
    dp_expr *in_order = dp_bind_call2(b, "le", pt[2 * k], pt[2 * k + 1], e->span);
    dp_expr *a1[3] = {in_order, pt[2 * k], pt[2 * k + 1]}, *a2[3] = {in_order, pt[2 * k + 1], pt[2 * k]};
    if (!in_order) return NULL;
    lo[k] = dp_bind_call_named(b, "if", 3, a1, e->span);
    hi[k] = dp_bind_call_named(b, "if", 3, a2, e->span);
    if (!lo[k] || !hi[k]) return NULL;
  }
  return dp_bind_call2(b, "and", dp_bind_call2(b, "ge", hi[0], lo[1], e->span),
                       dp_bind_call2(b, "ge", hi[1], lo[0], e->span), e->span);
}

dp_expr *dp_bind_binary(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  dp_ast_binop op = e->u.binary.op;
  if (op == DP_BOP_OVERLAPS) return bind_overlaps(x, e);
  dp_expr *l = dp_bind_expr(x, e->u.binary.left);
  dp_expr *r = dp_bind_expr(x, e->u.binary.right);
  if (!l || !r) return NULL;
  if (op == DP_BOP_AND || op == DP_BOP_OR) {
    const char *w = op == DP_BOP_AND ? "AND" : "OR";
    if (!(l = dp_bind_require_bool(b, l, w)) || !(r = dp_bind_require_bool(b, r, w))) return NULL;
  }
  if (dp_bind_is_comparison(op)) {
    static const char *const names[] = {"=", "<>", "<", "<=", ">", ">="};
    const char *what = names[op - DP_BOP_EQ];
    if (!dp_bind_unify2(b, &l, &r, dp_arena_printf(b->a, "comparison %s", what), e->span)) return NULL;
  }
  if (op == DP_BOP_CONCAT && (!dp_type_is_string(l->type) || !dp_type_is_string(r->type)) &&
      l->type->kind != DP_T_NULL && r->type->kind != DP_T_NULL &&
      !(l->type->kind == DP_T_BYTES && r->type->kind == DP_T_BYTES))
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "|| joins strings, not %s and %s; CAST the other operand to STRING",
                        dp_bind_type_str(b, l->type), dp_bind_type_str(b, r->type));
  return dp_bind_call2(b, dp_bind_binop_func(op), l, r, e->span);
}

dp_expr *dp_bind_unary(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  dp_expr *arg = dp_bind_expr(x, e->u.unary.arg);
  if (!arg) return NULL;
  switch (e->u.unary.op) {
  case DP_UOP_NOT:
    if (!(arg = dp_bind_require_bool(b, arg, "NOT"))) return NULL;
    return dp_bind_call1(b, "not", arg, e->span);
  case DP_UOP_NEG:
    if (arg->kind == DP_E_LITERAL && !arg->u.value.is_null) {
      dp_expr *folded = negate_literal(b, arg, e->span);
      if (folded) return folded;
    }
    return dp_bind_call1(b, "negate", arg, e->span);
  case DP_UOP_PLUS:
    if (!dp_type_is_numeric(arg->type) && !dp_type_is_interval(arg->type))
      return dp_bind_fail(b, DIPPER_TYPE, e->span, "unary + needs a number, not %s",
                          dp_bind_type_str(b, arg->type));
    return arg;
  case DP_UOP_BITNOT:
    return dp_bind_call1(b, "bitnot", arg, e->span);
  }
  return NULL;
}

dp_expr *dp_bind_between(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  dp_expr *arg = dp_bind_expr(x, e->u.between.arg);
  dp_expr *lo = dp_bind_expr(x, e->u.between.lo);
  dp_expr *hi = dp_bind_expr(x, e->u.between.hi);
  if (!arg || !lo || !hi) return NULL;
  dp_expr *trio[3] = {arg, lo, hi};
  if (!dp_bind_unify_n(b, 3, trio, "BETWEEN", e->span)) return NULL;
  arg = trio[0];
  lo = trio[1];
  hi = trio[2];
  dp_expr *r = dp_bind_call2(b, "and", dp_bind_call2(b, "ge", arg, lo, e->span), dp_bind_call2(b, "le", arg, hi, e->span),
                             e->span);
  if (r && e->u.between.symmetric) {
    dp_expr *swapped = dp_bind_call2(b, "and", dp_bind_call2(b, "ge", arg, hi, e->span),
                                     dp_bind_call2(b, "le", arg, lo, e->span), e->span);
    r = dp_bind_call2(b, "or", r, swapped, e->span);
  }
  if (r && e->u.between.negated) r = dp_bind_call1(b, "not", r, e->span);
  return r;
}

dp_expr *dp_bind_in_list(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  int n = e->u.in_list.n;
  dp_expr **args = dp_arena_calloc(b->a, (size_t)n + 1, sizeof *args);
  if (!args) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  if (!(args[0] = dp_bind_expr(x, e->u.in_list.arg))) ok = false;
  for (int i = 0; i < n; i++)
    if (!(args[i + 1] = dp_bind_expr(x, e->u.in_list.items[i]))) ok = false;
  if (!ok || !dp_bind_unify_n(b, n + 1, args, "IN list", e->span)) return NULL;
  dp_expr *r = dp_bind_call_named(b, "in", n + 1, args, e->span);
  if (r && e->u.in_list.negated) r = dp_bind_call1(b, "not", r, e->span);
  return r;
}

dp_expr *dp_bind_is(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  dp_expr *arg = dp_bind_expr(x, e->u.is.arg);
  if (!arg) return NULL;
  bool neg = e->u.is.negated;
  switch (e->u.is.what) {
  case DP_IS_NULL:
    return dp_bind_call1(b, neg ? "is_not_null" : "is_null", arg, e->span);
  case DP_IS_UNKNOWN:
    if (!(arg = dp_bind_require_bool(b, arg, "IS UNKNOWN"))) return NULL;
    return dp_bind_call1(b, neg ? "is_not_null" : "is_null", arg, e->span);
  case DP_IS_TRUE:
  case DP_IS_FALSE: {
    if (!(arg = dp_bind_require_bool(b, arg, e->u.is.what == DP_IS_TRUE ? "IS TRUE" : "IS FALSE")))
      return NULL;
    /* IS TRUE never yields NULL, so NOT of it is IS NOT TRUE exactly. */
    dp_expr *r = dp_bind_call1(b, e->u.is.what == DP_IS_TRUE ? "is_true" : "is_false", arg, e->span);
    return neg ? dp_bind_call1(b, "not", r, e->span) : r;
  }
  case DP_IS_DISTINCT_FROM: {
    dp_expr *other = dp_bind_expr(x, e->u.is.other);
    if (!other || !dp_bind_unify2(b, &arg, &other, "IS DISTINCT FROM", e->span)) return NULL;
    return dp_bind_call2(b, neg ? "is_not_distinct_from" : "is_distinct_from", arg, other, e->span);
  }
  }
  return NULL;
}

dp_expr *dp_bind_like(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  dp_expr *args[3];
  int n = 2;
  args[0] = dp_bind_expr(x, e->u.like.arg);
  args[1] = dp_bind_expr(x, e->u.like.pattern);
  if (e->u.like.escape) {
    args[2] = dp_bind_expr(x, e->u.like.escape);
    n = 3;
    if (!args[2]) return NULL;
  }
  if (!args[0] || !args[1]) return NULL;
  const char *name;
  bool wrap_not = false;
  switch (e->u.like.kind) {
  case DP_LIKE:
    name = e->u.like.negated ? "not_like" : "like";
    break;
  case DP_SIMILAR:
    name = "similar_to";
    wrap_not = e->u.like.negated;
    break;
  default:
    name = "rlike";
    wrap_not = e->u.like.negated;
    n = 2;
    break;
  }
  dp_expr *r = dp_bind_call_named(b, name, n, args, e->span);
  return r && wrap_not ? dp_bind_call1(b, "not", r, e->span) : r;
}

dp_expr *dp_bind_case(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  int n = e->u.case_.n;
  dp_expr *operand = NULL;
  if (e->u.case_.operand && !(operand = dp_bind_expr(x, e->u.case_.operand))) return NULL;
  dp_expr **whens = dp_arena_calloc(b->a, (size_t)n, sizeof *whens);
  dp_expr **vals = dp_arena_calloc(b->a, (size_t)n + 1, sizeof *vals);
  if (!whens || !vals) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  for (int i = 0; i < n; i++) {
    dp_expr *w = dp_bind_expr(x, e->u.case_.whens[i]);
    if (w && operand) {
      /* simple CASE x WHEN v: searched CASE WHEN x = v */
      dp_expr *l = operand;
      if (dp_bind_unify2(b, &l, &w, "CASE", e->u.case_.whens[i]->span))
        w = dp_bind_call2(b, "eq", l, w, e->u.case_.whens[i]->span);
      else
        w = NULL;
    } else if (w) {
      w = dp_bind_require_bool(b, w, "CASE WHEN");
    }
    whens[i] = w;
    vals[i] = dp_bind_expr(x, e->u.case_.thens[i]);
    if (!whens[i] || !vals[i]) ok = false;
  }
  dp_expr *else_ = NULL;
  if (e->u.case_.else_) {
    if (!(else_ = dp_bind_expr(x, e->u.case_.else_))) ok = false;
  }
  if (!ok) return NULL;
  int nv = n;
  if (else_) vals[nv++] = else_;
  if (!dp_bind_unify_n(b, nv, vals, "CASE results", e->span)) return NULL;
  const dp_type *rt = vals[0]->type;
  for (int i = 1; i < nv; i++)
    if (rt->kind == DP_T_NULL) rt = vals[i]->type;
  bool nn = else_ != NULL;
  for (int i = 0; i < nv; i++)
    if (!vals[i]->type->not_null) nn = false;
  rt = nn ? dp_bind_not_null(b, rt) : dp_bind_nullable(b, rt);
  dp_expr *c = dp_bind_new_expr(b, DP_E_CASE, rt, e->span);
  if (!c) return NULL;
  c->u.case_.n = n;
  c->u.case_.whens = whens;
  c->u.case_.thens = vals;
  c->u.case_.else_ = else_ ? vals[n] : NULL;
  return c;
}
