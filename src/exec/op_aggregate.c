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
** The cost of a batch follows the batch, not the state (issue 15): consume
** lists the states it changes (`touched`); the states the watermark can
** close are in a min-heap by end (the closing index, due_heap.h: a session
** is pushed again when its end grows, a stale entry is skipped when
** popped); emit looks at the touched ones and those the heap gives up to
** the watermark, sorted by id (the output's order: the order of a pass over
** every group).  Only a mode that emits every state (complete; the final
** batch of batch mode or of an append GROUP BY that never closes) looks at
** them all.  Drops are tombstones: a closed or expired group is flagged
** `gone` (a session: dead, unlinked from its key's list), and the states
** are compacted (dp_ht_compact, renumbered densely) only once the
** tombstones are half of them, so a drop costs O(1) amortized.  A gone
** group's key stays in the table until then: a row that finds one (an
** expired group written again, or the final batch's rows) compacts first,
** then finds its group anew, as if it had been dropped at once.
**
** Checkpoints (agg_checkpoint.c; the shared state is agg_int.h): the whole
** state after a micro-batch — group keys, sessions, every call's states and
** DISTINCT tables — as one versioned, checksummed blob, its tombstones
** listed (a save never changes the state it saves).  Restoring inserts the keys in their order, so group
** ids, and with them the order of output rows, are those of the run that
** saved.  save_delta writes only what changed since the last checkpoint
** (groups and sessions created, changed and dropped, the groups gone since
** and not compacted yet, DISTINCT entries created, kept values appended): a
** batch that changed k of n groups costs O(k) plus what it created and
** dropped, never a pass over the n.
*/
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "core/grow.h"
#include "core/vector_codec.h"
#include "exec/agg_int.h"
#include "exec/eval.h"
#include "exec/rows.h"

int dp_aggop_ensure(void *pp, int64_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return DIPPER_OK;
  int64_t old = *cap;
  if (dp_grow(pp, cap, need, elem, 256)) return DIPPER_NOMEM;
  char *q;
  memcpy(&q, pp, sizeof q);
  dp_prefault(q + (size_t)old * elem, (size_t)(*cap - old) * elem); /* zeroed next */
  memset(q + (size_t)old * elem, 0, (size_t)(*cap - old) * elem);
  return DIPPER_OK;
}

int dp_aggop_idlist_push(idlist *l, int64_t x) {
  int rc = dp_aggop_ensure(&l->v, &l->cap, l->n + 1, sizeof *l->v);
  if (!rc) l->v[l->n++] = x;
  return rc;
}

/* State id g changed: the next delta writes its states. */
static int mark_dirty(agg_state *st, int64_t g) {
  if (st->dirty[g]) return DIPPER_OK;
  st->dirty[g] = 1;
  return dp_aggop_idlist_push(&st->dirty_ids, g);
}

/* State id g changed in this batch: flagged, and listed for emit. */
static int touch(agg_state *st, int64_t g) {
  if (st->changed[g]) return DIPPER_OK;
  st->changed[g] = 1;
  return dp_aggop_idlist_push(&st->touched, g);
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
  free(st->gone);
  free(st->touched.v);
  free(st->cand.v);
  dp_due_free(&st->due);
  free(st->gone_new.v);
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

static int session_save(void *u, int64_t key, dp_buf *out, int64_t *end);
static int session_load(void *u, int64_t key, dp_rd *in);

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
  int rc = dp_agg_rocks_new(op, &st->ht, st->rstates, st->rdistinct, end_key, &st->rocks);
  if (!rc && st->session)
    dp_agg_rocks_set_codec(st->rocks, &(dp_agg_rocks_codec){op, session_save, session_load});
  return rc;
}

/* Idle state retention where the analysis set one (analyze_ttl.c). */
static int ttl_setup(dp_op *op) {
  agg_state *st = op->state;
  int64_t ttl = op->plan->props.state_ttl[0];
  if (ttl <= 0 || !op->ex->query || !op->ex->query->streaming || st->windowed) return DIPPER_OK;
  if (st->rocks) {
    dp_agg_rocks_set_ttl(st->rocks, ttl); /* a time index by last write (agg_rocks.c) */
    return DIPPER_OK;
  }
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
  st->streaming = op->ex->query && op->ex->query->streaming;
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

/* Room for n states' flags (changed, dirty, gone). */
int dp_aggop_grow_flags(agg_state *st, int64_t n) {
  int64_t cap = st->gcap, dcap = st->gcap, gcap = st->gcap;
  int rc = dp_aggop_ensure(&st->changed, &cap, n, sizeof *st->changed);
  if (!rc) rc = dp_aggop_ensure(&st->dirty, &dcap, n, sizeof *st->dirty);
  if (!rc) rc = dp_aggop_ensure(&st->gone, &gcap, n, sizeof *st->gone);
  if (rc) return rc;
  st->gcap = cap;
  return DIPPER_OK;
}

int dp_aggop_grow_groups(agg_state *st, int64_t n) {
  int rc = dp_aggop_grow_flags(st, n);
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

int dp_aggop_grow_sessions(agg_state *st, int64_t n) {
  int64_t cap = st->scap;
  int rc = DIPPER_OK;
#define GROW_S(arr)                                          \
  cap = st->scap;                                            \
  if (!rc) rc = dp_aggop_ensure(&st->arr, &cap, n, sizeof *st->arr);
  GROW_S(s_key) GROW_S(s_start) GROW_S(s_end) GROW_S(s_next) GROW_S(s_parent) GROW_S(s_dead)
#undef GROW_S
  if (rc) return rc;
  st->scap = cap;
  return DIPPER_OK;
}

int dp_aggop_grow_key_heads(agg_state *st) {
  int64_t kc = st->kcap;
  int rc = dp_aggop_ensure(&st->key_head, &kc, st->ht.ngroups, sizeof *st->key_head);
  if (rc) return rc;
  for (int64_t k = st->kcap; k < kc; k++) st->key_head[k] = -1;
  st->kcap = kc;
  return DIPPER_OK;
}

static int new_session(agg_state *st, int64_t key, int64_t start, int64_t end, int64_t *sid) {
  int64_t n = st->nsess + 1;
  int rc = dp_aggop_grow_sessions(st, n);
  if (rc) return rc;
  if ((rc = dp_aggop_grow_groups(st, n)) != DIPPER_OK) return rc;
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
int dp_aggop_chain_link(agg_call_state *c, int64_t g, int64_t e) {
  int64_t old = c->d_head_cap;
  int rc = dp_aggop_ensure(&c->d_head, &c->d_head_cap, g + 1, sizeof *c->d_head);
  if (rc) return rc;
  for (int64_t k = old; k < c->d_head_cap; k++) c->d_head[k] = -1;
  if ((rc = dp_aggop_ensure(&c->d_next, &c->d_next_cap, e + 1, sizeof *c->d_next))) return rc;
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
    if ((rc = dp_aggop_chain_link(c, dst, id))) break;
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
  st->ngone++;
  return st->changed[s] ? touch(st, target) : DIPPER_OK;
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
    st->s_next[s] = -1; /* dead: in no list */
  }
  if (target >= 0) {
    /* The target's end grew: later sessions may now overlap it too. */
    int64_t *l2 = &st->s_next[target];
    while (*l2 >= 0 && st->s_start[*l2] <= st->s_end[target]) {
      int64_t s = *l2;
      int rc = merge_session(st, target, s);
      if (rc) return rc;
      *l2 = st->s_next[s];
      st->s_next[s] = -1;
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
  if ((rc = dp_aggop_ensure(&st->ids, &cap, nin, sizeof(int64_t)))) return rc;
  cap = st->scratch_cap;
  if ((rc = dp_aggop_ensure(&st->rows, &cap, nin, sizeof(int64_t)))) return rc;
  cap = st->scratch_cap;
  if ((rc = dp_aggop_ensure(&st->sel, &cap, nin, sizeof(int64_t)))) return rc;
  cap = st->scratch_cap;
  if ((rc = dp_aggop_ensure(&st->hashes, &cap, nin, sizeof(int64_t)))) return rc;
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
  /* A row of a group gone (expired, or closed and written at the final
  ** batch) starts it again from nothing: the tombstones go first (a rare
  ** compaction), then the rows find their groups again. */
  if (!rc && !st->session && st->ngone > 0) {
    bool hit = false;
    for (int64_t k = 0; k < n && !hit; k++) {
      int64_t g = st->ids[st->rows[k]];
      hit = g < cached && st->gone[g];
    }
    if (hit && !(rc = dp_aggop_grow_groups(st, st->ht.ngroups)) && !(rc = dp_aggop_compact_gone(st)))
      rc = dp_ht_find_or_insert(&st->ht, kv, hashes, st->rows, n, st->ids, NULL);
  }
  if (kv != keys) free(kv);
  for (int64_t k = 0; !rc && st->ttl.ttl > 0 && k < n; k++)
    rc = dp_state_ttl_touch(&st->ttl, st->ids[st->rows[k]], self->ex->batch_start_time);
  if (rc) return rc;

  if (st->session) {
    if ((rc = dp_aggop_grow_key_heads(st))) return rc;
    /* the batch's new keys come with their stored sessions */
    if (st->rocks && (rc = dp_agg_rocks_fetch(st->rocks, cached))) return rc;
    const dp_vector *ws = st->gvec[st->wstart], *we = st->gvec[st->wend];
    for (int64_t k = 0; k < n; k++) {
      int64_t r = st->rows[k], sid;
      rc = session_for(st, st->ids[r], dp_vector_get_i64(ws, r), dp_vector_get_i64(we, r), &sid);
      if (rc) return rc;
      st->ids[r] = sid;
    }
    /* Rows assigned before a later merge point at the merged-away session. */
    for (int64_t k = 0; k < n; k++) st->ids[st->rows[k]] = find_root(st, st->ids[st->rows[k]]);
  } else if ((rc = dp_aggop_grow_groups(st, st->ht.ngroups))) {
    return rc;
  } else if (st->rocks && (rc = dp_agg_rocks_fetch(st->rocks, cached))) {
    return rc; /* the new groups of the cache start from their stored states */
  }

  for (int64_t k = 0; k < n; k++) {
    int64_t g = st->ids[st->rows[k]];
    if (!st->changed[g] && (rc = touch(st, g))) return rc;
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
      /* over RocksDB the group's earlier values are entries of their own */
      bool keyed = st->rocks && !st->session;
      if (keyed) rc = dp_agg_rocks_distinct(st->rocks, a, dk, 2, dh, use, m, dids, st->sel, &m2);
      for (int64_t k = 0; k < m && !rc && !keyed; k++) {
        int64_t r = use[k], before = c->distinct.ngroups;
        if (dp_vector_is_null(c->args[0], r)) continue;
        rc = dp_ht_find_or_insert(&c->distinct, dk, dh, &r, 1, dids, NULL);
        if (!rc && c->distinct.ngroups > before) {
          st->sel[m2++] = r;
          if (st->session) rc = dp_aggop_chain_link(c, st->ids[r], dids[r]);
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

int64_t dp_aggop_nstates(const agg_state *st) { return st->session ? st->nsess : st->ht.ngroups; }
int64_t dp_aggop_live_count(const agg_state *st) { return dp_aggop_nstates(st) - st->ngone; }

/* A tombstone: dead merged or closed sessions, gone groups. */
bool dp_aggop_is_dead(const agg_state *st, int64_t g) {
  return st->session ? st->s_dead[g] : st->gone[g] != 0;
}

/* Every live state in the closing index, from scratch (heapified: O(n)). */
int dp_aggop_rebuild_due(agg_state *st) {
  int64_t n = dp_aggop_nstates(st);
  st->due.n = 0;
  st->due_known = st->ht.ngroups;
  if (!st->evicts || !st->streaming || st->rocks) return DIPPER_OK;
  int rc = dp_due_reserve(&st->due, n);
  if (rc) return rc;
  for (int64_t g = 0; g < n; g++)
    if (!dp_aggop_is_dead(st, g)) st->due.v[st->due.n++] = (dp_due){group_end(st, g), g};
  dp_due_heapify(&st->due);
  return DIPPER_OK;
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
    else rc = dp_aggop_idlist_push(&fresh, b);
  }
  /* merge the two ascending lists */
  idlist both = {0};
  int64_t x = 0, y = 0;
  while (!rc && (x < dropped->n || y < fresh.n)) {
    bool first = y >= fresh.n || (x < dropped->n && dropped->v[x] < fresh.v[y]);
    rc = dp_aggop_idlist_push(&both, first ? dropped->v[x++] : fresh.v[y++]);
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

static void remap_list(idlist *l, const int64_t *remap) {
  int64_t m = 0;
  for (int64_t k = 0; k < l->n; k++)
    if (remap[l->v[k]] >= 0) l->v[m++] = remap[l->v[k]];
  l->n = m;
}

/* The flags and lists per state id follow the renumbering (a compaction can
** come in the middle of a batch's input: the changed ones too); the
** tombstones are dropped by it, every one. */
static void remap_flags(agg_state *st, const int64_t *remap, int64_t n, int64_t kept) {
  for (int64_t g = 0; g < n; g++)
    if (remap[g] >= 0) {
      st->dirty[remap[g]] = st->dirty[g];
      st->changed[remap[g]] = st->changed[g];
    }
  for (int64_t g = kept; g < n; g++) st->dirty[g] = st->changed[g] = 0;
  if (n > 0) memset(st->gone, 0, (size_t)n);
  remap_list(&st->dirty_ids, remap);
  remap_list(&st->touched, remap);
  st->ngone = 0;
  st->gone_new.n = 0;
}

/* DISTINCT in session windows: every session's chain, its entries newest
** first — what dp_aggop_chain_link builds one entry at a time. */
static int rechain(agg_call_state *c) {
  for (int64_t g = 0; g < c->d_head_cap; g++) c->d_head[g] = -1;
  const int64_t *gid = c->distinct.keys[0]->values;
  int rc = DIPPER_OK;
  for (int64_t e = 0; e < c->distinct.ngroups && !rc; e++) rc = dp_aggop_chain_link(c, gid[e], e);
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
int dp_aggop_compact_calls(agg_state *st, const int64_t *remap, int64_t n, int64_t kept, bool replay) {
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
void dp_aggop_compact_sessions(agg_state *st, const int64_t *remap, int64_t n) {
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
void dp_aggop_relink_sessions(agg_state *st) {
  for (int64_t k = 0; k < st->kcap; k++) st->key_head[k] = -1;
  for (int64_t s = st->nsess - 1; s >= 0; s--) {
    if (st->s_dead[s]) {
      st->s_next[s] = -1; /* in no list (as the run that saved them keeps them) */
      continue;
    }
    int64_t *link = &st->key_head[st->s_key[s]];
    while (*link >= 0 && st->s_start[*link] <= st->s_start[s]) link = &st->s_next[*link];
    st->s_next[s] = *link;
    *link = s;
  }
}

/* Drop the groups with keep[g] false (every tombstone among them):
** renumber the states densely. */
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
  if (!rc) remap_flags(st, remap, n, kept);
  if (!rc) rc = dp_aggop_compact_calls(st, remap, n, kept, false);
  if (!rc && st->session) {
    dp_aggop_compact_sessions(st, remap, n);
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
    if (!rc) dp_aggop_relink_sessions(st);
  }
  free(remap);
  return rc ? rc : dp_aggop_rebuild_due(st);
}

/* The tombstones compacted away: O(states), so done only when they are at
** least half of them (each costs O(1) amortized), before a whole-state
** checkpoint, and when a row finds a gone group (consume). */
int dp_aggop_compact_gone(agg_state *st) {
  int64_t n = dp_aggop_nstates(st);
  bool *keep = malloc((size_t)(n > 0 ? n : 1));
  if (!keep) return DIPPER_NOMEM;
  for (int64_t g = 0; g < n; g++) keep[g] = !dp_aggop_is_dead(st, g);
  int rc = drop_groups(st, keep, n);
  free(keep);
  return rc;
}

static int maybe_compact(agg_state *st) {
  return st->ngone > 0 && 2 * st->ngone >= dp_aggop_nstates(st) ? dp_aggop_compact_gone(st) : DIPPER_OK;
}

/* State g leaves (its window closed, or it expired): a tombstone until the
** next compaction.  A group: flagged gone and listed for the delta (its key
** stays in the table: a row that finds it compacts first).  A session:
** dead, its own root, unlinked from its key's list (so no row merges into
** it), and dirty (a delta writes its dead flag). */
static int tombstone(agg_state *st, int64_t g, bool ttl_listed) {
  st->ngone++;
  if (!st->session) {
    st->gone[g] = 1;
    if (ttl_listed && st->ttl.ttl > 0) dp_state_ttl_remove(&st->ttl, g);
    return dp_aggop_idlist_push(&st->gone_new, g);
  }
  st->s_dead[g] = true;
  int64_t *link = &st->key_head[st->s_key[g]];
  while (*link >= 0 && *link != g) link = &st->s_next[*link];
  if (*link == g) *link = st->s_next[g];
  st->s_next[g] = -1;
  return mark_dirty(st, g);
}

/* A global aggregate (no GROUP BY) over no rows still answers one row in
** batch mode: COUNT 0, SUM NULL (SQL). */
static int add_empty_group(agg_state *st) {
  uint64_t hash = 0;
  int64_t id;
  dp_ht_hash(NULL, 0, 1, &hash);
  int rc = dp_ht_find_or_insert(&st->ht, NULL, &hash, NULL, 1, &id, NULL);
  return rc ? rc : dp_aggop_grow_groups(st, st->ht.ngroups);
}

/* Before the batch's input: the groups not written for the TTL are gone, so
** that a row of an expired group starts it again from nothing (Flink's
** NeverReturnExpired).  Finding them costs what expires (state_ttl.h), and
** so does dropping them (tombstones). */
static int expire_idle(dp_op *op) {
  agg_state *st = op->state;
  int64_t *ids = NULL, nexp = 0;
  int rc = dp_state_ttl_expire(&st->ttl, op->ex->batch_start_time, &ids, &nexp);
  for (int64_t k = 0; !rc && k < nexp; k++)
    if (!st->gone[ids[k]]) rc = tombstone(st, ids[k], false);
  free(ids);
  if (!rc) rc = maybe_compact(st);
  op->metrics.state_rows = dp_aggop_live_count(st);
  return rc;
}

int dp_aggop_cmp_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Whether a batch emits state g (the output modes, top of the file). */
static bool wants(const agg_state *st, const dp_exec *ex, unsigned mode, int64_t g, bool closed) {
  if (!st->streaming) return ex->final;
  if (mode & DP_MODE_COMPLETE) return true;
  if (mode & DP_MODE_UPDATE) return st->changed[g] != 0;
  return st->evicts ? closed : ex->final; /* append */
}

/* The states a batch looks at, ascending (the order of the output rows):
** every live one when the mode emits them all; else those it changed and
** those whose end the watermark passed (popped off the closing index). */
static int candidates(agg_state *st, bool all, bool closes, int64_t wm) {
  int64_t n = dp_aggop_nstates(st);
  idlist *c = &st->cand;
  c->n = 0;
  int rc = DIPPER_OK;
  /* the index learns the states created or grown in this batch */
  if (st->evicts && st->streaming && !st->session)
    for (int64_t g = st->due_known; g < n && !rc; g++)
      if (!st->gone[g]) rc = dp_due_push(&st->due, group_end(st, g), g);
  for (int64_t k = 0; st->evicts && st->streaming && st->session && k < st->touched.n && !rc; k++) {
    int64_t s = st->touched.v[k];
    if (!st->s_dead[s]) rc = dp_due_push(&st->due, st->s_end[s], s);
  }
  st->due_known = st->ht.ngroups;
  if (rc) return rc;
  if (all) {
    if ((rc = dp_aggop_ensure(&c->v, &c->cap, n, sizeof *c->v))) return rc;
    for (int64_t g = 0; g < n; g++)
      if (!dp_aggop_is_dead(st, g)) c->v[c->n++] = g;
    return DIPPER_OK;
  }
  for (int64_t k = 0; k < st->touched.n && !rc; k++)
    if (!dp_aggop_is_dead(st, st->touched.v[k])) rc = dp_aggop_idlist_push(c, st->touched.v[k]);
  while (!rc && closes && st->due.n > 0 && dp_due_top(&st->due) <= wm) {
    dp_due d = dp_due_pop(&st->due);
    if (d.id < n && !dp_aggop_is_dead(st, d.id) && (!st->session || st->s_end[d.id] == d.t))
      rc = dp_aggop_idlist_push(c, d.id);
  }
  if (rc) return rc;
  if (c->n > 1) qsort(c->v, (size_t)c->n, sizeof *c->v, dp_aggop_cmp_id);
  int64_t m = 0;
  for (int64_t k = 0; k < c->n; k++)
    if (m == 0 || c->v[m - 1] != c->v[k]) c->v[m++] = c->v[k];
  c->n = m;
  return DIPPER_OK;
}

/* The batch's output.  Its cost follows the batch: the states it changed,
** those its watermark closes (the closing index), and their drops
** (tombstones, compacted away once they are half the states); only a mode
** that emits every state (complete, or the final batch of batch mode or of
** an append GROUP BY that never closes) looks at every state. */
static int emit(dp_op *op) {
  agg_state *st = op->state;
  dp_exec *ex = op->ex;
  int rc;
  if (st->ngroup == 0 && st->ht.ngroups == 0 && !st->streaming && ex->final &&
      (rc = add_empty_group(st)) != DIPPER_OK)
    return rc;
  unsigned mode = ex->output_mode ? ex->output_mode : DP_MODE_UPDATE;
  int64_t wm = ex->final ? DP_WATERMARK_END : ex->watermark;
  bool have_wm = wm != DP_WATERMARK_NONE && st->evicts;
  bool closes = st->streaming && !(mode & DP_MODE_COMPLETE) && have_wm;
  bool all = !st->streaming ? ex->final
                            : (mode & DP_MODE_COMPLETE) ||
                                  (!(mode & DP_MODE_UPDATE) && !st->evicts && ex->final);
  if ((rc = candidates(st, all, closes, wm))) return rc;
  const idlist *c = &st->cand;
  if ((rc = dp_aggop_ensure(&st->emit, &st->emit_cap, c->n, sizeof *st->emit))) return rc;
  int64_t nemit = 0;
  for (int64_t k = 0; k < c->n; k++) {
    int64_t g = c->v[k];
    if (wants(st, ex, mode, g, have_wm && group_end(st, g) <= wm)) st->emit[nemit++] = g;
  }
  rc = build_output(op, nemit);
  for (int64_t k = 0; !rc && closes && k < c->n; k++)
    if (group_end(st, c->v[k]) <= wm) rc = tombstone(st, c->v[k], true);
  /* clearing a flag a restored state had set is a change too */
  for (int64_t k = 0; !rc && k < st->touched.n; k++) {
    int64_t g = st->touched.v[k];
    if (st->changed[g] && !dp_aggop_is_dead(st, g) && !st->dirty[g]) rc = mark_dirty(st, g);
    st->changed[g] = 0;
  }
  st->touched.n = 0;
  if (!rc) rc = maybe_compact(st);
  op->metrics.state_rows = dp_aggop_live_count(st);
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
/* Session windows over RocksDB: a key's record is its sessions (those the
** watermark has not closed), by start:
**   n:uvar, per session: start:svar end:svar, per call
**   dp_agg_state_save_group's record, and a DISTINCT call's values after it
** and its end (agg_rocks.h's codec) the least of their ends, where the time
** index has the key: the watermark that passes it brings the key back, and
** a key whose first session closes, or that gains an earlier one, moves in
** the index.  A batch's keys enter with their sessions (consume), rows merge
** them as in memory, and the key goes back with those left open. */
/* A DISTINCT call's values of session s, oldest first, one vector per value
** column of its table (its chain is newest first: loaded in this order, the
** chain is the same again, and so is the order a merge folds them in).  A
** session's values stay in its record, not in entries of their own: they
** follow its merges, and a session lives a few gaps. */
static int session_save_values(agg_call_state *c, int64_t s, dp_buf *out) {
  int64_t n = 0, *ids = NULL;
  for (int64_t e = s < c->d_head_cap ? c->d_head[s] : -1; e >= 0; e = c->d_next[e]) n++;
  if (n && !(ids = malloc((size_t)n * sizeof *ids))) return DIPPER_NOMEM;
  int64_t i = n;
  for (int64_t e = n ? c->d_head[s] : -1; e >= 0; e = c->d_next[e]) ids[--i] = e;
  dp_put_uvar(out, (uint64_t)n);
  int rc = DIPPER_OK;
  for (int j = 1; j < c->distinct.nkeys && !rc; j++) {
    dp_vector *v = dp_vector_new(c->distinct.keys[j]->type, n);
    rc = v ? dp_vector_take(v, c->distinct.keys[j], ids, 0, n) : DIPPER_NOMEM;
    if (!rc) rc = dp_vector_encode(v, 0, n, out);
    dp_vector_free(v);
  }
  free(ids);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* The values session_save_values wrote into the call's table as session s's,
** chained (none may be there already). */
static int session_load_values(agg_call_state *c, int64_t s, dp_rd *in) {
  int64_t n = (int64_t)dp_get_count(in, 1);
  if (in->bad) return DIPPER_CORRUPT;
  int nk = c->distinct.nkeys;
  dp_vector **cols = calloc((size_t)nk, sizeof *cols);
  uint64_t *h = malloc((size_t)(n ? n : 1) * sizeof *h);
  int64_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids), created = 0;
  int rc = cols && h && ids ? DIPPER_OK : DIPPER_NOMEM;
  for (int j = 0; j < nk && !rc; j++)
    if (!(cols[j] = dp_vector_new(c->distinct.keys[j]->type, n))) rc = DIPPER_NOMEM;
  for (int64_t i = 0; i < n && !rc; i++) rc = dp_vector_append_i64(cols[0], s);
  for (int j = 1; j < nk && !rc; j++) {
    rc = dp_vector_decode(in, cols[j]);
    if (rc != DIPPER_NOMEM && (rc || cols[j]->length != n)) rc = DIPPER_CORRUPT;
  }
  if (!rc) {
    dp_ht_hash((const dp_vector *const *)cols, nk, n, h);
    rc = dp_ht_find_or_insert(&c->distinct, (const dp_vector *const *)cols, h, NULL, n, ids, &created);
  }
  if (!rc && created != n) rc = DIPPER_CORRUPT;
  for (int64_t i = 0; i < n && !rc; i++) rc = dp_aggop_chain_link(c, s, ids[i]);
  for (int j = 0; cols && j < nk; j++) dp_vector_free(cols[j]);
  free(cols);
  free(h);
  free(ids);
  return rc;
}

static int session_save(void *u, int64_t key, dp_buf *out, int64_t *end) {
  dp_op *op = u;
  agg_state *st = op->state;
  uint64_t n = 0;
  int64_t least = INT64_MAX;
  for (int64_t s = st->key_head[key]; s >= 0; s = st->s_next[s]) {
    n++;
    if (st->s_end[s] < least) least = st->s_end[s];
  }
  dp_put_uvar(out, n);
  int rc = DIPPER_OK;
  for (int64_t s = st->key_head[key]; s >= 0 && !rc; s = st->s_next[s]) {
    dp_put_svar(out, st->s_start[s]);
    dp_put_svar(out, st->s_end[s]);
    for (int a = 0; a < st->naggs && !rc; a++) {
      rc = dp_agg_state_save_group(&st->calls[a].st, s, out);
      if (!rc && st->calls[a].has_distinct) rc = session_save_values(&st->calls[a], s, out);
    }
  }
  *end = least;
  return rc;
}

static int session_load(void *u, int64_t key, dp_rd *in) {
  dp_op *op = u;
  agg_state *st = op->state;
  int rc = dp_aggop_grow_key_heads(st);
  uint64_t n = rc ? 0 : dp_get_count(in, 2);
  for (uint64_t i = 0; i < n && !rc && !in->bad; i++) {
    int64_t start = dp_get_svar(in), end = dp_get_svar(in), s;
    if (in->bad || end < start) return DIPPER_CORRUPT;
    if ((rc = new_session(st, key, start, end, &s))) break;
    for (int a = 0; a < st->naggs && !rc; a++) {
      rc = dp_agg_state_load_group(&st->calls[a].st, &op->plan->u.aggregate.aggs[a], s, in);
      if (!rc && st->calls[a].has_distinct) rc = session_load_values(&st->calls[a], s, in);
    }
  }
  return rc ? rc : in->bad ? DIPPER_CORRUPT : DIPPER_OK;
}

/* rocks_emit for sessions: those the watermark closes (append) or the batch
** changed (update) out; the closed ones gone; every key back to RocksDB
** with its open sessions (none: its entry deleted); the cache emptied. */
static int rocks_emit_sessions(dp_op *op, bool append, int64_t wm, bool have_wm) {
  agg_state *st = op->state;
  int64_t ns = st->nsess, nk = st->ht.ngroups, nemit = 0;
  int rc = dp_aggop_ensure(&st->emit, &st->emit_cap, ns, sizeof *st->emit);
  int64_t m = ns > nk ? ns : nk;
  bool *keep = rc ? NULL : malloc((size_t)(m > 0 ? m : 1));
  if (!rc && !keep) rc = DIPPER_NOMEM;
  for (int64_t s = 0; !rc && s < ns; s++) {
    if (st->s_dead[s]) continue;
    bool closed = have_wm && st->s_end[s] <= wm;
    if (append ? closed : st->changed[s] != 0) st->emit[nemit++] = s;
  }
  if (!rc) rc = build_output(op, nemit);
  for (int64_t s = 0; !rc && s < ns; s++) {
    if (!st->s_dead[s] && have_wm && st->s_end[s] <= wm) rc = tombstone(st, s, false);
    st->changed[s] = 0;
  }
  st->touched.n = 0;
  for (int64_t g = 0; !rc && g < nk; g++) keep[g] = st->key_head[g] >= 0;
  if (!rc) rc = dp_agg_rocks_store(st->rocks, keep, nk);
  for (int64_t s = 0; !rc && s < ns; s++) keep[s] = false;
  if (!rc) rc = drop_groups(st, keep, ns);
  free(keep);
  return rc;
}

static int rocks_emit(dp_op *op, bool append, int64_t wm, bool have_wm, bool due) {
  agg_state *st = op->state;
  if (st->session) return rocks_emit_sessions(op, append, wm, have_wm);
  int64_t n = st->ht.ngroups, nemit = 0;
  int rc = dp_aggop_ensure(&st->emit, &st->emit_cap, n, sizeof *st->emit);
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
      int64_t expired = 0;
      if (!rc) rc = dp_agg_rocks_expire(st->rocks, ex->batch_start_time, &expired);
      if (!rc) rc = dp_op_drain(op->children[0], consume, op);
      if (!rc && have_wm) rc = dp_agg_rocks_due(st->rocks, wm, false);
      if (!rc) rc = rocks_emit(op, append, wm, have_wm, false);
      if (!rc && !st->evicts && append && ex->final)
        rc = dp_agg_rocks_due(st->rocks, INT64_MAX, true);
    } else {
      bool any = false;
      rc = dp_agg_rocks_next(st->rocks, DP_ROWS_CHUNK, &any);
      if (!rc && !any) st->done = true;
      if (!rc && any && !st->session) rc = dp_aggop_grow_groups(st, st->ht.ngroups);
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

const dp_op_class dp_op_aggregate = {
    .name = "Aggregate",
    .open = agg_open,
    .next = agg_next,
    .end_batch = agg_end_batch,
    .close = agg_close,
    .save_state = dp_aggop_save_state,
    .restore_state = dp_aggop_restore_state,
    .save_delta = dp_aggop_save_delta,
    .restore_delta = dp_aggop_restore_delta,
    .restore_expect = dp_aggop_restore_expect,
};
