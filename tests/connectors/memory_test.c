/*
** memory_test.c — the memory connector and the callback sink through the
** public API: pushes as micro-batches, fetch as an Arrow struct array, the
** bad-records policies on a memory source, stepping a query batch by batch,
** callbacks called per micro-batch with the batch id, and their errors.
*/
#include "conn_harness.h"
#include "test.h"

static const char *SETUP =
    "CREATE TABLE src (id INT, name STRING, amount DOUBLE) WITH ('connector' = 'memory', "
    "'bounded' = 'true');"
    "CREATE TABLE dst (id INT, name STRING, amount DOUBLE) WITH ('connector' = 'memory');";

TEST(push_run_fetch) {
  dipper *db;
  dipper_open(&db, NULL);
  CHECK_EQ(h_run(db, SETUP, NULL), DIPPER_OK);
  CHECK_EQ(dipper_memory_push_json(db, "src", "{\"id\":1,\"name\":\"a\",\"amount\":1.5}\n"
                                              "{\"id\":2,\"name\":\"b\"}\n", (size_t)-1),
           DIPPER_OK);
  CHECK_EQ(dipper_memory_push_json(db, "src", "\n{\"id\":3,\"name\":\"c\",\"amount\":-2}", (size_t)-1),
           DIPPER_OK);
  const char *msg;
  CHECK_EQ(h_run(db, "INSERT INTO dst SELECT id, name, amount FROM src WHERE id <> 2;", &msg),
           DIPPER_OK);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dipper_memory_fetch(db, "dst", &s, &a), DIPPER_OK);
  CHECK_EQ(a.length, 2);
  CHECK_STR(s.children[1]->name, "name");
  CHECK_EQ(h_i64(&a, &s, 0, 0), 1);
  CHECK_EQ(h_i64(&a, &s, 0, 1), 3);
  CHECK_STR(h_str(&a, 1, 1), "c");
  a.release(&a);
  s.release(&s);

  /* unknown tables and pushes to a non-memory table are errors that say why */
  CHECK_EQ(dipper_memory_fetch(db, "nothing", &s, &a), DIPPER_NAME);
  CHECK_CONTAINS(dipper_errmsg(db), "no query has written to memory table `nothing`");
  CHECK(a.release == NULL);
  CHECK_EQ(h_run(db, "CREATE TABLE k (x INT) WITH ('connector' = 'datagen');", NULL), DIPPER_OK);
  CHECK_EQ(dipper_memory_push_json(db, "k", "{}", 2), DIPPER_MISUSE);
  CHECK_CONTAINS(dipper_errmsg(db), "reads connector 'datagen'");
  dipper_close(db);
}

TEST(each_push_is_a_micro_batch) {
  dipper *db;
  dipper_open(&db, NULL);
  CHECK_EQ(h_run(db,
                 "CREATE TABLE live (id INT) WITH ('connector' = 'memory');"
                 "CREATE TABLE seen (id INT) WITH ('connector' = 'memory');",
                 NULL),
           DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, "INSERT INTO seen SELECT id * 10 FROM live;", (size_t)-1, NULL, &prog),
           DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0, finished = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 1);
  dipper_memory_push_json(db, "live", "{\"id\":1}\n{\"id\":2}\n", (size_t)-1);
  dipper_memory_push_json(db, "live", "{\"id\":3}\n", (size_t)-1);
  CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
  dipper_progress p = {sizeof p};
  dipper_query_progress(qs[0], &p);
  CHECK_EQ(p.input_rows, 2); /* the first push only */
  CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
  dipper_query_progress(qs[0], &p);
  CHECK_EQ(p.input_rows, 1);
  CHECK_EQ(p.total_output_rows, 3);
  CHECK(!finished); /* unbounded: it waits for more */
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dipper_memory_fetch(db, "seen", &s, &a), DIPPER_OK);
  CHECK_EQ(a.length, 3);
  CHECK_EQ(h_i64(&a, &s, 0, 2), 30);
  a.release(&a);
  s.release(&s);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(bad_records_fail_skip_dead_letter) {
  char *dir = h_tempdir();
  char sql[1024];
  dipper *db;
  dipper_open(&db, NULL);
  snprintf(sql, sizeof sql,
           "CREATE TABLE f (id INT) WITH ('connector' = 'memory', 'bounded' = 'true');"
           "CREATE TABLE s (id INT) WITH ('connector' = 'memory', 'bounded' = 'true', "
           "'dipper.bad-records' = 'skip');"
           "CREATE TABLE d (id INT) WITH ('connector' = 'memory', 'bounded' = 'true', "
           "'dipper.bad-records' = 'dead-letter', 'dipper.dead-letter.path' = '%s/dead.jsonl');"
           "CREATE TABLE o (id INT) WITH ('connector' = 'memory');",
           dir);
  CHECK_EQ(h_run(db, sql, NULL), DIPPER_OK);
  const char *rows = "{\"id\":1}\n{\"id\":\"one\"}\n{\"id\":3}\n";
  dipper_memory_push_json(db, "f", rows, (size_t)-1);
  dipper_memory_push_json(db, "s", rows, (size_t)-1);
  dipper_memory_push_json(db, "d", rows, (size_t)-1);
  const char *msg;
  CHECK_EQ(h_run(db, "INSERT INTO o SELECT id FROM f;", &msg), DIPPER_DATA);
  CHECK_CONTAINS(msg, "table `f`: bad record at push 1, line 2 (byte 6)");
  CHECK_CONTAINS(msg, "field `id`: expected a whole number that fits INT, got \"one\"");
  CHECK_CONTAINS(msg, "'dipper.bad-records' = 'skip'");

  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, "INSERT INTO o SELECT id FROM s;", (size_t)-1, NULL, &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0, finished = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  for (int i = 0; i < 10 && !finished; i++) CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
  CHECK(finished);
  dipper_progress p = {sizeof p};
  dipper_query_progress(qs[0], &p);
  CHECK_EQ(p.bad_records_skipped, 1);
  CHECK_EQ(p.total_output_rows, 2);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);

  CHECK_EQ(h_run(db, "INSERT INTO o SELECT id FROM d;", &msg), DIPPER_OK);
  char *dead = h_read(dir, "dead.jsonl");
  CHECK(dead != NULL);
  CHECK_STR(dead, "{\"table\":\"d\",\"source\":\"push 1, line 2\",\"offset\":6,\"error\":\"field "
                  "`id`: expected a whole number that fits INT, got \\\"one\\\"\",\"record\":"
                  "\"{\\\"id\\\":\\\"one\\\"}\"}\n");
  free(dead);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dipper_memory_fetch(db, "o", &s, &a), DIPPER_OK);
  CHECK_EQ(a.length, 2);
  a.release(&a);
  s.release(&s);
  dipper_close(db);
  h_rmdir(dir);
  free(dir);
}

typedef struct seen_batches {
  int calls;
  int64_t ids[16];
  int64_t rows[16];
  int64_t sum;
  int fail_at;
} seen_batches;

static int on_batch(void *user, int64_t batch_id, struct ArrowSchema *schema,
                    struct ArrowArray *array) {
  seen_batches *sb = user;
  if (sb->calls < 16) {
    sb->ids[sb->calls] = batch_id;
    sb->rows[sb->calls] = array->length;
  }
  sb->calls++;
  for (int64_t r = 0; r < array->length; r++) sb->sum += h_i64(array, schema, 0, r);
  array->release(array);
  schema->release(schema);
  return sb->calls == sb->fail_at ? 7 : 0;
}

TEST(callback_per_micro_batch) {
  dipper *db;
  dipper_open(&db, NULL);
  CHECK_EQ(h_run(db,
                 "CREATE TABLE live (id BIGINT) WITH ('connector' = 'memory', 'bounded' = 'true');"
                 "CREATE TABLE cb (id BIGINT) WITH ('connector' = 'callback', 'name' = 'rows');",
                 NULL),
           DIPPER_OK);
  dipper_memory_push_json(db, "live", "{\"id\":1}\n{\"id\":2}\n", (size_t)-1);
  dipper_memory_push_json(db, "live", "{\"id\":3}\n", (size_t)-1);
  const char *msg;
  /* not registered yet */
  CHECK_EQ(h_run(db, "INSERT INTO cb SELECT id FROM live;", &msg), DIPPER_NAME);
  CHECK_CONTAINS(msg, "no callback is registered under 'rows'");
  seen_batches sb = {0};
  CHECK_EQ(dipper_register_callback(db, "rows", on_batch, &sb), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, "INSERT INTO cb SELECT id FROM live;", (size_t)-1, NULL, &prog),
           DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0, finished = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
  CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
  CHECK(sb.calls >= 2);
  CHECK_EQ(sb.ids[0], 0);
  CHECK_EQ(sb.rows[0], 2);
  CHECK_EQ(sb.ids[1], 1);
  CHECK_EQ(sb.rows[1], 1);
  CHECK_EQ(sb.sum, 6);
  dipper_query_free_all(qs, n);

  /* a non-zero return stops the query, naming the callback */
  seen_batches fail = {0};
  fail.fail_at = 1;
  CHECK_EQ(dipper_register_callback(db, "rows", on_batch, &fail), DIPPER_OK);
  CHECK_EQ(h_run(db, "INSERT INTO cb SELECT id FROM live;", &msg), DIPPER_DATA);
  CHECK_CONTAINS(msg, "callback 'rows' returned 7 for micro-batch 0");
  /* registering NULL removes it */
  CHECK_EQ(dipper_register_callback(db, "rows", NULL, NULL), DIPPER_OK);
  CHECK_EQ(h_run(db, "INSERT INTO cb SELECT id FROM live;", &msg), DIPPER_NAME);
  CHECK_EQ(dipper_register_callback(db, "", on_batch, NULL), DIPPER_MISUSE);
  dipper_program_free(prog);
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
