/*
** state_ttl.h — idle state retention (Flink's state TTL) for the keys of a
** stateful operator: which keys were not written for `ttl` µs of processing
** time, found at the cost of what expires.
**
** The operator numbers its keys densely (a group id, a slot) and calls
** dp_state_ttl_touch when it writes a key (Flink's default update type,
** OnCreateAndWrite: a read alone does not renew a key); dp_state_ttl_expire
** then hands out, oldest first, the keys whose last write is at or before
** now − ttl, and forgets them.  The keys are a doubly linked list in order
** of last write: a touch moves its key to the tail (O(1)), expiry pops from
** the head while the head is expired (O(expired) + 1).  Time never goes
** back: a clock that does is read as the latest time seen.  When the owner
** renumbers its keys (a compaction), dp_state_ttl_renumber follows it, in
** the compaction's own O(keys).
**
** Checkpoints: dp_state_ttl_save writes the list whole — per run of keys
** written at one time (a micro-batch's keys share its time) the time and the
** ids, oldest first — and dp_state_ttl_load rebuilds it exactly.
**
** Owns: the list and the last-write times.  Does not own: the keys, nor
** what dropping one means (the operator's).
*/
#ifndef DP_STATE_TTL_H
#define DP_STATE_TTL_H

#include <stdint.h>

#include "core/buf.h"
#include "core/bytes.h"

typedef struct dp_state_ttl {
  int64_t ttl;            /* µs, > 0 */
  int64_t cap;            /* ids 0..cap-1 have slots */
  int64_t *at;            /* per id: last write (µs), or -1 when not listed */
  int64_t *prev, *next;   /* the list, oldest first; -1 ends */
  int64_t head, tail;
  int64_t count;          /* ids listed */
  int64_t clock;          /* the latest time seen */
} dp_state_ttl;

/* An empty list for keys idle `ttl` µs (> 0).  Free with dp_state_ttl_free
** (also after a failure; on a zeroed struct too). */
int dp_state_ttl_init(dp_state_ttl *t, int64_t ttl);
void dp_state_ttl_free(dp_state_ttl *t);

/* Key `id` (>= 0) was written at `now`: listed, or moved to the tail. */
int dp_state_ttl_touch(dp_state_ttl *t, int64_t id, int64_t now);
/* Forget key `id` (the operator dropped it for another reason). */
void dp_state_ttl_remove(dp_state_ttl *t, int64_t id);

/* The keys whose last write is at or before now − ttl, oldest first, taken
** off the list: *ids (malloc'd, the caller frees; NULL when none) and *n. */
int dp_state_ttl_expire(dp_state_ttl *t, int64_t now, int64_t **ids, int64_t *n);

/* The owner renumbered ids 0..n-1: remap[id] is the new id, or -1 for a key
** it dropped (forgotten here too).  The list's order is kept. */
int dp_state_ttl_renumber(dp_state_ttl *t, const int64_t *remap, int64_t n);

/* The list whole (see the header comment); load replaces t's list with one
** read back, every id below `nids` (the owner's key count) and listed once,
** or returns DIPPER_CORRUPT. */
void dp_state_ttl_save(const dp_state_ttl *t, dp_buf *out);
int dp_state_ttl_load(dp_state_ttl *t, dp_rd *in, int64_t nids);

#endif /* DP_STATE_TTL_H */
