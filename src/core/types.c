/*
** types.c — SQL types and schemas (types.h): singletons, builders, equality,
** implicit widening, the cast matrix, SQL spelling and Arrow formats.
**
** Literal values live in value.c and the calendar in calendar.c.
**
** Implicit widening follows Flink/Calcite: TINYINT < SMALLINT < INT < BIGINT
** < DECIMAL < FLOAT < DOUBLE.  An integer meets a DECIMAL as the DECIMAL of
** its digits (INT is DECIMAL(10, 0)); two DECIMALs meet in the scale of the
** larger and the integer digits of the larger, capped at 38 digits.
*/
#include "core/types.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_DECIMAL_PRECISION 38
#define MAX_TIME_PRECISION 9

/* ---- singletons ---- */

/* Default parameters are Flink's for a bare type name: DECIMAL is
** DECIMAL(10, 0), TIMESTAMP is TIMESTAMP(3) here (event-time columns are
** millisecond precision by convention), TIME is TIME(0). */
#define K_(kind) {DP_T_##kind, false, 0, 0, 0, 0, NULL, NULL, NULL}
static const dp_type singletons[DP_T_COUNT_] = {
    [DP_T_NULL] = K_(NULL),
    [DP_T_BOOLEAN] = K_(BOOLEAN),
    [DP_T_TINYINT] = K_(TINYINT),
    [DP_T_SMALLINT] = K_(SMALLINT),
    [DP_T_INT] = K_(INT),
    [DP_T_BIGINT] = K_(BIGINT),
    [DP_T_FLOAT] = K_(FLOAT),
    [DP_T_DOUBLE] = K_(DOUBLE),
    [DP_T_DECIMAL] = {DP_T_DECIMAL, false, 10, 0, 0, 0, NULL, NULL, NULL},
    [DP_T_STRING] = K_(STRING),
    [DP_T_BYTES] = K_(BYTES),
    [DP_T_DATE] = K_(DATE),
    [DP_T_TIME] = K_(TIME),
    [DP_T_TIMESTAMP] = {DP_T_TIMESTAMP, false, 3, 0, 0, 0, NULL, NULL, NULL},
    [DP_T_TIMESTAMP_LTZ] = {DP_T_TIMESTAMP_LTZ, false, 3, 0, 0, 0, NULL, NULL, NULL},
    [DP_T_INTERVAL_DT] = K_(INTERVAL_DT),
    [DP_T_INTERVAL_YM] = K_(INTERVAL_YM),
    [DP_T_ROW] = K_(ROW),
    [DP_T_ARRAY] = K_(ARRAY),
    [DP_T_MAP] = K_(MAP),
};
#undef K_

static const dp_type *singleton(dp_type_kind kind) { return &singletons[kind]; }

static bool is_composite_kind(dp_type_kind k) {
  return k == DP_T_ROW || k == DP_T_ARRAY || k == DP_T_MAP;
}

const dp_type *dp_type_of(dp_type_kind kind) {
  if ((unsigned)kind >= DP_T_COUNT_ || is_composite_kind(kind)) return NULL;
  return singleton(kind);
}

/* ---- builders ---- */

dp_type *dp_type_new(dp_arena *a, dp_type_kind kind) {
  if ((unsigned)kind >= DP_T_COUNT_) return NULL;
  dp_type *t = dp_arena_calloc(a, 1, sizeof *t);
  if (!t) return NULL;
  *t = *singleton(kind);
  return t;
}

const dp_type *dp_type_decimal(dp_arena *a, int precision, int scale) {
  if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale < 0 || scale > precision)
    return NULL;
  dp_type *t = dp_type_new(a, DP_T_DECIMAL);
  if (!t) return NULL;
  t->precision = (uint8_t)precision;
  t->scale = (uint8_t)scale;
  return t;
}

const dp_type *dp_type_timestamp(dp_arena *a, dp_type_kind kind, int precision) {
  if (kind != DP_T_TIMESTAMP && kind != DP_T_TIMESTAMP_LTZ && kind != DP_T_TIME) return NULL;
  if (precision < 0 || precision > MAX_TIME_PRECISION) return NULL;
  dp_type *t = dp_type_new(a, kind);
  if (!t) return NULL;
  t->precision = (uint8_t)precision;
  return t;
}

const dp_type *dp_type_array(dp_arena *a, const dp_type *elem) {
  if (!elem) return NULL;
  dp_type *t = dp_type_new(a, DP_T_ARRAY);
  if (!t) return NULL;
  t->elem = elem;
  return t;
}

const dp_type *dp_type_map(dp_arena *a, const dp_type *key, const dp_type *value) {
  if (!key || !value) return NULL;
  dp_type *t = dp_type_new(a, DP_T_MAP);
  if (!t) return NULL;
  t->elem = key;
  t->value = value;
  return t;
}

const dp_type *dp_type_row(dp_arena *a, int n, const dp_field *fields) {
  if (n < 0 || (n > 0 && !fields)) return NULL;
  dp_type *t = dp_type_new(a, DP_T_ROW);
  dp_field *copy = n ? dp_arena_calloc(a, (size_t)n, sizeof *copy) : NULL;
  if (!t || (n && !copy)) return NULL;
  for (int i = 0; i < n; i++) {
    copy[i].name = dp_arena_strdup(a, fields[i].name);
    copy[i].type = fields[i].type;
    if (fields[i].name && !copy[i].name) return NULL;
  }
  t->nfields = n;
  t->fields = copy;
  return t;
}

const dp_type *dp_type_with_nullability(dp_arena *a, const dp_type *t, bool not_null) {
  if (!t || t->not_null == not_null) return t;
  dp_type *copy = dp_arena_alloc(a, sizeof *copy);
  if (!copy) return NULL;
  *copy = *t;
  copy->not_null = not_null;
  return copy;
}

/* ---- predicates ---- */

static bool names_equal(const char *x, const char *y) {
  if (!x || !y) return x == y;
  return strcasecmp(x, y) == 0;
}

bool dp_type_equal(const dp_type *a, const dp_type *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
  case DP_T_DECIMAL:
    return a->precision == b->precision && a->scale == b->scale;
  case DP_T_TIME:
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    return a->precision == b->precision;
  case DP_T_STRING:
  case DP_T_BYTES:
    return a->length == b->length;
  case DP_T_ARRAY:
    return dp_type_equal(a->elem, b->elem);
  case DP_T_MAP:
    return dp_type_equal(a->elem, b->elem) && dp_type_equal(a->value, b->value);
  case DP_T_ROW:
    if (a->nfields != b->nfields) return false;
    for (int i = 0; i < a->nfields; i++)
      if (!names_equal(a->fields[i].name, b->fields[i].name) ||
          !dp_type_equal(a->fields[i].type, b->fields[i].type))
        return false;
    return true;
  default:
    return true;
  }
}

bool dp_type_is_integer(const dp_type *t) {
  return t && t->kind >= DP_T_TINYINT && t->kind <= DP_T_BIGINT;
}
bool dp_type_is_numeric(const dp_type *t) {
  return t && t->kind >= DP_T_TINYINT && t->kind <= DP_T_DECIMAL;
}
bool dp_type_is_temporal(const dp_type *t) {
  return t && t->kind >= DP_T_DATE && t->kind <= DP_T_TIMESTAMP_LTZ;
}
bool dp_type_is_timestamp(const dp_type *t) {
  return t && (t->kind == DP_T_TIMESTAMP || t->kind == DP_T_TIMESTAMP_LTZ);
}
bool dp_type_is_interval(const dp_type *t) {
  return t && (t->kind == DP_T_INTERVAL_DT || t->kind == DP_T_INTERVAL_YM);
}
bool dp_type_is_string(const dp_type *t) { return t && t->kind == DP_T_STRING; }

/* ---- implicit widening ---- */

/* Position in TINYINT < SMALLINT < INT < BIGINT < DECIMAL < FLOAT < DOUBLE
** (the enum lists DECIMAL after DOUBLE, so it cannot serve). */
static int numeric_rank(const dp_type *t) {
  static const signed char ranks[DP_T_COUNT_] = {
      [DP_T_TINYINT] = 1, [DP_T_SMALLINT] = 2, [DP_T_INT] = 3,    [DP_T_BIGINT] = 4,
      [DP_T_DECIMAL] = 5, [DP_T_FLOAT] = 6,    [DP_T_DOUBLE] = 7,
  };
  return ranks[t->kind];
}

/* Decimal digits an integer kind needs: INT is DECIMAL(10, 0). */
static int integer_digits(dp_type_kind k) {
  static const int digits[] = {3, 5, 10, 19}; /* TINYINT .. BIGINT */
  return digits[k - DP_T_TINYINT];
}

static void as_decimal(const dp_type *t, int *precision, int *scale) {
  if (t->kind == DP_T_DECIMAL) {
    *precision = t->precision;
    *scale = t->scale;
  } else {
    *precision = integer_digits(t->kind);
    *scale = 0;
  }
}

static const dp_type *common_decimal(dp_arena *a, const dp_type *x, const dp_type *y) {
  int px, sx, py, sy;
  as_decimal(x, &px, &sx);
  as_decimal(y, &py, &sy);
  int scale = sx > sy ? sx : sy;
  int whole = px - sx > py - sy ? px - sx : py - sy;
  if (whole + scale > MAX_DECIMAL_PRECISION) {
    /* Keep every integer digit; the fraction gives way, as in Calcite. */
    scale = MAX_DECIMAL_PRECISION - whole;
    if (scale < 0) scale = 0;
    if (whole > MAX_DECIMAL_PRECISION) whole = MAX_DECIMAL_PRECISION;
  }
  return dp_type_decimal(a, whole + scale, scale);
}

static const dp_type *common_numeric(dp_arena *a, const dp_type *x, const dp_type *y) {
  const dp_type *wider = numeric_rank(x) >= numeric_rank(y) ? x : y;
  if (wider->kind == DP_T_DECIMAL) return common_decimal(a, x, y);
  return singleton(wider->kind);
}

static const dp_type *common_string(dp_arena *a, const dp_type *x, const dp_type *y) {
  if (x->length == 0 || y->length == 0) return singleton(x->kind); /* unbounded wins */
  dp_type *t = dp_type_new(a, x->kind);
  if (t) t->length = x->length > y->length ? x->length : y->length;
  return t;
}

/* DATE meets TIMESTAMP as TIMESTAMP; TIMESTAMP meets TIMESTAMP_LTZ as the
** instant type TIMESTAMP_LTZ; precision is the larger one. */
static const dp_type *common_temporal(dp_arena *a, const dp_type *x, const dp_type *y) {
  if (x->kind == DP_T_DATE && dp_type_is_timestamp(y)) return y;
  if (y->kind == DP_T_DATE && dp_type_is_timestamp(x)) return x;
  bool same_kind = x->kind == y->kind;
  bool both_ts = dp_type_is_timestamp(x) && dp_type_is_timestamp(y);
  if (!same_kind && !both_ts) return NULL;
  if (x->kind == DP_T_DATE) return x;
  dp_type_kind kind = same_kind ? x->kind : DP_T_TIMESTAMP_LTZ;
  int precision = x->precision > y->precision ? x->precision : y->precision;
  return dp_type_timestamp(a, kind, precision);
}

const dp_type *dp_type_common(dp_arena *a, const dp_type *x, const dp_type *y) {
  if (!x || !y) return NULL;
  if (x->kind == DP_T_NULL) return dp_type_with_nullability(a, y, false);
  if (y->kind == DP_T_NULL) return dp_type_with_nullability(a, x, false);
  bool not_null = x->not_null && y->not_null;
  const dp_type *t = NULL;
  if (dp_type_equal(x, y))
    t = x;
  else if (dp_type_is_numeric(x) && dp_type_is_numeric(y))
    t = common_numeric(a, x, y);
  else if (x->kind == y->kind && (x->kind == DP_T_STRING || x->kind == DP_T_BYTES))
    t = common_string(a, x, y);
  else if (dp_type_is_temporal(x) && dp_type_is_temporal(y))
    t = common_temporal(a, x, y);
  return t ? dp_type_with_nullability(a, t, not_null) : NULL;
}

/* ---- coercion and casts ---- */

static bool can_coerce_composite(const dp_type *from, const dp_type *to) {
  switch (from->kind) {
  case DP_T_ARRAY:
    return dp_type_can_coerce(from->elem, to->elem);
  case DP_T_MAP:
    return dp_type_can_coerce(from->elem, to->elem) && dp_type_can_coerce(from->value, to->value);
  case DP_T_ROW:
    if (from->nfields != to->nfields) return false;
    for (int i = 0; i < from->nfields; i++)
      if (!names_equal(from->fields[i].name, to->fields[i].name) ||
          !dp_type_can_coerce(from->fields[i].type, to->fields[i].type))
        return false;
    return true;
  default:
    return false;
  }
}

bool dp_type_can_coerce(const dp_type *from, const dp_type *to) {
  if (!from || !to) return false;
  if (from->kind == DP_T_NULL) return true;
  if (dp_type_is_numeric(from) && dp_type_is_numeric(to))
    return numeric_rank(from) <= numeric_rank(to);
  if (from->kind != to->kind) {
    if (from->kind == DP_T_DATE) return dp_type_is_timestamp(to);
    return from->kind == DP_T_TIMESTAMP && to->kind == DP_T_TIMESTAMP_LTZ;
  }
  if (from->kind == DP_T_STRING || from->kind == DP_T_BYTES) /* never narrows */
    return to->length == 0 || (from->length != 0 && from->length <= to->length);
  if (is_composite_kind(from->kind)) return can_coerce_composite(from, to);
  return true; /* same kind; precision of TIME/TIMESTAMP may change */
}

/* Flink's cast matrix by family: each row lists the families a value may be
** CAST to.  Composite casts are further checked member by member. */
enum cast_family {
  F_NULL, F_BOOL, F_EXACT, F_APPROX, F_STRING, F_BYTES, F_DATE, F_TIME, F_TIMESTAMP,
  F_INTERVAL_DT, F_INTERVAL_YM, F_ROW, F_ARRAY, F_MAP, F_COUNT_
};

static enum cast_family family_of(dp_type_kind k) {
  static const enum cast_family families[DP_T_COUNT_] = {
      [DP_T_NULL] = F_NULL,       [DP_T_BOOLEAN] = F_BOOL,     [DP_T_TINYINT] = F_EXACT,
      [DP_T_SMALLINT] = F_EXACT,  [DP_T_INT] = F_EXACT,        [DP_T_BIGINT] = F_EXACT,
      [DP_T_FLOAT] = F_APPROX,    [DP_T_DOUBLE] = F_APPROX,    [DP_T_DECIMAL] = F_EXACT,
      [DP_T_STRING] = F_STRING,   [DP_T_BYTES] = F_BYTES,      [DP_T_DATE] = F_DATE,
      [DP_T_TIME] = F_TIME,       [DP_T_TIMESTAMP] = F_TIMESTAMP,
      [DP_T_TIMESTAMP_LTZ] = F_TIMESTAMP,                      [DP_T_INTERVAL_DT] = F_INTERVAL_DT,
      [DP_T_INTERVAL_YM] = F_INTERVAL_YM,                      [DP_T_ROW] = F_ROW,
      [DP_T_ARRAY] = F_ARRAY,     [DP_T_MAP] = F_MAP,
  };
  return families[k];
}

#define B(f) (1u << (f))
#define NUMBERS (B(F_BOOL) | B(F_EXACT) | B(F_APPROX) | B(F_STRING))
static const unsigned cast_targets[F_COUNT_] = {
    [F_NULL] = ~0u,
    [F_BOOL] = NUMBERS,
    [F_EXACT] = NUMBERS,
    [F_APPROX] = NUMBERS,
    [F_STRING] = NUMBERS | B(F_BYTES) | B(F_DATE) | B(F_TIME) | B(F_TIMESTAMP) |
                 B(F_INTERVAL_DT) | B(F_INTERVAL_YM),
    [F_BYTES] = B(F_STRING) | B(F_BYTES),
    [F_DATE] = B(F_STRING) | B(F_DATE) | B(F_TIMESTAMP),
    [F_TIME] = B(F_STRING) | B(F_TIME),
    [F_TIMESTAMP] = B(F_STRING) | B(F_DATE) | B(F_TIME) | B(F_TIMESTAMP),
    [F_INTERVAL_DT] = B(F_STRING) | B(F_INTERVAL_DT),
    [F_INTERVAL_YM] = B(F_STRING) | B(F_INTERVAL_YM),
    [F_ROW] = B(F_STRING) | B(F_ROW),
    [F_ARRAY] = B(F_STRING) | B(F_ARRAY),
    [F_MAP] = B(F_STRING) | B(F_MAP),
};
#undef NUMBERS
#undef B

bool dp_type_can_cast(const dp_type *from, const dp_type *to) {
  if (!from || !to) return false;
  if ((unsigned)from->kind >= DP_T_COUNT_ || (unsigned)to->kind >= DP_T_COUNT_) return false;
  if (!(cast_targets[family_of(from->kind)] & (1u << family_of(to->kind)))) return false;
  if (from->kind != to->kind || !is_composite_kind(from->kind)) return true;
  switch (from->kind) {
  case DP_T_ARRAY:
    return dp_type_can_cast(from->elem, to->elem);
  case DP_T_MAP:
    return dp_type_can_cast(from->elem, to->elem) && dp_type_can_cast(from->value, to->value);
  default: /* ROW: field by field, by position */
    if (from->nfields != to->nfields) return false;
    for (int i = 0; i < from->nfields; i++)
      if (!dp_type_can_cast(from->fields[i].type, to->fields[i].type)) return false;
    return true;
  }
}

/* ---- SQL spelling ---- */

/* snprintf-style writer: counts everything, stores what fits. */
typedef struct writer {
  char *buf;
  size_t cap, len;
} writer;

static void put(writer *w, const char *s, size_t n) {
  if (w->len < w->cap) {
    size_t room = w->cap - w->len - 1;
    memcpy(w->buf + w->len, s, n < room ? n : room);
  }
  w->len += n;
}
static void puts_w(writer *w, const char *s) { put(w, s, strlen(s)); }
static void put_uint(writer *w, unsigned x) {
  char tmp[16];
  int n = snprintf(tmp, sizeof tmp, "%u", x);
  if (n > 0) put(w, tmp, (size_t)n);
}
/* "NAME(x)" or "NAME(x, y)" */
static void put_params(writer *w, const char *name, int nparams, unsigned x, unsigned y) {
  puts_w(w, name);
  puts_w(w, "(");
  put_uint(w, x);
  if (nparams > 1) {
    puts_w(w, ", ");
    put_uint(w, y);
  }
  puts_w(w, ")");
}

/* A field name needs backquotes unless it is a plain identifier. */
static void put_name(writer *w, const char *name) {
  if (!name) name = "";
  bool plain = name[0] && !(name[0] >= '0' && name[0] <= '9');
  for (const char *p = name; *p && plain; p++) {
    char c = *p;
    plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  if (plain) {
    puts_w(w, name);
    return;
  }
  put(w, "`", 1);
  for (const char *p = name; *p; p++) {
    if (*p == '`') put(w, "`", 1);
    put(w, p, 1);
  }
  put(w, "`", 1);
}

#define DP_KIND_NAME_(n, s) s,
static const char *const kind_names[DP_T_COUNT_] = {DP_TYPE_KINDS(DP_KIND_NAME_)};
#undef DP_KIND_NAME_

static void print_type(writer *w, const dp_type *t) {
  if (!t || (unsigned)t->kind >= DP_T_COUNT_) {
    puts_w(w, "?");
    return;
  }
  switch (t->kind) {
  case DP_T_DECIMAL:
    put_params(w, "DECIMAL", 2, t->precision, t->scale);
    break;
  case DP_T_STRING:
    if (t->length)
      put_params(w, "VARCHAR", 1, t->length, 0);
    else
      puts_w(w, "STRING");
    break;
  case DP_T_BYTES:
    if (t->length)
      put_params(w, "VARBINARY", 1, t->length, 0);
    else
      puts_w(w, "BYTES");
    break;
  case DP_T_TIME:
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    put_params(w, kind_names[t->kind], 1, t->precision, 0);
    break;
  case DP_T_ARRAY:
    puts_w(w, "ARRAY<");
    print_type(w, t->elem);
    puts_w(w, ">");
    break;
  case DP_T_MAP:
    puts_w(w, "MAP<");
    print_type(w, t->elem);
    puts_w(w, ", ");
    print_type(w, t->value);
    puts_w(w, ">");
    break;
  case DP_T_ROW:
    puts_w(w, "ROW<");
    for (int i = 0; i < t->nfields; i++) {
      if (i) puts_w(w, ", ");
      put_name(w, t->fields[i].name);
      puts_w(w, " ");
      print_type(w, t->fields[i].type);
    }
    puts_w(w, ">");
    break;
  default:
    puts_w(w, kind_names[t->kind]);
    break;
  }
  if (t->not_null) puts_w(w, " NOT NULL");
}

size_t dp_type_print(char *buf, size_t cap, const dp_type *t) {
  writer w = {buf, cap, 0};
  print_type(&w, t);
  if (cap) buf[w.len < cap ? w.len : cap - 1] = '\0';
  return w.len;
}

char *dp_type_format(dp_arena *a, const dp_type *t) {
  char small[64];
  size_t n = dp_type_print(small, sizeof small, t);
  char *out = dp_arena_alloc(a, n + 1);
  if (!out) return NULL;
  if (n < sizeof small)
    memcpy(out, small, n + 1);
  else
    dp_type_print(out, n + 1, t);
  return out;
}

/* ---- Arrow formats ---- */

/* Every "d:p,s" string exists once, statically, so that the format of any
** DECIMAL can be handed out without an allocation. */
#define DS_(p, s) "d:" #p "," #s
#define DROW_(p)                                                                          \
  {DS_(p, 0),  DS_(p, 1),  DS_(p, 2),  DS_(p, 3),  DS_(p, 4),  DS_(p, 5),  DS_(p, 6),  \
   DS_(p, 7),  DS_(p, 8),  DS_(p, 9),  DS_(p, 10), DS_(p, 11), DS_(p, 12), DS_(p, 13), \
   DS_(p, 14), DS_(p, 15), DS_(p, 16), DS_(p, 17), DS_(p, 18), DS_(p, 19), DS_(p, 20), \
   DS_(p, 21), DS_(p, 22), DS_(p, 23), DS_(p, 24), DS_(p, 25), DS_(p, 26), DS_(p, 27), \
   DS_(p, 28), DS_(p, 29), DS_(p, 30), DS_(p, 31), DS_(p, 32), DS_(p, 33), DS_(p, 34), \
   DS_(p, 35), DS_(p, 36), DS_(p, 37), DS_(p, 38)}
static const char *const decimal_formats[39][39] = {
    DROW_(0),  DROW_(1),  DROW_(2),  DROW_(3),  DROW_(4),  DROW_(5),  DROW_(6),  DROW_(7),
    DROW_(8),  DROW_(9),  DROW_(10), DROW_(11), DROW_(12), DROW_(13), DROW_(14), DROW_(15),
    DROW_(16), DROW_(17), DROW_(18), DROW_(19), DROW_(20), DROW_(21), DROW_(22), DROW_(23),
    DROW_(24), DROW_(25), DROW_(26), DROW_(27), DROW_(28), DROW_(29), DROW_(30), DROW_(31),
    DROW_(32), DROW_(33), DROW_(34), DROW_(35), DROW_(36), DROW_(37), DROW_(38)};
#undef DROW_
#undef DS_

static const char *const arrow_formats[DP_T_COUNT_] = {
    [DP_T_NULL] = "n",          [DP_T_BOOLEAN] = "b",   [DP_T_TINYINT] = "c",
    [DP_T_SMALLINT] = "s",      [DP_T_INT] = "i",       [DP_T_BIGINT] = "l",
    [DP_T_FLOAT] = "f",         [DP_T_DOUBLE] = "g",    [DP_T_STRING] = "u",
    [DP_T_BYTES] = "z",         [DP_T_DATE] = "tdD",    [DP_T_TIME] = "ttu",
    [DP_T_TIMESTAMP] = "tsu:",  [DP_T_TIMESTAMP_LTZ] = "tsu:UTC",
    [DP_T_INTERVAL_DT] = "tDu", [DP_T_INTERVAL_YM] = "tiM",
    [DP_T_ROW] = "+s",          [DP_T_ARRAY] = "+l",    [DP_T_MAP] = "+m",
};

const char *dp_type_arrow_format(const dp_type *t) {
  if (!t || (unsigned)t->kind >= DP_T_COUNT_) return NULL;
  if (t->kind == DP_T_DECIMAL) {
    if (t->precision > MAX_DECIMAL_PRECISION || t->scale > MAX_DECIMAL_PRECISION) return NULL;
    return decimal_formats[t->precision][t->scale];
  }
  return arrow_formats[t->kind];
}

/* ---- schemas ---- */

dp_schema *dp_schema_new(dp_arena *a, int ncols) {
  if (ncols < 0) return NULL;
  dp_schema *s = dp_arena_calloc(a, 1, sizeof *s);
  if (!s) return NULL;
  if (ncols) {
    s->cols = dp_arena_calloc(a, (size_t)ncols, sizeof *s->cols);
    if (!s->cols) return NULL;
  }
  s->ncols = ncols;
  return s;
}

int dp_schema_find(const dp_schema *s, const char *name) {
  if (!s || !name) return -1;
  int found = -1;
  for (int i = 0; i < s->ncols; i++) {
    if (!s->cols[i].name || strcasecmp(s->cols[i].name, name) != 0) continue;
    if (found >= 0) return -2;
    found = i;
  }
  return found;
}
