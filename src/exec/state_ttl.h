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
** ids, oldest first — and dp_state_ttl_load rebuilds it exactly.  A delta
** (dp_state_ttl_save_section_delta) writes what changed since the last save
** or load, the base: the base's keys taken off the list since (expired,
** removed, or written again) and the keys written since, which are the
** list's tail in order (a write appends; the untouched keys keep their
** order), so it costs the keys the batches touched and dropped, not the
** list.  After a renumbering since the base (a compaction: rare, amortized
** by the owner's own rule) the delta is the whole list instead.
**
** Owns: the list and the last-write times.  Does not own: the keys, nor
** what dropping one means (the operator's).
*/
#ifndef DP_STATE_TTL_H
#define DP_STATE_TTL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/bytes.h"

/* One id's place: its fields side by side, so that a write touches one
** cache line of its own (and one of each neighbour), not three arrays'. */
typedef struct dp_state_ttl_slot {
  int64_t at;             /* last write (µs), or -1 when not listed */
  int64_t prev, next;     /* the list, oldest first; -1 ends */
  int64_t seq;            /* when it was listed (t->seq then): the list's order */
} dp_state_ttl_slot;

typedef struct dp_state_ttl {
  int64_t ttl;            /* µs, > 0 */
  int64_t cap;            /* ids 0..cap-1 have slots */
  dp_state_ttl_slot *slot;
  int64_t head, tail;
  int64_t count;          /* ids listed */
  int64_t clock;          /* the latest time seen */
  /* Since the base (the last save or load; nothing is recorded before the
  ** first, so a query without checkpoints pays nothing): */
  bool tracking;          /* a base was marked */
  bool whole_next;        /* ids changed since (or a change could not be
                          ** recorded): the next delta is the whole list */
  int64_t seq;            /* listings so far; base_seq at the base */
  int64_t base_seq, base_count;
  int64_t *gone;          /* base ids taken off the list since (each once) */
  int64_t ngone, gone_cap;
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
** or returns DIPPER_CORRUPT.  Neither marks a base for deltas. */
void dp_state_ttl_save(const dp_state_ttl *t, dp_buf *out);
int dp_state_ttl_load(dp_state_ttl *t, dp_rd *in, int64_t nids);
/* What changed since the base (the header comment), and the base again;
** delta_load applies such bytes to t holding that base, or DIPPER_CORRUPT
** (a delta that does not fit the list: another base).  DIPPER_NOMEM when the
** changes could not be recorded (save_delta then writes nothing useful:
** the caller fails the checkpoint).  dp_state_ttl_mark makes the list as it
** is the base: from the first mark on, the changes are recorded (at most an
** id per key of the base). */
void dp_state_ttl_mark(dp_state_ttl *t);
int dp_state_ttl_save_delta(dp_state_ttl *t, dp_buf *out);
int dp_state_ttl_load_delta(dp_state_ttl *t, dp_rd *in, int64_t nids);

/* ---- for the operators (one copy of what each would write) ----
** A checkpoint's TTL section, after the operator's own bytes: nothing when t
** has no TTL, else 'T' and the list whole (save_section: in a whole state,
** or a delta of an owner that does not keep its numbering from one save to
** the next; save_section_base marks the base too, for an owner whose deltas
** use save_section_delta), or, in an owner's delta, 'U' and the list's delta
** when it is smaller than the list (save_section_delta; else 'T' and the
** list whole; both mark the base).  load_section marks the base after
** either. */
void dp_state_ttl_save_section(const dp_state_ttl *t, dp_buf *out);
void dp_state_ttl_save_section_base(dp_state_ttl *t, dp_buf *out);
int dp_state_ttl_save_section_delta(dp_state_ttl *t, dp_buf *out);
/* Read the section either wrote, if one is there, for an owner of
** `nids` keys: without one (a checkpoint from before the TTL was set) every
** key counts as written at `now`; with one and no TTL on t (ttl 0: it was
** dropped since), the section is read and forgotten.  DIPPER_CORRUPT for a
** section that does not read back. */
int dp_state_ttl_load_section(dp_state_ttl *t, dp_rd *in, int64_t nids, int64_t now);
/* Expiry for an owner whose keys 0..n-1 compact by a list of kept ids (rows.h's
** dp_groups_compact): the expired ids ascending in *drop (*ndrop), the kept
** ones ascending in *keep (*nkeep), and t renumbered to match — both NULL and
** 0 when nothing expired (the common case: no pass over the n keys then).
** The caller frees both. */
int dp_state_ttl_expire_compact(dp_state_ttl *t, int64_t now, int64_t n, int64_t **keep,
                                int64_t *nkeep, int64_t **drop, int64_t *ndrop);

#endif /* DP_STATE_TTL_H */
