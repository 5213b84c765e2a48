/*
** join_test.c — op_join.c: every join kind over VALUES inputs with NULL keys
** and duplicate keys, residual conditions, nested loops, and the refusal of
** a join of two streams.
*/
#include <unistd.h>

#include "rows_harness.h"
#include "test.h"

#define L "(VALUES (1, 'a'), (2, 'b'), (2, 'b2'), (CAST(NULL AS INT), 'n'), (4, 'd')) AS l(k, v)"
#define R "(VALUES (2, 'x'), (2, 'y'), (3, 'z'), (CAST(NULL AS INT), 'rn')) AS r(k, w)"

TEST(inner_join_duplicates_and_null_keys) {
  CHECK_STR(run_rows("SELECT l.k, l.v, r.k, r.w FROM " L " JOIN " R " ON l.k = r.k", true),
            "2, 'b', 2, 'x'\n2, 'b', 2, 'y'\n2, 'b2', 2, 'x'\n2, 'b2', 2, 'y'\n");
}

TEST(left_join_pads_unmatched_and_null_keys) {
  CHECK_STR(run_rows("SELECT l.k, l.v, r.k, r.w FROM " L " LEFT JOIN " R " ON l.k = r.k", true),
            "1, 'a', NULL, NULL\n2, 'b', 2, 'x'\n2, 'b', 2, 'y'\n2, 'b2', 2, 'x'\n"
            "2, 'b2', 2, 'y'\n4, 'd', NULL, NULL\nNULL, 'n', NULL, NULL\n");
}

TEST(right_join_pads_unmatched_right_rows) {
  CHECK_STR(run_rows("SELECT l.k, l.v, r.k, r.w FROM " L " RIGHT JOIN " R " ON l.k = r.k", true),
            "2, 'b', 2, 'x'\n2, 'b', 2, 'y'\n2, 'b2', 2, 'x'\n2, 'b2', 2, 'y'\n"
            "NULL, NULL, 3, 'z'\nNULL, NULL, NULL, 'rn'\n");
}

TEST(full_join_pads_both_sides) {
  CHECK_STR(run_rows("SELECT l.k, l.v, r.k, r.w FROM " L " FULL JOIN " R " ON l.k = r.k", true),
            "1, 'a', NULL, NULL\n2, 'b', 2, 'x'\n2, 'b', 2, 'y'\n2, 'b2', 2, 'x'\n"
            "2, 'b2', 2, 'y'\n4, 'd', NULL, NULL\nNULL, 'n', NULL, NULL\n"
            "NULL, NULL, 3, 'z'\nNULL, NULL, NULL, 'rn'\n");
}

TEST(semi_join_keeps_each_left_row_once) {
  CHECK_STR(run_rows("SELECT l.k, l.v FROM " L " WHERE EXISTS (SELECT 1 FROM " R
                     " WHERE r.k = l.k)", true),
            "2, 'b'\n2, 'b2'\n");
  CHECK_STR(run_rows("SELECT l.k, l.v FROM " L " WHERE l.k IN (SELECT r.k FROM " R ")", true),
            "2, 'b'\n2, 'b2'\n");
}

TEST(anti_join_keeps_unmatched_left_rows) {
  CHECK_STR(run_rows("SELECT l.k, l.v FROM " L " WHERE NOT EXISTS (SELECT 1 FROM " R
                     " WHERE r.k = l.k)", true),
            "1, 'a'\n4, 'd'\nNULL, 'n'\n");
}

TEST(residual_condition_on_joined_rows) {
  CHECK_STR(run_rows("SELECT l.v, r.w FROM " L " JOIN " R " ON l.k = r.k AND r.w <> 'x'", true),
            "'b', 'y'\n'b2', 'y'\n");
  /* A left row whose matches all fail the residual is padded. */
  CHECK_STR(run_rows("SELECT l.v, r.w FROM " L " LEFT JOIN " R
                     " ON l.k = r.k AND r.w = 'y' AND l.v = 'b'", true),
            "'a', NULL\n'b', 'y'\n'b2', NULL\n'd', NULL\n'n', NULL\n");
  /* Build rows matched only by pairs that fail the residual stay unmatched. */
  CHECK_STR(run_rows("SELECT l.v, r.w FROM " L " RIGHT JOIN " R " ON l.k = r.k AND l.v = 'b2'",
                     true),
            "'b2', 'x'\n'b2', 'y'\nNULL, 'rn'\nNULL, 'z'\n");
}

TEST(nested_loop_without_keys) {
  CHECK_STR(run_rows("SELECT l.k, r.k FROM " L " JOIN " R " ON l.k < r.k", true),
            "1, 2\n1, 2\n1, 3\n2, 3\n2, 3\n");
  const char *cross = run_rows("SELECT COUNT(*) FROM " L " CROSS JOIN " R, false);
  if (strncmp(cross, "ERROR", 5) != 0) CHECK_STR(cross, "20\n");
  CHECK_STR(run_rows("SELECT l.v, r.w FROM (VALUES (1)) AS l(v) CROSS JOIN (VALUES ('p'), ('q')) AS r(w)",
                     true),
            "1, 'p'\n1, 'q'\n");
}

TEST(left_join_with_empty_right_side) {
  CHECK_STR(run_rows("SELECT l.v, r.w FROM " L " LEFT JOIN (SELECT * FROM " R
                     " WHERE r.k > 100) AS r ON l.k = r.k", true),
            "'a', NULL\n'b', NULL\n'b2', NULL\n'd', NULL\n'n', NULL\n");
}

TEST(join_keys_of_strings_and_several_columns) {
  CHECK_STR(run_rows("SELECT a.x, b.z FROM (VALUES ('p', 1, 10), ('p', 2, 20), ('q', 1, 30)) AS a(s, i, x) "
                     "JOIN (VALUES ('p', 1, 'one'), ('q', 1, 'two'), ('q', 2, 'three')) AS b(s, i, z) "
                     "ON a.s = b.s AND a.i = b.i", true),
            "10, 'one'\n30, 'two'\n");
}

/* Expression keys: an equality of an expression over each side hashes (no
** scan of the build side per probe row).  Each answer is checked against the
** nested loop's: the same equality written as one expression over both sides,
** which no key can be taken from. */
#define EL "(VALUES (1, 'a'), (12, 'b'), (22, 'c'), (CAST(NULL AS INT), 'n'), (7, 'd')) AS l(k, v)"
#define ER "(VALUES (CAST(2 AS BIGINT), 'x'), (2, 'y'), (1, 'z'), (CAST(NULL AS BIGINT), 'rn'), (5, 'q')) AS r(k, w)"

static void like_nested_loop(const char *head, const char *tail, const char *keyed,
                             const char *looped, const char *want) {
  char a[1024], b[1024];
  snprintf(a, sizeof a, "%s%s%s", head, keyed, tail);
  snprintf(b, sizeof b, "%s%s%s", head, looped, tail);
  CHECK_STR(run_rows(a, true), want);
  CHECK_STR(run_rows(b, true), want);
}

TEST(expression_keys_join_like_the_nested_loop) {
  const char *mod = "MOD(l.k, 10) = r.k", *mod_loop = "MOD(l.k, 10) - r.k = 0";
  like_nested_loop("SELECT l.v, r.w FROM " EL " JOIN " ER " ON ", "", mod, mod_loop,
                   "'a', 'z'\n'b', 'x'\n'b', 'y'\n'c', 'x'\n'c', 'y'\n");
  like_nested_loop("SELECT l.v, r.w FROM " EL " LEFT JOIN " ER " ON ", "", mod, mod_loop,
                   "'a', 'z'\n'b', 'x'\n'b', 'y'\n'c', 'x'\n'c', 'y'\n'd', NULL\n'n', NULL\n");
  like_nested_loop("SELECT l.v, r.w FROM " EL " RIGHT JOIN " ER " ON ", "", mod, mod_loop,
                   "'a', 'z'\n'b', 'x'\n'b', 'y'\n'c', 'x'\n'c', 'y'\nNULL, 'q'\nNULL, 'rn'\n");
  like_nested_loop("SELECT l.v, r.w FROM " EL " FULL JOIN " ER " ON ", " AND r.w <> 'x'", mod,
                   mod_loop,
                   "'a', 'z'\n'b', 'y'\n'c', 'y'\n'd', NULL\n'n', NULL\nNULL, 'q'\nNULL, 'rn'\n"
                   "NULL, 'x'\n");
  /* expressions on both sides, the sides swapped */
  like_nested_loop("SELECT l.v, r.w FROM " EL " JOIN " ER " ON ", "", "r.k * 6 = l.k + 5",
                   "r.k * 6 - l.k = 5", "'a', 'z'\n'd', 'x'\n'd', 'y'\n");
  /* strings, beside a column key */
  like_nested_loop("SELECT a.x, b.z FROM (VALUES ('p', 1, 10), ('P', 2, 20), ('q', 1, 30))"
                   " AS a(s, i, x) JOIN (VALUES ('P', 1, 'one'), ('Q', 1, 'two'),"
                   " ('p', 2, 'three')) AS b(s, i, z) ON ", "",
                   "UPPER(a.s) = b.s AND a.i = b.i", "UPPER(a.s) || 'x' = b.s || 'x' AND a.i = b.i",
                   "10, 'one'\n30, 'two'\n");
  /* doubles: -0.0 meets 0.0, NaN meets nothing, as through `=` */
  like_nested_loop("SELECT l.v, r.w FROM (VALUES (CAST('NaN' AS DOUBLE), 'nan'), (-0.0, 'mz'),"
                   " (1.5, 'x')) AS l(d, v) JOIN (VALUES (CAST('NaN' AS DOUBLE), 'NAN'),"
                   " (0.0, 'z'), (3.0, 'X')) AS r(d, w) ON ", "", "l.d * 2 = r.d",
                   "l.d * 2 - r.d = 0", "'mz', 'z'\n'x', 'X'\n");
  like_nested_loop("SELECT l.v FROM " EL " WHERE EXISTS (SELECT 1 FROM " ER " WHERE ", ")", mod,
                   mod_loop, "'a'\n'b'\n'c'\n");
  like_nested_loop("SELECT l.v FROM " EL " WHERE NOT EXISTS (SELECT 1 FROM " ER " WHERE ", ")",
                   mod, mod_loop, "'d'\n'n'\n");
}

/* Write `text` to dir/name; returns false on failure. */
static bool write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) return false;
  fputs(text, f);
  return fclose(f) == 0;
}

TEST(temporal_join_picks_the_version_valid_at_the_row_time) {
  char dir[] = "/tmp/dipper-join-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  CHECK(write_file(dir, "rates.json",
                   "{\"cur\": \"EUR\", \"rate\": 1.10, \"ut\": \"2024-01-01 00:00:00\"}\n"
                   "{\"cur\": \"EUR\", \"rate\": 1.20, \"ut\": \"2024-01-01 00:10:00\"}\n"
                   "{\"cur\": \"USD\", \"rate\": 1.00, \"ut\": \"2024-01-01 00:05:00\"}\n"));
  CHECK(write_file(dir, "orders.json",
                   "{\"id\": 1, \"cur\": \"EUR\", \"ot\": \"2024-01-01 00:05:00\"}\n"
                   "{\"id\": 2, \"cur\": \"EUR\", \"ot\": \"2024-01-01 00:10:00\"}\n"
                   "{\"id\": 3, \"cur\": \"USD\", \"ot\": \"2024-01-01 00:01:00\"}\n"
                   "{\"id\": 4, \"cur\": \"GBP\", \"ot\": \"2024-01-01 00:01:00\"}\n"));
  char sql[4096];
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';\n"
           "CREATE TABLE rates (cur STRING, rate DECIMAL(5, 2), ut TIMESTAMP(3),\n"
           "  WATERMARK FOR ut AS ut - INTERVAL '1' SECOND, PRIMARY KEY (cur) NOT ENFORCED)\n"
           "  WITH ('connector' = 'filesystem', 'path' = '%s/rates.json', 'format' = 'json');\n"
           "CREATE TABLE orders (id INT, cur STRING, ot TIMESTAMP(3),\n"
           "  WATERMARK FOR ot AS ot - INTERVAL '1' SECOND)\n"
           "  WITH ('connector' = 'filesystem', 'path' = '%s/orders.json', 'format' = 'json');\n"
           "SELECT o.id, r.rate FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ot AS r\n"
           "  ON o.cur = r.cur;\n",
           dir, dir);
  /* 1 sees the 00:00 EUR rate, 2 the 00:10 one; USD starts after 3's time. */
  CHECK_STR(run_rows(sql, true), "1, 1.10\n2, 1.20\n3, NULL\n4, NULL\n");
  /* the same through expression keys */
  char *on = strstr(sql, "ON o.cur = r.cur");
  CHECK(on != NULL);
  snprintf(on, sizeof sql - (size_t)(on - sql), "ON LOWER(o.cur) = LOWER(r.cur) AND o.id + 0 >= 0;\n");
  CHECK_STR(run_rows(sql, true), "1, 1.10\n2, 1.20\n3, NULL\n4, NULL\n");
  /* a lookup join on processing time (Nexmark q13's shape): every matching row */
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';\n"
           "CREATE TABLE rates (cur STRING, rate DECIMAL(5, 2))\n"
           "  WITH ('connector' = 'filesystem', 'path' = '%s/rates.json', 'format' = 'json');\n"
           "CREATE TABLE orders (id INT, cur STRING)\n"
           "  WITH ('connector' = 'filesystem', 'path' = '%s/orders.json', 'format' = 'json');\n"
           "SELECT o.id, r.rate FROM (SELECT *, PROCTIME() AS p FROM orders) o\n"
           "  JOIN rates FOR SYSTEM_TIME AS OF o.p AS r ON MOD(o.id, 2) = CHAR_LENGTH(r.cur) - 2;\n",
           dir, dir);
  CHECK_STR(run_rows(sql, true), "1, 1.00\n1, 1.10\n1, 1.20\n3, 1.00\n3, 1.10\n3, 1.20\n");
  char path[512];
  snprintf(path, sizeof path, "%s/rates.json", dir);
  remove(path);
  snprintf(path, sizeof path, "%s/orders.json", dir);
  remove(path);
  rmdir(dir);
}

/* l and r in three micro-batches (plus the watermark's), joined with `kind`
** on k and a 10-second range; returns the sink's rows. */
static const char *interval_join(const char *kind, int64_t *late, int64_t *state) {
  static char result[16384];
  snprintf(result, sizeof result, "(failed)");
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  dipper_program *prog = NULL;
  int rc = dipper_compile(db,
      "CREATE TABLE l (k INT, v STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'memory');\n"
      "CREATE TABLE r (k INT, w STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'memory');\n"
      "CREATE TABLE out (v STRING, w STRING) WITH ('connector' = 'memory');\n"
      "", (size_t)-1, "stream.sql", &prog);
  char insert[512];
  snprintf(insert, sizeof insert,
           "INSERT INTO out SELECT l.v, r.w FROM l %s JOIN r ON l.k = r.k\n"
           "  AND l.ts BETWEEN r.ts - INTERVAL '10' SECOND AND r.ts + INTERVAL '10' SECOND;\n",
           kind);
  dipper_program_free(prog);
  prog = NULL;
  if (!rc) rc = dipper_compile(db, insert, (size_t)-1, "insert.sql", &prog);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) {
    fprintf(stderr, "%s\n", dipper_errmsg(db));
    dipper_close(db);
    return result;
  }
#define PUSH(t, s) CHECK_EQ(dipper_memory_push_json(db, t, s, strlen(s)), DIPPER_OK)
  PUSH("l", "{\"k\": 1, \"v\": \"a\", \"ts\": \"2024-01-01 00:00:00\"}\n"
            "{\"k\": 2, \"v\": \"b\", \"ts\": \"2024-01-01 00:00:05\"}\n"
            "{\"k\": 3, \"v\": \"lonely\", \"ts\": \"2024-01-01 00:00:02\"}\n");
  PUSH("r", "{\"k\": 1, \"w\": \"x\", \"ts\": \"2024-01-01 00:00:03\"}\n");
  /* batch 1 runs under watermark 3 s, judging late rows by batch 0's (none) */
  PUSH("l", "{\"k\": 2, \"v\": \"c\", \"ts\": \"2024-01-01 00:00:30\"}\n");
  PUSH("r", "{\"k\": 2, \"w\": \"y\", \"ts\": \"2024-01-01 00:00:12\"}\n");
  /* batch 2, late watermark 3 s: the row at 1 s is late */
  PUSH("l", "{\"k\": 1, \"v\": \"late\", \"ts\": \"2024-01-01 00:00:01\"}\n");
  /* batch 2, under watermark 12 s: b (5 s) is still kept, q meets c */
  PUSH("r", "{\"k\": 2, \"w\": \"q\", \"ts\": \"2024-01-01 00:00:25\"}\n"
            "{\"k\": 1, \"w\": \"z\", \"ts\": \"2024-01-01 00:00:40\"}\n");
#undef PUSH
  dipper_query **qs = NULL;
  int nq = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &nq), DIPPER_OK);
  CHECK_EQ(nq, 1);
  for (int i = 0; i < 6 && nq == 1; i++) {
    int fin = 0;
    rc = dipper_query_step(qs[0], &fin);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) fprintf(stderr, "%s\n", dipper_errmsg(db));
  }
  snprintf(result, sizeof result, "%s", fetch_rows(db, "out"));
  dipper_progress pg = {sizeof pg};
  if (nq == 1 && dipper_query_progress(qs[0], &pg) == DIPPER_OK) {
    *late = pg.late_rows_dropped;
    *state = pg.state_rows;
  }
  dipper_query_free_all(qs, nq);
  dipper_program_free(prog);
  dipper_close(db);
  return result;
}

TEST(interval_join_of_two_streams_drops_late_rows_and_old_state) {
  int64_t late = -1, state = -1;
  CHECK_STR(interval_join("", &late, &state), "a|x\nb|y\nc|q\n");
  CHECK_EQ(late, 1);
  /* Rows 10 s older than the watermark (30 s) have left the state. */
  CHECK(state >= 0 && state < 5);
}

TEST(left_interval_join_pads_rows_once_the_watermark_passes_them) {
  int64_t late = -1, state = -1;
  /* `lonely` (2 s) can meet no right row after the watermark reaches 12 s. */
  CHECK_STR(interval_join("LEFT", &late, &state), "a|x\nb|y\nc|q\nlonely|NULL\n");
  CHECK_EQ(late, 1);
}

TEST(temporal_join_of_two_streams_waits_for_the_watermark) {
  const char *pushes[] = {
      "rates:{\"cur\": \"EUR\", \"rate\": 1.10, \"ut\": \"2024-01-01 00:00:00\"}\n"
      "{\"cur\": \"USD\", \"rate\": 1.00, \"ut\": \"2024-01-01 00:00:00\"}\n",
      "orders:{\"id\": 1, \"cur\": \"EUR\", \"ot\": \"2024-01-01 00:00:05\"}\n",
      "rates:{\"cur\": \"EUR\", \"rate\": 1.20, \"ut\": \"2024-01-01 00:00:10\"}\n",
      "orders:{\"id\": 2, \"cur\": \"EUR\", \"ot\": \"2024-01-01 00:00:12\"}\n"
      "{\"id\": 3, \"cur\": \"GBP\", \"ot\": \"2024-01-01 00:00:12\"}\n",
      "rates:{\"cur\": \"EUR\", \"rate\": 9.99, \"ut\": \"2024-01-01 00:00:20\"}\n",
  };
  /* order 1 (5 s) waits for watermark 10 s and sees the 0 s rate even though
  ** the 10 s version arrived first; order 2 (12 s) sees the 10 s version */
  CHECK_STR(stream_rows(
                "CREATE TABLE rates (cur STRING, rate DECIMAL(5, 2), ut TIMESTAMP(3),\n"
                "  WATERMARK FOR ut AS ut, PRIMARY KEY (cur) NOT ENFORCED) WITH ('connector' = 'memory');\n"
                "CREATE TABLE orders (id INT, cur STRING, ot TIMESTAMP(3), WATERMARK FOR ot AS ot)\n"
                "  WITH ('connector' = 'memory');\n"
                "CREATE TABLE out (id INT, rate STRING) WITH ('connector' = 'memory');\n"
                "INSERT INTO out SELECT o.id, CAST(r.rate AS STRING) FROM orders o\n"
                "  LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ot AS r ON o.cur = r.cur;\n",
                pushes, 5, 8, NULL),
            "1|1.10\n2|1.20\n3|NULL\n");
}

TEST(semi_join_of_a_bounded_table_with_a_stream_emits_each_row_at_its_first_match) {
  const char *pushes[] = {
      "bids:{\"item\": \"a\", \"price\": 5}\n{\"item\": \"z\", \"price\": 7}\n",
      "bids:{\"item\": \"a\", \"price\": 1}\n{\"item\": \"b\", \"price\": 2}\n",
  };
  CHECK_STR(stream_rows(
                "CREATE TABLE bids (item STRING, price INT) WITH ('connector' = 'memory');\n"
                "CREATE TABLE out (name STRING) WITH ('connector' = 'memory');\n"
                "INSERT INTO out SELECT n.name FROM (VALUES ('a', 'apple'), ('b', 'banana'), ('c', 'cherry'))\n"
                "  AS n(item, name) WHERE n.item IN (SELECT item FROM bids);\n",
                pushes, 2, 3, NULL),
            "apple\nbanana\n");
}

TEST(window_join_of_two_streams) {
  const char *pushes[] = {
      ("a:{\"k\": \"x\", \"ts\": \"2024-01-01 00:00:01\"}\n{\"k\": \"x\", \"ts\": \"2024-01-01 00:00:02\"}\n"
       "{\"k\": \"y\", \"ts\": \"2024-01-01 00:00:03\"}\n"),
      "b:{\"k\": \"x\", \"ts\": \"2024-01-01 00:00:04\"}\n",
      "a:{\"k\": \"z\", \"ts\": \"2024-01-01 00:00:15\"}\n",
      "b:{\"k\": \"y\", \"ts\": \"2024-01-01 00:00:16\"}\n",
  };
  int64_t late = -1;
  /* window [0 s, 10 s) closes at watermark 15 s on both sides; y's rows are
  ** in different windows; [10 s, 20 s) never closes */
  CHECK_STR(stream_rows(
                "CREATE TABLE a (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'memory');\n"
                "CREATE TABLE b (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'memory');\n"
                "CREATE TABLE out (k STRING, na BIGINT, nb BIGINT) WITH ('connector' = 'memory');\n"
                "INSERT INTO out SELECT l.k, l.n, r.n FROM\n"
                "  (SELECT window_start, window_end, k, COUNT(*) AS n\n"
                "   FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '10' SECOND))\n"
                "   GROUP BY window_start, window_end, k) l\n"
                "JOIN\n"
                "  (SELECT window_start, window_end, k, COUNT(*) AS n\n"
                "   FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '10' SECOND))\n"
                "   GROUP BY window_start, window_end, k) r\n"
                "ON l.window_start = r.window_start AND l.window_end = r.window_end AND l.k = r.k;\n",
                pushes, 4, 5, &late),
            "x|2|1\n");
  CHECK_EQ(late, 0);
}

int main(void) { return RUN_TESTS(); }
