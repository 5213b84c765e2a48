/*
** vector_import.c — Arrow C Data arrays appended to vectors and batches
** (vector_import.h).
**
** One pass per node: check the whole format tree first (so a mismatch
** appends nothing), then reserve the rows, re-pack the validity bits at the
** vector's current length, copy the values with memcpy (fixed width, string
** bytes) or rebase the offsets in one loop, and recurse into children with
** the rows they cover.  An Arrow array's offset applies to its children too
** (struct), and a list's offsets index into its child; `off` below always
** carries the absolute row in the node's own buffers.
*/
#include "core/vector_import.h"
#include "core/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OFFSET INT32_MAX

/* ---- format checks ---- */

static int mismatch(const dp_type *t, const struct ArrowSchema *s, const char *what, dp_buf *err) {
  if (err) {
    char type[128];
    dp_type_print(type, sizeof type, t);
    const char *want = dp_type_arrow_format(t);
    dp_buf_printf(err, "%s: Arrow format '%s' does not fit %s (expected '%s'%s)", what,
                  s->format ? s->format : "(null)", type, want ? want : "?",
                  t->kind == DP_T_ROW || t->kind == DP_T_ARRAY || t->kind == DP_T_MAP
                      ? " with matching children"
                      : "");
  }
  return DIPPER_TYPE;
}

static bool decimal_fits(const dp_type *t, const char *f) {
  int p = 0, s = 0, bw = 128, used = 0;
  if (f[0] != 'd' || f[1] != ':' || sscanf(f + 2, "%d,%d%n", &p, &s, &used) != 2) return false;
  if (f[2 + used] == ',' && sscanf(f + 3 + used, "%d", &bw) != 1) return false;
  return bw == 128 && s == t->scale && p >= 1 && p <= t->precision;
}

static bool format_fits(const dp_type *t, const char *f) {
  switch (t->kind) {
  case DP_T_DECIMAL: return decimal_fits(t, f);
  case DP_T_STRING: return strcmp(f, "u") == 0 || strcmp(f, "U") == 0;
  case DP_T_BYTES: return strcmp(f, "z") == 0 || strcmp(f, "Z") == 0;
  case DP_T_TIMESTAMP: return strcmp(f, "tsu:") == 0;
  case DP_T_TIMESTAMP_LTZ: return strncmp(f, "tsu:", 4) == 0 && f[4] != '\0';
  default: {
    const char *want = dp_type_arrow_format(t);
    return want && strcmp(f, want) == 0;
  }
  }
}

/* The precision of the metadata {"dipper.precision": "p"}, or `dflt`. */
static int metadata_precision(const char *m, int dflt) {
  if (!m) return dflt;
  int32_t n, klen, vlen;
  memcpy(&n, m, 4);
  m += 4;
  for (int32_t i = 0; i < n && i < 64; i++) {
    memcpy(&klen, m, 4);
    const char *key = m + 4;
    m = key + klen;
    memcpy(&vlen, m, 4);
    const char *val = m + 4;
    m = val + vlen;
    if (klen == (int32_t)strlen(DP_ARROW_PRECISION_KEY) &&
        memcmp(key, DP_ARROW_PRECISION_KEY, (size_t)klen) == 0 && vlen == 1 && val[0] >= '0' &&
        val[0] <= '9')
      return val[0] - '0';
  }
  return dflt;
}

const dp_type *dp_type_from_arrow(dp_arena *a, const struct ArrowSchema *s) {
  if (!s || !s->format) return NULL;
  const char *f = s->format;
  static const struct { const char *format; dp_type_kind kind; } plain[] = {
      {"n", DP_T_NULL},   {"b", DP_T_BOOLEAN}, {"c", DP_T_TINYINT}, {"s", DP_T_SMALLINT},
      {"i", DP_T_INT},    {"l", DP_T_BIGINT},  {"f", DP_T_FLOAT},   {"g", DP_T_DOUBLE},
      {"u", DP_T_STRING}, {"U", DP_T_STRING},  {"z", DP_T_BYTES},   {"Z", DP_T_BYTES},
      {"tdD", DP_T_DATE}, {"tDu", DP_T_INTERVAL_DT}, {"tiM", DP_T_INTERVAL_YM},
  };
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    if (strcmp(f, plain[i].format) == 0) return dp_type_of(plain[i].kind);
  if (strcmp(f, "ttu") == 0) {
    dp_type *t = dp_type_new(a, DP_T_TIME);
    if (t) t->precision = (uint8_t)metadata_precision(s->metadata, 6);
    return t;
  }
  if (strncmp(f, "tsu:", 4) == 0)
    return dp_type_timestamp(a, f[4] ? DP_T_TIMESTAMP_LTZ : DP_T_TIMESTAMP,
                             metadata_precision(s->metadata, 6));
  if (f[0] == 'd' && f[1] == ':') {
    int p = 0, sc = 0;
    if (sscanf(f + 2, "%d,%d", &p, &sc) != 2) return NULL;
    return dp_type_decimal(a, p, sc);
  }
  if (strcmp(f, "+l") == 0 && s->n_children == 1) {
    const dp_type *e = dp_type_from_arrow(a, s->children[0]);
    return e ? dp_type_array(a, e) : NULL;
  }
  if (strcmp(f, "+m") == 0 && s->n_children == 1 && s->children[0]->n_children == 2) {
    const dp_type *k = dp_type_from_arrow(a, s->children[0]->children[0]);
    const dp_type *v = dp_type_from_arrow(a, s->children[0]->children[1]);
    return k && v ? dp_type_map(a, k, v) : NULL;
  }
  if (strcmp(f, "+s") == 0) {
    int n = (int)s->n_children;
    dp_field *fields = dp_arena_calloc(a, n ? (size_t)n : 1, sizeof *fields);
    if (!fields) return NULL;
    for (int i = 0; i < n; i++) {
      fields[i].name = s->children[i]->name ? s->children[i]->name : "";
      fields[i].type = dp_type_from_arrow(a, s->children[i]);
      if (!fields[i].type) return NULL;
    }
    return dp_type_row(a, n, fields);
  }
  return NULL;
}

int dp_arrow_check_type(const dp_type *t, const struct ArrowSchema *s, const char *what,
                        dp_buf *err) {
  if (!t || !s || !s->format) return DIPPER_MISUSE;
  if (!format_fits(t, s->format)) return mismatch(t, s, what, err);
  int rc = DIPPER_OK;
  switch (t->kind) {
  case DP_T_ROW:
    if (s->n_children != t->nfields) return mismatch(t, s, what, err);
    for (int i = 0; i < t->nfields && !rc; i++)
      rc = dp_arrow_check_type(t->fields[i].type, s->children[i], what, err);
    return rc;
  case DP_T_ARRAY:
    if (s->n_children != 1) return mismatch(t, s, what, err);
    return dp_arrow_check_type(t->elem, s->children[0], what, err);
  case DP_T_MAP: {
    const struct ArrowSchema *e = s->n_children == 1 ? s->children[0] : NULL;
    if (!e || !e->format || strcmp(e->format, "+s") != 0 || e->n_children != 2)
      return mismatch(t, s, what, err);
    rc = dp_arrow_check_type(t->elem, e->children[0], what, err);
    if (!rc) rc = dp_arrow_check_type(t->value, e->children[1], what, err);
    return rc;
  }
  default:
    return DIPPER_OK;
  }
}

/* ---- bits ---- */

static size_t bitmap_bytes(int64_t rows) { return (size_t)((rows + 7) / 8); }

/* n bits of src from bit s to dst from bit d (dst bits outside the range
** are kept).  Whole bytes at a time once d is byte-aligned. */
static void copy_bits(uint8_t *dst, int64_t d, const uint8_t *src, int64_t s, int64_t n) {
  for (; n > 0 && (d & 7); n--, d++, s++) dp_bit_set(dst, d, dp_bit_get(src, s));
  unsigned sh = (unsigned)(s & 7);
  const uint8_t *p = src + (s >> 3);
  uint8_t *q = dst + (d >> 3);
  int64_t bytes = n >> 3;
  if (sh == 0) {
    memcpy(q, p, (size_t)bytes);
  } else {
    /* byte k needs bits of p[k] and p[k+1]; p[k+1] exists for every full
    ** output byte since sh > 0 means the source spans one more byte */
    for (int64_t k = 0; k < bytes; k++)
      q[k] = (uint8_t)((unsigned)p[k] >> sh | (unsigned)p[k + 1] << (8 - sh));
  }
  int64_t done = bytes * 8;
  for (int64_t i = done; i < n; i++) dp_bit_set(dst, d + i, dp_bit_get(src, s + i));
}

static int64_t count_zeros(const uint8_t *bits, int64_t from, int64_t n) {
  int64_t ones = 0, i = 0;
  for (; i < n && ((from + i) & 7); i++) ones += dp_bit_get(bits, from + i);
  for (; i + 8 <= n; i += 8) ones += __builtin_popcount(bits[(from + i) >> 3]);
  for (; i < n; i++) ones += dp_bit_get(bits, from + i);
  return n - ones;
}

/* Set bits [from, from+n) of bits. */
static void set_bits(uint8_t *bits, int64_t from, int64_t n) {
  int64_t i = 0;
  for (; i < n && ((from + i) & 7); i++) dp_bit_set(bits, from + i, true);
  int64_t bytes = (n - i) >> 3;
  memset(bits + ((from + i) >> 3), 0xFF, (size_t)bytes);
  for (i += bytes * 8; i < n; i++) dp_bit_set(bits, from + i, true);
}

/* The validity of rows [off, off+n) appended at v->length (room reserved).
** Returns the nulls among them, or -1 when out of memory. */
static int64_t append_validity(dp_vector *v, const struct ArrowArray *a, int64_t off, int64_t n) {
  const uint8_t *src = a->n_buffers > 0 ? a->buffers[0] : NULL;
  if (!src || a->null_count == 0) {
    if (v->validity) set_bits(v->validity, v->length, n);
    return 0;
  }
  if (!v->validity) {
    v->validity = calloc(bitmap_bytes(v->capacity) ? bitmap_bytes(v->capacity) : 1, 1);
    if (!v->validity) return -1;
    set_bits(v->validity, 0, v->length);
  }
  copy_bits(v->validity, v->length, src, off, n);
  return count_zeros(v->validity, v->length, n);
}

/* ---- appends ---- */

static int import_node(dp_vector *v, const struct ArrowSchema *s, const struct ArrowArray *a,
                       int64_t off, int64_t n, dp_buf *err);

/* The offsets of rows [off, off+n] (int32, or int64 for large types)
** rebased onto v's next offset `base`; returns the source start and end. */
static int append_offsets(dp_vector *v, const void *src, bool wide, int64_t off, int64_t n,
                          int64_t base, int64_t *start, int64_t *end) {
  int64_t s0 = wide ? ((const int64_t *)src)[off] : ((const int32_t *)src)[off];
  int64_t s1 = wide ? ((const int64_t *)src)[off + n] : ((const int32_t *)src)[off + n];
  if (s1 - s0 > MAX_OFFSET - base) return DIPPER_LIMIT;
  int32_t *dst = v->offsets + v->length + 1;
  if (wide) {
    const int64_t *o = (const int64_t *)src + off + 1;
    int64_t shift = base - s0;
    for (int64_t i = 0; i < n; i++) dst[i] = (int32_t)(o[i] + shift);
  } else {
    const int32_t *o = (const int32_t *)src + off + 1;
    int32_t shift = (int32_t)(base - s0); /* |shift| < 2^31: both in [0, 2^31) */
    for (int64_t i = 0; i < n; i++) dst[i] = (int32_t)((uint32_t)o[i] + (uint32_t)shift);
  }
  *start = s0;
  *end = s1;
  return DIPPER_OK;
}

static int append_varbin(dp_vector *v, const struct ArrowSchema *s, const struct ArrowArray *a,
                         int64_t off, int64_t n) {
  bool wide = s->format[0] == 'U' || s->format[0] == 'Z';
  int64_t start, end;
  int rc = append_offsets(v, a->buffers[1], wide, off, n, v->data_len, &start, &end);
  if (rc) return rc;
  int64_t need = v->data_len + (end - start);
  if (dp_grow(&v->data, &v->data_cap, need, 1, 64)) return DIPPER_NOMEM;
  if (end > start) memcpy(v->data + v->data_len, (const char *)a->buffers[2] + start, (size_t)(end - start));
  v->data_len = need;
  return DIPPER_OK;
}

static int import_node(dp_vector *v, const struct ArrowSchema *s, const struct ArrowArray *a,
                       int64_t off, int64_t n, dp_buf *err) {
  if (n == 0) return DIPPER_OK;
  if (v->length > MAX_OFFSET - n) return DIPPER_LIMIT;
  int rc = dp_vector_reserve(v, n);
  if (rc) return rc;
  if (v->phys == DP_PHYS_NULL) {
    v->length += n;
    v->null_count += n;
    return DIPPER_OK;
  }
  int64_t nulls = append_validity(v, a, off, n);
  if (nulls < 0) return DIPPER_NOMEM;
  int width = dp_phys_width(v->phys);
  switch (v->phys) {
  case DP_PHYS_BIT:
    copy_bits(v->values, v->length, a->buffers[1], off, n);
    break;
  case DP_PHYS_VARBIN:
    rc = append_varbin(v, s, a, off, n);
    break;
  case DP_PHYS_LIST: {
    dp_vector *child = v->children[0];
    int64_t start, end;
    rc = append_offsets(v, a->buffers[1], false, off, n, child->length, &start, &end);
    if (!rc) {
      const struct ArrowArray *ca = a->children[0];
      rc = import_node(child, s->children[0], ca, ca->offset + start, end - start, err);
    }
    break;
  }
  case DP_PHYS_STRUCT:
    for (int i = 0; i < v->nchildren && !rc; i++) {
      const struct ArrowArray *ca = a->children[i];
      rc = import_node(v->children[i], s->children[i], ca, ca->offset + off, n, err);
    }
    break;
  default: /* fixed width */
    memcpy((char *)v->values + v->length * width, (const char *)a->buffers[1] + off * width,
           (size_t)(n * width));
    break;
  }
  if (rc) return rc;
  v->length += n;
  v->null_count += nulls;
  return DIPPER_OK;
}

int dp_vector_import(dp_vector *v, const struct ArrowSchema *schema, const struct ArrowArray *array,
                     dp_buf *err) {
  if (!v || !schema || !array || !array->release || array->length < 0) return DIPPER_MISUSE;
  int rc = dp_arrow_check_type(v->type, schema, "array", err);
  if (!rc) rc = import_node(v, schema, array, array->offset, array->length, err);
  if (rc == DIPPER_LIMIT && err)
    dp_buf_puts(err, "array: more than 2^31-1 rows or bytes in one vector");
  return rc;
}

int dp_batch_import(dp_batch *b, const struct ArrowSchema *schema, const struct ArrowArray *array,
                    dp_buf *err) {
  if (!b || !schema || !array || !array->release || array->length < 0) return DIPPER_MISUSE;
  if (!schema->format || strcmp(schema->format, "+s") != 0 || schema->n_children != b->ncols ||
      array->n_children != b->ncols) {
    if (err)
      dp_buf_printf(err, "Arrow batch of format '%s' with %lld columns does not fit a schema of %d columns",
                    schema->format ? schema->format : "(null)", (long long)schema->n_children, b->ncols);
    return DIPPER_TYPE;
  }
  for (int i = 0; i < b->ncols; i++) {
    char what[160];
    snprintf(what, sizeof what, "column '%s'", b->schema->cols[i].name ? b->schema->cols[i].name : "");
    int rc = dp_arrow_check_type(b->cols[i]->type, schema->children[i], what, err);
    if (rc) return rc;
  }
  for (int i = 0; i < b->ncols; i++) {
    const struct ArrowArray *c = array->children[i];
    int rc = import_node(b->cols[i], schema->children[i], c, c->offset + array->offset, array->length, err);
    if (rc) {
      if (rc == DIPPER_LIMIT && err)
        dp_buf_printf(err, "column '%s': more than 2^31-1 rows or bytes in one vector",
                      b->schema->cols[i].name ? b->schema->cols[i].name : "");
      return rc;
    }
  }
  b->nrows += array->length;
  return DIPPER_OK;
}
