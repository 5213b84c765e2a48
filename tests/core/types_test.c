/*
** types_test.c — the type system: singletons and builders, equality, common
** types (numeric widening, DECIMAL promotion, strings, timestamps), the
** coercion and cast matrices, SQL spelling, Arrow formats and schemas.
*/
#include <string.h>

#include "core/types.h"
#include "test.h"

static dp_arena *A;

static const dp_type *T(dp_type_kind k) { return dp_type_of(k); }
static const dp_type *DEC(int p, int s) { return dp_type_decimal(A, p, s); }
static const dp_type *TS(int p) { return dp_type_timestamp(A, DP_T_TIMESTAMP, p); }
static const dp_type *LTZ(int p) { return dp_type_timestamp(A, DP_T_TIMESTAMP_LTZ, p); }
static const dp_type *VARCHAR(uint32_t n) {
  dp_type *t = dp_type_new(A, DP_T_STRING);
  t->length = n;
  return t;
}
static const char *fmt(const dp_type *t) { return t ? dp_type_format(A, t) : "(none)"; }
static const char *common(const dp_type *x, const dp_type *y) {
  return fmt(dp_type_common(A, x, y));
}

TEST(singletons_have_default_parameters) {
  CHECK_STR(fmt(T(DP_T_DECIMAL)), "DECIMAL(10, 0)");
  CHECK_STR(fmt(T(DP_T_TIMESTAMP)), "TIMESTAMP(3)");
  CHECK_STR(fmt(T(DP_T_TIMESTAMP_LTZ)), "TIMESTAMP_LTZ(3)");
  CHECK(T(DP_T_INT) == T(DP_T_INT));
  CHECK(!T(DP_T_INT)->not_null);
  CHECK(T(DP_T_ROW) == NULL);
  CHECK(T(DP_T_COUNT_) == NULL);
}

TEST(builders_validate_parameters) {
  CHECK(DEC(38, 38) != NULL);
  CHECK(DEC(39, 0) == NULL);
  CHECK(DEC(0, 0) == NULL);
  CHECK(DEC(5, 6) == NULL);
  CHECK(TS(9) != NULL);
  CHECK(TS(10) == NULL);
  CHECK(dp_type_timestamp(A, DP_T_INT, 3) == NULL);
  const dp_type *nn = dp_type_with_nullability(A, T(DP_T_INT), true);
  CHECK(nn->not_null && !T(DP_T_INT)->not_null);
  CHECK(dp_type_with_nullability(A, nn, true) == nn);
}

TEST(equality_ignores_nullability_only) {
  CHECK(dp_type_equal(DEC(10, 2), DEC(10, 2)));
  CHECK(!dp_type_equal(DEC(10, 2), DEC(10, 3)));
  CHECK(!dp_type_equal(TS(3), TS(6)));
  CHECK(!dp_type_equal(TS(3), LTZ(3)));
  CHECK(!dp_type_equal(VARCHAR(5), T(DP_T_STRING)));
  CHECK(dp_type_equal(dp_type_with_nullability(A, T(DP_T_INT), true), T(DP_T_INT)));
  dp_field f1[] = {{"a", T(DP_T_INT)}, {"b", T(DP_T_STRING)}};
  dp_field f2[] = {{"A", T(DP_T_INT)}, {"b", T(DP_T_STRING)}};
  dp_field f3[] = {{"a", T(DP_T_INT)}, {"c", T(DP_T_STRING)}};
  CHECK(dp_type_equal(dp_type_row(A, 2, f1), dp_type_row(A, 2, f2)));
  CHECK(!dp_type_equal(dp_type_row(A, 2, f1), dp_type_row(A, 2, f3)));
  CHECK(!dp_type_equal(dp_type_row(A, 2, f1), dp_type_row(A, 1, f1)));
  CHECK(dp_type_equal(dp_type_array(A, T(DP_T_INT)), dp_type_array(A, T(DP_T_INT))));
  CHECK(!dp_type_equal(dp_type_array(A, T(DP_T_INT)), dp_type_array(A, T(DP_T_BIGINT))));
}

TEST(predicates) {
  CHECK(dp_type_is_integer(T(DP_T_TINYINT)) && dp_type_is_integer(T(DP_T_BIGINT)));
  CHECK(!dp_type_is_integer(T(DP_T_DECIMAL)));
  CHECK(dp_type_is_numeric(T(DP_T_DECIMAL)) && dp_type_is_numeric(T(DP_T_DOUBLE)));
  CHECK(!dp_type_is_numeric(T(DP_T_BOOLEAN)) && !dp_type_is_numeric(T(DP_T_STRING)));
  CHECK(dp_type_is_temporal(T(DP_T_DATE)) && dp_type_is_temporal(T(DP_T_TIME)));
  CHECK(dp_type_is_temporal(T(DP_T_TIMESTAMP_LTZ)) && !dp_type_is_temporal(T(DP_T_INTERVAL_DT)));
  CHECK(dp_type_is_timestamp(T(DP_T_TIMESTAMP)) && !dp_type_is_timestamp(T(DP_T_DATE)));
  CHECK(dp_type_is_interval(T(DP_T_INTERVAL_YM)) && !dp_type_is_interval(T(DP_T_BIGINT)));
  CHECK(dp_type_is_string(VARCHAR(3)) && !dp_type_is_string(T(DP_T_BYTES)));
  CHECK(!dp_type_is_numeric(NULL));
}

TEST(common_numeric_widening) {
  CHECK_STR(common(T(DP_T_TINYINT), T(DP_T_SMALLINT)), "SMALLINT");
  CHECK_STR(common(T(DP_T_INT), T(DP_T_BIGINT)), "BIGINT");
  CHECK_STR(common(T(DP_T_BIGINT), T(DP_T_INT)), "BIGINT");
  CHECK_STR(common(T(DP_T_INT), T(DP_T_FLOAT)), "FLOAT");
  CHECK_STR(common(T(DP_T_FLOAT), T(DP_T_DOUBLE)), "DOUBLE");
  CHECK_STR(common(DEC(10, 2), T(DP_T_DOUBLE)), "DOUBLE");
  CHECK_STR(common(DEC(10, 2), T(DP_T_FLOAT)), "FLOAT");
}

TEST(common_decimal_promotion) {
  CHECK_STR(common(DEC(10, 2), DEC(5, 4)), "DECIMAL(12, 4)");
  CHECK_STR(common(DEC(5, 0), DEC(5, 0)), "DECIMAL(5, 0)");
  /* an integer is the DECIMAL of its digits */
  CHECK_STR(common(T(DP_T_INT), DEC(5, 2)), "DECIMAL(12, 2)");
  CHECK_STR(common(T(DP_T_BIGINT), DEC(3, 1)), "DECIMAL(20, 1)");
  CHECK_STR(common(T(DP_T_TINYINT), DEC(2, 0)), "DECIMAL(3, 0)");
  CHECK_STR(common(DEC(4, 3), T(DP_T_SMALLINT)), "DECIMAL(8, 3)");
  /* over 38 digits: integer digits kept, the scale gives way */
  CHECK_STR(common(DEC(38, 10), DEC(38, 0)), "DECIMAL(38, 0)");
  CHECK_STR(common(DEC(30, 10), DEC(30, 0)), "DECIMAL(38, 8)");
}

TEST(common_strings_temporal_null) {
  CHECK_STR(common(VARCHAR(10), T(DP_T_STRING)), "STRING");
  CHECK_STR(common(VARCHAR(10), VARCHAR(20)), "VARCHAR(20)");
  CHECK_STR(common(T(DP_T_STRING), T(DP_T_INT)), "(none)");
  CHECK_STR(common(T(DP_T_BYTES), T(DP_T_STRING)), "(none)");
  CHECK_STR(common(TS(3), TS(6)), "TIMESTAMP(6)");
  CHECK_STR(common(TS(9), TS(0)), "TIMESTAMP(9)");
  CHECK_STR(common(LTZ(3), LTZ(6)), "TIMESTAMP_LTZ(6)");
  CHECK_STR(common(TS(3), LTZ(6)), "TIMESTAMP_LTZ(6)");
  CHECK_STR(common(T(DP_T_DATE), TS(3)), "TIMESTAMP(3)");
  CHECK_STR(common(LTZ(0), T(DP_T_DATE)), "TIMESTAMP_LTZ(0)");
  CHECK_STR(common(T(DP_T_DATE), T(DP_T_TIME)), "(none)");
  CHECK_STR(common(T(DP_T_NULL), T(DP_T_INT)), "INT");
  CHECK_STR(common(DEC(7, 2), T(DP_T_NULL)), "DECIMAL(7, 2)");
  CHECK_STR(common(T(DP_T_BOOLEAN), T(DP_T_INT)), "(none)");
  CHECK_STR(common(T(DP_T_INTERVAL_DT), T(DP_T_INTERVAL_YM)), "(none)");
  CHECK_STR(common(T(DP_T_INTERVAL_DT), T(DP_T_INTERVAL_DT)), "INTERVAL DAY TO SECOND");
}

TEST(common_nullability) {
  const dp_type *nn_int = dp_type_with_nullability(A, T(DP_T_INT), true);
  const dp_type *nn_big = dp_type_with_nullability(A, T(DP_T_BIGINT), true);
  CHECK_STR(common(nn_int, nn_big), "BIGINT NOT NULL");
  CHECK_STR(common(nn_int, T(DP_T_BIGINT)), "BIGINT");
  CHECK_STR(common(nn_int, nn_int), "INT NOT NULL");
  CHECK_STR(common(T(DP_T_NULL), nn_int), "INT"); /* NULL makes it nullable */
}

TEST(common_composites_need_equal_shapes) {
  dp_field f1[] = {{"a", T(DP_T_INT)}};
  dp_field f2[] = {{"a", T(DP_T_BIGINT)}};
  const dp_type *r1 = dp_type_row(A, 1, f1), *r2 = dp_type_row(A, 1, f2);
  CHECK_STR(common(r1, r1), "ROW<a INT>");
  CHECK_STR(common(r1, r2), "(none)");
  CHECK_STR(common(dp_type_array(A, T(DP_T_INT)), dp_type_array(A, T(DP_T_INT))), "ARRAY<INT>");
  CHECK_STR(common(dp_type_array(A, T(DP_T_INT)), T(DP_T_INT)), "(none)");
  const dp_type *m = dp_type_map(A, T(DP_T_STRING), T(DP_T_INT));
  CHECK_STR(common(m, m), "MAP<STRING, INT>");
}

TEST(coercion_widens_only) {
  CHECK(dp_type_can_coerce(T(DP_T_INT), T(DP_T_BIGINT)));
  CHECK(!dp_type_can_coerce(T(DP_T_BIGINT), T(DP_T_INT)));
  CHECK(dp_type_can_coerce(T(DP_T_INT), DEC(12, 2)));
  CHECK(dp_type_can_coerce(DEC(12, 2), T(DP_T_DOUBLE)));
  CHECK(!dp_type_can_coerce(T(DP_T_DOUBLE), DEC(12, 2)));
  CHECK(dp_type_can_coerce(T(DP_T_NULL), T(DP_T_DATE)));
  CHECK(dp_type_can_coerce(VARCHAR(5), T(DP_T_STRING)));
  CHECK(dp_type_can_coerce(VARCHAR(5), VARCHAR(6)));
  CHECK(!dp_type_can_coerce(T(DP_T_STRING), VARCHAR(6)));
  CHECK(!dp_type_can_coerce(T(DP_T_STRING), T(DP_T_INT)));
  CHECK(!dp_type_can_coerce(T(DP_T_INT), T(DP_T_STRING)));
  CHECK(dp_type_can_coerce(T(DP_T_DATE), TS(3)));
  CHECK(dp_type_can_coerce(TS(3), TS(9)));
  CHECK(dp_type_can_coerce(TS(3), LTZ(3)));
  CHECK(!dp_type_can_coerce(LTZ(3), TS(3)));
  CHECK(!dp_type_can_coerce(TS(3), T(DP_T_DATE)));
  CHECK(!dp_type_can_coerce(T(DP_T_BOOLEAN), T(DP_T_INT)));
  CHECK(dp_type_can_coerce(dp_type_array(A, T(DP_T_INT)), dp_type_array(A, T(DP_T_BIGINT))));
  CHECK(!dp_type_can_coerce(dp_type_array(A, T(DP_T_BIGINT)), dp_type_array(A, T(DP_T_INT))));
}

TEST(common_type_is_reachable_by_coercion) {
  const dp_type *all[] = {T(DP_T_TINYINT), T(DP_T_SMALLINT), T(DP_T_INT), T(DP_T_BIGINT),
                          DEC(10, 2),      DEC(38, 5),        T(DP_T_FLOAT), T(DP_T_DOUBLE),
                          VARCHAR(3),      T(DP_T_STRING),    T(DP_T_DATE),  TS(3),
                          TS(6),           LTZ(3),            T(DP_T_NULL),  T(DP_T_BOOLEAN)};
  int n = (int)(sizeof all / sizeof all[0]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      const dp_type *c = dp_type_common(A, all[i], all[j]);
      if (!c) continue;
      /* symmetric, and both sides reach it */
      CHECK(dp_type_equal(c, dp_type_common(A, all[j], all[i])));
      CHECK(dp_type_can_coerce(all[i], c));
      CHECK(dp_type_can_coerce(all[j], c));
    }
}

TEST(cast_matrix) {
  const dp_type *row = dp_type_row(A, 1, (dp_field[]){{"a", T(DP_T_INT)}});
  const dp_type *row2 = dp_type_row(A, 1, (dp_field[]){{"b", T(DP_T_STRING)}});
  struct {
    const dp_type *from, *to;
    bool ok;
  } cases[] = {
      {T(DP_T_INT), T(DP_T_DOUBLE), true},      {T(DP_T_DOUBLE), T(DP_T_TINYINT), true},
      {DEC(10, 2), T(DP_T_INT), true},          {T(DP_T_INT), T(DP_T_STRING), true},
      {T(DP_T_STRING), T(DP_T_INT), true},      {T(DP_T_STRING), TS(3), true},
      {T(DP_T_STRING), T(DP_T_DATE), true},     {T(DP_T_STRING), T(DP_T_INTERVAL_DT), true},
      {TS(3), T(DP_T_STRING), true},            {TS(3), T(DP_T_DATE), true},
      {T(DP_T_DATE), LTZ(3), true},             {TS(3), T(DP_T_TIME), true},
      {T(DP_T_BOOLEAN), T(DP_T_INT), true},     {T(DP_T_INT), T(DP_T_BOOLEAN), true},
      {T(DP_T_BYTES), T(DP_T_STRING), true},    {T(DP_T_STRING), T(DP_T_BYTES), true},
      {T(DP_T_NULL), row, true},                {row, T(DP_T_STRING), true},
      {row, row2, true},                        {row, T(DP_T_INT), false},
      {T(DP_T_INT), row, false},                {T(DP_T_STRING), row, false},
      {T(DP_T_BYTES), T(DP_T_INT), false},      {T(DP_T_INT), T(DP_T_BYTES), false},
      {T(DP_T_DATE), T(DP_T_INT), false},       {T(DP_T_INT), TS(3), false},
      {T(DP_T_DATE), T(DP_T_TIME), false},      {T(DP_T_BOOLEAN), T(DP_T_DATE), false},
      {T(DP_T_INTERVAL_DT), T(DP_T_INTERVAL_YM), false},
      {dp_type_array(A, T(DP_T_INT)), dp_type_array(A, T(DP_T_STRING)), true},
      {dp_type_array(A, row), dp_type_array(A, T(DP_T_INT)), false},
      {dp_type_array(A, T(DP_T_INT)), T(DP_T_INT), false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bool got = dp_type_can_cast(cases[i].from, cases[i].to);
    if (got != cases[i].ok)
      fprintf(stderr, "  cast %s -> %s: expected %d\n", fmt(cases[i].from), fmt(cases[i].to),
              cases[i].ok);
    CHECK(got == cases[i].ok);
  }
}

TEST(format_every_type) {
  struct {
    const dp_type *t;
    const char *text;
  } cases[] = {
      {T(DP_T_NULL), "NULL"},
      {T(DP_T_BOOLEAN), "BOOLEAN"},
      {T(DP_T_TINYINT), "TINYINT"},
      {T(DP_T_SMALLINT), "SMALLINT"},
      {T(DP_T_INT), "INT"},
      {T(DP_T_BIGINT), "BIGINT"},
      {T(DP_T_FLOAT), "FLOAT"},
      {T(DP_T_DOUBLE), "DOUBLE"},
      {DEC(10, 2), "DECIMAL(10, 2)"},
      {T(DP_T_STRING), "STRING"},
      {VARCHAR(20), "VARCHAR(20)"},
      {T(DP_T_BYTES), "BYTES"},
      {T(DP_T_DATE), "DATE"},
      {T(DP_T_TIME), "TIME(0)"},
      {TS(3), "TIMESTAMP(3)"},
      {LTZ(6), "TIMESTAMP_LTZ(6)"},
      {T(DP_T_INTERVAL_DT), "INTERVAL DAY TO SECOND"},
      {T(DP_T_INTERVAL_YM), "INTERVAL YEAR TO MONTH"},
      {dp_type_array(A, T(DP_T_INT)), "ARRAY<INT>"},
      {dp_type_map(A, T(DP_T_STRING), T(DP_T_INT)), "MAP<STRING, INT>"},
      {dp_type_row(A, 2, (dp_field[]){{"a", T(DP_T_INT)}, {"b", T(DP_T_STRING)}}),
       "ROW<a INT, b STRING>"},
      {dp_type_row(A, 1, (dp_field[]){{"my col", T(DP_T_INT)}}), "ROW<`my col` INT>"},
      {dp_type_row(A, 0, NULL), "ROW<>"},
      {dp_type_with_nullability(A, T(DP_T_BIGINT), true), "BIGINT NOT NULL"},
      {dp_type_array(A, dp_type_with_nullability(A, DEC(5, 1), true)),
       "ARRAY<DECIMAL(5, 1) NOT NULL>"},
      {dp_type_map(A, T(DP_T_STRING),
                   dp_type_row(A, 1, (dp_field[]){{"ts", LTZ(3)}})),
       "MAP<STRING, ROW<ts TIMESTAMP_LTZ(3)>>"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    CHECK_STR(fmt(cases[i].t), cases[i].text);
}

TEST(print_truncates_like_snprintf) {
  char buf[8];
  size_t n = dp_type_print(buf, sizeof buf, DEC(10, 2));
  CHECK_EQ(n, strlen("DECIMAL(10, 2)"));
  CHECK_STR(buf, "DECIMAL");
  CHECK_EQ(dp_type_print(NULL, 0, T(DP_T_INT)), 3);
  /* long spellings go through the arena in one piece */
  dp_field fields[20];
  char names[20][24];
  for (int i = 0; i < 20; i++) {
    snprintf(names[i], sizeof names[i], "column_%d", i);
    fields[i].name = names[i];
    fields[i].type = T(DP_T_BIGINT);
  }
  const char *s = fmt(dp_type_row(A, 20, fields));
  CHECK(strncmp(s, "ROW<column_0 BIGINT, column_1 BIGINT", 36) == 0);
  CHECK(strstr(s, "column_19 BIGINT>") != NULL);
}

TEST(arrow_formats) {
  CHECK_STR(dp_type_arrow_format(T(DP_T_BOOLEAN)), "b");
  CHECK_STR(dp_type_arrow_format(T(DP_T_TINYINT)), "c");
  CHECK_STR(dp_type_arrow_format(T(DP_T_SMALLINT)), "s");
  CHECK_STR(dp_type_arrow_format(T(DP_T_INT)), "i");
  CHECK_STR(dp_type_arrow_format(T(DP_T_BIGINT)), "l");
  CHECK_STR(dp_type_arrow_format(T(DP_T_FLOAT)), "f");
  CHECK_STR(dp_type_arrow_format(T(DP_T_DOUBLE)), "g");
  CHECK_STR(dp_type_arrow_format(DEC(10, 2)), "d:10,2");
  CHECK_STR(dp_type_arrow_format(DEC(38, 38)), "d:38,38");
  CHECK_STR(dp_type_arrow_format(DEC(1, 0)), "d:1,0");
  CHECK_STR(dp_type_arrow_format(T(DP_T_STRING)), "u");
  CHECK_STR(dp_type_arrow_format(T(DP_T_BYTES)), "z");
  CHECK_STR(dp_type_arrow_format(T(DP_T_DATE)), "tdD");
  CHECK_STR(dp_type_arrow_format(T(DP_T_TIME)), "ttu");
  CHECK_STR(dp_type_arrow_format(TS(3)), "tsu:");
  CHECK_STR(dp_type_arrow_format(LTZ(3)), "tsu:UTC");
  CHECK_STR(dp_type_arrow_format(T(DP_T_INTERVAL_DT)), "tDu");
  CHECK_STR(dp_type_arrow_format(T(DP_T_INTERVAL_YM)), "tiM");
  CHECK_STR(dp_type_arrow_format(dp_type_array(A, T(DP_T_INT))), "+l");
  CHECK_STR(dp_type_arrow_format(dp_type_map(A, T(DP_T_INT), T(DP_T_INT))), "+m");
  CHECK_STR(dp_type_arrow_format(dp_type_row(A, 0, NULL)), "+s");
  CHECK_STR(dp_type_arrow_format(T(DP_T_NULL)), "n");
}

TEST(schema_find) {
  dp_schema *s = dp_schema_new(A, 4);
  const char *names[] = {"id", "Price", "price", "ts"};
  for (int i = 0; i < 4; i++) {
    s->cols[i].name = names[i];
    s->cols[i].type = T(DP_T_INT);
  }
  CHECK_EQ(dp_schema_find(s, "id"), 0);
  CHECK_EQ(dp_schema_find(s, "ID"), 0);
  CHECK_EQ(dp_schema_find(s, "Ts"), 3);
  CHECK_EQ(dp_schema_find(s, "price"), -2);
  CHECK_EQ(dp_schema_find(s, "nope"), -1);
  CHECK_EQ(dp_schema_find(NULL, "id"), -1);
  dp_schema *empty = dp_schema_new(A, 0);
  CHECK(empty && empty->ncols == 0);
  CHECK_EQ(dp_schema_find(empty, "x"), -1);
}

int main(void) {
  A = dp_arena_new(0);
  int rc = RUN_TESTS();
  dp_arena_free(A);
  return rc;
}
