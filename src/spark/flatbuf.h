/*
** flatbuf.h — just enough FlatBuffers for the Arrow IPC metadata: a reader
** that checks every offset against the bytes it was given, and a small
** front-to-back writer.
**
** Owns: the wire rules of FlatBuffers (root offset, tables and their
** vtables, scalars, strings, vectors of scalars/structs/tables).  Does not
** own: any schema — the Arrow field ids are arrow_ipc.c's.
**
** Reader.  A dp_fb_table is a view into borrowed bytes; every accessor
** checks bounds and returns false (or the default) on anything malformed, so
** a caller never reads outside [buf, buf+len).  The host must be little-endian
** (FlatBuffers are), which flatbuf.c checks at compile time.
**
** Writer.  FlatBuffers point forward (a uoffset is added to its own
** position), so the writer lays out a table, then what it refers to, and
** patches the reference with dp_fb_patch once the target is written.  Every
** scalar lands at an address aligned to its size relative to the start of
** the buffer, which is what verifying readers (Arrow C++) demand.
*/
#ifndef DP_SPARK_FLATBUF_H
#define DP_SPARK_FLATBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* ---- reader ---- */

typedef struct dp_fb_table {
  const uint8_t *buf;
  size_t len;   /* the whole buffer */
  size_t pos;   /* the table's start */
  size_t vt;    /* its vtable's start */
  uint16_t vt_size, tbl_size;
} dp_fb_table;

/* A vector's elements: n items of `elem` bytes at buf[pos..]. */
typedef struct dp_fb_vec {
  const uint8_t *buf;
  size_t len, pos;
  uint32_t n;
} dp_fb_vec;

/* The root table of buf[0..len). */
bool dp_fb_root(const uint8_t *buf, size_t len, dp_fb_table *out);

/* Scalars of slot `slot` (0-based field id); `def` when the field is absent.
** `ok` is cleared (never set) when the field lies outside the table. */
int64_t dp_fb_i64(const dp_fb_table *t, int slot, int64_t def, bool *ok);
int32_t dp_fb_i32(const dp_fb_table *t, int slot, int32_t def, bool *ok);
int16_t dp_fb_i16(const dp_fb_table *t, int slot, int16_t def, bool *ok);
uint8_t dp_fb_u8(const dp_fb_table *t, int slot, uint8_t def, bool *ok);

/* Is the field present at all? */
bool dp_fb_has(const dp_fb_table *t, int slot);
/* The table that slot refers to.  Absent: returns false and clears *present;
** malformed: returns false with *present set. */
bool dp_fb_table_at(const dp_fb_table *t, int slot, dp_fb_table *out, bool *present);
/* A string (its bytes, not NUL-terminated in the check).  Absent: *s = NULL,
** *n = 0, true. */
bool dp_fb_string(const dp_fb_table *t, int slot, const char **s, uint32_t *n);
/* A vector of `elem`-byte items (scalars or structs).  Absent: n = 0, true. */
bool dp_fb_vector(const dp_fb_table *t, int slot, size_t elem, dp_fb_vec *out);
/* Table i of a vector of tables (elem 4). */
bool dp_fb_vec_table(const dp_fb_vec *v, uint32_t i, dp_fb_table *out);
/* The 8-byte little-endian integer at byte `at` of item i of a struct vector. */
int64_t dp_fb_vec_i64(const dp_fb_vec *v, uint32_t i, size_t elem, size_t at);

/* ---- writer ---- */

/* One field of a table being written.  kind: 1/2/4/8 bytes of `value`, or
** DP_FB_REF for a uoffset patched later (dp_fb_table_write reports where). */
#define DP_FB_REF 0
typedef struct dp_fb_field {
  int slot;
  int size; /* 1, 2, 4, 8 or DP_FB_REF */
  uint64_t value;
  size_t at; /* out: where a DP_FB_REF field was written */
} dp_fb_field;

/* Write a vtable and its table of n fields (any order); returns the table's
** position.  Positions of the DP_FB_REF fields go to fields[i].at. */
size_t dp_fb_table_write(dp_buf *b, dp_fb_field *fields, int n);
/* A string; returns its position. */
size_t dp_fb_string_write(dp_buf *b, const char *s, size_t n);
/* A vector of n uoffsets to fill later with dp_fb_patch; returns the
** position of the first slot (slot i at +4*i). */
size_t dp_fb_refs_write(dp_buf *b, uint32_t n);
/* A vector of n structs of `elem` bytes (8-aligned), bytes copied from src. */
size_t dp_fb_structs_write(dp_buf *b, const void *src, uint32_t n, size_t elem);
/* Point the uoffset at `at` to `target` (> at). */
void dp_fb_patch(dp_buf *b, size_t at, size_t target);
/* Zero bytes until b->len is a multiple of `align`. */
void dp_fb_align(dp_buf *b, size_t align);

#endif /* DP_SPARK_FLATBUF_H */
