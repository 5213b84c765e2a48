/*
** catalog_test.c — the catalog (tables, views, name index), the DDL checks of
** CREATE TABLE / CREATE VIEW / DROP, and session options (SET/RESET), driven
** through real SQL parsed with dp_parse.  Errors are checked for their code,
** key words of the message, and the line:col they point at.
*/
#include <stdlib.h>
#include <string.h>

#include "plan/catalog.h"
#include "plan/catalog_int.h"
#include "plan/plan.h"
#include "sql/parser.h"
#include "test.h"

#include "catalog_fixture.h"

#define DATAGEN " WITH ('connector' = 'datagen')"

/* ---- the index ---- */

TEST(lookup_is_case_insensitive) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE Orders (id BIGINT, amount DOUBLE)" DATAGEN), DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(e.cat, "ORDERS");
  CHECK(t != NULL);
  if (t) {
    CHECK_STR(t->name, "Orders");
    CHECK_EQ(t->schema.ncols, 2);
    CHECK_STR(t->schema.cols[1].name, "amount");
    CHECK_EQ(t->schema.cols[0].type->kind, DP_T_BIGINT);
    CHECK_EQ(t->schema.cols[1].type->kind, DP_T_DOUBLE);
    CHECK_EQ(t->cols[0].kind, DP_CK_PHYSICAL);
    CHECK_STR(t->connector, "datagen");
    CHECK(t->format == NULL);
    CHECK_EQ(t->watermark_col, -1);
    CHECK_EQ(t->npk, 0);
    CHECK(!t->temporary);
    CHECK(!t->bounded);
  }
  CHECK(dp_catalog_table(e.cat, "order") == NULL);
  CHECK(dp_catalog_view(e.cat, "orders") == NULL);
  CHECK_STR(dp_catalog_suggest(e.cat, "ordrs"), "Orders");
  CHECK_STR(dp_catalog_suggest(e.cat, "ORDER"), "Orders");
  CHECK(dp_catalog_suggest(e.cat, "payments") == NULL);
  env_free(&e);
}

TEST(index_is_sorted_and_drop_removes) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE b (x INT)" DATAGEN "; CREATE TABLE A (x INT)" DATAGEN
                   "; CREATE TABLE c (x INT)" DATAGEN),
           DIPPER_OK);
  CHECK_EQ(dp_catalog_table_count(e.cat), 3);
  CHECK_STR(dp_catalog_table_at(e.cat, 0)->name, "A");
  CHECK_STR(dp_catalog_table_at(e.cat, 1)->name, "b");
  CHECK_STR(dp_catalog_table_at(e.cat, 2)->name, "c");
  CHECK(dp_catalog_table_at(e.cat, 3) == NULL);
  CHECK_EQ(dp_catalog_drop(e.cat, 'T', "B"), DIPPER_OK);
  CHECK_EQ(dp_catalog_table_count(e.cat), 2);
  CHECK_STR(dp_catalog_table_at(e.cat, 1)->name, "c");
  CHECK_EQ(dp_catalog_drop(e.cat, 'T', "b"), DIPPER_NAME);
  CHECK_EQ(dp_catalog_drop(e.cat, 'V', "c"), DIPPER_NAME);
  env_free(&e);
}

/* ---- CREATE TABLE ---- */

TEST(table_name_taken) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE t (a INT)" DATAGEN), DIPPER_OK);
  int rc = run(&e, "CREATE TABLE T (a INT, b INT)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "a table named `T` already exists", "T (");
  CHECK_CONTAINS(msg(&e), "IF NOT EXISTS");
  CHECK_EQ(run(&e, "CREATE TABLE IF NOT EXISTS t (a INT, b INT)" DATAGEN), DIPPER_OK);
  CHECK_EQ(dp_catalog_table(e.cat, "t")->schema.ncols, 1); /* the first one stays */
  CHECK_EQ(run(&e, "CREATE TEMPORARY TABLE tmp (a INT)" DATAGEN), DIPPER_OK);
  CHECK(dp_catalog_table(e.cat, "tmp")->temporary);
  env_free(&e);
}

TEST(duplicate_column) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (a INT, b INT, A STRING)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "column `A` is declared twice (first at line 1, column 17)",
               "A STRING");
  CHECK(dp_catalog_table(e.cat, "t") == NULL);
  env_free(&e);
}

TEST(missing_connector) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE nowhere (a INT)");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "table `nowhere` has no 'connector' option", "nowhere");
  CHECK_CONTAINS(msg(&e), "kafka");
  CHECK(dp_catalog_table(e.cat, "nowhere") == NULL);
  env_free(&e);
}

TEST(computed_columns_and_proctime) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (a INT, b AS a + 1, p AS PROCTIME(), m STRING METADATA FROM "
                   "'topic' VIRTUAL, c AS UPPER(m))"
                   " WITH ('connector' = 'kafka', 'topic' = 'x', 'properties.bootstrap.servers' = "
                   "'h:9092', 'format' = 'json')");
  CHECK_EQ(rc, DIPPER_OK);
  if (rc != DIPPER_OK) fprintf(stderr, "  %s\n", msg(&e));
  const dp_table_def *t = dp_catalog_table(e.cat, "t");
  CHECK(t != NULL);
  if (t) {
    CHECK_EQ(t->cols[1].kind, DP_CK_COMPUTED);
    CHECK(t->cols[1].expr != NULL);
    CHECK(dp_type_is_integer(t->schema.cols[1].type));
    CHECK(!t->cols[1].proctime);
    CHECK(t->cols[2].proctime);
    CHECK_EQ(t->schema.cols[2].type->kind, DP_T_TIMESTAMP_LTZ);
    CHECK_EQ(t->cols[3].kind, DP_CK_METADATA);
    CHECK_STR(t->cols[3].metadata_key, "topic");
    CHECK(t->cols[3].is_virtual);
    CHECK(dp_type_is_string(t->schema.cols[4].type));
    /* The bound expression reads input column 0 (a). */
    CHECK(t->cols[1].expr->kind == DP_E_CALL);
    if (t->cols[1].expr->kind == DP_E_CALL) {
      CHECK_EQ(t->cols[1].expr->u.call.args[0]->kind, DP_E_COLUMN);
      CHECK_EQ(t->cols[1].expr->u.call.args[0]->u.column.index, 0);
    }
  }
  env_free(&e);
}

TEST(computed_column_sees_later_physical_columns) {
  /* Flink binds computed columns over every physical and metadata column,
     wherever declared. */
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE t (b AS a * 2, a INT)" DATAGEN), DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(e.cat, "t");
  CHECK(t != NULL);
  if (t && t->cols[0].expr && t->cols[0].expr->kind == DP_E_CALL) {
    CHECK_EQ(t->cols[0].expr->u.call.args[0]->kind, DP_E_COLUMN);
    CHECK_EQ(t->cols[0].expr->u.call.args[0]->u.column.index, 1);
  }
  env_free(&e);
}

TEST(computed_column_may_not_use_computed_column) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (a INT, b AS a + 1, c AS b * 2)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_UNSUPPORTED,
               "computed column `c` refers to computed column `b`; a computed column may use only "
               "physical and metadata columns",
               "b * 2");
  CHECK(dp_catalog_table(e.cat, "t") == NULL);
  env_free(&e);
}

TEST(computed_column_binding_error_is_reported) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (a INT, b AS nope + 1)" DATAGEN);
  CHECK(rc != DIPPER_OK);
  CHECK(e.d.count >= 1);
  unsigned l, c;
  where(e.sql, "nope", &l, &c);
  if (e.d.count >= 1) {
    CHECK_EQ(e.d.items[0].span.line, l);
    CHECK_EQ(e.d.items[0].span.col, c);
  }
  CHECK(dp_catalog_table(e.cat, "t") == NULL);
  env_free(&e);
}

TEST(watermark_delay_forms) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE w1 (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' "
                   "SECOND)" DATAGEN),
           DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(e.cat, "w1");
  CHECK(t != NULL);
  if (t) {
    CHECK_EQ(t->watermark_col, 1);
    CHECK_EQ(t->watermark_delay, 5 * DP_MICROS_PER_SECOND);
    CHECK(t->watermark_expr != NULL);
    CHECK(t->watermark_span.line == 1);
  }
  CHECK_EQ(run(&e, "CREATE TABLE w2 (ts TIMESTAMP_LTZ(3), WATERMARK FOR ts AS ts)" DATAGEN),
           DIPPER_OK);
  t = dp_catalog_table(e.cat, "w2");
  CHECK(t && t->watermark_delay == 0);
  CHECK_EQ(run(&e, "CREATE TABLE w3 (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE "
                   "- INTERVAL '1' SECOND)" DATAGEN),
           DIPPER_OK);
  t = dp_catalog_table(e.cat, "w3");
  CHECK(t && t->watermark_delay == -1); /* not the simple form: no constant delay */
  CHECK_EQ(run(&e, "CREATE TABLE w4 (ts TIMESTAMP(3), WATERMARK FOR TS AS TS - INTERVAL '2' MINUTE)"
                   DATAGEN),
           DIPPER_OK);
  t = dp_catalog_table(e.cat, "w4");
  CHECK(t && t->watermark_delay == 2 * DP_MICROS_PER_MINUTE);
  env_free(&e);
}

TEST(watermark_needs_timestamp_column) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (x BIGINT, WATERMARK FOR x AS x)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_TYPE,
               "WATERMARK FOR requires a TIMESTAMP or TIMESTAMP_LTZ column; `x` is BIGINT. Convert "
               "it with a computed column: ts AS TO_TIMESTAMP_LTZ(x, 3), then WATERMARK FOR ts ...",
               "WATERMARK");
  CHECK(dp_catalog_table(e.cat, "t") == NULL);
  rc = run(&e, "CREATE TABLE t (id INT, ts TIMESTAMP(3), WATERMARK FOR tss AS tss)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "`tss` is not a column of table `t`; did you mean `ts`?",
               "tss");
  rc = run(&e, "CREATE TABLE t (id INT, p AS PROCTIME(), WATERMARK FOR p AS p)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_TYPE, "processing-time column", "WATERMARK");
  env_free(&e);
}

TEST(watermark_on_computed_column) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (x BIGINT, ts AS TO_TIMESTAMP_LTZ(x, 3), WATERMARK FOR ts AS ts "
                   "- INTERVAL '3' SECOND)" DATAGEN);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc != DIPPER_OK) fprintf(stderr, "  %s\n", msg(&e));
  const dp_table_def *t = dp_catalog_table(e.cat, "t");
  CHECK(t && t->watermark_col == 1 && t->watermark_delay == 3 * DP_MICROS_PER_SECOND);
  env_free(&e);
}

TEST(watermark_expression_type_and_sign) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (ts TIMESTAMP(3), l TIMESTAMP_LTZ(3), WATERMARK FOR ts AS l)"
               DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_TYPE, "the watermark expression must return the type of `ts`", "l)");
  rc = run(&e, "CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS ts + INTERVAL '5' SECOND)"
           DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_TYPE, "the watermark delay is negative", "INTERVAL");
  CHECK(dp_catalog_table(e.cat, "t") == NULL);
  env_free(&e);
}

TEST(primary_key_rules) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE k (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)" DATAGEN),
           DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(e.cat, "k");
  CHECK(t != NULL);
  if (t) {
    CHECK_EQ(t->npk, 1);
    CHECK_EQ(t->pk[0], 0);
    CHECK(t->schema.cols[0].type->not_null);
    CHECK(!t->schema.cols[1].type->not_null);
  }
  CHECK_EQ(run(&e, "CREATE TABLE k1 (v INT, id BIGINT PRIMARY KEY NOT ENFORCED)" DATAGEN),
           DIPPER_OK);
  t = dp_catalog_table(e.cat, "k1");
  CHECK(t && t->npk == 1 && t->pk[0] == 1 && t->schema.cols[1].type->not_null);
  int rc = run(&e, "CREATE TABLE k2 (id BIGINT PRIMARY KEY, v INT)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_UNSUPPORTED, "write PRIMARY KEY (..) NOT ENFORCED", "PRIMARY");
  rc = run(&e, "CREATE TABLE k2 (id BIGINT, PRIMARY KEY (id))" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_UNSUPPORTED,
               "dipper does not enforce primary keys; write PRIMARY KEY (..) NOT ENFORCED",
               "PRIMARY");
  rc = run(&e, "CREATE TABLE k2 (id BIGINT, PRIMARY KEY (idd) NOT ENFORCED)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "`idd` is not a column of table `k2`; did you mean `id`?",
               "idd");
  rc = run(&e, "CREATE TABLE k2 (id BIGINT, PRIMARY KEY (id, ID) NOT ENFORCED)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "column `ID` appears twice in the PRIMARY KEY", "ID)");
  rc = run(&e, "CREATE TABLE k2 (id BIGINT, c AS id + 1, PRIMARY KEY (c) NOT ENFORCED)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_UNSUPPORTED, "is a computed column", "c) NOT");
  CHECK(dp_catalog_table(e.cat, "k2") == NULL);
  env_free(&e);
}

TEST(partitioned_by) {
  env e;
  env_init(&e);
  const char *fs = " WITH ('connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'json')";
  char sql[512];
  snprintf(sql, sizeof sql, "CREATE TABLE p (a INT, dt STRING) PARTITIONED BY (dt)%s", fs);
  CHECK_EQ(run(&e, sql), DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(e.cat, "p");
  CHECK(t && t->npartition == 1 && t->partition[0] == 1);
  snprintf(sql, sizeof sql, "CREATE TABLE q (a INT, dt STRING) PARTITIONED BY (day)%s", fs);
  int rc = run(&e, sql);
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "the PARTITIONED BY column `day` is not a column of table `q`",
               "day)");
  snprintf(sql, sizeof sql, "CREATE TABLE q (a INT, dt STRING) PARTITIONED BY (dt, DT)%s", fs);
  rc = run(&e, sql);
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "column `DT` appears twice in PARTITIONED BY", "DT)");
  env_free(&e);
}

TEST(like_copies_columns_and_options) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE base (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL "
                   "'5' SECOND) WITH ('connector' = 'kafka', 'topic' = 'a', "
                   "'properties.bootstrap.servers' = 'h:9092', 'format' = 'json')"),
           DIPPER_OK);
  int rc = run(&e, "CREATE TABLE copy (note STRING) WITH ('topic' = 'b') LIKE base");
  CHECK_EQ(rc, DIPPER_OK);
  if (rc != DIPPER_OK) fprintf(stderr, "  %s\n", msg(&e));
  const dp_table_def *t = dp_catalog_table(e.cat, "copy");
  CHECK(t != NULL);
  if (t) {
    CHECK_EQ(t->schema.ncols, 3);
    CHECK_STR(t->schema.cols[0].name, "id");
    CHECK_STR(t->schema.cols[2].name, "note");
    CHECK_EQ(t->watermark_col, 1);
    CHECK_EQ(t->watermark_delay, 5 * DP_MICROS_PER_SECOND);
    CHECK_STR(t->connector, "kafka");
    CHECK_STR(t->format, "json");
    int ntopic = 0;
    for (int i = 0; i < t->noptions; i++)
      if (strcmp(t->options[i].key, "topic") == 0) {
        ntopic++;
        CHECK_STR(t->options[i].value, "b");
      }
    CHECK_EQ(ntopic, 1);
  }
  rc = run(&e, "CREATE TABLE c2 (id INT) WITH ('topic' = 'b') LIKE base");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "column `id` is already declared by LIKE `base`", "id INT");
  rc = run(&e, "CREATE TABLE c4 (t2 TIMESTAMP(3), WATERMARK FOR t2 AS t2) WITH ('topic' = 'b') "
               "LIKE base");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "already brings a watermark through LIKE `base`",
               "WATERMARK");
  rc = run(&e, "CREATE TABLE c3 (x INT) LIKE bsae");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "LIKE names table `bsae`, which does not exist; did you mean "
                                    "`base`?", "bsae");
  env_free(&e);
}

TEST(duplicate_option_key) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5', "
                   "'number-of-rows' = '6')");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "option 'number-of-rows' is set twice", "'number-of-rows' = '6'");
  env_free(&e);
}

/* ---- views ---- */

TEST(view_outlives_its_parse_and_keeps_spans) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE t (id INT, name STRING)" DATAGEN), DIPPER_OK);
  /* Parse the view in an arena of its own and free it: the catalog's copy
     must not point into it (ASan would say so). */
  const char *sql = "-- a view\nCREATE VIEW v (i, n) AS\n  SELECT id, name FROM t";
  dp_arena *pa = dp_arena_new(0);
  dp_diags pd;
  dp_diags_init(&pd, pa, "v.sql", sql, strlen(sql));
  dp_ast_script *script = NULL;
  CHECK_EQ(dp_parse(pa, &pd, sql, strlen(sql), &script), DIPPER_OK);
  if (script && script->n == 1) {
    const dp_ast_create_view *cv = &script->stmts[0]->u.create_view;
    char *copy = strndup(sql + cv->query_span.off, cv->query_span.len);
    CHECK_EQ(dp_catalog_create_view(e.cat, &pd, cv, copy), DIPPER_OK);
    memset(copy, 'x', strlen(copy));
    free(copy);
  }
  dp_arena_free(pa);
  const dp_view_def *v = dp_catalog_view(e.cat, "V");
  CHECK(v != NULL);
  if (v) {
    CHECK_STR(v->name, "v");
    CHECK_EQ(v->ncols, 2);
    CHECK_STR(v->cols[1], "n");
    CHECK_STR(v->text, "SELECT id, name FROM t");
    CHECK(v->query != NULL && v->query->select != NULL);
    if (v->query && v->query->select) {
      const dp_ast_select *s = v->query->select;
      CHECK_EQ(s->nitems, 2);
      CHECK_EQ(s->items[1].expr->kind, DP_AX_COLUMN);
      CHECK_STR(s->items[1].expr->u.name.parts[0].name, "name");
      /* `name` sits on line 3, column 14 of the script that made the view. */
      CHECK_EQ(s->items[1].expr->span.line, 3);
      CHECK_EQ(s->items[1].expr->span.col, 14);
      CHECK_EQ(s->items[1].expr->span.off, (uint32_t)(strstr(sql, "name FROM") - sql));
    }
  }
  CHECK_EQ(dp_catalog_view_count(e.cat), 1);
  CHECK(dp_catalog_view_at(e.cat, 0) == v);

  /* NULL text: the query is taken from the diagnostics' script. */
  const char *sql2 = "CREATE VIEW w AS SELECT id FROM t";
  dp_arena *pa2 = dp_arena_new(0);
  dp_diags_init(&pd, pa2, "w.sql", sql2, strlen(sql2));
  script = NULL;
  CHECK_EQ(dp_parse(pa2, &pd, sql2, strlen(sql2), &script), DIPPER_OK);
  if (script && script->n == 1) {
    CHECK_EQ(dp_catalog_create_view(e.cat, &pd, &script->stmts[0]->u.create_view, NULL), DIPPER_OK);
    /* Without the script, spans count from the query's own text. */
    dp_diags_init(&pd, pa2, NULL, NULL, 0);
    dp_ast_create_view cv = script->stmts[0]->u.create_view;
    cv.name.parts[0].name = "x";
    CHECK_EQ(dp_catalog_create_view(e.cat, &pd, &cv, "SELECT id FROM t"), DIPPER_OK);
  }
  dp_arena_free(pa2);
  const dp_view_def *w = dp_catalog_view(e.cat, "w");
  CHECK(w && w->query && strcmp(w->text, "SELECT id FROM t") == 0);
  if (w && w->query && w->query->select) CHECK_EQ(w->query->select->items[0].expr->span.col, 25);
  const dp_view_def *x = dp_catalog_view(e.cat, "x");
  CHECK(x && x->query && strcmp(x->text, "SELECT id FROM t") == 0);
  if (x && x->query && x->query->select) {
    CHECK_EQ(x->query->select->items[0].expr->span.line, 1);
    CHECK_EQ(x->query->select->items[0].expr->span.col, 8);
  }
  env_free(&e);
}

TEST(view_names) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE t (id INT)" DATAGEN "; CREATE VIEW v AS SELECT id FROM t"),
           DIPPER_OK);
  int rc = run(&e, "CREATE VIEW t AS SELECT 1");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "a table named `t` already exists", "t AS");
  rc = run(&e, "CREATE VIEW v AS SELECT id + 1 AS x FROM t");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "view `v` already exists; write CREATE OR REPLACE VIEW",
               "v AS");
  CHECK_EQ(run(&e, "CREATE VIEW IF NOT EXISTS t AS SELECT 2 AS two"), DIPPER_OK);
  CHECK(dp_catalog_view(e.cat, "t") == NULL); /* the table keeps the name */
  CHECK_EQ(run(&e, "CREATE VIEW IF NOT EXISTS v AS SELECT 2 AS two"), DIPPER_OK);
  CHECK_STR(dp_catalog_view(e.cat, "v")->text, "SELECT id FROM t");
  CHECK_EQ(run(&e, "CREATE OR REPLACE VIEW v AS SELECT 2 AS two"), DIPPER_OK);
  CHECK_STR(dp_catalog_view(e.cat, "v")->text, "SELECT 2 AS two");
  CHECK_EQ(dp_catalog_view_count(e.cat), 1);
  rc = run(&e, "CREATE VIEW w (a, A) AS SELECT id, id FROM t");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "view column `A` is named twice", "A)");
  rc = run(&e, "CREATE TABLE v (a INT)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "a view named `v` already exists", "v (");
  CHECK_EQ(run(&e, "CREATE TEMPORARY VIEW tv AS SELECT 1 AS one"), DIPPER_OK);
  CHECK(dp_catalog_view(e.cat, "tv")->temporary);
  env_free(&e);
}

/* ---- DROP ---- */

TEST(drop_rules) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE orders (id INT)" DATAGEN
                   "; CREATE VIEW big AS SELECT id FROM orders"),
           DIPPER_OK);
  int rc = run(&e, "DROP TABLE ordrs");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "table `ordrs` does not exist; did you mean `orders`?", "ordrs");
  CHECK_EQ(run(&e, "DROP TABLE IF EXISTS ordrs"), DIPPER_OK);
  rc = run(&e, "DROP VIEW orders");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "`orders` is a table, not a view; write DROP TABLE orders",
               "orders");
  rc = run(&e, "DROP TABLE big");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "`big` is a view, not a table; write DROP VIEW big", "big");
  rc = run(&e, "DROP TEMPORARY TABLE orders");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "table `orders` is not temporary", "orders");
  /* A table a view reads may go (Flink allows it); the view stays. */
  CHECK_EQ(run(&e, "DROP TABLE orders"), DIPPER_OK);
  CHECK(dp_catalog_table(e.cat, "orders") == NULL);
  CHECK(dp_catalog_view(e.cat, "big") != NULL);
  CHECK_EQ(run(&e, "DROP VIEW big"), DIPPER_OK);
  CHECK_EQ(dp_catalog_view_count(e.cat), 0);
  env_free(&e);
}

/* ---- session options ---- */

TEST(runtime_mode) {
  env e;
  env_init(&e);
  CHECK(dp_catalog_streaming(e.cat));
  CHECK(dp_catalog_option(e.cat, "execution.runtime-mode") == NULL);
  CHECK_EQ(run(&e, "SET 'execution.runtime-mode' = 'BATCH'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "execution.runtime-mode"), "batch");
  CHECK(!dp_catalog_streaming(e.cat));
  int rc = run(&e, "SET 'execution.runtime-mode' = 'bach'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "write 'streaming' or 'batch'", "'bach'");
  CHECK(!dp_catalog_streaming(e.cat)); /* a refused SET changes nothing */
  CHECK_EQ(run(&e, "RESET 'execution.runtime-mode'"), DIPPER_OK);
  CHECK(dp_catalog_streaming(e.cat));
  CHECK_EQ(run(&e, "SET 'execution.runtime-mode' = 'batch'; SET 'pipeline.name' = 'p1'; RESET"),
           DIPPER_OK);
  CHECK(dp_catalog_streaming(e.cat));
  CHECK(dp_catalog_option(e.cat, "pipeline.name") == NULL);
  env_free(&e);
}

TEST(option_values_checked) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "SET 'execution.checkpointing.dir' = '/var/ckpt'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "execution.checkpointing.dir"), "/var/ckpt");
  int rc = run(&e, "SET 'execution.checkpointing.dir' = ''");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "must not be empty", "''");
  CHECK_EQ(run(&e, "SET 'execution.checkpointing.interval' = '10 s'"), DIPPER_OK);
  rc = run(&e, "SET 'execution.checkpointing.interval' = 'often'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'often' is not a duration", "'often'");
  rc = run(&e, "SET 'execution.checkpointing.interval' = '0 s'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "greater than zero", "'0 s'");
  CHECK_EQ(run(&e, "SET 'dipper.output-mode' = 'Update'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "dipper.output-mode"), "update");
  rc = run(&e, "SET 'dipper.output-mode' = 'upsert'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "write 'append', 'update' or 'complete'", "'upsert'");
  CHECK_EQ(run(&e, "SET 'table.exec.source.idle-timeout' = '30 s'"), DIPPER_OK);
  rc = run(&e, "SET 'table.exec.source.idle-timeout' = 'soon'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "not a duration", "'soon'");
  CHECK_EQ(run(&e, "SET 'parallelism.default' = '4'"), DIPPER_OK);
  rc = run(&e, "SET 'parallelism.default' = '0'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "a whole number >= 1, at most 1000000", "'0'");
  rc = run(&e, "SET 'parallelism.default' = '1000001'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "at most 1000000", "'1000001'");
  /* a cache of bytes goes past the default cap (its own default is 32 MB) */
  CHECK_EQ(run(&e, "SET 'dipper.rocksdb.aggregate-cache-bytes' = '268435456'"), DIPPER_OK);
  rc = run(&e, "SET 'dipper.rocksdb.aggregate-cache-bytes' = '99999999999999999999'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "at most 1099511627776", "'99999999999999999999'");
  CHECK_EQ(run(&e, "SET 'table.local-time-zone' = 'Europe/Berlin'"), DIPPER_OK);
  CHECK_EQ(run(&e, "SET 'pipeline.name' = 'payments'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "pipeline.name"), "payments");
  env_free(&e);
}

TEST(engine_addresses) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "SET 'dipper.engine' = 'Embedded'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "dipper.engine"), "embedded");
  CHECK_EQ(run(&e, "SET 'dipper.engine' = 'sc://localhost:15002'"), DIPPER_OK);
  CHECK_EQ(run(&e, "SET 'dipper.engine' = 'sc://spark.example.com:443/;token=abc;use_ssl=true'"),
           DIPPER_OK);
  CHECK_EQ(run(&e, "SET 'dipper.engine' = 'sc://[::1]:15002'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "dipper.engine"), "sc://[::1]:15002");
  int rc = run(&e, "SET 'dipper.engine' = 'http://localhost:15002'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "is not an engine: character 1: a Spark Connect address starts with sc://", "'http");
  rc = run(&e, "SET 'dipper.engine' = 'sc://:15002'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "the host is missing", "'sc:");
  rc = run(&e, "SET 'dipper.engine' = 'sc://h:99999'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "the port must be a number from 1 to 65535", "'sc:");
  rc = run(&e, "SET 'dipper.engine' = 'sc://h:15002/;use_ssl=maybe'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "use_ssl must be true or false", "'sc:");
  rc = run(&e, "SET 'dipper.engine' = 'sc://h:15002;token=x'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "parameters follow a '/'", "'sc:");
  rc = run(&e, "SET 'dipper.engine' = 'sc://h:15002/;token'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "character 15: a parameter must be written key=value", "'sc:");
  env_free(&e);
}

TEST(triggers) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "SET 'dipper.trigger' = 'processing-time 10 seconds'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "dipper.trigger"), "processing-time 10 s");
  CHECK_EQ(run(&e, "SET 'dipper.trigger' = 'Processing-Time 90s'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "dipper.trigger"), "processing-time 1 min 30 s");
  CHECK_EQ(run(&e, "SET 'dipper.trigger' = 'available-now'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "dipper.trigger"), "available-now");
  CHECK_EQ(run(&e, "SET 'dipper.trigger' = 'once'"), DIPPER_OK);
  CHECK_EQ(run(&e, "SET 'dipper.trigger' = 'real-time 5 s'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "dipper.trigger"), "real-time 5 s");
  int rc = run(&e, "SET 'dipper.trigger' = 'processing-time'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "needs an interval", "'processing-time'");
  rc = run(&e, "SET 'dipper.trigger' = 'processing-time soon'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "not a duration", "'processing-time soon'");
  rc = run(&e, "SET 'dipper.trigger' = 'sometimes'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'processing-time 10 s', 'available-now', 'once'",
               "'sometimes'");
  CHECK_STR(dp_catalog_option(e.cat, "dipper.trigger"), "real-time 5 s");
  env_free(&e);
}

TEST(unknown_keys_and_namespaces) {
  env e;
  env_init(&e);
  int rc = run(&e, "SET 'execution.runtime-mod' = 'batch'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "unknown option 'execution.runtime-mod'; did you mean 'execution.runtime-mode'?",
               "'execution");
  rc = run(&e, "SET 'foo.bar' = 'x'");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "keeps table.*, sql-client.* and spark.* keys", "'foo");
  CHECK_EQ(run(&e, "SET 'spark.sql.shuffle.partitions' = '8'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "spark.sql.shuffle.partitions"), "8");
  CHECK_EQ(run(&e, "SET 'table.exec.mini-batch.enabled' = 'true'"), DIPPER_OK);
  CHECK_EQ(run(&e, "SET 'sql-client.execution.result-mode' = 'tableau'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "sql-client.execution.result-mode"), "tableau");
  CHECK_EQ(run(&e, "SET 'spark.sql.shuffle.partitions' = '16'"), DIPPER_OK);
  CHECK_STR(dp_catalog_option(e.cat, "spark.sql.shuffle.partitions"), "16");
  CHECK_EQ(run(&e, "SET"), DIPPER_OK);
  env_free(&e);
}

TEST(durations) {
  static const struct { const char *text; int64_t us; } ok[] = {
      {"10 s", 10 * DP_MICROS_PER_SECOND},
      {"10 seconds", 10 * DP_MICROS_PER_SECOND},
      {"10s", 10 * DP_MICROS_PER_SECOND},
      {"1 min", DP_MICROS_PER_MINUTE},
      {"2 minutes", 2 * DP_MICROS_PER_MINUTE},
      {"500 ms", 500000},
      {"1h", DP_MICROS_PER_HOUR},
      {"1 d", DP_MICROS_PER_DAY},
      {"1 min 30 s", 90 * DP_MICROS_PER_SECOND},
      {"1.5 s", 1500000},
      {"250 us", 250},
      {"1500 ns", 1},
      {"250", 250000}, /* a bare number is milliseconds */
      {" 0 s ", 0},
      {"3 HOURS", 3 * DP_MICROS_PER_HOUR},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    int64_t us = -7;
    int rc = dp_parse_duration(ok[i].text, &us);
    if (rc != DIPPER_OK || us != ok[i].us)
      fprintf(stderr, "  duration '%s' gave rc %d, %lld us\n", ok[i].text, rc, (long long)us);
    CHECK_EQ(rc, DIPPER_OK);
    CHECK_EQ(us, ok[i].us);
  }
  static const char *const bad[] = {"", "s", "10 parsecs", "-5 s", "1 min 30", "1.s", "ten s",
                                    "99999999999999999999 s", "1000000000 d"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t us = -7;
    CHECK_EQ(dp_parse_duration(bad[i], &us), DIPPER_OPTION);
    CHECK_EQ(us, -7);
  }
}

int main(void) { return RUN_TESTS(); }
