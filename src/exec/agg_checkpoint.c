/*
** agg_checkpoint.c — the checkpoints of the AGGREGATE operator
** (op_aggregate.c; the state it shares is agg_int.h): the whole state after
** a micro-batch as one versioned, checksummed blob (save_state /
** restore_state), and the deltas since the last checkpoint (save_delta /
** restore_delta), whose cost follows what changed.  The RocksDB backend's
** blob is agg_rocks.c's.
*/
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "core/vector_codec.h"
#include "exec/agg_int.h"

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
**   gone      count:uvar and the groups gone (tombstones, not compacted
**             away yet) as ascending gaps, like the deltas' id lists
**
** Deltas (save_delta/restore_delta): what changed since the last
** checkpoint, in the section after this one.
*/

/* 6: the gone list at the end (3, without it, still reads; 4 and 5 are
** the deltas' versions) */
#define AGG_STATE_VERSION 6

static uint8_t shape_flags(const agg_state *st) {
  return (uint8_t)((st->windowed ? 1 : 0) | (st->session ? 2 : 0) | (st->evicts ? 4 : 0));
}

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
  int rc = dp_agg_state_save(&c->st, dp_aggop_nstates(st), out);
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
  int64_t n = dp_aggop_nstates(st), nchanged = 0;
  for (int64_t g = 0; g < n && g < st->gcap; g++) nchanged += st->changed[g] != 0;
  dp_put_uvar(out, (uint64_t)nchanged);
  for (int64_t g = 0; g < n && g < st->gcap; g++)
    if (st->changed[g]) dp_put_uvar(out, (uint64_t)g);
  for (int a = 0; a < st->naggs && !rc; a++) rc = save_call(st, &st->calls[a], out);
  /* the groups gone and not compacted away yet, ascending */
  int64_t ngone = 0;
  for (int64_t g = 0; !st->session && g < n; g++) ngone += st->gone[g];
  dp_put_uvar(out, (uint64_t)ngone);
  for (int64_t g = 0, prev = -1; !st->session && g < n; g++)
    if (st->gone[g]) {
      dp_put_uvar(out, (uint64_t)(g - prev - 1));
      prev = g;
    }
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int get_ids(dp_rd *in, int64_t below, idlist *l);

/* The tombstones a blob lists (version 6 and 5 on): flagged gone again. */
static int load_gone(agg_state *st, dp_rd *in, int64_t n) {
  idlist l = {0};
  int rc = get_ids(in, n, &l);
  for (int64_t k = 0; !rc && k < l.n; k++)
    if (st->session || st->gone[l.v[k]]) rc = DIPPER_CORRUPT;
    else st->gone[l.v[k]] = 1;
  free(l.v);
  return rc;
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

/* With a TTL, after the blob: the groups' last writes, in today's numbering
** (state_ttl.h's section): whole after a whole state, after a delta what
** changed since the last checkpoint (the groups written and dropped). */
static int save_ttl(agg_state *st, dp_buf *out, bool delta) {
  if (delta) return dp_state_ttl_save_section_delta(&st->ttl, out);
  dp_state_ttl_save_section_base(&st->ttl, out);
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

int dp_aggop_save_state(dp_op *op, dp_buf *out) {
  agg_state *st = op->state;
  if (st->rocks) return dp_agg_rocks_save(st->rocks, out);
  int rc = save_blob(op->state, out, AGG_STATE_VERSION, save_body);
  return rc ? rc : save_ttl(st, out, false);
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
    /* dead: merged away (parent another) or closed (its own root) */
    if (!st->s_dead[s] && st->s_parent[s] != s) rc = DIPPER_CORRUPT;
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
  if (!rc) rc = dp_aggop_ensure(&st->arr, &cap, (int64_t)n, sizeof *st->arr);
  GROW_S(s_key) GROW_S(s_start) GROW_S(s_end) GROW_S(s_next) GROW_S(s_parent) GROW_S(s_dead)
#undef GROW_S
  if (rc) return rc;
  st->scap = cap;
  int64_t kc = st->kcap;
  if ((rc = dp_aggop_ensure(&st->key_head, &kc, nk, sizeof *st->key_head))) return rc;
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
  int64_t n = dp_aggop_nstates(st), dn = c->distinct.ngroups;
  const dp_vector *gv = c->distinct.keys[0];
  const int64_t *gid = gv->values;
  if (gv->null_count) return DIPPER_CORRUPT;
  for (int64_t e = 0; e < dn; e++)
    if (gid[e] < 0 || gid[e] >= n) return DIPPER_CORRUPT;
  if (!st->session) return DIPPER_OK;
  int64_t old = c->d_head_cap;
  if ((rc = dp_aggop_ensure(&c->d_head, &c->d_head_cap, n, sizeof *c->d_head))) return rc;
  for (int64_t k = old; k < c->d_head_cap; k++) c->d_head[k] = -1;
  if ((rc = dp_aggop_ensure(&c->d_next, &c->d_next_cap, dn, sizeof *c->d_next))) return rc;
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
  int64_t n = dp_aggop_nstates(st);
  if ((rc = dp_aggop_grow_flags(st, n))) return rc; /* dp_agg_state_load sizes the states */
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
  if (!rc && st->reading >= AGG_STATE_VERSION) {
    *what = "the groups gone";
    rc = load_gone(st, in, n);
  }
  return rc;
}


/* ---- deltas ----
** save_delta writes what changed since the base (the state of the last
** save_state, save_delta, restore_state or restore_delta; all four call
** reset_tracking), in a blob like save_state's but of version
** AGG_DELTA_VERSION:
**   version:u8 (5)  body_len:u64  body  crc32c:u32
** The body, ids as ascending lists `count:uvar (gap:uvar)*` (the gap from
** the previous id + 1, from -1):
**   shape     as in the whole state
**   base      dp_aggop_nstates:uvar at the base [sessions: nkeys:uvar], checked
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
**   gone      the groups gone since the base and not compacted away yet, in
**             today's numbering (the tombstones of op_aggregate.c: the
**             restore keeps them in the table, flagged, as the saver does;
**             sessions carry theirs in the dead flag); version 4 had none
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

#define AGG_DELTA_VERSION 5

static void reset_tracking(agg_state *st) {
  for (int64_t k = 0; k < st->dirty_ids.n; k++) st->dirty[st->dirty_ids.v[k]] = 0;
  st->dirty_ids.n = 0;
  st->dropped.n = 0;
  st->keys_dropped.n = 0;
  st->gone_new.n = 0;
  st->base_live = dp_aggop_nstates(st);
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
  int rc = dp_aggop_ensure(&l->v, &l->cap, (int64_t)n, sizeof *l->v);
  for (uint64_t k = 0, prev = (uint64_t)-1; k < n && !rc; k++) {
    uint64_t gap = dp_get_uvar(in);
    if (in->bad || gap >= (uint64_t)below || prev + 1 + gap >= (uint64_t)below) return DIPPER_CORRUPT;
    prev += 1 + gap;
    l->v[l->n++] = (int64_t)prev;
  }
  return rc;
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
  int64_t n = dp_aggop_nstates(st), nd = 0;
  int64_t *w = malloc((size_t)(st->dirty_ids.n + n - st->base_live + 1) * sizeof *w);
  if (!w) return DIPPER_NOMEM;
  for (int64_t k = 0; k < st->dirty_ids.n; k++)
    if (st->dirty_ids.v[k] < st->base_live) w[nd++] = st->dirty_ids.v[k];
  qsort(w, (size_t)nd, sizeof *w, dp_aggop_cmp_id);
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
  int64_t kfrom = st->session ? st->base_keys_live : st->base_live, n = dp_aggop_nstates(st), nw;
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
  /* groups gone since the base and not compacted away yet (the dropped
  ** list has the rest), ascending */
  int64_t *gn = rc ? NULL : malloc((size_t)(st->gone_new.n + 1) * sizeof *gn);
  if (!rc && !gn) rc = DIPPER_NOMEM;
  if (!rc) {
    if (st->gone_new.n > 0) memcpy(gn, st->gone_new.v, (size_t)st->gone_new.n * sizeof *gn);
    if (st->gone_new.n > 1) qsort(gn, (size_t)st->gone_new.n, sizeof *gn, dp_aggop_cmp_id);
    put_ids(out, gn, st->gone_new.n);
  }
  free(gn);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_aggop_save_delta(dp_op *op, dp_buf *out) {
  agg_state *st = op->state;
  if (st->rocks) return dp_agg_rocks_save(st->rocks, out);
  int rc = save_blob(op->state, out, AGG_DELTA_VERSION, save_delta_body);
  return rc ? rc : save_ttl(st, out, true);
}

static int grow_sessions(agg_state *st, int64_t n) {
  int rc = dp_aggop_grow_sessions(st, n);
  return rc ? rc : dp_aggop_grow_key_heads(st);
}

/* Replay the compactions since the base as one: drop the base's ids in
** `drops` (and, sessions, the keys in `kdrops`). */
static int replay_drops(agg_state *st, const idlist *drops, const idlist *kdrops) {
  int64_t n = dp_aggop_nstates(st), kept = n - drops->n;
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
      if (remap[g] >= 0) {
        st->changed[remap[g]] = st->changed[g];
        st->gone[remap[g]] = st->gone[g];
      }
    for (int64_t g = kept; !rc && g < n; g++) st->changed[g] = st->gone[g] = 0;
    if (!rc) rc = dp_aggop_compact_calls(st, remap, n, kept, true);
    if (!rc && st->session) {
      dp_aggop_compact_sessions(st, remap, n);
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
  dp_aggop_relink_sessions(st);
  return check_sessions(st);
}

/* The DISTINCT entries created since: their groups exist; in sessions,
** linked newest first on top of the chains of the base's entries. */
static int load_delta_distinct(agg_state *st, agg_call_state *c, int64_t from_sess, dp_rd *in) {
  int64_t before = c->distinct.ngroups, n = dp_aggop_nstates(st);
  int rc = load_keys(&c->distinct, in);
  if (rc) return rc;
  const dp_vector *gv = c->distinct.keys[0];
  const int64_t *gid = gv->values;
  if (gv->null_count) return DIPPER_CORRUPT;
  for (int64_t e = before; e < c->distinct.ngroups; e++)
    if (gid[e] < 0 || gid[e] >= n) return DIPPER_CORRUPT;
  if (!st->session) return DIPPER_OK;
  int64_t old = c->d_head_cap;
  if ((rc = dp_aggop_ensure(&c->d_head, &c->d_head_cap, n, sizeof *c->d_head))) return rc;
  for (int64_t s = old; s < c->d_head_cap; s++) c->d_head[s] = -1;
  for (int64_t s = from_sess; s < n; s++) c->d_head[s] = -1; /* new sessions: new entries only */
  for (int64_t e = before; e < c->distinct.ngroups && !rc; e++) rc = dp_aggop_chain_link(c, gid[e], e);
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
  if (in->bad || base != (uint64_t)dp_aggop_nstates(st) || (st->session && bkeys != (uint64_t)st->ht.ngroups))
    return DIPPER_CORRUPT;
  idlist drops = {0}, kdrops = {0}, dirty = {0}, ch = {0};
  int64_t *w = NULL, nw = 0, n = 0, from = 0;
  *what = "the groups dropped";
  int rc = get_ids(in, (int64_t)base, &drops);
  if (!rc && st->session) rc = get_ids(in, (int64_t)bkeys, &kdrops);
  if (!rc) rc = replay_drops(st, &drops, &kdrops);
  if (!rc) *what = "the group keys";
  from = dp_aggop_nstates(st); /* the base's survivors: the ids created since follow */
  if (!rc) rc = load_keys(&st->ht, in);
  if (!rc) {
    n = st->session ? from + (int64_t)dp_get_count(in, 5) : st->ht.ngroups;
    if (in->bad) rc = DIPPER_CORRUPT;
  }
  if (!rc) *what = "the groups changed";
  if (!rc) rc = get_ids(in, from, &dirty);
  if (!rc) rc = dp_aggop_grow_groups(st, n);
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
  if (!rc && st->reading >= AGG_DELTA_VERSION) {
    *what = "the groups gone";
    rc = load_gone(st, in, n);
  }
  free(drops.v);
  free(kdrops.v);
  free(dirty.v);
  free(ch.v);
  free(w);
  return rc;
}

/* After a restore: the tombstones counted, the changed ids listed and the
** closing index built, from the state read (O(states), like the restore). */
static int rebuild_index(agg_state *st) {
  int64_t n = dp_aggop_nstates(st);
  st->ngone = 0;
  st->touched.n = 0;
  int rc = DIPPER_OK;
  for (int64_t g = 0; g < n && !rc; g++) {
    st->ngone += dp_aggop_is_dead(st, g);
    if (st->changed[g]) rc = dp_aggop_idlist_push(&st->touched, g);
  }
  return rc ? rc : dp_aggop_rebuild_due(st);
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
  /* a blob of the version before tombstones reads as one with none */
  bool older = (version == AGG_DELTA_VERSION && got == 4) || (version == AGG_STATE_VERSION && got == 3);
  if (!rc && got != version && !older) {
    in->bad = true;
    return dp_error(op->ex->diags, DIPPER_CORRUPT, nowhere,
                    "aggregate %s of version %u: this build reads version %d", kind, got, version);
  }
  st->reading = got;
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
  if ((rc = rebuild_index(st))) return rc;
  op->metrics.state_rows = dp_aggop_live_count(st);
  return DIPPER_OK;
}

int dp_aggop_restore_state(dp_op *op, dp_rd *in) {
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
void dp_aggop_restore_expect(dp_op *op, const dp_rd *deltas, int n) {
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
int dp_aggop_restore_delta(dp_op *op, dp_rd *in) {
  agg_state *st = op->state;
  if (st->rocks) return dp_agg_rocks_restore(st->rocks, in); /* each names a whole one */
  int rc = restore_blob(op, in, AGG_DELTA_VERSION, "delta", load_delta_body);
  return rc ? rc : restore_ttl(op, in);
}

