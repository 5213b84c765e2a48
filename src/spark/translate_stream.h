/*
** translate_stream.h — the streaming side of the Spark translation: sources
** that only streams read (kafka, socket) and the command that starts a
** streaming INSERT (WriteStreamOperationStart).
**
** Owns: the mapping of dipper's (Flink's) connector options onto Spark's
** kafka and socket sources and onto Spark's streaming sinks (kafka,
** filesystem, console, memory, blackhole; callback: dipper's own sink of
** handoff.h), the output mode, the trigger and the checkpoint location.  Does not own: relations of other node kinds
** (translate.c), running the query (streaming.c).  A batch INSERT into kafka
** borrows the record building (dp_sx_kafka_write).
*/
#ifndef DP_SPARK_TRANSLATE_STREAM_H
#define DP_SPARK_TRANSLATE_STREAM_H

#include "spark/translate_int.h"

/* Does translate_stream.c read table t in this translation?  kafka and socket
** tables always; datagen tables when the query streams and the table is
** unbounded (Spark's rate source).  translate_scan.c's dp_sx_scan asks first. */
bool dp_sx_stream_reads(const dp_sx *x, const dp_table_def *t);

/* A SCAN of a table dp_sx_stream_reads claims.  kafka, socket: the raw
** source, the value parsed by the table's format (json, csv, raw, avro) and
** DDL schema, with 'value.fields-include' = 'EXCEPT_KEY' the 'key.fields'
** columns parsed from the key by 'key.format', metadata columns from the
** record (key, topic, partition, offset, timestamp).  datagen: Spark's rate source at 'rows-per-second' and a
** projection making each column from the rate's `value` and `timestamp` per
** the 'fields.<col>.*' options.  Output names follow the translator's scheme
** ("_c<r>_<i>"). */
int dp_sx_stream_scan(dp_sx *x, const dp_plan *scan, dp_srel *out);

/* What the session says about a streaming write (SET options). */
typedef struct dp_spark_stream_opts {
  const char *trigger;         /* dipper.trigger, or NULL (Spark's default: as fast as possible) */
  const char *checkpoint_dir;  /* execution.checkpointing.dir, or NULL */
  bool checking;               /* a compile-time check (dp_spark_check), where the session's
                                  options are not known: the checkpoint is not required */
  const char *server_version;  /* the server's Spark version ("4.1.1"), or NULL when not
                                  known (a check): what the trigger may use depends on it */
  const char *handoff_key;     /* a 'callback' sink: the key of this run of dipper's Spark
                                  sink (handoff.h), or NULL in a check */
} dp_spark_stream_opts;

/* The WriteStreamOperationStart command of a streaming INSERT (a SINK root):
** format and options of the sink table, the rows serialized for kafka,
** partitioning, output mode (q->output_mode or inferred), trigger, checkpoint
** location <checkpoint_dir>/<sink name> (required for kafka and filesystem
** sinks: a refusal at the INSERT otherwise), query name = the sink's name.
** An INSERT whose every input is bounded is refused: Spark starts a
** streaming query only over a streaming source.
** Refusals go to c->diags (DIPPER_UNSUPPORTED or DIPPER_OPTION). */
int dp_spark_stream_start_plan(dp_spark_ctx *c, const dp_query_plan *q, const dp_plan *sink,
                               const dp_spark_stream_opts *o, Spark__Connect__Plan **out);

/* Column i of a datagen table over rows numbered 0, 1, 2, ... in column
** `row` (a batch Range's `id`, the rate source's `value`), with `clock_us` the
** row's time in µs (BIGINT).  The shapes follow connectors/datagen.c:
** sequences start + row number, random numbers in [min, max], strings of
** `length` hex digits, times from the clock minus a random delay in
** [0, max-past], NULLs at null-rate.  Random values are hashes of the row
** number and a per-column key from `seed` (Spark's rand(seed) restarts in
** every micro-batch), so a replayed row gets its values again; they differ
** from the embedded engine's, as random data does.  NULL on a refusal. */
Spark__Connect__Expression *dp_sx_datagen_column(dp_sx *x, const dp_table_def *t, int i,
                                                 int64_t seed, const char *row,
                                                 Spark__Connect__Expression *clock_us);

/* Kafka records of a sink table's rows: Project(value [, key]) over `rows`,
** whose n columns are named `names` (the table's written columns).  The
** value is the row serialized by the table's format (json, csv: times in
** dipper's text; raw: the one column as is; avro: to_avro with the schema of
** formats/avro.h), the key the 'key.fields' columns, else the PRIMARY KEY
** ones, in 'key.format' (json, csv, avro, raw), absent when neither is
** declared; EXCEPT_KEY leaves the key columns out of the value.  NULL on a
** refusal (x->diags) or out of memory.  Streaming and batch writes share it. */
Spark__Connect__Relation *dp_sx_kafka_records(dp_sx *x, const dp_table_def *t,
                                              Spark__Connect__Relation *rows, int n,
                                              const char *const *names);

/* A batch INSERT into a kafka table: the WriteOperation command (source
** "kafka", mode append, 'topic' and 'properties.*' as Spark's options) over
** dp_sx_kafka_records of `rows`, which hold the table's written columns in
** its order, named as the table's (translate.c's sink projection).  NULL on a
** refusal or out of memory. */
Spark__Connect__Plan *dp_sx_kafka_write(dp_sx *x, const dp_table_def *t,
                                        Spark__Connect__Relation *rows);

#endif /* DP_SPARK_TRANSLATE_STREAM_H */
