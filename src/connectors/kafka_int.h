/*
** kafka_int.h — what the kafka connector's files share, private to them:
** kafka_conf.c (client configuration, librdkafka's log lines, bounded waits),
** kafka_source.c and kafka_sink.c.
**
** Waits.  No librdkafka call of the connector blocks for long: each gets at
** most DP_KAFKA_SLICE_MS and is called again while the wait's deadline has
** not passed and the handle was not interrupted (dipper_interrupt), so that
** SIGINT/SIGTERM are honoured within a second whatever the broker does.  A
** call that cannot be cut so (rd_kafka_query_watermark_offsets in librdkafka
** 2.0.2 waits for its reply without a timeout) is not used, or runs on a
** thread of its own that the caller waits for in slices
** (rd_kafka_send_offsets_to_transaction, kafka_sink.c).
*/
#ifndef DP_KAFKA_INT_H
#define DP_KAFKA_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "connectors/connector.h"
#include "core/compiler.h"

/* Broker calls that answer at once on a healthy broker; a broker that does
** not answer in this time is reported, not waited for. */
#define DP_KAFKA_QUERY_TIMEOUT_MS 10000
/* The longest one librdkafka call may block. */
#define DP_KAFKA_SLICE_MS 400

/* ---- configuration (kafka_conf.c) ---- */

int dp_kafka_conf_set(dp_diags *d, const dp_table_def *t, rd_kafka_conf_t *conf,
                      const char *key, const char *value);
/* A client configuration from the table's 'properties.*' options, then
** `defaults` (pairs, NULL-terminated) where the user set none, then `fixed`
** on top; the log callback is dp_kafka_log.  *out is the caller's to free
** (or to hand to rd_kafka_new). */
int dp_kafka_make_conf(dp_diags *d, const dp_table_def *t, const char *const *fixed,
                       const char *const *defaults, rd_kafka_conf_t **out);
/* The value format's name ('format', else 'value.format', else json). */
const char *dp_kafka_format(const dp_table_def *t);
/* Errors that librdkafka retries by itself: worth asking again. */
bool dp_kafka_transient(rd_kafka_resp_err_t err);

/* A librdkafka handle of the dipper handle `db` (rd_kafka_new, then
** dp_kafka_own), and its end: dp_kafka_disown before rd_kafka_destroy, or
** before handing it to a thread that destroys it later.  In between, its log
** lines go to db's log callback. */
void dp_kafka_own(const rd_kafka_t *rk, dipper *db);
void dp_kafka_disown(const rd_kafka_t *rk);

/* Every line librdkafka logs, and the connector's own notes, go through
** here to the log callback of the handle that owns `rk` (dipper_set_log):
** librdkafka's own lines as DIPPER_LOG_DEBUG, the connector's notes as
** DIPPER_LOG_WARNING; a line of a handle no dipper handle owns is dropped.
** Called on librdkafka's threads. */
void dp_kafka_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf);
/* A note of the connector's (level 4: warning) through dp_kafka_log. */
void dp_kafka_note(const rd_kafka_t *rk, const char *fmt, ...)
    DP_PRINTF(2, 3)
    ;

/* ---- the source as upsert-kafka reads it (kafka_source.c) ---- */

/* Open `s` as the kafka source does, for upsert-kafka (upsert_kafka.c): the
** key ('key.fields', in 'key.format') is decoded from every record, a
** tombstone gives a row of its key (the other physical columns NULL), a
** record without a key is a bad record, and each row's kind (+I, or -D for
** a tombstone) is appended to the change column of the batch read() fills,
** which the caller makes before reading.  The class's other calls are
** dp_source_kafka's. */
int dp_kafka_source_open_upsert(dp_source *s);

/* ---- bounded waits (kafka_conf.c) ---- */

int64_t dp_kafka_now_ms(void);

typedef struct dp_kwait {
  dipper *db;       /* whose interrupt flag is watched; NULL: none */
  int64_t deadline; /* dp_kafka_now_ms() time */
} dp_kwait;

dp_kwait dp_kwait_start(dipper *db, int total_ms);
/* True when dipper_interrupt was called on the handle. */
bool dp_kafka_interrupted(dipper *db);
/* The timeout for the next call, at most DP_KAFKA_SLICE_MS; 0 when the wait
** is over: interrupted, or past its deadline (*why says which when not NULL:
** DIPPER_INTERRUPTED or DIPPER_TIMEOUT). */
int dp_kwait_slice(const dp_kwait *w, int *why);
/* Sleep a little (100 ms, less near the deadline) before asking again. */
void dp_kwait_nap(const dp_kwait *w);

#endif /* DP_KAFKA_INT_H */
