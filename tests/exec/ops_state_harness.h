/*
** ops_state_harness.h — the checkpoint checks of ops_state_test.c, shared
** with the test files of other stateful operators (asof_state_test.c):
** check_script(sc, expect) runs a script of micro-batches straight through,
** then resumed after every batch from saved whole states and from chains of
** deltas, and feeds every truncation and damaged byte of the blobs back
** (ops_state_test.c's header says what each check means); with
** OPS_STATE_BACKENDS, check_backends(mem, rocks, ...) runs one script in
** memory and over RocksDB, compares the rows and checks the RocksDB run.  Static functions:
** include it in one .c file of a test executable.
*/
#ifndef DP_OPS_STATE_HARNESS_H
#define DP_OPS_STATE_HARNESS_H

#include <sys/stat.h>

#include "core/buf.h"
#include "core/files.h"
#include "exec/changelog.h"
#include "rows_harness.h"
#include "test.h"

#define MAX_TABLES 4
#ifndef MAX_BATCHES /* a test of many small batches sets its own */
#define MAX_BATCHES 8
#endif
#define MAX_BLOBS 8

typedef struct script {
  const char *sql;                               /* DDL, then the SELECT */
  const char *tables[MAX_TABLES];                /* NULL-terminated */
  const char *data[MAX_BATCHES][MAX_TABLES];     /* per batch, per table: JSON lines or NULL */
  int nbatches;                                  /* data batches; a final batch follows */
  const int64_t *clock;  /* NULL, or per batch (the final one too) its processing time, s */
} script;

/* One run: a harness (rows_harness.h) plus the driver's watermarks. */
typedef struct run {
  harness *h;
  const script *sc;
  int64_t batch_wm, next_wm; /* driver.c's batch_watermark / next_watermark */
  dp_buf out;                /* rows, each batch opened by a "#<batch>" line */
  size_t mark[MAX_BATCHES + 2]; /* out.len where batch b began */
} run;

/* The checkpoint folder the next run_open gives its query (NULL: none): a
** join over RocksDB keeps its checkpoints there (ops_state_test.c's RocksDB
** cases), so that a run B finds the ones its run before wrote. */
static const char *run_ckpt;

static bool run_open(run *r, const script *sc) {
  memset(r, 0, sizeof *r);
  r->sc = sc;
  r->h = calloc(1, sizeof *r->h);
  r->batch_wm = r->next_wm = DP_WATERMARK_NONE;
  if (!r->h) return false;
  int rc = harness_open_at(r->h, sc->sql, run_ckpt);
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
  if (b->change) dp_buf_printf(&r->out, "%s ", dp_change_name(dp_change_of(b, row)));
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
  if (r->sc->clock) ex->batch_start_time = r->sc->clock[b] * 1000000;
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
  case DP_P_DEDUPLICATE: case DP_P_TOPN: case DP_P_OVER: case DP_P_ASOF_JOIN:
    return true;
#ifdef OPS_STATE_AGGREGATE /* rocks_state_test.c: the aggregation too */
  case DP_P_AGGREGATE:
    return true;
#endif
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
  /* the version byte alone (the aggregation's blob, checksummed, says so
     of its checksum first) */
  copy[0] = (uint8_t)(copy[0] + 1);
  CHECK_EQ(restore_bytes(d->h, op, copy, b->len), DIPPER_CORRUPT);
  CHECK(d->h->diags.count > 0 && (strstr(d->h->diags.items[0].message, "version") ||
                                  strstr(d->h->diags.items[0].message, "checksum")));
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

/* ---- the same script on both state backends ('state.backend') ----
** Defined where OPS_STATE_BACKENDS is (rocks_state_test.c, ops_state_test.c). */
#ifdef OPS_STATE_BACKENDS

/* A's output with each batch's rows sorted (the "#<batch>" lines stay where
** they are): RocksDB returns a join key's rows by time and an aggregation's
** closed groups in key order, memory in its own orders. */
static char *sorted_batches(const char *text) {
  dp_buf out = DP_BUF_INIT;
  char *copy = strdup(text ? text : "");
  char *lines[4096];
  int n = 0;
  for (char *line = strtok(copy, "\n");; line = strtok(NULL, "\n")) {
    if (!line || line[0] == '#') {
      for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
          char *t = lines[j];
          lines[j] = lines[j - 1];
          lines[j - 1] = t;
        }
      for (int i = 0; i < n; i++) dp_buf_printf(&out, "%s\n", lines[i]);
      n = 0;
      if (!line) break;
      dp_buf_printf(&out, "%s\n", line);
    } else if (n < 4096) {
      lines[n++] = line;
    }
  }
  free(copy);
  return dp_buf_cstr(&out) ? out.data : NULL;
}

static char *straight_run(const script *sc) {
  run a;
  char *text = NULL;
  if (run_open(&a, sc)) {
    bool ok = true;
    for (int b = 0; ok && b <= sc->nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
    if (ok) text = sorted_batches(dp_buf_cstr(&a.out));
  }
  run_close(&a);
  return text;
}

/* `rocks` (mem's query with 'state.backend' = 'rocksdb') gives mem's rows
** batch by batch (and `expect` when not NULL), keeps its state in
** <folder>/rocksdb/<folder_name>, and passes check_script's resumes, deltas
** and damage — its runs' checkpoints in a folder of the test's own, run A's
** apart from the others, so that the blobs name RocksDB checkpoints that a
** later run opens. */
static void check_backends(const script *mem, const script *rocks, const char *folder_name,
                           const char *expect) {
  char dir[] = "/tmp/dipper-backends-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char a_dir[64], b_dir[64];
  snprintf(a_dir, sizeof a_dir, "%s/a", dir);
  snprintf(b_dir, sizeof b_dir, "%s/b", dir);
  char *want = straight_run(mem);
  run_ckpt = a_dir;
  char *got = straight_run(rocks);
  CHECK(want && got);
  char live[128];
  snprintf(live, sizeof live, "%s/rocksdb/%s", a_dir, folder_name);
  struct stat sb;
  CHECK(stat(live, &sb) == 0); /* the state was in RocksDB */
  if (want && got) CHECK_STR(got, want);
  if (want) CHECK(strchr(want, ',') != NULL); /* rows came out, not only batch marks */
  if (expect && got) CHECK_STR(got, expect);
  run a;
  if (run_open(&a, rocks)) {
    bool ok = true;
    for (int b = 0; ok && b <= rocks->nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
    run_ckpt = b_dir;
    for (int k = 0; ok && k <= rocks->nbatches; k++) check_resume_at(rocks, &a, k);
    if (ok) check_deltas(rocks, &a, 1, true);
    if (ok) check_deltas(rocks, &a, 2, false);
    run_close(&a);
    if (ok) check_damage(rocks, rocks->nbatches - 1);
  } else {
    run_close(&a);
  }
  run_ckpt = NULL;
  free(want);
  free(got);
  CHECK_EQ(dp_remove_tree(dir), 0);
}
#endif /* OPS_STATE_BACKENDS */

#endif /* DP_OPS_STATE_HARNESS_H */
