/*
** parallel.c — the workers of a parallel query, their threads, and the
** gather into the one sink (parallel.h).  The exchange before stateful
** operators is exchange.c's; what the two share is par_int.h.
**
** A worker's micro-batch (run_worker): for each exchange of its tree, in
** build order (children before parents, so a lower exchange is complete
** before an upper one sends), drain the exchange's input and send each row
** to the worker owning its key, then wait at the barrier every worker
** reaches after that exchange; then pull the tree's root until the end of
** the batch, copying each batch into the worker's outbox.  Every worker
** passes every barrier, a failed one too (it sends nothing more), so no
** barrier waits for a worker that gave up: the batch then fails whole.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/session.h"
#include "exec/exec_int.h"
#include "exec/par_int.h"
#include "exec/rows.h"

/* ---- which plans run on workers ---- */

static bool subquery_in(const dp_expr *e, void *ud) {
  (void)ud;
  if (!e) return false;
  switch (e->kind) {
  case DP_E_COLUMN: case DP_E_LITERAL: return false;
  case DP_E_SUBQUERY: return true;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (subquery_in(e->u.call.args[i], ud)) return true;
    return false;
  case DP_E_CAST: return subquery_in(e->u.cast.arg, ud);
  case DP_E_FIELD: return subquery_in(e->u.field.arg, ud);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (subquery_in(e->u.case_.whens[i], ud) || subquery_in(e->u.case_.thens[i], ud)) return true;
    return subquery_in(e->u.case_.else_, ud);
  }
  return false;
}

static const char *refuse_node(const dp_plan *p) {
  switch (p->kind) {
  case DP_P_SCAN: {
    const dp_table_def *t = p->u.scan.table;
    const dp_source_class *cls = dp_source_find(t && t->connector ? t->connector : "");
    if (!cls || !cls->split)
      return "a source other than nexmark, datagen, filesystem or kafka cannot be split among "
             "workers yet";
    return NULL;
  }
  case DP_P_PROJECT: case DP_P_FILTER: case DP_P_WATERMARK: case DP_P_WINDOW: case DP_P_UNION:
  case DP_P_UNNEST: case DP_P_SINK:
  case DP_P_DISTINCT: case DP_P_DEDUPLICATE: case DP_P_TOPN:
    return NULL;
  case DP_P_AGGREGATE:
    /* Without GROUP BY every worker would give its own row (COUNT(*) = 0). */
    return p->u.aggregate.ngroup > 0 ? NULL : "an aggregation without GROUP BY runs on one thread";
  case DP_P_JOIN: {
    /* Each side by its equi-join keys: equal keys must hash alike. */
    if (p->u.join.nkeys == 0) return "a join without an equality of keys runs on one thread";
    for (int i = 0; i < p->u.join.nkeys; i++) {
      const dp_type *l = p->inputs[0]->schema.cols[p->u.join.left_keys[i]].type;
      const dp_type *r = p->inputs[1]->schema.cols[p->u.join.right_keys[i]].type;
      if (!dp_type_equal(l, r)) return "a join of keys of two types runs on one thread";
    }
    return NULL;
  }
  case DP_P_VALUES:
    return "VALUES rows are not split among workers yet";
  default:
    return "ORDER BY, LIMIT, a set operation, an AS OF join or an OVER window runs on one "
           "thread so far";
  }
}

static const char *refuse_plan(const dp_plan *p) {
  const char *why = refuse_node(p);
  if (why) return why;
  if (dp_plan_any_expr(p, subquery_in, NULL)) return "a subquery runs on one thread";
  for (int i = 0; i < p->ninputs; i++)
    if ((why = refuse_plan(p->inputs[i])) != NULL) return why;
  return NULL;
}

const char *dp_par_refusal(const dp_query_plan *q, const dp_plan *root) {
  if (q->udfs.n > 0 || q->njava > 0)
    return "a query calling user functions runs on one thread (they are not known to be "
           "thread-safe)";
  return refuse_plan(root);
}

/* ---- building ---- */

int dp_par_count(const dp_par *par) { return par ? par->n : 1; }

dp_exec *dp_par_worker(dp_par *par, int w) { return par->w[w].ex; }

static void collect_inputs(dp_op *op, void *user) {
  par_worker *w = user;
  if (op->cls != &dp_op_scan) return;
  if (w->ninputs == w->capinputs) {
    int cap = w->capinputs ? 2 * w->capinputs : 4;
    dp_op **grown = realloc(w->inputs, (size_t)cap * sizeof *grown);
    if (!grown) {
      w->nomem = true;
      return;
    }
    w->inputs = grown;
    w->capinputs = cap;
  }
  w->inputs[w->ninputs++] = op;
}

static void copy_diags(dp_diags *to, const dp_diags *from) {
  for (int i = 0; i < from->count; i++)
    dp_error(to, from->items[i].code, from->items[i].span, "%s", from->items[i].message);
}

static int run_worker(par_worker *w);

static void *thread_main(void *arg) {
  par_worker *w = arg;
  dp_par *par = w->par;
  int64_t seen = 0;
  pthread_mutex_lock(&par->mu);
  for (;;) {
    while (!par->quit && par->epoch == seen) pthread_cond_wait(&par->go, &par->mu);
    if (par->quit) break;
    seen = par->epoch;
    pthread_mutex_unlock(&par->mu);
    w->rc = run_worker(w);
    pthread_mutex_lock(&par->mu);
    if (--par->pending == 0) pthread_cond_signal(&par->done);
  }
  pthread_mutex_unlock(&par->mu);
  return NULL;
}

static int open_worker(dp_par *par, int i, dipper *db, const dp_query_plan *q,
                       const dp_plan *root, const char *checkpoint) {
  par_worker *w = &par->w[i];
  w->par = par;
  w->index = i;
  w->arena = dp_arena_new(0);
  if (!w->arena) return DIPPER_NOMEM;
  dp_diags_init(&w->diags, w->arena, NULL, NULL, 0);
  int rc = dp_exec_open_part(db, q, root, &w->diags, checkpoint, par, i, &w->ex);
  if (rc) return rc;
  dp_op_walk(w->ex->root_op, collect_inputs, w);
  if (w->nomem) return DIPPER_NOMEM;
  if (i > 0 && (w->ninputs != par->w[0].ninputs || w->nexch != par->w[0].nexch))
    return DIPPER_INTERNAL; /* the same plan built twice differently */
  return DIPPER_OK;
}

int dp_par_new(dipper *db, const dp_query_plan *q, const dp_plan *root, int n,
               const char *checkpoint, dp_diags *d, const char **why, dp_par **out) {
  *out = NULL;
  *why = NULL;
  dp_span nowhere = {0, 0, 0, 0};
  dp_par *par = calloc(1, sizeof *par);
  if (!par) return dp_error(d, DIPPER_NOMEM, nowhere, "out of memory starting %d workers", n);
  *out = par;
  par->n = n;
  par->w = calloc((size_t)n, sizeof *par->w);
  if (!par->w) return dp_error(d, DIPPER_NOMEM, nowhere, "out of memory starting %d workers", n);
  pthread_mutex_init(&par->mu, NULL);
  pthread_cond_init(&par->go, NULL);
  pthread_cond_init(&par->done, NULL);
  pthread_barrier_init(&par->barrier, NULL, (unsigned)n);
  par->sync_ready = true;
  int rc0 = dp_par_place_exchanges(par, root);
  if (rc0) return dp_error(d, rc0, root->span, "cannot place the exchanges of %d workers: %s", n,
                           dipper_strerror(rc0));
  for (int i = 0; i < n; i++) {
    int rc = open_worker(par, i, db, q, root, checkpoint);
    if (rc == DIPPER_UNSUPPORTED && par->why) {
      *why = par->why;
      return rc;
    }
    if (rc) {
      copy_diags(d, &par->w[i].diags);
      if (d->count == 0)
        dp_error(d, rc, root->span, "cannot start worker %d of %d: %s", i, n, dipper_strerror(rc));
      return rc;
    }
  }
  for (int i = 1; i < n; i++) {
    if (pthread_create(&par->w[i].thread, NULL, thread_main, &par->w[i]) != 0)
      return dp_error(d, DIPPER_IO, nowhere, "cannot start the thread of worker %d of %d", i, n);
    par->w[i].started = true;
  }
  return DIPPER_OK;
}

void dp_par_free(dp_par *par) {
  if (!par) return;
  if (par->sync_ready) {
    pthread_mutex_lock(&par->mu);
    par->quit = true;
    pthread_cond_broadcast(&par->go);
    pthread_mutex_unlock(&par->mu);
  }
  for (int i = 0; par->w && i < par->n; i++)
    if (par->w[i].started) pthread_join(par->w[i].thread, NULL);
  for (int i = 0; par->w && i < par->n; i++) {
    par_worker *w = &par->w[i];
    dp_exec_free(w->ex);
    for (int k = 0; k < w->capout; k++) dp_batch_free(w->out[k]);
    free(w->out);
    free(w->inputs);
    free(w->exch);
    dp_arena_free(w->arena);
  }
  dp_par_exchanges_free(par);
  if (par->sync_ready) {
    pthread_mutex_destroy(&par->mu);
    pthread_cond_destroy(&par->go);
    pthread_cond_destroy(&par->done);
    pthread_barrier_destroy(&par->barrier);
  }
  free(par->w);
  free(par);
}

/* ---- a source's split ---- */

int dp_par_split(dp_exec *ex, dp_source *src) {
  dp_par *par = ex->par;
  if (ex->worker < 0) return DIPPER_OK;
  bool replayed = ex->query->streaming;
  const char *why = NULL;
  if (!src->cls->split || (replayed && (!src->cls->save_plan || !src->cls->replay_plan)))
    why = "a source other than nexmark, datagen, filesystem or kafka cannot be split among "
          "workers yet";
  int rc = why ? DIPPER_UNSUPPORTED : src->cls->split(src, ex->worker, ex->nworkers, replayed, &why);
  if (rc == DIPPER_UNSUPPORTED && !par->why) par->why = why ? why : "a source would not split";
  if (rc == DIPPER_OK && src->cls->split_units) par->min_rule = true; /* set at open, read after */
  return rc;
}

/* Every worker's inputs' wake-up descriptors (dp_driver_wait_fds): a
** split's consumer wakes the run when a record of its own partitions comes,
** and worker 0's plan then takes it (its ends are every split's). */
int dp_par_wait_fds(dp_par *par, int *fds, int cap, bool *all) {
  int n = 0;
  *all = true;
  for (int k = 0; k < par->n; k++)
    for (int i = 0; i < par->w[k].ninputs; i++) {
      dp_op *op = par->w[k].inputs[i];
      int fd = op->cls == &dp_op_scan ? dp_scan_wait_fd(op) : -1;
      if (fd < 0)
        *all = false;
      else if (n++ < cap)
        fds[n - 1] = fd;
    }
  return n;
}

/* ---- a micro-batch ---- */

/* Worker 0 plans; the others follow its bounds (streaming) or plan from
** the same position (batch mode: to_end). */
static int plan_one(dp_par *par, int i, int64_t max_rows, bool to_end, bool *has_data,
                    bool *exhausted) {
  dp_buf plan = DP_BUF_INIT;
  int rc = DIPPER_OK;
  for (int k = 0; k < par->n && !rc; k++) {
    dp_op *op = par->w[k].inputs[i];
    if (k > 0 && !to_end) {
      dp_rd rd;
      dp_rd_init(&rd, (const uint8_t *)plan.data, plan.len);
      rc = dp_scan_replay_plan(op, &rd);
      if (rc) break;
    }
    bool data = false, ended = false;
    rc = dp_scan_plan(op, max_rows, to_end, &data, &ended);
    if (k == 0 && !rc && !to_end) {
      rc = dp_scan_save_plan(op, &plan);
      if (!rc && plan.oom) rc = DIPPER_NOMEM;
    }
    if (data) *has_data = true;
    if (!ended) *exhausted = false;
  }
  dp_buf_free(&plan);
  return rc;
}

int dp_par_plan_inputs(dp_par *par, int64_t max_rows, bool to_end, bool *has_data,
                       bool *exhausted, dp_diags *d) {
  *has_data = false;
  *exhausted = true;
  for (int i = 0; i < par->w[0].ninputs; i++) {
    int rc = plan_one(par, i, max_rows, to_end, has_data, exhausted);
    if (rc) {
      for (int k = 0; k < par->n; k++) copy_diags(d, &par->w[k].diags);
      return rc;
    }
  }
  return DIPPER_OK;
}

/* The root's batches of this micro-batch, copied: the borrowed batch is
** gone at the next call, and the sink reads them after every worker ends. */
static int drain_root(par_worker *w) {
  dp_op *root = w->ex->root_op;
  bool own_sink = root->cls == &dp_op_sink; /* it wrote them: nothing to copy */
  w->nout = 0;
  w->sunk = 0;
  for (;;) {
    dp_batch *b = NULL;
    int rc = root->cls->next(root, &b);
    if (rc != DIPPER_OK) return rc;
    if (!b) return DIPPER_OK;
    if (b->nrows == 0) continue;
    if (own_sink) {
      w->sunk += b->nrows;
      continue;
    }
    if (w->nout == w->capout) {
      int cap = w->capout ? 2 * w->capout : 8;
      dp_batch **grown = realloc(w->out, (size_t)cap * sizeof *grown);
      if (!grown) return DIPPER_NOMEM;
      memset(grown + w->capout, 0, (size_t)(cap - w->capout) * sizeof *grown);
      w->out = grown;
      w->capout = cap;
    }
    dp_batch *copy = w->out[w->nout];
    if (copy && copy->schema != b->schema) {
      dp_batch_free(copy);
      copy = w->out[w->nout] = NULL;
    }
    if (!copy && !(copy = w->out[w->nout] = dp_batch_new(b->schema, b->nrows)))
      return DIPPER_NOMEM;
    dp_batch_clear(copy);
    if ((rc = dp_par_take(copy, b, NULL, 0, b->nrows)) != DIPPER_OK) return rc;
    w->nout++;
  }
}

static int run_worker(par_worker *w) {
  dp_par *par = w->par;
  int rc = DIPPER_OK;
  for (int e = 0; e < w->nexch; e++) {
    if (!rc && !par->failed) rc = dp_par_exchange_send(w->exch[e]);
    if (rc) par->failed = true;
    pthread_barrier_wait(&par->barrier);
  }
  if (!rc && !par->failed) rc = drain_root(w);
  if (rc) par->failed = true;
  return rc;
}

int dp_par_run(dp_par *par, dp_exec *coord, dp_diags *d) {
  int nwm = coord->query->nwatermarks;
  for (int i = 0; i < par->n; i++) {
    dp_exec *ex = par->w[i].ex;
    if (par->min_rule && nwm > 0) {
      /* the worker's max_event_time gets this batch's alone; its run's is wm_max */
      if (!par->w[i].wm_max) {
        par->w[i].wm_max = dp_arena_alloc(ex->arena, (size_t)nwm * sizeof(int64_t));
        if (!par->w[i].wm_max) return DIPPER_NOMEM;
        for (int k = 0; k < nwm; k++) par->w[i].wm_max[k] = DP_WATERMARK_NONE;
      }
      for (int k = 0; k < nwm; k++) ex->max_event_time[k] = DP_WATERMARK_NONE;
    }
    ex->batch_id = coord->batch_id;
    ex->watermark = coord->watermark;
    ex->late_watermark = coord->late_watermark;
    ex->final = coord->final;
    ex->batch_start_time = coord->batch_start_time;
    par->w[i].rc = DIPPER_OK;
  }
  par->failed = false;
  pthread_mutex_lock(&par->mu);
  par->epoch++;
  par->pending = par->n - 1;
  pthread_cond_broadcast(&par->go);
  pthread_mutex_unlock(&par->mu);
  par->w[0].rc = run_worker(&par->w[0]);
  pthread_mutex_lock(&par->mu);
  while (par->pending > 0) pthread_cond_wait(&par->done, &par->mu);
  pthread_mutex_unlock(&par->mu);
  /* Shares of one batch: their maximum is what one thread saw.  Splits of
  ** their own (files): the minimum over the workers that read events in this
  ** batch, each at the largest it has seen, so that no worker's rows come
  ** late for another's progress; a worker that read none has caught up with
  ** its input and holds nothing back, and when none read any (every worker
  ** caught up: the no-data batch that closes windows) the maximum, what one
  ** thread that read everything saw. */
  for (int k = 0; k < nwm; k++) {
    int64_t m = DP_WATERMARK_NONE;
    if (!par->min_rule) {
      for (int i = 0; i < par->n; i++)
        if (par->w[i].ex->max_event_time[k] > m) m = par->w[i].ex->max_event_time[k];
    } else {
      int64_t lo = INT64_MAX, hi = DP_WATERMARK_NONE;
      for (int i = 0; i < par->n; i++) {
        int64_t b = par->w[i].ex->max_event_time[k], *run = &par->w[i].wm_max[k];
        if (b > *run) *run = b;
        if (b != DP_WATERMARK_NONE && *run < lo) lo = *run;
        if (*run > hi) hi = *run;
      }
      m = lo != INT64_MAX ? lo : hi;
    }
    if (m != DP_WATERMARK_NONE && m > coord->max_event_time[k]) coord->max_event_time[k] = m;
  }
  for (int i = 0; i < par->n; i++) {
    if (par->w[i].rc == DIPPER_OK) continue;
    copy_diags(d, &par->w[i].diags);
    return par->w[i].rc;
  }
  return DIPPER_OK;
}

bool dp_par_sink_per_worker(const dp_plan *root) {
  if (root->kind != DP_P_SINK) return false;
  const dp_table_def *t = root->u.sink.table;
  const dp_sink_class *cls = t ? dp_sink_find(t->connector ? t->connector : "") : NULL;
  return cls && cls->per_worker && (!cls->per_worker_if || cls->per_worker_if(t));
}

int64_t dp_par_rows_sunk(const dp_par *par) {
  int64_t n = 0;
  for (int i = 0; i < par->n; i++) n += par->w[i].sunk;
  return n;
}

int dp_par_commit_sinks(dp_par *par, int64_t batch_id, dp_diags *d) {
  for (int i = 0; i < par->n; i++) {
    dp_op *root = par->w[i].ex->root_op;
    if (root->cls != &dp_op_sink) continue;
    int rc = dp_sink_op_commit(root, batch_id);
    if (rc) {
      copy_diags(d, &par->w[i].diags);
      return rc;
    }
  }
  return DIPPER_OK;
}

void dp_par_end_batch(dp_par *par) {
  for (int i = 0; i < par->n; i++) dp_arena_reset(par->w[i].ex->batch_arena);
}

/* ---- the gather: the coordinator's sink reads the outboxes ---- */

typedef struct gather_state {
  dp_par *par;
  int w, k; /* the next batch: outbox k of worker w */
} gather_state;

static int gather_open(dp_op *op) {
  (void)op;
  return DIPPER_OK;
}

static int gather_next(dp_op *op, dp_batch **out) {
  gather_state *g = op->state;
  *out = NULL;
  while (g->w < g->par->n) {
    par_worker *w = &g->par->w[g->w];
    if (g->k < w->nout) {
      *out = w->out[g->k++];
      op->metrics.rows_out += (*out)->nrows;
      return DIPPER_OK;
    }
    g->w++;
    g->k = 0;
  }
  return DIPPER_OK;
}

static int gather_end_batch(dp_op *op) {
  gather_state *g = op->state;
  g->w = g->k = 0;
  return DIPPER_OK;
}

static void gather_close(dp_op *op) { op->state = NULL; }

static const dp_op_class gather_class = {
    .name = "Gather",
    .open = gather_open,
    .next = gather_next,
    .end_batch = gather_end_batch,
    .close = gather_close,
};

bool dp_par_plumbing(const dp_op *op) { return op->cls == &gather_class || dp_par_is_exchange(op); }

int dp_par_gather_build(dp_par *par, dp_exec *coord, const dp_plan *input, dp_op **out) {
  *out = NULL;
  dp_op *op = dp_arena_calloc(coord->arena, 1, sizeof *op);
  gather_state *g = dp_arena_calloc(coord->arena, 1, sizeof *g);
  if (!op || !g) return DIPPER_NOMEM;
  g->par = par;
  op->cls = &gather_class;
  op->plan = input;
  op->ex = coord;
  op->state = g;
  *out = op;
  return DIPPER_OK;
}
