/*
** window_test.c — window assignment: the arithmetic of every window kind
** (window_int.h) and the WINDOW operator's output columns, with offsets,
** NULL times and session gaps.
*/
#include "agg_fixture.h"
#include "exec/window_int.h"

#define DDL                                                                                   \
  "CREATE TABLE bid (auction BIGINT, price BIGINT, ts TIMESTAMP(3), "                          \
  "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='memory');\n"

TEST(tumble_start_floors_toward_minus_infinity) {
  CHECK_EQ(dp_window_tumble_start(SEC(7), SEC(5), 0), SEC(5));
  CHECK_EQ(dp_window_tumble_start(SEC(5), SEC(5), 0), SEC(5));
  CHECK_EQ(dp_window_tumble_start(SEC(4) + 999999, SEC(5), 0), 0);
  CHECK_EQ(dp_window_tumble_start(-1, SEC(5), 0), -SEC(5));
  CHECK_EQ(dp_window_tumble_start(SEC(7), SEC(5), SEC(1)), SEC(6));
  CHECK_EQ(dp_window_tumble_start(SEC(0), SEC(5), SEC(1)), -SEC(4));
}

TEST(assign_every_kind) {
  dp_window_spec hop = {.kind = DP_WIN_HOP, .size = SEC(10), .slide = SEC(2)};
  int64_t s[16], e[16];
  int n = dp_window_assign(&hop, SEC(7), s, e, 16);
  CHECK_EQ(n, 5);
  CHECK_EQ(s[0], -SEC(2));
  CHECK_EQ(e[0], SEC(8));
  CHECK_EQ(s[4], SEC(6));
  CHECK_EQ(dp_window_assign(&hop, SEC(7), s, e, 4), -1);
  dp_window_spec hop3 = {.kind = DP_WIN_HOP, .size = SEC(5), .slide = SEC(2)};
  n = dp_window_assign(&hop3, SEC(4), s, e, 16); /* [0,5) [2,7) [4,9) */
  CHECK_EQ(n, 3);
  CHECK_EQ(s[0], 0);
  CHECK_EQ(s[2], SEC(4));
  dp_window_spec cum = {.kind = DP_WIN_CUMULATE, .size = SEC(10), .slide = SEC(2)};
  n = dp_window_assign(&cum, SEC(3), s, e, 16); /* [0,4) [0,6) [0,8) [0,10) */
  CHECK_EQ(n, 4);
  CHECK_EQ(s[3], 0);
  CHECK_EQ(e[0], SEC(4));
  CHECK_EQ(e[3], SEC(10));
  n = dp_window_assign(&cum, SEC(4), s, e, 16); /* 4 is not in [0,4) */
  CHECK_EQ(n, 3);
  CHECK_EQ(e[0], SEC(6));
  dp_window_spec cumo = {.kind = DP_WIN_CUMULATE, .size = SEC(10), .slide = SEC(5), .offset = SEC(1)};
  n = dp_window_assign(&cumo, SEC(12), s, e, 16); /* [11,16) [11,21) */
  CHECK_EQ(n, 2);
  CHECK_EQ(s[0], SEC(11));
  CHECK_EQ(e[1], SEC(21));
  dp_window_spec ses = {.kind = DP_WIN_SESSION, .gap = SEC(5)};
  n = dp_window_assign(&ses, SEC(3), s, e, 16);
  CHECK_EQ(n, 1);
  CHECK_EQ(s[0], SEC(3));
  CHECK_EQ(e[0], SEC(8));
}

/* The operator agrees with the reference arithmetic, row for row. */
static void check_operator(const char *sql, int expect_per_row) {
  fixture fx;
  CHECK(fixture_open(&fx, sql, DP_P_WINDOW, DP_P_WATERMARK, DP_MODE_APPEND));
  if (!fx.nops) return;
  const dp_window_spec *w = &fx.ops[0]->plan->u.window;
  int64_t cells[] = {1, 10, SEC(7), 2, 20, INT64_MIN, 3, 30, SEC(13) + 500, 4, 40, -SEC(3)};
  dp_batch *out = fixture_step(&fx, cells, 4, false);
  CHECK(out != NULL);
  if (!out) {
    fixture_close(&fx);
    return;
  }
  CHECK_EQ(out->ncols, 6);
  int64_t want = 0;
  for (int r = 0; r < 4; r++) {
    if (cells[r * 3 + 2] == INT64_MIN) continue;
    int64_t s[64], e[64];
    int n = dp_window_assign(w, cells[r * 3 + 2], s, e, 64);
    if (expect_per_row) CHECK_EQ(n, expect_per_row);
    for (int k = 0; k < n; k++, want++) {
      if (want >= out->nrows) break;
      CHECK_EQ(cell_i64(out, 0, want), cells[r * 3]);   /* input columns ride along */
      CHECK_EQ(cell_i64(out, 1, want), cells[r * 3 + 1]);
      CHECK_EQ(cell_i64(out, 3, want), s[k]);
      CHECK_EQ(cell_i64(out, 4, want), e[k]);
      CHECK_EQ(cell_i64(out, 5, want), e[k] - 1);
    }
  }
  CHECK_EQ(out->nrows, want); /* the NULL time row is gone */
  CHECK_EQ(fx.ops[0]->metrics.rows_in, 4);
  CHECK_EQ(fx.ops[0]->metrics.rows_out, want);
  fixture_close(&fx);
}

TEST(operator_tumble) {
  check_operator(DDL "SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '5' SECOND));", 1);
}
TEST(operator_tumble_offset) {
  check_operator(DDL "SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '5' SECOND, "
                     "INTERVAL '2' SECOND));",
                 1);
}
TEST(operator_hop) {
  check_operator(DDL "SELECT * FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECOND, "
                     "INTERVAL '10' SECOND));",
                 5);
}
TEST(operator_cumulate) {
  check_operator(DDL "SELECT * FROM TABLE(CUMULATE(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECOND, "
                     "INTERVAL '10' SECOND));",
                 0);
}
TEST(operator_session) {
  check_operator(DDL "SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY auction, DESCRIPTOR(ts), "
                     "INTERVAL '5' SECOND));",
                 1);
}

TEST(tumble_without_nulls_borrows_input) {
  fixture fx;
  CHECK(fixture_open(&fx, DDL "SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '5' SECOND));",
                     DP_P_WINDOW, DP_P_WATERMARK, DP_MODE_APPEND));
  int64_t cells[] = {1, 10, SEC(7), 2, 20, SEC(3)};
  dp_batch *out = fixture_step(&fx, cells, 2, false);
  CHECK(out && out->cols[0] == fx.fs.pending->cols[0]);
  CHECK(out && out->nrows == 2 && cell_i64(out, 3, 1) == 0);
  fixture_close(&fx);
}

int main(void) { return RUN_TESTS(); }
