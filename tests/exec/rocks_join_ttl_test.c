/*
** rocks_join_ttl_test.c — a regular join's state TTL over RocksDB
** ('table.exec.state.ttl' with 'state.backend' = 'rocksdb': op_join.c's
** rocks_expire_ttl, the rows stored at their batch's start in
** state_rocks.h's time index).
**
** The script runs in memory and over RocksDB on the test's clock, and the
** rows must be those worked out by hand below, batch by batch, on both;
** then the RocksDB run is resumed after every batch from its saved states
** and damaged blobs (ops_state_harness.h's check_backends).
**
** A TTL set or dropped at a restart: the join's rows restored without their
** times count from the restore on both backends (op_join.c's rocks_from);
** a GROUP BY over RocksDB refuses the change, naming the option.
*/
#define OPS_STATE_AGGREGATE /* the GROUP BY's blob saved too */
#define OPS_STATE_BACKENDS
#include "exec/state_rocks.h"
#include "ops_state_harness.h"

#define T(s) "2024-01-01 00:00:" s
#define EV(k, v, s) "{\"k\": " #k ", \"v\": \"" v "\", \"ts\": \"" T(s) "\"}\n"
#define LR_DDL                                                                           \
  "CREATE TABLE l (k INT, v STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)"            \
  " WITH ('connector' = 'memory');\n"                                                    \
  "CREATE TABLE r (k INT, v STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)"            \
  " WITH ('connector' = 'memory');\n"

/* TTL 10 s, batches at 100, 104, 108, 113, 120 s (the final one 121):
**   b0 l 1 a, l 2 b; r 3 x
**   b1 r 1 y      meets a (stored at 100, 4 s old)
**   b2 l 3 c      meets x (100, 8 s); r 2 z meets b (100, 8 s)
**   b3 r 1 w      a expired at 110: none; l 2 d meets z (108)
**   b4 l 1 e      y (104) expired at 114, w (113) meets; r 3 u: c (108)
**                 expired at 118, x at 110: none */
#define TTL_BATCHES                                                                      \
  {{EV(1, "a", "00") EV(2, "b", "01"), EV(3, "x", "02")},                                \
   {NULL, EV(1, "y", "03")},                                                             \
   {EV(3, "c", "04"), EV(2, "z", "05")},                                                 \
   {EV(2, "d", "07"), EV(1, "w", "06")},                                                 \
   {EV(1, "e", "08"), EV(3, "u", "09")}}

TEST(a_regular_join_under_a_ttl_over_rocksdb) {
  static const int64_t clock[] = {100, 104, 108, 113, 120, 121};
  const char *sql = "SET 'table.exec.state.ttl' = '10 s';\n" LR_DDL
                    "SELECT l.v, r.v FROM l JOIN r ON l.k = r.k;";
  static char text[4096];
  snprintf(text, sizeof text, "SET 'state.backend' = 'rocksdb';\n%s", sql);
  script mem = {sql, {"l", "r"}, TTL_BATCHES, 5, clock};
  script rocks = {text, {"l", "r"}, TTL_BATCHES, 5, clock};
  check_backends(&mem, &rocks, "join-0",
                 "#0\n#1\n'a', 'y'\n#2\n'b', 'z'\n'c', 'x'\n#3\n'd', 'z'\n#4\n'e', 'w'\n#5\n");
}

/* Both sides' TTLs per side (STATE_TTL hints): the left keeps its rows 5 s,
** the right 20 s, so b3's w (right, 113) meets nothing on the left but b4's
** e; and x (right, 100) still meets c at 108 and would meet a later row. */
TEST(a_ttl_per_side_over_rocksdb) {
  static const int64_t clock[] = {100, 104, 108, 113, 120, 121};
  const char *sql = LR_DDL "SELECT /*+ STATE_TTL('l' = '5 s', 'r' = '20 s') */ l.v, r.v"
                           " FROM l JOIN r ON l.k = r.k;";
  static char text[4096];
  snprintf(text, sizeof text, "SET 'state.backend' = 'rocksdb';\n%s", sql);
  script mem = {sql, {"l", "r"}, TTL_BATCHES, 5, clock};
  script rocks = {text, {"l", "r"}, TTL_BATCHES, 5, clock};
  check_backends(&mem, &rocks, "join-0", NULL);
}

/* ---- a TTL set (or dropped) at a restart ----
** A run in phases: phase p runs batches [first[p], first[p + 1]) of its
** script (the last one the final batch too), after restoring every blob the
** phase before saved; its restore at the processing time of its first batch
** (memory's join counts the rows of a blob without its TTL list as inserted
** at the restore, exec.h's batch_start_time then).  The rows of all phases,
** each batch's sorted. */
static char *phased(const script *const *sc, const int *first, int nphases, const char *ckdir) {
  dp_buf all = DP_BUF_INIT;
  blobs bl;
  memset(&bl, 0, sizeof bl);
  bool ok = true;
  run_ckpt = ckdir;
  for (int p = 0; p < nphases && ok; p++) {
    run r;
    ok = run_open(&r, sc[p]);
    if (ok && p > 0) {
      r.h->ex.batch_start_time = sc[p]->clock[first[p]] * 1000000;
      ok = restore_all(&r, &bl) == DIPPER_OK;
      CHECK(ok);
    }
    free_blobs(&bl);
    int last = p + 1 < nphases ? first[p + 1] - 1 : sc[p]->nbatches;
    for (int b = first[p]; ok && b <= last; b++) ok = run_batch(&r, b) == DIPPER_OK;
    if (ok && p + 1 < nphases) save_all(&r, &bl);
    if (ok) dp_buf_printf(&all, "%s", dp_buf_cstr(&r.out));
    run_close(&r);
  }
  free_blobs(&bl);
  run_ckpt = NULL;
  char *text = ok ? sorted_batches(dp_buf_cstr(&all)) : NULL;
  dp_buf_free(&all);
  return text;
}

/* The phases in memory and over RocksDB (each script's query behind
** 'state.backend' = 'rocksdb'): the same rows, and `expect`. */
static void check_phases(const char *const *sql, const int *first, int nphases,
                         const char *const data[MAX_BATCHES][MAX_TABLES], int nbatches,
                         const int64_t *clock, const char *expect) {
  static char text[4][4096];
  script mem[4], rocks[4];
  const script *pm[4], *pr[4];
  for (int p = 0; p < nphases; p++) {
    snprintf(text[p], sizeof text[p], "SET 'state.backend' = 'rocksdb';\n%s", sql[p]);
    memset(&mem[p], 0, sizeof mem[p]);
    mem[p].sql = sql[p];
    mem[p].tables[0] = "l", mem[p].tables[1] = "r";
    memcpy(mem[p].data, data, sizeof mem[p].data);
    mem[p].nbatches = nbatches;
    mem[p].clock = clock;
    rocks[p] = mem[p];
    rocks[p].sql = text[p];
    pm[p] = &mem[p], pr[p] = &rocks[p];
  }
  char dir[] = "/tmp/dipper-ttl-restart-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char *want = phased(pm, first, nphases, NULL);
  char *got = phased(pr, first, nphases, dir);
  CHECK(want && got);
  if (want) CHECK_STR(want, expect);
  if (got) CHECK_STR(got, expect);
  free(want);
  free(got);
  CHECK_EQ(dp_remove_tree(dir), 0);
}

#define TTL10 "SET 'table.exec.state.ttl' = '10 s';\n"
#define JOIN_LR LR_DDL "SELECT l.v, r.v FROM l JOIN r ON l.k = r.k;"

/* Three batches without a TTL (at 100, 104, 108 s), then a restart at
** 130 s with a TTL of 10 s: the restored rows count as stored at 130 (a
** RocksDB row stored without the TTL is at time 0, which would have expired
** them all at 130: a, z, y, c gone).
**   b0 l 1 a, l 2 b; r 3 x     b1 r 1 y meets a     b2 l 3 c meets x; r 2 z meets b
**   -- restart at 130, TTL 10 s --
**   b3 (130) r 1 w meets a; l 2 d meets z (both restored)
**   b4 (136) l 1 e meets y (restored) and w (130)
**   b5 (141) everything stored at or before 131 expired: the restored rows
**            and b3's; r 3 u: c gone, none; r 1 v meets e (136); l 2 f: none */
TEST(a_ttl_set_at_a_restart_counts_the_restored_rows_from_the_restore) {
  static const char *const data[MAX_BATCHES][MAX_TABLES] = {
      {EV(1, "a", "00") EV(2, "b", "01"), EV(3, "x", "02")},
      {NULL, EV(1, "y", "03")},
      {EV(3, "c", "04"), EV(2, "z", "05")},
      {EV(2, "d", "07"), EV(1, "w", "06")},
      {EV(1, "e", "08"), NULL},
      {EV(2, "f", "11"), EV(3, "u", "09") EV(1, "v", "10")}};
  static const int64_t clock[] = {100, 104, 108, 130, 136, 141, 142};
  const char *sql[] = {JOIN_LR, TTL10 JOIN_LR};
  const int first[] = {0, 3};
  check_phases(sql, first, 2, data, 6, clock,
               "#0\n#1\n'a', 'y'\n#2\n'b', 'z'\n'c', 'x'\n#3\n'a', 'w'\n'd', 'z'\n"
               "#4\n'e', 'w'\n'e', 'y'\n#5\n'e', 'v'\n#6\n");
}

/* The other way and back: a TTL of 10 s (100, 104), a restart without it
** at 200 (rows kept whatever their age, new ones at time 0), a restart at
** 300 with it again: every row counts from 300, those stored under the first
** TTL (at 100 and 104) as much as those stored without one.
**   b0 l 1 a; r 2 x     b1 l 2 b meets x
**   -- 200, no TTL --   b2 r 1 y meets a (100)     b3 l 3 c, r 3 z meet
**   -- 300, TTL --      b4 r 2 w meets b (104); l 1 d meets y (time 0)
**   b5 (306) r 3 u meets c     b6 (311) everything at or before 301 gone:
**   l 3 e meets u (306) only; r 1 v: none */
TEST(a_ttl_dropped_then_set_again_at_restarts) {
  static const char *const data[MAX_BATCHES][MAX_TABLES] = {
      {EV(1, "a", "00"), EV(2, "x", "00")},
      {EV(2, "b", "01"), NULL},
      {NULL, EV(1, "y", "02")},
      {EV(3, "c", "03"), EV(3, "z", "03")},
      {EV(1, "d", "04"), EV(2, "w", "04")},
      {NULL, EV(3, "u", "05")},
      {EV(3, "e", "06"), EV(1, "v", "06")}};
  static const int64_t clock[] = {100, 104, 200, 204, 300, 306, 311, 312};
  const char *sql[] = {TTL10 JOIN_LR, JOIN_LR, TTL10 JOIN_LR};
  const int first[] = {0, 2, 4};
  check_phases(sql, first, 3, data, 7, clock,
               "#0\n#1\n'b', 'x'\n#2\n'a', 'y'\n#3\n'c', 'z'\n#4\n'b', 'w'\n'd', 'y'\n"
               "#5\n'c', 'u'\n#6\n'e', 'u'\n#7\n");
}

/* A GROUP BY over RocksDB keeps each group's last write in its value only
** under a TTL, so a restart that sets or drops the TTL is refused, the
** option named, rather than run on values of the other form. */
TEST(a_group_by_over_rocksdb_refuses_a_ttl_changed_at_a_restart) {
  static const int64_t clock[] = {100, 104, 108, 130, 136, 141, 142};
  static const char *const q[] = {
      "SET 'state.backend' = 'rocksdb';\n" LR_DDL "SELECT k, COUNT(*) FROM l GROUP BY k;",
      "SET 'state.backend' = 'rocksdb';\n" TTL10 LR_DDL "SELECT k, COUNT(*) FROM l GROUP BY k;"};
  for (int way = 0; way < 2; way++) {
    char dir[] = "/tmp/dipper-ttl-restart-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    run_ckpt = dir;
    script a = {q[way], {"l", "r"}, TTL_BATCHES, 5, clock}, b = a;
    b.sql = q[1 - way];
    run r;
    blobs bl;
    memset(&bl, 0, sizeof bl);
    bool ok = run_open(&r, &a);
    for (int i = 0; ok && i < 2; i++) ok = run_batch(&r, i) == DIPPER_OK;
    if (ok) save_all(&r, &bl);
    run_close(&r);
    if (ok && run_open(&r, &b)) {
      CHECK_EQ(restore_all(&r, &bl), DIPPER_CORRUPT);
      const char *msg = r.h->diags.count ? r.h->diags.items[0].message : "";
      CHECK(strstr(msg, "'table.exec.state.ttl'") != NULL);
      CHECK(strstr(msg, way ? "written with a state TTL" : "written without a state TTL") != NULL);
      CHECK(strstr(msg, "fresh checkpoint folder") != NULL);
    }
    run_close(&r);
    free_blobs(&bl);
    run_ckpt = NULL;
    CHECK_EQ(dp_remove_tree(dir), 0);
  }
}

int main(void) {
  (void)check_script; /* the harness's; the cases here run check_backends */
  return RUN_TESTS();
}
