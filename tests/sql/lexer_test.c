/*
** lexer_test.c — tokens, spans (line:col in bytes), keywords and the
** malformed-token messages of src/sql/lexer.c.
*/
#include <stdio.h>
#include <string.h>

#include "sql/lexer.h"
#include "test.h"

/* Lex `text` into at most `cap` tokens (EOF included); returns the count. */
static int lex_all(const char *text, dp_token *out, int cap) {
  dp_lexer lx;
  dp_lex_init(&lx, text, strlen(text));
  int n = 0;
  while (n < cap) {
    out[n] = dp_lex_next(&lx);
    if (out[n++].kind == DP_TK_EOF) break;
  }
  return n;
}

/* The token kinds as one string of short codes, e.g. "id kw ( int ) eof". */
static const char *kinds(const char *text) {
  static char buf[1024];
  dp_token toks[128];
  int n = lex_all(text, toks, 128);
  buf[0] = 0;
  for (int i = 0; i < n; i++) {
    const char *k;
    switch ((dp_tok_kind)toks[i].kind) {
      case DP_TK_EOF: k = "eof"; break;
      case DP_TK_ERROR: k = "ERR"; break;
      case DP_TK_IDENT: k = toks[i].kw ? "kw" : "id"; break;
      case DP_TK_QIDENT: k = "qid"; break;
      case DP_TK_INTEGER: k = "int"; break;
      case DP_TK_DECIMAL: k = "dec"; break;
      case DP_TK_FLOAT: k = "flt"; break;
      case DP_TK_STRING: k = "str"; break;
      case DP_TK_BINARY: k = "bin"; break;
      default: k = dp_lex_kind_name((dp_tok_kind)toks[i].kind); break;
    }
    if (i) strcat(buf, " ");
    strcat(buf, k);
  }
  return buf;
}

TEST(keyword_table_is_sorted_and_round_trips) {
  for (int k = 1; k < (int)DP_KW_COUNT_; k++) {
    const char *name = dp_lex_keyword_name((dp_keyword)k);
    CHECK_EQ(dp_lex_keyword(name, strlen(name)), k);
    if (k > 1) CHECK(strcmp(dp_lex_keyword_name((dp_keyword)(k - 1)), name) < 0);
  }
  CHECK_EQ(dp_lex_keyword("select", 6), DP_KW_SELECT);
  CHECK_EQ(dp_lex_keyword("SeLeCt", 6), DP_KW_SELECT);
  CHECK_EQ(dp_lex_keyword("selec", 5), DP_KW_NONE);
  CHECK_EQ(dp_lex_keyword("selects", 7), DP_KW_NONE);
  CHECK_EQ(dp_lex_keyword("system_time", 11), DP_KW_SYSTEM_TIME);
  CHECK_EQ(dp_lex_keyword("timestamp", 9), DP_KW_NONE); /* a type word, not a keyword */
  CHECK(dp_lex_keyword_reserved(DP_KW_FROM));
  CHECK(!dp_lex_keyword_reserved(DP_KW_WINDOW));
  CHECK(!dp_lex_keyword_reserved(DP_KW_OFFSET));
  CHECK(!dp_lex_keyword_reserved(DP_KW_KEY));
  CHECK(!dp_lex_keyword_reserved(DP_KW_NONE));
  CHECK_STR(dp_lex_keyword_name(DP_KW_NONE), "");
}

TEST(token_kinds) {
  CHECK_STR(kinds("SELECT a, `b c`, \"D\" FROM t;"), "kw id ',' qid ',' qid kw id ';' eof");
  CHECK_STR(kinds("1 1.5 .5 1. 1e3 1.5E-2 2e"), "int dec dec dec flt flt ERR eof");
  CHECK_STR(kinds("'it''s' X'0aFF' x''"), "str bin bin eof");
  CHECK_STR(kinds("<> != >= <= || :: => -> <=> == ="),
            "'<>' '<>' '>=' '<=' '||' '::' '=>' '->' '<=>' '==' '=' eof");
  CHECK_STR(kinds("( ) [ ] , . ; : + - * / % ? ^ & | ~ < >"),
            "'(' ')' '[' ']' ',' '.' ';' ':' '+' '-' '*' '/' '%' '?' '^' '&' '|' '~' '<' '>' eof");
  CHECK_STR(kinds("a -- comment\n b /* block\n comment */ c"), "id id id eof");
  CHECK_STR(kinds("a--b"), "id eof");
  CHECK_STR(kinds("a-b"), "id '-' id eof");
  CHECK_STR(kinds(""), "eof");
  CHECK_STR(kinds("  \r\n\t "), "eof");
  CHECK_STR(kinds("caf\xc3\xa9 _x $"), "id id ERR eof");
  CHECK_STR(kinds("a$b"), "id eof");
}

TEST(spans_count_lines_and_byte_columns) {
  dp_token t[16];
  int n = lex_all("SELECT\r\n  ab,\n\t'x'", t, 16);
  CHECK_EQ(n, 5);
  CHECK_EQ(t[0].span.off, 0);
  CHECK_EQ(t[0].span.len, 6);
  CHECK_EQ(t[0].span.line, 1);
  CHECK_EQ(t[0].span.col, 1);
  CHECK_EQ(t[1].span.off, 10);
  CHECK_EQ(t[1].span.len, 2);
  CHECK_EQ(t[1].span.line, 2);
  CHECK_EQ(t[1].span.col, 3);
  CHECK_EQ(t[2].span.line, 2);
  CHECK_EQ(t[2].span.col, 5);
  CHECK_EQ(t[3].span.line, 3);
  CHECK_EQ(t[3].span.col, 2); /* the tab is one byte */
  CHECK_EQ(t[3].span.len, 3);
  CHECK_EQ(t[4].kind, DP_TK_EOF);
  CHECK_EQ(t[4].span.line, 3);
  CHECK_EQ(t[4].span.col, 5);
  /* Columns after a multi-line comment and string count from the last newline. */
  n = lex_all("/* a\nbc */ x 'p\nq' y", t, 16);
  CHECK_EQ(t[0].span.line, 2);
  CHECK_EQ(t[0].span.col, 7);
  CHECK_EQ(t[1].span.line, 2);
  CHECK_EQ(t[1].span.col, 9);
  CHECK_EQ(t[2].span.line, 3);
  CHECK_EQ(t[2].span.col, 4);
  CHECK_EQ(n, 4);
}

TEST(space_before_marks_glued_tokens) {
  dp_token t[16];
  lex_all("execution.runtime-mode = x", t, 16);
  CHECK(!t[0].space_before);
  CHECK(!t[1].space_before);
  CHECK(!t[2].space_before);
  CHECK(!t[3].space_before);
  CHECK(!t[4].space_before);
  CHECK(t[5].space_before); /* = */
  CHECK(t[6].space_before);
}

TEST(keywords_keep_case_in_spans) {
  dp_token t[8];
  lex_all("sElEcT Window", t, 8);
  CHECK_EQ(t[0].kw, DP_KW_SELECT);
  CHECK_EQ(t[1].kw, DP_KW_WINDOW);
  CHECK_EQ(t[1].span.off, 7);
  /* Quoted names are never keywords. */
  lex_all("`select` \"from\"", t, 8);
  CHECK_EQ(t[0].kind, DP_TK_QIDENT);
  CHECK_EQ(t[0].kw, DP_KW_NONE);
  CHECK_EQ(t[1].kind, DP_TK_QIDENT);
  CHECK_EQ(t[1].kw, DP_KW_NONE);
}

TEST(malformed_tokens_point_at_their_start) {
  dp_token t[8];
  lex_all("SELECT 'abc\n def", t, 8);
  CHECK_EQ(t[1].kind, DP_TK_ERROR);
  CHECK_EQ(t[1].span.line, 1);
  CHECK_EQ(t[1].span.col, 8);
  CHECK_EQ(t[1].span.len, 1);
  CHECK_CONTAINS(t[1].err, "unterminated string");
  CHECK_EQ(t[2].kind, DP_TK_EOF);

  lex_all("a /* never closed", t, 8);
  CHECK_EQ(t[1].kind, DP_TK_ERROR);
  CHECK_EQ(t[1].span.col, 3);
  CHECK_EQ(t[1].span.len, 2);
  CHECK_CONTAINS(t[1].err, "'*/'");

  lex_all("x `abc", t, 8);
  CHECK_EQ(t[1].kind, DP_TK_ERROR);
  CHECK_CONTAINS(t[1].err, "backtick");
  CHECK_EQ(t[1].span.col, 3);

  lex_all("x \"abc", t, 8);
  CHECK_EQ(t[1].kind, DP_TK_ERROR);
  CHECK_CONTAINS(t[1].err, "double quote");

  lex_all("X'0G'", t, 8);
  CHECK_EQ(t[0].kind, DP_TK_ERROR);
  CHECK_CONTAINS(t[0].err, "hexadecimal");

  lex_all("X'00", t, 8);
  CHECK_EQ(t[0].kind, DP_TK_ERROR);
  CHECK_CONTAINS(t[0].err, "unterminated binary");

  lex_all("``", t, 8);
  CHECK_EQ(t[0].kind, DP_TK_ERROR);
  CHECK_CONTAINS(t[0].err, "empty quoted name");

  lex_all("a ! b", t, 8);
  CHECK_EQ(t[1].kind, DP_TK_ERROR);
  CHECK_CONTAINS(t[1].err, "NOT");
  CHECK_EQ(t[2].kind, DP_TK_IDENT); /* lexing goes on after a stray character */

  lex_all("10s", t, 8);
  CHECK_EQ(t[0].kind, DP_TK_ERROR);
  CHECK_EQ(t[0].span.len, 3);
  CHECK_CONTAINS(t[0].err, "space");

  lex_all("#", t, 8);
  CHECK_EQ(t[0].kind, DP_TK_ERROR);
  CHECK_CONTAINS(t[0].err, "unexpected character");
}

TEST(eof_repeats_and_text_need_not_be_terminated) {
  dp_lexer lx;
  const char text[] = {'a', 'b', '\''}; /* no NUL: the quote must not read past it */
  dp_lex_init(&lx, text, 2);
  dp_token t = dp_lex_next(&lx);
  CHECK_EQ(t.kind, DP_TK_IDENT);
  CHECK_EQ(t.span.len, 2);
  CHECK_EQ(dp_lex_next(&lx).kind, DP_TK_EOF);
  CHECK_EQ(dp_lex_next(&lx).kind, DP_TK_EOF);
  dp_lex_init(&lx, text, 3);
  dp_lex_next(&lx);
  t = dp_lex_next(&lx);
  CHECK_EQ(t.kind, DP_TK_ERROR);
}

int main(void) { return RUN_TESTS(); }
