/*
** eval_text.c — string functions of Flink 2.x beyond eval_string.c's:
** STARTSWITH, ENDSWITH, INSTR, URL_ENCODE, URL_DECODE.  All give NULL for a
** NULL argument.
**   - STARTSWITH / ENDSWITH(s, affix): an empty affix is a prefix and a
**     suffix of everything;
**   - INSTR(s, sub): the 1-based position (in characters) of the first sub
**     in s, 0 when absent (an empty sub is at 1);
**   - URL_ENCODE: Java's URLEncoder with UTF-8, as Flink: letters, digits
**     and . - * _ stay, a space is '+', every other byte %XX (upper case);
**   - URL_DECODE: Java's URLDecoder: '+' is a space, %XX a byte; a '%' not
**     followed by two hex digits gives NULL (Flink returns NULL where Java
**     throws); bytes that are not UTF-8 decode as Java's UTF-8 decoder does:
**     one U+FFFD per maximal subpart of an ill-formed sequence (Unicode
**     §3.9: a lead byte and the continuation bytes that fit its pattern, or
**     one byte that cannot start a sequence), except that Java takes an
**     encoded surrogate (ED A0..BF 80..BF) as one sequence: one U+FFFD.
*/
#include <stdlib.h>

#include "exec/eval_int.h"
#include "formats/formats.h"
#include "plan/functions.h"

static int hexval(char h) {
  return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
}

static bool url_encode(dp_ev_buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789ABCDEF";
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    unsigned char c = (unsigned char)s[i];
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                c == '-' || c == '*' || c == '_';
    if (keep) ok = dp_ev_buf_putc(b, (char)c);
    else if (c == ' ') ok = dp_ev_buf_putc(b, '+');
    else {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      ok = dp_ev_buf_put(b, e, 3);
    }
  }
  return ok;
}

/* The length of the well-formed UTF-8 character at p (n > 0 bytes left), or
** 0 with *sub the length of its maximal ill-formed subpart (at least 1). */
static size_t utf8_char(const unsigned char *p, size_t n, size_t *sub) {
  unsigned char c = p[0], lo = 0x80, hi = 0xBF;
  size_t len;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else {
    *sub = 1;
    return 0;
  }
  size_t k = 1;
  for (; k < len && k < n; k++) {
    unsigned char lo_k = k == 1 ? lo : 0x80, hi_k = k == 1 ? hi : 0xBF;
    if (p[k] < lo_k || p[k] > hi_k) break;
  }
  /* Java: ED A0..BF 80..BF (a UTF-16 surrogate) is one ill-formed sequence */
  if (k == len && c == 0xED && p[1] >= 0xA0) k = 0;
  else if (k == len) return len;
  *sub = k ? k : 3;
  return 0;
}

/* false with *bad when the text is malformed; tmp is scratch space. */
static bool url_decode(dp_ev_buf *b, dp_ev_buf *tmp, const char *s, size_t n, bool *bad) {
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) {
    char c = s[i];
    if (c == '+') ok = dp_ev_buf_putc(b, ' ');
    else if (c == '%') {
      int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = i + 2 < n ? hexval(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        *bad = true;
        return false;
      }
      ok = dp_ev_buf_putc(b, (char)(hi * 16 + lo));
      i += 2;
    } else {
      ok = dp_ev_buf_putc(b, c);
    }
  }
  if (!ok || dp_utf8_valid_prefix((const unsigned char *)b->p, b->len) == b->len) return ok;
  /* Replace each maximal ill-formed subpart by U+FFFD.  The literal text
  ** around the %XX runs is UTF-8 and starts no continuation, so one pass
  ** over the whole result equals Java's decoding of each run alone. */
  tmp->len = 0;
  const unsigned char *p = (const unsigned char *)b->p;
  for (size_t i = 0, sub = 0; i < b->len && ok;) {
    size_t len = utf8_char(p + i, b->len - i, &sub);
    ok = len ? dp_ev_buf_put(tmp, (const char *)p + i, len) : dp_ev_buf_put(tmp, "\xEF\xBF\xBD", 3);
    i += len ? len : sub;
  }
  dp_ev_buf swap = *b;
  *b = *tmp;
  *tmp = swap;
  return ok;
}

static int64_t char_pos(const char *s, size_t bytes) {
  int64_t k = 0;
  for (size_t i = 0; i < bytes; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80;
  return k;
}

static int k_text(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  int id = e->u.call.fn->id, nargs = e->u.call.nargs;
  dp_vector *res = dp_ev_new(e->type, n);
  dp_ev_buf b = {0}, tmp = {0};
  int rc = res ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t i = 0; i < n && !rc; i++) {
    if (dp_ev_any_null(args, nargs, i)) {
      rc = dp_vector_append_null(res);
      continue;
    }
    size_t n0, n1 = 0;
    const char *s0 = dp_ev_str(&args[0], i, &n0), *s1 = nargs > 1 ? dp_ev_str(&args[1], i, &n1) : NULL;
    switch (id) {
    case DP_F_STARTSWITH: rc = dp_vector_append_bool(res, n1 <= n0 && !memcmp(s0, s1, n1)); break;
    case DP_F_ENDSWITH: rc = dp_vector_append_bool(res, n1 <= n0 && !memcmp(s0 + n0 - n1, s1, n1)); break;
    case DP_F_INSTR: {
      int64_t at = 0;
      for (size_t k = 0; k + n1 <= n0; k++)
        if (!memcmp(s0 + k, s1, n1)) {
          at = char_pos(s0, k) + 1;
          break;
        }
      rc = dp_vector_append_i64(res, at);
      break;
    }
    default: { /* URL_ENCODE, URL_DECODE */
      bool bad = false;
      b.len = 0;
      bool ok = id == DP_F_URL_ENCODE ? url_encode(&b, s0, n0) : url_decode(&b, &tmp, s0, n0, &bad);
      rc = bad ? dp_vector_append_null(res) : ok ? dp_vector_append_str(res, b.p ? b.p : "", b.len) : DIPPER_NOMEM;
    }
    }
  }
  free(b.p);
  free(tmp.p);
  if (rc) {
    dp_vector_free(res);
    return rc;
  }
  *out = res;
  return DIPPER_OK;
}

dp_ev_kernel dp_ev_kernel_text(int fn_id) {
  switch (fn_id) {
  case DP_F_STARTSWITH:
  case DP_F_ENDSWITH:
  case DP_F_INSTR:
  case DP_F_URL_ENCODE:
  case DP_F_URL_DECODE: return k_text;
  default: return NULL;
  }
}
