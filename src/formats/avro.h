/*
** avro.h — the 'avro' record format: one Avro binary datum per record (no
** container file, no schema-registry header), its schema derived from the
** table's columns, as Flink's 'avro' format does.
**
** Owns: the schema a table's columns map to (dp_avro_schema_json: the same
** text the embedded engine writes and reads and the Spark translator hands
** to from_avro/to_avro, so both engines agree byte for byte), the decoder of
** one datum into a new row of a batch and the encoder of one row.
** Does not own: Kafka, files, the bad-records policy (connectors/records.c).
**
** The mapping (writer and reader schema are the same, derived text):
**   top level        record "record"; a nested ROW is record "record_<path>"
**                    (its field names joined by '_'; a ROW inside an ARRAY or
**                    MAP takes its column's path); a name already taken gets
**                    "_2", "_3", ... so that names are unique per schema
**   nullable column  union ["null", T] (branch 0 = NULL) and, as Flink
**   or field         writes it, "default": null; NOT NULL: T alone
**   names            column and field names must be Avro names
**                    ([A-Za-z_][A-Za-z0-9_]*): others are refused
**   BOOLEAN          boolean           TINYINT/SMALLINT/INT  int
**   BIGINT           long              FLOAT float   DOUBLE double
**   STRING/CHAR/VARCHAR string         BYTES/BINARY/VARBINARY bytes
**   DECIMAL(p,s)     bytes, logicalType decimal, precision p, scale s
**                    (big-endian two's complement of the unscaled value)
**   DATE             int, logicalType date (days since 1970-01-01)
**   TIME(p)          int, logicalType time-millis
**   TIMESTAMP(p)     long, local-timestamp-millis (p <= 3) / -micros (p > 3)
**   TIMESTAMP_LTZ(p) long, timestamp-millis (p <= 3) / timestamp-micros
**   ARRAY<T>         array of T (element nullability as above)
**   MAP<STRING,T>    map of T (Avro maps have string keys: other key types
**                    are refused by dp_avro_schema_json)
**   ROW<...>         a nested record
**   INTERVAL         refused (no Avro form dipper writes)
**
** Decoders trust no input: every length and count is checked against the
** bytes left, nesting is bounded, a union branch or a block count out of
** range is an error; a failed record leaves the batch as it was.
*/
#ifndef DP_FORMATS_AVRO_H
#define DP_FORMATS_AVRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/types.h"
#include "core/vector.h"
#include "formats/formats.h"

/* Append to out the Avro schema (JSON text) of the columns of s for which
** cols[i] is true (cols NULL = all), in column order.  DIPPER_OK;
** DIPPER_UNSUPPORTED with *bad set to the first column that has no Avro form
** (and `why` filled: "MAP<INT, STRING>: Avro map keys are strings");
** DIPPER_NOMEM. */
int dp_avro_schema_json(const dp_schema *s, const bool *cols, dp_buf *out, int *bad,
                        char *why, size_t why_size);

typedef struct dp_avro_decoder dp_avro_decoder;

/* As dp_json_decoder_new: decodes the columns with decode_col[i] (NULL =
** all) from each datum, leaves the others to the caller.  NULL when out of
** memory or when a decoded column's type has no Avro form (check with
** dp_avro_schema_json first to say which; names are not checked here: the
** binary form has none). */
dp_avro_decoder *dp_avro_decoder_new(const dp_schema *schema, const bool *decode_col);
void dp_avro_decoder_free(dp_avro_decoder *dec);

/* Decode the datum rec[0..n) into one new row of out's decoded columns.
** The datum must be consumed exactly: trailing bytes are an error.  On
** failure (DIPPER_DATA, err: byte offset and "field `price`: ...") out is
** unchanged.  out->nrows is not touched. */
int dp_avro_decode(dp_avro_decoder *dec, const char *rec, size_t n, dp_batch *out,
                   dp_format_error *err);

/* Append row `row` of b, columns with cols[i] (NULL = all), as one datum to
** out, in the schema of b->schema's types (their NOT NULL included: a NULL
** there is written as the type's zero, so a caller that must not do that
** checks first).  A STRING that is not UTF-8 is written with U+FFFD for each
** stray byte, a NULL map key as "".  DIPPER_NOMEM when out ran out,
** DIPPER_MISUSE for a row out of range. */
int dp_avro_encode_row(const dp_batch *b, int64_t row, const bool *cols, dp_buf *out);

#endif /* DP_FORMATS_AVRO_H */
