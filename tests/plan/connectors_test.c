/*
** connectors_test.c — the connector table: known connectors, required and
** unknown options, value kinds, formats, metadata columns, source/sink roles
** and boundedness, through CREATE TABLE statements parsed with dp_parse.
** Errors are checked for code, key words and line:col.
*/
#include <string.h>

#include "plan/catalog.h"
#include "sql/parser.h"
#include "test.h"

#include "catalog_fixture.h"

/* Validate table `name` for reading or writing, with fresh diagnostics. */
static int use(env *e, const char *name, bool as_sink) {
  dp_diags_init(&e->d, e->arena, "t.sql", e->sql, strlen(e->sql));
  const dp_table_def *t = dp_catalog_table(e->cat, name);
  if (!t) return -1;
  return dp_connector_validate(&e->d, t, as_sink);
}

#define EXPECT_OK(e, sql)                                                        \
  do {                                                                           \
    int rc_ = run((e), (sql));                                                   \
    if (rc_ != DIPPER_OK) fprintf(stderr, "  unexpected: %s\n", msg(e));         \
    CHECK_EQ(rc_, DIPPER_OK);                                                    \
  } while (0)

#define KAFKA_BASE "'connector' = 'kafka', 'properties.bootstrap.servers' = 'b1:9092,b2:9092'"

/* ---- which connector ---- */

TEST(unknown_connector_lists_known_ones) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (a INT) WITH ('connector' = 'kafak', 'topic' = 'x')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "unknown connector 'kafak'; did you mean 'kafka'?", "'kafak'");
  CHECK_CONTAINS(msg(&e), "kafka, kinesis, filesystem, datagen, nexmark, socket, memory, console");
  CHECK_CONTAINS(msg(&e), "callback");
  rc = run(&e, "CREATE TABLE t (a INT) WITH ('connector' = 'jdbc')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "unknown connector 'jdbc'; dipper knows kafka", "'jdbc'");
  CHECK(dp_catalog_table(e.cat, "t") == NULL);
  env_free(&e);
}

/* ---- kafka ---- */

TEST(kafka_complete_table) {
  env e;
  env_init(&e);
  EXPECT_OK(&e, "CREATE TABLE k (id BIGINT, ts TIMESTAMP(3), off BIGINT METADATA FROM 'offset' "
                "VIRTUAL, `partition` INT METADATA VIRTUAL, h MAP<STRING, BYTES> METADATA FROM "
                "'headers', kt TIMESTAMP_LTZ(3) METADATA FROM 'timestamp') WITH (" KAFKA_BASE
                ", 'topic' = 'orders;refunds', 'properties.group.id' = 'g1', "
                "'properties.auto.offset.reset' = 'earliest', 'scan.startup.mode' = "
                "'specific-offsets', 'scan.startup.specific-offsets' = "
                "'partition:0,offset:42;partition:1,offset:300', 'format' = 'json', "
                "'json.ignore-parse-errors' = 'true', 'key.format' = 'csv', 'key.fields' = 'id', "
                "'key.csv.field-delimiter' = ';', 'value.fields-include' = 'EXCEPT_KEY', "
                "'sink.delivery-guarantee' = 'at-least-once')");
  const dp_table_def *t = dp_catalog_table(e.cat, "k");
  CHECK(t != NULL);
  if (t) {
    CHECK_STR(t->connector, "kafka");
    CHECK_STR(t->format, "json");
    CHECK(!t->bounded);
    CHECK(!dp_connector_bounded(t, true)); /* Kafka ends only with scan.bounded.mode */
  }
  CHECK_EQ(use(&e, "k", false), DIPPER_OK);
  /* The sink writes one topic, not a list. */
  int rc = use(&e, "k", true);
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "a Kafka sink writes to one topic", "'orders;refunds'");
  env_free(&e);
}

TEST(kafka_required_options) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE k (a INT) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = "
                   "'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "connector 'kafka' needs option 'properties.bootstrap.servers'; add "
               "'properties.bootstrap.servers' = 'localhost:9092' to WITH (...)",
               "WITH");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE ", 'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "connector 'kafka' needs option 'topic'", "WITH");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE ", 'topic' = 'x')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "needs option 'format'", "WITH");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'topic-pattern' = 'x.*', 'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "set either 'topic' or 'topic-pattern', not both",
               "'topic-pattern'");
  env_free(&e);
}

TEST(kafka_topic_pattern_is_for_sources) {
  env e;
  env_init(&e);
  EXPECT_OK(&e, "CREATE TABLE k (a INT) WITH ('connector' = 'KAFKA', "
                "'properties.bootstrap.servers' = 'b1:9092', 'topic-pattern' = 'orders-.*', "
                "'value.format' = 'JSON')");
  CHECK_STR(dp_catalog_table(e.cat, "k")->connector, "kafka");
  CHECK_STR(dp_catalog_table(e.cat, "k")->format, "json");
  CHECK_EQ(use(&e, "k", false), DIPPER_OK);
  int rc = use(&e, "k", true);
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "a Kafka sink writes to one 'topic'", "'topic-pattern'");
  env_free(&e);
}

TEST(kafka_option_keys_and_values) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
                   ", 'topic' = 'x', 'format' = 'json', 'scan.startup.mod' = 'earliest-offset')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "connector 'kafka' has no option 'scan.startup.mod'; did you mean 'scan.startup.mode'?",
               "'scan.startup.mod'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'scan.startup.mode' = 'earliest')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "'scan.startup.mode' = 'earliest' is not allowed; write 'earliest-offset', "
               "'latest-offset', 'group-offsets', 'timestamp' or 'specific-offsets'",
               "'earliest'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'scan.startup.mode' = 'specific-offsets')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "'scan.startup.mode' = 'specific-offsets' needs 'scan.startup.specific-offsets'",
               "'specific-offsets'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'scan.startup.mode' = 'timestamp')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "needs 'scan.startup.timestamp-millis'", "'timestamp'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'scan.startup.mode' = 'specific-offsets', "
               "'scan.startup.specific-offsets' = 'partition:0;offset:42')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "is not a list of offsets", "'partition:0;");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'scan.startup.mode' = 'timestamp', "
               "'scan.startup.timestamp-millis' = 'yesterday')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'yesterday' is not a whole number", "'yesterday'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH ('connector' = 'kafka', "
               "'properties.bootstrap.servers' = 'localhost', 'topic' = 'x', 'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "each server must be written host:port", "'localhost'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'json.ignore-parse-errors' = 'yes')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "must be 'true' or 'false'", "'yes'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'csv.field-delimiter' = ';')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "option 'csv.field-delimiter' applies to format 'csv', but the format here is 'json'",
               "'csv.field-delimiter'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'csv', 'csv.field-delimiter' = ';;')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "must be a single character", "';;'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'sink.delivery-guarantee' = 'twice')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'at-least-once', 'exactly-once' or 'none'", "'twice'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'bad topic', 'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "is not a topic list", "'bad topic'");
  env_free(&e);
}

TEST(kafka_formats) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
                   ", 'topic' = 'x', 'format' = 'debezium-json')");
  EXPECT_ERROR(&e, rc, DIPPER_UNSUPPORTED, "format 'debezium-json' is not supported yet",
               "'debezium-json'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE ", 'topic' = 'x', 'format' = 'jsn')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "connector 'kafka' has no format 'jsn'; did you mean 'json'? it reads and writes "
               "'json', 'csv', 'raw' or 'avro'",
               "'jsn'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'value.format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "set either 'format' or 'value.format'", "'value.format'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'key.format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'key.format' needs 'key.fields'", "'key.format'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'key.format' = 'json', 'key.fields' = 'a;b')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'key.fields' names `b`, which is not a column of table `k`",
               "'a;b'");
  env_free(&e);
}

TEST(kafka_companion_options) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
                   ", 'topic' = 'x', 'format' = 'json', 'scan.startup.mode' = 'group-offsets')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "'scan.startup.mode' = 'group-offsets' needs 'properties.group.id'; add "
               "'properties.group.id' = 'my-group'",
               "'group-offsets'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'value.fields-include' = 'EXCEPT_KEY')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'value.fields-include' = 'EXCEPT_KEY' needs 'key.fields'",
               "'EXCEPT_KEY'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'key.fields' = 'a')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'key.fields' needs 'key.format'", "'key.fields'");
  rc = run(&e, "CREATE TABLE k (a INT) WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json', 'key.json.ignore-parse-errors' = 'true')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "option 'key.json.ignore-parse-errors' applies to format 'json', but no "
               "'key.format' is set; remove it or add 'key.format' = 'json'",
               "'key.json");
  /* Several errors in one table are all reported. */
  rc = run(&e, "CREATE TABLE k (a INT) WITH ('connector' = 'kafka', 'topic' = 'x', 'format' = "
               "'json', 'scan.startup.mode' = 'nope', 'json.fail-on-missing-field' = 'maybe')");
  CHECK_EQ(rc, DIPPER_OPTION);
  CHECK_EQ(e.d.count, 3);
  env_free(&e);
}

TEST(kafka_boundedness) {
  env e;
  env_init(&e);
  EXPECT_OK(&e, "CREATE TABLE b1 (a INT) WITH (" KAFKA_BASE
                ", 'topic' = 'x', 'format' = 'json', 'scan.bounded.mode' = 'latest-offset')");
  EXPECT_OK(&e, "CREATE TABLE b2 (a INT) WITH (" KAFKA_BASE
                ", 'topic' = 'x', 'format' = 'json', 'scan.bounded.mode' = 'unbounded')");
  CHECK(dp_catalog_table(e.cat, "b1")->bounded);
  CHECK(dp_connector_bounded(dp_catalog_table(e.cat, "b1"), false));
  CHECK(!dp_catalog_table(e.cat, "b2")->bounded);
  int rc = run(&e, "CREATE TABLE b3 (a INT) WITH (" KAFKA_BASE
                   ", 'topic' = 'x', 'format' = 'json', 'scan.bounded.mode' = 'timestamp')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "needs 'scan.bounded.timestamp-millis'", "'timestamp'");
  env_free(&e);
}

TEST(kafka_metadata_columns) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE k (a INT, off INT METADATA FROM 'offset') WITH (" KAFKA_BASE
                   ", 'topic' = 'x', 'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_TYPE,
               "metadata 'offset' of connector 'kafka' is BIGINT, but `off` is declared INT; write "
               "`off` BIGINT METADATA FROM 'offset'",
               "off INT");
  rc = run(&e, "CREATE TABLE k (a INT, o BIGINT METADATA FROM 'offsett') WITH (" KAFKA_BASE
               ", 'topic' = 'x', 'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "connector 'kafka' has no metadata 'offsett'; did you mean 'offset'? it offers "
               "topic, partition, offset",
               "o BIGINT");
  rc = run(&e, "CREATE TABLE k (a INT, h MAP<STRING, STRING> METADATA FROM 'headers') WITH ("
               KAFKA_BASE ", 'topic' = 'x', 'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_TYPE, "is MAP<STRING, BYTES>", "h MAP");
  /* Read-only metadata must be VIRTUAL in a table that is written. */
  EXPECT_OK(&e, "CREATE TABLE w (a INT, p INT METADATA FROM 'partition', ts TIMESTAMP_LTZ(3) "
                "METADATA FROM 'timestamp') WITH (" KAFKA_BASE ", 'topic' = 'x', 'format' = 'json')");
  CHECK_EQ(use(&e, "w", false), DIPPER_OK);
  rc = use(&e, "w", true);
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "a kafka sink cannot write metadata 'partition'", "p INT");
  CHECK_CONTAINS(msg(&e), "METADATA VIRTUAL");
  CHECK_EQ(e.d.count, 1); /* 'timestamp' is writable */
  env_free(&e);
}

/* ---- kinesis, filesystem ---- */

TEST(kinesis_rules) {
  env e;
  env_init(&e);
  EXPECT_OK(&e, "CREATE TABLE s (a INT, arrived TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL) WITH "
                "('connector' = 'kinesis', 'stream' = 'clicks', 'aws.region' = 'eu-west-1', "
                "'aws.credentials.provider' = 'AUTO', 'scan.stream.initpos' = 'TRIM_HORIZON', "
                "'format' = 'json')");
  CHECK(!dp_catalog_table(e.cat, "s")->bounded);
  int rc = run(&e, "CREATE TABLE s2 (a INT) WITH ('connector' = 'kinesis', 'stream' = 'clicks', "
                   "'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "connector 'kinesis' needs option 'aws.region'", "WITH");
  rc = run(&e, "CREATE TABLE s2 (a INT) WITH ('connector' = 'kinesis', 'stream' = 'c', "
               "'aws.region' = 'r', 'format' = 'json', 'scan.stream.initpos' = 'EARLIEST')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'LATEST', 'TRIM_HORIZON' or 'AT_TIMESTAMP'", "'EARLIEST'");
  rc = run(&e, "CREATE TABLE s2 (a INT) WITH ('connector' = 'kinesis', 'stream' = 'c', "
               "'aws.region' = 'r', 'format' = 'json', 'scan.stream.initpos' = 'AT_TIMESTAMP')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "needs 'scan.stream.initpos-timestamp'", "'AT_TIMESTAMP'");
  env_free(&e);
}

TEST(filesystem_rules) {
  env e;
  env_init(&e);
  EXPECT_OK(&e, "CREATE TABLE f (a INT, p STRING METADATA FROM 'file.path' VIRTUAL) WITH "
                "('connector' = 'filesystem', 'path' = '/data/in', 'format' = 'csv', "
                "'csv.field-delimiter' = '|', 'source.monitor-interval' = '10 s', "
                "'sink.rolling-policy.file-size' = '128MB')");
  const dp_table_def *t = dp_catalog_table(e.cat, "f");
  CHECK(!t->bounded); /* streaming mode: the directory is watched */
  CHECK(dp_connector_bounded(t, true));
  CHECK(!dp_connector_bounded(t, false));
  CHECK_EQ(use(&e, "f", true), DIPPER_OK);
  EXPECT_OK(&e, "SET 'execution.runtime-mode' = 'batch'; CREATE TABLE g (line STRING) WITH "
                "('connector' = 'filesystem', 'path' = '/data/logs', 'format' = 'text')");
  CHECK(dp_catalog_table(e.cat, "g")->bounded);
  int rc = run(&e, "CREATE TABLE h (a INT) WITH ('connector' = 'filesystem', 'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "connector 'filesystem' needs option 'path'", "WITH");
  rc = run(&e, "CREATE TABLE h (a INT) WITH ('connector' = 'filesystem', 'path' = '/x')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "connector 'filesystem' needs option 'format'", "WITH");
  rc = run(&e, "CREATE TABLE h (a INT) WITH ('connector' = 'filesystem', 'path' = '/x', 'format' "
               "= 'json', 'source.monitor-interval' = 'often')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'often' is not a duration", "'often'");
  rc = run(&e, "CREATE TABLE h (a INT) WITH ('connector' = 'filesystem', 'path' = '', 'format' = "
               "'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'path' must not be empty", "''");
  rc = run(&e, "CREATE TABLE h (a INT) WITH ('connector' = 'filesystem', 'path' = '/x', 'format' "
               "= 'xml')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "connector 'filesystem' has no format 'xml'", "'xml'");
  EXPECT_OK(&e, "CREATE TABLE m (a INT) WITH ('connector' = 'filesystem', 'path' = '/x', "
                "'format' = 'json', 'source.max-files-per-trigger' = '2', "
                "'source.monitor-interval' = '1 s')");
  /* the cap paces a watched folder: without the interval the table is bounded */
  rc = run(&e, "CREATE TABLE mb (a INT) WITH ('connector' = 'filesystem', 'path' = '/x', "
               "'format' = 'json', 'source.max-files-per-trigger' = '2')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'source.max-files-per-trigger' paces a watched folder",
               "'source.max-files-per-trigger'");
  rc = run(&e, "CREATE TABLE m0 (a INT) WITH ('connector' = 'filesystem', 'path' = '/x', "
               "'format' = 'json', 'source.max-files-per-trigger' = '0')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'source.max-files-per-trigger' must be 1 or more", "'0'");
  rc = run(&e, "CREATE TABLE m1 (a INT) WITH ('connector' = 'filesystem', 'path' = '/x', "
               "'format' = 'json', 'source.max-files-per-trigger' = 'many')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'source.max-files-per-trigger'", "'many'");
  env_free(&e);
}

/* ---- generators ---- */

TEST(datagen_rules) {
  env e;
  env_init(&e);
  EXPECT_OK(&e, "CREATE TABLE g (id BIGINT, name STRING, v DOUBLE, ts TIMESTAMP(3)) WITH "
                "('connector' = 'datagen', 'rows-per-second' = '100', 'fields.name.length' = "
                "'10', 'fields.v.min' = '-1.5', 'fields.v.max' = '2', 'fields.v.null-rate' = "
                "'0.1', 'fields.ts.max-past' = '5 s', 'fields.ID.kind' = 'random')");
  CHECK(!dp_catalog_table(e.cat, "g")->bounded);
  const char *g2 = "CREATE TABLE g2 (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = "
                   "'1000')";
  EXPECT_OK(&e, g2);
  CHECK(dp_catalog_table(e.cat, "g2")->bounded);
  EXPECT_OK(&e, "CREATE TABLE g3 (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
                "'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100')");
  CHECK(dp_catalog_table(e.cat, "g3")->bounded);
  int rc = run(&e, "CREATE TABLE h (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
                   "'sequence')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "a sequence field needs a start and an end; add 'fields.id.start' = '1' and "
               "'fields.id.end' = '1000'",
               "'sequence'");
  rc = run(&e, "CREATE TABLE h (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
               "'sequence', 'fields.id.start' = '10', 'fields.id.end' = '1')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "a sequence counts up", "'1')");
  rc = run(&e, "CREATE TABLE h (id BIGINT) WITH ('connector' = 'datagen', 'fields.nope.kind' = "
               "'random')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "option 'fields.nope.kind' names column `nope`, which table `h` does not have",
               "'fields.nope.kind'");
  rc = run(&e, "CREATE TABLE h (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kinds' = "
               "'random')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "did you mean 'fields.id.kind'?", "'fields.id.kinds'");
  rc = run(&e, "CREATE TABLE h (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = "
               "'fast')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'rows-per-second' = 'fast' is not a number", "'fast'");
  rc = run(&e, "CREATE TABLE h (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.null-rate' = "
               "'2')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "must be a number from 0 to 1", "'2'");
  rc = run(&e, "CREATE TABLE h (id BIGINT, o BIGINT METADATA FROM 'offset') WITH ('connector' = "
               "'datagen')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "connector 'datagen' offers no metadata columns", "o BIGINT");
  /* datagen is read-only. */
  e.sql = g2; /* the error points into the text that declared the table */
  rc = use(&e, "g2", true);
  EXPECT_ERROR(&e, rc, DIPPER_UNSUPPORTED, "connector 'datagen' can only be read", "'datagen'");
  env_free(&e);
}

TEST(nexmark_and_socket) {
  env e;
  env_init(&e);
  EXPECT_OK(&e, "CREATE TABLE n (event_type INT) WITH ('connector' = 'nexmark', 'rate' = '10000', "
                "'person.proportion' = '1', 'auction.proportion' = '3', 'bid.proportion' = '46')");
  CHECK(!dp_catalog_table(e.cat, "n")->bounded);
  EXPECT_OK(&e, "CREATE TABLE n2 (event_type INT) WITH ('connector' = 'nexmark', 'events.num' = "
                "'1000000', 'seed' = '7')");
  CHECK(dp_catalog_table(e.cat, "n2")->bounded);
  EXPECT_OK(&e, "CREATE TABLE n4 (event_type INT) WITH ('connector' = 'nexmark', "
                "'number-of-events' = '10', 'events-per-second' = '5.5')");
  CHECK(dp_connector_bounded(dp_catalog_table(e.cat, "n4"), false));
  int rc = run(&e, "CREATE TABLE n3 (event_type INT) WITH ('connector' = 'nexmark', 'events.num' = "
                   "'-5')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "is not a whole number >= 0", "'-5'");
  EXPECT_OK(&e, "CREATE TABLE s (line STRING) WITH ('connector' = 'socket', 'hostname' = "
                "'localhost', 'port' = '9999', 'format' = 'csv')");
  CHECK(!dp_catalog_table(e.cat, "s")->bounded);
  rc = run(&e, "CREATE TABLE s2 (line STRING) WITH ('connector' = 'socket', 'hostname' = 'h', "
               "'port' = '70000')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "must be a port number from 1 to 65535", "'70000'");
  rc = run(&e, "CREATE TABLE s2 (line STRING) WITH ('connector' = 'socket', 'port' = '1')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "connector 'socket' needs option 'hostname'", "WITH");
  env_free(&e);
}

/* ---- sinks ---- */

TEST(sink_only_connectors) {
  env e;
  env_init(&e);
  EXPECT_OK(&e, "CREATE TABLE out1 (a INT) WITH ('connector' = 'console', 'print-identifier' = "
                "'o')");
  EXPECT_OK(&e, "CREATE TABLE out2 (a INT) WITH ('connector' = 'Print')");
  CHECK_STR(dp_catalog_table(e.cat, "out2")->connector, "console"); /* the alias resolved */
  EXPECT_OK(&e, "CREATE TABLE out3 (a INT) WITH ('connector' = 'blackhole')");
  EXPECT_OK(&e, "CREATE TABLE out4 (a INT) WITH ('connector' = 'callback', 'name' = 'on_rows')");
  EXPECT_OK(&e, "CREATE TABLE mem (a INT) WITH ('connector' = 'memory', 'name' = 'results')");
  CHECK_EQ(use(&e, "out1", true), DIPPER_OK);
  CHECK_EQ(use(&e, "out2", true), DIPPER_OK);
  CHECK_EQ(use(&e, "out3", true), DIPPER_OK);
  CHECK_EQ(use(&e, "out4", true), DIPPER_OK);
  CHECK_EQ(use(&e, "mem", true), DIPPER_OK);
  CHECK_EQ(use(&e, "mem", false), DIPPER_OK);
  CHECK(!dp_connector_bounded(dp_catalog_table(e.cat, "mem"), false));
  CHECK(dp_connector_bounded(dp_catalog_table(e.cat, "mem"), true));
  e.sql = "CREATE TABLE out3 (a INT) WITH ('connector' = 'blackhole')";
  int rc = use(&e, "out3", false);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK_CONTAINS(msg(&e), "connector 'blackhole' can only be written (INSERT INTO out3)");
  rc = run(&e, "CREATE TABLE out5 (a INT) WITH ('connector' = 'callback')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "connector 'callback' needs option 'name'", "WITH");
  rc = run(&e, "CREATE TABLE out5 (a INT) WITH ('connector' = 'blackhole', 'format' = 'json')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "connector 'blackhole' has no option 'format'; it takes no options besides "
               "'connector'",
               "'format'");
  rc = run(&e, "CREATE TABLE out5 (a INT) WITH ('connector' = 'console', 'prefix' = 'x')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "connector 'console' has no option 'prefix'; it takes 'print-identifier', "
               "'standard-error'",
               "'prefix'");
  rc = run(&e, "CREATE TABLE out5 (a INT) WITH ('connector' = 'datagen', 'velocity' = 'x')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "'fields.<col>.kind'", "'velocity'");
  rc = run(&e, "CREATE TABLE out5 (a INT) WITH ('connector' = 'console', 'standard-error' = "
               "'maybe')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "must be 'true' or 'false'", "'maybe'");
  env_free(&e);
}

TEST(raw_format_takes_one_column) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (a STRING, b STRING) WITH ('connector' = 'filesystem', 'path' = "
                   "'/tmp/t', 'format' = 'raw')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION,
               "format 'raw' reads each record as one value, so table `t` needs exactly one "
               "physical column, and it has 2",
               "'raw'");
  EXPECT_OK(&e, "CREATE TABLE lines (line STRING, n AS CHAR_LENGTH(line)) WITH ('connector' = "
                "'socket', 'hostname' = 'h', 'port' = '9', 'format' = 'raw')");
  EXPECT_OK(&e, "CREATE TABLE kv (k STRING, v BYTES) WITH (" KAFKA_BASE ", 'topic' = 'x', "
                "'key.format' = 'raw', 'key.fields' = 'k', 'value.format' = 'raw', "
                "'value.fields-include' = 'EXCEPT_KEY')");
  rc = run(&e, "CREATE TABLE kv2 (k STRING, j STRING, v BYTES) WITH (" KAFKA_BASE ", 'topic' = 'x', "
               "'key.format' = 'raw', 'key.fields' = 'k;j', 'value.format' = 'raw', "
               "'value.fields-include' = 'EXCEPT_KEY')");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "key format 'raw' holds one value", "'raw', 'key.fields'");
  env_free(&e);
}

TEST(errors_point_into_multi_line_text) {
  env e;
  env_init(&e);
  int rc = run(&e, "CREATE TABLE t (\n  a INT\n) WITH (\n  'connector' = 'datagen',\n"
                   "  'rows-per-secnd' = '5'\n)");
  EXPECT_ERROR(&e, rc, DIPPER_OPTION, "did you mean 'rows-per-second'?", "'rows-per-secnd'");
  CHECK_EQ(e.d.items[0].span.line, 5);
  CHECK_EQ(e.d.items[0].span.col, 3);
  env_free(&e);
}

int main(void) { return RUN_TESTS(); }
