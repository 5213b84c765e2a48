/*
** fs_partition_test.c — the filesystem sink with PARTITIONED BY
** (connectors/fs_partition.c) in a scratch directory: the Hive-style
** folders with Flink's escaping, NULL and '' as the default partition name
** (and 'partition.default-name'), the partition columns left out of JSON
** and CSV files, the success-file commit policy (batch mode: at the end;
** streaming: after the delay, found again after a restart), a killed run's
** temporary files removed, and the options that are refused at CREATE TABLE.
*/
#include "conn_harness.h"
#include "connectors/fs_partition.h"
#include "test.h"

/* Every file under dir, as "rel/path" sorted and joined by spaces (static). */
static void walk(const char *dir, const char *rel, char **names, int *n) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL && *n < 256) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char full[2048], r[1024];
    snprintf(full, sizeof full, "%s/%s", dir, de->d_name);
    snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
    struct stat sb;
    if (stat(full, &sb) == 0 && S_ISDIR(sb.st_mode)) walk(full, r, names, n);
    else names[(*n)++] = strdup(r);
  }
  closedir(d);
}

static const char *tree(const char *dir) {
  static char out[8192];
  char *names[256];
  int n = 0;
  walk(dir, "", names, &n);
  qsort(names, (size_t)n, sizeof *names, h_cmp);
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? " " : "", names[i]);
    free(names[i]);
  }
  return out;
}

/* Run sql with every @ replaced by dir. */
static int run_in(const char *dir, const char *text, const char **msg) {
  char sql[8192];
  size_t len = 0, dlen = strlen(dir);
  for (const char *p = text; *p && len + dlen + 1 < sizeof sql; p++) {
    if (*p == '@') {
      memcpy(sql + len, dir, dlen);
      len += dlen;
    } else {
      sql[len++] = *p;
    }
  }
  sql[len] = '\0';
  dipper *db;
  dipper_open(&db, NULL);
  int rc = h_run(db, sql, msg);
  if (rc) fprintf(stderr, "run: %s\n", *msg);
  dipper_close(db);
  return rc;
}

static void check_file(const char *dir, const char *rel, const char *want) {
  char *text = h_read(dir, rel);
  CHECK_STR(text ? text : "(missing)", want);
  free(text);
}

TEST(folder_names_escape_as_flink) {
  dp_buf b = DP_BUF_INIT;
  dp_fs_partition_name(&b, "dt", "2024-01-01", 10, false, "__DEFAULT_PARTITION__");
  CHECK_STR(dp_buf_cstr(&b), "dt=2024-01-01");
  b.len = 0;
  const char v[] = "a/b=c%d:e?f#g\"h'i*j\\k{l[m]n^o\x01p\x7fq r é";
  dp_fs_partition_name(&b, "k", v, sizeof v - 1, false, "__DEFAULT_PARTITION__");
  CHECK_STR(dp_buf_cstr(&b), "k=a%2Fb%3Dc%25d%3Ae%3Ff%23g%22h%27i%2Aj%5Ck%7Bl%5Bm%5Dn%5Eo%01p%7Fq r é");
  b.len = 0;
  dp_fs_partition_name(&b, "k", "", 0, false, "none");
  CHECK_STR(dp_buf_cstr(&b), "k=none");
  b.len = 0;
  dp_fs_partition_name(&b, "a=b", "x", 1, true, "__DEFAULT_PARTITION__");
  CHECK_STR(dp_buf_cstr(&b), "a%3Db=__DEFAULT_PARTITION__");
  dp_buf_free(&b);
}

/* Batch mode: every partition folder, the rows without their partition
** columns, and each partition committed at the end whatever the delay. */
TEST(batch_json_folders_and_success_files) {
  char *dir = h_tempdir();
  char in[512], out[512];
  snprintf(in, sizeof in, "%s/in", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  mkdir(in, 0777);
  h_write(in, "a.json",
          "{\"id\":1,\"dt\":\"2024-01-01\",\"h\":10,\"v\":\"x\"}\n"
          "{\"id\":2,\"dt\":\"2024-01-01\",\"h\":10,\"v\":\"y\"}\n"
          "{\"id\":3,\"dt\":\"2024-01-01\",\"h\":11,\"v\":null}\n"
          "{\"id\":4,\"dt\":\"a/b=c\",\"h\":null,\"v\":\"z\"}\n"
          "{\"id\":5,\"dt\":\"\",\"h\":-1,\"v\":\"w\"}\n"
          "{\"id\":6,\"dt\":null,\"h\":-1,\"v\":\"u\"}\n");
  const char *msg;
  int rc = run_in(dir,
                  "SET 'execution.runtime-mode' = 'batch';"
                  "CREATE TABLE src (id INT, dt STRING, h INT, v STRING) WITH ('connector' = "
                  "'filesystem', 'path' = '@/in', 'format' = 'json');"
                  "CREATE TABLE dst (id INT, dt STRING, h INT, v STRING) PARTITIONED BY (dt, h) WITH ("
                  "'connector' = 'filesystem', 'path' = '@/out', 'format' = 'json', "
                  "'sink.partition-commit.policy.kind' = 'success-file', "
                  "'sink.partition-commit.delay' = '1 h');"
                  "INSERT INTO dst SELECT * FROM src;",
                  &msg);
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_STR(tree(out),
            "dt=2024-01-01/h=10/_SUCCESS dt=2024-01-01/h=10/part-0-0.json "
            "dt=2024-01-01/h=11/_SUCCESS dt=2024-01-01/h=11/part-0-0.json "
            "dt=__DEFAULT_PARTITION__/h=-1/_SUCCESS dt=__DEFAULT_PARTITION__/h=-1/part-0-0.json "
            "dt=a%2Fb%3Dc/h=__DEFAULT_PARTITION__/_SUCCESS "
            "dt=a%2Fb%3Dc/h=__DEFAULT_PARTITION__/part-0-0.json");
  check_file(out, "dt=2024-01-01/h=10/part-0-0.json", "{\"id\":1,\"v\":\"x\"}\n{\"id\":2,\"v\":\"y\"}\n");
  check_file(out, "dt=2024-01-01/h=11/part-0-0.json", "{\"id\":3,\"v\":null}\n");
  check_file(out, "dt=a%2Fb%3Dc/h=__DEFAULT_PARTITION__/part-0-0.json", "{\"id\":4,\"v\":\"z\"}\n");
  check_file(out, "dt=__DEFAULT_PARTITION__/h=-1/part-0-0.json", "{\"id\":5,\"v\":\"w\"}\n{\"id\":6,\"v\":\"u\"}\n");
  check_file(out, "dt=2024-01-01/h=10/_SUCCESS", "");

  /* a second run without a checkpoint takes the next free names; no policy: no success file;
  ** the default name and CSV with a header of the data columns */
  rc = run_in(dir,
              "SET 'execution.runtime-mode' = 'batch';"
              "CREATE TABLE src (id INT, dt STRING, h INT, v STRING) WITH ('connector' = "
              "'filesystem', 'path' = '@/in', 'format' = 'json');"
              "CREATE TABLE dst (id INT, dt STRING, v STRING) PARTITIONED BY (dt) WITH ("
              "'connector' = 'filesystem', 'path' = '@/csv', 'format' = 'csv', 'csv.header' = 'true', "
              "'partition.default-name' = 'none');"
              "INSERT INTO dst SELECT id, dt, v FROM src WHERE id IN (1, 3, 6);"
              "INSERT INTO dst SELECT id, dt, v FROM src WHERE id = 2;",
              &msg);
  CHECK_EQ(rc, DIPPER_OK);
  char csv[600];
  snprintf(csv, sizeof csv, "%s/csv", dir);
  CHECK_STR(tree(csv), "dt=2024-01-01/part-0-0.csv dt=2024-01-01/part-0-1.csv dt=none/part-0-0.csv");
  check_file(csv, "dt=2024-01-01/part-0-0.csv", "id,v\n1,x\n3,\n");
  check_file(csv, "dt=2024-01-01/part-0-1.csv", "id,v\n2,y\n");
  check_file(csv, "dt=none/part-0-0.csv", "id,v\n6,u\n");
  h_rmdir(dir);
  free(dir);
}

#define STREAM_SQL(delay, in) \
  "SET 'execution.checkpointing.dir' = '@/ck';" \
  "SET 'dipper.trigger' = 'available-now';" \
  "CREATE TABLE src (id INT, dt STRING) WITH ('connector' = 'filesystem', 'path' = '@/" in "', " \
  "'format' = 'json', 'source.monitor-interval' = '1 us');" \
  "CREATE TABLE dst (id INT, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', " \
  "'path' = '@/out', 'format' = 'json', 'sink.partition-commit.policy.kind' = 'success-file', " \
  "'sink.partition-commit.trigger' = 'process-time', 'sink.partition-commit.delay' = '" delay "', " \
  "'sink.partition-commit.success-file.name' = '_DONE');" \
  "INSERT INTO dst SELECT * FROM src;"

/* Streaming: a partition waits for its delay; a restart finds it waiting
** again from its files and commits it when its delay has passed; a killed
** run's temporary file in a partition folder is removed. */
TEST(streaming_delay_and_restart) {
  char *dir = h_tempdir();
  char in[512], out[512];
  snprintf(in, sizeof in, "%s/in", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  mkdir(in, 0777);
  h_write(in, "1.json", "{\"id\":1,\"dt\":\"d1\"}\n{\"id\":2,\"dt\":\"d2\"}\n");
  const char *msg;
  CHECK_EQ(run_in(dir, STREAM_SQL("1 h", "in"), &msg), DIPPER_OK);
  const char *t = tree(out);
  /* one batch, its files named by the query's tag; nothing committed yet */
  CHECK(strstr(t, "dt=d1/part-0-") != NULL);
  CHECK(strstr(t, "dt=d2/part-0-") != NULL);
  CHECK(strstr(t, "_DONE") == NULL);
  char tag[9] = {0};
  const char *at = strstr(t, "dt=d1/part-0-");
  if (at) memcpy(tag, at + 13, 8);
  char d1[600], leftover[128];
  snprintf(d1, sizeof d1, "%s/dt=d1", out);
  snprintf(leftover, sizeof leftover, ".part-7-%s.json.inprogress", tag);
  h_write(d1, leftover, "{\"id\":99}\n");
  h_write(d1, ".part-7-00000000.json.inprogress", "{\"id\":98}\n"); /* another query's */

  /* the same query, its delay now 0, a new file touching d3 only: d1 and d2
  ** are found waiting and committed with d3 */
  h_write(in, "2.json", "{\"id\":3,\"dt\":\"d3\"}\n");
  CHECK_EQ(run_in(dir, STREAM_SQL("0 s", "in"), &msg), DIPPER_OK);
  char want[2048];
  snprintf(want, sizeof want,
           "dt=d1/.part-7-00000000.json.inprogress dt=d1/_DONE dt=d1/part-0-%s.json dt=d2/_DONE "
           "dt=d2/part-0-%s.json dt=d3/_DONE dt=d3/part-1-%s.json",
           tag, tag, tag);
  CHECK_STR(tree(out), want);
  char name[64];
  snprintf(name, sizeof name, "dt=d3/part-1-%s.json", tag);
  check_file(out, name, "{\"id\":3}\n");
  h_rmdir(dir);
  free(dir);
}

static void refused(const char *opts, const char *words) {
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE dst (id INT, dt STRING) %s WITH ('connector' = 'filesystem', "
           "'path' = '/tmp/x', 'format' = 'json'%s);",
           strstr(opts, "NOPART") ? "" : "PARTITIONED BY (dt)", strstr(opts, "NOPART") ? opts + 6 : opts);
  dipper *db;
  dipper_open(&db, NULL);
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "t.sql", &prog);
  CHECK(rc != DIPPER_OK);
  const char *m = dipper_errmsg(db);
  if (!strstr(m, words)) fprintf(stderr, "message: %s\n(wanted: %s)\n", m, words);
  CHECK(strstr(m, words) != NULL);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(options_not_carried_out_are_refused) {
  refused(", 'sink.partition-commit.policy.kind' = 'metastore,success-file'",
          "commit policy 'metastore' is not carried out");
  refused(", 'sink.partition-commit.policy.kind' = 'custom'", "commit policy 'custom' is not carried out");
  refused(", 'sink.partition-commit.policy.kind' = 'success-file', 'sink.partition-commit.trigger' = "
          "'partition-time'",
          "'partition-time' is not carried out");
  refused(", 'partition.time-extractor.timestamp-pattern' = '$dt'", "the partition-time trigger");
  refused(", 'sink.partition-commit.policy.class' = 'a.B'", "custom commit policies");
  refused(", 'sink.partition-commit.delay' = '1 h'", "has no effect without a commit policy");
  refused(", 'sink.partition-commit.delay' = 'soon', 'sink.partition-commit.policy.kind' = 'success-file'",
          "is not a duration");
  refused(", 'partition.bogus' = 'x'", "partition.bogus");
  refused("NOPART, 'sink.partition-commit.policy.kind' = 'success-file'", "has no PARTITIONED BY");
}
int main(void) { return RUN_TESTS(); }
