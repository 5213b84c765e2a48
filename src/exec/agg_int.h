/*
** agg_int.h — the state of the AGGREGATE operator, shared by its two files:
** op_aggregate.c (input, output modes, the closing index, tombstones and
** compaction) and agg_checkpoint.c (its checkpoints: the whole state and the
** deltas).  Nothing else includes it.
*/
#ifndef DP_AGG_INT_H
#define DP_AGG_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/bytes.h"
#include "exec/agg_func.h"
#include "exec/agg_rocks.h"
#include "exec/due_heap.h"
#include "exec/exec.h"
#include "exec/hashtable.h"
#include "exec/state_ttl.h"

/* A growing list of ids. */
typedef struct idlist {
  int64_t *v;
  int64_t n, cap;
} idlist;

typedef struct agg_call_state {
  dp_agg_state st;
  int64_t base_entries;    /* DISTINCT entries below this are the base's (deltas) */
  int nargs;
  dp_vector *args[2];      /* this batch: borrowed or owned (owned[k]) */
  bool owned[2];
  dp_hashtable distinct;   /* DISTINCT: keys (group id, argument 0) */
  bool has_distinct;
  /* DISTINCT in session windows: each session's entries of `distinct` as a
  ** chain (d_head per session, d_next per entry), for merging; and 1-row
  ** probe vectors. */
  int64_t *d_head, *d_next;
  int64_t d_head_cap, d_next_cap;
  dp_vector *probe_gid, *probe_val;
} agg_call_state;

typedef struct agg_state {
  int ngroup, naggs;
  bool windowed, session;
  bool evicts;               /* a window aggregation, or a GROUP BY with an event-time key */
  int wstart, wend;          /* group key positions, or -1; wend is the event-time key
                                of a plain GROUP BY that has one */
  int nkeys;                 /* hash table keys: every group key, or (session) the partition ones */
  int *key_of_group;         /* session: group position -> ht key, -1 for wstart/wend */
  dp_hashtable ht;
  agg_call_state *calls;
  /* this batch */
  dp_vector **gvec;          /* per group key: its vector (borrowed or owned) */
  bool *gowned;
  int64_t *ids, *rows, *sel, *hashes;
  int64_t scratch_cap;
  /* per group (per session for sessions) */
  uint8_t *changed;
  uint8_t *gone;             /* groups: closed or expired, not yet compacted away */
  int64_t gcap;
  idlist touched;            /* the ids flagged changed, in first-touch order */
  idlist cand;               /* emit: the states it looks at */
  /* closing (evicts, streaming): a min-heap of (end, id) over the live
  ** states; sessions push again when their end grows, so an entry whose end
  ** is no longer its session's, or whose state is dead or gone, is stale */
  dp_due_heap due;           /* (end, id) */
  int64_t due_known;         /* groups: ids below this are in the heap */
  /* tombstones (see "Drops" below): state ids dead but still numbered */
  int64_t ngone;             /* groups gone, or sessions dead */
  idlist gone_new;           /* groups gone since the base, today's numbering */
  bool streaming;
  uint8_t reading;           /* a restore: the version of the blob read */
  /* sessions: sid is the state index */
  int64_t nsess, scap;
  int64_t *s_key, *s_start, *s_end, *s_next, *s_parent;
  bool *s_dead;
  int64_t *key_head;         /* per ht key: first session (by start), -1 */
  int64_t kcap;
  /* deltas: what changed since the base (the last save or restore) */
  uint8_t *dirty;            /* per state id: listed in dirty_ids (capacity gcap) */
  idlist dirty_ids;          /* state ids whose states changed, in today's numbering */
  int64_t base_live;         /* state ids below this are the base's, the rest are new */
  idlist dropped;            /* the base's state ids dropped since, ascending */
  int64_t base_keys_live;    /* sessions: the same two for the keys of ht */
  idlist keys_dropped;
  /* output */
  dp_batch *out;
  int64_t *emit;
  int64_t emit_cap;
  bool done;                 /* this micro-batch's output was returned */
  /* 'state.backend' = 'rocksdb' (agg_rocks.h): the table and states cache
  ** the batch's groups only */
  dp_agg_rocks *rocks;
  dp_agg_state **rstates;    /* per call: &calls[a].st */
  dp_hashtable **rdistinct;  /* per call: &calls[a].distinct, or NULL */
  int rocks_phase;           /* 0 before the batch's input, 1 after (due groups next) */
  /* 'table.exec.state.ttl' or a STATE_TTL hint (ttl.ttl > 0): the groups by
  ** last write, those idle that long gone before the batch's input
  ** (state_ttl.h) */
  dp_state_ttl ttl;
} agg_state;

/* ---- op_aggregate.c, for the checkpoints ---- */

/* Room for `need` elements of `elem` bytes at *pp (capacity *cap), the new
** ones zeroed; and a push on a growing list. */
int dp_aggop_ensure(void *pp, int64_t *cap, int64_t need, size_t elem);
int dp_aggop_idlist_push(idlist *l, int64_t x);
/* Room for n states' flags (changed, dirty, gone); grow_groups: and for
** every call's states. */
int dp_aggop_grow_flags(agg_state *st, int64_t n);
int dp_aggop_grow_groups(agg_state *st, int64_t n);
/* Sessions: room for n sessions' arrays (s_key .. s_dead), and a list head
** (-1: none) for every key of the hash table. */
int dp_aggop_grow_sessions(agg_state *st, int64_t n);
int dp_aggop_grow_key_heads(agg_state *st);
/* A renumbering (remap[old] = new id or -1, n ids before, kept after)
** carried to every call's states and DISTINCT table (replay: a restore's,
** which never rebuilds a store), and to the sessions' arrays; the sessions'
** key lists rebuilt from their keys and starts. */
int dp_aggop_compact_calls(agg_state *st, const int64_t *remap, int64_t n, int64_t kept, bool replay);
void dp_aggop_compact_sessions(agg_state *st, const int64_t *remap, int64_t n);
void dp_aggop_relink_sessions(agg_state *st);
/* DISTINCT in sessions: entry e at the head of session g's chain. */
int dp_aggop_chain_link(agg_call_state *c, int64_t g, int64_t e);
/* State ids in use (sessions or groups), those live, whether g is a
** tombstone. */
int64_t dp_aggop_nstates(const agg_state *st);
int64_t dp_aggop_live_count(const agg_state *st);
bool dp_aggop_is_dead(const agg_state *st, int64_t g);
/* The closing index rebuilt over every live state (after a restore). */
int dp_aggop_rebuild_due(agg_state *st);
/* The tombstones compacted away. */
int dp_aggop_compact_gone(agg_state *st);
/* qsort's order of int64_t ids. */
int dp_aggop_cmp_id(const void *a, const void *b);

/* ---- agg_checkpoint.c: the operator's checkpoint entry points ---- */

int dp_aggop_save_state(dp_op *op, dp_buf *out);
int dp_aggop_restore_state(dp_op *op, dp_rd *in);
int dp_aggop_save_delta(dp_op *op, dp_buf *out);
int dp_aggop_restore_delta(dp_op *op, dp_rd *in);
void dp_aggop_restore_expect(dp_op *op, const dp_rd *deltas, int n);

#endif /* DP_AGG_INT_H */
