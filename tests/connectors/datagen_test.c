/*
** datagen_test.c — the datagen source: the same seed gives the same rows
** however they are cut into batches and chunks, options (sequence, min/max,
** length, null-rate, max-past) hold, the synthetic clock of a bounded run,
** the end of a bounded source, and a run through the public API.
*/
#include "conn_harness.h"
#include "test.h"

typedef struct gen {
  dipper *db;
  dp_arena *arena;
  dp_diags diags;
  dp_source src;
  dp_batch *batch;
} gen;

static int gen_open(gen *g, const char *ddl, const char *table) {
  memset(g, 0, sizeof *g);
  dipper_open(&g->db, NULL);
  int rc = h_run(g->db, ddl, NULL);
  if (rc) return rc;
  const dp_table_def *t = dp_catalog_table(g->db->catalog, table);
  if (!t) return DIPPER_NAME;
  g->arena = dp_arena_new(0);
  dp_diags_init(&g->diags, g->arena, NULL, NULL, 0);
  g->src.cls = dp_source_find("datagen");
  g->src.db = g->db;
  g->src.table = t;
  g->src.schema = &t->schema;
  g->src.diags = &g->diags;
  g->batch = dp_batch_new(&t->schema, 0);
  return g->src.cls->open(&g->src);
}

static void gen_close(gen *g) {
  if (g->src.state) g->src.cls->close(&g->src);
  dp_batch_free(g->batch);
  dp_arena_free(g->arena);
  dipper_close(g->db);
}

/* Read every planned batch (each capped at batch_rows) in chunks of `chunk`
** rows, and return all rows as JSON lines (the caller frees). */
static char *gen_all(gen *g, int64_t batch_rows, int64_t chunk, int *nbatches) {
  dp_buf out = DP_BUF_INIT;
  *nbatches = 0;
  for (;;) {
    bool exhausted = false, done = false;
    if (g->src.cls->plan_batch(&g->src, batch_rows, &exhausted) != DIPPER_OK || exhausted) break;
    while (!done) {
      dp_batch_clear(g->batch);
      if (g->src.cls->read(&g->src, g->batch, chunk, &done) != DIPPER_OK) break;
      for (int64_t r = 0; r < g->batch->nrows; r++) {
        dp_json_encode_row(g->batch, r, &out);
        dp_buf_putc(&out, '\n');
      }
    }
    g->src.cls->commit(&g->src);
    (*nbatches)++;
  }
  return dp_buf_take(&out);
}

#define DDL \
    "CREATE TABLE g (id BIGINT, k INT, name STRING, price DECIMAL(8, 2), w DOUBLE, " \
    "ts TIMESTAMP(3), flag BOOLEAN, tags ARRAY<INT>, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) " \
    "WITH ('connector' = 'datagen', 'number-of-rows' = '500', 'seed' = '%s', " \
    "'rows-per-second' = '%s', " \
    "'fields.id.kind' = 'sequence', 'fields.id.start' = '10', 'fields.id.end' = '100000', " \
    "'fields.k.min' = '-3', 'fields.k.max' = '3', 'fields.name.length' = '6', " \
    "'fields.price.min' = '1', 'fields.price.max' = '2', 'fields.w.null-rate' = '0.5', " \
    "'fields.ts.max-past' = '2 s', 'fields.tags.length' = '2')"

static char *ddl_with(const char *seed, const char *rate) {
  static char buf[2048];
  snprintf(buf, sizeof buf, DDL, seed, rate);
  return buf;
}

TEST(same_seed_same_rows_however_cut) {
  gen a, b, c;
  CHECK_EQ(gen_open(&a, ddl_with("42", "0"), "g"), DIPPER_OK);
  CHECK_EQ(gen_open(&b, ddl_with("42", "0"), "g"), DIPPER_OK);
  CHECK_EQ(gen_open(&c, ddl_with("43", "0"), "g"), DIPPER_OK);
  int na, nb, nc;
  char *ra = gen_all(&a, 0, 4096, &na);
  char *rb = gen_all(&b, 37, 5, &nb); /* many small batches and chunks */
  char *rc = gen_all(&c, 0, 4096, &nc);
  CHECK(ra && rb && rc);
  CHECK_EQ(na, 1);
  CHECK_EQ(nb, 14); /* 500 rows in batches of 37 */
  CHECK_STR(ra, rb);
  CHECK(strcmp(ra, rc) != 0);
  /* 500 lines */
  int lines = 0;
  for (const char *p = ra; *p; p++) lines += *p == '\n';
  CHECK_EQ(lines, 500);
  free(ra);
  free(rb);
  free(rc);
  gen_close(&a);
  gen_close(&b);
  gen_close(&c);
}

TEST(options_shape_the_values) {
  gen g;
  CHECK_EQ(gen_open(&g, ddl_with("7", "0"), "g"), DIPPER_OK);
  bool exhausted = false, done = false;
  CHECK_EQ(g.src.cls->plan_batch(&g.src, 0, &exhausted), DIPPER_OK);
  CHECK(!exhausted);
  CHECK_EQ(g.src.cls->read(&g.src, g.batch, 1000, &done), DIPPER_OK);
  CHECK(done);
  dp_batch *b = g.batch;
  CHECK_EQ(b->nrows, 500);
  int nulls = 0, ordered = 1;
  int64_t max_seen = INT64_MIN;
  for (int64_t r = 0; r < b->nrows; r++) {
    CHECK_EQ(dp_vector_get_i64(b->cols[0], r), 10 + r);
    int64_t k = dp_vector_get_i64(b->cols[1], r);
    CHECK(k >= -3 && k <= 3);
    size_t n;
    dp_vector_get_str(b->cols[2], r, &n);
    CHECK_EQ(n, 6);
    dp_i128 price = dp_vector_get_dec(b->cols[3], r);
    CHECK(price >= 100 && price <= 200);
    nulls += dp_vector_is_null(b->cols[4], r);
    /* the synthetic clock: 2024-01-01 plus 100 µs per row (no rate set),
    ** minus up to 2 s, truncated to milliseconds */
    int64_t ts = dp_vector_get_i64(b->cols[5], r);
    int64_t clock = 1704067200000000LL + r * 100;
    CHECK(ts <= clock && ts >= clock - 2000000 - 1000);
    CHECK_EQ(ts % 1000, 0);
    if (r > 0 && ts < max_seen - 2000000) ordered = 0;
    if (ts > max_seen) max_seen = ts;
    int64_t s, e;
    dp_vector_list_bounds(b->cols[7], r, &s, &e);
    CHECK_EQ(e - s, 2);
  }
  CHECK(ordered); /* out of order by at most max-past: a 2 s watermark drops nothing */
  CHECK(nulls > 150 && nulls < 350);
  g.src.cls->commit(&g.src);
  CHECK_EQ(g.src.cls->plan_batch(&g.src, 0, &exhausted), DIPPER_OK);
  CHECK(exhausted);
  gen_close(&g);
}

TEST(sequence_ends_the_source_and_bad_options) {
  gen g;
  CHECK_EQ(gen_open(&g,
                    "CREATE TABLE s (n INT, label STRING) WITH ('connector' = 'datagen', "
                    "'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '5', "
                    "'fields.label.kind' = 'sequence', 'fields.label.start' = '100', "
                    "'fields.label.end' = '200', 'fields.n.null-rate' = '0')",
                    "s"),
           DIPPER_OK);
  int nb;
  char *rows = gen_all(&g, 0, 3, &nb);
  CHECK_STR(rows, "{\"n\":1,\"label\":\"100\"}\n{\"n\":2,\"label\":\"101\"}\n{\"n\":3,\"label\":\"102\"}\n"
                  "{\"n\":4,\"label\":\"103\"}\n{\"n\":5,\"label\":\"104\"}\n");
  free(rows);
  gen_close(&g);

  CHECK_EQ(gen_open(&g,
                    "CREATE TABLE s (t TIMESTAMP(3)) WITH ('connector' = 'datagen', "
                    "'fields.t.kind' = 'sequence', 'fields.t.start' = '1', 'fields.t.end' = '5')",
                    "s"),
           DIPPER_OPTION);
  CHECK(g.diags.count == 1 && strstr(g.diags.items[0].message, "cannot be a sequence"));
  gen_close(&g);
}

TEST(through_the_api) {
  dipper *db;
  dipper_open(&db, NULL);
  const char *msg;
  int rc = h_run(db,
                 "CREATE TABLE g (id INT, v DOUBLE) WITH ('connector' = 'datagen', "
                 "'number-of-rows' = '1000', 'seed' = '1', 'fields.id.kind' = 'sequence', "
                 "'fields.id.start' = '0', 'fields.id.end' = '999');"
                 "CREATE TABLE out (id INT, v DOUBLE) WITH ('connector' = 'memory');"
                 "INSERT INTO out SELECT id, v FROM g WHERE id % 10 = 0;",
                 &msg);
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) fprintf(stderr, "%s\n", msg);
  struct ArrowSchema s;
  struct ArrowArray a;
  CHECK_EQ(dipper_memory_fetch(db, "out", &s, &a), DIPPER_OK);
  if (a.release) {
    CHECK_EQ(a.length, 100);
    CHECK_EQ(a.n_children, 2);
    int64_t sum = 0;
    for (int64_t r = 0; r < a.length; r++) sum += h_i64(&a, &s, 0, r);
    CHECK_EQ(sum, 49500);
    a.release(&a);
    s.release(&s);
  }
  dipper_close(db);
}

int main(void) { return RUN_TESTS(); }
