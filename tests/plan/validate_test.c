/*
** validate_test.c — dp_validate: every streaming refusal with its code, its
** line:col (the node's span) and the words of its message, and the allowed
** forms beside them.  Plans are built by hand so that each rule meets exactly
** the plan it is about.
*/
#include "test.h"

#include "plan/binder.h"
#include "sql/parser.h"
#include "stream_fixture.h"

#define SEC DP_MICROS_PER_SECOND
#define MIN DP_MICROS_PER_MINUTE
#define HOUR DP_MICROS_PER_HOUR

/* One diagnostic, DIPPER_STREAMING, at line:col, whose message holds `words`. */
#define CHECK_REFUSED(line_, col_, words)                     \
  do {                                                        \
    CHECK_EQ(fx_check(), 1);                                  \
    if (fx_d.count >= 1) {                                    \
      CHECK_EQ(fx_d.items[0].code, DIPPER_STREAMING);         \
      CHECK_EQ(fx_d.items[0].span.line, line_);               \
      CHECK_EQ(fx_d.items[0].span.col, col_);                 \
      CHECK_CONTAINS(fx_d.items[0].message, words);           \
    }                                                         \
  } while (0)

#define CHECK_ACCEPTED()                                      \
  do {                                                        \
    int count_ = fx_check();                                  \
    CHECK_EQ(count_, 0);                                      \
    if (count_ > 0) fprintf(stderr, "  first: %s\n", fx_d.items[0].message); \
  } while (0)

static dp_plan *plain_count_per_province(void) {
  int keys[] = {4};
  return fx_aggregate(fx_payments(), 1, keys, &FX_COUNT, -1, "cnt", NULL, 4, 1);
}

static dp_plan *hop_sum_per_province(void) {
  dp_plan *win = fx_window(fx_payments(), DP_WIN_HOP, 0, MIN, 30 * SEC, 3, 12);
  int keys[] = {4, 5, 6};
  return fx_aggregate(win, 3, keys, &FX_SUM, 2, "pay_amount", win, 4, 1);
}

/* ---- ORDER BY ---- */

TEST(order_by_on_a_stream) {
  fx_begin(true);
  fx_root(fx_sort(fx_payments(), 2, true, 5, 1));
  CHECK_REFUSED(5, 1, "ORDER BY on an unbounded stream never finishes");
  CHECK_CONTAINS(fx_d.items[0].message, "window Top-N");
  CHECK_CONTAINS(fx_d.items[0].message, "SET 'dipper.output-mode' = 'complete'");
  CHECK_CONTAINS(fx_d.items[0].message, "SET 'execution.runtime-mode' = 'batch'");
  fx_end();
}

TEST(order_by_an_aggregation_in_complete_mode) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_COMPLETE;
  fx_root(fx_sort(plain_count_per_province(), 1, true, 5, 1));
  CHECK_ACCEPTED();
  fx_end();

  /* The same without complete mode is refused. */
  fx_begin(true);
  fx_root(fx_sort(plain_count_per_province(), 1, true, 5, 1));
  CHECK_REFUSED(5, 1, "ORDER BY");
  fx_end();
}

TEST(order_by_event_time_ascending_is_allowed_without_limit) {
  fx_begin(true);
  fx_root(fx_sort(fx_payments(), 0, false, 5, 1));
  CHECK_ACCEPTED();
  fx_end();

  fx_begin(true);
  fx_root(fx_sort(fx_payments(), 0, true, 5, 1));
  CHECK_REFUSED(5, 1, "ORDER BY");
  fx_end();

  /* ORDER BY ts LIMIT n: the sort is refused, once. */
  fx_begin(true);
  fx_root(fx_limit(fx_sort(fx_payments(), 0, false, 5, 1), 3, 6, 1));
  CHECK_REFUSED(5, 1, "ORDER BY");
  fx_end();
}

TEST(order_by_in_batch_mode) {
  fx_begin(false);
  dp_plan *s = fx_sort(fx_payments(), 2, true, 5, 1);
  /* a kafka source needs a bounded mode in batch */
  dp_table_def *t = fx_last_table;
  t->noptions = 1;
  t->options = dp_arena_calloc(fx_a, 1, sizeof(dp_option));
  t->options[0].key = "scan.bounded.mode";
  t->options[0].value = "latest-offset";
  fx_root(s);
  CHECK_ACCEPTED();
  fx_end();
}

/* ---- LIMIT ---- */

TEST(limit_on_a_stream) {
  fx_begin(true);
  fx_root(fx_limit(fx_payments(), 10, 7, 3));
  CHECK_REFUSED(7, 3, "LIMIT on an unbounded stream");
  CHECK_CONTAINS(fx_d.items[0].message, "ROW_NUMBER()");
  fx_end();
}

TEST(limit_of_an_aggregation_in_complete_mode) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_COMPLETE;
  fx_root(fx_limit(fx_sort(plain_count_per_province(), 1, true, 5, 1), 3, 6, 1));
  CHECK_ACCEPTED();
  fx_end();
}

/* ---- output modes ---- */

TEST(append_mode_with_an_unwindowed_aggregation) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_APPEND;
  fx_root(plain_count_per_province());
  CHECK_REFUSED(4, 1, "append mode emits a row only once it is final");
  CHECK_CONTAINS(fx_d.items[0].message, "COUNT per provinceId changes with every new row");
  CHECK_CONTAINS(fx_d.items[0].message, "add a window (TUMBLE/HOP/SESSION");
  CHECK_CONTAINS(fx_d.items[0].message, "or use update mode");
  fx_end();
}

TEST(culprit_below_a_projection) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_APPEND;
  int cols[] = {1};
  fx_root(fx_project_cols(plain_count_per_province(), 1, cols, NULL));
  CHECK_REFUSED(4, 1, "append mode");
  fx_end();
}

TEST(update_and_complete_mode_with_an_unwindowed_aggregation) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_UPDATE;
  fx_root(plain_count_per_province());
  CHECK_ACCEPTED();
  fx_end();

  fx_begin(true);
  fx_q.output_mode = DP_MODE_COMPLETE;
  fx_root(plain_count_per_province());
  CHECK_ACCEPTED();
  fx_end();
}

TEST(append_mode_with_a_window_aggregation) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_APPEND;
  fx_root(hop_sum_per_province());
  CHECK_ACCEPTED();
  fx_end();
}

TEST(update_mode_on_a_plain_stream) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_UPDATE;
  fx_root(fx_filter(fx_payments(), fx_bool2(&FX_GT, fx_col(fx_payments(), 2), fx_intlit(1))));
  CHECK_ACCEPTED();
  fx_end();
}

TEST(complete_mode_without_an_aggregation) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_COMPLETE;
  int cols[] = {1, 2};
  dp_plan *p = fx_project_cols(fx_payments(), 2, cols, NULL);
  p->span = fx_span(1, 1);
  fx_root(p);
  CHECK_REFUSED(1, 1, "complete mode re-emits the whole result");
  CHECK_CONTAINS(fx_d.items[0].message, "this query has none");
  fx_end();
}

TEST(append_mode_with_state_never_cleaned) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_APPEND;
  dp_plan *d = fx_dedup(fx_payments_raw(), 1, -1, false, 4, 2);
  fx_root(d);
  CHECK_REFUSED(4, 2, "append mode needs state that the watermark can clean");
  CHECK_CONTAINS(fx_d.items[0].message, "one row per key (orderId)");
  fx_end();

  /* The same deduplication is fine when no mode is asked for. */
  fx_begin(true);
  fx_root(fx_dedup(fx_payments_raw(), 1, -1, false, 4, 2));
  CHECK_ACCEPTED();
  fx_end();
}

TEST(append_mode_dedup_keep_last) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_APPEND;
  fx_root(fx_dedup(fx_payments(), 1, 0, true, 4, 2));
  CHECK_REFUSED(4, 2, "revises rows it has already emitted");
  CHECK_CONTAINS(fx_d.items[0].message, "keep the first row per key");
  fx_end();
}

/* ---- windows and watermarks ---- */

TEST(window_over_a_column_without_watermark) {
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments_raw(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 48);
  int keys[] = {5, 6};
  fx_root(fx_aggregate(win, 2, keys, &FX_COUNT, -1, "cnt", win, 3, 1));
  CHECK_REFUSED(2, 48, "TUMBLE needs an event-time attribute");
  CHECK_CONTAINS(fx_d.items[0].message, "createTime is a plain TIMESTAMP(3) column");
  CHECK_CONTAINS(fx_d.items[0].message,
                 "WATERMARK FOR createTime AS createTime - INTERVAL '5' SECOND");
  CHECK_CONTAINS(fx_d.items[0].message, "`payment_msg`");
  CHECK_CONTAINS(fx_d.items[0].message, "PROCTIME()");
  fx_end();
}

TEST(spark_window_name_in_the_message) {
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments_raw(), DP_WIN_SESSION, 0, MIN, 0, 3, 17);
  win->u.window.syntax = DP_WSYN_SPARK;
  fx_root(win);
  CHECK_REFUSED(3, 17, "session_window() needs an event-time attribute");
  fx_end();
}

TEST(window_in_batch_mode_needs_no_watermark) {
  fx_begin(false);
  dp_plan *scan = fx_payments_raw();
  fx_last_table->connector = "filesystem";
  dp_plan *win = fx_window(scan, DP_WIN_TUMBLE, 0, MIN, MIN, 2, 48);
  fx_root(win);
  CHECK_ACCEPTED();
  fx_end();
}

TEST(window_on_proctime) {
  fx_begin(true);
  dp_table_def *t = fx_table("clicks", "kafka", false, "user_id", fx_bigint(), "proc",
                             dp_type_of(DP_T_TIMESTAMP_LTZ), (const char *)NULL);
  t->cols[1].proctime = true;
  dp_plan *win = fx_window(fx_scan(t, 1, 1), DP_WIN_TUMBLE, 1, MIN, MIN, 2, 1);
  int keys[] = {2, 3};
  fx_q.output_mode = DP_MODE_APPEND;
  fx_root(fx_aggregate(win, 2, keys, &FX_COUNT, -1, "cnt", win, 3, 1));
  CHECK_ACCEPTED();
  fx_end();
}

TEST(watermark_on_a_non_timestamp_column) {
  fx_begin(true);
  dp_plan *w = fx_watermark(fx_payments_raw(), 1, SEC, "payment_msg");
  w->span = fx_span(2, 3);
  fx_root(w);
  CHECK_REFUSED(2, 3, "WATERMARK FOR orderId needs a TIMESTAMP(3) or TIMESTAMP_LTZ(3) column");
  CHECK_CONTAINS(fx_d.items[0].message, "orderId is BIGINT");
  fx_end();
}

/* ---- joins ---- */

static void two_streams(dp_plan **l, dp_plan **r, bool lwm, bool rwm) {
  dp_table_def *o = fx_table("orders", "kafka", false, "id", fx_bigint(), "ts", fx_ts(),
                             (const char *)NULL);
  dp_table_def *s = fx_table("ships", "kafka", false, "order_id", fx_bigint(), "ship_ts", fx_ts(),
                             (const char *)NULL);
  *l = fx_scan(o, 2, 6);
  *r = fx_scan(s, 3, 6);
  if (lwm) *l = fx_watermark(*l, 1, 5 * SEC, "orders");
  if (rwm) *r = fx_watermark(*r, 1, 5 * SEC, "ships");
}

static dp_expr *time_bound(dp_plan *l, dp_plan *r) {
  dp_expr *lo = fx_call(&FX_SUB, fx_ts(), 2, fx_jcol(l, r, 3), fx_interval(HOUR));
  dp_expr *hi = fx_call(&FX_ADD, fx_ts(), 2, fx_jcol(l, r, 3), fx_interval(HOUR));
  return fx_call(&FX_BETWEEN, dp_type_of(DP_T_BOOLEAN), 3, fx_jcol(l, r, 1), lo, hi);
}

/* Flink's regular join: accepted in update mode (it takes its padded rows
** back, exec/op_join_retract.c), refused in append mode with the bound that
** would make it append-only. */
TEST(left_join_of_streams_without_time_bound) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, true);
  fx_root(fx_join(l, r, DP_J_LEFT, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0, 0, 3,
                  1));
  CHECK_ACCEPTED();
  fx_end();

  fx_begin(true);
  two_streams(&l, &r, true, true);
  fx_q.output_mode = DP_MODE_APPEND;
  fx_root(fx_join(l, r, DP_J_LEFT, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0, 0, 3,
                  1));
  CHECK_REFUSED(3, 1, "LEFT JOIN of two streams must know when a row can no longer find a match");
  CHECK_CONTAINS(fx_d.items[0].message, "the condition has no time range");
  CHECK_CONTAINS(fx_d.items[0].message, "AND ts BETWEEN ship_ts - INTERVAL '1' HOUR");
  fx_end();
}

TEST(outer_join_of_streams_without_watermark_says_which_side) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, false);
  dp_expr *cond = fx_bool2(&FX_AND, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)),
                           time_bound(l, r));
  fx_q.output_mode = DP_MODE_APPEND;
  fx_root(fx_join(l, r, DP_J_FULL, cond, 0, 0, 3, 1));
  CHECK_REFUSED(3, 1, "FULL JOIN");
  CHECK_CONTAINS(fx_d.items[0].message, "the right side has no watermark");
  fx_end();

  fx_begin(true);
  two_streams(&l, &r, false, true);
  fx_root(fx_join(l, r, DP_J_ANTI, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0, 0, 3,
                  1));
  CHECK_REFUSED(3, 1, "ANTI JOIN");
  CHECK_CONTAINS(fx_d.items[0].message, "the left side has no watermark");
  fx_end();
}

TEST(left_join_of_streams_with_time_bound) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, true);
  dp_expr *cond = fx_bool2(&FX_AND, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)),
                           time_bound(l, r));
  fx_q.output_mode = DP_MODE_APPEND;
  fx_root(fx_join(l, r, DP_J_LEFT, cond, 0, 0, 3, 1));
  CHECK_ACCEPTED();
  fx_end();
}

TEST(inner_join_without_bound_in_append_mode) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, true);
  dp_plan *j =
      fx_join(l, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0, 0, 3, 1);
  fx_root(j);
  CHECK_ACCEPTED(); /* the mode was not asked for: Flink's regular join */
  fx_end();

  fx_begin(true);
  two_streams(&l, &r, true, true);
  fx_q.output_mode = DP_MODE_APPEND;
  fx_root(fx_join(l, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0, 0,
                  3, 1));
  CHECK_REFUSED(3, 1, "this join keeps every row of both sides forever");
  fx_end();
}

TEST(stream_static_outer_joins) {
  dp_table_def *ct;
  /* stream LEFT JOIN table: fine */
  fx_begin(true);
  ct = fx_table("provinces", "datagen", true, "id", fx_int(), (const char *)NULL);
  dp_plan *l = fx_payments(), *r = fx_scan(ct, 4, 6);
  fx_root(fx_join(l, r, DP_J_LEFT, fx_bool2(&FX_EQ, fx_jcol(l, r, 4), fx_jcol(l, r, 5)), 4, 0, 3,
                  1));
  CHECK_ACCEPTED();
  fx_end();

  /* stream FULL JOIN table: refused */
  fx_begin(true);
  ct = fx_table("provinces", "datagen", true, "id", fx_int(), (const char *)NULL);
  l = fx_payments();
  r = fx_scan(ct, 4, 6);
  fx_root(fx_join(l, r, DP_J_FULL, fx_bool2(&FX_EQ, fx_jcol(l, r, 4), fx_jcol(l, r, 5)), 4, 0, 3,
                  1));
  CHECK_REFUSED(3, 1, "FULL JOIN of a stream and a bounded table");
  fx_end();

  /* table LEFT JOIN stream: refused */
  fx_begin(true);
  ct = fx_table("provinces", "datagen", true, "id", fx_int(), (const char *)NULL);
  l = fx_scan(ct, 4, 6);
  r = fx_payments();
  fx_root(fx_join(l, r, DP_J_LEFT, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 5)), 0, 4, 3,
                  1));
  CHECK_REFUSED(3, 1, "keep the stream on the preserved side");
  fx_end();

  /* table SEMI JOIN stream (an IN subquery over a stream): each table row once, fine */
  fx_begin(true);
  ct = fx_table("provinces", "datagen", true, "id", fx_int(), (const char *)NULL);
  l = fx_scan(ct, 4, 6);
  r = fx_payments();
  fx_root(fx_join(l, r, DP_J_SEMI, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 5)), 0, 4, 3,
                  1));
  CHECK_ACCEPTED();
  fx_end();

  /* table ANTI JOIN stream: refused */
  fx_begin(true);
  ct = fx_table("provinces", "datagen", true, "id", fx_int(), (const char *)NULL);
  l = fx_scan(ct, 4, 6);
  r = fx_payments();
  fx_root(fx_join(l, r, DP_J_ANTI, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 5)), 0, 4, 3,
                  1));
  CHECK_REFUSED(3, 1, "ANTI JOIN of a stream and a bounded table");
  fx_end();
}

TEST(temporal_join_rules) {
  dp_plan *l, *r;
  /* a versioned right side (primary key, watermark): fine */
  fx_begin(true);
  two_streams(&l, &r, true, true);
  fx_last_table->npk = 1;
  fx_last_table->pk = dp_arena_calloc(fx_a, 1, sizeof(int));
  dp_plan *j = fx_join(l, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0,
                       0, 3, 1);
  j->u.join.as_of = fx_col(l, 1);
  fx_root(j);
  CHECK_ACCEPTED();
  fx_end();

  /* no primary key on the right side: point at its table */
  fx_begin(true);
  two_streams(&l, &r, true, true);
  j = fx_join(l, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0, 0, 3, 1);
  j->u.join.as_of = fx_col(l, 1);
  fx_root(j);
  CHECK_REFUSED(3, 6, "needs a versioned table, but `ships` has no primary key");
  CHECK_CONTAINS(fx_d.items[0].message, "PRIMARY KEY");
  fx_end();

  /* AS OF a column that is no time attribute: point at the expression */
  fx_begin(true);
  two_streams(&l, &r, false, true);
  j = fx_join(l, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0, 0, 3, 1);
  j->u.join.as_of = fx_col(l, 1);
  j->u.join.as_of->span = fx_span(3, 34);
  fx_root(j);
  CHECK_REFUSED(3, 34, "FOR SYSTEM_TIME AS OF needs a time attribute of the left side, but ts");
  CHECK_CONTAINS(fx_d.items[0].message, "on `orders`");
  fx_end();

  /* an event-time temporal join over a right side without watermark */
  fx_begin(true);
  two_streams(&l, &r, true, false);
  fx_last_table->npk = 1;
  fx_last_table->pk = dp_arena_calloc(fx_a, 1, sizeof(int));
  j = fx_join(l, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0, 0, 3, 1);
  j->u.join.as_of = fx_col(l, 1);
  fx_root(j);
  CHECK_REFUSED(3, 6, "but `ships` has no watermark");
  fx_end();

  /* AS OF processing time is a lookup join: no versions needed */
  fx_begin(true);
  dp_table_def *ct = fx_table("clicks", "kafka", false, "user_id", fx_bigint(), "proc",
                              dp_type_of(DP_T_TIMESTAMP_LTZ), (const char *)NULL);
  ct->cols[1].proctime = true;
  l = fx_scan(ct, 2, 6);
  r = fx_scan(fx_table("side", "filesystem", false, "key", fx_bigint(), (const char *)NULL), 3, 6);
  j = fx_join(l, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0, 0, 3, 1);
  j->u.join.as_of = fx_col(l, 1);
  fx_root(j);
  CHECK_ACCEPTED();
  fx_end();
}

/* ---- DISTINCT, UNION, INTERSECT, EXCEPT ---- */

TEST(distinct_on_a_stream) {
  fx_begin(true);
  int cols[] = {4};
  /* Without a watermark among its columns it keeps every row forever:
     accepted, as Flink accepts it (with analyze_ttl.c's warning). */
  fx_root(fx_unary(DP_P_DISTINCT, fx_project_cols(fx_payments(), 1, cols, NULL), 1, 8));
  CHECK_ACCEPTED();
  fx_end();

  /* With the event-time column among the distinct columns, the watermark cleans it. */
  fx_begin(true);
  int cols2[] = {4, 0};
  fx_root(fx_unary(DP_P_DISTINCT, fx_project_cols(fx_payments(), 2, cols2, NULL), 1, 8));
  CHECK_ACCEPTED();
  fx_end();
}

TEST(union_without_all_on_streams) {
  fx_begin(true);
  int cols[] = {4};
  dp_plan *u = fx_binary(DP_P_UNION, fx_project_cols(fx_payments(), 1, cols, NULL),
                         fx_project_cols(fx_payments(), 1, cols, NULL), 2, 1);
  fx_root(u);
  /* a bare deduplicating union (no DISTINCT above it: only a plan built by hand) */
  CHECK_REFUSED(2, 1, "UNION (without ALL)");
  CHECK_CONTAINS(fx_d.items[0].message, "put a DISTINCT node above");
  fx_end();

  fx_begin(true);
  dp_plan *u2 = fx_binary(DP_P_UNION, fx_project_cols(fx_payments(), 1, cols, NULL),
                          fx_project_cols(fx_payments(), 1, cols, NULL), 2, 1);
  u2->u.union_.all = true;
  fx_root(u2);
  CHECK_ACCEPTED();
  fx_end();
}

TEST(union_written_as_distinct_over_union) {
  /* The binder's shape for UNION: DISTINCT over UNION (all=false), accepted
     (with the state warning of analyze_ttl.c), as Flink accepts it. */
  fx_begin(true);
  int cols[] = {4};
  dp_plan *u = fx_binary(DP_P_UNION, fx_project_cols(fx_payments(), 1, cols, NULL),
                         fx_project_cols(fx_payments(), 1, cols, NULL), 2, 1);
  dp_plan *d = fx_unary(DP_P_DISTINCT, u, 2, 1);
  fx_root(d);
  CHECK_ACCEPTED();
  CHECK_EQ(u->props.state, DP_STATE_NONE); /* the DISTINCT above holds the rows */
  CHECK_EQ(d->props.state, DP_STATE_KEYS);
  fx_end();
}

TEST(join_over_an_aggregation_in_update_mode) {
  fx_begin(true);
  dp_plan *agg = plain_count_per_province(); /* provinceId, cnt */
  dp_table_def *t = fx_table("targets", "kafka", false, "province", fx_int(), (const char *)NULL);
  dp_plan *r = fx_scan(t, 5, 6);
  /* An inner equi-join takes the aggregation's revisions as changes
     (exec/op_join_retract.c); Spark refuses it itself. */
  fx_root(fx_join(agg, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(agg, r, 0), fx_jcol(agg, r, 2)), 0,
                  0, 5, 1));
  CHECK_ACCEPTED();
  fx_end();

  /* Without an equality key it has no key to take a row back by. */
  fx_begin(true);
  agg = plain_count_per_province();
  r = fx_scan(fx_table("targets", "kafka", false, "province", fx_int(), (const char *)NULL), 5, 6);
  fx_root(fx_join(agg, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(agg, r, 0), fx_jcol(agg, r, 2)), -1,
                  0, 5, 1));
  CHECK_REFUSED(5, 1, "a join over the result of an aggregation can only run in append mode");
  fx_end();
}

TEST(chained_operators_in_complete_mode) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_COMPLETE;
  /* a deduplication above an aggregation: complete is not among its modes */
  fx_root(fx_dedup(plain_count_per_province(), 0, -1, true, 6, 1));
  CHECK_REFUSED(6, 1, "a deduplication over the result of an aggregation can only run in "
                      "append mode: in complete mode");
  fx_end();
}

TEST(intersect_and_except_on_streams) {
  fx_begin(true);
  fx_root(fx_binary(DP_P_SETOP, fx_payments(), fx_payments(), 2, 1));
  CHECK_REFUSED(2, 1, "INTERSECT on a stream");
  fx_end();

  fx_begin(true);
  dp_plan *e = fx_binary(DP_P_SETOP, fx_payments(), fx_payments(), 2, 1);
  e->u.setop.except = true;
  fx_root(e);
  CHECK_REFUSED(2, 1, "EXCEPT on a stream");
  CHECK_CONTAINS(fx_d.items[0].message, "ANTI JOIN");
  fx_end();
}

/* ---- chains of stateful operators ---- */

/* In update mode the embedded engine runs it as changes (exec/changelog.h):
** the outer aggregation takes each revised row back out, MIN and MAX from
** their multisets; FIRST_VALUE cannot (Spark refuses the chain itself:
** spark/stream_rules.c). */
TEST(aggregation_over_an_aggregation_in_update_mode) {
  fx_begin(true);
  int keys[] = {1};
  fx_root(fx_aggregate(plain_count_per_province(), 1, keys, dp_func_get(DP_F_COUNT), -1,
                       "provinces", NULL, 6, 1));
  CHECK_ACCEPTED();
  fx_end();

  /* MAX keeps the values with their counts (exec/agg_multiset.h). */
  fx_begin(true);
  fx_root(fx_aggregate(plain_count_per_province(), 1, keys, dp_func_get(DP_F_MAX), 1, "most",
                       NULL, 6, 1));
  CHECK_ACCEPTED();
  fx_end();

  /* FIRST_VALUE keeps the values in arrival order (exec/agg_vlist.h). */
  fx_begin(true);
  fx_root(fx_aggregate(plain_count_per_province(), 1, keys, dp_func_get(DP_F_FIRST_VALUE), 1,
                       "first", NULL, 6, 1));
  CHECK_ACCEPTED();
  fx_end();

  fx_begin(true);
  fx_root(fx_aggregate(plain_count_per_province(), 1, keys, dp_func_get(DP_F_STDDEV_POP), 1,
                       "spread", NULL, 6, 1));
  CHECK_REFUSED(6, 1, "STDDEV_POP over the result of an aggregation");
  CHECK_CONTAINS(fx_d.items[0].message, "only COUNT, SUM, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE "
                                        "and LISTAGG can take a row back");
  fx_end();

  /* Complete mode cannot re-send the whole result of such a chain. */
  fx_begin(true);
  fx_q.output_mode = DP_MODE_COMPLETE;
  fx_root(fx_aggregate(plain_count_per_province(), 1, keys, dp_func_get(DP_F_COUNT), -1,
                       "provinces", NULL, 6, 1));
  CHECK_REFUSED(6, 1, "can only run in append mode");
  fx_end();
}

TEST(window_aggregations_chain_in_append_mode) {
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  int keys[] = {4, 5, 6, 7};
  dp_plan *a1 = fx_aggregate(win, 4, keys, &FX_COUNT, -1, "cnt", win, 3, 1);
  dp_plan *win2 = fx_window(a1, DP_WIN_TUMBLE, 3, HOUR, HOUR, 5, 1);
  int keys2[] = {5, 6};
  fx_root(fx_aggregate(win2, 2, keys2, &FX_SUM, 4, "total", win2, 6, 1));
  CHECK_ACCEPTED();
  CHECK(fx_q.roots[0]->props.modes & DP_MODE_APPEND);
  fx_end();
}

/* ---- OVER and Top-N ---- */

TEST(over_without_time_order) {
  fx_begin(true);
  fx_root(fx_over(fx_payments(), 4, 2, false, true, 3, 2, 2, 10));
  CHECK_REFUSED(2, 10, "OVER on a stream must be ordered by a time attribute");
  CHECK_CONTAINS(fx_d.items[0].message, "ORDER BY createTime");
  CHECK_CONTAINS(fx_d.items[0].message, "updating changelog"); /* Flink 2.3 runs it so; the Top-N named */
  CHECK_CONTAINS(fx_d.items[0].message, "WHERE rn <= N");
  fx_end();

  fx_begin(true);
  fx_root(fx_over(fx_payments(), 4, -1, false, true, 3, 2, 2, 10));
  CHECK_REFUSED(2, 10, "OVER on a stream must be ordered by a time attribute");
  fx_end();
}

TEST(over_ordered_descending) {
  fx_begin(true);
  fx_root(fx_over(fx_payments(), 4, 0, true, true, 3, 2, 2, 10));
  CHECK_REFUSED(2, 10, "ORDER BY createTime DESC on a stream");
  fx_end();
}

TEST(over_ordered_by_event_time) {
  fx_begin(true);
  fx_root(fx_over(fx_payments(), 4, 0, false, false, HOUR, 2, 2, 10));
  CHECK_ACCEPTED();
  fx_end();
}

TEST(topn_in_append_mode) {
  fx_begin(true);
  fx_q.output_mode = DP_MODE_APPEND;
  int part[] = {4};
  fx_root(fx_topn(fx_payments(), 1, part, 2, 3, 4, 7));
  CHECK_REFUSED(4, 7, "Top-N without window_start and window_end in PARTITION BY");
  fx_end();

  fx_begin(true);
  fx_q.output_mode = DP_MODE_APPEND;
  dp_plan *win = fx_window(fx_payments(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  int wpart[] = {5, 6};
  fx_root(fx_topn(win, 2, wpart, 2, 3, 4, 7));
  CHECK_ACCEPTED();
  fx_end();

  /* A window Top-N over a window without watermark: one message, about the window. */
  fx_begin(true);
  fx_q.output_mode = DP_MODE_APPEND;
  dp_plan *rwin = fx_window(fx_payments_raw(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  fx_root(fx_topn(rwin, 2, wpart, 2, 3, 4, 7));
  CHECK_REFUSED(2, 1, "TUMBLE needs an event-time attribute");
  fx_end();
}

/* ---- sinks ---- */

TEST(kafka_sink_fed_by_updates) {
  fx_begin(true);
  dp_table_def *st = fx_table("totals", "kafka", false, "provinceId", fx_int(), "cnt",
                              fx_bigint(), (const char *)NULL);
  fx_root(fx_sink(plain_count_per_province(), st, 1, 13));
  CHECK_REFUSED(1, 13, "the kafka sink `totals` takes insert-only rows");
  CHECK_CONTAINS(fx_d.items[0].message, "PRIMARY KEY (provinceId) NOT ENFORCED on `totals`");
  CHECK_CONTAINS(fx_d.items[0].message, "make the aggregation windowed");
  fx_end();

  /* With a primary key the sink takes upserts. */
  fx_begin(true);
  st = fx_table("totals", "kafka", false, "provinceId", fx_int(), "cnt", fx_bigint(),
                (const char *)NULL);
  st->npk = 1;
  st->pk = dp_arena_calloc(fx_a, 1, sizeof(int));
  fx_root(fx_sink(plain_count_per_province(), st, 1, 13));
  CHECK_ACCEPTED();
  fx_end();
}

TEST(filesystem_sink_fed_by_updates) {
  fx_begin(true);
  dp_table_def *st = fx_table("out", "filesystem", false, "provinceId", fx_int(), "cnt",
                              fx_bigint(), (const char *)NULL);
  fx_root(fx_sink(plain_count_per_province(), st, 1, 13));
  CHECK_REFUSED(1, 13, "the filesystem sink `out` writes append-only files");
  fx_end();
}

TEST(seed_pipeline_into_kafka_is_accepted) {
  fx_begin(true);
  dp_table_def *st = fx_table("sink", "kafka", false, "provinceId", fx_int(), "window_start",
                              fx_ts(), "window_end", fx_ts(), "pay_amount", fx_double(),
                              (const char *)NULL);
  fx_root(fx_sink(hop_sum_per_province(), st, 1, 13));
  CHECK_ACCEPTED();
  CHECK(fx_q.roots[0]->props.modes & DP_MODE_APPEND);
  fx_end();

  /* The same in explicit update mode re-emits windows: kafka without a key refuses. */
  fx_begin(true);
  fx_q.output_mode = DP_MODE_UPDATE;
  st = fx_table("sink", "kafka", false, "provinceId", fx_int(), "window_start", fx_ts(),
                "window_end", fx_ts(), "pay_amount", fx_double(), (const char *)NULL);
  fx_root(fx_sink(hop_sum_per_province(), st, 1, 13));
  CHECK_REFUSED(1, 13, "takes insert-only rows");
  fx_end();
}

/* ---- batch mode ---- */

TEST(unbounded_source_in_batch_mode) {
  fx_begin(false);
  fx_root(fx_payments());
  CHECK_REFUSED(3, 6, "kafka source `payment_msg` is unbounded");
  CHECK_CONTAINS(fx_d.items[0].message, "'scan.bounded.mode'");
  CHECK_CONTAINS(fx_d.items[0].message, "run in streaming mode");
  fx_end();
}

TEST(batch_mode_allows_stream_only_refusals) {
  fx_begin(false);
  dp_plan *scan = fx_payments_raw();
  fx_last_table->connector = "filesystem";
  dp_plan *d = fx_unary(DP_P_DISTINCT, scan, 1, 8);
  fx_root(fx_limit(fx_sort(d, 2, true, 5, 1), 3, 6, 1));
  CHECK_ACCEPTED();
  fx_end();
}

/* ---- the whole pipeline: dp_parse -> dp_bind_stmt -> dp_analyze -> dp_validate ----
** The places are the spans the binder gives its nodes: the SELECT for DISTINCT,
** the FROM item for a window TVF and a join, the INSERT for a sink. */

static const char *const SETUP =
    "CREATE TABLE orders (order_id BIGINT, customer_id BIGINT, amount DOUBLE,\n"
    "  order_time TIMESTAMP(3), WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND)\n"
    "  WITH ('connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = "
    "'127.0.0.1:9092', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset');\n"
    "CREATE TABLE ships (ship_id BIGINT, order_id BIGINT, ship_time TIMESTAMP(3),\n"
    "  WATERMARK FOR ship_time AS ship_time - INTERVAL '5' SECOND)\n"
    "  WITH ('connector' = 'kafka', 'topic' = 'ships', 'properties.bootstrap.servers' = "
    "'127.0.0.1:9092', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset');\n"
    "CREATE TABLE raw_events (id BIGINT, ts TIMESTAMP(3))\n"
    "  WITH ('connector' = 'kafka', 'topic' = 'raw', 'properties.bootstrap.servers' = "
    "'127.0.0.1:9092', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset');\n"
    "CREATE TABLE totals (customer_id BIGINT, total DOUBLE)\n"
    "  WITH ('connector' = 'kafka', 'topic' = 'totals', 'properties.bootstrap.servers' = "
    "'127.0.0.1:9092', 'format' = 'json');\n";

static dp_catalog *pl_cat;
static dp_arena *pl_arena;
static dp_diags pl_d;
static dp_query_plan pl_q; /* the last statement with a plan */

/* Compile `text` statement by statement; the number of diagnostics. */
static int pl_compile(const char *text) {
  dp_ast_script *script = NULL;
  dp_diags_init(&pl_d, pl_arena, "test.sql", text, strlen(text));
  if (dp_parse(pl_arena, &pl_d, text, strlen(text), &script) != DIPPER_OK) return pl_d.count;
  for (int i = 0; i < script->n; i++) {
    dp_query_plan q;
    memset(&q, 0, sizeof q);
    if (dp_bind_stmt(pl_arena, &pl_d, pl_cat, script->stmts[i], &q) != DIPPER_OK) break;
    if (q.nroots == 0) continue;
    if (dp_analyze(pl_arena, &pl_d, pl_cat, &q) != DIPPER_OK) break;
    dp_validate(&pl_d, pl_cat, &q);
    pl_q = q;
  }
  return pl_d.count;
}

static void pl_begin(void) {
  pl_cat = dp_catalog_new();
  pl_arena = dp_arena_new(0);
  memset(&pl_q, 0, sizeof pl_q);
  int n = pl_compile(SETUP);
  CHECK_EQ(n, 0);
  if (n) fprintf(stderr, "  setup: %s\n", pl_d.items[0].message);
}

static void pl_end(void) {
  dp_arena_free(pl_arena);
  dp_catalog_free(pl_cat);
}

#define CHECK_PIPELINE_REFUSED(sql, line_, col_, words)        \
  do {                                                         \
    pl_begin();                                                \
    int count_ = pl_compile(sql);                              \
    CHECK_EQ(count_, 1);                                       \
    if (count_ >= 1) {                                         \
      CHECK_EQ(pl_d.items[0].code, DIPPER_STREAMING);          \
      CHECK_EQ(pl_d.items[0].span.line, line_);                \
      CHECK_EQ(pl_d.items[0].span.col, col_);                  \
      CHECK_CONTAINS(pl_d.items[0].message, words);            \
    }                                                          \
    pl_end();                                                  \
  } while (0)

TEST(pipeline_order_by_and_limit) {
  CHECK_PIPELINE_REFUSED("SELECT order_id, amount\nFROM orders\nORDER BY amount DESC;", 3, 1,
                         "ORDER BY on an unbounded stream never finishes");
  CHECK_PIPELINE_REFUSED("SELECT order_id\nFROM orders\nLIMIT 10;", 3, 1,
                         "LIMIT on an unbounded stream");
}

TEST(pipeline_append_mode_with_plain_aggregation) {
  CHECK_PIPELINE_REFUSED("SET 'dipper.output-mode' = 'append';\n"
                         "SELECT customer_id, COUNT(*) AS n\nFROM orders\nGROUP BY customer_id;",
                         4, 1, "COUNT per customer_id changes with every new row");
}

TEST(pipeline_window_without_watermark) {
  CHECK_PIPELINE_REFUSED("SELECT window_start, COUNT(*) AS n\n"
                         "FROM TABLE(TUMBLE(TABLE raw_events, DESCRIPTOR(ts), INTERVAL '1' MINUTE))\n"
                         "GROUP BY window_start, window_end;",
                         2, 6, "TUMBLE needs an event-time attribute");
}

TEST(pipeline_distinct_join_and_sink) {
  /* SELECT DISTINCT alone is accepted (a warning), and so is UNION without
     ALL, a DISTINCT over UNION ALL (Flink's plan). */
  pl_begin();
  CHECK_EQ(pl_compile("SELECT customer_id FROM orders\nUNION\nSELECT customer_id FROM orders;"), 0);
  CHECK_EQ(pl_q.roots[0]->kind, DP_P_DISTINCT);
  pl_end();
  /* in update mode it is Flink's regular join; append mode needs the bound */
  CHECK_PIPELINE_REFUSED("SET 'dipper.output-mode' = 'append';\n"
                         "SELECT o.order_id, s.ship_id\nFROM orders o\n"
                         "LEFT JOIN ships s ON o.order_id = s.order_id;",
                         3, 6, "the condition has no time range");
  CHECK_PIPELINE_REFUSED("INSERT INTO totals\n"
                         "SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id;",
                         1, 1, "the kafka sink `totals` takes insert-only rows");
}

TEST(pipeline_seed_shape_is_accepted) {
  pl_begin();
  int n = pl_compile("SELECT customer_id, window_start, window_end, SUM(amount) AS total\n"
                     "FROM TABLE(HOP(TABLE orders, DESCRIPTOR(order_time), INTERVAL '30' SECOND,"
                     " INTERVAL '1' MINUTE))\nGROUP BY customer_id, window_start, window_end;");
  CHECK_EQ(n, 0);
  if (n) fprintf(stderr, "  %s\n", pl_d.items[0].message);
  if (pl_q.nroots == 1) {
    dp_buf b = DP_BUF_INIT;
    dp_explain_plan(&b, &pl_q, DIPPER_EXPLAIN_NO_SCHEMA);
    CHECK_CONTAINS(dp_buf_cstr(&b), "Window kind=HOP time=order_time size=1 min slide=30 s\n");
    CHECK_CONTAINS(dp_buf_cstr(&b), "state=watermark (one row per group and window; dropped "
                                    "when the watermark passes window_end");
    CHECK_CONTAINS(dp_buf_cstr(&b), "Watermark column=order_time delay=5 s source=orders\n");
    dp_buf_free(&b);
  }
  pl_end();
}

int main(void) { return RUN_TESTS(); }
