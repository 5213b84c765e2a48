/*
** api_test.c — the public API on a handle opened on Spark Connect (needs the
** spark_server fixture): dipper_execute's rows, INSERTs into dipper's own
** memory sink through dipper_query_start/step, compile-time refusals with
** their place, a lazy connection (errors at the first run, naming the
** address), Spark's errors with their class, streaming refused for now.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dipper.h"
#include "test.h"

#define SPARK "sc://127.0.0.1:15002"

static const char *const sales =
    "SET 'execution.runtime-mode' = 'batch';\n"
    "CREATE TABLE sales (r STRING, q INT) WITH ('connector' = 'memory');\n"
    "CREATE TABLE out (r STRING, total BIGINT) WITH ('connector' = 'memory');\n"
    "SELECT r, SUM(q) AS total, COUNT(*) AS n FROM sales GROUP BY r ORDER BY r;\n"
    "INSERT INTO out SELECT r, SUM(q) FROM sales WHERE q IS NOT NULL GROUP BY r;\n";

static void push_sales(dipper *db) {
  CHECK_EQ(dipper_memory_push_json(db, "sales",
                                   "{\"r\":\"n\",\"q\":2}\n{\"r\":\"s\",\"q\":5}\n"
                                   "{\"r\":\"n\",\"q\":null}\n{\"r\":\"n\",\"q\":4}\n",
                                   (size_t)-1),
           DIPPER_OK);
}

static int compile(dipper *db, const char *sql, dipper_program **prog) {
  int rc = dipper_compile(db, sql, (size_t)-1, "t.sql", prog);
  if (rc != DIPPER_OK) fprintf(stderr, "  (compile) %s\n", dipper_errmsg(db));
  return rc;
}

TEST(execute_select_on_spark) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, sales, &prog), DIPPER_OK);
  push_sales(db);
  struct ArrowArrayStream st;
  int rc = dipper_execute(prog, 3, &st);
  if (rc) fprintf(stderr, "  %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  if (rc == DIPPER_OK) {
    struct ArrowSchema schema;
    CHECK_EQ(st.get_schema(&st, &schema), 0);
    CHECK_EQ(schema.n_children, 3);
    CHECK_STR(schema.children[0]->name, "r");
    CHECK_STR(schema.children[1]->name, "total");
    CHECK_STR(schema.children[2]->format, "l");
    int64_t rows = 0, n_of_n = -1, total_of_s = -1;
    for (;;) {
      struct ArrowArray a;
      CHECK_EQ(st.get_next(&st, &a), 0);
      if (!a.release) break;
      const int32_t *off = a.children[0]->buffers[1];
      const char *bytes = a.children[0]->buffers[2];
      for (int64_t i = 0; i < a.length; i++) {
        int64_t j = a.children[0]->offset + i;
        int64_t total = ((const int64_t *)a.children[1]->buffers[1])[a.children[1]->offset + i];
        int64_t n = ((const int64_t *)a.children[2]->buffers[1])[a.children[2]->offset + i];
        if (off[j + 1] - off[j] == 1 && bytes[off[j]] == 'n') n_of_n = n;
        if (off[j + 1] - off[j] == 1 && bytes[off[j]] == 's') total_of_s = total;
      }
      rows += a.length;
      a.release(&a);
    }
    CHECK_EQ(rows, 2);
    CHECK_EQ(n_of_n, 3);
    CHECK_EQ(total_of_s, 5);
    schema.release(&schema);
    st.release(&st);
  }
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(insert_into_memory_through_query_handles) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, sales, &prog), DIPPER_OK);
  push_sales(db);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 2); /* the SELECT and the INSERT */
  int finished = 0;
  int rc = n == 2 ? dipper_query_step(qs[1], &finished) : -1;
  if (rc) fprintf(stderr, "  %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(finished, 1);
  dipper_progress p;
  if (n == 2) {
    CHECK_EQ(dipper_query_progress(qs[1], &p), DIPPER_OK);
    CHECK_STR(p.name, "out");
    CHECK_EQ(p.batch_id, 0);
    CHECK_EQ(p.output_rows, 2);
    CHECK_EQ(p.finished, 1);
  }
  struct ArrowSchema schema;
  struct ArrowArray array;
  CHECK_EQ(dipper_memory_fetch(db, "out", &schema, &array), DIPPER_OK);
  CHECK_EQ(array.length, 2);
  if (array.release) array.release(&array);
  if (schema.release) schema.release(&schema);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(refused_at_compile_with_place) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, "sc://127.0.0.1:1"), DIPPER_OK); /* no server needed */
  dipper_program *prog = NULL;
  int rc = dipper_compile(db,
                          "SET 'execution.runtime-mode' = 'batch';\n"
                          "CREATE TABLE t (k INT, ts TIMESTAMP(3)) WITH ('connector' = 'memory');\n"
                          "SELECT window_start, COUNT(*) FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts),\n"
                          "  INTERVAL '1' MINUTE, INTERVAL '1' HOUR)) GROUP BY window_start, window_end;\n",
                          (size_t)-1, "c.sql", &prog);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK(prog == NULL);
  const dipper_diag *g = dipper_diag_get(db, 0);
  CHECK(g != NULL && g->line >= 3);
  CHECK_CONTAINS(dipper_errmsg(db), "CUMULATE");
  dipper_close(db);
}

TEST(errors_reach_errmsg) {
  /* connection: lazily, at the first run, naming the address */
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, "sc://127.0.0.1:1"), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, sales, &prog), DIPPER_OK);
  struct ArrowArrayStream st;
  CHECK_EQ(dipper_execute(prog, 3, &st), DIPPER_CONNECT);
  CHECK(st.release == NULL);
  CHECK_CONTAINS(dipper_errmsg(db), "cannot reach Spark Connect at 127.0.0.1:1");
  dipper_program_free(prog);
  dipper_close(db);

  /* Spark's own error, with its class */
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  CHECK_EQ(compile(db,
                   "SET 'execution.runtime-mode' = 'batch';\n"
                   "CREATE TABLE f (id BIGINT) WITH ('connector' = 'filesystem',\n"
                   "  'path' = '/nonexistent/dipper-api-test', 'format' = 'json');\n"
                   "SELECT id FROM f;\n",
                   &prog),
           DIPPER_OK);
  CHECK_EQ(dipper_execute(prog, 2, &st), DIPPER_REMOTE);
  CHECK_CONTAINS(dipper_errmsg(db), "Spark: [PATH_NOT_FOUND]");
  dipper_program_free(prog);

  dipper_close(db);

  /* streaming on Spark (a fresh handle: SET outlives a program): refused when
  ** the query starts, saying so */
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  CHECK_EQ(compile(db, "SELECT 1 AS one", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_UNSUPPORTED);
  CHECK_CONTAINS(dipper_errmsg(db), "streaming queries on Spark are not supported yet");
  CHECK(qs == NULL);
  CHECK_EQ(dipper_execute(prog, 0, &st), DIPPER_UNSUPPORTED);
  dipper_program_free(prog);
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
