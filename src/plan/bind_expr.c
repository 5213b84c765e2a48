/*
** bind_expr.c — the expression binder: AST expressions to typed dp_expr.
**
** Resolves column names against scopes (qualified, unqualified, correlated,
** nested ROW fields), turns operators into catalog calls with implicit casts
** (numeric literals folded into the wanted type rather than cast), rewrites
** BETWEEN, simple CASE and the IS forms, and collects aggregate and OVER calls
** as marker columns that bind_query.c later points at their plan nodes.
**
** Owns: no state of its own; everything is allocated in the binder's arena.
** Does not own: literals and intervals (bind_literal.c); the FROM-clause
** constructs (window TVFs, DESCRIPTOR: bind_window.c), refused here when
** written elsewhere.
*/
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/suggest.h"
#include "plan/binder_int.h"

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
/* ------------------------------------------------------------------ */

static dp_expr *new_expr(dp_binder *b, dp_expr_kind kind, const dp_type *type, dp_span span) {
  dp_expr *e = dp_arena_calloc(b->a, 1, sizeof *e);
  if (!e) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory binding an expression");
  e->kind = kind;
  e->type = type;
  e->span = span;
  return e;
}

static dp_expr *column_expr(dp_binder *b, int index, int outer, const dp_type *type, dp_span span) {
  dp_expr *e = new_expr(b, DP_E_COLUMN, type, span);
  if (!e) return NULL;
  e->u.column.index = index;
  e->u.column.outer = outer;
  return e;
}

dp_expr *dp_bind_literal_expr(dp_binder *b, dp_value v, dp_span span) {
  dp_expr *e = new_expr(b, DP_E_LITERAL, v.type, span);
  if (!e) return NULL;
  e->u.value = v;
  return e;
}

static const dp_type *nullable_type(dp_binder *b, const dp_type *t) {
  if (!t->not_null) return t;
  const dp_type *r = dp_type_with_nullability(b->a, t, false);
  return r ? r : t;
}

static const char *last_part(const dp_ast_name *n) {
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
  if (*n == *cap) {
    int nc = *cap ? *cap * 2 : 8;
    dp_expr **g = dp_arena_grow(b->a, *out, (size_t)*cap, (size_t)nc, sizeof(dp_expr *));
    if (!g) return;
    *out = g;
    *cap = nc;
  }
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

void dp_bscope_add(dp_binder *b, dp_bscope *s, const char *rel, const char *name,
                   const dp_type *type, int index, dp_expr *expr) {
  if (s->n == s->cap) {
    int nc = s->cap ? s->cap * 2 : 16;
    dp_bcol *g = dp_arena_grow(b->a, s->cols, (size_t)s->cap, (size_t)nc, sizeof *g);
    if (!g) {
      dp_bind_err(b, DIPPER_NOMEM, (dp_span){0, 0, 0, 0}, "out of memory building a scope");
      return;
    }
    s->cols = g;
    s->cap = nc;
  }
  dp_bcol *c = &s->cols[s->n++];
  memset(c, 0, sizeof *c);
  c->rel = rel;
  c->name = name;
  c->type = type;
  c->index = index;
  c->expr = expr;
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
  return column_expr(x->b, c->index, level, c->type, span);
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
    dp_expr *f = new_expr(x->b, DP_E_FIELD, e->type->fields[found].type,
                          dp_span_join(n->parts[0].span, part->span));
    if (!f) return NULL;
    if (!e->type->not_null) f->type = nullable_type(x->b, f->type);
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
  dp_expr *c = new_expr(b, DP_E_CAST, t, span);
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
    dp_expr *c = new_expr(b, DP_E_CAST, nullable_type(b, t), e->span);
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
  dp_expr *c = new_expr(b, DP_E_CAST, e->type->not_null ? dp_bind_not_null(b, t) : nullable_type(b, t),
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
  for (int i = 0; i < nargs; i++) {
    const dp_type *pt = dp_func_param_type(fn, i, nargs, (const dp_type *const *)types);
    own[i] = args[i];
    if (pt && !dp_type_equal(pt, types[i])) {
      own[i] = dp_bind_coerce(b, args[i], pt, fn->name);
      if (!own[i]) return NULL;
    }
  }
  if (!check_unit(b, fn, nargs, args, span)) return NULL;
  dp_expr *c = new_expr(b, DP_E_CALL, rt, span);
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
static bool unify2(dp_binder *b, dp_expr **l, dp_expr **r, const char *what, dp_span span) {
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
  /* The casts to the common type are the catalog's (dp_func_param_type). */
  return true;
}

/* The common type of n expressions, casting each to it. */
static bool unify_n(dp_binder *b, int n, dp_expr **es, const char *what, dp_span span) {
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

static dp_expr *call2(dp_binder *b, const char *name, dp_expr *l, dp_expr *r, dp_span span) {
  if (!l || !r) return NULL;
  dp_expr *args[2] = {l, r};
  return dp_bind_call_named(b, name, 2, args, span);
}

static dp_expr *call1(dp_binder *b, const char *name, dp_expr *arg, dp_span span) {
  if (!arg) return NULL;
  return dp_bind_call_named(b, name, 1, &arg, span);
}

static bool is_comparison(dp_ast_binop op) {
  return op == DP_BOP_EQ || op == DP_BOP_NE || op == DP_BOP_LT || op == DP_BOP_LE ||
         op == DP_BOP_GT || op == DP_BOP_GE;
}

static const char *binop_func(dp_ast_binop op) {
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
  }
  return "";
}

static dp_expr *require_bool(dp_binder *b, dp_expr *e, const char *clause) {
  if (!e) return NULL;
  if (e->type->kind == DP_T_BOOLEAN) return e;
  if (e->type->kind == DP_T_NULL) return dp_bind_coerce(b, e, dp_type_of(DP_T_BOOLEAN), clause);
  return dp_bind_fail(b, DIPPER_TYPE, e->span, "%s needs a BOOLEAN condition, not %s", clause,
                      dp_bind_type_str(b, e->type));
}

dp_expr *dp_bind_cond(dp_bexpr *x, const dp_ast_expr *e) {
  return require_bool(x->b, dp_bind_expr(x, e), x->clause ? x->clause : "the condition");
}

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

static dp_expr *bind_binary(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  dp_ast_binop op = e->u.binary.op;
  dp_expr *l = dp_bind_expr(x, e->u.binary.left);
  dp_expr *r = dp_bind_expr(x, e->u.binary.right);
  if (!l || !r) return NULL;
  if (op == DP_BOP_AND || op == DP_BOP_OR) {
    const char *w = op == DP_BOP_AND ? "AND" : "OR";
    if (!(l = require_bool(b, l, w)) || !(r = require_bool(b, r, w))) return NULL;
  }
  if (is_comparison(op)) {
    static const char *const names[] = {"=", "<>", "<", "<=", ">", ">="};
    const char *what = names[op - DP_BOP_EQ];
    if (!unify2(b, &l, &r, dp_arena_printf(b->a, "comparison %s", what), e->span)) return NULL;
  }
  if (op == DP_BOP_CONCAT && (!dp_type_is_string(l->type) || !dp_type_is_string(r->type)) &&
      l->type->kind != DP_T_NULL && r->type->kind != DP_T_NULL &&
      !(l->type->kind == DP_T_BYTES && r->type->kind == DP_T_BYTES))
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "|| joins strings, not %s and %s; CAST the other operand to STRING",
                        dp_bind_type_str(b, l->type), dp_bind_type_str(b, r->type));
  return call2(b, binop_func(op), l, r, e->span);
}

static dp_expr *bind_unary(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  dp_expr *arg = dp_bind_expr(x, e->u.unary.arg);
  if (!arg) return NULL;
  switch (e->u.unary.op) {
  case DP_UOP_NOT:
    if (!(arg = require_bool(b, arg, "NOT"))) return NULL;
    return call1(b, "not", arg, e->span);
  case DP_UOP_NEG:
    if (arg->kind == DP_E_LITERAL && !arg->u.value.is_null) {
      dp_expr *folded = negate_literal(b, arg, e->span);
      if (folded) return folded;
    }
    return call1(b, "negate", arg, e->span);
  case DP_UOP_PLUS:
    if (!dp_type_is_numeric(arg->type) && !dp_type_is_interval(arg->type))
      return dp_bind_fail(b, DIPPER_TYPE, e->span, "unary + needs a number, not %s",
                          dp_bind_type_str(b, arg->type));
    return arg;
  case DP_UOP_BITNOT:
    return call1(b, "bitnot", arg, e->span);
  }
  return NULL;
}

static dp_expr *bind_between(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  dp_expr *arg = dp_bind_expr(x, e->u.between.arg);
  dp_expr *lo = dp_bind_expr(x, e->u.between.lo);
  dp_expr *hi = dp_bind_expr(x, e->u.between.hi);
  if (!arg || !lo || !hi) return NULL;
  dp_expr *trio[3] = {arg, lo, hi};
  if (!unify_n(b, 3, trio, "BETWEEN", e->span)) return NULL;
  arg = trio[0];
  lo = trio[1];
  hi = trio[2];
  dp_expr *r = call2(b, "and", call2(b, "ge", arg, lo, e->span), call2(b, "le", arg, hi, e->span),
                     e->span);
  if (r && e->u.between.symmetric) {
    dp_expr *swapped = call2(b, "and", call2(b, "ge", arg, hi, e->span),
                             call2(b, "le", arg, lo, e->span), e->span);
    r = call2(b, "or", r, swapped, e->span);
  }
  if (r && e->u.between.negated) r = call1(b, "not", r, e->span);
  return r;
}

static dp_expr *bind_in_list(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  int n = e->u.in_list.n;
  dp_expr **args = dp_arena_calloc(b->a, (size_t)n + 1, sizeof *args);
  if (!args) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  if (!(args[0] = dp_bind_expr(x, e->u.in_list.arg))) ok = false;
  for (int i = 0; i < n; i++)
    if (!(args[i + 1] = dp_bind_expr(x, e->u.in_list.items[i]))) ok = false;
  if (!ok || !unify_n(b, n + 1, args, "IN list", e->span)) return NULL;
  dp_expr *r = dp_bind_call_named(b, "in", n + 1, args, e->span);
  if (r && e->u.in_list.negated) r = call1(b, "not", r, e->span);
  return r;
}

static dp_expr *bind_is(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  dp_expr *arg = dp_bind_expr(x, e->u.is.arg);
  if (!arg) return NULL;
  bool neg = e->u.is.negated;
  switch (e->u.is.what) {
  case DP_IS_NULL:
    return call1(b, neg ? "is_not_null" : "is_null", arg, e->span);
  case DP_IS_UNKNOWN:
    if (!(arg = require_bool(b, arg, "IS UNKNOWN"))) return NULL;
    return call1(b, neg ? "is_not_null" : "is_null", arg, e->span);
  case DP_IS_TRUE:
  case DP_IS_FALSE: {
    if (!(arg = require_bool(b, arg, e->u.is.what == DP_IS_TRUE ? "IS TRUE" : "IS FALSE")))
      return NULL;
    /* IS TRUE never yields NULL, so NOT of it is IS NOT TRUE exactly. */
    dp_expr *r = call1(b, e->u.is.what == DP_IS_TRUE ? "is_true" : "is_false", arg, e->span);
    return neg ? call1(b, "not", r, e->span) : r;
  }
  case DP_IS_DISTINCT_FROM: {
    dp_expr *other = dp_bind_expr(x, e->u.is.other);
    if (!other || !unify2(b, &arg, &other, "IS DISTINCT FROM", e->span)) return NULL;
    return call2(b, neg ? "is_not_distinct_from" : "is_distinct_from", arg, other, e->span);
  }
  }
  return NULL;
}

static dp_expr *bind_like(dp_bexpr *x, const dp_ast_expr *e) {
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
  return r && wrap_not ? call1(b, "not", r, e->span) : r;
}

static dp_expr *bind_case(dp_bexpr *x, const dp_ast_expr *e) {
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
      if (unify2(b, &l, &w, "CASE", e->u.case_.whens[i]->span))
        w = call2(b, "eq", l, w, e->u.case_.whens[i]->span);
      else
        w = NULL;
    } else if (w) {
      w = require_bool(b, w, "CASE WHEN");
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
  if (!unify_n(b, nv, vals, "CASE results", e->span)) return NULL;
  const dp_type *rt = vals[0]->type;
  for (int i = 1; i < nv; i++)
    if (rt->kind == DP_T_NULL) rt = vals[i]->type;
  bool nn = else_ != NULL;
  for (int i = 0; i < nv; i++)
    if (!vals[i]->type->not_null) nn = false;
  rt = nn ? dp_bind_not_null(b, rt) : nullable_type(b, rt);
  dp_expr *c = new_expr(b, DP_E_CASE, rt, e->span);
  if (!c) return NULL;
  c->u.case_.n = n;
  c->u.case_.whens = whens;
  c->u.case_.thens = vals;
  c->u.case_.else_ = else_ ? vals[n] : NULL;
  return c;
}

/* ------------------------------------------------------------------ */
/* function calls                                                      */
/* ------------------------------------------------------------------ */

static bool name_is(const char *name, const char *const *list) {
  for (; *list; list++)
    if (dp_bind_name_eq(name, *list)) return true;
  return false;
}

static dp_expr *bind_agg_call(dp_bexpr *x, const dp_ast_expr *e, const dp_func *fn) {
  dp_binder *b = x->b;
  if (!(x->allow & DP_BX_AGG) && x->clause && strcmp(x->clause, "an aggregate's argument") == 0)
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "aggregates cannot nest: %s(..) is inside another aggregate; compute the "
                        "inner one in a subquery",
                        fn->name);
  if (!(x->allow & DP_BX_AGG))
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "aggregate %s is not allowed in %s; aggregate in the SELECT list or HAVING, "
                        "or filter the groups with HAVING",
                        fn->name, x->clause ? x->clause : "this place");
  dp_bexpr inner = *x;
  inner.allow = 0;
  inner.clause = "an aggregate's argument";
  int nargs = e->u.call.star ? 0 : e->u.call.nargs;
  dp_expr **args = dp_arena_calloc(b->a, (size_t)(nargs ? nargs : 1), sizeof *args);
  if (!args) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = dp_bind_expr(&inner, e->u.call.args[i]))) ok = false;
  dp_expr *filter = NULL;
  if (e->u.call.filter) {
    inner.clause = "FILTER (WHERE ..)";
    if (!(filter = dp_bind_cond(&inner, e->u.call.filter))) ok = false;
  }
  if (!ok) return NULL;
  if (e->u.call.star && !dp_bind_name_eq(fn->name, "count"))
    return dp_bind_fail(b, DIPPER_TYPE, e->span, "only COUNT takes *; write %s(column)", fn->name);
  /* Type inference through a throwaway call, which also inserts implicit casts. */
  dp_expr *typed = dp_bind_call_fn(b, fn, nargs, args, e->span);
  if (!typed) return NULL;
  dp_agg_call call;
  memset(&call, 0, sizeof call);
  call.fn = fn;
  call.nargs = nargs;
  call.args = typed->u.call.args;
  call.distinct = e->u.call.distinct;
  call.filter = filter;
  call.type = typed->type;
  call.span = e->span;
  for (int k = 0; k < x->naggs; k++) {
    dp_agg_call *o = &x->aggs[k];
    if (o->fn != fn || o->nargs != nargs || o->distinct != call.distinct) continue;
    bool same = (o->filter == NULL) == (filter == NULL) && (!filter || dp_bexpr_same(o->filter, filter));
    for (int i = 0; same && i < nargs; i++) same = dp_bexpr_same(o->args[i], call.args[i]);
    if (same) return column_expr(b, k, DP_MARK_AGG, o->type, e->span);
  }
  if (x->naggs == x->capaggs) {
    int nc = x->capaggs ? x->capaggs * 2 : 8;
    dp_agg_call *g = dp_arena_grow(b->a, x->aggs, (size_t)x->capaggs, (size_t)nc, sizeof *g);
    if (!g) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
    x->aggs = g;
    x->capaggs = nc;
  }
  x->aggs[x->naggs] = call;
  return column_expr(b, x->naggs++, DP_MARK_AGG, call.type, e->span);
}

static bool bind_frame_bound(dp_bexpr *x, const dp_ast_bound *bd, bool rows, int64_t *out,
                             dp_span span) {
  dp_binder *b = x->b;
  switch (bd->kind) {
  case DP_BOUND_UNBOUNDED_PRECEDING:
    *out = -1;
    return true;
  case DP_BOUND_CURRENT_ROW:
    *out = 0;
    return true;
  case DP_BOUND_PRECEDING:
    break;
  default:
    dp_bind_err(b, DIPPER_UNSUPPORTED, span,
                "OVER frames ending after the current row (FOLLOWING) cannot be computed on a "
                "stream; end the frame at CURRENT ROW");
    return false;
  }
  const dp_ast_expr *o = bd->offset;
  if (rows) {
    if (!o || o->kind != DP_AX_LITERAL || o->u.lit.kind != DP_LIT_INTEGER) {
      dp_bind_err(b, DIPPER_TYPE, o ? o->span : span,
                  "ROWS n PRECEDING needs a non-negative integer constant n");
      return false;
    }
    *out = strtoll(o->u.lit.text, NULL, 10);
    return true;
  }
  if (o && (o->kind == DP_AX_INTERVAL || (o->kind == DP_AX_LITERAL && o->u.lit.kind == DP_LIT_STRING))) {
    int rc = dp_bind_interval(b->d, o, out);
    if (rc) {
      if (!b->first_error) b->first_error = rc;
      return false;
    }
    return true;
  }
  if (o && o->kind == DP_AX_LITERAL && o->u.lit.kind == DP_LIT_INTEGER) {
    *out = strtoll(o->u.lit.text, NULL, 10);
    return true;
  }
  dp_bind_err(b, DIPPER_TYPE, o ? o->span : span,
              "RANGE .. PRECEDING needs a constant: an interval such as INTERVAL '1' HOUR, or a number");
  return false;
}

static dp_expr *bind_over_call(dp_bexpr *x, const dp_ast_expr *e, const dp_func *fn) {
  dp_binder *b = x->b;
  const dp_ast_window *w = e->u.call.over;
  if (!(x->allow & DP_BX_OVER))
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "%s(..) OVER (..) is not allowed in %s; compute it in the SELECT list of "
                        "a subquery and filter on its alias outside",
                        fn->name, x->clause ? x->clause : "this place");
  if (w->ref_name) {
    /* OVER w, or OVER (w ORDER BY ..): the named window, refined by what is written inline */
    const dp_ast_window *named = NULL;
    for (int i = 0; i < x->nwindows; i++)
      if (dp_bind_name_eq(x->windows[i].name.name, w->ref_name)) named = x->windows[i].window;
    if (!named) {
      const char **names = dp_arena_calloc(b->a, (size_t)(x->nwindows ? x->nwindows : 1), sizeof *names);
      for (int i = 0; names && i < x->nwindows; i++) names[i] = x->windows[i].name.name;
      const char *best = names ? dp_closest_of(w->ref_name, names, x->nwindows) : NULL;
      return dp_bind_fail(b, DIPPER_NAME, w->span, "unknown window `%s`%s%s%s; define it with WINDOW %s AS (...)",
                          w->ref_name, best ? "; did you mean `" : "", best ? best : "", best ? "`" : "",
                          w->ref_name);
    }
    dp_ast_window *merged = dp_arena_alloc(b->a, sizeof *merged);
    if (!merged) return NULL;
    *merged = *named;
    if (w->npartition) {
      merged->npartition = w->npartition;
      merged->partition = w->partition;
    }
    if (w->norder) {
      merged->norder = w->norder;
      merged->order = w->order;
    }
    if (w->has_frame) {
      merged->has_frame = true;
      merged->rows = w->rows;
      merged->start = w->start;
      merged->end = w->end;
    }
    merged->ref_name = NULL;
    merged->span = w->span;
    w = merged;
  }
  dp_bexpr inner = *x;
  inner.allow = x->allow & DP_BX_AGG; /* SUM(COUNT(*)) OVER (..) is valid with GROUP BY */
  inner.clause = "an OVER call";
  dp_bover ov;
  memset(&ov, 0, sizeof ov);
  int nargs = e->u.call.star ? 0 : e->u.call.nargs;
  dp_expr **args = dp_arena_calloc(b->a, (size_t)(nargs ? nargs : 1), sizeof *args);
  if (!args) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = dp_bind_expr(&inner, e->u.call.args[i]))) ok = false;
  ov.npartition = w->npartition;
  ov.partition = dp_arena_calloc(b->a, (size_t)(w->npartition ? w->npartition : 1), sizeof(dp_expr *));
  ov.norder = w->norder;
  ov.order = dp_arena_calloc(b->a, (size_t)(w->norder ? w->norder : 1), sizeof(dp_sort_key));
  if (!ov.partition || !ov.order) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  inner.clause = "PARTITION BY";
  for (int i = 0; i < w->npartition; i++)
    if (!(ov.partition[i] = dp_bind_expr(&inner, w->partition[i]))) ok = false;
  inner.clause = "ORDER BY of OVER";
  for (int i = 0; i < w->norder; i++) {
    if (!(ov.order[i].expr = dp_bind_expr(&inner, w->order[i].expr))) ok = false;
    ov.order[i].desc = w->order[i].desc;
    ov.order[i].nulls_first = w->order[i].nulls ? w->order[i].nulls == 1 : !w->order[i].desc;
  }
  if (e->u.call.filter) {
    inner.clause = "FILTER (WHERE ..)";
    if (!(ov.call.filter = dp_bind_cond(&inner, e->u.call.filter))) ok = false;
  }
  /* aggregates inside the OVER call (SUM(COUNT(*)) OVER ..) belong to the query */
  x->aggs = inner.aggs;
  x->naggs = inner.naggs;
  x->capaggs = inner.capaggs;
  if (!ok) return NULL;
  if (fn->kind == DP_FN_WINDOW && w->norder == 0)
    return dp_bind_fail(b, DIPPER_TYPE, w->span,
                        "%s needs ORDER BY in its OVER clause: OVER (PARTITION BY .. ORDER BY ..)",
                        fn->name);
  if (w->has_frame && !w->rows && w->start.kind == DP_BOUND_PRECEDING && w->start.offset &&
      w->norder == 1 && ov.order[0].expr) {
    const dp_ast_expr *off = w->start.offset;
    bool interval = off->kind == DP_AX_INTERVAL ||
                    (off->kind == DP_AX_LITERAL && off->u.lit.kind == DP_LIT_STRING);
    bool time_key = dp_type_is_temporal(ov.order[0].expr->type);
    if (time_key && !interval)
      return dp_bind_fail(b, DIPPER_TYPE, off->span,
                          "RANGE over a %s ORDER BY key needs an INTERVAL offset, e.g. RANGE "
                          "BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW",
                          dp_bind_type_str(b, ov.order[0].expr->type));
    if (!time_key && interval)
      return dp_bind_fail(b, DIPPER_TYPE, off->span,
                          "an INTERVAL offset needs a time ORDER BY key, not %s; use ROWS n PRECEDING",
                          dp_bind_type_str(b, ov.order[0].expr->type));
  }
  if (w->has_frame && !w->rows && w->start.kind == DP_BOUND_PRECEDING && w->norder != 1)
    return dp_bind_fail(b, DIPPER_TYPE, w->span,
                        "RANGE .. PRECEDING needs exactly one ORDER BY key in the OVER clause");
  ov.has_frame = w->has_frame;
  ov.rows = w->rows;
  if (w->has_frame) {
    if (!bind_frame_bound(x, &w->start, w->rows, &ov.lower, w->span) ||
        !bind_frame_bound(x, &w->end, w->rows, &ov.upper, w->span))
      return NULL;
    if (w->end.kind == DP_BOUND_UNBOUNDED_PRECEDING)
      return dp_bind_fail(b, DIPPER_TYPE, w->span, "a frame cannot end at UNBOUNDED PRECEDING");
  } else {
    /* SQL's default frame: RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW with ORDER BY. */
    ov.rows = false;
    ov.lower = -1;
    ov.upper = 0;
  }
  dp_expr *typed = dp_bind_call_fn(b, fn, nargs, args, e->span);
  if (!typed) return NULL;
  ov.call.fn = fn;
  ov.call.nargs = nargs;
  ov.call.args = typed->u.call.args;
  ov.call.distinct = e->u.call.distinct;
  ov.call.type = typed->type;
  ov.call.span = e->span;
  ov.span = w->span;
  ov.out_col = -1;
  if (x->novers == x->capovers) {
    int nc = x->capovers ? x->capovers * 2 : 4;
    dp_bover *g = dp_arena_grow(b->a, x->overs, (size_t)x->capovers, (size_t)nc, sizeof *g);
    if (!g) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
    x->overs = g;
    x->capovers = nc;
  }
  x->overs[x->novers] = ov;
  return column_expr(b, x->novers++, DP_MARK_OVER, ov.call.type, e->span);
}

/* TUMBLE_START(ts, size) and friends must name the window of GROUP BY TUMBLE(ts, size). */
static bool legacy_args_match(dp_bexpr *x, const dp_ast_expr *e, const char *name) {
  dp_binder *b = x->b;
  const dp_window_spec *w = x->legacy;
  dp_window_kind kind = w->kind;
  const char *family = kind == DP_WIN_TUMBLE ? "tumble_" : kind == DP_WIN_HOP ? "hop_" : "session_";
  bool kind_ok = true;
  for (size_t i = 0; family[i]; i++)
    if (tolower((unsigned char)name[i]) != family[i]) {
      kind_ok = false;
      break;
    }
  int want = kind == DP_WIN_HOP ? 3 : 2;
  bool ok = kind_ok && e->u.call.nargs == want;
  if (ok) {
    int64_t v1 = 0, v2 = 0;
    /* a malformed interval here is reported below, in terms of the window */
    dp_diags scratch;
    dp_diags_init(&scratch, b->a, NULL, NULL, 0);
    if (dp_bind_interval(&scratch, e->u.call.args[1], &v1) != DIPPER_OK ||
        (want == 3 && dp_bind_interval(&scratch, e->u.call.args[2], &v2) != DIPPER_OK)) {
      ok = false;
    } else if (kind == DP_WIN_TUMBLE) {
      ok = v1 == w->size;
    } else if (kind == DP_WIN_HOP) {
      ok = v1 == w->slide && v2 == w->size;
    } else {
      ok = v1 == w->gap;
    }
  }
  if (!ok)
    dp_bind_err(b, DIPPER_TYPE, e->span,
                "%s(..) must repeat the time column and intervals of the GROUP BY window",
                name);
  return ok;
}

static dp_expr *bind_call(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  const char *name = last_part(&e->u.call.name);
  static const char *const legacy_start[] = {"tumble_start", "hop_start", "session_start", NULL};
  static const char *const legacy_end[] = {"tumble_end", "hop_end", "session_end", NULL};
  static const char *const legacy_time[] = {"tumble_rowtime", "hop_rowtime", "session_rowtime",
                                            "tumble_proctime", "hop_proctime", "session_proctime", NULL};
  static const char *const group_windows[] = {"tumble", "hop", "session", "cumulate", "window",
                                              "session_window", NULL};
  bool is_start = name_is(name, legacy_start), is_end = name_is(name, legacy_end),
       is_time = name_is(name, legacy_time);
  if (is_start || is_end || is_time) {
    int col = is_start ? x->win_start : is_end ? x->win_end : x->win_time;
    if (col < 0 || !x->sc)
      return dp_bind_fail(b, DIPPER_TYPE, e->span,
                          "%s(..) is only valid with GROUP BY %.*s(..) of the same arguments", name,
                          (int)(strchr(name, '_') ? (size_t)(strchr(name, '_') - name) : strlen(name)),
                          name);
    if (x->legacy && !legacy_args_match(x, e, name)) return NULL;
    if (is_time) x->used_rowtime = true;
    for (int i = 0; i < x->sc->n; i++)
      if (x->sc->cols[i].index == col && !x->sc->cols[i].expr)
        return column_expr(b, col, 0, x->sc->cols[i].type, e->span);
    return dp_bind_fail(b, DIPPER_INTERNAL, e->span, "window column of %s not in scope", name);
  }
  if (name_is(name, group_windows) && !e->u.call.over)
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "%s(..) is a window: use it in FROM as TABLE(%s(TABLE t, DESCRIPTOR(ts), "
                        "..)) or in GROUP BY, not in %s",
                        name, name, x->clause ? x->clause : "an expression");
  const dp_func *fn = dp_func_lookup(name);
  if (!fn) {
    const char *best = dp_func_suggest(name);
    if (best)
      return dp_bind_fail(b, DIPPER_NAME, e->u.call.name.span,
                          "unknown function `%s`; did you mean `%s`?", name, best);
    return dp_bind_fail(b, DIPPER_NAME, e->u.call.name.span, "unknown function `%s`", name);
  }
  if (e->u.call.over) {
    if (fn->kind == DP_FN_SCALAR)
      return dp_bind_fail(b, DIPPER_TYPE, e->span,
                          "%s is not an aggregate or window function, so it cannot take OVER",
                          fn->name);
    return bind_over_call(x, e, fn);
  }
  if (fn->kind == DP_FN_WINDOW)
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "%s needs an OVER clause: %s() OVER (PARTITION BY .. ORDER BY ..)", fn->name,
                        fn->name);
  if (fn->kind == DP_FN_AGGREGATE) return bind_agg_call(x, e, fn);
  if (e->u.call.distinct || e->u.call.filter || e->u.call.star)
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "%s is not an aggregate: DISTINCT, FILTER and * apply to aggregates only",
                        fn->name);
  int nargs = e->u.call.nargs;
  dp_expr **args = dp_arena_calloc(b->a, (size_t)(nargs ? nargs : 1), sizeof *args);
  if (!args) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  for (int i = 0; i < nargs; i++) {
    if (e->u.call.table_arg && e->u.call.table_arg[i])
      return dp_bind_fail(b, DIPPER_TYPE, e->u.call.args[i]->span,
                          "TABLE arguments are for window functions in FROM only");
    if (!(args[i] = dp_bind_expr(x, e->u.call.args[i]))) ok = false;
  }
  if (!ok) return NULL;
  /* Functions taking a duration accept Spark's quoted form: coalesce, if, ... are
     left alone; arguments are typed by the catalog. */
  if (fn->kind == DP_FN_SCALAR && (dp_bind_name_eq(fn->name, "coalesce") ||
                                   dp_bind_name_eq(fn->name, "greatest") ||
                                   dp_bind_name_eq(fn->name, "least")) &&
      !unify_n(b, nargs, args, fn->name, e->span))
    return NULL;
  return dp_bind_call_fn(b, fn, nargs, args, e->span);
}

/* ------------------------------------------------------------------ */
/* the dispatcher                                                      */
/* ------------------------------------------------------------------ */

static dp_expr *bind_subquery(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  const dp_ast_query *q = e->kind == DP_AX_IN_QUERY ? e->u.in_query.query : e->u.subquery.query;
  dp_plan *p = dp_bind_query(b, q, x->sc);
  if (!p) return NULL;
  dp_expr *s = new_expr(b, DP_E_SUBQUERY, NULL, e->span);
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
    s->type = nullable_type(b, p->schema.cols[0].type);
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
    r = bind_unary(x, e);
    break;
  case DP_AX_BINARY:
    r = bind_binary(x, e);
    break;
  case DP_AX_BETWEEN:
    r = bind_between(x, e);
    break;
  case DP_AX_IN_LIST:
    r = bind_in_list(x, e);
    break;
  case DP_AX_IN_QUERY:
  case DP_AX_EXISTS:
  case DP_AX_SUBQUERY:
    r = bind_subquery(x, e);
    break;
  case DP_AX_IS:
    r = bind_is(x, e);
    break;
  case DP_AX_LIKE:
    r = bind_like(x, e);
    break;
  case DP_AX_CASE:
    r = bind_case(x, e);
    break;
  case DP_AX_CAST: {
    dp_expr *arg = dp_bind_expr(x, e->u.cast.arg);
    r = arg ? dp_bind_cast(b, arg, e->u.cast.type, e->u.cast.try_, e->span) : NULL;
    break;
  }
  case DP_AX_CALL:
    r = bind_call(x, e);
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
    if (ok && e->u.construct.kind == 'A') ok = unify_n(b, n, args, "ARRAY[..] elements", e->span);
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
