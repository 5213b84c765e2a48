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
**  - refusals: no callback registered, a jar that is not there, a timeout
**    that is not a duration.
*/
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dipper.h"
#include "test.h"

static const char *server(void) {
  const char *r = getenv("DIPPER_SPARK_REMOTE");
  return r && r[0] ? r : "sc://127.0.0.1:15002";
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- what a callback got ---- */

#define MAXB 32
typedef struct got {
  int n;
  int64_t ids[MAXB];
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

static void print_diags(dipper *db) {
  for (int i = 0; i < dipper_diag_count(db); i++) {
    char *r = dipper_diag_render(db, i);
    fprintf(stderr, "  (diagnostic) %s", r ? r : "(no render)\n");
    dipper_free(r);
  }
}

/* Step every query until each got has at least want[i] batches (at most
** limit_ms); DIPPER_OK, or the first step's error. */
static int step_until(dipper_query **qs, int n, got **gs, const int *want, int64_t limit_ms) {
  int64_t end = now_ms() + limit_ms;
  for (;;) {
    bool all = true;
    for (int i = 0; i < n; i++)
      if (gs[i]->n < want[i]) all = false;
    if (all || now_ms() > end) return DIPPER_OK;
    for (int i = 0; i < n; i++) {
      int fin = 0;
      int rc = dipper_query_step(qs[i], &fin);
      if (rc != DIPPER_OK) return rc;
    }
  }
}

#define CKPT "SET 'execution.checkpointing.dir' = '%s';\n"
#define SOURCE                                                                              \
  "CREATE TABLE src (k STRING, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', " \
  "'format' = 'json', 'source.monitor-interval' = '1 s');\n"

TEST(append_rows_exact_per_batch_id) {
  env e;
  env_open(&e, "append");
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, server()), DIPPER_OK);
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
  if (rc) print_diags(db);
  got *gs[1] = {&g};
  if (rc == DIPPER_OK) {
    add_file(&e, "{\"k\":\"a\",\"v\":1}\n{\"k\":\"b\",\"v\":2}\n{\"k\":\"z\",\"v\":-1}\n");
    CHECK_EQ(step_until(qs, n, gs, (int[]){1}, 60000), DIPPER_OK);
    int64_t t0 = now_ms();
    add_file(&e, "{\"k\":\"c\",\"v\":3}\n");
    rc = step_until(qs, n, gs, (int[]){2}, 60000);
    fprintf(stderr, "  batch 1: in the callback %lld ms after its file landed\n",
            (long long)(now_ms() - t0));
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) print_diags(db);
    CHECK_EQ(g.n, 2);
    CHECK_EQ(g.ids[0], 0);
    CHECK_EQ(g.ids[1], 1);
    CHECK_STR(g.rows[0], "a|10\nb|20\n");
    CHECK_STR(g.rows[1], "c|30\n");
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
  CHECK_EQ(dipper_open(&db, server()), DIPPER_OK);
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
  if (rc) print_diags(db);
  dipper_query **qs = NULL;
  int n = 0;
  rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) print_diags(db);
  got *gs[2] = {&gu, &gc};
  if (rc == DIPPER_OK && n == 2) {
    add_file(&e, "{\"k\":\"a\",\"v\":1}\n{\"k\":\"b\",\"v\":2}\n{\"k\":\"a\",\"v\":3}\n");
    CHECK_EQ(step_until(qs, n, gs, (int[]){1, 1}, 60000), DIPPER_OK);
    add_file(&e, "{\"k\":\"a\",\"v\":5}\n");
    rc = step_until(qs, n, gs, (int[]){2, 2}, 60000);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) print_diags(db);
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
  if (rc) print_diags(db);
  return prog;
}

TEST(restart_from_the_checkpoint_continues_the_ids) {
  env e;
  env_open(&e, "restart");
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, server()), DIPPER_OK);
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
  CHECK_EQ(dipper_open(&db, server()), DIPPER_OK);
  CHECK_EQ(dipper_register_callback(db, "rows", on_batch, &g), DIPPER_OK);
  prog = restart_program(db, &e);
  rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  CHECK_EQ(rc, DIPPER_OK);
  if (rc == DIPPER_OK) {
    CHECK_EQ(step_until(qs, n, gs, (int[]){3}, 60000), DIPPER_OK);
    add_file(&e, "{\"k\":\"c\",\"v\":3}\n");
    rc = step_until(qs, n, gs, (int[]){4}, 60000);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) print_diags(db);
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
  CHECK_EQ(dipper_open(&db, server()), DIPPER_OK);
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
    int64_t t0 = now_ms();
    dipper_status st;
    int active = 1;
    while (active && now_ms() - t0 < 30000) {
      nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL);
      memset(&st, 0, sizeof st);
      st.size = sizeof st;
      CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
      active = st.active;
    }
    int64_t took = now_ms() - t0;
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
  CHECK_EQ(dipper_open(&db, server()), DIPPER_OK);
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
  CHECK_EQ(dipper_open(&db, server()), DIPPER_OK);
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
  CHECK_EQ(dipper_open(&db, server()), DIPPER_OK);
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

int main(void) { return RUN_TESTS(); }
