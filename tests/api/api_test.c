/*
** api_test.c — the public API of dipper.h as a caller sees it: handles,
** compile, diagnostics and their rendering, the catalog kept across calls,
** EXPLAIN of a program, version and result-code strings; query management
** on the embedded engine (status, await, stop, recent progress, the active
** list, an await interrupted from the same thread and from another one).
*/
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
                        "sc://[::1]:15002/;user_id=me;session_id=0f8fad5b-d9cb-469f-a165-70867728950e", NULL};
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
  /* A bad address: DIPPER_OPTION, and a handle that says why and refuses work. */
  for (int i = 0; bad[i]; i++) {
    db = NULL;
    int rc = dipper_open(&db, bad[i]);
    if (rc != DIPPER_OPTION) fprintf(stderr, "  accepted: '%s'\n", bad[i]);
    CHECK_EQ(rc, DIPPER_OPTION);
    CHECK(db != NULL);
    CHECK_CONTAINS(dipper_errmsg(db), "cannot use engine");
    CHECK_CONTAINS(dipper_errmsg(db), "write 'embedded' or 'sc://host:port");
    dipper_program *prog = NULL;
    CHECK_EQ(dipper_compile(db, "SELECT 1", (size_t)-1, NULL, &prog), DIPPER_OPTION);
    CHECK(prog == NULL);
    CHECK_CONTAINS(dipper_errmsg(db), "cannot use engine");
    dipper_close(db);
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

/* ---- dipper_execute ---- */

static int count_calls(void *user, int64_t batch_id, struct ArrowSchema *schema,
                       struct ArrowArray *array) {
  (void)batch_id;
  int *calls = user;
  if (array->length > 0) (*calls)++;
  array->release(array);
  schema->release(schema);
  return 0;
}

/* Every row of a stream as "a|b" lines, each line ended by '\n'; only the
** formats these tests use. */
static char *drain(struct ArrowArrayStream *st, char *names, size_t cap) {
  static char rows[4096];
  size_t at = 0;
  rows[0] = '\0';
  struct ArrowSchema schema;
  CHECK_EQ(st->get_schema(st, &schema), 0);
  CHECK_STR(schema.format, "+s");
  names[0] = '\0';
  for (int64_t c = 0; c < schema.n_children; c++) {
    size_t len = strlen(names);
    snprintf(names + len, cap - len, "%s%s:%s", c ? "," : "", schema.children[c]->name,
             schema.children[c]->format);
  }
  for (;;) {
    struct ArrowArray a;
    CHECK_EQ(st->get_next(st, &a), 0);
    if (!a.release) break;
    CHECK_EQ(a.n_children, schema.n_children);
    for (int64_t r = 0; r < a.length; r++) {
      for (int64_t c = 0; c < a.n_children; c++) {
        const struct ArrowArray *col = a.children[c];
        const char *f = schema.children[c]->format;
        int64_t j = a.offset + col->offset + r;
        const uint8_t *valid = col->buffers[0];
        if (c) at += (size_t)snprintf(rows + at, sizeof rows - at, "|");
        if (col->null_count && valid && !((valid[j >> 3] >> (j & 7)) & 1))
          at += (size_t)snprintf(rows + at, sizeof rows - at, "NULL");
        else if (strcmp(f, "l") == 0)
          at += (size_t)snprintf(rows + at, sizeof rows - at, "%lld",
                                 (long long)((const int64_t *)col->buffers[1])[j]);
        else if (strcmp(f, "i") == 0)
          at += (size_t)snprintf(rows + at, sizeof rows - at, "%d",
                                 ((const int32_t *)col->buffers[1])[j]);
        else if (strcmp(f, "u") == 0) {
          const int32_t *off = col->buffers[1];
          at += (size_t)snprintf(rows + at, sizeof rows - at, "%.*s", (int)(off[j + 1] - off[j]),
                                 (const char *)col->buffers[2] + off[j]);
        } else
          at += (size_t)snprintf(rows + at, sizeof rows - at, "<%s>", f);
      }
      at += (size_t)snprintf(rows + at, sizeof rows - at, "\n");
    }
    a.release(&a);
  }
  /* the end stays the end */
  struct ArrowArray after;
  CHECK_EQ(st->get_next(st, &after), 0);
  CHECK(after.release == NULL);
  CHECK(st->get_last_error(st) == NULL);
  schema.release(&schema);
  return rows;
}

TEST(execute_select_in_batch_mode) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db,
                   "SET 'execution.runtime-mode' = 'batch';\n"
                   "CREATE TABLE sales (r STRING, q INT) WITH ('connector' = 'memory');\n"
                   "SELECT r, SUM(q) AS total, COUNT(*) AS n FROM sales GROUP BY r ORDER BY r;\n",
                   "q.sql", &prog),
           DIPPER_OK);
  const char *rows = "{\"r\":\"n\",\"q\":2}\n{\"r\":\"s\",\"q\":5}\n{\"r\":\"n\",\"q\":null}\n";
  CHECK_EQ(dipper_memory_push_json(db, "sales", rows, (size_t)-1), DIPPER_OK);
  struct ArrowArrayStream st;
  CHECK_EQ(dipper_execute(prog, 2, &st), DIPPER_OK);
  CHECK(st.release != NULL);
  char names[256];
  CHECK_STR(drain(&st, names, sizeof names), "n|2|2\ns|5|1\n");
  CHECK_STR(names, "r:u,total:l,n:l");
  /* get_schema may be called again: each call hands out a copy */
  struct ArrowSchema again;
  CHECK_EQ(st.get_schema(&st, &again), 0);
  CHECK_EQ(again.n_children, 3);
  CHECK_STR(again.children[1]->name, "total");
  again.release(&again);
  st.release(&st);
  CHECK(st.release == NULL);
  /* the statement runs again, from the start of the memory table */
  CHECK_EQ(dipper_execute(prog, 2, &st), DIPPER_OK);
  CHECK_STR(drain(&st, names, sizeof names), "n|2|2\ns|5|1\n");
  st.release(&st);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(execute_insert_and_ddl_give_empty_results) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db,
                   "SET 'execution.runtime-mode' = 'batch';\n"
                   "CREATE TABLE out (a BIGINT, b STRING) WITH ('connector' = 'memory');\n"
                   "INSERT INTO out SELECT a * 2, b FROM (VALUES (1, 'x'), (2, 'y')) AS t(a, b);\n",
                   "i.sql", &prog),
           DIPPER_OK);
  char names[256];
  for (int i = 0; i < 3; i++) {
    struct ArrowArrayStream st;
    CHECK_EQ(dipper_execute(prog, i, &st), DIPPER_OK);
    CHECK_STR(drain(&st, names, sizeof names), "");
    CHECK_STR(names, "");
    st.release(&st);
  }
  /* the INSERT ran: its sink has the rows */
  struct ArrowSchema schema;
  struct ArrowArray array;
  CHECK_EQ(dipper_memory_fetch(db, "out", &schema, &array), DIPPER_OK);
  CHECK_EQ(array.length, 2);
  array.release(&array);
  schema.release(&schema);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(execute_show_describe_set_explain_give_their_rows) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db,
                   "CREATE TABLE b (x INT) WITH ('connector' = 'memory');\n"
                   "SHOW TABLES;\n"
                   "CREATE TABLE a (k STRING NOT NULL, v INT, PRIMARY KEY (k) NOT ENFORCED)\n"
                   "  WITH ('connector' = 'memory');\n"
                   "CREATE VIEW w AS SELECT v AS n FROM a;\n"
                   "SHOW TABLES;\n"
                   "SHOW VIEWS;\n"
                   "DESCRIBE a;\n"
                   "DESC w;\n"
                   "SET 'dipper.trigger' = 'once';\n"
                   "SET;\n"
                   "EXPLAIN SELECT x FROM b;\n"
                   "SELECT x FROM b;\n"
                   "INSERT INTO b SELECT v FROM a;\n",
                   "s.sql", &prog),
           DIPPER_OK);
  static const int kinds[] = {DIPPER_STMT_SESSION, DIPPER_STMT_RESULT, DIPPER_STMT_SESSION,
                              DIPPER_STMT_SESSION, DIPPER_STMT_RESULT, DIPPER_STMT_RESULT,
                              DIPPER_STMT_RESULT,  DIPPER_STMT_RESULT, DIPPER_STMT_SESSION,
                              DIPPER_STMT_RESULT,  DIPPER_STMT_RESULT, DIPPER_STMT_QUERY,
                              DIPPER_STMT_INSERT};
  CHECK_EQ(dipper_program_count(prog), 13);
  for (int i = 0; i < 13; i++) {
    int kind = 0;
    CHECK_EQ(dipper_program_stmt_kind(prog, i, &kind), DIPPER_OK);
    CHECK_EQ(kind, kinds[i]);
  }
  int kind = 0;
  CHECK_EQ(dipper_program_stmt_kind(prog, 13, &kind), DIPPER_MISUSE);
  CHECK_EQ(dipper_program_stmt_kind(prog, 0, NULL), DIPPER_MISUSE);
  CHECK_EQ(dipper_program_stmt_kind(NULL, 0, &kind), DIPPER_MISUSE);

  char names[256];
  struct ArrowArrayStream st;
  /* each SHOW answers with the catalog as it was at that point of the text */
  CHECK_EQ(dipper_execute(prog, 1, &st), DIPPER_OK);
  CHECK_STR(drain(&st, names, sizeof names), "b\n");
  CHECK_STR(names, "table_name:u");
  st.release(&st);
  CHECK_EQ(dipper_execute(prog, 4, &st), DIPPER_OK);
  CHECK_STR(drain(&st, names, sizeof names), "a\nb\nw\n");
  st.release(&st);
  CHECK_EQ(dipper_execute(prog, 5, &st), DIPPER_OK);
  CHECK_STR(drain(&st, names, sizeof names), "w\n");
  CHECK_STR(names, "view_name:u");
  st.release(&st);
  CHECK_EQ(dipper_execute(prog, 6, &st), DIPPER_OK);
  CHECK_STR(drain(&st, names, sizeof names), "k|STRING|<b>|PRI(k)|NULL|NULL\n"
                                             "v|INT|<b>|NULL|NULL|NULL\n");
  CHECK_STR(names, "name:u,type:u,null:b,key:u,extras:u,watermark:u");
  st.release(&st);
  CHECK_EQ(dipper_execute(prog, 7, &st), DIPPER_OK);
  CHECK_STR(drain(&st, names, sizeof names), "n|INT|<b>|NULL|NULL|NULL\n");
  st.release(&st);
  CHECK_EQ(dipper_execute(prog, 9, &st), DIPPER_OK);
  CHECK_STR(drain(&st, names, sizeof names), "dipper.trigger|once\n");
  CHECK_STR(names, "key:u,value:u");
  st.release(&st);
  CHECK_EQ(dipper_execute(prog, 10, &st), DIPPER_OK);
  const char *plan = drain(&st, names, sizeof names);
  CHECK_STR(names, "plan:u");
  CHECK_STR(plan, "Scan table=b connector=memory\n"
                  "  schema: (x INT)\n"
                  "  streaming: unbounded modes=append changelog=insert-only time=[] state=none\n");
  st.release(&st);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(execute_streaming_bounded_append) {
  /* streaming mode over a bounded input in append mode: the whole answer */
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, "SELECT a + 1 AS b FROM (VALUES (1), (2), (3)) AS t(a) WHERE a <> 2",
                   NULL, &prog),
           DIPPER_OK);
  struct ArrowArrayStream st;
  CHECK_EQ(dipper_execute(prog, 0, &st), DIPPER_OK);
  char names[256];
  CHECK_STR(drain(&st, names, sizeof names), "2\n4\n");
  CHECK_STR(names, "b:i");
  st.release(&st);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(execute_refusals) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db,
                   "CREATE TABLE s (k INT) WITH ('connector' = 'memory');\n"
                   "SELECT k FROM s;\n",
                   "s.sql", &prog),
           DIPPER_OK);
  struct ArrowArrayStream st;
  st.release = (void (*)(struct ArrowArrayStream *))1; /* must be cleared */
  CHECK_EQ(dipper_execute(prog, 1, &st), DIPPER_STREAMING);
  CHECK(st.release == NULL);
  CHECK_CONTAINS(dipper_errmsg(db), "unbounded input in streaming mode");
  CHECK_CONTAINS(dipper_errmsg(db), "'execution.runtime-mode' = 'batch'");
  const dipper_diag *g = dipper_diag_get(db, 0);
  CHECK(g != NULL && g->line == 2);
  CHECK_EQ(dipper_execute(prog, 2, &st), DIPPER_MISUSE);
  CHECK_CONTAINS(dipper_errmsg(db), "statement 2 does not exist");
  CHECK_EQ(dipper_execute(prog, -1, &st), DIPPER_MISUSE);
  CHECK_EQ(dipper_execute(prog, 0, NULL), DIPPER_MISUSE);
  CHECK_EQ(dipper_execute(NULL, 0, &st), DIPPER_MISUSE);
  dipper_program_free(prog);

  /* a run-time failure reaches dipper_errmsg */
  CHECK_EQ(compile(db,
                   "SET 'execution.runtime-mode' = 'batch';\n"
                   "CREATE TABLE j (k INT) WITH ('connector' = 'memory');\n"
                   "SELECT k FROM j;\n",
                   "j.sql", &prog),
           DIPPER_OK);
  CHECK_EQ(dipper_memory_push_json(db, "j", "{\"k\": \"nope\"}\n", (size_t)-1), DIPPER_OK);
  CHECK_EQ(dipper_execute(prog, 2, &st), DIPPER_DATA);
  CHECK(st.release == NULL);
  CHECK(dipper_errmsg(db)[0] != '\0');
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(execute_leaves_user_callbacks_alone) {
  /* dipper_execute collects through a callback of its own: a user's callback
  ** sink in the same program still gets its rows. */
  dipper *db = open_embedded();
  int calls = 0;
  CHECK_EQ(dipper_register_callback(db, "mine", count_calls, &calls), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db,
                   "SET 'execution.runtime-mode' = 'batch';\n"
                   "CREATE TABLE cb (a INT) WITH ('connector' = 'callback', 'name' = 'mine');\n"
                   "INSERT INTO cb SELECT a FROM (VALUES (1), (2)) AS t(a);\n"
                   "SELECT a FROM (VALUES (7)) AS t(a);\n",
                   "cb.sql", &prog),
           DIPPER_OK);
  struct ArrowArrayStream st;
  CHECK_EQ(dipper_execute(prog, 2, &st), DIPPER_OK);
  st.release(&st);
  CHECK_EQ(calls, 1);
  CHECK_EQ(dipper_execute(prog, 3, &st), DIPPER_OK);
  char names[256];
  CHECK_STR(drain(&st, names, sizeof names), "7\n");
  st.release(&st);
  CHECK_EQ(calls, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

/* ---- callbacks that own their user (dipper_register_callback2) ---- */

typedef struct owned_user {
  int *freed; /* how many times free_owned ran on this user */
  int calls;  /* non-empty micro-batches seen */
} owned_user;

static owned_user *new_owned(int *freed) {
  owned_user *u = calloc(1, sizeof *u);
  CHECK(u != NULL);
  if (u) u->freed = freed;
  return u;
}

static void free_owned(void *p) {
  owned_user *u = p;
  (*u->freed)++;
  free(u);
}

static int owned_calls(void *user, int64_t batch_id, struct ArrowSchema *schema,
                       struct ArrowArray *array) {
  (void)batch_id;
  owned_user *u = user;
  if (array->length > 0) u->calls++;
  array->release(array);
  schema->release(schema);
  return 0;
}

TEST(register_callback2_frees_user_once_replaced_unregistered_or_closed) {
  dipper *db = open_embedded();
  int freed[4] = {0, 0, 0, 0};
  owned_user *a = new_owned(&freed[0]), *b = new_owned(&freed[1]);
  /* replaced (the name is case-insensitive): the old user is freed, once */
  CHECK_EQ(dipper_register_callback2(db, "cb", owned_calls, a, free_owned), DIPPER_OK);
  CHECK_EQ(dipper_register_callback2(db, "CB", owned_calls, b, free_owned), DIPPER_OK);
  CHECK_EQ(freed[0], 1);
  CHECK_EQ(freed[1], 0);
  /* the same user handed over again is owned once: not freed */
  CHECK_EQ(dipper_register_callback2(db, "cb", owned_calls, b, free_owned), DIPPER_OK);
  CHECK_EQ(freed[1], 0);
  /* unregistered: freed once; a second unregister finds nothing */
  CHECK_EQ(dipper_unregister_callback(db, "cb"), DIPPER_OK);
  CHECK_EQ(freed[1], 1);
  CHECK_EQ(dipper_unregister_callback(db, "cb"), DIPPER_NAME);
  CHECK_CONTAINS(dipper_errmsg(db), "no callback is registered under 'cb'");
  CHECK_EQ(freed[1], 1);
  /* the first form's fn NULL is an unregister too */
  owned_user *c = new_owned(&freed[2]);
  CHECK_EQ(dipper_register_callback2(db, "old", owned_calls, c, free_owned), DIPPER_OK);
  CHECK_EQ(dipper_register_callback(db, "old", NULL, NULL), DIPPER_OK);
  CHECK_EQ(freed[2], 1);
  /* refused: nothing registered, the caller keeps user */
  owned_user *d = new_owned(&freed[3]);
  CHECK_EQ(dipper_register_callback2(db, "", owned_calls, d, free_owned), DIPPER_MISUSE);
  CHECK_EQ(dipper_register_callback2(db, "x", NULL, d, free_owned), DIPPER_MISUSE);
  CHECK_CONTAINS(dipper_errmsg(db), "dipper_unregister_callback");
  CHECK_EQ(dipper_register_callback2(NULL, "x", owned_calls, d, free_owned), DIPPER_MISUSE);
  CHECK_EQ(dipper_unregister_callback(NULL, "x"), DIPPER_MISUSE);
  CHECK_EQ(freed[3], 0);
  /* the handle closed: freed once */
  CHECK_EQ(dipper_register_callback2(db, "x", owned_calls, d, free_owned), DIPPER_OK);
  int plain = 0; /* the first form's user stays the caller's */
  CHECK_EQ(dipper_register_callback(db, "plain", count_calls, &plain), DIPPER_OK);
  dipper_close(db);
  CHECK_EQ(freed[3], 1);
  CHECK_EQ(freed[0] + freed[1] + freed[2], 3);
}

TEST(register_callback2_user_outlives_the_queries_started_under_it) {
  dipper *db = open_embedded();
  int freed = 0, freed_next = 0;
  owned_user *u = new_owned(&freed);
  CHECK_EQ(dipper_register_callback2(db, "mine", owned_calls, u, free_owned), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db,
                   "SET 'execution.runtime-mode' = 'batch';\n"
                   "CREATE TABLE cb (a INT) WITH ('connector' = 'callback', 'name' = 'mine');\n"
                   "INSERT INTO cb SELECT a FROM (VALUES (1), (2)) AS t(a);\n",
                   "owned.sql", &prog),
           DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 1);
  if (n != 1) return;
  /* replaced and then removed while the query runs: the query keeps its
  ** registration, so u is not freed under it */
  owned_user *next = new_owned(&freed_next);
  CHECK_EQ(dipper_register_callback2(db, "mine", owned_calls, next, free_owned), DIPPER_OK);
  CHECK_EQ(dipper_unregister_callback(db, "mine"), DIPPER_OK);
  CHECK_EQ(freed_next, 1);
  CHECK_EQ(freed, 0);
  int terminated = 0;
  CHECK_EQ(dipper_query_await(qs[0], -1, &terminated), DIPPER_OK);
  CHECK_EQ(terminated, 1);
  CHECK_EQ(u->calls, 1); /* the old registration's fn and user */
  CHECK_EQ(freed, 0);
  dipper_query_free_all(qs, n);
  CHECK_EQ(freed, 1); /* the query was the last to hold it */
  dipper_program_free(prog);
  dipper_close(db);
  CHECK_EQ(freed, 1);
}

/* ---- query management on the embedded engine ---- */

static const char *const bounded_run =
    "CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '3000');\n"
    "CREATE TABLE bh (id BIGINT, v INT) WITH ('connector' = 'blackhole');\n"
    "INSERT INTO bh SELECT id, v FROM g;\n";

TEST(await_runs_a_bounded_query_to_its_end) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, bounded_run, "b.sql", &prog), DIPPER_OK);
  CHECK_EQ(dipper_program_streaming(prog), 1);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 1);
  if (n != 1) return;
  CHECK_STR(dipper_query_name(qs[0]), "bh");
  CHECK(dipper_query_id(qs[0]) == NULL); /* a Spark id only */
  CHECK(dipper_query_run_id(qs[0]) == NULL);
  dipper_status st = {sizeof st};
  CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
  CHECK_EQ(st.active, 1);
  CHECK_STR(st.message, "Waiting for the first batch");
  dipper_query *active[4];
  int nactive = -1;
  CHECK_EQ(dipper_active_queries(db, active, 4, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 1);
  CHECK(active[0] == qs[0]);
  int terminated = 0;
  CHECK_EQ(dipper_query_await(qs[0], -1, &terminated), DIPPER_OK);
  CHECK_EQ(terminated, 1);
  dipper_progress p = {sizeof p};
  CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
  CHECK_EQ(p.finished, 1);
  CHECK_EQ(p.total_output_rows, 3000);
  /* every batch that ran is among the recent reports, the last one newest */
  dipper_progress recent[DIPPER_RECENT_PROGRESS] = {{sizeof recent[0]}};
  int nrecent = 0;
  CHECK_EQ(dipper_query_recent_progress(qs[0], recent, DIPPER_RECENT_PROGRESS, &nrecent), DIPPER_OK);
  CHECK(nrecent >= 1);
  if (nrecent >= 1) {
    CHECK_EQ(recent[nrecent - 1].batch_id, p.batch_id);
    CHECK_EQ(recent[nrecent - 1].total_output_rows, 3000);
    CHECK_STR(recent[nrecent - 1].name, "bh");
    for (int i = 1; i < nrecent; i++) CHECK(recent[i].batch_id > recent[i - 1].batch_id);
  }
  /* fewer than there are: the newest ones */
  int one = 0;
  CHECK_EQ(dipper_query_recent_progress(qs[0], recent, 1, &one), DIPPER_OK);
  CHECK_EQ(one, 1);
  CHECK_EQ(recent[0].batch_id, p.batch_id);
  CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
  CHECK_EQ(st.active, 0);
  CHECK_STR(st.message, "Finished");
  CHECK_EQ(dipper_active_queries(db, active, 4, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 0);
  CHECK_EQ(dipper_query_stop(qs[0]), DIPPER_OK); /* ended already: fine */
  dipper_query_free_all(qs, n);
  CHECK_EQ(dipper_active_queries(db, active, 4, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 0);
  dipper_program_free(prog);
  dipper_close(db);
}

static const char *const endless_run =
    "CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000');\n"
    "CREATE TABLE a (id BIGINT) WITH ('connector' = 'blackhole');\n"
    "CREATE TABLE b (v INT) WITH ('connector' = 'blackhole');\n"
    "EXECUTE STATEMENT SET BEGIN\n"
    "  INSERT INTO a SELECT id FROM g;\n"
    "  INSERT INTO b SELECT v FROM g;\n"
    "END;\n";

/* A second thread: interrupts the handle after 100 ms. */
static void *interrupt_soon(void *db) {
  struct timespec ts = {0, 100 * 1000 * 1000};
  nanosleep(&ts, NULL);
  dipper_interrupt(db);
  return NULL;
}

TEST(await_times_out_and_stop_ends_an_endless_query) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, endless_run, "e.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 2);
  if (n != 2) return;
  int terminated = 1;
  CHECK_EQ(dipper_query_await(qs[0], 300, &terminated), DIPPER_OK);
  CHECK_EQ(terminated, 0);
  dipper_progress p = {sizeof p};
  CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
  CHECK(p.batch_id >= 0); /* it ran meanwhile */
  CHECK(p.total_input_rows > 0);
  CHECK_EQ(p.finished, 0);
  dipper_query *active[1];
  int nactive = 0;
  CHECK_EQ(dipper_active_queries(db, active, 1, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 2); /* more than fit: the count says so */
  CHECK(active[0] == qs[0]);

  CHECK_EQ(dipper_query_stop(qs[0]), DIPPER_OK);
  dipper_status st = {sizeof st};
  CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
  CHECK_EQ(st.active, 0);
  CHECK_STR(st.message, "Stopped");
  int64_t batch = p.batch_id;
  int finished = 0;
  CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
  CHECK_EQ(finished, 1); /* no batch runs after a stop */
  CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
  CHECK_EQ(p.batch_id, batch);
  CHECK_EQ(p.finished, 0); /* stopped, not finished */
  CHECK_EQ(dipper_query_await(qs[0], -1, &terminated), DIPPER_OK);
  CHECK_EQ(terminated, 1);
  CHECK_EQ(dipper_active_queries(db, active, 1, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 1);
  CHECK(active[0] == qs[1]);

  /* dipper_interrupt ends a wait with no limit; the query goes on after */
  dipper_interrupt(db);
  CHECK_EQ(dipper_query_await(qs[1], -1, &terminated), DIPPER_INTERRUPTED);
  CHECK_EQ(terminated, 0);
  CHECK_CONTAINS(dipper_errmsg(db), "interrupted");
  CHECK_EQ(dipper_query_await(qs[1], 50, &terminated), DIPPER_OK); /* the flag was honoured */
  CHECK_EQ(terminated, 0);
  /* ... and from another thread, while this one waits with no limit */
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, interrupt_soon, db), 0);
  CHECK_EQ(dipper_query_await(qs[1], -1, &terminated), DIPPER_INTERRUPTED);
  CHECK_EQ(terminated, 0);
  CHECK_EQ(pthread_join(th, NULL), 0);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

/* ---- structs that grow: a leading size, the library writes what fits ---- */

/* What a caller built against an older, smaller dipper.h would hold: the
** first fields only.  (The first dipper.h with `size` is this one; these
** stand for any prefix of it.) */
typedef struct old_progress {
  size_t size;
  const char *name;
  int64_t batch_id;
} old_progress;
typedef struct old_status {
  size_t size;
  int active;
  int data_available;
} old_status;

#define GUARD 0xA5

/* Bytes [from, to) of p still hold GUARD: nothing was written there. */
static bool untouched(const void *p, size_t from, size_t to) {
  const unsigned char *b = p;
  for (size_t i = from; i < to; i++)
    if (b[i] != GUARD) return false;
  return true;
}

static int reports_seen;
static void check_report_size(void *user, const dipper_progress *p) {
  (void)user;
  CHECK_EQ(p->size, sizeof *p);
  reports_seen++;
}

TEST(structs_that_grow_fill_an_older_caller_up_to_its_size) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, bounded_run, "grow.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 1);
  if (n != 1) return;
  int terminated = 0;
  CHECK_EQ(dipper_query_await(qs[0], -1, &terminated), DIPPER_OK);
  CHECK_EQ(terminated, 1);
  dipper_progress full = {sizeof full};
  CHECK_EQ(dipper_query_progress(qs[0], &full), DIPPER_OK);
  CHECK_EQ(full.size, sizeof full);
  CHECK(full.batch_id >= 0);
  CHECK_EQ(full.finished, 1);

  /* progress: the old fields filled, not one byte past the old size */
  union {
    old_progress p;
    unsigned char bytes[sizeof(dipper_progress) + 64];
  } op;
  memset(&op, GUARD, sizeof op);
  op.p.size = sizeof op.p;
  CHECK_EQ(dipper_query_progress(qs[0], (dipper_progress *)(void *)&op), DIPPER_OK);
  CHECK_EQ(op.p.size, sizeof op.p);
  CHECK_STR(op.p.name, full.name);
  CHECK_EQ(op.p.batch_id, full.batch_id);
  CHECK(untouched(&op, sizeof op.p, sizeof op));

  /* recent progress: the caller's element size is the stride */
  dipper_progress recent[3] = {{sizeof recent[0]}};
  int nrecent = 0;
  CHECK_EQ(dipper_query_recent_progress(qs[0], recent, 3, &nrecent), DIPPER_OK);
  CHECK(nrecent >= 1);
  union {
    old_progress p[3];
    unsigned char bytes[3 * sizeof(dipper_progress)];
  } orec;
  memset(&orec, GUARD, sizeof orec);
  orec.p[0].size = sizeof orec.p[0];
  int nold = 0;
  CHECK_EQ(dipper_query_recent_progress(qs[0], (dipper_progress *)(void *)&orec, 3, &nold),
           DIPPER_OK);
  CHECK_EQ(nold, nrecent);
  for (int i = 0; i < nold && i < 3; i++) {
    CHECK_EQ(orec.p[i].size, sizeof orec.p[i]);
    CHECK_EQ(orec.p[i].batch_id, recent[i].batch_id);
    CHECK_STR(orec.p[i].name, full.name);
  }
  CHECK(untouched(&orec, (size_t)nold * sizeof orec.p[0], sizeof orec));

  /* status: the same */
  union {
    old_status s;
    unsigned char bytes[sizeof(dipper_status) + 64];
  } os;
  memset(&os, GUARD, sizeof os);
  os.s.size = sizeof os.s;
  CHECK_EQ(dipper_query_status(qs[0], (dipper_status *)(void *)&os), DIPPER_OK);
  CHECK_EQ(os.s.size, sizeof os.s);
  CHECK_EQ(os.s.active, 0); /* finished */
  CHECK_EQ(os.s.data_available, 0);
  CHECK(untouched(&os, sizeof os.s, sizeof os));

  /* a newer caller (a field this library does not know): size tells what
  ** was filled, its own field is left as it was */
  struct {
    dipper_progress p;
    int64_t future;
  } np;
  memset(&np, 0, sizeof np);
  np.p.size = sizeof np;
  np.future = 42;
  CHECK_EQ(dipper_query_progress(qs[0], &np.p), DIPPER_OK);
  CHECK_EQ(np.p.size, sizeof(dipper_progress));
  CHECK_EQ(np.p.batch_id, full.batch_id);
  CHECK_EQ(np.future, 42);

  /* no size set: refused, and nothing written */
  dipper_progress unset;
  memset(&unset, GUARD, sizeof unset);
  unset.size = 0;
  CHECK_EQ(dipper_query_progress(qs[0], &unset), DIPPER_MISUSE);
  CHECK(untouched(&unset, sizeof unset.size, sizeof unset));
  dipper_status st_unset = {0};
  CHECK_EQ(dipper_query_status(qs[0], &st_unset), DIPPER_MISUSE);
  dipper_progress rec_unset[2] = {{0}};
  CHECK_EQ(dipper_query_recent_progress(qs[0], rec_unset, 2, &nold), DIPPER_MISUSE);
  CHECK_EQ(nold, 0);
  dipper_query_free_all(qs, n);

  /* reports handed to a dipper_progress_fn are the library's whole struct */
  reports_seen = 0;
  CHECK_EQ(dipper_run(prog, check_report_size, NULL), DIPPER_OK);
  CHECK(reports_seen >= 1);
  dipper_program_free(prog);
  dipper_close(db);
}

/* ---- the listener bus on the embedded engine ---- */

typedef struct seen_events {
  int progress[2], idle, terminated[2], other;
  int64_t out_rows[2];      /* the sum of the PROGRESS reports' output_rows */
  int64_t last_total[2];    /* total_output_rows of the last report */
  int64_t last_batch[2];
  bool ordered;             /* batch ids rose report by report */
  const char *error;        /* a TERMINATED's error (copied) */
  char error_text[512];
  int stop_after;           /* return 1 after this many events (0: never) */
  int events;
  dipper_query *qs[2];
} seen_events;

static void seen_init(seen_events *s, dipper_query *a, dipper_query *b) {
  memset(s, 0, sizeof *s);
  s->ordered = true;
  s->last_batch[0] = s->last_batch[1] = -1;
  s->qs[0] = a;
  s->qs[1] = b;
}

static int on_event(void *user, const dipper_event *ev) {
  seen_events *s = user;
  s->events++;
  CHECK_EQ(ev->size, sizeof *ev); /* the library's struct, whole */
  int k = ev->query == s->qs[0] ? 0 : ev->query == s->qs[1] ? 1 : -1;
  if (k < 0) {
    s->other++;
    return 0;
  }
  CHECK(ev->name != NULL);
  CHECK(ev->id == NULL && ev->run_id == NULL && ev->json == NULL); /* Spark's only */
  switch (ev->kind) {
  case DIPPER_EVENT_PROGRESS:
    CHECK(ev->progress != NULL);
    if (!ev->progress) break;
    CHECK_EQ(ev->progress->size, sizeof *ev->progress);
    if (ev->progress->batch_id <= s->last_batch[k]) s->ordered = false;
    s->last_batch[k] = ev->progress->batch_id;
    s->progress[k]++;
    s->out_rows[k] += ev->progress->output_rows;
    s->last_total[k] = ev->progress->total_output_rows;
    break;
  case DIPPER_EVENT_TERMINATED:
    CHECK(ev->progress == NULL);
    s->terminated[k]++;
    if (ev->error) {
      snprintf(s->error_text, sizeof s->error_text, "%s", ev->error);
      s->error = s->error_text;
    }
    break;
  case DIPPER_EVENT_IDLE: s->idle++; break;
  }
  return s->stop_after > 0 && s->events >= s->stop_after;
}

static const char *const two_bounded =
    "CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5000');\n"
    "CREATE TABLE h (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '700');\n"
    "CREATE TABLE a (id BIGINT, v INT) WITH ('connector' = 'blackhole');\n"
    "CREATE TABLE b (id BIGINT) WITH ('connector' = 'blackhole');\n"
    "EXECUTE STATEMENT SET BEGIN\n"
    "  INSERT INTO a SELECT id, v FROM g;\n"
    "  INSERT INTO b SELECT id FROM h;\n"
    "END;\n";

TEST(listen_tells_every_batch_and_each_end) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, two_bounded, "l.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 2);
  if (n != 2) return;
  seen_events s;
  seen_init(&s, qs[0], qs[1]);
  /* no limit: returns once both have ended */
  CHECK_EQ(dipper_listen(db, on_event, &s, -1), DIPPER_OK);
  CHECK_EQ(s.terminated[0], 1);
  CHECK_EQ(s.terminated[1], 1);
  CHECK(s.error == NULL);
  CHECK(s.progress[0] >= 1 && s.progress[1] >= 1);
  CHECK(s.ordered);
  CHECK_EQ(s.other, 0);
  /* every batch was told: the reports add up to the totals */
  CHECK_EQ(s.out_rows[0], 5000);
  CHECK_EQ(s.last_total[0], 5000);
  CHECK_EQ(s.out_rows[1], 700);
  CHECK_EQ(s.last_total[1], 700);
  dipper_progress p = {sizeof p};
  CHECK_EQ(dipper_query_progress(qs[1], &p), DIPPER_OK);
  CHECK_EQ(p.finished, 1);
  CHECK_EQ(p.batch_id, s.last_batch[1]);
  /* nothing left to listen to: at once */
  int events = s.events;
  CHECK_EQ(dipper_listen(db, on_event, &s, -1), DIPPER_OK);
  CHECK_EQ(s.events, events);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(listen_stops_when_told_and_at_the_timeout) {
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, endless_run, "e.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 2);
  if (n != 2) return;
  seen_events s;
  seen_init(&s, qs[0], qs[1]);
  /* the callback's word ends it */
  s.stop_after = 3;
  CHECK_EQ(dipper_listen(db, on_event, &s, -1), DIPPER_OK);
  CHECK_EQ(s.events, 3);
  CHECK_EQ(s.terminated[0] + s.terminated[1], 0);
  /* an endless query: the timeout ends it, with batches told meanwhile */
  s.stop_after = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_EQ(dipper_listen(db, on_event, &s, 400), DIPPER_OK);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  CHECK(secs >= 0.39);
  CHECK(s.progress[0] + s.progress[1] > 3);
  CHECK(s.ordered);
  /* the reports told are the queries' own */
  dipper_progress p = {sizeof p};
  CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
  CHECK_EQ(p.batch_id, s.last_batch[0]);
  CHECK_EQ(p.total_output_rows, s.last_total[0]);
  /* a stopped query is no longer listened to; interrupt ends the listening */
  CHECK_EQ(dipper_query_stop(qs[0]), DIPPER_OK);
  int before = s.progress[0];
  dipper_interrupt(db);
  CHECK_EQ(dipper_listen(db, on_event, &s, -1), DIPPER_INTERRUPTED);
  CHECK_CONTAINS(dipper_errmsg(db), "interrupted");
  CHECK_EQ(dipper_listen(db, on_event, &s, 100), DIPPER_OK); /* the flag was honoured */
  CHECK_EQ(s.progress[0], before);
  CHECK_EQ(dipper_listen(NULL, on_event, &s, 0), DIPPER_MISUSE);
  CHECK_EQ(dipper_listen(db, NULL, &s, 0), DIPPER_MISUSE);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(listen_tells_a_failure_as_the_end) {
  char dir[] = "/tmp/dipper_listen_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[96], sql[512];
  snprintf(path, sizeof path, "%s/in.json", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("{\"n\": 1}\n{\"n\": \"not a number\"}\n", f);
  fclose(f);
  snprintf(sql, sizeof sql,
           "CREATE TABLE src (n INT) WITH ('connector' = 'filesystem', 'path' = '%s', "
           "'format' = 'json');\n"
           "CREATE TABLE bh (n INT) WITH ('connector' = 'blackhole');\n"
           "INSERT INTO bh SELECT n FROM src;\n",
           path);
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, sql, "f.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 1);
  if (n == 1) {
    seen_events s;
    seen_init(&s, qs[0], NULL);
    /* the query's failure is its TERMINATED event, not the call's error */
    CHECK_EQ(dipper_listen(db, on_event, &s, 10000), DIPPER_OK);
    CHECK_EQ(s.terminated[0], 1);
    CHECK(s.error != NULL);
    if (s.error) CHECK_CONTAINS(s.error, "`n`");
    dipper_status st = {sizeof st};
    CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
    CHECK_STR(st.message, "Failed");
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  unlink(path);
  rmdir(dir);
}

/* An interval join of two bounded inputs in streaming mode runs as a join of
** two streams: the watermark evicts its state as the inputs are read, so the
** state stays near a micro-batch's worth instead of growing to the inputs'
** size (the rows out are those the bounded join gives). */
TEST(bounded_interval_join_keeps_bounded_state) {
  dipper *db = open_embedded();
  char *nexmark = NULL;
  {
    char path[512];
    snprintf(path, sizeof path, "%s/bench/queries/nexmark.sql", DIPPER_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    nexmark = calloc((size_t)len + 64, 1);
    if (nexmark && fread(nexmark, 1, (size_t)len, f) != (size_t)len) len = 0;
    fclose(f);
    char *num = nexmark ? strstr(nexmark, "'10000000'") : NULL;
    CHECK(num != NULL);
    if (num) memcpy(num, "'00600000'", 10); /* 600,000 events */
  }
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, nexmark, "nexmark.sql", &prog), DIPPER_OK);
  dipper_program_free(prog);
  prog = NULL;
  free(nexmark);
  CHECK_EQ(compile(db,
                   "CREATE TABLE j_out (auction BIGINT, price BIGINT, seller BIGINT)\n"
                   "  WITH ('connector' = 'blackhole');\n"
                   "INSERT INTO j_out SELECT B.auction, B.price, A.seller\n"
                   "FROM bid B JOIN auction A ON B.auction = A.id\n"
                   "  AND B.dateTime BETWEEN A.dateTime AND A.dateTime + INTERVAL '10' SECOND;\n",
                   "join.sql", &prog),
           DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 1);
  int64_t max_state = 0, batches = 0;
  dipper_progress p = {sizeof p};
  for (int finished = 0; n == 1 && !finished && batches < 1000;) {
    CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
    CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
    if (p.state_rows > max_state) max_state = p.state_rows;
    batches++;
  }
  CHECK_EQ(p.finished, 1);
  CHECK_EQ(p.total_input_rows, 1200000); /* two scans of the 600,000 events */
  CHECK_EQ(p.total_output_rows, 527180); /* as the bounded join gave (the same rows, checked) */
  CHECK_EQ(p.state_rows, 0);
  fprintf(stderr, "  bounded interval join: largest state %lld rows\n", (long long)max_state);
  CHECK(max_state > 0);
  CHECK(max_state < 300000); /* held whole, it would reach 590,000 (bids and auctions) */
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(query_management_misuse) {
  int terminated = 7, n = 7;
  dipper_status st = {sizeof st};
  CHECK_EQ(dipper_query_status(NULL, &st), DIPPER_MISUSE);
  CHECK_EQ(dipper_query_await(NULL, 0, &terminated), DIPPER_MISUSE);
  CHECK_EQ(terminated, 0);
  CHECK_EQ(dipper_query_stop(NULL), DIPPER_MISUSE);
  CHECK_EQ(dipper_query_recent_progress(NULL, NULL, 0, &n), DIPPER_MISUSE);
  CHECK_EQ(n, 0);
  CHECK(dipper_query_name(NULL) == NULL);
  CHECK(dipper_query_id(NULL) == NULL);
  CHECK_EQ(dipper_active_queries(NULL, NULL, 0, &n), DIPPER_MISUSE);
  CHECK_EQ(dipper_program_streaming(NULL), 0);
  dipper *db = open_embedded();
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, "SET 'execution.runtime-mode' = 'batch';\nSELECT 1 AS one;\n", "m.sql", &prog),
           DIPPER_OK);
  CHECK_EQ(dipper_program_streaming(prog), 0);
  CHECK_EQ(dipper_active_queries(db, NULL, 0, &n), DIPPER_OK); /* cap 0: just the count */
  CHECK_EQ(n, 0);
  dipper_program_free(prog);
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
