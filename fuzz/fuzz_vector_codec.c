/*
** fuzz_vector_codec.c — libFuzzer target for the vector decoder
** (core/vector_codec.h): the first byte picks one of eight types (BIGINT,
** STRING, ARRAY<INT>, MAP<STRING, DOUBLE>, ROW<INT, STRING, NULL>,
** ARRAY<ROW<BIGINT, ARRAY<STRING>, MAP<INT, ROW<BOOLEAN>>>>,
** MAP<STRING, ARRAY<DECIMAL(12,2)>>, BOOLEAN), the rest is decoded into a
** vector of that type which already holds two rows (a NULL and a value, so
** the decoded rows land at bit 2 of the bitmaps).
**
** Besides "no crash, no leak, no undefined behaviour" it checks what
** checkpoint restores rely on: a refused input leaves the vector's two rows
** as they were; a decoded one re-encodes to the bytes it consumed (up to
** the length of their varints, which bytes.h reads in any form), and that
** encoding is a fixed point: it decodes and encodes to itself.  A broken invariant
** aborts, which the fuzzer reports.
**
** The seeds in fuzz/corpus/vector_codec/ were written by
** `build-asan/tests/test_core_vector_codec_test --seeds fuzz/corpus/vector_codec`
** (the same eight types, in the same order).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/vector_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NTYPES 8

static const dp_type *make_type(dp_arena *a, int which) {
  const dp_type *i32 = dp_type_of(DP_T_INT), *str = dp_type_of(DP_T_STRING);
  switch (which) {
  case 0: return dp_type_of(DP_T_BIGINT);
  case 1: return str;
  case 2: return dp_type_array(a, i32);
  case 3: return dp_type_map(a, str, dp_type_of(DP_T_DOUBLE));
  case 4: {
    dp_field f[] = {{"a", i32}, {"b", str}, {"n", dp_type_of(DP_T_NULL)}};
    return dp_type_row(a, 3, f);
  }
  case 5: {
    dp_field inner[] = {{"p", dp_type_of(DP_T_BOOLEAN)}};
    dp_field f[] = {{"x", dp_type_of(DP_T_BIGINT)},
                    {"y", dp_type_array(a, str)},
                    {"m", dp_type_map(a, i32, dp_type_row(a, 1, inner))}};
    return dp_type_array(a, dp_type_row(a, 3, f));
  }
  case 6: return dp_type_map(a, str, dp_type_array(a, dp_type_decimal(a, 12, 2)));
  default: return dp_type_of(DP_T_BOOLEAN);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  dp_arena *a = dp_arena_new(0);
  if (!a) return 0;
  const dp_type *t = make_type(a, data[0] % NTYPES);
  dp_vector *v = dp_vector_new(t, 0);
  if (!t || !v) abort();
  dp_buf before = DP_BUF_INIT, after = DP_BUF_INIT;
  /* two rows first: a NULL and an all-NULL-members value */
  dp_value null = dp_value_null(t);
  if (dp_vector_append_value(v, &null) || dp_vector_append_nulls(v, 1)) abort();
  if (dp_vector_encode(v, 0, 2, &before) != DIPPER_OK) abort();
  dp_rd rd;
  dp_rd_init(&rd, data + 1, size - 1);
  int rc = dp_vector_decode(&rd, v);
  if (rc == DIPPER_CORRUPT) {
    if (!rd.bad || v->length != 2) abort();
  } else if (rc == DIPPER_OK) {
    if (v->length < 2) abort();
    /* the rows decoded encode to at most the bytes they came from (varints
    ** may have come longer), which decode and encode to themselves */
    dp_buf once = DP_BUF_INIT, twice = DP_BUF_INIT;
    int64_t n = v->length - 2;
    if (dp_vector_encode(v, 2, n, &once) != DIPPER_OK || once.len > rd.pos) abort();
    dp_rd_init(&rd, once.data, once.len);
    if (dp_vector_decode(&rd, v) != DIPPER_OK || !dp_rd_done(&rd) || v->length != 2 + 2 * n) abort();
    if (dp_vector_encode(v, 2 + n, n, &twice) != DIPPER_OK) abort();
    if (twice.len != once.len || (once.len && memcmp(once.data, twice.data, once.len) != 0)) abort();
    dp_buf_free(&once);
    dp_buf_free(&twice);
  } else if (rc != DIPPER_NOMEM) {
    abort(); /* LIMIT cannot happen into a vector of two rows */
  }
  if (dp_vector_encode(v, 0, 2, &after) != DIPPER_OK) abort();
  if (after.len != before.len || memcmp(after.data, before.data, before.len) != 0) abort();
  dp_buf_free(&before);
  dp_buf_free(&after);
  dp_vector_free(v);
  dp_arena_free(a);
  return 0;
}
