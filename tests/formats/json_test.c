/*
** json_test.c — the JSON format: every type decoded, nested values, missing
** and unknown keys, errors with the field, the value and the byte offset, a
** failed record leaving the batch as it was, and encode/decode round trips.
*/
#include <math.h>
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

static int decode(dp_json_decoder *dec, dp_batch *b, const char *text, dp_format_error *err) {
  int rc = dp_json_decode(dec, text, strlen(text), b, err);
  if (rc == DIPPER_OK) dp_batch_sync(b);
  return rc;
}

static const char *encode(const dp_batch *b, int64_t row) {
  static dp_buf out = DP_BUF_INIT;
  out.len = 0;
  dp_json_encode_row(b, row, &out);
  return dp_buf_cstr(&out);
}

TEST(every_scalar_type) {
  A = dp_arena_new(0);
  const char *names[] = {"b", "i8", "i16", "i32", "i64", "f", "d", "dec", "s", "by",
                         "dt", "tm", "ts", "ts_iso", "ts_ms", "ltz", "iv"};
  const dp_type *types[] = {dp_type_of(DP_T_BOOLEAN),
                            dp_type_of(DP_T_TINYINT),
                            dp_type_of(DP_T_SMALLINT),
                            dp_type_of(DP_T_INT),
                            dp_type_of(DP_T_BIGINT),
                            dp_type_of(DP_T_FLOAT),
                            dp_type_of(DP_T_DOUBLE),
                            dp_type_decimal(A, 20, 3),
                            dp_type_of(DP_T_STRING),
                            dp_type_of(DP_T_BYTES),
                            dp_type_of(DP_T_DATE),
                            dp_type_timestamp(A, DP_T_TIME, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP_LTZ, 3),
                            dp_type_of(DP_T_INTERVAL_DT)};
  dp_schema *s = schema_of(17, names, types);
  dp_json_decoder *dec = dp_json_decoder_new(s, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  dp_format_error err;
  const char *rec =
      "{\"b\": true, \"i8\": -128, \"i16\": 32767, \"i32\": -70000, \"i64\": 9007199254740993,"
      " \"f\": 1.5, \"d\": -2.25e3, \"dec\": 123456789012345.678, \"s\": \"h\\u00e9\\n\\\"x\\\"\","
      " \"by\": \"aGk=\", \"dt\": \"2024-02-29\", \"tm\": \"12:34:56.789\","
      " \"ts\": \"2024-01-02 03:04:05.678\", \"ts_iso\": \"2024-01-02T03:04:05.678Z\","
      " \"ts_ms\": 1704164645678, \"ltz\": \"2024-01-02T04:04:05.678+01:00\", \"iv\": 5000000}";
  CHECK_EQ(decode(dec, b, rec, &err), DIPPER_OK);
  CHECK_EQ(b->nrows, 1);
  CHECK(dp_vector_get_bool(b->cols[0], 0));
  CHECK_EQ(dp_vector_get_i64(b->cols[1], 0), -128);
  CHECK_EQ(dp_vector_get_i64(b->cols[2], 0), 32767);
  CHECK_EQ(dp_vector_get_i64(b->cols[3], 0), -70000);
  CHECK_EQ(dp_vector_get_i64(b->cols[4], 0), 9007199254740993LL);
  CHECK(dp_vector_get_f64(b->cols[5], 0) == 1.5);
  CHECK(dp_vector_get_f64(b->cols[6], 0) == -2250.0);
  /* exact: 123456789012345678 thousandths, more digits than a double holds */
  CHECK(dp_vector_get_dec(b->cols[7], 0) == (dp_i128)123456789012345678LL);
  size_t n;
  const char *str = dp_vector_get_str(b->cols[8], 0, &n);
  CHECK_EQ(n, 7);
  CHECK(memcmp(str, "h\xc3\xa9\n\"x\"", 7) == 0);
  str = dp_vector_get_str(b->cols[9], 0, &n);
  CHECK_EQ(n, 2);
  CHECK(memcmp(str, "hi", 2) == 0);
  CHECK_EQ(dp_vector_get_i64(b->cols[10], 0), dp_days_from_civil(2024, 2, 29));
  CHECK_EQ(dp_vector_get_i64(b->cols[11], 0), (12 * 3600 + 34 * 60 + 56) * 1000000LL + 789000);
  int64_t expect = 1704164645678000LL; /* 2024-01-02 03:04:05.678 UTC */
  CHECK_EQ(dp_vector_get_i64(b->cols[12], 0), expect);
  CHECK_EQ(dp_vector_get_i64(b->cols[13], 0), expect);
  CHECK_EQ(dp_vector_get_i64(b->cols[14], 0), expect);
  CHECK_EQ(dp_vector_get_i64(b->cols[15], 0), expect);
  CHECK_EQ(dp_vector_get_i64(b->cols[16], 0), 5000000);

  /* encoded: timestamps as Flink writes them, decimals exact, bytes base64 */
  const char *out = encode(b, 0);
  CHECK_CONTAINS(out, "\"ts\":\"2024-01-02 03:04:05.678\"");
  CHECK_CONTAINS(out, "\"ltz\":\"2024-01-02 03:04:05.678Z\"");
  CHECK_CONTAINS(out, "\"dec\":123456789012345.678");
  CHECK_CONTAINS(out, "\"by\":\"aGk=\"");
  CHECK_CONTAINS(out, "\"s\":\"h\xc3\xa9\\n\\\"x\\\"\"");
  CHECK_CONTAINS(out, "\"dt\":\"2024-02-29\"");
  CHECK_CONTAINS(out, "\"tm\":\"12:34:56.789\"");
  CHECK_CONTAINS(out, "\"i64\":9007199254740993");
  CHECK_CONTAINS(out, "\"d\":-2250");

  /* and the encoded row decodes to the same values */
  char *copy = strdup(out);
  CHECK_EQ(decode(dec, b, copy, &err), DIPPER_OK);
  CHECK_EQ(b->nrows, 2);
  CHECK_STR(encode(b, 1), copy);
  free(copy);
  dp_batch_free(b);
  dp_json_decoder_free(dec);
  dp_arena_free(A);
}

TEST(nested_rows_arrays_maps) {
  A = dp_arena_new(0);
  dp_field inner[] = {{"x", dp_type_of(DP_T_INT)}, {"tags", dp_type_array(A, dp_type_of(DP_T_STRING))}};
  const dp_type *row = dp_type_row(A, 2, inner);
  const char *names[] = {"r", "m", "a"};
  const dp_type *types[] = {row, dp_type_map(A, dp_type_of(DP_T_STRING), dp_type_of(DP_T_BIGINT)),
                            dp_type_array(A, row)};
  dp_schema *s = schema_of(3, names, types);
  dp_json_decoder *dec = dp_json_decoder_new(s, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  dp_format_error err;
  const char *rec = "{\"r\":{\"x\":1,\"tags\":[\"a\",null,\"c\"]},\"m\":{\"k1\":10,\"k2\":null},"
                    "\"a\":[{\"x\":2},{\"tags\":[],\"x\":3},null]}";
  CHECK_EQ(decode(dec, b, rec, &err), DIPPER_OK);
  CHECK_STR(encode(b, 0), "{\"r\":{\"x\":1,\"tags\":[\"a\",null,\"c\"]},\"m\":{\"k1\":10,\"k2\":null},"
                          "\"a\":[{\"x\":2,\"tags\":null},{\"x\":3,\"tags\":[]},null]}");
  /* text form (console) */
  dp_buf t = DP_BUF_INIT;
  dp_text_put_value(&t, b->cols[1], 0, "NULL", 0);
  CHECK_STR(dp_buf_cstr(&t), "{k1 -> 10, k2 -> NULL}");
  t.len = 0;
  dp_text_put_value(&t, b->cols[0], 0, "NULL", 0);
  CHECK_STR(dp_buf_cstr(&t), "{1, [a, NULL, c]}");
  dp_buf_free(&t);
  /* a failure deep inside leaves no trace in any child */
  int64_t elems = b->cols[2]->children[0]->length;
  CHECK_EQ(decode(dec, b, "{\"r\":{\"x\":5},\"a\":[{\"x\":4},{\"x\":\"no\"}]}", &err), DIPPER_DATA);
  CHECK_CONTAINS(err.msg, "field `a[1].x`");
  CHECK_CONTAINS(err.msg, "\"no\"");
  CHECK_EQ(b->cols[0]->length, 1);
  CHECK_EQ(b->cols[0]->children[0]->length, 1);
  CHECK_EQ(b->cols[2]->length, 1);
  CHECK_EQ(b->cols[2]->children[0]->length, elems);
  CHECK_EQ(b->cols[2]->children[0]->children[0]->length, elems);
  /* and the next good record lands right */
  CHECK_EQ(decode(dec, b, "{\"a\":[{\"x\":9}]}", &err), DIPPER_OK);
  CHECK_STR(encode(b, 1), "{\"r\":null,\"m\":null,\"a\":[{\"x\":9,\"tags\":null}]}");
  dp_batch_free(b);
  dp_json_decoder_free(dec);
  dp_arena_free(A);
}

TEST(missing_unknown_and_case) {
  A = dp_arena_new(0);
  const char *names[] = {"id", "Name", "price"};
  const dp_type *types[] = {dp_type_of(DP_T_BIGINT), dp_type_of(DP_T_STRING),
                            dp_type_of(DP_T_DOUBLE)};
  dp_schema *s = schema_of(3, names, types);
  dp_json_decoder *dec = dp_json_decoder_new(s, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  dp_format_error err;
  CHECK_EQ(decode(dec, b, "{\"extra\":{\"deep\":[1,{\"a\":null}]},\"name\":\"x\",\"id\":\"7\"}", &err),
           DIPPER_OK);
  CHECK_STR(encode(b, 0), "{\"id\":7,\"Name\":\"x\",\"price\":null}");
  /* a STRING takes the text of any value; numbers may come quoted */
  CHECK_EQ(decode(dec, b, " {\"Name\": {\"a\": [1, 2]}, \"price\": \"NaN\"} \n", &err), DIPPER_OK);
  CHECK_STR(encode(b, 1), "{\"id\":null,\"Name\":\"{\\\"a\\\": [1, 2]}\",\"price\":\"NaN\"}");
  CHECK(isnan(dp_vector_get_f64(b->cols[2], 1)));

  /* the encoder writes JSON whatever the bytes: a stray byte becomes U+FFFD */
  dp_buf esc = DP_BUF_INIT;
  dp_json_put_string(&esc, "a\xff\xc3\xa9\x01", 5);
  CHECK_STR(dp_buf_cstr(&esc), "\"a\\ufffd\xc3\xa9\\u0001\"");
  dp_buf_free(&esc);

  dp_json_options strict = {true};
  dp_json_decoder *dec2 = dp_json_decoder_new(s, NULL, &strict);
  CHECK_EQ(decode(dec2, b, "{\"id\":1,\"Name\":\"n\"}", &err), DIPPER_DATA);
  CHECK_CONTAINS(err.msg, "field `price`: the key is missing");
  CHECK_EQ(b->cols[0]->length, 2);
  dp_json_decoder_free(dec2);

  /* only the decoded columns: the caller fills the others */
  bool only[] = {true, false, true};
  dp_json_decoder *dec3 = dp_json_decoder_new(s, only, NULL);
  dp_batch *b3 = dp_batch_new(s, 0);
  CHECK_EQ(dp_json_decode(dec3, "{\"id\":1,\"Name\":\"ignored\"}", 25, b3, &err), DIPPER_OK);
  CHECK_EQ(b3->cols[0]->length, 1);
  CHECK_EQ(b3->cols[1]->length, 0);
  CHECK_EQ(b3->cols[2]->length, 1);
  dp_batch_free(b3);
  dp_json_decoder_free(dec3);
  dp_batch_free(b);
  dp_json_decoder_free(dec);
  dp_arena_free(A);
}

/* Each bad record: the code, words of the message and the byte offset. */
TEST(errors_name_field_value_and_offset) {
  A = dp_arena_new(0);
  const char *names[] = {"i", "t", "s", "d"};
  const dp_type *types[] = {dp_type_of(DP_T_TINYINT), dp_type_timestamp(A, DP_T_TIMESTAMP, 3),
                            dp_type_of(DP_T_STRING), dp_type_decimal(A, 5, 2)};
  dp_schema *s = schema_of(4, names, types);
  dp_json_decoder *dec = dp_json_decoder_new(s, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  static const struct {
    const char *rec;
    const char *words;
    int offset;
  } cases[] = {
      {"{\"i\": \"abc\"}", "field `i`: expected a whole number that fits TINYINT, got \"abc\"", 6},
      {"{\"i\": 300}", "got 300", 6},
      {"{\"i\": 1.5}", "fits TINYINT, got 1.5", 6},
      {"{\"i\": [1]}", "field `i`: expected a whole number, got [1]", 6},
      {"{\"t\": \"yesterday\"}", "field `t`: expected a timestamp", 6},
      {"{\"t\": true}", "field `t`", 6},
      {"{\"d\": 1234.5}", "fits DECIMAL(5, 2), got 1234.5", 6},
      {"{\"s\": \"abc}", "closing quote", 6},
      {"{\"s\": \"a\x01\"}", "control character", 8},
      {"{\"s\": \"\xff\"}", "invalid UTF-8", 7},
      {"{\"s\": \"\\ud800\"}", "surrogate", 7},
      {"{\"s\": \"\\q\"}", "unknown escape", 7},
      {"{\"i\": 1,}", "expected a key", 8},
      {"{\"i\": 1 \"s\": \"x\"}", "expected ',' or '}'", 8},
      {"{\"i\": 1} x", "text after the object", 9},
      {"[1, 2]", "one JSON object", 0},
      {"", "empty record", 0},
      {"{\"i\": 01}", "expected ',' or '}'", 7},
      {"{\"i\": -}", "not a JSON value", 6},
      {"{\"i\": nul}", "not a JSON value", 6},
      {"{\"i\": 1, \"i\": 2}", "twice", 9},
      {"{'i': 1}", "expected a key in double quotes", 1},
      {"{\"x\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]"
       "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
       "deeper than 64", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dp_format_error err;
    int rc = dp_json_decode(dec, cases[i].rec, strlen(cases[i].rec), b, &err);
    CHECK_EQ(rc, DIPPER_DATA);
    CHECK_CONTAINS(err.msg, cases[i].words);
    if (cases[i].offset) CHECK_EQ(err.offset, cases[i].offset);
    for (int c = 0; c < 4; c++) CHECK_EQ(b->cols[c]->length, 0);
  }
  dp_batch_free(b);
  dp_json_decoder_free(dec);
  dp_arena_free(A);
}

TEST(round_trip_random_rows) {
  A = dp_arena_new(0);
  const char *names[] = {"a", "b", "c", "d", "e"};
  const dp_type *types[] = {dp_type_of(DP_T_BIGINT), dp_type_of(DP_T_DOUBLE),
                            dp_type_of(DP_T_STRING), dp_type_decimal(A, 38, 10),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 6)};
  dp_schema *s = schema_of(5, names, types);
  dp_batch *b = dp_batch_new(s, 0), *back = dp_batch_new(s, 0);
  uint64_t r = 42;
  for (int i = 0; i < 300; i++) {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    if (r % 7 == 0)
      dp_vector_append_null(b->cols[0]);
    else
      dp_vector_append_i64(b->cols[0], (int64_t)r);
    double d;
    uint64_t bits = r ^ (r >> 17);
    memcpy(&d, &bits, sizeof d);
    if (isnan(d) || isinf(d)) d = (double)(int64_t)r / 3.0;
    dp_vector_append_f64(b->cols[1], d);
    char str[8];
    for (int k = 0; k < 7; k++) str[k] = (char)(1 + (r >> (k * 8)) % 127);
    dp_vector_append_str(b->cols[2], str, 7);
    dp_vector_append_dec(b->cols[3], (dp_i128)(int64_t)r * 1000000007);
    dp_vector_append_i64(b->cols[4], (int64_t)(r % 4000000000000000ULL) - 1000000000000000LL);
  }
  dp_batch_sync(b);
  dp_json_decoder *dec = dp_json_decoder_new(s, NULL, NULL);
  dp_buf line = DP_BUF_INIT;
  dp_format_error err;
  int bad = 0;
  for (int64_t i = 0; i < b->nrows; i++) {
    line.len = 0;
    dp_json_encode_row(b, i, &line);
    if (dp_json_decode(dec, line.data, line.len, back, &err) != DIPPER_OK) bad++;
  }
  dp_batch_sync(back);
  CHECK_EQ(bad, 0);
  CHECK_EQ(back->nrows, b->nrows);
  for (int64_t i = 0; i < b->nrows && i < back->nrows; i++) {
    CHECK_EQ(dp_vector_is_null(back->cols[0], i), dp_vector_is_null(b->cols[0], i));
    if (!dp_vector_is_null(b->cols[0], i))
      CHECK_EQ(dp_vector_get_i64(back->cols[0], i), dp_vector_get_i64(b->cols[0], i));
    CHECK(dp_vector_get_f64(back->cols[1], i) == dp_vector_get_f64(b->cols[1], i));
    size_t n1, n2;
    const char *s1 = dp_vector_get_str(b->cols[2], i, &n1), *s2 = dp_vector_get_str(back->cols[2], i, &n2);
    CHECK(n1 == n2 && memcmp(s1, s2, n1) == 0);
    CHECK(dp_vector_get_dec(back->cols[3], i) == dp_vector_get_dec(b->cols[3], i));
    CHECK_EQ(dp_vector_get_i64(back->cols[4], i), dp_vector_get_i64(b->cols[4], i));
  }
  dp_buf_free(&line);
  dp_json_decoder_free(dec);
  dp_batch_free(b);
  dp_batch_free(back);
  dp_arena_free(A);
}

/* Decimal text without an exponent takes a fast path: it must give what
** strtod gives, bit for bit. */
TEST(doubles_read_exactly) {
  A = dp_arena_new(0);
  dp_vector *v = dp_vector_new(dp_type_of(DP_T_DOUBLE), 0);
  uint64_t r = 7;
  char text[64];
  int mismatches = 0;
  for (int i = 0; i < 20000; i++) {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    int int_digits = (int)(r % 10), frac_digits = (int)((r >> 8) % 12);
    unsigned long long ip = (r >> 16) % 10000000000ULL;
    unsigned long long fp = (r >> 20) % 1000000000000ULL;
    int n = snprintf(text, sizeof text, "%s%.*llu.%0*llu", (r >> 60) & 1 ? "-" : "", int_digits,
                     ip % 1000000000ULL, frac_digits, fp % 1000000000000ULL);
    if (frac_digits == 0) n--; /* "12." is text too, but test "12" */
    text[n] = '\0';
    dp_vector_clear(v);
    if (dp_text_append_scalar(v, text, (size_t)n) != DIPPER_OK) {
      mismatches++;
      continue;
    }
    double want = strtod(text, NULL), got = dp_vector_get_f64(v, 0);
    if (memcmp(&want, &got, sizeof got) != 0) mismatches++;
  }
  CHECK_EQ(mismatches, 0);
  dp_vector_free(v);
  dp_arena_free(A);
}

int main(void) { return RUN_TESTS(); }
