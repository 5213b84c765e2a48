/*
** binder_test.c — the binder, driven through real SQL: dp_parse, then
** dp_bind_stmt for every statement against a catalog built with CREATE TABLE.
** Each test asserts the plan's shape (node kinds, schemas, types, window
** specs in µs, watermark delays, dedup keys, Top-N n, join keys) or the error
** code, message key words and line:col.
*/
#include <stdlib.h>
#include <string.h>

#include "plan/binder.h"
#include "plan/catalog.h"
#include "plan/plan.h"
#include "sql/parser.h"
#include "test.h"

static const char *const setup_sql =
    "CREATE TABLE orders (\n"
    "  order_id BIGINT, user_id INT, amount DECIMAL(10, 2), product STRING,\n"
    "  ts TIMESTAMP(3), info ROW<city STRING, zip INT>, tags MAP<STRING, STRING>,\n"
    "  arr ARRAY<INT>, epoch BIGINT,\n"
    "  doubled AS amount * 2,\n"
    "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND\n"
    ") WITH ('connector' = 'datagen');\n"
    "CREATE TABLE users (user_id INT, name STRING, uts TIMESTAMP(3),\n"
    "  PRIMARY KEY (user_id) NOT ENFORCED, WATERMARK FOR uts AS uts) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE sink (user_id INT, total DECIMAL(38, 2), cnt BIGINT) WITH ('connector' = 'blackhole');\n"
    "CREATE TABLE sink2 (user_id INT, note STRING, total DOUBLE) WITH ('connector' = 'blackhole');\n";

typedef struct fx {
  dp_arena *a;
  dp_diags d;
  dp_catalog *cat;
  dp_query_plan q; /* the plan of the last statement */
  char *msg;       /* first error message, or NULL */
  int line, col;   /* of the first error */
} fx;

/* Parse and bind every statement of sql; the first error code. */
static int run(fx *f, const char *sql) {
  dp_diags_init(&f->d, f->a, "t.sql", sql, strlen(sql));
  dp_ast_script *script = NULL;
  if (dp_parse(f->a, &f->d, sql, strlen(sql), &script) != DIPPER_OK) {
    fprintf(stderr, "parse failed: %s\n  in: %s\n", f->d.count ? f->d.items[0].message : "?", sql);
    f->msg = f->d.count ? (char *)(uintptr_t)f->d.items[0].message : NULL;
    return -1;
  }
  int first = DIPPER_OK;
  for (int i = 0; i < script->n; i++) {
    int rc = dp_bind_stmt(f->a, &f->d, f->cat, script->stmts[i], &f->q);
    if (first == DIPPER_OK) first = rc;
  }
  f->msg = NULL;
  f->line = f->col = 0;
  if (f->d.count > 0) {
    f->msg = (char *)(uintptr_t)f->d.items[0].message;
    f->line = (int)f->d.items[0].span.line;
    f->col = (int)f->d.items[0].span.col;
  }
  return first;
}

static void fx_init(fx *f) {
  memset(f, 0, sizeof *f);
  f->a = dp_arena_new(0);
  f->cat = dp_catalog_new();
  int rc = run(f, setup_sql);
  if (rc != DIPPER_OK) fprintf(stderr, "setup failed: %s\n", f->msg ? f->msg : "?");
  CHECK_EQ(rc, DIPPER_OK);
}

static void fx_free(fx *f) {
  dp_catalog_free(f->cat);
  dp_arena_free(f->a);
}

/* Bind a query that must succeed; its root. */
static dp_plan *ok_plan(fx *f, const char *sql) {
  int rc = run(f, sql);
  if (rc != DIPPER_OK) fprintf(stderr, "unexpected error %d: %s\n  in: %s\n", rc, f->msg ? f->msg : "?", sql);
  CHECK_EQ(rc, DIPPER_OK);
  CHECK(f->q.nroots >= 1);
  return rc == DIPPER_OK && f->q.nroots >= 1 ? f->q.roots[0] : NULL;
}

/* The first node of a kind, depth-first from p. */
static dp_plan *find(dp_plan *p, dp_plan_kind k) {
  if (!p) return NULL;
  if (p->kind == k) return p;
  for (int i = 0; i < p->ninputs; i++) {
    dp_plan *r = find(p->inputs[i], k);
    if (r) return r;
  }
  return NULL;
}

static const char *tstr(fx *f, const dp_type *t) { return dp_type_format(f->a, t); }

/* ------------------------------------------------------------------ */

TEST(select_table_computed_and_watermark) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "SELECT order_id, amount + 1 AS a1, UPPER(product), doubled FROM orders");
  if (p) {
    CHECK_EQ(p->kind, DP_P_PROJECT);
    CHECK_EQ(p->schema.ncols, 4);
    CHECK_STR(p->schema.cols[0].name, "order_id");
    CHECK_STR(p->schema.cols[1].name, "a1");
    CHECK_STR(p->schema.cols[2].name, "EXPR$2");
    CHECK_STR(p->schema.cols[3].name, "doubled");
    CHECK_STR(tstr(&f, p->schema.cols[0].type), "BIGINT");
    CHECK_EQ(p->schema.cols[1].type->kind, DP_T_DECIMAL);
    dp_plan *wm = p->inputs[0];
    CHECK_EQ(wm->kind, DP_P_WATERMARK);
    CHECK_EQ(wm->u.watermark.delay, 5 * DP_MICROS_PER_SECOND);
    CHECK_STR(wm->u.watermark.source, "orders");
    CHECK_EQ(wm->u.watermark.time_col, 4);
    CHECK_EQ(wm->u.watermark.id, 0);
    CHECK_EQ(f.q.nwatermarks, 1);
    CHECK(f.q.watermarks[0].node == wm);
    CHECK_STR(f.q.watermarks[0].column, "ts");
    dp_plan *proj = wm->inputs[0];
    CHECK_EQ(proj->kind, DP_P_PROJECT);
    CHECK_EQ(proj->schema.ncols, 10);
    CHECK_EQ(proj->inputs[0]->kind, DP_P_SCAN);
    CHECK_EQ(proj->inputs[0]->schema.ncols, 9); /* the computed column is not scanned */
    CHECK_EQ(proj->u.project.exprs[9]->kind, DP_E_CALL);
    CHECK(f.q.streaming);
    CHECK_EQ(f.q.output_mode, 0);
    /* the select list's spans point at its items */
    CHECK_EQ(p->u.project.exprs[1]->span.line, 1);
    CHECK_EQ(p->u.project.exprs[1]->span.col, 18);
  }
  fx_free(&f);
}

TEST(literal_types) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "SELECT 1, 3000000000, 99999999999999999999, 1.5, 0.25, 1e3, 'x', "
                           "DATE '2024-01-31', TIMESTAMP '2024-01-31 10:00:00.123', TRUE, NULL");
  if (p) {
    CHECK_STR(tstr(&f, p->schema.cols[0].type), "INT NOT NULL");
    CHECK_STR(tstr(&f, p->schema.cols[1].type), "BIGINT NOT NULL");
    CHECK_STR(tstr(&f, p->schema.cols[2].type), "DECIMAL(20, 0) NOT NULL");
    CHECK_STR(tstr(&f, p->schema.cols[3].type), "DECIMAL(2, 1) NOT NULL");
    CHECK_STR(tstr(&f, p->schema.cols[4].type), "DECIMAL(2, 2) NOT NULL");
    CHECK_STR(tstr(&f, p->schema.cols[5].type), "DOUBLE NOT NULL");
    CHECK_EQ(p->schema.cols[6].type->kind, DP_T_STRING);
    CHECK_EQ(p->schema.cols[7].type->kind, DP_T_DATE);
    CHECK_STR(tstr(&f, p->schema.cols[8].type), "TIMESTAMP(3) NOT NULL");
    CHECK_EQ(p->schema.cols[9].type->kind, DP_T_BOOLEAN);
    CHECK_EQ(p->schema.cols[10].type->kind, DP_T_NULL);
    CHECK_EQ(p->u.project.exprs[7]->u.value.u.i, 19753); /* days since 1970 */
    CHECK_EQ(p->inputs[0]->kind, DP_P_VALUES);
  }
  CHECK_EQ(run(&f, "SELECT DATE '2024-13-45'"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "malformed DATE literal");
  CHECK_EQ(f.line, 1);
  CHECK_EQ(f.col, 8);
  fx_free(&f);
}

static int64_t interval_of(fx *f, const char *expr, int *rc) {
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT %s", expr);
  dp_diags_init(&f->d, f->a, "t.sql", sql, strlen(sql));
  dp_ast_script *s = NULL;
  int64_t us = -12345;
  if (dp_parse(f->a, &f->d, sql, strlen(sql), &s) != DIPPER_OK) {
    fprintf(stderr, "parse failed: %s\n", sql);
    *rc = -1;
    return us;
  }
  *rc = dp_bind_interval(&f->d, s->stmts[0]->u.query->select->items[0].expr, &us);
  return us;
}

TEST(intervals_both_spellings) {
  fx f;
  fx_init(&f);
  int rc;
  CHECK_EQ(interval_of(&f, "INTERVAL '5' SECOND", &rc), 5 * DP_MICROS_PER_SECOND);
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(interval_of(&f, "INTERVAL '1:30' MINUTE TO SECOND", &rc), 90 * DP_MICROS_PER_SECOND);
  CHECK_EQ(interval_of(&f, "INTERVAL '1 02:00:00' DAY TO SECOND", &rc), DP_MICROS_PER_DAY + 2 * DP_MICROS_PER_HOUR);
  CHECK_EQ(interval_of(&f, "INTERVAL '10' MINUTES", &rc), 10 * DP_MICROS_PER_MINUTE);
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(interval_of(&f, "'10 seconds'", &rc), 10 * DP_MICROS_PER_SECOND);
  CHECK_EQ(interval_of(&f, "'1 minute 30 seconds'", &rc), 90 * DP_MICROS_PER_SECOND);
  CHECK_EQ(interval_of(&f, "'1 hour'", &rc), DP_MICROS_PER_HOUR);
  CHECK_EQ(interval_of(&f, "INTERVAL 10 SECONDS", &rc), 10 * DP_MICROS_PER_SECOND);
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(interval_of(&f, "INTERVAL '0.5' SECOND", &rc), 500000);
  interval_of(&f, "'ten seconds'", &rc);
  CHECK_EQ(rc, DIPPER_SYNTAX);
  interval_of(&f, "INTERVAL '2' MONTH", &rc);
  CHECK_EQ(rc, DIPPER_TYPE); /* no fixed length */
  dp_plan *p = ok_plan(&f, "SELECT INTERVAL '2' YEAR, INTERVAL '3' HOUR");
  if (p) {
    CHECK_EQ(p->schema.cols[0].type->kind, DP_T_INTERVAL_YM);
    CHECK_EQ(p->u.project.exprs[0]->u.value.u.i, 24);
    CHECK_EQ(p->schema.cols[1].type->kind, DP_T_INTERVAL_DT);
  }
  fx_free(&f);
}

TEST(name_errors) {
  fx f;
  fx_init(&f);
  CHECK_EQ(run(&f, "SELECT amout FROM orders"), DIPPER_NAME);
  CHECK_CONTAINS(f.msg, "unknown column `amout`");
  CHECK_CONTAINS(f.msg, "did you mean `amount`");
  CHECK_EQ(f.line, 1);
  CHECK_EQ(f.col, 8);
  CHECK_EQ(run(&f, "SELECT user_id\nFROM orders o JOIN users u ON o.user_id = u.user_id"), DIPPER_NAME);
  CHECK_CONTAINS(f.msg, "ambiguous");
  CHECK_CONTAINS(f.msg, "`o`");
  CHECK_CONTAINS(f.msg, "`u`");
  CHECK_EQ(run(&f, "SELECT * FROM order1"), DIPPER_NAME);
  CHECK_CONTAINS(f.msg, "unknown table `order1`");
  CHECK_CONTAINS(f.msg, "orders");
  CHECK_EQ(f.col, 15);
  CHECK_EQ(run(&f, "SELECT uper(product) FROM orders"), DIPPER_NAME);
  CHECK_CONTAINS(f.msg, "unknown function `uper`");
  CHECK_CONTAINS(f.msg, "upper");
  CHECK_EQ(run(&f, "SELECT o.nope FROM orders o"), DIPPER_NAME);
  CHECK_CONTAINS(f.msg, "no column `nope`");
  /* quoted names and case: matched case-insensitively */
  CHECK(ok_plan(&f, "SELECT `Order_ID`, O.AMOUNT FROM orders AS o") != NULL);
  /* several errors in one select list are all reported */
  CHECK_EQ(run(&f, "SELECT nope1, order_id, nope2 FROM orders"), DIPPER_NAME);
  CHECK_EQ(f.d.count, 2);
  fx_free(&f);
}

TEST(type_errors_and_casts) {
  fx f;
  fx_init(&f);
  CHECK_EQ(run(&f, "SELECT order_id FROM orders WHERE amount"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "WHERE needs a BOOLEAN");
  CHECK_CONTAINS(f.msg, "DECIMAL(10, 2)");
  CHECK_EQ(f.col, 35);
  CHECK_EQ(run(&f, "SELECT CAST(info AS INT) FROM orders"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "cannot cast ROW<");
  CHECK_EQ(run(&f, "SELECT SUBSTRING(product) FROM orders"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "substring");
  /* implicit casts: INT compared with BIGINT, a string literal compared with a timestamp */
  dp_plan *p = ok_plan(&f, "SELECT order_id FROM orders WHERE user_id = order_id AND ts > '2024-01-01 00:00:00'");
  if (p) {
    dp_plan *flt = find(p, DP_P_FILTER);
    CHECK(flt != NULL);
    if (flt) {
      dp_expr *c = flt->u.filter.cond;
      CHECK_STR(c->u.call.fn->name, "and");
      dp_expr *eq = c->u.call.args[0];
      CHECK_EQ(eq->u.call.args[0]->kind, DP_E_CAST);
      CHECK_EQ(eq->u.call.args[0]->type->kind, DP_T_BIGINT);
      dp_expr *gt = c->u.call.args[1];
      CHECK_EQ(gt->u.call.args[1]->kind, DP_E_LITERAL);
      CHECK_EQ(gt->u.call.args[1]->type->kind, DP_T_TIMESTAMP);
    }
  }
  CHECK_EQ(run(&f, "SELECT order_id FROM orders WHERE ts > 'yesterday'"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "'yesterday' is not a valid TIMESTAMP");
  /* BETWEEN, simple CASE, IN list */
  p = ok_plan(&f, "SELECT CASE user_id WHEN 1 THEN 'a' WHEN 2 THEN 'b' ELSE NULL END, "
                  "user_id BETWEEN 1 AND 10, user_id IN (1, 2, 3000000000) FROM orders");
  if (p) {
    dp_expr *cs = p->u.project.exprs[0];
    CHECK_EQ(cs->kind, DP_E_CASE);
    CHECK_EQ(cs->u.case_.n, 2);
    CHECK_STR(cs->u.case_.whens[0]->u.call.fn->name, "eq");
    CHECK_EQ(cs->type->kind, DP_T_STRING);
    dp_expr *bt = p->u.project.exprs[1];
    CHECK_STR(bt->u.call.fn->name, "and");
    CHECK_STR(bt->u.call.args[0]->u.call.fn->name, "ge");
    CHECK_STR(bt->u.call.args[1]->u.call.fn->name, "le");
    dp_expr *in = p->u.project.exprs[2];
    CHECK_STR(in->u.call.fn->name, "in");
    CHECK_EQ(in->u.call.args[0]->type->kind, DP_T_BIGINT); /* cast to the list's common type */
  }
  fx_free(&f);
}

TEST(nested_access) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "SELECT info.city, o.info.zip, tags['k'], arr[1] FROM orders o");
  if (p) {
    CHECK_EQ(p->u.project.exprs[0]->kind, DP_E_FIELD);
    CHECK_EQ(p->u.project.exprs[0]->u.field.index, 0);
    CHECK_STR(p->schema.cols[0].name, "city");
    CHECK_EQ(p->u.project.exprs[1]->kind, DP_E_FIELD);
    CHECK_EQ(p->u.project.exprs[1]->u.field.index, 1);
    CHECK_EQ(p->schema.cols[1].type->kind, DP_T_INT);
    CHECK_STR(p->u.project.exprs[2]->u.call.fn->name, "element_at");
    CHECK_EQ(p->schema.cols[3].type->kind, DP_T_INT);
  }
  CHECK_EQ(run(&f, "SELECT info.street FROM orders"), DIPPER_NAME);
  CHECK_CONTAINS(f.msg, "no field `street`");
  fx_free(&f);
}

TEST(joins) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "SELECT o.order_id, u.name FROM orders o JOIN users u ON o.user_id = u.user_id AND o.amount > 10");
  dp_plan *j = find(p, DP_P_JOIN);
  CHECK(j != NULL);
  if (j) {
    CHECK_EQ(j->u.join.kind, DP_J_INNER);
    CHECK_EQ(j->u.join.nkeys, 1);
    CHECK_EQ(j->u.join.left_keys[0], 1);
    CHECK_EQ(j->u.join.right_keys[0], 0);
    CHECK_EQ(j->schema.ncols, 13);
    CHECK_EQ(j->span.col, 32); /* the join starts at its left input */
  }
  /* a comma join takes its condition from WHERE */
  p = ok_plan(&f, "SELECT o.order_id FROM orders o, users u WHERE u.user_id = o.user_id AND o.order_id > 5");
  j = find(p, DP_P_JOIN);
  CHECK(j != NULL);
  if (j) {
    CHECK_EQ(j->u.join.kind, DP_J_INNER);
    CHECK_EQ(j->u.join.nkeys, 1);
    CHECK_EQ(j->u.join.left_keys[0], 1);
    CHECK_EQ(j->u.join.right_keys[0], 0);
  }
  CHECK(find(p, DP_P_FILTER) != NULL); /* o.order_id > 5 stays a filter */
  /* LEFT JOIN makes the right side nullable; USING merges the column */
  p = ok_plan(&f, "SELECT * FROM orders LEFT JOIN users USING (user_id)");
  if (p) {
    int n = 0;
    for (int i = 0; i < p->schema.ncols; i++)
      if (strcmp(p->schema.cols[i].name, "user_id") == 0) n++;
    CHECK_EQ(n, 1);
    CHECK_EQ(p->schema.ncols, 12);
    CHECK(!p->schema.cols[p->schema.ncols - 1].type->not_null);
  }
  /* temporal join */
  p = ok_plan(&f, "SELECT o.order_id, u.name FROM orders o JOIN users FOR SYSTEM_TIME AS OF o.ts AS u ON o.user_id = u.user_id");
  j = find(p, DP_P_JOIN);
  CHECK(j && j->u.join.as_of != NULL);
  if (j && j->u.join.as_of) CHECK_EQ(j->u.join.as_of->u.column.index, 4);
  /* Spark's LEFT SEMI JOIN keeps the left columns only */
  p = ok_plan(&f, "SELECT * FROM orders o LEFT SEMI JOIN users u ON o.user_id = u.user_id");
  j = find(p, DP_P_JOIN);
  CHECK(j && j->u.join.kind == DP_J_SEMI);
  if (p) CHECK_EQ(p->schema.ncols, 10);
  fx_free(&f);
}

TEST(subqueries_to_semi_anti_joins) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "SELECT order_id FROM orders o WHERE EXISTS (SELECT 1 FROM users u WHERE u.user_id = o.user_id)");
  dp_plan *j = find(p, DP_P_JOIN);
  CHECK(j != NULL);
  if (j) {
    CHECK_EQ(j->u.join.kind, DP_J_SEMI);
    CHECK_EQ(j->u.join.nkeys, 1);
    CHECK_EQ(j->u.join.left_keys[0], 1);
    CHECK_EQ(j->u.join.right_keys[0], 0);
  }
  /* uncorrelated NOT IN stays NOT (x IN ..): the engine hashes the list once */
  p = ok_plan(&f, "SELECT order_id FROM orders WHERE user_id NOT IN (SELECT user_id FROM users)");
  CHECK(find(p, DP_P_JOIN) == NULL);
  dp_plan *nf = find(p, DP_P_FILTER);
  CHECK(nf && nf->u.filter.cond->kind == DP_E_CALL && nf->u.filter.cond->u.call.args[0]->kind == DP_E_SUBQUERY);
  /* a scalar subquery that returns one row by its shape is a LEFT join with no condition */
  p = ok_plan(&f, "SELECT order_id, (SELECT MAX(user_id) FROM users) FROM orders");
  j = find(p, DP_P_JOIN);
  CHECK(j && j->u.join.kind == DP_J_LEFT && j->u.join.cond == NULL);
  /* one of another shape stays a subquery expression, run once by the engine */
  p = ok_plan(&f, "SELECT order_id, (SELECT user_id FROM users WHERE user_id = 3) FROM orders");
  if (p) CHECK_EQ(p->u.project.exprs[1]->kind, DP_E_SUBQUERY);
  fx_free(&f);
}

TEST(window_tvf_aggregation) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "SELECT window_start, window_end, user_id, SUM(amount) AS total, COUNT(*)\n"
                           "FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' MINUTES))\n"
                           "GROUP BY window_start, window_end, user_id");
  dp_plan *agg = find(p, DP_P_AGGREGATE);
  dp_plan *w = find(p, DP_P_WINDOW);
  CHECK(agg && w);
  if (agg && w) {
    CHECK_EQ(w->u.window.kind, DP_WIN_TUMBLE);
    CHECK_EQ(w->u.window.syntax, DP_WSYN_TVF);
    CHECK_EQ(w->u.window.size, 10 * DP_MICROS_PER_MINUTE);
    CHECK_EQ(w->u.window.time_col, 4);
    CHECK_EQ(w->schema.ncols, 13);
    CHECK_STR(w->schema.cols[10].name, "window_start");
    CHECK_STR(tstr(&f, w->schema.cols[10].type), "TIMESTAMP(3) NOT NULL");
    CHECK_STR(w->schema.cols[12].name, "window_time");
    CHECK(agg->u.aggregate.window == w);
    CHECK_EQ(agg->u.aggregate.wstart, 0);
    CHECK_EQ(agg->u.aggregate.wend, 1);
    CHECK_EQ(agg->u.aggregate.ngroup, 3);
    CHECK_EQ(agg->u.aggregate.naggs, 2);
    CHECK_EQ(agg->u.aggregate.aggs[1].nargs, 0);
    CHECK_EQ(agg->span.line, 3); /* GROUP BY */
    CHECK_STR(p->schema.cols[3].name, "total");
    CHECK_STR(tstr(&f, p->schema.cols[3].type), "DECIMAL(38, 2)");
  }
  /* HOP with named arguments; CUMULATE */
  p = ok_plan(&f, "SELECT window_start, COUNT(*) FROM TABLE(HOP(DATA => TABLE orders, TIMECOL => DESCRIPTOR(ts), "
                  "SLIDE => INTERVAL '5' MINUTE, SIZE => INTERVAL '10' MINUTE)) GROUP BY window_start, window_end");
  w = find(p, DP_P_WINDOW);
  CHECK(w && w->u.window.kind == DP_WIN_HOP);
  if (w) {
    CHECK_EQ(w->u.window.slide, 5 * DP_MICROS_PER_MINUTE);
    CHECK_EQ(w->u.window.size, 10 * DP_MICROS_PER_MINUTE);
  }
  CHECK_EQ(run(&f, "SELECT * FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '7' MINUTE, INTERVAL '10' MINUTE))"),
           DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "multiple of the slide");
  CHECK_EQ(run(&f, "SELECT * FROM TABLE(CUMULATE(TABLE orders, DESCRIPTOR(ts), INTERVAL '3' MINUTE, INTERVAL '10' MINUTE))"),
           DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "multiple of the step");
  CHECK_EQ(run(&f, "SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(epoch), INTERVAL '1' MINUTE))"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "must be TIMESTAMP or TIMESTAMP_LTZ");
  CHECK_EQ(f.col, 53);
  CHECK_EQ(run(&f, "SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(nope), INTERVAL '1' MINUTE))"), DIPPER_NAME);
  CHECK_EQ(run(&f, "SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '-1' MINUTE))"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "positive");
  p = ok_plan(&f, "SELECT * FROM TABLE(SESSION(TABLE orders PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '5' MINUTE))");
  w = find(p, DP_P_WINDOW);
  CHECK(w && w->u.window.kind == DP_WIN_SESSION);
  if (w) {
    CHECK_EQ(w->u.window.gap, 5 * DP_MICROS_PER_MINUTE);
    CHECK_EQ(w->u.window.npartition, 1);
    if (w->u.window.npartition == 1) CHECK_EQ(w->u.window.partition[0], 1);
  }
  fx_free(&f);
}

TEST(legacy_and_spark_group_windows) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "SELECT user_id, TUMBLE_START(ts, INTERVAL '1' MINUTE) AS ws, COUNT(*) FROM orders "
                           "GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), user_id");
  dp_plan *agg = find(p, DP_P_AGGREGATE), *w = find(p, DP_P_WINDOW);
  CHECK(agg && w);
  if (agg && w) {
    CHECK_EQ(w->u.window.syntax, DP_WSYN_LEGACY);
    CHECK_EQ(w->u.window.kind, DP_WIN_TUMBLE);
    CHECK_EQ(w->u.window.size, DP_MICROS_PER_MINUTE);
    CHECK(agg->u.aggregate.window == w);
    CHECK_STR(p->schema.cols[1].name, "ws");
    CHECK_EQ(p->schema.cols[1].type->kind, DP_T_TIMESTAMP);
  }
  p = ok_plan(&f, "SELECT HOP_END(ts, INTERVAL '30' SECOND, INTERVAL '1' MINUTE), COUNT(*) FROM orders "
                  "GROUP BY HOP(ts, INTERVAL '30' SECOND, INTERVAL '1' MINUTE)");
  w = find(p, DP_P_WINDOW);
  CHECK(w && w->u.window.kind == DP_WIN_HOP && w->u.window.slide == 30 * DP_MICROS_PER_SECOND);
  p = ok_plan(&f, "SELECT window, window.start, user_id, count(*) AS n FROM orders "
                  "GROUP BY window(ts, '1 minute', '30 seconds'), user_id");
  w = find(p, DP_P_WINDOW);
  agg = find(p, DP_P_AGGREGATE);
  CHECK(w && agg);
  if (w && agg && p) {
    CHECK_EQ(w->u.window.syntax, DP_WSYN_SPARK);
    CHECK_EQ(w->u.window.kind, DP_WIN_HOP);
    CHECK_EQ(w->u.window.size, 60 * DP_MICROS_PER_SECOND);
    CHECK_EQ(w->u.window.slide, 30 * DP_MICROS_PER_SECOND);
    CHECK(agg->u.aggregate.window == w);
    CHECK_STR(p->schema.cols[0].name, "window");
    CHECK_STR(tstr(&f, p->schema.cols[0].type), "ROW<start TIMESTAMP(3) NOT NULL, end TIMESTAMP(3) NOT NULL> NOT NULL");
    CHECK_EQ(p->u.project.exprs[1]->kind, DP_E_FIELD);
  }
  p = ok_plan(&f, "SELECT session_window, COUNT(*) FROM orders GROUP BY session_window(ts, '5 minutes')");
  p = ok_plan(&f, "SELECT COUNT(*) FROM orders GROUP BY session_window(ts, CASE WHEN user_id = 1 THEN '1 minute' ELSE '5 minutes' END)");
  w = find(p, DP_P_WINDOW);
  CHECK(w && w->u.window.kind == DP_WIN_SESSION && w->u.window.gap_expr != NULL);
  CHECK_EQ(run(&f, "SELECT TUMBLE_END(ts, INTERVAL '2' MINUTE), COUNT(*) FROM orders "
                   "GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE)"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "must repeat");
  CHECK_EQ(f.col, 8);
  CHECK_EQ(run(&f, "SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE) FROM orders"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "only valid with GROUP BY");
  fx_free(&f);
}

TEST(group_by_rules) {
  fx f;
  fx_init(&f);
  CHECK_EQ(run(&f, "SELECT user_id, product, COUNT(*) FROM orders GROUP BY user_id"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "`product`");
  CHECK_CONTAINS(f.msg, "add it to GROUP BY or wrap it in an aggregate");
  CHECK_EQ(f.col, 17);
  CHECK_EQ(run(&f, "SELECT order_id FROM orders WHERE COUNT(*) > 1"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "not allowed in WHERE");
  dp_plan *p = ok_plan(&f, "SELECT user_id, COUNT(DISTINCT product), SUM(amount) FILTER (WHERE amount > 0), "
                           "SUM(amount) FILTER (WHERE amount > 0) + 1 FROM orders GROUP BY user_id HAVING COUNT(*) > 2");
  dp_plan *agg = find(p, DP_P_AGGREGATE);
  CHECK(agg != NULL);
  if (agg) {
    CHECK_EQ(agg->u.aggregate.naggs, 3); /* the repeated SUM .. FILTER is shared */
    CHECK(agg->u.aggregate.aggs[0].distinct);
    CHECK(agg->u.aggregate.aggs[1].filter != NULL);
    CHECK(agg->u.aggregate.window == NULL);
  }
  CHECK(p && p->inputs[0]->kind == DP_P_FILTER); /* HAVING */
  /* HAVING an output alias (Spark) */
  p = ok_plan(&f, "SELECT user_id, COUNT(*) AS cnt FROM orders GROUP BY user_id HAVING cnt > 1");
  agg = find(p, DP_P_AGGREGATE);
  CHECK(agg && agg->u.aggregate.naggs == 1);
  CHECK(p && p->inputs[0]->kind == DP_P_FILTER);
  /* GROUP BY an output alias (Spark) or a position */
  p = ok_plan(&f, "SELECT UPPER(product) AS up, COUNT(*) FROM orders GROUP BY up");
  agg = find(p, DP_P_AGGREGATE);
  CHECK(agg && agg->u.aggregate.ngroup == 1 && agg->u.aggregate.group[0]->kind == DP_E_CALL);
  p = ok_plan(&f, "SELECT UPPER(product), COUNT(*) FROM orders GROUP BY 1");
  agg = find(p, DP_P_AGGREGATE);
  CHECK(agg && agg->u.aggregate.ngroup == 1 && agg->u.aggregate.group[0]->kind == DP_E_CALL);
  fx_free(&f);
}

TEST(dedup_topn_over) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "SELECT order_id, user_id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id "
                           "ORDER BY ts DESC) AS rn FROM orders) WHERE rn = 1");
  dp_plan *d = find(p, DP_P_DEDUPLICATE);
  CHECK(d != NULL);
  CHECK(find(p, DP_P_OVER) == NULL);
  CHECK(find(p, DP_P_FILTER) == NULL);
  if (d) {
    CHECK_EQ(d->u.dedup.nkeys, 1);
    CHECK_EQ(d->u.dedup.keys[0], 0);
    CHECK_EQ(d->u.dedup.order_col, 4);
    CHECK(d->u.dedup.keep_last);
  }
  p = ok_plan(&f, "SELECT * FROM (SELECT user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id "
                  "ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 3");
  dp_plan *t = find(p, DP_P_TOPN);
  CHECK(t != NULL);
  if (t) {
    CHECK_EQ(t->u.topn.n, 3);
    CHECK_EQ(t->u.topn.npartition, 1);
    CHECK_EQ(t->u.topn.partition[0], 1);
    CHECK(t->u.topn.order[0].desc);
    CHECK(t->u.topn.emit_rank);
  }
  if (p) CHECK_STR(p->schema.cols[2].name, "rn");
  p = ok_plan(&f, "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts) AS rn FROM orders "
                  "QUALIFY rn < 2");
  CHECK(find(p, DP_P_DEDUPLICATE) != NULL);
  /* aggregate OVER with a RANGE frame */
  p = ok_plan(&f, "SELECT user_id, SUM(amount) OVER (PARTITION BY user_id ORDER BY ts RANGE BETWEEN "
                  "INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) FROM orders");
  dp_plan *o = find(p, DP_P_OVER);
  CHECK(o != NULL);
  if (o) {
    CHECK(o->u.over.has_frame);
    CHECK(!o->u.over.rows);
    CHECK_EQ(o->u.over.lower, DP_MICROS_PER_HOUR);
    CHECK_EQ(o->u.over.upper, 0);
    CHECK_EQ(o->u.over.ncalls, 1);
    CHECK_EQ(o->schema.ncols, 11);
  }
  CHECK_EQ(run(&f, "SELECT ROW_NUMBER() FROM orders"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "OVER");
  fx_free(&f);
}

TEST(order_limit_distinct_setops) {
  fx f;
  fx_init(&f);
  CHECK(run(&f, "SET 'execution.runtime-mode' = 'batch'") == DIPPER_OK);
  dp_plan *p = ok_plan(&f, "SELECT user_id, amount FROM orders\nORDER BY amount DESC, order_id\nLIMIT 10");
  if (p) {
    CHECK(!f.q.streaming);
    /* the hidden sort column is dropped again */
    CHECK_EQ(p->kind, DP_P_PROJECT);
    CHECK_EQ(p->schema.ncols, 2);
    dp_plan *l = find(p, DP_P_LIMIT), *s = find(p, DP_P_SORT);
    CHECK(l && s);
    if (l && s) {
      CHECK_EQ(l->u.limit.limit, 10);
      CHECK_EQ(l->u.limit.offset, -1);
      CHECK_EQ(l->span.line, 3);
      CHECK_EQ(s->span.line, 2);
      CHECK_EQ(s->u.sort.nkeys, 2);
      CHECK(s->u.sort.keys[0].desc);
      CHECK_EQ(s->schema.ncols, 3);
    }
  }
  p = ok_plan(&f, "SELECT DISTINCT user_id FROM orders ORDER BY 1");
  CHECK(find(p, DP_P_DISTINCT) != NULL);
  p = ok_plan(&f, "SELECT user_id FROM orders UNION ALL SELECT order_id FROM orders");
  if (p) {
    CHECK_EQ(p->kind, DP_P_UNION);
    CHECK(p->u.union_.all);
    CHECK_EQ(p->schema.cols[0].type->kind, DP_T_BIGINT);
    CHECK_EQ(p->inputs[0]->kind, DP_P_PROJECT); /* INT side cast to BIGINT */
  }
  p = ok_plan(&f, "SELECT user_id FROM orders UNION SELECT user_id FROM users");
  CHECK(p && p->kind == DP_P_DISTINCT && p->inputs[0]->kind == DP_P_UNION);
  p = ok_plan(&f, "SELECT user_id FROM orders EXCEPT SELECT user_id FROM users");
  CHECK(p && p->kind == DP_P_SETOP && p->u.setop.except);
  CHECK_EQ(run(&f, "SELECT user_id, amount FROM orders UNION ALL SELECT user_id FROM users"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "2 and 1 columns");
  CHECK_EQ(run(&f, "SELECT user_id FROM orders LIMIT -1"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "non-negative integer");
  fx_free(&f);
}

TEST(ctes_and_views) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "WITH a AS (SELECT user_id, amount FROM orders), b (uid) AS (SELECT user_id FROM a) "
                           "SELECT uid FROM b");
  if (p) {
    CHECK_STR(p->schema.cols[0].name, "uid");
    CHECK(find(p, DP_P_SCAN) != NULL);
  }
  CHECK_EQ(run(&f, "CREATE VIEW big (uid, amt) AS SELECT user_id, amount FROM orders WHERE amount > 100"), DIPPER_OK);
  p = ok_plan(&f, "SELECT uid, amt FROM big WHERE uid = 1");
  if (p) {
    CHECK_EQ(p->schema.ncols, 2);
    CHECK(find(p, DP_P_WATERMARK) != NULL);
  }
  CHECK_EQ(run(&f, "CREATE VIEW bad AS SELECT nope FROM orders"), DIPPER_NAME);
  CHECK(dp_catalog_view(f.cat, "bad") == NULL);
  CHECK_EQ(run(&f, "CREATE FUNCTION f AS 'com.example.F' LANGUAGE PYTHON"), DIPPER_UNSUPPORTED);
  CHECK_CONTAINS(f.msg, "LANGUAGE PYTHON functions are not supported");
  CHECK_EQ(run(&f, "DESCRIBE nope"), DIPPER_NAME);
  CHECK_EQ(run(&f, "DESCRIBE orders"), DIPPER_OK);
  CHECK_EQ(f.q.nroots, 0);
  fx_free(&f);
}

TEST(insert_and_statement_set) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "INSERT INTO sink SELECT user_id, SUM(amount), COUNT(*) FROM orders GROUP BY user_id");
  if (p) {
    CHECK_EQ(p->kind, DP_P_SINK);
    CHECK_STR(p->u.sink.table->name, "sink");
    CHECK_EQ(p->u.sink.col_map[2], 2);
    CHECK_EQ(p->inputs[0]->kind, DP_P_PROJECT);
  }
  /* explicit column list: a missing column becomes NULL, types are cast */
  p = ok_plan(&f, "INSERT INTO sink2 (total, user_id) SELECT amount, user_id FROM orders");
  if (p) {
    dp_plan *proj = p->inputs[0];
    CHECK_EQ(proj->schema.ncols, 3);
    CHECK_EQ(proj->u.project.exprs[0]->u.column.index, 1);
    CHECK_EQ(proj->u.project.exprs[1]->kind, DP_E_LITERAL);
    CHECK_EQ(proj->u.project.exprs[2]->kind, DP_E_CAST);
    CHECK_EQ(proj->schema.cols[2].type->kind, DP_T_DOUBLE);
  }
  CHECK_EQ(run(&f, "INSERT INTO sink SELECT user_id FROM orders"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "returns 1 column but the table takes 3");
  CHECK_EQ(run(&f, "INSERT INTO sink SELECT product, amount, order_id FROM orders"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "`user_id`");
  CHECK_EQ(run(&f, "INSERT INTO orders (doubled) SELECT amount FROM orders"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "computed");
  CHECK_EQ(run(&f, "INSERT INTO nosuch SELECT 1"), DIPPER_NAME);
  CHECK_EQ(run(&f, "EXECUTE STATEMENT SET BEGIN\n"
                   "INSERT INTO sink SELECT user_id, SUM(amount), COUNT(*) FROM orders GROUP BY user_id;\n"
                   "INSERT INTO sink2 SELECT user_id, product, 1.0 FROM orders;\nEND"),
           DIPPER_OK);
  CHECK_EQ(f.q.nroots, 2);
  CHECK_EQ(run(&f, "SET 'dipper.output-mode' = 'update'"), DIPPER_OK);
  CHECK(ok_plan(&f, "EXPLAIN SELECT user_id FROM orders") != NULL);
  CHECK_EQ(f.q.output_mode, DP_MODE_UPDATE);
  fx_free(&f);
}

TEST(expr_over_columns) {
  fx f;
  fx_init(&f);
  dp_schema *s = dp_schema_new(f.a, 2);
  s->cols[0] = (dp_field){"a", dp_type_of(DP_T_INT)};
  s->cols[1] = (dp_field){"ts", dp_type_of(DP_T_TIMESTAMP)};
  const char *sql = "SELECT ts - INTERVAL '3' SECOND, a + 1";
  dp_diags_init(&f.d, f.a, "t.sql", sql, strlen(sql));
  dp_ast_script *script = NULL;
  CHECK_EQ(dp_parse(f.a, &f.d, sql, strlen(sql), &script), DIPPER_OK);
  if (script) {
    dp_expr *e = NULL;
    CHECK_EQ(dp_bind_expr_over(f.a, &f.d, f.cat, s, script->stmts[0]->u.query->select->items[0].expr, &e), DIPPER_OK);
    CHECK(e && e->kind == DP_E_CALL && e->type->kind == DP_T_TIMESTAMP);
    if (e) CHECK_EQ(e->u.call.args[0]->u.column.index, 1);
    CHECK_EQ(dp_bind_expr_over(f.a, &f.d, f.cat, s, script->stmts[0]->u.query->select->items[1].expr, &e), DIPPER_OK);
    CHECK(e && e->type->kind == DP_T_INT);
  }
  fx_free(&f);
}

TEST(more_over_forms) {
  fx f;
  fx_init(&f);
  /* QUALIFY with the ranking written inline */
  dp_plan *p = ok_plan(&f, "SELECT user_id, amount FROM orders "
                           "QUALIFY ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) <= 2");
  dp_plan *t = find(p, DP_P_TOPN);
  CHECK(t != NULL);
  if (t) {
    CHECK_EQ(t->u.topn.n, 2);
  }
  if (p) CHECK_EQ(p->schema.ncols, 2); /* the rank QUALIFY read is not an output */
  /* named windows */
  p = ok_plan(&f, "SELECT SUM(amount) OVER w, COUNT(*) OVER w FROM orders "
                  "WINDOW w AS (PARTITION BY user_id ORDER BY ts ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)");
  dp_plan *o = find(p, DP_P_OVER);
  CHECK(o != NULL);
  if (o) {
    CHECK_EQ(o->u.over.ncalls, 2); /* one node for the one window */
    CHECK(o->u.over.rows);
    CHECK_EQ(o->u.over.lower, 10);
  }
  CHECK_EQ(run(&f, "SELECT SUM(amount) OVER w2 FROM orders WINDOW w AS (PARTITION BY user_id ORDER BY ts)"), DIPPER_NAME);
  CHECK_CONTAINS(f.msg, "unknown window `w2`");
  CHECK_EQ(run(&f, "SELECT SUM(amount) OVER (ORDER BY ts RANGE BETWEEN 5 PRECEDING AND CURRENT ROW) FROM orders"),
           DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "INTERVAL");
  CHECK_EQ(f.col, 52);
  /* an aggregate inside an OVER call is computed by the AGGREGATE below it */
  p = ok_plan(&f, "SELECT user_id, SUM(COUNT(*)) OVER (ORDER BY user_id) AS running FROM orders GROUP BY user_id");
  dp_plan *agg = find(p, DP_P_AGGREGATE);
  o = find(p, DP_P_OVER);
  CHECK(agg && o);
  if (agg && o) {
    CHECK_EQ(agg->u.aggregate.naggs, 1);
    CHECK_EQ(o->u.over.calls[0].args[0]->u.column.index, 1);
    CHECK(o->inputs[0] == agg);
  }
  /* the deduplication pattern inside a view */
  CHECK_EQ(run(&f, "CREATE VIEW last_order AS SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id "
                   "ORDER BY ts DESC) AS rn FROM orders) WHERE rn = 1"), DIPPER_OK);
  p = ok_plan(&f, "SELECT order_id FROM last_order");
  dp_plan *d = find(p, DP_P_DEDUPLICATE);
  CHECK(d != NULL);
  if (d) CHECK_EQ(d->u.dedup.keys[0], 1);
  fx_free(&f);
}

TEST(unnest_and_correlation) {
  fx f;
  fx_init(&f);
  dp_plan *p = ok_plan(&f, "SELECT order_id, x FROM orders CROSS JOIN UNNEST(arr) AS t(x)");
  dp_plan *u = find(p, DP_P_UNNEST);
  CHECK(u != NULL);
  if (u) {
    CHECK_EQ(u->schema.ncols, 11);
    CHECK_STR(u->schema.cols[10].name, "x");
    CHECK_EQ(u->schema.cols[10].type->kind, DP_T_INT);
  }
  CHECK_EQ(run(&f, "SELECT * FROM orders CROSS JOIN UNNEST(product) AS t(x)"), DIPPER_TYPE);
  CHECK_CONTAINS(f.msg, "ARRAY or a MAP");
  /* a correlated aggregate by an equality: a LEFT join on the correlated columns */
  p = ok_plan(&f, "SELECT order_id, (SELECT MAX(name) FROM users u WHERE u.user_id = o.user_id) FROM orders o");
  dp_plan *lj = find(p, DP_P_JOIN);
  CHECK(lj && lj->u.join.kind == DP_J_LEFT && lj->u.join.nkeys == 1 && lj->u.join.left_keys[0] == 1 &&
        lj->u.join.right_keys[0] == 0);
  /* by an inequality: the subquery stays, referring to the outer row */
  p = ok_plan(&f, "SELECT order_id, (SELECT MAX(name) FROM users u WHERE o.user_id < u.user_id) FROM orders o");
  if (p) {
    dp_expr *sq = p->u.project.exprs[1];
    CHECK_EQ(sq->kind, DP_E_SUBQUERY);
    dp_plan *flt = find(sq->u.subquery.plan, DP_P_FILTER);
    CHECK(flt != NULL);
    if (flt) {
      dp_expr *lt = flt->u.filter.cond;
      CHECK_EQ(lt->u.call.args[0]->u.column.outer, 1);
      CHECK_EQ(lt->u.call.args[0]->u.column.index, 1);
    }
  }
  CHECK_EQ(run(&f, "SELECT 1 FROM orders a JOIN users a ON a.user_id = 1"), DIPPER_DUPLICATE);
  CHECK_EQ(f.col, 35);
  fx_free(&f);
}

int main(void) { return RUN_TESTS(); }
