/*
** records.c — the connectors' shared machinery (records.h): a table's format
** options turned into a decoder (json, csv, avro), the bad-records policy, row and schema
** copies, and errors of the handle's own calls.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/records.h"

/* ---- options ---- */

/* A format option, under its bare key or Kafka's "value." prefix. */
static const char *fmt_option(const dp_table_def *t, const char *key) {
  const char *v = dp_table_option(t, key, NULL);
  if (v) return v;
  char prefixed[128];
  snprintf(prefixed, sizeof prefixed, "value.%s", key);
  return dp_table_option(t, prefixed, NULL);
}

static bool is_true(const char *v) { return v && strcasecmp(v, "true") == 0; }

/* K_CHAR values: one character, or the two characters \t for a tab. */
static char char_option(const char *v, char dflt) {
  if (!v || !v[0]) return dflt;
  if (v[0] == '\\' && v[1] == 't') return '\t';
  return v[0];
}

static int decoder_open(dp_record_decoder *rd, const dp_table_def *t, const dp_schema *schema,
                        const char *fallback, dp_diags *d) {
  dp_span nowhere = {0, 0, 0, 0};
  const char *fmt = t && t->format ? t->format : fallback;
  const char *name = t ? t->name : "?";
  /* 'avro' is one datum per record: only where the medium frames records */
  bool framed = t && t->connector && (strcasecmp(t->connector, "kafka") == 0 ||
                                      strcasecmp(t->connector, "kinesis") == 0);
  if (framed && (!fmt || (strcasecmp(fmt, "json") != 0 && strcasecmp(fmt, "csv") != 0 &&
                          strcasecmp(fmt, "avro") != 0)))
    return dp_error(d, DIPPER_UNSUPPORTED, t->with_span,
                    "table `%s`: the embedded engine reads formats 'json', 'csv' and 'avro', not "
                    "'%s'; write 'format' = 'json', 'csv' or 'avro'",
                    name, fmt ? fmt : "(none)");
  if (!framed && (!fmt || (strcasecmp(fmt, "json") != 0 && strcasecmp(fmt, "csv") != 0)))
    return dp_error(d, DIPPER_UNSUPPORTED, t ? t->with_span : nowhere,
                    "table `%s`: the embedded engine reads formats 'json' and 'csv', not '%s'; "
                    "write 'format' = 'json' or 'csv'",
                    name, fmt ? fmt : "(none)");
  rd->csv = strcasecmp(fmt, "csv") == 0;
  rd->avro = strcasecmp(fmt, "avro") == 0;
  int n = schema->ncols;
  rd->decode_col = calloc(n ? (size_t)n : 1, sizeof *rd->decode_col);
  if (!rd->decode_col) return DIPPER_NOMEM;
  for (int i = 0; i < n; i++) {
    int k = t ? dp_schema_find(&t->schema, schema->cols[i].name) : -1;
    rd->decode_col[i] = k < 0 || t->cols[k].kind == DP_CK_PHYSICAL;
    rd->nmeta += !rd->decode_col[i];
  }
  if (rd->csv) {
    dp_csv_options o = dp_csv_default_options();
    o.delimiter = char_option(fmt_option(t, "csv.field-delimiter"), ',');
    o.quote = char_option(fmt_option(t, "csv.quote-character"), '"');
    if (is_true(fmt_option(t, "csv.disable-quote-character"))) o.quote = '\0';
    o.allow_comments = is_true(fmt_option(t, "csv.allow-comments"));
    o.array_delimiter = char_option(fmt_option(t, "csv.array-element-delimiter"), ';');
    o.null_literal = fmt_option(t, "csv.null-literal");
    rd->csv_opts = o;
    rd->header = is_true(fmt_option(t, "csv.header"));
    int bad = -1;
    rd->csvd = dp_csv_decoder_new(schema, rd->decode_col, &o, &bad);
    if (!rd->csvd) {
      if (bad < 0) return DIPPER_NOMEM;
      char tn[96];
      dp_type_print(tn, sizeof tn, schema->cols[bad].type);
      return dp_error(d, DIPPER_UNSUPPORTED, t ? t->with_span : nowhere,
                      "table `%s`: column `%s` is %s, which has no CSV form; use 'format' = "
                      "'json', or declare it as STRING",
                      name, schema->cols[bad].name, tn);
    }
  } else if (rd->avro) {
    /* the schema text is checked first: it says which column has no form */
    dp_buf text = DP_BUF_INIT;
    int bad = -1;
    char why[200];
    int rc = dp_avro_schema_json(schema, rd->decode_col, &text, &bad, why, sizeof why);
    dp_buf_free(&text);
    if (rc == DIPPER_UNSUPPORTED && bad >= 0)
      return dp_error(d, DIPPER_UNSUPPORTED, t ? t->with_span : nowhere,
                      "table `%s`: column `%s` has no Avro form (%s); change it, or use "
                      "'format' = 'json'",
                      name, schema->cols[bad].name, why);
    if (rc != DIPPER_OK) return rc;
    rd->avrod = dp_avro_decoder_new(schema, rd->decode_col);
    if (!rd->avrod) return DIPPER_NOMEM;
  } else {
    dp_json_options o = {is_true(fmt_option(t, "json.fail-on-missing-field"))};
    rd->json = dp_json_decoder_new(schema, rd->decode_col, &o);
    if (!rd->json) return DIPPER_NOMEM;
  }
  return DIPPER_OK;
}

int dp_record_decoder_open(dp_record_decoder *rd, const dp_table_def *t, const dp_schema *schema,
                           const char *fallback, dp_diags *d) {
  memset(rd, 0, sizeof *rd);
  int rc = decoder_open(rd, t, schema, fallback, d);
  /* callers close only what opened: a refused format or column frees here */
  if (rc != DIPPER_OK) dp_record_decoder_close(rd);
  return rc;
}

void dp_record_decoder_close(dp_record_decoder *rd) {
  dp_json_decoder_free(rd->json);
  dp_csv_decoder_free(rd->csvd);
  dp_avro_decoder_free(rd->avrod);
  free(rd->decode_col);
  memset(rd, 0, sizeof *rd);
}

int dp_record_decode(dp_record_decoder *rd, const char *rec, size_t n, dp_batch *out,
                     bool *skipped, dp_format_error *err) {
  *skipped = false;
  if (rd->csv) return dp_csv_decode(rd->csvd, rec, n, out, skipped, err);
  if (rd->avro) return dp_avro_decode(rd->avrod, rec, n, out, err);
  /* JSON lines: a blank line is no record */
  size_t i = 0;
  while (i < n && (rec[i] == ' ' || rec[i] == '\t' || rec[i] == '\r' || rec[i] == '\n')) i++;
  if (i == n) {
    *skipped = true;
    return DIPPER_OK;
  }
  return dp_json_decode(rd->json, rec, n, out, err);
}

size_t dp_record_end(const dp_record_decoder *rd, const char *p, size_t n, bool *complete) {
  if (rd->csv) return dp_csv_record_end(p, n, rd->csv_opts.quote, complete);
  if (rd->avro) { /* the medium frames it: all of it is one datum */
    *complete = true;
    return n;
  }
  const char *nl = memchr(p, '\n', n);
  *complete = nl != NULL;
  return nl ? (size_t)(nl - p) + 1 : n;
}

/* ---- bad records ---- */

void dp_bad_records_init(dp_bad_records *br, const dp_table_def *t) {
  memset(br, 0, sizeof *br);
  const char *p = dp_table_option(t, "dipper.bad-records", NULL);
  if (p && strcasecmp(p, "skip") == 0)
    br->policy = DP_BAD_SKIP;
  else if (p && strcasecmp(p, "dead-letter") == 0)
    br->policy = DP_BAD_DEAD_LETTER;
  else if (!p && (is_true(fmt_option(t, "json.ignore-parse-errors")) ||
                  is_true(fmt_option(t, "csv.ignore-parse-errors"))))
    br->policy = DP_BAD_SKIP; /* Flink's own switch for the same thing */
  br->path = dp_table_option(t, "dipper.dead-letter.path", NULL);
}

int dp_bad_record(dp_bad_records *br, dp_source *s, const char *where, const dp_format_error *e,
                  const char *rec, size_t n) {
  dp_span nowhere = {0, 0, 0, 0};
  const char *table = s->table ? s->table->name : "?";
  switch (br->policy) {
  case DP_BAD_SKIP: s->metrics.bad_records_skipped++; return DIPPER_OK;
  case DP_BAD_DEAD_LETTER: {
    if (!br->path)
      return dp_error(s->diags, DIPPER_OPTION, nowhere,
                      "table `%s` sends bad records to a dead letter file but names none; add "
                      "'dipper.dead-letter.path' = '/path/to/bad.jsonl'",
                      table);
    if (!br->dead) {
      br->dead = fopen(br->path, "ab");
      if (!br->dead)
        return dp_error(s->diags, DIPPER_IO, nowhere,
                        "table `%s`: cannot open the dead letter file '%s': %s", table, br->path,
                        strerror(errno));
    }
    dp_buf line = DP_BUF_INIT;
    dp_buf_puts(&line, "{\"table\":");
    dp_json_put_string(&line, table, strlen(table));
    dp_buf_puts(&line, ",\"source\":");
    dp_json_put_string(&line, where, strlen(where));
    dp_buf_printf(&line, ",\"offset\":%lld,\"error\":", (long long)e->offset);
    dp_json_put_string(&line, e->msg, strlen(e->msg));
    if (dp_utf8_valid_prefix((const unsigned char *)rec, n) == n) {
      dp_buf_puts(&line, ",\"record\":");
      while (n > 0 && (rec[n - 1] == '\n' || rec[n - 1] == '\r')) n--;
      dp_json_put_string(&line, rec, n);
    } else {
      /* binary (an Avro datum, stray bytes): kept whole rather than mangled */
      dp_buf_puts(&line, ",\"record_base64\":\"");
      dp_base64_put(&line, (const unsigned char *)rec, n);
      dp_buf_putc(&line, '"');
    }
    dp_buf_puts(&line, "}\n");
    int rc = DIPPER_OK;
    if (line.oom)
      rc = DIPPER_NOMEM;
    else if (fwrite(line.data, 1, line.len, br->dead) != line.len)
      rc = dp_error(s->diags, DIPPER_IO, nowhere, "table `%s`: cannot write the dead letter file '%s'",
                    table, br->path);
    dp_buf_free(&line);
    if (rc == DIPPER_OK) s->metrics.bad_records_skipped++;
    return rc;
  }
  case DP_BAD_FAIL:
  default:
    return dp_error(s->diags, DIPPER_DATA, nowhere,
                    "table `%s`: bad record at %s (byte %lld): %s; fix the record, or set "
                    "'dipper.bad-records' = 'skip' (or 'dead-letter' with "
                    "'dipper.dead-letter.path') on the table",
                    table, where, (long long)e->offset, e->msg);
  }
}

int dp_bad_records_flush(dp_bad_records *br, dp_source *s) {
  if (br->dead && fflush(br->dead) != 0) {
    dp_span nowhere = {0, 0, 0, 0};
    return dp_error(s->diags, DIPPER_IO, nowhere, "cannot write the dead letter file '%s': %s",
                    br->path, strerror(errno));
  }
  return DIPPER_OK;
}

void dp_bad_records_close(dp_bad_records *br) {
  if (br->dead) fclose(br->dead);
  br->dead = NULL;
}

/* ---- rows ---- */

static int append_one(dp_vector *dst, const dp_vector *src, int64_t i) {
  if (dp_vector_is_null(src, i)) return dp_vector_append_null(dst);
  int rc;
  switch (src->phys) {
  case DP_PHYS_BIT: return dp_vector_append_bool(dst, dp_vector_get_bool(src, i));
  case DP_PHYS_I8:
  case DP_PHYS_I16:
  case DP_PHYS_I32:
  case DP_PHYS_I64: return dp_vector_append_i64(dst, dp_vector_get_i64(src, i));
  case DP_PHYS_F32:
  case DP_PHYS_F64: return dp_vector_append_f64(dst, dp_vector_get_f64(src, i));
  case DP_PHYS_D128: return dp_vector_append_dec(dst, dp_vector_get_dec(src, i));
  case DP_PHYS_VARBIN: {
    size_t n;
    const char *s = dp_vector_get_str(src, i, &n);
    return dp_vector_append_str(dst, s, n);
  }
  case DP_PHYS_LIST: {
    int64_t start, end;
    dp_vector_list_bounds(src, i, &start, &end);
    for (int64_t j = start; j < end; j++)
      if ((rc = append_one(dst->children[0], src->children[0], j)) != DIPPER_OK) return rc;
    return dp_vector_append_list(dst);
  }
  case DP_PHYS_STRUCT:
    for (int c = 0; c < src->nchildren; c++)
      if ((rc = append_one(dst->children[c], src->children[c], i)) != DIPPER_OK) return rc;
    return dp_vector_append_struct(dst);
  default: return dp_vector_append_null(dst);
  }
}

int dp_rows_append(dp_vector *dst, const dp_vector *src, int64_t from, int64_t n) {
  if (n <= 0) return DIPPER_OK;
  int width = dp_phys_width(src->phys);
  if (width && src->null_count == 0 && !dst->validity && dst->phys == src->phys) {
    /* the common case: one copy */
    int rc = dp_vector_reserve(dst, n);
    if (rc) return rc;
    memcpy((char *)dst->values + dst->length * width, (const char *)src->values + from * width,
           (size_t)(n * width));
    dst->length += n;
    return DIPPER_OK;
  }
  for (int64_t i = from; i < from + n; i++) {
    int rc = append_one(dst, src, i);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

int dp_batch_append(dp_batch *dst, const dp_batch *src) {
  if (dst->ncols != src->ncols) return DIPPER_MISUSE;
  for (int c = 0; c < src->ncols; c++) {
    int rc = dp_rows_append(dst->cols[c], src->cols[c], 0, src->nrows);
    if (rc) return rc;
  }
  if (dst->ncols == 0) {
    dst->nrows += src->nrows;
    return DIPPER_OK;
  }
  return dp_batch_sync(dst);
}

const dp_type *dp_type_copy(dp_arena *a, const dp_type *t) {
  if (!t) return NULL;
  dp_type *c = dp_type_new(a, t->kind);
  if (!c) return NULL;
  *c = *t;
  if (t->kind == DP_T_ROW && t->nfields > 0) {
    dp_field *f = dp_arena_calloc(a, (size_t)t->nfields, sizeof *f);
    if (!f) return NULL;
    for (int i = 0; i < t->nfields; i++) {
      f[i].name = dp_arena_strdup(a, t->fields[i].name ? t->fields[i].name : "");
      f[i].type = dp_type_copy(a, t->fields[i].type);
      if (!f[i].name || !f[i].type) return NULL;
    }
    c->fields = f;
  }
  if (t->elem && !(c->elem = dp_type_copy(a, t->elem))) return NULL;
  if (t->value && !(c->value = dp_type_copy(a, t->value))) return NULL;
  return c;
}

dp_schema *dp_schema_copy(dp_arena *a, const dp_schema *s) {
  dp_schema *c = dp_schema_new(a, s->ncols);
  if (!c) return NULL;
  for (int i = 0; i < s->ncols; i++) {
    c->cols[i].name = dp_arena_strdup(a, s->cols[i].name ? s->cols[i].name : "");
    c->cols[i].type = dp_type_copy(a, s->cols[i].type);
    if (!c->cols[i].name || !c->cols[i].type) return NULL;
  }
  return c;
}

