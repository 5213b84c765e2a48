/*
** kinesis_int.h — what the kinesis connector's files share, private to them:
** kinesis_client.c (one HTTP client of the Kinesis Data Streams API, its
** credentials, retries and the decoding of its JSON answers),
** kinesis_source.c and kinesis_sink.c.
**
** The API is JSON over HTTP(S): a POST to the endpoint with
** `X-Amz-Target: Kinesis_20131202.<Action>` and `Content-Type:
** application/x-amz-json-1.1`, signed with AWS Signature V4 (libcurl's
** CURLOPT_AWS_SIGV4, service "kinesis").  An error is an HTTP status >= 400
** with a body {"__type": "<Name>Exception", "message": ...}.
**
** Credentials ('aws.credentials.provider'): BASIC reads
** 'aws.credentials.basic.accesskeyid' / '.secretkey'; ENV_VAR reads
** AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; AUTO (the
** default) is BASIC when the table names a key, else ENV_VAR.  The secret
** key and the session token live only in this client: no message, log line
** or plan shows them (errors name the option, never its value).
**
** Waits: each call has a time limit (DP_KINESIS_CALL_TIMEOUT_MS) and is cut
** short by dipper_interrupt (curl runs in 100 ms slices that ask the
** handle); the sleeps of a backoff are sliced the same way.
*/
#ifndef DP_KINESIS_INT_H
#define DP_KINESIS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "connectors/connector.h"
#include "core/arena.h"
#include "core/compiler.h"
#include "formats/formats.h"

#define DP_KINESIS_CALL_TIMEOUT_MS 30000

/* What a failed call was, for the caller's decision. */
typedef enum dp_kin_err {
  KIN_OK,
  KIN_THROTTLED,   /* ProvisionedThroughputExceeded, LimitExceeded, Throttling: back off */
  KIN_EXPIRED,     /* ExpiredIteratorException: ask for a new iterator */
  KIN_NOT_FOUND,   /* ResourceNotFoundException */
  KIN_TRANSIENT,   /* no answer, HTTP 5xx, InternalFailure: worth asking again */
  KIN_FATAL,       /* anything else: a bad request, bad credentials */
  KIN_INTERRUPTED, /* dipper_interrupt */
} dp_kin_err;

/* Exponential backoff of throttled and transient calls:
** wait min(max_ms, base_ms * expconst^attempt), with jitter. */
typedef struct dp_kin_backoff {
  int64_t base_ms, max_ms;
  double expconst;
  int max_retries; /* retries after the first attempt; then the call gives up */
} dp_kin_backoff;

typedef struct dp_kinesis dp_kinesis;

/* A client of the table's endpoint, region and credentials.  Errors (no
** credentials, libcurl that cannot start) go to d, naming table `t`; *out is
** the caller's to free with dp_kinesis_free. */
int dp_kinesis_new(dipper *db, dp_diags *d, const dp_table_def *t, dp_kinesis **out);
void dp_kinesis_free(dp_kinesis *kc);

/* POST `action` with the JSON body `body` (n bytes), retrying throttled and
** transient failures per `b`.  DIPPER_OK: the answer is dp_kinesis_answer().
** Otherwise dp_kinesis_err() says what failed and dp_kinesis_fail() reports
** it; nothing is reported here, so a caller may handle KIN_EXPIRED or give
** up on KIN_THROTTLED quietly.  Returns DIPPER_INTERRUPTED when interrupted,
** DIPPER_REMOTE for an error answer, DIPPER_CONNECT when nothing answered,
** DIPPER_NOMEM. */
int dp_kinesis_call(dp_kinesis *kc, const char *action, const char *body, size_t n,
                    const dp_kin_backoff *b);
/* The last answer's body (NUL-terminated) and its length. */
const char *dp_kinesis_answer(const dp_kinesis *kc, size_t *n);
dp_kin_err dp_kinesis_err(const dp_kinesis *kc);
/* Report the last failure of `action` as a diagnostic of the table:
** "table `t`: Kinesis GetRecords on stream `s`: <type>: <message>". */
int dp_kinesis_fail(dp_kinesis *kc, const char *action);
/* A diagnostic of the client's table ("table `t`: " and the message). */
int dp_kinesis_error(dp_kinesis *kc, int code, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;
/* A warning line to the handle's log callback. */
void dp_kinesis_note(dp_kinesis *kc, const char *fmt, ...)
    DP_PRINTF(2, 3)
    ;
const char *dp_kinesis_stream(const dp_kinesis *kc);

/* Sleep ms, in slices that watch dipper_interrupt; false when interrupted. */
bool dp_kinesis_sleep(dipper *db, int64_t ms);
int64_t dp_kinesis_now_ms(void);
/* The wait before retry number `attempt` (0 = the first retry). */
int64_t dp_kinesis_backoff_ms(const dp_kin_backoff *b, int attempt);
/* A backoff from the table's options named `prefix`.base / .max / .expconst
** / .maxretries (Flink's 'scan.shard.getrecords.backoff.*' spelling), with
** the defaults given. */
dp_kin_backoff dp_kinesis_backoff(const dp_table_def *t, const char *base_key,
                                  const char *max_key, const char *exp_key,
                                  const char *retries_key, dp_kin_backoff dflt);
/* A whole number option, or dflt when absent (the catalog checked it). */
int64_t dp_kinesis_int_option(const dp_table_def *t, const char *key, int64_t dflt);

/* Decimal sequence numbers compared as numbers (no leading zeros). */
int dp_kinesis_seq_cmp(const char *a, const char *b);

/* ---- JSON answers, read with the project's JSON decoder ---- */

/* A decoder of one answer object into one row of `cols` (nested ROW and
** ARRAY types as the answer's shape; unknown keys are skipped). */
typedef struct dp_kin_json {
  dp_arena *arena;
  dp_schema schema;
  dp_json_decoder *dec;
  dp_batch *row;
} dp_kin_json;

int dp_kin_json_open(dp_kin_json *j, dp_arena *a, int n, const dp_field *cols);
void dp_kin_json_close(dp_kin_json *j);
/* Decode the answer into j->row (row 0), replacing the last one.  A body
** that is not the expected object is DIPPER_PROTOCOL with the reason in e. */
int dp_kin_json_parse(dp_kin_json *j, const char *p, size_t n, dp_format_error *e);
/* A STRING/BYTES cell, or NULL when it is null (*n its length). */
const char *dp_kin_str(const dp_vector *v, int64_t i, size_t *n);

#endif /* DP_KINESIS_INT_H */
