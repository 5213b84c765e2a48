/*
** asof_state_test.c — the checkpointed state of the as-of join (op_asof.c):
** resumed after every micro-batch from its whole state and from chains of
** deltas, its output from there on must be the straight run's; every
** truncated or damaged blob fails cleanly (ops_state_harness.h).  The cases
** cover both ways it runs: two streams looking back (with and without a
** tolerance: right rows evicted by the watermark and by key) and forward
** (left rows waiting), a stream against a bounded table (each left row
** matched at once), and two bounded inputs kept until the end.
*/
#include "ops_state_harness.h"

#define T(s) "2024-01-01 00:00:" s
#define TR(id, sym, s) "{\"id\": " #id ", \"sym\": \"" sym "\", \"tt\": \"" T(s) "\"}\n"
#define QU(sym, s, px) "{\"sym\": \"" sym "\", \"qt\": \"" T(s) "\", \"px\": " #px "}\n"

#define TQ_DDL(opts)                                                                     \
  "CREATE TABLE trades (id INT, sym STRING, tt TIMESTAMP(3), WATERMARK FOR tt AS tt)"    \
  " WITH ('connector' = 'memory'" opts ");\n"                                           \
  "CREATE TABLE quotes (sym STRING, qt TIMESTAMP(3), px INT, WATERMARK FOR qt AS qt)"    \
  " WITH ('connector' = 'memory'" opts ");\n"

/* Six batches: ties, a late trade and a late quote (batch 3), a key without
** quotes (c), quotes that arrive out of order (a at 11 s after 12 s). */
#define TQ_BATCHES                                                                       \
  {{TR(1, "a", "02") TR(2, "a", "04"), QU("a", "01", 10) QU("a", "03", 11) QU("a", "03", 13)}, \
   {TR(3, "a", "06"), QU("a", "05", 12)},                                                \
   {TR(4, "b", "08") TR(5, "c", "07"), QU("b", "07", 20) QU("a", "12", 14)},             \
   {TR(6, "a", "01") TR(7, "a", "10"), QU("a", "02", 50) QU("a", "11", 15)},             \
   {TR(8, "b", "15"), QU("b", "16", 21) QU("a", "17", 16)},                              \
   {TR(9, "a", "30"), QU("a", "31", 17) QU("b", "40", 22)}}

#define ASOF_SQL(op, tail)                                                               \
  "SELECT t.id, q.px FROM trades t ASOF LEFT JOIN quotes q MATCH_CONDITION (t.tt " op    \
  " q.qt) ON t.sym = q.sym" tail ";"

TEST(asof_looking_back_evicts_by_key) {
  static const script sc = {TQ_DDL("") ASOF_SQL(">=", ""), {"trades", "quotes"}, TQ_BATCHES, 6};
  /* watermarks after each batch: 3 s, 5 s, 8 s, 10 s, 15 s, 30 s; trade 6 and
     the quote at 2 s are late in batch 3; trade 2 takes the tied quote that
     came last (13); trade 7 (10 s) does not see the quotes at 11 and 12 s */
  check_script(&sc, "#0\n#1\n1, 10\n#2\n2, 13\n#3\n3, 12\n4, 20\n5, NULL\n#4\n7, 12\n"
                    "#5\n8, 20\n#6\n9, 16\n");
}

TEST(asof_looking_back_with_a_tolerance) {
  static const script sc = {TQ_DDL("") ASOF_SQL(">", " TOLERANCE INTERVAL '2' SECOND"),
                            {"trades", "quotes"}, TQ_BATCHES, 6};
  check_script(&sc, NULL);
}

TEST(asof_looking_forward_keeps_left_rows_waiting) {
  static const script sc = {TQ_DDL("") ASOF_SQL("<=", " TOLERANCE INTERVAL '3' SECOND"),
                            {"trades", "quotes"}, TQ_BATCHES, 6};
  /* trade 1 takes the tied quote at 3 s that came last; trade 3 (6 s) has no
     quote by 9 s and leaves padded once the watermark is 10 s */
  check_script(&sc, "#0\n#1\n1, 13\n#2\n2, 12\n#3\n#4\n3, NULL\n5, NULL\n#5\n4, NULL\n"
                    "7, 15\n#6\n8, 21\n9, 17\n");
}

TEST(asof_of_two_bounded_inputs_matches_at_the_end) {
  static const script sc = {TQ_DDL(", 'bounded' = 'true'") ASOF_SQL("<", ""),
                            {"trades", "quotes"}, TQ_BATCHES, 6};
  /* nothing is late: trade 6 (1 s) meets the quote at 2 s */
  check_script(&sc, "#0\n#1\n#2\n#3\n#4\n#5\n#6\n1, 13\n2, 12\n3, 15\n4, 21\n5, NULL\n"
                    "6, 50\n7, 15\n8, 21\n9, 17\n");
}

#define TABLE_DDL                                                                        \
  "CREATE TABLE trades (id INT, sym STRING, tt TIMESTAMP(3), WATERMARK FOR tt AS tt)"    \
  " WITH ('connector' = 'memory');\n"                                                    \
  "CREATE TABLE quotes (sym STRING, qt TIMESTAMP(3), px INT)"                            \
  " WITH ('connector' = 'memory', 'bounded' = 'true');\n"

TEST(asof_of_a_stream_against_a_bounded_table) {
  static const script sc = {TABLE_DDL ASOF_SQL("<=", ""), {"trades", "quotes"}, TQ_BATCHES, 6};
  /* each trade against the quotes read so far, at once; nothing is late */
  check_script(&sc, "#0\n1, 13\n2, NULL\n#1\n3, NULL\n#2\n4, NULL\n5, NULL\n#3\n6, 10\n"
                    "7, 15\n#4\n8, 21\n#5\n9, 17\n#6\n");
}

int main(void) { return RUN_TESTS(); }
