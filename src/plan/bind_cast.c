/*
** bind_cast.c — casts and typed catalog calls: explicit and implicit casts
** (numeric literals folded into the wanted type rather than cast), a call of
** a catalog function with type inference and its arguments cast to the
** signature, and the unification of operand types.
**
** Owns: the implicit-cast rules.  Does not own: the function signatures
** (functions.c), which expressions call what (bind_operator.c, bind_call.c).
*/
#include "plan/binder_int.h"

/* ------------------------------------------------------------------ */
/* casts and calls                                                     */
/* ------------------------------------------------------------------ */

dp_expr *dp_bind_cast(dp_binder *b, dp_expr *e, const dp_type *t, bool try_, dp_span span) {
  if (!e) return NULL;
  if (dp_type_equal(e->type, t) && e->type->not_null == t->not_null) return e;
  if (!dp_type_can_cast(e->type, t))
    return dp_bind_fail(b, DIPPER_TYPE, span, "cannot cast %s to %s",
                        dp_bind_type_str(b, e->type), dp_bind_type_str(b, t));
  /* A string literal cast to a temporal or numeric type is checked now, so the
     error points at the literal rather than failing at run time. */
  if (!try_ && e->kind == DP_E_LITERAL && !e->u.value.is_null && dp_type_is_string(e->type) &&
      (dp_type_is_temporal(t) || dp_type_is_numeric(t) || t->kind == DP_T_BOOLEAN)) {
    dp_value v;
    if (!dp_value_parse(b->a, t, e->u.value.u.s.ptr, e->u.value.u.s.len, &v))
      return dp_bind_fail(b, DIPPER_TYPE, e->span, "'%.*s' is not a valid %s",
                          (int)e->u.value.u.s.len, e->u.value.u.s.ptr, dp_bind_type_str(b, t));
  }
  dp_expr *c = dp_bind_new_expr(b, DP_E_CAST, t, span);
  if (!c) return NULL;
  c->u.cast.arg = e;
  c->u.cast.try_ = try_;
  return c;
}

static dp_i128 pow10_i128(int n) {
  dp_i128 r = 1;
  while (n-- > 0) r *= 10;
  return r;
}

/* A numeric literal converted exactly to numeric type t, so that `order_id * 2`
** reads as a BIGINT 2 rather than CAST(2 AS BIGINT).  NULL when the value does
** not convert exactly (the caller keeps the CAST). */
static dp_expr *fold_numeric_literal(dp_binder *b, const dp_expr *e, const dp_type *t) {
  if (e->kind != DP_E_LITERAL || e->u.value.is_null) return NULL;
  if (dp_type_is_timestamp(e->type) && t->kind == e->type->kind) {
    /* TIMESTAMP '..' of another precision: the same instant, typed as wanted */
    dp_value v = e->u.value;
    v.type = dp_bind_not_null(b, t);
    return dp_bind_literal_expr(b, v, e->span);
  }
  if (!dp_type_is_numeric(e->type) || !dp_type_is_numeric(t)) return NULL;
  const dp_type *tt = dp_bind_not_null(b, t);
  dp_value v = dp_value_null(tt);
  v.is_null = false;
  bool from_int = dp_type_is_integer(e->type);
  bool from_dec = e->type->kind == DP_T_DECIMAL;
  if (!from_int && !from_dec) return NULL;
  dp_i128 whole = from_int ? (dp_i128)e->u.value.u.i : e->u.value.u.dec;
  int scale = from_int ? 0 : e->type->scale;
  switch (t->kind) {
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT: {
    if (!from_int) return NULL;
    int64_t lo = t->kind == DP_T_TINYINT ? INT8_MIN : t->kind == DP_T_SMALLINT ? INT16_MIN
                 : t->kind == DP_T_INT   ? INT32_MIN : INT64_MIN;
    int64_t hi = t->kind == DP_T_TINYINT ? INT8_MAX : t->kind == DP_T_SMALLINT ? INT16_MAX
                 : t->kind == DP_T_INT   ? INT32_MAX : INT64_MAX;
    if (e->u.value.u.i < lo || e->u.value.u.i > hi) return NULL;
    v.u.i = e->u.value.u.i;
    break;
  }
  case DP_T_DECIMAL: {
    if (t->scale < scale || t->precision > 38) return NULL;
    dp_i128 scaled = whole * pow10_i128(t->scale - scale);
    dp_i128 limit = pow10_i128(t->precision);
    if (scaled >= limit || -scaled >= limit) return NULL;
    v.u.dec = scaled;
    break;
  }
  case DP_T_FLOAT:
  case DP_T_DOUBLE:
    v.u.d = (double)whole / (double)pow10_i128(scale);
    break;
  default:
    return NULL;
  }
  return dp_bind_literal_expr(b, v, e->span);
}

dp_expr *dp_bind_coerce(dp_binder *b, dp_expr *e, const dp_type *t, const char *what) {
  if (!e || !t) return e;
  if (dp_type_equal(e->type, t)) return e;
  dp_expr *folded = fold_numeric_literal(b, e, t);
  if (folded) return folded;
  if (e->type->kind == DP_T_NULL) {
    dp_expr *c = dp_bind_new_expr(b, DP_E_CAST, dp_bind_nullable(b, t), e->span);
    if (c) c->u.cast.arg = e;
    return c;
  }
  /* Quoted text standing for a timestamp, date or number: read it as one. */
  if (e->kind == DP_E_LITERAL && dp_type_is_string(e->type) && !dp_type_is_string(t) &&
      (dp_type_is_temporal(t) || dp_type_is_numeric(t) || t->kind == DP_T_BOOLEAN)) {
    dp_value v;
    if (!dp_value_parse(b->a, t, e->u.value.u.s.ptr, e->u.value.u.s.len, &v))
      return dp_bind_fail(b, DIPPER_TYPE, e->span, "'%.*s' is not a valid %s (%s)",
                          (int)e->u.value.u.s.len, e->u.value.u.s.ptr, dp_bind_type_str(b, t), what);
    v.type = dp_bind_not_null(b, t);
    return dp_bind_literal_expr(b, v, e->span);
  }
  if (!dp_type_can_coerce(e->type, t) && !dp_type_can_cast(e->type, t))
    return dp_bind_fail(b, DIPPER_TYPE, e->span, "%s: cannot convert %s to %s", what,
                        dp_bind_type_str(b, e->type), dp_bind_type_str(b, t));
  dp_expr *c = dp_bind_new_expr(b, DP_E_CAST, e->type->not_null ? dp_bind_not_null(b, t) : dp_bind_nullable(b, t),
                                e->span);
  if (c) c->u.cast.arg = e;
  return c;
}

static char *arg_types_str(dp_binder *b, int nargs, dp_expr **args) {
  char *s = "";
  for (int i = 0; i < nargs; i++)
    s = dp_arena_printf(b->a, "%s%s%s", s, i ? ", " : "", dp_bind_type_str(b, args[i]->type));
  return s ? s : "";
}

/* The unit of EXTRACT, FLOOR/CEIL (of a time), TIMESTAMPADD and TIMESTAMPDIFF is read
   once per batch by the evaluator, so it must be a constant the catalog knows for the
   operand's type: a DATE has no HOUR, and a unit taken from a column would be wrong
   for every row but the first. */
static bool check_unit(dp_binder *b, const dp_func *fn, int nargs, dp_expr **args, dp_span span) {
  int unit_at = -1, operand_at = -1;
  switch (fn->id) {
  case DP_F_EXTRACT: unit_at = 0, operand_at = 1; break;
  case DP_F_TIMESTAMPADD: unit_at = 0, operand_at = 2; break;
  case DP_F_TIMESTAMPDIFF: unit_at = 0, operand_at = 1; break;
  case DP_F_FLOOR:
  case DP_F_CEIL:
    if (nargs == 2 && dp_type_is_temporal(args[0]->type)) unit_at = 1, operand_at = 0;
    break;
  default: break;
  }
  if (unit_at < 0 || unit_at >= nargs || operand_at >= nargs) return true;
  const dp_expr *u = args[unit_at];
  if (u->kind != DP_E_LITERAL || u->u.value.is_null || !dp_type_is_string(u->type)) {
    dp_bind_err(b, DIPPER_TYPE, u->span,
                "the unit of %s must be a unit name such as HOUR or DAY (or quoted, 'HOUR'), "
                "not an expression or a column",
                fn->name);
    return false;
  }
  const char *unit = dp_arena_strndup(b->a, u->u.value.u.s.ptr, u->u.value.u.s.len);
  if (!unit) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory") != NULL;
  const char *why = dp_func_check_unit(b->a, fn, unit, args[operand_at]->type);
  if (why) {
    dp_bind_err(b, DIPPER_TYPE, u->span, "%s", why);
    return false;
  }
  return true;
}

dp_expr *dp_bind_call_fn(dp_binder *b, const dp_func *fn, int nargs, dp_expr **args, dp_span span) {
  for (int i = 0; i < nargs; i++)
    if (!args[i]) return NULL;
  if (nargs < fn->min_args || (fn->max_args >= 0 && nargs > fn->max_args)) {
    bool few = nargs < fn->min_args;
    int bound = few ? fn->min_args : fn->max_args;
    const char *qual = fn->min_args == fn->max_args ? "" : few ? "at least " : "at most ";
    return dp_bind_fail(b, DIPPER_TYPE, span, "%s takes %s%d argument%s, not %d: %s", fn->name,
                        qual, bound, bound == 1 ? "" : "s", nargs,
                        fn->signature ? fn->signature : fn->name);
  }
  const dp_type **types = dp_arena_calloc(b->a, (size_t)(nargs ? nargs : 1), sizeof *types);
  if (!types) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory");
  for (int i = 0; i < nargs; i++) types[i] = args[i]->type;
  const char *why = NULL;
  const dp_type *rt = fn->infer ? fn->infer(b->a, fn, nargs, (const dp_type *const *)types, &why) : NULL;
  if (!rt) {
    if (fn->op && nargs == 2)
      return dp_bind_fail(b, DIPPER_TYPE, span, "cannot apply %s to %s and %s%s%s", fn->op,
                          dp_bind_type_str(b, types[0]), dp_bind_type_str(b, types[1]),
                          why ? ": " : "", why ? why : "");
    return dp_bind_fail(b, DIPPER_TYPE, span, "%s(%s) is not defined%s%s; expected %s", fn->name,
                        arg_types_str(b, nargs, args), why ? ": " : "", why ? why : "",
                        fn->signature ? fn->signature : "other argument types");
  }
  dp_expr **own = dp_arena_calloc(b->a, (size_t)(nargs ? nargs : 1), sizeof *own);
  if (!own) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory");
  const dp_type **picked = NULL;
  if (dp_func_param_types(b->a, fn, nargs, (const dp_type *const *)types, &picked))
    return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory");
  for (int i = 0; i < nargs; i++) {
    const dp_type *pt = picked[i];
    own[i] = args[i];
    if (pt && !dp_type_equal(pt, types[i])) {
      own[i] = dp_bind_coerce(b, args[i], pt, fn->name);
      if (!own[i]) return NULL;
    }
  }
  if (!check_unit(b, fn, nargs, args, span)) return NULL;
  dp_expr *c = dp_bind_new_expr(b, DP_E_CALL, rt, span);
  if (!c) return NULL;
  c->u.call.fn = fn;
  c->u.call.nargs = nargs;
  c->u.call.args = own;
  return c;
}

dp_expr *dp_bind_call_named(dp_binder *b, const char *name, int nargs, dp_expr **args, dp_span span) {
  const dp_func *fn = dp_func_lookup(name);
  if (!fn)
    return dp_bind_fail(b, DIPPER_INTERNAL, span, "the function catalog has no `%s`", name);
  return dp_bind_call_fn(b, fn, nargs, args, span);
}

/* Bring two operands to their common type (comparisons, CASE, IN, set operations). */
bool dp_bind_unify2(dp_binder *b, dp_expr **l, dp_expr **r, const char *what, dp_span span) {
  const dp_type *lt = (*l)->type, *rt = (*r)->type;
  if (dp_type_equal(lt, rt)) return true;
  /* A quoted literal compared with a temporal or numeric value reads as that type. */
  if ((*l)->kind == DP_E_LITERAL && dp_type_is_string(lt) && !dp_type_is_string(rt) &&
      rt->kind != DP_T_NULL) {
    *l = dp_bind_coerce(b, *l, rt, what);
    return *l != NULL;
  }
  if ((*r)->kind == DP_E_LITERAL && dp_type_is_string(rt) && !dp_type_is_string(lt) &&
      lt->kind != DP_T_NULL) {
    *r = dp_bind_coerce(b, *r, lt, what);
    return *r != NULL;
  }
  const dp_type *ct = dp_type_common(b->a, lt, rt);
  if (!ct) {
    dp_bind_err(b, DIPPER_TYPE, span, "%s: %s and %s have no common type; CAST one of them", what,
                dp_bind_type_str(b, lt), dp_bind_type_str(b, rt));
    return false;
  }
  /* The casts to the common type are the catalog's (dp_func_param_types). */
  return true;
}

/* The common type of n expressions, casting each to it. */
bool dp_bind_unify_n(dp_binder *b, int n, dp_expr **es, const char *what, dp_span span) {
  const dp_type *ct = NULL;
  /* Quoted literals take the type of the other values (a timestamp, a number):
     the first pass leaves them out, the second only runs when all are quoted. */
  bool all_quoted = true;
  for (int i = 0; i < n; i++) {
    if (!es[i]) return false;
    if (es[i]->type->kind != DP_T_NULL &&
        !(es[i]->kind == DP_E_LITERAL && dp_type_is_string(es[i]->type)))
      all_quoted = false;
  }
  for (int i = 0; i < n; i++) {
    if (es[i]->type->kind == DP_T_NULL) continue;
    if (!all_quoted && es[i]->kind == DP_E_LITERAL && dp_type_is_string(es[i]->type))
      continue; /* read as ct below */
    if (!ct) {
      ct = es[i]->type;
      continue;
    }
    const dp_type *nt = dp_type_common(b->a, ct, es[i]->type);
    if (!nt) {
      dp_bind_err(b, DIPPER_TYPE, es[i]->span, "%s: %s and %s have no common type; CAST one of them",
                  what, dp_bind_type_str(b, ct), dp_bind_type_str(b, es[i]->type));
      return false;
    }
    ct = nt;
  }
  (void)span;
  if (!ct) return true;
  for (int i = 0; i < n; i++)
    if (!dp_type_equal(es[i]->type, ct) && !(es[i] = dp_bind_coerce(b, es[i], ct, what))) return false;
  return true;
}

dp_expr *dp_bind_call2(dp_binder *b, const char *name, dp_expr *l, dp_expr *r, dp_span span) {
  if (!l || !r) return NULL;
  dp_expr *args[2] = {l, r};
  return dp_bind_call_named(b, name, 2, args, span);
}

dp_expr *dp_bind_call1(dp_binder *b, const char *name, dp_expr *arg, dp_span span) {
  if (!arg) return NULL;
  return dp_bind_call_named(b, name, 1, &arg, span);
}

bool dp_bind_is_comparison(dp_ast_binop op) {
  return op == DP_BOP_EQ || op == DP_BOP_NE || op == DP_BOP_LT || op == DP_BOP_LE ||
         op == DP_BOP_GT || op == DP_BOP_GE;
}

const char *dp_bind_binop_func(dp_ast_binop op) {
  switch (op) {
  case DP_BOP_OR: return "or";
  case DP_BOP_AND: return "and";
  case DP_BOP_EQ: return "eq";
  case DP_BOP_NE: return "ne";
  case DP_BOP_LT: return "lt";
  case DP_BOP_LE: return "le";
  case DP_BOP_GT: return "gt";
  case DP_BOP_GE: return "ge";
  case DP_BOP_ADD: return "add";
  case DP_BOP_SUB: return "subtract";
  case DP_BOP_MUL: return "multiply";
  case DP_BOP_DIV: return "divide";
  case DP_BOP_MOD: return "mod";
  case DP_BOP_CONCAT: return "concat";
  case DP_BOP_BITAND: return "bitand";
  case DP_BOP_BITOR: return "bitor";
  case DP_BOP_BITXOR: return "bitxor";
  case DP_BOP_OVERLAPS: return ""; /* bound by dp_bind_binary */
  }
  return "";
}

dp_expr *dp_bind_require_bool(dp_binder *b, dp_expr *e, const char *clause) {
  if (!e) return NULL;
  if (e->type->kind == DP_T_BOOLEAN) return e;
  if (e->type->kind == DP_T_NULL) return dp_bind_coerce(b, e, dp_type_of(DP_T_BOOLEAN), clause);
  return dp_bind_fail(b, DIPPER_TYPE, e->span, "%s needs a BOOLEAN condition, not %s", clause,
                      dp_bind_type_str(b, e->type));
}

dp_expr *dp_bind_cond(dp_bexpr *x, const dp_ast_expr *e) {
  return dp_bind_require_bool(x->b, dp_bind_expr(x, e), x->clause ? x->clause : "the condition");
}
