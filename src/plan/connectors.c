/*
** connectors.c — what dipper knows about each connector, as data: the WITH
** options it takes and their value kinds, the formats it reads and writes,
** its metadata columns, whether it can be read or written, and when it ends.
**
** Owns: the connector table and the checks run over a table's WITH options
** (at CREATE TABLE, role-neutral; when a table is read or written, with the
** role).  Does not own: the connectors themselves (src/connectors/), which
** trust that an option that passed here has a legal value.
**
** The connectors ('connector' = ...), for the docs (docs/sql.md lists the
** options of each):
**
**   name        source sink  formats                              ends when
**   kafka       yes    yes   json csv raw avro                   scan.bounded.mode is set and not 'unbounded'
**   upsert-kafka yes   yes   json csv raw avro                   never as a plan sees it (a changelog:
**                                                                  [I,UB,UA,D]); a stream that stops at
**                                                                  scan.bounded.mode when set
**   kinesis     yes    yes   json csv raw avro                   never
**   filesystem  yes    yes   csv json parquet orc avro raw text  always, unless 'source.monitor-interval' is set
**                                                                  (then a stream, in streaming mode: the
**                                                                  folder is watched at that interval)
**   datagen     yes    no    -                                   number-of-rows is set, or a field is a sequence
**   nexmark     yes    no    -                                   events.num (not 0) / number-of-events is set
**   socket      yes    no    csv json raw                        never
**   memory      yes    yes   -                                   batch mode, or 'bounded' = 'true'
**   console     no     yes   -  (alias: print)
**   blackhole   no     yes   -
**   callback    no     yes   -  (name = the registered callback)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/catalog.h"
#include "plan/catalog_int.h"

/* ---- the table ---- */

typedef enum opt_kind {
  K_STRING,   /* non-empty text */
  K_ANY,      /* any text, empty too */
  K_INT,      /* whole number >= 0 */
  K_SIGNED,   /* whole number, may be negative */
  K_NUMBER,   /* decimal number >= 0 */
  K_SNUMBER,  /* decimal number, may be negative */
  K_RATIO,    /* decimal number from 0 to 1 */
  K_DURATION, /* dp_parse_duration */
  K_ENUM,     /* one of `values` ('|'-separated) */
  K_BOOL,     /* true | false */
  K_SERVERS,  /* host:port[,host:port...] */
  K_PORT,     /* 1..65535 */
  K_TOPICS,   /* name[;name...] */
  K_OFFSETS,  /* partition:0,offset:42;partition:1,offset:300 */
  K_COLUMNS,  /* col[;col...], each a column of the table */
  K_CHAR,     /* one character, or \t */
  K_FORMAT,   /* a format of the connector */
} opt_kind;

enum { REQ = 1u };

typedef struct conn_opt {
  /* The key.  A trailing ".*" accepts any non-empty suffix (properties.*); a
     "#" segment stands for a column of the table (fields.#.kind). */
  const char *key;
  opt_kind kind;
  const char *values; /* K_ENUM: allowed values; otherwise an example for messages */
  unsigned flags;
} conn_opt;

typedef struct conn_meta {
  const char *key;
  dp_type_kind kind;  /* MAP means MAP<STRING, BYTES> */
  const char *spelling;
  bool writable;      /* a sink can write it; otherwise it must be VIRTUAL there */
} conn_meta;

typedef struct connector connector;
typedef int (*conn_check)(dp_diags *d, const dp_table_def *t, int role);
typedef bool (*conn_bounded)(const dp_table_def *t, bool batch_mode);

struct connector {
  const char *name;
  const char *alias_of; /* print is console */
  bool source, sink;
  const char *formats;  /* '|' list, or NULL when the connector takes no format */
  bool format_required;
  const conn_opt *opts;
  const conn_meta *meta;
  conn_check check;
  conn_bounded bounded;
};

/* Roles a check runs for. */
enum { ROLE_ANY = 0, ROLE_SOURCE = 1, ROLE_SINK = 2 };

/* Formats that exist elsewhere but that dipper does not read yet. */
static const char *const refused_formats[] = {"debezium-json", "canal-json", "maxwell-json",
                                              "ogg-json", "avro-confluent",
                                              "debezium-avro-confluent", "protobuf"};

static const conn_opt kafka_opts[] = {
    {"topic", K_TOPICS, "orders", 0},
    {"topic-pattern", K_STRING, "orders-.*", 0},
    {"properties.bootstrap.servers", K_SERVERS, "localhost:9092", REQ},
    {"properties.group.id", K_STRING, "my-group", 0},
    {"properties.*", K_ANY, NULL, 0},
    {"scan.startup.mode", K_ENUM,
     "earliest-offset|latest-offset|group-offsets|timestamp|specific-offsets", 0},
    {"scan.startup.specific-offsets", K_OFFSETS, "partition:0,offset:42;partition:1,offset:300", 0},
    {"scan.startup.timestamp-millis", K_INT, "1700000000000", 0},
    {"scan.bounded.mode", K_ENUM, "unbounded|latest-offset|timestamp|specific-offsets|group-offsets",
     0},
    {"scan.bounded.specific-offsets", K_OFFSETS, "partition:0,offset:42;partition:1,offset:300", 0},
    {"scan.bounded.timestamp-millis", K_INT, "1700000000000", 0},
    {"scan.topic-partition-discovery.interval", K_DURATION, "5 min", 0},
    {"format", K_FORMAT, "json", 0},
    {"value.format", K_FORMAT, "json", 0},
    {"key.format", K_FORMAT, "json", 0},
    {"key.fields", K_COLUMNS, "id;region", 0},
    {"key.fields-prefix", K_STRING, "k_", 0},
    {"value.fields-include", K_ENUM, "ALL|EXCEPT_KEY", 0},
    {"sink.partitioner", K_STRING, "default", 0},
    {"sink.delivery-guarantee", K_ENUM, "at-least-once|exactly-once|none", 0},
    {"sink.transactional-id-prefix", K_STRING, "dipper-tx", 0},
    {"dipper.bad-records", K_ENUM, "fail|skip|dead-letter", 0},
    {"dipper.dead-letter.path", K_STRING, "/tmp/bad-records.jsonl", 0},
    {NULL, K_ANY, NULL, 0},
};

/* Flink's upsert-kafka options, which the source and the sink carry out
   (connectors/upsert_kafka.c): the key is the PRIMARY KEY, so there is no
   'key.fields'; the topic is read from its earliest offset, so no
   'scan.startup.*'; it ends at 'scan.bounded.*' as a kafka table does
   (Flink's since FLINK-31740). */
static const conn_opt upsert_kafka_opts[] = {
    {"topic", K_TOPICS, "orders", REQ},
    {"properties.bootstrap.servers", K_SERVERS, "localhost:9092", REQ},
    {"properties.*", K_ANY, NULL, 0},
    {"scan.bounded.mode", K_ENUM, "unbounded|latest-offset|timestamp|specific-offsets|group-offsets",
     0},
    {"scan.bounded.specific-offsets", K_OFFSETS, "partition:0,offset:42;partition:1,offset:300", 0},
    {"scan.bounded.timestamp-millis", K_INT, "1700000000000", 0},
    {"key.format", K_FORMAT, "json", REQ},
    {"key.fields-prefix", K_STRING, "k_", 0},
    {"value.format", K_FORMAT, "json", REQ},
    {"value.fields-include", K_ENUM, "ALL|EXCEPT_KEY", 0},
    {"sink.delivery-guarantee", K_ENUM, "at-least-once|exactly-once|none", 0},
    {"sink.transactional-id-prefix", K_STRING, "dipper-tx", 0},
    {"dipper.bad-records", K_ENUM, "fail|skip|dead-letter", 0},
    {"dipper.dead-letter.path", K_STRING, "/tmp/bad-records.jsonl", 0},
    {NULL, K_ANY, NULL, 0},
};

static const conn_meta kafka_meta[] = {
    {"topic", DP_T_STRING, "STRING", true},
    {"partition", DP_T_INT, "INT", false},
    {"offset", DP_T_BIGINT, "BIGINT", false},
    {"timestamp", DP_T_TIMESTAMP_LTZ, "TIMESTAMP_LTZ(3)", true},
    {"timestamp-type", DP_T_STRING, "STRING", false},
    {"headers", DP_T_MAP, "MAP<STRING, BYTES>", true},
    {"leader-epoch", DP_T_INT, "INT", false},
    {NULL, DP_T_NULL, NULL, false},
};

static const conn_opt kinesis_opts[] = {
    {"stream", K_STRING, "orders", REQ},
    {"aws.region", K_STRING, "us-east-1", REQ},
    {"aws.endpoint", K_STRING, "http://127.0.0.1:4568", 0},
    {"aws.credentials.provider", K_ENUM, "AUTO|BASIC|ENV_VAR", 0},
    {"aws.credentials.basic.accesskeyid", K_STRING, "AKIAIOSFODNN7EXAMPLE", 0},
    {"aws.credentials.basic.secretkey", K_STRING, "(the secret key)", 0},
    {"scan.stream.initpos", K_ENUM, "LATEST|TRIM_HORIZON|AT_TIMESTAMP", 0},
    {"scan.stream.initpos-timestamp", K_STRING, "2024-01-01T00:00:00Z", 0},
    {"scan.shard.getrecords.maxrecordcount", K_INT, "10000", 0},
    {"scan.shard.getrecords.intervalmillis", K_INT, "200", 0},
    {"scan.shard.getrecords.maxretries", K_INT, "3", 0},
    {"scan.shard.getrecords.backoff.base", K_INT, "300", 0},
    {"scan.shard.getrecords.backoff.max", K_INT, "1000", 0},
    {"scan.shard.getrecords.backoff.expconst", K_NUMBER, "1.5", 0},
    {"sink.partitioner-field-delimiter", K_ANY, "|", 0},
    {"sink.batch.max-size", K_INT, "500", 0},
    {"sink.max-retries", K_INT, "10", 0},
    {"sink.backoff.base", K_INT, "100", 0},
    {"sink.backoff.max", K_INT, "5000", 0},
    {"format", K_FORMAT, "json", 0},
    {"dipper.bad-records", K_ENUM, "fail|skip|dead-letter", 0},
    {"dipper.dead-letter.path", K_STRING, "/tmp/bad-records.jsonl", 0},
    {"dipper.spark.kinesis-format", K_ENUM, "aws-kinesis", 0},
    {NULL, K_ANY, NULL, 0},
};

static const conn_meta kinesis_meta[] = {
    {"timestamp", DP_T_TIMESTAMP_LTZ, "TIMESTAMP_LTZ(3)", false},
    {"shard-id", DP_T_STRING, "STRING", false},
    {"sequence-number", DP_T_STRING, "STRING", false},
    {"partition-key", DP_T_STRING, "STRING", true},
    {NULL, DP_T_NULL, NULL, false},
};

static const conn_opt filesystem_opts[] = {
    {"path", K_STRING, "/data/orders", REQ},
    {"format", K_FORMAT, "json", 0},
    {"source.monitor-interval", K_DURATION, "10 s", 0},
    {"source.path.regex-pattern", K_STRING, ".*\\.json", 0},
    /* how many new files one micro-batch reads at most (Spark's
       maxFilesPerTrigger); a stream reads every new file when absent */
    {"source.max-files-per-trigger", K_INT, "10", 0},
    {"sink.rolling-policy.*", K_STRING, NULL, 0},
    /* PARTITIONED BY (connectors/fs_partition.c); what is not carried out
       is refused by filesystem_check */
    {"partition.default-name", K_STRING, "__DEFAULT_PARTITION__", 0},
    {"partition.time-extractor.kind", K_ENUM, "default|custom", 0},
    {"partition.time-extractor.class", K_STRING, "com.example.Extractor", 0},
    {"partition.time-extractor.timestamp-pattern", K_STRING, "$dt $hm:00", 0},
    {"partition.time-extractor.timestamp-formatter", K_STRING, "yyyy-MM-dd HH:mm:ss", 0},
    {"sink.partition-commit.trigger", K_ENUM, "process-time|partition-time", 0},
    {"sink.partition-commit.delay", K_DURATION, "1 h", 0},
    {"sink.partition-commit.watermark-time-zone", K_STRING, "UTC", 0},
    {"sink.partition-commit.policy.kind", K_STRING, "success-file", 0},
    {"sink.partition-commit.policy.class", K_STRING, "com.example.Policy", 0},
    {"sink.partition-commit.policy.class.parameters", K_STRING, "a;b", 0},
    {"sink.partition-commit.success-file.name", K_STRING, "_SUCCESS", 0},
    {"dipper.bad-records", K_ENUM, "fail|skip|dead-letter", 0},
    {"dipper.dead-letter.path", K_STRING, "/tmp/bad-records.jsonl", 0},
    {NULL, K_ANY, NULL, 0},
};

static const conn_meta filesystem_meta[] = {
    {"file.path", DP_T_STRING, "STRING", false},
    {"file.name", DP_T_STRING, "STRING", false},
    {"file.size", DP_T_BIGINT, "BIGINT", false},
    {"file.modification-time", DP_T_TIMESTAMP_LTZ, "TIMESTAMP_LTZ(3)", false},
    {NULL, DP_T_NULL, NULL, false},
};

static const conn_opt datagen_opts[] = {
    {"rows-per-second", K_NUMBER, "100", 0},
    {"number-of-rows", K_INT, "1000", 0},
    {"fields.#.kind", K_ENUM, "random|sequence", 0},
    {"fields.#.min", K_SNUMBER, "0", 0},
    {"fields.#.max", K_SNUMBER, "100", 0},
    {"fields.#.length", K_INT, "10", 0},
    {"fields.#.start", K_SIGNED, "1", 0},
    {"fields.#.end", K_SIGNED, "1000", 0},
    {"fields.#.null-rate", K_RATIO, "0.1", 0},
    {"fields.#.max-past", K_DURATION, "5 s", 0},
    {"seed", K_INT, "42", 0},
    {NULL, K_ANY, NULL, 0},
};

static const conn_opt nexmark_opts[] = {
    {"rate", K_NUMBER, "10000", 0},
    {"events-per-second", K_NUMBER, "10000", 0},
    {"first-event.rate", K_NUMBER, "10000", 0},
    {"next-event.rate", K_NUMBER, "10000", 0},
    {"max-emit-speed", K_BOOL, "true", 0},
    {"events.num", K_INT, "1000000", 0},
    {"number-of-events", K_INT, "1000000", 0},
    {"person.proportion", K_INT, "1", 0},
    {"auction.proportion", K_INT, "3", 0},
    {"bid.proportion", K_INT, "46", 0},
    {"person.avg-size", K_STRING, "200b", 0},
    {"auction.avg-size", K_STRING, "500b", 0},
    {"bid.avg-size", K_STRING, "100b", 0},
    {"bid.hot-ratio.auctions", K_INT, "2", 0},
    {"bid.hot-ratio.bidders", K_INT, "4", 0},
    {"auction.hot-ratio.sellers", K_INT, "4", 0},
    {"seed", K_INT, "42", 0},
    {NULL, K_ANY, NULL, 0},
};

static const conn_opt socket_opts[] = {
    {"hostname", K_STRING, "localhost", REQ},
    {"port", K_PORT, "9999", REQ},
    {"format", K_FORMAT, "csv", 0},
    {"byte-delimiter", K_INT, "10", 0},
    {NULL, K_ANY, NULL, 0},
};

static const conn_opt console_opts[] = {
    {"print-identifier", K_ANY, "orders", 0},
    {"standard-error", K_BOOL, "false", 0},
    {NULL, K_ANY, NULL, 0},
};

static const conn_opt memory_opts[] = {
    {"name", K_STRING, "results", 0},
    {"bounded", K_BOOL, "true", 0},
    {"dipper.bad-records", K_ENUM, "fail|skip|dead-letter", 0},
    {"dipper.dead-letter.path", K_STRING, "/tmp/bad-records.jsonl", 0},
    {NULL, K_ANY, NULL, 0},
};

static const conn_opt callback_opts[] = {
    {"name", K_STRING, "on_rows", REQ},
    /* on Spark: how long dipper's sink waits for the client to take a batch */
    {"dipper.spark.handoff-timeout", K_DURATION, "60 s", 0},
    {NULL, K_ANY, NULL, 0},
};

static const conn_opt no_opts[] = {{NULL, K_ANY, NULL, 0}};


/* Options of the formats; each applies only where that format is chosen. */
static const conn_opt format_opts[] = {
    {"json.fail-on-missing-field", K_BOOL, "false", 0},
    {"json.ignore-parse-errors", K_BOOL, "true", 0},
    {"json.timestamp-format.standard", K_ENUM, "SQL|ISO-8601", 0},
    {"json.map-null-key.mode", K_ENUM, "FAIL|DROP|LITERAL", 0},
    {"json.map-null-key.literal", K_ANY, "null", 0},
    {"json.encode.decimal-as-plain-number", K_BOOL, "true", 0},
    {"csv.field-delimiter", K_CHAR, ",", 0},
    {"csv.line-delimiter", K_ANY, "\\n", 0},
    {"csv.quote-character", K_CHAR, "\"", 0},
    {"csv.disable-quote-character", K_BOOL, "false", 0},
    {"csv.allow-comments", K_BOOL, "false", 0},
    {"csv.ignore-parse-errors", K_BOOL, "true", 0},
    {"csv.array-element-delimiter", K_ANY, ";", 0},
    {"csv.escape-character", K_CHAR, "\\", 0},
    {"csv.null-literal", K_ANY, "", 0},
    {"csv.header", K_BOOL, "true", 0},
    {"raw.charset", K_STRING, "UTF-8", 0},
    {"raw.endianness", K_ENUM, "big-endian|little-endian", 0},
    {"avro.codec", K_ENUM, "null|deflate|snappy|bzip2|xz|zstandard", 0},
    {"parquet.compression", K_ENUM, "uncompressed|snappy|gzip|lzo|brotli|lz4|zstd", 0},
    {NULL, K_ANY, NULL, 0},
};

static int kafka_check(dp_diags *d, const dp_table_def *t, int role);
static int upsert_kafka_check(dp_diags *d, const dp_table_def *t, int role);
static int datagen_check(dp_diags *d, const dp_table_def *t, int role);
static int kinesis_check(dp_diags *d, const dp_table_def *t, int role);
static int filesystem_check(dp_diags *d, const dp_table_def *t, int role);
static bool kafka_bounded(const dp_table_def *t, bool batch_mode);
static bool datagen_bounded(const dp_table_def *t, bool batch_mode);
static bool nexmark_bounded(const dp_table_def *t, bool batch_mode);
static bool filesystem_bounded(const dp_table_def *t, bool batch_mode);
static bool never_bounded(const dp_table_def *t, bool batch_mode);
static bool memory_bounded(const dp_table_def *t, bool batch_mode);

#define STREAM_FORMATS "json|csv|raw|avro"

static const connector connectors[] = {
    {"kafka", NULL, true, true, STREAM_FORMATS, true, kafka_opts, kafka_meta, kafka_check,
     kafka_bounded},
    {"upsert-kafka", NULL, true, true, STREAM_FORMATS, false, upsert_kafka_opts, NULL,
     upsert_kafka_check, never_bounded},
    {"kinesis", NULL, true, true, STREAM_FORMATS, true, kinesis_opts, kinesis_meta, kinesis_check,
     never_bounded},
    {"filesystem", NULL, true, true, "csv|json|parquet|orc|avro|raw|text", true, filesystem_opts,
     filesystem_meta, filesystem_check, filesystem_bounded},
    {"datagen", NULL, true, false, NULL, false, datagen_opts, NULL, datagen_check, datagen_bounded},
    {"nexmark", NULL, true, false, NULL, false, nexmark_opts, NULL, NULL, nexmark_bounded},
    {"socket", NULL, true, false, "csv|json|raw", false, socket_opts, NULL, NULL, never_bounded},
    {"memory", NULL, true, true, NULL, false, memory_opts, NULL, NULL, memory_bounded},
    {"console", NULL, false, true, NULL, false, console_opts, NULL, NULL, never_bounded},
    {"print", "console", false, true, NULL, false, console_opts, NULL, NULL, never_bounded},
    {"blackhole", NULL, false, true, NULL, false, no_opts, NULL, NULL, never_bounded},
    {"callback", NULL, false, true, NULL, false, callback_opts, NULL, NULL, never_bounded},
};

#define NCONNECTORS (sizeof connectors / sizeof connectors[0])

/* ---- small helpers ---- */

static int lower(int ch) { return (ch >= 'A' && ch <= 'Z') ? ch + ('a' - 'A') : ch; }
static bool is_digit(int ch) { return ch >= '0' && ch <= '9'; }

static bool eq_ci_n(const char *a, size_t n, const char *b) {
  size_t i = 0;
  for (; i < n; i++)
    if (!b[i] || lower((unsigned char)a[i]) != lower((unsigned char)b[i])) return false;
  return b[i] == '\0';
}

static bool eq_ci(const char *a, const char *b) { return eq_ci_n(a, strlen(a), b); }

static void keep(int *rc, int code) {
  if (*rc == DIPPER_OK && code != DIPPER_OK) *rc = code;
}

static const dp_option *find_option(const dp_table_def *t, const char *key) {
  for (int i = 0; i < t->noptions; i++)
    if (strcmp(t->options[i].key, key) == 0) return &t->options[i];
  return NULL;
}

static const char *option_value(const dp_table_def *t, const char *key) {
  const dp_option *o = find_option(t, key);
  return o ? o->value : NULL;
}

static const connector *find_connector(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < NCONNECTORS; i++)
    if (eq_ci(connectors[i].name, name)) return &connectors[i];
  return NULL;
}

static int column_of(const dp_table_def *t, const char *name, size_t n) {
  for (int i = 0; i < t->schema.ncols; i++)
    if (eq_ci_n(name, n, t->schema.cols[i].name)) return i;
  return -1;
}

/* "'a', 'b' or 'c'" from an '|' list. */
static const char *list_values(char *buf, size_t cap, const char *values) {
  size_t len = 0;
  buf[0] = '\0';
  const char *p = values;
  while (*p) {
    size_t n = strcspn(p, "|");
    const char *next = p + n + (p[n] ? 1 : 0);
    const char *sep = len == 0 ? "" : (*next ? ", " : " or ");
    int w = snprintf(buf + len, cap - len, "%s'%.*s'", sep, (int)n, p);
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
    p = next;
  }
  return buf;
}

static bool in_list(const char *values, const char *v) {
  const char *p = values;
  while (*p) {
    size_t n = strcspn(p, "|");
    if (eq_ci_n(p, n, v)) return true;
    p += n + (p[n] ? 1 : 0);
  }
  return false;
}

static const char *known_connector_list(char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NCONNECTORS; i++) {
    int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", connectors[i].name);
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
  }
  return buf;
}

/* ---- option keys ---- */

/* Does `key` match the pattern?  For a "#" pattern, *col receives the span of
** the column segment inside key. */
static bool key_matches(const char *pattern, const char *key, const char **col, size_t *col_len) {
  size_t plen = strlen(pattern);
  if (plen >= 2 && strcmp(pattern + plen - 2, ".*") == 0)
    return strncmp(key, pattern, plen - 1) == 0 && key[plen - 1] != '\0';
  const char *hash = strchr(pattern, '#');
  if (!hash) return strcmp(pattern, key) == 0;
  size_t pre = (size_t)(hash - pattern), post = strlen(hash + 1);
  size_t klen = strlen(key);
  if (klen <= pre + post || strncmp(key, pattern, pre) != 0 ||
      strcmp(key + klen - post, hash + 1) != 0)
    return false;
  *col = key + pre;
  *col_len = klen - pre - post;
  return true;
}

/* The format a format option applies under: for Kafka's "key.json.x" the
** key.format, for "value.json.x" the value format, else the table's format. */
static const conn_opt *find_format_opt(const dp_table_def *t, const char *key, const char **fmt,
                                       const char **bare) {
  const char *base = key;
  *fmt = t->format;
  if (strncmp(key, "key.", 4) == 0) {
    base = key + 4;
    *fmt = option_value(t, "key.format");
  } else if (strncmp(key, "value.", 6) == 0) {
    base = key + 6;
  }
  for (const conn_opt *o = format_opts; o->key; o++)
    if (strcmp(o->key, base) == 0) {
      *bare = base;
      return o;
    }
  return NULL;
}

/* The closest known key, for "did you mean". */
static const char *suggest_key(const connector *cn, const char *key, char *buf, size_t cap) {
  const char *cands[64];
  char subst[16][96];
  int n = 0, ns = 0;
  for (const conn_opt *o = cn->opts; o->key && n < 64; o++) {
    const char *hash = strchr(o->key, '#');
    if (!hash) {
      cands[n++] = o->key;
      continue;
    }
    /* fields.#.kind: put the key's own column segment in place of '#'. */
    size_t pre = (size_t)(hash - o->key);
    if (strncmp(key, o->key, pre) != 0 || ns == 16) continue;
    const char *seg = key + pre;
    const char *dot = strrchr(seg, '.');
    size_t seglen = dot ? (size_t)(dot - seg) : strlen(seg);
    snprintf(subst[ns], sizeof subst[ns], "%.*s%.*s%s", (int)pre, o->key, (int)seglen, seg, hash + 1);
    cands[n++] = subst[ns++];
  }
  if (cn->formats)
    for (const conn_opt *o = format_opts; o->key && n < 64; o++) cands[n++] = o->key;
  const char *best = dp_closest_of(key, cands, n);
  if (!best) return NULL;
  snprintf(buf, cap, "%s", best);
  return buf;
}

/* "'a', 'b', 'fields.<col>.kind'" — the connector's keys, when they fit in a
** message; false for a long list (Kafka's), or none. */
static bool list_keys(char *buf, size_t cap, const connector *cn) {
  size_t len = 0;
  buf[0] = '\0';
  if (!cn->opts[0].key) {
    snprintf(buf, cap, "no options besides 'connector'");
    return true;
  }
  for (const conn_opt *o = cn->opts; o->key; o++) {
    const char *hash = strchr(o->key, '#');
    int w = hash ? snprintf(buf + len, cap - len, "%s'%.*s<col>%s'", len ? ", " : "",
                            (int)(hash - o->key), o->key, hash + 1)
                 : snprintf(buf + len, cap - len, "%s'%s'", len ? ", " : "", o->key);
    if (w < 0 || (size_t)w >= cap - len || len + (size_t)w > 320) return false;
    len += (size_t)w;
  }
  return true;
}

/* ---- option values ---- */

static bool parse_int(const char *v, bool allow_negative, long long *out) {
  const char *p = v;
  if (allow_negative && *p == '-') p++;
  if (!is_digit((unsigned char)*p)) return false;
  char *end = NULL;
  long long n = strtoll(v, &end, 10);
  if (*end) return false;
  *out = n;
  return true;
}

static bool parse_number(const char *v, double *out) {
  if (!*v) return false;
  char *end = NULL;
  double x = strtod(v, &end);
  if (*end || x != x || x > 1e300 || x < -1e300) return false;
  *out = x;
  return true;
}

static bool valid_port(const char *p, size_t n) {
  if (n == 0 || n > 5) return false;
  long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_digit((unsigned char)p[i])) return false;
    v = v * 10 + (p[i] - '0');
  }
  return v >= 1 && v <= 65535;
}

/* host:port[,host:port...]; NULL when fine, else what is wrong. */
static const char *servers_problem(const char *v) {
  if (!*v) return "the list is empty";
  const char *p = v;
  while (*p) {
    size_t n = strcspn(p, ",");
    const char *colon = NULL;
    for (size_t i = 0; i < n; i++)
      if (p[i] == ':') colon = p + i;
    if (n == 0) return "an entry between commas is empty";
    if (!colon || colon == p) return "each server must be written host:port";
    if (!valid_port(colon + 1, (size_t)(p + n - colon - 1)))
      return "a port must be a number from 1 to 65535";
    for (const char *h = p; h < colon; h++)
      if (*h == ' ') return "a host name holds no spaces";
    p += n;
    if (*p == ',') p++;
  }
  return NULL;
}

/* partition:0,offset:42;partition:1,offset:300 */
static bool offsets_ok(const char *v) {
  const char *p = v;
  if (!*p) return false;
  while (*p) {
    if (strncmp(p, "partition:", 10) != 0) return false;
    p += 10;
    if (!is_digit((unsigned char)*p)) return false;
    while (is_digit((unsigned char)*p)) p++;
    if (strncmp(p, ",offset:", 8) != 0) return false;
    p += 8;
    if (!is_digit((unsigned char)*p)) return false;
    while (is_digit((unsigned char)*p)) p++;
    if (*p == ';') {
      p++;
      if (!*p) return false;
    } else if (*p) {
      return false;
    }
  }
  return true;
}

static bool topics_ok(const char *v) {
  const char *p = v;
  if (!*p) return false;
  while (*p) {
    size_t n = strcspn(p, ";");
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
      int ch = (unsigned char)p[i];
      if (!(is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '.' ||
            ch == '_' || ch == '-'))
        return false;
    }
    p += n;
    if (*p == ';') {
      p++;
      if (!*p) return false;
    }
  }
  return true;
}

static int check_format_value(dp_diags *d, const connector *cn, const dp_option *o) {
  char buf[256];
  for (size_t i = 0; i < sizeof refused_formats / sizeof refused_formats[0]; i++)
    if (eq_ci(o->value, refused_formats[i]))
      return dp_error(d, DIPPER_UNSUPPORTED, o->value_span,
                      "format '%s' is not supported yet; write one of %s", o->value,
                      list_values(buf, sizeof buf, cn->formats));
  if (!in_list(cn->formats, o->value)) {
    const char *cands[16];
    int n = 0;
    const char *p = cn->formats;
    char names[16][24];
    while (*p && n < 16) {
      size_t len = strcspn(p, "|");
      snprintf(names[n], sizeof names[n], "%.*s", (int)len, p);
      cands[n] = names[n];
      n++;
      p += len + (p[len] ? 1 : 0);
    }
    const char *near = dp_closest_of(o->value, cands, n);
    char hint[64] = "";
    if (near) snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
    return dp_error(d, DIPPER_OPTION, o->value_span,
                    "connector '%s' has no format '%s'; %sit reads and writes %s", cn->name,
                    o->value, hint, list_values(buf, sizeof buf, cn->formats));
  }
  return DIPPER_OK;
}

static int check_value(dp_diags *d, const connector *cn, const dp_table_def *t, const dp_option *o,
                       const conn_opt *spec) {
  char buf[256];
  const char *v = o->value;
  long long n = 0;
  double x = 0;
  int64_t us = 0;
  switch (spec->kind) {
  case K_ANY: return DIPPER_OK;
  case K_STRING:
    if (*v) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span, "'%s' must not be empty; e.g. '%s' = '%s'",
                    o->key, o->key, spec->values ? spec->values : "...");
  case K_INT:
  case K_SIGNED:
    if (parse_int(v, spec->kind == K_SIGNED, &n)) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span, "'%s' = '%s' is not a whole number%s; e.g. '%s'",
                    o->key, v, spec->kind == K_INT ? " >= 0" : "", spec->values);
  case K_NUMBER:
  case K_SNUMBER:
    if (parse_number(v, &x) && (spec->kind == K_SNUMBER || x >= 0)) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span, "'%s' = '%s' is not a number%s; e.g. '%s'",
                    o->key, v, spec->kind == K_NUMBER ? " >= 0" : "", spec->values);
  case K_RATIO:
    if (parse_number(v, &x) && x >= 0 && x <= 1) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span,
                    "'%s' = '%s' must be a number from 0 to 1; e.g. '%s'", o->key, v, spec->values);
  case K_DURATION:
    if (dp_parse_duration(v, &us) == DIPPER_OK) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span,
                    "'%s' = '%s' is not a duration; write e.g. '%s' (units: ms, s, min, h, d)",
                    o->key, v, spec->values);
  case K_ENUM:
    if (in_list(spec->values, v)) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span, "'%s' = '%s' is not allowed; write %s", o->key,
                    v, list_values(buf, sizeof buf, spec->values));
  case K_BOOL:
    if (eq_ci(v, "true") || eq_ci(v, "false")) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span, "'%s' = '%s' must be 'true' or 'false'",
                    o->key, v);
  case K_SERVERS: {
    const char *why = servers_problem(v);
    if (!why) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span,
                    "'%s' = '%s' is not a server list: %s; write 'host1:9092,host2:9092'", o->key,
                    v, why);
  }
  case K_PORT:
    if (valid_port(v, strlen(v))) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span,
                    "'%s' = '%s' must be a port number from 1 to 65535", o->key, v);
  case K_TOPICS:
    if (topics_ok(v)) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span,
                    "'%s' = '%s' is not a topic list: topic names use letters, digits, '.', '_' "
                    "and '-', several are separated by ';' (e.g. 'orders;payments')",
                    o->key, v);
  case K_OFFSETS:
    if (offsets_ok(v)) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span,
                    "'%s' = '%s' is not a list of offsets; write "
                    "'partition:0,offset:42;partition:1,offset:300'",
                    o->key, v);
  case K_COLUMNS: {
    const char *p = v;
    if (!*p)
      return dp_error(d, DIPPER_OPTION, o->value_span,
                      "'%s' is empty; list columns separated by ';', e.g. '%s'", o->key,
                      spec->values);
    while (*p) {
      size_t len = strcspn(p, ";");
      if (column_of(t, p, len) < 0)
        return dp_error(d, DIPPER_OPTION, o->value_span,
                        "'%s' names `%.*s`, which is not a column of table `%s`; list columns "
                        "separated by ';'",
                        o->key, (int)len, p, t->name);
      p += len + (p[len] ? 1 : 0);
    }
    return DIPPER_OK;
  }
  case K_CHAR:
    if (strlen(v) == 1 || strcmp(v, "\\t") == 0) return DIPPER_OK;
    return dp_error(d, DIPPER_OPTION, o->value_span,
                    "'%s' = '%s' must be a single character (or '\\t' for a tab)", o->key, v);
  case K_FORMAT: return check_format_value(d, cn, o);
  }
  return DIPPER_INTERNAL;
}

/* ---- metadata columns ---- */

static bool meta_type_ok(const conn_meta *m, const dp_type *ty) {
  if (!ty) return false;
  switch (m->kind) {
  case DP_T_STRING: return dp_type_is_string(ty);
  case DP_T_MAP:
    return ty->kind == DP_T_MAP && ty->elem && dp_type_is_string(ty->elem) && ty->value &&
           ty->value->kind == DP_T_BYTES;
  default: return ty->kind == m->kind;
  }
}

static int check_metadata(dp_diags *d, const connector *cn, const dp_table_def *t, int role) {
  int rc = DIPPER_OK;
  for (int i = 0; i < t->schema.ncols; i++) {
    const dp_column_def *cd = &t->cols[i];
    if (cd->kind != DP_CK_METADATA) continue;
    const char *col = t->schema.cols[i].name;
    const char *key = cd->metadata_key ? cd->metadata_key : col;
    const conn_meta *m = NULL;
    for (const conn_meta *p = cn->meta; p && p->key; p++)
      if (strcmp(p->key, key) == 0) m = p;
    if (!m) {
      if (!cn->meta) {
        keep(&rc, dp_error(d, DIPPER_OPTION, cd->span,
                           "connector '%s' offers no metadata columns; declare `%s` as a physical "
                           "or computed column",
                           cn->name, col));
        continue;
      }
      const char *cands[16];
      char list[256];
      size_t len = 0;
      int n = 0;
      list[0] = '\0';
      for (const conn_meta *p = cn->meta; p->key && n < 16; p++) {
        cands[n++] = p->key;
        int w = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", p->key);
        if (w > 0 && (size_t)w < sizeof list - len) len += (size_t)w;
      }
      const char *near = dp_closest_of(key, cands, n);
      char hint[64] = "";
      if (near) snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
      keep(&rc, dp_error(d, DIPPER_OPTION, cd->span,
                         "connector '%s' has no metadata '%s'; %sit offers %s", cn->name, key, hint,
                         list));
      continue;
    }
    if (!meta_type_ok(m, t->schema.cols[i].type)) {
      char got[96];
      dp_type_print(got, sizeof got, t->schema.cols[i].type);
      keep(&rc, dp_error(d, DIPPER_TYPE, cd->span,
                         "metadata '%s' of connector '%s' is %s, but `%s` is declared %s; write "
                         "`%s` %s METADATA%s%s%s",
                         key, cn->name, m->spelling, col, got, col, m->spelling,
                         strcmp(key, col) ? " FROM '" : "", strcmp(key, col) ? key : "",
                         strcmp(key, col) ? "'" : ""));
      continue;
    }
    if (role == ROLE_SINK && !m->writable && !cd->is_virtual)
      keep(&rc, dp_error(d, DIPPER_OPTION, cd->span,
                         "a %s sink cannot write metadata '%s'; declare `%s` ... METADATA VIRTUAL "
                         "so that writes leave it out",
                         cn->name, key, col));
  }
  return rc;
}

/* ---- connector-specific rules ---- */

static int missing(dp_diags *d, const dp_table_def *t, const char *conn, const char *key,
                   const char *example, const char *why) {
  return dp_error(d, DIPPER_OPTION, t->with_span,
                  "connector '%s' needs option '%s'%s; add '%s' = '%s' to WITH (...)", conn, key,
                  why ? why : "", key, example);
}

/* A mode option whose value needs a companion option. */
static int needs_companion(dp_diags *d, const dp_table_def *t, const char *mode_key,
                           const char *mode, const char *companion, const char *example) {
  const dp_option *o = find_option(t, mode_key);
  if (!o || !eq_ci(o->value, mode) || find_option(t, companion)) return DIPPER_OK;
  return dp_error(d, DIPPER_OPTION, o->value_span, "'%s' = '%s' needs '%s'; add '%s' = '%s'",
                  mode_key, o->value, companion, companion, example);
}

/* The options a 'scan.bounded.mode' needs with it (kafka, upsert-kafka). */
static int bounded_companions(dp_diags *d, const dp_table_def *t) {
  int rc = DIPPER_OK;
  keep(&rc, needs_companion(d, t, "scan.bounded.mode", "specific-offsets",
                            "scan.bounded.specific-offsets",
                            "partition:0,offset:42;partition:1,offset:300"));
  keep(&rc, needs_companion(d, t, "scan.bounded.mode", "timestamp", "scan.bounded.timestamp-millis",
                            "1700000000000"));
  keep(&rc, needs_companion(d, t, "scan.bounded.mode", "group-offsets", "properties.group.id",
                            "my-group"));
  return rc;
}

static int kafka_check(dp_diags *d, const dp_table_def *t, int role) {
  int rc = DIPPER_OK;
  const dp_option *topic = find_option(t, "topic"), *pattern = find_option(t, "topic-pattern");
  if (topic && pattern)
    keep(&rc, dp_error(d, DIPPER_OPTION, pattern->span,
                       "set either 'topic' or 'topic-pattern', not both"));
  else if (!topic && !pattern)
    keep(&rc, missing(d, t, "kafka", "topic", "orders",
                      role == ROLE_SINK ? " (the topic to write)"
                                        : " (or 'topic-pattern' to read topics by regex)"));
  if (role == ROLE_SINK && pattern && !topic)
    keep(&rc, dp_error(d, DIPPER_OPTION, pattern->span,
                       "a Kafka sink writes to one 'topic'; 'topic-pattern' is for reading: write "
                       "'topic' = 'name'"));
  if (role == ROLE_SINK && topic && strchr(topic->value, ';'))
    keep(&rc, dp_error(d, DIPPER_OPTION, topic->value_span,
                       "a Kafka sink writes to one topic, but 'topic' = '%s' lists several; name "
                       "one topic",
                       topic->value));
  keep(&rc, needs_companion(d, t, "scan.startup.mode", "specific-offsets",
                            "scan.startup.specific-offsets",
                            "partition:0,offset:42;partition:1,offset:300"));
  keep(&rc, needs_companion(d, t, "scan.startup.mode", "timestamp", "scan.startup.timestamp-millis",
                            "1700000000000"));
  keep(&rc, needs_companion(d, t, "scan.startup.mode", "group-offsets", "properties.group.id",
                            "my-group"));
  keep(&rc, bounded_companions(d, t));
  const dp_option *fmt = find_option(t, "format"), *vfmt = find_option(t, "value.format");
  if (fmt && vfmt)
    keep(&rc, dp_error(d, DIPPER_OPTION, vfmt->span,
                       "set either 'format' or 'value.format', not both (they name the same thing)"));
  const dp_option *kfmt = find_option(t, "key.format"), *kfields = find_option(t, "key.fields");
  if (kfmt && !kfields)
    keep(&rc, dp_error(d, DIPPER_OPTION, kfmt->span,
                       "'key.format' needs 'key.fields', the columns that form the key; add "
                       "'key.fields' = 'id'"));
  if (kfields && !kfmt)
    keep(&rc, dp_error(d, DIPPER_OPTION, kfields->span,
                       "'key.fields' needs 'key.format' to say how the key is written; add "
                       "'key.format' = 'json'"));
  const dp_option *incl = find_option(t, "value.fields-include");
  if (incl && eq_ci(incl->value, "EXCEPT_KEY") && !kfields)
    keep(&rc, dp_error(d, DIPPER_OPTION, incl->value_span,
                       "'value.fields-include' = 'EXCEPT_KEY' needs 'key.fields'"));
  return rc;
}

/* upsert-kafka keys every message by the PRIMARY KEY and writes one topic. */
static int upsert_kafka_check(dp_diags *d, const dp_table_def *t, int role) {
  (void)role;
  int rc = DIPPER_OK;
  if (t->npk == 0)
    keep(&rc, dp_error(d, DIPPER_OPTION, t->with_span,
                       "an upsert-kafka table needs a PRIMARY KEY: its columns are each "
                       "message's key, and a deletion is a tombstone of that key; add PRIMARY KEY "
                       "(id) NOT ENFORCED"));
  const dp_option *topic = find_option(t, "topic");
  if (topic && strchr(topic->value, ';'))
    keep(&rc, dp_error(d, DIPPER_OPTION, topic->value_span,
                       "an upsert-kafka table is one topic, but 'topic' = '%s' lists several; "
                       "name one topic",
                       topic->value));
  keep(&rc, bounded_companions(d, t));
  if (t->watermark_col >= 0)
    keep(&rc, dp_error(d, DIPPER_UNSUPPORTED, t->watermark_span,
                       "a WATERMARK on an upsert-kafka table is not supported by dipper yet: its "
                       "rows are changes (-U, +U, -D) that the watermark step would pass on as "
                       "insertions; declare the table without it"));
  /* Flink's rule: with ALL the value repeats the key's columns under the
     table's names, which a key record without the prefix would contradict. */
  const dp_option *prefix = find_option(t, "key.fields-prefix");
  const dp_option *incl = find_option(t, "value.fields-include");
  if (prefix && !(incl && eq_ci(incl->value, "EXCEPT_KEY")))
    keep(&rc, dp_error(d, DIPPER_OPTION, prefix->span,
                       "'key.fields-prefix' needs 'value.fields-include' = 'EXCEPT_KEY' (as in "
                       "Flink): add it, or drop the prefix"));
  for (int i = 0; prefix && i < t->npk; i++)
    if (strncmp(t->schema.cols[t->pk[i]].name, prefix->value, strlen(prefix->value)) != 0)
      keep(&rc, dp_error(d, DIPPER_OPTION, prefix->value_span,
                         "key column `%s` does not start with 'key.fields-prefix' = '%s': every "
                         "PRIMARY KEY column is named with the prefix, and written without it",
                         t->schema.cols[t->pk[i]].name, prefix->value));
  return rc;
}

/* The key pair comes whole: BASIC needs both halves, and one half alone is
** a mistake under any provider.  (Messages name the options, never a value.) */
static int kinesis_check(dp_diags *d, const dp_table_def *t, int role) {
  (void)role;
  int rc = needs_companion(d, t, "scan.stream.initpos", "AT_TIMESTAMP",
                           "scan.stream.initpos-timestamp", "2024-01-01T00:00:00Z");
  const dp_option *prov = find_option(t, "aws.credentials.provider");
  const dp_option *ak = find_option(t, "aws.credentials.basic.accesskeyid");
  const dp_option *sk = find_option(t, "aws.credentials.basic.secretkey");
  if ((prov && eq_ci(prov->value, "BASIC") && (!ak || !sk)) || (!ak != !sk))
    keep(&rc, dp_error(d, DIPPER_OPTION, prov && !(ak || sk) ? prov->value_span : t->with_span,
                       "Kinesis credentials BASIC need both 'aws.credentials.basic.accesskeyid' "
                       "and 'aws.credentials.basic.secretkey'"));
  return rc;
}

/* The partition options the sink carries out (connectors/fs_partition.c);
** the rest is refused here rather than ignored. */
static int partition_check(dp_diags *d, const dp_table_def *t) {
  static const char *const refused[][2] = {
      {"partition.time-extractor.kind", "the partition-time trigger"},
      {"partition.time-extractor.class", "the partition-time trigger"},
      {"partition.time-extractor.timestamp-pattern", "the partition-time trigger"},
      {"partition.time-extractor.timestamp-formatter", "the partition-time trigger"},
      {"sink.partition-commit.watermark-time-zone", "the partition-time trigger"},
      {"sink.partition-commit.policy.class", "custom commit policies"},
      {"sink.partition-commit.policy.class.parameters", "custom commit policies"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    const dp_option *o = find_option(t, refused[i][0]);
    if (o)
      return dp_error(d, DIPPER_UNSUPPORTED, o->span,
                      "'%s' is for %s, which the filesystem sink does not carry out: partitions "
                      "are committed by processing time ('sink.partition-commit.trigger' = "
                      "'process-time' with 'sink.partition-commit.delay'); leave the option out",
                      refused[i][0], refused[i][1]);
  }
  const dp_option *trig = find_option(t, "sink.partition-commit.trigger");
  if (trig && eq_ci(trig->value, "partition-time"))
    return dp_error(d, DIPPER_UNSUPPORTED, trig->value_span,
                    "'sink.partition-commit.trigger' = 'partition-time' is not carried out by the "
                    "filesystem sink; write 'process-time' (a partition is committed once "
                    "'sink.partition-commit.delay' has passed since its first row)");
  const dp_option *kind = find_option(t, "sink.partition-commit.policy.kind");
  if (kind) {
    for (const char *p = kind->value; *p;) {
      size_t n = strcspn(p, ",");
      size_t b = 0, e = n;
      while (b < e && p[b] == ' ') b++;
      while (e > b && p[e - 1] == ' ') e--;
      if (!eq_ci_n(p + b, e - b, "success-file"))
        return dp_error(d, DIPPER_UNSUPPORTED, kind->value_span,
                        "commit policy '%.*s' is not carried out by the filesystem sink: it "
                        "writes 'success-file' (a _SUCCESS file in each committed partition); "
                        "there is no metastore and no custom policy",
                        (int)(e - b), p + b);
      p += n + (p[n] ? 1 : 0);
    }
  }
  static const char *const needs_policy[] = {"sink.partition-commit.trigger", "sink.partition-commit.delay",
                                             "sink.partition-commit.success-file.name"};
  for (size_t i = 0; i < 3 && !kind; i++) {
    const dp_option *o = find_option(t, needs_policy[i]);
    if (o)
      return dp_error(d, DIPPER_OPTION, o->span,
                      "'%s' has no effect without a commit policy; add "
                      "'sink.partition-commit.policy.kind' = 'success-file'",
                      needs_policy[i]);
  }
  if (t->npartition == 0) {
    for (int i = 0; i < t->noptions; i++) {
      const char *key = t->options[i].key;
      if (strncmp(key, "sink.partition-commit.", 22) == 0 || strncmp(key, "partition.", 10) == 0)
        return dp_error(d, DIPPER_OPTION, t->options[i].span,
                        "'%s' applies to a partitioned table, and table `%s` has no PARTITIONED "
                        "BY; add PARTITIONED BY (col, ...) or leave the option out",
                        key, t->name);
    }
  }
  return DIPPER_OK;
}

/* A micro-batch of no files would never move: the cap starts at one.  The
** cap paces a watched folder, and a folder is watched only with
** 'source.monitor-interval' (filesystem_bounded). */
static int filesystem_check(dp_diags *d, const dp_table_def *t, int role) {
  (void)role;
  const dp_option *o = find_option(t, "source.max-files-per-trigger");
  if (o && o->value[0] && strspn(o->value, "0") == strlen(o->value))
    return dp_error(d, DIPPER_OPTION, o->value_span,
                    "'source.max-files-per-trigger' must be 1 or more (a micro-batch reads at "
                    "most that many new files); leave it out to read every new file at once");
  if (o && !find_option(t, "source.monitor-interval"))
    return dp_error(d, DIPPER_OPTION, o->span,
                    "'source.max-files-per-trigger' paces a watched folder, and a filesystem table "
                    "is watched only with 'source.monitor-interval' (without it the table is "
                    "bounded: its files are read once, Flink's rule); add "
                    "'source.monitor-interval' = '1 s', or leave the cap out");
  return partition_check(d, t);
}

/* A sequence field counts from start to end: both are needed, in order. */
static int datagen_check(dp_diags *d, const dp_table_def *t, int role) {
  (void)role;
  int rc = DIPPER_OK;
  for (int i = 0; i < t->noptions; i++) {
    const dp_option *o = &t->options[i];
    const char *col = NULL;
    size_t len = 0;
    if (!key_matches("fields.#.kind", o->key, &col, &len) || !eq_ci(o->value, "sequence")) continue;
    char kstart[160], kend[160];
    snprintf(kstart, sizeof kstart, "fields.%.*s.start", (int)len, col);
    snprintf(kend, sizeof kend, "fields.%.*s.end", (int)len, col);
    const dp_option *s = find_option(t, kstart), *e = find_option(t, kend);
    if (!s || !e) {
      keep(&rc, dp_error(d, DIPPER_OPTION, o->value_span,
                         "a sequence field needs a start and an end; add '%s' = '1' and '%s' = "
                         "'1000'",
                         kstart, kend));
      continue;
    }
    long long a = 0, b = 0;
    if (parse_int(s->value, true, &a) && parse_int(e->value, true, &b) && a > b)
      keep(&rc, dp_error(d, DIPPER_OPTION, e->value_span,
                         "'%s' = '%s' is below '%s' = '%s'; a sequence counts up", kend, e->value,
                         kstart, s->value));
  }
  return rc;
}

size_t dp_connector_option_users(const char *key, char *buf, size_t cap) {
  size_t n = 0, at = 0;
  if (cap) buf[0] = '\0';
  for (size_t i = 0; i < NCONNECTORS; i++) {
    const connector *cn = &connectors[i];
    if (cn->alias_of) continue;
    bool takes = false;
    for (const conn_opt *o = cn->opts; o->key && !takes; o++) {
      const char *col = NULL;
      size_t len = 0;
      takes = eq_ci(o->key, key) || key_matches(o->key, key, &col, &len);
    }
    if (!takes) continue;
    int w = snprintf(buf + at, cap > at ? cap - at : 0, "%s'%s'", n ? ", " : "", cn->name);
    if (w > 0) at += (size_t)w;
    if (at >= cap) at = cap ? cap - 1 : 0;
    n++;
  }
  return n;
}

/* ---- boundedness ---- */

static bool kafka_bounded(const dp_table_def *t, bool batch_mode) {
  (void)batch_mode;
  const char *mode = option_value(t, "scan.bounded.mode");
  return mode && !eq_ci(mode, "unbounded");
}

static bool datagen_bounded(const dp_table_def *t, bool batch_mode) {
  (void)batch_mode;
  if (option_value(t, "number-of-rows")) return true;
  for (int i = 0; i < t->noptions; i++) {
    const char *col = NULL;
    size_t len = 0;
    if (key_matches("fields.#.kind", t->options[i].key, &col, &len) &&
        eq_ci(t->options[i].value, "sequence"))
      return true; /* ends when the sequence is exhausted (Flink's rule) */
  }
  return false;
}

static bool nexmark_bounded(const dp_table_def *t, bool batch_mode) {
  (void)batch_mode;
  /* 'events.num' = '0' is Nexmark's "no limit". */
  const char *num = option_value(t, "events.num");
  return (num && num[strspn(num, "0")] != '\0') || option_value(t, "number-of-events");
}

/* Flink's rule: a filesystem table is bounded — the files there when the
** query starts, read once — unless 'source.monitor-interval' is set; then,
** in streaming mode, the folder is watched at that interval (in batch mode
** it is read as it is now).  So a stream joined with a table of files is a
** stream-static join, as in Flink. */
static bool filesystem_bounded(const dp_table_def *t, bool batch_mode) {
  return batch_mode || !option_value(t, "source.monitor-interval");
}

/* A memory table waits for more pushes unless it says it will get none. */
static bool memory_bounded(const dp_table_def *t, bool batch_mode) {
  const char *b = option_value(t, "bounded");
  return batch_mode || (b && eq_ci(b, "true"));
}

static bool never_bounded(const dp_table_def *t, bool batch_mode) {
  (void)t;
  (void)batch_mode;
  return false;
}

/* ---- the checks ---- */

/* Format 'raw' carries each record as one value, so exactly one physical
** column receives it (Flink's rule): for Kafka the value columns are the
** physical ones less the key fields when 'value.fields-include' is
** EXCEPT_KEY, and a raw key has one key field. */
static int check_raw(dp_diags *d, const dp_table_def *t) {
  const dp_option *fmt = find_option(t, "format");
  if (!fmt) fmt = find_option(t, "value.format");
  int rc = DIPPER_OK;
  if (fmt && eq_ci(fmt->value, "raw")) {
    int n = 0;
    for (int i = 0; i < t->schema.ncols; i++) n += t->cols[i].kind == DP_CK_PHYSICAL;
    const char *fields = option_value(t, "key.fields");
    const char *incl = option_value(t, "value.fields-include");
    if (fields && incl && eq_ci(incl, "EXCEPT_KEY"))
      for (const char *p = fields; *p; p += strcspn(p, ";") + (p[strcspn(p, ";")] ? 1 : 0)) n--;
    if (n != 1)
      keep(&rc, dp_error(d, DIPPER_OPTION, fmt->value_span,
                         "format 'raw' reads each record as one value, so table `%s` needs exactly "
                         "one physical %scolumn, and it has %d; declare one column (e.g. line "
                         "STRING or payload BYTES) or use format 'json' or 'csv'",
                         t->name, fields && incl ? "value " : "", n));
  }
  const dp_option *kfmt = find_option(t, "key.format");
  const char *kfields = option_value(t, "key.fields");
  if (kfmt && eq_ci(kfmt->value, "raw") && kfields && strchr(kfields, ';'))
    keep(&rc, dp_error(d, DIPPER_OPTION, kfmt->value_span,
                       "key format 'raw' holds one value, but 'key.fields' = '%s' lists several; "
                       "name one key column or use key format 'json'",
                       kfields));
  return rc;
}

static int validate(dp_diags *d, const dp_table_def *t, int role) {
  char buf[512], hint[160];
  const dp_option *conn_opt_ = find_option(t, "connector");
  if (!conn_opt_)
    return dp_error(d, DIPPER_OPTION, t->with_span.line ? t->with_span : t->span,
                    "table `%s` has no 'connector' option; add WITH ('connector' = '...', ...) "
                    "naming one of %s",
                    t->name, known_connector_list(buf, sizeof buf));
  const connector *cn = find_connector(conn_opt_->value);
  if (!cn) {
    const char *cands[NCONNECTORS];
    for (size_t i = 0; i < NCONNECTORS; i++) cands[i] = connectors[i].name;
    const char *near = dp_closest_of(conn_opt_->value, cands, (int)NCONNECTORS);
    hint[0] = '\0';
    if (near) snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
    return dp_error(d, DIPPER_OPTION, conn_opt_->value_span,
                    "unknown connector '%s'; %sdipper knows %s", conn_opt_->value, hint,
                    known_connector_list(buf, sizeof buf));
  }
  if (role == ROLE_SINK && !cn->sink)
    return dp_error(d, DIPPER_UNSUPPORTED, conn_opt_->value_span,
                    "connector '%s' can only be read, and table `%s` is written here; declare the "
                    "target with a sink connector such as 'filesystem', 'kafka' or 'console'",
                    cn->name, t->name);
  if (role == ROLE_SOURCE && !cn->source)
    return dp_error(d, DIPPER_UNSUPPORTED, conn_opt_->value_span,
                    "connector '%s' can only be written (INSERT INTO %s), and table `%s` is read "
                    "here; read from a source connector such as 'kafka', 'filesystem' or 'datagen'",
                    cn->name, t->name, t->name);
  int rc = DIPPER_OK;
  for (int i = 0; i < t->noptions; i++) {
    const dp_option *o = &t->options[i];
    if (strcmp(o->key, "connector") == 0) continue;
    const conn_opt *spec = NULL;
    const char *col = NULL;
    size_t col_len = 0;
    for (const conn_opt *p = cn->opts; p->key && !spec; p++)
      if (key_matches(p->key, o->key, &col, &col_len)) spec = p;
    if (spec && col && column_of(t, col, col_len) < 0) {
      keep(&rc, dp_error(d, DIPPER_OPTION, o->span,
                         "option '%s' names column `%.*s`, which table `%s` does not have", o->key,
                         (int)col_len, col, t->name));
      continue;
    }
    if (!spec && cn->formats) {
      const char *fmt = NULL, *bare = NULL;
      spec = find_format_opt(t, o->key, &fmt, &bare);
      if (spec) {
        size_t flen = strcspn(bare, ".");
        const char *which = strncmp(o->key, "key.", 4) == 0 ? "key.format" : "format";
        if (!fmt) {
          keep(&rc, dp_error(d, DIPPER_OPTION, o->span,
                             "option '%s' applies to format '%.*s', but no '%s' is set; remove "
                             "it or add '%s' = '%.*s'",
                             o->key, (int)flen, bare, which, which, (int)flen, bare));
          continue;
        }
        if (!eq_ci_n(bare, flen, fmt)) {
          keep(&rc, dp_error(d, DIPPER_OPTION, o->span,
                             "option '%s' applies to format '%.*s', but the format here is '%s'; "
                             "remove it or change the format",
                             o->key, (int)flen, bare, fmt));
          continue;
        }
      }
    }
    if (!spec) {
      const char *near = suggest_key(cn, o->key, hint, sizeof hint);
      if (near)
        keep(&rc, dp_error(d, DIPPER_OPTION, o->span,
                           "connector '%s' has no option '%s'; did you mean '%s'?", cn->name,
                           o->key, near));
      else if (list_keys(buf, sizeof buf, cn))
        keep(&rc, dp_error(d, DIPPER_OPTION, o->span,
                           "connector '%s' has no option '%s'; it takes %s", cn->name, o->key,
                           buf));
      else
        keep(&rc, dp_error(d, DIPPER_OPTION, o->span,
                           "connector '%s' has no option '%s'; see docs/sql.md, \"Connectors and "
                           "options\", for the options it takes",
                           cn->name, o->key));
      continue;
    }
    keep(&rc, check_value(d, cn, t, o, spec));
  }
  for (const conn_opt *p = cn->opts; p->key; p++)
    if ((p->flags & REQ) && !find_option(t, p->key))
      keep(&rc, missing(d, t, cn->name, p->key, p->values, NULL));
  if (cn->format_required && !find_option(t, "format") && !find_option(t, "value.format"))
    keep(&rc, missing(d, t, cn->name, "format", "json", NULL));
  keep(&rc, check_metadata(d, cn, t, role));
  keep(&rc, check_raw(d, t));
  if (cn->check) keep(&rc, cn->check(d, t, role));
  return rc;
}

int dp_connector_check_table(dp_diags *d, const dp_table_def *t) {
  if (!d || !t) return DIPPER_MISUSE;
  return validate(d, t, ROLE_ANY);
}

int dp_connector_validate(dp_diags *d, const dp_table_def *t, bool as_sink) {
  if (!d || !t) return DIPPER_MISUSE;
  return validate(d, t, as_sink ? ROLE_SINK : ROLE_SOURCE);
}

const char *dp_connector_canonical(const char *name) {
  const connector *cn = find_connector(name);
  if (!cn) return NULL;
  return cn->alias_of ? cn->alias_of : cn->name;
}

bool dp_connector_writable(const char *name) {
  const connector *cn = name ? find_connector(name) : NULL;
  return !cn || cn->sink;
}

bool dp_connector_changelog(const dp_table_def *t) {
  const connector *cn = t && t->connector ? find_connector(t->connector) : NULL;
  return cn && strcmp(cn->name, "upsert-kafka") == 0;
}

bool dp_connector_bounded(const dp_table_def *t, bool batch_mode) {
  const connector *cn = t ? find_connector(t->connector) : NULL;
  if (!cn || !cn->source) return false;
  return cn->bounded(t, batch_mode);
}

/* ---- Flink's legacy option keys ---- */

/* The keys of Flink's old connector descriptors ('connector.type',
** 'connector.path', 'format.type', ...), which Flink still reads and
** published SQL (Nexmark's q13) still writes, and their new spellings.
** NULL: the key says nothing dipper needs (a descriptor or client version). */
static const struct legacy_key {
  const char *old_key, *new_key;
} legacy_keys[] = {
    {"connector.type", "connector"},
    {"connector.path", "path"},
    {"connector.topic", "topic"},
    {"connector.startup-mode", "scan.startup.mode"},
    {"connector.specific-offsets", "scan.startup.specific-offsets"},
    {"connector.startup-timestamp-millis", "scan.startup.timestamp-millis"},
    {"connector.sink-partitioner", "sink.partitioner"},
    {"format.type", "format"},
    {"connector.version", NULL},
    {"connector.property-version", NULL},
    {"format.property-version", NULL},
};

static int legacy_refused(dp_diags *d, const dp_option *o, const char *why) {
  return dp_error(d, DIPPER_OPTION, o->span, "legacy option '%s' = '%s' %s", o->key, o->value, why);
}

/* The new key for legacy option o, in *out (NULL: drop it); DIPPER_OK, or an
** error for a legacy key or value that has no new form. */
static int legacy_new_key(dp_arena *a, dp_diags *d, const dp_table_def *t, const dp_option *o,
                          const char **out) {
  *out = o->key;
  for (size_t i = 0; i < sizeof legacy_keys / sizeof legacy_keys[0]; i++)
    if (!strcmp(o->key, legacy_keys[i].old_key)) {
      *out = legacy_keys[i].new_key;
      return DIPPER_OK;
    }
  if (!strcmp(o->key, "update-mode")) {
    *out = NULL;
    if (eq_ci(o->value, "append")) return DIPPER_OK;
    return legacy_refused(d, o, "has no new form: a table's changelog follows from its query and "
                                "its PRIMARY KEY; remove the option (declare PRIMARY KEY (..) NOT "
                                "ENFORCED on a sink that takes updates)");
  }
  if (!strcmp(o->key, "format.derive-schema")) {
    *out = NULL;
    if (eq_ci(o->value, "true")) return DIPPER_OK;
    return legacy_refused(d, o, "is not supported: the format's fields are always the table's "
                                "columns; remove the option");
  }
  if (!strncmp(o->key, "connector.properties.", 21)) {
    *out = dp_arena_printf(a, "properties.%s", o->key + 21);
    return *out ? DIPPER_OK : DIPPER_NOMEM;
  }
  if (!strncmp(o->key, "format.", 7)) { /* 'format.field-delimiter' is 'csv.field-delimiter' */
    const char *fmt = option_value(t, "format.type");
    if (!fmt) fmt = option_value(t, "format");
    if (!fmt)
      return legacy_refused(d, o, "needs the format: add 'format.type' = 'csv' (or write the new "
                                  "key, e.g. 'csv.field-delimiter')");
    char *k = dp_arena_printf(a, "%s.%s", fmt, o->key + 7);
    if (!k) return DIPPER_NOMEM;
    for (char *c = k; *c && *c != '.'; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    *out = k;
    return DIPPER_OK;
  }
  if (!strncmp(o->key, "connector.", 10))
    return legacy_refused(d, o, "has no new form that dipper knows: write the option under its "
                                "current name (docs/sql.md lists each connector's options)");
  return DIPPER_OK;
}

int dp_connector_map_legacy(dp_arena *a, dp_diags *d, dp_table_def *t) {
  int rc = DIPPER_OK, n = 0;
  dp_option *mapped = dp_arena_calloc(a, (size_t)(t->noptions ? t->noptions : 1), sizeof *mapped);
  if (!mapped) return DIPPER_NOMEM;
  for (int i = 0; i < t->noptions; i++) {
    dp_option o = t->options[i];
    const char *key = NULL;
    int step = legacy_new_key(a, d, t, &o, &key);
    if (step == DIPPER_NOMEM) return step;
    keep(&rc, step);
    if (step != DIPPER_OK || !key) continue;
    if (key != o.key) {
      const dp_option *twin = find_option(t, key);
      if (twin) {
        keep(&rc, dp_error(d, DIPPER_DUPLICATE, o.span,
                           "legacy option '%s' is '%s', which is also set (line %u, column %u); "
                           "keep one",
                           o.key, key, twin->span.line, twin->span.col));
        continue;
      }
      o.key = key;
    }
    mapped[n++] = o;
  }
  if (rc != DIPPER_OK) return rc;
  t->options = mapped;
  t->noptions = n;
  return DIPPER_OK;
}
