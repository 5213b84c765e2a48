/*
** translate_test.c — the translator (spark/translate.h): SQL compiled by the
** public API on the embedded engine, its plan translated to Spark Connect
** messages, and the messages checked through a compact text dump of the
** protobuf tree (every set field, generic over protobuf-c's descriptors):
** relation kinds, function names, literal values, names, options.  Refusals
** are checked with their code, line:col and message.  Offline: no server.
**
** With DIPPER_TRANSLATE_PLANS=<dir> each translated query is also written
** there as <n>.plan (a serialized spark.connect.Plan) for
** tools/spark-run-plan.py to run on a real server.
*/
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "api/dipper_int.h"
#include "core/buf.h"
#include "spark/translate.h"
#include "spark/udf.h"
#include "spark/translate_stream.h"
#include "test.h"

static const char *DDL =
    "CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3),\n"
    "  tags ARRAY<STRING>, attrs MAP<STRING, INT>, addr ROW<city STRING, zip INT>,\n"
    "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)\n"
    "WITH ('connector' = 'filesystem', 'path' = '" DIPPER_SOURCE_DIR "/tests/spark/plans/orders.json',\n"
    "  'format' = 'json', 'source.monitor-interval' = '1 s');\n"
    "CREATE TABLE rel (id BIGINT) WITH ('connector' = 'filesystem', 'path' = 'data/rel.json', 'format' = 'json');\n"
    "CREATE TABLE people (id BIGINT, name STRING, city STRING)\n"
    "WITH ('connector' = 'filesystem', 'path' = '" DIPPER_SOURCE_DIR "/tests/spark/plans/people.csv', 'format' = 'csv',\n"
    "  'csv.field-delimiter' = ';', 'csv.header' = 'true', 'csv.ignore-parse-errors' = 'true');\n"
    "CREATE TABLE mem (k INT, v STRING) WITH ('connector' = 'memory');\n"
    "CREATE TABLE gen (id BIGINT, k INT, name STRING, ts TIMESTAMP(3)) WITH ('connector' = 'datagen',\n"
    "  'number-of-rows' = '50', 'seed' = '3', 'fields.id.kind' = 'sequence', 'fields.id.start' = '10',\n"
    "  'fields.id.end' = '19', 'fields.k.min' = '1', 'fields.k.max' = '3', 'fields.name.length' = '5');\n"
    "CREATE TABLE out_files (id BIGINT, name STRING)\n"
    "WITH ('connector' = 'filesystem', 'path' = '/tmp/dipper-out', 'format' = 'json');\n"
    "SET 'execution.runtime-mode' = 'batch';\n";

typedef struct fx {
  dipper *db;
  dipper_program *prog;
  dp_arena *arena;
  dp_diags d;
  dp_spark_ctx c;
  int rc;             /* compile, then translation */
  char *dump;         /* the translated root, as text */
} fx;

static int nplans;
/* The handle fx_run compiles on: "embedded", or an sc:// address for what the
** embedded engine refuses (Java functions); compiling needs no server. */
static const char *fx_engine = "embedded";

/* ---- a text dump of any protobuf-c message ---- */

static void dump_msg(dp_buf *b, const ProtobufCMessage *m);

static void dump_value(dp_buf *b, const ProtobufCFieldDescriptor *f, const void *p) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32: dp_buf_printf(b, "%d", *(const int32_t *)p); break;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32: dp_buf_printf(b, "%u", *(const uint32_t *)p); break;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64: dp_buf_printf(b, "%" PRId64, *(const int64_t *)p); break;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: dp_buf_printf(b, "%" PRIu64, *(const uint64_t *)p); break;
  case PROTOBUF_C_TYPE_FLOAT: dp_buf_printf(b, "%g", (double)*(const float *)p); break;
  case PROTOBUF_C_TYPE_DOUBLE: dp_buf_printf(b, "%g", *(const double *)p); break;
  case PROTOBUF_C_TYPE_BOOL: dp_buf_puts(b, *(const protobuf_c_boolean *)p ? "true" : "false"); break;
  case PROTOBUF_C_TYPE_ENUM: {
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
    dp_buf_puts(b, v ? v->name : "?");
    break;
  }
  case PROTOBUF_C_TYPE_STRING: dp_buf_printf(b, "\"%s\"", *(char *const *)p ? *(char *const *)p : ""); break;
  case PROTOBUF_C_TYPE_BYTES: dp_buf_printf(b, "<%zu bytes>", ((const ProtobufCBinaryData *)p)->len); break;
  case PROTOBUF_C_TYPE_MESSAGE: dump_msg(b, *(ProtobufCMessage *const *)p); break;
  }
}

/* Is a proto3 scalar at its default (then it is not printed)? */
static bool is_default(const ProtobufCFieldDescriptor *f, const void *p) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_STRING: return !*(char *const *)p || !**(char *const *)p;
  case PROTOBUF_C_TYPE_MESSAGE: return !*(void *const *)p;
  case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)p)->len == 0;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_DOUBLE: return *(const int64_t *)p == 0;
  default: return *(const int32_t *)p == 0;
  }
}

static void dump_msg(dp_buf *b, const ProtobufCMessage *m) {
  if (!m) {
    dp_buf_puts(b, "NULL");
    return;
  }
  const ProtobufCMessageDescriptor *d = m->descriptor;
  const char *base = (const char *)m;
  dp_buf_putc(b, '{');
  bool first = true;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    const void *p = base + f->offset;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t n = *(const size_t *)(base + f->quantifier_offset);
      if (!n) continue;
      dp_buf_printf(b, "%s%s:[", first ? "" : " ", f->name);
      size_t sz = f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING ? sizeof(void *)
                  : f->type == PROTOBUF_C_TYPE_INT64 || f->type == PROTOBUF_C_TYPE_DOUBLE ? 8 : 4;
      const char *arr = *(const char *const *)p;
      for (size_t k = 0; k < n; k++) {
        if (k) dp_buf_putc(b, ' ');
        dump_value(b, f, arr + k * sz);
      }
      dp_buf_putc(b, ']');
      first = false;
      continue;
    }
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      if (*(const uint32_t *)(base + f->quantifier_offset) != f->id) continue;
    } else if (is_default(f, p)) {
      continue;
    }
    dp_buf_printf(b, "%s%s:", first ? "" : " ", f->name);
    dump_value(b, f, p);
    first = false;
  }
  dp_buf_putc(b, '}');
}

static char *dump(const ProtobufCMessage *m) {
  dp_buf b = DP_BUF_INIT;
  dump_msg(&b, m);
  return dp_buf_take(&b);
}

static void save_plan(Spark__Connect__Plan *plan) {
  const char *dir = getenv("DIPPER_TRANSLATE_PLANS");
  if (!dir) return;
  size_t n = spark__connect__plan__get_packed_size(plan);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) return;
  spark__connect__plan__pack(plan, buf);
  char path[512];
  snprintf(path, sizeof path, "%s/%02d.plan", dir, ++nplans);
  FILE *fp = fopen(path, "wb");
  if (fp) {
    fwrite(buf, 1, n, fp);
    fclose(fp);
  }
  free(buf);
}

/* ---- fixture ---- */

/* Compile DDL + sql on the embedded engine and translate its last statement
** (a query: dp_spark_relation; an INSERT: dp_spark_sink_plan). */
static void fx_run(fx *f, const char *sql) {
  memset(f, 0, sizeof *f);
  f->arena = dp_arena_new(0);
  dp_diags_init(&f->d, f->arena, "<test>", sql, strlen(sql));
  f->c.arena = f->arena;
  f->c.diags = &f->d;
  f->rc = dipper_open(&f->db, fx_engine);
  if (f->rc != DIPPER_OK) return;
  dipper_program *ddl = NULL;
  f->rc = dipper_compile(f->db, DDL, (size_t)-1, "ddl.sql", &ddl);
  dipper_program_free(ddl);
  if (f->rc == DIPPER_OK) f->rc = dipper_compile(f->db, sql, (size_t)-1, "<test>", &f->prog);
  if (f->rc != DIPPER_OK) {
    char *msg = dipper_diag_render(f->db, 0);
    fprintf(stderr, "does not compile:\n%s", msg ? msg : "?\n");
    free(msg);
    return;
  }
  dp_query_plan *q = &f->prog->stmts[f->prog->n - 1].plan;
  if (q->nroots < 1) {
    f->rc = -1;
    return;
  }
  Spark__Connect__Plan plan;
  spark__connect__plan__init(&plan);
  if (q->roots[0]->kind == DP_P_SINK) {
    dp_spark_sink s;
    f->rc = dp_spark_sink_plan(&f->c, q, q->roots[0], &s);
    if (f->rc == DIPPER_OK && s.command) {
      f->dump = dump(&s.command->base);
      save_plan(s.command);
    } else if (f->rc == DIPPER_OK) {
      f->dump = dump(&s.input->base);
    }
    return;
  }
  Spark__Connect__Relation *rel = NULL;
  f->rc = dp_spark_relation(&f->c, q, q->roots[0], &rel);
  if (f->rc == DIPPER_OK && rel) {
    f->dump = dump(&rel->base);
    plan.op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_ROOT;
    plan.root = rel;
    save_plan(&plan);
  }
}

static void fx_close(fx *f) {
  free(f->dump);
  dipper_program_free(f->prog);
  dipper_close(f->db);
  dp_arena_free(f->arena);
}

/* Translate and expect success; the dump's text contains every needle. */
#define EXPECT_OK(sql, ...)                                                   \
  do {                                                                        \
    fx f_;                                                                    \
    fx_run(&f_, sql);                                                         \
    CHECK_EQ(f_.rc, DIPPER_OK);                                               \
    if (f_.rc != DIPPER_OK)                                                   \
      for (int i_ = 0; i_ < f_.d.count; i_++) fprintf(stderr, "  refusal: %s\n", f_.d.items[i_].message); \
    const char *needles_[] = {__VA_ARGS__, NULL};                             \
    for (int i_ = 0; needles_[i_]; i_++) CHECK_CONTAINS(f_.dump, needles_[i_]); \
    if (getenv("DIPPER_TRANSLATE_SHOW")) fprintf(stderr, "%s\n=> %s\n\n", sql, f_.dump); \
    fx_close(&f_);                                                            \
  } while (0)

/* Translate and expect a refusal at line:col whose message contains msg. */
#define EXPECT_REFUSED(sql, ln, cl, msg)                                   \
  do {                                                                        \
    fx f_;                                                                    \
    fx_run(&f_, sql);                                                         \
    CHECK_EQ(f_.rc, DIPPER_UNSUPPORTED);                                      \
    CHECK(f_.d.count >= 1);                                                   \
    if (f_.d.count >= 1) {                                                    \
      CHECK_EQ(f_.d.items[0].code, DIPPER_UNSUPPORTED);                       \
      CHECK_EQ(f_.d.items[0].span.line, ln);                                \
      CHECK_EQ(f_.d.items[0].span.col, cl);                                  \
      CHECK_CONTAINS(f_.d.items[0].message, msg);                             \
    }                                                                         \
    fx_close(&f_);                                                            \
  } while (0)

/* ---- reads ---- */

TEST(read_json_file_with_ddl_schema_and_absolute_path) {
  EXPECT_OK("SELECT id, customer FROM orders",
            "read:{data_source:{format:\"json\"", "options:[{key:\"mode\" value:\"FAILFAST\"}",
            "schema:\"`id` BIGINT, `customer` STRING, `amount` DECIMAL(10,2), `ts` TIMESTAMP_NTZ, "
            "`tags` ARRAY<STRING>, `attrs` MAP<STRING, INT>, `addr` STRUCT<`city`: STRING, `zip`: INT>\"",
            "/tests/spark/plans/orders.json\"]",
            "{alias:{expr:{unresolved_attribute:{unparsed_identifier:\"`id`\"}} name:[\"_c0_0\"]}}",
            "alias:{expr:{unresolved_attribute:{unparsed_identifier:\"_c1_0\"}} name:[\"id\"]}",
            "name:[\"customer\"]");
  char cwd[1024];
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  fx f;
  fx_run(&f, "SELECT id FROM rel"); /* a relative path: made absolute against the current directory */
  char want[1100];
  snprintf(want, sizeof want, "paths:[\"%s/data/rel.json\"]", cwd);
  CHECK_CONTAINS(f.dump, want);
  fx_close(&f);
}

TEST(read_csv_options_mapped_to_spark) {
  EXPECT_OK("SELECT name FROM people", "format:\"csv\"", "{key:\"sep\" value:\";\"}",
            "{key:\"header\" value:\"true\"}", "{key:\"mode\" value:\"DROPMALFORMED\"}",
            "/tests/spark/plans/people.csv\"]");
}

TEST(streaming_file_read_is_its_directory_with_a_glob) {
  EXPECT_OK("SET 'execution.runtime-mode' = 'streaming';\nSELECT id FROM orders", "is_streaming:true",
            "{key:\"pathGlobFilter\" value:\"orders.json\"}", "/tests/spark/plans\"]");
  /* the event time becomes a TIMESTAMP for Spark's watermark */
  EXPECT_OK("SET 'execution.runtime-mode' = 'streaming';\nSELECT id FROM orders",
            "{alias:{expr:{cast:{expr:{unresolved_attribute:{unparsed_identifier:\"_c0_3\"}} type:{timestamp:{}}}} "
            "name:[\"_c0_3\"]}}");
  EXPECT_REFUSED("SET 'execution.runtime-mode' = 'streaming';\nSELECT k FROM mem", 2, 15,
                 "a memory table is a stream on the embedded engine only");
}

TEST(kafka_tables_through_the_streaming_translator) {
  /* translate_stream.c reads kafka; dp_spark_check judges a streaming INSERT
     by the streaming write it starts */
  const char *sql =
      "CREATE TABLE k_in (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)\n"
      "WITH ('connector' = 'kafka', 'topic' = 'a', 'format' = 'json', 'properties.bootstrap.servers' = 'h:9092');\n"
      "CREATE TABLE k_out (ws TIMESTAMP(3), n BIGINT)\n"
      "WITH ('connector' = 'kafka', 'topic' = 'b', 'format' = 'json', 'properties.bootstrap.servers' = 'h:9092');\n"
      "SET 'execution.runtime-mode' = 'streaming';\n"
      "INSERT INTO k_out SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE k_in, DESCRIPTOR(ts),\n"
      "  INTERVAL '10' SECOND)) GROUP BY window_start, window_end";
  fx f;
  fx_run(&f, "SELECT 1 FROM orders");
  dipper_program *p = NULL;
  CHECK_EQ(dipper_compile(f.db, sql, (size_t)-1, "<test>", &p), DIPPER_OK);
  if (p) {
    dp_diags d;
    dp_diags_init(&d, f.arena, "<test>", sql, strlen(sql));
    CHECK_EQ(dp_spark_check(&p->stmts[p->n - 1].plan, f.arena, &d), DIPPER_OK);
    for (int i = 0; i < d.count; i++) fprintf(stderr, "  refusal: %s\n", d.items[i].message);
    CHECK_EQ(d.count, 0);
  }
  dipper_program_free(p);
  fx_close(&f);
}

TEST(memory_table_is_a_local_relation_with_its_schema) {
  EXPECT_OK("SELECT k, v FROM mem", "local_relation:{schema:\"`k` INT, `v` STRING\"}");
}

TEST(bounded_datagen_as_a_range) {
  /* the shortest sequence (10 rows) ends it before number-of-rows */
  EXPECT_OK("SELECT * FROM gen", "range:{start:0 end:10 step:1}",
            "function_name:\"+\" arguments:[{literal:{long:10}} {unresolved_attribute:{unparsed_identifier:\"id\"}}]",
            "function_name:\"pmod\"", "{literal:{long:3}}", "function_name:\"sha2\"", "function_name:\"timestamp_micros\"");
}

/* memory_rows: two rows (1, 'a'), (2, NULL) of mem (k INT, v STRING) as a
** hand-built Arrow struct array. */
static const int32_t k_vals[2] = {1, 2};
static const int32_t v_offs[3] = {0, 1, 1};
static const uint8_t v_valid[1] = {0x1};
static const char v_data[] = "a";
static const void *k_bufs[2] = {NULL, k_vals};
static const void *v_bufs[3] = {v_valid, v_offs, v_data};
static const void *top_bufs[1] = {NULL};

static void release_schema(struct ArrowSchema *s) {
  for (int64_t i = 0; i < s->n_children; i++)
    if (s->children[i]->release) s->children[i]->release(s->children[i]);
  free(s->children);
  free(s->private_data);
  s->release = NULL;
}
static void release_array(struct ArrowArray *a) {
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
  free(a->children);
  free(a->private_data);
  a->release = NULL;
}
static void release_leaf_schema(struct ArrowSchema *s) { s->release = NULL; }
static void release_leaf_array(struct ArrowArray *a) { a->release = NULL; }

static int mem_rows(void *user, const dp_table_def *t, struct ArrowSchema *schema, struct ArrowArray *array) {
  (void)t;
  int *calls = user;
  ++*calls;
  struct ArrowSchema *cs = calloc(2, sizeof *cs);
  struct ArrowArray *ca = calloc(2, sizeof *ca);
  struct ArrowSchema **csp = calloc(2, sizeof *csp);
  struct ArrowArray **cap = calloc(2, sizeof *cap);
  if (!cs || !ca || !csp || !cap) return DIPPER_NOMEM;
  cs[0] = (struct ArrowSchema){.format = "i", .name = "k", .flags = 2, .release = release_leaf_schema};
  cs[1] = (struct ArrowSchema){.format = "u", .name = "v", .flags = 2, .release = release_leaf_schema};
  ca[0] = (struct ArrowArray){.length = 2, .n_buffers = 2, .buffers = k_bufs, .release = release_leaf_array};
  ca[1] = (struct ArrowArray){.length = 2, .null_count = 1, .n_buffers = 3, .buffers = v_bufs,
                              .release = release_leaf_array};
  csp[0] = &cs[0], csp[1] = &cs[1], cap[0] = &ca[0], cap[1] = &ca[1];
  *schema = (struct ArrowSchema){.format = "+s", .name = "", .n_children = 2, .children = csp,
                                 .private_data = cs, .release = release_schema};
  *array = (struct ArrowArray){.length = 2, .n_buffers = 1, .buffers = top_bufs, .n_children = 2,
                               .children = cap, .private_data = ca, .release = release_array};
  return DIPPER_OK;
}

TEST(memory_rows_sent_as_arrow_ipc) {
  fx f;
  memset(&f, 0, sizeof f);
  const char *sql = "SELECT k, v FROM mem";
  f.arena = dp_arena_new(0);
  dp_diags_init(&f.d, f.arena, "<test>", sql, strlen(sql));
  CHECK_EQ(dipper_open(&f.db, "embedded"), DIPPER_OK);
  dipper_program *ddl = NULL;
  CHECK_EQ(dipper_compile(f.db, DDL, (size_t)-1, "ddl.sql", &ddl), DIPPER_OK);
  dipper_program_free(ddl);
  CHECK_EQ(dipper_compile(f.db, sql, (size_t)-1, "<test>", &f.prog), DIPPER_OK);
  int calls = 0;
  dp_spark_ctx c = {f.arena, &f.d, mem_rows, &calls};
  Spark__Connect__Relation *rel = NULL;
  dp_query_plan *q = &f.prog->stmts[0].plan;
  CHECK_EQ(dp_spark_relation(&c, q, q->roots[0], &rel), DIPPER_OK);
  CHECK_EQ(calls, 1);
  if (rel) {
    f.dump = dump(&rel->base);
    CHECK_CONTAINS(f.dump, "local_relation:{data:<");
    CHECK_CONTAINS(f.dump, "schema:\"`k` INT, `v` STRING\"");
    Spark__Connect__Plan plan;
    spark__connect__plan__init(&plan);
    plan.op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_ROOT;
    plan.root = rel;
    save_plan(&plan);
  }
  fx_close(&f);
}

TEST(values_as_inline_of_structs) {
  EXPECT_OK("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(x, y)", "range:{start:0 end:1 step:1}",
            "function_name:\"inline\"", "function_name:\"named_struct\"", "string:\"b\"", "integer:2");
}

/* ---- project, filter, expressions ---- */

TEST(project_filter_and_operators) {
  EXPECT_OK("SELECT id + 1 AS nxt, customer || '!' AS c FROM orders WHERE customer LIKE 'a%' AND id <> 3",
            "filter:{input:", "function_name:\"like\"", "function_name:\"not\"", "function_name:\"==\"",
            "function_name:\"concat\"", "function_name:\"+\"", "name:[\"nxt\"]", "name:[\"c\"]");
}

TEST(integer_division_and_modulo_are_null_on_zero) {
  EXPECT_OK("SELECT id / 2 AS q, id % 0 AS r, amount / 3 AS d FROM orders", "function_name:\"div\"",
            "function_name:\"if\"", "function_name:\"%\"", "function_name:\"try_divide\"");
}

TEST(literals_of_every_kind) {
  EXPECT_OK("SELECT 12.50 AS d, DATE '2024-01-02' AS dt, TIMESTAMP '2024-01-02 03:04:05.5' AS t,"
            " INTERVAL '90' SECOND AS i, TRUE AS b, CAST(NULL AS STRING) AS n, 'it''s' AS s,"
            " ARRAY[1, 2] AS a, 10000000000 AS big FROM orders",
            "decimal:{value:\"12.50\" precision:4 scale:2}", "date:19724",
            "timestamp_ntz:1704164645500000", "day_time_interval:90000000", "boolean:true",
            "string:\"it's\"", "function_name:\"array\"", "long:10000000000");
}

TEST(case_cast_and_field_access) {
  EXPECT_OK("SELECT CASE WHEN id > 1 THEN 'big' ELSE 'small' END AS sz, CAST(id AS STRING) AS s,"
            " TRY_CAST(customer AS INT) AS n, addr.city AS city, tags[1] AS t1, attrs['x'] AS ax FROM orders",
            "function_name:\"when\"", "cast:{expr:", "type:{string:{}}", "eval_mode:EVAL_MODE_TRY",
            "unresolved_extract_value:{child:{unresolved_attribute:{unparsed_identifier:\"_c0_6\"}} "
            "extraction:{literal:{string:\"city\"}}}",
            "function_name:\"try_element_at\"");
}

TEST(rewrites_that_keep_the_embedded_answer) {
  EXPECT_OK("SELECT INITCAP(customer) AS a, CAST(customer AS VARCHAR(3)) AS b, LPAD(customer, 4) AS c,"
            " id % 3 AS d FROM orders",
            "function_name:\"initcap\"", "function_name:\"regexp_replace\"",
            "function_name:\"left\" arguments:[{cast:", "{literal:{integer:3}}", "function_name:\"lpad\"");
}

TEST(functions_mapped_with_semantics_kept) {
  EXPECT_OK("SELECT SUBSTRING(customer, 2, 3) AS a, CHAR_LENGTH(customer) AS b,"
            " REGEXP_EXTRACT(customer, 'a(.)', 1) AS c, SPLIT_INDEX(customer, '.', 0) AS d,"
            " GREATEST(id, 3) AS e, DATE_FORMAT(ts, 'yyyy-MM') AS f, EXTRACT(HOUR FROM ts) AS g,"
            " TIMESTAMPADD(HOUR, 2, ts) AS h, TIMESTAMPDIFF(DAY, ts, ts) AS i, FLOOR(ts TO HOUR) AS j,"
            " COALESCE(customer, 'x') AS k, LTRIM(customer, 'x') AS l FROM orders",
            "function_name:\"substring\"", "function_name:\"char_length\"", "function_name:\"regexp_extract\"",
            "function_name:\"rlike\"", "string:\"\\.\"", "function_name:\"try_element_at\"",
            "function_name:\"greatest\"", "function_name:\"isnull\"", "function_name:\"date_format\"",
            "function_name:\"hour\"", "day_time_interval:3600000000", "function_name:\"timestampdiff\"",
            "function_name:\"date_trunc\"", "function_name:\"coalesce\"", "function_name:\"ltrim\"");
}

TEST(flink_string_hash_math_functions_mapped_to_their_spark_namesakes) {
  EXPECT_OK("SELECT REGEXP_EXTRACT_ALL(customer, 'a(.)') AS a, REGEXP_COUNT(customer, 'a') AS b,"
            " REGEXP_INSTR(customer, 'a') AS c, REGEXP_SUBSTR(customer, 'a.') AS d,"
            " OVERLAY(customer PLACING 'x' FROM 2 FOR 1) AS e, TRANSLATE(customer, 'ab', 'c') AS f,"
            " ELT(2, customer, 'y') AS g, UNHEX('41') AS h, BIN(id) AS i, SHA512(customer) AS j,"
            " SHA2(customer, 384) AS k, SINH(1.0) AS l, COT(1.0) AS m, E() AS n, RAND_INTEGER(5) AS o FROM orders",
            "function_name:\"regexp_extract_all\"", "function_name:\"regexp_count\"",
            "function_name:\"regexp_instr\"", "function_name:\"regexp_substr\"", "function_name:\"overlay\"",
            "function_name:\"translate\"", "function_name:\"elt\"", "function_name:\"unhex\"",
            "function_name:\"bin\"", "function_name:\"sha2\"", "{literal:{integer:512}}",
            "function_name:\"sinh\"", "function_name:\"cot\"", "function_name:\"e\"",
            "function_name:\"floor\" arguments:[{unresolved_function:{function_name:\"*\" "
            "arguments:[{unresolved_function:{function_name:\"rand\"");
  /* TYPEOF and CURRENT_DATABASE are literals once bound */
  EXPECT_OK("SELECT TYPEOF(id) AS t, CURRENT_DATABASE() AS d FROM orders", "string:\"BIGINT\"",
            "string:\"default_database\"");
  EXPECT_REFUSED("SELECT id\nFROM orders WHERE IS_DIGIT(customer)", 2, 19, "Spark has no IS_DIGIT");
}

/* ---- aggregate ---- */

TEST(aggregate_with_distinct_and_filter) {
  EXPECT_OK("SELECT customer, COUNT(*) AS n, COUNT(DISTINCT id) AS d, SUM(amount) FILTER (WHERE id > 1) AS s"
            " FROM orders GROUP BY customer",
            "aggregate:{input:", "group_type:GROUP_TYPE_GROUPBY",
            "grouping_expressions:[{alias:{expr:{unresolved_attribute:{unparsed_identifier:\"_c0_1\"}}",
            "function_name:\"count\" arguments:[{literal:{integer:1}}]", "is_distinct:true",
            "function_name:\"sum\" arguments:[{unresolved_function:{function_name:\"when\"",
            "name:[\"n\"]");
}

TEST(first_value_filter_refused) {
  EXPECT_REFUSED("SELECT FIRST_VALUE(id) FILTER (WHERE id > 1) FROM orders", 1, 38, "does not skip NULLs");
}

/* ---- joins ---- */

TEST(join_kinds_and_duplicate_user_names) {
  EXPECT_OK("SELECT o.id, p.id, p.name FROM orders o LEFT JOIN people p ON o.id = p.id",
            "join:{left:", "join_type:JOIN_TYPE_LEFT_OUTER",
            "join_condition:{unresolved_function:{function_name:\"==\" arguments:[{unresolved_attribute:"
            "{unparsed_identifier:\"_c0_0\"}} {unresolved_attribute:{unparsed_identifier:\"_c",
            "name:[\"id\"]}} {alias:{expr:{unresolved_attribute:{unparsed_identifier:\"_c2_1\"}} name:[\"id\"]}");
  EXPECT_OK("SELECT o.id FROM orders o FULL JOIN people p ON o.id = p.id", "JOIN_TYPE_FULL_OUTER");
  EXPECT_OK("SELECT o.id FROM orders o, people p", "join:{");
  EXPECT_OK("SELECT id FROM orders WHERE id IN (SELECT id FROM people)", "JOIN_TYPE_LEFT_SEMI");
}

/* ---- set operations, sort, limit, distinct ---- */

TEST(union_of_three_and_set_operations) {
  EXPECT_OK("SELECT id FROM orders UNION ALL SELECT id FROM people UNION ALL SELECT k FROM mem",
            "set_op:{left_input:{set_op:{", "set_op_type:SET_OP_TYPE_UNION is_all:true by_name:false");
  EXPECT_OK("SELECT id FROM orders INTERSECT SELECT id FROM people", "SET_OP_TYPE_INTERSECT is_all:false");
  EXPECT_OK("SELECT id FROM orders EXCEPT SELECT id FROM people", "SET_OP_TYPE_EXCEPT");
}

TEST(sort_limit_offset_distinct) {
  EXPECT_OK("SELECT DISTINCT customer FROM orders ORDER BY customer DESC LIMIT 5 OFFSET 2",
            "limit:{input:{offset:{input:{sort:{", "offset:2}}", "limit:5}",
            "direction:SORT_DIRECTION_DESCENDING null_ordering:SORT_NULLS_LAST", "is_global:true",
            "deduplicate:{", "all_columns_as_keys:true");
}

/* ---- windows ---- */

TEST(tumble_window_aggregation_groups_by_window) {
  EXPECT_OK("SELECT window_start, window_end, SUM(amount) AS total FROM TABLE(TUMBLE(TABLE orders,"
            " DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end",
            "with_watermark:{", "delay_threshold:\"5 seconds\"", "function_name:\"window\"",
            "{literal:{string:\"10 seconds\"}} {literal:{string:\"10 seconds\"}} {literal:{string:\"0 seconds\"}}",
            "extraction:{literal:{string:\"start\"}}", "name:[\"window_start\"]");
}

TEST(hop_window_and_window_time) {
  EXPECT_OK("SELECT window_start, window_time, COUNT(*) AS n FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts),"
            " INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end, window_time",
            "{literal:{string:\"10 seconds\"}} {literal:{string:\"5 seconds\"}}",
            "function_name:\"window_time\"");
}

TEST(session_window_in_the_group_by) {
  EXPECT_OK("SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION(TABLE orders,"
            " DESCRIPTOR(ts), INTERVAL '30' SECOND)) GROUP BY window_start, window_end",
            "grouping_expressions:[{alias:{expr:{unresolved_function:{function_name:\"session_window\"",
            "{literal:{string:\"30 seconds\"}}");
}

TEST(window_offset_and_the_three_spellings) {
  /* an offset is window()'s start argument, modulo the slide */
  EXPECT_OK("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts),"
            " INTERVAL '1' MINUTE, INTERVAL '15' SECOND)) GROUP BY window_start, window_end",
            "{literal:{string:\"60 seconds\"}} {literal:{string:\"60 seconds\"}} {literal:{string:\"15 seconds\"}}");
  EXPECT_OK("SELECT window_start, COUNT(*) AS n FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts),"
            " INTERVAL '10' SECOND, INTERVAL '1' MINUTE, INTERVAL '25' SECOND)) GROUP BY window_start, window_end",
            "{literal:{string:\"60 seconds\"}} {literal:{string:\"10 seconds\"}} {literal:{string:\"5 seconds\"}}");
  /* Flink's legacy group windows */
  EXPECT_OK("SELECT TUMBLE_START(ts, INTERVAL '10' SECOND) AS ws, COUNT(*) AS n FROM orders\n"
            "GROUP BY TUMBLE(ts, INTERVAL '10' SECOND)",
            "function_name:\"window\"", "{literal:{string:\"10 seconds\"}} {literal:{string:\"10 seconds\"}}",
            "extraction:{literal:{string:\"start\"}}");
  EXPECT_OK("SELECT HOP_END(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) AS we, COUNT(*) AS n FROM orders\n"
            "GROUP BY HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
            "{literal:{string:\"10 seconds\"}} {literal:{string:\"5 seconds\"}}",
            "extraction:{literal:{string:\"end\"}}");
  EXPECT_OK("SELECT SESSION_START(ts, INTERVAL '30' SECOND) AS ws, COUNT(*) AS n FROM orders\n"
            "GROUP BY SESSION(ts, INTERVAL '30' SECOND)",
            "function_name:\"session_window\"", "{literal:{string:\"30 seconds\"}}");
  /* Spark's own spelling, start time included */
  EXPECT_OK("SELECT window.start AS ws, COUNT(*) AS n FROM orders\n"
            "GROUP BY window(ts, '1 minute', '30 seconds', '10 seconds')",
            "{literal:{string:\"60 seconds\"}} {literal:{string:\"30 seconds\"}} {literal:{string:\"10 seconds\"}}");
  EXPECT_OK("SELECT session_window.end AS we, COUNT(*) AS n FROM orders\n"
            "GROUP BY session_window(ts, CASE WHEN amount > 10 THEN '1 minute' ELSE '10 seconds' END)",
            "function_name:\"session_window\"", "function_name:\"when\"");
}

TEST(streaming_window_time_keeps_spark_event_time) {
  /* window_time leaves the aggregation as window_time(window), uncast:
     a cast would drop the event-time marker a chained window needs */
  EXPECT_OK("SET 'execution.runtime-mode' = 'streaming';\n"
            "SELECT window_time, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts),"
            " INTERVAL '10' SECOND)) GROUP BY window_start, window_end, window_time",
            "{alias:{expr:{unresolved_function:{function_name:\"window_time\" arguments:[{unresolved_attribute:");
  /* in batch mode it is cast to dipper's type as every aggregate output is */
  EXPECT_OK("SELECT window_time, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts),"
            " INTERVAL '10' SECOND)) GROUP BY window_start, window_end, window_time",
            "{alias:{expr:{cast:{expr:{unresolved_function:{function_name:\"window_time\"");
}

/* How often needle occurs in hay. */
static int occurrences(const char *hay, const char *needle) {
  int n = 0;
  for (const char *h = hay ? strstr(hay, needle) : NULL; h; h = strstr(h + 1, needle)) n++;
  return n;
}

/* Translate sql; the number of window() calls, and whether the GROUP BY
** is window(..) itself (the expression, not a column that holds it). */
static void window_shape(const char *sql, int *nwindow, bool *grouped_directly) {
  fx f;
  fx_run(&f, sql);
  CHECK_EQ(f.rc, DIPPER_OK);
  *nwindow = occurrences(f.dump, "function_name:\"window\"");
  const char *g = f.dump ? strstr(f.dump, "grouping_expressions:[") : NULL;
  const char *a = g ? strstr(g, " aggregate_expressions:[") : NULL;
  const char *w = g ? strstr(g, "{unresolved_function:{function_name:\"window\"") : NULL;
  *grouped_directly = w && a && w < a;
  if (getenv("DIPPER_TRANSLATE_SHOW")) fprintf(stderr, "%s\n=> %s\n\n", sql, f.dump);
  fx_close(&f);
}

TEST(window_aggregation_groups_by_the_window_expression) {
  /* the bounds only as group keys: GROUP BY window(ts, ..) itself, one
     window() call, no Project of the window struct under the aggregation
     (Spark plans window()'s Expand right under the partial aggregate, as
     for a hand-written job) */
  int nw = 0;
  bool direct = false;
  window_shape("SET 'execution.runtime-mode' = 'streaming';\n"
               "SELECT customer, window_start, window_end, SUM(amount) AS total FROM TABLE(HOP(TABLE orders,"
               " DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE)) GROUP BY customer, window_start, window_end",
               &nw, &direct);
  CHECK_EQ(nw, 1);
  CHECK(direct);
  EXPECT_OK("SET 'execution.runtime-mode' = 'streaming';\n"
            "SELECT customer, window_start, window_end, SUM(amount) AS total FROM TABLE(HOP(TABLE orders,"
            " DESCRIPTOR(ts), INTERVAL '30' SECOND, INTERVAL '1' MINUTE)) GROUP BY customer, window_start, window_end",
            /* straight over the watermark */
            "aggregate:{input:{with_watermark:{",
            "{alias:{expr:{unresolved_function:{function_name:\"window\" arguments:[{unresolved_attribute:"
            "{unparsed_identifier:\"_c0_3\"}} {literal:{string:\"60 seconds\"}} {literal:{string:\"30 seconds\"}} "
            "{literal:{string:\"0 seconds\"}}]}} name:[\"_c2_4\"]}}",
            "extraction:{literal:{string:\"start\"}}");
  /* batch, the legacy and Spark's spellings too */
  window_shape("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts),"
               " INTERVAL '10' SECOND)) GROUP BY window_start, window_end", &nw, &direct);
  CHECK_EQ(nw, 1);
  CHECK(direct);
  window_shape("SELECT TUMBLE_END(ts, INTERVAL '10' SECOND) AS we, COUNT(*) AS n FROM orders\n"
               "GROUP BY TUMBLE(ts, INTERVAL '10' SECOND)", &nw, &direct);
  CHECK_EQ(nw, 1);
  CHECK(direct);
  window_shape("SELECT window.start AS ws, COUNT(*) AS n FROM orders GROUP BY window(ts, '1 minute')", &nw, &direct);
  CHECK_EQ(nw, 1);
  CHECK(direct);
  /* through a projection: the time column rides along as a hidden column */
  window_shape("SELECT ws, SUM(amount) AS total FROM (SELECT window_start AS ws, window_end AS we, amount FROM"
               " TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))) GROUP BY ws, we",
               &nw, &direct);
  CHECK_EQ(nw, 1);
  CHECK(direct);
  EXPECT_OK("SELECT ws, SUM(amount) AS total FROM (SELECT window_start AS ws, window_end AS we, amount FROM"
            " TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))) GROUP BY ws, we",
            "expressions:[{alias:{expr:{unresolved_attribute:{unparsed_identifier:\"_c0_2\"}} name:[\"_c2_2\"]}} "
            "{unresolved_attribute:{unparsed_identifier:\"_c0_3\"}}]",
            "arguments:[{unresolved_attribute:{unparsed_identifier:\"_c0_3\"}} {literal:{string:\"10 seconds\"}}");
}

TEST(window_bounds_read_elsewhere_keep_the_window_column) {
  /* a bound read by a filter, an aggregate's argument or a computed key
     before the aggregation: the window struct is a column (one window()
     call), its bounds columns, and the GROUP BY takes the struct column */
  static const char *const sqls[] = {
      "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))\n"
      "WHERE window_start >= TIMESTAMP '2024-01-01 00:00:00' GROUP BY window_start, window_end",
      "SELECT window_start, window_end, MAX(window_time) AS t FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts),"
      " INTERVAL '10' SECOND)) GROUP BY window_start, window_end",
      "SELECT window_start, window_end, h, COUNT(*) AS n FROM (SELECT window_start, window_end,"
      " HOUR(window_start) AS h FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND)))"
      " GROUP BY window_start, window_end, h",
  };
  for (size_t i = 0; i < sizeof sqls / sizeof sqls[0]; i++) {
    int nw = 0;
    bool direct = true;
    window_shape(sqls[i], &nw, &direct);
    CHECK_EQ(nw, 1);
    CHECK(!direct);
  }
  /* a window read by a Top-N, no aggregation: the bounds are columns */
  EXPECT_OK("SELECT * FROM (SELECT id, window_start, ROW_NUMBER() OVER (PARTITION BY window_start, window_end"
            " ORDER BY amount DESC) AS rn FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND)))"
            " WHERE rn <= 2",
            "function_name:\"window\"", "extraction:{literal:{string:\"start\"}}", "function_name:\"row_number\"");
}

TEST(streaming_deduplication) {
  /* ordered by the event time: forgotten as the watermark passes, Spark's
     dropDuplicatesWithinWatermark */
  EXPECT_OK("SET 'execution.runtime-mode' = 'streaming';\n"
            "SELECT id, customer FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY customer ORDER BY ts)"
            " AS rn FROM orders) WHERE rn = 1",
            "deduplicate:{", "column_names:[\"_c0_1\"] within_watermark:true}");
  /* the event time among the keys: Spark's plain Deduplicate cleans by it */
  EXPECT_OK("SET 'execution.runtime-mode' = 'streaming';\n"
            "SELECT id, customer FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY customer, ts ORDER BY ts)"
            " AS rn FROM orders) WHERE rn = 1",
            "column_names:[\"_c0_1\" \"_c0_3\"]}");
  /* DISTINCT: every column a key */
  EXPECT_OK("SET 'execution.runtime-mode' = 'streaming';\nSELECT DISTINCT customer, ts FROM orders",
            "deduplicate:{", "all_columns_as_keys:true");
}

TEST(streaming_file_options) {
  const char *sql = "CREATE TABLE few (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '/tmp/few',\n"
                    "  'format' = 'json', 'source.max-files-per-trigger' = '2', 'source.monitor-interval' = '1 s');\n"
                    "SET 'execution.runtime-mode' = 'streaming';\nSELECT id FROM few";
  EXPECT_OK(sql, "{key:\"maxFilesPerTrigger\" value:\"2\"}", "is_streaming:true");
}

/* A filesystem table without 'source.monitor-interval' is bounded in
** streaming mode (Flink's rule): joined with a stream, Spark reads it as a
** static DataFrame (a stream-static join), the watched one as a stream. */
TEST(bounded_files_joined_with_a_stream_are_a_static_read) {
  EXPECT_OK("SET 'execution.runtime-mode' = 'streaming';\n"
            "SELECT o.id FROM orders o JOIN rel r ON o.id = r.id",
            "plans\"]} is_streaming:true}", "rel.json\"]}}", "join_type:JOIN_TYPE_INNER");
}

TEST(cumulate_as_exploded_step_ends) {
  /* batch: one row per window from window() of the max size and of the step */
  EXPECT_OK("SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(\n  CUMULATE(TABLE orders, DESCRIPTOR(ts),"
            " INTERVAL '1' MINUTE, INTERVAL '1' HOUR))\nGROUP BY window_start, window_end",
            "{literal:{string:\"3600 seconds\"}} {literal:{string:\"3600 seconds\"}} {literal:{string:\"0 seconds\"}}",
            "{literal:{string:\"60 seconds\"}} {literal:{string:\"60 seconds\"}} {literal:{string:\"0 seconds\"}}",
            "function_name:\"explode\" arguments:[{unresolved_function:{function_name:\"sequence\"");
  /* a stream: refused, with what to do instead */
  EXPECT_REFUSED("SET 'execution.runtime-mode' = 'streaming';\n"
                 "SELECT window_start, COUNT(*) FROM TABLE(\n  CUMULATE(TABLE orders, DESCRIPTOR(ts),"
                 " INTERVAL '1' MINUTE, INTERVAL '1' HOUR))\nGROUP BY window_start, window_end",
                 2, 36, "Spark has no CUMULATE windows on streams; aggregate per TUMBLE window of the step "
                        "and add the steps up in the consumer");
}

TEST(temporal_join_refused) {
  EXPECT_REFUSED("CREATE TABLE rates (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts,\n"
                 "  PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'memory');\n"
                 "SELECT id, v FROM orders JOIN rates FOR SYSTEM_TIME AS OF orders.ts ON orders.id = rates.k",
                 3, 19, "Spark has no temporal join (FOR SYSTEM_TIME AS OF)");
}

/* The as-of join as Spark's AsOfJoin: the operator's direction and exact
** matches, the keys as the join expression, the tolerance as an interval. */
TEST(asof_join_as_spark_as_of_join) {
#define QUOTES "CREATE TABLE quotes (k BIGINT, qt TIMESTAMP(3), px INT) WITH ('connector' = 'memory');\n"
  EXPECT_OK(QUOTES "SELECT o.id, q.px FROM orders o ASOF LEFT JOIN quotes q MATCH_CONDITION (o.ts >= q.qt)"
                   " ON o.id = q.k TOLERANCE INTERVAL '5' SECOND",
            "as_of_join:{left:", "left_as_of:{unresolved_attribute:{unparsed_identifier:\"_c",
            "right_as_of:{unresolved_attribute:", "join_expr:{unresolved_function:{function_name:\"==\"",
            "join_type:\"left\"", "tolerance:{literal:{day_time_interval:5000000}}",
            "allow_exact_matches:true", "direction:\"backward\"");
  /* without exact matches Spark's tolerance is strict: one microsecond more */
  EXPECT_OK(QUOTES "SELECT o.id FROM orders o ASOF JOIN quotes q ON o.ts > q.qt TOLERANCE INTERVAL '1' SECOND",
            "join_type:\"inner\"", "direction:\"backward\"",
            "tolerance:{literal:{day_time_interval:1000001}}");
  EXPECT_OK(QUOTES "SELECT o.id FROM orders o ASOF JOIN quotes q MATCH_CONDITION (o.ts <= q.qt)",
            "allow_exact_matches:true", "direction:\"forward\"");
  EXPECT_OK(QUOTES "SELECT o.id FROM orders o ASOF JOIN quotes q MATCH_CONDITION (q.qt > o.ts)",
            "direction:\"forward\"");
#undef QUOTES
}

TEST(over_with_rows_frame) {
  EXPECT_OK("SELECT id, SUM(amount) OVER (PARTITION BY customer ORDER BY ts ROWS BETWEEN 2 PRECEDING AND"
            " CURRENT ROW) AS s FROM orders",
            "window:{window_function:{unresolved_function:{function_name:\"sum\"",
            "frame_spec:{frame_type:FRAME_TYPE_ROW lower:{value:{literal:{integer:-2}}} upper:{current_row:true}}");
  EXPECT_OK("SELECT id, LAG(id, 1) OVER (PARTITION BY customer ORDER BY ts) AS prev FROM orders",
            "function_name:\"lag\"", "partition_spec:[");
}

TEST(topn_and_dedup_as_row_number) {
  EXPECT_OK("SELECT id, customer FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY customer ORDER BY amount DESC)"
            " AS rn FROM orders) WHERE rn <= 3",
            "function_name:\"row_number\"", "function_name:\"<=\"", "long:3");
  EXPECT_OK("SELECT id, customer FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts DESC)"
            " AS rn FROM orders) WHERE rn = 1",
            "function_name:\"row_number\"", "SORT_DIRECTION_DESCENDING");
}

TEST(unnest_as_explode) {
  EXPECT_OK("SELECT id, t FROM orders CROSS JOIN UNNEST(tags) AS x(t)", "function_name:\"explode\"");
  EXPECT_OK("SELECT id, t, n FROM orders CROSS JOIN UNNEST(tags) WITH ORDINALITY AS x(t, n)",
            "function_name:\"posexplode\"");
}

/* ---- subqueries ---- */

TEST(subqueries_through_with_relations) {
  /* the binder turns most subqueries into joins; these two stay expressions */
  EXPECT_OK("SELECT id FROM orders WHERE id > 5 OR id IN (SELECT id FROM people)",
            "with_relations:{root:{filter:", "references:[{common:{plan_id:1}",
            "subquery_expression:{plan_id:1 subquery_type:SUBQUERY_TYPE_IN in_subquery_values:[",
            /* NULL where SQL says so: the subquery's NULL probe, a second reference */
            "subquery_expression:{plan_id:2 subquery_type:SUBQUERY_TYPE_SCALAR}", "name:[\"_nulls\"]");
  /* correlated: the outer column by its unique internal name */
  EXPECT_OK("SELECT id, (SELECT MAX(p.id) FROM people p WHERE p.id < orders.id) AS m FROM orders",
            "subquery_type:SUBQUERY_TYPE_SCALAR",
            "function_name:\"<\" arguments:[{unresolved_attribute:{unparsed_identifier:\"_c2_0\"}} "
            "{unresolved_attribute:{unparsed_identifier:\"_c0_0\"}}");
}

/* ---- refusals ---- */

TEST(refusals_name_the_construct_and_the_alternative) {
  EXPECT_REFUSED("SELECT id\nFROM orders WHERE customer SIMILAR TO 'a%'", 2, 19,
                 "Spark has no SIMILAR TO; write RLIKE");
  fx f;
  fx_run(&f, "SELECT 1 FROM orders");
  const dp_type *t = dp_type_of(DP_T_TIME);
  dp_span sp = {0, 0, 3, 4};
  CHECK(dp_spark_type_ddl(&f.c, t, sp) == NULL);
  CHECK(f.d.count >= 1 && f.d.items[f.d.count - 1].span.line == 3);
  fx_close(&f);
}

TEST(check_reports_every_refusal) {
  const char *sql = "SELECT customer SIMILAR TO 'a' AS x, FIRST_VALUE(id) FILTER (WHERE id > 0) AS y\n"
                    "FROM orders GROUP BY customer";
  fx f;
  fx_run(&f, sql);
  CHECK_EQ(f.rc, DIPPER_UNSUPPORTED);
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, "<test>", sql, strlen(sql));
  CHECK_EQ(dp_spark_check(&f.prog->stmts[0].plan, a, &d), DIPPER_UNSUPPORTED);
  CHECK_EQ(d.count, 2);
  dp_arena_free(a);
  fx_close(&f);

  /* streaming: Structured Streaming's rules run too, and a construct both
     refuse is reported once */
  const char *st = "SET 'execution.runtime-mode' = 'streaming';\n"
                   "SELECT window_start, COUNT(*) AS n FROM TABLE(CUMULATE(TABLE orders, DESCRIPTOR(ts),"
                   " INTERVAL '1' MINUTE, INTERVAL '1' HOUR)) GROUP BY window_start, window_end";
  fx_run(&f, st);
  a = dp_arena_new(0);
  dp_diags_init(&d, a, "<test>", st, strlen(st));
  CHECK(dp_spark_check(&f.prog->stmts[f.prog->n - 1].plan, a, &d) != DIPPER_OK);
  CHECK_EQ(d.count, 1);
  if (d.count >= 1) CHECK_CONTAINS(d.items[0].message, "CUMULATE");
  dp_arena_free(a);
  fx_close(&f);
}

/* ---- types ---- */

TEST(type_ddl_table) {
  dp_arena *a = dp_arena_new(0);
  dp_spark_ctx c;
  memset(&c, 0, sizeof c);
  c.arena = a;
  dp_span sp = {0, 0, 0, 0};
  dp_field f[2] = {{"a", dp_type_of(DP_T_INT)}, {"b c", dp_type_array(a, dp_type_of(DP_T_STRING))}};
  CHECK_STR(dp_spark_type_ddl(&c, dp_type_row(a, 2, f), sp), "STRUCT<`a`: INT, `b c`: ARRAY<STRING>>");
  CHECK_STR(dp_spark_type_ddl(&c, dp_type_decimal(a, 12, 3), sp), "DECIMAL(12,3)");
  CHECK_STR(dp_spark_type_ddl(&c, dp_type_of(DP_T_TIMESTAMP_LTZ), sp), "TIMESTAMP");
  CHECK_STR(dp_spark_type_ddl(&c, dp_type_of(DP_T_TIMESTAMP), sp), "TIMESTAMP_NTZ");
  CHECK_STR(dp_spark_type_ddl(&c, dp_type_of(DP_T_BYTES), sp), "BINARY");
  CHECK_STR(dp_spark_type_ddl(&c, dp_type_map(a, dp_type_of(DP_T_STRING), dp_type_of(DP_T_BIGINT)), sp),
            "MAP<STRING, BIGINT>");
  CHECK_STR(dp_spark_type_ddl(&c, dp_type_of(DP_T_INTERVAL_DT), sp), "INTERVAL DAY TO SECOND");
  dp_arena_free(a);
}

/* ---- sinks ---- */

/* CREATE TABLE .. AS SELECT on Spark: the table in dipper's catalog, then the
** INSERT of its query — a batch write in batch mode. */
TEST(ctas_is_a_batch_write_operation) {
  EXPECT_OK("CREATE TABLE made WITH ('connector' = 'filesystem', 'path' = '/tmp/dipper-ctas', "
            "'format' = 'json') AS SELECT id, customer AS who FROM orders",
            "write_operation:{input:", "mode:SAVE_MODE_APPEND", "path:\"/tmp/dipper-ctas\"",
            "source:\"json\"");
}

TEST(insert_into_files_is_a_write_operation) {
  EXPECT_OK("INSERT INTO out_files SELECT id, customer FROM orders", "write_operation:{input:",
            "mode:SAVE_MODE_APPEND", "path:\"/tmp/dipper-out\"", "source:\"json\"",
            "{key:\"ignoreNullFields\" value:\"false\"}",
            "{key:\"timestampNTZFormat\" value:\"yyyy-MM-dd HH:mm:ss.SSS\"}");
  EXPECT_OK("INSERT INTO mem SELECT 1, customer FROM orders", "name:[\"k\"]", "name:[\"v\"]");
}

TEST(avro_files_read_and_written_by_spark_avro) {
  /* a directory of Avro container files: the avro data source with the DDL
     schema, in batch and as a streaming directory source */
  const char *ddl = "CREATE TABLE av (id BIGINT, name STRING, ts TIMESTAMP(3))\n"
                    "WITH ('connector' = 'filesystem', 'path' = '/tmp/dipper-avro-in', 'format' = 'avro',\n"
                    "  'source.monitor-interval' = '1 s');\n";
  char sql[1024];
  snprintf(sql, sizeof sql, "%sSELECT id, name FROM av WHERE id > 1", ddl);
  EXPECT_OK(sql, "read:{data_source:{format:\"avro\" schema:\"`id` BIGINT, `name` STRING, `ts` TIMESTAMP_NTZ\"",
            "paths:[\"/tmp/dipper-avro-in\"]");
  snprintf(sql, sizeof sql, "%sSET 'execution.runtime-mode' = 'streaming';\nSELECT id, name FROM av", ddl);
  EXPECT_OK(sql, "read:{data_source:{format:\"avro\"", "is_streaming:true");
  /* a batch INSERT writes avro; Flink's 'avro.codec' is Spark's compression */
  EXPECT_OK("CREATE TABLE av_out (id BIGINT, name STRING) WITH ('connector' = 'filesystem',\n"
            "  'path' = '/tmp/dipper-avro-out', 'format' = 'avro', 'avro.codec' = 'null');\n"
            "INSERT INTO av_out SELECT id, customer FROM orders",
            "write_operation:{input:", "source:\"avro\"", "path:\"/tmp/dipper-avro-out\"",
            "options:[{key:\"compression\" value:\"uncompressed\"}]");
  EXPECT_OK("CREATE TABLE av_out (id BIGINT, name STRING) WITH ('connector' = 'filesystem',\n"
            "  'path' = '/tmp/dipper-avro-out', 'format' = 'avro', 'avro.codec' = 'deflate');\n"
            "INSERT INTO av_out SELECT id, customer FROM orders",
            "{key:\"compression\" value:\"deflate\"}");
}

TEST(batch_insert_into_kafka_is_a_write_operation) {
  const char *sql = "CREATE TABLE topic_out (id BIGINT, customer STRING, PRIMARY KEY (id) NOT ENFORCED)\n"
                    "WITH ('connector' = 'kafka', 'topic' = 'out', 'format' = 'json',\n"
                    "  'properties.bootstrap.servers' = '127.0.0.1:9092');\n"
                    "INSERT INTO topic_out SELECT id, customer FROM orders";
  EXPECT_OK(sql, "write_operation:{input:", "source:\"kafka\"", "mode:SAVE_MODE_APPEND",
            "value:\"out\"", "function_name:\"to_json\"");
}

/* ---- Java functions (spark/udf.h) ---- */

static const char *const java_fn =
    "CREATE TEMPORARY FUNCTION count_char(s STRING, c STRING) RETURNS INT\n"
    "  AS 'com.example.CountChar' USING JAR '" DIPPER_SOURCE_DIR "/tests/spark/plans/orders.json';\n";

TEST(java_function_call_is_an_unresolved_function_of_its_name) {
  fx_engine = "sc://127.0.0.1:1";
  char sql[1024];
  snprintf(sql, sizeof sql, "%sSELECT id, count_char(customer, 'a') AS n FROM orders", java_fn);
  EXPECT_OK(sql,
            "{alias:{expr:{unresolved_function:{function_name:\"count_char\" arguments:["
            "{unresolved_attribute:{unparsed_identifier:\"_c0_1\"}} {literal:{string:\"a\"}}]}} "
            "name:[\"_c1_1\"]}}");
  /* an argument of another type is cast to the declared parameter type first */
  snprintf(sql, sizeof sql, "%sSELECT count_char(customer, CAST(id AS STRING)) FROM orders", java_fn);
  EXPECT_OK(sql, "unresolved_function:{function_name:\"count_char\"");
  fx_engine = "embedded";
}

TEST(java_function_registration_and_its_jar_as_messages) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, "sc://127.0.0.1:1"), DIPPER_OK);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, java_fn, (size_t)-1, "j.sql", &prog), DIPPER_OK);
  dipper_program_free(prog);
  const dp_udf_def *f = dp_catalog_function(db->catalog, "count_char");
  CHECK(f != NULL && f->kind == DP_UDF_JAVA);
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, "<test>", NULL, 0);
  dp_spark_ctx c = {a, &d, NULL, NULL};
  Spark__Connect__Plan *plan = NULL;
  if (f) CHECK_EQ(dp_spark_java_register_plan(&c, f, &plan), DIPPER_OK);
  char *text = plan ? dump(&plan->base) : NULL;
  CHECK_STR(text, "{command:{register_function:{function_name:\"count_char\" deterministic:true "
                  "java_udf:{class_name:\"com.example.CountChar\" output_type:{integer:{}}}}}}");
  free(text);
  /* the jar: one artifact in one chunk, named as Spark files jars, with its CRC-32 */
  CHECK_STR(dp_spark_jar_artifact(a, "/some/where/udfs.jar"), "jars/udfs.jar");
  CHECK_EQ(dp_spark_crc32("123456789", 9), 0xCBF43926u); /* the standard check value */
  Spark__Connect__AddArtifactsRequest__Batch *b = dp_spark_artifact_batch(a, "jars/udfs.jar", "PK\3\4", 4);
  text = b ? dump(&b->base) : NULL;
  char want[256];
  snprintf(want, sizeof want, "{artifacts:[{name:\"jars/udfs.jar\" data:{data:<4 bytes> crc:%u}}]}",
           dp_spark_crc32("PK\3\4", 4));
  CHECK_STR(text, want);
  free(text);
  dp_arena_free(a);
  /* the embedded engine refuses a call, with the reason */
  dipper *emb = NULL;
  CHECK_EQ(dipper_open(&emb, NULL), DIPPER_OK);
  char sql[1024];
  snprintf(sql, sizeof sql, "%sSELECT count_char('abc', 'a');", java_fn);
  CHECK_EQ(dipper_compile(emb, sql, (size_t)-1, "j.sql", &prog), DIPPER_UNSUPPORTED);
  CHECK_CONTAINS(dipper_errmsg(emb), "which only Spark can run");
  dipper_close(emb);
  dipper_close(db);
}

/* ---- kinesis: refused unless the user installed awslabs' connector ---- */

#define KIN_TABLE(name, more)                                                                 \
  "CREATE TABLE " name " (id BIGINT, k STRING, arrived TIMESTAMP_LTZ(3) METADATA FROM "       \
  "'timestamp' VIRTUAL) WITH ('connector' = 'kinesis', 'stream' = 'clicks', 'aws.region' = "  \
  "'eu-west-1', 'format' = 'json', 'aws.credentials.provider' = 'BASIC', "                    \
  "'aws.credentials.basic.accesskeyid' = 'AK', 'aws.credentials.basic.secretkey' = 'SK'" more \
  ");\n"

TEST(kinesis_on_spark_is_refused_with_the_reason) {
  EXPECT_REFUSED(KIN_TABLE("kin", "") "SET 'execution.runtime-mode' = 'streaming';\nSELECT id FROM kin",
                 1, 100, "no Structured Streaming connector for Kinesis on Maven Central");
  EXPECT_REFUSED(KIN_TABLE("kin", "") "SET 'execution.runtime-mode' = 'streaming';\nSELECT id FROM kin",
                 1, 100, "'dipper.spark.kinesis-format' = 'aws-kinesis'");
}

TEST(kinesis_on_spark_reads_through_aws_kinesis_when_installed) {
  EXPECT_OK(KIN_TABLE("kin", ", 'dipper.spark.kinesis-format' = 'aws-kinesis', "
                             "'scan.stream.initpos' = 'LATEST', 'aws.endpoint' = 'http://h:4568'")
            "SET 'execution.runtime-mode' = 'streaming';\nSELECT id, arrived FROM kin",
            "format:\"aws-kinesis\"", "key:\"kinesis.streamName\" value:\"clicks\"",
            "key:\"kinesis.region\" value:\"eu-west-1\"",
            "key:\"kinesis.endpointUrl\" value:\"http://h:4568\"",
            "key:\"kinesis.startingPosition\" value:\"LATEST\"",
            "key:\"kinesis.awsAccessKeyId\" value:\"AK\"", "key:\"kinesis.awsSecretKey\" value:\"SK\"",
            "function_name:\"from_json\"", "unparsed_identifier:\"data\"",
            "unparsed_identifier:\"approximateArrivalTimestamp\"");
  /* the default start, and the endpoint from the region */
  EXPECT_OK(KIN_TABLE("kin", ", 'dipper.spark.kinesis-format' = 'aws-kinesis'")
            "SET 'execution.runtime-mode' = 'streaming';\nSELECT id FROM kin",
            "key:\"kinesis.startingPosition\" value:\"TRIM_HORIZON\"",
            "value:\"https://kinesis.eu-west-1.amazonaws.com\"");
  /* no shard id in the connector's record */
  EXPECT_REFUSED("CREATE TABLE ks (id BIGINT, sh STRING METADATA FROM 'shard-id' VIRTUAL) WITH ("
                 "'connector' = 'kinesis', 'stream' = 's', 'aws.region' = 'r', 'format' = 'json', "
                 "'dipper.spark.kinesis-format' = 'aws-kinesis');\n"
                 "SET 'execution.runtime-mode' = 'streaming';\nSELECT id, sh FROM ks",
                 1, 29, "gives timestamp, sequence-number and partition-key, no shard-id");
}

/* The streaming write of the last INSERT of sql, dumped (NULL: refused). */
static char *stream_write(const char *sql, int *rc, char *msg, size_t cap) {
  dipper *db = NULL;
  dipper_program *p = NULL;
  char *out = NULL;
  msg[0] = '\0';
  *rc = dipper_open(&db, "embedded");
  if (*rc == DIPPER_OK) *rc = dipper_compile(db, sql, (size_t)-1, "<test>", &p);
  if (*rc == DIPPER_OK) {
    dp_arena *a = dp_arena_new(0);
    dp_diags d;
    dp_diags_init(&d, a, "<test>", sql, strlen(sql));
    dp_spark_ctx c = {a, &d, NULL, NULL};
    dp_spark_stream_opts o;
    memset(&o, 0, sizeof o);
    o.checkpoint_dir = "/tmp/dipper-ck";
    dp_query_plan *q = &p->stmts[p->n - 1].plan;
    Spark__Connect__Plan *plan = NULL;
    *rc = dp_spark_stream_start_plan(&c, q, q->roots[0], &o, &plan);
    if (*rc == DIPPER_OK) out = dump(&plan->base);
    if (d.count) snprintf(msg, cap, "%s", d.items[0].message);
    dp_arena_free(a);
  }
  dipper_program_free(p);
  dipper_close(db);
  return out;
}

TEST(kinesis_streaming_write_on_spark) {
  char msg[1024];
  int rc = 0;
  char *d = stream_write(KIN_TABLE("kin", ", 'dipper.spark.kinesis-format' = 'aws-kinesis'")
                         "CREATE TABLE kout (id BIGINT, k STRING) PARTITIONED BY (k) WITH ("
                         "'connector' = 'kinesis', 'stream' = 'out', 'aws.region' = 'eu-west-1', "
                         "'format' = 'json', 'dipper.spark.kinesis-format' = 'aws-kinesis');\n"
                         "INSERT INTO kout SELECT id, k FROM kin",
                         &rc, msg, sizeof msg);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) fprintf(stderr, "  refusal: %s\n", msg);
  CHECK_CONTAINS(d ? d : "", "format:\"aws-kinesis\"");
  CHECK_CONTAINS(d ? d : "", "key:\"kinesis.streamName\" value:\"out\"");
  CHECK_CONTAINS(d ? d : "", "function_name:\"concat_ws\"");
  CHECK_CONTAINS(d ? d : "", "name:[\"partitionKey\"]");
  CHECK_CONTAINS(d ? d : "", "name:[\"data\"]");
  CHECK_CONTAINS(d ? d : "", "function_name:\"to_json\"");
  CHECK_CONTAINS(d ? d : "", "key:\"checkpointLocation\" value:\"/tmp/dipper-ck/kout\"");
  if (getenv("DIPPER_TRANSLATE_SHOW")) fprintf(stderr, "=> %s\n", d ? d : "");
  free(d);
  /* without the connector: refused */
  d = stream_write(KIN_TABLE("kin", ", 'dipper.spark.kinesis-format' = 'aws-kinesis'")
                   "CREATE TABLE kout (id BIGINT, k STRING) WITH ("
                   "'connector' = 'kinesis', 'stream' = 'out', 'aws.region' = 'eu-west-1', "
                   "'format' = 'json');\n"
                   "INSERT INTO kout SELECT id, k FROM kin",
                   &rc, msg, sizeof msg);
  CHECK_EQ(rc, DIPPER_UNSUPPORTED);
  CHECK_CONTAINS(msg, "no Structured Streaming connector for Kinesis on Maven Central");
  free(d);
}

int main(void) { return RUN_TESTS(); }
