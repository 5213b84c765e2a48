/*
** vector.c — columnar vectors and batches (vector.h): construction, growth,
** the slow paths of appending, values out, and batches.
**
** The Arrow C Data export lives in vector_export.c, the row gather
** (dp_vector_take, dp_batch_take, dp_vector_append_from) in vector_take.c.
**
** Growth doubles the row capacity (16 at least) and grows every buffer of the
** vector together, so the inline fast paths need one capacity check.  New
** bitmap bytes are zeroed so that exported bitmaps hold no stray bits.
*/
#include "core/vector.h"
#include "core/grow.h"

#include <stdlib.h>
#include <string.h>

#define MIN_CAPACITY 16
#define MAX_OFFSET INT32_MAX /* int32 offsets bound the bytes and elements */

static const struct {
  dp_phys phys;
} phys_table[DP_T_COUNT_] = {
    [DP_T_NULL] = {DP_PHYS_NULL},       [DP_T_BOOLEAN] = {DP_PHYS_BIT},
    [DP_T_TINYINT] = {DP_PHYS_I8},      [DP_T_SMALLINT] = {DP_PHYS_I16},
    [DP_T_INT] = {DP_PHYS_I32},         [DP_T_BIGINT] = {DP_PHYS_I64},
    [DP_T_FLOAT] = {DP_PHYS_F32},       [DP_T_DOUBLE] = {DP_PHYS_F64},
    [DP_T_DECIMAL] = {DP_PHYS_D128},    [DP_T_STRING] = {DP_PHYS_VARBIN},
    [DP_T_BYTES] = {DP_PHYS_VARBIN},    [DP_T_DATE] = {DP_PHYS_I32},
    [DP_T_TIME] = {DP_PHYS_I64},        [DP_T_TIMESTAMP] = {DP_PHYS_I64},
    [DP_T_TIMESTAMP_LTZ] = {DP_PHYS_I64}, [DP_T_INTERVAL_DT] = {DP_PHYS_I64},
    [DP_T_INTERVAL_YM] = {DP_PHYS_I32}, [DP_T_ROW] = {DP_PHYS_STRUCT},
    [DP_T_ARRAY] = {DP_PHYS_LIST},      [DP_T_MAP] = {DP_PHYS_LIST},
};

dp_phys dp_phys_of(const dp_type *t) {
  if (!t || (unsigned)t->kind >= DP_T_COUNT_) return DP_PHYS_NULL;
  return phys_table[t->kind].phys;
}

int dp_phys_width(dp_phys p) {
  static const int widths[] = {
      [DP_PHYS_I8] = 1,  [DP_PHYS_I16] = 2, [DP_PHYS_I32] = 4,  [DP_PHYS_I64] = 8,
      [DP_PHYS_F32] = 4, [DP_PHYS_F64] = 8, [DP_PHYS_D128] = 16, [DP_PHYS_STRUCT] = 0,
  };
  return (unsigned)p < sizeof widths / sizeof widths[0] ? widths[p] : 0;
}

static size_t bitmap_bytes(int64_t rows) { return (size_t)((rows + 7) / 8); }

/* realloc that zeroes the bytes past old_size. */
static void *grow_zeroed(void *p, size_t old_size, size_t new_size) {
  void *q = realloc(p, new_size ? new_size : 1);
  if (q && new_size > old_size) memset((char *)q + old_size, 0, new_size - old_size);
  return q;
}

int dp_vector_reserve(dp_vector *v, int64_t extra) {
  if (extra < 0 || v->length > INT64_MAX - extra) return DIPPER_LIMIT;
  int64_t need = v->length + extra;
  if (need <= v->capacity) return DIPPER_OK;
  int64_t cap = v->capacity > INT64_MAX / 2 ? need : v->capacity * 2;
  if (cap < need) cap = need;
  if (cap < MIN_CAPACITY) cap = MIN_CAPACITY;
  if (cap > (int64_t)(SIZE_MAX / 32)) return DIPPER_NOMEM;
  int width = dp_phys_width(v->phys);
  /* Each buffer grows on its own; a failure part-way leaves the bigger
  ** buffers in place and the old capacity, which is still correct. */
  if (width) {
    void *p = realloc(v->values, (size_t)cap * (size_t)width);
    if (!p) return DIPPER_NOMEM;
    v->values = p;
  } else if (v->phys == DP_PHYS_BIT) {
    void *p = grow_zeroed(v->values, bitmap_bytes(v->capacity), bitmap_bytes(cap));
    if (!p) return DIPPER_NOMEM;
    v->values = p;
  }
  if (v->phys == DP_PHYS_VARBIN || v->phys == DP_PHYS_LIST) {
    int32_t *p = realloc(v->offsets, (size_t)(cap + 1) * sizeof *p);
    if (!p) return DIPPER_NOMEM;
    if (!v->offsets) p[0] = 0;
    v->offsets = p;
  }
  if (v->validity) {
    uint8_t *p = grow_zeroed(v->validity, bitmap_bytes(v->capacity), bitmap_bytes(cap));
    if (!p) return DIPPER_NOMEM;
    v->validity = p;
  }
  v->capacity = cap;
  return DIPPER_OK;
}

/* The ROW<key, value> that a MAP's child is made of.  Kept by the vector
** because no arena is at hand; the member types stay borrowed. */
static dp_type *map_entries_type(const dp_type *map) {
  struct {
    dp_type type;
    dp_field fields[2];
  } *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->fields[0].name = "key";
  m->fields[0].type = map->elem;
  m->fields[1].name = "value";
  m->fields[1].type = map->value;
  m->type.kind = DP_T_ROW;
  m->type.not_null = true;
  m->type.nfields = 2;
  m->type.fields = m->fields;
  return &m->type;
}

static bool make_children(dp_vector *v, int64_t capacity) {
  const dp_type *t = v->type;
  int n = 0;
  if (t->kind == DP_T_ROW)
    n = t->nfields;
  else if (t->kind == DP_T_ARRAY || t->kind == DP_T_MAP)
    n = 1;
  if (n == 0) return true;
  v->children = calloc((size_t)n, sizeof *v->children);
  if (!v->children) return false;
  v->nchildren = n;
  if (t->kind == DP_T_MAP) {
    v->owned_type = map_entries_type(t);
    if (!v->owned_type) return false;
  }
  for (int i = 0; i < n; i++) {
    const dp_type *ct = t->kind == DP_T_ROW     ? t->fields[i].type
                        : t->kind == DP_T_ARRAY ? t->elem
                                                : v->owned_type;
    v->children[i] = dp_vector_new(ct, capacity);
    if (!v->children[i]) return false;
  }
  return true;
}

dp_vector *dp_vector_new(const dp_type *t, int64_t capacity) {
  if (!t || (unsigned)t->kind >= DP_T_COUNT_) return NULL;
  dp_vector *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  v->type = t;
  v->phys = dp_phys_of(t);
  if (!make_children(v, capacity) ||
      dp_vector_reserve(v, capacity > 0 ? capacity : MIN_CAPACITY) != DIPPER_OK) {
    dp_vector_free(v);
    return NULL;
  }
  return v;
}

void dp_vector_free(dp_vector *v) {
  if (!v) return;
  for (int i = 0; i < v->nchildren; i++) dp_vector_free(v->children[i]);
  free(v->children);
  free(v->owned_type);
  free(v->validity);
  free(v->values);
  free(v->offsets);
  free(v->data);
  free(v);
}

void dp_vector_clear(dp_vector *v) {
  if (!v) return;
  for (int i = 0; i < v->nchildren; i++) dp_vector_clear(v->children[i]);
  /* the bitmap goes: "no nulls" is spelled validity == NULL */
  free(v->validity);
  v->validity = NULL;
  v->length = v->null_count = v->data_len = 0;
  if (v->offsets) v->offsets[0] = 0;
}

void dp_vector_truncate(dp_vector *v, int64_t length) {
  if (length >= v->length) return;
  if (v->validity)
    for (int64_t i = length; i < v->length; i++)
      if (!dp_bit_get(v->validity, i)) v->null_count--;
  if (v->phys == DP_PHYS_NULL) v->null_count = length;
  if (v->phys == DP_PHYS_VARBIN) v->data_len = v->offsets[length];
  if (v->phys == DP_PHYS_LIST) dp_vector_truncate(v->children[0], v->offsets[length]);
  if (v->phys == DP_PHYS_STRUCT)
    for (int i = 0; i < v->nchildren; i++) dp_vector_truncate(v->children[i], length);
  v->length = length;
}

/* Everything a null row needs allocated, so that writing it cannot fail:
** room in this vector, its bitmap, and the same for a ROW's children. */
static int prepare_null(dp_vector *v) {
  if (v->length < v->capacity && v->validity && v->phys != DP_PHYS_STRUCT) return DIPPER_OK;
  int rc = dp_vector_room_(v);
  if (rc) return rc;
  if (v->phys != DP_PHYS_NULL && !v->validity) {
    v->validity = calloc(bitmap_bytes(v->capacity) ? bitmap_bytes(v->capacity) : 1, 1);
    if (!v->validity) return DIPPER_NOMEM;
    for (int64_t i = 0; i < v->length; i++) dp_bit_set(v->validity, i, true);
  }
  if (v->phys == DP_PHYS_STRUCT)
    for (int i = 0; i < v->nchildren; i++)
      if ((rc = prepare_null(v->children[i])) != DIPPER_OK) return rc;
  return DIPPER_OK;
}

static void write_null(dp_vector *v) {
  int64_t i = v->length;
  /* Zeroed slots keep exported buffers deterministic.  One store per layout,
  ** no memset call: a NULL ROW writes a null into each of its fields (the
  ** Nexmark events hold two NULL ROWs of 7 to 10 fields each). */
  switch (v->phys) {
  case DP_PHYS_NULL: break;
  case DP_PHYS_BIT: dp_bit_set(v->values, i, false); break;
  case DP_PHYS_I8: ((int8_t *)v->values)[i] = 0; break;
  case DP_PHYS_I16: ((int16_t *)v->values)[i] = 0; break;
  case DP_PHYS_I32:
  case DP_PHYS_F32: ((int32_t *)v->values)[i] = 0; break;
  case DP_PHYS_I64:
  case DP_PHYS_F64: ((int64_t *)v->values)[i] = 0; break;
  case DP_PHYS_D128: memset((char *)v->values + i * 16, 0, 16); break;
  case DP_PHYS_VARBIN:
  case DP_PHYS_LIST: v->offsets[i + 1] = v->offsets[i]; break;
  case DP_PHYS_STRUCT:
    for (int c = 0; c < v->nchildren; c++) write_null(v->children[c]);
    break;
  }
  if (v->validity) dp_bit_set(v->validity, i, false);
  v->null_count++;
  v->length++;
}

int dp_vector_append_null(dp_vector *v) {
  int rc = prepare_null(v);
  if (rc) return rc;
  write_null(v);
  return DIPPER_OK;
}

int dp_vector_append_str(dp_vector *v, const char *p, size_t n) {
  if (v->phys != DP_PHYS_VARBIN) return DIPPER_MISUSE;
  if (n > (size_t)(MAX_OFFSET - v->data_len)) return DIPPER_LIMIT;
  int rc = dp_vector_room_(v);
  if (rc) return rc;
  int64_t need = v->data_len + (int64_t)n;
  if (dp_grow(&v->data, &v->data_cap, need, 1, 64)) return DIPPER_NOMEM;
  if (n) memcpy(v->data + v->data_len, p, n);
  v->data_len = need;
  v->offsets[v->length + 1] = (int32_t)need;
  return dp_vector_push_valid_(v);
}

int dp_vector_append_struct(dp_vector *v) {
  if (v->phys != DP_PHYS_STRUCT) return DIPPER_MISUSE;
  for (int i = 0; i < v->nchildren; i++)
    if (v->children[i]->length != v->length + 1) return DIPPER_MISUSE;
  int rc = dp_vector_room_(v);
  if (rc) return rc;
  return dp_vector_push_valid_(v);
}

int dp_vector_append_list(dp_vector *v) {
  if (v->phys != DP_PHYS_LIST) return DIPPER_MISUSE;
  int64_t end = v->children[0]->length;
  if (end > MAX_OFFSET) return DIPPER_LIMIT;
  int rc = dp_vector_room_(v); /* first: a moved-out vector has no offsets yet */
  if (rc) return rc;
  if (end < v->offsets[v->length]) return DIPPER_MISUSE;
  v->offsets[v->length + 1] = (int32_t)end;
  return dp_vector_push_valid_(v);
}

/* ---- appending dp_values ---- */

/* 10^n for n <= 38 */
static dp_i128 pow10_i128(int n) {
  dp_i128 p = 1;
  for (int i = 0; i < n; i++) p *= 10;
  return p;
}

/* A numeric value as the column's DECIMAL: rescaled, rounding half away
** from zero when the scale shrinks.  False when it does not fit. */
static bool value_as_decimal(const dp_value *x, int scale, dp_i128 *out) {
  int from_scale = 0;
  dp_i128 d;
  if (x->type->kind == DP_T_DECIMAL) {
    d = x->u.dec;
    from_scale = x->type->scale;
  } else if (dp_type_is_integer(x->type)) {
    d = x->u.i;
  } else {
    return false;
  }
  if (scale > from_scale) {
    dp_i128 f = pow10_i128(scale - from_scale);
    if (__builtin_mul_overflow(d, f, &d)) return false;
  } else if (scale < from_scale) {
    dp_i128 f = pow10_i128(from_scale - scale);
    dp_i128 q = d / f, r = d % f;
    if (2 * (r < 0 ? -r : r) >= f) q += d < 0 ? -1 : 1;
    d = q;
  }
  *out = d;
  return true;
}

static int append_scalar(dp_vector *v, const dp_value *x) {
  dp_type_kind k = x->type->kind;
  bool approx = k == DP_T_FLOAT || k == DP_T_DOUBLE;
  switch (v->phys) {
  case DP_PHYS_BIT:
    return k == DP_T_BOOLEAN ? dp_vector_append_bool(v, x->u.b) : DIPPER_MISUSE;
  case DP_PHYS_I8:
  case DP_PHYS_I16:
  case DP_PHYS_I32:
  case DP_PHYS_I64:
    if (approx || k == DP_T_DECIMAL || k == DP_T_BOOLEAN || dp_phys_of(x->type) > DP_PHYS_I64)
      return DIPPER_MISUSE;
    return dp_vector_append_i64(v, x->u.i);
  case DP_PHYS_F32:
  case DP_PHYS_F64:
    if (approx) return dp_vector_append_f64(v, x->u.d);
    if (dp_type_is_integer(x->type)) return dp_vector_append_f64(v, (double)x->u.i);
    if (k == DP_T_DECIMAL)
      return dp_vector_append_f64(v, (double)x->u.dec / (double)pow10_i128(x->type->scale));
    return DIPPER_MISUSE;
  case DP_PHYS_D128: {
    dp_i128 d;
    if (!value_as_decimal(x, v->type->scale, &d)) return DIPPER_MISUSE;
    return dp_vector_append_dec(v, d);
  }
  case DP_PHYS_VARBIN:
    if (k != DP_T_STRING && k != DP_T_BYTES) return DIPPER_MISUSE;
    return dp_vector_append_str(v, x->u.s.ptr, x->u.s.len);
  default:
    return DIPPER_MISUSE;
  }
}

static int append_members(dp_vector *v, const dp_value *x) {
  int n = x->u.list.n;
  const dp_value *items = x->u.list.items;
  int rc = DIPPER_OK;
  if (v->type->kind == DP_T_ROW) {
    if (n != v->nchildren) return DIPPER_MISUSE;
    for (int i = 0; i < n && !rc; i++) rc = dp_vector_append_value(v->children[i], &items[i]);
    return rc ? rc : dp_vector_append_struct(v);
  }
  if (v->type->kind == DP_T_ARRAY) {
    for (int i = 0; i < n && !rc; i++) rc = dp_vector_append_value(v->children[0], &items[i]);
    return rc ? rc : dp_vector_append_list(v);
  }
  /* MAP: items are the n keys, then the n values */
  dp_vector *entries = v->children[0];
  for (int i = 0; i < n && !rc; i++) {
    rc = dp_vector_append_value(dp_vector_map_keys(v), &items[i]);
    if (!rc) rc = dp_vector_append_value(dp_vector_map_values(v), &items[n + i]);
    if (!rc) rc = dp_vector_append_struct(entries);
  }
  return rc ? rc : dp_vector_append_list(v);
}

int dp_vector_append_value(dp_vector *v, const dp_value *x) {
  if (!x->type || x->is_null || x->type->kind == DP_T_NULL) return dp_vector_append_null(v);
  if (v->phys != DP_PHYS_STRUCT && v->phys != DP_PHYS_LIST) return append_scalar(v, x);
  if (x->type->kind != v->type->kind || x->u.list.n < 0) return DIPPER_MISUSE;
  int64_t before = v->length;
  int64_t elements_before = v->phys == DP_PHYS_LIST ? v->children[0]->length : 0;
  int rc = append_members(v, x);
  if (rc) {
    /* The row itself is closed last, so only members can be left over:
    ** cut the children back to their lengths before this row. */
    if (v->phys == DP_PHYS_LIST)
      dp_vector_truncate(v->children[0], elements_before);
    else
      for (int i = 0; i < v->nchildren; i++) dp_vector_truncate(v->children[i], before);
  }
  return rc;
}

/* ---- values out ---- */

bool dp_vector_get_value(dp_arena *a, const dp_vector *v, int64_t i, dp_value *out) {
  memset(out, 0, sizeof *out);
  out->type = v->type;
  if (dp_vector_is_null(v, i)) {
    out->is_null = true;
    return true;
  }
  switch (v->phys) {
  case DP_PHYS_BIT:
    out->u.b = dp_vector_get_bool(v, i);
    return true;
  case DP_PHYS_F32:
  case DP_PHYS_F64:
    out->u.d = dp_vector_get_f64(v, i);
    return true;
  case DP_PHYS_D128:
    out->u.dec = dp_vector_get_dec(v, i);
    return true;
  case DP_PHYS_VARBIN: {
    size_t len;
    const char *p = dp_vector_get_str(v, i, &len);
    char *copy = dp_arena_alloc(a, len + 1);
    if (!copy) return false;
    memcpy(copy, p, len);
    copy[len] = '\0';
    out->u.s.ptr = copy;
    out->u.s.len = len;
    return true;
  }
  case DP_PHYS_STRUCT: {
    dp_value *items = dp_arena_calloc(a, (size_t)v->nchildren, sizeof *items);
    if (v->nchildren && !items) return false;
    for (int c = 0; c < v->nchildren; c++)
      if (!dp_vector_get_value(a, v->children[c], i, &items[c])) return false;
    out->u.list.n = v->nchildren;
    out->u.list.items = items;
    return true;
  }
  case DP_PHYS_LIST: {
    int64_t start, end;
    dp_vector_list_bounds(v, i, &start, &end);
    int n = (int)(end - start);
    bool is_map = v->type->kind == DP_T_MAP;
    dp_value *items = dp_arena_calloc(a, (size_t)n * (is_map ? 2u : 1u), sizeof *items);
    if (n && !items) return false;
    for (int k = 0; k < n; k++) {
      if (!is_map) {
        if (!dp_vector_get_value(a, v->children[0], start + k, &items[k])) return false;
      } else if (!dp_vector_get_value(a, v->children[0]->children[0], start + k, &items[k]) ||
                 !dp_vector_get_value(a, v->children[0]->children[1], start + k, &items[n + k])) {
        return false;
      }
    }
    out->u.list.n = n;
    out->u.list.items = items;
    return true;
  }
  default:
    out->u.i = dp_vector_get_i64(v, i);
    return true;
  }
}

/* ---- batches ---- */

dp_batch *dp_batch_new(const dp_schema *schema, int64_t capacity) {
  if (!schema) return NULL;
  dp_batch *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->schema = schema;
  b->cols = calloc(schema->ncols ? (size_t)schema->ncols : 1, sizeof *b->cols);
  if (!b->cols) {
    free(b);
    return NULL;
  }
  b->ncols = schema->ncols;
  for (int i = 0; i < b->ncols; i++) {
    b->cols[i] = dp_vector_new(schema->cols[i].type, capacity);
    if (!b->cols[i]) {
      dp_batch_free(b);
      return NULL;
    }
  }
  return b;
}

void dp_batch_free(dp_batch *b) {
  if (!b) return;
  for (int i = 0; i < b->ncols; i++) dp_vector_free(b->cols[i]);
  dp_vector_free(b->change);
  free(b->cols);
  free(b);
}

void dp_batch_clear(dp_batch *b) {
  if (!b) return;
  for (int i = 0; i < b->ncols; i++) dp_vector_clear(b->cols[i]);
  if (b->change) dp_vector_clear(b->change);
  b->nrows = 0;
}

int dp_batch_sync(dp_batch *b) {
  if (b->ncols == 0) return DIPPER_OK;
  int64_t n = b->cols[0]->length;
  for (int i = 1; i < b->ncols; i++)
    if (b->cols[i]->length != n) return DIPPER_MISUSE;
  b->nrows = n;
  return DIPPER_OK;
}
