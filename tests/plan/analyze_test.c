/*
** analyze_test.c — dp_analyze: boundedness, time attributes, modes,
** changelog and state of every kind of node, on hand-built plans.
*/
#include "test.h"

#include "plan/analyze_int.h"
#include "stream_fixture.h"

#define SEC DP_MICROS_PER_SECOND
#define MIN DP_MICROS_PER_MINUTE
#define HOUR DP_MICROS_PER_HOUR
#define ALL_MODES (DP_MODE_APPEND | DP_MODE_UPDATE | DP_MODE_COMPLETE)

static int analyze_only(void) { return dp_analyze(fx_a, &fx_d, NULL, &fx_q); }

TEST(scan_of_a_stream_is_unbounded_and_append_only) {
  fx_begin(true);
  dp_plan *s = fx_payments_raw();
  fx_root(s);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK(s->props.analyzed);
  CHECK(!s->props.bounded);
  CHECK_EQ(s->props.modes, DP_MODE_APPEND);
  CHECK_EQ(s->props.changelog, DP_CHANGELOG_INSERT_ONLY);
  CHECK(s->props.time_attr == NULL);
  CHECK_EQ(s->props.state, DP_STATE_NONE);
  fx_end();
}

TEST(batch_mode_makes_every_source_bounded) {
  fx_begin(false);
  dp_plan *w = fx_payments();
  int keys[] = {4};
  dp_plan *agg = fx_aggregate(w, 1, keys, &FX_SUM, 2, "total", NULL, 5, 1);
  fx_root(agg);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK(w->inputs[0]->props.bounded);
  CHECK(agg->props.bounded);
  CHECK_EQ(agg->props.modes, ALL_MODES);
  CHECK_EQ(agg->props.state, DP_STATE_BOUNDED_INPUT);
  CHECK(agg->props.state_desc != NULL);
  /* The watermark still marks the column: windows need it in batch mode too. */
  CHECK_EQ(dp_analyze_attr(w, 0), 0);
  fx_end();
}

TEST(bounded_source_in_streaming_mode) {
  fx_begin(true);
  dp_table_def *t = fx_table("customers", "datagen", true, "id", fx_bigint(), (const char *)NULL);
  dp_plan *s = fx_scan(t, 1, 1);
  dp_plan *d = fx_unary(DP_P_DISTINCT, s, 1, 8);
  fx_root(d);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK(s->props.bounded);
  CHECK(d->props.bounded);
  CHECK_EQ(d->props.modes, ALL_MODES);
  CHECK_EQ(d->props.state, DP_STATE_BOUNDED_INPUT);
  fx_end();
}

TEST(watermark_filter_and_project_carry_the_attribute) {
  fx_begin(true);
  dp_plan *w = fx_payments();
  dp_plan *f = fx_filter(w, fx_bool2(&FX_GT, fx_col(w, 2), fx_intlit(10)));
  dp_expr *exprs[4];
  exprs[0] = fx_col(f, 0);                                           /* createTime */
  exprs[1] = fx_call(&FX_ADD, fx_ts(), 2, fx_col(f, 0), fx_interval(SEC)); /* computed */
  exprs[2] = dp_expr_column(fx_a, 0, fx_ts());
  dp_expr *cast = dp_expr_column(fx_a, 0, fx_ts());
  cast->kind = DP_E_CAST;
  cast->type = dp_type_timestamp(fx_a, DP_T_TIMESTAMP, 6);
  cast->u.cast.arg = exprs[2];
  cast->u.cast.try_ = false;
  exprs[2] = cast;                                                   /* CAST to TIMESTAMP(6) */
  exprs[3] = fx_call(&FX_PROCTIME, dp_type_of(DP_T_TIMESTAMP_LTZ), 0);
  const char *names[] = {"createTime", "later", "ts6", "proc"};
  dp_plan *p = fx_project(f, 4, exprs, names);
  fx_root(p);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(dp_analyze_attr(w, 0), 0);
  CHECK_EQ(dp_analyze_attr(w, 1), -1);
  CHECK_EQ(dp_analyze_attr(f, 0), 0);
  CHECK_EQ(dp_analyze_attr(p, 0), 0);
  CHECK_EQ(dp_analyze_attr(p, 1), -1);
  CHECK_EQ(dp_analyze_attr(p, 2), 0);
  CHECK_EQ(dp_analyze_attr(p, 3), -2);
  CHECK(p->props.proctime);
  CHECK(!w->props.proctime);
  CHECK_EQ(p->props.modes, DP_MODE_APPEND);
  CHECK_EQ(p->props.state, DP_STATE_NONE);
  fx_end();
}

TEST(proctime_computed_column_of_a_table) {
  fx_begin(true);
  dp_table_def *t = fx_table("clicks", "kafka", false, "user_id", fx_bigint(), "proc",
                             dp_type_of(DP_T_TIMESTAMP_LTZ), (const char *)NULL);
  t->cols[1].kind = DP_CK_COMPUTED;
  t->cols[1].proctime = true;
  dp_plan *s = fx_scan(t, 1, 1);
  fx_root(s);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(dp_analyze_attr(s, 0), -1);
  CHECK_EQ(dp_analyze_attr(s, 1), -2);
  CHECK(s->props.proctime);
  fx_end();
}

TEST(window_adds_window_time_as_attribute) {
  fx_begin(true);
  dp_plan *w = fx_payments();
  dp_plan *win = fx_window(w, DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  fx_root(win);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(win->schema.ncols, 8);
  CHECK_EQ(dp_analyze_attr(win, 0), 0); /* createTime stays */
  CHECK_EQ(dp_analyze_attr(win, 5), -1); /* window_start */
  CHECK_EQ(dp_analyze_attr(win, 6), -1); /* window_end */
  CHECK_EQ(dp_analyze_attr(win, 7), 0);  /* window_time */
  fx_end();
}

TEST(window_aggregation_appends_with_watermark_state) {
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments(), DP_WIN_HOP, 0, MIN, 30 * SEC, 2, 1);
  int keys[] = {4, 5, 6, 7}; /* provinceId, window_start, window_end, window_time */
  dp_plan *agg = fx_aggregate(win, 4, keys, &FX_SUM, 2, "total", win, 4, 1);
  fx_root(agg);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(agg->u.aggregate.wstart, 1);
  CHECK(!agg->props.bounded);
  CHECK_EQ(agg->props.modes, ALL_MODES);
  CHECK_EQ(agg->props.changelog, DP_CHANGELOG_INSERT_ONLY);
  CHECK_EQ(agg->props.state, DP_STATE_WATERMARK);
  CHECK_CONTAINS(agg->props.state_desc, "one row per group and window");
  CHECK_CONTAINS(agg->props.state_desc, "dropped when the watermark passes window_end");
  CHECK_CONTAINS(agg->props.state_desc, "provinceId");
  /* window_time stays an attribute so that window aggregations chain. */
  CHECK_EQ(dp_analyze_attr(agg, 0), -1);
  CHECK_EQ(dp_analyze_attr(agg, 1), -1);
  CHECK_EQ(dp_analyze_attr(agg, 2), -1);
  CHECK_EQ(dp_analyze_attr(agg, 3), 0);
  CHECK_EQ(dp_analyze_attr(agg, 4), -1);
  fx_end();
}

TEST(window_aggregation_without_watermark_is_update_only) {
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments_raw(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  int keys[] = {5, 6};
  dp_plan *agg = fx_aggregate(win, 2, keys, &FX_COUNT, -1, "cnt", win, 4, 1);
  fx_root(agg);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(agg->props.modes, DP_MODE_UPDATE | DP_MODE_COMPLETE);
  CHECK_EQ(agg->props.changelog, DP_CHANGELOG_UPSERT);
  CHECK_EQ(agg->props.state, DP_STATE_KEYS);
  fx_end();
}

TEST(plain_aggregation_is_update_and_complete_with_key_state) {
  fx_begin(true);
  dp_plan *w = fx_payments();
  int keys[] = {4};
  dp_plan *agg = fx_aggregate(w, 1, keys, &FX_SUM, 2, "total", NULL, 4, 1);
  fx_root(agg);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(agg->props.modes, DP_MODE_UPDATE | DP_MODE_COMPLETE);
  CHECK_EQ(agg->props.changelog, DP_CHANGELOG_UPSERT);
  CHECK_EQ(agg->props.state, DP_STATE_KEYS);
  CHECK_CONTAINS(agg->props.state_desc, "one row per group (provinceId)");
  CHECK_CONTAINS(agg->props.state_desc, "never dropped");
  CHECK(agg->props.time_attr == NULL);
  fx_end();
}

TEST(global_aggregation_state) {
  fx_begin(true);
  dp_plan *agg = fx_aggregate(fx_payments(), 0, NULL, &FX_COUNT, -1, "n", NULL, 4, 1);
  fx_root(agg);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(agg->props.state, DP_STATE_KEYS);
  CHECK_CONTAINS(agg->props.state_desc, "one row for the whole stream");
  fx_end();
}

TEST(aggregation_grouped_by_event_time_can_append) {
  fx_begin(true);
  int keys[] = {0, 4};
  dp_plan *agg = fx_aggregate(fx_payments(), 2, keys, &FX_COUNT, -1, "n", NULL, 4, 1);
  fx_root(agg);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK(agg->props.modes & DP_MODE_APPEND);
  CHECK_EQ(agg->props.state, DP_STATE_WATERMARK);
  CHECK_CONTAINS(agg->props.state_desc, "dropped when the watermark passes createTime");
  CHECK_EQ(dp_analyze_attr(agg, 0), 0);
  fx_end();
}

/* Two watermarked streams: orders(id, ts) and ships(order_id, ts). */
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

TEST(interval_join_with_between_has_a_time_bound) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, true);
  /* l.id = r.order_id AND l.ts BETWEEN r.ship_ts - 1 h AND r.ship_ts + 30 min */
  dp_expr *eq = fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2));
  dp_expr *lo = fx_call(&FX_SUB, fx_ts(), 2, fx_jcol(l, r, 3), fx_interval(HOUR));
  dp_expr *hi = fx_call(&FX_ADD, fx_ts(), 2, fx_jcol(l, r, 3), fx_interval(30 * MIN));
  dp_expr *btw = fx_call(&FX_BETWEEN, dp_type_of(DP_T_BOOLEAN), 3, fx_jcol(l, r, 1), lo, hi);
  dp_plan *j = fx_join(l, r, DP_J_INNER, fx_bool2(&FX_AND, eq, btw), 0, 0, 4, 1);
  fx_root(j);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK(j->props.has_time_bound);
  CHECK_EQ(j->props.time_lower, -HOUR);
  CHECK_EQ(j->props.time_upper, 30 * MIN);
  CHECK_EQ(j->props.state, DP_STATE_WATERMARK);
  CHECK_EQ(j->props.modes, DP_MODE_APPEND);
  CHECK_EQ(j->props.changelog, DP_CHANGELOG_INSERT_ONLY);
  CHECK_CONTAINS(j->props.state_desc, "dropped when the watermark passes");
  CHECK_EQ(dp_analyze_attr(j, 1), 0);
  CHECK_EQ(dp_analyze_attr(j, 3), 1);
  fx_end();
}

TEST(interval_join_with_comparisons_written_from_the_right) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, true);
  /* r.ship_ts >= l.ts AND r.ship_ts <= l.ts + 1 h  ==  l.ts BETWEEN r.ship_ts - 1 h AND r.ship_ts */
  dp_expr *c1 = fx_bool2(&FX_GE, fx_jcol(l, r, 3), fx_jcol(l, r, 1));
  dp_expr *c2 = fx_bool2(&FX_LE, fx_jcol(l, r, 3),
                         fx_call(&FX_ADD, fx_ts(), 2, fx_jcol(l, r, 1), fx_interval(HOUR)));
  dp_plan *j = fx_join(l, r, DP_J_LEFT, fx_bool2(&FX_AND, c1, c2), -1, -1, 4, 1);
  fx_root(j);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK(j->props.has_time_bound);
  CHECK_EQ(j->props.time_lower, -HOUR);
  CHECK_EQ(j->props.time_upper, 0);
  /* A time-bounded outer join emits its padded rows once: append. */
  CHECK_EQ(j->props.state, DP_STATE_WATERMARK);
  CHECK(j->props.modes & DP_MODE_APPEND);
  fx_end();
}

TEST(regular_join_loses_attributes_and_keeps_everything) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, true);
  dp_plan *j = fx_join(l, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0,
                       0, 4, 1);
  fx_root(j);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK(!j->props.has_time_bound);
  CHECK_EQ(j->props.state, DP_STATE_UNBOUNDED);
  CHECK_CONTAINS(j->props.state_desc, "per key (id)");
  CHECK(j->props.time_attr == NULL);
  CHECK_EQ(j->props.modes, DP_MODE_APPEND);
  fx_end();
}

TEST(outer_join_without_bound_retracts) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, false);
  dp_plan *j = fx_join(l, r, DP_J_FULL, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0,
                       0, 4, 1);
  fx_root(j);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(j->props.modes, DP_MODE_UPDATE);
  CHECK_EQ(j->props.changelog, DP_CHANGELOG_RETRACT);
  CHECK_EQ(j->props.state, DP_STATE_UNBOUNDED);
  fx_end();
}

TEST(stream_static_join_keeps_the_bounded_side) {
  fx_begin(true);
  dp_plan *l = fx_payments();
  dp_table_def *ct = fx_table("provinces", "datagen", true, "id", fx_int(), "name",
                              dp_type_of(DP_T_STRING), (const char *)NULL);
  dp_plan *r = fx_scan(ct, 4, 6);
  dp_plan *j = fx_join(l, r, DP_J_LEFT, fx_bool2(&FX_EQ, fx_jcol(l, r, 4), fx_jcol(l, r, 5)), 4,
                       0, 4, 1);
  fx_root(j);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK(!j->props.bounded);
  CHECK_EQ(j->props.state, DP_STATE_BOUNDED_INPUT);
  CHECK_CONTAINS(j->props.state_desc, "bounded right side");
  CHECK_EQ(j->props.modes, DP_MODE_APPEND);
  CHECK_EQ(dp_analyze_attr(j, 0), 0); /* the stream's event time stays */
  fx_end();
}

TEST(temporal_join_keeps_versions_of_the_right_side) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, true);
  dp_plan *j = fx_join(l, r, DP_J_INNER, fx_bool2(&FX_EQ, fx_jcol(l, r, 0), fx_jcol(l, r, 2)), 0,
                       0, 4, 1);
  j->u.join.as_of = fx_col(l, 1);
  fx_root(j);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(j->props.state, DP_STATE_KEYS);
  CHECK_CONTAINS(j->props.state_desc, "versions per key (order_id)");
  CHECK_EQ(j->props.modes, DP_MODE_APPEND);
  CHECK_EQ(dp_analyze_attr(j, 1), 0);  /* left time stays */
  CHECK_EQ(dp_analyze_attr(j, 3), -1); /* right time does not */
  fx_end();
}

TEST(window_join_on_window_bounds) {
  fx_begin(true);
  dp_plan *l, *r;
  two_streams(&l, &r, true, true);
  dp_plan *lw = fx_window(l, DP_WIN_TUMBLE, 1, MIN, MIN, 2, 1);
  dp_plan *rw = fx_window(r, DP_WIN_TUMBLE, 1, MIN, MIN, 3, 1);
  int lk[] = {0, 2, 3}, rk[] = {0, 2, 3}; /* key, window_start, window_end */
  dp_plan *la = fx_aggregate(lw, 3, lk, &FX_COUNT, -1, "n", lw, 2, 1);
  dp_plan *ra = fx_aggregate(rw, 3, rk, &FX_COUNT, -1, "m", rw, 3, 1);
  /* la: id, ws, we, n (4 cols); ra: order_id, ws, we, m */
  dp_expr *s = fx_bool2(&FX_EQ, fx_jcol(la, ra, 1), fx_jcol(la, ra, 5));
  dp_expr *e = fx_bool2(&FX_EQ, fx_jcol(la, ra, 2), fx_jcol(la, ra, 6));
  dp_plan *j = fx_join(la, ra, DP_J_INNER, fx_bool2(&FX_AND, s, e), -1, -1, 5, 1);
  fx_root(j);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK(j->props.has_time_bound);
  CHECK_EQ(j->props.time_lower, 0);
  CHECK_EQ(j->props.time_upper, 0);
  CHECK_EQ(j->props.state, DP_STATE_WATERMARK);
  CHECK_CONTAINS(j->props.state_desc, "per window");
  CHECK(j->props.modes & DP_MODE_APPEND);
  fx_end();
}

TEST(union_intersects_modes_and_agreeing_attributes) {
  fx_begin(true);
  dp_plan *a = fx_payments();
  dp_plan *b = fx_payments_raw();
  dp_plan *u = fx_binary(DP_P_UNION, a, b, 3, 1);
  u->u.union_.all = true;
  fx_root(u);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(u->props.modes, DP_MODE_APPEND);
  CHECK_EQ(u->props.state, DP_STATE_NONE);
  CHECK(u->props.time_attr == NULL); /* one side has no watermark */
  fx_end();

  fx_begin(true);
  dp_plan *c = fx_payments();
  dp_plan *d = fx_payments();
  /* Two watermarks, ids 0 and 1: the column is governed by a derived watermark, their
     minimum (plan.h)... */
  dp_plan *u2 = fx_binary(DP_P_UNION, c, d, 3, 1);
  u2->u.union_.all = true;
  fx_root(u2);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  int wm = dp_analyze_attr(u2, 0);
  CHECK_EQ(wm, 2);
  CHECK_EQ(fx_q.nwatermarks, 3);
  CHECK(fx_q.watermarks[wm].node == NULL);
  CHECK_EQ(fx_q.watermarks[wm].nmembers, 2);
  CHECK_EQ(fx_q.watermarks[wm].members[0], 0);
  CHECK_EQ(fx_q.watermarks[wm].members[1], 1);
  CHECK_EQ(dp_analyze_attr(u2, 1), -1); /* not an attribute in either input */
  fx_end();

  fx_begin(true);
  dp_plan *e = fx_payments();
  /* ...while a union of one stream with itself keeps it. */
  dp_plan *u3 = fx_binary(DP_P_UNION, e, fx_filter(e, fx_bool2(&FX_GT, fx_col(e, 2), fx_intlit(1))),
                          3, 1);
  u3->u.union_.all = true;
  fx_root(u3);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(dp_analyze_attr(u3, 0), 0);
  fx_end();
}

TEST(dedup_keep_first_on_event_time_appends) {
  fx_begin(true);
  dp_plan *w = fx_payments();
  dp_plan *d = fx_dedup(w, 1, 0, false, 4, 1);
  fx_root(d);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(d->props.modes, DP_MODE_APPEND);
  CHECK_EQ(d->props.changelog, DP_CHANGELOG_INSERT_ONLY);
  CHECK_EQ(d->props.state, DP_STATE_WATERMARK);
  CHECK_CONTAINS(d->props.state_desc, "one row per key (orderId)");
  CHECK_EQ(dp_analyze_attr(d, 0), 0);
  fx_end();
}

TEST(dedup_keep_last_updates_and_without_watermark_keeps_keys) {
  fx_begin(true);
  dp_plan *d = fx_dedup(fx_payments(), 1, 0, true, 4, 1);
  fx_root(d);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(d->props.modes, DP_MODE_UPDATE);
  CHECK_EQ(d->props.changelog, DP_CHANGELOG_UPSERT);
  CHECK(d->props.time_attr == NULL);
  fx_end();

  fx_begin(true);
  dp_plan *d2 = fx_dedup(fx_payments_raw(), 1, -1, false, 4, 1);
  fx_root(d2);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(d2->props.state, DP_STATE_KEYS);
  CHECK_CONTAINS(d2->props.state_desc, "grows with the number of keys");
  fx_end();
}

TEST(distinct_state_depends_on_a_watermarked_column) {
  fx_begin(true);
  dp_plan *d = fx_unary(DP_P_DISTINCT, fx_payments(), 1, 8);
  fx_root(d);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(d->props.state, DP_STATE_WATERMARK);
  fx_end();

  fx_begin(true);
  int cols[] = {4};
  dp_plan *d2 = fx_unary(DP_P_DISTINCT, fx_project_cols(fx_payments(), 1, cols, NULL), 1, 8);
  fx_root(d2);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(d2->props.state, DP_STATE_KEYS);
  CHECK_EQ(d2->props.modes, DP_MODE_APPEND);
  fx_end();
}

TEST(sort_modes) {
  fx_begin(true);
  int keys[] = {4};
  dp_plan *agg = fx_aggregate(fx_payments(), 1, keys, &FX_SUM, 2, "total", NULL, 4, 1);
  dp_plan *s = fx_sort(agg, 1, true, 5, 1);
  fx_root(s);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(s->props.modes, DP_MODE_COMPLETE);
  fx_end();

  fx_begin(true);
  dp_plan *s2 = fx_sort(fx_payments(), 0, false, 5, 1);
  fx_root(s2);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(s2->props.modes, DP_MODE_APPEND);
  CHECK_EQ(s2->props.state, DP_STATE_WATERMARK);
  fx_end();

  /* ORDER BY window_time of a window aggregation: time order, every mode */
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  int wkeys[] = {5, 6, 7};
  dp_plan *wagg = fx_aggregate(win, 3, wkeys, &FX_COUNT, -1, "n", win, 4, 1);
  dp_plan *s4 = fx_sort(wagg, 2, false, 5, 1);
  fx_root(s4);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(s4->props.modes, ALL_MODES);
  CHECK_EQ(s4->props.state, DP_STATE_WATERMARK);
  fx_end();

  fx_begin(true);
  dp_plan *s3 = fx_sort(fx_payments(), 2, false, 5, 1);
  fx_root(s3);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(s3->props.modes, 0);
  CHECK_EQ(s3->props.state, DP_STATE_UNBOUNDED);
  fx_end();
}

TEST(topn_in_windows_appends_and_global_topn_updates) {
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  int part[] = {5, 6};
  dp_plan *t = fx_topn(win, 2, part, 2, 3, 4, 1);
  fx_root(t);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(t->props.modes, DP_MODE_APPEND);
  CHECK_EQ(t->props.state, DP_STATE_WATERMARK);
  CHECK_CONTAINS(t->props.state_desc, "top 3 rows per partition (window_start, window_end)");
  CHECK_EQ(dp_analyze_attr(t, 7), 0);
  fx_end();

  fx_begin(true);
  int part2[] = {4};
  dp_plan *t2 = fx_topn(fx_payments(), 1, part2, 2, 3, 4, 1);
  fx_root(t2);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(t2->props.modes, DP_MODE_UPDATE);
  CHECK_EQ(t2->props.state, DP_STATE_KEYS);
  CHECK(t2->props.time_attr == NULL);
  fx_end();
}

TEST(over_ordered_by_event_time) {
  fx_begin(true);
  dp_plan *o = fx_over(fx_payments(), 4, 0, false, false, HOUR, 2, 4, 1);
  fx_root(o);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(o->props.modes, DP_MODE_APPEND);
  CHECK_EQ(o->props.state, DP_STATE_WATERMARK);
  CHECK_CONTAINS(o->props.state_desc, "per partition (provinceId)");
  CHECK_EQ(dp_analyze_attr(o, 0), 0);
  CHECK_EQ(dp_analyze_attr(o, 5), -1);
  fx_end();

  fx_begin(true);
  dp_plan *o2 = fx_over(fx_payments(), 4, 2, false, true, 3, 2, 4, 1);
  fx_root(o2);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(o2->props.modes, 0);
  CHECK_EQ(o2->props.state, DP_STATE_UNBOUNDED);
  fx_end();
}

TEST(sink_follows_its_column_map) {
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  int keys[] = {4, 5, 6, 7};
  dp_plan *agg = fx_aggregate(win, 4, keys, &FX_SUM, 2, "total", win, 4, 1);
  dp_table_def *st = fx_table("out", "kafka", false, "wt", fx_ts(), "province", fx_int(),
                              (const char *)NULL);
  dp_plan *s = fx_sink(agg, st, 1, 13);
  s->u.sink.col_map[0] = 3; /* window_time */
  s->u.sink.col_map[1] = 0;
  fx_root(s);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(dp_analyze_attr(s, 0), 0);
  CHECK_EQ(dp_analyze_attr(s, 1), -1);
  CHECK_EQ(s->props.modes, ALL_MODES);
  CHECK_EQ(s->props.state, DP_STATE_NONE);
  fx_end();
}

TEST(setop_on_streams_keeps_keys) {
  fx_begin(true);
  dp_plan *s = fx_binary(DP_P_SETOP, fx_payments(), fx_payments(), 2, 1);
  fx_root(s);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(s->props.state, DP_STATE_KEYS);
  CHECK_EQ(s->props.changelog, DP_CHANGELOG_RETRACT);
  fx_end();
}

TEST(window_col_tracing) {
  fx_begin(true);
  dp_plan *win = fx_window(fx_payments(), DP_WIN_TUMBLE, 0, MIN, MIN, 2, 1);
  int cols[] = {6, 5, 7};
  dp_plan *p = fx_project_cols(win, 3, cols, NULL);
  fx_root(p);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  const dp_plan *w = NULL;
  CHECK_EQ(dp_analyze_window_col(p, 0, &w), 'E');
  CHECK(w == win);
  CHECK_EQ(dp_analyze_window_col(p, 1, &w), 'S');
  CHECK_EQ(dp_analyze_window_col(p, 2, &w), 'T');
  fx_end();
}

TEST(output_mode_inferred_or_asked) {
  fx_begin(true);
  dp_plan *agg = fx_aggregate(fx_payments(), 0, NULL, &FX_COUNT, -1, "n", NULL, 4, 1);
  fx_root(agg);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(dp_analyze_output_mode(&fx_q, agg), DP_MODE_UPDATE);
  fx_q.output_mode = DP_MODE_COMPLETE;
  CHECK_EQ(dp_analyze_output_mode(&fx_q, agg), DP_MODE_COMPLETE);
  fx_end();

  fx_begin(true);
  dp_plan *s = fx_payments();
  fx_root(s);
  CHECK_EQ(analyze_only(), DIPPER_OK);
  CHECK_EQ(dp_analyze_output_mode(&fx_q, s), DP_MODE_APPEND);
  fx_end();
}

int main(void) { return RUN_TESTS(); }
