/*
** bind_expr.c — the expression binder: AST expressions to typed dp_expr.
**
** Resolves column names against scopes (qualified, unqualified, correlated,
** nested ROW fields) and dispatches each expression kind to its binder:
** casts and typed catalog calls (bind_cast.c), operators (bind_operator.c),
** function, aggregate and OVER calls (bind_call.c).  Aggregate and OVER
** calls are collected as marker columns that bind_select.c later points at
** their plan nodes.  Also the expression utilities the binder's files share
** (sameness, rewriting, conjuncts) and the scopes.
**
** Owns: no state of its own; everything is allocated in the binder's arena.
** Does not own: literals and intervals (bind_literal.c); the FROM-clause
** constructs (window TVFs, DESCRIPTOR: bind_window.c), refused here when
** written elsewhere.
*/
#include <string.h>

#include "core/grow.h"
#include "core/suggest.h"
#include "plan/binder_int.h"

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
/* ------------------------------------------------------------------ */

dp_expr *dp_bind_new_expr(dp_binder *b, dp_expr_kind kind, const dp_type *type, dp_span span) {
  dp_expr *e = dp_arena_calloc(b->a, 1, sizeof *e);
  if (!e) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory binding an expression");
  e->kind = kind;
  e->type = type;
  e->span = span;
  return e;
}

dp_expr *dp_bind_column_expr(dp_binder *b, int index, int outer, const dp_type *type, dp_span span) {
  dp_expr *e = dp_bind_new_expr(b, DP_E_COLUMN, type, span);
  if (!e) return NULL;
  e->u.column.index = index;
  e->u.column.outer = outer;
  return e;
}

dp_expr *dp_bind_literal_expr(dp_binder *b, dp_value v, dp_span span) {
  dp_expr *e = dp_bind_new_expr(b, DP_E_LITERAL, v.type, span);
  if (!e) return NULL;
  e->u.value = v;
  return e;
}

const char *dp_bind_last_part(const dp_ast_name *n) {
  return n->n > 0 ? n->parts[n->n - 1].name : "";
}

/* ------------------------------------------------------------------ */
/* expression utilities                                                */
/* ------------------------------------------------------------------ */

bool dp_bexpr_same(const dp_expr *x, const dp_expr *y) {
  if (x == y) return true;
  if (!x || !y || x->kind != y->kind) return false;
  switch (x->kind) {
  case DP_E_COLUMN:
    return x->u.column.index == y->u.column.index && x->u.column.outer == y->u.column.outer;
  case DP_E_LITERAL:
    if (!dp_type_equal(x->type, y->type)) return false;
    if (x->u.value.is_null || y->u.value.is_null) return x->u.value.is_null == y->u.value.is_null;
    return dp_value_compare(&x->u.value, &y->u.value) == 0;
  case DP_E_CALL:
    if (x->u.call.fn != y->u.call.fn || x->u.call.nargs != y->u.call.nargs) return false;
    if (!x->u.call.fn->deterministic) return false;
    for (int i = 0; i < x->u.call.nargs; i++)
      if (!dp_bexpr_same(x->u.call.args[i], y->u.call.args[i])) return false;
    return true;
  case DP_E_CAST:
    return x->u.cast.try_ == y->u.cast.try_ && dp_type_equal(x->type, y->type) &&
           dp_bexpr_same(x->u.cast.arg, y->u.cast.arg);
  case DP_E_CASE:
    if (x->u.case_.n != y->u.case_.n) return false;
    for (int i = 0; i < x->u.case_.n; i++)
      if (!dp_bexpr_same(x->u.case_.whens[i], y->u.case_.whens[i]) ||
          !dp_bexpr_same(x->u.case_.thens[i], y->u.case_.thens[i]))
        return false;
    return (x->u.case_.else_ == NULL) == (y->u.case_.else_ == NULL) &&
           (!x->u.case_.else_ || dp_bexpr_same(x->u.case_.else_, y->u.case_.else_));
  case DP_E_FIELD:
    return x->u.field.index == y->u.field.index && dp_bexpr_same(x->u.field.arg, y->u.field.arg);
  case DP_E_SUBQUERY:
    return false;
  }
  return false;
}

/* Copy with input columns shifted by delta and outer levels by outer_add. */
static dp_expr *xform(dp_arena *a, const dp_expr *e, int delta, int outer_add) {
  if (!e) return NULL;
  dp_expr *c = dp_arena_alloc(a, sizeof *c);
  if (!c) return NULL;
  *c = *e;
  switch (e->kind) {
  case DP_E_COLUMN:
    if (e->u.column.outer == 0) c->u.column.index += delta;
    else if (e->u.column.outer > 0) c->u.column.outer += outer_add;
    break;
  case DP_E_LITERAL:
    break;
  case DP_E_CALL:
    if (e->u.call.nargs > 0) {
      c->u.call.args = dp_arena_calloc(a, (size_t)e->u.call.nargs, sizeof(dp_expr *));
      if (!c->u.call.args) return NULL;
      for (int i = 0; i < e->u.call.nargs; i++) {
        c->u.call.args[i] = xform(a, e->u.call.args[i], delta, outer_add);
        if (!c->u.call.args[i]) return NULL;
      }
    }
    break;
  case DP_E_CAST:
    if (!(c->u.cast.arg = xform(a, e->u.cast.arg, delta, outer_add))) return NULL;
    break;
  case DP_E_CASE: {
    int n = e->u.case_.n;
    c->u.case_.whens = dp_arena_calloc(a, (size_t)n, sizeof(dp_expr *));
    c->u.case_.thens = dp_arena_calloc(a, (size_t)n, sizeof(dp_expr *));
    if (!c->u.case_.whens || !c->u.case_.thens) return NULL;
    for (int i = 0; i < n; i++) {
      c->u.case_.whens[i] = xform(a, e->u.case_.whens[i], delta, outer_add);
      c->u.case_.thens[i] = xform(a, e->u.case_.thens[i], delta, outer_add);
      if (!c->u.case_.whens[i] || !c->u.case_.thens[i]) return NULL;
    }
    if (e->u.case_.else_ && !(c->u.case_.else_ = xform(a, e->u.case_.else_, delta, outer_add)))
      return NULL;
    break;
  }
  case DP_E_FIELD:
    if (!(c->u.field.arg = xform(a, e->u.field.arg, delta, outer_add))) return NULL;
    break;
  case DP_E_SUBQUERY:
    /* The subquery's own plan refers to this row through outer references,
       which a shift of the enclosing row does not reach; callers only shift
       subqueries that are uncorrelated or rebuilt. */
    if (e->u.subquery.arg && !(c->u.subquery.arg = xform(a, e->u.subquery.arg, delta, outer_add)))
      return NULL;
    break;
  }
  return c;
}

dp_expr *dp_bexpr_copy(dp_arena *a, const dp_expr *e) { return xform(a, e, 0, 0); }
dp_expr *dp_bexpr_shift(dp_arena *a, const dp_expr *e, int delta) { return xform(a, e, delta, 0); }

bool dp_bexpr_uses_range(const dp_expr *e, int lo, int hi) {
  if (!e) return false;
  switch (e->kind) {
  case DP_E_COLUMN:
    return e->u.column.outer == 0 && e->u.column.index >= lo && e->u.column.index < hi;
  case DP_E_LITERAL:
    return false;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (dp_bexpr_uses_range(e->u.call.args[i], lo, hi)) return true;
    return false;
  case DP_E_CAST:
    return dp_bexpr_uses_range(e->u.cast.arg, lo, hi);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (dp_bexpr_uses_range(e->u.case_.whens[i], lo, hi) ||
          dp_bexpr_uses_range(e->u.case_.thens[i], lo, hi))
        return true;
    return dp_bexpr_uses_range(e->u.case_.else_, lo, hi);
  case DP_E_FIELD:
    return dp_bexpr_uses_range(e->u.field.arg, lo, hi);
  case DP_E_SUBQUERY:
    /* a correlated subquery may use any column of this row */
    return dp_bexpr_uses_range(e->u.subquery.arg, lo, hi) || e->u.subquery.plan != NULL;
  }
  return false;
}

bool dp_bexpr_has_outer(const dp_expr *e, int level) {
  if (!e) return false;
  switch (e->kind) {
  case DP_E_COLUMN:
    return e->u.column.outer >= level;
  case DP_E_LITERAL:
    return false;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (dp_bexpr_has_outer(e->u.call.args[i], level)) return true;
    return false;
  case DP_E_CAST:
    return dp_bexpr_has_outer(e->u.cast.arg, level);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (dp_bexpr_has_outer(e->u.case_.whens[i], level) ||
          dp_bexpr_has_outer(e->u.case_.thens[i], level))
        return true;
    return dp_bexpr_has_outer(e->u.case_.else_, level);
  case DP_E_FIELD:
    return dp_bexpr_has_outer(e->u.field.arg, level);
  case DP_E_SUBQUERY:
    return dp_bexpr_has_outer(e->u.subquery.arg, level);
  }
  return false;
}

void dp_bind_conjuncts(dp_binder *b, dp_expr *e, int *n, int *cap, dp_expr ***out) {
  if (!e) return;
  if (e->kind == DP_E_CALL && e->u.call.fn && strcmp(e->u.call.fn->name, "and") == 0 &&
      e->u.call.nargs == 2) {
    dp_bind_conjuncts(b, e->u.call.args[0], n, cap, out);
    dp_bind_conjuncts(b, e->u.call.args[1], n, cap, out);
    return;
  }
  if (dp_arena_grow_i(b->a, out, cap, *n + 1, sizeof(dp_expr *), 8)) return;
  (*out)[(*n)++] = e;
}

dp_expr *dp_bind_and(dp_binder *b, int n, dp_expr **conds) {
  if (n == 0) return NULL;
  dp_expr *acc = conds[0];
  for (int i = 1; i < n; i++) {
    dp_expr *args[2] = {acc, conds[i]};
    acc = dp_bind_call_named(b, "and", 2, args, dp_span_join(acc->span, conds[i]->span));
    if (!acc) return NULL;
  }
  return acc;
}

/* ------------------------------------------------------------------ */
/* scopes                                                              */
/* ------------------------------------------------------------------ */

dp_bcol *dp_bscope_add(dp_binder *b, dp_bscope *s, const char *rel, const char *name,
                       const dp_type *type, int index, dp_expr *expr) {
  if (dp_arena_grow_i(b->a, &s->cols, &s->cap, s->n + 1, sizeof *s->cols, 16)) {
    dp_bind_err(b, DIPPER_NOMEM, (dp_span){0, 0, 0, 0}, "out of memory building a scope");
    return NULL;
  }
  dp_bcol *c = &s->cols[s->n++];
  memset(c, 0, sizeof *c);
  c->rel = rel;
  c->name = name;
  c->type = type;
  c->index = index;
  c->expr = expr;
  return c;
}

void dp_bscope_from_plan(dp_binder *b, dp_bscope *s, const dp_plan *p, const char *rel) {
  for (int i = 0; i < p->schema.ncols; i++)
    dp_bscope_add(b, s, rel, p->schema.cols[i].name, p->schema.cols[i].type, i, NULL);
}

void dp_bexpr_init(dp_bexpr *x, dp_binder *b, dp_bscope *sc, unsigned allow, const char *clause) {
  memset(x, 0, sizeof *x);
  x->b = b;
  x->sc = sc;
  x->allow = allow;
  x->clause = clause;
  x->win_start = x->win_end = x->win_time = -1;
}

/* The closest visible column name to `name`, or NULL. */
static const char *suggest_column(const dp_bscope *sc, const char *name) {
  dp_closest near;
  dp_closest_init(&near, name);
  for (const dp_bscope *s = sc; s; s = s->outer)
    for (int i = 0; i < s->n; i++)
      if (!s->cols[i].hidden) dp_closest_add(&near, s->cols[i].name);
  return near.best;
}

static bool scope_has_rel(const dp_bscope *s, const char *rel) {
  for (int i = 0; i < s->n; i++)
    if (s->cols[i].rel && dp_bind_name_eq(s->cols[i].rel, rel)) return true;
  return false;
}

/* Reference to scope column c found `level` scopes out. */
static dp_expr *scope_ref(dp_bexpr *x, const dp_bcol *c, int level, dp_span span) {
  if (c->expr) {
    dp_expr *e = xform(x->b->a, c->expr, 0, level);
    if (!e) return NULL;
    if (level > 0 && c->expr->kind == DP_E_COLUMN) e->u.column.outer = level;
    e->span = span;
    return e;
  }
  return dp_bind_column_expr(x->b, c->index, level, c->type, span);
}

/* Apply the remaining parts of a name as ROW field accesses. */
static dp_expr *field_path(dp_bexpr *x, dp_expr *e, const dp_ast_name *n, int from) {
  for (int i = from; e && i < n->n; i++) {
    const dp_ast_ident *part = &n->parts[i];
    if (e->type->kind != DP_T_ROW)
      return dp_bind_fail(x->b, DIPPER_NAME, part->span,
                          "cannot read field `%s`: the value before it is %s, not a ROW", part->name,
                          dp_bind_type_str(x->b, e->type));
    int found = -1;
    for (int f = 0; f < e->type->nfields; f++)
      if (dp_bind_name_eq(e->type->fields[f].name, part->name)) {
        found = f;
        break;
      }
    if (found < 0)
      return dp_bind_fail(x->b, DIPPER_NAME, part->span, "%s has no field `%s`",
                          dp_bind_type_str(x->b, e->type), part->name);
    dp_expr *f = dp_bind_new_expr(x->b, DP_E_FIELD, e->type->fields[found].type,
                                  dp_span_join(n->parts[0].span, part->span));
    if (!f) return NULL;
    if (!e->type->not_null) f->type = dp_bind_nullable(x->b, f->type);
    f->u.field.arg = e;
    f->u.field.index = found;
    e = f;
  }
  return e;
}

static dp_expr *bind_name(dp_bexpr *x, const dp_ast_name *n) {
  dp_binder *b = x->b;
  if (n->n == 0) return dp_bind_fail(b, DIPPER_INTERNAL, n->span, "empty name");
  int level = 0;
  for (dp_bscope *s = x->sc; s; s = s->outer, level++) {
    /* Qualified: t.col[.field...] when t names a relation of this scope. */
    if (n->n >= 2 && scope_has_rel(s, n->parts[0].name)) {
      const dp_bcol *hit = NULL;
      int nhits = 0;
      for (int i = 0; i < s->n; i++)
        if (s->cols[i].rel && dp_bind_name_eq(s->cols[i].rel, n->parts[0].name) &&
            dp_bind_name_eq(s->cols[i].name, n->parts[1].name)) {
          if (!hit) hit = &s->cols[i];
          nhits++;
        }
      if (nhits > 1)
        return dp_bind_fail(b, DIPPER_NAME, n->span,
                            "column `%s.%s` is ambiguous: `%s` names more than one input; give "
                            "each input its own alias",
                            n->parts[0].name, n->parts[1].name, n->parts[0].name);
      if (hit) return field_path(x, scope_ref(x, hit, level, n->span), n, 2);
      /* t exists but has no such column: unless t is also a column name, report it here. */
      bool also_col = false;
      for (int i = 0; i < s->n; i++)
        if (!s->cols[i].hidden && dp_bind_name_eq(s->cols[i].name, n->parts[0].name)) also_col = true;
      if (!also_col) {
        dp_closest near;
        dp_closest_init(&near, n->parts[1].name);
        for (int i = 0; i < s->n; i++)
          if (s->cols[i].rel && dp_bind_name_eq(s->cols[i].rel, n->parts[0].name))
            dp_closest_add(&near, s->cols[i].name);
        const char *best = near.best;
        if (best)
          return dp_bind_fail(b, DIPPER_NAME, n->span, "`%s` has no column `%s`; did you mean `%s.%s`?",
                              n->parts[0].name, n->parts[1].name, n->parts[0].name, best);
        return dp_bind_fail(b, DIPPER_NAME, n->span, "`%s` has no column `%s`", n->parts[0].name,
                            n->parts[1].name);
      }
    }
    /* Unqualified: col[.field...]. */
    const dp_bcol *hit = NULL, *other = NULL;
    for (int i = 0; i < s->n; i++) {
      if (s->cols[i].hidden || !dp_bind_name_eq(s->cols[i].name, n->parts[0].name)) continue;
      if (!hit) hit = &s->cols[i];
      else if (!other) other = &s->cols[i];
    }
    if (other) {
      if (hit->rel && other->rel && !dp_bind_name_eq(hit->rel, other->rel))
        return dp_bind_fail(b, DIPPER_NAME, n->parts[0].span,
                            "column `%s` is ambiguous: both `%s` and `%s` have it; write %s.%s or "
                            "%s.%s",
                            n->parts[0].name, hit->rel, other->rel, hit->rel, n->parts[0].name,
                            other->rel, n->parts[0].name);
      return dp_bind_fail(b, DIPPER_NAME, n->parts[0].span,
                          "column `%s` is ambiguous: the input has it more than once; rename one "
                          "with an alias",
                          n->parts[0].name);
    }
    if (hit) return field_path(x, scope_ref(x, hit, level, n->parts[0].span), n, 1);
  }
  const char *best = suggest_column(x->sc, n->parts[0].name);
  if (n->n >= 2) {
    const char *rel = dp_catalog_suggest(b->cat, n->parts[0].name);
    (void)rel;
    if (best)
      return dp_bind_fail(b, DIPPER_NAME, n->span,
                          "unknown column `%s` (no input is named `%s` either); did you mean `%s`?",
                          n->parts[0].name, n->parts[0].name, best);
    return dp_bind_fail(b, DIPPER_NAME, n->span, "unknown column or table `%s`", n->parts[0].name);
  }
  if (best)
    return dp_bind_fail(b, DIPPER_NAME, n->span, "unknown column `%s`; did you mean `%s`?",
                        n->parts[0].name, best);
  if (!x->sc || x->sc->n == 0)
    return dp_bind_fail(b, DIPPER_NAME, n->span,
                        "unknown column `%s`: the query has no FROM clause to read it from",
                        n->parts[0].name);
  return dp_bind_fail(b, DIPPER_NAME, n->span, "unknown column `%s`", n->parts[0].name);
}

/* ------------------------------------------------------------------ */
/* the dispatcher                                                      */
/* ------------------------------------------------------------------ */

static dp_expr *bind_subquery(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  const dp_ast_query *q = e->kind == DP_AX_IN_QUERY ? e->u.in_query.query : e->u.subquery.query;
  dp_plan *p = dp_bind_query(b, q, x->sc);
  if (!p) return NULL;
  dp_expr *s = dp_bind_new_expr(b, DP_E_SUBQUERY, NULL, e->span);
  if (!s) return NULL;
  s->u.subquery.plan = p;
  if (e->kind == DP_AX_EXISTS) {
    s->u.subquery.kind = DP_SUBQ_EXISTS;
    s->u.subquery.negated = e->u.subquery.negated;
    s->type = dp_bind_not_null(b, dp_type_of(DP_T_BOOLEAN));
    return s;
  }
  if (p->schema.ncols != 1)
    return dp_bind_fail(b, DIPPER_TYPE, q->span,
                        "this subquery returns %d columns; a subquery used as a value must return "
                        "exactly one",
                        p->schema.ncols);
  if (e->kind == DP_AX_SUBQUERY) {
    s->u.subquery.kind = DP_SUBQ_SCALAR;
    s->type = dp_bind_nullable(b, p->schema.cols[0].type);
    return s;
  }
  dp_expr *arg = dp_bind_expr(x, e->u.in_query.arg);
  if (!arg) return NULL;
  const dp_type *ct = dp_type_common(b->a, arg->type, p->schema.cols[0].type);
  if (!ct)
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "IN (subquery): %s cannot be compared with the subquery's %s",
                        dp_bind_type_str(b, arg->type), dp_bind_type_str(b, p->schema.cols[0].type));
  if (!dp_type_equal(arg->type, ct) && !(arg = dp_bind_coerce(b, arg, ct, "IN (subquery)")))
    return NULL;
  s->u.subquery.kind = DP_SUBQ_IN;
  s->u.subquery.negated = e->u.in_query.negated;
  s->u.subquery.arg = arg;
  s->type = dp_type_of(DP_T_BOOLEAN);
  return s;
}

dp_expr *dp_bind_expr(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  if (dp_bind_out_of_memory(b)) return NULL;
  if (!e) return dp_bind_fail(b, DIPPER_INTERNAL, (dp_span){0, 0, 0, 0}, "missing expression");
  if (++b->depth > DP_BIND_MAX_DEPTH) {
    b->depth--;
    return dp_bind_fail(b, DIPPER_LIMIT, e->span,
                        "expression nested more than %d levels deep; simplify it",
                        DP_BIND_MAX_DEPTH);
  }
  dp_expr *r = NULL;
  switch (e->kind) {
  case DP_AX_LITERAL:
    r = dp_bind_literal(b, e);
    break;
  case DP_AX_INTERVAL:
    r = dp_bind_interval_literal(b, e);
    break;
  case DP_AX_COLUMN:
    r = bind_name(x, &e->u.name);
    break;
  case DP_AX_STAR:
    r = dp_bind_fail(b, DIPPER_SYNTAX, e->span, "* is only allowed in the SELECT list and COUNT(*)");
    break;
  case DP_AX_UNARY:
    r = dp_bind_unary(x, e);
    break;
  case DP_AX_BINARY:
    r = dp_bind_binary(x, e);
    break;
  case DP_AX_BETWEEN:
    r = dp_bind_between(x, e);
    break;
  case DP_AX_IN_LIST:
    r = dp_bind_in_list(x, e);
    break;
  case DP_AX_IN_QUERY:
  case DP_AX_EXISTS:
  case DP_AX_SUBQUERY:
    r = bind_subquery(x, e);
    break;
  case DP_AX_IS:
    r = dp_bind_is(x, e);
    break;
  case DP_AX_LIKE:
    r = dp_bind_like(x, e);
    break;
  case DP_AX_CASE:
    r = dp_bind_case(x, e);
    break;
  case DP_AX_CAST: {
    dp_expr *arg = dp_bind_expr(x, e->u.cast.arg);
    r = arg ? dp_bind_cast(b, arg, e->u.cast.type, e->u.cast.try_, e->span) : NULL;
    break;
  }
  case DP_AX_CALL:
    r = dp_bind_call(x, e);
    break;
  case DP_AX_FIELD: {
    dp_expr *arg = dp_bind_expr(x, e->u.field.arg);
    if (arg) {
      dp_ast_ident part = e->u.field.field;
      dp_ast_name one = {1, &part, e->u.field.field.span};
      r = field_path(x, arg, &one, 0);
      if (r) r->span = e->span;
    }
    break;
  }
  case DP_AX_SUBSCRIPT: {
    dp_expr *args[2] = {dp_bind_expr(x, e->u.subscript.arg), dp_bind_expr(x, e->u.subscript.index)};
    if (args[0] && args[1] && args[0]->type->kind != DP_T_ARRAY && args[0]->type->kind != DP_T_MAP)
      r = dp_bind_fail(b, DIPPER_TYPE, e->span, "[..] reads arrays and maps, not %s",
                       dp_bind_type_str(b, args[0]->type));
    else if (args[0] && args[1]) {
      /* a wrong key or index type is reported at the key */
      r = dp_bind_call_named(b, "element_at", 2, args, e->u.subscript.index->span);
      if (r) r->span = e->span;
    }
    break;
  }
  case DP_AX_EXTRACT: {
    dp_expr *arg = dp_bind_expr(x, e->u.extract.arg);
    const char *u = dp_bind_unit_name(e->u.extract.unit);
    dp_value v = dp_value_string(u, strlen(u));
    v.type = dp_bind_not_null(b, dp_type_of(DP_T_STRING));
    dp_expr *unit = dp_bind_literal_expr(b, v, e->span);
    if (arg && unit) {
      dp_expr *args[2] = {unit, arg};
      r = dp_bind_call_named(b, "extract", 2, args, e->span);
    }
    break;
  }
  case DP_AX_DESCRIPTOR:
    r = dp_bind_fail(b, DIPPER_SYNTAX, e->span,
                     "DESCRIPTOR(..) is only allowed as an argument of a window function in FROM");
    break;
  case DP_AX_CONSTRUCT: {
    int n = e->u.construct.n;
    dp_expr **args = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *args);
    bool ok = args != NULL;
    for (int i = 0; ok && i < n; i++)
      if (!(args[i] = dp_bind_expr(x, e->u.construct.items[i]))) ok = false;
    if (ok && e->u.construct.kind == 'A') ok = dp_bind_unify_n(b, n, args, "ARRAY[..] elements", e->span);
    if (ok)
      r = dp_bind_call_named(b,
                             e->u.construct.kind == 'A' ? "array"
                             : e->u.construct.kind == 'M' ? "map"
                                                          : "row",
                             n, args, e->span);
    break;
  }
  case DP_AX_PARAM:
    r = dp_bind_fail(b, DIPPER_UNSUPPORTED, e->span,
                     "? parameters are not supported yet; write the value in the SQL text");
    break;
  }
  b->depth--;
  return r;
}
