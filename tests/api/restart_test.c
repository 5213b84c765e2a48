/*
** restart_test.c — a query restarted, twice, on the checkpoint folder of a
** run that finished: the state each run left (windows all closed and
** evicted: no group, whether or not the aggregates' arrays were ever
** allocated) reads back, and nothing is read or written again.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dipper.h"
#include "test.h"

static char dir[256];

typedef struct totals {
  int64_t in, out;
  int finished;
} totals;

static void on_progress(void *user, const dipper_progress *p) {
  totals *t = user;
  t->in = p->total_input_rows;
  t->out = p->total_output_rows;
  t->finished = p->finished;
}

static int run(totals *t) {
  char sql[2048];
  snprintf(sql, sizeof sql,
           "SET 'execution.checkpointing.dir' = '%s';\n"
           "SET 'dipper.max-batch-rows' = '500';\n"
           "CREATE TABLE ev (k INT, v BIGINT, ts TIMESTAMP(3),\n"
           "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen',\n"
           "  'number-of-rows' = '2000', 'fields.k.min' = '1', 'fields.k.max' = '20',\n"
           "  'seed' = '7');\n"
           "CREATE TABLE agg (k INT, ws TIMESTAMP(3), s BIGINT) WITH ('connector' = 'blackhole');\n"
           "INSERT INTO agg SELECT k, window_start, SUM(v)\n"
           "  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND))\n"
           "  GROUP BY k, window_start, window_end;\n",
           dir);
  dipper *db = NULL;
  dipper_program *prog = NULL;
  int rc = dipper_open(&db, NULL);
  if (!rc) rc = dipper_compile(db, sql, (size_t)-1, "restart.sql", &prog);
  if (!rc) rc = dipper_run(prog, on_progress, t);
  if (rc) fprintf(stderr, "  run: %s\n", dipper_errmsg(db));
  dipper_program_free(prog);
  dipper_close(db);
  return rc;
}

TEST(a_finished_windowed_aggregation_restarts) {
  snprintf(dir, sizeof dir, "%s/dipper-restart-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  totals first = {0}, again = {0}, third = {0};
  CHECK_EQ(run(&first), DIPPER_OK);
  CHECK_EQ(first.in, 2000);
  CHECK(first.out > 0);
  CHECK(first.finished);
  CHECK_EQ(run(&again), DIPPER_OK);
  CHECK_EQ(again.in, 0);
  CHECK_EQ(again.out, 0);
  CHECK(again.finished);
  /* the state the first restart wrote had never held a group in this
  ** process (no arrays allocated): it failed to read back ("its end") */
  CHECK_EQ(run(&third), DIPPER_OK);
  CHECK_EQ(third.in, 0);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
}

int main(void) { return RUN_TESTS(); }
