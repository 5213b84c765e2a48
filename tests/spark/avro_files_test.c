/*
** avro_files_test.c — filesystem tables with 'format' = 'avro' (a directory
** of Avro object container files, Flink's meaning) on a real Spark with the
** spark-avro package (scripts/spark-local passes its jar), through the
** public API and the translator (spark/translate.c):
**
**  - a batch INSERT from a VALUES query: Spark writes the container files;
**    a batch SELECT reads them back, every row and value exact (a NULL
**    string, a DECIMAL, a TIMESTAMP(3), a BOOLEAN);
**  - INSERT OVERWRITE with 'avro.codec' = 'null': the directory holds the
**    new rows only, in uncompressed files (the container header names the
**    codec "null");
**  - the same directory as a streaming source (trigger available-now) into
**    a JSON file sink: every row exact in the sink's files.
**
** The server: DIPPER_SPARK_REMOTE, else sc://127.0.0.1:$DIPPER_SPARK_PORT
** (default 15002), as tests/spark/kafka_util.c reads it.  Fails, never
** skips, when the server or its avro package is missing.
*/
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dipper.h"
#include "spark/spark_env.h"
#include "test.h"


/* A fresh directory under /tmp, unique per run. */
static void fresh_dir(char *dir, size_t cap, const char *what) {
  snprintf(dir, cap, "/tmp/dipper_avro_%s_%ld_%ld", what, (long)getpid(), (long)time(NULL));
  mkdir(dir, 0755);
}

/* rm -r path (the test's directories; Spark's part files, checkpoints). */
static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
      if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
      char sub[1024];
      snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
      remove_tree(sub);
    }
    if (d) closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

static int compile(dipper *db, const char *sql, dipper_program **prog) {
  int rc = dipper_compile(db, sql, (size_t)-1, "avro.sql", prog);
  if (rc != DIPPER_OK) fprintf(stderr, "  (compile) %s\n", dipper_errmsg(db));
  return rc;
}

/* Run every statement of a batch program (INSERTs) to its end. */
static int run_all(dipper *db, const char *sql) {
  dipper_program *prog = NULL;
  int rc = compile(db, sql, &prog);
  if (rc != DIPPER_OK) return rc;
  dipper_query **qs = NULL;
  int n = 0;
  rc = dipper_query_start(prog, &qs, &n);
  for (int i = 0; i < n && rc == DIPPER_OK; i++) {
    int finished = 0;
    rc = dipper_query_step(qs[i], &finished);
    if (rc == DIPPER_OK && !finished) rc = -1;
  }
  if (rc != DIPPER_OK) fprintf(stderr, "  (run) %s\n", dipper_errmsg(db));
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  return rc;
}

static bool is_null(const struct ArrowArray *c, int64_t j) {
  const uint8_t *valid = c->n_buffers > 0 ? c->buffers[0] : NULL;
  return c->null_count != 0 && valid && !(valid[j / 8] & (1u << (j % 8)));
}

/* Cell i of column c (Arrow format fmt) as text: NULL, numbers, strings,
** DECIMAL(p,s) with its s digits, timestamps as microseconds. */
static void cell(char *out, size_t cap, const char *fmt, const struct ArrowArray *c, int64_t i) {
  int64_t j = c->offset + i;
  if (is_null(c, j)) {
    snprintf(out, cap, "NULL");
  } else if (!strcmp(fmt, "l") || !strncmp(fmt, "ts", 2)) {
    snprintf(out, cap, "%" PRId64, ((const int64_t *)c->buffers[1])[j]);
  } else if (!strcmp(fmt, "i") || !strcmp(fmt, "tdD")) {
    snprintf(out, cap, "%" PRId32, ((const int32_t *)c->buffers[1])[j]);
  } else if (!strcmp(fmt, "g")) {
    snprintf(out, cap, "%g", ((const double *)c->buffers[1])[j]);
  } else if (!strcmp(fmt, "b")) {
    const uint8_t *bits = c->buffers[1];
    snprintf(out, cap, "%s", bits[j / 8] & (1u << (j % 8)) ? "true" : "false");
  } else if (!strcmp(fmt, "u")) {
    const int32_t *off = c->buffers[1];
    const char *bytes = c->buffers[2];
    snprintf(out, cap, "%.*s", (int)(off[j + 1] - off[j]), bytes + off[j]);
  } else if (!strncmp(fmt, "d:", 2)) {
    /* the low 64 bits of the little-endian 128-bit unscaled value suffice here */
    int scale = 0;
    const char *comma = strchr(fmt, ',');
    if (comma) scale = atoi(comma + 1);
    int64_t v = ((const int64_t *)c->buffers[1])[2 * j];
    int64_t p = 1;
    for (int k = 0; k < scale; k++) p *= 10;
    snprintf(out, cap, "%s%" PRId64 ".%0*" PRId64, v < 0 ? "-" : "", (v < 0 ? -v : v) / p, scale,
             (v < 0 ? -v : v) % p);
  } else {
    snprintf(out, cap, "?format %s", fmt);
  }
}

/* The rows of statement `stmt` of sql, as "a|b|c" lines (in order). */
static int select_rows(dipper *db, const char *sql, int stmt, char rows[][160], int cap, int *n) {
  *n = 0;
  dipper_program *prog = NULL;
  int rc = compile(db, sql, &prog);
  if (rc != DIPPER_OK) return rc;
  struct ArrowArrayStream st;
  rc = dipper_execute(prog, stmt, &st);
  if (rc != DIPPER_OK) {
    fprintf(stderr, "  (execute) %s\n", dipper_errmsg(db));
    dipper_program_free(prog);
    return rc;
  }
  struct ArrowSchema schema;
  rc = st.get_schema(&st, &schema);
  for (;;) {
    struct ArrowArray a;
    if (rc != 0 || st.get_next(&st, &a) != 0) {
      rc = -1;
      break;
    }
    if (!a.release) break;
    for (int64_t i = 0; i < a.length && *n < cap; i++, (*n)++) {
      size_t k = 0;
      rows[*n][0] = '\0';
      for (int64_t c = 0; c < a.n_children; c++) {
        char v[64];
        cell(v, sizeof v, schema.children[c]->format, a.children[c], i);
        k += (size_t)snprintf(rows[*n] + k, k < 160 ? 160 - k : 0, "%s%s", c ? "|" : "", v);
        if (k >= 160) k = 159;
      }
    }
    a.release(&a);
  }
  if (rc == 0) schema.release(&schema);
  st.release(&st);
  dipper_program_free(prog);
  return rc;
}

/* The files in dir whose names start with prefix and do not start with '.'. */
static int count_files(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (!strncmp(de->d_name, prefix, strlen(prefix))) n++;
  closedir(d);
  return n;
}

/* Does some file "part-*" in dir contain needle (bytes, e.g. the container
** header's codec name)? */
static bool some_part_has(const char *dir, const char *needle, size_t nlen) {
  DIR *d = opendir(dir);
  if (!d) return false;
  bool found = false;
  struct dirent *de;
  while (!found && (de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, "part-", 5) != 0) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    FILE *fp = fopen(path, "rb");
    if (!fp) continue;
    char buf[4096];
    size_t got = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    for (size_t i = 0; i + nlen <= got && !found; i++) found = memcmp(buf + i, needle, nlen) == 0;
  }
  closedir(d);
  return found;
}

/* The table, its path and extra options as printf arguments. */
#define TABLE_FMT                                                                                  \
    "SET 'execution.runtime-mode' = 'batch';\n"                                                    \
    "CREATE TABLE av (id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), ok BOOLEAN)\n" \
    "WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'avro'%s);\n"

TEST(batch_insert_writes_container_files_and_select_reads_them) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  char dir[256], sql[2048];
  fresh_dir(dir, sizeof dir, "batch");
  char table[1024];
  snprintf(table, sizeof table, TABLE_FMT, dir, "");
  snprintf(sql, sizeof sql,
           "%sINSERT INTO av VALUES\n"
           "  (1, 'anna', 12.50, TIMESTAMP '2024-01-01 00:00:01.250', TRUE),\n"
           "  (2, CAST(NULL AS STRING), -3.05, TIMESTAMP '2024-01-01 00:00:02.000', FALSE),\n"
           "  (3, 'carl', 0.00, TIMESTAMP '1999-12-31 23:59:59.999', CAST(NULL AS BOOLEAN));\n",
           table);
  CHECK_EQ(run_all(db, sql), DIPPER_OK);
  /* Spark's container files, with the .avro extension */
  CHECK(count_files(dir, "part-") >= 1);
  CHECK(some_part_has(dir, "Obj\x01", 4)); /* an Avro object container file's magic */

  char rows[8][160];
  int n = 0;
  /* the handle's catalog keeps the table */
  CHECK_EQ(select_rows(db, "SELECT id, name, amount, ts, ok FROM av ORDER BY id", 0, rows, 8, &n), DIPPER_OK);
  CHECK_EQ(n, 3);
  if (n == 3) {
    /* 2024-01-01 00:00:01.250 is 1704067201250000 µs since the epoch */
    CHECK_STR(rows[0], "1|anna|12.50|1704067201250000|true");
    CHECK_STR(rows[1], "2|NULL|-3.05|1704067202000000|false");
    CHECK_STR(rows[2], "3|carl|0.00|946684799999000|NULL");
  }
  /* a filter and an aggregate over the read */
  CHECK_EQ(select_rows(db, "SELECT COUNT(*) AS n, SUM(amount) AS total FROM av\n"
                           "WHERE ts >= TIMESTAMP '2024-01-01 00:00:00'", 0, rows, 8, &n),
           DIPPER_OK);
  CHECK_EQ(n, 1);
  if (n == 1) CHECK_STR(rows[0], "2|9.45");
  dipper_close(db);
  remove_tree(dir);
}

TEST(overwrite_with_a_codec) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  char dir[256], sql[2048], table[1024];
  fresh_dir(dir, sizeof dir, "codec");
  snprintf(table, sizeof table, TABLE_FMT, dir, ", 'avro.codec' = 'null'");
  snprintf(sql, sizeof sql,
           "%sINSERT INTO av VALUES (1, 'old', 1.00, TIMESTAMP '2024-01-01 00:00:00', TRUE);\n"
           "INSERT OVERWRITE av VALUES (7, 'new', 7.00, TIMESTAMP '2024-02-01 00:00:00', FALSE),\n"
           "  (8, 'newer', 8.00, TIMESTAMP '2024-02-01 00:00:00.001', TRUE);\n",
           table);
  CHECK_EQ(run_all(db, sql), DIPPER_OK);
  /* the container header's metadata: avro.codec = "null" (no compression) */
  CHECK(some_part_has(dir, "avro.codec\x08null", 15));
  char rows[8][160];
  int n = 0;
  CHECK_EQ(select_rows(db, "SELECT id, name FROM av ORDER BY id", 0, rows, 8, &n), DIPPER_OK);
  CHECK_EQ(n, 2);
  if (n == 2) {
    CHECK_STR(rows[0], "7|new");
    CHECK_STR(rows[1], "8|newer");
  }
  dipper_close(db);
  remove_tree(dir);
}

/* The lines of the "part-*" files in dir, sorted. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int part_lines(const char *dir, char **lines, int cap) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, "part-", 5) != 0) continue;
    char path[1024], line[512];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    FILE *fp = fopen(path, "r");
    if (!fp) continue;
    while (n < cap && fgets(line, sizeof line, fp)) {
      line[strcspn(line, "\n")] = '\0';
      if (line[0]) lines[n++] = strdup(line);
    }
    fclose(fp);
  }
  closedir(d);
  qsort(lines, (size_t)n, sizeof *lines, cmp_str);
  return n;
}

TEST(avro_directory_as_a_stream) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  char dir[256], out[300], ck[300], sql[3072], table[1024];
  fresh_dir(dir, sizeof dir, "stream");
  snprintf(out, sizeof out, "%s_out", dir);
  snprintf(ck, sizeof ck, "%s_ck", dir);
  snprintf(table, sizeof table, TABLE_FMT, dir,", 'source.monitor-interval' = '1 us'");
  /* the files, written by a batch INSERT */
  snprintf(sql, sizeof sql,
           "%sINSERT INTO av VALUES (1, 'anna', 12.50, TIMESTAMP '2024-01-01 00:00:01.250', TRUE),\n"
           "  (2, 'bert', 3.05, TIMESTAMP '2024-01-01 00:00:02', FALSE),\n"
           "  (3, CAST(NULL AS STRING), 0.00, TIMESTAMP '2024-01-01 00:00:03', TRUE);\n",
           table);
  CHECK_EQ(run_all(db, sql), DIPPER_OK);
  /* read as a stream: the directory's files, then the query ends */
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'streaming';\n"
           "SET 'dipper.trigger' = 'available-now';\n"
           "SET 'execution.checkpointing.dir' = '%s';\n"
           "CREATE TABLE js (id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3))\n"
           "WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n"
           "INSERT INTO js SELECT id, name, amount, ts FROM av;\n",
           ck, out);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, sql, &prog), DIPPER_OK);
  if (!prog) {
    dipper_close(db);
    return;
  }
  CHECK_EQ(dipper_program_streaming(prog), 1);
  dipper_query **qs = NULL;
  int nq = 0;
  int rc = dipper_query_start(prog, &qs, &nq);
  if (rc) fprintf(stderr, "  (start) %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(nq, 1);
  if (rc == DIPPER_OK && nq == 1) {
    int terminated = 0;
    rc = dipper_query_await(qs[0], 300000, &terminated);
    if (rc) fprintf(stderr, "  (await) %s\n", dipper_errmsg(db));
    CHECK_EQ(rc, DIPPER_OK);
    CHECK_EQ(terminated, 1);
    dipper_progress p = {sizeof p};
    CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
    CHECK_EQ(p.total_input_rows, 3);
  }
  char *lines[16];
  int n = part_lines(out, lines, 16);
  CHECK_EQ(n, 3);
  if (n == 3) {
    CHECK_STR(lines[0], "{\"id\":1,\"name\":\"anna\",\"amount\":12.50,\"ts\":\"2024-01-01 00:00:01.250\"}");
    CHECK_STR(lines[1], "{\"id\":2,\"name\":\"bert\",\"amount\":3.05,\"ts\":\"2024-01-01 00:00:02.000\"}");
    CHECK_STR(lines[2], "{\"id\":3,\"name\":null,\"amount\":0.00,\"ts\":\"2024-01-01 00:00:03.000\"}");
  }
  for (int i = 0; i < n; i++) free(lines[i]);
  dipper_query_free_all(qs, nq);
  dipper_program_free(prog);
  dipper_close(db);
  remove_tree(dir);
  remove_tree(out);
  remove_tree(ck);
}

int main(void) { return RUN_TESTS(); }
