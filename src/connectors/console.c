/*
** console.c — the `console` sink (alias `print`), and the output of a bare
** SELECT: each micro-batch printed the way Spark's console sink prints it.
**
**   -------------------------------------------
**   Batch: 3
**   -------------------------------------------
**   +-----+---+
**   | name|  n|
**   +-----+---+
**   |alice|  2|
**   +-----+---+
**
** Choices: every row of the batch is printed (no 20-row cut: a bounded run's
** answer is small and must be seen whole, and a stream shows only what
** changed); values are not truncated; cells are right-aligned as Spark's
** show() does; NULL prints as NULL; timestamps with their own precision.
** What a batch holds follows the output mode — the executor hands append
** mode's new rows, update mode's changed rows and complete mode's whole
** result — so the sink prints what it is given.  A micro-batch that wrote no
** rows prints nothing (a stream of empty tables says nothing).
** 'print-identifier' is shown after the batch number; 'standard-error' =
** 'true' writes to stderr.  The sink's `user` field, when set before open,
** is the FILE* to write to (tests).
**
** Rows are formatted to text as they arrive (write may be called several
** times per batch) and printed at commit, when column widths are known.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectors/connector.h"
#include "core/buf.h"
#include "formats/formats.h"

typedef struct console_state {
  FILE *out;
  const char *ident;
  dp_buf text;      /* every cell's text, back to back */
  size_t *cell_end; /* end offset in `text` of each cell, row-major */
  size_t ncells, cap_cells;
  int ncols;
} console_state;

static int console_open(dp_sink *k) {
  console_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  const char *err = dp_table_option(k->table, "standard-error", "false");
  st->out = k->user ? (FILE *)k->user : (err[0] == 't' || err[0] == 'T') ? stderr : stdout;
  st->ident = dp_table_option(k->table, "print-identifier", NULL);
  st->ncols = k->schema ? k->schema->ncols : 0;
  k->state = st;
  return DIPPER_OK;
}

static int console_write(dp_sink *k, int64_t batch_id, const dp_batch *b) {
  (void)batch_id;
  console_state *st = k->state;
  size_t need = st->ncells + (size_t)b->nrows * (size_t)b->ncols;
  if (need > st->cap_cells) {
    size_t cap = st->cap_cells ? st->cap_cells * 2 : 256;
    while (cap < need) cap *= 2;
    size_t *p = realloc(st->cell_end, cap * sizeof *p);
    if (!p) return DIPPER_NOMEM;
    st->cell_end = p;
    st->cap_cells = cap;
  }
  for (int64_t r = 0; r < b->nrows; r++)
    for (int c = 0; c < b->ncols; c++) {
      dp_text_put_value(&st->text, b->cols[c], r, "NULL", 0);
      st->cell_end[st->ncells++] = st->text.len;
    }
  st->ncols = b->ncols;
  return st->text.oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* Display width: code points, not bytes. */
static size_t width_of(const char *s, size_t n) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++) w += ((unsigned char)s[i] & 0xC0) != 0x80;
  return w;
}

static void put_border(FILE *f, const size_t *widths, int ncols) {
  fputc('+', f);
  for (int c = 0; c < ncols; c++) {
    for (size_t i = 0; i < widths[c]; i++) fputc('-', f);
    fputc('+', f);
  }
  fputc('\n', f);
}

static void put_cell(FILE *f, const char *s, size_t n, size_t width) {
  for (size_t i = width_of(s, n); i < width; i++) fputc(' ', f);
  fwrite(s, 1, n, f);
  fputc('|', f);
}

static int console_commit(dp_sink *k, int64_t batch_id) {
  console_state *st = k->state;
  int ncols = st->ncols;
  if (st->ncells == 0 || ncols == 0) return DIPPER_OK;
  size_t nrows = st->ncells / (size_t)ncols;
  size_t *widths = calloc((size_t)ncols, sizeof *widths);
  if (!widths) return DIPPER_NOMEM;
  for (int c = 0; c < ncols; c++) {
    const char *name = k->schema->cols[c].name ? k->schema->cols[c].name : "";
    widths[c] = width_of(name, strlen(name));
  }
  const char *text = st->text.data ? st->text.data : "";
  for (size_t i = 0; i < st->ncells; i++) {
    size_t start = i ? st->cell_end[i - 1] : 0;
    size_t w = width_of(text + start, st->cell_end[i] - start);
    if (w > widths[i % (size_t)ncols]) widths[i % (size_t)ncols] = w;
  }
  FILE *f = st->out;
  fputs("-------------------------------------------\n", f);
  if (st->ident)
    fprintf(f, "Batch: %lld (%s)\n", (long long)batch_id, st->ident);
  else
    fprintf(f, "Batch: %lld\n", (long long)batch_id);
  fputs("-------------------------------------------\n", f);
  put_border(f, widths, ncols);
  fputc('|', f);
  for (int c = 0; c < ncols; c++) {
    const char *name = k->schema->cols[c].name ? k->schema->cols[c].name : "";
    put_cell(f, name, strlen(name), widths[c]);
  }
  fputc('\n', f);
  put_border(f, widths, ncols);
  for (size_t r = 0; r < nrows; r++) {
    fputc('|', f);
    for (int c = 0; c < ncols; c++) {
      size_t i = r * (size_t)ncols + (size_t)c;
      size_t start = i ? st->cell_end[i - 1] : 0;
      put_cell(f, text + start, st->cell_end[i] - start, widths[c]);
    }
    fputc('\n', f);
  }
  put_border(f, widths, ncols);
  fputc('\n', f);
  fflush(f);
  free(widths);
  st->ncells = 0;
  st->text.len = 0;
  return DIPPER_OK;
}

static void console_close(dp_sink *k) {
  console_state *st = k->state;
  if (!st) return;
  dp_buf_free(&st->text);
  free(st->cell_end);
  free(st);
  k->state = NULL;
}

const dp_sink_class dp_sink_console = {
    .name = "console",
    .open = console_open,
    .write = console_write,
    .commit = console_commit,
    .close = console_close,
};
