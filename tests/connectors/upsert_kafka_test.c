/*
** upsert_kafka_test.c — the `upsert-kafka` source (and its sink's keys)
** against a real broker on loopback (scripts/kafka-local; ctest starts it
** through the kafka_broker fixture, tests/CMakeLists.txt).  Records are
** produced with librdkafka to known partitions, queries stepped batch by
** batch with dipper_query_step, and the changes read back in order from a
** memory table, whose leading `op` column is each row's kind.
**
** Covers: inserts, updates (-U old, +U new; an equal value emits nothing),
** tombstones (-D of the old row, whole), tombstones of unknown and of deleted
** keys (nothing), a key inserted again after its deletion (+I); EXCEPT_KEY
** with 'key.fields-prefix' (the key record without the prefix, both ways:
** the sink writes it so and the source reads it so); a GROUP BY over the
** upsert source; a restart from the checkpoint folder mid-stream (the rows
** of the keys seen before it come back as -U/-D of what they were, and no
** record is read twice); a batch logged and not committed run again to its
** offsets with the same changes; bad records (the error names topic, partition and
** offset; a record without a key; 'skip' counts them); many updates over
** three partitions (the state compacted, the result checked against a model);
** the kept rows checkpointed as deltas (a batch of one update and one
** tombstone over 2,000 keys: a delta and a commit record of under 200 bytes,
** the snapshot and the delta read back by a restart); 'table.exec.state.ttl'
** (idle keys forgotten: +I after, their times kept across a restart, on the
** test's clock); 'scan.bounded.mode' latest-offset, specific-offsets and
** timestamp (the query ends at the bound; records after it are not read);
** what compile time refuses (no PRIMARY KEY, batch mode, bounded or not, an
** append-only sink, a prefix without EXCEPT_KEY, a WATERMARK, the Spark
** backend, a bounded mode without its companion option).
**
** No broker is no reason to pass: every test fails when it cannot reach one.
*/
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "dipper.h"
#include "test.h"
#include "conn_harness.h"


/* ---- the broker ---- */

static void topic_name(char *buf, size_t cap, const char *what) {
  snprintf(buf, cap, "dipper-upsert-%s-%s", h_run_tag, what);
}

static void create_topic(const char *name, int partitions) {
  CHECK_EQ(h_create_topic(name, partitions), RD_KAFKA_RESP_ERR_NO_ERROR);
}

/* A record: its partition, key and value (NULL: a tombstone; key NULL: none). */
#define REC(p, k, v) {(p), 0, (k), (v), NULL, NULL} /* the producer's clock, no header */

static void produce(const char *topic, const h_rec *recs, int n) { h_produce(topic, recs, n); }

/* Every record of partition 0 as "key\tvalue" lines ("-" for a NULL value). */
static const char *consume_all(const char *topic, int expect) {
  return h_consume_all(topic, expect, false, "-");
}

/* ---- dipper ---- */

/* SQL with the broker put in for BOOT, the topic for TOPIC and a second
** topic for TOPIC2 (sql_topic2). */
static const char *sql_topic2 = "";
static char *sql_of(const char *tmpl, const char *topic) {
  return h_kafka_sql(tmpl, topic, sql_topic2);
}

/* A running query of `tmpl`: its handle, program and query. */
typedef struct run {
  dipper *db;
  dipper_program *prog;
  dipper_query **qs;
  dipper_query *q;
} run;

/* A processing-time clock of the test's (µs) when not 0 (state TTL). */
static int64_t fake_now;
static int64_t fake_clock(void *user) {
  (void)user;
  return fake_now;
}

static bool run_start(run *r, const char *tmpl, const char *topic) {
  memset(r, 0, sizeof *r);
  CHECK_EQ(dipper_open(&r->db, NULL), DIPPER_OK);
  if (fake_now) dipper_set_clock(r->db, fake_clock, NULL);
  char *sql = sql_of(tmpl, topic);
  int rc = dipper_compile(r->db, sql, (size_t)-1, "upsert.sql", &r->prog);
  free(sql);
  if (rc) fprintf(stderr, "compile: %s\n", dipper_errmsg(r->db));
  CHECK_EQ(rc, DIPPER_OK);
  int n = 0;
  if (rc == DIPPER_OK) rc = dipper_query_start(r->prog, &r->qs, &n);
  if (rc) fprintf(stderr, "start: %s\n", dipper_errmsg(r->db));
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(n, 1);
  r->q = rc == DIPPER_OK && n == 1 ? r->qs[0] : NULL;
  return r->q != NULL;
}

static void run_end(run *r) {
  if (r->qs) dipper_query_free_all(r->qs, 1);
  dipper_program_free(r->prog);
  dipper_close(r->db);
}

/* One micro-batch; DIPPER_OK or the code (the message printed). */
static int run_step(run *r) {
  int finished = 0;
  int rc = dipper_query_step(r->q, &finished);
  if (rc) fprintf(stderr, "step: %s\n", dipper_errmsg(r->db));
  return rc;
}

static void put_cell(char *buf, size_t cap, const struct ArrowSchema *s, const struct ArrowArray *a,
                     int64_t r) {
  int64_t i = r + a->offset;
  const uint8_t *valid = a->buffers[0];
  if (a->null_count != 0 && valid && !((valid[i >> 3] >> (i & 7)) & 1)) {
    snprintf(buf, cap, "NULL");
    return;
  }
  const char *f = s->format;
  if (strcmp(f, "l") == 0)
    snprintf(buf, cap, "%" PRId64, ((const int64_t *)a->buffers[1])[i]);
  else if (strcmp(f, "i") == 0)
    snprintf(buf, cap, "%d", ((const int32_t *)a->buffers[1])[i]);
  else if (strcmp(f, "g") == 0)
    snprintf(buf, cap, "%g", ((const double *)a->buffers[1])[i]);
  else if (strcmp(f, "u") == 0) {
    const int32_t *off = a->buffers[1];
    snprintf(buf, cap, "%.*s", (int)(off[i + 1] - off[i]), (const char *)a->buffers[2] + off[i]);
  } else
    snprintf(buf, cap, "?%s", f);
}

/* The rows of memory table `table` from row `from` on, in the order written,
** as "a|b|c" lines (static). */
static const char *rows_of(dipper *db, const char *table, int64_t from) {
  static char text[1 << 16];
  text[0] = '\0';
  struct ArrowSchema schema;
  struct ArrowArray array;
  int rc = dipper_memory_fetch(db, table, &schema, &array);
  if (rc) {
    snprintf(text, sizeof text, "ERROR %s: %s", dipper_strerror(rc), dipper_errmsg(db));
    return text;
  }
  size_t len = 0;
  for (int64_t r = from; r < array.length && len + 512 < sizeof text; r++) {
    for (int64_t c = 0; c < array.n_children; c++) {
      char cell[128];
      put_cell(cell, sizeof cell, schema.children[c], array.children[c], r);
      len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", c ? "|" : "", cell);
    }
    len += (size_t)snprintf(text + len, sizeof text - len, "\n");
  }
  array.release(&array);
  schema.release(&schema);
  return text;
}

static int64_t nrows_of(dipper *db, const char *table) {
  struct ArrowSchema schema;
  struct ArrowArray array;
  if (dipper_memory_fetch(db, table, &schema, &array) != DIPPER_OK) return -1;
  int64_t n = array.length;
  array.release(&array);
  schema.release(&schema);
  return n;
}

/* Step once and the rows that batch wrote to `out`. */
static const char *step_rows(run *r) {
  int64_t before = nrows_of(r->db, "out");
  CHECK_EQ(run_step(r), DIPPER_OK);
  return rows_of(r->db, "out", before);
}

#define UPSERT_DDL                                                                           \
  "CREATE TABLE users (id BIGINT, name STRING, region STRING, PRIMARY KEY (id) NOT ENFORCED)" \
  " WITH ('connector' = 'upsert-kafka', 'topic' = 'TOPIC',"                                  \
  " 'properties.bootstrap.servers' = 'BOOT', 'key.format' = 'json', 'value.format' = 'json');\n"

/* ---- changes ---- */

TEST(inserts_updates_and_tombstones) {
  char topic[160];
  topic_name(topic, sizeof topic, "changes");
  create_topic(topic, 1);
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"ann\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"bob\",\"region\":\"us\"}"}},
          2);
  run r;
  if (!run_start(&r, UPSERT_DDL "CREATE TABLE out (id BIGINT, name STRING, region STRING)"
                                " WITH ('connector' = 'memory');\n"
                                "INSERT INTO out SELECT * FROM users;",
                 topic)) {
    run_end(&r);
    return;
  }
  CHECK_STR(step_rows(&r), "+I|1|ann|eu\n+I|2|bob|us\n");
  /* an update, a tombstone, a tombstone of a key never seen, the same value
     again (nothing), and a second tombstone of a deleted key (nothing) */
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"ann\",\"region\":\"asia\"}"},
                  {0, 0, "{\"id\":2}", NULL},
                  {0, 0, "{\"id\":99}", NULL},
                  {0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"ann\",\"region\":\"asia\"}"},
                  {0, 0, "{\"id\":2}", NULL}},
          5);
  CHECK_STR(step_rows(&r), "-U|1|ann|eu\n+U|1|ann|asia\n-D|2|bob|us\n");
  /* a deleted key comes back: an insertion; two updates in one batch: each */
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"bo\",\"region\":\"us\"}"},
                  {0, 0, "{\"id\":3}", "{\"id\":3,\"name\":\"cy\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":3}", "{\"id\":3,\"name\":\"cy\",\"region\":\"us\"}"}},
          3);
  CHECK_STR(step_rows(&r), "+I|2|bo|us\n+I|3|cy|eu\n-U|3|cy|eu\n+U|3|cy|us\n");
  run_end(&r);
}

/* EXCEPT_KEY with a prefix: the key record is {"id":..}, the table's column
** k_id; written by dipper's upsert-kafka sink and read back by its source. */
TEST(except_key_with_prefix_round_trip) {
  char src[160], mid[160];
  topic_name(src, sizeof src, "prefix-src");
  topic_name(mid, sizeof mid, "prefix-mid");
  create_topic(src, 1);
  create_topic(mid, 1);
  produce(src,
          (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"ann\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"bob\",\"region\":\"us\"}"}},
          2);
  static const char *const sink_tmpl =
      UPSERT_DDL
      "CREATE TABLE mid (k_id BIGINT, name STRING, PRIMARY KEY (k_id) NOT ENFORCED) WITH ("
      " 'connector' = 'upsert-kafka', 'topic' = 'TOPIC2', 'properties.bootstrap.servers' = 'BOOT',"
      " 'key.format' = 'json', 'value.format' = 'json', 'key.fields-prefix' = 'k_',"
      " 'value.fields-include' = 'EXCEPT_KEY');\n"
      "INSERT INTO mid SELECT id, name FROM users;";
  sql_topic2 = mid;
  run w;
  if (run_start(&w, sink_tmpl, src)) {
    CHECK_EQ(run_step(&w), DIPPER_OK);
    produce(src, (h_rec[]){{0, 0, "{\"id\":1}", NULL}}, 1);
    CHECK_EQ(run_step(&w), DIPPER_OK);
  }
  run_end(&w);
  /* Flink's layout: the key without the prefix, the value without the key */
  CHECK_STR(consume_all(mid, 3), "{\"id\":1}\t{\"name\":\"ann\"}\n"
                                 "{\"id\":2}\t{\"name\":\"bob\"}\n"
                                 "{\"id\":1}\t-\n");
  run r;
  if (run_start(&r,
                "CREATE TABLE mid (k_id BIGINT, name STRING, PRIMARY KEY (k_id) NOT ENFORCED) "
                "WITH ('connector' = 'upsert-kafka', 'topic' = 'TOPIC',"
                " 'properties.bootstrap.servers' = 'BOOT', 'key.format' = 'json',"
                " 'value.format' = 'json', 'key.fields-prefix' = 'k_',"
                " 'value.fields-include' = 'EXCEPT_KEY');\n"
                "CREATE TABLE out (k_id BIGINT, name STRING) WITH ('connector' = 'memory');\n"
                "INSERT INTO out SELECT * FROM mid;",
                mid))
    CHECK_STR(step_rows(&r), "+I|1|ann\n+I|2|bob\n-D|1|ann\n");
  run_end(&r);
}

/* ---- an aggregation over the changelog ---- */

TEST(group_by_over_upsert_source) {
  char topic[160];
  topic_name(topic, sizeof topic, "groupby");
  create_topic(topic, 1);
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"b\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":3}", "{\"id\":3,\"name\":\"c\",\"region\":\"us\"}"}},
          3);
  run r;
  if (!run_start(&r, UPSERT_DDL "CREATE TABLE out (region STRING, n BIGINT) "
                                "WITH ('connector' = 'memory');\n"
                                "SET 'dipper.output-mode' = 'update';\n"
                                "INSERT INTO out SELECT region, COUNT(*) FROM users GROUP BY region;",
                 topic)) {
    run_end(&r);
    return;
  }
  CHECK_STR(step_rows(&r), "+I|eu|2\n+I|us|1\n");
  /* 2 moves to us; 3 is deleted (us: +1 -1, unchanged); 1's name changes */
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"b\",\"region\":\"us\"}"},
                  {0, 0, "{\"id\":3}", NULL},
                  {0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"z\",\"region\":\"eu\"}"}},
          3);
  CHECK_STR(step_rows(&r), "-U|eu|2\n+U|eu|1\n");
  /* eu's last key goes */
  produce(topic, (h_rec[]){{0, 0, "{\"id\":1}", NULL}}, 1);
  CHECK_STR(step_rows(&r), "-D|eu|1\n");
  run_end(&r);
}

/* ---- checkpoints ---- */

static int cmp_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of `text` sorted, in a buffer of the caller's: the records of
** two partitions come in the order they were fetched. */
static const char *sorted_lines(const char *text, char *buf, size_t cap) {
  char *copy = strdup(text ? text : "");
  char *lines[64];
  int n = 0;
  for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l && n < 64;
       l = strtok_r(NULL, "\n", &save))
    lines[n++] = l;
  qsort(lines, (size_t)n, sizeof *lines, cmp_line);
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && at < cap; i++) at += (size_t)snprintf(buf + at, cap - at, "%s\n", lines[i]);
  free(copy);
  return buf;
}

/* `users` (UPSERT_DDL) copied into memory table `out`, checkpointed in
** `dir`, after the SET lines `settings` (malloc'd). */
static char *users_to_out(const char *dir, const char *settings) {
  char *tmpl = malloc(4096);
  if (!tmpl) abort();
  snprintf(tmpl, 4096,
           "SET 'execution.checkpointing.dir' = '%s';\n%s" UPSERT_DDL
           "CREATE TABLE out (id BIGINT, name STRING, region STRING)"
           " WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT * FROM users;",
           dir, settings);
  return tmpl;
}

TEST(restart_from_checkpoint_mid_stream) {
  char topic[160];
  topic_name(topic, sizeof topic, "restart");
  create_topic(topic, 2);
  char *dir = h_tempdir();
  char *tmpl = users_to_out(dir, "");
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"eu\"}"},
                  {1, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"b\",\"region\":\"us\"}"},
                  {0, 0, "{\"id\":3}", "{\"id\":3,\"name\":\"c\",\"region\":\"us\"}"}},
          3);
  run r;
  if (run_start(&r, tmpl, topic)) {
    char buf[1024];
    /* one batch: the partitions' records in the order they were fetched */
    CHECK_STR(sorted_lines(step_rows(&r), buf, sizeof buf), "+I|1|a|eu\n+I|2|b|us\n+I|3|c|us\n");
    produce(topic,
            (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"asia\"}"},
                    {1, 0, "{\"id\":2}", NULL}},
            2);
    CHECK_STR(sorted_lines(step_rows(&r), buf, sizeof buf), "+U|1|a|asia\n-D|2|b|us\n-U|1|a|eu\n");
  }
  run_end(&r);
  /* A new process: the state (1 asia, 3 us; 2 gone) and the offsets come
     back from the folder.  Read from the start, the old records would give
     changes of their own (1's eu row again, 2's row again). */
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":3}", "{\"id\":3,\"name\":\"c\",\"region\":\"eu\"}"},
                  {1, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"b2\",\"region\":\"us\"}"},
                  {0, 0, "{\"id\":1}", NULL}},
          3);
  if (run_start(&r, tmpl, topic)) {
    char buf[1024];
    CHECK_STR(sorted_lines(step_rows(&r), buf, sizeof buf),
              "+I|2|b2|us\n+U|3|c|eu\n-D|1|a|asia\n-U|3|c|us\n");
  }
  run_end(&r);
  free(tmpl);
  h_rmdir(dir);
  free(dir);
}

/* A crash after a batch's offsets were logged and before its commit record:
** the restart restores the state of the batch before and runs the logged
** batch again to exactly its offsets (records produced since wait for the
** next batch), so it emits the same changes again. */
TEST(uncommitted_batch_replays_to_its_bounds) {
  char topic[160];
  topic_name(topic, sizeof topic, "replay");
  create_topic(topic, 1);
  char *dir = h_tempdir();
  char *tmpl = users_to_out(dir, "");
  produce(topic, (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"eu\"}"}}, 1);
  run r;
  const char *second = "-U|1|a|eu\n+U|1|a|us\n+I|2|b|us\n";
  if (run_start(&r, tmpl, topic)) {
    CHECK_STR(step_rows(&r), "+I|1|a|eu\n");
    produce(topic,
            (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"us\"}"},
                    {0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"b\",\"region\":\"us\"}"}},
            2);
    CHECK_STR(step_rows(&r), second);
  }
  run_end(&r);
  /* batch 1's commit record lost, as a kill before it was written */
  char path[1200];
  snprintf(path, sizeof path, "%s/out/commits/1", dir);
  CHECK_EQ(unlink(path), 0);
  produce(topic, (h_rec[]){{0, 0, "{\"id\":2}", NULL}}, 1);
  if (run_start(&r, tmpl, topic)) {
    CHECK_STR(step_rows(&r), second);
    CHECK_STR(step_rows(&r), "-D|2|b|us\n");
  }
  run_end(&r);
  free(tmpl);
  h_rmdir(dir);
  free(dir);
}

/* Many updates over three partitions, in batches, with a restart in the
** middle: the state is compacted on the way (dead rows past 1,024), and the
** last row per key, summed through a GROUP BY, equals a model's. */
TEST(many_updates_compacted_and_restored) {
  char topic[160];
  topic_name(topic, sizeof topic, "many");
  create_topic(topic, 3);
  char *dir = h_tempdir();
  char *tmpl = malloc(4096);
  snprintf(tmpl, 4096,
           "SET 'execution.checkpointing.dir' = '%s';\n"
           "SET 'dipper.output-mode' = 'update';\n"
           "CREATE TABLE kv (k BIGINT, v BIGINT, PRIMARY KEY (k) NOT ENFORCED)"
           " WITH ('connector' = 'upsert-kafka', 'topic' = 'TOPIC',"
           " 'properties.bootstrap.servers' = 'BOOT', 'key.format' = 'json',"
           " 'value.format' = 'json');\n"
           "CREATE TABLE out (n BIGINT, s BIGINT) WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT COUNT(*), SUM(v) FROM kv;",
           dir);
  enum { KEYS = 100, ROUNDS = 4, PER_ROUND = 1500 };
  int64_t model[KEYS];
  bool live[KEYS];
  memset(live, 0, sizeof live);
  uint64_t seed = 42;
  static h_rec recs[PER_ROUND];
  static char keys[PER_ROUND][32], vals[PER_ROUND][64];
  run r;
  memset(&r, 0, sizeof r);
  for (int round = 0; round < ROUNDS; round++) {
    for (int i = 0; i < PER_ROUND; i++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      int k = (int)((seed >> 33) % KEYS);
      int64_t v = (int64_t)((seed >> 20) % 1000);
      bool tomb = ((seed >> 45) % 10) == 0;
      snprintf(keys[i], sizeof keys[i], "{\"k\":%d}", k);
      snprintf(vals[i], sizeof vals[i], "{\"k\":%d,\"v\":%lld}", k, (long long)v);
      recs[i] = (h_rec)REC(k % 3, keys[i], tomb ? NULL : vals[i]);
      live[k] = !tomb;
      model[k] = v;
    }
    produce(topic, recs, PER_ROUND);
    if (round == 0 || round == 2) {
      run_end(&r); /* round 2: a restart from the folder */
      if (!run_start(&r, tmpl, topic)) break;
    }
    CHECK_EQ(run_step(&r), DIPPER_OK);
    int64_t n = 0, s = 0;
    for (int k = 0; k < KEYS; k++)
      if (live[k]) n++, s += model[k];
    const char *rows = rows_of(r.db, "out", 0);
    /* the last line is the result now */
    const char *end = rows + strlen(rows);
    const char *line = end > rows ? end - 1 : end;
    while (line > rows && line[-1] != '\n') line--;
    char want[128];
    /* the first batch inserts the one row; the others update it, the
       restarted run too (the aggregation's state came back with it) */
    snprintf(want, sizeof want, "%s|%lld|%lld\n", round == 0 ? "+I" : "+U", (long long)n,
             (long long)s);
    CHECK_STR(line, want);
  }
  run_end(&r);
  free(tmpl);
  h_rmdir(dir);
  free(dir);
}

/* The size of file `dir`/`name`, or -1. */
static long file_size(const char *dir, const char *name) {
  char p[1200];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  struct stat sb;
  return stat(p, &sb) == 0 ? (long)sb.st_size : -1;
}

/* The kept rows cost what a batch changed: after 2,000 keys, a batch that
** updates one key and deletes another writes a delta of a few dozen bytes
** beside a commit record as small, not the 2,000 rows again; a restart
** reads the snapshot and the delta (the updated row is -U'd as it is now,
** the deleted key comes back as +I). */
TEST(commit_records_carry_deltas) {
  char topic[160];
  topic_name(topic, sizeof topic, "delta");
  create_topic(topic, 1);
  char *dir = h_tempdir();
  char *tmpl = users_to_out(dir, "");
  enum { KEYS = 2000 };
  static h_rec recs[KEYS];
  static char keys[KEYS][32], vals[KEYS][96];
  for (int i = 0; i < KEYS; i++) {
    snprintf(keys[i], sizeof keys[i], "{\"id\":%d}", i);
    snprintf(vals[i], sizeof vals[i], "{\"id\":%d,\"name\":\"user-%d\",\"region\":\"eu\"}", i, i);
    recs[i] = (h_rec)REC(0, keys[i], vals[i]);
  }
  produce(topic, recs, KEYS);
  run r;
  if (run_start(&r, tmpl, topic)) {
    CHECK_EQ(run_step(&r), DIPPER_OK);
    CHECK_EQ(nrows_of(r.db, "out"), KEYS);
    produce(topic,
            (h_rec[]){{0, 0, "{\"id\":7}", "{\"id\":7,\"name\":\"user-7\",\"region\":\"us\"}"},
                    {0, 0, "{\"id\":8}", NULL}},
            2);
    CHECK_STR(step_rows(&r), "-U|7|user-7|eu\n+U|7|user-7|us\n-D|8|user-8|eu\n");
  }
  run_end(&r);
  char files[1200];
  snprintf(files, sizeof files, "%s/out/upsert-users-0/state", dir);
  long snap = file_size(files, "0"), delta = file_size(files, "1");
  char commits[1200];
  snprintf(commits, sizeof commits, "%s/out/commits", dir);
  long c0 = file_size(commits, "0"), c1 = file_size(commits, "1");
  fprintf(stderr, "snapshot %ld B, delta %ld B, commit records %ld B and %ld B\n", snap, delta, c0,
          c1);
  CHECK(snap > 10 * KEYS); /* the 2,000 rows */
  CHECK(delta > 0 && delta < 200);
  CHECK(c0 > 0 && c0 < 200 && c1 > 0 && c1 < 200);
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":7}", "{\"id\":7,\"name\":\"user-7\",\"region\":\"asia\"}"},
                  {0, 0, "{\"id\":8}", "{\"id\":8,\"name\":\"user-8\",\"region\":\"us\"}"},
                  {0, 0, "{\"id\":9}", NULL}},
          3);
  if (run_start(&r, tmpl, topic))
    CHECK_STR(step_rows(&r),
              "-U|7|user-7|us\n+U|7|user-7|asia\n+I|8|user-8|us\n-D|9|user-9|eu\n");
  run_end(&r);
  free(tmpl);
  h_rmdir(dir);
  free(dir);
}

/* ---- state TTL ---- */

/* 'table.exec.state.ttl' forgets a key not written for that long (processing
** time, the test's clock): a later value of it is +I, not +U, and a
** tombstone of it nothing; the keys' times come back with a restart, so a
** key written just before it is still kept after it and one idle across it
** expires. */
TEST(state_ttl_forgets_idle_keys_across_a_restart) {
  char topic[160];
  topic_name(topic, sizeof topic, "ttl");
  create_topic(topic, 1);
  char *dir = h_tempdir();
  char *tmpl = users_to_out(dir, "SET 'table.exec.state.ttl' = '10 s';\n");
  const int64_t s = 1000000;
  fake_now = 1000 * s;
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"b\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":3}", "{\"id\":3,\"name\":\"c\",\"region\":\"eu\"}"}},
          3);
  run r;
  if (run_start(&r, tmpl, topic)) {
    CHECK_STR(step_rows(&r), "+I|1|a|eu\n+I|2|b|eu\n+I|3|c|eu\n");
    fake_now = 1005 * s;
    produce(topic, (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"us\"}"}}, 1);
    CHECK_STR(step_rows(&r), "-U|1|a|eu\n+U|1|a|us\n");
    /* 2 and 3 were written at 1000 s: gone at 1010 s; 1 (1005 s) is kept */
    fake_now = 1012 * s;
    produce(topic,
            (h_rec[]){{0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"b\",\"region\":\"us\"}"},
                    {0, 0, "{\"id\":3}", NULL},
                    {0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"asia\"}"}},
            3);
    CHECK_STR(step_rows(&r), "+I|2|b|us\n-U|1|a|us\n+U|1|a|asia\n");
  }
  run_end(&r);
  /* A restart at 1020 s: 1 was written at 1012 s and stays; 2 at 1012 s
     too; a key restored as written at the restart would not tell. */
  fake_now = 1020 * s;
  produce(topic, (h_rec[]){{0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"b\",\"region\":\"asia\"}"}}, 1);
  if (run_start(&r, tmpl, topic)) {
    CHECK_STR(step_rows(&r), "-U|2|b|us\n+U|2|b|asia\n");
    /* 1 idle since 1012 s: forgotten at 1023 s, across the restart */
    fake_now = 1023 * s;
    produce(topic, (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"eu\"}"}}, 1);
    CHECK_STR(step_rows(&r), "+I|1|a|eu\n");
  }
  run_end(&r);
  fake_now = 0;
  free(tmpl);
  h_rmdir(dir);
  free(dir);
}

/* ---- bounded reads ---- */

/* 'scan.bounded.mode' (the kafka source's): the query ends at the bound, in
** streaming mode; records after it are not read. */
TEST(bounded_modes_end_the_stream) {
  char topic[160];
  topic_name(topic, sizeof topic, "bounded");
  create_topic(topic, 1);
  produce(topic,
          (h_rec[]){{0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":2}", "{\"id\":2,\"name\":\"b\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"us\"}"},
                  {0, 0, "{\"id\":2}", NULL}},
          4);
  static const char *const modes[][2] = {
      {"'scan.bounded.mode' = 'latest-offset'",
       "+I|1|a|eu\n+I|2|b|eu\n-U|1|a|eu\n+U|1|a|us\n-D|2|b|eu\n"},
      {"'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = "
       "'partition:0,offset:3'",
       "+I|1|a|eu\n+I|2|b|eu\n-U|1|a|eu\n+U|1|a|us\n"},
      {"'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '1'", ""},
  };
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    char tmpl[2048];
    snprintf(tmpl, sizeof tmpl,
             "CREATE TABLE users (id BIGINT, name STRING, region STRING,"
             " PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',"
             " 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT', 'key.format' = 'json',"
             " 'value.format' = 'json', %s);\n"
             "CREATE TABLE out (id BIGINT, name STRING, region STRING)"
             " WITH ('connector' = 'memory');\n"
             "INSERT INTO out SELECT * FROM users;",
             modes[m][0]);
    dipper *db = NULL;
    CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
    char *sql = sql_of(tmpl, topic);
    const char *msg = NULL;
    int rc = h_run(db, sql, &msg); /* runs to the end: the bound */
    if (rc) fprintf(stderr, "run: %s\n", msg);
    CHECK_EQ(rc, DIPPER_OK);
    CHECK_STR(rows_of(db, "out", 0), modes[m][1]);
    free(sql);
    dipper_close(db);
  }
  /* a later record is past the bound of a query started before it */
  char tmpl[2048];
  snprintf(tmpl, sizeof tmpl, "%s",
           "CREATE TABLE users (id BIGINT, name STRING, region STRING,"
           " PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',"
           " 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT', 'key.format' = 'json',"
           " 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');\n"
           "CREATE TABLE out (id BIGINT, name STRING, region STRING)"
           " WITH ('connector' = 'memory');\n"
           "INSERT INTO out SELECT * FROM users;");
  run r;
  if (run_start(&r, tmpl, topic)) {
    produce(topic, (h_rec[]){{0, 0, "{\"id\":3}", "{\"id\":3,\"name\":\"c\",\"region\":\"eu\"}"}}, 1);
    int finished = 0;
    for (int i = 0; i < 20 && !finished; i++) CHECK_EQ(dipper_query_step(r.q, &finished), DIPPER_OK);
    CHECK(finished);
    CHECK_STR(rows_of(r.db, "out", 0), "+I|1|a|eu\n+I|2|b|eu\n-U|1|a|eu\n+U|1|a|us\n-D|2|b|eu\n");
  }
  run_end(&r);
}

/* ---- bad records ---- */

TEST(bad_records_name_topic_partition_offset) {
  char topic[160];
  topic_name(topic, sizeof topic, "bad");
  create_topic(topic, 2);
  produce(topic,
          (h_rec[]){{1, 0, "{\"id\":1}", "{\"id\":1,\"name\":\"a\",\"region\":\"eu\"}"},
                  {1, 0, "{\"id\":2}", "{\"id\":2,\"name\":"}},
          2);
  run r;
  if (run_start(&r, UPSERT_DDL "CREATE TABLE out (id BIGINT, name STRING, region STRING)"
                                " WITH ('connector' = 'memory');\n"
                                "INSERT INTO out SELECT * FROM users;",
                topic)) {
    int finished = 0;
    CHECK_EQ(dipper_query_step(r.q, &finished), DIPPER_DATA);
    char want[256];
    snprintf(want, sizeof want, "topic %s partition 1 offset 1", topic);
    const char *msg = dipper_errmsg(r.db);
    if (!strstr(msg, want)) fprintf(stderr, "message: %s\n", msg);
    CHECK(strstr(msg, want) != NULL);
  }
  run_end(&r);

  /* a record without a key cannot be placed; 'skip' counts it and the bad
     value, and goes on */
  char topic2[160];
  topic_name(topic2, sizeof topic2, "nokey");
  create_topic(topic2, 1);
  produce(topic2,
          (h_rec[]){{0, 0, NULL, "{\"id\":7,\"name\":\"x\",\"region\":\"eu\"}"},
                  {0, 0, "{\"id\":8}", "not json"},
                  {0, 0, "{\"id\":9}", "{\"id\":9,\"name\":\"y\",\"region\":\"us\"}"}},
          3);
  if (run_start(&r, UPSERT_DDL "CREATE TABLE out (id BIGINT, name STRING, region STRING)"
                                " WITH ('connector' = 'memory');\n"
                                "INSERT INTO out SELECT * FROM users;",
                topic2)) {
    int finished = 0;
    CHECK_EQ(dipper_query_step(r.q, &finished), DIPPER_DATA);
    char want[256];
    snprintf(want, sizeof want, "topic %s partition 0 offset 0", topic2);
    const char *msg = dipper_errmsg(r.db);
    if (!strstr(msg, want) || !strstr(msg, "no key"))
      fprintf(stderr, "message: %s\n", msg);
    CHECK(strstr(msg, want) != NULL);
    CHECK(strstr(msg, "no key") != NULL);
  }
  run_end(&r);
  char *skip_ddl = malloc(strlen(UPSERT_DDL) + 100);
  strcpy(skip_ddl, UPSERT_DDL);
  char *close = strstr(skip_ddl, "'value.format' = 'json')");
  strcpy(close, "'value.format' = 'json', 'dipper.bad-records' = 'skip');\n");
  char *tmpl = malloc(strlen(skip_ddl) + 400);
  snprintf(tmpl, strlen(skip_ddl) + 400,
           "%sCREATE TABLE out (id BIGINT, name STRING, region STRING)"
           " WITH ('connector' = 'memory');\nINSERT INTO out SELECT * FROM users;",
           skip_ddl);
  if (run_start(&r, tmpl, topic2)) {
    CHECK_STR(step_rows(&r), "+I|9|y|us\n");
    dipper_progress pr = {.size = sizeof pr};
    CHECK_EQ(dipper_query_progress(r.q, &pr), DIPPER_OK);
    CHECK_EQ(pr.bad_records_skipped, 2);
  }
  run_end(&r);
  free(tmpl);
  free(skip_ddl);
}

/* ---- what compile time refuses ---- */

static void refused(const char *tmpl, const char *needle) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  char *sql = sql_of(tmpl, "t");
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "upsert.sql", &prog);
  CHECK(rc != DIPPER_OK);
  const char *msg = dipper_errmsg(db);
  if (!strstr(msg, needle)) fprintf(stderr, "message: %s\n  expected: %s\n", msg, needle);
  CHECK(strstr(msg, needle) != NULL);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
}

TEST(compile_time_refusals) {
  refused("CREATE TABLE u (id BIGINT, v STRING) WITH ('connector' = 'upsert-kafka',"
          " 'topic' = 'TOPIC', 'properties.bootstrap.servers' = 'BOOT', 'key.format' = 'json',"
          " 'value.format' = 'json');",
          "needs a PRIMARY KEY");
  refused("SET 'execution.runtime-mode' = 'batch';\n" UPSERT_DDL
          "CREATE TABLE out (id BIGINT, name STRING, region STRING)"
          " WITH ('connector' = 'memory');\nINSERT INTO out SELECT * FROM users;",
          "batch mode reads insert-only");
  /* bounded too: Flink's batch mode takes insert-only sources alone */
  refused("SET 'execution.runtime-mode' = 'batch';\n"
          "CREATE TABLE users (id BIGINT, name STRING, region STRING,"
          " PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'TOPIC',"
          " 'properties.bootstrap.servers' = 'BOOT', 'key.format' = 'json',"
          " 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');\n"
          "CREATE TABLE out (id BIGINT, name STRING, region STRING)"
          " WITH ('connector' = 'memory');\nINSERT INTO out SELECT * FROM users;",
          "batch mode reads insert-only");
  refused("CREATE TABLE u (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ("
          "'connector' = 'upsert-kafka', 'topic' = 'TOPIC', 'properties.bootstrap.servers' = "
          "'BOOT', 'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = "
          "'specific-offsets');",
          "scan.bounded.specific-offsets");
  refused(UPSERT_DDL "CREATE TABLE out (id BIGINT, name STRING, region STRING) WITH ("
                     "'connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'json');\n"
                     "INSERT INTO out SELECT * FROM users;",
          "append-only");
  refused("CREATE TABLE u (k_id BIGINT, v STRING, PRIMARY KEY (k_id) NOT ENFORCED) WITH ("
          "'connector' = 'upsert-kafka', 'topic' = 'TOPIC', 'properties.bootstrap.servers' = "
          "'BOOT', 'key.format' = 'json', 'value.format' = 'json', 'key.fields-prefix' = 'k_');",
          "'key.fields-prefix' needs 'value.fields-include' = 'EXCEPT_KEY'");
  refused("CREATE TABLE u (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts,"
          " PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'TOPIC',"
          " 'properties.bootstrap.servers' = 'BOOT', 'key.format' = 'json',"
          " 'value.format' = 'json');",
          "WATERMARK on an upsert-kafka table");
  /* compiling for Spark connects to no server */
  refused("SET 'dipper.engine' = 'sc://127.0.0.1:1';\n" UPSERT_DDL
          "CREATE TABLE out (id BIGINT, name STRING, region STRING)"
          " WITH ('connector' = 'console');\nINSERT INTO out SELECT * FROM users;",
          "Structured Streaming has no changelog source");
}

int main(void) {
  if (!h_kafka_start("upsert_kafka_test")) return 1;
  return RUN_TESTS();
}
