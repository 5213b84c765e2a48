/*
** vector_test.c — columnar vectors: appends per layout, growth, nulls,
** composite rows, values out, batches, and the Arrow C Data export (formats,
** buffers, null counts, children, release; ASan checks that release frees
** everything).
*/
#include <stdlib.h>
#include <string.h>

#include "core/vector.h"
#include "test.h"

static dp_arena *A;

static const dp_type *T(dp_type_kind k) { return dp_type_of(k); }

/* Structural checks every exported array must pass, against its schema:
** buffer count by layout, lengths of children, monotonic offsets. */
static int expected_buffers(const char *format) {
  if (strcmp(format, "n") == 0) return 0;
  if (strcmp(format, "u") == 0 || strcmp(format, "z") == 0) return 3;
  if (strcmp(format, "+s") == 0) return 1;
  return 2; /* fixed width, boolean, "+l", "+m" */
}

static int validate(const struct ArrowSchema *s, const struct ArrowArray *a) {
  int bad = 0;
  if (!s->release || !a->release) return 1;
  if (a->n_buffers != expected_buffers(s->format)) bad++;
  if (a->n_children != s->n_children) return bad + 1;
  if (a->offset != 0 || a->null_count < 0 || a->null_count > a->length) bad++;
  if (a->null_count > 0 && a->n_buffers > 0 && a->buffers[0] == NULL) bad++;
  for (int64_t k = 1; k < a->n_buffers; k++)
    if (a->buffers[k] == NULL) bad++;
  bool is_list = strcmp(s->format, "+l") == 0 || strcmp(s->format, "+m") == 0;
  bool is_var = a->n_buffers == 3;
  if (is_list || is_var) {
    const int32_t *off = a->buffers[1];
    if (off[0] != 0) bad++;
    for (int64_t i = 0; i < a->length; i++)
      if (off[i + 1] < off[i]) bad++;
    if (is_list && a->children[0]->length < off[a->length]) bad++;
  }
  if (strcmp(s->format, "+s") == 0)
    for (int64_t i = 0; i < a->n_children; i++)
      if (a->children[i]->length != a->length) bad++;
  for (int64_t i = 0; i < a->n_children; i++) bad += validate(s->children[i], a->children[i]);
  return bad;
}

static bool bit(const void *bits, int64_t i) { return (((const uint8_t *)bits)[i / 8] >> (i % 8)) & 1; }

TEST(append_integers_and_grow) {
  dp_vector *v = dp_vector_new(T(DP_T_BIGINT), 4);
  CHECK(v != NULL && v->phys == DP_PHYS_I64);
  for (int64_t i = 0; i < 10000; i++) CHECK_EQ(dp_vector_append_i64(v, i * 3 - 7), DIPPER_OK);
  CHECK_EQ(v->length, 10000);
  CHECK(v->capacity >= 10000);
  CHECK(v->validity == NULL && v->null_count == 0);
  CHECK_EQ(dp_vector_get_i64(v, 0), -7);
  CHECK_EQ(dp_vector_get_i64(v, 9999), 9999 * 3 - 7);
  CHECK_EQ(((int64_t *)v->values)[5000], 5000 * 3 - 7);
  /* the first null brings a bitmap with every earlier row valid */
  CHECK_EQ(dp_vector_append_null(v), DIPPER_OK);
  CHECK(v->validity != NULL);
  CHECK_EQ(v->null_count, 1);
  CHECK(!dp_vector_is_null(v, 0) && !dp_vector_is_null(v, 9999) && dp_vector_is_null(v, 10000));
  CHECK_EQ(dp_vector_append_i64(v, 1), DIPPER_OK);
  CHECK(!dp_vector_is_null(v, 10001));
  CHECK_EQ(dp_vector_get_i64(v, 10000), 0); /* null slots are zeroed */
  dp_vector_free(v);
}

TEST(every_fixed_width_layout) {
  struct {
    dp_type_kind kind;
    dp_phys phys;
    int width;
  } cases[] = {
      {DP_T_TINYINT, DP_PHYS_I8, 1},       {DP_T_SMALLINT, DP_PHYS_I16, 2},
      {DP_T_INT, DP_PHYS_I32, 4},          {DP_T_BIGINT, DP_PHYS_I64, 8},
      {DP_T_DATE, DP_PHYS_I32, 4},         {DP_T_TIME, DP_PHYS_I64, 8},
      {DP_T_TIMESTAMP, DP_PHYS_I64, 8},    {DP_T_TIMESTAMP_LTZ, DP_PHYS_I64, 8},
      {DP_T_INTERVAL_DT, DP_PHYS_I64, 8},  {DP_T_INTERVAL_YM, DP_PHYS_I32, 4},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dp_vector *v = dp_vector_new(T(cases[c].kind), 0);
    CHECK(v->phys == cases[c].phys);
    CHECK_EQ(dp_phys_width(v->phys), cases[c].width);
    for (int i = -50; i < 50; i++) dp_vector_append_i64(v, i);
    CHECK_EQ(v->length, 100);
    CHECK_EQ(dp_vector_get_i64(v, 0), -50);
    CHECK_EQ(dp_vector_get_i64(v, 99), 49);
    CHECK_EQ(dp_vector_append_f64(v, 1.0), DIPPER_MISUSE);
    CHECK_EQ(dp_vector_append_str(v, "x", 1), DIPPER_MISUSE);
    CHECK_EQ(v->length, 100);
    dp_vector_free(v);
  }
  dp_vector *f = dp_vector_new(T(DP_T_FLOAT), 0), *d = dp_vector_new(T(DP_T_DOUBLE), 0);
  dp_vector_append_f64(f, 0.5);
  dp_vector_append_f64(d, 0.1);
  CHECK(((float *)f->values)[0] == 0.5f);
  CHECK(dp_vector_get_f64(d, 0) == 0.1);
  CHECK_EQ(dp_vector_append_i64(d, 1), DIPPER_MISUSE);
  dp_vector_free(f);
  dp_vector_free(d);
  dp_vector *dec = dp_vector_new(dp_type_decimal(A, 38, 2), 0);
  dp_i128 big = (dp_i128)999999999999999999 * 1000000000 * 100000000000 + 99;
  dp_vector_append_dec(dec, big);
  dp_vector_append_dec(dec, -1);
  CHECK(dp_vector_get_dec(dec, 0) == big);
  CHECK(dp_vector_get_dec(dec, 1) == -1);
  dp_vector_free(dec);
}

TEST(booleans_are_bits) {
  dp_vector *v = dp_vector_new(T(DP_T_BOOLEAN), 0);
  for (int i = 0; i < 100; i++) dp_vector_append_bool(v, i % 3 == 0);
  dp_vector_append_null(v);
  CHECK_EQ(v->length, 101);
  CHECK(dp_vector_get_bool(v, 0) && !dp_vector_get_bool(v, 1) && dp_vector_get_bool(v, 99));
  CHECK(bit(v->values, 3) && !bit(v->values, 4));
  CHECK(dp_vector_is_null(v, 100) && !dp_vector_get_bool(v, 100));
  dp_vector_free(v);
}

TEST(strings_have_offsets_and_data) {
  dp_vector *v = dp_vector_new(T(DP_T_STRING), 2);
  CHECK_EQ(dp_vector_append_str(v, "ab", 2), DIPPER_OK);
  CHECK_EQ(dp_vector_append_str(v, "", 0), DIPPER_OK);
  CHECK_EQ(dp_vector_append_null(v), DIPPER_OK);
  CHECK_EQ(dp_vector_append_str(v, "cde", 3), DIPPER_OK);
  CHECK_EQ(v->length, 4);
  int32_t want[] = {0, 2, 2, 2, 5};
  for (int i = 0; i < 5; i++) CHECK_EQ(v->offsets[i], want[i]);
  CHECK(memcmp(v->data, "abcde", 5) == 0);
  size_t n;
  const char *s = dp_vector_get_str(v, 3, &n);
  CHECK(n == 3 && memcmp(s, "cde", 3) == 0);
  CHECK_EQ(dp_vector_append_i64(v, 1), DIPPER_MISUSE);
  /* lots of text: the data buffer grows on its own */
  char chunk[1000];
  memset(chunk, 'x', sizeof chunk);
  for (int i = 0; i < 1000; i++) CHECK_EQ(dp_vector_append_str(v, chunk, sizeof chunk), DIPPER_OK);
  CHECK_EQ(v->offsets[v->length], 5 + 1000 * 1000);
  dp_vector_free(v);
}

TEST(rows_built_bottom_up) {
  const dp_type *rt = dp_type_row(A, 2, (dp_field[]){{"id", T(DP_T_INT)}, {"name", T(DP_T_STRING)}});
  dp_vector *v = dp_vector_new(rt, 0);
  CHECK_EQ(v->nchildren, 2);
  dp_vector_append_i64(v->children[0], 7);
  CHECK_EQ(dp_vector_append_struct(v), DIPPER_MISUSE); /* "name" is missing */
  dp_vector_append_str(v->children[1], "seven", 5);
  CHECK_EQ(dp_vector_append_struct(v), DIPPER_OK);
  CHECK_EQ(dp_vector_append_null(v), DIPPER_OK); /* children get a null row too */
  CHECK_EQ(v->length, 2);
  CHECK_EQ(v->children[0]->length, 2);
  CHECK(dp_vector_is_null(v, 1) && dp_vector_is_null(v->children[1], 1));
  dp_value got;
  CHECK(dp_vector_get_value(A, v, 0, &got));
  CHECK_STR(dp_value_format(A, &got), "ROW(7, 'seven')");
  dp_vector_free(v);
}

TEST(append_value_round_trips_every_kind) {
  const dp_type *arr_t = dp_type_array(A, T(DP_T_INT));
  const dp_type *map_t = dp_type_map(A, T(DP_T_STRING), T(DP_T_BIGINT));
  const dp_type *row_t =
      dp_type_row(A, 3, (dp_field[]){{"a", arr_t}, {"m", map_t}, {"d", dp_type_decimal(A, 10, 2)}});
  dp_value ints[3] = {dp_value_int(T(DP_T_INT), 1), dp_value_null(T(DP_T_INT)),
                      dp_value_int(T(DP_T_INT), 3)};
  dp_value arr = {0};
  arr.type = arr_t;
  arr.u.list.n = 3;
  arr.u.list.items = ints;
  dp_value kv[4] = {dp_value_string("x", 1), dp_value_string("y", 1),
                    dp_value_int(T(DP_T_BIGINT), 10), dp_value_null(T(DP_T_BIGINT))};
  dp_value map = {0};
  map.type = map_t;
  map.u.list.n = 2;
  map.u.list.items = kv;
  dp_value dec;
  CHECK(dp_value_parse(A, dp_type_decimal(A, 10, 2), "12.5", 4, &dec));
  dp_value fields[3] = {arr, map, dec};
  dp_value row = {0};
  row.type = row_t;
  row.u.list.n = 3;
  row.u.list.items = fields;

  dp_vector *v = dp_vector_new(row_t, 0);
  CHECK_EQ(dp_vector_append_value(v, &row), DIPPER_OK);
  dp_value null_row = dp_value_null(row_t);
  CHECK_EQ(dp_vector_append_value(v, &null_row), DIPPER_OK);
  CHECK_EQ(dp_vector_append_value(v, &row), DIPPER_OK);
  CHECK_EQ(v->length, 3);
  dp_value got;
  CHECK(dp_vector_get_value(A, v, 0, &got));
  CHECK_STR(dp_value_format(A, &got), "ROW(ARRAY[1, NULL, 3], MAP['x', 10, 'y', NULL], 12.50)");
  CHECK(dp_vector_get_value(A, v, 1, &got) && got.is_null);
  CHECK(dp_vector_get_value(A, v, 2, &got));
  CHECK_STR(dp_value_format(A, &got), "ROW(ARRAY[1, NULL, 3], MAP['x', 10, 'y', NULL], 12.50)");
  CHECK_EQ(v->children[0]->children[0]->length, 6); /* elements of both arrays */
  CHECK_EQ(dp_vector_map_keys(v->children[1])->length, 4);
  /* a bad member leaves the vector as it was */
  dp_value wrong[3] = {arr, map, dp_value_string("no", 2)};
  row.u.list.items = wrong;
  CHECK_EQ(dp_vector_append_value(v, &row), DIPPER_MISUSE);
  CHECK_EQ(v->length, 3);
  CHECK_EQ(v->children[0]->length, 3);
  CHECK_EQ(v->children[0]->children[0]->length, 6);
  CHECK_EQ(v->children[1]->length, 3);
  CHECK_EQ(dp_vector_map_values(v->children[1])->length, 4);
  CHECK_EQ(v->children[2]->length, 3);
  dp_vector_free(v);
}

TEST(append_value_converts_numbers) {
  dp_vector *d = dp_vector_new(dp_type_decimal(A, 10, 2), 0);
  dp_value x;
  CHECK(dp_value_parse(A, dp_type_decimal(A, 10, 3), "1.005", 5, &x));
  CHECK_EQ(dp_vector_append_value(d, &x), DIPPER_OK); /* rescaled half away from zero */
  CHECK(dp_vector_get_dec(d, 0) == 101);
  dp_value i = dp_value_int(T(DP_T_INT), -3);
  CHECK_EQ(dp_vector_append_value(d, &i), DIPPER_OK);
  CHECK(dp_vector_get_dec(d, 1) == -300);
  dp_value s = dp_value_string("1", 1);
  CHECK_EQ(dp_vector_append_value(d, &s), DIPPER_MISUSE);
  dp_vector_free(d);
  dp_vector *f = dp_vector_new(T(DP_T_DOUBLE), 0);
  CHECK_EQ(dp_vector_append_value(f, &i), DIPPER_OK);
  CHECK(dp_vector_get_f64(f, 0) == -3.0);
  dp_vector_free(f);
}

TEST(clear_keeps_capacity) {
  dp_vector *v = dp_vector_new(T(DP_T_STRING), 0);
  for (int i = 0; i < 100; i++) dp_vector_append_str(v, "abc", 3);
  dp_vector_append_null(v);
  int64_t cap = v->capacity;
  dp_vector_clear(v);
  CHECK(v->length == 0 && v->null_count == 0 && v->validity == NULL && v->data_len == 0);
  CHECK_EQ(v->capacity, cap);
  dp_vector_append_str(v, "z", 1);
  size_t n;
  CHECK(memcmp(dp_vector_get_str(v, 0, &n), "z", 1) == 0 && n == 1);
  dp_vector_free(v);
}

TEST(export_int_with_nulls) {
  dp_vector *v = dp_vector_new(T(DP_T_INT), 0);
  for (int i = 0; i < 20; i++) {
    if (i % 4 == 1)
      dp_vector_append_null(v);
    else
      dp_vector_append_i64(v, i * 10);
  }
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_vector_export(v, &s, &a), DIPPER_OK);
  dp_vector_free(v); /* the export owns copies */
  CHECK_STR(s.format, "i");
  CHECK_STR(s.name, "");
  CHECK_EQ(s.flags, ARROW_FLAG_NULLABLE);
  CHECK_EQ(s.n_children, 0);
  CHECK_EQ(a.length, 20);
  CHECK_EQ(a.null_count, 5);
  CHECK_EQ(a.n_buffers, 2);
  CHECK(a.buffers[0] != NULL);
  CHECK(!bit(a.buffers[0], 1) && bit(a.buffers[0], 2) && !bit(a.buffers[0], 17) && bit(a.buffers[0], 19));
  CHECK_EQ(((const int32_t *)a.buffers[1])[19], 190);
  CHECK_EQ(validate(&s, &a), 0);
  a.release(&a);
  s.release(&s);
  CHECK(a.release == NULL && s.release == NULL);
}

TEST(export_strings_bools_decimals_without_nulls) {
  dp_vector *v = dp_vector_new(T(DP_T_STRING), 0);
  dp_vector_append_str(v, "hello", 5);
  dp_vector_append_str(v, "", 0);
  dp_vector_append_str(v, "arrow", 5);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_vector_export(v, &s, &a), DIPPER_OK);
  CHECK_STR(s.format, "u");
  CHECK_EQ(a.n_buffers, 3);
  CHECK(a.buffers[0] == NULL); /* no nulls: no bitmap */
  CHECK_EQ(a.null_count, 0);
  const int32_t *off = a.buffers[1];
  CHECK(off[0] == 0 && off[1] == 5 && off[2] == 5 && off[3] == 10);
  CHECK(memcmp(a.buffers[2], "helloarrow", 10) == 0);
  CHECK_EQ(validate(&s, &a), 0);
  /* the vector may change after the export without touching it */
  dp_vector_clear(v);
  dp_vector_append_str(v, "XXXXXXXXXX", 10);
  CHECK(memcmp(a.buffers[2], "helloarrow", 10) == 0);
  a.release(&a);
  s.release(&s);
  dp_vector_free(v);

  dp_vector *b = dp_vector_new(T(DP_T_BOOLEAN), 0);
  dp_vector_append_bool(b, true);
  dp_vector_append_bool(b, false);
  dp_vector_append_bool(b, true);
  CHECK_EQ(dp_vector_export(b, &s, &a), DIPPER_OK);
  CHECK_STR(s.format, "b");
  CHECK_EQ(a.n_buffers, 2);
  CHECK_EQ(((const uint8_t *)a.buffers[1])[0], 5);
  a.release(&a);
  s.release(&s);
  dp_vector_free(b);

  dp_vector *d = dp_vector_new(dp_type_decimal(A, 12, 3), 0);
  dp_vector_append_dec(d, 1);
  dp_vector_append_dec(d, -1);
  CHECK_EQ(dp_vector_export(d, &s, &a), DIPPER_OK);
  CHECK_STR(s.format, "d:12,3");
  const uint8_t *bytes = a.buffers[1];
  /* 128-bit little-endian two's complement */
  CHECK(bytes[0] == 1 && bytes[1] == 0 && bytes[15] == 0);
  CHECK(bytes[16] == 0xff && bytes[31] == 0xff);
  a.release(&a);
  s.release(&s);
  dp_vector_free(d);
}

TEST(export_temporal_formats_and_not_null) {
  struct {
    const dp_type *t;
    const char *format;
  } cases[] = {
      {T(DP_T_DATE), "tdD"},
      {T(DP_T_TIMESTAMP), "tsu:"},
      {T(DP_T_TIMESTAMP_LTZ), "tsu:UTC"},
      {T(DP_T_INTERVAL_DT), "tDu"},
      {T(DP_T_INTERVAL_YM), "tiM"},
      {dp_type_with_nullability(A, T(DP_T_TINYINT), true), "c"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dp_vector *v = dp_vector_new(cases[i].t, 0);
    dp_vector_append_i64(v, 42);
    struct ArrowSchema s;
    struct ArrowArray a;
    CHECK_EQ(dp_vector_export(v, &s, &a), DIPPER_OK);
    CHECK_STR(s.format, cases[i].format);
    CHECK_EQ(s.flags, cases[i].t->not_null ? 0 : ARROW_FLAG_NULLABLE);
    CHECK_EQ(validate(&s, &a), 0);
    CHECK_EQ(dp_vector_get_i64(v, 0), 42);
    a.release(&a);
    s.release(&s);
    dp_vector_free(v);
  }
}

TEST(export_null_type) {
  dp_vector *v = dp_vector_new(T(DP_T_NULL), 0);
  dp_vector_append_null(v);
  dp_vector_append_null(v);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_vector_export(v, &s, &a), DIPPER_OK);
  CHECK_STR(s.format, "n");
  CHECK_EQ(a.n_buffers, 0);
  CHECK_EQ(a.null_count, 2);
  CHECK_EQ(a.length, 2);
  a.release(&a);
  s.release(&s);
  dp_vector_free(v);
}

TEST(export_nested_types) {
  const dp_type *map_t = dp_type_map(A, T(DP_T_STRING), T(DP_T_INT));
  const dp_type *row_t = dp_type_row(
      A, 2, (dp_field[]){{"tags", dp_type_array(A, T(DP_T_STRING))}, {"attrs", map_t}});
  dp_vector *v = dp_vector_new(row_t, 0);
  dp_vector *tags = v->children[0], *attrs = v->children[1];
  /* row 0: tags ['a', 'b'], attrs {'k': 1} */
  dp_vector_append_str(tags->children[0], "a", 1);
  dp_vector_append_str(tags->children[0], "b", 1);
  CHECK_EQ(dp_vector_append_list(tags), DIPPER_OK);
  dp_vector_append_str(dp_vector_map_keys(attrs), "k", 1);
  dp_vector_append_i64(dp_vector_map_values(attrs), 1);
  CHECK_EQ(dp_vector_append_struct(attrs->children[0]), DIPPER_OK);
  CHECK_EQ(dp_vector_append_list(attrs), DIPPER_OK);
  CHECK_EQ(dp_vector_append_struct(v), DIPPER_OK);
  /* row 1: null; row 2: empty tags, null attrs */
  dp_vector_append_null(v);
  dp_vector_append_list(tags);
  dp_vector_append_null(attrs);
  CHECK_EQ(dp_vector_append_struct(v), DIPPER_OK);

  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_vector_export(v, &s, &a), DIPPER_OK);
  dp_vector_free(v);
  CHECK_EQ(validate(&s, &a), 0);
  CHECK_STR(s.format, "+s");
  CHECK_EQ(s.n_children, 2);
  CHECK_STR(s.children[0]->name, "tags");
  CHECK_STR(s.children[0]->format, "+l");
  CHECK_STR(s.children[0]->children[0]->name, "item");
  CHECK_STR(s.children[0]->children[0]->format, "u");
  CHECK_STR(s.children[1]->format, "+m");
  const struct ArrowSchema *entries = s.children[1]->children[0];
  CHECK_STR(entries->name, "entries");
  CHECK_STR(entries->format, "+s");
  CHECK_EQ(entries->flags, 0);
  CHECK_STR(entries->children[0]->name, "key");
  CHECK_EQ(entries->children[0]->flags, 0);
  CHECK_STR(entries->children[1]->name, "value");
  CHECK_EQ(entries->children[1]->flags, ARROW_FLAG_NULLABLE);
  CHECK_EQ(a.length, 3);
  CHECK_EQ(a.null_count, 1);
  CHECK_EQ(a.n_buffers, 1);
  const struct ArrowArray *tags_a = a.children[0];
  CHECK_EQ(tags_a->length, 3);
  const int32_t *toff = tags_a->buffers[1];
  CHECK(toff[0] == 0 && toff[1] == 2 && toff[2] == 2 && toff[3] == 2);
  CHECK_EQ(tags_a->children[0]->length, 2);
  const struct ArrowArray *attrs_a = a.children[1];
  CHECK_EQ(attrs_a->null_count, 2); /* the null row and the null map */
  CHECK_EQ(attrs_a->children[0]->length, 1);
  CHECK_EQ(attrs_a->children[0]->n_children, 2);
  CHECK_EQ(((const int32_t *)attrs_a->children[0]->children[1]->buffers[1])[0], 1);

  /* a consumer may move a child out; the parent then leaves it alone */
  struct ArrowArray moved = *a.children[1];
  a.children[1]->release = NULL;
  struct ArrowSchema moved_s = *s.children[1];
  s.children[1]->release = NULL;
  a.release(&a);
  s.release(&s);
  CHECK(moved.release != NULL && moved.length == 3);
  CHECK_STR(moved_s.format, "+m");
  moved.release(&moved);
  moved_s.release(&moved_s);
  CHECK(moved.release == NULL);
}

TEST(batch_export_is_a_struct_of_columns) {
  dp_schema *schema = dp_schema_new(A, 3);
  schema->cols[0] = (dp_field){"id", T(DP_T_BIGINT)};
  schema->cols[1] = (dp_field){"name", T(DP_T_STRING)};
  schema->cols[2] = (dp_field){"ts", dp_type_with_nullability(A, T(DP_T_TIMESTAMP), true)};
  dp_batch *b = dp_batch_new(schema, 0);
  CHECK(b != NULL && b->ncols == 3);
  for (int i = 0; i < 1000; i++) {
    dp_vector_append_i64(b->cols[0], i);
    if (i % 10 == 0)
      dp_vector_append_null(b->cols[1]);
    else
      dp_vector_append_str(b->cols[1], "n", 1);
    dp_vector_append_i64(b->cols[2], (int64_t)i * 1000);
  }
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_batch_export(b, &s, &a), DIPPER_MISUSE); /* nrows not synced yet */
  CHECK(s.release == NULL && a.release == NULL);
  CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  CHECK_EQ(b->nrows, 1000);
  CHECK_EQ(dp_batch_export(b, &s, &a), DIPPER_OK);
  CHECK_STR(s.format, "+s");
  CHECK_EQ(s.flags, 0);
  CHECK_EQ(s.n_children, 3);
  CHECK_STR(s.children[0]->name, "id");
  CHECK_STR(s.children[0]->format, "l");
  CHECK_STR(s.children[1]->name, "name");
  CHECK_STR(s.children[2]->name, "ts");
  CHECK_STR(s.children[2]->format, "tsu:");
  CHECK_EQ(s.children[2]->flags, 0);
  CHECK_EQ(a.length, 1000);
  CHECK_EQ(a.null_count, 0);
  CHECK_EQ(a.n_buffers, 1);
  CHECK(a.buffers[0] == NULL);
  CHECK_EQ(a.children[1]->null_count, 100);
  CHECK_EQ(((const int64_t *)a.children[2]->buffers[1])[999], 999000);
  CHECK_EQ(validate(&s, &a), 0);
  dp_batch_free(b);
  a.release(&a);
  s.release(&s);
  /* columns of different lengths cannot be synced */
  b = dp_batch_new(schema, 0);
  dp_vector_append_i64(b->cols[0], 1);
  CHECK_EQ(dp_batch_sync(b), DIPPER_MISUSE);
  dp_batch_clear(b);
  CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  CHECK_EQ(b->nrows, 0);
  CHECK_EQ(dp_batch_export(b, &s, &a), DIPPER_OK); /* an empty batch exports too */
  CHECK_EQ(validate(&s, &a), 0);
  a.release(&a);
  s.release(&s);
  dp_batch_free(b);
  dp_batch_free(NULL);
  dp_vector_free(NULL);
}

TEST(move_export_hands_the_buffers_over) {
  dp_vector *v = dp_vector_new(T(DP_T_STRING), 0);
  dp_vector_append_str(v, "abc", 3);
  dp_vector_append_null(v);
  const void *data_before = v->data;
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_vector_export_move(v, &s, &a), DIPPER_OK);
  CHECK(a.buffers[2] == data_before); /* no copy */
  CHECK_EQ(a.length, 2);
  CHECK_EQ(a.null_count, 1);
  CHECK(!bit(a.buffers[0], 1) && bit(a.buffers[0], 0));
  CHECK_EQ(validate(&s, &a), 0);
  CHECK(v->length == 0 && v->capacity == 0 && v->data == NULL && v->validity == NULL);
  /* the emptied vector takes new rows and exports again, even when empty */
  struct ArrowSchema s2;
  struct ArrowArray a2;
  CHECK_EQ(dp_vector_export_move(v, &s2, &a2), DIPPER_OK);
  CHECK_EQ(a2.length, 0);
  CHECK_EQ(((const int32_t *)a2.buffers[1])[0], 0);
  a2.release(&a2);
  s2.release(&s2);
  CHECK_EQ(dp_vector_append_str(v, "xy", 2), DIPPER_OK);
  CHECK_EQ(v->length, 1);
  /* a moved-out list vector rejects a bad value cleanly */
  dp_vector *l = dp_vector_new(dp_type_array(A, T(DP_T_INT)), 0);
  dp_vector_append_list(l);
  CHECK_EQ(dp_vector_export_move(l, &s2, &a2), DIPPER_OK);
  a2.release(&a2);
  s2.release(&s2);
  dp_value bad_items[2] = {dp_value_int(T(DP_T_INT), 1), dp_value_string("x", 1)};
  dp_value bad = {0};
  bad.type = l->type;
  bad.u.list.n = 2;
  bad.u.list.items = bad_items;
  CHECK_EQ(dp_vector_append_value(l, &bad), DIPPER_MISUSE);
  CHECK(l->length == 0 && l->children[0]->length == 0);
  bad.u.list.n = 1;
  CHECK_EQ(dp_vector_append_value(l, &bad), DIPPER_OK);
  CHECK(l->length == 1 && l->children[0]->length == 1);
  dp_vector_free(l);
  CHECK(memcmp(a.buffers[2], "abc", 3) == 0); /* the export is untouched */
  a.release(&a);
  s.release(&s);
  dp_vector_free(v);
}

TEST(move_export_of_a_nested_batch) {
  const dp_type *row_t = dp_type_row(
      A, 2, (dp_field[]){{"xs", dp_type_array(A, T(DP_T_DOUBLE))}, {"flag", T(DP_T_BOOLEAN)}});
  dp_schema *schema = dp_schema_new(A, 2);
  schema->cols[0] = (dp_field){"k", T(DP_T_INT)};
  schema->cols[1] = (dp_field){"r", row_t};
  dp_batch *b = dp_batch_new(schema, 2);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 50; i++) {
      dp_vector_append_i64(b->cols[0], i);
      dp_vector *r = b->cols[1];
      for (int k = 0; k < i % 3; k++) dp_vector_append_f64(r->children[0]->children[0], k * 0.5);
      dp_vector_append_list(r->children[0]);
      dp_vector_append_bool(r->children[1], i % 2 == 0);
      dp_vector_append_struct(r);
    }
    CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
    struct ArrowSchema s;
    struct ArrowArray a;
    CHECK_EQ(dp_batch_export_move(b, &s, &a), DIPPER_OK);
    CHECK_EQ(b->nrows, 0);
    CHECK_EQ(b->cols[1]->children[0]->children[0]->length, 0);
    CHECK_EQ(validate(&s, &a), 0);
    CHECK_EQ(a.length, 50);
    const struct ArrowArray *xs = a.children[1]->children[0];
    CHECK_EQ(xs->children[0]->length, 49); /* 0+1+2 per three rows */
    CHECK_EQ(((const int32_t *)xs->buffers[1])[50], 49);
    CHECK_EQ(((const uint8_t *)a.children[1]->children[1]->buffers[1])[0], 0x55);
    a.release(&a);
    s.release(&s);
  }
  dp_batch_free(b);
}

/* Random rows, nulls at every level, appended through dp_vector_append_value
** and read back with dp_vector_get_value: each row compares equal to what
** went in, and the export passes the structural checks. */
TEST(random_rows_read_back) {
  const dp_type *row_t = dp_type_row(
      A, 4,
      (dp_field[]){{"i", T(DP_T_INT)},
                   {"s", T(DP_T_STRING)},
                   {"xs", dp_type_array(A, T(DP_T_BIGINT))},
                   {"m", dp_type_map(A, T(DP_T_STRING), dp_type_decimal(A, 12, 3))}});
  dp_vector *v = dp_vector_new(row_t, 1);
  enum { ROWS = 3000 };
  dp_value *rows = dp_arena_calloc(A, ROWS, sizeof *rows);
  uint64_t state = 99;
#define NEXT() (state = state * 6364136223846793005u + 1442695040888963407u, (unsigned)(state >> 40))
  for (int r = 0; r < ROWS; r++) {
    dp_value *row = &rows[r];
    row->type = row_t;
    if (NEXT() % 10 == 0) {
      row->is_null = true;
    } else {
      dp_value *f = dp_arena_calloc(A, 4, sizeof *f);
      f[0] = NEXT() % 5 ? dp_value_int(T(DP_T_INT), (int)NEXT() - 8000000) : dp_value_null(T(DP_T_INT));
      char *text = dp_arena_printf(A, "s%u", NEXT() % 100000);
      f[1] = NEXT() % 5 ? dp_value_string(text, strlen(text)) : dp_value_null(T(DP_T_STRING));
      int n = (int)(NEXT() % 5);
      dp_value *xs = dp_arena_calloc(A, (size_t)n + 1, sizeof *xs);
      for (int k = 0; k < n; k++)
        xs[k] = NEXT() % 4 ? dp_value_int(T(DP_T_BIGINT), (int64_t)NEXT() << 20) : dp_value_null(T(DP_T_BIGINT));
      f[2].type = row_t->fields[2].type;
      f[2].is_null = NEXT() % 7 == 0;
      f[2].u.list.n = n;
      f[2].u.list.items = xs;
      int m = (int)(NEXT() % 3);
      dp_value *kv = dp_arena_calloc(A, 2 * (size_t)m + 1, sizeof *kv);
      for (int k = 0; k < m; k++) {
        char *key = dp_arena_printf(A, "k%d", k);
        kv[k] = dp_value_string(key, strlen(key));
        kv[m + k].type = row_t->fields[3].type->value;
        kv[m + k].is_null = NEXT() % 4 == 0;
        kv[m + k].u.dec = (dp_i128)NEXT() * 1000003 - 77;
      }
      f[3].type = row_t->fields[3].type;
      f[3].u.list.n = m;
      f[3].u.list.items = kv;
      row->u.list.n = 4;
      row->u.list.items = f;
    }
    CHECK_EQ(dp_vector_append_value(v, row), DIPPER_OK);
  }
#undef NEXT
  CHECK_EQ(v->length, ROWS);
  int mismatched = 0;
  for (int r = 0; r < ROWS; r++) {
    dp_value got;
    CHECK(dp_vector_get_value(A, v, r, &got));
    if (dp_value_compare(&got, &rows[r]) != 0 && mismatched++ < 3)
      fprintf(stderr, "  row %d: %s vs %s\n", r, dp_value_format(A, &got), dp_value_format(A, &rows[r]));
  }
  CHECK_EQ(mismatched, 0);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dp_vector_export(v, &s, &a), DIPPER_OK);
  CHECK_EQ(validate(&s, &a), 0);
  CHECK_EQ(a.null_count, v->null_count);
  a.release(&a);
  s.release(&s);
  dp_vector_free(v);
}

TEST(export_schema_of_a_type) {
  struct ArrowSchema s;
  const dp_type *t = dp_type_array(A, dp_type_decimal(A, 20, 4));
  CHECK_EQ(dp_type_export_schema(t, "prices", &s), DIPPER_OK);
  CHECK_STR(s.name, "prices");
  CHECK_STR(s.format, "+l");
  CHECK_STR(s.children[0]->format, "d:20,4");
  s.release(&s);
  CHECK(s.release == NULL);
}

int main(void) {
  A = dp_arena_new(0);
  int rc = RUN_TESTS();
  dp_arena_free(A);
  return rc;
}
