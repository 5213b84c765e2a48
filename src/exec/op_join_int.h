/*
** op_join_int.h — what op_join.c (the join operator: setup, probing, the
** run modes, the checkpoint blob) and op_join_side.c (the stored sides of
** a join of two streams: append, expiry, compaction, their checkpoint
** forms) share: the operator's state and the functions each calls of the
** other.  Private to the two files.
*/
#ifndef DP_OP_JOIN_INT_H
#define DP_OP_JOIN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/bytes.h"
#include "exec/due_heap.h"
#include "exec/exec.h"
#include "exec/rows.h"
#include "exec/state_rocks.h"
#include "exec/state_ttl.h"

/* One entry of a stored side's time index: a row and its expiry, the
** watermark at or past which no row still to come can meet it. */
typedef struct tix_entry {
  int64_t key, id;
} tix_entry;

/* A run of entries [pos, end) of the time index in expiry order: the
** entries before pos have expired. */
typedef struct tix_run {
  int64_t pos, end;
} tix_run;

typedef struct join_state {
  dp_join_kind kind;
  bool bounded;        /* both inputs end (else stream-static) */
  int bside, pside;    /* input index of the build and the probe side */
  int nkeys;           /* keys used for hashing (0: nested loop) */
  int *bkeys, *pkeys;  /* key columns of the build and probe side */
  bool residual;       /* cond says more than the keys: evaluate it on pairs */
  bool probe_outer;    /* unmatched probe rows leave padded */
  bool build_outer;    /* unmatched build rows leave padded, at the end */
  bool mark_build;     /* record which build rows matched (build_hit) */
  bool semi;           /* SEMI/ANTI: output = probe rows only */
  /* Expression keys: an equality of an expression over one side and one over
  ** the other (Nexmark q13's MOD(B.auction, 10000) = S.key) hashes too, not
  ** only a column against a column.  Then every key is an expression (a
  ** column is one), bkeys and pkeys are 0..nkeys-1 and index the key values:
  ** bkb per build row (made as the rows are kept, again after a restore),
  ** pkv per row of st->probe (made at its first slice, freed with as_of). */
  bool ekeys;
  dp_expr **bkexpr, **pkexpr; /* over the build, the probe side's own columns */
  dp_schema kschema;   /* the key values' columns */
  dp_batch *bkb;       /* ekeys: the key values of every build row */
  dp_vector **pkv;     /* ekeys: the key values of the probe rows, or NULL */
  bool keys_stale;     /* ekeys: restored, bkb and the index to make again */
  int version_col;     /* temporal join: the build side's version time column, or -1 */
  dp_vector *as_of;    /* temporal join: FOR SYSTEM_TIME AS OF over the probe rows */
  bool versions_stream;/* temporal join of two streams: left rows wait for the watermark */
  dp_batch *pending;   /* versions_stream: left rows whose AS OF time it has not reached */
  dp_rowlog build_log, probe_log, pending_log; /* their changes since the last checkpoint */
  dp_rowlog *hit_log;  /* the log of the store build_hit flags (probe_slice marks it) */
  /* versions_stream with keys, a version time and no residual condition
  ** (vord): each key's versions in time order (vl[key]: build row ids by
  ** (time, arrival)), a probe row's key found through the hash index; the
  ** versions the watermark makes unreachable are tombstones (vdead), by a
  ** heap of each key's second version time (vdue) — op_join.c, "versions
  ** in order" */
  bool vord, vstale;   /* vstale: restored, the lists to make again */
  struct vlist {
    int64_t *id;
    int64_t n, cap;
  } *vl;
  int64_t nvl, vl_cap;
  int64_t *vkey;       /* per build row: its key's number, -1 (a NULL key or time) */
  uint8_t *vdead;      /* per build row: unreachable, not yet compacted away */
  int64_t vrow_cap, vndead, vindexed; /* rows [0, vindexed) are in the lists */
  dp_due_heap vdue;

  dp_batch *build;     /* every build-side row */
  const uint8_t *build_dead; /* two streams: per build row, expired (probes skip it), or NULL */
  dp_rowhash *index;   /* build row id -> hash of its keys */
  dp_rowhash own_index;
  uint8_t *build_hit;  /* per build row: matched (build_outer) */
  int64_t hit_cap;
  dp_batch *probe;     /* probe rows waiting (bounded: all; stream: this batch's) */
  int64_t probe_cursor;
  int64_t unmatched_cursor; /* build_outer: next build row to look at */
  bool drained, done;

  /* two streams (stream2): both sides kept, each with its index (see
  ** "two streams" below for how a side's store works) */
  bool stream2;
  struct side {
    dp_batch *store;   /* rows kept (the read columns only), live and expired */
    dp_rowhash index;  /* every stored row; probes skip the expired ones */
    uint8_t *hit;      /* per stored row: matched (outer sides) */
    int64_t hit_cap;
    uint8_t *dead;     /* per stored row: expired, not yet compacted away */
    int64_t dead_cap, ndead;
    tix_entry *tix;    /* the time index: runs of entries in expiry order */
    int64_t ntix, tix_cap;
    tix_run *runs;     /* the runs not yet expired, oldest first */
    int64_t nruns, runs_cap;
    int64_t evict_wm;  /* the watermark of the last eviction, or DP_WATERMARK_NONE */
    bool stale;        /* restored: dead marks and time index to rebuild (side_ready) */
    int *keys;         /* key columns (of the store) */
    int time_col;      /* the event-time column the bound is on (of the store), or -1 */
    bool outer;        /* unmatched rows leave padded when evicted */
    int ncols;         /* the input's columns */
    int *map;          /* input column -> store column, or -1: no one reads it */
    int *kept;         /* store column -> input column */
    int nkept;
    dp_schema kschema; /* the store's columns */
    dp_vector **vcols; /* keep_delta: the input's read columns */
    dp_batch *delta;   /* this batch's new rows (the store's columns) */
    uint8_t *dhit;     /* per new row: matched while probing */
    int64_t dhit_cap;
    dp_rowlog log;     /* the store's changes since the last checkpoint */
    dp_state_ttl ttl;  /* ttl.ttl > 0: the live rows by insertion, expired by the
                       ** side's state TTL (state_ttl.h; ids: store positions) */
  } side[2];
  int64_t now;         /* stream2: the batch's processing time (µs) */
  const int *lmap, *rmap; /* stream2: the sides' maps (gather_pairs), else NULL */
  /* two streams over RocksDB ('state.backend' = 'rocksdb'): the stores stay
  ** empty and each side's rows (its kept columns) live in rocks, space 0
  ** left, 1 right */
  dp_rocks *rocks;     /* NULL: the state is in memory */
  int64_t rocks_rows[2];
  int64_t rocks_ttl[2];/* per side: its state TTL over RocksDB (µs; 0: none), by insertion */
  int64_t rocks_from[2];/* per side under a TTL: its rows stored before this time count as
                       ** stored at it (a checkpoint written without the TTL keeps its rows
                       ** at time 0: they count from the restore, as memory's do); INT64_MIN:
                       ** none (op_join.c's rocks_expire_ttl) */
  dp_batch *fetched[2];/* per side: a slice's matches, or its expired rows, from rocks */
  dp_rocks_refs refs;  /* where they are */
  int phase;           /* stream2: 0 new left rows, 1 new right rows, 2 evict, 3 done */
  int64_t evict_lower, evict_upper; /* the time bound: left.t in [right.t + lower, right.t + upper] */

  int nleft, nright;   /* the inputs' columns */
  dp_schema both;      /* left ++ right: the rows the condition sees */
  dp_batch *cand;      /* candidate pairs, for the condition */
  dp_batch *out;
  /* Columns no one reads are not gathered: cand gets the ones the condition
  ** reads, out the ones the plan above reads (plan/prune.h); the batches
  ** handed on (the views) carry all-NULL fillers in the others. */
  bool *cand_need, *out_need;
  dp_batch cand_view, out_view;
  dp_vector **cand_fill, **out_fill;
  int64_t *pi, *bi;    /* pairs: probe row, build row (-1: padding) */
  int64_t npairs, cap_pairs;
  uint8_t *probe_hit;  /* per probe row of the slice */
  int64_t probe_hit_cap;
} join_state;
/* ---- op_join.c ---- */
/* Pair probe row p with build row b (-1: padding) in st->pi / st->bi. */
int dp_join_add_pair(join_state *st, int64_t p, int64_t b);
/* The pairs [0, npairs) as joined rows onto st->out, and its view. */
int dp_join_gather_out(join_state *st);

/* ---- op_join_side.c: two streams, a side's store ---- */
/* *hit grown to `need` flags at least, the new ones clear. */
int dp_join_grow_hits(uint8_t **hit, int64_t *cap, int64_t need);
/* Point the probe machinery at: new rows of side s probing the other's store. */
void dp_join_aim(join_state *st, int s);
/* Side s's new rows (its delta) join its store, hash index and time index. */
int dp_join_side_append(join_state *st, int s);
/* Drop the stored rows the watermark has passed; the unmatched rows of an
** outer side leave padded into st->out. */
int dp_join_evict(dp_op *op);
/* Before a batch's input: the stored rows older than their side's state TTL
** dropped, without output (Flink's idle state retention for joins). */
int dp_join_expire_ttl(join_state *st);
/* After a restore: every side's indexes and dead marks rebuilt, once. */
int dp_join_sides_ready(join_state *st);
/* The live rows of both sides (the state_rows metric). */
int64_t dp_join_rows(const join_state *st);
/* A side's checkpoint, whole and as a delta (the blob's layout: op_join.c). */
int dp_join_side_save(dp_op *op, dp_buf *out, int s);
int dp_join_side_load(dp_op *op, dp_rd *in, int s);
int dp_join_side_save_delta(dp_op *op, dp_buf *out, int s);
int dp_join_side_load_delta(dp_op *op, dp_rd *in, int s);
/* One store's delta (any shape): its rows.h log, then the rows appended
** since the base with their flags (when kept); load applies one, the index
** (when given) ending as it would after adding the rows in order. */
int dp_join_store_save_delta(dp_buf *out, const dp_batch *rows, const uint8_t *hit, bool flags,
                             const dp_rowlog *log);
int dp_join_store_load_delta(dp_rd *in, dp_batch **rows, uint8_t **hit, int64_t *cap, bool flags,
                             dp_rowhash *index, const int *keys, int nkeys);

/* The sides' state TTL lists, after both sides in a blob (whole or delta):
** nothing when no side has a TTL.  Load reads what save wrote, if it is
** there (the rest of `in`), for the stores as restored; without it every
** row counts as inserted at `now`. */
void dp_join_ttl_save(const join_state *st, dp_buf *out);
int dp_join_ttl_load(dp_op *op, dp_rd *in, int64_t now);

#endif /* DP_OP_JOIN_INT_H */
