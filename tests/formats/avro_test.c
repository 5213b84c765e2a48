/*
** avro_test.c — the 'avro' format: the schema text of every type (exact),
** exact datum bytes, round trips of every type with NULLs and nested values,
** decimal and integer edge values, malformed datums each refused with the
** field named and the batch left as it was, and a rough decode speed (printed,
** not asserted).
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arena.h"
#include "formats/avro.h"
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

static const dp_type *nn(const dp_type *t) { return dp_type_with_nullability(A, t, true); }
static const dp_type *T(dp_type_kind k) { return dp_type_of(k); }

static const dp_type *row2(const char *a, const dp_type *ta, const char *b, const dp_type *tb) {
  dp_field f[2] = {{a, ta}, {b, tb}};
  return dp_type_row(A, b ? 2 : 1, f);
}

static const char *schema_text(const dp_schema *s, const bool *cols) {
  static dp_buf out = DP_BUF_INIT;
  out.len = 0;
  int bad = 0;
  char why[160];
  int rc = dp_avro_schema_json(s, cols, &out, &bad, why, sizeof why);
  if (rc != DIPPER_OK) return "(refused)";
  return dp_buf_cstr(&out);
}

static const char *json_row(const dp_batch *b, int64_t row) {
  static dp_buf out = DP_BUF_INIT;
  out.len = 0;
  dp_json_encode_row(b, row, &out);
  return dp_buf_cstr(&out);
}

/* The datum's bytes as hex "01 02 ff". */
static const char *hex(const dp_buf *b) {
  static char text[4096];
  size_t k = 0;
  text[0] = '\0';
  for (size_t i = 0; i < b->len && k + 4 < sizeof text; i++)
    k += (size_t)snprintf(text + k, sizeof text - k, "%s%02x", i ? " " : "",
                          (unsigned char)b->data[i]);
  return text;
}

static int decode_bytes(dp_avro_decoder *dec, dp_batch *b, const char *p, size_t n,
                        dp_format_error *err) {
  int rc = dp_avro_decode(dec, p, n, b, err);
  if (rc == DIPPER_OK) dp_batch_sync(b);
  return rc;
}

TEST(schema_of_every_scalar) {
  A = dp_arena_new(0);
  const char *names[] = {"b",  "i8", "i16", "i32", "i64", "f",  "d",   "dec",
                         "s",  "by", "dt",  "tm",  "ts",  "ts6", "ltz", "ltz6"};
  const dp_type *types[] = {T(DP_T_BOOLEAN),
                            T(DP_T_TINYINT),
                            T(DP_T_SMALLINT),
                            T(DP_T_INT),
                            T(DP_T_BIGINT),
                            T(DP_T_FLOAT),
                            T(DP_T_DOUBLE),
                            dp_type_decimal(A, 20, 3),
                            T(DP_T_STRING),
                            T(DP_T_BYTES),
                            T(DP_T_DATE),
                            dp_type_timestamp(A, DP_T_TIME, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 6),
                            dp_type_timestamp(A, DP_T_TIMESTAMP_LTZ, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP_LTZ, 9)};
  dp_schema *s = schema_of(16, names, types);
  CHECK_STR(schema_text(s, NULL),
            "{\"type\":\"record\",\"name\":\"record\",\"fields\":["
            "{\"name\":\"b\",\"type\":[\"null\",\"boolean\"],\"default\":null},"
            "{\"name\":\"i8\",\"type\":[\"null\",\"int\"],\"default\":null},"
            "{\"name\":\"i16\",\"type\":[\"null\",\"int\"],\"default\":null},"
            "{\"name\":\"i32\",\"type\":[\"null\",\"int\"],\"default\":null},"
            "{\"name\":\"i64\",\"type\":[\"null\",\"long\"],\"default\":null},"
            "{\"name\":\"f\",\"type\":[\"null\",\"float\"],\"default\":null},"
            "{\"name\":\"d\",\"type\":[\"null\",\"double\"],\"default\":null},"
            "{\"name\":\"dec\",\"type\":[\"null\",{\"type\":\"bytes\",\"logicalType\":\"decimal\","
            "\"precision\":20,\"scale\":3}],\"default\":null},"
            "{\"name\":\"s\",\"type\":[\"null\",\"string\"],\"default\":null},"
            "{\"name\":\"by\",\"type\":[\"null\",\"bytes\"],\"default\":null},"
            "{\"name\":\"dt\",\"type\":[\"null\",{\"type\":\"int\",\"logicalType\":\"date\"}],"
            "\"default\":null},"
            "{\"name\":\"tm\",\"type\":[\"null\",{\"type\":\"int\",\"logicalType\":\"time-millis\"}],"
            "\"default\":null},"
            "{\"name\":\"ts\",\"type\":[\"null\",{\"type\":\"long\",\"logicalType\":"
            "\"local-timestamp-millis\"}],\"default\":null},"
            "{\"name\":\"ts6\",\"type\":[\"null\",{\"type\":\"long\",\"logicalType\":"
            "\"local-timestamp-micros\"}],\"default\":null},"
            "{\"name\":\"ltz\",\"type\":[\"null\",{\"type\":\"long\",\"logicalType\":"
            "\"timestamp-millis\"}],\"default\":null},"
            "{\"name\":\"ltz6\",\"type\":[\"null\",{\"type\":\"long\",\"logicalType\":"
            "\"timestamp-micros\"}],\"default\":null}]}");
  /* a subset of the columns, NOT NULL ones without a union or a default */
  bool cols[16] = {false};
  cols[4] = cols[8] = true;
  const char *nn_names[] = {"id", "name"};
  const dp_type *nn_types[] = {nn(T(DP_T_BIGINT)), nn(T(DP_T_STRING))};
  CHECK_STR(schema_text(schema_of(2, nn_names, nn_types), NULL),
            "{\"type\":\"record\",\"name\":\"record\",\"fields\":["
            "{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"name\",\"type\":\"string\"}]}");
  CHECK_STR(schema_text(s, cols),
            "{\"type\":\"record\",\"name\":\"record\",\"fields\":["
            "{\"name\":\"i64\",\"type\":[\"null\",\"long\"],\"default\":null},"
            "{\"name\":\"s\",\"type\":[\"null\",\"string\"],\"default\":null}]}");
  dp_arena_free(A);
}

TEST(schema_of_nested_types) {
  A = dp_arena_new(0);
  const dp_type *geo = row2("lat", nn(T(DP_T_DOUBLE)), NULL, NULL);
  const char *names[] = {"addr", "tags", "m", "items", "addr_geo"};
  const dp_type *types[] = {
      row2("city", T(DP_T_STRING), "geo", geo),
      nn(dp_type_array(A, nn(T(DP_T_STRING)))),
      dp_type_map(A, nn(T(DP_T_STRING)), T(DP_T_INT)),
      dp_type_array(A, row2("x", T(DP_T_INT), NULL, NULL)),
      /* its record would be record_addr_geo, taken by addr.geo */
      nn(row2("z", nn(T(DP_T_INT)), NULL, NULL)),
  };
  dp_schema *s = schema_of(5, names, types);
  CHECK_STR(schema_text(s, NULL),
            "{\"type\":\"record\",\"name\":\"record\",\"fields\":["
            "{\"name\":\"addr\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"record_addr\","
            "\"fields\":[{\"name\":\"city\",\"type\":[\"null\",\"string\"],\"default\":null},"
            "{\"name\":\"geo\",\"type\":[\"null\",{\"type\":\"record\",\"name\":"
            "\"record_addr_geo\",\"fields\":[{\"name\":\"lat\",\"type\":\"double\"}]}],"
            "\"default\":null}]}],\"default\":null},"
            "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
            "{\"name\":\"m\",\"type\":[\"null\",{\"type\":\"map\",\"values\":[\"null\",\"int\"]}],"
            "\"default\":null},"
            "{\"name\":\"items\",\"type\":[\"null\",{\"type\":\"array\",\"items\":[\"null\","
            "{\"type\":\"record\",\"name\":\"record_items\",\"fields\":[{\"name\":\"x\",\"type\":"
            "[\"null\",\"int\"],\"default\":null}]}]}],\"default\":null},"
            "{\"name\":\"addr_geo\",\"type\":{\"type\":\"record\",\"name\":\"record_addr_geo_2\","
            "\"fields\":[{\"name\":\"z\",\"type\":\"int\"}]}}]}");
  dp_arena_free(A);
}

TEST(schema_refusals) {
  A = dp_arena_new(0);
  struct {
    const char *name;
    const dp_type *type;
    const char *why;
  } cases[] = {
      {"m", dp_type_map(A, T(DP_T_INT), T(DP_T_STRING)),
       "MAP<INT, STRING>: Avro map keys are strings"},
      {"iv", T(DP_T_INTERVAL_DT),
       "INTERVAL DAY TO SECOND: Avro has no interval type dipper writes; store it as BIGINT"},
      {"a", dp_type_array(A, T(DP_T_INTERVAL_YM)),
       "INTERVAL YEAR TO MONTH: Avro has no interval type dipper writes; store it as BIGINT"},
      {"my col", T(DP_T_INT),
       "`my col`: Avro names are letters, digits and '_', not starting with a digit"},
      {"r", row2("ok", T(DP_T_INT), "9lives", T(DP_T_INT)),
       "field `9lives`: Avro names are letters, digits and '_', not starting with a digit"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *names[] = {"fine", cases[i].name};
    const dp_type *types[] = {T(DP_T_INT), cases[i].type};
    dp_schema *s = schema_of(2, names, types);
    dp_buf out = DP_BUF_INIT;
    int bad = -1;
    char why[160];
    CHECK_EQ(dp_avro_schema_json(s, NULL, &out, &bad, why, sizeof why), DIPPER_UNSUPPORTED);
    CHECK_EQ(bad, 1);
    CHECK_STR(why, cases[i].why);
    /* the column left out: fine */
    bool cols[2] = {true, false};
    CHECK_EQ(dp_avro_schema_json(s, cols, &out, &bad, why, sizeof why), DIPPER_OK);
    dp_buf_free(&out);
    if (i < 3) CHECK(dp_avro_decoder_new(s, NULL) == NULL);
    dp_avro_decoder *d = dp_avro_decoder_new(s, cols);
    CHECK(d != NULL);
    dp_avro_decoder_free(d);
  }
  dp_arena_free(A);
}

/* The exact bytes of small datums: zig-zag varints, the union branch,
** strings, decimals in the fewest bytes, blocks ended by a 0 count. */
TEST(exact_datum_bytes) {
  A = dp_arena_new(0);
  const char *names[] = {"id", "name", "price", "tags", "ok"};
  const dp_type *types[] = {nn(T(DP_T_BIGINT)), T(DP_T_STRING), dp_type_decimal(A, 10, 2),
                            dp_type_array(A, nn(T(DP_T_INT))), nn(T(DP_T_BOOLEAN))};
  dp_schema *s = schema_of(5, names, types);
  dp_batch *b = dp_batch_new(s, 0);
  /* row 0: -1, "ab", 1.28, [1, -2], true */
  dp_vector_append_i64(b->cols[0], -1);
  dp_vector_append_str(b->cols[1], "ab", 2);
  dp_vector_append_dec(b->cols[2], 128);
  dp_vector_append_i64(b->cols[3]->children[0], 1);
  dp_vector_append_i64(b->cols[3]->children[0], -2);
  dp_vector_append_list(b->cols[3]);
  dp_vector_append_bool(b->cols[4], true);
  /* row 1: 64, NULL, -1.29, NULL, false */
  dp_vector_append_i64(b->cols[0], 64);
  dp_vector_append_null(b->cols[1]);
  dp_vector_append_dec(b->cols[2], -129);
  dp_vector_append_null(b->cols[3]);
  dp_vector_append_bool(b->cols[4], false);
  /* row 2: 0, "", 0, [], true */
  dp_vector_append_i64(b->cols[0], 0);
  dp_vector_append_str(b->cols[1], "", 0);
  dp_vector_append_dec(b->cols[2], 0);
  dp_vector_append_list(b->cols[3]);
  dp_vector_append_bool(b->cols[4], true);
  CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  dp_buf out = DP_BUF_INIT;
  CHECK_EQ(dp_avro_encode_row(b, 0, NULL, &out), DIPPER_OK);
  CHECK_STR(hex(&out), "01 02 04 61 62 02 04 00 80 02 04 02 03 00 01");
  out.len = 0;
  CHECK_EQ(dp_avro_encode_row(b, 1, NULL, &out), DIPPER_OK);
  CHECK_STR(hex(&out), "80 01 00 02 04 ff 7f 00 00");
  out.len = 0;
  CHECK_EQ(dp_avro_encode_row(b, 2, NULL, &out), DIPPER_OK);
  CHECK_STR(hex(&out), "00 02 00 02 02 00 02 00 01");
  /* a subset of the columns */
  out.len = 0;
  bool cols[5] = {true, false, false, false, true};
  CHECK_EQ(dp_avro_encode_row(b, 0, cols, &out), DIPPER_OK);
  CHECK_STR(hex(&out), "01 01");
  CHECK_EQ(dp_avro_encode_row(b, 3, NULL, &out), DIPPER_MISUSE);
  dp_buf_free(&out);
  dp_batch_free(b);
  dp_arena_free(A);
}

/* Encode every row of b, decode each datum into a fresh batch, and return it
** (NULL when a datum failed). */
static dp_batch *round_trip(const dp_batch *b) {
  dp_batch *back = dp_batch_new(b->schema, 0);
  dp_avro_decoder *dec = dp_avro_decoder_new(b->schema, NULL);
  CHECK(dec != NULL);
  if (!dec) return NULL;
  dp_buf out = DP_BUF_INIT, again = DP_BUF_INIT;
  bool ok = true;
  for (int64_t r = 0; r < b->nrows && ok; r++) {
    out.len = 0;
    CHECK_EQ(dp_avro_encode_row(b, r, NULL, &out), DIPPER_OK);
    dp_format_error err;
    int rc = decode_bytes(dec, back, out.data, out.len, &err);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) {
      fprintf(stderr, "row %lld: %s (byte %lld)\n", (long long)r, err.msg, (long long)err.offset);
      ok = false;
      break;
    }
    /* and the decoded row encodes to the same bytes */
    again.len = 0;
    dp_avro_encode_row(back, r, NULL, &again);
    CHECK(again.len == out.len && memcmp(again.data, out.data, out.len) == 0);
  }
  dp_buf_free(&out);
  dp_buf_free(&again);
  dp_avro_decoder_free(dec);
  if (!ok) {
    dp_batch_free(back);
    return NULL;
  }
  return back;
}

TEST(round_trip_every_scalar) {
  A = dp_arena_new(0);
  const char *names[] = {"b",  "i8", "i16", "i32", "i64", "f",  "d",  "dec",
                         "s",  "by", "dt",  "tm",  "ts",  "ts6", "ltz", "big"};
  const dp_type *types[] = {T(DP_T_BOOLEAN),
                            T(DP_T_TINYINT),
                            T(DP_T_SMALLINT),
                            T(DP_T_INT),
                            T(DP_T_BIGINT),
                            T(DP_T_FLOAT),
                            T(DP_T_DOUBLE),
                            dp_type_decimal(A, 20, 3),
                            T(DP_T_STRING),
                            T(DP_T_BYTES),
                            T(DP_T_DATE),
                            dp_type_timestamp(A, DP_T_TIME, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 6),
                            dp_type_timestamp(A, DP_T_TIMESTAMP_LTZ, 3),
                            nn(dp_type_decimal(A, 38, 0))};
  dp_schema *s = schema_of(16, names, types);
  dp_batch *b = dp_batch_new(s, 0);
  dp_i128 max38 = 1;
  for (int i = 0; i < 38; i++) max38 *= 10;
  max38 -= 1;
  /* row 0: the maxima; row 1: the minima; row 2: every nullable one NULL */
  for (int r = 0; r < 3; r++) {
    bool hi = r == 0;
    if (r == 2) {
      for (int c = 0; c < 15; c++) dp_vector_append_null(b->cols[c]);
      dp_vector_append_dec(b->cols[15], 0);
      continue;
    }
    dp_vector_append_bool(b->cols[0], hi);
    dp_vector_append_i64(b->cols[1], hi ? INT8_MAX : INT8_MIN);
    dp_vector_append_i64(b->cols[2], hi ? INT16_MAX : INT16_MIN);
    dp_vector_append_i64(b->cols[3], hi ? INT32_MAX : INT32_MIN);
    dp_vector_append_i64(b->cols[4], hi ? INT64_MAX : INT64_MIN);
    dp_vector_append_f64(b->cols[5], hi ? 1.5 : -3.25e-5);
    dp_vector_append_f64(b->cols[6], hi ? 1e308 : -0.1);
    dp_vector_append_dec(b->cols[7], hi ? (dp_i128)99999999999999999 * 1000 + 999 : -1);
    dp_vector_append_str(b->cols[8], hi ? "h\xc3\xa9llo" : "", hi ? 6 : 0);
    dp_vector_append_str(b->cols[9], hi ? "\x00\xff" : "", hi ? 2 : 0);
    dp_vector_append_i64(b->cols[10], hi ? 19723 : -1);
    dp_vector_append_i64(b->cols[11], hi ? INT64_C(45296789000) : 0);
    dp_vector_append_i64(b->cols[12], hi ? INT64_C(1704067200123000) : INT64_C(-1000));
    dp_vector_append_i64(b->cols[13], hi ? INT64_C(1704067200123456) : INT64_C(-1));
    dp_vector_append_i64(b->cols[14], hi ? INT64_C(1704067200123000) : 0);
    dp_vector_append_dec(b->cols[15], hi ? max38 : -max38);
  }
  CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  dp_batch *back = round_trip(b);
  CHECK(back != NULL);
  if (back) {
    CHECK_EQ(back->nrows, 3);
    CHECK_STR(json_row(back, 0),
              "{\"b\":true,\"i8\":127,\"i16\":32767,\"i32\":2147483647,"
              "\"i64\":9223372036854775807,\"f\":1.5,\"d\":1e+308,"
              "\"dec\":99999999999999999.999,\"s\":\"h\xc3\xa9llo\",\"by\":\"AP8=\","
              "\"dt\":\"2024-01-01\",\"tm\":\"12:34:56.789\",\"ts\":\"2024-01-01 00:00:00.123\","
              "\"ts6\":\"2024-01-01 00:00:00.123456\",\"ltz\":\"2024-01-01 00:00:00.123Z\","
              "\"big\":99999999999999999999999999999999999999}");
    CHECK_STR(json_row(back, 1),
              "{\"b\":false,\"i8\":-128,\"i16\":-32768,\"i32\":-2147483648,"
              "\"i64\":-9223372036854775808,\"f\":-3.25e-05,\"d\":-0.1,\"dec\":-0.001,\"s\":\"\","
              "\"by\":\"\",\"dt\":\"1969-12-31\",\"tm\":\"00:00:00.000\","
              "\"ts\":\"1969-12-31 23:59:59.999\",\"ts6\":\"1969-12-31 23:59:59.999999\","
              "\"ltz\":\"1970-01-01 00:00:00.000Z\","
              "\"big\":-99999999999999999999999999999999999999}");
    CHECK_STR(json_row(back, 2),
              "{\"b\":null,\"i8\":null,\"i16\":null,\"i32\":null,\"i64\":null,\"f\":null,"
              "\"d\":null,\"dec\":null,\"s\":null,\"by\":null,\"dt\":null,\"tm\":null,"
              "\"ts\":null,\"ts6\":null,\"ltz\":null,\"big\":0}");
  }
  dp_batch_free(back);
  dp_batch_free(b);
  dp_arena_free(A);
}

TEST(round_trip_nested) {
  A = dp_arena_new(0);
  const dp_type *geo = row2("lat", nn(T(DP_T_DOUBLE)), "tags", dp_type_array(A, T(DP_T_STRING)));
  const char *names[] = {"id", "addr", "scores", "attrs", "grid"};
  const dp_type *types[] = {
      nn(T(DP_T_INT)),
      row2("city", T(DP_T_STRING), "geo", geo),
      dp_type_array(A, row2("k", T(DP_T_STRING), "v", nn(T(DP_T_BIGINT)))),
      dp_type_map(A, nn(T(DP_T_STRING)), dp_type_array(A, T(DP_T_INT))),
      dp_type_array(A, dp_type_array(A, nn(dp_type_decimal(A, 5, 2)))),
  };
  dp_schema *s = schema_of(5, names, types);
  dp_batch *b = dp_batch_new(s, 0);
  const char *rows[] = {
      "{\"id\":1,\"addr\":{\"city\":\"Oslo\",\"geo\":{\"lat\":59.9,\"tags\":[\"n\",null,\"\"]}},"
      "\"scores\":[{\"k\":\"a\",\"v\":-1},null,{\"k\":null,\"v\":9223372036854775807}],"
      "\"attrs\":{\"x\":[1,null,-3],\"y\":null,\"\":[]},\"grid\":[[1.25,-999.99],[],null]}",
      "{\"id\":-2,\"addr\":null,\"scores\":[],\"attrs\":{},\"grid\":[]}",
      "{\"id\":0,\"addr\":{\"city\":null,\"geo\":null},\"scores\":null,\"attrs\":null,"
      "\"grid\":null}",
      "{\"id\":3,\"addr\":{\"city\":\"\",\"geo\":{\"lat\":0,\"tags\":null}},\"scores\":[null],"
      "\"attrs\":{\"k\":[null]},\"grid\":[[0]]}",
  };
  dp_json_decoder *jd = dp_json_decoder_new(s, NULL, NULL);
  for (int i = 0; i < 4; i++) {
    dp_format_error err;
    int rc = dp_json_decode(jd, rows[i], strlen(rows[i]), b, &err);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) fprintf(stderr, "%s\n", err.msg);
  }
  dp_json_decoder_free(jd);
  CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  dp_batch *back = round_trip(b);
  CHECK(back != NULL);
  if (back) {
    CHECK_EQ(back->nrows, 4);
    CHECK_STR(json_row(back, 0),
              "{\"id\":1,\"addr\":{\"city\":\"Oslo\",\"geo\":{\"lat\":59.9,\"tags\":[\"n\",null,"
              "\"\"]}},\"scores\":[{\"k\":\"a\",\"v\":-1},null,{\"k\":null,\"v\":"
              "9223372036854775807}],\"attrs\":{\"x\":[1,null,-3],\"y\":null,\"\":[]},"
              "\"grid\":[[1.25,-999.99],[],null]}");
    CHECK_STR(json_row(back, 1), rows[1]);
    CHECK_STR(json_row(back, 2),
              "{\"id\":0,\"addr\":{\"city\":null,\"geo\":null},\"scores\":null,\"attrs\":null,"
              "\"grid\":null}");
    CHECK_STR(json_row(back, 3),
              "{\"id\":3,\"addr\":{\"city\":\"\",\"geo\":{\"lat\":0,\"tags\":null}},"
              "\"scores\":[null],\"attrs\":{\"k\":[null]},\"grid\":[[0.00]]}");
  }
  dp_batch_free(back);
  dp_batch_free(b);
  dp_arena_free(A);
}

/* Blocks with a negative count (and their byte size), non-minimal varints
** and decimals with extra sign bytes: what other writers may send. */
TEST(decode_other_writers_forms) {
  A = dp_arena_new(0);
  const char *names[] = {"a", "n", "d"};
  const dp_type *types[] = {nn(dp_type_array(A, nn(T(DP_T_INT)))), nn(T(DP_T_BIGINT)),
                            nn(dp_type_decimal(A, 4, 1))};
  dp_schema *s = schema_of(3, names, types);
  dp_batch *b = dp_batch_new(s, 0);
  dp_avro_decoder *dec = dp_avro_decoder_new(s, NULL);
  dp_format_error err;
  /* [1,2 | 3] in two blocks, the first with count -2 and size 2;
  ** n = 1 as the two bytes 82 00; d = -12.3 as ff ff ff 85 */
  static const char d1[] = "\x03\x04\x02\x04\x02\x06\x00\x82\x00\x08\xff\xff\xff\x85";
  CHECK_EQ(decode_bytes(dec, b, d1, sizeof d1 - 1, &err), DIPPER_OK);
  CHECK_STR(json_row(b, 0), "{\"a\":[1,2,3],\"n\":1,\"d\":-12.3}");
  /* 18 bytes of decimal: 17 of them sign extension */
  char d2[32] = "\x00\x00\x24";
  memset(d2 + 3, 0, 17);
  d2[20] = 0x05;
  CHECK_EQ(decode_bytes(dec, b, d2, 21, &err), DIPPER_OK);
  CHECK_STR(json_row(b, 1), "{\"a\":[],\"n\":0,\"d\":0.5}");
  dp_avro_decoder_free(dec);
  dp_batch_free(b);
  dp_arena_free(A);
}

/* One bad datum: DIPPER_DATA, the message, where, and the batch unchanged. */
static void check_bad(dp_avro_decoder *dec, dp_batch *b, const char *p, size_t n,
                      const char *msg, int64_t offset) {
  int64_t before[8];
  for (int i = 0; i < b->ncols; i++) before[i] = b->cols[i]->length;
  static dp_buf snap = DP_BUF_INIT;
  snap.len = 0;
  for (int64_t r = 0; r < b->nrows; r++) dp_json_encode_row(b, r, &snap);
  char *was = strdup(dp_buf_cstr(&snap));
  dp_format_error err;
  int rc = dp_avro_decode(dec, p, n, b, &err);
  CHECK_EQ(rc, DIPPER_DATA);
  CHECK_STR(err.msg, msg);
  CHECK_EQ(err.offset, offset);
  for (int i = 0; i < b->ncols; i++) CHECK_EQ(b->cols[i]->length, before[i]);
  snap.len = 0;
  for (int64_t r = 0; r < b->nrows; r++) dp_json_encode_row(b, r, &snap);
  CHECK_STR(dp_buf_cstr(&snap), was);
  /* the children too: a good row after it lands where it should */
  free(was);
}

TEST(malformed_datums) {
  A = dp_arena_new(0);
  const char *names[] = {"id", "name", "flag", "tags", "small", "price", "m"};
  const dp_type *types[] = {nn(T(DP_T_BIGINT)),
                            T(DP_T_STRING),
                            nn(T(DP_T_BOOLEAN)),
                            nn(dp_type_array(A, nn(T(DP_T_INT)))),
                            nn(T(DP_T_TINYINT)),
                            nn(dp_type_decimal(A, 4, 2)),
                            nn(dp_type_map(A, nn(T(DP_T_STRING)), row2("q", T(DP_T_INT), NULL, NULL)))};
  dp_schema *s = schema_of(7, names, types);
  dp_batch *b = dp_batch_new(s, 0);
  dp_avro_decoder *dec = dp_avro_decoder_new(s, NULL);
  dp_format_error err;
  /* a good row first: 5, "x", true, [7], -3, 12.34, {"k": {q: 1}} */
  static const char good[] = "\x0a\x02\x02x\x01\x02\x0e\x00\x05\x04\x04\xd2\x02\x02k\x02\x02\x02\x00";
  CHECK_EQ(decode_bytes(dec, b, good, sizeof good - 1, &err), DIPPER_OK);
  if (b->nrows != 1) fprintf(stderr, "%s at %lld\n", err.msg, (long long)err.offset);
  CHECK_STR(json_row(b, 0), "{\"id\":5,\"name\":\"x\",\"flag\":true,\"tags\":[7],\"small\":-3,"
                            "\"price\":12.34,\"m\":{\"k\":{\"q\":1}}}");
  /* everything after the prefix "id, name, flag" is valid */
#define PRE "\x0a\x02\x02x\x01"
#define BAD(lit, msg, off) check_bad(dec, b, lit, sizeof lit - 1, msg, off)
  BAD("\x80", "field `id`: the datum ends inside a number", 0);
  BAD("", "field `id`: the datum ends inside a number", 0);
  BAD("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
      "field `id`: a number longer than 10 bytes or beyond 64 bits", 0);
  BAD("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02",
      "field `id`: a number longer than 10 bytes or beyond 64 bits", 0);
  BAD("\x0a\x02\x01", "field `name`: a negative length -1", 2);
  BAD("\x0a\x02\x0a" "ab", "field `name`: a length of 5 bytes, but only 2 are left", 2);
  BAD("\x0a\x04", "field `name`: union branch 2, but the union [\"null\", ...] has branches 0 and 1",
      1);
  BAD("\x0a\x02\x02\xff", "field `name`: a string that is not UTF-8 (byte 0xff); declare the "
                          "column BYTES for binary data", 3);
  BAD("\x0a\x02\x02x\x02", "field `flag`: a boolean byte 0x02 (must be 0 or 1)", 4);
  BAD("\x0a\x02\x02x", "field `flag`: the datum ends where a boolean was expected", 4);
  BAD(PRE "\x80\x80\x80\x80\x80\x80\x02",
      "field `tags`: a block of 4398046511104 items, but only 0 bytes are left", 5);
  BAD(PRE "\x06\x02\x02", "field `tags`: a block of 3 items, but only 2 bytes are left", 5);
  BAD(PRE "\x02\x02", "field `tags`: the datum ends inside a number", 7);
  BAD(PRE "\x03\x06\x02\x00", "field `tags`: a block size of 3 bytes, but 2 are left", 6);
  BAD(PRE "\x03\x02\x02\x04\x00", "field `tags`: the block's size says 1 bytes, its items took 2",
      7);
  BAD(PRE "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
      "field `tags`: a block count beyond 64 bits", 5);
  BAD(PRE "\x00\xd8\x04", "field `small`: 300 does not fit TINYINT", 6);
  BAD(PRE "\x00\x00\x04\x27\x10", "field `price`: the decimal's unscaled value has more than 4 "
                                  "digits: it does not fit DECIMAL(4, 2)", 7);
  BAD(PRE "\x00\x00\x00", "field `price`: a decimal with no bytes (zero is one byte 0x00)", 7);
  BAD(PRE "\x00\x00\x02\x00\x02\x02k\x06",
      "field `m.k`: union branch 3, but the union [\"null\", ...] has branches 0 and 1", 12);
  BAD(PRE "\x00\x00\x02\x00\x02\x02k\x02\x04\x00",
      "field `m.k.q`: union branch 2, but the union [\"null\", ...] has branches 0 and 1", 13);
  BAD(PRE "\x00\x00\x02\x00\x02\x02\xc3\x00",
      "field `m`: a map key that is not UTF-8 (byte 0xc3)", 11);
  /* the first columns of the row decoded, then the failure: all undone */
  BAD(PRE "\x02\x0e\x00\x05\x04\x04\xd2\x02\x02k\x02\x02\x02",
      "field `m`: the datum ends inside a number", 18);
  BAD(PRE "\x02\x0e\x00\x05\x04\x04\xd2\x02\x02k\x02\x02\x02\x00\x00",
      "1 byte after the last field `m`: the record is not one datum of the table's schema", 19);
#undef BAD
#undef PRE
  /* a good row after all that lands as row 1, children in step */
  CHECK_EQ(decode_bytes(dec, b, good, sizeof good - 1, &err), DIPPER_OK);
  CHECK_EQ(b->nrows, 2);
  CHECK_STR(json_row(b, 1), "{\"id\":5,\"name\":\"x\",\"flag\":true,\"tags\":[7],\"small\":-3,"
                            "\"price\":12.34,\"m\":{\"k\":{\"q\":1}}}");
  CHECK_EQ(b->cols[3]->children[0]->length, 2);
  dp_avro_decoder_free(dec);
  dp_batch_free(b);
  dp_arena_free(A);
}

/* Values nested deeper than 64 levels: refused with the path. */
TEST(too_deep_nesting) {
  A = dp_arena_new(0);
  const dp_type *t = nn(T(DP_T_INT));
  for (int i = 0; i < 70; i++) t = nn(dp_type_array(A, t));
  const char *names[] = {"deep"};
  dp_schema *s = schema_of(1, names, &t);
  dp_batch *b = dp_batch_new(s, 0);
  dp_avro_decoder *dec = dp_avro_decoder_new(s, NULL);
  CHECK(dec != NULL);
  /* every level empty is fine: [] */
  dp_format_error err;
  CHECK_EQ(decode_bytes(dec, b, "\x00", 1, &err), DIPPER_OK);
  /* one element at each level: 70 blocks of 1 */
  char deep[200];
  for (int i = 0; i < 70; i++) deep[i] = 0x02;
  CHECK_EQ(dp_avro_decode(dec, deep, 70, b, &err), DIPPER_DATA);
  CHECK_EQ(err.offset, 64);
  CHECK(strncmp(err.msg, "field `deep[0][0][0]", 20) == 0);
  CHECK_CONTAINS(err.msg, "[0]...`: values nested deeper than 64 levels");
  CHECK_EQ(b->cols[0]->length, 1);
  dp_avro_decoder_free(dec);
  dp_batch_free(b);
  dp_arena_free(A);
}

/* Only the decoded columns come from the datum; the others are the caller's. */
TEST(decode_some_columns) {
  A = dp_arena_new(0);
  const char *names[] = {"a", "meta", "b"};
  const dp_type *types[] = {nn(T(DP_T_INT)), T(DP_T_INTERVAL_DT), T(DP_T_STRING)};
  dp_schema *s = schema_of(3, names, types);
  bool cols[3] = {true, false, true};
  dp_avro_decoder *dec = dp_avro_decoder_new(s, cols);
  CHECK(dec != NULL);
  dp_batch *b = dp_batch_new(s, 0);
  dp_format_error err;
  CHECK_EQ(dp_avro_decode(dec, "\x54\x02\x02z", 4, b, &err), DIPPER_OK);
  CHECK_EQ(b->cols[0]->length, 1);
  CHECK_EQ(b->cols[1]->length, 0);
  CHECK_EQ(b->cols[2]->length, 1);
  dp_vector_append_i64(b->cols[1], 7);
  CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  CHECK_STR(json_row(b, 0), "{\"a\":42,\"meta\":7,\"b\":\"z\"}");
  dp_buf out = DP_BUF_INIT;
  CHECK_EQ(dp_avro_encode_row(b, 0, cols, &out), DIPPER_OK);
  CHECK_STR(hex(&out), "54 02 02 7a");
  dp_buf_free(&out);
  dp_avro_decoder_free(dec);
  dp_batch_free(b);
  dp_arena_free(A);
}

/* A STRING that is not UTF-8 is written with U+FFFD, so that it reads back. */
TEST(encode_repairs_strings) {
  A = dp_arena_new(0);
  const char *names[] = {"s"};
  const dp_type *types[] = {nn(T(DP_T_STRING))};
  dp_schema *s = schema_of(1, names, types);
  dp_batch *b = dp_batch_new(s, 0);
  dp_vector_append_str(b->cols[0], "a\xff" "b", 3);
  dp_batch_sync(b);
  dp_buf out = DP_BUF_INIT;
  CHECK_EQ(dp_avro_encode_row(b, 0, NULL, &out), DIPPER_OK);
  CHECK_STR(hex(&out), "0a 61 ef bf bd 62");
  dp_buf_free(&out);
  dp_batch_free(b);
  dp_arena_free(A);
}

/* Rough decode speed of a typical 6-column record: printed, not asserted. */
TEST(decode_speed) {
  A = dp_arena_new(0);
  const char *names[] = {"id", "user", "amount", "ts", "qty", "note"};
  const dp_type *types[] = {nn(T(DP_T_BIGINT)), T(DP_T_STRING), T(DP_T_DOUBLE),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 3), T(DP_T_INT), T(DP_T_STRING)};
  dp_schema *s = schema_of(6, names, types);
  dp_batch *b = dp_batch_new(s, 0);
  dp_vector_append_i64(b->cols[0], 123456789);
  dp_vector_append_str(b->cols[1], "user_4711", 9);
  dp_vector_append_f64(b->cols[2], 99.95);
  dp_vector_append_i64(b->cols[3], INT64_C(1704067200123000));
  dp_vector_append_i64(b->cols[4], 3);
  dp_vector_append_null(b->cols[5]);
  dp_batch_sync(b);
  dp_buf rec = DP_BUF_INIT;
  dp_avro_encode_row(b, 0, NULL, &rec);
  dp_batch_clear(b);
  dp_avro_decoder *dec = dp_avro_decoder_new(s, NULL);
  const int n = 1000000;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    if ((i & 65535) == 0) dp_batch_clear(b);
    bad += dp_avro_decode(dec, rec.data, rec.len, b, NULL) != DIPPER_OK;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("avro decode: %d records of %zu bytes in %.3f s = %.2f M rows/s\n", n, rec.len, secs,
         n / secs / 1e6);
  CHECK_EQ(bad, 0);
  dp_buf_free(&rec);
  dp_avro_decoder_free(dec);
  dp_batch_free(b);
  dp_arena_free(A);
}

int main(void) { return RUN_TESTS(); }
