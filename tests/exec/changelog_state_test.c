/*
** changelog_state_test.c — the checkpointed state of the operators that
** carry changes (exec/changelog.h): the upsert-to-retract step above an
** aggregation whose consumer takes retractions (changelog.c) and the
** aggregation over an updating input (agg_retract.c).
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

int main(void) { return RUN_TESTS(); }
