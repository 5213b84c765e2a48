/*
** driver_test.c — the micro-batch driver and the run API, through the public
** API: memory tables pushed one micro-batch at a time, stepped with
** dipper_query_step, and read back with dipper_memory_fetch; watermarks
** (max − delay, computed at the end of a batch and in effect from the next,
** the minimum over two inputs, never moving back), the no-data batch, the
** final batch of a bounded run, the triggers once and available-now,
** batch mode, dipper_run with its progress reports and dipper_interrupt, and
** the errors of starting a query the engine cannot run.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dipper.h"
#include "test.h"

/* 2024-01-01 00:00:00 UTC in µs, and a time s seconds later as JSON text. */
#define T0 INT64_C(1704067200000000)
#define SEC INT64_C(1000000)

static dipper *open_db(void) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  return db;
}

static dipper_program *compile(dipper *db, const char *sql) {
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "d.sql", &prog);
  if (rc) fprintf(stderr, "compile: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  return prog;
}

static void push(dipper *db, const char *table, const char *jsonl) {
  int rc = dipper_memory_push_json(db, table, jsonl, strlen(jsonl));
  if (rc) fprintf(stderr, "push: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
}

static int step(dipper *db, dipper_query *q) {
  int finished = 0;
  int rc = dipper_query_step(q, &finished);
  if (rc) fprintf(stderr, "step: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  return finished;
}

static dipper_progress progress_of(dipper_query *q) {
  dipper_progress p = {sizeof p};
  CHECK_EQ(dipper_query_progress(q, &p), DIPPER_OK);
  return p;
}

/* Cell r of an Arrow child as text: integers and timestamps in decimal,
** strings as they are, NULL as "NULL". */
static void put_cell(char *buf, size_t cap, const struct ArrowSchema *s, const struct ArrowArray *a,
                     int64_t r) {
  int64_t i = r + a->offset;
  const uint8_t *valid = a->buffers[0];
  if (valid && !((valid[i >> 3] >> (i & 7)) & 1)) {
    snprintf(buf, cap, "NULL");
    return;
  }
  const char *f = s->format;
  if (strcmp(f, "l") == 0 || strncmp(f, "ts", 2) == 0)
    snprintf(buf, cap, "%" PRId64, ((const int64_t *)a->buffers[1])[i]);
  else if (strcmp(f, "i") == 0)
    snprintf(buf, cap, "%d", ((const int32_t *)a->buffers[1])[i]);
  else if (strcmp(f, "g") == 0)
    snprintf(buf, cap, "%g", ((const double *)a->buffers[1])[i]);
  else if (strcmp(f, "u") == 0) {
    const int32_t *off = a->buffers[1];
    snprintf(buf, cap, "%.*s", (int)(off[i + 1] - off[i]), (const char *)a->buffers[2] + off[i]);
  } else
    snprintf(buf, cap, "?%s", f);
}

/* Every row of memory table `table` as "a|b" lines. */
static const char *fetch(dipper *db, const char *table) {
  static char text[16384];
  text[0] = '\0';
  struct ArrowSchema schema;
  struct ArrowArray array;
  int rc = dipper_memory_fetch(db, table, &schema, &array);
  if (rc) {
    snprintf(text, sizeof text, "ERROR %s: %s", dipper_strerror(rc), dipper_errmsg(db));
    return text;
  }
  size_t len = 0;
  for (int64_t r = 0; r < array.length; r++) {
    for (int64_t c = 0; c < array.n_children; c++) {
      char cell[256];
      put_cell(cell, sizeof cell, schema.children[c], array.children[c], r);
      len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", c ? "|" : "", cell);
    }
    len += (size_t)snprintf(text + len, sizeof text - len, "\n");
  }
  array.release(&array);
  schema.release(&schema);
  return text;
}

static dipper_query **start(dipper_program *prog, int expect_n) {
  dipper_query **qs = NULL;
  int n = 0;
  int rc = dipper_query_start(prog, &qs, &n);
  if (rc) fprintf(stderr, "start: %s\n", dipper_errmsg(dipper_program_count(prog) ? NULL : NULL));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(n, expect_n);
  return qs;
}

#define EVENTS_DDL                                                                        \
  "CREATE TABLE ev (id BIGINT, name STRING, ts TIMESTAMP(3),"                             \
  " WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'memory');\n"       \
  "CREATE TABLE out_t (id BIGINT, name STRING) WITH ('connector' = 'memory');\n"

TEST(project_filter_into_memory_per_batch) {
  dipper *db = open_db();
  dipper_program *prog = compile(db, EVENTS_DDL
                                 "INSERT INTO out_t SELECT id * 10, UPPER(name) FROM ev "
                                 "WHERE id <> 2;");
  dipper_query **qs = start(prog, 1);
  if (qs) {
    dipper_progress p = progress_of(qs[0]);
    CHECK_STR(p.name, "out_t");
    CHECK_EQ(p.batch_id, -1);
    /* Nothing pushed: no batch runs. */
    CHECK_EQ(step(db, qs[0]), 0);
    CHECK_EQ(progress_of(qs[0]).batch_id, -1);
    push(db, "ev", "{\"id\": 1, \"name\": \"a\", \"ts\": \"2024-01-01 00:00:01\"}\n"
                   "{\"id\": 2, \"name\": \"b\", \"ts\": \"2024-01-01 00:00:02\"}\n");
    push(db, "ev", "{\"id\": 3, \"name\": null, \"ts\": \"2024-01-01 00:00:03\"}\n");
    CHECK_EQ(step(db, qs[0]), 0);
    p = progress_of(qs[0]);
    CHECK_EQ(p.batch_id, 0);
    CHECK_EQ(p.input_rows, 2);
    CHECK_EQ(p.output_rows, 1);
    CHECK_STR(fetch(db, "out_t"), "10|A\n");
    /* One push per micro-batch. */
    CHECK_EQ(step(db, qs[0]), 0);
    p = progress_of(qs[0]);
    CHECK_EQ(p.batch_id, 1);
    CHECK_EQ(p.input_rows, 1);
    CHECK_EQ(p.total_input_rows, 3);
    CHECK_EQ(p.total_output_rows, 2);
    CHECK_STR(fetch(db, "out_t"), "10|A\n30|NULL\n");
    CHECK_EQ(p.finished, 0); /* an unbounded memory source waits for more */
  }
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(watermark_is_max_minus_delay_from_the_end_of_a_batch) {
  dipper *db = open_db();
  dipper_program *prog =
      compile(db, EVENTS_DDL "INSERT INTO out_t SELECT id, name FROM ev;");
  dipper_query **qs = start(prog, 1);
  if (qs) {
    push(db, "ev", "{\"id\": 1, \"ts\": \"2024-01-01 00:00:10\"}\n"
                   "{\"id\": 2, \"ts\": \"2024-01-01 00:00:30\"}\n"
                   "{\"id\": 3, \"ts\": null}\n");
    step(db, qs[0]);
    CHECK_EQ(progress_of(qs[0]).watermark, T0 + 25 * SEC);
    /* Older events do not move it back. */
    push(db, "ev", "{\"id\": 4, \"ts\": \"2024-01-01 00:00:05\"}\n");
    step(db, qs[0]);
    CHECK_EQ(progress_of(qs[0]).watermark, T0 + 25 * SEC);
    push(db, "ev", "{\"id\": 5, \"ts\": \"2024-01-01 00:01:00\"}\n");
    step(db, qs[0]);
    CHECK_EQ(progress_of(qs[0]).watermark, T0 + 55 * SEC);
    CHECK_EQ(progress_of(qs[0]).batch_id, 2);
    /* No data and no stateful operator: the moved watermark runs no batch. */
    step(db, qs[0]);
    CHECK_EQ(progress_of(qs[0]).batch_id, 2);
  }
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

/* A watermark that is not `col - INTERVAL c` is the largest value of its
** expression over the rows seen. */
TEST(watermark_of_an_expression) {
  dipper *db = open_db();
  dipper_program *prog = compile(
      db, "CREATE TABLE ev (id BIGINT, ts TIMESTAMP(3),"
          " WATERMARK FOR ts AS ts - INTERVAL '1' SECOND * 3) WITH ('connector' = 'memory');\n"
          "CREATE TABLE o (id BIGINT) WITH ('connector' = 'memory');\n"
          "INSERT INTO o SELECT id FROM ev;");
  dipper_query **qs = start(prog, 1);
  if (qs) {
    push(db, "ev", "{\"id\": 1, \"ts\": \"2024-01-01 00:00:10\"}\n"
                   "{\"id\": 2, \"ts\": \"2024-01-01 00:00:04\"}\n");
    step(db, qs[0]);
    CHECK_EQ(progress_of(qs[0]).watermark, T0 + 7 * SEC);
  }
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(watermark_is_the_minimum_over_inputs) {
  dipper *db = open_db();
  dipper_program *prog = compile(
      db, EVENTS_DDL
      "CREATE TABLE ev2 (id BIGINT, name STRING, ts TIMESTAMP(3),"
      " WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT id, name FROM ev UNION ALL SELECT id, name FROM ev2;");
  dipper_query **qs = start(prog, 1);
  if (qs) {
    push(db, "ev", "{\"id\": 1, \"ts\": \"2024-01-01 00:00:30\"}\n");
    step(db, qs[0]);
    /* ev2 has seen nothing yet: no watermark. */
    CHECK_EQ(progress_of(qs[0]).watermark, INT64_MIN);
    push(db, "ev2", "{\"id\": 2, \"ts\": \"2024-01-01 00:00:20\"}\n");
    step(db, qs[0]);
    CHECK_EQ(progress_of(qs[0]).watermark, T0 + 19 * SEC); /* min(25 s, 19 s) */
    push(db, "ev2", "{\"id\": 3, \"ts\": \"2024-01-01 00:01:00\"}\n");
    step(db, qs[0]);
    CHECK_EQ(progress_of(qs[0]).watermark, T0 + 25 * SEC); /* now ev holds it back */
    CHECK_STR(fetch(db, "out_t"), "1|NULL\n2|NULL\n3|NULL\n");
  }
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(bounded_run_ends_with_a_final_batch) {
  dipper *db = open_db();
  dipper_program *prog = compile(
      db, "CREATE TABLE b (id BIGINT) WITH ('connector' = 'memory', 'bounded' = 'true');\n"
          "CREATE TABLE o (id BIGINT) WITH ('connector' = 'memory');\n"
          "INSERT INTO o SELECT id + 1 FROM b;");
  dipper_query **qs = start(prog, 1);
  if (qs) {
    push(db, "b", "{\"id\": 1}\n{\"id\": 2}\n");
    push(db, "b", "{\"id\": 3}\n");
    CHECK_EQ(step(db, qs[0]), 0);
    CHECK_EQ(step(db, qs[0]), 0);
    /* Every push read: the last batch runs with the watermark at +inf. */
    CHECK_EQ(step(db, qs[0]), 1);
    dipper_progress p = progress_of(qs[0]);
    CHECK_EQ(p.batch_id, 2);
    CHECK_EQ(p.finished, 1);
    CHECK_EQ(p.total_input_rows, 3);
    CHECK_STR(fetch(db, "o"), "2\n3\n4\n");
    /* A finished query stays finished. */
    CHECK_EQ(step(db, qs[0]), 1);
    CHECK_EQ(progress_of(qs[0]).batch_id, 2);
  }
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(values_query_is_bounded) {
  dipper *db = open_db();
  dipper_program *prog = compile(
      db, "CREATE TABLE o (id BIGINT, s STRING) WITH ('connector' = 'memory');\n"
          "INSERT INTO o SELECT a, b FROM (VALUES (1, 'x'), (2, 'y')) AS t(a, b) WHERE a > 1;");
  dipper_query **qs = start(prog, 1);
  if (qs) {
    CHECK_EQ(step(db, qs[0]), 0);
    CHECK_EQ(step(db, qs[0]), 1);
    CHECK_STR(fetch(db, "o"), "2|y\n");
  }
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

static void count_reports(void *user, const dipper_progress *p) {
  int *n = user;
  (void)p;
  (*n)++;
}

TEST(trigger_once_reads_one_batch_and_stops) {
  dipper *db = open_db();
  dipper_program *prog = compile(db, EVENTS_DDL "SET 'dipper.trigger' = 'once';\n"
                                                "INSERT INTO out_t SELECT id, name FROM ev;");
  push(db, "ev", "{\"id\": 1}\n");
  push(db, "ev", "{\"id\": 2}\n");
  int reports = 0;
  /* The memory source is unbounded: only the trigger ends this run. */
  CHECK_EQ(dipper_run(prog, count_reports, &reports), DIPPER_OK);
  CHECK_STR(fetch(db, "out_t"), "1|NULL\n");
  CHECK_EQ(reports, 2); /* the batch, and the final report */
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(trigger_available_now_reads_everything_then_stops) {
  dipper *db = open_db();
  dipper_program *prog = compile(db, EVENTS_DDL "SET 'dipper.trigger' = 'available-now';\n"
                                                "INSERT INTO out_t SELECT id, name FROM ev;");
  push(db, "ev", "{\"id\": 1}\n");
  push(db, "ev", "{\"id\": 2}\n");
  push(db, "ev", "{\"id\": 3, \"name\": \"c\"}\n");
  int reports = 0;
  CHECK_EQ(dipper_run(prog, count_reports, &reports), DIPPER_OK);
  CHECK_STR(fetch(db, "out_t"), "1|NULL\n2|NULL\n3|c\n");
  CHECK_EQ(reports, 4); /* three batches, and the final report */
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(batch_mode_reads_every_push_in_one_batch) {
  dipper *db = open_db();
  dipper_program *prog = compile(db, "SET 'execution.runtime-mode' = 'batch';\n" EVENTS_DDL
                                     "INSERT INTO out_t SELECT id, name FROM ev;");
  push(db, "ev", "{\"id\": 1}\n");
  push(db, "ev", "{\"id\": 2}\n");
  dipper_query **qs = start(prog, 1);
  if (qs) {
    CHECK_EQ(step(db, qs[0]), 1);
    dipper_progress p = progress_of(qs[0]);
    CHECK_EQ(p.batch_id, 0);
    CHECK_EQ(p.input_rows, 2);
    CHECK_EQ(p.finished, 1);
    CHECK_STR(fetch(db, "out_t"), "1|NULL\n2|NULL\n");
  }
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

typedef struct stopper {
  dipper *db;
  int reports;
  int64_t last_batch;
} stopper;

static void stop_after_first(void *user, const dipper_progress *p) {
  stopper *s = user;
  s->reports++;
  s->last_batch = p->batch_id;
  dipper_interrupt(s->db);
}

TEST(interrupt_stops_a_run_that_would_not_end) {
  dipper *db = open_db();
  dipper_program *prog = compile(db, EVENTS_DDL "INSERT INTO out_t SELECT id, name FROM ev;");
  push(db, "ev", "{\"id\": 1}\n");
  stopper s = {db, 0, -2};
  CHECK_EQ(dipper_run(prog, stop_after_first, &s), DIPPER_INTERRUPTED);
  CHECK_CONTAINS(dipper_errmsg(db), "interrupted");
  CHECK_EQ(s.last_batch, 0);
  CHECK_EQ(s.reports, 2); /* batch 0, then the final report */
  CHECK_STR(fetch(db, "out_t"), "1|NULL\n");
  /* The flag was honoured and cleared: the handle runs again. */
  dipper_program *again =
      compile(db, "SET 'dipper.trigger' = 'available-now';\n"
                  "INSERT INTO out_t SELECT id, name FROM ev;");
  CHECK_EQ(dipper_run(again, NULL, NULL), DIPPER_OK);
  dipper_program_free(again);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(statement_set_and_selects_are_queries_by_name) {
  dipper *db = open_db();
  dipper_program *prog = compile(
      db, EVENTS_DDL
      "CREATE TABLE o2 (id BIGINT) WITH ('connector' = 'memory');\n"
      "EXECUTE STATEMENT SET BEGIN\n"
      "  INSERT INTO out_t SELECT id, name FROM ev;\n"
      "  INSERT INTO o2 SELECT id FROM ev WHERE id > 1;\n"
      "END;\n"
      "EXPLAIN SELECT id FROM ev;\n");
  dipper_query **qs = start(prog, 2);
  if (qs) {
    CHECK_STR(progress_of(qs[0]).name, "out_t");
    CHECK_STR(progress_of(qs[1]).name, "o2");
    push(db, "ev", "{\"id\": 1}\n{\"id\": 2}\n");
    step(db, qs[0]);
    step(db, qs[1]);
    CHECK_STR(fetch(db, "out_t"), "1|NULL\n2|NULL\n");
    CHECK_STR(fetch(db, "o2"), "2\n");
  }
  dipper_query_free_all(qs, 2);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(unsupported_connector_fails_start_with_its_place) {
  dipper *db = open_db();
  dipper_program *prog = compile(db, "CREATE TABLE k (a INT) WITH ('connector' = 'socket', "
                                     "'hostname' = 'h', 'port' = '9', 'format' = 'csv');\n"
                                     "SELECT a FROM k;");
  dipper_query **qs = NULL;
  int n = -1;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_UNSUPPORTED);
  CHECK(qs == NULL);
  CHECK_EQ(n, 0);
  CHECK_CONTAINS(dipper_errmsg(db), "no source for connector 'socket'");
  const dipper_diag *g = dipper_diag_get(db, 0);
  CHECK(g != NULL);
  if (g) {
    CHECK_EQ(g->line, 2);
    CHECK_STR(g->file, "d.sql");
  }
  char *text = dipper_diag_render(db, 0);
  CHECK_CONTAINS(text, "d.sql:2:");
  dipper_free(text);
  CHECK_EQ(dipper_run(prog, NULL, NULL), DIPPER_UNSUPPORTED);
  dipper_program_free(prog);
  dipper_close(db);
}

/* A window closes in the batch after the one that moved the watermark past
** its end: the watermark is computed at the end of a batch and takes effect
** from the next, which here is a no-data batch (Spark runs one too). */
TEST(watermark_takes_effect_from_the_next_batch) {
  dipper *db = open_db();
  dipper_program *prog = compile(
      db, EVENTS_DDL "CREATE TABLE w (ws TIMESTAMP(3), n BIGINT) WITH ('connector' = 'memory');\n"
                     "INSERT INTO w SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ev, "
                     "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end;");
  dipper_query **qs = start(prog, 1);
  if (qs) {
    push(db, "ev", "{\"id\": 1, \"ts\": \"2024-01-01 00:00:01\"}\n"
                   "{\"id\": 2, \"ts\": \"2024-01-01 00:00:20\"}\n");
    step(db, qs[0]);
    dipper_progress p = progress_of(qs[0]);
    CHECK_EQ(p.batch_id, 0);
    CHECK_EQ(p.watermark, T0 + 15 * SEC);
    CHECK_EQ(p.output_rows, 0); /* batch 0 ran under no watermark */
    CHECK_STR(fetch(db, "w"), "");
    /* No new rows, but the watermark moved: a no-data batch emits [0 s, 10 s). */
    step(db, qs[0]);
    p = progress_of(qs[0]);
    CHECK_EQ(p.batch_id, 1);
    CHECK_EQ(p.input_rows, 0);
    CHECK_EQ(p.output_rows, 1);
    char want[64];
    snprintf(want, sizeof want, "%" PRId64 "|1\n", T0);
    CHECK_STR(fetch(db, "w"), want);
    /* Nothing moved since: no batch. */
    step(db, qs[0]);
    CHECK_EQ(progress_of(qs[0]).batch_id, 1);
  }
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

static int64_t mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * SEC + ts.tv_nsec / 1000;
}

/* processing-time: one batch per interval; the VALUES batch runs at once and
** the final batch at the next boundary. */
TEST(trigger_processing_time_paces_batches) {
  dipper *db = open_db();
  dipper_program *prog = compile(
      db, "SET 'dipper.trigger' = 'processing-time 300 ms';\n"
          "CREATE TABLE o (id BIGINT) WITH ('connector' = 'memory');\n"
          "INSERT INTO o SELECT a FROM (VALUES (1), (2)) AS t(a);");
  int reports = 0;
  int64_t t0 = mono_us();
  CHECK_EQ(dipper_run(prog, count_reports, &reports), DIPPER_OK);
  int64_t took = mono_us() - t0;
  CHECK(took >= 300000);
  CHECK(took < 5 * SEC);
  CHECK_EQ(reports, 3); /* data batch, final batch, final report */
  CHECK_STR(fetch(db, "o"), "1\n2\n");
  dipper_program_free(prog);
  dipper_close(db);
}

/* CURRENT_TIMESTAMP reads the micro-batch's start time, set by the driver. */
TEST(current_timestamp_is_the_batch_start) {
  dipper *db = open_db();
  dipper_program *prog = compile(
      db, EVENTS_DDL "CREATE TABLE o (id BIGINT, ms BIGINT) WITH ('connector' = 'memory');\n"
                     "INSERT INTO o SELECT id, UNIX_TIMESTAMP() FROM ev;");
  dipper_query **qs = start(prog, 1);
  if (qs) {
    push(db, "ev", "{\"id\": 1}\n");
    long long before = (long long)time(NULL);
    step(db, qs[0]);
    long long after = (long long)time(NULL);
    const char *rows = fetch(db, "o");
    long long id = 0, secs = 0;
    CHECK_EQ(sscanf(rows, "%lld|%lld", &id, &secs), 2);
    CHECK_EQ(id, 1);
    CHECK(secs >= before && secs <= after);
  }
  dipper_query_free_all(qs, 1);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(misuse) {
  CHECK_EQ(dipper_query_start(NULL, NULL, NULL), DIPPER_MISUSE);
  CHECK_EQ(dipper_query_step(NULL, NULL), DIPPER_MISUSE);
  CHECK_EQ(dipper_query_progress(NULL, NULL), DIPPER_MISUSE);
  dipper_query_free_all(NULL, 0);
  dipper_interrupt(NULL);
}

int main(void) { return RUN_TESTS(); }
