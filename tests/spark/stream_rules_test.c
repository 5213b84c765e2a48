/*
** stream_rules_test.c — dp_spark_stream_check: each of Spark Structured
** Streaming's refusals that dipper's own validator lets through, with its
** code, line:col and message, next to the form Spark accepts.  The SQL is
** compiled by the public API on the embedded engine (so it has passed the
** engine-neutral validation) and the compiled plans are checked for Spark.
** A few rules are about output modes that dipper's validator never lets reach
** them with that plan; those cases set the mode on the compiled plan.
** Offline: no server is needed.
*/
#include <stdlib.h>

#include "api/dipper_int.h"
#include "spark/stream_rules.h"
#include "spark/translate_stream.h"
#include "test.h"

static const char *DDL =
    "CREATE TABLE pay (createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE,\n"
    "  payPlatform INT, provinceId INT,\n"
    "  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND)\n"
    "WITH ('connector' = 'kafka', 'topic' = 'pay', 'format' = 'json',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092');\n"
    "CREATE TABLE ship (orderId BIGINT, shipTime TIMESTAMP(3),\n"
    "  WATERMARK FOR shipTime AS shipTime - INTERVAL '5' SECOND)\n"
    "WITH ('connector' = 'kafka', 'topic' = 'ship', 'format' = 'json',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092');\n"
    "CREATE TABLE clicks (orderId BIGINT, url STRING, p AS PROCTIME())\n"
    "WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092');\n"
    "CREATE TABLE rates (provinceId INT, rate DOUBLE, rateTime TIMESTAMP(3),\n"
    "  WATERMARK FOR rateTime AS rateTime - INTERVAL '1' SECOND,\n"
    "  PRIMARY KEY (provinceId) NOT ENFORCED)\n"
    "WITH ('connector' = 'kafka', 'topic' = 'rates', 'format' = 'json',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092');\n"
    "CREATE TABLE provinces (provinceId INT, name STRING)\n"
    "WITH ('connector' = 'memory', 'bounded' = 'true');\n";

/* One case: a handle with the DDL, the program of `sql`, and the Spark
** check's diagnostics over every statement. */
typedef struct fx {
  dipper *db;
  dipper_program *prog;
  dp_arena *arena;
  dp_diags d;
  int compiled;   /* dipper_compile's result */
} fx;

static void fx_open(fx *f, const char *sql) {
  memset(f, 0, sizeof *f);
  f->arena = dp_arena_new(0);
  dp_diags_init(&f->d, f->arena, "<test>", sql, strlen(sql));
  if (dipper_open(&f->db, "embedded") != DIPPER_OK) {
    f->compiled = -1;
    return;
  }
  dipper_program *ddl = NULL;
  int rc = dipper_compile(f->db, DDL, (size_t)-1, "ddl.sql", &ddl);
  dipper_program_free(ddl);
  if (rc != DIPPER_OK) {
    char *msg = dipper_diag_render(f->db, 0);
    fprintf(stderr, "DDL does not compile:\n%s", msg ? msg : "?\n");
    free(msg);
    f->compiled = rc;
    return;
  }
  f->compiled = dipper_compile(f->db, sql, (size_t)-1, "<test>", &f->prog);
  if (f->compiled != DIPPER_OK) {
    char *msg = dipper_diag_render(f->db, 0);
    fprintf(stderr, "does not compile on the embedded engine:\n%s", msg ? msg : "?\n");
    free(msg);
  }
}

/* The last statement's plan (the query), or NULL. */
static dp_query_plan *fx_plan(fx *f) {
  if (!f->prog || f->prog->n == 0) return NULL;
  return &f->prog->stmts[f->prog->n - 1].plan;
}

/* Run the Spark check on every statement; the number of diagnostics. */
static int fx_check(fx *f) {
  if (f->compiled != DIPPER_OK) return -1;
  int rc = DIPPER_OK;
  for (int i = 0; i < f->prog->n; i++) {
    int r = dp_spark_stream_check(&f->prog->stmts[i].plan, &f->d);
    if (r != DIPPER_OK) rc = r;
  }
  if ((rc == DIPPER_OK) != (f->d.count == 0)) return -2; /* code and list disagree */
  return f->d.count;
}

static void fx_close(fx *f) {
  dipper_program_free(f->prog);
  dipper_close(f->db);
  dp_arena_free(f->arena);
}

#define CHECK_REFUSED(f, line_, col_, words)                  \
  do {                                                        \
    CHECK_EQ(fx_check(f), 1);                                 \
    if ((f)->d.count >= 1) {                                  \
      CHECK_EQ((f)->d.items[0].code, DIPPER_STREAMING);       \
      CHECK_EQ((f)->d.items[0].span.line, line_);             \
      CHECK_EQ((f)->d.items[0].span.col, col_);               \
      CHECK_CONTAINS((f)->d.items[0].message, words);         \
    }                                                         \
  } while (0)

#define CHECK_ACCEPTED(f)                                     \
  do {                                                        \
    int count_ = fx_check(f);                                 \
    CHECK_EQ(count_, 0);                                      \
    if (count_ > 0) fprintf(stderr, "  first: %s\n", (f)->d.items[0].message); \
  } while (0)

/* Refused, for a query that compiles on the embedded engine. */
static void refused(const char *sql, uint32_t line, uint32_t col, const char *words) {
  fx f;
  fx_open(&f, sql);
  CHECK_EQ(f.compiled, DIPPER_OK);
  CHECK_REFUSED(&f, line, col, words);
  fx_close(&f);
}

static void accepted(const char *sql) {
  fx f;
  fx_open(&f, sql);
  CHECK_EQ(f.compiled, DIPPER_OK);
  CHECK_ACCEPTED(&f);
  fx_close(&f);
}

#define COMPLETE "SET 'dipper.output-mode' = 'complete';\n"
#define UPDATE "SET 'dipper.output-mode' = 'update';\n"

static const char *TOP_PROVINCES = COMPLETE
    "SELECT provinceId, SUM(payAmount) AS total FROM pay GROUP BY provinceId\n"
    "ORDER BY total DESC\n"
    "LIMIT 3";

/* ---- LIMIT / OFFSET ---- */

TEST(offset_on_a_stream) {
  refused(COMPLETE
          "SELECT provinceId, SUM(payAmount) AS total FROM pay GROUP BY provinceId\n"
          "ORDER BY total DESC\n"
          "LIMIT 3 OFFSET 1",
          4, 1, "OFFSET on a stream: Spark cannot skip the first rows");
  accepted(TOP_PROVINCES);
}

TEST(limit_in_update_mode) {
  const char *sql = COMPLETE "SELECT provinceId, COUNT(*) FROM pay GROUP BY provinceId\n"
                             "LIMIT 5";
  accepted(sql);
  /* dipper's validator refuses LIMIT on a stream outside complete mode itself;
     Spark's own rule is about update mode, so it is put on the plan here. */
  fx f;
  fx_open(&f, sql);
  CHECK_EQ(f.compiled, DIPPER_OK);
  if (fx_plan(&f)) fx_plan(&f)->output_mode = DP_MODE_UPDATE;
  CHECK_REFUSED(&f, 3, 1, "LIMIT on a stream in update mode");
  CHECK_CONTAINS(f.d.items[0].message, "SET 'dipper.output-mode' = 'complete'");
  fx_close(&f);
}

/* ---- ORDER BY ---- */

TEST(sort_outside_complete_mode_aggregation) {
  refused("SELECT orderId, createTime FROM pay\n"
          "ORDER BY createTime",
          2, 1, "ORDER BY on a stream: Spark sorts a streaming query only when it sorts an "
                "aggregation in complete mode");
  accepted(TOP_PROVINCES);
}

/* ---- OVER and ranking ---- */

TEST(over_on_a_stream) {
  refused("SELECT orderId,\n"
          "  SUM(payAmount) OVER (PARTITION BY provinceId ORDER BY createTime\n"
          "    ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS last3\n"
          "FROM pay",
          2, 23, "OVER on a stream: Spark has no window functions on streaming queries");
  /* On a bounded table inside a streaming session it is Spark batch work. */
  accepted("SELECT name, COUNT(*) OVER (PARTITION BY name) FROM provinces");
}

TEST(top_n_on_a_stream) {
  fx f;
  fx_open(&f, "SELECT * FROM (\n"
              "  SELECT window_start, provinceId, total,\n"
              "    ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn\n"
              "  FROM (SELECT window_start, window_end, provinceId, SUM(payAmount) AS total\n"
              "        FROM TABLE(TUMBLE(TABLE pay, DESCRIPTOR(createTime), INTERVAL '1' MINUTE))\n"
              "        GROUP BY window_start, window_end, provinceId))\n"
              "WHERE rn <= 3");
  CHECK_EQ(f.compiled, DIPPER_OK);
  CHECK_EQ(fx_check(&f), 1);
  if (f.d.count >= 1) {
    CHECK_CONTAINS(f.d.items[0].message, "a Top-N (ROW_NUMBER()/RANK() ... WHERE rn <= N) on a "
                                         "stream: Spark has no ranking functions");
    CHECK_CONTAINS(f.d.items[0].message, "MAX()/MIN() in a window aggregation");
    CHECK_EQ(f.d.items[0].span.line, 7);
    CHECK_EQ(f.d.items[0].span.col, 7);
  }
  fx_close(&f);
  accepted(TOP_PROVINCES);
}

/* ---- deduplication ---- */

TEST(dedup_keeping_the_last_row) {
  refused(UPDATE
          "SELECT orderId, payAmount FROM (\n"
          "  SELECT *, ROW_NUMBER() OVER (PARTITION BY orderId ORDER BY createTime DESC) AS rn\n"
          "  FROM pay)\n"
          "WHERE rn = 1",
          5, 7, "keeping the last row per key");
  accepted("SELECT orderId, payAmount FROM (\n"
           "  SELECT *, ROW_NUMBER() OVER (PARTITION BY orderId ORDER BY createTime ASC) AS rn\n"
           "  FROM pay)\n"
           "WHERE rn = 1");
}

static dp_plan *find_kind(dp_plan *p, dp_plan_kind k) {
  if (!p) return NULL;
  if (p->kind == k) return p;
  for (int i = 0; i < p->ninputs; i++) {
    dp_plan *q = find_kind(p->inputs[i], k);
    if (q) return q;
  }
  return NULL;
}

TEST(dedup_within_watermark_needs_a_watermark) {
  /* Only the C API asks for dropDuplicatesWithinWatermark: set it on the plan. */
  const char *no_wm = UPDATE "SELECT orderId, url FROM (\n"
                             "  SELECT *, ROW_NUMBER() OVER (PARTITION BY orderId ORDER BY p) AS rn\n"
                             "  FROM clicks)\n"
                             "WHERE rn = 1";
  fx f;
  fx_open(&f, no_wm);
  CHECK_EQ(f.compiled, DIPPER_OK);
  dp_plan *dd = fx_plan(&f) ? find_kind(fx_plan(&f)->roots[0], DP_P_DEDUPLICATE) : NULL;
  CHECK(dd != NULL);
  if (dd) dd->u.dedup.within_watermark = true;
  CHECK_EQ(fx_check(&f), 1);
  if (f.d.count) CHECK_CONTAINS(f.d.items[0].message, "deduplication within the watermark needs "
                                                      "a watermark on its input");
  fx_close(&f);

  fx_open(&f, "SELECT orderId, payAmount FROM (\n"
              "  SELECT *, ROW_NUMBER() OVER (PARTITION BY orderId ORDER BY createTime) AS rn\n"
              "  FROM pay)\n"
              "WHERE rn = 1");
  CHECK_EQ(f.compiled, DIPPER_OK);
  dd = fx_plan(&f) ? find_kind(fx_plan(&f)->roots[0], DP_P_DEDUPLICATE) : NULL;
  CHECK(dd != NULL);
  if (dd) dd->u.dedup.within_watermark = true;
  CHECK_ACCEPTED(&f);
  fx_close(&f);
}

/* ---- joins ---- */

static const char *INTERVAL_JOIN =
    "SELECT pay.orderId, shipTime FROM pay\n"
    "LEFT JOIN ship ON pay.orderId = ship.orderId\n"
    "  AND shipTime BETWEEN createTime AND createTime + INTERVAL '1' HOUR";

TEST(stream_stream_join_outside_append_mode) {
  refused(UPDATE "SELECT pay.orderId, shipTime FROM pay\n"
                 "JOIN ship ON pay.orderId = ship.orderId",
          2, 35, "INNER JOIN of two streams in update mode: Spark runs a stream-stream join "
                "only in append mode");
  accepted(INTERVAL_JOIN);
}

TEST(stream_stream_anti_join) {
  refused("SELECT pay.orderId FROM pay\n"
          "LEFT ANTI JOIN ship ON pay.orderId = ship.orderId\n"
          "  AND shipTime BETWEEN createTime AND createTime + INTERVAL '1' HOUR",
          1, 25, "ANTI JOIN (NOT EXISTS / NOT IN) of two streams: Spark has no anti join");
  accepted("SELECT pay.orderId FROM pay\n"
           "LEFT SEMI JOIN ship ON pay.orderId = ship.orderId\n"
           "  AND shipTime BETWEEN createTime AND createTime + INTERVAL '1' HOUR");
}

TEST(static_semi_join_stream) {
  refused("SELECT name FROM provinces\n"
          "LEFT SEMI JOIN pay ON provinces.provinceId = pay.provinceId",
          1, 18, "SEMI JOIN with the stream on the right and a bounded table on the left");
  accepted("SELECT orderId FROM pay\n"
           "LEFT SEMI JOIN provinces ON provinces.provinceId = pay.provinceId");
}

TEST(temporal_join_of_a_stream) {
  refused("SELECT orderId, payAmount * rate FROM pay\n"
          "JOIN rates FOR SYSTEM_TIME AS OF pay.createTime ON pay.provinceId = rates.provinceId",
          1, 39, "FOR SYSTEM_TIME AS OF a stream: Spark has no temporal (versioned) join");
  accepted("SELECT orderId, name FROM pay\n"
           "LEFT JOIN provinces ON pay.provinceId = provinces.provinceId");
}

TEST(asof_join_of_streams) {
  refused("SELECT pay.orderId, ship.shipTime FROM pay\n"
          "ASOF LEFT JOIN ship MATCH_CONDITION (pay.createTime >= ship.shipTime) ON pay.orderId = ship.orderId",
          1, 40, "an ASOF JOIN on a stream: Spark runs as-of joins (Dataset.joinAsOf) only in batch");
  refused("SELECT pay.orderId FROM pay ASOF JOIN ship ON pay.orderId = ship.orderId\n"
          "AND pay.createTime > ship.shipTime TOLERANCE INTERVAL '1' MINUTE",
          1, 25, "run this statement in batch mode");
}

TEST(stream_stream_join_without_an_equality) {
  refused("SELECT pay.orderId, shipTime FROM pay\n"
          "JOIN ship ON shipTime BETWEEN createTime AND createTime + INTERVAL '1' HOUR",
          1, 35, "INNER JOIN of two streams without an equality between them: Spark joins two "
                 "streams only on equal keys");
  fx f;
  fx_open(&f, "SELECT pay.orderId, shipTime FROM pay\n"
              "JOIN ship ON shipTime BETWEEN createTime AND createTime + INTERVAL '1' HOUR");
  CHECK_EQ(fx_check(&f), 1);
  if (f.d.count) CHECK_CONTAINS(f.d.items[0].message, "ON pay.id = ship.id AND ...");
  fx_close(&f);
  /* an equality of expressions of each side is a key to Spark too */
  accepted("SELECT pay.orderId, shipTime FROM pay\n"
           "JOIN ship ON pay.orderId + 1 = ship.orderId + 1");
  accepted("SELECT pay.orderId, shipTime FROM pay\n"
           "JOIN ship ON pay.orderId IS NOT DISTINCT FROM ship.orderId\n"
           "  AND shipTime BETWEEN createTime AND createTime + INTERVAL '1' HOUR");
}

/* The first JOIN node of the compiled query of f. */
static dp_plan *first_join(fx *f) {
  return fx_plan(f) ? find_kind(fx_plan(f)->roots[0], DP_P_JOIN) : NULL;
}

/* `sql` compiles; then its join's kind and time bound are set as given (forms
** the engine-neutral validator refuses itself, with the same reasons, so
** that only a plan built otherwise reaches Spark's rules with them). */
static void refused_as(const char *sql, dp_join_kind kind, bool bound, uint32_t col, const char *words) {
  fx f;
  fx_open(&f, sql);
  CHECK_EQ(f.compiled, DIPPER_OK);
  dp_plan *j = first_join(&f);
  CHECK(j != NULL);
  if (j) {
    j->u.join.kind = kind;
    j->props.has_time_bound = bound;
  }
  CHECK_REFUSED(&f, 1, col, words);
  fx_close(&f);
}

TEST(stream_stream_outer_joins_say_what_is_missing) {
  static const char *ranged = "SELECT pay.orderId, shipTime FROM pay\n"
                              "JOIN ship ON pay.orderId = ship.orderId\n"
                              "  AND shipTime BETWEEN createTime AND createTime + INTERVAL '1' HOUR";
  refused_as(ranged, DP_J_LEFT, false, 35,
             "LEFT JOIN of two streams: Spark needs a watermark in the join keys, or a watermark "
             "on the right side and a time range between the two sides, but the ON clause has "
             "no time range between the two sides' event times; declare a WATERMARK on both "
             "sources and add e.g. AND createTime BETWEEN shipTime - INTERVAL '1' HOUR");
  refused_as(ranged, DP_J_RIGHT, false, 35, "RIGHT JOIN of two streams: Spark needs a watermark in the "
                                        "join keys, or a watermark on the left side");
  refused_as(ranged, DP_J_FULL, false, 35, "FULL JOIN of two streams: Spark needs a watermark in the "
                                       "join keys, or a watermark on the either side");
  refused_as(ranged, DP_J_SEMI, false, 35, "SEMI JOIN of two streams: Spark needs a watermark in the "
                                       "join keys, or a watermark on the right side");
  /* every outer kind, and semi, with watermarks on both sides and a time range */
  static const char *const kinds[] = {"LEFT", "RIGHT", "FULL", "LEFT SEMI"};
  for (int i = 0; i < 4; i++) {
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT pay.orderId FROM pay\n"
             "%s JOIN ship ON pay.orderId = ship.orderId\n"
             "  AND shipTime BETWEEN createTime AND createTime + INTERVAL '1' HOUR", kinds[i]);
    accepted(sql);
  }
}

TEST(stream_static_join_sides) {
  static const char *inner = "SELECT pay.orderId, name FROM pay\n"
                             "JOIN provinces ON pay.provinceId = provinces.provinceId";
  accepted(inner);
  accepted("SELECT pay.orderId, name FROM pay\n"
           "LEFT JOIN provinces ON pay.provinceId = provinces.provinceId");
  accepted("SELECT pay.orderId, name FROM provinces\n"
           "RIGHT JOIN pay ON pay.provinceId = provinces.provinceId");
  /* a join without equality is fine when one side is bounded */
  accepted("SELECT pay.orderId, name FROM pay\n"
           "JOIN provinces ON pay.provinceId > provinces.provinceId");
  refused_as(inner, DP_J_FULL, false, 31, "FULL JOIN of a stream and a bounded table: Spark cannot emit the "
                                      "bounded side's unmatched rows");
  refused_as(inner, DP_J_RIGHT, false, 31, "RIGHT JOIN with the stream on the left and a bounded table on "
                                       "the right: Spark supports it only with the stream on the right");
}

/* ---- the global watermark's policy ---- */

TEST(multiple_watermark_policy_option) {
  const char *k[2], *v[2];
  fx f;
  fx_open(&f, "SELECT 1");
  CHECK_EQ(f.compiled, DIPPER_OK);
  /* unset: Spark's default, said explicitly */
  CHECK_EQ(dp_spark_stream_confs(f.db ? f.db->catalog : NULL, k, v, 2), 1);
  CHECK_STR(k[0], "spark.sql.streaming.multipleWatermarkPolicy");
  CHECK_STR(v[0], "min");
  dipper_program *p = NULL;
  CHECK_EQ(dipper_compile(f.db, "SET 'dipper.spark.multiple-watermark-policy' = 'MAX'", (size_t)-1,
                          "<set>", &p), DIPPER_OK);
  dipper_program_free(p);
  CHECK_EQ(dp_spark_stream_confs(f.db->catalog, k, v, 2), 1);
  CHECK_STR(v[0], "max");
  /* a value Spark does not know is refused at the SET */
  p = NULL;
  CHECK_EQ(dipper_compile(f.db, "SET 'dipper.spark.multiple-watermark-policy' = 'median'", (size_t)-1,
                          "<set>", &p), DIPPER_OPTION);
  dipper_program_free(p);
  char *msg = dipper_diag_render(f.db, 0);
  CHECK_CONTAINS(msg, "'min' or 'max'");
  free(msg);
  CHECK_EQ(dp_spark_stream_confs(f.db->catalog, k, v, 0), 1); /* the count even without room */
  fx_close(&f);
}

/* ---- set operations ---- */

TEST(union_of_a_stream_and_a_bounded_input) {
  refused("SELECT provinceId FROM pay\n"
          "UNION ALL\n"
          "SELECT provinceId FROM provinces",
          1, 1, "UNION of a stream and a bounded input: Spark cannot union streaming and batch");
  accepted("SELECT orderId FROM pay\n"
           "UNION ALL\n"
           "SELECT orderId FROM ship");
}

/* ---- windows and aggregations ---- */

static const char *HOP_SUM =
    "SELECT provinceId, window_start, window_end, SUM(payAmount)\n"
    "FROM TABLE(\n"
    "  HOP(TABLE pay, DESCRIPTOR(createTime), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))\n"
    "GROUP BY provinceId, window_start, window_end";

TEST(cumulate_windows) {
  refused("SELECT provinceId, window_start, window_end, SUM(payAmount)\n"
          "FROM TABLE(\n"
          "  CUMULATE(TABLE pay, DESCRIPTOR(createTime), INTERVAL '1' MINUTE, INTERVAL '1' HOUR))\n"
          "GROUP BY provinceId, window_start, window_end",
          2, 6, "CUMULATE on a stream: Spark has no cumulating windows");
  accepted(HOP_SUM);
}

TEST(processing_time_window_in_append_mode) {
  const char *q = "SELECT window_start, COUNT(*)\n"
                  "FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(p), INTERVAL '1' MINUTE))\n"
                  "GROUP BY window_start, window_end";
  refused(q, 2, 6, "a window on processing time in append mode");
  char *upd = malloc(strlen(UPDATE) + strlen(q) + 1);
  CHECK(upd != NULL);
  if (!upd) return;
  strcpy(upd, UPDATE);
  strcat(upd, q);
  accepted(upd);
  free(upd);
}

TEST(distinct_aggregates) {
  refused("SELECT window_start, COUNT(DISTINCT orderId)\n"
          "FROM TABLE(TUMBLE(TABLE pay, DESCRIPTOR(createTime), INTERVAL '1' MINUTE))\n"
          "GROUP BY window_start, window_end",
          1, 22, "count(DISTINCT ...) on a stream: Spark has no distinct aggregates");
  accepted("SELECT window_start, APPROX_COUNT_DISTINCT(orderId)\n"
           "FROM TABLE(TUMBLE(TABLE pay, DESCRIPTOR(createTime), INTERVAL '1' MINUTE))\n"
           "GROUP BY window_start, window_end");
}

static const char *SESSIONS =
    "SELECT provinceId, window_start, window_end, SUM(payAmount)\n"
    "FROM TABLE(SESSION(TABLE pay PARTITION BY provinceId, DESCRIPTOR(createTime),\n"
    "                   INTERVAL '5' MINUTE))\n"
    "GROUP BY provinceId, window_start, window_end";

TEST(session_window_in_update_mode) {
  char sql[1024];
  snprintf(sql, sizeof sql, "%s%s", UPDATE, SESSIONS);
  refused(sql, 5, 1, "a session window aggregation in update mode");
  accepted(SESSIONS);
}

TEST(watermark_with_an_expression_delay) {
  fx f;
  fx_open(&f, "CREATE TABLE odd (ts TIMESTAMP(3), lag_s INT,\n"
              "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND * lag_s)\n"
              "WITH ('connector' = 'kafka', 'topic' = 'odd', 'format' = 'json',\n"
              "  'properties.bootstrap.servers' = '127.0.0.1:9092');\n"
              "SELECT ts, lag_s FROM odd");
  if (f.compiled == DIPPER_OK) {
    CHECK_REFUSED(&f, 2, 3, "this WATERMARK is not the time column minus a constant interval");
  } else {
    CHECK_EQ(f.compiled, DIPPER_OK);
  }
  fx_close(&f);
  accepted("SELECT createTime, orderId FROM pay");
}

/* ---- chains of stateful operators ---- */

/* A window over the window_time of an earlier window aggregation. */
static const char *CHAINED_WINDOWS =
    "CREATE TEMPORARY VIEW per_minute AS\n"
    "  SELECT window_time AS wt, provinceId, SUM(payAmount) AS total\n"
    "  FROM TABLE(TUMBLE(TABLE pay, DESCRIPTOR(createTime), INTERVAL '1' MINUTE))\n"
    "  GROUP BY window_start, window_end, window_time, provinceId;\n"
    "SELECT window_start, window_end, MAX(total)\n"
    "FROM TABLE(TUMBLE(TABLE per_minute, DESCRIPTOR(wt), INTERVAL '10' MINUTE))\n"
    "GROUP BY window_start, window_end";

TEST(chained_aggregations_outside_append_mode) {
  accepted(CHAINED_WINDOWS);
  fx f;
  fx_open(&f, CHAINED_WINDOWS);
  CHECK_EQ(f.compiled, DIPPER_OK);
  if (fx_plan(&f)) fx_plan(&f)->output_mode = DP_MODE_UPDATE;
  CHECK_EQ(fx_check(&f), 1);
  if (f.d.count) {
    CHECK_CONTAINS(f.d.items[0].message, "a stateful operator over the result of an "
                                         "aggregation in update mode");
    CHECK_EQ(f.d.items[0].span.line, 7);
    CHECK_EQ(f.d.items[0].span.col, 1);
  }
  fx_close(&f);
}

/* The embedded engine runs these as changes (exec/changelog.h); Spark runs
** chained stateful operators only in append mode, and refuses them at
** compile time with its reason. */
TEST(aggregation_over_an_updating_aggregation) {
  refused(UPDATE
          "SELECT total, COUNT(*) FROM (\n"
          "  SELECT provinceId, SUM(payAmount) AS total FROM pay GROUP BY provinceId)\n"
          "GROUP BY total",
          4, 1, "a stateful operator over the result of an aggregation in update mode");
}

TEST(join_of_updating_aggregations) {
  refused(UPDATE
          "SELECT a.provinceId, a.total, b.n FROM\n"
          "  (SELECT provinceId, SUM(payAmount) AS total FROM pay GROUP BY provinceId) a\n"
          "JOIN (SELECT provinceId, COUNT(*) AS n FROM pay GROUP BY provinceId) b\n"
          "  ON a.provinceId = b.provinceId",
          3, 3, "Spark runs a stream-stream join only in append mode");
}

TEST(aggregation_over_a_join_of_streams_in_update_mode) {
  fx f;
  fx_open(&f, UPDATE
              "SELECT s.orderId, COUNT(*) FROM pay p JOIN ship s ON p.orderId = s.orderId\n"
              "GROUP BY s.orderId");
  CHECK_EQ(f.compiled, DIPPER_OK);
  CHECK(fx_check(&f) >= 1);
  if (f.d.count >= 1) CHECK_CONTAINS(f.d.items[0].message, "update mode");
  fx_close(&f);
}

TEST(batch_mode_is_not_checked) {
  accepted("SET 'execution.runtime-mode' = 'batch';\n"
           "SELECT name FROM provinces ORDER BY name LIMIT 1 OFFSET 1");
}

TEST(the_seed_pipeline_is_accepted) {
  accepted("CREATE TABLE sink (province_id INT, window_start TIMESTAMP(3),\n"
           "  window_end TIMESTAMP(3), pay_amount DOUBLE)\n"
           "WITH ('connector' = 'kafka', 'topic' = 'sink', 'format' = 'json',\n"
           "  'properties.bootstrap.servers' = '127.0.0.1:9092');\n"
           "INSERT INTO sink\n"
           "SELECT provinceId, window_start, window_end, SUM(payAmount)\n"
           "FROM TABLE(\n"
           "  HOP(TABLE pay, DESCRIPTOR(createTime), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))\n"
           "GROUP BY provinceId, window_start, window_end");
}

/* ---- the real-time trigger ---- */

#define REAL_TIME "SET 'dipper.trigger' = 'real-time 5 s';\n"
#define OUT_TABLE "CREATE TABLE rt_out (orderId BIGINT, amount DOUBLE) WITH ('connector' = 'kafka',\n" \
                  "  'topic' = 'rt_out', 'format' = 'json', 'properties.bootstrap.servers' = '127.0.0.1:9092');\n"

/* The last statement's real-time check: the number of diagnostics. */
static int fx_realtime(fx *f) {
  dp_query_plan *q = fx_plan(f);
  if (!q) return -1;
  dp_spark_realtime_check(q, dp_catalog_option(f->db->catalog, "dipper.trigger"), &f->d);
  return f->d.count;
}

TEST(real_time_runs_stateless_queries_only) {
  fx f;
  fx_open(&f, REAL_TIME OUT_TABLE
          "INSERT INTO rt_out SELECT orderId, payAmount * 2 FROM pay WHERE payAmount > 0");
  CHECK_EQ(f.compiled, DIPPER_OK);
  CHECK_EQ(fx_realtime(&f), 0);
  fx_close(&f);
  fx_open(&f, REAL_TIME OUT_TABLE
          "INSERT INTO rt_out SELECT orderId, SUM(payAmount) FROM pay\n"
          "GROUP BY orderId, TUMBLE(createTime, INTERVAL '1' MINUTE)");
  CHECK_EQ(f.compiled, DIPPER_OK);
  CHECK_EQ(fx_realtime(&f), 1);
  if (f.d.count == 1) {
    CHECK_EQ(f.d.items[0].code, DIPPER_STREAMING);
    CHECK_EQ(f.d.items[0].span.line, 5); /* the GROUP BY */
    CHECK_CONTAINS(f.d.items[0].message, "an aggregation keeps state between micro-batches, and "
                                          "Spark's real-time mode ('dipper.trigger' = 'real-time 5 s') "
                                          "runs stateless queries only");
    CHECK_CONTAINS(f.d.items[0].message, "use a 'processing-time' trigger");
  }
  fx_close(&f);
  /* a join of two streams keeps both sides; one with a bounded table does not */
  fx_open(&f, REAL_TIME OUT_TABLE
          "INSERT INTO rt_out SELECT pay.orderId, payAmount FROM pay JOIN ship\n"
          "ON pay.orderId = ship.orderId AND shipTime BETWEEN createTime AND createTime + INTERVAL '1' HOUR");
  CHECK_EQ(f.compiled, DIPPER_OK);
  CHECK_EQ(fx_realtime(&f), 1);
  if (f.d.count == 1) CHECK_CONTAINS(f.d.items[0].message, "a join of two streams keeps state");
  fx_close(&f);
  /* without the real-time trigger nothing is asked */
  fx_open(&f, OUT_TABLE "INSERT INTO rt_out SELECT orderId, SUM(payAmount) FROM pay\n"
                        "GROUP BY orderId, TUMBLE(createTime, INTERVAL '1' MINUTE)");
  CHECK_EQ(f.compiled, DIPPER_OK);
  CHECK_EQ(fx_realtime(&f), 0);
  fx_close(&f);
}

/* The start command for a server of `version`: its bytes in *bytes (malloc'd). */
static int realtime_start(fx *f, const char *version, uint8_t **bytes, size_t *len) {
  dp_query_plan *q = fx_plan(f);
  if (!q || q->nroots != 1) return -1;
  dp_spark_ctx ctx = {f->arena, &f->d, NULL, NULL};
  dp_spark_stream_opts o;
  memset(&o, 0, sizeof o);
  o.trigger = "real-time 5 s";
  o.checkpoint_dir = "/tmp/dipper-rt-check";
  o.server_version = version;
  Spark__Connect__Plan *plan = NULL;
  int rc = dp_spark_stream_start_plan(&ctx, q, q->roots[0], &o, &plan);
  if (rc != DIPPER_OK) return rc;
  *len = spark__connect__plan__get_packed_size(plan);
  *bytes = malloc(*len);
  if (!*bytes) return DIPPER_NOMEM;
  spark__connect__plan__pack(plan, *bytes);
  return DIPPER_OK;
}

static bool has_bytes(const uint8_t *p, size_t n, const void *want, size_t m) {
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp(p + i, want, m) == 0) return true;
  return false;
}

TEST(real_time_trigger_on_the_wire) {
  fx f;
  fx_open(&f, REAL_TIME OUT_TABLE "INSERT INTO rt_out SELECT orderId, payAmount FROM pay");
  CHECK_EQ(f.compiled, DIPPER_OK);
  uint8_t *b = NULL;
  size_t n = 0;
  /* Spark 4.2: WriteStreamOperationStart field 100 (tag bytes a2 06), a string */
  CHECK_EQ(realtime_start(&f, "4.2.0", &b, &n), DIPPER_OK);
  static const uint8_t field[] = {0xa2, 0x06, 9, '5', ' ', 's', 'e', 'c', 'o', 'n', 'd', 's'};
  CHECK(b && has_bytes(b, n, field, sizeof field));
  /* output_mode (field 9) "update": the mode real-time queries run in */
  static const uint8_t mode[] = {0x4a, 6, 'u', 'p', 'd', 'a', 't', 'e'};
  CHECK(b && has_bytes(b, n, mode, sizeof mode));
  free(b);
  b = NULL;
  /* a 4.1 server would ignore the field and run its default trigger: refused */
  CHECK_EQ(realtime_start(&f, "4.1.1", &b, &n), DIPPER_UNSUPPORTED);
  CHECK(b == NULL);
  CHECK(f.d.count >= 1);
  if (f.d.count >= 1) {
    CHECK_CONTAINS(f.d.items[f.d.count - 1].message,
                   "dipper.trigger 'real-time 5 s': Spark's real-time mode is reachable through "
                   "Spark Connect from Spark 4.2 on, and the server runs Spark 4.1.1");
    CHECK_CONTAINS(f.d.items[f.d.count - 1].message, "use 'processing-time 5 s' here");
  }
  fx_close(&f);
}

int main(void) { return RUN_TESTS(); }
