/*
** op_join_side.c — the stored sides of a join of two streams (op_join.c's
** "two streams" mode, in memory): append, expiry by the watermark,
** compaction, and each side's checkpoint forms.
**
** Each side stores the columns the join reads only (its condition, keys,
** time bound, and what the plan above reads of its output: plan/prune.h),
** so a column no one reads costs nothing per row.  A row keeps its id (its
** position) until a compaction: an expired row is marked dead and probes
** skip it in its hash chain; the store is compacted, its hash index rebuilt,
** once dead rows are half of it (and at least COMPACT_MIN), so a row is
** copied O(1) times over its life.  Expiry goes through a time index of
** runs: each batch's new rows, sorted by expiry (left t - lower, right
** t + upper: Spark's rule) when not already in order, form a run, merged
** into the one before when it follows on; an eviction walks each run from
** its start while the expiry is at or before the watermark: the rows it
** expires plus a step per run.  Runs, not a heap: streams arrive nearly in
** time order, so a batch is one run already (no sort, no log n a row).
** Padded rows of an outer side leave in store order (ids sorted), and a
** probe meets the live rows of a chain in the order of a rebuilt index: the
** results are those of the whole-store scan eviction once was.  The
** functions of op_join_int.h here — append, probing (op_join.c's
** probe_slice, aimed by dp_join_aim), eviction, save / load and their delta
** forms — are the store's surface: another store (on disk) would replace
** them (docs/architecture.md).
**
** Owns: a side's store, its flags, hash index and time index.  Does not
** own: probing and the output (op_join.c), the blob's outer layout.
*/
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "exec/op_join_int.h"

int dp_join_grow_hits(uint8_t **hit, int64_t *cap, int64_t need) {
  if (need <= *cap) return DIPPER_OK;
  int64_t old = *cap;
  if (dp_grow(hit, cap, need, 1, 1024)) return DIPPER_NOMEM;
  memset(*hit + old, 0, (size_t)(*cap - old));
  return DIPPER_OK;
}

/* Point the probe machinery at: new rows of side s probing the store of the other. */
void dp_join_aim(join_state *st, int s) {
  struct side *P = &st->side[s], *B = &st->side[1 - s];
  st->pside = s;
  st->bside = 1 - s;
  st->probe = P->delta;
  st->build = B->store;
  st->index = &B->index;
  st->pkeys = P->keys;
  st->bkeys = B->keys;
  st->build_hit = B->hit;
  st->build_dead = B->dead;
  st->hit_log = &B->log;
  st->mark_build = B->outer;
  st->probe_outer = false;
  st->build_outer = false;
}

#define COMPACT_MIN 1024

/* The expiry of row `row` (of tv, side s's time column): a row with no time
** expires at the first eviction (the bound never holds for it). */
static int64_t expiry(const join_state *st, int s, const dp_vector *tv, int64_t row) {
  if (dp_vector_is_null(tv, row)) return INT64_MIN;
  int64_t t = dp_vector_get_i64(tv, row), k;
  if (s == 0 ? !__builtin_sub_overflow(t, st->evict_lower, &k)
             : !__builtin_add_overflow(t, st->evict_upper, &k))
    return k;
  bool up = s == 0 ? st->evict_lower < 0 : st->evict_upper > 0;
  return up ? INT64_MAX : INT64_MIN;
}

static int cmp_entry(const void *a, const void *b) {
  const tix_entry *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Rows [first, end) of side s join the time index as a run. */
static int tix_add(join_state *st, int s, int64_t first, int64_t end) {
  struct side *sd = &st->side[s];
  int64_t n = end - first;
  if (n <= 0 || sd->time_col < 0) return DIPPER_OK;
  if (dp_grow(&sd->tix, &sd->tix_cap, sd->ntix + n, sizeof *sd->tix, 1024) ||
      dp_grow(&sd->runs, &sd->runs_cap, sd->nruns + 1, sizeof *sd->runs, 16))
    return DIPPER_NOMEM;
  tix_entry *e = sd->tix + sd->ntix;
  const dp_vector *tv = sd->store->cols[sd->time_col];
  bool sorted = true;
  for (int64_t i = 0; i < n; i++) {
    e[i].key = expiry(st, s, tv, first + i);
    e[i].id = first + i;
    if (i && e[i].key < e[i - 1].key) sorted = false;
  }
  if (!sorted) qsort(e, (size_t)n, sizeof *e, cmp_entry);
  tix_run *last = sd->nruns ? &sd->runs[sd->nruns - 1] : NULL;
  if (last && last->end == sd->ntix && last->pos < last->end &&
      sd->tix[last->end - 1].key <= e[0].key)
    last->end += n; /* it follows on: one run */
  else
    sd->runs[sd->nruns++] = (tix_run){sd->ntix, sd->ntix + n};
  sd->ntix += n;
  return DIPPER_OK;
}

/* Add side s's new rows to its store, index and time index (with what
** they matched while probing). */
int dp_join_side_append(join_state *st, int s) {
  struct side *sd = &st->side[s];
  int64_t first = sd->store->nrows, n = sd->delta->nrows;
  int rc = dp_rows_append(sd->store, sd->delta);
  if (!rc) rc = dp_join_grow_hits(&sd->hit, &sd->hit_cap, first + n);
  if (!rc) rc = dp_join_grow_hits(&sd->dead, &sd->dead_cap, first + n);
  if (rc) return rc;
  const dp_vector *kc[64];
  for (int k = 0; k < st->nkeys; k++) kc[k] = sd->store->cols[sd->keys[k]];
  for (int64_t r = 0; r < n; r++) {
    sd->hit[first + r] = sd->dhit && r < sd->dhit_cap ? sd->dhit[r] : 0;
    sd->dead[first + r] = 0;
    if ((rc = dp_rowhash_add(&sd->index, dp_rows_hash(kc, st->nkeys, first + r)))) return rc;
    if (sd->ttl.ttl > 0 && (rc = dp_state_ttl_touch(&sd->ttl, first + r, st->now))) return rc;
  }
  if ((rc = tix_add(st, s, first, first + n))) return rc;
  dp_batch_clear(sd->delta);
  if (sd->dhit) memset(sd->dhit, 0, (size_t)sd->dhit_cap);
  return DIPPER_OK;
}

/* Drop the dead rows of side s: the store, its flags, its hash index and
** its time index renumbered, the drops logged for the next delta. */
static int side_compact(join_state *st, int s) {
  struct side *sd = &st->side[s];
  int64_t n = sd->store->nrows, nkeep = 0, ndrop = 0;
  if (sd->ndead == 0) return DIPPER_OK;
  int64_t *keep = malloc((size_t)(n ? n : 1) * sizeof *keep);
  int64_t *drop = malloc((size_t)(sd->ndead ? sd->ndead : 1) * sizeof *drop);
  int64_t *newid = malloc((size_t)(n ? n : 1) * sizeof *newid);
  int rc = keep && drop && newid ? DIPPER_OK : DIPPER_NOMEM;
  for (int64_t r = 0; !rc && r < n; r++) {
    newid[r] = sd->dead[r] ? -1 : nkeep;
    if (sd->dead[r]) drop[ndrop++] = r;
    else keep[nkeep++] = r;
  }
  if (!rc && ndrop != sd->ndead) rc = DIPPER_INTERNAL;
  if (!rc) rc = dp_rowlog_drop(&sd->log, drop, ndrop);
  if (!rc && sd->ttl.ttl > 0) rc = dp_state_ttl_renumber(&sd->ttl, newid, n);
  if (!rc) rc = dp_rows_compact(&sd->store, keep, nkeep);
  if (!rc) {
    for (int64_t k = 0; sd->hit && k < nkeep; k++) sd->hit[k] = sd->hit[keep[k]];
    if (sd->dead) memset(sd->dead, 0, (size_t)sd->dead_cap);
    sd->ndead = 0;
    dp_rowhash_clear(&sd->index); /* its memory is reused: no fresh pages to fault in */
    rc = dp_rowhash_add_rows(&sd->index, sd->store, sd->keys, st->nkeys, 0);
  }
  if (!rc) {
    /* the entries not yet expired, renumbered, runs kept as they were */
    int64_t w = 0, nr = 0;
    for (int64_t i = 0; i < sd->nruns; i++) {
      int64_t from = w;
      for (int64_t j = sd->runs[i].pos; j < sd->runs[i].end; j++) {
        int64_t id = newid[sd->tix[j].id];
        if (id < 0) continue; /* killed by a final eviction, which does not walk runs */
        sd->tix[w].key = sd->tix[j].key;
        sd->tix[w++].id = id;
      }
      if (w > from) sd->runs[nr++] = (tix_run){from, w};
    }
    sd->ntix = w;
    sd->nruns = nr;
  }
  free(keep);
  free(drop);
  free(newid);
  return rc;
}

/* Row r of side s expires: marked, and listed (ids) when it leaves padded. */
static int kill_row(join_state *st, struct side *sd, int64_t r, bool pad) {
  if (sd->dead[r]) return DIPPER_OK;
  sd->dead[r] = 1;
  sd->ndead++;
  if (sd->ttl.ttl > 0) dp_state_ttl_remove(&sd->ttl, r);
  return pad && sd->outer && !sd->hit[r] ? dp_join_add_pair(st, r, -1) : DIPPER_OK;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Expire the rows of side s the watermark wm has passed (every row at the
** end: DP_WATERMARK_END, or when the side has no time bound); with `pad`
** the unmatched rows of an outer side are left in st->pi as (row, -1)
** pairs, in store order.  A restore runs it without `pad` to mark again
** the rows that had expired. */
static int expire(join_state *st, int s, int64_t wm, bool pad) {
  struct side *sd = &st->side[s];
  int64_t n = sd->store->nrows;
  int rc = dp_join_grow_hits(&sd->dead, &sd->dead_cap, n);
  st->npairs = 0;
  if (sd->time_col < 0 || wm == DP_WATERMARK_END) {
    for (int64_t r = 0; !rc && r < n; r++) rc = kill_row(st, sd, r, pad);
    sd->nruns = sd->ntix = 0;
    return rc;
  }
  int64_t nr = 0;
  for (int64_t i = 0; !rc && i < sd->nruns; i++) {
    tix_run *ru = &sd->runs[i];
    while (!rc && ru->pos < ru->end && sd->tix[ru->pos].key <= wm)
      rc = kill_row(st, sd, sd->tix[ru->pos++].id, pad);
    if (ru->pos < ru->end) sd->runs[nr++] = *ru;
  }
  if (!rc) sd->nruns = nr;
  if (!rc && st->npairs > 1) qsort(st->pi, (size_t)st->npairs, sizeof *st->pi, cmp_i64);
  for (int64_t k = 0; !rc && k < st->npairs; k++) st->bi[k] = -1;
  return rc;
}

/* Compact side s once its dead rows are half of it (and at least
** COMPACT_MIN), or all of it. */
static int compact_due(join_state *st, int s) {
  struct side *sd = &st->side[s];
  int64_t n = sd->store->nrows;
  if (sd->ndead > 0 && (sd->ndead == n || (sd->ndead >= COMPACT_MIN && 2 * sd->ndead > n)))
    return side_compact(st, s);
  return DIPPER_OK;
}

/* Expiry by the state TTL: the rows inserted at or before now - ttl, found
** at the cost of what expires (the list is in insertion order, which is
** store order), marked dead like the watermark's, and never padded. */
int dp_join_expire_ttl(join_state *st) {
  for (int s = 0; s < 2; s++) {
    struct side *sd = &st->side[s];
    if (sd->ttl.ttl <= 0) continue;
    int64_t *ids = NULL, n = 0;
    int rc = dp_state_ttl_expire(&sd->ttl, st->now, &ids, &n);
    for (int64_t k = 0; !rc && k < n; k++)
      rc = ids[k] < sd->store->nrows ? kill_row(st, sd, ids[k], false) : DIPPER_INTERNAL;
    free(ids);
    if (!rc && n > 0) rc = compact_due(st, s);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

/* Drop the stored rows the watermark has passed; unmatched rows of an outer
** side leave padded into st->out. */
static int side_evict(dp_op *op, int s) {
  join_state *st = op->state;
  struct side *sd = &st->side[s];
  /* state is evicted by the current watermark, as Spark does, once this
  ** batch's rows (late only below the previous one) have probed it */
  int64_t wm = op->ex->final ? DP_WATERMARK_END : op->ex->watermark;
  if (wm == DP_WATERMARK_NONE || (sd->time_col < 0 && !op->ex->final)) return DIPPER_OK;
  sd->evict_wm = wm;
  int rc = expire(st, s, wm, true);
  if (!rc && st->npairs > 0) {
    dp_join_aim(st, s);
    st->probe = sd->store; /* the padded rows come from this side's store */
    rc = dp_join_gather_out(st);
  }
  return rc ? rc : compact_due(st, s);
}

int dp_join_evict(dp_op *op) {
  for (int s = 0; s < 2; s++) {
    int rc = side_evict(op, s);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

/* After a restore: the hash index and the time index of every stored row
** again, and the rows that had expired (by the watermark of the last
** eviction) marked dead. */
static int side_reindex(join_state *st, int s) {
  struct side *sd = &st->side[s];
  int64_t n = sd->store->nrows;
  int rc = dp_join_grow_hits(&sd->dead, &sd->dead_cap, n);
  if (rc) return rc;
  dp_rowhash_clear(&sd->index);
  if ((rc = dp_rowhash_add_rows(&sd->index, sd->store, sd->keys, st->nkeys, 0))) return rc;
  if (sd->dead) memset(sd->dead, 0, (size_t)sd->dead_cap);
  sd->ndead = sd->ntix = sd->nruns = 0;
  if ((rc = tix_add(st, s, 0, n))) return rc;
  if (sd->evict_wm != DP_WATERMARK_NONE) rc = expire(st, s, sd->evict_wm, false);
  /* with a TTL every live row is listed: one that is not had expired */
  for (int64_t r = 0; !rc && sd->ttl.ttl > 0 && r < n; r++)
    if (r >= sd->ttl.cap || sd->ttl.slot[r].at < 0) rc = kill_row(st, sd, r, false);
  st->npairs = 0;
  return rc;
}

/* A restore applies the whole state, then each delta after it: the dead
** marks and the time index are rebuilt once, at the first use after. */
int dp_join_sides_ready(join_state *st) {
  for (int s = 0; s < 2; s++) {
    struct side *sd = &st->side[s];
    if (!sd->stale) continue;
    int rc = side_reindex(st, s);
    if (rc) return rc;
    sd->stale = false;
  }
  return DIPPER_OK;
}

static int64_t side_live(const struct side *sd) { return sd->store->nrows - sd->ndead; }
int64_t dp_join_rows(const join_state *st) {
  if (st->rocks) return st->rocks_rows[0] + st->rocks_rows[1];
  return side_live(&st->side[0]) + side_live(&st->side[1]);
}

/* ---- two streams: a side's checkpoint ---- */

/* The store as runs of live rows and of dead ones: the live rows whole, the
** dead ones as a count.  A restore puts all-NULL rows in the dead ones'
** places, so that every stored row keeps its position (the deltas after
** this state name rows by position), and they expire again at once (no
** time). */
int dp_join_side_save(dp_op *op, dp_buf *out, int s) {
  join_state *st = op->state;
  struct side *sd = &st->side[s];
  dp_put_uvar(out, (uint64_t)sd->nkept);
  for (int j = 0; j < sd->nkept; j++) dp_put_uvar(out, (uint64_t)sd->kept[j]);
  dp_put_svar(out, sd->evict_wm);
  int64_t n = sd->store->nrows, npairs = 0;
  for (int64_t r = 0; r < n;) {
    while (r < n && !sd->dead[r]) r++;
    while (r < n && sd->dead[r]) r++;
    npairs++;
  }
  /* the runs' lengths first (a restore bounds the dead rows by the live
  ** ones before it makes any), then each live run's rows and flags */
  dp_put_uvar(out, (uint64_t)npairs);
  for (int pass = 0; pass < 2; pass++)
    for (int64_t r = 0; r < n;) {
      int64_t a = r;
      while (r < n && !sd->dead[r]) r++;
      int64_t b = r;
      while (r < n && sd->dead[r]) r++;
      if (pass == 0) {
        dp_put_uvar(out, (uint64_t)(b - a));
        dp_put_uvar(out, (uint64_t)(r - b));
        continue;
      }
      int rc = dp_rows_save_range(out, sd->store, a, b - a);
      if (rc) return rc;
      dp_flags_save(out, sd->outer ? sd->hit + a : NULL, sd->outer ? b - a : 0);
    }
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* The lengths of dp_join_side_save's runs: *len malloc'd (live, dead, live ...),
** checked against what the writer can have written: maximal runs, dead
** rows only after an eviction, and no more of them than compaction leaves
** (fewer than COMPACT_MIN, or at most as many as the live ones). */
static int load_runs(dp_rd *in, const struct side *sd, int64_t **len, int64_t *npairs) {
  uint64_t n = dp_get_count(in, 2);
  *len = NULL;
  *npairs = 0;
  if (in->bad) return DIPPER_CORRUPT;
  *len = malloc((size_t)(n ? 2 * n : 1) * sizeof **len);
  if (!*len) return DIPPER_NOMEM;
  uint64_t live = 0, dead = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t l = dp_get_uvar(in), d = dp_get_uvar(in);
    if (in->bad || (i + 1 < n && d == 0) || (i > 0 && l == 0) || l > INT32_MAX ||
        d > INT32_MAX || (d > 0 && sd->evict_wm == DP_WATERMARK_NONE && sd->ttl.ttl <= 0))
      return DIPPER_CORRUPT;
    live += l;
    dead += d;
    if (live + dead > INT32_MAX) return DIPPER_CORRUPT;
    (*len)[2 * i] = (int64_t)l;
    (*len)[2 * i + 1] = (int64_t)d;
  }
  if (dead >= COMPACT_MIN && dead > live) return DIPPER_CORRUPT;
  *npairs = (int64_t)n;
  return DIPPER_OK;
}

/* The columns side s kept when its state was written: this query's? */
static int check_kept(dp_op *op, dp_rd *in, int s) {
  join_state *st = op->state;
  struct side *sd = &st->side[s];
  const char *what = s == 0 ? "its left rows" : "its right rows";
  uint64_t n = dp_get_count(in, 1);
  bool same = !in->bad && n == (uint64_t)sd->nkept;
  for (uint64_t j = 0; !in->bad && j < n; j++) {
    uint64_t c = dp_get_uvar(in);
    if (c >= (uint64_t)sd->ncols) in->bad = true;
    if (j < (uint64_t)sd->nkept && c != (uint64_t)sd->kept[j]) same = false;
  }
  if (in->bad) return dp_state_corrupt(op, DIPPER_CORRUPT, what);
  if (same) return DIPPER_OK;
  in->bad = true;
  return dp_error(op->ex->diags, DIPPER_CORRUPT, op->plan->span,
                  "the checkpointed state of the Join operator keeps %llu columns of its %s "
                  "input, and this query reads %d of them (the query above the join changed "
                  "what it reads); start the query from a fresh checkpoint folder",
                  (unsigned long long)n, s == 0 ? "left" : "right", sd->nkept);
}

int dp_join_side_load(dp_op *op, dp_rd *in, int s) {
  join_state *st = op->state;
  struct side *sd = &st->side[s];
  int rc = check_kept(op, in, s);
  if (rc) return rc;
  sd->evict_wm = dp_get_svar(in);
  int64_t *len = NULL, npairs = 0;
  rc = in->bad ? DIPPER_CORRUPT : load_runs(in, sd, &len, &npairs);
  for (int64_t i = 0; !rc && i < npairs; i++) {
    int64_t live = len[2 * i], dead = len[2 * i + 1];
    int64_t first = sd->store->nrows;
    rc = dp_rows_load(in, sd->store);
    if (!rc && sd->store->nrows - first != live) rc = DIPPER_CORRUPT;
    if (!rc && sd->outer) rc = dp_join_grow_hits(&sd->hit, &sd->hit_cap, sd->store->nrows + dead);
    if (!rc) rc = dp_flags_load(in, sd->outer ? sd->hit + first : NULL, sd->outer ? live : 0);
    for (int c = 0; !rc && c < sd->store->ncols; c++)
      rc = dp_vector_append_nulls(sd->store->cols[c], dead);
    if (!rc) {
      if (sd->outer && dead) memset(sd->hit + sd->store->nrows, 0, (size_t)dead);
      sd->store->nrows += dead;
    }
  }
  free(len);
  sd->stale = true;
  sd->ndead = 0; /* until side_ready marks them again */
  if (rc) return dp_state_corrupt(op, rc, s == 0 ? "its left rows" : "its right rows");
  return DIPPER_OK;
}

/* One store's delta: its log, then the rows appended since the base with
** their flags (when kept). */
int dp_join_store_save_delta(dp_buf *out, const dp_batch *rows, const uint8_t *hit, bool flags,
                            const dp_rowlog *log) {
  int64_t *at, nat;
  int rc = dp_rowlog_save(out, log, &at, &nat);
  free(at); /* a dirty row's flag is 1: its position says all */
  int64_t first = dp_rowlog_first_new(log);
  if (!rc) rc = dp_rows_save_from(out, rows, first);
  dp_flags_save(out, flags ? hit + first : NULL, flags ? rows->nrows - first : 0);
  return rc;
}

/* Apply one store's delta: flags set, rows dropped, rows appended; the index
** (when there is one) ends as it would after adding the rows in order. */
int dp_join_store_load_delta(dp_rd *in, dp_batch **rows, uint8_t **hit, int64_t *cap, bool flags,
                            dp_rowhash *index, const int *keys, int nkeys) {
  dp_rowlog_delta d;
  int64_t n = (*rows)->nrows, *keep = NULL, nkeep = 0;
  int rc = dp_rowlog_load(in, n, &d);
  if (!rc && d.ndirty > 0 && !flags) rc = DIPPER_CORRUPT;
  for (int64_t i = 0; !rc && i < d.ndirty; i++) (*hit)[d.dirty[i]] = 1;
  if (!rc && (d.all || d.ndrop > 0)) rc = dp_rowlog_keep(&d, n, &keep, &nkeep);
  else nkeep = n; /* nothing dropped: no pass over the store */
  if (!rc && nkeep < n) {
    rc = dp_rows_compact(rows, keep, nkeep);
    for (int64_t k = 0; !rc && flags && k < nkeep; k++) (*hit)[k] = (*hit)[keep[k]];
    if (!rc && index) dp_rowhash_free(index);
  }
  int64_t first = (*rows)->nrows;
  if (!rc) rc = dp_rows_load(in, *rows);
  if (!rc && flags) rc = dp_join_grow_hits(hit, cap, (*rows)->nrows);
  if (!rc) rc = dp_flags_load(in, flags ? *hit + first : NULL, flags ? (*rows)->nrows - first : 0);
  if (!rc && index) rc = dp_rowhash_add_rows(index, *rows, keys, nkeys, index->n);
  if (rc == DIPPER_CORRUPT) in->bad = true;
  free(keep);
  dp_rowlog_delta_free(&d);
  return rc;
}

int dp_join_side_save_delta(dp_op *op, dp_buf *out, int s) {
  join_state *st = op->state;
  struct side *sd = &st->side[s];
  dp_put_svar(out, sd->evict_wm);
  return dp_join_store_save_delta(out, sd->store, sd->hit, sd->outer, &sd->log);
}

int dp_join_side_load_delta(dp_op *op, dp_rd *in, int s) {
  join_state *st = op->state;
  struct side *sd = &st->side[s];
  int64_t wm = dp_get_svar(in);
  int rc = in->bad ? DIPPER_CORRUPT : DIPPER_OK;
  if (!rc && (wm < sd->evict_wm || (sd->evict_wm == DP_WATERMARK_END && wm != sd->evict_wm)))
    rc = DIPPER_CORRUPT; /* a watermark never moves back */
  if (!rc) {
    sd->evict_wm = wm;
    rc = dp_join_store_load_delta(in, &sd->store, &sd->hit, &sd->hit_cap, sd->outer, NULL, NULL, 0);
  }
  sd->stale = true; /* the indexes too: rebuilt once, after the last delta */
  sd->ndead = 0;
  if (rc) {
    in->bad = true;
    return dp_state_corrupt(op, rc, s == 0 ? "the change of its left rows"
                                           : "the change of its right rows");
  }
  return DIPPER_OK;
}

/* ---- the sides' state TTL in a checkpoint ----
** After both sides (whole or delta alike), when a side has a TTL: 'T', a
** mask (bit s: side s's list follows), then each list whole (state_ttl.h's
** form), in the positions the sides' bytes restore.  At the blob's end, so
** that a blob without it (written before the TTL was set) reads as before:
** its rows then count as inserted at the restart. */
void dp_join_ttl_save(const join_state *st, dp_buf *out) {
  uint8_t mask = (st->side[0].ttl.ttl > 0 ? 1 : 0) | (st->side[1].ttl.ttl > 0 ? 2 : 0);
  if (!mask) return;
  dp_put_u8(out, 'T');
  dp_put_u8(out, mask);
  for (int s = 0; s < 2; s++)
    if (mask & (1 << s)) dp_state_ttl_save(&st->side[s].ttl, out);
}

int dp_join_ttl_load(dp_op *op, dp_rd *in, int64_t now) {
  join_state *st = op->state;
  uint8_t mask = 0;
  if (dp_rd_left(in) > 0) {
    if (dp_get_u8(in) != 'T') in->bad = true;
    mask = dp_get_u8(in);
    if (in->bad || mask > 3) return dp_state_corrupt(op, DIPPER_CORRUPT, "its state TTL");
  }
  for (int s = 0; s < 2; s++) {
    struct side *sd = &st->side[s];
    int64_t n = sd->store->nrows;
    int rc = DIPPER_OK;
    if (!(mask & (1 << s))) {
      /* no list (written before the TTL was set): every row inserted now */
      dp_state_ttl_free(&sd->ttl);
      int64_t ttl = op->plan->props.state_ttl[s];
      if (ttl > 0) rc = dp_state_ttl_init(&sd->ttl, ttl);
      for (int64_t r = 0; !rc && ttl > 0 && r < n; r++) rc = dp_state_ttl_touch(&sd->ttl, r, now);
      if (rc) return rc;
      continue;
    }
    if (sd->ttl.ttl > 0) {
      rc = dp_state_ttl_load(&sd->ttl, in, n);
    } else {
      /* the TTL was dropped since: fine unless rows it had expired are
      ** still in the store (their places), which only the list tells */
      dp_state_ttl scratch;
      rc = dp_state_ttl_init(&scratch, 1);
      if (!rc) rc = dp_state_ttl_load(&scratch, in, n);
      bool holes = !rc && scratch.count < n;
      dp_state_ttl_free(&scratch);
      if (holes)
        return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, op->plan->span,
                        "the checkpointed state of the Join operator was written with a state "
                        "TTL on its %s side and still holds the places of rows it expired; run "
                        "the query with that TTL again, or start it from a fresh checkpoint "
                        "folder",
                        s == 0 ? "left" : "right");
    }
    if (rc) return dp_state_corrupt(op, rc, "its state TTL");
  }
  return DIPPER_OK;
}
