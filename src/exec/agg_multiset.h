/*
** agg_multiset.h — the values of each group with their counts, for the
** aggregates over an updating input that cannot take a row back from their
** result alone (agg_retract.c): MIN and MAX (Flink's MinWithRetract and
** MaxWithRetract keep a map value -> count per group) and the DISTINCT
** aggregates (Flink's distinct view: a value counts while its count is
** positive).
**
** A multiset is a hash table of (group id, value) pairs (hashtable.h), a
** count per pair (signed: a retraction of a value never added is kept as -1
** until its addition arrives, as Flink's map keeps it), and per group a
** chain of its pairs, the pair holding its extreme value now (`best`, found
** again by a walk of the chain when a retraction takes its last copy away)
** and the pair last emitted (`shown`).  Pairs whose count went to 0 stay
** until dp_multiset_compact drops them (and renumbers the rest in their
** order); NULL values are never added (the caller skips them).
**
** Owns its memory (malloc'd); dp_multiset_free(NULL-initialised) is safe.
*/
#ifndef DP_AGG_MULTISET_H
#define DP_AGG_MULTISET_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/bytes.h"
#include "core/vector.h"
#include "exec/hashtable.h"

typedef struct dp_multiset {
  int order;               /* +1 MAX, -1 MIN, 0 no extreme (DISTINCT) */
  const dp_type *types[2]; /* BIGINT group id, the value's type */
  dp_hashtable ht;         /* keys[0] group id, keys[1] value; pair = row */
  bool has_ht;
  int64_t *cnt, *next, pcap; /* per pair: its count, the next pair of its group */
  int64_t *head, *best, *shown, gcap; /* per group: newest pair, extreme now, emitted (-1 none, best -2 to find) */
  dp_vector *gids;         /* scratch: the batch's group ids as a BIGINT column */
  uint64_t *hashes;
  int64_t *ids, scap;
} dp_multiset;

/* An empty multiset of values of type t (borrowed), order as above. */
int dp_multiset_init(dp_multiset *m, const dp_type *t, int order);
void dp_multiset_free(dp_multiset *m);
/* Room for groups [0, n); new groups hold nothing. */
int dp_multiset_reserve(dp_multiset *m, int64_t n);
/* For i < n: add sign[rows[i]] (+1 or -1) copies of row rows[i] of `values`
** (non-NULL) to group gids[rows[i]].  moved[i] (may be NULL) = +1 when the
** value's count went from <= 0 to > 0 (it counts now), -1 from > 0 to <= 0,
** 0 otherwise.  DIPPER_OK, DIPPER_NOMEM or DIPPER_LIMIT. */
int dp_multiset_update(dp_multiset *m, const dp_vector *values, const int64_t *gids,
                       const int64_t *rows, int64_t n, const int8_t *sign, int8_t *moved);
/* The pair of group g's extreme value now (the values are ht.keys[1]), -1
** when it has none. */
int64_t dp_multiset_best(dp_multiset *m, int64_t g);
/* The extreme value changed since dp_multiset_settle(g). */
bool dp_multiset_changed(dp_multiset *m, int64_t g);
/* What is emitted now is g's best; dp_multiset_clear takes every value of
** g away first (its last row went). */
void dp_multiset_settle(dp_multiset *m, int64_t g);
void dp_multiset_clear(dp_multiset *m, int64_t g);
/* Drop the pairs with count 0 that no group shows, when they are at least
** min_dead and more than the live ones (min_dead 0: whenever there is one). */
int dp_multiset_compact(dp_multiset *m, int64_t min_dead);
/* Checkpoints: compacts, then `pairs:uvar`, the group ids and the values as
** vector_codec vectors, a count:svar per pair, the pairs in (group, value)
** order (so the bytes do not depend on when compactions ran).  dp_multiset_load reads it
** into a multiset just initialised and reserved for `ngroups` groups (each
** group's shown value is then its best): DIPPER_OK, DIPPER_CORRUPT (a
** group past ngroups, a repeated pair, a count of 0, short bytes),
** DIPPER_NOMEM. */
int dp_multiset_save(dp_multiset *m, dp_buf *out);
int dp_multiset_load(dp_multiset *m, int64_t ngroups, dp_rd *in);
/* Pairs held (live or not yet compacted). */
static inline int64_t dp_multiset_pairs(const dp_multiset *m) { return m->ht.ngroups; }

#endif /* DP_AGG_MULTISET_H */
