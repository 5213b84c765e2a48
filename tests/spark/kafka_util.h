/*
** kafka_util.h — Kafka helpers for the Spark streaming tests (librdkafka):
** create a topic, produce JSON records, read a topic back from its start.
**
** Owns: nothing beyond the calls; every function opens and closes its own
** client.  Errors are written to `err` (one line) and returned as -1.
**
** Also the harness of the Spark streaming tests (st_*, built on dipper's
** compile pipeline, translate_stream.h and streaming.h): a session and a
** scratch directory unique to the run, input files written atomically,
** a statement compiled, checked for Spark and started, a query run to its
** end (available-now) or drained (process-all-available) and stopped, and
** rows read back through Spark SQL as sorted JSON lines.  Every st_ call
** prints what went wrong and returns nonzero; the tests CHECK the result.
** st_close stops every query the session still runs, also after a failure.
**
** kafka_util.c is #included by each streaming test (one source file per test
** target), after test.h and the headers it names below.
*/
#ifndef DP_TESTS_KAFKA_UTIL_H
#define DP_TESTS_KAFKA_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Create `topic` with `partitions` partitions and wait until its metadata shows them. */
int dp_tk_create_topic(const char *brokers, const char *topic, int partitions, char *err,
                       size_t errlen);
/* Produce n values to partition 0, in order, and wait until all are acknowledged. */
int dp_tk_produce(const char *brokers, const char *topic, int n, const char *const *values,
                  char *err, size_t errlen);
/* Read every record of the topic's partitions from the beginning until
** `expect` records have arrived (then 2 s more, so that a duplicate shows)
** or timeout_ms passed: *out a malloc'd array of
** malloc'd values (free with dp_tk_free).  Returns the number read, or -1. */
int dp_tk_consume(const char *brokers, const char *topic, int partitions, int expect,
                  int64_t timeout_ms, char ***out, char *err, size_t errlen);
void dp_tk_free(char **values, int n);
/* Produce n records to one partition, in order: keys (NULL, or NULL entries:
** no key), values, and record timestamps in ms since the epoch (NULL: now). */
int dp_tk_produce_records(const char *brokers, const char *topic, int partition, int n,
                          const char *const *keys, const char *const *values,
                          const int64_t *timestamps_ms, char *err, size_t errlen);
/* dp_tk_consume, each record as "<key>\t<value>" ("(null)" for no key). */
int dp_tk_consume_keyed(const char *brokers, const char *topic, int partitions, int expect,
                        int64_t timeout_ms, char ***out, char *err, size_t errlen);
/* dp_tk_produce_records for binary keys and values (Avro): each with its
** length (keys[i] NULL: no key). */
int dp_tk_produce_bytes(const char *brokers, const char *topic, int partition, int n,
                        const char *const *keys, const size_t *key_lens,
                        const char *const *values, const size_t *value_lens, char *err,
                        size_t errlen);
/* One record read back as bytes: key NULL when it had none (each buffer
** malloc'd and NUL-terminated past its length; free with dp_tk_free_records). */
typedef struct dp_tk_record {
  char *key, *value;
  size_t key_len, value_len;
} dp_tk_record;
/* dp_tk_consume keeping the bytes and the key: *out a malloc'd array. */
int dp_tk_consume_records(const char *brokers, const char *topic, int partitions, int expect,
                          int64_t timeout_ms, dp_tk_record **out, char *err, size_t errlen);
void dp_tk_free_records(dp_tk_record *r, int n);

/* ---- the Spark streaming harness ---- */

/* The Spark Connect server the harness uses: $DIPPER_SPARK_REMOTE ("sc://
** host:port") if set, else sc://127.0.0.1:$DIPPER_SPARK_PORT, else
** sc://127.0.0.1:15002 (scripts/spark-local's default): a second server
** on another port serves a developer without disturbing the shared one. */
const char *st_spark_remote(void);
#define ST_BROKERS "127.0.0.1:9092"

typedef struct st_env {
  struct dp_sc *s;
  char tag[80];   /* dipper_<what>_<pid>_<seconds>: topics, names */
  char dir[200];  /* /tmp/<tag>: inputs, outputs, checkpoints; removed by st_close */
  int64_t opened_ms; /* st_close prints how long the test took (the machine is shared) */
} st_env;

int st_open(st_env *e, const char *what);
void st_close(st_env *e);
/* Create dir/sub (a watched input directory must exist when the query starts). */
int st_mkdir(const st_env *e, const char *sub);
/* dir/sub/name holding text, written beside and renamed in (a file source
** must never list a half-written file); dir/sub is created. */
int st_write_file(const st_env *e, const char *sub, const char *name, const char *text);
/* Compile a script (the last statement an INSERT), check it for Spark
** (stream rules and translation), build the start command with the script's
** SET options, set the session's confs Spark copies into a new query
** (dp_spark_stream_confs, as api/spark_run.c does), start it.  *q is filled
** on success. */
int st_start(st_env *e, const char *sql, struct dp_sq *q);
/* The same for every INSERT of the last statement (EXECUTE STATEMENT SET:
** one query each), at most cap; *n says how many started. */
int st_start_all(st_env *e, const char *sql, struct dp_sq *qs, int cap, int *n);
/* Compile, check and translate as st_start does, without starting: the
** code, and the first refusal as "line:col: message" in why ("" if none). */
int st_refusal(st_env *e, const char *sql, char *why, size_t whylen);
/* available_now: wait for the query's end (it must end well); else process
** what is available and stop it. */
int st_finish(st_env *e, struct dp_sq *q, int available_now);
/* Process every input available now (the query keeps running). */
int st_drain(st_env *e, struct dp_sq *q);
/* st_start then st_finish, then dp_sq_free. */
int st_run(st_env *e, const char *sql, int available_now);
/* Run a Spark SQL query whose one column is a string; *rows malloc'd. */
int st_rows(st_env *e, const char *query, char ***rows);
/* The rows of a table or view that pass `where` (Spark SQL; NULL: all) as
** JSON objects (timestamps as "yyyy-MM-dd HH:mm:ss"), sorted. */
int st_table_json(st_env *e, const char *table, const char *where, char ***rows);
/* Run a Spark SQL statement (a command: CREATE, INSERT OVERWRITE DIRECTORY, ...),
** its result dropped. */
int st_sql(st_env *e, const char *query);
/* st_table_json until at least `want` rows are there or timeout_ms passed
** (a query on a processing-time trigger, not drained). */
int st_wait_rows(st_env *e, const char *table, const char *where, int want, int64_t timeout_ms,
                 char ***rows);
/* Avro records as dipper's embedded engine writes and reads them
** (formats/avro.h), for the columns `cols` ("a;b" in that order; NULL: every
** physical column in the table's order) of table `table` in `script`
** (CREATE TABLE statements, compiled on the embedded engine).
** st_avro_encode: one datum per JSON object of json[0..n), *out and *lens
** malloc'd (free *out with dp_tk_free, *lens with free).
** st_avro_decode: each datum (the record's key when `key`, else its value)
** as a JSON object (dp_json_encode_row: NULL as null), *json malloc'd.
** Both return 0, or -1 with what failed printed. */
int st_avro_encode(const char *script, const char *table, const char *cols, int n,
                   const char *const *json, char ***out, size_t **lens);
int st_avro_decode(const char *script, const char *table, const char *cols, int n,
                   const dp_tk_record *records, int key, char ***json);
void st_sort(char **rows, int n);
void st_free_rows(char **rows, int n);
/* Compare rows with want exactly (count and order), printing differences: 0 when equal. */
int st_expect(char **rows, int n, const char *const *want, int nwant);

#endif /* DP_TESTS_KAFKA_UTIL_H */
