/*
** json.c — the JSON format (formats.h): one object per record decoded straight
** into the columns of a schema, and rows encoded back as objects.
**
** The decoder is a single pass over the bytes with no tree: each value is
** parsed as its column's type asks and appended to the column's vector, so a
** record costs no allocation once the scratch buffer (unescaped strings) has
** grown.  Keys are found by trying the field after the last one matched
** first (writers keep their key order), then every field exactly, then
** ignoring case.  A decoding plan per ROW type (fields, name lengths, "seen"
** flags) is built once; a type cannot contain itself, so one set of flags per
** plan node is enough even for ROWs inside ARRAYs.
**
** Fast paths (fastscan.h): the key expected next is compared with the raw
** bytes of the input in one 16-byte compare (no unescaping, no lookup), and a
** value in a common form — a whole number, a number for FLOAT/DOUBLE, a
** "yyyy-MM-dd HH:mm:ss[.fff]" timestamp, a string without escapes — is parsed
** straight from the input and appended to its column in the same pass.  Any
** other value, and every error, goes the general way below, so values and
** messages are the same either way ('reference' turns the fast paths off;
** tests/formats/fastscan_test.c compares the two).
**
** Whole records (decode_shape): the records of one producer nearly always
** hold the same keys in the same order, so the decoder keeps that order (the
** schema's at first, then the one the general path last saw in a record whose
** keys were exactly the decoded columns) and reads a record as that sequence:
** each `"name":` checked with one 16-byte compare, its value straight into
** its column, no key lookup, no "seen" flags, no hint.  Any difference — a
** key elsewhere, missing, unknown, escaped, a value not in a fast form that
** the general value path refuses, text after the object — and the record is
** cut back and decoded the general way, which learns the new order or, after
** 8 such records in a row, turns the shape off for the next 1024.
**
** Strictness: the JSON grammar of RFC 8259 (no comments, no trailing commas,
** no single quotes, UTF-8 validated, no raw control characters in strings),
** nesting at most MAX_DEPTH, and a value of the wrong kind for its column is
** an error that names the field and shows the value.  Lenient where Flink
** is: numbers and booleans may come as strings, a STRING column takes the
** text of any value.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/fastscan.h"
#include "formats/formats.h"

#define MAX_DEPTH 64

typedef struct fplan fplan;
struct fplan {
  const dp_type *type;
  int nfields;       /* ROW (and the top level): fields; ARRAY: 1; MAP: 2 */
  fplan *fields;     /* ROW: per field; ARRAY: the element; MAP: key, value */
  const char **names;
  size_t *name_lens;
  bool *plain;       /* the name is printable ASCII without '"' or '\\': its key
                        may be compared with the raw bytes of the input */
  struct keypat {    /* a plain name under 16 bytes and its closing quote, for
                        one 16-byte compare; mask 0: longer */
    unsigned char bytes[16];
    unsigned mask;
  } *keys;
  bool *seen;
  bool *decode;      /* top level only: which columns come from the record */
  int hint;          /* the field expected next */
};

typedef struct seg {
  const char *name;
  size_t len;
  int64_t index; /* -1: a named field */
} seg;

struct dp_json_decoder {
  fplan top;
  const dp_schema *schema;
  dp_json_options opts;
  char *scratch;
  size_t scratch_cap;
  unsigned char *bin; /* decoded base64 */
  size_t bin_cap;
  const char *base, *end;
  dp_format_error *err;
  dp_fast_day day; /* the last timestamp's date */
  seg path[MAX_DEPTH + 1];
  int depth;
  int64_t *lengths; /* per column: the row count before this record */
  /* the record's shape (the fast path of whole records): the decoded columns
  ** in the order the producer writes their keys, each key with its ':' */
  bool shape_ok;         /* every decoded column's name is plain */
  int nshape;            /* decoded columns; shape[0..nshape) their order */
  int *shape;
  struct keypat *colon;  /* per column: "name": for one 16-byte compare (mask 0: longer) */
  char **colon_text;     /* per column: "name": as text, for memcmp */
  int *order, norder;    /* the general path's key order in the last record */
  bool order_clean;      /* ... each key a decoded column, exactly, without escapes */
  int misses;            /* records in a row the shape missed and could not learn */
  int shape_skip;        /* records left before the shape is tried again */
};

/* ---- plans ---- */

static bool plain_name(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\\')
      return false;
  return true;
}

static void key_pattern(struct keypat *k, const char *name, size_t len, bool plain) {
  memset(k, 0, sizeof *k);
  if (!plain || len + 1 > sizeof k->bytes) return;
  memcpy(k->bytes, name, len);
  k->bytes[len] = '"';
  k->mask = (1u << (len + 1)) - 1;
}

static bool plan_init(fplan *f, const dp_type *t) {
  memset(f, 0, sizeof *f);
  f->type = t;
  int n = t->kind == DP_T_ROW ? t->nfields : t->kind == DP_T_ARRAY ? 1 : t->kind == DP_T_MAP ? 2 : 0;
  if (n == 0) return true;
  f->nfields = n;
  f->fields = calloc((size_t)n, sizeof *f->fields);
  if (!f->fields) return false;
  if (t->kind == DP_T_ROW) {
    f->names = calloc((size_t)n, sizeof *f->names);
    f->name_lens = calloc((size_t)n, sizeof *f->name_lens);
    f->seen = calloc((size_t)n, sizeof *f->seen);
    f->plain = calloc((size_t)n, sizeof *f->plain);
    f->keys = calloc((size_t)n, sizeof *f->keys);
    if (!f->names || !f->name_lens || !f->seen || !f->plain || !f->keys) return false;
    for (int i = 0; i < n; i++) {
      f->names[i] = t->fields[i].name ? t->fields[i].name : "";
      f->name_lens[i] = strlen(f->names[i]);
      f->plain[i] = plain_name(f->names[i]);
      key_pattern(&f->keys[i], f->names[i], f->name_lens[i], f->plain[i]);
      if (!plan_init(&f->fields[i], t->fields[i].type)) return false;
    }
    return true;
  }
  if (t->kind == DP_T_ARRAY) return plan_init(&f->fields[0], t->elem);
  return plan_init(&f->fields[0], t->elem) && plan_init(&f->fields[1], t->value);
}

static void plan_free(fplan *f) {
  if (f->fields)
    for (int i = 0; i < f->nfields; i++) plan_free(&f->fields[i]);
  free(f->fields);
  free(f->names);
  free(f->name_lens);
  free(f->seen);
  free(f->plain);
  free(f->keys);
  free(f->decode);
}

dp_json_decoder *dp_json_decoder_new(const dp_schema *schema, const bool *decode_col,
                                     const dp_json_options *opts) {
  if (!schema) return NULL;
  dp_json_decoder *dec = calloc(1, sizeof *dec);
  if (!dec) return NULL;
  dec->schema = schema;
  dec->day.ymd = -1;
  if (opts) dec->opts = *opts;
  int n = schema->ncols;
  fplan *f = &dec->top;
  f->nfields = n;
  size_t cnt = n ? (size_t)n : 1;
  f->fields = calloc(cnt, sizeof *f->fields);
  f->names = calloc(cnt, sizeof *f->names);
  f->name_lens = calloc(cnt, sizeof *f->name_lens);
  f->seen = calloc(cnt, sizeof *f->seen);
  f->plain = calloc(cnt, sizeof *f->plain);
  f->keys = calloc(cnt, sizeof *f->keys);
  f->decode = calloc(cnt, sizeof *f->decode);
  dec->lengths = calloc(cnt, sizeof *dec->lengths);
  if (!f->fields || !f->names || !f->name_lens || !f->seen || !f->plain || !f->keys ||
      !f->decode || !dec->lengths) {
    dp_json_decoder_free(dec);
    return NULL;
  }
  dec->shape = calloc(cnt, sizeof *dec->shape);
  dec->order = calloc(cnt, sizeof *dec->order);
  dec->colon = calloc(cnt, sizeof *dec->colon);
  dec->colon_text = calloc(cnt, sizeof *dec->colon_text);
  if (!dec->shape || !dec->order || !dec->colon || !dec->colon_text) {
    dp_json_decoder_free(dec);
    return NULL;
  }
  dec->shape_ok = true;
  for (int i = 0; i < n; i++) {
    f->names[i] = schema->cols[i].name ? schema->cols[i].name : "";
    f->name_lens[i] = strlen(f->names[i]);
    f->plain[i] = plain_name(f->names[i]);
    key_pattern(&f->keys[i], f->names[i], f->name_lens[i], f->plain[i]);
    f->decode[i] = decode_col ? decode_col[i] : true;
    if (!plan_init(&f->fields[i], schema->cols[i].type)) {
      dp_json_decoder_free(dec);
      return NULL;
    }
    if (!f->decode[i]) continue;
    if (!f->plain[i]) dec->shape_ok = false;
    size_t len = f->name_lens[i];
    char *t = malloc(len + 4);
    if (!t) {
      dp_json_decoder_free(dec);
      return NULL;
    }
    t[0] = '"';
    memcpy(t + 1, f->names[i], len);
    t[len + 1] = '"';
    t[len + 2] = ':';
    t[len + 3] = '\0';
    dec->colon_text[i] = t;
    if (len + 3 <= sizeof dec->colon[i].bytes) {
      memcpy(dec->colon[i].bytes, t, len + 3);
      dec->colon[i].mask = (1u << (len + 3)) - 1;
    }
    dec->shape[dec->nshape++] = i; /* first guess: the schema's order */
  }
  return dec;
}

void dp_json_decoder_free(dp_json_decoder *dec) {
  if (!dec) return;
  if (dec->colon_text)
    for (int i = 0; i < dec->top.nfields; i++) free(dec->colon_text[i]);
  free(dec->colon_text);
  free(dec->colon);
  free(dec->shape);
  free(dec->order);
  plan_free(&dec->top);
  free(dec->scratch);
  free(dec->bin);
  free(dec->lengths);
  free(dec);
}

/* ---- errors ---- */

static void put_path(dp_json_decoder *dec, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 1; i <= dec->depth && len + 1 < cap; i++) {
    const seg *s = &dec->path[i];
    int w;
    if (s->index >= 0)
      w = snprintf(buf + len, cap - len, "[%lld]", (long long)s->index);
    else
      w = snprintf(buf + len, cap - len, "%s%.*s", len ? "." : "", (int)(s->len > 60 ? 60 : s->len),
                   s->name);
    if (w < 0) break;
    len += (size_t)w;
    if (len >= cap) len = cap - 1;
  }
}

/* Record the error at `at`; `value` (may be NULL) is shown, cut to 40 bytes. */
static int fail(dp_json_decoder *dec, const char *at, const char *value, size_t vlen,
                const char *what) {
  dp_format_error *e = dec->err;
  if (!e) return DIPPER_DATA;
  e->offset = at ? (int64_t)(at - dec->base) : 0;
  char path[160];
  put_path(dec, path, sizeof path);
  char shown[64] = "";
  if (value) {
    size_t k = 0;
    for (size_t i = 0; i < vlen && k < 40; i++) {
      unsigned char ch = (unsigned char)value[i];
      shown[k++] = (char)(ch < 0x20 || ch == 0x7f ? '?' : ch);
    }
    shown[k] = '\0';
  }
  if (path[0] && value)
    snprintf(e->msg, sizeof e->msg, "field `%s`: %s, got %s%s", path, what, shown,
             vlen > 40 ? "..." : "");
  else if (path[0])
    snprintf(e->msg, sizeof e->msg, "field `%s`: %s", path, what);
  else if (value)
    snprintf(e->msg, sizeof e->msg, "%s, got %s%s", what, shown, vlen > 40 ? "..." : "");
  else
    snprintf(e->msg, sizeof e->msg, "%s", what);
  return DIPPER_DATA;
}

/* ---- lexing ---- */

static inline const char *skip_ws(const char *p, const char *end) {
  if (p < end && (unsigned char)*p > ' ') return p; /* writers rarely leave spaces */
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

static bool is_digit(int ch) { return ch >= '0' && ch <= '9'; }

/* The end of the JSON number at p, or NULL when there is none. */
static const char *scan_number(const char *p, const char *end) {
  if (p < end && *p == '-') p++;
  if (p >= end || !is_digit(*p)) return NULL;
  if (*p == '0')
    p++;
  else
    while (p < end && is_digit(*p)) p++;
  if (p < end && *p == '.') {
    p++;
    if (p >= end || !is_digit(*p)) return NULL;
    while (p < end && is_digit(*p)) p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p >= end || !is_digit(*p)) return NULL;
    while (p < end && is_digit(*p)) p++;
  }
  return p;
}

static bool scratch_room(dp_json_decoder *dec, size_t need) {
  if (need <= dec->scratch_cap) return true;
  size_t cap = dec->scratch_cap ? dec->scratch_cap * 2 : 256;
  while (cap < need) cap *= 2;
  char *p = realloc(dec->scratch, cap);
  if (!p) return false;
  dec->scratch = p;
  dec->scratch_cap = cap;
  return true;
}

static int hex4(const char *p, const char *end, unsigned *out) {
  if (end - p < 4) return 0;
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int ch = (unsigned char)p[i], d;
    if (ch >= '0' && ch <= '9')
      d = ch - '0';
    else if (ch >= 'a' && ch <= 'f')
      d = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F')
      d = ch - 'A' + 10;
    else
      return 0;
    v = v << 4 | (unsigned)d;
  }
  *out = v;
  return 1;
}

/* The string whose opening quote is at *pp: its bytes (in the input when it
** has no escapes, else unescaped into the scratch buffer) and *pp past the
** closing quote. */
static int lex_string(dp_json_decoder *dec, const char **pp, const char **s, size_t *len) {
  const char *p = *pp + 1, *end = dec->end;
  const char *start = p;
  /* fast path: plain ASCII without escapes */
  p = dp_fast_string_stop(p, end);
  if (p < end && *p == '"') {
    *s = start;
    *len = (size_t)(p - start);
    *pp = p + 1;
    return DIPPER_OK;
  }
  if (!scratch_room(dec, (size_t)(end - start) + 4)) return DIPPER_NOMEM;
  size_t n = (size_t)(p - start);
  memcpy(dec->scratch, start, n);
  while (p < end) {
    unsigned char ch = (unsigned char)*p;
    if (ch == '"') {
      *s = dec->scratch;
      *len = n;
      *pp = p + 1;
      return DIPPER_OK;
    }
    if (ch < 0x20) return fail(dec, p, NULL, 0, "a control character inside a string; escape it");
    if (ch >= 0x80) {
      size_t k = dp_utf8_len((const unsigned char *)p, (const unsigned char *)end);
      if (!k) return fail(dec, p, NULL, 0, "invalid UTF-8 inside a string");
      memcpy(dec->scratch + n, p, k);
      n += k;
      p += k;
      continue;
    }
    if (ch != '\\') {
      dec->scratch[n++] = (char)ch;
      p++;
      continue;
    }
    if (++p >= end) break;
    switch (*p) {
    case '"': dec->scratch[n++] = '"'; break;
    case '\\': dec->scratch[n++] = '\\'; break;
    case '/': dec->scratch[n++] = '/'; break;
    case 'b': dec->scratch[n++] = '\b'; break;
    case 'f': dec->scratch[n++] = '\f'; break;
    case 'n': dec->scratch[n++] = '\n'; break;
    case 'r': dec->scratch[n++] = '\r'; break;
    case 't': dec->scratch[n++] = '\t'; break;
    case 'u': {
      unsigned cp;
      if (!hex4(p + 1, end, &cp)) return fail(dec, p - 1, NULL, 0, "a \\u escape needs 4 hex digits");
      p += 4;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        unsigned lo;
        if (end - p < 7 || p[1] != '\\' || p[2] != 'u' || !hex4(p + 3, end, &lo) || lo < 0xDC00 ||
            lo > 0xDFFF)
          return fail(dec, p - 5, NULL, 0, "a high surrogate \\u escape without its low half");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        p += 6;
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return fail(dec, p - 5, NULL, 0, "a low surrogate \\u escape without its high half");
      }
      /* the escape is 6+ bytes and its UTF-8 at most 4: the scratch has room */
      if (cp < 0x80) {
        dec->scratch[n++] = (char)cp;
      } else if (cp < 0x800) {
        dec->scratch[n++] = (char)(0xC0 | cp >> 6);
        dec->scratch[n++] = (char)(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        dec->scratch[n++] = (char)(0xE0 | cp >> 12);
        dec->scratch[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dec->scratch[n++] = (char)(0x80 | (cp & 0x3F));
      } else {
        dec->scratch[n++] = (char)(0xF0 | cp >> 18);
        dec->scratch[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        dec->scratch[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dec->scratch[n++] = (char)(0x80 | (cp & 0x3F));
      }
      break;
    }
    default: return fail(dec, p - 1, p - 1, 2, "an unknown escape in a string");
    }
    p++;
  }
  return fail(dec, *pp, NULL, 0, "a string without its closing quote");
}

static bool word_at(const char *p, const char *end, const char *w, size_t n) {
  return (size_t)(end - p) >= n && memcmp(p, w, n) == 0;
}

/* Skip any value at *pp, checking its grammar. */
static int skip_value(dp_json_decoder *dec, const char **pp, int depth) {
  const char *p = skip_ws(*pp, dec->end), *end = dec->end;
  if (p >= end) return fail(dec, p, NULL, 0, "the record ends where a value was expected");
  if (depth > MAX_DEPTH) return fail(dec, p, NULL, 0, "values nested deeper than 64 levels");
  const char *s;
  size_t n;
  int rc;
  switch (*p) {
  case '"':
    if ((rc = lex_string(dec, &p, &s, &n)) != DIPPER_OK) return rc;
    break;
  case '{':
  case '[': {
    char close = *p == '{' ? '}' : ']';
    bool object = *p == '{';
    p = skip_ws(p + 1, end);
    if (p < end && *p == close) {
      p++;
      break;
    }
    for (;;) {
      if (object) {
        p = skip_ws(p, end);
        if (p >= end || *p != '"') return fail(dec, p, NULL, 0, "expected a key in double quotes");
        if ((rc = lex_string(dec, &p, &s, &n)) != DIPPER_OK) return rc;
        p = skip_ws(p, end);
        if (p >= end || *p != ':') return fail(dec, p, NULL, 0, "expected ':' after a key");
        p++;
      }
      if ((rc = skip_value(dec, &p, depth + 1)) != DIPPER_OK) return rc;
      p = skip_ws(p, end);
      if (p < end && *p == ',') {
        p++;
        continue;
      }
      if (p < end && *p == close) {
        p++;
        break;
      }
      return fail(dec, p, NULL, 0, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    break;
  }
  case 't':
  case 'f':
  case 'n':
    n = *p == 'f' ? 5 : 4;
    if (!word_at(p, end, *p == 't' ? "true" : *p == 'f' ? "false" : "null", n))
      return fail(dec, p, p, (size_t)(end - p) > 8 ? 8 : (size_t)(end - p), "not a JSON value");
    p += n;
    break;
  default: {
    const char *q = scan_number(p, end);
    if (!q)
      return fail(dec, p, p, (size_t)(end - p) > 8 ? 8 : (size_t)(end - p), "not a JSON value");
    p = q;
  }
  }
  *pp = p;
  return DIPPER_OK;
}

/* ---- decoding into vectors ---- */

static int decode_value(dp_json_decoder *dec, fplan *f, dp_vector *v, const char **pp);

static const char *kind_word(dp_type_kind k) {
  switch (k) {
  case DP_T_BOOLEAN: return "expected true or false";
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT: return "expected a whole number";
  case DP_T_FLOAT:
  case DP_T_DOUBLE:
  case DP_T_DECIMAL: return "expected a number";
  case DP_T_DATE: return "expected a date \"yyyy-MM-dd\"";
  case DP_T_TIME: return "expected a time \"HH:mm:ss\"";
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    return "expected a timestamp \"yyyy-MM-dd HH:mm:ss[.SSS]\", ISO-8601, or epoch milliseconds";
  case DP_T_INTERVAL_DT:
  case DP_T_INTERVAL_YM: return "expected an interval";
  case DP_T_BYTES: return "expected a base64 string";
  case DP_T_ROW:
  case DP_T_MAP: return "expected an object";
  case DP_T_ARRAY: return "expected an array";
  default: return "expected a string";
  }
}

/* A value of the wrong kind: show it (its first bytes). */
static int wrong(dp_json_decoder *dec, fplan *f, const char *at) {
  const char *q = at;
  if (skip_value(dec, &q, 0) != DIPPER_OK || q <= at) q = at + ((dec->end - at) > 40 ? 40 : (dec->end - at));
  return fail(dec, at, at, (size_t)(q - at), kind_word(f->type->kind));
}

/* Type-specific message for text that did not parse (range, scale, form). */
static int bad_scalar(dp_json_decoder *dec, fplan *f, const char *at, const char *text, size_t n) {
  char what[160];
  const dp_type *t = f->type;
  switch (t->kind) {
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT: {
    char tn[32];
    dp_type_print(tn, sizeof tn, t);
    snprintf(what, sizeof what, "expected a whole number that fits %s", tn);
    break;
  }
  case DP_T_DECIMAL:
    snprintf(what, sizeof what, "expected a number that fits DECIMAL(%d, %d)", t->precision,
             t->scale);
    break;
  default: snprintf(what, sizeof what, "%s", kind_word(t->kind)); break;
  }
  return fail(dec, at, text, n, what);
}

static int decode_object_row(dp_json_decoder *dec, fplan *f, dp_vector *v, const char **pp);

static int decode_string_value(dp_json_decoder *dec, fplan *f, dp_vector *v, const char **pp) {
  const char *at = *pp, *s;
  size_t n;
  int rc = lex_string(dec, pp, &s, &n);
  if (rc) return rc;
  switch (f->type->kind) {
  case DP_T_STRING: return dp_vector_append_str(v, s, n);
  case DP_T_BYTES: {
    /* s may live in the scratch buffer, so the bytes go to their own */
    if (n / 4 * 3 + 3 > dec->bin_cap) {
      size_t cap = n / 4 * 3 + 64;
      unsigned char *b = realloc(dec->bin, cap);
      if (!b) return DIPPER_NOMEM;
      dec->bin = b;
      dec->bin_cap = cap;
    }
    size_t len;
    if (!dp_base64_decode(s, n, dec->bin, &len))
      return bad_scalar(dec, f, at, at, (size_t)(*pp - at));
    return dp_vector_append_str(v, (const char *)dec->bin, len);
  }
  case DP_T_ROW:
  case DP_T_ARRAY:
  case DP_T_MAP: return wrong(dec, f, at);
  case DP_T_NULL: return dp_vector_append_null(v);
  default:
    rc = dp_text_append_scalar(v, s, n);
    if (rc == DIPPER_DATA) return bad_scalar(dec, f, at, at, (size_t)(*pp - at));
    return rc;
  }
}

static int decode_number(dp_json_decoder *dec, fplan *f, dp_vector *v, const char **pp) {
  const char *at = *pp, *q = scan_number(at, dec->end);
  if (!q) return fail(dec, at, at, (size_t)(dec->end - at) > 8 ? 8 : (size_t)(dec->end - at),
                      "not a JSON value");
  size_t n = (size_t)(q - at);
  *pp = q;
  switch (f->type->kind) {
  case DP_T_STRING: return dp_vector_append_str(v, at, n);
  case DP_T_BYTES:
  case DP_T_ROW:
  case DP_T_ARRAY:
  case DP_T_MAP:
  case DP_T_BOOLEAN:
  case DP_T_DATE:
  case DP_T_TIME: return fail(dec, at, at, n, kind_word(f->type->kind));
  case DP_T_NULL: return dp_vector_append_null(v);
  default: {
    int rc = dp_text_append_scalar(v, at, n);
    if (rc == DIPPER_DATA) return bad_scalar(dec, f, at, at, n);
    return rc;
  }
  }
}

static int decode_array(dp_json_decoder *dec, fplan *f, dp_vector *v, const char **pp) {
  const char *p = skip_ws(*pp + 1, dec->end), *end = dec->end;
  if (dec->depth >= MAX_DEPTH) return fail(dec, *pp, NULL, 0, "values nested deeper than 64 levels");
  seg *s = &dec->path[++dec->depth];
  s->name = NULL;
  s->len = 0;
  s->index = 0;
  int rc;
  if (p < end && *p == ']') {
    p++;
  } else {
    for (;;) {
      p = skip_ws(p, end);
      if ((rc = decode_value(dec, &f->fields[0], v->children[0], &p)) != DIPPER_OK) return rc;
      s->index++;
      p = skip_ws(p, end);
      if (p < end && *p == ',') {
        p++;
        continue;
      }
      if (p < end && *p == ']') {
        p++;
        break;
      }
      return fail(dec, p, NULL, 0, "expected ',' or ']' in an array");
    }
  }
  dec->depth--;
  *pp = p;
  return dp_vector_append_list(v);
}

static int decode_map(dp_json_decoder *dec, fplan *f, dp_vector *v, const char **pp) {
  const char *p = skip_ws(*pp + 1, dec->end), *end = dec->end;
  if (dec->depth >= MAX_DEPTH) return fail(dec, *pp, NULL, 0, "values nested deeper than 64 levels");
  dp_vector *entries = v->children[0];
  dp_vector *keys = entries->children[0], *vals = entries->children[1];
  seg *sg = &dec->path[++dec->depth];
  sg->index = -1;
  sg->name = "";
  sg->len = 0;
  int rc;
  if (p < end && *p == '}') {
    p++;
  } else {
    for (;;) {
      p = skip_ws(p, end);
      if (p >= end || *p != '"') return fail(dec, p, NULL, 0, "expected a key in double quotes");
      const char *key_at = p, *ks;
      size_t kn;
      if ((rc = lex_string(dec, &p, &ks, &kn)) != DIPPER_OK) return rc;
      if (f->fields[0].type->kind == DP_T_STRING) {
        rc = dp_vector_append_str(keys, ks, kn);
      } else {
        rc = dp_text_append_scalar(keys, ks, kn);
        if (rc == DIPPER_DATA) return bad_scalar(dec, &f->fields[0], key_at, key_at, (size_t)(p - key_at));
      }
      if (rc) return rc;
      sg->name = key_at + 1;
      sg->len = (size_t)(p - key_at) - 2;
      p = skip_ws(p, end);
      if (p >= end || *p != ':') return fail(dec, p, NULL, 0, "expected ':' after a key");
      p = skip_ws(p + 1, end);
      if ((rc = decode_value(dec, &f->fields[1], vals, &p)) != DIPPER_OK) return rc;
      if ((rc = dp_vector_append_struct(entries)) != DIPPER_OK) return rc;
      p = skip_ws(p, end);
      if (p < end && *p == ',') {
        p++;
        continue;
      }
      if (p < end && *p == '}') {
        p++;
        break;
      }
      return fail(dec, p, NULL, 0, "expected ',' or '}' in an object");
    }
  }
  dec->depth--;
  *pp = p;
  return dp_vector_append_list(v);
}

static int decode_value(dp_json_decoder *dec, fplan *f, dp_vector *v, const char **pp) {
  const char *p = skip_ws(*pp, dec->end), *end = dec->end;
  if (p >= end) return fail(dec, p, NULL, 0, "the record ends where a value was expected");
  int rc;
  switch (*p) {
  case 'n':
    if (!word_at(p, end, "null", 4)) break;
    *pp = p + 4;
    return dp_vector_append_null(v);
  case 't':
  case 'f': {
    bool b = *p == 't';
    size_t n = b ? 4 : 5;
    if (!word_at(p, end, b ? "true" : "false", n)) break;
    *pp = p + n;
    if (f->type->kind == DP_T_BOOLEAN) return dp_vector_append_bool(v, b);
    if (f->type->kind == DP_T_STRING) return dp_vector_append_str(v, p, n);
    return fail(dec, p, p, n, kind_word(f->type->kind));
  }
  case '"':
    *pp = p;
    return decode_string_value(dec, f, v, pp);
  case '{':
    *pp = p;
    if (f->type->kind == DP_T_ROW) return decode_object_row(dec, f, v, pp);
    if (f->type->kind == DP_T_MAP) return decode_map(dec, f, v, pp);
    if (f->type->kind == DP_T_STRING) {
      /* Flink: a STRING column takes the JSON text of an object */
      const char *q = p;
      if ((rc = skip_value(dec, &q, dec->depth)) != DIPPER_OK) return rc;
      *pp = q;
      return dp_vector_append_str(v, p, (size_t)(q - p));
    }
    return wrong(dec, f, p);
  case '[':
    *pp = p;
    if (f->type->kind == DP_T_ARRAY) return decode_array(dec, f, v, pp);
    if (f->type->kind == DP_T_STRING) {
      const char *q = p;
      if ((rc = skip_value(dec, &q, dec->depth)) != DIPPER_OK) return rc;
      *pp = q;
      return dp_vector_append_str(v, p, (size_t)(q - p));
    }
    return wrong(dec, f, p);
  default:
    if (*p == '-' || is_digit(*p)) {
      *pp = p;
      return decode_number(dec, f, v, pp);
    }
    break;
  }
  return fail(dec, p, p, (size_t)(end - p) > 12 ? 12 : (size_t)(end - p), "not a JSON value");
}

static int find_field(const fplan *f, const char *k, size_t kn) {
  int n = f->nfields;
  if (n == 0) return -1;
  int h = f->hint < n ? f->hint : 0;
  if (f->name_lens[h] == kn && memcmp(f->names[h], k, kn) == 0) return h;
  for (int i = 0; i < n; i++)
    if (f->name_lens[i] == kn && memcmp(f->names[i], k, kn) == 0) return i;
  for (int i = 0; i < n; i++) {
    if (f->name_lens[i] != kn) continue;
    size_t j = 0;
    for (; j < kn; j++) {
      int a = (unsigned char)k[j], b = (unsigned char)f->names[i][j];
      if (a >= 'A' && a <= 'Z') a += 32;
      if (b >= 'A' && b <= 'Z') b += 32;
      if (a != b) break;
    }
    if (j == kn) return i;
  }
  return -1;
}

/* What fast_value returns for a value not in one of its forms. */
#define NOT_FAST (-1)

/* The common forms of a member's value, read straight from the input and
** appended (fastscan.h): a whole number, a number for FLOAT/DOUBLE, a
** "yyyy-MM-dd HH:mm:ss[.fff]" timestamp, a string without escapes or
** non-ASCII bytes.  The append's code and *pp past the value; NOT_FAST
** (nothing done) for anything else, which decode_value then reads — and
** reports, when it is wrong. */
DP_FAST_INLINE int fast_value(dp_json_decoder *dec, const fplan *f, dp_vector *v, const char **pp,
                              const char *end) {
  const char *p = *pp, *q;
  dp_type_kind k = f->type->kind;
  if (p >= end) return NOT_FAST;
  switch (k) {
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT: {
    int64_t x = 0;
    if (!(q = dp_fast_i64(p, end, &x))) return NOT_FAST;
    const char *digits = p + (*p == '-');
    /* JSON has no leading zeros; a fraction or exponent is not a whole number */
    if ((q - digits > 1 && *digits == '0') || (q < end && (*q == '.' || (*q | 0x20) == 'e')) ||
        !dp_fast_int_fits(k, x))
      return NOT_FAST;
    *pp = q;
    return dp_fast_put_i64(v, x);
  }
  case DP_T_FLOAT:
  case DP_T_DOUBLE: {
    double x = 0;
    if (!(q = dp_fast_f64(p, end, &x))) return NOT_FAST;
    if (k == DP_T_FLOAT && fabs(x) > 3.4028234663852886e38) return NOT_FAST;
    *pp = q;
    return dp_fast_put_f64(v, x);
  }
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ: {
    int64_t x = 0;
    if (*p != '"' || !(q = dp_fast_timestamp(p + 1, end, f->type->precision, &dec->day, &x)))
      return NOT_FAST;
    if (q < end && (*q == 'Z' || *q == 'z')) q++; /* UTC */
    if (q >= end || *q != '"') return NOT_FAST;
    *pp = q + 1;
    return dp_fast_put_i64(v, x);
  }
  case DP_T_STRING:
    if (*p != '"') return NOT_FAST;
    q = dp_fast_string_stop(p + 1, end);
    if (q >= end || *q != '"') return NOT_FAST;
    *pp = q + 1;
    return dp_vector_append_str(v, p + 1, (size_t)(q - p - 1));
  default: return NOT_FAST;
  }
}

/* memcmp(a, b, n) == 0 for the short names of a schema, without the call. */
static inline bool same_bytes(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
}

/* The key whose opening quote is at *pp: the field it names (-1: none), *pp
** past its closing quote.  The field expected next is tried first on the raw
** bytes (a name without escapes can only be spelled one way), then
** find_field on the unescaped key. */
static inline int lex_key(dp_json_decoder *dec, fplan *f, const char **pp, int *field,
                          bool *exact) {
  const char *p = *pp, *end = dec->end;
  int h = f->hint < f->nfields ? f->hint : 0;
  if (f->nfields > 0 && f->plain[h] && !dec->opts.reference) {
    size_t hl = f->name_lens[h];
#ifdef DP_FAST_SSE2
    const struct keypat *k = &f->keys[h];
    if (k->mask && end - p > 16) {
      __m128i in = _mm_loadu_si128((const __m128i *)(const void *)(p + 1));
      __m128i want = _mm_loadu_si128((const __m128i *)(const void *)k->bytes);
      unsigned eq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(in, want));
      if ((eq & k->mask) == k->mask) {
        *pp = p + hl + 2;
        *field = h;
        *exact = true;
        return DIPPER_OK;
      }
    } else
#endif
    if ((size_t)(end - p) > hl + 1 && p[hl + 1] == '"' && same_bytes(p + 1, f->names[h], hl)) {
      *pp = p + hl + 2;
      *field = h;
      *exact = true;
      return DIPPER_OK;
    }
  }
  const char *ks;
  size_t kn;
  int rc = lex_string(dec, pp, &ks, &kn);
  if (rc) return rc;
  int i = *field = find_field(f, ks, kn);
  /* spelled as the name, byte for byte, without escapes */
  *exact = i >= 0 && ks == p + 1 && kn == f->name_lens[i] && memcmp(ks, f->names[i], kn) == 0;
  return DIPPER_OK;
}

/* The members of an object into the children of a ROW (or, at the top, into
** the batch's columns); `cols` are the target vectors. */
static int decode_members(dp_json_decoder *dec, fplan *f, dp_vector **cols, const char **pp) {
  const char *p = skip_ws(*pp + 1, dec->end), *end = dec->end;
  if (dec->depth >= MAX_DEPTH) return fail(dec, *pp, NULL, 0, "values nested deeper than 64 levels");
  memset(f->seen, 0, (size_t)f->nfields * sizeof *f->seen);
  f->hint = 0;
  seg *sg = &dec->path[++dec->depth];
  sg->index = -1;
  sg->name = "";
  sg->len = 0;
  int rc;
  if (p < end && *p == '}') {
    p++;
  } else {
    for (;;) {
      p = skip_ws(p, end);
      if (p >= end || *p != '"') return fail(dec, p, NULL, 0, "expected a key in double quotes");
      const char *key_at = p;
      int i;
      bool exact = false;
      if ((rc = lex_key(dec, f, &p, &i, &exact)) != DIPPER_OK) return rc;
      p = skip_ws(p, end);
      if (p >= end || *p != ':') return fail(dec, p, NULL, 0, "expected ':' after a key");
      p++;
      if (i >= 0 && f->decode && !f->decode[i]) i = -1;
      if (f == &dec->top) {
        if (i >= 0 && exact && !f->seen[i] && dec->norder < f->nfields)
          dec->order[dec->norder++] = i;
        else
          dec->order_clean = false;
      }
      if (i < 0) {
        if ((rc = skip_value(dec, &p, dec->depth)) != DIPPER_OK) return rc;
      } else {
        sg->name = f->names[i];
        sg->len = f->name_lens[i];
        if (f->seen[i]) return fail(dec, key_at, NULL, 0, "the key appears twice in one object");
        p = skip_ws(p, end);
        rc = dec->opts.reference ? NOT_FAST : fast_value(dec, &f->fields[i], cols[i], &p, end);
        if (rc == NOT_FAST) rc = decode_value(dec, &f->fields[i], cols[i], &p);
        if (rc != DIPPER_OK) return rc;
        f->seen[i] = true;
        f->hint = i + 1;
      }
      p = skip_ws(p, end);
      if (p < end && *p == ',') {
        p++;
        continue;
      }
      if (p < end && *p == '}') {
        p++;
        break;
      }
      return fail(dec, p, NULL, 0, "expected ',' or '}' in an object");
    }
  }
  for (int i = 0; i < f->nfields; i++) {
    if (f->seen[i] || (f->decode && !f->decode[i])) continue;
    if (dec->opts.fail_on_missing) {
      sg->name = f->names[i];
      sg->len = f->name_lens[i];
      return fail(dec, p, NULL, 0,
                  "the key is missing ('json.fail-on-missing-field' = 'true'); add it or write null");
    }
    if ((rc = dp_vector_append_null(cols[i])) != DIPPER_OK) return rc;
  }
  dec->depth--;
  *pp = p;
  return DIPPER_OK;
}

static int decode_object_row(dp_json_decoder *dec, fplan *f, dp_vector *v, const char **pp) {
  int rc = decode_members(dec, f, v->children, pp);
  if (rc) return rc;
  return dp_vector_append_struct(v);
}

/* What decode_shape returns when the record is not of the shape. */
#define NOT_SHAPE (-2)

/* The key of column i with its ':' at p (its opening quote), white space
** allowed before the ':': the byte after the ':', or NULL. */
static inline const char *shape_key(const dp_json_decoder *dec, int i, const char *p,
                                    const char *end) {
  size_t len = dec->top.name_lens[i];
#ifdef DP_FAST_SSE2
  const struct keypat *k = &dec->colon[i];
  if (k->mask && end - p >= 16) {
    __m128i in = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i want = _mm_loadu_si128((const __m128i *)(const void *)k->bytes);
    unsigned eq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(in, want));
    if ((eq & k->mask) == k->mask) return p + len + 3;
  } else
#endif
  if ((size_t)(end - p) >= len + 3 && memcmp(p, dec->colon_text[i], len + 3) == 0)
    return p + len + 3;
  /* "name" : with white space between */
  if ((size_t)(end - p) < len + 2 || memcmp(p, dec->colon_text[i], len + 2) != 0) return NULL;
  p = skip_ws(p + len + 2, end);
  return p < end && *p == ':' ? p + 1 : NULL;
}

/* The fast path of a whole record: the object at *pp holds exactly the
** decoded columns, in the order of the last records, each key spelled as
** its name (fastscan.h's forms for the values, decode_value for the rest),
** and nothing after it.  DIPPER_OK when it is so (the values appended);
** NOT_SHAPE on any difference or error, when the caller cuts the columns
** back and decodes the record the general way, which also finds the
** error: so the shape can change no value and no message. */
static int decode_shape(dp_json_decoder *dec, dp_vector **cols, const char **pp) {
  fplan *f = &dec->top;
  const char *p = *pp + 1, *end = dec->end;
  seg *sg = &dec->path[dec->depth = 1];
  sg->index = -1;
  for (int j = 0; j < dec->nshape; j++) {
    int i = dec->shape[j];
    if (j) { /* white space is looked for only where the bytes are not the expected ones */
      if (p >= end || *p != ',') {
        p = skip_ws(p, end);
        if (p >= end || *p != ',') return NOT_SHAPE;
      }
      p++;
    }
    const char *q = shape_key(dec, i, p, end);
    if (!q && (p = skip_ws(p, end), !(q = shape_key(dec, i, p, end)))) return NOT_SHAPE;
    p = skip_ws(q, end);
    int rc = fast_value(dec, &f->fields[i], cols[i], &p, end);
    if (rc == NOT_FAST) {
      sg->name = f->names[i];
      sg->len = f->name_lens[i];
      rc = decode_value(dec, &f->fields[i], cols[i], &p);
    }
    if (rc != DIPPER_OK) return NOT_SHAPE;
  }
  p = skip_ws(p, end);
  if (p >= end || *p != '}') return NOT_SHAPE;
  if (skip_ws(p + 1, end) != end) return NOT_SHAPE;
  dec->depth = 0;
  *pp = end;
  return DIPPER_OK;
}

int dp_json_decode(dp_json_decoder *dec, const char *rec, size_t n, dp_batch *out,
                   dp_format_error *err) {
  if (!dec || !out || (!rec && n) || out->ncols != dec->top.nfields) return DIPPER_MISUSE;
  dp_format_error scratch_err;
  dec->err = err ? err : &scratch_err;
  dec->err->offset = 0;
  dec->err->msg[0] = '\0';
  dec->base = rec ? rec : "";
  dec->end = dec->base + n;
  dec->depth = 0;
  for (int i = 0; i < out->ncols; i++) dec->lengths[i] = out->cols[i]->length;
  const char *p = skip_ws(dec->base, dec->end);
  int rc;
  if (p >= dec->end)
    rc = fail(dec, p, NULL, 0, "an empty record; each record is one JSON object {...}");
  else if (*p != '{')
    rc = fail(dec, p, p, (size_t)(dec->end - p),
              "a record must be one JSON object {\"column\": value, ...}");
  else {
    bool tried = false;
    if (dec->shape_ok && !dec->opts.reference) {
      if (dec->shape_skip > 0) {
        dec->shape_skip--;
      } else {
        tried = true;
        const char *q = p;
        if (decode_shape(dec, out->cols, &q) == DIPPER_OK) {
          dec->misses = 0;
          dec->err = NULL;
          return DIPPER_OK;
        }
        /* not of the shape: as it was, then the general way */
        for (int i = 0; i < out->ncols; i++) dp_format_cut(out->cols[i], dec->lengths[i]);
        dec->depth = 0;
        dec->err->offset = 0;
        dec->err->msg[0] = '\0';
      }
    }
    dec->norder = 0;
    dec->order_clean = true;
    rc = decode_members(dec, &dec->top, out->cols, &p);
    if (dec->shape_ok && rc == DIPPER_OK) {
      p = skip_ws(p, dec->end);
      if (dec->order_clean && dec->norder == dec->nshape && p == dec->end) {
        /* learn the producer's order */
        memcpy(dec->shape, dec->order, (size_t)dec->norder * sizeof *dec->shape);
        dec->misses = 0;
        dec->shape_skip = 0;
      } else if (tried && ++dec->misses >= 8) {
        /* records of another shape each time: try again later */
        dec->misses = 0;
        dec->shape_skip = 1024;
      }
    }
  }
  if (rc == DIPPER_OK) {
    p = skip_ws(p, dec->end);
    if (p < dec->end) rc = fail(dec, p, p, (size_t)(dec->end - p), "text after the object");
  }
  if (rc != DIPPER_OK)
    for (int i = 0; i < out->ncols; i++) dp_format_cut(out->cols[i], dec->lengths[i]);
  dec->err = NULL;
  return rc;
}

/* ---- encoding ---- */

void dp_json_put_string(dp_buf *out, const char *p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  dp_buf_putc(out, '"');
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)p[i];
    if (ch >= 0x80) {
      /* valid UTF-8 passes through; a stray byte (CSV input, BYTES cast to
      ** STRING) becomes U+FFFD so that the line stays JSON */
      size_t k = dp_utf8_len((const unsigned char *)p + i, (const unsigned char *)p + n);
      if (k) {
        i += k - 1;
        continue;
      }
      dp_buf_put(out, p + run, i - run);
      run = i + 1;
      dp_buf_puts(out, "\\ufffd");
      continue;
    }
    if (ch >= 0x20 && ch != '"' && ch != '\\') continue;
    dp_buf_put(out, p + run, i - run);
    run = i + 1;
    switch (ch) {
    case '"': dp_buf_puts(out, "\\\""); break;
    case '\\': dp_buf_puts(out, "\\\\"); break;
    case '\n': dp_buf_puts(out, "\\n"); break;
    case '\r': dp_buf_puts(out, "\\r"); break;
    case '\t': dp_buf_puts(out, "\\t"); break;
    default: {
      char esc[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
      dp_buf_put(out, esc, 6);
    }
    }
  }
  dp_buf_put(out, p + run, n - run);
  dp_buf_putc(out, '"');
}

static void put_i64(dp_buf *out, int64_t x) {
  char tmp[24];
  int n = 0;
  uint64_t mag = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
  do {
    tmp[sizeof tmp - 1 - (size_t)n++] = (char)('0' + (int)(mag % 10));
    mag /= 10;
  } while (mag);
  if (x < 0) tmp[sizeof tmp - 1 - (size_t)n++] = '-';
  dp_buf_put(out, tmp + sizeof tmp - (size_t)n, (size_t)n);
}

void dp_json_put_value(dp_buf *out, const dp_vector *v, int64_t row) {
  if (dp_vector_is_null(v, row)) {
    dp_buf_puts(out, "null");
    return;
  }
  const dp_type *t = v->type;
  switch (t->kind) {
  case DP_T_BOOLEAN:
  case DP_T_DECIMAL: dp_text_put_value(out, v, row, "null", DP_TEXT_CODEC); return;
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT:
  case DP_T_INTERVAL_DT:
  case DP_T_INTERVAL_YM: put_i64(out, dp_vector_get_i64(v, row)); return;
  case DP_T_FLOAT:
  case DP_T_DOUBLE: {
    double d = dp_vector_get_f64(v, row);
    bool finite = d == d && d - d == 0;
    if (!finite) dp_buf_putc(out, '"');
    dp_text_put_value(out, v, row, "null", DP_TEXT_CODEC);
    if (!finite) dp_buf_putc(out, '"');
    return;
  }
  case DP_T_STRING: {
    size_t n;
    const char *s = dp_vector_get_str(v, row, &n);
    dp_json_put_string(out, s, n);
    return;
  }
  case DP_T_ROW:
    dp_buf_putc(out, '{');
    for (int i = 0; i < v->nchildren; i++) {
      if (i) dp_buf_putc(out, ',');
      const char *name = t->fields[i].name ? t->fields[i].name : "";
      dp_json_put_string(out, name, strlen(name));
      dp_buf_putc(out, ':');
      dp_json_put_value(out, v->children[i], row);
    }
    dp_buf_putc(out, '}');
    return;
  case DP_T_ARRAY: {
    int64_t start, end;
    dp_vector_list_bounds(v, row, &start, &end);
    dp_buf_putc(out, '[');
    for (int64_t i = start; i < end; i++) {
      if (i > start) dp_buf_putc(out, ',');
      dp_json_put_value(out, v->children[0], i);
    }
    dp_buf_putc(out, ']');
    return;
  }
  case DP_T_MAP: {
    int64_t start, end;
    dp_vector_list_bounds(v, row, &start, &end);
    const dp_vector *keys = v->children[0]->children[0], *vals = v->children[0]->children[1];
    dp_buf_putc(out, '{');
    dp_buf key = DP_BUF_INIT;
    for (int64_t i = start; i < end; i++) {
      if (i > start) dp_buf_putc(out, ',');
      key.len = 0;
      dp_text_put_value(&key, keys, i, "null", DP_TEXT_CODEC);
      dp_json_put_string(out, key.data ? key.data : "", key.len);
      dp_buf_putc(out, ':');
      dp_json_put_value(out, vals, i);
    }
    if (key.oom) out->oom = true;
    dp_buf_free(&key);
    dp_buf_putc(out, '}');
    return;
  }
  default: /* dates, times, timestamps, bytes: their text as a string */
    dp_buf_putc(out, '"');
    dp_text_put_value(out, v, row, "", DP_TEXT_CODEC);
    dp_buf_putc(out, '"');
    return;
  }
}

int dp_json_encode_row(const dp_batch *b, int64_t row, dp_buf *out) {
  if (!b || !out || row < 0 || row >= b->nrows) return DIPPER_MISUSE;
  dp_buf_putc(out, '{');
  for (int i = 0; i < b->ncols; i++) {
    if (i) dp_buf_putc(out, ',');
    const char *name = b->schema->cols[i].name ? b->schema->cols[i].name : "";
    dp_json_put_string(out, name, strlen(name));
    dp_buf_putc(out, ':');
    dp_json_put_value(out, b->cols[i], row);
  }
  dp_buf_putc(out, '}');
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}
