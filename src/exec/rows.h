/*
** rows.h — row-set helpers shared by the operators over bounded inputs
** (join, sort, limit, distinct, dedup, top-N, OVER, set operations, unnest).
**
** Owns: hashing and comparing multi-column keys, a chained hash index over
** row ids (the join's build side: one key, many rows), a "group table" that
** numbers distinct keys (the aggregation's dp_hashtable a row at a time), a
** stable sort of row indexes, and an append-only row store (a dp_batch that
** grows), and the checkpoint form of the stores, group tables and per-row
** flags that several operators keep.  It owns no
** operator semantics: each op_*.c decides what to keep and when to emit; nor
** the copying of rows, which is core/vector.h's dp_vector_take /
** dp_batch_take (a negative index pads an outer join with a NULL row).
**
** Memory: everything here is malloc'd (operator state outlives micro-batches,
** see exec.h) and freed by the matching *_free, which accepts NULL.
*/
#ifndef DP_ROWS_H
#define DP_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/vector.h"
#include "exec/exec.h"
#include "exec/hashtable.h"

/* Hash of row `row` over the key columns; equal keys (NULL = NULL) hash equal. */
uint64_t dp_rows_hash(const dp_vector *const *cols, int ncols, int64_t row);
/* Are the keys of row i of a and row j of b equal (NULL equals NULL)? */
bool dp_rows_equal(const dp_vector *const *a, int64_t i, const dp_vector *const *b, int64_t j,
                   int ncols);
/* Does row `row` hold a NULL in some key column? */
bool dp_rows_any_null(const dp_vector *const *cols, int ncols, int64_t row);

/* ---- a chained hash index: row id -> hash, lookups by hash ----
** A multimap: every row of a join's build side is an id, however many share
** a key, and a probe walks the candidates of its bucket.  dp_hashtable keeps
** each key once (a group), so it serves DISTINCT and GROUP BY, not this. */
typedef struct dp_rowhash {
  int64_t *heads;   /* per bucket: the newest row id, or -1 */
  int64_t *next;    /* per row id: the next row of its bucket, or -1 */
  uint64_t *hashes; /* per row id */
  uint64_t mask;    /* buckets - 1 */
  int64_t n, cap;   /* row ids in use, room */
} dp_rowhash;

int dp_rowhash_init(dp_rowhash *h);
void dp_rowhash_free(dp_rowhash *h);
/* Add row id h->n with this hash; returns a code. */
int dp_rowhash_add(dp_rowhash *h, uint64_t hash);
/* The newest row id in hash's bucket, or -1; then dp_rowhash_next. Callers
** compare h->hashes[id] and the keys themselves. */
static inline int64_t dp_rowhash_first(const dp_rowhash *h, uint64_t hash) {
  return h->heads ? h->heads[hash & h->mask] : -1;
}
static inline int64_t dp_rowhash_next(const dp_rowhash *h, int64_t id) { return h->next[id]; }

/* ---- a group table: numbers the distinct keys in order of first sight ----
** The aggregation's hash table (hashtable.h: open addressing, tags, keys
** stored columnar) a row at a time; unlike dp_rowhash it holds each key
** once.  A dp_groups may be copied by value (the old copy is then dead). */
typedef struct dp_groups {
  dp_hashtable ht;
  dp_batch *keys; /* one row per group: a view of ht's key vectors, with the
                     schema; read only (the table appends to them) */
} dp_groups;

/* key_schema: the types of the key columns (borrowed for the table's life). */
int dp_groups_init(dp_groups *g, const dp_schema *key_schema);
void dp_groups_free(dp_groups *g);
/* The group of row `row` of the key columns `cols`, added when new (*is_new). */
int dp_groups_find_or_add(dp_groups *g, const dp_vector *const *cols, int64_t row, int64_t *id,
                          bool *is_new);
/* The group of that row, or -1. */
int64_t dp_groups_find(const dp_groups *g, const dp_vector *const *cols, int64_t row);
static inline int64_t dp_groups_count(const dp_groups *g) { return g->ht.ngroups; }

/* ---- ordering ---- */
typedef struct dp_rows_order {
  int nkeys;
  const dp_vector **cols; /* one per key */
  const bool *desc;
  const bool *nulls_first;
} dp_rows_order;

/* <0, 0, >0: row i before, tied with, after row j (of the same vectors). */
int dp_rows_order_compare(const dp_rows_order *o, int64_t i, int64_t j);
/* Stable sort of idx[0..n) by o (ties keep their order). */
int dp_rows_sort(int64_t *idx, int64_t n, const dp_rows_order *o);

/* Evaluate sort keys over `in` into o (vectors the caller frees with
** dp_rows_order_free; bare columns are borrowed, not copied). */
int dp_rows_order_eval(dp_exec *ex, const dp_sort_key *keys, int nkeys, const dp_batch *in,
                       dp_rows_order *o);
void dp_rows_order_free(dp_rows_order *o, const dp_sort_key *keys);

/* Append every row of src to dst (same schema). */
static inline int dp_rows_append(dp_batch *dst, const dp_batch *src) {
  return dp_batch_take(dst, src, NULL, 0, src->nrows);
}

/* ---- checkpoints (exec.h: save_state / restore_state) ----
** The pieces of state several operators keep, as bytes and back: a row
** store (core/vector_codec.h's batch encoding), a group table (its keys in
** id order; loading adds them again in that order, so the ids, and every
** per-group array the caller indexes by them, read back as they were) and
** per-row flags (one byte each, 0 or 1).  A load appends to an empty
** structure built at open for the same plan.  Saves return DIPPER_OK or
** DIPPER_NOMEM (out->oom); loads DIPPER_OK, DIPPER_NOMEM, DIPPER_LIMIT or
** DIPPER_CORRUPT for bytes that do not read back whole (in->bad is then
** set), which the operator reports with dp_state_corrupt. */
int dp_rows_save(dp_buf *out, const dp_batch *b);
int dp_rows_load(dp_rd *in, dp_batch *into);
int dp_groups_save(dp_buf *out, const dp_groups *g);
int dp_groups_load(dp_rd *in, dp_groups *g);
void dp_flags_save(dp_buf *out, const uint8_t *flags, int64_t n);
/* Exactly n flags into flags[0..n) (room for n; NULL when n is 0). */
int dp_flags_load(dp_rd *in, uint8_t *flags, int64_t n);
/* Index rows [first, b->nrows) of b by the hash of their key columns, in
** row order: the index a store had before it was saved. */
int dp_rowhash_add_rows(dp_rowhash *h, const dp_batch *b, const int *keys, int nkeys,
                        int64_t first);
/* The version byte that opens every operator's blob, and its check (a
** blob of another version is corrupt for this build: DIPPER_CORRUPT). */
static inline void dp_state_begin(dp_buf *out, uint8_t version) { dp_put_u8(out, version); }
int dp_state_check(dp_op *op, dp_rd *in, uint8_t version);
/* The code of a failed restore of op's state, with its diagnostic on
** op->ex->diags: DIPPER_CORRUPT (and every other code but DIPPER_NOMEM)
** says which operator's state did not read back and `what` of it. */
int dp_state_corrupt(dp_op *op, int rc, const char *what);

/* Rows per output batch of the operators that emit from stored rows. */
#define DP_ROWS_CHUNK 4096

#endif /* DP_ROWS_H */
