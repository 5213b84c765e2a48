/*
** parallel_test.c — a query on N workers ('parallelism.default', exec/parallel.h)
** against the same query on one thread, through the public API: a bounded
** nexmark source split among 2 and 3 workers in many micro-batches, into a
** memory sink.  Stateless pipelines (filter, projection) give the same rows
** in the same order; stateful ones (aggregation in update and append mode,
** DISTINCT, deduplication, joins) the same rows, each key's in the same
** order (the rows compared after a stable sort by key); batch mode too.
** The other splits: datagen (a row a function of (seed, row): the same rows
** in the same order) and filesystem (each file to one worker: each file's
** rows in the same order, compared per file).  A query the workers cannot run
** (an unseeded datagen table in batch mode, a set operation, an aggregation
** without GROUP BY) runs on one thread, says why in a note, and gives the
** same answer.
*/
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "dipper.h"
#include "exec/par_rows.h"
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

/* Compare only each key's last line (an update stream whose micro-batches
** are cut otherwise on workers: the same final rows, other updates). */
static bool finals_only;

static int strcmp_lines(const char *x, const char *xe, const char *y, const char *ye) {
  size_t nx = (size_t)(xe - x), ny = (size_t)(ye - y);
  int c = memcmp(x, y, nx < ny ? nx : ny);
  return c ? c : (nx > ny) - (nx < ny);
}

/* A changelog (lines "op|row", the memory sink's op column first) applied:
** the rows of +I/+U lines less one equal row per -U/-D line, sorted; every
** retraction must find its row. */
static text applied(const text *in) {
  text add = {0}, del = {0};
  put(&add, "", 0);
  put(&del, "", 0);
  for (const char *p = in->data; *p;) {
    const char *nl = strchr(p, '\n'), *bar = memchr(p, '|', (size_t)(nl - p));
    CHECK(bar != NULL);
    if (!bar) break;
    put(p[0] == '+' ? &add : &del, bar + 1, (size_t)(nl - bar));
    p = nl + 1;
  }
  text a = sort_keys(&add, 1000, false), d = sort_keys(&del, 1000, false), out = {0};
  put(&out, "", 0);
  const char *x = a.data, *y = d.data;
  while (*x) {
    const char *xe = strchr(x, '\n') + 1, *ye = *y ? strchr(y, '\n') + 1 : y;
    int c = *y ? strcmp_lines(x, xe, y, ye) : -1;
    CHECK(c <= 0); /* a retraction of a row never added */
    if (c == 0) y = ye;
    else put(&out, x, (size_t)(xe - x));
    x = xe;
  }
  CHECK(*y == '\0');
  free(add.data);
  free(del.data);
  free(a.data);
  free(d.data);
  return out;
}

static text sort_by_key(const text *in, int key_fields) {
  return sort_keys(in, key_fields, finals_only);
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

/* datagen: row i is a function of (seed, i), so a split's share is the
** rows one thread makes there. */
TEST(datagen_splits) {
  const char *gen =
      "CREATE TABLE g (id BIGINT, k INT, v BIGINT, s STRING, ts TIMESTAMP(3),"
      " WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen',"
      " 'number-of-rows' = '20000', 'seed' = '3', 'fields.id.kind' = 'sequence',"
      " 'fields.id.start' = '0', 'fields.id.end' = '19999',"
      " 'fields.k.min' = '0', 'fields.k.max' = '99', 'fields.s.length' = '5',"
      " 'fields.v.null-rate' = '0.1', 'fields.ts.max-past' = '50 ms');\n";
  char q0[2048], agg[2048];
  snprintf(q0, sizeof q0,
           "%sCREATE TABLE out_t (id BIGINT, k INT, v BIGINT, s STRING, ts TIMESTAMP(3))"
           " WITH ('connector' = 'memory');\nINSERT INTO out_t SELECT * FROM g;\n",
           gen);
  snprintf(agg, sizeof agg,
           "%sCREATE TABLE out_t (k INT, window_start TIMESTAMP(3), n BIGINT, total BIGINT)"
           " WITH ('connector' = 'memory');\n"
           "INSERT INTO out_t SELECT k, window_start, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE g,"
           " DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end;\n",
           gen);
  same_as_one("datagen q0", "", q0, 0, 20000);
  same_as_one("datagen q0 batch", BATCH, q0, 0, 20000);
  same_as_one("datagen tumble", "", agg, 1, 200);
  same_as_one("datagen tumble batch", BATCH, agg, 1, 200);
}

/* An unseeded table in streaming runs on the workers (they take worker 0's
** seed with its plan): every row once. */
TEST(datagen_unseeded_splits) {
  const char *q =
      "CREATE TABLE g (id BIGINT, v BIGINT) WITH ('connector' = 'datagen',"
      " 'number-of-rows' = '9000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0',"
      " 'fields.id.end' = '8999');\n"
      "CREATE TABLE out_t (id BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT id FROM g;\n";
  text want = {0};
  put(&want, "", 0);
  for (int i = 0; i < 9000; i++) {
    char row[32];
    put(&want, row, (size_t)snprintf(row, sizeof row, "%d\n", i));
  }
  notes log;
  for (int workers = 1; workers <= 3; workers++) {
    text t = run_on(workers, "", q, &log);
    CHECK_EQ(log.count, 0);
    check_same("unseeded datagen", &want, &t, workers);
    free(t.data);
  }
  free(want.data);
}

/* filesystem: each file to the worker its name hashes to; each file's rows
** in its order (the key: the file's name), in streaming with a row cap that
** cuts files across micro-batches, and in batch mode. */
static void write_files(const char *dir, int nfiles, int rows, bool in_time) {
  int at = 0; /* in_time: file f+1's rows come after file f's (one clock), else each restarts */
  for (int f = 0; f < nfiles; f++) {
    char path[400];
    snprintf(path, sizeof path, "%s/in-%02d.json", dir, f);
    FILE *out = fopen(path, "w");
    CHECK(out != NULL);
    for (int r = 0; r < rows + f * 37; r++, at++) {
      int s = in_time ? at / 4 : r;
      fprintf(out, "{\"k\": %d, \"v\": %d, \"ts\": \"2024-01-01 %02d:%02d:%02d\"}\n",
              (r * 7 + f) % 13, r, s / 3600, (s / 60) % 60, s % 60);
    }
    fclose(out);
  }
}

TEST(filesystem_splits) {
  char dir[] = "/tmp/dipper-par-fs-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  write_files(dir, 7, 900, false);
  char table[600], q0[2048], agg[2048];
  snprintf(table, sizeof table,
           "CREATE TABLE f (k INT, v INT, ts TIMESTAMP(3), name STRING METADATA FROM 'file.name',"
           " WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)"
           " WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n",
           dir);
  snprintf(q0, sizeof q0,
           "%sCREATE TABLE out_t (name STRING, k INT, v INT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out_t SELECT name, k, v FROM f WHERE MOD(v, 3) <> 1;\n",
           table);
  snprintf(agg, sizeof agg,
           "%sCREATE TABLE out_t (k INT, n BIGINT, vs STRING) WITH ('connector' = 'memory');\n"
           "SET 'dipper.output-mode' = 'update';\n"
           "INSERT INTO out_t SELECT k, COUNT(*), LISTAGG(CAST(v AS STRING)) FROM f"
           " WHERE name = 'in-03.json' GROUP BY k;\n",
           table);
  same_as_one("filesystem q0", "", q0, 1, 4000);
  same_as_one("filesystem q0 batch", BATCH, q0, 1, 4000);
  /* update mode: each worker's cap cuts its files into other micro-batches
  ** than one thread's, so the updates differ and the final rows do not */
  finals_only = true;
  same_as_one("filesystem count", "", agg, 1, 13);
  finals_only = false;
  same_as_one("filesystem count batch", BATCH, agg, 1, 13);
  /* event time across files, windows closed by the watermark: the minimum
  ** over the workers (each reads files of its own), so no row is late */
  char timed[] = "/tmp/dipper-par-fst-XXXXXX";
  CHECK(mkdtemp(timed) != NULL);
  write_files(timed, 9, 800, true);
  char tw[2048];
  snprintf(tw, sizeof tw,
           "CREATE TABLE f (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1'"
           " SECOND) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');\n"
           "CREATE TABLE out_t (k INT, window_start TIMESTAMP(3), n BIGINT, total BIGINT)"
           " WITH ('connector' = 'memory');\n"
           "INSERT INTO out_t SELECT k, window_start, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE f,"
           " DESCRIPTOR(ts), INTERVAL '30' SECOND)) GROUP BY k, window_start, window_end;\n",
           timed);
  /* small batches: a late row shows from the third batch on */
  same_as_one("filesystem tumble", "SET 'dipper.max-batch-rows' = '300';\n", tw, 2, 500);
  same_as_one("filesystem tumble batch", BATCH, tw, 2, 500);
  /* a watched folder read available-now: the windows close by the watermark
  ** alone, and the last ones only in the no-data batch at the end, when
  ** every worker has caught up (the minimum over all would keep open those
  ** past the worker whose files end first) */
  char twatch[2048];
  snprintf(twatch, sizeof twatch,
           "CREATE TABLE f (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1'"
           " SECOND) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json',"
           " 'source.monitor-interval' = '1 s');\n"
           "CREATE TABLE out_t (k INT, window_start TIMESTAMP(3), n BIGINT, total BIGINT)"
           " WITH ('connector' = 'memory');\n"
           "INSERT INTO out_t SELECT k, window_start, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE f,"
           " DESCRIPTOR(ts), INTERVAL '30' SECOND)) GROUP BY k, window_start, window_end;\n",
           timed);
  same_as_one("filesystem tumble watched",
              "SET 'dipper.max-batch-rows' = '300';\nSET 'dipper.trigger' = 'available-now';\n",
              twatch, 2, 400);
  /* one file: one worker reads it, the others nothing */
  char one[600], q1[2048];
  snprintf(one, sizeof one,
           "CREATE TABLE f (k INT, v INT, ts TIMESTAMP(3))"
           " WITH ('connector' = 'filesystem', 'path' = '%s/in-05.json', 'format' = 'json');\n",
           dir);
  snprintf(q1, sizeof q1,
           "%sCREATE TABLE out_t (k INT, v INT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out_t SELECT k, v FROM f;\n",
           one);
  same_as_one("filesystem one file", "", q1, 0, 1000);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, timed);
  CHECK_EQ(system(cmd), 0);
}

/* The filesystem sink on workers: a part file per worker and batch, named
** by both; read in name order (batch by batch), the one-thread rows. */
typedef struct part {
  long long batch;
  char name[256];
} part;

/* Updating joins (op_join_retract.c) over a watched folder (a stream): a
** LEFT JOIN without a time range, its -D rows through the gather to the
** sink, and a GROUP BY over it, those rows through the exchange by the
** group key.  A change kind lost on the way would turn a retraction into a
** row.  Each worker's cap cuts other micro-batches than one thread's (the
** updates in between differ), so the changelogs compare applied. */
TEST(updating_joins_carry_their_kinds) {
  char dir[] = "/tmp/dipper-par-upd-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  write_files(dir, 7, 900, false);
  /* (k, v) of row r of file f: ((7r + f) mod 13, r); a row of in-00 finds
  ** its match (v + 1) in in-06, read later: it is padded first */
  char table[700], sql[2][2048];
  snprintf(table, sizeof table,
           "CREATE TABLE f (k INT, v INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem',"
           " 'path' = '%s', 'format' = 'json', 'source.monitor-interval' = '1 s');\n"
           "SET 'dipper.output-mode' = 'update';\n"
           "SET 'dipper.max-batch-rows' = '300';\nSET 'dipper.trigger' = 'available-now';\n",
           dir);
  snprintf(sql[0], sizeof sql[0],
           "%sCREATE TABLE out_t (k INT, v INT, w INT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out_t SELECT a.k, a.v, b.v FROM f a LEFT JOIN f b"
           " ON a.k = b.k AND a.v = b.v - 1;\n",
           table);
  snprintf(sql[1], sizeof sql[1],
           "%sCREATE TABLE out_t (k INT, n BIGINT, m BIGINT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out_t SELECT a.k, COUNT(*), COUNT(b.v) FROM f a LEFT JOIN f b"
           " ON a.k = b.k AND a.v = b.v - 1 GROUP BY a.k;\n",
           table);
  for (int q = 0; q < 2; q++) {
    notes log;
    text one = run_on(1, "", sql[q], &log), one_a = applied(&one);
    CHECK_EQ(log.count, 0);
    CHECK(strstr(one.data, q ? "-U|" : "-D|") != NULL);
    int64_t lines = 0;
    for (size_t i = 0; i < one_a.len; i++) lines += one_a.data[i] == '\n';
    CHECK(lines >= (q ? 13 : 6000));
    for (int workers = 2; workers <= 3; workers++) {
      text many = run_on(workers, "", sql[q], &log), many_a = applied(&many);
      if (log.count) fprintf(stderr, "updating join: %s\n", log.last);
      CHECK_EQ(log.count, 0);
      check_same(q ? "GROUP BY over a LEFT JOIN" : "LEFT JOIN", &one_a, &many_a, workers);
      free(many.data);
      free(many_a.data);
    }
    free(one.data);
    free(one_a.data);
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
}

static int by_batch(const void *a, const void *b) {
  const part *x = a, *y = b;
  if (x->batch != y->batch) return x->batch < y->batch ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Every part file of `dir`, batch by batch and by name, concatenated;
** *workers_named: how many names carry a worker ("-000." / "-001-0."). */
static text read_parts(const char *dir, int *workers_named) {
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  part *parts = NULL;
  int n = 0;
  struct dirent *de;
  *workers_named = 0;
  while (d && (de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, "part-", 5) != 0) continue;
    parts = realloc(parts, (size_t)(n + 1) * sizeof *parts);
    CHECK(parts != NULL);
    parts[n].batch = strtoll(de->d_name + 5, NULL, 10);
    snprintf(parts[n].name, sizeof parts[n].name, "%s", de->d_name);
    if (strstr(de->d_name, "-001") || strstr(de->d_name, "-002")) (*workers_named)++;
    n++;
  }
  if (d) closedir(d);
  qsort(parts, (size_t)n, sizeof *parts, by_batch);
  text t = {0};
  put(&t, "", 0);
  for (int i = 0; i < n; i++) {
    char path[600], buf[65536];
    snprintf(path, sizeof path, "%s/%s", dir, parts[i].name);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    size_t got;
    while (f && (got = fread(buf, 1, sizeof buf, f)) > 0) put(&t, buf, got);
    if (f) fclose(f);
  }
  free(parts);
  return t;
}

TEST(filesystem_sink_part_files) {
  char dir[] = "/tmp/dipper-par-sink-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  for (int ck = 0; ck <= 1; ck++) {
    text one = {0};
    for (int workers = 1; workers <= 3; workers++) {
      char out[400], settings[400], sql[1024];
      snprintf(out, sizeof out, "%s/out-%d-%d", dir, ck, workers);
      if (ck)
        snprintf(settings, sizeof settings, "SET 'execution.checkpointing.dir' = '%s/ck-%d';\n",
                 dir, workers);
      else
        settings[0] = '\0';
      snprintf(sql, sizeof sql,
               "CREATE TABLE fs_t (auction BIGINT, price BIGINT) WITH ('connector' = 'filesystem',"
               " 'path' = '%s', 'format' = 'json');\n"
               "CREATE TABLE out_t (n BIGINT) WITH ('connector' = 'memory');\n"
               "INSERT INTO fs_t SELECT auction, price FROM bid WHERE MOD(auction, 3) = 0;\n",
               out);
      notes log;
      dipper *db = NULL;
      CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
      memset(&log, 0, sizeof log);
      dipper_set_log(db, on_log, &log);
      char all[4096];
      snprintf(all, sizeof all,
               "SET 'parallelism.default' = '%d';\nSET 'dipper.max-batch-rows' = '2500';\n%s%s%s",
               workers, settings, NEXMARK, sql);
      dipper_program *prog = NULL;
      int rc = dipper_compile(db, all, (size_t)-1, "p.sql", &prog);
      if (rc == DIPPER_OK) rc = dipper_run(prog, NULL, NULL);
      if (rc) fprintf(stderr, "fs sink on %d: %s\n", workers, dipper_errmsg(db));
      CHECK_EQ(rc, DIPPER_OK);
      CHECK_EQ(log.count, 0);
      dipper_program_free(prog);
      dipper_close(db);
      int named = 0;
      text got = read_parts(out, &named);
      if (workers == 1) {
        CHECK_EQ(named, 0);
        CHECK(got.len > 10000);
        one = got;
        continue;
      }
      CHECK(named > 0); /* worker 1's files */
      check_same(ck ? "fs sink, checkpointed" : "fs sink", &one, &got, workers);
      free(got.data);
    }
    free(one.data);
  }
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
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
      "unseeded datagen", BATCH,
      "CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '500',"
      " 'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '500');\n"
      "CREATE TABLE out_t (k INT, n BIGINT) WITH ('connector' = 'memory');\n"
      "INSERT INTO out_t SELECT k, COUNT(*) FROM g GROUP BY k;\n",
      "without 'seed'");
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
** (every worker still passes the barrier: no hang).  A checkpoint folder:
** the query runs on its workers, gives one thread's answer, and its folder
** refuses a run on another number of workers, naming both. */
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
  CHECK_EQ(log.count, 0);
  text one_sorted = sort_by_key(&one, 1), two_sorted = sort_by_key(&two, 1);
  check_same("checkpointed", &one_sorted, &two_sorted, 2);
  free(one.data);
  free(two.data);
  free(one_sorted.data);
  free(two_sorted.data);
  for (int workers = 1; workers <= 3; workers += 2) {
    dipper *db = NULL;
    CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
    char sql[4096];
    snprintf(sql, sizeof sql, "SET 'parallelism.default' = '%d';\n%s%s%s", workers, two_dir,
             NEXMARK, q);
    dipper_program *prog = NULL;
    int rc = dipper_compile(db, sql, (size_t)-1, "p.sql", &prog);
    if (rc == DIPPER_OK) rc = dipper_run(prog, NULL, NULL);
    CHECK(rc != DIPPER_OK);
    char want[64];
    snprintf(want, sizeof want, "on 2 workers, and this run has %d", workers);
    CHECK_CONTAINS(dipper_errmsg(db), want);
    dipper_program_free(prog);
    dipper_close(db);
  }
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_EQ(system(cmd), 0);
}

int main(void) { return RUN_TESTS(); }
