/*
** blackhole.c — the `blackhole` sink: counts the rows it is given and drops
** them.  For benchmarks (the cost of a query without the cost of output) and
** for queries run for their side effects.
*/
#include <stdlib.h>

#include "connectors/connector.h"

typedef struct blackhole_state {
  int64_t rows, batches;
} blackhole_state;

static int blackhole_open(dp_sink *k) {
  k->state = calloc(1, sizeof(blackhole_state));
  return k->state ? DIPPER_OK : DIPPER_NOMEM;
}

static int blackhole_write(dp_sink *k, int64_t batch_id, const dp_batch *b) {
  (void)batch_id;
  ((blackhole_state *)k->state)->rows += b->nrows;
  return DIPPER_OK;
}

static int blackhole_commit(dp_sink *k, int64_t batch_id) {
  (void)batch_id;
  ((blackhole_state *)k->state)->batches++;
  return DIPPER_OK;
}

static void blackhole_close(dp_sink *k) {
  free(k->state);
  k->state = NULL;
}

const dp_sink_class dp_sink_blackhole = {
    .name = "blackhole",
    .open = blackhole_open,
    .write = blackhole_write,
    .commit = blackhole_commit,
    .close = blackhole_close,
    .per_worker = true, /* what it drops has no order */
};
