/*
** streaming_progress_test.c — every batch a Spark query runs is counted in
** dipper_progress, across Spark's idle-trigger reports (needs Kafka and the
** Spark server).
**
** While a query waits for data Spark reports its idle triggers every 10 s
** (spark.sql.streaming.noDataProgressEventInterval) with the NEXT batch's id
** and no batch run.  Taken as a batch, such a report made the next real
** batch look seen: when that batch and the no-data batch after it (a window
** closing) ran between two looks, only the last was taken in, and the first
** one's input and late rows were lost from the totals (spark/e2e_stream
** failed now and then on "2 late rows dropped").  Here: a first batch, an
** idle report taken in, then two batches between two looks.
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

static int produce(const char *topic, const char *value) {
  int rc = dp_tk_produce(ST_BROKERS, topic, 1, &value, err, sizeof err);
  if (rc) fprintf(stderr, "%s\n", err);
  return rc;
}

/* One look at q on Spark (dipper_query_step); *p its progress after. */
static void look(dipper_query *q, dipper_progress *p) {
  int finished = 0;
  CHECK_EQ(dipper_query_step(q, &finished), DIPPER_OK);
  CHECK_EQ(finished, 0);
  CHECK_EQ(dipper_query_progress(q, p), DIPPER_OK);
}

TEST(batches_across_idle_reports_all_counted) {
  char in[128], sql[2048];
  snprintf(in, sizeof in, "dipper_progress_%d_%ld", (int)getpid(), (long)time(NULL));
  CHECK_EQ(dp_tk_create_topic(ST_BROKERS, in, 1, err, sizeof err), 0);
  CHECK_EQ(produce(in, "{\"ts\":\"2024-01-01 00:00:01.000\",\"k\":1}"), 0);
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, st_spark_remote()), DIPPER_OK);
  snprintf(sql, sizeof sql,
           "CREATE TABLE src (ts TIMESTAMP(3), k INT,\n"
           "  WATERMARK FOR ts AS ts - INTERVAL '0' SECOND)\n"
           "WITH ('connector' = 'kafka', 'topic' = '%s',\n"
           "  'properties.bootstrap.servers' = '" ST_BROKERS "',\n"
           "  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"
           "CREATE TABLE counts (k INT, n BIGINT) WITH ('connector' = 'blackhole');\n"
           "INSERT INTO counts SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts),\n"
           "  INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end;\n",
           in);
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "progress.sql", &prog);
  if (rc) fprintf(stderr, "  compile: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  dipper_query **qs = NULL;
  int n = 0;
  rc = prog ? dipper_query_start(prog, &qs, &n) : DIPPER_MISUSE;
  if (rc) fprintf(stderr, "  start: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  if (rc == DIPPER_OK && n == 1) {
    dipper_progress p = {sizeof p};
    /* batch 0: the first record */
    for (int i = 0; i < 120; i++) {
      look(qs[0], &p);
      if (p.total_input_rows >= 1) break;
      nap_ms(500);
    }
    CHECK_EQ(p.total_input_rows, 1);
    /* an idle report (Spark's is due 10 s after the last batch; a no-data
       batch for the first watermark may come before it), taken in */
    nap_ms(13000);
    look(qs[0], &p);
    CHECK_EQ(p.total_input_rows, 1);
    int64_t before = p.batch_id;
    /* a record that closes the first window: its batch and the no-data
       batch that emits the window run before the next look */
    CHECK_EQ(produce(in, "{\"ts\":\"2024-01-01 00:00:30.000\",\"k\":1}"), 0);
    for (int i = 0; i < 60; i++) {
      nap_ms(1000);
      dipper_status st = {sizeof st};
      CHECK_EQ(dipper_query_status(qs[0], &st), DIPPER_OK);
      if (!st.data_available && !st.trigger_active && i >= 8) break;
    }
    look(qs[0], &p);
    CHECK_EQ(p.total_input_rows, 2); /* the record's batch counted, not only the last one */
    CHECK_EQ(p.total_output_rows, 1); /* the closed window */
    CHECK(p.batch_id >= before + 2);
    CHECK_EQ(dipper_query_stop(qs[0]), DIPPER_OK);
  }
  dipper_query_free_all(qs, n);
  dipper_program_free(prog);
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
