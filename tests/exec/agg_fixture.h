/*
** agg_fixture.h — drives the window and aggregate operators directly, below
** the driver: SQL compiled to a plan, a hand-made dp_exec, and a feed
** operator standing in for the scan that hands over prepared batches, one
** micro-batch at a time.  Shared by window_test.c and aggregate_test.c.
*/
#ifndef DP_AGG_FIXTURE_H
#define DP_AGG_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "exec/exec.h"
#include "test.h"

typedef struct feed_state {
  dp_batch *pending; /* handed over at the next call, then NULL */
  bool given;
} feed_state;

static int feed_open(dp_op *op) {
  (void)op;
  return DIPPER_OK;
}
static int feed_next(dp_op *op, dp_batch **out) {
  feed_state *f = op->state;
  *out = f->given ? NULL : f->pending;
  f->given = true;
  return DIPPER_OK;
}
static const dp_op_class feed_class = {"Feed", feed_open, feed_next, NULL, NULL};

typedef struct fixture {
  dipper *db;
  dipper_program *prog;
  dp_arena *arena;
  dp_diags diags;
  dp_exec ex;
  dp_op feed, *ops[4];
  int nops;
  feed_state fs;
  dp_op *top;
  const dp_plan *input; /* the node whose schema the feed produces */
  int64_t ran_watermark; /* the watermark the last step ran under: the next
                            step's late_watermark, as the driver sets it */
} fixture;

static inline const dp_plan *find_kind(const dp_plan *p, dp_plan_kind k) {
  if (!p) return NULL;
  if (p->kind == k) return p;
  for (int i = 0; i < p->ninputs; i++) {
    const dp_plan *q = find_kind(p->inputs[i], k);
    if (q) return q;
  }
  return NULL;
}

/* Compile `ddl` then `query` (the last statement); build ops from the topmost
** node of kind `top` down to (not including) the first node of kind `below`,
** which the feed replaces. */
static bool fixture_open(fixture *fx, const char *sql, dp_plan_kind top, dp_plan_kind below, unsigned mode) {
  memset(fx, 0, sizeof *fx);
  if (dipper_open(&fx->db, NULL) != DIPPER_OK) return false;
  if (dipper_compile(fx->db, sql, (size_t)-1, "test.sql", &fx->prog) != DIPPER_OK) {
    fprintf(stderr, "compile failed: %s\n", dipper_errmsg(fx->db));
    return false;
  }
  const dp_query_plan *q = &fx->prog->stmts[fx->prog->n - 1].plan;
  fx->arena = dp_arena_new(0);
  dp_diags_init(&fx->diags, fx->arena, "test", NULL, 0);
  fx->ex.query = q;
  fx->ex.root = q->roots[0];
  fx->ex.arena = dp_arena_new(0);
  fx->ex.batch_arena = dp_arena_new(0);
  fx->ex.diags = &fx->diags;
  fx->ex.watermark = DP_WATERMARK_NONE;
  fx->ex.late_watermark = DP_WATERMARK_NONE;
  fx->ran_watermark = DP_WATERMARK_NONE;
  fx->ex.output_mode = mode;
  static int64_t maxes[8];
  for (int i = 0; i < 8; i++) maxes[i] = DP_WATERMARK_NONE;
  fx->ex.max_event_time = maxes;
  const dp_plan *t = find_kind(q->roots[0], top);
  const dp_plan *chain[4];
  int n = 0;
  for (const dp_plan *p = t; p && p->kind != below && n < 4; p = p->inputs[0]) chain[n++] = p;
  fx->input = find_kind(t, below);
  fx->feed.cls = &feed_class;
  fx->feed.ex = &fx->ex;
  fx->feed.state = &fx->fs;
  fx->fs.given = true;
  dp_op *child = &fx->feed;
  for (int i = n - 1; i >= 0; i--) {
    dp_op *op = calloc(1, sizeof *op);
    op->plan = chain[i];
    op->ex = &fx->ex;
    op->nchildren = 1;
    op->children = calloc(1, sizeof *op->children);
    op->children[0] = child;
    op->cls = chain[i]->kind == DP_P_WINDOW ? &dp_op_window : &dp_op_aggregate;
    if (chain[i]->kind != DP_P_WINDOW && chain[i]->kind != DP_P_AGGREGATE) return false;
    if (op->cls->open(op) != DIPPER_OK) {
      fprintf(stderr, "open failed: %s\n", fx->diags.count ? fx->diags.items[0].message : "?");
      free(op->children);
      free(op);
      return false;
    }
    fx->ops[fx->nops++] = op;
    child = op;
  }
  fx->top = child;
  return fx->nops > 0;
}

/* One micro-batch: rows given as (c0, c1, c2) triples of int64 for the
** feed's first three columns (BIGINT, BIGINT, TIMESTAMP µs); `INT64_MIN` in
** a cell makes it NULL.  Returns the top operator's output (borrowed), or
** NULL when it emitted nothing. */
static dp_batch *fixture_step(fixture *fx, const int64_t *cells, int nrows, bool final) {
  dp_batch *in = dp_batch_new(&fx->input->schema, 0);
  for (int r = 0; r < nrows; r++)
    for (int c = 0; c < in->ncols; c++) {
      int64_t x = c < 3 ? cells[r * 3 + c] : 0;
      if (x == INT64_MIN)
        dp_vector_append_null(in->cols[c]);
      else
        dp_vector_append_i64(in->cols[c], x);
    }
  dp_batch_sync(in);
  dp_batch_free(fx->fs.pending);
  fx->fs.pending = in;
  fx->fs.given = false;
  fx->ex.final = final;
  if (final) fx->ex.watermark = DP_WATERMARK_END;
  fx->ex.late_watermark = fx->ran_watermark;
  fx->ran_watermark = fx->ex.watermark;
  dp_batch *out = NULL;
  if (fx->top->cls->next(fx->top, &out) != DIPPER_OK) {
    fprintf(stderr, "next failed: %s\n", fx->diags.count ? fx->diags.items[0].message : "?");
    return NULL;
  }
  dp_batch *none = NULL;
  if (out && fx->top->cls == &dp_op_aggregate) {
    /* The operator signals the end of the micro-batch with NULL; the
    ** output stays valid (it is borrowed until the next call, which the
    ** aggregate answers without touching it). */
    CHECK(fx->top->cls->next(fx->top, &none) == DIPPER_OK && none == NULL);
  }
  for (int i = 0; i < fx->nops; i++)
    if (fx->ops[i]->cls->end_batch) fx->ops[i]->cls->end_batch(fx->ops[i]);
  fx->ex.batch_id++;
  return out;
}

static void fixture_close(fixture *fx) {
  for (int i = fx->nops - 1; i >= 0; i--) {
    fx->ops[i]->cls->close(fx->ops[i]);
    free(fx->ops[i]->children);
    free(fx->ops[i]);
  }
  dp_batch_free(fx->fs.pending);
  dp_arena_free(fx->ex.arena);
  dp_arena_free(fx->ex.batch_arena);
  dp_arena_free(fx->arena);
  dipper_program_free(fx->prog);
  dipper_close(fx->db);
}

#define SEC(x) ((int64_t)(x) * 1000000)

static inline int64_t cell_i64(const dp_batch *b, int col, int64_t row) { return dp_vector_get_i64(b->cols[col], row); }

/* The row of b whose first columns equal key[0..nkey), or -1. */
static inline int64_t find_row(const dp_batch *b, const int64_t *key, int nkey) {
  for (int64_t r = 0; b && r < b->nrows; r++) {
    bool ok = true;
    for (int c = 0; c < nkey && ok; c++) ok = cell_i64(b, c, r) == key[c];
    if (ok) return r;
  }
  return -1;
}

#endif /* DP_AGG_FIXTURE_H */
