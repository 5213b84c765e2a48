/*
** kafka_ft_test.c — fault tolerance of the kafka source and sink against a
** real broker on loopback (scripts/kafka-local; the kafka_broker fixture of
** tests/CMakeLists.txt starts it).  Sources and sinks are opened by hand over
** tables the SQL declared (conn_harness.h), so that a test can play the
** driver: save a position, drop the source as a crash would, and hand the
** bytes to a fresh one.
**
** Covers: a restored position reads exactly the rest (nothing lost, nothing
** twice); a position naming a topic the table no longer reads, and damaged
** bytes, are DIPPER_CORRUPT; replay_plan bounds a batch to its logged ends
** while more records wait; group-offsets resumes where the group's committed
** offsets (committed by the source) say; the exactly-once sink: batches 0..2
** committed, batch 3 written and "crashed" (closed without commit: aborted),
** reopened, batches 2 and 3 written again: a read_committed consumer sees
** every row once; at-least-once delivers every row; dipper_interrupt ends a
** wait on a broker that is down within a second (source open, exactly-once
** open, at-least-once commit).
*/
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "test.h"
#include "conn_harness.h"

extern const dp_source_class dp_source_kafka;
extern const dp_sink_class dp_sink_kafka;


/* ---- the broker ---- */

/* A topic of n partitions, seen with a leader each. */
static void create_topic(const char *name, int partitions) { h_create_topic(name, partitions); }

static void topic_name(char *buf, size_t cap, const char *what) {
  snprintf(buf, cap, "dipper-ft-%s-%s", h_run_tag, what);
}

/* {"id": n} for each n of ids[0..n), to partition parts[i] (or 0). */
static void produce_ids(const char *topic, const int *ids, const int *parts, int n) {
  h_rec *recs = calloc((size_t)n + 1, sizeof *recs);
  char(*v)[64] = calloc((size_t)n + 1, sizeof *v);
  CHECK(recs != NULL && v != NULL);
  for (int i = 0; recs && v && i < n; i++) {
    snprintf(v[i], sizeof v[i], "{\"id\":%d}", ids[i]);
    recs[i] = (h_rec){parts ? parts[i] : 0, 0, NULL, v[i], NULL, NULL};
  }
  if (recs && v) h_produce(topic, recs, n);
  free(recs);
  free(v);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Sorted ids as "1 2 3" (static). */
static const char *id_text(int64_t *ids, int n) {
  static char text[4096];
  qsort(ids, (size_t)n, sizeof *ids, cmp_i64);
  size_t len = 0;
  text[0] = '\0';
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "%s%" PRId64, i ? " " : "", ids[i]);
  return text;
}

/* The ids of every record of the topic's `nparts` partitions, from the
** beginning, read until none arrives for 2 s (after `expect` arrived: 500 ms),
** as a consumer of the given isolation level sees them. */
static const char *consume_ids(const char *topic, int nparts, int expect, bool committed_only) {
  int64_t ids[512];
  int n = 0;
  rd_kafka_t *rk = h_kafka_client(RD_KAFKA_CONSUMER, "dipper-ft-reader", committed_only);
  CHECK(rk != NULL);
  if (!rk) return "";
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(nparts);
  for (int p = 0; p < nparts; p++)
    rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, l);
  rd_kafka_topic_partition_list_destroy(l);
  for (int quiet = 0; quiet < (n >= expect ? 5 : 20) && n < 512;) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
    if (!m) {
      quiet++;
      continue;
    }
    quiet = 0;
    if (!m->err && m->payload) {
      long long id = -1;
      if (sscanf(m->payload, "{\"id\":%lld", &id) == 1) ids[n++] = id;
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return id_text(ids, n);
}

/* ---- sources and sinks by hand ---- */

typedef struct fixture {
  dipper *db;
  dp_arena *arena;
  dp_diags diags;
} fixture;

/* A handle with `ddl` declared. */
static void fx_open(fixture *f, const char *ddl) {
  memset(f, 0, sizeof *f);
  CHECK_EQ(dipper_open(&f->db, NULL), DIPPER_OK);
  const char *msg = NULL;
  int rc = h_run(f->db, ddl, &msg);
  if (rc) fprintf(stderr, "ddl: %s\n", msg);
  CHECK_EQ(rc, DIPPER_OK);
  f->arena = dp_arena_new(0);
  dp_diags_init(&f->diags, f->arena, NULL, NULL, 0);
}

static void fx_close(fixture *f) {
  dp_arena_free(f->arena);
  dipper_close(f->db);
}

static const char *last_message(const fixture *f) {
  return f->diags.count ? f->diags.items[f->diags.count - 1].message : "";
}

/* A kafka source over table `name` of f (its one column `id BIGINT`). */
static int src_open(fixture *f, dp_source *s, const char *name) {
  memset(s, 0, sizeof *s);
  const dp_table_def *t = dp_catalog_table(f->db->catalog, name);
  CHECK(t != NULL);
  if (!t) return DIPPER_INTERNAL;
  s->cls = &dp_source_kafka;
  s->db = f->db;
  s->table = t;
  s->schema = &t->schema;
  s->diags = &f->diags;
  return s->cls->open(s);
}

/* Read the planned batch: its ids appended to ids[*n]. */
static void src_read(dp_source *s, int64_t *ids, int *n) {
  dp_batch *b = dp_batch_new(s->schema, 0);
  bool done = false;
  for (int guard = 0; !done && guard < 1000; guard++) {
    int rc = s->cls->read(s, b, 1000, &done);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) break;
  }
  CHECK(done);
  CHECK_EQ(dp_batch_sync(b), DIPPER_OK);
  for (int64_t r = 0; r < b->nrows; r++) ids[(*n)++] = dp_vector_get_i64(b->cols[0], r);
  dp_batch_free(b);
}

/* One batch of at most max_rows: planned, read and committed. */
static void src_batch(dp_source *s, int64_t max_rows, int64_t *ids, int *n) {
  bool exhausted = false;
  CHECK_EQ(s->cls->plan_batch(s, max_rows, &exhausted), DIPPER_OK);
  src_read(s, ids, n);
  CHECK_EQ(s->cls->commit(s), DIPPER_OK);
}

#define KAFKA_TABLE                                                                 \
  "CREATE TABLE %s (id BIGINT) WITH ('connector' = 'kafka', 'topic' = '%s',"        \
  " 'properties.bootstrap.servers' = '%s', 'format' = 'json'%s);"

static char *ddl(const char *table, const char *topic, const char *more) {
  size_t n = strlen(KAFKA_TABLE) + strlen(table) + strlen(topic) + strlen(more) + 128;
  char *out = malloc(n);
  snprintf(out, n, KAFKA_TABLE, table, topic, h_bootstrap, more);
  return out;
}

/* ---- the source ---- */

TEST(restored_position_reads_exactly_the_rest) {
  char topic[160];
  topic_name(topic, sizeof topic, "resume");
  create_topic(topic, 2);
  static const int first[] = {1, 2, 3, 4, 5, 6}, first_p[] = {0, 0, 0, 1, 1, 1};
  produce_ids(topic, first, first_p, 6);
  char *sql = ddl("t", topic, "");
  fixture f;
  fx_open(&f, sql);
  int64_t ids[64];
  int n = 0;
  dp_buf pos = DP_BUF_INIT;
  dp_source a;
  CHECK_EQ(src_open(&f, &a, "t"), DIPPER_OK);
  src_batch(&a, 4, ids, &n); /* two of each partition */
  CHECK_EQ(n, 4);
  CHECK_EQ(a.cls->save_position(&a, &pos), DIPPER_OK);
  /* a batch planned and read but never committed: lost in the crash */
  int64_t lost[64];
  int nlost = 0;
  bool ex = false;
  CHECK_EQ(a.cls->plan_batch(&a, 0, &ex), DIPPER_OK);
  src_read(&a, lost, &nlost);
  CHECK_EQ(nlost, 2);
  a.cls->close(&a);
  static const int more[] = {7, 8}, more_p[] = {0, 1};
  produce_ids(topic, more, more_p, 2);
  dp_source b;
  CHECK_EQ(src_open(&f, &b, "t"), DIPPER_OK);
  dp_rd rd;
  dp_rd_init(&rd, pos.data, pos.len);
  CHECK_EQ(b.cls->restore_position(&b, &rd), DIPPER_OK);
  int before = n;
  src_batch(&b, 0, ids, &n);
  CHECK_EQ(n - before, 4);
  CHECK_STR(id_text(ids, n), "1 2 3 4 5 6 7 8");
  b.cls->close(&b);
  fx_close(&f);
  dp_buf_free(&pos);
  free(sql);
}

TEST(position_of_another_topic_or_damaged_is_corrupt) {
  char t1[160], t2[160];
  topic_name(t1, sizeof t1, "pos-a");
  topic_name(t2, sizeof t2, "pos-b");
  create_topic(t1, 1);
  create_topic(t2, 1);
  char *sql1 = ddl("a", t1, ""), *sql2 = ddl("b", t2, "");
  fixture f;
  fx_open(&f, sql1);
  const char *msg = NULL;
  CHECK_EQ(h_run(f.db, sql2, &msg), DIPPER_OK);
  dp_source a, b;
  dp_buf pos = DP_BUF_INIT;
  CHECK_EQ(src_open(&f, &a, "a"), DIPPER_OK);
  CHECK_EQ(a.cls->save_position(&a, &pos), DIPPER_OK);
  a.cls->close(&a);
  CHECK_EQ(src_open(&f, &b, "b"), DIPPER_OK);
  dp_rd rd;
  dp_rd_init(&rd, pos.data, pos.len);
  CHECK_EQ(b.cls->restore_position(&b, &rd), DIPPER_CORRUPT);
  CHECK_CONTAINS(last_message(&f), "names topic '");
  CHECK_CONTAINS(last_message(&f), "which the table no longer reads");
  dp_rd_init(&rd, pos.data, pos.len - 1); /* cut short */
  CHECK_EQ(b.cls->restore_position(&b, &rd), DIPPER_CORRUPT);
  CHECK_CONTAINS(last_message(&f), "does not read back");
  dp_rd_init(&rd, pos.data, pos.len); /* a position is no batch's bounds */
  CHECK_EQ(b.cls->replay_plan(&b, &rd), DIPPER_CORRUPT);
  b.cls->close(&b);
  fx_close(&f);
  dp_buf_free(&pos);
  free(sql1);
  free(sql2);
}

TEST(replay_plan_reads_exactly_the_logged_batch) {
  char topic[160];
  topic_name(topic, sizeof topic, "replay");
  create_topic(topic, 1);
  static const int ids1[] = {1, 2, 3}, ids2[] = {4, 5}, ids3[] = {6, 7};
  produce_ids(topic, ids1, NULL, 3);
  char *sql = ddl("t", topic, "");
  fixture f;
  fx_open(&f, sql);
  int64_t ids[64];
  int n = 0;
  dp_buf pos = DP_BUF_INIT, plan = DP_BUF_INIT;
  dp_source a;
  CHECK_EQ(src_open(&f, &a, "t"), DIPPER_OK);
  src_batch(&a, 0, ids, &n); /* batch 0: 1 2 3, committed */
  CHECK_EQ(a.cls->save_position(&a, &pos), DIPPER_OK);
  produce_ids(topic, ids2, NULL, 2);
  bool ex = false;
  CHECK_EQ(a.cls->plan_batch(&a, 0, &ex), DIPPER_OK); /* batch 1 planned: to 4 5 */
  CHECK_EQ(a.cls->save_plan(&a, &plan), DIPPER_OK);
  a.cls->close(&a); /* the crash: batch 1 logged, not committed */
  produce_ids(topic, ids3, NULL, 2);
  dp_source b;
  CHECK_EQ(src_open(&f, &b, "t"), DIPPER_OK);
  dp_rd rd;
  dp_rd_init(&rd, pos.data, pos.len);
  CHECK_EQ(b.cls->restore_position(&b, &rd), DIPPER_OK);
  dp_rd_init(&rd, plan.data, plan.len);
  CHECK_EQ(b.cls->replay_plan(&b, &rd), DIPPER_OK);
  n = 0;
  src_batch(&b, 0, ids, &n);
  CHECK_STR(id_text(ids, n), "4 5"); /* not 6 7, though they are there */
  n = 0;
  src_batch(&b, 0, ids, &n);
  CHECK_STR(id_text(ids, n), "6 7");
  b.cls->close(&b);
  fx_close(&f);
  dp_buf_free(&pos);
  dp_buf_free(&plan);
  free(sql);
}

TEST(group_offsets_resume_where_the_source_committed) {
  char topic[160], more[400];
  topic_name(topic, sizeof topic, "group");
  create_topic(topic, 1);
  snprintf(more, sizeof more,
           ", 'scan.startup.mode' = 'group-offsets', 'properties.group.id' = 'dipper-ft-%s',"
           " 'properties.auto.offset.reset' = 'earliest'",
           h_run_tag);
  static const int ids1[] = {1, 2, 3}, ids2[] = {4, 5};
  produce_ids(topic, ids1, NULL, 3);
  char *sql = ddl("t", topic, more);
  fixture f;
  fx_open(&f, sql);
  int64_t ids[64];
  int n = 0;
  dp_source a;
  CHECK_EQ(src_open(&f, &a, "t"), DIPPER_OK); /* no committed offset: from the earliest */
  src_batch(&a, 0, ids, &n);
  CHECK_STR(id_text(ids, n), "1 2 3");
  a.cls->close(&a);
  produce_ids(topic, ids2, NULL, 2);
  dp_source b;
  CHECK_EQ(src_open(&f, &b, "t"), DIPPER_OK);
  n = 0;
  src_batch(&b, 0, ids, &n);
  CHECK_STR(id_text(ids, n), "4 5");
  b.cls->close(&b);
  fx_close(&f);
  free(sql);
}

/* ---- the sink ---- */

static int sink_open(fixture *f, dp_sink *k, const char *name, const char *checkpoint) {
  memset(k, 0, sizeof *k);
  const dp_table_def *t = dp_catalog_table(f->db->catalog, name);
  CHECK(t != NULL);
  if (!t) return DIPPER_INTERNAL;
  k->cls = &dp_sink_kafka;
  k->db = f->db;
  k->table = t;
  k->schema = &t->schema;
  k->diags = &f->diags;
  k->checkpoint = checkpoint;
  return k->cls->open(k);
}

/* Batch `id`'s rows: id * 10 + 1 .. id * 10 + n. */
static int sink_write(dp_sink *k, int64_t batch_id, int n) {
  dp_batch *b = dp_batch_new(k->schema, 0);
  for (int i = 1; i <= n; i++) dp_vector_append_i64(b->cols[0], batch_id * 10 + i);
  dp_batch_sync(b);
  int rc = k->cls->write(k, batch_id, b);
  dp_batch_free(b);
  return rc;
}

TEST(exactly_once_sink_survives_a_crash_and_a_replayed_batch) {
  char topic[160], more[300];
  topic_name(topic, sizeof topic, "eos");
  create_topic(topic, 2);
  snprintf(more, sizeof more,
           ", 'sink.delivery-guarantee' = 'exactly-once',"
           " 'sink.transactional-id-prefix' = 'dipper-ft-%s-'",
           h_run_tag);
  char *sql = ddl("o", topic, more);
  char *dir = h_tempdir();
  fixture f;
  fx_open(&f, sql);
  dp_sink a;
  CHECK_EQ(sink_open(&f, &a, "o", dir), DIPPER_OK);
  for (int64_t batch = 0; batch <= 2; batch++) {
    CHECK_EQ(sink_write(&a, batch, 2), DIPPER_OK);
    CHECK_EQ(a.cls->commit(&a, batch), DIPPER_OK);
  }
  CHECK_EQ(sink_write(&a, 3, 2), DIPPER_OK);
  a.cls->close(&a); /* the crash: batch 3's transaction is aborted */
  CHECK_STR(consume_ids(topic, 2, 6, true), "1 2 11 12 21 22");
  /* Kafka committed batch 2 but dipper's commit log did not record it:
  ** dipper runs batch 2 again with the same rows, then batch 3. */
  dp_sink b;
  CHECK_EQ(sink_open(&f, &b, "o", dir), DIPPER_OK);
  CHECK_EQ(sink_write(&b, 2, 2), DIPPER_OK);
  CHECK_EQ(b.cls->commit(&b, 2), DIPPER_OK);
  CHECK_EQ(b.rows_skipped, 2); /* batch 2's rows were not written again */
  CHECK_EQ(sink_write(&b, 3, 2), DIPPER_OK);
  CHECK_EQ(b.cls->commit(&b, 3), DIPPER_OK);
  CHECK_EQ(b.rows_skipped, 2);
  b.cls->close(&b);
  CHECK_STR(consume_ids(topic, 2, 8, true), "1 2 11 12 21 22 31 32");
  fx_close(&f);
  h_rmdir(dir);
  free(dir);
  free(sql);
}

TEST(at_least_once_sink_delivers_every_row) {
  char topic[160];
  topic_name(topic, sizeof topic, "alo");
  create_topic(topic, 2);
  char *sql = ddl("o", topic, ", 'sink.delivery-guarantee' = 'at-least-once'");
  fixture f;
  fx_open(&f, sql);
  dp_sink k;
  CHECK_EQ(sink_open(&f, &k, "o", NULL), DIPPER_OK);
  CHECK_EQ(sink_write(&k, 0, 9), DIPPER_OK);
  CHECK_EQ(k.cls->commit(&k, 0), DIPPER_OK);
  CHECK_EQ(sink_write(&k, 1, 3), DIPPER_OK);
  CHECK_EQ(k.cls->commit(&k, 1), DIPPER_OK);
  k.cls->close(&k);
  CHECK_STR(consume_ids(topic, 2, 12, false), "1 2 3 4 5 6 7 8 9 11 12 13");
  fx_close(&f);
  free(sql);
}

/* ---- interrupts with the broker down ---- */

typedef struct nudge {
  dipper *db;
  int after_ms;
} nudge;

static void *interrupt_later(void *arg) {
  nudge *n = arg;
  nanosleep(&(struct timespec){n->after_ms / 1000, (long)(n->after_ms % 1000) * 1000000}, NULL);
  dipper_interrupt(n->db);
  return NULL;
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Nothing listens on port 1: every call waits for a broker that never comes. */
static const char *DEAD_TABLES =
    "CREATE TABLE s (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'x',"
    " 'properties.bootstrap.servers' = '127.0.0.1:1', 'format' = 'json');\n"
    "CREATE TABLE e (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'x',"
    " 'properties.bootstrap.servers' = '127.0.0.1:1', 'format' = 'json',"
    " 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'p-');\n"
    "CREATE TABLE l (id BIGINT) WITH ('connector' = 'kafka', 'topic' = 'x',"
    " 'properties.bootstrap.servers' = '127.0.0.1:1', 'format' = 'json');";

TEST(interrupt_is_honoured_within_a_second_with_the_broker_down) {
  fixture f;
  fx_open(&f, DEAD_TABLES);
  nudge nd = {f.db, 300};
  pthread_t th;
  /* the source's open (the cluster's metadata) */
  pthread_create(&th, NULL, interrupt_later, &nd);
  int64_t t0 = mono_ms();
  dp_source s;
  int rc = src_open(&f, &s, "s");
  int64_t took = mono_ms() - t0;
  pthread_join(th, NULL);
  CHECK_EQ(rc, DIPPER_INTERRUPTED);
  CHECK(took < 1300);
  f.db->interrupted = 0;
  /* the exactly-once sink's open (init_transactions) */
  pthread_create(&th, NULL, interrupt_later, &nd);
  t0 = mono_ms();
  dp_sink k;
  rc = sink_open(&f, &k, "e", "/tmp");
  took = mono_ms() - t0;
  pthread_join(th, NULL);
  CHECK_EQ(rc, DIPPER_INTERRUPTED);
  CHECK(took < 1300);
  f.db->interrupted = 0;
  /* the at-least-once sink's commit (deliveries that cannot be made) */
  CHECK_EQ(sink_open(&f, &k, "l", NULL), DIPPER_OK);
  CHECK_EQ(sink_write(&k, 0, 3), DIPPER_OK);
  pthread_create(&th, NULL, interrupt_later, &nd);
  t0 = mono_ms();
  rc = k.cls->commit(&k, 0);
  took = mono_ms() - t0;
  pthread_join(th, NULL);
  CHECK_EQ(rc, DIPPER_INTERRUPTED);
  CHECK(took < 1300);
  t0 = mono_ms();
  k.cls->close(&k); /* interrupted still: no waiting for the deliveries */
  CHECK(mono_ms() - t0 < 1300);
  f.db->interrupted = 0;
  fx_close(&f);
}

int main(void) {
  if (!h_kafka_start("kafka_ft_test")) return 1;
  return RUN_TESTS();
}
