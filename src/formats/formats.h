/*
** formats.h — record formats: one JSON object or one CSV record decoded into
** a new row of a batch, and a row of a batch encoded back into text.
**
** Owns: the JSON (json.c) and CSV (csv.c) codecs and the text forms of
** scalar values they share (text.c).  Does not own: files, lines, offsets or
** the bad-records policy — the connectors split their input into records,
** say where a record came from, and decide what a bad one costs.
**
** Decoders trust no input: every length is checked, nesting is bounded, and
** a record that fails leaves the batch exactly as it was (the partly written
** row is cut back), so a caller may skip it and go on.  They do no I/O and
** allocate nothing per record once their scratch buffers have grown.  The
** common forms of values (numbers, timestamps, plain strings, the key that
** comes next) take fast paths (fastscan.h) that give the same values and
** errors as the general path.
**
** Errors: DIPPER_DATA with *err filled — the byte offset in the record where
** the problem is and a message naming the field and the value ("field
** `price`: expected a number, got \"abc\"").  DIPPER_NOMEM / DIPPER_LIMIT
** when the batch cannot grow.
**
** Text forms (both formats; what the encoders write, and what the decoders
** accept besides):
**   BOOLEAN      true | false
**   DATE         yyyy-MM-dd               TIME  HH:mm:ss[.fff]
**   TIMESTAMP    yyyy-MM-dd HH:mm:ss.SSS (more digits when the precision is
**                above 3; Flink's JSON format).  Read also: the ISO-8601 'T'
**                form, a trailing 'Z', fewer digits, and a bare integer of
**                epoch milliseconds.
**   TIMESTAMP_LTZ the same with a trailing 'Z' (UTC); read: any ±hh:mm zone.
**   DECIMAL      plain digits, exact (no exponent written; one read is rounded
**                half up to the scale)
**   BYTES        base64 (RFC 4648) in JSON; in CSV too
**   INTERVAL     CSV and the console: Flink's text, "+0 00:01:30.000" (DAY TO
**                SECOND; six fraction digits when there are microseconds) or
**                "+1-02" (YEAR TO MONTH); JSON: an integer, µs or months;
**                read: either, and "10 s", "1 min 30 s"
**   FLOAT/DOUBLE shortest text that reads back exactly; NaN and ±Infinity
**                as the strings "NaN", "Infinity", "-Infinity"
*/
#ifndef DP_FORMATS_H
#define DP_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/types.h"
#include "core/vector.h"

/* Why a record failed: where in it, and what. */
typedef struct dp_format_error {
  int64_t offset;  /* byte offset inside the record, from 0 */
  char msg[320];   /* "field `price`: expected a number, got \"abc\"" */
} dp_format_error;

/* ---- JSON: one object per record (JSON lines) ---- */

typedef struct dp_json_options {
  bool fail_on_missing;    /* json.fail-on-missing-field: a missing key is an error, not NULL */
  bool reference;          /* the general path only, no fast paths: what the tests compare
                              the fast paths with (slower; same values and errors) */
} dp_json_options;

typedef struct dp_json_decoder dp_json_decoder;

/* A decoder that appends to the columns of `schema` (borrowed while the
** decoder lives).  `decode_col` (ncols flags, NULL = all) says which columns
** come from the record; the others (metadata) are left to the caller, who
** appends one value to each after a successful decode.  opts may be NULL.
** The caller frees it with dp_json_decoder_free.  NULL when out of memory. */
dp_json_decoder *dp_json_decoder_new(const dp_schema *schema, const bool *decode_col,
                                     const dp_json_options *opts);
void dp_json_decoder_free(dp_json_decoder *dec);

/* Decode the object in rec[0..n) (surrounding white space allowed) into one
** new row of `out`'s decoded columns.  Keys match column names exactly, else
** case-insensitively; unknown keys are skipped; a missing key gives NULL. On
** failure `out` is unchanged.  out->nrows is not touched: the caller counts. */
int dp_json_decode(dp_json_decoder *dec, const char *rec, size_t n, dp_batch *out,
                   dp_format_error *err);

/* Append row `row` of `b` as one JSON object (no newline) to `out`: keys =
** column names, NULL as null.  Returns DIPPER_NOMEM when `out` ran out. */
int dp_json_encode_row(const dp_batch *b, int64_t row, dp_buf *out);
/* One value as JSON text (for dead letters and nested encoders). */
void dp_json_put_value(dp_buf *out, const dp_vector *v, int64_t row);
/* A JSON string literal, quotes included, escaping what JSON requires; bytes
** that are not UTF-8 are written as \ufffd, so the output is always JSON. */
void dp_json_put_string(dp_buf *out, const char *p, size_t n);

/* ---- CSV (RFC 4180) ---- */

typedef struct dp_csv_options {
  char delimiter;         /* csv.field-delimiter, default ',' */
  char quote;             /* csv.quote-character, default '"'; '\0' = no quoting */
  char array_delimiter;   /* csv.array-element-delimiter, default ';' */
  bool allow_comments;    /* csv.allow-comments: records starting with '#' are skipped */
  const char *null_literal; /* csv.null-literal: an unquoted field equal to it is NULL */
  bool reference;         /* the general path only (as dp_json_options.reference) */
} dp_csv_options;

/* The defaults above. */
dp_csv_options dp_csv_default_options(void);

/* The end of the record starting at p[0..n): the index just past its line
** break (a CR LF, LF or CR outside quotes), or n when the text ends first.
** *complete is false when the text ends inside a quoted field or without a
** line break (more may come). */
size_t dp_csv_record_end(const char *p, size_t n, char quote, bool *complete);

typedef struct dp_csv_decoder dp_csv_decoder;

/* As dp_json_decoder_new.  Columns of type ROW or MAP have no CSV form:
** NULL with *unsupported set to the first such column (else -1). */
dp_csv_decoder *dp_csv_decoder_new(const dp_schema *schema, const bool *decode_col,
                                   const dp_csv_options *opts, int *unsupported);
void dp_csv_decoder_free(dp_csv_decoder *dec);

/* Decode one record (its trailing line break allowed) into one new row:
** fields in column order, as many as decoded columns.  An unquoted empty
** field (or the null literal) is NULL; a quoted empty field "" is the empty
** string.  A record that is a comment (allow_comments) or empty yields
** DIPPER_OK with *skipped set and no row. */
int dp_csv_decode(dp_csv_decoder *dec, const char *rec, size_t n, dp_batch *out, bool *skipped,
                  dp_format_error *err);

/* Append row `row` of b as one CSV record with its "\n" to out.  Fields that
** hold the delimiter, the quote, a line break or leading/trailing spaces are
** quoted; NULL is an empty field, the empty string is "". */
int dp_csv_encode_row(const dp_batch *b, int64_t row, const dp_csv_options *opts, dp_buf *out);
/* The header record: the column names. */
int dp_csv_encode_header(const dp_schema *s, const dp_csv_options *opts, dp_buf *out);

/* ---- text forms shared by the codecs and the console (text.c) ---- */

/* Flags of dp_text_put_value. */
#define DP_TEXT_CODEC 1u /* the codecs' form: at least 3 fraction digits in
                            timestamps, 'Z' after an LTZ; without it the
                            column's own precision (the console) */

/* Append the value of row `row` of v as text to out (the forms above;
** nested values as Spark shows them: {a, b}, [1, 2], {k -> v}); NULL as
** `null_text`. */
void dp_text_put_value(dp_buf *out, const dp_vector *v, int64_t row, const char *null_text,
                       unsigned flags);

/* Parse the text form of a scalar of type t (not STRING/BYTES/ROW/ARRAY/MAP)
** and append it to v.  Returns DIPPER_OK, DIPPER_DATA (malformed: nothing
** appended) or a vector code. */
int dp_text_append_scalar(dp_vector *v, const char *p, size_t n);

/* Base64 (RFC 4648, with padding). decode: false on a malformed text; dst
** needs room for n/4*3 bytes. */
void dp_base64_put(dp_buf *out, const unsigned char *p, size_t n);
bool dp_base64_decode(const char *p, size_t n, unsigned char *dst, size_t *dst_len);

/* UTF-8 as the decoders check it (no overlong forms, no surrogates, at most
** U+10FFFF): the length of the valid sequence at p (1..4; p < end), or 0;
** and the offset of the first byte of p[0..n) that is not UTF-8, or n. */
size_t dp_utf8_len(const unsigned char *p, const unsigned char *end);
size_t dp_utf8_valid_prefix(const unsigned char *p, size_t n);

/* Cut v back to `length` rows (children too): undoes a part-written row. */
void dp_format_cut(dp_vector *v, int64_t length);

#endif /* DP_FORMATS_H */
