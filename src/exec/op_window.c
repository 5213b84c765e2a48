/*
** op_window.c — WINDOW: assigns each row its windows and appends the columns
** window_start, window_end and window_time (= window_end − 1 µs).
**
**   TUMBLE    one window: start = floor((ts − offset) / size) · size + offset
**   HOP       every start s ≡ offset (mod slide) with s ≤ ts < s + size, in
**             ascending order: size/slide rows out per row in
**   CUMULATE  the windows [start, start + k·step) of the tumbling window of
**             the max size holding ts, for every k whose end is past ts
**   SESSION   a provisional window [ts, ts + gap) per row (gap constant or
**             evaluated per row); the aggregate above merges overlapping
**             ones per key
**
** A row whose time is NULL is dropped, as in Flink; so is a session row whose
** gap is NULL or not positive (Spark).  When every row maps to exactly one
** window (TUMBLE, SESSION) and none is dropped, the input columns are
** borrowed, not copied; otherwise one pass writes the three window columns
** and the list of source rows, and the input columns are gathered by it into
** vectors reused from call to call — only the columns the plan above reads;
** the others are NULL columns (exec/narrow.h), so that a HOP that repeats
** each row size/slide times copies no string no one reads.  HOP and CUMULATE expand an input batch
** EXPAND_CHUNK rows at a time, so that their output stays cache-sized.
**
** Owns no state across micro-batches (only the cursor into the input batch
** being expanded).
*/
#include <stdlib.h>

#include "core/grow.h"
#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/hashtable.h"
#include "exec/narrow.h"
#include "exec/window_int.h"

/* Input rows per output batch of HOP and CUMULATE: their output is several
** times the input, and small batches stay in cache on the way up. */
#define EXPAND_CHUNK 16384

typedef struct window_state {
  dp_batch out;          /* input columns (borrowed or gathered) + the 3 window columns */
  dp_vector **gathered;  /* per input column: our copy when rows were repeated or dropped
                            (kept across calls: cleared, not freed) */
  dp_batch *in;          /* the child's batch being expanded (borrowed), or NULL */
  int64_t pos;           /* its next row */
  dp_vector *wcols[3];   /* window_start, window_end, window_time */
  int64_t *sel;          /* source row of each output row */
  int64_t sel_cap;
  dp_narrow *narrow;     /* which input columns the plan above reads; NULL: all */
} window_state;

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t dp_window_tumble_start(int64_t ts, int64_t size, int64_t offset) {
  return floor_div(ts - offset, size) * size + offset;
}

int dp_window_assign(const dp_window_spec *w, int64_t ts, int64_t *starts, int64_t *ends, int max) {
  int n = 0;
  switch (w->kind) {
  case DP_WIN_TUMBLE: {
    int64_t s = dp_window_tumble_start(ts, w->size, w->offset);
    if (max < 1) return -1;
    starts[0] = s;
    ends[0] = s + w->size;
    return 1;
  }
  case DP_WIN_HOP: {
    int64_t last = dp_window_tumble_start(ts, w->slide, w->offset);
    int64_t first = last;
    while (first - w->slide > ts - w->size) first -= w->slide;
    for (int64_t s = first; s <= last; s += w->slide) {
      if (n >= max) return -1;
      starts[n] = s;
      ends[n] = s + w->size;
      n++;
    }
    return n;
  }
  case DP_WIN_CUMULATE: {
    int64_t s = dp_window_tumble_start(ts, w->size, w->offset);
    for (int64_t e = s + w->slide; e <= s + w->size; e += w->slide) {
      if (e <= ts) continue;
      if (n >= max) return -1;
      starts[n] = s;
      ends[n] = e;
      n++;
    }
    return n;
  }
  case DP_WIN_SESSION:
    if (max < 1) return -1;
    starts[0] = ts;
    ends[0] = ts + w->gap;
    return 1;
  }
  return 0;
}

int dp_window_max_per_row(const dp_window_spec *w) {
  if (w->kind == DP_WIN_HOP || w->kind == DP_WIN_CUMULATE) {
    int64_t k = w->slide > 0 ? (w->size + w->slide - 1) / w->slide : 1;
    return k > 0 && k < (1 << 20) ? (int)k : -1;
  }
  return 1;
}

static void free_gathered(window_state *st, int ninput) {
  for (int c = 0; c < ninput; c++) {
    dp_vector_free(st->gathered[c]);
    st->gathered[c] = NULL;
  }
}

static int window_open(dp_op *op) {
  const dp_plan *p = op->plan;
  const dp_window_spec *w = &p->u.window;
  if (w->kind != DP_WIN_SESSION && (w->size <= 0 || w->slide <= 0 || dp_window_max_per_row(w) < 0))
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, w->span,
                    "a window needs a positive size and slide with at most 2^20 windows per row; "
                    "make the slide larger");
  if (w->kind == DP_WIN_SESSION && !w->gap_expr && w->gap <= 0)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, w->span,
                    "a session window needs a positive gap; write e.g. INTERVAL '5' MINUTE");
  int ncols = p->schema.ncols, ninput = ncols - 3;
  if (ninput < 0 || w->time_col < 0 || w->time_col >= ninput)
    return dp_error(op->ex->diags, DIPPER_INTERNAL, p->span,
                    "the Window node's schema lacks its three window columns");
  window_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  st->out.schema = &p->schema;
  st->out.ncols = ncols;
  st->out.cols = calloc((size_t)ncols, sizeof *st->out.cols);
  st->gathered = calloc((size_t)(ninput > 0 ? ninput : 1), sizeof *st->gathered);
  int rc = st->out.cols && st->gathered ? DIPPER_OK : DIPPER_NOMEM;
  for (int k = 0; k < 3 && !rc; k++) {
    st->wcols[k] = dp_vector_new(p->schema.cols[ninput + k].type, 0);
    if (!st->wcols[k]) rc = DIPPER_NOMEM;
  }
  if (!rc) rc = dp_narrow_open(op, &st->narrow);
  op->state = st;
  if (rc) {
    op->cls->close(op);
    return rc;
  }
  return DIPPER_OK;
}

static int reserve_sel(window_state *st, int64_t n) {
  return dp_grow(&st->sel, &st->sel_cap, n, sizeof *st->sel, 1024);
}

/* Room for n more rows in each window column; the fill loops then store
** without checks. */
static int reserve_wcols(window_state *st, int64_t n) {
  for (int k = 0; k < 3; k++) {
    dp_vector_clear(st->wcols[k]);
    int rc = dp_vector_reserve(st->wcols[k], n);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

static int window_next(dp_op *op, dp_batch **out) {
  window_state *st = op->state;
  const dp_plan *p = op->plan;
  const dp_window_spec *w = &p->u.window;
  int ninput = p->schema.ncols - 3;
  *out = NULL;
  dp_op *child = op->children[0];
  int rc;
  while (!st->in || st->pos >= st->in->nrows) {
    st->in = NULL;
    st->pos = 0;
    dp_batch *next = NULL;
    rc = child->cls->next(child, &next);
    if (rc != DIPPER_OK || !next) return rc;
    if (next->nrows > 0) {
      st->in = next;
      op->metrics.rows_in += next->nrows;
    }
  }
  dp_batch *in = st->in;
  int64_t from = st->pos, nin = in->nrows - from;
  if ((w->kind == DP_WIN_HOP || w->kind == DP_WIN_CUMULATE) && nin > EXPAND_CHUNK) nin = EXPAND_CHUNK;
  st->pos = from + nin;
  const dp_vector *tv = in->cols[w->time_col];
  const int64_t *ts = (const int64_t *)tv->values + from;
  bool has_nulls = tv->validity != NULL;

  dp_vector *gapv = NULL;
  if (w->kind == DP_WIN_SESSION && w->gap_expr) {
    rc = dp_eval(op->ex, w->gap_expr, in, &gapv);
    if (rc) return rc;
  }
  int per_row = dp_window_max_per_row(w);
  if ((rc = reserve_sel(st, nin * per_row)) || (rc = reserve_wcols(st, nin * per_row))) {
    dp_vector_free(gapv);
    return rc;
  }
  int64_t *ws = st->wcols[0]->values, *we = st->wcols[1]->values, *wt = st->wcols[2]->values;
  int64_t n = 0;
  bool identity = true; /* output row i is input row i */
  switch (w->kind) {
  case DP_WIN_TUMBLE:
    for (int64_t i = 0; i < nin; i++) {
      if (has_nulls && !dp_bit_get(tv->validity, from + i)) {
        identity = false;
        continue;
      }
      int64_t s = dp_window_tumble_start(ts[i], w->size, w->offset);
      st->sel[n] = from + i;
      ws[n] = s;
      we[n] = s + w->size;
      wt[n] = s + w->size - 1;
      n++;
    }
    break;
  case DP_WIN_SESSION:
    for (int64_t i = 0; i < nin; i++) {
      int64_t gap = w->gap;
      if (gapv) {
        gap = dp_vector_is_null(gapv, from + i) ? 0 : dp_vector_get_i64(gapv, from + i);
      }
      if ((has_nulls && !dp_bit_get(tv->validity, from + i)) || gap <= 0) {
        identity = false;
        continue;
      }
      st->sel[n] = from + i;
      ws[n] = ts[i];
      we[n] = ts[i] + gap;
      wt[n] = ts[i] + gap - 1;
      n++;
    }
    break;
  case DP_WIN_HOP:
    identity = false;
    for (int64_t i = 0; i < nin; i++) {
      if (has_nulls && !dp_bit_get(tv->validity, from + i)) continue;
      int64_t last = dp_window_tumble_start(ts[i], w->slide, w->offset);
      int64_t first = last - (int64_t)(per_row - 1) * w->slide;
      for (int64_t s = first; s <= last; s += w->slide) {
        if (s + w->size <= ts[i]) continue; /* size not a multiple of slide */
        st->sel[n] = from + i;
        ws[n] = s;
        we[n] = s + w->size;
        wt[n] = s + w->size - 1;
        n++;
      }
    }
    break;
  case DP_WIN_CUMULATE:
    identity = false;
    for (int64_t i = 0; i < nin; i++) {
      if (has_nulls && !dp_bit_get(tv->validity, from + i)) continue;
      int64_t s = dp_window_tumble_start(ts[i], w->size, w->offset);
      for (int64_t e = s + w->slide; e <= s + w->size; e += w->slide) {
        if (e <= ts[i]) continue;
        st->sel[n] = from + i;
        ws[n] = s;
        we[n] = e;
        wt[n] = e - 1;
        n++;
      }
    }
    break;
  }
  dp_vector_free(gapv);
  for (int k = 0; k < 3; k++) st->wcols[k]->length = n;
  if (identity && n == in->nrows) {
    for (int c = 0; c < ninput; c++) st->out.cols[c] = in->cols[c];
  } else {
    const dp_col_need *need = st->narrow ? dp_narrow_need(st->narrow) : NULL;
    for (int c = 0; c < ninput; c++) {
      if (need && !dp_col_needed(&need[c])) {
        rc = dp_narrow_null(st->narrow, c, n, &st->out.cols[c]);
        if (rc) return rc;
        continue;
      }
      if (st->gathered[c])
        dp_vector_clear(st->gathered[c]);
      else if (!(st->gathered[c] = dp_vector_new(in->cols[c]->type, n)))
        return DIPPER_NOMEM;
      rc = dp_vector_take(st->gathered[c], in->cols[c], st->sel, 0, n);
      if (rc) return rc;
      st->out.cols[c] = st->gathered[c];
    }
  }
  for (int k = 0; k < 3; k++) st->out.cols[ninput + k] = st->wcols[k];
  st->out.nrows = n;
  op->metrics.rows_out += n;
  *out = &st->out;
  return DIPPER_OK;
}

static void window_close(dp_op *op) {
  window_state *st = op->state;
  if (!st) return;
  if (st->gathered) free_gathered(st, op->plan->schema.ncols - 3);
  for (int k = 0; k < 3; k++) dp_vector_free(st->wcols[k]);
  free(st->gathered);
  free(st->out.cols);
  free(st->sel);
  dp_narrow_free(st->narrow);
  free(st);
  op->state = NULL;
}

const dp_op_class dp_op_window = {
    .name = "Window",
    .open = window_open,
    .next = window_next,
    .end_batch = NULL,
    .close = window_close,
};
