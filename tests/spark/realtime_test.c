/*
** realtime_test.c — 'dipper.trigger' = 'real-time <d>' on a real Spark 4.2
** server (the spark42_server fixture: scripts/spark-local with
** DIPPER_SPARK_VERSION=4.2.0 on port 15042; $DIPPER_SPARK_REMOTE names it)
** and the real Kafka broker.  dipper is built against Spark 4.1's protocol
** and sends the 4.2 trigger field (real_time_batch_duration, field 100) as
** an unknown field: this test is the proof that a 4.2 server reads it.
**
** A stateless kafka → kafka INSERT through the public API: the rows come out
** exactly, and the query runs in real-time mode, which a micro-batch query
** would not show: each batch lasts the whole 5 s real-time duration (a
** processing-time batch over three rows takes a fraction of that).
** The 4.1 server's refusal of the same trigger is in api_test.c.
*/
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dipper.h"
#include "spark/streaming.h"
#include "test.h"
#include "spark/kafka_util.c" /* the Kafka helpers and st_spark_remote */

static char err[512];

static void nap_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int compile(dipper *db, const char *sql, dipper_program **prog) {
  int rc = dipper_compile(db, sql, (size_t)-1, "realtime.sql", prog);
  if (rc != DIPPER_OK) fprintf(stderr, "  (compile) %s\n", dipper_errmsg(db));
  return rc;
}

TEST(real_time_query_on_spark_4_2) {
  char tag[96], in[128], out[128], ck[160], sql[2048];
  snprintf(tag, sizeof tag, "dipper_rt_%d_%ld", (int)getpid(), (long)time(NULL));
  snprintf(in, sizeof in, "%s_in", tag);
  snprintf(out, sizeof out, "%s_out", tag);
  snprintf(ck, sizeof ck, "/tmp/%s_ck", tag);
  CHECK_EQ(dp_tk_create_topic(ST_BROKERS, in, 1, err, sizeof err), 0);
  CHECK_EQ(dp_tk_create_topic(ST_BROKERS, out, 1, err, sizeof err), 0);
  static const char *const values[] = {"{\"id\":1,\"name\":\"ann\"}", "{\"id\":-2,\"name\":\"bob\"}",
                                       "{\"id\":3,\"name\":\"cy\"}"};
  CHECK_EQ(dp_tk_produce(ST_BROKERS, in, 3, values, err, sizeof err), 0);

  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, st_spark_remote()), DIPPER_OK);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'real-time 5 s';\n"
           "SET 'execution.checkpointing.dir' = '%s';\n"
           "CREATE TABLE src (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = '%s',\n"
           "  'properties.bootstrap.servers' = '" ST_BROKERS "',\n"
           "  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"
           "CREATE TABLE dst (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = '%s',\n"
           "  'properties.bootstrap.servers' = '" ST_BROKERS "', 'format' = 'json');\n"
           "INSERT INTO dst SELECT id * 10, UPPER(name) FROM src WHERE id > 0;\n",
           ck, in, out);
  dipper_program *prog = NULL;
  CHECK_EQ(compile(db, sql, &prog), DIPPER_OK);
  if (!prog) {
    dipper_close(db);
    return;
  }
  dipper_query **qs = NULL;
  int n = 0;
  int rc = dipper_query_start(prog, &qs, &n);
  if (rc) fprintf(stderr, "  start: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(n, 1);
  if (rc == DIPPER_OK && n == 1) {
    /* the rows out, exactly */
    char **got = NULL;
    int m = dp_tk_consume(ST_BROKERS, out, 1, 2, 120000, &got, err, sizeof err);
    CHECK_EQ(m, 2);
    if (m == 2) {
      CHECK_STR(got[0], "{\"id\":10,\"name\":\"ANN\"}");
      CHECK_STR(got[1], "{\"id\":30,\"name\":\"CY\"}");
    }
    dp_tk_free(got, m > 0 ? m : 0);
    /* real-time batches: each spans the 5 s duration.  A batch's rows reach
    ** the sink while it runs but count in the totals only once its report
    ** is out, so wait for the report of the batch that read the rows too. */
    dipper_progress p = {sizeof p};
    int64_t longest = 0, batches = 0;
    for (int i = 0; i < 60 && (batches < 2 || p.total_input_rows < 3); i++) {
      int finished = 0;
      CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
      CHECK_EQ(finished, 0);
      dipper_progress recent[DIPPER_RECENT_PROGRESS] = {{sizeof recent[0]}};
      int nr = 0;
      CHECK_EQ(dipper_query_recent_progress(qs[0], recent, DIPPER_RECENT_PROGRESS, &nr), DIPPER_OK);
      batches = nr;
      for (int k = 0; k < nr; k++)
        if (recent[k].batch_duration_us > longest) longest = recent[k].batch_duration_us;
      CHECK_EQ(dipper_query_progress(qs[0], &p), DIPPER_OK);
      if (batches < 2 || p.total_input_rows < 3) nap_ms(1000);
    }
    CHECK(batches >= 2);
    CHECK(longest >= 4500000);
    CHECK_EQ(p.total_input_rows, 3);
    dipper_status st = {sizeof st};
    CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
    CHECK_EQ(st.active, 1);
    CHECK_EQ(dipper_query_stop(qs[0]), DIPPER_OK);
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
