/*
** print.c — rows of a result (an Arrow C stream of struct arrays, from
** dipper_execute) printed as an aligned table, CSV or JSON lines.
**
** Owns: turning one Arrow C Data value into text, and the three layouts.
** Built on the Arrow C Data Interface alone (the CLI sees only dipper.h):
** every format string of the spec that dipper or Spark hands out is known
** here, and an unknown one prints as <format X> instead of failing the run.
**
** Text of values: integers and decimals exact (all of the scale's digits),
** floating point the shortest text that reads back the same, booleans
** true/false, dates 2024-01-31, times 12:30:00[.ffffff], timestamps ISO 8601
** 2024-01-31T12:30:00[.ffffff] with a trailing Z when the type has a zone (an
** instant in UTC), binary as hex \x0aff, intervals as ISO 8601 durations
** (P1Y2M, P3DT4H5M6S), nested values as JSON text ({"a": 1}, [1, 2]; a map
** with string keys as an object, else as a list of [key, value] pairs).
** NULL prints as NULL in a table and CSV (where a string "NULL" is quoted)
** and as null in JSON.
**
** Layouts: `table` buffers the whole result to size its columns (numbers
** right-aligned, headers too; the rest left-aligned, widths in code points) and ends with
** "(N rows)"; `csv` writes a header and RFC 4180 rows as they come; `json`
** one object per row, keys = column names, as they come.
*/
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- growable text ---- */

typedef struct text {
  char *p;
  size_t len, cap;
  bool oom;
} text;

static void put(text *t, const char *s, size_t n) {
  if (t->oom) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 64;
    while (cap < t->len + n + 1) cap *= 2;
    char *grown = realloc(t->p, cap);
    if (!grown) {
      t->oom = true;
      return;
    }
    t->p = grown;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void printf_(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void printf_(text *t, const char *fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) put(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* ---- values ---- */

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Days since 1970-01-01 to a proleptic Gregorian date (eras of 400 years
** counted from 0000-03-01, so the leap day ends each cycle). */
static void put_date(text *t, int64_t days) {
  int64_t z = days + 719468;
  int64_t era = floor_div(z, 146097);
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int d = (int)(doy - (153 * mp + 2) / 5 + 1);
  int m = (int)(mp < 10 ? mp + 3 : mp - 9);
  int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  printf_(t, "%04lld-%02d-%02d", (long long)y, m, d);
}

/* A time of day in µs: hh:mm:ss, and .ffffff when there is a fraction. */
static void put_clock(text *t, int64_t us) {
  int64_t secs = us / 1000000, frac = us % 1000000;
  printf_(t, "%02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
  if (frac) printf_(t, ".%06d", (int)frac);
}

/* µs since the epoch as ISO 8601. */
static void put_timestamp(text *t, int64_t us, bool utc) {
  int64_t days = floor_div(us, INT64_C(86400000000));
  put_date(t, days);
  puts_(t, "T");
  put_clock(t, us - days * INT64_C(86400000000));
  if (utc) puts_(t, "Z");
}

/* A count of `unit` per second (1, 1e3, 1e6, 1e9) as µs; the sub-µs part of
** nanoseconds is cut (dipper keeps µs). */
static int64_t to_micros(int64_t v, char unit) {
  switch (unit) {
  case 's': return v * 1000000;
  case 'm': return v * 1000;
  case 'n': return v / 1000;
  default: return v;
  }
}

/* An ISO 8601 duration: P[nY][nM][nD][T[nH][nM][n[.f]S]], "PT0S" for zero. */
static void put_duration(text *t, int64_t months, int64_t days, int64_t us) {
  bool neg = months < 0 || (months == 0 && days < 0) || (months == 0 && days == 0 && us < 0);
  if (neg) {
    puts_(t, "-");
    months = -months;
    days = -days;
    us = -us;
  }
  puts_(t, "P");
  if (months / 12) printf_(t, "%lldY", (long long)(months / 12));
  if (months % 12) printf_(t, "%lldM", (long long)(months % 12));
  if (days) printf_(t, "%lldD", (long long)days);
  if (us || (!months && !days)) {
    puts_(t, "T");
    int64_t h = us / INT64_C(3600000000), m = us / 60000000 % 60, s = us / 1000000 % 60;
    int64_t f = us % 1000000;
    if (h) printf_(t, "%lldH", (long long)h);
    if (m) printf_(t, "%lldM", (long long)m);
    if (s || f || (!h && !m)) {
      printf_(t, "%lld", (long long)s);
      if (f) printf_(t, ".%06lld", (long long)f);
      puts_(t, "S");
    }
  }
}

/* The shortest text that reads back as the same value. */
static void put_float(text *t, double x, bool single, bool json) {
  if (isnan(x) || isinf(x)) {
    const char *w = isnan(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";
    if (json) printf_(t, "\"%s\"", w); /* JSON has no such numbers */
    else puts_(t, w);
    return;
  }
  char buf[40];
  int max = single ? 9 : 17;
  for (int prec = 1; prec <= max; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (single ? strtof(buf, NULL) == (float)x : strtod(buf, NULL) == x) break;
  }
  puts_(t, buf);
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

__extension__ typedef unsigned __int128 u128;

/* A little-endian two's complement integer of `words` 64-bit words, scaled. */
static void put_decimal(text *t, const uint64_t *words, int nwords, int scale) {
  uint64_t mag[4];
  bool neg = (words[nwords - 1] >> 63) != 0;
  unsigned carry = 1;
  for (int i = 0; i < nwords; i++) { /* magnitude: negate when negative */
    uint64_t w = neg ? ~words[i] : words[i];
    if (neg) {
      uint64_t s = w + carry;
      carry = s < w ? 1u : 0u;
      w = s;
    }
    mag[i] = w;
  }
  char digits[80];
  int n = 0;
  for (;;) { /* divide by 10 word by word, most significant first */
    bool zero = true;
    u128 rem = 0;
    for (int i = nwords - 1; i >= 0; i--) {
      u128 cur = (rem << 64) | mag[i];
      mag[i] = (uint64_t)(cur / 10);
      rem = cur % 10;
      if (mag[i]) zero = false;
    }
    digits[n++] = (char)('0' + (int)rem);
    if (zero || n >= (int)sizeof digits - 2) break;
  }
  while (n <= scale && n < (int)sizeof digits) digits[n++] = '0';
  if (neg) puts_(t, "-");
  for (int i = n - 1; i >= 0; i--) {
    if (i == scale - 1) puts_(t, ".");
    put(t, &digits[i], 1);
  }
}

static void put_json_string(text *t, const char *s, size_t n) {
  puts_(t, "\"");
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    put(t, s + run, i - run);
    run = i + 1;
    switch (c) {
    case '"': puts_(t, "\\\""); break;
    case '\\': puts_(t, "\\\\"); break;
    case '\n': puts_(t, "\\n"); break;
    case '\r': puts_(t, "\\r"); break;
    case '\t': puts_(t, "\\t"); break;
    default: printf_(t, "\\u%04x", c); break;
    }
  }
  put(t, s + run, n - run);
  puts_(t, "\"");
}

void cli_put_json_string(FILE *out, const char *s) {
  text t = {0};
  put_json_string(&t, s, strlen(s));
  fputs(t.p && !t.oom ? t.p : "\"\"", out);
  free(t.p);
}

static bool is_null(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t j) {
  if (strcmp(s->format, "n") == 0) return true;
  if (a->null_count == 0 || a->n_buffers < 1 || !a->buffers[0]) return false;
  const uint8_t *valid = a->buffers[0];
  return !((valid[j >> 3] >> (j & 7)) & 1);
}

static const void *buffer(const struct ArrowArray *a, int64_t k) {
  return a->n_buffers > k ? a->buffers[k] : NULL;
}

/* Does this format print as a JSON string when nested (or in JSON lines)? */
static bool quoted_in_json(const char *f) {
  return f[0] == 'u' || f[0] == 'U' || f[0] == 'z' || f[0] == 'Z' || f[0] == 'w' || f[0] == 't';
}

static void put_value(text *t, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                      bool json);

/* Elements [from, to) of a list's child. */
static void put_list(text *t, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t from,
                     int64_t to) {
  puts_(t, "[");
  for (int64_t k = from; k < to; k++) {
    if (k > from) puts_(t, ", ");
    put_value(t, s->children[0], a->children[0], k, true);
  }
  puts_(t, "]");
}

/* Entries [from, to) of a map: an object when the keys are strings. */
static void put_map(text *t, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t from,
                    int64_t to) {
  const struct ArrowSchema *es = s->children[0];
  const struct ArrowArray *ea = a->children[0];
  if (es->n_children < 2 || ea->n_children < 2) {
    puts_(t, "<map>");
    return;
  }
  const char *kf = es->children[0]->format;
  bool object = strcmp(kf, "u") == 0 || strcmp(kf, "U") == 0;
  puts_(t, object ? "{" : "[");
  for (int64_t k = from; k < to; k++) {
    int64_t e = ea->offset + k;
    if (k > from) puts_(t, ", ");
    if (!object) puts_(t, "[");
    put_value(t, es->children[0], ea->children[0], e, true);
    puts_(t, object ? ": " : ", ");
    put_value(t, es->children[1], ea->children[1], e, true);
    if (!object) puts_(t, "]");
  }
  puts_(t, object ? "}" : "]");
}

/* Value i of a (a's offset not yet added); `json`: as JSON text. */
static void put_value(text *t, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                      bool json) {
  int64_t j = a->offset + i;
  if (is_null(s, a, j)) {
    puts_(t, json ? "null" : "NULL");
    return;
  }
  const char *f = s->format;
  const void *data = buffer(a, 1);
  bool quote = json && quoted_in_json(f);
  text v = {0};
  text *o = quote ? &v : t; /* quoted kinds are built apart, then escaped */
  switch (f[0]) {
  case 'b': puts_(o, (((const uint8_t *)data)[j >> 3] >> (j & 7)) & 1 ? "true" : "false"); break;
  case 'c': printf_(o, "%d", ((const int8_t *)data)[j]); break;
  case 'C': printf_(o, "%u", ((const uint8_t *)data)[j]); break;
  case 's': printf_(o, "%d", ((const int16_t *)data)[j]); break;
  case 'S': printf_(o, "%u", ((const uint16_t *)data)[j]); break;
  case 'i': printf_(o, "%d", ((const int32_t *)data)[j]); break;
  case 'I': printf_(o, "%u", ((const uint32_t *)data)[j]); break;
  case 'l': printf_(o, "%lld", (long long)((const int64_t *)data)[j]); break;
  case 'L': printf_(o, "%llu", (unsigned long long)((const uint64_t *)data)[j]); break;
  case 'e': put_float(o, half_to_double(((const uint16_t *)data)[j]), true, json); break;
  case 'f': put_float(o, ((const float *)data)[j], true, json); break;
  case 'g': put_float(o, ((const double *)data)[j], false, json); break;
  case 'd': {
    /* d:precision,scale[,bitwidth] */
    const char *comma = strchr(f, ',');
    int scale = comma ? atoi(comma + 1) : 0;
    const char *bits = comma ? strchr(comma + 1, ',') : NULL;
    int nwords = bits ? atoi(bits + 1) / 64 : 2;
    if (nwords != 2 && nwords != 4) nwords = 2;
    uint64_t words[4];
    memcpy(words, (const unsigned char *)data + (size_t)j * 8u * (size_t)nwords,
           8u * (size_t)nwords);
    put_decimal(o, words, nwords, scale);
    break;
  }
  case 'u': case 'z': case 'U': case 'Z': {
    bool large = f[0] == 'U' || f[0] == 'Z';
    int64_t from = large ? ((const int64_t *)data)[j] : ((const int32_t *)data)[j];
    int64_t to = large ? ((const int64_t *)data)[j + 1] : ((const int32_t *)data)[j + 1];
    const char *bytes = buffer(a, 2);
    const char *p = bytes ? bytes + from : "";
    size_t n = (size_t)(to - from);
    if (f[0] == 'u' || f[0] == 'U') {
      if (json) put_json_string(t, p, n);
      else put(t, p, n);
      return;
    }
    puts_(o, "\\x");
    for (size_t k = 0; k < n; k++) printf_(o, "%02x", (unsigned char)p[k]);
    break;
  }
  case 'w': { /* w:bytes */
    int width = atoi(f + 2);
    const unsigned char *p = (const unsigned char *)data + (size_t)j * (size_t)width;
    puts_(o, "\\x");
    for (int k = 0; k < width; k++) printf_(o, "%02x", p[k]);
    break;
  }
  case 't':
    if (f[1] == 'd' && f[2] == 'D') {
      put_date(o, ((const int32_t *)data)[j]);
    } else if (f[1] == 'd' && f[2] == 'm') {
      put_date(o, floor_div(((const int64_t *)data)[j], 86400000));
    } else if (f[1] == 't') { /* time32 s/ms, time64 us/ns */
      int64_t tv = (f[2] == 's' || f[2] == 'm') ? ((const int32_t *)data)[j]
                                               : ((const int64_t *)data)[j];
      put_clock(o, to_micros(tv, f[2]));
    } else if (f[1] == 's') { /* tsX:zone */
      put_timestamp(o, to_micros(((const int64_t *)data)[j], f[2]), f[3] == ':' && f[4] != '\0');
    } else if (f[1] == 'D') {
      put_duration(o, 0, 0, to_micros(((const int64_t *)data)[j], f[2]));
    } else if (f[1] == 'i' && f[2] == 'M') {
      put_duration(o, ((const int32_t *)data)[j], 0, 0);
    } else if (f[1] == 'i' && f[2] == 'D') {
      const int32_t *p = (const int32_t *)data + 2 * j;
      put_duration(o, 0, p[0], (int64_t)p[1] * 1000);
    } else if (f[1] == 'i' && f[2] == 'n') {
      const unsigned char *p = (const unsigned char *)data + 16 * j;
      int32_t months, days;
      int64_t nanos;
      memcpy(&months, p, 4);
      memcpy(&days, p + 4, 4);
      memcpy(&nanos, p + 8, 8);
      put_duration(o, months, days, nanos / 1000);
    } else {
      printf_(o, "<format %s>", f);
    }
    break;
  case '+':
    if (f[1] == 's') {
      puts_(t, "{");
      for (int64_t c = 0; c < s->n_children; c++) {
        if (c) puts_(t, ", ");
        const char *name = s->children[c]->name ? s->children[c]->name : "";
        put_json_string(t, name, strlen(name));
        puts_(t, ": ");
        put_value(t, s->children[c], a->children[c], j, true);
      }
      puts_(t, "}");
    } else if (f[1] == 'l' || f[1] == 'm') {
      const int32_t *offs = data;
      if (f[1] == 'l') put_list(t, s, a, offs[j], offs[j + 1]);
      else put_map(t, s, a, offs[j], offs[j + 1]);
    } else if (f[1] == 'L') {
      const int64_t *offs = data;
      put_list(t, s, a, offs[j], offs[j + 1]);
    } else if (f[1] == 'w') {
      int64_t n = atoll(f + 3);
      put_list(t, s, a, j * n, (j + 1) * n);
    } else {
      printf_(t, "<format %s>", f);
    }
    break;
  default:
    printf_(o, "<format %s>", f);
    break;
  }
  if (quote) {
    put_json_string(t, v.p ? v.p : "", v.len);
    if (v.oom) t->oom = true;
    free(v.p);
  }
}

/* ---- layouts ---- */

static bool numeric(const char *f) {
  return strchr("cCsSiIlLefgd", f[0]) != NULL && f[0] != '\0';
}

/* Display width: code points, not bytes (continuation bytes do not count). */
static size_t width_of(const char *s, size_t n) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) w++;
  return w;
}

static void pad(FILE *out, size_t n) {
  for (size_t i = 0; i < n; i++) fputc(' ', out);
}

typedef struct table {
  int ncols;
  text cells;     /* every cell's text, back to back */
  size_t *ends;   /* end offset of each cell, row-major, header row first */
  size_t ncells, cap;
  size_t *widths;
  bool *right;
} table;

static bool table_add(table *tb, const text *cell_text) {
  if (tb->ncells == tb->cap) {
    size_t cap = tb->cap ? tb->cap * 2 : 64;
    size_t *grown = realloc(tb->ends, cap * sizeof *grown);
    if (!grown) return false;
    tb->ends = grown;
    tb->cap = cap;
  }
  put(&tb->cells, cell_text->p ? cell_text->p : "", cell_text->len);
  tb->ends[tb->ncells++] = tb->cells.len;
  return !tb->cells.oom;
}

static void table_print(const table *tb, FILE *out) {
  size_t nrows = tb->ncols ? tb->ncells / (size_t)tb->ncols : 0;
  for (size_t r = 0; r < nrows; r++) {
    for (int c = 0; c < tb->ncols; c++) {
      size_t k = r * (size_t)tb->ncols + (size_t)c;
      size_t from = k ? tb->ends[k - 1] : 0, n = tb->ends[k] - from;
      size_t w = width_of(tb->cells.p + from, n);
      size_t fill = tb->widths[c] > w ? tb->widths[c] - w : 0;
      bool last = c == tb->ncols - 1;
      if (c) fputs(" | ", out);
      if (tb->right[c]) pad(out, fill);
      fwrite(tb->cells.p + from, 1, n, out);
      if (!tb->right[c] && !last) pad(out, fill);
    }
    fputc('\n', out);
    if (r == 0) { /* the rule under the header */
      for (int c = 0; c < tb->ncols; c++) {
        if (c) fputs("-+-", out);
        for (size_t k = 0; k < tb->widths[c]; k++) fputc('-', out);
      }
      fputc('\n', out);
    }
  }
  fprintf(out, "(%zu row%s)\n", nrows - 1, nrows == 2 ? "" : "s");
}

static void csv_field(FILE *out, const char *s, size_t n, bool is_null_text) {
  bool quote = is_null_text || n == 0;
  for (size_t i = 0; i < n && !quote; i++)
    quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
  if (!quote && n > 0) quote = s[0] == ' ' || s[n - 1] == ' ';
  if (!quote) {
    fwrite(s, 1, n, out);
    return;
  }
  fputc('"', out);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') fputc('"', out);
    fputc(s[i], out);
  }
  fputc('"', out);
}

/* Print every row of the stream; 0, or the stream's errno value with a
** message on stderr. */
int cli_print_stream(struct ArrowArrayStream *st, cli_format format, FILE *out) {
  struct ArrowSchema schema;
  int err = st->get_schema(st, &schema);
  if (err) {
    const char *why = st->get_last_error(st);
    cli_error("cannot read the result's schema: %s", why ? why : strerror(err));
    return err;
  }
  int ncols = (int)schema.n_children;
  table tb = {0};
  tb.ncols = ncols;
  text cell = {0};
  bool oom = false;
  if (format == CLI_FORMAT_TABLE) {
    tb.widths = calloc((size_t)(ncols ? ncols : 1), sizeof *tb.widths);
    tb.right = calloc((size_t)(ncols ? ncols : 1), sizeof *tb.right);
    oom = !tb.widths || !tb.right;
  }
  for (int c = 0; c < ncols && !oom; c++) {
    const char *name = schema.children[c]->name ? schema.children[c]->name : "";
    if (format == CLI_FORMAT_TABLE) {
      cell.len = 0;
      puts_(&cell, name);
      tb.widths[c] = width_of(name, strlen(name));
      tb.right[c] = numeric(schema.children[c]->format);
      oom = !table_add(&tb, &cell);
    } else if (format == CLI_FORMAT_CSV) {
      if (c) fputc(',', out);
      csv_field(out, name, strlen(name), false);
      if (c == ncols - 1) fputc('\n', out);
    }
  }
  for (;;) {
    if (oom) break;
    struct ArrowArray array;
    err = st->get_next(st, &array);
    if (err) {
      const char *why = st->get_last_error(st);
      cli_error("cannot read the result: %s", why ? why : strerror(err));
      break;
    }
    if (!array.release) break; /* the end */
    for (int64_t r = 0; r < array.length && !oom; r++) {
      if (format == CLI_FORMAT_JSON) fputc('{', out);
      for (int c = 0; c < ncols; c++) {
        const struct ArrowSchema *cs = schema.children[c];
        const struct ArrowArray *ca = array.children[c];
        int64_t row = array.offset + r;
        cell.len = 0;
        put_value(&cell, cs, ca, row, format == CLI_FORMAT_JSON);
        if (cell.oom) {
          oom = true;
          break;
        }
        const char *txt = cell.p ? cell.p : "";
        if (format == CLI_FORMAT_TABLE) {
          size_t w = width_of(txt, cell.len);
          if (w > tb.widths[c]) tb.widths[c] = w;
          oom = !table_add(&tb, &cell);
        } else if (format == CLI_FORMAT_CSV) {
          if (c) fputc(',', out);
          bool null_value = is_null(cs, ca, ca->offset + row);
          if (null_value) fputs("NULL", out);
          else csv_field(out, txt, cell.len, cell.len == 4 && memcmp(txt, "NULL", 4) == 0);
        } else {
          if (c) fputs(", ", out);
          const char *name = cs->name ? cs->name : "";
          text key = {0};
          put_json_string(&key, name, strlen(name));
          fputs(key.p ? key.p : "\"\"", out);
          free(key.p);
          fputs(": ", out);
          fwrite(txt, 1, cell.len, out);
        }
      }
      if (format == CLI_FORMAT_JSON) fputs("}\n", out);
      else if (format == CLI_FORMAT_CSV) fputc('\n', out);
    }
    array.release(&array);
  }
  if (oom) {
    cli_error("out of memory printing the result");
    err = ENOMEM;
  }
  if (!err && format == CLI_FORMAT_TABLE) table_print(&tb, out);
  free(cell.p);
  free(tb.cells.p);
  free(tb.ends);
  free(tb.widths);
  free(tb.right);
  schema.release(&schema);
  return err;
}
