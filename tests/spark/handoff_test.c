/*
** handoff_test.c — foreachBatch from C on a real Spark (spark/handoff.h):
** streaming INSERTs into 'callback' tables, through the public API, on the
** server $DIPPER_SPARK_REMOTE (else 127.0.0.1:15002; ctest runs this file on
** Spark 4.1.1 and on 4.2.0).  dipper uploads its own Spark sink
** (build-dir/dipper-spark-handoff.jar) into the session: the local server
** has no dipper jar of its own.
**
**  - append: the rows of each micro-batch exact, under Spark's batch ids
**    0, 1 (a watched directory of JSON files, a file per batch);
**  - update and complete: one aggregation each, fed by the same files;
**  - a restart from the checkpoint: a callback that fails batch 1 stops the
**    query with batch 1 unacknowledged, so uncommitted; the restart hands
**    out batch 1 again, same id, same rows, then batch 2;
**  - a client that stops taking batches: the query fails within the sink's
**    timeout, with an error that names 'dipper.spark.handoff-timeout';
**  - a client process killed (SIGKILL) while its callback holds batch 1: a
**    second client, attached to the dead one's Spark Connect session
**    (sc://...;session_id=), sees the query fail within the timeout with
**    that error; the checkpoint has no commit of batch 1, and a restart from
**    it hands out batch 1 again, same id, same rows (this binary runs itself
**    as the child: handoff_test --child ...);
**  - refusals: no callback registered, a jar that is not there, a timeout
**    that is not a duration.
*/
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dipper.h"
#include "spark/client.h"
#include "spark/streaming.h"
#include "spark/uuid.h"
#include "spark/spark_env.h"
#include "test.h"



/* ---- what a callback got ---- */

#define MAXB 32
typedef struct got {
  int n;
  int64_t ids[MAXB];
  int64_t at[MAXB];     /* spark_now_ms() when the callback got it */
  char rows[MAXB][512]; /* the batch's rows as sorted "a|b\n" lines */
  int64_t fail_at;      /* return 1 for this batch id (-1: never) */
} got;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int on_batch(void *user, int64_t id, struct ArrowSchema *schema, struct ArrowArray *array) {
  got *g = user;
  char **cells = NULL;
  int rc = dipper_format_values(schema, array, 0, &cells);
  int64_t nrows = array->length, ncols = array->n_children;
  char *lines[64];
  char text[512] = "";
  int nl = 0;
  for (int64_t r = 0; rc == DIPPER_OK && r < nrows && nl < 64; r++) {
    char line[128] = "";
    size_t at = 0;
    for (int64_t c = 0; c < ncols; c++)
      at += (size_t)snprintf(line + at, sizeof line - at, "%s%s", cells[r * ncols + c],
                             c + 1 == ncols ? "\n" : "|");
    lines[nl++] = strdup(line);
  }
  qsort(lines, (size_t)nl, sizeof *lines, cmp_str);
  size_t at = 0;
  for (int i = 0; i < nl; i++) {
    at += (size_t)snprintf(text + at, sizeof text - at, "%s", lines[i]);
    free(lines[i]);
  }
  dipper_free(cells);
  array->release(array);
  schema->release(schema);
  if (g->n < MAXB) {
    g->at[g->n] = spark_now_ms();
    g->ids[g->n] = id;
    snprintf(g->rows[g->n], sizeof g->rows[g->n], "%s", text);
    g->n++;
  }
  return id == g->fail_at ? 1 : 0;
}

/* ---- the input: a watched directory of JSON files ---- */

typedef struct env {
  char dir[64];   /* the test's folder */
  char in[96];    /* the source's directory */
  char ckpt[96];  /* the checkpoints */
  int files;
} env;

static void env_open(env *e, const char *name) {
  snprintf(e->dir, sizeof e->dir, "/tmp/dipper-handoff-%s-XXXXXX", name);
  CHECK(mkdtemp(e->dir) != NULL);
  snprintf(e->in, sizeof e->in, "%s/in", e->dir);
  snprintf(e->ckpt, sizeof e->ckpt, "%s/ckpt", e->dir);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s'", e->in, e->ckpt);
  CHECK_EQ(system(cmd), 0);
  e->files = 0;
}

static void env_close(env *e) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", e->dir);
  CHECK_EQ(system(cmd), 0);
}

/* One new file of JSON lines, written beside the directory and moved in whole. */
static void add_file(env *e, const char *lines) {
  char tmp[160], dst[160];
  snprintf(tmp, sizeof tmp, "%s/f%d.tmp", e->dir, e->files);
  snprintf(dst, sizeof dst, "%s/f%d.json", e->in, e->files);
  e->files++;
  FILE *f = fopen(tmp, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(lines, f);
  fclose(f);
  CHECK_EQ(rename(tmp, dst), 0);
}


/* Step every query until each got has at least want[i] batches (at most
** limit_ms); DIPPER_OK, or the first step's error. */
static int step_until(dipper_query **qs, int n, got **gs, const int *want, int64_t limit_ms) {
  int64_t end = spark_now_ms() + limit_ms;
  for (;;) {
    bool all = true;
    for (int i = 0; i < n; i++)
      if (gs[i]->n < want[i]) all = false;
    if (all || spark_now_ms() > end) return DIPPER_OK;
    for (int i = 0; i < n; i++) {
      int fin = 0;
      int rc = dipper_query_step(qs[i], &fin);
      if (rc != DIPPER_OK) return rc;
    }
  }
}

#define LAT_N 7

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

#define CKPT "SET 'execution.checkpointing.dir' = '%s';\n"
#define SOURCE                                                                              \
  "CREATE TABLE src (k STRING, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', " \
  "'format' = 'json', 'source.monitor-interval' = '1 s');\n"

TEST(append_rows_exact_per_batch_id) {
  env e;
  env_open(&e, "append");
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  got g = {.fail_at = -1};
  CHECK_EQ(dipper_register_callback(db, "rows", on_batch, &g), DIPPER_OK);
  char sql[2048];
  int at = snprintf(sql, sizeof sql, CKPT SOURCE, e.ckpt, e.in);
  snprintf(sql + at, sizeof sql - (size_t)at,
           "CREATE TABLE out (k STRING, v10 BIGINT) WITH ('connector' = 'callback', "
           "'name' = 'rows');\n"
           "INSERT INTO out SELECT k, v * 10 FROM src WHERE v > 0;\n");
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "append.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  int rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) spark_print_diags(db);
  got *gs[1] = {&g};
  if (rc == DIPPER_OK) {
    add_file(&e, "{\"k\":\"a\",\"v\":1}\n{\"k\":\"b\",\"v\":2}\n{\"k\":\"z\",\"v\":-1}\n");
    CHECK_EQ(step_until(qs, n, gs, (int[]){1}, 60000), DIPPER_OK);
    int64_t t0 = spark_now_ms();
    add_file(&e, "{\"k\":\"c\",\"v\":3}\n");
    rc = step_until(qs, n, gs, (int[]){2}, 60000);
    fprintf(stderr, "  batch 1: in the callback %lld ms after its file landed\n",
            (long long)(g.n >= 2 ? g.at[1] - t0 : -1));
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) spark_print_diags(db);
    CHECK_EQ(g.n, 2);
    CHECK_EQ(g.ids[0], 0);
    CHECK_EQ(g.ids[1], 1);
    CHECK_STR(g.rows[0], "a|10\nb|20\n");
    CHECK_STR(g.rows[1], "c|30\n");
    /* the latency from a file to the callback, over LAT_N more batches (printed,
       not asserted: docs/spark.md quotes it) */
    int64_t lat[LAT_N];
    for (int i = 0; i < LAT_N && rc == DIPPER_OK; i++) {
      char line[64], want[64];
      snprintf(line, sizeof line, "{\"k\":\"l%d\",\"v\":%d}\n", i, i + 1);
      snprintf(want, sizeof want, "l%d|%d\n", i, (i + 1) * 10);
      int64_t t = spark_now_ms();
      add_file(&e, line);
      rc = step_until(qs, n, gs, (int[]){3 + i}, 60000);
      lat[i] = g.n >= 3 + i ? g.at[2 + i] - t : -1;
      CHECK_EQ(rc, DIPPER_OK);
      CHECK_EQ(g.n, 3 + i);
      CHECK_EQ(g.ids[2 + i], 2 + i);
      CHECK_STR(g.rows[2 + i], want);
    }
    qsort(lat, LAT_N, sizeof lat[0], cmp_i64);
    fprintf(stderr, "  file -> callback over %d batches: median %lld ms, min %lld, max %lld\n", LAT_N,
            (long long)lat[LAT_N / 2], (long long)lat[0], (long long)lat[LAT_N - 1]);
    dipper_progress p;
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  env_close(&e);
}

TEST(update_and_complete_modes) {
  env e;
  env_open(&e, "modes");
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  got gu = {.fail_at = -1}, gc = {.fail_at = -1};
  CHECK_EQ(dipper_register_callback(db, "upd", on_batch, &gu), DIPPER_OK);
  CHECK_EQ(dipper_register_callback(db, "all", on_batch, &gc), DIPPER_OK);
  char sql[2048];
  int at = snprintf(sql, sizeof sql, CKPT SOURCE, e.ckpt, e.in);
  snprintf(sql + at, sizeof sql - (size_t)at,
           "CREATE TABLE upd (k STRING, total BIGINT) WITH ('connector' = 'callback', "
           "'name' = 'upd');\n"
           "CREATE TABLE all_rows (k STRING, total BIGINT) WITH ('connector' = 'callback', "
           "'name' = 'all');\n"
           "SET 'dipper.output-mode' = 'update';\n"
           "INSERT INTO upd SELECT k, SUM(v) FROM src GROUP BY k;\n"
           "SET 'dipper.output-mode' = 'complete';\n"
           "INSERT INTO all_rows SELECT k, SUM(v) FROM src GROUP BY k;\n");
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "modes.sql", &prog);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) spark_print_diags(db);
  dipper_query **qs = NULL;
  int n = 0;
  rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) spark_print_diags(db);
  got *gs[2] = {&gu, &gc};
  if (rc == DIPPER_OK && n == 2) {
    add_file(&e, "{\"k\":\"a\",\"v\":1}\n{\"k\":\"b\",\"v\":2}\n{\"k\":\"a\",\"v\":3}\n");
    CHECK_EQ(step_until(qs, n, gs, (int[]){1, 1}, 60000), DIPPER_OK);
    add_file(&e, "{\"k\":\"a\",\"v\":5}\n");
    rc = step_until(qs, n, gs, (int[]){2, 2}, 60000);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) spark_print_diags(db);
    CHECK_EQ(gu.n, 2);
    CHECK_EQ(gc.n, 2);
    CHECK_STR(gu.rows[0], "a|4\nb|2\n");
    CHECK_STR(gu.rows[1], "a|9\n"); /* update: only the changed group */
    CHECK_STR(gc.rows[0], "a|4\nb|2\n");
    CHECK_STR(gc.rows[1], "a|9\nb|2\n"); /* complete: the whole result */
    CHECK_EQ(gu.ids[1], 1);
    CHECK_EQ(gc.ids[1], 1);
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  env_close(&e);
}

/* The append query of the restart test, on checkpoint folder e->ckpt. */
static dipper_program *restart_program(dipper *db, env *e) {
  char sql[2048];
  int at = snprintf(sql, sizeof sql, "SET 'execution.checkpointing.dir' = '%s';\n", e->ckpt);
  at += snprintf(sql + at, sizeof sql - (size_t)at, SOURCE, e->in);
  snprintf(sql + at, sizeof sql - (size_t)at,
           "CREATE TABLE out (k STRING, v BIGINT) WITH ('connector' = 'callback', "
           "'name' = 'rows');\n"
           "INSERT INTO out SELECT k, v FROM src;\n");
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "restart.sql", &prog);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) spark_print_diags(db);
  return prog;
}

TEST(restart_from_the_checkpoint_continues_the_ids) {
  env e;
  env_open(&e, "restart");
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  got g = {.fail_at = 1};
  CHECK_EQ(dipper_register_callback(db, "rows", on_batch, &g), DIPPER_OK);
  dipper_program *prog = restart_program(db, &e);
  dipper_query **qs = NULL;
  int n = 0;
  int rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  got *gs[1] = {&g};
  if (rc == DIPPER_OK) {
    add_file(&e, "{\"k\":\"a\",\"v\":1}\n");
    CHECK_EQ(step_until(qs, n, gs, (int[]){1}, 60000), DIPPER_OK);
    add_file(&e, "{\"k\":\"b\",\"v\":2}\n");
    /* the callback fails batch 1: the query stops with it unacknowledged */
    rc = step_until(qs, n, gs, (int[]){3}, 60000);
    CHECK_EQ(rc, DIPPER_DATA);
    CHECK_CONTAINS(dipper_errmsg(db), "callback 'rows' returned 1 for micro-batch 1");
    CHECK_EQ(g.n, 2);
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  qs = NULL;
  n = 0;
  /* the restart, from another session (a new handle: the jar uploaded
     again): batch 1 again (same id, same rows), then a new batch 2 */
  g.fail_at = -1;
  db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  CHECK_EQ(dipper_register_callback(db, "rows", on_batch, &g), DIPPER_OK);
  prog = restart_program(db, &e);
  rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  if (rc == DIPPER_OK) {
    CHECK_EQ(step_until(qs, n, gs, (int[]){3}, 60000), DIPPER_OK);
    add_file(&e, "{\"k\":\"c\",\"v\":3}\n");
    rc = step_until(qs, n, gs, (int[]){4}, 60000);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) spark_print_diags(db);
    CHECK_EQ(g.n, 4);
    CHECK_EQ(g.ids[0], 0);
    CHECK_EQ(g.ids[1], 1);
    CHECK_EQ(g.ids[2], 1);
    CHECK_EQ(g.ids[3], 2);
    CHECK_STR(g.rows[0], "a|1\n");
    CHECK_STR(g.rows[1], "b|2\n");
    CHECK_STR(g.rows[2], "b|2\n");
    CHECK_STR(g.rows[3], "c|3\n");
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  env_close(&e);
}

TEST(a_client_that_stops_taking_batches_fails_the_query_within_the_timeout) {
  env e;
  env_open(&e, "timeout");
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  got g = {.fail_at = -1};
  CHECK_EQ(dipper_register_callback(db, "rows", on_batch, &g), DIPPER_OK);
  char sql[2048];
  int at = snprintf(sql, sizeof sql, CKPT SOURCE, e.ckpt, e.in);
  snprintf(sql + at, sizeof sql - (size_t)at,
           "CREATE TABLE out (k STRING, v BIGINT) WITH ('connector' = 'callback', "
           "'name' = 'rows', 'dipper.spark.handoff-timeout' = '3 s');\n"
           "INSERT INTO out SELECT k, v FROM src;\n");
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "timeout.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  int rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  if (rc == DIPPER_OK) {
    add_file(&e, "{\"k\":\"a\",\"v\":1}\n");
    /* nobody takes the batch: the query must end, failed, soon after the
       3 s timeout (Spark's file listing and the batch take a few seconds) */
    int64_t t0 = spark_now_ms();
    dipper_status st;
    int active = 1;
    while (active && spark_now_ms() - t0 < 30000) {
      nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL);
      memset(&st, 0, sizeof st);
      st.size = sizeof st;
      CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
      active = st.active;
    }
    int64_t took = spark_now_ms() - t0;
    CHECK_EQ(active, 0);
    CHECK(took >= 3000);
    CHECK(took < 20000);
    fprintf(stderr, "  the query ended %lld ms after its input came\n", (long long)took);
    int fin = 0;
    rc = dipper_query_step(qs[0], &fin);
    CHECK_EQ(rc, DIPPER_REMOTE);
    CHECK_CONTAINS(dipper_errmsg(db), "did not take and acknowledge micro-batch 0");
    CHECK_CONTAINS(dipper_errmsg(db), "'dipper.spark.handoff-timeout'");
    CHECK_EQ(g.n, 0);
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  env_close(&e);
}

TEST(refusals) {
  env e;
  env_open(&e, "refusals");
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  char sql[2048];
  int at = snprintf(sql, sizeof sql, CKPT SOURCE, e.ckpt, e.in);
  snprintf(sql + at, sizeof sql - (size_t)at,
           "CREATE TABLE out (k STRING, v BIGINT) WITH ('connector' = 'callback', "
           "'name' = 'nobody');\n"
           "INSERT INTO out SELECT k, v FROM src;\n");
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "refuse.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  /* no callback under that name: the start fails before Spark runs anything */
  CHECK_EQ(prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE, DIPPER_NAME);
  CHECK_CONTAINS(dipper_errmsg(db), "no callback is registered under 'nobody'");
  dipper_query_free_all(qs, n);
  qs = NULL;
  n = 0;
  /* a jar that is not there */
  got g = {.fail_at = -1};
  CHECK_EQ(dipper_register_callback(db, "nobody", on_batch, &g), DIPPER_OK);
  setenv("DIPPER_SPARK_HANDOFF_JAR", "/nonexistent/dipper-spark-handoff.jar", 1);
  CHECK_EQ(prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE, DIPPER_IO);
  CHECK_CONTAINS(dipper_errmsg(db), "DIPPER_SPARK_HANDOFF_JAR names '/nonexistent/");
  unsetenv("DIPPER_SPARK_HANDOFF_JAR");
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  /* no checkpoint folder: Spark would refuse to start dipper's sink */
  db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  CHECK_EQ(dipper_register_callback(db, "nobody", on_batch, &g), DIPPER_OK);
  at = snprintf(sql, sizeof sql, SOURCE, e.in);
  snprintf(sql + at, sizeof sql - (size_t)at,
           "CREATE TABLE out (k STRING, v BIGINT) WITH ('connector' = 'callback', "
           "'name' = 'nobody');\n"
           "INSERT INTO out SELECT k, v FROM src;\n");
  prog = NULL;
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "refuse2.sql", &prog), DIPPER_OK);
  qs = NULL;
  n = 0;
  CHECK(prog && dipper_query_start(prog, &qs, &n) != DIPPER_OK);
  CHECK_CONTAINS(dipper_errmsg(db), "which Spark starts only with a checkpoint");
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  /* a timeout that is not a duration: refused at compile time */
  db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  at = snprintf(sql, sizeof sql, SOURCE, e.in);
  snprintf(sql + at, sizeof sql - (size_t)at,
           "CREATE TABLE out (k STRING, v BIGINT) WITH ('connector' = 'callback', "
           "'name' = 'nobody', 'dipper.spark.handoff-timeout' = 'soon');\n");
  prog = NULL;
  CHECK(dipper_compile(db, sql, (size_t)-1, "refuse3.sql", &prog) != DIPPER_OK);
  CHECK_CONTAINS(dipper_errmsg(db), "dipper.spark.handoff-timeout");
  dipper_program_free(prog);
  dipper_close(db);
  env_close(&e);
}

/* ---- a client process that dies ---- */

#define KILL_TIMEOUT_S 5

/* The kill test's program: the append query with a short timeout. */
static const char *kill_sql(char *sql, size_t cap, const char *in, const char *ckpt) {
  int at = snprintf(sql, cap, CKPT SOURCE, ckpt, in);
  snprintf(sql + at, cap - (size_t)at,
           "CREATE TABLE out (k STRING, v BIGINT) WITH ('connector' = 'callback', "
           "'name' = 'rows', 'dipper.spark.handoff-timeout' = '%d s');\n"
           "INSERT INTO out SELECT k, v FROM src;\n",
           KILL_TIMEOUT_S);
  return sql;
}

/* The child's callback: says which batch it got; batch 1 it holds forever
** (the parent kills the process meanwhile), so batch 1 is never acknowledged. */
static int child_batch(void *user, int64_t id, struct ArrowSchema *schema, struct ArrowArray *array) {
  (void)user;
  printf("batch %lld %lld\n", (long long)id, (long long)array->length);
  fflush(stdout);
  array->release(array);
  schema->release(schema);
  if (id == 1) {
    printf("holding 1\n");
    fflush(stdout);
    for (;;) pause();
  }
  return 0;
}

/* handoff_test --child REMOTE IN CKPT: start the query, print its ids, step. */
static int child_main(const char *remote, const char *in, const char *ckpt) {
  dipper *db = NULL;
  if (dipper_open(&db, remote) != DIPPER_OK) return 2;
  if (dipper_register_callback(db, "rows", child_batch, NULL) != DIPPER_OK) return 2;
  char sql[2048];
  dipper_program *prog = NULL;
  if (dipper_compile(db, kill_sql(sql, sizeof sql, in, ckpt), (size_t)-1, "kill.sql", &prog))
    return 3;
  dipper_query **qs = NULL;
  int n = 0;
  if (dipper_query_start(prog, &qs, &n) != DIPPER_OK || n != 1) {
    fprintf(stderr, "child: %s\n", dipper_errmsg(db));
    return 4;
  }
  printf("query %s %s\n", dipper_query_id(qs[0]), dipper_query_run_id(qs[0]));
  fflush(stdout);
  for (;;) {
    int fin = 0;
    if (dipper_query_step(qs[0], &fin) != DIPPER_OK) {
      fprintf(stderr, "child: %s\n", dipper_errmsg(db));
      return 5;
    }
  }
}

static char self_path[1024];

/* The next line from the child that starts with `want` (into line); false at
** its end (the child died: its stderr says why). */
static bool read_line(FILE *f, const char *want, char *line, size_t cap) {
  while (fgets(line, (int)cap, f))
    if (strncmp(line, want, strlen(want)) == 0) return true;
  return false;
}

static bool exists(const char *dir, const char *name) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  struct stat st;
  return stat(p, &st) == 0;
}

TEST(a_client_process_killed_fails_the_query_within_the_timeout) {
  env e;
  env_open(&e, "kill");
  char sid[DP_UUID_LEN + 1];
  CHECK_EQ(dp_uuid_v4(sid), DIPPER_OK);
  char remote[256];
  snprintf(remote, sizeof remote, "%s/;session_id=%s", spark_remote(), sid);
  int out[2];
  CHECK_EQ(pipe(out), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    execl(self_path, self_path, "--child", remote, e.in, e.ckpt, (char *)NULL);
    _exit(127);
  }
  close(out[1]);
  FILE *f = fdopen(out[0], "r");
  char line[256], qid[40] = "", run[40] = "";
  CHECK(read_line(f, "query ", line, sizeof line));
  CHECK_EQ(sscanf(line, "query %39s %39s", qid, run), 2);
  add_file(&e, "{\"k\":\"a\",\"v\":1}\n");
  CHECK(read_line(f, "batch 0 1", line, sizeof line));
  add_file(&e, "{\"k\":\"b\",\"v\":2}\n{\"k\":\"c\",\"v\":3}\n");
  CHECK(read_line(f, "holding 1", line, sizeof line));
  CHECK_EQ(kill(pid, SIGKILL), 0);
  int64_t t0 = spark_now_ms();
  int status = 0;
  CHECK_EQ(waitpid(pid, &status, 0), pid);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  fclose(f);
  /* a second client, in the dead one's session, watches the query end */
  dp_sc *sc = NULL;
  dp_sc_error err;
  dp_sc_error_init(&err);
  CHECK_EQ(dp_sc_open(&sc, remote, &err), DIPPER_OK);
  CHECK_STR(sc ? dp_sc_session_id(sc) : "", sid);
  dp_sq q;
  memset(&q, 0, sizeof q);
  snprintf(q.id, sizeof q.id, "%s", qid);
  snprintf(q.run_id, sizeof q.run_id, "%s", run);
  bool active = true;
  int rc = DIPPER_OK;
  while (sc && active && rc == DIPPER_OK && spark_now_ms() - t0 < 60000) {
    dp_sq_status st;
    rc = dp_sq_get_status(sc, &q, &st, &err);
    active = st.active;
    if (active) nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
  }
  int64_t took = spark_now_ms() - t0;
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) fprintf(stderr, "  status: %s\n", dp_buf_cstr(&err.message));
  CHECK(!active);
  CHECK(took <= (KILL_TIMEOUT_S + 5) * 1000);
  fprintf(stderr, "  the query failed %lld ms after its client was killed (timeout %d s)\n",
          (long long)took, KILL_TIMEOUT_S);
  char *ex = NULL;
  CHECK_EQ(sc ? dp_sq_exception(sc, &q, &ex, &err) : DIPPER_MISUSE, DIPPER_OK);
  CHECK_CONTAINS(ex ? ex : "", "did not take and acknowledge micro-batch 1");
  CHECK_CONTAINS(ex ? ex : "", "'dipper.spark.handoff-timeout'");
  free(ex);
  dp_sc_error_free(&err);
  dp_sc_close(sc);
  /* the checkpoint: batch 1 planned (offsets/1), not committed (no commits/1) */
  char q_ckpt[160];
  snprintf(q_ckpt, sizeof q_ckpt, "%s/out", e.ckpt);
  CHECK(exists(q_ckpt, "offsets/1"));
  CHECK(exists(q_ckpt, "commits/0"));
  CHECK(!exists(q_ckpt, "commits/1"));
  /* a restart from it (this process, a new session): batch 1 again, same rows */
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, spark_remote()), DIPPER_OK);
  got g = {.fail_at = -1};
  CHECK_EQ(dipper_register_callback(db, "rows", on_batch, &g), DIPPER_OK);
  char sql[2048];
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, kill_sql(sql, sizeof sql, e.in, e.ckpt), (size_t)-1, "kill.sql", &prog),
           DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  got *gs[1] = {&g};
  if (rc == DIPPER_OK) {
    CHECK_STR(dipper_query_id(qs[0]), qid); /* the same query, from its checkpoint */
    rc = step_until(qs, n, gs, (int[]){1}, 60000);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) spark_print_diags(db);
    CHECK_EQ(g.n, 1);
    CHECK_EQ(g.ids[0], 1);
    CHECK_STR(g.rows[0], "b|2\nc|3\n");
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
  env_close(&e);
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "--child") == 0) return child_main(argv[2], argv[3], argv[4]);
  ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
  if (n <= 0) return 1;
  self_path[n] = '\0';
  return RUN_TESTS();
}
