/*
** changelog.c — change kinds between operators, and the upsert-to-retract
** operator (changelog.h).
**
** dp_op_upsert_retract sits above an AGGREGATE whose consumer needs
** retractions (a GROUP BY over its result).  The aggregate emits, per
** micro-batch, the new row of each group it changed (an upsert by the group
** keys, its first ngroup columns); this operator keeps the row it last
** emitted per key and turns each into +I (a key it has not seen), or -U the
** kept row and +U the new one — nothing when the two are equal (MAX of a
** group whose new rows were all smaller), as Flink's group aggregation
** suppresses an unchanged result.  An aggregate over an insert-only input
** never deletes a group, so -D never comes from here.
**
** The kept rows are a log: a changed key appends its new row and points at
** it (pos[id]); end_batch compacts the log once dead rows outnumber the
** live ones (and at least 1,024 are dead), so a row is copied O(1) times.
** Checkpoints write the live rows in key order (whole state: one row per
** group, as small as the aggregate's own output); a restore re-inserts them.
**
** Under the aggregate's state TTL (table.exec.state.ttl) the aggregate drops
** a group not written for that long, and its next row comes out as from a
** new group; so this operator keeps when it last saw each key (the
** aggregate emits every group a batch writes, so that is the group's last
** write) and takes a key last seen at or before now − ttl as one it has
** not seen: +I, as Flink's aggregate emits for a group whose state expired.
** The times follow the rows in a checkpoint (version 2; a version 1 state
** counts every key as seen at the restart).
*/
#include <stdlib.h>
#include <string.h>

#include "core/vector_codec.h"
#include "exec/changelog.h"
#include "exec/hashtable.h"

#define STATE_VERSION 2 /* 1: without the last-seen times */

const char *dp_change_name(int kind) {
  switch (kind) {
  case DP_CHANGE_INSERT: return "+I";
  case DP_CHANGE_UPDATE_BEFORE: return "-U";
  case DP_CHANGE_UPDATE_AFTER: return "+U";
  case DP_CHANGE_DELETE: return "-D";
  default: return "?";
  }
}

int dp_change_take(dp_vector **dst, const dp_vector *src, const int64_t *sel, int64_t n) {
  if (!src) return DIPPER_OK;
  if (!*dst && !(*dst = dp_vector_new(dp_type_of(DP_T_TINYINT), n))) return DIPPER_NOMEM;
  dp_vector_clear(*dst);
  return dp_vector_take(*dst, src, sel, 0, n);
}

bool dp_change_emits(const dp_plan *p) {
  return p && (p->props.changes & (DP_CHANGES_UB | DP_CHANGES_D)) != 0;
}

/* ---- upsert to retract ---- */

typedef struct ur_state {
  int nkeys;
  dp_hashtable ht;   /* group keys -> id (nkeys > 0) */
  int64_t nids;      /* keys seen (1 at most when nkeys == 0) */
  dp_batch *log;     /* rows last emitted: row pos[id] for key id, others dead */
  int64_t *pos;
  int64_t pos_cap;
  uint64_t *hashes;
  int64_t hash_cap;
  dp_batch *out;
  int64_t ttl;       /* the aggregate's state TTL (µs), 0: none */
  int64_t *seen;     /* ttl > 0: per key, the batch time it was last seen */
  int64_t seen_cap;
  int64_t now;       /* this batch's time */
} ur_state;

static int grow_i64(int64_t **v, int64_t *cap, int64_t need) {
  if (need <= *cap) return DIPPER_OK;
  int64_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *g = realloc(*v, (size_t)n * sizeof **v);
  if (!g) return DIPPER_NOMEM;
  *v = g;
  *cap = n;
  return DIPPER_OK;
}

static void ur_close(dp_op *op) {
  ur_state *st = op->state;
  if (!st) return;
  if (st->nkeys > 0) dp_ht_free(&st->ht);
  dp_batch_free(st->log);
  dp_batch_free(st->out);
  free(st->pos);
  free(st->hashes);
  free(st->seen);
  free(st);
  op->state = NULL;
}

static int ur_open(dp_op *op) {
  const dp_plan *p = op->plan;
  ur_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  int nkeys = p->kind == DP_P_AGGREGATE ? p->u.aggregate.ngroup : 0;
  const dp_type *types[64];
  if (nkeys > 64)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "an aggregation whose result another aggregation reads takes at most 64 "
                    "group keys, this one has %d", nkeys);
  for (int i = 0; i < nkeys; i++) types[i] = p->schema.cols[i].type;
  st->log = dp_batch_new(&p->schema, 0);
  st->out = dp_batch_new(&p->schema, 0);
  if (!st->log || !st->out) return DIPPER_NOMEM;
  st->out->change = dp_vector_new(dp_type_of(DP_T_TINYINT), 0);
  if (!st->out->change) return DIPPER_NOMEM;
  if (nkeys > 0 && dp_ht_init(&st->ht, nkeys, types) != DIPPER_OK) return DIPPER_NOMEM;
  st->nkeys = nkeys;
  st->ttl = p->props.state_ttl[0] > 0 ? p->props.state_ttl[0] : 0;
  return DIPPER_OK;
}

static bool rows_equal(const dp_batch *a, int64_t i, const dp_batch *b, int64_t j) {
  for (int c = 0; c < a->ncols; c++)
    if (!dp_ht_row_equal(a->cols[c], i, b->cols[c], j)) return false;
  return true;
}

static int put_row(dp_batch *dst, const dp_batch *src, int64_t r, int kind) {
  for (int c = 0; c < dst->ncols; c++) {
    int rc = dp_vector_append_from(dst->cols[c], src->cols[c], r);
    if (rc) return rc;
  }
  dst->nrows++;
  return dst->change ? dp_vector_append_i64(dst->change, kind) : DIPPER_OK;
}

/* The key id of row r of `in` (its first nkeys columns), made when new. */
static int key_id(ur_state *st, const dp_batch *in, int64_t r, uint64_t hash, int64_t *id,
                  bool *fresh) {
  *fresh = false;
  if (st->nkeys == 0) {
    *fresh = st->nids == 0;
    *id = 0;
  } else {
    const dp_vector *const *keys = (const dp_vector *const *)in->cols;
    *id = dp_ht_find(&st->ht, keys, hash, r);
    if (*id < 0) {
      *fresh = true;
      int rc = dp_ht_add(&st->ht, keys, r, hash, id);
      if (rc) return rc;
    }
  }
  if (*fresh) {
    st->nids = *id + 1;
    int rc = grow_i64(&st->pos, &st->pos_cap, st->nids);
    if (!rc && st->ttl > 0) rc = grow_i64(&st->seen, &st->seen_cap, st->nids);
    if (rc) return rc;
  }
  if (st->ttl > 0) {
    /* a key the aggregate's TTL dropped since: its row is a new group's */
    if (!*fresh && st->seen[*id] <= st->now - st->ttl) *fresh = true;
    st->seen[*id] = st->now;
  }
  return DIPPER_OK;
}

static int ur_consume(ur_state *st, const dp_batch *in) {
  int rc = DIPPER_OK;
  if (in->nrows > st->hash_cap) {
    uint64_t *g = realloc(st->hashes, (size_t)in->nrows * sizeof *g);
    if (!g) return DIPPER_NOMEM;
    st->hashes = g;
    st->hash_cap = in->nrows;
  }
  if (st->nkeys > 0) dp_ht_hash((const dp_vector *const *)in->cols, st->nkeys, in->nrows, st->hashes);
  for (int64_t r = 0; r < in->nrows && !rc; r++) {
    int64_t id;
    bool fresh;
    if ((rc = key_id(st, in, r, st->nkeys ? st->hashes[r] : 0, &id, &fresh))) break;
    if (fresh) {
      rc = put_row(st->out, in, r, DP_CHANGE_INSERT);
    } else {
      if (rows_equal(st->log, st->pos[id], in, r)) continue;
      rc = put_row(st->out, st->log, st->pos[id], DP_CHANGE_UPDATE_BEFORE);
      if (!rc) rc = put_row(st->out, in, r, DP_CHANGE_UPDATE_AFTER);
    }
    if (rc) break;
    st->pos[id] = st->log->nrows;
    rc = put_row(st->log, in, r, DP_CHANGE_INSERT);
  }
  return rc;
}

static int ur_next(dp_op *op, dp_batch **out) {
  ur_state *st = op->state;
  dp_op *child = op->children[0];
  *out = NULL;
  dp_batch_clear(st->out);
  st->now = op->ex->batch_start_time;
  for (;;) {
    dp_batch *in = NULL;
    int rc = child->cls->next(child, &in);
    if (rc != DIPPER_OK) return rc;
    if (!in) break;
    op->metrics.rows_in += in->nrows;
    if ((rc = ur_consume(st, in))) return rc;
    if (st->out->nrows > 0) break;
  }
  op->metrics.state_rows = st->nids;
  if (st->out->nrows == 0) return DIPPER_OK;
  op->metrics.rows_out += st->out->nrows;
  *out = st->out;
  return DIPPER_OK;
}

/* The log holding the live rows only, in key order. */
static int compact(ur_state *st) {
  if (st->log->nrows == st->nids) {
    bool in_order = true;
    for (int64_t i = 0; i < st->nids && in_order; i++) in_order = st->pos[i] == i;
    if (in_order) return DIPPER_OK;
  }
  dp_batch *fresh = dp_batch_new(st->log->schema, st->nids);
  if (!fresh) return DIPPER_NOMEM;
  int rc = dp_batch_take(fresh, st->log, st->pos, 0, st->nids);
  if (rc) {
    dp_batch_free(fresh);
    return rc;
  }
  dp_batch_free(st->log);
  st->log = fresh;
  for (int64_t i = 0; i < st->nids; i++) st->pos[i] = i;
  return DIPPER_OK;
}

static int ur_end_batch(dp_op *op) {
  ur_state *st = op->state;
  int64_t dead = st->log->nrows - st->nids;
  return dead >= 1024 && dead > st->nids ? compact(st) : DIPPER_OK;
}

static int ur_save(dp_op *op, dp_buf *out) {
  ur_state *st = op->state;
  int rc = compact(st);
  if (rc) return rc;
  dp_put_u8(out, STATE_VERSION);
  if ((rc = dp_batch_encode(st->log, 0, st->log->nrows, out))) return rc;
  int64_t n = st->ttl > 0 ? st->nids : 0;
  dp_put_uvar(out, (uint64_t)n);
  for (int64_t i = 0; i < n; i++) dp_put_svar(out, st->seen[i]);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int ur_restore(dp_op *op, dp_rd *in) {
  ur_state *st = op->state;
  const char *what = "its state is damaged";
  int version = dp_get_u8(in);
  st->now = op->ex->batch_start_time; /* a version 1 state's keys: seen at the restart */
  if (version != STATE_VERSION && version != 1) {
    what = "its state is of another version";
  } else if (st->nids == 0 && dp_batch_decode(in, st->log) == DIPPER_OK) {
    int rc = DIPPER_OK;
    for (int64_t r = 0; r < st->log->nrows && !rc; r++) {
      uint64_t h = st->nkeys ? dp_ht_hash_row((const dp_vector *const *)st->log->cols, st->nkeys, r) : 0;
      int64_t id;
      bool fresh;
      if ((rc = key_id(st, st->log, r, h, &id, &fresh))) return rc;
      if (!fresh) break;
      st->pos[id] = r;
    }
    /* the times: kept when the TTL is still set (else read and forgotten) */
    int64_t n = version >= 2 ? (int64_t)dp_get_count(in, 1) : 0;
    if (n > 0 && n != st->nids) in->bad = true;
    for (int64_t i = 0; i < n && !in->bad; i++) {
      int64_t t = dp_get_svar(in);
      if (st->ttl > 0) st->seen[i] = t;
    }
    if (st->nids == st->log->nrows && !in->bad && dp_rd_done(in)) return DIPPER_OK;
  }
  return dp_error(op->ex->diags, DIPPER_CORRUPT, op->plan->span,
                  "cannot restore the changes of the aggregation from the checkpoint: %s; "
                  "start the query with a new checkpoint folder", what);
}

const dp_op_class dp_op_upsert_retract = {
    .name = "UpsertToRetract",
    .open = ur_open,
    .next = ur_next,
    .end_batch = ur_end_batch,
    .close = ur_close,
    .save_state = ur_save,
    .restore_state = ur_restore,
};

int dp_change_wrap_upserts(dp_exec *ex, dp_op *inner, dp_op **out) {
  *out = NULL;
  dp_op *op = dp_arena_calloc(ex->arena, 1, sizeof *op);
  dp_op **children = dp_arena_calloc(ex->arena, 1, sizeof *children);
  if (!op || !children) return DIPPER_NOMEM;
  children[0] = inner;
  op->plan = inner->plan;
  op->ex = ex;
  op->nchildren = 1;
  op->children = children;
  op->cls = &dp_op_upsert_retract;
  int rc = ur_open(op);
  if (rc != DIPPER_OK) {
    ur_close(op);
    return rc;
  }
  *out = op;
  return DIPPER_OK;
}
