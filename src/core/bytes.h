/*
** bytes.h — a little binary codec for what dipper writes to disk and reads
** back: checkpoint records, operator state, source positions.
**
** Writing appends to a dp_buf (buf.h): its `oom` flag collects allocation
** failures, so a writer checks once at the end.  Integers are little-endian
** fixed width (u8, u32, u64) or LEB128 varints (dp_put_uvar; dp_put_svar
** zig-zags a signed value first); a byte string is a uvar length and the
** bytes.
**
** Reading walks a dp_rd over bytes it does not own.  Every get checks the
** bytes left: a read past the end, or a length longer than what remains,
** sets `bad` and returns 0 / NULL, and so does every later get, so a decoder
** reads all its fields and checks `bad` once (the way buf.h collects oom).
** Bytes come from files that a crash, a full disk or a hand may have
** damaged: nothing read is trusted before it is checked.
*/
#ifndef DP_BYTES_H
#define DP_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

void dp_put_u8(dp_buf *b, uint8_t v);
void dp_put_u32(dp_buf *b, uint32_t v);
void dp_put_u64(dp_buf *b, uint64_t v);
void dp_put_uvar(dp_buf *b, uint64_t v);
void dp_put_svar(dp_buf *b, int64_t v);
void dp_put_f64(dp_buf *b, double v);
void dp_put_bytes(dp_buf *b, const void *p, size_t n); /* uvar length + bytes */
void dp_put_str(dp_buf *b, const char *s);             /* NULL writes as "" */

/* n int64 values, v[at[k]] (v[k] when at is NULL), as one column:
**   base:svar  the least value
**   width:u8   0, 1, 2, 4 or 8: the fewest bytes that hold every value - base
**   n values - base, width bytes each, little-endian
** Equal values take no byte each, small counts one: about a varint's size,
** but written and read in straight loops over the column (checkpoints of
** millions of aggregate states).  The reader knows n. */
void dp_put_i64s(dp_buf *b, const int64_t *v, const int64_t *at, int64_t n);

typedef struct dp_rd {
  const uint8_t *p;
  size_t n, pos;
  bool bad;
} dp_rd;

void dp_rd_init(dp_rd *r, const void *p, size_t n);
uint8_t dp_get_u8(dp_rd *r);
uint32_t dp_get_u32(dp_rd *r);
uint64_t dp_get_u64(dp_rd *r);
uint64_t dp_get_uvar(dp_rd *r);
int64_t dp_get_svar(dp_rd *r);
double dp_get_f64(dp_rd *r);
/* A column of dp_put_i64s into v[at[k]] (v[k] when at is NULL), k < n:
** false, and bad, for a width not of those or fewer bytes than the values
** take (nothing is then written past what was read). */
bool dp_get_i64s(dp_rd *r, int64_t *v, const int64_t *at, int64_t n);
/* A byte string: *n its length and a pointer into the reader's bytes. */
const uint8_t *dp_get_bytes(dp_rd *r, size_t *n);
/* A count of items that each take at least `min_item` bytes: bad when more
** than could fit in what is left (so that a damaged count cannot make the
** caller allocate without bound). */
uint64_t dp_get_count(dp_rd *r, size_t min_item);
/* Copy of a byte string as a NUL-terminated malloc'd string (NULL: bad or
** out of memory; *oom tells which when not NULL). */
char *dp_get_strdup(dp_rd *r, bool *oom);
static inline size_t dp_rd_left(const dp_rd *r) { return r->bad ? 0 : r->n - r->pos; }
/* True when every byte was read and none was bad. */
static inline bool dp_rd_done(const dp_rd *r) { return !r->bad && r->pos == r->n; }

/* CRC-32C (Castagnoli), for checksums of whole files: the processor's
** instruction where it has one; dp_crc32c_portable is the table loop
** always (the two agree: tests/core/bytes_test.c). */
uint32_t dp_crc32c(uint32_t crc, const void *p, size_t n);
uint32_t dp_crc32c_portable(uint32_t crc, const void *p, size_t n);

#endif /* DP_BYTES_H */
