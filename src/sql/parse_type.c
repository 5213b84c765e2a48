/*
** parse_type.c — data types, for CAST and column definitions: the scalar
** types with their parameters (DECIMAL(p, s), VARCHAR(n), TIMESTAMP(3) WITH
** LOCAL TIME ZONE), ROW, ARRAY and MAP, and INTERVAL types.
**
** Owns: the type grammar.  Does not own: what a type means (core/types.c).
*/
#include <string.h>

#include "sql/parser_int.h"

/* ----------------------------------------------------------------- types */

static int parse_small_int(parser *p, const char *what, int lo, int hi) {
  const dp_token *t = cur(p);
  if (t->kind != DP_TK_INTEGER) dp_ps_fail_expected(p, what, NULL);
  long v = 0;
  for (uint32_t i = 0; i < t->span.len; i++) {
    v = v * 10 + (p->text[t->span.off + i] - '0');
    if (v > 1000000000L) break;
  }
  if (v < lo || v > hi)
    dp_ps_fail_at(p, DIPPER_SYNTAX, t->span, "%s must be between %d and %d, not %.*s", what, lo, hi,
                  (int)t->span.len, p->text + t->span.off);
  next(p);
  return (int)v;
}

/* Optional "(n)" after a type name; -1 when absent. */
int dp_ps_type_param(parser *p, const char *what, int lo, int hi, const char *type) {
  if (!accept(p, DP_TK_LPAREN)) return -1;
  int v = parse_small_int(p, what, lo, hi);
  dp_ps_expect(p, DP_TK_RPAREN, dp_ps_fmt(p, "')' to close the parameter of %s", type));
  return v;
}

static dp_type *new_type(parser *p, dp_type_kind kind) {
  dp_type *t = dp_type_new(p->a, kind);
  if (!t) dp_ps_out_of_memory(p);
  return t;
}

static const dp_type *check_type(parser *p, const dp_type *t) {
  if (!t) dp_ps_out_of_memory(p);
  return t;
}

/* ROW<a INT, b STRING> or ROW(a INT, b STRING): after ROW. */
static const dp_type *parse_row_fields(parser *p) {
  bool angle = at(p, DP_TK_LT);
  if (!angle && !at(p, DP_TK_LPAREN)) dp_ps_fail_expected(p, "'<' or '(' after ROW", NULL);
  next(p);
  dp_tok_kind close = angle ? DP_TK_GT : DP_TK_RPAREN;
  vec fields = {0};
  if (!at(p, close)) {
    do {
      dp_ast_ident name = dp_ps_ident(p, "a field name of ROW");
      dp_field *f = dp_ps_vec_push(p, &fields, sizeof(dp_field));
      f->name = name.name;
      f->type = dp_ps_type(p);
      if (accept_kw(p, DP_KW_COMMENT)) dp_ps_expect(p, DP_TK_STRING, "a string after COMMENT");
    } while (accept(p, DP_TK_COMMA));
  }
  dp_ps_expect(p, close, angle ? "'>' to close ROW<...>" : "')' to close ROW(...)");
  return check_type(p, dp_type_row(p->a, fields.n, fields.items));
}

static const dp_type *parse_interval_type(parser *p) {
  dp_time_unit from = dp_ps_unit_of(p, cur(p), false);
  if (from == DP_UNIT_NONE)
    dp_ps_fail_expected(p, "a unit after INTERVAL (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND)", NULL);
  next(p);
  dp_ps_type_param(p, "the interval precision", 0, 9, "INTERVAL");
  dp_time_unit to = DP_UNIT_NONE;
  if (accept_kw(p, DP_KW_TO)) {
    to = dp_ps_unit_of(p, cur(p), false);
    if (to == DP_UNIT_NONE) dp_ps_fail_expected(p, "a unit after TO", NULL);
    next(p);
    dp_ps_type_param(p, "the interval precision", 0, 9, "INTERVAL");
  }
  bool ym = (from == DP_UNIT_YEAR || from == DP_UNIT_MONTH || from == DP_UNIT_QUARTER) &&
            (to == DP_UNIT_NONE || to == DP_UNIT_MONTH || to == DP_UNIT_YEAR);
  return dp_type_of(ym ? DP_T_INTERVAL_YM : DP_T_INTERVAL_DT);
}

static const dp_type *parse_type_body(parser *p) {
  const dp_token *t = cur(p);
  if (t->kind != DP_TK_IDENT) dp_ps_fail_expected(p, "a type (INT, STRING, TIMESTAMP(3), ...)", NULL);
  next(p);
  dp_type *nt;
  if (dp_ps_is_word(p, t, "BOOLEAN") || dp_ps_is_word(p, t, "BOOL")) return dp_type_of(DP_T_BOOLEAN);
  if (dp_ps_is_word(p, t, "TINYINT")) return dp_type_of(DP_T_TINYINT);
  if (dp_ps_is_word(p, t, "SMALLINT")) return dp_type_of(DP_T_SMALLINT);
  if (dp_ps_is_word(p, t, "INT") || dp_ps_is_word(p, t, "INTEGER")) return dp_type_of(DP_T_INT);
  if (dp_ps_is_word(p, t, "BIGINT")) return dp_type_of(DP_T_BIGINT);
  if (dp_ps_is_word(p, t, "FLOAT") || dp_ps_is_word(p, t, "REAL")) return dp_type_of(DP_T_FLOAT);
  if (dp_ps_is_word(p, t, "DOUBLE")) {
    dp_ps_accept_word(p, "PRECISION");
    return dp_type_of(DP_T_DOUBLE);
  }
  if (dp_ps_is_word(p, t, "DECIMAL") || dp_ps_is_word(p, t, "DEC") || dp_ps_is_word(p, t, "NUMERIC")) {
    int prec = 10, scale = 0;
    if (accept(p, DP_TK_LPAREN)) {
      prec = parse_small_int(p, "the DECIMAL precision", 1, 38);
      if (accept(p, DP_TK_COMMA)) scale = parse_small_int(p, "the DECIMAL scale", 0, prec);
      dp_ps_expect(p, DP_TK_RPAREN, "')' to close DECIMAL(p, s)");
    }
    return check_type(p, dp_type_decimal(p->a, prec, scale));
  }
  if (dp_ps_is_word(p, t, "STRING") || dp_ps_is_word(p, t, "TEXT")) return dp_type_of(DP_T_STRING);
  if (dp_ps_is_word(p, t, "VARCHAR") || dp_ps_is_word(p, t, "CHAR") || dp_ps_is_word(p, t, "CHARACTER")) {
    if (dp_ps_is_word(p, t, "CHARACTER")) dp_ps_accept_word(p, "VARYING");
    int n = dp_ps_type_param(p, "the length", 1, 2147483647, "the character type");
    nt = new_type(p, DP_T_STRING);
    nt->length = n > 0 ? (uint32_t)n : 0;
    return nt;
  }
  if (dp_ps_is_word(p, t, "BYTES")) return dp_type_of(DP_T_BYTES);
  if (dp_ps_is_word(p, t, "BINARY") || dp_ps_is_word(p, t, "VARBINARY")) {
    int n = dp_ps_type_param(p, "the length", 1, 2147483647, "the binary type");
    nt = new_type(p, DP_T_BYTES);
    nt->length = n > 0 ? (uint32_t)n : 0;
    return nt;
  }
  if (dp_ps_is_word(p, t, "DATE")) return dp_type_of(DP_T_DATE);
  if (dp_ps_is_word(p, t, "TIME")) {
    int prec = dp_ps_type_param(p, "the TIME precision", 0, 9, "TIME");
    if (dp_ps_accept_word(p, "WITHOUT")) {
      dp_ps_accept_word(p, "TIME") ? (void)0 : dp_ps_fail_expected(p, "TIME ZONE after WITHOUT", NULL);
      if (!dp_ps_accept_word(p, "ZONE")) dp_ps_fail_expected(p, "ZONE after WITHOUT TIME", NULL);
    }
    if (prec < 0) return dp_type_of(DP_T_TIME);
    nt = new_type(p, DP_T_TIME);
    nt->precision = (uint8_t)prec;
    return nt;
  }
  if (dp_ps_is_word(p, t, "TIMESTAMP") || dp_ps_is_word(p, t, "TIMESTAMP_LTZ")) {
    dp_type_kind kind = dp_ps_is_word(p, t, "TIMESTAMP") ? DP_T_TIMESTAMP : DP_T_TIMESTAMP_LTZ;
    int prec = dp_ps_type_param(p, "the timestamp precision", 0, 9, "TIMESTAMP");
    if (kind == DP_T_TIMESTAMP && at_kw(p, DP_KW_WITH)) {
      const dp_token *with = cur(p);
      next(p);
      if (accept_kw(p, DP_KW_LOCAL)) {
        kind = DP_T_TIMESTAMP_LTZ;
      } else if (dp_ps_is_word(p, cur(p), "TIME")) {
        dp_ps_fail_at(p, DIPPER_UNSUPPORTED, with->span,
                      "TIMESTAMP WITH TIME ZONE is not supported: write TIMESTAMP_LTZ(p) or "
                      "TIMESTAMP(p) WITH LOCAL TIME ZONE");
      } else {
        dp_ps_fail_expected(p, "LOCAL TIME ZONE after TIMESTAMP WITH", NULL);
      }
      if (!dp_ps_accept_word(p, "TIME")) dp_ps_fail_expected(p, "TIME ZONE after WITH LOCAL", NULL);
      if (!dp_ps_accept_word(p, "ZONE")) dp_ps_fail_expected(p, "ZONE after WITH LOCAL TIME", NULL);
    } else if (kind == DP_T_TIMESTAMP && dp_ps_accept_word(p, "WITHOUT")) {
      if (!dp_ps_accept_word(p, "TIME")) dp_ps_fail_expected(p, "TIME ZONE after WITHOUT", NULL);
      if (!dp_ps_accept_word(p, "ZONE")) dp_ps_fail_expected(p, "ZONE after WITHOUT TIME", NULL);
    }
    /* Flink's default precision: TIMESTAMP is TIMESTAMP(6). */
    return check_type(p, dp_type_timestamp(p->a, kind, prec < 0 ? 6 : prec));
  }
  if (is_kw(t, DP_KW_INTERVAL)) return parse_interval_type(p);
  if (is_kw(t, DP_KW_ROW)) return parse_row_fields(p);
  if (is_kw(t, DP_KW_ARRAY)) {
    dp_ps_expect(p, DP_TK_LT, "'<' after ARRAY (write ARRAY<element type>)");
    const dp_type *elem = dp_ps_type(p);
    dp_ps_expect(p, DP_TK_GT, "'>' to close ARRAY<...>");
    return check_type(p, dp_type_array(p->a, elem));
  }
  if (is_kw(t, DP_KW_MAP)) {
    dp_ps_expect(p, DP_TK_LT, "'<' after MAP (write MAP<key type, value type>)");
    const dp_type *key = dp_ps_type(p);
    dp_ps_expect(p, DP_TK_COMMA, "',' between the key and value types of MAP<K, V>");
    const dp_type *value = dp_ps_type(p);
    dp_ps_expect(p, DP_TK_GT, "'>' to close MAP<...>");
    return check_type(p, dp_type_map(p->a, key, value));
  }
  if (is_kw(t, DP_KW_NULL)) return dp_type_of(DP_T_NULL);
  /* Spark's and Hive's names for the integer types. */
  static const char *const spark_types[][2] = {
      {"LONG", "BIGINT"}, {"SHORT", "SMALLINT"}, {"BYTE", "TINYINT"}};
  for (size_t i = 0; i < sizeof spark_types / sizeof spark_types[0]; i++)
    if (dp_ps_is_word(p, t, spark_types[i][0]))
      dp_ps_fail_at(p, DIPPER_SYNTAX, t->span, "%s is Spark's name for %s: write %s", spark_types[i][0],
                    spark_types[i][1], spark_types[i][1]);
  dp_ps_fail_at(p, DIPPER_SYNTAX, t->span,
                "unknown type %.*s: write one of BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, "
                "DOUBLE, DECIMAL(p, s), STRING, VARCHAR(n), BYTES, DATE, TIME, TIMESTAMP(p), "
                "TIMESTAMP_LTZ(p), INTERVAL, ROW<...>, ARRAY<...>, MAP<...>",
                (int)t->span.len, p->text + t->span.off);
}

const dp_type *dp_ps_type(parser *p) {
  dp_ps_enter(p);
  const dp_type *t = parse_type_body(p);
  if (at_kw(p, DP_KW_NOT) && is_kw(peek(p, 1), DP_KW_NULL)) {
    next(p);
    next(p);
    t = check_type(p, dp_type_with_nullability(p->a, t, true));
  } else if (at_kw(p, DP_KW_NULL)) {
    next(p);
  }
  leave(p);
  return t;
}
