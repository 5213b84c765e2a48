/*
** agg_vlist.h — the values of each group in the order they arrived, for
** FIRST_VALUE, LAST_VALUE and LISTAGG over an updating input
** (agg_retract.c), as Flink's FirstValueWithRetract, LastValueWithRetract
** and ListAggWithRetract keep them.
**
** Per group, its live copies of values in arrival order (one *entry* per
** +I/+U); a -U/-D of a value takes back that value's oldest live copy in
** the group (Flink's value -> [order] map pops its first order; its
** LISTAGG list removes the first equal element), and one with no live copy
** changes nothing.  FIRST_VALUE is the oldest live entry, LAST_VALUE the
** newest, LISTAGG every live entry joined by the separator in order; NULL
** when none (NULL arguments never come in: the caller skips them).
**
** Layout: a hash table of (group id, value) pairs (hashtable.h, so any type
** that groups), per pair the FIFO of its live entries, per group the doubly
** linked chain of its entries; freed entries are reused.  An addition or a
** retraction is O(1); LISTAGG's result walks the group's chain.  What was
** last emitted per group is kept beside (FIRST/LAST: its pair, never
** compacted away; LISTAGG: the string), so that the old row of an update
** can be written and an unchanged result emits nothing.
**
** Owns its memory (malloc'd); dp_vlist_free(NULL-initialised) is safe.
*/
#ifndef DP_AGG_VLIST_H
#define DP_AGG_VLIST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/bytes.h"
#include "core/vector.h"
#include "exec/hashtable.h"

typedef enum dp_vlist_kind { DP_VLIST_FIRST, DP_VLIST_LAST, DP_VLIST_LISTAGG } dp_vlist_kind;

typedef struct dp_vlist_str {
  char *p;
  int64_t len, cap;
  bool has;                /* false: NULL */
} dp_vlist_str;

typedef struct dp_vlist {
  dp_vlist_kind kind;
  const dp_type *types[2]; /* BIGINT group id, the value's type */
  dp_hashtable ht;         /* keys[0] group id, keys[1] value; pair = row */
  bool has_ht;
  int64_t *phead, *ptail, *plive, pcap;           /* per pair: oldest, newest live entry; live copies */
  int64_t *epair, *eprev, *enext, *epnext, ecap;  /* per entry: pair, group chain, next of its pair */
  int64_t nent, efree, nlive;                     /* entries made, free chain (enext), live */
  int64_t *ghead, *gtail, *shown, gcap;           /* per group: oldest, newest entry; FIRST/LAST shown pair */
  dp_vlist_str *shown_str;                        /* LISTAGG: per group, the string emitted */
  dp_vlist_str cur;                               /* LISTAGG: scratch */
  char *sep;                                      /* LISTAGG's separator (',' until set) */
  int64_t sep_len;
  dp_vector *gids;         /* scratch: the batch's group ids as a BIGINT column */
  uint64_t *hashes;
  int64_t *ids, scap;
} dp_vlist;

/* An empty list of values of type t (borrowed). */
int dp_vlist_init(dp_vlist *m, const dp_type *t, dp_vlist_kind kind);
void dp_vlist_free(dp_vlist *m);
/* LISTAGG's separator, when not set yet (the first one given stays). */
int dp_vlist_set_sep(dp_vlist *m, const char *p, size_t n);
/* Room for groups [0, n); new groups hold nothing. */
int dp_vlist_reserve(dp_vlist *m, int64_t n);
/* For i < n, in order: row rows[i] (increasing) of `values` (non-NULL) to
** group gids[rows[i]]: appended when sign[rows[i]] > 0, its oldest live copy
** taken back when < 0.  DIPPER_OK, DIPPER_NOMEM or DIPPER_LIMIT. */
int dp_vlist_update(dp_vlist *m, const dp_vector *values, const int64_t *gids, const int64_t *rows,
                    int64_t n, const int8_t *sign);
/* Group g's result now differs from the one last settled. */
bool dp_vlist_changed(dp_vlist *m, int64_t g);
/* Append group g's result to out: the one last settled (old) or the one now. */
int dp_vlist_put(dp_vlist *m, int64_t g, bool old, dp_vector *out);
/* What is emitted now is g's result (DIPPER_NOMEM for LISTAGG's copy);
** dp_vlist_clear takes every entry of g away first (its last row went). */
int dp_vlist_settle(dp_vlist *m, int64_t g);
void dp_vlist_clear(dp_vlist *m, int64_t g);
/* Drop the pairs without live entries that no group shows, when they are at
** least min_dead and more than the live ones (min_dead 0: whenever there is one). */
int dp_vlist_compact(dp_vlist *m, int64_t min_dead);
/* Checkpoints: `entries:uvar`, the entries' group ids and values as
** vector_codec vectors (group after group, each in arrival order), then
** LISTAGG's `has_sep:u8 [sep:bytes]`.  dp_vlist_load reads it into a list
** just initialised, for `ngroups` groups, and settles every group:
** DIPPER_OK, DIPPER_CORRUPT (a group past ngroups, a NULL, short bytes),
** DIPPER_NOMEM. */
int dp_vlist_save(dp_vlist *m, dp_buf *out);
int dp_vlist_load(dp_vlist *m, int64_t ngroups, dp_rd *in);
/* Live entries (value copies) held. */
static inline int64_t dp_vlist_entries(const dp_vlist *m) { return m->nlive; }

#endif /* DP_AGG_VLIST_H */
