/*
** batchops_test.c — the operators over bounded inputs other than the join:
** sort (directions, NULL placement, stability), limit/offset, distinct,
** deduplication (keep first / last), Top-N with each rank kind, INTERSECT /
** EXCEPT [ALL], and UNNEST.  Inputs are VALUES lists; each query runs as
** batch mode runs it (rows_harness.h).
*/
#include "rows_harness.h"
#include "test.h"

#define T "(VALUES (3, 'c'), (1, 'a'), (CAST(NULL AS INT), 'n'), (2, 'b'), (1, 'a2')) AS t(k, v)"

TEST(sort_ascending_nulls_first_by_default) {
  CHECK_STR(run_rows("SELECT k, v FROM " T " ORDER BY k", false),
            "NULL, 'n'\n1, 'a'\n1, 'a2'\n2, 'b'\n3, 'c'\n");
}

TEST(sort_descending_nulls_last_by_default) {
  CHECK_STR(run_rows("SELECT k, v FROM " T " ORDER BY k DESC", false),
            "3, 'c'\n2, 'b'\n1, 'a'\n1, 'a2'\nNULL, 'n'\n");
}

TEST(sort_explicit_null_placement_and_second_key) {
  CHECK_STR(run_rows("SELECT k, v FROM " T " ORDER BY k ASC NULLS LAST, v DESC", false),
            "1, 'a2'\n1, 'a'\n2, 'b'\n3, 'c'\nNULL, 'n'\n");
  CHECK_STR(run_rows("SELECT k, v FROM " T " ORDER BY k DESC NULLS FIRST", false),
            "NULL, 'n'\n3, 'c'\n2, 'b'\n1, 'a'\n1, 'a2'\n");
}

TEST(sort_by_an_expression_not_selected) {
  CHECK_STR(run_rows("SELECT v FROM " T " WHERE k IS NOT NULL ORDER BY k * -1, v", false),
            "'c'\n'b'\n'a'\n'a2'\n");
}

TEST(sort_is_stable_over_many_rows) {
  /* 3000 rows in two keys: within a key the arrival order stays. */
  char sql[200000];
  size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT k, i FROM (VALUES ");
  for (int i = 0; i < 3000; i++)
    n += (size_t)snprintf(sql + n, sizeof sql - n, "%s(%d, %d)", i ? ", " : "", (i * 7) % 2, i);
  snprintf(sql + n, sizeof sql - n, ") AS t(k, i) ORDER BY k LIMIT 3 OFFSET 1499");
  CHECK_STR(run_rows(sql, false), "0, 2998\n1, 1\n1, 3\n");
}

TEST(limit_and_offset) {
  CHECK_STR(run_rows("SELECT k FROM " T " ORDER BY k NULLS LAST LIMIT 2", false), "1\n1\n");
  CHECK_STR(run_rows("SELECT k FROM " T " ORDER BY k NULLS LAST LIMIT 2 OFFSET 2", false), "2\n3\n");
  CHECK_STR(run_rows("SELECT k FROM " T " ORDER BY k NULLS LAST LIMIT 10 OFFSET 4", false), "NULL\n");
  CHECK_STR(run_rows("SELECT k FROM " T " ORDER BY k LIMIT 0", false), "");
  CHECK_STR(run_rows("SELECT k FROM " T " ORDER BY k OFFSET 3 ROWS", false), "2\n3\n");
}

TEST(distinct_treats_nulls_as_equal) {
  CHECK_STR(run_rows("SELECT DISTINCT k FROM (VALUES (1), (CAST(NULL AS INT)), (1), (2), "
                     "(CAST(NULL AS INT))) AS t(k)", false),
            "1\nNULL\n2\n");
  CHECK_STR(run_rows("SELECT k FROM (VALUES (1), (2)) AS a(k) UNION SELECT k FROM "
                     "(VALUES (2), (3), (3)) AS b(k)", true),
            "1\n2\n3\n");
}

#define EV "(VALUES ('u1', TIMESTAMP '2024-01-01 00:00:02', 'second'), " \
           "('u2', TIMESTAMP '2024-01-01 00:00:05', 'only'), " \
           "('u1', TIMESTAMP '2024-01-01 00:00:01', 'first'), " \
           "('u1', TIMESTAMP '2024-01-01 00:00:03', 'third')) AS e(u, ts, what)"

TEST(dedup_keep_first_and_last) {
  CHECK_STR(run_rows("SELECT u, what FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY u ORDER BY ts) "
                     "AS rn FROM " EV ") WHERE rn = 1", true),
            "'u1', 'first'\n'u2', 'only'\n");
  CHECK_STR(run_rows("SELECT u, what FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY u ORDER BY ts DESC) "
                     "AS rn FROM " EV ") WHERE rn = 1", true),
            "'u1', 'third'\n'u2', 'only'\n");
}

#define SC "(VALUES ('x', 10), ('x', 30), ('x', 20), ('x', 30), ('y', 5), ('x', 10)) AS s(g, p)"

TEST(topn_row_number_rank_dense_rank) {
  CHECK_STR(run_rows("SELECT g, p, r FROM (SELECT g, p, ROW_NUMBER() OVER (PARTITION BY g ORDER BY p DESC) "
                     "AS r FROM " SC ") WHERE r <= 3", true),
            "'x', 20, 3\n'x', 30, 1\n'x', 30, 2\n'y', 5, 1\n");
  CHECK_STR(run_rows("SELECT g, p, r FROM (SELECT g, p, RANK() OVER (PARTITION BY g ORDER BY p DESC) "
                     "AS r FROM " SC ") WHERE r <= 3", true),
            "'x', 20, 3\n'x', 30, 1\n'x', 30, 1\n'y', 5, 1\n");
  CHECK_STR(run_rows("SELECT g, p, r FROM (SELECT g, p, DENSE_RANK() OVER (PARTITION BY g ORDER BY p DESC) "
                     "AS r FROM " SC ") WHERE r <= 3", true),
            "'x', 10, 3\n'x', 10, 3\n'x', 20, 2\n'x', 30, 1\n'x', 30, 1\n'y', 5, 1\n");
  /* Without the rank in the output, and without PARTITION BY. */
  CHECK_STR(run_rows("SELECT g, p FROM (SELECT g, p, ROW_NUMBER() OVER (ORDER BY p) AS r FROM " SC
                     ") WHERE r <= 2", true),
            "'x', 10\n'y', 5\n");
}

#define A "(VALUES (1), (1), (1), (2), (CAST(NULL AS INT)), (4)) AS a(x)"
#define B "(VALUES (1), (1), (CAST(NULL AS INT)), (3), (4), (4)) AS b(x)"

TEST(intersect_and_except) {
  CHECK_STR(run_rows("SELECT x FROM " A " INTERSECT SELECT x FROM " B, true), "1\n4\nNULL\n");
  CHECK_STR(run_rows("SELECT x FROM " A " INTERSECT ALL SELECT x FROM " B, true), "1\n1\n4\nNULL\n");
  CHECK_STR(run_rows("SELECT x FROM " A " EXCEPT SELECT x FROM " B, true), "2\n");
  CHECK_STR(run_rows("SELECT x FROM " A " EXCEPT ALL SELECT x FROM " B, true), "1\n2\n");
  CHECK_STR(run_rows("SELECT x FROM " B " EXCEPT ALL SELECT x FROM " A, true), "3\n4\n");
}

TEST(unnest_arrays_rows_and_maps) {
  CHECK_STR(run_rows("SELECT id, x FROM (VALUES (1, ARRAY[10, 20]), (2, CAST(NULL AS ARRAY<INT>)), "
                     "(3, ARRAY[30])) AS t(id, arr) CROSS JOIN UNNEST(t.arr) AS u(x)", false),
            "1, 10\n1, 20\n3, 30\n");
  CHECK_STR(run_rows("SELECT id, x, n FROM (VALUES (1, ARRAY['a', 'b'])) AS t(id, arr) "
                     "CROSS JOIN UNNEST(t.arr) WITH ORDINALITY AS u(x, n)", false),
            "1, 'a', 1\n1, 'b', 2\n");
  CHECK_STR(run_rows("SELECT id, k, v FROM (VALUES (1, MAP['p', 1, 'q', 2])) AS t(id, m) "
                     "CROSS JOIN UNNEST(t.m) AS u(k, v)", true),
            "1, 'p', 1\n1, 'q', 2\n");
}

#define W "(VALUES ('a', 1, 10), ('a', 2, 20), ('a', 2, 5), ('a', 4, 40), ('b', 1, 7), " \
          "('a', CAST(NULL AS INT), 1)) AS w(g, t, x)"

TEST(over_default_frames) {
  /* ORDER BY without a frame: up to the current row and its peers (t = 2 twice). */
  CHECK_STR(run_rows("SELECT g, t, x, SUM(x) OVER (PARTITION BY g ORDER BY t) FROM " W, false),
            "'a', NULL, 1, 1\n'a', 1, 10, 11\n'a', 2, 20, 36\n'a', 2, 5, 36\n'a', 4, 40, 76\n"
            "'b', 1, 7, 7\n");
  /* No ORDER BY: the whole partition. */
  CHECK_STR(run_rows("SELECT g, x, COUNT(*) OVER (PARTITION BY g), MAX(x) OVER (PARTITION BY g) FROM " W,
                     true),
            "'a', 1, 5, 40\n'a', 10, 5, 40\n'a', 20, 5, 40\n'a', 40, 5, 40\n'a', 5, 5, 40\n"
            "'b', 7, 1, 7\n");
}

TEST(over_rows_and_range_frames) {
  CHECK_STR(run_rows("SELECT g, t, x, SUM(x) OVER (PARTITION BY g ORDER BY t NULLS LAST "
                     "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM " W, false),
            "'a', 1, 10, 10\n'a', 2, 20, 30\n'a', 2, 5, 25\n'a', 4, 40, 45\n'a', NULL, 1, 41\n"
            "'b', 1, 7, 7\n");
  CHECK_STR(run_rows("SELECT g, t, SUM(x) OVER (PARTITION BY g ORDER BY t NULLS LAST "
                     "RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM " W " WHERE t IS NOT NULL", false),
            "'a', 1, 10\n'a', 2, 35\n'a', 2, 35\n'a', 4, 40\n'b', 1, 7\n");
  CHECK_STR(run_rows("SELECT ts, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING "
                     "AND CURRENT ROW) FROM (VALUES (TIMESTAMP '2024-01-01 00:00:00'), "
                     "(TIMESTAMP '2024-01-01 00:00:30'), (TIMESTAMP '2024-01-01 00:01:00'), "
                     "(TIMESTAMP '2024-01-01 00:02:00')) AS v(ts)", false),
            "TIMESTAMP '2024-01-01 00:00:00', 1\nTIMESTAMP '2024-01-01 00:00:30', 2\n"
            "TIMESTAMP '2024-01-01 00:01:00', 3\nTIMESTAMP '2024-01-01 00:02:00', 2\n");
}

TEST(over_ranking_and_offsets) {
  CHECK_STR(run_rows("SELECT t, ROW_NUMBER() OVER (ORDER BY t), RANK() OVER (ORDER BY t), "
                     "DENSE_RANK() OVER (ORDER BY t) FROM " W " WHERE g = 'a'", false),
            "NULL, 1, 1, 1\n1, 2, 2, 2\n2, 3, 3, 3\n2, 4, 3, 3\n4, 5, 5, 4\n");
  CHECK_STR(run_rows("SELECT x, LAG(x) OVER (PARTITION BY g ORDER BY x), "
                     "LEAD(x, 2, -1) OVER (PARTITION BY g ORDER BY x) FROM " W, false),
            "1, NULL, 10\n5, 1, 20\n10, 5, 40\n20, 10, -1\n40, 20, -1\n7, NULL, -1\n");
  CHECK_STR(run_rows("SELECT x, NTILE(2) OVER (ORDER BY x) FROM " W " WHERE g = 'a'", false),
            "1, 1\n5, 1\n10, 1\n20, 2\n40, 2\n");
}

#define BIDS "CREATE TABLE bids (item STRING, price INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) " \
             "WITH ('connector' = 'memory');\n"

TEST(window_topn_emits_each_window_once_the_watermark_passes_it) {
  const char *pushes[] = {
      ("bids:{\"item\": \"a\", \"price\": 5, \"ts\": \"2024-01-01 00:00:01\"}\n"
       "{\"item\": \"b\", \"price\": 7, \"ts\": \"2024-01-01 00:00:02\"}\n"
       "{\"item\": \"c\", \"price\": 1, \"ts\": \"2024-01-01 00:00:03\"}\n"
       "{\"item\": \"a\", \"price\": 4, \"ts\": \"2024-01-01 00:00:04\"}\n"),
      "bids:{\"item\": \"d\", \"price\": 100, \"ts\": \"2024-01-01 00:00:12\"}\n",
  };
  int64_t late = -1;
  /* window [0 s, 10 s) closes at watermark 12 s; [10 s, 20 s) stays open */
  CHECK_STR(stream_rows(BIDS
                        "CREATE TABLE out (item STRING, total BIGINT, rn BIGINT) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT item, total, rn FROM (\n"
                        "  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn\n"
                        "  FROM (SELECT window_start, window_end, item, SUM(price) AS total\n"
                        "        FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))\n"
                        "        GROUP BY window_start, window_end, item)) WHERE rn <= 2;\n",
                        pushes, 2, 4, &late),
            "a|9|1\nb|7|2\n");
}

TEST(topn_on_a_stream_updates_the_partitions_a_batch_touches) {
  const char *pushes[] = {
      ("bids:{\"item\": \"a\", \"price\": 5, \"ts\": \"2024-01-01 00:00:01\"}\n"
       "{\"item\": \"a\", \"price\": 7, \"ts\": \"2024-01-01 00:00:02\"}\n"
       "{\"item\": \"b\", \"price\": 1, \"ts\": \"2024-01-01 00:00:03\"}\n"),
      ("bids:{\"item\": \"a\", \"price\": 6, \"ts\": \"2024-01-01 00:00:04\"}\n"
       "{\"item\": \"b\", \"price\": 3, \"ts\": \"2024-01-01 00:00:05\"}\n"),
  };
  CHECK_STR(stream_rows(BIDS
                        "SET 'dipper.output-mode' = 'update';\n"
                        "CREATE TABLE out (item STRING, price INT) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT item, price FROM (\n"
                        "  SELECT *, ROW_NUMBER() OVER (PARTITION BY item ORDER BY price DESC) AS rn FROM bids)\n"
                        "WHERE rn <= 1;\n",
                        pushes, 2, 3, NULL),
            /* a's top (7) is not sent again when 6 arrives: update mode sends
               only rows new to the top or whose rank moved */
            "a|7\nb|1\nb|3\n");
}

TEST(over_on_a_stream_releases_rows_as_the_watermark_passes_them) {
  const char *pushes[] = {
      ("bids:{\"item\": \"a\", \"price\": 5, \"ts\": \"2024-01-01 00:00:01\"}\n"
       "{\"item\": \"a\", \"price\": 7, \"ts\": \"2024-01-01 00:00:02\"}\n"
       "{\"item\": \"b\", \"price\": 1, \"ts\": \"2024-01-01 00:00:03\"}\n"),
      ("bids:{\"item\": \"a\", \"price\": 6, \"ts\": \"2024-01-01 00:00:04\"}\n"
       "{\"item\": \"b\", \"price\": 3, \"ts\": \"2024-01-01 00:00:05\"}\n"),
      "bids:{\"item\": \"a\", \"price\": 2, \"ts\": \"2024-01-01 00:00:00\"}\n",
  };
  int64_t late = -1;
  /* batch 1 (watermark 3 s) releases the first three rows; batch 2 (watermark
  ** 5 s, late watermark 3 s) drops the row at 0 s and releases the rest */
  CHECK_STR(stream_rows(BIDS
                        "CREATE TABLE out (item STRING, price INT, s BIGINT) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT item, price, SUM(price) OVER (PARTITION BY item ORDER BY ts\n"
                        "  ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM bids;\n",
                        pushes, 3, 4, &late),
            "a|5|5\na|6|13\na|7|12\nb|1|1\nb|3|4\n");
  CHECK_EQ(late, 1);
  /* an unbounded frame keeps the whole history */
  CHECK_STR(stream_rows(BIDS
                        "CREATE TABLE out (item STRING, price INT, s BIGINT) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT item, price, COUNT(*) OVER (PARTITION BY item ORDER BY ts) FROM bids;\n",
                        pushes, 3, 4, NULL),
            "a|5|1\na|6|3\na|7|2\nb|1|1\nb|3|2\n");
}

TEST(dedup_on_a_stream_keep_first_and_keep_last) {
  const char *pushes[] = {
      ("bids:{\"item\": \"a\", \"price\": 5, \"ts\": \"2024-01-01 00:00:01\"}\n"
       "{\"item\": \"a\", \"price\": 7, \"ts\": \"2024-01-01 00:00:02\"}\n"
       "{\"item\": \"b\", \"price\": 1, \"ts\": \"2024-01-01 00:00:03\"}\n"),
      ("bids:{\"item\": \"a\", \"price\": 6, \"ts\": \"2024-01-01 00:00:04\"}\n"
       "{\"item\": \"c\", \"price\": 2, \"ts\": \"2024-01-01 00:00:00\"}\n"
       "{\"item\": \"c\", \"price\": 3, \"ts\": \"2024-01-01 00:00:05\"}\n"),
      ("bids:{\"item\": \"a\", \"price\": 9, \"ts\": \"2024-01-01 00:00:06\"}\n"
       "{\"item\": \"c\", \"price\": 8, \"ts\": \"2024-01-01 00:00:01\"}\n"),
  };
  int64_t late = -1;
  /* keep first: a key is forgotten once the watermark passes its row (a at
  ** 1 s, when batch 1 under watermark 3 s ends), so a later a is a first row
  ** again.  Rows are late by the previous batch's watermark (exec.h): c at
  ** 0 s in batch 1 is not (batch 0 had none), c at 1 s in batch 2 is (3 s) */
  CHECK_STR(stream_rows(BIDS
                        "CREATE TABLE out (item STRING, price INT) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT item, price FROM (SELECT *, ROW_NUMBER() OVER (\n"
                        "  PARTITION BY item ORDER BY ts) AS rn FROM bids) WHERE rn = 1;\n",
                        pushes, 3, 5, &late),
            "a|5\na|9\nb|1\nc|2\n");
  CHECK_EQ(late, 1);
  /* keep last: each batch emits, per key whose latest row changed, that row
  ** (c's two rows come in one batch: only the later one leaves; its row at
  ** 1 s in batch 2 is late) */
  CHECK_STR(stream_rows(BIDS
                        "CREATE TABLE out (item STRING, price INT) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT item, price FROM (SELECT *, ROW_NUMBER() OVER (\n"
                        "  PARTITION BY item ORDER BY ts DESC) AS rn FROM bids) WHERE rn = 1;\n",
                        pushes, 3, 5, NULL),
            "a|6\na|7\na|9\nb|1\nc|3\n");
}

TEST(sort_on_a_stream_releases_rows_in_time_order) {
  const char *pushes[] = {
      ("bids:{\"item\": \"a\", \"price\": 5, \"ts\": \"2024-01-01 00:00:02\"}\n"
       "{\"item\": \"b\", \"price\": 1, \"ts\": \"2024-01-01 00:00:01\"}\n"),
      ("bids:{\"item\": \"c\", \"price\": 3, \"ts\": \"2024-01-01 00:00:05\"}\n"
       "{\"item\": \"d\", \"price\": 4, \"ts\": \"2024-01-01 00:00:03\"}\n"),
  };
  harness_keep_order = 1;
  CHECK_STR(stream_rows(BIDS
                        "CREATE TABLE out (item STRING, price INT) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT item, price FROM bids ORDER BY ts;\n",
                        pushes, 2, 4, NULL),
            "b|1\na|5\nd|4\nc|3\n");
  harness_keep_order = 0;
}

TEST(join_of_a_stream_with_a_bounded_table) {
  const char *pushes[] = {
      ("bids:{\"item\": \"a\", \"price\": 5, \"ts\": \"2024-01-01 00:00:01\"}\n"
       "{\"item\": \"z\", \"price\": 7, \"ts\": \"2024-01-01 00:00:02\"}\n"),
      "bids:{\"item\": \"b\", \"price\": 1, \"ts\": \"2024-01-01 00:00:03\"}\n",
  };
  CHECK_STR(stream_rows(BIDS
                        "CREATE TABLE out (item STRING, name STRING) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT b.item, n.name FROM bids b LEFT JOIN\n"
                        "  (VALUES ('a', 'apple'), ('b', 'banana')) AS n(item, name) ON b.item = n.item;\n",
                        pushes, 2, 3, NULL),
            "a|apple\nb|banana\nz|NULL\n");
}

TEST(distinct_on_a_stream_forgets_rows_the_watermark_passed) {
  const char *pushes[] = {
      ("bids:{\"item\": \"a\", \"price\": 1, \"ts\": \"2024-01-01 00:00:01\"}\n"
       "{\"item\": \"a\", \"price\": 1, \"ts\": \"2024-01-01 00:00:01\"}\n"
       "{\"item\": \"b\", \"price\": 2, \"ts\": \"2024-01-01 00:00:02\"}\n"),
      ("bids:{\"item\": \"a\", \"price\": 1, \"ts\": \"2024-01-01 00:00:01\"}\n"
       "{\"item\": \"b\", \"price\": 2, \"ts\": \"2024-01-01 00:00:02\"}\n"
       "{\"item\": \"c\", \"price\": 3, \"ts\": \"2024-01-01 00:00:03\"}\n"),
      ("bids:{\"item\": \"a\", \"price\": 1, \"ts\": \"2024-01-01 00:00:01\"}\n"
       "{\"item\": \"d\", \"price\": 4, \"ts\": \"2024-01-01 00:00:04\"}\n"),
  };
  int64_t late = -1;
  /* batch 1 runs under watermark 2 s but judges late rows by batch 0's
  ** (none): its a and b equal kept rows.  a (1 s) is forgotten as batch 1
  ** ends; the a of batch 2 is late (1 s < 2 s, batch 1's watermark) */
  CHECK_STR(stream_rows(BIDS
                        "CREATE TABLE out (item STRING, price INT) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT item, price FROM (SELECT DISTINCT item, price, ts FROM bids);\n",
                        pushes, 3, 4, &late),
            "a|1\nb|2\nc|3\nd|4\n");
  CHECK_EQ(late, 1);
}

TEST(over_on_processing_time_computes_rows_as_they_arrive) {
  const char *pushes[] = {
      "clicks:{\"u\": \"a\"}\n{\"u\": \"a\"}\n{\"u\": \"b\"}\n",
      "clicks:{\"u\": \"a\"}\n",
  };
  CHECK_STR(stream_rows("CREATE TABLE clicks (u STRING, p AS PROCTIME()) WITH ('connector' = 'memory');\n"
                        "CREATE TABLE out (u STRING, n BIGINT) WITH ('connector' = 'memory');\n"
                        "INSERT INTO out SELECT u, COUNT(*) OVER (PARTITION BY u ORDER BY p\n"
                        "  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM clicks;\n",
                        pushes, 2, 2, NULL),
            "a|1\na|2\na|3\nb|1\n");
}

int main(void) { return RUN_TESTS(); }
