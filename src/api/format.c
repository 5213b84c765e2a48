/*
** format.c — the text of values for programs that print them:
** dipper_format_values and dipper_format_timestamp (dipper.h).
**
** Owns: nothing of its own but the packing of the cells.  The text itself is
** dp_text_put_value's (formats/text.c), the one formatter that the console
** sink and a bare SELECT's tables print with, and dp_json_put_value's for
** JSON; the `dipper` command prints with these functions too, so that a
** value reads the same wherever dipper shows it.  The Arrow arrays are
** imported column by column into vectors (a copy: this is for printing, not
** for speed); the precision of a TIMESTAMP(p) comes with dipper's own export
** (DP_ARROW_PRECISION_KEY), and a column of a format dipper has no type for
** shows "<format F>" in each cell rather than failing the whole result.
*/
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/vector.h"
#include "core/vector_import.h"
#include "formats/formats.h"

/* One column's cells into text, each followed by its NUL; ends[r] is the
** offset after row r's NUL. */
static int format_column(dp_arena *a, const struct ArrowSchema *cs, const struct ArrowArray *ca,
                         int64_t offset, int64_t length, unsigned flags, dp_buf *text,
                         size_t *ends, int64_t stride) {
  const dp_type *t = dp_type_from_arrow(a, cs);
  dp_vector *v = t ? dp_vector_new(t, length) : NULL;
  int rc = DIPPER_OK;
  if (v) {
    /* The parent's offset applies to the child as well (a struct's slice). */
    struct ArrowArray slice = *ca;
    slice.offset = ca->offset + offset;
    slice.length = length;
    rc = dp_vector_import(v, cs, &slice, NULL);
  }
  /* "<format F>" is for a format dipper has no type for, not for no memory */
  if (rc == DIPPER_NOMEM || (t && !v) || (!t && dp_arena_failed(a))) {
    dp_vector_free(v);
    return DIPPER_NOMEM;
  }
  for (int64_t r = 0; r < length; r++) {
    if (!v || rc != DIPPER_OK)
      dp_buf_printf(text, "<format %s>", cs->format ? cs->format : "?");
    else if (flags & DIPPER_FORMAT_JSON)
      dp_json_put_value(text, v, r);
    else
      dp_text_put_value(text, v, r, "NULL", 0);
    dp_buf_putc(text, '\0');
    ends[r * stride] = text->len;
  }
  dp_vector_free(v);
  return text->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dipper_format_values(const struct ArrowSchema *schema, const struct ArrowArray *array,
                         unsigned flags, char ***out) {
  if (!out) return DIPPER_MISUSE;
  *out = NULL;
  if (!schema || !array || !schema->format || strcmp(schema->format, "+s") != 0 ||
      schema->n_children != array->n_children || array->length < 0)
    return DIPPER_MISUSE;
  int64_t ncols = schema->n_children, nrows = array->length;
  size_t ncells = (size_t)(ncols * nrows);
  size_t *ends = malloc((ncells ? ncells : 1) * sizeof *ends);
  dp_buf *texts = calloc(ncols ? (size_t)ncols : 1, sizeof *texts);
  dp_arena *a = dp_arena_new(1024);
  int rc = ends && texts && a ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t c = 0; c < ncols && !rc; c++)
    rc = format_column(a, schema->children[c], array->children[c], array->offset, nrows, flags,
                       &texts[c], ends + c, ncols);
  /* One block: the cell pointers, row-major, then their text. */
  size_t total = 0;
  for (int64_t c = 0; c < ncols && !rc; c++) total += texts[c].len;
  char **cells = rc ? NULL : malloc((ncells ? ncells : 1) * sizeof *cells + total);
  if (!rc && !cells) rc = DIPPER_NOMEM;
  if (!rc) {
    char *at = (char *)(cells + ncells);
    for (int64_t c = 0; c < ncols; c++) {
      if (texts[c].len) memcpy(at, texts[c].data, texts[c].len); /* no data: every cell empty */
      size_t from = 0;
      for (int64_t r = 0; r < nrows; r++) {
        size_t k = (size_t)(r * ncols + c);
        cells[k] = at + from;
        from = ends[k];
      }
      at += texts[c].len;
    }
    *out = cells;
  }
  for (int64_t c = 0; texts && c < ncols; c++) dp_buf_free(&texts[c]);
  free(texts);
  free(ends);
  dp_arena_free(a);
  return rc;
}

int dipper_format_timestamp(int64_t micros, int precision, char *buf, size_t cap) {
  if (!buf && cap) return -1;
  return dp_format_timestamp(buf, cap, micros, precision);
}
