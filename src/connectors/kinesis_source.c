/*
** kinesis_source.c — the `kinesis` source: the shards of one stream, read
** with GetRecords (polling; no enhanced fan-out), through kinesis_client.c.
**
** Shards.  The first plan lists the stream's shards (ListShards, paged by
** NextToken).  A shard is read once every parent it has in the list
** (ParentShardId, AdjacentParentShardId) is finished, so after a split or a
** merge the records of one partition key come in order: all of the parent's,
** then the child's.  A shard is finished when GetRecords returns no
** NextShardIterator (it was closed and is read to its end); the ChildShards
** of that answer add the shard's children to the list (kinesis-mock and
** Kinesis both give them), so no further listing is needed.  Shards whose
** parents have left the list (past the retention) have nothing to wait for.
**
** Start ('scan.stream.initpos'): TRIM_HORIZON (the default here, as in
** dipper's other sources; Flink's is LATEST) starts every shard at its
** oldest record; LATEST starts the open shards at their tip and counts the
** closed ones as finished; AT_TIMESTAMP starts every shard at
** 'scan.stream.initpos-timestamp' (ISO-8601, or epoch seconds).  Children
** found later always start at TRIM_HORIZON.  A shard that has handed out a
** record resumes AFTER_SEQUENCE_NUMBER the last one.
**
** Batches.  plan_batch fetches: one GetRecords per readable shard (Limit
** 'scan.shard.getrecords.maxrecordcount', capped by max_rows), again while a
** shard finished and its children became readable, and keeps the raw
** records in order; read decodes them.  Each plan starts at the next shard
** in turn, so that under a row cap a busy shard does not starve the rest.  A shard whose last answer was empty
** is asked again no sooner than 'scan.shard.getrecords.intervalmillis'.
** Throttling (ProvisionedThroughputExceededException) is retried with
** exponential backoff ('scan.shard.getrecords.backoff.base' / '.max' /
** '.expconst', 'scan.shard.getrecords.maxretries'); past the retries the
** shard is left for a later batch, not failed.  An expired iterator is
** replaced by one AFTER_SEQUENCE_NUMBER the last record fetched.
**
** Checkpoints.  The position is, per shard: its id and parents, whether it
** is waiting, readable or finished, its start kind, and the sequence number
** of its last committed record.  A batch's bounds are, per shard it read,
** the last sequence number in the batch and whether the batch finished the
** shard.  replay_plan fetches each named shard up to exactly that sequence
** number (records past it are held, in order, for the next batch), children
** included as their parents' ChildShards name them again.
**
** Rows: the record's data in the table's format ('json', 'csv', 'avro': one
** datum per record, 'raw': the bytes into the one physical column) through
** records.h; metadata `timestamp` (ApproximateArrivalTimestamp,
** TIMESTAMP_LTZ(3)), `shard-id`, `sequence-number`, `partition-key`.  Bad
** records follow 'dipper.bad-records', placed as "shard S sequence N".
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "connectors/kinesis_int.h"
#include "connectors/records.h"
#include "core/grow.h"

/* Rounds of GetRecords in one plan: more only while shards finish and
** their children become readable. */
#define MAX_ROUNDS 8
/* How long a replayed batch may take to fetch its logged records. */
#define REPLAY_TIMEOUT_MS 120000

typedef enum meta_kind { META_NONE, META_TIMESTAMP, META_SHARD, META_SEQ, META_KEY } meta_kind;
typedef enum start_kind { ST_TRIM, ST_LATEST, ST_AT_TS } start_kind;
typedef enum shard_state { SH_WAIT, SH_READ, SH_DONE } shard_state;

typedef struct kshard {
  char *id, *parent, *adjacent; /* parents NULL: none */
  uint8_t state;                /* committed: shard_state */
  uint8_t start;                /* start_kind while pos is NULL */
  char *pos;                    /* last committed record's sequence number; NULL: none */
  char *next;                   /* last record in the planned batch; NULL: as pos */
  char *fetched;                /* last record fetched (batch or held); NULL: as next */
  char *iter;                   /* the iterator for the next GetRecords; NULL: ask */
  bool active;                  /* readable in this plan */
  bool end_seen;                /* the iterator ended: closed and read to its end */
  int64_t not_before_ms;        /* ask no sooner (throttled, or empty last time) */
  int64_t nheld;                /* records of this shard held past a replayed batch */
  /* replay_plan's bounds for this shard */
  char *target;                 /* last sequence number to fetch; NULL: none */
  bool target_end;              /* the batch finished the shard */
} kshard;

typedef struct krec {
  int shard;
  bool has_time;
  int64_t time_us;
  size_t data, ndata, key, nkey, seq, nseq; /* offsets into the store's bytes */
} krec;

typedef struct kstore {
  dp_buf bytes;
  krec *recs;
  int64_t n, cap;
} kstore;

/* Bounds named by a replayed batch for shards not (yet) in the list. */
typedef struct kbound {
  char *id, *seq;
  bool end;
} kbound;

typedef struct kinesis_source {
  dipper *db;
  dp_kinesis *kc;
  dp_arena *arena;
  dp_kin_json get_records, list_shards, get_iter;
  int nshards, cap;
  kshard *shards;
  bool listed;          /* the shard list is known (listed, or restored) */
  bool replay;
  int nbounds;
  kbound *bounds;
  kstore batch, held;
  int64_t cursor;       /* next record of the batch to read */
  start_kind start;
  double start_ts;      /* AT_TIMESTAMP: epoch seconds */
  int64_t max_records, interval_ms;
  uint64_t plans;       /* plans so far */
  int first;            /* the shard this plan's rounds start at (logged with its bounds) */
  dp_kin_backoff backoff;
  bool raw;
  int raw_col;
  bool decoder_open;
  dp_record_decoder dec;
  dp_bad_records bad;
  meta_kind *meta;      /* per scan column */
  dp_buf req;
} kinesis_source;

/* ---- small helpers ---- */

static char *dupn(const char *p, size_t n) {
  char *s = malloc(n + 1);
  if (s) {
    memcpy(s, p, n);
    s[n] = '\0';
  }
  return s;
}

static int set_str(char **dst, const char *p, size_t n) {
  char *s = p ? dupn(p, n) : NULL;
  if (p && !s) return DIPPER_NOMEM;
  free(*dst);
  *dst = s;
  return DIPPER_OK;
}

static int find_shard(const kinesis_source *ks, const char *id) {
  for (int i = 0; id && i < ks->nshards; i++)
    if (strcmp(ks->shards[i].id, id) == 0) return i;
  return -1;
}

static void shard_free(kshard *sh) {
  free(sh->id);
  free(sh->parent);
  free(sh->adjacent);
  free(sh->pos);
  free(sh->next);
  free(sh->fetched);
  free(sh->iter);
  free(sh->target);
}

/* A new shard at the end of the list (parents may be NULL). */
static int add_shard(kinesis_source *ks, const char *id, size_t n, const char *parent, size_t np,
                     const char *adj, size_t na, int *out) {
  if (dp_grow_i(&ks->shards, &ks->cap, ks->nshards + 1, sizeof *ks->shards, 16) != DIPPER_OK)
    return DIPPER_NOMEM;
  kshard *sh = &ks->shards[ks->nshards];
  memset(sh, 0, sizeof *sh);
  sh->id = dupn(id, n);
  if (parent && np) sh->parent = dupn(parent, np);
  if (adj && na) sh->adjacent = dupn(adj, na);
  if (!sh->id || (parent && np && !sh->parent) || (adj && na && !sh->adjacent)) {
    shard_free(sh);
    return DIPPER_NOMEM;
  }
  sh->state = SH_WAIT;
  sh->start = ST_TRIM;
  *out = ks->nshards++;
  return DIPPER_OK;
}

static void store_clear(kstore *st) {
  st->n = 0;
  st->bytes.len = 0;
}

static void store_free(kstore *st) {
  dp_buf_free(&st->bytes);
  free(st->recs);
  memset(st, 0, sizeof *st);
}

static int store_add(kstore *st, const krec *src, const char *data, const char *key,
                     const char *seq) {
  if (dp_grow(&st->recs, &st->cap, st->n + 1, sizeof *st->recs, 256) != DIPPER_OK) return DIPPER_NOMEM;
  krec *r = &st->recs[st->n];
  *r = *src;
  r->data = st->bytes.len;
  dp_buf_put(&st->bytes, data, src->ndata);
  r->key = st->bytes.len;
  dp_buf_put(&st->bytes, key, src->nkey);
  r->seq = st->bytes.len;
  dp_buf_put(&st->bytes, seq, src->nseq);
  dp_buf_putc(&st->bytes, '\0'); /* the sequence number reads as a C string */
  if (st->bytes.oom) return DIPPER_NOMEM;
  st->n++;
  return DIPPER_OK;
}

/* The shard's last record so far: of the fetch, the batch, the position. */
static const char *last_fetched(const kshard *sh) {
  return sh->fetched ? sh->fetched : sh->next ? sh->next : sh->pos;
}

/* Finished by the end of the planned batch. */
static bool done_now(const kshard *sh) {
  return sh->state == SH_DONE || (sh->active && sh->end_seen && sh->nheld == 0);
}

/* ---- opening ---- */

static meta_kind meta_of(const char *key) {
  if (!strcasecmp(key, "timestamp")) return META_TIMESTAMP;
  if (!strcasecmp(key, "shard-id")) return META_SHARD;
  if (!strcasecmp(key, "sequence-number")) return META_SEQ;
  if (!strcasecmp(key, "partition-key")) return META_KEY;
  return META_NONE;
}

static int open_columns(dp_source *s, kinesis_source *ks) {
  const dp_table_def *t = s->table;
  const dp_schema *sc = s->schema;
  ks->meta = calloc((size_t)sc->ncols + 1, sizeof *ks->meta);
  if (!ks->meta) return DIPPER_NOMEM;
  int nvalue = 0;
  ks->raw_col = -1;
  for (int i = 0; i < sc->ncols; i++) {
    int k = dp_schema_find(&t->schema, sc->cols[i].name);
    if (k >= 0 && t->cols[k].kind == DP_CK_METADATA) {
      const char *key = t->cols[k].metadata_key ? t->cols[k].metadata_key : sc->cols[i].name;
      ks->meta[i] = meta_of(key);
      if (ks->meta[i] == META_NONE)
        return dp_kinesis_error(ks->kc, DIPPER_UNSUPPORTED,
                                "Kinesis has no metadata '%s'; use timestamp, shard-id, "
                                "sequence-number or partition-key",
                                key);
    } else {
      nvalue++;
      ks->raw_col = i;
    }
  }
  const char *fmt = t->format ? t->format : "json";
  if (strcasecmp(fmt, "raw") == 0) {
    ks->raw = true;
    const dp_type *ty = ks->raw_col >= 0 ? sc->cols[ks->raw_col].type : NULL;
    if (nvalue != 1 || !ty || (ty->kind != DP_T_STRING && ty->kind != DP_T_BYTES))
      return dp_kinesis_error(ks->kc, DIPPER_UNSUPPORTED,
                              "format 'raw' reads each record into one STRING or BYTES column; "
                              "declare e.g. `payload BYTES`, or use format 'json' or 'csv'");
    return DIPPER_OK;
  }
  int rc = dp_record_decoder_open(&ks->dec, t, sc, "json", s->diags);
  if (rc == DIPPER_OK) ks->decoder_open = true;
  return rc;
}

/* The answers' shapes, as types the JSON decoder fills. */
static int open_answers(kinesis_source *ks) {
  dp_arena *a = ks->arena;
  const dp_type *str = dp_type_of(DP_T_STRING);
  dp_field rec[] = {{"Data", dp_type_of(DP_T_BYTES)},
                    {"PartitionKey", str},
                    {"SequenceNumber", str},
                    {"ApproximateArrivalTimestamp", dp_type_of(DP_T_DOUBLE)}};
  dp_field child[] = {{"ShardId", str}, {"ParentShards", dp_type_array(a, str)}};
  dp_field gr[] = {{"Records", dp_type_array(a, dp_type_row(a, 4, rec))},
                   {"NextShardIterator", str},
                   {"ChildShards", dp_type_array(a, dp_type_row(a, 2, child))},
                   {"MillisBehindLatest", dp_type_of(DP_T_BIGINT)}};
  dp_field range[] = {{"StartingSequenceNumber", str}, {"EndingSequenceNumber", str}};
  dp_field shard[] = {{"ShardId", str},
                      {"ParentShardId", str},
                      {"AdjacentParentShardId", str},
                      {"SequenceNumberRange", dp_type_row(a, 2, range)}};
  dp_field ls[] = {{"Shards", dp_type_array(a, dp_type_row(a, 4, shard))}, {"NextToken", str}};
  dp_field gi[] = {{"ShardIterator", str}};
  if (dp_arena_failed(a)) return DIPPER_NOMEM;
  int rc = dp_kin_json_open(&ks->get_records, a, 4, gr);
  if (rc == DIPPER_OK) rc = dp_kin_json_open(&ks->list_shards, a, 2, ls);
  if (rc == DIPPER_OK) rc = dp_kin_json_open(&ks->get_iter, a, 1, gi);
  return rc;
}

/* 'scan.stream.initpos-timestamp': epoch seconds, or an ISO-8601 time. */
static int open_timestamp(dp_source *s, kinesis_source *ks) {
  const char *v = dp_table_option(s->table, "scan.stream.initpos-timestamp", "");
  char *end = NULL;
  double secs = strtod(v, &end);
  if (*v && end && *end == '\0') {
    ks->start_ts = secs;
    return DIPPER_OK;
  }
  dp_value val;
  const dp_type *ty = dp_type_timestamp(ks->arena, DP_T_TIMESTAMP_LTZ, 3);
  if (ty && dp_value_parse(ks->arena, ty, v, strlen(v), &val) && !val.is_null) {
    ks->start_ts = (double)val.u.i / 1e6;
    return DIPPER_OK;
  }
  return dp_kinesis_error(ks->kc, DIPPER_OPTION,
                          "'scan.stream.initpos-timestamp' = '%s' is neither epoch seconds nor "
                          "an ISO-8601 time such as '2024-01-01T00:00:00Z'",
                          v);
}

static void kinesis_source_close(dp_source *s) {
  kinesis_source *ks = s->state;
  if (!ks) return;
  dp_kin_json_close(&ks->get_records);
  dp_kin_json_close(&ks->list_shards);
  dp_kin_json_close(&ks->get_iter);
  for (int i = 0; i < ks->nshards; i++) shard_free(&ks->shards[i]);
  free(ks->shards);
  for (int i = 0; i < ks->nbounds; i++) {
    free(ks->bounds[i].id);
    free(ks->bounds[i].seq);
  }
  free(ks->bounds);
  store_free(&ks->batch);
  store_free(&ks->held);
  if (ks->decoder_open) dp_record_decoder_close(&ks->dec);
  dp_bad_records_close(&ks->bad);
  free(ks->meta);
  dp_buf_free(&ks->req);
  dp_kinesis_free(ks->kc);
  if (ks->arena) dp_arena_free(ks->arena);
  free(ks);
  s->state = NULL;
}

static int kinesis_source_open(dp_source *s) {
  kinesis_source *ks = calloc(1, sizeof *ks);
  if (!ks) return DIPPER_NOMEM;
  s->state = ks;
  ks->db = s->db;
  ks->arena = dp_arena_new(0);
  if (!ks->arena) return DIPPER_NOMEM;
  const dp_table_def *t = s->table;
  int rc = dp_kinesis_new(s->db, s->diags, t, &ks->kc);
  if (rc != DIPPER_OK) return rc;
  const char *pos = dp_table_option(t, "scan.stream.initpos", "TRIM_HORIZON");
  ks->start = !strcasecmp(pos, "LATEST")         ? ST_LATEST
              : !strcasecmp(pos, "AT_TIMESTAMP") ? ST_AT_TS
                                                 : ST_TRIM;
  if (ks->start == ST_AT_TS && (rc = open_timestamp(s, ks)) != DIPPER_OK) return rc;
  ks->max_records = dp_kinesis_int_option(t, "scan.shard.getrecords.maxrecordcount", 10000);
  if (ks->max_records < 1) ks->max_records = 1;
  if (ks->max_records > 10000) ks->max_records = 10000;
  ks->interval_ms = dp_kinesis_int_option(t, "scan.shard.getrecords.intervalmillis", 200);
  ks->backoff = dp_kinesis_backoff(t, "scan.shard.getrecords.backoff.base",
                                   "scan.shard.getrecords.backoff.max",
                                   "scan.shard.getrecords.backoff.expconst",
                                   "scan.shard.getrecords.maxretries",
                                   (dp_kin_backoff){300, 1000, 1.5, 3});
  dp_bad_records_init(&ks->bad, t);
  rc = open_answers(ks);
  if (rc == DIPPER_OK) rc = open_columns(s, ks);
  return rc;
}

/* ---- the shard list ---- */

static int answer_error(kinesis_source *ks, const char *action, const dp_format_error *fe) {
  return dp_kinesis_error(ks->kc, DIPPER_PROTOCOL,
                          "Kinesis %s on stream `%s`: an answer that does not read (%s)", action,
                          dp_kinesis_stream(ks->kc), fe->msg);
}

static int call(kinesis_source *ks, const char *action, dp_kin_json *j) {
  int rc = dp_kinesis_call(ks->kc, action, ks->req.data, ks->req.len, &ks->backoff);
  if (rc != DIPPER_OK) return rc == DIPPER_NOMEM ? rc : dp_kinesis_fail(ks->kc, action);
  size_t n = 0;
  const char *body = dp_kinesis_answer(ks->kc, &n);
  dp_format_error fe;
  rc = dp_kin_json_parse(j, body, n, &fe);
  return rc == DIPPER_PROTOCOL ? answer_error(ks, action, &fe) : rc;
}

static void req_begin(kinesis_source *ks) {
  ks->req.len = 0;
  ks->req.oom = false;
  dp_buf_puts(&ks->req, "{\"StreamName\":");
  dp_json_put_string(&ks->req, dp_kinesis_stream(ks->kc), strlen(dp_kinesis_stream(ks->kc)));
}

/* One page of ListShards into the list; *more when NextToken came. */
static int list_page(kinesis_source *ks, char **token) {
  ks->req.len = 0;
  ks->req.oom = false;
  if (*token) { /* a token request names no stream */
    dp_buf_puts(&ks->req, "{\"NextToken\":");
    dp_json_put_string(&ks->req, *token, strlen(*token));
    dp_buf_putc(&ks->req, '}');
  } else {
    req_begin(ks);
    dp_buf_puts(&ks->req, "}");
  }
  if (ks->req.oom) return DIPPER_NOMEM;
  int rc = call(ks, "ListShards", &ks->list_shards);
  if (rc != DIPPER_OK) return rc;
  dp_batch *row = ks->list_shards.row;
  const dp_vector *list = row->cols[0];
  int64_t lo = 0, hi = 0;
  if (!dp_vector_is_null(list, 0)) dp_vector_list_bounds(list, 0, &lo, &hi);
  const dp_vector *sv = list->children[0];
  for (int64_t i = lo; i < hi && rc == DIPPER_OK; i++) {
    size_t n = 0, np = 0, na = 0, ne = 0;
    const char *id = dp_kin_str(sv->children[0], i, &n);
    const char *par = dp_kin_str(sv->children[1], i, &np);
    const char *adj = dp_kin_str(sv->children[2], i, &na);
    const dp_vector *range = sv->children[3];
    const char *ending =
        dp_vector_is_null(range, i) ? NULL : dp_kin_str(range->children[1], i, &ne);
    if (!id || n == 0) continue;
    char idz[256];
    snprintf(idz, sizeof idz, "%.*s", (int)n, id);
    if (find_shard(ks, idz) >= 0) continue;
    int at = -1;
    rc = add_shard(ks, id, n, par, np, adj, na, &at);
    if (rc != DIPPER_OK) break;
    kshard *sh = &ks->shards[at];
    sh->start = (uint8_t)(ks->start == ST_AT_TS ? ST_AT_TS : ST_TRIM);
    if (ks->start == ST_LATEST) {
      if (ending) sh->state = SH_DONE; /* closed before the query began */
      else sh->start = ST_LATEST;
    }
  }
  size_t tn = 0;
  const char *next = rc == DIPPER_OK ? dp_kin_str(row->cols[1], 0, &tn) : NULL;
  char *t = next && tn ? dupn(next, tn) : NULL;
  if (next && tn && !t) rc = DIPPER_NOMEM;
  free(*token);
  *token = t;
  return rc;
}

static int list_shards(kinesis_source *ks) {
  char *token = NULL;
  int rc;
  int pages = 0;
  do {
    rc = list_page(ks, &token);
  } while (rc == DIPPER_OK && token && ++pages < 10000);
  free(token);
  if (rc == DIPPER_OK) ks->listed = true;
  return rc;
}

/* ---- fetching ---- */

static const char *start_name(int st) {
  return st == ST_LATEST ? "LATEST" : st == ST_AT_TS ? "AT_TIMESTAMP" : "TRIM_HORIZON";
}

static int get_iterator(kinesis_source *ks, kshard *sh) {
  req_begin(ks);
  dp_buf_puts(&ks->req, ",\"ShardId\":");
  dp_json_put_string(&ks->req, sh->id, strlen(sh->id));
  const char *after = last_fetched(sh);
  if (after) {
    dp_buf_puts(&ks->req, ",\"ShardIteratorType\":\"AFTER_SEQUENCE_NUMBER\",");
    dp_buf_puts(&ks->req, "\"StartingSequenceNumber\":");
    dp_json_put_string(&ks->req, after, strlen(after));
  } else {
    dp_buf_printf(&ks->req, ",\"ShardIteratorType\":\"%s\"", start_name(sh->start));
    if (sh->start == ST_AT_TS) dp_buf_printf(&ks->req, ",\"Timestamp\":%.3f", ks->start_ts);
  }
  dp_buf_putc(&ks->req, '}');
  if (ks->req.oom) return DIPPER_NOMEM;
  int rc = call(ks, "GetShardIterator", &ks->get_iter);
  if (rc != DIPPER_OK) return rc;
  size_t n = 0;
  const char *it = dp_kin_str(ks->get_iter.row->cols[0], 0, &n);
  if (!it || !n)
    return dp_kinesis_error(ks->kc, DIPPER_PROTOCOL,
                            "Kinesis GetShardIterator gave shard %s no iterator", sh->id);
  return set_str(&sh->iter, it, n);
}

/* The shard's children named by a GetRecords answer, added to the list. */
static int add_children(kinesis_source *ks, int64_t lo, int64_t hi, const dp_vector *cv) {
  for (int64_t i = lo; i < hi; i++) {
    size_t n = 0;
    const char *id = dp_kin_str(cv->children[0], i, &n);
    if (!id || !n) continue;
    char idz[256];
    snprintf(idz, sizeof idz, "%.*s", (int)n, id);
    if (find_shard(ks, idz) >= 0) continue;
    const dp_vector *pv = cv->children[1];
    const char *par[2] = {NULL, NULL};
    size_t pn[2] = {0, 0};
    if (!dp_vector_is_null(pv, i)) {
      int64_t plo = 0, phi = 0;
      dp_vector_list_bounds(pv, i, &plo, &phi);
      for (int64_t k = plo; k < phi && k - plo < 2; k++)
        par[k - plo] = dp_kin_str(pv->children[0], k, &pn[k - plo]);
    }
    int at = -1;
    int rc = add_shard(ks, id, n, par[0], pn[0], par[1], pn[1], &at);
    if (rc != DIPPER_OK) return rc;
  }
  return DIPPER_OK;
}

/* One answer's records, to the batch (or, past a replay's bound, held). */
static int take_records(kinesis_source *ks, int si, const dp_vector *rv, int64_t lo, int64_t hi,
                        int64_t *taken) {
  kshard *sh = &ks->shards[si];
  const dp_vector *rows = rv->children[0];
  for (int64_t i = lo; i < hi; i++) {
    krec r = {.shard = si};
    const char *data = dp_kin_str(rows->children[0], i, &r.ndata);
    const char *key = dp_kin_str(rows->children[1], i, &r.nkey);
    const char *seq = dp_kin_str(rows->children[2], i, &r.nseq);
    if (!seq || r.nseq == 0)
      return dp_kinesis_error(ks->kc, DIPPER_PROTOCOL,
                              "Kinesis GetRecords gave a record of shard %s no SequenceNumber",
                              sh->id);
    if (!data) data = "", r.ndata = 0;
    if (!key) key = "", r.nkey = 0;
    const dp_vector *ts = rows->children[3];
    if (!dp_vector_is_null(ts, i)) {
      r.has_time = true;
      r.time_us = (int64_t)llround(dp_vector_get_f64(ts, i) * 1000.0) * 1000;
    }
    int rc = set_str(&sh->fetched, seq, r.nseq);
    if (rc != DIPPER_OK) return rc;
    bool past = ks->replay && (!sh->target || sh->nheld > 0 ||
                               dp_kinesis_seq_cmp(sh->fetched, sh->target) > 0);
    kstore *st = past ? &ks->held : &ks->batch;
    if ((rc = store_add(st, &r, data, key, seq)) != DIPPER_OK) return rc;
    if (past) {
      sh->nheld++;
    } else {
      if ((rc = set_str(&sh->next, seq, r.nseq)) != DIPPER_OK) return rc;
      (*taken)++;
    }
  }
  return DIPPER_OK;
}

/* One GetRecords of shard si, at most `limit` records. */
static int fetch(kinesis_source *ks, int si, int64_t limit, int64_t *taken) {
  kshard *sh = &ks->shards[si];
  for (int expired = 0;; expired++) {
    int rc = sh->iter ? DIPPER_OK : get_iterator(ks, sh);
    if (rc != DIPPER_OK) return rc;
    ks->req.len = 0;
    ks->req.oom = false;
    dp_buf_puts(&ks->req, "{\"ShardIterator\":");
    dp_json_put_string(&ks->req, sh->iter, strlen(sh->iter));
    dp_buf_printf(&ks->req, ",\"Limit\":%lld}", (long long)limit);
    if (ks->req.oom) return DIPPER_NOMEM;
    rc = dp_kinesis_call(ks->kc, "GetRecords", ks->req.data, ks->req.len, &ks->backoff);
    if (rc == DIPPER_REMOTE && dp_kinesis_err(ks->kc) == KIN_EXPIRED && expired < 3) {
      free(sh->iter);
      sh->iter = NULL;
      continue;
    }
    if (rc == DIPPER_REMOTE && dp_kinesis_err(ks->kc) == KIN_THROTTLED) {
      /* past the retries: the shard waits for a later batch */
      sh->not_before_ms = dp_kinesis_now_ms() + ks->backoff.max_ms;
      dp_kinesis_note(ks->kc, "GetRecords of shard %s throttled %d times; trying again later",
                      sh->id, ks->backoff.max_retries + 1);
      return DIPPER_OK;
    }
    if (rc != DIPPER_OK) return rc == DIPPER_NOMEM ? rc : dp_kinesis_fail(ks->kc, "GetRecords");
    break;
  }
  size_t n = 0;
  const char *body = dp_kinesis_answer(ks->kc, &n);
  dp_format_error fe;
  int rc = dp_kin_json_parse(&ks->get_records, body, n, &fe);
  if (rc == DIPPER_PROTOCOL) return answer_error(ks, "GetRecords", &fe);
  if (rc != DIPPER_OK) return rc;
  dp_batch *row = ks->get_records.row;
  int64_t lo = 0, hi = 0;
  if (!dp_vector_is_null(row->cols[0], 0)) dp_vector_list_bounds(row->cols[0], 0, &lo, &hi);
  rc = take_records(ks, si, row->cols[0], lo, hi, taken);
  if (rc != DIPPER_OK) return rc;
  sh = &ks->shards[si];
  if (hi == lo) sh->not_before_ms = dp_kinesis_now_ms() + ks->interval_ms;
  size_t itn = 0;
  const char *it = dp_kin_str(row->cols[1], 0, &itn);
  if (it && itn) return set_str(&sh->iter, it, itn);
  /* the end of a closed shard: its children come next */
  free(sh->iter);
  sh->iter = NULL;
  sh->end_seen = true;
  const dp_vector *cv = row->cols[2];
  if (dp_vector_is_null(cv, 0)) return DIPPER_OK;
  dp_vector_list_bounds(cv, 0, &lo, &hi);
  return add_children(ks, lo, hi, cv->children[0]);
}

static bool parent_done(const kinesis_source *ks, const char *id) {
  int p = find_shard(ks, id);
  return p < 0 || done_now(&ks->shards[p]);
}

/* Waiting shards whose parents are finished become readable. */
static void activate(kinesis_source *ks) {
  for (int i = 0; i < ks->nshards; i++) {
    kshard *sh = &ks->shards[i];
    if (sh->state == SH_DONE || sh->active) continue;
    if (sh->state == SH_READ ||
        (parent_done(ks, sh->parent) && parent_done(ks, sh->adjacent)))
      sh->active = true;
  }
}

/* Held records (of a replayed batch) lead the next batch, in order. */
static int take_held(kinesis_source *ks, int64_t cap, int64_t *taken) {
  int64_t k = 0;
  for (; k < ks->held.n && (cap <= 0 || *taken < cap); k++) {
    const krec *r = &ks->held.recs[k];
    const char *base = ks->held.bytes.data;
    int rc = store_add(&ks->batch, r, base + r->data, base + r->key, base + r->seq);
    kshard *sh = &ks->shards[r->shard];
    if (rc == DIPPER_OK) rc = set_str(&sh->next, base + r->seq, r->nseq);
    if (rc != DIPPER_OK) return rc;
    sh->nheld--;
    (*taken)++;
  }
  if (k == ks->held.n) {
    store_clear(&ks->held);
    return DIPPER_OK;
  }
  /* keep the rest: move it to the front (rebuild the store) */
  kstore rest = {0};
  for (int64_t j = k; j < ks->held.n; j++) {
    const krec *r = &ks->held.recs[j];
    const char *base = ks->held.bytes.data;
    int rc = store_add(&rest, r, base + r->data, base + r->key, base + r->seq);
    if (rc != DIPPER_OK) {
      store_free(&rest);
      return rc;
    }
  }
  store_free(&ks->held);
  ks->held = rest;
  return DIPPER_OK;
}

/* One round of GetRecords over the readable shards; *ended when a shard
** finished (its children may be readable now). */
static int round_normal(kinesis_source *ks, int64_t cap, int64_t *taken, bool *ended) {
  int64_t now = dp_kinesis_now_ms();
  int n = ks->nshards; /* children added during the round wait for the next */
  /* Each plan starts at the next shard, so that under a row cap a busy
  ** shard does not starve the others (any order of readable shards keeps
  ** per-key order: a child is readable only once its parents are done). */
  int first = n > 0 ? ks->first % n : 0;
  for (int j = 0; j < n; j++) {
    int i = (first + j) % n;
    kshard *sh = &ks->shards[i];
    if (!sh->active || sh->end_seen || sh->nheld > 0 || now < sh->not_before_ms) continue;
    int64_t left = cap > 0 ? cap - *taken : ks->max_records;
    if (left <= 0) break;
    int rc = fetch(ks, i, left < ks->max_records ? left : ks->max_records, taken);
    if (rc != DIPPER_OK) return rc;
    if (ks->shards[i].end_seen) *ended = true;
  }
  return DIPPER_OK;
}

static bool replay_reached(const kshard *sh) {
  const char *at = sh->next ? sh->next : sh->pos;
  if (sh->target && (!at || dp_kinesis_seq_cmp(at, sh->target) < 0)) return false;
  if (sh->target_end && !sh->end_seen) return false;
  return true;
}

/* Bounds named for shards that are in the list now move onto them. */
static void bind_bounds(kinesis_source *ks) {
  for (int b = 0; b < ks->nbounds; b++) {
    int i = find_shard(ks, ks->bounds[b].id);
    if (i < 0 || !ks->bounds[b].id) continue;
    kshard *sh = &ks->shards[i];
    free(sh->target);
    sh->target = ks->bounds[b].seq;
    sh->target_end = ks->bounds[b].end;
    ks->bounds[b].seq = NULL;
    free(ks->bounds[b].id);
    ks->bounds[b].id = NULL;
  }
}

/* A replayed batch: fetch every named shard to its logged bound. */
static int plan_replay(kinesis_source *ks, int64_t *taken) {
  int64_t deadline = dp_kinesis_now_ms() + REPLAY_TIMEOUT_MS;
  for (;;) {
    bind_bounds(ks);
    activate(ks);
    bool all = true, asked = false;
    int n = ks->nshards;
    for (int j = 0; j < n; j++) {
      int i = (ks->first % n + j) % n; /* the order the logged plan read them in */
      kshard *sh = &ks->shards[i];
      if (replay_reached(sh)) continue;
      all = false;
      if (!sh->active || sh->end_seen) continue;
      if (dp_kinesis_now_ms() < sh->not_before_ms) continue;
      int rc = fetch(ks, i, ks->max_records, taken);
      if (rc != DIPPER_OK) return rc;
      asked = true;
    }
    bool unbound = false;
    for (int b = 0; b < ks->nbounds; b++) unbound |= ks->bounds[b].id != NULL;
    if (all && !unbound) break;
    if (dp_kinesis_now_ms() > deadline)
      return dp_kinesis_error(ks->kc, DIPPER_TIMEOUT,
                              "the batch logged before the restart could not be read again "
                              "within %d s (its records have left the stream?); start the query "
                              "with a new checkpoint folder",
                              REPLAY_TIMEOUT_MS / 1000);
    if (!asked && !dp_kinesis_sleep(ks->db, 50))
      return dp_kinesis_error(ks->kc, DIPPER_INTERRUPTED,
                              "interrupted (dipper_interrupt) while reading Kinesis");
  }
  for (int i = 0; i < ks->nshards; i++) {
    free(ks->shards[i].target);
    ks->shards[i].target = NULL;
    ks->shards[i].target_end = false;
  }
  ks->replay = false;
  return DIPPER_OK;
}

static int kinesis_source_plan(dp_source *s, int64_t max_rows, bool *exhausted) {
  kinesis_source *ks = s->state;
  *exhausted = false;
  if (!ks->listed) {
    int rc = list_shards(ks);
    if (rc != DIPPER_OK) return rc;
  }
  store_clear(&ks->batch);
  ks->cursor = 0;
  int64_t taken = 0;
  if (ks->replay) return plan_replay(ks, &taken);
  ks->first = ks->nshards > 0 ? (int)(ks->plans++ % (uint64_t)ks->nshards) : 0;
  int rc = take_held(ks, max_rows, &taken);
  for (int round = 0; rc == DIPPER_OK && round < MAX_ROUNDS; round++) {
    activate(ks);
    bool ended = false;
    rc = round_normal(ks, max_rows, &taken, &ended);
    if (!ended) break;
  }
  return rc;
}

/* ---- reading ---- */

static int append_meta(kinesis_source *ks, dp_vector *v, meta_kind kind, const krec *r) {
  const char *base = ks->batch.bytes.data;
  switch (kind) {
  case META_TIMESTAMP: return r->has_time ? dp_vector_append_i64(v, r->time_us) : dp_vector_append_null(v);
  case META_SHARD: {
    const char *id = ks->shards[r->shard].id;
    return dp_vector_append_str(v, id, strlen(id));
  }
  case META_SEQ: return dp_vector_append_str(v, base + r->seq, r->nseq);
  case META_KEY: return dp_vector_append_str(v, base + r->key, r->nkey);
  case META_NONE:
  default: return dp_vector_append_null(v);
  }
}

static int take(dp_source *s, kinesis_source *ks, const krec *r, dp_batch *out, bool *row) {
  *row = false;
  const char *data = ks->batch.bytes.data + r->data;
  s->metrics.bytes += (int64_t)r->ndata;
  if (ks->raw) {
    int rc = dp_vector_append_str(out->cols[ks->raw_col], data, r->ndata);
    if (rc != DIPPER_OK) return rc;
  } else {
    bool skipped = false;
    dp_format_error fe;
    int rc = dp_record_decode(&ks->dec, data, r->ndata, out, &skipped, &fe);
    if (rc == DIPPER_DATA) {
      char where[400];
      snprintf(where, sizeof where, "stream %s shard %s sequence %s", dp_kinesis_stream(ks->kc),
               ks->shards[r->shard].id, ks->batch.bytes.data + r->seq);
      return dp_bad_record(&ks->bad, s, where, &fe, data, r->ndata);
    }
    if (rc != DIPPER_OK || skipped) return rc;
  }
  for (int c = 0; c < s->schema->ncols; c++) {
    if (ks->meta[c] == META_NONE) continue;
    int rc = append_meta(ks, out->cols[c], ks->meta[c], r);
    if (rc != DIPPER_OK) return rc;
  }
  *row = true;
  s->metrics.rows++;
  return DIPPER_OK;
}

static int kinesis_source_read(dp_source *s, dp_batch *out, int64_t want, bool *done) {
  kinesis_source *ks = s->state;
  int64_t got = 0;
  while (ks->cursor < ks->batch.n && got < want) {
    bool row = false;
    int rc = take(s, ks, &ks->batch.recs[ks->cursor], out, &row);
    if (rc != DIPPER_OK) return rc;
    ks->cursor++;
    if (row) {
      out->nrows++;
      got++;
    }
  }
  *done = ks->cursor >= ks->batch.n;
  return DIPPER_OK;
}

static int kinesis_source_commit(dp_source *s) {
  kinesis_source *ks = s->state;
  for (int i = 0; i < ks->nshards; i++) {
    kshard *sh = &ks->shards[i];
    if (sh->next) {
      free(sh->pos);
      sh->pos = sh->next;
      sh->next = NULL;
    }
    if (done_now(sh)) sh->state = SH_DONE;
    else if (sh->active) sh->state = SH_READ;
  }
  store_clear(&ks->batch);
  ks->cursor = 0;
  return dp_bad_records_flush(&ks->bad, s);
}

/* ---- positions and batch bounds (the checkpoint's bytes) ----
**
** A position: tag 'K', version 1, a uvar count of shards, and per shard its
** id, parent and adjacent parent ("" for none), state (u8: 0 waiting, 1
** readable, 2 finished), start kind (u8) and last committed sequence number
** ("" for none).  A batch's bounds: tag 'k', version 1, a count, and per
** shard the batch read: id, last sequence number in the batch ("" for none)
** and whether the batch finished the shard (u8); after the version, the
** shard the plan's rounds started at (uvar), so that a replay reads the
** shards in the same order.  (A replay reads each shard to its bound in one
** go: when the logged plan read a shard in two rounds, interleaved with
** others, the rows of different shards may come in another order; each
** shard's, and so each key's, never.) */

#define POS_TAG 'K'
#define PLAN_TAG 'k'
#define CODEC_VERSION 1

static int kinesis_source_save_position(dp_source *s, dp_buf *out) {
  kinesis_source *ks = s->state;
  dp_put_u8(out, POS_TAG);
  dp_put_u8(out, CODEC_VERSION);
  dp_put_uvar(out, (uint64_t)ks->nshards);
  for (int i = 0; i < ks->nshards; i++) {
    const kshard *sh = &ks->shards[i];
    dp_put_str(out, sh->id);
    dp_put_str(out, sh->parent);
    dp_put_str(out, sh->adjacent);
    dp_put_u8(out, sh->state);
    dp_put_u8(out, sh->start);
    dp_put_str(out, sh->pos);
  }
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int kinesis_source_save_plan(dp_source *s, dp_buf *out) {
  kinesis_source *ks = s->state;
  uint64_t n = 0;
  for (int i = 0; i < ks->nshards; i++)
    n += ks->shards[i].next != NULL || (ks->shards[i].state != SH_DONE && done_now(&ks->shards[i]));
  dp_put_u8(out, PLAN_TAG);
  dp_put_u8(out, CODEC_VERSION);
  dp_put_uvar(out, (uint64_t)ks->first);
  dp_put_uvar(out, n);
  for (int i = 0; i < ks->nshards; i++) {
    const kshard *sh = &ks->shards[i];
    bool ends = sh->state != SH_DONE && done_now(sh);
    if (!sh->next && !ends) continue;
    dp_put_str(out, sh->id);
    dp_put_str(out, sh->next);
    dp_put_u8(out, ends);
  }
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int corrupt(dp_source *s, const char *what, const char *why) {
  return dp_error(s->diags, DIPPER_CORRUPT, (dp_span){0, 0, 0, 0},
                  "table `%s`: the checkpoint's %s of this Kinesis source does not read back "
                  "(%s); it was damaged, or written by another table: start the query with a "
                  "new checkpoint folder",
                  s->table->name, what, why);
}

/* A string the encoder wrote ("" as NULL); *bad on a damaged or cut one. */
static char *get_opt_str(dp_rd *in, bool *bad) {
  size_t n = 0;
  const uint8_t *p = dp_get_bytes(in, &n);
  if (in->bad || n > 4096) {
    *bad = true;
    return NULL;
  }
  if (n == 0) return NULL;
  char *s = dupn((const char *)p, n);
  if (!s || strlen(s) != n) *bad = true; /* out of memory, or a NUL inside */
  if (*bad) {
    free(s);
    return NULL;
  }
  return s;
}

static int kinesis_source_restore_position(dp_source *s, dp_rd *in) {
  kinesis_source *ks = s->state;
  if (ks->listed || ks->nshards)
    return dp_kinesis_error(ks->kc, DIPPER_MISUSE,
                            "a position is restored before the first batch is planned");
  uint8_t tag = dp_get_u8(in), version = dp_get_u8(in);
  uint64_t n = dp_get_count(in, 6);
  if (in->bad) return corrupt(s, "position", "cut short");
  if (tag != POS_TAG) return corrupt(s, "position", "not a Kinesis source's position");
  if (version != CODEC_VERSION) return corrupt(s, "position", "an unknown version");
  for (uint64_t k = 0; k < n; k++) {
    bool bad = false;
    char *id = get_opt_str(in, &bad);
    char *par = get_opt_str(in, &bad);
    char *adj = get_opt_str(in, &bad);
    uint8_t state = dp_get_u8(in), start = dp_get_u8(in);
    char *pos = get_opt_str(in, &bad);
    int at = -1, rc = DIPPER_OK;
    if (bad || in->bad || !id || state > SH_DONE || start > ST_AT_TS || find_shard(ks, id) >= 0)
      rc = corrupt(s, "position", !id ? "a shard without an id" : "a damaged shard entry");
    if (rc == DIPPER_OK)
      rc = add_shard(ks, id, strlen(id), par, par ? strlen(par) : 0, adj, adj ? strlen(adj) : 0,
                     &at);
    if (rc == DIPPER_OK) {
      ks->shards[at].state = state;
      ks->shards[at].start = start;
      ks->shards[at].pos = pos;
      pos = NULL;
    }
    free(id);
    free(par);
    free(adj);
    free(pos);
    if (rc != DIPPER_OK) return rc;
  }
  if (!dp_rd_done(in)) return corrupt(s, "position", "bytes left over");
  ks->listed = true;
  return DIPPER_OK;
}

static int kinesis_source_replay_plan(dp_source *s, dp_rd *in) {
  kinesis_source *ks = s->state;
  uint8_t tag = dp_get_u8(in), version = dp_get_u8(in);
  uint64_t first = dp_get_uvar(in);
  uint64_t n = dp_get_count(in, 3);
  if (in->bad || first > INT32_MAX) return corrupt(s, "batch bounds", "cut short");
  ks->first = (int)first;
  if (tag != PLAN_TAG) return corrupt(s, "batch bounds", "not a Kinesis source's batch bounds");
  if (version != CODEC_VERSION) return corrupt(s, "batch bounds", "an unknown version");
  ks->bounds = calloc((size_t)n + 1, sizeof *ks->bounds);
  if (!ks->bounds) return DIPPER_NOMEM;
  for (uint64_t k = 0; k < n; k++) {
    bool bad = false;
    kbound *b = &ks->bounds[ks->nbounds];
    b->id = get_opt_str(in, &bad);
    b->seq = get_opt_str(in, &bad);
    b->end = dp_get_u8(in) != 0;
    ks->nbounds++;
    if (bad || in->bad || !b->id) return corrupt(s, "batch bounds", "a damaged shard entry");
    int i = find_shard(ks, b->id);
    if (i >= 0 && b->seq && ks->shards[i].pos &&
        dp_kinesis_seq_cmp(b->seq, ks->shards[i].pos) < 0)
      return corrupt(s, "batch bounds", "a batch that ends before the position it starts at");
  }
  if (!dp_rd_done(in)) return corrupt(s, "batch bounds", "bytes left over");
  ks->replay = true;
  return DIPPER_OK;
}

const dp_source_class dp_source_kinesis = {
    .name = "kinesis",
    .open = kinesis_source_open,
    .plan_batch = kinesis_source_plan,
    .read = kinesis_source_read,
    .commit = kinesis_source_commit,
    .close = kinesis_source_close,
    .save_plan = kinesis_source_save_plan,
    .save_position = kinesis_source_save_position,
    .restore_position = kinesis_source_restore_position,
    .replay_plan = kinesis_source_replay_plan,
};
