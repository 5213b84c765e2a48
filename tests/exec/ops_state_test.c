/*
** ops_state_test.c — the checkpointed state of the stateful operators other
** than the aggregation (save_state / restore_state of op_dedup, op_distinct,
** op_join in every way it runs, op_topn, op_over, op_sort, op_limit,
** op_setop).
**
** Each case is a query over memory tables and a script of micro-batches
** (one push per table per batch, then the final batch).  Run A goes straight
** through.  Run B, for every k, runs k batches, saves the state of every
** operator that has some, closes the whole tree and its handle, opens a new
** handle and tree for the same SQL (whose tables get only the pushes from
** batch k on, as restored sources would give), restores the states — and
** the watermarks, which the driver keeps — and runs the rest.  A's output
** from batch k on must be B's, byte for byte and in the same order: the
** restored indexes (hash chains, group ids, orderings) behave as the old
** ones.  Then every truncation of every blob must fail with DIPPER_CORRUPT
** and a diagnostic, and damaged bytes must fail that way or restore
** something, never crash (the test runs under ASan and UBSan).
**
** The micro-batch loop here is driver.c's, cut down: scans planned one push
** at a time, the sink replaced by reading the root, the watermark computed
** the way driver.c's global_watermark does it.
*/
#include "exec/state_rocks.h"
#define OPS_STATE_BACKENDS
#include "ops_state_harness.h"

/* ---- the cases ---- */

#define T(s) "2024-01-01 00:00:" s
#define EV(k, v, s) "{\"k\": " #k ", \"v\": \"" v "\", \"ts\": \"" T(s) "\"}\n"
#define KV(k, v) "{\"k\": " #k ", \"v\": \"" v "\"}\n"

#define EV_DDL                                                                           \
  "CREATE TABLE ev (k INT, v STRING, ts TIMESTAMP(3),"                                   \
  " WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'memory');\n"

/* Five batches of ev: repeated keys, a late row (k 9 at 01 s in batch 3). */
#define EV_BATCHES                                                                       \
  {{EV(1, "a", "01") EV(2, "b", "02") EV(1, "a2", "03")},                                \
   {EV(3, "c", "05") EV(2, "b2", "06")},                                                 \
   {EV(1, "a3", "09") EV(4, "d", "10")},                                                 \
   {EV(9, "late", "01") EV(4, "d2", "11") EV(5, "e", "14")},                             \
   {EV(5, "e2", "20") EV(1, "a4", "21")}}

TEST(dedup_keep_first_with_watermark_eviction) {
  static const script sc = {
      EV_DDL "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn"
             " FROM ev) WHERE rn = 1;",
      {"ev"}, EV_BATCHES, 5};
  /* k 1 is forgotten once the watermark passes its first row (01 s): a3 is new again */
  check_script(&sc, "#0\n1, 'a'\n2, 'b'\n#1\n3, 'c'\n#2\n1, 'a3'\n4, 'd'\n#3\n5, 'e'\n#4\n#5\n");
}

TEST(dedup_keep_last_updates_each_batch) {
  static const script sc = {
      EV_DDL "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC)"
             " AS rn FROM ev) WHERE rn = 1;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&sc, NULL);
}

/* Rows i0..i1 of ev, key i % 3, value "v<i>", one ms apart: each row is its
** key's best so far (keep last), so the store compacts (op_dedup.c's
** compact_store) within the batch. */
static const char *many_rows(char *buf, size_t cap, int i0, int i1) {
  size_t at = 0;
  for (int i = i0; i < i1 && at < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at,
                           "{\"k\": %d, \"v\": \"v%d\", \"ts\": \"2024-01-01 00:%02d:%02d.%03d\"}\n",
                           i % 3, i, i / 60000, i / 1000 % 60, i % 1000);
  return buf;
}

TEST(dedup_keep_last_store_compacts_with_many_updates) {
  static char b0[1500 * 80], b1[1500 * 80];
  script sc = {EV_DDL "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC)"
                      " AS rn FROM ev) WHERE rn = 1;",
               {"ev"},
               {{many_rows(b0, sizeof b0, 0, 1500)}, {many_rows(b1, sizeof b1, 1500, 3000)}},
               2};
  check_script(&sc, "#0\n0, 'v1497'\n1, 'v1498'\n2, 'v1499'\n#1\n0, 'v2997'\n1, 'v2998'\n"
                    "2, 'v2999'\n#2\n");
  sc.sql = "CREATE TABLE ev (k INT, v STRING, ts TIMESTAMP(3))"
           " WITH ('connector' = 'memory', 'bounded' = 'true');\n"
           "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn"
           " FROM ev) WHERE rn = 1;";
  check_script(&sc, "#0\n#1\n#2\n0, 'v2997'\n1, 'v2998'\n2, 'v2999'\n");
}

TEST(dedup_of_a_bounded_input_emits_at_the_end) {
  static const script sc = {
      "CREATE TABLE b (k INT, v STRING, ts TIMESTAMP(3))"
      " WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn"
      " FROM b) WHERE rn = 1;",
      {"b"},
      {{EV(1, "a", "01") EV(2, "b", "05")}, {EV(1, "z", "03") EV(3, "c", "01")},
       {EV(2, "a", "02") EV(3, "d", "04")}},
      3};
  check_script(&sc, "#0\n#1\n#2\n#3\n1, 'z'\n2, 'b'\n3, 'd'\n");
}

/* (a DISTINCT without an event-time column is refused on a stream) */
TEST(distinct_with_event_time_eviction) {
  static const script sc = {EV_DDL "SELECT DISTINCT k, v, ts FROM ev;", {"ev"},
                            {{EV(1, "a", "01") EV(1, "a", "01") EV(2, "b", "02")},
                             {EV(1, "a", "01") EV(3, "c", "05") EV(3, "c", "05")},
                             {EV(2, "b", "02") EV(3, "c", "05") EV(4, "d", "09")},
                             {EV(4, "d", "09") EV(5, "e", "14")}},
                            4};
  check_script(&sc, NULL);
}

/* ---- joins ---- */

#define LR_DDL                                                                           \
  "CREATE TABLE l (k INT, v STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)"            \
  " WITH ('connector' = 'memory');\n"                                                    \
  "CREATE TABLE r (k INT, v STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)"            \
  " WITH ('connector' = 'memory');\n"

#define LR_BATCHES                                                                       \
  {{EV(1, "a", "00") EV(2, "b", "05") EV(3, "lonely", "02"), EV(1, "x", "03")},          \
   {EV(2, "c", "30"), EV(2, "y", "12") EV(7, "ronly", "13")},                            \
   {EV(1, "late", "01") EV(2, "c2", "31"), EV(2, "q", "25") EV(1, "z", "40")},           \
   {EV(1, "w", "41"), EV(5, "s", "50")}}

#define INTERVAL_JOIN(kind)                                                              \
  LR_DDL "SELECT l.v, r.v FROM l " kind " JOIN r ON l.k = r.k"                           \
         " AND l.ts BETWEEN r.ts - INTERVAL '10' SECOND AND r.ts + INTERVAL '10' SECOND;"

TEST(interval_joins_of_two_streams) {
  static const script inner = {INTERVAL_JOIN(""), {"l", "r"}, LR_BATCHES, 4};
  check_script(&inner, NULL);
  static const script left = {INTERVAL_JOIN("LEFT"), {"l", "r"}, LR_BATCHES, 4};
  check_script(&left, NULL);
  static const script right = {INTERVAL_JOIN("RIGHT"), {"l", "r"}, LR_BATCHES, 4};
  check_script(&right, NULL);
  static const script full = {INTERVAL_JOIN("FULL"), {"l", "r"}, LR_BATCHES, 4};
  /* `late` is dropped; lonely and ronly are padded as the watermark passes them */
  check_script(&full,
               "#0\n'a', 'x'\n#1\n'b', 'y'\n#2\n'c2', 'q'\n'c', 'q'\n'lonely', NULL\n"
               "#3\n'w', 'z'\nNULL, 'ronly'\n#4\nNULL, 's'\n");
}

TEST(inner_join_of_two_streams_without_a_time_range) {
  static const script sc = {LR_DDL "SELECT l.v, r.v FROM l JOIN r ON l.k = r.k;",
                            {"l", "r"}, LR_BATCHES, 4};
  check_script(&sc, NULL);
}

TEST(window_join_of_two_streams) {
  static const script sc = {
      LR_DDL "SELECT a.v, b.v, a.window_start FROM"
             " TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND)) a JOIN"
             " TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND)) b"
             " ON a.window_start = b.window_start AND a.window_end = b.window_end AND a.k = b.k;",
      {"l", "r"}, LR_BATCHES, 4};
  check_script(&sc, NULL);
}

#define DIM_DDL                                                                          \
  "CREATE TABLE d (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"

/* The bounded side arrives over two batches, the stream over four. */
#define DIM_BATCHES                                                                      \
  {{EV(1, "a", "00") EV(2, "b", "01"), KV(1, "one") KV(2, "two")},                       \
   {EV(3, "c", "02") EV(1, "a2", "03"), KV(3, "three") KV(1, "uno")},                    \
   {EV(4, "d", "04") EV(2, "b2", "05"), NULL},                                           \
   {EV(3, "c2", "06") EV(5, "e", "07"), NULL}}

TEST(stream_static_joins) {
  static const script inner = {
      LR_DDL DIM_DDL "SELECT l.v, d.v FROM l JOIN d ON l.k = d.k;", {"l", "d"}, DIM_BATCHES, 4};
  check_script(&inner, NULL);
  static const script left = {
      LR_DDL DIM_DDL "SELECT l.v, d.v FROM l LEFT JOIN d ON l.k = d.k AND d.v <> 'uno';",
      {"l", "d"}, DIM_BATCHES, 4};
  check_script(&left, NULL);
  /* SEMI with the stream on the right: each dimension row leaves at its first match */
  static const script semi = {
      LR_DDL DIM_DDL "SELECT d.v FROM d WHERE d.k IN (SELECT k FROM l);",
      {"l", "d"}, DIM_BATCHES, 4};
  check_script(&semi, "#0\n'one'\n'two'\n#1\n'three'\n'uno'\n#2\n#3\n#4\n");
  static const script anti = {
      LR_DDL DIM_DDL "SELECT l.v FROM l WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.k = l.k);",
      {"l", "d"}, DIM_BATCHES, 4};
  check_script(&anti, NULL);
  /* expression keys: the build side's key values are made again on restore */
  static const script ekeys = {
      LR_DDL DIM_DDL "SELECT l.v, d.v FROM l JOIN d ON MOD(l.k, 3) = MOD(d.k + 3, 3);",
      {"l", "d"}, DIM_BATCHES, 4};
  check_script(&ekeys, NULL);
}

TEST(join_of_two_bounded_inputs_keeps_both_until_the_end) {
  static const script sc = {
      "CREATE TABLE a (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT a.v, b.v FROM a FULL JOIN b ON a.k = b.k;",
      {"a", "b"},
      {{KV(1, "a1") KV(2, "a2"), KV(2, "b2")}, {KV(3, "a3"), KV(4, "b4") KV(1, "b1")}},
      2};
  check_script(&sc, "#0\n#1\n#2\n'a1', 'b1'\n'a2', 'b2'\n'a3', NULL\nNULL, 'b4'\n");
}

#define RATES_DDL(opts)                                                                  \
  "CREATE TABLE rates (cur STRING, rate INT, ut TIMESTAMP(3), WATERMARK FOR ut AS ut,"   \
  " PRIMARY KEY (cur) NOT ENFORCED) WITH ('connector' = 'memory'" opts ");\n"            \
  "CREATE TABLE orders (id INT, cur STRING, ot TIMESTAMP(3), WATERMARK FOR ot AS ot)"    \
  " WITH ('connector' = 'memory');\n"                                                    \
  "SELECT o.id, r.rate FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ot AS r"    \
  " ON o.cur = r.cur;"
#define RATE(c, r, s) "{\"cur\": \"" c "\", \"rate\": " #r ", \"ut\": \"" T(s) "\"}\n"
#define ORDER(i, c, s) "{\"id\": " #i ", \"cur\": \"" c "\", \"ot\": \"" T(s) "\"}\n"
#define RATES_BATCHES                                                                    \
  {{RATE("EUR", 110, "00") RATE("USD", 100, "00"), NULL},                                \
   {NULL, ORDER(1, "EUR", "05")},                                                        \
   {RATE("EUR", 120, "10"), ORDER(2, "EUR", "12") ORDER(3, "GBP", "12")},                \
   {RATE("EUR", 999, "20"), ORDER(4, "USD", "15")},                                      \
   {RATE("USD", 101, "30"), ORDER(5, "EUR", "25")}}

TEST(temporal_joins) {
  /* versions as a stream: orders wait for the watermark */
  static const script streamed = {RATES_DDL(""), {"rates", "orders"}, RATES_BATCHES, 5};
  check_script(&streamed, NULL);
  /* versions bounded: a lookup of the version valid at the order's time */
  static const script bounded = {RATES_DDL(", 'bounded' = 'true'"), {"rates", "orders"},
                                 RATES_BATCHES, 5};
  check_script(&bounded, NULL);
  /* the same through expression keys */
  static const script ekeys = {
      "CREATE TABLE rates (cur STRING, rate INT, ut TIMESTAMP(3), WATERMARK FOR ut AS ut,"
      " PRIMARY KEY (cur) NOT ENFORCED) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "CREATE TABLE orders (id INT, cur STRING, ot TIMESTAMP(3), WATERMARK FOR ot AS ot)"
      " WITH ('connector' = 'memory');\n"
      "SELECT o.id, r.rate FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ot AS r"
      " ON LOWER(o.cur) = LOWER(r.cur);",
      {"rates", "orders"}, RATES_BATCHES, 5};
  check_script(&ekeys, NULL);
}

/* ---- joins over RocksDB ('state.backend' = 'rocksdb') ---- */

/* The join of `sql` over RocksDB gives the in-memory join's rows batch by
** batch and passes check_script's checks (ops_state_harness.h). */
static void check_rocks(const char *sql) {
  static char text[8192];
  snprintf(text, sizeof text, "SET 'state.backend' = 'rocksdb';\n%s", sql);
  script mem = {sql, {"l", "r"}, LR_BATCHES, 4}, rocks = {text, {"l", "r"}, LR_BATCHES, 4};
  check_backends(&mem, &rocks, "join-0", NULL);
}

TEST(joins_of_two_streams_over_rocksdb) {
  check_rocks(INTERVAL_JOIN(""));
  check_rocks(INTERVAL_JOIN("LEFT"));
  check_rocks(INTERVAL_JOIN("RIGHT"));
  check_rocks(INTERVAL_JOIN("FULL"));
  check_rocks(LR_DDL "SELECT l.v, r.v FROM l JOIN r ON l.k = r.k;");
  check_rocks(LR_DDL "SELECT a.v, b.v, a.window_start FROM"
                     " TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND)) a JOIN"
                     " TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND)) b"
                     " ON a.window_start = b.window_start AND a.window_end = b.window_end"
                     " AND a.k = b.k;");
  /* no equi-key: every stored row of the other side is a candidate */
  check_rocks(LR_DDL "SELECT l.v, r.v FROM l JOIN r ON l.ts BETWEEN r.ts - INTERVAL '5' SECOND"
                     " AND r.ts + INTERVAL '5' SECOND;");
}

/* state_rocks.h's row store by itself: chunks of one key from two adds, a
** probe that reads each distinct key once, matched flags, an eviction that
** splits a chunk, and a checkpoint reopened by another instance. */
static void rocks_rows(dp_batch *b, const int64_t *k, const int64_t *t, int n) {
  dp_batch_clear(b);
  for (int i = 0; i < n; i++) {
    char s[16];
    int len = snprintf(s, sizeof s, "s%lld", (long long)t[i]);
    if (k[i] < 0) dp_vector_append_null(b->cols[0]);
    else dp_vector_append_i64(b->cols[0], k[i]);
    dp_vector_append_i64(b->cols[1], t[i]);
    dp_vector_append_str(b->cols[2], s, (size_t)len);
  }
  dp_batch_sync(b);
}

/* The times of rows [first, first+n) of b, as "t1 t2 ..." sorted. */
static const char *rocks_times(const dp_batch *b, int64_t first, int64_t n) {
  static char out[256];
  int64_t v[64];
  int m = 0;
  for (int64_t i = first; i < first + n && m < 64; i++) {
    char s[16];
    snprintf(s, sizeof s, "s%lld", (long long)dp_vector_get_i64(b->cols[1], i));
    size_t len = 0;
    const char *got = dp_vector_get_str(b->cols[2], i, &len);
    CHECK(len == strlen(s) && memcmp(got, s, len) == 0); /* the row read back whole */
    v[m++] = dp_vector_get_i64(b->cols[1], i);
  }
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      int64_t x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
  out[0] = '\0';
  for (int i = 0; i < m; i++)
    snprintf(out + strlen(out), sizeof out - strlen(out), "%s%lld", i ? " " : "", (long long)v[i]);
  return out;
}

TEST(rocksdb_row_store) {
  dp_arena *a = dp_arena_new(4096);
  dp_diags d;
  dp_diags_init(&d, a, "t.sql", "", 0);
  dp_schema *sc = dp_schema_new(a, 3);
  dp_field cols[3] = {{"k", dp_type_of(DP_T_BIGINT)}, {"t", dp_type_of(DP_T_BIGINT)},
                      {"s", dp_type_of(DP_T_STRING)}};
  for (int c = 0; c < 3; c++) sc->cols[c] = cols[c];
  char dir[] = "/tmp/dipper-rocks-rows-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  dp_batch *b = dp_batch_new(sc, 0), *into = dp_batch_new(sc, 0), *un = dp_batch_new(sc, 0);
  dp_rocks *db = NULL;
  dp_rocks_refs refs = {0};
  const int key[1] = {0};
  CHECK_EQ(dp_rocks_new(dir, "join-0", &d, &db), DIPPER_OK);
  dp_rocks_space(db, 0, sc);
  CHECK_EQ(dp_rocks_begin(db), DIPPER_OK);
  /* key 1 at times 1..6, key 2 at 3 and a NULL key at 2 in one add; key 1 at 7, 8 in another */
  int64_t k1[] = {1, 2, 1, 1, -1, 1, 1, 1}, t1[] = {1, 3, 2, 3, 2, 4, 5, 6};
  rocks_rows(b, k1, t1, 8);
  CHECK_EQ(dp_rocks_rows_add(db, 0, b, key, 1, 1, NULL), DIPPER_OK);
  int64_t k2[] = {1, 1}, t2[] = {7, 8};
  rocks_rows(b, k2, t2, 2);
  CHECK_EQ(dp_rocks_rows_add(db, 0, b, key, 1, 1, NULL), DIPPER_OK);
  CHECK_EQ(dp_rocks_commit(db), DIPPER_OK);
  /* probe keys 1, 2, NULL, 3, 1: key 1 read once for both of its rows */
  int64_t kp[] = {1, 2, -1, 3, 1}, tp[] = {0, 0, 0, 0, 0};
  rocks_rows(b, kp, tp, 5);
  CHECK_EQ(dp_rocks_rows_probe(db, 0, b, 0, 5, key, 1, into, &refs), DIPPER_OK);
  CHECK_EQ(into->nrows, 9);
  CHECK_EQ(refs.count[0], 8);
  CHECK_EQ(refs.count[1], 1);
  CHECK_EQ(refs.count[2], 0);
  CHECK_EQ(refs.count[3], 0);
  CHECK_EQ(refs.count[4], 8);
  CHECK_EQ(refs.first[4], refs.first[0]);
  CHECK_STR(rocks_times(into, refs.first[0], refs.count[0]), "1 2 3 4 5 6 7 8");
  CHECK_STR(rocks_times(into, refs.first[1], refs.count[1]), "3");
  /* the even times of key 1 matched */
  for (int64_t i = refs.first[0]; i < refs.first[0] + refs.count[0]; i++)
    if (dp_vector_get_i64(into->cols[1], i) % 2 == 0) dp_rocks_rows_mark(&refs, i);
  CHECK_EQ(dp_rocks_rows_write_marks(db, &refs), DIPPER_OK);
  /* up to 3: key 1's 1, 2, 3 (its first chunk split), key 2's 3 and the
  ** NULL key's 2 go; unmatched: all but key 1's 2 */
  int64_t removed = 0;
  CHECK_EQ(dp_rocks_rows_expire(db, 0, 3, un, &removed), DIPPER_OK);
  CHECK_EQ(removed, 5);
  CHECK_STR(rocks_times(un, 0, un->nrows), "1 2 3 3");
  dp_batch_clear(into);
  CHECK_EQ(dp_rocks_rows_probe(db, 0, b, 0, 1, key, 1, into, &refs), DIPPER_OK);
  CHECK_STR(rocks_times(into, 0, into->nrows), "4 5 6 7 8");
  /* a checkpoint, opened by another instance: the flags came along */
  int64_t ck = -1;
  CHECK_EQ(dp_rocks_save(db, 5, &ck), DIPPER_OK);
  CHECK_EQ(ck, 5);
  CHECK_EQ(dp_rocks_save(db, 6, &ck), DIPPER_OK); /* nothing changed: still 5 */
  CHECK_EQ(ck, 5);
  dp_rocks_free(db);
  CHECK_EQ(dp_rocks_new(dir, "join-0", &d, &db), DIPPER_OK);
  dp_rocks_space(db, 0, sc);
  CHECK_EQ(dp_rocks_restore(db, 99), DIPPER_CORRUPT); /* not there */
  CHECK_EQ(dp_rocks_restore(db, 5), DIPPER_OK);
  CHECK_EQ(dp_rocks_begin(db), DIPPER_OK);
  dp_batch_clear(un);
  CHECK_EQ(dp_rocks_rows_expire(db, 0, INT64_MAX, un, &removed), DIPPER_OK);
  CHECK_EQ(removed, 5);
  CHECK_STR(rocks_times(un, 0, un->nrows), "5 7");
  dp_batch_clear(into);
  CHECK_EQ(dp_rocks_rows_probe(db, 0, b, 0, 5, key, 1, into, &refs), DIPPER_OK);
  CHECK_EQ(into->nrows, 0);
  dp_rocks_free(db);
  dp_rocks_refs_free(&refs);
  dp_batch_free(b);
  dp_batch_free(into);
  dp_batch_free(un);
  CHECK_EQ(dp_remove_tree(dir), 0);
  dp_arena_free(a);
}

/* The size of a delta: a join holding 100,000 rows whose batch adds 10 and
** evicts 10 writes a delta under 1% of its whole state. */
static char *left_rows(int from, int to) {
  dp_buf b = DP_BUF_INIT;
  for (int i = from; i < to; i++)
    dp_buf_printf(&b, "{\"k\": %d, \"v\": \"l%d\", \"ts\": \"2024-01-%02d %02d:%02d:%02d\"}\n", i,
                  i, 1 + i / 86400, i / 3600 % 24, i / 60 % 60, i % 60);
  return b.data;
}

TEST(a_join_delta_costs_what_the_batch_changed) {
  char *big = left_rows(0, 100000), *b1 = left_rows(100000, 100010), *b2 = left_rows(100010, 100020);
  script sc = {INTERVAL_JOIN(""), {"l", "r"},
               {{big, EV(-1, "r0", "09")}, {b1, EV(-2, "r1", "19")}, {b2, EV(-3, "r2", "29")}},
               3};
  run r, again;
  blobs base, delta, whole;
  CHECK(run_open(&r, &sc));
  CHECK_EQ(run_batch(&r, 0), DIPPER_OK);
  CHECK_EQ(run_batch(&r, 1), DIPPER_OK);
  save_all(&r, &base);                     /* 100,010 left rows, 2 right rows */
  CHECK_EQ(run_batch(&r, 2), DIPPER_OK);   /* +10 and +1; the watermark (19 s) evicts 10 and 1 */
  save_all_as(&r, &delta, true);
  save_all(&r, &whole);
  CHECK_EQ(delta.n, 1);
  CHECK(delta.delta[0]);
  fprintf(stderr, "  join of 100,010 rows: whole state %zu bytes, the batch's delta %zu bytes\n",
          whole.b[0].len, delta.b[0].len);
  CHECK(whole.b[0].len > 1000000);
  CHECK(delta.b[0].len * 100 < whole.b[0].len);
  /* and base + delta is that state */
  const blobs *seq[] = {&base, &delta};
  CHECK(run_open(&again, &sc));
  CHECK_EQ(restore_seq(&again, seq, 2), DIPPER_OK);
  check_same_state(&again, &whole, "a big join from its delta", 2);
  run_close(&again);
  run_close(&r);
  free_blobs(&base);
  free_blobs(&delta);
  free_blobs(&whole);
  free(big);
  free(b1);
  free(b2);
}

/* ---- the other operators ---- */

TEST(topn_updating_and_per_window) {
  static const script update = {
      EV_DDL "SELECT k, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC)"
             " AS rn FROM ev) WHERE rn <= 2;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&update, NULL);
  static const script window = {
      EV_DDL "SELECT window_start, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY"
             " window_start, window_end ORDER BY v DESC) AS rn FROM"
             " TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn <= 2;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&window, NULL);
}

TEST(over_on_a_stream_and_on_a_bounded_input) {
  static const script rows = {
      EV_DDL "SELECT k, v, COUNT(*) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING"
             " AND CURRENT ROW), LAG(v) OVER (PARTITION BY k ORDER BY ts) FROM ev;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&rows, NULL);
  static const script range = {
      EV_DDL "SELECT k, v, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND"
             " PRECEDING AND CURRENT ROW) FROM ev;",
      {"ev"}, EV_BATCHES, 5};
  check_script(&range, NULL);
  static const script bounded = {
      "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT k, v, RANK() OVER (PARTITION BY k ORDER BY v) FROM b;",
      {"b"},
      {{KV(1, "b") KV(2, "x")}, {KV(1, "a") KV(1, "b")}, {KV(2, "w")}},
      3};
  check_script(&bounded, "#0\n#1\n#2\n#3\n1, 'a', 1\n1, 'b', 2\n1, 'b', 2\n2, 'w', 1\n2, 'x', 2\n");
}

TEST(sort_by_event_time_and_of_a_bounded_input) {
  static const script timed = {EV_DDL "SELECT k, v FROM ev ORDER BY ts;", {"ev"}, EV_BATCHES, 5};
  check_script(&timed, NULL);
  static const script bounded = {
      "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT k, v FROM b ORDER BY v DESC, k;",
      {"b"},
      {{KV(1, "b") KV(2, "x")}, {KV(3, "a") KV(4, "b")}, {KV(5, "w")}},
      3};
  check_script(&bounded, "#0\n#1\n#2\n#3\n2, 'x'\n5, 'w'\n1, 'b'\n4, 'b'\n3, 'a'\n");
}

/* (LIMIT on a stream is refused: a bounded input read over several batches) */
TEST(limit_counts_across_batches) {
  static const script sc = {
      "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
      "SELECT k, v FROM b LIMIT 3 OFFSET 2;",
      {"b"},
      {{KV(1, "a")}, {KV(2, "b") KV(3, "c")}, {KV(4, "d")}, {KV(5, "e") KV(6, "f")}},
      4};
  check_script(&sc, "#0\n#1\n3, 'c'\n#2\n4, 'd'\n#3\n5, 'e'\n#4\n");
}

TEST(set_operations_of_bounded_inputs) {
  static const char *sql[] = {
      "SELECT k, v FROM a INTERSECT ALL SELECT k, v FROM b;",
      "SELECT k, v FROM a EXCEPT SELECT k, v FROM b;",
  };
  for (int i = 0; i < 2; i++) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s",
             "CREATE TABLE a (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
             "CREATE TABLE b (k INT, v STRING) WITH ('connector' = 'memory', 'bounded' = 'true');\n",
             sql[i]);
    const script sc = {text,
                       {"a", "b"},
                       {{KV(1, "x") KV(1, "x") KV(2, "y"), KV(1, "x")},
                        {KV(3, "z") KV(1, "x"), KV(1, "x") KV(3, "z")},
                        {KV(4, "w"), KV(2, "q")}},
                       3};
    check_script(&sc, i == 0 ? "#0\n#1\n#2\n#3\n1, 'x'\n1, 'x'\n3, 'z'\n"
                             : "#0\n#1\n#2\n#3\n2, 'y'\n4, 'w'\n");
  }
}

/* ---- two streams, many rows: compaction, expired rows in a state ---- */

/* Rows i in [from, to) of a stream: key i % mod + off, time `t0` ms + `step` ms
** per row, every fourth pair of rows swapped (a batch out of time order). */
static char *lr_rows(const char *tag, int mod, int off, int from, int to, int64_t t0, int step) {
  dp_buf b = DP_BUF_INIT;
  for (int i = from; i < to; i++) {
    int j = (i % 4 == 1) ? i + 1 : (i % 4 == 2) ? i - 1 : i;
    int64_t ms = t0 + (int64_t)(j - from) * step;
    dp_buf_printf(&b, "{\"k\": %d, \"v\": \"%s%d\", \"ts\": \"2024-01-01 %02d:%02d:%02d.%03d\"}\n",
                  i % mod + off, tag, i, (int)(ms / 3600000), (int)(ms / 60000 % 60),
                  (int)(ms / 1000 % 60), (int)(ms % 1000));
  }
  return b.data;
}

/* 1,500 left and 1,000 right rows a batch over 15 s of event time, joined
** within 1 s (left keys 0-12, right keys 3-19: some rows of each side
** never match): each batch expires a thousand rows or more of each side
** (stores compacted), and the last one fewer than the compaction's minimum
** (its state holds expired rows, saved as runs of dead rows).  Every
** outer kind, resumed after every batch, from whole states and deltas. */
TEST(outer_joins_of_two_streams_with_many_rows) {
  char *data[5][2];
  for (int b = 0; b < 4; b++) {
    data[b][0] = lr_rows("l", 13, 0, b * 1500, (b + 1) * 1500, (int64_t)b * 15000, 10);
    data[b][1] = lr_rows("r", 17, 3, b * 1000, (b + 1) * 1000, (int64_t)b * 15000 + 3, 15);
  }
  data[4][0] = lr_rows("l", 13, 0, 6000, 6300, 60000, 10);
  data[4][1] = lr_rows("r", 17, 3, 4000, 4200, 60000, 15);
  static const char *const kinds[] = {"LEFT", "RIGHT", "FULL"};
  for (int k = 0; k < 3; k++) {
    char sql[1024];
    snprintf(sql, sizeof sql,
             LR_DDL "SELECT l.v, r.v FROM l %s JOIN r ON l.k = r.k"
                    " AND l.ts BETWEEN r.ts - INTERVAL '1' SECOND AND r.ts + INTERVAL '1' SECOND;",
             kinds[k]);
    script sc = {sql, {"l", "r"}, {{NULL}}, 5};
    for (int b = 0; b < 5; b++) {
      sc.data[b][0] = data[b][0];
      sc.data[b][1] = data[b][1];
    }
    run a;
    bool ok = run_open(&a, &sc);
    for (int b = 0; ok && b <= sc.nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
    /* something joined, something padded */
    CHECK(ok && strstr(dp_buf_cstr(&a.out), "NULL") && strstr(dp_buf_cstr(&a.out), "'l4',"));
    for (int at = 0; ok && at <= sc.nbatches; at++) check_resume_at(&sc, &a, at);
    if (ok && k == 2) check_deltas(&sc, &a, 1, false);
    run_close(&a);
  }
  for (int b = 0; b < 5; b++) {
    free(data[b][0]);
    free(data[b][1]);
  }
}

/* A batch that expires most of a big state compacts it: its delta names
** the dropped rows as a run, a few bytes, not a byte or more per row. */
TEST(a_compacting_join_delta_costs_what_the_batch_changed) {
  char *big = left_rows(0, 100000), *b1 = left_rows(100000, 100010), *b2 = left_rows(100010, 100020);
  script sc = {INTERVAL_JOIN(""), {"l", "r"},
               {{big, EV(-1, "r0", "09")},
                {b1, "{\"k\": -2, \"v\": \"r1\", \"ts\": \"2024-01-01 16:40:00\"}\n"},
                {b2, NULL}},
               3};
  run r, again;
  blobs base, delta, whole;
  CHECK(run_open(&r, &sc));
  CHECK_EQ(run_batch(&r, 0), DIPPER_OK);
  CHECK_EQ(run_batch(&r, 1), DIPPER_OK);
  save_all(&r, &base);                    /* 100,010 left rows */
  CHECK_EQ(run_batch(&r, 2), DIPPER_OK);  /* the watermark (60,000 s) expires 59,991 of them */
  save_all_as(&r, &delta, true);
  save_all(&r, &whole);
  CHECK_EQ(delta.n, 1);
  fprintf(stderr, "  join of 100,020 rows, 59,991 expired: whole state %zu bytes, delta %zu bytes\n",
          whole.b[0].len, delta.b[0].len);
  CHECK(whole.b[0].len > 400000);
  CHECK(delta.b[0].len < 1000);
  const blobs *seq[] = {&base, &delta};
  CHECK(run_open(&again, &sc));
  CHECK_EQ(restore_seq(&again, seq, 2), DIPPER_OK);
  check_same_state(&again, &whole, "a compacted join from its delta", 2);
  run_close(&again);
  run_close(&r);
  free_blobs(&base);
  free_blobs(&delta);
  free_blobs(&whole);
  free(big);
  free(b1);
  free(b2);
}

/* A join keeps only the columns read; a checkpoint written by a query that
** read other columns of a side is refused, naming the side. */
TEST(a_join_state_of_other_columns_is_refused) {
  static const script reads_v = {INTERVAL_JOIN(""), {"l", "r"}, LR_BATCHES, 4};
  static const script not_v = {
      LR_DDL "SELECT r.v FROM l JOIN r ON l.k = r.k"
             " AND l.ts BETWEEN r.ts - INTERVAL '10' SECOND AND r.ts + INTERVAL '10' SECOND;",
      {"l", "r"}, LR_BATCHES, 4};
  run a, b;
  blobs bl;
  CHECK(run_open(&a, &reads_v));
  CHECK_EQ(run_batch(&a, 0), DIPPER_OK);
  save_all(&a, &bl);
  run_close(&a);
  CHECK(run_open(&b, &not_v));
  CHECK_EQ(restore_all(&b, &bl), DIPPER_CORRUPT);
  CHECK(b.h->diags.count > 0 && strstr(b.h->diags.items[0].message, "left input") &&
        strstr(b.h->diags.items[0].message, "fresh checkpoint folder"));
  run_close(&b);
  free_blobs(&bl);
}

int main(void) { return RUN_TESTS(); }
