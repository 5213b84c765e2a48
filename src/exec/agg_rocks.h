/*
** agg_rocks.h — an aggregation's groups in RocksDB ('state.backend' =
** 'rocksdb'; state_rocks.h's keyed entries).
**
** Owns: the aggregation's RocksDB instance and what is stored there — one
** entry per group (its key columns, the entry's key; every call's state of
** the group, dp_agg_state_save_group's record of one group, the value), a
** DISTINCT call's values of a group in its record while they are few, past
** that an entry per (group, value) pair with its count (a multiset beside
** the groups: a row costs O(1) reads and writes however many values its
** group has) and,
** for an aggregation that evicts (a window, or a GROUP BY of an event-time
** column), a time index by the group's end, so that the groups the
** watermark closes are found by a range scan.
** Owns too: a write-back cache of the groups between batches (in memory,
** up to 'dipper.rocksdb.aggregate-cache-bytes', 32 MB by default; the
** groups not yet in RocksDB go into the checkpoint's blob), so that a group
** touched again is read from memory and one that closes before the cache
** fills never reaches RocksDB.
** Does not own: the cache of the batch's groups (op_aggregate.c's hash
** table and states: only the groups a batch touches are there, loaded on
** first touch, from the write-back cache or RocksDB, handed back at the end
** of the batch and dropped), the output.  Per batch the cost is a lookup
** and a store in the write-back cache per touched group, a RocksDB read of
** those it does not hold (none while RocksDB holds no group), and the
** groups the watermark closes.
*/
#ifndef DP_AGG_ROCKS_H
#define DP_AGG_ROCKS_H

#include "exec/agg_func.h"
#include "exec/exec.h"
#include "exec/hashtable.h"
#include "exec/state_rocks.h"

typedef struct dp_agg_rocks dp_agg_rocks;

/* A RocksDB state for op (folder <prefix>-<n>, n the operator's number
** among the plan's nodes of its kind, in preorder). */
int dp_rocks_open_op(dp_op *op, const char *prefix, dp_rocks **out);
/* The bytes a write-back cache over RocksDB may hold between batches:
** 'dipper.rocksdb.aggregate-cache-bytes' (checked when SET), 32 MB by
** default; the aggregation's and the update-mode Top-N's. */
size_t dp_rocks_cache_budget(const dp_exec *ex);

/* Why an aggregation cannot keep its state in RocksDB (NULL: it can). */
const char *dp_agg_rocks_refusal(const dp_exec *ex, const dp_plan *p, dp_agg_state *const *states);

/* ht: the cache (borrowed); states[a]: call a's states (borrowed);
** distinct[a]: a DISTINCT call's table of (group id, value) pairs, NULL for
** the others (the array and the tables borrowed; the table holds the
** batch's pairs, dp_agg_rocks_distinct fills it, the pairs' entries in
** RocksDB are the rest; with a codec, the codec's record holds them);
** end_key: the ht key column of the group's end (evicting), or -1. */
int dp_agg_rocks_new(dp_op *op, dp_hashtable *ht, dp_agg_state *const *states,
                     dp_hashtable *const *distinct, int end_key, dp_agg_rocks **out);
void dp_agg_rocks_free(dp_agg_rocks *r);
/* A record of the operator's own for each cached group instead of the
** calls' states (a session window: a key's sessions).  save writes group
** g's record and gives its end (the watermark that closes its first part:
** the time index has the group there, moved when it moves); load reads one
** into cached group g.  u is borrowed. */
typedef struct dp_agg_rocks_codec {
  void *u;
  int (*save)(void *u, int64_t g, dp_buf *out, int64_t *end);
  int (*load)(void *u, int64_t g, dp_rd *in);
} dp_agg_rocks_codec;
void dp_agg_rocks_set_codec(dp_agg_rocks *r, const dp_agg_rocks_codec *c);
/* 'table.exec.state.ttl' (µs, > 0): a group not written for that long goes
** (dp_agg_rocks_expire at each batch's start; a batch's kept groups count
** as written at its start). */
void dp_agg_rocks_set_ttl(dp_agg_rocks *r, int64_t ttl);
/* The groups last written at or before now - ttl deleted, *expired of them,
** at the cost of what expired (a time index by last write) and a pass over
** the write-back cache. */
int dp_agg_rocks_expire(dp_agg_rocks *r, int64_t now, int64_t *expired);
int dp_agg_rocks_begin(dp_agg_rocks *r);
/* Groups [from, ht->ngroups) entered the cache: their stored states loaded. */
int dp_agg_rocks_fetch(dp_agg_rocks *r, int64_t from);
/* DISTINCT call a (no codec): rows use[0..m) of the pair columns dk[0..ndk)
** (dk[0] the cached group ids, dh their hashes) into its table, dids[row]
** each row's pair; sel[0..*nsel) gets the rows whose pair is new to the
** group (in neither the table nor RocksDB), the ones whose values the
** aggregate takes.  Rows with a NULL value are skipped.  sel may be use. */
int dp_agg_rocks_distinct(dp_agg_rocks *r, int a, const dp_vector *const *dk, int ndk,
                          const uint64_t *dh, const int64_t *use, int64_t m, int64_t *dids,
                          int64_t *sel, int64_t *nsel);
/* Whether cached group g has a stored entry. */
bool dp_agg_rocks_stored(const dp_agg_rocks *r, int64_t g);
/* Write back cached groups 0..n with keep[g], delete the others' entries;
** commit. */
int dp_agg_rocks_store(dp_agg_rocks *r, const bool *keep, int64_t n);
/* The keys of the stored groups whose end is at or before wm (INT64_MAX and
** !evicting: every stored group), noted to be entered by dp_agg_rocks_next. */
int dp_agg_rocks_due(dp_agg_rocks *r, int64_t wm, bool all);
/* The next ≤ max due keys into the (empty) cache, states loaded: false when
** none is left. */
int dp_agg_rocks_next(dp_agg_rocks *r, int64_t max, bool *any);
int64_t dp_agg_rocks_count(const dp_agg_rocks *r);
/* Checkpoints: the blob names the RocksDB checkpoint. */
int dp_agg_rocks_save(dp_agg_rocks *r, dp_buf *out);
int dp_agg_rocks_restore(dp_agg_rocks *r, dp_rd *in);

#endif /* DP_AGG_ROCKS_H */
