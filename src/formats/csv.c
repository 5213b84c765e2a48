/*
** csv.c — the CSV format (formats.h): RFC 4180 records decoded into the
** columns of a schema, and rows encoded back.
**
** A record holds one field per decoded column, in column order.  Quoting is
** RFC 4180's: a field in quotes may hold the delimiter, line breaks and
** doubled quotes.  NULL and the empty string differ: an unquoted empty field
** (or the 'csv.null-literal') is NULL, a quoted "" is the empty string — the
** encoder writes them so, and a round trip keeps them apart.  ARRAY columns
** of scalars hold their elements joined by 'csv.array-element-delimiter'
** (Flink's rule); ROW and MAP have no CSV form here (JSON has).
**
** Fast paths (fastscan.h): the record's end and each field's delimiter are
** found 16 bytes at a time (SSE2); an unquoted whole number, number or
** timestamp is parsed in the same pass that finds its end.  What is not in
** those forms, and every error, goes through put_field as before.
**
** Whole records (decode_fast): when every decoded column is an integer,
** double, timestamp or string (and there is no null literal), a record is
** first read as a plain sequence of unquoted fields straight into their
** columns; a quote, a field not in its fast form, a count of fields not the
** table's, and the record is cut back and read by decode_fields, which gives
** the values and errors it always gave (8 such records in a row turn the
** fast path off for the next 1024).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/fastscan.h"
#include "formats/formats.h"

struct dp_csv_decoder {
  const dp_schema *schema;
  dp_csv_options opts;
  int ndecode;
  int *cols;        /* the decoded columns, in order */
  dp_type_kind *kinds; /* per decoded column: its type's kind and precision, */
  int *precisions;     /* read here without going through the vector */
  int64_t *lengths; /* per column: rows before this record */
  char *scratch;    /* unquoted field text */
  size_t scratch_cap;
  unsigned char *bin;
  size_t bin_cap;
  dp_fast_day day;  /* the last timestamp's date */
  bool fast_ok;     /* every decoded column of a kind decode_fast takes */
  int misses;       /* records in a row decode_fast gave back to the general path */
  int fast_skip;    /* records left before decode_fast is tried again */
};

dp_csv_options dp_csv_default_options(void) {
  dp_csv_options o;
  o.delimiter = ',';
  o.quote = '"';
  o.array_delimiter = ';';
  o.allow_comments = false;
  o.null_literal = NULL;
  o.reference = false;
  return o;
}

static bool csv_type_ok(const dp_type *t) {
  if (t->kind == DP_T_ROW || t->kind == DP_T_MAP) return false;
  if (t->kind == DP_T_ARRAY)
    return t->elem->kind != DP_T_ROW && t->elem->kind != DP_T_MAP && t->elem->kind != DP_T_ARRAY;
  return true;
}

dp_csv_decoder *dp_csv_decoder_new(const dp_schema *schema, const bool *decode_col,
                                   const dp_csv_options *opts, int *unsupported) {
  if (unsupported) *unsupported = -1;
  if (!schema) return NULL;
  for (int i = 0; i < schema->ncols; i++)
    if ((!decode_col || decode_col[i]) && !csv_type_ok(schema->cols[i].type)) {
      if (unsupported) *unsupported = i;
      return NULL;
    }
  dp_csv_decoder *dec = calloc(1, sizeof *dec);
  if (!dec) return NULL;
  dec->schema = schema;
  dec->opts = opts ? *opts : dp_csv_default_options();
  dec->day.ymd = -1;
  size_t cnt = schema->ncols ? (size_t)schema->ncols : 1;
  dec->cols = calloc(cnt, sizeof *dec->cols);
  dec->lengths = calloc(cnt, sizeof *dec->lengths);
  dec->kinds = calloc(cnt, sizeof *dec->kinds);
  dec->precisions = calloc(cnt, sizeof *dec->precisions);
  if (!dec->cols || !dec->lengths || !dec->kinds || !dec->precisions) {
    dp_csv_decoder_free(dec);
    return NULL;
  }
  dec->fast_ok = !dec->opts.reference && !(dec->opts.null_literal && dec->opts.null_literal[0]);
  for (int i = 0; i < schema->ncols; i++)
    if (!decode_col || decode_col[i]) {
      dp_type_kind k = schema->cols[i].type->kind;
      dec->kinds[dec->ndecode] = k;
      dec->precisions[dec->ndecode] = schema->cols[i].type->precision;
      dec->cols[dec->ndecode++] = i;
      if (k != DP_T_TINYINT && k != DP_T_SMALLINT && k != DP_T_INT && k != DP_T_BIGINT &&
          k != DP_T_FLOAT && k != DP_T_DOUBLE && k != DP_T_TIMESTAMP && k != DP_T_TIMESTAMP_LTZ &&
          k != DP_T_STRING)
        dec->fast_ok = false;
    }
  return dec;
}

void dp_csv_decoder_free(dp_csv_decoder *dec) {
  if (!dec) return;
  free(dec->cols);
  free(dec->kinds);
  free(dec->precisions);
  free(dec->lengths);
  free(dec->scratch);
  free(dec->bin);
  free(dec);
}

size_t dp_csv_record_end(const char *p, size_t n, char quote, bool *complete) {
  const char *q = p, *end = p + n;
  for (;;) {
    /* outside quotes: the next line break or opening quote */
    q = quote ? dp_fast_find3(q, end, '\n', '\r', quote) : dp_fast_find2(q, end, '\n', '\r');
    if (q == end) break;
    if (*q != quote || !quote) {
      *complete = true;
      if (*q == '\r' && q + 1 < end && q[1] == '\n') return (size_t)(q - p) + 2;
      return (size_t)(q - p) + 1;
    }
    /* inside: only the closing quote counts ("" is two toggles) */
    const char *close = memchr(q + 1, quote, (size_t)(end - q - 1));
    if (!close) break;
    q = close + 1;
  }
  *complete = false;
  return n;
}

static int fail(dp_format_error *err, int64_t offset, const dp_schema *s, int col, int field,
                const char *what, const char *value, size_t vlen) {
  if (!err) return DIPPER_DATA;
  err->offset = offset;
  char shown[48];
  size_t k = 0;
  for (size_t i = 0; value && i < vlen && k < 40; i++) {
    unsigned char ch = (unsigned char)value[i];
    shown[k++] = (char)(ch < 0x20 || ch == 0x7f ? '?' : ch);
  }
  shown[k] = '\0';
  if (col >= 0 && value)
    snprintf(err->msg, sizeof err->msg, "column `%s` (field %d): %s, got \"%s\"%s",
             s->cols[col].name, field + 1, what, shown, vlen > 40 ? "..." : "");
  else if (col >= 0)
    snprintf(err->msg, sizeof err->msg, "column `%s` (field %d): %s", s->cols[col].name, field + 1,
             what);
  else
    snprintf(err->msg, sizeof err->msg, "%s", what);
  return DIPPER_DATA;
}

static const char *expect_word(const dp_type *t, char *buf, size_t cap) {
  char tn[64];
  dp_type_print(tn, sizeof tn, t);
  switch (t->kind) {
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
    snprintf(buf, cap, "expected a %s \"yyyy-MM-dd HH:mm:ss[.SSS]\" or epoch milliseconds", tn);
    break;
  case DP_T_DATE: snprintf(buf, cap, "expected a DATE \"yyyy-MM-dd\""); break;
  case DP_T_BYTES: snprintf(buf, cap, "expected base64 text for BYTES"); break;
  default: snprintf(buf, cap, "expected a value of type %s", tn); break;
  }
  return buf;
}

static int put_scalar(dp_csv_decoder *dec, dp_vector *v, const char *s, size_t n) {
  switch (v->type->kind) {
  case DP_T_STRING: return dp_vector_append_str(v, s, n);
  case DP_T_BYTES: {
    if (n / 4 * 3 + 3 > dec->bin_cap) {
      size_t cap = n / 4 * 3 + 64;
      unsigned char *b = realloc(dec->bin, cap);
      if (!b) return DIPPER_NOMEM;
      dec->bin = b;
      dec->bin_cap = cap;
    }
    size_t len;
    if (!dp_base64_decode(s, n, dec->bin, &len)) return DIPPER_DATA;
    return dp_vector_append_str(v, (const char *)dec->bin, len);
  }
  case DP_T_NULL: return dp_vector_append_null(v);
  default:
    /* spaces around a number or a date are not part of it */
    while (n > 0 && (*s == ' ' || *s == '\t')) s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    return dp_text_append_scalar(v, s, n);
  }
}

static bool is_null_text(const dp_csv_decoder *dec, const char *s, size_t n) {
  if (n == 0) return true;
  const char *lit = dec->opts.null_literal;
  return lit && lit[0] && strlen(lit) == n && memcmp(lit, s, n) == 0;
}

/* An unquoted number or timestamp at p parsed and appended in the same pass
** that finds its end: that end (the delimiter or `end`) and the append's
** code in *rc, or NULL when the field is not in such a form (nothing done).
** delim -1: the text is the whole field, only `end` ends it. */
DP_FAST_INLINE const char *fused_scalar(dp_csv_decoder *dec, int field, dp_vector *v,
                                        const char *p, const char *end, int delim, int *rc) {
  dp_type_kind k = dec->kinds[field];
  const char *q;
  switch (k) {
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT: {
    int64_t x = 0;
    if (!(q = dp_fast_i64(p, end, &x)) || (q < end && (unsigned char)*q != delim) ||
        !dp_fast_int_fits(k, x))
      return NULL;
    *rc = dp_fast_put_i64(v, x);
    return q;
  }
  case DP_T_FLOAT:
  case DP_T_DOUBLE: {
    double x = 0;
    if (!(q = dp_fast_f64(p, end, &x)) || (q < end && (unsigned char)*q != delim) ||
        (k == DP_T_FLOAT && fabs(x) > 3.4028234663852886e38))
      return NULL;
    *rc = dp_fast_put_f64(v, x);
    return q;
  }
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ: {
    int64_t x = 0;
    if (!(q = dp_fast_timestamp(p, end, dec->precisions[field], &dec->day, &x))) return NULL;
    if (q < end && (*q == 'Z' || *q == 'z')) q++; /* UTC */
    if (q < end && (unsigned char)*q != delim) return NULL;
    *rc = dp_fast_put_i64(v, x);
    return q;
  }
  default: return NULL;
  }
}

/* What fast_scalar returns for a text not in one of its forms. */
#define NOT_FAST (-1)

/* A whole field (quoted, or one the fused pass left) in a common form: the
** append's code, or NOT_FAST: put_scalar reads it (and says what is wrong). */
static int fast_scalar(dp_csv_decoder *dec, int field, dp_vector *v, const char *s, size_t n) {
  if (dec->kinds[field] == DP_T_STRING) return dp_vector_append_str(v, s, n);
  int rc;
  return fused_scalar(dec, field, v, s, s + n, -1, &rc) ? rc : NOT_FAST;
}

static int put_field(dp_csv_decoder *dec, int field, dp_vector *v, const char *s, size_t n,
                     bool quoted) {
  if (!quoted && is_null_text(dec, s, n)) return dp_vector_append_null(v);
  if (v->type->kind != DP_T_ARRAY) {
    int rc = n && !dec->opts.reference ? fast_scalar(dec, field, v, s, n) : NOT_FAST;
    return rc == NOT_FAST ? put_scalar(dec, v, s, n) : rc;
  }
  dp_vector *elems = v->children[0];
  char delim = dec->opts.array_delimiter ? dec->opts.array_delimiter : ';';
  if (n > 0) {
    for (size_t i = 0;;) {
      size_t j = i;
      while (j < n && s[j] != delim) j++;
      int rc = is_null_text(dec, s + i, j - i) && elems->type->kind != DP_T_STRING
                   ? dp_vector_append_null(elems)
                   : put_scalar(dec, elems, s + i, j - i);
      if (rc) return rc;
      if (j >= n) break;
      i = j + 1;
    }
  }
  return dp_vector_append_list(v);
}

static bool scratch_room(dp_csv_decoder *dec, size_t need) {
  if (need <= dec->scratch_cap) return true;
  size_t cap = dec->scratch_cap ? dec->scratch_cap * 2 : 256;
  while (cap < need) cap *= 2;
  char *p = realloc(dec->scratch, cap);
  if (!p) return false;
  dec->scratch = p;
  dec->scratch_cap = cap;
  return true;
}

static int decode_fields(dp_csv_decoder *dec, const char *rec, size_t n, dp_batch *out,
                         dp_format_error *err) {
  char delim = dec->opts.delimiter ? dec->opts.delimiter : ',';
  char quote = dec->opts.quote;
  const dp_schema *s = dec->schema;
  size_t i = 0;
  int field = 0;
  /* with a null literal, "0" or "-1" may mean NULL: then every field goes
  ** through put_field, which knows */
  bool fused = !dec->opts.reference && !(dec->opts.null_literal && dec->opts.null_literal[0]);
  for (;; field++) {
    size_t start = i;
    const char *text;
    size_t len;
    bool quoted = false;
    if (fused && field < dec->ndecode && i < n && rec[i] != quote) {
      int rc;
      const char *q = fused_scalar(dec, field, out->cols[dec->cols[field]], rec + i, rec + n,
                                   (unsigned char)delim, &rc);
      if (q) {
        if (rc) return rc;
        i = (size_t)(q - rec);
        if (i >= n) break;
        i++; /* the delimiter */
        continue;
      }
    }
    if (quote && i < n && rec[i] == quote) {
      quoted = true;
      if (!scratch_room(dec, n - i)) return DIPPER_NOMEM;
      size_t k = 0;
      i++;
      for (;;) {
        if (i >= n)
          return fail(err, (int64_t)start, s, field < dec->ndecode ? dec->cols[field] : -1, field,
                      "a quoted field without its closing quote", NULL, 0);
        if (rec[i] == quote) {
          if (i + 1 < n && rec[i + 1] == quote) {
            dec->scratch[k++] = quote;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        dec->scratch[k++] = rec[i++];
      }
      if (i < n && rec[i] != delim)
        return fail(err, (int64_t)i, s, field < dec->ndecode ? dec->cols[field] : -1, field,
                    "text after the closing quote; double a quote inside a quoted field (\"\")",
                    NULL, 0);
      text = dec->scratch;
      len = k;
    } else {
      i = (size_t)(dp_fast_find2(rec + i, rec + n, delim, delim) - rec);
      text = rec + start;
      len = i - start;
    }
    if (field >= dec->ndecode) {
      char what[96];
      snprintf(what, sizeof what, "the record has more than %d fields, one per column", dec->ndecode);
      return fail(err, (int64_t)start, s, -1, field, what, NULL, 0);
    }
    int col = dec->cols[field];
    dp_vector *v = out->cols[col];
    int rc = put_field(dec, field, v, text, len, quoted);
    if (rc == DIPPER_DATA) {
      char what[160];
      const dp_type *t = v->type->kind == DP_T_ARRAY ? v->type->elem : v->type;
      return fail(err, (int64_t)start, s, col, field, expect_word(t, what, sizeof what),
                  quoted ? rec + start : text, quoted ? i - start : len);
    }
    if (rc) return rc;
    if (i >= n) break;
    i++; /* the delimiter */
  }
  if (field + 1 < dec->ndecode) {
    char what[128];
    snprintf(what, sizeof what, "the record has %d field%s, and the table has %d columns", field + 1,
             field ? "s" : "", dec->ndecode);
    return fail(err, (int64_t)n, s, -1, field, what, NULL, 0);
  }
  return DIPPER_OK;
}

/* The fast path of a whole record: each decoded column's field unquoted and
** either empty (NULL) or in a form fused_scalar reads (a STRING as it is),
** and no field more.  DIPPER_OK when it is so (the values appended), else
** NOT_FAST: the caller cuts the columns back and decode_fields reads the
** record, and says what is wrong with it, as it would have anyway. */
static int decode_fast(dp_csv_decoder *dec, const char *rec, size_t n, dp_batch *out) {
  const char *p = rec, *end = rec + n;
  int delim = (unsigned char)(dec->opts.delimiter ? dec->opts.delimiter : ',');
  char quote = dec->opts.quote;
  for (int f = 0; f < dec->ndecode; f++) {
    dp_vector *v = out->cols[dec->cols[f]];
    int rc;
    const char *q;
    if (p == end || (unsigned char)*p == delim) {
      q = p; /* an empty field: NULL */
      rc = dp_vector_append_null(v);
    } else if (quote && *p == quote) {
      return NOT_FAST;
    } else if (dec->kinds[f] == DP_T_STRING) {
      q = dp_fast_find2(p, end, (char)delim, (char)delim);
      rc = dp_vector_append_str(v, p, (size_t)(q - p));
    } else if (!(q = fused_scalar(dec, f, v, p, end, delim, &rc))) {
      return NOT_FAST;
    }
    if (rc != DIPPER_OK) return NOT_FAST;
    p = q;
    if (f + 1 < dec->ndecode) {
      if (p == end) return NOT_FAST; /* too few fields */
      p++;                           /* the delimiter */
    }
  }
  return p == end ? DIPPER_OK : NOT_FAST;
}

int dp_csv_decode(dp_csv_decoder *dec, const char *rec, size_t n, dp_batch *out, bool *skipped,
                  dp_format_error *err) {
  if (skipped) *skipped = false;
  if (!dec || !out || (!rec && n) || out->ncols != dec->schema->ncols) return DIPPER_MISUSE;
  if (err) {
    err->offset = 0;
    err->msg[0] = '\0';
  }
  while (n > 0 && (rec[n - 1] == '\n' || rec[n - 1] == '\r')) n--;
  if (n == 0 || (dec->opts.allow_comments && rec[0] == '#')) {
    /* a blank line is no record; with one column it would be a NULL, but
    ** files end with a line break and that must not add a row */
    if (skipped) *skipped = true;
    return DIPPER_OK;
  }
  for (int i = 0; i < out->ncols; i++) dec->lengths[i] = out->cols[i]->length;
  bool tried = false;
  if (dec->fast_ok && dec->ndecode > 0) {
    if (dec->fast_skip > 0) {
      dec->fast_skip--;
    } else {
      if (decode_fast(dec, rec, n, out) == DIPPER_OK) {
        dec->misses = 0;
        return DIPPER_OK;
      }
      for (int i = 0; i < out->ncols; i++) dp_format_cut(out->cols[i], dec->lengths[i]);
      tried = true;
    }
  }
  int rc = decode_fields(dec, rec ? rec : "", n, out, err);
  if (tried && rc == DIPPER_OK && ++dec->misses >= 8) {
    /* records the fast path does not take, one after another: try later */
    dec->misses = 0;
    dec->fast_skip = 1024;
  }
  if (rc != DIPPER_OK)
    for (int i = 0; i < out->ncols; i++) dp_format_cut(out->cols[i], dec->lengths[i]);
  return rc;
}

/* ---- encoding ---- */

static void put_quoted(dp_buf *out, const char *s, size_t n, const dp_csv_options *o,
                       bool force) {
  char quote = o->quote;
  bool need = force;
  if (!need && n > 0 && (s[0] == ' ' || s[n - 1] == ' ')) need = true;
  for (size_t i = 0; i < n && !need; i++)
    if (s[i] == o->delimiter || s[i] == '\n' || s[i] == '\r' || (quote && s[i] == quote))
      need = true;
  if (o->null_literal && o->null_literal[0] && strlen(o->null_literal) == n &&
      memcmp(o->null_literal, s, n) == 0)
    need = true;
  if (!need || !quote) {
    dp_buf_put(out, s, n);
    return;
  }
  dp_buf_putc(out, quote);
  size_t run = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] == quote) {
      dp_buf_put(out, s + run, i + 1 - run);
      dp_buf_putc(out, quote);
      run = i + 1;
    }
  dp_buf_put(out, s + run, n - run);
  dp_buf_putc(out, quote);
}

static void put_cell(dp_buf *out, dp_buf *tmp, const dp_vector *v, int64_t row,
                     const dp_csv_options *o) {
  if (dp_vector_is_null(v, row)) return; /* NULL is the empty field */
  tmp->len = 0;
  if (v->type->kind == DP_T_ARRAY) {
    int64_t start, end;
    dp_vector_list_bounds(v, row, &start, &end);
    char delim = o->array_delimiter ? o->array_delimiter : ';';
    for (int64_t i = start; i < end; i++) {
      if (i > start) dp_buf_putc(tmp, delim);
      dp_text_put_value(tmp, v->children[0], i, "", DP_TEXT_CODEC);
    }
  } else {
    dp_text_put_value(tmp, v, row, "", DP_TEXT_CODEC);
  }
  /* the empty string must not read back as NULL */
  put_quoted(out, tmp->data ? tmp->data : "", tmp->len, o, tmp->len == 0);
}

int dp_csv_encode_row(const dp_batch *b, int64_t row, const dp_csv_options *opts, dp_buf *out) {
  if (!b || !out || row < 0 || row >= b->nrows) return DIPPER_MISUSE;
  dp_csv_options o = opts ? *opts : dp_csv_default_options();
  if (!o.delimiter) o.delimiter = ',';
  dp_buf tmp = DP_BUF_INIT;
  for (int i = 0; i < b->ncols; i++) {
    if (i) dp_buf_putc(out, o.delimiter);
    put_cell(out, &tmp, b->cols[i], row, &o);
  }
  dp_buf_putc(out, '\n');
  if (tmp.oom) out->oom = true;
  dp_buf_free(&tmp);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_csv_encode_header(const dp_schema *s, const dp_csv_options *opts, dp_buf *out) {
  if (!s || !out) return DIPPER_MISUSE;
  dp_csv_options o = opts ? *opts : dp_csv_default_options();
  if (!o.delimiter) o.delimiter = ',';
  for (int i = 0; i < s->ncols; i++) {
    if (i) dp_buf_putc(out, o.delimiter);
    const char *name = s->cols[i].name ? s->cols[i].name : "";
    put_quoted(out, name, strlen(name), &o, false);
  }
  dp_buf_putc(out, '\n');
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}
