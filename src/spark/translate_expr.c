/*
** translate_expr.c — bound expressions as Spark Connect expressions, and the
** translation context's small builders (translate_int.h).
**
** Owns: literals of every type, column references by internal name, casts,
** CASE (Spark's `when`), ROW field access (UnresolvedExtractValue), calls
** through the function mapping table functions_map.def (with the rewrites
** that keep Spark's answer equal to the embedded engine's), aggregate calls
** with DISTINCT and FILTER, and subqueries (SubqueryExpression referring to
** a relation of a WithRelations).  Does not own: relations (translate.c),
** types (translate_type.c).
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "spark/translate_int.h"

/* ---- the function mapping table ---- */

typedef enum map_how { SAME, CAST, CUSTOM, AGG, WIN, REFUSE } map_how;

typedef struct fn_map {
  const char *spark;  /* NULL for REFUSE */
  map_how how;
  const char *why;    /* REFUSE: what to write instead */
  bool present;
} fn_map;

#define DP_SPARK_FN_(ID, name, how, why) [DP_F_##ID] = {name, how, why, true},
static const fn_map fn_maps[DP_F_COUNT_] = {
#include "spark/functions_map.def"
};
#undef DP_SPARK_FN_

/* Every dipper function has a line (a missing one is a compile error here). */
#define DP_SPARK_FN_(ID, name, how, why) +1
enum { MAPPED_ = 0
#include "spark/functions_map.def"
};
#undef DP_SPARK_FN_
_Static_assert((int)MAPPED_ == (int)DP_F_COUNT_, "functions_map.def must have one line per function of functions.def");

/* ---- context ---- */

void dp_sx_init(dp_sx *x, dp_spark_ctx *c, const dp_query_plan *q) {
  memset(x, 0, sizeof *x);
  x->c = c;
  x->q = q;
  x->next_plan_id = 1;
}

int dp_sx_nomem(dp_sx *x) {
  x->rc = DIPPER_NOMEM;
  return DIPPER_NOMEM;
}

void *dp_sx_alloc(dp_sx *x, size_t n) {
  void *p = dp_arena_calloc(x->c->arena, 1, n ? n : 1);
  if (!p) dp_sx_nomem(x);
  return p;
}

char *dp_sx_strdup(dp_sx *x, const char *s) {
  char *p = dp_arena_strdup(x->c->arena, s ? s : "");
  if (!p) dp_sx_nomem(x);
  return p;
}

char *dp_sx_printf(dp_sx *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = dp_arena_vprintf(x->c->arena, fmt, ap);
  va_end(ap);
  if (!p) dp_sx_nomem(x);
  return p;
}

int dp_sx_refuse(dp_sx *x, dp_span span, const char *fmt, ...) {
  if (x->rc == DIPPER_OK) x->rc = DIPPER_UNSUPPORTED;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dp_diags *d = x->c->diags;
  if (!d) return DIPPER_UNSUPPORTED;
  /* one refusal per construct: the streaming rules may have named it already */
  for (int i = 0; i < d->count; i++)
    if (span.line && d->items[i].span.off == span.off && d->items[i].span.len == span.len)
      return DIPPER_UNSUPPORTED;
  dp_error(d, DIPPER_UNSUPPORTED, span, "on Spark: %s", msg);
  return DIPPER_UNSUPPORTED;
}

int dp_sx_relno(dp_sx *x) { return x->next_rel++; }

const char *dp_sx_colname(dp_sx *x, int relno, int i) { return dp_sx_printf(x, "_c%d_%d", relno, i); }

const char **dp_sx_colnames(dp_sx *x, int relno, int n) {
  const char **names = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *names);
  if (!names) return NULL;
  for (int i = 0; i < n; i++)
    if (!(names[i] = dp_sx_colname(x, relno, i))) return NULL;
  return names;
}

const char *dp_sx_interval_text(dp_sx *x, int64_t us) {
  if (us % DP_MICROS_PER_SECOND == 0)
    return dp_sx_printf(x, "%lld seconds", (long long)(us / DP_MICROS_PER_SECOND));
  if (us % 1000 == 0) return dp_sx_printf(x, "%lld milliseconds", (long long)(us / 1000));
  return dp_sx_printf(x, "%lld microseconds", (long long)us);
}

/* ---- expression builders ---- */

static Spark__Connect__Expression *new_expr(dp_sx *x, Spark__Connect__Expression__ExprTypeCase k) {
  Spark__Connect__Expression *e;
  if (!DP_SX_NEW(x, e, spark__connect__expression__init)) return NULL;
  e->expr_type_case = k;
  return e;
}

Spark__Connect__Expression *dp_sx_col(dp_sx *x, const char *name) {
  Spark__Connect__Expression *e = new_expr(x, SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE);
  Spark__Connect__Expression__UnresolvedAttribute *a;
  if (!e || !DP_SX_NEW(x, a, spark__connect__expression__unresolved_attribute__init)) return NULL;
  /* internal names need no quoting: "_c<r>_<i>" */
  if (!(a->unparsed_identifier = dp_sx_strdup(x, name))) return NULL;
  e->unresolved_attribute = a;
  return e;
}

Spark__Connect__Expression *dp_sx_alias(dp_sx *x, Spark__Connect__Expression *e, const char *name) {
  if (!e) return NULL;
  Spark__Connect__Expression *r = new_expr(x, SPARK__CONNECT__EXPRESSION__EXPR_TYPE_ALIAS);
  Spark__Connect__Expression__Alias *a;
  if (!r || !DP_SX_NEW(x, a, spark__connect__expression__alias__init)) return NULL;
  a->expr = e;
  a->n_name = 1;
  if (!(a->name = dp_sx_alloc(x, sizeof *a->name)) || !(a->name[0] = dp_sx_strdup(x, name)))
    return NULL;
  r->alias = a;
  return r;
}

Spark__Connect__Expression *dp_sx_fn(dp_sx *x, const char *name, int nargs,
                                     Spark__Connect__Expression *const *args) {
  for (int i = 0; i < nargs; i++)
    if (!args[i]) return NULL;
  Spark__Connect__Expression *e = new_expr(x, SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION);
  Spark__Connect__Expression__UnresolvedFunction *f;
  if (!e || !DP_SX_NEW(x, f, spark__connect__expression__unresolved_function__init)) return NULL;
  if (!(f->function_name = dp_sx_strdup(x, name))) return NULL;
  f->n_arguments = (size_t)nargs;
  if (nargs > 0) {
    if (!(f->arguments = dp_sx_alloc(x, (size_t)nargs * sizeof *f->arguments))) return NULL;
    memcpy(f->arguments, args, (size_t)nargs * sizeof *f->arguments);
  }
  e->unresolved_function = f;
  return e;
}

Spark__Connect__Expression *dp_sx_fn1(dp_sx *x, const char *name, Spark__Connect__Expression *a) {
  return dp_sx_fn(x, name, 1, &a);
}
Spark__Connect__Expression *dp_sx_fn2(dp_sx *x, const char *name, Spark__Connect__Expression *a,
                                      Spark__Connect__Expression *b) {
  Spark__Connect__Expression *v[2] = {a, b};
  return dp_sx_fn(x, name, 2, v);
}
Spark__Connect__Expression *dp_sx_fn3(dp_sx *x, const char *name, Spark__Connect__Expression *a,
                                      Spark__Connect__Expression *b, Spark__Connect__Expression *c) {
  Spark__Connect__Expression *v[3] = {a, b, c};
  return dp_sx_fn(x, name, 3, v);
}

static Spark__Connect__Expression__Literal *new_lit(dp_sx *x, Spark__Connect__Expression **out) {
  Spark__Connect__Expression *e = new_expr(x, SPARK__CONNECT__EXPRESSION__EXPR_TYPE_LITERAL);
  Spark__Connect__Expression__Literal *l;
  if (!e || !DP_SX_NEW(x, l, spark__connect__expression__literal__init)) return NULL;
  e->literal = l;
  *out = e;
  return l;
}

Spark__Connect__Expression *dp_sx_lit_string(dp_sx *x, const char *s) {
  Spark__Connect__Expression *e = NULL;
  Spark__Connect__Expression__Literal *l = new_lit(x, &e);
  if (!l || !(l->string = dp_sx_strdup(x, s))) return NULL;
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRING;
  return e;
}

Spark__Connect__Expression *dp_sx_lit_int(dp_sx *x, int32_t v) {
  Spark__Connect__Expression *e = NULL;
  Spark__Connect__Expression__Literal *l = new_lit(x, &e);
  if (!l) return NULL;
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_INTEGER;
  l->integer = v;
  return e;
}

Spark__Connect__Expression *dp_sx_lit_long(dp_sx *x, int64_t v) {
  Spark__Connect__Expression *e = NULL;
  Spark__Connect__Expression__Literal *l = new_lit(x, &e);
  if (!l) return NULL;
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_LONG;
  l->long_ = v;
  return e;
}

Spark__Connect__Expression *dp_sx_lit_bool(dp_sx *x, bool v) {
  Spark__Connect__Expression *e = NULL;
  Spark__Connect__Expression__Literal *l = new_lit(x, &e);
  if (!l) return NULL;
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BOOLEAN;
  l->boolean = v;
  return e;
}

Spark__Connect__Expression *dp_sx_lit_null(dp_sx *x, const dp_type *t, dp_span span) {
  Spark__Connect__Expression *e = NULL;
  Spark__Connect__Expression__Literal *l = new_lit(x, &e);
  if (!l || !(l->null = dp_sx_type(x, t, span))) return NULL;
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_NULL;
  return e;
}

Spark__Connect__Expression *dp_sx_cast(dp_sx *x, Spark__Connect__Expression *e, const dp_type *t,
                                       bool try_, dp_span span) {
  if (!e) return NULL;
  Spark__Connect__Expression *r = new_expr(x, SPARK__CONNECT__EXPRESSION__EXPR_TYPE_CAST);
  Spark__Connect__Expression__Cast *c;
  if (!r || !DP_SX_NEW(x, c, spark__connect__expression__cast__init)) return NULL;
  c->expr = e;
  c->cast_to_type_case = SPARK__CONNECT__EXPRESSION__CAST__CAST_TO_TYPE_TYPE;
  if (!(c->type = dp_sx_type(x, t, span))) return NULL;
  if (try_) c->eval_mode = SPARK__CONNECT__EXPRESSION__CAST__EVAL_MODE__EVAL_MODE_TRY;
  r->cast = c;
  return r;
}

Spark__Connect__Expression__SortOrder *dp_sx_sort_order(dp_sx *x, Spark__Connect__Expression *e,
                                                        bool desc, bool nulls_first) {
  Spark__Connect__Expression__SortOrder *o;
  if (!e || !DP_SX_NEW(x, o, spark__connect__expression__sort_order__init)) return NULL;
  o->child = e;
  o->direction = desc ? SPARK__CONNECT__EXPRESSION__SORT_ORDER__SORT_DIRECTION__SORT_DIRECTION_DESCENDING
                      : SPARK__CONNECT__EXPRESSION__SORT_ORDER__SORT_DIRECTION__SORT_DIRECTION_ASCENDING;
  o->null_ordering = nulls_first ? SPARK__CONNECT__EXPRESSION__SORT_ORDER__NULL_ORDERING__SORT_NULLS_FIRST
                                 : SPARK__CONNECT__EXPRESSION__SORT_ORDER__NULL_ORDERING__SORT_NULLS_LAST;
  return o;
}

/* ---- literals ---- */

/* The unscaled 128-bit integer v with `scale` digits after the point. */
static char *decimal_text(dp_sx *x, dp_i128 v, int scale) {
  char digits[48];
  int n = 0;
  bool neg = v < 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
  do {
    digits[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u && n < 40);
  while (n <= scale) digits[n++] = '0';
  char out[64];
  int k = 0;
  if (neg) out[k++] = '-';
  for (int i = n - 1; i >= 0; i--) {
    out[k++] = digits[i];
    if (i == scale && scale > 0) out[k++] = '.';
  }
  out[k] = '\0';
  return dp_sx_strdup(x, out);
}

Spark__Connect__Expression *dp_sx_literal(dp_sx *x, const dp_value *v, dp_span span) {
  const dp_type *t = v->type;
  if (v->is_null || t->kind == DP_T_NULL) return dp_sx_lit_null(x, t, span);
  Spark__Connect__Expression *e = NULL;
  Spark__Connect__Expression__Literal *l;
  switch (t->kind) {
  case DP_T_ARRAY:
  case DP_T_MAP:
  case DP_T_ROW: {
    /* Built with the constructor functions and cast to the exact type: an
       empty array keeps its element type, a ROW its field names. */
    int n = t->kind == DP_T_MAP ? 2 * v->u.list.n : v->u.list.n;
    Spark__Connect__Expression **items = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *items);
    if (!items) return NULL;
    for (int i = 0; i < v->u.list.n; i++) {
      if (t->kind == DP_T_MAP) {
        items[2 * i] = dp_sx_literal(x, &v->u.list.items[i], span);
        items[2 * i + 1] = dp_sx_literal(x, &v->u.list.items[v->u.list.n + i], span);
      } else {
        items[i] = dp_sx_literal(x, &v->u.list.items[i], span);
      }
    }
    const char *fn = t->kind == DP_T_ARRAY ? "array" : t->kind == DP_T_MAP ? "map" : "struct";
    return dp_sx_cast(x, dp_sx_fn(x, fn, n, items), t, false, span);
  }
  case DP_T_TIME:
    (void)dp_sx_type(x, t, span); /* refuses it */
    return NULL;
  default: break;
  }
  if (!(l = new_lit(x, &e))) return NULL;
  switch (t->kind) {
  case DP_T_BOOLEAN:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BOOLEAN;
    l->boolean = v->u.b;
    break;
  case DP_T_TINYINT:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BYTE;
    l->byte = (int32_t)v->u.i;
    break;
  case DP_T_SMALLINT:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_SHORT;
    l->short_ = (int32_t)v->u.i;
    break;
  case DP_T_INT:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_INTEGER;
    l->integer = (int32_t)v->u.i;
    break;
  case DP_T_BIGINT:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_LONG;
    l->long_ = v->u.i;
    break;
  case DP_T_FLOAT:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_FLOAT;
    l->float_ = (float)v->u.d;
    break;
  case DP_T_DOUBLE:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DOUBLE;
    l->double_ = v->u.d;
    break;
  case DP_T_DECIMAL: {
    Spark__Connect__Expression__Literal__Decimal *d;
    if (!DP_SX_NEW(x, d, spark__connect__expression__literal__decimal__init)) return NULL;
    if (!(d->value = decimal_text(x, v->u.dec, t->scale))) return NULL;
    d->_precision_case = SPARK__CONNECT__EXPRESSION__LITERAL__DECIMAL___PRECISION_PRECISION;
    d->precision = t->precision;
    d->_scale_case = SPARK__CONNECT__EXPRESSION__LITERAL__DECIMAL___SCALE_SCALE;
    d->scale = t->scale;
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DECIMAL;
    l->decimal = d;
    break;
  }
  case DP_T_STRING:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRING;
    if (!(l->string = dp_arena_strndup(x->c->arena, v->u.s.ptr ? v->u.s.ptr : "", v->u.s.len)))
      return dp_sx_nomem(x), NULL;
    break;
  case DP_T_BYTES: {
    uint8_t *p = dp_sx_alloc(x, v->u.s.len);
    if (!p) return NULL;
    if (v->u.s.len) memcpy(p, v->u.s.ptr, v->u.s.len);
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BINARY;
    l->binary.data = p;
    l->binary.len = v->u.s.len;
    break;
  }
  case DP_T_DATE:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DATE;
    l->date = (int32_t)v->u.i;
    break;
  case DP_T_TIMESTAMP:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_TIMESTAMP_NTZ;
    l->timestamp_ntz = v->u.i;
    break;
  case DP_T_TIMESTAMP_LTZ:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_TIMESTAMP;
    l->timestamp = v->u.i;
    break;
  case DP_T_INTERVAL_DT:
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DAY_TIME_INTERVAL;
    l->day_time_interval = v->u.i;
    break;
  case DP_T_INTERVAL_YM:
    if (v->u.i < INT32_MIN || v->u.i > INT32_MAX) {
      dp_sx_refuse(x, span, "the interval of %lld months is beyond Spark's range", (long long)v->u.i);
      return NULL;
    }
    l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_YEAR_MONTH_INTERVAL;
    l->year_month_interval = (int32_t)v->u.i;
    break;
  default:
    dp_sx_refuse(x, span, "a literal of this type has no Spark form");
    return NULL;
  }
  return e;
}

/* ---- calls ---- */

static bool lit_string(const dp_expr *e, const char **s) {
  if (e->kind != DP_E_LITERAL || e->u.value.is_null || e->u.value.type->kind != DP_T_STRING) return false;
  *s = e->u.value.u.s.ptr;
  return true;
}

/* The value of a literal integer argument, or false. */
static bool lit_int(const dp_expr *e, int64_t *v) {
  if (e->kind != DP_E_LITERAL || e->u.value.is_null || !dp_type_is_integer(e->u.value.type)) return false;
  *v = e->u.value.u.i;
  return true;
}

/* A plain string as a Java regular expression matching exactly it. */
static Spark__Connect__Expression *quote_regex(dp_sx *x, Spark__Connect__Expression *s_expr,
                                               const dp_expr *src) {
  const char *s;
  if (lit_string(src, &s)) {
    size_t n = src->u.value.u.s.len;
    char *q = dp_sx_alloc(x, 2 * n + 1);
    if (!q) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      if (strchr("\\^$.|?*+()[]{}", s[i])) q[k++] = '\\';
      q[k++] = s[i];
    }
    return dp_sx_lit_string(x, q);
  }
  /* \Q..\E quotes all but a "\E" inside, which plain delimiters do not hold */
  Spark__Connect__Expression *v[3] = {dp_sx_lit_string(x, "\\Q"), s_expr, dp_sx_lit_string(x, "\\E")};
  return dp_sx_fn(x, "concat", 3, v);
}

static Spark__Connect__Expression *when1(dp_sx *x, Spark__Connect__Expression *cond,
                                         Spark__Connect__Expression *then) {
  return dp_sx_fn2(x, "when", cond, then);
}

/* An interval literal of one `unit` ('DAY', 'MONTH', ...), or NULL when the unit has none. */
static Spark__Connect__Expression *unit_interval(dp_sx *x, const char *unit, dp_span span) {
  static const struct { const char *name; int64_t us; int months; } units[] = {
      {"MICROSECOND", 1, 0}, {"MILLISECOND", 1000, 0}, {"SECOND", DP_MICROS_PER_SECOND, 0},
      {"MINUTE", DP_MICROS_PER_MINUTE, 0}, {"HOUR", DP_MICROS_PER_HOUR, 0}, {"DAY", DP_MICROS_PER_DAY, 0},
      {"WEEK", 7 * DP_MICROS_PER_DAY, 0}, {"MONTH", 0, 1}, {"QUARTER", 0, 3}, {"YEAR", 0, 12},
  };
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcasecmp(unit, units[i].name) != 0) continue;
    dp_value v;
    memset(&v, 0, sizeof v);
    v.type = dp_type_of(units[i].months ? DP_T_INTERVAL_YM : DP_T_INTERVAL_DT);
    v.u.i = units[i].months ? units[i].months : units[i].us;
    return dp_sx_literal(x, &v, span);
  }
  dp_sx_refuse(x, span, "the unit %s has no Spark interval; use SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, "
               "QUARTER or YEAR", unit);
  return NULL;
}

/* EXTRACT(unit FROM x) by unit. */
static Spark__Connect__Expression *extract(dp_sx *x, const dp_expr *e, const char *unit,
                                           Spark__Connect__Expression *arg) {
  static const struct { const char *unit, *fn; } fns[] = {
      {"YEAR", "year"}, {"QUARTER", "quarter"}, {"MONTH", "month"}, {"WEEK", "weekofyear"},
      {"DAY", "dayofmonth"}, {"DOY", "dayofyear"}, {"DOW", "dayofweek"}, {"HOUR", "hour"},
      {"MINUTE", "minute"}, {"SECOND", "second"},
  };
  if (dp_type_is_interval(e->u.call.args[1]->type)) {
    /* date_part of an interval: the field of its normalised form, as dipper's */
    return dp_sx_cast(x, dp_sx_fn2(x, "date_part", dp_sx_lit_string(x, unit), arg), e->type, false, e->span);
  }
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    if (strcasecmp(unit, fns[i].unit) == 0)
      return dp_sx_cast(x, dp_sx_fn1(x, fns[i].fn, arg), e->type, false, e->span);
  if (strcasecmp(unit, "EPOCH") == 0 && e->u.call.args[1]->type->kind != DP_T_DATE) {
    /* seconds since the epoch, whole: µs div 10^6 (UTC, as dipper keeps time) */
    Spark__Connect__Expression *ts = arg;
    if (e->u.call.args[1]->type->kind == DP_T_TIMESTAMP)
      ts = dp_sx_cast(x, arg, dp_type_of(DP_T_TIMESTAMP_LTZ), false, e->span);
    return dp_sx_fn2(x, "div", dp_sx_fn1(x, "unix_micros", ts), dp_sx_lit_long(x, DP_MICROS_PER_SECOND));
  }
  dp_sx_refuse(x, e->span, "EXTRACT(%s FROM ..) has no Spark form; use YEAR, QUARTER, MONTH, WEEK, DAY, "
               "DOY, DOW, HOUR, MINUTE, SECOND or EPOCH", unit);
  return NULL;
}

/* What a custom_* step returns for a call it has no rule for. */
static Spark__Connect__Expression no_rule;

/* Arithmetic and logic whose Spark form differs (NULL on division by zero, exact
** result types, three-valued IS). */
static Spark__Connect__Expression *custom_arith(dp_sx *x, const dp_expr *e, const fn_map *m,
                                                Spark__Connect__Expression **a) {
  int n = e->u.call.nargs;
  dp_span sp = e->span;
  switch ((dp_func_id)e->u.call.fn->id) {
  case DP_F_ADD:
  case DP_F_SUBTRACT: {
    Spark__Connect__Expression *r = dp_sx_fn2(x, m->spark, a[0], a[1]);
    /* Spark: DATE ± day-time INTERVAL is a TIMESTAMP; dipper keeps the DATE */
    if (e->type->kind == DP_T_DATE || e->type->kind == DP_T_DECIMAL) r = dp_sx_cast(x, r, e->type, false, sp);
    return r;
  }
  case DP_F_DIVIDE:
    if (dp_type_is_integer(e->type))
      return dp_sx_cast(x, dp_sx_fn3(x, "if", dp_sx_fn2(x, "==", a[1], dp_sx_lit_int(x, 0)),
                                     dp_sx_lit_null(x, e->type, sp), dp_sx_fn2(x, "div", a[0], a[1])),
                        e->type, false, sp);
    return dp_sx_cast(x, dp_sx_fn2(x, "try_divide", a[0], a[1]), e->type, false, sp);
  case DP_F_MOD:
    return dp_sx_cast(x, dp_sx_fn3(x, "if", dp_sx_fn2(x, "==", a[1], dp_sx_lit_int(x, 0)),
                                   dp_sx_lit_null(x, e->type, sp), dp_sx_fn2(x, "%", a[0], a[1])),
                      e->type, false, sp);
  case DP_F_AND:
  case DP_F_OR: {
    Spark__Connect__Expression *r = a[0];
    for (int i = 1; i < n; i++) r = dp_sx_fn2(x, m->spark, r, a[i]);
    return r;
  }
  case DP_F_NE: return dp_sx_fn1(x, "not", dp_sx_fn2(x, "==", a[0], a[1]));
  case DP_F_IS_TRUE: return dp_sx_fn2(x, "<=>", a[0], dp_sx_lit_bool(x, true));
  case DP_F_IS_FALSE: return dp_sx_fn2(x, "<=>", a[0], dp_sx_lit_bool(x, false));
  case DP_F_IS_DISTINCT_FROM: return dp_sx_fn1(x, "not", dp_sx_fn2(x, "<=>", a[0], a[1]));
  case DP_F_RAND_INTEGER: {
    Spark__Connect__Expression *r = n == 2 ? dp_sx_fn1(x, "rand", a[0]) : dp_sx_fn(x, "rand", 0, NULL);
    return dp_sx_cast(x, dp_sx_fn1(x, "floor", dp_sx_fn2(x, "*", r, a[n - 1])), e->type, false, sp);
  }
  default: return &no_rule;
  }
}

/* String functions whose arguments or edge cases differ. */
static Spark__Connect__Expression *custom_string(dp_sx *x, const dp_expr *e, const fn_map *m,
                                                 Spark__Connect__Expression **a) {
  int n = e->u.call.nargs;
  dp_expr **args = e->u.call.args;
  switch ((dp_func_id)e->u.call.fn->id) {
  case DP_F_NOT_LIKE: return dp_sx_fn1(x, "not", dp_sx_fn(x, "like", n, a));
  case DP_F_LTRIM:
  case DP_F_RTRIM:
    return n == 1 ? dp_sx_fn1(x, m->spark, a[0]) : dp_sx_fn2(x, m->spark, a[1], a[0]);
  case DP_F_REGEXP_EXTRACT: {
    Spark__Connect__Expression *ex = dp_sx_fn3(x, "regexp_extract", a[0], a[1], n > 2 ? a[2] : dp_sx_lit_int(x, 0));
    return when1(x, dp_sx_fn2(x, "rlike", a[0], a[1]), ex);
  }
  case DP_F_SPLIT: return dp_sx_fn3(x, "split", a[0], quote_regex(x, a[1], args[1]), dp_sx_lit_int(x, -1));
  case DP_F_SPLIT_INDEX: {
    Spark__Connect__Expression *parts = dp_sx_fn3(x, "split", a[0], quote_regex(x, a[1], args[1]), dp_sx_lit_int(x, -1));
    Spark__Connect__Expression *at = dp_sx_fn2(x, "try_element_at", parts, dp_sx_fn2(x, "+", a[2], dp_sx_lit_int(x, 1)));
    return when1(x, dp_sx_fn2(x, ">=", a[2], dp_sx_lit_int(x, 0)), at);
  }
  case DP_F_LPAD:
  case DP_F_RPAD:
    return when1(x, dp_sx_fn2(x, ">=", a[1], dp_sx_lit_int(x, 0)), dp_sx_fn(x, m->spark, n, a));
  case DP_F_SHA256: return dp_sx_fn2(x, "sha2", a[0], dp_sx_lit_int(x, 256));
  case DP_F_OVERLAY: {
    /* Flink: a start outside 1 .. char_length(s) gives s back; a length <= 0
       drops the rest of s (Spark inserts) */
    Spark__Connect__Expression *len = n > 3 ? a[3] : dp_sx_fn1(x, "char_length", a[1]);
    Spark__Connect__Expression *out_of =
        dp_sx_fn2(x, "or", dp_sx_fn2(x, "<", a[2], dp_sx_lit_int(x, 1)),
                  dp_sx_fn2(x, ">", a[2], dp_sx_fn1(x, "char_length", a[0])));
    Spark__Connect__Expression *cut =
        dp_sx_fn2(x, "concat", dp_sx_fn3(x, "substring", a[0], dp_sx_lit_int(x, 1),
                                         dp_sx_fn2(x, "-", a[2], dp_sx_lit_int(x, 1))), a[1]);
    Spark__Connect__Expression *ov_args[4] = {a[0], a[1], a[2], len};
    Spark__Connect__Expression *ov = dp_sx_fn(x, "overlay", 4, ov_args);
    return dp_sx_fn3(x, "if", out_of, a[0],
                     dp_sx_fn3(x, "if", dp_sx_fn2(x, "<=", len, dp_sx_lit_int(x, 0)), cut, ov));
  }
  case DP_F_TRANSLATE: /* a NULL from or to counts as '' (Spark: NULL) */
    return dp_sx_fn3(x, "translate", a[0], dp_sx_fn2(x, "coalesce", a[1], dp_sx_lit_string(x, "")),
                     dp_sx_fn2(x, "coalesce", a[2], dp_sx_lit_string(x, "")));
  case DP_F_ELT: /* NULL out of range (Spark 4 raises under ANSI) */
    return when1(x, dp_sx_fn2(x, "and", dp_sx_fn2(x, ">=", a[0], dp_sx_lit_int(x, 1)),
                              dp_sx_fn2(x, "<", a[0], dp_sx_lit_int(x, n))),
                 dp_sx_fn(x, "elt", n, a));
  case DP_F_UNHEX: {
    /* an odd count: Flink drops the first digit for a zero byte, Spark pads
       with a '0'; both are NULL for a character that is not a hex digit */
    Spark__Connect__Expression *odd =
        dp_sx_fn2(x, "==", dp_sx_fn2(x, "%", dp_sx_fn1(x, "char_length", a[0]), dp_sx_lit_int(x, 2)),
                  dp_sx_lit_int(x, 1));
    Spark__Connect__Expression *rest = dp_sx_fn2(x, "substring", a[0], dp_sx_lit_int(x, 2));
    Spark__Connect__Expression *zeroed =
        when1(x, dp_sx_fn1(x, "isnotnull", dp_sx_fn1(x, "unhex", a[0])),
              dp_sx_fn2(x, "concat", dp_sx_fn1(x, "unhex", dp_sx_lit_string(x, "00")),
                        dp_sx_fn1(x, "unhex", rest)));
    return dp_sx_fn3(x, "if", odd, zeroed, dp_sx_fn1(x, "unhex", a[0]));
  }
  case DP_F_SHA224: return dp_sx_fn2(x, "sha2", a[0], dp_sx_lit_int(x, 224));
  case DP_F_SHA384: return dp_sx_fn2(x, "sha2", a[0], dp_sx_lit_int(x, 384));
  case DP_F_SHA512: return dp_sx_fn2(x, "sha2", a[0], dp_sx_lit_int(x, 512));
  case DP_F_INITCAP: {
    /* Spark starts a word after a space only, dipper after any ASCII
       character that is not a letter or digit: mark those with "\1 ",
       capitalise, and take the marks out again */
    Spark__Connect__Expression *marked =
        dp_sx_fn3(x, "regexp_replace", a[0], dp_sx_lit_string(x, "([\\p{ASCII}&&[^A-Za-z0-9 ]])"),
                  dp_sx_lit_string(x, "$1\001 "));
    return dp_sx_fn3(x, "regexp_replace", dp_sx_fn1(x, "initcap", marked), dp_sx_lit_string(x, "\001 "),
                     dp_sx_lit_string(x, ""));
  }
  default: return &no_rule;
  }
}

/* Temporal functions: units as literals, Spark's own names and types. */
static Spark__Connect__Expression *custom_time(dp_sx *x, const dp_expr *e, const fn_map *m,
                                               Spark__Connect__Expression **a) {
  int n = e->u.call.nargs;
  dp_expr **args = e->u.call.args;
  dp_span sp = e->span;
  switch ((dp_func_id)e->u.call.fn->id) {
  case DP_F_EXTRACT: {
    const char *unit;
    if (!lit_string(args[0], &unit)) return &no_rule;
    return extract(x, e, unit, a[1]);
  }
  case DP_F_TO_TIMESTAMP:
    if (n == 1) return dp_sx_cast(x, a[0], e->type, true, sp);
    return dp_sx_cast(x, dp_sx_fn2(x, "try_to_timestamp", a[0], a[1]), e->type, false, sp);
  case DP_F_TO_DATE:
    if (args[0]->type->kind != DP_T_STRING) return dp_sx_cast(x, a[0], e->type, false, sp);
    if (n == 1) return dp_sx_cast(x, a[0], e->type, true, sp);
    return dp_sx_cast(x, dp_sx_fn2(x, "try_to_timestamp", a[0], a[1]), e->type, false, sp);
  case DP_F_TO_TIMESTAMP_LTZ: {
    int64_t prec = 3;
    if (n > 1 && !lit_int(args[1], &prec)) {
      dp_sx_refuse(x, args[1]->span, "TO_TIMESTAMP_LTZ needs a literal precision (0 or 3) on Spark");
      return NULL;
    }
    if (prec != 0 && prec != 3) {
      dp_sx_refuse(x, args[1]->span, "TO_TIMESTAMP_LTZ with precision %lld; use 0 (seconds) or 3 (milliseconds)",
                   (long long)prec);
      return NULL;
    }
    Spark__Connect__Expression *v = a[0];
    if (!dp_type_is_integer(args[0]->type)) v = dp_sx_cast(x, v, dp_type_of(DP_T_BIGINT), false, sp);
    return dp_sx_fn1(x, prec == 0 ? "timestamp_seconds" : "timestamp_millis", v);
  }
  case DP_F_UNIX_TIMESTAMP:
    if (n == 0) return dp_sx_fn(x, "unix_timestamp", 0, NULL);
    if (args[0]->type->kind != DP_T_STRING) {
      /* a TIMESTAMP counts from the epoch in UTC: through TIMESTAMP_LTZ's µs */
      Spark__Connect__Expression *ts = a[0];
      if (args[0]->type->kind != DP_T_TIMESTAMP_LTZ)
        ts = dp_sx_cast(x, ts, dp_type_of(DP_T_TIMESTAMP_LTZ), false, sp);
      return dp_sx_fn2(x, "div", dp_sx_fn1(x, "unix_micros", ts), dp_sx_lit_long(x, DP_MICROS_PER_SECOND));
    }
    return dp_sx_fn2(x, "unix_timestamp", a[0], n > 1 ? a[1] : dp_sx_lit_string(x, "yyyy-MM-dd HH:mm:ss"));
  case DP_F_TIMESTAMPADD: {
    const char *unit;
    if (!lit_string(args[0], &unit)) return &no_rule;
    Spark__Connect__Expression *iv = unit_interval(x, unit, sp);
    Spark__Connect__Expression *step = dp_sx_fn2(x, "*", iv, a[1]);
    return dp_sx_cast(x, dp_sx_fn2(x, "+", a[2], step), e->type, false, sp);
  }
  case DP_F_TIMESTAMPDIFF: {
    const char *unit;
    if (!lit_string(args[0], &unit)) return &no_rule;
    /* Spark's timestampdiff takes the unit as a leading string literal */
    return dp_sx_cast(x, dp_sx_fn3(x, "timestampdiff", dp_sx_lit_string(x, unit), a[1], a[2]), e->type, false, sp);
  }
  case DP_F_CEIL:
  case DP_F_FLOOR: {
    bool ceil = e->u.call.fn->id == DP_F_CEIL;
    if (n == 1) return dp_sx_cast(x, dp_sx_fn1(x, m->spark, a[0]), e->type, false, sp);
    const char *unit;
    if (!lit_string(args[1], &unit)) return &no_rule;
    Spark__Connect__Expression *fl = dp_sx_cast(x, dp_sx_fn2(x, "date_trunc", dp_sx_lit_string(x, unit), a[0]),
                                                e->type, false, sp);
    if (!ceil) return fl;
    /* CEIL: the floor when x is on a boundary, else the next boundary */
    Spark__Connect__Expression *next = dp_sx_cast(x, dp_sx_fn2(x, "+", fl, unit_interval(x, unit, sp)), e->type, false, sp);
    return dp_sx_fn3(x, "if", dp_sx_fn2(x, "==", fl, a[0]), fl, next);
  }
  default: return &no_rule;
  }
}

/* Numbers, collections and ROW. */
static Spark__Connect__Expression *custom_other(dp_sx *x, const dp_expr *e, const fn_map *m,
                                                Spark__Connect__Expression **a) {
  int n = e->u.call.nargs;
  dp_expr **args = e->u.call.args;
  dp_span sp = e->span;
  switch ((dp_func_id)e->u.call.fn->id) {
  case DP_F_TRUNCATE: {
    Spark__Connect__Expression *d = n > 1 ? a[1] : dp_sx_lit_int(x, 0);
    Spark__Connect__Expression *r = dp_sx_fn3(x, "if", dp_sx_fn2(x, ">=", a[0], dp_sx_lit_int(x, 0)),
                                              dp_sx_fn2(x, "floor", a[0], d), dp_sx_fn2(x, "ceil", a[0], d));
    return dp_sx_cast(x, r, e->type, false, sp);
  }
  case DP_F_LOG: return n == 1 ? dp_sx_fn1(x, "ln", a[0]) : dp_sx_fn(x, "log", n, a);
  case DP_F_GREATEST:
  case DP_F_LEAST: {
    /* NULL when any argument is (Spark's skip NULLs) */
    Spark__Connect__Expression *anynull = NULL;
    for (int i = 0; i < n; i++) {
      Spark__Connect__Expression *isn = dp_sx_fn1(x, "isnull", a[i]);
      anynull = anynull ? dp_sx_fn2(x, "or", anynull, isn) : isn;
    }
    return dp_sx_fn3(x, "if", anynull, dp_sx_lit_null(x, e->type, sp), dp_sx_fn(x, m->spark, n, a));
  }
  case DP_F_ELEMENT_AT:
    if (args[0]->type->kind == DP_T_ARRAY)
      return when1(x, dp_sx_fn2(x, ">", a[1], dp_sx_lit_int(x, 0)), dp_sx_fn2(x, "try_element_at", a[0], a[1]));
    return dp_sx_fn2(x, "try_element_at", a[0], a[1]);
  case DP_F_ROW: {
    if (e->type->kind != DP_T_ROW || e->type->nfields != n) return &no_rule;
    Spark__Connect__Expression **v = dp_sx_alloc(x, (size_t)(2 * n) * sizeof *v);
    if (!v) return NULL;
    for (int i = 0; i < n; i++) {
      v[2 * i] = dp_sx_lit_string(x, e->type->fields[i].name);
      v[2 * i + 1] = a[i];
    }
    return dp_sx_fn(x, "named_struct", 2 * n, v);
  }
  default: return &no_rule;
  }
}

/* JSON_VALUE and JSON_EXISTS in their default forms, over get_json_object
** (functions_map.def says where the semantics meet). */
static Spark__Connect__Expression *custom_json(dp_sx *x, const dp_expr *e, Spark__Connect__Expression **a) {
  int id = e->u.call.fn->id, n = e->u.call.nargs;
  if (id == DP_F_ARRAY_REMOVE) {
    /* Spark's array_remove of a NULL value is NULL; Flink's drops the NULL elements */
    const dp_expr *v = e->u.call.args[1];
    if (v->kind == DP_E_LITERAL && !v->u.value.is_null) return dp_sx_fn2(x, "array_remove", a[0], a[1]);
    dp_sx_refuse(x, e->span, "ARRAY_REMOVE on Spark takes a constant, non-NULL value: Spark's array_remove of "
                 "a NULL value gives NULL where Flink removes the NULL elements");
    return NULL;
  }
  if (id != DP_F_JSON_VALUE && id != DP_F_JSON_EXISTS) return &no_rule;
  const char *path = NULL, *on_error = NULL;
  bool plain = lit_string(e->u.call.args[1], &path);
  if (plain) {
    while (*path == ' ') path++;
    plain = strncmp(path, "strict", 6) != 0 && strstr(path, ".*") == NULL;
  }
  if (id == DP_F_JSON_EXISTS && n == 3) plain = plain && lit_string(e->u.call.args[2], &on_error) && !strcmp(on_error, "FALSE");
  if (id == DP_F_JSON_VALUE && n != 2) plain = false;
  if (!plain) {
    dp_sx_refuse(x, e->span,
                 "%s on Spark takes a constant lax path ('$.a.b', '$[0]', '$.a[*]') and no clauses: "
                 "Spark's get_json_object has no strict mode, no RETURNING type and no ON EMPTY / ON "
                 "ERROR behaviour; CAST the result instead of RETURNING, or run the query on the "
                 "embedded engine",
                 id == DP_F_JSON_VALUE ? "JSON_VALUE" : "JSON_EXISTS");
    return NULL;
  }
  Spark__Connect__Expression *v = dp_sx_fn2(x, "get_json_object", a[0], a[1]);
  if (id == DP_F_JSON_VALUE) return v;
  /* NULL when the JSON or the path is (isnotnull alone would say false) */
  Spark__Connect__Expression *either = dp_sx_fn2(x, "or", dp_sx_fn1(x, "isnull", a[0]), dp_sx_fn1(x, "isnull", a[1]));
  return dp_sx_fn3(x, "if", either, dp_sx_lit_null(x, e->type, e->span), dp_sx_fn1(x, "isnotnull", v));
}

/* A constant, non-NULL BOOLEAN argument, or false. */
static bool lit_bool(const dp_expr *e, bool *v) {
  if (e->kind != DP_E_LITERAL || e->u.value.is_null || e->u.value.type->kind != DP_T_BOOLEAN) return false;
  *v = e->u.value.u.b;
  return true;
}

/* Flink's collection functions whose Spark namesakes take other arguments. */
static Spark__Connect__Expression *custom_coll(dp_sx *x, const dp_expr *e, Spark__Connect__Expression **a) {
  int n = e->u.call.nargs;
  dp_expr **args = e->u.call.args;
  dp_span sp = e->span;
  const dp_type *int_t = dp_type_of(DP_T_INT);
  switch ((dp_func_id)e->u.call.fn->id) {
  case DP_F_ARRAY_SLICE: {
    /* Flink's inclusive end offset (0 the first element, negative from the
    ** end, clamped) as Spark's slice(a, start >= 1, length >= 0) */
    Spark__Connect__Expression *len = dp_sx_fn1(x, "size", a[0]), *one = dp_sx_lit_int(x, 1);
    Spark__Connect__Expression *st = dp_sx_cast(x, a[1], int_t, false, sp);
    Spark__Connect__Expression *en = n > 2 ? dp_sx_cast(x, a[2], int_t, false, sp) : len;
    st = dp_sx_fn3(x, "if", dp_sx_fn2(x, "<", st, dp_sx_lit_int(x, 0)),
                   dp_sx_fn2(x, "+", dp_sx_fn2(x, "+", st, len), one), st);
    st = dp_sx_fn3(x, "if", dp_sx_fn2(x, "<", st, one), one, st);
    en = dp_sx_fn3(x, "if", dp_sx_fn2(x, "<", en, dp_sx_lit_int(x, 0)),
                   dp_sx_fn2(x, "+", dp_sx_fn2(x, "+", en, len), one), en);
    en = dp_sx_fn3(x, "if", dp_sx_fn2(x, "==", en, dp_sx_lit_int(x, 0)), one,
                   dp_sx_fn3(x, "if", dp_sx_fn2(x, "<", en, len), en, len));
    Spark__Connect__Expression *count = dp_sx_fn3(x, "if", dp_sx_fn2(x, "<", en, st), dp_sx_lit_int(x, 0),
                                                  dp_sx_fn2(x, "+", dp_sx_fn2(x, "-", en, st), one));
    Spark__Connect__Expression *r = dp_sx_fn3(x, "slice", a[0], st, count);
    /* Spark's if() takes the other branch for a NULL condition: NULL offsets first */
    Spark__Connect__Expression *anynull = dp_sx_fn1(x, "isnull", a[1]);
    if (n > 2) anynull = dp_sx_fn2(x, "or", anynull, dp_sx_fn1(x, "isnull", a[2]));
    return dp_sx_fn3(x, "if", anynull, dp_sx_lit_null(x, e->type, sp), r);
  }
  case DP_F_ARRAY_SORT: {
    /* sort_array puts NULLs first ascending and last descending: Flink's
    ** default; another placement, or an order that is not constant, it cannot */
    bool asc = true, nulls_first = true;
    bool ok = n < 2 || lit_bool(args[1], &asc);
    nulls_first = asc;
    if (ok && n > 2) ok = lit_bool(args[2], &nulls_first);
    if (!ok || nulls_first != asc) {
      dp_sx_refuse(x, sp, "ARRAY_SORT on Spark takes a constant order and NULLs where Spark's sort_array puts "
                   "them (first when ascending, last when descending); Spark cannot place them otherwise");
      return NULL;
    }
    return dp_sx_fn2(x, "sort_array", a[0], dp_sx_lit_bool(x, asc));
  }
  case DP_F_ELEMENT: {
    Spark__Connect__Expression *many = dp_sx_fn2(x, ">", dp_sx_fn1(x, "size", a[0]), dp_sx_lit_int(x, 1));
    Spark__Connect__Expression *err =
        dp_sx_fn1(x, "raise_error", dp_sx_lit_string(x, "ELEMENT of an array of more than one element"));
    return dp_sx_fn3(x, "if", many, err, dp_sx_fn2(x, "try_element_at", a[0], dp_sx_lit_int(x, 1)));
  }
  case DP_F_MAP_UNION:
    if (n == 1) return a[0];
    dp_sx_refuse(x, sp, "MAP_UNION of several maps on Spark: Spark's map_concat raises an error on a key two maps "
                 "share (spark.sql.mapKeyDedupPolicy = EXCEPTION) where Flink keeps the later map's value");
    return NULL;
  default: return &no_rule;
  }
}

static Spark__Connect__Expression *custom_call(dp_sx *x, const dp_expr *e, const fn_map *m,
                                               Spark__Connect__Expression **a) {
  Spark__Connect__Expression *r = custom_coll(x, e, a);
  if (r == &no_rule) r = custom_json(x, e, a);
  if (r == &no_rule) r = custom_arith(x, e, m, a);
  if (r == &no_rule) r = custom_string(x, e, m, a);
  if (r == &no_rule) r = custom_time(x, e, m, a);
  if (r == &no_rule) r = custom_other(x, e, m, a);
  if (r != &no_rule) return r;
  if (x->rc == DIPPER_OK)
    dp_sx_refuse(x, e->span, "%s(..) in this form has no Spark translation; compute it another way",
                 e->u.call.fn->name);
  return NULL;
}

/* A C function: Spark cannot run it (the reason and the alternatives). */
static Spark__Connect__Expression *refuse_cfunc(dp_sx *x, const dp_func *fn, dp_span span) {
  dp_sx_refuse(x, span, "%s(..) is a C function (dipper_create_%s_function), which runs only on the embedded engine: Spark cannot call C code; write it in SQL (CREATE FUNCTION %s(..) RETURNS .. RETURN ..), which both engines run, or as a Java class (CREATE FUNCTION %s AS 'com.example.F' USING JAR '..')", fn->name, fn->kind == DP_FN_AGGREGATE ? "aggregate" : "scalar", fn->name,
               fn->name);
  return NULL;
}

static Spark__Connect__Expression *call(dp_sx *x, const dp_sscope *s, const dp_expr *e) {
  const dp_func *fn = e->u.call.fn;
  if (fn->cfunc) return refuse_cfunc(x, fn, e->span);
  if (fn->java) { /* registered in the session under its name before the plan runs (udf.h) */
    int n = e->u.call.nargs;
    Spark__Connect__Expression **a = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *a);
    if (!a) return NULL;
    bool ok = true;
    for (int i = 0; i < n; i++) ok &= (a[i] = dp_sx_expr(x, s, e->u.call.args[i])) != NULL;
    return ok ? dp_sx_fn(x, fn->name, n, a) : NULL;
  }
  const fn_map *m = &fn_maps[fn->id];
  if (!m->present || m->how == REFUSE) {
    dp_sx_refuse(x, e->span, "%s(..) is not available: %s", fn->name,
                 m->why ? m->why : "no Spark function does the same");
    return NULL;
  }
  if (m->how == AGG || m->how == WIN) {
    dp_sx_refuse(x, e->span, "%s(..) is an aggregate or window function outside its place", fn->name);
    return NULL;
  }
  int n = e->u.call.nargs;
  Spark__Connect__Expression **a = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *a);
  if (!a) return NULL;
  bool ok = true;
  for (int i = 0; i < n; i++) ok &= (a[i] = dp_sx_expr(x, s, e->u.call.args[i])) != NULL;
  if (!ok) return NULL;
  switch (m->how) {
  case SAME: return dp_sx_fn(x, m->spark, n, a);
  case CAST: return dp_sx_cast(x, dp_sx_fn(x, m->spark, n, a), e->type, false, e->span);
  default: return custom_call(x, e, m, a);
  }
}

/* ---- subqueries ---- */

/* Translate a subquery's plan as a reference of the relation being built:
** the plan id its SubqueryExpression names, or -1.  `agg` (may be NULL)
** turns the translated relation into another first. */
static int64_t add_reference(dp_sx *x, const dp_sscope *s, const dp_plan *plan,
                             Spark__Connect__Relation *(*agg)(dp_sx *, const dp_srel *)) {
  /* The subquery's relations collect their own references; names of this
     scope stay visible to it as outer references. */
  int nrefs = x->nrefs, caprefs = x->caprefs;
  Spark__Connect__Relation **refs = x->refs;
  const dp_sscope *outer = x->outer;
  x->nrefs = x->caprefs = 0;
  x->refs = NULL;
  x->outer = s;
  dp_srel sub;
  int rc = dp_sx_plan(x, plan, &sub);
  x->nrefs = nrefs;
  x->caprefs = caprefs;
  x->refs = refs;
  x->outer = outer;
  if (rc != DIPPER_OK) return -1;
  Spark__Connect__Relation *ref = agg ? agg(x, &sub) : sub.rel;
  if (!ref || (!ref->common && !DP_SX_NEW(x, ref->common, spark__connect__relation_common__init))) return -1;
  int64_t id = x->next_plan_id++;
  ref->common->_plan_id_case = SPARK__CONNECT__RELATION_COMMON___PLAN_ID_PLAN_ID;
  ref->common->plan_id = id;
  if (x->nrefs == x->caprefs) {
    int cap = x->caprefs ? 2 * x->caprefs : 4;
    Spark__Connect__Relation **g = dp_arena_grow(x->c->arena, x->refs, (size_t)x->caprefs, (size_t)cap, sizeof *g);
    if (!g) return dp_sx_nomem(x), -1;
    x->refs = g;
    x->caprefs = cap;
  }
  x->refs[x->nrefs++] = ref;
  return id;
}

static Spark__Connect__Expression *subquery_expr(dp_sx *x, int64_t id,
                                                 Spark__Connect__SubqueryExpression__SubqueryType type,
                                                 Spark__Connect__Expression *in_value) {
  Spark__Connect__Expression *r = new_expr(x, SPARK__CONNECT__EXPRESSION__EXPR_TYPE_SUBQUERY_EXPRESSION);
  Spark__Connect__SubqueryExpression *q;
  if (id < 0 || !r || !DP_SX_NEW(x, q, spark__connect__subquery_expression__init)) return NULL;
  q->plan_id = id;
  q->subquery_type = type;
  if (in_value) {
    q->n_in_subquery_values = 1;
    if (!(q->in_subquery_values = dp_sx_alloc(x, sizeof *q->in_subquery_values))) return NULL;
    q->in_subquery_values[0] = in_value;
  }
  r->subquery_expression = q;
  return r;
}

/* MAX(IF(c IS NULL, 2, 1)) over the subquery's one column: NULL when it has
** no rows, 2 when one of them is NULL, else 1. */
static Spark__Connect__Relation *null_probe(dp_sx *x, const dp_srel *sub) {
  Spark__Connect__Relation *r;
  Spark__Connect__Aggregate *m;
  Spark__Connect__Expression **aggs = dp_sx_alloc(x, sizeof *aggs);
  if (!aggs || sub->ncols < 1 || !sub->names[0] || !DP_SX_NEW(x, r, spark__connect__relation__init) ||
      !DP_SX_NEW(x, m, spark__connect__aggregate__init))
    return NULL;
  Spark__Connect__Expression *flag = dp_sx_fn3(x, "if", dp_sx_fn1(x, "isnull", dp_sx_col(x, sub->names[0])),
                                               dp_sx_lit_int(x, 2), dp_sx_lit_int(x, 1));
  if (!(aggs[0] = dp_sx_alias(x, dp_sx_fn1(x, "max", flag), "_nulls"))) return NULL;
  m->input = sub->rel;
  m->group_type = SPARK__CONNECT__AGGREGATE__GROUP_TYPE__GROUP_TYPE_GROUPBY;
  m->n_aggregate_expressions = 1;
  m->aggregate_expressions = aggs;
  r->rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_AGGREGATE;
  r->aggregate = m;
  return r;
}

static Spark__Connect__Expression *subquery(dp_sx *x, const dp_sscope *s, const dp_expr *e) {
  const dp_plan *plan = e->u.subquery.plan;
  Spark__Connect__Expression *r = NULL;
  switch (e->u.subquery.kind) {
  case DP_SUBQ_SCALAR:
    r = subquery_expr(x, add_reference(x, s, plan, NULL),
                      SPARK__CONNECT__SUBQUERY_EXPRESSION__SUBQUERY_TYPE__SUBQUERY_TYPE_SCALAR, NULL);
    break;
  case DP_SUBQ_EXISTS:
    r = subquery_expr(x, add_reference(x, s, plan, NULL),
                      SPARK__CONNECT__SUBQUERY_EXPRESSION__SUBQUERY_TYPE__SUBQUERY_TYPE_EXISTS, NULL);
    break;
  case DP_SUBQ_IN: {
    /* Spark's IN (subquery) as a value is false where SQL says NULL (no
       match, and the value or a row of the subquery is NULL): with the
       null probe p of the subquery (null_probe),
         CASE WHEN v IN (q) THEN true WHEN p = 2 THEN NULL
              WHEN v IS NULL AND p IS NOT NULL THEN NULL ELSE false END */
    Spark__Connect__Expression *v = dp_sx_expr(x, s, e->u.subquery.arg);
    if (!v) return NULL;
    Spark__Connect__Expression *in = subquery_expr(x, add_reference(x, s, plan, NULL),
                                                   SPARK__CONNECT__SUBQUERY_EXPRESSION__SUBQUERY_TYPE__SUBQUERY_TYPE_IN, v);
    Spark__Connect__Expression *p = subquery_expr(x, add_reference(x, s, plan, null_probe),
                                                  SPARK__CONNECT__SUBQUERY_EXPRESSION__SUBQUERY_TYPE__SUBQUERY_TYPE_SCALAR, NULL);
    Spark__Connect__Expression *null_bool = dp_sx_lit_null(x, dp_type_of(DP_T_BOOLEAN), e->span);
    Spark__Connect__Expression *w[7] = {
        in, dp_sx_lit_bool(x, true),
        dp_sx_fn2(x, "==", p, dp_sx_lit_int(x, 2)), null_bool,
        dp_sx_fn2(x, "and", dp_sx_fn1(x, "isnull", v), dp_sx_fn1(x, "isnotnull", p)), null_bool,
        dp_sx_lit_bool(x, false)};
    r = dp_sx_fn(x, "when", 7, w);
    break;
  }
  }
  if (!r) return NULL;
  return e->u.subquery.negated ? dp_sx_fn1(x, "not", r) : r;
}

/* ---- expressions ---- */

static Spark__Connect__Expression *column(dp_sx *x, const dp_sscope *s, const dp_expr *e) {
  for (int k = 0; k < e->u.column.outer && s; k++) s = s->outer;
  int i = e->u.column.index;
  if (!s || i < 0 || i >= s->ncols) {
    dp_sx_refuse(x, e->span, "internal: column %d is outside its input", i);
    return NULL;
  }
  if (!s->names[i]) {
    dp_sx_refuse(x, e->span,
                 "the bounds of a SESSION window exist on Spark only as keys of its GROUP BY; group by "
                 "window_start and window_end and use them after the aggregation");
    return NULL;
  }
  return dp_sx_col(x, s->names[i]);
}

Spark__Connect__Expression *dp_sx_expr(dp_sx *x, const dp_sscope *s, const dp_expr *e) {
  switch (e->kind) {
  case DP_E_COLUMN: return column(x, s, e);
  case DP_E_LITERAL: return dp_sx_literal(x, &e->u.value, e->span);
  case DP_E_CALL: return call(x, s, e);
  case DP_E_CAST: {
    Spark__Connect__Expression *c = dp_sx_cast(x, dp_sx_expr(x, s, e->u.cast.arg), e->type, e->u.cast.try_, e->span);
    /* CAST(.. AS VARCHAR(n)) cuts to n characters in dipper (Flink); Spark's
       strings have no length */
    if (c && e->type->kind == DP_T_STRING && e->type->length > 0 && e->type->length <= INT32_MAX)
      c = dp_sx_fn2(x, "left", c, dp_sx_lit_int(x, (int32_t)e->type->length));
    return c;
  }
  case DP_E_CASE: {
    int n = 2 * e->u.case_.n + (e->u.case_.else_ ? 1 : 0);
    Spark__Connect__Expression **v = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *v);
    if (!v) return NULL;
    bool ok = true;
    for (int i = 0; i < e->u.case_.n; i++) {
      ok &= (v[2 * i] = dp_sx_expr(x, s, e->u.case_.whens[i])) != NULL;
      ok &= (v[2 * i + 1] = dp_sx_expr(x, s, e->u.case_.thens[i])) != NULL;
    }
    if (e->u.case_.else_) ok &= (v[n - 1] = dp_sx_expr(x, s, e->u.case_.else_)) != NULL;
    return ok ? dp_sx_fn(x, "when", n, v) : NULL;
  }
  case DP_E_FIELD: {
    Spark__Connect__Expression *arg = dp_sx_expr(x, s, e->u.field.arg);
    const dp_type *t = e->u.field.arg->type;
    if (!arg) return NULL;
    if (t->kind != DP_T_ROW || e->u.field.index < 0 || e->u.field.index >= t->nfields) {
      dp_sx_refuse(x, e->span, "internal: field access on a value that is not a ROW");
      return NULL;
    }
    Spark__Connect__Expression *r = new_expr(x, SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_EXTRACT_VALUE);
    Spark__Connect__Expression__UnresolvedExtractValue *ev;
    if (!r || !DP_SX_NEW(x, ev, spark__connect__expression__unresolved_extract_value__init)) return NULL;
    ev->child = arg;
    if (!(ev->extraction = dp_sx_lit_string(x, t->fields[e->u.field.index].name))) return NULL;
    r->unresolved_extract_value = ev;
    return r;
  }
  case DP_E_SUBQUERY: return subquery(x, s, e);
  }
  dp_sx_refuse(x, e->span, "internal: unknown expression kind");
  return NULL;
}

/* ---- aggregates ---- */

Spark__Connect__Expression *dp_sx_agg(dp_sx *x, const dp_sscope *s, const dp_func *fn, int nargs,
                                      dp_expr *const *args, bool distinct, const dp_expr *filter,
                                      dp_span span) {
  if (fn->cfunc) return refuse_cfunc(x, fn, span);
  if (fn->java) { /* a Java aggregate, registered under its name (udf.h) */
    if (filter) {
      dp_sx_refuse(x, filter->span,
                   "%s(..) FILTER (WHERE ..): Spark's aggregate call has no FILTER, and whether the "
                   "Java aggregate skips NULLs (which a CASE WHEN would need) is its own; filter "
                   "the rows in a subquery instead",
                   fn->name);
      return NULL;
    }
    Spark__Connect__Expression **a = dp_sx_alloc(x, (size_t)(nargs ? nargs : 1) * sizeof *a);
    if (!a) return NULL;
    bool ok = true;
    for (int i = 0; i < nargs; i++) ok &= (a[i] = dp_sx_expr(x, s, args[i])) != NULL;
    Spark__Connect__Expression *r = ok ? dp_sx_fn(x, fn->name, nargs, a) : NULL;
    if (r && distinct) r->unresolved_function->is_distinct = true;
    return r;
  }
  const fn_map *m = &fn_maps[fn->id];
  if (m->how == REFUSE || !m->spark) {
    dp_sx_refuse(x, span, "%s(..) is not available: %s", fn->name, m->why ? m->why : "no Spark equivalent");
    return NULL;
  }
  int n = nargs ? nargs : (fn->id == DP_F_COUNT ? 1 : 0);
  Spark__Connect__Expression **a = dp_sx_alloc(x, (size_t)(n + 1) * sizeof *a);
  if (!a) return NULL;
  bool ok = true;
  for (int i = 0; i < nargs; i++) ok &= (a[i] = dp_sx_expr(x, s, args[i])) != NULL;
  if (nargs == 0 && fn->id == DP_F_COUNT) a[0] = dp_sx_lit_int(x, 1); /* COUNT(*) */
  if (fn->id == DP_F_LISTAGG && nargs == 1) a[n++] = dp_sx_lit_string(x, ",");
  if (filter) {
    /* Spark's aggregate call has no FILTER: agg(x) FILTER (WHERE c) is
       agg(CASE WHEN c THEN x END) for aggregates that skip NULLs. */
    if (fn->id == DP_F_FIRST_VALUE || fn->id == DP_F_LAST_VALUE || m->how != AGG) {
      dp_sx_refuse(x, filter->span,
                   "%s(..) FILTER (WHERE ..) cannot be expressed: %s does not skip NULLs; filter the "
                   "rows in a subquery instead",
                   fn->name, fn->name);
      return NULL;
    }
    Spark__Connect__Expression *c = dp_sx_expr(x, s, filter);
    ok &= c != NULL;
    if (ok) a[0] = when1(x, c, a[0]);
  }
  if (!ok) return NULL;
  Spark__Connect__Expression *r = dp_sx_fn(x, m->spark, n, a);
  if (r && distinct) r->unresolved_function->is_distinct = true;
  return r;
}
