/*
** topn_rocks.h — the update-mode Top-N's partitions in RocksDB
** ('state.backend' = 'rocksdb'; state_rocks.h's keyed entries).
**
** Owns: the operator's RocksDB instance in update mode and what is stored
** there — one entry per partition, keyed by its PARTITION BY columns, its
** value the partition's top (each row with the rank it was last emitted
** with and its arrival number) and, under a state TTL, the partition's last
** write, which a time index orders (expiry by a range scan); and the
** write-back cache of partitions between batches: op_topn.c's `parts`,
** `rows` and `ttl` (topn_int.h) hold the partitions a batch touches, loaded
** from RocksDB on first touch, and keep them while they fit in
** 'dipper.rocksdb.aggregate-cache-bytes'; a partition whose top changed is
** dirty until it is written back (past the budget: every dirty one, in key
** order, and the cache emptied), and the dirty ones go whole into the
** checkpoint's blob beside the name of a RocksDB checkpoint.
** Does not own: the ranking (op_topn.c's update_top, which runs over the
** cache exactly as over the in-memory state, so the output is the same row
** for row), the output.
** Per batch: a lookup per row, a RocksDB read of the partitions the cache
** lacks (one multi-get; none while RocksDB holds none), the partitions that
** expire; writes only when the cache overflows.
*/
#ifndef DP_TOPN_ROCKS_H
#define DP_TOPN_ROCKS_H

#include "exec/exec.h"

typedef struct dp_topn_rocks dp_topn_rocks;

/* The RocksDB state of op (a Top-N in update mode; folder topn-<n>). */
int dp_topn_rocks_new(dp_op *op, dp_topn_rocks **out);
void dp_topn_rocks_free(dp_topn_rocks *r);
/* Before the batch's input (its start opens the batch's writes); under a
** TTL, the partitions last written at or before now - ttl dropped without
** output: the time index's range (those not cached deleted unread) and the
** cached ones from the cache's TTL list. */
int dp_topn_rocks_begin(dp_op *op);
/* After the input: the partitions of the batch's rows (op_topn.c's `fresh`)
** in the cache, those it lacks read from RocksDB (under a TTL each is
** touched at the batch's start, as keep_rows does in memory). */
int dp_topn_rocks_fetch(dp_op *op);
/* Cached partition g's top changed: it is to be written back. */
int dp_topn_rocks_dirty(dp_topn_rocks *r, int64_t g);
/* End of batch: past the budget, the dirty partitions written and the cache
** emptied. */
int dp_topn_rocks_end_batch(dp_op *op);
/* The partitions kept (in RocksDB or only in the cache). */
int64_t dp_topn_rocks_parts(const dp_topn_rocks *r);
/* The blob: a RocksDB checkpoint's name and the dirty partitions. */
int dp_topn_rocks_save(dp_op *op, dp_buf *out);
int dp_topn_rocks_restore(dp_op *op, dp_rd *in);

#endif /* DP_TOPN_ROCKS_H */
