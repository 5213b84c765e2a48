/*
** op_dedup.c — deduplication (DP_P_DEDUPLICATE): the ROW_NUMBER() OVER
** (PARTITION BY keys ORDER BY ts [DESC]) = 1 pattern, one row per key.
**
** Keep first (ORDER BY ts ASC) keeps the row with the smallest ts, keep last
** (DESC) the largest; ties go to the row that came first (keep first) or
** last (keep last), like arrival order without an ORDER BY.
**
**   bounded input   the best row per key so far; emitted once, at the end;
**   stream, first   the first row of a key leaves at once and the key is
**                   remembered (append mode; Spark's dropDuplicates).  When
**                   ts is an event-time attribute, rows at or before the
**                   watermark are late (Spark's rule: ts <= watermark;
**                   dropped, counted) and keys whose row is at or before the
**                   watermark are forgotten;
**   stream, last    the best row per key; at the end of each micro-batch the
**                   keys whose row changed leave with their new row (update
**                   mode).
** With a state TTL ('table.exec.state.ttl' or STATE_TTL, exec/state_ttl.h)
** on a stream, a key not written for that long in processing time is
** forgotten before the next batch's input, as in Flink: keep first writes a
** key once, at its first row (so a duplicate after the TTL leaves again),
** keep last at each row that becomes the key's best.  An expired key is
** flagged gone (its id kept, off the TTL list: what makes it gone in a
** checkpoint) and compacted away with the watermark's once the gone keys
** are half the keys, so that an expiry costs the keys that expire; a row of
** it that comes later takes its place again, as a new key.
**
** Per batch the cost follows the batch: keep last emits and clears the keys
** it changed (a list of them), and keep first forgets by the watermark
** through an index of the keys by time (due_heap.h): those at or before it
** are flagged gone and compacted away once they are half the keys.  A gone
** key stays in the table (and in a checkpoint, as a live key) until then;
** what makes it gone is its time, at or before the late watermark (the one
** the previous batch forgot by, which a restored run knows too), so a row
** that finds it compacts the forgotten keys away first and leaves as new.
*/
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/vector_codec.h"
#include "exec/agg_rocks.h"
#include "exec/due_heap.h"
#include "exec/eval.h"
#include "exec/exec.h"
#include "exec/rows.h"
#include "exec/state_ttl.h"

typedef enum dedup_mode { DEDUP_BOUNDED, DEDUP_FIRST, DEDUP_LAST } dedup_mode;

typedef struct dedup_state {
  dedup_mode mode;
  bool event_time;     /* the order column is an event-time attribute */
  dp_schema key_schema;
  dp_groups keys;
  int64_t *best;       /* per key: its row in `store` */
  int64_t *ts;         /* per key: the order value of that row (event_time) */
  uint8_t *changed;    /* per key: changed in this micro-batch (DEDUP_LAST) */
  int64_t *chlist;     /* in memory: those keys, so that a batch's emit and reset
                          cost what it changed, not a pass over every key */
  int64_t nch, chcap;
  int64_t cap;
  dp_batch *store;     /* rows that were best at some point (compact_store) */
  dp_rowlog log;       /* the keys' changes since the last checkpoint (rows.h) */
  int64_t *sel;        /* scratch: rows of a batch, or of the output */
  int64_t sel_cap;
  int64_t cursor, nout;
  bool drained, emitted;
  dp_batch *out;
  /* 'state.backend' = 'rocksdb' (the section "over RocksDB" below): the
  ** keys and rows above cache the micro-batch's keys only */
  dp_rocks *rocks;
  int64_t rcount;      /* stored keys */
  uint8_t *have;       /* per cached key: HAVE_* */
  int64_t have_cap;
  int64_t *fresh, fresh_cap; /* scratch: cached keys new in a chunk */
  dp_buf rkeys, rval;
  size_t *roffs;
  int64_t roffs_cap;
  dp_state_ttl ttl;    /* ttl.ttl > 0: the keys by last write (state_ttl.h) */
  bool ttl_done;       /* this batch's expiry ran */
  /* keep first on an event-time column, in memory: the keys by time (ids
  ** below due_known in it), and those forgotten, not compacted away yet */
  dp_due_heap due;
  int64_t due_known;
  uint8_t *gone;
  int64_t gone_cap, ngone;
} dedup_state;

static bool indexed(const dedup_state *st) {
  return st->mode == DEDUP_FIRST && st->event_time && !st->rocks;
}

/* Every key in the time index again, none gone (after a renumbering). */
static int rebuild_due(dedup_state *st) {
  int64_t n = dp_groups_count(&st->keys);
  st->due.n = 0;
  st->due_known = n;
  if (st->gone) memset(st->gone, 0, (size_t)st->gone_cap);
  st->ngone = 0;
  if (!indexed(st)) return DIPPER_OK;
  int rc = dp_due_reserve(&st->due, n);
  for (int64_t id = 0; !rc && id < n; id++) st->due.v[st->due.n++] = (dp_due){st->ts[id], id};
  if (!rc) dp_due_heapify(&st->due);
  return rc;
}

/* The gone keys compacted away (the keys' log records the drops; the TTL
** list follows the renumbering). */
static int compact_gone(dedup_state *st) {
  int64_t n = dp_groups_count(&st->keys);
  dp_gone_split s;
  int rc = dp_gone_split_ids(st->gone, st->gone_cap, n, st->ngone, st->ttl.ttl > 0, &s);
  if (!rc) rc = dp_groups_compact(&st->keys, s.keep, s.nkeep);
  for (int64_t i = 0; !rc && i < s.nkeep; i++) {
    st->ts[i] = st->ts[s.keep[i]];
    st->best[i] = st->best[s.keep[i]];
  }
  if (!rc) rc = dp_rowlog_drop(&st->log, s.drop, s.ndrop);
  if (!rc && s.remap) rc = dp_state_ttl_renumber(&st->ttl, s.remap, n);
  dp_gone_split_free(&s);
  return rc ? rc : rebuild_due(st);
}

/* Room in `gone` for n keys, the new ones not gone. */
static int grow_gone(dedup_state *st, int64_t n) {
  if (n <= st->gone_cap) return DIPPER_OK;
  int64_t old = st->gone_cap;
  if (dp_grow(&st->gone, &st->gone_cap, n, 1, 1024)) return DIPPER_NOMEM;
  memset(st->gone + old, 0, (size_t)(st->gone_cap - old));
  return DIPPER_OK;
}

static bool is_gone(const dedup_state *st, int64_t id) {
  return id < st->gone_cap && st->gone[id];
}

/* The keys at or before wm flagged gone (the time index's), and compacted
** away when they are half the keys. */
static int forget(dedup_state *st, int64_t wm) {
  int64_t n = dp_groups_count(&st->keys);
  int rc = DIPPER_OK;
  for (int64_t id = st->due_known; id < n && !rc; id++) rc = dp_due_push(&st->due, st->ts[id], id);
  st->due_known = n;
  if (!rc) rc = grow_gone(st, n);
  while (!rc && wm != DP_WATERMARK_NONE && st->due.n > 0 && dp_due_top(&st->due) <= wm) {
    dp_due d = dp_due_pop(&st->due);
    /* an entry of a key that expired and came back with another time: stale */
    if (d.id >= n || st->gone[d.id] || st->ts[d.id] != d.t) continue;
    st->gone[d.id] = 1;
    st->ngone++;
    if (st->ttl.ttl > 0) dp_state_ttl_remove(&st->ttl, d.id);
  }
  if (!rc && st->ngone > 0 && 2 * st->ngone >= n) rc = compact_gone(st);
  return rc;
}

static int grow_keys(dedup_state *st, int64_t need) {
  if (need <= st->cap) return DIPPER_OK;
  int64_t cap = dp_grow_cap(st->cap, need, 1024, INT64_MAX);
  int64_t *best = realloc(st->best, (size_t)cap * sizeof *best);
  if (!best) return DIPPER_NOMEM;
  st->best = best;
  int64_t *ts = realloc(st->ts, (size_t)cap * sizeof *ts);
  if (!ts) return DIPPER_NOMEM;
  st->ts = ts;
  uint8_t *ch = realloc(st->changed, (size_t)cap);
  if (!ch) return DIPPER_NOMEM;
  memset(ch + st->cap, 0, (size_t)(cap - st->cap));
  st->changed = ch;
  st->cap = cap;
  return DIPPER_OK;
}

static int grow_sel(dedup_state *st, int64_t need) {
  if (need <= st->sel_cap) return DIPPER_OK;
  int64_t *sel = realloc(st->sel, (size_t)need * sizeof *sel);
  if (!sel) return DIPPER_NOMEM;
  st->sel = sel;
  st->sel_cap = need;
  return DIPPER_OK;
}

/* Keep last, bounded (in memory): `store` gains a row each time a key's best
** changes, so once the rows that are no key's best any more are half of it
** (and at least 1,024), it is made again from the best rows, in key order
** (best[id] = id, as a restore leaves it).  Each row is copied O(1) times over
** its life, and the store stays within twice the keys, not the input. */
static int compact_store(dedup_state *st) {
  int64_t n = dp_groups_count(&st->keys);
  if (st->store->nrows < 1024 || st->store->nrows < 2 * n) return DIPPER_OK;
  dp_batch *kept = dp_batch_new(st->store->schema, n);
  if (!kept) return DIPPER_NOMEM;
  int rc = dp_batch_take(kept, st->store, st->best, 0, n);
  if (rc) {
    dp_batch_free(kept);
    return rc;
  }
  dp_batch_free(st->store);
  st->store = kept;
  for (int64_t id = 0; id < n; id++) st->best[id] = id;
  return DIPPER_OK;
}

/* Does row r of b replace the stored best row of its key? */
static bool better(const dp_op *op, const dedup_state *st, const dp_batch *b, int64_t r,
                   int64_t id) {
  int oc = op->plan->u.dedup.order_col;
  bool last = op->plan->u.dedup.keep_last;
  if (oc < 0) return last;
  int c = dp_vector_row_compare(b->cols[oc], r, st->store->cols[oc], st->best[id]);
  return last ? c >= 0 : c < 0;
}

static int rocks_take_rows(dp_op *op, const dp_batch *b);

static int cmp_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int take_rows(dp_op *op, const dp_batch *b) {
  dedup_state *st = op->state;
  if (st->rocks) return rocks_take_rows(op, b);
  const dp_plan *p = op->plan;
  op->metrics.rows_in += b->nrows;
  int oc = p->u.dedup.order_col;
  int64_t wm = op->ex->late_watermark; /* the previous batch's (exec.h): lateness */
  const dp_vector *kc[64];
  for (int k = 0; k < p->u.dedup.nkeys && k < 64; k++) kc[k] = b->cols[p->u.dedup.keys[k]];
  int rc = grow_sel(st, b->nrows);
  if (rc) return rc;
  int64_t nfirst = 0;
  for (int64_t r = 0; r < b->nrows; r++) {
    int64_t t = 0;
    if (st->event_time) {
      bool null_ts = dp_vector_is_null(b->cols[oc], r);
      t = null_ts ? INT64_MIN : dp_vector_get_i64(b->cols[oc], r);
      if (wm != DP_WATERMARK_NONE && (null_ts || t <= wm)) {
        op->metrics.late_dropped++;
        continue;
      }
    }
    int64_t id;
    bool fresh;
    if ((rc = dp_groups_find_or_add(&st->keys, kc, r, &id, &fresh))) return rc;
    if ((rc = grow_keys(st, id + 1))) return rc;
    int64_t now = op->ex->batch_start_time;
    /* Gone (expired under the TTL, or forgotten by the watermark: flagged,
    ** or not yet after a restore, its time at or before the late one): a
    ** new key again, in its old place, its old entry in the time index
    ** stale by its time (forget) */
    bool back = !fresh && (is_gone(st, id) || (st->mode == DEDUP_FIRST && indexed(st) &&
                                               wm != DP_WATERMARK_NONE && st->ts[id] <= wm));
    if (back && is_gone(st, id)) {
      st->gone[id] = 0;
      st->ngone--;
    }
    if (st->mode == DEDUP_FIRST) {
      if (!fresh && !back) continue;
      if (st->ttl.ttl > 0 && (rc = dp_state_ttl_touch(&st->ttl, id, now))) return rc;
      if (back && (rc = dp_rowlog_touch(&st->log, id))) return rc;
      st->ts[id] = t;
      if (back && indexed(st) && id < st->due_known && (rc = dp_due_push(&st->due, t, id)))
        return rc;
      st->sel[nfirst++] = r;
      continue;
    }
    if (!fresh && !back && !better(op, st, b, r, id)) continue;
    if (st->ttl.ttl > 0 && (rc = dp_state_ttl_touch(&st->ttl, id, now))) return rc;
    if ((rc = dp_batch_take(st->store, b, NULL, r, 1))) return rc;
    if (!fresh && (rc = dp_rowlog_touch(&st->log, id))) return rc;
    st->best[id] = st->store->nrows - 1;
    st->ts[id] = t;
    if (!st->changed[id]) {
      if (st->nch == st->chcap && dp_grow(&st->chlist, &st->chcap, st->nch + 1, sizeof *st->chlist, 1024))
        return DIPPER_NOMEM;
      st->chlist[st->nch++] = id;
      st->changed[id] = 1;
    }
  }
  if (st->mode == DEDUP_FIRST && nfirst > 0) {
    if ((rc = dp_batch_take(st->out, b, st->sel, 0, nfirst))) return rc;
  }
  if (st->mode != DEDUP_FIRST && !st->rocks) return compact_store(st);
  return DIPPER_OK;
}

static int rocks_store_best(dp_op *op);
static int rocks_end_batch(dp_op *op);

/* Keys not written for the TTL are forgotten before the batch's first input:
** found at the cost of what expires, flagged gone, and compacted away with
** the watermark's once the gone keys are half the keys (O(1) amortized
** each), not a pass over the keys per batch that expires one. */
static int expire_idle(dp_op *op) {
  dedup_state *st = op->state;
  st->ttl_done = true;
  int64_t *ids = NULL, nids = 0, n = dp_groups_count(&st->keys);
  int rc = dp_state_ttl_expire(&st->ttl, op->ex->batch_start_time, &ids, &nids);
  if (!rc && nids > 0) rc = grow_gone(st, n);
  for (int64_t k = 0; !rc && k < nids; k++) {
    if (ids[k] >= n) rc = DIPPER_INTERNAL;
    else if (!st->gone[ids[k]]) st->ngone += st->gone[ids[k]] = 1;
  }
  free(ids);
  if (!rc && nids > 0 && 2 * st->ngone >= n) rc = compact_gone(st);
  op->metrics.state_rows = dp_groups_count(&st->keys) - st->ngone;
  return rc;
}

/* After a restore under a TTL: the keys off its list are gone (expired, or
** forgotten by the watermark). */
static int gone_off_list(dedup_state *st) {
  int64_t n = dp_groups_count(&st->keys);
  if (st->ttl.ttl <= 0 || st->ttl.count == n) return DIPPER_OK;
  int rc = grow_gone(st, n);
  for (int64_t id = 0; !rc && id < n; id++)
    if (!st->gone[id] && (id >= st->ttl.cap || st->ttl.slot[id].at < 0))
      st->ngone += st->gone[id] = 1;
  return rc;
}

static int dedup_next(dp_op *op, dp_batch **out) {
  dedup_state *st = op->state;
  *out = NULL;
  int rc;
  if (st->ttl.ttl > 0 && !st->ttl_done && (rc = expire_idle(op))) return rc;
  if (st->rocks && (rc = dp_rocks_begin(st->rocks))) return rc;
  if (st->mode == DEDUP_FIRST) {
    /* Stream the input: each batch gives the rows whose key is new. */
    for (;;) {
      dp_batch *b = NULL;
      dp_op *child = op->children[0];
      if ((rc = child->cls->next(child, &b)) || !b) return rc;
      dp_batch_clear(st->out);
      if ((rc = take_rows(op, b))) return rc;
      op->metrics.state_rows = dp_groups_count(&st->keys) - st->ngone;
      if (st->out->nrows > 0) {
        op->metrics.rows_out += st->out->nrows;
        *out = st->out;
        return DIPPER_OK;
      }
    }
  }
  if (!st->drained) {
    if ((rc = dp_op_drain(op->children[0], take_rows, op))) return rc;
    st->drained = true;
    op->metrics.state_rows = dp_groups_count(&st->keys) - st->ngone;
    st->cursor = st->nout = 0;
    if (st->mode == DEDUP_LAST && !st->rocks) {
      /* the changed keys, in key order (the order of a pass over them all) */
      if ((rc = grow_sel(st, st->nch))) return rc;
      if (st->nch > 1) qsort(st->chlist, (size_t)st->nch, sizeof *st->chlist, cmp_id);
      for (int64_t k = 0; k < st->nch; k++) st->sel[st->nout++] = st->best[st->chlist[k]];
    } else if (st->mode == DEDUP_LAST || (op->ex->final && !st->emitted)) {
      int64_t n = dp_groups_count(&st->keys);
      if ((rc = grow_sel(st, n))) return rc;
      for (int64_t id = 0; id < n; id++)
        if (st->mode == DEDUP_BOUNDED || st->changed[id]) st->sel[st->nout++] = st->best[id];
      if (st->mode == DEDUP_BOUNDED) st->emitted = true;
    }
    if (st->rocks && (rc = rocks_store_best(op))) return rc;
  }
  if (st->cursor >= st->nout) return DIPPER_OK;
  int64_t n = st->nout - st->cursor;
  if (n > DP_ROWS_CHUNK) n = DP_ROWS_CHUNK;
  dp_batch_clear(st->out);
  if ((rc = dp_batch_take(st->out, st->store, st->sel, st->cursor, n))) return rc;
  st->cursor += n;
  op->metrics.rows_out += n;
  *out = st->out;
  return DIPPER_OK;
}

static int dedup_end_batch(dp_op *op) {
  dedup_state *st = op->state;
  st->ttl_done = false;
  if (st->rocks) return rocks_end_batch(op);
  st->drained = false;
  st->cursor = st->nout = 0;
  for (int64_t k = 0; k < st->nch; k++) st->changed[st->chlist[k]] = 0;
  st->nch = 0;
  /* keep first on event time: forget the keys whose row is at or before the
  ** watermark (a later row of such a key would be late anyway) */
  int rc = indexed(st) ? forget(st, op->ex->final ? DP_WATERMARK_END : op->ex->watermark)
                       : DIPPER_OK;
  op->metrics.state_rows = dp_groups_count(&st->keys) - st->ngone;
  return rc;
}

static void dedup_close(dp_op *op);

static int dedup_setup(dp_op *op) {
  const dp_plan *p = op->plan;
  const dp_plan *in = p->inputs[0];
  dedup_state *st = op->state;
  if (p->u.dedup.nkeys > 64)
    return dp_error(op->ex->diags, DIPPER_LIMIT, p->span,
                    "a deduplication takes at most 64 PARTITION BY columns");
  int oc = p->u.dedup.order_col;
  if (in->props.bounded || p->props.bounded)
    st->mode = DEDUP_BOUNDED;
  else
    st->mode = p->u.dedup.keep_last ? DEDUP_LAST : DEDUP_FIRST;
  st->event_time = st->mode == DEDUP_FIRST && oc >= 0 && in->props.time_attr &&
                   in->props.time_attr[oc] >= 0;
  st->key_schema.ncols = p->u.dedup.nkeys;
  st->key_schema.cols = dp_arena_calloc(op->ex->arena, (size_t)(p->u.dedup.nkeys + 1), sizeof(dp_field));
  if (!st->key_schema.cols) return DIPPER_NOMEM;
  for (int k = 0; k < p->u.dedup.nkeys; k++) st->key_schema.cols[k] = in->schema.cols[p->u.dedup.keys[k]];
  int rc = dp_groups_init(&st->keys, &st->key_schema);
  if (rc) return rc;
  st->store = dp_batch_new(&in->schema, 0);
  st->out = dp_batch_new(&p->schema, DP_ROWS_CHUNK);
  if (!st->store || !st->out) return DIPPER_NOMEM;
  bool stream = st->mode != DEDUP_BOUNDED && op->ex->query && op->ex->query->streaming;
  int64_t ttl = stream ? p->props.state_ttl[0] : 0;
  if (ttl > 0 && dp_exec_state_rocks(op->ex))
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "'table.exec.state.ttl' (or STATE_TTL) is carried out for a deduplication "
                    "kept in memory only so far: set 'state.backend' = 'hashmap', or drop the TTL");
  if (ttl > 0 && (rc = dp_state_ttl_init(&st->ttl, ttl))) return rc;
  if (stream && dp_exec_state_rocks(op->ex)) return dp_rocks_open_op(op, "dedup", &st->rocks);
  return DIPPER_OK;
}

static int dedup_open(dp_op *op) {
  dedup_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  int rc = dedup_setup(op);
  if (rc) dedup_close(op);
  return rc;
}

static void dedup_close(dp_op *op) {
  dedup_state *st = op->state;
  if (!st) return;
  dp_groups_free(&st->keys);
  dp_rowlog_free(&st->log);
  dp_state_ttl_free(&st->ttl);
  dp_rocks_free(st->rocks);
  free(st->have);
  free(st->fresh);
  free(st->roffs);
  dp_buf_free(&st->rkeys);
  dp_buf_free(&st->rval);
  dp_batch_free(st->store);
  dp_batch_free(st->out);
  free(st->best);
  free(st->ts);
  free(st->changed);
  free(st->chlist);
  dp_due_free(&st->due);
  free(st->gone);
  free(st->sel);
  free(st);
  op->state = NULL;
}

/* ---- checkpoints ----
** Blob, version 1:
**   version:u8  mode:u8  emitted:u8  keys (rows.h's group table)
**   ts:svar per key  [bounded, keep last: the best row of each key, in key
**   order (rows.h's row store)]
** Only the best rows are written, not the whole store (which also holds
** rows that were best once): a restore gives best[id] = id.
** Delta (save_delta), the same version:  version:u8  mode:u8  emitted:u8
**   the keys' log (rows.h: the keys expiry dropped, by base position; the
**   keys whose best row was replaced, or, keep first, that came back after
**   they were gone)  ts:svar per such key  [not keep first: their new rows]
**   the keys added since (rows.h's group table form)  ts:svar per added
**   key  [not keep first: their rows]
** A batch that adds k keys, replaces r best rows and expires d keys costs
** O(k + r + d).  Under a TTL, a key off the TTL list is gone (it expired,
** or the watermark forgot it) though the keys hold it until a compaction:
** the list's delta (state_ttl.h) carries the expiries, so that they cost
** the delta what expired, not the keys.
** Version 1 (before the gone keys: every key was listed, and a keep-first
** delta named no changed key) still reads. */
#define DEDUP_STATE_VERSION 2

/* The version byte: 1 or 2 (anything else refused by dp_state_check). */
static int check_version(dp_op *op, dp_rd *in) {
  dp_rd peek = *in;
  uint8_t v = dp_get_u8(&peek);
  return dp_state_check(op, in, !peek.bad && v == 1 ? 1 : DEDUP_STATE_VERSION);
}

/* The stored rows sel[0..n), in rows.h's store form. */
static int save_best(dp_buf *out, const dedup_state *st, const int64_t *sel, int64_t n) {
  dp_batch *best = dp_batch_new(st->store->schema, n);
  int rc = best ? dp_batch_take(best, st->store, sel, 0, n) : DIPPER_NOMEM;
  if (!rc) rc = dp_rows_save(out, best);
  dp_batch_free(best);
  return rc;
}

/* Read n rows and append them to the store: *first is where they begin. */
static int load_best(dp_rd *in, dedup_state *st, int64_t n, int64_t *first) {
  *first = st->store->nrows;
  int rc = dp_rows_load(in, st->store);
  if (!rc && st->store->nrows - *first != n) rc = DIPPER_CORRUPT;
  return rc;
}

static int rocks_save(dp_op *op, dp_buf *out);
static int rocks_restore(dp_op *op, dp_rd *in);

static int dedup_save(dp_op *op, dp_buf *out) {
  dedup_state *st = op->state;
  if (st->rocks) return rocks_save(op, out);
  int64_t n = dp_groups_count(&st->keys);
  dp_state_begin(out, DEDUP_STATE_VERSION);
  dp_put_u8(out, (uint8_t)st->mode);
  dp_put_u8(out, st->emitted);
  int rc = dp_groups_save(out, &st->keys);
  for (int64_t id = 0; id < n; id++) dp_put_svar(out, st->ts[id]);
  if (!rc && st->mode != DEDUP_FIRST) rc = save_best(out, st, st->best, n);
  if (!rc) dp_rowlog_mark(&st->log, n);
  if (!rc) dp_state_ttl_save_section_base(&st->ttl, out);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* With a TTL, after the keys (state or delta alike): their last writes, by
** today's positions (state_ttl.h's section). */
static int restore_ttl(dp_op *op, dp_rd *in) {
  dedup_state *st = op->state;
  int rc = dp_state_ttl_load_section(&st->ttl, in, dp_groups_count(&st->keys),
                                     op->ex->batch_start_time);
  if (rc) return dp_state_corrupt(op, rc, "its state TTL");
  if ((rc = gone_off_list(st))) return rc;
  op->metrics.state_rows = dp_groups_count(&st->keys) - st->ngone;
  return DIPPER_OK;
}

static int dedup_restore(dp_op *op, dp_rd *in) {
  dedup_state *st = op->state;
  if (st->rocks) return rocks_restore(op, in);
  int rc = check_version(op, in);
  if (rc) return rc;
  uint8_t mode = dp_get_u8(in), emitted = dp_get_u8(in);
  if (in->bad || mode != st->mode || emitted > 1)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted = emitted;
  if ((rc = dp_groups_load(in, &st->keys))) return dp_state_corrupt(op, rc, "its keys");
  int64_t n = dp_groups_count(&st->keys);
  if ((rc = grow_keys(st, n))) return dp_state_corrupt(op, rc, "its keys");
  for (int64_t id = 0; id < n; id++) st->ts[id] = dp_get_svar(in);
  if (in->bad) return dp_state_corrupt(op, DIPPER_CORRUPT, "the times of its keys");
  if (st->mode != DEDUP_FIRST) {
    if ((rc = dp_rows_load(in, st->store))) return dp_state_corrupt(op, rc, "its rows");
    if (st->store->nrows != n) return dp_state_corrupt(op, DIPPER_CORRUPT, "its rows");
    for (int64_t id = 0; id < n; id++) st->best[id] = id;
  }
  op->metrics.state_rows = n;
  dp_rowlog_mark(&st->log, n);
  if ((rc = rebuild_due(st))) return rc;
  return restore_ttl(op, in);
}

static int dedup_save_delta(dp_op *op, dp_buf *out) {
  dedup_state *st = op->state;
  if (st->rocks) return rocks_save(op, out);
  int64_t n = dp_groups_count(&st->keys), *at = NULL, nat = 0;
  dp_state_begin(out, DEDUP_STATE_VERSION);
  dp_put_u8(out, (uint8_t)st->mode);
  dp_put_u8(out, st->emitted);
  int rc = dp_rowlog_save(out, &st->log, &at, &nat);
  for (int64_t i = 0; !rc && i < nat; i++) dp_put_svar(out, st->ts[at[i]]);
  if (!rc && st->mode != DEDUP_FIRST) {
    for (int64_t i = 0; i < nat; i++) at[i] = st->best[at[i]];
    rc = save_best(out, st, at, nat);
  }
  free(at);
  int64_t first = dp_rowlog_first_new(&st->log);
  if (!rc) rc = dp_groups_save_from(out, &st->keys, first);
  for (int64_t id = first; id < n; id++) dp_put_svar(out, st->ts[id]);
  if (!rc && st->mode != DEDUP_FIRST) rc = save_best(out, st, st->best + first, n - first);
  if (!rc) dp_rowlog_mark(&st->log, n);
  if (!rc) rc = dp_state_ttl_save_section_delta(&st->ttl, out);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* The keys' changes: replaced rows, expired keys, added keys. */
static int apply_delta(dedup_state *st, dp_rd *in, const dp_rowlog_delta *d, const char **what) {
  int64_t n = dp_groups_count(&st->keys), *keep = NULL, nkeep = 0, first = 0;
  bool rows = st->mode != DEDUP_FIRST;
  *what = "its replaced rows";
  int64_t *ts = d->ndirty ? malloc((size_t)d->ndirty * sizeof *ts) : NULL;
  if (d->ndirty && !ts) return DIPPER_NOMEM;
  for (int64_t i = 0; i < d->ndirty; i++) ts[i] = dp_get_svar(in);
  int rc = in->bad ? DIPPER_CORRUPT : DIPPER_OK;
  if (!rc && rows) rc = load_best(in, st, d->ndirty, &first);
  for (int64_t i = 0; !rc && i < d->ndirty; i++) {
    st->ts[d->dirty[i]] = ts[i];
    st->best[d->dirty[i]] = first + i;
  }
  free(ts);
  if (rc) return rc;
  *what = "its expired keys";
  if ((rc = dp_rowlog_keep(d, n, &keep, &nkeep))) return rc;
  if (nkeep < n) rc = dp_groups_compact(&st->keys, keep, nkeep);
  for (int64_t i = 0; !rc && i < nkeep; i++) {
    st->ts[i] = st->ts[keep[i]];
    st->best[i] = st->best[keep[i]];
  }
  free(keep);
  if (rc) return rc;
  *what = "its new keys";
  int64_t base = dp_groups_count(&st->keys);
  if ((rc = dp_groups_load_more(in, &st->keys))) return rc;
  n = dp_groups_count(&st->keys);
  if ((rc = grow_keys(st, n))) return rc;
  for (int64_t id = base; id < n; id++) st->ts[id] = dp_get_svar(in);
  if (in->bad) return DIPPER_CORRUPT;
  if (rows && !(rc = load_best(in, st, n - base, &first)))
    for (int64_t id = base; id < n; id++) st->best[id] = first + (id - base);
  return rc;
}

static int dedup_restore_delta(dp_op *op, dp_rd *in) {
  dedup_state *st = op->state;
  if (st->rocks) return rocks_restore(op, in); /* each names a whole checkpoint */
  int rc = check_version(op, in);
  if (rc) return rc;
  uint8_t mode = dp_get_u8(in), emitted = dp_get_u8(in);
  if (in->bad || mode != st->mode || emitted > 1)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its mode");
  st->emitted = emitted;
  dp_rowlog_delta d;
  if ((rc = dp_rowlog_load(in, dp_groups_count(&st->keys), &d)))
    return dp_state_corrupt(op, rc, "the change of its keys");
  const char *what = "";
  rc = apply_delta(st, in, &d, &what);
  dp_rowlog_delta_free(&d);
  if (rc == DIPPER_CORRUPT) in->bad = true;
  if (rc) return dp_state_corrupt(op, rc, what);
  op->metrics.state_rows = dp_groups_count(&st->keys);
  dp_rowlog_mark(&st->log, dp_groups_count(&st->keys));
  if ((rc = rebuild_due(st))) return rc;
  return restore_ttl(op, in);
}

/* ---- over RocksDB ('state.backend' = 'rocksdb') ----
** One entry per key (state_rocks.h, space 0): keep first, the time of the
** key's first row (svar); keep last, its best row (vector_codec's batch
** form).  Keep first on an event-time column adds a time index by that time,
** which the watermark's expiry range-scans (a key forgotten when its row is
** at or before the watermark, as in memory).  `keys`, `best` and `store`
** cache the micro-batch's keys only: the keys a chunk brings that the cache
** lacks are read in one multi-get (a stored key's row is its best: keep
** last compares with it, keep first passes the key's rows by); the batch's
** new keys (keep first) and changed rows (keep last) are written at its
** end, and the cache emptied.  Per batch: a read and at most a write per
** key it touches, plus the keys that expire. */
#define DEDUP_ROCKS_VERSION 2
enum { HAVE_BEST = 1, HAVE_STORED = 2 };

static int rocks_grow(dedup_state *st, int64_t n) {
  if (n > st->have_cap) {
    int64_t old = st->have_cap;
    if (dp_grow(&st->have, &st->have_cap, n, 1, 1024)) return DIPPER_NOMEM;
    memset(st->have + old, 0, (size_t)(st->have_cap - old));
  }
  return grow_keys(st, n);
}

/* The entry keys of cached keys ids[0..n) (NULL: 0..n). */
static int rocks_keys(dedup_state *st, const int64_t *ids, int64_t n) {
  return dp_rocks_entry_keys(&st->rkeys, &st->roffs, &st->roffs_cap,
                             (const dp_vector *const *)st->keys.ht.keys, st->keys.ht.nkeys, ids, 0, n);
}

/* dp_rocks_get_many: the stored entry of cached key fresh[i]. */
static int rocks_load_key(void *u, int64_t i, const char *v, size_t vn) {
  dedup_state *st = u;
  int64_t id = st->fresh[i];
  dp_rd rd;
  dp_rd_init(&rd, v, vn);
  if (st->mode == DEDUP_FIRST) {
    st->ts[id] = dp_get_svar(&rd);
  } else {
    int64_t at = st->store->nrows;
    int rc = dp_batch_decode(&rd, st->store);
    if (rc) return rc == DIPPER_NOMEM ? rc : DIPPER_CORRUPT;
    if (st->store->nrows != at + 1) return DIPPER_CORRUPT;
    st->best[id] = at;
  }
  if (!dp_rd_done(&rd)) return DIPPER_CORRUPT;
  st->have[id] = HAVE_BEST | HAVE_STORED;
  return DIPPER_OK;
}

/* take_rows over RocksDB: the rows' keys (the new ones read from RocksDB),
** then the rules of take_rows. */
static int rocks_take_rows(dp_op *op, const dp_batch *b) {
  dedup_state *st = op->state;
  const dp_plan *p = op->plan;
  op->metrics.rows_in += b->nrows;
  int oc = p->u.dedup.order_col;
  int64_t wm = op->ex->late_watermark;
  const dp_vector *kc[64];
  for (int k = 0; k < p->u.dedup.nkeys && k < 64; k++) kc[k] = b->cols[p->u.dedup.keys[k]];
  int rc = grow_sel(st, b->nrows);
  if (!rc && b->nrows > st->fresh_cap)
    rc = dp_grow(&st->fresh, &st->fresh_cap, b->nrows, sizeof *st->fresh, 1024) ? DIPPER_NOMEM
                                                                               : DIPPER_OK;
  int64_t nfresh = 0;
  for (int64_t r = 0; !rc && r < b->nrows; r++) {
    st->sel[r] = -1;
    if (st->event_time) {
      bool null_ts = dp_vector_is_null(b->cols[oc], r);
      if (wm != DP_WATERMARK_NONE && (null_ts || dp_vector_get_i64(b->cols[oc], r) <= wm)) {
        op->metrics.late_dropped++;
        continue;
      }
    }
    bool fresh;
    if ((rc = dp_groups_find_or_add(&st->keys, kc, r, &st->sel[r], &fresh))) break;
    if ((rc = rocks_grow(st, st->sel[r] + 1))) break;
    if (fresh) st->fresh[nfresh++] = st->sel[r];
  }
  if (!rc) rc = rocks_keys(st, st->fresh, nfresh);
  if (!rc) rc = dp_rocks_get_many(st->rocks, &st->rkeys, st->roffs, nfresh, rocks_load_key, st);
  if (rc == DIPPER_CORRUPT) return dp_state_corrupt(op, rc, "a key's rocksdb entry");
  int64_t nfirst = 0;
  for (int64_t r = 0; !rc && r < b->nrows; r++) {
    int64_t id = st->sel[r];
    if (id < 0) continue;
    int64_t t = st->event_time && !dp_vector_is_null(b->cols[oc], r)
                    ? dp_vector_get_i64(b->cols[oc], r)
                    : st->event_time ? INT64_MIN : 0;
    if (st->mode == DEDUP_FIRST) {
      if (st->have[id] & HAVE_BEST) continue;
      st->have[id] |= HAVE_BEST;
      st->ts[id] = t;
      st->changed[id] = 1;
      st->sel[nfirst++] = r; /* nfirst <= r: sel[r] was read */
      continue;
    }
    if ((st->have[id] & HAVE_BEST) && !better(op, st, b, r, id)) continue;
    if ((rc = dp_batch_take(st->store, b, NULL, r, 1))) break;
    st->best[id] = st->store->nrows - 1;
    st->ts[id] = t;
    st->changed[id] = 1;
    st->have[id] |= HAVE_BEST;
  }
  if (!rc && st->mode == DEDUP_FIRST && nfirst > 0) rc = dp_batch_take(st->out, b, st->sel, 0, nfirst);
  return rc;
}

/* Keep last: the changed keys' rows written (after the drain). */
static int rocks_store_best(dp_op *op) {
  dedup_state *st = op->state;
  if (st->mode != DEDUP_LAST) return DIPPER_OK;
  int64_t n = dp_groups_count(&st->keys);
  int rc = rocks_keys(st, NULL, n);
  for (int64_t id = 0; !rc && id < n; id++) {
    if (!st->changed[id]) continue;
    st->rval.len = 0;
    if ((rc = dp_batch_encode(st->store, st->best[id], 1, &st->rval))) break;
    if (st->rval.oom) rc = DIPPER_NOMEM;
    dp_rocks_put(st->rocks, st->rkeys.data + st->roffs[id], st->roffs[id + 1] - st->roffs[id],
                 st->rval.data, st->rval.len);
    if (!(st->have[id] & HAVE_STORED)) st->rcount++;
    st->have[id] |= HAVE_STORED;
  }
  return rc;
}

/* Keep first: the keys that expire (index scan), the new keys written
** unless they expire too; commit; the cache emptied. */
static int rocks_end_batch(dp_op *op) {
  dedup_state *st = op->state;
  int64_t n = dp_groups_count(&st->keys), m = 0;
  int64_t wm = op->ex->final ? DP_WATERMARK_END : op->ex->watermark;
  bool expiry = st->mode == DEDUP_FIRST && st->event_time && wm != DP_WATERMARK_NONE;
  int rc = dp_rocks_begin(st->rocks);
  if (!rc && expiry)
    rc = dp_rocks_index_due(st->rocks, 0, wm, &st->rval, &st->roffs, &st->roffs_cap, &m);
  for (int64_t i = 0; !rc && i < m; i++)
    dp_rocks_delete(st->rocks, st->rval.data + st->roffs[i], st->roffs[i + 1] - st->roffs[i]);
  st->rcount -= m;
  if (!rc && st->mode == DEDUP_FIRST) rc = rocks_keys(st, NULL, n);
  for (int64_t id = 0; !rc && st->mode == DEDUP_FIRST && id < n; id++) {
    if (!st->changed[id] || (expiry && st->ts[id] <= wm)) continue;
    const char *k = st->rkeys.data + st->roffs[id];
    size_t kn = st->roffs[id + 1] - st->roffs[id];
    st->rval.len = 0;
    dp_put_svar(&st->rval, st->ts[id]);
    if (st->rval.oom) rc = DIPPER_NOMEM;
    dp_rocks_put(st->rocks, k, kn, st->rval.data, st->rval.len);
    if (!rc && st->event_time) rc = dp_rocks_index_put(st->rocks, 0, st->ts[id], k, kn);
    st->rcount++;
  }
  if (!rc) rc = dp_rocks_commit(st->rocks);
  if (n) {
    memset(st->changed, 0, (size_t)n);
    memset(st->have, 0, (size_t)n);
  }
  if (!rc) rc = dp_groups_compact(&st->keys, NULL, 0);
  dp_batch_clear(st->store);
  st->drained = false;
  st->cursor = st->nout = 0;
  op->metrics.state_rows = st->rcount;
  return rc;
}

/*   version:u8 (2)  mode:u8  checkpoint:svar  keys:svar
** the checkpoint the batch id of the RocksDB checkpoint under
** <query folder>/rocksdb/dedup-<n>/ (each whole, its SST files hard-linked
** with the one before's). */
static int rocks_save(dp_op *op, dp_buf *out) {
  dedup_state *st = op->state;
  int64_t ck;
  int rc = dp_rocks_save(st->rocks, op->ex->batch_id, &ck);
  if (rc) return rc;
  dp_state_begin(out, DEDUP_ROCKS_VERSION);
  dp_put_u8(out, (uint8_t)st->mode);
  dp_put_svar(out, ck);
  dp_put_svar(out, st->rcount);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int rocks_restore(dp_op *op, dp_rd *in) {
  dedup_state *st = op->state;
  int rc = dp_state_check(op, in, DEDUP_ROCKS_VERSION);
  if (rc) return rc;
  uint8_t mode = dp_get_u8(in);
  int64_t ck = dp_get_svar(in), count = dp_get_svar(in);
  if (in->bad || mode != st->mode || ck < 0 || count < 0)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its rocksdb checkpoint");
  if ((rc = dp_rocks_restore(st->rocks, ck))) return dp_state_corrupt(op, rc, "its rocksdb checkpoint");
  st->rcount = count;
  op->metrics.state_rows = count;
  return DIPPER_OK;
}

const dp_op_class dp_op_dedup = {"Deduplicate",    dedup_open,       dedup_next,
                                 dedup_end_batch,  dedup_close,      dedup_save,
                                 dedup_restore,    dedup_save_delta, dedup_restore_delta};
