/*
** agg_rocks.c — an aggregation's groups in RocksDB (agg_rocks.h says what is
** stored and why).
**
** Entry (state_rocks.h, space 0): key the group's key columns; value, per
** call in order, dp_agg_state_save_group's record of the one group (a
** DISTINCT call's values after it: the DISTINCT section below).  Time
** index (space 0): the group's end (the window's end, or the event-time
** key), written once when the group is first stored; the watermark's range
** scan takes the index entries it passes away, and the groups' entries go
** as their windows are emitted or dropped.
**
** Write-back cache (wb_*): the groups a batch stores stay in memory, their
** values as the entries' (their records), keyed by the entry key, up
** to WB_BUDGET bytes; RocksDB gets them only when the cache passes that
** (every dirty entry written in key order, then the cache emptied), before
** a checkpoint (dp_agg_rocks_save: a checkpoint holds every group) and
** before a scan of every entry.  So a group that lives a few batches and
** closes between two checkpoints never reaches RocksDB, and one touched
** again is read from memory.  Per entry: live (it is a group; not live, a
** known absent key: its RocksDB entry, if any, deleted), in_db (RocksDB has
** an entry and a time index entry for it), dirty (RocksDB's entry is older).
** The watermark's due groups are the time index's plus the live cache
** entries not in RocksDB whose end it passed (a pass over the cache).  A
** kill loses the cache with the live RocksDB copy: the restart opens the
** last checkpoint, which the flush before it made whole.
*/
#include "exec/agg_rocks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/session.h"
#include "core/vector_codec.h"

/* A TTL index time for an entry the index lost (its range went). */
#define NOT_INDEXED INT64_MIN

/* The write-back cache's room, keys, values and entries counted. */
#define WB_BUDGET ((size_t)32 << 20)

/* A DISTINCT call's values stay in its group's record up to this many bytes
** of their encoding (the DISTINCT section below). */
#define DISTINCT_INLINE_BYTES ((size_t)1024)

typedef struct wb_entry {
  uint64_t hash;
  size_t koff, voff;     /* into wb_cache.bytes */
  uint32_t klen, vlen, vcap;
  int64_t end;           /* the group's end (evicting) */
  int64_t iend;          /* the time its RocksDB index entry is at (in_db) */
  int64_t at, iat;       /* TTL: its last write; where RocksDB's TTL index has it
                         ** (in_db; NOT_INDEXED: nowhere) */
  uint8_t live, in_db, dirty;
} wb_entry;

/* A DISTINCT call's pairs of the batch (its table's entries): the rows
** that brought each, and its count before (0: new; a group's inline value,
** or a pair entry looked up).  Per cached group: whether its values are pair
** entries (spilled) or in its record (inline); at the store, the table's
** entries by group and each kept inline group's part of its record. */
typedef struct dpairs {
  int64_t *cnt, *base, cap;
  uint8_t *sp;            /* per cached group: spilled */
  int64_t sp_cap;
  int64_t *first, first_cap, *ents, ents_cap; /* entries of group g: ents[first[g]..first[g+1]) */
  dp_buf inl;             /* the kept inline groups' parts, group g's at ioff[g]..ioff[g + 1] */
  size_t *ioff;
  int64_t ioff_cap;
  dp_vector **cols;       /* scratch: a group's pairs, the table's columns */
} dpairs;

typedef struct wb_cache {
  wb_entry *e;
  int64_t n, cap;
  uint32_t *slots;       /* entry + 1; 0 empty; linear probing */
  uint64_t nslots;       /* a power of two, at least twice n */
  dp_buf bytes;
} wb_cache;

struct dp_agg_rocks {
  dp_rocks *db;
  dp_diags *diags;
  const dp_exec *ex;
  const dp_plan *plan;
  dp_hashtable *ht;
  dp_agg_state *const *states;
  int naggs, end_key;
  int64_t count;          /* stored groups */
  int64_t indb;           /* of which RocksDB has an entry (0: a cache miss is absent) */
  size_t budget;          /* the write-back cache's */
  uint8_t *stored;        /* per cached group: it has an entry */
  int64_t stored_cap;
  dp_buf keys, val;       /* scratch: entry keys back to back, a value */
  size_t *offs;
  int64_t offs_cap;
  /* due: the keys left to enter */
  dp_buf due;
  size_t *due_offs;
  int64_t due_cap, ndue, due_at;
  int64_t *due_t, due_tcap; /* the index's keys' times */
  /* due: every entry (an append-mode GROUP BY's final batch), a slice at a
  ** time, the values read with the keys */
  bool scan_all, scanned;
  dp_buf scan_last, scan_vals; /* the last key scanned; the slice's values */
  size_t *val_offs;
  int64_t voffs_cap;
  dp_buf due2;            /* scratch: the merged due list */
  dp_vector **kv;         /* scratch: decoded key columns */
  int64_t *ids, ids_cap;
  uint64_t *hashes;
  int64_t *order, order_cap; /* scratch: the groups in key order */
  wb_cache wb;
  dp_buf mkeys;           /* scratch: the keys the cache misses, their groups */
  size_t *moffs;
  int64_t moffs_cap, *mids, mids_cap;
  /* DISTINCT calls: the operator's tables (NULL for the other calls) */
  dp_hashtable *const *distinct;
  bool pairs;             /* they are keyed entries of their own (not a codec's) */
  size_t inline_max;      /* a group's values inline in its record up to these bytes, */
  size_t per_touch;       /* and these more per pair the batch touched (inline_max / 2) */
  dpairs *dpc;            /* per call */
  int pcall;              /* the call whose pairs are looked up */
  dp_buf pkeys, pvals, plo, phi; /* scratch: pair keys and counts, a range */
  size_t *poffs, *pvoffs;
  int64_t poffs_cap, pvoffs_cap, *pent, pent_cap; /* the looked-up pairs' entries */
  int64_t *lids, lids_cap; /* scratch: an inline set's entries, their hashes */
  uint64_t *lh;
  /* a record of the operator's own (dp_agg_rocks_set_codec) */
  dp_agg_rocks_codec codec;
  bool has_codec, evicting;
  int64_t *lend, lend_cap; /* per cached group: its stored end (the codec's) */
  /* 'table.exec.state.ttl' (dp_agg_rocks_set_ttl): 0 none */
  int64_t ttl, clock;     /* µs; the latest batch start seen */
  int64_t *lat, lat_cap;  /* per cached group: its stored last write */
  dp_buf rec;             /* scratch: a codec record */
};

/* A time in the time index's order (its sign bit flipped). */
static uint64_t due_time(int64_t t) { return (uint64_t)t ^ (UINT64_C(1) << 63); }

/* ---- the write-back cache ---- */

/* The entry key's hash (its bytes 1..8), mixed: its low bits pick the slot. */
static uint64_t key_hash(const char *k) {
  uint64_t h = 0;
  for (int i = 1; i <= 8; i++) h = h << 8 | (uint8_t)k[i];
  h ^= h >> 31;
  h *= UINT64_C(0x9E3779B97F4A7C15);
  return h ^ (h >> 29);
}

static const char *wb_key(const wb_cache *c, const wb_entry *e) { return c->bytes.data + e->koff; }

/* The entry of key k (an entry key, at least 13 bytes), or -1. */
static int64_t wb_find(const wb_cache *c, const char *k, size_t kn) {
  if (!c->nslots) return -1;
  uint64_t h = key_hash(k), mask = c->nslots - 1;
  for (uint64_t s = h & mask;; s = (s + 1) & mask) {
    uint32_t x = c->slots[s];
    if (!x) return -1;
    const wb_entry *e = &c->e[x - 1];
    if (e->hash == h && e->klen == kn && !memcmp(wb_key(c, e), k, kn)) return x - 1;
  }
}

static void wb_place(wb_cache *c, int64_t i) {
  uint64_t mask = c->nslots - 1, s = c->e[i].hash & mask;
  while (c->slots[s]) s = (s + 1) & mask;
  c->slots[s] = (uint32_t)(i + 1);
}

/* A new entry (not live) for key k, absent from the cache. */
static int wb_insert(wb_cache *c, const char *k, size_t kn, int64_t *out) {
  if (c->n >= UINT32_MAX - 1 || kn > UINT32_MAX) return DIPPER_LIMIT;
  if (c->n + 1 > c->cap && dp_grow(&c->e, &c->cap, c->n + 1, sizeof *c->e, 1024))
    return DIPPER_NOMEM;
  if ((uint64_t)(c->n + 1) * 2 > c->nslots) {
    uint64_t ns = c->nslots ? c->nslots * 2 : 4096;
    uint32_t *sl = calloc(ns, sizeof *sl);
    if (!sl) return DIPPER_NOMEM;
    free(c->slots);
    c->slots = sl;
    c->nslots = ns;
    for (int64_t i = 0; i < c->n; i++) wb_place(c, i);
  }
  size_t at = c->bytes.len;
  dp_buf_put(&c->bytes, k, kn);
  if (c->bytes.oom) return DIPPER_NOMEM;
  c->e[c->n] = (wb_entry){.hash = key_hash(k), .koff = at, .klen = (uint32_t)kn};
  wb_place(c, c->n);
  *out = c->n++;
  return DIPPER_OK;
}

static int wb_set_value(wb_cache *c, int64_t i, const char *v, size_t vn) {
  wb_entry *e = &c->e[i];
  if (vn > UINT32_MAX) return DIPPER_LIMIT;
  if (vn > e->vcap) {
    e->voff = c->bytes.len;
    dp_buf_put(&c->bytes, v, vn);
    if (c->bytes.oom) return DIPPER_NOMEM;
    e->vcap = (uint32_t)vn;
  } else if (vn) {
    memcpy(c->bytes.data + e->voff, v, vn);
  }
  e->vlen = (uint32_t)vn;
  return DIPPER_OK;
}

/* The memory the cache holds (its arrays' room, not only what is in use). */
static size_t wb_size(const wb_cache *c) {
  return c->bytes.cap + (size_t)c->cap * sizeof *c->e + (size_t)c->nslots * sizeof *c->slots;
}

static void wb_free(wb_cache *c) {
  free(c->e);
  free(c->slots);
  dp_buf_free(&c->bytes);
}

/* Empty, its memory given back. */
static void wb_clear(wb_cache *c) {
  wb_free(c);
  memset(c, 0, sizeof *c);
}

/* The live entries only, their bytes copied together (the dead ones, keys
** known absent, go: the closed groups a window leaves behind). */
static int wb_compact(wb_cache *c) {
  size_t live = 0;
  int64_t m = 0;
  for (int64_t i = 0; i < c->n; i++)
    if (c->e[i].live) live += (size_t)c->e[i].klen + c->e[i].vlen, m++;
  if (!m) {
    wb_clear(c);
    return DIPPER_OK;
  }
  dp_buf nb = DP_BUF_INIT;
  char *to = dp_buf_append_room(&nb, live); /* sized once: no doubling */
  if (!to) return DIPPER_NOMEM;
  nb.len = 0;
  m = 0;
  for (int64_t i = 0; i < c->n; i++) {
    wb_entry e = c->e[i];
    if (!e.live) continue;
    size_t k = nb.len;
    memcpy(nb.data + nb.len, c->bytes.data + e.koff, e.klen);
    nb.len += e.klen;
    size_t v = nb.len;
    if (e.vlen) memcpy(nb.data + nb.len, c->bytes.data + e.voff, e.vlen);
    nb.len += e.vlen;
    e.koff = k, e.voff = v, e.vcap = e.vlen;
    c->e[m++] = e;
  }
  dp_buf_free(&c->bytes);
  c->bytes = nb;
  c->n = m;
  /* the arrays shrunk to what the live entries need */
  uint64_t ns = 4096;
  while ((uint64_t)m * 2 > ns) ns *= 2;
  if (ns < c->nslots) {
    uint32_t *sl = calloc(ns, sizeof *sl);
    if (!sl) return DIPPER_NOMEM;
    free(c->slots);
    c->slots = sl;
    c->nslots = ns;
  } else if (c->nslots) {
    memset(c->slots, 0, (size_t)c->nslots * sizeof *c->slots);
  }
  if (m > 0 && m < c->cap / 2) {
    wb_entry *e = realloc(c->e, (size_t)m * sizeof *e);
    if (e) c->e = e, c->cap = m;
  }
  for (int64_t i = 0; i < m; i++) wb_place(c, i);
  return DIPPER_OK;
}

/* Every dirty entry into RocksDB (in key order, the memtable's fastest),
** its time index entry with its first write; committed.  clear: the cache
** emptied after. */
static int wb_flush(dp_agg_rocks *r, bool clear) {
  wb_cache *c = &r->wb;
  int64_t m = 0;
  if (c->n + 1 > r->offs_cap && dp_grow(&r->offs, &r->offs_cap, c->n + 1, sizeof *r->offs, 1024))
    return DIPPER_NOMEM;
  if (c->n > r->ids_cap) {
    int64_t cap = r->ids_cap;
    if (dp_grow(&r->ids, &cap, c->n, sizeof *r->ids, 1024) ||
        dp_grow(&r->hashes, &r->ids_cap, c->n, sizeof *r->hashes, 1024))
      return DIPPER_NOMEM;
  }
  if (c->n > r->order_cap && dp_grow(&r->order, &r->order_cap, c->n, sizeof *r->order, 1024))
    return DIPPER_NOMEM;
  r->keys.len = 0;
  r->offs[0] = 0;
  for (int64_t i = 0; i < c->n; i++) {
    const wb_entry *e = &c->e[i];
    if (!e->live || !e->dirty) continue;
    dp_buf_put(&r->keys, wb_key(c, e), e->klen);
    r->ids[m] = i;
    r->offs[++m] = r->keys.len;
  }
  if (r->keys.oom) return DIPPER_NOMEM;
  int rc = dp_rocks_key_order(&r->keys, r->offs, m, r->order);
  for (int64_t j = 0; j < m && !rc; j++) {
    wb_entry *e = &c->e[r->ids[r->order[j]]];
    const char *k = wb_key(c, e);
    dp_rocks_put(r->db, k, e->klen, c->bytes.data + e->voff, e->vlen);
    /* a codec's end moves (a key's first session closes, or an earlier
    ** one comes): its index entry moves with it */
    if (r->evicting && e->in_db && e->iend != e->end) dp_rocks_index_delete(r->db, 0, e->iend, k, e->klen);
    if (r->evicting && (!e->in_db || e->iend != e->end))
      rc = dp_rocks_index_put(r->db, 0, e->end, k, e->klen);
    e->iend = e->end;
    if (!rc && r->ttl && e->in_db && e->iat != e->at && e->iat != NOT_INDEXED)
      dp_rocks_index_delete(r->db, 1, e->iat, k, e->klen);
    if (!rc && r->ttl && (!e->in_db || e->iat != e->at))
      rc = dp_rocks_index_put(r->db, 1, e->at, k, e->klen);
    e->iat = e->at;
    r->indb += !e->in_db;
    e->in_db = 1;
    e->dirty = 0;
  }
  if (!rc && m) rc = dp_rocks_commit(r->db);
  if (!rc && clear) wb_clear(c);
  return rc;
}

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

size_t dp_rocks_cache_budget(const dp_exec *ex) {
  const char *cb = dp_session_option(ex->db, "dipper.rocksdb.aggregate-cache-bytes");
  return cb ? (size_t)strtoull(cb, NULL, 10) : WB_BUDGET;
}

const char *dp_agg_rocks_refusal(const dp_exec *ex, const dp_plan *p, dp_agg_state *const *states) {
  (void)p;
  if (ex->output_mode & DP_MODE_COMPLETE)
    return "complete output mode (every group every batch: use update or append)";
  (void)states;
  return NULL;
}

int dp_agg_rocks_new(dp_op *op, dp_hashtable *ht, dp_agg_state *const *states,
                     dp_hashtable *const *distinct, int end_key, dp_agg_rocks **out) {
  *out = NULL;
  dp_agg_rocks *r = calloc(1, sizeof *r);
  if (!r) return DIPPER_NOMEM;
  r->diags = op->ex->diags;
  r->ex = op->ex;
  r->plan = op->plan;
  r->ht = ht;
  r->states = states;
  r->distinct = distinct;
  r->naggs = op->plan->u.aggregate.naggs;
  r->end_key = end_key;
  r->evicting = end_key >= 0;
  r->budget = dp_rocks_cache_budget(op->ex);
  const char *ib = dp_session_option(op->ex->db, "dipper.rocksdb.distinct-inline-bytes");
  r->inline_max = ib ? (size_t)strtoull(ib, NULL, 10) : DISTINCT_INLINE_BYTES;
  r->per_touch = r->inline_max / 2;
  r->kv = calloc((size_t)(ht->nkeys > 0 ? ht->nkeys : 1), sizeof *r->kv);
  int rc = r->kv ? DIPPER_OK : DIPPER_NOMEM;
  for (int j = 0; !rc && j < ht->nkeys; j++)
    if (!(r->kv[j] = dp_vector_new(ht->keys[j]->type, 0))) rc = DIPPER_NOMEM;
  int na = r->naggs > 0 ? r->naggs : 1;
  if (!rc && !(r->dpc = calloc((size_t)na, sizeof *r->dpc))) rc = DIPPER_NOMEM;
  for (int a = 0; a < r->naggs; a++) r->pairs |= distinct[a] != NULL;
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
  free(r->lend);
  free(r->lat);
  dp_buf_free(&r->rec);
  dp_buf_free(&r->keys);
  dp_buf_free(&r->val);
  dp_buf_free(&r->due);
  free(r->offs);
  free(r->due_offs);
  free(r->ids);
  free(r->hashes);
  free(r->order);
  wb_free(&r->wb);
  free(r->due_t);
  dp_buf_free(&r->due2);
  dp_buf_free(&r->scan_last);
  dp_buf_free(&r->scan_vals);
  free(r->val_offs);
  dp_buf_free(&r->mkeys);
  free(r->moffs);
  free(r->mids);
  for (int a = 0; r->dpc && a < r->naggs; a++) {
    dpairs *x = &r->dpc[a];
    free(x->cnt), free(x->base), free(x->sp), free(x->first), free(x->ents), free(x->ioff);
    dp_buf_free(&x->inl);
    for (int j = 0; x->cols && j < r->distinct[a]->nkeys; j++) dp_vector_free(x->cols[j]);
    free(x->cols);
  }
  free(r->dpc);
  dp_buf_free(&r->pkeys);
  dp_buf_free(&r->pvals);
  dp_buf_free(&r->plo);
  dp_buf_free(&r->phi);
  free(r->poffs);
  free(r->pvoffs);
  free(r->pent);
  free(r->lids);
  free(r->lh);
  free(r);
}

void dp_agg_rocks_set_codec(dp_agg_rocks *r, const dp_agg_rocks_codec *c) {
  r->codec = *c;
  r->has_codec = r->evicting = true;
  r->pairs = false; /* the codec's record holds what it needs */
}

void dp_agg_rocks_set_ttl(dp_agg_rocks *r, int64_t ttl) { r->ttl = ttl; }

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

/* ---- DISTINCT aggregates: a keyed entry per (group, value) ----
** A DISTINCT call's values are a multiset in RocksDB beside the groups, one
** entry per (group, value) pair with its count (the rows that brought it):
**   pair  0x12 [end:u64]  hash:u64 klen:u32 group-key  call:u8  value
**         -> count:uvar
** (the group's entry key after its first byte; end, the group's end with its
** sign bit flipped, only in an aggregation that evicts, so that the pairs of
** every group the watermark closes go in one range tombstone; the value the
** table's value columns' vector_codec encodings).  The group's record holds
** the aggregate's state only.  In a batch, a pair new to the call's table
** (op_aggregate.c's, the batch's pairs) of a group that was stored before is
** looked up (one multi-get per chunk of input): found, the row passes no
** value to the aggregate; at the end of the batch each pair of a kept group
** is written with its count.  So a row costs O(1) RocksDB operations, the
** record does not grow with the values, and a group new in the batch (none
** of its pairs can be stored) costs no read.
**
** A group of few values keeps them inline instead: in its record, after
** every call's state, per DISTINCT call
**   0 (spilled: its values are pair entries)
**   | n + 1:uvar  the n values (a vector per value column of the table)
**                 their counts (n uvars)
** while that part takes at most inline_max bytes
** ('dipper.rocksdb.distinct-inline-bytes', 1 KB by default) plus half of
** that per pair of the group the batch touched: rewriting a set each batch
** it is touched costs some nanoseconds a byte, a touched pair entry a read
** and a write of some microseconds, so a set that many rows touch stays
** inline longer (docs/benchmarks.md, "few values inline").  A fetch puts the inline values
** in the call's table (their counts as the base), so the batch's rows are
** filtered with no read, and the store writes them back with the record.  A
** group whose part would pass the bound spills: its pairs, every one in the
** table then, are written as entries, and it stays spilled (a group that
** goes and comes back starts inline again).  So a small set costs what the
** record cost (in the write-back cache, no RocksDB operation), a large one
** O(1) RocksDB operations per row.  A record without the section (written
** before it: the blob's form without bit 8) has its values spilled. */

static void put_be64(dp_buf *b, uint64_t v) {
  for (int i = 7; i >= 0; i--) dp_put_u8(b, (uint8_t)(v >> (8 * i)));
}

/* The pairs' prefix of the group of entry key k into out (emptied). */
static void pair_prefix(const dp_agg_rocks *r, const char *k, size_t kn, int64_t end, dp_buf *out) {
  out->len = 0;
  dp_put_u8(out, 0x12);
  if (r->evicting) put_be64(out, due_time(end));
  dp_buf_put(out, k + 1, kn - 1);
}

/* Pair e of call a's table (its group cached group gid[e]) appended to out. */
static int pair_key(dp_agg_rocks *r, int a, int64_t e, dp_buf *out) {
  const dp_hashtable *d = r->distinct[a];
  int64_t g = dp_vector_get_i64(d->keys[0], e);
  r->rec.len = 0;
  int rc = dp_rocks_entry_key(&r->rec, 0, (const dp_vector *const *)r->ht->keys, r->ht->nkeys, g);
  if (rc) return rc;
  dp_put_u8(out, 0x12);
  if (r->evicting) put_be64(out, due_time(dp_vector_get_i64(r->ht->keys[r->end_key], g)));
  dp_buf_put(out, r->rec.data + 1, r->rec.len - 1);
  dp_put_u8(out, (uint8_t)a);
  for (int j = 1; j < d->nkeys && !rc; j++) rc = dp_vector_encode(d->keys[j], e, 1, out);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* Every pair of the group of entry key k (its end: evicting) deleted. */
static int drop_pairs(dp_agg_rocks *r, const char *k, size_t kn, int64_t end) {
  dp_buf *lo = &r->plo, *hi = &r->phi;
  pair_prefix(r, k, kn, end, lo);
  hi->len = 0;
  dp_buf_put(hi, lo->data, lo->len);
  if (lo->oom || hi->oom) return DIPPER_NOMEM;
  /* the prefix's successor: its last byte below 0xff incremented, the rest cut */
  while (hi->len > 0 && (uint8_t)hi->data[hi->len - 1] == 0xff) hi->len--;
  hi->data[hi->len - 1]++; /* the first byte is 0x12: never all 0xff */
  dp_rocks_delete_range(r->db, lo->data, lo->len, hi->data, hi->len);
  return DIPPER_OK;
}

/* The group's end, read from its entry key (an evicting GROUP BY's end is
** one of its key columns). */
static int key_end(dp_agg_rocks *r, const char *k, size_t kn, int64_t *end) {
  for (int j = 0; j < r->ht->nkeys; j++) dp_vector_clear(r->kv[j]);
  int rc = dp_rocks_entry_cols(k, kn, r->kv, r->ht->nkeys);
  if (!rc) *end = dp_vector_get_i64(r->kv[r->end_key], 0);
  return rc;
}

static int grow_counts(dp_agg_rocks *r, int a, int64_t n) {
  dpairs *x = &r->dpc[a];
  if (n <= x->cap) return DIPPER_OK;
  int64_t cap = x->cap;
  if (dp_grow(&x->cnt, &cap, n, sizeof *x->cnt, 1024) ||
      dp_grow(&x->base, &x->cap, n, sizeof *x->base, 1024))
    return DIPPER_NOMEM;
  return DIPPER_OK;
}

/* dp_rocks_get_many: looked-up pair i is stored, with its count. */
static int found_pair(void *u, int64_t i, const char *v, size_t vn) {
  dp_agg_rocks *r = u;
  dp_rd rd;
  dp_rd_init(&rd, v, vn);
  int64_t c = (int64_t)dp_get_uvar(&rd);
  if (!dp_rd_done(&rd) || c <= 0) return DIPPER_CORRUPT;
  r->dpc[r->pcall].base[r->pent[i]] = c;
  return DIPPER_OK;
}

int dp_agg_rocks_distinct(dp_agg_rocks *r, int a, const dp_vector *const *dk, int ndk,
                          const uint64_t *dh, const int64_t *use, int64_t m, int64_t *dids,
                          int64_t *sel, int64_t *nsel) {
  dp_hashtable *d = r->distinct[a];
  dpairs *x = &r->dpc[a];
  int64_t n = 0;
  int rc = DIPPER_OK;
  for (int64_t k = 0; k < m && !rc; k++) {
    int64_t row = use[k], before = d->ngroups;
    bool null = false;
    for (int j = 1; j < ndk; j++) null |= dp_vector_is_null(dk[j], row);
    if (null) continue;
    rc = dp_ht_find_or_insert(d, dk, dh, &row, 1, dids, NULL);
    if (!rc) rc = grow_counts(r, a, d->ngroups);
    if (rc) break;
    int64_t e = dids[row];
    if (d->ngroups > before) {
      x = &r->dpc[a];
      x->cnt[e] = x->base[e] = 0;
      sel[n++] = row; /* use[k] is read before sel[n] is written: n <= k */
    }
    x->cnt[e]++;
  }
  /* the new pairs of groups stored before: are they stored too? */
  r->pkeys.len = 0;
  int64_t q = 0;
  if (!rc && n + 1 > r->poffs_cap && dp_grow(&r->poffs, &r->poffs_cap, n + 1, sizeof *r->poffs, 1024))
    rc = DIPPER_NOMEM;
  if (!rc && n > r->pent_cap && dp_grow(&r->pent, &r->pent_cap, n, sizeof *r->pent, 1024))
    rc = DIPPER_NOMEM;
  if (!rc) r->poffs[0] = 0;
  for (int64_t k = 0; k < n && !rc; k++) {
    int64_t e = dids[sel[k]], g = dp_vector_get_i64(d->keys[0], e);
    if (!dp_agg_rocks_stored(r, g) || !r->dpc[a].sp[g]) continue; /* inline: all in the table */
    rc = pair_key(r, a, e, &r->pkeys);
    r->pent[q] = e;
    r->poffs[++q] = r->pkeys.len;
  }
  r->pcall = a;
  if (!rc && q) rc = dp_rocks_get_many(r->db, &r->pkeys, r->poffs, q, found_pair, r);
  int64_t kept = 0;
  for (int64_t k = 0; k < n && !rc; k++)
    if (r->dpc[a].base[dids[sel[k]]] == 0) sel[kept++] = sel[k];
  *nsel = kept;
  return rc;
}

/* Whether cached group g has a DISTINCT call's values as pair entries. */
static bool any_spilled(const dp_agg_rocks *r, int64_t g) {
  for (int a = 0; a < r->naggs; a++)
    if (r->distinct[a] && r->dpc[a].sp[g]) return true;
  return false;
}

/* The scratch columns of call a's table (a group's pairs), emptied. */
static int pair_cols(dp_agg_rocks *r, int a) {
  const dp_hashtable *d = r->distinct[a];
  dpairs *x = &r->dpc[a];
  if (!x->cols && !(x->cols = calloc((size_t)d->nkeys, sizeof *x->cols))) return DIPPER_NOMEM;
  for (int j = 0; j < d->nkeys; j++) {
    if (!x->cols[j] && !(x->cols[j] = dp_vector_new(d->keys[j]->type, 0))) return DIPPER_NOMEM;
    dp_vector_clear(x->cols[j]);
  }
  return DIPPER_OK;
}

/* Call a's inline part of a stored record (tag read: n values) into its
** table as cached group g's pairs, their counts the base. */
static int load_inline(dp_agg_rocks *r, int a, int64_t g, int64_t n, dp_rd *in) {
  dp_hashtable *d = r->distinct[a];
  if (n == 0) return DIPPER_OK; /* no value yet (NULLs only): no vector written */
  int rc = pair_cols(r, a);
  dpairs *x = &r->dpc[a];
  for (int64_t i = 0; i < n && !rc; i++) rc = dp_vector_append_i64(x->cols[0], g);
  for (int j = 1; j < d->nkeys && !rc; j++) {
    rc = dp_vector_decode(in, x->cols[j]);
    if (rc != DIPPER_NOMEM && (rc || x->cols[j]->length != n)) rc = DIPPER_CORRUPT;
  }
  if (!rc && n > r->lids_cap) {
    int64_t cap = r->lids_cap;
    if (dp_grow(&r->lids, &cap, n, sizeof *r->lids, 1024) ||
        dp_grow(&r->lh, &r->lids_cap, n, sizeof *r->lh, 1024))
      rc = DIPPER_NOMEM;
  }
  if (rc) return rc;
  int64_t before = d->ngroups, created = 0;
  dp_ht_hash((const dp_vector *const *)x->cols, d->nkeys, n, r->lh);
  rc = dp_ht_find_or_insert(d, (const dp_vector *const *)x->cols, r->lh, NULL, n, r->lids,
                            &created);
  if (!rc && created != n) rc = DIPPER_CORRUPT; /* a value twice, or a group loaded twice */
  if (!rc) rc = grow_counts(r, a, d->ngroups);
  x = &r->dpc[a];
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t c = (int64_t)dp_get_uvar(in), e = r->lids[i];
    if (in->bad || c <= 0 || e < before) rc = DIPPER_CORRUPT;
    else x->base[e] = c, x->cnt[e] = 0;
  }
  return rc;
}

/* The DISTINCT part of a stored record (after the states) into cached
** group g: nothing there (a record of the layout before), every call's
** values are pair entries. */
static int load_distinct(dp_agg_rocks *r, int64_t g, dp_rd *in) {
  bool old = dp_rd_done(in);
  for (int a = 0; a < r->naggs; a++) {
    if (!r->distinct[a]) continue;
    uint64_t tag = old ? 0 : dp_get_uvar(in);
    if (in->bad || tag - (tag > 0) > dp_rd_left(in)) return DIPPER_CORRUPT;
    r->dpc[a].sp[g] = tag == 0;
    int rc = tag ? load_inline(r, a, g, (int64_t)tag - 1, in) : DIPPER_OK;
    if (rc) return rc;
  }
  return DIPPER_OK;
}

/* Call a's entries by cached group (g < n), in table order, and each kept
** group's inline part encoded — or, past inline_max, the group spilled (its
** pairs all in the table: store_pairs writes them). */
static int plan_inline(dp_agg_rocks *r, int a, const bool *keep, int64_t n) {
  const dp_hashtable *d = r->distinct[a];
  dpairs *x = &r->dpc[a];
  int64_t ne = d->ngroups;
  if ((n + 1 > x->first_cap && dp_grow(&x->first, &x->first_cap, n + 1, sizeof *x->first, 1024)) ||
      (ne > x->ents_cap && dp_grow(&x->ents, &x->ents_cap, ne, sizeof *x->ents, 1024)) ||
      (n + 1 > x->ioff_cap && dp_grow(&x->ioff, &x->ioff_cap, n + 1, sizeof *x->ioff, 1024)))
    return DIPPER_NOMEM;
  memset(x->first, 0, (size_t)(n + 1) * sizeof *x->first);
  const int64_t *gid = d->keys[0]->values;
  for (int64_t e = 0; e < ne; e++)
    if (gid[e] < n) x->first[gid[e] + 1]++;
  for (int64_t g = 0; g < n; g++) x->first[g + 1] += x->first[g];
  for (int64_t e = 0; e < ne; e++)
    if (gid[e] < n) x->ents[x->first[gid[e]]++] = e;
  for (int64_t g = n; g > 0; g--) x->first[g] = x->first[g - 1];
  x->first[0] = 0;
  x->inl.len = 0;
  int rc = DIPPER_OK;
  for (int64_t g = 0; g < n && !rc; g++) {
    x->ioff[g] = x->inl.len;
    if (!keep[g] || x->sp[g]) continue;
    int64_t k = x->first[g + 1] - x->first[g];
    const int64_t *ids = x->ents + x->first[g];
    dp_put_uvar(&x->inl, (uint64_t)k + 1);
    if (k && !(rc = pair_cols(r, a))) {
      x = &r->dpc[a];
      for (int j = 1; j < d->nkeys && !rc; j++) {
        rc = dp_vector_take(x->cols[j], d->keys[j], ids, 0, k);
        if (!rc) rc = dp_vector_encode(x->cols[j], 0, k, &x->inl);
      }
      for (int64_t i = 0; i < k; i++) dp_put_uvar(&x->inl, (uint64_t)(x->base[ids[i]] + x->cnt[ids[i]]));
    }
    int64_t touched = 0;
    for (int64_t i = 0; i < k; i++) touched += x->cnt[ids[i]] > 0;
    if (!rc && x->inl.len - x->ioff[g] > r->inline_max + (size_t)touched * r->per_touch) {
      x->inl.len = x->ioff[g]; /* spilled from now on */
      x->sp[g] = 1;
    }
  }
  x->ioff[n] = x->inl.len;
  return rc ? rc : x->inl.oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* The batch's pairs of the kept groups written with their counts (in key
** order); the pairs of the groups that go deleted: in an aggregation that
** evicts, every pair up to the greatest end that closed (every group at or
** before it closed: keep is the watermark's), one range tombstone. */
static int store_pairs(dp_agg_rocks *r, const bool *keep, int64_t n) {
  int rc = DIPPER_OK;
  int64_t m = 0;
  r->pkeys.len = 0;
  r->pvals.len = 0;
  for (int a = 0; a < r->naggs && !rc; a++) {
    const dp_hashtable *d = r->distinct[a];
    if (!d) continue;
    int64_t ne = d->ngroups;
    if (m + ne + 1 > r->poffs_cap &&
        dp_grow(&r->poffs, &r->poffs_cap, m + ne + 1, sizeof *r->poffs, 1024))
      return DIPPER_NOMEM;
    if (m + ne > r->pent_cap && dp_grow(&r->pent, &r->pent_cap, m + ne, sizeof *r->pent, 1024))
      return DIPPER_NOMEM;
    if (m + ne + 1 > r->pvoffs_cap &&
        dp_grow(&r->pvoffs, &r->pvoffs_cap, m + ne + 1, sizeof *r->pvoffs, 1024))
      return DIPPER_NOMEM;
    r->poffs[0] = r->pvoffs[0] = 0;
    for (int64_t e = 0; e < ne && !rc; e++) {
      int64_t g = dp_vector_get_i64(d->keys[0], e);
      if (g >= n || !keep[g] || !r->dpc[a].sp[g]) continue;
      rc = pair_key(r, a, e, &r->pkeys);
      dp_put_uvar(&r->pvals, (uint64_t)(r->dpc[a].base[e] + r->dpc[a].cnt[e]));
      r->poffs[++m] = r->pkeys.len;
      r->pvoffs[m] = r->pvals.len;
    }
  }
  if (!rc && r->pvals.oom) rc = DIPPER_NOMEM;
  if (!rc && m > r->order_cap && dp_grow(&r->order, &r->order_cap, m, sizeof *r->order, 1024))
    rc = DIPPER_NOMEM;
  if (!rc) rc = dp_rocks_key_order(&r->pkeys, r->poffs, m, r->order);
  for (int64_t j = 0; j < m && !rc; j++) {
    int64_t i = r->order[j];
    dp_rocks_put(r->db, r->pkeys.data + r->poffs[i], r->poffs[i + 1] - r->poffs[i],
                 r->pvals.data + r->pvoffs[i], r->pvoffs[i + 1] - r->pvoffs[i]);
  }
  if (rc || !r->evicting) return rc;
  int64_t upto = INT64_MIN;
  bool any = false;
  for (int64_t g = 0; g < n; g++)
    if (!keep[g] && dp_agg_rocks_stored(r, g) && any_spilled(r, g)) {
      int64_t end = dp_vector_get_i64(r->ht->keys[r->end_key], g);
      if (!any || end > upto) upto = end;
      any = true;
    }
  if (!any) return DIPPER_OK;
  char lo[1] = {0x12}, hi[9] = {0x13};
  size_t hin = 1;
  if (upto < INT64_MAX) {
    uint64_t t = due_time(upto + 1);
    for (int i = 0; i < 8; i++) hi[1 + i] = (char)(uint8_t)(t >> (56 - 8 * i));
    hi[0] = 0x12, hin = 9;
  }
  dp_rocks_delete_range(r->db, lo, 1, hi, hin);
  return DIPPER_OK;
}

/* A stored group's value into cached group g. */
static int load_value(dp_agg_rocks *r, int64_t g, const char *v, size_t vn) {
  int64_t ng = r->ht->ngroups;
  (void)ng;
  dp_rd rd;
  dp_rd_init(&rd, v, vn);
  if (r->ttl) r->lat[g] = dp_get_svar(&rd);
  if (r->has_codec) {
    r->lend[g] = dp_get_svar(&rd);
    int rc = rd.bad ? DIPPER_CORRUPT : r->codec.load(r->codec.u, g, &rd);
    if (rc) return rc;
  }
  for (int a = 0; !r->has_codec && a < r->naggs; a++) {
    int rc = dp_agg_state_load_group(r->states[a], &r->plan->u.aggregate.aggs[a], g, &rd);
    if (rc) return rc;
  }
  if (r->pairs) {
    int rc = load_distinct(r, g, &rd);
    if (rc) return rc;
  }
  if (!dp_rd_done(&rd)) return DIPPER_CORRUPT;
  r->stored[g] = 1;
  return DIPPER_OK;
}

/* dp_rocks_get_many: the i-th key the cache missed. */
static int load_miss(void *u, int64_t i, const char *v, size_t vn) {
  dp_agg_rocks *r = u;
  return load_value(r, r->mids[i], v, vn);
}

/* Groups [from, to): each from the cache when it knows the key (a value, or
** known absent), the others read from RocksDB in one multi-get. */
static int fetch_groups(dp_agg_rocks *r, int64_t from, int64_t to) {
  int64_t n = to - from, m = 0;
  if (n + 1 > r->moffs_cap && dp_grow(&r->moffs, &r->moffs_cap, n + 1, sizeof *r->moffs, 1024))
    return DIPPER_NOMEM;
  if (n > r->mids_cap && dp_grow(&r->mids, &r->mids_cap, n, sizeof *r->mids, 1024))
    return DIPPER_NOMEM;
  r->mkeys.len = 0;
  r->moffs[0] = 0;
  int rc = DIPPER_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    const char *k = r->keys.data + r->offs[i];
    size_t kn = r->offs[i + 1] - r->offs[i];
    int64_t e = wb_find(&r->wb, k, kn);
    if (e >= 0) {
      const wb_entry *x = &r->wb.e[e];
      if (x->live) rc = load_value(r, from + i, r->wb.bytes.data + x->voff, x->vlen);
      continue;
    }
    dp_buf_put(&r->mkeys, k, kn);
    r->mids[m] = from + i;
    r->moffs[++m] = r->mkeys.len;
  }
  if (!rc && r->mkeys.oom) rc = DIPPER_NOMEM;
  if (!rc && m && r->indb > 0) rc = dp_rocks_get_many(r->db, &r->mkeys, r->moffs, m, load_miss, r);
  return rc;
}

/* Cached groups [from, ht->ngroups) new: not stored yet, room in the states. */
static int prepare_groups(dp_agg_rocks *r, int64_t from) {
  int64_t to = r->ht->ngroups;
  if (to > r->stored_cap) {
    int64_t old = r->stored_cap;
    if (dp_grow(&r->stored, &r->stored_cap, to, 1, 1024)) return DIPPER_NOMEM;
    memset(r->stored + old, 0, (size_t)(r->stored_cap - old));
  }
  if (r->has_codec && to > r->lend_cap && dp_grow(&r->lend, &r->lend_cap, to, sizeof *r->lend, 1024))
    return DIPPER_NOMEM;
  if (r->ttl && to > r->lat_cap && dp_grow(&r->lat, &r->lat_cap, to, sizeof *r->lat, 1024))
    return DIPPER_NOMEM;
  memset(r->stored + from, 0, (size_t)(to - from));
  for (int a = 0; r->pairs && a < r->naggs; a++) {
    dpairs *x = &r->dpc[a];
    if (!r->distinct[a]) continue;
    if (to > x->sp_cap && dp_grow(&x->sp, &x->sp_cap, to, 1, 1024)) return DIPPER_NOMEM;
    memset(x->sp + from, 0, (size_t)(to - from)); /* a new group starts inline */
  }
  for (int a = 0; !r->has_codec && a < r->naggs; a++) {
    int rc = dp_agg_state_reserve(r->states[a], to);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

int dp_agg_rocks_fetch(dp_agg_rocks *r, int64_t from) {
  int64_t to = r->ht->ngroups;
  if (to <= from) return DIPPER_OK;
  int rc = prepare_groups(r, from);
  if (!rc) rc = group_keys(r, from, to);
  if (!rc) rc = fetch_groups(r, from, to);
  return rc;
}

/* Cached group g (entry key k, cache entry e or -1) kept: its value into
** the write-back cache; stored: the group was there before the batch. */
static int keep_group(dp_agg_rocks *r, int64_t g, int64_t n, const char *k, size_t kn, int64_t e,
                      bool stored) {
  r->val.len = 0;
  int rc = DIPPER_OK;
  (void)n;
  int64_t end = 0;
  if (r->ttl) dp_put_svar(&r->val, r->clock); /* a kept group was written in this batch */
  if (r->has_codec) {
    r->rec.len = 0;
    rc = r->codec.save(r->codec.u, g, &r->rec, &end);
    dp_put_svar(&r->val, end);
    dp_buf_put(&r->val, r->rec.data, r->rec.len);
    if (!rc && r->rec.oom) rc = DIPPER_NOMEM;
  } else if (r->end_key >= 0) {
    end = dp_vector_get_i64(r->ht->keys[r->end_key], g);
  }
  for (int a = 0; !r->has_codec && a < r->naggs && !rc; a++)
    rc = dp_agg_state_save_group(r->states[a], g, &r->val);
  for (int a = 0; r->pairs && a < r->naggs && !rc; a++) {
    const dpairs *x = &r->dpc[a];
    if (!r->distinct[a]) continue;
    if (x->sp[g]) dp_put_uvar(&r->val, 0);
    else dp_buf_put(&r->val, x->inl.data + x->ioff[g], x->ioff[g + 1] - x->ioff[g]);
  }
  if (!rc && r->val.oom) rc = DIPPER_NOMEM;
  if (!rc && e < 0 && !(rc = wb_insert(&r->wb, k, kn, &e))) {
    /* from RocksDB (stored) or new: indexed where RocksDB has it */
    r->wb.e[e].in_db = stored;
    r->wb.e[e].iend = r->has_codec && stored ? r->lend[g] : end;
    if (r->ttl) r->wb.e[e].iat = stored ? r->lat[g] : r->clock;
  }
  if (!rc) rc = wb_set_value(&r->wb, e, r->val.data, r->val.len);
  if (rc) return rc;
  wb_entry *x = &r->wb.e[e];
  if (!stored) r->count++;
  x->end = end;
  x->at = r->clock;
  x->live = x->dirty = 1;
  return DIPPER_OK;
}

int dp_agg_rocks_store(dp_agg_rocks *r, const bool *keep, int64_t n) {
  int rc = DIPPER_OK;
  for (int a = 0; r->pairs && a < r->naggs && !rc; a++)
    if (r->distinct[a]) rc = plan_inline(r, a, keep, n);
  if (!rc && r->pairs) rc = store_pairs(r, keep, n);
  if (!rc) rc = group_keys(r, 0, n);
  for (int64_t g = 0; g < n && !rc; g++) {
    const char *k = r->keys.data + r->offs[g];
    size_t kn = r->offs[g + 1] - r->offs[g];
    bool stored = dp_agg_rocks_stored(r, g);
    int64_t e = wb_find(&r->wb, k, kn);
    if (keep[g]) {
      rc = keep_group(r, g, n, k, kn, e, stored);
      continue;
    }
    if (stored) r->count--;
    if (stored && r->pairs && !r->evicting && any_spilled(r, g) && (rc = drop_pairs(r, k, kn, 0)))
      break;
    /* not cached and stored: it came from RocksDB */
    if (e >= 0 ? r->wb.e[e].in_db : stored) {
      dp_rocks_delete(r->db, k, kn);
      r->indb--;
      int64_t iat = e >= 0 ? r->wb.e[e].iat : r->ttl ? r->lat[g] : NOT_INDEXED;
      if (r->ttl && iat != NOT_INDEXED) dp_rocks_index_delete(r->db, 1, iat, k, kn);
    }
    if (e >= 0) r->wb.e[e].live = r->wb.e[e].in_db = r->wb.e[e].dirty = 0;
  }
  if (!rc) rc = dp_rocks_commit(r->db);
  /* past the budget: the dead entries go; still past 3/4 of it, all */
  if (!rc && wb_size(&r->wb) > r->budget && !(rc = wb_compact(&r->wb)) &&
      wb_size(&r->wb) > r->budget / 4 * 3)
    rc = wb_flush(r, true);
  return rc;
}

/* dp_rocks_scan_slice: an entry's key to the due list, its value to
** r->scan_vals (the due list's values: r->val_offs). */
static int note_entry(void *u, const char *k, size_t kn, const char *v, size_t vn) {
  dp_agg_rocks *r = u;
  if (r->ndue + 2 > r->due_cap &&
      dp_grow(&r->due_offs, &r->due_cap, r->ndue + 2, sizeof *r->due_offs, 1024))
    return DIPPER_NOMEM;
  if (r->ndue + 2 > r->voffs_cap &&
      dp_grow(&r->val_offs, &r->voffs_cap, r->ndue + 2, sizeof *r->val_offs, 1024))
    return DIPPER_NOMEM;
  dp_buf_put(&r->due, k, kn);
  dp_buf_put(&r->scan_vals, v, vn);
  r->due_offs[++r->ndue] = r->due.len;
  r->val_offs[r->ndue] = r->scan_vals.len;
  return r->due.oom || r->scan_vals.oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* The next slice of every entry (dp_agg_rocks_due's all) as the due list,
** keys and values, from after the last one of the slice before. */
static int scan_next(dp_agg_rocks *r, int64_t max) {
  r->due_at = r->ndue = 0;
  r->due.len = r->scan_vals.len = 0;
  if (dp_grow(&r->due_offs, &r->due_cap, 2, sizeof *r->due_offs, 1024) ||
      dp_grow(&r->val_offs, &r->voffs_cap, 2, sizeof *r->val_offs, 1024))
    return DIPPER_NOMEM;
  r->due_offs[0] = r->val_offs[0] = 0;
  int64_t got = 0;
  int rc = dp_rocks_scan_slice(r->db, 0, r->scanned ? r->scan_last.data : NULL, r->scan_last.len,
                               max, note_entry, r, &got);
  if (!rc && !got) r->scan_all = false; /* every entry was entered */
  if (rc || !got) return rc;
  r->scanned = true;
  r->scan_last.len = 0;
  dp_buf_put(&r->scan_last, r->due.data + r->due_offs[r->ndue - 1],
             r->due_offs[r->ndue] - r->due_offs[r->ndue - 1]);
  return r->scan_last.oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* A due key: its time in the index's order (the sign bit flipped) and bytes. */
typedef struct due_ref {
  uint64_t t;
  const char *k;
  size_t kn;
} due_ref;

/* The time index's order: by time, then the entry keys bytewise. */
static int cmp_due(const void *a, const void *b) {
  const due_ref *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  int c = memcmp(x->k, y->k, x->kn < y->kn ? x->kn : y->kn);
  return c ? c : (x->kn > y->kn) - (x->kn < y->kn);
}


/* The due list: the time index's keys (with their times in r->due_t) and
** the m cached groups of r->ids, merged in the index's order (that of the
** groups all stored), so that the output is the same wherever they were. */
static int merge_due(dp_agg_rocks *r, int64_t m) {
  int64_t n = r->ndue + m;
  due_ref *refs = malloc((size_t)(n > 0 ? n : 1) * sizeof *refs);
  if (!refs) return DIPPER_NOMEM;
  for (int64_t i = 0; i < r->ndue; i++)
    refs[i] = (due_ref){due_time(r->due_t[i]), r->due.data + r->due_offs[i],
                        r->due_offs[i + 1] - r->due_offs[i]};
  for (int64_t j = 0; j < m; j++) {
    const wb_entry *e = &r->wb.e[r->ids[j]];
    refs[r->ndue + j] = (due_ref){due_time(e->end), wb_key(&r->wb, e), e->klen};
  }
  qsort(refs, (size_t)n, sizeof *refs, cmp_due);
  int rc = DIPPER_OK;
  if (n + 1 > r->due_cap && dp_grow(&r->due_offs, &r->due_cap, n + 1, sizeof *r->due_offs, 1024))
    rc = DIPPER_NOMEM;
  dp_buf *out = &r->due2;
  out->len = 0;
  for (int64_t i = 0; i < n && !rc; i++) {
    dp_buf_put(out, refs[i].k, refs[i].kn);
    r->due_offs[i + 1] = out->len;
  }
  free(refs);
  if (!rc && out->oom) rc = DIPPER_NOMEM;
  if (rc) return rc;
  r->due_offs[0] = 0;
  dp_buf t = r->due;
  r->due = *out;
  *out = t;
  r->ndue = n;
  return DIPPER_OK;
}

int dp_agg_rocks_due(dp_agg_rocks *r, int64_t wm, bool all) {
  r->due_at = r->ndue = 0;
  r->due.len = 0;
  int rc = DIPPER_OK;
  r->scan_all = all;
  r->scanned = false;
  if (all) return wb_flush(r, true); /* then RocksDB holds every group */
  rc = dp_rocks_index_due_at(r->db, 0, wm, &r->due, &r->due_offs, &r->due_cap, &r->ndue,
                             &r->due_t, &r->due_tcap);
  /* the cached groups RocksDB has no index entry for */
  const wb_cache *c = &r->wb;
  int64_t m = 0;
  if (!rc && c->n > r->ids_cap) {
    int64_t cap = r->ids_cap;
    if (dp_grow(&r->ids, &cap, c->n, sizeof *r->ids, 1024) ||
        dp_grow(&r->hashes, &r->ids_cap, c->n, sizeof *r->hashes, 1024))
      rc = DIPPER_NOMEM;
  }
  for (int64_t i = 0; i < c->n && !rc; i++) {
    const wb_entry *e = &c->e[i];
    if (e->live && (!e->in_db || e->end != e->iend) && e->end <= wm) r->ids[m++] = i;
  }
  return rc || !m ? rc : merge_due(r, m);
}

int dp_agg_rocks_next(dp_agg_rocks *r, int64_t max, bool *any) {
  int rc = r->scan_all ? scan_next(r, max) : DIPPER_OK;
  if (rc) return rc;
  int64_t n = r->ndue - r->due_at < max ? r->ndue - r->due_at : max;
  *any = n > 0;
  if (n <= 0) return DIPPER_OK;
  int nk = r->ht->nkeys;
  int64_t at = r->due_at;
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
  if (!r->scan_all) return dp_agg_rocks_fetch(r, from);
  /* the scan read the values with the keys: no read again (each key once,
  ** so the groups are from, from + 1, ...) */
  if ((rc = prepare_groups(r, from))) return rc;
  for (int64_t i = 0; i < n && !rc; i++) {
    size_t v0 = r->val_offs[at + i], v1 = r->val_offs[at + i + 1];
    rc = r->ids[i] != from + i ? DIPPER_CORRUPT : load_value(r, from + i, r->scan_vals.data + v0, v1 - v0);
  }
  return rc == DIPPER_CORRUPT ? dp_error(r->diags, rc, r->plan->span,
                                         "the aggregation's rocksdb state holds a group that "
                                         "does not read back")
                              : rc;
}

/* ---- idle state retention ('table.exec.state.ttl') ----
** A second time index (space 1) has each group RocksDB holds at its last
** write (the batch's start; its value starts with that time), moved as the
** group is written again; the cache's entries carry theirs.  Expiry at a
** batch's start: the index's range up to now - ttl (what expired, and the
** stale places of groups the cache wrote since), and a pass over the cache
** for the groups RocksDB does not have yet: never a pass over RocksDB. */
int dp_agg_rocks_expire(dp_agg_rocks *r, int64_t now, int64_t *expired) {
  *expired = 0;
  if (now > r->clock) r->clock = now; /* time never goes back (state_ttl.h) */
  int64_t bound = r->clock - r->ttl;
  if (!r->ttl || r->count == 0) return DIPPER_OK;
  wb_cache *c = &r->wb;
  int rc = r->indb > 0 ? dp_rocks_index_due(r->db, 1, bound, &r->due, &r->due_offs, &r->due_cap,
                                           &r->ndue)
                       : DIPPER_OK;
  int64_t n = rc ? 0 : r->indb > 0 ? r->ndue : 0;
  for (int64_t i = 0; i < n && !rc; i++) {
    const char *k = r->due.data + r->due_offs[i];
    size_t kn = r->due_offs[i + 1] - r->due_offs[i];
    int64_t e = wb_find(c, k, kn);
    if (e >= 0) {
      /* the cache knows better: the pass below, or a later write (whose
      ** place in the index the range just took: written again at flush) */
      if (c->e[e].live && c->e[e].in_db && c->e[e].at > bound) c->e[e].iat = NOT_INDEXED;
      continue;
    }
    dp_rocks_delete(r->db, k, kn);
    r->count--, r->indb--, ++*expired;
    int64_t end = 0;
    if (r->pairs && r->evicting) rc = key_end(r, k, kn, &end);
    if (!rc && r->pairs) rc = drop_pairs(r, k, kn, end);
    if (rc) break;
  }
  for (int64_t i = 0; i < c->n && !rc; i++) {
    wb_entry *x = &c->e[i];
    if (!x->live || x->at > bound) continue;
    if (x->in_db) {
      dp_rocks_delete(r->db, wb_key(c, x), x->klen);
      r->indb--;
    }
    x->live = x->in_db = x->dirty = 0;
    r->count--, ++*expired;
    if (r->pairs) rc = drop_pairs(r, wb_key(c, x), x->klen, x->end);
  }
  r->ndue = 0;
  return rc ? rc : dp_rocks_commit(r->db);
}

/* ---- checkpoints ----
**   version:u8 (3)  'R'  checkpoint:svar  groups:svar
**   form:u8 (1: the values are a session window's records, 2: they start
**   with the group's last write, a TTL's; 4: DISTINCT values as pair
**   entries, 8: and a group's few in its record, the DISTINCT section's;
**   TTL: clock:svar)
**   cached:uvar, per cached group not yet in RocksDB as it stands (live
**   and dirty): key:bytes value:bytes end:svar in_db:u8, and when in_db
**   the time RocksDB's index has it at, iend:svar (a session window's key
**   moves in the index as its sessions do); TTL: at:svar, and when in_db
**   iat:svar
** the checkpoint the batch id of the RocksDB checkpoint under
** <query folder>/rocksdb/agg-<n>/ (each one whole, its SST files shared by
** hard links with the one before); the cached groups the rest of the state,
** so that a checkpoint writes them here, sequentially, rather than into
** RocksDB's memtable.  Each blob is whole (a delta's too).  Versions 1 (no
** cached groups) and 2 (no form, no iend: it is the end) are still read. */
#define AGG_ROCKS_VERSION 3

int dp_agg_rocks_save(dp_agg_rocks *r, dp_buf *out) {
  int64_t ck;
  int rc = dp_rocks_save(r->db, r->ex->batch_id, &ck);
  if (rc) return rc;
  const wb_cache *c = &r->wb;
  uint64_t m = 0;
  for (int64_t i = 0; i < c->n; i++) m += c->e[i].live && c->e[i].dirty;
  dp_put_u8(out, AGG_ROCKS_VERSION);
  dp_put_u8(out, 'R');
  dp_put_svar(out, ck);
  dp_put_svar(out, r->count);
  dp_put_u8(out, (uint8_t)(r->has_codec | (r->ttl ? 2 : 0) | (r->pairs ? 4 | 8 : 0)));
  if (r->ttl) dp_put_svar(out, r->clock);
  dp_put_uvar(out, m);
  for (int64_t i = 0; i < c->n; i++) {
    const wb_entry *e = &c->e[i];
    if (!e->live || !e->dirty) continue;
    dp_put_bytes(out, wb_key(c, e), e->klen);
    dp_put_bytes(out, c->bytes.data + e->voff, e->vlen);
    dp_put_svar(out, e->end);
    dp_put_u8(out, e->in_db);
    if (e->in_db) dp_put_svar(out, e->iend);
    if (r->ttl) dp_put_svar(out, e->at);
    if (r->ttl && e->in_db) dp_put_svar(out, e->iat);
  }
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* The cached groups of a blob into the (empty) cache, dirty; the groups
** RocksDB holds counted. */
static int load_cached(dp_agg_rocks *r, dp_rd *in, int64_t count, int version) {
  uint64_t m = dp_get_count(in, 16);
  int64_t only = 0;
  int rc = in->bad || m > (uint64_t)count ? DIPPER_CORRUPT : DIPPER_OK;
  for (uint64_t i = 0; i < m && !rc; i++) {
    size_t kn, vn;
    const char *k = (const char *)dp_get_bytes(in, &kn);
    const char *v = (const char *)dp_get_bytes(in, &vn);
    int64_t end = dp_get_svar(in), e;
    uint8_t in_db = dp_get_u8(in);
    int64_t iend = in_db && version >= 3 ? dp_get_svar(in) : end;
    int64_t at = r->ttl ? dp_get_svar(in) : 0, iat = r->ttl && in_db ? dp_get_svar(in) : at;
    if (in->bad || kn < 13 || in_db > 1 || wb_find(&r->wb, k, kn) >= 0) {
      rc = DIPPER_CORRUPT;
      break;
    }
    const uint8_t *kl = (const uint8_t *)k + 9;
    if (((uint32_t)kl[0] << 24 | (uint32_t)kl[1] << 16 | (uint32_t)kl[2] << 8 | kl[3]) != kn - 13)
      rc = DIPPER_CORRUPT;
    if (!rc) rc = wb_insert(&r->wb, k, kn, &e);
    if (!rc) rc = wb_set_value(&r->wb, e, v, vn);
    if (rc) break;
    wb_entry *x = &r->wb.e[e];
    x->end = end, x->iend = iend, x->in_db = in_db, x->live = x->dirty = 1;
    x->at = at, x->iat = iat;
    only += !in_db;
  }
  if (!rc && !dp_rd_done(in)) rc = DIPPER_CORRUPT;
  if (rc) wb_clear(&r->wb);
  else r->indb = count - only;
  return rc;
}

int dp_agg_rocks_restore(dp_agg_rocks *r, dp_rd *in) {
  uint8_t v = dp_get_u8(in), tag = dp_get_u8(in);
  int64_t ck = dp_get_svar(in), count = dp_get_svar(in);
  dp_span nowhere = {0, 0, 0, 0};
  if (!in->bad && (v < 1 || v > AGG_ROCKS_VERSION || tag != 'R')) {
    in->bad = true;
    return dp_error(r->diags, DIPPER_CORRUPT, nowhere,
                    "the checkpointed state of the aggregation is of version %u, and this run "
                    "reads a rocksdb state of version 1 to %d (was it written with another "
                    "'state.backend'?): start the query from a fresh checkpoint folder",
                    v, AGG_ROCKS_VERSION);
  }
  wb_clear(&r->wb);
  int rc = in->bad || ck < 0 || count < 0 ? DIPPER_CORRUPT : DIPPER_OK;
  unsigned form = !rc && v >= 3 ? dp_get_u8(in) : 0,
           want = r->has_codec | (r->ttl ? 2u : 0u) | (r->pairs ? 4u | 8u : 0u);
  /* bit 8 (inline values) only with 4; a blob of the pairs before it (4
  ** alone) reads: its records have no DISTINCT part, every set spilled */
  if (!rc && !in->bad && ((form & 12) == 8 || form > 15)) rc = DIPPER_CORRUPT;
  if (!rc && (form & 12) == 4 && (want & 4)) form |= 8;
  if (!rc && !in->bad && ((form ^ want) & 4)) {
    in->bad = true;
    return dp_error(r->diags, DIPPER_CORRUPT, nowhere,
                    "the checkpointed rocksdb state of the aggregation keeps its DISTINCT "
                    "aggregates' values %s, and this run keeps them %s: start the query from "
                    "a fresh checkpoint folder",
                    form & 4 ? "as entries of their own" : "in the groups' records",
                    want & 4 ? "as entries of their own" : "in the groups' records");
  }
  if (!rc && !in->bad && ((form ^ want) & 2)) {
    /* a group's value starts with its last write under a TTL only: a change
    ** would need every stored value rewritten */
    in->bad = true;
    return dp_error(r->diags, DIPPER_CORRUPT, nowhere,
                    "the checkpointed rocksdb state of the aggregation was written %s a state "
                    "TTL ('table.exec.state.ttl' or STATE_TTL), and this run has %s: set the "
                    "option as it was, or start the query from a fresh checkpoint folder",
                    form & 2 ? "with" : "without", want & 2 ? "one" : "none");
  }
  if (!rc && !in->bad && form != want) {
    in->bad = true;
    return dp_error(r->diags, DIPPER_CORRUPT, nowhere,
                    "the checkpointed rocksdb state of the aggregation keeps %s, and this run "
                    "%s: start the query from a fresh checkpoint folder",
                    form & 1 ? "session windows" : "no session window",
                    want & 1 ? "has session windows" : "has none");
  }
  if (!rc && (form & 2)) r->clock = dp_get_svar(in);
  if (!rc && v == 1) r->indb = count;
  else if (!rc && (rc = load_cached(r, in, count, v)) == DIPPER_NOMEM) return rc;
  if (rc) {
    in->bad = true;
    return dp_error(r->diags, DIPPER_CORRUPT, nowhere,
                    "the checkpointed state of the aggregation does not read back");
  }
  rc = dp_rocks_restore(r->db, ck);
  if (!rc) r->count = count;
  else wb_clear(&r->wb);
  return rc;
}
