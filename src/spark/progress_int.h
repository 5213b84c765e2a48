/*
** progress_int.h — the small JSON tree reader of progress.c, shared with
** streaming.c (listener events) and the tests.
**
** Owns: nothing beyond the declarations; the tree lives in the caller's arena.
*/
#ifndef DP_SPARK_PROGRESS_INT_H
#define DP_SPARK_PROGRESS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "spark/streaming.h"

typedef enum dp_jv_kind {
  DP_JV_NULL, DP_JV_FALSE, DP_JV_TRUE, DP_JV_NUMBER, DP_JV_STRING, DP_JV_ARRAY, DP_JV_OBJECT,
} dp_jv_kind;

typedef struct dp_jv dp_jv;
struct dp_jv {
  dp_jv_kind kind;
  const char *key;    /* member name inside an object, else NULL */
  const char *str;    /* STRING: decoded, NUL-terminated */
  double num;         /* NUMBER */
  int n;              /* ARRAY/OBJECT: number of children */
  dp_jv *first;       /* ARRAY/OBJECT: children in order */
  dp_jv *next;        /* the next sibling */
  const char *raw;    /* the value's text in the input (borrowed from it) */
  size_t raw_len;
};

/* Parse one JSON document; the tree points into `json` (raw) and `a`.
** DIPPER_DATA with a message in err (may be NULL) when malformed. */
int dp_jv_parse(dp_arena *a, const char *json, size_t len, dp_jv **out, dp_buf *err);
const dp_jv *dp_jv_get(const dp_jv *obj, const char *key); /* NULL: absent or obj not an object */
const char *dp_jv_str(const dp_jv *obj, const char *key);  /* NULL unless a string */
int64_t dp_jv_int(const dp_jv *obj, const char *key, int64_t dflt);
double dp_jv_num(const dp_jv *obj, const char *key);       /* NaN unless a number */

/* µs since the epoch of an ISO-8601 UTC time as Spark writes it, or -1. */
int64_t dp_spark_parse_iso_time(const char *s);

/* Fill a zeroed *out from a parsed progress object; strings point into the
** tree, offsets are copied into a. */
int dp_spark_progress_from(dp_arena *a, const dp_jv *o, dp_spark_progress *out, dp_buf *err);

#endif /* DP_SPARK_PROGRESS_INT_H */
