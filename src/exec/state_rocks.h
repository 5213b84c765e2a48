/*
** state_rocks.h — operator state in RocksDB ('state.backend' = 'rocksdb'):
** state larger than memory, checkpointed incrementally.
**
** Owns: one RocksDB instance per operator (dp_rocks): its folders (the live
** one and the checkpoints under <query folder>/rocksdb/<name>/, or a
** temporary folder without a checkpoint folder), when it opens (on first
** use: fresh, or from the checkpoint a restore named), its memory bounds,
** its checkpoints (RocksDB's own: hard links of the immutable SST files, so
** each one costs the files written since the one before), and on top of it
** a keyed row store with a time index (the "rows" calls) that the
** stream-stream join keeps each side in (and a window Top-N its rows), and
** keyed entries with a time index (the "entry" calls) that aggregations,
** deduplications and DISTINCT keep their keys in.
** Does not own: which rows an operator keeps or when they go (op_join.c),
** the checkpoint records that name a checkpoint (checkpoint.h; the driver
** purges this module's checkpoint folders with the records that name them,
** dp_ckpt_purge_folders).
**
** The row store keeps rows in chunks: the rows of one key that one call of
** dp_rocks_rows_add brought (a micro batch's rows of that key), one RocksDB
** entry each, so that a batch costs a write per distinct key, not per row,
** and a probe reads a key's chunks by one prefix seek.  Key layout (all
** integers big-endian, so that RocksDB's bytewise order is the order
** wanted):
**
**   chunk    0x10|space  hash:u64  klen:u32  key bytes  chunk:u64
**            -> n:u32  flags:u8 * n  times:i64 * n  rows (vector_codec.h)
**   by time  0x20|space  least time:u64  chunk:u64
**            -> greatest time:u64  n:u32  hash  klen  key bytes
**   meta     0x00 "seq"  -> the next chunk number (u64)
**
** The key bytes are the key columns' vector_codec encodings of the row;
** the hash and space are the 9-byte prefix of RocksDB's prefix bloom
** filters (whole-key filters are off: every read is a prefix seek).  A
** time is the event time with its sign bit flipped (NULL as the smallest),
** so the watermark's eviction is a scan of the time index up to a bound,
** proportional to what expired, never a pass over the state: a chunk whose
** greatest time is at or below the bound goes without being read, one that
** straddles it is read and written back with its later rows (and indexed
** by its new least time).  The flags are the rows' matched flags (outer
** joins): a mark rewrites the chunk once per probe slice.
**
** Memory: fixed by the options: a 32 MB block cache that also holds the
** index and filter blocks (level 0's pinned), two 16 MB write buffers;
** nothing per row stays in memory beyond the rows an operator has at hand.
** Writes go to a write batch applied by dp_rocks_commit (reads see only
** committed writes) with RocksDB's WAL off: recovery is from the
** checkpoints, and a checkpoint flushes the memtables first.
**
** Errors: DIPPER_IO with a diagnostic naming the folder and RocksDB's
** message; DIPPER_CORRUPT for an entry that does not read back;
** DIPPER_NOMEM.
*/
#ifndef DP_STATE_ROCKS_H
#define DP_STATE_ROCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/diag.h"
#include "core/vector.h"

typedef struct dp_rocks dp_rocks;

/* ---- the instance and its checkpoints ---- */

/* A state of its own for an operator named `name` (a folder name, the same
** in every run of the same plan) of the query whose checkpoint folder is
** `query_dir`, or in a temporary folder when that is NULL (removed by
** dp_rocks_free).  Nothing is opened yet.  Errors go to d (borrowed while
** the state lives). */
int dp_rocks_new(const char *query_dir, const char *name, dp_diags *d, dp_rocks **out);
/* Close and remove the live copy (a restart opens a checkpoint).  NULL is fine. */
void dp_rocks_free(dp_rocks *db);
/* The rows of `space` (0..15) have this schema (borrowed). */
void dp_rocks_space(dp_rocks *db, int space, const dp_schema *schema);
/* A batch is about to change the state: open it when not open yet (from
** the checkpoint dp_rocks_restore named, or empty). */
int dp_rocks_begin(dp_rocks *db);
/* The state as of batch `batch_id` into a checkpoint named by it, unless
** nothing changed since the last one or the restore; *ck gets the batch id
** of the checkpoint that holds the state. */
int dp_rocks_save(dp_rocks *db, int64_t batch_id, int64_t *ck);
/* Go back to checkpoint ck (refused with a diagnostic when it is not
** there); opened from it on the next dp_rocks_begin. */
int dp_rocks_restore(dp_rocks *db, int64_t ck);
/* Apply the writes made since the last commit. */
int dp_rocks_commit(dp_rocks *db);

/* ---- the keyed row store ---- */

/* What a probe fetched: per probe row, its matches as a range of the rows
** appended to `into`; per fetched row, where it lives (to mark it). */
typedef struct dp_rocks_refs {
  int64_t *first, *count; /* per probe row of the slice: into rows [first, first+count) */
  int64_t probe_cap;
  dp_buf keys, vals;      /* the fetched chunks' keys and values, back to back */
  size_t *koff, *voff;    /* per chunk: start in keys / vals (nchunks+1 entries) */
  uint8_t *dirty;         /* per chunk: a flag changed */
  int64_t nchunks, chunk_cap;
  int64_t *row_chunk;     /* per fetched row: its chunk */
  uint32_t *row_pos;      /* and its place in it */
  int64_t nrows, row_cap;
} dp_rocks_refs;

void dp_rocks_refs_free(dp_rocks_refs *r);

/* Add every row of b to space `space`, keyed by its key columns
** keys[0..nkeys) and the time in column time_col (-1: time 0), with the
** matched flag flags[r] (NULL: 0); one chunk per distinct key. */
int dp_rocks_rows_add(dp_rocks *db, int space, const dp_batch *b, const int *keys, int nkeys,
                      int time_col, const uint8_t *flags);
/* The time that dp_rocks_rows_add gives rows when it has no time column
** (0 until set): a regular join under a state TTL gives its rows the
** batch's start, so that the time index orders them by insertion. */
void dp_rocks_rows_time(dp_rocks *db, int64_t t);
/* For each row r of probe rows [start, end): the rows of `space` whose key
** equals r's in its columns pkeys[0..nkeys) (the key columns' types equal
** the stored ones') are appended to `into` (the space's schema) and are
** rows [refs->first[r - start], + refs->count[r - start]) of it.  A row
** with a NULL key column matches nothing; nkeys 0: every row matches every
** stored row.  The keys are read once each, in key order. */
int dp_rocks_rows_probe(dp_rocks *db, int space, const dp_batch *probe, int64_t start,
                        int64_t end, const int *pkeys, int nkeys, dp_batch *into,
                        dp_rocks_refs *refs);
/* Mark fetched row i (a row of `into`) matched; dp_rocks_rows_write_marks
** writes the marked chunks back and commits. */
void dp_rocks_rows_mark(dp_rocks_refs *refs, int64_t i);
int dp_rocks_rows_write_marks(dp_rocks *db, dp_rocks_refs *refs);
/* Remove every row of `space` whose time is at or before `upto` (NULL
** times included); those never matched are appended to `unmatched` when it
** is not NULL.  *removed gets how many went.  Commits. */
int dp_rocks_rows_expire(dp_rocks *db, int space, int64_t upto, dp_batch *unmatched,
                         int64_t *removed);

/* ---- keyed entries (aggregation, deduplication) ----
** One entry per key, its value the operator's bytes, and an optional
** time index over them:
**   entry    0x10|space  hash:u64  klen:u32  key bytes  -> value
**   by time  0x20|space  time:u64  entry key             -> (empty)
** (the key bytes are the key columns' vector_codec encodings; the hash and
** space the 9-byte prefix of the bloom filters, which point reads use).
** Writes go to the write batch that dp_rocks_commit applies. */

/* The entry key of row `row` of cols[0..ncols), appended to out. */
int dp_rocks_entry_key(dp_buf *out, int space, const dp_vector *const *cols, int ncols,
                       int64_t row);
/* The entry keys of rows ids[0..n) of cols (ids NULL: rows from..from+n),
** back to back in out (emptied first); key i is out->data[offs[i], offs[i+1]),
** *offs grown to n + 1 as needed. */
int dp_rocks_entry_keys(dp_buf *out, size_t **offs, int64_t *offs_cap, const dp_vector *const *cols,
                        int ncols, const int64_t *ids, int64_t from, int64_t n);
/* An entry key's columns appended to cols[0..ncols) (one row each). */
int dp_rocks_entry_cols(const char *key, size_t kn, dp_vector *const *cols, int ncols);
/* Read the entries of keys n keys (key i is keys->data[offs[i], offs[i+1])):
** fn(u, i, value) for each one there, in order; fn's error stops it. */
int dp_rocks_get_many(dp_rocks *db, const dp_buf *keys, const size_t *offs, int64_t n,
                      int (*fn)(void *u, int64_t i, const char *v, size_t vn), void *u);
/* order[0..n): the keys of dp_rocks_get_many's form in key order (a write
** batch in key order is what the memtable inserts fastest: measured, random
** order spent a third of an aggregation's time searching its skip list). */
int dp_rocks_key_order(const dp_buf *keys, const size_t *offs, int64_t n, int64_t *order);
void dp_rocks_put(dp_rocks *db, const char *key, size_t kn, const void *val, size_t vn);
void dp_rocks_delete(dp_rocks *db, const char *key, size_t kn);
/* Every key in [lo, hi) deleted (one range tombstone). */
void dp_rocks_delete_range(dp_rocks *db, const char *lo, size_t lon, const char *hi, size_t hin);
/* Index entry `key` (an entry key) at time t in space's time index. */
int dp_rocks_index_put(dp_rocks *db, int space, int64_t t, const char *key, size_t kn);
/* Unindex it (an entry whose time moved: a session window's key). */
void dp_rocks_index_delete(dp_rocks *db, int space, int64_t t, const char *key, size_t kn);
/* The entry keys the time index of `space` holds at times at or before
** `upto`, in time order, into keys (cleared) and (*offs)[0..*n] (grown,
** *cap its room); those index entries go (one range tombstone).  The
** entries themselves stay: the caller deletes what it drops. */
int dp_rocks_index_due(dp_rocks *db, int space, int64_t upto, dp_buf *keys, size_t **offs,
                       int64_t *cap, int64_t *n);
/* The same, with each key's time into (*times)[0..*n) (grown, *tcap its room). */
int dp_rocks_index_due_at(dp_rocks *db, int space, int64_t upto, dp_buf *keys, size_t **offs,
                          int64_t *cap, int64_t *n, int64_t **times, int64_t *tcap);
/* fn(u, key, value) for every entry of `space`, in key order. */
int dp_rocks_scan(dp_rocks *db, int space,
                  int (*fn)(void *u, const char *k, size_t kn, const char *v, size_t vn), void *u);

/* The same for at most `max` entries from the first key after `after` (an
** entry key; NULL: from the space's first), so that a pass over every
** entry holds a slice at a time; *n gets how many (0: none is left). */
int dp_rocks_scan_slice(dp_rocks *db, int space, const char *after, size_t an, int64_t max,
                        int (*fn)(void *u, const char *k, size_t kn, const char *v, size_t vn),
                        void *u, int64_t *n);

#endif /* DP_STATE_ROCKS_H */
