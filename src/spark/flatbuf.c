/*
** flatbuf.c — the FlatBuffers reader and writer of flatbuf.h.
**
** Reading never trusts a number from the buffer: a uoffset, a vtable
** offset, a vtable size, a field offset or a vector length is checked
** against the buffer's length before anything is read through it, with
** arithmetic that cannot overflow (sizes compared by subtraction).
*/
#include "spark/flatbuf.h"

#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "flatbuf.c reads FlatBuffers (little-endian) by memcpy: a little-endian host is needed"
#endif

/* ---- reader ---- */

static uint32_t rd_u32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint16_t rd_u16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}

/* Do `n` bytes fit at `pos` of a buffer of `len`? */
static bool fits(size_t len, size_t pos, size_t n) { return pos <= len && n <= len - pos; }

static bool table_at(const uint8_t *buf, size_t len, size_t pos, dp_fb_table *out) {
  if (!fits(len, pos, 4) || pos % 4) return false;
  int32_t soff;
  memcpy(&soff, buf + pos, 4);
  /* vtable = pos - soff, in bounds */
  int64_t vt = (int64_t)pos - (int64_t)soff;
  if (vt < 0 || (uint64_t)vt > len || vt % 2) return false;
  if (!fits(len, (size_t)vt, 4)) return false;
  uint16_t vt_size = rd_u16(buf + vt), tbl_size = rd_u16(buf + vt + 2);
  if (vt_size < 4 || vt_size % 2 || !fits(len, (size_t)vt, vt_size)) return false;
  if (tbl_size < 4 || !fits(len, pos, tbl_size)) return false;
  out->buf = buf;
  out->len = len;
  out->pos = pos;
  out->vt = (size_t)vt;
  out->vt_size = vt_size;
  out->tbl_size = tbl_size;
  return true;
}

bool dp_fb_root(const uint8_t *buf, size_t len, dp_fb_table *out) {
  if (len < 4) return false;
  return table_at(buf, len, rd_u32(buf), out);
}

/* Offset of the field inside the table (0: absent), checked to hold `size`
** bytes inside the table; -1 when it does not. */
static int field_off(const dp_fb_table *t, int slot, size_t size) {
  size_t at = 4 + 2 * (size_t)slot;
  if (slot < 0 || at + 2 > t->vt_size) return 0;
  uint16_t off = rd_u16(t->buf + t->vt + at);
  if (off == 0) return 0;
  if (off < 4 || (size_t)off + size > t->tbl_size) return -1;
  return off;
}

bool dp_fb_has(const dp_fb_table *t, int slot) { return field_off(t, slot, 1) != 0; }

#define SCALAR_GETTER(fn, type, size)                              \
  type fn(const dp_fb_table *t, int slot, type def, bool *ok) {   \
    int off = field_off(t, slot, size);                            \
    if (off == 0) return def;                                      \
    if (off < 0) {                                                 \
      *ok = false;                                                 \
      return def;                                                  \
    }                                                              \
    type v;                                                        \
    memcpy(&v, t->buf + t->pos + (size_t)off, size);               \
    return v;                                                      \
  }
SCALAR_GETTER(dp_fb_i64, int64_t, 8)
SCALAR_GETTER(dp_fb_i32, int32_t, 4)
SCALAR_GETTER(dp_fb_i16, int16_t, 2)
SCALAR_GETTER(dp_fb_u8, uint8_t, 1)
#undef SCALAR_GETTER

/* Follow the uoffset in slot: the target's position, or 0 with *bad. */
static size_t follow(const dp_fb_table *t, int slot, bool *present, bool *bad) {
  int off = field_off(t, slot, 4);
  *present = off != 0;
  *bad = off < 0;
  if (off <= 0) return 0;
  size_t at = t->pos + (size_t)off;
  uint32_t rel = rd_u32(t->buf + at);
  if (rel == 0 || rel > t->len - at) {
    *bad = true;
    return 0;
  }
  return at + rel;
}

bool dp_fb_table_at(const dp_fb_table *t, int slot, dp_fb_table *out, bool *present) {
  bool bad;
  size_t pos = follow(t, slot, present, &bad);
  if (!*present || bad) return false;
  return table_at(t->buf, t->len, pos, out);
}

/* The vector at pos: length prefix and n*elem bytes in bounds. */
static bool vector_at(const uint8_t *buf, size_t len, size_t pos, size_t elem, dp_fb_vec *out) {
  if (!fits(len, pos, 4) || pos % 4) return false;
  uint32_t n = rd_u32(buf + pos);
  if (elem && (size_t)n > (len - pos - 4) / elem) return false;
  out->buf = buf;
  out->len = len;
  out->pos = pos + 4;
  out->n = n;
  return true;
}

bool dp_fb_string(const dp_fb_table *t, int slot, const char **s, uint32_t *n) {
  bool present, bad;
  size_t pos = follow(t, slot, &present, &bad);
  *s = NULL;
  *n = 0;
  if (bad) return false;
  if (!present) return true;
  dp_fb_vec v;
  if (!vector_at(t->buf, t->len, pos, 1, &v)) return false;
  *s = (const char *)(v.buf + v.pos);
  *n = v.n;
  return true;
}

bool dp_fb_vector(const dp_fb_table *t, int slot, size_t elem, dp_fb_vec *out) {
  bool present, bad;
  size_t pos = follow(t, slot, &present, &bad);
  memset(out, 0, sizeof *out);
  if (bad) return false;
  if (!present) return true;
  return vector_at(t->buf, t->len, pos, elem, out);
}

bool dp_fb_vec_table(const dp_fb_vec *v, uint32_t i, dp_fb_table *out) {
  if (i >= v->n) return false;
  size_t at = v->pos + 4 * (size_t)i;
  uint32_t rel = rd_u32(v->buf + at);
  if (rel == 0 || rel > v->len - at) return false;
  return table_at(v->buf, v->len, at + rel, out);
}

int64_t dp_fb_vec_i64(const dp_fb_vec *v, uint32_t i, size_t elem, size_t at) {
  int64_t x;
  memcpy(&x, v->buf + v->pos + (size_t)i * elem + at, 8); /* in bounds: vector_at checked n*elem */
  return x;
}

/* ---- writer ---- */

void dp_fb_align(dp_buf *b, size_t align) {
  static const char zeros[16];
  size_t pad = (align - b->len % align) % align;
  dp_buf_put(b, zeros, pad);
}

static void put_le(dp_buf *b, uint64_t v, int size) {
  uint8_t bytes[8];
  memcpy(bytes, &v, 8); /* little-endian host: the low `size` bytes first */
  dp_buf_put(b, bytes, (size_t)size);
}

static int field_size(const dp_fb_field *f) { return f->size == DP_FB_REF ? 4 : f->size; }

size_t dp_fb_table_write(dp_buf *b, dp_fb_field *fields, int n) {
  int nslots = 0;
  for (int i = 0; i < n; i++)
    if (fields[i].slot + 1 > nslots) nslots = fields[i].slot + 1;
  /* table layout: soffset, then fields by decreasing size, each aligned */
  uint16_t offs[64] = {0};
  if (nslots > 64) {
    b->oom = true; /* never with Arrow's schemas; refuse rather than overflow */
    return 0;
  }
  size_t tsize = 4;
  bool has8 = false;
  for (int i = 0; i < n; i++) has8 = has8 || field_size(&fields[i]) == 8;
  if (has8) tsize = 8; /* table start is 8-aligned: 8-byte fields at +8 */
  for (int size = 8; size >= 1; size /= 2)
    for (int i = 0; i < n; i++)
      if (field_size(&fields[i]) == size) {
        offs[fields[i].slot] = (uint16_t)tsize;
        tsize += (size_t)size;
      }
  tsize = (tsize + 3) & ~(size_t)3;
  /* vtable (2-aligned), then padding to an 8-aligned table start */
  dp_fb_align(b, 2);
  size_t vt = b->len;
  size_t vt_size = 4 + 2 * (size_t)nslots;
  put_le(b, vt_size, 2);
  put_le(b, tsize, 2);
  for (int s = 0; s < nslots; s++) put_le(b, offs[s], 2);
  dp_fb_align(b, 8);
  size_t pos = b->len;
  put_le(b, (uint64_t)(uint32_t)(int32_t)(pos - vt), 4);
  size_t end = pos + tsize;
  /* fields in offset order */
  while (b->len < end && !b->oom) {
    size_t at = b->len - pos;
    int which = -1;
    for (int i = 0; i < n; i++)
      if (offs[fields[i].slot] == at) which = i;
    if (which < 0) {
      dp_buf_putc(b, 0);
      continue;
    }
    dp_fb_field *f = &fields[which];
    if (f->size == DP_FB_REF) {
      f->at = b->len;
      put_le(b, 0, 4);
    } else {
      put_le(b, f->value, f->size);
    }
  }
  return pos;
}

size_t dp_fb_string_write(dp_buf *b, const char *s, size_t n) {
  dp_fb_align(b, 4);
  size_t pos = b->len;
  put_le(b, n, 4);
  dp_buf_put(b, s, n);
  dp_buf_putc(b, 0);
  return pos;
}

size_t dp_fb_refs_write(dp_buf *b, uint32_t n) {
  dp_fb_align(b, 4);
  size_t pos = b->len;
  put_le(b, n, 4);
  for (uint32_t i = 0; i < n; i++) put_le(b, 0, 4);
  return pos + 4;
}

size_t dp_fb_structs_write(dp_buf *b, const void *src, uint32_t n, size_t elem) {
  /* the items are 8-aligned, so the length prefix sits at 4 mod 8 */
  dp_fb_align(b, 8);
  dp_buf_put(b, "\0\0\0\0", 4);
  size_t pos = b->len;
  put_le(b, n, 4);
  dp_buf_put(b, src, (size_t)n * elem);
  return pos;
}

void dp_fb_patch(dp_buf *b, size_t at, size_t target) {
  if (b->oom || at + 4 > b->len) return;
  uint32_t rel = (uint32_t)(target - at);
  memcpy(b->data + at, &rel, 4);
}
