/*
** agg_state_test.c — the aggregation's checkpoints (op_aggregate.c's
** save_state/restore_state, agg_func.c's dp_agg_state_save/_load).
**
** For each query, a fixed sequence of micro-batches (out-of-order rows,
** NULLs, repeated values, late rows, an empty batch, the final flush) runs
** straight through (run A); then, for every k, run B runs k batches, saves
** the state, closes the operators, opens fresh ones for the same plan,
** restores and runs the rest.  B's outputs after k must equal A's byte for
** byte (both encoded with vector_codec.h), and the restored state must save
** to the very blob it was restored from.  The watermarks of the resumed
** run are set as the driver's checkpoint would restore them.
**
** Damage: every truncation and every single-bit flip of a blob is refused
** with DIPPER_CORRUPT and a diagnostic; with the checksum fixed up after a
** flip (so the body's own checks are what stands), the blob is refused or
** restores to an operator that runs the remaining batches — never a crash,
** a hang or a leak under the sanitizers.  Blobs of another version, of
** another query, and restores into a used operator are refused.
*/
#include "agg_state_cases.h"

/* ---- resuming gives the same answers ---- */

static void check_case(int ci) {
  const query_case *q = &cases[ci];
  dp_buf a[NSTEPS] = {0}, b[NSTEPS] = {0};
  fixture fa;
  CHECK(open_case(&fa, q));
  if (!fa.nops) return;
  CHECK(fa.top->cls->save_state && fa.top->cls->restore_state);
  CHECK(run_steps(&fa, 0, NSTEPS, a));
  fixture_close(&fa);
  int any_output = 0;
  for (int s = 0; s < NSTEPS; s++) any_output += a[s].len > 1;
  CHECK(any_output >= 2);
  if (getenv("AGG_STATE_VERBOSE") || any_output < 2) fprintf(stderr, "case %d: %d outputs\n", ci, any_output);
  int mismatches = 0;
  for (int k = 0; k < NSTEPS; k++) {
    fixture fb, fc;
    CHECK(open_case(&fb, q));
    CHECK(run_steps(&fb, 0, k, b));
    dp_buf blob = DP_BUF_INIT, again = DP_BUF_INIT;
    CHECK_EQ(save(&fb, &blob), DIPPER_OK);
    fixture_close(&fb);
    CHECK(open_case(&fc, q));
    dp_rd rd;
    int rc = restore(&fc, blob.data, blob.len, &rd);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) fprintf(stderr, "case %d k %d: %s\n", ci, k, fc.diags.count ? fc.diags.items[0].message : "?");
    CHECK(dp_rd_done(&rd));
    /* the restored state is the saved one, exactly */
    CHECK_EQ(save(&fc, &again), DIPPER_OK);
    CHECK(same_buf(&blob, &again));
    CHECK(run_steps(&fc, k, NSTEPS, b));
    for (int s = k; s < NSTEPS; s++)
      if (!same_buf(&a[s], &b[s])) {
        fprintf(stderr, "case %d: resumed after %d batches, batch %d differs\n", ci, k, s);
        mismatches++;
      }
    fixture_close(&fc);
    dp_buf_free(&blob);
    dp_buf_free(&again);
  }
  CHECK_EQ(mismatches, 0);
  for (int s = 0; s < NSTEPS; s++) {
    dp_buf_free(&a[s]);
    dp_buf_free(&b[s]);
  }
}

TEST(resuming_after_every_batch_gives_the_same_output) {
  make_data();
  for (int ci = 0; ci < NCASES; ci++) check_case(ci);
}

TEST(a_checkpoint_in_the_middle_holds_state) {
  /* not a vacuous pass: halfway through, the blob holds groups and sessions */
  make_data();
  fixture fx;
  dp_buf outs[NSTEPS] = {0}, blob = DP_BUF_INIT;
  CHECK(open_case(&fx, &cases[12]));
  if (!fx.nops) return;
  CHECK(run_steps(&fx, 0, 4, outs));
  CHECK(fx.top->metrics.state_rows > 2);
  int64_t rows = fx.top->metrics.state_rows;
  CHECK_EQ(save(&fx, &blob), DIPPER_OK);
  CHECK(blob.len > 200);
  reopen_top(&fx);
  dp_rd rd;
  CHECK_EQ(restore(&fx, blob.data, blob.len, &rd), DIPPER_OK);
  CHECK_EQ(fx.top->metrics.state_rows, rows);
  fixture_close(&fx);
  dp_buf_free(&blob);
  for (int s = 0; s < NSTEPS; s++) dp_buf_free(&outs[s]);
}

/* ---- damage ---- */

/* The blob of case ci after k batches. */
static void blob_of(int ci, int k, dp_buf *blob) {
  fixture fx;
  dp_buf outs[NSTEPS] = {0};
  CHECK(open_case(&fx, &cases[ci]));
  CHECK(run_steps(&fx, 0, k, outs));
  CHECK_EQ(save(&fx, blob), DIPPER_OK);
  fixture_close(&fx);
  for (int s = 0; s < NSTEPS; s++) dp_buf_free(&outs[s]);
}

/* Restore `p` into a fresh operator of fx: the code, with a diagnostic
** when refused; an accepted blob then runs the batches after k. */
static int try_blob(fixture *fx, const uint8_t *p, size_t n, int k) {
  reopen_top(fx);
  int before = fx->diags.count;
  dp_rd rd;
  int rc = restore(fx, p, n, &rd);
  if (rc) {
    CHECK_EQ(rc, DIPPER_CORRUPT);
    CHECK(fx->diags.count > before);
    CHECK(rd.bad);
  } else {
    dp_buf outs[NSTEPS] = {0};
    run_steps(fx, k, NSTEPS, outs);
    for (int s = 0; s < NSTEPS; s++) dp_buf_free(&outs[s]);
  }
  fx->diags.count = 0;
  return rc;
}

static void fix_crc(uint8_t *p, size_t n) {
  uint32_t crc = dp_crc32c(0, p, n - 4);
  for (int i = 0; i < 4; i++) p[n - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
}

TEST(every_truncation_and_bit_flip_is_refused) {
  make_data();
  int which[] = {12, 13, 4, 5};
  for (size_t w = 0; w < sizeof which / sizeof which[0]; w++) {
    int ci = which[w], k = 5;
    dp_buf blob = DP_BUF_INIT;
    blob_of(ci, k, &blob);
    fixture fx;
    CHECK(open_case(&fx, &cases[ci]));
    int accepted = 0;
    for (size_t len = 0; len < blob.len; len++) {
      uint8_t *p = malloc(len ? len : 1); /* exactly len bytes: ASan sees past them */
      memcpy(p, blob.data, len);
      accepted += try_blob(&fx, p, len, k) == DIPPER_OK;
      free(p);
    }
    uint8_t *p = malloc(blob.len);
    for (size_t i = 0; i < blob.len; i++)
      for (int bit = 0; bit < 8; bit++) {
        memcpy(p, blob.data, blob.len);
        p[i] ^= (uint8_t)(1u << bit);
        accepted += try_blob(&fx, p, blob.len, k) == DIPPER_OK;
      }
    CHECK_EQ(accepted, 0);
    /* the untouched blob still restores in this fixture */
    CHECK_EQ(try_blob(&fx, (const uint8_t *)blob.data, blob.len, k), DIPPER_OK);
    free(p);
    fixture_close(&fx);
    dp_buf_free(&blob);
  }
}

TEST(damage_behind_a_good_checksum_is_refused_or_harmless) {
  make_data();
  int which[] = {12, 13, 4, 5, 6};
  for (size_t w = 0; w < sizeof which / sizeof which[0]; w++) {
    int ci = which[w], k = 5;
    dp_buf blob = DP_BUF_INIT;
    blob_of(ci, k, &blob);
    fixture fx;
    CHECK(open_case(&fx, &cases[ci]));
    uint8_t *p = malloc(blob.len);
    int refused = 0, tried = 0;
    /* the version byte and body length are plain: flip the body's bits,
    ** one per byte (every bit position in turn), all of the first 64 */
    for (size_t i = 2; i + 4 < blob.len; i++)
      for (int bit = 0; bit < 8; bit++) {
        if (i >= 64 && bit != (int)(i % 8)) continue;
        memcpy(p, blob.data, blob.len);
        p[i] ^= (uint8_t)(1u << bit);
        fix_crc(p, blob.len);
        refused += try_blob(&fx, p, blob.len, k) != DIPPER_OK;
        tried++;
      }
    CHECK(refused > tried / 4); /* counts, ids, tags, chains: most flips show */
    free(p);
    fixture_close(&fx);
    dp_buf_free(&blob);
  }
}

TEST(other_versions_queries_and_used_operators_are_refused) {
  make_data();
  dp_buf blob = DP_BUF_INIT;
  blob_of(12, 3, &blob);
  fixture fx;
  CHECK(open_case(&fx, &cases[12]));
  /* another version: named in the diagnostic */
  uint8_t *p = malloc(blob.len);
  memcpy(p, blob.data, blob.len);
  p[0] = 9;
  fix_crc(p, blob.len);
  dp_rd rd;
  CHECK_EQ(restore(&fx, p, blob.len, &rd), DIPPER_CORRUPT);
  CHECK(fx.diags.count == 1 && strstr(fx.diags.items[0].message, "version 9"));
  fx.diags.count = 0;
  free(p);
  /* into an operator that has state already */
  reopen_top(&fx);
  CHECK_EQ(restore(&fx, blob.data, blob.len, &rd), DIPPER_OK);
  CHECK_EQ(restore(&fx, blob.data, blob.len, &rd), DIPPER_MISUSE);
  fixture_close(&fx);
  /* the blob of another query, same shape or not */
  int others[] = {8, 13, 7, 0};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    fixture fo;
    CHECK(open_case(&fo, &cases[others[i]]));
    CHECK_EQ(restore(&fo, blob.data, blob.len, &rd), DIPPER_CORRUPT);
    CHECK(fo.diags.count == 1 && strstr(fo.diags.items[0].message, "does not read back"));
    fixture_close(&fo);
  }
  dp_buf_free(&blob);
}

int main(void) { return RUN_TESTS(); }
