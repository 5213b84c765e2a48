/*
** translate_partition_test.c — PARTITIONED BY of a filesystem sink on Spark
** (spark/translate_partition.c), offline: the streaming file sink and the
** batch write carry the partition columns (partitionBy), the partition
** values are given as the embedded sink's folder text (NULL and '' as
** __DEFAULT_PARTITION__ or 'partition.default-name'), and the
** partition-commit options are refused with the reason.  The messages are
** checked in their serialized bytes (names and literals appear there as
** they are).
*/
#include <stdlib.h>

#include "api/dipper_int.h"
#include "spark/translate.h"
#include "spark/translate_stream.h"
#include "test.h"

#define SRC                                                                                       \
  "CREATE TABLE src (id BIGINT, dt STRING, h INT) WITH ('connector' = 'filesystem', "             \
  "'path' = '/tmp/dipper-part-in', 'format' = 'json', 'source.monitor-interval' = '1 s');\n"

typedef struct out {
  int rc;
  char msg[1024];
  uint8_t *bytes;
  size_t n;
  size_t npart;
  char part0[32], part1[32];
} out;

/* Translate the last INSERT of sql (streaming or batch) and pack it. */
static void translate(const char *sql, bool streaming, out *o) {
  memset(o, 0, sizeof *o);
  dipper *db = NULL;
  dipper_program *p = NULL;
  o->rc = dipper_open(&db, "embedded");
  if (!o->rc) o->rc = dipper_compile(db, sql, (size_t)-1, "<test>", &p);
  if (o->rc) snprintf(o->msg, sizeof o->msg, "%s", dipper_errmsg(db));
  if (!o->rc) {
    dp_arena *a = dp_arena_new(0);
    dp_diags d;
    dp_diags_init(&d, a, "<test>", sql, strlen(sql));
    dp_spark_ctx c = {a, &d, NULL, NULL};
    dp_query_plan *q = &p->stmts[p->n - 1].plan;
    Spark__Connect__Plan *plan = NULL;
    if (streaming) {
      dp_spark_stream_opts so;
      memset(&so, 0, sizeof so);
      so.checkpoint_dir = "/tmp/dipper-ck";
      o->rc = dp_spark_stream_start_plan(&c, q, q->roots[0], &so, &plan);
      if (!o->rc) {
        Spark__Connect__WriteStreamOperationStart *w = plan->command->write_stream_operation_start;
        o->npart = w->n_partitioning_column_names;
        if (o->npart > 0) snprintf(o->part0, sizeof o->part0, "%s", w->partitioning_column_names[0]);
        if (o->npart > 1) snprintf(o->part1, sizeof o->part1, "%s", w->partitioning_column_names[1]);
      }
    } else {
      dp_spark_sink s;
      o->rc = dp_spark_sink_plan(&c, q, q->roots[0], &s);
      plan = s.command;
      if (!o->rc && plan) {
        Spark__Connect__WriteOperation *w = plan->command->write_operation;
        o->npart = w->n_partitioning_columns;
        if (o->npart > 0) snprintf(o->part0, sizeof o->part0, "%s", w->partitioning_columns[0]);
        if (o->npart > 1) snprintf(o->part1, sizeof o->part1, "%s", w->partitioning_columns[1]);
      }
    }
    if (!o->rc && plan) {
      o->n = protobuf_c_message_get_packed_size(&plan->base);
      o->bytes = malloc(o->n ? o->n : 1);
      protobuf_c_message_pack(&plan->base, o->bytes);
    }
    if (d.count) snprintf(o->msg, sizeof o->msg, "%s", d.items[0].message);
    dp_arena_free(a);
  }
  dipper_program_free(p);
  dipper_close(db);
}

static bool has(const out *o, const char *s) {
  size_t k = strlen(s);
  for (size_t i = 0; o->bytes && i + k <= o->n; i++)
    if (memcmp(o->bytes + i, s, k) == 0) return true;
  return false;
}

TEST(streaming_file_sink_partitions) {
  out o;
  translate(SRC "CREATE TABLE dst (id BIGINT, dt STRING, h INT) PARTITIONED BY (dt, h) WITH ("
                "'connector' = 'filesystem', 'path' = '/tmp/dipper-part-out', 'format' = 'json');\n"
                "INSERT INTO dst SELECT * FROM src",
            true, &o);
  CHECK_EQ(o.rc, DIPPER_OK);
  if (o.rc) fprintf(stderr, "%s\n", o.msg);
  CHECK_EQ((int)o.npart, 2);
  CHECK_STR(o.part0, "dt");
  CHECK_STR(o.part1, "h");
  CHECK(has(&o, "coalesce"));
  CHECK(has(&o, "nullif"));
  CHECK(has(&o, "__DEFAULT_PARTITION__"));
  free(o.bytes);
}

TEST(batch_write_partitions_with_a_default_name) {
  out o;
  translate("SET 'execution.runtime-mode' = 'batch';\n" SRC
            "CREATE TABLE dst (id BIGINT, dt STRING) PARTITIONED BY (dt) WITH ("
            "'connector' = 'filesystem', 'path' = '/tmp/dipper-part-out', 'format' = 'csv', "
            "'partition.default-name' = 'none');\n"
            "INSERT INTO dst SELECT id, dt FROM src",
            false, &o);
  CHECK_EQ(o.rc, DIPPER_OK);
  if (o.rc) fprintf(stderr, "%s\n", o.msg);
  CHECK_EQ((int)o.npart, 1);
  CHECK_STR(o.part0, "dt");
  CHECK(has(&o, "coalesce"));
  CHECK(has(&o, "none"));
  CHECK(!has(&o, "__DEFAULT_PARTITION__"));
  free(o.bytes);
  /* without PARTITIONED BY: no partition columns, no rewrite */
  translate("SET 'execution.runtime-mode' = 'batch';\n" SRC
            "CREATE TABLE dst (id BIGINT, dt STRING) WITH ("
            "'connector' = 'filesystem', 'path' = '/tmp/dipper-part-out', 'format' = 'csv');\n"
            "INSERT INTO dst SELECT id, dt FROM src",
            false, &o);
  CHECK_EQ(o.rc, DIPPER_OK);
  CHECK_EQ((int)o.npart, 0);
  CHECK(!has(&o, "coalesce"));
  free(o.bytes);
}

TEST(partition_commit_is_refused_on_spark) {
  static const char *const modes[] = {"streaming", "batch"};
  for (int m = 0; m < 2; m++) {
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SET 'execution.runtime-mode' = '%s';\n" SRC
             "CREATE TABLE dst (id BIGINT, dt STRING) PARTITIONED BY (dt) WITH ("
             "'connector' = 'filesystem', 'path' = '/tmp/dipper-part-out', 'format' = 'json', "
             "'sink.partition-commit.policy.kind' = 'success-file');\n"
             "INSERT INTO dst SELECT id, dt FROM src",
             modes[m]);
    out o;
    translate(sql, m == 0, &o);
    CHECK_EQ(o.rc, DIPPER_UNSUPPORTED);
    CHECK_CONTAINS(o.msg, "'sink.partition-commit.policy.kind' cannot be carried out on Spark");
    CHECK_CONTAINS(o.msg, "_spark_metadata");
    free(o.bytes);
  }
}

int main(void) { return RUN_TESTS(); }
