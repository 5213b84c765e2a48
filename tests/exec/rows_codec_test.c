/*
** rows_codec_test.c — what a stored row set costs in a checkpoint: columns
** no one reads (exec/narrow.h's all-NULL fillers) written in O(1) bytes by
** core/vector_codec.c, read back exactly, and their refusals; and the
** dropped rows of a rows.h log written as runs.
*/
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/bytes.h"
#include "core/vector_codec.h"
#include "exec/narrow.h"
#include "exec/rows.h"
#include "test.h"

/* (k BIGINT, s STRING, r ROW<a INT, b STRING>, d DOUBLE): k real, the rest
** fillers of n rows. */
static dp_batch *filled(dp_arena *a, dp_schema *sc, int64_t n) {
  dp_field rf[] = {{"a", dp_type_of(DP_T_INT)}, {"b", dp_type_of(DP_T_STRING)}};
  static dp_field f[4];
  f[0] = (dp_field){"k", dp_type_of(DP_T_BIGINT)};
  f[1] = (dp_field){"s", dp_type_of(DP_T_STRING)};
  f[2] = (dp_field){"r", dp_type_row(a, 2, rf)};
  f[3] = (dp_field){"d", dp_type_of(DP_T_DOUBLE)};
  sc->ncols = 4;
  sc->cols = f;
  dp_batch *b = dp_batch_new(sc, n);
  if (!b) return NULL;
  for (int64_t i = 0; i < n; i++) CHECK_EQ(dp_vector_append_i64(b->cols[0], i * 7), DIPPER_OK);
  for (int c = 1; c < 4; c++) CHECK_EQ(dp_vector_append_nulls(b->cols[c], n), DIPPER_OK);
  CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  return b;
}

TEST(filler_columns_cost_no_bytes_per_row) {
  dp_arena *a = dp_arena_new(0);
  dp_schema sc;
  dp_batch *small = filled(a, &sc, 10), *big = filled(a, &sc, 100000);
  dp_buf bs = DP_BUF_INIT, bb = DP_BUF_INIT;
  CHECK_EQ(dp_rows_save(&bs, small), DIPPER_OK);
  CHECK_EQ(dp_rows_save(&bb, big), DIPPER_OK);
  fprintf(stderr, "  10 rows: %zu bytes, 100,000 rows: %zu bytes\n", bs.len, bb.len);
  /* the only bytes per row are k's, packed: its values step by 7, a byte each */
  CHECK(bb.len - bs.len <= (size_t)(100000 - 10) + 16); /* + the longer row counts */
  /* and they read back exactly: the same rows, the same bytes again */
  dp_batch *back = dp_batch_new(&sc, 0);
  dp_rd in;
  dp_rd_init(&in, bb.data, bb.len);
  CHECK_EQ(dp_rows_load(&in, back), DIPPER_OK);
  CHECK(dp_rd_done(&in));
  CHECK_EQ(back->nrows, 100000);
  CHECK_EQ(dp_vector_get_i64(back->cols[0], 99999), 99999 * 7);
  for (int c = 1; c < 4; c++) CHECK_EQ(back->cols[c]->null_count, 100000);
  CHECK_EQ(back->cols[2]->children[1]->null_count, 100000);
  dp_buf again = DP_BUF_INIT;
  CHECK_EQ(dp_rows_save(&again, back), DIPPER_OK);
  CHECK(again.len == bb.len && memcmp(again.data, bb.data, bb.len) == 0);
  /* a part of the rows, past the first */
  dp_buf part = DP_BUF_INIT;
  CHECK_EQ(dp_rows_save_range(&part, big, 500, 1000), DIPPER_OK);
  CHECK(part.len < 1000 + 64);
  dp_buf_free(&part);
  dp_buf_free(&again);
  dp_buf_free(&bs);
  dp_buf_free(&bb);
  dp_batch_free(back);
  dp_batch_free(small);
  dp_batch_free(big);
  dp_arena_free(a);
}

/* 64-bit columns packed as deltas: any values, NULLs among them, exact. */
TEST(packed_columns_read_back_exactly) {
  dp_field f[] = {{"a", dp_type_of(DP_T_BIGINT)}, {"t", dp_type_of(DP_T_TIMESTAMP)}};
  dp_schema sc = {2, f};
  dp_batch *b = dp_batch_new(&sc, 0);
  static const int64_t odd[] = {INT64_MIN, INT64_MAX, -1, 0, 1, INT64_MIN, 123456789012345, -7};
  for (int i = 0; i < 4000; i++) {
    CHECK_EQ(dp_vector_append_i64(b->cols[0], odd[i % 8]), DIPPER_OK);
    if (i % 5 == 3)
      CHECK_EQ(dp_vector_append_null(b->cols[1]), DIPPER_OK);
    else
      CHECK_EQ(dp_vector_append_i64(b->cols[1], INT64_C(1700000000000000) + i * 1000), DIPPER_OK);
  }
  CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  dp_buf out = DP_BUF_INIT;
  CHECK_EQ(dp_rows_save_range(&out, b, 1, 3999), DIPPER_OK);
  dp_batch *back = dp_batch_new(&sc, 0);
  dp_rd in;
  dp_rd_init(&in, out.data, out.len);
  CHECK_EQ(dp_rows_load(&in, back), DIPPER_OK);
  CHECK(dp_rd_done(&in));
  int64_t differ = 0;
  for (int64_t r = 0; r < 3999; r++) {
    differ += dp_vector_get_i64(back->cols[0], r) != dp_vector_get_i64(b->cols[0], r + 1);
    differ += dp_vector_is_null(back->cols[1], r) != dp_vector_is_null(b->cols[1], r + 1);
    if (!dp_vector_is_null(b->cols[1], r + 1))
      differ += dp_vector_get_i64(back->cols[1], r) != dp_vector_get_i64(b->cols[1], r + 1);
  }
  CHECK_EQ(differ, 0);
  CHECK_EQ(back->cols[1]->null_count, b->cols[1]->null_count);
  /* the times, 1000 apart: two bytes a row and the bitmap, not eight */
  CHECK(out.len < 3999 * 10 + 3999 * 3 + 600);
  /* every truncation refused, and the batch left as it was */
  for (size_t n = 0; n < out.len; n += 7) {
    dp_batch *t = dp_batch_new(&sc, 0);
    dp_rd_init(&in, out.data, n);
    CHECK_EQ(dp_rows_load(&in, t), DIPPER_CORRUPT);
    CHECK(t->nrows == 0 && t->cols[0]->length == 0 && t->cols[1]->length == 0);
    dp_batch_free(t);
  }
  dp_buf_free(&out);
  dp_batch_free(back);
  dp_batch_free(b);
}

/* A NULL row with a value under it is not blank: the value comes back. */
TEST(nulls_over_values_are_kept) {
  dp_arena *a = dp_arena_new(0);
  dp_schema sc;
  dp_batch *b = filled(a, &sc, 100);
  /* a row of r whose ROW is NULL but whose member b holds bytes */
  dp_vector *r = b->cols[2];
  dp_vector_truncate(r, 99);
  CHECK_EQ(dp_vector_append_null(r->children[0]), DIPPER_OK);
  CHECK_EQ(dp_vector_append_str(r->children[1], "kept", 4), DIPPER_OK);
  CHECK_EQ(dp_vector_append_struct(r), DIPPER_OK);
  dp_bit_set(r->validity, 99, false);
  r->null_count = 100;
  dp_buf out = DP_BUF_INIT;
  CHECK_EQ(dp_rows_save(&out, b), DIPPER_OK);
  dp_batch *back = dp_batch_new(&sc, 0);
  dp_rd in;
  dp_rd_init(&in, out.data, out.len);
  CHECK_EQ(dp_rows_load(&in, back), DIPPER_OK);
  const dp_vector *m = back->cols[2]->children[1];
  CHECK_EQ(m->offsets[100] - m->offsets[99], 4);
  dp_buf_free(&out);
  dp_batch_free(back);
  dp_batch_free(b);
  dp_arena_free(a);
}

/* A blank column only where the writer writes one: not the first column
** (its bytes back the row count), with the batch's row count, never in a
** lone vector's encoding. */
TEST(blank_columns_are_refused_elsewhere) {
  dp_arena *a = dp_arena_new(0);
  dp_schema sc;
  dp_batch *b = filled(a, &sc, 1000);
  dp_buf out = DP_BUF_INIT;
  CHECK_EQ(dp_rows_save(&out, b), DIPPER_OK);
  /* ncols, rows, then k (tag, rows, 1000 packed values of a byte), then s: blank */
  size_t s_at = 1 + 2 + 1 + 2 + 1000;
  CHECK_EQ(out.data[s_at], (char)(0x40 | DP_PHYS_VARBIN));
  /* its row count changed: refused */
  uint8_t *copy = malloc(out.len);
  memcpy(copy, out.data, out.len);
  copy[s_at + 1] ^= 0x01;
  dp_batch *back = dp_batch_new(&sc, 0);
  dp_rd in;
  dp_rd_init(&in, copy, out.len);
  CHECK_EQ(dp_rows_load(&in, back), DIPPER_CORRUPT);
  CHECK_EQ(back->nrows, 0);
  CHECK_EQ(back->cols[0]->length, 0);
  /* a lone vector: the blank tag is not one of its layouts */
  dp_vector *v = dp_vector_new(dp_type_of(DP_T_STRING), 0);
  dp_rd_init(&in, (const uint8_t *)out.data + s_at, out.len - s_at);
  CHECK_EQ(dp_vector_decode(&in, v), DIPPER_CORRUPT);
  /* and a lone vector of NULL rows is written in full */
  dp_buf lone = DP_BUF_INIT;
  CHECK_EQ(dp_vector_encode(b->cols[1], 0, 1000, &lone), DIPPER_OK);
  CHECK(lone.len > 1000 / 8);
  /* the first column of a batch, all NULL, is not blank either */
  dp_batch first = {&sc, 1, &b->cols[1], 1000};
  dp_field one = sc.cols[1];
  dp_schema s1 = {1, &one};
  first.schema = &s1;
  dp_buf f = DP_BUF_INIT;
  CHECK_EQ(dp_rows_save(&f, &first), DIPPER_OK);
  CHECK(f.len > 1000 / 8);
  dp_buf_free(&f);
  dp_buf_free(&lone);
  dp_vector_free(v);
  free(copy);
  dp_buf_free(&out);
  dp_batch_free(back);
  dp_batch_free(b);
  dp_arena_free(a);
}

/* 60,000 rows dropped from a store of 100,000 in two runs: the log says so
** in a few bytes, and reads back as those rows. */
TEST(dropped_rows_are_written_as_runs) {
  dp_rowlog l;
  memset(&l, 0, sizeof l);
  dp_rowlog_mark(&l, 100000);
  int64_t *pos = malloc(60000 * sizeof *pos);
  for (int64_t i = 0; i < 50000; i++) pos[i] = i;              /* base rows 0..49999 */
  for (int64_t i = 0; i < 10000; i++) pos[50000 + i] = 60000 + i; /* and 60000..69999 */
  CHECK_EQ(dp_rowlog_drop(&l, pos, 60000), DIPPER_OK);
  dp_buf out = DP_BUF_INIT;
  int64_t *at = NULL, nat = 0;
  CHECK_EQ(dp_rowlog_save(&out, &l, &at, &nat), DIPPER_OK);
  CHECK(out.len < 24);
  dp_rd in;
  dp_rd_init(&in, out.data, out.len);
  dp_rowlog_delta d;
  CHECK_EQ(dp_rowlog_load(&in, 100000, &d), DIPPER_OK);
  CHECK(dp_rd_done(&in));
  CHECK_EQ(d.ndrop, 60000);
  CHECK(!d.all && d.ndrop == 60000 && d.drop[49999] == 49999 && d.drop[50000] == 60000 &&
        d.drop[59999] == 69999);
  dp_rowlog_delta_free(&d);
  /* the same log read against another store size: refused */
  dp_rd_init(&in, out.data, out.len);
  CHECK_EQ(dp_rowlog_load(&in, 99999, &d), DIPPER_CORRUPT);
  /* every truncation refused */
  for (size_t n = 0; n < out.len; n++) {
    dp_rd_init(&in, out.data, n);
    CHECK_EQ(dp_rowlog_load(&in, 100000, &d), DIPPER_CORRUPT);
  }
  free(at);
  free(pos);
  dp_buf_free(&out);
  dp_rowlog_free(&l);
}

int main(void) { return RUN_TESTS(); }
