/*
** eval_string.c — kernels of the string functions: concatenation, case,
** substrings, trimming, padding, search and replace, LIKE / SIMILAR TO /
** RLIKE and the regexp functions, split, base64 and hex, the digests
** (md5, sha1, sha256 from eval_hash.c) and uuid; JSON is eval_json.c, URLs eval_url.c.
**
** Strings are UTF-8: lengths, positions and substrings count code points;
** LOWER/UPPER/INITCAP change ASCII letters only.  A pattern (LIKE, a
** regexp) that is a constant is compiled once per batch; a pattern that
** varies by row is recompiled only when it changes.  LIKE without ESCAPE
** takes the backslash as its escape character, as Spark does.  Regular expressions
** are POSIX extended ones, with Java's \d \w \s classes translated.
** Functions return NULL when an argument is NULL, except CONCAT_WS, which
** skips NULL strings.
*/
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "exec/eval_int.h"

/* ---- UTF-8 ---- */

static bool is_cont(char ch) { return ((unsigned char)ch & 0xC0) == 0x80; }

static size_t utf8_len(const char *p, size_t n) {
  size_t chars = 0;
  for (size_t i = 0; i < n; i++) chars += !is_cont(p[i]);
  return chars;
}

/* Byte offset of code point `k` (0-based), or n when past the end. */
static size_t utf8_offset(const char *p, size_t n, size_t k) {
  size_t i = 0;
  while (k > 0 && i < n) {
    i++;
    while (i < n && is_cont(p[i])) i++;
    k--;
  }
  return i;
}

static size_t next_char(const char *p, size_t n, size_t i) {
  i++;
  while (i < n && is_cont(p[i])) i++;
  return i;
}

static char ascii_upper(char ch) { return ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch; }
static char ascii_lower(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch; }

static const char *find_bytes(const char *hay, size_t hn, const char *needle, size_t nn) {
  if (nn == 0) return hay;
  if (nn > hn) return NULL;
  const char *end = hay + hn - nn;
  for (const char *p = hay; p <= end; p++) {
    p = memchr(p, needle[0], (size_t)(end - p) + 1);
    if (!p) return NULL;
    if (memcmp(p, needle, nn) == 0) return p;
  }
  return NULL;
}

/* ---- LIKE ---- */

typedef enum { TOK_LIT, TOK_ONE, TOK_ANY } tok_kind;

typedef struct like_pat {
  tok_kind *kind;
  char *lit;
  size_t n;
  /* fast shapes: exact, prefix%, %suffix, %infix% */
  enum { SHAPE_GENERAL, SHAPE_EXACT, SHAPE_PREFIX, SHAPE_SUFFIX, SHAPE_INFIX } shape;
  char *text; /* the literal of a fast shape */
  size_t text_len;
} like_pat;

static void like_free(like_pat *p) {
  free(p->kind);
  free(p->lit);
  free(p->text);
  memset(p, 0, sizeof *p);
}

/* false: the escape is misused (a trailing escape, or a multi-character one) */
static bool like_compile(const char *pat, size_t n, const char *esc, size_t esc_len, like_pat *out) {
  memset(out, 0, sizeof *out);
  if (esc && esc_len > 1) return false;
  out->kind = malloc((n ? n : 1) * sizeof *out->kind);
  out->lit = malloc(n ? n : 1);
  out->text = malloc(n ? n : 1);
  if (!out->kind || !out->lit || !out->text) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = pat[i];
    if (esc && esc_len == 1 && ch == esc[0]) {
      if (i + 1 >= n) return false;
      out->kind[out->n] = TOK_LIT;
      out->lit[out->n++] = pat[++i];
    } else if (ch == '%') {
      if (out->n == 0 || out->kind[out->n - 1] != TOK_ANY) out->kind[out->n++] = TOK_ANY;
    } else if (ch == '_') {
      out->kind[out->n++] = TOK_ONE;
    } else {
      out->kind[out->n] = TOK_LIT;
      out->lit[out->n++] = ch;
    }
  }
  /* recognise the shapes that need no backtracking */
  size_t lo = 0, hi = out->n;
  bool lead = hi > 0 && out->kind[0] == TOK_ANY, trail = hi > 0 && out->kind[hi - 1] == TOK_ANY;
  if (lead) lo++;
  if (trail && hi > lo) hi--;
  bool lits = true;
  for (size_t i = lo; i < hi; i++) lits = lits && out->kind[i] == TOK_LIT;
  if (lits) {
    out->text_len = hi - lo;
    for (size_t i = lo; i < hi; i++) out->text[i - lo] = out->lit[i];
    out->shape = lead && trail ? SHAPE_INFIX : lead ? SHAPE_SUFFIX : trail ? SHAPE_PREFIX : SHAPE_EXACT;
    if (out->n == 1 && lead) out->shape = SHAPE_INFIX; /* '%' */
  }
  return true;
}

static bool like_match(const like_pat *p, const char *s, size_t n) {
  switch (p->shape) {
  case SHAPE_EXACT: return n == p->text_len && memcmp(s, p->text, n) == 0;
  case SHAPE_PREFIX: return n >= p->text_len && memcmp(s, p->text, p->text_len) == 0;
  case SHAPE_SUFFIX: return n >= p->text_len && memcmp(s + n - p->text_len, p->text, p->text_len) == 0;
  case SHAPE_INFIX: return find_bytes(s, n, p->text, p->text_len) != NULL;
  default: break;
  }
  /* wildcard matching with the last % as the backtrack point */
  size_t si = 0, pi = 0, star_p = (size_t)-1, star_s = 0;
  while (si < n) {
    if (pi < p->n && p->kind[pi] == TOK_LIT && p->lit[pi] == s[si]) {
      si++;
      pi++;
    } else if (pi < p->n && p->kind[pi] == TOK_ONE) {
      si = next_char(s, n, si);
      pi++;
    } else if (pi < p->n && p->kind[pi] == TOK_ANY) {
      star_p = pi++;
      star_s = si;
    } else if (star_p != (size_t)-1) {
      pi = star_p + 1;
      star_s = next_char(s, n, star_s);
      si = star_s;
    } else {
      return false;
    }
  }
  while (pi < p->n && p->kind[pi] == TOK_ANY) pi++;
  return pi == p->n;
}

/* ---- regular expressions ---- */

typedef struct rx {
  bool ready;
  regex_t re;
  char *pattern; /* the source it was compiled from */
  size_t len;
} rx;

static void rx_free(rx *r) {
  if (r->ready) regfree(&r->re);
  free(r->pattern);
  memset(r, 0, sizeof *r);
}

/* Java-style pattern (or SIMILAR TO's, when similar) to POSIX ERE text. */
static bool rx_translate(const char *p, size_t n, bool similar, const char *esc, dp_ev_buf *b) {
  bool ok = true;
  if (similar) ok = dp_ev_buf_put(b, "^(", 2);
  bool in_class = false;
  for (size_t i = 0; i < n && ok; i++) {
    char ch = p[i];
    if (similar && esc && ch == esc[0] && i + 1 < n) {
      char lit = p[++i];
      if (strchr(".[]()*+?{}|^$\\", lit)) ok = dp_ev_buf_putc(b, '\\');
      ok = ok && dp_ev_buf_putc(b, lit);
      continue;
    }
    if (ch == '\\' && i + 1 < n) {
      char nx = p[++i];
      const char *cls = NULL;
      switch (nx) {
      case 'd': cls = in_class ? "0-9" : "[0-9]"; break;
      case 'D': cls = "[^0-9]"; break;
      case 'w': cls = in_class ? "A-Za-z0-9_" : "[A-Za-z0-9_]"; break;
      case 'W': cls = "[^A-Za-z0-9_]"; break;
      case 's': cls = in_class ? "[:space:]" : "[[:space:]]"; break;
      case 'S': cls = "[^[:space:]]"; break;
      case 't': cls = "\t"; break;
      case 'n': cls = "\n"; break;
      default: break;
      }
      if (cls)
        ok = dp_ev_buf_put(b, cls, strlen(cls));
      else
        ok = dp_ev_buf_putc(b, '\\') && dp_ev_buf_putc(b, nx);
      continue;
    }
    if (ch == '[') in_class = true;
    if (ch == ']') in_class = false;
    if (similar && !in_class && ch == '%')
      ok = dp_ev_buf_put(b, ".*", 2);
    else if (similar && !in_class && ch == '_')
      ok = dp_ev_buf_putc(b, '.');
    else
      ok = dp_ev_buf_putc(b, ch);
  }
  if (similar && ok) ok = dp_ev_buf_put(b, ")$", 2);
  return ok;
}

/* Compile unless r already holds this pattern; a code with a diagnostic. */
static int rx_get(dp_ev *c, const dp_expr *e, rx *r, const char *p, size_t n, bool similar,
                  const char *esc) {
  if (r->ready && r->len == n && memcmp(r->pattern, p, n) == 0) return DIPPER_OK;
  rx_free(r);
  dp_ev_buf b = {0};
  if (!rx_translate(p, n, similar, esc, &b) || !dp_ev_buf_put(&b, "", 0)) {
    free(b.p);
    return DIPPER_NOMEM;
  }
  int err = regcomp(&r->re, b.p, REG_EXTENDED);
  free(b.p);
  if (err) {
    char msg[128];
    regerror(err, &r->re, msg, sizeof msg);
    return dp_ev_data_error(c, e, "the regular expression '%.*s' is not valid (%s); fix the pattern",
                            (int)(n > 200 ? 200 : n), p, msg);
  }
  r->pattern = malloc(n ? n : 1);
  if (!r->pattern) {
    regfree(&r->re);
    return DIPPER_NOMEM;
  }
  memcpy(r->pattern, p, n);
  r->len = n;
  r->ready = true;
  return DIPPER_OK;
}

/* regexec needs a NUL-terminated subject: copy it into a scratch buffer. */
static const char *cstr(dp_ev_buf *scratch, const char *p, size_t n) {
  scratch->len = 0;
  if (!dp_ev_buf_put(scratch, p, n)) return NULL;
  return scratch->p;
}

/* ---- base64, hex ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static bool put_base64(dp_ev_buf *b, const unsigned char *p, size_t n) {
  bool ok = true;
  for (size_t i = 0; i < n && ok; i += 3) {
    unsigned v = (unsigned)p[i] << 16;
    if (i + 1 < n) v |= (unsigned)p[i + 1] << 8;
    if (i + 2 < n) v |= p[i + 2];
    char q[4] = {b64[(v >> 18) & 63], b64[(v >> 12) & 63], i + 1 < n ? b64[(v >> 6) & 63] : '=',
                 i + 2 < n ? b64[v & 63] : '='};
    ok = dp_ev_buf_put(b, q, 4);
  }
  return ok;
}

static int b64_value(char ch) {
  const char *at = ch ? strchr(b64, ch) : NULL;
  return at ? (int)(at - b64) : -1;
}

/* false on malformed input */
static bool get_base64(dp_ev_buf *b, const char *p, size_t n, bool *nomem) {
  unsigned acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = p[i];
    if (ch == '=') {
      pad++;
      continue;
    }
    if (ch == '\n' || ch == '\r') continue;
    int v = b64_value(ch);
    if (v < 0 || pad) return false;
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (!dp_ev_buf_putc(b, (char)((acc >> bits) & 0xff))) {
        *nomem = true;
        return false;
      }
    }
  }
  return pad <= 2;
}

static bool put_hex(dp_ev_buf *b, const unsigned char *p, size_t n, bool upper) {
  const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    char q[2] = {digits[p[i] >> 4], digits[p[i] & 15]};
    ok = dp_ev_buf_put(b, q, 2);
  }
  return ok;
}

static void put_utf8(dp_ev_buf *b, unsigned cp, bool *ok) {
  char q[4];
  size_t n;
  if (cp < 0x80) {
    q[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    q[0] = (char)(0xC0 | (cp >> 6));
    q[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    q[0] = (char)(0xE0 | (cp >> 12));
    q[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    q[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    q[0] = (char)(0xF0 | (cp >> 18));
    q[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    q[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    q[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  if (*ok) *ok = dp_ev_buf_put(b, q, n);
}

/* ---- the kernel ---- */

typedef struct sctx {
  dp_ev *c;
  const dp_expr *e;
  const dp_ev_arg *args;
  int nargs;
  dp_vector *out;
  dp_ev_buf buf, scratch;
  like_pat like;
  bool like_ready;
  char *like_src;
  size_t like_len;
  rx re;
  bool re_bad; /* rx_quiet: re holds a pattern that does not compile */
  uint64_t rng;
} sctx;

static int put_result(sctx *s) {
  return dp_vector_append_str(s->out, s->buf.p ? s->buf.p : "", s->buf.len);
}

static int64_t arg_i64(sctx *s, int k, int64_t i) { return dp_ev_i64(&s->args[k], i); }
static const char *arg_str(sctx *s, int k, int64_t i, size_t *len) { return dp_ev_str(&s->args[k], i, len); }

/* The LIKE pattern of row i, compiled (once when it is constant). */
static int like_get(sctx *s, int64_t i, like_pat **out) {
  size_t plen, elen = 0;
  const char *p = arg_str(s, 1, i, &plen);
  /* Without ESCAPE, a backslash escapes (Spark's default) */
  const char *esc = "\\";
  elen = 1;
  if (s->nargs > 2) esc = arg_str(s, 2, i, &elen);
  if (s->like_ready && s->like_len == plen && memcmp(s->like_src, p, plen) == 0) {
    *out = &s->like;
    return DIPPER_OK;
  }
  like_free(&s->like);
  free(s->like_src);
  s->like_src = NULL;
  s->like_ready = false;
  if (!like_compile(p, plen, esc, elen, &s->like))
    return dp_ev_data_error(s->c, s->e,
                            "the LIKE pattern '%.*s' ends with its escape character, or the "
                            "ESCAPE is longer than one character; escape a character or drop "
                            "the ESCAPE",
                            (int)(plen > 200 ? 200 : plen), p);
  s->like_src = malloc(plen ? plen : 1);
  if (!s->like_src) return DIPPER_NOMEM;
  memcpy(s->like_src, p, plen);
  s->like_len = plen;
  s->like_ready = true;
  *out = &s->like;
  return DIPPER_OK;
}

static bool trim_set_has(const char *set, size_t n, char ch) { return memchr(set, ch, n) != NULL; }

/* ---- one step per string-valued function ----
**
** A step computes one row of its function, all of whose arguments are
** non-NULL (CONCAT_WS aside): `s0`/`n0` is argument 0 when it is a string
** ("" otherwise) and s->buf starts empty.  It returns
**   DIPPER_OK   the value is in s->buf (string_row appends it),
**   STR_NULL    the value is NULL (string_row appends a NULL),
**   other codes an error, passed up as it is: DIPPER_NOMEM (buf_result
**               turns a failed write into it), or the code of
**               dp_ev_data_error / rx_get, which have set the message.
** A new string-valued function is a step and its line in str_steps[]:
** dp_ev_kernel_string and string_row find it there. */
#define STR_NULL (-1)

typedef int str_step(sctx *s, int64_t i, const char *s0, size_t n0);

/* DIPPER_OK when every write to the buffer succeeded, else DIPPER_NOMEM. */
static int buf_result(bool ok) { return ok ? DIPPER_OK : DIPPER_NOMEM; }

static int call_id(const sctx *s) { return s->e->u.call.fn->id; }

static int concat_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)s0, (void)n0;
  bool ok = true;
  for (int k = 0; k < s->nargs && ok; k++) {
    size_t n;
    const char *p = arg_str(s, k, i, &n);
    ok = dp_ev_buf_put(&s->buf, p, n);
  }
  return buf_result(ok);
}

/* CONCAT_WS: argument 0 is the separator; NULL strings are skipped. */
static int concat_ws_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  bool ok = true, first = true;
  for (int k = 1; k < s->nargs && ok; k++) {
    if (dp_ev_null(&s->args[k], i)) continue;
    size_t n;
    const char *p = arg_str(s, k, i, &n);
    if (!first) ok = dp_ev_buf_put(&s->buf, s0, n0);
    ok = ok && dp_ev_buf_put(&s->buf, p, n);
    first = false;
  }
  return buf_result(ok);
}

/* LOWER, UPPER */
static int case_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)i;
  dp_ev_buf *b = &s->buf;
  bool lower = call_id(s) == DP_F_LOWER;
  bool ok = dp_ev_buf_put(b, s0, n0);
  for (size_t k = 0; k < n0 && ok; k++) b->p[k] = lower ? ascii_lower(b->p[k]) : ascii_upper(b->p[k]);
  return buf_result(ok);
}

static int initcap_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)i;
  dp_ev_buf *b = &s->buf;
  bool ok = dp_ev_buf_put(b, s0, n0);
  bool start = true;
  for (size_t k = 0; k < n0 && ok; k++) {
    char ch = b->p[k];
    bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    b->p[k] = start ? ascii_upper(ch) : ascii_lower(ch);
    start = !alnum && !((unsigned char)ch & 0x80);
  }
  return buf_result(ok);
}

static int substring_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  int64_t start = arg_i64(s, 1, i);
  int64_t chars = (int64_t)utf8_len(s0, n0);
  int64_t from = start > 0 ? start - 1 : start == 0 ? 0 : chars + start;
  int64_t count = s->nargs > 2 ? arg_i64(s, 2, i) : INT64_MAX;
  if (count <= 0) return DIPPER_OK;
  if (from < 0) { /* a start before the string eats into the length */
    if (count != INT64_MAX) count = count > -from ? count + from : 0;
    from = 0;
  }
  if (count <= 0 || from >= chars) return DIPPER_OK;
  size_t a = utf8_offset(s0, n0, (size_t)from);
  size_t z = count >= chars - from ? n0 : utf8_offset(s0, n0, (size_t)(from + count));
  return buf_result(dp_ev_buf_put(&s->buf, s0 + a, z - a));
}

/* TRIM, LTRIM, RTRIM, with an optional set of characters (a space). */
static int trim_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  int id = call_id(s);
  const char *set = " ";
  size_t sn = 1;
  if (s->nargs > 1) set = arg_str(s, 1, i, &sn);
  size_t a = 0, z = n0;
  if (id != DP_F_RTRIM)
    while (a < z && trim_set_has(set, sn, s0[a])) a++;
  if (id != DP_F_LTRIM)
    while (z > a && trim_set_has(set, sn, s0[z - 1])) z--;
  return buf_result(dp_ev_buf_put(&s->buf, s0 + a, z - a));
}

static int replace_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  dp_ev_buf *b = &s->buf;
  size_t n1, n2;
  const char *from = arg_str(s, 1, i, &n1), *to = arg_str(s, 2, i, &n2);
  if (n1 == 0) return buf_result(dp_ev_buf_put(b, s0, n0));
  bool ok = true;
  size_t at = 0;
  while (ok) {
    const char *hit = find_bytes(s0 + at, n0 - at, from, n1);
    if (!hit) {
      ok = dp_ev_buf_put(b, s0 + at, n0 - at);
      break;
    }
    ok = dp_ev_buf_put(b, s0 + at, (size_t)(hit - s0) - at) && dp_ev_buf_put(b, to, n2);
    at = (size_t)(hit - s0) + n1;
  }
  return buf_result(ok);
}

/* LPAD, RPAD: to a length in characters, cutting a longer string. */
static int pad_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  dp_ev_buf *b = &s->buf;
  int id = call_id(s);
  int64_t want = arg_i64(s, 1, i);
  if (want < 0) return STR_NULL;
  if (want > (INT64_C(1) << 28))
    return dp_ev_data_error(s->c, s->e, "%s to %lld characters is more than a value may hold",
                            id == DP_F_LPAD ? "LPAD" : "RPAD", (long long)want);
  const char *pad = " ";
  size_t pn = 1;
  if (s->nargs > 2) pad = arg_str(s, 2, i, &pn);
  int64_t have = (int64_t)utf8_len(s0, n0);
  if (have >= want || pn == 0)
    return buf_result(dp_ev_buf_put(b, s0, utf8_offset(s0, n0, (size_t)(have < want ? have : want))));
  int64_t need = want - have;
  size_t pchars = utf8_len(pad, pn);
  bool ok = true;
  if (id == DP_F_RPAD) ok = dp_ev_buf_put(b, s0, n0);
  while (need > 0 && ok) {
    size_t take = (int64_t)pchars <= need ? pn : utf8_offset(pad, pn, (size_t)need);
    ok = dp_ev_buf_put(b, pad, take);
    need -= (int64_t)pchars;
  }
  if (id == DP_F_LPAD) ok = ok && dp_ev_buf_put(b, s0, n0);
  return buf_result(ok);
}

static int repeat_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  int64_t times = arg_i64(s, 1, i);
  if (times > 0 && n0 > 0 && (uint64_t)times * n0 > (uint64_t)INT32_MAX)
    return dp_ev_data_error(s->c, s->e, "REPEAT would make a string of %lld bytes, more than a value may hold",
                            (long long)((uint64_t)times * n0 > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)((uint64_t)times * n0)));
  bool ok = true;
  for (int64_t k = 0; k < times && ok; k++) ok = dp_ev_buf_put(&s->buf, s0, n0);
  return buf_result(ok);
}

/* REVERSE, by code points. */
static int reverse_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)i;
  bool ok = true;
  size_t k = n0;
  while (k > 0 && ok) {
    size_t st = k - 1;
    while (st > 0 && is_cont(s0[st])) st--;
    ok = dp_ev_buf_put(&s->buf, s0 + st, k - st);
    k = st;
  }
  return buf_result(ok);
}

/* LEFT, RIGHT: the first or last n characters. */
static int left_right_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  dp_ev_buf *b = &s->buf;
  bool left = call_id(s) == DP_F_LEFT;
  int64_t len = arg_i64(s, 1, i);
  if (len <= 0) return DIPPER_OK;
  int64_t chars = (int64_t)utf8_len(s0, n0);
  if (len >= chars) return buf_result(dp_ev_buf_put(b, s0, n0));
  size_t cut = utf8_offset(s0, n0, (size_t)(left ? len : chars - len));
  return buf_result(left ? dp_ev_buf_put(b, s0, cut) : dp_ev_buf_put(b, s0 + cut, n0 - cut));
}

/* MD5, SHA1, SHA224, SHA256, SHA384, SHA512 and SHA2(x, bits), in
** lower-case hex; SHA2 of another length is an error, as in Flink. */
static int digest_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  int id = call_id(s);
  uint8_t d[64];
  int64_t bits = id == DP_F_SHA224 ? 224 : id == DP_F_SHA256 ? 256 : id == DP_F_SHA384 ? 384
               : id == DP_F_SHA512 ? 512 : id == DP_F_SHA2 ? arg_i64(s, 1, i) : 0;
  size_t dn = id == DP_F_MD5 ? 16 : id == DP_F_SHA1 ? 20 : (size_t)bits / 8;
  if (id == DP_F_MD5) dp_ev_md5(s0, n0, d);
  else if (id == DP_F_SHA1) dp_ev_sha1(s0, n0, d);
  else if (bits == 224) dp_ev_sha224(s0, n0, d);
  else if (bits == 256) dp_ev_sha256(s0, n0, d);
  else if (bits == 384) dp_ev_sha384(s0, n0, d);
  else if (bits == 512) dp_ev_sha512(s0, n0, d);
  else
    return dp_ev_data_error(s->c, s->e, "SHA2 takes a length of 224, 256, 384 or 512 bits, not %lld",
                            (long long)bits);
  return buf_result(put_hex(&s->buf, d, dn, false));
}

static int to_base64_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)i;
  return buf_result(put_base64(&s->buf, (const unsigned char *)s0, n0));
}

/* FROM_BASE64: NULL when the text is not base64. */
static int from_base64_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)i;
  bool nomem = false;
  if (!get_base64(&s->buf, s0, n0, &nomem)) return nomem ? DIPPER_NOMEM : STR_NULL;
  return DIPPER_OK;
}

static int chr_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)s0, (void)n0;
  int64_t code = arg_i64(s, 0, i);
  if (code < 0) return DIPPER_OK;
  bool ok = true;
  put_utf8(&s->buf, (unsigned)(code % 256), &ok);
  return buf_result(ok);
}

/* HEX of a string's bytes, or of an integer. */
static int hex_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  if (s->args[0].v->phys == DP_PHYS_VARBIN) return buf_result(put_hex(&s->buf, (const unsigned char *)s0, n0, true));
  char tmp[24];
  int tn = snprintf(tmp, sizeof tmp, "%llX", (unsigned long long)arg_i64(s, 0, i));
  return buf_result(tn > 0 && dp_ev_buf_put(&s->buf, tmp, (size_t)tn));
}

/* The regexp (argument 1) of row i compiled, and the subject as a C string. */
static int regexp_prepare(sctx *s, int64_t i, const char *s0, size_t n0, const char **subject) {
  size_t pn;
  const char *pat = arg_str(s, 1, i, &pn);
  int rc = rx_get(s->c, s->e, &s->re, pat, pn, false, NULL);
  if (rc != DIPPER_OK) return rc;
  *subject = cstr(&s->scratch, s0, n0);
  return *subject ? DIPPER_OK : DIPPER_NOMEM;
}

/* REGEXP_EXTRACT: a group (1 when the pattern has one, else the match), NULL
** when the pattern does not match. */
static int regexp_extract_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  const char *subject;
  int rc = regexp_prepare(s, i, s0, n0, &subject);
  if (rc != DIPPER_OK) return rc;
  regmatch_t m[10];
  int64_t group = s->nargs > 2 ? arg_i64(s, 2, i) : (s->re.re.re_nsub > 0 ? 1 : 0);
  if (group < 0 || (size_t)group > s->re.re.re_nsub || group > 9)
    return dp_ev_data_error(s->c, s->e, "REGEXP_EXTRACT: the pattern has %zu group%s, there is no group %lld",
                            s->re.re.re_nsub, s->re.re.re_nsub == 1 ? "" : "s", (long long)group);
  if (regexec(&s->re.re, subject, 10, m, 0) != 0 || m[group].rm_so < 0) return STR_NULL;
  return buf_result(dp_ev_buf_put(&s->buf, subject + m[group].rm_so, (size_t)(m[group].rm_eo - m[group].rm_so)));
}

/* The replacement of one match: $0..$9 are groups, a backslash quotes. */
static bool put_replacement(dp_ev_buf *b, const char *repl, size_t rn, const regex_t *re, const regmatch_t *m,
                            const char *at) {
  bool ok = true;
  for (size_t k = 0; k < rn && ok; k++) {
    if (repl[k] == '$' && k + 1 < rn && repl[k + 1] >= '0' && repl[k + 1] <= '9') {
      int g = repl[++k] - '0';
      if ((size_t)g <= re->re_nsub && m[g].rm_so >= 0)
        ok = dp_ev_buf_put(b, at + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
    } else if (repl[k] == '\\' && k + 1 < rn) {
      ok = dp_ev_buf_putc(b, repl[++k]);
    } else {
      ok = dp_ev_buf_putc(b, repl[k]);
    }
  }
  return ok;
}

/* REGEXP_REPLACE: every match, left to right; an empty match steps over one
** character. */
static int regexp_replace_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  dp_ev_buf *b = &s->buf;
  const char *subject;
  int rc = regexp_prepare(s, i, s0, n0, &subject);
  if (rc != DIPPER_OK) return rc;
  regmatch_t m[10];
  size_t rn;
  const char *repl = arg_str(s, 2, i, &rn);
  bool ok = true;
  size_t at = 0;
  while (ok && at <= n0) {
    int flags = at > 0 ? REG_NOTBOL : 0;
    if (regexec(&s->re.re, subject + at, 10, m, flags) != 0) break;
    size_t ms = at + (size_t)m[0].rm_so, me = at + (size_t)m[0].rm_eo;
    ok = dp_ev_buf_put(b, subject + at, ms - at) && put_replacement(b, repl, rn, &s->re.re, m, subject + at);
    if (me == ms) { /* an empty match: step over one character */
      if (ms < n0) ok = ok && dp_ev_buf_putc(b, subject[ms]);
      at = ms + 1;
    } else {
      at = me;
    }
  }
  if (ok && at < n0) ok = dp_ev_buf_put(b, subject + at, n0 - at);
  return buf_result(ok);
}

/* SPLIT_INDEX: the piece numbered from 0, NULL past the last one. */
static int split_index_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  size_t n1;
  const char *sep = arg_str(s, 1, i, &n1);
  int64_t want = arg_i64(s, 2, i);
  if (want < 0 || n1 == 0) return STR_NULL;
  size_t at = 0;
  for (int64_t k = 0;; k++) {
    const char *hit = find_bytes(s0 + at, n0 - at, sep, n1);
    size_t end = hit ? (size_t)(hit - s0) : n0;
    if (k == want) return buf_result(dp_ev_buf_put(&s->buf, s0 + at, end - at));
    if (!hit) return STR_NULL;
    at = end + n1;
  }
}

/* UUID: a version 4 UUID from the batch's splitmix64 sequence. */
static int uuid_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)i, (void)s0, (void)n0;
  uint8_t u[16];
  for (int k = 0; k < 16; k += 8) {
    uint64_t x = (s->rng += UINT64_C(0x9e3779b97f4a7c15));
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    memcpy(u + k, &x, 8);
  }
  u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* version 4 */
  u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
  bool ok = true;
  for (int k = 0; k < 16 && ok; k++) {
    if (k == 4 || k == 6 || k == 8 || k == 10) ok = dp_ev_buf_putc(&s->buf, '-');
    ok = ok && put_hex(&s->buf, &u[k], 1, false);
  }
  return buf_result(ok);
}

/* ---- Flink's further string functions (docs/sql.md) ---- */

/* The next match of s->re in the subject (n bytes, NUL-terminated) searched
** from byte `at`, as Java's Matcher.find() goes: after an empty match the
** search moves on one character.  m[] gets absolute offsets; false when
** there is none. */
static bool rx_find(sctx *s, const char *subject, size_t n, size_t *at, regmatch_t *m, size_t nm) {
  if (*at > n) return false;
  if (regexec(&s->re.re, subject + *at, nm, m, *at > 0 ? REG_NOTBOL : 0) != 0) return false;
  for (size_t g = 0; g < nm; g++)
    if (m[g].rm_so >= 0) {
      m[g].rm_so += (regoff_t)*at;
      m[g].rm_eo += (regoff_t)*at;
    }
  size_t ms = (size_t)m[0].rm_so, me = (size_t)m[0].rm_eo;
  *at = me > ms ? me : me < n ? next_char(subject, n, me) : n + 1;
  return true;
}

/* A regexp argument that does not compile makes the REGEXP_COUNT /
** _INSTR / _SUBSTR / _EXTRACT_ALL result NULL (Flink catches the
** PatternSyntaxException); rx_quiet compiles without a diagnostic. */
static int rx_quiet(sctx *s, int64_t i, const char *s0, size_t n0, const char **subject, bool *bad) {
  size_t pn;
  const char *pat = arg_str(s, 1, i, &pn);
  *bad = false;
  if (!(s->re.ready && s->re.len == pn && memcmp(s->re.pattern, pat, pn) == 0)) {
    rx_free(&s->re);
    dp_ev_buf b = {0};
    if (!rx_translate(pat, pn, false, NULL, &b) || !dp_ev_buf_put(&b, "", 0)) {
      free(b.p);
      return DIPPER_NOMEM;
    }
    int err = regcomp(&s->re.re, b.p, REG_EXTENDED);
    free(b.p);
    s->re.pattern = malloc(pn ? pn : 1);
    if (!s->re.pattern) {
      if (!err) regfree(&s->re.re);
      return DIPPER_NOMEM;
    }
    memcpy(s->re.pattern, pat, pn);
    s->re.len = pn;
    s->re.ready = !err;
    s->re_bad = err != 0;
  }
  *bad = s->re_bad;
  if (*bad) return DIPPER_OK;
  *subject = cstr(&s->scratch, s0, n0);
  return *subject ? DIPPER_OK : DIPPER_NOMEM;
}

/* REGEXP_SUBSTR: the first match, NULL without one. */
static int regexp_substr_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  const char *subject = NULL;
  bool bad;
  int rc = rx_quiet(s, i, s0, n0, &subject, &bad);
  if (rc || bad) return rc ? rc : STR_NULL;
  regmatch_t m[1];
  size_t at = 0;
  if (!rx_find(s, subject, n0, &at, m, 1)) return STR_NULL;
  return buf_result(dp_ev_buf_put(&s->buf, subject + m[0].rm_so, (size_t)(m[0].rm_eo - m[0].rm_so)));
}

/* REGEXP_COUNT (the matches) and REGEXP_INSTR (the 1-based character
** position of the first, 0 without one). */
static int regexp_count_row(sctx *s, int64_t i, const char *s0, size_t n0) {
  const char *subject = NULL;
  bool bad;
  int rc = rx_quiet(s, i, s0, n0, &subject, &bad);
  if (rc || bad) return rc ? rc : dp_vector_append_null(s->out);
  regmatch_t m[1];
  size_t at = 0;
  if (call_id(s) == DP_F_REGEXP_INSTR)
    return dp_vector_append_i64(s->out, rx_find(s, subject, n0, &at, m, 1)
                                            ? (int64_t)utf8_len(subject, (size_t)m[0].rm_so) + 1 : 0);
  int64_t count = 0;
  while (rx_find(s, subject, n0, &at, m, 1)) count++;
  return dp_vector_append_i64(s->out, count);
}

/* REGEXP_EXTRACT_ALL: group `index` (default 1) of every match; a group
** that took no part is a NULL element; NULL for an index the pattern has
** no group for. */
static int regexp_extract_all_row(sctx *s, int64_t i) {
  size_t n0;
  const char *s0 = arg_str(s, 0, i, &n0), *subject = NULL;
  bool bad;
  int rc = rx_quiet(s, i, s0, n0, &subject, &bad);
  if (rc || bad) return rc ? rc : dp_vector_append_null(s->out);
  int64_t group = s->nargs > 2 ? arg_i64(s, 2, i) : 1;
  if (group < 0 || (size_t)group > s->re.re.re_nsub) return dp_vector_append_null(s->out);
  if (group > 9)
    return dp_ev_data_error(s->c, s->e, "REGEXP_EXTRACT_ALL reads groups 0 to 9; group %lld is past them",
                            (long long)group);
  regmatch_t m[10];
  dp_vector *elems = s->out->children[0];
  size_t at = 0;
  while (!rc && rx_find(s, subject, n0, &at, m, 10)) {
    const regmatch_t *g = &m[group];
    rc = g->rm_so < 0 ? dp_vector_append_null(elems)
                      : dp_vector_append_str(elems, subject + g->rm_so, (size_t)(g->rm_eo - g->rm_so));
  }
  return rc ? rc : dp_vector_append_list(s->out);
}

/* Code point at p (n > 0 bytes), its length in *len. */
static unsigned utf8_cp(const char *p, size_t n, size_t *len) {
  const unsigned char *u = (const unsigned char *)p;
  size_t k = next_char(p, n, 0);
  *len = k;
  if (k == 1 || u[0] < 0xC0) return u[0];
  unsigned cp = u[0] & (k == 2 ? 0x1Fu : k == 3 ? 0x0Fu : 0x07u);
  for (size_t q = 1; q < k; q++) cp = cp << 6 | (u[q] & 0x3Fu);
  return cp;
}

/* TRANSLATE(s, from, to): each character of `from` in s becomes the one at
** its place in `to`, or goes when `to` is shorter; the first place of a
** character repeated in `from` counts.  A NULL `from` or `to` is taken as
** '' (Flink gives s back for a NULL `from`). */
static int translate_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  size_t nf = 0, nt = 0;
  const char *from = "", *to = "";
  if (!dp_ev_null(&s->args[1], i)) from = arg_str(s, 1, i, &nf);
  if (!dp_ev_null(&s->args[2], i)) to = arg_str(s, 2, i, &nt);
  bool ok = true;
  for (size_t k = 0; k < n0 && ok;) {
    size_t cl = next_char(s0, n0, k), place = 0, fl;
    const char *hit = NULL;
    for (size_t f = 0; f < nf; f += fl, place++) {
      fl = next_char(from, nf, f) - f;
      if (fl == cl - k && memcmp(from + f, s0 + k, fl) == 0) {
        hit = from + f;
        break;
      }
    }
    if (!hit) {
      ok = dp_ev_buf_put(&s->buf, s0 + k, cl - k);
    } else {
      size_t t = utf8_offset(to, nt, place);
      if (t < nt) ok = dp_ev_buf_put(&s->buf, to + t, next_char(to, nt, t) - t);
    }
    k = cl;
  }
  return buf_result(ok);
}

/* ELT(n, s1, s2, ...): s_n, NULL when n is out of range or s_n is NULL. */
static int elt_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)s0, (void)n0;
  int64_t k = arg_i64(s, 0, i);
  if (k < 1 || k >= s->nargs || dp_ev_null(&s->args[k], i)) return STR_NULL;
  size_t n;
  const char *p = arg_str(s, (int)k, i, &n);
  return buf_result(dp_ev_buf_put(&s->buf, p, n));
}

static int hexval(char h) {
  return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
}

/* UNHEX: the bytes of pairs of hex digits; NULL when a character is not a
** hex digit.  An odd count drops the first digit and starts with a zero
** byte (Flink: '41424' is X'001424'). */
static int unhex_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)i;
  bool ok = true;
  size_t k = n0 % 2;
  if (k && hexval(s0[0]) < 0) return STR_NULL;
  if (k) ok = dp_ev_buf_putc(&s->buf, 0);
  for (; k < n0 && ok; k += 2) {
    int hi = hexval(s0[k]), lo = hexval(s0[k + 1]);
    if (hi < 0 || lo < 0) return STR_NULL;
    ok = dp_ev_buf_putc(&s->buf, (char)(hi << 4 | lo));
  }
  return buf_result(ok);
}

/* BIN: the two's complement bits of a BIGINT without leading zeros. */
static int bin_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  (void)s0, (void)n0;
  uint64_t x = (uint64_t)arg_i64(s, 0, i);
  char tmp[64];
  size_t k = sizeof tmp;
  do {
    tmp[--k] = (char)('0' + (x & 1));
    x >>= 1;
  } while (x);
  return buf_result(dp_ev_buf_put(&s->buf, tmp + k, sizeof tmp - k));
}

/* OVERLAY(s PLACING r FROM start [FOR len]), as Flink: s's characters
** before start, r, then those from start + len on (len defaults to r's
** length); a start outside 1 .. CHAR_LENGTH(s) gives s back, a len <= 0
** drops the rest of s (Flink: OVERLAY('hello' PLACING 'XX' FROM 2 FOR 0)
** is 'hXX'). */
static int overlay_step(sctx *s, int64_t i, const char *s0, size_t n0) {
  size_t nr;
  const char *r = arg_str(s, 1, i, &nr);
  int64_t start = arg_i64(s, 2, i);
  int64_t len = s->nargs > 3 ? arg_i64(s, 3, i) : (int64_t)utf8_len(r, nr);
  int64_t chars = (int64_t)utf8_len(s0, n0);
  if (start < 1 || start > chars) return buf_result(dp_ev_buf_put(&s->buf, s0, n0));
  size_t a = utf8_offset(s0, n0, (size_t)(start - 1));
  size_t z = len <= 0 || len > chars - (start - 1) ? n0 : utf8_offset(s0, n0, (size_t)(start - 1 + len));
  bool ok = dp_ev_buf_put(&s->buf, s0, a) && dp_ev_buf_put(&s->buf, r, nr);
  if (ok && z < n0) ok = dp_ev_buf_put(&s->buf, s0 + z, n0 - z);
  return buf_result(ok);
}

/* The step of each string-valued function; NULL for the others. */
static str_step *const str_steps[DP_F_COUNT_] = {
    [DP_F_CONCAT] = concat_step,
    [DP_F_CONCAT_WS] = concat_ws_step,
    [DP_F_LOWER] = case_step,
    [DP_F_UPPER] = case_step,
    [DP_F_INITCAP] = initcap_step,
    [DP_F_SUBSTRING] = substring_step,
    [DP_F_TRIM] = trim_step,
    [DP_F_LTRIM] = trim_step,
    [DP_F_RTRIM] = trim_step,
    [DP_F_REPLACE] = replace_step,
    [DP_F_LPAD] = pad_step,
    [DP_F_RPAD] = pad_step,
    [DP_F_REPEAT] = repeat_step,
    [DP_F_REVERSE] = reverse_step,
    [DP_F_LEFT] = left_right_step,
    [DP_F_RIGHT] = left_right_step,
    [DP_F_MD5] = digest_step,
    [DP_F_SHA1] = digest_step,
    [DP_F_SHA256] = digest_step,
    [DP_F_TO_BASE64] = to_base64_step,
    [DP_F_FROM_BASE64] = from_base64_step,
    [DP_F_CHR] = chr_step,
    [DP_F_HEX] = hex_step,
    [DP_F_REGEXP_EXTRACT] = regexp_extract_step,
    [DP_F_REGEXP_REPLACE] = regexp_replace_step,
    [DP_F_SPLIT_INDEX] = split_index_step,
    [DP_F_UUID] = uuid_step,
    [DP_F_REGEXP_SUBSTR] = regexp_substr_step,
    [DP_F_TRANSLATE] = translate_step,
    [DP_F_ELT] = elt_step,
    [DP_F_UNHEX] = unhex_step,
    [DP_F_BIN] = bin_step,
    [DP_F_OVERLAY] = overlay_step,
    [DP_F_SHA224] = digest_step,
    [DP_F_SHA384] = digest_step,
    [DP_F_SHA512] = digest_step,
    [DP_F_SHA2] = digest_step,
};

static str_step *step_of(int id) { return id >= 0 && id < DP_F_COUNT_ ? str_steps[id] : NULL; }

/* One row of a string-valued function: its step, then the value or NULL. */
static int string_row(sctx *s, int64_t i) {
  str_step *step = step_of(call_id(s));
  if (!step) return dp_ev_fail(s->c, s->e, DIPPER_INTERNAL, "no string kernel for %s", s->e->u.call.fn->name);
  size_t n0 = 0;
  const char *s0 = s->nargs > 0 && s->args[0].v->phys == DP_PHYS_VARBIN ? arg_str(s, 0, i, &n0) : "";
  s->buf.len = 0;
  int rc = step(s, i, s0, n0);
  if (rc == STR_NULL) return dp_vector_append_null(s->out);
  if (rc != DIPPER_OK) return rc;
  return put_result(s);
}

/* Java's Character.isLetter beyond ASCII, for the common scripts: Latin-1
** and Latin Extended, Greek, Cyrillic, Hebrew, Arabic, kana, CJK, Hangul. */
static bool is_letter_cp(unsigned cp) {
  static const unsigned ranges[][2] = {
      {0xAA, 0xAA},     {0xB5, 0xB5},     {0xBA, 0xBA},     {0xC0, 0xD6},     {0xD8, 0xF6},
      {0xF8, 0x2C1},    {0x370, 0x374},   {0x376, 0x377},   {0x37B, 0x37D},   {0x386, 0x386},
      {0x388, 0x3FF},   {0x400, 0x481},   {0x48A, 0x52F},   {0x5D0, 0x5EA},   {0x620, 0x64A},
      {0x3041, 0x3096}, {0x30A1, 0x30FA}, {0x4E00, 0x9FFF}, {0xAC00, 0xD7A3},
  };
  for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++)
    if (cp >= ranges[k][0] && cp <= ranges[k][1]) return cp != 0xD7 && cp != 0xF7 && cp != 0x3F6;
  return false;
}

static bool is_digits(const char *p, size_t n, size_t *k) {
  size_t from = *k;
  while (*k < n && p[*k] >= '0' && p[*k] <= '9') (*k)++;
  return *k > from;
}

/* Does the text read as Java's Double.parseDouble reads it (IS_DECIMAL in
** Flink)?  Blanks (<= ' ') around it, a sign, NaN, Infinity, or digits with
** an optional '.', exponent and f/F/d/D suffix; hex floats are not taken. */
static bool java_double_text(const char *p, size_t n) {
  size_t a = 0, z = n;
  while (a < z && (unsigned char)p[a] <= ' ') a++;
  while (z > a && (unsigned char)p[z - 1] <= ' ') z--;
  p += a;
  n = z - a;
  size_t k = n > 0 && (p[0] == '+' || p[0] == '-') ? 1 : 0;
  if (n - k == 3 && memcmp(p + k, "NaN", 3) == 0) return true;
  if (n - k == 8 && memcmp(p + k, "Infinity", 8) == 0) return true;
  bool whole = is_digits(p, n, &k), frac = false;
  if (k < n && p[k] == '.') {
    k++;
    frac = is_digits(p, n, &k);
  }
  if (!whole && !frac) return false;
  if (k < n && (p[k] == 'e' || p[k] == 'E')) {
    k++;
    if (k < n && (p[k] == '+' || p[k] == '-')) k++;
    if (!is_digits(p, n, &k)) return false;
  }
  if (k < n && strchr("fFdD", p[k])) k++;
  return k == n;
}

/* IS_ALPHA (letters only), IS_DIGIT (ASCII digits only): false for '';
** IS_DECIMAL: java_double_text. */
static bool is_class(int id, const char *p, size_t n) {
  if (id == DP_F_IS_DECIMAL) return java_double_text(p, n);
  if (n == 0) return false;
  for (size_t k = 0; k < n;) {
    size_t len;
    unsigned cp = utf8_cp(p + k, n - k, &len);
    bool in = id == DP_F_IS_DIGIT ? cp >= '0' && cp <= '9'
                                  : (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || is_letter_cp(cp);
    if (!in) return false;
    k += len;
  }
  return true;
}

/* Functions with an INT or BOOLEAN result. */
static int scalar_row(sctx *s, int64_t i) {
  int id = s->e->u.call.fn->id;
  size_t n0 = 0, n1 = 0;
  if ((id == DP_F_IS_ALPHA || id == DP_F_IS_DIGIT || id == DP_F_IS_DECIMAL) && dp_ev_null(&s->args[0], i))
    return dp_vector_append_bool(s->out, false); /* Flink: false, not NULL */
  const char *s0 = arg_str(s, 0, i, &n0);
  switch (id) {
  case DP_F_CHAR_LENGTH: return dp_vector_append_i64(s->out, (int64_t)utf8_len(s0, n0));
  case DP_F_REGEXP_COUNT:
  case DP_F_REGEXP_INSTR: return regexp_count_row(s, i, s0, n0);
  case DP_F_IS_ALPHA:
  case DP_F_IS_DIGIT:
  case DP_F_IS_DECIMAL: return dp_vector_append_bool(s->out, is_class(id, s0, n0));
  case DP_F_ASCII: return dp_vector_append_i64(s->out, n0 ? (unsigned char)s0[0] : 0);
  case DP_F_POSITION:
  case DP_F_LOCATE: {
    /* needle first, then the string searched */
    const char *hay = arg_str(s, 1, i, &n1);
    int64_t start = s->nargs > 2 ? arg_i64(s, 2, i) : 1;
    if (start < 1) return dp_vector_append_i64(s->out, 0);
    size_t from = utf8_offset(hay, n1, (size_t)(start - 1));
    if (from > n1 || (from == n1 && n0 > 0)) return dp_vector_append_i64(s->out, 0);
    const char *hit = find_bytes(hay + from, n1 - from, s0, n0);
    return dp_vector_append_i64(s->out, hit ? (int64_t)utf8_len(hay, (size_t)(hit - hay)) + 1 : 0);
  }
  case DP_F_LIKE:
  case DP_F_NOT_LIKE: {
    like_pat *p;
    int rc = like_get(s, i, &p);
    if (rc) return rc;
    return dp_vector_append_bool(s->out, like_match(p, s0, n0) == (id == DP_F_LIKE));
  }
  default: { /* SIMILAR TO, RLIKE, REGEXP */
    size_t pn, en = 0;
    const char *pat = arg_str(s, 1, i, &pn);
    const char *esc = s->nargs > 2 ? arg_str(s, 2, i, &en) : NULL;
    int rc = rx_get(s->c, s->e, &s->re, pat, pn, id == DP_F_SIMILAR_TO, en == 1 ? esc : NULL);
    if (rc) return rc;
    const char *subject = cstr(&s->scratch, s0, n0);
    if (!subject) return DIPPER_NOMEM;
    return dp_vector_append_bool(s->out, regexec(&s->re.re, subject, 0, NULL, 0) == 0);
  }
  }
}

static int split_row(sctx *s, int64_t i) {
  size_t n0, n1;
  const char *s0 = arg_str(s, 0, i, &n0), *sep = arg_str(s, 1, i, &n1);
  dp_vector *elems = s->out->children[0];
  int rc = DIPPER_OK;
  if (n0 == 0) {
    /* splitting '' gives one empty string (Spark) */
    rc = dp_vector_append_str(elems, "", 0);
  } else if (n1 == 0) {
    for (size_t k = 0; k < n0 && !rc;) {
      size_t nx = next_char(s0, n0, k);
      rc = dp_vector_append_str(elems, s0 + k, nx - k);
      k = nx;
    }
  } else {
    size_t at = 0;
    for (;;) {
      const char *hit = find_bytes(s0 + at, n0 - at, sep, n1);
      size_t end = hit ? (size_t)(hit - s0) : n0;
      rc = dp_vector_append_str(elems, s0 + at, end - at);
      if (rc || !hit) break;
      at = end + n1;
    }
  }
  return rc ? rc : dp_vector_append_list(s->out);
}

static int k_string(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  int id = e->u.call.fn->id;
  sctx s = {0};
  s.c = c;
  s.e = e;
  s.args = args;
  s.nargs = e->u.call.nargs;
  s.out = dp_ev_new(e->type, n);
  if (!s.out) return DIPPER_NOMEM;
  if (id == DP_F_UUID) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s.rng = (uint64_t)ts.tv_nsec * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)ts.tv_sec ^
            (uint64_t)(uintptr_t)s.out;
  }
  dp_phys rp = s.out->phys;
  int rc = DIPPER_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    bool null = id == DP_F_CONCAT_WS || id == DP_F_ELT ? dp_ev_null(&args[0], i)
                : id == DP_F_TRANSLATE ? dp_ev_null(&args[0], i)
                : id == DP_F_IS_ALPHA || id == DP_F_IS_DIGIT || id == DP_F_IS_DECIMAL ? false
                                       : dp_ev_any_null(args, s.nargs, i);
    if (null) {
      rc = dp_vector_append_null(s.out);
    } else if (id == DP_F_SPLIT) {
      rc = split_row(&s, i);
    } else if (id == DP_F_REGEXP_EXTRACT_ALL) {
      rc = regexp_extract_all_row(&s, i);
    } else if (rp == DP_PHYS_VARBIN) {
      rc = string_row(&s, i);
    } else {
      rc = scalar_row(&s, i);
    }
  }
  free(s.buf.p);
  free(s.scratch.p);
  like_free(&s.like);
  free(s.like_src);
  rx_free(&s.re);
  if (rc) {
    dp_vector_free(s.out);
    return rc;
  }
  *out = s.out;
  return DIPPER_OK;
}

dp_ev_kernel dp_ev_kernel_string(int fn_id) {
  if (step_of(fn_id)) return k_string;
  dp_ev_kernel k = dp_ev_kernel_json(fn_id); /* eval_json.c */
  if (!k) k = dp_ev_kernel_url(fn_id);      /* eval_url.c */
  if (!k) k = dp_ev_kernel_text(fn_id);     /* eval_text.c */
  if (k) return k;
  switch (fn_id) { /* the functions with an INT, BOOLEAN or ARRAY result */
  case DP_F_LIKE:
  case DP_F_NOT_LIKE:
  case DP_F_SIMILAR_TO:
  case DP_F_RLIKE:
  case DP_F_REGEXP:
  case DP_F_SPLIT:
  case DP_F_REGEXP_EXTRACT_ALL:
  case DP_F_REGEXP_COUNT:
  case DP_F_REGEXP_INSTR:
  case DP_F_IS_ALPHA:
  case DP_F_IS_DIGIT:
  case DP_F_IS_DECIMAL:
  case DP_F_CHAR_LENGTH:
  case DP_F_POSITION:
  case DP_F_LOCATE:
  case DP_F_ASCII: return k_string;
  default: return NULL;
  }
}
