/*
** streaming.h — Spark Structured Streaming queries managed from C, over a
** Spark Connect session (client.h).
**
** Owns: starting a query (a WriteStreamOperationStart command) and the
** handle it returns (id, run id, name); the StreamingQueryCommand calls on a
** handle (status, last and recent progress, await termination, stop,
** process-all-available, exception, explain); the StreamingQueryManagerCommand
** calls (active queries, await any termination, reset terminated); the
** listener bus (StreamingQueryListenerBusCommand: a long-running execution of
** JSON events, handed to a callback parsed); and the parsing of Spark's
** progress JSON into dp_spark_progress (progress.c).
** Does not own: the session, reattachment, errors and keep-alive (client.c),
** or building the command (translate_stream.c).
**
** Every call takes the session it runs on; a handle keeps no pointer to it,
** so handles outlive nothing and may be kept after a reconnect.
*/
#ifndef DP_SPARK_STREAMING_H
#define DP_SPARK_STREAMING_H

#include <stdbool.h>
#include <stdint.h>

#include "spark/client.h"

/* ---- progress (progress.c) ---- */

/* One source of a progress report. Strings are NUL-terminated and owned by
** the dp_spark_progress they belong to. */
typedef struct dp_spark_source_progress {
  const char *description;    /* "KafkaV2[Subscribe[payment_msg]]" */
  const char *start_offset;   /* the offsets as Spark's JSON text ("{\"t\":{\"0\":5}}"), or NULL */
  const char *end_offset;
  const char *latest_offset;
  int64_t num_input_rows;
  double input_rows_per_second;     /* NaN when Spark left it out */
  double processed_rows_per_second; /* NaN when Spark left it out */
} dp_spark_source_progress;

/* One stateful operator of a progress report. */
typedef struct dp_spark_state_progress {
  const char *operator_name;  /* "stateStoreSave", "symmetricHashJoin", "dedupe", ... */
  int64_t num_rows_total;
  int64_t num_rows_updated;
  int64_t num_rows_removed;
  int64_t num_rows_dropped_by_watermark;
  int64_t memory_used_bytes;
} dp_spark_state_progress;

/* A StreamingQueryProgress.  Counters Spark did not send are -1, rates NaN. */
typedef struct dp_spark_progress {
  const char *id, *run_id, *name; /* name NULL for an unnamed query */
  const char *timestamp;          /* "2024-01-01T00:00:00.000Z" as sent */
  int64_t timestamp_us;           /* the same in µs since the epoch (UTC); -1 if unparsable */
  int64_t batch_id;
  int64_t batch_duration_ms;
  int64_t num_input_rows;
  double input_rows_per_second;
  double processed_rows_per_second;
  /* durationMs */
  int64_t trigger_execution_ms, add_batch_ms, get_batch_ms, latest_offset_ms,
      query_planning_ms, wal_commit_ms, commit_offsets_ms;
  /* eventTime.watermark in µs since the epoch; has_watermark false when the
     query has none (Spark then omits it or sends 1970-01-01T00:00:00.000Z,
     which is kept: it means "no event seen yet") */
  bool has_watermark;
  int64_t watermark_us;
  int nstate;
  dp_spark_state_progress *state;
  int64_t state_rows_total;       /* sums over the operators (0 when none) */
  int64_t state_rows_dropped_by_watermark;
  int nsources;
  dp_spark_source_progress *sources;
  const char *sink_description;   /* NULL when absent */
  int64_t sink_output_rows;
  void *mem_;                     /* private: the memory all of the above lives in */
} dp_spark_progress;

/* Parse one progress JSON text (as sent by lastProgress, recentProgress or a
** QueryProgressEvent's "progress" member).  DIPPER_OK, or DIPPER_DATA with
** `err` (may be NULL) saying where the JSON is broken; DIPPER_NOMEM.  *out is
** zeroed first; free it with dp_spark_progress_free (also after a failure). */
int dp_spark_progress_parse(const char *json, size_t len, dp_spark_progress *out, dp_buf *err);
void dp_spark_progress_free(dp_spark_progress *p);

/* ---- queries ---- */

typedef struct dp_sq {
  char id[40];       /* the query id (a UUID): stable across restarts from a checkpoint */
  char run_id[40];   /* this run's id */
  char *name;        /* malloc'd; NULL for an unnamed query */
} dp_sq;

/* Execute a command plan holding a WriteStreamOperationStart and fill *q from
** its result.  Free q with dp_sq_free.  The query runs on the server until it
** ends or is stopped; the session must stay open (and alive) meanwhile. */
int dp_sq_start(dp_sc *s, const Spark__Connect__Plan *command, dp_sq *q, dp_sc_error *err);
void dp_sq_free(dp_sq *q);  /* frees q->name; the struct is reusable */

typedef struct dp_sq_status {
  char message[256];      /* "Waiting for data to arrive", ... */
  bool data_available;
  bool trigger_active;
  bool active;
} dp_sq_status;
int dp_sq_get_status(dp_sc *s, const dp_sq *q, dp_sq_status *st, dp_sc_error *err);

/* The last progress: DIPPER_OK with *has false when no batch has run yet. */
int dp_sq_last_progress(dp_sc *s, const dp_sq *q, dp_spark_progress *p, bool *has,
                        dp_sc_error *err);
/* The recent progress (oldest first): *out malloc'd array of *n reports; free
** each with dp_spark_progress_free, then free(*out). */
int dp_sq_recent_progress(dp_sc *s, const dp_sq *q, dp_spark_progress **out, int *n,
                          dp_sc_error *err);

/* Wait for the query to end, at most timeout_ms (< 0: no limit).  *terminated
** says whether it has.  A query that failed has terminated: read its
** exception with dp_sq_exception. */
int dp_sq_await(dp_sc *s, const dp_sq *q, int64_t timeout_ms, bool *terminated,
                dp_sc_error *err);
int dp_sq_stop(dp_sc *s, const dp_sq *q, dp_sc_error *err);
/* Block until every input available now has been processed (tests). */
int dp_sq_process_all_available(dp_sc *s, const dp_sq *q, dp_sc_error *err);
/* The exception that ended the query: *text malloc'd ("<error class>: <message>"),
** NULL when it has none. */
int dp_sq_exception(dp_sc *s, const dp_sq *q, char **text, dp_sc_error *err);
/* The physical plan as Spark explains it; *text malloc'd. */
int dp_sq_explain(dp_sc *s, const dp_sq *q, bool extended, char **text, dp_sc_error *err);

/* The session's active queries: *out malloc'd array of *n handles; dp_sq_free
** each, then free(*out). */
int dp_sq_active(dp_sc *s, dp_sq **out, int *n, dp_sc_error *err);
/* Wait until any query of the session ends (timeout_ms < 0: no limit). */
int dp_sq_await_any(dp_sc *s, int64_t timeout_ms, bool *terminated, dp_sc_error *err);
int dp_sq_reset_terminated(dp_sc *s, dp_sc_error *err);

/* ---- the listener bus ---- */

typedef enum dp_sq_event_kind {
  DP_SQ_EVENT_PROGRESS = 1,
  DP_SQ_EVENT_TERMINATED,
  DP_SQ_EVENT_IDLE,
  DP_SQ_EVENT_LISTENING, /* the server has put the listener in place: every event from
                            now on is delivered (a query that ended before is not) */
} dp_sq_event_kind;

typedef struct dp_sq_event {
  dp_sq_event_kind kind;
  const char *json;              /* the event as Spark sent it; borrowed for the callback */
  const char *id, *run_id;       /* the query's; borrowed for the callback ("" if absent) */
  const dp_spark_progress *progress; /* DP_SQ_EVENT_PROGRESS: parsed; else NULL */
  const char *exception;         /* DP_SQ_EVENT_TERMINATED: the error, or NULL if it ended well */
} dp_sq_event;

/* Return DIPPER_OK to go on listening, anything else to stop (that code is
** then returned by dp_sq_listen, DIPPER_OK for DIPPER_INTERRUPTED). */
typedef int (*dp_sq_event_fn)(void *user, const dp_sq_event *ev);

/* Register this session's listener-bus listener and hand every event of the
** session's queries (Spark's bus is per session) to fn until fn stops,
** deadline_ms passes (0: none) or the session ends; then remove the listener.
** The session is busy meanwhile with the bus's stream; fn may still make
** calls on it (another stream on the same connection), e.g. on
** DP_SQ_EVENT_LISTENING, to see which queries ended before the listener was
** in place.  The start of a query is no bus event: dp_sq_start reports it. */
int dp_sq_listen(dp_sc *s, dp_sq_event_fn fn, void *user, int64_t deadline_ms,
                 dp_sc_error *err);

#endif /* DP_SPARK_STREAMING_H */
