/*
** hashtable.h — a hash table of group keys, for aggregation, and for joins,
** DISTINCT and deduplication to reuse.
**
** Design: the keys are stored columnar, one dp_vector per key column, and a
** group is a dense id (0, 1, 2, ...) — row `id` of those vectors.  The table
** proper is an open-addressing array of 64-bit slots, each holding the high
** 32 bits of the key's hash (a tag, so that most misses never touch the key
** columns) and id + 1 (0 marks an empty slot); linear probing, the slot count
** a power of two kept at least twice the group count (it doubles when needed).
** The full hash of each group is kept too, so growing never rehashes keys.
** Callers keep per-group state in their own arrays indexed by the id.
**
** Lookups go a batch at a time: hash every row of the key columns
** (dp_ht_hash, one pass per column with the type switch outside the loop),
** then find or insert them all (dp_ht_find_or_insert).  No per-row malloc:
** new keys are appended to the key vectors, which grow by doubling.
**
** Removal is by compaction: dp_ht_compact keeps the groups a caller marks and
** renumbers them densely (streaming windows are dropped in bulk as the
** watermark passes, so one O(groups) pass per batch is the right price).
**
** Equality is grouping equality: NULL equals NULL (and hashes alike, whatever
** bytes its slot holds), NaN equals NaN, 0.0
** equals -0.0; nested values (ARRAY, MAP, ROW) use eval.h's
** dp_vector_hash / dp_vector_row_equal.  At most 2^32 - 2 groups.
*/
#ifndef DP_HASHTABLE_H
#define DP_HASHTABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/types.h"
#include "core/vector.h"

typedef struct dp_hashtable {
  int nkeys;
  dp_vector **keys;  /* stored keys: row id is group id */
  uint64_t *hashes;  /* full hash per group */
  int64_t ngroups;
  int64_t hashes_cap;
  uint64_t *slots;   /* (hash >> 32) << 32 | (id + 1); 0 = empty */
  uint64_t nslots;   /* power of two */
} dp_hashtable;

/* An empty table over keys of these types (borrowed: they must outlive the
** table).  Free with dp_ht_free. */
int dp_ht_init(dp_hashtable *ht, int nkeys, const dp_type *const *types);
void dp_ht_free(dp_hashtable *ht);

/* hashes[i] = hash of row i over the columns cols[0..ncols), i < nrows. */
void dp_ht_hash(const dp_vector *const *cols, int ncols, int64_t nrows, uint64_t *hashes);

/* For each row r = rows[i] (or r = i, every row 0..n, when rows is NULL) of
** the probe columns (same types as the keys), set ids[r] to its group,
** inserting new keys: ids, like hashes (dp_ht_hash's), is indexed by the row
** number, not by the position in `rows`.  *nnew (may be NULL)
** counts the groups created.  Returns DIPPER_OK, DIPPER_NOMEM or DIPPER_LIMIT. */
int dp_ht_find_or_insert(dp_hashtable *ht, const dp_vector *const *cols, const uint64_t *hashes,
                         const int64_t *rows, int64_t n, int64_t *ids, int64_t *nnew);

/* The group of row `row` of the probe columns, or -1 when absent. */
int64_t dp_ht_find(const dp_hashtable *ht, const dp_vector *const *cols, uint64_t hash, int64_t row);

/* One row at a time (rows.h's dp_groups): the hash dp_ht_hash gives row
** `row`, and a new group for that row's key, which the caller found absent
** (*id its id).  dp_ht_add returns DIPPER_OK, DIPPER_NOMEM or DIPPER_LIMIT. */
uint64_t dp_ht_hash_row(const dp_vector *const *cols, int ncols, int64_t row);
int dp_ht_add(dp_hashtable *ht, const dp_vector *const *cols, int64_t row, uint64_t hash,
              int64_t *id);

/* In bulk, keys known to be new (a restore): the caller appended rows
** [ngroups, len) to every key vector (each now holds len rows), and they
** become groups ngroups .. len-1, in order — the ids one dp_ht_add per row
** would give — with one hash pass, the slots sized once and no copy of the
** keys.  *dup = -1, or the first row whose key equals an earlier group's:
** then the key vectors are cut back to ngroups and the table is as it was.
** DIPPER_OK; DIPPER_NOMEM or DIPPER_LIMIT (past 2^32 - 2 groups), the key
** vectors cut back likewise; DIPPER_MISUSE (a key vector not of len rows:
** nothing is touched). */
int dp_ht_add_appended(dp_hashtable *ht, int64_t len, int64_t *dup);

/* Room for n groups in all: the slots sized for them (placed again if the
** table holds groups) and the hashes' array, so that adds up to n never
** grow the table (a restore that knows the groups its deltas bring).
** DIPPER_OK; DIPPER_NOMEM (the table as it was) or DIPPER_LIMIT. */
int dp_ht_reserve(dp_hashtable *ht, int64_t n);

/* Keep the groups with keep[id] true, renumbered densely in their old order;
** remap[old] = new id or -1 (remap has room for ngroups; may be NULL).
** DIPPER_OK, or DIPPER_NOMEM with the table (and remap) untouched. */
int dp_ht_compact(dp_hashtable *ht, const bool *keep, int64_t *remap);

/* Grouping equality of row i of a and row j of b (same type). */
bool dp_ht_row_equal(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j);
/* Order of row i of a and row j of b (same type), NULLs first. */
int dp_ht_row_compare(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j);

#endif /* DP_HASHTABLE_H */
