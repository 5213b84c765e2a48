/*
** bind_asof.c — the as-of join: `l ASOF [LEFT] JOIN r` in both spellings,
**
**   MATCH_CONDITION (l.t >= r.t) [ON l.k = r.k | USING (k)]   Snowflake, Calcite
**   ON l.k = r.k AND l.t >= r.t                               DuckDB, ClickHouse
**
** with an optional TOLERANCE after either, turned into an ASOF_JOIN node.
**
** Owns: reading the condition bind_join (bind_from.c) bound over both sides
** into equality keys (a left column = a right column) and the one time
** inequality (>=, >, <=, <; a left column against a right column, either
** way round), the TOLERANCE, and the refusals of everything else (another
** kind of join, conditions that are neither, two time conditions, times of
** different kinds).  Does not own: the scopes and USING (bind_join), the
** semantics (exec/op_asof.c), the streaming rules (analyze.c, validate.c).
*/
#include <string.h>

#include "plan/binder_int.h"

/* `a OP b` as a time condition: a left column against a right column. */
static bool time_cond(const dp_expr *c, int nl, int *lt, int *rt, dp_asof_op *op) {
  static const struct { const char *fn; dp_asof_op op, flipped; } ops[] = {
      {"ge", DP_ASOF_GE, DP_ASOF_LE}, {"gt", DP_ASOF_GT, DP_ASOF_LT},
      {"le", DP_ASOF_LE, DP_ASOF_GE}, {"lt", DP_ASOF_LT, DP_ASOF_GT},
  };
  if (c->kind != DP_E_CALL || c->u.call.nargs != 2) return false;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    if (strcmp(c->u.call.fn->name, ops[i].fn) != 0) continue;
    int a = dp_bind_as_column(c->u.call.args[0]), b = dp_bind_as_column(c->u.call.args[1]);
    if (a < 0 || b < 0) return false;
    if (a < nl && b >= nl) {
      *lt = a, *rt = b - nl, *op = ops[i].op;
      return true;
    }
    if (b < nl && a >= nl) { /* r.t <= l.t is l.t >= r.t */
      *lt = b, *rt = a - nl, *op = ops[i].flipped;
      return true;
    }
    return false;
  }
  return false;
}

/* `l.k = r.k` between a left and a right column. */
static bool key_cond(const dp_expr *c, int nl, int *lk, int *rk) {
  if (c->kind != DP_E_CALL || c->u.call.nargs != 2 || strcmp(c->u.call.fn->name, "eq") != 0)
    return false;
  int a = dp_bind_as_column(c->u.call.args[0]), b = dp_bind_as_column(c->u.call.args[1]);
  if (a < 0 || b < 0) return false;
  if (a >= nl && b < nl) {
    int t = a;
    a = b;
    b = t;
  }
  if (!(a < nl && b >= nl)) return false;
  *lk = a, *rk = b - nl;
  return true;
}

static const dp_expr *uncast(const dp_expr *e) { return e->kind == DP_E_CAST ? e->u.cast.arg : e; }

/* `l.k = r.k` where the binder cast one side to the other's type. */
static bool key_of_two_types(const dp_expr *c, int nl) {
  if (c->kind != DP_E_CALL || c->u.call.nargs != 2 || strcmp(c->u.call.fn->name, "eq") != 0)
    return false;
  int a = dp_bind_as_column(uncast(c->u.call.args[0])), b = dp_bind_as_column(uncast(c->u.call.args[1]));
  return a >= 0 && b >= 0 && (a < nl) != (b < nl);
}

static bool time_type(const dp_type *t) { return dp_type_is_timestamp(t) || dp_type_is_integer(t); }

/* TOLERANCE: an interval for TIMESTAMP times, a whole number for integer ones; >= 0. */
static bool bind_tolerance(dp_binder *b, const dp_ast_expr *e, const dp_type *tt, int64_t *out) {
  dp_bscope empty;
  memset(&empty, 0, sizeof empty);
  dp_bexpr x;
  dp_bexpr_init(&x, b, &empty, 0, "TOLERANCE");
  dp_expr *v = dp_bind_expr(&x, e);
  if (!v) return false;
  bool ts = dp_type_is_timestamp(tt);
  bool ok = v->kind == DP_E_LITERAL && !v->u.value.is_null &&
            (ts ? v->type->kind == DP_T_INTERVAL_DT : dp_type_is_integer(v->type));
  if (!ok) {
    dp_bind_fail(b, DIPPER_TYPE, e->span,
                 ts ? "TOLERANCE of TIMESTAMP times takes a day-time interval literal, e.g. "
                      "TOLERANCE INTERVAL '5' SECOND"
                    : "TOLERANCE of integer times takes a whole number literal, e.g. TOLERANCE 10");
    return false;
  }
  if (v->u.value.u.i < 0) {
    dp_bind_fail(b, DIPPER_TYPE, e->span, "TOLERANCE must not be negative");
    return false;
  }
  *out = v->u.value.u.i;
  return true;
}

dp_plan *dp_bind_asof(dp_binder *b, const dp_ast_from *f, dp_plan *j) {
  dp_join_kind kind = j->u.join.kind;
  dp_expr *cond = j->u.join.cond;
  if (kind != DP_J_INNER && kind != DP_J_LEFT)
    return dp_bind_fail(b, DIPPER_UNSUPPORTED, f->span, "an ASOF JOIN is INNER or LEFT");
  int nl = j->inputs[0]->schema.ncols;
  int n = 0, cap = 0;
  dp_expr **conj = NULL;
  if (cond) dp_bind_conjuncts(b, cond, &n, &cap, &conj);
  int *lk = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof(int));
  int *rk = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof(int));
  dp_expr **keys = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *keys);
  if (!lk || !rk || !keys) return NULL;
  int nkeys = 0, lt = -1, rt = -1;
  dp_asof_op op = DP_ASOF_GE;
  const dp_expr *tc = NULL;
  for (int i = 0; i < n; i++) {
    int a, c;
    dp_asof_op o;
    if (key_cond(conj[i], nl, &a, &c)) {
      lk[nkeys] = a, rk[nkeys] = c, keys[nkeys++] = conj[i];
    } else if (time_cond(conj[i], nl, &a, &c, &o)) {
      if (tc)
        return dp_bind_fail(b, DIPPER_UNSUPPORTED, conj[i]->span,
                            "an ASOF JOIN has one time condition; this is a second one");
      tc = conj[i], lt = a, rt = c, op = o;
    } else if (key_of_two_types(conj[i], nl)) {
      return dp_bind_fail(b, DIPPER_TYPE, conj[i]->span,
                          "the keys of an ASOF JOIN have one type on both sides, not %s and %s; "
                          "CAST one of them in a subquery",
                          dp_bind_type_str(b, uncast(conj[i]->u.call.args[0])->type),
                          dp_bind_type_str(b, uncast(conj[i]->u.call.args[1])->type));
    } else {
      return dp_bind_fail(b, DIPPER_UNSUPPORTED, conj[i]->span,
                          "an ASOF JOIN's condition is equalities of a left and a right column "
                          "and one time comparison (l.t >= r.t, >, <=, <); filter the other "
                          "conditions before or after the join");
    }
  }
  if (!tc)
    return dp_bind_fail(b, DIPPER_SYNTAX, f->span,
                        "an ASOF JOIN needs a time condition: MATCH_CONDITION (l.t >= r.t) or "
                        "ON ... AND l.t >= r.t");
  const dp_type *ltt = j->inputs[0]->schema.cols[lt].type;
  const dp_type *rtt = j->inputs[1]->schema.cols[rt].type;
  if (!time_type(ltt) || dp_type_is_timestamp(ltt) != dp_type_is_timestamp(rtt) || !time_type(rtt))
    return dp_bind_fail(b, DIPPER_TYPE, tc->span,
                        "the times of an ASOF JOIN are both TIMESTAMP or both integers, not %s "
                        "and %s", dp_bind_type_str(b, ltt), dp_bind_type_str(b, rtt));
  for (int i = 0; i < nkeys; i++) {
    const dp_type *a = j->inputs[0]->schema.cols[lk[i]].type, *c = j->inputs[1]->schema.cols[rk[i]].type;
    if (!dp_type_equal(a, c))
      return dp_bind_fail(b, DIPPER_TYPE, keys[i]->span,
                          "the keys of an ASOF JOIN have one type on both sides, not %s and %s; "
                          "CAST one of them in a subquery", dp_bind_type_str(b, a), dp_bind_type_str(b, c));
  }
  int64_t tol = -1;
  if (f->u.join.tolerance && !bind_tolerance(b, f->u.join.tolerance, ltt, &tol)) return NULL;
  j->kind = DP_P_ASOF_JOIN;
  memset(&j->u, 0, sizeof j->u);
  j->u.asof.kind = kind;
  j->u.asof.op = op;
  j->u.asof.left_time = lt;
  j->u.asof.right_time = rt;
  j->u.asof.cond = nkeys ? dp_bind_and(b, nkeys, keys) : NULL;
  j->u.asof.nkeys = nkeys;
  j->u.asof.left_keys = lk;
  j->u.asof.right_keys = rk;
  j->u.asof.tolerance = tol;
  return j;
}
