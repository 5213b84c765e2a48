/*
** arrow_ipc_test.c — the Arrow IPC decoder and encoder (src/spark/arrow_ipc.c),
** offline.
**
** - Every fixture of tests/spark/arrow/ (written by pyarrow through gen.py:
**   each type, nulls, empty and sliced batches, nested list<struct<map>>,
**   LZ4 and ZSTD bodies, several batches, no end-of-stream marker) decodes to
**   exactly its expected-values file.
** - Truncations of every fixture, and three byte-flipped variants at each
**   position (every byte of the first 2 KiB, then a stride), decode to an error or to arrays whose every value can be
**   read (ASan watches the reads).
** - dp_batch_export output of every dipper type, encoded and decoded, renders
**   the same as the input, also when the input array is a slice.
**
**   test_spark_arrow_ipc_test --write FILE   writes the encoded round-trip batch
**   to FILE (to check with pyarrow: pyarrow.ipc.open_stream(FILE).read_all()).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vector.h"
#include "core/vector_import.h"
#include "spark/arrow/render.h"
#include "spark/arrow_ipc.h"
#include "test.h"

#define FIXTURES DIPPER_SOURCE_DIR "/tests/spark/arrow/"

static const char *const fixtures[] = {
    "primitives", "strings", "temporal", "decimal", "nested", "nulls", "empty",
    "schema_only", "sliced", "lz4", "zstd", "multi", "no_eos",
};
#define NFIXTURES (sizeof fixtures / sizeof fixtures[0])

static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc(n > 0 ? (size_t)n + 1 : 1);
  if (p && n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  if (p) p[n > 0 ? n : 0] = 0;
  fclose(f);
  *len = n > 0 ? (size_t)n : 0;
  return p;
}

static uint8_t *fixture(const char *name, const char *ext, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, FIXTURES "%s.%s", name, ext);
  uint8_t *p = read_file(path, len);
  if (!p) fprintf(stderr, "cannot read %s\n", path);
  return p;
}

static void render_all(dp_buf *o, const dp_arrow_batches *b) {
  render_schema(o, &b->schema);
  for (int i = 0; i < b->n; i++) render_batch(o, i, &b->schema, &b->arrays[i]);
}

/* Print the first line where two texts differ. */
static void show_diff(const char *name, const char *got, const char *want) {
  int line = 1;
  const char *g = got, *w = want;
  while (*g && *g == *w) {
    if (*g == '\n') line++;
    g++;
    w++;
  }
  const char *gs = g, *ws = w;
  while (gs > got && gs[-1] != '\n') gs--;
  while (ws > want && ws[-1] != '\n') ws--;
  fprintf(stderr, "%s: line %d differs\n  got:  %.*s\n  want: %.*s\n", name, line,
          (int)strcspn(gs, "\n"), gs, (int)strcspn(ws, "\n"), ws);
}

TEST(fixtures_decode_to_their_expected_values) {
  for (size_t i = 0; i < NFIXTURES; i++) {
    size_t len, tlen;
    uint8_t *data = fixture(fixtures[i], "arrows", &len);
    char *want = (char *)fixture(fixtures[i], "txt", &tlen);
    CHECK(data && want);
    if (!data || !want) {
      free(data);
      free(want);
      continue;
    }
    dp_arrow_batches b;
    dp_buf err = DP_BUF_INIT;
    int rc = dp_arrow_ipc_decode(data, len, &b, &err);
    if (rc) fprintf(stderr, "%s: %s\n", fixtures[i], dp_buf_cstr(&err));
    CHECK_EQ(rc, DIPPER_OK);
    dp_buf got = DP_BUF_INIT;
    render_all(&got, &b);
    int64_t rows = 0;
    for (int k = 0; k < b.n; k++) rows += b.arrays[k].length;
    CHECK_EQ(b.rows, rows);
    bool same = strcmp(dp_buf_cstr(&got), want) == 0;
    if (!same) show_diff(fixtures[i], dp_buf_cstr(&got), want);
    CHECK(same);
    dp_arrow_batches_free(&b);
    dp_buf_free(&got);
    dp_buf_free(&err);
    free(data);
    free(want);
  }
}

TEST(compressed_fixtures_are_compressed) {
  /* the LZ4 and ZSTD fixtures must really exercise decompression: their
  ** record batch carries a BodyCompression table, so they differ from a plain
  ** encoding and are smaller than the rendering suggests */
  size_t l4, zs;
  uint8_t *a = fixture("lz4", "arrows", &l4), *b = fixture("zstd", "arrows", &zs);
  CHECK(a && b && l4 != zs);
  free(a);
  free(b);
}

/* Decode and, on success, read every value; returns the code. */
static int decode_and_touch(const uint8_t *data, size_t len, int64_t *rows) {
  dp_arrow_batches b;
  dp_buf err = DP_BUF_INIT;
  int rc = dp_arrow_ipc_decode(data, len, &b, &err);
  if (rc == DIPPER_OK) {
    dp_buf out = DP_BUF_INIT;
    render_all(&out, &b);
    *rows += b.rows;
    dp_buf_free(&out);
    dp_arrow_batches_free(&b);
  } else {
    /* an error always says what */
    if (rc == DIPPER_PROTOCOL && err.len == 0) rc = -1;
  }
  dp_buf_free(&err);
  return rc;
}

TEST(truncations_fail_cleanly_or_decode) {
  for (size_t i = 0; i < NFIXTURES; i++) {
    size_t len;
    uint8_t *data = fixture(fixtures[i], "arrows", &len);
    if (!data) continue;
    int errors = 0, unexplained = 0;
    int64_t rows = 0;
    /* every cut inside the first 2 KiB (all the metadata of the small
    ** fixtures), then every 61st: the big bodies repeat themselves */
    for (size_t n = 0; n < len; n += n < 2048 ? 1 : 61) {
      /* a copy of exactly n bytes, so ASan sees any read past the end */
      uint8_t *cut = malloc(n ? n : 1);
      memcpy(cut, data, n);
      int rc = decode_and_touch(cut, n, &rows);
      if (rc != DIPPER_OK) errors++;
      if (rc != DIPPER_OK && rc != DIPPER_PROTOCOL) unexplained++;
      free(cut);
    }
    CHECK(errors > 0);
    CHECK_EQ(unexplained, 0);
    free(data);
  }
}

TEST(flipped_bytes_fail_cleanly_or_decode) {
  static const uint8_t flips[] = {0x01, 0x80, 0xFF};
  int64_t rows = 0;
  int errors = 0, decoded = 0;
  for (size_t i = 0; i < NFIXTURES; i++) {
    size_t len;
    uint8_t *data = fixture(fixtures[i], "arrows", &len);
    if (!data) continue;
    uint8_t *copy = malloc(len);
    for (size_t p = 0; p < len; p += p < 2048 ? 1 : 13)
      for (size_t f = 0; f < sizeof flips; f++) {
        memcpy(copy, data, len);
        copy[p] ^= flips[f];
        int rc = decode_and_touch(copy, len, &rows);
        CHECK(rc == DIPPER_OK || rc == DIPPER_PROTOCOL);
        if (rc) errors++;
        else decoded++;
      }
    free(copy);
    free(data);
  }
  /* both outcomes happen: metadata flips fail, data flips decode */
  CHECK(errors > 0 && decoded > 0);
}

TEST(bad_streams_say_what_is_wrong) {
  dp_arrow_batches b;
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(dp_arrow_ipc_decode((const uint8_t *)"", 0, &b, &err), DIPPER_PROTOCOL);
  CHECK_CONTAINS(dp_buf_cstr(&err), "no schema");
  CHECK(b.n == 0 && b.arrays == NULL && b.schema.release == NULL);
  dp_buf_free(&err);
  /* a record batch without the schema message before it */
  size_t len;
  uint8_t *data = fixture("primitives", "arrows", &len);
  if (data) {
    int32_t mlen;
    memcpy(&mlen, data + 4, 4);
    size_t skip = 8 + (size_t)mlen; /* the schema message has no body */
    CHECK_EQ(dp_arrow_ipc_decode(data + skip, len - skip, &b, &err), DIPPER_PROTOCOL);
    CHECK_CONTAINS(dp_buf_cstr(&err), "before the schema");
    dp_buf_free(&err);
    /* two schemas */
    uint8_t *twice = malloc(len + skip);
    memcpy(twice, data, skip);
    memcpy(twice + skip, data, len);
    CHECK_EQ(dp_arrow_ipc_decode(twice, len + skip, &b, &err), DIPPER_PROTOCOL);
    CHECK_CONTAINS(dp_buf_cstr(&err), "second schema");
    dp_buf_free(&err);
    /* a metadata length beyond the end */
    uint8_t *bad = malloc(len);
    memcpy(bad, data, len);
    int32_t huge = 0x7FFFFFF0;
    memcpy(bad + 4, &huge, 4);
    CHECK_EQ(dp_arrow_ipc_decode(bad, len, &b, &err), DIPPER_PROTOCOL);
    CHECK_CONTAINS(dp_buf_cstr(&err), "Arrow IPC message 0: metadata length");
    dp_buf_free(&err);
    free(bad);
    free(twice);
    free(data);
  }
}

/* ---- round trips of dipper's own batches ---- */

typedef struct rt_batch {
  dp_arena *arena;
  dp_schema *schema;
  dp_batch *batch;
} rt_batch;

/* A batch of every dipper type that exports, with nulls in each column. */
static rt_batch make_batch(int rows) {
  rt_batch r;
  r.arena = dp_arena_new(0);
  dp_arena *a = r.arena;
  const dp_type *arr_int = dp_type_array(a, dp_type_of(DP_T_INT));
  dp_field rf[2] = {{"a", dp_type_of(DP_T_BIGINT)}, {"b", dp_type_of(DP_T_STRING)}};
  const dp_type *row = dp_type_row(a, 2, rf);
  const dp_type *map = dp_type_map(a, dp_type_of(DP_T_STRING), dp_type_array(a, dp_type_of(DP_T_BIGINT)));
  const dp_type *types[] = {
      dp_type_of(DP_T_BOOLEAN), dp_type_of(DP_T_TINYINT),     dp_type_of(DP_T_SMALLINT),
      dp_type_of(DP_T_INT),     dp_type_of(DP_T_BIGINT),      dp_type_of(DP_T_FLOAT),
      dp_type_of(DP_T_DOUBLE),  dp_type_decimal(a, 20, 3),    dp_type_of(DP_T_STRING),
      dp_type_of(DP_T_BYTES),   dp_type_of(DP_T_DATE),        dp_type_of(DP_T_TIME),
      dp_type_of(DP_T_TIMESTAMP), dp_type_of(DP_T_TIMESTAMP_LTZ), dp_type_of(DP_T_INTERVAL_DT),
      dp_type_of(DP_T_INTERVAL_YM), arr_int, row, map,
  };
  int nt = (int)(sizeof types / sizeof types[0]);
  r.schema = dp_schema_new(a, nt);
  for (int i = 0; i < nt; i++) {
    r.schema->cols[i].name = dp_arena_printf(a, "c%d", i);
    r.schema->cols[i].type = types[i];
  }
  r.batch = dp_batch_new(r.schema, 0);
  for (int k = 0; k < rows; k++)
    for (int c = 0; c < nt; c++) {
      dp_vector *v = r.batch->cols[c];
      if ((k + c) % 5 == 0) {
        dp_vector_append_null(v);
        continue;
      }
      char s[32];
      int n = snprintf(s, sizeof s, "v%d-%d", k, c * k);
      switch (types[c]->kind) {
      case DP_T_BOOLEAN: dp_vector_append_bool(v, k % 3 == 0); break;
      case DP_T_FLOAT:
      case DP_T_DOUBLE: dp_vector_append_f64(v, k * 0.5 - 3); break;
      case DP_T_DECIMAL: dp_vector_append_dec(v, (dp_i128)k * 1000000007 - 5); break;
      case DP_T_STRING:
      case DP_T_BYTES: dp_vector_append_str(v, s, (size_t)n); break;
      case DP_T_ARRAY:
        for (int e = 0; e < k % 4; e++)
          if (e == 1) dp_vector_append_null(v->children[0]);
          else dp_vector_append_i64(v->children[0], k * 10 + e);
        dp_vector_append_list(v);
        break;
      case DP_T_ROW:
        dp_vector_append_i64(v->children[0], -k);
        if (k % 3) dp_vector_append_str(v->children[1], s, (size_t)n);
        else dp_vector_append_null(v->children[1]);
        dp_vector_append_struct(v);
        break;
      case DP_T_MAP:
        for (int e = 0; e < k % 3; e++) {
          char key[16];
          int kn = snprintf(key, sizeof key, "k%d", e);
          dp_vector_append_str(dp_vector_map_keys(v), key, (size_t)kn);
          dp_vector *vals = dp_vector_map_values(v);
          if (e == 1) {
            dp_vector_append_null(vals);
          } else {
            dp_vector_append_i64(vals->children[0], k);
            dp_vector_append_list(vals);
          }
          dp_vector_append_struct(v->children[0]);
        }
        dp_vector_append_list(v);
        break;
      case DP_T_TIME: dp_vector_append_i64(v, (int64_t)k * 1000 + c); break; /* in [0, 1 day) */
      default: dp_vector_append_i64(v, (int64_t)k * 1000 - 77 + c); break;
      }
    }
  dp_batch_sync(r.batch);
  return r;
}

static void free_batch(rt_batch *r) {
  dp_batch_free(r->batch);
  dp_arena_free(r->arena);
}

/* Encode (schema, array), decode, and compare the renderings. */
static void check_round_trip(const struct ArrowSchema *s, const struct ArrowArray *a) {
  dp_buf ipc = DP_BUF_INIT, err = DP_BUF_INIT;
  int rc = dp_arrow_ipc_encode(s, a, &ipc, &err);
  if (rc) fprintf(stderr, "encode: %s\n", dp_buf_cstr(&err));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(ipc.len % 8, 0);
  dp_arrow_batches b;
  rc = dp_arrow_ipc_decode((const uint8_t *)ipc.data, ipc.len, &b, &err);
  if (rc) fprintf(stderr, "decode: %s\n", dp_buf_cstr(&err));
  CHECK_EQ(rc, DIPPER_OK);
  if (rc == DIPPER_OK) {
    dp_buf want = DP_BUF_INIT, got = DP_BUF_INIT;
    render_schema(&want, s);
    render_batch(&want, 0, s, a);
    render_all(&got, &b);
    CHECK_EQ(b.n, 1);
    bool same = strcmp(dp_buf_cstr(&got), dp_buf_cstr(&want)) == 0;
    if (!same) show_diff("round trip", dp_buf_cstr(&got), dp_buf_cstr(&want));
    CHECK(same);
    dp_buf_free(&want);
    dp_buf_free(&got);
    dp_arrow_batches_free(&b);
  }
  dp_buf_free(&ipc);
  dp_buf_free(&err);
}

TEST(dipper_batches_round_trip) {
  int sizes[] = {0, 1, 7, 64, 1000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    rt_batch r = make_batch(sizes[i]);
    struct ArrowSchema s;
    struct ArrowArray a;
    CHECK_EQ(dp_batch_export(r.batch, &s, &a), DIPPER_OK);
    check_round_trip(&s, &a);
    s.release(&s);
    a.release(&a);
    free_batch(&r);
  }
}

TEST(sliced_arrays_round_trip) {
  rt_batch r = make_batch(100);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_batch_export(r.batch, &s, &a), DIPPER_OK);
  /* offsets at every bit position of a byte, and a child slice too */
  for (int64_t off = 0; off < 17; off += 3) {
    a.offset = off;
    a.length = 100 - off - 5;
    check_round_trip(&s, &a);
  }
  a.offset = 0;
  a.length = 40;
  a.children[8]->offset = 9; /* the STRING column alone starts later */
  check_round_trip(&s, &a);
  a.children[8]->offset = 0;
  a.length = 100;
  s.release(&s);
  a.release(&a);
  free_batch(&r);
}

TEST(decoded_children_may_move_out) {
  size_t len;
  uint8_t *data = fixture("nested", "arrows", &len);
  if (!data) return;
  dp_arrow_batches b;
  CHECK_EQ(dp_arrow_ipc_decode(data, len, &b, NULL), DIPPER_OK);
  /* move a column and its schema out, release the rest, then read it */
  struct ArrowArray col = *b.arrays[0].children[1];
  b.arrays[0].children[1]->release = NULL;
  struct ArrowSchema cs = *b.schema.children[1];
  b.schema.children[1]->release = NULL;
  dp_arrow_batches_free(&b);
  dp_buf out = DP_BUF_INIT;
  for (int64_t i = 0; i < col.length; i++) render_value(&out, &cs, &col, i);
  CHECK_CONTAINS(dp_buf_cstr(&out), "{'z': -1}");
  col.release(&col);
  cs.release(&cs);
  CHECK(col.release == NULL && cs.release == NULL);
  dp_buf_free(&out);
  free(data);
}

TEST(encoder_refuses_what_it_cannot_write) {
  rt_batch r = make_batch(3);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_batch_export(r.batch, &s, &a), DIPPER_OK);
  dp_buf out = DP_BUF_INIT, err = DP_BUF_INIT;
  const char *saved = s.children[2]->format;
  s.children[2]->format = "vu"; /* a string view: not supported */
  CHECK_EQ(dp_arrow_ipc_encode(&s, &a, &out, &err), DIPPER_UNSUPPORTED);
  CHECK_CONTAINS(dp_buf_cstr(&err), "field 'c2': Arrow format 'vu' cannot be encoded");
  s.children[2]->format = saved;
  dp_buf_free(&err);
  /* the schema alone: schema message and end-of-stream */
  out.len = 0;
  CHECK_EQ(dp_arrow_ipc_encode(&s, NULL, &out, &err), DIPPER_OK);
  dp_arrow_batches b;
  CHECK_EQ(dp_arrow_ipc_decode((const uint8_t *)out.data, out.len, &b, &err), DIPPER_OK);
  CHECK_EQ(b.n, 0);
  CHECK_EQ(b.schema.n_children, s.n_children);
  dp_arrow_batches_free(&b);
  dp_buf_free(&out);
  dp_buf_free(&err);
  s.release(&s);
  a.release(&a);
  free_batch(&r);
}

TEST(decoded_batches_import_into_dipper_vectors) {
  /* the compressed fixture as Spark would send it: BIGINT, STRING,
  ** TIMESTAMP_LTZ, DECIMAL, BOOLEAN, ARRAY<STRING> */
  size_t len;
  uint8_t *data = fixture("zstd", "arrows", &len);
  if (!data) return;
  dp_arrow_batches b;
  CHECK_EQ(dp_arrow_ipc_decode(data, len, &b, NULL), DIPPER_OK);
  dp_arena *a = dp_arena_new(0);
  const dp_type *types[] = {dp_type_of(DP_T_BIGINT), dp_type_of(DP_T_STRING),
                            dp_type_of(DP_T_TIMESTAMP_LTZ), dp_type_decimal(a, 12, 2),
                            dp_type_of(DP_T_BOOLEAN), dp_type_array(a, dp_type_of(DP_T_STRING))};
  dp_schema *schema = dp_schema_new(a, 6);
  for (int i = 0; i < 6; i++) {
    schema->cols[i].name = b.schema.children[i]->name;
    schema->cols[i].type = types[i];
  }
  dp_batch *batch = dp_batch_new(schema, 0);
  dp_buf err = DP_BUF_INIT;
  for (int i = 0; i < b.n; i++) CHECK_EQ(dp_batch_import(batch, &b.schema, &b.arrays[i], &err), DIPPER_OK);
  CHECK_EQ(batch->nrows, 300);
  /* the same rendering through dipper's export */
  struct ArrowSchema s;
  struct ArrowArray arr;
  CHECK_EQ(dp_batch_export(batch, &s, &arr), DIPPER_OK);
  dp_buf got = DP_BUF_INIT, want = DP_BUF_INIT;
  render_batch(&got, 0, &s, &arr);
  render_batch(&want, 0, &b.schema, &b.arrays[0]);
  CHECK_STR(dp_buf_cstr(&got), dp_buf_cstr(&want));
  CHECK_EQ(batch->cols[0]->null_count, 28); /* ids: every 11th row is null */
  /* and the wrong dipper type for a column is named */
  schema->cols[1].type = dp_type_of(DP_T_BIGINT);
  dp_batch *wrong = dp_batch_new(schema, 0);
  CHECK_EQ(dp_batch_import(wrong, &b.schema, &b.arrays[0], &err), DIPPER_TYPE);
  CHECK_CONTAINS(dp_buf_cstr(&err), "column 'name': Arrow format 'u' does not fit BIGINT");
  dp_batch_free(wrong);
  s.release(&s);
  arr.release(&arr);
  dp_buf_free(&got);
  dp_buf_free(&want);
  dp_buf_free(&err);
  dp_batch_free(batch);
  dp_arena_free(a);
  dp_arrow_batches_free(&b);
  free(data);
}

static int write_encoded(const char *path) {
  rt_batch r = make_batch(50);
  struct ArrowSchema s;
  struct ArrowArray a;
  dp_buf ipc = DP_BUF_INIT, err = DP_BUF_INIT;
  int rc = dp_batch_export(r.batch, &s, &a);
  if (!rc) rc = dp_arrow_ipc_encode(&s, &a, &ipc, &err);
  FILE *f = rc ? NULL : fopen(path, "wb");
  if (f) {
    fwrite(ipc.data, 1, ipc.len, f);
    fclose(f);
  }
  if (!rc) {
    dp_buf txt = DP_BUF_INIT;
    render_schema(&txt, &s);
    render_batch(&txt, 0, &s, &a);
    fputs(dp_buf_cstr(&txt), stdout);
    dp_buf_free(&txt);
    s.release(&s);
    a.release(&a);
  }
  if (rc) fprintf(stderr, "encode failed: %s\n", dp_buf_cstr(&err));
  dp_buf_free(&ipc);
  dp_buf_free(&err);
  free_batch(&r);
  return rc || !f;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--write") == 0) return write_encoded(argv[2]);
  return RUN_TESTS();
}
