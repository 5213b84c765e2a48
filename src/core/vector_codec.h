/*
** vector_codec.h — rows of a dp_vector (or of every column of a dp_batch)
** as bytes and back: what checkpoints store of operator state (group keys,
** buffered rows, join sides).
**
** The type is not stored: the reader knows it from the plan and decodes into
** a vector of that type.  What is stored is a one-byte layout tag per vector
** (and per child), so that bytes written for another layout are refused,
** never misread.  One vector's encoding:
**
**   tag:u8  rows:uvar  [validity]  payload
**
**   tag       the layout: dp_phys (0 NULL .. 11 STRUCT), 12 for a MAP (an
**             ARRAY's LIST and a MAP's differ in their child); | 0x80 when a
**             validity bitmap follows.  Other bits are zero.
**   validity  present only when some row of the range is null:
**             ceil(rows/8) bytes, LSB first, bit set = valid, rebased to the
**             range's first row, padding bits zero.
**   payload   NULL    nothing
**             BIT     the values as a bitmap like the validity's
**             I8..D128 rows * width bytes, memcpy'd: little-endian, as the
**                     machine (x86-64, arm64) holds them — a big-endian
**                     host would need a byte swap here and is refused at
**                     build time
**             VARBIN  rows uvar lengths, then the bytes, back to back
**             LIST    rows uvar lengths (elements per row), then the child
**                     vector's encoding of those elements
**             STRUCT  nfields:uvar, then each child's encoding of the rows
** Values under a NULL bit are kept as they are (bytes of a NULL string, the
** members of a NULL ROW), so a round trip is exact.
**
** Decoding trusts nothing: every count is checked against the bytes left
** before anything is allocated, lengths against int32 offsets, padding bits
** and tags must be zero where the writer writes zero (so an encoding that
** decodes is the one the encoder writes for those rows, but for the length
** of its varints: bytes.h reads a value's longer forms too).  A vector holds at
** most 2^31-1 rows in one encoding.
*/
#ifndef DP_VECTOR_CODEC_H
#define DP_VECTOR_CODEC_H

#include <stdint.h>

#include "core/bytes.h"
#include "core/vector.h"

/* Append rows [start, start+n) of v to out.  DIPPER_OK, DIPPER_MISUSE (a
** range outside the vector, or more than 2^31-1 rows) or DIPPER_NOMEM
** (out->oom). */
int dp_vector_encode(const dp_vector *v, int64_t start, int64_t n, dp_buf *out);

/* Read one vector's encoding from `in` and append its rows to `into`, a
** vector of the type that was encoded.  DIPPER_OK; DIPPER_CORRUPT for bytes
** that do not read back whole (too short, another layout, counts past the
** bytes left) — in->bad is then set, so later reads fail too; DIPPER_LIMIT
** when into cannot take the rows under int32 offsets; DIPPER_NOMEM.  On
** failure `into` keeps the rows it had (its buffers may have grown). */
int dp_vector_decode(dp_rd *in, dp_vector *into);

/* Every column of rows [start, start+n): ncols:uvar, rows:uvar, then each
** column's encoding.  A column whose rows are all NULL as
** dp_vector_append_nulls lays them out (a filler of exec/narrow.h: a column
** no one reads) is written blank: its tag | 0x40 and the row count, nothing
** else, so it costs O(1) bytes however many rows.  The first column not of
** the NULL type is never blank, so that the row count of a blank column
** stands on bytes read before it: few bytes cannot ask for many rows.  A
** column of 64-bit values (BIGINT, TIMESTAMP) is written packed: tag | 0x20,
** rows, [validity], then per row the zigzag varint of its value less the
** one before (from 0) — ids, prices and times in arrival order cost a byte
** or three, not eight (the plain form still reads back).
** Decoding appends to a batch of the same schema and adds the rows to its
** nrows (a blank column gets that many NULL rows); on failure every column
** keeps its rows.  A lone vector's encoding (dp_vector_encode) is never
** blank, and its decoder refuses the tag. */
int dp_batch_encode(const dp_batch *b, int64_t start, int64_t n, dp_buf *out);
int dp_batch_decode(dp_rd *in, dp_batch *into);

#endif /* DP_VECTOR_CODEC_H */
