/*
** subquery.c — the subqueries left in expressions, run once per query run.
**
** The binder turns most subqueries into joins (bind_from.c, bind_query.c).
** What reaches the evaluator is an uncorrelated subquery in any other place:
** a scalar subquery that may return several rows, EXISTS that is not a
** WHERE conjunct, IN under OR or in the select list, NOT IN (always: its
** NULL rule is kept here).  Each such subquery is run once, the first time a
** batch needs it, to the end of its input — its own small batch-mode run
** beside the query, on a separate operator tree — and its result is kept in
** the query's dp_subq_cache until the query ends:
**   - SCALAR: the one value, NULL when the subquery gave no row; more than
**     one row is a DIPPER_DATA error at the subquery;
**   - EXISTS: whether a row came (the run stops at the first one);
**   - IN: the distinct non-NULL values in a hash table, and whether a NULL
**     was among them, so that `x IN (..)` is one probe per row and gives
**     SQL's answer: TRUE when found; else NULL when x is NULL or the list
**     held a NULL; else FALSE; an empty list gives FALSE for any x.
**
** Owns: dp_subq_cache (freed by dp_exec_free) and the run of a subquery's
** plan.  Does not own: which subqueries become joins (the binder), the
** compile-time refusals (validate.c), or the correlated ones, which never
** get here (exec.c refuses them when a query starts).
**
** In streaming mode the subquery reads a bounded input (validate.c refuses
** the others), so "once per run" is its complete answer, as in batch mode.
*/
#include <stdlib.h>
#include <string.h>

#include "exec/eval_int.h"
#include "exec/exec_int.h"
#include "exec/hashtable.h"
#include "plan/analyze.h"

typedef struct subq_result {
  const dp_expr *e;   /* the DP_E_SUBQUERY node: the plan is immutable, its address the key */
  dp_vector *value;   /* SCALAR: one row (NULL when the subquery gave none) */
  bool any;           /* EXISTS: a row came; IN: the list is not empty */
  bool saw_null;      /* IN: a NULL was among the values */
  bool has_set;
  dp_hashtable set;   /* IN: the distinct non-NULL values */
} subq_result;

struct dp_subq_cache {
  int n, cap;
  subq_result *items;
};

void dp_subq_cache_free(dp_subq_cache *cache) {
  if (!cache) return;
  for (int i = 0; i < cache->n; i++) {
    dp_vector_free(cache->items[i].value);
    if (cache->items[i].has_set) dp_ht_free(&cache->items[i].set);
  }
  free(cache->items);
  free(cache);
}

/* ---- running the plan ---- */

/* What the run does with each batch of the subquery's output. */
typedef struct collect {
  dp_ev *c;
  const dp_expr *e;
  subq_result *r;
  int64_t rows;
  uint64_t *hashes;   /* IN: scratch, `cap` rows */
  int64_t *sel, *ids;
  int64_t cap;
} collect;

static int grow_scratch(collect *k, int64_t n) {
  if (n <= k->cap) return DIPPER_OK;
  free(k->hashes);
  free(k->sel);
  free(k->ids);
  k->hashes = malloc((size_t)n * sizeof *k->hashes);
  k->sel = malloc((size_t)n * sizeof *k->sel);
  k->ids = malloc((size_t)n * sizeof *k->ids);
  k->cap = k->hashes && k->sel && k->ids ? n : 0;
  return k->cap ? DIPPER_OK : DIPPER_NOMEM;
}

/* IN: add the non-NULL values of col (of the probe's type) to the set. */
static int add_values(collect *k, const dp_vector *col, int64_t n) {
  subq_result *r = k->r;
  int rc = grow_scratch(k, n);
  if (rc) return rc;
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    if (dp_vector_is_null(col, i))
      r->saw_null = true;
    else
      k->sel[m++] = i;
  }
  if (m == 0) return DIPPER_OK;
  const dp_vector *cols[1] = {col};
  dp_ht_hash(cols, 1, n, k->hashes);
  rc = dp_ht_find_or_insert(&r->set, cols, k->hashes, k->sel, m, k->ids, NULL);
  if (rc == DIPPER_LIMIT)
    return dp_ev_fail(k->c, k->e, rc, "IN (subquery) holds more distinct values than a hash "
                                      "table takes; join with the subquery instead");
  return rc;
}

static int take_batch(collect *k, const dp_batch *b, bool *stop) {
  subq_result *r = k->r;
  const dp_expr *e = k->e;
  int64_t n = b->nrows;
  if (n == 0) return DIPPER_OK;
  k->rows += n;
  switch (e->u.subquery.kind) {
  case DP_SUBQ_EXISTS:
    r->any = true;
    *stop = true;
    return DIPPER_OK;
  case DP_SUBQ_SCALAR:
    if (r->value) return DIPPER_OK; /* counting the rows for the error */
    if (!(r->value = dp_ev_new(e->type, 1))) return DIPPER_NOMEM;
    return dp_vector_append_from(r->value, b->cols[0], 0);
  case DP_SUBQ_IN: {
    r->any = true;
    const dp_type *want = e->u.subquery.arg->type;
    const dp_vector *col = b->cols[0];
    if (dp_type_equal(col->type, want)) return add_values(k, col, n);
    /* The binder cast the left side to the common type; the list follows. */
    dp_ev_arg a = {b->cols[0], false, false};
    dp_vector *cast = NULL;
    int rc = dp_ev_cast(k->c, e, &a, want, false, n, &cast);
    if (rc) return rc;
    rc = add_values(k, cast, n);
    dp_vector_free(cast);
    return rc;
  }
  }
  return DIPPER_INTERNAL;
}

typedef struct inputs_ctx {
  int rc;
  bool commit;
} inputs_ctx;

/* Plan every input to its end (batch mode), or commit what was read. */
static void visit_input(dp_op *op, void *user) {
  inputs_ctx *x = user;
  if (x->rc) return;
  bool data = false, ended = false;
  if (op->cls == &dp_op_scan)
    x->rc = x->commit ? dp_scan_commit(op) : dp_scan_plan(op, 0, true, &data, &ended);
  else if (op->cls == &dp_op_values && !x->commit)
    x->rc = dp_values_plan(op, &data, &ended);
}

/* A batch-mode run of the subquery's plan beside the running query: its own
** operator tree and arenas, the query's handle (memory tables, callbacks),
** diagnostics and clock.  The final batch at once, so that every operator
** gives its complete answer. */
static int run_plan(collect *k) {
  dp_exec *ex = k->c->ex;
  const dp_plan *plan = k->e->u.subquery.plan;
  dp_span nowhere = {0, 0, 0, 0};
  if (!ex || !ex->query)
    return dp_ev_fail(k->c, k->e, DIPPER_INTERNAL, "a subquery was evaluated outside a query");
  dp_exec *sub = calloc(1, sizeof *sub);
  if (!sub) return DIPPER_NOMEM;
  sub->db = ex->db;
  sub->root = plan;
  sub->diags = ex->diags;
  sub->arena = dp_arena_new(0);
  sub->batch_arena = dp_arena_new(0);
  dp_query_plan *q = sub->arena ? dp_arena_alloc(sub->arena, sizeof *q) : NULL;
  int nwm = ex->query->nwatermarks > 0 ? ex->query->nwatermarks : 1;
  sub->max_event_time = sub->arena ? dp_arena_alloc(sub->arena, (size_t)nwm * sizeof(int64_t)) : NULL;
  if (!q || !sub->batch_arena || !sub->max_event_time) {
    dp_exec_free(sub);
    return dp_error(ex->diags, DIPPER_NOMEM, nowhere, "out of memory running a subquery");
  }
  *q = *ex->query;
  q->streaming = false;
  sub->query = q;
  for (int i = 0; i < nwm; i++) sub->max_event_time[i] = DP_WATERMARK_NONE;
  sub->watermark = sub->late_watermark = DP_WATERMARK_NONE;
  sub->output_mode = dp_analyze_output_mode(q, plan);
  sub->final = true;
  sub->trigger.kind = DP_TRIGGER_DEFAULT;
  sub->batch_start_time = ex->batch_start_time; /* CURRENT_TIMESTAMP as in the query */

  int rc = dp_op_build(sub, plan, &sub->root_op);
  inputs_ctx x = {DIPPER_OK, false};
  if (rc == DIPPER_OK) {
    dp_op_walk(sub->root_op, visit_input, &x);
    rc = x.rc;
  }
  bool stop = false;
  while (rc == DIPPER_OK && !stop) {
    dp_batch *b = NULL;
    rc = sub->root_op->cls->next(sub->root_op, &b);
    if (rc != DIPPER_OK || !b) break;
    rc = take_batch(k, b, &stop);
  }
  if (rc == DIPPER_OK && !stop) {
    x.commit = true;
    dp_op_walk(sub->root_op, visit_input, &x);
    rc = x.rc;
  }
  dp_exec_free(sub);
  return rc;
}

/* The cached result of e, running it the first time. */
static int result_of(dp_ev *c, const dp_expr *e, subq_result **out) {
  dp_exec *ex = c->ex;
  *out = NULL;
  if (!ex) return dp_ev_fail(c, e, DIPPER_INTERNAL, "a subquery was evaluated outside a query");
  dp_subq_cache *cache = ex->subqueries;
  if (cache)
    for (int i = 0; i < cache->n; i++)
      if (cache->items[i].e == e) {
        *out = &cache->items[i];
        return DIPPER_OK;
      }
  if (!cache && !(cache = ex->subqueries = calloc(1, sizeof *cache))) return DIPPER_NOMEM;
  if (cache->n == cache->cap) {
    int cap = cache->cap ? 2 * cache->cap : 4;
    subq_result *g = realloc(cache->items, (size_t)cap * sizeof *g);
    if (!g) return DIPPER_NOMEM;
    cache->items = g;
    cache->cap = cap;
  }
  subq_result r;
  memset(&r, 0, sizeof r);
  r.e = e;
  if (e->u.subquery.kind == DP_SUBQ_IN) {
    const dp_type *kt = e->u.subquery.arg->type;
    if (dp_ht_init(&r.set, 1, &kt) != DIPPER_OK) return DIPPER_NOMEM;
    r.has_set = true;
  }
  collect k = {c, e, &r, 0, NULL, NULL, NULL, 0};
  int rc = run_plan(&k);
  free(k.hashes);
  free(k.sel);
  free(k.ids);
  if (rc == DIPPER_OK && e->u.subquery.kind == DP_SUBQ_SCALAR) {
    if (k.rows > 1)
      rc = dp_ev_data_error(c, e,
                            "the scalar subquery returned %lld rows; a subquery used as a value "
                            "must return at most one: aggregate it (MAX(..)), add LIMIT 1, or "
                            "join with it instead",
                            (long long)k.rows);
    else if (!r.value && (!(r.value = dp_ev_new(e->type, 1)) || dp_vector_append_null(r.value)))
      rc = DIPPER_NOMEM;
  }
  if (rc != DIPPER_OK) {
    dp_vector_free(r.value);
    if (r.has_set) dp_ht_free(&r.set);
    return rc;
  }
  cache->items[cache->n] = r;
  *out = &cache->items[cache->n++];
  return DIPPER_OK;
}

/* ---- evaluation ---- */

/* x [NOT] IN (list) for the rows of x: one probe of the set per row. */
static int eval_in(dp_ev *c, const dp_expr *e, const subq_result *r, dp_ev_arg *out) {
  dp_ev_arg x;
  int rc = dp_ev_eval(c, e->u.subquery.arg, &x);
  if (rc) return rc;
  int64_t n = x.is_const ? 1 : c->nrows;
  bool neg = e->u.subquery.negated;
  dp_vector *v = dp_ev_new(e->type, n);
  uint64_t *hashes = r->any ? malloc((size_t)(n ? n : 1) * sizeof *hashes) : NULL;
  if (!v || (r->any && !hashes)) {
    dp_vector_free(v);
    dp_ev_arg_free(&x);
    return DIPPER_NOMEM;
  }
  if (r->any) {
    const dp_vector *cols[1] = {x.v};
    dp_ht_hash(cols, 1, n, hashes);
  }
  for (int64_t i = 0; i < n && rc == DIPPER_OK; i++) {
    if (!r->any) {
      rc = dp_vector_append_bool(v, neg); /* nothing to equal: FALSE, NOT IN: TRUE */
      continue;
    }
    if (dp_vector_is_null(x.v, i)) {
      rc = dp_vector_append_null(v);
      continue;
    }
    const dp_vector *cols[1] = {x.v};
    if (dp_ht_find(&r->set, cols, hashes[i], i) >= 0)
      rc = dp_vector_append_bool(v, !neg);
    else if (r->saw_null)
      rc = dp_vector_append_null(v); /* x = NULL is unknown */
    else
      rc = dp_vector_append_bool(v, neg);
  }
  free(hashes);
  bool is_const = x.is_const;
  dp_ev_arg_free(&x);
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = (dp_ev_arg){v, is_const, true};
  return DIPPER_OK;
}

int dp_ev_subquery(dp_ev *c, const dp_expr *e, dp_ev_arg *out) {
  subq_result *r = NULL;
  int rc = result_of(c, e, &r);
  if (rc) return rc;
  switch (e->u.subquery.kind) {
  case DP_SUBQ_SCALAR:
    *out = (dp_ev_arg){r->value, true, false}; /* lent by the cache for the query's life */
    return DIPPER_OK;
  case DP_SUBQ_EXISTS: {
    dp_vector *v = dp_ev_new(e->type, 1);
    if (!v || dp_vector_append_bool(v, r->any != e->u.subquery.negated)) {
      dp_vector_free(v);
      return DIPPER_NOMEM;
    }
    *out = (dp_ev_arg){v, true, true};
    return DIPPER_OK;
  }
  case DP_SUBQ_IN: return eval_in(c, e, r, out);
  }
  return dp_ev_fail(c, e, DIPPER_INTERNAL, "unknown subquery kind %d", (int)e->u.subquery.kind);
}
