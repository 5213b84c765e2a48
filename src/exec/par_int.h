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
  pthread_t thread;     /* workers 1..n-1 */
  bool started, nomem;
  int rc;               /* of its last micro-batch */
} par_worker;

/* What the n exchange operators of one plan position share: the rows
** worker s sends worker d in this micro-batch, slot[s * n + d], written by
** s before the barrier and read by d after it. */
typedef struct par_exchange {
  dp_batch **slot;
} par_exchange;

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
  int nexchanges, capexchanges;
  par_exchange **exchanges; /* per plan position, in build order */
};

/* exchange.c: send this worker's rows of the micro-batch (the drain of the
** exchange's input) to their owners' slots. */
int dp_par_exchange_send(dp_op *op);
void dp_par_exchanges_free(struct dp_par *par);

#endif /* DP_PAR_INT_H */
