/*
** streaming_modes_test.c — triggers and output modes of dipper's streaming
** INSERTs on a real Spark (127.0.0.1:15002), through the compile pipeline
** and the streaming backend (translate_stream.h, streaming.h):
**
**  - 'dipper.trigger': 'once' (one batch of everything there, then the
**    query ends), 'available-now' (ends by itself after reading all),
**    'processing-time 1 s' (batches come without being asked: the rows show
**    up with no process-all-available);
**  - 'dipper.output-mode' on a GROUP BY without windows, two batches:
**    update (each batch's changed rows appended to the memory sink),
**    complete (the whole result, replaced), inferred (update: no watermark
**    closes a group), append refused at compile time.
**
** Inputs are watched JSON directories; results Spark's memory sink,
** compared exactly.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "spark/streaming.h"
#include "spark/translate_stream.h"
#include "test.h"
#include "spark/kafka_util.c" /* one source file per test target: the helpers come along */

#define SRC \
  "CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '%s/in', " \
  "'format' = 'json', 'source.monitor-interval' = '1 us');\n"

static void expect_out(st_env *e, const char *const *want, int nwant) {
  char **rows = NULL;
  int n = st_table_json(e, "out", NULL, &rows);
  CHECK_EQ(st_expect(rows, n, want, nwant), 0);
  st_free_rows(rows, n);
}

/* Batches with data over a query's recent progress, and their input rows. */
static void batches(st_env *e, const dp_sq *q, int *nbatches, int64_t *rows) {
  dp_sc_error er;
  dp_sc_error_init(&er);
  dp_spark_progress *p = NULL;
  int n = 0;
  *nbatches = 0;
  *rows = 0;
  CHECK_EQ(dp_sq_recent_progress(e->s, q, &p, &n, &er), DIPPER_OK);
  for (int i = 0; i < n; i++) {
    if (p[i].num_input_rows > 0) {
      (*nbatches)++;
      *rows += p[i].num_input_rows;
    }
    dp_spark_progress_free(&p[i]);
  }
  free(p);
  dp_sc_error_free(&er);
}

/* Start sql over two files present at start, await its end by itself. */
static void run_to_end(st_env *e, const char *trigger, int *nbatches, int64_t *rows) {
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = '%s';\n" SRC
           "CREATE TABLE out (k STRING, v INT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT k, v * 10 FROM src",
           trigger, e->dir);
  CHECK_EQ(st_write_file(e, "in", "1.json", "{\"k\":\"a\",\"v\":1}\n{\"k\":\"b\",\"v\":2}\n"), 0);
  CHECK_EQ(st_write_file(e, "in", "2.json", "{\"k\":\"c\",\"v\":3}\n"), 0);
  dp_sq q;
  CHECK_EQ(st_start(e, sql, &q), 0);
  if (q.id[0]) {
    CHECK_EQ(st_finish(e, &q, 1), 0); /* it must end by itself */
    batches(e, &q, nbatches, rows);
  }
  dp_sq_free(&q);
  static const char *const want[] = {
      "{\"k\":\"a\",\"v\":10}", "{\"k\":\"b\",\"v\":20}", "{\"k\":\"c\",\"v\":30}"};
  expect_out(e, want, 3);
}

TEST(trigger_once) {
  st_env e;
  CHECK_EQ(st_open(&e, "trigger_once"), 0);
  int nb = 0;
  int64_t rows = 0;
  run_to_end(&e, "once", &nb, &rows);
  CHECK_EQ(nb, 1); /* one batch held both files */
  CHECK_EQ(rows, 3);
  st_close(&e);
}

TEST(trigger_available_now) {
  st_env e;
  CHECK_EQ(st_open(&e, "trigger_now"), 0);
  int nb = 0;
  int64_t rows = 0;
  run_to_end(&e, "available-now", &nb, &rows);
  CHECK(nb >= 1);
  CHECK_EQ(rows, 3);
  st_close(&e);
}

TEST(trigger_processing_time) {
  st_env e;
  CHECK_EQ(st_open(&e, "trigger_interval"), 0);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'processing-time 1 s';\n" SRC
           "CREATE TABLE out (k STRING, v INT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT k, v FROM src",
           e.dir);
  CHECK_EQ(st_mkdir(&e, "in"), 0);
  dp_sq q;
  CHECK_EQ(st_start(&e, sql, &q), 0);
  CHECK_EQ(st_write_file(&e, "in", "1.json", "{\"k\":\"a\",\"v\":1}\n{\"k\":\"b\",\"v\":2}\n"), 0);
  /* no process-all-available: the trigger fires by itself */
  char **rows = NULL;
  int n = st_wait_rows(&e, "out", NULL, 2, 120000, &rows);
  static const char *const want[] = {"{\"k\":\"a\",\"v\":1}", "{\"k\":\"b\",\"v\":2}"};
  CHECK_EQ(st_expect(rows, n, want, 2), 0);
  st_free_rows(rows, n);
  if (q.id[0]) CHECK_EQ(st_finish(&e, &q, 0), 0);
  dp_sq_free(&q);
  st_close(&e);
}

/* A running sum per key over two batches (a: 1 + 2, then + 4; b: 8). */
static void run_sums(const char *what, const char *mode_set, const char *const *want, int nwant) {
  st_env e;
  CHECK_EQ(st_open(&e, what), 0);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "%s" SRC
           "CREATE TABLE out (k STRING, total BIGINT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT k, SUM(v) FROM src GROUP BY k",
           mode_set, e.dir);
  CHECK_EQ(st_write_file(&e, "in", "1.json",
                         "{\"k\":\"a\",\"v\":1}\n{\"k\":\"a\",\"v\":2}\n{\"k\":\"b\",\"v\":8}\n"),
           0);
  dp_sq q;
  CHECK_EQ(st_start(&e, sql, &q), 0);
  if (q.id[0]) {
    CHECK_EQ(st_drain(&e, &q), 0);
    CHECK_EQ(st_write_file(&e, "in", "2.json", "{\"k\":\"a\",\"v\":4}\n"), 0);
    CHECK_EQ(st_finish(&e, &q, 0), 0);
  }
  dp_sq_free(&q);
  expect_out(&e, want, nwant);
  st_close(&e);
}

TEST(output_mode_update) {
  /* each batch appends the groups it changed */
  static const char *const want[] = {
      "{\"k\":\"a\",\"total\":3}", "{\"k\":\"a\",\"total\":7}", "{\"k\":\"b\",\"total\":8}"};
  run_sums("mode_update", "SET 'dipper.output-mode' = 'update';\n", want, 3);
}

TEST(output_mode_inferred_is_update) {
  static const char *const want[] = {
      "{\"k\":\"a\",\"total\":3}", "{\"k\":\"a\",\"total\":7}", "{\"k\":\"b\",\"total\":8}"};
  run_sums("mode_inferred", "", want, 3);
}

TEST(output_mode_complete) {
  /* the whole result after the last batch, replacing the first */
  static const char *const want[] = {"{\"k\":\"a\",\"total\":7}", "{\"k\":\"b\",\"total\":8}"};
  run_sums("mode_complete", "SET 'dipper.output-mode' = 'complete';\n", want, 2);
}

TEST(output_mode_append_refused_for_an_open_aggregation) {
  st_env e;
  CHECK_EQ(st_open(&e, "mode_append"), 0);
  char sql[2048], why[1024];
  snprintf(sql, sizeof sql,
           "SET 'dipper.output-mode' = 'append';\n" SRC
           "CREATE TABLE out (k STRING, total BIGINT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT k, SUM(v) FROM src GROUP BY k",
           e.dir);
  int rc = st_refusal(&e, sql, why, sizeof why);
  CHECK(rc != DIPPER_OK);
  CHECK_CONTAINS(why, "test.sql:4:43: error: append mode emits a row only once it is final, but "
                      "SUM per k changes with every new row");
  CHECK_CONTAINS(why, "SET 'dipper.output-mode' = 'update'");
  st_close(&e);
}

TEST(bad_trigger_refused) {
  st_env e;
  CHECK_EQ(st_open(&e, "bad_trigger"), 0);
  char sql[2048], why[1024];
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'processing-time soon';\n" SRC
           "CREATE TABLE out (k STRING, v INT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT k, v FROM src",
           e.dir);
  int rc = st_refusal(&e, sql, why, sizeof why);
  CHECK(rc != DIPPER_OK);
  CHECK_CONTAINS(why, "processing-time soon");
  st_close(&e);
}

int main(void) { return RUN_TESTS(); }
