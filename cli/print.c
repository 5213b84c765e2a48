/*
** print.c — rows of a result (an Arrow C stream of struct arrays, from
** dipper_execute) printed as an aligned table, CSV or JSON lines.
**
** Owns: the three layouts.  The text of each value is the library's
** (dipper_format_values): the one formatter that the console sink and the
** progress line's watermark share, so a TIMESTAMP(3) reads
** 2024-01-31 12:30:00.500 in a table, in CSV, in JSON and on the console
** alike (the forms are listed in dipper.h).  NULL prints as NULL in a table
** and CSV (where a string "NULL" is quoted) and as null in JSON.
**
** Layouts: `table` buffers the whole result to size its columns (numbers
** right-aligned, headers too; the rest left-aligned, widths in code points) and ends with
** "(N rows)"; `csv` writes a header and RFC 4180 rows as they come; `json`
** one object per row, keys = column names, as they come.
*/
#include <errno.h>
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

/* ---- JSON strings ---- */

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
    char **cells = NULL;
    int frc = dipper_format_values(&schema, &array, format == CLI_FORMAT_JSON ? DIPPER_FORMAT_JSON : 0,
                                   &cells);
    if (frc != DIPPER_OK) {
      cli_error("cannot print the result: %s", dipper_strerror(frc));
      array.release(&array);
      err = frc == DIPPER_NOMEM ? ENOMEM : EINVAL;
      break;
    }
    for (int64_t r = 0; r < array.length && !oom; r++) {
      if (format == CLI_FORMAT_JSON) fputc('{', out);
      for (int c = 0; c < ncols; c++) {
        const struct ArrowSchema *cs = schema.children[c];
        const struct ArrowArray *ca = array.children[c];
        int64_t row = array.offset + r;
        const char *txt = cells[r * ncols + c];
        size_t len = strlen(txt);
        if (format == CLI_FORMAT_TABLE) {
          cell.len = 0;
          put(&cell, txt, len);
          size_t w = width_of(txt, len);
          if (w > tb.widths[c]) tb.widths[c] = w;
          oom = cell.oom || !table_add(&tb, &cell);
        } else if (format == CLI_FORMAT_CSV) {
          if (c) fputc(',', out);
          bool null_value = is_null(cs, ca, ca->offset + row);
          if (null_value) fputs("NULL", out);
          else csv_field(out, txt, len, len == 4 && memcmp(txt, "NULL", 4) == 0);
        } else {
          if (c) fputs(", ", out);
          const char *name = cs->name ? cs->name : "";
          text key = {0};
          put_json_string(&key, name, strlen(name));
          fputs(key.p ? key.p : "\"\"", out);
          free(key.p);
          fputs(": ", out);
          fwrite(txt, 1, len, out);
        }
      }
      if (format == CLI_FORMAT_JSON) fputs("}\n", out);
      else if (format == CLI_FORMAT_CSV) fputc('\n', out);
    }
    dipper_free(cells);
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
