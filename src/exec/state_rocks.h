/*
** state_rocks.h — operator state in RocksDB ('state.backend' = 'rocksdb'):
** state larger than memory, checkpointed incrementally.
**
** Owns: one RocksDB instance per operator (dp_rocks), opened fresh or from a
** checkpoint of itself, its memory bounds, its checkpoints (RocksDB's own:
** hard links of the immutable SST files, so each one costs the files written
** since the one before), and on top of it a keyed row store with a time
** index (the "rows" calls) that the stream-stream join keeps each side in.
** Does not own: which rows an operator keeps or when they go (op_join.c), the
** checkpoint folder and its records (checkpoint.h; the driver purges this
** module's checkpoint folders with the records, dp_ckpt_purge_folders).
**
** Key layout of the row store (all integers big-endian, so that RocksDB's
** bytewise order is the order wanted):
**
**   row     0x10|space  hash:u64  klen:u32  key bytes  time:u64  seq:u64
**           -> flag:u8 (matched) and the row (vector_codec.h, one row)
**   by time 0x20|space  time:u64  seq:u64  -> hash  klen  key bytes
**   seq     0x00 "seq"  -> the next sequence number (u64)
**
** The key bytes are the key columns' vector_codec encodings of that row, so
** a probe finds a key's rows by one prefix scan (hash, klen, key bytes);
** time is the event time with its sign bit flipped (NULL as the smallest),
** so the watermark's eviction is a scan of the time index up to a bound,
** proportional to what expired, never a pass over the state.  seq makes
** every entry unique and keeps arrival order among equal times.  One row
** per entry rather than batches of rows per key: a probe reads only the
** rows of its key, an eviction deletes single entries, and a matched flag
** is one small rewrite.
**
** Memory: fixed by the options (dp_rocks_open): a 16 MB block cache that
** also holds index and bloom filter blocks (10 bits a key, on the first 9
** bytes: space and hash), two 4 MB write buffers; nothing per
** row stays in memory beyond the batch an operator has at hand.  Writes go
** to a write batch applied by dp_rocks_commit (reads see only committed
** writes) with RocksDB's WAL off: recovery is from the checkpoints, and a
** checkpoint flushes the memtables first.
**
** Errors: DIPPER_IO with a diagnostic naming the folder and RocksDB's
** message; DIPPER_NOMEM.
*/
#ifndef DP_STATE_ROCKS_H
#define DP_STATE_ROCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/vector.h"

typedef struct dp_rocks dp_rocks;

/* Open an instance in the folder `dir` (made when missing; whatever is
** there is removed first): empty, or when `from` is not NULL a copy of the
** checkpoint in that folder (its SST files hard-linked, the rest copied, so
** the checkpoint stays as it was).  Errors go to d (borrowed while the
** instance lives).  The caller closes it with dp_rocks_close. */
int dp_rocks_open(const char *dir, const char *from, dp_diags *d, dp_rocks **out);
/* Close; remove_dir also removes its folder.  NULL is fine. */
void dp_rocks_close(dp_rocks *db, bool remove_dir);
/* Apply the writes made since the last commit. */
int dp_rocks_commit(dp_rocks *db);
/* Commit, flush the memtables and write a RocksDB checkpoint into the
** folder `dir` (replaced when it exists: a batch that runs again after a
** restart writes its checkpoint again). */
int dp_rocks_checkpoint(dp_rocks *db, const char *dir);

/* ---- the keyed row store ---- */

/* Rows fetched by a probe, and where they live (to mark them matched). */
typedef struct dp_rocks_refs {
  dp_buf keys;        /* their keys, back to back */
  dp_buf vals;        /* their values, back to back */
  size_t *koff, *voff;/* per fetched row: start in keys / vals (n+1 entries) */
  int64_t n, cap;
} dp_rocks_refs;

void dp_rocks_refs_clear(dp_rocks_refs *r);
void dp_rocks_refs_free(dp_rocks_refs *r);

/* Add every row of b to space `space` (0..15), keyed by its key columns
** keys[0..nkeys) and the time in column time_col (-1: time 0), with the
** matched flag flags[r] (NULL: 0). */
int dp_rocks_rows_add(dp_rocks *db, int space, const dp_batch *b, const int *keys, int nkeys,
                      int time_col, const uint8_t *flags);
/* Append to `into` (the stored rows' schema) every row of `space` whose key
** equals that of row `row` of `probe` in its columns pkeys[0..nkeys) (the
** key columns' types equal the stored ones'), oldest time first, and their
** places to refs.  nkeys 0: every row of the space. */
int dp_rocks_rows_find(dp_rocks *db, int space, const dp_batch *probe, int64_t row,
                       const int *pkeys, int nkeys, dp_batch *into, dp_rocks_refs *refs);
/* Whether fetched row i was matched before, and mark it matched. */
bool dp_rocks_rows_matched(const dp_rocks_refs *refs, int64_t i);
int dp_rocks_rows_mark(dp_rocks *db, dp_rocks_refs *refs, int64_t i);
/* Remove every row of `space` whose time is at or before `upto` (NULL
** times included); those never matched are appended to `unmatched` when it
** is not NULL.  *removed gets how many went. */
int dp_rocks_rows_expire(dp_rocks *db, int space, int64_t upto, dp_batch *unmatched,
                         int64_t *removed);

#endif /* DP_STATE_ROCKS_H */
