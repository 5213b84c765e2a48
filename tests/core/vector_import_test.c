/*
** vector_import_test.c — Arrow C Data arrays into vectors and batches
** (core/vector_import.c): exports of every type come back equal, slices at
** every bit offset and appends after earlier rows keep their values and
** nulls, large offsets are narrowed, and formats that do not fit the type are
** refused with a message naming the column.
*/
#include <stdlib.h>
#include <string.h>

#include "core/vector.h"
#include "core/vector_import.h"
#include "spark/arrow/render.h"
#include "test.h"

typedef struct fixture {
  dp_arena *arena;
  dp_schema *schema;
  dp_batch *batch;
} fixture;

/* Every type dipper exports, nulls in each column, `rows` rows. */
static fixture make(int rows) {
  fixture f;
  f.arena = dp_arena_new(0);
  dp_arena *a = f.arena;
  dp_field rf[2] = {{"a", dp_type_of(DP_T_BIGINT)}, {"b", dp_type_of(DP_T_STRING)}};
  const dp_type *types[] = {
      dp_type_of(DP_T_BOOLEAN),   dp_type_of(DP_T_TINYINT),  dp_type_of(DP_T_SMALLINT),
      dp_type_of(DP_T_INT),       dp_type_of(DP_T_BIGINT),   dp_type_of(DP_T_FLOAT),
      dp_type_of(DP_T_DOUBLE),    dp_type_decimal(a, 30, 4), dp_type_of(DP_T_STRING),
      dp_type_of(DP_T_BYTES),     dp_type_of(DP_T_DATE),     dp_type_of(DP_T_TIME),
      dp_type_of(DP_T_TIMESTAMP), dp_type_of(DP_T_TIMESTAMP_LTZ), dp_type_of(DP_T_INTERVAL_DT),
      dp_type_of(DP_T_INTERVAL_YM), dp_type_array(a, dp_type_of(DP_T_INT)), dp_type_row(a, 2, rf),
      dp_type_map(a, dp_type_of(DP_T_STRING), dp_type_of(DP_T_DOUBLE)), dp_type_of(DP_T_NULL),
  };
  int nt = (int)(sizeof types / sizeof types[0]);
  f.schema = dp_schema_new(a, nt);
  for (int i = 0; i < nt; i++) {
    f.schema->cols[i].name = dp_arena_printf(a, "c%d", i);
    f.schema->cols[i].type = types[i];
  }
  f.batch = dp_batch_new(f.schema, 0);
  for (int k = 0; k < rows; k++)
    for (int c = 0; c < nt; c++) {
      dp_vector *v = f.batch->cols[c];
      if ((k * 7 + c) % 6 == 0 || types[c]->kind == DP_T_NULL) {
        dp_vector_append_null(v);
        continue;
      }
      char s[32];
      int n = snprintf(s, sizeof s, "r%d.%d", k, c);
      switch (types[c]->kind) {
      case DP_T_BOOLEAN: dp_vector_append_bool(v, k % 3 == 1); break;
      case DP_T_FLOAT:
      case DP_T_DOUBLE: dp_vector_append_f64(v, k / 4.0 - 2); break;
      case DP_T_DECIMAL: dp_vector_append_dec(v, (dp_i128)k * 123456789012345 - 99); break;
      case DP_T_STRING:
      case DP_T_BYTES: dp_vector_append_str(v, s, (size_t)(k % 5 ? n : 0)); break;
      case DP_T_ARRAY:
        for (int e = 0; e < k % 4; e++)
          if (e == 2) dp_vector_append_null(v->children[0]);
          else dp_vector_append_i64(v->children[0], k + e);
        dp_vector_append_list(v);
        break;
      case DP_T_ROW:
        if (k % 4) dp_vector_append_i64(v->children[0], k);
        else dp_vector_append_null(v->children[0]);
        dp_vector_append_str(v->children[1], s, (size_t)n);
        dp_vector_append_struct(v);
        break;
      case DP_T_MAP:
        for (int e = 0; e < k % 3; e++) {
          dp_vector_append_str(dp_vector_map_keys(v), e ? "y" : "x", 1);
          if (e) dp_vector_append_null(dp_vector_map_values(v));
          else dp_vector_append_f64(dp_vector_map_values(v), k * 1.5);
          dp_vector_append_struct(v->children[0]);
        }
        dp_vector_append_list(v);
        break;
      default: dp_vector_append_i64(v, (int64_t)k * 997 + c); break;
      }
    }
  dp_batch_sync(f.batch);
  return f;
}

static void drop(fixture *f) {
  dp_batch_free(f->batch);
  dp_arena_free(f->arena);
}

/* The rows of a batch, rendered through its export. */
static char *rows_of(const dp_batch *b) {
  struct ArrowSchema s;
  struct ArrowArray a;
  if (dp_batch_export(b, &s, &a)) return NULL;
  dp_buf o = DP_BUF_INIT;
  render_schema(&o, &s);
  render_batch(&o, 0, &s, &a);
  s.release(&s);
  a.release(&a);
  return dp_buf_take(&o);
}

/* The rows [off, off+len) of an export, rendered the same way. */
static char *rows_of_slice(const struct ArrowSchema *s, struct ArrowArray *a, int64_t off, int64_t len) {
  int64_t o0 = a->offset, l0 = a->length;
  a->offset = off;
  a->length = len;
  dp_buf o = DP_BUF_INIT;
  render_batch(&o, 0, s, a);
  a->offset = o0;
  a->length = l0;
  return dp_buf_take(&o);
}

TEST(exports_import_back_equal) {
  int sizes[] = {0, 1, 9, 100, 1000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    fixture f = make(sizes[i]);
    struct ArrowSchema s;
    struct ArrowArray a;
    CHECK_EQ(dp_batch_export(f.batch, &s, &a), DIPPER_OK);
    dp_batch *back = dp_batch_new(f.schema, 0);
    dp_buf err = DP_BUF_INIT;
    CHECK_EQ(dp_batch_import(back, &s, &a, &err), DIPPER_OK);
    CHECK_EQ(back->nrows, sizes[i]);
    for (int c = 0; c < back->ncols; c++) {
      CHECK_EQ(back->cols[c]->length, sizes[i]);
      CHECK_EQ(back->cols[c]->null_count, f.batch->cols[c]->null_count);
    }
    char *want = rows_of(f.batch), *got = rows_of(back);
    CHECK(want && got);
    if (want && got) CHECK_STR(got, want);
    free(want);
    free(got);
    dp_buf_free(&err);
    s.release(&s);
    a.release(&a);
    dp_batch_free(back);
    drop(&f);
  }
}

TEST(slices_append_after_earlier_rows) {
  fixture f = make(200);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_batch_export(f.batch, &s, &a), DIPPER_OK);
  /* slices at every bit offset, appended one after another (so that each
  ** lands at a different bit position of the vectors too) */
  dp_batch *back = dp_batch_new(f.schema, 0);
  dp_buf want = DP_BUF_INIT;
  int64_t total = 0;
  for (int64_t off = 0; off < 24; off += 5) {
    int64_t len = 13 + off;
    a.offset = off;
    a.length = len;
    CHECK_EQ(dp_batch_import(back, &s, &a, NULL), DIPPER_OK);
    char *part = rows_of_slice(&s, &a, off, len);
    dp_buf_puts(&want, strchr(part, '\n') + 1); /* rows without the batch line */
    free(part);
    total += len;
  }
  a.offset = 0;
  a.length = 200;
  CHECK_EQ(back->nrows, total);
  char *got = rows_of(back);
  const char *rows = got ? strstr(got, "rows ") : NULL;
  rows = rows ? strchr(rows, '\n') + 1 : "";
  CHECK_STR(rows, dp_buf_cstr(&want));
  free(got);
  dp_buf_free(&want);
  dp_batch_free(back);
  s.release(&s);
  a.release(&a);
  drop(&f);
}

TEST(a_column_alone_and_child_offsets) {
  fixture f = make(50);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_batch_export(f.batch, &s, &a), DIPPER_OK);
  for (int c = 0; c < f.batch->ncols; c++) {
    dp_vector *v = dp_vector_new(f.schema->cols[c].type, 0);
    struct ArrowArray *col = a.children[c];
    col->offset = 11;
    col->length = 50 - 11;
    CHECK_EQ(dp_vector_import(v, s.children[c], col, NULL), DIPPER_OK);
    CHECK_EQ(v->length, 39);
    dp_arena *tmp = dp_arena_new(0);
    for (int64_t r = 0; r < 39; r++) {
      dp_value x, y;
      CHECK(dp_vector_get_value(tmp, v, r, &x) && dp_vector_get_value(tmp, f.batch->cols[c], r + 11, &y));
      CHECK(x.is_null == y.is_null);
      if (!x.is_null && f.schema->cols[c].type->kind < DP_T_ROW) CHECK_EQ(dp_value_compare(&x, &y), 0);
    }
    dp_arena_free(tmp);
    col->offset = 0;
    col->length = 50;
    dp_vector_free(v);
  }
  s.release(&s);
  a.release(&a);
  drop(&f);
}

TEST(large_offsets_narrow) {
  /* a "U" array built by hand: int64 offsets */
  int64_t offsets[] = {0, 3, 3, 8};
  const char *data = "abcdefgh";
  uint8_t valid = 0x5; /* rows 0 and 2 valid */
  const void *bufs[3] = {&valid, offsets, data};
  struct ArrowSchema s = {0};
  s.format = "U";
  struct ArrowArray a = {0};
  a.length = 3;
  a.null_count = 1;
  a.n_buffers = 3;
  a.buffers = bufs;
  a.release = (void (*)(struct ArrowArray *))(void (*)(void))abort; /* set, never called */
  dp_vector *v = dp_vector_new(dp_type_of(DP_T_STRING), 0);
  dp_vector_append_str(v, "zz", 2);
  CHECK_EQ(dp_vector_import(v, &s, &a, NULL), DIPPER_OK);
  CHECK_EQ(v->length, 4);
  CHECK_EQ(v->null_count, 1);
  size_t n;
  const char *p = dp_vector_get_str(v, 1, &n);
  CHECK(n == 3 && memcmp(p, "abc", 3) == 0);
  CHECK(dp_vector_is_null(v, 2));
  p = dp_vector_get_str(v, 3, &n);
  CHECK(n == 5 && memcmp(p, "defgh", 5) == 0);
  CHECK(!dp_vector_is_null(v, 0));
  dp_vector_free(v);
}

TEST(formats_that_do_not_fit_are_refused) {
  fixture f = make(3);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_batch_export(f.batch, &s, &a), DIPPER_OK);
  dp_batch *back = dp_batch_new(f.schema, 0);
  dp_buf err = DP_BUF_INIT;
  const char *saved = s.children[4]->format;
  s.children[4]->format = "i";
  CHECK_EQ(dp_batch_import(back, &s, &a, &err), DIPPER_TYPE);
  CHECK_CONTAINS(dp_buf_cstr(&err), "column 'c4': Arrow format 'i' does not fit BIGINT (expected 'l')");
  CHECK_EQ(back->nrows, 0);
  for (int c = 0; c < back->ncols; c++) CHECK_EQ(back->cols[c]->length, 0); /* nothing appended */
  s.children[4]->format = saved;
  dp_buf_free(&err);
  /* decimal: the scale must agree, the precision may be smaller */
  CHECK_EQ(dp_arrow_check_type(dp_type_decimal(f.arena, 30, 4), &(struct ArrowSchema){.format = "d:12,4"}, "x", NULL), DIPPER_OK);
  CHECK_EQ(dp_arrow_check_type(dp_type_decimal(f.arena, 30, 4), &(struct ArrowSchema){.format = "d:12,2"}, "x", NULL), DIPPER_TYPE);
  CHECK_EQ(dp_arrow_check_type(dp_type_decimal(f.arena, 10, 4), &(struct ArrowSchema){.format = "d:12,4"}, "x", NULL), DIPPER_TYPE);
  /* timestamps: a zone makes it TIMESTAMP_LTZ, whichever zone */
  CHECK_EQ(dp_arrow_check_type(dp_type_of(DP_T_TIMESTAMP_LTZ), &(struct ArrowSchema){.format = "tsu:America/New_York"}, "x", NULL), DIPPER_OK);
  CHECK_EQ(dp_arrow_check_type(dp_type_of(DP_T_TIMESTAMP), &(struct ArrowSchema){.format = "tsu:UTC"}, "x", NULL), DIPPER_TYPE);
  CHECK_EQ(dp_arrow_check_type(dp_type_of(DP_T_TIMESTAMP_LTZ), &(struct ArrowSchema){.format = "tsu:"}, "x", NULL), DIPPER_TYPE);
  CHECK_EQ(dp_arrow_check_type(dp_type_of(DP_T_TIMESTAMP), &(struct ArrowSchema){.format = "tsn:"}, "x", NULL), DIPPER_TYPE);
  /* a column count that differs */
  s.n_children--;
  CHECK_EQ(dp_batch_import(back, &s, &a, &err), DIPPER_TYPE);
  CHECK_CONTAINS(dp_buf_cstr(&err), "does not fit a schema of 20 columns");
  s.n_children++;
  dp_buf_free(&err);
  dp_batch_free(back);
  s.release(&s);
  a.release(&a);
  drop(&f);
}

int main(void) { return RUN_TESTS(); }
