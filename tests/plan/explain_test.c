/*
** explain_test.c — dp_explain_plan and dp_explain_expr: the exact text of a
** few plans (the seed's payment pipeline among them) and of every kind of
** expression, in the format documented in explain.h.
*/
#include "test.h"

#include "stream_fixture.h"

#define SEC DP_MICROS_PER_SECOND
#define MIN DP_MICROS_PER_MINUTE
#define HOUR DP_MICROS_PER_HOUR

/* The seed: INSERT INTO sink SELECT provinceId, window_start, window_end,
** SUM(payAmount) AS pay_amount FROM TABLE(HOP(TABLE payment_msg,
** DESCRIPTOR(createTime), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
** GROUP BY provinceId, window_start, window_end. */
static void build_seed(void) {
  dp_plan *win = fx_window(fx_payments(), DP_WIN_HOP, 0, MIN, 30 * SEC, 3, 12);
  int keys[] = {4, 5, 6};
  dp_plan *agg = fx_aggregate(win, 3, keys, &FX_SUM, 2, "pay_amount", win, 4, 1);
  dp_table_def *st = fx_table("sink", "kafka", false, "provinceId", fx_int(), "window_start",
                              fx_ts(), "window_end", fx_ts(), "pay_amount", fx_double(),
                              (const char *)NULL);
  fx_root(fx_sink(agg, st, 1, 13));
}

TEST(seed_pipeline) {
  fx_begin(true);
  build_seed();
  CHECK_EQ(fx_check(), 0);
  CHECK_STR(fx_explain(DIPPER_EXPLAIN_DEFAULT),
            "Sink table=sink connector=kafka\n"
            "  schema: (provinceId INT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), "
            "pay_amount DOUBLE)\n"
            "  streaming: unbounded modes=append,update,complete changelog=insert-only time=[] "
            "state=none\n"
            "  Aggregate group=[provinceId, window_start, window_end] aggs=[SUM(payAmount)] "
            "window=HOP\n"
            "    schema: (provinceId INT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), "
            "pay_amount DOUBLE)\n"
            "    streaming: unbounded modes=append,update,complete changelog=insert-only time=[] "
            "state=watermark (one row per group and window; dropped when the watermark passes "
            "window_end; groups: (provinceId))\n"
            "    Window kind=HOP time=createTime size=1 min slide=30 s\n"
            "      schema: (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE, "
            "payPlatform INT, provinceId INT, window_start TIMESTAMP(3), window_end "
            "TIMESTAMP(3), window_time TIMESTAMP(3))\n"
            "      streaming: unbounded modes=append changelog=insert-only "
            "time=[createTime@wm0, window_time@wm0] state=none\n"
            "      Watermark column=createTime delay=10 s source=payment_msg\n"
            "        schema: (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE, "
            "payPlatform INT, provinceId INT)\n"
            "        streaming: unbounded modes=append changelog=insert-only "
            "time=[createTime@wm0] state=none\n"
            "        Scan table=payment_msg connector=kafka\n"
            "          schema: (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE, "
            "payPlatform INT, provinceId INT)\n"
            "          streaming: unbounded modes=append changelog=insert-only time=[] "
            "state=none\n");
  fx_end();
}

TEST(flags_leave_out_schema_and_streaming) {
  fx_begin(true);
  build_seed();
  CHECK_EQ(fx_check(), 0);
  CHECK_STR(fx_explain(DIPPER_EXPLAIN_NO_SCHEMA | DIPPER_EXPLAIN_NO_STREAMING),
            "Sink table=sink connector=kafka\n"
            "  Aggregate group=[provinceId, window_start, window_end] aggs=[SUM(payAmount)] "
            "window=HOP\n"
            "    Window kind=HOP time=createTime size=1 min slide=30 s\n"
            "      Watermark column=createTime delay=10 s source=payment_msg\n"
            "        Scan table=payment_msg connector=kafka\n");
  fx_end();
}

TEST(unanalysed_plan_has_no_streaming_line) {
  fx_begin(true);
  fx_root(fx_payments_raw());
  CHECK_STR(fx_explain(DIPPER_EXPLAIN_DEFAULT),
            "Scan table=payment_msg connector=kafka\n"
            "  schema: (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE, payPlatform "
            "INT, provinceId INT)\n");
  fx_end();
}

TEST(project_filter_and_aliases) {
  fx_begin(true);
  dp_plan *w = fx_payments();
  dp_plan *f = fx_filter(w, fx_bool2(&FX_AND, fx_bool2(&FX_GT, fx_col(w, 2), fx_intlit(100)),
                                     fx_call(&FX_NOT, dp_type_of(DP_T_BOOLEAN), 1,
                                             fx_call(&FX_ISNULL, dp_type_of(DP_T_BOOLEAN), 1,
                                                     fx_col(w, 4)))));
  dp_expr *exprs[3] = {fx_col(f, 1), fx_call(&FX_MUL, fx_double(), 2, fx_col(f, 2), fx_intlit(2)),
                       fx_col(f, 4)};
  const char *names[] = {"orderId", "doubled", "province"};
  fx_root(fx_project(f, 3, exprs, names));
  CHECK_EQ(fx_check(), 0);
  CHECK_STR(fx_explain(DIPPER_EXPLAIN_NO_SCHEMA | DIPPER_EXPLAIN_NO_STREAMING),
            "Project exprs=[orderId, (payAmount * 2) AS doubled, provinceId AS province]\n"
            "  Filter cond=((payAmount > 100) AND (NOT (provinceId IS NULL)))\n"
            "    Watermark column=createTime delay=10 s source=payment_msg\n"
            "      Scan table=payment_msg connector=kafka\n");
  fx_end();
}

TEST(expressions) {
  fx_begin(true);
  dp_plan *w = fx_payments();
  dp_buf b = DP_BUF_INIT;

  /* CAST and TRY_CAST */
  dp_expr *c = dp_expr_column(fx_a, 0, dp_type_of(DP_T_STRING));
  c->kind = DP_E_CAST;
  c->u.cast.arg = fx_col(w, 3);
  c->u.cast.try_ = false;
  dp_explain_expr(&b, c, &w->schema);
  CHECK_STR(dp_buf_cstr(&b), "CAST(payPlatform AS STRING)");
  b.len = 0;
  c->u.cast.try_ = true;
  dp_explain_expr(&b, c, &w->schema);
  CHECK_STR(dp_buf_cstr(&b), "TRY_CAST(payPlatform AS STRING)");
  b.len = 0;

  /* searched CASE */
  dp_expr *cs = dp_expr_column(fx_a, 0, dp_type_of(DP_T_STRING));
  cs->kind = DP_E_CASE;
  cs->u.case_.n = 1;
  cs->u.case_.whens = dp_arena_calloc(fx_a, 1, sizeof(dp_expr *));
  cs->u.case_.thens = dp_arena_calloc(fx_a, 1, sizeof(dp_expr *));
  cs->u.case_.whens[0] = fx_bool2(&FX_EQ, fx_col(w, 3), fx_intlit(1));
  cs->u.case_.thens[0] = dp_expr_literal(fx_a, dp_value_string("web", 3));
  cs->u.case_.else_ = dp_expr_literal(fx_a, dp_value_string("app", 3));
  dp_explain_expr(&b, cs, &w->schema);
  CHECK_STR(dp_buf_cstr(&b), "CASE WHEN (payPlatform = 1) THEN 'web' ELSE 'app' END");
  b.len = 0;

  /* a function call in upper case, with a nested operator */
  dp_explain_expr(&b,
                  fx_call(&FX_UPPER, dp_type_of(DP_T_STRING), 1,
                          fx_call(&FX_ADD, fx_int(), 2, fx_col(w, 3), fx_col(w, 4))),
                  &w->schema);
  CHECK_STR(dp_buf_cstr(&b), "UPPER((payPlatform + provinceId))");
  b.len = 0;

  /* BETWEEN with interval arithmetic */
  dp_explain_expr(&b,
                  fx_call(&FX_BETWEEN, dp_type_of(DP_T_BOOLEAN), 3, fx_col(w, 0),
                          fx_call(&FX_SUB, fx_ts(), 2, fx_col(w, 0), fx_interval(HOUR)),
                          fx_col(w, 0)),
                  &w->schema);
  CHECK_CONTAINS(dp_buf_cstr(&b), "(createTime BETWEEN (createTime - INTERVAL");
  CHECK_CONTAINS(dp_buf_cstr(&b), ") AND createTime)");
  b.len = 0;

  /* a ROW field */
  dp_field fields[2] = {{"city", dp_type_of(DP_T_STRING)}, {"zip", fx_int()}};
  const dp_type *rt = dp_type_row(fx_a, 2, fields);
  dp_schema s = {1, dp_arena_calloc(fx_a, 1, sizeof(dp_field))};
  s.cols[0].name = "address";
  s.cols[0].type = rt;
  dp_expr *f = dp_expr_column(fx_a, 0, fx_int());
  f->kind = DP_E_FIELD;
  f->u.field.arg = dp_expr_column(fx_a, 0, rt);
  f->u.field.index = 1;
  dp_explain_expr(&b, f, &s);
  CHECK_STR(dp_buf_cstr(&b), "address.zip");
  b.len = 0;

  /* calls with syntax of their own */
  static const dp_func fn_in = {.name = "in", .kind = DP_FN_SCALAR};
  static const dp_func fn_extract = {.name = "extract", .kind = DP_FN_SCALAR};
  static const dp_func fn_elem = {.name = "element_at", .kind = DP_FN_SCALAR};
  static const dp_func fn_array = {.name = "array", .kind = DP_FN_SCALAR};
  dp_explain_expr(&b,
                  fx_call(&fn_in, dp_type_of(DP_T_BOOLEAN), 3, fx_col(w, 3), fx_intlit(1),
                          fx_intlit(2)),
                  &w->schema);
  CHECK_STR(dp_buf_cstr(&b), "(payPlatform IN (1, 2))");
  b.len = 0;
  dp_explain_expr(&b,
                  fx_call(&fn_extract, fx_bigint(), 2,
                          dp_expr_literal(fx_a, dp_value_string("HOUR", 4)), fx_col(w, 0)),
                  &w->schema);
  CHECK_STR(dp_buf_cstr(&b), "EXTRACT(HOUR FROM createTime)");
  b.len = 0;
  dp_expr *arr = fx_call(&fn_array, dp_type_array(fx_a, fx_int()), 2, fx_intlit(7), fx_intlit(8));
  dp_explain_expr(&b, fx_call(&fn_elem, fx_int(), 2, arr, fx_intlit(1)), &w->schema);
  CHECK_STR(dp_buf_cstr(&b), "ARRAY[7, 8][1]");
  b.len = 0;

  /* a column outside the schema still prints */
  dp_explain_expr(&b, dp_expr_column(fx_a, 9, fx_int()), &w->schema);
  CHECK_STR(dp_buf_cstr(&b), "$9");
  dp_buf_free(&b);
  fx_end();
}

TEST(join_with_keys_and_condition) {
  fx_begin(true);
  dp_table_def *o = fx_table("orders", "kafka", false, "id", fx_bigint(), "ts", fx_ts(),
                             (const char *)NULL);
  dp_table_def *s = fx_table("ships", "kafka", false, "order_id", fx_bigint(), "ship_ts", fx_ts(),
                             (const char *)NULL);
  dp_plan *l = fx_watermark(fx_scan(o, 2, 6), 1, 5 * SEC, "orders");
  dp_plan *r = fx_watermark(fx_scan(s, 3, 6), 1, 5 * SEC, "ships");
  l->inputs[0]->u.scan.alias = "o";
  dp_expr *eq = fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2));
  dp_expr *ge = fx_bool2(&FX_GE, fx_jcol(l, r, 3), fx_jcol(l, r, 1));
  dp_expr *le = fx_bool2(&FX_LE, fx_jcol(l, r, 3),
                         fx_call(&FX_ADD, fx_ts(), 2, fx_jcol(l, r, 1), fx_interval(HOUR)));
  dp_expr *cond = fx_bool2(&FX_AND, eq, fx_bool2(&FX_AND, ge, le));
  fx_root(fx_join(l, r, DP_J_LEFT, cond, 0, 0, 4, 1));
  CHECK_EQ(fx_check(), 0);
  const char *text = fx_explain(DIPPER_EXPLAIN_NO_SCHEMA);
  CHECK_CONTAINS(text, "Join kind=LEFT keys=[id=order_id] cond=((id = order_id) AND ((ship_ts >= "
                       "ts) AND (ship_ts <= (ts + INTERVAL");
  CHECK_CONTAINS(text, "  streaming: unbounded modes=append changelog=insert-only "
                       "time=[ts@wm0, ship_ts@wm1] state=watermark (rows of both sides while ts "
                       "is within [ship_ts - 1 h, ship_ts] of the other side; dropped when the watermark "
                       "passes that bound)\n");
  CHECK_CONTAINS(text, "Scan table=orders connector=kafka alias=o\n");
  fx_end();
}

TEST(join_condition_qualifies_names_both_sides_have) {
  fx_begin(true);
  dp_table_def *o = fx_table("orders", "kafka", false, "order_id", fx_bigint(), (const char *)NULL);
  dp_table_def *s = fx_table("ships", "kafka", false, "order_id", fx_bigint(), "carrier",
                             dp_type_of(DP_T_STRING), (const char *)NULL);
  dp_plan *l = fx_scan(o, 2, 6), *r = fx_scan(s, 3, 6);
  l->u.scan.alias = "o";
  dp_expr *eq = fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 1));
  fx_root(fx_join(l, r, DP_J_INNER, eq, 0, 0, 4, 1));
  CHECK_STR(fx_explain(DIPPER_EXPLAIN_NO_SCHEMA | DIPPER_EXPLAIN_NO_STREAMING),
            "Join kind=INNER keys=[order_id=order_id] cond=(o.order_id = ships.order_id)\n"
            "  Scan table=orders connector=kafka alias=o\n"
            "  Scan table=ships connector=kafka\n");
  fx_end();
}

TEST(stateful_nodes) {
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  int part[] = {5, 6};
  dp_plan *t = fx_topn(win, 2, part, 2, 3, 4, 1);
  dp_plan *d = fx_dedup(t, 1, 0, false, 5, 1);
  d->u.dedup.within_watermark = true;
  dp_plan *o = fx_over(d, 4, 0, false, false, HOUR, 2, 6, 1);
  fx_root(o);
  CHECK_EQ(fx_check(), 0);
  const char *text = fx_explain(DIPPER_EXPLAIN_NO_SCHEMA);
  CHECK_CONTAINS(text, "Over partition=[provinceId] order=[createTime] frame=RANGE BETWEEN 1 h "
                       "PRECEDING AND CURRENT ROW calls=[SUM(payAmount)]\n");
  CHECK_CONTAINS(text, "  Deduplicate keys=[orderId] keep=first order=createTime "
                       "within_watermark\n");
  CHECK_CONTAINS(text, "    TopN partition=[window_start, window_end] order=[payAmount DESC] n=3 "
                       "rank=row_number\n");
  CHECK_CONTAINS(text, "      Window kind=TUMBLE time=createTime size=1 min\n");
  CHECK_CONTAINS(text, "state=watermark (the top 3 rows per partition (window_start, "
                       "window_end); dropped when the watermark passes window_end)");
  fx_end();
}

TEST(other_node_lines) {
  fx_begin(true);
  dp_plan *w = fx_payments();
  dp_plan *s = fx_sort(w, 2, true, 2, 1);
  s->u.sort.keys[0].nulls_first = true;
  dp_plan *lim = fx_limit(s, 5, 3, 1);
  lim->u.limit.offset = 10;
  dp_plan *win = fx_window(lim, DP_WIN_CUMULATE, 0, HOUR, MIN, 2, 1);
  win->u.window.offset = 8 * HOUR;
  win->u.window.syntax = DP_WSYN_LEGACY;
  dp_plan *u = fx_binary(DP_P_UNION, win, win, 4, 1);
  u->u.union_.all = true;
  dp_plan *x = fx_binary(DP_P_SETOP, u, u, 5, 1);
  x->u.setop.except = true;
  dp_plan *dist = fx_unary(DP_P_DISTINCT, x, 6, 1);
  fx_root(dist);
  dp_analyze(fx_a, &fx_d, NULL, &fx_q);
  CHECK_STR(fx_explain(DIPPER_EXPLAIN_NO_SCHEMA | DIPPER_EXPLAIN_NO_STREAMING),
            "Distinct\n"
            "  SetOp op=EXCEPT all=false\n"
            "    Union all=true\n"
            "      Window kind=CUMULATE time=createTime step=1 min size=1 h offset=8 h "
            "syntax=legacy\n"
            "        Limit limit=5 offset=10\n"
            "          Sort keys=[payAmount DESC NULLS FIRST]\n"
            "            Watermark column=createTime delay=10 s source=payment_msg\n"
            "              Scan table=payment_msg connector=kafka\n"
            "      Window kind=CUMULATE time=createTime step=1 min size=1 h offset=8 h "
            "syntax=legacy\n"
            "        Limit limit=5 offset=10\n"
            "          Sort keys=[payAmount DESC NULLS FIRST]\n"
            "            Watermark column=createTime delay=10 s source=payment_msg\n"
            "              Scan table=payment_msg connector=kafka\n"
            "    Union all=true\n"
            "      Window kind=CUMULATE time=createTime step=1 min size=1 h offset=8 h "
            "syntax=legacy\n"
            "        Limit limit=5 offset=10\n"
            "          Sort keys=[payAmount DESC NULLS FIRST]\n"
            "            Watermark column=createTime delay=10 s source=payment_msg\n"
            "              Scan table=payment_msg connector=kafka\n"
            "      Window kind=CUMULATE time=createTime step=1 min size=1 h offset=8 h "
            "syntax=legacy\n"
            "        Limit limit=5 offset=10\n"
            "          Sort keys=[payAmount DESC NULLS FIRST]\n"
            "            Watermark column=createTime delay=10 s source=payment_msg\n"
            "              Scan table=payment_msg connector=kafka\n");
  fx_end();
}

TEST(streaming_line_of_a_refused_sort_and_proctime) {
  fx_begin(true);
  dp_table_def *t = fx_table("clicks", "kafka", false, "user_id", fx_bigint(), "proc",
                             dp_type_of(DP_T_TIMESTAMP_LTZ), (const char *)NULL);
  t->cols[1].proctime = true;
  fx_root(fx_sort(fx_scan(t, 1, 1), 0, false, 2, 1));
  dp_analyze(fx_a, &fx_d, NULL, &fx_q);
  const char *text = fx_explain(DIPPER_EXPLAIN_NO_SCHEMA);
  CHECK_CONTAINS(text, "Sort keys=[user_id]\n  streaming: unbounded modes=none "
                       "changelog=insert-only time=[proc@proctime] state=unbounded (every input "
                       "row; a sort of an unbounded input never ends)\n");
  fx_end();
}

TEST(several_roots_and_batch) {
  fx_begin(false);
  dp_table_def *t = fx_table("customers", "datagen", true, "id", fx_bigint(), (const char *)NULL);
  int keys[] = {0};
  dp_plan *a = fx_aggregate(fx_scan(t, 1, 1), 1, keys, &FX_COUNT, -1, "n", NULL, 2, 1);
  fx_q.nroots = 2;
  fx_q.roots = dp_arena_calloc(fx_a, 2, sizeof(dp_plan *));
  fx_q.roots[0] = a;
  fx_q.roots[1] = fx_scan(t, 3, 1);
  CHECK_EQ(fx_check(), 0);
  CHECK_STR(fx_explain(DIPPER_EXPLAIN_NO_SCHEMA),
            "Aggregate group=[id] aggs=[COUNT(*)]\n"
            "  streaming: bounded modes=append,update,complete changelog=insert-only time=[] "
            "state=bounded-input (one row per group until the input ends)\n"
            "  Scan table=customers connector=datagen\n"
            "    streaming: bounded modes=append,update,complete changelog=insert-only time=[] "
            "state=none\n"
            "Scan table=customers connector=datagen\n"
            "  streaming: bounded modes=append,update,complete changelog=insert-only time=[] "
            "state=none\n");
  fx_end();
}

TEST(subquery_plans_print_under_their_node) {
  fx_begin(false);
  dp_table_def *t = fx_table("customers", "datagen", true, "id", fx_bigint(), (const char *)NULL);
  dp_plan *outer = fx_scan(t, 1, 1);
  dp_plan *inner = fx_scan(t, 2, 1);
  dp_expr *in = dp_expr_column(fx_a, 0, dp_type_of(DP_T_BOOLEAN));
  in->kind = DP_E_SUBQUERY;
  in->u.subquery.kind = DP_SUBQ_IN;
  in->u.subquery.arg = fx_col(outer, 0);
  in->u.subquery.plan = inner;
  dp_expr *ex = dp_expr_column(fx_a, 0, dp_type_of(DP_T_BOOLEAN));
  ex->kind = DP_E_SUBQUERY;
  ex->u.subquery.kind = DP_SUBQ_EXISTS;
  ex->u.subquery.negated = true;
  ex->u.subquery.plan = inner;
  fx_root(fx_filter(outer, fx_bool2(&FX_AND, in, ex)));
  CHECK_EQ(fx_check(), 0);
  CHECK(inner->props.analyzed);
  CHECK_STR(fx_explain(DIPPER_EXPLAIN_NO_SCHEMA | DIPPER_EXPLAIN_NO_STREAMING),
            "Filter cond=((id IN $subquery0) AND NOT EXISTS($subquery1))\n"
            "  Scan table=customers connector=datagen\n"
            "  $subquery0:\n"
            "    Scan table=customers connector=datagen\n"
            "  $subquery1:\n"
            "    Scan table=customers connector=datagen\n");
  fx_end();
}

int main(void) { return RUN_TESTS(); }
