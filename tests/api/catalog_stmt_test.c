/*
** catalog_stmt_test.c — the catalog statements through the public API: SHOW
** DATABASES / CATALOGS / CURRENT / TABLES [FROM db] [NOT] LIKE, DESCRIBE of a
** table in another database, CREATE TABLE AS SELECT run by dipper_execute
** with its rows read back, QUALIFY, and ALTER TABLE RENAME seen by SHOW.
*/
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dipper.h"
#include "test.h"

/* Statement `stmt` of `sql`: its rows as "a|b\n" lines (first column only
** when `first`), or the error message. */
static char *rows_of(dipper *db, const char *sql, int stmt, bool first) {
  dipper_program *prog = NULL;
  if (dipper_compile(db, sql, (size_t)-1, "cat.sql", &prog) != DIPPER_OK)
    return strdup(dipper_errmsg(db));
  struct ArrowArrayStream st;
  size_t cap = 4096, len = 0;
  char *out = calloc(1, cap);
  if (dipper_execute(prog, stmt, &st) == DIPPER_OK) {
    struct ArrowSchema schema;
    if (st.get_schema(&st, &schema) == 0) {
      struct ArrowArray a;
      while (st.get_next(&st, &a) == 0 && a.release) {
        char **cells = NULL;
        if (dipper_format_values(&schema, &a, 0, &cells) == DIPPER_OK) {
          int64_t nc = schema.n_children;
          for (int64_t r = 0; r < a.length; r++) {
            for (int64_t c = 0; c < (first ? 1 : nc) && len + 256 < cap; c++)
              len += (size_t)snprintf(out + len, cap - len, "%s%s", c ? "|" : "", cells[r * nc + c]);
            if (len + 2 < cap) out[len++] = '\n';
          }
          dipper_free(cells);
        }
        a.release(&a);
      }
      schema.release(&schema);
    }
    st.release(&st);
  } else {
    snprintf(out, cap, "%s", dipper_errmsg(db));
  }
  dipper_program_free(prog);
  return out;
}

#define EXPECT_ROWS(db, sql, stmt, first, want)        \
  do {                                                 \
    char *got_ = rows_of((db), (sql), (stmt), (first)); \
    CHECK_STR(got_, (want));                           \
    free(got_);                                        \
  } while (0)

/* The same in a handle of its own (a session's catalog outlives a program). */
static char *fresh_rows(const char *sql, int stmt, bool first) {
  dipper *db = NULL;
  if (dipper_open(&db, NULL) != DIPPER_OK) return strdup("(no handle)");
  char *out = rows_of(db, sql, stmt, first);
  dipper_close(db);
  return out;
}

static const char ns[] =
    "CREATE DATABASE shop;\n"                                              /* 0 */
    "CREATE TABLE shop.orders (id INT, amount INT) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE shop.order_lines (id INT) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE audit (id INT) WITH ('connector' = 'datagen');\n"
    "CREATE CATALOG mem WITH ('type' = 'generic_in_memory');\n";         /* 4 */

#define EXPECT_FRESH(sql, stmt, first, want)        \
  do {                                              \
    char *got_ = fresh_rows((sql), (stmt), (first)); \
    CHECK_STR(got_, (want));                        \
    free(got_);                                     \
  } while (0)

TEST(show_namespaces_and_tables) {
  char sql[2048];
  snprintf(sql, sizeof sql, "%sSHOW CATALOGS;", ns);
  EXPECT_FRESH(sql, 5, true, "default_catalog\nmem\n");
  snprintf(sql, sizeof sql, "%sSHOW DATABASES;", ns);
  EXPECT_FRESH(sql, 5, true, "default_database\nshop\n");
  snprintf(sql, sizeof sql, "%sSHOW DATABASES FROM mem;", ns);
  EXPECT_FRESH(sql, 5, true, "default\n");
  snprintf(sql, sizeof sql, "%sSHOW TABLES;", ns);
  EXPECT_FRESH(sql, 5, true, "audit\n");
  snprintf(sql, sizeof sql, "%sSHOW TABLES FROM shop;", ns);
  EXPECT_FRESH(sql, 5, true, "order_lines\norders\n");
  snprintf(sql, sizeof sql, "%sSHOW TABLES IN default_catalog.shop LIKE 'order\\_%%';", ns);
  EXPECT_FRESH(sql, 5, true, "order_lines\n");
  snprintf(sql, sizeof sql, "%sSHOW TABLES FROM shop NOT LIKE '%%lines';", ns);
  EXPECT_FRESH(sql, 5, true, "orders\n");
  snprintf(sql, sizeof sql, "%sSHOW TABLES FROM shop ILIKE 'ORD%%S';", ns);
  EXPECT_FRESH(sql, 5, true, "order_lines\norders\n");
  snprintf(sql, sizeof sql, "%sUSE shop; SHOW CURRENT DATABASE;", ns);
  EXPECT_FRESH(sql, 6, true, "shop\n");
  snprintf(sql, sizeof sql, "%sUSE CATALOG mem; SHOW CURRENT CATALOG;", ns);
  EXPECT_FRESH(sql, 6, true, "mem\n");
  snprintf(sql, sizeof sql, "%sDESCRIBE shop.orders;", ns);
  EXPECT_FRESH(sql, 5, false, "id|INT|true|NULL|NULL|NULL\namount|INT|true|NULL|NULL|NULL\n");
  snprintf(sql, sizeof sql, "%sSHOW TABLES FROM nowhere;", ns);
  char *err = fresh_rows(sql, 5, true);
  CHECK(strstr(err, "database `nowhere` does not exist") != NULL);
  free(err);
  snprintf(sql, sizeof sql, "%sSHOW FUNCTIONS LIKE 'upp%%';", ns);
  EXPECT_FRESH(sql, 5, true, "upper\n");
  snprintf(sql, sizeof sql, "%sALTER TABLE shop.orders RENAME TO shop.sales; SHOW TABLES FROM shop;", ns);
  EXPECT_FRESH(sql, 6, true, "order_lines\nsales\n");
}

/* CTAS in batch mode writes the query's rows; a second table reads them. */
TEST(ctas_writes_the_query_rows) {
  char dir[] = "/tmp/dipper-ctas-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';\n"
           "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '5',\n"
           "  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5');\n"
           "CREATE TABLE t WITH ('connector' = 'filesystem', 'path' = '%s/t', 'format' = 'json')\n"
           "  AS SELECT id, id * id AS sq FROM g WHERE id <> 3;\n",
           dir);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "ctas.sql", &prog), DIPPER_OK);
  int kind = -1;
  CHECK_EQ(dipper_program_stmt_kind(prog, 2, &kind), DIPPER_OK);
  CHECK_EQ(kind, DIPPER_STMT_INSERT);
  struct ArrowArrayStream st;
  CHECK_EQ(dipper_execute(prog, 2, &st), DIPPER_OK);
  if (st.release) st.release(&st);
  dipper_program_free(prog);
  EXPECT_ROWS(db, "DESCRIBE t;", 0, false, "id|BIGINT|true|NULL|NULL|NULL\nsq|BIGINT|true|NULL|NULL|NULL\n");
  EXPECT_ROWS(db, "SELECT SUM(sq), COUNT(*) FROM t;", 0, false, "46|4\n");
  dipper_close(db);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
}

TEST(qualify_filters_after_the_window_function) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  EXPECT_ROWS(db,
              "SET 'execution.runtime-mode' = 'batch';\n"
              "SELECT k, v FROM (VALUES ('a', 1), ('a', 3), ('a', 2), ('b', 5), ('b', 4)) AS t(k, v)\n"
              "QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) <= 2\n"
              "ORDER BY k, v;",
              1, false, "a|2\na|3\nb|4\nb|5\n");
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
