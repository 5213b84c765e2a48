/*
** streaming_windows_test.c — window aggregations on a real Spark
** (127.0.0.1:15002), from a watched directory of JSON files into Spark's
** memory sink, through dipper's compile pipeline and the streaming backend
** (translate_stream.h, streaming.h).
**
** Each test starts its query once and feeds it three files, processing all
** that is available after each: file 1 holds events out of order, file 2 an
** event that moves the watermark past every window worth checking, file 3 a
** late event (which must be dropped) and one more.  A window aggregation in
** append mode emits a window once the watermark in effect passes its end, so
** after file 3 every window of file 1's events is out, whether or not Spark
** adds no-data batches: each test asserts all of them, sums exactly.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "spark/streaming.h"
#include "spark/translate_stream.h"
#include "test.h"
#include "spark/kafka_util.c" /* one source file per test target: the helpers come along */

/* Events of key k and amount v at 2024-01-01 <time>. */
#define EV(k, v, t) "{\"k\":\"" k "\",\"v\":" #v ",\"ts\":\"2024-01-01 " t "\"}\n"

/* Run 1's events: out of order, two keys. */
static const char FIRST[] = EV("a", 1, "00:00:05") EV("a", 2, "00:00:50") EV("b", 8, "00:00:30")
    EV("a", 4, "00:01:10") EV("b", 16, "00:02:20") EV("a", 32, "00:00:20");
/* File 2: one that moves the watermark to 00:09:50.  File 3: a late one
** (Spark judges late rows by the watermark of the batch before: 00:02:10
** or later by then) and one more.  Key z only moves time: its windows may
** or may not have closed (that depends on Spark's no-data batches), so the
** rows are read back without it (a filter in the query would not do: Spark
** pushes it below the watermark, and z would no longer move time). */
static const char SECOND[] = EV("z", 128, "00:10:00");
static const char THIRD[] = EV("a", 64, "00:00:01") EV("z", 256, "00:20:00");

#define SOURCE \
  "SET 'execution.checkpointing.dir' = '%s/ck';\n" \
  "CREATE TABLE ev (k STRING, v INT, ts TIMESTAMP(3),\n" \
  "  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND)\n" \
  "WITH ('connector' = 'filesystem', 'path' = '%s/in', 'format' = 'json');\n"

/* Start `body` (the sink's CREATE TABLE and the INSERT), feed it FIRST,
** SECOND and THIRD, stop it, then compare the memory table `out` with want. */
static void run_windows(const char *what, const char *body, const char *where,
                        const char *const *want, int nwant) {
  st_env e;
  CHECK_EQ(st_open(&e, what), 0);
  char sql[4096];
  snprintf(sql, sizeof sql, SOURCE "%s", e.dir, e.dir, body);
  CHECK_EQ(st_mkdir(&e, "in"), 0);
  dp_sq q;
  int rc = st_start(&e, sql, &q);
  CHECK_EQ(rc, 0);
  static const char *const files[] = {FIRST, SECOND, THIRD};
  for (int i = 0; i < 3 && rc == 0; i++) {
    char name[16];
    snprintf(name, sizeof name, "%d.json", i + 1);
    CHECK_EQ(st_write_file(&e, "in", name, files[i]), 0);
    CHECK_EQ(rc = st_drain(&e, &q), 0);
  }
  if (q.id[0]) CHECK_EQ(st_finish(&e, &q, 0), 0);
  dp_sq_free(&q);
  char **rows = NULL;
  int n = st_table_json(&e, "out", where, &rows);
  CHECK_EQ(st_expect(rows, n, want, nwant), 0);
  for (int i = 0; i < n; i++) free(rows[i]);
  free(rows);
  st_close(&e);
}

#define ROW(k, s, e, v) "{\"k\":\"" k "\",\"ws\":\"2024-01-01 " s "\",\"we\":\"2024-01-01 " e "\",\"total\":" #v "}"

TEST(tumble) {
  static const char *const want[] = {
      ROW("a", "00:00:00", "00:01:00", 35), ROW("a", "00:01:00", "00:02:00", 4),
      ROW("b", "00:00:00", "00:01:00", 8),  ROW("b", "00:02:00", "00:03:00", 16),
  };
  run_windows("tumble",
              "CREATE TABLE out (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT)\n"
              "  WITH ('connector' = 'memory');\n"
              "INSERT INTO out SELECT k, window_start, window_end, SUM(v)\n"
              "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE))\n"
              "GROUP BY k, window_start, window_end",
              "k <> 'z'", want, 4);
}

TEST(hop) {
  /* 1-minute windows every 30 s: each event is in two */
  static const char *const want[] = {
      "{\"k\":\"a\",\"ws\":\"2023-12-31 23:59:30\",\"we\":\"2024-01-01 00:00:30\",\"total\":33}",
      ROW("a", "00:00:00", "00:01:00", 35), ROW("a", "00:00:30", "00:01:30", 6),
      ROW("a", "00:01:00", "00:02:00", 4),
      ROW("b", "00:00:00", "00:01:00", 8),  ROW("b", "00:00:30", "00:01:30", 8),
      ROW("b", "00:01:30", "00:02:30", 16), ROW("b", "00:02:00", "00:03:00", 16),
  };
  run_windows("hop",
              "CREATE TABLE out (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT)\n"
              "  WITH ('connector' = 'memory');\n"
              "INSERT INTO out SELECT k, window_start, window_end, SUM(v)\n"
              "FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))\n"
              "GROUP BY k, window_start, window_end",
              "k <> 'z'", want, 8);
}

TEST(session_with_gap_expression) {
  /* Gap 25 s for key a, 2 min for the others: a's 00:05 and 00:20 make
     [00:05, 00:45); 00:50 starts a new one that 01:10 extends to 01:35; b's
     00:30 and 02:20 are 110 s apart: one session [00:30, 04:20). */
  static const char *const want[] = {
      ROW("a", "00:00:05", "00:00:45", 33), ROW("a", "00:00:50", "00:01:35", 6),
      ROW("b", "00:00:30", "00:04:20", 24),
  };
  run_windows("session",
              "CREATE TABLE out (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT)\n"
              "  WITH ('connector' = 'memory');\n"
              "INSERT INTO out SELECT k, session_window.start, session_window.end, SUM(v)\n"
              "FROM ev GROUP BY k, session_window(ts, CASE WHEN k = 'a' THEN '25 seconds' "
              "ELSE '2 minutes' END)",
              "k <> 'z'", want, 3);
}

TEST(chained_windows_over_window_time) {
  /* 1-minute sums per key, then per 2 minutes over their window_time: the
     outer window [00:00, 00:02) holds a's 35 and 4 and b's 8; [00:02, 00:04)
     b's 16. */
  static const char *const want[] = {
      "{\"ws\":\"2024-01-01 00:00:00\",\"we\":\"2024-01-01 00:02:00\",\"total\":47}",
      "{\"ws\":\"2024-01-01 00:02:00\",\"we\":\"2024-01-01 00:04:00\",\"total\":16}",
  };
  run_windows("chained",
              "CREATE TABLE out (ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT)\n"
              "  WITH ('connector' = 'memory');\n"
              "CREATE VIEW per_minute AS SELECT k, window_start AS s1, window_end AS e1,\n"
              "  window_time, SUM(v) AS s\n"
              "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE))\n"
              "GROUP BY k, window_start, window_end, window_time;\n"
              "INSERT INTO out SELECT window_start, window_end, SUM(s)\n"
              "FROM TABLE(TUMBLE(TABLE per_minute, DESCRIPTOR(window_time), INTERVAL '2' MINUTE))\n"
              "GROUP BY window_start, window_end",
              "ws < '2024-01-01 00:05:00'", want, 2);
}

int main(void) { return RUN_TESTS(); }
