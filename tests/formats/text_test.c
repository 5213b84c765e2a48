/*
** text_test.c — formats/text.c: the text of intervals (Flink's, as the
** console and CSV write them) and reading it back.
*/
#include <stdint.h>
#include <string.h>

#include "core/buf.h"
#include "core/types.h"
#include "core/vector.h"
#include "formats/formats.h"
#include "test.h"

static const char *text_of(dp_type_kind kind, int64_t x) {
  static dp_buf out = DP_BUF_INIT;
  out.len = 0;
  dp_vector *v = dp_vector_new(dp_type_of(kind), 1);
  if (!v || dp_vector_append_i64(v, x)) return "?";
  dp_text_put_value(&out, v, 0, "NULL", 0);
  dp_vector_free(v);
  return dp_buf_cstr(&out);
}

/* The text read back as the type: its integer, or INT64_MIN when refused. */
static int64_t read_back(dp_type_kind kind, const char *text) {
  dp_vector *v = dp_vector_new(dp_type_of(kind), 1);
  int64_t x = INT64_MIN;
  if (v && dp_text_append_scalar(v, text, strlen(text)) == DIPPER_OK) x = dp_vector_get_i64(v, 0);
  dp_vector_free(v);
  return x;
}

TEST(day_time_intervals_print_as_flink_does) {
  CHECK_STR(text_of(DP_T_INTERVAL_DT, INT64_C(90000000)), "+0 00:01:30.000");
  CHECK_STR(text_of(DP_T_INTERVAL_DT, 0), "+0 00:00:00.000");
  CHECK_STR(text_of(DP_T_INTERVAL_DT, INT64_C(-273906789000)), "-3 04:05:06.789");
  CHECK_STR(text_of(DP_T_INTERVAL_DT, INT64_C(250)), "+0 00:00:00.000250");
  CHECK_STR(text_of(DP_T_INTERVAL_DT, INT64_C(86400000000) * 400), "+400 00:00:00.000");
  CHECK_STR(text_of(DP_T_INTERVAL_DT, INT64_MIN), "-106751991 04:00:54.775808");
}

TEST(year_month_intervals_print_as_flink_does) {
  CHECK_STR(text_of(DP_T_INTERVAL_YM, 14), "+1-02");
  CHECK_STR(text_of(DP_T_INTERVAL_YM, -12), "-1-00");
  CHECK_STR(text_of(DP_T_INTERVAL_YM, 5), "+0-05");
}

TEST(the_text_reads_back) {
  const int64_t dt[] = {0, 90000000, -273906789000, 250, -1, INT64_C(86400000000) * 400};
  for (size_t i = 0; i < sizeof dt / sizeof dt[0]; i++)
    CHECK_EQ(read_back(DP_T_INTERVAL_DT, text_of(DP_T_INTERVAL_DT, dt[i])), dt[i]);
  const int64_t ym[] = {0, 14, -12, 5, 1200};
  for (size_t i = 0; i < sizeof ym / sizeof ym[0]; i++)
    CHECK_EQ(read_back(DP_T_INTERVAL_YM, text_of(DP_T_INTERVAL_YM, ym[i])), ym[i]);
  CHECK_EQ(read_back(DP_T_INTERVAL_DT, "90000000"), 90000000); /* the integer form too */
}

int main(void) { return RUN_TESTS(); }
