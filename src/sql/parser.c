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
** The grammar is split by what it parses (the list is in parser_int.h);
** this file holds the parser's state, its errors, names, and the driver.
**
** Owns: the grammar.  Does not own: tokens (lexer.c), meaning (plan/binder.c).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include "core/grow.h"
#include "sql/parser_int.h"

/* ---------------------------------------------------------------- basics */

static _Noreturn void bail_out(parser *p, int code) {
  if (p->first_code == DIPPER_OK) p->first_code = code;
  p->nerrors++;
  longjmp(*p->bail, 1);
}

_Noreturn void dp_ps_out_of_memory(parser *p) {
  dp_span none = {0, 0, 0, 0};
  dp_error(p->d, DIPPER_NOMEM, none, "out of memory while parsing");
  bail_out(p, DIPPER_NOMEM);
}

void *dp_ps_alloc(parser *p, size_t n) {
  void *m = dp_arena_calloc(p->a, 1, n);
  if (!m) dp_ps_out_of_memory(p);
  return m;
}

char *dp_ps_copy(parser *p, const char *s, size_t n) {
  char *c = dp_arena_strndup(p->a, s, n);
  if (!c) dp_ps_out_of_memory(p);
  return c;
}

/* printf into the arena; never NULL (out of memory unwinds). */
char *dp_ps_fmt(parser *p, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  char *s = dp_arena_vprintf(p->a, format, ap);
  va_end(ap);
  if (!s) dp_ps_out_of_memory(p);
  return s;
}

void *dp_ps_vec_push(parser *p, vec *v, size_t elem) {
  if (dp_arena_grow_i(p->a, &v->items, &v->cap, v->n + 1, elem, 4)) dp_ps_out_of_memory(p);
  void *slot = (char *)v->items + (size_t)v->n * elem;
  memset(slot, 0, elem);
  v->n++;
  return slot;
}

void dp_ps_push_expr(parser *p, vec *v, dp_ast_expr *e) {
  *(dp_ast_expr **)dp_ps_vec_push(p, v, sizeof(dp_ast_expr *)) = e;
}


/* Does the unquoted name token spell `word` (upper case) in any case? */
bool dp_ps_is_word(const parser *p, const dp_token *t, const char *word) {
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

bool dp_ps_accept_word(parser *p, const char *word) {
  if (!dp_ps_is_word(p, cur(p), word)) return false;
  next(p);
  return true;
}

/* How a token reads in a message: "keyword FROM", "name foo", "')'". */
const char *dp_ps_describe(parser *p, const dp_token *t) {
  const char *s = p->text + t->span.off;
  int n = t->span.len > 40 ? 40 : (int)t->span.len;
  const char *more = t->span.len > 40 ? "..." : "";
  const char *r = NULL;
  switch ((dp_tok_kind)t->kind) {
    case DP_TK_IDENT:
      if (t->kw) r = dp_ps_fmt(p, "keyword %s", dp_lex_keyword_name(t->kw));
      else r = dp_ps_fmt(p, "name %.*s%s", n, s, more);
      break;
    case DP_TK_QIDENT: r = dp_ps_fmt(p, "quoted name %.*s%s", n, s, more); break;
    case DP_TK_INTEGER:
    case DP_TK_DECIMAL:
    case DP_TK_FLOAT: r = dp_ps_fmt(p, "number %.*s%s", n, s, more); break;
    case DP_TK_STRING:
    case DP_TK_BINARY: r = dp_ps_fmt(p, "string %.*s%s", n, s, more); break;
    default: return dp_lex_kind_name((dp_tok_kind)t->kind);
  }
  return r;
}

_Noreturn void dp_ps_fail_at(parser *p, int code, dp_span span, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  char *msg = dp_arena_vprintf(p->a, format, ap);
  va_end(ap);
  dp_error(p->d, code, span, "%s", msg ? msg : "syntax error");
  bail_out(p, code);
}

/* A malformed token's own message; a stray character is quoted in it. */
_Noreturn void dp_ps_fail_lex(parser *p, const dp_token *t) {
  const char *rest = t->err;
  if (strncmp(rest, "unexpected character", 20) == 0 && t->span.len > 0) {
    const char *c = p->text + t->span.off;
    unsigned char b = (unsigned char)c[0];
    if (b >= 0x20 && b < 0x7f)
      dp_ps_fail_at(p, DIPPER_SYNTAX, t->span, "unexpected character '%c'%s", c[0], rest + 20);
    dp_ps_fail_at(p, DIPPER_SYNTAX, t->span, "unexpected byte 0x%02X%s", b, rest + 20);
  }
  dp_ps_fail_at(p, DIPPER_SYNTAX, t->span, "%s", rest);
}

/* "expected <what>, found <token>[<hint>]".  A malformed token reports its
** own message instead: that is the real problem. */
_Noreturn void dp_ps_fail_expected(parser *p, const char *what, const char *hint) {
  const dp_token *t = cur(p);
  if (t->kind == DP_TK_ERROR) dp_ps_fail_lex(p, t);
  if (t->kind == DP_TK_EQEQ)
    dp_ps_fail_at(p, DIPPER_SYNTAX, t->span, "expected %s, found '==': SQL compares with a single '='",
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
  dp_ps_fail_at(p, DIPPER_SYNTAX, where, "expected %s, found %s%s", what, dp_ps_describe(p, t),
                hint ? hint : "");
}

void dp_ps_expect(parser *p, dp_tok_kind kind, const char *what) {
  if (!accept(p, kind)) dp_ps_fail_expected(p, what, NULL);
}

void dp_ps_expect_kw(parser *p, dp_keyword kw, const char *what) {
  if (!accept_kw(p, kw)) dp_ps_fail_expected(p, what, NULL);
}

void dp_ps_enter(parser *p) {
  if (++p->depth > DP_PARSE_MAX_DEPTH)
    dp_ps_fail_at(p, DIPPER_LIMIT, cur(p)->span,
                  "nested too deeply (more than %d levels of parentheses, subqueries or types): "
                  "split the statement with views or WITH",
                  DP_PARSE_MAX_DEPTH);
}

/* ----------------------------------------------------------- text values */

/* The contents of a quoted token without its quotes, doubled quotes halved. */
char *dp_ps_unquote(parser *p, const dp_token *t) {
  const char *s = p->text + t->span.off;
  size_t n = t->span.len;
  size_t skip = t->kind == DP_TK_BINARY ? 2 : 1; /* X' */
  if (n < skip + 1) return dp_ps_copy(p, "", 0);
  char q = s[n - 1];
  const char *body = s + skip;
  size_t blen = n - skip - 1;
  char *out = dp_ps_alloc(p, blen + 1);
  size_t o = 0;
  for (size_t i = 0; i < blen; i++) {
    out[o++] = body[i];
    if (body[i] == q && i + 1 < blen && body[i + 1] == q) i++;
  }
  out[o] = 0;
  return out;
}

char *dp_ps_token_text(parser *p, const dp_token *t) {
  return dp_ps_copy(p, p->text + t->span.off, t->span.len);
}

/* A name token usable as a name here: any plain or quoted name, or a keyword
** that is not reserved.  `implicit_alias` also refuses the words that start
** the next clause, since `FROM t window` means a WINDOW clause. */
bool dp_ps_is_name_token(const dp_token *t, bool implicit_alias) {
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
      case DP_KW_RLIKE: case DP_KW_TO: case DP_KW_ASOF: case DP_KW_MATCH_CONDITION:
        return false;
      default: return true;
    }
  }
  return true;
}

dp_ast_ident dp_ps_ident_of(parser *p, const dp_token *t) {
  dp_ast_ident id;
  id.quoted = t->kind == DP_TK_QIDENT;
  id.name = id.quoted ? dp_ps_unquote(p, t) : dp_ps_token_text(p, t);
  id.span = t->span;
  return id;
}

/* A name where `what` is wanted ("a column name"). */
dp_ast_ident dp_ps_ident(parser *p, const char *what) {
  const dp_token *t = cur(p);
  if (!dp_ps_is_name_token(t, false)) {
    if (t->kind == DP_TK_IDENT && t->kw) {
      const char *kw = dp_lex_keyword_name(t->kw);
      dp_ps_fail_at(p, DIPPER_SYNTAX, t->span,
                    "expected %s, found keyword %s: %s is reserved; to use it as a name write it in "
                    "backticks, `%.*s`",
                    what, kw, kw, (int)t->span.len, p->text + t->span.off);
    }
    dp_ps_fail_expected(p, what, NULL);
  }
  dp_ast_ident id = dp_ps_ident_of(p, t);
  next(p);
  return id;
}

/* After a '.', any word is a field name, reserved or not (t.`end` and t.end). */
dp_ast_ident dp_ps_ident_after_dot(parser *p, const char *what) {
  const dp_token *t = cur(p);
  if (t->kind != DP_TK_IDENT && t->kind != DP_TK_QIDENT) dp_ps_fail_expected(p, what, NULL);
  dp_ast_ident id = dp_ps_ident_of(p, t);
  next(p);
  return id;
}

dp_ast_name dp_ps_name_of_parts(parser *p, vec *parts) {
  dp_ast_name nm;
  nm.n = parts->n;
  nm.parts = parts->items;
  dp_ast_ident *first = &nm.parts[0], *last = &nm.parts[nm.n - 1];
  nm.span = span_between(first->span, last->span.off + last->span.len);
  (void)p;
  return nm;
}

dp_ast_name dp_ps_name(parser *p, const char *what) {
  vec parts = {0};
  *(dp_ast_ident *)dp_ps_vec_push(p, &parts, sizeof(dp_ast_ident)) = dp_ps_ident(p, what);
  while (at(p, DP_TK_DOT) && peek(p, 1)->kind != DP_TK_STAR) {
    next(p);
    *(dp_ast_ident *)dp_ps_vec_push(p, &parts, sizeof(dp_ast_ident)) =
        dp_ps_ident_after_dot(p, "a name after '.'");
  }
  return dp_ps_name_of_parts(p, &parts);
}

/* '(' a, b, c ')' — a list of names, e.g. PRIMARY KEY (a, b). */
dp_ast_ident *dp_ps_ident_list(parser *p, int *n, const char *what, const char *closing) {
  vec v = {0};
  dp_ps_expect(p, DP_TK_LPAREN, dp_ps_fmt(p, "'(' to open the list of %s", what));
  do {
    *(dp_ast_ident *)dp_ps_vec_push(p, &v, sizeof(dp_ast_ident)) = dp_ps_ident(p, what);
  } while (accept(p, DP_TK_COMMA));
  dp_ps_expect(p, DP_TK_RPAREN, closing);
  *n = v.n;
  return v.items;
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
      if (at_kw(p, DP_KW_END) && dp_ps_ends_statement(peek(p, 1))) {
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
  dp_ast_stmt *s = dp_ps_statement(p);
  if (!dp_ps_ends_statement(cur(p))) {
    const dp_token *t = cur(p);
    bool starts_statement =
        t->kind == DP_TK_IDENT &&
        (t->kw == DP_KW_SELECT || t->kw == DP_KW_INSERT || t->kw == DP_KW_CREATE ||
         t->kw == DP_KW_DROP || t->kw == DP_KW_SET || t->kw == DP_KW_EXPLAIN ||
         t->kw == DP_KW_EXECUTE || t->kw == DP_KW_WITH || t->kw == DP_KW_RESET);
    dp_ps_fail_expected(p, "';' or the end of the statement",
                        starts_statement ? ": is a ';' missing before it?" : NULL);
  }
  *(dp_ast_stmt **)dp_ps_vec_push(p, stmts, sizeof(dp_ast_stmt *)) = s;
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
    if (dp_arena_grow_i(p->a, &v.items, &v.cap, v.n + 1, sizeof(dp_token), 4)) return false;
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
  const dp_type *t = dp_ps_type(&p);
  if (!at(&p, DP_TK_EOF)) dp_ps_fail_expected(&p, "the end of the type", NULL);
  return t;
}
