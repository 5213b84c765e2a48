/*
** agg_rocks.c — an aggregation's groups in RocksDB (agg_rocks.h says what is
** stored and why).
**
** Entry (state_rocks.h, space 0): key the group's key columns; value, per
** call in order, dp_agg_state_save_delta's record of the one group.  Time
** index (space 0): the group's end (the window's end, or the event-time
** key), written once when the group is first stored; the watermark's range
** scan takes the index entries it passes away, and the groups' entries go
** as their windows are emitted or dropped.
*/
#include "exec/agg_rocks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/vector_codec.h"

struct dp_agg_rocks {
  dp_rocks *db;
  dp_diags *diags;
  const dp_exec *ex;
  const dp_plan *plan;
  dp_hashtable *ht;
  dp_agg_state *const *states;
  int naggs, end_key;
  int64_t count;          /* stored groups */
  uint8_t *stored;        /* per cached group: it has an entry */
  int64_t stored_cap;
  dp_buf keys, val;       /* scratch: entry keys back to back, a value */
  size_t *offs;
  int64_t offs_cap;
  /* due: the keys left to enter */
  dp_buf due;
  size_t *due_offs;
  int64_t due_cap, ndue, due_at;
  dp_vector **kv;         /* scratch: decoded key columns */
  int64_t *ids, ids_cap;
  uint64_t *hashes;
  int64_t *order, order_cap; /* scratch: the groups in key order */
};

static bool plan_ordinal(const dp_plan *at, const dp_plan *p, int *n) {
  if (at == p) return true;
  if (at->kind == p->kind) ++*n;
  for (int i = 0; i < at->ninputs; i++)
    if (plan_ordinal(at->inputs[i], p, n)) return true;
  return false;
}

int dp_rocks_open_op(dp_op *op, const char *prefix, dp_rocks **out) {
  dp_exec *ex = op->ex;
  int n = 0;
  if (!ex->root || !plan_ordinal(ex->root, op->plan, &n)) n = 0;
  char name[48];
  snprintf(name, sizeof name, "%s-%d", prefix, n);
  return dp_rocks_new(ex->checkpoint, name, ex->diags, out);
}

const char *dp_agg_rocks_refusal(const dp_exec *ex, const dp_plan *p, dp_agg_state *const *states) {
  const dp_plan *w = p->u.aggregate.window;
  if (w && w->u.window.kind == DP_WIN_SESSION) return "a session window";
  if (ex->output_mode & DP_MODE_COMPLETE)
    return "complete output mode (every group every batch: use update or append)";
  for (int a = 0; a < p->u.aggregate.naggs; a++) {
    if (p->u.aggregate.aggs[a].distinct) return "an aggregate of DISTINCT values";
    if (states[a]->store)
      return "MIN/MAX of strings or nested values, FIRST_VALUE, LAST_VALUE or COLLECT";
  }
  return NULL;
}

int dp_agg_rocks_new(dp_op *op, dp_hashtable *ht, dp_agg_state *const *states, int end_key,
                     dp_agg_rocks **out) {
  *out = NULL;
  dp_agg_rocks *r = calloc(1, sizeof *r);
  if (!r) return DIPPER_NOMEM;
  r->diags = op->ex->diags;
  r->ex = op->ex;
  r->plan = op->plan;
  r->ht = ht;
  r->states = states;
  r->naggs = op->plan->u.aggregate.naggs;
  r->end_key = end_key;
  r->kv = calloc((size_t)(ht->nkeys > 0 ? ht->nkeys : 1), sizeof *r->kv);
  int rc = r->kv ? DIPPER_OK : DIPPER_NOMEM;
  for (int j = 0; !rc && j < ht->nkeys; j++)
    if (!(r->kv[j] = dp_vector_new(ht->keys[j]->type, 0))) rc = DIPPER_NOMEM;
  if (!rc) rc = dp_rocks_open_op(op, "agg", &r->db);
  if (rc) {
    dp_agg_rocks_free(r);
    return rc;
  }
  *out = r;
  return DIPPER_OK;
}

void dp_agg_rocks_free(dp_agg_rocks *r) {
  if (!r) return;
  dp_rocks_free(r->db);
  for (int j = 0; r->kv && j < r->ht->nkeys; j++) dp_vector_free(r->kv[j]);
  free(r->kv);
  free(r->stored);
  dp_buf_free(&r->keys);
  dp_buf_free(&r->val);
  dp_buf_free(&r->due);
  free(r->offs);
  free(r->due_offs);
  free(r->ids);
  free(r->hashes);
  free(r->order);
  free(r);
}

int dp_agg_rocks_begin(dp_agg_rocks *r) { return dp_rocks_begin(r->db); }

int64_t dp_agg_rocks_count(const dp_agg_rocks *r) { return r->count; }

bool dp_agg_rocks_stored(const dp_agg_rocks *r, int64_t g) {
  return g < r->stored_cap && r->stored[g];
}

/* The entry keys of cached groups [from, to) into r->keys / r->offs. */
static int group_keys(dp_agg_rocks *r, int64_t from, int64_t to) {
  return dp_rocks_entry_keys(&r->keys, &r->offs, &r->offs_cap, (const dp_vector *const *)r->ht->keys,
                             r->ht->nkeys, NULL, from, to - from);
}

typedef struct fetch_ctx {
  dp_agg_rocks *r;
  int64_t from;
} fetch_ctx;

/* A stored group's value into cached group from + i. */
static int load_group(void *u, int64_t i, const char *v, size_t vn) {
  fetch_ctx *f = u;
  dp_agg_rocks *r = f->r;
  int64_t g = f->from + i, ng = r->ht->ngroups;
  dp_rd rd;
  dp_rd_init(&rd, v, vn);
  for (int a = 0; a < r->naggs; a++) {
    int rc = dp_agg_state_load_delta(r->states[a], &r->plan->u.aggregate.aggs[a], &g, 1, ng, &rd);
    if (rc) return rc;
  }
  if (!dp_rd_done(&rd)) return DIPPER_CORRUPT;
  r->stored[g] = 1;
  return DIPPER_OK;
}

int dp_agg_rocks_fetch(dp_agg_rocks *r, int64_t from) {
  int64_t to = r->ht->ngroups;
  if (to <= from) return DIPPER_OK;
  if (to > r->stored_cap) {
    int64_t old = r->stored_cap;
    if (dp_grow(&r->stored, &r->stored_cap, to, 1, 1024)) return DIPPER_NOMEM;
    memset(r->stored + old, 0, (size_t)(r->stored_cap - old));
  }
  memset(r->stored + from, 0, (size_t)(to - from));
  for (int a = 0; a < r->naggs; a++) {
    int rc = dp_agg_state_reserve(r->states[a], to);
    if (rc) return rc;
  }
  int rc = group_keys(r, from, to);
  fetch_ctx f = {r, from};
  if (!rc) rc = dp_rocks_get_many(r->db, &r->keys, r->offs, to - from, load_group, &f);
  return rc;
}

int dp_agg_rocks_store(dp_agg_rocks *r, const bool *keep, int64_t n) {
  int rc = group_keys(r, 0, n);
  if (!rc && n > r->order_cap &&
      dp_grow(&r->order, &r->order_cap, n, sizeof *r->order, 1024))
    rc = DIPPER_NOMEM;
  if (!rc) rc = dp_rocks_key_order(&r->keys, r->offs, n, r->order);
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t g = r->order[i];
    const char *k = r->keys.data + r->offs[g];
    size_t kn = r->offs[g + 1] - r->offs[g];
    bool stored = dp_agg_rocks_stored(r, g);
    if (!keep[g]) {
      if (stored) {
        dp_rocks_delete(r->db, k, kn);
        r->count--;
      }
      continue;
    }
    r->val.len = 0;
    for (int a = 0; a < r->naggs && !rc; a++)
      rc = dp_agg_state_save_delta(r->states[a], &g, 1, n, &r->val);
    if (rc) break;
    dp_rocks_put(r->db, k, kn, r->val.data, r->val.len);
    if (!stored) {
      r->count++;
      if (r->end_key >= 0)
        rc = dp_rocks_index_put(r->db, 0, dp_vector_get_i64(r->ht->keys[r->end_key], g), k, kn);
    }
  }
  return rc ? rc : dp_rocks_commit(r->db);
}

/* dp_rocks_scan: every entry's key to the due list. */
static int note_key(void *u, const char *k, size_t kn, const char *v, size_t vn) {
  (void)v, (void)vn;
  dp_agg_rocks *r = u;
  if (r->ndue + 2 > r->due_cap &&
      dp_grow(&r->due_offs, &r->due_cap, r->ndue + 2, sizeof *r->due_offs, 1024))
    return DIPPER_NOMEM;
  dp_buf_put(&r->due, k, kn);
  r->due_offs[++r->ndue] = r->due.len;
  return r->due.oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_agg_rocks_due(dp_agg_rocks *r, int64_t wm, bool all) {
  r->due_at = r->ndue = 0;
  r->due.len = 0;
  if (!all)
    return dp_rocks_index_due(r->db, 0, wm, &r->due, &r->due_offs, &r->due_cap, &r->ndue);
  if (dp_grow(&r->due_offs, &r->due_cap, 2, sizeof *r->due_offs, 1024)) return DIPPER_NOMEM;
  r->due_offs[0] = 0;
  return dp_rocks_scan(r->db, 0, note_key, r);
}

int dp_agg_rocks_next(dp_agg_rocks *r, int64_t max, bool *any) {
  int64_t n = r->ndue - r->due_at < max ? r->ndue - r->due_at : max;
  *any = n > 0;
  if (n <= 0) return DIPPER_OK;
  int nk = r->ht->nkeys;
  int rc = DIPPER_OK;
  for (int j = 0; j < nk; j++) dp_vector_clear(r->kv[j]);
  for (int64_t i = r->due_at; i < r->due_at + n && !rc; i++)
    rc = dp_rocks_entry_cols(r->due.data + r->due_offs[i], r->due_offs[i + 1] - r->due_offs[i],
                             r->kv, nk);
  r->due_at += n;
  if (rc == DIPPER_CORRUPT)
    return dp_error(r->diags, rc, r->plan->span,
                    "the aggregation's rocksdb state holds a key that does not read back");
  if (rc) return rc;
  if (n > r->ids_cap) {
    int64_t cap = r->ids_cap;
    if (dp_grow(&r->ids, &cap, n, sizeof *r->ids, 1024) ||
        dp_grow(&r->hashes, &r->ids_cap, n, sizeof *r->hashes, 1024))
      return DIPPER_NOMEM;
  }
  const dp_vector *const *kc = (const dp_vector *const *)r->kv;
  dp_ht_hash(kc, nk, n, r->hashes);
  int64_t from = r->ht->ngroups;
  if ((rc = dp_ht_find_or_insert(r->ht, kc, r->hashes, NULL, n, r->ids, NULL))) return rc;
  return dp_agg_rocks_fetch(r, from);
}

/* ---- checkpoints ----
**   version:u8 (1)  'R'  checkpoint:svar  groups:svar
** the checkpoint the batch id of the RocksDB checkpoint under
** <query folder>/rocksdb/agg-<n>/ (each one whole, its SST files shared by
** hard links with the one before). */
#define AGG_ROCKS_VERSION 1

int dp_agg_rocks_save(dp_agg_rocks *r, dp_buf *out) {
  int64_t ck;
  int rc = dp_rocks_save(r->db, r->ex->batch_id, &ck);
  if (rc) return rc;
  dp_put_u8(out, AGG_ROCKS_VERSION);
  dp_put_u8(out, 'R');
  dp_put_svar(out, ck);
  dp_put_svar(out, r->count);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_agg_rocks_restore(dp_agg_rocks *r, dp_rd *in) {
  uint8_t v = dp_get_u8(in), tag = dp_get_u8(in);
  int64_t ck = dp_get_svar(in), count = dp_get_svar(in);
  dp_span nowhere = {0, 0, 0, 0};
  if (!in->bad && (v != AGG_ROCKS_VERSION || tag != 'R')) {
    in->bad = true;
    return dp_error(r->diags, DIPPER_CORRUPT, nowhere,
                    "the checkpointed state of the aggregation is of version %u, and this run "
                    "reads a rocksdb state of version %d (was it written with another "
                    "'state.backend'?): start the query from a fresh checkpoint folder",
                    v, AGG_ROCKS_VERSION);
  }
  if (in->bad || ck < 0 || count < 0) {
    in->bad = true;
    return dp_error(r->diags, DIPPER_CORRUPT, nowhere,
                    "the checkpointed state of the aggregation does not read back");
  }
  int rc = dp_rocks_restore(r->db, ck);
  if (!rc) r->count = count;
  return rc;
}
