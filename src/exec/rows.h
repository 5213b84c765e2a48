/*
** rows.h — row-set helpers shared by the operators over bounded inputs
** (join, sort, limit, distinct, dedup, top-N, OVER, set operations, unnest).
**
** Owns: hashing and comparing multi-column keys, a chained hash index over
** row ids (the join's build side: one key, many rows), a "group table" that
** numbers distinct keys (the aggregation's dp_hashtable a row at a time), a
** stable sort of row indexes, and an append-only row store (a dp_batch that
** grows), the checkpoint form of the stores, group tables and per-row
** flags that several operators keep, and the log of a store's changes
** since its last checkpoint that their deltas are written from.  It owns no
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
/* No row ids any more; the memory stays, for the ids added again. */
void dp_rowhash_clear(dp_rowhash *h);
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

/* ---- per-batch deltas (exec.h: save_delta / restore_delta) ----
** Design.  Every store the operators keep (a row store, a group table)
** changes in two ways only: rows appended at its end, and a compaction that
** drops some rows and keeps the rest in their order (the watermark's
** eviction, a released or expired row).  So at every moment a store is
**   [the base rows still alive, in base order] ++ [the rows appended since
**   the base that are still alive, in arrival order]
** where the base is the store at the last save or restore.  A dp_rowlog,
** one per store, records since the base: how many rows it had (base_n),
** how many of them are alive (base_live: they are the store's first rows),
** the base positions dropped, and the base positions whose per-row data
** changed (a dirty list: a join's matched flag, a keep-last key's best row).
** A delta is then the log (the drops as runs of consecutive base positions,
** a few bytes per run however long; the dirty rows as gaps between base
** positions), the dirty rows' new data and the rows [base_live, n) with
** theirs: O(rows changed + rows dropped), never a pass over the store.  Ids
** are base positions, so a compaction that renumbers the store costs the
** delta only the rows it dropped: dp_rowlog_drop maps the current positions
** it is given onto base positions by one walk of the (sorted) drops so far.
** A rewrite that does not keep the order (a Top-N's new top, an OVER
** history trimmed in sorted order) calls dp_rowlog_clear: every base row is
** dropped and the whole store is new, so that delta is the whole store.
** A log records nothing before its first mark (a query without
** checkpoints pays nothing).  Restoring: dp_rowlog_load reads and checks
** the log against the store restored so far (its row count must be
** base_n); the operator applies the dirty rows (by base position), then
** compacts by dp_rowlog_keep, then appends the new rows. */
typedef struct dp_rowlog {
  bool on;           /* a base was marked: changes are recorded */
  int64_t base_n;    /* rows of the store at the base */
  int64_t base_live; /* of them still in the store (its first base_live rows) */
  int64_t *drop;     /* base positions dropped since, ascending */
  int64_t ndrop, drop_cap;
  int64_t *dirty;    /* base positions changed since (repeats allowed) */
  int64_t ndirty, dirty_cap;
} dp_rowlog;

void dp_rowlog_free(dp_rowlog *l);
/* The store has n rows now: the base of the next delta (after every save
** and restore, whole or delta). */
void dp_rowlog_mark(dp_rowlog *l, int64_t n);
/* A compaction dropped the rows at current positions pos[0..n) (ascending);
** those past the base rows are forgotten.  DIPPER_OK or DIPPER_NOMEM. */
int dp_rowlog_drop(dp_rowlog *l, const int64_t *pos, int64_t n);
/* Every row of the store was dropped, or it was rewritten in another order. */
void dp_rowlog_clear(dp_rowlog *l);
/* The row at current position pos changed (nothing to record past the base
** rows).  DIPPER_OK or DIPPER_NOMEM. */
int dp_rowlog_touch(dp_rowlog *l, int64_t pos);
static inline int64_t dp_rowlog_first_new(const dp_rowlog *l) { return l->base_live; }
/* Write the log: base_n, all-dropped, the drops and the dirty rows still
** alive.  *at (malloc'd, the caller frees; NULL when none) gets the current
** positions of those dirty rows, in the order their data must follow. */
int dp_rowlog_save(dp_buf *out, const dp_rowlog *l, int64_t **at, int64_t *nat);

/* A log read back: positions of the base (the store before the delta). */
typedef struct dp_rowlog_delta {
  bool all;        /* every base row dropped */
  int64_t *drop;   /* ascending */
  int64_t ndrop;
  int64_t *dirty;  /* ascending, none of them dropped */
  int64_t ndirty;
} dp_rowlog_delta;

/* Read a log written for a store of n rows; DIPPER_CORRUPT (in->bad) when
** it does not fit. */
int dp_rowlog_load(dp_rd *in, int64_t n, dp_rowlog_delta *d);
void dp_rowlog_delta_free(dp_rowlog_delta *d);
/* The base positions that stay, ascending (*keep malloc'd, the caller frees). */
int dp_rowlog_keep(const dp_rowlog_delta *d, int64_t n, int64_t **keep, int64_t *nkeep);
/* Keep rows keep[0..n) of *b (a new batch replaces it). */
int dp_rows_compact(dp_batch **b, const int64_t *keep, int64_t n);
/* Keep groups keep[0..n) of g, renumbered 0..n-1 in that order. */
int dp_groups_compact(dp_groups *g, const int64_t *keep, int64_t n);
/* Rows [first, nrows) of b, in rows.h's store form; and the groups from
** `first` (dp_groups_load_more appends them, checking they are new). */
int dp_rows_save_from(dp_buf *out, const dp_batch *b, int64_t first);
/* Rows [first, first + n) of b, in the same form. */
int dp_rows_save_range(dp_buf *out, const dp_batch *b, int64_t first, int64_t n);
int dp_groups_save_from(dp_buf *out, const dp_groups *g, int64_t first);
int dp_groups_load_more(dp_rd *in, dp_groups *g);

/* Rows per output batch of the operators that emit from stored rows. */
#define DP_ROWS_CHUNK 4096

#endif /* DP_ROWS_H */
