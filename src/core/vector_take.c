/*
** vector_take.c — the row gather of vector.h: append rows picked by an index
** list (or a run of consecutive rows) of one vector to another, for every
** physical layout, and the same over the columns of a batch.
**
** Owns: dp_vector_take, dp_batch_take, dp_vector_append_from (one row) and
** dp_vector_append_nulls (n NULL rows at once).  Every operator that copies
** rows — filter compaction, join pairs and their NULL padding, group key
** stores, sorts, window assignment — goes through here, so the fast paths
** live in one place:
**   - validity is gathered eight rows to a byte store, and costs nothing
**     when the source has no nulls and the destination keeps no bitmap;
**   - fixed-width values are copied by a typed loop per width (one memcpy
**     for a run), strings sized once and copied without per-row growth;
**   - BOOLEAN values are gathered as bits, like validity;
**   - ROW columns are gathered child by child with the same selection, and a
**     member that is NULL wherever its ROW is gets n NULLs in one call when
**     every picked ROW is NULL (Nexmark's person/auction columns of bids);
**   - ARRAY/MAP columns gather their elements in one recursive call with an
**     element index list (a run when the rows are consecutive and non-null).
** A picked NULL row keeps the source's slot contents (Arrow allows any value
** under a NULL); a negative index writes a zeroed NULL slot as
** dp_vector_append_null does.  Only rows of a different layout than the
** destination fall back to dp_vector_append_from, one row at a time.
**
** Does not own: vector layout and growth (vector.c), what to pick (exec/).
*/
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/vector.h"

#define MAX_OFFSET INT32_MAX /* int32 offsets bound the bytes and elements */

/* Which rows to take: sel[k] (negative = a NULL row) or, sel NULL, start + k. */
typedef struct pick {
  const int64_t *sel;
  int64_t start;
  bool neg; /* some sel[k] < 0 */
} pick;

static inline int64_t row_at(pick p, int64_t k) { return p.sel ? p.sel[k] : p.start + k; }

static size_t bitmap_bytes(int64_t rows) { return (size_t)((rows + 7) / 8); }

static bool any_negative(const int64_t *sel, int64_t n) {
  int64_t acc = 0;
  for (int64_t k = 0; k < n; k++) acc |= sel[k];
  return acc < 0;
}

/* A validity bitmap for v's capacity with rows [0, n) valid. */
static int ensure_validity(dp_vector *v, int64_t n) {
  if (v->validity) return DIPPER_OK;
  size_t bytes = bitmap_bytes(v->capacity > n ? v->capacity : n);
  v->validity = calloc(bytes ? bytes : 1, 1);
  if (!v->validity) return DIPPER_NOMEM;
  memset(v->validity, 0xff, (size_t)(n >> 3));
  if (n & 7) v->validity[n >> 3] = (uint8_t)((1u << (unsigned)(n & 7)) - 1u);
  return DIPPER_OK;
}

/* Set (on) or clear bits [from, from + n) of a bitmap, whole bytes at a time. */
static void fill_bits(uint8_t *bits, int64_t from, int64_t n, bool on) {
  int64_t i = from, end = from + n;
  for (; i < end && (i & 7); i++) dp_bit_set(bits, i, on);
  if (end - i >= 8) {
    memset(bits + (i >> 3), on ? 0xff : 0, (size_t)((end - i) >> 3));
    i += (end - i) & ~(int64_t)7;
  }
  for (; i < end; i++) dp_bit_set(bits, i, on);
}

/* Bit k of the picked rows: src's bit (every bit set when src is NULL), 0
** for a negative index. */
static inline unsigned pick_bit(const uint8_t *src, pick p, int64_t k) {
  int64_t r = row_at(p, k);
  if (p.neg && r < 0) return 0;
  return src ? dp_bit_get(src, r) : 1u;
}

/* Bits of the picked rows written at [base, base + n) of dst, eight to a
** byte store once base is byte-aligned; returns how many are set. */
static int64_t gather_bits(uint8_t *dst, int64_t base, const uint8_t *src, pick p, int64_t n) {
  int64_t set = 0, k = 0;
  for (; k < n && ((base + k) & 7); k++) {
    unsigned on = pick_bit(src, p, k);
    dp_bit_set(dst, base + k, on);
    set += on;
  }
  if (!p.sel && src) {
    /* A run: each byte out is two neighbouring bytes in, shifted.  Byte
    ** (r + 7) >> 3 holds row r + 7 < the source's length, so it exists. */
    for (; k + 8 <= n; k += 8) {
      int64_t r = p.start + k;
      unsigned sh = (unsigned)(r & 7), lo = src[r >> 3];
      unsigned byte = sh ? (lo >> sh | (unsigned)src[(r + 7) >> 3] << (8u - sh)) & 0xffu : lo;
      dst[(base + k) >> 3] = (uint8_t)byte;
      set += __builtin_popcount(byte);
    }
  } else {
    for (; k + 8 <= n; k += 8) {
      unsigned byte = 0;
      for (unsigned j = 0; j < 8; j++) byte |= pick_bit(src, p, k + j) << j;
      dst[(base + k) >> 3] = (uint8_t)byte;
      set += __builtin_popcount(byte);
    }
  }
  for (; k < n; k++) {
    unsigned on = pick_bit(src, p, k);
    dp_bit_set(dst, base + k, on);
    set += on;
  }
  return set;
}

/* The validity of the picked rows as rows [base, base + n) of dst. */
static int take_validity(dp_vector *dst, const dp_vector *src, pick p, int64_t n, int64_t base) {
  bool src_nulls = src->validity && src->null_count > 0;
  if (!src_nulls && !p.neg) {
    if (dst->validity) fill_bits(dst->validity, base, n, true);
    return DIPPER_OK;
  }
  int rc = ensure_validity(dst, base);
  if (rc) return rc;
  int64_t valid = gather_bits(dst->validity, base, src_nulls ? src->validity : NULL, p, n);
  dst->null_count += n - valid;
  return DIPPER_OK;
}

int dp_vector_append_nulls(dp_vector *v, int64_t n) {
  if (n <= 0) return DIPPER_OK;
  int rc = dp_vector_reserve(v, n);
  if (rc) return rc;
  int64_t base = v->length;
  if (v->phys != DP_PHYS_NULL) {
    if ((rc = ensure_validity(v, base)) != DIPPER_OK) return rc;
    fill_bits(v->validity, base, n, false);
  }
  int width = dp_phys_width(v->phys);
  if (width) memset((char *)v->values + base * width, 0, (size_t)(n * width));
  if (v->phys == DP_PHYS_BIT) fill_bits(v->values, base, n, false);
  if (v->phys == DP_PHYS_VARBIN || v->phys == DP_PHYS_LIST)
    for (int64_t k = 0; k < n; k++) v->offsets[base + k + 1] = v->offsets[base];
  if (v->phys == DP_PHYS_STRUCT)
    for (int i = 0; i < v->nchildren; i++)
      if ((rc = dp_vector_append_nulls(v->children[i], n)) != DIPPER_OK) {
        for (int j = 0; j < i; j++) dp_vector_truncate(v->children[j], base);
        return rc;
      }
  v->null_count += n;
  v->length = base + n;
  return DIPPER_OK;
}

static int take_any(dp_vector *dst, const dp_vector *src, pick p, int64_t n);

/* Fixed-width values; a negative index gets a zeroed slot. */
static void take_fixed(char *d, const char *s, int width, pick p, int64_t n) {
  if (!p.sel) {
    memcpy(d, s + p.start * width, (size_t)(n * width));
    return;
  }
  const int64_t *sel = p.sel;
  if (p.neg) {
    for (int64_t k = 0; k < n; k++) {
      if (sel[k] < 0)
        memset(d + k * width, 0, (size_t)width);
      else
        memcpy(d + k * width, s + sel[k] * width, (size_t)width);
    }
    return;
  }
  switch (width) {
  case 8:
    for (int64_t k = 0; k < n; k++)
      ((int64_t *)(void *)d)[k] = ((const int64_t *)(const void *)s)[sel[k]];
    break;
  case 4:
    for (int64_t k = 0; k < n; k++)
      ((int32_t *)(void *)d)[k] = ((const int32_t *)(const void *)s)[sel[k]];
    break;
  case 2:
    for (int64_t k = 0; k < n; k++)
      ((int16_t *)(void *)d)[k] = ((const int16_t *)(const void *)s)[sel[k]];
    break;
  case 1:
    for (int64_t k = 0; k < n; k++) ((int8_t *)d)[k] = ((const int8_t *)s)[sel[k]];
    break;
  default: /* 16: DECIMAL */
    for (int64_t k = 0; k < n; k++) memcpy(d + k * width, s + sel[k] * width, (size_t)width);
  }
}

/* STRING/BYTES: the bytes sized once, then copied; a negative index is an
** empty slot. */
static int take_varbin(dp_vector *dst, const dp_vector *src, pick p, int64_t n, int64_t base) {
  const int32_t *so = src->offsets;
  int64_t bytes = 0;
  if (!p.sel) {
    bytes = so[p.start + n] - so[p.start];
  } else {
    for (int64_t k = 0; k < n; k++) {
      int64_t r = p.sel[k];
      if (!p.neg || r >= 0) bytes += so[r + 1] - so[r];
    }
  }
  if (bytes > MAX_OFFSET - dst->data_len) return DIPPER_LIMIT;
  if (dp_grow(&dst->data, &dst->data_cap, dst->data_len + bytes, 1, 64)) return DIPPER_NOMEM;
  int64_t at = dst->data_len;
  int32_t *dofs = dst->offsets + base + 1;
  if (!p.sel) {
    if (bytes) memcpy(dst->data + at, src->data + so[p.start], (size_t)bytes);
    int32_t shift = (int32_t)(at - so[p.start]);
    for (int64_t k = 0; k < n; k++) dofs[k] = so[p.start + k + 1] + shift;
    at += bytes;
  } else {
    for (int64_t k = 0; k < n; k++) {
      int64_t r = p.sel[k];
      if (!p.neg || r >= 0) {
        int32_t from = so[r], len = so[r + 1] - from;
        if (len) memcpy(dst->data + at, src->data + from, (size_t)len);
        at += len;
      }
      dofs[k] = (int32_t)at;
    }
  }
  dst->data_len = at;
  return DIPPER_OK;
}

/* ARRAY/MAP: the elements of the live rows in one gather of the child (a
** run when the rows are), then the offsets.  A NULL or negative row gets
** no elements, as dp_vector_append_null gives it none. */
static int take_list(dp_vector *dst, const dp_vector *src, pick p, int64_t n, int64_t base) {
  const int32_t *so = src->offsets;
  const uint8_t *valid = src->validity && src->null_count > 0 ? src->validity : NULL;
  dp_vector *dchild = dst->children[0];
  int64_t child_before = dchild->length, total = 0;
  int rc;
  if (!p.sel && !valid) {
    total = so[p.start + n] - so[p.start];
    if (total > MAX_OFFSET - child_before) return DIPPER_LIMIT;
    pick run = {NULL, so[p.start], false};
    if ((rc = take_any(dchild, src->children[0], run, total)) != DIPPER_OK) return rc;
    int32_t shift = (int32_t)(child_before - so[p.start]);
    for (int64_t k = 0; k < n; k++) dst->offsets[base + k + 1] = so[p.start + k + 1] + shift;
    return DIPPER_OK;
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t r = row_at(p, k);
    if (r >= 0 && !(valid && !dp_bit_get(valid, r))) total += so[r + 1] - so[r];
  }
  if (total > MAX_OFFSET - child_before) return DIPPER_LIMIT;
  int64_t *elems = malloc((size_t)(total ? total : 1) * sizeof *elems);
  if (!elems) return DIPPER_NOMEM;
  int64_t at = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t r = row_at(p, k);
    if (r >= 0 && !(valid && !dp_bit_get(valid, r)))
      for (int64_t e = so[r]; e < so[r + 1]; e++) elems[at++] = e;
    dst->offsets[base + k + 1] = (int32_t)(child_before + at);
  }
  pick each = {elems, 0, false};
  rc = take_any(dchild, src->children[0], each, total);
  free(elems);
  return rc;
}

bool dp_vector_nulls_covered(const dp_vector *row, const dp_vector *child, int64_t n) {
  if (!row->validity) return true;
  if (child->phys == DP_PHYS_NULL) return true;
  if (!child->validity) return row->null_count == 0;
  int64_t full = n >> 3;
  for (int64_t b = 0; b < full; b++)
    if ((uint8_t)~row->validity[b] & child->validity[b]) return false;
  for (int64_t i = full << 3; i < n; i++)
    if (!dp_bit_get(row->validity, i) && dp_bit_get(child->validity, i)) return false;
  return true;
}

/* ROW: each child gathered with the same pick (children are as long as the
** ROW), then the ROW's own validity. */
static int take_struct(dp_vector *dst, const dp_vector *src, pick p, int64_t n, int64_t base) {
  if (src->nchildren != dst->nchildren) return DIPPER_MISUSE;
  /* Every picked row a NULL ROW (or padding): a member that is NULL
  ** wherever its ROW is needs no gathering. */
  bool all_null = src->validity != NULL || p.neg;
  for (int64_t k = 0; k < n && all_null; k++) {
    int64_t r = row_at(p, k);
    all_null = r < 0 || (src->validity && !dp_bit_get(src->validity, r));
  }
  int rc = DIPPER_OK;
  for (int i = 0; i < src->nchildren && !rc; i++) {
    if (all_null && dp_vector_nulls_covered(src, src->children[i], src->length))
      rc = dp_vector_append_nulls(dst->children[i], n);
    else
      rc = take_any(dst->children[i], src->children[i], p, n);
  }
  if (rc) /* put the children back at the ROW's row count */
    for (int i = 0; i < dst->nchildren; i++) dp_vector_truncate(dst->children[i], base);
  return rc;
}

/* Layouts that differ: one row at a time (dp_vector_append_from decides:
** NULLs go anywhere, values only to their own layout). */
static int take_rowwise(dp_vector *dst, const dp_vector *src, pick p, int64_t n) {
  if (src->phys == DP_PHYS_NULL || dst->phys == DP_PHYS_NULL) return dp_vector_append_nulls(dst, n);
  int rc = DIPPER_OK;
  for (int64_t k = 0; k < n && !rc; k++) {
    int64_t r = row_at(p, k);
    rc = r < 0 ? dp_vector_append_null(dst) : dp_vector_append_from(dst, src, r);
  }
  return rc;
}

static int take_any(dp_vector *dst, const dp_vector *src, pick p, int64_t n) {
  if (n <= 0) return DIPPER_OK;
  if (src->phys != dst->phys) return take_rowwise(dst, src, p, n);
  if (src->phys == DP_PHYS_NULL) return dp_vector_append_nulls(dst, n);
  int rc = dp_vector_reserve(dst, n);
  if (rc) return rc;
  int64_t base = dst->length;
  int width = dp_phys_width(src->phys);
  if (width) {
    take_fixed((char *)dst->values + base * width, src->values, width, p, n);
  } else {
    switch (src->phys) {
    case DP_PHYS_BIT: gather_bits(dst->values, base, src->values, p, n); break;
    case DP_PHYS_VARBIN: rc = take_varbin(dst, src, p, n, base); break;
    case DP_PHYS_LIST: rc = take_list(dst, src, p, n, base); break;
    default: rc = take_struct(dst, src, p, n, base); break;
    }
  }
  if (!rc) rc = take_validity(dst, src, p, n, base);
  if (rc) {
    /* nothing counted yet: the offsets and bytes past `base` are unread */
    if (src->phys == DP_PHYS_VARBIN) dst->data_len = dst->offsets[base];
    if (src->phys == DP_PHYS_LIST) dp_vector_truncate(dst->children[0], dst->offsets[base]);
    if (src->phys == DP_PHYS_STRUCT)
      for (int i = 0; i < dst->nchildren; i++) dp_vector_truncate(dst->children[i], base);
    return rc;
  }
  dst->length = base + n;
  return DIPPER_OK;
}

int dp_vector_take(dp_vector *dst, const dp_vector *src, const int64_t *sel, int64_t start,
                   int64_t n) {
  if (n <= 0) return DIPPER_OK;
  pick p = {sel ? sel + start : NULL, start, sel && any_negative(sel + start, n)};
  return take_any(dst, src, p, n);
}

int dp_batch_take(dp_batch *dst, const dp_batch *src, const int64_t *sel, int64_t start,
                  int64_t n) {
  if (src->ncols < dst->ncols) return DIPPER_MISUSE;
  if (n <= 0) return dp_batch_sync(dst);
  pick p = {sel ? sel + start : NULL, start, sel && any_negative(sel + start, n)};
  for (int c = 0; c < dst->ncols; c++) {
    int rc = take_any(dst->cols[c], src->cols[c], p, n);
    if (rc) return rc;
  }
  if (dst->ncols == 0) {
    dst->nrows += n;
    return DIPPER_OK;
  }
  return dp_batch_sync(dst);
}

int dp_vector_append_from(dp_vector *dst, const dp_vector *src, int64_t row) {
  if (dp_vector_is_null(src, row)) return dp_vector_append_null(dst);
  if (dst->phys != src->phys) {
    if (dst->phys == DP_PHYS_NULL) return dp_vector_append_null(dst);
    return DIPPER_MISUSE;
  }
  switch (src->phys) {
  case DP_PHYS_NULL: return dp_vector_append_null(dst);
  case DP_PHYS_BIT: return dp_vector_append_bool(dst, dp_vector_get_bool(src, row));
  case DP_PHYS_VARBIN: {
    size_t len;
    const char *p = dp_vector_get_str(src, row, &len);
    return dp_vector_append_str(dst, p, len);
  }
  case DP_PHYS_STRUCT: {
    int64_t before = dst->length;
    int rc = dst->nchildren == src->nchildren ? DIPPER_OK : DIPPER_MISUSE;
    for (int i = 0; i < dst->nchildren && !rc; i++)
      rc = dp_vector_append_from(dst->children[i], src->children[i], row);
    if (!rc) rc = dp_vector_append_struct(dst);
    if (rc) /* put the children back at the row count */
      for (int i = 0; i < dst->nchildren; i++) dp_vector_truncate(dst->children[i], before);
    return rc;
  }
  case DP_PHYS_LIST: {
    int64_t start, end, before = dst->children[0]->length;
    dp_vector_list_bounds(src, row, &start, &end);
    pick run = {NULL, start, false};
    int rc = end - start > MAX_OFFSET - before
                 ? DIPPER_LIMIT
                 : take_any(dst->children[0], src->children[0], run, end - start);
    if (!rc) rc = dp_vector_append_list(dst);
    if (rc) dp_vector_truncate(dst->children[0], before);
    return rc;
  }
  default: {
    int width = dp_phys_width(src->phys);
    int rc = dp_vector_room_(dst);
    if (rc) return rc;
    memcpy((char *)dst->values + dst->length * width, (const char *)src->values + row * width,
           (size_t)width);
    return dp_vector_push_valid_(dst);
  }
  }
}
