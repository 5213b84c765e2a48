/*
** kafka_source.c — the `kafka` source, through librdkafka.
**
** Offsets are dipper's, not the consumer group's: the partitions of
** the topics ('topic' = 'a;b', or every topic matching 'topic-pattern') are
** assigned explicitly (at the first plan) at the offsets the startup mode
** gives, or a restored position, so a replay from a given position reads the
** same records.  The group is never joined; with 'properties.group.id' the
** offsets read are committed to it after a commit, at most every
** GROUP_COMMIT_MS and once at close (asynchronously, for other readers and
** for group-offsets; failures are logged): a commit a batch queued ahead of
** the fetches on the coordinator's broker, which answers one connection's
** requests in order, held the batches after it back.  Checkpoints:
** save_position writes each topic-partition's next offset, save_plan the end
** offsets of the planned batch, by topic name (see "positions and batch
** bounds" below); replay_plan makes the next plan read exactly to the logged
** ends.  Every broker call is sliced (kafka_int.h).  Each micro-batch is
** fixed before it is read.  The first plan (and a replayed one) asks the
** broker for every partition's high watermark and ends the batch there; every
** later plan moves the records queued to the partitions' held lists and ends
** the batch at the partition's end that the last fetch answer carried
** (rd_kafka_get_watermark_offsets: no round trip), or after the last record
** fetched if that is further, capped by max_rows and by the bounded end: a
** busy source plans without a round trip to the broker, a source caught up
** takes what was fetched, and partitions reading a backlog stay in step.
** Only when a partition has nothing fetched does the plan ask the broker (what
** was produced before the plan is in its batch, whatever the fetches' timing).
** The consumer queue writes a byte to a pipe when a record lands in it empty
** (rd_kafka_queue_io_event_enable); the run loop polls that pipe (wait_fd)
** instead of sleeping, so a record is planned as soon as it is fetched.  The
** consumer fetches ahead in the background; records at or past a
** partition's end are held (in order) for the next batch, and a partition
** whose held records pile up is paused until they are used, so memory stays
** bounded.  A partition whose end cannot be reached record by record (offsets
** taken by transaction markers or compaction) is finished by the consumer's
** end-of-partition event.
**
** Values are decoded with the table's format: 'json', 'csv' and 'avro' (one
** Avro binary datum per message, its schema derived from the columns)
** through records.h (the formats layer), 'raw' as the bytes of the one
** physical column.  A tombstone (NULL value) carries no row and is passed over,
** except under upsert-kafka (dp_kafka_source_open_upsert): there each record
** is a change of its key, +I with a value and -D for a tombstone (its key's
** columns decoded from the message key, the others NULL), the kind in the
** batch's change column, and a record without a key is a bad record.
** With 'value.fields-include' = 'EXCEPT_KEY' the 'key.fields' columns are
** decoded from the message key in 'key.format' (their names less
** 'key.fields-prefix'; a message without a key gives NULLs) and the others
** from the value; with 'ALL' (the default) the value holds every column.
** Metadata columns are filled from the message: topic, partition, offset,
** timestamp (TIMESTAMP_LTZ(3)), timestamp-type, headers (MAP<STRING, BYTES>);
** leader-epoch is NULL (librdkafka 2.0 does not report it).  Bad records
** follow 'dipper.bad-records', their place given as "topic t partition p
** offset o".
**
** Startup modes: earliest-offset (the default), latest-offset,
** group-offsets (the group's committed offsets, read once; a partition
** without one follows 'properties.auto.offset.reset', else it is an error),
** timestamp, specific-offsets (partitions not listed start at the earliest
** offset).  Bounded modes fix an end per partition when the source opens:
** latest-offset (the high watermark then), timestamp, specific-offsets (an
** unlisted partition ends at its high watermark then), group-offsets.
** Partitions created after the source opened are not read.
*/
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "connectors/kafka_int.h"
#include "connectors/records.h"
#include "core/compiler.h"
#include "core/grow.h"
#include "exec/changelog.h"
#include "formats/formats.h"

/* How long records the broker announced may take to arrive before the batch
** fails. */
#define STALL_TIMEOUT_MS 60000
/* Held records per partition before it is paused. */
#define HOLD_LIMIT 8192
/* Group commits (properties.group.id) at most this often. */
#define GROUP_COMMIT_MS 500

static const dp_span nowhere = {0, 0, 0, 0};

typedef enum meta_kind {
  META_NONE, /* a physical column: decoded from the value */
  META_TOPIC,
  META_PARTITION,
  META_OFFSET,
  META_TIMESTAMP,
  META_TIMESTAMP_TYPE,
  META_HEADERS,
  META_LEADER_EPOCH,
} meta_kind;

typedef struct kpart {
  int topic;          /* index into ks->topics */
  int32_t partition;
  int64_t start;      /* first offset of the current batch */
  int64_t pos;        /* next offset to hand out */
  int64_t end;        /* exclusive end of the planned batch */
  int64_t bound;      /* exclusive end of a bounded input; INT64_MAX: none */
  int64_t eof;        /* offset of the last end-of-partition event, -1: none */
  int64_t replay_end; /* replay_plan's end for the next batch */
  rd_kafka_message_t **held; /* records at or past `end`, in offset order */
  int nheld, held_head, held_cap;
  bool paused;
  bool other;         /* another split's (kafka_source_split): planned, never read here */
  int64_t stall_since_ms; /* when this partition last had records owed and none came; 0: not owed */
} kpart;

typedef enum kfmt_src { KEY_JSON, KEY_CSV, KEY_RAW, KEY_AVRO } kfmt_src;

typedef struct kafka_source {
  rd_kafka_t *rk;            /* the consumer: assigned, fetches */
  /* Metadata and offset queries go through a second handle, never assigned:
  ** a broker answers one connection's requests in order, and the consumer's
  ** fetch of a partition with nothing new waits fetch.wait.max.ms (500 ms)
  ** there, so on rk each plan's ListOffsets waited behind it. */
  rd_kafka_t *qk;
  rd_kafka_queue_t *queue;
  int ntopics;
  char **topics;
  int nparts;
  kpart *parts;
  bool bounded;
  bool raw;
  int raw_col;               /* the one physical column of format 'raw' */
  bool decoder_open;
  dp_record_decoder dec;
  /* 'value.fields-include' = 'EXCEPT_KEY': the 'key.fields' columns come
  ** from the message key, in 'key.format'. */
  bool *key_col;             /* per scan column; NULL when the key is not read */
  bool except_key;           /* the value holds no key column (EXCEPT_KEY) */
  bool upsert;               /* upsert-kafka: tombstones are -D rows of their key */
  kfmt_src key_fmt;
  int key_raw_col;
  /* The key's own record: the 'key.fields' columns in that order (Flink's
  ** key format: csv and avro keys are positional), named less
  ** 'key.fields-prefix'.  A key is decoded into key_rec, then each field goes
  ** to its scan column key_dest[k] (-1: a key field the scan does not read). */
  dp_schema key_schema;
  int *key_dest;
  dp_batch *key_rec;
  dp_json_decoder *key_json;
  dp_csv_decoder *key_csv;
  dp_avro_decoder *key_avro;
  dp_bad_records bad;
  meta_kind *meta;           /* per scan column */
  rd_kafka_message_t **msgs; /* consume_batch_queue's scratch */
  int msgs_cap;
  int64_t *high;             /* per partition: plan's high watermarks, the hooks' offsets */
  bool assigned;             /* the partitions are assigned (the first plan) */
  bool replay;               /* the next plan is replay_plan's */
  /* Offsets read are committed to 'properties.group.id' at each commit
  ** (asynchronously; the results come to commit_q); NULL: not. */
  rd_kafka_queue_t *commit_q;
  int64_t committed_ms;      /* when the last group commit was sent */
  bool commit_owed;          /* positions moved since it */
  bool planned;              /* a plan has run: later ones end at what is fetched */
  bool planning;             /* fetched_ends is moving the queue to the held lists */
  int wake[2];               /* the consumer queue's wake-up pipe; -1: none */
  /* Splits (parallel execution): this source is split `split` of `nsplits`
  ** and reads only the partitions not marked `other`. */
  int split, nsplits;
} kafka_source;

static meta_kind meta_of(const char *key) {
  static const struct {
    const char *key;
    meta_kind kind;
  } keys[] = {{"topic", META_TOPIC},         {"partition", META_PARTITION},
              {"offset", META_OFFSET},       {"timestamp", META_TIMESTAMP},
              {"timestamp-type", META_TIMESTAMP_TYPE}, {"headers", META_HEADERS},
              {"leader-epoch", META_LEADER_EPOCH}};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strcasecmp(keys[i].key, key) == 0) return keys[i].kind;
  return META_NONE;
}

static const char *topic_of(const dp_source *s, const kpart *p) {
  return ((const kafka_source *)s->state)->topics[p->topic];
}

/* A run-time error of the source's table: "table `t`: " and the message. */
static int kafka_fail(dp_source *s, int code, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;
static int kafka_fail(dp_source *s, int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return dp_error(s->diags, code, nowhere, "table `%s`: %s", s->table->name, msg);
}

static int interrupted(dp_source *s) {
  return kafka_fail(s, DIPPER_INTERRUPTED,
                    "interrupted (dipper_interrupt) while waiting for the Kafka broker");
}

/* Split 'a;b;c' into the topic list. */
static int add_topic(kafka_source *ks, const char *name, size_t len) {
  char **grown = realloc(ks->topics, (size_t)(ks->ntopics + 1) * sizeof *grown);
  if (!grown) return DIPPER_NOMEM;
  ks->topics = grown;
  char *copy = malloc(len + 1);
  if (!copy) return DIPPER_NOMEM;
  memcpy(copy, name, len);
  copy[len] = '\0';
  ks->topics[ks->ntopics++] = copy;
  return DIPPER_OK;
}

static int add_part(kafka_source *ks, int topic, int32_t partition) {
  kpart *grown = realloc(ks->parts, (size_t)(ks->nparts + 1) * sizeof *grown);
  if (!grown) return DIPPER_NOMEM;
  ks->parts = grown;
  kpart *p = &ks->parts[ks->nparts++];
  memset(p, 0, sizeof *p);
  p->topic = topic;
  p->partition = partition;
  p->bound = INT64_MAX;
  p->eof = -1;
  return DIPPER_OK;
}

static int cmp_topic(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The topics named by 'topic' or matched by 'topic-pattern', and the
** partitions of each, from the cluster's metadata. */
static int resolve_partitions(dp_source *s, kafka_source *ks) {
  const dp_table_def *t = s->table;
  const char *list = dp_table_option(t, "topic", NULL);
  const char *pattern = dp_table_option(t, "topic-pattern", NULL);
  const struct rd_kafka_metadata *md = NULL;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
  dp_kwait w = dp_kwait_start(s->db, DP_KAFKA_QUERY_TIMEOUT_MS);
  int why = DIPPER_TIMEOUT;
  for (int slice; (slice = dp_kwait_slice(&w, &why)) > 0;) {
    err = rd_kafka_metadata(ks->qk, 1, NULL, &md, slice);
    if (!dp_kafka_transient(err)) break;
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT) dp_kwait_nap(&w);
  }
  if (err && why == DIPPER_INTERRUPTED) return interrupted(s);
  if (err)
    return kafka_fail(s, DIPPER_CONNECT,
                      "cannot read the cluster's metadata from '%s': %s; is the broker "
                      "running? (scripts/kafka-local start)",
                      dp_table_option(t, "properties.bootstrap.servers", "?"), rd_kafka_err2str(err));
  int rc = DIPPER_OK;
  if (pattern) {
    regex_t re;
    /* Java's Pattern.matches: the whole name must match. */
    size_t plen = strlen(pattern);
    char *anchored = malloc(plen + 5);
    if (!anchored) {
      rd_kafka_metadata_destroy(md);
      return DIPPER_NOMEM;
    }
    snprintf(anchored, plen + 5, "^(%s)$", pattern);
    int rerr = regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB);
    free(anchored);
    if (rerr) {
      rd_kafka_metadata_destroy(md);
      return kafka_fail(s, DIPPER_OPTION,
                        "'topic-pattern' = '%s' is not a regular expression dipper "
                        "reads (POSIX extended); write e.g. 'orders-.*'",
                        pattern);
    }
    for (int i = 0; i < md->topic_cnt && rc == DIPPER_OK; i++) {
      const char *name = md->topics[i].topic;
      if (name[0] == '_' && name[1] == '_') continue; /* internal topics */
      if (regexec(&re, name, 0, NULL, 0) == 0) rc = add_topic(ks, name, strlen(name));
    }
    regfree(&re);
    if (rc == DIPPER_OK && ks->ntopics == 0)
      rc = kafka_fail(s, DIPPER_NAME,
                      "no topic matches 'topic-pattern' = '%s'; create one first or "
                      "fix the pattern",
                      pattern);
    if (rc == DIPPER_OK) qsort(ks->topics, (size_t)ks->ntopics, sizeof *ks->topics, cmp_topic);
  } else {
    for (const char *p = list; p && *p && rc == DIPPER_OK;) {
      size_t n = strcspn(p, ";");
      size_t a = 0, b = n;
      while (a < b && p[a] == ' ') a++;
      while (b > a && p[b - 1] == ' ') b--;
      if (b > a) rc = add_topic(ks, p + a, b - a);
      p += n + (p[n] == ';');
    }
  }
  for (int ti = 0; ti < ks->ntopics && rc == DIPPER_OK; ti++) {
    const struct rd_kafka_metadata_topic *mt = NULL;
    for (int i = 0; i < md->topic_cnt; i++)
      if (strcmp(md->topics[i].topic, ks->topics[ti]) == 0) mt = &md->topics[i];
    if (!mt || mt->err || mt->partition_cnt == 0) {
      rc = kafka_fail(s, DIPPER_NAME,
                      "topic '%s' does not exist on the cluster; create it (e.g. "
                      "scripts/kafka-local create-topic NAME 3) or fix 'topic'",
                      ks->topics[ti]);
      break;
    }
    /* Metadata lists partitions in no set order; read them by number. */
    int32_t maxp = -1;
    for (int i = 0; i < mt->partition_cnt; i++)
      if (mt->partitions[i].id > maxp) maxp = mt->partitions[i].id;
    for (int32_t id = 0; id <= maxp && rc == DIPPER_OK; id++)
      for (int i = 0; i < mt->partition_cnt; i++)
        if (mt->partitions[i].id == id) {
          rc = add_part(ks, ti, id);
          break;
        }
  }
  rd_kafka_metadata_destroy(md);
  return rc;
}

/* "partition:0,offset:42;partition:1,offset:300": the offset given for
** partition `partition`, or -1. */
static int64_t specific_offset(const char *spec, int32_t partition) {
  for (const char *p = spec; p && *p;) {
    long part = -1;
    long long off = -1;
    if (sscanf(p, " partition : %ld , offset : %lld", &part, &off) == 2 && part == partition)
      return off;
    const char *semi = strchr(p, ';');
    if (!semi) break;
    p = semi + 1;
  }
  return -1;
}

/* Every partition of the source, offsets unset (the caller frees it). */
static rd_kafka_topic_partition_list_t *part_list(const kafka_source *ks) {
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(ks->nparts);
  for (int i = 0; l && i < ks->nparts; i++)
    rd_kafka_topic_partition_list_add(l, ks->topics[ks->parts[i].topic], ks->parts[i].partition);
  return l;
}

/* The partitions this split reads (every one, unsplit), in the source's
** order, offsets unset (the caller frees it). */
static rd_kafka_topic_partition_list_t *own_list(const kafka_source *ks) {
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(ks->nparts);
  for (int i = 0; l && i < ks->nparts; i++)
    if (!ks->parts[i].other)
      rd_kafka_topic_partition_list_add(l, ks->topics[ks->parts[i].topic], ks->parts[i].partition);
  return l;
}

/* Call fn (offsets_for_times, committed) on the list, a slice at a time,
** until no answer is transient, the time is up or the handle is interrupted
** (then DIPPER_INTERRUPTED, with a diagnostic); `reset` is what each offset
** holds before a call (the timestamp asked for, or nothing).  *err is the
** list's error, else the first partition's, else none. */
static int ask_list(dp_source *s, kafka_source *ks, rd_kafka_topic_partition_list_t *l,
                    rd_kafka_resp_err_t (*fn)(rd_kafka_t *, rd_kafka_topic_partition_list_t *, int),
                    int64_t reset, rd_kafka_resp_err_t *err) {
  dp_kwait w = dp_kwait_start(s->db, DP_KAFKA_QUERY_TIMEOUT_MS);
  int why = DIPPER_TIMEOUT;
  *err = RD_KAFKA_RESP_ERR__TIMED_OUT;
  for (int slice; (slice = dp_kwait_slice(&w, &why)) > 0;) {
    for (int i = 0; i < l->cnt; i++) {
      l->elems[i].offset = reset;
      l->elems[i].err = RD_KAFKA_RESP_ERR_NO_ERROR;
    }
    *err = fn(ks->qk, l, slice);
    for (int i = 0; !*err && i < l->cnt; i++)
      if (l->elems[i].err) *err = l->elems[i].err;
    if (!dp_kafka_transient(*err)) return DIPPER_OK;
    if (*err != RD_KAFKA_RESP_ERR__TIMED_OUT) dp_kwait_nap(&w);
  }
  return why == DIPPER_INTERRUPTED ? interrupted(s) : DIPPER_OK;
}

/* Per partition, the high watermark (RD_KAFKA_OFFSET_END: for a
** read_committed consumer, the last stable offset) or the first offset
** (RD_KAFKA_OFFSET_BEGINNING), in one ListOffsets round: offsets_for_times
** honours its timeout, where query_watermark_offsets (librdkafka 2.0.2) may
** wait minutes for a broker that is down. */
static int end_offsets(dp_source *s, kafka_source *ks, int64_t which, int64_t *out) {
  rd_kafka_topic_partition_list_t *l = part_list(ks);
  if (!l) return DIPPER_NOMEM;
  rd_kafka_resp_err_t err;
  int rc = ask_list(s, ks, l, rd_kafka_offsets_for_times, which, &err);
  for (int i = 0; rc == DIPPER_OK && i < l->cnt; i++) {
    if (err || l->elems[i].offset < 0) {
      rd_kafka_resp_err_t e = l->elems[i].err ? l->elems[i].err : err;
      rc = kafka_fail(s, DIPPER_CONNECT, "cannot read the offsets of topic '%s' partition %d: %s",
                      l->elems[i].topic, (int)l->elems[i].partition,
                      e ? rd_kafka_err2str(e) : "no offset in the broker's answer");
      break;
    }
    out[i] = l->elems[i].offset;
  }
  rd_kafka_topic_partition_list_destroy(l);
  return rc;
}

/* Offsets by timestamp (ms) for every partition: the first offset whose
** timestamp is at or after ts, or the high watermark when none is. */
static int offsets_for_time(dp_source *s, kafka_source *ks, int64_t ts_ms, int64_t *out) {
  rd_kafka_topic_partition_list_t *l = part_list(ks);
  if (!l) return DIPPER_NOMEM;
  rd_kafka_resp_err_t err;
  int rc = ask_list(s, ks, l, rd_kafka_offsets_for_times, ts_ms, &err);
  if (rc == DIPPER_OK && err)
    rc = kafka_fail(s, DIPPER_CONNECT, "cannot look offsets up by timestamp: %s",
                    rd_kafka_err2str(err));
  for (int i = 0; i < ks->nparts && rc == DIPPER_OK; i++) out[i] = l->elems[i].offset;
  rd_kafka_topic_partition_list_destroy(l);
  int64_t *high = rc == DIPPER_OK ? malloc((size_t)ks->nparts * sizeof *high + 1) : NULL;
  if (rc == DIPPER_OK && !high) rc = DIPPER_NOMEM;
  if (rc == DIPPER_OK) rc = end_offsets(s, ks, RD_KAFKA_OFFSET_END, high);
  for (int i = 0; i < ks->nparts && rc == DIPPER_OK; i++)
    if (out[i] < 0) out[i] = high[i];
  free(high);
  return rc;
}

/* The group's committed offsets (group-offsets), -1 where none. */
static int committed_offsets(dp_source *s, kafka_source *ks, int64_t *out) {
  rd_kafka_topic_partition_list_t *l = part_list(ks);
  if (!l) return DIPPER_NOMEM;
  rd_kafka_resp_err_t err;
  int rc = ask_list(s, ks, l, rd_kafka_committed, RD_KAFKA_OFFSET_INVALID, &err);
  if (rc == DIPPER_OK && err)
    rc = kafka_fail(s, DIPPER_CONNECT,
                    "cannot read the committed offsets of group '%s': %s",
                    dp_table_option(s->table, "properties.group.id", "?"), rd_kafka_err2str(err));
  for (int i = 0; i < ks->nparts && rc == DIPPER_OK; i++)
    out[i] = l->elems[i].offset >= 0 ? l->elems[i].offset : -1;
  rd_kafka_topic_partition_list_destroy(l);
  return rc;
}

/* The error of a partition the group has no offset for (group-offsets
** without 'properties.auto.offset.reset'), raised when the partition is to
** be read from there: a restored position may make it moot. */
static int no_group_offset(dp_source *s, kafka_source *ks, const kpart *p) {
  return kafka_fail(s, DIPPER_DATA,
                    "group '%s' has no committed offset for topic '%s' partition %d; set "
                    "'properties.auto.offset.reset' = 'earliest' (or 'latest'), or use another "
                    "'scan.startup.mode'",
                    dp_table_option(s->table, "properties.group.id", "?"), ks->topics[p->topic],
                    (int)p->partition);
}

/* Start offsets by 'scan.startup.mode', clamped to what the partition holds. */

/* The offsets a 'scan.startup.mode' or 'scan.bounded.mode' names per
** partition (`prefix` is "scan.startup" or "scan.bounded"): by timestamp, the
** group's committed ones, or the specific ones; -1 where the mode names none. */
static int mode_offsets(dp_source *s, kafka_source *ks, const char *mode, const char *prefix,
                        int64_t *given) {
  const dp_table_def *t = s->table;
  char key[64];
  for (int i = 0; i < ks->nparts; i++) given[i] = -1;
  if (strcasecmp(mode, "timestamp") == 0) {
    snprintf(key, sizeof key, "%s.timestamp-millis", prefix);
    return offsets_for_time(s, ks, strtoll(dp_table_option(t, key, "0"), NULL, 10), given);
  }
  if (strcasecmp(mode, "group-offsets") == 0) return committed_offsets(s, ks, given);
  if (strcasecmp(mode, "specific-offsets") == 0) {
    snprintf(key, sizeof key, "%s.specific-offsets", prefix);
    for (int i = 0; i < ks->nparts; i++)
      given[i] = specific_offset(dp_table_option(t, key, ""), ks->parts[i].partition);
  }
  return DIPPER_OK;
}

static int startup_offsets(dp_source *s, kafka_source *ks) {
  const dp_table_def *t = s->table;
  const char *mode = dp_table_option(t, "scan.startup.mode", "earliest-offset");
  size_t n = (size_t)ks->nparts;
  int64_t *given = calloc(3 * n + 1, sizeof *given);
  if (!given) return DIPPER_NOMEM;
  int64_t *low = given + n, *high = given + 2 * n;
  int rc = DIPPER_OK;
  rc = mode_offsets(s, ks, mode, "scan.startup", given);
  if (rc == DIPPER_OK) rc = end_offsets(s, ks, RD_KAFKA_OFFSET_BEGINNING, low);
  if (rc == DIPPER_OK) rc = end_offsets(s, ks, RD_KAFKA_OFFSET_END, high);
  const char *reset = dp_table_option(t, "properties.auto.offset.reset", NULL);
  for (int i = 0; i < ks->nparts && rc == DIPPER_OK; i++) {
    kpart *p = &ks->parts[i];
    int64_t off = low[i];
    if (strcasecmp(mode, "latest-offset") == 0) {
      off = high[i];
    } else if (strcasecmp(mode, "group-offsets") == 0 && given[i] < 0) {
      if (reset && (strcasecmp(reset, "latest") == 0 || strcasecmp(reset, "largest") == 0 ||
                    strcasecmp(reset, "end") == 0))
        off = high[i];
      else if (!reset || !(strcasecmp(reset, "earliest") == 0 ||
                           strcasecmp(reset, "smallest") == 0 ||
                           strcasecmp(reset, "beginning") == 0))
        off = -1; /* no_group_offset, unless a restored position names it */
    } else if (given[i] >= 0) {
      off = given[i];
    }
    /* An offset past the end waits for records that may never come; one
    ** before the start names records retention has deleted. */
    if (off >= 0 && off > high[i]) off = high[i];
    if (off >= 0 && off < low[i]) off = low[i];
    p->start = p->pos = p->end = off;
  }
  free(given);
  return rc;
}

/* Ends by 'scan.bounded.mode', fixed now (never before the start: see
** assign). */
static int bounded_offsets(dp_source *s, kafka_source *ks) {
  const dp_table_def *t = s->table;
  const char *mode = dp_table_option(t, "scan.bounded.mode", "unbounded");
  if (strcasecmp(mode, "unbounded") == 0) return DIPPER_OK;
  ks->bounded = true;
  size_t n = (size_t)ks->nparts;
  int64_t *given = calloc(2 * n + 1, sizeof *given);
  if (!given) return DIPPER_NOMEM;
  int64_t *high = given + n;
  int rc = DIPPER_OK;
  rc = mode_offsets(s, ks, mode, "scan.bounded", given);
  if (rc == DIPPER_OK) rc = end_offsets(s, ks, RD_KAFKA_OFFSET_END, high);
  for (int i = 0; i < ks->nparts && rc == DIPPER_OK; i++) {
    int64_t end = given[i] >= 0 ? given[i] : high[i];
    if (end > high[i]) end = high[i]; /* records that do not exist yet are not waited for */
    ks->parts[i].bound = end;
  }
  free(given);
  return rc;
}

/* The results of the group commits made so far: a failure is noted, not
** raised (the group's offsets are for other readers and for group-offsets;
** dipper's own position is its checkpoint). */
static void drain_commits(kafka_source *ks, int timeout_ms) {
  rd_kafka_event_t *ev;
  while (ks->commit_q && (ev = rd_kafka_queue_poll(ks->commit_q, timeout_ms)) != NULL) {
    if (rd_kafka_event_type(ev) == RD_KAFKA_EVENT_OFFSET_COMMIT && rd_kafka_event_error(ev))
      dp_kafka_note(ks->rk, "committing offsets to group '%s' failed: %s",
                    rd_kafka_event_opaque(ev) ? (const char *)rd_kafka_event_opaque(ev) : "?",
                    rd_kafka_event_error_string(ev));
    rd_kafka_event_destroy(ev);
    timeout_ms = 0;
  }
}

/* rd_kafka_consumer_close may wait as long as the broker makes it (a group
** commit in flight to a broker that is down): close in the background and
** wait a little, in slices; whatever is left is dropped by destroy. */
static void close_consumer(dp_source *s, kafka_source *ks) {
  rd_kafka_queue_t *q = rd_kafka_queue_new(ks->rk);
  rd_kafka_error_t *e = q ? rd_kafka_consumer_close_queue(ks->rk, q) : NULL;
  dp_kwait w = dp_kwait_start(s->db, 2000);
  for (int slice; q && !e && !rd_kafka_consumer_closed(ks->rk) &&
                  (slice = dp_kwait_slice(&w, NULL)) > 0;) {
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, slice < 100 ? slice : 100);
    if (ev) rd_kafka_event_destroy(ev);
  }
  if (e) rd_kafka_error_destroy(e);
  if (q) rd_kafka_queue_destroy(q);
  drain_commits(ks, 0);
  if (ks->commit_q) rd_kafka_queue_destroy(ks->commit_q);
  dp_kafka_disown(ks->rk);
  rd_kafka_destroy_flags(ks->rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

static int commit_group(dp_source *s, kafka_source *ks);

static void kafka_source_close(dp_source *s) {
  kafka_source *ks = s->state;
  if (!ks) return;
  for (int i = 0; i < ks->nparts; i++) {
    kpart *p = &ks->parts[i];
    for (int j = p->held_head; j < p->nheld; j++) rd_kafka_message_destroy(p->held[j]);
    free(p->held);
  }
  if (ks->queue) {
    if (ks->wake[1] >= 0) rd_kafka_queue_io_event_enable(ks->queue, -1, NULL, 0);
    rd_kafka_queue_destroy(ks->queue);
  }
  for (int i = 0; i < 2; i++)
    if (ks->wake[i] >= 0) close(ks->wake[i]);
  if (ks->rk) {
    if (ks->commit_owed && !s->outputs_pending) {
      /* The last positions, which the interval held back: a short wait for
      ** the answer, so a broker that is down does not hold the stop (not
      ** when the sink's writes may be unacknowledged: outputs_pending). */
      (void)commit_group(s, ks);
      drain_commits(ks, 500);
    }
    close_consumer(s, ks);
  }
  if (ks->qk) {
    dp_kafka_disown(ks->qk);
    rd_kafka_destroy_flags(ks->qk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
  }
  if (ks->decoder_open) dp_record_decoder_close(&ks->dec);
  dp_json_decoder_free(ks->key_json);
  dp_csv_decoder_free(ks->key_csv);
  dp_avro_decoder_free(ks->key_avro);
  free(ks->key_col);
  free(ks->key_schema.cols);
  free(ks->key_dest);
  dp_batch_free(ks->key_rec);
  dp_bad_records_close(&ks->bad);
  for (int i = 0; i < ks->ntopics; i++) free(ks->topics[i]);
  free(ks->topics);
  free(ks->parts);
  free(ks->meta);
  free(ks->msgs);
  free(ks->high);
  free(ks);
  s->state = NULL;
}

/* Which scan columns are metadata and which, and the format's decoder. */
/* The key's columns ('key.fields') and their decoder, for EXCEPT_KEY. */
static int open_key(dp_source *s, kafka_source *ks) {
  const dp_table_def *t = s->table;
  const dp_schema *sc = s->schema;
  const char *fields = dp_table_option(t, "key.fields", "");
  const char *prefix = dp_table_option(t, "key.fields-prefix", "");
  size_t plen = strlen(prefix);
  int nfields = 1;
  for (const char *p = fields; *p; p++) nfields += *p == ';';
  ks->key_col = calloc((size_t)sc->ncols + 1, sizeof *ks->key_col);
  ks->key_schema.cols = malloc((size_t)nfields * sizeof *ks->key_schema.cols);
  ks->key_dest = malloc((size_t)nfields * sizeof *ks->key_dest);
  if (!ks->key_col || !ks->key_schema.cols || !ks->key_dest) return DIPPER_NOMEM;
  int nkey = 0, nread = 0;
  ks->key_raw_col = -1;
  for (const char *p = fields; *p;) {
    size_t len = strcspn(p, ";");
    /* the table's column (plan/connectors.c has checked that it is one) */
    int tc = -1;
    for (int i = 0; i < t->schema.ncols && tc < 0; i++)
      if (strlen(t->schema.cols[i].name) == len && strncasecmp(t->schema.cols[i].name, p, len) == 0)
        tc = i;
    if (tc >= 0) {
      int dest = -1;
      for (int i = 0; i < sc->ncols && dest < 0; i++)
        if (ks->meta[i] == META_NONE && strcasecmp(sc->cols[i].name, t->schema.cols[tc].name) == 0)
          dest = i;
      dp_field kc = t->schema.cols[tc];
      /* the key format names the field without the table's prefix */
      if (plen && strncmp(kc.name, prefix, plen) == 0) kc.name += plen;
      ks->key_schema.cols[nkey] = kc;
      ks->key_dest[nkey++] = dest;
      if (dest >= 0) {
        ks->key_col[dest] = true;
        ks->key_raw_col = dest;
        nread++;
      }
    }
    p += len + (p[len] == ';');
  }
  ks->key_schema.ncols = nkey;
  if (nread == 0) { /* the scan reads none of the key's columns */
    free(ks->key_col);
    ks->key_col = NULL;
    return DIPPER_OK;
  }
  const char *kf = dp_table_option(t, "key.format", "json");
  ks->key_fmt = strcasecmp(kf, "csv") == 0    ? KEY_CSV
                : strcasecmp(kf, "raw") == 0  ? KEY_RAW
                : strcasecmp(kf, "avro") == 0 ? KEY_AVRO
                                              : KEY_JSON;
  if (ks->key_fmt == KEY_RAW) {
    const dp_type *ty = ks->key_raw_col >= 0 ? sc->cols[ks->key_raw_col].type : NULL;
    if (nkey != 1 || !ty || (ty->kind != DP_T_STRING && ty->kind != DP_T_BYTES))
      return kafka_fail(s, DIPPER_UNSUPPORTED,
                        "key format 'raw' reads the key into one STRING or BYTES column; use "
                        "'key.format' = 'json'");
    return DIPPER_OK;
  }
  ks->key_rec = dp_batch_new(&ks->key_schema, 1);
  if (!ks->key_rec) return DIPPER_NOMEM;
  if (ks->key_fmt == KEY_CSV) {
    dp_csv_options o = dp_csv_default_options();
    int bad = -1;
    ks->key_csv = dp_csv_decoder_new(&ks->key_schema, NULL, &o, &bad);
    if (!ks->key_csv)
      return bad < 0 ? DIPPER_NOMEM
                     : kafka_fail(s, DIPPER_UNSUPPORTED,
                                  "key column `%s` has no CSV form; use 'key.format' = 'json'",
                                  ks->key_schema.cols[bad].name);
    return DIPPER_OK;
  }
  if (ks->key_fmt == KEY_AVRO) {
    dp_buf text = DP_BUF_INIT;
    int bad = -1;
    char why[200];
    int rc = dp_avro_schema_json(&ks->key_schema, NULL, &text, &bad, why, sizeof why);
    dp_buf_free(&text);
    if (rc == DIPPER_UNSUPPORTED && bad >= 0)
      return kafka_fail(s, DIPPER_UNSUPPORTED,
                        "key column `%s` has no Avro form (%s); change it, or use "
                        "'key.format' = 'json'",
                        ks->key_schema.cols[bad].name, why);
    if (rc != DIPPER_OK) return rc;
    ks->key_avro = dp_avro_decoder_new(&ks->key_schema, NULL);
    return ks->key_avro ? DIPPER_OK : DIPPER_NOMEM;
  }
  ks->key_json = dp_json_decoder_new(&ks->key_schema, NULL, NULL);
  return ks->key_json ? DIPPER_OK : DIPPER_NOMEM;
}

/* Which scan columns are metadata and which, and the format's decoder. */
static int open_columns(dp_source *s, kafka_source *ks) {
  const dp_table_def *t = s->table;
  const dp_schema *sc = s->schema;
  ks->meta = calloc((size_t)sc->ncols + 1, sizeof *ks->meta);
  if (!ks->meta) return DIPPER_NOMEM;
  for (int i = 0; i < sc->ncols; i++) {
    int k = dp_schema_find(&t->schema, sc->cols[i].name);
    if (k >= 0 && t->cols[k].kind == DP_CK_METADATA) {
      const char *key = t->cols[k].metadata_key ? t->cols[k].metadata_key : sc->cols[i].name;
      ks->meta[i] = meta_of(key);
      if (ks->meta[i] == META_NONE)
        return kafka_fail(s, DIPPER_UNSUPPORTED,
                          "Kafka has no metadata '%s'; use topic, partition, offset, "
                          "timestamp, timestamp-type, headers or leader-epoch",
                          key);
    }
  }
  /* With 'ALL' the value holds every column, the key's too, and is what is
  ** read; with 'EXCEPT_KEY' the key's columns come from the message key. */
  const char *except = dp_table_option(t, "value.fields-include", "ALL");
  ks->except_key = strcasecmp(except, "EXCEPT_KEY") == 0 && dp_table_option(t, "key.fields", NULL);
  /* upsert-kafka decodes the key always: a tombstone has nothing else. */
  if (ks->except_key || (ks->upsert && dp_table_option(t, "key.fields", NULL))) {
    int rc = open_key(s, ks);
    if (rc != DIPPER_OK) return rc;
  }
  int nvalue = 0;
  ks->raw_col = -1;
  for (int i = 0; i < sc->ncols; i++)
    if (ks->meta[i] == META_NONE && !(ks->except_key && ks->key_col && ks->key_col[i])) {
      nvalue++;
      ks->raw_col = i;
    }
  const char *fmt = dp_kafka_format(t);
  if (strcasecmp(fmt, "raw") == 0) {
    ks->raw = true;
    const dp_type *ty = ks->raw_col >= 0 ? sc->cols[ks->raw_col].type : NULL;
    if (nvalue != 1 || !ty || (ty->kind != DP_T_STRING && ty->kind != DP_T_BYTES))
      return kafka_fail(s, DIPPER_UNSUPPORTED,
                        "format 'raw' reads each message into one STRING or BYTES "
                        "column; declare e.g. `payload BYTES`, or use format 'json' or 'csv'");
    return DIPPER_OK;
  }
  if (!ks->key_col || !ks->except_key) {
    int rc = dp_record_decoder_open(&ks->dec, t, sc, "json", s->diags);
    if (rc == DIPPER_OK) ks->decoder_open = true;
    return rc;
  }
  /* The value's decoder sees the key's columns as not its own: a copy of the
  ** table whose key columns count as metadata. */
  dp_table_def vt = *t;
  dp_column_def *cols = malloc(((size_t)t->schema.ncols + 1) * sizeof *cols);
  if (!cols) return DIPPER_NOMEM;
  memcpy(cols, t->cols, (size_t)t->schema.ncols * sizeof *cols);
  for (int i = 0; i < sc->ncols; i++) {
    int k = dp_schema_find(&t->schema, sc->cols[i].name);
    if (k >= 0 && ks->key_col[i]) cols[k].kind = DP_CK_METADATA;
  }
  vt.cols = cols;
  int rc = dp_record_decoder_open(&ks->dec, &vt, sc, "json", s->diags);
  free(cols);
  if (rc == DIPPER_OK) ks->decoder_open = true;
  return rc;
}

/* A consumer handle of the table's configuration (the caller destroys it). */
static int new_consumer(dp_source *s, rd_kafka_t **out) {
  /* Offsets are dipper's: librdkafka stores and commits none by itself, and
  ** a lost position is an error rather than a silent jump. */
  static const char *const fixed[] = {"enable.auto.commit", "false",
                                      "enable.auto.offset.store", "false",
                                      "enable.partition.eof", "true",
                                      NULL};
  static const char *const defaults[] = {"auto.offset.reset", "error", "client.id", "dipper",
                                         NULL};
  rd_kafka_conf_t *conf = NULL;
  int rc = dp_kafka_make_conf(s->diags, s->table, fixed, defaults, &conf);
  /* librdkafka wants a group id for a consumer handle; the group is never
  ** joined, only read (group-offsets) and, when the table names it,
  ** committed to (Flink's commit.offsets.on.checkpoint). */
  if (rc == DIPPER_OK && !dp_table_option(s->table, "properties.group.id", NULL))
    rc = dp_kafka_conf_set(s->diags, s->table, conf, "group.id", "dipper");
  if (rc != DIPPER_OK) {
    if (conf) rd_kafka_conf_destroy(conf);
    return rc;
  }
  char err[512];
  if (!(*out = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err))) {
    rd_kafka_conf_destroy(conf);
    return kafka_fail(s, DIPPER_OPTION, "cannot create the Kafka consumer: %s", err);
  }
  dp_kafka_own(*out, s->db);
  return DIPPER_OK;
}

/* The pipe the consumer queue writes a byte to when a message lands in it
** empty; both ends non-blocking (the reader drains it at each plan, and a
** full pipe already says "wake up"). */
static int open_wake(dp_source *s, kafka_source *ks) {
  if (pipe(ks->wake) != 0) {
    ks->wake[0] = ks->wake[1] = -1;
    return kafka_fail(s, DIPPER_IO, "cannot make the Kafka source's wake-up pipe: %s",
                      strerror(errno));
  }
  for (int i = 0; i < 2; i++) {
    int fl = fcntl(ks->wake[i], F_GETFL);
    if (fl < 0 || fcntl(ks->wake[i], F_SETFL, fl | O_NONBLOCK) != 0 ||
        fcntl(ks->wake[i], F_SETFD, FD_CLOEXEC) != 0)
      return kafka_fail(s, DIPPER_IO, "cannot set up the Kafka source's wake-up pipe: %s",
                        strerror(errno));
  }
  rd_kafka_queue_io_event_enable(ks->queue, ks->wake[1], "k", 1);
  return DIPPER_OK;
}

static void drain_wake(kafka_source *ks) {
  char buf[256];
  while (ks->wake[0] >= 0 && read(ks->wake[0], buf, sizeof buf) > 0) {
  }
}

static int open_as(dp_source *s, bool upsert) {
  kafka_source *ks = calloc(1, sizeof *ks);
  if (!ks) return DIPPER_NOMEM;
  s->state = ks;
  ks->wake[0] = ks->wake[1] = -1;
  ks->upsert = upsert;
  dp_bad_records_init(&ks->bad, s->table);
  int rc = open_columns(s, ks);
  bool commit_group =
      dp_table_option(s->table, "properties.group.id", NULL) &&
      strcasecmp(dp_table_option(s->table, "properties.commit.offsets.on.checkpoint", "true"),
                 "false") != 0;
  if (rc == DIPPER_OK) rc = new_consumer(s, &ks->rk);
  if (rc == DIPPER_OK) rc = new_consumer(s, &ks->qk);
  if (rc == DIPPER_OK) rc = resolve_partitions(s, ks);
  if (rc == DIPPER_OK) rc = startup_offsets(s, ks);
  if (rc == DIPPER_OK) rc = bounded_offsets(s, ks);
  if (rc == DIPPER_OK && !(ks->high = malloc((size_t)ks->nparts * sizeof *ks->high + 1)))
    rc = DIPPER_NOMEM;
  if (rc == DIPPER_OK && commit_group && !(ks->commit_q = rd_kafka_queue_new(ks->rk)))
    rc = DIPPER_NOMEM;
  if (rc == DIPPER_OK && !(ks->queue = rd_kafka_queue_get_consumer(ks->rk))) rc = DIPPER_NOMEM;
  if (rc == DIPPER_OK) rc = open_wake(s, ks);
  if (rc != DIPPER_OK) kafka_source_close(s); /* the caller does not close a failed open */
  return rc;
}

static int kafka_source_open(dp_source *s) { return open_as(s, false); }

int dp_kafka_source_open_upsert(dp_source *s) { return open_as(s, true); }

static int set_paused(kafka_source *ks, kpart *p, bool pause) {
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
  if (!l) return DIPPER_NOMEM;
  rd_kafka_topic_partition_list_add(l, ks->topics[p->topic], p->partition);
  if (pause)
    rd_kafka_pause_partitions(ks->rk, l);
  else
    rd_kafka_resume_partitions(ks->rk, l);
  rd_kafka_topic_partition_list_destroy(l);
  p->paused = pause;
  return DIPPER_OK;
}

/* Assign every partition at its start: at the first plan, after any
** restore_position, so that a restored position is where fetching starts. */
static int assign(dp_source *s, kafka_source *ks) {
  for (int i = 0; i < ks->nparts; i++) {
    kpart *p = &ks->parts[i];
    if (p->start < 0) return no_group_offset(s, ks, p);
    if (p->bound < p->start) p->bound = p->start;
  }
  rd_kafka_topic_partition_list_t *l = own_list(ks);
  if (!l) return DIPPER_NOMEM;
  for (int i = 0, k = 0; i < ks->nparts; i++)
    if (!ks->parts[i].other) l->elems[k++].offset = ks->parts[i].start;
  rd_kafka_resp_err_t err = rd_kafka_assign(ks->rk, l);
  rd_kafka_topic_partition_list_destroy(l);
  if (err)
    return kafka_fail(s, DIPPER_CONNECT, "cannot assign the partitions: %s", rd_kafka_err2str(err));
  ks->assigned = true;
  return DIPPER_OK;
}

static int dispatch(dp_source *s, kafka_source *ks, rd_kafka_message_t *m, dp_batch *out,
                    int64_t *got);

/* The consumer's queued messages to the held lists (every partition's end
** is its position while they are, so that none is taken), the wake-up pipe
** drained: the next message to land in the empty queue wakes the run. */
static int move_queue(dp_source *s, kafka_source *ks) {
  drain_wake(ks);
  for (int i = 0; i < ks->nparts; i++) ks->parts[i].end = ks->parts[i].pos;
  if (ks->msgs_cap == 0) {
    ks->msgs_cap = 1024;
    ks->msgs = malloc((size_t)ks->msgs_cap * sizeof *ks->msgs);
    if (!ks->msgs) return DIPPER_NOMEM;
  }
  int rc = DIPPER_OK;
  ks->planning = true;
  for (ssize_t n = ks->msgs_cap; rc == DIPPER_OK && n == ks->msgs_cap;) {
    n = rd_kafka_consume_batch_queue(ks->queue, 0, ks->msgs, (size_t)ks->msgs_cap);
    if (n < 0) {
      ks->planning = false;
      return kafka_fail(s, DIPPER_IO, "cannot read from Kafka: %s",
                        rd_kafka_err2str(rd_kafka_last_error()));
    }
    int64_t none = 0;
    for (ssize_t j = 0; j < n; j++) {
      if (rc == DIPPER_OK)
        rc = dispatch(s, ks, ks->msgs[j], NULL, &none);
      else
        rd_kafka_message_destroy(ks->msgs[j]);
    }
  }
  ks->planning = false;
  return rc;
}

/* Per partition, the end of what the consumer has fetched (move_queue
** first), or the broker's end (below). */
static int fetched_ends(dp_source *s, kafka_source *ks, int64_t *out) {
  int rc = move_queue(s, ks);
  /* The end is the partition's end as the last fetch answer gave it (for
  ** a read_committed consumer its last stable offset), or past what was
  ** fetched if that is further: a partition read behind its end is planned
  ** to it, as with the broker's ends, so that partitions read a backlog in
  ** step (the watermark is their maximum); one read up to its end takes what
  ** was fetched. */
  bool idle = false, unknown = false;
  for (int i = 0; rc == DIPPER_OK && i < ks->nparts; i++) {
    const kpart *p = &ks->parts[i];
    int64_t end = p->held_head < p->nheld ? p->held[p->nheld - 1]->offset + 1 : p->pos;
    int64_t lo, hi;
    if (p->other) {
      /* Another split's partition: this consumer fetches nothing of it, and
      ** its end comes from the broker, unless it has ended. */
      if (p->pos < p->bound) unknown = true;
      out[i] = end;
      continue;
    }
    if (rd_kafka_get_watermark_offsets(ks->rk, ks->topics[p->topic], p->partition, &lo, &hi) ||
        hi < 0)
      unknown = true;
    else if (hi > end)
      end = hi;
    out[i] = end;
    if (end == p->pos && p->pos < p->bound) idle = true;
  }
  /* A partition with nothing fetched, or no fetch answered yet: ask the
  ** broker after all, so that what was produced before the plan is in its
  ** batch whatever the fetches' timing (a caller stepping the query by hand
  ** sees it all), at the cost of a round trip while a partition is idle.
  ** Not for an idle partition of a run loop's step (s->woken): its records
  ** wake the run through wait_fd when fetched, and the round trip, paid by
  ** nearly every plan of a query that keeps up (ListOffsets: 1 ms, 10-100 ms
  ** on a loaded broker), was most of the latency (docs/benchmarks.md). */
  if (rc == DIPPER_OK && (unknown || (idle && !s->woken)))
    rc = end_offsets(s, ks, RD_KAFKA_OFFSET_END, out);
  return rc;
}

static int kafka_source_plan(dp_source *s, int64_t max_rows, bool *exhausted) {
  kafka_source *ks = s->state;
  int rc = ks->assigned ? DIPPER_OK : assign(s, ks);
  bool replay = ks->replay;
  ks->replay = false;
  /* A split other than the first replays split 0's plan at every batch
  ** (parallel.c), which split 0 checked against the broker: it takes the
  ** ends as they are, and moves its queue to the held lists as split 0's
  ** plan does (its wake-up pipe drained, so that its next record wakes the
  ** run). */
  bool follower = replay && ks->nsplits > 1 && ks->split > 0;
  /* The broker's ends at the first plan (the batch reads what the topic
  ** held when the query started) and for a replayed batch (to check that its
  ** records are still there); what was fetched, after that. */
  if (rc == DIPPER_OK && follower) {
    rc = move_queue(s, ks);
    for (int i = 0; i < ks->nparts; i++) ks->high[i] = ks->parts[i].replay_end;
  } else if (rc == DIPPER_OK) {
    rc = ks->planned && !replay ? fetched_ends(s, ks, ks->high)
                                : end_offsets(s, ks, RD_KAFKA_OFFSET_END, ks->high);
  }
  if (rc != DIPPER_OK) return rc;
  ks->planned = true;
  int64_t left = max_rows > 0 ? max_rows : INT64_MAX;
  bool all_ended = true;
  for (int i = 0; i < ks->nparts; i++) {
    kpart *p = &ks->parts[i];
    int64_t high = ks->high[i];
    p->start = p->pos;
    p->end = p->pos;
    p->stall_since_ms = 0;
    if (high < p->pos)
      return kafka_fail(s, DIPPER_DATA,
                        "topic '%s' partition %d ends at offset %lld, before offset %lld where "
                        "reading is to resume: was the topic deleted and created again? Start "
                        "the query with a new checkpoint folder",
                        ks->topics[p->topic], (int)p->partition, (long long)high,
                        (long long)p->pos);
    int64_t end;
    if (replay) {
      /* Exactly the logged batch, whatever came since. */
      end = p->replay_end;
      if (end > high)
        return kafka_fail(s, DIPPER_DATA,
                          "the batch to run again reads topic '%s' partition %d to offset %lld, "
                          "but the partition now ends at %lld",
                          ks->topics[p->topic], (int)p->partition, (long long)end,
                          (long long)high);
      if (end < p->bound) all_ended = false;
    } else {
      if (p->pos >= p->bound) {
        /* Ended for good: stop fetching it. */
        if (!p->other && !p->paused && (rc = set_paused(ks, p, true)) != DIPPER_OK) return rc;
        continue;
      }
      all_ended = false;
      end = high < p->bound ? high : p->bound;
      if (end <= p->pos) continue;
      /* The cap is shared out in partition order, at least one record each
      ** that has some, so that no partition starves across batches. */
      int64_t share = left / (ks->nparts - i);
      if (share < 1) share = left > 0 ? 1 : 0;
      if (end - p->pos > share) end = p->pos + share;
      if (max_rows > 0) left -= end - p->pos;
    }
    p->end = end;
    if (p->other) continue; /* planned, read by its own split */
    if (end > p->pos && p->paused && p->nheld - p->held_head < HOLD_LIMIT / 2 &&
        (rc = set_paused(ks, p, false)) != DIPPER_OK)
      return rc;
    /* Held past this batch's end (a capped batch): pause as hold() would. */
    if (!p->paused && p->nheld - p->held_head - (end - p->pos) >= HOLD_LIMIT &&
        (rc = set_paused(ks, p, true)) != DIPPER_OK)
      return rc;
  }
  /* A replayed batch is not the end (more may be left after it), except on
  ** a follower: split 0 says when the input ends, and a follower whose batch
  ** reaches every bound has nothing more (its answer is and-ed with split 0's). */
  *exhausted = ks->bounded && all_ended && (!replay || follower);
  return DIPPER_OK;
}

/* Owed records: the partition still has offsets before its end to hand out. */
static bool owed(const kpart *p) {
  if (p->pos >= p->end || p->other) return false;
  /* Everything before the end-of-partition offset has been delivered:
  ** offsets left are gaps (transaction markers, compaction). */
  if (p->eof >= p->end && (p->held_head == p->nheld || p->held[p->held_head]->offset >= p->end))
    return false;
  return true;
}

static int hold(kafka_source *ks, kpart *p, rd_kafka_message_t *m) {
  if (p->held_head > 0 && p->nheld == p->held_cap) {
    memmove(p->held, p->held + p->held_head, (size_t)(p->nheld - p->held_head) * sizeof *p->held);
    p->nheld -= p->held_head;
    p->held_head = 0;
  }
  if (dp_grow_i(&p->held, &p->held_cap, p->nheld + 1, sizeof *p->held, 64)) {
    rd_kafka_message_destroy(m);
    return DIPPER_NOMEM;
  }
  p->held[p->nheld++] = m;
  /* A plan that moves the queue to the held lists does not pause: what it
  ** holds is its batch (pausing drops the partition's fetched records,
  ** which the consumer then fetches again). */
  if (!ks->planning && !p->paused && p->nheld - p->held_head >= HOLD_LIMIT)
    return set_paused(ks, p, true);
  return DIPPER_OK;
}

static int append_headers(dp_vector *v, const rd_kafka_message_t *m) {
  rd_kafka_headers_t *hdrs = NULL;
  int rc = DIPPER_OK;
  if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) {
    const char *name;
    const void *val;
    size_t size;
    for (size_t i = 0; rc == DIPPER_OK && rd_kafka_header_get_all(hdrs, i, &name, &val, &size) ==
                                              RD_KAFKA_RESP_ERR_NO_ERROR;
         i++) {
      rc = dp_vector_append_str(dp_vector_map_keys(v), name, strlen(name));
      if (rc == DIPPER_OK)
        rc = val ? dp_vector_append_str(dp_vector_map_values(v), val, size)
                 : dp_vector_append_null(dp_vector_map_values(v));
      if (rc == DIPPER_OK) rc = dp_vector_append_struct(v->children[0]);
    }
  }
  return rc == DIPPER_OK ? dp_vector_append_list(v) : rc;
}

static int append_meta(kafka_source *ks, dp_vector *v, meta_kind kind,
                       const rd_kafka_message_t *m, int topic) {
  switch (kind) {
  case META_TOPIC: return dp_vector_append_str(v, ks->topics[topic], strlen(ks->topics[topic]));
  case META_PARTITION: return dp_vector_append_i64(v, m->partition);
  case META_OFFSET: return dp_vector_append_i64(v, m->offset);
  case META_TIMESTAMP:
  case META_TIMESTAMP_TYPE: {
    rd_kafka_timestamp_type_t tt;
    int64_t ms = rd_kafka_message_timestamp(m, &tt);
    if (kind == META_TIMESTAMP)
      return ms < 0 ? dp_vector_append_null(v) : dp_vector_append_i64(v, ms * 1000);
    const char *name = tt == RD_KAFKA_TIMESTAMP_CREATE_TIME       ? "CreateTime"
                       : tt == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? "LogAppendTime"
                                                                  : "NoTimestampType";
    return dp_vector_append_str(v, name, strlen(name));
  }
  case META_HEADERS: return append_headers(v, m);
  case META_LEADER_EPOCH:
  case META_NONE:
  default: return dp_vector_append_null(v);
  }
}

/* Undo the key columns of a row whose value failed. */
static void cut_key(kafka_source *ks, dp_batch *out, int64_t len) {
  if (!ks->key_col) return;
  for (int c = 0; c < out->ncols; c++)
    if (ks->key_col[c]) dp_format_cut(out->cols[c], len);
}

/* The key's columns of one record.  *len_before is their length before, or
** -1 when the key was bad and the record is passed over. */
static int take_key(dp_source *s, kafka_source *ks, kpart *p, const rd_kafka_message_t *m,
                    dp_batch *out, int64_t *len_before) {
  int64_t before = -1;
  for (int c = 0; c < out->ncols && before < 0; c++)
    if (ks->key_col[c]) before = out->cols[c]->length;
  *len_before = before;
  int rc = DIPPER_OK;
  if (!m->key) { /* no key: the key's columns are NULL */
    for (int c = 0; c < out->ncols && rc == DIPPER_OK; c++)
      if (ks->key_col[c]) rc = dp_vector_append_null(out->cols[c]);
    return rc;
  }
  const char *key = m->key;
  if (ks->key_fmt == KEY_RAW) return dp_vector_append_str(out->cols[ks->key_raw_col], key, m->key_len);
  dp_format_error fe;
  bool skipped = false;
  dp_batch *kr = ks->key_rec;
  dp_batch_clear(kr);
  rc = ks->key_fmt == KEY_CSV    ? dp_csv_decode(ks->key_csv, key, m->key_len, kr, &skipped, &fe)
       : ks->key_fmt == KEY_AVRO ? dp_avro_decode(ks->key_avro, key, m->key_len, kr, &fe)
                                 : dp_json_decode(ks->key_json, key, m->key_len, kr, &fe);
  if (rc == DIPPER_OK && skipped) { /* an empty CSV key: NULLs */
    for (int c = 0; c < out->ncols && rc == DIPPER_OK; c++)
      if (ks->key_col[c]) rc = dp_vector_append_null(out->cols[c]);
    return rc;
  }
  if (rc == DIPPER_OK) {
    /* the key's fields, in key.fields order, to their columns */
    for (int k = 0; k < ks->key_schema.ncols && rc == DIPPER_OK; k++)
      if (ks->key_dest[k] >= 0) rc = dp_vector_append_from(out->cols[ks->key_dest[k]], kr->cols[k], 0);
    return rc;
  }
  if (rc != DIPPER_DATA) return rc;
  *len_before = -1;
  char where[320];
  snprintf(where, sizeof where, "topic %s partition %d offset %lld (the key)", topic_of(s, p),
           (int)m->partition, (long long)m->offset);
  return dp_bad_record(&ks->bad, s, where, &fe, key, m->key_len);
}

/* One record of partition p into out; *row when it gave a row. */
static int take(dp_source *s, kafka_source *ks, kpart *p, const rd_kafka_message_t *m,
                dp_batch *out, bool *row) {
  *row = false;
  p->pos = m->offset + 1;
  s->metrics.bytes += (int64_t)m->len;
  if (ks->upsert && !m->key) {
    char where[320];
    snprintf(where, sizeof where, "topic %s partition %d offset %lld", topic_of(s, p),
             (int)m->partition, (long long)m->offset);
    dp_format_error fe = {0};
    snprintf(fe.msg, sizeof fe.msg,
             "an upsert-kafka record has no key: each record must be keyed by the PRIMARY KEY");
    return dp_bad_record(&ks->bad, s, where, &fe, m->payload ? (const char *)m->payload : "",
                         m->payload ? m->len : 0);
  }
  if (!m->payload && !ks->upsert) return DIPPER_OK; /* a tombstone: a deleted key, no row */
  const char *rec = m->payload;
  int64_t key_len_before = 0;
  if (ks->key_col && (ks->except_key || !rec)) {
    int rc = take_key(s, ks, p, m, out, &key_len_before);
    if (rc != DIPPER_OK || key_len_before < 0) return rc;
  }
  if (!rec) {
    /* upsert-kafka's tombstone: its key, every other column NULL. */
    for (int c = 0; c < s->schema->ncols; c++) {
      if (ks->meta[c] != META_NONE || (ks->key_col && ks->key_col[c])) continue;
      int rc = dp_vector_append_null(out->cols[c]);
      if (rc != DIPPER_OK) return rc;
    }
  } else if (ks->raw) {
    int rc = dp_vector_append_str(out->cols[ks->raw_col], rec, m->len);
    if (rc != DIPPER_OK) return rc;
  } else {
    bool skipped = false;
    dp_format_error fe;
    int rc = dp_record_decode(&ks->dec, rec, m->len, out, &skipped, &fe);
    if (rc != DIPPER_OK || skipped) cut_key(ks, out, key_len_before);
    if (rc == DIPPER_DATA) {
      char where[320];
      snprintf(where, sizeof where, "topic %s partition %d offset %lld", topic_of(s, p),
               (int)m->partition, (long long)m->offset);
      return dp_bad_record(&ks->bad, s, where, &fe, rec, m->len);
    }
    if (rc != DIPPER_OK || skipped) return rc;
  }
  for (int c = 0; c < s->schema->ncols; c++) {
    if (ks->meta[c] == META_NONE) continue;
    int rc = append_meta(ks, out->cols[c], ks->meta[c], m, p->topic);
    if (rc != DIPPER_OK) return rc;
  }
  if (ks->upsert) {
    int rc = dp_vector_append_i64(out->change, rec ? DP_CHANGE_INSERT : DP_CHANGE_DELETE);
    if (rc != DIPPER_OK) return rc;
  }
  *row = true;
  s->metrics.rows++;
  return DIPPER_OK;
}

static kpart *part_of(kafka_source *ks, const rd_kafka_message_t *m) {
  if (!m->rkt) return NULL;
  const char *name = rd_kafka_topic_name(m->rkt);
  for (int i = 0; i < ks->nparts; i++) {
    kpart *p = &ks->parts[i];
    if (p->partition == m->partition && strcmp(ks->topics[p->topic], name) == 0) return p;
  }
  return NULL;
}

/* A message from the queue: a record, an end-of-partition event or an error. */
static int dispatch(dp_source *s, kafka_source *ks, rd_kafka_message_t *m, dp_batch *out,
                    int64_t *got) {
  kpart *p = part_of(ks, m);
  if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
    if (p) p->eof = m->offset;
    rd_kafka_message_destroy(m);
    return DIPPER_OK;
  }
  if (m->err) {
    rd_kafka_resp_err_t err = m->err;
    char what[600];
    snprintf(what, sizeof what, "%s", rd_kafka_message_errstr(m));
    char where[300] = "";
    if (p)
      snprintf(where, sizeof where, " (topic %s partition %d)", topic_of(s, p), (int)p->partition);
    rd_kafka_message_destroy(m);
    if (dp_kafka_transient(err)) return DIPPER_OK;
    if (err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET || err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE)
      return kafka_fail(s, DIPPER_DATA,
                        "records to be read are gone from the broker%s: %s; they were "
                        "deleted by retention before dipper read them",
                        where, what);
    return kafka_fail(s, DIPPER_IO, "Kafka consumer error%s: %s", where, what);
  }
  if (!p || m->offset < p->pos) { /* not ours, or seen already */
    rd_kafka_message_destroy(m);
    return DIPPER_OK;
  }
  if (m->offset >= p->end || p->held_head < p->nheld) return hold(ks, p, m);
  bool row = false;
  int rc = take(s, ks, p, m, out, &row);
  rd_kafka_message_destroy(m);
  *got += row;
  return rc;
}

/* Held records that the planned batch now covers, in order. */
static int take_held(dp_source *s, kafka_source *ks, dp_batch *out, int64_t want, int64_t *got) {
  int rc = DIPPER_OK;
  for (int i = 0; i < ks->nparts && rc == DIPPER_OK; i++) {
    kpart *p = &ks->parts[i];
    while (rc == DIPPER_OK && *got < want && p->held_head < p->nheld &&
           p->held[p->held_head]->offset < p->end) {
      rd_kafka_message_t *m = p->held[p->held_head++];
      bool row = false;
      if (m->offset >= p->pos) rc = take(s, ks, p, m, out, &row);
      rd_kafka_message_destroy(m);
      *got += row;
    }
    if (p->held_head == p->nheld) p->held_head = p->nheld = 0;
    /* Fetching resumes where the last record handed over left off. */
    if (rc == DIPPER_OK && p->paused && p->pos < p->bound &&
        p->nheld - p->held_head < HOLD_LIMIT / 2)
      rc = set_paused(ks, p, false);
  }
  return rc;
}

static int kafka_source_read(dp_source *s, dp_batch *out, int64_t want, bool *done) {
  kafka_source *ks = s->state;
  int64_t got = 0;
  int rc = DIPPER_OK;
  *done = false;
  if (ks->msgs_cap == 0) {
    ks->msgs_cap = 1024;
    ks->msgs = malloc((size_t)ks->msgs_cap * sizeof *ks->msgs);
    if (!ks->msgs) return DIPPER_NOMEM;
  }
  for (;;) {
    if (dp_kafka_interrupted(s->db)) return interrupted(s);
    if (rc == DIPPER_OK) rc = take_held(s, ks, out, want, &got);
    if (rc != DIPPER_OK) break;
    bool any_owed = false;
    for (int i = 0; i < ks->nparts; i++)
      if (owed(&ks->parts[i])) any_owed = true;
    if (!any_owed || got >= want) {
      *done = !any_owed;
      break;
    }
    int64_t room = want - got;
    size_t n_ask = room < ks->msgs_cap ? (size_t)room : (size_t)ks->msgs_cap;
    /* What is queued now; when nothing is, wait for one record (a batch
    ** call would wait its whole timeout to fill up). */
    ssize_t n = rd_kafka_consume_batch_queue(ks->queue, 0, ks->msgs, n_ask);
    if (n == 0) {
      rd_kafka_message_t *m = rd_kafka_consume_queue(ks->queue, 100);
      if (m) {
        ks->msgs[0] = m;
        n = 1;
      }
    }
    if (n < 0)
      return kafka_fail(s, DIPPER_IO, "cannot read from Kafka: %s",
                        rd_kafka_err2str(rd_kafka_last_error()));
    for (ssize_t j = 0; j < n; j++) {
      if (rc == DIPPER_OK)
        rc = dispatch(s, ks, ks->msgs[j], out, &got);
      else
        rd_kafka_message_destroy(ks->msgs[j]);
    }
    if (rc != DIPPER_OK) break;
    /* Return what there is rather than wait with rows in hand. */
    if (n == 0 && got > 0) break;
    int64_t now = dp_kafka_now_ms();
    for (int i = 0; i < ks->nparts; i++) {
      kpart *p = &ks->parts[i];
      if (!owed(p)) continue;
      if (n > 0 || p->stall_since_ms == 0) {
        p->stall_since_ms = now;
      } else if (now - p->stall_since_ms > STALL_TIMEOUT_MS) {
        char where[300];
        snprintf(where, sizeof where, "%s' partition %d", ks->topics[p->topic], (int)p->partition);
        char range[64];
        snprintf(range, sizeof range, "%lld to %lld", (long long)p->pos, (long long)p->end - 1);
        return kafka_fail(s, DIPPER_TIMEOUT,
                          "topic '%s announced offsets %s but did not deliver them "
                          "within 60 s; is the broker still up? (an open transaction also holds "
                          "records back from a read_committed consumer)",
                          where, range);
      }
    }
  }
  /* Owed offsets that are gaps: the batch ends at its planned end. */
  if (rc == DIPPER_OK && *done)
    for (int i = 0; i < ks->nparts; i++)
      if (ks->parts[i].pos < ks->parts[i].end) ks->parts[i].pos = ks->parts[i].end;
  return rc;
}

/* Every partition's position to the group, asynchronously, as Flink commits
** on a checkpoint: the batch does not wait for the group's coordinator. */
static int commit_group(dp_source *s, kafka_source *ks) {
  drain_commits(ks, 0);
  /* A split commits its own partitions (each split's consumer commits to
  ** the same group; the others' positions are theirs to commit). */
  rd_kafka_topic_partition_list_t *l = own_list(ks);
  if (!l) return DIPPER_NOMEM;
  for (int i = 0, k = 0; i < ks->nparts; i++)
    if (!ks->parts[i].other) l->elems[k++].offset = ks->parts[i].pos;
  const char *group = dp_table_option(s->table, "properties.group.id", "?");
  rd_kafka_resp_err_t err =
      l->cnt == 0 ? RD_KAFKA_RESP_ERR__NO_OFFSET
                  : rd_kafka_commit_queue(ks->rk, l, ks->commit_q, NULL, (void *)(uintptr_t)group);
  rd_kafka_topic_partition_list_destroy(l);
  if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
    dp_kafka_note(ks->rk, "cannot commit offsets to group '%s': %s", group,
                  rd_kafka_err2str(err));
  ks->committed_ms = dp_kafka_now_ms();
  ks->commit_owed = false;
  return DIPPER_OK;
}

static int kafka_source_commit(dp_source *s) {
  kafka_source *ks = s->state;
  bool moved = false;
  for (int i = 0; i < ks->nparts; i++) {
    if (ks->parts[i].start != ks->parts[i].pos) moved = true;
    ks->parts[i].start = ks->parts[i].pos;
  }
  if (ks->commit_q && ks->assigned) {
    if (moved) ks->commit_owed = true;
    if (ks->commit_owed && !s->outputs_pending &&
        dp_kafka_now_ms() - ks->committed_ms >= GROUP_COMMIT_MS) {
      int rc = commit_group(s, ks);
      if (rc != DIPPER_OK) return rc;
    }
  }
  return dp_bad_records_flush(&ks->bad, s);
}

/* ---- positions and batch bounds (the checkpoint's bytes) ----
**
** Both are: a tag byte ('P' a position: the next offset to read; 'B' a
** batch's bounds: the exclusive end offset it reads to), a version byte (1),
** a uvar count, and that many entries of topic name (a byte string),
** partition (uvar) and offset (uvar).  Names, not indexes, so that a table
** whose topic list changed is caught rather than misread. */

#define POS_TAG 'P'
#define PLAN_TAG 'B'
#define CODEC_VERSION 1

static int put_offsets(kafka_source *ks, dp_buf *out, uint8_t tag, bool ends) {
  uint64_t n = 0;
  for (int i = 0; i < ks->nparts; i++) n += (ends ? ks->parts[i].end : ks->parts[i].start) >= 0;
  dp_put_u8(out, tag);
  dp_put_u8(out, CODEC_VERSION);
  dp_put_uvar(out, n);
  for (int i = 0; i < ks->nparts; i++) {
    const kpart *p = &ks->parts[i];
    int64_t off = ends ? p->end : p->start;
    if (off < 0) continue;
    dp_put_str(out, ks->topics[p->topic]);
    dp_put_uvar(out, (uint64_t)p->partition);
    dp_put_uvar(out, (uint64_t)off);
  }
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int corrupt(dp_source *s, const char *what, const char *why) {
  return kafka_fail(s, DIPPER_CORRUPT,
                    "the checkpoint's %s of this Kafka source does not read back (%s); it was "
                    "damaged, or written by another table: start the query with a new "
                    "checkpoint folder",
                    what, why);
}

/* Offsets per partition of the source from bytes put_offsets wrote with
** `tag`; -1 where the bytes name none. */
static int get_offsets(dp_source *s, kafka_source *ks, dp_rd *in, uint8_t tag, const char *what,
                       int64_t *out) {
  for (int i = 0; i < ks->nparts; i++) out[i] = -1;
  uint8_t t = dp_get_u8(in), version = dp_get_u8(in);
  uint64_t n = dp_get_count(in, 3);
  if (in->bad) return corrupt(s, what, "cut short");
  if (t != tag) return corrupt(s, what, "not a Kafka source's record of this kind");
  if (version != CODEC_VERSION) return corrupt(s, what, "an unknown version");
  for (uint64_t k = 0; k < n; k++) {
    size_t len = 0;
    const uint8_t *name = dp_get_bytes(in, &len);
    uint64_t partition = dp_get_uvar(in), off = dp_get_uvar(in);
    if (in->bad) return corrupt(s, what, "cut short");
    if (partition > INT32_MAX || off > INT64_MAX) return corrupt(s, what, "an offset out of range");
    int topic = -1;
    for (int ti = 0; ti < ks->ntopics && topic < 0; ti++)
      if (strlen(ks->topics[ti]) == len && memcmp(ks->topics[ti], name, len) == 0) topic = ti;
    if (topic < 0)
      return kafka_fail(s, DIPPER_CORRUPT,
                        "the checkpoint's %s names topic '%.*s', which the table no longer reads "
                        "(it reads %s%s%s); read that topic again, or start the query with a new "
                        "checkpoint folder",
                        what, (int)(len > 200 ? 200 : len), (const char *)name,
                        ks->ntopics ? "'" : "no topic", ks->ntopics ? ks->topics[0] : "",
                        ks->ntopics > 1 ? "' and others" : (ks->ntopics ? "'" : ""));
    int at = -1;
    for (int i = 0; i < ks->nparts && at < 0; i++)
      if (ks->parts[i].topic == topic && ks->parts[i].partition == (int32_t)partition) at = i;
    if (at < 0)
      return kafka_fail(s, DIPPER_CORRUPT,
                        "the checkpoint's %s names partition %d of topic '%s', which the topic "
                        "does not have (was it deleted and created again?); start the query with "
                        "a new checkpoint folder",
                        what, (int)partition, ks->topics[topic]);
    if (out[at] >= 0) return corrupt(s, what, "a partition named twice");
    out[at] = (int64_t)off;
  }
  return dp_rd_done(in) ? DIPPER_OK : corrupt(s, what, "bytes left over");
}

static int kafka_source_save_plan(dp_source *s, dp_buf *out) {
  return put_offsets(s->state, out, PLAN_TAG, true);
}

static int kafka_source_save_position(dp_source *s, dp_buf *out) {
  return put_offsets(s->state, out, POS_TAG, false);
}

/* Partitions the position does not name (created since, or matched by
** 'topic-pattern' since) keep the start 'scan.startup.mode' gave them. */
static int kafka_source_restore_position(dp_source *s, dp_rd *in) {
  kafka_source *ks = s->state;
  if (ks->assigned)
    return kafka_fail(s, DIPPER_MISUSE, "a position is restored before the first batch is planned");
  int rc = get_offsets(s, ks, in, POS_TAG, "position", ks->high);
  for (int i = 0; rc == DIPPER_OK && i < ks->nparts; i++)
    if (ks->high[i] >= 0) ks->parts[i].start = ks->parts[i].pos = ks->parts[i].end = ks->high[i];
  return rc;
}

static int kafka_source_replay_plan(dp_source *s, dp_rd *in) {
  kafka_source *ks = s->state;
  int rc = get_offsets(s, ks, in, PLAN_TAG, "batch bounds", ks->high);
  for (int i = 0; rc == DIPPER_OK && i < ks->nparts; i++) {
    kpart *p = &ks->parts[i];
    if (ks->high[i] >= 0 && ks->high[i] < p->pos)
      return corrupt(s, "batch bounds", "a batch that ends before the position it starts at");
    p->replay_end = ks->high[i] >= 0 ? ks->high[i] : p->pos;
  }
  if (rc == DIPPER_OK) ks->replay = true;
  return rc;
}

/* Splits (parallel execution, connector.h): partition i of the source's
** list (topics by name, partitions by number: for one topic, partition i)
** goes to split i mod n, whose consumer alone assigns, fetches and reads it,
** in offset order (Kafka's own guarantee is per partition, and so is the
** order here), and commits it to the group.  Every split plans every
** partition: split 0 plans (asking the broker for the ends of the others'
** partitions), the others replay its ends, and a split's read ends the
** others' partitions at their ends (the gaps rule above), so every split's
** position is the batch's and a batch is the same cut on every split.  In
** batch mode (nothing replayed) each split plans by itself: the others'
** partitions are ended where they start, and each partition is read to the
** bound its own split fixed at open. */
static int kafka_source_split(dp_source *s, int index, int count, bool replayed, const char **why) {
  (void)why;
  kafka_source *ks = s->state;
  if (ks->assigned) return kafka_fail(s, DIPPER_MISUSE, "a source is split after its first plan");
  ks->split = index;
  ks->nsplits = count;
  for (int i = 0; i < ks->nparts; i++) {
    kpart *p = &ks->parts[i];
    p->other = i % count != index;
    if (p->other && !replayed) p->bound = 0; /* assign() makes it the start */
  }
  return DIPPER_OK;
}

static int kafka_source_wait_fd(dp_source *s) {
  const kafka_source *ks = s->state;
  return ks->wake[0];
}

const dp_source_class dp_source_kafka = {
    .name = "kafka",
    .open = kafka_source_open,
    .plan_batch = kafka_source_plan,
    .read = kafka_source_read,
    .commit = kafka_source_commit,
    .close = kafka_source_close,
    .save_plan = kafka_source_save_plan,
    .save_position = kafka_source_save_position,
    .restore_position = kafka_source_restore_position,
    .replay_plan = kafka_source_replay_plan,
    .split = kafka_source_split,
    .wait_fd = kafka_source_wait_fd,
};
