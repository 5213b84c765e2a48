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
*/
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

int main(void) {
  (void)check_script; /* the harness's; the cases here run check_backends */
  return RUN_TESTS();
}
