/*
** filesystem_test.c — the filesystem connector in a scratch directory: batch
** reads of a directory (hidden files and the regex skipped, CSV headers,
** metadata columns), a watched directory in streaming mode (each new file
** set one micro-batch, no file read twice), the sink's part files committed
** by rename, a restart with checkpointing that does not write a committed
** batch again, the bad-records policies with file:line, and the console.
*/
#include "conn_harness.h"
#include "test.h"

/* Run `text` with every @DIR@ replaced by dir. */
static int run_fmt(dipper *db, const char **msg, const char *text, const char *dir) {
  char sql[4096];
  size_t len = 0, dlen = strlen(dir);
  for (const char *p = text; *p && len + dlen + 1 < sizeof sql;) {
    if (strncmp(p, "@DIR@", 5) == 0) {
      memcpy(sql + len, dir, dlen);
      len += dlen;
      p += 5;
    } else {
      sql[len++] = *p++;
    }
  }
  sql[len] = '\0';
  return h_run(db, sql, msg);
}

TEST(batch_read_json_dir_write_csv) {
  char *dir = h_tempdir();
  char in[512], out[512];
  snprintf(in, sizeof in, "%s/in", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  mkdir(in, 0777);
  h_write(in, "b.json", "{\"id\":3,\"name\":\"c\"}\n");
  h_write(in, "a.json", "{\"id\":1,\"name\":\"a, b\"}\n\n{\"id\":2,\"name\":null}\n");
  h_write(in, ".hidden.json", "{\"id\":99}\n");
  h_write(in, "_SUCCESS", "");
  h_write(in, "notes.txt", "{\"id\":98}\n");
  dipper *db;
  dipper_open(&db, NULL);
  const char *msg;
  int rc = run_fmt(db, &msg,
                   "SET 'execution.runtime-mode' = 'batch';"
                   "CREATE TABLE src (id INT, name STRING, fname STRING METADATA FROM 'file.name' "
                   "VIRTUAL) WITH ('connector' = 'filesystem', 'path' = '@DIR@/in', 'format' = 'json', "
                   "'source.path.regex-pattern' = '.*\\.json');"
                   "CREATE TABLE dst (id INT, name STRING, fname STRING) WITH ('connector' = "
                   "'filesystem', 'path' = '@DIR@/out', 'format' = 'csv', 'csv.header' = 'true');"
                   "INSERT INTO dst SELECT id, name, fname FROM src;",
                   dir);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) fprintf(stderr, "%s\n", msg);
  CHECK_STR(h_list(out), "part-0-0.csv");
  char *text = h_read(out, "part-0-0.csv");
  CHECK_STR(text, "id,name,fname\n1,\"a, b\",a.json\n2,,a.json\n3,c,b.json\n");
  free(text);

  /* and the CSV reads back, header skipped */
  rc = run_fmt(db, &msg,
               "CREATE TABLE back (id INT, name STRING, fname STRING) WITH ('connector' = "
               "'filesystem', 'path' = '@DIR@/out', 'format' = 'csv', 'csv.header' = 'true');"
               "CREATE TABLE mem (id INT, name STRING) WITH ('connector' = 'memory');"
               "INSERT INTO mem SELECT id, name FROM back;",
               dir);
  CHECK_EQ(rc, DIPPER_OK);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dipper_memory_fetch(db, "mem", &s, &a), DIPPER_OK);
  if (a.release) {
    CHECK_EQ(a.length, 3);
    CHECK_STR(h_str(&a, 1, 0), "a, b");
    CHECK(h_null(&a, 1, 1));
    a.release(&a);
    s.release(&s);
  }
  dipper_close(db);
  h_rmdir(dir);
  free(dir);
}

TEST(watch_directory_and_commit_parts) {
  char *dir = h_tempdir();
  char in[512], out[512], ck[512];
  snprintf(in, sizeof in, "%s/in", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  snprintf(ck, sizeof ck, "%s/ck", dir);
  mkdir(in, 0777);
  h_write(in, "1.json", "{\"id\":1}\n{\"id\":2}\n");
  dipper *db;
  dipper_open(&db, NULL);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE src (id INT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' "
           "= 'json', 'source.monitor-interval' = '1 us');"
           "CREATE TABLE dst (id INT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' "
           "= 'json');",
           in, out);
  CHECK_EQ(h_run(db, sql, NULL), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, "INSERT INTO dst SELECT id FROM src;", (size_t)-1, NULL, &prog),
           DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0, finished = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
  CHECK_STR(h_list(out), "part-0-0.json");
  CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK); /* nothing new: no file */
  h_write(in, "2.json", "{\"id\":3}\n");
  h_write(in, "3.json", "{\"id\":4}\n");
  CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
  dipper_progress p = {sizeof p};
  dipper_query_progress(qs[0], &p);
  CHECK_EQ(p.input_rows, 2); /* the two new files, and not 1.json again */
  CHECK(!finished);
  const char *names = h_list(out);
  CHECK(strncmp(names, "part-0-0.json part-", 19) == 0);
  CHECK(strstr(names, "inprogress") == NULL);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  char *first = h_read(out, "part-0-0.json");
  CHECK_STR(first, "{\"id\":1}\n{\"id\":2}\n");
  free(first);
  dipper_close(db);

  /* batch mode keeps no checkpoint (one batch: nothing to resume), so a
  ** run with a checkpoint folder, like one without, never overwrites a part
  ** file: it takes the next free name (streaming exactly-once part files,
  ** part-<batch>-<tag>, are proven by tests/ft/kill_test.sh) */
  char out2[512];
  snprintf(out2, sizeof out2, "%s/out2", dir);
  mkdir(out2, 0777);
  h_write(out2, "part-0-0.json", "{\"id\":1}\n");
  dipper_open(&db, NULL);
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';"
           "SET 'execution.checkpointing.dir' = '%s';"
           "CREATE TABLE src (id INT) WITH ('connector' = 'filesystem', 'path' = '%s/1.json', "
           "'format' = 'json');"
           "CREATE TABLE dst (id INT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' "
           "= 'json');"
           "INSERT INTO dst SELECT id FROM src;",
           ck, in, out2);
  const char *msg;
  CHECK_EQ(h_run(db, sql, &msg), DIPPER_OK);
  CHECK_STR(h_list(out2), "part-0-0.json part-0-1.json");
  dipper_close(db);
  dipper_open(&db, NULL);
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';"
           "CREATE TABLE src (id INT) WITH ('connector' = 'filesystem', 'path' = '%s/1.json', "
           "'format' = 'json');"
           "CREATE TABLE dst (id INT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' "
           "= 'json');"
           "INSERT INTO dst SELECT id FROM src;",
           in, out2);
  CHECK_EQ(h_run(db, sql, &msg), DIPPER_OK);
  CHECK_STR(h_list(out2), "part-0-0.json part-0-1.json part-0-2.json");
  dipper_close(db);
  h_rmdir(dir);
  free(dir);
}

/* One step of q (a micro-batch when there is something to do): the rows it read. */
static int64_t step_rows(dipper_query *q) {
  int finished = 0;
  dipper_progress before = {sizeof before}, after = {sizeof after};
  dipper_query_progress(q, &before);
  if (dipper_query_step(q, &finished) != DIPPER_OK) return -1;
  dipper_query_progress(q, &after);
  return after.total_input_rows - before.total_input_rows;
}

static dipper_query **start_watch(dipper *db, const char *in, const char *opts, int *n,
                                  dipper_program **prog) {
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE src (id INT) WITH ('connector' = 'filesystem', 'path' = '%s', "
           "'format' = 'json'%s);"
           "CREATE TABLE dst (id INT) WITH ('connector' = 'blackhole');",
           in, opts);
  dipper_query **qs = NULL;
  if (h_run(db, sql, NULL) != DIPPER_OK ||
      dipper_compile(db, "INSERT INTO dst SELECT id FROM src;", (size_t)-1, NULL, prog) ||
      dipper_query_start(*prog, &qs, n))
    return NULL;
  return qs;
}

/* Without 'source.monitor-interval' a folder is bounded in streaming mode too
** (Flink's rule): the files there at the start, read once, and the query
** ends; a file added later is not read. */
TEST(unwatched_folder_is_bounded_in_streaming_mode) {
  char *dir = h_tempdir();
  char in[512];
  snprintf(in, sizeof in, "%s/in", dir);
  mkdir(in, 0777);
  h_write(in, "0.json", "{\"id\":0}\n{\"id\":1}\n");
  dipper *db;
  dipper_open(&db, NULL);
  dipper_program *prog = NULL;
  int n = 0, finished = 0;
  dipper_query **qs = start_watch(db, in, "", &n, &prog);
  CHECK(qs != NULL);
  if (qs) {
    CHECK_EQ(step_rows(qs[0]), 2);
    h_write(in, "1.json", "{\"id\":2}\n");
    for (int i = 0; i < 3 && !finished; i++) CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
    CHECK(finished);
    dipper_progress p = {sizeof p};
    dipper_query_progress(qs[0], &p);
    CHECK_EQ(p.total_input_rows, 2);
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  /* a path that is not there: said at start, with the rule */
  char missing[600];
  snprintf(missing, sizeof missing, "%s/none", dir);
  dipper_open(&db, NULL);
  prog = NULL;
  qs = start_watch(db, missing, "", &n, &prog);
  CHECK(qs == NULL);
  CHECK(strstr(dipper_errmsg(db), "without 'source.monitor-interval' is bounded") != NULL);
  dipper_program_free(prog);
  dipper_close(db);
  h_rmdir(dir);
  free(dir);
}

/* 'source.max-files-per-trigger' caps a batch's new files (the oldest first);
** 'source.monitor-interval' lists the folder at that interval only; a
** folder of thousands of files reads each once (the taken names' index). */
TEST(watch_caps_files_and_honours_the_interval) {
  char *dir = h_tempdir();
  char in[512];
  snprintf(in, sizeof in, "%s/in", dir);
  mkdir(in, 0777);
  for (int i = 0; i < 5; i++) {
    char name[32], rec[32];
    snprintf(name, sizeof name, "%d.json", i);
    snprintf(rec, sizeof rec, "{\"id\":%d}\n", i);
    h_write(in, name, rec);
  }
  dipper *db;
  dipper_open(&db, NULL);
  dipper_program *prog = NULL;
  int n = 0;
  dipper_query **qs = start_watch(
      db, in, ", 'source.max-files-per-trigger' = '2', 'source.monitor-interval' = '1 us'", &n,
      &prog);
  CHECK(qs != NULL);
  if (qs) {
    CHECK_EQ(step_rows(qs[0]), 2);
    CHECK_EQ(step_rows(qs[0]), 2);
    CHECK_EQ(step_rows(qs[0]), 1);
    h_write(in, "5.json", "{\"id\":5}\n");
    CHECK_EQ(step_rows(qs[0]), 1);
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);

  /* a long interval: a file added after the first listing waits for the next */
  dipper_open(&db, NULL);
  qs = start_watch(db, in, ", 'source.monitor-interval' = '1 h'", &n, &prog);
  CHECK(qs != NULL);
  if (qs) {
    CHECK_EQ(step_rows(qs[0]), 6);
    h_write(in, "6.json", "{\"id\":6}\n");
    CHECK_EQ(step_rows(qs[0]), 0);
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);

  /* a short one: the next step sees it (the folder changed) */
  dipper_open(&db, NULL);
  qs = start_watch(db, in, ", 'source.monitor-interval' = '1 us'", &n, &prog);
  CHECK(qs != NULL);
  if (qs) {
    CHECK_EQ(step_rows(qs[0]), 7);
    for (int i = 7; i < 3007; i++) {
      char name[32], rec[32];
      snprintf(name, sizeof name, "f%05d.json", i);
      snprintf(rec, sizeof rec, "{\"id\":%d}\n", i);
      h_write(in, name, rec);
    }
    CHECK_EQ(step_rows(qs[0]), 3000);
    CHECK_EQ(step_rows(qs[0]), 0); /* each name once */
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  h_rmdir(dir);
  free(dir);
}

/* A file several windows long (1 MiB each): records cut by a window's end,
** and one record longer than a window, are read whole and once. */
TEST(files_longer_than_the_read_window) {
  char *dir = h_tempdir();
  char path[512];
  snprintf(path, sizeof path, "%s/big.json", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  int64_t rows = 0, sum = 0;
  for (int i = 0; f && i < 60000; i++) { /* ~3.5 MiB */
    fprintf(f, "{\"id\":%d,\"s\":\"%.*s\"}\n", i, 40 + i % 23, "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz");
    rows++;
    sum += i;
    if (i == 30000) { /* one record of 1.5 MiB */
      fprintf(f, "{\"id\":-1,\"s\":\"");
      for (int k = 0; k < 1536 * 1024; k++) fputc('x', f);
      fprintf(f, "\"}\n");
      rows++;
      sum += -1;
    }
  }
  if (f) fclose(f);
  dipper *db;
  dipper_open(&db, NULL);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';"
           "CREATE TABLE src (id BIGINT, s STRING) WITH ('connector' = 'filesystem', 'path' = "
           "'%s', 'format' = 'json');",
           path);
  CHECK_EQ(h_run(db, sql, NULL), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, "SELECT COUNT(*), SUM(id), MAX(CHAR_LENGTH(s)) FROM src;",
                          (size_t)-1, NULL, &prog),
           DIPPER_OK);
  struct ArrowArrayStream st;
  CHECK_EQ(dipper_execute(prog, 0, &st), DIPPER_OK);
  struct ArrowArray a;
  CHECK_EQ(st.get_next(&st, &a), 0);
  CHECK(a.release != NULL && a.length == 1);
  if (a.release) {
    CHECK_EQ(((const int64_t *)a.children[0]->buffers[1])[0], rows);
    CHECK_EQ(((const int64_t *)a.children[1]->buffers[1])[0], sum);
    CHECK_EQ(((const int32_t *)a.children[2]->buffers[1])[0], 1536 * 1024);
    a.release(&a);
  }
  st.release(&st);
  dipper_program_free(prog);
  dipper_close(db);
  h_rmdir(dir);
  free(dir);
}

TEST(bad_records_name_the_file_and_line) {
  char *dir = h_tempdir();
  h_write(dir, "data.csv", "1,ok\nx,bad\n3,fine\n\xff\xfe,\x01\n");
  dipper *db;
  dipper_open(&db, NULL);
  const char *msg;
  int rc = run_fmt(db, &msg,
                   "SET 'execution.runtime-mode' = 'batch';"
                   "CREATE TABLE src (id INT, s STRING) WITH ('connector' = 'filesystem', 'path' "
                   "= '@DIR@/data.csv', 'format' = 'csv');"
                   "CREATE TABLE o (id INT) WITH ('connector' = 'memory');"
                   "INSERT INTO o SELECT id FROM src;",
                   dir);
  CHECK_EQ(rc, DIPPER_DATA);
  CHECK_CONTAINS(msg, "/data.csv:2 (byte 0): column `id` (field 1): expected a value of type INT, "
                      "got \"x\"");
  rc = run_fmt(db, &msg,
               "CREATE TABLE src2 (id INT, s STRING) WITH ('connector' = 'filesystem', 'path' "
               "= '@DIR@/data.csv', 'format' = 'csv', 'dipper.bad-records' = 'dead-letter', "
               "'dipper.dead-letter.path' = '@DIR@/dead.jsonl');"
               "INSERT INTO o SELECT id FROM src2;",
               dir);
  CHECK_EQ(rc, DIPPER_OK);
  char *dead = h_read(dir, "dead.jsonl");
  CHECK_CONTAINS(dead, "/data.csv:2\",\"offset\":0,\"error\":\"column `id` (field 1)");
  CHECK_CONTAINS(dead, "\"record\":\"x,bad\"}\n");
  /* bytes that are not UTF-8 are kept whole, in base64 ("\xff\xfe,\x01\n") */
  CHECK_CONTAINS(dead, "/data.csv:4\",\"offset\":0,");
  CHECK_CONTAINS(dead, "\"record_base64\":\"//4sAQo=\"}\n");
  free(dead);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dipper_memory_fetch(db, "o", &s, &a), DIPPER_OK);
  CHECK_EQ(a.length, 2);
  if (a.release) {
    a.release(&a);
    s.release(&s);
  }
  /* formats the engine does not read are refused up front */
  rc = run_fmt(db, &msg,
               "CREATE TABLE pq (id INT) WITH ('connector' = 'filesystem', 'path' = '@DIR@', "
               "'format' = 'parquet');"
               "INSERT INTO o SELECT id FROM pq;",
               dir);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK_CONTAINS(msg, "reads formats 'json' and 'csv', not 'parquet'");
  dipper_close(db);
  h_rmdir(dir);
  free(dir);
}

TEST(console_prints_a_table_per_batch) {
  dipper *db;
  dipper_open(&db, NULL);
  CHECK_EQ(h_run(db, "CREATE TABLE t (id INT, name STRING, ts TIMESTAMP(0)) WITH ('connector' = "
                     "'memory', 'bounded' = 'true');",
                 NULL),
           DIPPER_OK);
  const dp_table_def *t = dp_catalog_table(db->catalog, "t");
  FILE *f = tmpfile();
  dp_arena *arena = dp_arena_new(0);
  dp_diags diags;
  dp_diags_init(&diags, arena, NULL, NULL, 0);
  dp_sink k = {0};
  k.cls = dp_sink_find("print");
  k.db = db;
  k.table = t;
  k.schema = &t->schema;
  k.diags = &diags;
  k.user = f;
  CHECK(k.cls != NULL);
  CHECK_EQ(k.cls->open(&k), DIPPER_OK);
  dp_batch *b = dp_batch_new(&t->schema, 0);
  dp_vector_append_i64(b->cols[0], 7);
  dp_vector_append_str(b->cols[1], "h\xc3\xa9", 3);
  dp_vector_append_i64(b->cols[2], 1704067200000000LL);
  dp_vector_append_i64(b->cols[0], 12345);
  dp_vector_append_null(b->cols[1]);
  dp_vector_append_null(b->cols[2]);
  dp_batch_sync(b);
  CHECK_EQ(k.cls->write(&k, 4, b), DIPPER_OK);
  CHECK_EQ(k.cls->commit(&k, 4), DIPPER_OK);
  CHECK_EQ(k.cls->commit(&k, 5), DIPPER_OK); /* an empty batch prints nothing */
  k.cls->close(&k);
  rewind(f);
  char text[2048];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  CHECK_STR(text, "-------------------------------------------\n"
                  "Batch: 4\n"
                  "-------------------------------------------\n"
                  "+-----+----+-------------------+\n"
                  "|   id|name|                 ts|\n"
                  "+-----+----+-------------------+\n"
                  "|    7|  h\xc3\xa9|2024-01-01 00:00:00|\n"
                  "|12345|NULL|               NULL|\n"
                  "+-----+----+-------------------+\n\n");
  fclose(f);
  dp_batch_free(b);
  dp_arena_free(arena);
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
