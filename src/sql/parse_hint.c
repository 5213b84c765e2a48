/*
** parse_hint.c — query hints after SELECT: a comment that opens with a '+',
** holding NAME(...) [, NAME(...)] (Oracle's and Flink's form).
**
** The lexer skips every comment, hints included, so that a hint dipper does
** not know stays what it was before (a comment).  The SELECT parser hands
** this file the text between the SELECT keyword and the next token, where
** Flink puts a query block's hints, and this file reads the one hint dipper
** acts on: STATE_TTL('input' = 'duration', ...) (Flink's per-operator idle
** state retention), keys and values as string literals (a key may also be a
** bare name).  Other hints are skipped whole.  The duration is checked by
** the binder (plan/options.c's grammar), which also matches the keys with
** the block's inputs.
**
** Owns: the hint grammar.  Does not own: what a hint means (plan/bind_*.c).
*/
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "sql/parser_int.h"

typedef struct hscan {
  parser *p;
  const char *s;        /* the whole text */
  uint32_t pos, end;    /* the gap being read */
  dp_span ref;          /* a span whose line/col we count from (the SELECT keyword) */
  uint32_t ref_line_start;
} hscan;

/* The span of [off, off + len) with its line and column. */
static dp_span span_at(const hscan *h, uint32_t off, uint32_t len) {
  dp_span sp = {off, len, h->ref.line, 1};
  uint32_t line_start = h->ref_line_start;
  for (uint32_t i = h->ref.off; i < off; i++)
    if (h->s[i] == '\n') {
      sp.line++;
      line_start = i + 1;
    }
  sp.col = off - line_start + 1;
  return sp;
}

_Noreturn static void fail(hscan *h, uint32_t off, const char *msg) {
  dp_ps_fail_at(h->p, DIPPER_SYNTAX, span_at(h, off, 1), "%s", msg);
}

static void blanks(hscan *h) {
  while (h->pos < h->end && isspace((unsigned char)h->s[h->pos])) h->pos++;
}

static bool at_close(const hscan *h) {
  return h->pos + 1 < h->end && h->s[h->pos] == '*' && h->s[h->pos + 1] == '/';
}

/* A name: letters, digits, '_'. */
static uint32_t name_len(const hscan *h) {
  uint32_t n = 0;
  while (h->pos + n < h->end &&
         (isalnum((unsigned char)h->s[h->pos + n]) || h->s[h->pos + n] == '_'))
    n++;
  return n;
}

/* 'text' with '' for a quote, or a bare name. */
static const char *literal(hscan *h, const char *what) {
  blanks(h);
  uint32_t start = h->pos;
  if (h->pos < h->end && h->s[h->pos] == '\'') {
    char *out = dp_ps_alloc(h->p, h->end - h->pos + 1);
    size_t n = 0;
    h->pos++;
    for (;;) {
      if (h->pos >= h->end) fail(h, start, "unterminated string in the STATE_TTL hint");
      char c = h->s[h->pos++];
      if (c == '\'') {
        if (h->pos < h->end && h->s[h->pos] == '\'') {
          out[n++] = '\'';
          h->pos++;
          continue;
        }
        break;
      }
      out[n++] = c;
    }
    out[n] = '\0';
    return out;
  }
  uint32_t n = name_len(h);
  if (n == 0)
    dp_ps_fail_at(h->p, DIPPER_SYNTAX, span_at(h, start, 1),
                  "expected %s in the STATE_TTL hint, as in /*+ STATE_TTL('orders' = '1 d') */",
                  what);
  h->pos += n;
  return dp_ps_copy(h->p, h->s + start, n);
}

/* STATE_TTL( 'k' = 'v' [, ...] ) — h at the '('. */
static void state_ttl(hscan *h, dp_ast_select *s, vec *kv) {
  h->pos++;
  for (;;) {
    blanks(h);
    uint32_t start = h->pos;
    dp_ast_hint_kv *e = dp_ps_vec_push(h->p, kv, sizeof *e);
    e->key = literal(h, "an input name");
    blanks(h);
    if (h->pos >= h->end || h->s[h->pos] != '=')
      fail(h, h->pos, "expected '=' after the input name of the STATE_TTL hint");
    h->pos++;
    e->value = literal(h, "a duration");
    e->span = span_at(h, start, h->pos - start);
    blanks(h);
    if (h->pos < h->end && h->s[h->pos] == ',') {
      h->pos++;
      continue;
    }
    if (h->pos < h->end && h->s[h->pos] == ')') {
      h->pos++;
      break;
    }
    fail(h, h->pos, "expected ',' or ')' in the STATE_TTL hint");
  }
  s->nttl = kv->n;
  s->ttl = kv->items;
}

/* Skip a hint we do not know: NAME[(...)] with quotes respected. */
static void skip_hint(hscan *h) {
  h->pos += name_len(h);
  blanks(h);
  if (h->pos >= h->end || h->s[h->pos] != '(') return;
  int depth = 0;
  bool quoted = false;
  for (; h->pos < h->end; h->pos++) {
    char c = h->s[h->pos];
    if (quoted) {
      if (c == '\'') quoted = false;
    } else if (c == '\'') {
      quoted = true;
    } else if (c == '(') {
      depth++;
    } else if (c == ')' && --depth == 0) {
      h->pos++;
      return;
    }
  }
}

/* One hint comment: h just past its '+'. */
static void hint_comment(hscan *h, dp_ast_select *s, vec *kv) {
  for (;;) {
    blanks(h);
    if (at_close(h) || h->pos >= h->end) return;
    uint32_t n = name_len(h);
    if (n == 0) return; /* not a hint list we can read: a comment, as before */
    if (n == 9 && strncasecmp(h->s + h->pos, "STATE_TTL", 9) == 0) {
      uint32_t at = h->pos;
      h->pos += n;
      blanks(h);
      if (h->pos >= h->end || h->s[h->pos] != '(')
        fail(h, at, "STATE_TTL needs its inputs and durations: /*+ STATE_TTL('orders' = '1 d') */");
      if (s->nttl > 0) fail(h, at, "a query block takes one STATE_TTL hint: put every input in it");
      state_ttl(h, s, kv);
    } else {
      skip_hint(h);
    }
    blanks(h);
    if (h->pos < h->end && h->s[h->pos] == ',') h->pos++;
  }
}

/* The offset of `pat` in [from, h->end), or h->end. */
static uint32_t find(const hscan *h, uint32_t from, const char *pat) {
  size_t n = strlen(pat);
  for (uint32_t i = from; i + n <= h->end; i++)
    if (memcmp(h->s + i, pat, n) == 0) return i;
  return h->end;
}

void dp_ps_select_hints(parser *p, const dp_token *select_tok, dp_ast_select *s) {
  uint32_t from = select_tok->span.off + select_tok->span.len;
  uint32_t to = cur(p)->span.off;
  if (to <= from) return;
  hscan h = {.p = p, .s = p->text, .pos = from, .end = to, .ref = select_tok->span};
  h.ref_line_start = select_tok->span.off - (select_tok->span.col - 1);
  vec kv = {0};
  while (h.pos + 2 < h.end) {
    uint32_t open = find(&h, h.pos, "/*+");
    if (open >= h.end) return;
    /* the comment's own end bounds it, as the lexer ended it */
    uint32_t close = find(&h, open + 3, "*/");
    uint32_t stop = close < h.end ? close + 2 : h.end;
    hscan one = h;
    one.pos = open + 3;
    one.end = stop;
    hint_comment(&one, s, &kv);
    h.pos = stop;
  }
}
