/*
** topn_rocks.c — the update-mode Top-N over RocksDB (topn_rocks.h).
**
** Entries (state_rocks.h's keyed entries, space 0):
**   0x10 hash klen partition-key  ->  [at:svar]  n:uvar  rank:uvar * n
**                                     seq:uvar * n  rows (vector_codec batch)
**   0x20 at:u64 entry-key         ->  (empty; only under a state TTL)
** a partition's top in its store order (one run of op_topn.c's `rows`),
** each row with the rank it was last emitted with and its arrival number
** (ties rank by it), so that a partition loaded back ranks exactly as the
** one memory kept; `at` is the start of the batch that last wrote it.
**
** The cache.  op_topn.c's state (`parts`, the top of each as a run of
** `rows`, the TTL list `ttl`) holds the partitions the batches touched
** since the cache was last emptied; it is authoritative for them (a cached
** partition with an empty top is known to have none: it expired).  Per
** cached partition `flag` says whether RocksDB has an entry for it (IN_DB),
** whether the time index has it and at which time (INDEXED, `iat`) and
** whether it is to be written (DIRTY, listed once in `dlist` each time it
** becomes so).  A partition's top is dirty when update_top changed it;
** under a TTL every partition a batch touches is (its time moved).  At the
** end of a batch whose cache passes the budget, every dirty partition is
** written (in key order, its index entry moved when its time did) and the
** cache emptied.  A checkpoint does not write them: the blob carries them,
** so that what RocksDB holds depends on the batches alone, never on when
** the checkpoints were taken.
**
** Expiry (TTL, before the batch's input): the time index's entries up to
** now - ttl go in one range tombstone; of their partitions, those not
** cached are deleted unread, the cached ones lose their index place
** (written again with their entry); then the cache's TTL list gives the
** cached partitions that expire, whose tops go and whose entries are
** deleted.  Every partition RocksDB holds that the cache does not is
** indexed at the time its value has, so the two together are exactly the
** partitions memory's TTL list drops.
**
** Blob:
**   version:u8 (3)  'R'  form:u8 (0; 2 under a TTL)  prev_wm:svar
**   next_seq:svar  checkpoint:svar  parts:svar  stored:svar  [clock:svar]
**   dirty:uvar, per dirty partition in key order: key:bytes  value:bytes
**     flags:u8 (1 IN_DB, 2 INDEXED)  [iat:svar when INDEXED]
** (the checkpoint: the RocksDB checkpoint's batch id under
** <query folder>/rocksdb/topn-<n>/; parts: the partitions kept; stored:
** those RocksDB has an entry for).
*/
#include "exec/topn_rocks.h"

#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/vector_codec.h"
#include "exec/agg_rocks.h"
#include "exec/topn_int.h"

#define TOPN_ROCKS_UPDATE_VERSION 3

enum { IN_DB = 1, INDEXED = 2, DIRTY = 4, PICKED = 8 };

struct dp_topn_rocks {
  dp_rocks *db;
  size_t budget;
  int ncols;
  dp_vector **kv;       /* scratch: partition keys decoded from entry keys */
  uint8_t *flag;        /* per cached partition */
  int64_t *iat;         /* INDEXED: its time in the index */
  int64_t cap;
  int64_t *dlist;       /* the partitions made dirty since the last write */
  int64_t ndlist, dcap;
  int64_t nparts;       /* partitions kept */
  int64_t stored;       /* partitions RocksDB has an entry for */
  int64_t clock;        /* TTL: the latest batch start */
  dp_buf keys, val;
  size_t *offs;
  int64_t offs_cap;
  int64_t *ids, *order, ids_cap, order_cap;
  int64_t *tmp, tmp_cap; /* a value's ranks and numbers as read */
};

static int grow_meta(dp_topn_rocks *r, int64_t n) {
  if (n <= r->cap) return DIPPER_OK;
  int64_t cap = r->cap > 0 ? r->cap : 64;
  while (cap < n) cap *= 2;
  uint8_t *f = realloc(r->flag, (size_t)cap);
  if (!f) return DIPPER_NOMEM;
  r->flag = f;
  int64_t *t = realloc(r->iat, (size_t)cap * sizeof *t);
  if (!t) return DIPPER_NOMEM;
  r->iat = t;
  memset(r->flag + r->cap, 0, (size_t)(cap - r->cap));
  r->cap = cap;
  return DIPPER_OK;
}

int dp_topn_rocks_new(dp_op *op, dp_topn_rocks **out) {
  topn_state *st = op->state;
  *out = NULL;
  dp_topn_rocks *r = calloc(1, sizeof *r);
  if (!r) return DIPPER_NOMEM;
  r->budget = dp_rocks_cache_budget(op->ex);
  r->clock = INT64_MIN;
  r->ncols = st->part_schema.ncols;
  r->kv = calloc((size_t)(r->ncols > 0 ? r->ncols : 1), sizeof *r->kv);
  int rc = r->kv ? DIPPER_OK : DIPPER_NOMEM;
  for (int k = 0; !rc && k < r->ncols; k++)
    if (!(r->kv[k] = dp_vector_new(st->part_schema.cols[k].type, 0))) rc = DIPPER_NOMEM;
  if (!rc) rc = dp_rocks_open_op(op, "topn", &r->db);
  if (rc) {
    dp_topn_rocks_free(r);
    return rc;
  }
  *out = r;
  return DIPPER_OK;
}

void dp_topn_rocks_free(dp_topn_rocks *r) {
  if (!r) return;
  dp_rocks_free(r->db);
  for (int k = 0; r->kv && k < r->ncols; k++) dp_vector_free(r->kv[k]);
  free(r->kv);
  free(r->flag);
  free(r->iat);
  free(r->dlist);
  dp_buf_free(&r->keys);
  dp_buf_free(&r->val);
  free(r->offs);
  free(r->ids);
  free(r->order);
  free(r->tmp);
  free(r);
}

int64_t dp_topn_rocks_parts(const dp_topn_rocks *r) { return r ? r->nparts : 0; }

int dp_topn_rocks_dirty(dp_topn_rocks *r, int64_t g) {
  int rc = grow_meta(r, g + 1);
  if (rc || (r->flag[g] & DIRTY)) return rc;
  if (dp_grow(&r->dlist, &r->dcap, r->ndlist + 1, sizeof *r->dlist, 256)) return DIPPER_NOMEM;
  r->flag[g] |= DIRTY;
  r->dlist[r->ndlist++] = g;
  return DIPPER_OK;
}

static const dp_vector *const *part_keys(const topn_state *st) {
  return (const dp_vector *const *)st->parts.ht.keys;
}

/* The entry keys of cached partitions ids[0..n) into r->keys / r->offs. */
static int entry_keys(dp_topn_rocks *r, const topn_state *st, const int64_t *ids, int64_t n) {
  return dp_rocks_entry_keys(&r->keys, &r->offs, &r->offs_cap, part_keys(st), r->ncols, ids, 0, n);
}

/* The dirty partitions (each once) into r->ids[0..*n), their entry keys
** into r->keys and r->order[0..*n) their key order. */
static int collect_dirty(dp_topn_rocks *r, const topn_state *st, int64_t *n) {
  *n = 0;
  if (r->ndlist > r->ids_cap && dp_grow(&r->ids, &r->ids_cap, r->ndlist, sizeof *r->ids, 256))
    return DIPPER_NOMEM;
  for (int64_t i = 0; i < r->ndlist; i++) {
    int64_t g = r->dlist[i];
    if ((r->flag[g] & (DIRTY | PICKED)) != DIRTY) continue;
    r->flag[g] |= PICKED;
    r->ids[(*n)++] = g;
  }
  for (int64_t i = 0; i < *n; i++) r->flag[r->ids[i]] &= (uint8_t)~PICKED;
  if (*n > r->order_cap && dp_grow(&r->order, &r->order_cap, *n, sizeof *r->order, 256))
    return DIPPER_NOMEM;
  int rc = entry_keys(r, st, r->ids, *n);
  return rc ? rc : dp_rocks_key_order(&r->keys, r->offs, *n, r->order);
}

/* Partition g's entry value into r->val. */
static int encode_part(dp_topn_rocks *r, const topn_state *st, int64_t g) {
  r->val.len = 0;
  if (st->ttl.ttl > 0) dp_put_svar(&r->val, st->ttl.slot[g].at);
  int64_t first = st->pstart[g], n = st->pcount[g];
  dp_put_uvar(&r->val, (uint64_t)n);
  for (int64_t q = first; q < first + n; q++) dp_put_uvar(&r->val, (uint64_t)st->rank_of[q]);
  for (int64_t q = first; q < first + n; q++) dp_put_uvar(&r->val, (uint64_t)st->seq[q]);
  int rc = dp_batch_encode(st->rows, first, n, &r->val);
  return rc ? rc : r->val.oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* An entry value into cached partition g (empty so far): its top appended
** to `rows` as one run; *at gets its time (TTL; 0 without). */
static int decode_part(dp_op *op, int64_t g, const char *v, size_t vn, int64_t *at) {
  topn_state *st = op->state;
  dp_topn_rocks *r = st->urocks;
  dp_rd rd;
  dp_rd_init(&rd, v, vn);
  *at = st->ttl.ttl > 0 ? dp_get_svar(&rd) : 0;
  uint64_t n = dp_get_uvar(&rd);
  if (rd.bad || n < 1 || n > vn || (st->ttl.ttl > 0 && *at < 0) || st->pcount[g] != 0)
    return DIPPER_CORRUPT;
  int64_t m = (int64_t)n;
  if (2 * m > r->tmp_cap && dp_grow(&r->tmp, &r->tmp_cap, 2 * m, sizeof *r->tmp, 64)) return DIPPER_NOMEM;
  for (int64_t k = 0; k < 2 * m; k++) {
    uint64_t x = dp_get_uvar(&rd);
    /* a rank from 1 to N, a number below the next one */
    if (k < m && (x < 1 || x > (uint64_t)op->plan->u.topn.n)) rd.bad = true;
    if (k >= m && x >= (uint64_t)st->next_seq) rd.bad = true;
    r->tmp[k] = (int64_t)(x & INT64_MAX);
  }
  if (rd.bad) return DIPPER_CORRUPT;
  int64_t first = st->rows->nrows;
  int rc = dp_batch_decode(&rd, st->rows);
  if (rc) return rc == DIPPER_NOMEM ? rc : DIPPER_CORRUPT;
  if (st->rows->nrows != first + m || !dp_rd_done(&rd)) return DIPPER_CORRUPT;
  if ((rc = dp_topn_grow_rows(st, first + m))) return rc;
  for (int64_t k = 0; k < m; k++) {
    st->dead[first + k] = 0;
    st->rank_of[first + k] = r->tmp[k];
    st->seq[first + k] = r->tmp[m + k];
  }
  st->pstart[g] = first;
  st->pcount[g] = m;
  return DIPPER_OK;
}

/* The cache emptied (nothing dirty in it). */
static int clear_cache(topn_state *st) {
  dp_topn_rocks *r = st->urocks;
  dp_batch_clear(st->rows);
  st->ndead = 0;
  dp_groups_free(&st->parts);
  int rc = dp_groups_init(&st->parts, &st->part_schema);
  if (rc) return rc;
  int64_t **arr[4] = {&st->pstart, &st->pcount, &st->pmark, &st->ptix};
  for (int i = 0; i < 4 && st->part_cap > 0; i++)
    memset(*arr[i], 0, (size_t)st->part_cap * sizeof(int64_t));
  if (r->cap > 0) memset(r->flag, 0, (size_t)r->cap);
  r->ndlist = 0;
  if (st->ttl.ttl > 0) {
    int64_t ttl = st->ttl.ttl;
    dp_state_ttl_free(&st->ttl);
    if ((rc = dp_state_ttl_init(&st->ttl, ttl))) return rc;
    st->ttl.clock = r->clock;
  }
  return DIPPER_OK;
}

/* Every dirty partition written (key order) and committed. */
static int write_dirty(dp_op *op) {
  topn_state *st = op->state;
  dp_topn_rocks *r = st->urocks;
  int64_t n = 0;
  int rc = dp_rocks_begin(r->db);
  if (!rc) rc = collect_dirty(r, st, &n);
  for (int64_t i = 0; !rc && i < n; i++) {
    int64_t j = r->order[i], g = r->ids[j];
    const char *k = r->keys.data + r->offs[j];
    size_t kn = r->offs[j + 1] - r->offs[j];
    r->flag[g] &= (uint8_t)~DIRTY;
    if (st->pcount[g] == 0) continue; /* expired: deleted then */
    if ((rc = encode_part(r, st, g))) break;
    dp_rocks_put(r->db, k, kn, r->val.data, r->val.len);
    if (st->ttl.ttl > 0) {
      int64_t at = st->ttl.slot[g].at;
      if (!(r->flag[g] & INDEXED) || r->iat[g] != at) {
        if (r->flag[g] & INDEXED) dp_rocks_index_delete(r->db, 0, r->iat[g], k, kn);
        if ((rc = dp_rocks_index_put(r->db, 0, at, k, kn))) break;
        r->flag[g] |= INDEXED;
        r->iat[g] = at;
      }
    }
    if (!(r->flag[g] & IN_DB)) r->stored++;
    r->flag[g] |= IN_DB;
  }
  r->ndlist = 0;
  return rc ? rc : dp_rocks_commit(r->db);
}

/* What the cache holds, roughly: the vectors' buffers, the per-row and
** per-partition arrays, the partitions' table. */
static size_t vec_bytes(const dp_vector *v) {
  size_t n = (size_t)v->length * 8 + (size_t)v->data_len;
  for (int c = 0; c < v->nchildren; c++) n += vec_bytes(v->children[c]);
  return n;
}

static size_t cache_bytes(const topn_state *st) {
  size_t n = (size_t)st->rows->nrows * 17;
  for (int c = 0; c < st->rows->ncols; c++) n += vec_bytes(st->rows->cols[c]);
  for (int c = 0; c < st->parts.ht.nkeys; c++) n += vec_bytes(st->parts.ht.keys[c]);
  return n + (size_t)dp_groups_count(&st->parts) * 80;
}

static int flush_and_clear(dp_op *op) {
  int rc = write_dirty(op);
  return rc ? rc : clear_cache(op->state);
}

/* TTL: what expires at now (the header's rules). */
static int expire(dp_op *op) {
  topn_state *st = op->state;
  dp_topn_rocks *r = st->urocks;
  int64_t now = op->ex->batch_start_time;
  if (now > r->clock) r->clock = now;
  if (r->clock == INT64_MIN) return DIPPER_OK;
  int64_t bound = r->clock - st->ttl.ttl, m = 0, *ids = NULL, n = 0;
  int rc = grow_meta(r, dp_groups_count(&st->parts));
  if (!rc && r->stored > 0) rc = dp_rocks_index_due(r->db, 0, bound, &r->keys, &r->offs, &r->offs_cap, &m);
  for (int64_t i = 0; !rc && i < m; i++) {
    const char *k = r->keys.data + r->offs[i];
    size_t kn = r->offs[i + 1] - r->offs[i];
    for (int c = 0; c < r->ncols; c++) dp_vector_clear(r->kv[c]);
    if ((rc = dp_rocks_entry_cols(k, kn, r->kv, r->ncols))) break;
    int64_t g = dp_groups_find(&st->parts, (const dp_vector *const *)r->kv, 0);
    if (g >= 0) {
      r->flag[g] &= (uint8_t)~INDEXED;
      continue;
    }
    dp_rocks_delete(r->db, k, kn);
    r->stored--;
    r->nparts--;
  }
  if (!rc) rc = dp_state_ttl_expire(&st->ttl, now, &ids, &n);
  if (!rc && n > 0) rc = grow_meta(r, dp_groups_count(&st->parts));
  if (!rc && n > 0) rc = entry_keys(r, st, ids, n);
  for (int64_t i = 0; !rc && i < n; i++) {
    int64_t g = ids[i];
    const char *k = r->keys.data + r->offs[i];
    size_t kn = r->offs[i + 1] - r->offs[i];
    for (int64_t q = st->pstart[g]; !rc && q < st->pstart[g] + st->pcount[g]; q++)
      rc = dp_topn_mark_dead(st, q);
    st->pcount[g] = 0;
    if (r->flag[g] & INDEXED) dp_rocks_index_delete(r->db, 0, r->iat[g], k, kn);
    if (r->flag[g] & IN_DB) {
      dp_rocks_delete(r->db, k, kn);
      r->stored--;
    }
    r->flag[g] = 0; /* no longer dirty: its stale place in dlist is passed over */
    r->nparts--;
  }
  free(ids);
  if (!rc) rc = dp_rocks_commit(r->db);
  if (!rc && n > 0) rc = dp_topn_maybe_compact(st);
  /* the expired partitions stay cached (known empty) until they are half of it */
  int64_t ng = dp_groups_count(&st->parts), idle = ng - st->ttl.count;
  if (!rc && idle >= 1024 && idle * 2 >= ng) rc = flush_and_clear(op);
  return rc;
}

int dp_topn_rocks_begin(dp_op *op) {
  topn_state *st = op->state;
  int rc = dp_rocks_begin(st->urocks->db);
  if (!rc && st->ttl.ttl > 0) rc = expire(op);
  if (rc == DIPPER_CORRUPT) return dp_state_corrupt(op, rc, "a partition's rocksdb index entry");
  return rc;
}

/* dp_rocks_get_many: the stored top of partition r->ids[i]. */
static int load_cb(void *u, int64_t i, const char *v, size_t vn) {
  dp_op *op = u;
  topn_state *st = op->state;
  dp_topn_rocks *r = st->urocks;
  int64_t g = r->ids[i], at;
  int rc = decode_part(op, g, v, vn, &at);
  if (rc) return rc;
  r->flag[g] |= IN_DB;
  if (st->ttl.ttl > 0) {
    r->flag[g] |= INDEXED;
    r->iat[g] = at;
  }
  return DIPPER_OK;
}

int dp_topn_rocks_fetch(dp_op *op) {
  topn_state *st = op->state;
  dp_topn_rocks *r = st->urocks;
  const dp_batch *b = st->fresh;
  const dp_plan *p = op->plan;
  const dp_vector *pc[64];
  for (int k = 0; k < r->ncols; k++) pc[k] = b->cols[p->u.topn.partition[k]];
  bool ttl = st->ttl.ttl > 0;
  int64_t nnew = 0, now = op->ex->batch_start_time;
  int rc = DIPPER_OK;
  if (b->nrows > r->ids_cap && dp_grow(&r->ids, &r->ids_cap, b->nrows, sizeof *r->ids, 256))
    return DIPPER_NOMEM;
  for (int64_t row = 0; !rc && row < b->nrows; row++) {
    int64_t g;
    bool is_new;
    if ((rc = dp_groups_find_or_add(&st->parts, pc, row, &g, &is_new))) break;
    if ((rc = dp_topn_grow_parts(st, g + 1)) || (rc = grow_meta(r, g + 1))) break;
    if (is_new) {
      r->flag[g] = 0;
      st->pcount[g] = 0;
      r->ids[nnew++] = g;
    } else if (ttl && st->pcount[g] == 0 && !(r->flag[g] & DIRTY)) {
      r->nparts++; /* an expired partition starts afresh */
    }
    if (ttl && !(rc = dp_state_ttl_touch(&st->ttl, g, now))) rc = dp_topn_rocks_dirty(r, g);
  }
  if (!rc && nnew > 0 && r->stored > 0) rc = entry_keys(r, st, r->ids, nnew);
  if (!rc && nnew > 0 && r->stored > 0)
    rc = dp_rocks_get_many(r->db, &r->keys, r->offs, nnew, load_cb, op);
  for (int64_t i = 0; !rc && i < nnew; i++)
    if (st->pcount[r->ids[i]] == 0) r->nparts++;
  if (rc == DIPPER_CORRUPT) return dp_state_corrupt(op, rc, "a partition's rocksdb entry");
  return rc;
}

int dp_topn_rocks_end_batch(dp_op *op) {
  topn_state *st = op->state;
  if (cache_bytes(st) <= st->urocks->budget) return DIPPER_OK;
  return flush_and_clear(op);
}

int dp_topn_rocks_save(dp_op *op, dp_buf *out) {
  topn_state *st = op->state;
  dp_topn_rocks *r = st->urocks;
  bool ttl = st->ttl.ttl > 0;
  int64_t ck, n = 0;
  int rc = dp_rocks_save(r->db, op->ex->batch_id, &ck);
  if (!rc) rc = collect_dirty(r, st, &n);
  if (rc) return rc;
  dp_state_begin(out, TOPN_ROCKS_UPDATE_VERSION);
  dp_put_u8(out, 'R');
  dp_put_u8(out, ttl ? 2 : 0);
  dp_put_svar(out, st->prev_wm);
  dp_put_svar(out, st->next_seq);
  dp_put_svar(out, ck);
  dp_put_svar(out, r->nparts);
  dp_put_svar(out, r->stored);
  if (ttl) dp_put_svar(out, r->clock);
  int64_t live = 0;
  for (int64_t i = 0; i < n; i++) live += st->pcount[r->ids[i]] > 0;
  dp_put_uvar(out, (uint64_t)live);
  for (int64_t i = 0; !rc && i < n; i++) {
    int64_t j = r->order[i], g = r->ids[j];
    if (st->pcount[g] == 0) continue;
    dp_put_bytes(out, r->keys.data + r->offs[j], r->offs[j + 1] - r->offs[j]);
    if ((rc = encode_part(r, st, g))) break;
    dp_put_bytes(out, r->val.data, r->val.len);
    uint8_t f = r->flag[g] & (IN_DB | INDEXED);
    dp_put_u8(out, f);
    if (f & INDEXED) dp_put_svar(out, r->iat[g]);
  }
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

typedef struct at_id {
  int64_t at, g;
} at_id;

static int cmp_at(const void *a, const void *b) {
  const at_id *x = a, *y = b;
  return (x->at > y->at) - (x->at < y->at);
}

/* The dirty partitions of a blob into the (empty) cache. */
static int restore_dirty(dp_op *op, dp_rd *in, int64_t n) {
  topn_state *st = op->state;
  dp_topn_rocks *r = st->urocks;
  bool ttl = st->ttl.ttl > 0;
  at_id *ats = calloc((size_t)(n > 0 ? n : 1), sizeof *ats);
  int rc = ats ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t i = 0; !rc && i < n; i++) {
    size_t kn, vn;
    const char *k = (const char *)dp_get_bytes(in, &kn);
    const char *v = (const char *)dp_get_bytes(in, &vn);
    uint8_t f = dp_get_u8(in);
    int64_t iat = (f & INDEXED) ? dp_get_svar(in) : 0, g, at;
    bool is_new;
    if (in->bad || (f & ~(IN_DB | INDEXED)) || ((f & INDEXED) && (!ttl || !(f & IN_DB)))) {
      rc = DIPPER_CORRUPT;
      break;
    }
    for (int c = 0; c < r->ncols; c++) dp_vector_clear(r->kv[c]);
    if ((rc = dp_rocks_entry_cols(k, kn, r->kv, r->ncols))) break;
    if ((rc = dp_groups_find_or_add(&st->parts, (const dp_vector *const *)r->kv, 0, &g, &is_new)))
      break;
    if (!is_new) rc = DIPPER_CORRUPT; /* a partition twice */
    if (!rc) rc = dp_topn_grow_parts(st, g + 1);
    if (!rc) rc = grow_meta(r, g + 1);
    if (!rc) rc = decode_part(op, g, v, vn, &at);
    if (!rc && ttl && (at > r->clock || ((f & INDEXED) && iat > at))) rc = DIPPER_CORRUPT;
    if (rc) break;
    r->flag[g] = f;
    r->iat[g] = iat;
    if ((rc = dp_topn_rocks_dirty(r, g))) break;
    ats[i] = (at_id){at, g};
  }
  /* the TTL list in time order, each partition at its own time */
  if (!rc && ttl) {
    qsort(ats, (size_t)n, sizeof *ats, cmp_at);
    st->ttl.clock = INT64_MIN;
    for (int64_t i = 0; !rc && i < n; i++) rc = dp_state_ttl_touch(&st->ttl, ats[i].g, ats[i].at);
    st->ttl.clock = r->clock;
  }
  free(ats);
  return rc;
}

int dp_topn_rocks_restore(dp_op *op, dp_rd *in) {
  topn_state *st = op->state;
  dp_topn_rocks *r = st->urocks;
  bool ttl = st->ttl.ttl > 0;
  int rc = dp_state_check(op, in, TOPN_ROCKS_UPDATE_VERSION);
  if (rc) return rc;
  uint8_t shape = dp_get_u8(in), form = dp_get_u8(in);
  if (!in->bad && shape == 'R' && form != (ttl ? 2 : 0) && (form == 0 || form == 2)) {
    in->bad = true;
    return dp_error(op->ex->diags, DIPPER_CORRUPT, op->plan->span,
                    "the checkpointed state of the Top-N operator (line %d) was written %s "
                    "'table.exec.state.ttl' (or STATE_TTL), and this query runs %s it: start the "
                    "query from a fresh checkpoint folder, or run it as it was",
                    (int)op->plan->span.line, form ? "under" : "without", ttl ? "under" : "without");
  }
  int64_t wm = dp_get_svar(in), next_seq = dp_get_svar(in), ck = dp_get_svar(in);
  int64_t nparts = dp_get_svar(in), stored = dp_get_svar(in);
  int64_t clock = ttl ? dp_get_svar(in) : INT64_MIN;
  uint64_t n = dp_get_uvar(in);
  if (in->bad || shape != 'R' || next_seq < 0 || ck < 0 || nparts < 0 || stored < 0 ||
      stored > nparts || n > (uint64_t)nparts)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its rocksdb checkpoint");
  if ((rc = dp_rocks_restore(r->db, ck))) return dp_state_corrupt(op, rc, "its rocksdb checkpoint");
  st->prev_wm = wm;
  st->next_seq = next_seq;
  r->nparts = nparts;
  r->stored = stored;
  r->clock = clock;
  if ((rc = clear_cache(st))) return rc;
  rc = restore_dirty(op, in, (int64_t)n);
  if (rc == DIPPER_CORRUPT) in->bad = true;
  if (rc) return dp_state_corrupt(op, rc, "its cached partitions");
  op->metrics.state_rows = nparts;
  return DIPPER_OK;
}
