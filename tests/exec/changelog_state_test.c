/*
** changelog_state_test.c — the checkpointed state of the operators that
** carry changes (exec/changelog.h): the upsert-to-retract step above an
** aggregation whose consumer takes retractions (changelog.c) and the
** aggregation over an updating input (agg_retract.c, with the multisets of
** agg_multiset.c for MIN, MAX and COUNT DISTINCT, agg_vlist.c for
** FIRST_VALUE, LAST_VALUE and LISTAGG), and SELECT DISTINCT over changes.
**
** ops_state_harness.h's check: run A straight through; run B resumed after
** every micro-batch from the saved states (both operators write whole
** states), its output from there on byte for byte A's; every truncation of
** a blob refused as DIPPER_CORRUPT with a diagnostic, damaged bytes refused
** or restored, never a crash.  Each output row is printed after its change
** kind (+I, -U, +U, -D).
*/
#include "ops_state_harness.h"

#define KV(k, v) "{\"k\": \"" k "\", \"v\": " #v "}\n"

#define KV_DDL                                                                     \
  "CREATE TABLE kv (k STRING, v INT) WITH ('connector' = 'memory');\n"            \
  "SET 'dipper.output-mode' = 'update';\n"

/* Keys move between counts: groups appear, change, empty and come back. */
#define KV_BATCHES                                                                 \
  {{KV("a", 1) KV("a", 2) KV("b", 5)},                                             \
   {KV("b", 10)},                                                                  \
   {KV("a", 0) KV("c", 0)},                                                        \
   {KV("c", 4) KV("d", 1)},                                                        \
   {KV("d", 2) KV("d", 3) KV("e", 7)}}

TEST(count_of_keys_per_count) {
  static const script sc = {
      KV_DDL "SELECT c, COUNT(*) FROM (SELECT k, COUNT(*) AS c FROM kv GROUP BY k) GROUP BY c;",
      {"kv"}, KV_BATCHES, 5};
  /* Groups come out in the order the batch first touched them. */
  check_script(&sc, "#0\n+I 2, 1\n+I 1, 1\n"
                    "#1\n-D 1, 1\n-U 2, 1\n+U 2, 2\n"
                    "#2\n-U 2, 2\n+U 2, 1\n+I 3, 1\n+I 1, 1\n"
                    /* c: 1 -> 2 and d new: count 1 loses one key and gains one */
                    "#3\n-U 2, 1\n+U 2, 2\n"
                    /* d: 1 -> 3 and e new */
                    "#4\n-U 3, 1\n+U 3, 2\n#5\n");
}

TEST(sum_and_average_of_sums_over_a_filter) {
  static const script sc = {
      KV_DDL "SELECT COUNT(*), SUM(s), AVG(s) FROM (SELECT k, SUM(v) AS s FROM kv GROUP BY k"
             " HAVING SUM(v) > 2);",
      {"kv"}, KV_BATCHES, 5};
  /* a 3 b 5 | b 15 | a 3, c 0 (out) | c 4, d 1 (out) | d 6, e 7 */
  check_script(&sc, "#0\n+I 2, 8, 4E0\n"
                    "#1\n-U 2, 8, 4E0\n+U 2, 18, 9E0\n"
                    "#2\n"
                    "#3\n-U 2, 18, 9E0\n+U 3, 22, 7.333333333333333E0\n"
                    "#4\n-U 3, 22, 7.333333333333333E0\n+U 5, 35, 7E0\n#5\n");
}

/* MIN, MAX and a DISTINCT count keep the multiset of the sums
** (agg_multiset.c), which the checkpoint carries. */
TEST(min_max_and_distinct_count_of_sums) {
  static const script sc = {
      KV_DDL "SELECT MIN(s), MAX(s), COUNT(DISTINCT s) FROM (SELECT k, SUM(v) AS s FROM kv"
             " GROUP BY k);",
      {"kv"}, KV_BATCHES, 5};
  /* a 3 b 5 | b 15 | a 3 (unchanged), c 0 | c 4, d 1 | d 6, e 7 */
  check_script(&sc, "#0\n+I 3, 5, 2\n"
                    "#1\n-U 3, 5, 2\n+U 3, 15, 2\n"
                    "#2\n-U 3, 15, 2\n+U 0, 15, 3\n"
                    "#3\n-U 0, 15, 3\n+U 1, 15, 4\n"
                    "#4\n-U 1, 15, 4\n+U 3, 15, 5\n#5\n");
}

/* SELECT DISTINCT over an updating input: a GROUP BY on its columns without
** aggregates (plan/analyze.c), whose state is the groups' row counts. */
TEST(distinct_over_an_updating_aggregation) {
  static const script sc = {
      KV_DDL "SELECT DISTINCT c FROM (SELECT k, COUNT(*) AS c FROM kv GROUP BY k);",
      {"kv"}, KV_BATCHES, 5};
  /* counts a 2 b 1 | b 2 | a 3, c 1 | c 2, d 1 | d 3, e 1 */
  check_script(&sc, "#0\n+I 2\n+I 1\n#1\n-D 1\n#2\n+I 3\n+I 1\n#3\n#4\n#5\n");
}

/* FIRST_VALUE, LAST_VALUE and LISTAGG keep the values in arrival order
** (agg_vlist.c), a DISTINCT LISTAGG a multiset too; the checkpoint carries
** both, and the separator. */
TEST(value_lists_of_an_updating_aggregation) {
  static const script sc = {
      KV_DDL "SELECT LISTAGG(k), FIRST_VALUE(s), LAST_VALUE(s), LISTAGG(DISTINCT CAST(c AS"
             " STRING), ';') FROM (SELECT k, COUNT(*) AS c, SUM(v) AS s FROM kv GROUP BY k);",
      {"kv"}, KV_BATCHES, 5};
  /* Each -U takes its value's oldest copy back, each +U/+I appends:
     k [a b] s [3 5] | [a b] [3 15] | [b a c] [15 3 0] | [b a c d] [15 3 4 1] |
     [b a c d e] [15 3 4 6 7]; the distinct counts in the order they turned positive. */
  check_script(&sc, "#0\n+I 'a,b', 3, 5, '2;1'\n"
                    "#1\n-U 'a,b', 3, 5, '2;1'\n+U 'a,b', 3, 15, '2'\n"
                    "#2\n-U 'a,b', 3, 15, '2'\n+U 'b,a,c', 15, 0, '2;3;1'\n"
                    "#3\n-U 'b,a,c', 15, 0, '2;3;1'\n+U 'b,a,c,d', 15, 1, '2;3;1'\n"
                    "#4\n-U 'b,a,c,d', 15, 1, '2;3;1'\n+U 'b,a,c,d,e', 15, 7, '2;3;1'\n#5\n");
}

#define K(k) "{\"k\": \"" k "\"}\n"

/* A join of two updating aggregations (op_join_retract.c): matches come
** and go as either side's groups change. */
TEST(join_of_two_updating_aggregations) {
  static const script sc = {
      "CREATE TABLE s1 (k STRING) WITH ('connector' = 'memory');\n"
      "CREATE TABLE kv (k STRING, v INT) WITH ('connector' = 'memory');\n"
      "SET 'dipper.output-mode' = 'update';\n"
      "SELECT a.k, a.c, b.s FROM (SELECT k, COUNT(*) AS c FROM s1 GROUP BY k) a"
      " JOIN (SELECT k, SUM(v) AS s FROM kv GROUP BY k) b ON a.k = b.k AND b.s > 2;",
      {"s1", "kv"},
      {{K("a") K("a") K("b"), KV("a", 1) KV("a", 2) KV("b", 5)},
       {K("b"), KV("b", 10)},
       {K("c"), KV("a", 0) KV("c", 0)},
       {K("c") K("d"), KV("c", 4) KV("d", 1)},
       {K("a"), KV("d", 2) KV("d", 3) KV("e", 7)}},
      5};
  /* The left input goes first in a batch, then the right; each match has
  ** its input row's kind (Flink's inner join forwards them). */
  check_script(&sc, "#0\n+I 'a', 2, 3\n+I 'b', 1, 5\n"
                    /* b: count 1 -> 2 (left), then sum 5 -> 15 (right) */
                    "#1\n-U 'b', 1, 5\n+U 'b', 2, 5\n-U 'b', 2, 5\n+U 'b', 2, 15\n"
                    /* a's sum stays 3; c's sum 0 fails b.s > 2 */
                    "#2\n"
                    /* c: count 2, sum 0 -> 4 (its -U fails the condition); d: sum 1 (fails) */
                    "#3\n+U 'c', 2, 4\n"
                    /* a: count 3; d: sum 1 -> 6 */
                    "#4\n-U 'a', 2, 3\n+U 'a', 3, 3\n+U 'd', 1, 6\n#5\n");
}

/* A FULL JOIN of two updating aggregations: each side's rows count their
** matches (saved beside the rows), padded rows go and come back. */
TEST(full_join_of_two_updating_aggregations) {
  static const script sc = {
      "CREATE TABLE s1 (k STRING) WITH ('connector' = 'memory');\n"
      "CREATE TABLE kv (k STRING, v INT) WITH ('connector' = 'memory');\n"
      "SET 'dipper.output-mode' = 'update';\n"
      "SELECT a.k, a.c, b.k, b.s FROM (SELECT k, COUNT(*) AS c FROM s1 GROUP BY k) a"
      " FULL JOIN (SELECT k, SUM(v) AS s FROM kv GROUP BY k) b ON a.k = b.k;",
      {"s1", "kv"},
      {{K("a") K("b"), KV("a", 1)},
       {K("c"), KV("b", 2)},
       {K("a"), KV("a", 1) KV("d", 4)},
       {NULL, KV("d", -4)}},
      4};
  check_script(&sc, "#0\n+I 'a', 1, NULL, NULL\n+I 'b', 1, NULL, NULL\n"
                    "-D 'a', 1, NULL, NULL\n+I 'a', 1, 'a', 1\n"
                    "#1\n+I 'c', 1, NULL, NULL\n-D 'b', 1, NULL, NULL\n+I 'b', 1, 'b', 2\n"
                    /* a: count 1 -> 2 (left), then sum 1 -> 2 (right); d new */
                    "#2\n-D 'a', 1, 'a', 1\n+I NULL, NULL, 'a', 1\n"
                    "-D NULL, NULL, 'a', 1\n+I 'a', 2, 'a', 1\n"
                    "-D 'a', 2, 'a', 1\n+I 'a', 2, NULL, NULL\n"
                    "-D 'a', 2, NULL, NULL\n+I 'a', 2, 'a', 2\n+I NULL, NULL, 'd', 4\n"
                    "#3\n-D NULL, NULL, 'd', 4\n+I NULL, NULL, 'd', 0\n#4\n");
}

#define LA(k, a) "{\"k\": " #k ", \"a\": \"" a "\"}\n"
#define RB(k, b) "{\"k\": " #k ", \"b\": \"" b "\"}\n"
#define LR_DDL                                                                    \
  "CREATE TABLE l (k INT, a STRING) WITH ('connector' = 'memory');\n"             \
  "CREATE TABLE r (k INT, b STRING) WITH ('connector' = 'memory');\n"             \
  "SET 'dipper.output-mode' = 'update';\n"

/* A LEFT JOIN of two append streams without a time range (Flink's regular
** join): a left row is padded until its first match; the match counts and
** the rows are the state a restore must give back. */
TEST(left_join_of_two_append_streams) {
  static const script sc = {
      LR_DDL "SELECT l.k, l.a, r.b FROM l LEFT JOIN r ON l.k = r.k;",
      {"l", "r"},
      {{LA(1, "x") LA(2, "y"), NULL},
       {NULL, RB(1, "p")},
       {LA(1, "z"), RB(3, "q")},
       {LA(3, "w"), RB(2, "s") RB(1, "t")}},
      4};
  check_script(&sc, "#0\n+I 1, 'x', NULL\n+I 2, 'y', NULL\n"
                    "#1\n-D 1, 'x', NULL\n+I 1, 'x', 'p'\n"
                    "#2\n+I 1, 'z', 'p'\n"
                    /* w meets q; s takes y's padded row; t matches z and x */
                    "#3\n+I 3, 'w', 'q'\n-D 2, 'y', NULL\n+I 2, 'y', 's'\n"
                    "+I 1, 'z', 't'\n+I 1, 'x', 't'\n#4\n");
}

/* The same FULL JOIN with 'table.exec.state.ttl' = '10 s' on the script's
** clock: a stored row not written for 10 s goes without output, and a
** restore after any batch expires what the straight run expires (the lists
** are checkpointed after the rows).  A preserved row whose match count
** changes is written again (Flink's OnCreateAndWrite over its state). */
TEST(full_join_with_a_state_ttl) {
  static const int64_t clock[] = {100, 105, 109, 112, 125, 125};
  static const script sc = {
      LR_DDL "SET 'table.exec.state.ttl' = '10 s';\n"
             "SELECT l.k, l.a, r.k, r.b FROM l FULL JOIN r ON l.k = r.k;",
      {"l", "r"},
      {/* 100: x (1) and p (2), both padded */
       {LA(1, "x"), RB(2, "p")},
       /* 105: q (1) matches x, which is written again at 105 */
       {NULL, RB(1, "q")},
       /* 109: y (2) meets p (100); p is written again at 109 */
       {LA(2, "y"), NULL},
       /* 112: at 112 nothing of 100 is left unwritten; s (1) meets x (105) */
       {NULL, RB(1, "s")},
       /* 125: everything expired (last writes 105..112): z (1) is padded */
       {LA(1, "z"), NULL}},
      5, clock};
  check_script(&sc, "#0\n+I 1, 'x', NULL, NULL\n+I NULL, NULL, 2, 'p'\n"
                    "#1\n-D 1, 'x', NULL, NULL\n+I 1, 'x', 1, 'q'\n"
                    "#2\n-D NULL, NULL, 2, 'p'\n+I 2, 'y', 2, 'p'\n"
                    "#3\n+I 1, 'x', 1, 's'\n"
                    "#4\n+I 1, 'z', NULL, NULL\n#5\n");
}

int main(void) { return RUN_TESTS(); }
