/*
** client_test.c — the Spark Connect session (src/spark/client.c) against the
** real server of the spark_server fixture (127.0.0.1:${DIPPER_SPARK_PORT:-15002}):
** open, config, execution, Arrow results, a Spark error with its class, a
** result stream cut in the middle and resumed, and a server that is not there.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "sc_build.h"
#include "spark/client.h"
#include "spark/uuid.h"
#include "test.h"

static const char *server_uri(void) {
  static char uri[64];
  const char *port = getenv("DIPPER_SPARK_PORT");
  snprintf(uri, sizeof uri, "sc://127.0.0.1:%s", port && port[0] ? port : "15002");
  return uri;
}

/* Every test opens its own session; a failure to open fails the test. */
static dp_sc *open_session(void) {
  dp_sc *s = NULL;
  dp_sc_error e;
  dp_sc_error_init(&e);
  int rc = dp_sc_open(&s, server_uri(), &e);
  if (rc != DIPPER_OK) fprintf(stderr, "dp_sc_open(%s): %s\n", server_uri(), dp_buf_cstr(&e.message));
  CHECK_EQ(rc, DIPPER_OK);
  dp_sc_error_free(&e);
  return s;
}

static Spark__Connect__Plan *root_plan(dp_arena *a, Spark__Connect__Relation *rel) {
  Spark__Connect__Plan *p = dp_arena_alloc(a, sizeof *p);
  spark__connect__plan__init(p);
  p->op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_ROOT;
  p->root = rel;
  return p;
}

typedef struct counts {
  int64_t rows;
  int responses, batches, complete;
  int stop_after; /* > 0: return DIPPER_INTERRUPTED after this many responses */
} counts;

static int count_fn(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  counts *c = user;
  c->responses++;
  if (r->response_type_case == SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH) {
    c->batches++;
    c->rows += r->arrow_batch->row_count;
  }
  if (r->response_type_case == SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_RESULT_COMPLETE)
    c->complete++;
  if (c->stop_after > 0 && c->responses >= c->stop_after) return DIPPER_INTERRUPTED;
  return DIPPER_OK;
}

TEST(open_reads_version_and_names_session) {
  dp_sc *s = open_session();
  if (!s) return;
  CHECK(strncmp(dp_sc_server_version(s), "4.", 2) == 0);
  CHECK(dp_uuid_valid(dp_sc_session_id(s)));
  CHECK_CONTAINS(server_uri(), dp_sc_address(s));
  dp_sc_close(s);
}

TEST(config_set_get_and_utc_default) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_sc_error e;
  dp_sc_error_init(&e);
  char *v = NULL;
  CHECK_EQ(dp_sc_config_get(s, "spark.sql.session.timeZone", &v, &e), DIPPER_OK);
  CHECK_STR(v, "UTC");
  free(v);
  const char *k[2] = {"spark.sql.shuffle.partitions", "spark.sql.ansi.enabled"};
  const char *val[2] = {"7", "true"};
  CHECK_EQ(dp_sc_config_set(s, 2, k, val, &e), DIPPER_OK);
  CHECK_EQ(dp_sc_config_get(s, "spark.sql.shuffle.partitions", &v, &e), DIPPER_OK);
  CHECK_STR(v, "7");
  free(v);
  CHECK_EQ(dp_sc_config_get(s, "dipper.test.never.set", &v, &e), DIPPER_OK);
  CHECK(v == NULL);
  /* Another session does not see this session's config. */
  dp_sc *s2 = open_session();
  if (s2) {
    CHECK_EQ(dp_sc_config_get(s2, "spark.sql.shuffle.partitions", &v, &e), DIPPER_OK);
    CHECK(v == NULL || strcmp(v, "7") != 0);
    free(v);
    CHECK(strcmp(dp_sc_session_id(s), dp_sc_session_id(s2)) != 0);
    dp_sc_close(s2);
  }
  CHECK_EQ(dp_sc_keepalive(s, 0, &e), DIPPER_OK);
  CHECK_EQ(dp_sc_keepalive(s, 3600 * 1000, &e), DIPPER_OK);
  dp_sc_error_free(&e);
  dp_sc_close(s);
}

TEST(execute_range_counts_rows) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_arena *a = dp_arena_new(0);
  dp_sc_error e;
  dp_sc_error_init(&e);
  counts c = {0};
  int rc = dp_sc_execute(s, root_plan(a, sb_range(a, 0, 100000, 4)), count_fn, &c, 60000, &e);
  if (rc) fprintf(stderr, "%s\n", dp_buf_cstr(&e.message));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(c.rows, 100000);
  CHECK(c.batches >= 1);
  CHECK_EQ(c.complete, 1);
  dp_sc_error_free(&e);
  dp_arena_free(a);
  dp_sc_close(s);
}

/* Column `col` of row `row` across the batches: the child array and the
** element index inside it. */
static const struct ArrowArray *cell(const dp_arrow_batches *b, int col, int64_t row, int64_t *idx) {
  for (int i = 0; i < b->n; i++) {
    const struct ArrowArray *p = &b->arrays[i];
    if (row < p->length) {
      const struct ArrowArray *c = p->children[col];
      *idx = p->offset + row + c->offset;
      return c;
    }
    row -= p->length;
  }
  return NULL;
}

static int is_valid(const struct ArrowArray *c, int64_t i) {
  const uint8_t *v = c->buffers[0];
  return !v || ((v[i >> 3] >> (i & 7)) & 1);
}

/* Checks every cell of sb_mixed(start, ...) rows; returns the mismatches. */
static int64_t check_mixed(const dp_arrow_batches *b, int64_t start, int64_t nrows) {
  int64_t bad = 0;
  char want[32];
  for (int64_t r = 0; r < nrows && bad < 5; r++) {
    int64_t id = start + r, i = 0;
    const struct ArrowArray *c;
    int64_t before = bad;
    c = cell(b, 0, r, &i);
    if (!c || !is_valid(c, i) || ((const int64_t *)c->buffers[1])[i] != id) bad++;
    c = cell(b, 1, r, &i);
    if (!c || ((const double *)c->buffers[1])[i] != (double)id * 1.5) bad++;
    c = cell(b, 2, r, &i);
    snprintf(want, sizeof want, "%lld", (long long)id);
    if (c) {
      const int32_t *off = c->buffers[1];
      const char *data = c->buffers[2];
      size_t n = (size_t)(off[i + 1] - off[i]);
      if (n != strlen(want) || memcmp(data + off[i], want, n) != 0) bad++;
    } else {
      bad++;
    }
    c = cell(b, 3, r, &i);
    if (!c || ((const int64_t *)c->buffers[1])[i] != id * 1000003) bad++;
    c = cell(b, 4, r, &i);
    if (c) {
      /* decimal128, little-endian: the unscaled value id * 25 (two digits of scale) */
      int64_t lo, hi;
      memcpy(&lo, (const uint8_t *)c->buffers[1] + 16 * i, 8);
      memcpy(&hi, (const uint8_t *)c->buffers[1] + 16 * i + 8, 8);
      if (lo != id * 25 || hi != (id < 0 ? -1 : 0)) bad++;
    } else {
      bad++;
    }
    c = cell(b, 5, r, &i);
    if (!c || (((((const uint8_t *)c->buffers[1])[i >> 3] >> (i & 7)) & 1) != (id % 2 == 0))) bad++;
    c = cell(b, 6, r, &i);
    if (!c) {
      bad++;
    } else if (id % 3 == 0) {
      if (is_valid(c, i)) bad++;
    } else if (!is_valid(c, i) || ((const int64_t *)c->buffers[1])[i] != id) {
      bad++;
    }
    if (bad != before) fprintf(stderr, "row %lld (id %lld) differs\n", (long long)r, (long long)id);
  }
  return bad;
}

static void check_mixed_schema(const dp_arrow_batches *b) {
  CHECK_STR(b->schema.format, "+s");
  CHECK_EQ(b->schema.n_children, SB_MIXED_COLUMNS);
  if (b->schema.n_children != SB_MIXED_COLUMNS) return;
  static const char *const names[] = {"id", "d", "s", "ts", "dec", "b", "n"};
  static const char *const formats[] = {"l", "g", "u", "tsu:UTC", "d:18,2", "b", "l"};
  for (int i = 0; i < SB_MIXED_COLUMNS; i++) {
    CHECK_STR(b->schema.children[i]->name, names[i]);
    CHECK_STR(b->schema.children[i]->format, formats[i]);
  }
}

TEST(collect_mixed_types) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_arena *a = dp_arena_new(0);
  dp_sc_error e;
  dp_sc_error_init(&e);
  dp_arrow_batches b;
  int rc = dp_sc_collect(s, sb_mixed(a, -5, 2000, 3), &b, &e);
  if (rc) fprintf(stderr, "%s\n", dp_buf_cstr(&e.message));
  CHECK_EQ(rc, DIPPER_OK);
  if (rc == DIPPER_OK) {
    CHECK_EQ(b.rows, 2005);
    check_mixed_schema(&b);
    CHECK_EQ(check_mixed(&b, -5, 2005), 0);
    dp_arrow_batches_free(&b);
  }
  /* An empty result still has its schema. */
  rc = dp_sc_collect(s, sb_mixed(a, 10, 10, 1), &b, &e);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc == DIPPER_OK) {
    CHECK_EQ(b.rows, 0);
    check_mixed_schema(&b);
    dp_arrow_batches_free(&b);
  }
  dp_sc_error_free(&e);
  dp_arena_free(a);
  dp_sc_close(s);
}

static int wire_fn(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  if (r->response_type_case == SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH)
    *(size_t *)user += r->arrow_batch->data.len;
  return DIPPER_OK;
}

/* Whatever codec the session asks Spark to compress Arrow buffers with
** (Spark 4.1's spark.sql.execution.arrow.compression.codec), collect gives
** the same rows. */
TEST(collect_with_each_arrow_codec) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_arena *a = dp_arena_new(0);
  dp_sc_error e;
  dp_sc_error_init(&e);
  static const char *const codecs[] = {"zstd", "lz4", "none"};
  size_t wire[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    const char *k = "spark.sql.execution.arrow.compression.codec";
    CHECK_EQ(dp_sc_config_set(s, 1, &k, &codecs[i], &e), DIPPER_OK);
    CHECK_EQ(dp_sc_execute(s, root_plan(a, sb_mixed(a, 0, 5000, 2)), wire_fn, &wire[i], 0, &e),
             DIPPER_OK);
    dp_arrow_batches b;
    int rc = dp_sc_collect(s, sb_mixed(a, 0, 5000, 2), &b, &e);
    if (rc) fprintf(stderr, "%s: %s\n", codecs[i], dp_buf_cstr(&e.message));
    CHECK_EQ(rc, DIPPER_OK);
    if (rc != DIPPER_OK) continue;
    CHECK_EQ(b.rows, 5000);
    CHECK_EQ(check_mixed(&b, 0, 5000), 0);
    dp_arrow_batches_free(&b);
  }
  /* The codecs were really used: compressed batches are smaller. */
  CHECK(wire[0] > 0 && wire[0] < wire[2]);
  CHECK(wire[1] > 0 && wire[1] < wire[2]);
  dp_sc_error_free(&e);
  dp_arena_free(a);
  dp_sc_close(s);
}

TEST(analyze_schema_gives_ddl) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_arena *a = dp_arena_new(0);
  dp_sc_error e;
  dp_sc_error_init(&e);
  char *ddl = NULL;
  CHECK_EQ(dp_sc_analyze_schema(s, sb_mixed(a, 0, 10, 1), &ddl, &e), DIPPER_OK);
  /* Nullability as Spark infers it (id % 2 may be NULL, hence b). */
  CHECK_STR(ddl, "id BIGINT NOT NULL, d DOUBLE NOT NULL, s STRING NOT NULL, ts TIMESTAMP NOT NULL, "
                 "dec DECIMAL(18,2), b BOOLEAN, n BIGINT");
  free(ddl);
  dp_sc_error_free(&e);
  dp_arena_free(a);
  dp_sc_close(s);
}

TEST(semantic_error_has_class_and_state) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_arena *a = dp_arena_new(0);
  dp_sc_error e;
  dp_sc_error_init(&e);
  Spark__Connect__Expression *x[1] = {sb_col(a, "nope")};
  dp_arrow_batches b;
  int rc = dp_sc_collect(s, sb_project(a, sb_range(a, 0, 3, 1), 1, x), &b, &e);
  CHECK_EQ(rc, DIPPER_REMOTE);
  CHECK_EQ(e.code, DIPPER_REMOTE);
  CHECK(strncmp(e.error_class, "UNRESOLVED_COLUMN", 17) == 0);
  CHECK_STR(e.sql_state, "42703");
  CHECK_CONTAINS(dp_buf_cstr(&e.message), "Spark: [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column");
  CHECK_CONTAINS(dp_buf_cstr(&e.message), "`nope`");
  CHECK_CONTAINS(dp_buf_cstr(&e.message), "(SQLSTATE 42703)");
  CHECK(strstr(dp_buf_cstr(&e.message), "JVM stacktrace") == NULL);
  CHECK(b.n == 0 && b.arrays == NULL);
  /* The same error from AnalyzePlan (a unary call). */
  char *ddl = NULL;
  CHECK_EQ(dp_sc_analyze_schema(s, sb_project(a, sb_range(a, 0, 3, 1), 1, x), &ddl, &e), DIPPER_REMOTE);
  CHECK(strncmp(e.error_class, "UNRESOLVED_COLUMN", 17) == 0);
  CHECK(ddl == NULL);
  /* The session goes on. */
  counts c = {0};
  CHECK_EQ(dp_sc_execute(s, root_plan(a, sb_range(a, 0, 10, 1)), count_fn, &c, 0, &e), DIPPER_OK);
  CHECK_EQ(c.rows, 10);
  dp_sc_error_free(&e);
  dp_arena_free(a);
  dp_sc_close(s);
}

TEST(reader_stops_early_and_session_goes_on) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_arena *a = dp_arena_new(0);
  dp_sc_error e;
  dp_sc_error_init(&e);
  counts c = {0};
  c.stop_after = 1;
  int rc = dp_sc_execute(s, root_plan(a, sb_range(a, 0, 1000000, 8)), count_fn, &c, 0, &e);
  CHECK_EQ(rc, DIPPER_INTERRUPTED);
  CHECK_EQ(e.code, DIPPER_INTERRUPTED);
  CHECK_CONTAINS(dp_buf_cstr(&e.message), "abandoned");
  counts c2 = {0};
  CHECK_EQ(dp_sc_execute(s, root_plan(a, sb_range(a, 0, 10, 1)), count_fn, &c2, 0, &e), DIPPER_OK);
  CHECK_EQ(c2.rows, 10);
  CHECK_EQ(dp_sc_interrupt_all(s, &e), DIPPER_OK);
  dp_sc_error_free(&e);
  dp_arena_free(a);
  dp_sc_close(s);
}

TEST(deadline_stops_a_long_execution) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_arena *a = dp_arena_new(0);
  dp_sc_error e;
  dp_sc_error_init(&e);
  counts c = {0};
  /* Ten billion rows: far more than 300 ms of work. */
  int rc = dp_sc_execute(s, root_plan(a, sb_range(a, 0, 10000000000LL, 2)), count_fn, &c, 300, &e);
  CHECK_EQ(rc, DIPPER_TIMEOUT);
  CHECK_CONTAINS(dp_buf_cstr(&e.message), "deadline");
  counts c2 = {0};
  CHECK_EQ(dp_sc_execute(s, root_plan(a, sb_range(a, 0, 10, 1)), count_fn, &c2, 0, &e), DIPPER_OK);
  CHECK_EQ(c2.rows, 10);
  dp_sc_error_free(&e);
  dp_arena_free(a);
  dp_sc_close(s);
}

TEST(cut_stream_is_reattached_execute) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_arena *a = dp_arena_new(0);
  dp_sc_error e;
  dp_sc_error_init(&e);
  counts c = {0};
  int before = dp_sc__test_reattaches(s);
  dp_sc__test_cut_after(s, 1);
  int rc = dp_sc_execute(s, root_plan(a, sb_range(a, 0, 200000, 6)), count_fn, &c, 60000, &e);
  if (rc) fprintf(stderr, "%s\n", dp_buf_cstr(&e.message));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(c.rows, 200000);
  CHECK_EQ(c.complete, 1);
  CHECK(dp_sc__test_reattaches(s) > before);
  dp_sc_error_free(&e);
  dp_arena_free(a);
  dp_sc_close(s);
}

TEST(cut_stream_is_reattached_collect) {
  dp_sc *s = open_session();
  if (!s) return;
  dp_arena *a = dp_arena_new(0);
  dp_sc_error e;
  dp_sc_error_init(&e);
  for (int cut = 1; cut <= 3; cut++) {
    int before = dp_sc__test_reattaches(s);
    dp_sc__test_cut_after(s, cut);
    dp_arrow_batches b;
    int rc = dp_sc_collect(s, sb_mixed(a, 0, 30000, 5), &b, &e);
    if (rc) fprintf(stderr, "%s\n", dp_buf_cstr(&e.message));
    CHECK_EQ(rc, DIPPER_OK);
    if (rc != DIPPER_OK) break;
    CHECK_EQ(b.rows, 30000);
    CHECK_EQ(check_mixed(&b, 0, 30000), 0);
    CHECK(dp_sc__test_reattaches(s) > before);
    dp_arrow_batches_free(&b);
  }
  dp_sc_error_free(&e);
  dp_arena_free(a);
  dp_sc_close(s);
}

TEST(no_server_names_the_address) {
  dp_sc *s = NULL;
  dp_sc_error e;
  dp_sc_error_init(&e);
  CHECK_EQ(dp_sc_open(&s, "sc://127.0.0.1:1", &e), DIPPER_CONNECT);
  CHECK(s == NULL);
  CHECK_EQ(e.code, DIPPER_CONNECT);
  CHECK_CONTAINS(dp_buf_cstr(&e.message), "cannot reach Spark Connect at 127.0.0.1:1");
  CHECK_CONTAINS(dp_buf_cstr(&e.message), "scripts/spark-local start");
  dp_sc_error_free(&e);
  CHECK_EQ(dp_sc_open(&s, "sc://127.0.0.1:15002/;nosuch=1", &e), DIPPER_OPTION);
  CHECK(s == NULL);
  CHECK(e.message.len > 0);
  dp_sc_error_free(&e);
  dp_sc_close(NULL);
}

int main(void) { return RUN_TESTS(); }
