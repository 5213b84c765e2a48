/*
** lexer.h — SQL text to tokens.
**
** The lexer cuts the text into tokens with exact spans (byte offset, length,
** 1-based line and byte column).  It allocates nothing: token text is read
** back from the span, and the parser unescapes strings and quoted names into
** its arena only when it keeps them.  A malformed token (unterminated string,
** quoted name or comment, stray character) becomes a DP_TK_ERROR token that
** carries its message; the parser reports it when it reaches it, so that the
** diagnostics of a script come out in text order.
**
** Keywords are case-insensitive and looked up in a sorted table.  Most of them
** are non-reserved: the parser accepts them as names where that is not
** ambiguous (a column called `timestamp`, `window`, `offset` or `value`).
**
** Owns: the token kinds and the keyword table.  Does not own: the grammar.
*/
#ifndef DP_LEXER_H
#define DP_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/diag.h"

typedef enum dp_tok_kind {
  DP_TK_EOF,
  DP_TK_ERROR,    /* malformed input: `err` says what and what to write */
  DP_TK_IDENT,    /* plain name or keyword (kw != DP_KW_NONE for keywords) */
  DP_TK_QIDENT,   /* `backtick` or "double-quoted" name; never a keyword */
  DP_TK_INTEGER,  /* 42 */
  DP_TK_DECIMAL,  /* 4.2, .5, 4. */
  DP_TK_FLOAT,    /* 4.2e3 */
  DP_TK_STRING,   /* 'text' with '' for a quote */
  DP_TK_BINARY,   /* X'0AFF' */
  DP_TK_LPAREN, DP_TK_RPAREN, DP_TK_LBRACKET, DP_TK_RBRACKET,
  DP_TK_COMMA, DP_TK_DOT, DP_TK_SEMI, DP_TK_COLON,
  DP_TK_PLUS, DP_TK_MINUS, DP_TK_STAR, DP_TK_SLASH, DP_TK_PERCENT,
  DP_TK_EQ,       /* = */
  DP_TK_EQEQ,     /* == (not SQL; lexed so the parser can say so) */
  DP_TK_NE,       /* <> or != */
  DP_TK_LT, DP_TK_LE, DP_TK_GT, DP_TK_GE,
  DP_TK_NSEQ,     /* <=> (Spark's null-safe equality) */
  DP_TK_CONCAT,   /* || */
  DP_TK_DCOLON,   /* :: */
  DP_TK_FATARROW, /* => */
  DP_TK_ARROW,    /* -> */
  DP_TK_QMARK, DP_TK_CARET, DP_TK_AMP, DP_TK_PIPE, DP_TK_TILDE,
  DP_TK_COUNT_
} dp_tok_kind;

/* Keywords, sorted by spelling (the lookup is a binary search; the lexer
** test checks the order).  R = reserved: never a bare name, write it in
** backticks to use it as one.  N = non-reserved. */
#define DP_KEYWORDS(X)                                                                 \
  X(ALL, R) X(AND, R) X(ANTI, N) X(ARRAY, N) X(AS, R) X(ASC, N) X(ASOF, N)               \
  X(BEGIN, N)                                                                            \
  X(BETWEEN, R) X(BY, R) X(CASE, R) X(CAST, R) X(CATALOG, N) X(CHANGELOG_MODE, N)        \
  X(COMMENT, N) X(CONSTRAINT, N) X(CREATE, R) X(CROSS, R) X(CURRENT, N) X(DESC, N)       \
  X(DESCRIBE, N) X(DESCRIPTOR, N) X(DISTINCT, R) X(DROP, R) X(ELSE, R) X(END, R)         \
  X(ENFORCED, N) X(ESCAPE, N) X(EXCEPT, R) X(EXECUTE, N) X(EXISTS, R) X(EXPLAIN, N)      \
  X(EXTRACT, N) X(FALSE, R) X(FETCH, R) X(FILTER, N) X(FIRST, N) X(FOLLOWING, N)         \
  X(FOR, R) X(FROM, R) X(FULL, R) X(FUNCTION, N) X(FUNCTIONS, N) X(GROUP, R)             \
  X(HAVING, R) X(IF, N) X(IN, R) X(INNER, R) X(INSERT, R) X(INTERSECT, R)                \
  X(INTERVAL, R) X(INTO, R) X(IS, R) X(JOIN, R) X(KEY, N) X(LANGUAGE, N) X(LAST, N)      \
  X(LATERAL, R) X(LEFT, R) X(LIKE, R) X(LIMIT, R) X(LOCAL, N) X(MAP, N)                  \
  X(MATCH_CONDITION, N) X(MATCH_RECOGNIZE, N) X(METADATA, N) X(NATURAL, R) X(NEXT, N)    \
  X(NOT, R)                                                                              \
  X(NULL, R) X(NULLS, N) X(OF, N) X(OFFSET, N) X(ON, R) X(ONLY, N) X(OR, R) X(ORDER, R)  \
  X(ORDINALITY, N) X(OUTER, R) X(OVER, N) X(OVERWRITE, N) X(PARTITION, N)                \
  X(PARTITIONED, N) X(PLAN, N) X(PRECEDING, N) X(PRIMARY, N) X(QUALIFY, R) X(RANGE, N)   \
  X(REPLACE, N) X(RESET, N) X(RIGHT, R) X(RLIKE, N) X(ROW, N) X(ROWS, N) X(SELECT, R)    \
  X(SEMI, N) X(SET, N) X(SHOW, N) X(SIMILAR, N) X(STATEMENT, N) X(SYMMETRIC, N)          \
  X(SYSTEM, N) X(SYSTEM_TIME, N) X(TABLE, R) X(TABLES, N) X(TEMPORARY, N) X(THEN, R)     \
  X(TO, N) X(TOLERANCE, N) X(TRUE, R) X(TRY_CAST, N) X(UNBOUNDED, N) X(UNION, R)         \
  X(UNKNOWN, N)                                                                          \
  X(UNNEST, N) X(USE, N) X(USING, R) X(VALUES, R) X(VIEW, N) X(VIEWS, N) X(VIRTUAL, N)   \
  X(WATERMARK, N) X(WHEN, R) X(WHERE, R) X(WINDOW, N) X(WITH, R)

#define DP_KW_ENUM_(name, res) DP_KW_##name,
typedef enum dp_keyword { DP_KW_NONE = 0, DP_KEYWORDS(DP_KW_ENUM_) DP_KW_COUNT_ } dp_keyword;
#undef DP_KW_ENUM_

typedef struct dp_token {
  uint8_t kind;       /* dp_tok_kind */
  uint16_t kw;        /* dp_keyword for DP_TK_IDENT, else DP_KW_NONE */
  bool space_before;  /* whitespace or a comment precedes it (SET key runs) */
  dp_span span;
  const char *err;    /* DP_TK_ERROR: the message (a static string) */
} dp_token;

typedef struct dp_lexer {
  const char *text;
  size_t len, pos;
  uint32_t line;
  size_t line_start;  /* offset of the first byte of the current line */
} dp_lexer;

void dp_lex_init(dp_lexer *lx, const char *text, size_t len);

/* The next token; DP_TK_EOF at the end (and again after it). */
dp_token dp_lex_next(dp_lexer *lx);

/* The keyword spelled by s[0..n) in any case, or DP_KW_NONE. */
dp_keyword dp_lex_keyword(const char *s, size_t n);
/* Upper-case spelling of a keyword ("SELECT"); "" for DP_KW_NONE. */
const char *dp_lex_keyword_name(dp_keyword kw);
/* Reserved keywords are never bare names. */
bool dp_lex_keyword_reserved(dp_keyword kw);

/* How a token kind is written, for messages: "')'", "a string", "end of input". */
const char *dp_lex_kind_name(dp_tok_kind kind);

#endif /* DP_LEXER_H */
