/*
** plan_test.c — the plan helpers of plan.c: builders, walking, column use,
** remapping copies (through subqueries), equality and constancy.
*/
#include "core/buf.h"
#include "plan/plan.h"
#include "test.h"

static dp_arena *A;

static const dp_type *INT_(void) { return dp_type_of(DP_T_INT); }

static dp_expr *col(int i) { return dp_expr_column(A, i, INT_()); }
static dp_expr *outer_col(int i, int level) {
  dp_expr *e = col(i);
  e->u.column.outer = level;
  return e;
}
static dp_expr *lit(int64_t v) { return dp_expr_literal(A, dp_value_int(INT_(), v)); }
static dp_expr *call2(dp_func_id id, dp_expr *x, dp_expr *y) {
  dp_expr *args[2] = {x, y};
  return dp_expr_call(A, dp_func_get(id), INT_(), 2, args);
}
static dp_expr *call0(dp_func_id id) { return dp_expr_call(A, dp_func_get(id), dp_type_of(DP_T_DOUBLE), 0, NULL); }

/* EXISTS (SELECT .. FROM scan WHERE cond) */
static dp_expr *exists(dp_expr *cond) {
  dp_plan *scan = dp_plan_new(A, DP_P_SCAN, 0);
  dp_plan *filter = dp_plan_new(A, DP_P_FILTER, 1);
  filter->inputs[0] = scan;
  filter->u.filter.cond = cond;
  dp_expr *e = dp_arena_calloc(A, 1, sizeof *e);
  e->kind = DP_E_SUBQUERY;
  e->type = dp_type_of(DP_T_BOOLEAN);
  e->u.subquery.kind = DP_SUBQ_EXISTS;
  e->u.subquery.plan = filter;
  return e;
}

TEST(kind_names) {
  CHECK_STR(dp_plan_kind_name(DP_P_SCAN), "Scan");
  CHECK_STR(dp_plan_kind_name(DP_P_DEDUPLICATE), "Deduplicate");
  CHECK_STR(dp_plan_kind_name(DP_P_TOPN), "TopN");
  CHECK_STR(dp_plan_kind_name(DP_P_SINK), "Sink");
  CHECK_STR(dp_plan_kind_name(DP_P_COUNT_), "?");
  CHECK_STR(dp_join_kind_name(DP_J_INNER), "INNER");
  CHECK_STR(dp_join_kind_name(DP_J_CROSS), "CROSS");
  CHECK_STR(dp_join_kind_name((dp_join_kind)99), "?");
  CHECK_STR(dp_join_name(DP_J_LEFT), "LEFT JOIN");
  CHECK_STR(dp_join_name(DP_J_ANTI), "ANTI JOIN");
  CHECK_STR(dp_join_name((dp_join_kind)99), "JOIN");
}

TEST(new_nodes_have_inputs_and_absent_markers) {
  dp_plan *j = dp_plan_new(A, DP_P_JOIN, 2);
  CHECK(j && j->kind == DP_P_JOIN && j->ninputs == 2);
  CHECK(j && j->inputs && j->inputs[0] == NULL && j->inputs[1] == NULL);
  CHECK(j && !j->props.analyzed && j->props.time_attr == NULL);
  dp_plan *l = dp_plan_new(A, DP_P_LIMIT, 1);
  CHECK_EQ(l->u.limit.limit, -1);
  CHECK_EQ(l->u.limit.offset, -1);
  CHECK_EQ(dp_plan_new(A, DP_P_DEDUPLICATE, 1)->u.dedup.order_col, -1);
  CHECK_EQ(dp_plan_new(A, DP_P_WATERMARK, 1)->u.watermark.delay, -1);
  CHECK_EQ(dp_plan_new(A, DP_P_AGGREGATE, 1)->u.aggregate.wstart, -1);
  dp_plan *s = dp_plan_new(A, DP_P_SCAN, 0);
  CHECK(s && s->inputs == NULL && s->ninputs == 0);
  CHECK(dp_plan_new(A, DP_P_SCAN, -1) == NULL);
}

TEST(call_keeps_its_own_argument_array) {
  dp_expr *args[2] = {col(0), lit(1)};
  dp_expr *c = dp_expr_call(A, dp_func_get(DP_F_ADD), INT_(), 2, args);
  args[0] = lit(99);
  CHECK(c->u.call.args != args);
  CHECK(c->u.call.args[0]->kind == DP_E_COLUMN);
  CHECK(c->u.call.fn == dp_func_get(DP_F_ADD));
  dp_expr *k = dp_expr_cast(A, col(3), dp_type_of(DP_T_BIGINT), true);
  CHECK(k->kind == DP_E_CAST && k->u.cast.try_ && k->u.cast.arg->u.column.index == 3);
  CHECK(k->type->kind == DP_T_BIGINT);
}

static void record_kind(dp_plan *p, void *ud) {
  dp_buf *b = ud;
  dp_buf_printf(b, "%s ", dp_plan_kind_name(p->kind));
}

TEST(walk_visits_children_first) {
  dp_plan *scan1 = dp_plan_new(A, DP_P_SCAN, 0), *scan2 = dp_plan_new(A, DP_P_VALUES, 0);
  dp_plan *filter = dp_plan_new(A, DP_P_FILTER, 1);
  filter->inputs[0] = scan1;
  dp_plan *join = dp_plan_new(A, DP_P_JOIN, 2);
  join->inputs[0] = filter;
  join->inputs[1] = scan2;
  dp_plan *sink = dp_plan_new(A, DP_P_SINK, 1);
  sink->inputs[0] = join;
  dp_buf b = DP_BUF_INIT;
  dp_plan_walk(sink, record_kind, &b);
  CHECK_STR(dp_buf_cstr(&b), "Scan Filter Values Join Sink ");
  dp_buf_free(&b);
}

TEST(column_use) {
  dp_expr *e = call2(DP_F_ADD, col(0), call2(DP_F_MULTIPLY, col(2), outer_col(1, 1)));
  CHECK(dp_expr_uses_column(e, 0));
  CHECK(dp_expr_uses_column(e, 2));
  CHECK(!dp_expr_uses_column(e, 1)); /* outer1.$1 is the enclosing query's column */
  CHECK(!dp_expr_uses_column(e, -1));
  CHECK_EQ(dp_expr_as_column(col(4)), 4);
  CHECK_EQ(dp_expr_as_column(outer_col(4, 1)), -1);
  CHECK_EQ(dp_expr_as_column(e), -1);
  CHECK_EQ(dp_expr_as_column(NULL), -1);
  /* a correlated subquery uses this row's column 3 through outer == 1 */
  dp_expr *sq = exists(call2(DP_F_EQ, col(0), outer_col(3, 1)));
  CHECK(dp_expr_uses_column(sq, 3));
  CHECK(!dp_expr_uses_column(sq, 0)); /* col 0 there is the subquery's own */
}

TEST(remap_renumbers_a_copy) {
  dp_expr *e = call2(DP_F_ADD, col(0), call2(DP_F_MULTIPLY, col(2), lit(3)));
  int map[] = {5, -1, 7};
  dp_expr *r = dp_expr_remap(A, e, map);
  CHECK(r != NULL && r != e);
  CHECK_EQ(r->u.call.args[0]->u.column.index, 5);
  CHECK_EQ(r->u.call.args[1]->u.call.args[0]->u.column.index, 7);
  CHECK_EQ(e->u.call.args[0]->u.column.index, 0); /* the original is untouched */
  CHECK(r->u.call.args != e->u.call.args);
  /* a column the map drops */
  CHECK(dp_expr_remap(A, col(1), map) == NULL);
  /* NULL map: an equal copy */
  dp_expr *same = dp_expr_remap(A, e, NULL);
  CHECK(same != e && dp_expr_equal(same, e));
  /* CASE, CAST and FIELD are walked */
  dp_expr *cs = dp_arena_calloc(A, 1, sizeof *cs);
  cs->kind = DP_E_CASE;
  cs->type = INT_();
  cs->u.case_.n = 1;
  cs->u.case_.whens = dp_arena_calloc(A, 1, sizeof(dp_expr *));
  cs->u.case_.thens = dp_arena_calloc(A, 1, sizeof(dp_expr *));
  cs->u.case_.whens[0] = call2(DP_F_GT, col(2), lit(0));
  cs->u.case_.thens[0] = dp_expr_cast(A, col(0), dp_type_of(DP_T_BIGINT), false);
  cs->u.case_.else_ = lit(0);
  dp_expr *rc = dp_expr_remap(A, cs, map);
  CHECK(rc && rc->u.case_.whens[0]->u.call.args[0]->u.column.index == 7);
  CHECK(rc && rc->u.case_.thens[0]->u.cast.arg->u.column.index == 5);
  CHECK(rc && rc->u.case_.else_ && rc->u.case_.else_->kind == DP_E_LITERAL);
}

TEST(remap_follows_correlated_references_into_subqueries) {
  int map[] = {10, 11, 12, 13};
  /* uncorrelated: the plan is shared */
  dp_expr *plain = exists(call2(DP_F_EQ, col(0), lit(1)));
  dp_expr *rp = dp_expr_remap(A, plain, map);
  CHECK(rp && rp->u.subquery.plan == plain->u.subquery.plan);
  /* correlated: the plan is copied, the outer reference renumbered, the
  ** subquery's own column left alone, the original plan untouched */
  dp_expr *corr = exists(call2(DP_F_EQ, col(0), outer_col(3, 1)));
  dp_expr *rq = dp_expr_remap(A, corr, map);
  CHECK(rq != NULL);
  dp_plan *np = rq ? rq->u.subquery.plan : NULL;
  CHECK(np && np != corr->u.subquery.plan);
  CHECK(np && np->kind == DP_P_FILTER && np->inputs[0] != NULL);
  dp_expr *cond = np ? np->u.filter.cond : NULL;
  CHECK(cond && cond->u.call.args[0]->u.column.index == 0);
  CHECK(cond && cond->u.call.args[1]->u.column.index == 13);
  CHECK(cond && cond->u.call.args[1]->u.column.outer == 1);
  CHECK_EQ(corr->u.subquery.plan->u.filter.cond->u.call.args[1]->u.column.index, 3);
  /* a reference two levels out is not this row's */
  dp_expr *far = exists(call2(DP_F_EQ, col(0), outer_col(3, 2)));
  dp_expr *rf = dp_expr_remap(A, far, map);
  CHECK(rf && rf->u.subquery.plan == far->u.subquery.plan);
}

TEST(equality_is_structural) {
  CHECK(dp_expr_equal(call2(DP_F_ADD, col(0), lit(1)), call2(DP_F_ADD, col(0), lit(1))));
  CHECK(!dp_expr_equal(call2(DP_F_ADD, col(0), lit(1)), call2(DP_F_ADD, col(1), lit(1))));
  CHECK(!dp_expr_equal(call2(DP_F_ADD, col(0), lit(1)), call2(DP_F_SUBTRACT, col(0), lit(1))));
  CHECK(!dp_expr_equal(call2(DP_F_ADD, col(0), lit(1)), call2(DP_F_ADD, col(0), lit(2))));
  CHECK(!dp_expr_equal(col(0), outer_col(0, 1)));
  CHECK(!dp_expr_equal(col(0), dp_expr_column(A, 0, dp_type_of(DP_T_BIGINT))));
  char s1[] = "abc", s2[] = "abc";
  CHECK(dp_expr_equal(dp_expr_literal(A, dp_value_string(s1, 3)), dp_expr_literal(A, dp_value_string(s2, 3))));
  CHECK(!dp_expr_equal(dp_expr_literal(A, dp_value_string(s1, 3)), dp_expr_literal(A, dp_value_string(s2, 2))));
  const dp_type *dbl = dp_type_of(DP_T_DOUBLE);
  CHECK(!dp_expr_equal(dp_expr_literal(A, dp_value_double(dbl, 0.0)), dp_expr_literal(A, dp_value_double(dbl, -0.0))));
  CHECK(dp_expr_equal(dp_expr_literal(A, dp_value_null(INT_())), dp_expr_literal(A, dp_value_null(INT_()))));
  CHECK(!dp_expr_equal(dp_expr_literal(A, dp_value_null(INT_())), lit(0)));
  CHECK(!dp_expr_equal(dp_expr_cast(A, col(0), dbl, false), dp_expr_cast(A, col(0), dbl, true)));
  CHECK(dp_expr_equal(NULL, NULL));
  CHECK(!dp_expr_equal(col(0), NULL));
}

TEST(constancy) {
  CHECK(dp_expr_is_constant(lit(1)));
  CHECK(dp_expr_is_constant(call2(DP_F_ADD, lit(1), lit(2))));
  CHECK(!dp_expr_is_constant(call2(DP_F_ADD, col(0), lit(2))));
  CHECK(!dp_expr_is_constant(outer_col(0, 1)));
  CHECK(dp_expr_is_constant(call0(DP_F_PI)));
  CHECK(!dp_expr_is_constant(call0(DP_F_RAND)));
  CHECK(!dp_expr_is_constant(call0(DP_F_CURRENT_TIMESTAMP)));
  CHECK(!dp_expr_is_constant(call0(DP_F_PROCTIME)));
  dp_expr *arg = lit(1);
  CHECK(!dp_expr_is_constant(dp_expr_call(A, dp_func_get(DP_F_SUM), INT_(), 1, &arg)));
  CHECK(dp_expr_is_constant(dp_expr_cast(A, lit(1), dp_type_of(DP_T_BIGINT), false)));
  CHECK(!dp_expr_is_constant(exists(lit(1))));
  CHECK(!dp_expr_is_constant(NULL));
}

int main(void) {
  A = dp_arena_new(0);
  int rc = RUN_TESTS();
  dp_arena_free(A);
  return rc;
}
