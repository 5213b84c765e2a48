/*
** rocks_state_test.c — aggregations, deduplications, DISTINCT and window Top-N over
** RocksDB
** ('state.backend' = 'rocksdb': agg_rocks.c, op_dedup.c's RocksDB section,
** state_rocks.h's keyed entries).
**
** Each case runs a script of micro-batches (ops_state_harness.h) twice, in
** memory and over RocksDB: batch by batch the rows must be the same (each
** batch's rows sorted: the RocksDB path emits closed groups in key order).
** Then the RocksDB run passes the harness's checkpoint checks: resumed after
** every batch from its saved states (the blobs name RocksDB checkpoints in a
** folder of the test's own), from chains of deltas, and every truncated or
** damaged blob refused or restored, never a crash (DISTINCT likewise).
** The cases run on both backends through check_backends
** (ops_state_harness.h), as the joins of ops_state_test.c do.  An operator
** that does not take the option (OVER) keeps its state in memory, with a
** note naming it.
*/
#define OPS_STATE_AGGREGATE
#include "exec/state_rocks.h"
#define OPS_STATE_BACKENDS
#include "ops_state_harness.h"

#define T(s) "2024-01-01 00:00:" s
#define EV(k, v, s) "{\"k\": " #k ", \"v\": \"" v "\", \"n\": " #k "0, \"ts\": \"" T(s) "\"}\n"

#define EV_DDL                                                                           \
  "CREATE TABLE ev (k INT, v STRING, n INT, ts TIMESTAMP(3),"                            \
  " WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'memory');\n"

/* Six batches: repeated keys and windows, a late row (k 9 at 01 s). */
#define EV_BATCHES                                                                       \
  {{EV(1, "a", "01") EV(2, "b", "02") EV(1, "a2", "03")},                                \
   {EV(3, "c", "05") EV(2, "b2", "06") EV(1, "a5", "04")},                               \
   {EV(1, "a3", "09") EV(4, "d", "10")},                                                 \
   {EV(9, "late", "01") EV(4, "d2", "11") EV(5, "e", "14")},                             \
   {EV(5, "e2", "20") EV(1, "a4", "21") EV(2, "b3", "22")},                              \
   {EV(6, "f", "33") EV(5, "e3", "34")}}

/* `sql` over RocksDB gives the in-memory rows batch by batch (and `expect`
** when not NULL), keeps its state in <folder>/rocksdb/<folder_name>, and
** passes the harness's resumes, deltas and damage (check_backends). */
static void check_rocks(const char *sql, const char *folder_name, const char *expect) {
  static char text[8192];
  snprintf(text, sizeof text, "SET 'state.backend' = 'rocksdb';\n%s", sql);
  script mem = {sql, {"ev"}, EV_BATCHES, 6}, rocks = {text, {"ev"}, EV_BATCHES, 6};
  check_backends(&mem, &rocks, folder_name, expect);
}

/* The engine's notes (DIPPER_LOG_NOTE): how many, the last. */
typedef struct notes {
  char last[1024];
  int count;
} notes;

static void on_note(void *user, int level, const char *message) {
  notes *n = user;
  if (level != DIPPER_LOG_NOTE || !strstr(message, "keeps its state in memory")) return;
  snprintf(n->last, sizeof n->last, "%s", message);
  n->count++;
}

TEST(tumbling_window_aggregation_over_rocksdb) {
  check_rocks(EV_DDL "SELECT k, window_start, COUNT(*), SUM(n), AVG(n), MIN(n), MAX(ts),"
                     " STDDEV_POP(n), LISTAGG(v), APPROX_COUNT_DISTINCT(v), BOOL_OR(n > 20)"
                     " FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
                     " GROUP BY k, window_start, window_end;",
              "agg-0", NULL);
}

/* A write-back cache of one byte: every batch's groups go to RocksDB (the
** cache's dead entries dropped, then its dirty ones written and all gone). */
TEST(tumbling_window_aggregation_over_rocksdb_without_its_cache) {
  check_rocks("SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n" EV_DDL
              "SELECT k, window_start, COUNT(*), SUM(n), MAX(ts)"
              " FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
              " GROUP BY k, window_start, window_end;",
              "agg-0", NULL);
  check_rocks("SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n" EV_DDL
              "SELECT k, COUNT(*), SUM(n), MAX(ts) FROM ev GROUP BY k;", "agg-0", NULL);
}

TEST(hopping_window_and_filter_over_rocksdb) {
  check_rocks(EV_DDL "SELECT window_end, COUNT(*) FILTER (WHERE k > 1), SUM(k)"
                     " FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND,"
                     " INTERVAL '10' SECOND)) GROUP BY window_start, window_end;",
              "agg-0", NULL);
}

TEST(group_by_without_window_over_rocksdb) {
  /* update mode: each batch the groups it changed, with their new values */
  check_rocks(EV_DDL "SELECT k, COUNT(*), SUM(n), MAX(ts) FROM ev GROUP BY k;", "agg-0",
              "#0\n1, 2, 20, TIMESTAMP '2024-01-01 00:00:03.000'\n2, 1, 20, TIMESTAMP '2024-01-01 00:00:02.000'\n"
              "#1\n1, 3, 30, TIMESTAMP '2024-01-01 00:00:04.000'\n2, 2, 40, TIMESTAMP '2024-01-01 00:00:06.000'\n"
              "3, 1, 30, TIMESTAMP '2024-01-01 00:00:05.000'\n"
              "#2\n1, 4, 40, TIMESTAMP '2024-01-01 00:00:09.000'\n4, 1, 40, TIMESTAMP '2024-01-01 00:00:10.000'\n"
              "#3\n4, 2, 80, TIMESTAMP '2024-01-01 00:00:11.000'\n5, 1, 50, TIMESTAMP '2024-01-01 00:00:14.000'\n"
              "9, 1, 90, TIMESTAMP '2024-01-01 00:00:01.000'\n"
              "#4\n1, 5, 50, TIMESTAMP '2024-01-01 00:00:21.000'\n2, 3, 60, TIMESTAMP '2024-01-01 00:00:22.000'\n"
              "5, 2, 100, TIMESTAMP '2024-01-01 00:00:20.000'\n"
              "#5\n5, 3, 150, TIMESTAMP '2024-01-01 00:00:34.000'\n6, 1, 60, TIMESTAMP '2024-01-01 00:00:33.000'\n#6\n");
  check_rocks(EV_DDL "SELECT COUNT(*), SUM(k) FROM ev;", "agg-0", NULL);
}

TEST(group_by_an_event_time_key_over_rocksdb) {
  check_rocks(EV_DDL "SELECT ts, COUNT(*), MAX(k) FROM ev GROUP BY ts;", "agg-0", NULL);
}

TEST(deduplication_over_rocksdb) {
  check_rocks(EV_DDL "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts)"
                     " AS rn FROM ev) WHERE rn = 1;",
              "dedup-0", NULL);
  check_rocks(EV_DDL "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts"
                     " DESC) AS rn FROM ev) WHERE rn = 1;",
              "dedup-0", NULL);
}

TEST(distinct_over_rocksdb) {
  check_rocks(EV_DDL "SELECT DISTINCT k, v, ts FROM ev;", "distinct-0", NULL);
  /* the same row twice in a batch and again later, forgotten once the watermark passes it */
  check_rocks(EV_DDL "SELECT DISTINCT k, ts FROM (SELECT k, ts FROM ev UNION ALL"
                     " SELECT k, ts FROM ev);",
              "distinct-0", NULL);
}

TEST(window_top_n_over_rocksdb) {
  check_rocks(EV_DDL "SELECT window_start, k, v, rn FROM (SELECT *, ROW_NUMBER() OVER"
                     " (PARTITION BY window_start, window_end ORDER BY n DESC) AS rn FROM"
                     " TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn <= 2;",
              "topn-0", NULL);
  check_rocks(EV_DDL "SELECT window_end, k, v FROM (SELECT *, RANK() OVER"
                     " (PARTITION BY k, window_start, window_end ORDER BY ts) AS rn FROM"
                     " TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND))) WHERE rn <= 1;",
              "topn-0", NULL);
}

/* Aggregates that keep whole values: each group's record carries them
** (dp_agg_state_save_group), windowed (append) and not (update), through
** the write-back cache and without it (every group in RocksDB each batch). */
#define WHOLE_VALUES "MIN(v), MAX(v), FIRST_VALUE(v), LAST_VALUE(v), COLLECT(v), MAX(ts)"

TEST(whole_value_aggregates_over_rocksdb) {
  check_rocks(EV_DDL "SELECT k, window_start, " WHOLE_VALUES
                     " FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
                     " GROUP BY k, window_start, window_end;",
              "agg-0", NULL);
  check_rocks(EV_DDL "SELECT k, " WHOLE_VALUES " FROM ev GROUP BY k;", "agg-0", NULL);
  check_rocks("SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n" EV_DDL
              "SELECT k, " WHOLE_VALUES " FROM ev GROUP BY k;", "agg-0", NULL);
  check_rocks("SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n" EV_DDL
              "SELECT window_start, " WHOLE_VALUES ", COUNT(*)"
              " FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))"
              " GROUP BY window_start, window_end;",
              "agg-0", NULL);
}

/* DISTINCT aggregates: a group's values seen so far are entries of their
** own (agg_rocks.c: a (group, value) pair with its count), looked up when
** a batch brings a value new to it. */
#define DISTINCTS "COUNT(DISTINCT v), SUM(DISTINCT n), COUNT(DISTINCT k), COUNT(*)"

TEST(distinct_aggregates_over_rocksdb) {
  check_rocks(EV_DDL "SELECT k, window_start, " DISTINCTS
                     " FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
                     " GROUP BY k, window_start, window_end;",
              "agg-0", NULL);
  check_rocks(EV_DDL "SELECT window_end, " DISTINCTS ", MAX(v)"
                     " FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
                     " GROUP BY window_start, window_end;",
              "agg-0", NULL);
  check_rocks(EV_DDL "SELECT " DISTINCTS " FROM ev;", "agg-0", NULL);
  check_rocks("SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n" EV_DDL
              "SELECT n > 20, " DISTINCTS ", COLLECT(v) FROM ev GROUP BY n > 20;", "agg-0", NULL);
}

/* Session windows: a key's open sessions in its entry, merged as rows come
** (a row of key 1 joins two sessions across batches; gap 5 s: 04 + 5 touches
** 09), the key moving in the time index as its first session closes; with
** and without the write-back cache; per key and one global session. */
#define SESSION_OF(part, gap)                                                            \
  " FROM TABLE(SESSION(TABLE ev" part ", DESCRIPTOR(ts), INTERVAL '" gap "' SECOND))"

TEST(session_windows_over_rocksdb) {
  check_rocks(EV_DDL "SELECT k, window_start, window_end, COUNT(*), SUM(n), MAX(v), MIN(ts),"
                     " LISTAGG(v)" SESSION_OF(" PARTITION BY k", "5")
                     " GROUP BY k, window_start, window_end;",
              "agg-0", NULL);
  check_rocks(EV_DDL "SELECT k, window_end, COUNT(*), AVG(n), LAST_VALUE(v)" SESSION_OF(
                  " PARTITION BY k", "2") " GROUP BY k, window_start, window_end;",
              "agg-0", NULL);
  check_rocks("SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n" EV_DDL
              "SELECT k, window_start, window_end, COUNT(*), SUM(n), FIRST_VALUE(v)" SESSION_OF(
                  " PARTITION BY k", "5") " GROUP BY k, window_start, window_end;",
              "agg-0", NULL);
  check_rocks("SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n" EV_DDL
              "SELECT window_start, window_end, COUNT(*), MAX(k)" SESSION_OF("", "3")
              " GROUP BY window_start, window_end;",
              "agg-0", NULL);
}

/* A key's least session end moving both ways in RocksDB's time index: its
** first session closes (the index place grows), a row joins two sessions,
** and a row within the lateness opens a session before the open one (the
** place shrinks: the watermark must close that session at its own end, not
** at the later one's).  Key 1, gap 3 s, watermark ts - 5 s, a batch's
** watermark the one the batches before it made:
**   b2 30          [20,23) [30,33)        (wm 15: [10,13) closed)
**   b3 27, 40      [27,33) [40,43)        (wm 25; 27 + 3 touches 30)
**   b4 (k 2 41)    [40,43), at 43         (wm 35: [27,33) closed, due)
**   b5 36 (k 2 45) [36,39) [40,43), at 39 (wm 36)
**   b6 (k 2 59)    wm 40: [36,39) closes, [40,43) stays */
#define K1(s) "{\"k\": 1, \"v\": \"x\", \"n\": 1, \"ts\": \"" T(s) "\"}\n"
#define K2(s) "{\"k\": 2, \"v\": \"y\", \"n\": 2, \"ts\": \"" T(s) "\"}\n"
#define TS(s) "TIMESTAMP '2024-01-01 00:00:" s ".000'"

TEST(session_keys_move_both_ways_in_the_rocksdb_index) {
  const char *ddl =
      "CREATE TABLE ev (k INT, v STRING, n INT, ts TIMESTAMP(3),"
      " WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'memory');\n";
  const char *q = "SELECT k, window_start, window_end, COUNT(*), SUM(n)" SESSION_OF(" PARTITION BY k", "3")
                  " GROUP BY k, window_start, window_end;";
  static char mem_sql[2048], rocks_sql[2048], nocache_sql[2048];
  snprintf(mem_sql, sizeof mem_sql, "%s%s", ddl, q);
  snprintf(rocks_sql, sizeof rocks_sql, "SET 'state.backend' = 'rocksdb';\n%s%s", ddl, q);
  snprintf(nocache_sql, sizeof nocache_sql,
           "SET 'state.backend' = 'rocksdb';\nSET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n%s%s",
           ddl, q);
  script mem = {mem_sql, {"ev"}, {{K1("10")}, {K1("20") K2("20")}, {K1("30")}, {K1("27") K1("40")},
                                  {K2("41")}, {K1("36") K2("45")}, {K2("59")}}, 7};
  script rocks = mem, nocache = mem;
  rocks.sql = rocks_sql;
  nocache.sql = nocache_sql;
  const char *expect =
      "#0\n#1\n#2\n1, " TS("10") ", " TS("13") ", 1, 1\n"
      "#3\n1, " TS("20") ", " TS("23") ", 1, 1\n2, " TS("20") ", " TS("23") ", 1, 2\n"
      "#4\n1, " TS("27") ", " TS("33") ", 2, 2\n"
      "#5\n#6\n1, " TS("36") ", " TS("39") ", 1, 1\n"
      "#7\n1, " TS("40") ", " TS("43") ", 1, 1\n2, " TS("41") ", " TS("44") ", 1, 2\n"
      "2, " TS("45") ", " TS("48") ", 1, 2\n"
      "2, " TS("59") ", TIMESTAMP '2024-01-01 00:01:02.000', 1, 2\n";
  check_backends(&mem, &rocks, "agg-0", expect);
  check_backends(&mem, &nocache, "agg-0", expect);
}

/* Update mode: each batch the sessions it changed (merged ones too). */
TEST(session_windows_in_update_mode_over_rocksdb) {
  check_rocks("SET 'dipper.output-mode' = 'update';\n" EV_DDL
              "SELECT k, window_start, window_end, COUNT(*), SUM(n)" SESSION_OF(" PARTITION BY k", "5")
              " GROUP BY k, window_start, window_end;",
              "agg-0", NULL);
}

/* dp_rocks_scan_slice (the final batch of a GROUP BY over a bounded input
** emits every group by a pass over the entries a slice at a time:
** tests/cli/cli_test.sh runs one on both backends): every entry once, in
** key order, over slices of 2. */
static int count_entry(void *u, const char *k, size_t kn, const char *v, size_t vn) {
  (void)k, (void)kn;
  dp_buf *seen = u;
  dp_buf_put(seen, v, vn);
  dp_buf_putc(seen, ' ');
  return DIPPER_OK;
}

TEST(rocksdb_entries_scanned_a_slice_at_a_time) {
  dp_arena *a = dp_arena_new(4096);
  dp_diags d;
  dp_diags_init(&d, a, "t.sql", "", 0);
  char dir[] = "/tmp/dipper-rocks-slices-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  dp_rocks *db = NULL;
  CHECK_EQ(dp_rocks_new(dir, "agg-0", &d, &db), DIPPER_OK);
  CHECK_EQ(dp_rocks_begin(db), DIPPER_OK);
  dp_vector *k = dp_vector_new(dp_type_of(DP_T_BIGINT), 0);
  for (int i = 0; i < 5; i++) CHECK_EQ(dp_vector_append_i64(k, i), DIPPER_OK);
  dp_buf key = DP_BUF_INIT, seen = DP_BUF_INIT, last = DP_BUF_INIT, order = DP_BUF_INIT;
  for (int64_t i = 0; i < 5; i++) {
    key.len = 0;
    CHECK_EQ(dp_rocks_entry_key(&key, 0, (const dp_vector *const *)&k, 1, i), DIPPER_OK);
    char v[2] = {(char)('a' + i), 0};
    dp_rocks_put(db, key.data, key.len, v, 1);
  }
  CHECK_EQ(dp_rocks_commit(db), DIPPER_OK);
  /* the whole scan's order, for the slices to match */
  CHECK_EQ(dp_rocks_scan(db, 0, count_entry, &order), DIPPER_OK);
  int64_t n = 0, slices = 0, total = 0;
  do {
    size_t before = seen.len;
    CHECK_EQ(dp_rocks_scan_slice(db, 0, slices ? last.data : NULL, last.len, 2, count_entry, &seen,
                                 &n),
             DIPPER_OK);
    CHECK(n <= 2);
    total += n;
    if (n) {
      /* the slice's last key: the entry whose value was written last */
      int64_t i = seen.data[seen.len - 2] - 'a';
      last.len = 0;
      CHECK_EQ(dp_rocks_entry_key(&last, 0, (const dp_vector *const *)&k, 1, i), DIPPER_OK);
    }
    CHECK(seen.len >= before);
    slices++;
  } while (n > 0 && slices < 10);
  CHECK_EQ(total, 5);
  CHECK_EQ(slices, 4); /* 2, 2, 1, then none */
  CHECK_STR(dp_buf_cstr(&seen), dp_buf_cstr(&order));
  dp_buf_free(&key);
  dp_buf_free(&seen);
  dp_buf_free(&last);
  dp_buf_free(&order);
  dp_vector_free(k);
  dp_rocks_free(db);
  CHECK_EQ(dp_remove_tree(dir), 0);
  dp_arena_free(a);
}

/* An operator that does not take the option keeps its state in memory
** under it, with a note naming it: the rows are memory's, and the checkpoint
** (its state files, as without the option) resumes after every batch, from
** deltas and past damage (check_script). */
static void check_in_memory(const char *sql, const char *what) {
  static char text[8192];
  snprintf(text, sizeof text, "SET 'state.backend' = 'rocksdb';\n%s", sql);
  script mem = {sql, {"ev"}, EV_BATCHES, 6}, rocks = {text, {"ev"}, EV_BATCHES, 6};
  char *want = straight_run(&mem), *got = straight_run(&rocks);
  CHECK(want && got);
  if (want && got) CHECK_STR(got, want);
  if (want) CHECK(strchr(want, ',') != NULL); /* rows came out, not only batch marks */
  check_script(&rocks, NULL);
  free(want);
  free(got);
  /* the note, once, naming the operator and the option */
  notes log = {0};
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  dipper_set_log(db, on_note, &log);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, text, (size_t)-1, "over.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(log.count, 1);
  CHECK(strstr(log.last, what) != NULL && strstr(log.last, "keeps its state in memory") != NULL &&
        strstr(log.last, "'state.backend' = 'rocksdb'") != NULL);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

/* (The update-mode Top-N takes it since December 2026: rocks_topn_test.c.) */
TEST(over_keeps_its_state_in_memory_under_rocksdb) {
  check_in_memory(EV_DDL "SELECT k, SUM(n) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2"
                         " PRECEDING AND CURRENT ROW) FROM ev;",
                  "the Over operator");
}

int main(void) {
  return RUN_TESTS();
}
