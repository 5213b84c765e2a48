/*
** exchange.c — EXCHANGE, between a stateful operator and its input on each
** worker of a parallel query (parallel.h): every row goes to the worker
** that owns its key, so that each key's state lives on one worker.
**
** The key: the columns the operator keeps state by — an aggregation's
** GROUP BY columns (those that are plain columns of its input: a subset of
** the key still keeps every group on one worker), all columns for
** DISTINCT, the deduplication's keys, the Top-N's PARTITION BY, and each
** side of a join by its equi-join keys.  A row's
** owner is a hash of its key, remixed so that the owner's share of keys
** does not cluster in the operator's own hash table, which hashes the same
** columns.  No key (a Top-N over everything): every row goes to worker 0.
**
** Sending is driven by the worker (run_worker in parallel.c), not by the
** operator above pulling: the exchange's input is drained into the slots
** [me → d] and the barrier follows.  next() then hands out the slots
** [s → me], worker 0's first: the rows of each key come in the order of
** the source, as on one thread.
*/
#include <stdlib.h>
#include <string.h>

#include "exec/changelog.h"
#include "exec/par_int.h"
#include "exec/rows.h"

typedef struct exch_state {
  par_exchange *sh;
  int me, n;
  int nkeys;
  const int *keys;      /* key columns of the input (the point's) */
  const dp_vector **cols;
  int64_t *dest, *order;/* per row of an input batch: its owner; rows by owner */
  int64_t cap;
  int64_t count[DP_PAR_MAX_WORKERS + 1];
  int next_sender, next_chunk; /* next() hands out this chunk of slot[next_sender → me] */
} exch_state;

static int owner(uint64_t h, int n) {
  h ^= h >> 33;
  h *= UINT64_C(0xff51afd7ed558ccd);
  h ^= h >> 33;
  return (int)(((h >> 32) * (uint64_t)n) >> 32);
}

/* The key columns of stateful `p` over its input `in` (malloc'd, *n of them). */
static int key_columns(const dp_plan *p, const dp_plan *in, int **keys, int *n) {
  *n = 0;
  int cap = in->schema.ncols;
  int *k = *keys = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *k);
  if (!k) return DIPPER_NOMEM;
  switch (p->kind) {
  case DP_P_AGGREGATE:
    for (int i = 0; i < p->u.aggregate.ngroup; i++) {
      const dp_expr *e = p->u.aggregate.group[i];
      if (e->kind == DP_E_COLUMN && e->u.column.outer == 0 && *n < cap) k[(*n)++] = e->u.column.index;
    }
    break;
  case DP_P_DISTINCT:
    for (int i = 0; i < cap; i++) k[(*n)++] = i;
    break;
  case DP_P_DEDUPLICATE:
    for (int i = 0; i < p->u.dedup.nkeys && i < cap; i++) k[(*n)++] = p->u.dedup.keys[i];
    break;
  case DP_P_TOPN:
    for (int i = 0; i < p->u.topn.npartition && i < cap; i++) k[(*n)++] = p->u.topn.partition[i];
    break;
  default:
    return DIPPER_INTERNAL;
  }
  return DIPPER_OK;
}

static bool wants_exchange(dp_plan_kind k) {
  return k == DP_P_AGGREGATE || k == DP_P_DISTINCT || k == DP_P_DEDUPLICATE || k == DP_P_TOPN;
}

/* Keys over the output of `p` (filter, watermark, projection) traced to its
** input, in place; those a projection computes are dropped (a subset of the
** key still keeps each key on one worker).  false: p is none of those. */
static bool trace_keys(const dp_plan *p, int *keys, int *n) {
  int kept = 0;
  switch (p->kind) {
  case DP_P_FILTER: case DP_P_WATERMARK:
    return true;
  case DP_P_WINDOW: /* its input's columns, then the three window columns */
    for (int i = 0; i < *n; i++)
      if (keys[i] < p->inputs[0]->schema.ncols) keys[kept++] = keys[i];
    *n = kept;
    return true;
  case DP_P_PROJECT:
    for (int i = 0; i < *n; i++) {
      const dp_expr *e = keys[i] < p->u.project.n ? p->u.project.exprs[keys[i]] : NULL;
      if (e && e->kind == DP_E_COLUMN && e->u.column.outer == 0) keys[kept++] = e->u.column.index;
    }
    *n = kept;
    return true;
  default:
    return false;
  }
}

static int add_point(dp_par *par, const dp_plan *node, int child, int *keys, int n) {
  for (int i = 0; i < par->npoints; i++)
    if (par->points[i].node == node && par->points[i].child == child) { /* read twice */
      bool same = par->points[i].nkeys == n && memcmp(par->points[i].keys, keys, (size_t)n * sizeof *keys) == 0;
      free(keys);
      return same ? DIPPER_OK : DIPPER_UNSUPPORTED;
    }
  if (par->npoints == par->cappoints) {
    int cap = par->cappoints ? 2 * par->cappoints : 4;
    par_point *grown = realloc(par->points, (size_t)cap * sizeof *grown);
    if (!grown) {
      free(keys);
      return DIPPER_NOMEM;
    }
    par->points = grown;
    par->cappoints = cap;
  }
  par->points[par->npoints++] = (par_point){node, child, keys, n};
  return DIPPER_OK;
}

/* Where the exchange of stateful `s` goes: below the lowest WINDOW of the
** chain of filters, projections and windows under it whose input still has
** a key column (a HOP window repeats each row size/slide times: fewer rows
** cross the exchange below it), else right under s. */
static int place_exchange(dp_par *par, const dp_plan *s) {
  const dp_plan *in = s->inputs[0];
  int *keys, n;
  int rc = key_columns(s, in, &keys, &n);
  if (rc) {
    free(keys);
    return rc;
  }
  int *trace = malloc((size_t)(n > 0 ? n : 1) * sizeof *trace);
  if (!trace) {
    free(keys);
    return DIPPER_NOMEM;
  }
  memcpy(trace, keys, (size_t)n * sizeof *keys);
  int tn = n;
  const dp_plan *below = NULL; /* the window whose input gets the exchange */
  for (const dp_plan *p = in; n > 0 && p->ninputs == 1 && trace_keys(p, trace, &tn) && tn > 0;
       p = p->inputs[0]) {
    if (p->kind != DP_P_WINDOW) continue;
    below = p;
    memcpy(keys, trace, (size_t)tn * sizeof *keys);
    n = tn;
  }
  free(trace);
  rc = below ? add_point(par, below, 0, keys, n) : DIPPER_UNSUPPORTED;
  if (rc != DIPPER_UNSUPPORTED) return rc;
  if (below && (rc = key_columns(s, in, &keys, &n)) != DIPPER_OK) {
    free(keys);
    return rc;
  }
  return add_point(par, s, 0, keys, n);
}

/* A join's two exchanges: each side by its equi-join keys, in key order,
** so that equal keys (of equal types: dp_par_refusal) meet on one worker. */
static int place_join(dp_par *par, const dp_plan *j) {
  for (int side = 0; side < 2; side++) {
    int n = j->u.join.nkeys;
    int *keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
    if (!keys) return DIPPER_NOMEM;
    memcpy(keys, side ? j->u.join.right_keys : j->u.join.left_keys, (size_t)n * sizeof *keys);
    int rc = add_point(par, j, side, keys, n);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

int dp_par_place_exchanges(dp_par *par, const dp_plan *p) {
  for (int i = 0; i < p->ninputs; i++) {
    int rc = dp_par_place_exchanges(par, p->inputs[i]);
    if (rc) return rc;
  }
  if (p->kind == DP_P_JOIN) return place_join(par, p);
  if (!wants_exchange(p->kind)) return DIPPER_OK;
  int rc = place_exchange(par, p);
  return rc == DIPPER_UNSUPPORTED ? DIPPER_INTERNAL : rc;
}

/* The shared slots of the k-th exchange: made by the first worker built. */
static par_exchange *shared_exchange(dp_par *par, int k) {
  if (k < par->nexchanges) return par->exchanges[k];
  if (k != par->nexchanges) return NULL;
  if (par->nexchanges == par->capexchanges) {
    int cap = par->capexchanges ? 2 * par->capexchanges : 4;
    par_exchange **grown = realloc(par->exchanges, (size_t)cap * sizeof *grown);
    if (!grown) return NULL;
    par->exchanges = grown;
    par->capexchanges = cap;
  }
  par_exchange *x = calloc(1, sizeof *x);
  if (x) x->slot = calloc((size_t)par->n * (size_t)par->n, sizeof *x->slot);
  if (!x || !x->slot) {
    free(x);
    return NULL;
  }
  par->exchanges[par->nexchanges++] = x;
  return x;
}

void dp_par_exchanges_free(dp_par *par) {
  for (int k = 0; k < par->nexchanges; k++) {
    par_exchange *x = par->exchanges[k];
    for (int i = 0; i < par->n * par->n; i++) {
      for (int c = 0; c < x->slot[i].cap; c++) dp_batch_free(x->slot[i].chunks[c]);
      free(x->slot[i].chunks);
    }
    free(x->slot);
    free(x);
  }
  free(par->exchanges);
  par->exchanges = NULL;
  par->nexchanges = par->capexchanges = 0;
  for (int i = 0; i < par->npoints; i++) free(par->points[i].keys);
  free(par->points);
  par->points = NULL;
  par->npoints = par->cappoints = 0;
}

static int grow_rows(exch_state *x, int64_t n) {
  if (n <= x->cap) return DIPPER_OK;
  int64_t cap = x->cap ? x->cap : 4096;
  while (cap < n) cap *= 2;
  int64_t *dest = realloc(x->dest, (size_t)cap * sizeof *dest);
  if (!dest) return DIPPER_NOMEM;
  x->dest = dest;
  int64_t *order = realloc(x->order, (size_t)cap * sizeof *order);
  if (!order) return DIPPER_NOMEM;
  x->order = order;
  x->cap = cap;
  return DIPPER_OK;
}

/* The chunk of `slot` the next rows go to: the last one while it has
** room, else a new (or kept) one. */
static int room(par_slot *slot, const dp_schema *schema, int64_t want, dp_batch **out) {
  if (slot->n > 0 && slot->chunks[slot->n - 1]->nrows < PAR_CHUNK_ROWS) {
    *out = slot->chunks[slot->n - 1];
    return (*out)->schema == schema ? DIPPER_OK : DIPPER_INTERNAL;
  }
  if (slot->n == slot->cap) {
    int cap = slot->cap ? 2 * slot->cap : 8;
    dp_batch **grown = realloc(slot->chunks, (size_t)cap * sizeof *grown);
    if (!grown) return DIPPER_NOMEM;
    memset(grown + slot->cap, 0, (size_t)(cap - slot->cap) * sizeof *grown);
    slot->chunks = grown;
    slot->cap = cap;
  }
  dp_batch **c = &slot->chunks[slot->n];
  if (*c && (*c)->schema != schema) {
    dp_batch_free(*c);
    *c = NULL;
  }
  /* Sized for what comes now, not a whole chunk: at N workers there are N²
  ** slots, most holding a few rows per batch; the vectors grow as needed. */
  int64_t cap = want < PAR_CHUNK_ROWS ? want : PAR_CHUNK_ROWS;
  if (!*c && !(*c = dp_batch_new(schema, cap))) return DIPPER_NOMEM;
  dp_batch_clear(*c);
  slot->n++;
  *out = *c;
  return DIPPER_OK;
}

/* One input batch to the slots [me → d]: rows grouped by owner, each
** owner's in their order (a counting sort). */
static int send_batch(exch_state *x, const dp_batch *b) {
  int rc = grow_rows(x, b->nrows);
  if (rc) return rc;
  int n = x->n;
  memset(x->count, 0, sizeof x->count);
  for (int c = 0; c < x->nkeys; c++) x->cols[c] = b->cols[x->keys[c]];
  for (int64_t r = 0; r < b->nrows; r++) {
    int d = x->nkeys ? owner(dp_rows_hash(x->cols, x->nkeys, r), n) : 0;
    x->dest[r] = d;
    x->count[d + 1]++;
  }
  for (int d = 0; d < n; d++) x->count[d + 1] += x->count[d];
  int64_t pos[DP_PAR_MAX_WORKERS];
  memcpy(pos, x->count, (size_t)n * sizeof *pos);
  for (int64_t r = 0; r < b->nrows; r++) x->order[pos[x->dest[r]]++] = r;
  for (int d = 0; d < n; d++)
    for (int64_t at = x->count[d]; at < x->count[d + 1];) {
      dp_batch *chunk = NULL;
      rc = room(&x->sh->slot[x->me * n + d], b->schema, x->count[d + 1] - at, &chunk);
      if (rc != DIPPER_OK) return rc;
      int64_t len = x->count[d + 1] - at, free_rows = PAR_CHUNK_ROWS - chunk->nrows;
      if (len > free_rows) len = free_rows;
      if ((rc = dp_par_take(chunk, b, x->order, at, len)) != DIPPER_OK) return rc;
      at += len;
    }
  return DIPPER_OK;
}

/* dst's kinds made as long as its rows (insertions for rows that had none). */
static int kinds_to(dp_batch *dst, int64_t rows) {
  if (!dst->change && !(dst->change = dp_vector_new(dp_type_of(DP_T_TINYINT), rows)))
    return DIPPER_NOMEM;
  if (dst->change->length > rows) return DIPPER_INTERNAL;
  while (dst->change->length < rows) {
    int rc = dp_vector_append_i64(dst->change, DP_CHANGE_INSERT);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

int dp_par_take(dp_batch *dst, const dp_batch *src, const int64_t *sel, int64_t start, int64_t n) {
  int64_t before = dst->nrows;
  int rc = dp_batch_take(dst, src, sel, start, n);
  if (rc || n <= 0 || (!src->change && !dst->change)) return rc;
  if (!src->change) return kinds_to(dst, dst->nrows);
  if ((rc = kinds_to(dst, before))) return rc;
  return dp_vector_take(dst->change, src->change, sel, start, n);
}

int dp_par_exchange_send(dp_op *op) {
  exch_state *x = op->state;
  dp_op *child = op->children[0];
  for (;;) {
    dp_batch *b = NULL;
    int rc = child->cls->next(child, &b);
    if (rc != DIPPER_OK) return rc;
    if (!b) return DIPPER_OK;
    op->metrics.rows_in += b->nrows;
    if (b->nrows > 0 && (rc = send_batch(x, b)) != DIPPER_OK) return rc;
  }
}

static int exch_open(dp_op *op) {
  (void)op;
  return DIPPER_OK;
}

static int exch_next(dp_op *op, dp_batch **out) {
  exch_state *x = op->state;
  *out = NULL;
  while (x->next_sender < x->n) {
    const par_slot *slot = &x->sh->slot[x->next_sender * x->n + x->me];
    if (x->next_chunk < slot->n) {
      dp_batch *b = slot->chunks[x->next_chunk++];
      op->metrics.rows_out += b->nrows;
      *out = b;
      return DIPPER_OK;
    }
    x->next_sender++;
    x->next_chunk = 0;
  }
  return DIPPER_OK;
}

/* Every worker has ended the micro-batch: the slots sent to me are free. */
static int exch_end_batch(dp_op *op) {
  exch_state *x = op->state;
  for (int s = 0; s < x->n; s++) x->sh->slot[s * x->n + x->me].n = 0; /* kept, cleared when reused */
  x->next_sender = x->next_chunk = 0;
  return DIPPER_OK;
}

static void exch_close(dp_op *op) {
  exch_state *x = op->state;
  if (!x) return;
  free(x->dest);
  free(x->order);
  free(x);
  op->state = NULL;
}

static const dp_op_class exchange_class = {
    .name = "Exchange",
    .open = exch_open,
    .next = exch_next,
    .end_batch = exch_end_batch,
    .close = exch_close,
};

bool dp_par_is_exchange(const dp_op *op) { return op->cls == &exchange_class; }

/* An exchange over `child` on worker ex->worker, the worker's k-th. */
static int build_exchange(dp_exec *ex, const par_point *pt, dp_op *child, dp_op **out) {
  par_worker *w = &ex->par->w[ex->worker];
  int k = w->nexch;
  if (w->nexch == w->capexch) {
    int cap = w->capexch ? 2 * w->capexch : 4;
    dp_op **grown = realloc(w->exch, (size_t)cap * sizeof *grown);
    if (!grown) return DIPPER_NOMEM;
    w->exch = grown;
    w->capexch = cap;
  }
  par_exchange *sh = shared_exchange(ex->par, k);
  if (!sh) return ex->worker > 0 && k >= ex->par->nexchanges ? DIPPER_INTERNAL : DIPPER_NOMEM;
  dp_op *op = dp_arena_calloc(ex->arena, 1, sizeof *op);
  dp_op **children = dp_arena_calloc(ex->arena, 1, sizeof *children);
  exch_state *x = calloc(1, sizeof *x);
  if (!op || !children || !x) {
    free(x);
    return DIPPER_NOMEM;
  }
  x->keys = pt->keys;
  x->nkeys = pt->nkeys;
  x->cols = dp_arena_calloc(ex->arena, (size_t)(x->nkeys ? x->nkeys : 1), sizeof *x->cols);
  if (!x->cols) {
    free(x);
    return DIPPER_NOMEM;
  }
  x->sh = sh;
  x->me = ex->worker;
  x->n = ex->nworkers;
  children[0] = child;
  op->cls = &exchange_class;
  op->plan = child->plan;
  op->ex = ex;
  op->nchildren = 1;
  op->children = children;
  op->state = x;
  w->exch[w->nexch++] = op;
  *out = op;
  return DIPPER_OK;
}

int dp_par_wrap_inputs(dp_exec *ex, dp_op *op) {
  if (ex->worker < 0 || ex->nworkers < 2) return DIPPER_OK;
  const dp_par *par = ex->par;
  for (int i = 0; i < par->npoints; i++) {
    const par_point *pt = &par->points[i];
    if (pt->node != op->plan || pt->child >= op->nchildren) continue;
    dp_op *wrapped = NULL;
    int rc = build_exchange(ex, pt, op->children[pt->child], &wrapped);
    if (rc) return rc;
    op->children[pt->child] = wrapped;
  }
  return DIPPER_OK;
}
