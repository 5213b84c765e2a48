/*
** kinesis_emu.c — the kinesis source and sink against a real Kinesis
** emulator (kinesis-local, scripts/kinesis-local), on loopback inside a
** network namespace of the test's own: the ctest entry runs
** `scripts/kinesis-local run -- <this program>`, which sets
** DIPPER_KINESIS_ENDPOINT.  Without it, or with an emulator that does not
** answer, the program fails: it never skips.
**
** Sources and sinks are opened by hand over tables the SQL declared (as
** tests/connectors/kafka_ft_test.c does), so that a test can play the
** driver; one test runs whole queries through the public API with a
** checkpoint folder.  Streams are created, fed, split and read back with
** plain API calls through the connector's HTTP client (kinesis_int.h).
**
** A fault proxy (a thread on 127.0.0.1 in front of the emulator, which has
** no throughput limits of its own) answers chosen calls with
** ProvisionedThroughputExceededException, ExpiredIteratorException, or a
** PutRecords answer whose entries all failed, and forwards the rest.
*/
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "connectors/conn_harness.h"
#include "connectors/kinesis_int.h"
#include "core/session.h"
#include "plan/catalog.h"
#include "test.h"

extern const dp_source_class dp_source_kinesis;
extern const dp_sink_class dp_sink_kinesis;

#define SECRET "SeCrEt-dipper-test-7f3a9c"

static char endpoint[256];
static char run_tag[64];

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL); }

/* ---- a handle and its tables ---- */

typedef struct fixture {
  dipper *db;
  dp_arena *arena;
  dp_diags diags;
} fixture;

static void fx_open(fixture *f) {
  memset(f, 0, sizeof *f);
  CHECK_EQ(dipper_open(&f->db, NULL), DIPPER_OK);
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

/* CREATE TABLE `name` (cols) over stream `stream` at `ep` (NULL: the
** emulator), with `more` options (", 'k' = 'v'..."). */
static void declare(fixture *f, const char *name, const char *cols, const char *stream,
                    const char *ep, const char *more) {
  char sql[4096];
  snprintf(sql, sizeof sql,
           "CREATE TABLE %s (%s) WITH ('connector' = 'kinesis', 'stream' = '%s', "
           "'aws.region' = 'us-east-1', 'aws.endpoint' = '%s', "
           "'aws.credentials.provider' = 'BASIC', "
           "'aws.credentials.basic.accesskeyid' = 'AKIDDIPPERTEST', "
           "'aws.credentials.basic.secretkey' = '" SECRET "', 'format' = 'json', "
           "'scan.shard.getrecords.intervalmillis' = '0'%s);",
           name, cols, stream, ep ? ep : endpoint, more ? more : "");
  const char *msg = NULL;
  int rc = h_run(f->db, sql, &msg);
  if (rc) fprintf(stderr, "ddl: %s\n%s\n", msg, sql);
  CHECK_EQ(rc, DIPPER_OK);
}

static const dp_table_def *table(fixture *f, const char *name) {
  const dp_table_def *t = dp_catalog_table(f->db->catalog, name);
  CHECK(t != NULL);
  return t;
}

static void stream_name(char *buf, size_t cap, const char *what) {
  snprintf(buf, cap, "dipper-%s-%s", run_tag, what);
}

/* ---- plain API calls ---- */

typedef struct admin {
  fixture f;
  dp_kinesis *kc;
  char stream[160];
} admin;

static const dp_kin_backoff admin_backoff = {50, 1000, 2.0, 8};

static void admin_open(admin *a, const char *stream) {
  fx_open(&a->f);
  snprintf(a->stream, sizeof a->stream, "%s", stream);
  declare(&a->f, "adm", "d STRING", stream, NULL, NULL);
  CHECK_EQ(dp_kinesis_new(a->f.db, &a->f.diags, table(&a->f, "adm"), &a->kc), DIPPER_OK);
}

static void admin_close(admin *a) {
  dp_kinesis_free(a->kc);
  fx_close(&a->f);
}

/* One call; its answer in dp_kinesis_answer. */
static int api(admin *a, const char *action, const char *body) {
  int rc = dp_kinesis_call(a->kc, action, body, strlen(body), &admin_backoff);
  if (rc != DIPPER_OK) {
    dp_kinesis_fail(a->kc, action);
    fprintf(stderr, "api %s: %s\n", action, last_message(&a->f));
  }
  return rc;
}

static void wait_active(admin *a) {
  char body[256];
  snprintf(body, sizeof body, "{\"StreamName\":\"%s\"}", a->stream);
  bool active = false;
  for (int i = 0; i < 200 && !active; i++) {
    if (api(a, "DescribeStreamSummary", body) != DIPPER_OK) break;
    active = strstr(dp_kinesis_answer(a->kc, NULL), "\"ACTIVE\"") != NULL;
    if (!active) nap_ms(50);
  }
  CHECK(active);
}

static void create_stream(admin *a, int shards) {
  char body[256];
  snprintf(body, sizeof body, "{\"StreamName\":\"%s\",\"ShardCount\":%d}", a->stream, shards);
  CHECK_EQ(api(a, "CreateStream", body), DIPPER_OK);
  wait_active(a);
}

/* Records id from..to-1, each {"id": n, "k": "k<n % nkeys>"} under that
** partition key, or the raw `data` when given (one record). */
typedef const char *(*hash_fn)(int id);

static void put_ids_hash(admin *a, int from, int to, int nkeys, hash_fn hash);

static void put_ids(admin *a, int from, int to, int nkeys) { put_ids_hash(a, from, to, nkeys, NULL); }

/* As put_ids, record n to the shard of ExplicitHashKey hash(n) (hash NULL:
** its partition key's). */
static void put_ids_hash(admin *a, int from, int to, int nkeys, hash_fn hash) {
  dp_buf q = DP_BUF_INIT;
  for (int start = from; start < to; start += 500) {
    q.len = 0;
    dp_buf_printf(&q, "{\"StreamName\":\"%s\",\"Records\":[", a->stream);
    for (int i = start; i < to && i < start + 500; i++) {
      char data[96], key[32];
      snprintf(key, sizeof key, "k%d", i % nkeys);
      snprintf(data, sizeof data, "{\"id\":%d,\"k\":\"%s\"}", i, key);
      dp_buf_puts(&q, i > start ? ",{\"Data\":\"" : "{\"Data\":\"");
      dp_base64_put(&q, (const unsigned char *)data, strlen(data));
      dp_buf_printf(&q, "\",\"PartitionKey\":\"%s\"", key);
      if (hash) dp_buf_printf(&q, ",\"ExplicitHashKey\":\"%s\"", hash(i));
      dp_buf_putc(&q, '}');
    }
    dp_buf_puts(&q, "]}");
    CHECK_EQ(api(a, "PutRecords", dp_buf_cstr(&q)), DIPPER_OK);
    CHECK(strstr(dp_kinesis_answer(a->kc, NULL), "\"FailedRecordCount\":0") != NULL);
  }
  dp_buf_free(&q);
}

static void put_raw(admin *a, const char *data, const char *key) {
  dp_buf q = DP_BUF_INIT;
  dp_buf_printf(&q, "{\"StreamName\":\"%s\",\"Data\":\"", a->stream);
  dp_base64_put(&q, (const unsigned char *)data, strlen(data));
  dp_buf_printf(&q, "\",\"PartitionKey\":\"%s\"}", key);
  CHECK_EQ(api(a, "PutRecord", dp_buf_cstr(&q)), DIPPER_OK);
  dp_buf_free(&q);
}

/* Split `shard` at the middle of its hash range (given), and wait. */
static void split(admin *a, const char *shard, const char *middle) {
  char body[512];
  snprintf(body, sizeof body,
           "{\"StreamName\":\"%s\",\"ShardToSplit\":\"%s\",\"NewStartingHashKey\":\"%s\"}",
           a->stream, shard, middle);
  CHECK_EQ(api(a, "SplitShard", body), DIPPER_OK);
  wait_active(a);
}

/* Every record of the stream, read raw, shard by shard from TRIM_HORIZON:
** ids[i] and keys (the partition key as an integer after 'k' or the id's
** text) into the arrays; returns the count. */
typedef struct raw_rec {
  int64_t id;
  char key[64];
  char data[160];
} raw_rec;

static int read_back(admin *a, raw_rec *out, int cap) {
  dp_kin_json gr, ls, gi;
  const dp_type *str = dp_type_of(DP_T_STRING);
  dp_arena *ar = a->f.arena;
  dp_field rec[] = {{"Data", dp_type_of(DP_T_BYTES)}, {"PartitionKey", str}};
  dp_field grf[] = {{"Records", dp_type_array(ar, dp_type_row(ar, 2, rec))},
                    {"NextShardIterator", str}};
  dp_field sh[] = {{"ShardId", str}};
  dp_field lsf[] = {{"Shards", dp_type_array(ar, dp_type_row(ar, 1, sh))}};
  dp_field gif[] = {{"ShardIterator", str}};
  CHECK_EQ(dp_kin_json_open(&gr, ar, 2, grf), DIPPER_OK);
  CHECK_EQ(dp_kin_json_open(&ls, ar, 1, lsf), DIPPER_OK);
  CHECK_EQ(dp_kin_json_open(&gi, ar, 1, gif), DIPPER_OK);
  dp_format_error fe;
  char body[4096];
  int n = 0;
  snprintf(body, sizeof body, "{\"StreamName\":\"%s\"}", a->stream);
  CHECK_EQ(api(a, "ListShards", body), DIPPER_OK);
  size_t len = 0;
  const char *ans = dp_kinesis_answer(a->kc, &len);
  CHECK_EQ(dp_kin_json_parse(&ls, ans, len, &fe), DIPPER_OK);
  int64_t lo = 0, hi = 0;
  dp_vector_list_bounds(ls.row->cols[0], 0, &lo, &hi);
  char ids[64][64];
  int nshards = 0;
  for (int64_t i = lo; i < hi && nshards < 64; i++) {
    size_t sn = 0;
    const char *s = dp_kin_str(ls.row->cols[0]->children[0]->children[0], i, &sn);
    snprintf(ids[nshards++], sizeof ids[0], "%.*s", (int)sn, s);
  }
  for (int s = 0; s < nshards; s++) {
    snprintf(body, sizeof body,
             "{\"StreamName\":\"%.128s\",\"ShardId\":\"%.63s\",\"ShardIteratorType\":\"TRIM_HORIZON\"}",
             a->stream, ids[s]);
    CHECK_EQ(api(a, "GetShardIterator", body), DIPPER_OK);
    ans = dp_kinesis_answer(a->kc, &len);
    CHECK_EQ(dp_kin_json_parse(&gi, ans, len, &fe), DIPPER_OK);
    size_t itn = 0;
    const char *it = dp_kin_str(gi.row->cols[0], 0, &itn);
    char iter[1024];
    snprintf(iter, sizeof iter, "%.*s", (int)itn, it ? it : "");
    for (int empty = 0; empty < 2 && iter[0];) {
      snprintf(body, sizeof body, "{\"ShardIterator\":\"%s\",\"Limit\":10000}", iter);
      if (api(a, "GetRecords", body) != DIPPER_OK) break;
      ans = dp_kinesis_answer(a->kc, &len);
      CHECK_EQ(dp_kin_json_parse(&gr, ans, len, &fe), DIPPER_OK);
      dp_vector_list_bounds(gr.row->cols[0], 0, &lo, &hi);
      empty = hi == lo ? empty + 1 : 0;
      const dp_vector *rows = gr.row->cols[0]->children[0];
      for (int64_t i = lo; i < hi && n < cap; i++) {
        size_t dn = 0, kn = 0;
        const char *d = dp_kin_str(rows->children[0], i, &dn);
        const char *k = dp_kin_str(rows->children[1], i, &kn);
        raw_rec *r = &out[n++];
        snprintf(r->data, sizeof r->data, "%.*s", (int)dn, d ? d : "");
        snprintf(r->key, sizeof r->key, "%.*s", (int)kn, k ? k : "");
        const char *idp = strstr(r->data, "\"id\":");
        r->id = idp ? strtoll(idp + 5, NULL, 10) : -1;
      }
      it = dp_kin_str(gr.row->cols[1], 0, &itn);
      snprintf(iter, sizeof iter, "%.*s", (int)(it ? itn : 0), it ? it : "");
    }
  }
  dp_kin_json_close(&gr);
  dp_kin_json_close(&ls);
  dp_kin_json_close(&gi);
  return n;
}

/* ---- the source, by hand ---- */

#define SRC_COLS                                                                     \
  "id BIGINT, k STRING, shard STRING METADATA FROM 'shard-id' VIRTUAL, "             \
  "seq STRING METADATA FROM 'sequence-number' VIRTUAL, "                             \
  "pk STRING METADATA FROM 'partition-key' VIRTUAL, "                                \
  "ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL"

typedef struct row {
  int64_t id;
  char k[16], shard[64], seq[64], pk[16];
  bool has_ts;
} row;

typedef struct rows {
  row r[4096];
  int n;
} rows;

static int src_open(fixture *f, dp_source *s, const char *name) {
  memset(s, 0, sizeof *s);
  const dp_table_def *t = table(f, name);
  if (!t) return DIPPER_INTERNAL;
  s->cls = &dp_source_kinesis;
  s->db = f->db;
  s->table = t;
  s->schema = &t->schema;
  s->diags = &f->diags;
  return s->cls->open(s);
}

static void copy_str(char *dst, size_t cap, const dp_vector *v, int64_t i) {
  size_t n = 0;
  const char *p = dp_vector_is_null(v, i) ? "" : dp_vector_get_str(v, i, &n);
  snprintf(dst, cap, "%.*s", (int)n, p);
}

/* Read the planned batch into out. */
static int src_read(dp_source *s, rows *out) {
  dp_batch *b = dp_batch_new(s->schema, 0);
  bool done = false;
  int rc = DIPPER_OK;
  for (int guard = 0; !done && guard < 10000 && rc == DIPPER_OK; guard++)
    rc = s->cls->read(s, b, 100, &done);
  if (rc == DIPPER_OK) rc = dp_batch_sync(b);
  for (int64_t r = 0; rc == DIPPER_OK && r < b->nrows && out->n < 4096; r++) {
    row *w = &out->r[out->n++];
    w->id = dp_vector_get_i64(b->cols[0], r);
    copy_str(w->k, sizeof w->k, b->cols[1], r);
    if (s->schema->ncols > 2) {
      copy_str(w->shard, sizeof w->shard, b->cols[2], r);
      copy_str(w->seq, sizeof w->seq, b->cols[3], r);
      copy_str(w->pk, sizeof w->pk, b->cols[4], r);
      w->has_ts = !dp_vector_is_null(b->cols[5], r);
    }
  }
  dp_batch_free(b);
  return rc;
}

/* One batch: planned, read and committed. */
static int src_batch(dp_source *s, int64_t max_rows, rows *out) {
  bool exhausted = false;
  int rc = s->cls->plan_batch(s, max_rows, &exhausted);
  if (rc == DIPPER_OK) rc = src_read(s, out);
  if (rc == DIPPER_OK) rc = s->cls->commit(s);
  return rc;
}

/* Batches until `want` rows are in, then two more (which must add none). */
static void src_until(dp_source *s, int64_t max_rows, rows *out, int want) {
  int64_t deadline = mono_ms() + 30000;
  while (out->n < want && mono_ms() < deadline) {
    int before = out->n;
    int rc = src_batch(s, max_rows, out);
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) return;
    if (out->n == before) nap_ms(20);
  }
  for (int i = 0; i < 2; i++) CHECK_EQ(src_batch(s, max_rows, out), DIPPER_OK);
}

/* Every id of [0, n) exactly once, and per key in increasing order. */
static void check_exact(const rows *got, int n, int nkeys) {
  CHECK_EQ(got->n, n);
  static unsigned char seen[100000];
  memset(seen, 0, sizeof seen);
  int64_t last[64];
  for (int k = 0; k < 64; k++) last[k] = -1;
  int bad_order = 0, dup = 0, range = 0;
  for (int i = 0; i < got->n; i++) {
    int64_t id = got->r[i].id;
    if (id < 0 || id >= n) {
      range++;
      continue;
    }
    dup += seen[id]++ > 0;
    int key = (int)(id % nkeys);
    if (id <= last[key]) bad_order++;
    last[key] = id;
  }
  CHECK_EQ(range, 0);
  CHECK_EQ(dup, 0);
  CHECK_EQ(bad_order, 0);
}

static int distinct_shards(const rows *got) {
  char names[32][64];
  int n = 0;
  for (int i = 0; i < got->n; i++) {
    bool found = false;
    for (int j = 0; j < n && !found; j++) found = strcmp(names[j], got->r[i].shard) == 0;
    if (!found && n < 32) snprintf(names[n++], sizeof names[0], "%s", got->r[i].shard);
  }
  return n;
}

/* ---- the source ---- */

TEST(rows_exact_across_shards_with_metadata) {
  char stream[160];
  stream_name(stream, sizeof stream, "shards");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 4);
  put_ids(&a, 0, 600, 16);
  fixture f;
  fx_open(&f);
  declare(&f, "src", SRC_COLS, stream, NULL, NULL);
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  static rows got;
  got.n = 0;
  src_until(&s, 50, &got, 600);
  check_exact(&got, 600, 16);
  CHECK_EQ(distinct_shards(&got), 4);
  int bad_meta = 0;
  for (int i = 0; i < got.n; i++) {
    const row *r = &got.r[i];
    bad_meta += strcmp(r->pk, r->k) != 0 || strncmp(r->shard, "shardId-", 8) != 0 ||
                strlen(r->seq) < 10 || !r->has_ts;
  }
  CHECK_EQ(bad_meta, 0);
  CHECK_EQ(s.metrics.rows, 600);
  s.cls->close(&s);
  fx_close(&f);
  admin_close(&a);
}

TEST(split_mid_stream_loses_and_reorders_nothing) {
  char stream[160];
  stream_name(stream, sizeof stream, "split");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 1);
  put_ids(&a, 0, 300, 10);
  fixture f;
  fx_open(&f);
  declare(&f, "src", SRC_COLS, stream, NULL, NULL);
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  static rows got;
  got.n = 0;
  CHECK_EQ(src_batch(&s, 100, &got), DIPPER_OK); /* the parent part-read */
  CHECK_EQ(got.n, 100);
  split(&a, "shardId-000000000000", "170141183460469231731687303715884105728");
  put_ids(&a, 300, 600, 10); /* to the children */
  src_until(&s, 70, &got, 600);
  check_exact(&got, 600, 10);
  CHECK_EQ(distinct_shards(&got), 3);
  /* every parent row before any child row */
  int last_parent = -1, first_child = got.n;
  for (int i = 0; i < got.n; i++) {
    if (strcmp(got.r[i].shard, "shardId-000000000000") == 0) last_parent = i;
    else if (first_child == got.n) first_child = i;
  }
  CHECK(last_parent < first_child);
  /* a second split, of a child, while reading */
  split(&a, "shardId-000000000001", "85070591730234615865843651857942052864");
  put_ids(&a, 600, 800, 10);
  src_until(&s, 70, &got, 800);
  check_exact(&got, 800, 10);
  s.cls->close(&s);
  /* a fresh reader of the split stream: ListShards names the closed parents
  ** and their children at once; with 20 records a call, the children must
  ** still wait for their parents to finish */
  declare(&f, "fresh", SRC_COLS, stream, NULL, ", 'scan.shard.getrecords.maxrecordcount' = '20'");
  got.n = 0;
  CHECK_EQ(src_open(&f, &s, "fresh"), DIPPER_OK);
  src_until(&s, 100, &got, 800);
  check_exact(&got, 800, 10);
  CHECK_EQ(distinct_shards(&got), 5);
  s.cls->close(&s);
  fx_close(&f);
  admin_close(&a);
}

static const char *low_or_high(int id) {
  return id % 4 == 0 ? "1" : "255211775190703847597530955573826158592";
}

TEST(a_merge_waits_for_both_parents) {
  char stream[160];
  stream_name(stream, sizeof stream, "merge");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 2);
  /* key k0 to shard 0, k1..k3 to shard 1: the adjacent parent has three
  ** times the records of the other, and each key lives in one shard */
  put_ids_hash(&a, 0, 300, 4, low_or_high);
  char body[512];
  snprintf(body, sizeof body,
           "{\"StreamName\":\"%s\",\"ShardToMerge\":\"shardId-000000000000\","
           "\"AdjacentShardToMerge\":\"shardId-000000000001\"}",
           stream);
  CHECK_EQ(api(&a, "MergeShards", body), DIPPER_OK);
  wait_active(&a);
  put_ids(&a, 300, 600, 4); /* all to the merged shard */
  fixture f;
  fx_open(&f);
  declare(&f, "src", SRC_COLS, stream, NULL, ", 'scan.shard.getrecords.maxrecordcount' = '25'");
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  static rows got;
  got.n = 0;
  src_until(&s, 60, &got, 600);
  check_exact(&got, 600, 4);
  CHECK_EQ(distinct_shards(&got), 3);
  int last_parent = -1, first_child = got.n;
  for (int i = 0; i < got.n; i++) {
    if (strcmp(got.r[i].shard, "shardId-000000000002") != 0) last_parent = i;
    else if (first_child == got.n) first_child = i;
  }
  CHECK(last_parent < first_child);
  s.cls->close(&s);
  fx_close(&f);
  admin_close(&a);
}

TEST(initpos_at_timestamp_starts_there) {
  char stream[160];
  stream_name(stream, sizeof stream, "atts");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 2);
  put_ids(&a, 0, 50, 5);
  nap_ms(1100);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  nap_ms(200);
  put_ids(&a, 50, 80, 5);
  struct tm tm;
  time_t secs = now.tv_sec;
  gmtime_r(&secs, &tm);
  char opt[160];
  snprintf(opt, sizeof opt,
           ", 'scan.stream.initpos' = 'AT_TIMESTAMP', 'scan.stream.initpos-timestamp' = "
           "'%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ'",
           tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
           now.tv_nsec / 1000000);
  fixture f;
  fx_open(&f);
  declare(&f, "src", SRC_COLS, stream, NULL, opt);
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  static rows got;
  got.n = 0;
  src_until(&s, 0, &got, 30);
  CHECK_EQ(got.n, 30);
  int old = 0;
  for (int i = 0; i < got.n; i++) old += got.r[i].id < 50;
  CHECK_EQ(old, 0);
  s.cls->close(&s);
  /* a time that is neither form */
  declare(&f, "bad_ts", "id BIGINT", stream, NULL,
          ", 'scan.stream.initpos' = 'AT_TIMESTAMP', 'scan.stream.initpos-timestamp' = 'soon'");
  CHECK_EQ(src_open(&f, &s, "bad_ts"), DIPPER_OPTION);
  CHECK(strstr(last_message(&f), "neither epoch seconds nor an ISO-8601 time") != NULL);
  s.cls->close(&s);
  fx_close(&f);
  admin_close(&a);
}

TEST(initpos_latest_reads_only_new_records) {
  char stream[160];
  stream_name(stream, sizeof stream, "latest");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 2);
  put_ids(&a, 0, 50, 5);
  fixture f;
  fx_open(&f);
  declare(&f, "src", SRC_COLS, stream, NULL, ", 'scan.stream.initpos' = 'LATEST'");
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  static rows got;
  got.n = 0;
  CHECK_EQ(src_batch(&s, 0, &got), DIPPER_OK); /* takes the iterators at the tip */
  CHECK_EQ(got.n, 0);
  put_ids(&a, 50, 80, 5);
  src_until(&s, 0, &got, 30);
  CHECK_EQ(got.n, 30);
  int old = 0;
  for (int i = 0; i < got.n; i++) old += got.r[i].id < 50;
  CHECK_EQ(old, 0);
  s.cls->close(&s);
  fx_close(&f);
  admin_close(&a);
}

TEST(bad_records_follow_the_policy) {
  char stream[160];
  stream_name(stream, sizeof stream, "bad");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 1);
  put_ids(&a, 0, 5, 1);
  put_raw(&a, "{\"id\": not json", "k0");
  put_raw(&a, "{\"id\": \"abc\"}", "k0");
  put_ids(&a, 5, 10, 1);
  fixture f;
  fx_open(&f);
  char dead[256];
  char *dir = h_tempdir();
  snprintf(dead, sizeof dead, ", 'dipper.bad-records' = 'dead-letter', 'dipper.dead-letter.path' = '%s/dead.jsonl'", dir);
  declare(&f, "skip", "id BIGINT, k STRING", stream, NULL, ", 'dipper.bad-records' = 'skip'");
  declare(&f, "fail", "id BIGINT, k STRING", stream, NULL, NULL);
  declare(&f, "dead", "id BIGINT, k STRING", stream, NULL, dead);
  dp_source s;
  static rows got;
  got.n = 0;
  CHECK_EQ(src_open(&f, &s, "skip"), DIPPER_OK);
  src_until(&s, 0, &got, 10);
  check_exact(&got, 10, 1);
  CHECK_EQ(s.metrics.bad_records_skipped, 2);
  s.cls->close(&s);
  got.n = 0;
  CHECK_EQ(src_open(&f, &s, "fail"), DIPPER_OK);
  bool exhausted = false;
  CHECK_EQ(s.cls->plan_batch(&s, 0, &exhausted), DIPPER_OK);
  CHECK_EQ(src_read(&s, &got), DIPPER_DATA);
  CHECK(strstr(last_message(&f), "shard shardId-000000000000 sequence ") != NULL);
  CHECK(strstr(last_message(&f), SECRET) == NULL);
  s.cls->close(&s);
  got.n = 0;
  CHECK_EQ(src_open(&f, &s, "dead"), DIPPER_OK);
  src_until(&s, 0, &got, 10);
  CHECK_EQ(got.n, 10);
  s.cls->close(&s);
  char *text = h_read(dir, "dead.jsonl");
  CHECK(text != NULL);
  int lines = 0;
  for (const char *p = text ? text : ""; *p; p++) lines += *p == '\n';
  CHECK_EQ(lines, 2);
  CHECK(text && strstr(text, "not json") != NULL);
  free(text);
  h_rmdir(dir);
  free(dir);
  fx_close(&f);
  admin_close(&a);
}

TEST(restart_from_a_position_and_a_logged_batch_continues_exactly) {
  char stream[160];
  stream_name(stream, sizeof stream, "restart");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 2);
  put_ids(&a, 0, 200, 8);
  fixture f;
  fx_open(&f);
  declare(&f, "src", SRC_COLS, stream, NULL, NULL);
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  static rows committed, lost;
  committed.n = lost.n = 0;
  CHECK_EQ(src_batch(&s, 60, &committed), DIPPER_OK);
  CHECK_EQ(committed.n, 60);
  dp_buf pos = DP_BUF_INIT, plan = DP_BUF_INIT;
  CHECK_EQ(s.cls->save_position(&s, &pos), DIPPER_OK);
  /* batch 2: planned and logged, read, never committed: a crash */
  bool exhausted = false;
  CHECK_EQ(s.cls->plan_batch(&s, 50, &exhausted), DIPPER_OK);
  CHECK_EQ(s.cls->save_plan(&s, &plan), DIPPER_OK);
  CHECK_EQ(src_read(&s, &lost), DIPPER_OK);
  CHECK_EQ(lost.n, 50);
  s.cls->close(&s);
  /* meanwhile the stream moves on, and a shard splits */
  put_ids(&a, 200, 260, 8);
  split(&a, "shardId-000000000001", "255211775190703847597530955573826158592");
  put_ids(&a, 260, 320, 8);
  /* the restart: the position, then the logged batch exactly */
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  dp_rd in;
  dp_rd_init(&in, pos.data, pos.len);
  CHECK_EQ(s.cls->restore_position(&s, &in), DIPPER_OK);
  dp_rd_init(&in, plan.data, plan.len);
  CHECK_EQ(s.cls->replay_plan(&s, &in), DIPPER_OK);
  static rows again;
  again.n = 0;
  CHECK_EQ(src_batch(&s, 50, &again), DIPPER_OK);
  CHECK_EQ(again.n, lost.n);
  int same = 0;
  for (int i = 0; i < again.n && i < lost.n; i++)
    same += again.r[i].id == lost.r[i].id && !strcmp(again.r[i].seq, lost.r[i].seq);
  CHECK_EQ(same, lost.n);
  for (int i = 0; i < again.n; i++) committed.r[committed.n++] = again.r[i];
  src_until(&s, 45, &committed, 320);
  check_exact(&committed, 320, 8);
  s.cls->close(&s);
  /* damaged bytes are refused: every cut of the position and of the bounds
  ** is DIPPER_CORRUPT, and a flipped byte reads back or is refused (no
  ** crash, no leak: the sanitizers watch) */
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  dp_rd_init(&in, pos.data, pos.len / 2);
  CHECK_EQ(s.cls->restore_position(&s, &in), DIPPER_CORRUPT);
  CHECK(strstr(last_message(&f), "does not read back") != NULL);
  s.cls->close(&s);
  int not_corrupt = 0, odd = 0;
  for (size_t cut = 0; cut < pos.len; cut++) {
    CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
    dp_rd_init(&in, pos.data, cut);
    not_corrupt += s.cls->restore_position(&s, &in) != DIPPER_CORRUPT;
    s.cls->close(&s);
  }
  for (size_t cut = 0; cut < plan.len; cut++) {
    CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
    dp_rd_init(&in, plan.data, cut);
    not_corrupt += s.cls->replay_plan(&s, &in) != DIPPER_CORRUPT;
    s.cls->close(&s);
  }
  CHECK_EQ(not_corrupt, 0);
  for (size_t at = 0; at < pos.len + plan.len; at++) {
    dp_buf *b = at < pos.len ? &pos : &plan;
    size_t i = at < pos.len ? at : at - pos.len;
    b->data[i] ^= 0x5a;
    CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
    dp_rd_init(&in, b->data, b->len);
    int rc = b == &pos ? s.cls->restore_position(&s, &in) : s.cls->replay_plan(&s, &in);
    odd += rc != DIPPER_OK && rc != DIPPER_CORRUPT;
    s.cls->close(&s);
    b->data[i] ^= 0x5a;
  }
  CHECK_EQ(odd, 0);
  dp_buf_free(&pos);
  dp_buf_free(&plan);
  fx_close(&f);
  admin_close(&a);
}

/* ---- the fault proxy ---- */

typedef struct proxy {
  int lfd, port;
  pthread_t th;
  atomic_int stop;
  atomic_int throttle_get;   /* GetRecords answered throttled, this many more */
  atomic_int expire_get;     /* GetRecords answered with an expired iterator */
  atomic_int fail_put;       /* PutRecords answered with every entry failed */
  atomic_int lie_put;        /* PutRecords forwarded (written), then answered HTTP 500 */
  atomic_int served_faults;
  atomic_int calls;
  atomic_int bad_signed;     /* requests whose SignedHeaders name a header not sent */
  atomic_int with_token;     /* requests with a signed X-Amz-Security-Token */
  atomic_int page_lists;     /* ListShards asked one shard a page (MaxResults added) */
  atomic_int list_calls;
} proxy;

typedef struct conn {
  proxy *p;
  int fd;
} conn;

static size_t on_data(char *d, size_t sz, size_t n, void *user) {
  dp_buf_put(user, d, sz * n);
  return sz * n;
}

static bool write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

static bool reply(int fd, int status, const char *body, size_t n) {
  char head[256];
  int hn = snprintf(head, sizeof head,
                    "HTTP/1.1 %d X\r\nContent-Type: application/x-amz-json-1.1\r\n"
                    "Content-Length: %zu\r\n\r\n",
                    status, n);
  return write_all(fd, head, (size_t)hn) && write_all(fd, body, n);
}

static bool take_one(atomic_int *counter) {
  int v = atomic_load(counter);
  while (v > 0)
    if (atomic_compare_exchange_weak(counter, &v, v - 1)) return true;
  return false;
}

/* One request: forwarded, or answered with the fault it is due. */
/* Is every header the signature covers in the request?  (AWS checks the
** signature over exactly those.) */
static bool signed_headers_sent(const char *head) {
  const char *sh = strcasestr(head, "SignedHeaders=");
  if (!sh) return false;
  sh += 14;
  while (*sh && *sh != ',' && *sh != '\r') {
    size_t n = strcspn(sh, ";,\r");
    char want[128];
    snprintf(want, sizeof want, "\r\n%.*s:", (int)n, sh);
    if (!strcasestr(head, want)) {
      fprintf(stderr, "signed but not sent: %.*s\n", (int)n, sh);
      return false;
    }
    sh += n + (sh[n] == ';');
  }
  return true;
}

static bool serve(proxy *p, int fd, const char *head, const char *body, size_t blen) {
  atomic_fetch_add(&p->calls, 1);
  if (!signed_headers_sent(head)) atomic_fetch_add(&p->bad_signed, 1);
  if (strcasestr(head, "x-amz-security-token;") && strcasestr(head, "\r\nX-Amz-Security-Token: " SECRET "-token\r\n"))
    atomic_fetch_add(&p->with_token, 1);
  const char *tgt = strstr(head, "Kinesis_20131202.");
  const char *action = tgt ? tgt + 17 : "";
  if (!strncmp(action, "GetRecords", 10) && take_one(&p->throttle_get)) {
    atomic_fetch_add(&p->served_faults, 1);
    const char *b = "{\"__type\":\"ProvisionedThroughputExceededException\",\"message\":"
                    "\"Rate exceeded for shard\"}";
    return reply(fd, 400, b, strlen(b));
  }
  if (!strncmp(action, "GetRecords", 10) && take_one(&p->expire_get)) {
    atomic_fetch_add(&p->served_faults, 1);
    const char *b = "{\"__type\":\"ExpiredIteratorException\",\"message\":\"Iterator expired\"}";
    return reply(fd, 400, b, strlen(b));
  }
  if (!strncmp(action, "PutRecords", 10) && take_one(&p->fail_put)) {
    atomic_fetch_add(&p->served_faults, 1);
    int n = 0;
    for (const char *q = body; (q = strstr(q, "\"PartitionKey\"")) != NULL; q++) n++;
    dp_buf b = DP_BUF_INIT;
    dp_buf_printf(&b, "{\"FailedRecordCount\":%d,\"Records\":[", n);
    for (int i = 0; i < n; i++)
      dp_buf_printf(&b, "%s{\"ErrorCode\":\"ProvisionedThroughputExceededException\","
                        "\"ErrorMessage\":\"Rate exceeded\"}", i ? "," : "");
    dp_buf_puts(&b, "]}");
    bool ok = reply(fd, 200, b.data, b.len);
    dp_buf_free(&b);
    return ok;
  }
  bool lie = !strncmp(action, "PutRecords", 10) && take_one(&p->lie_put);
  if (lie) atomic_fetch_add(&p->served_faults, 1);
  /* ListShards one shard a page, so that the client must follow NextToken */
  char *paged = NULL;
  if (!strncmp(action, "ListShards", 10)) {
    atomic_fetch_add(&p->list_calls, 1);
    if (atomic_load(&p->page_lists) && blen > 0 && body[blen - 1] == '}' &&
        (paged = malloc(blen + 32)) != NULL) {
      memcpy(paged, body, blen - 1);
      blen = (size_t)(blen - 1) + (size_t)sprintf(paged + blen - 1, ",\"MaxResults\":1}");
      body = paged;
    }
  }
  /* forward, with the client's headers less those curl sets itself */
  CURL *c = curl_easy_init();
  struct curl_slist *hl = NULL;
  const char *line = strstr(head, "\r\n");
  while (line && line[2] != '\r' && line[2]) {
    line += 2;
    const char *end = strstr(line, "\r\n");
    if (!end) break;
    char h[2048];
    snprintf(h, sizeof h, "%.*s", (int)(end - line), line);
    if (strncasecmp(h, "Host:", 5) && strncasecmp(h, "Content-Length:", 15) &&
        strncasecmp(h, "Expect:", 7))
      hl = curl_slist_append(hl, h);
    line = end;
  }
  hl = curl_slist_append(hl, "Expect:");
  dp_buf out = DP_BUF_INIT;
  curl_easy_setopt(c, CURLOPT_URL, endpoint);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
  long status = 502;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(hl);
  curl_easy_cleanup(c);
  const char *fail = "{\"__type\":\"InternalFailure\",\"message\":\"injected\"}";
  bool ok = lie ? reply(fd, 500, fail, strlen(fail))
                : reply(fd, (int)status, out.data ? out.data : "", out.len);
  dp_buf_free(&out);
  free(paged);
  return ok;
}

static void *conn_main(void *arg) {
  conn *cn = arg;
  dp_buf in = DP_BUF_INIT;
  char chunk[65536];
  for (;;) {
    const char *hend = in.data ? strstr(dp_buf_cstr(&in), "\r\n\r\n") : NULL;
    if (hend) {
      size_t hlen = (size_t)(hend - in.data) + 4;
      const char *cl = strcasestr(in.data, "Content-Length:");
      size_t blen = cl && cl < hend ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
      if (in.len >= hlen + blen) {
        char *head = strndup(in.data, hlen);
        char *body = strndup(in.data + hlen, blen);
        bool ok = head && body && serve(cn->p, cn->fd, head, body, blen);
        free(head);
        free(body);
        memmove(in.data, in.data + hlen + blen, in.len - hlen - blen);
        in.len -= hlen + blen;
        if (!ok) break;
        continue;
      }
    }
    ssize_t r = recv(cn->fd, chunk, sizeof chunk, 0);
    if (r <= 0) break;
    dp_buf_put(&in, chunk, (size_t)r);
  }
  dp_buf_free(&in);
  close(cn->fd);
  free(cn);
  return NULL;
}

static void *proxy_main(void *arg) {
  proxy *p = arg;
  while (!atomic_load(&p->stop)) {
    struct pollfd pf = {p->lfd, POLLIN, 0};
    if (poll(&pf, 1, 100) <= 0) continue;
    int fd = accept(p->lfd, NULL, NULL);
    if (fd < 0) continue;
    conn *cn = malloc(sizeof *cn);
    cn->p = p;
    cn->fd = fd;
    pthread_t th;
    if (pthread_create(&th, NULL, conn_main, cn) == 0) pthread_detach(th);
    else {
      close(fd);
      free(cn);
    }
  }
  return NULL;
}

static void proxy_start(proxy *p) {
  memset(p, 0, sizeof *p);
  p->lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_EQ(bind(p->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
  CHECK_EQ(listen(p->lfd, 16), 0);
  socklen_t sl = sizeof sa;
  getsockname(p->lfd, (struct sockaddr *)&sa, &sl);
  p->port = ntohs(sa.sin_port);
  CHECK_EQ(pthread_create(&p->th, NULL, proxy_main, p), 0);
}

static void proxy_stop(proxy *p) {
  CHECK(atomic_load(&p->calls) > 0);
  CHECK_EQ(atomic_load(&p->bad_signed), 0);
  atomic_store(&p->stop, 1);
  pthread_join(p->th, NULL);
  close(p->lfd);
}

TEST(throttling_and_expired_iterators_are_retried) {
  char stream[160];
  stream_name(stream, sizeof stream, "throttle");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 2);
  put_ids(&a, 0, 300, 6);
  static proxy p;
  proxy_start(&p);
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", p.port);
  fixture f;
  fx_open(&f);
  declare(&f, "src", "id BIGINT, k STRING", stream, ep,
          ", 'scan.shard.getrecords.backoff.base' = '20', "
          "'scan.shard.getrecords.backoff.max' = '100', "
          "'scan.shard.getrecords.maxretries' = '4'");
  declare(&f, "src0", "id BIGINT, k STRING", stream, ep,
          ", 'scan.shard.getrecords.maxretries' = '0', "
          "'scan.shard.getrecords.backoff.max' = '50', 'scan.shard.getrecords.backoff.base' = '50'");
  dp_source s;
  static rows got;
  got.n = 0;
  /* throttled 3 times in a row: retried within the plan */
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  atomic_store(&p.throttle_get, 3);
  CHECK_EQ(src_batch(&s, 0, &got), DIPPER_OK);
  CHECK_EQ(atomic_load(&p.served_faults), 3);
  CHECK(got.n > 0);
  src_until(&s, 0, &got, 300);
  CHECK_EQ(got.n, 300);
  /* an expired iterator: a new one after the last record, nothing lost */
  put_ids(&a, 300, 400, 6);
  atomic_store(&p.expire_get, 2);
  src_until(&s, 0, &got, 400);
  CHECK_EQ(atomic_load(&p.served_faults), 5);
  check_exact(&got, 400, 6);
  s.cls->close(&s);
  /* no retries allowed: the throttled shard waits for a later batch */
  got.n = 0;
  CHECK_EQ(src_open(&f, &s, "src0"), DIPPER_OK);
  atomic_store(&p.throttle_get, 2);
  bool exhausted = false;
  CHECK_EQ(s.cls->plan_batch(&s, 0, &exhausted), DIPPER_OK);
  CHECK_EQ(src_read(&s, &got), DIPPER_OK);
  CHECK_EQ(s.cls->commit(&s), DIPPER_OK);
  CHECK(got.n < 400);
  nap_ms(80);
  src_until(&s, 0, &got, 400);
  check_exact(&got, 400, 6);
  CHECK_EQ(atomic_load(&p.served_faults), 7);
  s.cls->close(&s);
  fx_close(&f);
  proxy_stop(&p);
  admin_close(&a);
}


TEST(list_shards_follows_next_token) {
  char stream[160];
  stream_name(stream, sizeof stream, "pages");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 5);
  put_ids(&a, 0, 250, 25);
  static proxy p;
  proxy_start(&p);
  atomic_store(&p.page_lists, 1);
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", p.port);
  fixture f;
  fx_open(&f);
  declare(&f, "src", SRC_COLS, stream, ep, NULL);
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "src"), DIPPER_OK);
  static rows got;
  got.n = 0;
  src_until(&s, 0, &got, 250);
  check_exact(&got, 250, 25);
  CHECK_EQ(distinct_shards(&got), 5);
  CHECK(atomic_load(&p.list_calls) >= 5); /* one page per shard, and the last one */
  s.cls->close(&s);
  fx_close(&f);
  proxy_stop(&p);
  admin_close(&a);
}

/* ---- the sink ---- */

static int sink_open(fixture *f, dp_sink *k, const char *name) {
  memset(k, 0, sizeof *k);
  const dp_table_def *t = table(f, name);
  if (!t) return DIPPER_INTERNAL;
  k->cls = &dp_sink_kinesis;
  k->db = f->db;
  k->table = t;
  k->schema = &t->schema;
  k->diags = &f->diags;
  return k->cls->open(k);
}

/* Rows from..to-1 of (id, k = "k<id % 7>") written as batch `batch`. */
static int sink_write(dp_sink *k, int64_t batch, int from, int to) {
  dp_batch *b = dp_batch_new(k->schema, 0);
  for (int i = from; i < to; i++) {
    char key[16];
    snprintf(key, sizeof key, "k%d", i % 7);
    dp_vector_append_i64(b->cols[0], i);
    dp_vector_append_str(b->cols[1], key, strlen(key));
  }
  b->nrows = to - from;
  dp_batch_sync(b);
  int rc = k->cls->write(k, batch, b);
  dp_batch_free(b);
  return rc;
}

static int cmp_row_id(const void *x, const void *y) {
  int64_t a = ((const row *)x)->id, b = ((const row *)y)->id;
  return (a > b) - (a < b);
}

static int cmp_raw(const void *x, const void *y) {
  int64_t a = ((const raw_rec *)x)->id, b = ((const raw_rec *)y)->id;
  return (a > b) - (a < b);
}

TEST(sink_writes_every_row_and_reads_back_exactly) {
  char stream[160];
  stream_name(stream, sizeof stream, "sink");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 3);
  static proxy p;
  proxy_start(&p);
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", p.port);
  fixture f;
  fx_open(&f);
  declare(&f, "out_pk", "id BIGINT, k STRING, PRIMARY KEY (id) NOT ENFORCED", stream, ep,
          ", 'sink.backoff.base' = '10'");
  dp_sink k;
  /* 1,200 rows in one batch: three calls of at most 500; the first call's
  ** entries all fail once and are sent again */
  CHECK_EQ(sink_open(&f, &k, "out_pk"), DIPPER_OK);
  atomic_store(&p.fail_put, 1);
  int calls0 = atomic_load(&p.calls);
  CHECK_EQ(sink_write(&k, 0, 0, 700), DIPPER_OK);
  CHECK_EQ(sink_write(&k, 0, 700, 1200), DIPPER_OK);
  CHECK_EQ(k.cls->commit(&k, 0), DIPPER_OK);
  CHECK_EQ(atomic_load(&p.calls) - calls0, 4);
  CHECK_EQ(atomic_load(&p.served_faults), 1);
  k.cls->close(&k);
  static raw_rec back[4096];
  int n = read_back(&a, back, 4096);
  CHECK_EQ(n, 1200);
  qsort(back, (size_t)n, sizeof *back, cmp_raw);
  int wrong = 0;
  for (int i = 0; i < n; i++) {
    char want[96], key[16];
    snprintf(want, sizeof want, "{\"id\":%d,\"k\":\"k%d\"}", i, i % 7);
    snprintf(key, sizeof key, "%d", i);
    wrong += back[i].id != i || strcmp(back[i].data, want) != 0 || strcmp(back[i].key, key) != 0;
  }
  CHECK_EQ(wrong, 0);
  /* credentials from the environment, a session token among them: sent, signed */
  char sql[1024];
  snprintf(sql, sizeof sql,
           "CREATE TABLE out_env (id BIGINT, k STRING) WITH ('connector' = 'kinesis', "
           "'stream' = '%s', 'aws.region' = 'us-east-1', 'aws.endpoint' = '%s', "
           "'aws.credentials.provider' = 'ENV_VAR', 'format' = 'json');",
           stream, ep);
  const char *msg = NULL;
  CHECK_EQ(h_run(f.db, sql, &msg), DIPPER_OK);
  CHECK_EQ(sink_open(&f, &k, "out_env"), DIPPER_OK);
  CHECK_EQ(sink_write(&k, 0, 1200, 1210), DIPPER_OK);
  CHECK_EQ(k.cls->commit(&k, 0), DIPPER_OK);
  k.cls->close(&k);
  CHECK_EQ(atomic_load(&p.with_token), 1);
  CHECK_EQ(read_back(&a, back, 4096), 1210);
  /* BASIC without its secret is an error when the table is declared */
  snprintf(sql, sizeof sql,
           "CREATE TABLE out_nokey (id BIGINT) WITH ('connector' = 'kinesis', 'stream' = '%s', "
           "'aws.region' = 'us-east-1', 'aws.credentials.provider' = 'BASIC', "
           "'aws.credentials.basic.accesskeyid' = 'AKIDONLY', 'format' = 'json');",
           stream);
  CHECK_EQ(h_run(f.db, sql, &msg), DIPPER_OPTION);
  CHECK(strstr(msg, "need both 'aws.credentials.basic.accesskeyid' and "
                    "'aws.credentials.basic.secretkey'") != NULL);
  CHECK(strstr(msg, "AKIDONLY") == NULL);
  fx_close(&f);
  proxy_stop(&p);
  admin_close(&a);
}

TEST(sink_partition_key_from_partitioned_by) {
  char stream[160];
  stream_name(stream, sizeof stream, "sinkpart");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 2);
  fixture f;
  fx_open(&f);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE outp (id BIGINT, k STRING) PARTITIONED BY (k) WITH ("
           "'connector' = 'kinesis', 'stream' = '%s', 'aws.region' = 'us-east-1', "
           "'aws.endpoint' = '%s', 'format' = 'csv');",
           stream, endpoint);
  const char *msg = NULL;
  CHECK_EQ(h_run(f.db, sql, &msg), DIPPER_OK);
  dp_sink k;
  CHECK_EQ(sink_open(&f, &k, "outp"), DIPPER_OK); /* credentials from the environment */
  CHECK_EQ(sink_write(&k, 0, 0, 30), DIPPER_OK);
  CHECK_EQ(k.cls->commit(&k, 0), DIPPER_OK);
  k.cls->close(&k);
  static raw_rec back[64];
  int n = read_back(&a, back, 64);
  CHECK_EQ(n, 30);
  int wrong = 0;
  for (int i = 0; i < n; i++) {
    int id = atoi(back[i].data);
    char want[32], key[16];
    snprintf(want, sizeof want, "%d,k%d", id, id % 7);
    snprintf(key, sizeof key, "k%d", id % 7);
    wrong += strcmp(back[i].data, want) != 0 || strcmp(back[i].key, key) != 0;
  }
  CHECK_EQ(wrong, 0);
  fx_close(&f);
  admin_close(&a);
}


/* Rows through the sink and back through the source, in each format. */
TEST(formats_round_trip_through_a_stream) {
  static const char *const fmts[] = {"csv", "avro", "json"};
  for (int fi = 0; fi < 3; fi++) {
    char stream[160], what[32];
    snprintf(what, sizeof what, "fmt-%s", fmts[fi]);
    stream_name(stream, sizeof stream, what);
    admin a;
    admin_open(&a, stream);
    create_stream(&a, 2);
    fixture f;
    fx_open(&f);
    char sql[2048];
    snprintf(sql, sizeof sql,
             "CREATE TABLE t (id BIGINT, k STRING) WITH ('connector' = 'kinesis', 'stream' = '%s', "
             "'aws.region' = 'us-east-1', 'aws.endpoint' = '%s', 'format' = '%s', "
             "'scan.shard.getrecords.intervalmillis' = '0');",
             stream, endpoint, fmts[fi]);
    const char *msg = NULL;
    CHECK_EQ(h_run(f.db, sql, &msg), DIPPER_OK);
    dp_sink k;
    CHECK_EQ(sink_open(&f, &k, "t"), DIPPER_OK);
    CHECK_EQ(sink_write(&k, 0, 0, 70), DIPPER_OK);
    CHECK_EQ(k.cls->commit(&k, 0), DIPPER_OK);
    k.cls->close(&k);
    dp_source s;
    static rows got;
    got.n = 0;
    CHECK_EQ(src_open(&f, &s, "t"), DIPPER_OK);
    src_until(&s, 0, &got, 70);
    CHECK_EQ(got.n, 70);
    qsort(got.r, (size_t)got.n, sizeof got.r[0], cmp_row_id);
    int wrong = 0;
    for (int i = 0; i < got.n; i++) {
      char key[16];
      snprintf(key, sizeof key, "k%d", i % 7);
      wrong += got.r[i].id != i || strcmp(got.r[i].k, key) != 0;
    }
    CHECK_EQ(wrong, 0);
    s.cls->close(&s);
    fx_close(&f);
    admin_close(&a);
  }
}

TEST(raw_records_and_the_size_limits) {
  char stream[160];
  stream_name(stream, sizeof stream, "raw");
  admin a;
  admin_open(&a, stream);
  create_stream(&a, 1);
  static proxy p;
  proxy_start(&p);
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", p.port);
  fixture f;
  fx_open(&f);
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE r (payload BYTES, pk STRING METADATA FROM 'partition-key') WITH ("
           "'connector' = 'kinesis', 'stream' = '%s', 'aws.region' = 'us-east-1', "
           "'aws.endpoint' = '%s', 'format' = 'raw', 'scan.shard.getrecords.intervalmillis' = '0');",
           stream, ep);
  const char *msg = NULL;
  CHECK_EQ(h_run(f.db, sql, &msg), DIPPER_OK);
  if (msg && *msg) fprintf(stderr, "%s\n", msg);
  dp_sink k;
  CHECK_EQ(sink_open(&f, &k, "r"), DIPPER_OK);
  /* 8 records of 800 KB: the 5 MiB a call cap makes two calls of them */
  enum { BIG = 800 * 1024 };
  char *big = malloc(BIG);
  dp_batch *b = dp_batch_new(k.schema, 0);
  for (int i = 0; i < 8; i++) {
    memset(big, 'a' + i, BIG);
    char key[16];
    snprintf(key, sizeof key, "key-%d", i);
    dp_vector_append_str(b->cols[0], big, BIG);
    dp_vector_append_str(b->cols[1], key, strlen(key));
  }
  b->nrows = 8;
  dp_batch_sync(b);
  int calls0 = atomic_load(&p.calls);
  CHECK_EQ(k.cls->write(&k, 0, b), DIPPER_OK);
  CHECK_EQ(k.cls->commit(&k, 0), DIPPER_OK);
  CHECK_EQ(atomic_load(&p.calls) - calls0, 2);
  /* one record over 1 MiB: refused with its size */
  dp_batch_clear(b);
  char *huge = malloc(1100 * 1024);
  memset(huge, 'z', 1100 * 1024);
  dp_vector_append_str(b->cols[0], huge, 1100 * 1024);
  dp_vector_append_str(b->cols[1], "h", 1);
  b->nrows = 1;
  dp_batch_sync(b);
  CHECK_EQ(k.cls->write(&k, 1, b), DIPPER_LIMIT);
  CHECK(strstr(last_message(&f), "at most 1 MiB") != NULL);
  k.cls->close(&k);
  free(huge);
  dp_batch_free(b);
  /* read back through the source: bytes and keys as written */
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "r"), DIPPER_OK);
  dp_batch *out = dp_batch_new(s.schema, 0);
  int64_t deadline = mono_ms() + 20000;
  while (out->nrows < 8 && mono_ms() < deadline) {
    bool exhausted = false, done = false;
    CHECK_EQ(s.cls->plan_batch(&s, 0, &exhausted), DIPPER_OK);
    while (!done) CHECK_EQ(s.cls->read(&s, out, 100, &done), DIPPER_OK);
    CHECK_EQ(s.cls->commit(&s), DIPPER_OK);
  }
  CHECK_EQ(dp_batch_sync(out), DIPPER_OK);
  CHECK_EQ(out->nrows, 8);
  int wrong = 0;
  for (int64_t i = 0; i < out->nrows; i++) {
    size_t n = 0, kn = 0;
    const char *d = dp_vector_get_str(out->cols[0], i, &n);
    const char *key = dp_vector_get_str(out->cols[1], i, &kn);
    char want[16];
    snprintf(want, sizeof want, "key-%d", (int)i);
    memset(big, 'a' + (int)i, BIG);
    wrong += n != BIG || memcmp(d, big, BIG) != 0 || kn != strlen(want) || memcmp(key, want, kn);
  }
  CHECK_EQ(wrong, 0);
  dp_batch_free(out);
  free(big);
  s.cls->close(&s);
  fx_close(&f);
  proxy_stop(&p);
  admin_close(&a);
}

/* ---- whole queries, a checkpoint folder, restarts ---- */

/* How many distinct ids the records hold (sorts them). */
static int distinct_ids(raw_rec *r, int n) {
  qsort(r, (size_t)n, sizeof *r, cmp_raw);
  int d = 0;
  for (int i = 0; i < n; i++) d += i == 0 || r[i].id != r[i - 1].id;
  return d;
}

/* Run `sql` (one INSERT) by steps until its sink wrote `want` rows (want >
** 0, by the progress), or the sink stream `out` holds -want distinct ids. */
static int64_t run_until(dipper *db, const char *sql, admin *out, int want, int64_t *out_rows) {
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "q.sql", &prog);
  if (rc) fprintf(stderr, "compile: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  if (rc) return -1;
  dipper_query **qs = NULL;
  int nq = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &nq), DIPPER_OK);
  CHECK_EQ(nq, 1);
  int64_t deadline = mono_ms() + 60000;
  dipper_progress pr = {sizeof pr};
  static raw_rec back[4096];
  int seen = 0;
  while (nq == 1 && mono_ms() < deadline) {
    int fin = 0;
    rc = dipper_query_step(qs[0], &fin);
    if (rc) fprintf(stderr, "step: %s\n", dipper_errmsg(db));
    CHECK_EQ(rc, DIPPER_OK);
    if (rc) break;
    dipper_query_progress(qs[0], &pr);
    if (want > 0 && pr.total_output_rows >= want) break;
    if (want < 0 && pr.total_output_rows > 0) {
      seen = distinct_ids(back, read_back(out, back, 4096));
      if (seen >= -want) break;
    }
    nap_ms(10);
  }
  *out_rows = pr.total_output_rows;
  dipper_query_free_all(qs, nq);
  dipper_program_free(prog);
  return pr.batch_id;
}

TEST(queries_resume_from_their_checkpoint_at_the_saved_sequence_numbers) {
  char in_stream[160], out_stream[160];
  stream_name(in_stream, sizeof in_stream, "q-in");
  stream_name(out_stream, sizeof out_stream, "q-out");
  admin ai, ao;
  admin_open(&ai, in_stream);
  admin_open(&ao, out_stream);
  create_stream(&ai, 3);
  create_stream(&ao, 2);
  put_ids(&ai, 0, 240, 12);
  char *dir = h_tempdir();
  fixture f;
  fx_open(&f);
  declare(&f, "kin", "id BIGINT, k STRING", in_stream, NULL, NULL);
  declare(&f, "kout", "id BIGINT, k STRING", out_stream, NULL, NULL);
  char set[512];
  snprintf(set, sizeof set,
           "SET 'execution.checkpointing.dir' = '%s'; SET 'dipper.max-batch-rows' = '25';", dir);
  const char *msg = NULL;
  CHECK_EQ(h_run(f.db, set, &msg), DIPPER_OK);
  const char *q = "INSERT INTO kout SELECT id, k FROM kin;";
  int64_t rows1 = 0, rows2 = 0;
  int64_t b1 = run_until(f.db, q, &ao, 100, &rows1);
  CHECK(rows1 >= 100 && rows1 < 240);
  /* stopped; more input, a split; run again on the same folder */
  put_ids(&ai, 240, 300, 12);
  split(&ai, "shardId-000000000000", "56713727820156410577229101238628035242");
  put_ids(&ai, 300, 360, 12);
  int64_t b2 = run_until(f.db, q, &ao, -360, &rows2);
  CHECK(b2 > b1); /* batch ids carry on */
  static raw_rec back[4096];
  int n = read_back(&ao, back, 4096);
  qsort(back, (size_t)n, sizeof *back, cmp_raw);
  int missing = 0, dup = 0;
  for (int id = 0, i = 0; id < 360; id++) {
    int c = 0;
    while (i < n && back[i].id == id) c++, i++;
    missing += c == 0;
    dup += c > 1 ? c - 1 : 0;
  }
  CHECK_EQ(missing, 0);
  CHECK_EQ(dup, 0); /* a clean stop: nothing written twice */
  CHECK_EQ(n, 360);
  CHECK_EQ(rows1 + rows2, 360);
  fx_close(&f);
  h_rmdir(dir);
  free(dir);
  admin_close(&ai);
  admin_close(&ao);
}


TEST(a_failed_batch_runs_again_from_the_checkpoint_at_least_once) {
  char in_stream[160], out_stream[160];
  stream_name(in_stream, sizeof in_stream, "f-in");
  stream_name(out_stream, sizeof out_stream, "f-out");
  admin ai, ao;
  admin_open(&ai, in_stream);
  admin_open(&ao, out_stream);
  create_stream(&ai, 2);
  create_stream(&ao, 1);
  put_ids(&ai, 0, 200, 4);
  static proxy p;
  proxy_start(&p);
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", p.port);
  char *dir = h_tempdir();
  fixture f;
  fx_open(&f);
  declare(&f, "kin", "id BIGINT, k STRING", in_stream, NULL, NULL);
  declare(&f, "kout", "id BIGINT, k STRING", out_stream, ep,
          ", 'sink.max-retries' = '1', 'sink.backoff.base' = '10'");
  char set[512];
  snprintf(set, sizeof set,
           "SET 'execution.checkpointing.dir' = '%s'; SET 'dipper.max-batch-rows' = '30';", dir);
  const char *msg = NULL;
  CHECK_EQ(h_run(f.db, set, &msg), DIPPER_OK);
  const char *q = "INSERT INTO kout SELECT id, k FROM kin;";
  /* run until some rows are out, then make one batch's PutRecords land but
  ** answer 500 twice: the batch fails after it wrote its rows (a crash
  ** between the write and the commit) */
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(f.db, q, (size_t)-1, "q.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int nq = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &nq), DIPPER_OK);
  dipper_progress pr = {sizeof pr};
  int64_t deadline = mono_ms() + 30000;
  int rc = DIPPER_OK;
  bool armed = false;
  while (nq == 1 && mono_ms() < deadline) {
    int fin = 0;
    rc = dipper_query_step(qs[0], &fin);
    if (rc != DIPPER_OK) break;
    dipper_query_progress(qs[0], &pr);
    if (!armed && pr.total_output_rows >= 60) {
      atomic_store(&p.lie_put, 2);
      armed = true;
    }
    nap_ms(5);
  }
  CHECK(armed);
  CHECK_EQ(rc, DIPPER_REMOTE);
  CHECK(strstr(dipper_errmsg(f.db), "InternalFailure") != NULL);
  CHECK_EQ(atomic_load(&p.served_faults), 2);
  int64_t before = pr.total_output_rows;
  dipper_query_free_all(qs, nq);
  dipper_program_free(prog);
  /* the restart: the failed batch again (from its logged bounds), then the rest */
  int64_t rows2 = 0;
  run_until(f.db, q, &ao, -200, &rows2);
  static raw_rec back[4096];
  int n = read_back(&ao, back, 4096);
  qsort(back, (size_t)n, sizeof *back, cmp_raw);
  int missing = 0, twice = 0;
  for (int id = 0, i = 0; id < 200; id++) {
    int c = 0;
    while (i < n && back[i].id == id) c++, i++;
    missing += c == 0;
    twice += c > 1;
    if (getenv("KIN_DEBUG") && c != 1) fprintf(stderr, "id %d x%d\n", id, c);
  }
  if (getenv("KIN_DEBUG")) fprintf(stderr, "before %lld rows2 %lld\n", (long long)before, (long long)rows2);
  CHECK_EQ(missing, 0);
  /* the failed batch's rows were written by both of its attempts and by its
  ** run after the restart; no other row twice */
  CHECK(twice > 0 && twice <= 30);
  CHECK_EQ(before + rows2, 200);
  fx_close(&f);
  proxy_stop(&p);
  h_rmdir(dir);
  free(dir);
  admin_close(&ai);
  admin_close(&ao);
}

/* ---- interrupts ---- */

static void *interrupt_later(void *arg) {
  nap_ms(300);
  dipper_interrupt(arg);
  return NULL;
}

/* A server that takes connections and never answers: each call waits. */
static int mute_server(int *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_EQ(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
  CHECK_EQ(listen(fd, 16), 0); /* the backlog completes the connections; nobody reads */
  socklen_t sl = sizeof sa;
  getsockname(fd, (struct sockaddr *)&sa, &sl);
  *port = ntohs(sa.sin_port);
  return fd;
}

TEST(interrupt_ends_a_wait_on_a_mute_server_within_a_second) {
  int port = 0;
  int fd = mute_server(&port);
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", port);
  fixture f;
  fx_open(&f);
  declare(&f, "mute", "id BIGINT, k STRING", "s", ep, NULL);
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "mute"), DIPPER_OK);
  pthread_t th;
  pthread_create(&th, NULL, interrupt_later, f.db);
  int64_t t0 = mono_ms();
  bool exhausted = false;
  CHECK_EQ(s.cls->plan_batch(&s, 0, &exhausted), DIPPER_INTERRUPTED);
  int64_t took = mono_ms() - t0;
  pthread_join(th, NULL);
  CHECK(took < 800);
  if (getenv("KIN_DEBUG")) fprintf(stderr, "source interrupted after %lld ms\n", (long long)took);
  s.cls->close(&s);
  f.db->interrupted = 0;
  /* the sink's commit, the same */
  dp_sink k;
  CHECK_EQ(sink_open(&f, &k, "mute"), DIPPER_OK);
  CHECK_EQ(sink_write(&k, 0, 0, 5), DIPPER_OK);
  pthread_create(&th, NULL, interrupt_later, f.db);
  t0 = mono_ms();
  CHECK_EQ(k.cls->commit(&k, 0), DIPPER_INTERRUPTED);
  took = mono_ms() - t0;
  pthread_join(th, NULL);
  CHECK(took < 800);
  if (getenv("KIN_DEBUG")) fprintf(stderr, "sink interrupted after %lld ms\n", (long long)took);
  k.cls->close(&k);
  f.db->interrupted = 0;
  fx_close(&f);
  close(fd);
}

/* ---- secrets and errors ---- */

TEST(secrets_stay_out_of_explain_and_errors) {
  fixture f;
  fx_open(&f);
  declare(&f, "nosuch", "id BIGINT, k STRING", "dipper-no-such-stream", NULL, NULL);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(f.db, "SELECT id FROM nosuch;", (size_t)-1, "q.sql", &prog), DIPPER_OK);
  char *plan = NULL;
  CHECK_EQ(dipper_explain(prog, DIPPER_EXPLAIN_DEFAULT, &plan), DIPPER_OK);
  CHECK(plan && strstr(plan, "connector=kinesis") != NULL);
  CHECK(plan && strstr(plan, SECRET) == NULL);
  dipper_free(plan);
  plan = NULL;
  CHECK_EQ(dipper_explain(prog, DIPPER_EXPLAIN_JSON, &plan), DIPPER_OK);
  CHECK(plan && strstr(plan, SECRET) == NULL);
  dipper_free(plan);
  dipper_program_free(prog);
  dp_source s;
  CHECK_EQ(src_open(&f, &s, "nosuch"), DIPPER_OK);
  bool exhausted = false;
  CHECK_EQ(s.cls->plan_batch(&s, 0, &exhausted), DIPPER_REMOTE);
  CHECK(strstr(last_message(&f), "ResourceNotFoundException") != NULL);
  CHECK(strstr(last_message(&f), "ListShards") != NULL);
  CHECK(strstr(last_message(&f), SECRET) == NULL);
  s.cls->close(&s);
  /* no answer at all */
  declare(&f, "down", "id BIGINT", "s", "http://127.0.0.1:1", NULL);
  CHECK_EQ(src_open(&f, &s, "down"), DIPPER_OK);
  CHECK_EQ(s.cls->plan_batch(&s, 0, &exhausted), DIPPER_CONNECT);
  CHECK(strstr(last_message(&f), "no answer from http://127.0.0.1:1") != NULL);
  CHECK(strstr(last_message(&f), SECRET) == NULL);
  s.cls->close(&s);
  fx_close(&f);
}

int main(void) {
  const char *ep = getenv("DIPPER_KINESIS_ENDPOINT");
  if (!ep || !*ep) {
    fprintf(stderr, "kinesis_emu: FAILED: DIPPER_KINESIS_ENDPOINT is not set; run me as "
                    "scripts/kinesis-local run -- %s\n", "build-asan/tests/kinesis/kinesis_emu");
    return 1;
  }
  snprintf(endpoint, sizeof endpoint, "%s", ep);
  snprintf(run_tag, sizeof run_tag, "%ld-%ld", (long)getpid(), (long)time(NULL));
  /* the environment's credentials, for the tables that name none */
  setenv("AWS_ACCESS_KEY_ID", "AKIDDIPPERENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", SECRET "-env", 1);
  setenv("AWS_SESSION_TOKEN", SECRET "-token", 1);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURL *c = curl_easy_init();
  curl_easy_setopt(c, CURLOPT_URL, endpoint);
  curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
  CURLcode cc = curl_easy_perform(c);
  curl_easy_cleanup(c);
  if (cc != CURLE_OK) {
    fprintf(stderr, "kinesis_emu: FAILED: no Kinesis emulator answers on %s (%s)\n", endpoint,
            curl_easy_strerror(cc));
    return 1;
  }
  return RUN_TESTS();
}
