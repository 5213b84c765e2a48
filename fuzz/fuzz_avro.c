/*
** fuzz_avro.c — libFuzzer target for the Avro datum decoder: the first byte
** picks one of three schemas (nullable scalars of every type; the same NOT
** NULL, without unions; nested ROW / ARRAY / MAP), the rest is one datum.
**
** Besides "no crash, no leak, no undefined behaviour" it checks what the
** connectors rely on: a failed datum reports an offset inside it and leaves
** every column as it was; a decoded datum encodes to bytes that decode again
** and encode to themselves (the encoder's output is a fixed point: other
** writers' forms — negative block counts, long varints, sign-extended
** decimals — come back in the shortest form, and that form is stable).
** A broken invariant aborts, which the fuzzer reports.
**
** The seeds in fuzz/corpus/avro/ were written by this file built with
** -DDP_AVRO_WRITE_SEEDS (a main that encodes a few JSON rows per schema):
**   cc -DDP_AVRO_WRITE_SEEDS -D_POSIX_C_SOURCE=200809L -Isrc -Iinclude
**      fuzz/fuzz_avro.c build/libdipper.a -lm ... && ./a.out fuzz/corpus/avro
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "formats/avro.h"
#include "formats/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NSCHEMAS 3

static const dp_type *nn(dp_arena *a, const dp_type *t, bool not_null) {
  return not_null ? dp_type_with_nullability(a, t, true) : t;
}

static dp_schema *make_schema(dp_arena *a, int which) {
  const char *names[16];
  const dp_type *types[16];
  int n = 0;
  if (which < 2) {
    bool x = which == 1;
    static const char *const scalar_names[] = {"b",   "i8", "i16", "i32", "i64", "f",
                                               "d",   "dec", "s",  "by",  "dt",  "tm",
                                               "ts",  "ts6", "ltz", "ltz9"};
    const dp_type *t[] = {dp_type_of(DP_T_BOOLEAN),
                          dp_type_of(DP_T_TINYINT),
                          dp_type_of(DP_T_SMALLINT),
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
                          dp_type_timestamp(a, DP_T_TIMESTAMP, 6),
                          dp_type_timestamp(a, DP_T_TIMESTAMP_LTZ, 3),
                          dp_type_timestamp(a, DP_T_TIMESTAMP_LTZ, 9)};
    for (n = 0; n < 16; n++) {
      names[n] = scalar_names[n];
      types[n] = t[n] ? nn(a, t[n], x) : NULL;
    }
  } else {
    dp_field inner[] = {{"x", dp_type_of(DP_T_INT)},
                        {"y", dp_type_array(a, dp_type_of(DP_T_STRING))}};
    dp_field elem[] = {{"k", nn(a, dp_type_of(DP_T_BIGINT), true)}};
    names[n] = "r";
    types[n++] = dp_type_row(a, 2, inner);
    names[n] = "m";
    types[n++] = dp_type_map(a, nn(a, dp_type_of(DP_T_STRING), true), dp_type_of(DP_T_DOUBLE));
    names[n] = "a";
    types[n++] = dp_type_array(a, dp_type_row(a, 1, elem));
    names[n] = "md";
    types[n++] = nn(a,
                    dp_type_map(a, nn(a, dp_type_of(DP_T_STRING), true),
                                dp_type_array(a, nn(a, dp_type_decimal(a, 38, 10), true))),
                    true);
    names[n] = "aa";
    types[n++] = dp_type_array(a, dp_type_array(a, nn(a, dp_type_of(DP_T_BOOLEAN), true)));
    names[n] = "e";
    types[n++] = nn(a, dp_type_of(DP_T_TINYINT), true);
  }
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
  if (size == 0) return 0;
  dp_arena *a = dp_arena_new(0);
  if (!a) return 0;
  dp_schema *s = make_schema(a, data[0] % NSCHEMAS);
  dp_avro_decoder *dec = dp_avro_decoder_new(s, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  dp_buf out = DP_BUF_INIT, again = DP_BUF_INIT;
  if (!dec || !b) abort();
  int64_t before[16];
  const char *rec = (const char *)data + 1;
  size_t len = size - 1;
  for (int c = 0; c < b->ncols; c++) before[c] = b->cols[c]->length;
  dp_format_error err;
  int rc = dp_avro_decode(dec, rec, len, b, &err);
  if (rc == DIPPER_DATA) {
    if (err.offset < 0 || (size_t)err.offset > len || !err.msg[0]) abort();
    same_lengths(b, before);
  } else if (rc == DIPPER_OK) {
    for (int c = 0; c < b->ncols; c++)
      if (b->cols[c]->length != before[c] + 1) abort();
    if (dp_batch_sync(b) != DIPPER_OK) abort();
    if (dp_avro_encode_row(b, 0, NULL, &out) != DIPPER_OK) abort();
    /* the encoder's bytes decode, and encode to themselves */
    if (dp_avro_decode(dec, out.data, out.len, b, &err) != DIPPER_OK) abort();
    if (dp_batch_sync(b) != DIPPER_OK) abort();
    if (dp_avro_encode_row(b, 1, NULL, &again) != DIPPER_OK) abort();
    if (again.len != out.len || memcmp(again.data, out.data, out.len) != 0) abort();
  } else {
    abort(); /* no other code for well-formed calls */
  }
  dp_buf_free(&out);
  dp_buf_free(&again);
  dp_batch_free(b);
  dp_avro_decoder_free(dec);
  dp_arena_free(a);
  return 0;
}

#ifdef DP_AVRO_WRITE_SEEDS
/* JSON rows per schema, encoded as the seeds. */
static const char *const seed_rows[NSCHEMAS][3] = {
    {"{\"b\":true,\"i8\":-128,\"i16\":32767,\"i32\":-2147483648,\"i64\":9223372036854775807,"
     "\"f\":1.5,\"d\":-0.25,\"dec\":\"123456789.123\",\"s\":\"h\\u00e9\",\"by\":\"AP8=\","
     "\"dt\":\"2024-02-29\",\"tm\":\"23:59:59.999\",\"ts\":\"2024-01-01 00:00:00.123\","
     "\"ts6\":\"1969-12-31 23:59:59.999999\",\"ltz\":\"2024-01-01 00:00:00Z\","
     "\"ltz9\":\"2024-01-01 00:00:00.123456Z\"}",
     "{}",
     "{\"f\":\"NaN\",\"d\":\"-Infinity\",\"dec\":\"-0.001\",\"s\":\"\"}"},
    {"{\"b\":false,\"i8\":1,\"i16\":-1,\"i32\":64,\"i64\":-65,\"f\":0,\"d\":1e300,\"dec\":0,"
     "\"s\":\"x\",\"by\":\"\",\"dt\":\"1970-01-01\",\"tm\":\"00:00:00\",\"ts\":0,\"ts6\":0,"
     "\"ltz\":0,\"ltz9\":0}",
     NULL, NULL},
    {"{\"r\":{\"x\":1,\"y\":[\"a\",null,\"\"]},\"m\":{\"k\":1.5,\"n\":null},\"a\":[{\"k\":1},null],"
     "\"md\":{\"p\":[\"9999999999999999999999999999.9999999999\",\"-1\"],\"q\":[]},"
     "\"aa\":[[true,false],[],null],\"e\":127}",
     "{\"r\":null,\"m\":{},\"a\":[],\"md\":{},\"aa\":[],\"e\":0}",
     "{\"r\":{\"x\":null,\"y\":null},\"md\":{\"\":[0]},\"e\":-1}"},
};

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  int written = 0;
  for (int which = 0; which < NSCHEMAS; which++) {
    dp_arena *a = dp_arena_new(0);
    dp_schema *s = make_schema(a, which);
    dp_json_decoder *jd = dp_json_decoder_new(s, NULL, NULL);
    dp_batch *b = dp_batch_new(s, 0);
    for (int r = 0; r < 3 && seed_rows[which][r]; r++) {
      dp_format_error err;
      if (dp_json_decode(jd, seed_rows[which][r], strlen(seed_rows[which][r]), b, &err) != 0) {
        fprintf(stderr, "schema %d row %d: %s\n", which, r, err.msg);
        return 1;
      }
      dp_batch_sync(b);
      dp_buf out = DP_BUF_INIT;
      dp_buf_putc(&out, (char)which);
      dp_avro_encode_row(b, b->nrows - 1, NULL, &out);
      char path[4096];
      snprintf(path, sizeof path, "%s/schema%d-row%d.avro", dir, which, r);
      FILE *f = fopen(path, "wb");
      if (!f || fwrite(out.data, 1, out.len, f) != out.len || fclose(f) != 0) return 1;
      dp_buf_free(&out);
      written++;
    }
    dp_batch_free(b);
    dp_json_decoder_free(jd);
    dp_arena_free(a);
  }
  printf("%d seeds written to %s\n", written, dir);
  return 0;
}
#endif
