/*
** functions_test.c — the function catalog: lookup, aliases, suggestions,
** argument checks, result types (exact, with nullability), the casts
** dp_func_param_type asks for, and determinism.
*/
#include <stdarg.h>
#include <stdlib.h>

#include "plan/functions.h"
#include "dipper.h"
#include "test.h"

static dp_arena *A;

static void setup(void) {
  if (!A) A = dp_arena_new(0);
}

/* Types used below; NN() makes a NOT NULL copy. */
static const dp_type *T(dp_type_kind k) { return dp_type_of(k); }
static const dp_type *NN(const dp_type *t) { return dp_type_with_nullability(A, t, true); }
static const dp_type *DEC(int p, int s) { return dp_type_decimal(A, p, s); }
static const dp_type *TS(int p) { return dp_type_timestamp(A, DP_T_TIMESTAMP, p); }
static const dp_type *LTZ(int p) { return dp_type_timestamp(A, DP_T_TIMESTAMP_LTZ, p); }

static const char *fmt(const dp_type *t) { return t ? dp_type_format(A, t) : "(none)"; }

/* The result type of name(args...) as text, or "ERR: why". */
static const char *callv(const char *name, int n, va_list ap) {
  setup();
  const dp_type *args[16];
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, const dp_type *);
  const dp_func *fn = dp_func_lookup(name);
  if (!fn) return "ERR: unknown";
  const char *why = NULL;
  const dp_type *t = fn->infer(A, fn, n, args, &why);
  if (!t) return dp_arena_printf(A, "ERR: %s", why ? why : "(no reason)");
  return fmt(t);
}

static const char *call(const char *name, int n, ...) {
  va_list ap;
  va_start(ap, n);
  const char *s = callv(name, n, ap);
  va_end(ap);
  return s;
}

/* The cast dp_func_param_types asks for argument i (NULL for none). */
static const dp_type *ptype(const dp_func *fn, int i, int n, const dp_type *const *args) {
  const dp_type **picked = NULL;
  if (dp_func_param_types(A, fn, n, args, &picked) != DIPPER_OK) return NULL;
  return picked[i];
}

/* The same as text ("-" for none). */
static const char *param(const char *name, int i, int n, ...) {
  setup();
  const dp_type *args[16];
  va_list ap;
  va_start(ap, n);
  for (int k = 0; k < n; k++) args[k] = va_arg(ap, const dp_type *);
  va_end(ap);
  const dp_type *t = ptype(dp_func_lookup(name), i, n, args);
  return t ? dp_type_format(A, dp_type_with_nullability(A, t, false)) : "-";
}

TEST(lookup_is_case_insensitive_and_knows_aliases) {
  CHECK(dp_func_lookup("substring") == dp_func_get(DP_F_SUBSTRING));
  CHECK(dp_func_lookup("SUBSTRING") == dp_func_get(DP_F_SUBSTRING));
  CHECK(dp_func_lookup("SubStr") == dp_func_get(DP_F_SUBSTRING));
  CHECK(dp_func_lookup("length") == dp_func_get(DP_F_CHAR_LENGTH));
  CHECK(dp_func_lookup("CHARACTER_LENGTH") == dp_func_get(DP_F_CHAR_LENGTH));
  CHECK(dp_func_lookup("now") == dp_func_get(DP_F_CURRENT_TIMESTAMP));
  CHECK(dp_func_lookup("ceiling") == dp_func_get(DP_F_CEIL));
  CHECK(dp_func_lookup("collect_list") == dp_func_get(DP_F_COLLECT));
  CHECK(dp_func_lookup("nvl") == dp_func_get(DP_F_IFNULL));
  CHECK(dp_func_lookup("Mod") == dp_func_get(DP_F_MOD));
  CHECK(dp_func_lookup("no_such_function") == NULL);
  CHECK(dp_func_lookup("") == NULL);
  CHECK(dp_func_lookup(NULL) == NULL);
  char longname[200];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK(dp_func_lookup(longname) == NULL);
  CHECK_STR(dp_func_lookup("||") ? "found" : "absent", "absent"); /* operators go by name */
}

TEST(every_entry_is_found_by_its_own_name) {
  int n = 0;
  for (const dp_func *fn; (fn = dp_func_at(n)) != NULL; n++) {
    CHECK_EQ(fn->id, n);
    CHECK(dp_func_get((dp_func_id)n) == fn);
    CHECK(dp_func_lookup(fn->name) == fn);
    CHECK(fn->infer != NULL);
    CHECK(fn->signature != NULL && strchr(fn->signature, '(') != NULL);
    CHECK(fn->max_args < 0 || fn->max_args >= fn->min_args);
    for (const char *p = fn->name; *p; p++) CHECK(!(*p >= 'A' && *p <= 'Z'));
  }
  CHECK_EQ(n, DP_F_COUNT_);
  CHECK(dp_func_get(DP_F_COUNT_) == NULL);
  CHECK(dp_func_at(-1) == NULL);
}

/* Every signature parses and agrees with min/max: untyped NULL arguments
** fit any parameter class, so only an internal error can come back. */
TEST(signatures_agree_with_argument_counts) {
  setup();
  const dp_type *nulls[8];
  for (int i = 0; i < 8; i++) nulls[i] = T(DP_T_NULL);
  for (int i = 0; dp_func_at(i); i++) {
    const dp_func *fn = dp_func_at(i);
    int counts[2] = {fn->min_args, fn->max_args < 0 ? fn->min_args + 2 : fn->max_args};
    for (int k = 0; k < 2; k++) {
      const char *why = NULL;
      const dp_type *t = fn->infer(A, fn, counts[k], nulls, &why);
      bool internal = !t && why && strstr(why, "internal");
      if (internal) fprintf(stderr, "  %s/%d: %s\n", fn->name, counts[k], why);
      CHECK(!internal);
    }
    const char *why = NULL;
    if (fn->max_args >= 0) {
      CHECK(fn->infer(A, fn, fn->max_args + 1, nulls, &why) == NULL);
      CHECK_CONTAINS(why, "argument");
    }
  }
}

TEST(suggest_finds_near_names) {
  CHECK_STR(dp_func_suggest("substrng"), "substring");
  CHECK_STR(dp_func_suggest("SUBTSRING"), "substring"); /* a transposition is one edit */
  CHECK_STR(dp_func_suggest("lenght"), "length");
  CHECK_STR(dp_func_suggest("conut"), "count"); /* "cont" is as near to "cot" */
  CHECK_STR(dp_func_suggest("regexp_extrct"), "regexp_extract");
  CHECK_STR(dp_func_suggest("to_timestmp"), "to_timestamp");
  CHECK(dp_func_suggest("completely_unknown") == NULL);
  CHECK(dp_func_suggest("xx") == NULL);      /* short names get one edit only */
  CHECK(dp_func_suggest("qq") == NULL);      /* not "eq": operator names are not offered */
  CHECK_STR(dp_func_suggest("md6"), "md5");
  CHECK_STR(dp_func_suggest("modd"), "mod");
  CHECK(dp_func_suggest("count") == NULL);   /* known: nothing to suggest */
  CHECK(dp_func_suggest(NULL) == NULL);
}

TEST(determinism_and_kinds) {
  static const dp_func_id nondet[] = {DP_F_RAND, DP_F_UUID, DP_F_CURRENT_TIMESTAMP, DP_F_LOCALTIMESTAMP,
                                      DP_F_CURRENT_DATE, DP_F_PROCTIME, DP_F_CURRENT_WATERMARK,
                                      DP_F_UNIX_TIMESTAMP};
  for (size_t i = 0; i < sizeof nondet / sizeof nondet[0]; i++)
    CHECK(!dp_func_get(nondet[i])->deterministic);
  CHECK(!dp_func_lookup("now")->deterministic);
  CHECK(dp_func_lookup("pi")->deterministic);
  CHECK(dp_func_lookup("upper")->deterministic);
  CHECK(dp_func_lookup("add")->deterministic);
  CHECK(dp_func_lookup("sum")->kind == DP_FN_AGGREGATE);
  CHECK(dp_func_lookup("count")->kind == DP_FN_AGGREGATE);
  CHECK(dp_func_lookup("row_number")->kind == DP_FN_WINDOW);
  CHECK(dp_func_lookup("lag")->kind == DP_FN_WINDOW);
  CHECK(dp_func_lookup("tumble_start")->kind == DP_FN_SCALAR);
  CHECK_STR(dp_func_get(DP_F_ADD)->op, "+");
  CHECK_STR(dp_func_get(DP_F_IS_NULL)->op, "IS NULL");
  CHECK_STR(dp_func_get(DP_F_CONCAT)->op, "||");
  CHECK(dp_func_get(DP_F_IN)->op == NULL);
  CHECK_EQ(dp_func_lookup("count")->min_args, 0);
  CHECK_EQ(dp_func_lookup("concat")->max_args, -1);
}

TEST(integer_and_float_arithmetic) {
  setup();
  CHECK_STR(call("add", 2, T(DP_T_INT), T(DP_T_BIGINT)), "BIGINT");
  CHECK_STR(param("add", 0, 2, T(DP_T_INT), T(DP_T_BIGINT)), "BIGINT");
  CHECK_STR(param("add", 1, 2, T(DP_T_INT), T(DP_T_BIGINT)), "-");
  CHECK_STR(call("multiply", 2, T(DP_T_TINYINT), T(DP_T_SMALLINT)), "SMALLINT");
  CHECK_STR(call("divide", 2, T(DP_T_INT), T(DP_T_INT)), "INT"); /* integer division (Flink) */
  CHECK_STR(call("mod", 2, T(DP_T_BIGINT), T(DP_T_INT)), "BIGINT");
  CHECK_STR(call("add", 2, T(DP_T_FLOAT), T(DP_T_INT)), "FLOAT");
  CHECK_STR(param("add", 1, 2, T(DP_T_FLOAT), T(DP_T_INT)), "FLOAT");
  CHECK_STR(call("add", 2, T(DP_T_FLOAT), T(DP_T_DOUBLE)), "DOUBLE");
  CHECK_STR(call("add", 2, DEC(10, 2), T(DP_T_FLOAT)), "DOUBLE");
  CHECK_STR(param("add", 0, 2, DEC(10, 2), T(DP_T_FLOAT)), "DOUBLE");
  CHECK_STR(call("add", 2, NN(T(DP_T_INT)), NN(T(DP_T_INT))), "INT NOT NULL");
  CHECK_STR(call("add", 2, NN(T(DP_T_INT)), T(DP_T_INT)), "INT");
  CHECK_STR(call("add", 2, T(DP_T_NULL), T(DP_T_BIGINT)), "BIGINT");
  CHECK_STR(param("add", 0, 2, T(DP_T_NULL), T(DP_T_BIGINT)), "BIGINT");
  CHECK_CONTAINS(call("add", 2, T(DP_T_NULL), T(DP_T_NULL)), "CAST one of them");
  CHECK_STR(call("negate", 1, NN(T(DP_T_SMALLINT))), "SMALLINT NOT NULL");
  CHECK_STR(call("bitand", 2, T(DP_T_INT), T(DP_T_BIGINT)), "BIGINT");
  CHECK_STR(call("bitnot", 1, T(DP_T_TINYINT)), "TINYINT");
  CHECK_CONTAINS(call("bitor", 2, T(DP_T_INT), T(DP_T_DOUBLE)), "bit operations take integers");
  CHECK_CONTAINS(call("add", 2, T(DP_T_STRING), T(DP_T_INT)), "+ adds two numbers");
  CHECK_CONTAINS(call("multiply", 2, T(DP_T_BOOLEAN), T(DP_T_INT)), "* multiplies two numbers");
}

TEST(decimal_arithmetic_follows_flink) {
  setup();
  /* + : max(p1-s1, p2-s2) + max(s1, s2) + 1, scale max(s1, s2) */
  CHECK_STR(call("add", 2, DEC(10, 2), DEC(5, 3)), "DECIMAL(12, 3)");
  CHECK_STR(call("subtract", 2, DEC(10, 2), DEC(5, 3)), "DECIMAL(12, 3)");
  /* an INT is DECIMAL(10, 0); a BIGINT DECIMAL(19, 0) */
  CHECK_STR(call("add", 2, T(DP_T_INT), DEC(5, 2)), "DECIMAL(13, 2)");
  CHECK_STR(param("add", 0, 2, T(DP_T_INT), DEC(5, 2)), "DECIMAL(10, 0)");
  CHECK_STR(param("add", 1, 2, T(DP_T_INT), DEC(5, 2)), "-");
  CHECK_STR(call("multiply", 2, T(DP_T_BIGINT), DEC(4, 1)), "DECIMAL(24, 1)");
  /* * : p1 + p2 + 1, s1 + s2 */
  CHECK_STR(call("multiply", 2, DEC(10, 2), DEC(5, 3)), "DECIMAL(16, 5)");
  /* / : scale max(6, s1 + p2 + 1), precision p1 - s1 + s2 + scale */
  CHECK_STR(call("divide", 2, DEC(10, 2), DEC(5, 3)), "DECIMAL(19, 8)");
  CHECK_STR(call("divide", 2, DEC(5, 0), DEC(2, 0)), "DECIMAL(11, 6)");
  /* beyond 38 digits the integer part wins and the scale gives way down to 6
  ** (the cases of Flink's LogicalTypeMergingTest) */
  CHECK_STR(call("multiply", 2, DEC(30, 10), DEC(30, 10)), "DECIMAL(38, 6)");
  CHECK_STR(call("multiply", 2, DEC(30, 20), DEC(30, 20)), "DECIMAL(38, 17)");
  CHECK_STR(call("multiply", 2, DEC(38, 2), DEC(38, 3)), "DECIMAL(38, 5)");
  CHECK_STR(call("divide", 2, DEC(32, 8), DEC(38, 8)), "DECIMAL(38, 6)");
  CHECK_STR(call("divide", 2, DEC(30, 20), DEC(30, 20)), "DECIMAL(38, 8)");
  CHECK_STR(call("add", 2, DEC(38, 0), DEC(38, 0)), "DECIMAL(38, 0)");
  /* % : min(p1-s1, p2-s2) + max(s1, s2) */
  CHECK_STR(call("mod", 2, DEC(30, 10), DEC(30, 10)), "DECIMAL(30, 10)");
  CHECK_STR(call("mod", 2, DEC(10, 0), DEC(5, 0)), "DECIMAL(5, 0)");
}

TEST(temporal_arithmetic) {
  setup();
  const dp_type *dt = T(DP_T_INTERVAL_DT), *ym = T(DP_T_INTERVAL_YM);
  CHECK_STR(call("add", 2, TS(3), dt), "TIMESTAMP(3)");
  CHECK_STR(call("subtract", 2, TS(6), ym), "TIMESTAMP(6)");
  CHECK_STR(call("subtract", 2, NN(LTZ(3)), NN(dt)), "TIMESTAMP_LTZ(3) NOT NULL");
  CHECK_STR(call("add", 2, dt, TS(3)), "TIMESTAMP(3)");
  CHECK_STR(call("add", 2, T(DP_T_DATE), ym), "DATE");
  CHECK_STR(call("add", 2, T(DP_T_DATE), dt), "DATE"); /* Flink: a date stays a date */
  CHECK_STR(call("subtract", 2, TS(3), TS(3)), "INTERVAL DAY TO SECOND");
  CHECK_STR(call("subtract", 2, T(DP_T_DATE), T(DP_T_DATE)), "INTERVAL DAY TO SECOND");
  CHECK_STR(call("subtract", 2, TS(3), T(DP_T_DATE)), "INTERVAL DAY TO SECOND");
  CHECK_STR(param("subtract", 1, 2, TS(3), T(DP_T_DATE)), "TIMESTAMP(3)");
  CHECK_CONTAINS(call("subtract", 2, TS(3), LTZ(3)), "different kinds of time");
  CHECK_STR(call("add", 2, dt, dt), "INTERVAL DAY TO SECOND");
  CHECK_CONTAINS(call("add", 2, dt, ym), "cannot be combined");
  CHECK_STR(call("multiply", 2, dt, T(DP_T_INT)), "INTERVAL DAY TO SECOND");
  CHECK_STR(call("multiply", 2, T(DP_T_DOUBLE), ym), "INTERVAL YEAR TO MONTH");
  CHECK_STR(call("divide", 2, dt, T(DP_T_BIGINT)), "INTERVAL DAY TO SECOND");
  CHECK_CONTAINS(call("divide", 2, T(DP_T_INT), dt), "/ divides two numbers");
  CHECK_CONTAINS(call("add", 2, TS(3), TS(3)), "+ adds");
  CHECK_STR(call("add", 2, T(DP_T_TIME), dt), "TIME(0)");
  CHECK_STR(call("negate", 1, dt), "INTERVAL DAY TO SECOND");
}

TEST(comparisons_meet_in_a_common_type) {
  setup();
  CHECK_STR(call("eq", 2, T(DP_T_INT), T(DP_T_BIGINT)), "BOOLEAN");
  CHECK_STR(param("eq", 0, 2, T(DP_T_INT), T(DP_T_BIGINT)), "BIGINT");
  CHECK_STR(call("lt", 2, NN(T(DP_T_INT)), NN(DEC(5, 2))), "BOOLEAN NOT NULL");
  /* both sides meet in the common type (tests/sql/cases/types.test) */
  CHECK_STR(param("lt", 0, 2, T(DP_T_INT), DEC(5, 2)), "DECIMAL(12, 2)");
  CHECK_STR(param("lt", 1, 2, T(DP_T_INT), DEC(5, 2)), "DECIMAL(12, 2)");
  CHECK_STR(param("eq", 0, 2, DEC(10, 2), DEC(12, 4)), "DECIMAL(12, 4)");
  CHECK_STR(param("eq", 1, 2, DEC(10, 2), DEC(12, 4)), "-");
  CHECK_STR(param("eq", 1, 2, DEC(10, 2), T(DP_T_DOUBLE)), "-");
  CHECK_STR(param("eq", 0, 2, DEC(10, 2), T(DP_T_DOUBLE)), "DOUBLE");
  /* a string meets a time or a number as that type */
  CHECK_STR(call("gt", 2, TS(3), T(DP_T_STRING)), "BOOLEAN");
  CHECK_STR(param("gt", 1, 2, TS(3), T(DP_T_STRING)), "TIMESTAMP(3)");
  CHECK_STR(param("gt", 0, 2, TS(3), T(DP_T_STRING)), "-");
  CHECK_CONTAINS(call("eq", 2, T(DP_T_BOOLEAN), T(DP_T_INT)),
                 "argument 2 is INT, which does not meet BOOLEAN");
  const dp_type *arr = dp_type_array(A, T(DP_T_INT));
  CHECK_STR(call("eq", 2, arr, arr), "BOOLEAN");
  CHECK_CONTAINS(call("lt", 2, arr, arr), "have no order");
  CHECK_STR(call("is_distinct_from", 2, T(DP_T_INT), T(DP_T_INT)), "BOOLEAN NOT NULL");
  CHECK_STR(call("is_null", 1, T(DP_T_STRING)), "BOOLEAN NOT NULL");
  CHECK_STR(call("in", 4, T(DP_T_INT), T(DP_T_BIGINT), T(DP_T_INT), T(DP_T_STRING)), "BOOLEAN");
  CHECK_STR(param("in", 0, 4, T(DP_T_INT), T(DP_T_BIGINT), T(DP_T_INT), T(DP_T_STRING)), "BIGINT");
  CHECK_STR(param("in", 3, 4, T(DP_T_INT), T(DP_T_BIGINT), T(DP_T_INT), T(DP_T_STRING)), "BIGINT");
  CHECK_STR(call("and", 3, NN(T(DP_T_BOOLEAN)), NN(T(DP_T_BOOLEAN)), NN(T(DP_T_BOOLEAN))),
            "BOOLEAN NOT NULL");
  CHECK_CONTAINS(call("and", 2, T(DP_T_BOOLEAN), T(DP_T_INT)), "argument 2 is INT");
  CHECK_STR(call("like", 2, T(DP_T_STRING), T(DP_T_STRING)), "BOOLEAN");
}

TEST(string_functions_check_their_arguments) {
  setup();
  CHECK_STR(call("substring", 2, NN(T(DP_T_STRING)), NN(T(DP_T_INT))), "STRING NOT NULL");
  CHECK_STR(call("substr", 3, T(DP_T_STRING), T(DP_T_INT), T(DP_T_BIGINT)), "STRING");
  CHECK_STR(call("SUBSTRING", 2, T(DP_T_STRING), T(DP_T_BOOLEAN)),
            "ERR: SUBSTRING expects (STRING, INTEGER start [, INTEGER length]); argument 2 is "
            "BOOLEAN: CAST it to INT if that is what you mean");
  CHECK_CONTAINS(call("upper", 0), "UPPER takes 1 argument, not 0");
  CHECK_CONTAINS(call("substring", 1, T(DP_T_STRING)), "takes 2 to 3 arguments, not 1");
  CHECK_CONTAINS(call("concat_ws", 1, T(DP_T_STRING)), "at least 2 arguments");
  CHECK_STR(call("upper", 1, T(DP_T_NULL)), "STRING");
  CHECK_STR(param("upper", 0, 1, T(DP_T_NULL)), "STRING");
  CHECK_STR(call("concat", 3, T(DP_T_STRING), NN(T(DP_T_STRING)), T(DP_T_STRING)), "STRING");
  CHECK_STR(call("concat", 2, NN(T(DP_T_BYTES)), NN(T(DP_T_BYTES))), "BYTES NOT NULL");
  CHECK_CONTAINS(call("concat", 2, T(DP_T_STRING), T(DP_T_INT)), "argument 2 is INT: CAST it to STRING");
  CHECK_CONTAINS(call("concat", 2, T(DP_T_STRING), T(DP_T_BYTES)), "cannot mix");
  /* CONCAT_WS skips NULL arguments: only the separator makes it NULL */
  CHECK_STR(call("concat_ws", 3, NN(T(DP_T_STRING)), T(DP_T_STRING), T(DP_T_STRING)), "STRING NOT NULL");
  CHECK_STR(call("concat_ws", 2, T(DP_T_STRING), NN(T(DP_T_STRING))), "STRING");
  CHECK_STR(call("regexp_extract", 3, NN(T(DP_T_STRING)), NN(T(DP_T_STRING)), NN(T(DP_T_INT))), "STRING");
  CHECK_STR(call("split_index", 3, NN(T(DP_T_STRING)), NN(T(DP_T_STRING)), NN(T(DP_T_INT))), "STRING");
  CHECK_STR(call("char_length", 1, NN(T(DP_T_STRING))), "INT NOT NULL");
  CHECK_STR(call("length", 1, T(DP_T_STRING)), "INT");
  CHECK_STR(call("split", 2, T(DP_T_STRING), T(DP_T_STRING)), "ARRAY<STRING>");
  CHECK_STR(call("md5", 1, T(DP_T_BYTES)), "STRING");
  CHECK_CONTAINS(call("md5", 1, T(DP_T_INT)), "MD5 expects (STRING|BYTES)");
  CHECK_STR(call("uuid", 0), "STRING NOT NULL");
  CHECK_STR(call("json_value", 2, NN(T(DP_T_STRING)), NN(T(DP_T_STRING))), "STRING");
  CHECK_STR(call("hex", 1, T(DP_T_BIGINT)), "STRING");
}

TEST(temporal_functions) {
  setup();
  CHECK_STR(call("extract", 2, NN(T(DP_T_STRING)), NN(TS(3))), "BIGINT NOT NULL");
  CHECK_STR(call("extract", 2, T(DP_T_STRING), T(DP_T_INTERVAL_DT)), "BIGINT");
  CHECK_CONTAINS(call("extract", 2, T(DP_T_STRING), T(DP_T_INT)), "argument 2 is INT");
  CHECK_STR(call("year", 1, T(DP_T_DATE)), "BIGINT");
  CHECK_STR(call("hour", 1, LTZ(3)), "BIGINT");
  CHECK_CONTAINS(call("hour", 1, T(DP_T_DATE)), "HOUR expects (TIME|TIMESTAMP)");
  CHECK_STR(call("date_format", 2, TS(3), T(DP_T_STRING)), "STRING");
  CHECK_STR(call("to_timestamp", 1, NN(T(DP_T_STRING))), "TIMESTAMP(3)");
  CHECK_STR(call("to_timestamp_ltz", 2, NN(T(DP_T_BIGINT)), NN(T(DP_T_INT))), "TIMESTAMP_LTZ(3) NOT NULL");
  CHECK_STR(call("to_date", 1, T(DP_T_STRING)), "DATE");
  CHECK_STR(call("unix_timestamp", 0), "BIGINT");
  CHECK_STR(call("from_unixtime", 1, T(DP_T_BIGINT)), "STRING");
  CHECK_STR(call("current_timestamp", 0), "TIMESTAMP_LTZ(3) NOT NULL");
  CHECK_STR(call("localtimestamp", 0), "TIMESTAMP(3) NOT NULL");
  CHECK_STR(call("current_date", 0), "DATE NOT NULL");
  CHECK_STR(call("proctime", 0), "TIMESTAMP_LTZ(3) NOT NULL");
  CHECK_STR(call("current_watermark", 1, NN(TS(3))), "TIMESTAMP(3)");
  CHECK_STR(call("timestampadd", 3, T(DP_T_STRING), T(DP_T_INT), TS(6)), "TIMESTAMP(6)");
  CHECK_STR(call("timestampadd", 3, T(DP_T_STRING), T(DP_T_INT), T(DP_T_DATE)), "DATE");
  CHECK_STR(call("timestampdiff", 3, T(DP_T_STRING), TS(3), TS(3)), "INT"); /* as Flink types it */
  /* DATE parameters take timestamps and strings, cast to DATE */
  CHECK_STR(call("date_add", 2, TS(3), T(DP_T_INT)), "DATE");
  CHECK_STR(param("date_add", 0, 2, TS(3), T(DP_T_INT)), "DATE");
  CHECK_STR(param("datediff", 1, 2, T(DP_T_DATE), T(DP_T_STRING)), "DATE");
  CHECK_STR(call("datediff", 2, T(DP_T_DATE), T(DP_T_DATE)), "INT");
  CHECK_STR(call("tumble_start", 2, LTZ(3), T(DP_T_INTERVAL_DT)), "TIMESTAMP(3)");
  CHECK_STR(call("tumble_rowtime", 2, LTZ(3), T(DP_T_INTERVAL_DT)), "TIMESTAMP_LTZ(3)");
  CHECK_STR(call("hop_end", 3, TS(3), T(DP_T_INTERVAL_DT), T(DP_T_INTERVAL_DT)), "TIMESTAMP(3)");
  CHECK_STR(call("session_rowtime", 2, TS(3), T(DP_T_INTERVAL_DT)), "TIMESTAMP(3)");
  CHECK_STR(call("floor", 2, NN(TS(3)), NN(T(DP_T_STRING))), "TIMESTAMP(3) NOT NULL");
  CHECK_CONTAINS(call("floor", 1, TS(3)), "needs a unit");
  CHECK_CONTAINS(call("ceil", 2, T(DP_T_DOUBLE), T(DP_T_STRING)), "takes one argument");
}

TEST(math_functions) {
  setup();
  CHECK_STR(call("sqrt", 1, NN(T(DP_T_INT))), "DOUBLE NOT NULL");
  CHECK_STR(param("sqrt", 0, 1, T(DP_T_INT)), "DOUBLE");
  CHECK_STR(param("sqrt", 0, 1, T(DP_T_DOUBLE)), "-");
  CHECK_STR(call("power", 2, T(DP_T_INT), DEC(5, 2)), "DOUBLE");
  CHECK_STR(call("pow", 2, T(DP_T_INT), T(DP_T_INT)), "DOUBLE");
  CHECK_STR(call("log", 2, T(DP_T_INT), T(DP_T_INT)), "DOUBLE");
  CHECK_CONTAINS(call("ln", 1, T(DP_T_STRING)), "LN expects (DOUBLE); argument 1 is STRING: CAST it to DOUBLE");
  CHECK_STR(call("abs", 1, DEC(7, 2)), "DECIMAL(7, 2)");
  CHECK_STR(call("sign", 1, T(DP_T_BIGINT)), "BIGINT");
  CHECK_STR(call("floor", 1, DEC(10, 2)), "DECIMAL(9, 0)");
  CHECK_STR(call("ceiling", 1, T(DP_T_DOUBLE)), "DOUBLE");
  CHECK_STR(call("floor", 1, T(DP_T_INT)), "INT");
  CHECK_STR(call("round", 1, DEC(10, 2)), "DECIMAL(9, 0)");
  CHECK_STR(call("round", 2, DEC(10, 2), T(DP_T_INT)), "DECIMAL(11, 2)");
  CHECK_STR(call("round", 2, T(DP_T_DOUBLE), T(DP_T_INT)), "DOUBLE");
  CHECK_STR(call("truncate", 1, DEC(10, 2)), "DECIMAL(8, 0)");
  CHECK_STR(call("truncate", 2, DEC(10, 2), T(DP_T_INT)), "DECIMAL(10, 2)");
  CHECK_CONTAINS(call("round", 2, T(DP_T_DOUBLE), T(DP_T_DOUBLE)), "argument 2 is DOUBLE");
  CHECK_STR(call("rand", 0), "DOUBLE NOT NULL");
  CHECK_STR(call("pi", 0), "DOUBLE NOT NULL");
  CHECK_STR(call("greatest", 3, T(DP_T_INT), T(DP_T_BIGINT), DEC(5, 2)), "DECIMAL(21, 2)");
  CHECK_STR(call("least", 2, NN(T(DP_T_INT)), NN(T(DP_T_INT))), "INT NOT NULL");
  CHECK_CONTAINS(call("greatest", 2, T(DP_T_INT), T(DP_T_STRING)), "does not meet");
}

TEST(conditional_functions) {
  setup();
  CHECK_STR(call("coalesce", 2, T(DP_T_INT), NN(T(DP_T_BIGINT))), "BIGINT NOT NULL");
  CHECK_STR(call("coalesce", 2, T(DP_T_INT), T(DP_T_INT)), "INT");
  CHECK_STR(param("coalesce", 0, 2, T(DP_T_INT), NN(T(DP_T_BIGINT))), "BIGINT");
  CHECK_STR(call("coalesce", 2, T(DP_T_NULL), T(DP_T_STRING)), "STRING");
  CHECK_CONTAINS(call("coalesce", 2, T(DP_T_NULL), T(DP_T_NULL)), "untyped NULL");
  CHECK_CONTAINS(call("coalesce", 2, T(DP_T_INT), T(DP_T_STRING)), "argument 2 is STRING");
  CHECK_STR(call("ifnull", 2, T(DP_T_STRING), NN(T(DP_T_STRING))), "STRING NOT NULL");
  CHECK_STR(call("nullif", 2, NN(T(DP_T_INT)), NN(T(DP_T_INT))), "INT");
  CHECK_STR(call("if", 3, T(DP_T_BOOLEAN), NN(T(DP_T_INT)), NN(T(DP_T_BIGINT))), "BIGINT NOT NULL");
  CHECK_STR(call("if", 3, NN(T(DP_T_BOOLEAN)), T(DP_T_INT), NN(T(DP_T_INT))), "INT");
  CHECK_STR(param("if", 1, 3, T(DP_T_BOOLEAN), T(DP_T_INT), T(DP_T_BIGINT)), "BIGINT");
  CHECK_CONTAINS(call("if", 3, T(DP_T_INT), T(DP_T_INT), T(DP_T_INT)), "argument 1 is INT");
}

TEST(collections_and_rows) {
  setup();
  const dp_type *arr = dp_type_array(A, T(DP_T_INT));
  const dp_type *map = dp_type_map(A, T(DP_T_STRING), T(DP_T_DOUBLE));
  CHECK_STR(call("element_at", 2, NN(arr), NN(T(DP_T_INT))), "INT");
  CHECK_STR(call("element_at", 2, map, T(DP_T_STRING)), "DOUBLE");
  CHECK_STR(param("element_at", 1, 2, map, T(DP_T_NULL)), "STRING");
  CHECK_CONTAINS(call("element_at", 2, map, T(DP_T_INT)), "keys of this MAP are STRING");
  CHECK_CONTAINS(call("element_at", 2, arr, T(DP_T_STRING)), "indexed by an integer");
  CHECK_CONTAINS(call("element_at", 2, T(DP_T_INT), T(DP_T_INT)), "reads an ARRAY or a MAP");
  CHECK_STR(call("cardinality", 1, NN(map)), "INT NOT NULL");
  CHECK_STR(call("size", 1, arr), "INT");
  CHECK_STR(call("array_contains", 2, arr, T(DP_T_SMALLINT)), "BOOLEAN");
  CHECK_STR(param("array_contains", 1, 2, arr, T(DP_T_SMALLINT)), "INT");
  CHECK_CONTAINS(call("array_contains", 2, arr, T(DP_T_STRING)), "CAST the value to INT");
  CHECK_STR(call("map_keys", 1, map), "ARRAY<STRING>");
  CHECK_STR(call("map_values", 1, map), "ARRAY<DOUBLE>");
  CHECK_STR(call("array", 2, T(DP_T_INT), T(DP_T_BIGINT)), "ARRAY<BIGINT> NOT NULL");
  CHECK_STR(param("array", 0, 2, T(DP_T_INT), T(DP_T_BIGINT)), "BIGINT");
  CHECK_STR(call("map", 4, T(DP_T_STRING), T(DP_T_INT), T(DP_T_STRING), T(DP_T_BIGINT)),
            "MAP<STRING, BIGINT> NOT NULL");
  CHECK_CONTAINS(call("map", 3, T(DP_T_STRING), T(DP_T_INT), T(DP_T_STRING)), "key, value pairs");
  CHECK_STR(call("row", 2, T(DP_T_INT), T(DP_T_STRING)), "ROW<f0 INT, f1 STRING> NOT NULL");
}

TEST(aggregates_and_window_functions) {
  setup();
  CHECK_STR(call("count", 0), "BIGINT NOT NULL");
  CHECK_STR(call("count", 1, T(DP_T_STRING)), "BIGINT NOT NULL");
  CHECK_STR(call("sum", 1, NN(T(DP_T_INT))), "BIGINT");
  CHECK_STR(call("sum", 1, DEC(10, 2)), "DECIMAL(38, 2)");
  CHECK_STR(call("sum", 1, T(DP_T_FLOAT)), "DOUBLE");
  CHECK_STR(call("sum", 1, T(DP_T_INTERVAL_DT)), "INTERVAL DAY TO SECOND");
  CHECK_CONTAINS(call("sum", 1, T(DP_T_STRING)), "SUM adds numbers");
  CHECK_STR(call("avg", 1, T(DP_T_INT)), "DOUBLE");
  CHECK_STR(call("avg", 1, DEC(10, 2)), "DECIMAL(14, 6)");
  CHECK_STR(call("avg", 1, DEC(36, 2)), "DECIMAL(38, 6)");
  CHECK_STR(call("min", 1, NN(T(DP_T_STRING))), "STRING");
  CHECK_STR(call("max", 1, TS(3)), "TIMESTAMP(3)");
  CHECK_CONTAINS(call("max", 1, dp_type_array(A, T(DP_T_INT))), "no order");
  CHECK_STR(call("first_value", 1, NN(T(DP_T_DOUBLE))), "DOUBLE");
  CHECK_STR(call("listagg", 2, T(DP_T_STRING), T(DP_T_STRING)), "STRING");
  CHECK_STR(call("collect", 1, T(DP_T_INT)), "ARRAY<INT> NOT NULL");
  CHECK_STR(call("stddev_pop", 1, T(DP_T_INT)), "DOUBLE");
  CHECK_STR(call("approx_count_distinct", 1, T(DP_T_STRING)), "BIGINT NOT NULL");
  CHECK_STR(call("bool_and", 1, T(DP_T_BOOLEAN)), "BOOLEAN");
  CHECK_STR(call("row_number", 0), "BIGINT NOT NULL");
  CHECK_STR(call("dense_rank", 0), "BIGINT NOT NULL");
  CHECK_STR(call("percent_rank", 0), "DOUBLE NOT NULL");
  CHECK_STR(call("ntile", 1, T(DP_T_INT)), "INT NOT NULL");
  CHECK_STR(call("lag", 1, NN(T(DP_T_INT))), "INT");
  CHECK_STR(call("lead", 3, NN(T(DP_T_INT)), T(DP_T_INT), NN(T(DP_T_BIGINT))), "BIGINT NOT NULL");
  CHECK_STR(param("lead", 0, 3, NN(T(DP_T_INT)), T(DP_T_INT), NN(T(DP_T_BIGINT))), "BIGINT");
  CHECK_CONTAINS(call("lag", 2, T(DP_T_INT), T(DP_T_STRING)), "the offset is STRING");
}

/* Casting the arguments as dp_func_param_types says must not change the
** result: the binder infers before it casts. */
TEST(casts_do_not_change_the_result) {
  setup();
  struct {
    const char *fn;
    int n;
    const dp_type *args[4];
  } cases[] = {
      {"add", 2, {T(DP_T_INT), DEC(5, 2)}},
      {"multiply", 2, {T(DP_T_BIGINT), DEC(10, 3)}},
      {"divide", 2, {T(DP_T_SMALLINT), DEC(4, 4)}},
      {"mod", 2, {T(DP_T_INT), DEC(7, 0)}},
      {"mod", 2, {T(DP_T_BIGINT), T(DP_T_INT)}},
      {"add", 2, {T(DP_T_FLOAT), DEC(10, 2)}},
      {"subtract", 2, {TS(6), T(DP_T_DATE)}},
      {"eq", 2, {T(DP_T_INT), DEC(5, 2)}},
      {"lt", 2, {TS(3), T(DP_T_STRING)}},
      {"coalesce", 3, {T(DP_T_NULL), T(DP_T_INT), T(DP_T_BIGINT)}},
      {"in", 3, {T(DP_T_TINYINT), T(DP_T_INT), DEC(20, 2)}},
      {"sqrt", 1, {DEC(10, 2)}},
      {"date_add", 2, {T(DP_T_STRING), T(DP_T_INT)}},
      {"if", 3, {T(DP_T_NULL), TS(3), TS(6)}},
      {"array", 3, {T(DP_T_INT), T(DP_T_NULL), DEC(3, 1)}},
      {"lag", 3, {T(DP_T_INT), T(DP_T_INT), T(DP_T_BIGINT)}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const dp_func *fn = dp_func_lookup(cases[k].fn);
    const char *why = NULL;
    const dp_type *before = fn->infer(A, fn, cases[k].n, cases[k].args, &why);
    CHECK(before != NULL);
    const dp_type *cast[4];
    int ncast = 0;
    for (int i = 0; i < cases[k].n; i++) {
      const dp_type *p = ptype(fn, i, cases[k].n, cases[k].args);
      cast[i] = p ? p : cases[k].args[i];
      ncast += p != NULL;
    }
    CHECK(ncast > 0);
    const dp_type *after = fn->infer(A, fn, cases[k].n, cast, &why);
    CHECK(after != NULL);
    if (before && after && !dp_type_equal(before, after))
      fprintf(stderr, "  %s: %s before the casts, %s after\n", cases[k].fn, fmt(before), fmt(after));
    CHECK(before && after && dp_type_equal(before, after));
    for (int i = 0; i < cases[k].n; i++) /* the casts are complete: none asked twice */
      CHECK(ptype(fn, i, cases[k].n, cast) == NULL);
  }
}

TEST(param_type_edge_cases) {
  setup();
  const dp_type *args[2] = {T(DP_T_INT), T(DP_T_BIGINT)};
  const dp_type **picked = NULL;
  CHECK_EQ(dp_func_param_types(A, NULL, 2, args, &picked), DIPPER_MISUSE);
  CHECK(picked == NULL);
  CHECK_EQ(dp_func_param_types(A, dp_func_get(DP_F_ADD), -1, args, &picked), DIPPER_MISUSE);
  CHECK_EQ(dp_func_param_types(NULL, dp_func_get(DP_F_ADD), 2, args, &picked), DIPPER_MISUSE);
  const dp_type *bad[2] = {T(DP_T_STRING), T(DP_T_BOOLEAN)};
  CHECK_EQ(dp_func_param_types(A, dp_func_get(DP_F_ADD), 2, bad, &picked), DIPPER_OK);
  CHECK(picked[0] == NULL && picked[1] == NULL); /* invalid call: no casts */
}

TEST(units_fit_their_operands) {
  setup();
  const dp_func *extract = dp_func_get(DP_F_EXTRACT), *floor_ = dp_func_get(DP_F_FLOOR);
  const dp_func *tsadd = dp_func_get(DP_F_TIMESTAMPADD);
  CHECK(dp_func_check_unit(A, extract, "HOUR", TS(3)) == NULL);
  CHECK(dp_func_check_unit(A, extract, "dow", T(DP_T_DATE)) == NULL);
  CHECK(dp_func_check_unit(A, extract, "EPOCH", LTZ(3)) == NULL);
  CHECK_STR(dp_func_check_unit(A, extract, "HOUR", T(DP_T_DATE)),
            "EXTRACT: a DATE has no HOUR; CAST it to TIMESTAMP, or use one of YEAR, QUARTER, "
            "MONTH, WEEK, DAY, DOW, DOY, EPOCH");
  CHECK_CONTAINS(dp_func_check_unit(A, extract, "DAY", T(DP_T_INTERVAL_YM)),
                 "cannot use unit DAY with INTERVAL YEAR TO MONTH; use one of YEAR, QUARTER, MONTH");
  CHECK(dp_func_check_unit(A, extract, "SECOND", T(DP_T_INTERVAL_DT)) == NULL);
  CHECK_CONTAINS(dp_func_check_unit(A, extract, "FORTNIGHT", TS(3)), "EXTRACT has no unit FORTNIGHT");
  CHECK(dp_func_check_unit(A, floor_, "HOUR", TS(3)) == NULL);
  CHECK(dp_func_check_unit(A, floor_, "MONTH", T(DP_T_DATE)) == NULL);
  CHECK_CONTAINS(dp_func_check_unit(A, floor_, "DOW", TS(3)), "FLOOR cannot use unit DOW");
  CHECK_CONTAINS(dp_func_check_unit(A, dp_func_get(DP_F_CEIL), "MINUTE", T(DP_T_DATE)),
                 "a DATE has no MINUTE");
  CHECK(dp_func_check_unit(A, tsadd, "HOUR", TS(3)) == NULL);
  CHECK(dp_func_check_unit(A, tsadd, "DAY", T(DP_T_DATE)) == NULL);
  CHECK_CONTAINS(dp_func_check_unit(A, tsadd, "HOUR", T(DP_T_DATE)), "a DATE has no HOUR");
  CHECK(dp_func_check_unit(A, dp_func_get(DP_F_TIMESTAMPDIFF), "SECOND", T(DP_T_DATE)) == NULL);
  CHECK(dp_func_check_unit(A, dp_func_get(DP_F_UPPER), "HOUR", TS(3)) == NULL); /* takes no unit */
}

int main(void) {
  int rc = RUN_TESTS();
  dp_arena_free(A);
  return rc;
}
