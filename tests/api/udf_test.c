/*
** udf_test.c — user-defined C functions through dipper.h: a scalar function
** (Nexmark q14's count_char) and an aggregate (a sum of BIGINTs), in SELECT,
** WHERE, GROUP BY, OVER and a streaming window; errors raised by a function
** with its message and row; the user data's destructor; refusals (Spark, a
** computed column, bad registrations); and a streaming window aggregate
** whose C states come back from a checkpoint after a restart.
*/
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dipper.h"
#include "test.h"

/* ---- Arrow helpers of a function's author ---- */

static bool is_valid(const struct ArrowArray *a, int64_t r) {
  const uint8_t *v = a->null_count ? a->buffers[0] : NULL;
  int64_t j = a->offset + r;
  return !v || ((v[j >> 3] >> (j & 7)) & 1);
}

static const char *str_at(const struct ArrowArray *a, int64_t r, int32_t *len) {
  const int32_t *off = a->buffers[1];
  int64_t j = a->offset + r;
  *len = off[j + 1] - off[j];
  return (const char *)a->buffers[2] + off[j];
}

/* What an array made by make_fixed owns. */
typedef struct fixed_owned {
  void *valid, *values;
  const void *buffers[2];
} fixed_owned;

static void release_fixed(struct ArrowArray *a) {
  fixed_owned *o = a->private_data;
  free(o->valid);
  free(o->values);
  free(o);
  a->release = NULL;
}

/* An array of n fixed-width values of `width` bytes (values and validity
** malloc'd, freed by its release); the caller fills *values and *valid. */
static void make_fixed(struct ArrowArray *out, int64_t n, size_t width, void **values,
                       uint8_t **valid) {
  memset(out, 0, sizeof *out);
  out->length = n;
  out->n_buffers = 2;
  fixed_owned *o = calloc(1, sizeof *o);
  o->valid = *valid = calloc((size_t)(n + 8) / 8, 1);
  o->values = *values = calloc((size_t)(n ? n : 1), width);
  o->buffers[0] = o->valid;
  o->buffers[1] = o->values;
  out->buffers = o->buffers;
  out->private_data = o;
  out->release = release_fixed;
}

static void set_null(struct ArrowArray *out, uint8_t *valid, int64_t r, bool is_null) {
  if (is_null)
    out->null_count++;
  else
    valid[r >> 3] |= (uint8_t)(1u << (r & 7));
}

/* ---- count_char(s STRING, c STRING) RETURNS INT: how often c occurs in s ---- */

typedef struct counter {
  int calls;      /* batches the function was called with */
  int destroyed;  /* times the destructor ran */
} counter;

static void destroy_counter(void *user) { ((counter *)user)->destroyed++; }

static int count_char(dipper_function_ctx *ctx, int nargs, const struct ArrowSchema *const *schemas,
                      const struct ArrowArray *const *args, int64_t nrows, struct ArrowArray *out) {
  counter *u = dipper_function_user(ctx);
  u->calls++;
  if (nargs != 2 || strcmp(schemas[0]->format, "u") != 0 || strcmp(schemas[1]->format, "u") != 0)
    return dipper_function_error(ctx, -1, "wants two strings");
  int32_t *v;
  uint8_t *valid;
  make_fixed(out, nrows, sizeof *v, (void **)&v, &valid);
  for (int64_t r = 0; r < nrows; r++) {
    bool null = !is_valid(args[0], r) || !is_valid(args[1], r);
    set_null(out, valid, r, null);
    if (null) continue;
    int32_t n, m;
    const char *s = str_at(args[0], r, &n), *c = str_at(args[1], r, &m);
    if (m != 1) {
      out->release(out);
      return dipper_function_error(ctx, r, "the character must be one character");
    }
    v[r] = 0;
    for (int32_t i = 0; i < n; i++) v[r] += s[i] == c[0];
  }
  return 0;
}

/* ---- csum(v BIGINT) RETURNS BIGINT: a sum, NULL for no values; fails on 13 ---- */

typedef struct sum_state {
  int64_t sum;
  int64_t n;
} sum_state;

static void sum_init(void *user, void *state) {
  (void)user;
  sum_state *s = state;
  s->sum = 0;
  s->n = 0;
}

static int sum_update(dipper_function_ctx *ctx, int nargs, const struct ArrowSchema *const *schemas,
                      const struct ArrowArray *const *args, int64_t nrows, void *const *states) {
  (void)nargs;
  if (strcmp(schemas[0]->format, "l") != 0) return dipper_function_error(ctx, -1, "wants a BIGINT");
  const int64_t *v = args[0]->buffers[1];
  for (int64_t r = 0; r < nrows; r++) {
    if (!is_valid(args[0], r)) continue;
    int64_t x = v[args[0]->offset + r];
    if (x == 13) return dipper_function_error(ctx, r, "13 is unlucky");
    sum_state *s = states[r];
    s->sum += x;
    s->n++;
  }
  return 0;
}

static int sum_combine(dipper_function_ctx *ctx, const void *src, void *dst) {
  (void)ctx;
  const sum_state *a = src;
  sum_state *b = dst;
  b->sum += a->sum;
  b->n += a->n;
  return 0;
}

static int sum_finalize(dipper_function_ctx *ctx, int64_t n, const void *const *states,
                        struct ArrowArray *out) {
  (void)ctx;
  int64_t *v;
  uint8_t *valid;
  make_fixed(out, n, sizeof *v, (void **)&v, &valid);
  for (int64_t k = 0; k < n; k++) {
    const sum_state *s = states[k];
    set_null(out, valid, k, s->n == 0);
    v[k] = s->sum;
  }
  return 0;
}

static const dipper_aggregate_fns sum_fns = {sizeof(dipper_aggregate_fns), sizeof(sum_state), sum_init,
                                             sum_update, sum_combine, sum_finalize};

static const char *const str2[] = {"STRING", "STRING"};
static const char *const big1[] = {"BIGINT"};

static void register_all(dipper *db, counter *u, counter *agg_user) {
  CHECK_EQ(dipper_create_scalar_function(db, "count_char", 2, str2, "INT", DIPPER_FUNCTION_DETERMINISTIC,
                                         count_char, u, destroy_counter),
           DIPPER_OK);
  CHECK_EQ(dipper_create_aggregate_function(db, "csum", 1, big1, "BIGINT", 0, &sum_fns, agg_user,
                                            destroy_counter),
           DIPPER_OK);
}

static void print_diags(dipper *db) {
  for (int i = 0; i < dipper_diag_count(db); i++) {
    char *r = dipper_diag_render(db, i);
    fprintf(stderr, "  (diagnostic) %s", r ? r : "(no render)\n");
    dipper_free(r);
  }
}

static dipper_program *compile(dipper *db, const char *sql) {
  dipper_program *prog = NULL;
  if (dipper_compile(db, sql, (size_t)-1, "u.sql", &prog) != DIPPER_OK) print_diags(db);
  return prog;
}

/* Every row of statement `stmt`'s result as "a|b\n" lines (into buf). */
static const char *rows_of(dipper_program *prog, int stmt, char *buf, size_t cap) {
  buf[0] = '\0';
  struct ArrowArrayStream st;
  if (dipper_execute(prog, stmt, &st) != DIPPER_OK) return "(failed)";
  struct ArrowSchema schema;
  CHECK_EQ(st.get_schema(&st, &schema), 0);
  size_t at = 0;
  for (;;) {
    struct ArrowArray a;
    if (st.get_next(&st, &a) != 0 || !a.release) break;
    char **cells = NULL;
    CHECK_EQ(dipper_format_values(&schema, &a, 0, &cells), DIPPER_OK);
    for (int64_t r = 0; cells && r < a.length; r++)
      for (int64_t c = 0; c < a.n_children; c++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", cells[r * a.n_children + c],
                               c + 1 == a.n_children ? "\n" : "|");
    dipper_free(cells);
    a.release(&a);
  }
  schema.release(&schema);
  st.release(&st);
  return buf;
}

static const char *const words =
    "SET 'execution.runtime-mode' = 'batch';\n"
    "CREATE TABLE w (id BIGINT, s STRING, g STRING) WITH ('connector' = 'memory');\n";
static const char *const words_rows =
    "{\"id\": 1, \"s\": \"banana\", \"g\": \"x\"}\n"
    "{\"id\": 2, \"s\": \"apple\", \"g\": \"y\"}\n"
    "{\"id\": 3, \"s\": null, \"g\": \"x\"}\n"
    "{\"id\": 4, \"s\": \"papaya\", \"g\": \"x\"}\n";

TEST(scalar_function_in_select_where_and_group_by) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  counter u = {0, 0}, a = {0, 0};
  register_all(db, &u, &a);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "%sSELECT id, count_char(s, 'a') FROM w WHERE count_char(s, 'n') = 0 ORDER BY id;\n"
           "SELECT count_char(g, 'x') AS k, COUNT(*) FROM w GROUP BY count_char(g, 'x') ORDER BY k;\n"
           "SELECT id, csum(id) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w "
           "ORDER BY id;\n"
           "SELECT g, csum(id), csum(id) FILTER (WHERE id > 10), csum(DISTINCT id * 0 + 1) FROM w "
           "GROUP BY g ORDER BY g;\n",
           words);
  dipper_program *prog = compile(db, sql);
  CHECK(prog != NULL);
  CHECK_EQ(dipper_memory_push_json(db, "w", words_rows, (size_t)-1), DIPPER_OK);
  char buf[1024];
  /* banana has n's; a NULL string gives NULL, and NULL = 0 is not true */
  CHECK_STR(rows_of(prog, 2, buf, sizeof buf), "2|1\n4|3\n");
  CHECK_STR(rows_of(prog, 3, buf, sizeof buf), "0|1\n1|3\n");
  CHECK_STR(rows_of(prog, 4, buf, sizeof buf), "1|1\n2|3\n3|5\n4|7\n");
  CHECK_STR(rows_of(prog, 5, buf, sizeof buf), "x|8|NULL|1\ny|2|NULL|1\n");
  CHECK(u.calls > 0);
  /* EXPLAIN shows the call as it is */
  char *text = NULL;
  CHECK_EQ(dipper_explain(prog, DIPPER_EXPLAIN_NO_STREAMING, &text), DIPPER_OK);
  CHECK(text && strstr(text, "COUNT_CHAR(s, 'a')") != NULL);
  dipper_free(text);
  dipper_program_free(prog);
  CHECK_EQ(u.destroyed, 0);
  dipper_close(db);
  CHECK_EQ(u.destroyed, 1);
  CHECK_EQ(a.destroyed, 1);
}

TEST(function_errors_fail_the_batch_with_message_and_row) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  counter u = {0, 0}, a = {0, 0};
  register_all(db, &u, &a);
  char sql[1024];
  snprintf(sql, sizeof sql,
           "%sSELECT count_char(s, g || g) FROM w;\n"
           "SELECT g, csum(id + 9) FROM w GROUP BY g;\n",
           words);
  dipper_program *prog = compile(db, sql);
  CHECK(prog != NULL);
  CHECK_EQ(dipper_memory_push_json(db, "w", words_rows, (size_t)-1), DIPPER_OK);
  struct ArrowArrayStream st;
  CHECK_EQ(dipper_execute(prog, 2, &st), DIPPER_DATA);
  const char *msg = dipper_errmsg(db);
  CHECK(strstr(msg, "function count_char: the character must be one character") != NULL);
  CHECK(strstr(msg, "row 0: count_char('banana', 'xx')") != NULL);
  /* the aggregate's update: 4 + 9 = 13 is the second row of group x */
  CHECK_EQ(dipper_execute(prog, 3, &st), DIPPER_DATA);
  msg = dipper_errmsg(db);
  CHECK(strstr(msg, "function csum: 13 is unlucky") != NULL);
  CHECK(strstr(msg, "csum(13)") != NULL);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(destructor_runs_once_the_last_program_lets_go) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  counter u = {0, 0}, a = {0, 0}, other = {0, 0};
  register_all(db, &u, &a);
  dipper_program *prog = compile(db, "SELECT count_char('abc', 'b');");
  CHECK(prog != NULL);
  /* replaced: the program still holds the old one */
  CHECK_EQ(dipper_create_scalar_function(db, "count_char", 2, str2, "INT", 0, count_char, &other,
                                         destroy_counter),
           DIPPER_OK);
  CHECK_EQ(u.destroyed, 0);
  char buf[256];
  CHECK_STR(rows_of(prog, 0, buf, sizeof buf), "1\n");
  CHECK(u.calls == 1 && other.calls == 0);
  dipper_program_free(prog);
  CHECK_EQ(u.destroyed, 1);
  /* dropped by SQL: nothing uses it, so it goes at once */
  dipper_program *drop = compile(db, "DROP FUNCTION count_char; DROP FUNCTION IF EXISTS count_char;");
  CHECK(drop != NULL);
  CHECK_EQ(other.destroyed, 1);
  dipper_program_free(drop);
  CHECK_EQ(dipper_drop_function(db, "csum"), DIPPER_OK);
  CHECK_EQ(a.destroyed, 1);
  CHECK_EQ(dipper_drop_function(db, "csum"), DIPPER_NAME);
  /* a failed compile lets go too */
  register_all(db, &u, &a);
  CHECK(compile(db, "SELECT count_char('a', 'a'); SELECT nope;") == NULL);
  dipper_close(db);
  CHECK_EQ(u.destroyed, 2);
  CHECK_EQ(a.destroyed, 2);
  CHECK_EQ(other.destroyed, 1);
}

TEST(registrations_and_uses_that_are_refused) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  counter u = {0, 0};
  CHECK_EQ(dipper_create_scalar_function(db, "upper", 2, str2, "INT", 0, count_char, &u, NULL),
           DIPPER_DUPLICATE);
  CHECK_EQ(dipper_create_scalar_function(db, "f", 2, str2, "NOTATYPE", 0, count_char, &u, NULL),
           DIPPER_TYPE);
  CHECK(strstr(dipper_errmsg(db), "NOTATYPE") != NULL);
  CHECK_EQ(dipper_create_scalar_function(db, "f", 1, NULL, "INT", 0, count_char, &u, NULL), DIPPER_MISUSE);
  CHECK_EQ(dipper_create_scalar_function(db, "f", 0, NULL, "INT", 0, NULL, &u, NULL), DIPPER_MISUSE);
  dipper_aggregate_fns bad = sum_fns;
  bad.finalize = NULL;
  CHECK_EQ(dipper_create_aggregate_function(db, "g", 1, big1, "BIGINT", 0, &bad, &u, NULL), DIPPER_MISUSE);
  dipper_program *prog = compile(db, "CREATE FUNCTION sq(x INT) RETURNS INT RETURN x * x;");
  CHECK(prog != NULL);
  dipper_program_free(prog);
  CHECK_EQ(dipper_create_scalar_function(db, "sq", 2, str2, "INT", 0, count_char, &u, NULL),
           DIPPER_DUPLICATE);
  counter v = {0, 0}, a = {0, 0};
  register_all(db, &v, &a);
  /* wrong argument types and counts, at their place */
  dipper_program *p2 = NULL;
  CHECK_EQ(dipper_compile(db, "SELECT count_char(1, 'a');", (size_t)-1, "x.sql", &p2), DIPPER_TYPE);
  CHECK(strstr(dipper_errmsg(db), "count_char(STRING, STRING) RETURNS INT") != NULL);
  CHECK_EQ(dipper_compile(db, "SELECT count_char('a');", (size_t)-1, "x.sql", &p2), DIPPER_TYPE);
  CHECK_EQ(dipper_compile(db, "SELECT csum(1) OVER ();", (size_t)-1, "x.sql", &p2), DIPPER_OK);
  dipper_program_free(p2);
  /* not in a table's computed column: the table would outlive the function */
  CHECK_EQ(dipper_compile(db,
                          "CREATE TABLE t (s STRING, n AS count_char(s, 'a')) WITH ('connector' = "
                          "'memory');",
                          (size_t)-1, "x.sql", &p2),
           DIPPER_UNSUPPORTED);
  CHECK(strstr(dipper_errmsg(db), "computed column") != NULL);
  {
    dipper_program *show = compile(db, "CREATE FUNCTION jf(s STRING) RETURNS INT AS 'a.B';\n"
                                       "SHOW FUNCTIONS;");
    char buf[65536];
    const char *rows = rows_of(show, 1, buf, sizeof buf);
    CHECK(strstr(rows, "jf|scalar|jf(STRING) RETURNS INT AS 'a.B' (Java)\n") != NULL);
    CHECK(strstr(rows, "count_char|scalar|count_char(STRING, STRING) RETURNS INT (C)\n") != NULL);
    CHECK(strstr(rows, "csum|aggregate|csum(BIGINT) RETURNS BIGINT (C)\n") != NULL);
    CHECK(strstr(rows, "sq|scalar|sq(x INT) RETURNS INT (SQL)\n") != NULL);
    dipper_program_free(show);
  }
  dipper_close(db);
  CHECK_EQ(v.destroyed, 1);
}

TEST(spark_refuses_c_functions_at_compile_time) {
  /* compile needs no server: the check runs on the plan */
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, "sc://127.0.0.1:1"), DIPPER_OK);
  counter u = {0, 0}, a = {0, 0};
  register_all(db, &u, &a);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db,
                          "SET 'execution.runtime-mode' = 'batch';\n"
                          "CREATE TABLE t (s STRING) WITH ('connector' = 'memory');\n"
                          "SELECT count_char(s, 'a') FROM t;\n",
                          (size_t)-1, "s.sql", &prog),
           DIPPER_UNSUPPORTED);
  CHECK(strstr(dipper_errmsg(db), "is a C function") != NULL);
  CHECK(strstr(dipper_errmsg(db), "Spark cannot call C code") != NULL);
  CHECK_EQ(dipper_diag_count(db) >= 1, 1);
  CHECK_EQ(dipper_compile(db, "SELECT csum(CAST(1 AS BIGINT));", (size_t)-1, "s.sql", &prog),
           DIPPER_UNSUPPORTED);
  CHECK(strstr(dipper_errmsg(db), "csum(..) is a C function (dipper_create_aggregate_function)") != NULL);
  /* a SQL function expands to built-ins: fine on Spark */
  CHECK_EQ(dipper_compile(db,
                          "CREATE FUNCTION twice(x INT) RETURNS INT RETURN x * 2;\n"
                          "SELECT twice(3);\n",
                          (size_t)-1, "s.sql", &prog),
           DIPPER_OK);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(session_windows_merge_c_aggregate_states) {
  /* rows at 1 s and 10 s open two sessions (gap 5 s); 6 s bridges them, so
  ** their states are combined; 60 s closes the merged one */
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  counter u = {0, 0}, a = {0, 0};
  register_all(db, &u, &a);
  dipper_program *prog = compile(
      db,
      "CREATE TABLE ev (v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '20' SECOND) WITH ('connector' = 'memory');\n"
      "CREATE TABLE out (ws TIMESTAMP(3), we TIMESTAMP(3), total BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out SELECT window_start, window_end, csum(v) FROM TABLE(SESSION(TABLE ev, "
      "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end;\n");
  CHECK(prog != NULL);
  dipper_query **qs = NULL;
  int nq = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &nq), DIPPER_OK);
  const char *pushes[] = {"{\"v\": 1, \"ts\": \"2024-01-01 00:00:01\"}\n"
                          "{\"v\": 10, \"ts\": \"2024-01-01 00:00:10\"}\n",
                          "{\"v\": 100, \"ts\": \"2024-01-01 00:00:06\"}\n",
                          "{\"v\": 1000, \"ts\": \"2024-01-01 00:01:00\"}\n"};
  for (int p = 0; p < 3; p++) {
    CHECK_EQ(dipper_memory_push_json(db, "ev", pushes[p], (size_t)-1), DIPPER_OK);
    for (int k = 0; k < 2; k++) {
      int finished = 0;
      CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
    }
  }
  struct ArrowSchema schema;
  struct ArrowArray array;
  CHECK_EQ(dipper_memory_fetch(db, "out", &schema, &array), DIPPER_OK);
  char **cells = NULL;
  CHECK_EQ(dipper_format_values(&schema, &array, 0, &cells), DIPPER_OK);
  CHECK_EQ(array.length, 1);
  if (cells && array.length == 1) {
    CHECK_STR(cells[0], "2024-01-01 00:00:01.000");
    CHECK_STR(cells[1], "2024-01-01 00:00:15.000");
    CHECK_STR(cells[2], "111");
  }
  dipper_free(cells);
  array.release(&array);
  schema.release(&schema);
  dipper_query_free_all(qs, nq);
  dipper_program_free(prog);
  dipper_close(db);
}

/* ---- a streaming window with a C aggregate, restored from a checkpoint ---- */

static const char *const stream_sql =
    "CREATE TABLE ev (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH "
    "('connector' = 'memory');\n"
    "CREATE TABLE out (k STRING, ws TIMESTAMP(3), total BIGINT, n BIGINT) WITH ('connector' = 'memory');\n"
    "INSERT INTO out SELECT k, window_start, csum(v), COUNT(*) FROM TABLE(TUMBLE(TABLE ev, "
    "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end;\n";

/* Batch 0: a, b and 30 more keys in the window [0 s, 10 s); batch 1 changes
** a alone (so its state file can be a delta of one group); batch 2 adds to a
** and b and moves the watermark past the window. */
static void push_text(int which, char *buf, size_t cap) {
  size_t at = 0;
  if (which == 0) {
    at += (size_t)snprintf(buf + at, cap - at,
                           "{\"k\": \"a\", \"v\": 1, \"ts\": \"2024-01-01 00:00:01\"}\n"
                           "{\"k\": \"a\", \"v\": 2, \"ts\": \"2024-01-01 00:00:02\"}\n"
                           "{\"k\": \"b\", \"v\": 5, \"ts\": \"2024-01-01 00:00:03\"}\n");
    for (int k = 0; k < 30; k++)
      at += (size_t)snprintf(buf + at, cap - at,
                             "{\"k\": \"k%d\", \"v\": %d, \"ts\": \"2024-01-01 00:00:04\"}\n", k,
                             100 + k); /* not 13: csum fails on 13 */
  } else if (which == 1) {
    snprintf(buf, cap, "{\"k\": \"a\", \"v\": 100, \"ts\": \"2024-01-01 00:00:06\"}\n");
  } else {
    snprintf(buf, cap,
             "{\"k\": \"a\", \"v\": 10, \"ts\": \"2024-01-01 00:00:04\"}\n"
             "{\"k\": \"b\", \"v\": 20, \"ts\": \"2024-01-01 00:00:05\"}\n"
             "{\"k\": \"c\", \"v\": 7, \"ts\": \"2024-01-01 00:00:25\"}\n");
  }
}

/* One run on `dir`: pushes 0..npush-1 made (again) in order, steps after each. */
static void run_stream(const char *dir, int npush, char *out, size_t cap, counter *a) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  counter u = {0, 0};
  register_all(db, &u, a);
  char sql[2048];
  snprintf(sql, sizeof sql, "SET 'execution.checkpointing.dir' = '%s';\n%s", dir, stream_sql);
  dipper_program *prog = compile(db, sql);
  CHECK(prog != NULL);
  dipper_query **qs = NULL;
  int nq = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &nq), DIPPER_OK);
  CHECK_EQ(nq, 1);
  char text[4096];
  for (int p = 0; p < npush; p++) {
    push_text(p, text, sizeof text);
    CHECK_EQ(dipper_memory_push_json(db, "ev", text, (size_t)-1), DIPPER_OK);
    for (int s = 0; s < 3; s++) {
      int finished = 0;
      int rc = dipper_query_step(qs[0], &finished);
      CHECK_EQ(rc, DIPPER_OK);
      if (rc) print_diags(db);
    }
  }
  out[0] = '\0';
  struct ArrowSchema schema;
  struct ArrowArray array;
  CHECK_EQ(dipper_memory_fetch(db, "out", &schema, &array), DIPPER_OK);
  char **cells = NULL;
  CHECK_EQ(dipper_format_values(&schema, &array, 0, &cells), DIPPER_OK);
  size_t at = 0;
  for (int64_t r = 0; cells && r < array.length; r++)
    at += (size_t)snprintf(out + at, cap - at, "%s|%s|%s|%s\n", cells[r * 4], cells[r * 4 + 1],
                           cells[r * 4 + 2], cells[r * 4 + 3]);
  dipper_free(cells);
  array.release(&array);
  schema.release(&schema);
  dipper_query_free_all(qs, nq);
  dipper_program_free(prog);
  dipper_close(db);
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

TEST(streaming_window_c_aggregate_restored_from_a_checkpoint) {
  char tmpl[] = "/tmp/dipper-udf-XXXXXX";
  char *dir = mkdtemp(tmpl);
  CHECK(dir != NULL);
  if (!dir) return;
  counter a = {0, 0};
  char out[8192];
  /* the first run sees pushes 0 and 1: the window is still open, nothing out */
  run_stream(dir, 2, out, sizeof out, &a);
  CHECK_STR(out, "");
  CHECK_EQ(a.destroyed, 1);
  /* the restarted run gets every push again; the first two are behind the
  ** checkpoint's position, so what they added comes from the restored C
  ** states (the full state of batch 0, then batch 1's), and the window closes
  ** with all three batches in it */
  run_stream(dir, 3, out, sizeof out, &a);
  CHECK(strstr(out, "a|2024-01-01 00:00:00.000|113|4\n") != NULL);
  CHECK(strstr(out, "b|2024-01-01 00:00:00.000|25|2\n") != NULL);
  CHECK(strstr(out, "k29|2024-01-01 00:00:00.000|129|1\n") != NULL);
  CHECK_EQ(count_lines(out), 32);
  if (count_lines(out) != 32) fprintf(stderr, "out:\n%s", out);
  CHECK_EQ(a.destroyed, 2);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
}

int main(void) { return RUN_TESTS(); }
