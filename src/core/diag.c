/*
** diag.c — the diagnostics list and its compiler-style rendering (diag.h).
**
** Messages are formatted into the list's arena.  Rendering works on bytes of
** the source text, but pads and underlines by UTF-8 characters so that the
** caret stays under the right character of a line with non-ASCII text, and
** keeps tabs as tabs so that it lines up whatever the terminal's tab width.
*/
#include "core/diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/grow.h"

#define DEFAULT_MAX 100

void dp_diags_init(dp_diags *d, dp_arena *a, const char *file, const char *text, size_t len) {
  memset(d, 0, sizeof *d);
  d->arena = a;
  d->file = file;
  d->text = text;
  d->text_len = len;
}

/* Room for one more item; false when the arena is out of memory. */
static bool reserve_item(dp_diags *d) {
  return dp_arena_grow_i(d->arena, &d->items, &d->cap, d->count + 1, sizeof *d->items, 8) ==
         DIPPER_OK;
}

int dp_error(dp_diags *d, int code, dp_span span, const char *fmt, ...) {
  int max = d->max > 0 ? d->max : DEFAULT_MAX;
  if (d->count >= max) return code;
  va_list ap;
  va_start(ap, fmt);
  char *message = dp_arena_vprintf(d->arena, fmt, ap);
  va_end(ap);
  if (!reserve_item(d)) {
    /* No room for a new entry: the last one becomes the out-of-memory
    ** report, so the list never claims success after losing an error. */
    if (d->count > 0) {
      dp_diag *last = &d->items[d->count - 1];
      last->code = DIPPER_NOMEM;
      last->message = dipper_strerror(DIPPER_NOMEM);
    }
    return code;
  }
  dp_diag *g = &d->items[d->count++];
  g->code = message ? code : DIPPER_NOMEM;
  g->span = span;
  g->message = message ? message : dipper_strerror(DIPPER_NOMEM);
  return code;
}

/* Start and length of source line `line` (1-based); false if absent. */
static bool find_line(const dp_diags *d, uint32_t line, size_t *start, size_t *len) {
  if (!d->text || line == 0) return false;
  size_t pos = 0;
  for (uint32_t n = 1; n < line; n++) {
    const char *nl = memchr(d->text + pos, '\n', d->text_len - pos);
    if (!nl) return false;
    pos = (size_t)(nl - d->text) + 1;
  }
  const char *nl = memchr(d->text + pos, '\n', d->text_len - pos);
  size_t end = nl ? (size_t)(nl - d->text) : d->text_len;
  if (end > pos && d->text[end - 1] == '\r') end--; /* CRLF text */
  *start = pos;
  *len = end - pos;
  return true;
}

static bool is_utf8_continuation(char c) { return ((unsigned char)c & 0xC0) == 0x80; }

/* The caret line: padding up to the column (tabs kept), then ^~~~. */
static void put_caret(dp_buf *out, const char *line, size_t line_len, const dp_span *span) {
  size_t col = span->col ? span->col - 1 : 0;
  if (col > line_len) col = line_len;
  for (size_t i = 0; i < col; i++) {
    if (line[i] == '\t')
      dp_buf_putc(out, '\t');
    else if (!is_utf8_continuation(line[i]))
      dp_buf_putc(out, ' ');
  }
  size_t end = col + (span->len ? span->len : 1);
  if (end > line_len) end = line_len;
  bool first = true;
  for (size_t i = col; i < end; i++) {
    if (is_utf8_continuation(line[i])) continue;
    dp_buf_putc(out, first ? '^' : '~');
    first = false;
  }
  if (first) dp_buf_putc(out, '^'); /* at the end of the line: still show where */
}

char *dp_diag_render(const dp_diags *d, const dp_diag *g) {
  return dp_diag_render_level(d, g, "error");
}

char *dp_diag_render_level(const dp_diags *d, const dp_diag *g, const char *level) {
  dp_buf out = DP_BUF_INIT;
  const char *file = d->file ? d->file : "<string>";
  if (g->span.line == 0) {
    dp_buf_printf(&out, "%s: %s: %s\n", file, level, g->message);
    return dp_buf_take(&out);
  }
  dp_buf_printf(&out, "%s:%u:%u: %s: %s\n", file, (unsigned)g->span.line,
                (unsigned)g->span.col, level, g->message);
  size_t start, len;
  if (find_line(d, g->span.line, &start, &len)) {
    char number[16];
    int width = snprintf(number, sizeof number, "%4u", (unsigned)g->span.line);
    dp_buf_printf(&out, "%s | ", number);
    dp_buf_put(&out, d->text + start, len);
    dp_buf_putc(&out, '\n');
    dp_buf_indent(&out, width);
    dp_buf_puts(&out, " | ");
    put_caret(&out, d->text + start, len, &g->span);
    dp_buf_putc(&out, '\n');
  }
  return dp_buf_take(&out);
}

dp_span dp_span_join(dp_span a, dp_span b) {
  if (a.line == 0) return b; /* a span without a place adds nothing */
  if (b.line == 0) return a;
  if (b.off < a.off) {
    dp_span t = a;
    a = b;
    b = t;
  }
  uint32_t end = b.off + b.len;
  uint32_t a_end = a.off + a.len;
  a.len = (end > a_end ? end : a_end) - a.off;
  return a;
}
