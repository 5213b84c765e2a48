/*
** udf_test.c — user-defined functions on a real Spark Connect server (the
** spark_server fixture): a Java class (tests/spark/java/dipper/test/
** CountChar.java, Nexmark q14's count_char) compiled here against the pinned
** Spark's jars with javac, its jar uploaded by dipper through AddArtifacts
** and registered as a JavaUDF; called in a query whose answer is checked.
** A SQL function runs on Spark too (it is expanded into built-ins).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dipper.h"
#include "test.h"

#define SPARK "sc://127.0.0.1:15002"

/* Build the jar into dir/udfs.jar; its path, or NULL. */
static char *build_jar(const char *dir) {
  char home[1024] = "";
  FILE *p = popen(DIPPER_SOURCE_DIR "/scripts/spark-local path", "r");
  if (!p) return NULL;
  if (!fgets(home, sizeof home, p)) home[0] = '\0';
  pclose(p);
  home[strcspn(home, "\n")] = '\0';
  if (!home[0]) return NULL;
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "javac --release 17 -cp '%s/jars/*' -d '%s' " DIPPER_SOURCE_DIR
           "/tests/spark/java/dipper/test/CountChar.java && jar cf '%s/udfs.jar' -C '%s' dipper",
           home, dir, dir, dir);
  if (system(cmd) != 0) return NULL;
  char *jar = malloc(strlen(dir) + 16);
  if (jar) sprintf(jar, "%s/udfs.jar", dir);
  return jar;
}

static void print_diags(dipper *db) {
  for (int i = 0; i < dipper_diag_count(db); i++) {
    char *r = dipper_diag_render(db, i);
    fprintf(stderr, "  (diagnostic) %s", r ? r : "(no render)\n");
    dipper_free(r);
  }
}

/* The rows of statement stmt as "a|b\n" lines. */
static const char *rows_of(dipper *db, dipper_program *prog, int stmt, char *buf, size_t cap) {
  buf[0] = '\0';
  struct ArrowArrayStream st;
  if (dipper_execute(prog, stmt, &st) != DIPPER_OK) {
    print_diags(db);
    return "(failed)";
  }
  struct ArrowSchema schema;
  CHECK_EQ(st.get_schema(&st, &schema), 0);
  size_t at = 0;
  for (;;) {
    struct ArrowArray a;
    if (st.get_next(&st, &a) != 0 || !a.release) break;
    char **cells = NULL;
    CHECK_EQ(dipper_format_values(&schema, &a, 0, &cells), DIPPER_OK);
    for (int64_t r = 0; cells && r < a.length; r++)
      for (int64_t c = 0; c < a.n_children; c++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", cells[r * a.n_children + c],
                               c + 1 == a.n_children ? "\n" : "|");
    dipper_free(cells);
    a.release(&a);
  }
  schema.release(&schema);
  st.release(&st);
  return buf;
}

TEST(java_function_uploaded_registered_and_called) {
  char tmpl[] = "/tmp/dipper-jar-XXXXXX";
  char *dir = mkdtemp(tmpl);
  CHECK(dir != NULL);
  char *jar = dir ? build_jar(dir) : NULL;
  CHECK(jar != NULL);
  if (!jar) return;
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';\n"
           "CREATE TEMPORARY FUNCTION count_char(s STRING, c STRING) RETURNS INT\n"
           "  AS 'dipper.test.CountChar' USING JAR '%s';\n"
           "CREATE FUNCTION twice(x INT) RETURNS INT RETURN x * 2;\n"
           "SELECT w, count_char(w, 'a') AS n, twice(count_char(w, 'p')) AS p\n"
           "FROM (VALUES ('banana'), ('apple'), (CAST(NULL AS STRING))) AS t(w) ORDER BY w;\n",
           jar);
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "udf.sql", &prog);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) print_diags(db);
  char buf[1024];
  if (prog) {
    CHECK_STR(rows_of(db, prog, 3, buf, sizeof buf), "NULL|NULL|NULL\napple|1|4\nbanana|3|0\n");
    /* again: the jar is not uploaded twice, the function registered again */
    CHECK_STR(rows_of(db, prog, 3, buf, sizeof buf), "NULL|NULL|NULL\napple|1|4\nbanana|3|0\n");
  }
  dipper_program_free(prog);
  dipper_close(db);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
  free(jar);
}

int main(void) { return RUN_TESTS(); }
