/*
** value_test.c — literal values: SQL spelling, ordering, parsing from text
** (round trips and malformed input), the calendar and duration text.
*/
#include <math.h>
#include <string.h>

#include "core/types.h"
#include "test.h"

static dp_arena *A;

static const dp_type *T(dp_type_kind k) { return dp_type_of(k); }
static const dp_type *DEC(int p, int s) { return dp_type_decimal(A, p, s); }
static const dp_type *TS(int p) { return dp_type_timestamp(A, DP_T_TIMESTAMP, p); }
static const dp_type *LTZ(int p) { return dp_type_timestamp(A, DP_T_TIMESTAMP_LTZ, p); }

static const char *fmt(dp_value v) { return dp_value_format(A, &v); }

/* Parse then format; "(rejected)" when the text is malformed. */
static const char *reformat(const dp_type *t, const char *text) {
  dp_value v;
  if (!dp_value_parse(A, t, text, strlen(text), &v)) return "(rejected)";
  return dp_value_format(A, &v);
}

static bool parses(const dp_type *t, const char *text) {
  dp_value v;
  return dp_value_parse(A, t, text, strlen(text), &v);
}

static dp_value parsed(const dp_type *t, const char *text) {
  dp_value v = dp_value_null(t);
  CHECK(dp_value_parse(A, t, text, strlen(text), &v));
  return v;
}

TEST(format_scalars) {
  CHECK_STR(fmt(dp_value_int(T(DP_T_INT), 42)), "42");
  CHECK_STR(fmt(dp_value_int(T(DP_T_BIGINT), INT64_MIN)), "-9223372036854775808");
  CHECK_STR(fmt(dp_value_bool(true)), "TRUE");
  CHECK_STR(fmt(dp_value_bool(false)), "FALSE");
  CHECK_STR(fmt(dp_value_null(T(DP_T_INT))), "NULL");
  CHECK_STR(fmt(dp_value_null(NULL)), "NULL");
  CHECK_STR(fmt(dp_value_string("it's", 4)), "'it''s'");
  CHECK_STR(fmt(dp_value_string("", 0)), "''");
  CHECK_STR(fmt(dp_value_string("a\nb\\'", 5)), "U&'a\\000Ab\\\\'''");
  CHECK_STR(fmt(dp_value_string("back\\slash", 10)), "'back\\slash'");
  CHECK_STR(fmt(dp_value_double(NULL, 1.5)), "1.5E0");
  CHECK_STR(fmt(dp_value_double(NULL, 3.0)), "3E0");
  CHECK_STR(fmt(dp_value_double(NULL, 0.1)), "0.1E0");
  CHECK_STR(fmt(dp_value_double(NULL, 1e20)), "1E20");
  CHECK_STR(fmt(dp_value_double(NULL, 123456.0)), "123456E0");
  CHECK_STR(fmt(dp_value_double(NULL, 0.000125)), "0.000125E0");
  CHECK_STR(fmt(dp_value_double(NULL, -2.5e-7)), "-2.5E-7");
  CHECK_STR(fmt(dp_value_double(NULL, NAN)), "CAST('NaN' AS DOUBLE)");
  CHECK_STR(fmt(dp_value_double(NULL, -INFINITY)), "CAST('-Infinity' AS DOUBLE)");
  CHECK_STR(fmt(dp_value_double(T(DP_T_FLOAT), (double)0.1f)), "CAST(0.1E0 AS FLOAT)");
}

TEST(format_decimal_temporal_interval) {
  dp_value d = {0};
  d.type = DEC(10, 2);
  d.u.dec = 1250;
  CHECK_STR(fmt(d), "12.50");
  d.u.dec = -5;
  CHECK_STR(fmt(d), "-0.05");
  d.type = DEC(5, 0);
  d.u.dec = 7;
  CHECK_STR(fmt(d), "7");
  CHECK_STR(fmt(dp_value_int(T(DP_T_DATE), 19723)), "DATE '2024-01-01'");
  CHECK_STR(fmt(dp_value_int(T(DP_T_DATE), -1)), "DATE '1969-12-31'");
  CHECK_STR(fmt(dp_value_int(TS(3), 1704067200123456)), "TIMESTAMP '2024-01-01 00:00:00.123'");
  CHECK_STR(fmt(dp_value_int(TS(0), 0)), "TIMESTAMP '1970-01-01 00:00:00'");
  CHECK_STR(fmt(dp_value_int(TS(9), -1)), "TIMESTAMP '1969-12-31 23:59:59.999999000'");
  CHECK_STR(fmt(dp_value_int(LTZ(3), 0)),
            "TIMESTAMP_LTZ '1970-01-01 00:00:00.000'");
  CHECK_STR(fmt(dp_value_int(T(DP_T_TIME), 3723 * DP_MICROS_PER_SECOND)), "TIME '01:02:03'");
  CHECK_STR(fmt(dp_value_int(T(DP_T_INTERVAL_DT), 10 * DP_MICROS_PER_SECOND)),
            "INTERVAL '10' SECOND");
  CHECK_STR(fmt(dp_value_int(T(DP_T_INTERVAL_DT), 90 * DP_MICROS_PER_SECOND)),
            "INTERVAL '90' SECOND");
  CHECK_STR(fmt(dp_value_int(T(DP_T_INTERVAL_DT), 5 * DP_MICROS_PER_MINUTE)),
            "INTERVAL '5' MINUTE");
  CHECK_STR(fmt(dp_value_int(T(DP_T_INTERVAL_DT), 2 * DP_MICROS_PER_HOUR)), "INTERVAL '2' HOUR");
  CHECK_STR(fmt(dp_value_int(T(DP_T_INTERVAL_DT), 3 * DP_MICROS_PER_DAY)), "INTERVAL '3' DAY");
  CHECK_STR(fmt(dp_value_int(T(DP_T_INTERVAL_DT), 1500000)), "INTERVAL '1.500' SECOND");
  CHECK_STR(fmt(dp_value_int(T(DP_T_INTERVAL_DT), -250)), "INTERVAL '-0.000250' SECOND");
  CHECK_STR(fmt(dp_value_int(T(DP_T_INTERVAL_YM), 24)), "INTERVAL '2' YEAR");
  CHECK_STR(fmt(dp_value_int(T(DP_T_INTERVAL_YM), 14)), "INTERVAL '14' MONTH");
}

TEST(format_bytes_and_composites) {
  dp_value b = {0};
  b.type = T(DP_T_BYTES);
  b.u.s.ptr = "\x00\xff\x10";
  b.u.s.len = 3;
  CHECK_STR(fmt(b), "X'00FF10'");
  dp_value items[4] = {dp_value_int(T(DP_T_INT), 1), dp_value_string("a", 1),
                       dp_value_null(T(DP_T_INT)), dp_value_int(T(DP_T_INT), 2)};
  dp_value row = {0};
  row.type = dp_type_row(A, 2, (dp_field[]){{"x", T(DP_T_INT)}, {"y", T(DP_T_STRING)}});
  row.u.list.n = 2;
  row.u.list.items = items;
  CHECK_STR(fmt(row), "ROW(1, 'a')");
  dp_value arr = {0};
  arr.type = dp_type_array(A, T(DP_T_INT));
  arr.u.list.n = 2;
  arr.u.list.items = items + 2;
  CHECK_STR(fmt(arr), "ARRAY[NULL, 2]");
  /* MAP items: the keys, then the values */
  dp_value kv[4] = {dp_value_string("a", 1), dp_value_string("b", 1),
                    dp_value_int(T(DP_T_INT), 1), dp_value_int(T(DP_T_INT), 2)};
  dp_value map = {0};
  map.type = dp_type_map(A, T(DP_T_STRING), T(DP_T_INT));
  map.u.list.n = 2;
  map.u.list.items = kv;
  CHECK_STR(fmt(map), "MAP['a', 1, 'b', 2]");
}

TEST(parse_integers) {
  CHECK_STR(reformat(T(DP_T_INT), "42"), "42");
  CHECK_STR(reformat(T(DP_T_INT), "  -7 "), "-7");
  CHECK_STR(reformat(T(DP_T_INT), "+7"), "7");
  CHECK_STR(reformat(T(DP_T_TINYINT), "127"), "127");
  CHECK_STR(reformat(T(DP_T_TINYINT), "-128"), "-128");
  CHECK_STR(reformat(T(DP_T_TINYINT), "128"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_SMALLINT), "-32769"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_INT), "2147483648"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_BIGINT), "9223372036854775807"), "9223372036854775807");
  CHECK_STR(reformat(T(DP_T_BIGINT), "-9223372036854775808"), "-9223372036854775808");
  CHECK_STR(reformat(T(DP_T_BIGINT), "9223372036854775808"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_INT), "1.5"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_INT), "12a"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_INT), ""), "(rejected)");
  CHECK_STR(reformat(T(DP_T_INT), "-"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_INT), "1 2"), "(rejected)");
}

TEST(parse_booleans_and_floats) {
  CHECK_STR(reformat(T(DP_T_BOOLEAN), "true"), "TRUE");
  CHECK_STR(reformat(T(DP_T_BOOLEAN), "FALSE"), "FALSE");
  CHECK_STR(reformat(T(DP_T_BOOLEAN), " yes "), "TRUE");
  CHECK_STR(reformat(T(DP_T_BOOLEAN), "0"), "FALSE");
  CHECK_STR(reformat(T(DP_T_BOOLEAN), "maybe"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DOUBLE), "1.5"), "1.5E0");
  CHECK_STR(reformat(T(DP_T_DOUBLE), "-1e3"), "-1000E0");
  CHECK_STR(reformat(T(DP_T_DOUBLE), ".25"), "0.25E0");
  CHECK_STR(reformat(T(DP_T_DOUBLE), "NaN"), "CAST('NaN' AS DOUBLE)");
  CHECK_STR(reformat(T(DP_T_DOUBLE), "-Infinity"), "CAST('-Infinity' AS DOUBLE)");
  CHECK_STR(reformat(T(DP_T_DOUBLE), "1e999"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DOUBLE), "0x10"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DOUBLE), "1e"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DOUBLE), "."), "(rejected)");
  CHECK_STR(reformat(T(DP_T_FLOAT), "0.1"), "CAST(0.1E0 AS FLOAT)");
  CHECK_STR(reformat(T(DP_T_FLOAT), "1e39"), "(rejected)");
  /* the shortest text reads back as the same number */
  double values[] = {0.1, 1.0 / 3, 2.0 / 3, 1e-300, 123456789.123, 5e-324, 1.7976931348623157e308};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    const char *text = fmt(dp_value_double(NULL, values[i]));
    dp_value back;
    CHECK(dp_value_parse(A, T(DP_T_DOUBLE), text, strlen(text), &back));
    CHECK(back.u.d == values[i]);
  }
}

TEST(parse_decimal_exactly) {
  CHECK_STR(reformat(DEC(10, 2), "12.5"), "12.50");
  CHECK_STR(reformat(DEC(10, 2), "-0.05"), "-0.05");
  CHECK_STR(reformat(DEC(10, 2), "1.005"), "1.01");   /* half away from zero */
  CHECK_STR(reformat(DEC(10, 2), "-1.005"), "-1.01");
  CHECK_STR(reformat(DEC(10, 2), "1.0049999"), "1.00");
  CHECK_STR(reformat(DEC(10, 2), "1.5e2"), "150.00");
  CHECK_STR(reformat(DEC(10, 2), "15E-3"), "0.02");
  CHECK_STR(reformat(DEC(10, 2), "00000000000000000000000000000000000000000012.3"), "12.30");
  CHECK_STR(reformat(DEC(5, 2), "999.99"), "999.99");
  CHECK_STR(reformat(DEC(5, 2), "999.995"), "(rejected)"); /* rounds past the precision */
  CHECK_STR(reformat(DEC(5, 2), "1000"), "(rejected)");
  CHECK_STR(reformat(DEC(5, 0), "12."), "12");
  CHECK_STR(reformat(DEC(5, 0), "1.2.3"), "(rejected)");
  CHECK_STR(reformat(DEC(5, 0), "abc"), "(rejected)");
  CHECK_STR(reformat(DEC(5, 0), "1e"), "(rejected)");
  /* DECIMAL(38) extremes: 38 nines, no more */
  const char *max38 = "99999999999999999999999999999999999999";
  CHECK_STR(reformat(DEC(38, 0), max38), max38);
  CHECK_STR(reformat(DEC(38, 0), "-99999999999999999999999999999999999999"),
            "-99999999999999999999999999999999999999");
  CHECK_STR(reformat(DEC(38, 0), "100000000000000000000000000000000000000"), "(rejected)");
  CHECK_STR(reformat(DEC(38, 38), "0.99999999999999999999999999999999999999"),
            "0.99999999999999999999999999999999999999");
  CHECK_STR(reformat(DEC(38, 38), "-0.00000000000000000000000000000000000001"),
            "-0.00000000000000000000000000000000000001");
  CHECK_STR(reformat(DEC(38, 38), "1"), "(rejected)");
  CHECK_STR(reformat(DEC(38, 10), "1e27"), "1000000000000000000000000000.0000000000");
  CHECK_STR(reformat(DEC(38, 10), "1e28"), "(rejected)");
  CHECK_STR(reformat(DEC(38, 2), "1e999999"), "(rejected)");
  CHECK_STR(reformat(DEC(38, 2), "0e999999"), "0.00");
}

TEST(parse_dates_with_leap_years) {
  CHECK_STR(reformat(T(DP_T_DATE), "2024-02-29"), "DATE '2024-02-29'");
  CHECK_STR(reformat(T(DP_T_DATE), "2023-02-29"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DATE), "2000-02-29"), "DATE '2000-02-29'");
  CHECK_STR(reformat(T(DP_T_DATE), "1900-02-29"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DATE), "1970-01-01"), "DATE '1970-01-01'");
  CHECK_STR(reformat(T(DP_T_DATE), "2024-1-5"), "DATE '2024-01-05'");
  CHECK_STR(reformat(T(DP_T_DATE), "0001-01-01"), "DATE '0001-01-01'");
  CHECK_STR(reformat(T(DP_T_DATE), "-0001-03-01"), "DATE '-0001-03-01'");
  CHECK_STR(reformat(T(DP_T_DATE), "2024-13-01"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DATE), "2024-04-31"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DATE), "2024-00-10"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DATE), "2024/01/01"), "(rejected)");
  CHECK_STR(reformat(T(DP_T_DATE), "2024-01-01x"), "(rejected)");
  CHECK_EQ(parsed(T(DP_T_DATE), "2024-01-01").u.i, 19723);
}

TEST(parse_timestamps) {
  CHECK_STR(reformat(TS(6), "1969-12-31 23:59:59.999999"),
            "TIMESTAMP '1969-12-31 23:59:59.999999'");
  CHECK_EQ(parsed(TS(6), "1969-12-31 23:59:59.999999").u.i, -1);
  CHECK_EQ(parsed(TS(9), "1970-01-01 00:00:00.000001999").u.i, 1); /* finer than µs dropped */
  CHECK_EQ(parsed(TS(3), "1970-01-01 00:00:00.123456").u.i, 123000); /* cut to TIMESTAMP(3) */
  CHECK_EQ(parsed(TS(0), "1970-01-01T00:00:01.9").u.i, 1000000);
  CHECK_EQ(parsed(TS(3), "2024-01-01").u.i, 1704067200000000);
  CHECK_EQ(parsed(TS(3), "2024-01-01 10:30").u.i, 1704105000000000);
  CHECK_STR(reformat(TS(3), "2024-02-29 12:00:00.5"), "TIMESTAMP '2024-02-29 12:00:00.500'");
  CHECK_STR(reformat(TS(9), "2024-02-29 12:00:00.123456789"),
            "TIMESTAMP '2024-02-29 12:00:00.123456000'");
  CHECK_STR(reformat(TS(3), "2024-01-01 24:00:00"), "(rejected)");
  CHECK_STR(reformat(TS(3), "2024-01-01 12:60:00"), "(rejected)");
  CHECK_STR(reformat(TS(3), "2024-01-01 12:00:00.1234567890"), "(rejected)");
  CHECK_STR(reformat(TS(3), "2024-01-01 12:00:00."), "(rejected)");
  CHECK_STR(reformat(TS(3), "2024-01-01 12:00:00Z"), "(rejected)"); /* zone needs LTZ */
  /* LTZ: the offset is taken out, the value is UTC */
  CHECK_EQ(parsed(LTZ(3), "1970-01-01 02:00:00+02:00").u.i, 0);
  CHECK_EQ(parsed(LTZ(3), "1970-01-01T00:00:00Z").u.i, 0);
  CHECK_EQ(parsed(LTZ(3), "1969-12-31 19:00:00 -0500").u.i, 0);
  CHECK_EQ(parsed(LTZ(3), "1970-01-01 00:00:00 UTC").u.i, 0);
  CHECK_EQ(parsed(LTZ(3), "1970-01-01 00:00:00").u.i, 0);
  CHECK_STR(reformat(LTZ(3), "1970-01-01 00:00:00+25:00"), "(rejected)");
  CHECK_STR(reformat(LTZ(3), "1970-01-01 00:00:00 PST"), "(rejected)");
  CHECK_STR(reformat(TS(3), "294248-01-01 00:00:00"), "(rejected)"); /* beyond int64 µs */
}

TEST(parse_time_and_intervals) {
  CHECK_STR(reformat(T(DP_T_TIME), "01:02:03"), "TIME '01:02:03'");
  CHECK_STR(reformat(dp_type_timestamp(A, DP_T_TIME, 3), "23:59:59.9999"), "TIME '23:59:59.999'");
  CHECK_STR(reformat(T(DP_T_TIME), "25:00:00"), "(rejected)");
  const dp_type *dt = T(DP_T_INTERVAL_DT), *ym = T(DP_T_INTERVAL_YM);
  CHECK_EQ(parsed(dt, "10 s").u.i, 10 * DP_MICROS_PER_SECOND);
  CHECK_EQ(parsed(dt, "1 min 30 s").u.i, 90 * DP_MICROS_PER_SECOND);
  CHECK_EQ(parsed(dt, "5 minutes").u.i, 5 * DP_MICROS_PER_MINUTE);
  CHECK_EQ(parsed(dt, "2 HOURS").u.i, 2 * DP_MICROS_PER_HOUR);
  CHECK_EQ(parsed(dt, "250 us").u.i, 250);
  CHECK_EQ(parsed(dt, "-500 ms").u.i, -500000);
  CHECK_EQ(parsed(dt, "+1 02:03:04.5").u.i,
           DP_MICROS_PER_DAY + 2 * DP_MICROS_PER_HOUR + 3 * DP_MICROS_PER_MINUTE +
               4500000);
  CHECK_EQ(parsed(dt, "-00:00:10.000").u.i, -10 * DP_MICROS_PER_SECOND);
  CHECK(!parses(dt, "10"));
  CHECK(!parses(dt, "10 parsecs"));
  CHECK(!parses(dt, "s"));
  CHECK(!parses(dt, "1 month"));
  CHECK(!parses(dt, "99999999999999 days"));
  CHECK(!parses(dt, "999999999 23:59:59")); /* beyond int64 µs */
  CHECK(parses(dt, "99999999 23:59:59"));
  CHECK_EQ(parsed(ym, "+1-06").u.i, 18);
  CHECK_EQ(parsed(ym, "-2-00").u.i, -24);
  CHECK_EQ(parsed(ym, "3 months").u.i, 3);
  CHECK_EQ(parsed(ym, "1 year 2 months").u.i, 14);
  CHECK(!parses(ym, "1-12"));
  CHECK(!parses(ym, "5 days"));
}

TEST(parse_strings_nulls_and_composites) {
  dp_value v;
  const char text[] = "  it's\0x ";
  CHECK(dp_value_parse(A, T(DP_T_STRING), text, 5, &v));
  CHECK_EQ(v.u.s.len, 5);
  CHECK(memcmp(v.u.s.ptr, "  it'", 5) == 0 && v.u.s.ptr != text); /* copied, kept exactly */
  CHECK(dp_value_parse(A, T(DP_T_BYTES), text, sizeof text - 1, &v));
  CHECK_EQ(v.u.s.len, 9);
  CHECK(v.u.s.ptr[6] == '\0' && v.u.s.ptr[7] == 'x');
  CHECK(dp_value_parse(A, T(DP_T_NULL), " null ", 6, &v) && v.is_null);
  CHECK(!parses(dp_type_array(A, T(DP_T_INT)), "[1, 2]"));
}

TEST(compare_orders_values) {
  dp_value one = dp_value_int(T(DP_T_INT), 1), two = dp_value_int(T(DP_T_BIGINT), 2);
  dp_value nul = dp_value_null(T(DP_T_INT));
  CHECK(dp_value_compare(&one, &two) < 0);
  CHECK(dp_value_compare(&two, &one) > 0);
  CHECK(dp_value_compare(&one, &one) == 0);
  CHECK(dp_value_compare(&nul, &one) < 0); /* NULL first */
  CHECK(dp_value_compare(&one, &nul) > 0);
  CHECK(dp_value_compare(&nul, &nul) == 0);
  dp_value a = dp_value_string("ab", 2), b = dp_value_string("abc", 3), c = dp_value_string("b", 1);
  CHECK(dp_value_compare(&a, &b) < 0 && dp_value_compare(&b, &c) < 0);
  /* decimals of different scales and integers compare by value */
  dp_value d1 = parsed(DEC(10, 2), "1.50"), d2 = parsed(DEC(10, 4), "1.4999");
  dp_value d3 = parsed(DEC(10, 1), "-1.5"), d4 = parsed(DEC(10, 3), "-1.499");
  CHECK(dp_value_compare(&d1, &d2) > 0);
  CHECK(dp_value_compare(&d3, &d4) < 0);
  CHECK(dp_value_compare(&d1, &one) > 0);
  dp_value d5 = parsed(DEC(10, 3), "1.000");
  CHECK(dp_value_compare(&d5, &one) == 0);
  dp_value big1 = parsed(DEC(38, 0), "99999999999999999999999999999999999999");
  dp_value big2 = parsed(DEC(38, 37), "9.9999999999999999999999999999999999999");
  CHECK(dp_value_compare(&big1, &big2) > 0);
  dp_value x = dp_value_double(NULL, 1.25), n = dp_value_double(NULL, NAN);
  CHECK(dp_value_compare(&x, &d1) < 0);
  CHECK(dp_value_compare(&n, &x) > 0 && dp_value_compare(&n, &n) == 0);
  dp_value t1 = parsed(TS(6), "1969-12-31 23:59:59.999999"), t2 = parsed(TS(6), "1970-01-01");
  CHECK(dp_value_compare(&t1, &t2) < 0);
  dp_value f = dp_value_bool(false), t = dp_value_bool(true);
  CHECK(dp_value_compare(&f, &t) < 0);
  dp_value items1[] = {one, a}, items2[] = {one, c};
  dp_value r1 = {0}, r2 = {0};
  r1.type = r2.type = dp_type_row(A, 2, (dp_field[]){{"x", T(DP_T_INT)}, {"y", T(DP_T_STRING)}});
  r1.u.list.n = r2.u.list.n = 2;
  r1.u.list.items = items1;
  r2.u.list.items = items2;
  CHECK(dp_value_compare(&r1, &r2) < 0);
}

TEST(calendar_round_trips) {
  CHECK_EQ(dp_days_from_civil(1970, 1, 1), 0);
  CHECK_EQ(dp_days_from_civil(1969, 12, 31), -1);
  CHECK_EQ(dp_days_from_civil(2000, 3, 1), 11017);
  CHECK_EQ(dp_days_from_civil(0, 3, 1), -719468);
  CHECK_EQ(dp_days_from_civil(1, 1, 1), -719162);
  /* every day for ±800 years maps back to itself, months and days valid */
  int64_t prev_y = 0;
  unsigned prev_m = 0, prev_d = 0;
  int bad = 0;
  for (int64_t day = -1000000; day <= 300000; day++) {
    int64_t y;
    unsigned m, d;
    dp_civil_from_days(day, &y, &m, &d);
    if (dp_days_from_civil(y, m, d) != day || m < 1 || m > 12 || d < 1 || d > 31) bad++;
    if (day > -1000000 && d != prev_d + 1 && !(d == 1 && (m == prev_m + 1 || (m == 1 && prev_m == 12 && y == prev_y + 1))))
      bad++;
    prev_y = y, prev_m = m, prev_d = d;
  }
  CHECK_EQ(bad, 0);
  int64_t y;
  unsigned m, d;
  dp_civil_from_days(dp_days_from_civil(-4, 2, 29), &y, &m, &d); /* 5 BC was a leap year */
  CHECK(y == -4 && m == 2 && d == 29);
  dp_civil_from_days(-719469, &y, &m, &d);
  CHECK(y == 0 && m == 2 && d == 29); /* year 0 (1 BC) is a leap year */
  dp_civil_from_days(-719834, &y, &m, &d); /* 2 BC was not */
  CHECK(y == -1 && m == 3 && d == 1);
  dp_civil_from_days(-719835, &y, &m, &d);
  CHECK(y == -1 && m == 2 && d == 28);
}

TEST(format_timestamp) {
  char buf[40];
  CHECK_EQ(dp_format_timestamp(buf, sizeof buf, 0, 3), 23);
  CHECK_STR(buf, "1970-01-01 00:00:00.000");
  dp_format_timestamp(buf, sizeof buf, -1, 6);
  CHECK_STR(buf, "1969-12-31 23:59:59.999999");
  dp_format_timestamp(buf, sizeof buf, -1, 0);
  CHECK_STR(buf, "1969-12-31 23:59:59");
  dp_format_timestamp(buf, sizeof buf, 951782400000000 + 1234, 9);
  CHECK_STR(buf, "2000-02-29 00:00:00.001234000");
  dp_format_timestamp(buf, sizeof buf, dp_days_from_civil(-1, 12, 31) * DP_MICROS_PER_DAY, 0);
  CHECK_STR(buf, "-0001-12-31 00:00:00");
  dp_format_timestamp(buf, sizeof buf, dp_days_from_civil(10000, 1, 1) * DP_MICROS_PER_DAY, 0);
  CHECK_STR(buf, "+10000-01-01 00:00:00");
  dp_format_timestamp(buf, sizeof buf, INT64_MIN, 6); /* no overflow at the extremes */
  CHECK_STR(buf, "-290308-12-21 19:59:05.224192");
  dp_format_timestamp(buf, sizeof buf, INT64_MAX, 6);
  CHECK_STR(buf, "+294247-01-10 04:00:54.775807");
}

TEST(format_duration) {
  struct {
    int64_t micros;
    const char *text;
  } cases[] = {
      {10 * DP_MICROS_PER_SECOND, "10 s"},
      {DP_MICROS_PER_MINUTE, "1 min"},
      {90 * DP_MICROS_PER_SECOND, "1 min 30 s"},
      {2 * DP_MICROS_PER_HOUR, "2 h"},
      {DP_MICROS_PER_DAY, "1 d"},
      {500000, "500 ms"},
      {250, "250 us"},
      {0, "0 s"},
      {-5 * DP_MICROS_PER_SECOND, "-5 s"},
      {1500000, "1 s 500 ms"},
      {DP_MICROS_PER_DAY + DP_MICROS_PER_HOUR + 1, "1 d 1 h 1 us"},
      {INT64_MIN, "-106751991 d 4 h 54 s 775 ms 808 us"},
  };
  char buf[64];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int n = dp_format_duration(buf, sizeof buf, cases[i].micros);
    CHECK_STR(buf, cases[i].text);
    CHECK_EQ(n, strlen(cases[i].text));
  }
  char small[4];
  CHECK_EQ(dp_format_duration(small, sizeof small, 90 * DP_MICROS_PER_SECOND), 10);
  CHECK_STR(small, "1 m");
}

/* A small deterministic generator, so that a failure reproduces. */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static unsigned rng(unsigned n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (unsigned)(rng_state % n);
}

/* Parse `text` as t; if accepted, the value must print and read back as
** itself.  Returns 1 when accepted. */
static int check_round_trip(const dp_type *t, const char *text, size_t n, int *mismatched) {
  dp_value v, back;
  if (!dp_value_parse(A, t, text, n, &v)) return 0;
  char again[80];
  const char *s = again;
  if (dp_type_is_timestamp(t)) {
    dp_format_timestamp(again, sizeof again, v.u.i, 6);
  } else if (t->kind == DP_T_DATE) {
    dp_format_timestamp(again, sizeof again, v.u.i * DP_MICROS_PER_DAY, 0);
    again[strcspn(again, " ")] = '\0';
  } else if (t->kind == DP_T_FLOAT) {
    dp_value as_double = dp_value_double(NULL, v.u.d); /* no CAST(.. AS FLOAT) around it */
    s = dp_value_format(A, &as_double);
  } else {
    s = dp_value_format(A, &v);
  }
  if (!dp_value_parse(A, t, s, strlen(s), &back) || dp_value_compare(&v, &back) != 0)
    if ((*mismatched)++ < 5) fprintf(stderr, "  '%.*s' -> '%s' does not read back\n", (int)n, text, s);
  return 1;
}

/* Random short text over the characters that matter to the number parsers. */
TEST(parse_random_numbers_round_trip) {
  static const char alphabet[] = "0123456789000111999-+.eE ";
  const dp_type *types[] = {T(DP_T_INT), T(DP_T_BIGINT), T(DP_T_TINYINT), DEC(38, 0),
                            DEC(38, 10), DEC(5, 2),       T(DP_T_DOUBLE),  T(DP_T_FLOAT)};
  int accepted = 0, mismatched = 0;
  for (int round = 0; round < 100000; round++) {
    char text[48];
    size_t n = 1 + rng(rng(4) ? 12 : 45);
    for (size_t i = 0; i < n; i++) text[i] = alphabet[rng(sizeof alphabet - 1)];
    dp_arena_mark m = dp_arena_save(A);
    accepted += check_round_trip(types[rng(sizeof types / sizeof types[0])], text, n, &mismatched);
    dp_arena_release(A, m);
  }
  CHECK(accepted > 10000); /* the generator does reach valid text */
  CHECK_EQ(mismatched, 0);
}

/* Dates and timestamps from a template with random (also invalid) fields. */
TEST(parse_random_timestamps_round_trip) {
  static const char *const zones[] = {"", "", "Z", "+02:00", "-0530", " +14", "+19:00", "x"};
  const dp_type *types[] = {TS(6), TS(3), TS(9), LTZ(6), T(DP_T_DATE)};
  int accepted = 0, mismatched = 0;
  for (int round = 0; round < 100000; round++) {
    char text[96], frac[16];
    unsigned digits = rng(11);
    for (unsigned i = 0; i < digits; i++) frac[i] = (char)('0' + rng(10));
    frac[digits] = '\0';
    int year = (int)rng(12000) - (rng(10) ? 0 : 9000);
    int n = snprintf(text, sizeof text, "%04d-%u-%02u%c%02u:%02u:%02u%s%s%s", year, rng(14),
                     rng(33), rng(2) ? ' ' : 'T', rng(25), rng(61), rng(61), digits ? "." : "",
                     frac, zones[rng(8)]);
    if (rng(6) == 0) n = (int)strcspn(text, " T"); /* a bare date */
    dp_arena_mark m = dp_arena_save(A);
    accepted += check_round_trip(types[rng(5)], text, (size_t)n, &mismatched);
    dp_arena_release(A, m);
  }
  CHECK(accepted > 10000);
  CHECK_EQ(mismatched, 0);
}

int main(void) {
  A = dp_arena_new(0);
  int rc = RUN_TESTS();
  dp_arena_free(A);
  return rc;
}
