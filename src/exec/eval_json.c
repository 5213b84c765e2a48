/*
** eval_json.c — the JSON functions: JSON_VALUE, JSON_QUERY, JSON_EXISTS,
** IS JSON, JSON_OBJECT, JSON_ARRAY, JSON_STRING, JSON_QUOTE, JSON_UNQUOTE.
**
** Semantics are Flink's, whose JSON functions are Calcite's over the
** Jayway JsonPath library:
**   - the whole input must be one JSON value (white space around it): else
**     the ON ERROR behaviour;
**   - the path is `[lax|strict] $` then steps `.key`, `."key"`, `['key']`,
**     `["key"]`, `.["key"]`, `[n]` (from 0), `[*]`, `.*`.  A path with `*`
**     is indefinite: its value is the array of every match (a step that
**     does not apply to an element is skipped); otherwise the one value it
**     names.  A definite path that names nothing (a missing key, an index
**     past the end, a key of a non-object) is empty in lax mode and an
**     error in strict mode, which is the default (a path without `lax` or
**     `strict` is strict in Flink 2.3, unlike the SQL standard and
**     Calcite's documentation); a malformed path is an error;
**   - JSON_VALUE: a scalar (strings unescaped, numbers as Flink writes them
**     back: put_number; JSON_QUERY's numbers too) cast to
**     the RETURNING type; nothing, JSON null or (lax) a non-scalar is
**     empty; (strict) a non-scalar, a failed cast or malformed JSON is an
**     error.  ON EMPTY / ON ERROR: NULL (default), ERROR (the query fails
**     naming the function) or DEFAULT v (v cast to the type; if that cast
**     fails, ON EMPTY falls through to the ON ERROR behaviour and ON ERROR
**     fails);
**   - JSON_QUERY: an object or array as compact JSON text (no white space
**     outside strings); WITH CONDITIONAL ARRAY WRAPPER wraps anything that
**     is not an array, WITH [UNCONDITIONAL] ARRAY WRAPPER everything; after
**     wrapping a scalar or nothing is empty (lax) or an error (strict);
**     ON EMPTY / ON ERROR: NULL, EMPTY ARRAY ('[]'), EMPTY OBJECT ('{}'),
**     ERROR;
**   - strict mode: a definite path that names JSON null is an error too
**     (JSON_VALUE, JSON_QUERY, JSON_EXISTS); lax: JSON null is empty;
**   - JSON_EXISTS: whether the path names a value that is not JSON null
**     (an indefinite path: always, its list exists even when empty); errors (strict, malformed)
**     give the ON ERROR value: FALSE (default), TRUE, UNKNOWN (NULL), ERROR;
**   - JSON text written (JSON_QUERY, JSON_OBJECT, JSON_ARRAY, JSON_STRING)
**     has every object's keys sorted, at every level, as Flink's Jackson
**     (ORDER_MAP_ENTRIES_BY_KEYS): Java's String order, UTF-16 code units
**     of the unescaped key (so a supplementary character sorts before
**     U+E000..U+FFFF, unlike UTF-8 byte order); a repeated key keeps its
**     last value; one qsort per object, at most 64 levels sorted;
**   - JSON_OBJECT / JSON_ARRAY: compact JSON; values as JSON (strings
**     quoted, numbers and booleans bare, times as strings, arrays, maps and
**     rows nested); a value that is a JSON_OBJECT or JSON_ARRAY call is
**     inserted as JSON, not as a string; NULL ON NULL writes null, ABSENT ON
**     NULL leaves the entry out (JSON_OBJECT defaults to NULL, JSON_ARRAY to
**     ABSENT); a NULL key is an error.
** Inputs are untrusted text: the scanner does no allocation, trusts no
** length and nests at most 64 levels.
*/
#include <stdio.h>
#include <stdlib.h>

#include "exec/eval_int.h"
#include "formats/formats.h"
#include "plan/functions.h"

#define MAX_DEPTH 64
#define MAX_STEPS 32

/* ---- scanning ---- */

static const char *ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

static const char *scan_string(const char *p, const char *end) {
  for (p++; p < end; p++) {
    if ((unsigned char)*p < 0x20) return NULL;
    if (*p == '\\') {
      if (++p >= end) return NULL;
      if (*p == 'u') {
        for (int k = 1; k <= 4; k++) {
          char h = p + k < end ? p[k] : 0;
          if (!(is_digit(h) || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) return NULL;
        }
        p += 4;
      } else if (!strchr("\"\\/bfnrt", *p)) {
        return NULL;
      }
      continue;
    }
    if (*p == '"') return p + 1;
  }
  return NULL;
}

static const char *scan_number(const char *p, const char *end) {
  const char *s = p;
  if (p < end && *p == '-') p++;
  if (p >= end || !is_digit(*p)) return NULL;
  if (*p == '0') p++;
  else while (p < end && is_digit(*p)) p++;
  if (p < end && *p == '.') {
    if (++p >= end || !is_digit(*p)) return NULL;
    while (p < end && is_digit(*p)) p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p >= end || !is_digit(*p)) return NULL;
    while (p < end && is_digit(*p)) p++;
  }
  return p > s ? p : NULL;
}

/* The end of the value at p (no leading white space), or NULL when malformed. */
static const char *scan_value(const char *p, const char *end, int depth) {
  if (p >= end || depth > MAX_DEPTH) return NULL;
  switch (*p) {
  case '"': return scan_string(p, end);
  case '{':
  case '[': {
    bool obj = *p == '{';
    char close = obj ? '}' : ']';
    p = ws(p + 1, end);
    if (p < end && *p == close) return p + 1;
    for (;;) {
      if (obj) {
        if (p >= end || *p != '"' || !(p = scan_string(p, end))) return NULL;
        p = ws(p, end);
        if (p >= end || *p != ':') return NULL;
        p = ws(p + 1, end);
      }
      if (!(p = scan_value(p, end, depth + 1))) return NULL;
      p = ws(p, end);
      if (p >= end) return NULL;
      if (*p == close) return p + 1;
      if (*p != ',') return NULL;
      p = ws(p + 1, end);
    }
  }
  case 't': return end - p >= 4 && !memcmp(p, "true", 4) ? p + 4 : NULL;
  case 'f': return end - p >= 5 && !memcmp(p, "false", 5) ? p + 5 : NULL;
  case 'n': return end - p >= 4 && !memcmp(p, "null", 4) ? p + 4 : NULL;
  default: return scan_number(p, end);
  }
}

/* The one JSON value of s[0..n) as [*vs, *ve): false when malformed. */
static bool json_doc(const char *s, size_t n, const char **vs, const char **ve) {
  const char *end = s + n, *p = ws(s, end);
  const char *e = scan_value(p, end, 0);
  if (!e || ws(e, end) != end) return false;
  *vs = p;
  *ve = e;
  return true;
}

/* Does the JSON string literal [p, q) (quotes included) hold `key`? */
static bool string_is(const char *p, const char *q, const char *key, size_t klen) {
  /* keys with escapes are compared after unescaping only for \" and \\ */
  size_t k = 0;
  for (p++, q--; p < q; p++, k++) {
    char ch = *p;
    if (ch == '\\') {
      ch = *++p;
      if (ch == 'u' || !strchr("\"\\/", ch)) return false;
    }
    if (k >= klen || key[k] != ch) return false;
  }
  return k == klen;
}

/* ---- paths ---- */

typedef enum step_kind { ST_KEY, ST_INDEX, ST_ANY_ELEM, ST_ANY_MEMBER } step_kind;

typedef struct step {
  step_kind kind;
  const char *key;
  size_t klen;
  int64_t index;
} step;

typedef struct jpath {
  bool strict, definite;
  int n;
  step steps[MAX_STEPS];
} jpath;

static bool starts_word(const char *p, const char *end, const char *w) {
  size_t n = strlen(w);
  return (size_t)(end - p) >= n && !strncmp(p, w, n);
}

/* A quoted key at p ('..' or ".."): its text and the end. */
static const char *quoted_key(const char *p, const char *end, step *st) {
  char q = *p++;
  const char *s = p;
  while (p < end && *p != q) p++;
  if (p >= end) return NULL;
  st->kind = ST_KEY;
  st->key = s;
  st->klen = (size_t)(p - s);
  return p + 1;
}

/* One step at p (at '.' or '['): the end, or NULL when malformed. */
static const char *parse_step(const char *p, const char *end, step *st) {
  if (*p == '.') {
    p++;
    if (p < end && *p == '*') {
      st->kind = ST_ANY_MEMBER;
      return p + 1;
    }
    if (p < end && (*p == '"' || *p == '\'')) return quoted_key(p, end, st);
    if (p < end && *p == '[') return parse_step(p, end, st); /* $.["a.b"] */
    const char *s = p;
    while (p < end && *p != '.' && *p != '[' && *p != ' ') p++;
    if (p == s) return NULL;
    st->kind = ST_KEY;
    st->key = s;
    st->klen = (size_t)(p - s);
    return p;
  }
  p = ws(p + 1, end);
  if (p >= end) return NULL;
  if (*p == '"' || *p == '\'') {
    if (!(p = quoted_key(p, end, st))) return NULL;
  } else if (*p == '*') {
    st->kind = ST_ANY_ELEM;
    p++;
  } else {
    int64_t x = 0;
    const char *s = p;
    while (p < end && is_digit(*p) && x < INT32_MAX) x = x * 10 + (*p++ - '0');
    if (p == s) return NULL;
    st->kind = ST_INDEX;
    st->index = x;
  }
  p = ws(p, end);
  return p < end && *p == ']' ? p + 1 : NULL;
}

static bool parse_path(const char *s, size_t n, jpath *jp) {
  const char *p = s, *end = s + n;
  memset(jp, 0, sizeof *jp);
  p = ws(p, end);
  jp->strict = true; /* Flink: a path without a mode is strict */
  if (starts_word(p, end, "strict ")) p += 7;
  else if (starts_word(p, end, "lax ")) jp->strict = false, p += 4;
  p = ws(p, end);
  if (p >= end || *p != '$') return false;
  p++;
  jp->definite = true;
  while ((p = ws(p, end)) < end) {
    if (jp->n == MAX_STEPS || (*p != '.' && *p != '[')) return false;
    step *st = &jp->steps[jp->n++];
    if (!(p = parse_step(p, end, st))) return false;
    if (st->kind == ST_ANY_ELEM || st->kind == ST_ANY_MEMBER) jp->definite = false;
  }
  return true;
}

/* What a path names in a document: the matches (spans into the text). */
typedef struct matches {
  const char **s, **e;
  int n, cap;
  bool missing;  /* a definite step named nothing */
  bool nomem;
} matches;

static void add_match(matches *m, const char *s, const char *e) {
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 8;
    const char **ns = realloc(m->s, (size_t)cap * sizeof *ns);
    if (ns) m->s = ns;
    const char **ne = ns ? realloc(m->e, (size_t)cap * sizeof *ne) : NULL;
    if (!ns || !ne) {
      m->nomem = true;
      return;
    }
    m->e = ne;
    m->cap = cap;
  }
  m->s[m->n] = s;
  m->e[m->n++] = e;
}

static void walk(const jpath *jp, int i, const char *v, const char *end, bool inside_any, matches *m);

/* Apply step i's member or element walk to every child of the container at v. */
static void each_child(const jpath *jp, int i, const char *v, const char *end, matches *m) {
  bool obj = *v == '{';
  const step *st = &jp->steps[i];
  const char *p = ws(v + 1, end);
  int64_t k = 0;
  bool found = false;
  while (p < end && *p != (obj ? '}' : ']')) {
    bool take = true;
    if (obj) {
      const char *ke = scan_string(p, end);
      take = st->kind == ST_ANY_MEMBER || st->kind == ST_ANY_ELEM ||
             (st->kind == ST_KEY && string_is(p, ke, st->key, st->klen));
      p = ws(ws(ke, end) + 1, end); /* past ':' */
    } else {
      take = st->kind == ST_ANY_ELEM || (st->kind == ST_INDEX && k == st->index);
    }
    const char *ve = scan_value(p, end, 0);
    if (take && !found) walk(jp, i + 1, p, ve, st->kind == ST_ANY_ELEM || st->kind == ST_ANY_MEMBER, m);
    if (take && (st->kind == ST_KEY || st->kind == ST_INDEX)) found = true;
    p = ws(ve, end);
    if (p < end && *p == ',') p = ws(p + 1, end);
    k++;
  }
  if (!found && (st->kind == ST_KEY || st->kind == ST_INDEX)) m->missing = true;
}

/* Walk steps i.. from the value [v, end). */
static void walk(const jpath *jp, int i, const char *v, const char *end, bool inside_any, matches *m) {
  if (i == jp->n) {
    add_match(m, v, end);
    return;
  }
  const step *st = &jp->steps[i];
  bool fits = (*v == '{' && st->kind != ST_INDEX) || (*v == '[' && st->kind != ST_KEY && st->kind != ST_ANY_MEMBER);
  if (!fits) {
    if (!inside_any) m->missing = true; /* a wildcard's element where a step does not apply: skipped */
    return;
  }
  if (inside_any) {
    /* a missing key in one element of a wildcard is no error */
    bool was = m->missing;
    each_child(jp, i, v, end, m);
    m->missing = was;
  } else {
    each_child(jp, i, v, end, m);
  }
}

/* ---- results ---- */

typedef enum outcome { J_VALUE, J_EMPTY, J_ERROR } outcome;

/* Evaluate the path over one document: the matches, or EMPTY / ERROR. */
static outcome evaluate(const char *doc, size_t dn, const char *path, size_t pn, matches *m) {
  const char *vs, *ve;
  jpath jp;
  m->n = 0;
  m->missing = false;
  if (!json_doc(doc, dn, &vs, &ve) || !parse_path(path, pn, &jp)) return J_ERROR;
  walk(&jp, 0, vs, ve, false, m);
  if (m->missing && jp.definite) return jp.strict ? J_ERROR : J_EMPTY;
  /* strict: a definite path at JSON null names nothing (Calcite's "No results for path") */
  if (jp.strict && jp.definite && m->n == 1 && m->e[0] - m->s[0] == 4 && !memcmp(m->s[0], "null", 4)) return J_ERROR;
  return J_VALUE;
}

static bool is_path_definite(const char *path, size_t pn, bool *strict) {
  jpath jp;
  if (!parse_path(path, pn, &jp)) return true;
  *strict = jp.strict;
  return jp.definite;
}

/* [s, e) without white space outside strings. */
static bool put_compact(dp_ev_buf *b, const char *s, const char *e) {
  bool ok = true, in_str = false;
  for (const char *p = s; p < e && ok; p++) {
    if (in_str) {
      ok = dp_ev_buf_putc(b, *p);
      if (*p == '\\' && p + 1 < e) ok = ok && dp_ev_buf_putc(b, *++p);
      else if (*p == '"') in_str = false;
    } else if (*p == '"') {
      in_str = true;
      ok = dp_ev_buf_putc(b, *p);
    } else if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
      ok = dp_ev_buf_putc(b, *p);
    }
  }
  return ok;
}

static void put_utf8(dp_ev_buf *b, unsigned cp, bool *ok) {
  char q[4];
  size_t n = 1;
  if (cp < 0x80) q[0] = (char)cp;
  else if (cp < 0x800) q[0] = (char)(0xC0 | (cp >> 6)), q[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
  else if (cp < 0x10000)
    q[0] = (char)(0xE0 | (cp >> 12)), q[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), q[2] = (char)(0x80 | (cp & 0x3F)),
    n = 3;
  else
    q[0] = (char)(0xF0 | (cp >> 18)), q[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
    q[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), q[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
  if (*ok) *ok = dp_ev_buf_put(b, q, n);
}

static unsigned hex4(const char *p) {
  unsigned x = 0;
  for (int k = 0; k < 4; k++) {
    char h = p[k];
    x = x * 16 + (unsigned)(is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
  }
  return x;
}

/* The text of the JSON string literal [s, e) (checked by scan_string). */
static bool put_unescaped(dp_ev_buf *b, const char *s, const char *e) {
  bool ok = true;
  for (const char *p = s + 1; p < e - 1 && ok; p++) {
    if (*p != '\\') {
      ok = dp_ev_buf_putc(b, *p);
      continue;
    }
    p++;
    switch (*p) {
    case 'n': ok = dp_ev_buf_putc(b, '\n'); break;
    case 't': ok = dp_ev_buf_putc(b, '\t'); break;
    case 'r': ok = dp_ev_buf_putc(b, '\r'); break;
    case 'b': ok = dp_ev_buf_putc(b, '\b'); break;
    case 'f': ok = dp_ev_buf_putc(b, '\f'); break;
    case 'u': {
      unsigned cp = hex4(p + 1);
      p += 4;
      if (cp >= 0xD800 && cp < 0xDC00 && p + 6 < e && p[1] == '\\' && p[2] == 'u') {
        unsigned lo = hex4(p + 3);
        if (lo >= 0xDC00 && lo < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          p += 6;
        }
      }
      put_utf8(b, cp, &ok);
      break;
    }
    default: ok = dp_ev_buf_putc(b, *p); break; /* " \ / */
    }
  }
  return ok;
}

static bool is_scalar(const char *s) { return *s != '{' && *s != '['; }

/* The next UTF-16 code unit of the JSON string literal's text at *pp (before
** e, the closing quote), as Java's String holds it; *lo keeps the low
** surrogate of a supplementary character written as UTF-8. */
static unsigned next_unit(const char **pp, const char *e, unsigned *lo) {
  if (*lo) {
    unsigned u = *lo;
    *lo = 0;
    return u;
  }
  const unsigned char *p = (const unsigned char *)*pp;
  unsigned cp;
  if (*p == '\\') {
    char ch = (char)p[1];
    *pp += 2;
    if (ch == 'u') {
      *pp += 4;
      return hex4((const char *)p + 2);
    }
    return ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'r' ? '\r' : ch == 'b' ? '\b' : ch == 'f' ? '\f' : (unsigned char)ch;
  }
  size_t n = *p < 0x80 ? 1 : *p < 0xE0 ? 2 : *p < 0xF0 ? 3 : 4;
  if ((const char *)p + n > e) n = 1; /* not UTF-8: byte by byte */
  cp = n == 1 ? *p : (unsigned)(*p & (0x3F >> (n - 1)));
  for (size_t k = 1; k < n; k++) cp = cp << 6 | (p[k] & 0x3F);
  *pp += n;
  if (cp < 0x10000) return cp;
  *lo = 0xDC00 + ((cp - 0x10000) & 0x3FF);
  return 0xD800 + ((cp - 0x10000) >> 10);
}

typedef struct member {
  const char *ks, *ke, *vs, *ve; /* the key literal and the value */
  int idx;
} member;

/* Java's String order of the keys (UTF-16 code units), then input order. */
static int member_cmp(const void *a, const void *b) {
  const member *x = a, *y = b;
  const char *p = x->ks + 1, *q = y->ks + 1;
  unsigned lp = 0, lq = 0;
  while ((p < x->ke - 1 || lp) && (q < y->ke - 1 || lq)) {
    unsigned u = next_unit(&p, x->ke - 1, &lp), v = next_unit(&q, y->ke - 1, &lq);
    if (u != v) return u < v ? -1 : 1;
  }
  bool pe = p >= x->ke - 1 && !lp, qe = q >= y->ke - 1 && !lq;
  if (pe != qe) return pe ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The checked JSON number [s, e) as Flink reads it (Jackson, floats as
** BigDecimal) and writes it back as text: a number without a fraction or
** an exponent as written, but "-0" as "0" (an int, long or BigInteger); any
** other as Java's BigDecimal.toString of its digits and scale (the digits
** of the integer and fraction parts, leading zeros dropped, as the
** unscaled value; the scale the fraction's length less the exponent):
** plain when the scale is >= 0 and the adjusted exponent (that of the
** first digit) >= -6 ("0.000001", "1.0", "0.0010"), else one digit, the
** rest after a point and E with the adjusted exponent signed ("2.5E+3",
** "1E+2", "1.5E-7"); zero has no sign ("-0.0" is "0.0").  An exponent
** beyond 9 digits (a text BigDecimal refuses) is written as it is. */
static bool put_number(dp_ev_buf *b, const char *s, const char *e) {
  const char *p = s, *is, *ie, *fs = NULL, *fe = NULL;
  bool neg = p < e && *p == '-';
  if (neg) p++;
  is = p;
  while (p < e && is_digit(*p)) p++;
  ie = p;
  if (p < e && *p == '.') {
    fs = ++p;
    while (p < e && is_digit(*p)) p++;
    fe = p;
  }
  int64_t x = 0;
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    bool xneg = p < e && *p == '-';
    if (p < e && (*p == '+' || *p == '-')) p++;
    while (p < e && *p == '0') p++;
    if (e - p > 9) return dp_ev_buf_put(b, s, (size_t)(e - s));
    for (; p < e; p++) x = x * 10 + (*p - '0');
    if (xneg) x = -x;
  } else if (!fs) { /* an integer: "-0" is 0 */
    bool zero = ie - is == 1 && *is == '0';
    return zero ? dp_ev_buf_putc(b, '0') : dp_ev_buf_put(b, s, (size_t)(e - s));
  }
  /* the unscaled digits: [is, ie) then [fs, fe), leading zeros dropped */
  size_t ni = (size_t)(ie - is), nf = fs ? (size_t)(fe - fs) : 0, nd = ni + nf;
  char *d = malloc(nd + 1);
  if (!d) return false;
  memcpy(d, is, ni);
  if (nf) memcpy(d + ni, fs, nf);
  size_t lead = 0;
  while (lead + 1 < nd && d[lead] == '0') lead++;
  const char *c = d + lead;
  int64_t len = (int64_t)(nd - lead), scale = (int64_t)nf - x, adj = -scale + (len - 1);
  bool ok = !(neg && !(len == 1 && c[0] == '0')) || dp_ev_buf_putc(b, '-');
  if (scale == 0) {
    ok = ok && dp_ev_buf_put(b, c, (size_t)len);
  } else if (scale > 0 && adj >= -6) {
    if (len > scale) {
      ok = ok && dp_ev_buf_put(b, c, (size_t)(len - scale)) && dp_ev_buf_putc(b, '.') &&
           dp_ev_buf_put(b, c + len - scale, (size_t)scale);
    } else {
      ok = ok && dp_ev_buf_put(b, "0.", 2);
      for (int64_t k = 0; ok && k < scale - len; k++) ok = dp_ev_buf_putc(b, '0');
      ok = ok && dp_ev_buf_put(b, c, (size_t)len);
    }
  } else {
    ok = ok && dp_ev_buf_putc(b, c[0]);
    if (len > 1) ok = ok && dp_ev_buf_putc(b, '.') && dp_ev_buf_put(b, c + 1, (size_t)(len - 1));
    if (adj != 0) {
      char xs[32];
      int n = snprintf(xs, sizeof xs, "E%s%lld", adj > 0 ? "+" : "", (long long)adj);
      ok = ok && dp_ev_buf_put(b, xs, (size_t)n);
    }
  }
  free(d);
  return ok;
}

/* The checked JSON value [s, e) as compact text with every object's keys in
** Java's String order and a repeated key's last value only, as Flink's
** Jackson writes it (ORDER_MAP_ENTRIES_BY_KEYS); with `numbers` each number
** as Flink writes it back (put_number: JSON_QUERY's values).  Beyond
** MAX_DEPTH levels the rest is written compact as it is. */
static bool put_sorted(dp_ev_buf *b, const char *s, const char *e, int depth, bool numbers) {
  s = ws(s, e);
  const char *ne = numbers && s < e && (*s == '-' || is_digit(*s)) ? scan_number(s, e) : NULL;
  if (ne) return put_number(b, s, ne);
  if (s >= e || (*s != '{' && *s != '[') || depth >= MAX_DEPTH) return put_compact(b, s, e);
  bool obj = *s == '{', ok = true;
  char close = obj ? '}' : ']';
  const char *p = ws(s + 1, e);
  if (!obj) {
    ok = dp_ev_buf_putc(b, '[');
    for (bool first = true; ok && p < e && *p != close; first = false) {
      const char *ve = scan_value(p, e, 0);
      if (!ve) return put_compact(b, p, e); /* checked text: not reached */
      ok = (first || dp_ev_buf_putc(b, ',')) && put_sorted(b, p, ve, depth + 1, numbers);
      p = ws(ve, e);
      if (p < e && *p == ',') p = ws(p + 1, e);
    }
    return ok && dp_ev_buf_putc(b, ']');
  }
  member *m = NULL;
  int n = 0, cap = 0;
  while (p < e && *p != close) {
    const char *ke = scan_string(p, e);
    const char *vs = ke ? ws(ws(ke, e) + 1, e) : NULL, *ve = vs ? scan_value(vs, e, 0) : NULL;
    if (!ve) break; /* checked text: not reached */
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      member *nm = realloc(m, (size_t)cap * sizeof *m);
      if (!nm) {
        free(m);
        return false;
      }
      m = nm;
    }
    m[n] = (member){p, ke, vs, ve, n};
    n++;
    p = ws(ve, e);
    if (p < e && *p == ',') p = ws(p + 1, e);
  }
  if (n > 1) qsort(m, (size_t)n, sizeof *m, member_cmp);
  ok = dp_ev_buf_putc(b, '{');
  bool first = true;
  for (int k = 0; k < n && ok; k++) {
    if (k + 1 < n && member_cmp(&(member){m[k].ks, m[k].ke, 0, 0, 0}, &(member){m[k + 1].ks, m[k + 1].ke, 0, 0, 0}) == 0)
      continue; /* a repeated key: its last value wins */
    ok = (first || dp_ev_buf_putc(b, ',')) && dp_ev_buf_put(b, m[k].ks, (size_t)(m[k].ke - m[k].ks)) &&
         dp_ev_buf_putc(b, ':') && put_sorted(b, m[k].vs, m[k].ve, depth + 1, numbers);
    first = false;
  }
  free(m);
  return ok && dp_ev_buf_putc(b, '}');
}

/* ---- the kernels ---- */

typedef struct jctx {
  dp_ev *c;
  const dp_expr *e;
  const dp_ev_arg *args;
  int nargs;
  int64_t n;
  matches m;
  dp_ev_buf buf;
} jctx;

static const char *arg_text(const jctx *j, int k, int64_t i, size_t *len) {
  return dp_ev_str(&j->args[k], i, len);
}

/* Is the clause literal ('NULL', 'ERROR', ...) of argument k (constant:
** sql/parse_json.c writes it), or dflt when there is none, `w`? */
static bool clause_is_(const jctx *j, int k, const char *dflt, const char *w) {
  size_t len;
  const char *s;
  if (k >= j->nargs || dp_ev_null(&j->args[k], 0)) s = dflt, len = strlen(dflt);
  else s = dp_ev_str(&j->args[k], 0, &len);
  return len == strlen(w) && !memcmp(s, w, len);
}

static int fail_row(jctx *j, const char *what) {
  return dp_ev_data_error(j->c, j->e, "%s: %s", j->e->u.call.fn->id == DP_F_JSON_VALUE ? "JSON_VALUE"
                                               : j->e->u.call.fn->id == DP_F_JSON_QUERY ? "JSON_QUERY"
                                                                                        : "JSON_EXISTS",
                          what);
}

/* JSON_VALUE's text of row i into j->buf: VALUE, EMPTY or ERROR. */
static outcome value_row(jctx *j, int64_t i) {
  size_t dn, pn;
  const char *doc = arg_text(j, 0, i, &dn), *path = arg_text(j, 1, i, &pn);
  outcome o = evaluate(doc, dn, path, pn, &j->m);
  if (o != J_VALUE) return o;
  bool strict = false, definite = is_path_definite(path, pn, &strict);
  if (!definite || j->m.n != 1) return strict && (j->m.n > 1 || !definite) ? J_ERROR : J_EMPTY;
  const char *s = j->m.s[0], *e = j->m.e[0];
  if (!is_scalar(s)) return strict ? J_ERROR : J_EMPTY;
  if (e - s == 4 && !memcmp(s, "null", 4)) return J_EMPTY;
  j->buf.len = 0;
  bool ok = *s == '"'                ? put_unescaped(&j->buf, s, e)
            : *s == '-' || is_digit(*s) ? put_number(&j->buf, s, e)
                                        : dp_ev_buf_put(&j->buf, s, (size_t)(e - s));
  return ok ? J_VALUE : J_ERROR;
}

typedef struct vstate {
  uint8_t *what;     /* per row: J_VALUE, J_EMPTY, J_ERROR, 3 = NULL input */
  dp_vector *text;   /* the values as STRING (NULL elsewhere) */
  dp_vector *typed;  /* cast to the result type */
  dp_vector *dflt[2];/* the ON EMPTY and ON ERROR defaults, cast */
} vstate;

static void vstate_free(vstate *v) {
  free(v->what);
  dp_vector_free(v->text);
  if (v->typed != v->text) dp_vector_free(v->typed);
  dp_vector_free(v->dflt[0]);
  dp_vector_free(v->dflt[1]);
}

/* The result of a row whose value is missing (b = 0: ON EMPTY) or failed (1). */
static int value_fallback(jctx *j, vstate *v, int64_t i, int b, dp_vector *out) {
  int mk = b ? 5 : 3;
  if (clause_is_(j, mk, "NULL", "NULL")) return dp_vector_append_null(out);
  if (clause_is_(j, mk, "NULL", "DEFAULT")) {
    int k = b ? 6 : 4;
    if (dp_ev_null(&j->args[k], i) || !dp_vector_is_null(v->dflt[b], i))
      return dp_vector_append_from(out, v->dflt[b], i);
    if (!b) return value_fallback(j, v, i, 1, out); /* the default failed its cast */
    return fail_row(j, "the DEFAULT of ON ERROR does not fit the RETURNING type");
  }
  return fail_row(j, b ? "the value at the path is not a scalar of the RETURNING type, or the JSON or "
                         "path is malformed (ERROR ON ERROR)"
                       : "no value at the path (ERROR ON EMPTY)");
}

/* A kernel's end: its result to *out, or freed when rc says it failed. */
static int give(dp_vector *res, int rc, dp_vector **out) {
  if (rc) {
    dp_vector_free(res);
    return rc;
  }
  *out = res;
  return DIPPER_OK;
}

static int k_json_value(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  jctx j = {c, e, args, e->u.call.nargs, n, {0}, {0}};
  vstate v = {0};
  const dp_type *str = dp_type_of(DP_T_STRING);
  int rc = DIPPER_OK;
  v.what = calloc((size_t)(n ? n : 1), 1);
  v.text = dp_ev_new(str, n);
  if (!v.what || !v.text) rc = DIPPER_NOMEM;
  for (int64_t i = 0; i < n && !rc; i++) {
    v.what[i] = dp_ev_null(&args[0], i) || dp_ev_null(&args[1], i) ? 3 : (uint8_t)value_row(&j, i);
    rc = v.what[i] == J_VALUE ? dp_vector_append_str(v.text, j.buf.p ? j.buf.p : "", j.buf.len)
                              : dp_vector_append_null(v.text);
    if (j.m.nomem) rc = DIPPER_NOMEM;
  }
  dp_vector *res = NULL;
  if (!rc) {
    v.typed = v.text;
    dp_ev_arg t = {v.text, false, false};
    if (!dp_type_equal(e->type, str)) rc = dp_ev_cast(c, e, &t, e->type, true, n, &v.typed);
    for (int b = 0; b < 2 && !rc && j.nargs == 7; b++)
      rc = dp_ev_cast(c, e, &args[b ? 6 : 4], e->type, true, n, &v.dflt[b]);
  }
  if (!rc && !(res = dp_ev_new(e->type, n))) rc = DIPPER_NOMEM;
  for (int64_t i = 0; i < n && !rc; i++) {
    int w = v.what[i];
    if (w == J_VALUE && dp_vector_is_null(v.typed, i)) w = J_ERROR; /* the cast failed */
    if (w == 3) rc = dp_vector_append_null(res);
    else if (w == J_VALUE) rc = dp_vector_append_from(res, v.typed, i);
    else if (j.nargs != 7) rc = dp_vector_append_null(res);
    else rc = value_fallback(&j, &v, i, w == J_ERROR, res);
  }
  vstate_free(&v);
  free(j.m.s);
  free(j.m.e);
  free(j.buf.p);
  return give(res, rc, out);
}

/* JSON_QUERY of row i into j->buf. */
static outcome query_row(jctx *j, int64_t i) {
  size_t dn, pn;
  const char *doc = arg_text(j, 0, i, &dn), *path = arg_text(j, 1, i, &pn);
  outcome o = evaluate(doc, dn, path, pn, &j->m);
  if (o != J_VALUE) return o;
  bool strict = false, definite = is_path_definite(path, pn, &strict);
  j->buf.len = 0;
  bool ok = true, array;
  if (definite && j->m.n == 1 && !(j->m.e[0] - j->m.s[0] == 4 && !memcmp(j->m.s[0], "null", 4))) {
    array = *j->m.s[0] == '[';
    bool wrapped = clause_is_(j, 2, "WITHOUT", "UNCONDITIONAL") || (clause_is_(j, 2, "WITHOUT", "CONDITIONAL") && !array);
    if (!wrapped && is_scalar(j->m.s[0])) return strict ? J_ERROR : J_EMPTY;
    if (wrapped) ok = dp_ev_buf_putc(&j->buf, '[');
    ok = ok && put_sorted(&j->buf, j->m.s[0], j->m.e[0], 0, true);
    if (wrapped) ok = ok && dp_ev_buf_putc(&j->buf, ']');
  } else if (!definite) {
    bool wrapped = clause_is_(j, 2, "WITHOUT", "UNCONDITIONAL"); /* the matches are an array already */
    ok = dp_ev_buf_put(&j->buf, "[[", wrapped ? 2 : 1);
    for (int k = 0; k < j->m.n && ok; k++)
      ok = (k == 0 || dp_ev_buf_putc(&j->buf, ',')) && put_sorted(&j->buf, j->m.s[k], j->m.e[k], 0, true);
    ok = ok && dp_ev_buf_put(&j->buf, "]]", wrapped ? 2 : 1);
  } else {
    return J_EMPTY; /* JSON null */
  }
  return ok ? J_VALUE : J_ERROR;
}

static int k_json_query(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  jctx j = {c, e, args, e->u.call.nargs, n, {0}, {0}};
  dp_vector *res = dp_ev_new(e->type, n);
  int rc = res ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t i = 0; i < n && !rc; i++) {
    if (dp_ev_null(&args[0], i) || dp_ev_null(&args[1], i)) {
      rc = dp_vector_append_null(res);
      continue;
    }
    outcome o = query_row(&j, i);
    if (j.m.nomem) rc = DIPPER_NOMEM;
    else if (o == J_VALUE) rc = dp_vector_append_str(res, j.buf.p, j.buf.len);
    else {
      int mk = o == J_EMPTY ? 3 : 4;
      if (clause_is_(&j, mk, "NULL", "EMPTY ARRAY")) rc = dp_vector_append_str(res, "[]", 2);
      else if (clause_is_(&j, mk, "NULL", "EMPTY OBJECT")) rc = dp_vector_append_str(res, "{}", 2);
      else if (clause_is_(&j, mk, "NULL", "ERROR"))
        rc = fail_row(&j, o == J_EMPTY ? "no object or array at the path (ERROR ON EMPTY)"
                                       : "the JSON or the path is malformed, or strict mode found no "
                                         "object or array (ERROR ON ERROR)");
      else rc = dp_vector_append_null(res);
    }
  }
  free(j.m.s);
  free(j.m.e);
  free(j.buf.p);
  return give(res, rc, out);
}

static int k_json_exists(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  jctx j = {c, e, args, e->u.call.nargs, n, {0}, {0}};
  dp_vector *res = dp_ev_new(e->type, n);
  int rc = res ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t i = 0; i < n && !rc; i++) {
    if (dp_ev_null(&args[0], i) || dp_ev_null(&args[1], i)) {
      rc = dp_vector_append_null(res);
      continue;
    }
    size_t dn, pn;
    const char *doc = arg_text(&j, 0, i, &dn), *path = arg_text(&j, 1, i, &pn);
    outcome o = evaluate(doc, dn, path, pn, &j.m);
    if (j.m.nomem) rc = DIPPER_NOMEM;
    else if (o == J_ERROR) {
      if (clause_is_(&j, 2, "FALSE", "TRUE")) rc = dp_vector_append_bool(res, true);
      else if (clause_is_(&j, 2, "FALSE", "UNKNOWN")) rc = dp_vector_append_null(res);
      else if (clause_is_(&j, 2, "FALSE", "ERROR"))
        rc = fail_row(&j, "the JSON or the path is malformed, or a strict path names nothing (ERROR ON ERROR)");
      else rc = dp_vector_append_bool(res, false);
    } else {
      bool any = false;
      for (int k = 0; k < j.m.n && !any; k++) any = !(j.m.e[k] - j.m.s[k] == 4 && !memcmp(j.m.s[k], "null", 4));
      bool strict = false, definite = is_path_definite(path, pn, &strict);
      rc = dp_vector_append_bool(res, o == J_VALUE && (any || !definite)); /* a wildcard's list, even empty, exists */
    }
  }
  free(j.m.s);
  free(j.m.e);
  return give(res, rc, out);
}

/* ---- IS JSON, JSON_QUOTE, JSON_UNQUOTE, JSON_STRING ---- */

static int k_is_json(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  dp_vector *res = dp_ev_new(e->type, n);
  if (!res) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  size_t kl;
  const char *kind = dp_ev_null(&args[1], 0) ? "VALUE" : dp_ev_str(&args[1], 0, &kl);
  for (int64_t i = 0; i < n && !rc; i++) {
    size_t len;
    const char *vs, *ve, *s = dp_ev_null(&args[0], i) ? NULL : dp_ev_str(&args[0], i, &len);
    bool ok = s && json_doc(s, len, &vs, &ve);
    if (ok && kind[0] == 'S') ok = is_scalar(vs);
    else if (ok && kind[0] == 'A') ok = *vs == '[';
    else if (ok && kind[0] == 'O') ok = *vs == '{';
    rc = dp_vector_append_bool(res, ok);
  }
  return give(res, rc, out);
}

/* A JSON string literal of p[0..n) (formats' escaping) into b. */
static bool quote_into(dp_ev_buf *b, const char *p, size_t n) {
  dp_buf q = DP_BUF_INIT;
  dp_json_put_string(&q, p, n);
  bool ok = !q.oom && dp_ev_buf_put(b, q.data ? q.data : "", q.len);
  dp_buf_free(&q);
  return ok;
}

/* The value of row i of v as JSON: nested JSON text (from JSON_OBJECT or
** JSON_ARRAY) as it is, the rest as the JSON codec writes it. */
static bool put_json_value(dp_ev_buf *b, const dp_vector *v, int64_t row, bool raw) {
  if (raw) {
    size_t len;
    const char *s = dp_vector_get_str(v, row, &len);
    return dp_ev_buf_put(b, s, len);
  }
  dp_buf q = DP_BUF_INIT;
  dp_json_put_value(&q, v, row);
  bool ok = !q.oom && dp_ev_buf_put(b, q.data ? q.data : "", q.len);
  dp_buf_free(&q);
  return ok;
}

static bool is_json_builder(const dp_expr *x) {
  return x->kind == DP_E_CALL && x->u.call.fn &&
         (x->u.call.fn->id == DP_F_JSON_OBJECT || x->u.call.fn->id == DP_F_JSON_ARRAY);
}

/* JSON_OBJECT / JSON_ARRAY of row i into b. */
static int build_row(jctx *j, int64_t i, bool object, bool absent) {
  dp_ev_buf *b = &j->buf;
  b->len = 0;
  bool ok = dp_ev_buf_putc(b, object ? '{' : '['), first = true;
  int stride = object ? 2 : 1;
  for (int k = 1; k + stride - 1 < j->nargs && ok; k += stride) {
    int vk = object ? k + 1 : k;
    bool null = dp_ev_null(&j->args[vk], i);
    if (object && dp_ev_null(&j->args[k], i))
      return dp_ev_data_error(j->c, j->e, "JSON_OBJECT: a key is NULL; keys must be strings");
    if (null && absent) continue;
    if (!first) ok = dp_ev_buf_putc(b, ',');
    first = false;
    if (object) {
      size_t kl;
      const char *key = dp_ev_str(&j->args[k], i, &kl);
      ok = ok && quote_into(b, key, kl) && dp_ev_buf_putc(b, ':');
    }
    if (null) ok = ok && dp_ev_buf_put(b, "null", 4);
    else
      ok = ok && put_json_value(b, j->args[vk].v, dp_ev_row(&j->args[vk], i),
                                is_json_builder(j->e->u.call.args[vk]));
  }
  ok = ok && dp_ev_buf_putc(b, object ? '}' : ']');
  return ok ? DIPPER_OK : DIPPER_NOMEM;
}

static int k_json_build(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  jctx j = {c, e, args, e->u.call.nargs, n, {0}, {0}};
  bool object = e->u.call.fn->id == DP_F_JSON_OBJECT;
  bool absent = clause_is_(&j, 0, "NULL", "ABSENT");
  dp_ev_buf sorted = {0};
  dp_vector *res = dp_ev_new(e->type, n);
  int rc = res ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t i = 0; i < n && !rc; i++) {
    rc = build_row(&j, i, object, absent);
    sorted.len = 0;
    if (!rc) rc = put_sorted(&sorted, j.buf.p, j.buf.p + j.buf.len, 0, false) ? DIPPER_OK : DIPPER_NOMEM;
    if (!rc) rc = dp_vector_append_str(res, sorted.p, sorted.len);
  }
  free(j.buf.p);
  free(sorted.p);
  return give(res, rc, out);
}

static int k_json_text(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  (void)c;
  int id = e->u.call.fn->id;
  dp_vector *res = dp_ev_new(e->type, n);
  dp_ev_buf b = {0}, sorted = {0};
  int rc = res ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t i = 0; i < n && !rc; i++) {
    if (dp_ev_null(&args[0], i)) {
      rc = dp_vector_append_null(res);
      continue;
    }
    b.len = 0;
    bool ok;
    if (id == DP_F_JSON_STRING) {
      sorted.len = 0;
      ok = put_json_value(&sorted, args[0].v, dp_ev_row(&args[0], i), is_json_builder(e->u.call.args[0])) &&
           put_sorted(&b, sorted.p, sorted.p + sorted.len, 0, false);
    } else {
      size_t len;
      const char *s = dp_ev_str(&args[0], i, &len);
      const char *se;
      if (id == DP_F_JSON_QUOTE) ok = quote_into(&b, s, len);
      else if (len >= 2 && *s == '"' && (se = scan_string(s, s + len)) == s + len) ok = put_unescaped(&b, s, s + len);
      else ok = dp_ev_buf_put(&b, s, len); /* not a JSON string: as it is */
    }
    rc = ok ? dp_vector_append_str(res, b.p ? b.p : "", b.len) : DIPPER_NOMEM;
  }
  free(b.p);
  free(sorted.p);
  return give(res, rc, out);
}

dp_ev_kernel dp_ev_kernel_json(int fn_id) {
  switch (fn_id) {
  case DP_F_JSON_VALUE: return k_json_value;
  case DP_F_JSON_QUERY: return k_json_query;
  case DP_F_JSON_EXISTS: return k_json_exists;
  case DP_F_IS_JSON: return k_is_json;
  case DP_F_JSON_OBJECT:
  case DP_F_JSON_ARRAY: return k_json_build;
  case DP_F_JSON_STRING:
  case DP_F_JSON_QUOTE:
  case DP_F_JSON_UNQUOTE: return k_json_text;
  default: return NULL;
  }
}
