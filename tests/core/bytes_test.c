/*
** bytes_test.c — the binary codec: every integer width and varint edge
** round-trips, a reader never reads past its bytes (each cut of a record is
** bad, never a crash), damaged counts are refused, and CRC-32C matches its
** published check value.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "test.h"

static void write_sample(dp_buf *b) {
  dp_put_u8(b, 0xab);
  dp_put_u32(b, 0xdeadbeefu);
  dp_put_u64(b, 0x0123456789abcdefull);
  dp_put_uvar(b, 0);
  dp_put_uvar(b, 127);
  dp_put_uvar(b, 128);
  dp_put_uvar(b, UINT64_MAX);
  dp_put_svar(b, -1);
  dp_put_svar(b, INT64_MIN);
  dp_put_svar(b, INT64_MAX);
  dp_put_f64(b, -0.25);
  dp_put_bytes(b, "abc", 3);
  dp_put_str(b, NULL);
  dp_put_str(b, "päss");
}

TEST(values_round_trip) {
  dp_buf b = DP_BUF_INIT;
  write_sample(&b);
  CHECK(!b.oom);
  dp_rd r;
  dp_rd_init(&r, b.data, b.len);
  CHECK_EQ(dp_get_u8(&r), 0xab);
  CHECK_EQ(dp_get_u32(&r), 0xdeadbeefu);
  CHECK(dp_get_u64(&r) == 0x0123456789abcdefull);
  CHECK_EQ(dp_get_uvar(&r), 0);
  CHECK_EQ(dp_get_uvar(&r), 127);
  CHECK_EQ(dp_get_uvar(&r), 128);
  CHECK(dp_get_uvar(&r) == UINT64_MAX);
  CHECK_EQ(dp_get_svar(&r), -1);
  CHECK(dp_get_svar(&r) == INT64_MIN);
  CHECK(dp_get_svar(&r) == INT64_MAX);
  CHECK(dp_get_f64(&r) == -0.25);
  size_t n;
  const uint8_t *p = dp_get_bytes(&r, &n);
  CHECK(p && n == 3 && memcmp(p, "abc", 3) == 0);
  char *s = dp_get_strdup(&r, NULL);
  CHECK_STR(s, "");
  free(s);
  s = dp_get_strdup(&r, NULL);
  CHECK_STR(s, "päss");
  free(s);
  CHECK(dp_rd_done(&r));
  dp_buf_free(&b);
}

TEST(every_cut_reads_bad_and_stays_in_bounds) {
  dp_buf b = DP_BUF_INIT;
  write_sample(&b);
  for (size_t cut = 0; cut < b.len; cut++) {
    /* a copy of exactly `cut` bytes, so ASan sees a read past them */
    uint8_t *copy = malloc(cut ? cut : 1);
    memcpy(copy, b.data, cut);
    dp_rd r;
    dp_rd_init(&r, copy, cut);
    dp_get_u8(&r), dp_get_u32(&r), dp_get_u64(&r);
    for (int i = 0; i < 4; i++) dp_get_uvar(&r);
    for (int i = 0; i < 3; i++) dp_get_svar(&r);
    dp_get_f64(&r);
    size_t n;
    dp_get_bytes(&r, &n);
    free(dp_get_strdup(&r, NULL));
    free(dp_get_strdup(&r, NULL));
    CHECK(r.bad);
    CHECK(!dp_rd_done(&r));
    CHECK_EQ(dp_rd_left(&r), 0);
    free(copy);
  }
  dp_buf_free(&b);
}

TEST(damaged_lengths_and_counts_are_refused) {
  dp_buf b = DP_BUF_INIT;
  dp_put_uvar(&b, 1000); /* a length far past the two bytes that follow */
  dp_put_u8(&b, 1);
  dp_put_u8(&b, 2);
  dp_rd r;
  dp_rd_init(&r, b.data, b.len);
  size_t n = 99;
  CHECK(dp_get_bytes(&r, &n) == NULL);
  CHECK(r.bad && n == 0);
  dp_rd_init(&r, b.data, b.len);
  CHECK_EQ(dp_get_count(&r, 8), 0); /* 1000 items of 8 bytes cannot be there */
  CHECK(r.bad);
  dp_rd_init(&r, b.data, b.len);
  CHECK_EQ(dp_get_count(&r, 0), 0);
  CHECK(r.bad);
  /* an eleven-byte varint is no varint */
  uint8_t long_var[11];
  memset(long_var, 0xff, sizeof long_var);
  dp_rd_init(&r, long_var, sizeof long_var);
  dp_get_uvar(&r);
  CHECK(r.bad);
  /* the tenth byte may only hold the top bit */
  uint8_t over[10];
  memset(over, 0xff, 9);
  over[9] = 0x02;
  dp_rd_init(&r, over, sizeof over);
  dp_get_uvar(&r);
  CHECK(r.bad);
  dp_buf_free(&b);
}

TEST(crc32c_check_value) {
  /* the catalogue's check value of CRC-32C over "123456789" */
  CHECK(dp_crc32c(0, "123456789", 9) == 0xE3069283u);
  /* in pieces, the same */
  uint32_t c = dp_crc32c(0, "1234", 4);
  CHECK(dp_crc32c(c, "56789", 5) == 0xE3069283u);
  CHECK(dp_crc32c(0, "", 0) == 0);
  CHECK(dp_crc32c_portable(0, "123456789", 9) == 0xE3069283u);
  /* the instruction and the table agree at every length and alignment */
  uint8_t buf[300];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 131u + 7u);
  int same = 1;
  for (size_t off = 0; off < 9; off++)
    for (size_t n = 0; off + n <= sizeof buf; n += 7)
      same &= dp_crc32c(5, buf + off, n) == dp_crc32c_portable(5, buf + off, n);
  CHECK(same);
}

/* Columns of dp_put_i64s: each width, gathered and scattered through an
** index, the extremes of int64; every cut reads bad. */
TEST(int64_columns_round_trip_at_every_width) {
  enum { NV = 300 };
  static const int64_t spans[] = {0, 200, 60000, 4000000000LL, INT64_MAX};
  int64_t v[NV], got[NV], at[NV];
  for (size_t w = 0; w < sizeof spans / sizeof spans[0]; w++) {
    for (int64_t k = 0; k < NV; k++) {
      v[k] = -7 + (spans[w] ? (int64_t)(((uint64_t)k * 2654435761u) % (uint64_t)spans[w]) : 0);
      at[k] = NV - 1 - k;
    }
    if (w == 4) v[3] = INT64_MIN, v[4] = INT64_MAX;
    for (int scattered = 0; scattered < 2; scattered++) {
      const int64_t *idx = scattered ? at : NULL;
      dp_buf b = DP_BUF_INIT;
      dp_put_i64s(&b, v, idx, NV);
      CHECK(!b.oom);
      static const size_t widths[] = {0, 1, 2, 4, 8};
      CHECK(b.len <= 11 + NV * widths[w]);
      dp_rd r;
      dp_rd_init(&r, b.data, b.len);
      memset(got, 0, sizeof got);
      CHECK(dp_get_i64s(&r, got, idx, NV));
      CHECK(dp_rd_done(&r));
      CHECK(memcmp(got, v, sizeof v) == 0);
      for (size_t cut = 0; cut < b.len; cut++) {
        dp_rd_init(&r, b.data, cut);
        CHECK(!dp_get_i64s(&r, got, idx, NV));
        CHECK(r.bad);
      }
      dp_buf_free(&b);
    }
  }
  uint8_t odd[] = {0, 3}; /* width 3 is none of the widths */
  dp_rd r;
  dp_rd_init(&r, odd, sizeof odd);
  CHECK(!dp_get_i64s(&r, got, NULL, 0));
}

int main(void) { return RUN_TESTS(); }
