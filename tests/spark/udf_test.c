/*
** udf_test.c — user-defined functions on a real Spark Connect server
** ($DIPPER_SPARK_REMOTE, else 127.0.0.1:15002; ctest runs this file on Spark
** 4.1.1 and on 4.2.0): Java classes of tests/spark/java/dipper/test/,
** compiled here by scripts/spark-java-jar against the pinned Spark's jars,
** their jar uploaded by dipper through AddArtifacts and registered as
** JavaUDFs:
**  - CountChar (Nexmark q14's count_char, a UDF2): a scalar, called in a
**    query and in q14 itself, whose answers are those of the embedded engine
**    running the same count as a C function;
**  - SumLen (a UserDefinedAggregateFunction): an aggregate, as dipper reads
**    from its class file, in a GROUP BY (batch, rows exact) and in a
**    streaming aggregation whose batches reach a C callback (rows exact per
**    batch id);
**  - TypedSum (an Aggregator): refused at CREATE FUNCTION with the reason;
**  - on the embedded engine, a call of either refused with the reason.
** A SQL function runs on Spark too (it is expanded into built-ins).
*/
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dipper.h"
#include "spark/spark_env.h"
#include "test.h"



/* The jar of every class of tests/spark/java, made once into dir/udfs.jar. */
static char jar[512];

static bool build_jar(const char *dir) {
  snprintf(jar, sizeof jar, "%s/udfs.jar", dir);
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           DIPPER_SOURCE_DIR "/scripts/spark-java-jar '%s' " DIPPER_SOURCE_DIR
           "/tests/spark/java/dipper/test/*.java",
           jar);
  return system(cmd) == 0;
}


/* The rows of statement stmt as "a|b\n" lines. */
static const char *rows_of(dipper *db, dipper_program *prog, int stmt, char *buf, size_t cap) {
  buf[0] = '\0';
  struct ArrowArrayStream st;
  if (dipper_execute(prog, stmt, &st) != DIPPER_OK) {
    spark_print_diags(db);
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
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
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
  if (rc) spark_print_diags(db);
  char buf[1024];
  if (prog) {
    CHECK_STR(rows_of(db, prog, 3, buf, sizeof buf), "NULL|NULL|NULL\napple|1|4\nbanana|3|0\n");
    /* again: the jar is not uploaded twice, the function registered again */
    CHECK_STR(rows_of(db, prog, 3, buf, sizeof buf), "NULL|NULL|NULL\napple|1|4\nbanana|3|0\n");
  }
  dipper_program_free(prog);
  dipper_close(db);
}

/* ---- Nexmark q14 with count_char: a Java class on Spark, a C function embedded ---- */

static int c_count_char(dipper_function_ctx *ctx, int nargs, const struct ArrowSchema *const *schemas,
                        const struct ArrowArray *const *args, int64_t nrows, struct ArrowArray *out);

#define Q14_BIDS                                                                                   \
  "CREATE TEMPORARY VIEW bid AS SELECT * FROM (VALUES "                                          \
  "(1, 10, 2000000, TIMESTAMP '2026-01-01 09:30:00', 'accccb'), "                                \
  "(2, 11, 900, TIMESTAMP '2026-01-01 10:00:00', 'ccc'), "                                       \
  "(3, 12, 3000000, TIMESTAMP '2026-01-01 22:15:00', 'abc'), "                                   \
  "(4, 13, 5000000, TIMESTAMP '2026-01-01 19:00:00', CAST(NULL AS STRING)), "                    \
  "(5, 14, 60000000, TIMESTAMP '2026-01-01 07:00:00', 'cc')) "                                   \
  "AS t(auction, bidder, price, `dateTime`, extra);\n"
#define Q14_QUERY                                                                                  \
  "SELECT auction, bidder, 0.908 * price AS price,\n"                                            \
  "  CASE WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'\n"                \
  "       WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'\n"               \
  "       ELSE 'otherTime' END AS bidTimeType,\n"                                                \
  "  extra, count_char(extra, 'c') AS c_counts\n"                                                \
  "FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000 ORDER BY auction;\n"

static void q14_rows(bool on_spark, char *buf, size_t cap) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, on_spark ? spark_remote() : NULL), DIPPER_OK);
  char sql[4096];
  if (on_spark)
    snprintf(sql, sizeof sql,
             "SET 'execution.runtime-mode' = 'batch';\n"
             "CREATE TEMPORARY FUNCTION count_char(s STRING, c STRING) RETURNS INT\n"
             "  AS 'dipper.test.CountChar' USING JAR '%s';\n" Q14_BIDS Q14_QUERY,
             jar);
  else
    snprintf(sql, sizeof sql, "SET 'execution.runtime-mode' = 'batch';\n" Q14_BIDS Q14_QUERY);
  if (!on_spark) {
    static const char *const str2[] = {"STRING", "STRING"};
    CHECK_EQ(dipper_create_scalar_function(db, "count_char", 2, str2, "INT",
                                           DIPPER_FUNCTION_DETERMINISTIC, c_count_char, NULL, NULL),
             DIPPER_OK);
  }
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "q14.sql", &prog);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) spark_print_diags(db);
  if (prog) rows_of(db, prog, on_spark ? 3 : 2, buf, cap);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(nexmark_q14_count_char_on_spark_as_embedded) {
  char spark[2048], embedded[2048];
  q14_rows(true, spark, sizeof spark);
  q14_rows(false, embedded, sizeof embedded);
  CHECK_STR(spark, "1|10|1816000.000|dayTime|accccb|4\n"
                   "3|12|2724000.000|nightTime|abc|1\n"
                   "4|13|4540000.000|otherTime|NULL|NULL\n");
  CHECK_STR(spark, embedded);
}

/* ---- a Java aggregate ---- */

#define SUM_LEN "CREATE TEMPORARY FUNCTION sum_len(s STRING) RETURNS BIGINT AS 'dipper.test.SumLen' USING JAR '%s';\n"

TEST(java_aggregate_in_a_group_by) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  char sql[4096];
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';\n" SUM_LEN
           "CREATE TEMPORARY FUNCTION count_char(s STRING, c STRING) RETURNS INT\n"
           "  AS 'dipper.test.CountChar' USING JAR '%s';\n"
           "CREATE TEMPORARY VIEW w AS SELECT * FROM (VALUES ('x', 'banana'), ('x', 'apple'), "
           "('y', CAST(NULL AS STRING)), ('y', 'kiwi'), ('z', CAST(NULL AS STRING))) AS t(k, s);\n"
           "SELECT k, sum_len(s) AS n, COUNT(*) AS c, SUM(count_char(s, 'a')) AS a FROM w "
           "GROUP BY k ORDER BY k;\n"
           "SELECT sum_len(s) AS n FROM w;\n"
           "SELECT k FROM w GROUP BY k HAVING sum_len(s) > 4 ORDER BY k;\n",
           jar, jar);
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "udaf.sql", &prog);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) spark_print_diags(db);
  char buf[1024];
  if (prog) {
    CHECK_STR(rows_of(db, prog, 4, buf, sizeof buf), "x|11|2|4\ny|4|2|0\nz|NULL|1|NULL\n");
    CHECK_STR(rows_of(db, prog, 5, buf, sizeof buf), "15\n");
    CHECK_STR(rows_of(db, prog, 6, buf, sizeof buf), "x\n");
  }
  dipper_program_free(prog);
  dipper_close(db);
}

/* What the callback got: each batch's rows as sorted "a|b" lines. */
typedef struct got {
  int n;
  int64_t ids[8];
  char rows[8][256];
} got;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int on_batch(void *user, int64_t id, struct ArrowSchema *schema, struct ArrowArray *array) {
  got *g = user;
  char **cells = NULL;
  int rc = dipper_format_values(schema, array, 0, &cells);
  char *lines[32];
  int nl = 0;
  for (int64_t r = 0; rc == DIPPER_OK && r < array->length && nl < 32; r++) {
    char line[128];
    snprintf(line, sizeof line, "%s|%s\n", cells[r * 2], cells[r * 2 + 1]);
    lines[nl++] = strdup(line);
  }
  qsort(lines, (size_t)nl, sizeof *lines, cmp_str);
  char text[256] = "";
  size_t at = 0;
  for (int i = 0; i < nl; i++) {
    at += (size_t)snprintf(text + at, sizeof text - at, "%s", lines[i]);
    free(lines[i]);
  }
  dipper_free(cells);
  array->release(array);
  schema->release(schema);
  if (g->n < 8) {
    g->ids[g->n] = id;
    snprintf(g->rows[g->n], sizeof g->rows[g->n], "%s", text);
    g->n++;
  }
  return 0;
}

static void add_file(const char *dir, const char *in, int i, const char *lines) {
  char tmp[256], dst[256];
  snprintf(tmp, sizeof tmp, "%s/f%d.tmp", dir, i);
  snprintf(dst, sizeof dst, "%s/f%d.json", in, i);
  FILE *f = fopen(tmp, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(lines, f);
  fclose(f);
  CHECK_EQ(rename(tmp, dst), 0);
}

static int step_until(dipper_query *q, got *g, int want) {
  int64_t end = spark_now_ms() + 90000;
  while (g->n < want && spark_now_ms() < end) {
    int fin = 0;
    int rc = dipper_query_step(q, &fin);
    if (rc != DIPPER_OK) return rc;
  }
  return DIPPER_OK;
}

TEST(java_aggregate_in_a_streaming_query) {
  char tmpl[] = "/tmp/dipper-udaf-XXXXXX";
  char *dir = mkdtemp(tmpl);
  CHECK(dir != NULL);
  if (!dir) return;
  char in[128], ckpt[128], cmd[512];
  snprintf(in, sizeof in, "%s/in", dir);
  snprintf(ckpt, sizeof ckpt, "%s/ckpt", dir);
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s'", in, ckpt);
  CHECK_EQ(system(cmd), 0);
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  got g = {0};
  CHECK_EQ(dipper_register_callback(db, "lens", on_batch, &g), DIPPER_OK);
  char sql[4096];
  snprintf(sql, sizeof sql,
           "SET 'execution.checkpointing.dir' = '%s';\n"
           "SET 'dipper.output-mode' = 'update';\n" SUM_LEN
           "CREATE TABLE src (k STRING, w STRING) WITH ('connector' = 'filesystem', 'path' = '%s', "
           "'format' = 'json', 'source.monitor-interval' = '1 s');\n"
           "CREATE TABLE out (k STRING, n BIGINT) WITH ('connector' = 'callback', 'name' = 'lens');\n"
           "INSERT INTO out SELECT k, sum_len(w) FROM src GROUP BY k;\n",
           ckpt, jar, in);
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "udaf_stream.sql", &prog);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) spark_print_diags(db);
  dipper_query **qs = NULL;
  int n = 0;
  rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) spark_print_diags(db);
  if (rc == DIPPER_OK && n == 1) {
    add_file(dir, in, 0, "{\"k\":\"a\",\"w\":\"xy\"}\n{\"k\":\"b\",\"w\":\"hello\"}\n"
                         "{\"k\":\"a\",\"w\":\"z\"}\n{\"k\":\"b\",\"w\":null}\n");
    CHECK_EQ(step_until(qs[0], &g, 1), DIPPER_OK);
    add_file(dir, in, 1, "{\"k\":\"a\",\"w\":\"four\"}\n");
    rc = step_until(qs[0], &g, 2);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) spark_print_diags(db);
    CHECK_EQ(g.n, 2);
    CHECK_EQ(g.ids[0], 0);
    CHECK_EQ(g.ids[1], 1);
    CHECK_STR(g.rows[0], "a|3\nb|5\n");
    CHECK_STR(g.rows[1], "a|7\n"); /* update mode: the group that changed */
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
}

TEST(refusals) {
  /* an Aggregator: Spark Connect cannot register one from its name */
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TEMPORARY FUNCTION tsum(v BIGINT) RETURNS BIGINT AS 'dipper.test.TypedSum' "
           "USING JAR '%s';\n",
           jar);
  dipper_program *prog = NULL;
  CHECK(dipper_compile(db, sql, (size_t)-1, "tsum.sql", &prog) != DIPPER_OK);
  CHECK_CONTAINS(dipper_errmsg(db), "extends Spark's Aggregator");
  CHECK_CONTAINS(dipper_errmsg(db), "UserDefinedAggregateFunction instead");
  dipper_program_free(prog);
  dipper_close(db);
  /* the embedded engine runs no Java: a call of the aggregate is refused */
  db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';\n" SUM_LEN
           "SELECT k, sum_len(s) FROM (VALUES ('x', 'ab')) AS t(k, s) GROUP BY k;\n",
           jar);
  prog = NULL;
  CHECK(dipper_compile(db, sql, (size_t)-1, "embedded.sql", &prog) != DIPPER_OK);
  CHECK_CONTAINS(dipper_errmsg(db), "function sum_len is the Java class 'dipper.test.SumLen'");
  dipper_program_free(prog);
  dipper_close(db);
}

/* count_char as a C function, for the embedded side of q14 (the same as
** tests/api/udf_test.c's): an INT array, NULL where an argument is. */
typedef struct owned {
  void *valid, *values;
  const void *buffers[2];
} owned;

static void release_owned(struct ArrowArray *a) {
  owned *o = a->private_data;
  free(o->valid);
  free(o->values);
  free(o);
  a->release = NULL;
}

static bool valid_at(const struct ArrowArray *a, int64_t r) {
  const uint8_t *v = a->null_count ? a->buffers[0] : NULL;
  int64_t j = a->offset + r;
  return !v || ((v[j >> 3] >> (j & 7)) & 1);
}

static int c_count_char(dipper_function_ctx *ctx, int nargs, const struct ArrowSchema *const *schemas,
                        const struct ArrowArray *const *args, int64_t nrows, struct ArrowArray *out) {
  if (nargs != 2 || strcmp(schemas[0]->format, "u") != 0 || strcmp(schemas[1]->format, "u") != 0)
    return dipper_function_error(ctx, -1, "wants two strings");
  memset(out, 0, sizeof *out);
  owned *o = calloc(1, sizeof *o);
  uint8_t *valid = o->valid = calloc((size_t)(nrows + 8) / 8, 1);
  int32_t *v = o->values = calloc((size_t)(nrows ? nrows : 1), sizeof *v);
  o->buffers[0] = valid;
  o->buffers[1] = v;
  out->length = nrows;
  out->n_buffers = 2;
  out->buffers = o->buffers;
  out->private_data = o;
  out->release = release_owned;
  for (int64_t r = 0; r < nrows; r++) {
    if (!valid_at(args[0], r) || !valid_at(args[1], r)) {
      out->null_count++;
      continue;
    }
    valid[r >> 3] |= (uint8_t)(1u << (r & 7));
    const int32_t *so = args[0]->buffers[1], *co = args[1]->buffers[1];
    int64_t i = args[0]->offset + r, j = args[1]->offset + r;
    const char *s = (const char *)args[0]->buffers[2] + so[i];
    const char *c = (const char *)args[1]->buffers[2] + co[j];
    for (int32_t k = 0; k < so[i + 1] - so[i]; k++) v[r] += s[k] == c[0];
  }
  return 0;
}

int main(void) {
  char tmpl[] = "/tmp/dipper-jar-XXXXXX";
  char *dir = mkdtemp(tmpl);
  if (!dir || !build_jar(dir)) {
    fprintf(stderr, "udf_test: scripts/spark-java-jar could not build the test's jar\n");
    return 1;
  }
  int rc = RUN_TESTS();
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) rc = 1;
  return rc;
}
