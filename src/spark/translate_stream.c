/*
** translate_stream.c — streaming sources and the streaming write on Spark.
**
** Owns: kafka, socket and kinesis sources (Spark's fixed record schema turned into the
** table's columns: the value parsed by the table's format and DDL schema —
** from_json, from_csv, raw, from_avro with formats/avro.h's schema — the
** 'key.fields' columns from the key with 'value.fields-include' =
** 'EXCEPT_KEY', metadata columns from the record), unbounded datagen tables
** as Spark's rate source and WriteStreamOperationStart (sink format and
** options, the rows serialized for kafka — value and key each in its format,
** to_avro giving the embedded engine's bytes — partitioning, output mode,
** trigger, checkpoint location, query name).  Options follow dipper's
** (Flink's) names and are mapped onto Spark's here.  from_avro and to_avro
** are the spark-avro package's: scripts/spark-local loads it.
** Does not own: every other relation (translate.c), expressions and types
** (translate_expr.c, translate_type.c), running queries (streaming.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "formats/avro.h"
#include "plan/analyze.h"
#include "plan/catalog.h"
#include "spark/handoff.h"
#include "spark/translate_stream.h"
#include "spark/translate_partition.h"

#define MAX_OPTS 48

typedef struct kv_list {
  int n;
  const char *kv[2 * MAX_OPTS];
} kv_list;

static void kv_add(kv_list *o, const char *k, const char *v) {
  if (k && v && o->n < MAX_OPTS) {
    o->kv[2 * o->n] = k;
    o->kv[2 * o->n + 1] = v;
    o->n++;
  }
}

static const char *opt(const dp_table_def *t, const char *key) {
  for (int i = 0; i < t->noptions; i++)
    if (strcasecmp(t->options[i].key, key) == 0) return t->options[i].value;
  return NULL;
}

static dp_span opt_span(const dp_table_def *t, const char *key) {
  for (int i = 0; i < t->noptions; i++)
    if (strcasecmp(t->options[i].key, key) == 0) return t->options[i].span;
  return t->with_span;
}

static int failed(dp_sx *x) { return x->rc ? x->rc : dp_sx_nomem(x); }

bool dp_sx_stream_reads(const dp_sx *x, const dp_table_def *t) {
  const char *conn = t && t->connector ? t->connector : "";
  if (!strcmp(conn, "kafka") || !strcmp(conn, "socket") || !strcmp(conn, "kinesis")) return true;
  /* An unbounded datagen in streaming mode is Spark's rate source; a bounded
     one is a bounded input there as everywhere (translate_scan.c's Range). */
  return !strcmp(conn, "datagen") && x->q && x->q->streaming && !dp_connector_bounded(t, false);
}

/* 'properties.*' as Spark's 'kafka.*' (group.id left out: Spark keeps the
** offsets in the checkpoint, and a shared group id makes parallel queries
** steal each other's partitions). */
static void kafka_properties(dp_sx *x, const dp_table_def *t, kv_list *o) {
  for (int i = 0; i < t->noptions; i++) {
    const char *k = t->options[i].key;
    if (strncasecmp(k, "properties.", 11) != 0 || !strcasecmp(k, "properties.group.id")) continue;
    kv_add(o, dp_sx_printf(x, "kafka.%s", k + 11), t->options[i].value);
  }
}

/* "a;b" (Flink's topic list) as "a,b". */
static const char *topic_list(dp_sx *x, const char *topics) {
  char *s = dp_sx_strdup(x, topics);
  for (char *c = s; c && *c; c++)
    if (*c == ';') *c = ',';
  return s;
}

/* "partition:0,offset:42;partition:1,offset:300" for topic t as Spark's
** {"t":{"0":42,"1":300}}; NULL (refused) when malformed. */
static const char *specific_offsets(dp_sx *x, const dp_table_def *t, const char *topic,
                                    const char *spec) {
  dp_buf b = DP_BUF_INIT;
  dp_buf_printf(&b, "{\"%s\":{", topic);
  const char *p = spec;
  int n = 0;
  while (*p) {
    long part = -1;
    long long off = -1;
    int used = 0;
    if (sscanf(p, "partition:%ld,offset:%lld%n", &part, &off, &used) != 2 || part < 0 ||
        off < 0) {
      dp_buf_free(&b);
      dp_sx_refuse(x, opt_span(t, "scan.startup.specific-offsets"),
                   "table `%s`: 'scan.startup.specific-offsets' must read "
                   "'partition:0,offset:42;partition:1,offset:300'",
                   t->name);
      return NULL;
    }
    dp_buf_printf(&b, "%s\"%ld\":%lld", n++ ? "," : "", part, off);
    p += used;
    if (*p == ';') p++;
  }
  dp_buf_puts(&b, "}}");
  const char *s = b.oom ? NULL : dp_sx_strdup(x, dp_buf_cstr(&b));
  dp_buf_free(&b);
  return s;
}

static int kafka_options(dp_sx *x, const dp_table_def *t, kv_list *o) {
  const char *topic = opt(t, "topic"), *pattern = opt(t, "topic-pattern");
  if (pattern)
    kv_add(o, "subscribePattern", pattern);
  else if (topic)
    kv_add(o, "subscribe", topic_list(x, topic));
  else
    return dp_sx_refuse(x, t->with_span, "table `%s`: a kafka source needs 'topic' or 'topic-pattern'",
                        t->name);
  kafka_properties(x, t, o);
  const char *mode = opt(t, "scan.startup.mode");
  if (!mode || !strcasecmp(mode, "group-offsets")) {
    /* Flink's default reads from the committed group offsets; Spark commits
       none, so the closest start is the earliest record not yet consumed by
       this query's checkpoint. */
    kv_add(o, "startingOffsets", "earliest");
  } else if (!strcasecmp(mode, "earliest-offset")) {
    kv_add(o, "startingOffsets", "earliest");
  } else if (!strcasecmp(mode, "latest-offset")) {
    kv_add(o, "startingOffsets", "latest");
  } else if (!strcasecmp(mode, "timestamp")) {
    kv_add(o, "startingTimestamp", opt(t, "scan.startup.timestamp-millis"));
  } else if (!strcasecmp(mode, "specific-offsets")) {
    if (!topic || strchr(topic, ';'))
      return dp_sx_refuse(x, opt_span(t, "scan.startup.mode"),
                          "table `%s`: specific offsets need exactly one 'topic'", t->name);
    const char *js = specific_offsets(x, t, topic, opt(t, "scan.startup.specific-offsets"));
    if (!js) return failed(x);
    kv_add(o, "startingOffsets", js);
  }
  /* A topic whose old records were deleted must not stop a query started
     from 'earliest': Flink's source skips them as well. */
  kv_add(o, "failOnDataLoss", "false");
  return x->rc;
}

/* ---- kinesis: awslabs' connector, when the user installed it ----
**
** Spark 4 (Scala 2.13) has no Structured Streaming source for Kinesis on
** Maven Central: awslabs' spark-sql-kinesis-connector must be built from
** source and put on the server.  A kinesis table is refused unless the
** table says the connector is there ('dipper.spark.kinesis-format' =
** 'aws-kinesis'); then it is read and written as format "aws-kinesis": the
** record's `data` (binary) parsed as the table's format, `partitionKey`,
** `sequenceNumber`, `approximateArrivalTimestamp` its metadata (it gives no
** shard id). */

static bool kinesis_refused(dp_sx *x, const dp_table_def *t) {
  const char *f = opt(t, "dipper.spark.kinesis-format");
  if (f && !strcasecmp(f, "aws-kinesis")) return false;
  dp_sx_refuse(x, t->with_span,
               "table `%s`: Spark 4 has no Structured Streaming connector for Kinesis on Maven "
               "Central (awslabs' spark-sql-kinesis-connector must be built from source); with "
               "that connector installed on the server, add 'dipper.spark.kinesis-format' = "
               "'aws-kinesis', or run the query on the embedded engine",
               t->name);
  return true;
}

/* The connector's options from dipper's (Flink's) names. */
static void kinesis_options(dp_sx *x, const dp_table_def *t, kv_list *o, bool source) {
  const char *region = opt(t, "aws.region"), *ep = opt(t, "aws.endpoint");
  kv_add(o, "kinesis.streamName", opt(t, "stream"));
  kv_add(o, "kinesis.region", region);
  kv_add(o, "kinesis.endpointUrl",
         ep ? ep : dp_sx_printf(x, "https://kinesis.%s.amazonaws.com", region ? region : ""));
  const char *prov = opt(t, "aws.credentials.provider");
  if (opt(t, "aws.credentials.basic.accesskeyid") && (!prov || !strcasecmp(prov, "BASIC") ||
                                                      !strcasecmp(prov, "AUTO"))) {
    kv_add(o, "kinesis.awsAccessKeyId", opt(t, "aws.credentials.basic.accesskeyid"));
    kv_add(o, "kinesis.awsSecretKey", opt(t, "aws.credentials.basic.secretkey"));
  }
  if (!source) return;
  kv_add(o, "kinesis.consumerType", "GetRecords");
  const char *pos = opt(t, "scan.stream.initpos");
  if (pos && !strcasecmp(pos, "AT_TIMESTAMP"))
    kv_add(o, "kinesis.startingPosition",
           dp_sx_printf(x, "AT_TIMESTAMP %s", opt(t, "scan.stream.initpos-timestamp")));
  else
    kv_add(o, "kinesis.startingPosition", pos && !strcasecmp(pos, "LATEST") ? "LATEST"
                                                                            : "TRIM_HORIZON");
}

/* The Spark column of a metadata key of the aws-kinesis record, or NULL. */
static const char *kinesis_meta(const char *key) {
  if (!strcasecmp(key, "timestamp")) return "approximateArrivalTimestamp";
  if (!strcasecmp(key, "sequence-number")) return "sequenceNumber";
  if (!strcasecmp(key, "partition-key")) return "partitionKey";
  return NULL;
}

/* The Spark column of a metadata key of Spark's kafka record. */
static const char *kafka_meta(const char *key) {
  static const char *const k[] = {"key", "topic", "partition", "offset", "timestamp",
                                  "timestamp-type"};
  static const char *const s[] = {"key", "topic", "partition", "offset", "timestamp",
                                  "timestampType"};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    if (!strcasecmp(key, k[i])) return s[i];
  return NULL;
}

/* ---- datagen on Spark's rate source ---- */

/* 'fields.<col>.<what>' of a datagen table. */
static const char *field_opt(dp_sx *x, const dp_table_def *t, const char *col, const char *what) {
  const char *k = dp_sx_printf(x, "fields.%s.%s", col, what);
  return k ? opt(t, k) : NULL;
}

static Spark__Connect__Expression *lit_double(dp_sx *x, double d, dp_span at) {
  dp_value v;
  memset(&v, 0, sizeof v);
  v.type = dp_type_of(DP_T_DOUBLE);
  v.u.d = d;
  return dp_sx_literal(x, &v, at);
}

/* A uniform double in [0, 1) drawn from the row number (column `row`) and a
** stream key.
** Spark's rand(seed) restarts its sequence in every micro-batch (it is seeded
** per partition index), so random values are hashes of the row number
** instead: different in every row, the same when a batch is replayed after a
** restart, independent of how rows fall into batches. */
#define TWO_53 9007199254740992.0
static Spark__Connect__Expression *uniform(dp_sx *x, const char *row, int64_t key, dp_span at) {
  Spark__Connect__Expression *h =
      dp_sx_fn2(x, "xxhash64", dp_sx_col(x, row), dp_sx_lit_long(x, key));
  Spark__Connect__Expression *bits =
      dp_sx_fn2(x, "pmod", h, dp_sx_lit_long(x, (int64_t)TWO_53));
  return dp_sx_fn2(x, "/", dp_sx_cast(x, bits, dp_type_of(DP_T_DOUBLE), false, at),
                   lit_double(x, TWO_53, at));
}

Spark__Connect__Expression *dp_sx_datagen_column(dp_sx *x, const dp_table_def *t, int i,
                                                 int64_t seed, const char *row,
                                                 Spark__Connect__Expression *clock_us) {
  const char *col = t->schema.cols[i].name;
  const dp_type *ty = t->schema.cols[i].type;
  dp_span at = t->cols[i].span;
  const char *kind = field_opt(x, t, col, "kind");
  int64_t key = seed * 1000003 + i;  /* one stream per column */
  Spark__Connect__Expression *v = NULL;
  if (kind && !strcasecmp(kind, "sequence")) {
    const char *start = field_opt(x, t, col, "start");
    v = dp_sx_fn2(x, "+", dp_sx_lit_long(x, start ? strtoll(start, NULL, 10) : 0),
                  dp_sx_col(x, row));
    return dp_sx_cast(x, v, ty, false, at);
  }
  const char *mn = field_opt(x, t, col, "min"), *mx = field_opt(x, t, col, "max");
  switch (ty->kind) {
  case DP_T_BOOLEAN:
    v = dp_sx_fn2(x, "<", uniform(x, row, key, at), lit_double(x, 0.5, at));
    break;
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT: {
    static const int64_t lo[] = {[DP_T_TINYINT] = INT8_MIN, [DP_T_SMALLINT] = INT16_MIN,
                                 [DP_T_INT] = INT32_MIN, [DP_T_BIGINT] = INT64_MIN};
    static const int64_t hi[] = {[DP_T_TINYINT] = INT8_MAX, [DP_T_SMALLINT] = INT16_MAX,
                                 [DP_T_INT] = INT32_MAX, [DP_T_BIGINT] = INT64_MAX};
    Spark__Connect__Expression *h =
        dp_sx_fn2(x, "xxhash64", dp_sx_col(x, row), dp_sx_lit_long(x, key));
    int64_t a = mn ? strtoll(mn, NULL, 10) : lo[ty->kind];
    int64_t b = mx ? strtoll(mx, NULL, 10) : hi[ty->kind];
    if (b < a) {
      dp_sx_refuse(x, at, "table `%s`: 'fields.%s.min' is above 'fields.%s.max'", t->name, col,
                   col);
      return NULL;
    }
    /* the hash is uniform over all of BIGINT: a range that wide takes it as is */
    if ((a < 0 && b > INT64_MAX + a) || b - a == INT64_MAX)
      v = h;
    else
      v = dp_sx_fn2(x, "+", dp_sx_lit_long(x, a),
                    dp_sx_fn2(x, "pmod", h, dp_sx_lit_long(x, b - a + 1)));
    break;
  }
  case DP_T_FLOAT:
  case DP_T_DOUBLE:
  case DP_T_DECIMAL: {
    double a = mn ? strtod(mn, NULL) : 0, b = mx ? strtod(mx, NULL) : 1;
    if (!mx && ty->kind == DP_T_DECIMAL) {
      b = 1;
      for (int k = 0; k < ty->precision - ty->scale; k++) b *= 10;
    }
    v = dp_sx_fn2(x, "+", lit_double(x, a, at),
                  dp_sx_fn2(x, "*", uniform(x, row, key, at), lit_double(x, b - a, at)));
    /* TRY: a value rounded up past the type's bound is NULL, not a failed query */
    v = dp_sx_cast(x, v, ty, true, at);
    break;
  }
  case DP_T_STRING:
  case DP_T_BYTES: {
    const char *len = field_opt(x, t, col, "length");
    int64_t length = len ? strtoll(len, NULL, 10) : 100;
    if (ty->length > 0 && length > (int64_t)ty->length) length = ty->length;
    if (length < 0) length = 0;
    if (length > 1000000) {
      dp_sx_refuse(x, at, "table `%s`: 'fields.%s.length' is above 1000000", t->name, col);
      return NULL;
    }
    int64_t chars = ty->kind == DP_T_BYTES ? 2 * length : length;
    /* hex digits of SHA-256 of the row's hash, repeated to the length */
    Spark__Connect__Expression *h =
        dp_sx_fn2(x, "xxhash64", dp_sx_col(x, row), dp_sx_lit_long(x, key));
    Spark__Connect__Expression *hex =
        dp_sx_fn2(x, "sha2", dp_sx_cast(x, h, dp_type_of(DP_T_STRING), false, at),
                  dp_sx_lit_int(x, 256));
    v = dp_sx_fn3(x, "substring",
                  dp_sx_fn2(x, "repeat", hex, dp_sx_lit_int(x, (int32_t)(chars / 64 + 1))),
                  dp_sx_lit_int(x, 1), dp_sx_lit_int(x, (int32_t)chars));
    if (ty->kind == DP_T_BYTES) v = dp_sx_fn1(x, "unhex", v);
    break;
  }
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ:
  case DP_T_DATE: {
    int64_t past = 0;
    const char *mp = field_opt(x, t, col, "max-past");
    if (mp && dp_parse_duration(mp, &past) != DIPPER_OK) {
      dp_sx_refuse(x, at, "table `%s`: 'fields.%s.max-past' is not a duration ('5 s')", t->name,
                   col);
      return NULL;
    }
    Spark__Connect__Expression *us = clock_us;
    if (past > 0)
      us = dp_sx_fn2(x, "-", us,
                     dp_sx_cast(x, dp_sx_fn2(x, "*", uniform(x, row, key, at),
                                             dp_sx_lit_long(x, past + 1)),
                                dp_type_of(DP_T_BIGINT), false, at));
    v = dp_sx_fn1(x, "timestamp_micros", us);
    break;
  }
  default:
    dp_sx_refuse(x, at,
                 "table `%s`: a datagen on Spark makes scalar columns (numbers, strings, "
                 "bytes, booleans, dates, timestamps), not `%s`; declare it with a scalar type",
                 t->name, col);
    return NULL;
  }
  if (!v) return NULL;
  if (ty->kind != DP_T_FLOAT && ty->kind != DP_T_DOUBLE && ty->kind != DP_T_DECIMAL)
    v = dp_sx_cast(x, v, ty, false, at);
  const char *nr = field_opt(x, t, col, "null-rate");
  double rate = nr ? strtod(nr, NULL) : 0;
  if (rate > 0)
    v = dp_sx_fn2(x, "when", dp_sx_fn2(x, ">=", uniform(x, row, key + 500009, at), lit_double(x, rate, at)),
                  v);
  return v;
}

static int datagen_scan(dp_sx *x, const dp_plan *p, dp_srel *out) {
  const dp_table_def *t = p->u.scan.table;
  const char *rps = opt(t, "rows-per-second");
  double r = rps ? strtod(rps, NULL) : 10000.0; /* the embedded engine's default rate */
  if (!(r >= 1) || r > 1e12 || r != (double)(int64_t)r)
    return dp_sx_refuse(x, opt_span(t, "rows-per-second"),
                        "table `%s`: Spark's rate source makes a whole number of rows per second "
                        "(1 or more), not '%s'",
                        t->name, rps ? rps : "");
  const char *seed_text = opt(t, "seed");
  /* without a seed the values change from run to run, as on the embedded engine */
  int64_t seed = seed_text ? strtoll(seed_text, NULL, 10) : (int64_t)time(NULL);
  kv_list o = {0};
  kv_add(&o, "rowsPerSecond", dp_sx_printf(x, "%lld", (long long)r));
  Spark__Connect__Relation *rd = dp_sx_read_source(x, "rate", NULL, o.n, o.kv, 0, NULL, true);
  if (!rd) return failed(x);
  int nc = t->schema.ncols;
  int relno = dp_sx_relno(x);
  const char **names = dp_sx_colnames(x, relno, p->schema.ncols);
  Spark__Connect__Expression **e = dp_sx_alloc(x, (size_t)(nc ? nc : 1) * sizeof *e);
  if (!names || !e) return failed(x);
  int k = 0;
  bool ok = true;
  for (int i = 0; i < nc && k < p->schema.ncols; i++) {
    if (t->cols[i].kind == DP_CK_COMPUTED) continue;
    if (t->cols[i].kind != DP_CK_PHYSICAL) {
      dp_sx_refuse(x, t->cols[i].span, "table `%s`: datagen has no metadata column `%s`", t->name,
                   t->schema.cols[i].name);
      ok = false;
      continue;
    }
    /* the rate's `value` numbers the rows, its `timestamp` is the clock */
    Spark__Connect__Expression *clock = dp_sx_fn1(x, "unix_micros", dp_sx_col(x, "timestamp"));
    ok &= (e[k] = dp_sx_alias(x, dp_sx_datagen_column(x, t, i, seed, "value", clock), names[k])) != NULL;
    k++;
  }
  if (!ok) return failed(x);
  out->rel = dp_sx_project(x, rd, k, e);
  out->ncols = k;
  out->names = names;
  return out->rel ? DIPPER_OK : failed(x);
}

/* ---- records parsed by a format (kafka, socket) ---- */

/* The Avro schema text of the columns of s with keep[i] (NULL: all): what
** the embedded engine writes and reads (formats/avro.h), so that both
** engines agree byte for byte.  NULL on a refusal (a type without an Avro
** form, at its column) or out of memory. */
static const char *avro_schema(dp_sx *x, const dp_table_def *t, const dp_schema *s,
                               const bool *keep) {
  dp_buf b = DP_BUF_INIT;
  int bad = -1;
  char why[256] = "";
  int rc = dp_avro_schema_json(s, keep, &b, &bad, why, sizeof why);
  const char *text = rc == DIPPER_OK && !b.oom ? dp_sx_strdup(x, dp_buf_cstr(&b)) : NULL;
  dp_buf_free(&b);
  if (rc == DIPPER_UNSUPPORTED) {
    int col = bad >= 0 && bad < s->ncols ? dp_schema_find(&t->schema, s->cols[bad].name) : -1;
    dp_sx_refuse(x, col >= 0 && t->cols ? t->cols[col].span : t->with_span,
                 "table `%s`: column `%s` has no Avro form (%s); declare another type or use "
                 "'format' = 'json'",
                 t->name, bad >= 0 && bad < s->ncols ? s->cols[bad].name : "?", why);
    return NULL;
  }
  if (!text) dp_sx_nomem(x);
  return text;
}

/* 'dipper.bad-records' of a table Spark parses: fail (the default) or skip;
** Spark has no dead-letter file. */
static bool is_true(const char *v) { return v && !strcasecmp(v, "true"); }

static int bad_records(dp_sx *x, const dp_table_def *t, bool *skip) {
  const char *bad = opt(t, "dipper.bad-records");
  *skip = bad && !strcasecmp(bad, "skip");
  /* Flink's own switch for the same thing, as connectors/records.c reads it */
  if (!bad)
    *skip = is_true(opt(t, "json.ignore-parse-errors")) || is_true(opt(t, "csv.ignore-parse-errors")) ||
            is_true(opt(t, "value.json.ignore-parse-errors")) ||
            is_true(opt(t, "value.csv.ignore-parse-errors"));
  if (bad && !strcasecmp(bad, "dead-letter"))
    return dp_sx_refuse(x, opt_span(t, "dipper.bad-records"),
                        "table `%s`: Spark has no dead-letter file for bad records; use "
                        "'dipper.bad-records' = 'skip' or 'fail'",
                        t->name);
  return DIPPER_OK;
}

/* The corrupt-record field a PERMISSIVE from_json / from_csv fills with the
** text of a record it could not read (json_parsed() drops those rows). */
#define CORRUPT_FIELD "_dp_corrupt_record"

/* The columns of s with keep[i], parsed from `in` (Spark's binary key or
** value) by format fmt, with 'dipper.bad-records' as the embedded engine
** has it: FAILFAST (fail, the default: the query fails with Spark's
** malformed-record error) or PERMISSIVE when bad records are skipped.
** from_json / from_csv with the DDL schema (skipping: plus CORRUPT_FIELD,
** Spark's columnNameOfCorruptRecord), from_avro with the Avro schema (a bad
** record then parses to a struct of NULLs, which avro_parsed() tells
** apart), or the bytes as they are for raw (STRING: as text).  NULL on a
** refusal. */
static Spark__Connect__Expression *parse_record(dp_sx *x, const dp_table_def *t, const char *fmt,
                                                const dp_schema *s, const bool *keep,
                                                Spark__Connect__Expression *in, bool skip) {
  if (!strcasecmp(fmt, "raw")) {
    for (int i = 0; i < s->ncols; i++)
      if (keep[i] && s->cols[i].type->kind == DP_T_BYTES) return in;
    return dp_sx_cast(x, in, dp_type_of(DP_T_STRING), false, t->span);
  }
  if (!strcasecmp(fmt, "avro")) {
    const char *schema = avro_schema(x, t, s, keep);
    if (!schema) return NULL;
    Spark__Connect__Expression *kv[2] = {dp_sx_lit_string(x, "mode"),
                                         dp_sx_lit_string(x, skip ? "PERMISSIVE" : "FAILFAST")};
    return dp_sx_fn3(x, "from_avro", in, dp_sx_lit_string(x, schema), dp_sx_fn(x, "map", 2, kv));
  }
  const char *ddl = dp_sx_schema_ddl(x, s, keep, t->span);
  if (!ddl) return NULL;
  if (skip) ddl = dp_sx_printf(x, "%s%s`" CORRUPT_FIELD "` STRING", ddl, *ddl ? ", " : "");
  Spark__Connect__Expression *kv[4] = {
      dp_sx_lit_string(x, "mode"), dp_sx_lit_string(x, skip ? "PERMISSIVE" : "FAILFAST"),
      dp_sx_lit_string(x, "columnNameOfCorruptRecord"), dp_sx_lit_string(x, CORRUPT_FIELD)};
  return dp_sx_fn3(x, strcasecmp(fmt, "csv") ? "from_json" : "from_csv",
                   dp_sx_cast(x, in, dp_type_of(DP_T_STRING), false, t->span),
                   ddl ? dp_sx_lit_string(x, ddl) : NULL, dp_sx_fn(x, "map", skip ? 4 : 2, kv));
}

/* True where the PERMISSIVE from_avro in column `st` (the columns of s with
** keep[i]) read a record: some field is not NULL, or the bytes in `col` are
** those of the record whose every field is NULL (one zero byte per union
** branch; possible only when every column is nullable). */
static Spark__Connect__Expression *avro_parsed(dp_sx *x, const dp_schema *s, const bool *keep,
                                               const char *st, const char *col) {
  Spark__Connect__Expression *ok = NULL;
  int n = 0;
  bool all_nullable = true;
  for (int i = 0; i < s->ncols; i++) {
    if (!keep[i]) continue;
    n++;
    all_nullable &= !s->cols[i].type->not_null;
    Spark__Connect__Expression *v =
        dp_sx_fn1(x, "isnotnull", dp_sx_col(x, dp_sx_printf(x, "%s.`%s`", st, s->cols[i].name)));
    ok = ok ? dp_sx_fn2(x, "or", ok, v) : v;
  }
  if (all_nullable && n > 0) {
    char *zeros = dp_sx_alloc(x, 2 * (size_t)n + 1);
    if (!zeros) return NULL;
    memset(zeros, '0', 2 * (size_t)n);
    ok = dp_sx_fn2(x, "or", ok,
                   dp_sx_fn2(x, "<=>", dp_sx_fn1(x, "hex", dp_sx_col(x, col)),
                             dp_sx_lit_string(x, zeros)));
  }
  return ok ? ok : dp_sx_lit_bool(x, true);
}

/* True where the PERMISSIVE from_json / from_csv in column `st` read the
** record (its corrupt-record field is NULL). */
static Spark__Connect__Expression *text_parsed(dp_sx *x, const char *st) {
  return dp_sx_fn1(x, "isnull", dp_sx_col(x, dp_sx_printf(x, "%s.`" CORRUPT_FIELD "`", st)));
}

/* With skipped bad records, does format fmt leave a mark to drop rows by? */
static bool marks_bad(const char *fmt) {
  return !strcasecmp(fmt, "json") || !strcasecmp(fmt, "csv") || !strcasecmp(fmt, "avro");
}

/* True where the record in `st` (parsed by fmt from column `col`) was read. */
static Spark__Connect__Expression *record_parsed(dp_sx *x, const char *fmt, const dp_schema *s,
                                                 const bool *keep, const char *st, const char *col) {
  return !strcasecmp(fmt, "avro") ? avro_parsed(x, s, keep, st, col) : text_parsed(x, st);
}

/* Is 'key.fields' ("a;b") naming column `name` (case-insensitive)? */
static bool in_key_fields(const char *fields, const char *name) {
  for (const char *p = fields; p && *p;) {
    size_t len = strcspn(p, ";");
    if (strlen(name) == len && !strncasecmp(name, p, len)) return true;
    p += len + (p[len] == ';');
  }
  return false;
}

/* How the columns of a kafka, socket or kinesis table come out of Spark's record. */
typedef struct stream_cols {
  bool kafka, kinesis;
  bool binary;          /* the record is bytes (kafka, kinesis), not a line of text */
  const char *value_col;/* the record's value column: value, or kinesis's data */
  bool skip;            /* bad records skipped ('dipper.bad-records') */
  const char *fmt;      /* the value's format */
  const char *kfmt;     /* the key's ('key.format') */
  int nc;               /* the table's columns */
  bool *keep;           /* the value's columns */
  bool *key;            /* the key's ('value.fields-include' = 'EXCEPT_KEY') */
  dp_schema ks;         /* the table's columns, the key's named less 'key.fields-prefix' */
  int nphys, nkey;      /* how many in keep, in key */
  dp_schema kso;        /* the key's record, in 'key.fields' order */
  bool *kall;           /* all of kso */
  bool raw, raw_key;    /* the value, the key read as they are */
} stream_cols;

/* The value formats Spark's source is parsed from: json, csv, raw, and avro
** on kafka and kinesis. */
static int check_value_format(dp_sx *x, const dp_table_def *t, const stream_cols *sc) {
  const char *fmt = sc->fmt;
  bool binary = sc->binary;
  if (strcasecmp(fmt, "json") && strcasecmp(fmt, "csv") && strcasecmp(fmt, "raw") &&
      (!binary || strcasecmp(fmt, "avro")))
    return dp_sx_refuse(x, t->with_span,
                        "table `%s`: Spark's %s source gives the record as %s; dipper parses "
                        "json, csv%s and raw there, not '%s'",
                        t->name, t->connector, binary ? "bytes" : "lines of text",
                        binary ? ", avro" : "", fmt);
  return DIPPER_OK;
}

/* The options of Spark's kafka, kinesis or socket source. */
static int source_options(dp_sx *x, const dp_table_def *t, const stream_cols *sc, kv_list *o) {
  if (sc->kafka) return kafka_options(x, t, o);
  if (sc->kinesis) {
    kinesis_options(x, t, o, true);
    return x->rc;
  }
  kv_add(o, "host", opt(t, "hostname"));
  kv_add(o, "port", opt(t, "port"));
  return DIPPER_OK;
}

/* keep: the value's columns; key: the key's ('value.fields-include' =
   'EXCEPT_KEY': the 'key.fields' columns come from Spark's `key`, their
   names there less 'key.fields-prefix'; with 'ALL' the value holds all). */
static int split_value_and_key(dp_sx *x, const dp_table_def *t, stream_cols *sc) {
  int nc = sc->nc;
  sc->keep = dp_sx_alloc(x, (size_t)(nc ? nc : 1));
  sc->key = dp_sx_alloc(x, (size_t)(nc ? nc : 1));
  sc->ks = (dp_schema){nc, dp_sx_alloc(x, (size_t)(nc ? nc : 1) * sizeof *sc->ks.cols)};
  if (!sc->keep || !sc->key || !sc->ks.cols) return failed(x);
  const char *fields = opt(t, "key.fields"), *incl = opt(t, "value.fields-include");
  const char *prefix = opt(t, "key.fields-prefix");
  size_t plen = prefix ? strlen(prefix) : 0;
  bool except_key = sc->kafka && fields && incl && !strcasecmp(incl, "EXCEPT_KEY");
  for (int i = 0; i < nc; i++) {
    sc->ks.cols[i] = t->schema.cols[i];
    if (t->cols[i].kind != DP_CK_PHYSICAL) continue;
    if (except_key && in_key_fields(fields, t->schema.cols[i].name)) {
      sc->key[i] = true;
      sc->nkey++;
      if (plen && !strncmp(sc->ks.cols[i].name, prefix, plen)) sc->ks.cols[i].name += plen;
    } else {
      sc->keep[i] = true;
      sc->nphys++;
    }
  }
  return DIPPER_OK;
}

/* The key's format, and its record: its fields in 'key.fields' order (Flink's
   key format; csv and avro keys are positional), as the embedded engine reads them. */
static int key_record(dp_sx *x, const dp_table_def *t, stream_cols *sc) {
  const char *kfmt = opt(t, "key.format");
  if (!kfmt) kfmt = "json";
  sc->kfmt = kfmt;
  int nkey = sc->nkey;
  if (nkey > 0 && strcasecmp(kfmt, "json") && strcasecmp(kfmt, "csv") &&
      strcasecmp(kfmt, "raw") && strcasecmp(kfmt, "avro"))
    return dp_sx_refuse(x, opt_span(t, "key.format"),
                        "table `%s`: dipper parses a kafka key on Spark as json, csv, avro or "
                        "raw, not '%s'",
                        t->name, kfmt);
  sc->kso = (dp_schema){0, dp_sx_alloc(x, (size_t)(nkey ? nkey : 1) * sizeof *sc->kso.cols)};
  sc->kall = dp_sx_alloc(x, (size_t)(nkey ? nkey : 1));
  if (!sc->kso.cols || !sc->kall) return failed(x);
  const char *fields = opt(t, "key.fields");
  for (const char *f = fields; nkey > 0 && f && *f;) {
    size_t len = strcspn(f, ";");
    for (int i = 0; i < sc->nc; i++)
      if (sc->key[i] && strlen(t->schema.cols[i].name) == len &&
          !strncasecmp(t->schema.cols[i].name, f, len) && sc->kso.ncols < nkey) {
        sc->kall[sc->kso.ncols] = true;
        sc->kso.cols[sc->kso.ncols++] = sc->ks.cols[i];
        break;
      }
    f += len + (f[len] == ';');
  }
  return DIPPER_OK;
}

/* A raw value is one column, a raw key too. */
static int check_raw(dp_sx *x, const dp_table_def *t, stream_cols *sc) {
  sc->raw = !strcasecmp(sc->fmt, "raw");
  if (sc->raw && sc->nphys != 1)
    return dp_sx_refuse(x, t->with_span, "table `%s`: a raw table has one column (the value)",
                        t->name);
  sc->raw_key = sc->nkey > 0 && !strcasecmp(sc->kfmt, "raw");
  if (sc->raw_key && sc->nkey != 1)
    return dp_sx_refuse(x, opt_span(t, "key.fields"),
                        "table `%s`: 'key.format' = 'raw' reads the key into one column; name "
                        "one in 'key.fields' or use 'key.format' = 'json'",
                        t->name);
  return DIPPER_OK;
}

/* With bad records skipped, the rows whose value or key could not be read
   are passed over.  (A message without a key gives NULL key columns.) */
static Spark__Connect__Relation *drop_bad_records(dp_sx *x, const dp_table_def *t, const stream_cols *sc,
                                                  Spark__Connect__Relation *rel) {
  bool mark_value = sc->skip && marks_bad(sc->fmt), mark_key = sc->skip && sc->nkey > 0 && marks_bad(sc->kfmt);
  if (!mark_value && !mark_key) return rel;
  Spark__Connect__Expression *keep_row = NULL;
  if (mark_value) keep_row = record_parsed(x, sc->fmt, &t->schema, sc->keep, "_v", sc->value_col);
  if (mark_key) {
    Spark__Connect__Expression *k = dp_sx_fn2(x, "or", dp_sx_fn1(x, "isnull", dp_sx_col(x, "key")),
                                              record_parsed(x, sc->kfmt, &sc->kso, sc->kall, "_k", "key"));
    keep_row = keep_row ? dp_sx_fn2(x, "and", keep_row, k) : k;
  }
  return dp_sx_filter(x, rel, keep_row);
}

/* Step 1: Spark's record, the value parsed into `_v` (the key into `_k`),
   the metadata kept.  NULL on a failure (x->rc). */
static Spark__Connect__Relation *read_records(dp_sx *x, const dp_table_def *t, const kv_list *o,
                                              const stream_cols *sc) {
  bool kafka = sc->kafka;
  Spark__Connect__Relation *rd = dp_sx_read_source(
      x, kafka ? "kafka" : sc->kinesis ? "aws-kinesis" : "socket", NULL, o->n, o->kv, 0, NULL, true);
  /* A tombstone (a NULL value) carries no row, as on the embedded engine.
     Tested on the raw value, before the parse: a filter on the parsed
     struct would be pushed under the projection and parse each value twice. */
  if (kafka) rd = dp_sx_filter(x, rd, dp_sx_fn1(x, "isnotnull", dp_sx_col(x, "value")));
  if (!rd) return NULL;
  Spark__Connect__Expression *parsed = parse_record(x, t, sc->fmt, &t->schema, sc->keep,
                                                    dp_sx_col(x, sc->value_col), sc->skip);
  if (!parsed) return NULL;
  /* dp_sx_project keeps the array: it lives in the arena, not on this stack */
  Spark__Connect__Expression **first = dp_sx_alloc(x, 8 * sizeof *first);
  if (!first) return NULL;
  int nfirst = 0;
  first[nfirst++] = dp_sx_alias(x, parsed, "_v");
  if (sc->nkey > 0) {
    Spark__Connect__Expression *pk = parse_record(x, t, sc->kfmt, &sc->kso, sc->kall, dp_sx_col(x, "key"),
                                                  sc->skip);
    if (!pk) return NULL;
    first[nfirst++] = dp_sx_alias(x, pk, "_k");
  }
  if (kafka)
    for (int i = 0; i < 6; i++) {
      static const char *const cols[] = {"key", "topic", "partition", "offset", "timestamp",
                                         "timestampType"};
      first[nfirst++] = dp_sx_col(x, cols[i]);
    }
  if (sc->kinesis)
    for (int i = 0; i < 3; i++) {
      static const char *const cols[] = {"partitionKey", "sequenceNumber",
                                         "approximateArrivalTimestamp"};
      first[nfirst++] = dp_sx_col(x, cols[i]);
    }
  Spark__Connect__Relation *rel = dp_sx_project(x, rd, nfirst, first);
  if (!rel) return NULL;
  return drop_bad_records(x, t, sc, rel);
}

/* Physical column i: a field of `_v` or `_k`, or the whole raw value or key. */
static Spark__Connect__Expression *physical_column(dp_sx *x, const dp_table_def *t, const stream_cols *sc,
                                                   int i) {
  bool from_key = sc->key[i];
  const char *st = from_key ? "_k" : "_v";
  const char *f = from_key ? sc->kfmt : sc->fmt;
  Spark__Connect__Expression *v;
  if (from_key ? sc->raw_key : sc->raw)
    v = dp_sx_col(x, st);
  else
    v = dp_sx_col(x, dp_sx_printf(x, "%s.`%s`", st, sc->ks.cols[i].name));
  /* Avro's types are fewer than dipper's (TINYINT and SMALLINT are int,
     CHAR(n) is string): the column gets its declared type */
  if (!strcasecmp(f, "avro")) v = dp_sx_cast(x, v, t->schema.cols[i].type, false, t->cols[i].span);
  return v;
}

/* Metadata column i, from the columns Spark's kafka or aws-kinesis source gives. */
static int metadata_column(dp_sx *x, const dp_table_def *t, const stream_cols *sc, int i,
                           Spark__Connect__Expression **out) {
  const dp_column_def *cd = &t->cols[i];
  const char *mk = cd->metadata_key ? cd->metadata_key : t->schema.cols[i].name;
  const char *m = sc->kafka ? kafka_meta(mk) : sc->kinesis ? kinesis_meta(mk) : NULL;
  if (!m)
    return dp_sx_refuse(x, cd->span, "table `%s`: the metadata column `%s` has no Spark form (%s)",
                        t->name, t->schema.cols[i].name,
                        sc->kinesis ? "the aws-kinesis connector gives timestamp, "
                                      "sequence-number and partition-key, no shard-id"
                                    : "kafka gives key, topic, partition, offset, timestamp, "
                                      "timestamp-type");
  Spark__Connect__Expression *v = dp_sx_col(x, m);
  if (!strcmp(m, "timestampType"))
    /* Spark gives Kafka's code (-1, 0, 1); dipper's kafka source its name */
    v = dp_sx_fn2(x, "try_element_at",
                  dp_sx_fn3(x, "array", dp_sx_lit_string(x, "NoTimestampType"),
                            dp_sx_lit_string(x, "CreateTime"),
                            dp_sx_lit_string(x, "LogAppendTime")),
                  dp_sx_fn2(x, "+", v, dp_sx_lit_int(x, 2)));
  const dp_type *ty = t->schema.cols[i].type;
  if (ty && ty->kind != DP_T_BYTES) v = dp_sx_cast(x, v, ty, false, cd->span);
  *out = v;
  return DIPPER_OK;
}

/* Step 2: the table's columns (computed ones aside) under the translator's names. */
static int table_columns(dp_sx *x, const dp_plan *p, const dp_table_def *t, const stream_cols *sc,
                         Spark__Connect__Relation *rel, dp_srel *out) {
  int nc = sc->nc;
  int relno = dp_sx_relno(x);
  const char **names = dp_sx_colnames(x, relno, p->schema.ncols);
  Spark__Connect__Expression **e = dp_sx_alloc(x, (size_t)(nc ? nc : 1) * sizeof *e);
  if (!names || !e) return failed(x);
  int k = 0;
  for (int i = 0; i < nc && k < p->schema.ncols; i++) {
    const dp_column_def *cd = &t->cols[i];
    if (cd->kind == DP_CK_COMPUTED) continue;
    Spark__Connect__Expression *v = NULL;
    if (cd->kind == DP_CK_PHYSICAL) {
      v = physical_column(x, t, sc, i);
    } else {
      int rc = metadata_column(x, t, sc, i, &v);
      if (rc != DIPPER_OK) return rc;
    }
    e[k] = dp_sx_alias(x, v, names[k]);
    if (!e[k]) return failed(x);
    k++;
  }
  out->rel = dp_sx_project(x, rel, k, e);
  out->ncols = k;
  out->names = names;
  return out->rel ? DIPPER_OK : failed(x);
}

int dp_sx_stream_scan(dp_sx *x, const dp_plan *p, dp_srel *out) {
  const dp_table_def *t = p->u.scan.table;
  if (!strcmp(t->connector, "datagen")) return datagen_scan(x, p, out);
  stream_cols sc = {0};
  sc.kafka = !strcmp(t->connector, "kafka");
  sc.kinesis = !strcmp(t->connector, "kinesis");
  if (sc.kinesis && kinesis_refused(x, t)) return failed(x);
  sc.binary = sc.kafka || sc.kinesis;
  sc.value_col = sc.kinesis ? "data" : "value";
  sc.fmt = t->format ? t->format : (sc.binary ? "json" : "csv");
  sc.nc = t->schema.ncols;
  int rc = check_value_format(x, t, &sc);
  if (rc != DIPPER_OK) return rc;
  kv_list o = {0};
  if (source_options(x, t, &sc, &o) != DIPPER_OK) return failed(x);
  if (bad_records(x, t, &sc.skip) != DIPPER_OK) return failed(x);
  if ((rc = split_value_and_key(x, t, &sc)) != DIPPER_OK) return rc;
  if ((rc = key_record(x, t, &sc)) != DIPPER_OK) return rc;
  if ((rc = check_raw(x, t, &sc)) != DIPPER_OK) return rc;
  Spark__Connect__Relation *rel = read_records(x, t, &o, &sc);
  if (!rel) return failed(x);
  return table_columns(x, p, t, &sc, rel, out);
}

/* ---- the streaming write ---- */

/* Is the server's version ("4.2.0", "4.2.0-preview1") at least major.minor? */
static bool version_at_least(const char *v, int major, int minor) {
  int a = 0, b = 0;
  if (!v || sscanf(v, "%d.%d", &a, &b) != 2) return false;
  return a > major || (a == major && b >= minor);
}

/* WriteStreamOperationStart's real_time_batch_duration (field 100 of the
** trigger oneof, a string) came with Spark 4.2, after the protocol dipper is
** built against (4.1): it goes out as an unknown field, which protobuf-c
** packs as given (tag, then the length-prefixed bytes). */
#define REAL_TIME_FIELD 100

static int set_real_time(dp_sx *x, Spark__Connect__WriteStreamOperationStart *w, const char *text) {
  size_t n = strlen(text);
  if (n > 127) return dp_sx_refuse(x, (dp_span){0, 0, 0, 0}, "internal: a real-time interval text of %zu bytes", n);
  uint8_t *data = dp_sx_alloc(x, n + 1);
  ProtobufCMessageUnknownField *f = dp_sx_alloc(x, sizeof *f);
  if (!data || !f) return failed(x);
  data[0] = (uint8_t)n; /* the length as a one-byte varint */
  memcpy(data + 1, text, n);
  f->tag = REAL_TIME_FIELD;
  f->wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
  f->len = n + 1;
  f->data = data;
  w->base.n_unknown_fields = 1;
  w->base.unknown_fields = f;
  /* the mode real-time queries run in; for the stateless queries it takes
     (stream_rules.c) update and append emit the same rows */
  w->output_mode = (char *)(uintptr_t)"update";
  return DIPPER_OK;
}

/* dipper.trigger: "processing-time 10 s", "available-now", "once",
** "real-time 5 s" (Spark 4.2 and later). */
static int set_trigger(dp_sx *x, Spark__Connect__WriteStreamOperationStart *w,
                       const dp_spark_stream_opts *so, dp_span at) {
  const char *trig = so ? so->trigger : NULL;
  if (!trig || !*trig) return DIPPER_OK;
  if (!strcasecmp(trig, "available-now")) {
    w->trigger_case = SPARK__CONNECT__WRITE_STREAM_OPERATION_START__TRIGGER_AVAILABLE_NOW;
    w->available_now = 1;
    return DIPPER_OK;
  }
  if (!strcasecmp(trig, "once")) {
    w->trigger_case = SPARK__CONNECT__WRITE_STREAM_OPERATION_START__TRIGGER_ONCE;
    w->once = 1;
    return DIPPER_OK;
  }
  if (!strncasecmp(trig, "processing-time", 15)) {
    int64_t us = 0;
    const char *d = trig + 15;
    while (*d == ' ') d++;
    if (dp_parse_duration(d, &us) != DIPPER_OK)
      return dp_sx_refuse(x, at, "dipper.trigger '%s': write 'processing-time 10 s'", trig);
    w->trigger_case = SPARK__CONNECT__WRITE_STREAM_OPERATION_START__TRIGGER_PROCESSING_TIME_INTERVAL;
    w->processing_time_interval = (char *)(uintptr_t)dp_sx_interval_text(x, us);
    return w->processing_time_interval ? DIPPER_OK : failed(x);
  }
  if (!strncasecmp(trig, "real-time", 9)) {
    int64_t us = 0;
    const char *d = trig + 9;
    while (*d == ' ') d++;
    if (dp_parse_duration(d, &us) != DIPPER_OK || us <= 0)
      return dp_sx_refuse(x, at, "dipper.trigger '%s': write 'real-time 5 s'", trig);
    if (!so->checking && !version_at_least(so->server_version, 4, 2))
      return dp_sx_refuse(x, at,
                          "dipper.trigger '%s': Spark's real-time mode is reachable through Spark "
                          "Connect from Spark 4.2 on, and the server runs Spark %s (an older "
                          "server would run the query with its default trigger instead); use "
                          "'processing-time %s' here",
                          trig, so->server_version ? so->server_version : "of unknown version", d);
    const char *text = dp_sx_interval_text(x, us);
    return text ? set_real_time(x, w, text) : failed(x);
  }
  return dp_sx_refuse(x, at,
                      "dipper.trigger '%s' has no Spark form: use 'processing-time <duration>', "
                      "'available-now', 'once' or 'real-time <duration>'",
                      trig);
}

/* The sink's physical columns as expressions over r, named as the table's. */
static int sink_columns(dp_sx *x, const dp_plan *sink, const dp_srel *r,
                        Spark__Connect__Expression ***cols, const char ***names, int *n) {
  const dp_table_def *t = sink->u.sink.table;
  int nc = t->schema.ncols;
  *cols = dp_sx_alloc(x, (size_t)(nc ? nc : 1) * sizeof **cols);
  *names = dp_sx_alloc(x, (size_t)(nc ? nc : 1) * sizeof **names);
  if (!*cols || !*names) return failed(x);
  const dp_plan *in = sink->inputs[0];
  int k = 0;
  for (int i = 0; i < nc; i++) {
    if (t->cols && (t->cols[i].kind == DP_CK_COMPUTED ||
                    (t->cols[i].kind == DP_CK_METADATA && t->cols[i].is_virtual)))
      continue;
    int src = sink->u.sink.col_map[i];
    const dp_type *ty = t->schema.cols[i].type;
    Spark__Connect__Expression *v;
    if (src < 0) {
      v = dp_sx_lit_null(x, ty, sink->span);
    } else {
      v = dp_sx_col(x, dp_sx_printf(x, "`%s`", r->names[src]));
      /* A TIMESTAMP (wall clock) is Spark's TIMESTAMP (an instant) inside a
         streaming plan once it carried a watermark (translate.c); the cast
         makes it TIMESTAMP_NTZ again, so that no sink writes it with a zone. */
      if (!dp_type_equal(in->schema.cols[src].type, ty) || ty->kind == DP_T_TIMESTAMP)
        v = dp_sx_cast(x, v, ty, false, sink->span);
    }
    (*names)[k] = t->schema.cols[i].name;
    (*cols)[k] = dp_sx_alias(x, v, t->schema.cols[i].name);
    if (!(*cols)[k]) return failed(x);
    k++;
  }
  *n = k;
  return DIPPER_OK;
}

static Spark__Connect__Expression *struct_of(dp_sx *x, int n, const char *const *names) {
  Spark__Connect__Expression **a = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *a);
  if (!a) return NULL;
  for (int i = 0; i < n; i++) a[i] = dp_sx_col(x, dp_sx_printf(x, "`%s`", names[i]));
  return dp_sx_fn(x, "struct", n, a);
}

/* to_json with dipper's timestamp text ("2024-01-01 00:00:00.000"), so that a
** consumer sees the same records from either engine. */
static Spark__Connect__Expression *serialize(dp_sx *x, const char *fmt, Spark__Connect__Expression *st) {
  /* TIMESTAMP is Spark's TIMESTAMP_NTZ, TIMESTAMP_LTZ its TIMESTAMP: both formats */
  /* and every key written, NULLs too, as dipper's JSON writer does */
  Spark__Connect__Expression *kv[6] = {
      dp_sx_lit_string(x, "timestampFormat"), dp_sx_lit_string(x, "yyyy-MM-dd HH:mm:ss.SSS"),
      dp_sx_lit_string(x, "timestampNTZFormat"), dp_sx_lit_string(x, "yyyy-MM-dd HH:mm:ss.SSS"),
      dp_sx_lit_string(x, "ignoreNullFields"), dp_sx_lit_string(x, "false")};
  Spark__Connect__Expression *opts = dp_sx_fn(x, "map", strcasecmp(fmt, "csv") ? 6 : 4, kv);
  return dp_sx_fn2(x, strcasecmp(fmt, "csv") ? "to_json" : "to_csv", st, opts);
}

/* The key or value (`what`) of a kafka record: the columns names[0..n) of
** the sink's rows, which hold the table's types, in format fmt.  avro:
** to_avro with the schema dp_avro_schema_json derives from those columns in
** that order (the embedded sink's bytes: dp_avro_encode_row).  NULL on a
** refusal or out of memory. */
static Spark__Connect__Expression *encode_record(dp_sx *x, const dp_table_def *t, const char *fmt,
                                                 const char *what, int n,
                                                 const char *const *names) {
  if (!strcasecmp(fmt, "raw")) {
    if (n != 1) {
      dp_sx_refuse(x, t->with_span, "table `%s`: a raw kafka %s is one column, not %d", t->name,
                   what, n);
      return NULL;
    }
    return dp_sx_col(x, dp_sx_printf(x, "`%s`", names[0]));
  }
  if (!strcasecmp(fmt, "json") || !strcasecmp(fmt, "csv"))
    return serialize(x, fmt, struct_of(x, n, names));
  if (strcasecmp(fmt, "avro")) {
    dp_sx_refuse(x, opt_span(t, !strcmp(what, "key") ? "key.format" : "format"),
                 "table `%s`: the kafka sink on Spark writes its %s as json, csv, avro or raw, "
                 "not '%s'",
                 t->name, what, fmt);
    return NULL;
  }
  dp_schema s = {n, dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *s.cols)};
  if (!s.cols) return NULL;
  for (int i = 0; i < n; i++) {
    int c = dp_schema_find(&t->schema, names[i]);
    if (c < 0) {
      dp_sx_nomem(x); /* names come from the table: cannot happen */
      return NULL;
    }
    s.cols[i] = t->schema.cols[c];
  }
  const char *schema = avro_schema(x, t, &s, NULL);
  return schema ? dp_sx_fn2(x, "to_avro", struct_of(x, n, names), dp_sx_lit_string(x, schema))
                : NULL;
}

Spark__Connect__Relation *dp_sx_kafka_records(dp_sx *x, const dp_table_def *t,
                                              Spark__Connect__Relation *rows, int n,
                                              const char *const *names) {
  const char *fmt = t->format ? t->format : "json";
  const char *kfmt = opt(t, "key.format");
  if (!kfmt) kfmt = "json";
  /* The key: 'key.fields' ("a;b", in that order), else the PRIMARY KEY
     columns, as the embedded sink picks it. */
  const char **kf = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *kf);
  const char **vf = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *vf);
  if (!kf || !vf) return NULL;
  int nk = 0, nv = 0;
  const char *fields = opt(t, "key.fields");
  if (fields) {
    char *f = dp_sx_strdup(x, fields);
    for (char *tok = f ? strtok(f, ";") : NULL; tok; tok = strtok(NULL, ";")) {
      int j = 0;
      while (j < n && strcasecmp(names[j], tok)) j++;
      if (j == n || nk == n) {
        dp_sx_refuse(x, opt_span(t, "key.fields"),
                     "table `%s`: key field `%s` is not a written column of the table", t->name,
                     tok);
        return NULL;
      }
      kf[nk++] = names[j];
    }
  } else {
    for (int i = 0; i < t->npk && nk < n; i++) kf[nk++] = t->schema.cols[t->pk[i]].name;
  }
  /* The value: the physical columns (writable metadata is no part of it),
     less the key's with 'value.fields-include' = 'EXCEPT_KEY'. */
  const char *incl = opt(t, "value.fields-include");
  bool except_key = incl && !strcasecmp(incl, "EXCEPT_KEY");
  for (int i = 0; i < n; i++) {
    int c = dp_schema_find(&t->schema, names[i]);
    if (c >= 0 && t->cols && t->cols[c].kind == DP_CK_METADATA) continue;
    bool is_key = false;
    for (int j = 0; j < nk; j++) is_key |= !strcasecmp(kf[j], names[i]);
    if (except_key && is_key) continue;
    vf[nv++] = names[i];
  }
  /* dp_sx_project keeps the array: it lives in the arena, not on this stack */
  Spark__Connect__Expression **e = dp_sx_alloc(x, 2 * sizeof *e);
  if (!e) return NULL;
  int ne = 0;
  e[ne++] = dp_sx_alias(x, encode_record(x, t, fmt, "value", nv, vf), "value");
  if (nk > 0) e[ne++] = dp_sx_alias(x, encode_record(x, t, kfmt, "key", nk, kf), "key");
  for (int i = 0; i < ne; i++)
    if (!e[i]) return NULL;
  return dp_sx_project(x, rows, ne, e);
}

/* The aws-kinesis connector's rows for table t: `data`, the physical
** columns in the table's format, and `partitionKey` as the embedded sink
** picks it: the `partition-key` metadata column, else the PARTITIONED BY
** columns, else the PRIMARY KEY, joined by 'sink.partitioner-field-delimiter'
** (a NULL as "null"), else a random key. */
static Spark__Connect__Relation *kinesis_records(dp_sx *x, const dp_table_def *t,
                                                 Spark__Connect__Relation *rows, int n,
                                                 const char *const *names) {
  const char *fmt = t->format ? t->format : "json";
  const char **vf = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *vf);
  Spark__Connect__Expression **parts = dp_sx_alloc(x, (size_t)(n + 2) * sizeof *parts);
  Spark__Connect__Expression **e = dp_sx_alloc(x, 2 * sizeof *e);
  if (!vf || !parts || !e) return NULL;
  int nv = 0, np = 0;
  const char *meta_key = NULL;
  for (int i = 0; i < n; i++) {
    int c = dp_schema_find(&t->schema, names[i]);
    if (c >= 0 && t->cols && t->cols[c].kind == DP_CK_METADATA) {
      const char *mk = t->cols[c].metadata_key ? t->cols[c].metadata_key : names[i];
      if (!strcasecmp(mk, "partition-key")) meta_key = names[i];
      continue;
    }
    vf[nv++] = names[i];
  }
  const char *delim = opt(t, "sink.partitioner-field-delimiter");
  parts[np++] = dp_sx_lit_string(x, delim ? delim : "|");
  int nk = t->npartition > 0 ? t->npartition : t->npk;
  const int *kc = t->npartition > 0 ? t->partition : t->pk;
  for (int i = 0; i < nk; i++)
    parts[np++] = dp_sx_fn2(
        x, "coalesce",
        dp_sx_cast(x, dp_sx_col(x, dp_sx_printf(x, "`%s`", t->schema.cols[kc[i]].name)),
                   dp_type_of(DP_T_STRING), false, t->span),
        dp_sx_lit_string(x, "null"));
  Spark__Connect__Expression *key =
      nk > 0 ? dp_sx_fn(x, "concat_ws", np, parts)
             : dp_sx_cast(x, dp_sx_fn(x, "rand", 0, NULL), dp_type_of(DP_T_STRING), false, t->span);
  if (meta_key)
    key = dp_sx_fn2(x, "coalesce", dp_sx_col(x, dp_sx_printf(x, "`%s`", meta_key)), key);
  e[0] = dp_sx_alias(x, key, "partitionKey");
  e[1] = dp_sx_alias(x, encode_record(x, t, fmt, "value", nv, vf), "data");
  if (!e[0] || !e[1]) return NULL;
  return dp_sx_project(x, rows, 2, e);
}

/* The names of the sink table's written columns (physical and writable
** metadata ones), in the table's order: the rows' names after sink_columns
** and after translate.c's sink projection alike. */
static const char **written_names(dp_sx *x, const dp_table_def *t, int *n) {
  const char **names = dp_sx_alloc(x, (size_t)(t->schema.ncols ? t->schema.ncols : 1) * sizeof *names);
  *n = 0;
  for (int i = 0; names && i < t->schema.ncols; i++) {
    if (t->cols && (t->cols[i].kind == DP_CK_COMPUTED ||
                    (t->cols[i].kind == DP_CK_METADATA && t->cols[i].is_virtual)))
      continue;
    names[(*n)++] = t->schema.cols[i].name;
  }
  return names;
}

Spark__Connect__Plan *dp_sx_kafka_write(dp_sx *x, const dp_table_def *t,
                                        Spark__Connect__Relation *rows) {
  int n = 0;
  const char **names = written_names(x, t, &n);
  const char *topic = opt(t, "topic");
  if (!topic || strchr(topic, ';')) {
    dp_sx_refuse(x, t->with_span, "table `%s`: a kafka sink writes to one 'topic'", t->name);
    return NULL;
  }
  Spark__Connect__Relation *records = names ? dp_sx_kafka_records(x, t, rows, n, names) : NULL;
  kv_list o = {0};
  kv_add(&o, "topic", topic);
  kafka_properties(x, t, &o);
  Spark__Connect__WriteOperation *w = dp_sx_alloc(x, sizeof *w);
  Spark__Connect__Command *cmd = dp_sx_alloc(x, sizeof *cmd);
  Spark__Connect__Plan *plan = dp_sx_alloc(x, sizeof *plan);
  if (!records || !w || !cmd || !plan) return NULL;
  spark__connect__write_operation__init(w);
  w->input = records;
  w->_source_case = SPARK__CONNECT__WRITE_OPERATION___SOURCE_SOURCE;
  w->source = (char *)(uintptr_t)"kafka";
  w->mode = SPARK__CONNECT__WRITE_OPERATION__SAVE_MODE__SAVE_MODE_APPEND;
  w->options = dp_sx_alloc(x, (size_t)o.n * sizeof *w->options);
  if (!w->options) return NULL;
  for (int i = 0; i < o.n; i++) {
    Spark__Connect__WriteOperation__OptionsEntry *en = dp_sx_alloc(x, sizeof *en);
    if (!en) return NULL;
    spark__connect__write_operation__options_entry__init(en);
    en->key = (char *)(uintptr_t)o.kv[2 * i];
    en->value = (char *)(uintptr_t)o.kv[2 * i + 1];
    w->options[w->n_options++] = en;
  }
  spark__connect__command__init(cmd);
  cmd->command_type_case = SPARK__CONNECT__COMMAND__COMMAND_TYPE_WRITE_OPERATION;
  cmd->write_operation = w;
  spark__connect__plan__init(plan);
  plan->op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_COMMAND;
  plan->command = cmd;
  return x->rc ? NULL : plan;
}

/* Options of a streaming file sink, as translate.c's batch write sets them:
** dipper's text of times ("2024-01-01 10:00:00.250", 'Z' added for
** TIMESTAMP_LTZ) with the first time column's digits, every JSON key written
** (NULLs too), CSV fields untrimmed and a header only when asked. */
static void file_sink_options(dp_sx *x, const dp_table_def *t, const char *format, kv_list *o) {
  bool json = !strcasecmp(format, "json"), csv = !strcasecmp(format, "csv");
  if (json) kv_add(o, "ignoreNullFields", "false");
  if (json || csv) {
    int prec = 3;
    for (int i = 0; i < t->schema.ncols; i++)
      if (dp_type_is_timestamp(t->schema.cols[i].type)) {
        prec = t->schema.cols[i].type->precision > 6 ? 6 : t->schema.cols[i].type->precision;
        break;
      }
    const char *frac = prec > 0 ? dp_sx_printf(x, ".%.*s", prec, "SSSSSS") : "";
    kv_add(o, "timestampNTZFormat", dp_sx_printf(x, "yyyy-MM-dd HH:mm:ss%s", frac));
    kv_add(o, "timestampFormat", dp_sx_printf(x, "yyyy-MM-dd HH:mm:ss%sXXX", frac));
  }
  if (csv) {
    const char *h = opt(t, "csv.header"), *v;
    kv_add(o, "header", h && !strcasecmp(h, "true") ? "true" : "false");
    kv_add(o, "ignoreLeadingWhiteSpace", "false");
    kv_add(o, "ignoreTrailingWhiteSpace", "false");
    if ((v = opt(t, "csv.field-delimiter"))) kv_add(o, "sep", strcmp(v, "\\t") ? v : "\t");
    if ((v = opt(t, "csv.null-literal"))) kv_add(o, "nullValue", v);
  }
}

/* dipper's Spark sink (handoff.h) for a 'callback' table: the key of this
** run, the table's name (for its messages and the progress's sink
** description) and how long it waits for the client's acknowledgement of a
** batch ('dipper.spark.handoff-timeout'). */
static int handoff_options(dp_sx *x, const dp_table_def *t, const dp_spark_stream_opts *so,
                           kv_list *o) {
  int64_t us = (int64_t)DP_HANDOFF_TIMEOUT_MS * 1000;
  const char *v = opt(t, "dipper.spark.handoff-timeout");
  if (v && (dp_parse_duration(v, &us) != DIPPER_OK || us < 1000))
    return dp_sx_refuse(x, opt_span(t, "dipper.spark.handoff-timeout"),
                        "table `%s`: 'dipper.spark.handoff-timeout' is how long Spark waits for "
                        "dipper to take a micro-batch, a duration of 1 ms or more ('60 s'), not "
                        "'%s'",
                        t->name, v);
  /* a check builds the command without running it: no run, no key yet */
  kv_add(o, "key", so && so->handoff_key ? so->handoff_key : "(made when the query starts)");
  kv_add(o, "name", t->name);
  kv_add(o, "timeout_ms", dp_sx_printf(x, "%lld", (long long)(us / 1000)));
  return x->rc;
}

static void put_options(dp_sx *x, Spark__Connect__WriteStreamOperationStart *w, const kv_list *o) {
  w->options = dp_sx_alloc(x, (size_t)(o->n ? o->n : 1) * sizeof *w->options);
  if (!w->options) return;
  for (int i = 0; i < o->n; i++) {
    Spark__Connect__WriteStreamOperationStart__OptionsEntry *en = dp_sx_alloc(x, sizeof *en);
    if (!en) return;
    spark__connect__write_stream_operation_start__options_entry__init(en);
    en->key = (char *)(uintptr_t)o->kv[2 * i];
    en->value = (char *)(uintptr_t)o->kv[2 * i + 1];
    w->options[w->n_options++] = en;
  }
}

int dp_spark_stream_start_plan(dp_spark_ctx *c, const dp_query_plan *q, const dp_plan *sink,
                               const dp_spark_stream_opts *so, Spark__Connect__Plan **out) {
  dp_sx sx;
  dp_sx *x = &sx;
  dp_sx_init(x, c, q);
  *out = NULL;
  if (!sink || sink->kind != DP_P_SINK || !sink->u.sink.table)
    return dp_sx_refuse(x, sink ? sink->span : (dp_span){0, 0, 0, 0},
                        "a streaming write starts from an INSERT");
  const dp_table_def *t = sink->u.sink.table;
  const char *conn = t->connector ? t->connector : "";
  const char *format = NULL;
  bool needs_checkpoint = false;
  if (!strcmp(conn, "kafka")) {
    format = "kafka";
    needs_checkpoint = true;
  } else if (!strcmp(conn, "filesystem")) {
    format = t->format ? t->format : "json";
    if (!strcasecmp(format, "raw")) format = "text";
    /* avro: Spark's "avro" data source (the spark-avro package, which
       scripts/spark-local loads), container files */
    if (strcasecmp(format, "json") && strcasecmp(format, "csv") && strcasecmp(format, "parquet") &&
        strcasecmp(format, "orc") && strcasecmp(format, "text") && strcasecmp(format, "avro"))
      return dp_sx_refuse(x, opt_span(t, "format"),
                          "table `%s`: Spark's file sink writes csv, json, parquet, orc, avro or "
                          "raw (text), not '%s'",
                          t->name, format);
    needs_checkpoint = true;
  } else if (!strcmp(conn, "kinesis")) {
    if (kinesis_refused(x, t)) return failed(x);
    format = "aws-kinesis";
    needs_checkpoint = true;
  } else if (!strcmp(conn, "console")) {
    format = "console";
  } else if (!strcmp(conn, "memory")) {
    format = "memory";
  } else if (!strcmp(conn, "blackhole")) {
    format = "noop";
  } else if (!strcmp(conn, "callback")) {
    /* foreachBatch from C: handoff.h.  Spark gives a temporary checkpoint
       only to its own console, memory, noop and foreach sinks. */
    format = DP_HANDOFF_CLASS;
    if (!(so && so->checking) && (!so || !so->checkpoint_dir || !so->checkpoint_dir[0]))
      return dp_sx_refuse(x, sink->span,
                          "INSERT INTO `%s`: a callback table on Spark is fed by dipper's own "
                          "Spark sink, which Spark starts only with a checkpoint: SET "
                          "'execution.checkpointing.dir' = '/path/to/checkpoints' before the "
                          "INSERT (a restart from it hands out a batch the callback did not "
                          "finish again, under the same batch id)",
                          t->name);
  } else {
    return dp_sx_refuse(x, sink->span,
                        "table `%s`: Spark's streaming writes go to kafka, kinesis (with "
                        "'dipper.spark.kinesis-format'), filesystem, console, memory, "
                        "blackhole or callback tables, not '%s'",
                        t->name, conn);
  }
  if (sink->inputs[0]->props.bounded)
    return dp_sx_refuse(x, sink->span,
                        "INSERT INTO `%s`: every input is bounded, and Spark starts a streaming "
                        "query only over a stream (kafka, socket, a filesystem table with "
                        "'source.monitor-interval', datagen "
                        "without 'number-of-rows'); run it in batch mode "
                        "('execution.runtime-mode' = 'batch')",
                        t->name);
  const char *ckdir = so ? so->checkpoint_dir : NULL;
  if (needs_checkpoint && (!ckdir || !*ckdir) && !(so && so->checking))
    return dp_sx_refuse(x, sink->span,
                        "INSERT INTO `%s` on Spark needs a checkpoint so that a restarted query "
                        "neither loses nor repeats rows: SET 'execution.checkpointing.dir' = "
                        "'/path/to/checkpoints' before the INSERT",
                        t->name);
  dp_srel r;
  int rc = dp_sx_plan(x, sink->inputs[0], &r);
  if (rc != DIPPER_OK) return rc;
  Spark__Connect__Expression **cols;
  const char **names;
  int n = 0;
  if (sink_columns(x, sink, &r, &cols, &names, &n) != DIPPER_OK) return failed(x);
  Spark__Connect__Relation *rows = dp_sx_project(x, r.rel, n, cols);
  if (!rows) return failed(x);

  Spark__Connect__WriteStreamOperationStart *w = dp_sx_alloc(x, sizeof *w);
  if (!w) return failed(x);
  spark__connect__write_stream_operation_start__init(w);
  kv_list o = {0};
  if (!strcmp(format, "kafka")) {
    rows = dp_sx_kafka_records(x, t, rows, n, names);
    const char *topic = opt(t, "topic");
    if (!topic || strchr(topic, ';'))
      return dp_sx_refuse(x, t->with_span, "table `%s`: a kafka sink writes to one 'topic'",
                          t->name);
    kv_add(&o, "topic", topic);
    kafka_properties(x, t, &o);
  } else if (!strcmp(format, "aws-kinesis")) {
    rows = kinesis_records(x, t, rows, n, names);
    kinesis_options(x, t, &o, false);
  } else if (!strcmp(format, DP_HANDOFF_CLASS)) {
    if (handoff_options(x, t, so, &o) != DIPPER_OK) return failed(x);
  } else if (!strcmp(conn, "filesystem")) {
    const char *path = opt(t, "path");
    if (!path) return dp_sx_refuse(x, t->with_span, "table `%s` has no 'path'", t->name);
    if (path[0] != '/' && !strstr(path, "://")) {
      /* the loopback server shares the client's file system; a relative
         path means the client's directory, as on the embedded engine */
      char cwd[4096];
      if (!getcwd(cwd, sizeof cwd))
        return dp_sx_refuse(x, opt_span(t, "path"), "table `%s`: cannot resolve the relative "
                                                    "path '%s'; write an absolute one",
                            t->name, path);
      path = dp_sx_printf(x, "%s/%s", cwd, path);
      if (!path) return failed(x);
    }
    file_sink_options(x, t, format, &o);
    w->sink_destination_case = SPARK__CONNECT__WRITE_STREAM_OPERATION_START__SINK_DESTINATION_PATH;
    w->path = (char *)(uintptr_t)path;
    if ((rc = dp_sx_partition_check(x, t)) != DIPPER_OK) return rc;
    if (t->npartition > 0) {
      /* the folders named as the embedded sink names them (translate_partition.c) */
      rows = dp_sx_partition_values(x, t, rows, n, names);
      w->partitioning_column_names = dp_sx_partition_names(x, t);
      if (!w->partitioning_column_names) return failed(x);
      w->n_partitioning_column_names = (size_t)t->npartition;
    }
  }
  if (!rows) return failed(x);
  /* Spark's memory sink cannot restart from a checkpoint (outside complete
     mode it refuses to): it runs on a temporary one, as its rows do not
     outlive the session anyway. */
  if (ckdir && *ckdir && strcmp(format, "memory") != 0)
    kv_add(&o, "checkpointLocation", dp_sx_printf(x, "%s/%s", ckdir, t->name));
  put_options(x, w, &o);
  w->input = rows;
  w->format = (char *)(uintptr_t)format;
  unsigned mode = dp_analyze_output_mode(q, sink);
  w->output_mode = (char *)(uintptr_t)(mode == DP_MODE_COMPLETE ? "complete"
                                       : mode == DP_MODE_UPDATE ? "update"
                                                                : "append");
  w->query_name = (char *)(uintptr_t)t->name;
  if (set_trigger(x, w, so, sink->span) != DIPPER_OK) return failed(x);

  Spark__Connect__Command *cmd = dp_sx_alloc(x, sizeof *cmd);
  Spark__Connect__Plan *plan = dp_sx_alloc(x, sizeof *plan);
  if (!cmd || !plan) return failed(x);
  spark__connect__command__init(cmd);
  cmd->command_type_case = SPARK__CONNECT__COMMAND__COMMAND_TYPE_WRITE_STREAM_OPERATION_START;
  cmd->write_stream_operation_start = w;
  spark__connect__plan__init(plan);
  plan->op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_COMMAND;
  plan->command = cmd;
  if (x->rc) return x->rc;
  *out = plan;
  return DIPPER_OK;
}
