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

int dp_gone_split_ids(const uint8_t *gone, int64_t gone_cap, int64_t n, int64_t ngone,
                      bool remap, dp_gone_split *out) {
  *out = (dp_gone_split){0};
  out->keep = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->keep);
  out->drop = malloc((size_t)(ngone > 0 ? ngone : 1) * sizeof *out->drop);
  out->remap = remap ? malloc((size_t)(n > 0 ? n : 1) * sizeof *out->remap) : NULL;
  if (!out->keep || !out->drop || (remap && !out->remap)) return DIPPER_NOMEM;
  for (int64_t id = 0; id < n; id++) {
    bool g = id < gone_cap && gone[id];
    if (out->remap) out->remap[id] = g ? -1 : out->nkeep;
    if (g) out->drop[out->ndrop++] = id;
    else out->keep[out->nkeep++] = id;
  }
  return DIPPER_OK;
}

void dp_gone_split_free(dp_gone_split *s) {
  free(s->keep);
  free(s->drop);
  free(s->remap);
  *s = (dp_gone_split){0};
}
