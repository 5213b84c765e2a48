/*
** state_ttl_restart_test.c — a GROUP BY with 'table.exec.state.ttl' stopped
** and restarted from its checkpoint gives, batch for batch, the rows of the
** run that was never stopped: the groups' last writes are checkpointed with
** the groups (a full state, then deltas), so a group written before the stop
** expires after it at the same processing time.  The clock is the test's
** (dipper_set_clock), so nothing depends on how fast the machine is.
** Also: the compile-time warning without a TTL, and its absence with one.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dipper.h"
#include "test.h"

static char dir[256];
static int64_t now_us;
static int64_t test_clock(void *user) {
  (void)user;
  return now_us;
}

/* (clock seconds, keys pushed) per micro-batch: key 2 idles across the stop
** and must expire after it; key 1 comes back after expiring */
typedef struct step {
  int64_t clock;
  const char *rows;
} step;
static const step steps[] = {
    {1000, "{\"k\":1}\n{\"k\":2}\n"}, {1004, "{\"k\":1}\n"}, {1008, "{\"k\":3}\n"},
    /* stop after here in the second run */
    {1013, "{\"k\":3}\n"},            /* 1 (1004) stays; 2 (1000) expires */
    {1014, "{\"k\":2}\n{\"k\":1}\n"}, /* 2 from nothing; 1 (1004) expired at 1014 */
    {1030, "{\"k\":3}\n"},
};
#define NSTEPS ((int)(sizeof steps / sizeof steps[0]))

#define SQL_FMT \
    "SET 'execution.checkpointing.dir' = '%s';\n" \
    "SET 'dipper.output-mode' = 'update';\n" \
    "SET 'table.exec.state.ttl' = '10 s';\n" \
    "CREATE TABLE src (k INT, p AS PROCTIME()) WITH ('connector' = 'memory');\n" \
    "CREATE TABLE out (k INT, c BIGINT) WITH ('connector' = 'memory');\n" \
    "%s\n"

static const char *group_by = "INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;";
/* the same over RocksDB (a time index by last write, agg_rocks.c), through
** its write-back cache and without it (every group in RocksDB each batch) */
static const char *group_by_rocks = "SET 'state.backend' = 'rocksdb';\n"
                                    "INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;";
static const char *group_by_rocks_nocache =
    "SET 'state.backend' = 'rocksdb';\nSET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n"
    "INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;";
/* the same steps through DISTINCT (a sighting renews a row) and a
** deduplication keeping the first row (a key is written once) */
static const char *distinct = "INSERT INTO out SELECT DISTINCT k, CAST(0 AS BIGINT) FROM src;";
static const char *dedup =
    "INSERT INTO out SELECT k, CAST(0 AS BIGINT) FROM (SELECT *, ROW_NUMBER() OVER "
    "(PARTITION BY k ORDER BY p) AS rn FROM src) WHERE rn = 1;";
/* a regular join of the stream with itself: each side's rows by insertion */
static const char *self_join =
    "INSERT INTO out SELECT a.k, CAST(0 AS BIGINT) FROM src AS a JOIN src AS b ON a.k = b.k;";
/* a Top-N without a window: the first two rows per key (ties keep their
** arrival order); a partition is written by each row that reaches it */
static const char *top2 =
    "INSERT INTO out SELECT k, CAST(0 AS BIGINT) FROM (SELECT k, ROW_NUMBER() OVER "
    "(PARTITION BY k ORDER BY k) AS rn FROM src) WHERE rn <= 2;";
/* the same Top-N over RocksDB (exec/topn_rocks.c: its partitions in a time
** index by last write), through its write-back cache and without it */
static const char *top2_rocks =
    "SET 'state.backend' = 'rocksdb';\n"
    "INSERT INTO out SELECT k, CAST(0 AS BIGINT) FROM (SELECT k, ROW_NUMBER() OVER "
    "(PARTITION BY k ORDER BY k) AS rn FROM src) WHERE rn <= 2;";
static const char *top2_rocks_nocache =
    "SET 'state.backend' = 'rocksdb';\nSET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n"
    "INSERT INTO out SELECT k, CAST(0 AS BIGINT) FROM (SELECT k, ROW_NUMBER() OVER "
    "(PARTITION BY k ORDER BY k) AS rn FROM src) WHERE rn <= 2;";
/* OVER on a stream, by processing time: a running count per key, which a
** partition idle for the TTL starts again */
static const char *over_count =
    "INSERT INTO out SELECT k, COUNT(*) OVER (PARTITION BY k ORDER BY p) FROM src;";

/* an aggregation over an updating one (exec/agg_retract.c): its groups
** expire with the inner ones, and a row that comes later starts its group
** with +I; its sink rows lead with the change kind */
static const char *retract_sum =
    "INSERT INTO out SELECT k, SUM(c) FROM (SELECT k, COUNT(*) AS c FROM src GROUP BY k) "
    "GROUP BY k;";
static int first_col; /* 1: the sink's rows lead with an `op` column */

/* The restarted run's clock is the test's plus this (a batch run again
** after a restart must not read it). */
static int64_t skew_us;

/* "k:c " for every row the sink holds, appended to buf. */
static void fetch_rows(dipper *db, char *buf, size_t cap) {
  struct ArrowSchema s;
  struct ArrowArray a;
  if (dipper_memory_fetch(db, "out", &s, &a) != DIPPER_OK) return;
  const struct ArrowArray *kc = a.children[first_col], *cc = a.children[first_col + 1];
  const int32_t *k = kc->buffers[1];
  const int64_t *c = cc->buffers[1];
  for (int64_t i = 0; i < a.length; i++) {
    size_t len = strlen(buf);
    if (first_col == 1) { /* "+I " */
      const struct ArrowArray *op = a.children[0];
      const int32_t *off = op->buffers[1];
      const char *data = op->buffers[2];
      int64_t r = i + op->offset;
      len += (size_t)snprintf(buf + len, cap - len, "%.*s", (int)(off[r + 1] - off[r]), data + off[r]);
    }
    snprintf(buf + len, cap - len, "%d:%lld ", (int)k[i + kc->offset], (long long)c[i + cc->offset]);
  }
  a.release(&a);
  s.release(&s);
}

/* Steps [from, to) run on a fresh handle over the checkpoint folder (the
** pushes before `from` are made again, as a memory table needs: they are
** the input a restart reads past). */
static int run(const char *insert, int from, int to, char *rows, size_t cap) {
  char sql[2048];
  snprintf(sql, sizeof sql, SQL_FMT, dir, insert);
  dipper *db = NULL;
  dipper_program *prog = NULL;
  dipper_query **qs = NULL;
  int nq = 0, finished = 0;
  int rc = dipper_open(&db, NULL);
  if (!rc) dipper_set_clock(db, test_clock, NULL);
  now_us = steps[from].clock * 1000000 + skew_us;
  if (!rc) rc = dipper_compile(db, sql, (size_t)-1, "ttl.sql", &prog);
  for (int i = 0; !rc && i < from; i++)
    rc = dipper_memory_push_json(db, "src", steps[i].rows, (size_t)-1);
  if (!rc) rc = dipper_query_start(prog, &qs, &nq);
  for (int i = from; !rc && i < to; i++) {
    now_us = steps[i].clock * 1000000 + (i == from ? skew_us : 0);
    rc = dipper_memory_push_json(db, "src", steps[i].rows, (size_t)-1);
    if (!rc) rc = dipper_query_step(qs[0], &finished);
  }
  if (rc) fprintf(stderr, "  run: %s\n", dipper_errmsg(db));
  else fetch_rows(db, rows, cap);
  dipper_query_free_all(qs, nq);
  dipper_program_free(prog);
  dipper_close(db);
  return rc;
}

static void clean(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
}

TEST(a_restart_expires_what_the_run_without_one_expires) {
  snprintf(dir, sizeof dir, "%s/dipper-ttl-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  /* worked out by hand: see `steps`.  DISTINCT: 1 renewed at 1004 expires
  ** at 1014, 2 at 1010, 3 (renewed at 1013) at 1023.  Keep first: 1 and 2
  ** (written at 1000) expire at 1010, 3 (1008) at 1018. */
  const char *queries[] = {group_by, distinct, dedup, self_join, top2, over_count,
                           group_by_rocks, group_by_rocks_nocache, top2_rocks, top2_rocks_nocache};
  /* the join: each side keeps its rows 10 s from insertion; b4 (1013)
  ** meets 3 (1008) only, b5 (1014) no row of 1 any more */
  const char *expected[] = {"1:1 2:1 1:2 3:1 3:2 2:1 1:1 3:1 ", "1:0 2:0 3:0 2:0 1:0 3:0 ",
                            "1:0 2:0 3:0 2:0 1:0 3:0 ",
                            "1:0 2:0 1:0 1:0 1:0 3:0 3:0 3:0 3:0 2:0 1:0 3:0 ",
                            /* b5: 1 (1004) and 2 (1000) gone, each starts a top
                            ** again; a batch's new rows leave in rank order */
                            "1:0 2:0 1:0 3:0 3:0 1:0 2:0 3:0 ",
                            /* b5: 1 (1004) and 2 (1000) count from nothing */
                            "1:1 2:1 1:2 3:1 3:2 2:1 1:1 3:1 ",
                            "1:1 2:1 1:2 3:1 3:2 2:1 1:1 3:1 ",
                            "1:1 2:1 1:2 3:1 3:2 2:1 1:1 3:1 ",
                            /* the Top-N over RocksDB: memory's rows */
                            "1:0 2:0 1:0 3:0 3:0 1:0 2:0 3:0 ", "1:0 2:0 1:0 3:0 3:0 1:0 2:0 3:0 "};
  for (int q = 0; q < 10; q++) {
    char whole[512] = "", split[512] = "";
    CHECK_EQ(run(queries[q], 0, NSTEPS, whole, sizeof whole), DIPPER_OK);
    CHECK_STR(whole, expected[q]);
    clean();
    CHECK_EQ(run(queries[q], 0, 3, split, sizeof split), DIPPER_OK);
    CHECK_EQ(run(queries[q], 3, NSTEPS, split, sizeof split), DIPPER_OK);
    CHECK_STR(split, whole);
    clean();
  }
}

/* The retracting aggregation across a restart between its expiries: group 2
** (last written at 1000) goes at 1013, 1 (1004) at 1014, and each comes
** back with +I, as in Flink (an expired group emits nothing). */
TEST(an_aggregation_over_an_updating_input_expires_across_a_restart) {
  snprintf(dir, sizeof dir, "%s/dipper-ttl-r-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  first_col = 1;
  const char *expected = "+I1:1 +I2:1 -U1:1 +U1:2 +I3:1 -U3:1 +U3:2 +I2:1 +I1:1 +I3:1 ";
  char whole[512] = "", split[512] = "";
  CHECK_EQ(run(retract_sum, 0, NSTEPS, whole, sizeof whole), DIPPER_OK);
  CHECK_STR(whole, expected);
  clean();
  CHECK_EQ(run(retract_sum, 0, 3, split, sizeof split), DIPPER_OK);
  CHECK_EQ(run(retract_sum, 3, NSTEPS, split, sizeof split), DIPPER_OK);
  CHECK_STR(split, whole);
  clean();
  first_col = 0;
}

/* A crash after batch 5's offsets record and sink, before its commit (the
** commit record removed, as a kill there leaves it): the restart runs batch
** 5 again from its record, at the processing time logged there, not at the
** restart's clock (here 4 s earlier, when 1 would not have expired yet). */
TEST(a_batch_run_again_expires_at_its_logged_time) {
  snprintf(dir, sizeof dir, "%s/dipper-ttl-rerun-%d",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  const char *queries[] = {group_by,       distinct,       self_join, top2, over_count,
                           group_by_rocks, top2_rocks};
  const char *tails[] = {"2:1 1:1 3:1 ", "2:0 1:0 3:0 ", "2:0 1:0 3:0 ", "1:0 2:0 3:0 ",
                         "2:1 1:1 3:1 ", "2:1 1:1 3:1 ", "1:0 2:0 3:0 "};
  for (int q = 0; q < 7; q++) {
    char first[512] = "", again[512] = "";
    CHECK_EQ(run(queries[q], 0, 5, first, sizeof first), DIPPER_OK);
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "n=$(ls -d '%s'/*/commits/* | wc -l) && test \"$n\" -ge 5 && "
             "rm \"$(ls -d '%s'/*/commits/* | sort -t/ -k1 -V | tail -1)\"",
             dir, dir);
    CHECK_EQ(system(cmd), 0);
    skew_us = -4 * 1000000;
    CHECK_EQ(run(queries[q], 4, NSTEPS, again, sizeof again), DIPPER_OK);
    skew_us = 0;
    CHECK_STR(again, tails[q]);
    clean();
  }
}

TEST(without_a_ttl_the_group_by_compiles_with_a_warning) {
  dipper *db = NULL;
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  const char *sql =
      "CREATE TABLE src (k INT) WITH ('connector' = 'memory');\n"
      "CREATE TABLE out (k INT, c BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;\n"
      "SET 'table.exec.state.ttl' = '1 d';\n"
      "INSERT INTO out SELECT k, COUNT(*) FROM src GROUP BY k;\n";
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "w.sql", &prog), DIPPER_OK);
  CHECK_EQ(dipper_diag_count(db), 0);
  CHECK_EQ(dipper_program_warning_count(prog), 1);
  const dipper_diag *w = dipper_program_warning(prog, 0);
  CHECK(w != NULL);
  if (w) {
    CHECK_EQ(w->code, DIPPER_STREAMING);
    CHECK_EQ(w->line, 3);
    CHECK(strstr(w->message, "aggregation") != NULL);
    CHECK(strstr(w->message, "table.exec.state.ttl") != NULL);
  }
  char *r = dipper_program_warning_render(prog, 0);
  CHECK(r && strncmp(r, "w.sql:3:", 8) == 0 && strstr(r, ": warning: ") != NULL);
  dipper_free(r);
  CHECK(dipper_program_warning(prog, 1) == NULL);
  dipper_program_free(prog);
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
