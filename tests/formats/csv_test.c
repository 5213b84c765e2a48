/*
** csv_test.c — the CSV format: RFC 4180 quoting, NULL versus the empty
** string, delimiters, arrays, record ends across quoted line breaks, errors
** with the column and the offset, and round trips.
*/
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "formats/formats.h"
#include "test.h"

static dp_arena *A;

static dp_schema *schema_of(int n, const char *const *names, const dp_type *const *types) {
  dp_schema *s = dp_schema_new(A, n);
  for (int i = 0; i < n; i++) {
    s->cols[i].name = names[i];
    s->cols[i].type = types[i];
  }
  return s;
}

static const char *encode(const dp_batch *b, int64_t row, const dp_csv_options *o) {
  static dp_buf out = DP_BUF_INIT;
  out.len = 0;
  dp_csv_encode_row(b, row, o, &out);
  return dp_buf_cstr(&out);
}

static int decode(dp_csv_decoder *dec, dp_batch *b, const char *rec, dp_format_error *err) {
  bool skipped;
  int rc = dp_csv_decode(dec, rec, strlen(rec), b, &skipped, err);
  dp_batch_sync(b);
  return rc;
}

TEST(types_quotes_and_nulls) {
  A = dp_arena_new(0);
  const char *names[] = {"id", "name", "price", "ts", "ok", "tags"};
  const dp_type *types[] = {dp_type_of(DP_T_INT),
                            dp_type_of(DP_T_STRING),
                            dp_type_decimal(A, 10, 2),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 3),
                            dp_type_of(DP_T_BOOLEAN),
                            dp_type_array(A, dp_type_of(DP_T_INT))};
  dp_schema *s = schema_of(6, names, types);
  dp_csv_decoder *dec = dp_csv_decoder_new(s, NULL, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  dp_format_error err;
  CHECK_EQ(decode(dec, b, "1,\"a, \"\"quoted\"\"\nline\", 12.50 ,2024-01-02 03:04:05.678,true,1;2;3\r\n",
                  &err),
           DIPPER_OK);
  CHECK_EQ(decode(dec, b, "2,,,,,\n", &err), DIPPER_OK);
  CHECK_EQ(decode(dec, b, "3,\"\",0.5,1704164645678,FALSE,\n", &err), DIPPER_OK);
  CHECK_EQ(b->nrows, 3);
  size_t n;
  const char *str = dp_vector_get_str(b->cols[1], 0, &n);
  CHECK(n == 16 && memcmp(str, "a, \"quoted\"\nline", 16) == 0);
  CHECK(dp_vector_get_dec(b->cols[2], 0) == 1250);
  CHECK_EQ(dp_vector_get_i64(b->cols[3], 0), 1704164645678000LL);
  CHECK_EQ(dp_vector_get_i64(b->cols[3], 2), 1704164645678000LL);
  CHECK(dp_vector_is_null(b->cols[1], 1));  /* unquoted empty: NULL */
  CHECK(!dp_vector_is_null(b->cols[1], 2)); /* quoted empty: "" */
  CHECK(dp_vector_is_null(b->cols[5], 1));
  CHECK_STR(encode(b, 0, NULL),
            "1,\"a, \"\"quoted\"\"\nline\",12.50,2024-01-02 03:04:05.678,true,1;2;3\n");
  CHECK_STR(encode(b, 1, NULL), "2,,,,,\n");
  CHECK_STR(encode(b, 2, NULL), "3,\"\",0.50,2024-01-02 03:04:05.678,false,\n");
  /* blank lines and (when allowed) comments are no records */
  bool skipped = false;
  CHECK_EQ(dp_csv_decode(dec, "\r\n", 2, b, &skipped, &err), DIPPER_OK);
  CHECK(skipped);
  dp_csv_decoder_free(dec);

  dp_csv_options o = dp_csv_default_options();
  o.delimiter = '\t';
  o.allow_comments = true;
  o.null_literal = "\\N";
  dec = dp_csv_decoder_new(s, NULL, &o, NULL);
  CHECK_EQ(dp_csv_decode(dec, "# note", 6, b, &skipped, &err), DIPPER_OK);
  CHECK(skipped);
  CHECK_EQ(decode(dec, b, "4\t\\N\t1,5\t\\N\t\\N\t\n", &err), DIPPER_DATA); /* 1,5 is no DECIMAL */
  CHECK_CONTAINS(err.msg, "column `price` (field 3)");
  CHECK_EQ(decode(dec, b, "4\t\\N\t1.5\t\\N\t\\N\t\n", &err), DIPPER_OK);
  CHECK(dp_vector_is_null(b->cols[1], 3));
  CHECK_STR(encode(b, 3, &o), "4\t\t1.50\t\t\t\n");
  dp_csv_decoder_free(dec);
  dp_batch_free(b);
  dp_arena_free(A);
}

TEST(record_ends) {
  bool complete;
  const char *t = "a,\"b\nc\",d\ne,f\n";
  size_t end = dp_csv_record_end(t, strlen(t), '"', &complete);
  CHECK(complete);
  CHECK_EQ(end, 10);
  end = dp_csv_record_end(t + 10, strlen(t + 10), '"', &complete);
  CHECK(complete);
  CHECK_EQ(end, 4);
  end = dp_csv_record_end("x,\"open\n", 8, '"', &complete);
  CHECK(!complete);
  CHECK_EQ(end, 8);
  end = dp_csv_record_end("a\r\nb", 4, '"', &complete);
  CHECK(complete);
  CHECK_EQ(end, 3);
}

TEST(errors_with_column_and_offset) {
  A = dp_arena_new(0);
  const char *names[] = {"a", "b", "c"};
  const dp_type *types[] = {dp_type_of(DP_T_INT), dp_type_of(DP_T_STRING), dp_type_of(DP_T_DATE)};
  dp_schema *s = schema_of(3, names, types);
  dp_csv_decoder *dec = dp_csv_decoder_new(s, NULL, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  static const struct {
    const char *rec, *words;
    int offset;
  } cases[] = {
      {"x,b,2024-01-01", "column `a` (field 1): expected a value of type INT, got \"x\"", 0},
      {"1,b,2024-13-01", "column `c` (field 3): expected a DATE", 4},
      {"1,b", "the record has 2 fields, and the table has 3 columns", 3},
      {"1,b,2024-01-01,9", "more than 3 fields", 15},
      {"1,\"b,2024-01-01", "without its closing quote", 2},
      {"1,\"b\"x,2024-01-01", "text after the closing quote", 5},
      {"99999999999,b,2024-01-01", "column `a`", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dp_format_error err;
    bool skipped;
    CHECK_EQ(dp_csv_decode(dec, cases[i].rec, strlen(cases[i].rec), b, &skipped, &err), DIPPER_DATA);
    CHECK_CONTAINS(err.msg, cases[i].words);
    CHECK_EQ(err.offset, cases[i].offset);
    for (int c = 0; c < 3; c++) CHECK_EQ(b->cols[c]->length, 0);
  }
  /* ROW and MAP have no CSV form */
  dp_field f[] = {{"x", dp_type_of(DP_T_INT)}};
  const char *names2[] = {"ok", "r"};
  const dp_type *types2[] = {dp_type_of(DP_T_INT), dp_type_row(A, 1, f)};
  int bad = -2;
  CHECK(dp_csv_decoder_new(schema_of(2, names2, types2), NULL, NULL, &bad) == NULL);
  CHECK_EQ(bad, 1);
  dp_csv_decoder_free(dec);
  dp_batch_free(b);
  dp_arena_free(A);
}

TEST(round_trip_awkward_strings) {
  A = dp_arena_new(0);
  const char *names[] = {"s", "n"};
  const dp_type *types[] = {dp_type_of(DP_T_STRING), dp_type_of(DP_T_BIGINT)};
  dp_schema *s = schema_of(2, names, types);
  dp_batch *b = dp_batch_new(s, 0), *back = dp_batch_new(s, 0);
  const char *strs[] = {"", " lead", "trail ", "a,b", "q\"q", "line\nbreak", "cr\rx", "plain", "\"",
                        ",", "NULL"};
  int ns = (int)(sizeof strs / sizeof strs[0]);
  for (int i = 0; i < ns; i++) {
    dp_vector_append_str(b->cols[0], strs[i], strlen(strs[i]));
    dp_vector_append_i64(b->cols[1], i * 1000003LL - 7);
  }
  dp_vector_append_null(b->cols[0]);
  dp_vector_append_null(b->cols[1]);
  dp_batch_sync(b);
  dp_buf all = DP_BUF_INIT;
  for (int64_t i = 0; i < b->nrows; i++) dp_csv_encode_row(b, i, NULL, &all);
  /* cut the text into records again and decode */
  dp_csv_decoder *dec = dp_csv_decoder_new(s, NULL, NULL, NULL);
  size_t pos = 0;
  dp_format_error err;
  while (pos < all.len) {
    bool complete, skipped;
    size_t len = dp_csv_record_end(all.data + pos, all.len - pos, '"', &complete);
    CHECK(complete);
    CHECK_EQ(dp_csv_decode(dec, all.data + pos, len, back, &skipped, &err), DIPPER_OK);
    pos += len;
  }
  dp_batch_sync(back);
  CHECK_EQ(back->nrows, b->nrows);
  for (int64_t i = 0; i < b->nrows && i < back->nrows; i++) {
    CHECK_EQ(dp_vector_is_null(back->cols[0], i), dp_vector_is_null(b->cols[0], i));
    size_t n1, n2;
    const char *s1 = dp_vector_get_str(b->cols[0], i, &n1), *s2 = dp_vector_get_str(back->cols[0], i, &n2);
    CHECK(n1 == n2 && memcmp(s1, s2, n1) == 0);
    CHECK_EQ(dp_vector_get_i64(back->cols[1], i), dp_vector_get_i64(b->cols[1], i));
  }
  dp_buf h = DP_BUF_INIT;
  dp_csv_encode_header(s, NULL, &h);
  CHECK_STR(dp_buf_cstr(&h), "s,n\n");
  dp_buf_free(&h);
  dp_buf_free(&all);
  dp_csv_decoder_free(dec);
  dp_batch_free(b);
  dp_batch_free(back);
  dp_arena_free(A);
}

int main(void) { return RUN_TESTS(); }
