/*
** lexer.c — the SQL tokenizer (see lexer.h).
**
** One pass over bytes, no allocation.  Line and column are counted in bytes;
** a line ends at "\n" (so "\r\n" is one break), as the diagnostic renderer
** counts them.  Bytes >= 0x80 are taken as parts
** of names so that UTF-8 names work without decoding.
*/
#include "sql/lexer.h"

#include <string.h>

#define DP_KW_ROW_(name, res) {#name, res##_RESERVED},
#define R_RESERVED true
#define N_RESERVED false
static const struct {
  const char *name;
  bool reserved;
} keyword_table[] = {{"", false}, DP_KEYWORDS(DP_KW_ROW_)};
#undef DP_KW_ROW_
#undef R_RESERVED
#undef N_RESERVED

static unsigned char upper(unsigned char c) {
  return (c >= 'a' && c <= 'z') ? (unsigned char)(c - 'a' + 'A') : c;
}

/* Compare s[0..n) upper-cased with the NUL-terminated upper-case name. */
static int compare_upper(const char *s, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++) {
    unsigned char a = upper((unsigned char)s[i]), b = (unsigned char)name[i];
    if (b == 0) return 1;
    if (a != b) return a < b ? -1 : 1;
  }
  return name[n] == 0 ? 0 : -1;
}

dp_keyword dp_lex_keyword(const char *s, size_t n) {
  /* The longest keyword is MATCH_RECOGNIZE (15 bytes). */
  if (n < 2 || n > 15) return DP_KW_NONE;
  int lo = 1, hi = (int)DP_KW_COUNT_ - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    int c = compare_upper(s, n, keyword_table[mid].name);
    if (c == 0) return (dp_keyword)mid;
    if (c < 0) hi = mid - 1;
    else lo = mid + 1;
  }
  return DP_KW_NONE;
}

const char *dp_lex_keyword_name(dp_keyword kw) {
  return (kw > DP_KW_NONE && kw < DP_KW_COUNT_) ? keyword_table[kw].name : "";
}

bool dp_lex_keyword_reserved(dp_keyword kw) {
  return kw > DP_KW_NONE && kw < DP_KW_COUNT_ && keyword_table[kw].reserved;
}

const char *dp_lex_kind_name(dp_tok_kind kind) {
  switch (kind) {
    case DP_TK_EOF: return "end of input";
    case DP_TK_ERROR: return "a malformed token";
    case DP_TK_IDENT: return "a name";
    case DP_TK_QIDENT: return "a quoted name";
    case DP_TK_INTEGER: return "an integer";
    case DP_TK_DECIMAL: return "a decimal number";
    case DP_TK_FLOAT: return "a number";
    case DP_TK_STRING: return "a string";
    case DP_TK_BINARY: return "a binary string";
    case DP_TK_LPAREN: return "'('";
    case DP_TK_RPAREN: return "')'";
    case DP_TK_LBRACKET: return "'['";
    case DP_TK_RBRACKET: return "']'";
    case DP_TK_COMMA: return "','";
    case DP_TK_DOT: return "'.'";
    case DP_TK_SEMI: return "';'";
    case DP_TK_COLON: return "':'";
    case DP_TK_PLUS: return "'+'";
    case DP_TK_MINUS: return "'-'";
    case DP_TK_STAR: return "'*'";
    case DP_TK_SLASH: return "'/'";
    case DP_TK_PERCENT: return "'%'";
    case DP_TK_EQ: return "'='";
    case DP_TK_EQEQ: return "'=='";
    case DP_TK_NE: return "'<>'";
    case DP_TK_LT: return "'<'";
    case DP_TK_LE: return "'<='";
    case DP_TK_GT: return "'>'";
    case DP_TK_GE: return "'>='";
    case DP_TK_NSEQ: return "'<=>'";
    case DP_TK_CONCAT: return "'||'";
    case DP_TK_DCOLON: return "'::'";
    case DP_TK_FATARROW: return "'=>'";
    case DP_TK_ARROW: return "'->'";
    case DP_TK_QMARK: return "'?'";
    case DP_TK_CARET: return "'^'";
    case DP_TK_AMP: return "'&'";
    case DP_TK_PIPE: return "'|'";
    case DP_TK_TILDE: return "'~'";
    case DP_TK_COUNT_: break;
  }
  return "a token";
}

void dp_lex_init(dp_lexer *lx, const char *text, size_t len) {
  lx->text = text;
  lx->len = len;
  lx->pos = 0;
  lx->line = 1;
  lx->line_start = 0;
}

static bool is_name_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool is_name_char(unsigned char c) { return is_name_start(c) || is_digit(c) || c == '$'; }
static bool is_hex(unsigned char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static unsigned char peek_at(const dp_lexer *lx, size_t i) {
  return i < lx->len ? (unsigned char)lx->text[i] : 0;
}

/* Advance over one byte, counting lines.  Only call with pos < len. */
static void advance(dp_lexer *lx) {
  unsigned char c = (unsigned char)lx->text[lx->pos++];
  if (c == '\n') {
    lx->line++;
    lx->line_start = lx->pos;
  }
}

static uint32_t clamp32(size_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static dp_token make(const dp_lexer *lx, dp_tok_kind kind, size_t start, uint32_t line,
                     size_t line_start) {
  dp_token t;
  t.kind = (uint8_t)kind;
  t.kw = DP_KW_NONE;
  t.space_before = false;
  t.span.off = clamp32(start);
  t.span.len = clamp32(lx->pos - start);
  t.span.line = line;
  t.span.col = clamp32(start - line_start + 1);
  t.err = NULL;
  return t;
}

/* Scan a quoted run closed by `q`, where a doubled `q` stands for one.
** Returns false when the text ends first. */
static bool scan_quoted(dp_lexer *lx, unsigned char q) {
  while (lx->pos < lx->len) {
    unsigned char c = (unsigned char)lx->text[lx->pos];
    advance(lx);
    if (c == q) {
      if (peek_at(lx, lx->pos) == q) {
        advance(lx);
        continue;
      }
      return true;
    }
  }
  return false;
}

/* Skip whitespace and comments.  Returns a non-NULL message (and sets
** *err_start) for an unterminated block comment. */
static const char *skip_space(dp_lexer *lx, size_t *err_start, uint32_t *err_line,
                              size_t *err_line_start) {
  while (lx->pos < lx->len) {
    unsigned char c = (unsigned char)lx->text[lx->pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      advance(lx);
    } else if (c == '-' && peek_at(lx, lx->pos + 1) == '-') {
      while (lx->pos < lx->len && lx->text[lx->pos] != '\n')
        advance(lx);
    } else if (c == '/' && peek_at(lx, lx->pos + 1) == '*') {
      *err_start = lx->pos;
      *err_line = lx->line;
      *err_line_start = lx->line_start;
      advance(lx);
      advance(lx);
      bool closed = false;
      while (lx->pos < lx->len) {
        if (lx->text[lx->pos] == '*' && peek_at(lx, lx->pos + 1) == '/') {
          advance(lx);
          advance(lx);
          closed = true;
          break;
        }
        advance(lx);
      }
      if (!closed) return "unterminated comment: a '/*' comment needs a closing '*/'";
    } else {
      break;
    }
  }
  return NULL;
}

/* X'...': hexadecimal digits in quotes (lx at the X). */
static dp_tok_kind scan_binary(dp_lexer *lx, const char **err) {
  advance(lx);
  advance(lx);
  size_t body = lx->pos;
  if (!scan_quoted(lx, '\'')) {
    *err = "unterminated binary string: X'...' needs a closing quote";
    return DP_TK_ERROR;
  }
  for (size_t i = body; i + 1 < lx->pos; i++)
    if (!is_hex((unsigned char)lx->text[i])) {
      *err = "a binary string X'...' may hold only hexadecimal digits 0-9 and A-F";
      return DP_TK_ERROR;
    }
  return DP_TK_BINARY;
}

/* 12, 1.5, .5, 1e-3; a number glued to letters (10s) is an error. */
static dp_tok_kind scan_number(dp_lexer *lx, const char **err) {
  dp_tok_kind kind = DP_TK_INTEGER;
  while (is_digit(peek_at(lx, lx->pos))) advance(lx);
  if (peek_at(lx, lx->pos) == '.') {
    kind = DP_TK_DECIMAL;
    advance(lx);
    while (is_digit(peek_at(lx, lx->pos))) advance(lx);
  }
  unsigned char e = peek_at(lx, lx->pos);
  if (e == 'e' || e == 'E') {
    size_t k = lx->pos + 1;
    if (peek_at(lx, k) == '+' || peek_at(lx, k) == '-') k++;
    if (is_digit(peek_at(lx, k))) {
      kind = DP_TK_FLOAT;
      while (lx->pos < k) advance(lx);
      while (is_digit(peek_at(lx, lx->pos))) advance(lx);
    }
  }
  if (is_name_start(peek_at(lx, lx->pos))) {
    /* 10s or 5min: glued letters are a typo for a separate word. */
    while (lx->pos < lx->len && is_name_char((unsigned char)lx->text[lx->pos])) advance(lx);
    *err = "a number runs into letters: put a space between them, or quote a name that "
           "starts with a digit in backticks";
    return DP_TK_ERROR;
  }
  return kind;
}

/* 'text', `name` or "name" (lx at the quote c). */
static dp_tok_kind scan_quoted_token(dp_lexer *lx, unsigned char c, size_t start,
                                     const char **err) {
  advance(lx);
  if (c == '\'') {
    if (scan_quoted(lx, '\'')) return DP_TK_STRING;
    *err = "unterminated string: add the closing quote (write '' for a quote inside a string)";
    return DP_TK_ERROR;
  }
  if (!scan_quoted(lx, c)) {
    *err = c == '`' ? "unterminated quoted name: add the closing backtick `"
                    : "unterminated quoted name: add the closing double quote \" (strings "
                      "take single quotes)";
    return DP_TK_ERROR;
  }
  if (lx->pos - start == 2) {
    *err = "empty quoted name: a name needs at least one character";
    return DP_TK_ERROR;
  }
  return DP_TK_QIDENT;
}

/* Punctuation and operators, one to three characters (c, then c1). */
static dp_tok_kind scan_operator(dp_lexer *lx, unsigned char c, unsigned char c1,
                                 const char **err) {
  dp_tok_kind kind = DP_TK_ERROR;
  size_t n = 1;
  switch (c) {
    case '(': kind = DP_TK_LPAREN; break;
    case ')': kind = DP_TK_RPAREN; break;
    case '[': kind = DP_TK_LBRACKET; break;
    case ']': kind = DP_TK_RBRACKET; break;
    case ',': kind = DP_TK_COMMA; break;
    case '.': kind = DP_TK_DOT; break;
    case ';': kind = DP_TK_SEMI; break;
    case '+': kind = DP_TK_PLUS; break;
    case '*': kind = DP_TK_STAR; break;
    case '/': kind = DP_TK_SLASH; break;
    case '%': kind = DP_TK_PERCENT; break;
    case '?': kind = DP_TK_QMARK; break;
    case '^': kind = DP_TK_CARET; break;
    case '&': kind = DP_TK_AMP; break;
    case '~': kind = DP_TK_TILDE; break;
    case '-':
      if (c1 == '>') kind = DP_TK_ARROW, n = 2;
      else kind = DP_TK_MINUS;
      break;
    case ':':
      if (c1 == ':') kind = DP_TK_DCOLON, n = 2;
      else kind = DP_TK_COLON;
      break;
    case '|':
      if (c1 == '|') kind = DP_TK_CONCAT, n = 2;
      else kind = DP_TK_PIPE;
      break;
    case '=':
      if (c1 == '=') kind = DP_TK_EQEQ, n = 2;
      else if (c1 == '>') kind = DP_TK_FATARROW, n = 2;
      else kind = DP_TK_EQ;
      break;
    case '!':
      if (c1 == '=') kind = DP_TK_NE, n = 2;
      else *err = "unexpected '!': write NOT for negation and <> or != for inequality";
      break;
    case '<':
      if (c1 == '=' && peek_at(lx, lx->pos + 2) == '>') kind = DP_TK_NSEQ, n = 3;
      else if (c1 == '=') kind = DP_TK_LE, n = 2;
      else if (c1 == '>') kind = DP_TK_NE, n = 2;
      else kind = DP_TK_LT;
      break;
    case '>':
      if (c1 == '=') kind = DP_TK_GE, n = 2;
      else kind = DP_TK_GT;
      break;
    default:
      *err = "unexpected character: it has no meaning in SQL here (quote names in "
             "backticks, strings in single quotes)";
      break;
  }
  for (size_t i = 0; i < n && lx->pos < lx->len; i++) advance(lx);
  return kind;
}

dp_token dp_lex_next(dp_lexer *lx) {
  size_t before = lx->pos;
  size_t cstart = 0, cline_start = 0;
  uint32_t cline = 0;
  const char *comment_err = skip_space(lx, &cstart, &cline, &cline_start);
  if (comment_err) {
    dp_token t = make(lx, DP_TK_ERROR, cstart, cline, cline_start);
    t.span.len = 2; /* point at the opening '/' '*' */
    t.err = comment_err;
    return t;
  }
  bool spaced = lx->pos > before;
  size_t start = lx->pos;
  uint32_t line = lx->line;
  size_t line_start = lx->line_start;
  dp_token t;
  if (lx->pos >= lx->len) {
    t = make(lx, DP_TK_EOF, start, line, line_start);
    t.space_before = spaced;
    return t;
  }
  unsigned char c = (unsigned char)lx->text[lx->pos];
  unsigned char c1 = peek_at(lx, lx->pos + 1);
  dp_tok_kind kind;
  const char *err = NULL;
  if ((c == 'x' || c == 'X') && c1 == '\'') {
    kind = scan_binary(lx, &err);
  } else if (is_name_start(c)) {
    while (lx->pos < lx->len && is_name_char((unsigned char)lx->text[lx->pos])) advance(lx);
    t = make(lx, DP_TK_IDENT, start, line, line_start);
    t.kw = (uint16_t)dp_lex_keyword(lx->text + start, lx->pos - start);
    t.space_before = spaced;
    return t;
  } else if (is_digit(c) || (c == '.' && is_digit(c1))) {
    kind = scan_number(lx, &err);
  } else if (c == '\'' || c == '`' || c == '"') {
    kind = scan_quoted_token(lx, c, start, &err);
  } else {
    kind = scan_operator(lx, c, c1, &err);
  }
  t = make(lx, kind, start, line, line_start);
  t.space_before = spaced;
  if (kind == DP_TK_ERROR) {
    t.err = err;
    /* An unterminated run points at its opening quote, not the rest of the text. */
    if (t.span.len > 1 && (c == '\'' || c == '`' || c == '"' || c == 'x' || c == 'X') &&
        err && strncmp(err, "unterminated", 12) == 0)
      t.span.len = (c == 'x' || c == 'X') ? 2 : 1;
  }
  return t;
}
