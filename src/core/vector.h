/*
** vector.h — columnar vectors and batches in the Arrow memory layout, and
** their export through the Arrow C Data Interface.
**
** A dp_vector holds one column: a validity bitmap (LSB first; NULL while no
** row is null), and by physical layout
**   fixed width   values: int8/16/32/64, float, double, 16-byte decimal128
**                 (DATE int32 days, TIME, TIMESTAMP, TIMESTAMP_LTZ and
**                 INTERVAL_DT int64 µs,
**                 INTERVAL_YM int32 months);
**   BOOLEAN       values as a bitmap;
**   STRING/BYTES  int32 offsets (length + 1) and the bytes in `data`;
**   ARRAY         int32 offsets and one child, the elements;
**   MAP           int32 offsets and one child, a non-null struct of two
**                 children "key" and "value" (Arrow's list<struct<key,value>>);
**   ROW           one child per field, each as long as the ROW itself.
** A dp_batch is a schema plus one vector per column and a row count.
**
** Memory is malloc'd, not arena'd: exported arrays must outlive any arena.
** The vector borrows its dp_type, which must stay valid while the vector
** lives (a singleton, or an arena that outlives it); exports copy everything
** they need.  Every *_free accepts NULL.
**
** Building: append one value per row with the append function of the
** column's layout (dp_vector_append_i64 for integers and temporal kinds,
** _f64, _bool, _dec, _str), or dp_vector_append_null.  Composite rows are
** built bottom-up: append the members to the children, then close the row:
**   ROW    append one value to every child, then dp_vector_append_struct(v);
**   ARRAY  append the elements to children[0], then dp_vector_append_list(v);
**   MAP    for each entry append to dp_vector_map_keys(v) and
**          dp_vector_map_values(v) and call dp_vector_append_struct(
**          v->children[0]); then dp_vector_append_list(v).
** dp_vector_append_value does all of this from a dp_value.
** Appends return DIPPER_OK, DIPPER_NOMEM, DIPPER_LIMIT (more than 2^31-1
** bytes or elements under int32 offsets) or DIPPER_MISUSE (wrong layout);
** on failure the vector is unchanged.
*/
#ifndef DP_VECTOR_H
#define DP_VECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/types.h"
#include "dipper.h"

/* How a type is laid out in memory. */
typedef enum dp_phys {
  DP_PHYS_NULL,   /* no buffers: every row is null */
  DP_PHYS_BIT,    /* BOOLEAN */
  DP_PHYS_I8,
  DP_PHYS_I16,
  DP_PHYS_I32,
  DP_PHYS_I64,
  DP_PHYS_F32,
  DP_PHYS_F64,
  DP_PHYS_D128,   /* DECIMAL: little-endian two's complement, 16 bytes */
  DP_PHYS_VARBIN, /* STRING, BYTES */
  DP_PHYS_LIST,   /* ARRAY, MAP */
  DP_PHYS_STRUCT  /* ROW, and the entries of a MAP */
} dp_phys;

dp_phys dp_phys_of(const dp_type *t);
/* Bytes per value of a fixed-width layout; 0 for the others. */
int dp_phys_width(dp_phys p);

typedef struct dp_vector {
  const dp_type *type;   /* borrowed */
  dp_phys phys;
  int64_t length;        /* rows */
  int64_t null_count;
  int64_t capacity;      /* rows the buffers have room for */
  uint8_t *validity;     /* LSB-first, bit set = valid; NULL while null_count == 0 */
  void *values;          /* fixed width values, or the BOOLEAN bitmap */
  int32_t *offsets;      /* VARBIN and LIST: capacity + 1 entries, offsets[0] == 0 */
  char *data;            /* VARBIN bytes */
  int64_t data_len, data_cap;
  int nchildren;
  struct dp_vector **children;
  dp_type *owned_type;   /* the entries ROW of a MAP's child, which no arena holds */
} dp_vector;

/* A new empty vector with room for `capacity` rows (0: a default).  The
** caller frees it with dp_vector_free.  NULL when out of memory or when t is
** NULL. */
dp_vector *dp_vector_new(const dp_type *t, int64_t capacity);
void dp_vector_free(dp_vector *v);
/* Drop every row (children too), keeping the buffers for reuse. */
void dp_vector_clear(dp_vector *v);
/* Room for `extra` more rows. */
int dp_vector_reserve(dp_vector *v, int64_t extra);

int dp_vector_append_null(dp_vector *v);
int dp_vector_append_str(dp_vector *v, const char *p, size_t n); /* STRING, BYTES; copies */
int dp_vector_append_struct(dp_vector *v); /* closes a ROW whose children each got one more */
int dp_vector_append_list(dp_vector *v);   /* closes an ARRAY/MAP at the child's length */
int dp_vector_append_value(dp_vector *v, const dp_value *x);

/* n NULL rows at once, laid out as n calls of dp_vector_append_null. */
int dp_vector_append_nulls(dp_vector *v, int64_t n);
/* Drop the rows past `length` (children and bytes too); no-op when the
** vector is not longer than that. */
void dp_vector_truncate(dp_vector *v, int64_t length);

/* ---- copying rows between vectors (vector_take.c) ----
** The one row gather of the engine: filter compaction, join pairs, key
** stores, sorts and window assignment all copy rows with it.
**
** dp_vector_take appends n rows of src to dst: rows sel[start..start+n),
** where a negative index appends a NULL row (the padding of outer joins),
** or, with sel NULL, the consecutive rows start..start+n-1.  Repeats are
** allowed.  dst has src's type, or another layout: then only NULL rows can
** go (as dp_vector_append_from decides), except that a NULL-typed dst or
** src takes or gives NULLs only.  Rows NULL in src keep their slots' bytes
** under a NULL bit; a ROW's members are copied as they are under a NULL
** ROW.  Returns DIPPER_OK, DIPPER_NOMEM, DIPPER_LIMIT (more than 2^31-1
** bytes or elements) or DIPPER_MISUSE (layouts that differ, or ROWs of
** different arity); on failure dst keeps its row count (buffers may have
** grown).  Indexes are trusted: each must be < src->length. */
int dp_vector_take(dp_vector *dst, const dp_vector *src, const int64_t *sel, int64_t start,
                   int64_t n);
/* Append row `row` of src to dst (same type; a NULL row goes to any). */
int dp_vector_append_from(dp_vector *dst, const dp_vector *src, int64_t row);
/* Is `child`, a member of the ROW vector `row`, NULL wherever `row` is over
** rows [0, n)?  Then the child is the field as it stands (sources build ROWs
** that way), and a gather of only NULL ROWs need not copy it. */
bool dp_vector_nulls_covered(const dp_vector *row, const dp_vector *child, int64_t n);

static inline dp_vector *dp_vector_map_keys(dp_vector *v) { return v->children[0]->children[0]; }
static inline dp_vector *dp_vector_map_values(dp_vector *v) { return v->children[0]->children[1]; }

/* ---- fast paths: the common case is a store and an increment ---- */

#if defined(__GNUC__)
#define DP_VEC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DP_VEC_UNLIKELY(x) (x)
#endif

static inline void dp_bit_set(uint8_t *bits, int64_t i, bool on) {
  uint8_t mask = (uint8_t)(1u << (unsigned)(i & 7));
  if (on)
    bits[i >> 3] = (uint8_t)(bits[i >> 3] | mask);
  else
    bits[i >> 3] = (uint8_t)(bits[i >> 3] & ~mask);
}
static inline bool dp_bit_get(const uint8_t *bits, int64_t i) {
  return ((unsigned)bits[i >> 3] >> (unsigned)(i & 7)) & 1u;
}

/* Make room for one row; returns a code. */
static inline int dp_vector_room_(dp_vector *v) {
  return DP_VEC_UNLIKELY(v->length >= v->capacity) ? dp_vector_reserve(v, 1) : DIPPER_OK;
}
/* Row `length` holds a value: mark it valid and count it. */
static inline int dp_vector_push_valid_(dp_vector *v) {
  if (v->validity) dp_bit_set(v->validity, v->length, true);
  v->length++;
  return DIPPER_OK;
}

/* Integers, DATE, TIME, TIMESTAMP*, INTERVALs: stored at the column's width
** (the caller keeps x in the type's range). */
static inline int dp_vector_append_i64(dp_vector *v, int64_t x) {
  if (v->phys < DP_PHYS_I8 || v->phys > DP_PHYS_I64) return DIPPER_MISUSE;
  int rc = dp_vector_room_(v);
  if (rc) return rc;
  int64_t i = v->length;
  switch (v->phys) {
  case DP_PHYS_I8: ((int8_t *)v->values)[i] = (int8_t)x; break;
  case DP_PHYS_I16: ((int16_t *)v->values)[i] = (int16_t)x; break;
  case DP_PHYS_I32: ((int32_t *)v->values)[i] = (int32_t)x; break;
  default: ((int64_t *)v->values)[i] = x; break;
  }
  return dp_vector_push_valid_(v);
}

static inline int dp_vector_append_f64(dp_vector *v, double x) {
  if (v->phys != DP_PHYS_F64 && v->phys != DP_PHYS_F32) return DIPPER_MISUSE;
  int rc = dp_vector_room_(v);
  if (rc) return rc;
  if (v->phys == DP_PHYS_F64)
    ((double *)v->values)[v->length] = x;
  else
    ((float *)v->values)[v->length] = (float)x;
  return dp_vector_push_valid_(v);
}

static inline int dp_vector_append_bool(dp_vector *v, bool x) {
  if (v->phys != DP_PHYS_BIT) return DIPPER_MISUSE;
  int rc = dp_vector_room_(v);
  if (rc) return rc;
  dp_bit_set((uint8_t *)v->values, v->length, x);
  return dp_vector_push_valid_(v);
}

/* DECIMAL, scaled by 10^scale of the column's type. */
static inline int dp_vector_append_dec(dp_vector *v, dp_i128 x) {
  if (v->phys != DP_PHYS_D128) return DIPPER_MISUSE;
  int rc = dp_vector_room_(v);
  if (rc) return rc;
  ((dp_i128 *)v->values)[v->length] = x;
  return dp_vector_push_valid_(v);
}

/* ---- getters (i < length) ---- */

static inline bool dp_vector_is_null(const dp_vector *v, int64_t i) {
  if (v->phys == DP_PHYS_NULL) return true;
  return v->validity && !dp_bit_get(v->validity, i);
}

static inline int64_t dp_vector_get_i64(const dp_vector *v, int64_t i) {
  switch (v->phys) {
  case DP_PHYS_I8: return ((const int8_t *)v->values)[i];
  case DP_PHYS_I16: return ((const int16_t *)v->values)[i];
  case DP_PHYS_I32: return ((const int32_t *)v->values)[i];
  case DP_PHYS_I64: return ((const int64_t *)v->values)[i];
  default: return 0;
  }
}

static inline double dp_vector_get_f64(const dp_vector *v, int64_t i) {
  if (v->phys == DP_PHYS_F64) return ((const double *)v->values)[i];
  if (v->phys == DP_PHYS_F32) return ((const float *)v->values)[i];
  return 0;
}

static inline bool dp_vector_get_bool(const dp_vector *v, int64_t i) {
  return v->phys == DP_PHYS_BIT && dp_bit_get((const uint8_t *)v->values, i);
}

static inline dp_i128 dp_vector_get_dec(const dp_vector *v, int64_t i) {
  return v->phys == DP_PHYS_D128 ? ((const dp_i128 *)v->values)[i] : 0;
}

/* Bytes of a STRING/BYTES row, borrowed until the vector is next changed. */
static inline const char *dp_vector_get_str(const dp_vector *v, int64_t i, size_t *len) {
  if (v->phys != DP_PHYS_VARBIN) {
    *len = 0;
    return "";
  }
  *len = (size_t)(v->offsets[i + 1] - v->offsets[i]);
  return v->data ? v->data + v->offsets[i] : "";
}

/* The child rows [*start, *end) of an ARRAY/MAP row. */
static inline void dp_vector_list_bounds(const dp_vector *v, int64_t i, int64_t *start,
                                         int64_t *end) {
  *start = v->offsets[i];
  *end = v->offsets[i + 1];
}

/* Row i as a dp_value; strings and nested items are copied into `a`.
** Returns false when out of memory. */
bool dp_vector_get_value(dp_arena *a, const dp_vector *v, int64_t i, dp_value *out);

/* ---- batches ---- */

typedef struct dp_batch {
  const dp_schema *schema; /* borrowed, like a vector's type */
  int ncols;
  dp_vector **cols;
  int64_t nrows;
  /* The rows' change kinds (exec/changelog.h: +I, -U, +U, -D as Flink's
  ** RowKind bytes), a TINYINT vector of nrows, owned like the columns; NULL:
  ** every row an insertion.  Only operators over an updating input read it. */
  dp_vector *change;
} dp_batch;

/* A batch with one empty vector per column of `schema`; the caller frees it
** with dp_batch_free.  NULL when out of memory. */
dp_batch *dp_batch_new(const dp_schema *schema, int64_t capacity);
void dp_batch_free(dp_batch *b);
void dp_batch_clear(dp_batch *b);
/* Take the row count from the columns after appending to them; DIPPER_MISUSE
** when the columns disagree. */
int dp_batch_sync(dp_batch *b);
/* dp_vector_take for the first dst->ncols columns of src (same types,
** column by column), then dst->nrows taken from the columns (DIPPER_MISUSE
** when they disagree; a batch of no columns just counts n more rows).  src
** must have at least dst's columns. */
int dp_batch_take(dp_batch *dst, const dp_batch *src, const int64_t *sel, int64_t start,
                  int64_t n);

/* ---- Arrow C Data Interface export ----
** Fills *schema and *array with a copy of the data: the vector stays the
** caller's and may change afterwards (see the _move variants below for
** handing the buffers over without a copy).  The consumer owns both results and
** calls their release callbacks, which free everything they own (children
** are released by their parent).  On failure both are left released
** (release == NULL) and the code says why. */
int dp_vector_export(const dp_vector *v, struct ArrowSchema *schema, struct ArrowArray *array);
/* The batch as a struct array, one child per column named by the schema. */
int dp_batch_export(const dp_batch *b, struct ArrowSchema *schema, struct ArrowArray *array);
/* Zero-copy variants: the export takes the buffers over, and the vector (or
** every column of the batch, nrows 0) is left empty and ready for new rows.
** The vector is emptied on failure too. */
int dp_vector_export_move(dp_vector *v, struct ArrowSchema *schema, struct ArrowArray *array);
int dp_batch_export_move(dp_batch *b, struct ArrowSchema *schema, struct ArrowArray *array);
/* The field metadata key under which a TIMESTAMP(p), TIMESTAMP_LTZ(p) or
** TIME(p) column's p goes out (one digit): Arrow's µs unit cannot say it. */
#define DP_ARROW_PRECISION_KEY "dipper.precision"
/* Only the schema (the type of the column, named `name`). */
int dp_type_export_schema(const dp_type *t, const char *name, struct ArrowSchema *schema);

#endif /* DP_VECTOR_H */
