/*
** parse_expr.c — expressions by precedence climbing: literals, intervals,
** CASE, CAST, calls (with the keyword forms POSITION, SUBSTRING, TRIM,
** EXTRACT), predicates (BETWEEN, IN, LIKE, IS), and the ORDER BY items and
** OVER windows that calls and queries share.
**
** Owns: the expression grammar.  Does not own: queries inside expressions
** (parse_query.c), types (parse_type.c).
*/
#include <string.h>

#include "sql/parse_json.h"
#include "sql/parser_int.h"

/* ----------------------------------------------------------- expressions */

static dp_ast_expr *new_expr(parser *p, dp_ast_expr_kind kind, const dp_token *start) {
  dp_ast_expr *e = dp_ps_alloc(p, sizeof *e);
  e->kind = kind;
  e->span = start->span;
  return e;
}

static void finish(parser *p, dp_ast_expr *e, const dp_token *start) {
  e->span = span_from(p, start);
}

dp_time_unit dp_ps_unit_of(const parser *p, const dp_token *t, bool extract) {
  if (t->kind != DP_TK_IDENT) return DP_UNIT_NONE;
  static const struct { const char *name; dp_time_unit unit; } units[] = {
      {"YEAR", DP_UNIT_YEAR}, {"QUARTER", DP_UNIT_QUARTER}, {"MONTH", DP_UNIT_MONTH},
      {"WEEK", DP_UNIT_WEEK}, {"DAY", DP_UNIT_DAY}, {"HOUR", DP_UNIT_HOUR},
      {"MINUTE", DP_UNIT_MINUTE}, {"SECOND", DP_UNIT_SECOND},
      {"MILLISECOND", DP_UNIT_MILLISECOND}, {"MICROSECOND", DP_UNIT_MICROSECOND},
      {"NANOSECOND", DP_UNIT_NANOSECOND}, {"DOW", DP_UNIT_DOW}, {"DOY", DP_UNIT_DOY},
      {"EPOCH", DP_UNIT_EPOCH},
  };
  const char *s = p->text + t->span.off;
  size_t n = t->span.len;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (!extract && units[i].unit >= DP_UNIT_DOW) break;
    size_t un = strlen(units[i].name);
    /* Plural spellings are accepted: INTERVAL '10' MINUTES. */
    if (n != un && !(n == un + 1 && (s[un] == 's' || s[un] == 'S'))) continue;
    bool same = true;
    for (size_t k = 0; k < un && same; k++) {
      char c = s[k];
      if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
      same = c == units[i].name[k];
    }
    if (same) return units[i].unit;
  }
  return DP_UNIT_NONE;
}

/* INTERVAL '5' SECOND, INTERVAL '1 02:00' DAY TO MINUTE, INTERVAL '5' SECOND(3),
** INTERVAL -'5' MINUTE; Spark's INTERVAL 10 SECONDS and INTERVAL '10 seconds'
** keep the text with unit NONE. */
static dp_ast_expr *parse_interval(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_expr *e = new_expr(p, DP_AX_INTERVAL, start);
  if (accept(p, DP_TK_MINUS)) e->u.interval.negative = true;
  else accept(p, DP_TK_PLUS);
  const dp_token *v = cur(p);
  if (v->kind == DP_TK_STRING) {
    next(p);
    e->u.interval.text = dp_ps_unquote(p, v);
    dp_time_unit u = dp_ps_unit_of(p, cur(p), false);
    if (u != DP_UNIT_NONE) {
      next(p);
      e->u.interval.unit = u;
      int prec = dp_ps_type_param(p, "the interval precision", 0, 9, "the interval unit");
      if (prec >= 0) e->u.interval.precision = prec;
      if (accept_kw(p, DP_KW_TO)) {
        dp_time_unit to = dp_ps_unit_of(p, cur(p), false);
        if (to == DP_UNIT_NONE)
          dp_ps_fail_expected(p, "a unit after TO (e.g. INTERVAL '1 02:00' DAY TO MINUTE)", NULL);
        next(p);
        e->u.interval.to_unit = to;
        prec = dp_ps_type_param(p, "the interval precision", 0, 9, "the interval unit");
        if (prec >= 0) e->u.interval.precision = prec;
      }
    }
  } else if (v->kind == DP_TK_INTEGER || v->kind == DP_TK_DECIMAL) {
    /* Spark: INTERVAL 1 HOUR 30 MINUTES. */
    const dp_token *first = v;
    do {
      next(p);
      if (dp_ps_unit_of(p, cur(p), false) == DP_UNIT_NONE)
        dp_ps_fail_expected(p, "a unit after the number (INTERVAL 10 SECONDS or INTERVAL '10' SECOND)",
                            NULL);
      next(p);
    } while (at(p, DP_TK_INTEGER) || at(p, DP_TK_DECIMAL));
    e->u.interval.text = dp_ps_copy(p, p->text + first->span.off, p->prev_end - first->span.off);
  } else {
    dp_ps_fail_expected(p, "a quoted value after INTERVAL", ": write INTERVAL '5' SECOND");
  }
  finish(p, e, start);
  return e;
}

static dp_ast_expr *parse_case(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_expr *e = new_expr(p, DP_AX_CASE, start);
  if (!at_kw(p, DP_KW_WHEN) && !at_kw(p, DP_KW_END)) e->u.case_.operand = dp_ps_expr(p);
  vec whens = {0}, thens = {0};
  if (!at_kw(p, DP_KW_WHEN)) dp_ps_fail_expected(p, "WHEN in CASE", NULL);
  while (accept_kw(p, DP_KW_WHEN)) {
    dp_ps_push_expr(p, &whens, dp_ps_expr(p));
    dp_ps_expect_kw(p, DP_KW_THEN, "THEN after the WHEN condition");
    dp_ps_push_expr(p, &thens, dp_ps_expr(p));
  }
  if (accept_kw(p, DP_KW_ELSE)) e->u.case_.else_ = dp_ps_expr(p);
  dp_ps_expect_kw(p, DP_KW_END, "END to close CASE");
  e->u.case_.n = whens.n;
  e->u.case_.whens = whens.items;
  e->u.case_.thens = thens.items;
  finish(p, e, start);
  return e;
}

static dp_ast_expr *parse_cast(parser *p, bool try_) {
  const dp_token *start = cur(p);
  const char *fname = try_ ? "TRY_CAST" : "CAST";
  next(p);
  dp_ps_expect(p, DP_TK_LPAREN, dp_ps_fmt(p, "'(' after %s", fname));
  dp_ast_expr *e = new_expr(p, DP_AX_CAST, start);
  e->u.cast.arg = dp_ps_expr(p);
  e->u.cast.try_ = try_;
  dp_ps_expect_kw(p, DP_KW_AS, dp_ps_fmt(p, "AS in %s(value AS type)", fname));
  const dp_token *ts = cur(p);
  e->u.cast.type = dp_ps_type(p);
  e->u.cast.type_span = span_from(p, ts);
  dp_ps_expect(p, DP_TK_RPAREN, dp_ps_fmt(p, "')' to close %s(...)", fname));
  finish(p, e, start);
  return e;
}

/* Expressions separated by commas up to `close`, which is consumed. */
void dp_ps_expr_list(parser *p, vec *v, dp_tok_kind close, const char *closing) {
  if (!at(p, close)) {
    do {
      dp_ps_push_expr(p, v, dp_ps_expr(p));
    } while (accept(p, DP_TK_COMMA));
  }
  dp_ps_expect(p, close, closing);
}

bool dp_ps_starts_query(const dp_token *t) {
  return is_kw(t, DP_KW_SELECT) || is_kw(t, DP_KW_WITH) || is_kw(t, DP_KW_VALUES);
}

static bool same_word(const char *a, const char *upper_word) {
  for (; *a && *upper_word; a++, upper_word++) {
    char c = *a;
    if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    if (c != *upper_word) return false;
  }
  return *a == 0 && *upper_word == 0;
}

/* The standard's keyword-argument forms, rewritten to the plain calls the
** function catalog knows:
**   POSITION(a IN b)                         -> POSITION(a, b)
**   SUBSTRING(s FROM i [FOR n])              -> SUBSTRING(s, i [, n])
**   OVERLAY(s PLACING r FROM i [FOR n])      -> OVERLAY(s, r, i [, n])
**   TRIM([BOTH|LEADING|TRAILING] [c] FROM s) -> TRIM|LTRIM|RTRIM(s [, c])
** Called after '('.  Returns true when it parsed the whole call.  Otherwise
** the call is written the plain way and *first is its first argument when one
** was already parsed (never parse twice: nested calls would cost 2^depth). */
/* A unit keyword (HOUR, MINUTES, ...) as the STRING literal naming its unit, spelled
   as the catalog's units are ('HOUR'); consumes the token. */
static dp_ast_expr *unit_literal(parser *p, const dp_token *t) {
#define DP_UNIT_NAME_(n) #n,
  static const char *const unit_names[] = {"", DP_TIME_UNITS(DP_UNIT_NAME_)};
#undef DP_UNIT_NAME_
  dp_ast_expr *e = new_expr(p, DP_AX_LITERAL, t);
  e->u.lit.kind = DP_LIT_STRING;
  e->u.lit.text = unit_names[dp_ps_unit_of(p, t, false)];
  next(p);
  return e;
}

static bool parse_keyword_args(parser *p, dp_ast_expr *e, const char *fn, const char *closing,
                               dp_ast_expr **first) {
  vec args = {0};
  *first = NULL;
  if (dp_ps_json_call(p, e, fn, closing)) return true; /* parse_json.c */
  if (same_word(fn, "POSITION")) {
    bool was = p->in_position;
    p->in_position = true; /* `a IN b` here is not an IN predicate */
    dp_ast_expr *needle = dp_ps_expr(p);
    p->in_position = was;
    if (!accept_kw(p, DP_KW_IN)) {
      *first = needle;
      return false;
    }
    dp_ps_push_expr(p, &args, needle);
    dp_ps_push_expr(p, &args, dp_ps_expr(p));
  } else if (same_word(fn, "SUBSTRING") || same_word(fn, "SUBSTR")) {
    dp_ast_expr *str = dp_ps_expr(p);
    if (!accept_kw(p, DP_KW_FROM)) {
      *first = str;
      return false;
    }
    dp_ps_push_expr(p, &args, str);
    dp_ps_push_expr(p, &args, dp_ps_expr(p));
    if (accept_kw(p, DP_KW_FOR)) dp_ps_push_expr(p, &args, dp_ps_expr(p));
  } else if (same_word(fn, "OVERLAY")) {
    dp_ast_expr *str = dp_ps_expr(p);
    if (!dp_ps_accept_word(p, "PLACING")) {
      *first = str;
      return false;
    }
    dp_ps_push_expr(p, &args, str);
    dp_ps_push_expr(p, &args, dp_ps_expr(p));
    if (!accept_kw(p, DP_KW_FROM))
      dp_ps_fail_expected(p, "FROM in OVERLAY(string PLACING replacement FROM position [FOR length])", NULL);
    dp_ps_push_expr(p, &args, dp_ps_expr(p));
    if (accept_kw(p, DP_KW_FOR)) dp_ps_push_expr(p, &args, dp_ps_expr(p));
  } else if (same_word(fn, "TRIM")) {
    const char *side = NULL;
    const dp_token *t1 = peek(p, 1);
    if (t1->kind != DP_TK_RPAREN && t1->kind != DP_TK_COMMA) {
      if (dp_ps_accept_word(p, "BOTH")) side = "TRIM";
      else if (dp_ps_accept_word(p, "LEADING")) side = "LTRIM";
      else if (dp_ps_accept_word(p, "TRAILING")) side = "RTRIM";
    }
    dp_ast_expr *chars = NULL, *str;
    if (side && accept_kw(p, DP_KW_FROM)) {
      str = dp_ps_expr(p);
    } else {
      dp_ast_expr *arg = dp_ps_expr(p);
      if (accept_kw(p, DP_KW_FROM)) {
        chars = arg;
        str = dp_ps_expr(p);
      } else if (side) {
        dp_ps_fail_expected(p, "FROM in TRIM(BOTH|LEADING|TRAILING [characters] FROM string)", NULL);
      } else {
        *first = arg;
        return false;
      }
    }
    dp_ps_push_expr(p, &args, str);
    if (chars) dp_ps_push_expr(p, &args, chars);
    if (side && side[0] != 'T') {
      dp_ast_ident *part = dp_ps_alloc(p, sizeof *part);
      *part = e->u.call.name.parts[0];
      part->name = side;
      e->u.call.name.parts = part;
    }
  } else if (same_word(fn, "FLOOR") || same_word(fn, "CEIL") || same_word(fn, "CEILING")) {
    /* FLOOR(ts TO HOUR) is floor(ts, 'HOUR'): the catalog takes units as strings. */
    dp_ast_expr *value = dp_ps_expr(p);
    if (!accept_kw(p, DP_KW_TO)) {
      *first = value;
      return false;
    }
    dp_ps_push_expr(p, &args, value);
    const dp_token *unit = cur(p);
    if (dp_ps_unit_of(p, unit, false) == DP_UNIT_NONE)
      dp_ps_fail_expected(p, dp_ps_fmt(p, "a unit after TO in %s(value TO unit): YEAR, QUARTER, MONTH, "
                               "WEEK, DAY, HOUR, MINUTE, SECOND, ...", fn),
                    NULL);
    dp_ps_push_expr(p, &args, unit_literal(p, unit));
  } else if ((same_word(fn, "TIMESTAMPADD") || same_word(fn, "TIMESTAMPDIFF")) &&
             dp_ps_unit_of(p, cur(p), false) != DP_UNIT_NONE && peek(p, 1)->kind == DP_TK_COMMA) {
    /* The unit written as a keyword, TIMESTAMPADD(HOUR, 3, ts), is the string 'HOUR'
       rather than a column; the rest are ordinary arguments. */
    *first = unit_literal(p, cur(p));
    return false;
  } else {
    return false;
  }
  dp_ps_expect(p, DP_TK_RPAREN, closing);
  e->u.call.nargs = args.n;
  e->u.call.args = args.items;
  return true;
}

/* f(args) [FILTER (WHERE ..)] [OVER ..], after the name; start is the name. */
dp_ast_expr *dp_ps_call(parser *p, dp_ast_name name, const dp_token *start) {
  dp_ast_expr *e = new_expr(p, DP_AX_CALL, start);
  e->u.call.name = name;
  const char *fname = dp_ps_fmt(p, "%s", name.parts[name.n - 1].name);
  const char *closing = dp_ps_fmt(p, "')' to close the argument list of %s", fname);
  next(p); /* ( */
  dp_ast_expr *first = NULL;
  if (name.n == 1 && !name.parts[0].quoted && parse_keyword_args(p, e, fname, closing, &first)) {
    finish(p, e, start);
    return e;
  }
  vec args = {0}, names = {0}, tables = {0}, partition = {0};
  bool any_named = false, any_table = false;
  if (first) {
    dp_ps_push_expr(p, &args, first);
    *(const char **)dp_ps_vec_push(p, &names, sizeof(char *)) = NULL;
    *(bool *)dp_ps_vec_push(p, &tables, sizeof(bool)) = false;
  }
  if (!first && at(p, DP_TK_STAR) && peek(p, 1)->kind == DP_TK_RPAREN) {
    next(p);
    e->u.call.star = true;
  } else if (first ? accept(p, DP_TK_COMMA) : !at(p, DP_TK_RPAREN)) {
    if (!first) {
      if (accept_kw(p, DP_KW_DISTINCT)) e->u.call.distinct = true;
      else accept_kw(p, DP_KW_ALL);
    }
    do {
      const char *arg_name = NULL;
      if ((at(p, DP_TK_IDENT) || at(p, DP_TK_QIDENT)) && peek(p, 1)->kind == DP_TK_FATARROW) {
        arg_name = dp_ps_ident_of(p, cur(p)).name;
        next(p);
        next(p);
        any_named = true;
      }
      bool table = false;
      dp_ast_expr *arg;
      if (at_kw(p, DP_KW_TABLE)) {
        const dp_token *ts = cur(p);
        next(p);
        if (at(p, DP_TK_LPAREN))
          dp_ps_fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span,
                        "a table argument of %s must name a table: write TABLE t, and put the "
                        "subquery in a view or a WITH clause",
                        fname);
        arg = new_expr(p, DP_AX_COLUMN, ts);
        arg->u.name = dp_ps_name(p, "a table name after TABLE");
        finish(p, arg, ts);
        table = any_table = true;
        if (accept_kw(p, DP_KW_PARTITION)) {
          dp_ps_expect_kw(p, DP_KW_BY, "BY after PARTITION");
          /* Several keys go in parentheses: the commas outside separate arguments. */
          if (accept(p, DP_TK_LPAREN))
            dp_ps_expr_list(p, &partition, DP_TK_RPAREN, "')' to close PARTITION BY (...)");
          else
            dp_ps_push_expr(p, &partition, dp_ps_expr(p));
        }
      } else {
        arg = dp_ps_expr(p);
      }
      dp_ps_push_expr(p, &args, arg);
      *(const char **)dp_ps_vec_push(p, &names, sizeof(char *)) = arg_name;
      *(bool *)dp_ps_vec_push(p, &tables, sizeof(bool)) = table;
    } while (accept(p, DP_TK_COMMA));
    if (at_kw(p, DP_KW_ORDER))
      dp_ps_fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span,
                    "ORDER BY inside the arguments of %s is not supported", fname);
  }
  if (!accept(p, DP_TK_RPAREN)) {
    const dp_token *t = cur(p);
    bool looks_like_arg = t->kind == DP_TK_IDENT || t->kind == DP_TK_QIDENT ||
                          t->kind == DP_TK_INTEGER || t->kind == DP_TK_STRING;
    dp_ps_fail_expected(p, closing, looks_like_arg ? ": is a ',' missing between arguments?" : NULL);
  }
  e->u.call.nargs = args.n;
  e->u.call.args = args.items;
  if (any_named) e->u.call.arg_names = names.items;
  if (any_table) e->u.call.table_arg = tables.items;
  e->u.call.npartition_by = partition.n;
  e->u.call.partition_by = partition.items;
  if (at_kw(p, DP_KW_FILTER) && peek(p, 1)->kind == DP_TK_LPAREN) {
    next(p);
    next(p);
    dp_ps_expect_kw(p, DP_KW_WHERE, "WHERE in FILTER (WHERE ...)");
    e->u.call.filter = dp_ps_expr(p);
    dp_ps_expect(p, DP_TK_RPAREN, "')' to close FILTER (WHERE ...)");
  }
  if (accept_kw(p, DP_KW_OVER)) {
    if (at(p, DP_TK_LPAREN)) {
      e->u.call.over = dp_ps_window_spec(p);
    } else {
      const dp_token *wt = cur(p);
      dp_ast_ident w = dp_ps_ident(p, "a window name or '(' after OVER");
      dp_ast_window *win = dp_ps_alloc(p, sizeof *win);
      win->ref_name = w.name;
      win->span = wt->span;
      e->u.call.over = win;
    }
  }
  finish(p, e, start);
  return e;
}

/* CURRENT_TIMESTAMP and friends are calls even without parentheses. */
static bool is_niladic(const parser *p, const dp_token *t) {
  return dp_ps_is_word(p, t, "CURRENT_TIMESTAMP") || dp_ps_is_word(p, t, "CURRENT_DATE") ||
         dp_ps_is_word(p, t, "CURRENT_TIME") || dp_ps_is_word(p, t, "LOCALTIMESTAMP") ||
         dp_ps_is_word(p, t, "LOCALTIME");
}

static dp_ast_expr *typed_literal(parser *p, const dp_token *start, dp_ast_lit_kind kind) {
  dp_ast_expr *e = new_expr(p, DP_AX_LITERAL, start);
  next(p);
  e->u.lit.kind = kind;
  e->u.lit.text = dp_ps_unquote(p, cur(p));
  next(p);
  finish(p, e, start);
  return e;
}

/* '(' after it: a subquery, an expression in parentheses, or a row (a, b). */
static dp_ast_expr *parse_parenthesized(parser *p, const dp_token *t) {
  dp_ast_expr *e;
  next(p);
  if (dp_ps_starts_query(cur(p))) {
    e = new_expr(p, DP_AX_SUBQUERY, t);
    e->u.subquery.query = dp_ps_query(p);
    dp_ps_expect(p, DP_TK_RPAREN, "')' to close the subquery");
  } else {
    e = dp_ps_expr(p);
    if (at(p, DP_TK_COMMA)) {
      dp_ast_expr *row = new_expr(p, DP_AX_CONSTRUCT, t);
      vec items = {0};
      dp_ps_push_expr(p, &items, e);
      next(p);
      dp_ps_expr_list(p, &items, DP_TK_RPAREN, "')' to close the row (a, b, ...)");
      row->u.construct.kind = 'R';
      row->u.construct.n = items.n;
      row->u.construct.items = items.items;
      e = row;
    } else {
      dp_ps_expect(p, DP_TK_RPAREN, "')' to close the parenthesis");
    }
  }
  e->parens = true;
  finish(p, e, t);
  return e;
}

/* EXISTS (query), at EXISTS. */
static dp_ast_expr *parse_exists(parser *p, const dp_token *t) {
  next(p);
  dp_ps_expect(p, DP_TK_LPAREN, "'(' after EXISTS");
  if (!dp_ps_starts_query(cur(p)))
    dp_ps_fail_expected(p, "a query (SELECT ...) in EXISTS (...)", NULL);
  dp_ast_expr *e = new_expr(p, DP_AX_EXISTS, t);
  e->u.subquery.query = dp_ps_query(p);
  dp_ps_expect(p, DP_TK_RPAREN, "')' to close EXISTS (...)");
  finish(p, e, t);
  return e;
}

/* EXTRACT(unit FROM value), at EXTRACT with '(' next. */
static dp_ast_expr *parse_extract(parser *p, const dp_token *t) {
  next(p);
  next(p);
  dp_ast_expr *e = new_expr(p, DP_AX_EXTRACT, t);
  e->u.extract.unit = dp_ps_unit_of(p, cur(p), true);
  if (e->u.extract.unit == DP_UNIT_NONE)
    dp_ps_fail_expected(p, "a unit in EXTRACT (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ...)",
                        NULL);
  next(p);
  dp_ps_expect_kw(p, DP_KW_FROM, "FROM in EXTRACT(unit FROM value)");
  e->u.extract.arg = dp_ps_expr(p);
  dp_ps_expect(p, DP_TK_RPAREN, "')' to close EXTRACT(...)");
  finish(p, e, t);
  return e;
}

/* ARRAY[...], MAP[...] (key, value pairs) or ROW(...), at the keyword with
** its bracket next. */
static dp_ast_expr *parse_constructor(parser *p, const dp_token *t) {
  bool map = t->kw == DP_KW_MAP, row = t->kw == DP_KW_ROW;
  next(p);
  next(p);
  dp_ast_expr *e = new_expr(p, DP_AX_CONSTRUCT, t);
  vec items = {0};
  dp_ps_expr_list(p, &items, row ? DP_TK_RPAREN : DP_TK_RBRACKET,
                  row   ? "')' to close ROW(...)"
                  : map ? "']' to close MAP[...]"
                        : "']' to close ARRAY[...]");
  if (map && items.n % 2 != 0)
    dp_ps_fail_at(p, DIPPER_SYNTAX, span_from(p, t),
                  "MAP[...] takes key, value pairs: it has %d items, an odd number", items.n);
  e->u.construct.kind = row ? 'R' : map ? 'M' : 'A';
  e->u.construct.n = items.n;
  e->u.construct.items = items.items;
  finish(p, e, t);
  return e;
}

/* The one-part call name `t` (LEFT, CURRENT_DATE, ...). */
static dp_ast_name word_name(parser *p, const dp_token *t) {
  vec parts = {0};
  *(dp_ast_ident *)dp_ps_vec_push(p, &parts, sizeof(dp_ast_ident)) = dp_ps_ident_of(p, t);
  return dp_ps_name_of_parts(p, &parts);
}

/* An expression that a word starts: TRUE, CASE, CAST, INTERVAL, EXISTS,
** EXTRACT, constructors, DESCRIPTOR, LEFT(..), DATE '..', CURRENT_DATE.  NULL,
** with nothing consumed, when the word is a name here. */
static dp_ast_expr *parse_word_primary(parser *p, const dp_token *t) {
  const dp_token *t1 = peek(p, 1);
  dp_ast_expr *e;
  switch ((dp_keyword)t->kw) {
    case DP_KW_TRUE:
    case DP_KW_FALSE:
    case DP_KW_NULL:
      e = new_expr(p, DP_AX_LITERAL, t);
      e->u.lit.kind = t->kw == DP_KW_TRUE    ? DP_LIT_TRUE
                      : t->kw == DP_KW_FALSE ? DP_LIT_FALSE
                                             : DP_LIT_NULL;
      next(p);
      return e;
    case DP_KW_CASE: return parse_case(p);
    case DP_KW_CAST: return parse_cast(p, false);
    case DP_KW_TRY_CAST: return t1->kind == DP_TK_LPAREN ? parse_cast(p, true) : NULL;
    case DP_KW_INTERVAL: return parse_interval(p);
    case DP_KW_EXISTS: return parse_exists(p, t);
    case DP_KW_EXTRACT: return t1->kind == DP_TK_LPAREN ? parse_extract(p, t) : NULL;
    case DP_KW_ARRAY:
    case DP_KW_MAP: return t1->kind == DP_TK_LBRACKET ? parse_constructor(p, t) : NULL;
    case DP_KW_ROW: return t1->kind == DP_TK_LPAREN ? parse_constructor(p, t) : NULL;
    case DP_KW_DESCRIPTOR:
      if (t1->kind == DP_TK_LPAREN) {
        next(p);
        int n = 0;
        e = new_expr(p, DP_AX_DESCRIPTOR, t);
        e->u.descriptor.cols =
            dp_ps_ident_list(p, &n, "columns", "')' to close DESCRIPTOR(...)");
        e->u.descriptor.n = n;
        finish(p, e, t);
        return e;
      }
      return NULL;
    case DP_KW_LEFT:
    case DP_KW_RIGHT:
      /* LEFT(s, n) and RIGHT(s, n) are functions despite the join words. */
      if (t1->kind == DP_TK_LPAREN) {
        dp_ast_name name = word_name(p, t);
        next(p);
        return dp_ps_call(p, name, t);
      }
      return NULL;
    case DP_KW_NONE:
      if (t1->kind == DP_TK_STRING) {
        if (dp_ps_is_word(p, t, "DATE")) return typed_literal(p, t, DP_LIT_DATE);
        if (dp_ps_is_word(p, t, "TIME")) return typed_literal(p, t, DP_LIT_TIME);
        if (dp_ps_is_word(p, t, "TIMESTAMP")) return typed_literal(p, t, DP_LIT_TIMESTAMP);
        if (dp_ps_is_word(p, t, "TIMESTAMP_LTZ"))
          return typed_literal(p, t, DP_LIT_TIMESTAMP_LTZ);
      }
      if (t1->kind != DP_TK_LPAREN && is_niladic(p, t)) {
        e = new_expr(p, DP_AX_CALL, t);
        e->u.call.name = word_name(p, t);
        next(p);
        return e;
      }
      return NULL;
    default: return NULL;
  }
}

/* A name: a column (a.b.c), a qualified star (t.*) or a call (f(..)). */
static dp_ast_expr *parse_name_primary(parser *p, const dp_token *t) {
  dp_ast_expr *e;
  if (!dp_ps_is_name_token(t, false)) {
    if (t->kind == DP_TK_IDENT && t->kw)
      dp_ps_fail_expected(p, "an expression",
                          dp_arena_printf(p->a,
                                          ": %s is a reserved word; to use it as a name write "
                                          "it in backticks, `%.*s`",
                                          dp_lex_keyword_name(t->kw), (int)t->span.len,
                                          p->text + t->span.off));
    dp_ps_fail_expected(p, "an expression", NULL);
  }
  vec parts = {0};
  *(dp_ast_ident *)dp_ps_vec_push(p, &parts, sizeof(dp_ast_ident)) = dp_ps_ident_of(p, t);
  next(p);
  while (at(p, DP_TK_DOT)) {
    if (peek(p, 1)->kind == DP_TK_STAR) {
      next(p);
      next(p);
      e = new_expr(p, DP_AX_STAR, t);
      e->u.star.qualifier = dp_ps_name_of_parts(p, &parts);
      finish(p, e, t);
      return e;
    }
    next(p);
    *(dp_ast_ident *)dp_ps_vec_push(p, &parts, sizeof(dp_ast_ident)) =
        dp_ps_ident_after_dot(p, "a name after '.'");
  }
  dp_ast_name name = dp_ps_name_of_parts(p, &parts);
  if (at(p, DP_TK_LPAREN)) return dp_ps_call(p, name, t);
  e = new_expr(p, DP_AX_COLUMN, t);
  e->u.name = name;
  finish(p, e, t);
  return e;
}

static dp_ast_expr *parse_primary(parser *p) {
  const dp_token *t = cur(p);
  dp_ast_expr *e;
  switch ((dp_tok_kind)t->kind) {
    case DP_TK_INTEGER:
    case DP_TK_DECIMAL:
    case DP_TK_FLOAT:
      e = new_expr(p, DP_AX_LITERAL, t);
      e->u.lit.kind = t->kind == DP_TK_INTEGER   ? DP_LIT_INTEGER
                      : t->kind == DP_TK_DECIMAL ? DP_LIT_DECIMAL
                                                 : DP_LIT_FLOAT;
      e->u.lit.text = dp_ps_token_text(p, t);
      next(p);
      return e;
    case DP_TK_STRING:
    case DP_TK_BINARY:
      e = new_expr(p, DP_AX_LITERAL, t);
      e->u.lit.kind = t->kind == DP_TK_STRING ? DP_LIT_STRING : DP_LIT_BINARY;
      e->u.lit.text = dp_ps_unquote(p, t);
      next(p);
      return e;
    case DP_TK_QMARK:
      e = new_expr(p, DP_AX_PARAM, t);
      next(p);
      return e;
    case DP_TK_STAR:
      e = new_expr(p, DP_AX_STAR, t);
      next(p);
      return e;
    case DP_TK_LPAREN: return parse_parenthesized(p, t);
    case DP_TK_IDENT:
      e = parse_word_primary(p, t);
      return e ? e : parse_name_primary(p, t);
    case DP_TK_QIDENT: return parse_name_primary(p, t);
    case DP_TK_ERROR:
      dp_ps_fail_lex(p, t);
    default:
      dp_ps_fail_expected(p, "an expression", NULL);
  }
}

static dp_ast_expr *parse_postfix(parser *p, dp_ast_expr *e, const dp_token *start) {
  for (;;) {
    if (at(p, DP_TK_DOT)) {
      next(p);
      dp_ast_expr *f = new_expr(p, DP_AX_FIELD, start);
      f->u.field.arg = e;
      f->u.field.field = dp_ps_ident_after_dot(p, "a field name after '.'");
      finish(p, f, start);
      e = f;
    } else if (at(p, DP_TK_LBRACKET)) {
      next(p);
      dp_ast_expr *s = new_expr(p, DP_AX_SUBSCRIPT, start);
      s->u.subscript.arg = e;
      s->u.subscript.index = dp_ps_expr(p);
      dp_ps_expect(p, DP_TK_RBRACKET, "']' to close the subscript");
      finish(p, s, start);
      e = s;
    } else if (at(p, DP_TK_DCOLON)) {
      next(p);
      dp_ast_expr *c = new_expr(p, DP_AX_CAST, start);
      c->u.cast.arg = e;
      const dp_token *ts = cur(p);
      c->u.cast.type = dp_ps_type(p);
      c->u.cast.type_span = span_from(p, ts);
      finish(p, c, start);
      e = c;
    } else {
      return e;
    }
  }
}

/* Prefix operators, then a primary with its postfix operators.  Chains of
** signs are taken in a loop so that "- - - x" costs no stack. */
static dp_ast_expr *parse_unary(parser *p) {
  const dp_token *start = cur(p);
  if (at_kw(p, DP_KW_NOT)) {
    next(p);
    dp_ast_expr *arg = dp_ps_binary(p, PREC_NOT);
    if (arg->kind == DP_AX_EXISTS && !arg->parens) {
      arg->u.subquery.negated = !arg->u.subquery.negated;
      finish(p, arg, start);
      return arg;
    }
    dp_ast_expr *e = new_expr(p, DP_AX_UNARY, start);
    e->u.unary.op = DP_UOP_NOT;
    e->u.unary.arg = arg;
    finish(p, e, start);
    return e;
  }
  int first = p->pos;
  while (at(p, DP_TK_MINUS) || at(p, DP_TK_PLUS) || at(p, DP_TK_TILDE)) next(p);
  int last = p->pos;
  const dp_token *pstart = cur(p);
  dp_ast_expr *e = parse_postfix(p, parse_primary(p), pstart);
  for (int i = last - 1; i >= first; i--) {
    const dp_token *op = &p->toks[i];
    dp_ast_expr *u = new_expr(p, DP_AX_UNARY, op);
    u->u.unary.op = op->kind == DP_TK_MINUS  ? DP_UOP_NEG
                    : op->kind == DP_TK_PLUS ? DP_UOP_PLUS
                                             : DP_UOP_BITNOT;
    u->u.unary.arg = e;
    finish(p, u, op);
    e = u;
  }
  return e;
}

static bool binop_of(const dp_token *t, dp_ast_binop *op, int *prec) {
  switch ((dp_tok_kind)t->kind) {
    case DP_TK_EQ: *op = DP_BOP_EQ; *prec = PREC_CMP; return true;
    case DP_TK_NE: *op = DP_BOP_NE; *prec = PREC_CMP; return true;
    case DP_TK_LT: *op = DP_BOP_LT; *prec = PREC_CMP; return true;
    case DP_TK_LE: *op = DP_BOP_LE; *prec = PREC_CMP; return true;
    case DP_TK_GT: *op = DP_BOP_GT; *prec = PREC_CMP; return true;
    case DP_TK_GE: *op = DP_BOP_GE; *prec = PREC_CMP; return true;
    case DP_TK_PIPE: *op = DP_BOP_BITOR; *prec = PREC_BITOR; return true;
    case DP_TK_CARET: *op = DP_BOP_BITXOR; *prec = PREC_BITXOR; return true;
    case DP_TK_AMP: *op = DP_BOP_BITAND; *prec = PREC_BITAND; return true;
    case DP_TK_PLUS: *op = DP_BOP_ADD; *prec = PREC_ADD; return true;
    case DP_TK_MINUS: *op = DP_BOP_SUB; *prec = PREC_ADD; return true;
    case DP_TK_CONCAT: *op = DP_BOP_CONCAT; *prec = PREC_ADD; return true;
    case DP_TK_STAR: *op = DP_BOP_MUL; *prec = PREC_MUL; return true;
    case DP_TK_SLASH: *op = DP_BOP_DIV; *prec = PREC_MUL; return true;
    case DP_TK_PERCENT: *op = DP_BOP_MOD; *prec = PREC_MUL; return true;
    case DP_TK_IDENT:
      if (t->kw == DP_KW_OR) { *op = DP_BOP_OR; *prec = PREC_OR; return true; }
      if (t->kw == DP_KW_AND) { *op = DP_BOP_AND; *prec = PREC_AND; return true; }
      return false;
    default: return false;
  }
}

/* The comparison-level postfix forms: IS, BETWEEN, IN, LIKE, SIMILAR TO,
** RLIKE, each maybe after NOT.  NULL when the next tokens are none of them. */
static bool is_period(const dp_ast_expr *e) {
  return e && e->kind == DP_AX_CONSTRUCT && e->u.construct.kind == 'R' && e->parens && e->u.construct.n == 2;
}

static dp_ast_expr *parse_predicate(parser *p, dp_ast_expr *left, const dp_token *start) {
  const dp_token *t = cur(p);
  bool negated = false;
  /* (t1, t2) OVERLAPS (t3, t4): the SQL period predicate */
  if (dp_ps_is_word(p, t, "OVERLAPS") && is_period(left) && peek(p, 1)->kind == DP_TK_LPAREN) {
    next(p);
    dp_ast_expr *right = dp_ps_binary(p, PREC_CMP + 1);
    if (!is_period(right))
      dp_ps_fail_at(p, DIPPER_SYNTAX, right ? right->span : t->span,
                    "OVERLAPS compares two periods: (start, end or INTERVAL) OVERLAPS (start, end or INTERVAL)");
    dp_ast_expr *e = new_expr(p, DP_AX_BINARY, start);
    e->u.binary.op = DP_BOP_OVERLAPS;
    e->u.binary.left = left;
    e->u.binary.right = right;
    finish(p, e, start);
    return e;
  }
  if (is_kw(t, DP_KW_NOT)) {
    const dp_token *t1 = peek(p, 1);
    if (!is_kw(t1, DP_KW_BETWEEN) && !is_kw(t1, DP_KW_IN) && !is_kw(t1, DP_KW_LIKE) &&
        !is_kw(t1, DP_KW_SIMILAR) && !is_kw(t1, DP_KW_RLIKE))
      return NULL;
    negated = true;
    next(p);
    t = cur(p);
  }
  dp_ast_expr *e;
  if (is_kw(t, DP_KW_IS)) {
    next(p);
    e = new_expr(p, DP_AX_IS, start);
    e->u.is.arg = left;
    e->u.is.negated = accept_kw(p, DP_KW_NOT);
    dp_ast_expr *is_json = dp_ps_is_json(p, e, start); /* x IS [NOT] JSON [kind]: parse_json.c */
    if (is_json) return is_json;
    if (accept_kw(p, DP_KW_NULL)) e->u.is.what = DP_IS_NULL;
    else if (accept_kw(p, DP_KW_TRUE)) e->u.is.what = DP_IS_TRUE;
    else if (accept_kw(p, DP_KW_FALSE)) e->u.is.what = DP_IS_FALSE;
    else if (accept_kw(p, DP_KW_UNKNOWN)) e->u.is.what = DP_IS_UNKNOWN;
    else if (accept_kw(p, DP_KW_DISTINCT)) {
      dp_ps_expect_kw(p, DP_KW_FROM, "FROM after IS DISTINCT");
      e->u.is.what = DP_IS_DISTINCT_FROM;
      e->u.is.other = dp_ps_binary(p, PREC_CMP + 1);
    } else {
      dp_ps_fail_expected(p, "NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS", NULL);
    }
  } else if (is_kw(t, DP_KW_BETWEEN)) {
    next(p);
    e = new_expr(p, DP_AX_BETWEEN, start);
    e->u.between.arg = left;
    e->u.between.negated = negated;
    if (accept_kw(p, DP_KW_SYMMETRIC)) e->u.between.symmetric = true;
    else dp_ps_accept_word(p, "ASYMMETRIC");
    e->u.between.lo = dp_ps_binary(p, PREC_CMP + 1);
    dp_ps_expect_kw(p, DP_KW_AND, "AND in BETWEEN low AND high");
    e->u.between.hi = dp_ps_binary(p, PREC_CMP + 1);
  } else if (is_kw(t, DP_KW_IN)) {
    if (p->in_position && !negated && peek(p, 1)->kind != DP_TK_LPAREN) return NULL;
    next(p);
    dp_ps_expect(p, DP_TK_LPAREN, "'(' after IN (write IN (1, 2) or IN (SELECT ...))");
    if (dp_ps_starts_query(cur(p))) {
      e = new_expr(p, DP_AX_IN_QUERY, start);
      e->u.in_query.arg = left;
      e->u.in_query.negated = negated;
      e->u.in_query.query = dp_ps_query(p);
      dp_ps_expect(p, DP_TK_RPAREN, "')' to close IN (SELECT ...)");
    } else {
      e = new_expr(p, DP_AX_IN_LIST, start);
      vec items = {0};
      if (at(p, DP_TK_RPAREN)) dp_ps_fail_expected(p, "a value in IN (...)", NULL);
      dp_ps_expr_list(p, &items, DP_TK_RPAREN, "')' to close the IN list");
      e->u.in_list.arg = left;
      e->u.in_list.negated = negated;
      e->u.in_list.n = items.n;
      e->u.in_list.items = items.items;
    }
  } else if (is_kw(t, DP_KW_LIKE) || is_kw(t, DP_KW_SIMILAR) || is_kw(t, DP_KW_RLIKE)) {
    next(p);
    e = new_expr(p, DP_AX_LIKE, start);
    e->u.like.kind = is_kw(t, DP_KW_LIKE) ? DP_LIKE : is_kw(t, DP_KW_RLIKE) ? DP_RLIKE : DP_SIMILAR;
    if (e->u.like.kind == DP_SIMILAR) dp_ps_expect_kw(p, DP_KW_TO, "TO after SIMILAR");
    e->u.like.arg = left;
    e->u.like.negated = negated;
    e->u.like.pattern = dp_ps_binary(p, PREC_CMP + 1);
    if (accept_kw(p, DP_KW_ESCAPE)) e->u.like.escape = dp_ps_binary(p, PREC_CMP + 1);
  } else {
    return NULL;
  }
  finish(p, e, start);
  return e;
}

static dp_ast_expr *binary_body(parser *p, int min) {
  const dp_token *start = cur(p);
  dp_ast_expr *left = parse_unary(p);
  for (;;) {
    const dp_token *t = cur(p);
    if (min <= PREC_CMP) {
      dp_ast_expr *pred = parse_predicate(p, left, start);
      if (pred) {
        left = pred;
        continue;
      }
      if (t->kind == DP_TK_NSEQ) {
        next(p);
        dp_ast_expr *e = new_expr(p, DP_AX_IS, start);
        e->u.is.arg = left;
        e->u.is.what = DP_IS_DISTINCT_FROM;
        e->u.is.negated = true;
        e->u.is.other = dp_ps_binary(p, PREC_CMP + 1);
        finish(p, e, start);
        left = e;
        continue;
      }
      if (t->kind == DP_TK_EQEQ)
        dp_ps_fail_at(p, DIPPER_SYNTAX, t->span, "'==' is not SQL: compare with a single '='");
    }
    dp_ast_binop op;
    int prec;
    if (!binop_of(t, &op, &prec) || prec < min) return left;
    next(p);
    dp_ast_expr *right = dp_ps_binary(p, prec + 1);
    dp_ast_expr *e = new_expr(p, DP_AX_BINARY, start);
    e->u.binary.op = op;
    e->u.binary.left = left;
    e->u.binary.right = right;
    finish(p, e, start);
    left = e;
  }
}

dp_ast_expr *dp_ps_binary(parser *p, int min) {
  dp_ps_enter(p);
  dp_ast_expr *e = binary_body(p, min);
  leave(p);
  return e;
}

dp_ast_expr *dp_ps_expr(parser *p) { return dp_ps_binary(p, PREC_OR); }

/* ------------------------------------------------------- ORDER BY, OVER */

static dp_ast_order parse_order_item(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_order o;
  memset(&o, 0, sizeof o);
  o.expr = dp_ps_expr(p);
  if (accept_kw(p, DP_KW_DESC)) o.desc = true;
  else accept_kw(p, DP_KW_ASC);
  if (accept_kw(p, DP_KW_NULLS)) {
    if (accept_kw(p, DP_KW_FIRST)) o.nulls = 1;
    else if (accept_kw(p, DP_KW_LAST)) o.nulls = 2;
    else dp_ps_fail_expected(p, "FIRST or LAST after NULLS", NULL);
  }
  o.span = span_from(p, start);
  return o;
}

void dp_ps_order_list(parser *p, int *n, dp_ast_order **items) {
  vec v = {0};
  do {
    *(dp_ast_order *)dp_ps_vec_push(p, &v, sizeof(dp_ast_order)) = parse_order_item(p);
  } while (accept(p, DP_TK_COMMA));
  *n = v.n;
  *items = v.items;
}

static dp_ast_bound parse_bound(parser *p) {
  dp_ast_bound b;
  memset(&b, 0, sizeof b);
  if (accept_kw(p, DP_KW_UNBOUNDED)) {
    if (accept_kw(p, DP_KW_PRECEDING)) b.kind = DP_BOUND_UNBOUNDED_PRECEDING;
    else if (accept_kw(p, DP_KW_FOLLOWING)) b.kind = DP_BOUND_UNBOUNDED_FOLLOWING;
    else dp_ps_fail_expected(p, "PRECEDING or FOLLOWING after UNBOUNDED", NULL);
  } else if (accept_kw(p, DP_KW_CURRENT)) {
    dp_ps_expect_kw(p, DP_KW_ROW, "ROW after CURRENT");
    b.kind = DP_BOUND_CURRENT_ROW;
  } else {
    b.offset = dp_ps_binary(p, PREC_BITOR);
    if (accept_kw(p, DP_KW_PRECEDING)) b.kind = DP_BOUND_PRECEDING;
    else if (accept_kw(p, DP_KW_FOLLOWING)) b.kind = DP_BOUND_FOLLOWING;
    else dp_ps_fail_expected(p, "PRECEDING or FOLLOWING after the frame offset", NULL);
  }
  return b;
}

/* ( [w] [PARTITION BY ..] [ORDER BY ..] [ROWS|RANGE frame] ) */
dp_ast_window *dp_ps_window_spec(parser *p) {
  const dp_token *start = cur(p);
  dp_ps_expect(p, DP_TK_LPAREN, "'(' to open the window specification");
  dp_ast_window *w = dp_ps_alloc(p, sizeof *w);
  if (dp_ps_is_name_token(cur(p), true) && !at_kw(p, DP_KW_PARTITION) && !at_kw(p, DP_KW_ROWS) &&
      !at_kw(p, DP_KW_RANGE))
    w->ref_name = dp_ps_ident(p, "a window name").name;
  if (accept_kw(p, DP_KW_PARTITION)) {
    dp_ps_expect_kw(p, DP_KW_BY, "BY after PARTITION");
    vec v = {0};
    do {
      dp_ps_push_expr(p, &v, dp_ps_expr(p));
    } while (accept(p, DP_TK_COMMA));
    w->npartition = v.n;
    w->partition = v.items;
  }
  if (accept_kw(p, DP_KW_ORDER)) {
    dp_ps_expect_kw(p, DP_KW_BY, "BY after ORDER");
    dp_ps_order_list(p, &w->norder, &w->order);
  }
  if (at_kw(p, DP_KW_ROWS) || at_kw(p, DP_KW_RANGE)) {
    w->has_frame = true;
    w->rows = at_kw(p, DP_KW_ROWS);
    next(p);
    if (accept_kw(p, DP_KW_BETWEEN)) {
      w->start = parse_bound(p);
      dp_ps_expect_kw(p, DP_KW_AND, "AND between the two frame bounds");
      w->end = parse_bound(p);
    } else {
      w->start = parse_bound(p);
      w->end.kind = DP_BOUND_CURRENT_ROW;
    }
  }
  dp_ps_expect(p, DP_TK_RPAREN, "')' to close the window specification");
  w->span = span_from(p, start);
  return w;
}
