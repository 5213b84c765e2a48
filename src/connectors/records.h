/*
** records.h — what the connectors share: decoding a table's records in its
** format, the bad-records policy, copying rows and schemas, and reporting an
** error from a public call of the handle (records.c).
**
** Owns: the mapping from a table's options to a format decoder
** ('format' = json | csv | avro, 'json.*', 'csv.*'), and the policy 'dipper.bad-records' =
** fail (default) | skip | dead-letter with 'dipper.dead-letter.path'.
** Does not own: the formats themselves (src/formats/).
*/
#ifndef DP_CONN_RECORDS_H
#define DP_CONN_RECORDS_H

#include <stdbool.h>
#include <stdio.h>

#include "connectors/connector.h"
#include "formats/avro.h"
#include "formats/formats.h"

/* ---- decoding a table's records ---- */

typedef struct dp_record_decoder {
  bool csv;                 /* else JSON or Avro */
  bool avro;                /* one Avro binary datum per record (Kafka's messages) */
  bool header;              /* csv.header: the first record of each file names the columns */
  dp_json_decoder *json;
  dp_csv_decoder *csvd;
  dp_avro_decoder *avrod;
  dp_csv_options csv_opts;
  bool *decode_col;         /* scan column i is a physical column of the table */
  int nmeta;                /* columns left to the connector (metadata) */
} dp_record_decoder;

/* Set up the decoder of table t's format for the scan schema `schema`.
** `fallback` is the format when the table names none ("json").  Errors (a
** format the engine does not read, a column CSV or Avro cannot hold) go to
** d.  'avro' is one binary datum per record, whose schema is the decoded
** columns (dp_avro_schema_json): read only for Kafka tables, whose messages
** frame the records (for files 'avro' means container files). */
int dp_record_decoder_open(dp_record_decoder *rd, const dp_table_def *t, const dp_schema *schema,
                           const char *fallback, dp_diags *d);
void dp_record_decoder_close(dp_record_decoder *rd);
/* One record into one row of out's decoded columns; *skipped for blank lines
** and comments (no row). */
int dp_record_decode(dp_record_decoder *rd, const char *rec, size_t n, dp_batch *out,
                     bool *skipped, dp_format_error *err);
/* The end of the record at p (JSON: the line; CSV: quotes respected; Avro:
** the whole of p, one datum, *complete set). */
size_t dp_record_end(const dp_record_decoder *rd, const char *p, size_t n, bool *complete);

/* ---- bad records ---- */

typedef enum dp_bad_policy { DP_BAD_FAIL, DP_BAD_SKIP, DP_BAD_DEAD_LETTER } dp_bad_policy;

typedef struct dp_bad_records {
  dp_bad_policy policy;
  const char *path;  /* dead-letter file (borrowed from the table) */
  FILE *dead;        /* opened on the first bad record */
} dp_bad_records;

/* Read the table's policy. */
void dp_bad_records_init(dp_bad_records *br, const dp_table_def *t);
/* A record failed to decode.  `where` says where it came from ("in.json:3",
** "partition 0 offset 42"); rec/n is the raw record.  fail: DIPPER_DATA with
** a diagnostic naming the table, the place and the reason; skip: counted in
** s->metrics; dead-letter: one JSON line {"table","source","error","record"}
** appended to the dead-letter file.  DIPPER_OK means: go on. */
int dp_bad_record(dp_bad_records *br, dp_source *s, const char *where, const dp_format_error *e,
                  const char *rec, size_t n);
/* Flush the dead letters (at commit) and close. */
int dp_bad_records_flush(dp_bad_records *br, dp_source *s);
void dp_bad_records_close(dp_bad_records *br);

/* ---- rows and schemas ---- */

/* Append rows [from, from+n) of src to dst (same type). */
int dp_rows_append(dp_vector *dst, const dp_vector *src, int64_t from, int64_t n);
/* Append every row of src to dst (same schema) and set dst->nrows. */
int dp_batch_append(dp_batch *dst, const dp_batch *src);
/* A deep copy of a type / schema into `a` (names too), so that data can
** outlive the program whose plan it was typed by. */
const dp_type *dp_type_copy(dp_arena *a, const dp_type *t);
dp_schema *dp_schema_copy(dp_arena *a, const dp_schema *s);

#endif /* DP_CONN_RECORDS_H */
