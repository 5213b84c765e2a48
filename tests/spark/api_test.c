/*
** api_test.c — the public API on a handle opened on Spark Connect (needs the
** spark_server fixture): dipper_execute's rows, INSERTs into dipper's own
** memory sink through dipper_query_start/step, compile-time refusals with
** their place, a lazy connection (errors at the first run, naming the
** address), Spark's errors with their class; streaming on Spark: a
** statement set started as one Spark query per INSERT, watched and managed
** through the public calls (ids, status, progress, recent progress, await,
** stop, the active list as the server says), a query that fails on Spark
** with its exception as the error, dipper_run interrupted (queries stopped
** on the server), a streaming SELECT over an endless input refused at compile.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "dipper.h"
#include "test.h"

#define SPARK "sc://127.0.0.1:15002"

static const char *const sales =
    "SET 'execution.runtime-mode' = 'batch';\n"
    "CREATE TABLE sales (r STRING, q INT) WITH ('connector' = 'memory');\n"
    "CREATE TABLE out (r STRING, total BIGINT) WITH ('connector' = 'memory');\n"
    "SELECT r, SUM(q) AS total, COUNT(*) AS n FROM sales GROUP BY r ORDER BY r;\n"
    "INSERT INTO out SELECT r, SUM(q) FROM sales WHERE q IS NOT NULL GROUP BY r;\n";

static void push_sales(dipper *db) {
  CHECK_EQ(dipper_memory_push_json(db, "sales",
                                   "{\"r\":\"n\",\"q\":2}\n{\"r\":\"s\",\"q\":5}\n"
                                   "{\"r\":\"n\",\"q\":null}\n{\"r\":\"n\",\"q\":4}\n",
                                   (size_t)-1),
           DIPPER_OK);
}

static int compile(dipper *db, const char *sql, dipper_program **prog) {
  int rc = dipper_compile(db, sql, (size_t)-1, "t.sql", prog);
  if (rc != DIPPER_OK) fprintf(stderr, "  (compile) %s\n", dipper_errmsg(db));
  return rc;
}

TEST(execute_select_on_spark) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, sales, &prog), DIPPER_OK);
  push_sales(db);
  struct ArrowArrayStream st;
  int rc = dipper_execute(prog, 3, &st);
  if (rc) fprintf(stderr, "  %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  if (rc == DIPPER_OK) {
    struct ArrowSchema schema;
    CHECK_EQ(st.get_schema(&st, &schema), 0);
    CHECK_EQ(schema.n_children, 3);
    CHECK_STR(schema.children[0]->name, "r");
    CHECK_STR(schema.children[1]->name, "total");
    CHECK_STR(schema.children[2]->format, "l");
    int64_t rows = 0, n_of_n = -1, total_of_s = -1;
    for (;;) {
      struct ArrowArray a;
      CHECK_EQ(st.get_next(&st, &a), 0);
      if (!a.release) break;
      const int32_t *off = a.children[0]->buffers[1];
      const char *bytes = a.children[0]->buffers[2];
      for (int64_t i = 0; i < a.length; i++) {
        int64_t j = a.children[0]->offset + i;
        int64_t total = ((const int64_t *)a.children[1]->buffers[1])[a.children[1]->offset + i];
        int64_t n = ((const int64_t *)a.children[2]->buffers[1])[a.children[2]->offset + i];
        if (off[j + 1] - off[j] == 1 && bytes[off[j]] == 'n') n_of_n = n;
        if (off[j + 1] - off[j] == 1 && bytes[off[j]] == 's') total_of_s = total;
      }
      rows += a.length;
      a.release(&a);
    }
    CHECK_EQ(rows, 2);
    CHECK_EQ(n_of_n, 3);
    CHECK_EQ(total_of_s, 5);
    schema.release(&schema);
    st.release(&st);
  }
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(insert_into_memory_through_query_handles) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, sales, &prog), DIPPER_OK);
  push_sales(db);
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 2); /* the SELECT and the INSERT */
  int finished = 0;
  int rc = n == 2 ? dipper_query_step(qs[1], &finished) : -1;
  if (rc) fprintf(stderr, "  %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(finished, 1);
  dipper_progress p = {sizeof p};
  if (n == 2) {
    CHECK_EQ(dipper_query_progress(qs[1], &p), DIPPER_OK);
    CHECK_STR(p.name, "out");
    CHECK_EQ(p.batch_id, 0);
    CHECK_EQ(p.output_rows, 2);
    CHECK_EQ(p.finished, 1);
  }
  struct ArrowSchema schema;
  struct ArrowArray array;
  CHECK_EQ(dipper_memory_fetch(db, "out", &schema, &array), DIPPER_OK);
  CHECK_EQ(array.length, 2);
  if (array.release) array.release(&array);
  if (schema.release) schema.release(&schema);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(refused_at_compile_with_place) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, "sc://127.0.0.1:1"), DIPPER_OK); /* no server needed */
  dipper_program *prog = NULL;
  int rc = dipper_compile(db,
                          "SET 'execution.runtime-mode' = 'batch';\n"
                          "CREATE TABLE t (k INT, ts TIMESTAMP(3)) WITH ('connector' = 'memory');\n"
                          "CREATE TABLE r (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts,\n"
                          "  PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'memory');\n"
                          "SELECT t.k, v FROM t JOIN r FOR SYSTEM_TIME AS OF t.ts ON t.k = r.k;\n",
                          (size_t)-1, "c.sql", &prog);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK(prog == NULL);
  const dipper_diag *g = dipper_diag_get(db, 0);
  CHECK(g != NULL && g->line >= 3);
  CHECK_CONTAINS(dipper_errmsg(db), "temporal join");
  dipper_close(db);
}

TEST(errors_reach_errmsg) {
  /* connection: lazily, at the first run, naming the address */
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, "sc://127.0.0.1:1"), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, sales, &prog), DIPPER_OK);
  struct ArrowArrayStream st;
  CHECK_EQ(dipper_execute(prog, 3, &st), DIPPER_CONNECT);
  CHECK(st.release == NULL);
  CHECK_CONTAINS(dipper_errmsg(db), "cannot reach Spark Connect at 127.0.0.1:1");
  dipper_program_free(prog);
  dipper_close(db);

  /* Spark's own error, with its class */
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  CHECK_EQ(compile(db,
                   "SET 'execution.runtime-mode' = 'batch';\n"
                   "CREATE TABLE f (id BIGINT) WITH ('connector' = 'filesystem',\n"
                   "  'path' = '/nonexistent/dipper-api-test', 'format' = 'json');\n"
                   "SELECT id FROM f;\n",
                   &prog),
           DIPPER_OK);
  CHECK_EQ(dipper_execute(prog, 2, &st), DIPPER_REMOTE);
  CHECK_CONTAINS(dipper_errmsg(db), "Spark: [PATH_NOT_FOUND]");
  dipper_program_free(prog);

  dipper_close(db);

  /* streaming on Spark (a fresh handle: SET outlives a program): a SELECT
  ** over an endless input has nowhere to show its rows: refused at compile
  ** with its place; an INSERT runs by its trigger, not to an end: refused by
  ** dipper_execute, saying where it goes */
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  int rc = dipper_compile(db,
                          "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen');\n"
                          "SELECT id FROM g;\n",
                          (size_t)-1, "s.sql", &prog);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK_CONTAINS(dipper_errmsg(db), "a streaming SELECT over an unbounded input");
  const dipper_diag *g = dipper_diag_get(db, 0);
  CHECK(g != NULL && g->line == 2);
  CHECK_EQ(compile(db, "CREATE TABLE bh (id BIGINT) WITH ('connector' = 'blackhole');\n"
                       "INSERT INTO bh SELECT id FROM g;\n",
                   &prog),
           DIPPER_OK);
  CHECK_EQ(dipper_execute(prog, 1, &st), DIPPER_STREAMING);
  CHECK_CONTAINS(dipper_errmsg(db), "start it with dipper_query_start or dipper_run");
  dipper_program_free(prog);
  dipper_close(db);
}

/* ---- streaming on Spark ---- */

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Step q until its progress shows batch `batch` or later (at most 120 s). */
static int step_until_batch(dipper *db, dipper_query *q, int64_t batch, dipper_progress *p) {
  for (int i = 0; i < 240; i++) {
    int finished = 0;
    int rc = dipper_query_step(q, &finished);
    if (rc != DIPPER_OK) {
      fprintf(stderr, "  step: %s\n", dipper_errmsg(db));
      return rc;
    }
    dipper_query_progress(q, p);
    if (p->batch_id >= batch) return DIPPER_OK;
    if (finished) return DIPPER_INTERNAL;
    nap_ms(500);
  }
  return DIPPER_TIMEOUT;
}

/* Spark's rate source through datagen: endless, no checkpoint needed for
** blackhole (noop) sinks. */
static const char *const endless_set =
    "SET 'dipper.trigger' = 'processing-time 1 s';\n"
    "CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', 'rows-per-second' = '40');\n"
    "CREATE TABLE bh_ids (id BIGINT) WITH ('connector' = 'blackhole');\n"
    "CREATE TABLE bh_vs (v INT) WITH ('connector' = 'blackhole');\n"
    "EXECUTE STATEMENT SET BEGIN\n"
    "  INSERT INTO bh_ids SELECT id FROM g;\n"
    "  INSERT INTO bh_vs SELECT v FROM g WHERE v IS NOT NULL;\n"
    "END;\n";

TEST(streaming_queries_managed_on_spark) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, endless_set, &prog), DIPPER_OK);
  if (!prog) return;
  CHECK_EQ(dipper_program_streaming(prog), 1);
  dipper_query **qs = NULL;
  int n = 0;
  int rc = dipper_query_start(prog, &qs, &n);
  if (rc) fprintf(stderr, "  start: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(n, 2); /* one Spark query per INSERT */
  if (n != 2) return;
  CHECK_STR(dipper_query_name(qs[0]), "bh_ids");
  CHECK_STR(dipper_query_name(qs[1]), "bh_vs");
  const char *id0 = dipper_query_id(qs[0]), *id1 = dipper_query_id(qs[1]);
  CHECK(id0 != NULL && strlen(id0) == 36);
  CHECK(id1 != NULL && strlen(id1) == 36);
  CHECK(id0 && id1 && strcmp(id0, id1) != 0);
  CHECK(dipper_query_run_id(qs[0]) != NULL);

  dipper_query *active[4];
  int nactive = 0;
  CHECK_EQ(dipper_active_queries(db, active, 4, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 2);
  dipper_status st = {sizeof st};
  CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
  CHECK_EQ(st.active, 1);
  CHECK(st.message[0] != '\0');

  /* a wait that times out: still running */
  int terminated = 1;
  CHECK_EQ(dipper_query_await(qs[0], 1500, &terminated), DIPPER_OK);
  CHECK_EQ(terminated, 0);

  /* progress from Spark's reports, every batch counted */
  dipper_progress p = {sizeof p};
  CHECK_EQ(step_until_batch(db, qs[0], 2, &p), DIPPER_OK);
  CHECK(p.batch_id >= 2);
  CHECK(p.total_input_rows > 0);
  CHECK_EQ(p.finished, 0);
  CHECK_STR(p.name, "bh_ids");
  dipper_progress recent[DIPPER_RECENT_PROGRESS] = {{sizeof recent[0]}};
  int nrecent = 0;
  CHECK_EQ(dipper_query_recent_progress(qs[0], recent, DIPPER_RECENT_PROGRESS, &nrecent),
           DIPPER_OK);
  CHECK(nrecent >= 1);
  if (nrecent >= 1) {
    CHECK_EQ(recent[nrecent - 1].batch_id, p.batch_id);
    CHECK_EQ(recent[nrecent - 1].total_input_rows, p.total_input_rows);
    int64_t sum = recent[0].total_input_rows - recent[0].input_rows;
    for (int i = 0; i < nrecent; i++) sum += recent[i].input_rows;
    CHECK_EQ(sum, p.total_input_rows); /* the totals are the sum of the batches */
  }

  /* stop one: gone from the server's active list, the other still there */
  CHECK_EQ(dipper_query_stop(qs[0]), DIPPER_OK);
  CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
  CHECK_EQ(st.active, 0);
  CHECK_EQ(dipper_query_await(qs[0], 0, &terminated), DIPPER_OK);
  CHECK_EQ(terminated, 1);
  CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
  CHECK_EQ(p.finished, 0); /* stopped, not finished */
  CHECK_EQ(dipper_active_queries(db, active, 4, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 1);
  CHECK(nactive == 1 && active[0] == qs[1]);
  int finished = 0;
  CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
  CHECK_EQ(finished, 1);

  /* freeing the handles stops what still runs */
  dipper_query_free_all(qs, n);
  CHECK_EQ(dipper_active_queries(db, active, 4, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 0);
  dipper_program_free(prog);
  dipper_close(db);
}

static void count_reports(void *user, const dipper_progress *p) {
  int *seen = user;
  if (p->batch_id >= 0) (*seen)++;
}

TEST(failure_on_spark_is_the_error) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  /* ANSI mode: a string that is no number fails the cast at run time */
  CHECK_EQ(compile(db,
                   "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5');\n"
                   "CREATE TABLE bad (n INT) WITH ('connector' = 'blackhole');\n"
                   "INSERT INTO bad SELECT CAST(CONCAT('x', CAST(id AS STRING)) AS INT) FROM g;\n",
                   &prog),
           DIPPER_OK);
  if (!prog) return;
  int seen = 0;
  int rc = dipper_run(prog, count_reports, &seen);
  CHECK_EQ(rc, DIPPER_REMOTE);
  CHECK_CONTAINS(dipper_errmsg(db), "Spark: [");
  CHECK_CONTAINS(dipper_errmsg(db), "CAST_INVALID_INPUT");
  CHECK_CONTAINS(dipper_errmsg(db), "query `bad`");
  dipper_program_free(prog);
  dipper_close(db);
}

/* dipper_run until a report shows, then dipper_interrupt: the run stops the
** query on Spark and returns DIPPER_INTERRUPTED after a final report. */
typedef struct interrupt_ctx {
  dipper *db;
  int reports;
  int64_t last_batch;
} interrupt_ctx;

static void interrupt_after_a_batch(void *user, const dipper_progress *p) {
  interrupt_ctx *c = user;
  c->reports++;
  c->last_batch = p->batch_id;
  if (p->batch_id >= 1) dipper_interrupt(c->db);
}

TEST(run_interrupted_stops_the_spark_query) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db,
                   "SET 'dipper.trigger' = 'processing-time 1 s';\n"
                   "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20');\n"
                   "CREATE TABLE bh (id BIGINT) WITH ('connector' = 'blackhole');\n"
                   "INSERT INTO bh SELECT id FROM g;\n",
                   &prog),
           DIPPER_OK);
  if (!prog) return;
  interrupt_ctx c = {db, 0, -1};
  CHECK_EQ(dipper_run(prog, interrupt_after_a_batch, &c), DIPPER_INTERRUPTED);
  CHECK(c.reports >= 2); /* the batches, then the final report */
  CHECK(c.last_batch >= 1);
  /* nothing left running in the handle's session */
  dipper_query *active[2];
  int nactive = -1;
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_active_queries(db, active, 2, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 0);
  /* and the name is free again: the query can start anew */
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 1);
  CHECK_EQ(dipper_active_queries(db, active, 2, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 1);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

/* ---- the listener bus on Spark ---- */

typedef struct bus_seen {
  dipper_query *qs[2];
  int progress[2], idle, terminated[2], other, events;
  int64_t last_batch[2];
  bool ordered, ids_match, have_json;
  int want_progress; /* stop once each query told this many reports (0: never) */
  char error[512];
} bus_seen;

static int on_bus(void *user, const dipper_event *ev) {
  bus_seen *s = user;
  s->events++;
  int k = ev->query && ev->query == s->qs[0] ? 0 : ev->query && ev->query == s->qs[1] ? 1 : -1;
  if (k < 0) {
    s->other++;
    return 0;
  }
  const char *id = dipper_query_id(ev->query);
  if (!ev->id || !id || strcmp(ev->id, id) != 0) s->ids_match = false;
  if (ev->kind == DIPPER_EVENT_PROGRESS) {
    if (!ev->progress || ev->progress->batch_id <= s->last_batch[k]) s->ordered = false;
    if (ev->progress) s->last_batch[k] = ev->progress->batch_id;
    s->progress[k]++;
    s->have_json = s->have_json || (ev->json && strstr(ev->json, "batchId"));
  } else if (ev->kind == DIPPER_EVENT_TERMINATED) {
    s->terminated[k]++;
    if (ev->error) snprintf(s->error, sizeof s->error, "%s", ev->error);
  } else {
    s->idle++;
  }
  return s->want_progress > 0 && s->progress[0] >= s->want_progress &&
         (!s->qs[1] || s->progress[1] >= s->want_progress);
}

static void bus_init(bus_seen *s, dipper_query *a, dipper_query *b) {
  memset(s, 0, sizeof *s);
  s->qs[0] = a;
  s->qs[1] = b;
  s->last_batch[0] = s->last_batch[1] = -1;
  s->ordered = s->ids_match = true;
}

static dipper *alarm_db;
static void on_alarm(int sig) {
  (void)sig;
  dipper_interrupt(alarm_db); /* async-signal-safe, as a SIGINT handler would call it */
}

TEST(listener_bus_on_spark) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, endless_set, &prog), DIPPER_OK);
  if (!prog) return;
  dipper_query **qs = NULL;
  int n = 0;
  int rc = dipper_query_start(prog, &qs, &n);
  if (rc) fprintf(stderr, "  start: %s\n", dipper_errmsg(db));
  CHECK_EQ(n, 2);
  if (n != 2) return;
  bus_seen s;
  bus_init(&s, qs[0], qs[1]);
  /* the server pushes each query's reports; the callback's word ends it */
  s.want_progress = 2;
  rc = dipper_listen(db, on_bus, &s, 120000);
  if (rc) fprintf(stderr, "  listen: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK(s.progress[0] >= 2 && s.progress[1] >= 2);
  CHECK(s.ordered);
  CHECK(s.ids_match);
  CHECK(s.have_json);
  CHECK_EQ(s.terminated[0] + s.terminated[1], 0);
  /* the reports told are taken into the queries' progress */
  dipper_progress p = {sizeof p};
  CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
  CHECK(p.batch_id >= s.last_batch[0]);
  CHECK(p.total_input_rows > 0);
  dipper_progress recent[DIPPER_RECENT_PROGRESS] = {{sizeof recent[0]}};
  int nrecent = 0;
  CHECK_EQ(dipper_query_recent_progress(qs[1], recent, DIPPER_RECENT_PROGRESS, &nrecent), DIPPER_OK);
  CHECK(nrecent >= 2);
  if (nrecent >= 1) CHECK(recent[nrecent - 1].batch_id >= s.last_batch[1]);

  /* a query stopped meanwhile ended before the listener: told at once; the
     other runs on until the timeout */
  CHECK_EQ(dipper_query_stop(qs[0]), DIPPER_OK);
  bus_init(&s, qs[0], qs[1]);
  rc = dipper_listen(db, on_bus, &s, 2500);
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(s.progress[0], 0);
  CHECK_EQ(s.terminated[0], 0); /* stopped by the caller before: not a new event */
  CHECK(s.progress[1] >= 1);
  CHECK_EQ(s.terminated[1], 0);

  /* a quiet bus (a 60 s trigger) ends on dipper_interrupt from a signal */
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  prog = NULL;
  CHECK_EQ(compile(db,
                   "SET 'dipper.trigger' = 'processing-time 60 s';\n"
                   "CREATE TABLE quiet (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5');\n"
                   "CREATE TABLE bh_quiet (id BIGINT) WITH ('connector' = 'blackhole');\n"
                   "INSERT INTO bh_quiet SELECT id FROM quiet;\n",
                   &prog),
           DIPPER_OK);
  if (!prog) return;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 1);
  if (n != 1) return;
  bus_init(&s, qs[0], NULL);
  alarm_db = db;
  signal(SIGALRM, on_alarm);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  alarm(3);
  rc = dipper_listen(db, on_bus, &s, 90000);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  alarm(0);
  signal(SIGALRM, SIG_DFL);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  CHECK_EQ(rc, DIPPER_INTERRUPTED);
  CHECK(secs < 20); /* the signal's second plus one slice, not the 90 s limit */
  CHECK_CONTAINS(dipper_errmsg(db), "interrupted");
  /* the session is usable after: the query is still there to stop */
  dipper_status st = {sizeof st};
  CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
  CHECK_EQ(st.active, 1);
  CHECK_EQ(dipper_query_stop(qs[0]), DIPPER_OK);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

/* A query that fails on Spark: its TERMINATED event carries Spark's error;
** the listening itself ends well once no query is left. */
TEST(listener_bus_tells_a_failure) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db,
                   "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5');\n"
                   "CREATE TABLE bad (n INT) WITH ('connector' = 'blackhole');\n"
                   "INSERT INTO bad SELECT CAST(CONCAT('x', CAST(id AS STRING)) AS INT) FROM g;\n",
                   &prog),
           DIPPER_OK);
  if (!prog) return;
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_OK);
  CHECK_EQ(n, 1);
  if (n != 1) return;
  bus_seen s;
  bus_init(&s, qs[0], NULL);
  int rc = dipper_listen(db, on_bus, &s, 120000);
  if (rc) fprintf(stderr, "  listen: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(s.terminated[0], 1);
  CHECK_CONTAINS(s.error, "CAST_INVALID_INPUT");
  CHECK_CONTAINS(s.error, "query `bad`");
  dipper_status st = {sizeof st};
  CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
  CHECK_EQ(st.active, 0);
  int terminated = 0;
  CHECK_EQ(dipper_query_await(qs[0], 0, &terminated), DIPPER_REMOTE);
  CHECK_EQ(terminated, 1);
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

/* 'real-time' reaches Spark Connect from 4.2 on; this server is 4.1: the start
** is refused with the server's version, nothing runs with another trigger. */
TEST(real_time_trigger_needs_spark_4_2) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, SPARK), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db,
                   "SET 'dipper.trigger' = 'real-time 5 s';\n"
                   "CREATE TABLE rt_g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5');\n"
                   "CREATE TABLE rt_bh (id BIGINT) WITH ('connector' = 'blackhole');\n"
                   "INSERT INTO rt_bh SELECT id FROM rt_g;\n",
                   &prog),
           DIPPER_OK);
  if (!prog) return;
  dipper_query **qs = NULL;
  int n = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &n), DIPPER_UNSUPPORTED);
  CHECK_EQ(n, 0);
  CHECK_CONTAINS(dipper_errmsg(db), "real-time mode is reachable through Spark Connect from Spark "
                                    "4.2 on, and the server runs Spark 4.1");
  dipper_query *active[1];
  int nactive = -1;
  CHECK_EQ(dipper_active_queries(db, active, 1, &nactive), DIPPER_OK);
  CHECK_EQ(nactive, 0);
  dipper_program_free(prog);
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
