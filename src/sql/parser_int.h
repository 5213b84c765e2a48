/*
** parser_int.h — private interface between the parser's files (sql/).
**
**   parser.c      state, allocation, errors, names; the driver (dp_parse)
**   parse_type.c  data types
**   parse_expr.c  expressions, ORDER BY items, OVER windows
**   parse_query.c queries (SELECT, VALUES, set operations, LIMIT) and FROM
**   parse_stmt.c  statements (CREATE, DROP, SET, INSERT, EXPLAIN, sets)
**
** Functions shared between the files carry the dp_ps_ prefix; the token
** cursor (cur, peek, next, at, accept, ...) is static inline here, since
** nearly every line of the grammar calls it.  Errors unwind with longjmp
** (parser.c): no function here returns an error.
*/
#ifndef DP_PARSER_INT_H
#define DP_PARSER_INT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/compiler.h"
#include "sql/lexer.h"
#include "sql/parser.h"

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

/* Binding strength of the binary operators, weakest first. */
enum {
  PREC_OR = 1, PREC_AND, PREC_NOT, PREC_CMP, PREC_BITOR, PREC_BITXOR, PREC_BITAND,
  PREC_ADD, PREC_MUL,
};

/* ---- parse_hint.c ---- */
/* Read the hints between the SELECT keyword and the current token into s. */
void dp_ps_select_hints(parser *p, const dp_token *select_tok, dp_ast_select *s);

/* ---- parser.c ---- */
_Noreturn void dp_ps_out_of_memory(parser *p);
void *dp_ps_alloc(parser *p, size_t n);
char *dp_ps_copy(parser *p, const char *s, size_t n);
char *dp_ps_fmt(parser *p, const char *format, ...)
    DP_PRINTF(2, 3)
    ;
void *dp_ps_vec_push(parser *p, vec *v, size_t elem);
void dp_ps_push_expr(parser *p, vec *v, dp_ast_expr *e);
bool dp_ps_is_word(const parser *p, const dp_token *t, const char *word);
bool dp_ps_accept_word(parser *p, const char *word);
const char *dp_ps_describe(parser *p, const dp_token *t);
_Noreturn void dp_ps_fail_at(parser *p, int code, dp_span span, const char *format, ...)
    DP_PRINTF(4, 5)
    ;
_Noreturn void dp_ps_fail_lex(parser *p, const dp_token *t);
_Noreturn void dp_ps_fail_expected(parser *p, const char *what, const char *hint);
void dp_ps_expect(parser *p, dp_tok_kind kind, const char *what);
void dp_ps_expect_kw(parser *p, dp_keyword kw, const char *what);
void dp_ps_enter(parser *p);
char *dp_ps_unquote(parser *p, const dp_token *t);
char *dp_ps_token_text(parser *p, const dp_token *t);
bool dp_ps_is_name_token(const dp_token *t, bool implicit_alias);
dp_ast_ident dp_ps_ident_of(parser *p, const dp_token *t);
dp_ast_ident dp_ps_ident(parser *p, const char *what);
dp_ast_ident dp_ps_ident_after_dot(parser *p, const char *what);
dp_ast_name dp_ps_name_of_parts(parser *p, vec *parts);
dp_ast_name dp_ps_name(parser *p, const char *what);
dp_ast_ident *dp_ps_ident_list(parser *p, int *n, const char *what, const char *closing);

/* ---- parse_type.c ---- */
int dp_ps_type_param(parser *p, const char *what, int lo, int hi, const char *type);
const dp_type *dp_ps_type(parser *p);

/* ---- parse_expr.c ---- */
dp_time_unit dp_ps_unit_of(const parser *p, const dp_token *t, bool extract);
void dp_ps_expr_list(parser *p, vec *v, dp_tok_kind close, const char *closing);
bool dp_ps_starts_query(const dp_token *t);
dp_ast_expr *dp_ps_call(parser *p, dp_ast_name name, const dp_token *start);
dp_ast_expr *dp_ps_binary(parser *p, int min);
dp_ast_expr *dp_ps_expr(parser *p);
void dp_ps_order_list(parser *p, int *n, dp_ast_order **items);
dp_ast_window *dp_ps_window_spec(parser *p);

/* ---- parse_query.c ---- */
dp_ast_query *dp_ps_query(parser *p);
bool dp_ps_paren_starts_query(const parser *p);

/* ---- parse_stmt.c ---- */
bool dp_ps_ends_statement(const dp_token *t);
dp_ast_stmt *dp_ps_insert(parser *p);
dp_ast_stmt *dp_ps_statement(parser *p);

/* ---- the token cursor ---- */

static inline const dp_token *cur(const parser *p) { return &p->toks[p->pos]; }

static inline const dp_token *peek(const parser *p, int k) {
  int i = p->pos + k;
  return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}

static inline void next(parser *p) {
  const dp_token *t = cur(p);
  if (t->kind == DP_TK_EOF) return;
  p->prev_end = t->span.off + t->span.len;
  p->pos++;
}

static inline bool is_kw(const dp_token *t, dp_keyword kw) {
  return t->kind == DP_TK_IDENT && t->kw == kw;
}

static inline bool at(const parser *p, dp_tok_kind kind) { return cur(p)->kind == kind; }

static inline bool at_kw(const parser *p, dp_keyword kw) { return is_kw(cur(p), kw); }

static inline bool accept(parser *p, dp_tok_kind kind) {
  if (!at(p, kind)) return false;
  next(p);
  return true;
}

static inline bool accept_kw(parser *p, dp_keyword kw) {
  if (!at_kw(p, kw)) return false;
  next(p);
  return true;
}

static inline dp_span span_from(const parser *p, const dp_token *start) {
  dp_span s = start->span;
  s.len = p->prev_end > s.off ? p->prev_end - s.off : 0;
  return s;
}

static inline dp_span span_between(dp_span a, uint32_t end) {
  a.len = end > a.off ? end - a.off : 0;
  return a;
}

static inline void leave(parser *p) { p->depth--; }

#endif
