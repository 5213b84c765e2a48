/*
** progress_test.c — Spark's StreamingQueryProgress JSON into dp_spark_progress:
** every field of a report shaped as Spark 4 writes it, a first batch without
** a watermark or offsets, the ISO times, and malformed input refused with
** where it broke.  Offline: no server is needed.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spark/progress_int.h"
#include "spark/streaming.h"
#include "test.h"

static const char *REPORT =
    "{\n"
    "  \"id\" : \"8c8a6f4e-3b5d-4c52-9d0e-0d5c3c7e1f11\",\n"
    "  \"runId\" : \"0b6f1d2a-7e4c-4a8b-b5f3-9e2d1c0a8b77\",\n"
    "  \"name\" : \"sink\",\n"
    "  \"timestamp\" : \"2024-01-01T00:02:03.456Z\",\n"
    "  \"batchId\" : 7,\n"
    "  \"batchDuration\" : 812,\n"
    "  \"numInputRows\" : 120,\n"
    "  \"inputRowsPerSecond\" : 40.5,\n"
    "  \"processedRowsPerSecond\" : 147.7832512315271,\n"
    "  \"durationMs\" : {\n"
    "    \"addBatch\" : 640, \"commitOffsets\" : 21, \"getBatch\" : 0,\n"
    "    \"latestOffset\" : 5, \"queryPlanning\" : 33, \"triggerExecution\" : 812,\n"
    "    \"walCommit\" : 40\n"
    "  },\n"
    "  \"eventTime\" : {\n"
    "    \"avg\" : \"2024-01-01T00:00:30.000Z\", \"max\" : \"2024-01-01T00:01:40.000Z\",\n"
    "    \"min\" : \"2024-01-01T00:00:05.000Z\", \"watermark\" : \"2024-01-01T00:01:30.000Z\"\n"
    "  },\n"
    "  \"stateOperators\" : [ {\n"
    "    \"operatorName\" : \"stateStoreSave\", \"numRowsTotal\" : 6, \"numRowsUpdated\" : 4,\n"
    "    \"allUpdatesTimeMs\" : 12, \"numRowsRemoved\" : 2, \"allRemovalsTimeMs\" : 3,\n"
    "    \"commitTimeMs\" : 50, \"memoryUsedBytes\" : 91872, \"numRowsDroppedByWatermark\" : 3,\n"
    "    \"numShufflePartitions\" : 200, \"numStateStoreInstances\" : 200,\n"
    "    \"customMetrics\" : { \"loadedMapCacheHitCount\" : 400 }\n"
    "  } ],\n"
    "  \"sources\" : [ {\n"
    "    \"description\" : \"KafkaV2[Subscribe[payment_msg]]\",\n"
    "    \"startOffset\" : { \"payment_msg\" : { \"0\" : 10, \"1\" : 12 } },\n"
    "    \"endOffset\" : { \"payment_msg\" : { \"0\" : 70, \"1\" : 72 } },\n"
    "    \"latestOffset\" : { \"payment_msg\" : { \"0\" : 70, \"1\" : 72 } },\n"
    "    \"numInputRows\" : 120,\n"
    "    \"inputRowsPerSecond\" : 40.5,\n"
    "    \"processedRowsPerSecond\" : 147.7832512315271,\n"
    "    \"metrics\" : { \"avgOffsetsBehindLatest\" : \"0.0\" }\n"
    "  } ],\n"
    "  \"sink\" : {\n"
    "    \"description\" : \"org.apache.spark.sql.kafka010.KafkaSourceProvider$KafkaTable@1b2c\",\n"
    "    \"numOutputRows\" : 4\n"
    "  },\n"
    "  \"observedMetrics\" : { }\n"
    "}";

TEST(a_full_report) {
  dp_spark_progress p;
  dp_buf err = DP_BUF_INIT;
  CHECK_EQ(dp_spark_progress_parse(REPORT, strlen(REPORT), &p, &err), DIPPER_OK);
  CHECK_STR(p.id, "8c8a6f4e-3b5d-4c52-9d0e-0d5c3c7e1f11");
  CHECK_STR(p.run_id, "0b6f1d2a-7e4c-4a8b-b5f3-9e2d1c0a8b77");
  CHECK_STR(p.name, "sink");
  CHECK_STR(p.timestamp, "2024-01-01T00:02:03.456Z");
  CHECK_EQ(p.timestamp_us, 1704067200000000LL + 123456000LL);
  CHECK_EQ(p.batch_id, 7);
  CHECK_EQ(p.batch_duration_ms, 812);
  CHECK_EQ(p.num_input_rows, 120);
  CHECK(p.input_rows_per_second == 40.5);
  CHECK(fabs(p.processed_rows_per_second - 147.7832512315271) < 1e-9);
  CHECK_EQ(p.trigger_execution_ms, 812);
  CHECK_EQ(p.add_batch_ms, 640);
  CHECK_EQ(p.get_batch_ms, 0);
  CHECK_EQ(p.latest_offset_ms, 5);
  CHECK_EQ(p.query_planning_ms, 33);
  CHECK_EQ(p.wal_commit_ms, 40);
  CHECK_EQ(p.commit_offsets_ms, 21);
  CHECK(p.has_watermark);
  CHECK_EQ(p.watermark_us, 1704067200000000LL + 90000000LL);
  CHECK_EQ(p.nstate, 1);
  if (p.nstate == 1) {
    CHECK_STR(p.state[0].operator_name, "stateStoreSave");
    CHECK_EQ(p.state[0].num_rows_total, 6);
    CHECK_EQ(p.state[0].num_rows_updated, 4);
    CHECK_EQ(p.state[0].num_rows_removed, 2);
    CHECK_EQ(p.state[0].num_rows_dropped_by_watermark, 3);
    CHECK_EQ(p.state[0].memory_used_bytes, 91872);
  }
  CHECK_EQ(p.state_rows_total, 6);
  CHECK_EQ(p.state_rows_dropped_by_watermark, 3);
  CHECK_EQ(p.nsources, 1);
  if (p.nsources == 1) {
    CHECK_STR(p.sources[0].description, "KafkaV2[Subscribe[payment_msg]]");
    CHECK_STR(p.sources[0].start_offset, "{ \"payment_msg\" : { \"0\" : 10, \"1\" : 12 } }");
    CHECK_STR(p.sources[0].end_offset, "{ \"payment_msg\" : { \"0\" : 70, \"1\" : 72 } }");
    CHECK_STR(p.sources[0].latest_offset, "{ \"payment_msg\" : { \"0\" : 70, \"1\" : 72 } }");
    CHECK_EQ(p.sources[0].num_input_rows, 120);
    CHECK(p.sources[0].input_rows_per_second == 40.5);
  }
  CHECK_CONTAINS(p.sink_description, "KafkaSourceProvider");
  CHECK_EQ(p.sink_output_rows, 4);
  dp_spark_progress_free(&p);
  dp_buf_free(&err);
}

/* The first batch of a query: no name, null offsets, no watermark, no rates. */
TEST(a_first_batch) {
  const char *j = "{\"id\":\"a\",\"runId\":\"b\",\"name\":null,\"timestamp\":\"2024-05-06T07:08:09Z\","
                  "\"batchId\":0,\"numInputRows\":0,\"durationMs\":{\"triggerExecution\":3},"
                  "\"stateOperators\":[],\"sources\":[{\"description\":\"RateStreamV2\","
                  "\"startOffset\":null,\"endOffset\":0,\"numInputRows\":0}],"
                  "\"sink\":{\"description\":\"MemorySink\",\"numOutputRows\":-1}}";
  dp_spark_progress p;
  CHECK_EQ(dp_spark_progress_parse(j, strlen(j), &p, NULL), DIPPER_OK);
  CHECK(p.name == NULL);
  CHECK_EQ(p.timestamp_us, 1714979289000000LL);
  CHECK_EQ(p.batch_id, 0);
  CHECK(isnan(p.input_rows_per_second));
  CHECK_EQ(p.add_batch_ms, -1);
  CHECK(!p.has_watermark);
  CHECK_EQ(p.nstate, 0);
  CHECK_EQ(p.state_rows_total, 0);
  CHECK_EQ(p.nsources, 1);
  if (p.nsources == 1) {
    CHECK(p.sources[0].start_offset == NULL);
    CHECK_STR(p.sources[0].end_offset, "0");
  }
  CHECK_EQ(p.sink_output_rows, -1);
  dp_spark_progress_free(&p);
}

TEST(iso_times) {
  CHECK_EQ(dp_spark_parse_iso_time("1970-01-01T00:00:00.000Z"), 0);
  CHECK_EQ(dp_spark_parse_iso_time("1970-01-01T00:00:01.5Z"), 1500000);
  CHECK_EQ(dp_spark_parse_iso_time("2000-02-29T12:00:00.000001Z"), 951825600000001LL);
  CHECK_EQ(dp_spark_parse_iso_time("1969-12-31T23:59:59.000Z"), -1000000);
  CHECK_EQ(dp_spark_parse_iso_time("2024-13-01T00:00:00Z"), -1);
  CHECK_EQ(dp_spark_parse_iso_time("2024-01-01"), -1);
  CHECK_EQ(dp_spark_parse_iso_time("2024-01-01T00:00:00.Z"), -1);
  CHECK_EQ(dp_spark_parse_iso_time(NULL), -1);
}

TEST(strings_with_escapes) {
  dp_arena *a = dp_arena_new(0);
  dp_jv *v = NULL;
  const char *j = "{\"k\":\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\\n\"}";
  CHECK_EQ(dp_jv_parse(a, j, strlen(j), &v, NULL), DIPPER_OK);
  CHECK_STR(dp_jv_str(v, "k"), "a\"b\\c\xc3\xa9\xf0\x9f\x98\x80\n");
  dp_arena_free(a);
}

TEST(malformed_input_is_refused) {
  const char *bad[] = {
      "", "{", "{\"a\":}", "{\"a\":1,}", "[1 2]", "{\"a\":\"x}", "{\"a\":tru}", "{} x",
      "{\"a\":\"\\q\"}", "{\"a\":\"\\u12\"}", "nul",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    dp_spark_progress p;
    dp_buf err = DP_BUF_INIT;
    CHECK_EQ(dp_spark_progress_parse(bad[i], strlen(bad[i]), &p, &err), DIPPER_DATA);
    CHECK_CONTAINS(dp_buf_cstr(&err), "progress JSON: ");
    dp_spark_progress_free(&p);
    dp_buf_free(&err);
  }
  /* Not an object at the top. */
  dp_spark_progress p;
  CHECK_EQ(dp_spark_progress_parse("[1]", 3, &p, NULL), DIPPER_DATA);
  dp_spark_progress_free(&p);
  /* Nesting deeper than the reader allows, without running off the stack. */
  char deep[400];
  memset(deep, '[', sizeof deep);
  CHECK_EQ(dp_spark_progress_parse(deep, sizeof deep, &p, NULL), DIPPER_DATA);
  dp_spark_progress_free(&p);
  /* Reads nothing past len. */
  CHECK_EQ(dp_spark_progress_parse("{\"id\":\"abc\"}xyz", 12, &p, NULL), DIPPER_OK);
  CHECK_STR(p.id, "abc");
  dp_spark_progress_free(&p);
}

int main(void) { return RUN_TESTS(); }
