/*
** due_heap.h — a binary min-heap of (time, id) pairs: the index by which a
** stateful operator finds the state its watermark closes or forgets, at the
** cost of what closes (O(log n) per entry pushed or popped) rather than a
** pass over its whole state every batch.
**
** The owner numbers its state densely (a group id, a row id) and renumbers it
** when it compacts; the heap does not follow a renumbering: the owner
** rebuilds it then (dp_due_heapify over the survivors, O(n), within the
** compaction's own O(n)).  Entries may go stale (a state dropped for another
** reason, a session whose end grew): the owner checks what it pops.
**
** Owns: its array.  Does not own: what the ids mean.
*/
#ifndef DP_DUE_HEAP_H
#define DP_DUE_HEAP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct dp_due {
  int64_t t, id;
} dp_due;

typedef struct dp_due_heap {
  dp_due *v;
  int64_t n, cap;
} dp_due_heap;

/* Add (t, id): DIPPER_OK or DIPPER_NOMEM (the heap as it was). */
int dp_due_push(dp_due_heap *h, int64_t t, int64_t id);
/* The least t on the heap (h->n > 0), and taking it off. */
static inline int64_t dp_due_top(const dp_due_heap *h) { return h->v[0].t; }
dp_due dp_due_pop(dp_due_heap *h);
/* Room for n entries (before filling h->v[0..n) by hand and heapifying). */
int dp_due_reserve(dp_due_heap *h, int64_t n);
/* The heap order over h->v[0..h->n), in O(n). */
void dp_due_heapify(dp_due_heap *h);
void dp_due_free(dp_due_heap *h);

/* The tombstones' side of the same devices: ids 0..n split by their gone
** flags (gone[id] for id < gone_cap; past it, not gone) into the kept ids
** and the dropped ones, both ascending, and with `remap` each id's new
** number (-1: dropped), for a compaction that renumbers (dp_groups_compact,
** dp_rowlog_drop, dp_state_ttl_renumber).  DIPPER_OK or DIPPER_NOMEM; free
** with dp_gone_split_free either way. */
typedef struct dp_gone_split {
  int64_t *keep, *drop, *remap;
  int64_t nkeep, ndrop;
} dp_gone_split;
int dp_gone_split_ids(const uint8_t *gone, int64_t gone_cap, int64_t n, int64_t ngone,
                      bool remap, dp_gone_split *out);
void dp_gone_split_free(dp_gone_split *s);

#endif /* DP_DUE_HEAP_H */
