/*
** avro.c — the 'avro' record format (avro.h): the schema text a table's
** columns map to, one binary datum decoded straight into the columns of a
** batch, and a row encoded back as one datum.
**
** The writer's schema is the reader's (both derived from the same columns),
** so the binary form needs no resolution: fields come in column order with no
** framing, and a datum is read by walking the column types.  A decoding plan
** per column (nullability, the fewest bytes a value can take) is built once;
** a datum then costs no allocation beyond the vectors' own growth.
**
** Hostile input: every varint is at most 10 bytes and must fit 64 bits;
** lengths and block counts are checked against the bytes left (a block of n
** items needs at least n times the smallest encoding of one item, so a datum
** of N bytes cannot make the decoder append more than N values); nesting is
** bounded by MAX_DEPTH; strings are UTF-8 validated as json.c does (declare
** binary data BYTES).  A failed datum leaves the batch as it was.
**
** Encoding is the exact inverse for everything the decoder accepts (the fuzz
** target checks that decode . encode is the identity on bytes), with two
** writer-side choices: a STRING that is not UTF-8 is written with U+FFFD for
** each stray byte (as json.c writes it), and a NULL map key — which Avro
** cannot hold — is written as the empty string.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/compiler.h"
#include "core/grow.h"
#include "formats/avro.h"

#define MAX_DEPTH 64

__extension__ typedef unsigned __int128 dp_u128;

/* ---- the schema text ---- */

static bool is_name_start(int ch) {
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
}

/* Avro names: [A-Za-z_][A-Za-z0-9_]*. */
static bool avro_name_ok(const char *s) {
  if (!s || !is_name_start((unsigned char)s[0])) return false;
  for (const char *p = s + 1; *p; p++)
    if (!is_name_start((unsigned char)*p) && !(*p >= '0' && *p <= '9')) return false;
  return true;
}

/* Why t (or a type inside it) has no Avro form; NULL when it has one.
** `names` also checks the ROW field names (the schema text needs them; the
** binary form does not). */
static const char *no_form(const dp_type *t, bool names, const dp_type **at, const char **field) {
  *at = t;
  switch (t->kind) {
  case DP_T_BOOLEAN:
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT:
  case DP_T_FLOAT:
  case DP_T_DOUBLE:
  case DP_T_DECIMAL:
  case DP_T_STRING:
  case DP_T_BYTES:
  case DP_T_DATE:
  case DP_T_TIME:
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ: return NULL;
  case DP_T_ARRAY: return no_form(t->elem, names, at, field);
  case DP_T_MAP:
    if (t->elem->kind != DP_T_STRING) return "Avro map keys are strings";
    return no_form(t->value, names, at, field);
  case DP_T_ROW:
    for (int i = 0; i < t->nfields; i++) {
      if (names && !avro_name_ok(t->fields[i].name)) {
        *field = t->fields[i].name ? t->fields[i].name : "";
        return "Avro names are letters, digits and '_', not starting with a digit";
      }
      const char *why = no_form(t->fields[i].type, names, at, field);
      if (why) return why;
    }
    return NULL;
  case DP_T_INTERVAL_DT:
  case DP_T_INTERVAL_YM: return "Avro has no interval type dipper writes; store it as BIGINT";
  default: return "the type has no Avro form";
  }
}

typedef struct sctx {
  dp_buf *out;
  char **names; /* record names used so far: Avro wants them unique */
  int nnames, cap;
  bool oom;
} sctx;

static bool name_used(const sctx *c, const char *n) {
  for (int i = 0; i < c->nnames; i++)
    if (strcmp(c->names[i], n) == 0) return true;
  return false;
}

/* Put the record name `base` (or base_2, base_3, ... when taken). */
static void put_record_name(sctx *c, const char *base) {
  dp_buf n = DP_BUF_INIT;
  dp_buf_puts(&n, base);
  for (int k = 2; !n.oom && name_used(c, dp_buf_cstr(&n)); k++) {
    n.len = 0;
    dp_buf_printf(&n, "%s_%d", base, k);
  }
  if (dp_grow_i(&c->names, &c->cap, c->nnames + 1, sizeof *c->names, 8)) {
    c->oom = true;
    dp_buf_free(&n);
    return;
  }
  char *taken = dp_buf_take(&n);
  if (!taken) {
    c->oom = true;
    return;
  }
  c->names[c->nnames++] = taken;
  dp_buf_printf(c->out, "\"%s\"", taken);
}

static void put_type(sctx *c, const dp_type *t, const char *path);

static void put_fields(sctx *c, int n, const dp_field *f, const bool *cols, const char *path) {
  dp_buf_puts(c->out, "\"fields\":[");
  bool first = true;
  for (int i = 0; i < n; i++) {
    if (cols && !cols[i]) continue;
    if (!first) dp_buf_putc(c->out, ',');
    first = false;
    const char *name = f[i].name ? f[i].name : "";
    dp_buf_printf(c->out, "{\"name\":\"%s\",\"type\":", name);
    dp_buf sub = DP_BUF_INIT;
    dp_buf_printf(&sub, "%s_%s", path, name);
    if (sub.oom) c->oom = true;
    put_type(c, f[i].type, dp_buf_cstr(&sub));
    dp_buf_free(&sub);
    /* Flink gives a nullable field the default null */
    if (!f[i].type->not_null) dp_buf_puts(c->out, ",\"default\":null");
    dp_buf_putc(c->out, '}');
  }
  dp_buf_putc(c->out, ']');
}

/* The type of a value; `path` names a ROW's record ("record_<col>_<field>"). */
static void put_type(sctx *c, const dp_type *t, const char *path) {
  dp_buf *o = c->out;
  if (!t->not_null) dp_buf_puts(o, "[\"null\",");
  switch (t->kind) {
  case DP_T_BOOLEAN: dp_buf_puts(o, "\"boolean\""); break;
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT: dp_buf_puts(o, "\"int\""); break;
  case DP_T_BIGINT: dp_buf_puts(o, "\"long\""); break;
  case DP_T_FLOAT: dp_buf_puts(o, "\"float\""); break;
  case DP_T_DOUBLE: dp_buf_puts(o, "\"double\""); break;
  case DP_T_STRING: dp_buf_puts(o, "\"string\""); break;
  case DP_T_BYTES: dp_buf_puts(o, "\"bytes\""); break;
  case DP_T_DECIMAL:
    dp_buf_printf(o, "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":%d,\"scale\":%d}",
                  t->precision, t->scale);
    break;
  case DP_T_DATE: dp_buf_puts(o, "{\"type\":\"int\",\"logicalType\":\"date\"}"); break;
  case DP_T_TIME: dp_buf_puts(o, "{\"type\":\"int\",\"logicalType\":\"time-millis\"}"); break;
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    dp_buf_printf(o, "{\"type\":\"long\",\"logicalType\":\"%s%s\"}",
                  t->kind == DP_T_TIMESTAMP ? "local-timestamp-" : "timestamp-",
                  t->precision <= 3 ? "millis" : "micros");
    break;
  case DP_T_ARRAY:
    dp_buf_puts(o, "{\"type\":\"array\",\"items\":");
    put_type(c, t->elem, path);
    dp_buf_putc(o, '}');
    break;
  case DP_T_MAP:
    dp_buf_puts(o, "{\"type\":\"map\",\"values\":");
    put_type(c, t->value, path);
    dp_buf_putc(o, '}');
    break;
  case DP_T_ROW:
    dp_buf_puts(o, "{\"type\":\"record\",\"name\":");
    put_record_name(c, path);
    dp_buf_putc(o, ',');
    put_fields(c, t->nfields, t->fields, NULL, path);
    dp_buf_putc(o, '}');
    break;
  default: dp_buf_puts(o, "\"null\""); break; /* refused before */
  }
  if (!t->not_null) dp_buf_putc(o, ']');
}

int dp_avro_schema_json(const dp_schema *s, const bool *cols, dp_buf *out, int *bad, char *why,
                        size_t why_size) {
  if (bad) *bad = -1;
  if (why && why_size) why[0] = '\0';
  if (!s || !out) return DIPPER_MISUSE;
  for (int i = 0; i < s->ncols; i++) {
    if (cols && !cols[i]) continue;
    const dp_type *at = NULL;
    const char *field = NULL;
    const char *reason = avro_name_ok(s->cols[i].name)
                             ? no_form(s->cols[i].type, true, &at, &field)
                             : "Avro names are letters, digits and '_', not starting with a digit";
    if (!reason) continue;
    if (bad) *bad = i;
    if (why && why_size) {
      if (!at) {
        snprintf(why, why_size, "`%s`: %s", s->cols[i].name ? s->cols[i].name : "", reason);
      } else if (field) {
        snprintf(why, why_size, "field `%s`: %s", field, reason);
      } else {
        char tn[128];
        dp_type_print(tn, sizeof tn, at);
        snprintf(why, why_size, "%s: %s", tn, reason);
      }
    }
    return DIPPER_UNSUPPORTED;
  }
  sctx c = {out, NULL, 0, 0, false};
  dp_buf_puts(out, "{\"type\":\"record\",\"name\":");
  put_record_name(&c, "record");
  dp_buf_putc(out, ',');
  put_fields(&c, s->ncols, s->cols, cols, "record");
  dp_buf_putc(out, '}');
  for (int i = 0; i < c.nnames; i++) free(c.names[i]);
  free(c.names);
  if (c.oom || out->oom) {
    out->oom = true;
    return DIPPER_NOMEM;
  }
  return DIPPER_OK;
}

/* ---- the decoding plan ---- */

typedef struct anode anode;
struct anode {
  const dp_type *type;
  bool nullable;     /* the union ["null", T] */
  int64_t min_size;  /* fewest bytes a value takes (bounds block counts); >= 1 */
  int n;             /* ROW: fields; ARRAY: 1 (the element); MAP: 1 (the value) */
  anode *kids;
};

typedef struct seg {
  const char *name; /* NULL: an array index */
  size_t len;
  int64_t index;
} seg;

struct dp_avro_decoder {
  const dp_schema *schema; /* borrowed: the column names for messages */
  int ncols;
  anode *cols;
  bool *decode;
  int64_t *lengths; /* per column: the row count before this datum */
  const unsigned char *base, *p, *end;
  dp_format_error *err;
  seg path[MAX_DEPTH + 2];
  int depth; /* segments in path */
};

static bool plan_init(anode *a, const dp_type *t) {
  memset(a, 0, sizeof *a);
  a->type = t;
  a->nullable = !t->not_null;
  int64_t size = 1;
  switch (t->kind) {
  case DP_T_FLOAT: size = 4; break;
  case DP_T_DOUBLE: size = 8; break;
  case DP_T_ROW:
    a->n = t->nfields;
    size = 0;
    break;
  case DP_T_ARRAY:
  case DP_T_MAP: a->n = 1; break;
  default: break;
  }
  if (a->n > 0) {
    a->kids = calloc((size_t)a->n, sizeof *a->kids);
    if (!a->kids) return false;
    if (t->kind == DP_T_ROW) {
      for (int i = 0; i < a->n; i++) {
        if (!plan_init(&a->kids[i], t->fields[i].type)) return false;
        if (size < INT32_MAX) size += a->kids[i].min_size;
      }
    } else if (!plan_init(&a->kids[0], t->kind == DP_T_ARRAY ? t->elem : t->value)) {
      return false;
    }
  }
  /* a union's branch index is one byte at least; a ROW without fields takes
  ** no bytes but still counts as one against a block */
  if (a->nullable) size = 1;
  a->min_size = size < 1 ? 1 : size;
  return true;
}

static void plan_free(anode *a) {
  for (int i = 0; i < a->n && a->kids; i++) plan_free(&a->kids[i]);
  free(a->kids);
}

dp_avro_decoder *dp_avro_decoder_new(const dp_schema *schema, const bool *decode_col) {
  if (!schema) return NULL;
  for (int i = 0; i < schema->ncols; i++) {
    const dp_type *at;
    const char *field = NULL;
    if ((!decode_col || decode_col[i]) && no_form(schema->cols[i].type, false, &at, &field))
      return NULL;
  }
  dp_avro_decoder *dec = calloc(1, sizeof *dec);
  if (!dec) return NULL;
  size_t cnt = schema->ncols ? (size_t)schema->ncols : 1;
  dec->schema = schema;
  dec->ncols = schema->ncols;
  dec->cols = calloc(cnt, sizeof *dec->cols);
  dec->decode = calloc(cnt, sizeof *dec->decode);
  dec->lengths = calloc(cnt, sizeof *dec->lengths);
  if (!dec->cols || !dec->decode || !dec->lengths) {
    dp_avro_decoder_free(dec);
    return NULL;
  }
  for (int i = 0; i < schema->ncols; i++) {
    dec->decode[i] = decode_col ? decode_col[i] : true;
    if (dec->decode[i] && !plan_init(&dec->cols[i], schema->cols[i].type)) {
      dp_avro_decoder_free(dec);
      return NULL;
    }
  }
  return dec;
}

void dp_avro_decoder_free(dp_avro_decoder *dec) {
  if (!dec) return;
  if (dec->cols)
    for (int i = 0; i < dec->ncols; i++) plan_free(&dec->cols[i]);
  free(dec->cols);
  free(dec->decode);
  free(dec->lengths);
  free(dec);
}

/* ---- errors ---- */

static void put_path(const dp_avro_decoder *dec, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < dec->depth && len + 1 < cap; i++) {
    const seg *s = &dec->path[i];
    int w;
    if (!s->name)
      w = snprintf(buf + len, cap - len, "[%lld]", (long long)s->index);
    else
      w = snprintf(buf + len, cap - len, "%s%.*s", len ? "." : "", (int)(s->len > 60 ? 60 : s->len),
                   s->name);
    if (w < 0) break;
    if (len + (size_t)w + 4 >= cap) { /* no room for the whole segment */
      snprintf(buf + len, cap - len, "...");
      len += strlen(buf + len);
      break;
    }
    len += (size_t)w;
  }
  /* map keys come from the datum: keep the message printable */
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] == 0x7f) buf[i] = '?';
}

/* Record the error at `at` (a position in the datum). */
static int fail(dp_avro_decoder *dec, const unsigned char *at, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;

static int fail(dp_avro_decoder *dec, const unsigned char *at, const char *fmt, ...) {
  dp_format_error *e = dec->err;
  e->offset = (int64_t)(at - dec->base);
  char what[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  char path[100]; /* with `what`, within e->msg */
  put_path(dec, path, sizeof path);
  if (path[0])
    snprintf(e->msg, sizeof e->msg, "field `%s`: %s", path, what);
  else
    snprintf(e->msg, sizeof e->msg, "%s", what);
  return DIPPER_DATA;
}

/* ---- reading ---- */

static int read_long(dp_avro_decoder *dec, int64_t *out) {
  const unsigned char *p = dec->p, *start = p, *end = dec->end;
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (p >= end) return fail(dec, start, "the datum ends inside a number");
    unsigned b = *p++;
    if (shift == 63 && b > 1)
      return fail(dec, start, "a number longer than 10 bytes or beyond 64 bits");
    v |= (uint64_t)(b & 0x7fu) << shift;
    if (!(b & 0x80u)) break;
  }
  dec->p = p;
  *out = (int64_t)((v >> 1) ^ (0 - (v & 1)));
  return DIPPER_OK;
}

static int read_int(dp_avro_decoder *dec, int64_t lo, int64_t hi, const char *tname,
                    int64_t *out) {
  const unsigned char *at = dec->p;
  int rc = read_long(dec, out);
  if (rc) return rc;
  if (*out < lo || *out > hi) return fail(dec, at, "%lld does not fit %s", (long long)*out, tname);
  return DIPPER_OK;
}

/* A length and the bytes after it: *s points into the datum. */
static int read_bytes(dp_avro_decoder *dec, const unsigned char **s, size_t *n) {
  const unsigned char *at = dec->p;
  int64_t len;
  int rc = read_long(dec, &len);
  if (rc) return rc;
  if (len < 0) return fail(dec, at, "a negative length %lld", (long long)len);
  size_t left = (size_t)(dec->end - dec->p);
  if ((uint64_t)len > left)
    return fail(dec, at, "a length of %lld bytes, but only %zu are left", (long long)len, left);
  *s = dec->p;
  *n = (size_t)len;
  dec->p += len;
  return DIPPER_OK;
}

/* 10^n, n <= 38 */
static dp_i128 pow10_i128(int n) {
  dp_i128 p = 1;
  for (int i = 0; i < n; i++) p *= 10;
  return p;
}

static int read_decimal(dp_avro_decoder *dec, const dp_type *t, dp_i128 *out) {
  const unsigned char *at = dec->p, *s;
  size_t n;
  int rc = read_bytes(dec, &s, &n);
  if (rc) return rc;
  if (n == 0) return fail(dec, at, "a decimal with no bytes (zero is one byte 0x00)");
  unsigned fill = s[0] & 0x80u ? 0xffu : 0u;
  /* beyond 16 bytes, only sign extension: the value must fit 128 bits */
  size_t skip = n > 16 ? n - 16 : 0;
  for (size_t i = 0; i < skip; i++)
    if (s[i] != fill) return fail(dec, at, "a decimal beyond 128 bits does not fit DECIMAL(%d, %d)",
                                  t->precision, t->scale);
  if (skip && ((s[skip] & 0x80u ? 0xffu : 0u) != fill))
    return fail(dec, at, "a decimal beyond 128 bits does not fit DECIMAL(%d, %d)", t->precision,
                t->scale);
  dp_u128 u = fill ? ~(dp_u128)0 : 0;
  for (size_t i = skip; i < n; i++) u = u << 8 | s[i];
  dp_i128 v = (dp_i128)u;
  dp_i128 lim = pow10_i128(t->precision);
  if (v >= lim || v <= -lim)
    return fail(dec, at, "the decimal's unscaled value has more than %d digits: it does not fit "
                         "DECIMAL(%d, %d)",
                t->precision, t->precision, t->scale);
  *out = v;
  return DIPPER_OK;
}

/* Store raw IEEE bits: a float goes in and out unchanged, NaN payloads too. */
static int append_bits(dp_vector *v, const unsigned char *p, int width) {
  int rc = dp_vector_room_(v);
  if (rc) return rc;
  if (width == 4) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    memcpy((char *)v->values + v->length * 4, &u, 4);
  } else {
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--) u = u << 8 | p[i];
    memcpy((char *)v->values + v->length * 8, &u, 8);
  }
  return dp_vector_push_valid_(v);
}

static int decode_value(dp_avro_decoder *dec, const anode *a, dp_vector *v);

/* Going one level down into a ROW, ARRAY or MAP at `depth` segments. */
static int check_depth(dp_avro_decoder *dec) {
  if (dec->depth > MAX_DEPTH)
    return fail(dec, dec->p, "values nested deeper than %d levels", MAX_DEPTH);
  return DIPPER_OK;
}

static void push_seg(dp_avro_decoder *dec, const char *name, size_t len, int64_t index) {
  seg *s = &dec->path[dec->depth++];
  s->name = name;
  s->len = len;
  s->index = index;
}

/* The count of the next block of an array or map (0 at the end): a negative
** count is followed by the block's size in bytes, which is checked too. */
static int read_block(dp_avro_decoder *dec, int64_t item_size, int64_t *count,
                      const unsigned char **block_end) {
  const unsigned char *at = dec->p;
  int rc = read_long(dec, count);
  if (rc) return rc;
  *block_end = NULL;
  if (*count < 0) {
    if (*count == INT64_MIN) return fail(dec, at, "a block count beyond 64 bits");
    *count = -*count;
    const unsigned char *size_at = dec->p;
    int64_t size;
    if ((rc = read_long(dec, &size)) != DIPPER_OK) return rc;
    if (size < 0 || size > dec->end - dec->p)
      return fail(dec, size_at, "a block size of %lld bytes, but %lld are left", (long long)size,
                  (long long)(dec->end - dec->p));
    *block_end = dec->p + size;
  }
  int64_t left = dec->end - dec->p;
  if (*count > left / item_size)
    return fail(dec, at, "a block of %lld items, but only %lld bytes are left", (long long)*count,
                (long long)left);
  return DIPPER_OK;
}

static int block_done(dp_avro_decoder *dec, const unsigned char *block_end,
                      const unsigned char *at) {
  if (block_end && dec->p != block_end)
    return fail(dec, at, "the block's size says %lld bytes, its items took %lld",
                (long long)(block_end - at), (long long)(dec->p - at));
  return DIPPER_OK;
}

static int decode_array(dp_avro_decoder *dec, const anode *a, dp_vector *v) {
  int rc = check_depth(dec);
  if (rc) return rc;
  int64_t index = 0;
  for (;;) {
    int64_t count;
    const unsigned char *block_end;
    if ((rc = read_block(dec, a->kids[0].min_size, &count, &block_end)) != DIPPER_OK) return rc;
    if (count == 0) break;
    const unsigned char *items = dec->p;
    for (int64_t i = 0; i < count; i++) {
      push_seg(dec, NULL, 0, index++);
      if ((rc = decode_value(dec, &a->kids[0], v->children[0])) != DIPPER_OK) return rc;
      dec->depth--;
    }
    if ((rc = block_done(dec, block_end, items)) != DIPPER_OK) return rc;
  }
  return dp_vector_append_list(v);
}

static int decode_map(dp_avro_decoder *dec, const anode *a, dp_vector *v) {
  dp_vector *entries = v->children[0];
  dp_vector *keys = entries->children[0], *vals = entries->children[1];
  int rc = check_depth(dec);
  if (rc) return rc;
  int64_t item_size = 1 + a->kids[0].min_size; /* the key's length, the value */
  for (;;) {
    int64_t count;
    const unsigned char *block_end;
    if ((rc = read_block(dec, item_size, &count, &block_end)) != DIPPER_OK) return rc;
    if (count == 0) break;
    const unsigned char *items = dec->p;
    for (int64_t i = 0; i < count; i++) {
      const unsigned char *k;
      size_t kn;
      if ((rc = read_bytes(dec, &k, &kn)) != DIPPER_OK) return rc;
      size_t bad = dp_utf8_valid_prefix(k, kn);
      if (bad < kn) return fail(dec, k + bad, "a map key that is not UTF-8 (byte 0x%02x)", k[bad]);
      if ((rc = dp_vector_append_str(keys, (const char *)k, kn)) != DIPPER_OK) return rc;
      push_seg(dec, (const char *)k, kn, -1);
      if ((rc = decode_value(dec, &a->kids[0], vals)) != DIPPER_OK) return rc;
      dec->depth--;
      if ((rc = dp_vector_append_struct(entries)) != DIPPER_OK) return rc;
    }
    if ((rc = block_done(dec, block_end, items)) != DIPPER_OK) return rc;
  }
  return dp_vector_append_list(v);
}

static int decode_row(dp_avro_decoder *dec, const anode *a, dp_vector *v) {
  const dp_type *t = a->type;
  int rc = check_depth(dec);
  if (rc) return rc;
  for (int i = 0; i < a->n; i++) {
    const char *name = t->fields[i].name ? t->fields[i].name : "";
    push_seg(dec, name, strlen(name), -1);
    if ((rc = decode_value(dec, &a->kids[i], v->children[i])) != DIPPER_OK) return rc;
    dec->depth--;
  }
  return dp_vector_append_struct(v);
}

static int decode_value(dp_avro_decoder *dec, const anode *a, dp_vector *v) {
  const dp_type *t = a->type;
  const unsigned char *at = dec->p;
  int64_t x;
  int rc;
  if (a->nullable) {
    if ((rc = read_long(dec, &x)) != DIPPER_OK) return rc;
    if (x == 0) return dp_vector_append_null(v);
    if (x != 1)
      return fail(dec, at, "union branch %lld, but the union [\"null\", ...] has branches 0 and 1",
                  (long long)x);
    at = dec->p;
  }
  switch (t->kind) {
  case DP_T_BOOLEAN:
    if (dec->p >= dec->end) return fail(dec, at, "the datum ends where a boolean was expected");
    if (*dec->p > 1) return fail(dec, at, "a boolean byte 0x%02x (must be 0 or 1)", *dec->p);
    return dp_vector_append_bool(v, *dec->p++ == 1);
  case DP_T_TINYINT:
    if ((rc = read_int(dec, INT8_MIN, INT8_MAX, "TINYINT", &x)) != DIPPER_OK) return rc;
    return dp_vector_append_i64(v, x);
  case DP_T_SMALLINT:
    if ((rc = read_int(dec, INT16_MIN, INT16_MAX, "SMALLINT", &x)) != DIPPER_OK) return rc;
    return dp_vector_append_i64(v, x);
  case DP_T_INT:
    if ((rc = read_int(dec, INT32_MIN, INT32_MAX, "an Avro int", &x)) != DIPPER_OK) return rc;
    return dp_vector_append_i64(v, x);
  case DP_T_DATE:
    if ((rc = read_int(dec, INT32_MIN, INT32_MAX, "an Avro int", &x)) != DIPPER_OK) return rc;
    return dp_vector_append_i64(v, x);
  case DP_T_TIME:
    if ((rc = read_int(dec, 0, 86399999, "a time of day in milliseconds (0 to 86399999)", &x)) !=
        DIPPER_OK)
      return rc;
    return dp_vector_append_i64(v, x * 1000);
  case DP_T_BIGINT:
    if ((rc = read_long(dec, &x)) != DIPPER_OK) return rc;
    return dp_vector_append_i64(v, x);
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    if (t->precision > 3) {
      if ((rc = read_long(dec, &x)) != DIPPER_OK) return rc;
      return dp_vector_append_i64(v, x);
    }
    if ((rc = read_int(dec, INT64_MIN / 1000, INT64_MAX / 1000,
                       "a timestamp in milliseconds dipper can hold (microseconds in 64 bits)",
                       &x)) != DIPPER_OK)
      return rc;
    return dp_vector_append_i64(v, x * 1000);
  case DP_T_FLOAT:
  case DP_T_DOUBLE: {
    int w = t->kind == DP_T_FLOAT ? 4 : 8;
    if (dec->end - dec->p < w)
      return fail(dec, at, "the datum ends inside a %s", w == 4 ? "float" : "double");
    rc = append_bits(v, dec->p, w);
    dec->p += w;
    return rc;
  }
  case DP_T_DECIMAL: {
    dp_i128 d = 0; /* read_decimal sets it; gcc -O2 cannot see that */
    if ((rc = read_decimal(dec, t, &d)) != DIPPER_OK) return rc;
    return dp_vector_append_dec(v, d);
  }
  case DP_T_STRING:
  case DP_T_BYTES: {
    const unsigned char *s;
    size_t n;
    if ((rc = read_bytes(dec, &s, &n)) != DIPPER_OK) return rc;
    if (t->kind == DP_T_STRING) {
      size_t bad = dp_utf8_valid_prefix(s, n);
      if (bad < n)
        return fail(dec, s + bad,
                    "a string that is not UTF-8 (byte 0x%02x); declare the column BYTES for "
                    "binary data",
                    s[bad]);
    }
    return dp_vector_append_str(v, (const char *)s, n);
  }
  case DP_T_ARRAY: return decode_array(dec, a, v);
  case DP_T_MAP: return decode_map(dec, a, v);
  case DP_T_ROW: return decode_row(dec, a, v);
  default: return fail(dec, at, "the column's type has no Avro form");
  }
}

int dp_avro_decode(dp_avro_decoder *dec, const char *rec, size_t n, dp_batch *out,
                   dp_format_error *err) {
  if (!dec || !out || (!rec && n) || out->ncols != dec->ncols) return DIPPER_MISUSE;
  dp_format_error scratch_err;
  dec->err = err ? err : &scratch_err;
  dec->err->offset = 0;
  dec->err->msg[0] = '\0';
  dec->base = (const unsigned char *)(rec ? rec : "");
  dec->p = dec->base;
  dec->end = dec->base + n;
  dec->depth = 0;
  for (int i = 0; i < out->ncols; i++) dec->lengths[i] = out->cols[i]->length;
  int rc = DIPPER_OK;
  int last = -1;
  for (int i = 0; i < dec->ncols && rc == DIPPER_OK; i++) {
    if (!dec->decode[i]) continue;
    const char *name = dec->schema->cols[i].name ? dec->schema->cols[i].name : "";
    dec->depth = 0;
    push_seg(dec, name, strlen(name), -1);
    rc = decode_value(dec, &dec->cols[i], out->cols[i]);
    last = i;
  }
  if (rc == DIPPER_OK && dec->p < dec->end) {
    dec->depth = 0;
    if (last >= 0)
      rc = fail(dec, dec->p,
                "%lld byte%s after the last field `%s`: the record is not one datum of the "
                "table's schema",
                (long long)(dec->end - dec->p), dec->end - dec->p == 1 ? "" : "s",
                dec->schema->cols[last].name);
    else
      rc = fail(dec, dec->p, "%lld bytes in a record whose schema has no fields",
                (long long)(dec->end - dec->p));
  }
  if (rc != DIPPER_OK)
    for (int i = 0; i < out->ncols; i++) dp_format_cut(out->cols[i], dec->lengths[i]);
  dec->err = NULL;
  return rc;
}

/* ---- encoding ---- */

static void put_long(dp_buf *out, int64_t x) {
  uint64_t z = (uint64_t)x << 1 ^ (x < 0 ? ~(uint64_t)0 : 0);
  unsigned char b[10];
  size_t n = 0;
  while (z >= 0x80) {
    b[n++] = (unsigned char)(z | 0x80);
    z >>= 7;
  }
  b[n++] = (unsigned char)z;
  dp_buf_put(out, b, n);
}

static void put_string(dp_buf *out, const char *p, size_t n) {
  const unsigned char *u = (const unsigned char *)p;
  size_t bad = dp_utf8_valid_prefix(u, n);
  if (bad == n) {
    put_long(out, (int64_t)n);
    dp_buf_put(out, p, n);
    return;
  }
  /* stray bytes become U+FFFD (EF BF BD), as json.c writes them */
  dp_buf fixed = DP_BUF_INIT;
  size_t i = 0;
  while (i < n) {
    size_t k = u[i] < 0x80 ? 1 : dp_utf8_len(u + i, u + n);
    if (k) {
      dp_buf_put(&fixed, p + i, k);
      i += k;
    } else {
      dp_buf_put(&fixed, "\xEF\xBF\xBD", 3);
      i++;
    }
  }
  if (fixed.oom) out->oom = true;
  put_long(out, (int64_t)fixed.len);
  dp_buf_put(out, fixed.data, fixed.len);
  dp_buf_free(&fixed);
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static void put_decimal(dp_buf *out, dp_i128 x) {
  unsigned char b[16];
  dp_u128 u = (dp_u128)x;
  for (int i = 15; i >= 0; i--) {
    b[i] = (unsigned char)(u & 0xff);
    u >>= 8;
  }
  /* the fewest bytes that keep the sign, as Java's BigInteger writes them */
  int s = 0;
  while (s < 15 && ((b[s] == 0x00 && !(b[s + 1] & 0x80)) || (b[s] == 0xff && (b[s + 1] & 0x80))))
    s++;
  put_long(out, 16 - s);
  dp_buf_put(out, b + s, (size_t)(16 - s));
}

static void encode_value(dp_buf *out, const dp_type *t, const dp_vector *v, int64_t row) {
  if (!t->not_null) {
    if (dp_vector_is_null(v, row)) {
      dp_buf_putc(out, 0);
      return;
    }
    dp_buf_putc(out, 2); /* branch 1, zig-zag */
  }
  switch (t->kind) {
  case DP_T_BOOLEAN: dp_buf_putc(out, dp_vector_get_bool(v, row) ? 1 : 0); return;
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT:
  case DP_T_DATE:
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ: {
    int64_t x = dp_vector_get_i64(v, row);
    if ((t->kind == DP_T_TIMESTAMP || t->kind == DP_T_TIMESTAMP_LTZ) && t->precision <= 3)
      x = floor_div(x, 1000);
    put_long(out, x);
    return;
  }
  case DP_T_TIME: put_long(out, floor_div(dp_vector_get_i64(v, row), 1000)); return;
  case DP_T_FLOAT:
  case DP_T_DOUBLE: {
    unsigned char b[8];
    int w = t->kind == DP_T_FLOAT ? 4 : 8;
    uint64_t u = 0;
    if (v->phys == DP_PHYS_F32) {
      uint32_t u32;
      memcpy(&u32, (const char *)v->values + row * 4, 4);
      u = u32;
      if (w == 8) { /* a FLOAT vector under a DOUBLE type: widen the value */
        double d = dp_vector_get_f64(v, row);
        memcpy(&u, &d, 8);
      }
    } else if (v->phys == DP_PHYS_F64) {
      memcpy(&u, (const char *)v->values + row * 8, 8);
      if (w == 4) {
        float f = (float)dp_vector_get_f64(v, row);
        uint32_t u32;
        memcpy(&u32, &f, 4);
        u = u32;
      }
    }
    for (int i = 0; i < w; i++) b[i] = (unsigned char)(u >> (8 * i));
    dp_buf_put(out, b, (size_t)w);
    return;
  }
  case DP_T_DECIMAL: put_decimal(out, dp_vector_get_dec(v, row)); return;
  case DP_T_STRING:
  case DP_T_BYTES: {
    size_t n;
    const char *s = dp_vector_get_str(v, row, &n);
    if (t->kind == DP_T_STRING) {
      put_string(out, s, n);
    } else {
      put_long(out, (int64_t)n);
      dp_buf_put(out, s, n);
    }
    return;
  }
  case DP_T_ARRAY:
  case DP_T_MAP: {
    int64_t start, end;
    dp_vector_list_bounds(v, row, &start, &end);
    if (end > start) {
      put_long(out, end - start);
      if (t->kind == DP_T_ARRAY) {
        for (int64_t i = start; i < end; i++) encode_value(out, t->elem, v->children[0], i);
      } else {
        const dp_vector *keys = v->children[0]->children[0];
        const dp_vector *vals = v->children[0]->children[1];
        for (int64_t i = start; i < end; i++) {
          size_t n = 0;
          const char *k = dp_vector_is_null(keys, i) ? "" : dp_vector_get_str(keys, i, &n);
          put_string(out, k, n);
          encode_value(out, t->value, vals, i);
        }
      }
    }
    dp_buf_putc(out, 0);
    return;
  }
  case DP_T_ROW:
    for (int i = 0; i < t->nfields && i < v->nchildren; i++)
      encode_value(out, t->fields[i].type, v->children[i], row);
    return;
  default: return; /* no Avro form: refused by the schema */
  }
}

int dp_avro_encode_row(const dp_batch *b, int64_t row, const bool *cols, dp_buf *out) {
  if (!b || !out || row < 0 || row >= b->nrows) return DIPPER_MISUSE;
  for (int i = 0; i < b->ncols; i++) {
    if (cols && !cols[i]) continue;
    encode_value(out, b->schema->cols[i].type, b->cols[i], row);
  }
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}
