/*
** streamtest.c — the runner of the streaming test corpus (tests/stream/cases)
** and of the batch-mode corpus (tests/batch/cases): micro-batches of input
** rows, and the rows each micro-batch must write to its sink.
**
** Each .test file holds cases: SQL (DDL, SET, INSERTs), then rounds — the
** JSON lines pushed to memory tables before a micro-batch, or a micro-batch
** with no new input, or the final batch of a bounded run — each followed by
** what the sinks must have received in that micro-batch, progress figures,
** or the error the micro-batch must fail with.  The format is described in
** tests/stream/README.md.
**
** Owns: parsing the format, driving the queries one micro-batch at a time,
** formatting Arrow C Data arrays as text rows, and comparing; the files a
** case writes under its temporary directory, and the callback `streamtest`
** that every case registers for a callback sink.  It uses only
** the public API (include/dipper.h), so a case fails for the reasons a
** user's program would.  Every case runs in a fresh handle.
**
** The rows of one micro-batch are read without knowing the output mode: a
** memory sink appends in append and update mode and replaces in complete
** mode, and in either case the rows of the last micro-batch are the last
** `output_rows` (dipper_progress) rows of dipper_memory_fetch.
**
** Usage: streamtest [-v] [-k WORD] [--engine ADDR] FILE.test...
**   -v            print every micro-batch's rows and progress
**   -k WORD       run only the cases whose name contains WORD
**   --engine ADDR open every case's handle on this engine (sc://host:port:
**                 the batch corpus on Spark, ctest spark/batch_corpus).  A
**                 case the engine refuses at compile time (DIPPER_UNSUPPORTED
**                 before anything runs, the case expecting no error) is
**                 counted as refused and its reason listed, not failed; a
**                 wrong answer is a failure as anywhere.  A case that expects
**                 the embedded engine's UNSUPPORTED and runs on the engine is
**                 listed as not compared; an expected DATA error may come
**                 back as REMOTE (Spark found the bad value).
** Ends with the line "N passed, N failed" ("..., N refused on Spark" with
** --engine); exits 1 on any failure, on a file without cases and on a
** malformed case.
*/
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dipper.h"

/* ---- growable text ---- */

typedef struct text {
  char *ptr;
  size_t len, cap;
} text;

static void oom(void) {
  fputs("streamtest: out of memory\n", stderr);
  exit(2);
}

static void text_put(text *t, const char *p, size_t n) {
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + n + 1) cap *= 2;
    char *grown = realloc(t->ptr, cap);
    if (!grown) oom();
    t->ptr = grown;
    t->cap = cap;
  }
  if (n) memcpy(t->ptr + t->len, p, n);
  t->len += n;
  t->ptr[t->len] = '\0';
}

static void text_puts(text *t, const char *s) { text_put(t, s, strlen(s)); }

static void text_printf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_printf(text *t, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof buf) {
    text_put(t, buf, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) oom();
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  text_put(t, big, (size_t)n);
  free(big);
}

static const char *text_str(const text *t) { return t->ptr ? t->ptr : ""; }

static char *dup_str(const char *p, size_t n) {
  char *s = malloc(n + 1);
  if (!s) oom();
  memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

/* A list of owned strings. */
typedef struct strlist {
  char **items;
  int n, cap;
} strlist;

static void strlist_add(strlist *l, char *owned) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    char **grown = realloc(l->items, (size_t)cap * sizeof *grown);
    if (!grown) oom();
    l->items = grown;
    l->cap = cap;
  }
  l->items[l->n++] = owned;
}

static void strlist_free(strlist *l) {
  for (int i = 0; i < l->n; i++) free(l->items[i]);
  free(l->items);
  l->items = NULL;
  l->n = l->cap = 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- result codes by name ---- */

#define CODE_NAME_(name, num, str) #name,
static const char *const code_names[] = {DIPPER_CODES(CODE_NAME_)};
#undef CODE_NAME_

static const char *code_name(int code) {
  int n = (int)(sizeof code_names / sizeof code_names[0]);
  return code >= 0 && code < n ? code_names[code] : "?";
}

static int code_by_name(const char *name, size_t len) {
  int n = (int)(sizeof code_names / sizeof code_names[0]);
  for (int i = 0; i < n; i++)
    if (strlen(code_names[i]) == len && strncasecmp(code_names[i], name, len) == 0) return i;
  return -1;
}

/* ---- formatting Arrow C Data values as text ---- */

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Days since 1970-01-01 to a proleptic Gregorian date: count 400-year eras
** from 0000-03-01, so that the leap day ends each cycle. */
static void civil_from_days(int64_t days, int64_t *y, int *m, int *d) {
  int64_t z = days + 719468;
  int64_t era = floor_div(z, 146097);
  int64_t doe = z - era * 146097;                                      /* [0, 146096] */
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
  int64_t mp = (5 * doy + 2) / 153;                                    /* March = 0 */
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2 ? 1 : 0);
}

static void put_date(text *out, int64_t days) {
  int64_t y;
  int m, d;
  civil_from_days(days, &y, &m, &d);
  text_printf(out, "%04lld-%02d-%02d", (long long)y, m, d);
}

/* hh:mm:ss, then .fff when the fraction is whole milliseconds, else .ffffff. */
static void put_time_of_day(text *out, int64_t us) {
  int64_t secs = us / 1000000, frac = us % 1000000;
  text_printf(out, "%02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
  if (frac == 0) return;
  if (frac % 1000 == 0)
    text_printf(out, ".%03d", (int)(frac / 1000));
  else
    text_printf(out, ".%06d", (int)frac);
}

static void put_timestamp(text *out, int64_t us) {
  if (us == INT64_MIN) {
    text_puts(out, "none");
    return;
  }
  if (us == INT64_MAX) {
    text_puts(out, "+inf");
    return;
  }
  int64_t days = floor_div(us, INT64_C(86400000000));
  put_date(out, days);
  text_puts(out, " ");
  put_time_of_day(out, us - days * INT64_C(86400000000));
}

/* The shortest text that reads back as the same value; integral values keep
** a ".0" so that a double never reads as an integer. */
static void put_float(text *out, double x, bool single) {
  char buf[40];
  if (isnan(x)) {
    text_puts(out, "NaN");
    return;
  }
  if (isinf(x)) {
    text_puts(out, x > 0 ? "Infinity" : "-Infinity");
    return;
  }
  int max = single ? 9 : 17, prec = 1;
  for (; prec <= max; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (single ? strtof(buf, NULL) == (float)x : strtod(buf, NULL) == x) break;
  }
  /* %g writes 10 as 1e+01: below 1e17, give it every integer digit */
  if (strchr(buf, 'e') && fabs(x) >= 1 && fabs(x) < 1e17) {
    int int_digits = (int)floor(log10(fabs(x))) + 1;
    snprintf(buf, sizeof buf, "%.*g", int_digits > prec ? int_digits : prec, x);
  }
  text_puts(out, buf);
  if (!strpbrk(buf, ".e")) text_puts(out, ".0");
}

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

static void put_decimal(text *out, i128 v, int scale) {
  char digits[64];
  int n = 0;
  bool neg = v < 0;
  u128 mag = neg ? (u128)0 - (u128)v : (u128)v;
  do {
    digits[n++] = (char)('0' + (int)(mag % 10));
    mag /= 10;
  } while (mag);
  while (n <= scale) digits[n++] = '0';
  if (neg) text_puts(out, "-");
  for (int i = n - 1; i >= 0; i--) {
    if (i == scale - 1) text_puts(out, ".");
    text_put(out, &digits[i], 1);
  }
}

/* A string at the top level of a row stands bare unless it could be read as
** something else: empty, NULL, a separator inside, spaces at its ends, or a
** leading quote.  Nested strings are always quoted. */
static bool needs_quotes(const char *s, size_t n) {
  if (n == 0) return true;
  if (n == 4 && strncasecmp(s, "NULL", 4) == 0) return true;
  if (s[0] == ' ' || s[n - 1] == ' ' || s[0] == '\'' || s[0] == '\t') return true;
  for (size_t i = 0; i < n; i++)
    if (s[i] == '|' || s[i] == '\n' || s[i] == '\r') return true;
  return false;
}

static void put_string(text *out, const char *s, size_t n, bool quote) {
  if (!quote) {
    text_put(out, s, n);
    return;
  }
  text_puts(out, "'");
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\'')
      text_puts(out, "''");
    else if (s[i] == '\n')
      text_puts(out, "\\n");
    else
      text_put(out, &s[i], 1);
  }
  text_puts(out, "'");
}

static bool is_null(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i) {
  if (strcmp(s->format, "n") == 0) return true;
  if (a->null_count == 0 || a->n_buffers < 1 || !a->buffers[0]) return false;
  const uint8_t *valid = a->buffers[0];
  int64_t j = a->offset + i;
  return !(valid[j >> 3] & (1u << (j & 7)));
}

static const void *buf_at(const struct ArrowArray *a, int k) {
  return a->n_buffers > k ? a->buffers[k] : NULL;
}

static int put_value(text *out, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                     bool nested);

/* Elements [from, to) of a list's child, as [a, b] — or, for a map's
** entries, as {k: v}. */
static int put_elements(text *out, const struct ArrowSchema *s, const struct ArrowArray *a,
                        int64_t from, int64_t to, bool map) {
  const struct ArrowSchema *cs = s->children[0];
  const struct ArrowArray *ca = a->children[0];
  text_puts(out, map ? "{" : "[");
  for (int64_t j = from; j < to; j++) {
    if (j > from) text_puts(out, ", ");
    if (map) {
      int64_t e = ca->offset + j;
      if (put_value(out, cs->children[0], ca->children[0], e, true)) return -1;
      text_puts(out, ": ");
      if (put_value(out, cs->children[1], ca->children[1], e, true)) return -1;
    } else if (put_value(out, cs, ca, j, true)) {
      return -1;
    }
  }
  text_puts(out, map ? "}" : "]");
  return 0;
}

/* Element i of a (its own offset not yet added).  -1 for a format the
** runner does not know. */
static int put_value(text *out, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                     bool nested) {
  if (is_null(s, a, i)) {
    text_puts(out, "NULL");
    return 0;
  }
  const char *f = s->format;
  int64_t j = a->offset + i;
  const void *data = buf_at(a, 1);
  if (strcmp(f, "b") == 0) {
    const uint8_t *bits = data;
    text_puts(out, bits[j >> 3] & (1u << (j & 7)) ? "true" : "false");
  } else if (strcmp(f, "c") == 0) {
    text_printf(out, "%d", ((const int8_t *)data)[j]);
  } else if (strcmp(f, "s") == 0) {
    text_printf(out, "%d", ((const int16_t *)data)[j]);
  } else if (strcmp(f, "i") == 0) {
    text_printf(out, "%d", ((const int32_t *)data)[j]);
  } else if (strcmp(f, "l") == 0) {
    text_printf(out, "%lld", (long long)((const int64_t *)data)[j]);
  } else if (strcmp(f, "f") == 0) {
    put_float(out, ((const float *)data)[j], true);
  } else if (strcmp(f, "g") == 0) {
    put_float(out, ((const double *)data)[j], false);
  } else if (f[0] == 'd' && f[1] == ':') {
    const char *comma = strchr(f, ',');
    int scale = comma ? atoi(comma + 1) : 0;
    i128 v;
    memcpy(&v, (const unsigned char *)data + 16 * j, sizeof v);
    put_decimal(out, v, scale);
  } else if (strcmp(f, "u") == 0 || strcmp(f, "z") == 0) {
    const int32_t *offs = data;
    const char *bytes = buf_at(a, 2);
    size_t n = (size_t)(offs[j + 1] - offs[j]);
    const char *p = bytes ? bytes + offs[j] : "";
    if (f[0] == 'u') {
      put_string(out, p, n, nested || needs_quotes(p, n));
    } else {
      text_puts(out, "x'");
      for (size_t k = 0; k < n; k++) text_printf(out, "%02X", (unsigned char)p[k]);
      text_puts(out, "'");
    }
  } else if (strcmp(f, "tdD") == 0) {
    put_date(out, ((const int32_t *)data)[j]);
  } else if (strcmp(f, "ttu") == 0) {
    put_time_of_day(out, ((const int64_t *)data)[j]);
  } else if (strncmp(f, "tsu:", 4) == 0) {
    put_timestamp(out, ((const int64_t *)data)[j]);
  } else if (strcmp(f, "tDu") == 0) {
    /* INTERVAL DAY TO SECOND as Flink prints it: +D hh:mm:ss[.fff] */
    int64_t us = ((const int64_t *)data)[j];
    text_puts(out, us < 0 ? "-" : "+");
    uint64_t mag = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;
    text_printf(out, "%llu ", (unsigned long long)(mag / UINT64_C(86400000000)));
    put_time_of_day(out, (int64_t)(mag % UINT64_C(86400000000)));
  } else if (strcmp(f, "tiM") == 0) {
    int32_t months = ((const int32_t *)data)[j];
    long mag = labs((long)months);
    text_printf(out, "%s%ld-%02ld", months < 0 ? "-" : "+", mag / 12, mag % 12);
  } else if (strcmp(f, "+s") == 0) {
    text_puts(out, "{");
    for (int64_t c = 0; c < s->n_children; c++) {
      if (c) text_puts(out, ", ");
      text_printf(out, "%s: ", s->children[c]->name ? s->children[c]->name : "");
      if (put_value(out, s->children[c], a->children[c], j, true)) return -1;
    }
    text_puts(out, "}");
  } else if (strcmp(f, "+l") == 0 || strcmp(f, "+m") == 0) {
    const int32_t *offs = data;
    return put_elements(out, s, a, offs[j], offs[j + 1], f[1] == 'm');
  } else {
    text_printf(out, "<format %s>", f);
    return -1;
  }
  return 0;
}

/* Rows [from, to) of a struct array as "a | b | c" lines. */
static void format_rows(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t from,
                        int64_t to, strlist *rows) {
  for (int64_t r = from; r < to; r++) {
    text line = {0};
    for (int64_t c = 0; c < s->n_children; c++) {
      if (c) text_puts(&line, " | ");
      put_value(&line, s->children[c], a->children[c], a->offset + r, false);
    }
    text_put(&line, "", 0);
    strlist_add(rows, line.ptr);
  }
}

/* ---- comparing rows ---- */

/* A row line with the blanks around each `|` (outside quotes) made one
** space, so that an expected row may be aligned in columns. */
static char *normalize_row(const char *s) {
  text out = {0};
  while (*s == ' ' || *s == '\t') s++;
  const char *cell = s;
  bool quoted = false;
  for (const char *p = s;; p++) {
    if (*p == '\'') quoted = !quoted; /* '' inside a string toggles twice */
    if ((*p == '|' && !quoted) || *p == '\0') {
      const char *e = p;
      while (e > cell && (e[-1] == ' ' || e[-1] == '\t')) e--;
      text_put(&out, cell, (size_t)(e - cell));
      if (*p == '\0') break;
      text_puts(&out, " | ");
      cell = p + 1;
      while (*cell == ' ' || *cell == '\t') cell++;
      p = cell - 1;
    }
  }
  text_put(&out, "", 0);
  return out.ptr;
}

/* ---- the .test format ---- */

typedef enum sec_kind {
  SEC_BATCH,    /* --- batch [TABLE]: JSON lines pushed before the next micro-batch */
  SEC_STEP,     /* --- step: a micro-batch with no new input */
  SEC_END,      /* --- end: the final micro-batch of a bounded run */
  SEC_EXPECT,   /* --- expect [TABLE] [ordered]: rows of the last micro-batch */
  SEC_PROGRESS, /* --- progress [TABLE] key=value ...: dipper_progress after it */
  SEC_ERROR,    /* --- error CODE [words]: the micro-batch (or compile/start) fails */
  SEC_FILE,     /* --- file NAME: a file written under ${TMP} before compiling */
  SEC_CLOCK,    /* --- clock SECONDS: the processing time of the micro-batches after it */
} sec_kind;

typedef struct section {
  sec_kind kind;
  int line;       /* file line of the `---` header */
  char *table;    /* BATCH/EXPECT/PROGRESS: the table named, or NULL; FILE: its name */
  bool ordered;   /* EXPECT */
  bool none;      /* EXPECT: `(none)` */
  char *args;     /* PROGRESS: key=value list; ERROR: the words after the code */
  int code;       /* ERROR */
  int64_t clock;  /* CLOCK: µs */
  strlist body;   /* BATCH/EXPECT/FILE lines */
} section;

typedef struct test_case {
  char *name;
  int line;     /* file line of the `===` header */
  int sql_line; /* file line of SQL line 1 */
  text sql;
  section *secs;
  int nsecs, cap;
} test_case;

typedef struct test_file {
  const char *path;
  int ncases, cap;
  test_case *cases;
} test_file;

static void case_free(test_case *tc) {
  free(tc->name);
  free(tc->sql.ptr);
  for (int i = 0; i < tc->nsecs; i++) {
    free(tc->secs[i].table);
    free(tc->secs[i].args);
    strlist_free(&tc->secs[i].body);
  }
  free(tc->secs);
}

static void file_free(test_file *f) {
  for (int i = 0; i < f->ncases; i++) case_free(&f->cases[i]);
  free(f->cases);
}

static char *read_whole(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  text t = {0};
  char chunk[8192];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) text_put(&t, chunk, n);
  int bad = ferror(fp);
  fclose(fp);
  if (bad) {
    free(t.ptr);
    return NULL;
  }
  if (!t.ptr) text_put(&t, "", 0);
  *len = t.len;
  return t.ptr;
}

static const char *skip_space(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

static bool is_blank(const char *s) { return *skip_space(s) == '\0'; }

static bool starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int malformed(const test_file *f, int line, const char *what) {
  fprintf(stderr, "%s:%d: malformed: %s\n", f->path, line, what);
  return -1;
}

/* The next blank-separated word of *s (advanced past it), or NULL. */
static char *next_word(const char **s) {
  const char *p = skip_space(*s);
  if (!*p) return NULL;
  const char *e = p;
  while (*e && *e != ' ' && *e != '\t') e++;
  *s = e;
  return dup_str(p, (size_t)(e - p));
}

static int parse_header(test_file *f, test_case *tc, const char *s, int line) {
  if (tc->nsecs == tc->cap) {
    int cap = tc->cap ? tc->cap * 2 : 8;
    section *grown = realloc(tc->secs, (size_t)cap * sizeof *grown);
    if (!grown) oom();
    tc->secs = grown;
    tc->cap = cap;
  }
  section *sec = &tc->secs[tc->nsecs];
  memset(sec, 0, sizeof *sec);
  sec->line = line;
  const char *rest = skip_space(s + 3);
  char *word = next_word(&rest);
  if (!word) return malformed(f, line, "a `---` line needs a word: batch, step, end, expect, "
                                       "progress, error or file");
  int rc = 0;
  if (strcmp(word, "batch") == 0) {
    sec->kind = SEC_BATCH;
    sec->table = next_word(&rest);
  } else if (strcmp(word, "step") == 0) {
    sec->kind = SEC_STEP;
  } else if (strcmp(word, "end") == 0) {
    sec->kind = SEC_END;
  } else if (strcmp(word, "expect") == 0) {
    sec->kind = SEC_EXPECT;
    for (char *w; (w = next_word(&rest));) {
      if (strcmp(w, "ordered") == 0) {
        sec->ordered = true;
        free(w);
      } else if (!sec->table) {
        sec->table = w;
      } else {
        free(w);
        rc = malformed(f, line, "`--- expect` takes a table name and `ordered`, nothing more");
      }
    }
  } else if (strcmp(word, "progress") == 0) {
    sec->kind = SEC_PROGRESS;
    const char *p = skip_space(rest);
    const char *eq = strchr(p, '=');
    const char *sp = strpbrk(p, " \t");
    if (*p && (!eq || (sp && sp < eq))) /* the first word is a table name */
      sec->table = next_word(&rest);
    sec->args = dup_str(skip_space(rest), strlen(skip_space(rest)));
    if (!*sec->args) rc = malformed(f, line, "`--- progress` needs key=value checks");
  } else if (strcmp(word, "error") == 0) {
    sec->kind = SEC_ERROR;
    char *code = next_word(&rest);
    sec->code = code ? code_by_name(code, strlen(code)) : -1;
    if (sec->code < 0)
      rc = malformed(f, line, "`--- error` needs a code name such as DATA, TYPE or UNSUPPORTED");
    free(code);
    sec->args = dup_str(skip_space(rest), strlen(skip_space(rest)));
  } else if (strcmp(word, "clock") == 0) {
    sec->kind = SEC_CLOCK;
    char *v = next_word(&rest);
    char *end = NULL;
    long long secs = v ? strtoll(v, &end, 10) : -1;
    if (!v || !end || *end || secs < 0)
      rc = malformed(f, line, "`--- clock` needs a whole number of seconds >= 0");
    sec->clock = (int64_t)secs * 1000000;
    free(v);
  } else if (strcmp(word, "file") == 0) {
    sec->kind = SEC_FILE;
    sec->table = next_word(&rest);
    if (!sec->table || strchr(sec->table, '/'))
      rc = malformed(f, line, "`--- file` needs a plain file name (no '/')");
  } else {
    rc = malformed(f, line, "unknown `---` header; use batch, step, end, expect, progress, "
                            "error or file");
  }
  free(word);
  tc->nsecs++;
  return rc;
}

static int finish_case(test_file *f, test_case *tc) {
  if (!tc->name) return 0;
  if (tc->sql.len == 0 || is_blank(text_str(&tc->sql)))
    return malformed(f, tc->line, "case without SQL");
  bool checks = false;
  for (int i = 0; i < tc->nsecs; i++) {
    section *sec = &tc->secs[i];
    if (sec->kind == SEC_EXPECT || sec->kind == SEC_PROGRESS || sec->kind == SEC_ERROR)
      checks = true;
    if (sec->kind == SEC_EXPECT) {
      int n = sec->body.n;
      if (n == 0) return malformed(f, sec->line, "`--- expect` without rows; write (none)");
      if (n == 1 && strcmp(sec->body.items[0], "(none)") == 0) sec->none = true;
      for (int r = 0; r < n && !sec->none; r++)
        if (strcmp(sec->body.items[r], "(none)") == 0)
          return malformed(f, sec->line, "(none) must stand alone under `--- expect`");
    }
    if (sec->kind == SEC_FILE) /* blank lines before the next header are not the file's */
      while (sec->body.n > 0 && is_blank(sec->body.items[sec->body.n - 1]))
        free(sec->body.items[--sec->body.n]);
    if (sec->kind == SEC_BATCH && sec->body.n == 0)
      return malformed(f, sec->line, "`--- batch` without rows; use `--- step` for a micro-batch "
                                     "with no new input");
    if ((sec->kind == SEC_STEP || sec->kind == SEC_END || sec->kind == SEC_PROGRESS ||
         sec->kind == SEC_ERROR || sec->kind == SEC_CLOCK) && sec->body.n > 0)
      return malformed(f, sec->line, "this header takes no lines under it");
  }
  if (!checks) return malformed(f, tc->line, "case without any expect, progress or error");
  f->ncases++;
  return 0;
}

static int parse_file(test_file *f, char *data) {
  test_case *tc = NULL;
  section *sec = NULL;
  int line = 0, rc = 0;
  for (char *s = data; *s && rc == 0;) {
    char *e = strchr(s, '\n');
    if (e) *e = '\0';
    size_t n = strlen(s);
    if (n && s[n - 1] == '\r') s[--n] = '\0';
    line++;
    if (starts_with(s, "===")) {
      if (tc) rc = finish_case(f, tc);
      if (rc) break;
      if (f->ncases == f->cap) {
        int cap = f->cap ? f->cap * 2 : 16;
        test_case *grown = realloc(f->cases, (size_t)cap * sizeof *grown);
        if (!grown) oom();
        f->cases = grown;
        f->cap = cap;
      }
      tc = &f->cases[f->ncases];
      memset(tc, 0, sizeof *tc);
      const char *name = skip_space(s + 3);
      tc->name = dup_str(name, strlen(name));
      tc->line = line;
      tc->sql_line = line + 1;
      sec = NULL;
      if (!*name) rc = malformed(f, line, "a case needs a name after `===`");
    } else if (starts_with(s, "---")) {
      if (!tc) {
        rc = malformed(f, line, "`---` before the first `===` case");
      } else {
        rc = parse_header(f, tc, s, line);
        sec = &tc->secs[tc->nsecs - 1];
      }
    } else if (!tc) {
      if (!is_blank(s) && s[0] != '#')
        rc = malformed(f, line, "text before the first `===` case (comments start with '#')");
    } else if (!sec) {
      /* SQL: a '#' line counts as an empty line so that line numbers hold */
      text_puts(&tc->sql, s[0] == '#' ? "" : s);
      text_puts(&tc->sql, "\n");
    } else if (sec->kind == SEC_FILE) {
      strlist_add(&sec->body, dup_str(s, n)); /* verbatim, blank lines too */
    } else if (!is_blank(s) && s[0] != '#') {
      const char *t = skip_space(s);
      size_t tl = strlen(t);
      while (tl && (t[tl - 1] == ' ' || t[tl - 1] == '\t')) tl--;
      strlist_add(&sec->body, dup_str(t, tl));
    }
    s = e ? e + 1 : s + n;
  }
  if (rc == 0 && tc) rc = finish_case(f, tc);
  if (rc == 0 && f->ncases == 0) rc = malformed(f, line, "no `===` cases in the file");
  return rc;
}

/* ---- running a case ---- */

typedef struct run_opts {
  bool verbose;
  const char *only;
  const char *engine; /* --engine: the address every case's handle is opened with */
  strlist refusals;   /* on Spark: "case: reason" of each case refused at compile time */
  strlist uncompared; /* on Spark: cases that expect an embedded-only refusal */
} run_opts;

enum { CASE_PASSED, CASE_FAILED, CASE_REFUSED };

typedef struct case_run {
  const test_file *f;
  const test_case *tc;
  const run_opts *o;
  dipper *db;
  dipper_program *prog;
  dipper_query **qs;
  int nq;
  dipper_progress *before; /* per query, before the last micro-batch */
  int rounds;              /* micro-batch rounds run */
  int last_line;           /* file line of the header that started the last round */
  int last_rc;             /* code of the last round (or of compile/start) */
  char *last_err;          /* its message, or NULL */
  bool error_checked;
  bool failed;
  bool not_compared;  /* --engine: the case expects the embedded engine's refusal, and
                         this engine runs it: there is no answer to compare */
  char tmpdir[64];
  strlist cb_rows;      /* rows the `streamtest` callback got in the last round */
  int64_t cb_batch_id;  /* the batch id of its last call, -1: none */
  int cb_calls;         /* its calls in the last round */
  int64_t clock;        /* a case with `--- clock`: its processing time (µs) */
} case_run;

/* The case's processing-time clock (dipper_set_clock), set by `--- clock`. */
static int64_t case_clock(void *user) { return ((const case_run *)user)->clock; }

static void fail_head(case_run *cr, int line) {
  fflush(stdout); /* -v output first, so that the report reads in order */
  if (!cr->failed)
    fprintf(stderr, "%s:%d: FAIL case `%s`\n", cr->f->path, cr->tc->line, cr->tc->name);
  cr->failed = true;
  fprintf(stderr, "  %s:%d: ", cr->f->path, line);
}

static void print_diags(const dipper *db) {
  int n = dipper_diag_count(db);
  if (n == 0) fprintf(stderr, "    %s\n", dipper_errmsg(db));
  for (int i = 0; i < n; i++) {
    char *r = dipper_diag_render(db, i);
    const dipper_diag *g = dipper_diag_get(db, i);
    fprintf(stderr, "    [%s] %s\n", g ? code_name(g->code) : "?",
            r ? r : (g && g->message ? g->message : ""));
    dipper_free(r);
  }
}

static char *diag_text(const dipper *db) {
  text t = {0};
  int n = dipper_diag_count(db);
  for (int i = 0; i < n; i++) {
    const dipper_diag *g = dipper_diag_get(db, i);
    if (g && g->message) {
      text_puts(&t, g->message);
      text_puts(&t, "\n");
    }
  }
  if (n == 0) text_puts(&t, dipper_errmsg(db));
  text_put(&t, "", 0);
  return t.ptr;
}

/* The query that writes `table` (NULL: the only query), or -1. */
static int query_of(case_run *cr, const char *table, int line) {
  if (!table) {
    if (cr->nq == 1) return 0;
    fail_head(cr, line);
    fprintf(stderr, "the program runs %d queries: name the sink table after the header\n", cr->nq);
    return -1;
  }
  for (int i = 0; i < cr->nq; i++) {
    dipper_progress p = {sizeof p};
    dipper_query_progress(cr->qs[i], &p);
    if (p.name && strcasecmp(p.name, table) == 0) return i;
  }
  fail_head(cr, line);
  fprintf(stderr, "no query of the program writes to `%s`\n", table);
  return -1;
}

static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (d) {
      for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        text child = {0};
        text_printf(&child, "%s/%s", path, e->d_name);
        remove_tree(text_str(&child));
        free(child.ptr);
      }
      closedir(d);
    }
    rmdir(path);
  } else {
    unlink(path);
  }
}

/* Write the case's `--- file` sections under a fresh temporary directory. */
static bool write_files(case_run *cr) {
  bool any = false;
  for (int i = 0; i < cr->tc->nsecs; i++) any |= cr->tc->secs[i].kind == SEC_FILE;
  bool uses_tmp = strstr(text_str(&cr->tc->sql), "${TMP}") != NULL;
  if (!any && !uses_tmp) return true;
  snprintf(cr->tmpdir, sizeof cr->tmpdir, "/tmp/streamtest.XXXXXX");
  if (!mkdtemp(cr->tmpdir)) {
    fail_head(cr, cr->tc->line);
    fprintf(stderr, "cannot make a temporary directory: %s\n", strerror(errno));
    cr->tmpdir[0] = '\0';
    return false;
  }
  for (int i = 0; i < cr->tc->nsecs; i++) {
    const section *sec = &cr->tc->secs[i];
    if (sec->kind != SEC_FILE) continue;
    text path = {0};
    text_printf(&path, "%s/%s", cr->tmpdir, sec->table);
    FILE *fp = fopen(text_str(&path), "wb");
    bool ok = fp != NULL;
    for (int l = 0; ok && l < sec->body.n; l++)
      ok = fprintf(fp, "%s\n", sec->body.items[l]) >= 0;
    if (fp && fclose(fp) != 0) ok = false;
    free(path.ptr);
    if (!ok) {
      fail_head(cr, sec->line);
      fprintf(stderr, "cannot write file %s: %s\n", sec->table, strerror(errno));
      return false;
    }
  }
  return true;
}

/* The case's SQL with ${TMP} replaced by the temporary directory. */
static char *case_sql(const case_run *cr) {
  text out = {0};
  const char *s = text_str(&cr->tc->sql);
  for (const char *p; (p = strstr(s, "${TMP}"));) {
    text_put(&out, s, (size_t)(p - s));
    text_puts(&out, cr->tmpdir);
    s = p + 6;
  }
  text_puts(&out, s);
  return out.ptr;
}

/* The callback every case registers as 'streamtest': a sink declared WITH
** ('connector' = 'callback', 'name' = 'streamtest') lands here, and
** `--- expect callback` reads what it got in the last micro-batch. */
static int on_batch(void *user, int64_t batch_id, struct ArrowSchema *schema,
                    struct ArrowArray *array) {
  case_run *cr = user;
  cr->cb_calls++;
  cr->cb_batch_id = batch_id;
  format_rows(schema, array, 0, array->length, &cr->cb_rows);
  if (array->release) array->release(array);
  if (schema->release) schema->release(schema);
  return 0;
}

/* Push the round's batches and run one micro-batch of every query. */
static void run_round(case_run *cr, const section *const *pushes, int npush, bool end, int line) {
  cr->rounds++;
  cr->last_line = line;
  cr->last_rc = DIPPER_OK;
  free(cr->last_err);
  cr->last_err = NULL;
  cr->error_checked = false;
  strlist_free(&cr->cb_rows);
  cr->cb_calls = 0;
  for (int i = 0; i < npush; i++) {
    const section *sec = pushes[i];
    const char *table = sec->table ? sec->table : "src";
    text rows = {0};
    for (int r = 0; r < sec->body.n; r++) {
      text_puts(&rows, sec->body.items[r]);
      text_puts(&rows, "\n");
    }
    int rc = dipper_memory_push_json(cr->db, table, text_str(&rows), rows.len);
    free(rows.ptr);
    if (rc != DIPPER_OK) {
      fail_head(cr, sec->line);
      fprintf(stderr, "pushing to `%s` failed: %s\n", table, dipper_errmsg(cr->db));
      return;
    }
  }
  for (int i = 0; i < cr->nq; i++) {
    cr->before[i].size = sizeof cr->before[i];
    dipper_query_progress(cr->qs[i], &cr->before[i]);
    int finished = 0;
    int rc = dipper_query_step(cr->qs[i], &finished);
    if (rc != DIPPER_OK && cr->last_rc == DIPPER_OK) {
      cr->last_rc = rc;
      cr->last_err = diag_text(cr->db);
    }
    if (rc == DIPPER_OK && end && !finished) {
      dipper_progress p = {sizeof p};
      dipper_query_progress(cr->qs[i], &p);
      fail_head(cr, line);
      fprintf(stderr, "query `%s` did not end at `--- end`: declare its memory sources "
                      "WITH ('bounded' = 'true')\n", p.name);
    }
  }
  if (cr->o->verbose) {
    for (int i = 0; i < cr->nq; i++) {
      dipper_progress p = {sizeof p};
      dipper_query_progress(cr->qs[i], &p);
      text wm = {0};
      put_timestamp(&wm, p.watermark);
      printf("  [%s:%d] `%s` batch=%lld output=%lld watermark=%s late=%lld state=%lld%s\n",
             cr->f->path, line, p.name, (long long)p.batch_id, (long long)p.output_rows,
             text_str(&wm), (long long)p.late_rows_dropped, (long long)p.state_rows,
             p.finished ? " finished" : "");
      free(wm.ptr);
    }
    if (cr->last_rc) printf("  error %s: %s", code_name(cr->last_rc), cr->last_err);
  }
}

/* A failed micro-batch that no `--- error` looked at fails the case. */
static void check_unreported_error(case_run *cr) {
  if (cr->last_rc == DIPPER_OK || cr->error_checked) return;
  fail_head(cr, cr->last_line);
  fprintf(stderr, "the micro-batch failed with %s:\n    %s", code_name(cr->last_rc),
          cr->last_err ? cr->last_err : "\n");
  cr->error_checked = true;
}

/* The rows query qi wrote to `table` in its last micro-batch. */
static bool batch_rows(case_run *cr, int qi, const char *table, int line, strlist *rows) {
  dipper_progress p = {sizeof p};
  dipper_query_progress(cr->qs[qi], &p);
  if (p.batch_id == cr->before[qi].batch_id || p.output_rows == 0) return true;
  struct ArrowSchema schema;
  struct ArrowArray array;
  int rc = dipper_memory_fetch(cr->db, table ? table : p.name, &schema, &array);
  if (rc != DIPPER_OK) {
    fail_head(cr, line);
    fprintf(stderr, "dipper_memory_fetch(`%s`) failed: %s\n", table ? table : p.name,
            dipper_errmsg(cr->db));
    return false;
  }
  bool ok = true;
  if (strcmp(schema.format, "+s") != 0 || array.length < p.output_rows) {
    fail_head(cr, line);
    fprintf(stderr, "memory table `%s` holds %lld rows (format %s), fewer than the %lld the last "
                    "micro-batch wrote\n",
            p.name, (long long)array.length, schema.format, (long long)p.output_rows);
    ok = false;
  } else {
    format_rows(&schema, &array, array.length - p.output_rows, array.length, rows);
  }
  if (array.release) array.release(&array);
  if (schema.release) schema.release(&schema);
  return ok;
}

static void print_rows(FILE *out, const char *title, const strlist *rows) {
  fprintf(out, "    %s:\n", title);
  if (rows->n == 0) fputs("      (none)\n", out);
  for (int i = 0; i < rows->n; i++) fprintf(out, "      %s\n", rows->items[i]);
}

static void check_expect(case_run *cr, const section *sec) {
  check_unreported_error(cr);
  if (cr->last_rc != DIPPER_OK) return;
  bool callback = sec->table && strcmp(sec->table, "callback") == 0;
  int qi = callback ? -1 : query_of(cr, sec->table, sec->line);
  if (qi < 0 && !callback) return;
  strlist actual = {0}, expected = {0};
  if (callback) {
    for (int i = 0; i < cr->cb_rows.n; i++)
      strlist_add(&actual, dup_str(cr->cb_rows.items[i], strlen(cr->cb_rows.items[i])));
  } else if (!batch_rows(cr, qi, sec->table, sec->line, &actual)) {
    strlist_free(&actual);
    return;
  }
  for (int i = 0; i < actual.n; i++) {
    char *norm = normalize_row(actual.items[i]);
    free(actual.items[i]);
    actual.items[i] = norm;
  }
  if (!sec->none)
    for (int i = 0; i < sec->body.n; i++) strlist_add(&expected, normalize_row(sec->body.items[i]));
  if (!sec->ordered) {
    if (actual.n) qsort(actual.items, (size_t)actual.n, sizeof *actual.items, cmp_str);
    if (expected.n) qsort(expected.items, (size_t)expected.n, sizeof *expected.items, cmp_str);
  }
  bool same = actual.n == expected.n;
  for (int i = 0; same && i < actual.n; i++) same = strcmp(actual.items[i], expected.items[i]) == 0;
  if (cr->o->verbose) print_rows(stdout, "rows", &actual);
  if (!same) {
    dipper_progress p = {sizeof p};
    if (callback) {
      p.name = "callback 'streamtest'";
      p.batch_id = cr->cb_batch_id;
    } else {
      dipper_query_progress(cr->qs[qi], &p);
    }
    fail_head(cr, sec->line);
    fprintf(stderr, "rows of `%s` in micro-batch %lld differ%s\n", p.name, (long long)p.batch_id,
            sec->ordered ? " (ordered)" : " (sorted for comparison)");
    print_rows(stderr, "expected", &expected);
    print_rows(stderr, "actual", &actual);
  }
  strlist_free(&actual);
  strlist_free(&expected);
}

static bool progress_value(const dipper_progress *p, const char *key, text *out) {
  long long v;
  if (strcmp(key, "batch") == 0)
    v = p->batch_id;
  else if (strcmp(key, "input") == 0)
    v = p->input_rows;
  else if (strcmp(key, "output") == 0)
    v = p->output_rows;
  else if (strcmp(key, "late") == 0)
    v = p->late_rows_dropped;
  else if (strcmp(key, "state") == 0)
    v = p->state_rows;
  else if (strcmp(key, "skipped") == 0)
    v = p->bad_records_skipped;
  else if (strcmp(key, "total_input") == 0)
    v = p->total_input_rows;
  else if (strcmp(key, "total_output") == 0)
    v = p->total_output_rows;
  else if (strcmp(key, "finished") == 0)
    v = p->finished;
  else if (strcmp(key, "watermark") == 0) {
    put_timestamp(out, p->watermark);
    return true;
  } else
    return false;
  text_printf(out, "%lld", v);
  return true;
}

/* key=value pairs; a value runs to the next word that holds '=' (so that a
** watermark may be written `2024-01-01 00:00:05`). */
static void check_progress(case_run *cr, const section *sec) {
  check_unreported_error(cr);
  if (cr->last_rc != DIPPER_OK) return;
  int qi = query_of(cr, sec->table, sec->line);
  if (qi < 0) return;
  dipper_progress p = {sizeof p};
  dipper_query_progress(cr->qs[qi], &p);
  const char *s = sec->args;
  while (*(s = skip_space(s))) {
    const char *eq = strchr(s, '=');
    const char *sp = strpbrk(s, " \t");
    if (!eq || (sp && sp < eq)) {
      fail_head(cr, sec->line);
      fprintf(stderr, "malformed progress check near `%s`\n", s);
      return;
    }
    char *key = dup_str(s, (size_t)(eq - s));
    const char *v = eq + 1, *end = v;
    for (;;) { /* extend the value over words without '=' */
      const char *w = end;
      while (*w && *w != ' ' && *w != '\t') w++;
      end = w;
      const char *nw = skip_space(w);
      const char *weq = strchr(nw, '=');
      const char *wsp = strpbrk(nw, " \t");
      if (!*nw || (weq && (!wsp || weq < wsp))) break;
      end = nw;
    }
    char *want = dup_str(v, (size_t)(end - v));
    text got = {0};
    /* Spark runs a batch statement as one plan and reports no count of the
    ** rows its sources read: those figures are not checked there. */
    bool unknown_here = cr->o->engine && (strcmp(key, "input") == 0 ||
                                          strcmp(key, "total_input") == 0);
    if (unknown_here) {
      if (cr->o->verbose) printf("  progress %s not checked on %s\n", key, cr->o->engine);
    } else if (!progress_value(&p, key, &got)) {
      fail_head(cr, sec->line);
      fprintf(stderr, "unknown progress key `%s`; use batch, input, output, late, state, skipped, "
                      "total_input, total_output, finished or watermark\n", key);
    } else if (strcmp(text_str(&got), want) != 0) {
      fail_head(cr, sec->line);
      fprintf(stderr, "progress of `%s`: %s=%s, expected %s\n", p.name, key, text_str(&got), want);
    } else if (cr->o->verbose) {
      printf("  progress %s=%s ok\n", key, want);
    }
    free(got.ptr);
    free(key);
    free(want);
    s = end;
  }
}

static bool message_has_words(const char *message, const char *words) {
  return strstr(message ? message : "", words) != NULL;
}

static void check_error(case_run *cr, const section *sec) {
  cr->error_checked = true;
  if (cr->o->engine && sec->code == DIPPER_UNSUPPORTED && cr->last_rc == DIPPER_OK) {
    /* The embedded engine's own limit; this engine runs the query. */
    if (!cr->not_compared)
      strlist_add(&((run_opts *)(uintptr_t)cr->o)->uncompared,
                  dup_str(cr->tc->name, strlen(cr->tc->name)));
    cr->not_compared = true;
    return;
  }
  if (cr->o->engine && sec->code == DIPPER_DATA && cr->last_rc == DIPPER_REMOTE) {
    /* A bad value found while the query runs is found by Spark there. */
    if (cr->o->verbose) printf("  error DATA reported by the engine as: %s", cr->last_err);
    return;
  }
  if (cr->last_rc == DIPPER_OK) {
    fail_head(cr, sec->line);
    fprintf(stderr, "expected error %s, but the %s succeeded\n", code_name(sec->code),
            cr->rounds ? "micro-batch" : "compile and start");
    return;
  }
  if (cr->last_rc != sec->code || !message_has_words(cr->last_err, sec->args)) {
    fail_head(cr, sec->line);
    fprintf(stderr, "expected error %s containing \"%s\"; got %s:\n    %s", code_name(sec->code),
            sec->args, code_name(cr->last_rc), cr->last_err ? cr->last_err : "\n");
  }
}

/* On another engine (--engine), a case whose compile or start is refused as
** DIPPER_UNSUPPORTED — what the engine cannot run, said before anything runs
** — is not a failure: it is counted and its reason listed.  Unless the
** case expects no UNSUPPORTED error of its own. */
static bool refused_here(case_run *cr, const section *first) {
  if (!cr->o->engine || cr->last_rc != DIPPER_UNSUPPORTED) return false;
  if (first && first->kind == SEC_ERROR && first->code == DIPPER_UNSUPPORTED)
    return false; /* the case expects this very refusal: checked as usual */
  const dipper_diag *g = dipper_diag_get(cr->db, 0);
  text t = {0};
  text_printf(&t, "%s: %s", cr->tc->name, g && g->message ? g->message : dipper_errmsg(cr->db));
  if (g && g->line > 0) text_printf(&t, " (line %d)", g->line);
  strlist_add(&((run_opts *)(uintptr_t)cr->o)->refusals, t.ptr);
  return true;
}

static int run_case(const test_file *f, const test_case *tc, const run_opts *o) {
  case_run cr;
  memset(&cr, 0, sizeof cr);
  cr.f = f;
  cr.tc = tc;
  cr.o = o;
  if (o->verbose) printf("=== %s (%s:%d)\n", tc->name, f->path, tc->line);
  cr.cb_batch_id = -1;
  bool refused = false;
  if (dipper_open(&cr.db, o->engine) != DIPPER_OK ||
      dipper_register_callback(cr.db, "streamtest", on_batch, &cr) != DIPPER_OK) {
    fail_head(&cr, tc->line);
    fputs("dipper_open or dipper_register_callback failed\n", stderr);
    dipper_close(cr.db);
    return false;
  }
  /* A case that sets the clock runs on it from the start, at its first value. */
  for (int i = 0; i < tc->nsecs; i++)
    if (tc->secs[i].kind == SEC_CLOCK) {
      cr.clock = tc->secs[i].clock;
      dipper_set_clock(cr.db, case_clock, &cr);
      break;
    }
  if (!write_files(&cr)) goto done;
  char *sql = case_sql(&cr);
  /* diagnostics count lines from the case's first SQL line */
  int rc = dipper_compile(cr.db, sql, strlen(sql), tc->name, &cr.prog);
  free(sql);
  if (rc == DIPPER_OK) rc = dipper_query_start(cr.prog, &cr.qs, &cr.nq);
  int first = 0;
  if (rc != DIPPER_OK) {
    /* compile or start failed: only a first `--- error` can pass */
    cr.last_rc = rc;
    cr.last_err = diag_text(cr.db);
    while (first < tc->nsecs && tc->secs[first].kind == SEC_FILE) first++;
    if (refused_here(&cr, first < tc->nsecs ? &tc->secs[first] : NULL)) {
      refused = true;
      if (o->verbose) printf("  refused: %s", cr.last_err);
    } else if (first < tc->nsecs && tc->secs[first].kind == SEC_ERROR) {
      check_error(&cr, &tc->secs[first]);
    } else {
      fail_head(&cr, tc->line);
      fprintf(stderr, "%s failed:\n", cr.prog ? "dipper_query_start" : "dipper_compile");
      print_diags(cr.db);
    }
    goto done;
  }
  cr.before = calloc((size_t)(cr.nq ? cr.nq : 1), sizeof *cr.before);
  const section **round = calloc((size_t)tc->nsecs + 1, sizeof *round);
  if (!cr.before || !round) oom();
  int npush = 0;
  bool pending_step = false, pending_end = false;
  int round_line = tc->line;
  for (int i = 0; i < tc->nsecs && !(cr.failed && cr.last_rc); i++) {
    const section *sec = &tc->secs[i];
    bool flush = false;
    if (sec->kind == SEC_BATCH) {
      /* a second push to the same table is the next micro-batch */
      flush = pending_step || pending_end;
      for (int k = 0; k < npush && !flush; k++) {
        const char *a = round[k]->table ? round[k]->table : "src";
        const char *b = sec->table ? sec->table : "src";
        flush = strcasecmp(a, b) == 0;
      }
    } else if (sec->kind == SEC_STEP || sec->kind == SEC_END) {
      flush = npush > 0 || pending_step || pending_end;
    } else if (sec->kind != SEC_FILE) {
      flush = npush > 0 || pending_step || pending_end;
    }
    if (flush) {
      check_unreported_error(&cr);
      run_round(&cr, round, npush, pending_end, round_line);
      npush = 0;
      pending_step = pending_end = false;
    }
    switch (sec->kind) {
    case SEC_BATCH:
      if (npush == 0) round_line = sec->line;
      round[npush++] = sec;
      break;
    case SEC_STEP:
      pending_step = true;
      round_line = sec->line;
      break;
    case SEC_END:
      pending_end = true;
      round_line = sec->line;
      break;
    case SEC_EXPECT:
      if (cr.rounds == 0) {
        fail_head(&cr, sec->line);
        fputs("`--- expect` before any micro-batch: put a `--- batch` or `--- step` first\n",
              stderr);
      } else {
        check_expect(&cr, sec);
      }
      break;
    case SEC_PROGRESS:
      check_progress(&cr, sec);
      break;
    case SEC_ERROR:
      check_error(&cr, sec);
      break;
    case SEC_FILE:
      break;
    case SEC_CLOCK:
      cr.clock = sec->clock;
      break;
    }
  }
  if (npush > 0 || pending_step || pending_end) {
    check_unreported_error(&cr);
    run_round(&cr, round, npush, pending_end, round_line);
  }
  check_unreported_error(&cr);
  free(round);
done:
  dipper_query_free_all(cr.qs, cr.nq);
  dipper_program_free(cr.prog);
  dipper_close(cr.db);
  if (cr.tmpdir[0]) remove_tree(cr.tmpdir);
  free(cr.before);
  free(cr.last_err);
  strlist_free(&cr.cb_rows);
  return cr.failed ? CASE_FAILED : refused || cr.not_compared ? CASE_REFUSED : CASE_PASSED;
}

int main(int argc, char **argv) {
  run_opts o;
  memset(&o, 0, sizeof o);
  int passed = 0, failed = 0, refused = 0, nfiles = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-v") == 0) {
      o.verbose = true;
      continue;
    }
    if (strcmp(argv[i], "-k") == 0 && i + 1 < argc) {
      o.only = argv[++i];
      continue;
    }
    if (strcmp(argv[i], "--engine") == 0 && i + 1 < argc) {
      o.engine = argv[++i];
      continue;
    }
    nfiles++;
    test_file f = {0};
    f.path = argv[i];
    size_t len = 0;
    char *data = read_whole(f.path, &len);
    if (!data) {
      fprintf(stderr, "%s: cannot read: %s\n", f.path, strerror(errno));
      failed++;
      continue;
    }
    if (strlen(data) != len) {
      fprintf(stderr, "%s: contains a NUL byte\n", f.path);
      failed++;
    } else if (parse_file(&f, data) != 0) {
      failed++;
    } else {
      for (int c = 0; c < f.ncases; c++) {
        if (o.only && !strstr(f.cases[c].name, o.only)) continue;
        int outcome = run_case(&f, &f.cases[c], &o);
        if (outcome == CASE_PASSED)
          passed++;
        else if (outcome == CASE_REFUSED)
          refused++;
        else
          failed++;
      }
    }
    file_free(&f);
    free(data);
  }
  if (nfiles == 0) {
    fputs("usage: streamtest [-v] [-k WORD] [--engine sc://HOST:PORT] FILE.test...\n", stderr);
    return 2;
  }
  if (o.engine) {
    if (o.refusals.n) printf("refused on %s at compile time:\n", o.engine);
    for (int i = 0; i < o.refusals.n; i++) printf("  %s\n", o.refusals.items[i]);
    if (o.uncompared.n) printf("run on %s but expecting the embedded engine's refusal (not compared):\n", o.engine);
    for (int i = 0; i < o.uncompared.n; i++) printf("  %s\n", o.uncompared.items[i]);
    printf("%d passed, %d failed, %d refused on Spark, %d not compared\n", passed, failed,
           refused - o.uncompared.n, o.uncompared.n);
  } else {
    printf("%d passed, %d failed\n", passed, failed);
  }
  strlist_free(&o.refusals);
  strlist_free(&o.uncompared);
  fflush(stdout);
  return failed ? 1 : 0;
}
