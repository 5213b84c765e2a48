/*
** par_int.h — what parallel.c (the workers) and exchange.c (the exchange
** before stateful operators) share; private to those two files.
*/
#ifndef DP_PAR_INT_H
#define DP_PAR_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "exec/parallel.h"

typedef struct par_worker {
  struct dp_par *par;
  int index;
  dp_exec *ex;          /* the worker's own query: arenas, state, operator tree */
  dp_arena *arena;      /* its diagnostics */
  dp_diags diags;       /* its own: workers report errors at once */
  int ninputs, capinputs;
  dp_op **inputs;       /* its scans, in walk order (the same on every worker) */
  int nexch, capexch;
  dp_op **exch;         /* its exchanges, in build order (children first) */
  int nout, capout;
  dp_batch **out;       /* outbox: copies of the root's batches of this micro-batch */
  int64_t sunk;         /* rows its own sink wrote in it (a per-worker sink) */
  int64_t *wm_max;      /* min_rule: per watermark, the largest event time it has seen
                           in this run (its ex->max_event_time holds the batch's) */
  pthread_t thread;     /* workers 1..n-1 */
  bool started, nomem;
  int rc;               /* of its last micro-batch */
} par_worker;

/* The rows one worker sends another in a micro-batch, in chunks of at most
** PAR_CHUNK_ROWS (the size the scans give: what operators above keep in
** the caches); chunks past `n` are empty ones kept for the next batch. */
#define PAR_CHUNK_ROWS 4096
typedef struct par_slot {
  dp_batch **chunks;
  int n, cap;
} par_slot;

/* What the n exchange operators of one plan position share: the rows
** worker s sends worker d in this micro-batch, slot[s * n + d], written by
** s before the barrier and read by d after it. */
typedef struct par_exchange {
  par_slot *slot;
} par_exchange;

/* An exchange's place: between `node` and its input `child`, hashing
** these columns of that input (exchange.c's place_exchange). */
typedef struct par_point {
  const dp_plan *node;
  int child;
  int *keys;
  int nkeys;
} par_point;

struct dp_par {
  int n;
  par_worker *w;
  pthread_mutex_t mu;
  pthread_cond_t go, done;  /* a micro-batch starts (epoch moved); the workers ended it */
  int64_t epoch;
  int pending;              /* workers 1..n-1 still running the micro-batch */
  bool quit, sync_ready;
  pthread_barrier_t barrier;/* after each exchange's sending */
  _Atomic bool failed;      /* a worker failed this micro-batch: the others stop sending */
  const char *why;          /* a source refused to split (static) */
  bool min_rule;            /* a source splits by units: the watermark is the workers' minimum */
  int nexchanges, capexchanges;
  par_exchange **exchanges; /* per plan position, in build order */
  int npoints, cappoints;
  par_point *points;        /* where the exchanges go, placed before any worker is built */
};

/* exchange.c: send this worker's rows of the micro-batch (the drain of the
** exchange's input) to their owners' slots. */
int dp_par_exchange_send(dp_op *op);
void dp_par_exchanges_free(struct dp_par *par);
/* dp_batch_take (appending to dst) that carries the rows' change kinds
** (dp_batch.change) too: an updating stream keeps its -U/+U/-D rows across
** workers.  A dst or src without kinds counts its rows as insertions. */
int dp_par_take(dp_batch *dst, const dp_batch *src, const int64_t *sel, int64_t start, int64_t n);
bool dp_par_is_exchange(const dp_op *op);
/* Place an exchange for every stateful operator under p (par->points). */
int dp_par_place_exchanges(struct dp_par *par, const dp_plan *p);

#endif /* DP_PAR_INT_H */
