/*
** functions.c — the function catalog (functions.h): the table built from
** functions.def, name lookup with aliases, "did you mean", and the type rules.
**
** Every function has one resolver that, from the argument types, computes
** both the result type and the type each argument must be cast to.  infer and
** dp_func_param_types are two views of that one computation, so the binder's
** implicit casts always agree with the result type.  Resolvers of `sig`
** functions read the parameter classes from the signature text, so the
** documentation and the check cannot drift apart.
**
** Owns: the static catalog and the interned parameter types.  Does not own:
** result types, which live in the caller's arena.
*/
#include "plan/functions.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/compiler.h"
#include "core/suggest.h"
#include "dipper.h"

#define MAX_DECIMAL 38
#define MAX_SIG_PARAMS 8
#define MAX_NAME 64

/* ---- the tables from functions.def ---- */

typedef enum result_rule {
  R_NONE, R_STRING, R_BYTES, R_BOOLEAN, R_INT, R_BIGINT, R_DOUBLE, R_DATE, R_TS3, R_LTZ3, R_TIME0,
  R_ARG0, R_ARG2, R_TSARG0, R_STRARRAY,
} result_rule;

typedef enum null_rule { N_ARGS, N_ALWAYS, N_NEVER, N_ANY, N_FIRST, N_CUSTOM } null_rule;

/* What one resolver sees and fills in. */
typedef struct rctx {
  dp_arena *a;
  const dp_func *fn;
  int nargs;
  const dp_type *const *args;
  const dp_type **params; /* out: per argument, the type to cast to, or NULL */
  const char *why;        /* out: on failure */
} rctx;

typedef const dp_type *(*resolver)(rctx *c);

#define RESOLVERS(X)                                                                         \
  X(sig) X(arith) X(compare) X(in) X(bitwise) X(concat) X(common) X(if) X(element_at)        \
  X(array_contains) X(map_parts) X(construct) X(floorceil) X(round) X(sum) X(avg) X(minmax)  \
  X(collect) X(laglead) X(json_value) X(json_build) X(array_fn) X(map_fn)
#define DECLARE_RESOLVER_(r) static const dp_type *resolve_##r(rctx *c);
RESOLVERS(DECLARE_RESOLVER_)
#undef DECLARE_RESOLVER_

static const dp_type *infer_entry(dp_arena *a, const dp_func *fn, int nargs,
                                  const dp_type *const *args, const char **why);

static const dp_func funcs[DP_F_COUNT_ + 1] = {
#define DP_FUNC_ENUM_(ID, name, op, KIND, min, max, det, rule, result, nulls, sig) \
  {DP_F_##ID, name, op, DP_FN_##KIND, min, max, det != 0, infer_entry, sig},
#include "plan/functions.def"
#undef DP_FUNC_ENUM_
    {0, NULL, NULL, DP_FN_SCALAR, 0, 0, false, NULL, NULL},
};

static const struct fn_rule {
  resolver resolve;
  result_rule result;
  null_rule nulls;
} rules[DP_F_COUNT_] = {
#define DP_FUNC_ENUM_(ID, name, op, KIND, min, max, det, rule, result, nulls, sig) \
  {resolve_##rule, R_##result, N_##nulls},
#include "plan/functions.def"
#undef DP_FUNC_ENUM_
};

static const struct alias {
  const char *name;
  dp_func_id id;
} aliases[] = {
#define DP_FUNC_ENUM_(...)
#define DP_FUNC_ALIAS_(name, ID) {name, DP_F_##ID},
#include "plan/functions.def"
#undef DP_FUNC_ALIAS_
#undef DP_FUNC_ENUM_
};

#define NALIASES ((int)(sizeof aliases / sizeof aliases[0]))

/* ---- lookup ---- */

typedef struct name_entry {
  const char *name;
  dp_func_id id;
} name_entry;

/* Canonical names and aliases sorted by name: built once, read-only after. */
static name_entry by_name[DP_F_COUNT_ + NALIASES];
static pthread_once_t by_name_once = PTHREAD_ONCE_INIT;

static int entry_cmp(const void *x, const void *y) {
  return strcmp(((const name_entry *)x)->name, ((const name_entry *)y)->name);
}

static void build_index(void) {
  int n = 0;
  for (int i = 0; i < DP_F_COUNT_; i++) by_name[n++] = (name_entry){funcs[i].name, (dp_func_id)i};
  for (int i = 0; i < NALIASES; i++) by_name[n++] = (name_entry){aliases[i].name, aliases[i].id};
  qsort(by_name, (size_t)n, sizeof by_name[0], entry_cmp);
}

static char ascii_lower(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch; }

/* Lower-case name into buf; false when it cannot be a catalog name. */
static bool lower_name(const char *name, char *buf, size_t cap) {
  size_t i = 0;
  for (; name[i]; i++) {
    if (i + 1 >= cap) return false;
    buf[i] = ascii_lower(name[i]);
  }
  buf[i] = '\0';
  return i > 0;
}

const dp_func *dp_func_lookup(const char *name) {
  char key[MAX_NAME];
  if (!name || !lower_name(name, key, sizeof key)) return NULL;
  pthread_once(&by_name_once, build_index);
  size_t lo = 0, hi = (size_t)(DP_F_COUNT_ + NALIASES);
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(key, by_name[mid].name);
    if (c == 0) return &funcs[by_name[mid].id];
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

const dp_func *dp_func_get(dp_func_id id) {
  return (int)id >= 0 && id < DP_F_COUNT_ ? &funcs[id] : NULL;
}

const dp_func *dp_func_at(int i) { return i >= 0 && i < DP_F_COUNT_ ? &funcs[i] : NULL; }

const char *dp_func_suggest(const char *name) {
  char key[MAX_NAME];
  if (!name || !lower_name(name, key, sizeof key)) return NULL;
  pthread_once(&by_name_once, build_index);
  dp_closest near;
  dp_closest_init(&near, key);
  for (int i = 0; i < DP_F_COUNT_ + NALIASES; i++) {
    /* Operators have names ("eq", "is_null") for the binder, not for users;
    ** MOD and CONCAT are real functions too. */
    const dp_func *fn = &funcs[by_name[i].id];
    if (fn->op && fn->id != DP_F_MOD && fn->id != DP_F_CONCAT) continue;
    dp_closest_add(&near, by_name[i].name); /* ties: the first in sorted order wins */
  }
  return near.best_dist == 0 ? NULL : near.best;
}

/* ---- interned parameter types ----
** Parameter types are these statics (nullable, as the contract says) or an
** argument's own, so that picking them allocates nothing per type. */

#define DEC_(p, s) {.kind = DP_T_DECIMAL, .precision = p, .scale = s}
#define DEC_ROW_(p)                                                                          \
  {DEC_(p, 0), DEC_(p, 1), DEC_(p, 2), DEC_(p, 3), DEC_(p, 4), DEC_(p, 5), DEC_(p, 6),       \
   DEC_(p, 7), DEC_(p, 8), DEC_(p, 9), DEC_(p, 10), DEC_(p, 11), DEC_(p, 12), DEC_(p, 13),   \
   DEC_(p, 14), DEC_(p, 15), DEC_(p, 16), DEC_(p, 17), DEC_(p, 18), DEC_(p, 19), DEC_(p, 20), \
   DEC_(p, 21), DEC_(p, 22), DEC_(p, 23), DEC_(p, 24), DEC_(p, 25), DEC_(p, 26), DEC_(p, 27), \
   DEC_(p, 28), DEC_(p, 29), DEC_(p, 30), DEC_(p, 31), DEC_(p, 32), DEC_(p, 33), DEC_(p, 34), \
   DEC_(p, 35), DEC_(p, 36), DEC_(p, 37), DEC_(p, 38)}
static const dp_type decimal_types[MAX_DECIMAL + 1][MAX_DECIMAL + 1] = {
    DEC_ROW_(0),  DEC_ROW_(1),  DEC_ROW_(2),  DEC_ROW_(3),  DEC_ROW_(4),  DEC_ROW_(5),
    DEC_ROW_(6),  DEC_ROW_(7),  DEC_ROW_(8),  DEC_ROW_(9),  DEC_ROW_(10), DEC_ROW_(11),
    DEC_ROW_(12), DEC_ROW_(13), DEC_ROW_(14), DEC_ROW_(15), DEC_ROW_(16), DEC_ROW_(17),
    DEC_ROW_(18), DEC_ROW_(19), DEC_ROW_(20), DEC_ROW_(21), DEC_ROW_(22), DEC_ROW_(23),
    DEC_ROW_(24), DEC_ROW_(25), DEC_ROW_(26), DEC_ROW_(27), DEC_ROW_(28), DEC_ROW_(29),
    DEC_ROW_(30), DEC_ROW_(31), DEC_ROW_(32), DEC_ROW_(33), DEC_ROW_(34), DEC_ROW_(35),
    DEC_ROW_(36), DEC_ROW_(37), DEC_ROW_(38),
};
#undef DEC_ROW_
#undef DEC_

#define PREC_(k, p) {.kind = k, .precision = p}
#define PREC_ROW_(k) \
  {PREC_(k, 0), PREC_(k, 1), PREC_(k, 2), PREC_(k, 3), PREC_(k, 4), \
   PREC_(k, 5), PREC_(k, 6), PREC_(k, 7), PREC_(k, 8), PREC_(k, 9)}
static const dp_type time_types[10] = PREC_ROW_(DP_T_TIME);
static const dp_type timestamp_types[10] = PREC_ROW_(DP_T_TIMESTAMP);
static const dp_type ltz_types[10] = PREC_ROW_(DP_T_TIMESTAMP_LTZ);
#undef PREC_ROW_
#undef PREC_

static int clamp_precision(int p) { return p < 0 ? 0 : p > 9 ? 9 : p; }

/* The static equal to t up to nullability (and string length), or NULL for
** ROW, ARRAY and MAP. */
static const dp_type *intern(const dp_type *t) {
  switch (t->kind) {
  case DP_T_DECIMAL:
    if (t->precision > MAX_DECIMAL || t->scale > t->precision) return NULL;
    return &decimal_types[t->precision][t->scale];
  case DP_T_TIME: return &time_types[clamp_precision(t->precision)];
  case DP_T_TIMESTAMP: return &timestamp_types[clamp_precision(t->precision)];
  case DP_T_TIMESTAMP_LTZ: return &ltz_types[clamp_precision(t->precision)];
  case DP_T_ROW:
  case DP_T_ARRAY:
  case DP_T_MAP: return NULL;
  default: return dp_type_of(t->kind);
  }
}

static const dp_type *decimal_of(int precision, int scale) {
  return &decimal_types[precision][scale];
}

/* ---- resolver helpers ---- */

static const dp_type *fail(rctx *c, const char *fmt, ...)
    DP_PRINTF(2, 3)
    ;
static const dp_type *fail(rctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  c->why = dp_arena_vprintf(c->a, fmt, ap);
  va_end(ap);
  return NULL;
}

/* The type's spelling without " NOT NULL": messages talk about kinds. */
static const char *tname(rctx *c, const dp_type *t) {
  const dp_type *bare = dp_type_with_nullability(c->a, t, false);
  const char *s = bare ? dp_type_format(c->a, bare) : NULL;
  return s ? s : "?";
}

static void upper_into(char *buf, size_t cap, const char *s) {
  size_t i = 0;
  for (; s[i] && i + 1 < cap; i++) buf[i] = s[i] >= 'a' && s[i] <= 'z' ? (char)(s[i] - 'a' + 'A') : s[i];
  buf[i] = '\0';
}

/* Upper-case function name for messages ("SUBSTRING"), in the arena. */
static const char *uname(rctx *c) {
  char buf[MAX_NAME];
  upper_into(buf, sizeof buf, c->fn->name);
  const char *s = dp_arena_strdup(c->a, buf);
  return s ? s : c->fn->name;
}

static bool is_null_kind(const dp_type *t) { return t->kind == DP_T_NULL; }
static bool is_float(const dp_type *t) { return t->kind == DP_T_FLOAT || t->kind == DP_T_DOUBLE; }
static bool is_composite(const dp_type *t) {
  return t->kind == DP_T_ROW || t->kind == DP_T_ARRAY || t->kind == DP_T_MAP;
}
/* May < and > compare values of this type? */
static bool is_ordered(const dp_type *t) { return !is_composite(t); }

/* Argument i will be cast to `target` (NULL or equal: left alone).  Composite
** targets must be reachable from the argument types, which outlive the call. */
static void set_param(rctx *c, int i, const dp_type *target) {
  const dp_type *arg = c->args[i];
  if (!target || dp_type_equal(arg, target)) {
    c->params[i] = NULL;
    return;
  }
  const dp_type *stable = intern(target);
  if (!stable) {
    for (int j = 0; j < c->nargs && !stable; j++)
      if (dp_type_equal(c->args[j], target)) stable = c->args[j];
    if (!stable && (target == arg->elem || target == arg->value)) stable = target;
  }
  c->params[i] = stable ? stable : target;
}

/* The type argument i has once cast. */
static const dp_type *eff(rctx *c, int i) { return c->params[i] ? c->params[i] : c->args[i]; }

/* Common type of arguments [from, to) by dp_type_common; untyped NULLs join
** anything.  `comparison` also lets a STRING meet a number or a date/time,
** which it is then read as (ts > '2024-01-01').  NULL with *bad set to the
** argument that does not fit; the NULL type when all are untyped NULLs. */
static const dp_type *common_of(rctx *c, int from, int to, int step, bool comparison, int *bad) {
  const dp_type *t = NULL;
  for (int i = from; i < to; i += step) {
    const dp_type *x = c->args[i];
    if (is_null_kind(x)) continue;
    if (!t) {
      t = x;
      continue;
    }
    const dp_type *u = dp_type_common(c->a, t, x);
    if (!u && comparison) {
      if (dp_type_is_string(t) && (dp_type_is_numeric(x) || dp_type_is_temporal(x)))
        u = x;
      else if (dp_type_is_string(x) && (dp_type_is_numeric(t) || dp_type_is_temporal(t)))
        u = t;
    }
    if (!u) {
      *bad = i;
      return NULL;
    }
    t = u;
  }
  return t ? t : dp_type_of(DP_T_NULL);
}

static const char *ordinal(rctx *c, int i) {
  const char *s = dp_arena_printf(c->a, "argument %d", i + 1);
  return s ? s : "an argument";
}

/* ---- `sig`: parameter classes read from the signature ---- */

enum {
  C_ANY = 1u << 0, C_STRING = 1u << 1, C_BYTES = 1u << 2, C_BOOLEAN = 1u << 3,
  C_INTEGER = 1u << 4, C_NUMERIC = 1u << 5, C_DOUBLE = 1u << 6, C_DATE = 1u << 7,
  C_TIME = 1u << 8, C_TIMESTAMP = 1u << 9, C_INTERVAL = 1u << 10, C_ARRAY = 1u << 11,
  C_MAP = 1u << 12, C_UNIT = 1u << 13,
};

static const struct class_name {
  const char *word;
  unsigned bit;
} class_names[] = {
    {"ANY", C_ANY},         {"STRING", C_STRING},       {"BYTES", C_BYTES},
    {"BOOLEAN", C_BOOLEAN}, {"INTEGER", C_INTEGER},     {"NUMERIC", C_NUMERIC},
    {"DOUBLE", C_DOUBLE},   {"DATE", C_DATE},           {"TIME", C_TIME},
    {"TIMESTAMP", C_TIMESTAMP}, {"INTERVAL", C_INTERVAL}, {"ARRAY", C_ARRAY},
    {"MAP", C_MAP},         {"UNIT", C_UNIT},
};

typedef struct sig_param {
  unsigned mask;   /* C_* alternatives */
  unsigned first;  /* the alternative written first: an untyped NULL becomes it */
  bool optional;
} sig_param;

typedef struct sig_info {
  int n;
  bool variadic;   /* the last parameter repeats */
  sig_param p[MAX_SIG_PARAMS];
  const char *params_text; /* "(STRING, INTEGER start [, INTEGER length])" */
  int params_len;
} sig_info;

static bool is_upper(char ch) { return (ch >= 'A' && ch <= 'Z') || ch == '_'; }

/* Parse "name(P, P [, P [, P]])" or "name(P, ...)"; false when malformed. */
static bool parse_sig(const char *sig, sig_info *out) {
  memset(out, 0, sizeof *out);
  const char *s = sig ? strchr(sig, '(') : NULL;
  if (!s) return false;
  out->params_text = s;
  int depth = 0;
  s++;
  for (;;) {
    while (*s == ' ') s++;
    if (*s == ')') {
      if (depth != 0) return false;
      out->params_len = (int)(s + 1 - out->params_text);
      return true;
    }
    if (*s == '\0') return false;
    if (*s == '[') {
      depth++;
      s++;
    } else if (*s == ']') {
      if (--depth < 0) return false;
      s++;
    } else if (*s == ',') {
      s++;
    } else if (strncmp(s, "...", 3) == 0) {
      if (out->n == 0) return false;
      out->variadic = true;
      s += 3;
    } else {
      if (out->n == MAX_SIG_PARAMS || !is_upper(*s)) return false;
      sig_param *p = &out->p[out->n++];
      p->optional = depth > 0;
      for (;;) {
        const char *w = s;
        while (is_upper(*s)) s++;
        unsigned bit = 0;
        for (size_t k = 0; k < sizeof class_names / sizeof class_names[0]; k++)
          if (strlen(class_names[k].word) == (size_t)(s - w) &&
              strncmp(class_names[k].word, w, (size_t)(s - w)) == 0)
            bit = class_names[k].bit;
        if (!bit) return false;
        if (!p->mask) p->first = bit;
        p->mask |= bit;
        if (*s != '|') break;
        s++;
      }
      /* an optional lower-case parameter name */
      while (*s == ' ' || (*s >= 'a' && *s <= 'z') || *s == '_') s++;
    }
  }
}

/* The type an untyped NULL (or a coerced value) takes for a class. */
static const dp_type *class_type(unsigned bit) {
  switch (bit) {
  case C_STRING:
  case C_UNIT: return dp_type_of(DP_T_STRING);
  case C_BYTES: return dp_type_of(DP_T_BYTES);
  case C_BOOLEAN: return dp_type_of(DP_T_BOOLEAN);
  case C_INTEGER:
  case C_NUMERIC: return dp_type_of(DP_T_INT);
  case C_DOUBLE: return dp_type_of(DP_T_DOUBLE);
  case C_DATE: return dp_type_of(DP_T_DATE);
  case C_TIME: return dp_type_of(DP_T_TIME);
  case C_TIMESTAMP: return dp_type_of(DP_T_TIMESTAMP);
  case C_INTERVAL: return dp_type_of(DP_T_INTERVAL_DT);
  default: return NULL;
  }
}

static bool class_accepts(unsigned bit, const dp_type *t) {
  switch (bit) {
  case C_ANY: return true;
  case C_STRING:
  case C_UNIT: return t->kind == DP_T_STRING;
  case C_BYTES: return t->kind == DP_T_BYTES;
  case C_BOOLEAN: return t->kind == DP_T_BOOLEAN;
  case C_INTEGER: return dp_type_is_integer(t);
  case C_NUMERIC:
  case C_DOUBLE: return dp_type_is_numeric(t);
  case C_DATE: return t->kind == DP_T_DATE;
  case C_TIME: return t->kind == DP_T_TIME;
  case C_TIMESTAMP: return dp_type_is_timestamp(t);
  case C_INTERVAL: return dp_type_is_interval(t);
  case C_ARRAY: return t->kind == DP_T_ARRAY;
  case C_MAP: return t->kind == DP_T_MAP;
  default: return false;
  }
}

/* Check argument i against parameter p and record its cast; false when it
** does not fit. */
static bool check_param(rctx *c, int i, const sig_param *p) {
  const dp_type *t = c->args[i];
  if (is_null_kind(t)) {
    set_param(c, i, class_type(p->first));
    return true;
  }
  bool single = (p->mask & (p->mask - 1)) == 0;
  if (single && p->mask == C_DOUBLE && dp_type_is_numeric(t)) {
    set_param(c, i, dp_type_of(DP_T_DOUBLE));
    return true;
  }
  /* DATE parameters (date_add, datediff) take timestamps and strings too,
  ** as Spark does: the value is cast to DATE. */
  if (single && p->mask == C_DATE &&
      (t->kind == DP_T_DATE || dp_type_is_timestamp(t) || t->kind == DP_T_STRING)) {
    set_param(c, i, dp_type_of(DP_T_DATE));
    return true;
  }
  for (unsigned bit = 1; bit <= C_UNIT; bit <<= 1)
    if ((p->mask & bit) && class_accepts(bit, t)) {
      c->params[i] = NULL;
      return true;
    }
  return false;
}

static const dp_type *sig_result(rctx *c) {
  switch (rules[c->fn->id].result) {
  case R_STRING: return dp_type_of(DP_T_STRING);
  case R_BYTES: return dp_type_of(DP_T_BYTES);
  case R_BOOLEAN: return dp_type_of(DP_T_BOOLEAN);
  case R_INT: return dp_type_of(DP_T_INT);
  case R_BIGINT: return dp_type_of(DP_T_BIGINT);
  case R_DOUBLE: return dp_type_of(DP_T_DOUBLE);
  case R_DATE: return dp_type_of(DP_T_DATE);
  case R_TS3: return dp_type_timestamp(c->a, DP_T_TIMESTAMP, 3);
  case R_LTZ3: return dp_type_timestamp(c->a, DP_T_TIMESTAMP_LTZ, 3);
  case R_TIME0: return &time_types[0];
  case R_ARG0:
  case R_ARG2: {
    int i = rules[c->fn->id].result == R_ARG0 ? 0 : 2;
    if (i >= c->nargs) return fail(c, "%s needs argument %d", uname(c), i + 1);
    const dp_type *t = eff(c, i);
    if (is_null_kind(t))
      return fail(c, "%s of an untyped NULL has no type; CAST the NULL to the type you mean",
                  uname(c));
    return t;
  }
  case R_TSARG0: {
    const dp_type *t = c->nargs > 0 ? c->args[0] : NULL;
    dp_type_kind k = t && t->kind == DP_T_TIMESTAMP_LTZ ? DP_T_TIMESTAMP_LTZ : DP_T_TIMESTAMP;
    return dp_type_timestamp(c->a, k, 3);
  }
  case R_STRARRAY: {
    const dp_type *elem = dp_type_of(DP_T_STRING);
    return dp_type_array(c->a, elem);
  }
  case R_NONE: break;
  }
  return fail(c, "internal: %s has no result rule", c->fn->name);
}

static const dp_type *resolve_sig(rctx *c) {
  sig_info si;
  if (!parse_sig(c->fn->signature, &si))
    return fail(c, "internal: the signature of %s does not parse", c->fn->name);
  int required = 0;
  for (int i = 0; i < si.n; i++) required += !si.p[i].optional;
  if (required != c->fn->min_args || (si.variadic ? -1 : si.n) != c->fn->max_args)
    return fail(c, "internal: the signature of %s disagrees with its argument counts", c->fn->name);
  for (int i = 0; i < c->nargs; i++) {
    if (si.n == 0) break;
    const sig_param *p = i < si.n ? &si.p[i] : si.variadic ? &si.p[si.n - 1] : NULL;
    if (!p) break;
    if (!check_param(c, i, p)) {
      const dp_type *want = class_type(p->first);
      bool castable = want && dp_type_can_cast(c->args[i], want);
      return fail(c, "%s expects %.*s; %s is %s%s%s%s", uname(c), si.params_len, si.params_text,
                  ordinal(c, i), tname(c, c->args[i]), castable ? ": CAST it to " : "",
                  castable ? tname(c, want) : "", castable ? " if that is what you mean" : "");
    }
  }
  return sig_result(c);
}

/* ---- arithmetic ---- */

static int integer_digits(dp_type_kind k) {
  switch (k) {
  case DP_T_TINYINT: return 3;
  case DP_T_SMALLINT: return 5;
  case DP_T_INT: return 10;
  default: return 19;
  }
}

/* Flink's (and SQL Server's) rule when a result needs more than 38 digits:
** keep the integer digits, give up fraction digits down to 6. */
static const dp_type *decimal_adjusted(rctx *c, int precision, int scale) {
  if (precision > MAX_DECIMAL) {
    int whole = precision - scale;
    int min_scale = scale < 6 ? scale : 6;
    scale = MAX_DECIMAL - whole > min_scale ? MAX_DECIMAL - whole : min_scale;
    precision = MAX_DECIMAL;
  }
  if (precision < 1) precision = 1;
  if (scale > precision) scale = precision;
  return dp_type_decimal(c->a, precision, scale);
}

/* x op y for two numbers (either may be an untyped NULL taking the other's
** type).  Casts: floats meet as FLOAT or DOUBLE; integers as the wider one;
** an integer meeting a DECIMAL becomes its exact DECIMAL(3|5|10|19, 0) while
** DECIMAL operands keep their own scale (the kernel aligns them). */
static const dp_type *numeric_arith(rctx *c, dp_func_id id, const dp_type *x, const dp_type *y) {
  if (is_float(x) || is_float(y)) {
    bool dbl = x->kind == DP_T_DOUBLE || y->kind == DP_T_DOUBLE || x->kind == DP_T_DECIMAL ||
               y->kind == DP_T_DECIMAL;
    const dp_type *r = dp_type_of(dbl ? DP_T_DOUBLE : DP_T_FLOAT);
    set_param(c, 0, r);
    set_param(c, 1, r);
    return r;
  }
  if (x->kind == DP_T_DECIMAL || y->kind == DP_T_DECIMAL) {
    int p1 = x->kind == DP_T_DECIMAL ? x->precision : integer_digits(x->kind);
    int s1 = x->kind == DP_T_DECIMAL ? x->scale : 0;
    int p2 = y->kind == DP_T_DECIMAL ? y->precision : integer_digits(y->kind);
    int s2 = y->kind == DP_T_DECIMAL ? y->scale : 0;
    set_param(c, 0, decimal_of(p1, s1));
    set_param(c, 1, decimal_of(p2, s2));
    int hi_scale = s1 > s2 ? s1 : s2;
    switch (id) {
    case DP_F_ADD:
    case DP_F_SUBTRACT: {
      int whole = p1 - s1 > p2 - s2 ? p1 - s1 : p2 - s2;
      return decimal_adjusted(c, whole + hi_scale + 1, hi_scale);
    }
    case DP_F_MULTIPLY: return decimal_adjusted(c, p1 + p2 + 1, s1 + s2);
    case DP_F_DIVIDE: {
      int scale = s1 + p2 + 1 > 6 ? s1 + p2 + 1 : 6;
      return decimal_adjusted(c, p1 - s1 + s2 + scale, scale);
    }
    default: { /* MOD: the result is smaller than the divisor */
      if (s1 == 0 && s2 == 0) return dp_type_decimal(c->a, p2, 0);
      int whole = p1 - s1 < p2 - s2 ? p1 - s1 : p2 - s2;
      return decimal_adjusted(c, whole + hi_scale, hi_scale);
    }
    }
  }
  /* Integers: the wider type, also for / (integer division, as in Flink)
  ** and % (both operands meet in the wider type, so the result is it too). */
  const dp_type *r = dp_type_of(x->kind >= y->kind ? x->kind : y->kind);
  set_param(c, 0, r);
  set_param(c, 1, r);
  return r;
}

static const char *arith_usage(dp_func_id id) {
  switch (id) {
  case DP_F_ADD:
    return "+ adds two numbers, an INTERVAL to a DATE, TIME or TIMESTAMP, or two INTERVALs of "
           "the same kind";
  case DP_F_SUBTRACT:
    return "- subtracts two numbers, an INTERVAL from a DATE, TIME or TIMESTAMP, two INTERVALs "
           "of the same kind, or two dates/times of the same kind (giving an INTERVAL)";
  case DP_F_MULTIPLY: return "* multiplies two numbers, or an INTERVAL by a number";
  case DP_F_DIVIDE: return "/ divides two numbers, or an INTERVAL by a number";
  default: return "% takes two numbers";
  }
}

/* DATE|TIME|TIMESTAMP ± INTERVAL. */
static const dp_type *temporal_shift(rctx *c, const dp_type *t, const dp_type *iv) {
  switch (t->kind) {
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ: return t;
  case DP_T_DATE:
    /* A DATE stays a DATE, as in Flink (Calcite): DATE + INTERVAL '1' DAY is
    ** the next day; the time part of a day-time interval is dropped.  CAST
    ** the DATE to TIMESTAMP to keep hours. */
    (void)iv;
    return t;
  case DP_T_TIME:
    if (iv->kind == DP_T_INTERVAL_DT) return t;
    return fail(c, "a TIME cannot move by an INTERVAL YEAR TO MONTH; use an INTERVAL DAY TO SECOND");
  default: return NULL;
  }
}

static const dp_type *resolve_arith(rctx *c) {
  dp_func_id id = (dp_func_id)c->fn->id;
  const dp_type *x = c->args[0], *y = c->args[1];
  if (is_null_kind(x) && is_null_kind(y))
    return fail(c, "both operands are untyped NULLs; CAST one of them to the type you mean");
  /* An untyped NULL takes the other operand's type. */
  if (is_null_kind(x)) {
    set_param(c, 0, y);
    x = eff(c, 0);
  }
  if (is_null_kind(y)) {
    set_param(c, 1, x);
    y = eff(c, 1);
  }
  if (dp_type_is_numeric(x) && dp_type_is_numeric(y)) return numeric_arith(c, id, x, y);
  bool xt = dp_type_is_temporal(x), yt = dp_type_is_temporal(y);
  bool xi = dp_type_is_interval(x), yi = dp_type_is_interval(y);
  switch (id) {
  case DP_F_ADD:
  case DP_F_SUBTRACT:
    if (xt && yi) return temporal_shift(c, x, y);
    if (id == DP_F_ADD && xi && yt) return temporal_shift(c, y, x);
    if (xi && yi) {
      if (x->kind != y->kind)
        return fail(c, "an INTERVAL YEAR TO MONTH and an INTERVAL DAY TO SECOND cannot be combined");
      return dp_type_of(x->kind);
    }
    if (id == DP_F_SUBTRACT && xt && yt) {
      if (x->kind == y->kind) return dp_type_of(DP_T_INTERVAL_DT);
      if (x->kind == DP_T_DATE && dp_type_is_timestamp(y)) {
        set_param(c, 0, y);
        return dp_type_of(DP_T_INTERVAL_DT);
      }
      if (y->kind == DP_T_DATE && dp_type_is_timestamp(x)) {
        set_param(c, 1, x);
        return dp_type_of(DP_T_INTERVAL_DT);
      }
      return fail(c, "the two operands are different kinds of time; CAST one to the other's type "
                     "(TIMESTAMP_LTZ is an instant, TIMESTAMP a wall-clock time)");
    }
    break;
  case DP_F_MULTIPLY:
    if (xi && dp_type_is_numeric(y)) return dp_type_of(x->kind);
    if (yi && dp_type_is_numeric(x)) return dp_type_of(y->kind);
    break;
  case DP_F_DIVIDE:
    if (xi && dp_type_is_numeric(y)) return dp_type_of(x->kind);
    break;
  default: break;
  }
  return fail(c, "%s", arith_usage(id));
}

/* ---- comparisons and friends ---- */

static bool is_ordering(dp_func_id id) {
  return id == DP_F_LT || id == DP_F_LE || id == DP_F_GT || id == DP_F_GE || id == DP_F_GREATEST ||
         id == DP_F_LEAST;
}

/* Cast arguments [from, to) by step to t. */
static void cast_all(rctx *c, int from, int to, int step, const dp_type *t) {
  for (int i = from; i < to; i += step) set_param(c, i, t);
}

static const dp_type *no_common(rctx *c, int bad, int from) {
  const dp_type *first = NULL;
  for (int i = from; i < bad && !first; i++)
    if (!is_null_kind(c->args[i])) first = c->args[i];
  return fail(c, "%s is %s, which does not meet %s; CAST one of them to the other's type",
              ordinal(c, bad), tname(c, c->args[bad]), first ? tname(c, first) : "the others");
}

/* Comparison operands are cast to their common type (the binder gives an
** untyped literal the other side's type first, so amount > 100 needs none). */
static void cast_compared(rctx *c, const dp_type *t) {
  if (!is_null_kind(t)) cast_all(c, 0, c->nargs, 1, t);
}

static const dp_type *resolve_compare(rctx *c) {
  int bad = -1;
  const dp_type *t = common_of(c, 0, 2, 1, true, &bad);
  if (!t) return no_common(c, bad, 0);
  if (is_ordering((dp_func_id)c->fn->id) && !is_ordered(t))
    return fail(c, "values of type %s have no order; compare them with = or <>, or compare "
                   "their fields",
                tname(c, t));
  cast_compared(c, t);
  return dp_type_of(DP_T_BOOLEAN);
}

static const dp_type *resolve_in(rctx *c) {
  int bad = -1;
  const dp_type *t = common_of(c, 0, c->nargs, 1, true, &bad);
  if (!t) return no_common(c, bad, 0);
  cast_compared(c, t);
  return dp_type_of(DP_T_BOOLEAN);
}

static const dp_type *resolve_common(rctx *c) {
  int bad = -1;
  const dp_type *t = common_of(c, 0, c->nargs, 1, false, &bad);
  if (!t) return no_common(c, bad, 0);
  if (is_null_kind(t))
    return fail(c, "every argument is an untyped NULL; CAST one of them to the type you mean");
  if (is_ordering((dp_func_id)c->fn->id) && !is_ordered(t))
    return fail(c, "values of type %s have no order", tname(c, t));
  cast_all(c, 0, c->nargs, 1, t);
  return t;
}

static const dp_type *resolve_if(rctx *c) {
  const dp_type *cond = c->args[0];
  if (is_null_kind(cond))
    set_param(c, 0, dp_type_of(DP_T_BOOLEAN));
  else if (cond->kind != DP_T_BOOLEAN)
    return fail(c, "IF expects (BOOLEAN, ANY then, ANY else); argument 1 is %s: write a "
                   "condition such as x > 0",
                tname(c, cond));
  int bad = -1;
  const dp_type *t = common_of(c, 1, 3, 1, false, &bad);
  if (!t) return no_common(c, bad, 1);
  if (is_null_kind(t))
    return fail(c, "both branches are untyped NULLs; CAST one of them to the type you mean");
  cast_all(c, 1, 3, 1, t);
  bool not_null = c->args[1]->not_null && c->args[2]->not_null;
  return dp_type_with_nullability(c->a, t, not_null);
}

static const dp_type *resolve_bitwise(rctx *c) {
  const dp_type *t = NULL;
  for (int i = 0; i < c->nargs; i++) {
    const dp_type *x = c->args[i];
    if (is_null_kind(x)) continue;
    if (!dp_type_is_integer(x))
      return fail(c, "bit operations take integers; %s is %s", ordinal(c, i), tname(c, x));
    if (!t || x->kind > t->kind) t = dp_type_of(x->kind);
  }
  if (!t) t = dp_type_of(DP_T_INT);
  cast_all(c, 0, c->nargs, 1, t);
  return t;
}

static const dp_type *resolve_concat(rctx *c) {
  dp_type_kind kind = DP_T_NULL;
  for (int i = 0; i < c->nargs; i++) {
    const dp_type *x = c->args[i];
    if (is_null_kind(x)) continue;
    if (x->kind != DP_T_STRING && x->kind != DP_T_BYTES)
      return fail(c, "|| and CONCAT join STRINGs (or BYTES); %s is %s: CAST it to STRING",
                  ordinal(c, i), tname(c, x));
    if (kind == DP_T_NULL)
      kind = x->kind;
    else if (kind != x->kind)
      return fail(c, "|| and CONCAT cannot mix STRING and BYTES; %s is %s: CAST it", ordinal(c, i),
                  tname(c, x));
  }
  if (kind == DP_T_NULL) kind = DP_T_STRING;
  const dp_type *t = dp_type_of(kind);
  for (int i = 0; i < c->nargs; i++)
    if (is_null_kind(c->args[i])) set_param(c, i, t);
  return t;
}

/* ---- collections ---- */

static const dp_type *resolve_element_at(rctx *c) {
  const dp_type *coll = c->args[0], *key = c->args[1];
  if (coll->kind == DP_T_ARRAY) {
    if (is_null_kind(key))
      set_param(c, 1, dp_type_of(DP_T_INT));
    else if (!dp_type_is_integer(key))
      return fail(c, "an ARRAY is indexed by an integer (1-based), not by %s", tname(c, key));
    return coll->elem;
  }
  if (coll->kind == DP_T_MAP) {
    if (is_null_kind(key) || (!dp_type_equal(key, coll->elem) && dp_type_can_coerce(key, coll->elem)))
      set_param(c, 1, coll->elem);
    else if (!dp_type_equal(key, coll->elem))
      return fail(c, "the keys of this MAP are %s, not %s; CAST the key", tname(c, coll->elem),
                  tname(c, key));
    return coll->value;
  }
  return fail(c, "ELEMENT_AT (and [..]) reads an ARRAY or a MAP, not %s", tname(c, coll));
}

static const dp_type *resolve_array_contains(rctx *c) {
  const dp_type *arr = c->args[0], *x = c->args[1];
  if (arr->kind != DP_T_ARRAY)
    return fail(c, "ARRAY_CONTAINS expects (ARRAY, element); argument 1 is %s", tname(c, arr));
  if (is_null_kind(x) || (!dp_type_equal(x, arr->elem) && dp_type_can_coerce(x, arr->elem)))
    set_param(c, 1, arr->elem);
  else if (!dp_type_equal(x, arr->elem))
    return fail(c, "the elements are %s, not %s; CAST the value to %s", tname(c, arr->elem),
                tname(c, x), tname(c, arr->elem));
  return dp_type_of(DP_T_BOOLEAN);
}

static const dp_type *resolve_map_parts(rctx *c) {
  const dp_type *m = c->args[0];
  if (m->kind != DP_T_MAP) return fail(c, "%s expects a MAP, not %s", uname(c), tname(c, m));
  return dp_type_array(c->a, c->fn->id == DP_F_MAP_KEYS ? m->elem : m->value);
}

static const dp_type *resolve_construct(rctx *c) {
  int bad = -1;
  switch (c->fn->id) {
  case DP_F_ARRAY: {
    const dp_type *t = common_of(c, 0, c->nargs, 1, false, &bad);
    if (!t) return no_common(c, bad, 0);
    if (is_null_kind(t)) return fail(c, "ARRAY of untyped NULLs only; CAST one element");
    cast_all(c, 0, c->nargs, 1, t);
    return dp_type_array(c->a, t);
  }
  case DP_F_MAP: {
    if (c->nargs % 2 != 0)
      return fail(c, "MAP takes key, value pairs; there are %d arguments", c->nargs);
    const dp_type *k = common_of(c, 0, c->nargs, 2, false, &bad);
    if (!k) return no_common(c, bad, 0);
    const dp_type *v = common_of(c, 1, c->nargs, 2, false, &bad);
    if (!v) return no_common(c, bad, 1);
    if (is_null_kind(k)) return fail(c, "MAP keys cannot all be untyped NULLs; CAST one key");
    cast_all(c, 0, c->nargs, 2, k);
    if (!is_null_kind(v)) cast_all(c, 1, c->nargs, 2, v);
    return dp_type_map(c->a, k, v);
  }
  default: { /* ROW */
    dp_field *fields = dp_arena_calloc(c->a, (size_t)c->nargs, sizeof *fields);
    if (!fields) return fail(c, "out of memory");
    for (int i = 0; i < c->nargs; i++) {
      fields[i].name = dp_arena_printf(c->a, "f%d", i);
      fields[i].type = c->args[i];
      if (!fields[i].name) return fail(c, "out of memory");
    }
    return dp_type_row(c->a, c->nargs, fields);
  }
  }
}

/* ---- math with type-dependent results ---- */

static const dp_type *resolve_floorceil(rctx *c) {
  const dp_type *x = c->args[0];
  if (dp_type_is_numeric(x)) {
    if (c->nargs != 1)
      return fail(c, "%s of a number takes one argument; %s(x TO unit) is for dates and times",
                  uname(c), uname(c));
    if (x->kind == DP_T_DECIMAL && x->scale > 0) {
      int p = x->precision - x->scale + 1;
      return dp_type_decimal(c->a, p > MAX_DECIMAL ? MAX_DECIMAL : p, 0);
    }
    return x;
  }
  if (dp_type_is_temporal(x)) {
    if (c->nargs != 2)
      return fail(c, "%s of a %s needs a unit: write %s(x TO HOUR)", uname(c), tname(c, x),
                  uname(c));
    const dp_type *u = c->args[1];
    if (is_null_kind(u))
      set_param(c, 1, dp_type_of(DP_T_STRING));
    else if (u->kind != DP_T_STRING)
      return fail(c, "the unit of %s must be a unit name such as HOUR", uname(c));
    return x;
  }
  return fail(c, "%s takes a number, or a DATE, TIME or TIMESTAMP with a unit; argument 1 is %s",
              uname(c), tname(c, x));
}

static const dp_type *resolve_round(rctx *c) {
  const dp_type *x = c->args[0];
  if (!dp_type_is_numeric(x))
    return fail(c, "%s expects (NUMERIC [, INTEGER digits]); argument 1 is %s", uname(c), tname(c, x));
  if (c->nargs == 2) {
    if (is_null_kind(c->args[1]))
      set_param(c, 1, dp_type_of(DP_T_INT));
    else if (!dp_type_is_integer(c->args[1]))
      return fail(c, "%s expects (NUMERIC [, INTEGER digits]); argument 2 is %s", uname(c),
                  tname(c, c->args[1]));
  }
  if (x->kind != DP_T_DECIMAL || x->scale == 0) return x;
  int p = x->precision, s = x->scale;
  if (c->fn->id == DP_F_ROUND) {
    /* Rounding may carry into one more integer digit (9.99 -> 10.0).  With a
    ** digits argument its value is unknown here: DECIMAL(p + 1, s) holds any. */
    if (c->nargs == 1) return dp_type_decimal(c->a, p - s + 1 > MAX_DECIMAL ? MAX_DECIMAL : p - s + 1, 0);
    return dp_type_decimal(c->a, p + 1 > MAX_DECIMAL ? MAX_DECIMAL : p + 1, s);
  }
  if (c->nargs == 1) return dp_type_decimal(c->a, p - s < 1 ? 1 : p - s, 0);
  return x;
}

/* ---- aggregates and window functions ---- */

static const dp_type *untyped_null_arg(rctx *c) {
  return fail(c, "%s of an untyped NULL has no type; CAST the NULL to the type you mean", uname(c));
}

static const dp_type *resolve_sum(rctx *c) {
  const dp_type *x = c->args[0];
  if (is_null_kind(x)) return untyped_null_arg(c);
  if (dp_type_is_integer(x)) return dp_type_of(DP_T_BIGINT);
  if (x->kind == DP_T_DECIMAL) return dp_type_decimal(c->a, MAX_DECIMAL, x->scale);
  if (is_float(x)) return dp_type_of(DP_T_DOUBLE);
  if (dp_type_is_interval(x)) return dp_type_of(x->kind);
  return fail(c, "SUM adds numbers or INTERVALs, not %s", tname(c, x));
}

static const dp_type *resolve_avg(rctx *c) {
  const dp_type *x = c->args[0];
  if (is_null_kind(x)) return untyped_null_arg(c);
  if (dp_type_is_integer(x) || is_float(x)) return dp_type_of(DP_T_DOUBLE);
  if (x->kind == DP_T_DECIMAL) {
    int p = x->precision + 4, s = x->scale + 4;
    return dp_type_decimal(c->a, p > MAX_DECIMAL ? MAX_DECIMAL : p, s > MAX_DECIMAL ? MAX_DECIMAL : s);
  }
  return fail(c, "AVG averages numbers, not %s", tname(c, x));
}

static const dp_type *resolve_minmax(rctx *c) {
  const dp_type *x = c->args[0];
  if (is_null_kind(x)) return untyped_null_arg(c);
  if (!is_ordered(x)) return fail(c, "values of type %s have no order", tname(c, x));
  return x;
}

static const dp_type *resolve_collect(rctx *c) {
  const dp_type *x = c->args[0];
  if (is_null_kind(x)) return untyped_null_arg(c);
  return dp_type_array(c->a, x);
}

/* The common type of two element (or key, value) types: dp_type_common for
** scalars, the same rule inside ARRAY and MAP, equal types otherwise;
** nullable when either is.  NULL when there is none. */
static const dp_type *common_elem(rctx *c, const dp_type *x, const dp_type *y) {
  bool not_null = x->not_null && y->not_null;
  const dp_type *t = NULL;
  if (x->kind == DP_T_ARRAY && y->kind == DP_T_ARRAY) {
    const dp_type *e = common_elem(c, x->elem, y->elem);
    t = e ? dp_type_array(c->a, e) : NULL;
  } else if (x->kind == DP_T_MAP && y->kind == DP_T_MAP) {
    const dp_type *k = common_elem(c, x->elem, y->elem), *v = k ? common_elem(c, x->value, y->value) : NULL;
    t = v ? dp_type_map(c->a, k, v) : NULL;
  } else if (is_composite(x) || is_composite(y)) {
    t = dp_type_equal(x, y) ? x : NULL;
  } else {
    t = dp_type_common(c->a, x, y);
  }
  return t ? dp_type_with_nullability(c->a, t, not_null) : NULL;
}

/* Arguments [from, nargs) are all ARRAYs (MAPs), cast to their common type,
** which is returned (NULL with the reason). */
static const dp_type *common_collections(rctx *c, int from, dp_type_kind kind) {
  const char *what = kind == DP_T_ARRAY ? "ARRAY" : "MAP";
  const dp_type *t = NULL;
  for (int i = from; i < c->nargs; i++) {
    const dp_type *x = c->args[i];
    if (is_null_kind(x)) continue;
    if (x->kind != kind) return fail(c, "%s takes %ss; %s is %s", uname(c), what, ordinal(c, i), tname(c, x));
    const dp_type *u = t ? common_elem(c, t, x) : x;
    if (!u)
      return fail(c, "the %ss of %s have no common type: %s and %s; CAST one", what, uname(c), tname(c, t),
                  tname(c, x));
    t = u;
  }
  if (!t) return fail(c, "%s of untyped NULLs only; CAST one to the %s type you mean", uname(c), what);
  t = dp_type_with_nullability(c->a, t, false);
  for (int i = from; i < c->nargs; i++) set_param(c, i, t);
  return t;
}

static void boolean_or_null(rctx *c, int i) {
  if (is_null_kind(c->args[i])) set_param(c, i, dp_type_of(DP_T_BOOLEAN));
}

/* The array functions that take one ARRAY and other arguments. */
static const dp_type *resolve_array_more(rctx *c, const dp_type *arr) {
  dp_func_id id = (dp_func_id)c->fn->id;
  switch (id) {
  case DP_F_ARRAY_SLICE:
    for (int i = 1; i < c->nargs; i++) {
      if (is_null_kind(c->args[i])) set_param(c, i, dp_type_of(DP_T_INT));
      else if (!dp_type_is_integer(c->args[i]))
        return fail(c, "the offsets of ARRAY_SLICE are integers, not %s", tname(c, c->args[i]));
    }
    return arr;
  case DP_F_ARRAY_SORT:
    if (!is_ordered(arr->elem)) return fail(c, "elements of type %s have no order", tname(c, arr->elem));
    for (int i = 1; i < c->nargs; i++) {
      boolean_or_null(c, i);
      if (!is_null_kind(c->args[i]) && c->args[i]->kind != DP_T_BOOLEAN)
        return fail(c, "the order arguments of ARRAY_SORT are BOOLEANs, not %s", tname(c, c->args[i]));
    }
    return arr;
  case DP_F_ELEMENT: return arr->elem;
  default: { /* ARRAY_APPEND, ARRAY_PREPEND: the element type meets the value's */
    const dp_type *x = c->args[1], *e = arr->elem;
    if (!is_null_kind(x)) {
      e = common_elem(c, arr->elem, x);
      if (!e)
        return fail(c, "the elements are %s, not %s; CAST the value to %s", tname(c, arr->elem), tname(c, x),
                    tname(c, arr->elem));
    } else {
      e = dp_type_with_nullability(c->a, e, false);
    }
    const dp_type *t = dp_type_array(c->a, e);
    if (!t) return fail(c, "out of memory");
    set_param(c, 0, t);
    set_param(c, 1, dp_type_with_nullability(c->a, e, x->not_null));
    return dp_type_with_nullability(c->a, t, arr->not_null);
  }
  }
}

/* Flink's array functions: an ARRAY first; POSITION and REMOVE cast the
** value to the element type; JOIN takes strings. */
static const dp_type *resolve_array_fn(rctx *c) {
  const dp_type *arr = c->args[0];
  dp_func_id id = (dp_func_id)c->fn->id;
  if (id == DP_F_ARRAY_UNION || id == DP_F_ARRAY_EXCEPT || id == DP_F_ARRAY_INTERSECT || id == DP_F_ARRAY_CONCAT)
    return common_collections(c, 0, DP_T_ARRAY);
  if (arr->kind != DP_T_ARRAY)
    return fail(c, "%s expects an ARRAY first, not %s", uname(c), tname(c, arr));
  if (id == DP_F_ARRAY_SLICE || id == DP_F_ARRAY_SORT || id == DP_F_ELEMENT || id == DP_F_ARRAY_APPEND ||
      id == DP_F_ARRAY_PREPEND)
    return resolve_array_more(c, arr);
  if (id == DP_F_ARRAY_POSITION || id == DP_F_ARRAY_REMOVE) {
    const dp_type *x = c->args[1];
    if (is_null_kind(x) || (!dp_type_equal(x, arr->elem) && dp_type_can_coerce(x, arr->elem)))
      set_param(c, 1, arr->elem);
    else if (!dp_type_equal(x, arr->elem))
      return fail(c, "the elements are %s, not %s; CAST the value to %s", tname(c, arr->elem), tname(c, x),
                  tname(c, arr->elem));
  }
  switch (id) {
  case DP_F_ARRAY_POSITION: return dp_type_of(DP_T_INT);
  case DP_F_ARRAY_REMOVE: return dp_type_with_nullability(c->a, arr, arr->not_null);
  case DP_F_ARRAY_MAX:
  case DP_F_ARRAY_MIN:
    if (!is_ordered(arr->elem)) return fail(c, "elements of type %s have no order", tname(c, arr->elem));
    return arr->elem;
  case DP_F_ARRAY_JOIN:
    if (!dp_type_is_string(arr->elem))
      return fail(c, "ARRAY_JOIN joins an ARRAY<STRING>, not %s; CAST it to ARRAY<STRING>", tname(c, arr));
    for (int i = 1; i < c->nargs; i++) {
      if (is_null_kind(c->args[i])) set_param(c, i, dp_type_of(DP_T_STRING));
      else if (!dp_type_is_string(c->args[i]))
        return fail(c, "the delimiter and the replacement of ARRAY_JOIN are STRINGs, not %s", tname(c, c->args[i]));
    }
    return dp_type_of(DP_T_STRING);
  default: return arr;
  }
}

/* MAP_FROM_ARRAYS(keys, values), MAP_ENTRIES(m), MAP_UNION(m, ...). */
static const dp_type *resolve_map_fn(rctx *c) {
  dp_func_id id = (dp_func_id)c->fn->id;
  if (id == DP_F_MAP_UNION) return common_collections(c, 0, DP_T_MAP);
  if (id == DP_F_MAP_ENTRIES) {
    const dp_type *m = c->args[0];
    if (m->kind != DP_T_MAP) return fail(c, "MAP_ENTRIES expects a MAP, not %s", tname(c, m));
    dp_field *fields = dp_arena_calloc(c->a, 2, sizeof *fields);
    if (!fields) return fail(c, "out of memory");
    fields[0] = (dp_field){.name = "key", .type = m->elem};
    fields[1] = (dp_field){.name = "value", .type = m->value};
    const dp_type *row = dp_type_row(c->a, 2, fields);
    return row ? dp_type_array(c->a, row) : fail(c, "out of memory");
  }
  for (int i = 0; i < 2; i++)
    if (c->args[i]->kind != DP_T_ARRAY)
      return fail(c, "MAP_FROM_ARRAYS expects (ARRAY keys, ARRAY values); %s is %s", ordinal(c, i),
                  tname(c, c->args[i]));
  return dp_type_map(c->a, c->args[0]->elem, c->args[1]->elem);
}

/* json_value(j, path) is a STRING; with its clauses (parse_json.c) the type
** of the CAST(NULL AS t) argument.  The defaults are cast by the kernel,
** which turns a failed cast into the ON EMPTY / ON ERROR behaviour. */
static const dp_type *resolve_json_value(rctx *c) {
  if (c->nargs != 2 && c->nargs != 7)
    return fail(c, "JSON_VALUE takes a JSON value and a path, then RETURNING, ON EMPTY and ON ERROR "
                   "clauses: %s", c->fn->signature);
  for (int i = 0; i < 2; i++) {
    if (is_null_kind(c->args[i])) set_param(c, i, dp_type_of(DP_T_STRING));
    else if (!dp_type_is_string(c->args[i]))
      return fail(c, "the %s argument of JSON_VALUE must be a STRING, not %s", i ? "path" : "JSON",
                  tname(c, c->args[i]));
  }
  if (c->nargs == 2) return dp_type_of(DP_T_STRING);
  const dp_type *t = c->args[2];
  if (is_composite(t) || is_null_kind(t))
    return fail(c, "JSON_VALUE returns a scalar: RETURNING %s is not one", tname(c, t));
  return t;
}

/* json_object('NULL'|'ABSENT', k, v, ...) and json_array(mode, v, ...). */
static const dp_type *resolve_json_build(rctx *c) {
  bool object = c->fn->id == DP_F_JSON_OBJECT;
  if (is_null_kind(c->args[0])) set_param(c, 0, dp_type_of(DP_T_STRING));
  else if (!dp_type_is_string(c->args[0]))
    return fail(c, "%s takes its ON NULL mode first ('NULL' or 'ABSENT'), a STRING", uname(c));
  if (object && c->nargs % 2 == 0)
    return fail(c, "JSON_OBJECT takes KEY k VALUE v pairs; a value is missing");
  for (int i = 1; i < c->nargs; i++) {
    bool key = object && i % 2 == 1;
    if (key && !dp_type_is_string(c->args[i]))
      return fail(c, "a key of JSON_OBJECT must be a STRING, not %s", tname(c, c->args[i]));
    if (is_null_kind(c->args[i])) set_param(c, i, dp_type_of(DP_T_STRING));
  }
  return dp_type_of(DP_T_STRING);
}

static const dp_type *resolve_laglead(rctx *c) {
  if (c->nargs >= 2) {
    if (is_null_kind(c->args[1]))
      set_param(c, 1, dp_type_of(DP_T_INT));
    else if (!dp_type_is_integer(c->args[1]))
      return fail(c, "%s expects (ANY [, INTEGER offset [, ANY default]]); the offset is %s",
                  uname(c), tname(c, c->args[1]));
  }
  const dp_type *t = c->args[0];
  if (c->nargs == 3) {
    t = dp_type_common(c->a, c->args[0], c->args[2]);
    if (!t)
      return fail(c, "the default is %s, which does not meet the value's %s; CAST it",
                  tname(c, c->args[2]), tname(c, c->args[0]));
    set_param(c, 0, t);
    set_param(c, 2, t);
  }
  if (is_null_kind(t)) return untyped_null_arg(c);
  /* Rows before the first (after the last) get the default, or NULL. */
  bool not_null = c->nargs == 3 && c->args[0]->not_null && c->args[2]->not_null;
  return dp_type_with_nullability(c->a, t, not_null);
}

/* ---- entry points ---- */

static bool all_not_null(const rctx *c) {
  for (int i = 0; i < c->nargs; i++)
    if (!c->args[i]->not_null) return false;
  return true;
}

static bool any_not_null(const rctx *c) {
  for (int i = 0; i < c->nargs; i++)
    if (c->args[i]->not_null) return true;
  return false;
}

/* Run fn's resolver; the result with its nullability, or NULL with c->why. */
static const dp_type *resolve(rctx *c) {
  const dp_func *fn = c->fn;
  if (c->nargs < fn->min_args || (fn->max_args >= 0 && c->nargs > fn->max_args)) {
    if (fn->max_args < 0)
      return fail(c, "%s takes at least %d argument%s, not %d: %s", uname(c), fn->min_args,
                  fn->min_args == 1 ? "" : "s", c->nargs, fn->signature);
    if (fn->min_args == fn->max_args)
      return fail(c, "%s takes %d argument%s, not %d: %s", uname(c), fn->min_args,
                  fn->min_args == 1 ? "" : "s", c->nargs, fn->signature);
    return fail(c, "%s takes %d to %d arguments, not %d: %s", uname(c), fn->min_args, fn->max_args,
                c->nargs, fn->signature);
  }
  for (int i = 0; i < c->nargs; i++)
    if (!c->args[i]) return fail(c, "internal: argument %d has no type", i + 1);
  const dp_type *t = rules[fn->id].resolve(c);
  if (!t) {
    if (!c->why) c->why = "out of memory";
    return NULL;
  }
  bool not_null;
  switch (rules[fn->id].nulls) {
  case N_ARGS: not_null = all_not_null(c); break;
  case N_ALWAYS: not_null = false; break;
  case N_NEVER: not_null = true; break;
  case N_ANY: not_null = any_not_null(c); break;
  case N_FIRST: not_null = c->nargs > 0 && c->args[0]->not_null; break;
  default: return t; /* N_CUSTOM: the resolver decided */
  }
  const dp_type *r = dp_type_with_nullability(c->a, t, not_null);
  if (!r) c->why = "out of memory";
  return r;
}

static const dp_type *infer_entry(dp_arena *a, const dp_func *fn, int nargs,
                                  const dp_type *const *args, const char **why) {
  const dp_type *one[1];
  const dp_type **params = nargs > 0 ? dp_arena_calloc(a, (size_t)nargs, sizeof *params) : one;
  if (!params) {
    if (why) *why = "out of memory";
    return NULL;
  }
  rctx c = {a, fn, nargs, args, params, NULL};
  const dp_type *t = resolve(&c);
  if (!t && why) *why = c.why;
  return t;
}

int dp_func_param_types(dp_arena *a, const dp_func *fn, int nargs, const dp_type *const *args,
                        const dp_type ***out) {
  *out = NULL;
  if (!a || !fn || nargs < 0 || (nargs > 0 && !args)) return DIPPER_MISUSE;
  bool user = fn->params != NULL; /* a user function: its declared parameter types */
  if (!user && (fn->id < 0 || fn->id >= DP_F_COUNT_)) return DIPPER_MISUSE;
  const dp_type **params = dp_arena_calloc(a, (size_t)(nargs ? nargs : 1), sizeof *params);
  if (!params) return DIPPER_NOMEM;
  if (user) {
    for (int i = 0; i < nargs && i < fn->min_args; i++) params[i] = fn->params[i];
  } else {
    rctx c = {a, fn, nargs, args, params, NULL};
    if (!resolve(&c))
      memset(params, 0, (size_t)(nargs ? nargs : 1) * sizeof *params); /* no signature fits */
  }
  *out = params;
  return DIPPER_OK;
}

/* ---- units ---- */

typedef enum unit_bit {
  U_YEAR = 1u << 0, U_QUARTER = 1u << 1, U_MONTH = 1u << 2, U_WEEK = 1u << 3, U_DAY = 1u << 4,
  U_HOUR = 1u << 5, U_MINUTE = 1u << 6, U_SECOND = 1u << 7, U_MILLISECOND = 1u << 8,
  U_MICROSECOND = 1u << 9, U_NANOSECOND = 1u << 10, U_DOW = 1u << 11, U_DOY = 1u << 12,
  U_EPOCH = 1u << 13,
} unit_bit;

static const struct unit_name {
  const char *name;
  unsigned bit;
} unit_names[] = {
    {"YEAR", U_YEAR},         {"QUARTER", U_QUARTER},         {"MONTH", U_MONTH},
    {"WEEK", U_WEEK},         {"DAY", U_DAY},                 {"HOUR", U_HOUR},
    {"MINUTE", U_MINUTE},     {"SECOND", U_SECOND},           {"MILLISECOND", U_MILLISECOND},
    {"MICROSECOND", U_MICROSECOND}, {"NANOSECOND", U_NANOSECOND}, {"DOW", U_DOW},
    {"DOY", U_DOY},           {"EPOCH", U_EPOCH},
};

#define U_DATE_PARTS (U_YEAR | U_QUARTER | U_MONTH | U_WEEK | U_DAY)
#define U_TIME_PARTS (U_HOUR | U_MINUTE | U_SECOND | U_MILLISECOND | U_MICROSECOND | U_NANOSECOND)

static const char *unit_list(dp_arena *a, unsigned mask) {
  const char *s = "";
  for (size_t i = 0; s && i < sizeof unit_names / sizeof unit_names[0]; i++)
    if (mask & unit_names[i].bit) s = dp_arena_printf(a, "%s%s%s", s, *s ? ", " : "", unit_names[i].name);
  return s ? s : "";
}

const char *dp_func_check_unit(dp_arena *a, const dp_func *fn, const char *unit,
                               const dp_type *operand) {
  if (!fn || !unit || !operand) return NULL;
  char key[MAX_NAME];
  upper_into(key, sizeof key, unit);
  unsigned bit = 0;
  for (size_t i = 0; i < sizeof unit_names / sizeof unit_names[0]; i++)
    if (strcmp(key, unit_names[i].name) == 0) bit = unit_names[i].bit;
  /* What the function can do with each kind of operand. */
  unsigned allowed;
  bool is_date = operand->kind == DP_T_DATE, is_time = operand->kind == DP_T_TIME;
  switch (fn->id) {
  case DP_F_EXTRACT:
    if (is_date)
      allowed = U_DATE_PARTS | U_DOW | U_DOY | U_EPOCH;
    else if (is_time)
      allowed = U_TIME_PARTS | U_EPOCH;
    else if (operand->kind == DP_T_INTERVAL_YM)
      allowed = U_YEAR | U_QUARTER | U_MONTH;
    else if (operand->kind == DP_T_INTERVAL_DT)
      allowed = U_DAY | U_TIME_PARTS | U_EPOCH;
    else
      allowed = U_DATE_PARTS | U_TIME_PARTS | U_DOW | U_DOY | U_EPOCH;
    break;
  case DP_F_FLOOR:
  case DP_F_CEIL:
    allowed = is_date ? U_DATE_PARTS
              : is_time ? U_HOUR | U_MINUTE | U_SECOND | U_MILLISECOND | U_MICROSECOND
                        : U_DATE_PARTS | U_HOUR | U_MINUTE | U_SECOND | U_MILLISECOND | U_MICROSECOND;
    break;
  case DP_F_TIMESTAMPADD:
  case DP_F_TIMESTAMPDIFF:
    /* TIMESTAMPADD keeps a DATE a DATE, so only whole days and coarser fit. */
    allowed = U_DATE_PARTS | U_HOUR | U_MINUTE | U_SECOND | U_MILLISECOND | U_MICROSECOND;
    if (is_date && fn->id == DP_F_TIMESTAMPADD) allowed = U_DATE_PARTS;
    break;
  default: return NULL;
  }
  if (bit & allowed) return NULL;
  char fname[MAX_NAME];
  upper_into(fname, sizeof fname, fn->name);
  const char *kind = dp_type_format(a, dp_type_with_nullability(a, operand, false));
  if (!bit)
    return dp_arena_printf(a, "%s has no unit %s; write one of %s", fname, unit, unit_list(a, allowed));
  if (is_date && (bit & U_TIME_PARTS))
    return dp_arena_printf(a, "%s: a DATE has no %s; CAST it to TIMESTAMP, or use one of %s", fname,
                           key, unit_list(a, allowed));
  return dp_arena_printf(a, "%s cannot use unit %s with %s; use one of %s", fname, key,
                         kind ? kind : "this type", unit_list(a, allowed));
}
