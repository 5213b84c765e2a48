/*
** fuzz_json.c — libFuzzer target for the JSON format decoder: arbitrary bytes
** cut into lines and decoded into a schema that has every type, nested ones
** included.
**
** Besides "no crash, no leak, no undefined behaviour" it checks what the
** connectors rely on: a failed record reports an offset inside the record and
** leaves every column as it was; a decoded record encodes to JSON that
** decodes again to the same text (the encoder's output is a fixed point).
** And a decoder without the fast paths ('reference') gives the same code,
** error and values for every line.  A broken invariant aborts, which the
** fuzzer reports.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "formats/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static dp_schema *make_schema(dp_arena *a) {
  dp_field inner[] = {{"x", dp_type_of(DP_T_INT)},
                      {"y", dp_type_array(a, dp_type_of(DP_T_STRING))}};
  dp_field elem[] = {{"k", dp_type_of(DP_T_BIGINT)}};
  const char *names[] = {"b", "i", "l", "f", "d", "dec", "s", "by", "dt", "tm", "ts", "ltz",
                         "iv", "r", "m", "a", "t"};
  const dp_type *types[] = {dp_type_of(DP_T_BOOLEAN),
                            dp_type_of(DP_T_INT),
                            dp_type_of(DP_T_BIGINT),
                            dp_type_of(DP_T_FLOAT),
                            dp_type_of(DP_T_DOUBLE),
                            dp_type_decimal(a, 12, 3),
                            dp_type_of(DP_T_STRING),
                            dp_type_of(DP_T_BYTES),
                            dp_type_of(DP_T_DATE),
                            dp_type_timestamp(a, DP_T_TIME, 3),
                            dp_type_timestamp(a, DP_T_TIMESTAMP, 3),
                            dp_type_timestamp(a, DP_T_TIMESTAMP_LTZ, 6),
                            dp_type_of(DP_T_INTERVAL_DT),
                            dp_type_row(a, 2, inner),
                            dp_type_map(a, dp_type_of(DP_T_STRING), dp_type_of(DP_T_DOUBLE)),
                            dp_type_array(a, dp_type_row(a, 1, elem)),
                            dp_type_of(DP_T_TINYINT)};
  int n = (int)(sizeof names / sizeof names[0]);
  dp_schema *s = dp_schema_new(a, n);
  if (!s) abort();
  for (int i = 0; i < n; i++) {
    if (!types[i]) abort();
    s->cols[i].name = names[i];
    s->cols[i].type = types[i];
  }
  return s;
}

static void same_lengths(const dp_batch *b, const int64_t *before) {
  for (int c = 0; c < b->ncols; c++)
    if (b->cols[c]->length != before[c]) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dp_arena *a = dp_arena_new(0);
  if (!a) return 0;
  dp_schema *s = make_schema(a);
  dp_json_options opts = {size > 0 && (data[0] & 1)};
  dp_json_decoder *dec = dp_json_decoder_new(s, NULL, &opts);
  dp_json_options ropts = opts;
  ropts.reference = true;
  dp_json_decoder *ref = dp_json_decoder_new(s, NULL, &ropts);
  dp_batch *b = dp_batch_new(s, 0), *rb = dp_batch_new(s, 0);
  dp_buf out = DP_BUF_INIT, again = DP_BUF_INIT, rout = DP_BUF_INIT;
  if (!dec || !ref || !b || !rb) abort();
  int64_t before[32];
  const char *p = (const char *)data, *end = p + size;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    for (int c = 0; c < b->ncols; c++) before[c] = b->cols[c]->length;
    dp_format_error err;
    int rc = dp_json_decode(dec, p, len, b, &err);
    /* the general path alone: the same code, error and values */
    dp_format_error rerr;
    int rrc = dp_json_decode(ref, p, len, rb, &rerr);
    if (rrc != rc) abort();
    if (rc == DIPPER_DATA && (rerr.offset != err.offset || strcmp(rerr.msg, err.msg) != 0)) abort();
    if (rc == DIPPER_OK) {
      if (dp_batch_sync(b) != DIPPER_OK || dp_batch_sync(rb) != DIPPER_OK) abort();
      out.len = rout.len = 0;
      if (dp_json_encode_row(b, b->nrows - 1, &out) != DIPPER_OK ||
          dp_json_encode_row(rb, rb->nrows - 1, &rout) != DIPPER_OK)
        abort();
      if (out.len != rout.len || memcmp(out.data, rout.data, out.len) != 0) abort();
    }
    if (rb->nrows > 64) dp_batch_clear(rb);
    if (rc == DIPPER_DATA) {
      if (err.offset < 0 || (size_t)err.offset > len || !err.msg[0]) abort();
      same_lengths(b, before);
    } else if (rc == DIPPER_OK) {
      for (int c = 0; c < b->ncols; c++)
        if (b->cols[c]->length != before[c] + 1) abort();
      if (dp_batch_sync(b) != DIPPER_OK) abort();
      out.len = 0;
      if (dp_json_encode_row(b, b->nrows - 1, &out) != DIPPER_OK) abort();
      /* the encoder's text decodes and encodes to itself */
      if (dp_json_decode(dec, out.data, out.len, b, &err) != DIPPER_OK) abort();
      if (dp_batch_sync(b) != DIPPER_OK) abort();
      again.len = 0;
      if (dp_json_encode_row(b, b->nrows - 1, &again) != DIPPER_OK) abort();
      if (again.len != out.len || memcmp(again.data, out.data, out.len) != 0) abort();
    } else {
      abort(); /* no other code for well-formed calls */
    }
    if (b->nrows > 64) dp_batch_clear(b);
    p += len + (nl ? 1 : 0);
  }
  dp_buf_free(&out);
  dp_buf_free(&again);
  dp_buf_free(&rout);
  dp_batch_free(b);
  dp_batch_free(rb);
  dp_json_decoder_free(dec);
  dp_json_decoder_free(ref);
  dp_arena_free(a);
  return 0;
}
