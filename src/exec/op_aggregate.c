/*
** op_aggregate.c — AGGREGATE: hash aggregation over micro-batches, with
** Spark's output modes.
**
** Each input batch: evaluate the group keys (bare columns are borrowed),
** drop late rows (a window aggregation: the row's window_end ≤ the late
** watermark, the previous batch's — exec.h; they are counted in
** metrics.late_dropped), find or insert the
** groups in the hash table (hashtable.h), and fold every aggregate call's
** arguments into its column of states (agg_func.h) — FILTER (WHERE ..)
** narrows the rows first; DISTINCT passes each (group, value) pair once,
** through a second hash table keyed by both.
**
** At the end of the micro-batch's input, one output batch by output mode:
**   append    a window aggregation emits the groups whose window_end ≤ the
**             watermark, once, and drops them (a GROUP BY of an event-time
**             column likewise when that time ≤ the watermark, rows at or
**             below the late watermark being late); others emit at the
**             final batch;
**   update    the groups changed in this batch; windows whose end the
**             watermark passed are dropped afterwards;
**   complete  every group, every batch; nothing is dropped.
** Batch mode (bounded, not streaming) emits everything in the final batch.
** The final batch of a bounded streaming run (watermark +∞) closes every
** window in append mode.
**
** Session windows: the window operator gives each row [ts, ts + gap); here,
** per key (the group keys other than window_start/window_end), the sessions
** are kept sorted by start in a linked list, and a row that overlaps or
** touches some of them merges them into the earliest (their states merge
** with dp_agg_state_merge).  Touching counts: a row exactly one gap after
** the last one extends the session, as in Flink (TimeWindow.intersects is
** inclusive) and Spark (a session ends only before the next row's start).
** A session is final when its end ≤ the watermark; a row is late when its
** own session [ts, ts + gap) ends ≤ the late watermark.
** DISTINCT in a session window keeps each session's values as a chain of
** the (session, value) table; merging re-adds the merged session's values
** that the surviving one lacks, so each distinct value counts once.
**
** Checkpoints (save_state/restore_state, at the end of this file): the whole
** state after a micro-batch — group keys, sessions, every call's states and
** DISTINCT tables — as one versioned, checksummed blob.  Restoring inserts
** the keys in their order, so group ids, and with them the order of output
** rows, are those of the run that saved.  save_delta writes only what
** changed since the last checkpoint (groups and sessions created, changed
** and dropped, DISTINCT entries created, kept values appended): a batch that
** changed k of n groups costs O(k) plus what it created and dropped, never
** a pass over the n; consume marks the changed state ids in a list as it
** goes (the `changed` flags are per batch: emit clears them).
*/
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "core/grow.h"
#include "core/vector_codec.h"
#include "exec/agg_func.h"
#include "exec/agg_rocks.h"
#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/hashtable.h"
#include "exec/rows.h"
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
  int64_t gcap;
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
  ** last write, those idle that long dropped at emit (state_ttl.h) */
  dp_state_ttl ttl;
} agg_state;

static int ensure(void *pp, int64_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return DIPPER_OK;
  int64_t old = *cap;
  if (dp_grow(pp, cap, need, elem, 256)) return DIPPER_NOMEM;
  char *q;
  memcpy(&q, pp, sizeof q);
  dp_prefault(q + (size_t)old * elem, (size_t)(*cap - old) * elem); /* zeroed next */
  memset(q + (size_t)old * elem, 0, (size_t)(*cap - old) * elem);
  return DIPPER_OK;
}

static int idlist_push(idlist *l, int64_t x) {
  int rc = ensure(&l->v, &l->cap, l->n + 1, sizeof *l->v);
  if (!rc) l->v[l->n++] = x;
  return rc;
}

/* State id g changed: the next delta writes its states. */
static int mark_dirty(agg_state *st, int64_t g) {
  if (st->dirty[g]) return DIPPER_OK;
  st->dirty[g] = 1;
  return idlist_push(&st->dirty_ids, g);
}

static void free_batch_vectors(agg_state *st) {
  for (int j = 0; st->gvec && st->gowned && j < st->ngroup; j++) {
    if (st->gowned[j]) dp_vector_free(st->gvec[j]);
    st->gvec[j] = NULL;
    st->gowned[j] = false;
  }
  for (int a = 0; st->calls && a < st->naggs; a++) {
    agg_call_state *c = &st->calls[a];
    for (int k = 0; k < 2; k++) {
      if (c->owned[k]) dp_vector_free(c->args[k]);
      c->args[k] = NULL;
      c->owned[k] = false;
    }
  }
}

static void agg_close(dp_op *op) {
  agg_state *st = op->state;
  if (!st) return;
  if (st->gvec) free_batch_vectors(st);
  dp_agg_rocks_free(st->rocks);
  dp_state_ttl_free(&st->ttl);
  free(st->rstates);
  free(st->rdistinct);
  dp_ht_free(&st->ht);
  if (st->calls)
    for (int a = 0; a < st->naggs; a++) {
      dp_agg_state_free(&st->calls[a].st);
      dp_ht_free(&st->calls[a].distinct);
      free(st->calls[a].d_head);
      free(st->calls[a].d_next);
      dp_vector_free(st->calls[a].probe_gid);
      dp_vector_free(st->calls[a].probe_val);
    }
  free(st->calls);
  free(st->key_of_group);
  free(st->gvec);
  free(st->gowned);
  free(st->ids);
  free(st->rows);
  free(st->sel);
  free(st->hashes);
  free(st->changed);
  free(st->dirty);
  free(st->dirty_ids.v);
  free(st->dropped.v);
  free(st->keys_dropped.v);
  free(st->s_key);
  free(st->s_start);
  free(st->s_end);
  free(st->s_next);
  free(st->s_parent);
  free(st->s_dead);
  free(st->key_head);
  free(st->emit);
  dp_batch_free(st->out);
  free(st);
  op->state = NULL;
}

/* 'state.backend' = 'rocksdb': the groups in RocksDB, or a refusal naming
** what this aggregation holds that the RocksDB state does not take. */
static int rocks_setup(dp_op *op) {
  agg_state *st = op->state;
  st->rstates = calloc((size_t)(st->naggs > 0 ? st->naggs : 1), sizeof *st->rstates);
  st->rdistinct = calloc((size_t)(st->naggs > 0 ? st->naggs : 1), sizeof *st->rdistinct);
  if (!st->rstates || !st->rdistinct) return DIPPER_NOMEM;
  for (int a = 0; a < st->naggs; a++) st->rstates[a] = &st->calls[a].st;
  for (int a = 0; a < st->naggs; a++)
    if (st->calls[a].has_distinct) st->rdistinct[a] = &st->calls[a].distinct;
  const char *why = dp_agg_rocks_refusal(op->ex, op->plan, st->rstates);
  if (why)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, op->plan->span,
                    "'state.backend' = 'rocksdb' does not take this aggregation (line %d): it "
                    "has %s; keep its state in memory ('state.backend' = 'hashmap') or change "
                    "the query", (int)op->plan->span.line, why);
  int end_key = st->evicts && st->wend >= 0 ? st->key_of_group[st->wend] : -1;
  return dp_agg_rocks_new(op, &st->ht, st->rstates, st->rdistinct, end_key, &st->rocks);
}

/* Idle state retention where the analysis set one (analyze_ttl.c). */
static int ttl_setup(dp_op *op) {
  agg_state *st = op->state;
  int64_t ttl = op->plan->props.state_ttl[0];
  if (ttl <= 0 || !op->ex->query || !op->ex->query->streaming || st->windowed) return DIPPER_OK;
  if (st->rocks)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, op->plan->span,
                    "'table.exec.state.ttl' (or STATE_TTL) is carried out for aggregations kept "
                    "in memory only so far: set 'state.backend' = 'hashmap', or drop the TTL");
  return dp_state_ttl_init(&st->ttl, ttl);
}

static int agg_open(dp_op *op) {
  const dp_plan *p = op->plan;
  dp_diags *d = op->ex->diags;
  agg_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  st->ngroup = p->u.aggregate.ngroup;
  st->naggs = p->u.aggregate.naggs;
  st->windowed = p->u.aggregate.window != NULL;
  st->wstart = st->windowed ? p->u.aggregate.wstart : -1;
  st->wend = st->windowed ? p->u.aggregate.wend : -1;
  st->session = st->windowed && p->u.aggregate.window->u.window.kind == DP_WIN_SESSION;
  st->evicts = st->windowed;
  /* GROUP BY an event-time column (Spark): a group is final once the
  ** watermark reaches its time, like a window at its end. */
  const int *time_attr = p->inputs[0]->props.time_attr;
  for (int j = 0; !st->windowed && time_attr && j < st->ngroup; j++) {
    int col = dp_expr_as_column(p->u.aggregate.group[j]);
    if (col >= 0 && col < p->inputs[0]->schema.ncols && time_attr[col] >= 0 &&
        dp_type_is_timestamp(p->u.aggregate.group[j]->type)) {
      st->wend = j;
      st->evicts = true;
      break;
    }
  }
  int rc = DIPPER_NOMEM;
  size_t ng = (size_t)(st->ngroup > 0 ? st->ngroup : 1);
  st->gvec = calloc(ng, sizeof *st->gvec);
  st->gowned = calloc(ng, sizeof *st->gowned);
  st->key_of_group = calloc(ng, sizeof *st->key_of_group);
  st->calls = calloc((size_t)(st->naggs > 0 ? st->naggs : 1), sizeof *st->calls);
  const dp_type **ktypes = calloc(ng, sizeof *ktypes);
  st->out = dp_batch_new(&p->schema, 0);
  if (!st->gvec || !st->gowned || !st->key_of_group || !st->calls || !ktypes || !st->out) goto fail;
  for (int j = 0; j < st->ngroup; j++) {
    if (st->session && (j == st->wstart || j == st->wend)) {
      st->key_of_group[j] = -1;
      continue;
    }
    st->key_of_group[j] = st->nkeys;
    ktypes[st->nkeys++] = p->u.aggregate.group[j]->type;
  }
  if ((rc = dp_ht_init(&st->ht, st->nkeys, ktypes)) != DIPPER_OK) goto fail;
  for (int a = 0; a < st->naggs; a++) {
    const dp_agg_call *call = &p->u.aggregate.aggs[a];
    agg_call_state *c = &st->calls[a];
    c->nargs = call->nargs > 2 ? 2 : call->nargs;
    rc = dp_agg_state_init(&c->st, call);
    c->st.diags = d; /* a C aggregate's failure message goes there */
    if (rc == DIPPER_UNSUPPORTED) {
      rc = dp_error(d, DIPPER_UNSUPPORTED, call->span,
                    "the embedded engine has no aggregate %s; use one of COUNT, SUM, AVG, MIN, MAX, "
                    "FIRST_VALUE, LAST_VALUE, LISTAGG, COLLECT, STDDEV/VARIANCE, BOOL_AND/OR, "
                    "APPROX_COUNT_DISTINCT",
                    call->fn->name);
      goto fail;
    }
    if (rc) goto fail;
    if (call->distinct && call->nargs > 0) {
      const dp_type *dt[2] = {dp_type_of(DP_T_BIGINT), call->args[0]->type};
      c->has_distinct = true;
      if ((rc = dp_ht_init(&c->distinct, 2, dt)) != DIPPER_OK) goto fail;
      if (st->session) {
        c->probe_gid = dp_vector_new(dt[0], 1);
        c->probe_val = dp_vector_new(dt[1], 1);
        if (!c->probe_gid || !c->probe_val) {
          rc = DIPPER_NOMEM;
          goto fail;
        }
      }
    }
  }
  if (op->ex->query && op->ex->query->streaming && dp_exec_state_rocks(op->ex) &&
      (rc = rocks_setup(op)))
    goto fail;
  if ((rc = ttl_setup(op))) goto fail;
  free(ktypes);
  return DIPPER_OK;
fail:
  free(ktypes);
  agg_close(op);
  return rc ? rc : DIPPER_NOMEM;
}

/* Borrow a bare column, evaluate anything else. */
static int eval_into(dp_op *op, const dp_expr *e, const dp_batch *in, dp_vector **v, bool *owned) {
  if (e->kind == DP_E_COLUMN && e->u.column.outer == 0 && e->u.column.index < in->ncols) {
    *v = in->cols[e->u.column.index];
    *owned = false;
    return DIPPER_OK;
  }
  *owned = true;
  return dp_eval(op->ex, e, in, v);
}

/* Room for n states' flags (changed, dirty). */
static int grow_flags(agg_state *st, int64_t n) {
  int64_t cap = st->gcap, dcap = st->gcap;
  int rc = ensure(&st->changed, &cap, n, sizeof *st->changed);
  if (!rc) rc = ensure(&st->dirty, &dcap, n, sizeof *st->dirty);
  if (rc) return rc;
  st->gcap = cap;
  return DIPPER_OK;
}

static int grow_groups(agg_state *st, int64_t n) {
  int rc = grow_flags(st, n);
  if (rc) return rc;
  for (int a = 0; a < st->naggs; a++)
    if ((rc = dp_agg_state_reserve(&st->calls[a].st, n)) != DIPPER_OK) return rc;
  return DIPPER_OK;
}

/* ---- sessions ---- */

static int64_t find_root(const agg_state *st, int64_t s) {
  while (st->s_parent[s] != s) s = st->s_parent[s];
  return s;
}

static int new_session(agg_state *st, int64_t key, int64_t start, int64_t end, int64_t *sid) {
  int64_t n = st->nsess + 1, cap;
  int rc = DIPPER_OK;
#define GROW_S(arr)                                          \
  cap = st->scap;                                            \
  if (!rc) rc = ensure(&st->arr, &cap, n, sizeof *st->arr);
  GROW_S(s_key) GROW_S(s_start) GROW_S(s_end) GROW_S(s_next) GROW_S(s_parent) GROW_S(s_dead)
#undef GROW_S
  if (rc) return rc;
  st->scap = cap;
  if ((rc = grow_groups(st, n)) != DIPPER_OK) return rc;
  int64_t s = st->nsess++;
  st->s_key[s] = key;
  st->s_start[s] = start;
  st->s_end[s] = end;
  st->s_parent[s] = s;
  st->s_dead[s] = false;
  st->changed[s] = 0;
  for (int a = 0; a < st->naggs; a++) dp_agg_state_reset(&st->calls[a].st, s);
  /* Insert sorted by start into the key's list. */
  int64_t *link = &st->key_head[key];
  while (*link >= 0 && st->s_start[*link] <= start) link = &st->s_next[*link];
  st->s_next[s] = *link;
  *link = s;
  *sid = s;
  return DIPPER_OK;
}

/* Put entry e of the DISTINCT table at the head of group g's chain. */
static int chain_link(agg_call_state *c, int64_t g, int64_t e) {
  int64_t old = c->d_head_cap;
  int rc = ensure(&c->d_head, &c->d_head_cap, g + 1, sizeof *c->d_head);
  if (rc) return rc;
  for (int64_t k = old; k < c->d_head_cap; k++) c->d_head[k] = -1;
  if ((rc = ensure(&c->d_next, &c->d_next_cap, e + 1, sizeof *c->d_next))) return rc;
  c->d_next[e] = c->d_head[g];
  c->d_head[g] = e;
  return DIPPER_OK;
}

/* DISTINCT: fold session src's values into dst, each value dst lacks once. */
static int merge_distinct(agg_call_state *c, int64_t dst, int64_t src) {
  if (src >= c->d_head_cap) return DIPPER_OK;
  int rc = DIPPER_OK;
  for (int64_t e = c->d_head[src]; e >= 0 && !rc; e = c->d_next[e]) {
    dp_vector_clear(c->probe_gid);
    dp_vector_clear(c->probe_val);
    if ((rc = dp_vector_append_i64(c->probe_gid, dst))) break;
    if ((rc = dp_vector_take(c->probe_val, c->distinct.keys[1], &e, 0, 1))) break;
    const dp_vector *probe[2] = {c->probe_gid, c->probe_val};
    uint64_t h;
    int64_t id, created = 0;
    dp_ht_hash(probe, 2, 1, &h);
    rc = dp_ht_find_or_insert(&c->distinct, probe, &h, NULL, 1, &id, &created);
    if (rc || !created) continue;
    if ((rc = chain_link(c, dst, id))) break;
    const dp_vector *args[2] = {c->probe_val, NULL};
    int64_t g0 = dst;
    rc = dp_agg_state_update(&c->st, args, &g0, NULL, 1);
  }
  c->d_head[src] = -1;
  return rc;
}

/* Fold session s into target (which overlaps it) and retire s. */
static int merge_session(agg_state *st, int64_t target, int64_t s) {
  int rc0 = mark_dirty(st, target);
  if (!rc0) rc0 = mark_dirty(st, s);
  if (rc0) return rc0;
  for (int a = 0; a < st->naggs; a++) {
    agg_call_state *c = &st->calls[a];
    int rc = c->has_distinct ? merge_distinct(c, target, s) : dp_agg_state_merge(&c->st, target, s);
    if (rc) return rc;
  }
  if (st->s_end[s] > st->s_end[target]) st->s_end[target] = st->s_end[s];
  st->s_dead[s] = true;
  st->s_parent[s] = target;
  st->changed[target] |= st->changed[s];
  return DIPPER_OK;
}

/* The session of a row of `key` covering [start, end), merging every
** session it overlaps or touches into the earliest one. */
static int session_for(agg_state *st, int64_t key, int64_t start, int64_t end, int64_t *sid) {
  int64_t *link = &st->key_head[key];
  int64_t target = -1;
  while (*link >= 0) {
    int64_t s = *link;
    if (st->s_start[s] > end) break; /* sorted: no later one reaches it */
    if (st->s_end[s] < start) {
      link = &st->s_next[s];
      continue;
    }
    if (target < 0) {
      target = s;
      if (start < st->s_start[s]) st->s_start[s] = start;
      if (end > st->s_end[s]) st->s_end[s] = end;
      link = &st->s_next[s];
      continue;
    }
    /* s overlaps the growing target: fold it in and unlink it. */
    int rc = merge_session(st, target, s);
    if (rc) return rc;
    *link = st->s_next[s];
  }
  if (target >= 0) {
    /* The target's end grew: later sessions may now overlap it too. */
    int64_t *l2 = &st->s_next[target];
    while (*l2 >= 0 && st->s_start[*l2] <= st->s_end[target]) {
      int64_t s = *l2;
      int rc = merge_session(st, target, s);
      if (rc) return rc;
      *l2 = st->s_next[s];
    }
    *sid = target;
    return DIPPER_OK;
  }
  return new_session(st, key, start, end, sid);
}

/* ---- input ---- */

static int consume(dp_op *self, const dp_batch *in) {
  agg_state *st = self->state;
  const dp_plan *p = self->plan;
  dp_exec *ex = self->ex;
  int64_t nin = in->nrows;
  self->metrics.rows_in += nin;
  int rc = DIPPER_OK;
  free_batch_vectors(st);
  int64_t cap = st->scratch_cap;
  if ((rc = ensure(&st->ids, &cap, nin, sizeof(int64_t)))) return rc;
  cap = st->scratch_cap;
  if ((rc = ensure(&st->rows, &cap, nin, sizeof(int64_t)))) return rc;
  cap = st->scratch_cap;
  if ((rc = ensure(&st->sel, &cap, nin, sizeof(int64_t)))) return rc;
  cap = st->scratch_cap;
  if ((rc = ensure(&st->hashes, &cap, nin, sizeof(int64_t)))) return rc;
  st->scratch_cap = cap;

  for (int j = 0; j < st->ngroup; j++)
    if ((rc = eval_into(self, p->u.aggregate.group[j], in, &st->gvec[j], &st->gowned[j]))) return rc;

  /* Late rows: their window was emitted or dropped already. */
  int64_t n = 0;
  /* Rows of the final batch are not late: it closes everything anyway.  In
  ** complete mode nothing is ever evicted, so nothing is late either (Spark). */
  if (st->evicts && ex->late_watermark != DP_WATERMARK_NONE && !ex->final &&
      ex->query->streaming && st->wend >= 0 && !(ex->output_mode & DP_MODE_COMPLETE)) {
    const dp_vector *we = st->gvec[st->wend];
    for (int64_t r = 0; r < nin; r++)
      if (dp_vector_get_i64(we, r) > ex->late_watermark) st->rows[n++] = r;
    self->metrics.late_dropped += nin - n;
  } else {
    for (int64_t r = 0; r < nin; r++) st->rows[r] = r;
    n = nin;
  }
  if (n == 0) return DIPPER_OK;

  const dp_vector *keys[64];
  const dp_vector **kv = st->nkeys <= 64 ? keys : malloc((size_t)st->nkeys * sizeof *kv);
  if (!kv) return DIPPER_NOMEM;
  for (int j = 0; j < st->ngroup; j++)
    if (st->key_of_group[j] >= 0) kv[st->key_of_group[j]] = st->gvec[j];
  uint64_t *hashes = (uint64_t *)st->hashes;
  dp_ht_hash(kv, st->nkeys, nin, hashes);
  int64_t cached = st->ht.ngroups;
  rc = dp_ht_find_or_insert(&st->ht, kv, hashes, st->rows, n, st->ids, NULL);
  if (kv != keys) free(kv);
  for (int64_t k = 0; !rc && st->ttl.ttl > 0 && k < n; k++)
    rc = dp_state_ttl_touch(&st->ttl, st->ids[st->rows[k]], self->ex->batch_start_time);
  if (rc) return rc;

  if (st->session) {
    int64_t kc = st->kcap;
    if ((rc = ensure(&st->key_head, &kc, st->ht.ngroups, sizeof *st->key_head))) return rc;
    for (int64_t k = st->kcap; k < kc; k++) st->key_head[k] = -1;
    st->kcap = kc;
    const dp_vector *ws = st->gvec[st->wstart], *we = st->gvec[st->wend];
    for (int64_t k = 0; k < n; k++) {
      int64_t r = st->rows[k], sid;
      rc = session_for(st, st->ids[r], dp_vector_get_i64(ws, r), dp_vector_get_i64(we, r), &sid);
      if (rc) return rc;
      st->ids[r] = sid;
    }
    /* Rows assigned before a later merge point at the merged-away session. */
    for (int64_t k = 0; k < n; k++) st->ids[st->rows[k]] = find_root(st, st->ids[st->rows[k]]);
  } else if ((rc = grow_groups(st, st->ht.ngroups))) {
    return rc;
  } else if (st->rocks && (rc = dp_agg_rocks_fetch(st->rocks, cached))) {
    return rc; /* the new groups of the cache start from their stored states */
  }

  for (int64_t k = 0; k < n; k++) {
    int64_t g = st->ids[st->rows[k]];
    st->changed[g] = 1;
    if (!st->dirty[g] && (rc = mark_dirty(st, g))) return rc;
  }

  for (int a = 0; a < st->naggs; a++) {
    const dp_agg_call *call = &p->u.aggregate.aggs[a];
    agg_call_state *c = &st->calls[a];
    for (int k = 0; k < c->nargs; k++)
      if ((rc = eval_into(self, call->args[k], in, &c->args[k], &c->owned[k]))) return rc;
    const int64_t *use = st->rows;
    int64_t m = n;
    if (call->filter) {
      dp_vector *mask = NULL;
      bool owned = false;
      if ((rc = eval_into(self, call->filter, in, &mask, &owned))) return rc;
      m = 0;
      for (int64_t k = 0; k < n; k++) {
        int64_t r = st->rows[k];
        if (!dp_vector_is_null(mask, r) && dp_vector_get_bool(mask, r)) st->sel[m++] = r;
      }
      if (owned) dp_vector_free(mask);
      use = st->sel;
    }
    if (c->has_distinct) {
      /* Pass a row only when its (group, value) pair is new.  The group
      ** ids go in a BIGINT vector of their own, one per input row. */
      dp_vector *gv = dp_vector_new(dp_type_of(DP_T_BIGINT), nin);
      if (!gv) return DIPPER_NOMEM;
      memcpy(gv->values, st->ids, (size_t)nin * sizeof(int64_t));
      gv->length = nin;
      const dp_vector *dk[2] = {gv, c->args[0]};
      uint64_t *dh = malloc((size_t)(nin > 0 ? nin : 1) * sizeof *dh);
      int64_t *dids = malloc((size_t)(nin > 0 ? nin : 1) * sizeof *dids);
      if (!dh || !dids) {
        free(dh);
        free(dids);
        dp_vector_free(gv);
        return DIPPER_NOMEM;
      }
      dp_ht_hash(dk, 2, nin, dh);
      int64_t m2 = 0;
      for (int64_t k = 0; k < m && !rc; k++) {
        int64_t r = use[k], before = c->distinct.ngroups;
        if (dp_vector_is_null(c->args[0], r)) continue;
        rc = dp_ht_find_or_insert(&c->distinct, dk, dh, &r, 1, dids, NULL);
        if (!rc && c->distinct.ngroups > before) {
          st->sel[m2++] = r;
          if (st->session) rc = chain_link(c, st->ids[r], dids[r]);
        }
      }
      free(dh);
      free(dids);
      dp_vector_free(gv);
      if (rc) return rc;
      use = st->sel;
      m = m2;
    }
    rc = dp_agg_state_update(&c->st, (const dp_vector *const *)c->args, st->ids, use, m);
    if (rc) return rc;
  }
  free_batch_vectors(st);
  return DIPPER_OK;
}

/* ---- output ---- */

static int64_t group_end(const agg_state *st, int64_t g) {
  if (st->session) return st->s_end[g];
  return dp_vector_get_i64(st->ht.keys[st->key_of_group[st->wend]], g);
}

static int64_t live_count(const agg_state *st) {
  if (!st->session) return st->ht.ngroups;
  int64_t live = 0;
  for (int64_t s = 0; s < st->nsess; s++) live += !st->s_dead[s];
  return live;
}

static int build_output(dp_op *op, int64_t nemit) {
  agg_state *st = op->state;
  dp_batch_clear(st->out);
  int rc = DIPPER_OK;
  for (int j = 0; j < st->ngroup && !rc; j++) {
    dp_vector *col = st->out->cols[j];
    if (st->session && (j == st->wstart || j == st->wend)) {
      const int64_t *src = j == st->wstart ? st->s_start : st->s_end;
      for (int64_t k = 0; k < nemit && !rc; k++) rc = dp_vector_append_i64(col, src[st->emit[k]]);
    } else if (st->session) {
      const dp_vector *kv = st->ht.keys[st->key_of_group[j]];
      for (int64_t k = 0; k < nemit && !rc; k++)
        rc = dp_vector_take(col, kv, &st->s_key[st->emit[k]], 0, 1);
    } else {
      rc = dp_vector_take(col, st->ht.keys[st->key_of_group[j]], st->emit, 0, nemit);
    }
  }
  for (int a = 0; a < st->naggs && !rc; a++)
    rc = dp_agg_state_finish(&st->calls[a].st, st->emit, nemit, st->out->cols[st->ngroup + a]);
  if (!rc) rc = dp_batch_sync(st->out);
  return rc;
}

/* Deltas: after a compaction, the base's state ids that remap drops join
** `dropped`, in the base's numbering.  The survivors of the base keep their
** order and come first (dp_ht_compact keeps order; new ids are appended), so
** today's id g < base_live is the g-th base id not in `dropped`: one walk
** over both, within the compaction's own O(groups). */
static int note_drops(int64_t *base_live, idlist *dropped, const int64_t *remap) {
  idlist fresh = {0};
  int64_t live = 0, b = 0, j = 0;
  int rc = DIPPER_OK;
  for (int64_t g = 0; g < *base_live && !rc; g++, b++) {
    while (j < dropped->n && dropped->v[j] == b) j++, b++;
    if (remap[g] >= 0) live++;
    else rc = idlist_push(&fresh, b);
  }
  /* merge the two ascending lists */
  idlist both = {0};
  int64_t x = 0, y = 0;
  while (!rc && (x < dropped->n || y < fresh.n)) {
    bool first = y >= fresh.n || (x < dropped->n && dropped->v[x] < fresh.v[y]);
    rc = idlist_push(&both, first ? dropped->v[x++] : fresh.v[y++]);
  }
  free(fresh.v);
  if (rc) {
    free(both.v);
    return rc;
  }
  free(dropped->v);
  *dropped = both;
  *base_live = live;
  return DIPPER_OK;
}

/* The dirty flags and list follow the renumbering. */
static void remap_dirty(agg_state *st, const int64_t *remap, int64_t n, int64_t kept) {
  for (int64_t g = 0; g < n; g++)
    if (remap[g] >= 0) st->dirty[remap[g]] = st->dirty[g];
  for (int64_t g = kept; g < n; g++) st->dirty[g] = 0;
  int64_t m = 0;
  for (int64_t k = 0; k < st->dirty_ids.n; k++)
    if (remap[st->dirty_ids.v[k]] >= 0) st->dirty_ids.v[m++] = remap[st->dirty_ids.v[k]];
  st->dirty_ids.n = m;
}

/* DISTINCT in session windows: every session's chain, its entries newest
** first — what chain_link builds one entry at a time. */
static int rechain(agg_call_state *c) {
  for (int64_t g = 0; g < c->d_head_cap; g++) c->d_head[g] = -1;
  const int64_t *gid = c->distinct.keys[0]->values;
  int rc = DIPPER_OK;
  for (int64_t e = 0; e < c->distinct.ngroups && !rc; e++) rc = chain_link(c, gid[e], e);
  return rc;
}

/* A call's DISTINCT table keeps the (group, value) pairs of kept groups,
** with the new ids. */
static int compact_distinct(agg_state *st, agg_call_state *c, const int64_t *remap) {
  int64_t dn = c->distinct.ngroups;
  bool *dkeep = malloc((size_t)(dn > 0 ? dn : 1));
  if (!dkeep) return DIPPER_NOMEM;
  int64_t *gid = c->distinct.keys[0]->values, base = 0;
  for (int64_t e = 0; e < dn; e++) {
    dkeep[e] = remap[gid[e]] >= 0;
    if (e < c->base_entries) base += dkeep[e];
  }
  int rc = dp_ht_compact(&c->distinct, dkeep, NULL);
  free(dkeep);
  if (rc) return rc;
  c->base_entries = base;
  /* The ids changed, so the stored hashes are stale: rebuild. */
  int64_t m = c->distinct.ngroups;
  gid = c->distinct.keys[0]->values;
  for (int64_t e = 0; e < m; e++) gid[e] = remap[gid[e]];
  dp_hashtable fresh;
  const dp_type *dt[2] = {c->distinct.keys[0]->type, c->distinct.keys[1]->type};
  rc = dp_ht_init(&fresh, 2, dt);
  uint64_t *h = rc ? NULL : malloc((size_t)(m > 0 ? m : 1) * sizeof *h);
  int64_t *ids = h ? malloc((size_t)(m > 0 ? m : 1) * sizeof *ids) : NULL;
  if (!rc && (!h || !ids)) rc = DIPPER_NOMEM;
  if (!rc) {
    dp_ht_hash((const dp_vector *const *)c->distinct.keys, 2, m, h);
    rc = dp_ht_find_or_insert(&fresh, (const dp_vector *const *)c->distinct.keys, h, NULL, m, ids, NULL);
  }
  free(h);
  free(ids);
  if (rc) {
    dp_ht_free(&fresh);
    return rc;
  }
  dp_ht_free(&c->distinct);
  c->distinct = fresh;
  /* Entries were renumbered: chain them again by session. */
  return st->session ? rechain(c) : DIPPER_OK;
}

/* Every call's states and DISTINCT table renumbered by remap (n ids before,
** kept after).  A replay (restore_delta) never rebuilds the store. */
static int compact_calls(agg_state *st, const int64_t *remap, int64_t n, int64_t kept, bool replay) {
  int rc = DIPPER_OK;
  for (int a = 0; a < st->naggs && !rc; a++) {
    agg_call_state *c = &st->calls[a];
    rc = replay ? dp_agg_state_renumber(&c->st, remap, n, kept)
                : dp_agg_state_compact(&c->st, remap, n, kept);
    if (!rc && c->has_distinct) rc = compact_distinct(st, c, remap);
  }
  return rc;
}

/* Sessions: move the kept ones to their new ids (parents and dead flags
** only matter within a batch). */
static void compact_sessions(agg_state *st, const int64_t *remap, int64_t n) {
  for (int64_t s = 0; s < n; s++) {
    int64_t to = remap[s];
    if (to < 0) continue;
    st->s_key[to] = st->s_key[s];
    st->s_start[to] = st->s_start[s];
    st->s_end[to] = st->s_end[s];
    st->s_parent[to] = to;
    st->s_dead[to] = false;
  }
}

/* Every key's list of live sessions by start, from scratch: the lists are a
** function of the sessions' keys and starts (sessions of a key never share
** a start: they would overlap), which a delta's restore relies on.  Every
** head is reset, not only the live keys': new keys reuse the ids. */
static void relink_sessions(agg_state *st) {
  for (int64_t k = 0; k < st->kcap; k++) st->key_head[k] = -1;
  for (int64_t s = st->nsess - 1; s >= 0; s--) {
    if (st->s_dead[s]) continue;
    int64_t *link = &st->key_head[st->s_key[s]];
    while (*link >= 0 && st->s_start[*link] <= st->s_start[s]) link = &st->s_next[*link];
    st->s_next[s] = *link;
    *link = s;
  }
}

/* Drop the groups with keep[g] false (and, for sessions, the merged-away
** ones): renumber the states densely. */
static int drop_groups(agg_state *st, bool *keep, int64_t n) {
  int64_t *remap = calloc((size_t)(n > 0 ? n : 1), sizeof *remap);
  if (!remap) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  int64_t kept = 0;
  if (!st->session) {
    rc = dp_ht_compact(&st->ht, keep, remap);
    kept = st->ht.ngroups;
  } else {
    for (int64_t s = 0; s < n; s++) remap[s] = keep[s] ? kept++ : -1;
  }
  if (!rc) rc = note_drops(&st->base_live, &st->dropped, remap);
  if (!rc && st->ttl.ttl > 0) rc = dp_state_ttl_renumber(&st->ttl, remap, n);
  if (!rc) remap_dirty(st, remap, n, kept);
  if (!rc) rc = compact_calls(st, remap, n, kept, false);
  if (!rc && st->session) {
    compact_sessions(st, remap, n);
    /* Keys left without a session go too: the table holds live keys only. */
    int64_t nk = st->ht.ngroups;
    bool *kkeep = calloc((size_t)(nk > 0 ? nk : 1), sizeof *kkeep);
    int64_t *kremap = malloc((size_t)(nk > 0 ? nk : 1) * sizeof *kremap);
    if (!kkeep || !kremap) rc = DIPPER_NOMEM;
    for (int64_t s = 0; s < kept && !rc; s++) kkeep[st->s_key[s]] = true;
    if (!rc) rc = dp_ht_compact(&st->ht, kkeep, kremap);
    if (!rc) rc = note_drops(&st->base_keys_live, &st->keys_dropped, kremap);
    for (int64_t s = 0; s < kept && !rc; s++) st->s_key[s] = kremap[st->s_key[s]];
    free(kkeep);
    free(kremap);
    st->nsess = kept;
    if (!rc) relink_sessions(st);
  }
  free(remap);
  return rc;
}

/* A global aggregate (no GROUP BY) over no rows still answers one row in
** batch mode: COUNT 0, SUM NULL (SQL). */
static int add_empty_group(agg_state *st) {
  uint64_t hash = 0;
  int64_t id;
  dp_ht_hash(NULL, 0, 1, &hash);
  int rc = dp_ht_find_or_insert(&st->ht, NULL, &hash, NULL, 1, &id, NULL);
  return rc ? rc : grow_groups(st, st->ht.ngroups);
}

/* Before the batch's input: the groups not written for the TTL are gone, so
** that a row of an expired group starts it again from nothing (Flink's
** NeverReturnExpired).  Finding them costs what expires (state_ttl.h);
** dropping them is the compaction the watermark's drops also cost. */
static int expire_idle(dp_op *op) {
  agg_state *st = op->state;
  int64_t *ids = NULL, nexp = 0, n = st->ht.ngroups;
  int rc = dp_state_ttl_expire(&st->ttl, op->ex->batch_start_time, &ids, &nexp);
  bool *keep = !rc && nexp > 0 ? malloc((size_t)n) : NULL;
  if (!rc && nexp > 0 && !keep) rc = DIPPER_NOMEM;
  if (keep) {
    memset(keep, 1, (size_t)n);
    for (int64_t k = 0; k < nexp; k++) keep[ids[k]] = false;
    rc = drop_groups(st, keep, n);
  }
  free(keep);
  free(ids);
  op->metrics.state_rows = live_count(st);
  return rc;
}

static int emit(dp_op *op) {
  agg_state *st = op->state;
  dp_exec *ex = op->ex;
  int rc;
  if (st->ngroup == 0 && st->ht.ngroups == 0 && !ex->query->streaming && ex->final &&
      (rc = add_empty_group(st)) != DIPPER_OK)
    return rc;
  int64_t n = st->session ? st->nsess : st->ht.ngroups;
  rc = ensure(&st->emit, &st->emit_cap, n, sizeof *st->emit);
  if (rc) return rc;
  bool *keep = malloc((size_t)(n > 0 ? n : 1));
  if (!keep) return DIPPER_NOMEM;
  bool streaming = ex->query->streaming;
  unsigned mode = ex->output_mode ? ex->output_mode : DP_MODE_UPDATE;
  int64_t wm = ex->final ? DP_WATERMARK_END : ex->watermark;
  bool have_wm = wm != DP_WATERMARK_NONE && st->evicts;
  int64_t nemit = 0;
  bool any_dropped = false;
  for (int64_t g = 0; g < n; g++) {
    keep[g] = true;
    if (st->session && st->s_dead[g]) {
      keep[g] = false;
      any_dropped = true;
      continue;
    }
    bool closed = have_wm && group_end(st, g) <= wm;
    bool out;
    if (!streaming)
      out = ex->final;
    else if (mode & DP_MODE_COMPLETE)
      out = true;
    else if (mode & DP_MODE_UPDATE)
      out = st->changed[g] != 0;
    else /* append */
      out = st->evicts ? closed : ex->final;
    if (out) st->emit[nemit++] = g;
    if (streaming && !(mode & DP_MODE_COMPLETE) && closed) {
      keep[g] = false;
      any_dropped = true;
    }
    /* clearing a flag a restored state had set is a change too */
    if (st->changed[g] && !st->dirty[g] && (rc = mark_dirty(st, g))) break;
    st->changed[g] = 0;
  }
  if (!rc) rc = build_output(op, nemit);
  if (!rc && any_dropped) rc = drop_groups(st, keep, n);
  free(keep);
  op->metrics.state_rows = live_count(st);
  return rc;
}

/* ---- over RocksDB (agg_rocks.h) ----
** A batch: its input's groups enter the cache (loaded on first touch); the
** stored groups the watermark closes are listed (the time index's range
** scan) before the cache is written back; the cache emits as in memory —
** update mode its groups, append mode the closed ones — is written back
** (closed groups deleted) and dropped.  Then the listed groups come in
** slices of DP_ROWS_CHUNK: entered, emitted (append mode), deleted,
** dropped.  An append-mode GROUP BY that never closes a group emits every
** stored group at the final batch the same way (a scan of the entries). */
static int rocks_emit(dp_op *op, bool append, int64_t wm, bool have_wm, bool due) {
  agg_state *st = op->state;
  int64_t n = st->ht.ngroups, nemit = 0;
  int rc = ensure(&st->emit, &st->emit_cap, n, sizeof *st->emit);
  bool *keep = rc ? NULL : malloc((size_t)(n > 0 ? n : 1));
  if (!rc && !keep) rc = DIPPER_NOMEM;
  for (int64_t g = 0; !rc && g < n; g++) {
    bool closed = due || (have_wm && group_end(st, g) <= wm);
    bool out = due ? append && dp_agg_rocks_stored(st->rocks, g) : append ? closed : true;
    if (out) st->emit[nemit++] = g;
    keep[g] = !closed;
    st->changed[g] = 0;
  }
  if (!rc) rc = build_output(op, nemit);
  /* due groups of a GROUP BY that never closes stay stored */
  if (!rc && (!due || st->evicts)) rc = dp_agg_rocks_store(st->rocks, keep, n);
  for (int64_t g = 0; !rc && g < n; g++) keep[g] = false;
  if (!rc) rc = drop_groups(st, keep, n);
  free(keep);
  return rc;
}

static int rocks_next(dp_op *op, dp_batch **out) {
  agg_state *st = op->state;
  dp_exec *ex = op->ex;
  bool append = !((ex->output_mode ? ex->output_mode : DP_MODE_UPDATE) & DP_MODE_UPDATE);
  int64_t wm = ex->final ? DP_WATERMARK_END : ex->watermark;
  bool have_wm = wm != DP_WATERMARK_NONE && st->evicts;
  int rc = DIPPER_OK;
  dp_batch_clear(st->out);
  while (!rc && !st->done && st->out->nrows == 0) {
    if (st->rocks_phase == 0) {
      st->rocks_phase = 1;
      rc = dp_agg_rocks_begin(st->rocks);
      if (!rc) rc = dp_op_drain(op->children[0], consume, op);
      if (!rc && have_wm) rc = dp_agg_rocks_due(st->rocks, wm, false);
      if (!rc) rc = rocks_emit(op, append, wm, have_wm, false);
      if (!rc && !st->evicts && append && ex->final)
        rc = dp_agg_rocks_due(st->rocks, INT64_MAX, true);
    } else {
      bool any = false;
      rc = dp_agg_rocks_next(st->rocks, DP_ROWS_CHUNK, &any);
      if (!rc && !any) st->done = true;
      if (!rc && any) rc = grow_groups(st, st->ht.ngroups);
      if (!rc && any) rc = rocks_emit(op, append, wm, have_wm, true);
    }
  }
  op->metrics.state_rows = dp_agg_rocks_count(st->rocks);
  *out = NULL;
  if (rc || st->out->nrows == 0) return rc;
  op->metrics.rows_out += st->out->nrows;
  *out = st->out;
  return DIPPER_OK;
}

static int agg_next(dp_op *op, dp_batch **out) {
  agg_state *st = op->state;
  if (st->rocks) return rocks_next(op, out);
  *out = NULL;
  if (st->done) return DIPPER_OK;
  st->done = true;
  int rc = st->ttl.ttl > 0 ? expire_idle(op) : DIPPER_OK;
  if (!rc) rc = dp_op_drain(op->children[0], consume, op);
  if (rc) return rc;
  if ((rc = emit(op))) return rc;
  if (st->out->nrows == 0) return DIPPER_OK;
  op->metrics.rows_out += st->out->nrows;
  *out = st->out;
  return DIPPER_OK;
}

static int agg_end_batch(dp_op *op) {
  agg_state *st = op->state;
  st->done = false;
  st->rocks_phase = 0;
  return DIPPER_OK;
}

/* ---- checkpoints ----
** The blob:
**   version:u8 (AGG_STATE_VERSION)  body_len:u64  body  crc32c:u32
** the checksum over the version and body bytes as they stand, so that any
** damage is refused before the body is parsed (the body's parser checks
** everything again, for bytes that were written wrong or for another plan).
** The body:
**   shape     flags:u8 (1 windowed, 2 session, 4 evicts), nkeys:uvar,
**             naggs:uvar: checked against this operator's plan
**   keys      ngroups:uvar, each key column's rows 0..ngroups (vector_codec.h)
**   sessions  (session windows) nsess:uvar, per session key:uvar start:svar
**             end:svar next:svar parent:uvar dead:u8; key_head:svar per key
**   changed   count:uvar and the state ids (ascending) flagged changed
**   calls     per call: its states (dp_agg_state_save) over the state ids
**             (sessions, or groups), has_distinct:u8, and if set the
**             DISTINCT table's keys like `keys` and (sessions) the chains:
**             d_head:svar per session, d_next:svar per entry
**
** Deltas (save_delta/restore_delta): what changed since the last
** checkpoint, in the section after this one.
*/

#define AGG_STATE_VERSION 3

static uint8_t shape_flags(const agg_state *st) {
  return (uint8_t)((st->windowed ? 1 : 0) | (st->session ? 2 : 0) | (st->evicts ? 4 : 0));
}

static int64_t nstates(const agg_state *st) { return st->session ? st->nsess : st->ht.ngroups; }
static void reset_tracking(agg_state *st);

static int save_keys(const dp_hashtable *ht, dp_buf *out) {
  dp_put_uvar(out, (uint64_t)ht->ngroups);
  for (int j = 0; j < ht->nkeys; j++) {
    int rc = dp_vector_encode(ht->keys[j], 0, ht->ngroups, out);
    if (rc) return rc == DIPPER_MISUSE ? DIPPER_LIMIT : rc;
  }
  return DIPPER_OK;
}

static void save_sessions(const agg_state *st, dp_buf *out) {
  dp_put_uvar(out, (uint64_t)st->nsess);
  for (int64_t s = 0; s < st->nsess; s++) {
    dp_put_uvar(out, (uint64_t)st->s_key[s]);
    dp_put_svar(out, st->s_start[s]);
    dp_put_svar(out, st->s_end[s]);
    dp_put_svar(out, st->s_next[s]);
    dp_put_uvar(out, (uint64_t)st->s_parent[s]);
    dp_put_u8(out, st->s_dead[s]);
  }
  for (int64_t k = 0; k < st->ht.ngroups; k++) dp_put_svar(out, k < st->kcap ? st->key_head[k] : -1);
}

static int save_call(const agg_state *st, const agg_call_state *c, dp_buf *out) {
  int rc = dp_agg_state_save(&c->st, nstates(st), out);
  dp_put_u8(out, c->has_distinct);
  if (rc || !c->has_distinct) return rc;
  if ((rc = save_keys(&c->distinct, out))) return rc;
  if (st->session) {
    for (int64_t s = 0; s < st->nsess; s++) dp_put_svar(out, s < c->d_head_cap ? c->d_head[s] : -1);
    for (int64_t e = 0; e < c->distinct.ngroups; e++)
      dp_put_svar(out, e < c->d_next_cap ? c->d_next[e] : -1);
  }
  return DIPPER_OK;
}

static int save_body(const agg_state *st, dp_buf *out) {
  dp_put_u8(out, shape_flags(st));
  dp_put_uvar(out, (uint64_t)st->nkeys);
  dp_put_uvar(out, (uint64_t)st->naggs);
  int rc = save_keys(&st->ht, out);
  if (rc) return rc;
  if (st->session) save_sessions(st, out);
  int64_t n = nstates(st), nchanged = 0;
  for (int64_t g = 0; g < n && g < st->gcap; g++) nchanged += st->changed[g] != 0;
  dp_put_uvar(out, (uint64_t)nchanged);
  for (int64_t g = 0; g < n && g < st->gcap; g++)
    if (st->changed[g]) dp_put_uvar(out, (uint64_t)g);
  for (int a = 0; a < st->naggs && !rc; a++) rc = save_call(st, &st->calls[a], out);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* version:u8, body_len:u64, the body `save` writes in place (its length
** filled in after: no copy of a large body), crc32c:u32. */
static int save_blob(agg_state *st, dp_buf *out, uint8_t version,
                     int (*save)(const agg_state *, dp_buf *)) {
  size_t at = out->len;
  dp_put_u8(out, version);
  dp_put_u64(out, 0);
  int rc = save(st, out);
  if (!rc && !out->oom) {
    uint64_t len = (uint64_t)(out->len - at - 9);
    for (int i = 0; i < 8; i++) out->data[at + 1 + (size_t)i] = (char)(uint8_t)(len >> (8 * i));
    dp_put_u32(out, dp_crc32c(0, out->data + at, out->len - at));
  }
  if (!rc && out->oom) rc = DIPPER_NOMEM;
  if (!rc) reset_tracking(st);
  return rc;
}

/* With a TTL, after the blob (state or delta alike): the groups' last
** writes, in today's numbering (state_ttl.h's section). */
static int save_ttl(const agg_state *st, dp_buf *out) {
  dp_state_ttl_save_section(&st->ttl, out);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int restore_ttl(dp_op *op, dp_rd *in) {
  agg_state *st = op->state;
  int rc = dp_state_ttl_load_section(&st->ttl, in, st->ht.ngroups, op->ex->batch_start_time);
  if (rc == DIPPER_CORRUPT) {
    in->bad = true;
    dp_span nowhere = {0, 0, 0, 0};
    return dp_error(op->ex->diags, rc, nowhere,
                    "the checkpointed state TTL of the aggregation does not read back: the "
                    "checkpoint is damaged or was written for another query");
  }
  return rc;
}

static int agg_save_state(dp_op *op, dp_buf *out) {
  agg_state *st = op->state;
  if (st->rocks) return dp_agg_rocks_save(st->rocks, out);
  int rc = save_blob(op->state, out, AGG_STATE_VERSION, save_body);
  return rc ? rc : save_ttl(st, out);
}

/* Key rows appended to the table, in order: row i must become group
** ngroups + i (a key there already, or repeated, is damage).  The rows
** decode straight into the table's key vectors and go in with its bulk
** path (dp_ht_add_appended): no copy, no probe of a growing table. */
static int load_keys(dp_hashtable *ht, dp_rd *in) {
  uint64_t n = dp_get_uvar(in);
  if (in->bad || n > INT32_MAX) return DIPPER_CORRUPT;
  size_t from = in->pos;
  int64_t before = ht->ngroups, dup = -1;
  int rc = DIPPER_OK;
  for (int j = 0; j < ht->nkeys && !rc; j++) {
    /* a fixed-width column's room first, its pages faulted in one call */
    dp_vector *key = ht->keys[j];
    size_t width = (size_t)dp_phys_width(key->phys);
    if (width && n <= dp_rd_left(in) / width && n > (uint64_t)(key->capacity - key->length) &&
        !(rc = dp_vector_reserve(key, (int64_t)n)))
      dp_prefault((char *)key->values + (size_t)key->length * width, (size_t)n * width);
    if (!rc) rc = dp_vector_decode(in, key);
    if (!rc && ht->keys[j]->length != before + (int64_t)n) rc = DIPPER_CORRUPT;
  }
  /* Distinct keys take some bits each, whatever their type: more rows than
  ** bits read cannot all differ. */
  if (!rc && n > 1 && n / 8 > in->pos - from) rc = DIPPER_CORRUPT;
  if (!rc) rc = dp_ht_add_appended(ht, before + (int64_t)n, &dup);
  if (!rc && dup >= 0) rc = DIPPER_CORRUPT;
  if (rc)
    for (int j = 0; j < ht->nkeys; j++) dp_vector_truncate(ht->keys[j], before);
  return rc;
}

/* Every session's parent chain ends at a root (find_root ends), a live
** session is its own root, and the key lists run over sessions of their key,
** each once, by start: what session_for walks. */
static int check_sessions(const agg_state *st) {
  int64_t n = st->nsess;
  uint8_t *mark = calloc((size_t)(n > 0 ? n : 1), 1);
  if (!mark) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int64_t s = 0; s < n && !rc; s++) {
    if (st->s_dead[s] == (st->s_parent[s] == s)) rc = DIPPER_CORRUPT;
    int64_t x = s, steps = 0;
    while (!rc && mark[x] != 1 && st->s_parent[x] != x)
      if (++steps > n) rc = DIPPER_CORRUPT;
      else x = st->s_parent[x];
    for (x = s; !rc && mark[x] != 1; x = st->s_parent[x]) {
      mark[x] = 1;
      if (st->s_parent[x] == x) break;
    }
  }
  memset(mark, 0, (size_t)(n > 0 ? n : 1));
  for (int64_t k = 0; k < st->ht.ngroups && !rc; k++)
    for (int64_t s = st->key_head[k], prev = -1; s >= 0 && !rc; prev = s, s = st->s_next[s]) {
      if (mark[s] || st->s_dead[s] || st->s_key[s] != k ||
          (prev >= 0 && st->s_start[s] < st->s_start[prev]))
        rc = DIPPER_CORRUPT;
      mark[s] = 1;
    }
  free(mark);
  return rc;
}

static int load_sessions(agg_state *st, dp_rd *in) {
  uint64_t n = dp_get_count(in, 6);
  if (in->bad) return DIPPER_CORRUPT;
  int64_t cap, nk = st->ht.ngroups;
  int rc = DIPPER_OK;
#define GROW_S(arr)                                          \
  cap = st->scap;                                            \
  if (!rc) rc = ensure(&st->arr, &cap, (int64_t)n, sizeof *st->arr);
  GROW_S(s_key) GROW_S(s_start) GROW_S(s_end) GROW_S(s_next) GROW_S(s_parent) GROW_S(s_dead)
#undef GROW_S
  if (rc) return rc;
  st->scap = cap;
  int64_t kc = st->kcap;
  if ((rc = ensure(&st->key_head, &kc, nk, sizeof *st->key_head))) return rc;
  for (int64_t k = st->kcap; k < kc; k++) st->key_head[k] = -1;
  st->kcap = kc;
  for (int64_t s = 0; s < (int64_t)n; s++) {
    uint64_t key = dp_get_uvar(in), parent;
    st->s_start[s] = dp_get_svar(in);
    st->s_end[s] = dp_get_svar(in);
    st->s_next[s] = dp_get_svar(in);
    parent = dp_get_uvar(in);
    uint8_t dead = dp_get_u8(in);
    if (in->bad || key >= (uint64_t)nk || parent >= n || dead > 1 || st->s_next[s] < -1 ||
        st->s_next[s] >= (int64_t)n)
      return DIPPER_CORRUPT;
    st->s_key[s] = (int64_t)key;
    st->s_parent[s] = (int64_t)parent;
    st->s_dead[s] = dead;
  }
  for (int64_t k = 0; k < nk; k++) {
    st->key_head[k] = dp_get_svar(in);
    if (in->bad || st->key_head[k] < -1 || st->key_head[k] >= (int64_t)n) return DIPPER_CORRUPT;
  }
  st->nsess = (int64_t)n;
  return check_sessions(st);
}

/* The DISTINCT table of a call: its group ids are state ids; in session
** windows each session's chain holds entries of that session, each entry
** in one chain at most. */
static int load_distinct(agg_state *st, agg_call_state *c, dp_rd *in) {
  int rc = load_keys(&c->distinct, in);
  if (rc) return rc;
  int64_t n = nstates(st), dn = c->distinct.ngroups;
  const dp_vector *gv = c->distinct.keys[0];
  const int64_t *gid = gv->values;
  if (gv->null_count) return DIPPER_CORRUPT;
  for (int64_t e = 0; e < dn; e++)
    if (gid[e] < 0 || gid[e] >= n) return DIPPER_CORRUPT;
  if (!st->session) return DIPPER_OK;
  int64_t old = c->d_head_cap;
  if ((rc = ensure(&c->d_head, &c->d_head_cap, n, sizeof *c->d_head))) return rc;
  for (int64_t k = old; k < c->d_head_cap; k++) c->d_head[k] = -1;
  if ((rc = ensure(&c->d_next, &c->d_next_cap, dn, sizeof *c->d_next))) return rc;
  for (int64_t s = 0; s < n; s++) c->d_head[s] = dp_get_svar(in);
  for (int64_t e = 0; e < dn; e++) c->d_next[e] = dp_get_svar(in);
  if (in->bad) return DIPPER_CORRUPT;
  uint8_t *seen = calloc((size_t)(dn > 0 ? dn : 1), 1);
  if (!seen) return DIPPER_NOMEM;
  for (int64_t s = 0; s < n && !rc; s++)
    for (int64_t e = c->d_head[s]; e != -1 && !rc; e = c->d_next[e]) {
      if (e < -1 || e >= dn || seen[e] || gid[e] != s) {
        rc = DIPPER_CORRUPT;
        break;
      }
      seen[e] = 1;
    }
  free(seen);
  return rc;
}

static int load_body(agg_state *st, dp_rd *in, const char **what) {
  *what = "its shape";
  uint8_t flags = dp_get_u8(in);
  uint64_t nkeys = dp_get_uvar(in), naggs = dp_get_uvar(in);
  if (in->bad || flags != shape_flags(st) || nkeys != (uint64_t)st->nkeys ||
      naggs != (uint64_t)st->naggs)
    return DIPPER_CORRUPT;
  *what = "the group keys";
  int rc = load_keys(&st->ht, in);
  if (rc) return rc;
  *what = "the sessions";
  if (st->session && (rc = load_sessions(st, in))) return rc;
  int64_t n = nstates(st);
  if ((rc = grow_flags(st, n))) return rc; /* dp_agg_state_load sizes the states */
  *what = "the changed flags";
  uint64_t nchanged = dp_get_count(in, 1);
  for (uint64_t k = 0, prev = 0; k < nchanged && !in->bad; k++) {
    uint64_t g = dp_get_uvar(in);
    if (g >= (uint64_t)n || (k && g <= prev)) return DIPPER_CORRUPT;
    st->changed[g] = 1;
    prev = g;
  }
  if (in->bad) return DIPPER_CORRUPT;
  *what = "an aggregate's states";
  for (int a = 0; a < st->naggs && !rc; a++) {
    agg_call_state *c = &st->calls[a];
    rc = dp_agg_state_load(&c->st, n, in);
    uint8_t has = dp_get_u8(in);
    if (!rc && (in->bad || has != c->has_distinct)) rc = DIPPER_CORRUPT;
    if (!rc && has) rc = load_distinct(st, c, in);
  }
  return rc;
}


/* ---- deltas ----
** save_delta writes what changed since the base (the state of the last
** save_state, save_delta, restore_state or restore_delta; all four call
** reset_tracking), in a blob like save_state's but of version
** AGG_DELTA_VERSION:
**   version:u8 (4)  body_len:u64  body  crc32c:u32
** The body, ids as ascending lists `count:uvar (gap:uvar)*` (the gap from
** the previous id + 1, from -1):
**   shape     as in the whole state
**   base      nstates:uvar at the base [sessions: nkeys:uvar], checked
**             against the state the delta is applied to
**   dropped   the base's state ids dropped since, in the base's numbering
**             [sessions: the base's keys dropped, likewise]
**   new keys  count:uvar and the key columns' rows (vector_codec.h) past
**             the base's survivors: groups, or (sessions) keys
**   [sessions new:uvar, the sessions created since]
**   dirty     the base's state ids changed since, in today's numbering
**   [sessions per written id (the dirty ones, then the new ones): key:uvar
**             start:svar end:svar parent:uvar dead:u8]
**   changed   the written ids flagged changed (the others are cleared)
**   calls     per call: dp_agg_state_save_delta over the written ids,
**             has_distinct:u8, and if set the DISTINCT entries created
**             since: count:uvar and the two key columns' rows
** Why drops by the base's ids: a compaction keeps order and new ids are
** appended, so today's numbering is the base's survivors in order, then the
** ids created since in order; the dropped list in the base's numbering is
** all a reader needs to replay every compaction since as one, it costs what
** was dropped, and the writer keeps no per-group map of ids to reset at each
** checkpoint (drop_groups updates the list within its own O(groups) pass).
** What a restore derives instead of reading: the DISTINCT entries dropped
** (those of dropped groups), the sessions' key lists (relinked by start) and
** the DISTINCT chains of sessions (newest entry first).
**
** Cost: save_delta touches the dirty ids (sorted: O(k log k)), the ids,
** keys, entries and store rows created since and the drops, never every
** group, so the delta of a batch that changed k of n groups is O(k) plus
** what it created and dropped.  The exceptions are amortized: a store
** rebuilt since writes that call's whole state (agg_func.h), and LISTAGG and
** HLL write a changed group's whole buffer or registers.  restore_delta is
** O(n): it checks the whole state again (sessions, COLLECT chains) and
** replays the compaction.  Before a restore the driver hands over the chain's
** deltas (restore_expect): their heads give the most keys the table will
** hold, so it is sized once rather than doubled (every group placed again)
** part-way through the chain.
*/

#define AGG_DELTA_VERSION 4

static void reset_tracking(agg_state *st) {
  for (int64_t k = 0; k < st->dirty_ids.n; k++) st->dirty[st->dirty_ids.v[k]] = 0;
  st->dirty_ids.n = 0;
  st->dropped.n = 0;
  st->keys_dropped.n = 0;
  st->base_live = nstates(st);
  st->base_keys_live = st->ht.ngroups;
  for (int a = 0; a < st->naggs; a++) {
    agg_call_state *c = &st->calls[a];
    c->base_entries = c->has_distinct ? c->distinct.ngroups : 0;
    dp_agg_state_mark(&c->st);
  }
}

static void put_ids(dp_buf *out, const int64_t *v, int64_t n) {
  dp_put_uvar(out, (uint64_t)n);
  for (int64_t k = 0, prev = -1; k < n; prev = v[k++]) dp_put_uvar(out, (uint64_t)(v[k] - prev - 1));
}

/* An ascending list of ids below `below`. */
static int get_ids(dp_rd *in, int64_t below, idlist *l) {
  uint64_t n = dp_get_count(in, 1);
  if (in->bad || n > (uint64_t)below) return DIPPER_CORRUPT;
  l->n = 0;
  int rc = ensure(&l->v, &l->cap, (int64_t)n, sizeof *l->v);
  for (uint64_t k = 0, prev = (uint64_t)-1; k < n && !rc; k++) {
    uint64_t gap = dp_get_uvar(in);
    if (in->bad || gap >= (uint64_t)below || prev + 1 + gap >= (uint64_t)below) return DIPPER_CORRUPT;
    prev += 1 + gap;
    l->v[l->n++] = (int64_t)prev;
  }
  return rc;
}

static int cmp_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int save_rows(const dp_vector *const *cols, int ncols, int64_t from, int64_t to, dp_buf *out) {
  dp_put_uvar(out, (uint64_t)(to - from));
  for (int j = 0; j < ncols; j++) {
    int rc = dp_vector_encode(cols[j], from, to - from, out);
    if (rc) return rc == DIPPER_MISUSE ? DIPPER_LIMIT : rc;
  }
  return DIPPER_OK;
}

/* The ids a delta writes states of: the dirty ones of the base (ascending),
** then every one created since. */
static int written_ids(const agg_state *st, int64_t **out, int64_t *nw) {
  int64_t n = nstates(st), nd = 0;
  int64_t *w = malloc((size_t)(st->dirty_ids.n + n - st->base_live + 1) * sizeof *w);
  if (!w) return DIPPER_NOMEM;
  for (int64_t k = 0; k < st->dirty_ids.n; k++)
    if (st->dirty_ids.v[k] < st->base_live) w[nd++] = st->dirty_ids.v[k];
  qsort(w, (size_t)nd, sizeof *w, cmp_id);
  *nw = nd;
  for (int64_t g = st->base_live; g < n; g++) w[(*nw)++] = g;
  *out = w;
  return DIPPER_OK;
}

static int save_delta_body(const agg_state *st, dp_buf *out) {
  dp_put_u8(out, shape_flags(st));
  dp_put_uvar(out, (uint64_t)st->nkeys);
  dp_put_uvar(out, (uint64_t)st->naggs);
  dp_put_uvar(out, (uint64_t)(st->base_live + st->dropped.n));
  if (st->session) dp_put_uvar(out, (uint64_t)(st->base_keys_live + st->keys_dropped.n));
  put_ids(out, st->dropped.v, st->dropped.n);
  if (st->session) put_ids(out, st->keys_dropped.v, st->keys_dropped.n);
  int64_t kfrom = st->session ? st->base_keys_live : st->base_live, n = nstates(st), nw;
  int rc = save_rows((const dp_vector *const *)st->ht.keys, st->nkeys, kfrom, st->ht.ngroups, out);
  if (rc) return rc;
  if (st->session) dp_put_uvar(out, (uint64_t)(n - st->base_live));
  int64_t *w;
  if ((rc = written_ids(st, &w, &nw))) return rc;
  int64_t ndirty = nw - (n - st->base_live), nch = 0;
  put_ids(out, w, ndirty);
  for (int64_t k = 0; st->session && k < nw; k++) {
    int64_t s = w[k];
    dp_put_uvar(out, (uint64_t)st->s_key[s]);
    dp_put_svar(out, st->s_start[s]);
    dp_put_svar(out, st->s_end[s]);
    dp_put_uvar(out, (uint64_t)st->s_parent[s]);
    dp_put_u8(out, st->s_dead[s]);
  }
  int64_t *ch = malloc((size_t)(nw + 1) * sizeof *ch);
  if (!ch) rc = DIPPER_NOMEM;
  for (int64_t k = 0; !rc && k < nw; k++)
    if (st->changed[w[k]]) ch[nch++] = w[k];
  if (!rc) put_ids(out, ch, nch);
  free(ch);
  for (int a = 0; a < st->naggs && !rc; a++) {
    const agg_call_state *c = &st->calls[a];
    rc = dp_agg_state_save_delta(&c->st, w, nw, n, out);
    dp_put_u8(out, c->has_distinct);
    if (!rc && c->has_distinct)
      rc = save_rows((const dp_vector *const *)c->distinct.keys, 2, c->base_entries,
                     c->distinct.ngroups, out);
  }
  free(w);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int agg_save_delta(dp_op *op, dp_buf *out) {
  agg_state *st = op->state;
  if (st->rocks) return dp_agg_rocks_save(st->rocks, out);
  int rc = save_blob(op->state, out, AGG_DELTA_VERSION, save_delta_body);
  return rc ? rc : save_ttl(st, out);
}

static int grow_sessions(agg_state *st, int64_t n) {
  int64_t cap;
  int rc = DIPPER_OK;
#define GROW_S(arr)                                          \
  cap = st->scap;                                            \
  if (!rc) rc = ensure(&st->arr, &cap, n, sizeof *st->arr);
  GROW_S(s_key) GROW_S(s_start) GROW_S(s_end) GROW_S(s_next) GROW_S(s_parent) GROW_S(s_dead)
#undef GROW_S
  if (rc) return rc;
  st->scap = cap;
  int64_t kc = st->kcap;
  if ((rc = ensure(&st->key_head, &kc, st->ht.ngroups, sizeof *st->key_head))) return rc;
  for (int64_t k = st->kcap; k < kc; k++) st->key_head[k] = -1;
  st->kcap = kc;
  return DIPPER_OK;
}

/* Replay the compactions since the base as one: drop the base's ids in
** `drops` (and, sessions, the keys in `kdrops`). */
static int replay_drops(agg_state *st, const idlist *drops, const idlist *kdrops) {
  int64_t n = nstates(st), kept = n - drops->n;
  int rc = DIPPER_OK;
  if (drops->n) {
    bool *keep = malloc((size_t)(n > 0 ? n : 1));
    int64_t *remap = malloc((size_t)(n > 0 ? n : 1) * sizeof *remap);
    if (!keep || !remap) rc = DIPPER_NOMEM;
    for (int64_t g = 0; !rc && g < n; g++) keep[g] = true;
    for (int64_t k = 0; !rc && k < drops->n; k++) keep[drops->v[k]] = false;
    if (!rc && !st->session) rc = dp_ht_compact(&st->ht, keep, remap);
    for (int64_t g = 0, to = 0; !rc && st->session && g < n; g++) remap[g] = keep[g] ? to++ : -1;
    for (int64_t g = 0; !rc && g < n; g++)
      if (remap[g] >= 0) st->changed[remap[g]] = st->changed[g];
    if (!rc) rc = compact_calls(st, remap, n, kept, true);
    if (!rc && st->session) {
      compact_sessions(st, remap, n);
      st->nsess = kept;
    }
    free(keep);
    free(remap);
  }
  if (rc || !st->session || !kdrops->n) return rc;
  int64_t nk = st->ht.ngroups;
  bool *kkeep = malloc((size_t)(nk > 0 ? nk : 1));
  int64_t *kremap = malloc((size_t)(nk > 0 ? nk : 1) * sizeof *kremap);
  if (!kkeep || !kremap) rc = DIPPER_NOMEM;
  for (int64_t k = 0; !rc && k < nk; k++) kkeep[k] = true;
  for (int64_t k = 0; !rc && k < kdrops->n; k++) kkeep[kdrops->v[k]] = false;
  if (!rc) rc = dp_ht_compact(&st->ht, kkeep, kremap);
  for (int64_t s = 0; !rc && s < st->nsess; s++) {
    if (kremap[st->s_key[s]] < 0) rc = DIPPER_CORRUPT; /* a session kept on a key dropped */
    else st->s_key[s] = kremap[st->s_key[s]];
  }
  free(kkeep);
  free(kremap);
  return rc;
}

static int load_delta_sessions(agg_state *st, const int64_t *w, int64_t nw, int64_t n, dp_rd *in) {
  int rc = grow_sessions(st, n);
  if (rc) return rc;
  for (int64_t k = 0; k < nw; k++) {
    int64_t s = w[k];
    uint64_t key = dp_get_uvar(in);
    st->s_start[s] = dp_get_svar(in);
    st->s_end[s] = dp_get_svar(in);
    uint64_t parent = dp_get_uvar(in);
    uint8_t dead = dp_get_u8(in);
    if (in->bad || key >= (uint64_t)st->ht.ngroups || parent >= (uint64_t)n || dead > 1)
      return DIPPER_CORRUPT;
    st->s_key[s] = (int64_t)key;
    st->s_parent[s] = (int64_t)parent;
    st->s_dead[s] = dead;
  }
  st->nsess = n;
  relink_sessions(st);
  return check_sessions(st);
}

/* The DISTINCT entries created since: their groups exist; in sessions,
** linked newest first on top of the chains of the base's entries. */
static int load_delta_distinct(agg_state *st, agg_call_state *c, int64_t from_sess, dp_rd *in) {
  int64_t before = c->distinct.ngroups, n = nstates(st);
  int rc = load_keys(&c->distinct, in);
  if (rc) return rc;
  const dp_vector *gv = c->distinct.keys[0];
  const int64_t *gid = gv->values;
  if (gv->null_count) return DIPPER_CORRUPT;
  for (int64_t e = before; e < c->distinct.ngroups; e++)
    if (gid[e] < 0 || gid[e] >= n) return DIPPER_CORRUPT;
  if (!st->session) return DIPPER_OK;
  int64_t old = c->d_head_cap;
  if ((rc = ensure(&c->d_head, &c->d_head_cap, n, sizeof *c->d_head))) return rc;
  for (int64_t s = old; s < c->d_head_cap; s++) c->d_head[s] = -1;
  for (int64_t s = from_sess; s < n; s++) c->d_head[s] = -1; /* new sessions: new entries only */
  for (int64_t e = before; e < c->distinct.ngroups && !rc; e++) rc = chain_link(c, gid[e], e);
  return rc;
}

static int load_delta_body(dp_op *op, dp_rd *in, const char **what) {
  agg_state *st = op->state;
  *what = "its shape";
  uint8_t flags = dp_get_u8(in);
  uint64_t nkeys = dp_get_uvar(in), naggs = dp_get_uvar(in);
  if (in->bad || flags != shape_flags(st) || nkeys != (uint64_t)st->nkeys ||
      naggs != (uint64_t)st->naggs)
    return DIPPER_CORRUPT;
  *what = "its base: it follows another state";
  uint64_t base = dp_get_uvar(in), bkeys = st->session ? dp_get_uvar(in) : 0;
  if (in->bad || base != (uint64_t)nstates(st) || (st->session && bkeys != (uint64_t)st->ht.ngroups))
    return DIPPER_CORRUPT;
  idlist drops = {0}, kdrops = {0}, dirty = {0}, ch = {0};
  int64_t *w = NULL, nw = 0, n = 0, from = 0;
  *what = "the groups dropped";
  int rc = get_ids(in, (int64_t)base, &drops);
  if (!rc && st->session) rc = get_ids(in, (int64_t)bkeys, &kdrops);
  if (!rc) rc = replay_drops(st, &drops, &kdrops);
  if (!rc) *what = "the group keys";
  from = nstates(st); /* the base's survivors: the ids created since follow */
  if (!rc) rc = load_keys(&st->ht, in);
  if (!rc) {
    n = st->session ? from + (int64_t)dp_get_count(in, 5) : st->ht.ngroups;
    if (in->bad) rc = DIPPER_CORRUPT;
  }
  if (!rc) *what = "the groups changed";
  if (!rc) rc = get_ids(in, from, &dirty);
  if (!rc) rc = grow_groups(st, n);
  if (!rc && !(w = malloc((size_t)(dirty.n + n - from + 1) * sizeof *w))) rc = DIPPER_NOMEM;
  for (int64_t k = 0; !rc && k < dirty.n; k++) w[nw++] = dirty.v[k];
  for (int64_t g = from; !rc && g < n; g++) w[nw++] = g;
  if (!rc && st->session) {
    *what = "the sessions";
    rc = load_delta_sessions(st, w, nw, n, in);
  }
  if (!rc) {
    *what = "the changed flags";
    for (int64_t k = 0; k < nw; k++) st->changed[w[k]] = 0;
    rc = get_ids(in, n, &ch);
    for (int64_t k = 0, j = 0; !rc && k < ch.n; k++) {
      while (j < nw && w[j] < ch.v[k]) j++;
      if (j == nw || w[j] != ch.v[k]) rc = DIPPER_CORRUPT; /* only written ids */
      else st->changed[ch.v[k]] = 1;
    }
  }
  if (!rc) *what = "an aggregate's states";
  for (int a = 0; a < st->naggs && !rc; a++) {
    agg_call_state *c = &st->calls[a];
    rc = dp_agg_state_load_delta(&c->st, &op->plan->u.aggregate.aggs[a], w, nw, n, in);
    uint8_t has = dp_get_u8(in);
    if (!rc && (in->bad || has != c->has_distinct)) rc = DIPPER_CORRUPT;
    if (!rc && has) rc = load_delta_distinct(st, c, from, in);
  }
  free(drops.v);
  free(kdrops.v);
  free(dirty.v);
  free(ch.v);
  free(w);
  return rc;
}

static int load_whole(dp_op *op, dp_rd *in, const char **what) { return load_body(op->state, in, what); }

/* A blob of save_state or save_delta: the checksum, the version, then the
** body through `load`. */
static int restore_blob(dp_op *op, dp_rd *in, int version, const char *kind,
                        int (*load)(dp_op *, dp_rd *, const char **)) {
  agg_state *st = op->state;
  dp_span nowhere = {0, 0, 0, 0};
  size_t at = in->pos;
  uint8_t got = dp_get_u8(in);
  uint64_t blen = dp_get_u64(in);
  if (!in->bad && blen > dp_rd_left(in)) in->bad = true;
  size_t len = in->bad ? 0 : (size_t)blen;
  const uint8_t *body = in->bad ? NULL : in->p + in->pos;
  if (!in->bad) in->pos += len;
  size_t end = in->pos;
  uint32_t crc = dp_get_u32(in);
  const char *what = "the blob";
  int rc = in->bad ? DIPPER_CORRUPT : DIPPER_OK;
  if (!rc && crc != dp_crc32c(0, in->p + at, end - at)) {
    what = "its checksum";
    rc = DIPPER_CORRUPT;
  }
  if (!rc && got != version) {
    in->bad = true;
    return dp_error(op->ex->diags, DIPPER_CORRUPT, nowhere,
                    "aggregate %s of version %u: this build reads version %d", kind, got, version);
  }
  if (!rc) {
    dp_rd b;
    dp_rd_init(&b, body, len);
    rc = load(op, &b, &what);
    if (!rc && !dp_rd_done(&b)) {
      what = "its end";
      rc = DIPPER_CORRUPT;
    }
  }
  if (rc == DIPPER_CORRUPT) {
    in->bad = true;
    return dp_error(op->ex->diags, rc, nowhere,
                    "the checkpointed %s of the aggregation does not read back (%s): the "
                    "checkpoint is damaged or was written for another query",
                    kind, what);
  }
  if (rc) return dp_error(op->ex->diags, rc, nowhere, "cannot restore the aggregation's %s: %s", kind,
                          dipper_strerror(rc));
  reset_tracking(st);
  op->metrics.state_rows = live_count(st);
  return DIPPER_OK;
}

static int agg_restore_state(dp_op *op, dp_rd *in) {
  agg_state *st = op->state;
  if (st->rocks) return dp_agg_rocks_restore(st->rocks, in);
  if (st->ht.ngroups || st->nsess) return DIPPER_MISUSE; /* only into a fresh operator */
  int rc = restore_blob(op, in, AGG_STATE_VERSION, "state", load_whole);
  return rc ? rc : restore_ttl(op, in);
}

/* The key count a delta leaves in the table, from the one before it
** (`keys`: groups, or the keys of sessions), read from the delta's head
** (shape, base, drops, the new keys' count); -1 when it does not read. */
static int64_t delta_keys(const agg_state *st, dp_rd in, int64_t keys) {
  dp_get_u8(&in);
  dp_get_u64(&in);
  dp_get_u8(&in);
  dp_get_uvar(&in), dp_get_uvar(&in);
  uint64_t base = dp_get_uvar(&in);
  if (st->session) base = dp_get_uvar(&in);
  uint64_t drops = dp_get_uvar(&in);
  for (uint64_t k = 0; k < drops && !in.bad; k++) dp_get_uvar(&in);
  if (st->session) { /* the sessions' drops first, then the keys' */
    drops = dp_get_uvar(&in);
    for (uint64_t k = 0; k < drops && !in.bad; k++) dp_get_uvar(&in);
  }
  uint64_t added = dp_get_uvar(&in);
  if (in.bad || base != (uint64_t)keys || drops > base || added > (uint64_t)INT32_MAX) return -1;
  return keys - (int64_t)drops + (int64_t)added;
}

/* restore_expect: the table (and, without sessions, each call's states)
** sized once for the most keys the chain holds (the full state's count, from
** the first delta's base, then each delta's), instead of doubling part-way,
** which placed every group again (a quarter of a 10 M-group restore). */
static void agg_restore_expect(dp_op *op, const dp_rd *deltas, int n) {
  agg_state *st = op->state;
  if (st->rocks) return;
  dp_rd in = deltas[0]; /* the first delta's base: the full state's count */
  dp_get_u8(&in);
  dp_get_u64(&in);
  dp_get_u8(&in);
  dp_get_uvar(&in), dp_get_uvar(&in);
  int64_t keys = (int64_t)dp_get_uvar(&in), full = keys, most = keys;
  if (in.bad || st->ht.ngroups || keys < 0) return;
  if (st->session) keys = most = (int64_t)dp_get_uvar(&in);
  for (int k = 0; k < n && keys >= 0; k++) {
    keys = delta_keys(st, deltas[k], keys);
    if (keys > most) most = keys;
  }
  if (keys < 0 || most > INT32_MAX) return; /* a delta unread: the restore will say */
  (void)dp_ht_reserve(&st->ht, most); /* a hint: no memory, no reserve */
  /* the states too, without groups, exactly: the whole state writes the
  ** first `full` (its count: a delta with another base is refused) */
  for (int a = 0; a < st->naggs && !st->session; a++)
    (void)dp_agg_state_reserve_restore(&st->calls[a].st, most, full);
}

/* After a failure the operator is only fit for close (as after a failed
** restore_state). */
static int agg_restore_delta(dp_op *op, dp_rd *in) {
  agg_state *st = op->state;
  if (st->rocks) return dp_agg_rocks_restore(st->rocks, in); /* each names a whole one */
  int rc = restore_blob(op, in, AGG_DELTA_VERSION, "delta", load_delta_body);
  return rc ? rc : restore_ttl(op, in);
}

const dp_op_class dp_op_aggregate = {
    .name = "Aggregate",
    .open = agg_open,
    .next = agg_next,
    .end_batch = agg_end_batch,
    .close = agg_close,
    .save_state = agg_save_state,
    .restore_state = agg_restore_state,
    .save_delta = agg_save_delta,
    .restore_delta = agg_restore_delta,
    .restore_expect = agg_restore_expect,
};
