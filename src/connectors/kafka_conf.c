/*
** kafka_conf.c — what the kafka source and sink share (kafka_int.h): the
** client configuration from a table's options, librdkafka's log lines, and
** waits cut into short slices that watch the handle's interrupt flag.
**
** 'properties.*' options go to librdkafka as they are; the Java client's
** serializer/deserializer settings have no meaning here and are ignored, and
** a key librdkafka does not know is an error (a typo would otherwise pass).
*/
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* For the handle's interrupt flag only (dp_kafka_interrupted), until the
** handle offers connectors an accessor of their own. */
#include "core/session.h"
#include "connectors/kafka_int.h"

/* Java client settings without a librdkafka meaning. */
static bool java_only(const char *key) {
  static const char *const keys[] = {"key.deserializer", "value.deserializer", "key.serializer",
                                     "value.serializer", "partition.discovery.interval.ms",
                                     "flink.partition-discovery.interval-millis",
                                     "commit.offsets.on.checkpoint", "register.consumer.metrics"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strcmp(keys[i], key) == 0) return true;
  return false;
}

int dp_kafka_conf_set(dp_diags *d, const dp_table_def *t, rd_kafka_conf_t *conf, const char *key,
                    const char *value) {
  char err[512];
  rd_kafka_conf_res_t r = rd_kafka_conf_set(conf, key, value, err, sizeof err);
  if (r == RD_KAFKA_CONF_OK) return DIPPER_OK;
  if (r == RD_KAFKA_CONF_UNKNOWN)
    return dp_error(d, DIPPER_OPTION, t->with_span,
                    "table `%s`: Kafka client property '%s' is not known to librdkafka; remove "
                    "'properties.%s' or spell it as librdkafka does (see its CONFIGURATION.md)",
                    t->name, key, key);
  return dp_error(d, DIPPER_OPTION, t->with_span, "table `%s`: 'properties.%s' = '%s': %s",
                  t->name, key, value, err);
}

int dp_kafka_make_conf(dp_diags *d, const dp_table_def *t, const char *const *fixed,
                     const char *const *defaults, rd_kafka_conf_t **out) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (!conf) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int i = 0; i < t->noptions && rc == DIPPER_OK; i++) {
    const char *k = t->options[i].key;
    if (strncmp(k, "properties.", 11) != 0 || java_only(k + 11)) continue;
    rc = dp_kafka_conf_set(d, t, conf, k + 11, t->options[i].value);
  }
  for (int i = 0; defaults && defaults[i] && rc == DIPPER_OK; i += 2) {
    char key[160];
    snprintf(key, sizeof key, "properties.%s", defaults[i]);
    if (!dp_table_option(t, key, NULL)) rc = dp_kafka_conf_set(d, t, conf, defaults[i], defaults[i + 1]);
  }
  for (int i = 0; fixed && fixed[i] && rc == DIPPER_OK; i += 2)
    rc = dp_kafka_conf_set(d, t, conf, fixed[i], fixed[i + 1]);
  if (rc != DIPPER_OK) {
    rd_kafka_conf_destroy(conf);
    return rc;
  }
  rd_kafka_conf_set_log_cb(conf, dp_kafka_log);
  *out = conf;
  return DIPPER_OK;
}

const char *dp_kafka_format(const dp_table_def *t) {
  const char *f = t->format ? t->format : dp_table_option(t, "value.format", NULL);
  if (!f) f = dp_table_option(t, "format", "json");
  return f;
}

bool dp_kafka_transient(rd_kafka_resp_err_t err) {
  switch (err) {
  case RD_KAFKA_RESP_ERR__TRANSPORT:
  case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
  case RD_KAFKA_RESP_ERR__RESOLVE:
  case RD_KAFKA_RESP_ERR__TIMED_OUT:
  case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
  case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
  case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
  case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
  case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
  case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
  case RD_KAFKA_RESP_ERR__WAIT_COORD:
  case RD_KAFKA_RESP_ERR__IN_PROGRESS: return true;
  default: return false;
  }
}

/* ---- librdkafka's log lines ----
**
** librdkafka calls the log callback on its own threads with the handle, and
** the handle's opaque is the sink's (its delivery reports), so the dipper
** handle a line belongs to is found in a small table of the handles alive,
** under a mutex: a handle is in it from just after rd_kafka_new until just
** before it is destroyed or handed to a thread that outlives the sink. */

typedef struct kafka_owner {
  const rd_kafka_t *rk;
  dipper *db;
} kafka_owner;

static pthread_mutex_t owners_mu = PTHREAD_MUTEX_INITIALIZER;
static kafka_owner *owners;
static int nowners, cap_owners;

void dp_kafka_own(const rd_kafka_t *rk, dipper *db) {
  if (!rk || !db) return;
  pthread_mutex_lock(&owners_mu);
  if (nowners == cap_owners) {
    int cap = cap_owners ? cap_owners * 2 : 8;
    kafka_owner *p = realloc(owners, (size_t)cap * sizeof *p);
    if (p) owners = p, cap_owners = cap;
  }
  if (nowners < cap_owners) owners[nowners++] = (kafka_owner){rk, db};
  pthread_mutex_unlock(&owners_mu);
}

void dp_kafka_disown(const rd_kafka_t *rk) {
  pthread_mutex_lock(&owners_mu);
  for (int i = 0; i < nowners; i++)
    if (owners[i].rk == rk) {
      owners[i] = owners[--nowners];
      break;
    }
  if (nowners == 0) {
    free(owners);
    owners = NULL;
    cap_owners = 0;
  }
  pthread_mutex_unlock(&owners_mu);
}

void dp_kafka_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
  pthread_mutex_lock(&owners_mu);
  dipper *db = NULL;
  for (int i = 0; i < nowners && !db; i++)
    if (owners[i].rk == rk) db = owners[i].db;
  /* under the lock: the handle cannot be disowned, so db not closed, meanwhile */
  if (db) {
    bool ours = level == 4 && fac && strcmp(fac, "DIPPER") == 0;
    dp_session_log(db, ours ? DIPPER_LOG_WARNING : DIPPER_LOG_DEBUG, "kafka %s: %s%s%s",
               rd_kafka_name(rk), ours ? "" : fac ? fac : "", ours ? "" : ": ", buf);
  }
  pthread_mutex_unlock(&owners_mu);
}

void dp_kafka_note(const rd_kafka_t *rk, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dp_kafka_log(rk, 4, "DIPPER", msg);
}

/* ---- bounded waits ---- */

int64_t dp_kafka_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

dp_kwait dp_kwait_start(dipper *db, int total_ms) {
  dp_kwait w = {db, dp_kafka_now_ms() + total_ms};
  return w;
}

int dp_kwait_slice(const dp_kwait *w, int *why) {
  if (dp_kafka_interrupted(w->db)) {
    if (why) *why = DIPPER_INTERRUPTED;
    return 0;
  }
  int64_t left = w->deadline - dp_kafka_now_ms();
  if (left <= 0) {
    if (why) *why = DIPPER_TIMEOUT;
    return 0;
  }
  return left < DP_KAFKA_SLICE_MS ? (int)left : DP_KAFKA_SLICE_MS;
}

void dp_kwait_nap(const dp_kwait *w) {
  int64_t left = w->deadline - dp_kafka_now_ms();
  if (left <= 0) return;
  long ms = left < 100 ? (long)left : 100;
  nanosleep(&(struct timespec){0, ms * 1000 * 1000}, NULL);
}

/* The one place of the connector that reads the handle's private struct. */
bool dp_kafka_interrupted(dipper *db) { return dp_session_interrupted(db); }
