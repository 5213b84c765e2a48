/*
** due_heap.c — the (time, id) min-heap of due_heap.h.
*/
#include "exec/due_heap.h"

#include <stdlib.h>

#include "core/grow.h"
#include "dipper.h"

int dp_due_reserve(dp_due_heap *h, int64_t n) {
  if (n <= h->cap) return DIPPER_OK;
  return dp_grow(&h->v, &h->cap, n, sizeof *h->v, 256) ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_due_push(dp_due_heap *h, int64_t t, int64_t id) {
  int rc = dp_due_reserve(h, h->n + 1);
  if (rc) return rc;
  int64_t i = h->n++;
  while (i > 0 && h->v[(i - 1) / 2].t > t) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = (dp_due){t, id};
  return DIPPER_OK;
}

static void sift_down(dp_due_heap *h, int64_t i) {
  dp_due x = h->v[i];
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->v[c + 1].t < h->v[c].t) c++;
    if (h->v[c].t >= x.t) break;
    h->v[i] = h->v[c];
    i = c;
  }
  h->v[i] = x;
}

dp_due dp_due_pop(dp_due_heap *h) {
  dp_due top = h->v[0];
  h->v[0] = h->v[--h->n];
  if (h->n > 0) sift_down(h, 0);
  return top;
}

void dp_due_heapify(dp_due_heap *h) {
  for (int64_t i = h->n / 2 - 1; i >= 0; i--) sift_down(h, i);
}

void dp_due_free(dp_due_heap *h) {
  free(h->v);
  h->v = NULL;
  h->n = h->cap = 0;
}
