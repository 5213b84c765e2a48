/*
** streaming_files_test.c — dipper's filesystem, datagen and socket sources
** on a real Spark (127.0.0.1:15002), through the compile pipeline and the
** streaming backend (translate_stream.h, streaming.h):
**
**  - watched directories in every format Spark streams (csv, json, parquet,
**    orc, raw/text) read by one query: the files of round 1, then the new
**    files of round 2 picked up (parquet and orc files are written by Spark
**    itself and moved in whole);
**  - datagen as Spark's rate source: random fields within their bounds;
**  - socket: Spark connects to a listener of this test and reads CSV lines.
**
** Results go to Spark's memory sink and are compared exactly.
*/
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/dipper_int.h"
#include "spark/streaming.h"
#include "spark/translate_stream.h"
#include "test.h"
#include "spark/kafka_util.c" /* one source file per test target: the helpers come along */

/* Spark writes `rows` (a VALUES list of (id, name)) as one <fmt> file, which
** is moved into dir/<sub>/<name> whole (a stream must never list a
** half-written file). */
static int spark_file(st_env *e, const char *fmt, const char *rows, const char *sub,
                      const char *name) {
  char q[1024], stage[512], dst[512];
  snprintf(stage, sizeof stage, "%s/stage_%s_%s", e->dir, sub, name);
  snprintf(q, sizeof q,
           "INSERT OVERWRITE DIRECTORY '%s' USING %s "
           "SELECT * FROM VALUES %s AS t(id, name)",
           stage, fmt, rows);
  if (st_sql(e, q) != 0 || st_mkdir(e, sub) != 0) return -1;
  DIR *d = opendir(stage);
  if (!d) return -1;
  int moved = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, "part-", 5) != 0) continue;
    char src[1024];
    snprintf(src, sizeof src, "%s/%s", stage, de->d_name);
    snprintf(dst, sizeof dst, "%s/%s/%s_%d", e->dir, sub, name, moved);
    if (rename(src, dst) != 0) break;
    moved++;
  }
  closedir(d);
  if (!moved) fprintf(stderr, "no part file in %s\n", stage);
  return moved ? 0 : -1;
}

static int write_round(st_env *e, int round) {
  char name[32], csv[64], json[64], raw[64], rows[64];
  snprintf(name, sizeof name, "r%d", round);
  int id = round * 10;
  snprintf(csv, sizeof csv, "%d,csv-%d\n", id + 1, round);
  snprintf(json, sizeof json, "{\"id\":%d,\"name\":\"json-%d\"}\n", id + 2, round);
  snprintf(raw, sizeof raw, "a raw line %d\n", round);
  int rc = st_write_file(e, "csv", name, csv) | st_write_file(e, "json", name, json) |
           st_write_file(e, "raw", name, raw);
  snprintf(rows, sizeof rows, "(%d, 'parquet-%d')", id + 3, round);
  rc |= spark_file(e, "parquet", rows, "parquet", name);
  snprintf(rows, sizeof rows, "(%d, 'orc-%d')", id + 4, round);
  rc |= spark_file(e, "orc", rows, "orc", name);
  return rc;
}

#define FS(t, fmt, cols) \
  "CREATE TABLE " t " (" cols ") WITH ('connector' = 'filesystem', 'path' = '%s/" t "', " \
  "'format' = '" fmt "', 'source.monitor-interval' = '1 us');\n"

TEST(directories_in_every_format_pick_up_new_files) {
  st_env e;
  CHECK_EQ(st_open(&e, "files"), 0);
  const char *subs[] = {"csv", "json", "parquet", "orc", "raw"};
  for (int i = 0; i < 5; i++) CHECK_EQ(st_mkdir(&e, subs[i]), 0);
  char sql[4096];
  snprintf(sql, sizeof sql,
           FS("csv", "csv", "id INT, name STRING") FS("json", "json", "id INT, name STRING")
           FS("parquet", "parquet", "id INT, name STRING") FS("orc", "orc", "id INT, name STRING")
           FS("raw", "raw", "line STRING")
           "CREATE TABLE out (src STRING, id INT, name STRING) WITH ('connector' = 'memory');\n"
           "INSERT INTO out\n"
           "SELECT 'csv', id, name FROM csv UNION ALL SELECT 'json', id, name FROM json\n"
           "UNION ALL SELECT 'parquet', id, name FROM parquet\n"
           "UNION ALL SELECT 'orc', id, name FROM orc\n"
           "UNION ALL SELECT 'raw', CHAR_LENGTH(line), line FROM raw",
           e.dir, e.dir, e.dir, e.dir, e.dir);
  dp_sq q;
  CHECK_EQ(st_start(&e, sql, &q), 0);
  static const char *const want[] = {
      "{\"src\":\"csv\",\"id\":11,\"name\":\"csv-1\"}",
      "{\"src\":\"csv\",\"id\":21,\"name\":\"csv-2\"}",
      "{\"src\":\"json\",\"id\":12,\"name\":\"json-1\"}",
      "{\"src\":\"json\",\"id\":22,\"name\":\"json-2\"}",
      "{\"src\":\"orc\",\"id\":14,\"name\":\"orc-1\"}",
      "{\"src\":\"orc\",\"id\":24,\"name\":\"orc-2\"}",
      "{\"src\":\"parquet\",\"id\":13,\"name\":\"parquet-1\"}",
      "{\"src\":\"parquet\",\"id\":23,\"name\":\"parquet-2\"}",
      "{\"src\":\"raw\",\"id\":12,\"name\":\"a raw line 1\"}",
      "{\"src\":\"raw\",\"id\":12,\"name\":\"a raw line 2\"}",
  };
  for (int round = 1; round <= 2 && q.id[0]; round++) {
    CHECK_EQ(write_round(&e, round), 0);
    CHECK_EQ(st_drain(&e, &q), 0);
    char **rows = NULL;
    int n = st_table_json(&e, "out", NULL, &rows);
    if (round == 1) {
      /* round 1's rows, and nothing of round 2 yet */
      const char *w1[5];
      for (int i = 0; i < 5; i++) w1[i] = want[2 * i];
      CHECK_EQ(st_expect(rows, n, w1, 5), 0);
    } else {
      CHECK_EQ(st_expect(rows, n, want, 10), 0);
    }
    st_free_rows(rows, n);
  }
  if (q.id[0]) CHECK_EQ(st_finish(&e, &q, 0), 0);
  dp_sq_free(&q);
  st_close(&e);
}

TEST(datagen_on_the_rate_source) {
  st_env e;
  CHECK_EQ(st_open(&e, "datagen"), 0);
  const char *sql =
      "CREATE TABLE g (r INT, s STRING, d DOUBLE, f BOOLEAN, ts TIMESTAMP(3)) WITH (\n"
      "  'connector' = 'datagen', 'rows-per-second' = '100',\n"
      "  'fields.r.min' = '1', 'fields.r.max' = '6', 'fields.s.length' = '8',\n"
      "  'fields.d.min' = '-1', 'fields.d.max' = '1', 'fields.ts.max-past' = '10 s');\n"
      "CREATE TABLE out (r INT, s STRING, d DOUBLE, f BOOLEAN, ts TIMESTAMP(3))\n"
      "  WITH ('connector' = 'memory');\n"
      "INSERT INTO out SELECT * FROM g";
  dp_sq q;
  CHECK_EQ(st_start(&e, sql, &q), 0);
  char **rows = NULL;
  /* the rate source's rows arrive with the clock: wait for 200 */
  int n = st_wait_rows(&e, "(SELECT count(*) AS c FROM out)", "c >= 200", 1, 120000, &rows);
  CHECK_EQ(n, 1);
  st_free_rows(rows, n);
  if (q.id[0]) CHECK_EQ(st_finish(&e, &q, 0), 0);
  dp_sq_free(&q);
  n = st_rows(&e,
              "SELECT to_json(named_struct("
              "'r_in_bounds', bool_and(r BETWEEN 1 AND 6), 'r_all_six', count(DISTINCT r) = 6,"
              "'s_length', bool_and(length(s) = 8 AND s RLIKE '^[0-9a-f]+$'),"
              "'s_distinct', count(DISTINCT s) > count(*) * 0.9,"
              "'d_in_bounds', bool_and(d >= -1 AND d <= 1), 'd_both_signs', min(d) < 0 AND max(d) > 0,"
              "'f_both', count(DISTINCT f) = 2, 'no_nulls', count(r) = count(*) AND count(s) = count(*) "
              "AND count(d) = count(*) AND count(f) = count(*) AND count(ts) = count(*),"
              "'ts_recent', bool_and(ts <= CAST(current_timestamp() AS TIMESTAMP_NTZ) AND "
              "ts > CAST(current_timestamp() AS TIMESTAMP_NTZ) - INTERVAL 15 MINUTES))) FROM out",
              &rows);
  static const char *const want[] = {
      "{\"r_in_bounds\":true,\"r_all_six\":true,\"s_length\":true,\"s_distinct\":true,"
      "\"d_in_bounds\":true,\"d_both_signs\":true,\"f_both\":true,\"no_nulls\":true,"
      "\"ts_recent\":true}"};
  CHECK_EQ(st_expect(rows, n, want, 1), 0);
  st_free_rows(rows, n);
  st_close(&e);
}

TEST(socket_lines_as_csv) {
  st_env e;
  CHECK_EQ(st_open(&e, "socket"), 0);
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(ls >= 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  CHECK_EQ(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
  CHECK_EQ(listen(ls, 4), 0);
  CHECK_EQ(getsockname(ls, (struct sockaddr *)&a, &alen), 0);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE s (id INT, name STRING) WITH ('connector' = 'socket',\n"
           "  'hostname' = '127.0.0.1', 'port' = '%d', 'format' = 'csv');\n"
           "CREATE TABLE out (id INT, name STRING) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT id, upper(name) FROM s",
           ntohs(a.sin_port));
  dp_sq q;
  CHECK_EQ(st_start(&e, sql, &q), 0);
  /* Spark's socket source connects when the query starts */
  struct pollfd pf = {.fd = ls, .events = POLLIN};
  CHECK_EQ(poll(&pf, 1, 120000), 1);
  int c = accept(ls, NULL, NULL);
  CHECK(c >= 0);
  static const char lines[] = "1,apple\n2,pear\n3,\"fig, dried\"\n";
  CHECK_EQ(write(c, lines, sizeof lines - 1), (ssize_t)(sizeof lines - 1));
  /* the source's reader thread takes the lines when they arrive: drain
     until they are in */
  char **rows = NULL;
  int n = 0;
  for (int i = 0; i < 60 && q.id[0] && n < 3; i++) {
    CHECK_EQ(st_drain(&e, &q), 0);
    st_free_rows(rows, n);
    n = st_table_json(&e, "out", NULL, &rows);
    if (n < 3) tk_sleep_ms(500);
  }
  static const char *const want[] = {
      "{\"id\":1,\"name\":\"APPLE\"}",
      "{\"id\":2,\"name\":\"PEAR\"}",
      "{\"id\":3,\"name\":\"FIG, DRIED\"}",
  };
  CHECK_EQ(st_expect(rows, n, want, 3), 0);
  st_free_rows(rows, n);
  if (q.id[0]) CHECK_EQ(st_finish(&e, &q, 0), 0);
  dp_sq_free(&q);
  if (c >= 0) close(c);
  close(ls);
  st_close(&e);
}

int main(void) { return RUN_TESTS(); }
