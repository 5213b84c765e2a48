/*
** streaming_windows_test.c — window aggregations on a real Spark
** (127.0.0.1:15002), from a watched directory of JSON files into Spark's
** memory sink, through dipper's compile pipeline and the streaming backend
** (translate_stream.h, streaming.h).
**
** The window kinds run side by side, one query each over the same watched
** directory, fed three files, each processed by every query before the
** next: file 1 holds events out of order, file 2 an
** event that moves the watermark past every window worth checking, file 3 a
** late event (which must be dropped) and one more.  A window aggregation in
** append mode emits a window once the watermark in effect passes its end, so
** after file 3 every window of file 1's events is out, whether or not Spark
** adds no-data batches: each query's windows are asserted, sums exactly.
** Then two inputs under Spark's global watermark, its policy min and max.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "spark/stream_rules.h"
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
  "WITH ('connector' = 'filesystem', 'path' = '%s/in', 'format' = 'json',\n" \
  "  'source.monitor-interval' = '1 us');\n"

/* One query: its memory sink `name`, the script's body (the sink's CREATE
** TABLE and the INSERT), which rows to compare and the rows wanted. */
typedef struct wcase {
  const char *name;
  const char *body;
  const char *where;
  const char *const *want;
  int nwant;
} wcase;

/* Start every case's query side by side over the same directory (a test
** costs one query's time), feed FIRST, SECOND and THIRD, each processed by
** every query before the next, stop them, then compare each sink. */
static void run_windows(const char *what, const wcase *cases, int n) {
  enum { MAXQ = 10 };
  st_env e;
  CHECK_EQ(st_open(&e, what), 0);
  CHECK_EQ(st_mkdir(&e, "in"), 0);
  dp_sq q[MAXQ];
  memset(q, 0, sizeof q);
  int ok = 1;
  for (int i = 0; i < n && i < MAXQ && ok; i++) {
    char sql[4096];
    snprintf(sql, sizeof sql, SOURCE "%s", e.dir, e.dir, cases[i].body);
    int rc = st_start(&e, sql, &q[i]);
    if (rc) fprintf(stderr, "%s: the query did not start\n", cases[i].name);
    CHECK_EQ(rc, 0);
    ok &= rc == 0;
  }
  static const char *const files[] = {FIRST, SECOND, THIRD};
  for (int f = 0; f < 3 && ok; f++) {
    char name[16];
    snprintf(name, sizeof name, "%d.json", f + 1);
    CHECK_EQ(st_write_file(&e, "in", name, files[f]), 0);
    for (int i = 0; i < n && i < MAXQ && ok; i++) {
      int rc = st_drain(&e, &q[i]);
      CHECK_EQ(rc, 0);
      ok &= rc == 0;
    }
  }
  for (int i = 0; i < n && i < MAXQ; i++) {
    if (q[i].id[0]) CHECK_EQ(st_finish(&e, &q[i], 0), 0);
    dp_sq_free(&q[i]);
  }
  for (int i = 0; i < n && ok; i++) {
    char **rows = NULL;
    int nr = st_table_json(&e, cases[i].name, cases[i].where, &rows);
    int bad = st_expect(rows, nr, cases[i].want, cases[i].nwant);
    if (bad) fprintf(stderr, "  (in %s)\n", cases[i].name);
    CHECK_EQ(bad, 0);
    for (int k = 0; k < nr; k++) free(rows[k]);
    free(rows);
  }
  st_close(&e);
}

#define ROW(k, s, e, v) "{\"k\":\"" k "\",\"ws\":\"2024-01-01 " s "\",\"we\":\"2024-01-01 " e "\",\"total\":" #v "}"
#define OUT(name) \
  "CREATE TABLE " name " (k STRING, ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT)\n" \
  "  WITH ('connector' = 'memory');\n" \
  "INSERT INTO " name " "

TEST(window_kinds) {
  static const char *const tumble[] = {
      ROW("a", "00:00:00", "00:01:00", 35), ROW("a", "00:01:00", "00:02:00", 4),
      ROW("b", "00:00:00", "00:01:00", 8),  ROW("b", "00:02:00", "00:03:00", 16),
  };
  /* 1-minute windows every 30 s: each event is in two */
  static const char *const hop[] = {
      "{\"k\":\"a\",\"ws\":\"2023-12-31 23:59:30\",\"we\":\"2024-01-01 00:00:30\",\"total\":33}",
      ROW("a", "00:00:00", "00:01:00", 35), ROW("a", "00:00:30", "00:01:30", 6),
      ROW("a", "00:01:00", "00:02:00", 4),
      ROW("b", "00:00:00", "00:01:00", 8),  ROW("b", "00:00:30", "00:01:30", 8),
      ROW("b", "00:01:30", "00:02:30", 16), ROW("b", "00:02:00", "00:03:00", 16),
  };
  /* Gap 25 s for key a, 2 min for the others: a's 00:05 and 00:20 make
     [00:05, 00:45); 00:50 starts a new one that 01:10 extends to 01:35; b's
     00:30 and 02:20 are 110 s apart: one session [00:30, 04:20). */
  static const char *const session[] = {
      ROW("a", "00:00:05", "00:00:45", 33), ROW("a", "00:00:50", "00:01:35", 6),
      ROW("b", "00:00:30", "00:04:20", 24),
  };
  /* 1-minute sums per key, then per 2 minutes over their window_time: the
     outer window [00:00, 00:02) holds a's 35 and 4 and b's 8; [00:02, 00:04)
     b's 16. */
  static const char *const chained[] = {
      "{\"ws\":\"2024-01-01 00:00:00\",\"we\":\"2024-01-01 00:02:00\",\"total\":47}",
      "{\"ws\":\"2024-01-01 00:02:00\",\"we\":\"2024-01-01 00:04:00\",\"total\":16}",
  };
  /* A window offset: 1-minute windows starting at 15 s past the minute. */
  static const char *const offset[] = {
      "{\"k\":\"a\",\"ws\":\"2023-12-31 23:59:15\",\"we\":\"2024-01-01 00:00:15\",\"total\":1}",
      ROW("a", "00:00:15", "00:01:15", 38),
      ROW("b", "00:00:15", "00:01:15", 8), ROW("b", "00:02:15", "00:03:15", 16),
  };
  const wcase cases[] = {
      {"w_tumble",
       OUT("w_tumble") "SELECT k, window_start, window_end, SUM(v)\n"
       "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE))\n"
       "GROUP BY k, window_start, window_end",
       "k <> 'z'", tumble, 4},
      {"w_hop",
       OUT("w_hop") "SELECT k, window_start, window_end, SUM(v)\n"
       "FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))\n"
       "GROUP BY k, window_start, window_end",
       "k <> 'z'", hop, 8},
      {"w_session",
       OUT("w_session") "SELECT k, session_window.start, session_window.end, SUM(v)\n"
       "FROM ev GROUP BY k, session_window(ts, CASE WHEN k = 'a' THEN '25 seconds' "
       "ELSE '2 minutes' END)",
       "k <> 'z'", session, 3},
      {"w_chained",
       "CREATE TABLE w_chained (ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT)\n"
       "  WITH ('connector' = 'memory');\n"
       "CREATE VIEW per_minute AS SELECT k, window_start AS s1, window_end AS e1,\n"
       "  window_time, SUM(v) AS s\n"
       "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE))\n"
       "GROUP BY k, window_start, window_end, window_time;\n"
       "INSERT INTO w_chained SELECT window_start, window_end, SUM(s)\n"
       "FROM TABLE(TUMBLE(TABLE per_minute, DESCRIPTOR(window_time), INTERVAL '2' MINUTE))\n"
       "GROUP BY window_start, window_end",
       "ws < '2024-01-01 00:05:00'", chained, 2},
      /* the same windows in Flink's legacy and in Spark's spelling */
      {"w_legacy",
       OUT("w_legacy") "SELECT k, TUMBLE_START(ts, INTERVAL '1' MINUTE), TUMBLE_END(ts, INTERVAL '1' MINUTE),\n"
       "  SUM(v) FROM ev GROUP BY k, TUMBLE(ts, INTERVAL '1' MINUTE)",
       "k <> 'z'", tumble, 4},
      {"w_spark",
       OUT("w_spark") "SELECT k, window.start, window.end, SUM(v)\n"
       "FROM ev GROUP BY k, window(ts, '1 minute', '30 seconds')",
       "k <> 'z'", hop, 8},
      {"w_offset",
       OUT("w_offset") "SELECT k, window_start, window_end, SUM(v)\n"
       "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '15' SECOND))\n"
       "GROUP BY k, window_start, window_end",
       "k <> 'z'", offset, 4},
  };
  run_windows("windows", cases, (int)(sizeof cases / sizeof cases[0]));
}

/* ---- two inputs: Spark's global watermark, its policy set by dipper ---- */

#define TWO_SOURCES \
  "SET 'execution.checkpointing.dir' = '%s/ck';\n" \
  "SET 'dipper.spark.multiple-watermark-policy' = '%s';\n" \
  "CREATE TABLE l (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '10' SECOND)\n" \
  "WITH ('connector' = 'filesystem', 'path' = '%s/l', 'format' = 'json',\n" \
  "  'source.monitor-interval' = '1 us');\n" \
  "CREATE TABLE r (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '10' SECOND)\n" \
  "WITH ('connector' = 'filesystem', 'path' = '%s/r', 'format' = 'json',\n" \
  "  'source.monitor-interval' = '1 us');\n" \
  "CREATE TABLE %s (ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT) WITH ('connector' = 'memory');\n" \
  "CREATE VIEW both_ AS SELECT * FROM l UNION ALL SELECT * FROM r;\n" \
  "INSERT INTO %s SELECT window_start, window_end, SUM(v)\n" \
  "FROM TABLE(TUMBLE(TABLE both_, DESCRIPTOR(ts), INTERVAL '1' MINUTE))\n" \
  "GROUP BY window_start, window_end"

TEST(global_watermark_of_two_inputs_min_and_max) {
  /* l reaches 00:00:30 and r 00:02:00 in file 1; then only l moves on, to
     00:10:00.  min: the watermark is r's, 00:01:50, and closes [00:00,
     00:01) only; max: l's, 00:09:50, closes [00:02, 00:03) as well. */
  static const char L1[] = EV("a", 1, "00:00:10") EV("b", 2, "00:00:30");
  static const char R1[] = EV("a", 4, "00:00:40") EV("b", 8, "00:02:00");
  static const char L2[] = EV("z", 16, "00:10:00");
  static const char *const want_min[] = {
      "{\"ws\":\"2024-01-01 00:00:00\",\"we\":\"2024-01-01 00:01:00\",\"total\":7}"};
  static const char *const want_max[] = {
      "{\"ws\":\"2024-01-01 00:00:00\",\"we\":\"2024-01-01 00:01:00\",\"total\":7}",
      "{\"ws\":\"2024-01-01 00:02:00\",\"we\":\"2024-01-01 00:03:00\",\"total\":8}"};
  static const char *const policy[2] = {"min", "max"}, *const sink[2] = {"w_min", "w_max"};
  st_env e;
  CHECK_EQ(st_open(&e, "wm_policy"), 0);
  CHECK_EQ(st_mkdir(&e, "l"), 0);
  CHECK_EQ(st_mkdir(&e, "r"), 0);
  dp_sq q[2];
  memset(q, 0, sizeof q);
  int ok = 1;
  for (int i = 0; i < 2 && ok; i++) {
    char sql[4096];
    snprintf(sql, sizeof sql, TWO_SOURCES, e.dir, policy[i], e.dir, e.dir, sink[i], sink[i]);
    /* st_start sets the policy (dp_spark_stream_confs) before each start */
    int rc = st_start(&e, sql, &q[i]);
    CHECK_EQ(rc, 0);
    ok &= rc == 0;
  }
  CHECK_EQ(st_write_file(&e, "l", "1.json", L1), 0);
  CHECK_EQ(st_write_file(&e, "r", "1.json", R1), 0);
  for (int i = 0; i < 2 && ok; i++) CHECK_EQ(st_drain(&e, &q[i]), 0);
  CHECK_EQ(st_write_file(&e, "l", "2.json", L2), 0);
  for (int i = 0; i < 2 && ok; i++) CHECK_EQ(st_drain(&e, &q[i]), 0);
  for (int i = 0; i < 2; i++) {
    if (q[i].id[0]) CHECK_EQ(st_finish(&e, &q[i], 0), 0);
    dp_sq_free(&q[i]);
  }
  for (int i = 0; i < 2 && ok; i++) {
    char **rows = NULL;
    int n = st_table_json(&e, sink[i], NULL, &rows);
    int bad = i == 0 ? st_expect(rows, n, want_min, 1) : st_expect(rows, n, want_max, 2);
    if (bad) fprintf(stderr, "  (policy %s)\n", policy[i]);
    CHECK_EQ(bad, 0);
    for (int k = 0; k < n; k++) free(rows[k]);
    free(rows);
  }
  st_close(&e);
}

int main(void) { return RUN_TESTS(); }
