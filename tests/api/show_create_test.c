/*
** show_create_test.c — SHOW CREATE TABLE / VIEW: the catalog's definition as
** a statement that compiles to the same table again, secrets masked, and
** errors that point at the name.
*/
#include <stdlib.h>
#include <string.h>

#include "dipper.h"
#include "test.h"

/* The one cell statement `stmt` of `sql` answers, or the error message. */
static char *answer(dipper *db, const char *sql, int stmt) {
  dipper_program *prog = NULL;
  if (dipper_compile(db, sql, (size_t)-1, "show.sql", &prog) != DIPPER_OK)
    return strdup(dipper_errmsg(db));
  struct ArrowArrayStream st;
  char *text = NULL;
  if (dipper_execute(prog, stmt, &st) == DIPPER_OK) {
    struct ArrowSchema schema;
    struct ArrowArray a;
    if (st.get_schema(&st, &schema) == 0) {
      if (st.get_next(&st, &a) == 0 && a.release) {
        char **cells = NULL;
        if (a.length == 1 && dipper_format_values(&schema, &a, 0, &cells) == DIPPER_OK)
          text = strdup(cells[0]);
        dipper_free(cells);
        a.release(&a);
      }
      schema.release(&schema);
    }
    st.release(&st);
  }
  dipper_program_free(prog);
  return text ? text : strdup("(no row)");
}

static const char table[] =
    "CREATE TABLE k (id BIGINT NOT NULL, amount DECIMAL(10, 2), ts TIMESTAMP(3),\n"
    "  doubled AS amount * 2, off BIGINT METADATA FROM 'offset' VIRTUAL,\n"
    "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED)\n"
    "WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092', 'properties.client.id' = 'it''s',\n"
    "  'properties.sasl.jaas.config' = 'org.Login required password=\"hunter2\"');\n"
    "CREATE VIEW v AS SELECT id FROM k WHERE amount > 1;\n";

TEST(a_table_comes_back_as_its_definition) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  char sql[2048];
  snprintf(sql, sizeof sql, "%sSHOW CREATE TABLE k;", table);
  char *text = answer(db, sql, 2);
  CHECK_STR(text,
            "CREATE TABLE `k` (\n"
            "  `id` BIGINT NOT NULL,\n"
            "  `amount` DECIMAL(10, 2),\n"
            "  `ts` TIMESTAMP(3),\n"
            "  `doubled` AS (amount * 2),\n"
            "  `off` BIGINT METADATA FROM 'offset' VIRTUAL,\n"
            "  WATERMARK FOR `ts` AS (ts - INTERVAL '5' SECOND),\n"
            "  PRIMARY KEY (`id`) NOT ENFORCED\n"
            ") WITH (\n"
            "  'connector' = 'kafka',\n"
            "  'topic' = 't',\n"
            "  'format' = 'json',\n"
            "  'properties.bootstrap.servers' = '127.0.0.1:9092',\n"
            "  'properties.client.id' = 'it''s',\n"
            "  'properties.sasl.jaas.config' = '******'\n"
            ")");
  CHECK(strstr(text, "hunter2") == NULL);
  /* it compiles again, to a table that shows the same way */
  dipper *again = NULL;
  CHECK_EQ(dipper_open(&again, NULL), DIPPER_OK);
  char *redo = malloc(strlen(text) + 64);
  snprintf(redo, strlen(text) + 64, "%s;\nSHOW CREATE TABLE k;", text);
  char *text2 = answer(again, redo, 1);
  CHECK_STR(text2, text);
  free(redo);
  free(text2);
  free(text);
  dipper_close(again);

  dipper_close(db);
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  snprintf(sql, sizeof sql, "%sSHOW CREATE VIEW v;", table);
  text = answer(db, sql, 2);
  CHECK_STR(text, "CREATE VIEW `v` AS SELECT id FROM k WHERE amount > 1");
  free(text);
  dipper_close(db);
}

TEST(a_wrong_name_is_an_error_at_the_name) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  char sql[2048];
  snprintf(sql, sizeof sql, "%sSHOW CREATE TABLE v;", table);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "show.sql", &prog), DIPPER_NAME);
  CHECK_CONTAINS(dipper_errmsg(db), "it is a view; write SHOW CREATE VIEW");
  const dipper_diag *g = dipper_diag_get(db, 0);
  CHECK(g != NULL);
  if (g) {
    CHECK_EQ(g->line, 8);
    CHECK_EQ(g->col, 19);
  }
  CHECK_EQ(dipper_compile(db, "SHOW CREATE VIEW nope", (size_t)-1, "show.sql", &prog), DIPPER_NAME);
  CHECK_CONTAINS(dipper_errmsg(db), "view `nope` does not exist; SHOW VIEWS lists the views");
  CHECK_EQ(dipper_compile(db, "SHOW CREATE INDEX i", (size_t)-1, "show.sql", &prog), DIPPER_SYNTAX);
  CHECK_CONTAINS(dipper_errmsg(db), "TABLE or VIEW after SHOW CREATE");
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
