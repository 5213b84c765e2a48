/*
** arrow_ipc.h — the Arrow IPC stream format, decoded and encoded by dipper's
** own code (no Arrow library): the results Spark Connect sends
** (ExecutePlanResponse.arrow_batch.data, each a self-contained IPC stream:
** a schema message, record batches, an optional end-of-stream marker) and the
** LocalRelation data dipper sends (the rows of a memory table or VALUES).
**
** The decoder trusts nothing: every flatbuffer offset, vtable, vector length,
** buffer offset/length, body length, child count, nesting depth, null count
** and offsets array is checked against the bytes it was given, and a check
** that fails gives DIPPER_PROTOCOL with `err` naming the message number and
** the field.  Buffers compressed with LZ4 frame or ZSTD (BodyCompression)
** are decompressed, bounded by the declared uncompressed length.
**
** Types: null, bool, int8..64, uint8..64, float16/32/64, decimal128 (and 256
** refused with a message), utf8, large_utf8, binary, large_binary,
** fixed_size_binary, date32/64, time32/64, timestamp (any unit, with or
** without zone), duration, interval (year-month, day-time, month-day-nano),
** list, large_list, fixed_size_list, struct, map.  Dictionary-encoded fields
** are refused (Spark does not send them).
**
** Output: the Arrow C Data Interface (dipper.h's struct ArrowSchema /
** ArrowArray), self-contained: the arrays own their memory and stay valid
** after the input bytes are freed.
*/
#ifndef DP_SPARK_ARROW_IPC_H
#define DP_SPARK_ARROW_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "dipper.h"

/* The decoded contents of one IPC stream. */
typedef struct dp_arrow_batches {
  struct ArrowSchema schema;   /* format "+s": one child per field; release() it */
  int n;                       /* record batches */
  struct ArrowArray *arrays;   /* n struct arrays matching schema; release() each */
  int64_t rows;                /* sum of the arrays' lengths */
} dp_arrow_batches;

/* Decode a whole IPC stream held in data[0..len) (borrowed for the call
** only).  On DIPPER_OK *out owns everything (free with dp_arrow_batches_free);
** a stream with a schema and no batch gives n == 0.  On failure *out is
** empty, the code is DIPPER_PROTOCOL (or DIPPER_NOMEM) and a message is
** appended to err (may be NULL).  Bounds: nesting 64 levels, 65536 fields,
** 2^31-1 rows per array, 2 GiB of decompressed buffers per record batch.
** Each record batch is one allocation (every buffer 64-byte aligned), each
** schema another; children may be moved out as the C Data spec allows. */
int dp_arrow_ipc_decode(const uint8_t *data, size_t len, dp_arrow_batches *out, dp_buf *err);
void dp_arrow_batches_free(dp_arrow_batches *b); /* releases schema and arrays; NULL fine */

/* Encode one IPC stream: the schema message, one record batch (when array is
** not NULL) and the end-of-stream marker, uncompressed, 8-byte aligned, as
** Spark's LocalRelation.data expects.  `schema` must be a struct ("+s")
** schema and `array` a struct array of it (any offsets, as C Data allows:
** slices are written compacted); NULL writes the schema alone.  Appends to
** out; DIPPER_UNSUPPORTED names a format it cannot write (dictionaries,
** views, unions, decimal256).  Both inputs stay the caller's. */
int dp_arrow_ipc_encode(const struct ArrowSchema *schema, const struct ArrowArray *array,
                        dp_buf *out, dp_buf *err);

#endif /* DP_SPARK_ARROW_IPC_H */
