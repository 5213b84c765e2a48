/*
** rocks_distinct_inline_test.c — DISTINCT aggregates over RocksDB whose
** sets cross the inline bound ('dipper.rocksdb.distinct-inline-bytes';
** agg_rocks.c's DISTINCT section: a group's few values in its record, past
** the bound pair entries of their own).
**
** Each case runs a script twice, in memory and over RocksDB with a small
** bound, and the rows must be the same batch by batch; then the RocksDB run
** is resumed after every batch from its saved states, from chains of deltas
** and from every damaged blob (ops_state_harness.h's check_backends).  A
** bound of one byte spills every set at its first store (the layout of pair
** entries only); twelve bytes keeps a group's first values (up to three
** here) inline and spills it later in the script (checked by hand with a
** trace of the spills and inline loads), with the write-back cache and without it
** (every record and pair read from RocksDB each batch).  A spilled group
** that goes (its window closes, or the TTL expires it) and comes back starts
** inline again.  Retractions do not reach these sets: an aggregation over an
** updating input keeps its DISTINCT values in memory (agg_retract.c).
*/
#define OPS_STATE_AGGREGATE
#include "exec/state_rocks.h"
#define OPS_STATE_BACKENDS
#include "ops_state_harness.h"

#define T(s) "2024-01-01 00:00:" s
#define EV_DDL                                                                           \
  "CREATE TABLE ev (k INT, v STRING, n INT, ts TIMESTAMP(3),"                            \
  " WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'memory');\n"
#define DV(k, v, n, s) "{\"k\": " #k ", \"v\": \"" v "\", \"n\": " n ", \"ts\": \"" T(s) "\"}\n"
/* rocks_distinct_test.c's batches: key 1's set grows to seven values, key
** 2's to three, key 3 keeps one */
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
#define BOUND(b) "SET 'dipper.rocksdb.distinct-inline-bytes' = '" b "';\n"

static const char *const bounds[] = {"1", "12"};

static void check_with(const char *sql, const char *const data[MAX_BATCHES][MAX_TABLES],
                       int nbatches, const int64_t *clock) {
  static char text[8192];
  snprintf(text, sizeof text, "SET 'state.backend' = 'rocksdb';\n%s", sql);
  script mem = {sql, {"ev"}, {{NULL}}, nbatches, clock}, rocks = mem;
  memcpy(mem.data, data, sizeof mem.data);
  memcpy(rocks.data, data, sizeof rocks.data);
  rocks.sql = text;
  check_backends(&mem, &rocks, "agg-0", NULL);
}

static void check_bounds(const char *query, const int64_t *clock) {
  static const char *const data[MAX_BATCHES][MAX_TABLES] = DV_BATCHES;
  static char sql[8192];
  for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++)
    for (int nocache = 0; nocache < 2; nocache++) {
      snprintf(sql, sizeof sql, "%sSET 'dipper.rocksdb.distinct-inline-bytes' = '%s';\n%s",
               nocache ? NOCACHE : "", bounds[b], query);
      check_with(sql, data, 6, clock);
    }
}

/* Groups that stay: key 1 spills as it grows (twelve bytes), its later rows
** looked up among its pair entries; key 3 stays inline. */
TEST(distinct_sets_of_groups_that_stay_cross_the_bound) {
  check_bounds(EV_DDL "SELECT k, " DV_AGGS " FROM ev GROUP BY k;", NULL);
}

/* Groups that close: a window's spilled pairs go with it (the range
** tombstone), an inline one's with its record. */
TEST(distinct_sets_of_groups_that_close_cross_the_bound) {
  check_bounds(EV_DDL "SELECT k, window_start, " DV_AGGS
                      " FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
                      " GROUP BY k, window_start, window_end;",
               NULL);
}

/* Under a TTL of 10 s: key 1 spills in b1 (a, b, c, d by then), its rows of
** b2 are looked up (a found, e new); idle from 102 it expires at 115, comes
** back with a alone (inline, counted afresh) and spills again in b4.  Key 2
** (x, then y) stays inline. */
TEST(a_spilled_group_that_expires_comes_back_inline) {
  static const char *const data[MAX_BATCHES][MAX_TABLES] = {
      {DV(1, "a", "1", "01") DV(2, "x", "1", "01")},
      {DV(1, "b", "2", "02") DV(1, "c", "3", "02") DV(1, "d", "4", "02")},
      {DV(1, "a", "1", "03") DV(1, "e", "5", "03") DV(2, "x", "1", "03")},
      {DV(1, "a", "1", "04")},
      {DV(1, "b", "2", "05") DV(1, "c", "3", "05") DV(1, "d", "4", "05") DV(1, "e", "5", "05")
           DV(2, "y", "2", "05")},
      {DV(1, "a", "1", "06") DV(1, "f", "6", "06")}};
  static const int64_t clock[] = {100, 101, 102, 115, 116, 117, 118};
  static char sql[8192];
  for (int nocache = 0; nocache < 2; nocache++) {
    snprintf(sql, sizeof sql, "%s" BOUND("12") "SET 'table.exec.state.ttl' = '10 s';\n" EV_DDL
             "SELECT k, COUNT(DISTINCT v), SUM(DISTINCT n), COUNT(*) FROM ev GROUP BY k;",
             nocache ? NOCACHE : "");
    check_with(sql, data, 6, clock);
  }
}

int main(void) {
  (void)check_script; /* the harness's; the cases here run check_backends */
  return RUN_TESTS();
}
