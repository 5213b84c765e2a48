/*
** streaming_sinks_test.c — dipper's streaming sinks on a real Spark
** (127.0.0.1:15002, or $DIPPER_SPARK_REMOTE) and a real Kafka
** (127.0.0.1:9092), through the compile pipeline and the streaming backend
** (translate_stream.h, streaming.h):
**
**  - kafka, three sinks started by one EXECUTE STATEMENT SET (one query per
**    INSERT): json with the key from PRIMARY KEY, csv with the key from
**    'key.fields', raw without a key; records read back key and value;
**  - kafka avro (key.format avro), json with a raw key and
**    'value.fields-include' = 'EXCEPT_KEY', csv with a csv key: the Avro
**    records decoded by dipper's codec and equal byte for byte to what the
**    embedded engine writes for the same rows;
**  - filesystem avro (Spark's avro data source), read back through Spark;
**  - filesystem json PARTITIONED BY, run twice from one checkpoint: every
**    row once, in its partition directory, times in dipper's text;
**  - console and blackhole (Spark's noop), started together: both end,
**    and their progress counts every row in and out.
**
** Inputs are watched JSON directories read with trigger available-now.
*/
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "spark/streaming.h"
#include "spark/translate_stream.h"
#include "test.h"
#include "spark/kafka_util.c" /* one source file per test target: the helpers come along */

static char err[512];

#define SRC_JSON(path) \
  "CREATE TABLE src (id INT, name STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', " \
  "'path' = '" path "', 'format' = 'json', 'source.monitor-interval' = '1 us');\n"

#define KAFKA(topic) \
  "'connector' = 'kafka', 'topic' = '" topic "', 'properties.bootstrap.servers' = '" ST_BROKERS "'"

static void expect_topic(const char *topic, const char *const *want, int nwant) {
  char **v = NULL;
  int n = dp_tk_consume_keyed(ST_BROKERS, topic, 1, nwant, 60000, &v, err, sizeof err);
  if (n < 0) fprintf(stderr, "%s\n", err);
  st_sort(v, n);
  CHECK_EQ(st_expect(v, n, want, nwant), 0);
  dp_tk_free(v, n < 0 ? 0 : n);
}

TEST(kafka_sinks_key_and_format_from_a_statement_set) {
  st_env e;
  CHECK_EQ(st_open(&e, "sink_kafka"), 0);
  char tj[160], tc[160], tr[160], sql[4096];
  snprintf(tj, sizeof tj, "%s_json", e.tag);
  snprintf(tc, sizeof tc, "%s_csv", e.tag);
  snprintf(tr, sizeof tr, "%s_raw", e.tag);
  const char *topics[] = {tj, tc, tr};
  for (int i = 0; i < 3; i++) {
    int rc = dp_tk_create_topic(ST_BROKERS, topics[i], 1, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK_EQ(rc, 0);
  }
  CHECK_EQ(st_write_file(&e, "in", "1.json",
                         "{\"id\":1,\"name\":\"ann\",\"ts\":\"2024-01-01 00:00:05.25\"}\n"
                         "{\"id\":2,\"name\":\"bob\",\"ts\":\"2024-01-01 00:01:00\"}\n"),
           0);
  snprintf(sql, sizeof sql,
           "SET 'execution.checkpointing.dir' = '%s/ck';\n"
           "SET 'dipper.trigger' = 'available-now';\n"
           SRC_JSON("%s/in")
           "CREATE TABLE kj (id INT, name STRING, ts TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED)\n"
           "  WITH (" KAFKA("%s") ", 'format' = 'json');\n"
           "CREATE TABLE kc (id INT, name STRING, ts TIMESTAMP(3))\n"
           "  WITH (" KAFKA("%s") ", 'format' = 'csv', 'key.fields' = 'name', "
           "'key.format' = 'json');\n"
           "CREATE TABLE kr (line STRING) WITH (" KAFKA("%s") ", 'format' = 'raw');\n"
           "EXECUTE STATEMENT SET BEGIN\n"
           "INSERT INTO kj SELECT id, name, ts FROM src;\n"
           "INSERT INTO kc SELECT id, name, ts FROM src;\n"
           "INSERT INTO kr SELECT name || '!' FROM src;\n"
           "END",
           e.dir, e.dir, tj, tc, tr);
  dp_sq qs[4];
  int nq = 0;
  CHECK_EQ(st_start_all(&e, sql, qs, 4, &nq), 0);
  CHECK_EQ(nq, 3);
  static const char *const names[] = {"kj", "kc", "kr"};
  for (int i = 0; i < nq; i++) {
    CHECK_STR(qs[i].name ? qs[i].name : "", names[i]);
    CHECK_EQ(st_finish(&e, &qs[i], 1), 0);
    dp_sq_free(&qs[i]);
  }
  static const char *const want_json[] = {
      "{\"id\":1}\t{\"id\":1,\"name\":\"ann\",\"ts\":\"2024-01-01 00:00:05.250\"}",
      "{\"id\":2}\t{\"id\":2,\"name\":\"bob\",\"ts\":\"2024-01-01 00:01:00.000\"}",
  };
  expect_topic(tj, want_json, 2);
  static const char *const want_csv[] = {
      "{\"name\":\"ann\"}\t1,ann,2024-01-01 00:00:05.250",
      "{\"name\":\"bob\"}\t2,bob,2024-01-01 00:01:00.000",
  };
  expect_topic(tc, want_csv, 2);
  static const char *const want_raw[] = {"(null)\tann!", "(null)\tbob!"};
  expect_topic(tr, want_raw, 2);
  st_close(&e);
}

/* The bytes as hex "0a 02", each a malloc'd string. */
static char **hex_of(int n, char *const *v, const size_t *lens) {
  char **h = calloc((size_t)n + 1, sizeof *h);
  for (int i = 0; h && i < n; i++) {
    h[i] = calloc(3 * lens[i] + 1, 1);
    for (size_t k = 0, at = 0; h[i] && k < lens[i]; k++)
      at += (size_t)snprintf(h[i] + at, 4, "%s%02x", k ? " " : "", (unsigned char)v[i][k]);
  }
  return h;
}

#define AVRO_TABLES(path, ta, tr, tc) \
  "CREATE TABLE src (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3),\n" \
  "  lts TIMESTAMP_LTZ(3)) WITH ('connector' = 'filesystem', 'path' = '" path "',\n" \
  "  'format' = 'json', 'source.monitor-interval' = '1 us');\n" \
  "CREATE TABLE ka (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3),\n" \
  "  lts TIMESTAMP_LTZ(3)) WITH (" KAFKA(ta) ", 'format' = 'avro',\n" \
  "  'key.fields' = 'id', 'key.format' = 'avro');\n" \
  "CREATE TABLE kr (id INT, name STRING, price DECIMAL(10, 2)) WITH (" KAFKA(tr) ",\n" \
  "  'format' = 'json', 'key.fields' = 'name', 'key.format' = 'raw',\n" \
  "  'value.fields-include' = 'EXCEPT_KEY');\n" \
  "CREATE TABLE kc (id INT, name STRING, price DECIMAL(10, 2)) WITH (" KAFKA(tc) ",\n" \
  "  'format' = 'csv', 'key.fields' = 'name;id', 'key.format' = 'csv');\n"

TEST(kafka_avro_value_and_key_formats) {
  st_env e;
  CHECK_EQ(st_open(&e, "sink_avro"), 0);
  char ta[160], tr[160], tc[160], ddl[4096], sql[8192];
  snprintf(ta, sizeof ta, "%s_avro", e.tag);
  snprintf(tr, sizeof tr, "%s_rawkey", e.tag);
  snprintf(tc, sizeof tc, "%s_csvkey", e.tag);
  const char *topics[] = {ta, tr, tc};
  for (int i = 0; i < 3; i++) {
    int rc = dp_tk_create_topic(ST_BROKERS, topics[i], 1, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    CHECK_EQ(rc, 0);
  }
  static const char *const in[] = {
      "{\"id\":1,\"name\":\"ann\",\"price\":12.34,\"ts\":\"2024-01-01 10:00:00.123\","
      "\"lts\":\"2024-01-01 10:00:00.456Z\"}",
      "{\"id\":2,\"name\":\"bob\",\"price\":null,\"ts\":\"1969-12-31 23:59:59.999\","
      "\"lts\":null}",
  };
  CHECK_EQ(st_write_file(&e, "in", "1.json", "{\"id\":1,\"name\":\"ann\",\"price\":12.34,"
                                             "\"ts\":\"2024-01-01 10:00:00.123\","
                                             "\"lts\":\"2024-01-01 10:00:00.456Z\"}\n"
                                             "{\"id\":2,\"name\":\"bob\",\"price\":null,"
                                             "\"ts\":\"1969-12-31 23:59:59.999\",\"lts\":null}\n"),
           0);
  snprintf(ddl, sizeof ddl, AVRO_TABLES("%s/in", "%s", "%s", "%s"), e.dir, ta, tr, tc);
  snprintf(sql, sizeof sql,
           "SET 'execution.checkpointing.dir' = '%s/ck';\n"
           "SET 'dipper.trigger' = 'available-now';\n%s"
           "EXECUTE STATEMENT SET BEGIN\n"
           "INSERT INTO ka SELECT * FROM src;\n"
           "INSERT INTO kr SELECT id, name, price FROM src;\n"
           "INSERT INTO kc SELECT id, name, price FROM src;\n"
           "END",
           e.dir, ddl);
  dp_sq qs[3];
  int nq = 0;
  CHECK_EQ(st_start_all(&e, sql, qs, 3, &nq), 0);
  CHECK_EQ(nq, 3);
  for (int i = 0; i < nq; i++) {
    CHECK_EQ(st_finish(&e, &qs[i], 1), 0);
    dp_sq_free(&qs[i]);
  }
  /* the Avro records: values and keys decoded by dipper's codec, and the
     very bytes the embedded engine writes for the same rows */
  dp_tk_record *r = NULL;
  int n = dp_tk_consume_records(ST_BROKERS, ta, 1, 2, 60000, &r, err, sizeof err);
  if (n < 0) fprintf(stderr, "%s\n", err);
  CHECK_EQ(n, 2);
  char **values = NULL, **keys = NULL;
  if (n == 2) {
    CHECK_EQ(st_avro_decode(ddl, "ka", NULL, n, r, 0, &values), 0);
    CHECK_EQ(st_avro_decode(ddl, "ka", "id", n, r, 1, &keys), 0);
  }
  if (values && keys) {
    st_sort(values, n);
    st_sort(keys, n);
    static const char *const want_values[] = {
        "{\"id\":1,\"name\":\"ann\",\"price\":12.34,\"ts\":\"2024-01-01 10:00:00.123\","
        "\"lts\":\"2024-01-01 10:00:00.456Z\"}",
        "{\"id\":2,\"name\":\"bob\",\"price\":null,\"ts\":\"1969-12-31 23:59:59.999\","
        "\"lts\":null}",
    };
    CHECK_EQ(st_expect(values, n, want_values, 2), 0);
    static const char *const want_keys[] = {"{\"id\":1}", "{\"id\":2}"};
    CHECK_EQ(st_expect(keys, n, want_keys, 2), 0);
    char **emb = NULL;
    size_t *emb_lens = NULL;
    CHECK_EQ(st_avro_encode(ddl, "ka", NULL, 2, in, &emb, &emb_lens), 0);
    char *got_v[2] = {r[0].value, r[1].value};
    size_t got_l[2] = {r[0].value_len, r[1].value_len};
    char **hg = hex_of(2, got_v, got_l), **he = emb ? hex_of(2, emb, emb_lens) : NULL;
    if (hg && he) {
      st_sort(hg, 2);
      st_sort(he, 2);
      CHECK_EQ(st_expect(hg, 2, (const char *const *)he, 2), 0);
    }
    dp_tk_free(hg, 2);
    dp_tk_free(he, he ? 2 : 0);
    dp_tk_free(emb, emb ? 2 : 0);
    free(emb_lens);
  }
  dp_tk_free(values, values ? n : 0);
  dp_tk_free(keys, keys ? n : 0);
  dp_tk_free_records(r, n < 0 ? 0 : n);
  /* a raw key (the name as it is), the value without it (EXCEPT_KEY) */
  static const char *const want_raw[] = {
      "ann\t{\"id\":1,\"price\":12.34}",
      "bob\t{\"id\":2,\"price\":null}",
  };
  expect_topic(tr, want_raw, 2);
  /* a CSV key in 'key.fields' order, the value every column */
  static const char *const want_csv[] = {"ann,1\t1,ann,12.34", "bob,2\t2,bob,"};
  expect_topic(tc, want_csv, 2);
  st_close(&e);
}

TEST(filesystem_avro_read_back) {
  st_env e;
  CHECK_EQ(st_open(&e, "sink_files_avro"), 0);
  char sql[4096];
  snprintf(sql, sizeof sql,
           "SET 'execution.checkpointing.dir' = '%s/ck';\n"
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3))\n"
           "  WITH ('connector' = 'filesystem', 'path' = '%s/in', 'format' = 'json',\n"
           "  'source.monitor-interval' = '1 us');\n"
           "CREATE TABLE fout (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3))\n"
           "  WITH ('connector' = 'filesystem', 'path' = '%s/out', 'format' = 'avro');\n"
           "INSERT INTO fout SELECT * FROM src",
           e.dir, e.dir, e.dir);
  CHECK_EQ(st_write_file(&e, "in", "1.json",
                         "{\"id\":1,\"name\":\"ann\",\"price\":12.34,\"ts\":\"2024-01-01 10:00:00.123\"}\n"
                         "{\"id\":2,\"name\":null,\"price\":-0.5,\"ts\":null}\n"),
           0);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  /* Spark's avro reader of the directory (the files its sink committed) */
  char q[1024], **rows = NULL;
  snprintf(q, sizeof q,
           "SELECT to_json(struct(*), map('timestampNTZFormat', 'yyyy-MM-dd HH:mm:ss.SSS')) AS j "
           "FROM avro.`%s/out` ORDER BY j",
           e.dir);
  int n = st_rows(&e, q, &rows);
  static const char *const want[] = {
      "{\"id\":1,\"name\":\"ann\",\"price\":12.34,\"ts\":\"2024-01-01 10:00:00.123\"}",
      "{\"id\":2,\"price\":-0.50}",
  };
  CHECK_EQ(st_expect(rows, n, want, 2), 0);
  st_free_rows(rows, n);
  st_close(&e);
}

TEST(filesystem_partitioned_restart_without_loss_or_duplicates) {
  st_env e;
  CHECK_EQ(st_open(&e, "sink_files"), 0);
  char sql[4096];
  snprintf(sql, sizeof sql,
           "SET 'execution.checkpointing.dir' = '%s/ck';\n"
           "SET 'dipper.trigger' = 'available-now';\n"
           "CREATE TABLE src (k STRING, id INT, ts TIMESTAMP(3), v DOUBLE)\n"
           "  WITH ('connector' = 'filesystem', 'path' = '%s/in', 'format' = 'json',\n"
           "  'source.monitor-interval' = '1 us');\n"
           "CREATE TABLE fout (id INT, ts TIMESTAMP(3), v DOUBLE, k STRING) PARTITIONED BY (k)\n"
           "  WITH ('connector' = 'filesystem', 'path' = '%s/out', 'format' = 'json');\n"
           "INSERT INTO fout SELECT id, ts, v, k FROM src",
           e.dir, e.dir, e.dir);
#define IN(k, id, t, v) "{\"k\":\"" k "\",\"id\":" #id ",\"ts\":\"2024-01-01 " t "\",\"v\":" #v "}\n"
  CHECK_EQ(st_write_file(&e, "in", "1.json",
                         IN("a", 1, "00:00:05", 1.5) IN("a", 2, "00:00:06.5", 2) IN("b", 3, "00:01:00", -3)),
           0);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  /* the restart: a new file, and the old one must not be written again */
  CHECK_EQ(st_write_file(&e, "in", "2.json", IN("a", 4, "00:02:00", 4) IN("c", 5, "00:03:00", 5)),
           0);
  CHECK_EQ(st_run(&e, sql, 1), 0);
  /* Spark's reader of the directory lists the files its sink committed and
     finds k in the directory names */
  char q[1024], **rows = NULL;
  snprintf(q, sizeof q, "SELECT concat(k, ' ', value) AS j FROM text.`%s/out` ORDER BY j", e.dir);
  int n = st_rows(&e, q, &rows);
  static const char *const want[] = {
      "a {\"id\":1,\"ts\":\"2024-01-01 00:00:05.000\",\"v\":1.5}",
      "a {\"id\":2,\"ts\":\"2024-01-01 00:00:06.500\",\"v\":2.0}",
      "a {\"id\":4,\"ts\":\"2024-01-01 00:02:00.000\",\"v\":4.0}",
      "b {\"id\":3,\"ts\":\"2024-01-01 00:01:00.000\",\"v\":-3.0}",
      "c {\"id\":5,\"ts\":\"2024-01-01 00:03:00.000\",\"v\":5.0}",
  };
  CHECK_EQ(st_expect(rows, n, want, 5), 0);
  st_free_rows(rows, n);
  static const char *const parts[] = {"k=a", "k=b", "k=c"};
  for (int i = 0; i < 3; i++) {
    char d[512];
    snprintf(d, sizeof d, "%s/out/%s", e.dir, parts[i]);
    DIR *dd = opendir(d);
    if (!dd) fprintf(stderr, "no partition directory %s\n", d);
    CHECK(dd != NULL);
    if (dd) closedir(dd);
  }
  st_close(&e);
}

/* Rows in and out over a query's recent progress. */
static void io_rows(st_env *e, const dp_sq *q, int64_t *in, int64_t *out, char *sink, size_t cap) {
  dp_sc_error er;
  dp_sc_error_init(&er);
  dp_spark_progress *p = NULL;
  int n = 0;
  *in = *out = 0;
  sink[0] = '\0';
  CHECK_EQ(dp_sq_recent_progress(e->s, q, &p, &n, &er), DIPPER_OK);
  for (int i = 0; i < n; i++) {
    *in += p[i].num_input_rows > 0 ? p[i].num_input_rows : 0;
    *out += p[i].sink_output_rows > 0 ? p[i].sink_output_rows : 0;
    if (p[i].sink_description) snprintf(sink, cap, "%s", p[i].sink_description);
    dp_spark_progress_free(&p[i]);
  }
  free(p);
  dp_sc_error_free(&er);
}

TEST(console_and_blackhole) {
  st_env e;
  CHECK_EQ(st_open(&e, "sink_console"), 0);
  char sql[4096];
  CHECK_EQ(st_write_file(&e, "in", "1.json",
                         "{\"id\":1,\"name\":\"ann\",\"ts\":\"2024-01-01 00:00:05\"}\n"
                         "{\"id\":2,\"name\":\"bob\",\"ts\":\"2024-01-01 00:00:06\"}\n"
                         "{\"id\":3,\"name\":\"cy\",\"ts\":\"2024-01-01 00:00:07\"}\n"),
           0);
  snprintf(sql, sizeof sql,
           "SET 'dipper.trigger' = 'available-now';\n"
           SRC_JSON("%s/in")
           "CREATE TABLE shown (id INT, name STRING) WITH ('connector' = 'console');\n"
           "CREATE TABLE gone (id INT) WITH ('connector' = 'blackhole');\n"
           "EXECUTE STATEMENT SET BEGIN\n"
           "INSERT INTO shown SELECT id, name FROM src;\n"
           "INSERT INTO gone SELECT id FROM src;\n"
           "END",
           e.dir);
  dp_sq qs[2];
  int nq = 0;
  CHECK_EQ(st_start_all(&e, sql, qs, 2, &nq), 0);
  CHECK_EQ(nq, 2);
  for (int i = 0; i < nq; i++) CHECK_EQ(st_finish(&e, &qs[i], 1), 0);
  if (nq == 2) {
    int64_t in, out;
    char sink[256];
    io_rows(&e, &qs[0], &in, &out, sink, sizeof sink);
    CHECK_EQ(in, 3);
    CHECK_EQ(out, 3);
    CHECK_CONTAINS(sink, "Console");
    io_rows(&e, &qs[1], &in, &out, sink, sizeof sink);
    CHECK_EQ(in, 3);
    CHECK_EQ(out, 3);
    CHECK_CONTAINS(sink, "Noop");
  }
  for (int i = 0; i < nq; i++) dp_sq_free(&qs[i]);
  st_close(&e);
}

static int ignore_response(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  (void)user;
  (void)r;
  return DIPPER_OK;
}

/* A batch INSERT into kafka is written by dp_sx_kafka_write (translate.c
** hands it the sink's rows): here over Spark SQL rows named as the table's
** columns, the command executed, the records read back. */
TEST(batch_kafka_write) {
  st_env e;
  CHECK_EQ(st_open(&e, "sink_kafka_batch"), 0);
  char t[160], sql[2048];
  snprintf(t, sizeof t, "%s_batch", e.tag);
  int rc = dp_tk_create_topic(ST_BROKERS, t, 1, err, sizeof err);
  if (rc) fprintf(stderr, "%s\n", err);
  CHECK_EQ(rc, 0);
  snprintf(sql, sizeof sql,
           "CREATE TABLE kb (id INT, name STRING, ts TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED)\n"
           "  WITH (" KAFKA("%s") ", 'format' = 'json')",
           t);
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, "embedded"), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "test.sql", &prog), DIPPER_OK);
  const dp_table_def *kb = dp_catalog_table(db->catalog, "kb");
  CHECK(kb != NULL);
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, "test.sql", sql, strlen(sql));
  dp_spark_ctx c;
  memset(&c, 0, sizeof c);
  c.arena = a;
  c.diags = &d;
  dp_sx x;
  dp_sx_init(&x, &c, NULL);
  Spark__Connect__SQL q;
  spark__connect__sql__init(&q);
  q.query = (char *)(uintptr_t)"SELECT * FROM VALUES (1, 'ann', TIMESTAMP_NTZ'2024-01-01 00:00:05.25'),"
                               " (2, 'bob', NULL) AS t(id, name, ts)";
  Spark__Connect__Relation rows;
  spark__connect__relation__init(&rows);
  rows.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_SQL;
  rows.sql = &q;
  Spark__Connect__Plan *plan = kb ? dp_sx_kafka_write(&x, kb, &rows) : NULL;
  CHECK(plan != NULL);
  if (plan) {
    dp_sc_error er;
    dp_sc_error_init(&er);
    rc = dp_sc_execute(e.s, plan, ignore_response, NULL, 120000, &er);
    if (rc) fprintf(stderr, "batch write: %s\n", dp_buf_cstr(&er.message));
    CHECK_EQ(rc, DIPPER_OK);
    dp_sc_error_free(&er);
  }
  dp_arena_free(a);
  dipper_program_free(prog);
  dipper_close(db);
  static const char *const want[] = {
      "{\"id\":1}\t{\"id\":1,\"name\":\"ann\",\"ts\":\"2024-01-01 00:00:05.250\"}",
      "{\"id\":2}\t{\"id\":2,\"name\":\"bob\",\"ts\":null}",
  };
  expect_topic(t, want, 2);
  st_close(&e);
}

int main(void) { return RUN_TESTS(); }
