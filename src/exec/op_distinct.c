/*
** op_distinct.c — SELECT DISTINCT and UNION without ALL (DP_P_DISTINCT).
**
** A row leaves the first time it is seen and never again (NULLs are equal to
** each other here, as in GROUP BY), so the operator streams: it needs no end
** of input, and on a stream its output is append-only.  State: one stored
** row per distinct row.  When a column is an event-time attribute, rows at or
** before the watermark are late (Spark's rule: time <= watermark; dropped,
** counted) and stored rows at or before it are forgotten, since no row to come can equal them; otherwise the state
** lasts as long as the query, unless a state TTL is set ('table.exec.state.ttl'
** or STATE_TTL, exec/state_ttl.h): then a row not seen for that long, in
** processing time, is forgotten before the next batch's input, and leaves
** again when it comes back (Flink's DISTINCT, a GROUP BY of every column).
** An expired row is flagged gone as the watermark's are (its id kept, off
** the TTL list: what makes it gone in a checkpoint), so that an expiry costs
** the rows that expire; the same row coming back takes its place again.
**
** Forgetting by the watermark costs what it forgets: the stored rows are
** indexed by time (due_heap.h), a batch pops those at or before its
** watermark and flags them gone, and the gone rows are compacted away once
** they are half the store (O(1) amortized each).  A gone row stays in the
** table until then, and a checkpoint holds it as a live row; what makes it
** gone is its time: at or before the late watermark (the one the previous
** batch forgot by), which a restored run knows too.  A row equal to it has
** that time, so it is dropped as late, unless the time is NULL (never late):
** then the forgotten rows up to the late watermark are compacted away first
** and the row leaves again, as it would have had it been dropped at once.
*/
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "exec/agg_rocks.h"
#include "exec/due_heap.h"
#include "exec/exec.h"
#include "exec/rows.h"
#include "exec/state_ttl.h"

typedef struct distinct_state {
  int time_col;      /* an event-time column of the rows, or -1 */
  dp_groups seen;
  dp_rowlog log;     /* the rows' changes since the last checkpoint (rows.h) */
  int64_t *sel;
  int64_t cap;
  dp_batch *out;
  /* 'state.backend' = 'rocksdb' (the section "over RocksDB" below): `seen`
  ** caches the micro-batch's rows only */
  dp_rocks *rocks;
  int64_t rcount;     /* stored rows */
  uint8_t *stored;    /* per cached row: RocksDB has it */
  int64_t stored_cap;
  int64_t *fresh, fresh_cap;
  dp_buf rkeys, rval;
  size_t *roffs;
  int64_t roffs_cap;
  dp_state_ttl ttl;   /* ttl.ttl > 0: the rows by last sight (state_ttl.h) */
  bool ttl_done;      /* this batch's expiry ran */
  /* time_col set, in memory: the rows by time, ids below due_known in it */
  dp_due_heap due;
  int64_t due_known;
  uint8_t *gone;      /* per row: forgotten, not yet compacted away */
  int64_t gone_cap, ngone;
  int64_t nadded;     /* rows stored in this batch (the last ids) */
} distinct_state;

static int64_t row_time(const distinct_state *st, int64_t id) {
  const dp_vector *t = st->seen.keys->cols[st->time_col];
  return dp_vector_is_null(t, id) ? INT64_MIN : dp_vector_get_i64(t, id);
}

/* Every row in the time index again, none gone (after a renumbering). */
static int rebuild_due(distinct_state *st) {
  int64_t n = dp_groups_count(&st->seen);
  st->due.n = 0;
  st->due_known = n;
  if (st->gone) memset(st->gone, 0, (size_t)st->gone_cap);
  st->ngone = 0;
  if (st->time_col < 0 || st->rocks) return DIPPER_OK;
  int rc = dp_due_reserve(&st->due, n);
  for (int64_t id = 0; !rc && id < n; id++) st->due.v[st->due.n++] = (dp_due){row_time(st, id), id};
  if (!rc) dp_due_heapify(&st->due);
  return rc;
}

/* The gone rows compacted away (the rows' log records the drops). */
static int compact_gone(distinct_state *st) {
  int64_t n = dp_groups_count(&st->seen);
  dp_gone_split s;
  int rc = dp_gone_split_ids(st->gone, st->gone_cap, n, st->ngone, st->ttl.ttl > 0, &s);
  if (!rc) rc = dp_groups_compact(&st->seen, s.keep, s.nkeep);
  if (!rc) rc = dp_rowlog_drop(&st->log, s.drop, s.ndrop);
  if (!rc && s.remap) rc = dp_state_ttl_renumber(&st->ttl, s.remap, n);
  dp_gone_split_free(&s);
  return rc ? rc : rebuild_due(st);
}

static int rocks_take(dp_op *op, const dp_batch *b, int64_t *nout);
static int rocks_end_batch(dp_op *op);
static int rocks_save(dp_op *op, dp_buf *out);
static int rocks_restore(dp_op *op, dp_rd *in);

/* Room in `gone` for n rows, the new ones not gone. */
static int grow_gone(distinct_state *st, int64_t n) {
  if (n <= st->gone_cap) return DIPPER_OK;
  int64_t old = st->gone_cap;
  if (dp_grow(&st->gone, &st->gone_cap, n, 1, 1024)) return DIPPER_NOMEM;
  memset(st->gone + old, 0, (size_t)(st->gone_cap - old));
  return DIPPER_OK;
}

static bool is_gone(const distinct_state *st, int64_t id) {
  return id < st->gone_cap && st->gone[id];
}

/* Rows not seen for the TTL are forgotten before the batch's first input:
** found at the cost of what expires, flagged gone, and compacted away with
** the watermark's once the gone rows are half the store (O(1) amortized
** each), not a pass over the store per batch that expires one. */
static int expire_idle(dp_op *op) {
  distinct_state *st = op->state;
  st->ttl_done = true;
  int64_t *ids = NULL, nids = 0, n = dp_groups_count(&st->seen);
  int rc = dp_state_ttl_expire(&st->ttl, op->ex->batch_start_time, &ids, &nids);
  if (!rc && nids > 0) rc = grow_gone(st, n);
  for (int64_t k = 0; !rc && k < nids; k++) {
    if (ids[k] >= n) rc = DIPPER_INTERNAL;
    else if (!st->gone[ids[k]]) st->ngone += st->gone[ids[k]] = 1;
  }
  free(ids);
  if (!rc && nids > 0 && 2 * st->ngone >= n) rc = compact_gone(st);
  op->metrics.state_rows = dp_groups_count(&st->seen) - st->ngone;
  return rc;
}

/* After a restore under a TTL: the rows off its list are gone (expired, or
** forgotten by the watermark). */
static int gone_off_list(distinct_state *st) {
  int64_t n = dp_groups_count(&st->seen);
  if (st->ttl.ttl <= 0 || st->ttl.count == n) return DIPPER_OK;
  int rc = grow_gone(st, n);
  for (int64_t id = 0; !rc && id < n; id++)
    if (!st->gone[id] && (id >= st->ttl.cap || st->ttl.slot[id].at < 0))
      st->ngone += st->gone[id] = 1;
  return rc;
}

static int forget(distinct_state *st, int64_t wm, bool now);

static int distinct_next(dp_op *op, dp_batch **out) {
  distinct_state *st = op->state;
  *out = NULL;
  if (st->ttl.ttl > 0 && !st->ttl_done) {
    int rc = expire_idle(op);
    if (rc) return rc;
  }
  for (;;) {
    dp_batch *b = NULL;
    dp_op *child = op->children[0];
    int rc = child->cls->next(child, &b);
    if (rc || !b) return rc;
    op->metrics.rows_in += b->nrows;
    if (b->nrows > st->cap) {
      int64_t *sel = realloc(st->sel, (size_t)b->nrows * sizeof *sel);
      if (!sel) return DIPPER_NOMEM;
      st->sel = sel;
      st->cap = b->nrows;
    }
    int64_t n = 0;
    const dp_vector *const *cols = (const dp_vector *const *)b->cols;
    int64_t wm = op->ex->late_watermark; /* the previous batch's (exec.h): lateness */
    if (st->rocks && ((rc = dp_rocks_begin(st->rocks)) || (rc = rocks_take(op, b, &n)))) return rc;
    for (int64_t r = 0; !st->rocks && r < b->nrows; r++) {
      if (st->time_col >= 0 && wm != DP_WATERMARK_NONE &&
          !dp_vector_is_null(b->cols[st->time_col], r) &&
          dp_vector_get_i64(b->cols[st->time_col], r) <= wm) {
        op->metrics.late_dropped++;
        continue;
      }
      int64_t id;
      bool fresh;
      if ((rc = dp_groups_find_or_add(&st->seen, cols, r, &id, &fresh))) return rc;
      if (!fresh && st->time_col >= 0 && wm != DP_WATERMARK_NONE && row_time(st, id) <= wm) {
        /* forgotten (a NULL time): it leaves again */
        if ((rc = forget(st, wm, true)) ||
            (rc = dp_groups_find_or_add(&st->seen, cols, r, &id, &fresh)))
          return rc;
      }
      bool back = !fresh && is_gone(st, id);
      if (back) {
        /* expired under the TTL (the watermark's gone rows are late): it
        ** leaves again, in its old place (not among the batch's new ids) */
        st->gone[id] = 0;
        st->ngone--;
      }
      if (st->ttl.ttl > 0 && (rc = dp_state_ttl_touch(&st->ttl, id, op->ex->batch_start_time)))
        return rc;
      if (fresh || back) st->sel[n++] = r;
      if (fresh) st->nadded++;
    }
    op->metrics.state_rows = st->rocks ? st->rcount : dp_groups_count(&st->seen) - st->ngone;
    if (n == 0) continue;
    op->metrics.rows_out += n;
    if (n == b->nrows) {
      *out = b;
      return DIPPER_OK;
    }
    dp_batch_clear(st->out);
    if ((rc = dp_batch_take(st->out, b, st->sel, 0, n))) return rc;
    *out = st->out;
    return DIPPER_OK;
  }
}

/* The rows at or before wm flagged gone (the time index's), and compacted
** away when they are half the rows or `now` (a row of a NULL time found a
** forgotten one: the rows this batch stored, NULL times too, stay). */
static int forget(distinct_state *st, int64_t wm, bool now) {
  int64_t n = dp_groups_count(&st->seen), first_new = now ? n - st->nadded : n;
  dp_due_heap back = {0};
  int rc = DIPPER_OK;
  for (int64_t id = st->due_known; id < n && !rc; id++) rc = dp_due_push(&st->due, row_time(st, id), id);
  st->due_known = n;
  if (!rc) rc = grow_gone(st, n);
  while (!rc && wm != DP_WATERMARK_NONE && st->due.n > 0 && dp_due_top(&st->due) <= wm) {
    dp_due d = dp_due_pop(&st->due);
    if (d.id >= n || st->gone[d.id]) continue;
    if (d.id >= first_new) {
      rc = dp_due_push(&back, d.t, d.id);
      continue;
    }
    st->gone[d.id] = 1;
    st->ngone++;
    if (st->ttl.ttl > 0) dp_state_ttl_remove(&st->ttl, d.id);
  }
  if (!rc && st->ngone > 0 && (now || 2 * st->ngone >= n)) rc = compact_gone(st);
  /* this batch's rows back, renumbered: they are the last ones */
  int64_t shift = dp_groups_count(&st->seen) - st->nadded - first_new;
  for (int64_t k = 0; !rc && k < back.n; k++)
    rc = dp_due_push(&st->due, back.v[k].t, back.v[k].id + shift);
  dp_due_free(&back);
  return rc;
}

/* Forget the rows at or before the watermark (time_col set). */
static int distinct_end_batch(dp_op *op) {
  distinct_state *st = op->state;
  st->ttl_done = false;
  if (st->rocks) return rocks_end_batch(op);
  if (st->time_col < 0) return DIPPER_OK;
  int rc = forget(st, op->ex->watermark, false);
  st->nadded = 0;
  op->metrics.state_rows = dp_groups_count(&st->seen) - st->ngone;
  return rc;
}

static int distinct_setup(dp_op *op) {
  distinct_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  const dp_plan *in = op->plan->inputs[0];
  st->time_col = -1;
  for (int c = 0; !in->props.bounded && in->props.time_attr && c < in->schema.ncols; c++)
    if (in->props.time_attr[c] >= 0 && st->time_col < 0) st->time_col = c;
  int rc = dp_groups_init(&st->seen, &in->schema);
  if (rc) return rc;
  st->out = dp_batch_new(&op->plan->schema, 0);
  if (!st->out) return DIPPER_NOMEM;
  int64_t ttl = op->plan->props.state_ttl[0];
  bool streaming = op->ex->query && op->ex->query->streaming;
  if (streaming && ttl > 0 && dp_exec_state_rocks(op->ex))
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, op->plan->span,
                    "'table.exec.state.ttl' (or STATE_TTL) is carried out for a DISTINCT kept in "
                    "memory only so far: set 'state.backend' = 'hashmap', or drop the TTL");
  if (streaming && ttl > 0 && (rc = dp_state_ttl_init(&st->ttl, ttl))) return rc;
  if (streaming && dp_exec_state_rocks(op->ex))
    return dp_rocks_open_op(op, "distinct", &st->rocks);
  return DIPPER_OK;
}

static void distinct_close(dp_op *op) {
  distinct_state *st = op->state;
  if (!st) return;
  dp_groups_free(&st->seen);
  dp_rowlog_free(&st->log);
  dp_due_free(&st->due);
  free(st->gone);
  dp_state_ttl_free(&st->ttl);
  dp_rocks_free(st->rocks);
  free(st->stored);
  free(st->fresh);
  free(st->roffs);
  dp_buf_free(&st->rkeys);
  dp_buf_free(&st->rval);
  dp_batch_free(st->out);
  free(st->sel);
  free(st);
  op->state = NULL;
}

/* An open that fails leaves nothing behind (exec.c closes only opened operators). */
static int distinct_open(dp_op *op) {
  int rc = distinct_setup(op);
  if (rc) distinct_close(op);
  return rc;
}

/* ---- checkpoints ----
** Blob, version 1:  version:u8  the rows seen (rows.h's group table).
** Delta (save_delta), the same version:  version:u8  the rows' log (rows.h:
** the rows the watermark dropped, by base position)  the rows added since
** (rows.h's group table form): O(rows added + rows dropped).
** Version 2: under a TTL, a row off the TTL list is gone (it expired, or
** the watermark forgot it) though the table holds it until a compaction:
** the list's delta (state_ttl.h) carries the expiries, so that they cost the
** delta what expired.  Version 1 (every stored row listed) still reads. */
#define DISTINCT_STATE_VERSION 2

/* The version byte: 1 or 2 (anything else refused by dp_state_check). */
static int check_version(dp_op *op, dp_rd *in) {
  dp_rd peek = *in;
  uint8_t v = dp_get_u8(&peek);
  return dp_state_check(op, in, !peek.bad && v == 1 ? 1 : DISTINCT_STATE_VERSION);
}

/* With a TTL, after the rows (state or delta alike): the rows' last
** sightings, by today's positions (state_ttl.h's section). */
static int restore_ttl(dp_op *op, dp_rd *in) {
  distinct_state *st = op->state;
  int rc = dp_state_ttl_load_section(&st->ttl, in, dp_groups_count(&st->seen),
                                     op->ex->batch_start_time);
  if (rc) return dp_state_corrupt(op, rc, "its state TTL");
  if ((rc = gone_off_list(st))) return rc;
  op->metrics.state_rows = dp_groups_count(&st->seen) - st->ngone;
  return DIPPER_OK;
}

static int distinct_save(dp_op *op, dp_buf *out) {
  distinct_state *st = op->state;
  if (st->rocks) return rocks_save(op, out);
  dp_state_begin(out, DISTINCT_STATE_VERSION);
  int rc = dp_groups_save(out, &st->seen);
  if (!rc) dp_rowlog_mark(&st->log, dp_groups_count(&st->seen));
  if (!rc) dp_state_ttl_save_section_base(&st->ttl, out);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int distinct_restore(dp_op *op, dp_rd *in) {
  distinct_state *st = op->state;
  if (st->rocks) return rocks_restore(op, in);
  int rc = check_version(op, in);
  if (rc) return rc;
  if ((rc = dp_groups_load(in, &st->seen))) return dp_state_corrupt(op, rc, "its rows");
  op->metrics.state_rows = dp_groups_count(&st->seen);
  dp_rowlog_mark(&st->log, dp_groups_count(&st->seen));
  if ((rc = rebuild_due(st))) return rc;
  return restore_ttl(op, in);
}

static int distinct_save_delta(dp_op *op, dp_buf *out) {
  distinct_state *st = op->state;
  if (st->rocks) return rocks_save(op, out);
  dp_state_begin(out, DISTINCT_STATE_VERSION);
  int64_t *at, nat;
  int rc = dp_rowlog_save(out, &st->log, &at, &nat);
  free(at); /* nothing here changes in place */
  if (!rc) rc = dp_groups_save_from(out, &st->seen, dp_rowlog_first_new(&st->log));
  if (!rc) dp_rowlog_mark(&st->log, dp_groups_count(&st->seen));
  if (!rc) rc = dp_state_ttl_save_section_delta(&st->ttl, out);
  return rc ? rc : out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int distinct_restore_delta(dp_op *op, dp_rd *in) {
  distinct_state *st = op->state;
  if (st->rocks) return rocks_restore(op, in);
  int rc = check_version(op, in);
  if (rc) return rc;
  int64_t n = dp_groups_count(&st->seen), *keep = NULL, nkeep = 0;
  dp_rowlog_delta d;
  if ((rc = dp_rowlog_load(in, n, &d))) return dp_state_corrupt(op, rc, "the rows it dropped");
  if (d.ndirty > 0) rc = DIPPER_CORRUPT;
  if (!rc) rc = dp_rowlog_keep(&d, n, &keep, &nkeep);
  if (!rc) rc = dp_groups_compact(&st->seen, keep, nkeep);
  free(keep);
  dp_rowlog_delta_free(&d);
  if (rc) return dp_state_corrupt(op, rc, "the rows it dropped");
  if ((rc = dp_groups_load_more(in, &st->seen))) return dp_state_corrupt(op, rc, "its new rows");
  op->metrics.state_rows = dp_groups_count(&st->seen);
  dp_rowlog_mark(&st->log, dp_groups_count(&st->seen));
  if ((rc = rebuild_due(st))) return rc;
  return restore_ttl(op, in);
}

/* ---- over RocksDB ('state.backend' = 'rocksdb') ----
** One entry per distinct row (state_rocks.h, space 0: the key is the whole
** row, the value empty) and, with an event-time column, a time index by it,
** which the watermark's expiry range-scans.  `seen` caches the micro-batch's
** rows only: a chunk's rows new to it are read in one multi-get, and those
** RocksDB lacks leave; they are written at the end of the batch (unless the
** watermark passed them already), and the cache is emptied.  Per batch: a
** read per distinct row it brings, a write per new one, plus what expires. */
#define DISTINCT_ROCKS_VERSION 2

/* The entry keys of cached rows ids[0..n) (NULL: 0..n). */
static int rocks_keys(distinct_state *st, const int64_t *ids, int64_t n) {
  return dp_rocks_entry_keys(&st->rkeys, &st->roffs, &st->roffs_cap,
                             (const dp_vector *const *)st->seen.ht.keys, st->seen.ht.nkeys, ids, 0, n);
}

/* dp_rocks_get_many: cached row fresh[i] is stored. */
static int rocks_found(void *u, int64_t i, const char *v, size_t vn) {
  distinct_state *st = u;
  if (vn != 0) return DIPPER_CORRUPT;
  (void)v;
  st->stored[st->fresh[i]] = 1;
  return DIPPER_OK;
}

/* The rows of b that leave: seen neither in this batch nor in RocksDB. */
static int rocks_take(dp_op *op, const dp_batch *b, int64_t *nout) {
  distinct_state *st = op->state;
  const dp_vector *const *cols = (const dp_vector *const *)b->cols;
  int64_t wm = op->ex->late_watermark, n = 0;
  int rc = DIPPER_OK;
  if (b->nrows > st->fresh_cap &&
      dp_grow(&st->fresh, &st->fresh_cap, b->nrows, sizeof *st->fresh, 1024))
    return DIPPER_NOMEM;
  for (int64_t r = 0; r < b->nrows; r++) {
    if (st->time_col >= 0 && wm != DP_WATERMARK_NONE &&
        !dp_vector_is_null(b->cols[st->time_col], r) &&
        dp_vector_get_i64(b->cols[st->time_col], r) <= wm) {
      op->metrics.late_dropped++;
      continue;
    }
    int64_t id;
    bool fresh;
    if ((rc = dp_groups_find_or_add(&st->seen, cols, r, &id, &fresh))) return rc;
    if (!fresh) continue;
    if (id >= st->stored_cap) {
      int64_t old = st->stored_cap;
      if (dp_grow(&st->stored, &st->stored_cap, id + 1, 1, 1024)) return DIPPER_NOMEM;
      memset(st->stored + old, 0, (size_t)(st->stored_cap - old));
    }
    st->stored[id] = 0;
    st->fresh[n] = id;
    st->sel[n++] = r;
  }
  if ((rc = rocks_keys(st, st->fresh, n))) return rc;
  rc = dp_rocks_get_many(st->rocks, &st->rkeys, st->roffs, n, rocks_found, st);
  if (rc == DIPPER_CORRUPT) return dp_state_corrupt(op, rc, "a row's rocksdb entry");
  int64_t m = 0;
  for (int64_t i = 0; !rc && i < n; i++)
    if (!st->stored[st->fresh[i]]) st->sel[m++] = st->sel[i];
  *nout = m;
  return rc;
}

/* The expired rows' entries deleted, the batch's new rows written, the
** cache emptied. */
static int rocks_end_batch(dp_op *op) {
  distinct_state *st = op->state;
  int64_t wm = op->ex->watermark, n = dp_groups_count(&st->seen), m = 0;
  bool expiry = st->time_col >= 0 && wm != DP_WATERMARK_NONE;
  int rc = dp_rocks_begin(st->rocks);
  if (!rc && expiry)
    rc = dp_rocks_index_due(st->rocks, 0, wm, &st->rval, &st->roffs, &st->roffs_cap, &m);
  for (int64_t i = 0; !rc && i < m; i++)
    dp_rocks_delete(st->rocks, st->rval.data + st->roffs[i], st->roffs[i + 1] - st->roffs[i]);
  st->rcount -= m;
  if (!rc) rc = rocks_keys(st, NULL, n);
  const dp_vector *t = st->time_col >= 0 ? st->seen.keys->cols[st->time_col] : NULL;
  for (int64_t id = 0; !rc && id < n; id++) {
    if (st->stored[id]) continue;
    bool null_t = t && dp_vector_is_null(t, id);
    int64_t at = t && !null_t ? dp_vector_get_i64(t, id) : INT64_MIN;
    if (expiry && (null_t || at <= wm)) continue; /* forgotten at once, as in memory */
    const char *k = st->rkeys.data + st->roffs[id];
    size_t kn = st->roffs[id + 1] - st->roffs[id];
    dp_rocks_put(st->rocks, k, kn, "", 0);
    if (t) rc = dp_rocks_index_put(st->rocks, 0, at, k, kn);
    st->rcount++;
  }
  if (!rc) rc = dp_rocks_commit(st->rocks);
  if (!rc) rc = dp_groups_compact(&st->seen, NULL, 0);
  op->metrics.state_rows = st->rcount;
  return rc;
}

/*   version:u8 (2)  checkpoint:svar  rows:svar
** the checkpoint the batch id of the RocksDB checkpoint under
** <query folder>/rocksdb/distinct-<n>/. */
static int rocks_save(dp_op *op, dp_buf *out) {
  distinct_state *st = op->state;
  int64_t ck;
  int rc = dp_rocks_save(st->rocks, op->ex->batch_id, &ck);
  if (rc) return rc;
  dp_state_begin(out, DISTINCT_ROCKS_VERSION);
  dp_put_svar(out, ck);
  dp_put_svar(out, st->rcount);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int rocks_restore(dp_op *op, dp_rd *in) {
  distinct_state *st = op->state;
  int rc = dp_state_check(op, in, DISTINCT_ROCKS_VERSION);
  if (rc) return rc;
  int64_t ck = dp_get_svar(in), count = dp_get_svar(in);
  if (in->bad || ck < 0 || count < 0)
    return dp_state_corrupt(op, DIPPER_CORRUPT, "its rocksdb checkpoint");
  if ((rc = dp_rocks_restore(st->rocks, ck))) return dp_state_corrupt(op, rc, "its rocksdb checkpoint");
  st->rcount = count;
  op->metrics.state_rows = count;
  return DIPPER_OK;
}

const dp_op_class dp_op_distinct = {"Distinct",     distinct_open,  distinct_next,
                                    distinct_end_batch, distinct_close, distinct_save,
                                    distinct_restore, distinct_save_delta,
                                    distinct_restore_delta};
