/*
** parser.c — recursive-descent parser from tokens to the syntax tree of ast.h.
**
** The whole text is tokenized first into one arena array, which gives the
** grammar free lookahead (`LEFT SEMI JOIN`, `name => value`, `TABLE t` versus
** `TABLE(...)`).  Expressions use precedence climbing.  A syntax error records
** one diagnostic and unwinds with longjmp to the statement loop, which skips
** to the next ';' and goes on: no function below has to thread error returns,
** and the arena keeps whatever was half built until the caller frees it.
**
** Nesting is limited (DP_PARSE_MAX_DEPTH) so that hostile input ends in a
** diagnostic, not a stack overflow.
**
** Owns: the grammar.  Does not own: tokens (lexer.c), meaning (plan/binder.c).
*/
#include "sql/parser.h"

#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include "sql/lexer.h"

#define DP_PARSE_MAX_DEPTH 256
#define DP_PARSE_MAX_ERRORS 100

typedef struct parser {
  dp_arena *a;
  dp_diags *d;
  const char *text;
  dp_token *toks;
  int ntoks;          /* including the final EOF */
  int pos;
  uint32_t prev_end;  /* byte after the last consumed token */
  int depth;
  int first_code;     /* DIPPER_OK until the first error */
  int nerrors;
  bool in_stmt_set;   /* error recovery skips to the set's END */
  bool in_position;   /* parsing POSITION's first argument: IN ends it */
  jmp_buf *bail;
} parser;

/* A growable array in the arena; the items are copied out when done. */
typedef struct vec {
  void *items;
  int n, cap;
} vec;

/* ---------------------------------------------------------------- basics */

static _Noreturn void bail_out(parser *p, int code) {
  if (p->first_code == DIPPER_OK) p->first_code = code;
  p->nerrors++;
  longjmp(*p->bail, 1);
}

static _Noreturn void out_of_memory(parser *p) {
  dp_span none = {0, 0, 0, 0};
  dp_error(p->d, DIPPER_NOMEM, none, "out of memory while parsing");
  bail_out(p, DIPPER_NOMEM);
}

static void *alloc(parser *p, size_t n) {
  void *m = dp_arena_calloc(p->a, 1, n);
  if (!m) out_of_memory(p);
  return m;
}

static char *copy(parser *p, const char *s, size_t n) {
  char *c = dp_arena_strndup(p->a, s, n);
  if (!c) out_of_memory(p);
  return c;
}

static char *fmt(parser *p, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* printf into the arena; never NULL (out of memory unwinds). */
static char *fmt(parser *p, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  char *s = dp_arena_vprintf(p->a, format, ap);
  va_end(ap);
  if (!s) out_of_memory(p);
  return s;
}

static void *vec_push(parser *p, vec *v, size_t elem) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 4;
    void *grown = dp_arena_grow(p->a, v->items, (size_t)v->cap, (size_t)cap, elem);
    if (!grown) out_of_memory(p);
    v->items = grown;
    v->cap = cap;
  }
  void *slot = (char *)v->items + (size_t)v->n * elem;
  memset(slot, 0, elem);
  v->n++;
  return slot;
}

static void push_expr(parser *p, vec *v, dp_ast_expr *e) {
  *(dp_ast_expr **)vec_push(p, v, sizeof(dp_ast_expr *)) = e;
}

static const dp_token *cur(const parser *p) { return &p->toks[p->pos]; }

static const dp_token *peek(const parser *p, int k) {
  int i = p->pos + k;
  return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}

static void next(parser *p) {
  const dp_token *t = cur(p);
  if (t->kind == DP_TK_EOF) return;
  p->prev_end = t->span.off + t->span.len;
  p->pos++;
}

static bool is_kw(const dp_token *t, dp_keyword kw) {
  return t->kind == DP_TK_IDENT && t->kw == kw;
}

static bool at(const parser *p, dp_tok_kind kind) { return cur(p)->kind == kind; }
static bool at_kw(const parser *p, dp_keyword kw) { return is_kw(cur(p), kw); }

static bool accept(parser *p, dp_tok_kind kind) {
  if (!at(p, kind)) return false;
  next(p);
  return true;
}

static bool accept_kw(parser *p, dp_keyword kw) {
  if (!at_kw(p, kw)) return false;
  next(p);
  return true;
}

/* Does the unquoted name token spell `word` (upper case) in any case? */
static bool is_word(const parser *p, const dp_token *t, const char *word) {
  if (t->kind != DP_TK_IDENT) return false;
  size_t n = strlen(word);
  if (t->span.len != n) return false;
  const char *s = p->text + t->span.off;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    if (c != word[i]) return false;
  }
  return true;
}

static bool accept_word(parser *p, const char *word) {
  if (!is_word(p, cur(p), word)) return false;
  next(p);
  return true;
}

static dp_span span_from(const parser *p, const dp_token *start) {
  dp_span s = start->span;
  s.len = p->prev_end > s.off ? p->prev_end - s.off : 0;
  return s;
}

static dp_span span_between(dp_span a, uint32_t end) {
  a.len = end > a.off ? end - a.off : 0;
  return a;
}

/* How a token reads in a message: "keyword FROM", "name foo", "')'". */
static const char *describe(parser *p, const dp_token *t) {
  const char *s = p->text + t->span.off;
  int n = t->span.len > 40 ? 40 : (int)t->span.len;
  const char *more = t->span.len > 40 ? "..." : "";
  const char *r = NULL;
  switch ((dp_tok_kind)t->kind) {
    case DP_TK_IDENT:
      if (t->kw) r = fmt(p, "keyword %s", dp_lex_keyword_name(t->kw));
      else r = fmt(p, "name %.*s%s", n, s, more);
      break;
    case DP_TK_QIDENT: r = fmt(p, "quoted name %.*s%s", n, s, more); break;
    case DP_TK_INTEGER:
    case DP_TK_DECIMAL:
    case DP_TK_FLOAT: r = fmt(p, "number %.*s%s", n, s, more); break;
    case DP_TK_STRING:
    case DP_TK_BINARY: r = fmt(p, "string %.*s%s", n, s, more); break;
    default: return dp_lex_kind_name((dp_tok_kind)t->kind);
  }
  return r;
}

static _Noreturn void fail_at(parser *p, int code, dp_span span, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static _Noreturn void fail_at(parser *p, int code, dp_span span, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  char *msg = dp_arena_vprintf(p->a, format, ap);
  va_end(ap);
  dp_error(p->d, code, span, "%s", msg ? msg : "syntax error");
  bail_out(p, code);
}

/* A malformed token's own message; a stray character is quoted in it. */
static _Noreturn void fail_lex(parser *p, const dp_token *t) {
  const char *rest = t->err;
  if (strncmp(rest, "unexpected character", 20) == 0 && t->span.len > 0) {
    const char *c = p->text + t->span.off;
    unsigned char b = (unsigned char)c[0];
    if (b >= 0x20 && b < 0x7f)
      fail_at(p, DIPPER_SYNTAX, t->span, "unexpected character '%c'%s", c[0], rest + 20);
    fail_at(p, DIPPER_SYNTAX, t->span, "unexpected byte 0x%02X%s", b, rest + 20);
  }
  fail_at(p, DIPPER_SYNTAX, t->span, "%s", rest);
}

/* "expected <what>, found <token>[<hint>]".  A malformed token reports its
** own message instead: that is the real problem. */
static _Noreturn void fail_expected(parser *p, const char *what, const char *hint) {
  const dp_token *t = cur(p);
  if (t->kind == DP_TK_ERROR) fail_lex(p, t);
  if (t->kind == DP_TK_EQEQ)
    fail_at(p, DIPPER_SYNTAX, t->span, "expected %s, found '==': SQL compares with a single '='",
            what);
  dp_span where = t->span;
  if (t->kind == DP_TK_EOF && p->pos > 0) {
    /* Point just after the last token rather than at a blank last line. */
    const dp_token *last = &p->toks[p->pos - 1];
    if (!memchr(p->text + last->span.off, '\n', last->span.len)) {
      where = last->span;
      where.off += last->span.len;
      where.col += last->span.len;
      where.len = 0;
    }
  }
  fail_at(p, DIPPER_SYNTAX, where, "expected %s, found %s%s", what, describe(p, t),
          hint ? hint : "");
}

static void expect(parser *p, dp_tok_kind kind, const char *what) {
  if (!accept(p, kind)) fail_expected(p, what, NULL);
}

static void expect_kw(parser *p, dp_keyword kw, const char *what) {
  if (!accept_kw(p, kw)) fail_expected(p, what, NULL);
}

static void enter(parser *p) {
  if (++p->depth > DP_PARSE_MAX_DEPTH)
    fail_at(p, DIPPER_LIMIT, cur(p)->span,
            "nested too deeply (more than %d levels of parentheses, subqueries or types): "
            "split the statement with views or WITH",
            DP_PARSE_MAX_DEPTH);
}

static void leave(parser *p) { p->depth--; }

/* ----------------------------------------------------------- text values */

/* The contents of a quoted token without its quotes, doubled quotes halved. */
static char *unquote(parser *p, const dp_token *t) {
  const char *s = p->text + t->span.off;
  size_t n = t->span.len;
  size_t skip = t->kind == DP_TK_BINARY ? 2 : 1; /* X' */
  if (n < skip + 1) return copy(p, "", 0);
  char q = s[n - 1];
  const char *body = s + skip;
  size_t blen = n - skip - 1;
  char *out = alloc(p, blen + 1);
  size_t o = 0;
  for (size_t i = 0; i < blen; i++) {
    out[o++] = body[i];
    if (body[i] == q && i + 1 < blen && body[i + 1] == q) i++;
  }
  out[o] = 0;
  return out;
}

static char *token_text(parser *p, const dp_token *t) {
  return copy(p, p->text + t->span.off, t->span.len);
}

/* A name token usable as a name here: any plain or quoted name, or a keyword
** that is not reserved.  `implicit_alias` also refuses the words that start
** the next clause, since `FROM t window` means a WINDOW clause. */
static bool is_name_token(const dp_token *t, bool implicit_alias) {
  if (t->kind == DP_TK_QIDENT) return true;
  if (t->kind != DP_TK_IDENT) return false;
  if (t->kw == DP_KW_NONE) return true;
  if (dp_lex_keyword_reserved(t->kw)) return false;
  if (implicit_alias) {
    switch (t->kw) {
      case DP_KW_WINDOW: case DP_KW_OFFSET: case DP_KW_MATCH_RECOGNIZE: case DP_KW_SEMI:
      case DP_KW_ANTI: case DP_KW_ROWS: case DP_KW_ESCAPE: case DP_KW_OVER: case DP_KW_FILTER:
      case DP_KW_PARTITION: case DP_KW_NULLS: case DP_KW_ASC: case DP_KW_DESC:
      case DP_KW_COMMENT: case DP_KW_PARTITIONED: case DP_KW_METADATA: case DP_KW_VIRTUAL:
      case DP_KW_PRECEDING: case DP_KW_FOLLOWING: case DP_KW_RANGE: case DP_KW_SIMILAR:
      case DP_KW_RLIKE: case DP_KW_TO:
        return false;
      default: return true;
    }
  }
  return true;
}

static dp_ast_ident ident_of(parser *p, const dp_token *t) {
  dp_ast_ident id;
  id.quoted = t->kind == DP_TK_QIDENT;
  id.name = id.quoted ? unquote(p, t) : token_text(p, t);
  id.span = t->span;
  return id;
}

/* A name where `what` is wanted ("a column name"). */
static dp_ast_ident parse_ident(parser *p, const char *what) {
  const dp_token *t = cur(p);
  if (!is_name_token(t, false)) {
    if (t->kind == DP_TK_IDENT && t->kw) {
      const char *kw = dp_lex_keyword_name(t->kw);
      fail_at(p, DIPPER_SYNTAX, t->span,
              "expected %s, found keyword %s: %s is reserved; to use it as a name write it in "
              "backticks, `%.*s`",
              what, kw, kw, (int)t->span.len, p->text + t->span.off);
    }
    fail_expected(p, what, NULL);
  }
  dp_ast_ident id = ident_of(p, t);
  next(p);
  return id;
}

/* After a '.', any word is a field name, reserved or not (t.`end` and t.end). */
static dp_ast_ident parse_ident_after_dot(parser *p, const char *what) {
  const dp_token *t = cur(p);
  if (t->kind != DP_TK_IDENT && t->kind != DP_TK_QIDENT) fail_expected(p, what, NULL);
  dp_ast_ident id = ident_of(p, t);
  next(p);
  return id;
}

static dp_ast_name name_of_parts(parser *p, vec *parts) {
  dp_ast_name nm;
  nm.n = parts->n;
  nm.parts = parts->items;
  dp_ast_ident *first = &nm.parts[0], *last = &nm.parts[nm.n - 1];
  nm.span = span_between(first->span, last->span.off + last->span.len);
  (void)p;
  return nm;
}

static dp_ast_name parse_name(parser *p, const char *what) {
  vec parts = {0};
  *(dp_ast_ident *)vec_push(p, &parts, sizeof(dp_ast_ident)) = parse_ident(p, what);
  while (at(p, DP_TK_DOT) && peek(p, 1)->kind != DP_TK_STAR) {
    next(p);
    *(dp_ast_ident *)vec_push(p, &parts, sizeof(dp_ast_ident)) =
        parse_ident_after_dot(p, "a name after '.'");
  }
  return name_of_parts(p, &parts);
}

/* '(' a, b, c ')' — a list of names, e.g. PRIMARY KEY (a, b). */
static dp_ast_ident *parse_ident_list(parser *p, int *n, const char *what, const char *closing) {
  vec v = {0};
  expect(p, DP_TK_LPAREN, fmt(p, "'(' to open the list of %s", what));
  do {
    *(dp_ast_ident *)vec_push(p, &v, sizeof(dp_ast_ident)) = parse_ident(p, what);
  } while (accept(p, DP_TK_COMMA));
  expect(p, DP_TK_RPAREN, closing);
  *n = v.n;
  return v.items;
}

/* ----------------------------------------------------------------- types */

static int parse_small_int(parser *p, const char *what, int lo, int hi) {
  const dp_token *t = cur(p);
  if (t->kind != DP_TK_INTEGER) fail_expected(p, what, NULL);
  long v = 0;
  for (uint32_t i = 0; i < t->span.len; i++) {
    v = v * 10 + (p->text[t->span.off + i] - '0');
    if (v > 1000000000L) break;
  }
  if (v < lo || v > hi)
    fail_at(p, DIPPER_SYNTAX, t->span, "%s must be between %d and %d, not %.*s", what, lo, hi,
            (int)t->span.len, p->text + t->span.off);
  next(p);
  return (int)v;
}

/* Optional "(n)" after a type name; -1 when absent. */
static int parse_type_param(parser *p, const char *what, int lo, int hi, const char *type) {
  if (!accept(p, DP_TK_LPAREN)) return -1;
  int v = parse_small_int(p, what, lo, hi);
  expect(p, DP_TK_RPAREN, fmt(p, "')' to close the parameter of %s", type));
  return v;
}

static dp_type *new_type(parser *p, dp_type_kind kind) {
  dp_type *t = dp_type_new(p->a, kind);
  if (!t) out_of_memory(p);
  return t;
}

static const dp_type *check_type(parser *p, const dp_type *t) {
  if (!t) out_of_memory(p);
  return t;
}

static dp_time_unit unit_of(const parser *p, const dp_token *t, bool extract);

static const dp_type *parse_type(parser *p);

/* ROW<a INT, b STRING> or ROW(a INT, b STRING): after ROW. */
static const dp_type *parse_row_fields(parser *p) {
  bool angle = at(p, DP_TK_LT);
  if (!angle && !at(p, DP_TK_LPAREN)) fail_expected(p, "'<' or '(' after ROW", NULL);
  next(p);
  dp_tok_kind close = angle ? DP_TK_GT : DP_TK_RPAREN;
  vec fields = {0};
  if (!at(p, close)) {
    do {
      dp_ast_ident name = parse_ident(p, "a field name of ROW");
      dp_field *f = vec_push(p, &fields, sizeof(dp_field));
      f->name = name.name;
      f->type = parse_type(p);
      if (accept_kw(p, DP_KW_COMMENT)) expect(p, DP_TK_STRING, "a string after COMMENT");
    } while (accept(p, DP_TK_COMMA));
  }
  expect(p, close, angle ? "'>' to close ROW<...>" : "')' to close ROW(...)");
  return check_type(p, dp_type_row(p->a, fields.n, fields.items));
}

static const dp_type *parse_interval_type(parser *p) {
  dp_time_unit from = unit_of(p, cur(p), false);
  if (from == DP_UNIT_NONE)
    fail_expected(p, "a unit after INTERVAL (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND)", NULL);
  next(p);
  parse_type_param(p, "the interval precision", 0, 9, "INTERVAL");
  dp_time_unit to = DP_UNIT_NONE;
  if (accept_kw(p, DP_KW_TO)) {
    to = unit_of(p, cur(p), false);
    if (to == DP_UNIT_NONE) fail_expected(p, "a unit after TO", NULL);
    next(p);
    parse_type_param(p, "the interval precision", 0, 9, "INTERVAL");
  }
  bool ym = (from == DP_UNIT_YEAR || from == DP_UNIT_MONTH || from == DP_UNIT_QUARTER) &&
            (to == DP_UNIT_NONE || to == DP_UNIT_MONTH || to == DP_UNIT_YEAR);
  return dp_type_of(ym ? DP_T_INTERVAL_YM : DP_T_INTERVAL_DT);
}

static const dp_type *parse_type_body(parser *p) {
  const dp_token *t = cur(p);
  if (t->kind != DP_TK_IDENT) fail_expected(p, "a type (INT, STRING, TIMESTAMP(3), ...)", NULL);
  next(p);
  dp_type *nt;
  if (is_word(p, t, "BOOLEAN") || is_word(p, t, "BOOL")) return dp_type_of(DP_T_BOOLEAN);
  if (is_word(p, t, "TINYINT")) return dp_type_of(DP_T_TINYINT);
  if (is_word(p, t, "SMALLINT")) return dp_type_of(DP_T_SMALLINT);
  if (is_word(p, t, "INT") || is_word(p, t, "INTEGER")) return dp_type_of(DP_T_INT);
  if (is_word(p, t, "BIGINT")) return dp_type_of(DP_T_BIGINT);
  if (is_word(p, t, "FLOAT") || is_word(p, t, "REAL")) return dp_type_of(DP_T_FLOAT);
  if (is_word(p, t, "DOUBLE")) {
    accept_word(p, "PRECISION");
    return dp_type_of(DP_T_DOUBLE);
  }
  if (is_word(p, t, "DECIMAL") || is_word(p, t, "DEC") || is_word(p, t, "NUMERIC")) {
    int prec = 10, scale = 0;
    if (accept(p, DP_TK_LPAREN)) {
      prec = parse_small_int(p, "the DECIMAL precision", 1, 38);
      if (accept(p, DP_TK_COMMA)) scale = parse_small_int(p, "the DECIMAL scale", 0, prec);
      expect(p, DP_TK_RPAREN, "')' to close DECIMAL(p, s)");
    }
    return check_type(p, dp_type_decimal(p->a, prec, scale));
  }
  if (is_word(p, t, "STRING") || is_word(p, t, "TEXT")) return dp_type_of(DP_T_STRING);
  if (is_word(p, t, "VARCHAR") || is_word(p, t, "CHAR") || is_word(p, t, "CHARACTER")) {
    if (is_word(p, t, "CHARACTER")) accept_word(p, "VARYING");
    int n = parse_type_param(p, "the length", 1, 2147483647, "the character type");
    nt = new_type(p, DP_T_STRING);
    nt->length = n > 0 ? (uint32_t)n : 0;
    return nt;
  }
  if (is_word(p, t, "BYTES")) return dp_type_of(DP_T_BYTES);
  if (is_word(p, t, "BINARY") || is_word(p, t, "VARBINARY")) {
    int n = parse_type_param(p, "the length", 1, 2147483647, "the binary type");
    nt = new_type(p, DP_T_BYTES);
    nt->length = n > 0 ? (uint32_t)n : 0;
    return nt;
  }
  if (is_word(p, t, "DATE")) return dp_type_of(DP_T_DATE);
  if (is_word(p, t, "TIME")) {
    int prec = parse_type_param(p, "the TIME precision", 0, 9, "TIME");
    if (accept_word(p, "WITHOUT")) {
      accept_word(p, "TIME") ? (void)0 : fail_expected(p, "TIME ZONE after WITHOUT", NULL);
      if (!accept_word(p, "ZONE")) fail_expected(p, "ZONE after WITHOUT TIME", NULL);
    }
    if (prec < 0) return dp_type_of(DP_T_TIME);
    nt = new_type(p, DP_T_TIME);
    nt->precision = (uint8_t)prec;
    return nt;
  }
  if (is_word(p, t, "TIMESTAMP") || is_word(p, t, "TIMESTAMP_LTZ")) {
    dp_type_kind kind = is_word(p, t, "TIMESTAMP") ? DP_T_TIMESTAMP : DP_T_TIMESTAMP_LTZ;
    int prec = parse_type_param(p, "the timestamp precision", 0, 9, "TIMESTAMP");
    if (kind == DP_T_TIMESTAMP && at_kw(p, DP_KW_WITH)) {
      const dp_token *with = cur(p);
      next(p);
      if (accept_kw(p, DP_KW_LOCAL)) {
        kind = DP_T_TIMESTAMP_LTZ;
      } else if (is_word(p, cur(p), "TIME")) {
        fail_at(p, DIPPER_UNSUPPORTED, with->span,
                "TIMESTAMP WITH TIME ZONE is not supported: write TIMESTAMP_LTZ(p) or "
                "TIMESTAMP(p) WITH LOCAL TIME ZONE");
      } else {
        fail_expected(p, "LOCAL TIME ZONE after TIMESTAMP WITH", NULL);
      }
      if (!accept_word(p, "TIME")) fail_expected(p, "TIME ZONE after WITH LOCAL", NULL);
      if (!accept_word(p, "ZONE")) fail_expected(p, "ZONE after WITH LOCAL TIME", NULL);
    } else if (kind == DP_T_TIMESTAMP && accept_word(p, "WITHOUT")) {
      if (!accept_word(p, "TIME")) fail_expected(p, "TIME ZONE after WITHOUT", NULL);
      if (!accept_word(p, "ZONE")) fail_expected(p, "ZONE after WITHOUT TIME", NULL);
    }
    /* Flink's default precision: TIMESTAMP is TIMESTAMP(6). */
    return check_type(p, dp_type_timestamp(p->a, kind, prec < 0 ? 6 : prec));
  }
  if (is_kw(t, DP_KW_INTERVAL)) return parse_interval_type(p);
  if (is_kw(t, DP_KW_ROW)) return parse_row_fields(p);
  if (is_kw(t, DP_KW_ARRAY)) {
    expect(p, DP_TK_LT, "'<' after ARRAY (write ARRAY<element type>)");
    const dp_type *elem = parse_type(p);
    expect(p, DP_TK_GT, "'>' to close ARRAY<...>");
    return check_type(p, dp_type_array(p->a, elem));
  }
  if (is_kw(t, DP_KW_MAP)) {
    expect(p, DP_TK_LT, "'<' after MAP (write MAP<key type, value type>)");
    const dp_type *key = parse_type(p);
    expect(p, DP_TK_COMMA, "',' between the key and value types of MAP<K, V>");
    const dp_type *value = parse_type(p);
    expect(p, DP_TK_GT, "'>' to close MAP<...>");
    return check_type(p, dp_type_map(p->a, key, value));
  }
  if (is_kw(t, DP_KW_NULL)) return dp_type_of(DP_T_NULL);
  /* Spark's and Hive's names for the integer types. */
  static const char *const spark_types[][2] = {
      {"LONG", "BIGINT"}, {"SHORT", "SMALLINT"}, {"BYTE", "TINYINT"}};
  for (size_t i = 0; i < sizeof spark_types / sizeof spark_types[0]; i++)
    if (is_word(p, t, spark_types[i][0]))
      fail_at(p, DIPPER_SYNTAX, t->span, "%s is Spark's name for %s: write %s", spark_types[i][0],
              spark_types[i][1], spark_types[i][1]);
  fail_at(p, DIPPER_SYNTAX, t->span,
          "unknown type %.*s: write one of BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, "
          "DOUBLE, DECIMAL(p, s), STRING, VARCHAR(n), BYTES, DATE, TIME, TIMESTAMP(p), "
          "TIMESTAMP_LTZ(p), INTERVAL, ROW<...>, ARRAY<...>, MAP<...>",
          (int)t->span.len, p->text + t->span.off);
}

static const dp_type *parse_type(parser *p) {
  enter(p);
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

/* ----------------------------------------------------------- expressions */

enum {
  PREC_OR = 1, PREC_AND, PREC_NOT, PREC_CMP, PREC_BITOR, PREC_BITXOR, PREC_BITAND,
  PREC_ADD, PREC_MUL,
};

static dp_ast_expr *parse_expr(parser *p);
static dp_ast_expr *parse_binary(parser *p, int min);
static dp_ast_query *parse_query(parser *p);
static dp_ast_window *parse_window_spec(parser *p);

static dp_ast_expr *new_expr(parser *p, dp_ast_expr_kind kind, const dp_token *start) {
  dp_ast_expr *e = alloc(p, sizeof *e);
  e->kind = kind;
  e->span = start->span;
  return e;
}

static void finish(parser *p, dp_ast_expr *e, const dp_token *start) {
  e->span = span_from(p, start);
}

static dp_time_unit unit_of(const parser *p, const dp_token *t, bool extract) {
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
    e->u.interval.text = unquote(p, v);
    dp_time_unit u = unit_of(p, cur(p), false);
    if (u != DP_UNIT_NONE) {
      next(p);
      e->u.interval.unit = u;
      int prec = parse_type_param(p, "the interval precision", 0, 9, "the interval unit");
      if (prec >= 0) e->u.interval.precision = prec;
      if (accept_kw(p, DP_KW_TO)) {
        dp_time_unit to = unit_of(p, cur(p), false);
        if (to == DP_UNIT_NONE)
          fail_expected(p, "a unit after TO (e.g. INTERVAL '1 02:00' DAY TO MINUTE)", NULL);
        next(p);
        e->u.interval.to_unit = to;
        prec = parse_type_param(p, "the interval precision", 0, 9, "the interval unit");
        if (prec >= 0) e->u.interval.precision = prec;
      }
    }
  } else if (v->kind == DP_TK_INTEGER || v->kind == DP_TK_DECIMAL) {
    /* Spark: INTERVAL 1 HOUR 30 MINUTES. */
    const dp_token *first = v;
    do {
      next(p);
      if (unit_of(p, cur(p), false) == DP_UNIT_NONE)
        fail_expected(p, "a unit after the number (INTERVAL 10 SECONDS or INTERVAL '10' SECOND)",
                      NULL);
      next(p);
    } while (at(p, DP_TK_INTEGER) || at(p, DP_TK_DECIMAL));
    e->u.interval.text = copy(p, p->text + first->span.off, p->prev_end - first->span.off);
  } else {
    fail_expected(p, "a quoted value after INTERVAL", ": write INTERVAL '5' SECOND");
  }
  finish(p, e, start);
  return e;
}

static dp_ast_expr *parse_case(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_expr *e = new_expr(p, DP_AX_CASE, start);
  if (!at_kw(p, DP_KW_WHEN) && !at_kw(p, DP_KW_END)) e->u.case_.operand = parse_expr(p);
  vec whens = {0}, thens = {0};
  if (!at_kw(p, DP_KW_WHEN)) fail_expected(p, "WHEN in CASE", NULL);
  while (accept_kw(p, DP_KW_WHEN)) {
    push_expr(p, &whens, parse_expr(p));
    expect_kw(p, DP_KW_THEN, "THEN after the WHEN condition");
    push_expr(p, &thens, parse_expr(p));
  }
  if (accept_kw(p, DP_KW_ELSE)) e->u.case_.else_ = parse_expr(p);
  expect_kw(p, DP_KW_END, "END to close CASE");
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
  expect(p, DP_TK_LPAREN, fmt(p, "'(' after %s", fname));
  dp_ast_expr *e = new_expr(p, DP_AX_CAST, start);
  e->u.cast.arg = parse_expr(p);
  e->u.cast.try_ = try_;
  expect_kw(p, DP_KW_AS, fmt(p, "AS in %s(value AS type)", fname));
  const dp_token *ts = cur(p);
  e->u.cast.type = parse_type(p);
  e->u.cast.type_span = span_from(p, ts);
  expect(p, DP_TK_RPAREN, fmt(p, "')' to close %s(...)", fname));
  finish(p, e, start);
  return e;
}

/* Expressions separated by commas up to `close`, which is consumed. */
static void parse_expr_list(parser *p, vec *v, dp_tok_kind close, const char *closing) {
  if (!at(p, close)) {
    do {
      push_expr(p, v, parse_expr(p));
    } while (accept(p, DP_TK_COMMA));
  }
  expect(p, close, closing);
}

static bool starts_query(const dp_token *t) {
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
  e->u.lit.text = unit_names[unit_of(p, t, false)];
  next(p);
  return e;
}

static bool parse_keyword_args(parser *p, dp_ast_expr *e, const char *fn, const char *closing,
                               dp_ast_expr **first) {
  vec args = {0};
  *first = NULL;
  if (same_word(fn, "POSITION")) {
    bool was = p->in_position;
    p->in_position = true; /* `a IN b` here is not an IN predicate */
    dp_ast_expr *needle = parse_expr(p);
    p->in_position = was;
    if (!accept_kw(p, DP_KW_IN)) {
      *first = needle;
      return false;
    }
    push_expr(p, &args, needle);
    push_expr(p, &args, parse_expr(p));
  } else if (same_word(fn, "SUBSTRING") || same_word(fn, "SUBSTR")) {
    dp_ast_expr *str = parse_expr(p);
    if (!accept_kw(p, DP_KW_FROM)) {
      *first = str;
      return false;
    }
    push_expr(p, &args, str);
    push_expr(p, &args, parse_expr(p));
    if (accept_kw(p, DP_KW_FOR)) push_expr(p, &args, parse_expr(p));
  } else if (same_word(fn, "TRIM")) {
    const char *side = NULL;
    const dp_token *t1 = peek(p, 1);
    if (t1->kind != DP_TK_RPAREN && t1->kind != DP_TK_COMMA) {
      if (accept_word(p, "BOTH")) side = "TRIM";
      else if (accept_word(p, "LEADING")) side = "LTRIM";
      else if (accept_word(p, "TRAILING")) side = "RTRIM";
    }
    dp_ast_expr *chars = NULL, *str;
    if (side && accept_kw(p, DP_KW_FROM)) {
      str = parse_expr(p);
    } else {
      dp_ast_expr *arg = parse_expr(p);
      if (accept_kw(p, DP_KW_FROM)) {
        chars = arg;
        str = parse_expr(p);
      } else if (side) {
        fail_expected(p, "FROM in TRIM(BOTH|LEADING|TRAILING [characters] FROM string)", NULL);
      } else {
        *first = arg;
        return false;
      }
    }
    push_expr(p, &args, str);
    if (chars) push_expr(p, &args, chars);
    if (side && side[0] != 'T') {
      dp_ast_ident *part = alloc(p, sizeof *part);
      *part = e->u.call.name.parts[0];
      part->name = side;
      e->u.call.name.parts = part;
    }
  } else if (same_word(fn, "FLOOR") || same_word(fn, "CEIL") || same_word(fn, "CEILING")) {
    /* FLOOR(ts TO HOUR) is floor(ts, 'HOUR'): the catalog takes units as strings. */
    dp_ast_expr *value = parse_expr(p);
    if (!accept_kw(p, DP_KW_TO)) {
      *first = value;
      return false;
    }
    push_expr(p, &args, value);
    const dp_token *unit = cur(p);
    if (unit_of(p, unit, false) == DP_UNIT_NONE)
      fail_expected(p, fmt(p, "a unit after TO in %s(value TO unit): YEAR, QUARTER, MONTH, "
                               "WEEK, DAY, HOUR, MINUTE, SECOND, ...", fn),
                    NULL);
    push_expr(p, &args, unit_literal(p, unit));
  } else if ((same_word(fn, "TIMESTAMPADD") || same_word(fn, "TIMESTAMPDIFF")) &&
             unit_of(p, cur(p), false) != DP_UNIT_NONE && peek(p, 1)->kind == DP_TK_COMMA) {
    /* The unit written as a keyword, TIMESTAMPADD(HOUR, 3, ts), is the string 'HOUR'
       rather than a column; the rest are ordinary arguments. */
    *first = unit_literal(p, cur(p));
    return false;
  } else {
    return false;
  }
  expect(p, DP_TK_RPAREN, closing);
  e->u.call.nargs = args.n;
  e->u.call.args = args.items;
  return true;
}

/* f(args) [FILTER (WHERE ..)] [OVER ..], after the name; start is the name. */
static dp_ast_expr *parse_call(parser *p, dp_ast_name name, const dp_token *start) {
  dp_ast_expr *e = new_expr(p, DP_AX_CALL, start);
  e->u.call.name = name;
  const char *fname = fmt(p, "%s", name.parts[name.n - 1].name);
  const char *closing = fmt(p, "')' to close the argument list of %s", fname);
  next(p); /* ( */
  dp_ast_expr *first = NULL;
  if (name.n == 1 && !name.parts[0].quoted && parse_keyword_args(p, e, fname, closing, &first)) {
    finish(p, e, start);
    return e;
  }
  vec args = {0}, names = {0}, tables = {0}, partition = {0};
  bool any_named = false, any_table = false;
  if (first) {
    push_expr(p, &args, first);
    *(const char **)vec_push(p, &names, sizeof(char *)) = NULL;
    *(bool *)vec_push(p, &tables, sizeof(bool)) = false;
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
        arg_name = ident_of(p, cur(p)).name;
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
          fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span,
                  "a table argument of %s must name a table: write TABLE t, and put the "
                  "subquery in a view or a WITH clause",
                  fname);
        arg = new_expr(p, DP_AX_COLUMN, ts);
        arg->u.name = parse_name(p, "a table name after TABLE");
        finish(p, arg, ts);
        table = any_table = true;
        if (accept_kw(p, DP_KW_PARTITION)) {
          expect_kw(p, DP_KW_BY, "BY after PARTITION");
          /* Several keys go in parentheses: the commas outside separate arguments. */
          if (accept(p, DP_TK_LPAREN))
            parse_expr_list(p, &partition, DP_TK_RPAREN, "')' to close PARTITION BY (...)");
          else
            push_expr(p, &partition, parse_expr(p));
        }
      } else {
        arg = parse_expr(p);
      }
      push_expr(p, &args, arg);
      *(const char **)vec_push(p, &names, sizeof(char *)) = arg_name;
      *(bool *)vec_push(p, &tables, sizeof(bool)) = table;
    } while (accept(p, DP_TK_COMMA));
    if (at_kw(p, DP_KW_ORDER))
      fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span,
              "ORDER BY inside the arguments of %s is not supported", fname);
  }
  if (!accept(p, DP_TK_RPAREN)) {
    const dp_token *t = cur(p);
    bool looks_like_arg = t->kind == DP_TK_IDENT || t->kind == DP_TK_QIDENT ||
                          t->kind == DP_TK_INTEGER || t->kind == DP_TK_STRING;
    fail_expected(p, closing, looks_like_arg ? ": is a ',' missing between arguments?" : NULL);
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
    expect_kw(p, DP_KW_WHERE, "WHERE in FILTER (WHERE ...)");
    e->u.call.filter = parse_expr(p);
    expect(p, DP_TK_RPAREN, "')' to close FILTER (WHERE ...)");
  }
  if (accept_kw(p, DP_KW_OVER)) {
    if (at(p, DP_TK_LPAREN)) {
      e->u.call.over = parse_window_spec(p);
    } else {
      const dp_token *wt = cur(p);
      dp_ast_ident w = parse_ident(p, "a window name or '(' after OVER");
      dp_ast_window *win = alloc(p, sizeof *win);
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
  return is_word(p, t, "CURRENT_TIMESTAMP") || is_word(p, t, "CURRENT_DATE") ||
         is_word(p, t, "CURRENT_TIME") || is_word(p, t, "LOCALTIMESTAMP") ||
         is_word(p, t, "LOCALTIME");
}

static dp_ast_expr *typed_literal(parser *p, const dp_token *start, dp_ast_lit_kind kind) {
  dp_ast_expr *e = new_expr(p, DP_AX_LITERAL, start);
  next(p);
  e->u.lit.kind = kind;
  e->u.lit.text = unquote(p, cur(p));
  next(p);
  finish(p, e, start);
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
      e->u.lit.text = token_text(p, t);
      next(p);
      return e;
    case DP_TK_STRING:
    case DP_TK_BINARY:
      e = new_expr(p, DP_AX_LITERAL, t);
      e->u.lit.kind = t->kind == DP_TK_STRING ? DP_LIT_STRING : DP_LIT_BINARY;
      e->u.lit.text = unquote(p, t);
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
    case DP_TK_LPAREN: {
      next(p);
      if (starts_query(cur(p))) {
        e = new_expr(p, DP_AX_SUBQUERY, t);
        e->u.subquery.query = parse_query(p);
        expect(p, DP_TK_RPAREN, "')' to close the subquery");
      } else {
        e = parse_expr(p);
        if (at(p, DP_TK_COMMA)) {
          dp_ast_expr *row = new_expr(p, DP_AX_CONSTRUCT, t);
          vec items = {0};
          push_expr(p, &items, e);
          next(p);
          parse_expr_list(p, &items, DP_TK_RPAREN, "')' to close the row (a, b, ...)");
          row->u.construct.kind = 'R';
          row->u.construct.n = items.n;
          row->u.construct.items = items.items;
          e = row;
        } else {
          expect(p, DP_TK_RPAREN, "')' to close the parenthesis");
        }
      }
      e->parens = true;
      finish(p, e, t);
      return e;
    }
    case DP_TK_IDENT:
    case DP_TK_QIDENT:
      break;
    case DP_TK_ERROR:
      fail_lex(p, t);
    default:
      fail_expected(p, "an expression", NULL);
  }

  const dp_token *t1 = peek(p, 1);
  if (t->kind == DP_TK_IDENT) {
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
      case DP_KW_TRY_CAST:
        if (t1->kind == DP_TK_LPAREN) return parse_cast(p, true);
        break;
      case DP_KW_INTERVAL: return parse_interval(p);
      case DP_KW_EXISTS:
        next(p);
        expect(p, DP_TK_LPAREN, "'(' after EXISTS");
        if (!starts_query(cur(p))) fail_expected(p, "a query (SELECT ...) in EXISTS (...)", NULL);
        e = new_expr(p, DP_AX_EXISTS, t);
        e->u.subquery.query = parse_query(p);
        expect(p, DP_TK_RPAREN, "')' to close EXISTS (...)");
        finish(p, e, t);
        return e;
      case DP_KW_EXTRACT:
        if (t1->kind != DP_TK_LPAREN) break;
        next(p);
        next(p);
        e = new_expr(p, DP_AX_EXTRACT, t);
        e->u.extract.unit = unit_of(p, cur(p), true);
        if (e->u.extract.unit == DP_UNIT_NONE)
          fail_expected(p, "a unit in EXTRACT (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ...)",
                        NULL);
        next(p);
        expect_kw(p, DP_KW_FROM, "FROM in EXTRACT(unit FROM value)");
        e->u.extract.arg = parse_expr(p);
        expect(p, DP_TK_RPAREN, "')' to close EXTRACT(...)");
        finish(p, e, t);
        return e;
      case DP_KW_ARRAY:
      case DP_KW_MAP:
        if (t1->kind == DP_TK_LBRACKET) {
          next(p);
          next(p);
          e = new_expr(p, DP_AX_CONSTRUCT, t);
          vec items = {0};
          bool map = t->kw == DP_KW_MAP;
          parse_expr_list(p, &items, DP_TK_RBRACKET,
                          map ? "']' to close MAP[...]" : "']' to close ARRAY[...]");
          if (map && items.n % 2 != 0)
            fail_at(p, DIPPER_SYNTAX, span_from(p, t),
                    "MAP[...] takes key, value pairs: it has %d items, an odd number", items.n);
          e->u.construct.kind = map ? 'M' : 'A';
          e->u.construct.n = items.n;
          e->u.construct.items = items.items;
          finish(p, e, t);
          return e;
        }
        break;
      case DP_KW_ROW:
        if (t1->kind == DP_TK_LPAREN) {
          next(p);
          next(p);
          e = new_expr(p, DP_AX_CONSTRUCT, t);
          vec items = {0};
          parse_expr_list(p, &items, DP_TK_RPAREN, "')' to close ROW(...)");
          e->u.construct.kind = 'R';
          e->u.construct.n = items.n;
          e->u.construct.items = items.items;
          finish(p, e, t);
          return e;
        }
        break;
      case DP_KW_DESCRIPTOR:
        if (t1->kind == DP_TK_LPAREN) {
          next(p);
          vec cols = {0};
          int n = 0;
          e = new_expr(p, DP_AX_DESCRIPTOR, t);
          e->u.descriptor.cols =
              parse_ident_list(p, &n, "columns", "')' to close DESCRIPTOR(...)");
          e->u.descriptor.n = n;
          (void)cols;
          finish(p, e, t);
          return e;
        }
        break;
      case DP_KW_LEFT:
      case DP_KW_RIGHT:
        /* LEFT(s, n) and RIGHT(s, n) are functions despite the join words. */
        if (t1->kind == DP_TK_LPAREN) {
          vec parts = {0};
          *(dp_ast_ident *)vec_push(p, &parts, sizeof(dp_ast_ident)) = ident_of(p, t);
          next(p);
          return parse_call(p, name_of_parts(p, &parts), t);
        }
        break;
      case DP_KW_NONE:
        if (t1->kind == DP_TK_STRING) {
          if (is_word(p, t, "DATE")) return typed_literal(p, t, DP_LIT_DATE);
          if (is_word(p, t, "TIME")) return typed_literal(p, t, DP_LIT_TIME);
          if (is_word(p, t, "TIMESTAMP")) return typed_literal(p, t, DP_LIT_TIMESTAMP);
          if (is_word(p, t, "TIMESTAMP_LTZ")) return typed_literal(p, t, DP_LIT_TIMESTAMP_LTZ);
        }
        if (t1->kind != DP_TK_LPAREN && is_niladic(p, t)) {
          e = new_expr(p, DP_AX_CALL, t);
          vec parts = {0};
          *(dp_ast_ident *)vec_push(p, &parts, sizeof(dp_ast_ident)) = ident_of(p, t);
          e->u.call.name = name_of_parts(p, &parts);
          next(p);
          return e;
        }
        break;
      default: break;
    }
  }
  if (!is_name_token(t, false)) {
    if (t->kind == DP_TK_IDENT && t->kw)
      fail_expected(p, "an expression",
                    dp_arena_printf(p->a,
                                    ": %s is a reserved word; to use it as a name write it in "
                                    "backticks, `%.*s`",
                                    dp_lex_keyword_name(t->kw), (int)t->span.len,
                                    p->text + t->span.off));
    fail_expected(p, "an expression", NULL);
  }
  vec parts = {0};
  *(dp_ast_ident *)vec_push(p, &parts, sizeof(dp_ast_ident)) = ident_of(p, t);
  next(p);
  while (at(p, DP_TK_DOT)) {
    if (peek(p, 1)->kind == DP_TK_STAR) {
      next(p);
      next(p);
      e = new_expr(p, DP_AX_STAR, t);
      e->u.star.qualifier = name_of_parts(p, &parts);
      finish(p, e, t);
      return e;
    }
    next(p);
    *(dp_ast_ident *)vec_push(p, &parts, sizeof(dp_ast_ident)) =
        parse_ident_after_dot(p, "a name after '.'");
  }
  dp_ast_name name = name_of_parts(p, &parts);
  if (at(p, DP_TK_LPAREN)) return parse_call(p, name, t);
  e = new_expr(p, DP_AX_COLUMN, t);
  e->u.name = name;
  finish(p, e, t);
  return e;
}

static dp_ast_expr *parse_postfix(parser *p, dp_ast_expr *e, const dp_token *start) {
  for (;;) {
    if (at(p, DP_TK_DOT)) {
      next(p);
      dp_ast_expr *f = new_expr(p, DP_AX_FIELD, start);
      f->u.field.arg = e;
      f->u.field.field = parse_ident_after_dot(p, "a field name after '.'");
      finish(p, f, start);
      e = f;
    } else if (at(p, DP_TK_LBRACKET)) {
      next(p);
      dp_ast_expr *s = new_expr(p, DP_AX_SUBSCRIPT, start);
      s->u.subscript.arg = e;
      s->u.subscript.index = parse_expr(p);
      expect(p, DP_TK_RBRACKET, "']' to close the subscript");
      finish(p, s, start);
      e = s;
    } else if (at(p, DP_TK_DCOLON)) {
      next(p);
      dp_ast_expr *c = new_expr(p, DP_AX_CAST, start);
      c->u.cast.arg = e;
      const dp_token *ts = cur(p);
      c->u.cast.type = parse_type(p);
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
    dp_ast_expr *arg = parse_binary(p, PREC_NOT);
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
static dp_ast_expr *parse_predicate(parser *p, dp_ast_expr *left, const dp_token *start) {
  const dp_token *t = cur(p);
  bool negated = false;
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
    if (accept_kw(p, DP_KW_NULL)) e->u.is.what = DP_IS_NULL;
    else if (accept_kw(p, DP_KW_TRUE)) e->u.is.what = DP_IS_TRUE;
    else if (accept_kw(p, DP_KW_FALSE)) e->u.is.what = DP_IS_FALSE;
    else if (accept_kw(p, DP_KW_UNKNOWN)) e->u.is.what = DP_IS_UNKNOWN;
    else if (accept_kw(p, DP_KW_DISTINCT)) {
      expect_kw(p, DP_KW_FROM, "FROM after IS DISTINCT");
      e->u.is.what = DP_IS_DISTINCT_FROM;
      e->u.is.other = parse_binary(p, PREC_CMP + 1);
    } else {
      fail_expected(p, "NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS", NULL);
    }
  } else if (is_kw(t, DP_KW_BETWEEN)) {
    next(p);
    e = new_expr(p, DP_AX_BETWEEN, start);
    e->u.between.arg = left;
    e->u.between.negated = negated;
    if (accept_kw(p, DP_KW_SYMMETRIC)) e->u.between.symmetric = true;
    else accept_word(p, "ASYMMETRIC");
    e->u.between.lo = parse_binary(p, PREC_CMP + 1);
    expect_kw(p, DP_KW_AND, "AND in BETWEEN low AND high");
    e->u.between.hi = parse_binary(p, PREC_CMP + 1);
  } else if (is_kw(t, DP_KW_IN)) {
    if (p->in_position && !negated && peek(p, 1)->kind != DP_TK_LPAREN) return NULL;
    next(p);
    expect(p, DP_TK_LPAREN, "'(' after IN (write IN (1, 2) or IN (SELECT ...))");
    if (starts_query(cur(p))) {
      e = new_expr(p, DP_AX_IN_QUERY, start);
      e->u.in_query.arg = left;
      e->u.in_query.negated = negated;
      e->u.in_query.query = parse_query(p);
      expect(p, DP_TK_RPAREN, "')' to close IN (SELECT ...)");
    } else {
      e = new_expr(p, DP_AX_IN_LIST, start);
      vec items = {0};
      if (at(p, DP_TK_RPAREN)) fail_expected(p, "a value in IN (...)", NULL);
      parse_expr_list(p, &items, DP_TK_RPAREN, "')' to close the IN list");
      e->u.in_list.arg = left;
      e->u.in_list.negated = negated;
      e->u.in_list.n = items.n;
      e->u.in_list.items = items.items;
    }
  } else if (is_kw(t, DP_KW_LIKE) || is_kw(t, DP_KW_SIMILAR) || is_kw(t, DP_KW_RLIKE)) {
    next(p);
    e = new_expr(p, DP_AX_LIKE, start);
    e->u.like.kind = is_kw(t, DP_KW_LIKE) ? DP_LIKE : is_kw(t, DP_KW_RLIKE) ? DP_RLIKE : DP_SIMILAR;
    if (e->u.like.kind == DP_SIMILAR) expect_kw(p, DP_KW_TO, "TO after SIMILAR");
    e->u.like.arg = left;
    e->u.like.negated = negated;
    e->u.like.pattern = parse_binary(p, PREC_CMP + 1);
    if (accept_kw(p, DP_KW_ESCAPE)) e->u.like.escape = parse_binary(p, PREC_CMP + 1);
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
        e->u.is.other = parse_binary(p, PREC_CMP + 1);
        finish(p, e, start);
        left = e;
        continue;
      }
      if (t->kind == DP_TK_EQEQ)
        fail_at(p, DIPPER_SYNTAX, t->span, "'==' is not SQL: compare with a single '='");
    }
    dp_ast_binop op;
    int prec;
    if (!binop_of(t, &op, &prec) || prec < min) return left;
    next(p);
    dp_ast_expr *right = parse_binary(p, prec + 1);
    dp_ast_expr *e = new_expr(p, DP_AX_BINARY, start);
    e->u.binary.op = op;
    e->u.binary.left = left;
    e->u.binary.right = right;
    finish(p, e, start);
    left = e;
  }
}

static dp_ast_expr *parse_binary(parser *p, int min) {
  enter(p);
  dp_ast_expr *e = binary_body(p, min);
  leave(p);
  return e;
}

static dp_ast_expr *parse_expr(parser *p) { return parse_binary(p, PREC_OR); }

/* ------------------------------------------------------- ORDER BY, OVER */

static dp_ast_order parse_order_item(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_order o;
  memset(&o, 0, sizeof o);
  o.expr = parse_expr(p);
  if (accept_kw(p, DP_KW_DESC)) o.desc = true;
  else accept_kw(p, DP_KW_ASC);
  if (accept_kw(p, DP_KW_NULLS)) {
    if (accept_kw(p, DP_KW_FIRST)) o.nulls = 1;
    else if (accept_kw(p, DP_KW_LAST)) o.nulls = 2;
    else fail_expected(p, "FIRST or LAST after NULLS", NULL);
  }
  o.span = span_from(p, start);
  return o;
}

static void parse_order_list(parser *p, int *n, dp_ast_order **items) {
  vec v = {0};
  do {
    *(dp_ast_order *)vec_push(p, &v, sizeof(dp_ast_order)) = parse_order_item(p);
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
    else fail_expected(p, "PRECEDING or FOLLOWING after UNBOUNDED", NULL);
  } else if (accept_kw(p, DP_KW_CURRENT)) {
    expect_kw(p, DP_KW_ROW, "ROW after CURRENT");
    b.kind = DP_BOUND_CURRENT_ROW;
  } else {
    b.offset = parse_binary(p, PREC_BITOR);
    if (accept_kw(p, DP_KW_PRECEDING)) b.kind = DP_BOUND_PRECEDING;
    else if (accept_kw(p, DP_KW_FOLLOWING)) b.kind = DP_BOUND_FOLLOWING;
    else fail_expected(p, "PRECEDING or FOLLOWING after the frame offset", NULL);
  }
  return b;
}

/* ( [w] [PARTITION BY ..] [ORDER BY ..] [ROWS|RANGE frame] ) */
static dp_ast_window *parse_window_spec(parser *p) {
  const dp_token *start = cur(p);
  expect(p, DP_TK_LPAREN, "'(' to open the window specification");
  dp_ast_window *w = alloc(p, sizeof *w);
  if (is_name_token(cur(p), true) && !at_kw(p, DP_KW_PARTITION) && !at_kw(p, DP_KW_ROWS) &&
      !at_kw(p, DP_KW_RANGE))
    w->ref_name = parse_ident(p, "a window name").name;
  if (accept_kw(p, DP_KW_PARTITION)) {
    expect_kw(p, DP_KW_BY, "BY after PARTITION");
    vec v = {0};
    do {
      push_expr(p, &v, parse_expr(p));
    } while (accept(p, DP_TK_COMMA));
    w->npartition = v.n;
    w->partition = v.items;
  }
  if (accept_kw(p, DP_KW_ORDER)) {
    expect_kw(p, DP_KW_BY, "BY after ORDER");
    parse_order_list(p, &w->norder, &w->order);
  }
  if (at_kw(p, DP_KW_ROWS) || at_kw(p, DP_KW_RANGE)) {
    w->has_frame = true;
    w->rows = at_kw(p, DP_KW_ROWS);
    next(p);
    if (accept_kw(p, DP_KW_BETWEEN)) {
      w->start = parse_bound(p);
      expect_kw(p, DP_KW_AND, "AND between the two frame bounds");
      w->end = parse_bound(p);
    } else {
      w->start = parse_bound(p);
      w->end.kind = DP_BOUND_CURRENT_ROW;
    }
  }
  expect(p, DP_TK_RPAREN, "')' to close the window specification");
  w->span = span_from(p, start);
  return w;
}

/* --------------------------------------------------------------- queries */

static dp_ast_from *parse_from_list(parser *p);
static dp_ast_stmt *parse_insert(parser *p);

/* VALUES (1, 'a'), (2, 'b') — also VALUES 1, 2 for one column. */
static dp_ast_from *parse_values(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_from *f = alloc(p, sizeof *f);
  f->kind = DP_AF_VALUES;
  vec cells = {0};
  int nrows = 0, ncols = -1;
  do {
    const dp_token *rs = cur(p);
    int before = cells.n;
    if (at(p, DP_TK_LPAREN) || (at_kw(p, DP_KW_ROW) && peek(p, 1)->kind == DP_TK_LPAREN)) {
      if (at_kw(p, DP_KW_ROW)) next(p);
      next(p);
      parse_expr_list(p, &cells, DP_TK_RPAREN, "')' to close the row of VALUES");
    } else {
      push_expr(p, &cells, parse_expr(p));
    }
    int n = cells.n - before;
    if (n == 0) fail_at(p, DIPPER_SYNTAX, span_from(p, rs), "a row of VALUES needs a value");
    if (ncols < 0) ncols = n;
    else if (n != ncols)
      fail_at(p, DIPPER_SYNTAX, span_from(p, rs),
              "this row of VALUES has %d values but the first row has %d: every row needs "
              "the same number",
              n, ncols);
    nrows++;
  } while (accept(p, DP_TK_COMMA));
  f->u.values.nrows = nrows;
  f->u.values.ncols = ncols;
  f->u.values.cells = cells.items;
  f->span = span_from(p, start);
  return f;
}

/* An alias after a table: [AS] t [(a, b)]. */
static void parse_alias(parser *p, dp_ast_alias *alias) {
  bool as = accept_kw(p, DP_KW_AS);
  /* `FROM t window` names the table "window" unless a WINDOW clause follows. */
  bool window_alias = at_kw(p, DP_KW_WINDOW) &&
                      !(is_name_token(peek(p, 1), false) && is_kw(peek(p, 2), DP_KW_AS));
  if (!as && !window_alias && !is_name_token(cur(p), true)) return;
  alias->name = parse_ident(p, "an alias after AS");
  if (at(p, DP_TK_LPAREN)) {
    alias->cols = parse_ident_list(p, &alias->ncols, "column aliases",
                                   "')' to close the column aliases");
  }
}

static dp_ast_select *parse_select(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_select *s = alloc(p, sizeof *s);
  if (accept_kw(p, DP_KW_DISTINCT)) s->distinct = true;
  else accept_kw(p, DP_KW_ALL);
  vec items = {0};
  for (;;) {
    const dp_token *is = cur(p);
    if (at_kw(p, DP_KW_FROM))
      fail_expected(p, "a select item", items.n ? ": remove the trailing ',' before FROM" : NULL);
    dp_ast_select_item *item = vec_push(p, &items, sizeof *item);
    item->expr = parse_expr(p);
    if (accept_kw(p, DP_KW_AS)) {
      if (at(p, DP_TK_STRING)) { /* Spark: AS 'name' is not a string but a name. */
        fail_expected(p, "an alias after AS", ": aliases are names; quote them in backticks");
      }
      item->alias = parse_ident(p, "an alias after AS");
    } else if (is_name_token(cur(p), true)) {
      item->alias = ident_of(p, cur(p));
      next(p);
    }
    item->span = span_from(p, is);
    if (!accept(p, DP_TK_COMMA)) break;
    if (at_kw(p, DP_KW_FROM))
      fail_at(p, DIPPER_SYNTAX, p->toks[p->pos - 1].span,
              "unexpected ',' before FROM: remove the trailing comma after the last select "
              "item");
  }
  s->nitems = items.n;
  s->items = items.items;
  const dp_token *t = cur(p);
  if (is_name_token(t, true) || t->kind == DP_TK_INTEGER || t->kind == DP_TK_STRING ||
      t->kind == DP_TK_DECIMAL)
    fail_expected(p, "',' or FROM after the select item", ": is a ',' missing between select items?");
  if (accept_kw(p, DP_KW_FROM)) s->from = parse_from_list(p);
  if (accept_kw(p, DP_KW_WHERE)) s->where = parse_expr(p);
  if (at_kw(p, DP_KW_GROUP)) {
    const dp_token *gs = cur(p);
    next(p);
    expect_kw(p, DP_KW_BY, "BY after GROUP");
    vec v = {0};
    do {
      push_expr(p, &v, parse_expr(p));
    } while (accept(p, DP_TK_COMMA));
    s->ngroup = v.n;
    s->group = v.items;
    s->group_span = span_from(p, gs);
  }
  if (accept_kw(p, DP_KW_HAVING)) s->having = parse_expr(p);
  if (at_kw(p, DP_KW_WINDOW) && is_name_token(peek(p, 1), false) && is_kw(peek(p, 2), DP_KW_AS)) {
    next(p);
    vec v = {0};
    do {
      dp_ast_named_window *nw = vec_push(p, &v, sizeof *nw);
      nw->name = parse_ident(p, "a window name");
      expect_kw(p, DP_KW_AS, "AS after the window name");
      nw->window = parse_window_spec(p);
    } while (accept(p, DP_TK_COMMA));
    s->nwindows = v.n;
    s->windows = v.items;
  }
  if (accept_kw(p, DP_KW_QUALIFY)) s->qualify = parse_expr(p);
  s->span = span_from(p, start);
  return s;
}

static dp_ast_query *new_query(parser *p, const dp_token *start) {
  dp_ast_query *q = alloc(p, sizeof *q);
  q->span = start->span;
  return q;
}

/* SELECT * FROM (q): gives a query that already has ORDER BY / LIMIT / WITH
** room for another one, as in (SELECT .. LIMIT 5) ORDER BY a. */
static dp_ast_query *wrap_query(parser *p, dp_ast_query *inner) {
  dp_ast_query *q = alloc(p, sizeof *q);
  dp_ast_select *s = alloc(p, sizeof *s);
  dp_ast_select_item *item = alloc(p, sizeof *item);
  dp_ast_expr *star = alloc(p, sizeof *star);
  dp_ast_from *f = alloc(p, sizeof *f);
  star->kind = DP_AX_STAR;
  star->span = inner->span;
  item->expr = star;
  item->span = inner->span;
  f->kind = DP_AF_SUBQUERY;
  f->span = inner->span;
  f->u.subquery.query = inner;
  s->nitems = 1;
  s->items = item;
  s->from = f;
  s->span = inner->span;
  q->select = s;
  q->span = inner->span;
  return q;
}

static dp_ast_query *parse_query_primary(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_query *q;
  if (at_kw(p, DP_KW_SELECT)) {
    q = new_query(p, start);
    q->select = parse_select(p);
  } else if (at_kw(p, DP_KW_VALUES)) {
    q = new_query(p, start);
    q->values = parse_values(p);
  } else if (at(p, DP_TK_LPAREN)) {
    next(p);
    q = parse_query(p);
    expect(p, DP_TK_RPAREN, "')' to close the parenthesised query");
    return q;
  } else {
    fail_expected(p, "a query (SELECT, VALUES or '(')", NULL);
  }
  q->span = span_from(p, start);
  return q;
}

static dp_ast_query *set_node(parser *p, dp_ast_setop op, bool all, dp_ast_query *l,
                              dp_ast_query *r, const dp_token *start) {
  dp_ast_query *q = new_query(p, start);
  q->op = op;
  q->all = all;
  q->left = l;
  q->right = r;
  q->span = span_from(p, start);
  return q;
}

static bool set_quantifier(parser *p) {
  if (accept_kw(p, DP_KW_ALL)) return true;
  accept_kw(p, DP_KW_DISTINCT);
  return false;
}

static dp_ast_query *parse_intersect(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_query *q = parse_query_primary(p);
  while (accept_kw(p, DP_KW_INTERSECT)) {
    bool all = set_quantifier(p);
    q = set_node(p, DP_SET_INTERSECT, all, q, parse_query_primary(p), start);
  }
  return q;
}

static dp_ast_query *parse_set_expr(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_query *q = parse_intersect(p);
  while (at_kw(p, DP_KW_UNION) || at_kw(p, DP_KW_EXCEPT)) {
    dp_ast_setop op = at_kw(p, DP_KW_UNION) ? DP_SET_UNION : DP_SET_EXCEPT;
    next(p);
    bool all = set_quantifier(p);
    q = set_node(p, op, all, q, parse_intersect(p), start);
  }
  return q;
}

static bool has_tail(const dp_ast_query *q) {
  return q->norder > 0 || q->limit || q->offset;
}

/* LIMIT n [OFFSET m] | LIMIT m, n | OFFSET m [ROW|ROWS] [FETCH FIRST|NEXT n ROW|ROWS ONLY] */
static void parse_limit(parser *p, dp_ast_expr **limit, dp_ast_expr **offset, dp_span *span) {
  const dp_token *start = cur(p);
  bool any = false;
  if (accept_kw(p, DP_KW_LIMIT)) {
    any = true;
    *limit = parse_binary(p, PREC_BITOR);
    if (accept(p, DP_TK_COMMA)) { /* MySQL's LIMIT offset, count */
      *offset = *limit;
      *limit = parse_binary(p, PREC_BITOR);
    } else if (accept_kw(p, DP_KW_OFFSET)) {
      *offset = parse_binary(p, PREC_BITOR);
    }
  } else if (at_kw(p, DP_KW_OFFSET) || at_kw(p, DP_KW_FETCH)) {
    any = true;
    if (accept_kw(p, DP_KW_OFFSET)) {
      *offset = parse_binary(p, PREC_BITOR);
      if (!accept_kw(p, DP_KW_ROWS)) accept_kw(p, DP_KW_ROW);
    }
    if (accept_kw(p, DP_KW_FETCH)) {
      if (!accept_kw(p, DP_KW_FIRST) && !accept_kw(p, DP_KW_NEXT))
        fail_expected(p, "FIRST or NEXT after FETCH", NULL);
      *limit = parse_binary(p, PREC_BITOR);
      if (!accept_kw(p, DP_KW_ROWS) && !accept_kw(p, DP_KW_ROW))
        fail_expected(p, "ROWS after FETCH FIRST n", NULL);
      expect_kw(p, DP_KW_ONLY, "ONLY after FETCH FIRST n ROWS");
    }
  }
  if (any) *span = span_from(p, start);
}

static dp_ast_query *query_body(parser *p) {
  const dp_token *start = cur(p);
  vec ctes = {0};
  if (accept_kw(p, DP_KW_WITH)) {
    do {
      dp_ast_cte *c = vec_push(p, &ctes, sizeof *c);
      c->name = parse_ident(p, "a name for the WITH query");
      if (at(p, DP_TK_LPAREN))
        c->cols = parse_ident_list(p, &c->ncols, "column names", "')' to close the column names");
      expect_kw(p, DP_KW_AS, "AS after the WITH name (WITH name AS (SELECT ...))");
      expect(p, DP_TK_LPAREN, "'(' before the WITH query");
      c->query = parse_query(p);
      expect(p, DP_TK_RPAREN, "')' to close the WITH query");
    } while (accept(p, DP_TK_COMMA));
  }
  dp_ast_query *q = parse_set_expr(p);
  if (ctes.n) {
    if (q->nctes) q = wrap_query(p, q);
    q->nctes = ctes.n;
    q->ctes = ctes.items;
  }
  bool order = at_kw(p, DP_KW_ORDER);
  bool limit = at_kw(p, DP_KW_LIMIT) || at_kw(p, DP_KW_OFFSET) || at_kw(p, DP_KW_FETCH);
  if ((order || limit) && has_tail(q)) q = wrap_query(p, q);
  if (order) {
    const dp_token *os = cur(p);
    next(p);
    expect_kw(p, DP_KW_BY, "BY after ORDER");
    parse_order_list(p, &q->norder, &q->order);
    q->order_span = span_from(p, os);
  }
  parse_limit(p, &q->limit, &q->offset, &q->limit_span);
  q->span = span_from(p, start);
  return q;
}

static dp_ast_query *parse_query(parser *p) {
  enter(p);
  dp_ast_query *q = query_body(p);
  leave(p);
  return q;
}

/* ----------------------------------------------------------------- FROM */

/* After '(' in FROM: a query, or a parenthesised join? Skip nested '('. */
static bool paren_starts_query(const parser *p) {
  int k = 1;
  while (peek(p, k)->kind == DP_TK_LPAREN) k++;
  return starts_query(peek(p, k));
}

static dp_ast_from *new_from(parser *p, dp_ast_from_kind kind) {
  dp_ast_from *f = alloc(p, sizeof *f);
  f->kind = kind;
  return f;
}

static dp_ast_from *from_primary_body(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_from *f;
  bool lateral = accept_kw(p, DP_KW_LATERAL);
  if (at_kw(p, DP_KW_TABLE) && peek(p, 1)->kind == DP_TK_LPAREN) {
    next(p);
    next(p);
    f = new_from(p, DP_AF_TVF);
    const dp_token *cs = cur(p);
    dp_ast_expr *call = parse_expr(p);
    if (call->kind != DP_AX_CALL || call->parens)
      fail_at(p, DIPPER_SYNTAX, span_from(p, cs),
              "TABLE(...) in FROM takes a table function call, e.g. TABLE(TUMBLE(TABLE t, "
              "DESCRIPTOR(ts), INTERVAL '1' MINUTE))");
    expect(p, DP_TK_RPAREN,
           fmt(p, "')' to close TABLE(%s(...))",
                           call->u.call.name.parts[call->u.call.name.n - 1].name));
    f->u.tvf.call = call;
    f->u.tvf.lateral = lateral;
  } else if (at(p, DP_TK_LPAREN) && (lateral || paren_starts_query(p))) {
    next(p);
    dp_ast_query *q = parse_query(p);
    expect(p, DP_TK_RPAREN, "')' to close the subquery");
    if (!lateral && q->values && !q->nctes && !has_tail(q)) {
      f = q->values;
    } else {
      f = new_from(p, DP_AF_SUBQUERY);
      f->u.subquery.query = q;
      f->u.subquery.lateral = lateral;
    }
  } else if (lateral) {
    fail_expected(p, "TABLE(...) or '(' after LATERAL", NULL);
  } else if (at(p, DP_TK_LPAREN)) {
    next(p);
    f = parse_from_list(p);
    expect(p, DP_TK_RPAREN, "')' to close the parenthesised join");
    f->span = span_from(p, start);
    return f;
  } else if (at_kw(p, DP_KW_UNNEST) && peek(p, 1)->kind == DP_TK_LPAREN) {
    next(p);
    next(p);
    f = new_from(p, DP_AF_UNNEST);
    vec args = {0};
    parse_expr_list(p, &args, DP_TK_RPAREN, "')' to close UNNEST(...)");
    if (args.n == 0) fail_at(p, DIPPER_SYNTAX, span_from(p, start), "UNNEST needs an array or map");
    f->u.unnest.n = args.n;
    f->u.unnest.args = args.items;
    if (at_kw(p, DP_KW_WITH) && is_kw(peek(p, 1), DP_KW_ORDINALITY)) {
      next(p);
      next(p);
      f->u.unnest.with_ordinality = true;
    }
  } else if (at_kw(p, DP_KW_VALUES)) {
    f = parse_values(p);
  } else if (at_kw(p, DP_KW_MATCH_RECOGNIZE)) {
    fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span, "MATCH_RECOGNIZE is not supported");
  } else {
    dp_ast_name name = parse_name(p, "a table name");
    if (at(p, DP_TK_LPAREN)) {
      f = new_from(p, DP_AF_TVF);
      f->u.tvf.call = parse_call(p, name, start);
    } else {
      f = new_from(p, DP_AF_TABLE);
      f->u.table.name = name;
    }
  }
  if (f->kind == DP_AF_TABLE && at_kw(p, DP_KW_FOR)) {
    next(p);
    expect_kw(p, DP_KW_SYSTEM_TIME, "SYSTEM_TIME after FOR (FOR SYSTEM_TIME AS OF t.ts)");
    expect_kw(p, DP_KW_AS, "AS OF after FOR SYSTEM_TIME");
    expect_kw(p, DP_KW_OF, "OF after FOR SYSTEM_TIME AS");
    f->u.table.as_of = parse_binary(p, PREC_BITOR);
  }
  parse_alias(p, &f->alias);
  if (at_kw(p, DP_KW_MATCH_RECOGNIZE))
    fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span, "MATCH_RECOGNIZE is not supported");
  if (f->kind == DP_AF_TABLE && !f->u.table.as_of && at_kw(p, DP_KW_FOR)) {
    next(p);
    expect_kw(p, DP_KW_SYSTEM_TIME, "SYSTEM_TIME after FOR (FOR SYSTEM_TIME AS OF t.ts)");
    expect_kw(p, DP_KW_AS, "AS OF after FOR SYSTEM_TIME");
    expect_kw(p, DP_KW_OF, "OF after FOR SYSTEM_TIME AS");
    f->u.table.as_of = parse_binary(p, PREC_BITOR);
  }
  f->span = span_from(p, start);
  return f;
}

static dp_ast_from *parse_from_primary(parser *p) {
  enter(p);
  dp_ast_from *f = from_primary_body(p);
  leave(p);
  return f;
}

/* The join keywords before JOIN; false when the next tokens start no join. */
static bool parse_join_kind(parser *p, dp_ast_join_kind *kind, bool *natural) {
  *natural = accept_kw(p, DP_KW_NATURAL);
  if (accept_kw(p, DP_KW_JOIN)) {
    *kind = DP_JOIN_INNER;
    return true;
  }
  if (accept_kw(p, DP_KW_INNER)) *kind = DP_JOIN_INNER;
  else if (accept_kw(p, DP_KW_CROSS)) *kind = DP_JOIN_CROSS;
  else if (accept_kw(p, DP_KW_LEFT)) {
    if (accept_kw(p, DP_KW_SEMI)) *kind = DP_JOIN_LEFT_SEMI;
    else if (accept_kw(p, DP_KW_ANTI)) *kind = DP_JOIN_LEFT_ANTI;
    else {
      accept_kw(p, DP_KW_OUTER);
      *kind = DP_JOIN_LEFT;
    }
  } else if (accept_kw(p, DP_KW_RIGHT)) {
    accept_kw(p, DP_KW_OUTER);
    *kind = DP_JOIN_RIGHT;
  } else if (accept_kw(p, DP_KW_FULL)) {
    accept_kw(p, DP_KW_OUTER);
    *kind = DP_JOIN_FULL;
  } else {
    if (*natural) fail_expected(p, "JOIN after NATURAL", NULL);
    return false;
  }
  expect_kw(p, DP_KW_JOIN, "JOIN");
  return true;
}

static dp_ast_from *parse_from_join(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_from *left = parse_from_primary(p);
  dp_ast_join_kind kind;
  bool natural;
  while (parse_join_kind(p, &kind, &natural)) {
    dp_ast_from *j = new_from(p, DP_AF_JOIN);
    j->u.join.kind = kind;
    j->u.join.natural = natural;
    j->u.join.left = left;
    j->u.join.right = parse_from_primary(p);
    if (kind != DP_JOIN_CROSS && !natural) {
      if (accept_kw(p, DP_KW_ON)) {
        j->u.join.on = parse_expr(p);
      } else if (accept_kw(p, DP_KW_USING)) {
        j->u.join.using_ = parse_ident_list(p, &j->u.join.nusing, "join columns",
                                            "')' to close USING (...)");
      } else {
        fail_expected(p, "ON <condition> or USING (columns) after the joined table",
                      ": write CROSS JOIN for a join without a condition");
      }
    }
    j->span = span_from(p, start);
    left = j;
  }
  return left;
}

static dp_ast_from *parse_from_list(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_from *left = parse_from_join(p);
  while (accept(p, DP_TK_COMMA)) {
    dp_ast_from *j = new_from(p, DP_AF_JOIN);
    j->u.join.kind = DP_JOIN_COMMA;
    j->u.join.left = left;
    j->u.join.right = parse_from_join(p);
    j->span = span_from(p, start);
    left = j;
  }
  return left;
}

/* ------------------------------------------------------------ statements */

static dp_ast_stmt *new_stmt(parser *p, dp_ast_stmt_kind kind, const dp_token *start) {
  dp_ast_stmt *s = alloc(p, sizeof *s);
  s->kind = kind;
  s->span = start->span;
  return s;
}

static bool accept_if_not_exists(parser *p) {
  if (!at_kw(p, DP_KW_IF)) return false;
  next(p);
  expect_kw(p, DP_KW_NOT, "NOT EXISTS after IF");
  expect_kw(p, DP_KW_EXISTS, "EXISTS after IF NOT");
  return true;
}

static bool accept_if_exists(parser *p) {
  if (!at_kw(p, DP_KW_IF)) return false;
  next(p);
  expect_kw(p, DP_KW_EXISTS, "EXISTS after IF");
  return true;
}

static const char *parse_string(parser *p, const char *what) {
  if (!at(p, DP_TK_STRING)) fail_expected(p, what, NULL);
  const char *s = unquote(p, cur(p));
  next(p);
  return s;
}

/* WITH ('k' = 'v', ...) after WITH. */
static void parse_options(parser *p, dp_ast_options *o, const dp_token *start) {
  expect(p, DP_TK_LPAREN, "'(' after WITH (write WITH ('connector' = '...', ...))");
  vec v = {0};
  if (!at(p, DP_TK_RPAREN)) {
    do {
      const dp_token *ks = cur(p);
      if (ks->kind != DP_TK_STRING) {
        if (ks->kind == DP_TK_IDENT || ks->kind == DP_TK_QIDENT)
          fail_at(p, DIPPER_SYNTAX, ks->span,
                  "expected an option key in single quotes, found %s: write '%.*s'",
                  describe(p, ks), (int)ks->span.len, p->text + ks->span.off);
        fail_expected(p, "an option key in single quotes ('connector' = '...')", NULL);
      }
      dp_ast_option *opt = vec_push(p, &v, sizeof *opt);
      opt->key = unquote(p, ks);
      next(p);
      expect(p, DP_TK_EQ, "'=' after the option key");
      const dp_token *vs = cur(p);
      if (vs->kind == DP_TK_STRING) {
        opt->value = unquote(p, vs);
      } else if (vs->kind == DP_TK_INTEGER || vs->kind == DP_TK_DECIMAL ||
                 is_kw(vs, DP_KW_TRUE) || is_kw(vs, DP_KW_FALSE)) {
        opt->value = token_text(p, vs); /* lenient: 'sink.parallelism' = 2 */
      } else if (vs->kind == DP_TK_IDENT || vs->kind == DP_TK_QIDENT) {
        fail_at(p, DIPPER_SYNTAX, vs->span,
                "expected an option value in single quotes, found %s: write '%.*s'",
                describe(p, vs), (int)vs->span.len, p->text + vs->span.off);
      } else {
        fail_expected(p, "an option value in single quotes", NULL);
      }
      next(p);
      opt->value_span = vs->span;
      opt->span = span_from(p, ks);
      if (at(p, DP_TK_COMMA) && peek(p, 1)->kind == DP_TK_RPAREN)
        fail_at(p, DIPPER_SYNTAX, cur(p)->span,
                "unexpected ',' before ')': remove the trailing comma after the last option");
    } while (accept(p, DP_TK_COMMA));
  }
  if (at(p, DP_TK_STRING))
    fail_expected(p, "',' or ')' after the option", ": is a ',' missing between options?");
  expect(p, DP_TK_RPAREN, "')' to close the WITH options");
  o->n = v.n;
  o->items = v.items;
  o->span = span_from(p, start);
}

static void set_primary_key(parser *p, dp_ast_create_table *ct, dp_ast_ident *cols, int n,
                            const dp_token *start) {
  if (ct->npk > 0)
    fail_at(p, DIPPER_DUPLICATE, start->span,
            "a table has at most one PRIMARY KEY: list every key column in one "
            "PRIMARY KEY (a, b) NOT ENFORCED");
  ct->npk = n;
  ct->pk = cols;
  ct->pk_enforced = true;
  if (accept_kw(p, DP_KW_NOT)) {
    expect_kw(p, DP_KW_ENFORCED, "ENFORCED after PRIMARY KEY ... NOT");
    ct->pk_enforced = false;
  }
  ct->pk_span = span_from(p, start);
}

/* One column: name TYPE [modifiers] | name AS expr [COMMENT '..'] */
static void parse_column(parser *p, dp_ast_create_table *ct, dp_ast_column *col) {
  const dp_token *start = cur(p);
  col->name = parse_ident(p, "a column name");
  if (accept_kw(p, DP_KW_AS)) {
    col->kind = DP_COL_COMPUTED;
    col->expr = parse_expr(p);
  } else {
    col->kind = DP_COL_PHYSICAL;
    const dp_token *ts = cur(p);
    col->type = parse_type(p);
    col->type_span = span_from(p, ts);
    if (accept_kw(p, DP_KW_METADATA)) {
      col->kind = DP_COL_METADATA;
      if (accept_kw(p, DP_KW_FROM))
        col->metadata_key = parse_string(p, "the metadata key in single quotes after FROM");
      if (accept_kw(p, DP_KW_VIRTUAL)) col->is_virtual = true;
    }
  }
  for (;;) {
    const dp_token *ms = cur(p);
    if (at_kw(p, DP_KW_CONSTRAINT)) {
      next(p);
      parse_ident(p, "a constraint name");
      if (!at_kw(p, DP_KW_PRIMARY)) fail_expected(p, "PRIMARY KEY after CONSTRAINT name", NULL);
    }
    if (accept_kw(p, DP_KW_PRIMARY)) {
      expect_kw(p, DP_KW_KEY, "KEY after PRIMARY");
      dp_ast_ident *key = alloc(p, sizeof *key);
      *key = col->name;
      set_primary_key(p, ct, key, 1, ms);
      col->primary_key = true;
    } else if (accept_kw(p, DP_KW_COMMENT)) {
      col->comment = parse_string(p, "a string after COMMENT");
    } else {
      break;
    }
  }
  col->span = span_from(p, start);
}

static void parse_table_elements(parser *p, dp_ast_create_table *ct) {
  vec cols = {0};
  next(p); /* ( */
  for (;;) {
    const dp_token *es = cur(p);
    /* WATERMARK and PRIMARY are also usable as column names: `watermark INT`. */
    if (at_kw(p, DP_KW_WATERMARK) &&
        (is_kw(peek(p, 1), DP_KW_FOR) || is_kw(peek(p, 2), DP_KW_AS))) {
      next(p);
      expect_kw(p, DP_KW_FOR, "FOR after WATERMARK (WATERMARK FOR ts AS ts - INTERVAL '5' "
                              "SECOND)");
      if (ct->has_watermark)
        fail_at(p, DIPPER_DUPLICATE, es->span,
                "a table has at most one WATERMARK: keep the one for the event-time column");
      ct->has_watermark = true;
      ct->watermark_col = parse_ident(p, "the event-time column after WATERMARK FOR");
      expect_kw(p, DP_KW_AS, "AS after WATERMARK FOR column (WATERMARK FOR ts AS ts - "
                             "INTERVAL '5' SECOND)");
      ct->watermark_expr = parse_expr(p);
      ct->watermark_span = span_from(p, es);
    } else if ((at_kw(p, DP_KW_PRIMARY) &&
                (is_kw(peek(p, 1), DP_KW_KEY) || peek(p, 1)->kind == DP_TK_LPAREN)) ||
               (at_kw(p, DP_KW_CONSTRAINT) && is_kw(peek(p, 2), DP_KW_PRIMARY))) {
      if (accept_kw(p, DP_KW_CONSTRAINT)) parse_ident(p, "a constraint name");
      next(p);
      expect_kw(p, DP_KW_KEY, "KEY after PRIMARY (PRIMARY KEY (a, b) NOT ENFORCED)");
      int n = 0;
      dp_ast_ident *key =
          parse_ident_list(p, &n, "key columns", "')' to close the PRIMARY KEY columns");
      set_primary_key(p, ct, key, n, es);
    } else {
      parse_column(p, ct, vec_push(p, &cols, sizeof(dp_ast_column)));
    }
    if (accept(p, DP_TK_COMMA)) {
      if (at(p, DP_TK_RPAREN))
        fail_at(p, DIPPER_SYNTAX, p->toks[p->pos - 1].span,
                "unexpected ',' before ')': remove the trailing comma after the last column");
      continue;
    }
    if (accept(p, DP_TK_RPAREN)) break;
    fail_expected(p, "',' or ')' after the column definition",
                  is_name_token(cur(p), false) ? ": is a ',' missing between columns?" : NULL);
  }
  ct->ncols = cols.n;
  ct->cols = cols.items;
}

/* Spark's CREATE TABLE ... USING fmt OPTIONS (k 'v'): say how dipper writes
** it (Flink's WITH clause), with the format named when it is a file format. */
static _Noreturn void spark_ddl(parser *p, const dp_token *at) {
  const dp_token *fmt = is_kw(at, DP_KW_USING) ? peek(p, 1) : NULL;
  static const char *const files[] = {"CSV", "JSON", "PARQUET", "ORC", "AVRO", "TEXT"};
  bool file = false;
  for (size_t i = 0; fmt && i < sizeof files / sizeof files[0]; i++) file |= is_word(p, fmt, files[i]);
  if (file)
    fail_at(p, DIPPER_SYNTAX, at->span,
            "USING %.*s OPTIONS (...) is Spark's DDL; dipper writes Flink's WITH clause: "
            "WITH ('connector' = 'filesystem', 'path' = '...', 'format' = '%.*s'), each "
            "option as 'key' = 'value'",
            (int)fmt->span.len, p->text + fmt->span.off, (int)fmt->span.len,
            p->text + fmt->span.off);
  fail_at(p, DIPPER_SYNTAX, at->span,
          "%s is Spark's DDL; dipper writes Flink's WITH clause: WITH ('connector' = '...', "
          "'format' = '...', ...), each option as 'key' = 'value' (docs/sql.md lists the "
          "connectors)",
          is_kw(at, DP_KW_USING) ? "USING ... OPTIONS (...)" : "OPTIONS (...)");
}

static void parse_create_table(parser *p, dp_ast_stmt *s) {
  dp_ast_create_table *ct = &s->u.create_table;
  ct->if_not_exists = accept_if_not_exists(p);
  ct->name = parse_name(p, "a table name");
  if (at(p, DP_TK_LPAREN)) parse_table_elements(p, ct);
  bool seen_comment = false, seen_partition = false, seen_with = false, seen_like = false;
  for (;;) {
    const dp_token *cs = cur(p);
    if (!seen_comment && accept_kw(p, DP_KW_COMMENT)) {
      seen_comment = true;
      ct->comment = parse_string(p, "a string after COMMENT");
    } else if (!seen_partition && accept_kw(p, DP_KW_PARTITIONED)) {
      seen_partition = true;
      expect_kw(p, DP_KW_BY, "BY after PARTITIONED");
      ct->partition = parse_ident_list(p, &ct->npartition, "partition columns",
                                       "')' to close PARTITIONED BY (...)");
    } else if (!seen_with && accept_kw(p, DP_KW_WITH)) {
      seen_with = true;
      parse_options(p, &ct->options, cs);
    } else if (!seen_like && accept_kw(p, DP_KW_LIKE)) {
      seen_like = true;
      ct->like = parse_name(p, "the table name after LIKE");
      if (at(p, DP_TK_LPAREN))
        fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span,
                "LIKE options (INCLUDING/EXCLUDING ...) are not supported: LIKE copies the "
                "columns, watermark and options; remove the parenthesised list");
    } else if (accept_kw(p, DP_KW_AS)) {
      ct->as_query = parse_query(p);
      break;
    } else if (at_kw(p, DP_KW_USING) || is_word(p, cs, "OPTIONS")) {
      spark_ddl(p, cs);
    } else {
      break;
    }
  }
  if (ct->ncols == 0 && ct->like.n == 0 && !ct->as_query && !at(p, DP_TK_LPAREN))
    fail_at(p, DIPPER_SYNTAX, s->span,
            "CREATE TABLE needs columns (c TYPE, ...), LIKE other_table or AS SELECT ...");
}

static void parse_create_view(parser *p, dp_ast_stmt *s) {
  dp_ast_create_view *cv = &s->u.create_view;
  cv->if_not_exists = accept_if_not_exists(p);
  cv->name = parse_name(p, "a view name");
  if (at(p, DP_TK_LPAREN))
    cv->cols = parse_ident_list(p, &cv->ncols, "view columns", "')' to close the view columns");
  if (accept_kw(p, DP_KW_COMMENT)) parse_string(p, "a string after COMMENT");
  expect_kw(p, DP_KW_AS, "AS before the view's query");
  const dp_token *qs = cur(p);
  cv->query = parse_query(p);
  cv->query_span = span_from(p, qs);
}

static void parse_create_function(parser *p, dp_ast_stmt *s) {
  dp_ast_create_function *cf = &s->u.create_function;
  cf->if_not_exists = accept_if_not_exists(p);
  cf->name = parse_name(p, "a function name");
  expect_kw(p, DP_KW_AS, "AS 'class name' after the function name");
  cf->class_name = parse_string(p, "the implementing class in single quotes");
  if (accept_kw(p, DP_KW_LANGUAGE)) {
    const dp_token *t = cur(p);
    if (!is_word(p, t, "JAVA") && !is_word(p, t, "SCALA") && !is_word(p, t, "PYTHON") &&
        !is_word(p, t, "C"))
      fail_expected(p, "JAVA, SCALA, PYTHON or C after LANGUAGE", NULL);
    cf->language = token_text(p, t);
    next(p);
  }
  if (at_kw(p, DP_KW_USING))
    fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span,
            "CREATE FUNCTION ... USING JAR is not supported");
}

static dp_ast_stmt *parse_create(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  bool or_replace = false, temporary, system = false;
  if (accept_kw(p, DP_KW_OR)) {
    expect_kw(p, DP_KW_REPLACE, "REPLACE after CREATE OR");
    or_replace = true;
  }
  temporary = accept_kw(p, DP_KW_TEMPORARY);
  if (temporary) system = accept_kw(p, DP_KW_SYSTEM);
  const dp_token *what = cur(p);
  dp_ast_stmt *s;
  if (accept_kw(p, DP_KW_TABLE)) {
    if (or_replace || system)
      fail_at(p, DIPPER_UNSUPPORTED, what->span,
              "CREATE %s TABLE is not supported: DROP TABLE IF EXISTS first",
              or_replace ? "OR REPLACE" : "TEMPORARY SYSTEM");
    s = new_stmt(p, DP_AS_CREATE_TABLE, start);
    s->u.create_table.temporary = temporary;
    parse_create_table(p, s);
  } else if (accept_kw(p, DP_KW_VIEW)) {
    if (system) fail_at(p, DIPPER_SYNTAX, what->span, "SYSTEM applies to functions, not views");
    s = new_stmt(p, DP_AS_CREATE_VIEW, start);
    s->u.create_view.temporary = temporary;
    s->u.create_view.or_replace = or_replace;
    parse_create_view(p, s);
  } else if (accept_kw(p, DP_KW_FUNCTION)) {
    if (or_replace)
      fail_at(p, DIPPER_UNSUPPORTED, what->span,
              "CREATE OR REPLACE FUNCTION is not supported: DROP FUNCTION IF EXISTS first");
    s = new_stmt(p, DP_AS_CREATE_FUNCTION, start);
    s->u.create_function.temporary = temporary;
    s->u.create_function.system = system;
    parse_create_function(p, s);
  } else {
    fail_expected(p, "TABLE, VIEW or FUNCTION after CREATE", NULL);
  }
  return s;
}

static dp_ast_stmt *parse_drop(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_stmt *s = new_stmt(p, DP_AS_DROP, start);
  s->u.drop.temporary = accept_kw(p, DP_KW_TEMPORARY);
  if (s->u.drop.temporary) accept_kw(p, DP_KW_SYSTEM);
  if (accept_kw(p, DP_KW_TABLE)) s->u.drop.what = 'T';
  else if (accept_kw(p, DP_KW_VIEW)) s->u.drop.what = 'V';
  else if (accept_kw(p, DP_KW_FUNCTION)) s->u.drop.what = 'F';
  else fail_expected(p, "TABLE, VIEW or FUNCTION after DROP", NULL);
  s->u.drop.if_exists = accept_if_exists(p);
  s->u.drop.name = parse_name(p, "the name to drop");
  return s;
}

static bool ends_statement(const dp_token *t) {
  return t->kind == DP_TK_SEMI || t->kind == DP_TK_EOF;
}

/* A SET/RESET key or value written without quotes, as the Flink SQL client
** takes it: the raw text of the tokens up to `stop` ('=' for a key, ';' for
** a value).  Keys may not hold spaces (execution.runtime-mode). */
static const char *raw_run(parser *p, bool key, dp_span *span) {
  const dp_token *first = cur(p);
  while (!ends_statement(cur(p)) && !(key && at(p, DP_TK_EQ))) {
    const dp_token *t = cur(p);
    if (t->kind == DP_TK_ERROR && strncmp(t->err, "unterminated", 12) == 0) fail_lex(p, t);
    if (key && t != first && t->space_before)
      fail_at(p, DIPPER_SYNTAX, t->span,
              "a SET key cannot hold spaces: write it in single quotes, SET 'key' = 'value'");
    next(p);
  }
  if (cur(p) == first) fail_expected(p, key ? "an option key" : "a value after '='", NULL);
  *span = span_from(p, first);
  return copy(p, p->text + first->span.off, span->len);
}

static dp_ast_stmt *parse_set(parser *p, bool reset) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_stmt *s = new_stmt(p, reset ? DP_AS_RESET : DP_AS_SET, start);
  dp_ast_set *set = &s->u.set;
  if (ends_statement(cur(p))) return s;
  if (at(p, DP_TK_STRING)) {
    set->key_span = cur(p)->span;
    set->key = parse_string(p, "an option key");
  } else {
    set->key = raw_run(p, true, &set->key_span);
  }
  if (reset) return s;
  expect(p, DP_TK_EQ, "'=' after the SET key (SET 'key' = 'value')");
  if (at(p, DP_TK_STRING) && ends_statement(peek(p, 1))) {
    set->value_span = cur(p)->span;
    set->value = parse_string(p, "a value");
  } else {
    set->value = raw_run(p, false, &set->value_span);
  }
  return s;
}

/* PARTITION (k = 'v', ...) of INSERT. */
static void parse_partition_spec(parser *p, dp_ast_insert *ins) {
  expect(p, DP_TK_LPAREN, "'(' after PARTITION");
  vec v = {0};
  do {
    const dp_token *ks = cur(p);
    dp_ast_option *o = vec_push(p, &v, sizeof *o);
    o->key = parse_ident(p, "a partition column").name;
    expect(p, DP_TK_EQ, "'=' after the partition column");
    const dp_token *vs = cur(p);
    if (vs->kind == DP_TK_STRING) o->value = unquote(p, vs);
    else if (vs->kind == DP_TK_INTEGER || vs->kind == DP_TK_DECIMAL) o->value = token_text(p, vs);
    else fail_expected(p, "a literal partition value", NULL);
    next(p);
    o->value_span = vs->span;
    o->span = span_from(p, ks);
  } while (accept(p, DP_TK_COMMA));
  expect(p, DP_TK_RPAREN, "')' to close PARTITION (...)");
  ins->npartition = v.n;
  ins->partition = v.items;
}

static dp_ast_stmt *parse_insert(parser *p) {
  const dp_token *start = cur(p);
  if (!at_kw(p, DP_KW_INSERT)) fail_expected(p, "INSERT", NULL);
  next(p);
  dp_ast_stmt *s = new_stmt(p, DP_AS_INSERT, start);
  dp_ast_insert *ins = &s->u.insert;
  if (accept_kw(p, DP_KW_OVERWRITE)) ins->overwrite = true;
  else expect_kw(p, DP_KW_INTO, "INTO or OVERWRITE after INSERT");
  accept_kw(p, DP_KW_TABLE);
  ins->table = parse_name(p, "the table to insert into");
  bool seen_partition = false, seen_cols = false;
  for (;;) {
    if (!seen_partition && accept_kw(p, DP_KW_PARTITION)) {
      seen_partition = true;
      parse_partition_spec(p, ins);
    } else if (!seen_cols && at(p, DP_TK_LPAREN) && !paren_starts_query(p)) {
      seen_cols = true;
      ins->cols = parse_ident_list(p, &ins->ncols, "target columns",
                                   "')' to close the target columns");
    } else {
      break;
    }
  }
  if (!starts_query(cur(p)) && !at(p, DP_TK_LPAREN))
    fail_expected(p, "a query (SELECT ... or VALUES ...) after the INSERT target", NULL);
  ins->query = parse_query(p);
  return s;
}

/* After BEGIN: INSERT ...; INSERT ...; END.  `semi_after_begin` for the SQL
** client's BEGIN STATEMENT SET; form. */
static void parse_set_body(parser *p, dp_ast_stmt *s) {
  vec inserts = {0};
  bool was = p->in_stmt_set;
  p->in_stmt_set = true;
  while (!at_kw(p, DP_KW_END)) {
    if (accept(p, DP_TK_SEMI)) continue;
    if (!at_kw(p, DP_KW_INSERT))
      fail_expected(p, "INSERT or END in the statement set",
                    ": a statement set holds only INSERT statements");
    const dp_token *is = cur(p);
    dp_ast_stmt *ins = parse_insert(p);
    ins->span = span_from(p, is);
    *(dp_ast_stmt **)vec_push(p, &inserts, sizeof(dp_ast_stmt *)) = ins;
    if (!at_kw(p, DP_KW_END)) expect(p, DP_TK_SEMI, "';' after the INSERT in the statement set");
  }
  if (inserts.n == 0)
    fail_at(p, DIPPER_SYNTAX, cur(p)->span,
            "a statement set needs at least one INSERT between BEGIN and END");
  next(p); /* END */
  p->in_stmt_set = was;
  s->u.statement_set.n = inserts.n;
  s->u.statement_set.inserts = inserts.items;
}

static dp_ast_stmt *parse_statement(parser *p);

/* The statement forms that may follow EXECUTE, BEGIN or EXPLAIN and start a
** statement set. */
static dp_ast_stmt *parse_statement_set(parser *p, const dp_token *start, bool client_form) {
  dp_ast_stmt *s = new_stmt(p, DP_AS_STATEMENT_SET, start);
  expect_kw(p, DP_KW_STATEMENT, "STATEMENT SET");
  expect_kw(p, DP_KW_SET, "SET after STATEMENT");
  if (client_form) expect(p, DP_TK_SEMI, "';' after BEGIN STATEMENT SET");
  else expect_kw(p, DP_KW_BEGIN, "BEGIN after STATEMENT SET");
  parse_set_body(p, s);
  return s;
}

static dp_ast_stmt *parse_explain(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_stmt *s = new_stmt(p, DP_AS_EXPLAIN, start);
  if (accept_kw(p, DP_KW_PLAN)) {
    expect_kw(p, DP_KW_FOR, "FOR after EXPLAIN PLAN");
    s->u.explain.plan_only = true;
  }
  for (;;) {
    const dp_token *t = cur(p);
    if (accept_kw(p, DP_KW_CHANGELOG_MODE)) {
      s->u.explain.changelog_mode = true;
    } else if (is_word(p, t, "ESTIMATED_COST") || is_word(p, t, "JSON_EXECUTION_PLAN") ||
               is_word(p, t, "PLAN_ADVICE")) {
      fail_at(p, DIPPER_UNSUPPORTED, t->span,
              "EXPLAIN %.*s is not supported: dipper explains the plan, with CHANGELOG_MODE "
              "for the changelog of each node",
              (int)t->span.len, p->text + t->span.off);
    } else {
      break;
    }
    if (!accept(p, DP_TK_COMMA)) break;
  }
  const dp_token *es = cur(p);
  dp_ast_stmt *inner;
  if (at_kw(p, DP_KW_EXECUTE) && is_kw(peek(p, 1), DP_KW_STATEMENT)) {
    next(p);
    inner = parse_statement_set(p, es, false);
  } else if (at_kw(p, DP_KW_STATEMENT)) {
    inner = parse_statement_set(p, es, false);
  } else if (at_kw(p, DP_KW_INSERT) || at_kw(p, DP_KW_SELECT) || at_kw(p, DP_KW_WITH) ||
             at_kw(p, DP_KW_VALUES) || at(p, DP_TK_LPAREN)) {
    inner = parse_statement(p);
  } else {
    fail_expected(p, "a query, an INSERT or a statement set after EXPLAIN", NULL);
  }
  inner->span = span_from(p, es);
  s->u.explain.stmt = inner;
  return s;
}

static dp_ast_stmt *parse_statement(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_stmt *s;
  switch ((dp_keyword)(start->kind == DP_TK_IDENT ? start->kw : DP_KW_NONE)) {
    case DP_KW_CREATE: s = parse_create(p); break;
    case DP_KW_DROP: s = parse_drop(p); break;
    case DP_KW_SET: s = parse_set(p, false); break;
    case DP_KW_RESET: s = parse_set(p, true); break;
    case DP_KW_INSERT: s = parse_insert(p); break;
    case DP_KW_EXPLAIN: s = parse_explain(p); break;
    case DP_KW_EXECUTE:
      next(p);
      if (at_kw(p, DP_KW_STATEMENT)) s = parse_statement_set(p, start, false);
      else if (at_kw(p, DP_KW_INSERT)) s = parse_insert(p);
      else fail_expected(p, "STATEMENT SET or INSERT after EXECUTE", NULL);
      break;
    case DP_KW_BEGIN:
      next(p);
      s = parse_statement_set(p, start, true);
      break;
    case DP_KW_USE:
      next(p);
      s = new_stmt(p, DP_AS_USE, start);
      if (at_kw(p, DP_KW_CATALOG) && !ends_statement(peek(p, 1))) next(p);
      s->u.use = parse_name(p, "a catalog or database name after USE");
      break;
    case DP_KW_SHOW:
      next(p);
      s = new_stmt(p, DP_AS_SHOW, start);
      if (accept_kw(p, DP_KW_TABLES)) s->u.show.what = 'T';
      else if (accept_kw(p, DP_KW_VIEWS)) s->u.show.what = 'V';
      else if (accept_kw(p, DP_KW_FUNCTIONS)) s->u.show.what = 'F';
      else fail_expected(p, "TABLES, VIEWS or FUNCTIONS after SHOW", NULL);
      break;
    case DP_KW_DESCRIBE:
    case DP_KW_DESC:
      next(p);
      s = new_stmt(p, DP_AS_DESCRIBE, start);
      accept_word(p, "EXTENDED");
      s->u.describe = parse_name(p, "a table or view name after DESCRIBE");
      break;
    case DP_KW_SELECT:
    case DP_KW_WITH:
    case DP_KW_VALUES:
      s = new_stmt(p, DP_AS_QUERY, start);
      s->u.query = parse_query(p);
      break;
    default:
      if (at(p, DP_TK_LPAREN)) {
        s = new_stmt(p, DP_AS_QUERY, start);
        s->u.query = parse_query(p);
        break;
      }
      if (at_kw(p, DP_KW_END))
        fail_at(p, DIPPER_SYNTAX, start->span,
                "END without a statement set: write EXECUTE STATEMENT SET BEGIN ... END");
      fail_expected(p, "a statement (SELECT, INSERT, CREATE, DROP, SET, EXPLAIN, ...)", NULL);
  }
  s->span = span_from(p, start);
  return s;
}

/* ------------------------------------------------------------ the driver */

/* Skip the rest of a broken statement: to the next ';', or past the END of
** the statement set it was in. */
static void recover(parser *p) {
  bool in_set = p->in_stmt_set;
  p->in_stmt_set = false;
  p->depth = 0;
  while (!at(p, DP_TK_EOF)) {
    if (in_set) {
      if (at_kw(p, DP_KW_END) && ends_statement(peek(p, 1))) {
        next(p);
        in_set = false;
      } else {
        next(p);
      }
      continue;
    }
    if (at(p, DP_TK_SEMI)) break;
    next(p);
  }
}

/* One statement with its terminator, appended to `stmts`; false after an
** error (recorded).  The setjmp lives here so that nothing of the caller's
** frame changes between it and a longjmp. */
static bool parse_one(parser *p, vec *stmts) {
  jmp_buf jb;
  p->bail = &jb;
  if (setjmp(jb) != 0) return false;
  dp_ast_stmt *s = parse_statement(p);
  if (!ends_statement(cur(p))) {
    const dp_token *t = cur(p);
    bool starts_statement =
        t->kind == DP_TK_IDENT &&
        (t->kw == DP_KW_SELECT || t->kw == DP_KW_INSERT || t->kw == DP_KW_CREATE ||
         t->kw == DP_KW_DROP || t->kw == DP_KW_SET || t->kw == DP_KW_EXPLAIN ||
         t->kw == DP_KW_EXECUTE || t->kw == DP_KW_WITH || t->kw == DP_KW_RESET);
    fail_expected(p, "';' or the end of the statement",
                  starts_statement ? ": is a ';' missing before it?" : NULL);
  }
  *(dp_ast_stmt **)vec_push(p, stmts, sizeof(dp_ast_stmt *)) = s;
  return true;
}

static bool tokenize(parser *p, const char *text, size_t len) {
  dp_lexer lx;
  dp_lex_init(&lx, text, len);
  vec v = {0};
  size_t guess = len / 4 + 16;
  v.items = dp_arena_grow(p->a, NULL, 0, guess, sizeof(dp_token));
  if (!v.items) return false;
  v.cap = (int)(guess > (size_t)INT32_MAX ? INT32_MAX : guess);
  for (;;) {
    if (v.n == v.cap) {
      if (v.cap > INT32_MAX / 2) return false;
      void *grown = dp_arena_grow(p->a, v.items, (size_t)v.cap, (size_t)v.cap * 2, sizeof(dp_token));
      if (!grown) return false;
      v.items = grown;
      v.cap *= 2;
    }
    dp_token t = dp_lex_next(&lx);
    ((dp_token *)v.items)[v.n++] = t;
    if (t.kind == DP_TK_EOF) break;
  }
  p->toks = v.items;
  p->ntoks = v.n;
  return true;
}

static void parser_init(parser *p, dp_arena *a, dp_diags *d, const char *text) {
  memset(p, 0, sizeof *p);
  p->a = a;
  p->d = d;
  p->text = text;
  p->first_code = DIPPER_OK;
}

int dp_parse(dp_arena *a, dp_diags *d, const char *text, size_t len, dp_ast_script **out) {
  *out = NULL;
  if (len > UINT32_MAX - 1) {
    dp_span none = {0, 0, 0, 0};
    return dp_error(d, DIPPER_LIMIT, none, "the SQL text is larger than 4 GiB");
  }
  parser p;
  parser_init(&p, a, d, text ? text : "");
  if (!tokenize(&p, p.text, text ? len : 0)) {
    dp_span none = {0, 0, 0, 0};
    return dp_error(d, DIPPER_NOMEM, none, "out of memory while reading the SQL text");
  }
  dp_ast_script *script = dp_arena_calloc(a, 1, sizeof *script);
  if (!script) {
    dp_span none = {0, 0, 0, 0};
    return dp_error(d, DIPPER_NOMEM, none, "out of memory while parsing");
  }
  vec stmts = {0};
  for (;;) {
    while (accept(&p, DP_TK_SEMI)) {}
    if (at(&p, DP_TK_EOF) || p.nerrors >= DP_PARSE_MAX_ERRORS) break;
    if (!parse_one(&p, &stmts)) recover(&p);
  }
  script->n = stmts.n;
  script->stmts = stmts.items;
  *out = script;
  return p.first_code;
}

const dp_type *dp_parse_type(dp_arena *a, dp_diags *d, const char *text, size_t len) {
  parser p;
  parser_init(&p, a, d, text ? text : "");
  if (len > UINT32_MAX - 1 || !tokenize(&p, p.text, text ? len : 0)) {
    dp_span none = {0, 0, 0, 0};
    dp_error(d, DIPPER_NOMEM, none, "out of memory while reading the type");
    return NULL;
  }
  jmp_buf jb;
  p.bail = &jb;
  if (setjmp(jb) != 0) return NULL;
  const dp_type *t = parse_type(&p);
  if (!at(&p, DP_TK_EOF)) fail_expected(&p, "the end of the type", NULL);
  return t;
}
