/*
** topn_int.h — the state of the Top-N operator (op_topn.c), shared with its
** RocksDB part for update mode (topn_rocks.c), which keeps the partitions'
** tops in RocksDB and uses this state as a cache of them.
*/
#ifndef DP_TOPN_INT_H
#define DP_TOPN_INT_H

#include "exec/due_heap.h"
#include "exec/exec.h"
#include "exec/rows.h"
#include "exec/state_rocks.h"
#include "exec/state_ttl.h"

struct dp_topn_rocks;

typedef enum topn_mode { TOPN_BOUNDED, TOPN_WINDOW, TOPN_UPDATE } topn_mode;

typedef struct topn_state {
  topn_mode mode;
  int wend_col;        /* TOPN_WINDOW: the input column holding window_end */
  int64_t prev_wm;     /* the watermark of the previous batch */
  dp_schema part_schema;
  dp_batch *rows;      /* rows waiting (bounded, window) or the current tops (update) */
  dp_rowlog log;       /* the changes of `rows` since the last checkpoint (rows.h) */
  dp_batch *fresh;     /* TOPN_UPDATE: this batch's new rows */
  /* per row of `rows` (row_cap of room): a tombstone flag (a row emitted
  ** from its window, a row pushed out of its top), and in update mode the
  ** rank it was emitted with and its arrival number (ties rank and emit in
  ** arrival order) */
  uint8_t *dead;
  int64_t *rank_of, *seq;
  int64_t row_cap, ndead, next_seq;
  /* TOPN_UPDATE: the partitions (`parts`, by id) and each one's top, the
  ** rows rows[pstart, pstart + pcount), none of them dead; pmark/ptix: the
  ** batch (stamp) that last touched it and its place in that batch's list */
  dp_groups parts;
  int64_t *pstart, *pcount, *pmark, *ptix;
  int64_t part_cap, stamp;
  /* TOPN_WINDOW: the live rows by window end (a NULL end: INT64_MIN);
  ** rows [0, nindexed) are on it */
  dp_due_heap due;
  int64_t nindexed;
  bool drained, emitted;
  dp_batch *result;    /* rows to emit in this batch, output layout */
  int64_t cursor;
  dp_batch *out;
  /* 'state.backend' = 'rocksdb', window mode (the section "over RocksDB"
  ** below): `rows` holds only the batch's new rows */
  dp_rocks *rocks;
  int64_t rcount;      /* rows stored */
  /* TOPN_UPDATE with a state TTL (ttl.ttl > 0): `parts` in order of their
  ** last row (state_ttl.h), and the changes of `parts` since the last
  ** checkpoint (rows.h: the partitions a compaction dropped, those added) */
  dp_state_ttl ttl;
  dp_rowlog plog;
  /* 'state.backend' = 'rocksdb', update mode (topn_rocks.h): `parts`,
  ** `rows` and `ttl` are a write-back cache of the partitions */
  struct dp_topn_rocks *urocks;
} topn_state;

/* Room for n rows' per-row data (dead, rank_of, seq). */
int dp_topn_grow_rows(topn_state *st, int64_t n);
/* Room for n partitions; the new ones empty. */
int dp_topn_grow_parts(topn_state *st, int64_t n);
/* Row pos of `rows` becomes a tombstone. */
int dp_topn_mark_dead(topn_state *st, int64_t pos);
/* The tombstones dropped once they are half of `rows` (and at least 1,024). */
int dp_topn_maybe_compact(topn_state *st);

#endif /* DP_TOPN_INT_H */
