/*
** catalog_ns_test.c — catalogs and databases (plan/catalog_ns.c), ALTER TABLE,
** CREATE TABLE .. LIKE with Flink's like options (plan/catalog_like.c), and
** Flink's legacy option keys (plan/connectors.c), driven through SQL.
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

static const dp_table_def *table_at(env *e, const char *cat, const char *db, const char *name) {
  dp_qname q = {cat, db, name};
  return dp_catalog_table_in(e->cat, &q);
}

static const char *option(const dp_table_def *t, const char *key) {
  for (int i = 0; t && i < t->noptions; i++)
    if (!strcmp(t->options[i].key, key)) return t->options[i].value;
  return NULL;
}

TEST(default_namespaces) {
  env e;
  env_init(&e);
  CHECK_STR(dp_catalog_current_catalog(e.cat), "default_catalog");
  CHECK_STR(dp_catalog_current_database(e.cat), "default_database");
  CHECK_EQ(run(&e, "CREATE TABLE t (a INT)" DATAGEN), DIPPER_OK);
  CHECK(table_at(&e, "default_catalog", "default_database", "t") != NULL);
  CHECK(table_at(&e, "DEFAULT_CATALOG", "Default_Database", "T") != NULL);
  env_free(&e);
}

TEST(databases_hold_their_own_tables) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE t (a INT)" DATAGEN "; CREATE DATABASE db2;"
                   "CREATE TABLE db2.t (b STRING, c INT)" DATAGEN),
           DIPPER_OK);
  const dp_table_def *t1 = table_at(&e, "default_catalog", "default_database", "t");
  const dp_table_def *t2 = table_at(&e, "default_catalog", "db2", "t");
  CHECK(t1 && t2 && t1 != t2);
  if (t2) CHECK_EQ(t2->schema.ncols, 2);
  /* a bare name is the current database's */
  CHECK(dp_catalog_table(e.cat, "t") == t1);
  CHECK_EQ(run(&e, "USE db2"), DIPPER_OK);
  CHECK(dp_catalog_table(e.cat, "t") == t2);
  CHECK_STR(dp_catalog_current_database(e.cat), "db2");
  /* the current database cannot be dropped; a non-empty one only with CASCADE */
  int rc = run(&e, "DROP DATABASE db2");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "is the current database", "db2");
  CHECK_EQ(run(&e, "USE default_catalog.default_database"), DIPPER_OK);
  rc = run(&e, "DROP DATABASE db2");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "is not empty (1 table", "db2");
  CHECK_CONTAINS(msg(&e), "CASCADE");
  CHECK_EQ(run(&e, "DROP DATABASE db2 CASCADE"), DIPPER_OK);
  CHECK(table_at(&e, "default_catalog", "db2", "t") == NULL);
  CHECK(!dp_catalog_has_database(e.cat, "default_catalog", "db2"));
  CHECK(dp_catalog_table(e.cat, "t") == t1);
  env_free(&e);
}

TEST(unknown_namespaces_are_named) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE nodb.t (a INT)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "database `nodb` does not exist in catalog `default_catalog`",
               "nodb");
  rc = run(&e, "CREATE TABLE nocat.default_database.t (a INT)" DATAGEN);
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "catalog `nocat` does not exist", "nocat");
  rc = run(&e, "USE nodb");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "database `nodb` does not exist", "nodb");
  rc = run(&e, "CREATE DATABASE default_database");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "already exists", "default_database");
  CHECK_EQ(run(&e, "CREATE DATABASE IF NOT EXISTS default_database"), DIPPER_OK);
  CHECK_EQ(run(&e, "DROP DATABASE IF EXISTS nodb"), DIPPER_OK);
  env_free(&e);
}

TEST(catalogs) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE CATALOG hive WITH ('type' = 'hive')");
  EXPECT_ERROR(&e, rc, DIPPER_UNSUPPORTED, "catalog type 'hive' is not supported", "WITH");
  CHECK_EQ(run(&e, "CREATE CATALOG mem WITH ('type' = 'generic_in_memory');"
                   "CREATE TABLE mem.`default`.t (a INT)" DATAGEN),
           DIPPER_OK);
  CHECK(table_at(&e, "mem", "default", "t") != NULL);
  CHECK_EQ(run(&e, "USE CATALOG mem"), DIPPER_OK);
  CHECK_STR(dp_catalog_current_catalog(e.cat), "mem");
  CHECK_STR(dp_catalog_current_database(e.cat), "default");
  CHECK(dp_catalog_table(e.cat, "t") != NULL);
  rc = run(&e, "DROP CATALOG mem");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "is the current catalog", "mem");
  CHECK_EQ(run(&e, "USE CATALOG default_catalog; DROP CATALOG mem"), DIPPER_OK);
  CHECK(!dp_catalog_has_catalog(e.cat, "mem"));
  CHECK(table_at(&e, "mem", "default", "t") == NULL);
  CHECK_STR(dp_catalog_catalog_at(e.cat, 0), "default_catalog");
  CHECK(dp_catalog_catalog_at(e.cat, 1) == NULL);
  /* USE CATALOG goes to the database the catalog was made with */
  CHECK_EQ(run(&e, "CREATE CATALOG m2 WITH ('type' = 'generic_in_memory', 'default-database' = "
                   "'zz'); CREATE DATABASE m2.aa; USE CATALOG m2"),
           DIPPER_OK);
  CHECK_STR(dp_catalog_current_database(e.cat), "zz");
  CHECK_STR(dp_catalog_database_at(e.cat, "m2", 0), "aa");
  env_free(&e);
}

TEST(alter_table_options_and_name) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE f (a INT) WITH ('connector' = 'filesystem', 'path' = '/tmp/x', "
                   "'format' = 'json')"),
           DIPPER_OK);
  const dp_table_def *before = dp_catalog_table(e.cat, "f");
  CHECK(before && before->bounded);
  CHECK_EQ(run(&e, "ALTER TABLE f SET ('source.monitor-interval' = '1 s', 'format' = 'csv')"),
           DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(e.cat, "f");
  CHECK(t && t != before);
  CHECK_STR(option(t, "format"), "csv");
  CHECK_STR(t->format, "csv");
  CHECK(t && !t->bounded); /* watched now, in streaming mode */
  CHECK_STR(option(before, "format"), "json"); /* what compiled plans hold stays */
  CHECK_EQ(run(&e, "ALTER TABLE f RESET ('source.monitor-interval')"), DIPPER_OK);
  t = dp_catalog_table(e.cat, "f");
  CHECK(t && t->bounded && option(t, "source.monitor-interval") == NULL);
  int rc = run(&e, "ALTER TABLE f RESET ('nope')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "has no option 'nope'", "'nope'");
  rc = run(&e, "ALTER TABLE f SET ('source.monitor-interval' = 'often')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "source.monitor-interval", "'often'");
  CHECK_EQ(run(&e, "ALTER TABLE f RENAME TO g"), DIPPER_OK);
  CHECK(dp_catalog_table(e.cat, "f") == NULL);
  CHECK(dp_catalog_table(e.cat, "g") != NULL);
  rc = run(&e, "ALTER TABLE missing SET ('a' = 'b')");
  EXPECT_ERROR(&e, rc, DIPPER_NAME, "table `missing` does not exist", "missing");
  CHECK_EQ(run(&e, "ALTER TABLE IF EXISTS missing SET ('a' = 'b')"), DIPPER_OK);
  CHECK_EQ(run(&e, "CREATE DATABASE d2"), DIPPER_OK);
  rc = run(&e, "ALTER TABLE g RENAME TO d2.g");
  EXPECT_ERROR(&e, rc, DIPPER_UNSUPPORTED, "keeps a table in its database", "d2.g");
  env_free(&e);
}

#define SRC                                                                             \
  "CREATE TABLE src (id INT, ts TIMESTAMP(3), off BIGINT METADATA FROM 'offset' VIRTUAL, " \
  "d AS id * 2, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (id) NOT "      \
  "ENFORCED) WITH ('connector' = 'kafka', 'topic' = 'a', 'properties.bootstrap.servers' = " \
  "'localhost:9092', 'format' = 'json');"

TEST(like_default_is_including_all_overwriting_options) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, SRC "CREATE TABLE t LIKE src; "
                       "CREATE TABLE u WITH ('topic' = 'b') LIKE src"),
           DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(e.cat, "t"), *u = dp_catalog_table(e.cat, "u");
  CHECK(t && u);
  if (!t || !u) return;
  CHECK_EQ(t->schema.ncols, 4);
  CHECK_EQ(t->watermark_col, 1);
  CHECK_EQ(t->npk, 1);
  CHECK_STR(option(u, "topic"), "b");
  env_free(&e);
}

TEST(like_excluding_and_overwriting) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, SRC "CREATE TABLE t (x INT) WITH ('connector' = 'blackhole') LIKE src "
                       "(EXCLUDING ALL)"),
           DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(e.cat, "t");
  CHECK(t != NULL);
  if (!t) return;
  CHECK_EQ(t->schema.ncols, 3); /* id, ts (physical), then x */
  CHECK_STR(t->schema.cols[2].name, "x");
  CHECK_EQ(t->watermark_col, -1);
  CHECK_EQ(t->npk, 0);
  CHECK(option(t, "topic") == NULL);
  CHECK_STR(t->connector, "blackhole");
  /* the computed column stays and is renumbered when metadata goes */
  CHECK_EQ(run(&e, "CREATE TABLE g LIKE src (EXCLUDING METADATA)"), DIPPER_OK);
  const dp_table_def *g = dp_catalog_table(e.cat, "g");
  CHECK(g && g->schema.ncols == 3 && g->cols[2].kind == DP_CK_COMPUTED);
  /* OVERWRITING WATERMARKS: the new one wins; INCLUDING: a second one is an error */
  CHECK_EQ(run(&e, "CREATE TABLE w (WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE) LIKE src "
                   "(OVERWRITING WATERMARKS)"),
           DIPPER_OK);
  const dp_table_def *w = dp_catalog_table(e.cat, "w");
  CHECK(w && w->watermark_delay == 60 * DP_MICROS_PER_SECOND);
  int rc = run(&e, "CREATE TABLE w2 (WATERMARK FOR ts AS ts) LIKE src");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "OVERWRITING WATERMARKS", "WATERMARK FOR ts AS ts)");
  /* INCLUDING OPTIONS refuses a key set again */
  rc = run(&e, "CREATE TABLE o WITH ('topic' = 'b') LIKE src (INCLUDING OPTIONS)");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "INCLUDING OPTIONS refuses a second value", "'topic'");
  /* OVERWRITING GENERATED: a column of the same name replaces the computed one */
  CHECK_EQ(run(&e, "CREATE TABLE c (d AS id + 1) LIKE src (OVERWRITING GENERATED)"), DIPPER_OK);
  const dp_table_def *c = dp_catalog_table(e.cat, "c");
  CHECK(c && c->schema.ncols == 4 && !strcmp(c->schema.cols[3].name, "d"));
  rc = run(&e, "CREATE TABLE c2 (d AS id + 1) LIKE src");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "already declared by LIKE", "d AS id + 1");
  env_free(&e);
}

TEST(legacy_option_keys) {
  env e;
  env_init(&e);
  CHECK_EQ(run(&e, "CREATE TABLE side_input (key BIGINT, `value` STRING) WITH ("
                   "'connector.type' = 'filesystem', 'connector.path' = 'file:///tmp/side.txt', "
                   "'format.type' = 'csv', 'format.field-delimiter' = ';', "
                   "'connector.property-version' = '1')"),
           DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(e.cat, "side_input");
  CHECK(t != NULL);
  if (!t) return;
  CHECK_STR(t->connector, "filesystem");
  CHECK_STR(t->format, "csv");
  CHECK_STR(option(t, "path"), "file:///tmp/side.txt");
  CHECK_STR(option(t, "csv.field-delimiter"), ";");
  CHECK(option(t, "connector.type") == NULL && option(t, "connector.property-version") == NULL);
  CHECK(t->bounded);
  CHECK_EQ(run(&e, "CREATE TABLE k (a INT) WITH ('connector.type' = 'kafka', "
                   "'connector.version' = 'universal', 'connector.topic' = 'x', "
                   "'connector.properties.bootstrap.servers' = 'localhost:9092', "
                   "'connector.startup-mode' = 'earliest-offset', 'format.type' = 'json', "
                   "'update-mode' = 'append')"),
           DIPPER_OK);
  const dp_table_def *k = dp_catalog_table(e.cat, "k");
  CHECK(k && !strcmp(option(k, "scan.startup.mode"), "earliest-offset"));
  CHECK(k && !strcmp(option(k, "properties.bootstrap.servers"), "localhost:9092"));
  int rc = run(&e, "CREATE TABLE b (a INT) WITH ('connector.type' = 'filesystem', "
                   "'connector' = 'filesystem', 'path' = '/x')");
  EXPECT_ERROR(&e, rc, DIPPER_DUPLICATE, "legacy option 'connector.type' is 'connector'",
               "'connector.type'");
  rc = run(&e, "CREATE TABLE b (a INT) WITH ('connector.type' = 'kafka', 'update-mode' = "
               "'upsert')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "legacy option 'update-mode' = 'upsert' has no new form",
               "'update-mode'");
  rc = run(&e, "CREATE TABLE b (a INT) WITH ('connector.type' = 'filesystem', "
               "'connector.path' = '/x', 'connector.frobnicate' = '1')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "legacy option 'connector.frobnicate'",
               "'connector.frobnicate'");
  env_free(&e);
}

int main(void) { return RUN_TESTS(); }
