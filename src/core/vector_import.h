/*
** vector_import.h — Arrow C Data arrays into dipper's vectors and batches:
** the inverse of the export in vector.h (vector_export.c).
**
** Owns: checking an Arrow format tree against a dipper type, and appending
** the rows of an Arrow array to a dp_vector (copies: memcpy for fixed-width
** values and for string bytes, rebased offsets, validity bitmaps re-packed at
** any bit offset).  Does not own: decoding Arrow IPC (spark/arrow_ipc.c) or
** the vectors themselves (vector.c).
**
** Formats accepted per type (names are not compared: columns and ROW fields
** match by position):
**   BOOLEAN b; TINYINT c; SMALLINT s; INT i; BIGINT l; FLOAT f; DOUBLE g;
**   DECIMAL(p,s) d:P,S[,128] with S == s and P <= p; STRING u or U (large);
**   BYTES z or Z; DATE tdD; TIME ttu; TIMESTAMP tsu: (no zone);
**   TIMESTAMP_LTZ tsu:<zone> (any zone: the values are UTC µs, as Spark
**   sends its TimestampType in the session's zone); INTERVAL DAY TO SECOND
**   tDu; INTERVAL YEAR TO MONTH tiM; ARRAY +l; MAP +m; ROW +s; NULL n.
**
** The arrays are trusted as the C Data spec requires of a producer (buffers
** as long as lengths and offsets say); arrays from dp_arrow_ipc_decode are
** checked to be so.  Lengths add up under int32 offsets: more than 2^31-1
** bytes or elements in one vector gives DIPPER_LIMIT.
**
** On failure a message goes to err (may be NULL) and the vector or batch may
** hold part of the rows: clear it before reuse.
*/
#ifndef DP_VECTOR_IMPORT_H
#define DP_VECTOR_IMPORT_H

#include "core/buf.h"
#include "core/vector.h"
#include "dipper.h"

/* Does the Arrow schema fit type t?  DIPPER_OK, or DIPPER_TYPE with err
** naming `what` (a column name, say), the format and the type. */
int dp_arrow_check_type(const dp_type *t, const struct ArrowSchema *schema, const char *what,
                        dp_buf *err);

/* The dipper type of an Arrow schema: the formats listed above (and "tsu:"
** with any zone as TIMESTAMP_LTZ); TIMESTAMP and TIME take their precision
** from the DP_ARROW_PRECISION_KEY metadata dipper's export writes, else 6
** (Arrow's µs, as from Spark).  NULL for a format dipper has no type for,
** or when out of memory; allocated in `a`. */
const dp_type *dp_type_from_arrow(dp_arena *a, const struct ArrowSchema *schema);

/* Append every row of `array` (of `schema`) to v.  The schema stays the
** caller's; nothing of the array is kept. */
int dp_vector_import(dp_vector *v, const struct ArrowSchema *schema, const struct ArrowArray *array,
                     dp_buf *err);

/* Append the rows of a struct array ("+s", one child per column of
** b->schema, in order) to the batch's columns and count them in b->nrows.
** Every column is checked before any row is appended. */
int dp_batch_import(dp_batch *b, const struct ArrowSchema *schema, const struct ArrowArray *array,
                    dp_buf *err);

#endif /* DP_VECTOR_IMPORT_H */
