/*
** agg_delta_test.c — the aggregation's per-batch deltas (op_aggregate.c's
** save_delta/restore_delta, agg_func.c's dp_agg_state_save_delta/_load_delta).
**
** For every query of agg_state_cases.h, run A goes straight through and
** saves its whole state after every batch; run B saves its whole state after
** batch 0 and a delta after every `stride`-th later batch (1, 2 and 3: so a
** delta spans several batches, compactions and store rebuilds).  For every
** delta j, a fresh operator restores the base and deltas 0..j: its whole
** state must save to A's bytes at that batch, exactly; one more batch and a
** delta on top of the restored state must replay too (restore_delta makes
** its result the base of the next delta); and a run resumed there gives A's
** outputs for every later batch.  The restores that check bytes are told of
** their deltas first (restore_expect: the table sized once), the resumed
** runs are not: both ways restore the same state.
**
** Damage: every truncation and every bit flip of a delta is refused with
** DIPPER_CORRUPT and a diagnostic; with the checksum fixed up, a flip is
** refused or restores to an operator that runs the remaining batches, never
** a crash, a hang or a leak under the sanitizers, with restore_expect told
** of the damaged delta beforehand too.  A whole state offered as
** a delta, and a delta offered as a whole state, are refused by version.
**
** Size: with 100,000 groups, a batch that touches 10 of them writes a delta
** under 1% of the whole state (the sizes are printed).
*/
#include <time.h>

#include "agg_state_cases.h"

#define MAXDELTAS NSTEPS

static int save_delta(fixture *fx, dp_buf *blob) { return fx->top->cls->save_delta(fx->top, blob); }

static int apply_delta(fixture *fx, const void *p, size_t n, dp_rd *rd) {
  dp_rd_init(rd, p, n);
  return fx->top->cls->restore_delta(fx->top, rd);
}

/* A run with a base after batch 0 and deltas after every stride-th batch. */
typedef struct delta_run {
  dp_buf full[NSTEPS]; /* run A: the whole state after batch s */
  dp_buf outs[NSTEPS]; /* run A's outputs */
  dp_buf base;         /* run B: the whole state after batch 0 */
  dp_buf delta[MAXDELTAS];
  int at[MAXDELTAS]; /* the batch each delta was saved after */
  int ndeltas;
} delta_run;

static void free_run(delta_run *r) {
  for (int s = 0; s < NSTEPS; s++) {
    dp_buf_free(&r->full[s]);
    dp_buf_free(&r->outs[s]);
    dp_buf_free(&r->delta[s]);
  }
  dp_buf_free(&r->base);
}

static void make_run(int ci, int stride, delta_run *r) {
  memset(r, 0, sizeof *r);
  fixture fa, fb;
  dp_buf outs[NSTEPS] = {0};
  CHECK(open_case(&fa, &cases[ci]));
  CHECK(open_case(&fb, &cases[ci]));
  for (int s = 0; s < NSTEPS; s++) {
    CHECK(run_steps(&fa, s, s + 1, r->outs));
    CHECK_EQ(save(&fa, &r->full[s]), DIPPER_OK);
    CHECK(run_steps(&fb, s, s + 1, outs));
    /* saving deltas does not change what the operator answers */
    CHECK(same_buf(&outs[s], &r->outs[s]));
    if (s == 0) {
      CHECK_EQ(save(&fb, &r->base), DIPPER_OK);
    } else if (s % stride == 0 || s == NSTEPS - 1) {
      r->at[r->ndeltas] = s;
      CHECK_EQ(save_delta(&fb, &r->delta[r->ndeltas]), DIPPER_OK);
      r->ndeltas++;
    }
  }
  fixture_close(&fa);
  fixture_close(&fb);
  for (int s = 0; s < NSTEPS; s++) dp_buf_free(&outs[s]);
}

/* A fresh operator of fx with the base and deltas [0, upto) restored; with
** `expect`, told first of the deltas to come (restore_expect, as the driver
** does), `extra` among them (a damaged delta applied after the chain). */
static bool restore_chain_x(fixture *fx, const delta_run *r, int upto, bool expect,
                            const uint8_t *extra, size_t nextra) {
  reopen_top(fx);
  dp_rd hint[MAXDELTAS + 1];
  int nhint = 0;
  for (int j = 0; j < upto; j++) dp_rd_init(&hint[nhint++], r->delta[j].data, r->delta[j].len);
  if (extra) dp_rd_init(&hint[nhint++], extra, nextra);
  CHECK(fx->top->cls->restore_expect != NULL);
  if (expect && nhint) fx->top->cls->restore_expect(fx->top, hint, nhint);
  dp_rd rd;
  int rc = restore(fx, r->base.data, r->base.len, &rd);
  CHECK_EQ(rc, DIPPER_OK);
  for (int j = 0; j < upto && !rc; j++) {
    rc = apply_delta(fx, r->delta[j].data, r->delta[j].len, &rd);
    CHECK_EQ(rc, DIPPER_OK);
    CHECK(dp_rd_done(&rd));
    if (rc) fprintf(stderr, "delta %d: %s\n", j, fx->diags.count ? fx->diags.items[0].message : "?");
  }
  return rc == DIPPER_OK;
}

static bool restore_chain(fixture *fx, const delta_run *r, int upto) {
  return restore_chain_x(fx, r, upto, false, NULL, 0);
}

static void check_case(int ci, int stride) {
  delta_run r;
  make_run(ci, stride, &r);
  int mismatches = 0;
  for (int j = 0; j <= r.ndeltas; j++) {
    int t = j ? r.at[j - 1] : 0; /* the chain's state is the one after batch t */
    fixture fc, fd;
    CHECK(open_case(&fc, &cases[ci]));
    CHECK(open_case(&fd, &cases[ci]));
    if (!restore_chain_x(&fd, &r, j, true, NULL, 0)) { /* sized up front: the same state */
      mismatches++;
    } else {
      dp_buf bytes = DP_BUF_INIT;
      CHECK_EQ(save(&fd, &bytes), DIPPER_OK);
      if (!same_buf(&bytes, &r.full[t])) {
        fprintf(stderr, "case %d stride %d: base + %d deltas differ from the state after batch %d\n",
                ci, stride, j, t);
        mismatches++;
      }
      dp_buf_free(&bytes);
    }
    /* resume there: one batch, a delta of the restored state, the rest */
    CHECK(restore_chain(&fc, &r, j));
    dp_buf outs[NSTEPS] = {0}, more = DP_BUF_INIT;
    if (t + 1 < NSTEPS) {
      CHECK(run_steps(&fc, t + 1, t + 2, outs));
      CHECK_EQ(save_delta(&fc, &more), DIPPER_OK);
      dp_rd rd;
      CHECK_EQ(apply_delta(&fd, more.data, more.len, &rd), DIPPER_OK);
      dp_buf bytes = DP_BUF_INIT;
      CHECK_EQ(save(&fd, &bytes), DIPPER_OK);
      if (!same_buf(&bytes, &r.full[t + 1])) {
        fprintf(stderr, "case %d stride %d: a delta after %d restored deltas does not replay\n", ci,
                stride, j);
        mismatches++;
      }
      dp_buf_free(&bytes);
      CHECK(run_steps(&fc, t + 2, NSTEPS, outs));
    }
    for (int s = t + 1; s < NSTEPS; s++)
      if (!same_buf(&outs[s], &r.outs[s])) {
        fprintf(stderr, "case %d stride %d: resumed after %d deltas, batch %d differs\n", ci, stride,
                j, s);
        mismatches++;
      }
    for (int s = 0; s < NSTEPS; s++) dp_buf_free(&outs[s]);
    dp_buf_free(&more);
    fixture_close(&fc);
    fixture_close(&fd);
  }
  CHECK_EQ(mismatches, 0);
  free_run(&r);
}

TEST(base_and_deltas_restore_the_straight_runs_state_exactly) {
  make_data();
  for (int ci = 0; ci < NCASES; ci++)
    for (int stride = 1; stride <= 3; stride++) check_case(ci, stride);
}

TEST(deltas_are_smaller_than_the_state_on_these_batches) {
  /* not a vacuous pass: the deltas write less than the whole state */
  make_data();
  int which[] = {0, 4, 8, 12, 13};
  for (size_t w = 0; w < sizeof which / sizeof which[0]; w++) {
    delta_run r;
    make_run(which[w], 1, &r);
    size_t dsum = 0, fsum = 0;
    for (int j = 0; j < r.ndeltas; j++) {
      dsum += r.delta[j].len;
      fsum += r.full[r.at[j]].len;
    }
    if (getenv("AGG_STATE_VERBOSE")) fprintf(stderr, "case %d: deltas %zu bytes, whole states %zu\n", which[w], dsum, fsum);
    CHECK(dsum < fsum);
    free_run(&r);
  }
}

/* Long enough for the kept values' store to be rebuilt (past 1,024 rows of
** garbage, agg_func.c): the deltas after a rebuild carry the call's whole
** state.  24 batches of 150 rows, 3 auctions, 5 s windows closing as the
** watermark passes; a delta after every batch, each replayed on a fresh
** operator and compared with the straight run's whole state. */
#define LONG_STEPS 24
#define LONG_ROWS 150

static int64_t long_cells[LONG_STEPS][LONG_ROWS * 3];

static void long_step(fixture *fx, int s) {
  int64_t max = DP_WATERMARK_NONE, prev = DP_WATERMARK_NONE;
  for (int k = 0; k < s; k++)
    for (int r = 0; r < LONG_ROWS; r++) {
      if (k < s - 1 && long_cells[k][r * 3 + 2] > prev) prev = long_cells[k][r * 3 + 2];
      if (long_cells[k][r * 3 + 2] > max) max = long_cells[k][r * 3 + 2];
    }
  fx->ex.watermark = max == DP_WATERMARK_NONE ? max : max - SEC(1);
  fx->ran_watermark = prev == DP_WATERMARK_NONE ? prev : prev - SEC(1);
  fx->ex.batch_id = s;
  fixture_step(fx, long_cells[s], LONG_ROWS, false);
}

TEST(deltas_across_store_rebuilds_replay_exactly) {
  for (int s = 0; s < LONG_STEPS; s++)
    for (int r = 0; r < LONG_ROWS; r++) {
      int64_t *c = &long_cells[s][r * 3];
      c[0] = r % 3;
      c[1] = (r * 7 + s) % 50;
      c[2] = (int64_t)s * SEC(2) + (int64_t)r * 13000;
    }
  const char *sql = DDL "SELECT auction, window_start, window_end, collect(price), "
                        "last_value(CAST(price AS STRING)), max(CAST(price AS STRING)), count(*) " TUMBLE5 BYWIN;
  fixture fa, fb, fr;
  CHECK(fixture_open(&fa, sql, DP_P_AGGREGATE, DP_P_WATERMARK, DP_MODE_APPEND));
  CHECK(fixture_open(&fb, sql, DP_P_AGGREGATE, DP_P_WATERMARK, DP_MODE_APPEND));
  CHECK(fixture_open(&fr, sql, DP_P_AGGREGATE, DP_P_WATERMARK, DP_MODE_APPEND));
  dp_buf base = DP_BUF_INIT;
  dp_rd rd;
  int mismatches = 0;
  for (int s = 0; s < LONG_STEPS; s++) {
    long_step(&fa, s);
    long_step(&fb, s);
    dp_buf full = DP_BUF_INIT, delta = DP_BUF_INIT, mine = DP_BUF_INIT;
    CHECK_EQ(save(&fa, &full), DIPPER_OK);
    if (s == 0) {
      CHECK_EQ(save(&fb, &base), DIPPER_OK);
      CHECK_EQ(restore(&fr, base.data, base.len, &rd), DIPPER_OK);
    } else {
      CHECK_EQ(save_delta(&fb, &delta), DIPPER_OK);
      CHECK_EQ(apply_delta(&fr, delta.data, delta.len, &rd), DIPPER_OK);
      CHECK(dp_rd_done(&rd));
    }
    /* fr only replays: save_delta of fb and save_state of fr are its bases */
    CHECK_EQ(fr.top->cls->save_state(fr.top, &mine), DIPPER_OK);
    if (!same_buf(&mine, &full)) {
      fprintf(stderr, "long run: batch %d differs after its delta\n", s);
      mismatches++;
    }
    dp_buf_free(&full);
    dp_buf_free(&delta);
    dp_buf_free(&mine);
  }
  CHECK_EQ(mismatches, 0);
  dp_buf_free(&base);
  fixture_close(&fa);
  fixture_close(&fb);
  fixture_close(&fr);
}

/* ---- damage ---- */

/* Apply `p` as delta j of r's chain on a fresh operator: the code, with a
** diagnostic when refused; an accepted delta then runs the later batches. */
static int try_delta(fixture *fx, const delta_run *r, int j, const uint8_t *p, size_t n) {
  /* the hint reads the damaged delta's head too: it must pass over it */
  CHECK(restore_chain_x(fx, r, j, true, p, n));
  int before = fx->diags.count;
  dp_rd rd;
  int rc = apply_delta(fx, p, n, &rd);
  if (rc) {
    CHECK_EQ(rc, DIPPER_CORRUPT);
    CHECK(fx->diags.count > before);
    CHECK(rd.bad);
  } else {
    dp_buf outs[NSTEPS] = {0};
    run_steps(fx, r->at[j] + 1, NSTEPS, outs);
    for (int s = 0; s < NSTEPS; s++) dp_buf_free(&outs[s]);
  }
  fx->diags.count = 0;
  return rc;
}

static void fix_crc(uint8_t *p, size_t n) {
  uint32_t crc = dp_crc32c(0, p, n - 4);
  for (int i = 0; i < 4; i++) p[n - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
}

/* The cases damaged: sessions with DISTINCT, the store kinds, DISTINCT and
** FILTER, TUMBLE with every kind; the delta after batch 5 (drops, merges). */
static const int damaged_cases[] = {12, 13, 4, 5, 7};

TEST(every_truncation_and_bit_flip_of_a_delta_is_refused) {
  make_data();
  for (size_t w = 0; w < sizeof damaged_cases / sizeof damaged_cases[0]; w++) {
    int ci = damaged_cases[w], j = 4; /* the delta after batch 5 */
    delta_run r;
    make_run(ci, 1, &r);
    CHECK_EQ(r.at[j], 5);
    const dp_buf *d = &r.delta[j];
    fixture fx;
    CHECK(open_case(&fx, &cases[ci]));
    int accepted = 0;
    for (size_t len = 0; len < d->len; len++) {
      uint8_t *p = malloc(len ? len : 1); /* exactly len bytes: ASan sees past them */
      memcpy(p, d->data, len);
      accepted += try_delta(&fx, &r, j, p, len) == DIPPER_OK;
      free(p);
    }
    uint8_t *p = malloc(d->len);
    for (size_t i = 0; i < d->len; i++)
      for (int bit = 0; bit < 8; bit++) {
        memcpy(p, d->data, d->len);
        p[i] ^= (uint8_t)(1u << bit);
        accepted += try_delta(&fx, &r, j, p, d->len) == DIPPER_OK;
      }
    CHECK_EQ(accepted, 0);
    CHECK_EQ(try_delta(&fx, &r, j, (const uint8_t *)d->data, d->len), DIPPER_OK);
    free(p);
    fixture_close(&fx);
    free_run(&r);
  }
}

TEST(damage_behind_a_good_checksum_is_refused_or_harmless) {
  make_data();
  for (size_t w = 0; w < sizeof damaged_cases / sizeof damaged_cases[0]; w++) {
    int ci = damaged_cases[w], j = 4;
    delta_run r;
    make_run(ci, 1, &r);
    const dp_buf *d = &r.delta[j];
    fixture fx;
    CHECK(open_case(&fx, &cases[ci]));
    uint8_t *p = malloc(d->len);
    int refused = 0, tried = 0;
    /* past the version byte and the body's length, every bit of the first
    ** 64 bytes, then one bit a byte */
    for (size_t i = 2; i + 4 < d->len; i++)
      for (int bit = 0; bit < 8; bit++) {
        if (i >= 64 && bit != (int)(i % 8)) continue;
        memcpy(p, d->data, d->len);
        p[i] ^= (uint8_t)(1u << bit);
        fix_crc(p, d->len);
        refused += try_delta(&fx, &r, j, p, d->len) != DIPPER_OK;
        tried++;
      }
    if (getenv("AGG_STATE_VERBOSE")) fprintf(stderr, "case %d: %d of %d flips refused\n", ci, refused, tried);
    /* ids, counts, tags and chains show; a flipped sum, double or string
    ** byte is a value like any other (case 7: a quarter refused) */
    CHECK(refused > tried / 5);
    free(p);
    fixture_close(&fx);
    free_run(&r);
  }
}

TEST(a_whole_state_is_no_delta_and_a_delta_no_whole_state) {
  make_data();
  delta_run r;
  make_run(12, 1, &r);
  fixture fx;
  CHECK(open_case(&fx, &cases[12]));
  CHECK(restore_chain(&fx, &r, 0));
  dp_rd rd;
  CHECK_EQ(apply_delta(&fx, r.full[0].data, r.full[0].len, &rd), DIPPER_CORRUPT);
  CHECK(fx.diags.count == 1 && strstr(fx.diags.items[0].message, "delta of version 6"));
  fx.diags.count = 0;
  reopen_top(&fx);
  CHECK_EQ(restore(&fx, r.delta[0].data, r.delta[0].len, &rd), DIPPER_CORRUPT);
  CHECK(fx.diags.count == 1 && strstr(fx.diags.items[0].message, "state of version 5"));
  fx.diags.count = 0;
  /* a delta on a state it does not follow: the base's counts differ */
  CHECK(restore_chain(&fx, &r, 0));
  CHECK_EQ(apply_delta(&fx, r.delta[3].data, r.delta[3].len, &rd), DIPPER_CORRUPT);
  CHECK(fx.diags.count == 1 && strstr(fx.diags.items[0].message, "does not read back"));
  fixture_close(&fx);
  free_run(&r);
}

/* ---- cost ---- */

#define BIG 100000

static int64_t big_cells[BIG * 3];

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* BIG groups in batch 0; batch 1 touches 10 of them, batch 2 adds 10 more:
** each delta under 1% of the whole state, and base + deltas restore it. */
static void check_big(const char *sql, unsigned mode) {
  fixture fx, fr;
  CHECK(fixture_open(&fx, sql, DP_P_AGGREGATE, DP_P_WATERMARK, mode));
  for (int64_t i = 0; i < BIG; i++) {
    big_cells[i * 3] = i;
    big_cells[i * 3 + 1] = i % 40;
    big_cells[i * 3 + 2] = i * 1000;
  }
  fixture_step(&fx, big_cells, BIG, false);
  dp_buf full = DP_BUF_INIT, d1 = DP_BUF_INIT, d2 = DP_BUF_INIT, again = DP_BUF_INIT,
         straight = DP_BUF_INIT;
  double t0 = now_ms();
  CHECK_EQ(save(&fx, &full), DIPPER_OK);
  double t1 = now_ms();
  int64_t touch[10 * 3];
  for (int k = 0; k < 10; k++) {
    touch[k * 3] = (int64_t)k * 9973 % BIG;
    touch[k * 3 + 1] = 7 + k;
    touch[k * 3 + 2] = (int64_t)(BIG + k) * 1000;
  }
  fixture_step(&fx, touch, 10, false);
  double t2 = now_ms();
  CHECK_EQ(save_delta(&fx, &d1), DIPPER_OK);
  double t3 = now_ms();
  for (int k = 0; k < 10; k++) touch[k * 3] = BIG + k;
  fixture_step(&fx, touch, 10, false);
  CHECK_EQ(save_delta(&fx, &d2), DIPPER_OK);
  CHECK_EQ(save(&fx, &straight), DIPPER_OK);
  fprintf(stderr, "%d groups: whole state %zu bytes (%.2f ms); delta of 10 changed %zu bytes (%.3f ms), "
                  "of 10 new %zu bytes\n",
          BIG, full.len, t1 - t0, d1.len, t3 - t2, d2.len);
  CHECK(d1.len * 100 < full.len);
  CHECK(d2.len * 100 < full.len);
  CHECK(fixture_open(&fr, sql, DP_P_AGGREGATE, DP_P_WATERMARK, mode));
  dp_rd rd;
  CHECK_EQ(restore(&fr, full.data, full.len, &rd), DIPPER_OK);
  CHECK_EQ(apply_delta(&fr, d1.data, d1.len, &rd), DIPPER_OK);
  CHECK_EQ(apply_delta(&fr, d2.data, d2.len, &rd), DIPPER_OK);
  CHECK_EQ(save(&fr, &again), DIPPER_OK);
  CHECK(same_buf(&again, &straight));
  fixture_close(&fx);
  fixture_close(&fr);
  dp_buf_free(&full);
  dp_buf_free(&d1);
  dp_buf_free(&d2);
  dp_buf_free(&again);
  dp_buf_free(&straight);
}

TEST(a_delta_costs_what_the_batch_changed) {
  check_big(DDL "SELECT auction, count(*), sum(price), min(price), max(price), avg(price), "
                "count(DISTINCT price) FROM bid GROUP BY auction;",
            DP_MODE_UPDATE);
  check_big(DDL "SELECT auction, max(CAST(price AS STRING)), listagg(CAST(price AS STRING)), "
                "collect(price), last_value(price), approx_count_distinct(price) FROM bid "
                "GROUP BY auction;",
            DP_MODE_UPDATE);
}

int main(void) { return RUN_TESTS(); }
