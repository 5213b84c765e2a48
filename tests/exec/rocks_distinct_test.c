/*
** rocks_distinct_test.c — DISTINCT aggregates over RocksDB ('state.backend' =
** 'rocksdb'; agg_rocks.c's DISTINCT section, op_aggregate.c's session
** records).
**
** Outside session windows a group's values are entries of their own, a
** (group, value) pair with its count, looked up when a batch brings a value
** new to the batch; in a session window each session's values are in its
** key's record and follow its merges.  Each case runs a script of
** micro-batches twice, in memory and over RocksDB, and the rows must be the
** same batch by batch; then the RocksDB run is resumed after every batch
** from its saved states, from chains of deltas, and from every damaged blob
** (ops_state_harness.h's check_backends), as rocks_state_test.c does.
*/
#define OPS_STATE_AGGREGATE
#include "exec/state_rocks.h"
#define OPS_STATE_BACKENDS
#include "ops_state_harness.h"

#define T(s) "2024-01-01 00:00:" s
#define EV_DDL                                                                           \
  "CREATE TABLE ev (k INT, v STRING, n INT, ts TIMESTAMP(3),"                            \
  " WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'memory');\n"

/* Several values per group, repeated within a batch and across batches,
** NULLs (n), a value that comes back after its window closed (z of key 3). */
#define DV(k, v, n, s) "{\"k\": " #k ", \"v\": \"" v "\", \"n\": " n ", \"ts\": \"" T(s) "\"}\n"
#define DV_BATCHES                                                                            \
  {{DV(1, "a", "1", "01") DV(1, "b", "2", "02") DV(1, "a", "1", "02") DV(2, "a", "null", "03")}, \
   {DV(1, "a", "1", "04") DV(1, "c", "3", "05") DV(2, "b", "2", "05") DV(2, "b", "2", "06")},   \
   {DV(1, "b", "2", "07") DV(1, "d", "4", "08") DV(2, "a", "1", "09") DV(3, "z", "9", "09")},   \
   {DV(1, "e", "5", "11") DV(1, "a", "1", "12") DV(2, "c", "null", "12")},                    \
   {DV(1, "e", "5", "14") DV(2, "a", "1", "15") DV(1, "f", "6", "16") DV(1, "a", "1", "17")},   \
   {DV(3, "z", "9", "21") DV(1, "g", "7", "22")}}
#define DV_AGGS \
  "COUNT(DISTINCT v), SUM(DISTINCT n), COUNT(DISTINCT n), COUNT(*), LISTAGG(DISTINCT v)"
#define NOCACHE "SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n"
#define SESSION_OF(part, gap)                                                            \
  " FROM TABLE(SESSION(TABLE ev" part ", DESCRIPTOR(ts), INTERVAL '" gap "' SECOND))"

/* sql over RocksDB gives the in-memory rows batch by batch (clock: the
** batches' processing times, or NULL) and passes the harness's resumes. */
static void check_many(const char *sql, const int64_t *clock) {
  static char text[8192];
  snprintf(text, sizeof text, "SET 'state.backend' = 'rocksdb';\n%s", sql);
  script mem = {sql, {"ev"}, DV_BATCHES, 6, clock}, rocks = {text, {"ev"}, DV_BATCHES, 6, clock};
  check_backends(&mem, &rocks, "agg-0", NULL);
}

/* Groups that stay (updated each batch), through the write-back cache and
** without it (every group and pair in RocksDB each batch). */
TEST(distinct_aggregates_of_groups_that_stay) {
  check_many(EV_DDL "SELECT k, " DV_AGGS " FROM ev GROUP BY k;", NULL);
  check_many(NOCACHE EV_DDL "SELECT k, " DV_AGGS " FROM ev GROUP BY k;", NULL);
}

/* Groups that close: their pairs go with them (one range tombstone per
** batch), windows in append and update mode, and an event-time key. */
TEST(distinct_aggregates_of_groups_that_close) {
  check_many(EV_DDL "SELECT k, window_start, " DV_AGGS
                    " FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
                    " GROUP BY k, window_start, window_end;",
             NULL);
  check_many(NOCACHE EV_DDL "SELECT k, window_start, " DV_AGGS
                            " FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
                            " GROUP BY k, window_start, window_end;",
             NULL);
  check_many("SET 'dipper.output-mode' = 'update';\n" EV_DDL "SELECT window_end, " DV_AGGS
             " FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))"
             " GROUP BY window_start, window_end;",
             NULL);
  check_many(NOCACHE EV_DDL "SELECT ts, COUNT(DISTINCT v), COUNT(DISTINCT k) FROM ev GROUP BY ts;",
             NULL);
}

/* Under a TTL of 10 s: key 2 (last written at 103) expires at 113 and key 3
** (103) too; key 3 comes back at 120 and starts from nothing, z counted
** again, so its pairs went with it. */
TEST(distinct_aggregates_under_a_ttl) {
  static const int64_t clock[] = {100, 102, 103, 106, 113, 120, 121};
  check_many("SET 'table.exec.state.ttl' = '10 s';\n" EV_DDL "SELECT k, " DV_AGGS
             " FROM ev GROUP BY k;",
             clock);
  check_many(NOCACHE "SET 'table.exec.state.ttl' = '10 s';\n" EV_DDL "SELECT k, " DV_AGGS
                     " FROM ev GROUP BY k;",
             clock);
}

/* Session windows: a session's values in its key's record, following its
** merges (a merged session's values the surviving one lacks count once;
** LISTAGG(DISTINCT) shows they are folded in the order memory folds them). */
TEST(distinct_aggregates_in_session_windows) {
  check_many(EV_DDL "SELECT k, window_start, window_end, " DV_AGGS SESSION_OF(" PARTITION BY k", "2")
             " GROUP BY k, window_start, window_end;",
             NULL);
  check_many(NOCACHE EV_DDL "SELECT k, window_start, window_end, " DV_AGGS
             SESSION_OF(" PARTITION BY k", "2") " GROUP BY k, window_start, window_end;",
             NULL);
  check_many(EV_DDL "SELECT window_start, window_end, " DV_AGGS ", COUNT(DISTINCT k)"
             SESSION_OF("", "3") " GROUP BY window_start, window_end;",
             NULL);
  check_many(NOCACHE "SET 'dipper.output-mode' = 'update';\n" EV_DDL
             "SELECT k, window_start, window_end, " DV_AGGS SESSION_OF(" PARTITION BY k", "5")
             " GROUP BY k, window_start, window_end;",
             NULL);
}

int main(void) {
  (void)check_script; /* the harness's; the cases here run check_many */
  return RUN_TESTS();
}
