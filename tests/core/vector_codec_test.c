/*
** vector_codec_test.c — the vector and batch codec (vector_codec.h): every
** layout round-trips exactly (row by row, values under NULL bits included)
** from every start of a slice (every bit alignment of the bitmaps) into
** empty vectors and into vectors that already hold rows (every alignment of
** the destination); nested ARRAY<ROW<..>> and MAP; the compact form (no
** bitmap without nulls, fixed widths as they are); every truncation and
** every single-bit flip of an encoding either decodes to a well-formed
** vector or is refused with the destination as it was; other layouts are
** refused.  The seeds of fuzz/corpus/vector_codec/ are written by
** `test_core_vector_codec_test --seeds DIR`.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/vector_codec.h"
#include "test.h"

static dp_arena *A;

static dp_arena *arena(void) {
  if (!A) A = dp_arena_new(0);
  return A;
}

static const dp_type *T(dp_type_kind k) { return dp_type_of(k); }

/* ---- types ---- */

#define NTYPES 19

static const dp_type *type_at(int which) {
  dp_arena *a = arena();
  switch (which) {
  case 0: return T(DP_T_NULL);
  case 1: return T(DP_T_BOOLEAN);
  case 2: return T(DP_T_TINYINT);
  case 3: return T(DP_T_SMALLINT);
  case 4: return T(DP_T_INT);
  case 5: return T(DP_T_BIGINT);
  case 6: return T(DP_T_FLOAT);
  case 7: return T(DP_T_DOUBLE);
  case 8: return dp_type_decimal(a, 38, 10);
  case 9: return T(DP_T_STRING);
  case 10: return T(DP_T_BYTES);
  case 11: return T(DP_T_DATE);
  case 12: return dp_type_array(a, T(DP_T_INT));
  case 13: return dp_type_map(a, T(DP_T_STRING), T(DP_T_DOUBLE));
  case 14: {
    dp_field f[] = {{"a", T(DP_T_INT)}, {"b", T(DP_T_STRING)}, {"n", T(DP_T_NULL)}};
    return dp_type_row(a, 3, f);
  }
  case 15: {
    dp_field inner[] = {{"p", T(DP_T_BOOLEAN)}};
    dp_field f[] = {{"x", T(DP_T_BIGINT)},
                    {"y", dp_type_array(a, T(DP_T_STRING))},
                    {"m", dp_type_map(a, T(DP_T_INT), dp_type_row(a, 1, inner))}};
    return dp_type_array(a, dp_type_row(a, 3, f));
  }
  case 16: return dp_type_map(a, T(DP_T_STRING), dp_type_array(a, dp_type_decimal(a, 12, 2)));
  case 17: return dp_type_array(a, dp_type_array(a, T(DP_T_BOOLEAN)));
  default: {
    dp_field f[] = {{"t", T(DP_T_TIMESTAMP)}, {"r", dp_type_row(a, 1, (dp_field[]){{"f", T(DP_T_FLOAT)}})}};
    return dp_type_row(a, 2, f);
  }
  }
}

/* ---- building ---- */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Mark row i of v NULL after the fact (a ROW whose members keep values). */
static void set_null(dp_vector *v, int64_t i) {
  if (!v->validity) {
    v->validity = calloc((size_t)(v->capacity + 7) / 8, 1);
    for (int64_t k = 0; k < v->length; k++) dp_bit_set(v->validity, k, true);
  }
  if (dp_bit_get(v->validity, i)) v->null_count++;
  dp_bit_set(v->validity, i, false);
}

static int gen(dp_vector *v, int null_pct);

static int gen_value(dp_vector *v, int null_pct) {
  uint64_t r = rnd();
  switch (v->phys) {
  case DP_PHYS_NULL: return dp_vector_append_null(v);
  case DP_PHYS_BIT: return dp_vector_append_bool(v, r & 1);
  case DP_PHYS_I8: return dp_vector_append_i64(v, (int8_t)r);
  case DP_PHYS_I16: return dp_vector_append_i64(v, (int16_t)r);
  case DP_PHYS_I32: return dp_vector_append_i64(v, (int32_t)r);
  case DP_PHYS_I64: return dp_vector_append_i64(v, (int64_t)r);
  case DP_PHYS_F32:
  case DP_PHYS_F64: return dp_vector_append_f64(v, (double)(int64_t)r / 1e6);
  case DP_PHYS_D128: return dp_vector_append_dec(v, (dp_i128)(int64_t)r * (dp_i128)(int64_t)rnd());
  case DP_PHYS_VARBIN: {
    char s[16];
    size_t n = (size_t)(r % 14);
    for (size_t i = 0; i < n; i++) s[i] = (char)('a' + (rnd() % 26));
    return dp_vector_append_str(v, s, n);
  }
  case DP_PHYS_LIST: {
    int k = (int)(r % 4), rc = 0;
    for (int i = 0; i < k && !rc; i++) {
      if (v->type->kind == DP_T_MAP) {
        dp_vector *e = v->children[0];
        rc = gen_value(e->children[0], 0); /* keys are not NULL */
        if (!rc) rc = gen(e->children[1], null_pct);
        if (!rc) rc = dp_vector_append_struct(e);
      } else {
        rc = gen(v->children[0], null_pct);
      }
    }
    return rc ? rc : dp_vector_append_list(v);
  }
  default: {
    int rc = 0;
    for (int i = 0; i < v->nchildren && !rc; i++) rc = gen(v->children[i], null_pct);
    return rc ? rc : dp_vector_append_struct(v);
  }
  }
}

/* One row: NULL one time in 100/null_pct, else a value; a ROW sometimes
** NULL over members that keep their values. */
static int gen(dp_vector *v, int null_pct) {
  if (null_pct && (int)(rnd() % 100) < null_pct) return dp_vector_append_null(v);
  int rc = gen_value(v, null_pct);
  if (!rc && v->phys == DP_PHYS_STRUCT && null_pct && rnd() % 5 == 0) set_null(v, v->length - 1);
  return rc;
}

static dp_vector *make(const dp_type *t, int64_t n, int null_pct) {
  dp_vector *v = dp_vector_new(t, 0);
  for (int64_t i = 0; i < n; i++)
    if (gen(v, null_pct) != DIPPER_OK) abort();
  return v;
}

/* ---- comparing ---- */

/* Row i of a equals row j of b exactly: nulls, bits of values (under NULL
** bits too), children. */
static bool same_row(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j) {
  if (a->phys != b->phys) return false;
  if (dp_vector_is_null(a, i) != dp_vector_is_null(b, j)) return false;
  int w = dp_phys_width(a->phys);
  switch (a->phys) {
  case DP_PHYS_NULL: return true;
  case DP_PHYS_BIT: return dp_vector_get_bool(a, i) == dp_vector_get_bool(b, j);
  case DP_PHYS_VARBIN: {
    size_t la, lb;
    const char *pa = dp_vector_get_str(a, i, &la), *pb = dp_vector_get_str(b, j, &lb);
    return la == lb && memcmp(pa, pb, la) == 0;
  }
  case DP_PHYS_LIST: {
    int64_t as, ae, bs, be;
    dp_vector_list_bounds(a, i, &as, &ae);
    dp_vector_list_bounds(b, j, &bs, &be);
    if (ae - as != be - bs) return false;
    for (int64_t k = 0; k < ae - as; k++)
      if (!same_row(a->children[0], as + k, b->children[0], bs + k)) return false;
    return true;
  }
  case DP_PHYS_STRUCT:
    if (a->nchildren != b->nchildren) return false;
    for (int c = 0; c < a->nchildren; c++)
      if (!same_row(a->children[c], i, b->children[c], j)) return false;
    return true;
  default:
    return memcmp((const char *)a->values + i * w, (const char *)b->values + j * w, (size_t)w) == 0;
  }
}

static bool same_rows(const dp_vector *a, int64_t ai, const dp_vector *b, int64_t bi, int64_t n) {
  for (int64_t k = 0; k < n; k++)
    if (!same_row(a, ai + k, b, bi + k)) return false;
  return true;
}

/* The layout's invariants; returns how many are broken. */
static int broken(const dp_vector *v) {
  int bad = 0;
  if (v->phys == DP_PHYS_NULL) return v->null_count == v->length ? 0 : 1;
  if (v->length > v->capacity) bad++;
  int64_t nulls = 0;
  if (v->validity)
    for (int64_t i = 0; i < v->length; i++) nulls += !dp_bit_get(v->validity, i);
  if (nulls != v->null_count) bad++;
  if (v->phys == DP_PHYS_VARBIN || v->phys == DP_PHYS_LIST) {
    if (v->offsets[0] != 0) bad++;
    for (int64_t i = 0; i < v->length; i++)
      if (v->offsets[i + 1] < v->offsets[i]) bad++;
    if (v->phys == DP_PHYS_VARBIN && v->data_len != v->offsets[v->length]) bad++;
    if (v->phys == DP_PHYS_LIST && v->children[0]->length != v->offsets[v->length]) bad++;
  }
  if (v->phys == DP_PHYS_STRUCT)
    for (int i = 0; i < v->nchildren; i++)
      if (v->children[i]->length != v->length) bad++;
  for (int i = 0; i < v->nchildren; i++) bad += broken(v->children[i]);
  return bad;
}

/* ---- tests ---- */

TEST(every_layout_round_trips_from_every_start) {
  for (int t = 0; t < NTYPES; t++) {
    const dp_type *type = type_at(t);
    dp_vector *src = make(type, 90, 20);
    int failures = 0;
    for (int64_t start = 0; start < 17; start++) {
      int64_t lens[] = {0, 1, 7, 8, 9, 63, 90 - start};
      for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int64_t n = lens[li];
        dp_buf buf = DP_BUF_INIT;
        CHECK_EQ(dp_vector_encode(src, start, n, &buf), DIPPER_OK);
        /* into an empty vector, and after a prefix of every alignment */
        for (int64_t pre = 0; pre < 10; pre += 3) {
          dp_vector *dst = make(type, pre, 30);
          dp_vector *copy = make(type, 0, 0);
          dp_vector_take(copy, dst, NULL, 0, pre);
          dp_rd rd;
          dp_rd_init(&rd, buf.data, buf.len);
          int rc = dp_vector_decode(&rd, dst);
          if (rc != DIPPER_OK || !dp_rd_done(&rd) || dst->length != pre + n ||
              !same_rows(dst, 0, copy, 0, pre) || !same_rows(dst, pre, src, start, n) ||
              broken(dst))
            failures++;
          dp_vector_free(dst);
          dp_vector_free(copy);
        }
        dp_buf_free(&buf);
      }
    }
    if (failures) fprintf(stderr, "type %d: %d failed round trips\n", t, failures);
    CHECK_EQ(failures, 0);
    dp_vector_free(src);
  }
}

TEST(a_decoded_vector_encodes_to_the_same_bytes) {
  for (int t = 0; t < NTYPES; t++) {
    dp_vector *src = make(type_at(t), 40, 25);
    dp_buf a = DP_BUF_INIT, b = DP_BUF_INIT;
    CHECK_EQ(dp_vector_encode(src, 3, 37, &a), DIPPER_OK);
    dp_vector *dst = dp_vector_new(type_at(t), 0);
    dp_rd rd;
    dp_rd_init(&rd, a.data, a.len);
    CHECK_EQ(dp_vector_decode(&rd, dst), DIPPER_OK);
    CHECK_EQ(dp_vector_encode(dst, 0, dst->length, &b), DIPPER_OK);
    CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    dp_buf_free(&a);
    dp_buf_free(&b);
    dp_vector_free(dst);
    dp_vector_free(src);
  }
}

TEST(no_bitmap_without_nulls_and_fixed_widths_as_they_are) {
  dp_vector *v = dp_vector_new(T(DP_T_INT), 0);
  for (int i = 0; i < 20; i++) dp_vector_append_i64(v, i == 10 ? 0 : i);
  dp_buf b = DP_BUF_INIT;
  dp_vector_encode(v, 0, 20, &b);
  CHECK_EQ(b.len, 2 + 20 * 4); /* tag, rows, the values */
  CHECK_EQ((uint8_t)b.data[0], DP_PHYS_I32);
  int32_t x;
  memcpy(&x, b.data + 2 + 4 * 7, 4);
  CHECK_EQ(x, 7);
  /* a bitmap, but no null in the range: none written */
  dp_vector_append_null(v);
  dp_buf_free(&b);
  dp_vector_encode(v, 1, 19, &b);
  CHECK_EQ(b.len, 2 + 19 * 4);
  dp_buf_free(&b);
  dp_vector_encode(v, 1, 20, &b);
  CHECK_EQ(b.len, 2 + 3 + 20 * 4);
  CHECK_EQ((uint8_t)b.data[0], DP_PHYS_I32 | 0x80);
  dp_buf_free(&b);
  dp_vector_free(v);
}

/* Decoding `bytes` into a vector holding rows: refused with the rows as they
** were, or decoded into a well-formed vector.  Returns the code. */
static int decode_or_keep(const dp_type *t, const void *bytes, size_t len) {
  dp_vector *dst = make(t, 5, 40);
  dp_vector *copy = dp_vector_new(t, 0);
  dp_vector_take(copy, dst, NULL, 0, 5);
  dp_rd rd;
  dp_rd_init(&rd, bytes, len);
  int rc = dp_vector_decode(&rd, dst);
  if (rc != DIPPER_OK) {
    CHECK_EQ(rc, DIPPER_CORRUPT);
    CHECK(rd.bad);
    CHECK_EQ(dst->length, 5);
    CHECK(same_rows(dst, 0, copy, 0, 5));
  } else {
    CHECK(same_rows(dst, 0, copy, 0, 5));
  }
  CHECK_EQ(broken(dst), 0);
  /* and the vector still takes rows */
  CHECK_EQ(gen(dst, 0), DIPPER_OK);
  CHECK_EQ(broken(dst), 0);
  dp_vector_free(dst);
  dp_vector_free(copy);
  return rc;
}

TEST(every_truncation_is_refused_cleanly) {
  for (int t = 0; t < NTYPES; t++) {
    dp_vector *src = make(type_at(t), 30, 25);
    dp_buf b = DP_BUF_INIT;
    dp_vector_encode(src, 1, 29, &b);
    int accepted = 0;
    for (size_t len = 0; len < b.len; len++) {
      /* a copy of exactly len bytes, so ASan sees a read past it */
      uint8_t *p = malloc(len ? len : 1);
      memcpy(p, b.data, len);
      if (decode_or_keep(type_at(t), p, len) == DIPPER_OK) accepted++;
      free(p);
    }
    CHECK_EQ(accepted, 0);
    dp_buf_free(&b);
    dp_vector_free(src);
  }
}

TEST(every_bit_flip_decodes_well_formed_or_is_refused) {
  int kinds[] = {9, 12, 13, 14, 15, 16};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    const dp_type *t = type_at(kinds[k]);
    dp_vector *src = make(t, 12, 25);
    dp_buf b = DP_BUF_INIT;
    dp_vector_encode(src, 2, 10, &b);
    uint8_t *p = malloc(b.len);
    for (size_t i = 0; i < b.len; i++)
      for (int bit = 0; bit < 8; bit++) {
        memcpy(p, b.data, b.len);
        p[i] ^= (uint8_t)(1u << bit);
        decode_or_keep(t, p, b.len);
      }
    free(p);
    dp_buf_free(&b);
    dp_vector_free(src);
  }
}

TEST(another_layout_is_refused) {
  /* (written as, read as) */
  int pairs[][2] = {{4, 5}, {5, 4}, {9, 12}, {12, 13}, {13, 12}, {14, 18}, {1, 0}, {0, 1},
                    {15, 17}, {8, 5}, {2, 3}, {11, 5}};
  for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
    dp_vector *src = make(type_at(pairs[k][0]), 10, 20);
    dp_buf b = DP_BUF_INIT;
    dp_vector_encode(src, 0, 10, &b);
    CHECK_EQ(decode_or_keep(type_at(pairs[k][1]), b.data, b.len), DIPPER_CORRUPT);
    dp_buf_free(&b);
    dp_vector_free(src);
  }
  /* a ROW of another arity */
  dp_field two[] = {{"a", T(DP_T_INT)}, {"b", T(DP_T_STRING)}};
  dp_field three[] = {{"a", T(DP_T_INT)}, {"b", T(DP_T_STRING)}, {"c", T(DP_T_INT)}};
  dp_vector *src = make(dp_type_row(arena(), 2, two), 4, 0);
  dp_buf b = DP_BUF_INIT;
  dp_vector_encode(src, 0, 4, &b);
  CHECK_EQ(decode_or_keep(dp_type_row(arena(), 3, three), b.data, b.len), DIPPER_CORRUPT);
  dp_buf_free(&b);
  dp_vector_free(src);
}

TEST(what_the_writer_never_writes_is_refused) {
  const uint8_t unknown_bits[] = {DP_PHYS_I8 | 0x40, 1, 7};
  CHECK_EQ(decode_or_keep(T(DP_T_TINYINT), unknown_bits, sizeof unknown_bits), DIPPER_CORRUPT);
  const uint8_t padding[] = {DP_PHYS_BIT, 3, 0x0d}; /* bit 3 past 3 rows */
  CHECK_EQ(decode_or_keep(T(DP_T_BOOLEAN), padding, sizeof padding), DIPPER_CORRUPT);
  const uint8_t no_null[] = {DP_PHYS_I8 | 0x80, 2, 0x03, 1, 2}; /* a bitmap of no null */
  CHECK_EQ(decode_or_keep(T(DP_T_TINYINT), no_null, sizeof no_null), DIPPER_CORRUPT);
  const uint8_t null_bitmap[] = {DP_PHYS_NULL | 0x80, 2, 0x01};
  CHECK_EQ(decode_or_keep(T(DP_T_NULL), null_bitmap, sizeof null_bitmap), DIPPER_CORRUPT);
  const uint8_t huge[] = {DP_PHYS_I64, 0xff, 0xff, 0xff, 0xff, 0x0f, 0};
  CHECK_EQ(decode_or_keep(T(DP_T_BIGINT), huge, sizeof huge), DIPPER_CORRUPT);
  /* lengths past int32, and a LIST whose child has other rows */
  const uint8_t long_str[] = {DP_PHYS_VARBIN, 1, 0xff, 0xff, 0xff, 0xff, 0x0f};
  CHECK_EQ(decode_or_keep(T(DP_T_STRING), long_str, sizeof long_str), DIPPER_CORRUPT);
  const uint8_t short_child[] = {DP_PHYS_LIST, 1, 2, DP_PHYS_I32, 1, 1, 0, 0, 0};
  CHECK_EQ(decode_or_keep(dp_type_array(arena(), T(DP_T_INT)), short_child, sizeof short_child),
           DIPPER_CORRUPT);
  const uint8_t ok_list[] = {DP_PHYS_LIST, 1, 1, DP_PHYS_I32, 1, 1, 0, 0, 0};
  CHECK_EQ(decode_or_keep(dp_type_array(arena(), T(DP_T_INT)), ok_list, sizeof ok_list), DIPPER_OK);
}

TEST(a_vector_of_no_buffers_yet) {
  /* export_move leaves a vector without offsets: an empty range still encodes */
  dp_vector *v = make(T(DP_T_STRING), 3, 0);
  struct ArrowSchema s;
  struct ArrowArray arr;
  CHECK_EQ(dp_vector_export_move(v, &s, &arr), DIPPER_OK);
  s.release(&s);
  arr.release(&arr);
  dp_buf b = DP_BUF_INIT;
  CHECK_EQ(dp_vector_encode(v, 0, 0, &b), DIPPER_OK);
  dp_rd rd;
  dp_rd_init(&rd, b.data, b.len);
  CHECK_EQ(dp_vector_decode(&rd, v), DIPPER_OK);
  CHECK_EQ(v->length, 0);
  dp_buf_free(&b);
  dp_vector *src = make(T(DP_T_STRING), 4, 30);
  dp_vector_encode(src, 0, 4, &b);
  dp_rd_init(&rd, b.data, b.len);
  CHECK_EQ(dp_vector_decode(&rd, v), DIPPER_OK);
  CHECK(v->length == 4 && same_rows(v, 0, src, 0, 4));
  CHECK_EQ(dp_vector_encode(v, 0, 5, &b), DIPPER_MISUSE);
  dp_buf_free(&b);
  dp_vector_free(src);
  dp_vector_free(v);
}

static dp_schema *batch_schema(void) {
  dp_schema *s = dp_schema_new(arena(), 3);
  s->cols[0].name = "k";
  s->cols[0].type = T(DP_T_BIGINT);
  s->cols[1].name = "s";
  s->cols[1].type = T(DP_T_STRING);
  s->cols[2].name = "a";
  s->cols[2].type = type_at(15);
  return s;
}

static dp_batch *make_batch(const dp_schema *s, int64_t n) {
  dp_batch *b = dp_batch_new(s, 0);
  for (int c = 0; c < b->ncols; c++)
    for (int64_t i = 0; i < n; i++) gen(b->cols[c], 20);
  dp_batch_sync(b);
  return b;
}

TEST(batches_round_trip_and_a_failed_column_puts_all_back) {
  dp_schema *s = batch_schema();
  dp_batch *src = make_batch(s, 25);
  dp_buf buf = DP_BUF_INIT;
  CHECK_EQ(dp_batch_encode(src, 5, 20, &buf), DIPPER_OK);
  dp_batch *dst = make_batch(s, 3);
  dp_rd rd;
  dp_rd_init(&rd, buf.data, buf.len);
  CHECK_EQ(dp_batch_decode(&rd, dst), DIPPER_OK);
  CHECK(dp_rd_done(&rd));
  CHECK_EQ(dst->nrows, 23);
  for (int c = 0; c < 3; c++) CHECK(same_rows(dst->cols[c], 3, src->cols[c], 5, 20));
  for (size_t len = 0; len < buf.len; len++) {
    dp_rd_init(&rd, buf.data, len);
    CHECK_EQ(dp_batch_decode(&rd, dst), DIPPER_CORRUPT);
    CHECK_EQ(dst->nrows, 23);
    for (int c = 0; c < 3; c++) CHECK_EQ(dst->cols[c]->length, 23);
  }
  dp_buf_free(&buf);
  dp_batch_free(dst);
  dp_batch_free(src);
}

/* --seeds DIR: the fuzz corpus, one encoding per file, its first byte the
** type fuzz_vector_codec.c decodes it into (that file's type list). */
static int write_seeds(const char *dir) {
  static const int fuzz_types[] = {5, 9, 12, 13, 14, 15, 16, 1};
  int written = 0;
  for (int k = 0; k < 8; k++)
    for (int which = 0; which < 2; which++) {
      dp_vector *v = make(type_at(fuzz_types[k]), which ? 9 : 3, which ? 30 : 0);
      dp_buf b = DP_BUF_INIT;
      dp_buf_putc(&b, (char)k);
      dp_vector_encode(v, which, v->length - which, &b);
      char path[4096];
      snprintf(path, sizeof path, "%s/type%d-%d.bin", dir, k, which);
      FILE *f = fopen(path, "wb");
      if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) return 1;
      dp_buf_free(&b);
      dp_vector_free(v);
      written++;
    }
  printf("%d seeds written to %s\n", written, dir);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--seeds") == 0) return write_seeds(argv[2]);
  int rc = RUN_TESTS();
  dp_arena_free(A);
  return rc;
}
