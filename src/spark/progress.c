/*
** progress.c — Spark's StreamingQueryProgress JSON as a C struct.
**
** Owns: a small JSON reader (a tree in an arena, for documents of a few KiB:
** progress reports and listener events) and the mapping of a progress report
** onto dp_spark_progress (streaming.h).  The input is untrusted bytes from
** the network: nesting is bounded, every length checked, nothing read past
** `len`.
** Does not own: fetching the JSON (streaming.c), or the record codecs of
** formats/json.c (those decode rows by a schema; a progress report has
** dynamic keys such as per-partition offsets).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/types.h"
#include "spark/progress_int.h"
#include "spark/streaming.h"

#define MAX_DEPTH 64

typedef struct reader {
  const char *s, *end, *p;
  dp_arena *a;
  dp_buf *err;
  int rc;
} reader;

static void fail(reader *r, const char *what) {
  if (r->rc) return;
  r->rc = DIPPER_DATA;
  if (r->err) dp_buf_printf(r->err, "progress JSON: %s at byte %zu", what, (size_t)(r->p - r->s));
}

static void oom(reader *r) {
  if (!r->rc) r->rc = DIPPER_NOMEM;
}

static void ws(reader *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
    r->p++;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void put_utf8(char *out, size_t *n, uint32_t cp) {
  if (cp < 0x80) {
    out[(*n)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*n)++] = (char)(0xC0 | (cp >> 6));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*n)++] = (char)(0xE0 | (cp >> 12));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*n)++] = (char)(0xF0 | (cp >> 18));
    out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  }
}

static bool hex4(reader *r, uint32_t *cp) {
  if (r->end - r->p < 4) return false;
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    int h = hexval(r->p[i]);
    if (h < 0) return false;
    v = v * 16 + (uint32_t)h;
  }
  r->p += 4;
  *cp = v;
  return true;
}

/* At the opening quote: the decoded string in the arena. */
static const char *string(reader *r) {
  r->p++;
  const char *start = r->p;
  /* The decoded form is never longer than the escaped one. */
  const char *q = start;
  while (q < r->end && *q != '"') q += (*q == '\\' && q + 1 < r->end) ? 2 : 1;
  if (q >= r->end) {
    fail(r, "unterminated string");
    return NULL;
  }
  char *out = dp_arena_alloc(r->a, (size_t)(q - start) + 1);
  if (!out) {
    oom(r);
    return NULL;
  }
  size_t n = 0;
  while (r->p < r->end && *r->p != '"') {
    char c = *r->p++;
    if ((unsigned char)c < 0x20) {
      fail(r, "control character in a string");
      return NULL;
    }
    if (c != '\\') {
      out[n++] = c;
      continue;
    }
    if (r->p >= r->end) break;
    char e = *r->p++;
    switch (e) {
    case '"': case '\\': case '/': out[n++] = e; break;
    case 'b': out[n++] = '\b'; break;
    case 'f': out[n++] = '\f'; break;
    case 'n': out[n++] = '\n'; break;
    case 'r': out[n++] = '\r'; break;
    case 't': out[n++] = '\t'; break;
    case 'u': {
      uint32_t cp;
      if (!hex4(r, &cp)) {
        fail(r, "bad \\u escape");
        return NULL;
      }
      if (cp >= 0xD800 && cp < 0xDC00 && r->end - r->p >= 6 && r->p[0] == '\\' &&
          r->p[1] == 'u') {
        uint32_t lo;
        r->p += 2;
        if (!hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
          fail(r, "bad surrogate pair");
          return NULL;
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      }
      /* 6 escaped bytes (or 12 for a pair) give at most 3 (or 4) bytes. */
      put_utf8(out, &n, cp);
      break;
    }
    default: fail(r, "bad escape"); return NULL;
    }
  }
  if (r->p >= r->end) {
    fail(r, "unterminated string");
    return NULL;
  }
  r->p++; /* closing quote */
  out[n] = '\0';
  return out;
}

static dp_jv *value(reader *r, int depth);

static dp_jv *new_value(reader *r, dp_jv_kind k, const char *start) {
  dp_jv *v = dp_arena_calloc(r->a, 1, sizeof *v);
  if (!v) {
    oom(r);
    return NULL;
  }
  v->kind = k;
  v->raw = start;
  return v;
}

static dp_jv *container(reader *r, int depth, bool object) {
  const char *start = r->p;
  dp_jv *v = new_value(r, object ? DP_JV_OBJECT : DP_JV_ARRAY, start);
  if (!v) return NULL;
  r->p++;
  dp_jv **tail = &v->first;
  ws(r);
  if (r->p < r->end && *r->p == (object ? '}' : ']')) {
    r->p++;
    v->raw_len = (size_t)(r->p - start);
    return v;
  }
  for (;;) {
    ws(r);
    const char *key = NULL;
    if (object) {
      if (r->p >= r->end || *r->p != '"') {
        fail(r, "expected a member name");
        return NULL;
      }
      key = string(r);
      if (!key) return NULL;
      ws(r);
      if (r->p >= r->end || *r->p != ':') {
        fail(r, "expected ':'");
        return NULL;
      }
      r->p++;
    }
    dp_jv *m = value(r, depth + 1);
    if (!m) return NULL;
    m->key = key;
    *tail = m;
    tail = &m->next;
    v->n++;
    ws(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      continue;
    }
    if (r->p < r->end && *r->p == (object ? '}' : ']')) {
      r->p++;
      v->raw_len = (size_t)(r->p - start);
      return v;
    }
    fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
    return NULL;
  }
}

static bool word(reader *r, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0) return false;
  r->p += n;
  return true;
}

static dp_jv *number(reader *r) {
  const char *start = r->p;
  const char *q = r->p;
  if (q < r->end && *q == '-') q++;
  while (q < r->end && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' ||
                        *q == '+' || *q == '-'))
    q++;
  size_t n = (size_t)(q - start);
  if (n == 0 || n > 63) {
    fail(r, "bad number");
    return NULL;
  }
  char buf[64];
  memcpy(buf, start, n);
  buf[n] = '\0';
  char *endp = NULL;
  double d = strtod(buf, &endp);
  if (!endp || *endp) {
    fail(r, "bad number");
    return NULL;
  }
  dp_jv *v = new_value(r, DP_JV_NUMBER, start);
  if (!v) return NULL;
  v->num = d;
  v->raw_len = n;
  r->p = q;
  return v;
}

static dp_jv *value(reader *r, int depth) {
  if (depth > MAX_DEPTH) {
    fail(r, "nested too deeply");
    return NULL;
  }
  ws(r);
  if (r->p >= r->end) {
    fail(r, "unexpected end");
    return NULL;
  }
  const char *start = r->p;
  char c = *r->p;
  if (c == '{' || c == '[') return container(r, depth, c == '{');
  if (c == '"') {
    dp_jv *v = new_value(r, DP_JV_STRING, start);
    if (!v) return NULL;
    v->str = string(r);
    if (!v->str) return NULL;
    v->raw_len = (size_t)(r->p - start);
    return v;
  }
  if (c == '-' || (c >= '0' && c <= '9')) return number(r);
  dp_jv_kind k;
  if (word(r, "true")) k = DP_JV_TRUE;
  else if (word(r, "false")) k = DP_JV_FALSE;
  else if (word(r, "null")) k = DP_JV_NULL;
  else {
    fail(r, "unexpected character");
    return NULL;
  }
  dp_jv *v = new_value(r, k, start);
  if (v) v->raw_len = (size_t)(r->p - start);
  return v;
}

int dp_jv_parse(dp_arena *a, const char *json, size_t len, dp_jv **out, dp_buf *err) {
  reader r = {.s = json, .end = json + len, .p = json, .a = a, .err = err};
  *out = NULL;
  dp_jv *v = value(&r, 0);
  if (!r.rc) {
    ws(&r);
    if (r.p != r.end) fail(&r, "trailing characters");
  }
  if (r.rc) return r.rc;
  *out = v;
  return DIPPER_OK;
}

const dp_jv *dp_jv_get(const dp_jv *obj, const char *key) {
  if (!obj || obj->kind != DP_JV_OBJECT) return NULL;
  for (const dp_jv *m = obj->first; m; m = m->next)
    if (m->key && strcmp(m->key, key) == 0) return m;
  return NULL;
}

const char *dp_jv_str(const dp_jv *obj, const char *key) {
  const dp_jv *v = dp_jv_get(obj, key);
  return v && v->kind == DP_JV_STRING ? v->str : NULL;
}

int64_t dp_jv_int(const dp_jv *obj, const char *key, int64_t dflt) {
  const dp_jv *v = dp_jv_get(obj, key);
  if (!v || v->kind != DP_JV_NUMBER || !(v->num >= -9.2e18 && v->num <= 9.2e18)) return dflt;
  return (int64_t)v->num;
}

double dp_jv_num(const dp_jv *obj, const char *key) {
  const dp_jv *v = dp_jv_get(obj, key);
  if (!v) return NAN;
  if (v->kind == DP_JV_NUMBER) return v->num;
  /* Spark writes non-finite doubles as strings in some versions. */
  if (v->kind == DP_JV_STRING) return NAN;
  return NAN;
}

/* "2024-01-01T00:00:50.000Z" (also without the fraction, or with up to 9
** digits): µs since the epoch, or -1. */
int64_t dp_spark_parse_iso_time(const char *s) {
  if (!s) return -1;
  int y, mo, d, h, mi, sec;
  int n = 0;
  size_t len = strlen(s);
  if (len < 19) return -1;
  for (int i = 0; i < 19; i++) {
    bool digit = s[i] >= '0' && s[i] <= '9';
    bool sep = i == 4 || i == 7 || i == 10 || i == 13 || i == 16;
    if (sep ? digit : !digit) return -1;
  }
  if (s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' ||
      s[16] != ':')
    return -1;
  y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
  mo = (s[5] - '0') * 10 + (s[6] - '0');
  d = (s[8] - '0') * 10 + (s[9] - '0');
  h = (s[11] - '0') * 10 + (s[12] - '0');
  mi = (s[14] - '0') * 10 + (s[15] - '0');
  sec = (s[17] - '0') * 10 + (s[18] - '0');
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return -1;
  const char *p = s + 19;
  int64_t frac = 0;
  if (*p == '.') {
    p++;
    int64_t scale = 100000;
    for (; *p >= '0' && *p <= '9'; p++, n++) {
      if (n < 6) frac += (*p - '0') * scale;
      scale /= 10;
    }
    if (n == 0) return -1;
  }
  if (*p == 'Z') p++;
  if (*p) return -1;
  int64_t days = dp_days_from_civil(y, (unsigned)mo, (unsigned)d);
  return ((days * 24 + h) * 60 + mi) * 60 * (int64_t)1000000 + (int64_t)sec * 1000000 + frac;
}

/* A copy of v's JSON text in the arena, or NULL for JSON null or absence. */
static const char *raw_copy(dp_arena *a, const dp_jv *v, int *rc) {
  if (!v || v->kind == DP_JV_NULL) return NULL;
  char *s = dp_arena_strndup(a, v->raw, v->raw_len);
  if (!s) *rc = DIPPER_NOMEM;
  return s;
}

int dp_spark_progress_from(dp_arena *a, const dp_jv *o, dp_spark_progress *out, dp_buf *err) {
  if (!o || o->kind != DP_JV_OBJECT) {
    if (err) dp_buf_puts(err, "progress JSON: not an object");
    return DIPPER_DATA;
  }
  int rc = DIPPER_OK;
  out->id = dp_jv_str(o, "id");
  out->run_id = dp_jv_str(o, "runId");
  out->name = dp_jv_str(o, "name");
  out->timestamp = dp_jv_str(o, "timestamp");
  out->timestamp_us = dp_spark_parse_iso_time(out->timestamp);
  out->batch_id = dp_jv_int(o, "batchId", -1);
  out->batch_duration_ms = dp_jv_int(o, "batchDuration", -1);
  out->num_input_rows = dp_jv_int(o, "numInputRows", -1);
  out->input_rows_per_second = dp_jv_num(o, "inputRowsPerSecond");
  out->processed_rows_per_second = dp_jv_num(o, "processedRowsPerSecond");
  const dp_jv *dur = dp_jv_get(o, "durationMs");
  out->trigger_execution_ms = dp_jv_int(dur, "triggerExecution", -1);
  out->add_batch_ms = dp_jv_int(dur, "addBatch", -1);
  out->get_batch_ms = dp_jv_int(dur, "getBatch", -1);
  out->latest_offset_ms = dp_jv_int(dur, "latestOffset", -1);
  out->query_planning_ms = dp_jv_int(dur, "queryPlanning", -1);
  out->wal_commit_ms = dp_jv_int(dur, "walCommit", -1);
  out->commit_offsets_ms = dp_jv_int(dur, "commitOffsets", -1);
  const dp_jv *et = dp_jv_get(o, "eventTime");
  int64_t wm = dp_spark_parse_iso_time(dp_jv_str(et, "watermark"));
  out->has_watermark = dp_jv_str(et, "watermark") != NULL && wm != -1;
  out->watermark_us = out->has_watermark ? wm : -1;

  const dp_jv *ops = dp_jv_get(o, "stateOperators");
  if (ops && ops->kind == DP_JV_ARRAY && ops->n > 0) {
    out->state = dp_arena_calloc(a, (size_t)ops->n, sizeof *out->state);
    if (!out->state) return DIPPER_NOMEM;
    for (const dp_jv *s = ops->first; s; s = s->next) {
      dp_spark_state_progress *st = &out->state[out->nstate++];
      st->operator_name = dp_jv_str(s, "operatorName");
      st->num_rows_total = dp_jv_int(s, "numRowsTotal", -1);
      st->num_rows_updated = dp_jv_int(s, "numRowsUpdated", -1);
      st->num_rows_removed = dp_jv_int(s, "numRowsRemoved", -1);
      st->num_rows_dropped_by_watermark = dp_jv_int(s, "numRowsDroppedByWatermark", -1);
      st->memory_used_bytes = dp_jv_int(s, "memoryUsedBytes", -1);
      if (st->num_rows_total > 0) out->state_rows_total += st->num_rows_total;
      if (st->num_rows_dropped_by_watermark > 0)
        out->state_rows_dropped_by_watermark += st->num_rows_dropped_by_watermark;
    }
  }
  const dp_jv *srcs = dp_jv_get(o, "sources");
  if (srcs && srcs->kind == DP_JV_ARRAY && srcs->n > 0) {
    out->sources = dp_arena_calloc(a, (size_t)srcs->n, sizeof *out->sources);
    if (!out->sources) return DIPPER_NOMEM;
    for (const dp_jv *s = srcs->first; s; s = s->next) {
      dp_spark_source_progress *sp = &out->sources[out->nsources++];
      sp->description = dp_jv_str(s, "description");
      sp->start_offset = raw_copy(a, dp_jv_get(s, "startOffset"), &rc);
      sp->end_offset = raw_copy(a, dp_jv_get(s, "endOffset"), &rc);
      sp->latest_offset = raw_copy(a, dp_jv_get(s, "latestOffset"), &rc);
      sp->num_input_rows = dp_jv_int(s, "numInputRows", -1);
      sp->input_rows_per_second = dp_jv_num(s, "inputRowsPerSecond");
      sp->processed_rows_per_second = dp_jv_num(s, "processedRowsPerSecond");
    }
  }
  /* The batch's input is the sum over its sources, which is how Spark
     defines it; some servers send only the per-source counts. */
  for (int i = 0; out->num_input_rows < 0 && i < out->nsources; i++)
    if (out->sources[i].num_input_rows >= 0) {
      out->num_input_rows = 0;
      for (int j = 0; j < out->nsources; j++)
        if (out->sources[j].num_input_rows > 0) out->num_input_rows += out->sources[j].num_input_rows;
    }
  const dp_jv *sink = dp_jv_get(o, "sink");
  out->sink_description = dp_jv_str(sink, "description");
  out->sink_output_rows = dp_jv_int(sink, "numOutputRows", -1);
  return rc;
}

int dp_spark_progress_parse(const char *json, size_t len, dp_spark_progress *out, dp_buf *err) {
  memset(out, 0, sizeof *out);
  dp_arena *a = dp_arena_new(len * 2 + 1024);
  if (!a) return DIPPER_NOMEM;
  out->mem_ = a;
  dp_jv *root = NULL;
  int rc = dp_jv_parse(a, json, len, &root, err);
  if (rc) return rc;
  return dp_spark_progress_from(a, root, out, err);
}

void dp_spark_progress_free(dp_spark_progress *p) {
  if (!p) return;
  dp_arena_free(p->mem_);
  memset(p, 0, sizeof *p);
}
