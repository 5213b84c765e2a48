/*
** api_test.c — the public API of dipper.h as a caller sees it: handles,
** compile, diagnostics and their rendering, the catalog kept across calls,
** EXPLAIN of a program, version and result-code strings.
*/
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dipper.h"
#include "test.h"

static const char *const payments_ddl =
    "CREATE TABLE payment_msg (\n"
    "  createTime TIMESTAMP(3),\n"
    "  orderId BIGINT,\n"
    "  payAmount DOUBLE,\n"
    "  payPlatform INT,\n"
    "  provinceId INT,\n"
    "  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND\n"
    ") WITH (\n"
    "  'connector' = 'kafka', 'topic' = 'payment_msg',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092',\n"
    "  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"
    "CREATE TABLE sink (province_id INT, window_start TIMESTAMP(3), window_end TIMESTAMP(3),\n"
    "  pay_amount DOUBLE) WITH ('connector' = 'kafka', 'topic' = 'sink',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json');\n";

static const char *const payments_insert =
    "INSERT INTO sink\n"
    "SELECT provinceId, window_start, window_end, SUM(payAmount)\n"
    "FROM TABLE(HOP(TABLE payment_msg, DESCRIPTOR(createTime), INTERVAL '30' SECOND,\n"
    "               INTERVAL '1' MINUTE))\n"
    "GROUP BY provinceId, window_start, window_end;\n";

static const char *const gen_table =
    "CREATE TABLE gen (id BIGINT, name STRING) WITH ('connector' = 'datagen', "
    "'number-of-rows' = '10')";

static dipper *open_embedded(void) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  return db;
}

/* Compile and report the diagnostics on failure, so a broken test says why. */
static int compile(dipper *db, const char *sql, const char *file, dipper_program **prog) {
  int rc = dipper_compile(db, sql, (size_t)-1, file, prog);
  if (rc != DIPPER_OK) {
    for (int i = 0; i < dipper_diag_count(db); i++) {
      char *r = dipper_diag_render(db, i);
      fprintf(stderr, "  (diagnostic) %s", r ? r : "(no render)\n");
      dipper_free(r);
    }
  }
  return rc;
}

TEST(version_and_strerror) {
  CHECK_STR(dipper_version(), DIPPER_VERSION);
  CHECK_STR(dipper_version(), "0.1.0");
  CHECK_EQ(DIPPER_VERSION_NUM, 0x000100);
  CHECK_STR(dipper_strerror(DIPPER_OK), "not an error");
  CHECK_STR(dipper_strerror(DIPPER_SYNTAX), "syntax error");
  CHECK_STR(dipper_strerror(DIPPER_NAME), "unknown name");
  CHECK(dipper_strerror(-1) != NULL);
  CHECK(dipper_strerror(1000) != NULL);
}

TEST(open_engines) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  CHECK(db != NULL);
  dipper_close(db);
  db = NULL;
  CHECK_EQ(dipper_open(&db, "embedded"), DIPPER_OK);
  CHECK(db != NULL);
  dipper_close(db);

  const char *good[] = {"sc://localhost", "sc://localhost:15002", "sc://10.0.0.7:15002/",
                        "sc://spark.example.com:443/;token=abc;use_ssl=true",
                        "sc://[::1]:15002/;user_id=me;session_id=x", NULL};
  for (int i = 0; good[i]; i++) {
    db = NULL;
    int rc = dipper_open(&db, good[i]);
    if (rc != DIPPER_OK) fprintf(stderr, "  refused: %s\n", good[i]);
    CHECK_EQ(rc, DIPPER_OK);
    CHECK(db != NULL);
    dipper_close(db);
  }
  const char *bad[] = {"",
                       "spark",
                       "http://localhost:15002",
                       "sc://",
                       "sc://:15002",
                       "sc://host:",
                       "sc://host:0",
                       "sc://host:65536",
                       "sc://host:15002x",
                       "sc://host:15002/token=abc",
                       "sc://host/;tokn=abc",
                       "sc://host/;use_ssl=maybe",
                       "sc://host/;token=",
                       "sc://ho st",
                       NULL};
  for (int i = 0; bad[i]; i++) {
    db = (dipper *)&db; /* must be overwritten with NULL */
    int rc = dipper_open(&db, bad[i]);
    if (rc != DIPPER_OPTION) fprintf(stderr, "  accepted: '%s'\n", bad[i]);
    CHECK_EQ(rc, DIPPER_OPTION);
    CHECK(db == NULL);
  }
  CHECK_EQ(dipper_open(NULL, NULL), DIPPER_MISUSE);
}

TEST(null_safety) {
  dipper_close(NULL);
  dipper_program_free(NULL);
  dipper_free(NULL);
  CHECK_EQ(dipper_program_count(NULL), 0);
  CHECK_EQ(dipper_diag_count(NULL), 0);
  CHECK(dipper_diag_get(NULL, 0) == NULL);
  CHECK_STR(dipper_errmsg(NULL), "");
  CHECK(dipper_diag_render(NULL, 0) == NULL);
  char *text = (char *)"x";
  CHECK_EQ(dipper_explain(NULL, 0, &text), DIPPER_MISUSE);
  CHECK(text == NULL);
  dipper_program *prog = (dipper_program *)&prog;
  CHECK_EQ(dipper_compile(NULL, "SELECT 1", (size_t)-1, NULL, &prog), DIPPER_MISUSE);
  CHECK(prog == NULL);

  dipper *db = open_embedded();
  CHECK_EQ(dipper_compile(db, NULL, 0, NULL, &prog), DIPPER_MISUSE);
  CHECK(prog == NULL);
  CHECK_EQ(dipper_diag_count(db), 1);
  CHECK_EQ(dipper_diag_get(db, 0)->code, DIPPER_MISUSE);
  CHECK_EQ(dipper_diag_get(db, 0)->line, 0);
  CHECK_CONTAINS(dipper_errmsg(db), "no SQL text");
  CHECK_EQ(dipper_compile(db, "SELECT 1", (size_t)-1, NULL, NULL), DIPPER_MISUSE);
  CHECK(dipper_diag_get(db, -1) == NULL);
  CHECK(dipper_diag_get(db, 1) == NULL);
  CHECK(dipper_diag_render(db, 5) == NULL);
  dipper_close(db);
}

TEST(compile_and_count) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  char sql[512];
  snprintf(sql, sizeof sql, "%s;\nSELECT id, name FROM gen WHERE id > 3;", gen_table);
  CHECK_EQ(compile(db, sql, "two.sql", &prog), DIPPER_OK);
  CHECK(prog != NULL);
  CHECK_EQ(dipper_program_count(prog), 2);
  CHECK_EQ(dipper_diag_count(db), 0);
  CHECK_STR(dipper_errmsg(db), "");
  dipper_program_free(prog);

  /* The text need not be NUL-terminated: only `len` bytes are read. */
  const char padded[] = "SELECT id FROM gen;GARBAGE THAT IS NOT SQL";
  prog = NULL;
  CHECK_EQ(dipper_compile(db, padded, strlen("SELECT id FROM gen;"), NULL, &prog), DIPPER_OK);
  CHECK_EQ(dipper_program_count(prog), 1);
  dipper_program_free(prog);

  /* An empty script is a program with no statements. */
  prog = NULL;
  CHECK_EQ(dipper_compile(db, "  -- nothing\n", (size_t)-1, NULL, &prog), DIPPER_OK);
  CHECK_EQ(dipper_program_count(prog), 0);
  char *text = NULL;
  CHECK_EQ(dipper_explain(prog, 0, &text), DIPPER_OK);
  CHECK_STR(text, "");
  dipper_free(text);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(catalog_persists_across_compiles) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, gen_table, "ddl.sql", &prog), DIPPER_OK);
  dipper_program_free(prog); /* the table outlives the program that created it */

  prog = NULL;
  CHECK_EQ(compile(db, "SELECT name, id + 1 AS next_id FROM gen", "q.sql", &prog), DIPPER_OK);
  char *text = NULL;
  CHECK_EQ(dipper_explain(prog, 0, &text), DIPPER_OK);
  CHECK_CONTAINS(text, "Scan table=gen connector=datagen");
  dipper_free(text);
  dipper_program_free(prog);

  /* Defining it again is a duplicate, reported at the name. */
  prog = (dipper_program *)&prog;
  CHECK_EQ(dipper_compile(db, gen_table, (size_t)-1, "again.sql", &prog), DIPPER_DUPLICATE);
  CHECK(prog == NULL);
  CHECK_EQ(dipper_diag_count(db), 1);
  CHECK_EQ(dipper_diag_get(db, 0)->line, 1);
  CHECK_CONTAINS(dipper_errmsg(db), "gen");

  /* After DROP, the name is free again and queries no longer see it. */
  prog = NULL;
  CHECK_EQ(compile(db, "DROP TABLE gen", NULL, &prog), DIPPER_OK);
  dipper_program_free(prog);
  prog = NULL;
  CHECK_EQ(dipper_compile(db, "SELECT id FROM gen", (size_t)-1, NULL, &prog), DIPPER_NAME);
  CHECK(prog == NULL);
  prog = NULL;
  CHECK_EQ(compile(db, gen_table, NULL, &prog), DIPPER_OK);
  dipper_program_free(prog);

  /* A view outlives its program too: it is re-bound at every use, after the
  ** text and tree of the compile that defined it are gone. */
  prog = NULL;
  CHECK_EQ(compile(db, "CREATE VIEW big AS SELECT id, name FROM gen WHERE id > 5", "v.sql", &prog),
           DIPPER_OK);
  dipper_program_free(prog);
  prog = NULL;
  CHECK_EQ(compile(db, "SELECT name FROM big", "use.sql", &prog), DIPPER_OK);
  text = NULL;
  CHECK_EQ(dipper_explain(prog, 0, &text), DIPPER_OK);
  CHECK_CONTAINS(text, "Filter cond=(id > 5)");
  dipper_free(text);
  dipper_program_free(prog);
  prog = NULL;
  CHECK_EQ(dipper_compile(db, "SELECT nope FROM big", (size_t)-1, "use.sql", &prog), DIPPER_NAME);
  char *rendered = dipper_diag_render(db, 0);
  CHECK_CONTAINS(rendered, "use.sql:1:8: error: ");
  dipper_free(rendered);

  /* Another handle has its own catalog. */
  dipper *other = open_embedded();
  prog = NULL;
  CHECK_EQ(dipper_compile(other, "SELECT id FROM gen", (size_t)-1, NULL, &prog), DIPPER_NAME);
  dipper_close(other);
  dipper_close(db);
}

TEST(diagnostics_render_with_caret) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  char sql[512];
  snprintf(sql, sizeof sql, "%s;\nSELECT id,\n       nme FROM gen;\n", gen_table);
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "bad.sql", &prog), DIPPER_NAME);
  CHECK(prog == NULL);
  CHECK_EQ(dipper_diag_count(db), 1);
  const dipper_diag *g = dipper_diag_get(db, 0);
  CHECK(g != NULL);
  if (!g) {
    dipper_close(db);
    return;
  }
  CHECK_EQ(g->code, DIPPER_NAME);
  CHECK_STR(g->file, "bad.sql");
  CHECK_EQ(g->line, 3);
  CHECK_EQ(g->col, 8);
  CHECK_EQ(g->length, 3);
  CHECK_CONTAINS(g->message, "nme");
  CHECK_CONTAINS(g->message, "name"); /* the column it probably meant */
  CHECK(g->message == dipper_errmsg(db));

  char expected[1024];
  snprintf(expected, sizeof expected,
           "bad.sql:3:8: error: %s\n"
           "   3 |        nme FROM gen;\n"
           "     |        ^~~\n",
           g->message);
  char *rendered = dipper_diag_render(db, 0);
  CHECK_STR(rendered, expected);
  dipper_free(rendered);

  /* A successful call clears the diagnostics. */
  CHECK_EQ(compile(db, "SELECT id FROM gen", NULL, &prog), DIPPER_OK);
  CHECK_EQ(dipper_diag_count(db), 0);
  CHECK_STR(dipper_errmsg(db), "");
  CHECK(dipper_diag_render(db, 0) == NULL);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(unnamed_text_renders_as_string) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, "SELECT x FROM nowhere", (size_t)-1, NULL, &prog), DIPPER_NAME);
  const dipper_diag *g = dipper_diag_get(db, 0);
  CHECK(g != NULL);
  if (g) {
    CHECK_EQ(g->line, 1);
    CHECK_EQ(g->col, 15);
    CHECK_EQ(g->length, 7);
  }
  char *rendered = dipper_diag_render(db, 0);
  CHECK_CONTAINS(rendered, "<string>:1:15: error: ");
  CHECK_CONTAINS(rendered, "nowhere");
  dipper_free(rendered);
  dipper_close(db);
}

TEST(errors_of_every_statement_are_collected) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  char sql[512];
  snprintf(sql, sizeof sql,
           "%s;\n"
           "SELECT nope FROM gen;\n"
           "SELECT id FROM gen;\n"
           "SELECT id FROM missing_table;\n",
           gen_table);
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "many.sql", &prog), DIPPER_NAME);
  CHECK(prog == NULL);
  CHECK_EQ(dipper_diag_count(db), 2);
  const dipper_diag *first = dipper_diag_get(db, 0), *second = dipper_diag_get(db, 1);
  CHECK(first && second);
  if (first && second) {
    CHECK_EQ(first->line, 2);
    CHECK_EQ(second->line, 4);
    CHECK_CONTAINS(first->message, "nope");
    CHECK_CONTAINS(second->message, "missing_table");
  }
  /* The CREATE TABLE of the failed script still took effect, like a REPL. */
  CHECK_EQ(compile(db, "SELECT id FROM gen", NULL, &prog), DIPPER_OK);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(syntax_error_stops_before_binding) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  char sql[512];
  snprintf(sql, sizeof sql, "%s;\nSELEC id FROM gen;\n", gen_table);
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "syntax.sql", &prog), DIPPER_SYNTAX);
  CHECK(prog == NULL);
  CHECK(dipper_diag_count(db) >= 1);
  const dipper_diag *g = dipper_diag_get(db, 0);
  CHECK(g && g->line == 2 && g->col == 1);
  char *rendered = dipper_diag_render(db, 0);
  CHECK_CONTAINS(rendered, "syntax.sql:2:1: error: ");
  CHECK_CONTAINS(rendered, "   2 | SELEC id FROM gen;\n     | ^");
  dipper_free(rendered);
  /* Nothing was bound, so the table does not exist. */
  CHECK_EQ(dipper_compile(db, "SELECT id FROM gen", (size_t)-1, NULL, &prog), DIPPER_NAME);
  dipper_close(db);
}

/* The text is `len` bytes, NUL bytes included: the copies the program and
** the diagnostics keep must not stop at the first NUL (the fuzzer found it). */
TEST(text_with_nul_bytes) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  static const char sql[] = "SELECT 1;\n\0SELEC x;\nSELECT nope\n  FROM nowhere;\n";
  int rc = dipper_compile(db, sql, sizeof sql - 1, "nul.sql", &prog);
  CHECK(rc != DIPPER_OK);
  CHECK(prog == NULL);
  CHECK(dipper_diag_count(db) >= 1);
  bool saw_line_two = false;
  for (int i = 0; i < dipper_diag_count(db); i++) {
    const dipper_diag *g = dipper_diag_get(db, i);
    char *rendered = dipper_diag_render(db, i);
    CHECK(rendered != NULL);
    if (g && g->line == 2) saw_line_two = true;
    dipper_free(rendered);
  }
  CHECK(saw_line_two);
  dipper_close(db);
}

TEST(explain_program) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  char sql[4096];
  snprintf(sql, sizeof sql, "%s%s", payments_ddl, payments_insert);
  CHECK_EQ(compile(db, sql, "payments.sql", &prog), DIPPER_OK);
  CHECK_EQ(dipper_program_count(prog), 3);
  char *text = NULL;
  CHECK_EQ(dipper_explain(prog, DIPPER_EXPLAIN_DEFAULT, &text), DIPPER_OK);
  CHECK_CONTAINS(text, "CreateTable payment_msg connector=kafka format=json columns=5 "
                       "watermark=createTime delay=10 s unbounded\n");
  CHECK_CONTAINS(text, "\n\nCreateTable sink connector=kafka format=json columns=4");
  CHECK_CONTAINS(text, "\n\nSink table=sink connector=kafka\n");
  CHECK_CONTAINS(text, "Aggregate group=[");
  CHECK_CONTAINS(text, "Window kind=HOP time=createTime size=1 min slide=30 s");
  CHECK_CONTAINS(text, "Watermark column=createTime delay=10 s source=payment_msg");
  CHECK_CONTAINS(text, "Scan table=payment_msg connector=kafka");
  CHECK_CONTAINS(text, "schema: (");
  CHECK_CONTAINS(text, "streaming: unbounded");
  CHECK(text && text[strlen(text) - 1] == '\n');
  dipper_free(text);

  text = NULL;
  CHECK_EQ(dipper_explain(prog, DIPPER_EXPLAIN_NO_SCHEMA | DIPPER_EXPLAIN_NO_STREAMING, &text),
           DIPPER_OK);
  CHECK_CONTAINS(text, "Window kind=HOP");
  CHECK(text && !strstr(text, "schema:"));
  CHECK(text && !strstr(text, "streaming:"));
  dipper_free(text);
  CHECK_EQ(dipper_explain(prog, 0, NULL), DIPPER_MISUSE);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(explain_session_statements) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  char sql[1024];
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';\n"
           "%s;\n"
           "CREATE VIEW v AS SELECT id FROM gen;\n"
           "DROP VIEW v;\n",
           gen_table);
  CHECK_EQ(compile(db, sql, NULL, &prog), DIPPER_OK);
  char *text = NULL;
  CHECK_EQ(dipper_explain(prog, 0, &text), DIPPER_OK);
  CHECK_CONTAINS(text, "Set execution.runtime-mode=batch\n\nCreateTable gen connector=datagen "
                       "columns=2 bounded\n\nCreateView v\n\nDropView v\n");
  dipper_free(text);
  dipper_program_free(prog);
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
