/*
** ops_state_test.c — the checkpointed state of the stateful operators other
** than the aggregation (save_state / restore_state of op_dedup, op_distinct,
** op_join in every way it runs, op_topn, op_over, op_sort, op_limit,
** op_setop).
**
** Each case is a query over memory tables and a script of micro-batches
** (one push per table per batch, then the final batch).  Run A goes straight
** through.  Run B, for every k, runs k batches, saves the state of every
** operator that has some, closes the whole tree and its handle, opens a new
** handle and tree for the same SQL (whose tables get only the pushes from
** batch k on, as restored sources would give), restores the states — and
** the watermarks, which the driver keeps — and runs the rest.  A's output
** from batch k on must be B's, byte for byte and in the same order: the
** restored indexes (hash chains, group ids, orderings) behave as the old
** ones.  Then every truncation of every blob must fail with DIPPER_CORRUPT
** and a diagnostic, and damaged bytes must fail that way or restore
** something, never crash (the test runs under ASan and UBSan).
**
** The micro-batch loop here is driver.c's, cut down: scans planned one push
** at a time, the sink replaced by reading the root, the watermark computed
** the way driver.c's global_watermark does it.
*/
#include "core/buf.h"
#include "rows_harness.h"
#include "test.h"

#define MAX_TABLES 4
#define MAX_BATCHES 8
#define MAX_BLOBS 8

typedef struct script {
  const char *sql;                               /* DDL, then the SELECT */
  const char *tables[MAX_TABLES];                /* NULL-terminated */
  const char *data[MAX_BATCHES][MAX_TABLES];     /* per batch, per table: JSON lines or NULL */
  int nbatches;                                  /* data batches; a final batch follows */
} script;

/* One run: a harness (rows_harness.h) plus the driver's watermarks. */
typedef struct run {
  harness *h;
  const script *sc;
  int64_t batch_wm, next_wm; /* driver.c's batch_watermark / next_watermark */
  dp_buf out;                /* rows, each batch opened by a "#<batch>" line */
  size_t mark[MAX_BATCHES + 2]; /* out.len where batch b began */
} run;

static bool run_open(run *r, const script *sc) {
  memset(r, 0, sizeof *r);
  r->sc = sc;
  r->h = calloc(1, sizeof *r->h);
  r->batch_wm = r->next_wm = DP_WATERMARK_NONE;
  if (!r->h) return false;
  int rc = harness_open(r->h, sc->sql);
  CHECK_EQ(rc, DIPPER_OK);
  CHECK(r->h->ex.query && r->h->ex.query->streaming);
  return rc == DIPPER_OK;
}

static void run_close(run *r) {
  if (r->h) harness_close(r->h);
  free(r->h);
  dp_buf_free(&r->out);
  memset(r, 0, sizeof *r);
}

/* Push batch b's rows (an empty push where the script has none, so that
** every table's pushes stay aligned with the batches). */
static void push_batch(run *r, int b) {
  for (int t = 0; t < MAX_TABLES && r->sc->tables[t]; t++) {
    const char *text = r->sc->data[b][t] ? r->sc->data[b][t] : "";
    CHECK_EQ(dipper_memory_push_json(r->h->db, r->sc->tables[t], text, strlen(text)), DIPPER_OK);
  }
}

static void plan_input(dp_op *op, void *user) {
  harness *h = user;
  bool data = false, ended = false;
  if (h->rc) return;
  if (op->cls == &dp_op_scan) h->rc = dp_scan_plan(op, 0, false, &data, &ended);
  else if (op->cls == &dp_op_values) h->rc = dp_values_plan(op, &data, &ended);
}

static void commit_input(dp_op *op, void *user) {
  harness *h = user;
  if (op->cls == &dp_op_scan && !h->rc) h->rc = dp_scan_commit(op);
}

static void mark_wm(const dp_plan *p, bool *seen, int n) {
  if (p->kind == DP_P_WATERMARK && p->u.watermark.id >= 0 && p->u.watermark.id < n)
    seen[p->u.watermark.id] = true;
  for (int i = 0; i < p->ninputs; i++) mark_wm(p->inputs[i], seen, n);
}

/* driver.c's global_watermark: min over the root's watermarks of (max event
** time - delay), NONE until each has seen an event, never moving back. */
static int64_t global_wm(const dp_exec *ex, int64_t prev) {
  const dp_query_plan *q = ex->query;
  bool seen[64] = {false};
  int n = q->nwatermarks < 64 ? q->nwatermarks : 64, nwm = 0;
  mark_wm(ex->root, seen, n);
  int64_t wm = INT64_MAX;
  for (int id = 0; id < n; id++) {
    if (!seen[id]) continue;
    nwm++;
    int64_t t = ex->max_event_time[id];
    if (t == DP_WATERMARK_NONE) return prev;
    const dp_watermark_info *info = &q->watermarks[id];
    int64_t delay = info->node ? info->node->u.watermark.delay : info->delay;
    if (delay < 0) delay = 0;
    int64_t w = t < INT64_MIN + 1 + delay ? INT64_MIN + 1 : t - delay;
    if (w < wm) wm = w;
  }
  if (nwm == 0) return prev;
  return wm > prev ? wm : prev;
}

static void print_row(run *r, const dp_batch *b, int64_t row) {
  for (int c = 0; c < b->ncols; c++) {
    dp_value v;
    const char *text = "?";
    if (dp_vector_get_value(r->h->ex.batch_arena, b->cols[c], row, &v))
      text = dp_value_format(r->h->ex.batch_arena, &v);
    dp_buf_printf(&r->out, "%s%s", c ? ", " : "", text);
  }
  dp_buf_putc(&r->out, '\n');
}

/* Micro-batch b (b == nbatches: the final one). */
static int run_batch(run *r, int b) {
  harness *h = r->h;
  dp_exec *ex = &h->ex;
  bool final = b == r->sc->nbatches;
  if (!final) push_batch(r, b);
  ex->batch_id = b;
  ex->late_watermark = r->batch_wm;
  ex->watermark = final ? DP_WATERMARK_END : r->next_wm;
  ex->final = final;
  r->mark[b] = r->out.len;
  dp_buf_printf(&r->out, "#%d\n", b);
  dp_op_walk(h->root, plan_input, h);
  for (;;) {
    dp_batch *out = NULL;
    if (h->rc || (h->rc = h->root->cls->next(h->root, &out)) || !out) break;
    for (int64_t row = 0; row < out->nrows; row++) print_row(r, out, row);
  }
  dp_op_walk(h->root, commit_input, h);
  r->batch_wm = ex->watermark;
  if (!final) r->next_wm = global_wm(ex, r->next_wm);
  dp_op_walk(h->root, harness_end_batch, h);
  dp_arena_reset(ex->batch_arena);
  if (h->rc) harness_print_diags(h);
  CHECK_EQ(h->rc, DIPPER_OK);
  return h->rc;
}

/* ---- saving and restoring every operator's state ---- */

typedef struct blobs {
  int n;
  dp_buf b[MAX_BLOBS];
  bool delta[MAX_BLOBS];     /* b[i] is a delta (save_delta), not a whole state */
  bool deltas;               /* save_delta where the operator has one */
  int64_t batch_wm, next_wm, max_event_time[8];
  int nwm;
  bool failed;
} blobs;

/* Plan kinds whose operators keep state across batches (driver.c's list,
** the aggregation aside: its state is another file's). */
static bool stateful_kind(dp_plan_kind k) {
  switch (k) {
  case DP_P_JOIN: case DP_P_SETOP: case DP_P_SORT: case DP_P_LIMIT: case DP_P_DISTINCT:
  case DP_P_DEDUPLICATE: case DP_P_TOPN: case DP_P_OVER:
    return true;
  default:
    return false;
  }
}

static void save_op(dp_op *op, void *user) {
  blobs *bl = user;
  if (stateful_kind(op->plan->kind)) CHECK(op->cls->save_state && op->cls->restore_state);
  if (!op->cls->save_state) return;
  if (bl->n == MAX_BLOBS) {
    bl->failed = true;
    return;
  }
  bool delta = bl->deltas && op->cls->save_delta;
  bl->delta[bl->n] = delta;
  dp_buf *b = &bl->b[bl->n++];
  int rc = delta ? op->cls->save_delta(op, b) : op->cls->save_state(op, b);
  CHECK_EQ(rc, DIPPER_OK);
  CHECK(b->len > 0);
  if (rc) bl->failed = true;
}

static void save_all_as(run *r, blobs *bl, bool deltas) {
  memset(bl, 0, sizeof *bl);
  bl->deltas = deltas;
  dp_op_walk(r->h->root, save_op, bl);
  bl->batch_wm = r->batch_wm;
  bl->next_wm = r->next_wm;
  bl->nwm = r->h->ex.query->nwatermarks < 8 ? r->h->ex.query->nwatermarks : 8;
  for (int i = 0; i < bl->nwm; i++) bl->max_event_time[i] = r->h->ex.max_event_time[i];
}

static void save_all(run *r, blobs *bl) { save_all_as(r, bl, false); }

static void free_blobs(blobs *bl) {
  for (int i = 0; i < bl->n; i++) dp_buf_free(&bl->b[i]);
}

typedef struct restorer {
  const blobs *bl;
  int next;
  int rc;
} restorer;

static void restore_op(dp_op *op, void *user) {
  restorer *rs = user;
  if (!op->cls->restore_state || rs->rc) return;
  if (rs->next >= rs->bl->n) {
    rs->rc = DIPPER_CORRUPT;
    return;
  }
  const dp_buf *b = &rs->bl->b[rs->next++];
  dp_rd in;
  dp_rd_init(&in, b->data, b->len);
  bool delta = rs->bl->delta[rs->next - 1];
  rs->rc = delta ? op->cls->restore_delta(op, &in) : op->cls->restore_state(op, &in);
  if (!rs->rc && !dp_rd_done(&in)) rs->rc = DIPPER_CORRUPT; /* bytes left over */
}

static int restore_all(run *r, const blobs *bl) {
  restorer rs = {bl, 0, DIPPER_OK};
  dp_op_walk(r->h->root, restore_op, &rs);
  if (!rs.rc && rs.next != bl->n) rs.rc = DIPPER_CORRUPT;
  r->batch_wm = bl->batch_wm;
  r->next_wm = bl->next_wm;
  for (int i = 0; i < bl->nwm; i++) r->h->ex.max_event_time[i] = bl->max_event_time[i];
  if (rs.rc) harness_print_diags(r->h);
  return rs.rc;
}

/* ---- the checks ---- */

/* B for one k: its output from batch k on, compared with A's. */
static void check_resume_at(const script *sc, const run *a, int k) {
  run b1, b2;
  blobs bl;
  memset(&bl, 0, sizeof bl);
  bool ok = run_open(&b1, sc);
  for (int b = 0; ok && b < k; b++) ok = run_batch(&b1, b) == DIPPER_OK;
  if (ok) save_all(&b1, &bl);
  run_close(&b1); /* the whole tree and its handle go: nothing survives but the blobs */
  ok = ok && !bl.failed && run_open(&b2, sc);
  if (ok) {
    CHECK_EQ(restore_all(&b2, &bl), DIPPER_OK);
    for (int b = k; b <= sc->nbatches && ok; b++) ok = run_batch(&b2, b) == DIPPER_OK;
    const char *want = a->out.data ? a->out.data + a->mark[k] : "";
    const char *got = dp_buf_cstr(&b2.out);
    if (strcmp(want, got) != 0) fprintf(stderr, "resumed after %d batches:\n", k);
    CHECK_STR(got, want);
    run_close(&b2);
  }
  free_blobs(&bl);
}

/* Restore `bytes` into op, freshly reopened; returns the code. */
static int restore_bytes(harness *h, dp_op *op, const uint8_t *bytes, size_t n) {
  op->cls->close(op);
  memset(&op->metrics, 0, sizeof op->metrics);
  h->diags.count = 0;
  int rc = op->cls->open(op);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) return DIPPER_OK;
  dp_rd in;
  dp_rd_init(&in, bytes, n);
  rc = op->cls->restore_state(op, &in);
  if (rc == DIPPER_OK && !dp_rd_done(&in)) rc = DIPPER_CORRUPT;
  else if (rc != DIPPER_OK) CHECK(h->diags.count > 0); /* the operator said why */
  return rc;
}

typedef struct damager {
  const blobs *bl;
  int next;
  harness *h;
} damager;

/* Every truncation of the op's blob is corrupt; every damaged byte either
** reads back (into state that saves again) or is corrupt. */
static void damage_op(dp_op *op, void *user) {
  damager *d = user;
  if (!op->cls->restore_state || d->next >= d->bl->n) return;
  const dp_buf *b = &d->bl->b[d->next++];
  uint8_t *copy = malloc(b->len ? b->len : 1);
  if (!copy) return;
  memcpy(copy, b->data, b->len);
  for (size_t n = 0; n < b->len; n++) CHECK_EQ(restore_bytes(d->h, op, copy, n), DIPPER_CORRUPT);
  static const uint8_t flips[] = {0xff, 0x01, 0x80};
  for (size_t i = 0; i < b->len; i++)
    for (size_t f = 0; f < sizeof flips; f++) {
      copy[i] = (uint8_t)(b->data[i] ^ flips[f]);
      int rc = restore_bytes(d->h, op, copy, b->len);
      CHECK(rc == DIPPER_OK || rc == DIPPER_CORRUPT);
      if (rc == DIPPER_OK) {
        /* what read back is whole: it saves again */
        dp_buf again = DP_BUF_INIT;
        CHECK_EQ(op->cls->save_state(op, &again), DIPPER_OK);
        dp_buf_free(&again);
      }
      copy[i] = (uint8_t)b->data[i];
    }
  /* the version byte alone */
  copy[0] = (uint8_t)(copy[0] + 1);
  CHECK_EQ(restore_bytes(d->h, op, copy, b->len), DIPPER_CORRUPT);
  CHECK(d->h->diags.count > 0 && strstr(d->h->diags.items[0].message, "version"));
  free(copy);
}

static void check_damage(const script *sc, int k) {
  run r;
  blobs bl;
  memset(&bl, 0, sizeof bl);
  bool ok = run_open(&r, sc);
  for (int b = 0; ok && b < k; b++) ok = run_batch(&r, b) == DIPPER_OK;
  if (ok) save_all(&r, &bl);
  if (ok && !bl.failed) {
    damager d = {&bl, 0, r.h};
    dp_op_walk(r.h->root, damage_op, &d);
    CHECK_EQ(d.next, bl.n);
  }
  run_close(&r);
  free_blobs(&bl);
}

/* ---- deltas: a whole state after batch 0, then what changed ---- */

/* The checkpoints of one run: whole after batch 0, then after every
** `stride`-th batch (and the final one) a delta of each operator that has
** save_delta, its whole state otherwise. */
typedef struct chain {
  int n;
  int at[MAX_BATCHES + 2];           /* the batch each step was saved after */
  blobs step[MAX_BATCHES + 2];       /* step[0]: whole */
} chain;

static void free_chain(chain *c) {
  for (int i = 0; i < c->n; i++) free_blobs(&c->step[i]);
  memset(c, 0, sizeof *c);
}

/* driver.c's restore_state: per operator its newest whole state in the
** sequence, then its deltas after it, in order. */
typedef struct seq_restorer {
  const blobs *const *seq;
  int n, idx, rc;
} seq_restorer;

static void restore_seq_op(dp_op *op, void *user) {
  seq_restorer *rs = user;
  if (!op->cls->restore_state || rs->rc) return;
  int idx = rs->idx++, from = rs->n - 1;
  while (from > 0 && rs->seq[from]->delta[idx]) from--;
  for (int i = from; i < rs->n && !rs->rc; i++) {
    const blobs *bl = rs->seq[i];
    if (idx >= bl->n) {
      rs->rc = DIPPER_CORRUPT;
      break;
    }
    dp_rd in;
    dp_rd_init(&in, bl->b[idx].data, bl->b[idx].len);
    rs->rc = bl->delta[idx] ? op->cls->restore_delta(op, &in) : op->cls->restore_state(op, &in);
    if (!rs->rc && !dp_rd_done(&in)) rs->rc = DIPPER_CORRUPT;
  }
}

static int restore_seq(run *r, const blobs *const *seq, int n) {
  seq_restorer rs = {seq, n, 0, DIPPER_OK};
  dp_op_walk(r->h->root, restore_seq_op, &rs);
  const blobs *last = seq[n - 1];
  r->batch_wm = last->batch_wm;
  r->next_wm = last->next_wm;
  for (int i = 0; i < last->nwm; i++) r->h->ex.max_event_time[i] = last->max_event_time[i];
  if (rs.rc) harness_print_diags(r->h);
  return rs.rc;
}

/* Steps [0, upto] of c, then (when more is not NULL) every step of more. */
static int restore_steps(run *r, const chain *c, int upto, const chain *more) {
  const blobs *seq[2 * (MAX_BATCHES + 2)];
  int n = 0;
  for (int i = 0; i <= upto; i++) seq[n++] = &c->step[i];
  for (int i = 0; more && i < more->n; i++) seq[n++] = &more->step[i];
  return restore_seq(r, seq, n);
}

/* Every operator's save_state bytes equal the reference's. */
static void check_same_state(run *r, const blobs *want, const char *what, int k) {
  blobs got;
  save_all(r, &got);
  CHECK_EQ(got.n, want->n);
  for (int i = 0; i < got.n && i < want->n; i++) {
    bool same = got.b[i].len == want->b[i].len &&
                memcmp(got.b[i].data, want->b[i].data, got.b[i].len) == 0;
    if (!same) fprintf(stderr, "%s at batch %d: operator %d's state differs\n", what, k, i);
    CHECK(same);
  }
  free_blobs(&got);
}

/* Reopen op and restore its own blobs (index `idx` of each step) up to step
** `upto`, then the bytes as a delta; the code of that last restore. */
static int restore_delta_bytes(harness *h, dp_op *op, const chain *c, int idx, int upto,
                               const uint8_t *bytes, size_t n) {
  op->cls->close(op);
  memset(&op->metrics, 0, sizeof op->metrics);
  h->diags.count = 0;
  int rc = op->cls->open(op);
  CHECK_EQ(rc, DIPPER_OK);
  int from = upto;
  while (from > 0 && c->step[from].delta[idx]) from--;
  for (int i = from; i <= upto && !rc; i++) {
    const blobs *bl = &c->step[i];
    dp_rd in;
    dp_rd_init(&in, bl->b[idx].data, bl->b[idx].len);
    rc = bl->delta[idx] ? op->cls->restore_delta(op, &in) : op->cls->restore_state(op, &in);
    CHECK_EQ(rc, DIPPER_OK);
  }
  if (rc) return DIPPER_OK;
  dp_rd in;
  dp_rd_init(&in, bytes, n);
  rc = op->cls->restore_delta(op, &in);
  if (rc == DIPPER_OK && !dp_rd_done(&in)) rc = DIPPER_CORRUPT;
  else if (rc != DIPPER_OK) CHECK(h->diags.count > 0);
  return rc;
}

typedef struct delta_damager {
  const chain *c;
  int step, idx;
  harness *h;
} delta_damager;

/* Every truncation of the op's delta at one step is corrupt; every damaged
** byte reads back (into state that saves again) or is corrupt. */
static void damage_delta_op(dp_op *op, void *user) {
  delta_damager *d = user;
  if (!op->cls->restore_state) return;
  int idx = d->idx++;
  const blobs *bl = &d->c->step[d->step];
  if (idx >= bl->n || !bl->delta[idx]) return;
  const dp_buf *b = &bl->b[idx];
  uint8_t *copy = malloc(b->len ? b->len : 1);
  if (!copy) return;
  memcpy(copy, b->data, b->len);
  for (size_t n = 0; n < b->len; n++)
    CHECK_EQ(restore_delta_bytes(d->h, op, d->c, idx, d->step - 1, copy, n), DIPPER_CORRUPT);
  static const uint8_t flips[] = {0xff, 0x01, 0x80};
  for (size_t i = 0; i < b->len; i++)
    for (size_t f = 0; f < sizeof flips; f++) {
      copy[i] = (uint8_t)(b->data[i] ^ flips[f]);
      int rc = restore_delta_bytes(d->h, op, d->c, idx, d->step - 1, copy, b->len);
      CHECK(rc == DIPPER_OK || rc == DIPPER_CORRUPT);
      if (rc == DIPPER_OK) {
        dp_buf again = DP_BUF_INIT;
        CHECK_EQ(op->cls->save_state(op, &again), DIPPER_OK);
        dp_buf_free(&again);
      }
      copy[i] = (uint8_t)b->data[i];
    }
  free(copy);
  d->h->diags.count = 0;
}

/* The delta checks of one case, for deltas every `stride` batches. */
static void check_deltas(const script *sc, const run *a, int stride, bool damage) {
  /* the reference: every operator's whole state after each batch */
  static blobs full[MAX_BATCHES + 2];
  static chain ch;
  int nfull = 0;
  run ref, c;
  memset(&ch, 0, sizeof ch);
  bool ok = run_open(&ref, sc);
  for (int b = 0; ok && b <= sc->nbatches; b++) {
    ok = run_batch(&ref, b) == DIPPER_OK;
    if (ok) save_all(&ref, &full[nfull++]);
  }
  run_close(&ref);
  ok = ok && run_open(&c, sc);
  for (int b = 0; ok && b <= sc->nbatches; b++) {
    ok = run_batch(&c, b) == DIPPER_OK;
    if (ok && (b == 0 || b % stride == 0 || b == sc->nbatches)) {
      ch.at[ch.n] = b;
      save_all_as(&c, &ch.step[ch.n++], b > 0);
    }
  }
  run_close(&c);
  /* For every step k: base + deltas up to k give the straight run's state
  ** and its output from there on; and the resumed run's own deltas (their
  ** base: what restore_delta left) give its state at the end. */
  for (int k = 0; ok && k < ch.n; k++) {
    run d;
    if (!run_open(&d, sc)) break;
    int at = ch.at[k];
    CHECK_EQ(restore_steps(&d, &ch, k, NULL), DIPPER_OK);
    check_same_state(&d, &full[at], "restored from deltas", at);
    static chain mine;
    memset(&mine, 0, sizeof mine);
    for (int b = at + 1; b <= sc->nbatches && ok; b++) {
      ok = run_batch(&d, b) == DIPPER_OK;
      if (ok && (b % stride == 0 || b == sc->nbatches)) save_all_as(&d, &mine.step[mine.n++], true);
    }
    /* d's own output begins at the batch after `at` */
    const char *want = at < sc->nbatches && a->out.data ? a->out.data + a->mark[at + 1] : "";
    const char *got = dp_buf_cstr(&d.out);
    if (strcmp(want, got) != 0) fprintf(stderr, "resumed from deltas after batch %d:\n", at);
    CHECK_STR(got, want);
    run_close(&d);
    if (ok && mine.n > 0) {
      run e;
      if (run_open(&e, sc)) {
        CHECK_EQ(restore_steps(&e, &ch, k, &mine), DIPPER_OK);
        check_same_state(&e, &full[nfull - 1], "the resumed run's deltas", sc->nbatches);
      }
      run_close(&e);
    }
    free_chain(&mine);
  }
  if (ok && damage) {
    for (int k = 1; k < ch.n; k++) {
      run r;
      if (!run_open(&r, sc)) break;
      delta_damager dd = {&ch, k, 0, r.h};
      dp_op_walk(r.h->root, damage_delta_op, &dd);
      run_close(&r);
    }
  }
  for (int i = 0; i < nfull; i++) free_blobs(&full[i]);
  free_chain(&ch);
}

/* The whole check of one case; `expect` (when not NULL) is A's output, so
** that the case is seen to do something. */
static void check_script(const script *sc, const char *expect) {
  run a;
  if (!run_open(&a, sc)) {
    run_close(&a);
    return;
  }
  bool ok = true;
  for (int b = 0; ok && b <= sc->nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
  if (ok && expect) CHECK_STR(dp_buf_cstr(&a.out), expect);
  for (int k = 0; ok && k <= sc->nbatches; k++) check_resume_at(sc, &a, k);
  if (ok) check_deltas(sc, &a, 1, true);
  if (ok) check_deltas(sc, &a, 2, false);
  run_close(&a);
  if (ok) check_damage(sc, sc->nbatches > 1 ? sc->nbatches - 1 : sc->nbatches);
}

/* ---- the cases ---- */

#define T(s) "2024-01-01 00:00:" s
#define EV(k, v, s) "{\"k\": " #k ", \"v\": \"" v "\", \"ts\": \"" T(s) "\"}\n"
#define KV(k, v) "{\"k\": " #k ", \"v\": \"" v "\"}\n"

#define EV_DDL                                                                           \
  "CREATE TABLE ev (k INT, v STRING, ts TIMESTAMP(3),"                                   \
  " WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'memory');\n"

/* Five batches of ev: repeated keys, a late row (k 9 at 01 s in batch 3). */
#define EV_BATCHES                                                                       \
  {{EV(1, "a", "01") EV(2, "b", "02") EV(1, "a2", "03")},                                \
   {EV(3, "c", "05") EV(2, "b2", "06")},                                                 \
   {EV(1, "a3", "09") EV(4, "d", "10")},                                                 \
   {EV(9, "late", "01") EV(4, "d2", "11") EV(5, "e", "14")},                             \
   {EV(5, "e2", "20") EV(1, "a4", "21")}}

TEST(dedup_keep_first_with_watermark_eviction) {
  static const script sc = {
      EV_DDL "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn"
             " FROM ev) WHERE rn = 1;",
      {"ev"}, EV_BATCHES, 5};
  /* k 1 is forgotten once the watermark passes its first row (01 s): a3 is new again */
  check_script(&sc, "#0\n1, 'a'\n2, 'b'\n#1\n3, 'c'\n#2\n1, 'a3'\n4, 'd'\n#3\n5, 'e'\n#4\n#5\n");
}

TEST(dedup_keep_last_updates_each_batch) {
  static const script sc = {
      EV_DDL "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC)"
             " AS rn FROM ev) WHERE rn = 1;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&sc, NULL);
}

TEST(dedup_of_a_bounded_input_emits_at_the_end) {
  static const script sc = {
      "CREATE TABLE b (k INT, v STRING, ts TIMESTAMP(3))"
      " WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn"
      " FROM b) WHERE rn = 1;",
      {"b"},
      {{EV(1, "a", "01") EV(2, "b", "05")}, {EV(1, "z", "03") EV(3, "c", "01")},
       {EV(2, "a", "02") EV(3, "d", "04")}},
      3};
  check_script(&sc, "#0\n#1\n#2\n#3\n1, 'z'\n2, 'b'\n3, 'd'\n");
}

/* (a DISTINCT without an event-time column is refused on a stream) */
TEST(distinct_with_event_time_eviction) {
  static const script sc = {EV_DDL "SELECT DISTINCT k, v, ts FROM ev;", {"ev"},
                            {{EV(1, "a", "01") EV(1, "a", "01") EV(2, "b", "02")},
                             {EV(1, "a", "01") EV(3, "c", "05") EV(3, "c", "05")},
                             {EV(2, "b", "02") EV(3, "c", "05") EV(4, "d", "09")},
                             {EV(4, "d", "09") EV(5, "e", "14")}},
                            4};
  check_script(&sc, NULL);
}

/* ---- joins ---- */

#define LR_DDL                                                                           \
  "CREATE TABLE l (k INT, v STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)"            \
  " WITH ('connector' = 'memory');\n"                                                    \
  "CREATE TABLE r (k INT, v STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)"            \
  " WITH ('connector' = 'memory');\n"

#define LR_BATCHES                                                                       \
  {{EV(1, "a", "00") EV(2, "b", "05") EV(3, "lonely", "02"), EV(1, "x", "03")},          \
   {EV(2, "c", "30"), EV(2, "y", "12") EV(7, "ronly", "13")},                            \
   {EV(1, "late", "01") EV(2, "c2", "31"), EV(2, "q", "25") EV(1, "z", "40")},           \
   {EV(1, "w", "41"), EV(5, "s", "50")}}

#define INTERVAL_JOIN(kind)                                                              \
  LR_DDL "SELECT l.v, r.v FROM l " kind " JOIN r ON l.k = r.k"                           \
         " AND l.ts BETWEEN r.ts - INTERVAL '10' SECOND AND r.ts + INTERVAL '10' SECOND;"

TEST(interval_joins_of_two_streams) {
  static const script inner = {INTERVAL_JOIN(""), {"l", "r"}, LR_BATCHES, 4};
  check_script(&inner, NULL);
  static const script left = {INTERVAL_JOIN("LEFT"), {"l", "r"}, LR_BATCHES, 4};
  check_script(&left, NULL);
  static const script right = {INTERVAL_JOIN("RIGHT"), {"l", "r"}, LR_BATCHES, 4};
  check_script(&right, NULL);
  static const script full = {INTERVAL_JOIN("FULL"), {"l", "r"}, LR_BATCHES, 4};
  /* `late` is dropped; lonely and ronly are padded as the watermark passes them */
  check_script(&full,
               "#0\n'a', 'x'\n#1\n'b', 'y'\n#2\n'c2', 'q'\n'c', 'q'\n'lonely', NULL\n"
               "#3\n'w', 'z'\nNULL, 'ronly'\n#4\nNULL, 's'\n");
}

TEST(inner_join_of_two_streams_without_a_time_range) {
  static const script sc = {LR_DDL "SELECT l.v, r.v FROM l JOIN r ON l.k = r.k;",
                            {"l", "r"}, LR_BATCHES, 4};
  check_script(&sc, NULL);
}

TEST(window_join_of_two_streams) {
  static const script sc = {
      LR_DDL "SELECT a.v, b.v, a.window_start FROM"
             " TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND)) a JOIN"
             " TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND)) b"
             " ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.k = b.k;",
      {"l", "r"}, LR_BATCHES, 4};
  check_script(&sc, NULL);
}

#define DIM_DDL                                                                          \
  "CREATE TABLE d (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"

/* The bounded side arrives over two batches, the stream over four. */
#define DIM_BATCHES                                                                      \
  {{EV(1, "a", "00") EV(2, "b", "01"), KV(1, "one") KV(2, "two")},                       \
   {EV(3, "c", "02") EV(1, "a2", "03"), KV(3, "three") KV(1, "uno")},                    \
   {EV(4, "d", "04") EV(2, "b2", "05"), NULL},                                           \
   {EV(3, "c2", "06") EV(5, "e", "07"), NULL}}

TEST(stream_static_joins) {
  static const script inner = {
      LR_DDL DIM_DDL "SELECT l.v, d.v FROM l JOIN d ON l.k = d.k;", {"l", "d"}, DIM_BATCHES, 4};
  check_script(&inner, NULL);
  static const script left = {
      LR_DDL DIM_DDL "SELECT l.v, d.v FROM l LEFT JOIN d ON l.k = d.k AND d.v <> 'uno';",
      {"l", "d"}, DIM_BATCHES, 4};
  check_script(&left, NULL);
  /* SEMI with the stream on the right: each dimension row leaves at its first match */
  static const script semi = {
      LR_DDL DIM_DDL "SELECT d.v FROM d WHERE d.k IN (SELECT k FROM l);",
      {"l", "d"}, DIM_BATCHES, 4};
  check_script(&semi, "#0\n'one'\n'two'\n#1\n'three'\n'uno'\n#2\n#3\n#4\n");
  static const script anti = {
      LR_DDL DIM_DDL "SELECT l.v FROM l WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.k = l.k);",
      {"l", "d"}, DIM_BATCHES, 4};
  check_script(&anti, NULL);
}

TEST(join_of_two_bounded_inputs_keeps_both_until_the_end) {
  static const script sc = {
      "CREATE TABLE a (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT a.v, b.v FROM a FULL JOIN b ON a.k = b.k;",
      {"a", "b"},
      {{KV(1, "a1") KV(2, "a2"), KV(2, "b2")}, {KV(3, "a3"), KV(4, "b4") KV(1, "b1")}},
      2};
  check_script(&sc, "#0\n#1\n#2\n'a1', 'b1'\n'a2', 'b2'\n'a3', NULL\nNULL, 'b4'\n");
}

#define RATES_DDL(opts)                                                                  \
  "CREATE TABLE rates (cur STRING, rate INT, ut TIMESTAMP(3), WATERMARK FOR ut AS ut,"   \
  " PRIMARY KEY (cur) NOT ENFORCED) WITH ('connector' = 'memory'" opts ");\n"            \
  "CREATE TABLE orders (id INT, cur STRING, ot TIMESTAMP(3), WATERMARK FOR ot AS ot)"    \
  " WITH ('connector' = 'memory');\n"                                                    \
  "SELECT o.id, r.rate FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ot AS r"    \
  " ON o.cur = r.cur;"
#define RATE(c, r, s) "{\"cur\": \"" c "\", \"rate\": " #r ", \"ut\": \"" T(s) "\"}\n"
#define ORDER(i, c, s) "{\"id\": " #i ", \"cur\": \"" c "\", \"ot\": \"" T(s) "\"}\n"
#define RATES_BATCHES                                                                    \
  {{RATE("EUR", 110, "00") RATE("USD", 100, "00"), NULL},                                \
   {NULL, ORDER(1, "EUR", "05")},                                                        \
   {RATE("EUR", 120, "10"), ORDER(2, "EUR", "12") ORDER(3, "GBP", "12")},                \
   {RATE("EUR", 999, "20"), ORDER(4, "USD", "15")},                                      \
   {RATE("USD", 101, "30"), ORDER(5, "EUR", "25")}}

TEST(temporal_joins) {
  /* versions as a stream: orders wait for the watermark */
  static const script streamed = {RATES_DDL(""), {"rates", "orders"}, RATES_BATCHES, 5};
  check_script(&streamed, NULL);
  /* versions bounded: a lookup of the version valid at the order's time */
  static const script bounded = {RATES_DDL(", 'bounded' = 'true'"), {"rates", "orders"},
                                 RATES_BATCHES, 5};
  check_script(&bounded, NULL);
}

/* The size of a delta: a join holding 100,000 rows whose batch adds 10 and
** evicts 10 writes a delta under 1% of its whole state. */
static char *left_rows(int from, int to) {
  dp_buf b = DP_BUF_INIT;
  for (int i = from; i < to; i++)
    dp_buf_printf(&b, "{\"k\": %d, \"v\": \"l%d\", \"ts\": \"2024-01-%02d %02d:%02d:%02d\"}\n", i,
                  i, 1 + i / 86400, i / 3600 % 24, i / 60 % 60, i % 60);
  return b.data;
}

TEST(a_join_delta_costs_what_the_batch_changed) {
  char *big = left_rows(0, 100000), *b1 = left_rows(100000, 100010), *b2 = left_rows(100010, 100020);
  script sc = {INTERVAL_JOIN(""), {"l", "r"},
               {{big, EV(-1, "r0", "09")}, {b1, EV(-2, "r1", "19")}, {b2, EV(-3, "r2", "29")}},
               3};
  run r, again;
  blobs base, delta, whole;
  CHECK(run_open(&r, &sc));
  CHECK_EQ(run_batch(&r, 0), DIPPER_OK);
  CHECK_EQ(run_batch(&r, 1), DIPPER_OK);
  save_all(&r, &base);                     /* 100,010 left rows, 2 right rows */
  CHECK_EQ(run_batch(&r, 2), DIPPER_OK);   /* +10 and +1; the watermark (19 s) evicts 10 and 1 */
  save_all_as(&r, &delta, true);
  save_all(&r, &whole);
  CHECK_EQ(delta.n, 1);
  CHECK(delta.delta[0]);
  fprintf(stderr, "  join of 100,010 rows: whole state %zu bytes, the batch's delta %zu bytes\n",
          whole.b[0].len, delta.b[0].len);
  CHECK(whole.b[0].len > 1000000);
  CHECK(delta.b[0].len * 100 < whole.b[0].len);
  /* and base + delta is that state */
  const blobs *seq[] = {&base, &delta};
  CHECK(run_open(&again, &sc));
  CHECK_EQ(restore_seq(&again, seq, 2), DIPPER_OK);
  check_same_state(&again, &whole, "a big join from its delta", 2);
  run_close(&again);
  run_close(&r);
  free_blobs(&base);
  free_blobs(&delta);
  free_blobs(&whole);
  free(big);
  free(b1);
  free(b2);
}

/* ---- the other operators ---- */

TEST(topn_updating_and_per_window) {
  static const script update = {
      EV_DDL "SELECT k, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC)"
             " AS rn FROM ev) WHERE rn <= 2;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&update, NULL);
  static const script window = {
      EV_DDL "SELECT window_start, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY"
             " window_start, window_end ORDER BY v DESC) AS rn FROM"
             " TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn <= 2;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&window, NULL);
}

TEST(over_on_a_stream_and_on_a_bounded_input) {
  static const script rows = {
      EV_DDL "SELECT k, v, COUNT(*) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING"
             " AND CURRENT ROW), LAG(v) OVER (PARTITION BY k ORDER BY ts) FROM ev;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&rows, NULL);
  static const script range = {
      EV_DDL "SELECT k, v, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND"
             " PRECEDING AND CURRENT ROW) FROM ev;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&range, NULL);
  static const script bounded = {
      "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT k, v, RANK() OVER (PARTITION BY k ORDER BY v) FROM b;",
      {"b"},
      {{KV(1, "b") KV(2, "x")}, {KV(1, "a") KV(1, "b")}, {KV(2, "w")}},
      3};
  check_script(&bounded, "#0\n#1\n#2\n#3\n1, 'a', 1\n1, 'b', 2\n1, 'b', 2\n2, 'w', 1\n2, 'x', 2\n");
}

TEST(sort_by_event_time_and_of_a_bounded_input) {
  static const script timed = {EV_DDL "SELECT k, v FROM ev ORDER BY ts;", {"ev"}, EV_BATCHES, 5};
  check_script(&timed, NULL);
  static const script bounded = {
      "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT k, v FROM b ORDER BY v DESC, k;",
      {"b"},
      {{KV(1, "b") KV(2, "x")}, {KV(3, "a") KV(4, "b")}, {KV(5, "w")}},
      3};
  check_script(&bounded, "#0\n#1\n#2\n#3\n2, 'x'\n5, 'w'\n1, 'b'\n4, 'b'\n3, 'a'\n");
}

/* (LIMIT on a stream is refused: a bounded input read over several batches) */
TEST(limit_counts_across_batches) {
  static const script sc = {
      "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT k, v FROM b LIMIT 3 OFFSET 2;",
      {"b"},
      {{KV(1, "a")}, {KV(2, "b") KV(3, "c")}, {KV(4, "d")}, {KV(5, "e") KV(6, "f")}},
      4};
  check_script(&sc, "#0\n#1\n3, 'c'\n#2\n4, 'd'\n#3\n5, 'e'\n#4\n");
}

TEST(set_operations_of_bounded_inputs) {
  static const char *sql[] = {
      "SELECT k, v FROM a INTERSECT ALL SELECT k, v FROM b;",
      "SELECT k, v FROM a EXCEPT SELECT k, v FROM b;",
  };
  for (int i = 0; i < 2; i++) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s",
             "CREATE TABLE a (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
             "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n",
             sql[i]);
    const script sc = {text,
                       {"a", "b"},
                       {{KV(1, "x") KV(1, "x") KV(2, "y"), KV(1, "x")},
                        {KV(3, "z") KV(1, "x"), KV(1, "x") KV(3, "z")},
                        {KV(4, "w"), KV(2, "q")}},
                       3};
    check_script(&sc, i == 0 ? "#0\n#1\n#2\n#3\n1, 'x'\n1, 'x'\n3, 'z'\n"
                             : "#0\n#1\n#2\n#3\n2, 'y'\n4, 'w'\n");
  }
}

/* ---- two streams, many rows: compaction, expired rows in a state ---- */

/* Rows i in [from, to) of a stream: key i % mod + off, time `t0` ms + `step` ms
** per row, every fourth pair of rows swapped (a batch out of time order). */
static char *lr_rows(const char *tag, int mod, int off, int from, int to, int64_t t0, int step) {
  dp_buf b = DP_BUF_INIT;
  for (int i = from; i < to; i++) {
    int j = (i % 4 == 1) ? i + 1 : (i % 4 == 2) ? i - 1 : i;
    int64_t ms = t0 + (int64_t)(j - from) * step;
    dp_buf_printf(&b, "{\"k\": %d, \"v\": \"%s%d\", \"ts\": \"2024-01-01 %02d:%02d:%02d.%03d\"}\n",
                  i % mod + off, tag, i, (int)(ms / 3600000), (int)(ms / 60000 % 60),
                  (int)(ms / 1000 % 60), (int)(ms % 1000));
  }
  return b.data;
}

/* 1,500 left and 1,000 right rows a batch over 15 s of event time, joined
** within 1 s (left keys 0-12, right keys 3-19: some rows of each side
** never match): each batch expires a thousand rows or more of each side
** (stores compacted), and the last one fewer than the compaction's minimum
** (its state holds expired rows, saved as runs of dead rows).  Every
** outer kind, resumed after every batch, from whole states and deltas. */
TEST(outer_joins_of_two_streams_with_many_rows) {
  char *data[5][2];
  for (int b = 0; b < 4; b++) {
    data[b][0] = lr_rows("l", 13, 0, b * 1500, (b + 1) * 1500, (int64_t)b * 15000, 10);
    data[b][1] = lr_rows("r", 17, 3, b * 1000, (b + 1) * 1000, (int64_t)b * 15000 + 3, 15);
  }
  data[4][0] = lr_rows("l", 13, 0, 6000, 6300, 60000, 10);
  data[4][1] = lr_rows("r", 17, 3, 4000, 4200, 60000, 15);
  static const char *const kinds[] = {"LEFT", "RIGHT", "FULL"};
  for (int k = 0; k < 3; k++) {
    char sql[1024];
    snprintf(sql, sizeof sql,
             LR_DDL "SELECT l.v, r.v FROM l %s JOIN r ON l.k = r.k"
                    " AND l.ts BETWEEN r.ts - INTERVAL '1' SECOND AND r.ts + INTERVAL '1' SECOND;",
             kinds[k]);
    script sc = {sql, {"l", "r"}, {{NULL}}, 5};
    for (int b = 0; b < 5; b++) {
      sc.data[b][0] = data[b][0];
      sc.data[b][1] = data[b][1];
    }
    run a;
    bool ok = run_open(&a, &sc);
    for (int b = 0; ok && b <= sc.nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
    /* something joined, something padded */
    CHECK(ok && strstr(dp_buf_cstr(&a.out), "NULL") && strstr(dp_buf_cstr(&a.out), "'l4',"));
    for (int at = 0; ok && at <= sc.nbatches; at++) check_resume_at(&sc, &a, at);
    if (ok && k == 2) check_deltas(&sc, &a, 1, false);
    run_close(&a);
  }
  for (int b = 0; b < 5; b++) {
    free(data[b][0]);
    free(data[b][1]);
  }
}

/* A batch that expires most of a big state compacts it: its delta names
** the dropped rows as a run, a few bytes, not a byte or more per row. */
TEST(a_compacting_join_delta_costs_what_the_batch_changed) {
  char *big = left_rows(0, 100000), *b1 = left_rows(100000, 100010), *b2 = left_rows(100010, 100020);
  script sc = {INTERVAL_JOIN(""), {"l", "r"},
               {{big, EV(-1, "r0", "09")},
                {b1, "{\"k\": -2, \"v\": \"r1\", \"ts\": \"2024-01-01 16:40:00\"}\n"},
                {b2, NULL}},
               3};
  run r, again;
  blobs base, delta, whole;
  CHECK(run_open(&r, &sc));
  CHECK_EQ(run_batch(&r, 0), DIPPER_OK);
  CHECK_EQ(run_batch(&r, 1), DIPPER_OK);
  save_all(&r, &base);                    /* 100,010 left rows */
  CHECK_EQ(run_batch(&r, 2), DIPPER_OK);  /* the watermark (60,000 s) expires 59,991 of them */
  save_all_as(&r, &delta, true);
  save_all(&r, &whole);
  CHECK_EQ(delta.n, 1);
  fprintf(stderr, "  join of 100,020 rows, 59,991 expired: whole state %zu bytes, delta %zu bytes\n",
          whole.b[0].len, delta.b[0].len);
  CHECK(whole.b[0].len > 400000);
  CHECK(delta.b[0].len < 1000);
  const blobs *seq[] = {&base, &delta};
  CHECK(run_open(&again, &sc));
  CHECK_EQ(restore_seq(&again, seq, 2), DIPPER_OK);
  check_same_state(&again, &whole, "a compacted join from its delta", 2);
  run_close(&again);
  run_close(&r);
  free_blobs(&base);
  free_blobs(&delta);
  free_blobs(&whole);
  free(big);
  free(b1);
  free(b2);
}

/* A join keeps only the columns read; a checkpoint written by a query that
** read other columns of a side is refused, naming the side. */
TEST(a_join_state_of_other_columns_is_refused) {
  static const script reads_v = {INTERVAL_JOIN(""), {"l", "r"}, LR_BATCHES, 4};
  static const script not_v = {
      LR_DDL "SELECT r.v FROM l JOIN r ON l.k = r.k"
             " AND l.ts BETWEEN r.ts - INTERVAL '10' SECOND AND r.ts + INTERVAL '10' SECOND;",
      {"l", "r"}, LR_BATCHES, 4};
  run a, b;
  blobs bl;
  CHECK(run_open(&a, &reads_v));
  CHECK_EQ(run_batch(&a, 0), DIPPER_OK);
  save_all(&a, &bl);
  run_close(&a);
  CHECK(run_open(&b, &not_v));
  CHECK_EQ(restore_all(&b, &bl), DIPPER_CORRUPT);
  CHECK(b.h->diags.count > 0 && strstr(b.h->diags.items[0].message, "left input") &&
        strstr(b.h->diags.items[0].message, "fresh checkpoint folder"));
  run_close(&b);
  free_blobs(&bl);
}

int main(void) { return RUN_TESTS(); }
