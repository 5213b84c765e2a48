/*
** translate.h — the logical plan (plan/plan.h) as Spark Connect relations and
** commands: structured protobuf messages, never SQL strings.
**
** Owns: one Relation per plan node kind that Spark can express (Read of a
** table's source with its DDL schema, Project, Filter, WithWatermark,
** Aggregate incl. window()/session_window(), Join of every kind, SetOperation,
** Sort, Limit/Offset, Deduplicate, LocalRelation for VALUES and memory tables,
** window functions, subqueries), the expression translation with its function
** mapping table (dipper catalog function -> Spark function) and type mapping
** table (dp_type -> Spark DataType and DDL), and the refusal, at compile
** time and with the span of the construct, of what Spark cannot run.
** Does not own: talking to Spark (client.h), running sinks (api/).
**
** Every message is allocated in ctx->arena (protobuf-c structs point into it;
** protobuf_c_message_pack serializes them).  Column names: Spark resolves
** columns by name, dipper's plan by index; the translator gives every
** relation it builds unique internal column names ("_c<r>_<i>", see
** translate_int.h) through aliases and maps back to the user's names at the
** root, so that duplicate or odd names (a join of two tables with a column
** `id` each) cannot clash.
**
** The session.  The translation assumes the Spark session runs with
** spark.sql.session.timeZone = UTC (dipper keeps time in UTC): TIMESTAMP is
** Spark's TIMESTAMP_NTZ, TIMESTAMP_LTZ Spark's TIMESTAMP, and the functions
** and casts that cross between them (and a streaming event time, which Spark
** wants as a TIMESTAMP) then agree with the embedded engine.
**
** Where the engines' semantics differ the translation keeps dipper's (the
** function table, functions_map.def, says how); what Spark cannot express is
** refused with DIPPER_UNSUPPORTED, the construct's span and what to write
** instead.  A file path is made absolute against the current directory: the
** embedded engine reads it so, and a loopback server shares the file system.
*/
#ifndef DP_SPARK_TRANSLATE_H
#define DP_SPARK_TRANSLATE_H

#include <stdbool.h>

#include "core/arena.h"
#include "core/diag.h"
#include "dipper.h"
#include "plan/catalog.h"
#include "plan/plan.h"
#include "spark/connect/base.pb-c.h"

typedef struct dp_spark_ctx {
  dp_arena *arena;          /* every message lives here */
  dp_diags *diags;          /* refusals: DIPPER_UNSUPPORTED with the construct's span */
  /* The current rows of a `memory` table as one Arrow struct array (the
     caller releases both), sent as a LocalRelation.  NULL (compile-time
     checks): an empty LocalRelation with the table's schema. */
  int (*memory_rows)(void *user, const dp_table_def *t, struct ArrowSchema *schema,
                     struct ArrowArray *array);
  void *user;
} dp_spark_ctx;

/* A query root (anything but a SINK) as one Relation whose output columns
** carry the plan's schema names, in order. */
int dp_spark_relation(dp_spark_ctx *c, const dp_query_plan *q, const dp_plan *root,
                      Spark__Connect__Relation **out);

/* How a SINK root runs on Spark. */
typedef enum dp_spark_sink_kind {
  DP_SPARK_SINK_LOCAL,  /* memory, console, blackhole, callback: the client collects the
                           input relation and writes it through dipper's own connector */
  DP_SPARK_SINK_WRITE,  /* filesystem, kafka: Spark writes (a WriteOperation command in batch
                           mode; WriteStreamOperationStart when streaming) */
} dp_spark_sink_kind;

typedef struct dp_spark_sink {
  dp_spark_sink_kind kind;
  Spark__Connect__Relation *input;  /* the rows to write, in the sink table's column order */
  Spark__Connect__Plan *command;    /* DP_SPARK_SINK_WRITE: the command to execute */
} dp_spark_sink;

int dp_spark_sink_plan(dp_spark_ctx *c, const dp_query_plan *q, const dp_plan *sink,
                       dp_spark_sink *out);

/* Compile-time check of one statement for Spark: Structured Streaming's rules
** (stream_rules.h, streaming mode only), then every root translated with
** memory_rows NULL; every refusal goes into d, one per construct.  DIPPER_OK
** when Spark can run it all; else the first failure's code. */
int dp_spark_check(const dp_query_plan *q, dp_arena *a, dp_diags *d);

/* The Spark DDL of a type ("DECIMAL(10,2)", "STRUCT<a: INT, b: ARRAY<STRING>>"),
** or NULL (with a refusal in c->diags at `span`) when Spark has no such type. */
const char *dp_spark_type_ddl(dp_spark_ctx *c, const dp_type *t, dp_span span);

#endif /* DP_SPARK_TRANSLATE_H */
