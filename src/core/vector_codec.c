/*
** vector_codec.c — the vector and batch encoding of vector_codec.h.
**
** Decoding a vector works bottom-up and commits last: the bytes of its own
** buffers are located and checked first, then the children decode (each
** committing or leaving itself as it was), then this vector's rows are
** written past its length and the length moves.  So a failure anywhere
** leaves the vector's row count as it was, and the children are cut back to
** it (dp_vector_truncate).
*/
#include "core/vector_codec.h"
#include "core/grow.h"

#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vector_codec.c memcpy's values as little-endian: add a byte swap for this host"
#endif

#define TAG_MAP 12         /* a MAP's LIST: its child is the entries ROW */
#define TAG_VALIDITY 0x80  /* a validity bitmap follows the row count */
#define TAG_BLANK 0x40     /* a batch's column whose rows are all NULL: nothing follows */
#define TAG_PACKED 0x20    /* a batch's 64-bit column: its values as varint deltas */
#define MAX_ROWS INT32_MAX /* rows of one encoding; int32 offsets bound the rest */

static size_t bitmap_bytes(int64_t rows) { return (size_t)((rows + 7) / 8); }

static uint8_t layout_tag(const dp_vector *v) {
  return v->type && v->type->kind == DP_T_MAP ? TAG_MAP : (uint8_t)v->phys;
}

/* ---- bitmaps ---- */

/* Set bits in bits[start, start+n). */
static int64_t count_ones(const uint8_t *bits, int64_t start, int64_t n) {
  int64_t ones = 0, i = start, end = start + n;
  for (; i < end && (i & 7); i++) ones += dp_bit_get(bits, i);
  for (; i + 8 <= end; i += 8) ones += __builtin_popcount(bits[i >> 3]);
  for (; i < end; i++) ones += dp_bit_get(bits, i);
  return ones;
}

/* Bits [start, start+n) of `bits`, rebased to bit 0, padding zero. */
static void put_bits(dp_buf *out, const uint8_t *bits, int64_t start, int64_t n) {
  uint8_t chunk[256];
  size_t nbytes = bitmap_bytes(n), used = 0;
  const uint8_t *p = bits + (start >> 3);
  unsigned shift = (unsigned)(start & 7);
  /* the source bytes that hold bits [start, start+n) */
  size_t have = (size_t)((start + n + 7) / 8 - (start >> 3));
  for (size_t k = 0; k < nbytes; k++) {
    unsigned x = (unsigned)p[k] >> shift;
    if (shift && k + 1 < have) x |= (unsigned)p[k + 1] << (8 - shift);
    if (k + 1 == nbytes && (n & 7)) x &= (1u << (unsigned)(n & 7)) - 1;
    chunk[used++] = (uint8_t)x;
    if (used == sizeof chunk || k + 1 == nbytes) {
      dp_buf_put(out, chunk, used);
      used = 0;
    }
  }
}

/* dst[off, off+n) = src[0, n). */
static void copy_bits(uint8_t *dst, int64_t off, const uint8_t *src, int64_t n) {
  if ((off & 7) == 0) {
    if (n) memcpy(dst + (off >> 3), src, bitmap_bytes(n));
    return;
  }
  for (int64_t i = 0; i < n; i++) dp_bit_set(dst, off + i, dp_bit_get(src, i));
}

/* dst[off, off+n) = 1. */
static void fill_ones(uint8_t *dst, int64_t off, int64_t n) {
  int64_t i = off, end = off + n;
  for (; i < end && (i & 7); i++) dp_bit_set(dst, i, true);
  if (end - i >= 8) {
    memset(dst + (i >> 3), 0xff, (size_t)((end - i) >> 3));
    i += (end - i) & ~(int64_t)7;
  }
  for (; i < end; i++) dp_bit_set(dst, i, true);
}

/* ---- encoding ---- */

static void encode(const dp_vector *v, int64_t start, int64_t n, dp_buf *out);

static void put_lengths(dp_buf *out, const int32_t *offsets, int64_t start, int64_t n) {
  for (int64_t i = start; i < start + n; i++)
    dp_put_uvar(out, (uint64_t)(offsets[i + 1] - offsets[i]));
}

/* Are rows [start, start+n) what dp_vector_append_nulls writes: every row
** NULL, fixed-width values zero, no bytes nor elements, and (ROW) every
** child so too?  A batch's column of such rows (a filler of exec/narrow.h:
** a column no one reads) is written as its tag and row count alone. */
static bool blank(const dp_vector *v, int64_t start, int64_t n) {
  if (n <= 0 || v->phys == DP_PHYS_NULL || !v->validity || v->null_count < n ||
      count_ones(v->validity, start, n) != 0)
    return false;
  int width = dp_phys_width(v->phys);
  switch (v->phys) {
  case DP_PHYS_BIT: return count_ones(v->values, start, n) == 0;
  case DP_PHYS_VARBIN: case DP_PHYS_LIST: return v->offsets[start + n] == v->offsets[start];
  case DP_PHYS_STRUCT:
    for (int i = 0; i < v->nchildren; i++)
      if (!blank(v->children[i], start, n)) return false;
    return true;
  default: {
    const unsigned char *p = (const unsigned char *)v->values + start * width;
    for (int64_t i = 0; i < n * width; i++)
      if (p[i]) return false;
    return true;
  }
  }
}

static void encode(const dp_vector *v, int64_t start, int64_t n, dp_buf *out) {
  bool nulls = v->phys != DP_PHYS_NULL && v->validity && v->null_count > 0 &&
               count_ones(v->validity, start, n) < n;
  dp_put_u8(out, (uint8_t)(layout_tag(v) | (nulls ? TAG_VALIDITY : 0)));
  dp_put_uvar(out, (uint64_t)n);
  if (nulls) put_bits(out, v->validity, start, n);
  int width = dp_phys_width(v->phys);
  /* an empty range reads no offsets: a moved-out vector has none */
  bool offs = n && (v->phys == DP_PHYS_VARBIN || v->phys == DP_PHYS_LIST);
  int64_t first = offs ? v->offsets[start] : 0, last = offs ? v->offsets[start + n] : 0;
  switch (v->phys) {
  case DP_PHYS_NULL: break;
  case DP_PHYS_BIT: put_bits(out, v->values, start, n); break;
  case DP_PHYS_VARBIN:
    put_lengths(out, v->offsets, start, n);
    if (last > first) dp_buf_put(out, v->data + first, (size_t)(last - first));
    break;
  case DP_PHYS_LIST:
    put_lengths(out, v->offsets, start, n);
    encode(v->children[0], first, last - first, out);
    break;
  case DP_PHYS_STRUCT:
    dp_put_uvar(out, (uint64_t)v->nchildren);
    for (int i = 0; i < v->nchildren; i++) encode(v->children[i], start, n, out);
    break;
  default:
    if (n) dp_buf_put(out, (const char *)v->values + start * width, (size_t)(n * width));
    break;
  }
}

int dp_vector_encode(const dp_vector *v, int64_t start, int64_t n, dp_buf *out) {
  if (!v || start < 0 || n < 0 || n > MAX_ROWS || start > v->length - n) return DIPPER_MISUSE;
  encode(v, start, n, out);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* A batch's 64-bit column (BIGINT, TIMESTAMP): each value as the zigzag
** varint of its difference from the one before (from 0), written straight
** into the buffer.  Ids, prices and times of rows in arrival order differ
** by little: a byte or three a value rather than eight. */
static void encode_packed(const dp_vector *v, int64_t start, int64_t n, dp_buf *out) {
  bool nulls = v->validity && v->null_count > 0 && count_ones(v->validity, start, n) < n;
  dp_put_u8(out, (uint8_t)(layout_tag(v) | TAG_PACKED | (nulls ? TAG_VALIDITY : 0)));
  dp_put_uvar(out, (uint64_t)n);
  if (nulls) put_bits(out, v->validity, start, n);
  size_t at = out->len;
  uint8_t *p = (uint8_t *)dp_buf_append_room(out, (size_t)n * 10);
  if (!p) return;
  const int64_t *x = (const int64_t *)v->values + start;
  uint64_t prev = 0;
  size_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t d = (uint64_t)x[i] - prev;
    prev = (uint64_t)x[i];
    uint64_t z = (d << 1) ^ (0 - (d >> 63));
    while (z >= 0x80) {
      p[k++] = (uint8_t)(z | 0x80);
      z >>= 7;
    }
    p[k++] = (uint8_t)z;
  }
  out->len = at + k;
  out->data[out->len] = '\0';
}

/* ---- decoding ---- */

/* n raw bytes of the reader, or NULL (and bad) when fewer are left. */
static const uint8_t *get_raw(dp_rd *in, size_t n) {
  if (in->bad || in->n - in->pos < n) {
    in->bad = true;
    return NULL;
  }
  const uint8_t *p = in->p + in->pos;
  in->pos += n;
  return p;
}

/* A bitmap of n bits with zero padding, or NULL. */
static const uint8_t *get_bits(dp_rd *in, int64_t n) {
  const uint8_t *p = get_raw(in, bitmap_bytes(n));
  if (p && (n & 7) && (p[n >> 3] >> (n & 7)) != 0) return NULL;
  return p;
}

/* A validity bitmap in the vector, every existing row valid. */
static int make_validity(dp_vector *v) {
  if (v->validity) return DIPPER_OK;
  v->validity = calloc(bitmap_bytes(v->capacity) ? bitmap_bytes(v->capacity) : 1, 1);
  if (!v->validity) return DIPPER_NOMEM;
  fill_ones(v->validity, 0, v->length);
  return DIPPER_OK;
}

static int decode(dp_rd *in, dp_vector *v);

/* n uvar lengths into offsets[at+1 .. at+n], from base: DIPPER_CORRUPT when
** the bytes end, DIPPER_LIMIT past int32 offsets.  *total gets their sum. */
static int get_lengths(dp_rd *in, int32_t *offsets, int64_t at, int64_t n, int64_t *total) {
  int64_t base = offsets[at], sum = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t len = dp_get_uvar(in);
    if (in->bad || len > MAX_ROWS) return DIPPER_CORRUPT;
    sum += (int64_t)len;
    if (sum > MAX_ROWS) return DIPPER_CORRUPT;
    if (base + sum > INT32_MAX) return DIPPER_LIMIT;
    offsets[at + 1 + i] = (int32_t)(base + sum);
  }
  *total = sum;
  return DIPPER_OK;
}

static int decode_varbin(dp_rd *in, dp_vector *v, int64_t n) {
  if ((uint64_t)n > dp_rd_left(in)) return DIPPER_CORRUPT; /* a byte per length at least */
  int rc = dp_vector_reserve(v, n ? n : 1); /* offsets[length] exists */
  if (rc) return rc;
  int64_t total;
  if ((rc = get_lengths(in, v->offsets, v->length, n, &total)) != DIPPER_OK) return rc;
  const uint8_t *bytes = get_raw(in, (size_t)total);
  if (!bytes) return DIPPER_CORRUPT;
  int64_t need = v->data_len + total;
  if (dp_grow(&v->data, &v->data_cap, need, 1, 64)) return DIPPER_NOMEM;
  if (total) memcpy(v->data + v->data_len, bytes, (size_t)total);
  v->data_len = need;
  return DIPPER_OK;
}

static int decode_list(dp_rd *in, dp_vector *v, int64_t n) {
  if ((uint64_t)n > dp_rd_left(in)) return DIPPER_CORRUPT;
  int rc = dp_vector_reserve(v, n ? n : 1);
  if (rc) return rc;
  dp_vector *child = v->children[0];
  int64_t before = child->length, total;
  if ((rc = get_lengths(in, v->offsets, v->length, n, &total)) != DIPPER_OK) return rc;
  if ((rc = decode(in, child)) != DIPPER_OK) return rc;
  if (child->length - before != total) {
    dp_vector_truncate(child, before);
    return DIPPER_CORRUPT;
  }
  return DIPPER_OK;
}

static int decode_struct(dp_rd *in, dp_vector *v, int64_t n) {
  uint64_t nfields = dp_get_uvar(in);
  if (in->bad || nfields != (uint64_t)v->nchildren) return DIPPER_CORRUPT;
  int rc = DIPPER_OK;
  for (int i = 0; i < v->nchildren && !rc; i++) {
    rc = decode(in, v->children[i]);
    if (!rc && v->children[i]->length != v->length + n) rc = DIPPER_CORRUPT;
  }
  if (!rc) rc = dp_vector_reserve(v, n);
  if (rc)
    for (int i = 0; i < v->nchildren; i++) dp_vector_truncate(v->children[i], v->length);
  return rc;
}

/* The payload of n rows, written past v->length (which does not move). */
static int decode_payload(dp_rd *in, dp_vector *v, int64_t n) {
  int width = dp_phys_width(v->phys);
  const uint8_t *p;
  int rc;
  switch (v->phys) {
  case DP_PHYS_NULL: return dp_vector_reserve(v, n);
  case DP_PHYS_BIT:
    if (!(p = get_bits(in, n))) return DIPPER_CORRUPT;
    if ((rc = dp_vector_reserve(v, n)) != DIPPER_OK) return rc;
    copy_bits(v->values, v->length, p, n);
    return DIPPER_OK;
  case DP_PHYS_VARBIN: return decode_varbin(in, v, n);
  case DP_PHYS_LIST: return decode_list(in, v, n);
  case DP_PHYS_STRUCT: return decode_struct(in, v, n);
  default:
    if ((uint64_t)n > dp_rd_left(in) / (size_t)width) return DIPPER_CORRUPT;
    p = get_raw(in, (size_t)(n * width));
    if (!p) return DIPPER_CORRUPT;
    if ((rc = dp_vector_reserve(v, n)) != DIPPER_OK) return rc;
    if (n) memcpy((char *)v->values + v->length * width, p, (size_t)(n * width));
    return DIPPER_OK;
  }
}

/* Undo what decode_payload did to the children and bytes of a vector whose
** rows did not commit. */
static void rollback(dp_vector *v) {
  if (v->phys == DP_PHYS_VARBIN) v->data_len = v->offsets[v->length];
  if (v->phys == DP_PHYS_LIST) dp_vector_truncate(v->children[0], v->offsets[v->length]);
  if (v->phys == DP_PHYS_STRUCT)
    for (int i = 0; i < v->nchildren; i++) dp_vector_truncate(v->children[i], v->length);
}

/* A blank column of a batch (TAG_BLANK, which decode refuses): rows NULL
** rows.  Only a batch's column after the one that backs its row count. */
static int decode_blank(dp_rd *in, dp_vector *v, uint64_t want) {
  uint8_t tag = dp_get_u8(in);
  uint64_t rows = dp_get_uvar(in);
  if (in->bad || tag != (layout_tag(v) | TAG_BLANK) || v->phys == DP_PHYS_NULL || rows != want ||
      rows == 0)
    return DIPPER_CORRUPT;
  return dp_vector_append_nulls(v, (int64_t)rows);
}

static bool next_is_blank(const dp_rd *in) {
  return !in->bad && in->pos < in->n && (in->p[in->pos] & TAG_BLANK);
}

/* encode_packed's column: `want` rows, appended to v (a 64-bit layout). */
static int decode_packed(dp_rd *in, dp_vector *v, uint64_t want) {
  uint8_t tag = dp_get_u8(in);
  uint64_t rows = dp_get_uvar(in);
  if (in->bad || (tag & ~TAG_VALIDITY) != (layout_tag(v) | TAG_PACKED) ||
      v->phys != DP_PHYS_I64 || rows != want || rows > MAX_ROWS)
    return DIPPER_CORRUPT;
  int64_t n = (int64_t)rows, nulls = 0;
  const uint8_t *valid = NULL;
  if (tag & TAG_VALIDITY) {
    if (!(valid = get_bits(in, n))) return DIPPER_CORRUPT;
    nulls = n - count_ones(valid, 0, n);
    if (nulls == 0) return DIPPER_CORRUPT; /* the writer writes no bitmap then */
  }
  if (rows > dp_rd_left(in)) return DIPPER_CORRUPT; /* a byte a value at least */
  int rc = dp_vector_reserve(v, n);
  if (!rc && valid) rc = make_validity(v);
  if (rc) return rc;
  int64_t *x = (int64_t *)v->values + v->length;
  uint64_t prev = 0;
  const uint8_t *p = in->p + in->pos, *end = in->p + in->n;
  for (int64_t i = 0; i < n; i++) {
    /* bytes.h's varint, inline: this loop is a restore's hot path */
    uint64_t z = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (p == end || shift > 63 || (shift == 63 && (*p & 0x7e))) {
        in->bad = true;
        return DIPPER_CORRUPT;
      }
      uint8_t b = *p++;
      z |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    prev += (z >> 1) ^ (0 - (z & 1));
    x[i] = (int64_t)prev;
  }
  in->pos = (size_t)(p - in->p);
  if (valid)
    copy_bits(v->validity, v->length, valid, n);
  else if (v->validity)
    fill_ones(v->validity, v->length, n);
  v->length += n;
  v->null_count += nulls;
  return DIPPER_OK;
}

static int decode(dp_rd *in, dp_vector *v) {
  uint8_t tag = dp_get_u8(in);
  uint64_t rows = dp_get_uvar(in);
  if (in->bad || (tag & ~TAG_VALIDITY) != layout_tag(v) || rows > MAX_ROWS) return DIPPER_CORRUPT;
  if ((tag & TAG_VALIDITY) && v->phys == DP_PHYS_NULL) return DIPPER_CORRUPT;
  int64_t n = (int64_t)rows, nulls = 0;
  const uint8_t *valid = NULL;
  if (tag & TAG_VALIDITY) {
    if (!(valid = get_bits(in, n))) return DIPPER_CORRUPT;
    nulls = n - count_ones(valid, 0, n);
    if (nulls == 0) return DIPPER_CORRUPT; /* the writer writes no bitmap then */
  }
  int rc = decode_payload(in, v, n);
  if (!rc && valid) rc = make_validity(v);
  if (rc) {
    rollback(v);
    return rc;
  }
  if (valid)
    copy_bits(v->validity, v->length, valid, n);
  else if (v->validity)
    fill_ones(v->validity, v->length, n);
  v->length += n;
  v->null_count += v->phys == DP_PHYS_NULL ? n : nulls;
  return DIPPER_OK;
}

int dp_vector_decode(dp_rd *in, dp_vector *into) {
  if (!in || !into) return DIPPER_MISUSE;
  if (into->length > INT64_MAX - MAX_ROWS) return DIPPER_LIMIT;
  int rc = decode(in, into);
  if (rc == DIPPER_CORRUPT) in->bad = true;
  return rc;
}

/* ---- batches ---- */

/* The first column whose encoding backs the row count (bytes per row): the
** first not of the NULL type, or -1.  It is never written blank, so a
** blank column's rows always stand on bytes read before it. */
static int backing_column(const dp_batch *b) {
  for (int c = 0; c < b->ncols; c++)
    if (b->cols[c]->phys != DP_PHYS_NULL) return c;
  return -1;
}

int dp_batch_encode(const dp_batch *b, int64_t start, int64_t n, dp_buf *out) {
  if (!b || start < 0 || n < 0 || n > MAX_ROWS || start > b->nrows - n) return DIPPER_MISUSE;
  dp_put_uvar(out, (uint64_t)b->ncols);
  dp_put_uvar(out, (uint64_t)n);
  int backing = backing_column(b);
  for (int c = 0; c < b->ncols; c++) {
    const dp_vector *v = b->cols[c];
    if (c > backing && backing >= 0 && (start < 0 || start > v->length - n)) return DIPPER_MISUSE;
    if (c > backing && backing >= 0 && blank(v, start, n)) {
      dp_put_u8(out, (uint8_t)(layout_tag(v) | TAG_BLANK));
      dp_put_uvar(out, (uint64_t)n);
      continue;
    }
    if (v->phys == DP_PHYS_I64 && n > 0) {
      if (start > v->length - n) return DIPPER_MISUSE;
      encode_packed(v, start, n, out);
      continue;
    }
    int rc = dp_vector_encode(v, start, n, out);
    if (rc) return rc;
  }
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_batch_decode(dp_rd *in, dp_batch *into) {
  if (!in || !into) return DIPPER_MISUSE;
  uint64_t ncols = dp_get_uvar(in), rows = dp_get_uvar(in);
  if (in->bad || ncols != (uint64_t)into->ncols || rows > MAX_ROWS) {
    in->bad = true;
    return DIPPER_CORRUPT;
  }
  int rc = DIPPER_OK;
  int c = 0, backing = backing_column(into);
  for (; c < into->ncols && !rc; c++) {
    int64_t before = into->cols[c]->length;
    if (into->cols[c]->length > INT64_MAX - MAX_ROWS) {
      rc = DIPPER_LIMIT;
    } else if (c > backing && backing >= 0 && next_is_blank(in)) {
      rc = decode_blank(in, into->cols[c], rows);
      if (rc == DIPPER_CORRUPT) in->bad = true;
    } else if (into->cols[c]->phys == DP_PHYS_I64 && rows > 0 && !in->bad && in->pos < in->n &&
               (in->p[in->pos] & TAG_PACKED)) {
      rc = decode_packed(in, into->cols[c], rows);
      if (rc == DIPPER_CORRUPT) in->bad = true;
    } else {
      rc = dp_vector_decode(in, into->cols[c]);
    }
    if (!rc && into->cols[c]->length - before != (int64_t)rows) {
      dp_vector_truncate(into->cols[c], before);
      rc = DIPPER_CORRUPT;
    }
  }
  if (rc) {
    /* the columns before the failed one committed: cut them back */
    for (int k = 0; k < c - 1; k++) dp_vector_truncate(into->cols[k], into->nrows);
    if (rc == DIPPER_CORRUPT) in->bad = true;
    return rc;
  }
  into->nrows += (int64_t)rows;
  return DIPPER_OK;
}
