/*
** op_sort.c — ORDER BY (DP_P_SORT): a stable sort by the keys, ASC/DESC with
** NULLS FIRST/LAST.
**
** Three ways to run, fixed at open by what the analysis says of the input:
**   bounded   every input row is kept until the last batch of the run (the
**             input is complete only then), sorted and emitted once;
**   complete  the input is an aggregation re-emitted whole every batch
**             (complete mode): each batch's rows are sorted on their own;
**   time      the first key is an event-time attribute, ascending: rows wait
**             until the watermark reaches them and leave in order; rows
**             at or before the watermark on arrival are late (Spark's rule:
**             time <= watermark), dropped and counted.
**
** In time mode a batch costs what it brings and releases, not the rows held
** (issue 15).  The rows wait in a store in arrival order; a row that leaves
** is marked dead in place, and the store is compacted (order kept) only once
** the dead are half of it and at least 1,024, so a row is copied O(1) times.
** What the watermark releases is found through an index of sorted runs of
** (time, position): each batch's rows with a time, sorted by it unless they
** came in order, form a run, joined to the last one when they follow on and
** merged with it while it is not twice their size (so fewer than log2 of the
** rows' count runs, and a row is merged O(log n) times); a release takes
** each run's front up to the watermark.  Rows with a NULL time wait for the
** end in a list of their own.  The released rows are gathered in store
** order and sorted by the keys alone, so ties leave in arrival order, as
** the sort of every held row did before.  The index is not checkpointed: a
** restore rebuilds it from the rows once, at the next batch.
*/
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/rows.h"

typedef enum sort_mode { SORT_BOUNDED, SORT_COMPLETE, SORT_TIME } sort_mode;

/* A held row with a time, by (time, position). */
typedef struct sort_pair {
  int64_t t, pos;
} sort_pair;

/* Pairs in order; [head, n) are still held. */
typedef struct sort_run {
  sort_pair *a;
  int64_t head, n, cap;
} sort_run;

typedef struct sort_state {
  sort_mode mode;
  int time_col;     /* SORT_TIME: the input column of the first key */
  dp_batch *rows;   /* the store: rows waiting, in arrival order */
  dp_batch *ready;  /* SORT_TIME: this batch's released rows, in store order */
  dp_batch *out;
  bool drained;     /* the input of this micro-batch has been read */
  int64_t *perm;    /* rows of the batch sorted from (rows or ready) in output order */
  int64_t nperm, cursor;
  bool emitted_all; /* SORT_BOUNDED: the one output has been made */
  /* SORT_TIME */
  uint8_t *dead;    /* per store row: released, awaiting the compaction */
  int64_t dead_cap, ndead;
  sort_run *runs;
  int64_t nruns, runs_cap;
  int64_t *nulls;   /* held rows with a NULL time, ascending */
  int64_t nnulls, nulls_cap;
  bool stale;       /* restored: runs and nulls are rebuilt at the next batch */
  /* checkpoints: the store's log since the base, and the rows released
  ** since it and still in the store (current positions) */
  dp_rowlog log;
  int64_t *fresh_dead;
  int64_t nfresh, fresh_cap;
} sort_state;

static int64_t held(const sort_state *st) { return st->rows->nrows - st->ndead; }

static int cmp_pair(const void *a, const void *b) {
  const sort_pair *x = a, *y = b;
  if (x->t != y->t) return (x->t > y->t) - (x->t < y->t);
  return (x->pos > y->pos) - (x->pos < y->pos);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void runs_free(sort_state *st) {
  for (int64_t k = 0; k < st->nruns; k++) free(st->runs[k].a);
  st->nruns = 0;
  st->nnulls = 0;
}

/* Merge the last two runs' held pairs into one. */
static int merge_last(sort_state *st) {
  sort_run *x = &st->runs[st->nruns - 2], *y = &st->runs[st->nruns - 1];
  int64_t nx = x->n - x->head, ny = y->n - y->head, n = nx + ny;
  sort_pair *a = malloc((size_t)(n ? n : 1) * sizeof *a);
  if (!a) return DIPPER_NOMEM;
  int64_t i = x->head, j = y->head, k = 0;
  while (i < x->n && j < y->n) a[k++] = cmp_pair(&x->a[i], &y->a[j]) <= 0 ? x->a[i++] : y->a[j++];
  while (i < x->n) a[k++] = x->a[i++];
  while (j < y->n) a[k++] = y->a[j++];
  free(x->a);
  free(y->a);
  *x = (sort_run){a, 0, n, n};
  st->nruns--;
  return DIPPER_OK;
}

/* Index the store's rows [first, nrows) (none dead). */
static int index_rows(sort_state *st, int64_t first) {
  int64_t n = st->rows->nrows - first;
  if (n <= 0) return DIPPER_OK;
  const dp_vector *t = st->rows->cols[st->time_col];
  sort_pair *a = malloc((size_t)n * sizeof *a);
  if (!a) return DIPPER_NOMEM;
  int64_t m = 0;
  bool sorted = true;
  for (int64_t r = first; r < st->rows->nrows; r++) {
    if (dp_vector_is_null(t, r)) {
      if (dp_grow(&st->nulls, &st->nulls_cap, st->nnulls + 1, sizeof *st->nulls, 64)) {
        free(a);
        return DIPPER_NOMEM;
      }
      st->nulls[st->nnulls++] = r;
      continue;
    }
    a[m] = (sort_pair){dp_vector_get_i64(t, r), r};
    if (m > 0 && a[m].t < a[m - 1].t) sorted = false;
    m++;
  }
  if (m == 0) {
    free(a);
    return DIPPER_OK;
  }
  if (!sorted) qsort(a, (size_t)m, sizeof *a, cmp_pair);
  sort_run *last = st->nruns > 0 ? &st->runs[st->nruns - 1] : NULL;
  if (last && last->n > last->head && last->a[last->n - 1].t <= a[0].t) {
    /* it follows on: one run (positions grow, so (time, position) stays ordered) */
    if (dp_grow(&last->a, &last->cap, last->n + m, sizeof *last->a, 64)) {
      free(a);
      return DIPPER_NOMEM;
    }
    memcpy(last->a + last->n, a, (size_t)m * sizeof *a);
    last->n += m;
    free(a);
    return DIPPER_OK;
  }
  if (dp_grow(&st->runs, &st->runs_cap, st->nruns + 1, sizeof *st->runs, 8)) {
    free(a);
    return DIPPER_NOMEM;
  }
  st->runs[st->nruns++] = (sort_run){a, 0, m, m};
  while (st->nruns >= 2) {
    sort_run *x = &st->runs[st->nruns - 2], *y = &st->runs[st->nruns - 1];
    if (x->n - x->head > 2 * (y->n - y->head)) break;
    int rc = merge_last(st);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

/* After a restore: the index from the held rows, once. */
static int rebuild_index(sort_state *st) {
  runs_free(st);
  st->stale = false;
  int64_t n = st->rows->nrows;
  const dp_vector *t = st->rows->cols[st->time_col];
  sort_pair *a = malloc((size_t)(n ? n : 1) * sizeof *a);
  if (!a) return DIPPER_NOMEM;
  int64_t m = 0;
  for (int64_t r = 0; r < n; r++) {
    if (st->dead[r]) continue;
    if (!dp_vector_is_null(t, r)) {
      a[m++] = (sort_pair){dp_vector_get_i64(t, r), r};
    } else {
      if (dp_grow(&st->nulls, &st->nulls_cap, st->nnulls + 1, sizeof *st->nulls, 64)) {
        free(a);
        return DIPPER_NOMEM;
      }
      st->nulls[st->nnulls++] = r;
    }
  }
  qsort(a, (size_t)m, sizeof *a, cmp_pair);
  if (m == 0 || dp_grow(&st->runs, &st->runs_cap, 1, sizeof *st->runs, 8)) {
    free(a);
    return m == 0 ? DIPPER_OK : DIPPER_NOMEM;
  }
  st->runs[0] = (sort_run){a, 0, m, m};
  st->nruns = 1;
  return DIPPER_OK;
}

static int grow_dead(sort_state *st, int64_t n) {
  int64_t old = st->dead_cap;
  if (dp_grow(&st->dead, &st->dead_cap, n, 1, 1024)) return DIPPER_NOMEM;
  if (st->dead_cap > old) memset(st->dead + old, 0, (size_t)(st->dead_cap - old));
  return DIPPER_OK;
}

static int keep_rows(dp_op *op, const dp_batch *b) {
  sort_state *st = op->state;
  op->metrics.rows_in += b->nrows;
  if (st->mode != SORT_TIME) return dp_rows_append(st->rows, b);
  int64_t wm = op->ex->late_watermark; /* the previous batch's (exec.h): lateness */
  const dp_vector *t = b->cols[st->time_col];
  int64_t *keep = malloc((size_t)(b->nrows ? b->nrows : 1) * sizeof *keep);
  if (!keep) return DIPPER_NOMEM;
  int64_t n = 0;
  for (int64_t r = 0; r < b->nrows; r++) {
    if (wm != DP_WATERMARK_NONE && !dp_vector_is_null(t, r) && dp_vector_get_i64(t, r) <= wm) {
      op->metrics.late_dropped++;
      continue;
    }
    keep[n++] = r;
  }
  int64_t first = st->rows->nrows;
  int rc = dp_batch_take(st->rows, b, keep, 0, n);
  free(keep);
  if (!rc) rc = grow_dead(st, st->rows->nrows);
  return rc ? rc : index_rows(st, first);
}

/* SORT_TIME: take off the index the rows the watermark releases, into
** *pos (ascending), marked dead. */
static int release(sort_state *st, int64_t wm, int64_t **pos, int64_t *n) {
  int64_t cap = 0;
  *pos = NULL;
  *n = 0;
  if (wm == DP_WATERMARK_NONE) return DIPPER_OK;
  int64_t kept = 0;
  for (int64_t k = 0; k < st->nruns; k++) {
    sort_run *r = &st->runs[k];
    while (r->head < r->n && (wm == DP_WATERMARK_END || r->a[r->head].t <= wm)) {
      if (dp_grow(pos, &cap, *n + 1, sizeof **pos, 256)) return DIPPER_NOMEM;
      (*pos)[(*n)++] = r->a[r->head++].pos;
    }
    if (r->head == r->n) {
      free(r->a);
      continue;
    }
    if (r->head >= 1024 && 2 * r->head >= r->n) { /* its front is mostly taken: shift */
      memmove(r->a, r->a + r->head, (size_t)(r->n - r->head) * sizeof *r->a);
      r->n -= r->head;
      r->head = 0;
    }
    st->runs[kept++] = *r;
  }
  st->nruns = kept;
  if (wm == DP_WATERMARK_END) { /* the end: the rows without a time leave too */
    if (st->nnulls > 0 && dp_grow(pos, &cap, *n + st->nnulls, sizeof **pos, 256))
      return DIPPER_NOMEM;
    if (st->nnulls > 0) memcpy(*pos + *n, st->nulls, (size_t)st->nnulls * sizeof *st->nulls);
    *n += st->nnulls;
    st->nnulls = 0;
  }
  if (*n == 0) return DIPPER_OK;
  qsort(*pos, (size_t)*n, sizeof **pos, cmp_i64);
  if (st->log.on &&
      dp_grow(&st->fresh_dead, &st->fresh_cap, st->nfresh + *n, sizeof *st->fresh_dead, 256))
    return DIPPER_NOMEM;
  for (int64_t i = 0; i < *n; i++) {
    st->dead[(*pos)[i]] = 1;
    if (st->log.on) st->fresh_dead[st->nfresh++] = (*pos)[i];
  }
  st->ndead += *n;
  return DIPPER_OK;
}

/* Order the rows that may leave now into st->perm (over st->rows, or over
** st->ready in time mode). */
static int plan_output(dp_op *op) {
  sort_state *st = op->state;
  dp_exec *ex = op->ex;
  st->nperm = st->cursor = 0;
  if (st->mode == SORT_BOUNDED && (!ex->final || st->emitted_all)) return DIPPER_OK;
  const dp_batch *from = st->rows;
  if (st->mode == SORT_TIME) {
    /* A row is ready when the watermark has reached its time; NULL times
    ** wait for the end of the input. */
    int64_t wm = ex->final ? DP_WATERMARK_END : ex->watermark, *pos = NULL, n = 0;
    int rc = release(st, wm, &pos, &n);
    dp_batch_clear(st->ready);
    if (!rc && n > 0) rc = dp_batch_take(st->ready, st->rows, pos, 0, n);
    free(pos);
    if (rc) return rc;
    from = st->ready;
  }
  int64_t n = from->nrows;
  free(st->perm);
  st->perm = malloc((size_t)(n ? n : 1) * sizeof *st->perm);
  if (!st->perm) return DIPPER_NOMEM;
  for (int64_t r = 0; r < n; r++) st->perm[r] = r;
  st->nperm = n;
  if (st->mode == SORT_BOUNDED) st->emitted_all = true;
  if (n == 0) return DIPPER_OK;
  dp_rows_order o;
  int rc = dp_rows_order_eval(ex, op->plan->u.sort.keys, op->plan->u.sort.nkeys, from, &o);
  if (!rc) rc = dp_rows_sort(st->perm, st->nperm, &o);
  dp_rows_order_free(&o, op->plan->u.sort.keys);
  return rc;
}

static int sort_next(dp_op *op, dp_batch **out) {
  sort_state *st = op->state;
  *out = NULL;
  if (!st->drained) {
    int rc = st->stale ? rebuild_index(st) : DIPPER_OK;
    if (!rc) rc = dp_op_drain(op->children[0], keep_rows, op);
    if (rc) return rc;
    st->drained = true;
    if ((rc = plan_output(op))) return rc;
    op->metrics.state_rows = held(st);
  }
  if (st->cursor >= st->nperm) return DIPPER_OK;
  dp_batch_clear(st->out);
  int64_t n = st->nperm - st->cursor;
  if (n > DP_ROWS_CHUNK) n = DP_ROWS_CHUNK;
  const dp_batch *from = st->mode == SORT_TIME ? st->ready : st->rows;
  int rc = dp_batch_take(st->out, from, st->perm, st->cursor, n);
  if (rc) return rc;
  st->cursor += n;
  op->metrics.rows_out += n;
  *out = st->out;
  return DIPPER_OK;
}

/* SORT_TIME: drop the dead rows from the store, once they are half of it
** (and at least 1,024), keeping the order; the index follows. */
static int compact(sort_state *st) {
  int64_t n = st->rows->nrows;
  if (st->ndead < 1024 || 2 * st->ndead < n) return DIPPER_OK;
  int64_t *keep = malloc((size_t)n * sizeof *keep), *drop = malloc((size_t)st->ndead * sizeof *drop);
  int64_t *to = malloc((size_t)n * sizeof *to);
  int rc = keep && drop && to ? DIPPER_OK : DIPPER_NOMEM;
  int64_t nkeep = 0, ndrop = 0;
  for (int64_t r = 0; !rc && r < n; r++) {
    if (st->dead[r]) {
      drop[ndrop++] = r;
      to[r] = -1;
    } else {
      to[r] = nkeep;
      keep[nkeep++] = r;
    }
  }
  if (!rc) rc = dp_rows_compact(&st->rows, keep, nkeep);
  if (!rc) rc = dp_rowlog_drop(&st->log, drop, ndrop);
  if (!rc) {
    for (int64_t k = 0; k < st->nruns; k++)
      for (int64_t i = st->runs[k].head; i < st->runs[k].n; i++)
        st->runs[k].a[i].pos = to[st->runs[k].a[i].pos];
    for (int64_t i = 0; i < st->nnulls; i++) st->nulls[i] = to[st->nulls[i]];
    memset(st->dead, 0, (size_t)n);
    st->ndead = 0;
    st->nfresh = 0; /* the log holds the drops now */
  }
  free(keep);
  free(drop);
  free(to);
  return rc;
}

static int sort_end_batch(dp_op *op) {
  sort_state *st = op->state;
  st->drained = false;
  int rc = DIPPER_OK;
  if (st->mode == SORT_COMPLETE || (st->mode == SORT_BOUNDED && st->emitted_all)) {
    if (st->rows->nrows > 0) dp_rowlog_clear(&st->log);
    dp_batch_clear(st->rows);
  } else if (st->mode == SORT_TIME) {
    dp_batch_clear(st->ready);
    rc = compact(st);
  }
  st->nperm = st->cursor = 0;
  op->metrics.state_rows = held(st);
  return rc;
}

static int sort_setup(dp_op *op) {
  const dp_plan *p = op->plan;
  const dp_plan *in = p->inputs[0];
  sort_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  st->time_col = -1;
  if (in->props.bounded || p->props.bounded) {
    st->mode = SORT_BOUNDED;
  } else if (op->ex->output_mode == DP_MODE_COMPLETE) {
    st->mode = SORT_COMPLETE;
  } else {
    const dp_sort_key *k0 = p->u.sort.nkeys > 0 ? &p->u.sort.keys[0] : NULL;
    int c = k0 ? dp_expr_as_column(k0->expr) : -1;
    if (!k0 || k0->desc || c < 0 || !in->props.time_attr || in->props.time_attr[c] < 0)
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                      "ORDER BY on a stream runs only ascending on an event-time column (rows "
                      "leave as the watermark passes them) or over an aggregation in complete "
                      "mode; order by the event-time column, or run in batch mode");
    st->mode = SORT_TIME;
    st->time_col = c;
  }
  st->rows = dp_batch_new(&in->schema, 0);
  st->ready = dp_batch_new(&in->schema, 0);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  return st->rows && st->ready && st->out ? DIPPER_OK : DIPPER_NOMEM;
}

static void sort_close(dp_op *op) {
  sort_state *st = op->state;
  if (!st) return;
  dp_batch_free(st->rows);
  dp_batch_free(st->ready);
  dp_batch_free(st->out);
  free(st->perm);
  runs_free(st);
  free(st->runs);
  free(st->nulls);
  free(st->dead);
  free(st->fresh_dead);
  dp_rowlog_free(&st->log);
  free(st);
  op->state = NULL;
}

/* An open that fails leaves nothing behind (exec.c closes only opened operators). */
static int sort_open(dp_op *op) {
  int rc = sort_setup(op);
  if (rc) sort_close(op);
  return rc;
}

/* ---- checkpoints ----
** Blob, version 2:  version:u8  mode:u8  emitted_all:u8  the store (rows.h's
** row store, dead rows included so that positions hold)  the dead rows.
** Delta, the same version:  version:u8  mode:u8  emitted_all:u8  the store's
** log (rows.h: the rows compactions dropped since the base, by base
** position)  the rows appended since (rows.h's store form)  the rows
** released since and still in the store (today's positions): O(rows in +
** rows out), never the held rows.  The dead rows are written as
** count:uvar, then per run of consecutive positions gap:uvar (from the end
** of the run before) and length-1:uvar.  The index is rebuilt from the rows.
** Version 1 (before the deltas: mode, emitted_all, the rows waiting, none
** dead) still reads. */
#define SORT_STATE_VERSION 2

static void put_positions(dp_buf *out, const int64_t *v, int64_t n) {
  int64_t runs = 0;
  for (int64_t i = 0; i < n; i++)
    if (i == 0 || v[i] != v[i - 1] + 1) runs++;
  dp_put_uvar(out, (uint64_t)runs);
  for (int64_t i = 0, end = 0; i < n;) {
    int64_t j = i;
    while (j + 1 < n && v[j + 1] == v[j] + 1) j++;
    dp_put_uvar(out, (uint64_t)(v[i] - end));
    dp_put_uvar(out, (uint64_t)(j - i));
    end = v[j] + 1;
    i = j + 1;
  }
}

/* Mark dead the positions put_positions wrote, each below the store's rows
** and alive until now. */
static int get_positions(dp_rd *in, sort_state *st) {
  uint64_t runs = dp_get_uvar(in);
  uint64_t n = (uint64_t)st->rows->nrows, end = 0;
  if (in->bad || runs > n) return DIPPER_CORRUPT;
  for (uint64_t k = 0; k < runs; k++) {
    uint64_t gap = dp_get_uvar(in), len = dp_get_uvar(in);
    if (in->bad || (k > 0 && gap == 0) || gap > n - end || len >= n - end - gap) {
      in->bad = true;
      return DIPPER_CORRUPT;
    }
    for (uint64_t r = end + gap; r <= end + gap + len; r++) {
      if (st->dead[r]) {
        in->bad = true;
        return DIPPER_CORRUPT;
      }
      st->dead[r] = 1;
      st->ndead++;
    }
    end += gap + len + 1;
  }
  return DIPPER_OK;
}

static void mark_base(sort_state *st) {
  dp_rowlog_mark(&st->log, st->rows->nrows);
  st->nfresh = 0;
}

static int sort_save(dp_op *op, dp_buf *out) {
  sort_state *st = op->state;
  dp_state_begin(out, SORT_STATE_VERSION);
  dp_put_u8(out, (uint8_t)st->mode);
  dp_put_u8(out, st->emitted_all);
  int rc = dp_rows_save(out, st->rows);
  if (!rc) {
    int64_t *pos = malloc((size_t)(st->ndead ? st->ndead : 1) * sizeof *pos), k = 0;
    if (!pos) return DIPPER_NOMEM;
    for (int64_t r = 0; r < st->rows->nrows && k < st->ndead; r++)
      if (st->dead[r]) pos[k++] = r;
    put_positions(out, pos, k);
    free(pos);
  }
  if (!rc) mark_base(st);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int sort_save_delta(dp_op *op, dp_buf *out) {
  sort_state *st = op->state;
  dp_state_begin(out, SORT_STATE_VERSION);
  dp_put_u8(out, (uint8_t)st->mode);
  dp_put_u8(out, st->emitted_all);
  int64_t *at = NULL, nat = 0;
  int rc = dp_rowlog_save(out, &st->log, &at, &nat);
  free(at); /* no row changes in place */
  if (!rc) rc = dp_rows_save_from(out, st->rows, dp_rowlog_first_new(&st->log));
  if (!rc) {
    if (st->nfresh > 1) qsort(st->fresh_dead, (size_t)st->nfresh, sizeof *st->fresh_dead, cmp_i64);
    put_positions(out, st->fresh_dead, st->nfresh);
    mark_base(st);
  }
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* The version byte of a blob: 1 (the rows whole, none dead) or this one. */
static int read_head(dp_op *op, dp_rd *in, uint8_t *version) {
  sort_state *st = op->state;
  *version = dp_rd_left(in) > 0 ? (uint8_t)in->p[in->pos] : 0;
  int rc = dp_state_check(op, in, *version == 1 ? 1 : SORT_STATE_VERSION);
  if (rc) return rc;
  uint8_t mode = dp_get_u8(in), emitted = dp_get_u8(in);
  if (in->bad || mode != st->mode || emitted > 1)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted_all = emitted;
  return DIPPER_OK;
}

static int restored(dp_op *op) {
  sort_state *st = op->state;
  int rc = grow_dead(st, st->rows->nrows);
  if (rc) return rc;
  st->stale = st->mode == SORT_TIME;
  mark_base(st);
  op->metrics.state_rows = held(st);
  return DIPPER_OK;
}

static int sort_restore(dp_op *op, dp_rd *in) {
  sort_state *st = op->state;
  uint8_t version;
  int rc = read_head(op, in, &version);
  if (rc) return rc;
  dp_batch_clear(st->rows);
  st->ndead = 0;
  if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its rows");
  if ((rc = grow_dead(st, st->rows->nrows))) return rc;
  if (st->rows->nrows > 0) memset(st->dead, 0, (size_t)st->rows->nrows);
  if (version > 1 && (rc = get_positions(in, st)))
    return dp_state_corrupt(op, rc, "the rows it released");
  if (st->mode != SORT_TIME && st->ndead > 0)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "the rows it released");
  return restored(op);
}

static int sort_restore_delta(dp_op *op, dp_rd *in) {
  sort_state *st = op->state;
  uint8_t version;
  int rc = read_head(op, in, &version);
  if (rc) return rc;
  if (version == 1) return dp_state_corrupt(op, DIPPER_CORRUPT, "a delta of version 1");
  int64_t n = st->rows->nrows;
  dp_rowlog_delta d;
  if ((rc = dp_rowlog_load(in, n, &d))) return dp_state_corrupt(op, rc, "the rows it dropped");
  if (d.all || d.ndrop > 0) {
    int64_t *keep = NULL, nkeep = 0;
    rc = dp_rowlog_keep(&d, n, &keep, &nkeep);
    if (!rc) rc = dp_rows_compact(&st->rows, keep, nkeep);
    if (!rc) { /* the dead flags follow their rows */
      int64_t dead = 0;
      for (int64_t i = 0; i < nkeep; i++) dead += st->dead[i] = st->dead[keep[i]];
      if (n > nkeep) memset(st->dead + nkeep, 0, (size_t)(n - nkeep));
      st->ndead = dead;
    }
    free(keep);
  }
  dp_rowlog_delta_free(&d);
  if (rc) return dp_state_corrupt(op, rc, "the rows it dropped");
  if ((rc = dp_rows_load(in, st->rows))) return dp_state_corrupt(op, rc, "its new rows");
  if ((rc = grow_dead(st, st->rows->nrows))) return rc;
  if ((rc = get_positions(in, st))) return dp_state_corrupt(op, rc, "the rows it released");
  if (st->mode != SORT_TIME && st->ndead > 0)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "the rows it released");
  return restored(op);
}

const dp_op_class dp_op_sort = {"Sort",       sort_open,         sort_next,
                                sort_end_batch, sort_close,       sort_save,
                                sort_restore, sort_save_delta,   sort_restore_delta};
