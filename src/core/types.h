/*
** types.h — the SQL type system, schemas and literal values.
**
** One description of a type serves the parser (DDL, CAST), the binder (type
** inference and implicit casts), both backends (Arrow formats, Spark types)
** and the executor (vector layouts).  Types are immutable once built and live
** in an arena; the scalar ones are also available as static singletons.
**
** Time is kept in microseconds since 1970-01-01 UTC.  TIMESTAMP(p) and
** TIMESTAMP_LTZ(p) remember p (0..9) for display and casting; storage is µs.
** DATE is days since the epoch.  INTERVAL DAY TO SECOND is µs; INTERVAL YEAR
** TO MONTH is months.  DECIMAL(p,s) is a 128-bit integer scaled by 10^s, p<=38.
*/
#ifndef DP_TYPES_H
#define DP_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"

#if defined(__GNUC__)
__extension__ typedef __int128 dp_i128;
#else
#error "dipper needs a compiler with 128-bit integers (gcc or clang)"
#endif

/* X(NAME, "SQL spelling") — order is ABI for nothing; add freely. */
#define DP_TYPE_KINDS(X)                  \
  X(NULL, "NULL")                         \
  X(BOOLEAN, "BOOLEAN")                   \
  X(TINYINT, "TINYINT")                   \
  X(SMALLINT, "SMALLINT")                 \
  X(INT, "INT")                           \
  X(BIGINT, "BIGINT")                     \
  X(FLOAT, "FLOAT")                       \
  X(DOUBLE, "DOUBLE")                     \
  X(DECIMAL, "DECIMAL")                   \
  X(STRING, "STRING")                     \
  X(BYTES, "BYTES")                       \
  X(DATE, "DATE")                         \
  X(TIME, "TIME")                         \
  X(TIMESTAMP, "TIMESTAMP")               \
  X(TIMESTAMP_LTZ, "TIMESTAMP_LTZ")       \
  X(INTERVAL_DT, "INTERVAL DAY TO SECOND") \
  X(INTERVAL_YM, "INTERVAL YEAR TO MONTH") \
  X(ROW, "ROW")                           \
  X(ARRAY, "ARRAY")                       \
  X(MAP, "MAP")

#define DP_TYPE_ENUM_(n, s) DP_T_##n,
typedef enum dp_type_kind { DP_TYPE_KINDS(DP_TYPE_ENUM_) DP_T_COUNT_ } dp_type_kind;
#undef DP_TYPE_ENUM_

typedef struct dp_type dp_type;

/* A named, typed member: a column of a schema or a field of a ROW. */
typedef struct dp_field {
  const char *name;
  const dp_type *type;
} dp_field;

struct dp_type {
  dp_type_kind kind;
  bool not_null;        /* declared NOT NULL (or a key); nullable by default */
  uint8_t precision;    /* DECIMAL p (1..38); TIMESTAMP/TIME p (0..9); VARCHAR: 0 */
  uint8_t scale;        /* DECIMAL s */
  uint32_t length;      /* VARCHAR(n)/CHAR(n) n, 0 = unbounded (STRING) */
  int nfields;          /* ROW */
  const dp_field *fields;
  const dp_type *elem;  /* ARRAY element; MAP key */
  const dp_type *value; /* MAP value */
};

/* Shared nullable singletons of the scalar kinds with default parameters
** (TIMESTAMP(3), TIMESTAMP_LTZ(3), DECIMAL(10,0)). */
const dp_type *dp_type_of(dp_type_kind kind);

/* Builders; NULL when out of memory. */
dp_type *dp_type_new(dp_arena *a, dp_type_kind kind);
const dp_type *dp_type_decimal(dp_arena *a, int precision, int scale);
const dp_type *dp_type_timestamp(dp_arena *a, dp_type_kind kind, int precision);
const dp_type *dp_type_array(dp_arena *a, const dp_type *elem);
const dp_type *dp_type_map(dp_arena *a, const dp_type *key, const dp_type *value);
const dp_type *dp_type_row(dp_arena *a, int n, const dp_field *fields); /* copies fields */
const dp_type *dp_type_with_nullability(dp_arena *a, const dp_type *t, bool not_null);

bool dp_type_equal(const dp_type *a, const dp_type *b);   /* ignores not_null */
bool dp_type_is_numeric(const dp_type *t);   /* integers, floats, decimal */
bool dp_type_is_integer(const dp_type *t);
bool dp_type_is_temporal(const dp_type *t);  /* DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ */
bool dp_type_is_timestamp(const dp_type *t); /* TIMESTAMP or TIMESTAMP_LTZ */
bool dp_type_is_interval(const dp_type *t);
bool dp_type_is_string(const dp_type *t);

/* The common type two operands are implicitly cast to (numeric widening,
** DECIMAL promotion, STRING with STRING, TIMESTAMP precision max, NULL with
** anything).  NULL when there is none. */
const dp_type *dp_type_common(dp_arena *a, const dp_type *x, const dp_type *y);

/* May a value of `from` be implicitly cast to `to` (widening only)? */
bool dp_type_can_coerce(const dp_type *from, const dp_type *to);
/* May CAST(from AS to) be written at all? */
bool dp_type_can_cast(const dp_type *from, const dp_type *to);

/* SQL spelling: "DECIMAL(10, 2)", "ROW<a INT, b STRING>", "TIMESTAMP(3)",
** "ARRAY<BIGINT>", with " NOT NULL" when set.  Allocated in `a`. */
char *dp_type_format(dp_arena *a, const dp_type *t);
/* Write the spelling into buf (always NUL-terminated); returns the length it
** needed, like snprintf. */
size_t dp_type_print(char *buf, size_t cap, const dp_type *t);

/* The Arrow C Data format string of the type: "b","c","s","i","l","f","g",
** "d:p,s","u","z","tdD","ttu","tsu:","tsu:UTC","tDu","tiM","+s","+l","+m". */
const char *dp_type_arrow_format(const dp_type *t);

/* ---- schemas ---- */
typedef struct dp_schema {
  int ncols;
  dp_field *cols;
} dp_schema;

dp_schema *dp_schema_new(dp_arena *a, int ncols);
/* Case-insensitive lookup; -1 if absent, -2 if ambiguous. */
int dp_schema_find(const dp_schema *s, const char *name);

/* ---- literal values ---- */
typedef struct dp_value {
  const dp_type *type;  /* never NULL; DP_T_NULL for an untyped NULL */
  bool is_null;
  union {
    bool b;
    int64_t i;          /* integers, DATE (days), TIME (µs), TIMESTAMP* (µs),
                           INTERVAL_DT (µs), INTERVAL_YM (months) */
    double d;           /* FLOAT, DOUBLE */
    dp_i128 dec;        /* DECIMAL, scaled by 10^scale */
    struct {
      const char *ptr;  /* STRING (UTF-8, not NUL-terminated), BYTES */
      size_t len;
    } s;
    struct {            /* ROW, ARRAY, MAP (keys then values, n pairs) */
      int n;
      struct dp_value *items;
    } list;
  } u;
} dp_value;

dp_value dp_value_null(const dp_type *t);
dp_value dp_value_bool(bool b);
dp_value dp_value_int(const dp_type *t, int64_t v);
dp_value dp_value_double(const dp_type *t, double v);
dp_value dp_value_string(const char *p, size_t n); /* borrows p */

/* SQL literal spelling: 42, 'it''s', TIMESTAMP '2024-01-01 00:00:00.000',
** INTERVAL '10' SECOND, 12.50, NULL.  Allocated in `a`. */
char *dp_value_format(dp_arena *a, const dp_value *v);

/* Compare two values of equal type: <0, 0, >0; NULL sorts first. */
int dp_value_compare(const dp_value *x, const dp_value *y);

/* Parse text into a value of type t (the CAST from STRING rules): integers,
** decimals, floats, booleans, 'YYYY-MM-DD', 'YYYY-MM-DD[ T]hh:mm:ss[.fffffffff]'
** (optional 'Z' or ±hh:mm for LTZ).  Returns false on malformed text. */
bool dp_value_parse(dp_arena *a, const dp_type *t, const char *s, size_t n, dp_value *out);

/* ---- calendar helpers (proleptic Gregorian, UTC) ---- */
int64_t dp_days_from_civil(int64_t y, unsigned m, unsigned d);
void dp_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);
/* Format µs since epoch as "YYYY-MM-DD hh:mm:ss[.fff...]" with `precision`
** fractional digits into buf (>= 32 bytes). Returns length. */
int dp_format_timestamp(char *buf, size_t cap, int64_t micros, int precision);

/* Format a duration in µs the way EXPLAIN and messages show it: "10 s",
** "1 min", "1 min 30 s", "2 h", "1 d", "500 ms", "250 us", "0 s"; negative
** values get a leading '-'. Returns length, like snprintf. */
int dp_format_duration(char *buf, size_t cap, int64_t micros);

#define DP_MICROS_PER_SECOND INT64_C(1000000)
#define DP_MICROS_PER_MINUTE (60 * DP_MICROS_PER_SECOND)
#define DP_MICROS_PER_HOUR (60 * DP_MICROS_PER_MINUTE)
#define DP_MICROS_PER_DAY (24 * DP_MICROS_PER_HOUR)

#endif /* DP_TYPES_H */
