/*
** parallel_test.c — a query on N workers ('parallelism.default', exec/parallel.h)
** against the same query on one thread, through the public API: a bounded
** nexmark source split among 2 and 3 workers in many micro-batches, into a
** memory sink.  Stateless pipelines (filter, projection) give the same rows
** in the same order; stateful ones (aggregation in update and append mode,
** DISTINCT, deduplication, joins) the same rows, each key's in the same
** order (the rows compared after a stable sort by key); batch mode too.  A
** query the workers cannot run (a datagen source, a set operation, an
** aggregation without GROUP BY) runs on one thread, says why in a note,
** and gives the same answer.
*/
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dipper.h"
#include "test.h"

#define NEXMARK                                                                             \
  "CREATE TABLE datagen (event_type INT,"                                                   \
  " person ROW<id BIGINT, name STRING, dateTime TIMESTAMP(3)>,"                             \
  " auction ROW<id BIGINT, seller BIGINT, category BIGINT, dateTime TIMESTAMP(3)>,"         \
  " bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING,"                   \
  " dateTime TIMESTAMP(3)>,"                                                                \
  " dateTime AS CASE WHEN event_type = 0 THEN person.dateTime"                              \
  " WHEN event_type = 1 THEN auction.dateTime ELSE bid.dateTime END,"                       \
  " WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)"                              \
  " WITH ('connector' = 'nexmark', 'events.num' = '30000', 'seed' = '11');\n"               \
  "CREATE VIEW bid AS SELECT bid.auction AS auction, bid.bidder AS bidder,"                 \
  " bid.price AS price, bid.channel AS channel, dateTime FROM datagen WHERE event_type = 2;\n"

/* ---- rows as text ---- */

typedef struct text {
  char *data;
  size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->data = realloc(t->data, t->cap);
    CHECK(t->data != NULL);
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
}

static void put_cell(text *t, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t r) {
  char buf[64];
  int64_t i = r + a->offset;
  const uint8_t *valid = a->buffers[0];
  const char *f = s->format;
  if (valid && !((valid[i >> 3] >> (i & 7)) & 1)) {
    put(t, "NULL", 4);
  } else if (strcmp(f, "l") == 0 || strncmp(f, "ts", 2) == 0) {
    put(t, buf, (size_t)snprintf(buf, sizeof buf, "%" PRId64, ((const int64_t *)a->buffers[1])[i]));
  } else if (strcmp(f, "i") == 0) {
    put(t, buf, (size_t)snprintf(buf, sizeof buf, "%d", ((const int32_t *)a->buffers[1])[i]));
  } else if (strcmp(f, "u") == 0) {
    const int32_t *off = a->buffers[1];
    put(t, (const char *)a->buffers[2] + off[i], (size_t)(off[i + 1] - off[i]));
  } else {
    put(t, "?", 1);
    put(t, f, strlen(f));
  }
}

/* Every row of the memory table as "a|b|c\n" lines. */
static text fetch(dipper *db, const char *table) {
  text t = {0};
  put(&t, "", 0);
  struct ArrowSchema schema;
  struct ArrowArray array;
  int rc = dipper_memory_fetch(db, table, &schema, &array);
  if (rc) fprintf(stderr, "fetch: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  for (int64_t r = 0; r < array.length; r++) {
    for (int64_t c = 0; c < array.n_children; c++) {
      if (c) put(&t, "|", 1);
      put_cell(&t, schema.children[c], array.children[c], r);
    }
    put(&t, "\n", 1);
  }
  array.release(&array);
  schema.release(&schema);
  return t;
}

/* The lines stably sorted by their text before `key_fields` '|': each
** key's lines keep their order. */
typedef struct line {
  const char *p;
  size_t len, keylen, at;
} line;

static int by_key(const void *a, const void *b) {
  const line *x = a, *y = b;
  size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
  int c = memcmp(x->p, y->p, n);
  if (c) return c;
  if (x->keylen != y->keylen) return x->keylen < y->keylen ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

static text sort_by_key(const text *in, int key_fields) {
  size_t n = 0;
  for (size_t i = 0; i < in->len; i++) n += in->data[i] == '\n';
  line *ls = calloc(n ? n : 1, sizeof *ls);
  CHECK(ls != NULL);
  const char *p = in->data;
  for (size_t k = 0; k < n; k++) {
    const char *nl = strchr(p, '\n');
    ls[k].p = p;
    ls[k].len = (size_t)(nl - p) + 1;
    ls[k].at = k;
    const char *q = p;
    for (int f = 0; f < key_fields && q < nl; f++) {
      const char *bar = memchr(q, '|', (size_t)(nl - q));
      q = bar ? bar + 1 : nl;
    }
    ls[k].keylen = (size_t)(q - p);
    p = nl + 1;
  }
  qsort(ls, n, sizeof *ls, by_key);
  text out = {0};
  put(&out, "", 0);
  for (size_t k = 0; k < n; k++) put(&out, ls[k].p, ls[k].len);
  free(ls);
  return out;
}

/* ---- running ---- */

typedef struct notes {
  char last[1024];
  int count;
} notes;

static void on_log(void *user, int level, const char *message) {
  notes *n = user;
  if (level != DIPPER_LOG_NOTE || !strstr(message, "runs on one thread")) return;
  snprintf(n->last, sizeof n->last, "%s", message);
  n->count++;
}

/* Run `sql` (after the nexmark DDL) on `workers` and fetch table `out`. */
static text run_on(int workers, const char *settings, const char *sql, notes *log) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  if (log) {
    memset(log, 0, sizeof *log);
    dipper_set_log(db, on_log, log);
  }
  char head[512];
  snprintf(head, sizeof head, "SET 'parallelism.default' = '%d';\nSET 'dipper.max-batch-rows' = '2500';\n%s",
           workers, settings);
  size_t n = strlen(head) + strlen(NEXMARK) + strlen(sql) + 1;
  char *all = malloc(n);
  CHECK(all != NULL);
  snprintf(all, n, "%s%s%s", head, NEXMARK, sql);
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, all, (size_t)-1, "p.sql", &prog);
  if (rc) fprintf(stderr, "compile: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  rc = dipper_run(prog, NULL, NULL);
  if (rc) fprintf(stderr, "run on %d: %s\n", workers, dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  text t = fetch(db, "out_t");
  dipper_program_free(prog);
  dipper_close(db);
  free(all);
  return t;
}

static void check_same(const char *what, const text *one, const text *many, int workers) {
  if (one->len != many->len || memcmp(one->data, many->data, one->len) != 0) {
    fprintf(stderr, "%s: %d workers differ from one thread (%zu vs %zu bytes)\n", what, workers,
            many->len, one->len);
    CHECK(false);
  }
}

/* The same rows in the same order on 2 and 3 workers (key_fields 0), or
** each key's rows in the same order (the first key_fields columns). */
static void same_as_one(const char *what, const char *settings, const char *sql, int key_fields,
                        int64_t min_lines) {
  notes log;
  text one = run_on(1, settings, sql, &log);
  CHECK_EQ(log.count, 0);
  int64_t lines = 0;
  for (size_t i = 0; i < one.len; i++) lines += one.data[i] == '\n';
  if (lines < min_lines) fprintf(stderr, "%s: only %" PRId64 " rows\n", what, lines);
  CHECK(lines >= min_lines);
  text one_sorted = key_fields ? sort_by_key(&one, key_fields) : one;
  for (int workers = 2; workers <= 3; workers++) {
    text many = run_on(workers, settings, sql, &log);
    if (log.count) fprintf(stderr, "%s: %s\n", what, log.last);
    CHECK_EQ(log.count, 0);
    if (key_fields) {
      text sorted = sort_by_key(&many, key_fields);
      check_same(what, &one_sorted, &sorted, workers);
      free(sorted.data);
    } else {
      check_same(what, &one, &many, workers);
    }
    free(many.data);
  }
  if (key_fields) free(one_sorted.data);
  free(one.data);
}

static const char *const BATCH = "SET 'execution.runtime-mode' = 'batch';\n";

TEST(stateless_same_rows_same_order) {
  const char *q0 =
      "CREATE TABLE out_t (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING,"
      " dateTime TIMESTAMP(3)) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT auction, bidder, price, channel, dateTime FROM bid;\n";
  const char *q2 = "CREATE TABLE out_t (auction BIGINT, price BIGINT) WITH ('connector' = 'memory');\n"
                   "INSERT INTO out_t SELECT auction, price * 2 FROM bid WHERE MOD(auction, 7) = 0;\n";
  same_as_one("q0", "", q0, 0, 20000);
  same_as_one("q2", "", q2, 0, 1000);
  same_as_one("q0 batch", BATCH, q0, 0, 20000);
}

TEST(aggregations_per_key_order) {
  const char *hop =
      "CREATE TABLE out_t (auction BIGINT, window_start TIMESTAMP(3), num BIGINT)"
      " WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT auction, window_start, COUNT(*) FROM TABLE(HOP(TABLE bid,"
      " DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))"
      " GROUP BY auction, window_start, window_end;\n";
  /* Update mode: each bidder's running count, last price and every price in
  ** the order they came (LISTAGG: a row order that differs shows). */
  const char *update =
      "CREATE TABLE out_t (bidder BIGINT, n BIGINT, last_price BIGINT, prices STRING)"
      " WITH ('connector' = 'memory');\n"
      "SET 'dipper.output-mode' = 'update';\n"
      "INSERT INTO out_t SELECT bidder, COUNT(*), LAST_VALUE(price),"
      " LISTAGG(CAST(price AS STRING)) FROM bid GROUP BY bidder;\n";
  same_as_one("hop count", "", hop, 2, 1000);
  same_as_one("update count", "", update, 1, 1000);
  same_as_one("hop count batch", BATCH, hop, 2, 1000);
  same_as_one("update count batch", BATCH, update, 1, 100);
}

TEST(distinct_and_dedup) {
  const char *distinct =
      "CREATE TABLE out_t (channel STRING, auction BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT DISTINCT channel, auction FROM bid;\n";
  const char *dedup =
      "CREATE TABLE out_t (bidder BIGINT, auction BIGINT, price BIGINT)"
      " WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT bidder, auction, price FROM (SELECT *, ROW_NUMBER() OVER"
      " (PARTITION BY bidder ORDER BY dateTime) AS rn FROM bid) WHERE rn = 1;\n";
  same_as_one("distinct", "", distinct, 2, 1000);
  same_as_one("dedup", "", dedup, 1, 100);
}

/* Joins: each side sent by its keys; each key's matches in the same order. */
TEST(joins_per_key_order) {
  const char *interval =
      "CREATE VIEW auction AS SELECT auction.id AS id, auction.seller AS seller, dateTime"
      " FROM datagen WHERE event_type = 1;\n"
      "CREATE TABLE out_t (auction BIGINT, price BIGINT, seller BIGINT)"
      " WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT B.auction, B.price, A.seller FROM bid B JOIN auction A"
      " ON B.auction = A.id AND B.dateTime BETWEEN A.dateTime"
      " AND A.dateTime + INTERVAL '10' SECOND;\n";
  const char *left =
      "CREATE VIEW auction AS SELECT auction.id AS id, auction.seller AS seller, dateTime"
      " FROM datagen WHERE event_type = 1;\n"
      "CREATE TABLE out_t (id BIGINT, seller BIGINT, price BIGINT)"
      " WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT A.id, A.seller, B.price FROM auction A LEFT JOIN bid B"
      " ON B.auction = A.id;\n";
  same_as_one("interval join", "", interval, 1, 1000);
  same_as_one("interval join batch", BATCH, interval, 1, 1000);
  same_as_one("left join batch", BATCH, left, 1, 1000);
}

/* What the workers cannot run yet runs on one thread, with a note. */
static void one_thread_with_note(const char *what, const char *settings, const char *sql,
                                 const char *reason) {
  notes log;
  text one = run_on(1, settings, sql, &log);
  CHECK_EQ(log.count, 0);
  text two = run_on(2, settings, sql, &log);
  if (log.count != 1 || !strstr(log.last, reason))
    fprintf(stderr, "%s: %d notes, last '%s', wanted '%s'\n", what, log.count, log.last, reason);
  CHECK_EQ(log.count, 1);
  CHECK(strstr(log.last, reason) != NULL);
  check_same(what, &one, &two, 2);
  free(one.data);
  free(two.data);
}

TEST(falls_back_to_one_thread) {
  one_thread_with_note(
      "datagen", "",
      "CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '500',"
      " 'seed' = '3', 'fields.k.min' = '0', 'fields.k.max' = '9');\n"
      "CREATE TABLE out_t (k INT, v BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT k, v FROM g;\n",
      "cannot be split");
  one_thread_with_note(
      "except", BATCH,
      "CREATE TABLE out_t (auction BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT auction FROM bid EXCEPT SELECT auction FROM bid WHERE price > 1000;\n",
      "set operation");
  one_thread_with_note(
      "global count", BATCH,
      "CREATE TABLE out_t (n BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT COUNT(*) FROM bid;\n",
      "without GROUP BY");
}

/* A worker's error fails the run with its message, before an exchange too
** (every worker still passes the barrier: no hang), and a checkpoint folder
** keeps the query on one thread for now. */
TEST(errors_and_checkpoints) {
  const char *bad[] = {
      "CREATE TABLE out_t (a BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT CAST(CAST(price AS STRING) || 'x' AS BIGINT) FROM bid;\n",
      "CREATE TABLE out_t (a BIGINT, n BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT auction, COUNT(*) FROM bid"
      " WHERE CAST(CAST(price AS STRING) || 'x' AS BIGINT) > 0 GROUP BY auction;\n",
  };
  for (int i = 0; i < 2; i++) {
    dipper *db = NULL;
    CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
    char sql[2048];
    snprintf(sql, sizeof sql, "SET 'parallelism.default' = '3';\n%s%s", NEXMARK, bad[i]);
    dipper_program *prog = NULL;
    CHECK_EQ(dipper_compile(db, sql, (size_t)-1, "p.sql", &prog), DIPPER_OK);
    CHECK(dipper_run(prog, NULL, NULL) != DIPPER_OK);
    CHECK_CONTAINS(dipper_errmsg(db), "is not a valid BIGINT");
    dipper_program_free(prog);
    dipper_close(db);
  }
  char dir[] = "/tmp/dipper-par-ckpt-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char one_dir[300], two_dir[300];
  snprintf(one_dir, sizeof one_dir, "SET 'execution.checkpointing.dir' = '%s/one';\n", dir);
  snprintf(two_dir, sizeof two_dir, "SET 'execution.checkpointing.dir' = '%s/two';\n", dir);
  const char *q = "CREATE TABLE out_t (auction BIGINT, n BIGINT) WITH ('connector' = 'memory');\n"
                  "INSERT INTO out_t SELECT auction, COUNT(*) FROM bid GROUP BY auction;\n";
  notes log;
  text one = run_on(1, one_dir, q, &log);
  CHECK_EQ(log.count, 0);
  text two = run_on(2, two_dir, q, &log);
  CHECK_EQ(log.count, 1);
  CHECK_CONTAINS(log.last, "checkpoint folder");
  check_same("checkpointed", &one, &two, 2);
  free(one.data);
  free(two.data);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
}

int main(void) { return RUN_TESTS(); }
