/*
** fuzz_csv.c — libFuzzer target for the CSV format decoder: arbitrary bytes
** cut into records (quotes respected) and decoded into a schema of scalar and
** array columns; the first byte picks the delimiter, the quote and whether
** comments are allowed.
**
** Invariants checked besides the sanitizers': record ends move forward and
** stay inside the text; a failed record reports an offset inside it and
** leaves every column as it was; a decoded record encodes to CSV that decodes
** to the same text again; and a decoder without the fast paths ('reference')
** gives the same code, error and values for every record.  Bit 32 of the
** first byte picks a schema of the kinds the whole-record fast path takes
** (integers, doubles, timestamps, strings) instead.  A broken invariant aborts.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "formats/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dp_arena *a = dp_arena_new(0);
  if (!a) return 0;
  const char *names[] = {"i", "s", "d", "dec", "ts", "b", "arr", "by"};
  const dp_type *types[] = {dp_type_of(DP_T_BIGINT),
                            dp_type_of(DP_T_STRING),
                            dp_type_of(DP_T_DOUBLE),
                            dp_type_decimal(a, 9, 2),
                            dp_type_timestamp(a, DP_T_TIMESTAMP, 3),
                            dp_type_of(DP_T_BOOLEAN),
                            dp_type_array(a, dp_type_of(DP_T_INT)),
                            dp_type_of(DP_T_BYTES)};
  const dp_type *fast_types[] = {dp_type_of(DP_T_BIGINT),
                                 dp_type_of(DP_T_STRING),
                                 dp_type_of(DP_T_DOUBLE),
                                 dp_type_of(DP_T_INT),
                                 dp_type_timestamp(a, DP_T_TIMESTAMP, 3),
                                 dp_type_of(DP_T_TINYINT),
                                 dp_type_timestamp(a, DP_T_TIMESTAMP_LTZ, 6),
                                 dp_type_of(DP_T_FLOAT)};
  bool fast_schema = size > 0 && (data[0] & 32);
  int ncols = (int)(sizeof names / sizeof names[0]);
  dp_schema *s = dp_schema_new(a, ncols);
  if (!s) abort();
  for (int i = 0; i < ncols; i++) {
    s->cols[i].name = names[i];
    s->cols[i].type = fast_schema ? fast_types[i] : types[i];
    if (!s->cols[i].type) abort();
  }
  dp_csv_options o = dp_csv_default_options();
  if (size > 0) {
    static const char delims[] = {',', ';', '\t', '|'};
    o.delimiter = delims[data[0] & 3];
    o.quote = (data[0] & 4) ? '\'' : '"';
    o.allow_comments = (data[0] & 8) != 0;
    if (data[0] & 16) o.null_literal = "NULL";
    data++;
    size--;
  }
  dp_csv_decoder *dec = dp_csv_decoder_new(s, NULL, &o, NULL);
  dp_csv_options ro = o;
  ro.reference = true;
  dp_csv_decoder *ref = dp_csv_decoder_new(s, NULL, &ro, NULL);
  dp_batch *b = dp_batch_new(s, 0), *rb = dp_batch_new(s, 0);
  if (!dec || !ref || !b || !rb) abort();
  dp_buf out = DP_BUF_INIT, again = DP_BUF_INIT, rout = DP_BUF_INIT;
  const char *p = (const char *)data;
  size_t pos = 0;
  while (pos < size) {
    bool complete, skipped;
    size_t len = dp_csv_record_end(p + pos, size - pos, o.quote, &complete);
    if (len == 0 || len > size - pos) abort();
    int64_t before[8];
    for (int c = 0; c < ncols; c++) before[c] = b->cols[c]->length;
    dp_format_error err;
    int rc = dp_csv_decode(dec, p + pos, len, b, &skipped, &err);
    /* the general path alone: the same code, error and values */
    bool rskipped;
    dp_format_error rerr;
    int rrc = dp_csv_decode(ref, p + pos, len, rb, &rskipped, &rerr);
    if (rrc != rc || rskipped != skipped) abort();
    if (rc == DIPPER_DATA && (rerr.offset != err.offset || strcmp(rerr.msg, err.msg) != 0)) abort();
    if (rc == DIPPER_OK && !skipped) {
      if (dp_batch_sync(b) != DIPPER_OK || dp_batch_sync(rb) != DIPPER_OK) abort();
      out.len = rout.len = 0;
      if (dp_csv_encode_row(b, b->nrows - 1, &o, &out) != DIPPER_OK ||
          dp_csv_encode_row(rb, rb->nrows - 1, &o, &rout) != DIPPER_OK)
        abort();
      if (out.len != rout.len || memcmp(out.data, rout.data, out.len) != 0) abort();
    }
    if (rb->nrows > 64) dp_batch_clear(rb);
    if (rc == DIPPER_DATA) {
      if (err.offset < 0 || (size_t)err.offset > len || !err.msg[0]) abort();
      for (int c = 0; c < ncols; c++)
        if (b->cols[c]->length != before[c]) abort();
    } else if (rc != DIPPER_OK) {
      abort();
    } else if (!skipped) {
      if (dp_batch_sync(b) != DIPPER_OK) abort();
      out.len = 0;
      if (dp_csv_encode_row(b, b->nrows - 1, &o, &out) != DIPPER_OK) abort();
      bool c2;
      if (dp_csv_record_end(out.data, out.len, o.quote, &c2) != out.len || !c2) abort();
      if (dp_csv_decode(dec, out.data, out.len, b, &skipped, &err) != DIPPER_OK) abort();
      if (!skipped) {
        if (dp_batch_sync(b) != DIPPER_OK) abort();
        again.len = 0;
        if (dp_csv_encode_row(b, b->nrows - 1, &o, &again) != DIPPER_OK) abort();
        if (again.len != out.len || memcmp(again.data, out.data, out.len) != 0) abort();
      }
    }
    if (b->nrows > 64) dp_batch_clear(b);
    pos += len;
  }
  dp_buf_free(&out);
  dp_buf_free(&again);
  dp_buf_free(&rout);
  dp_batch_free(b);
  dp_batch_free(rb);
  dp_csv_decoder_free(dec);
  dp_csv_decoder_free(ref);
  dp_arena_free(a);
  return 0;
}
