/*
** stream_rules.h — what Spark Structured Streaming refuses in streaming mode,
** checked on dipper's analysed plan at compile time.
**
** Owns: the rules of Spark's UnsupportedOperationChecker (and of Spark's
** streaming operators) that the engine-neutral validator (plan/validate.c)
** does not already enforce because dipper's embedded engine can run the
** construct: sorting outside complete-mode aggregation, OFFSET, LIMIT in
** update mode, OVER and ranking (Top-N) on streams, CUMULATE, keep-last
** deduplication, distinct aggregates, the stream-stream and stream-static
** join matrix, unions of streams with bounded inputs, session windows in
** update mode, chained stateful operators outside append mode, watermarks
** with a delay that is not a constant interval, temporal joins on streams;
** and the Spark session settings that dipper's options turn into for a
** streaming query (the global watermark's policy).
** Does not own: translating the plan (translate.h) or the engine-neutral
** rules (plan/validate.c runs first; every plan seen here has passed it).
*/
#ifndef DP_SPARK_STREAM_RULES_H
#define DP_SPARK_STREAM_RULES_H

#include "core/diag.h"
#include "plan/catalog.h"
#include "plan/plan.h"

/* Check one compiled statement for Spark.  Does nothing in batch mode.  Every
** refusal is appended to d as DIPPER_STREAMING at the span of the construct,
** naming what Spark lacks and what to write instead.  Returns DIPPER_OK when
** Spark accepts the plan, DIPPER_STREAMING otherwise (DIPPER_NOMEM when the
** list ran out of memory).  The plan is not changed. */
int dp_spark_stream_check(const dp_query_plan *q, dp_diags *d);

/* 'dipper.trigger' = 'real-time <duration>': Spark's real-time mode (Spark
** Connect 4.2 on) runs stateless queries only.  Refuses (DIPPER_STREAMING, at
** the construct) an aggregation, DISTINCT, deduplication, a join of two
** streams, OVER, Top-N or ORDER BY in a streaming statement when `trigger`
** is a real-time one; DIPPER_OK otherwise.  The server's version is checked
** where the query starts (translate_stream.c), not here. */
int dp_spark_realtime_check(const dp_query_plan *q, const char *trigger, dp_diags *d);

/* Does the streaming DEDUPLICATE node p become Spark's
** dropDuplicatesWithinWatermark?  When the C API asked for it, or when it
** orders by an event-time attribute and no key is one: dipper then forgets a
** key once the watermark passes its first row's event time (plan/analyze.c),
** and that Spark operator is the one that cleans such state (dropping late
** rows, as dipper's stateful operators do).  A key that is an event time lets
** Spark's plain Deduplicate clean its state by itself; a processing-time or
** unwatermarked order keeps every key forever, as Spark's plain one does. */
bool dp_spark_dedup_within_watermark(const dp_plan *p);

/* The Spark SQL settings a streaming query takes from dipper's session
** options, which the Spark session must hold when the query starts (Spark
** copies them into the query's checkpoint then; a restarted query keeps its
** first ones): spark.sql.streaming.multipleWatermarkPolicy from
** 'dipper.spark.multiple-watermark-policy' ("min" when unset, so that a
** session reused after a script that set "max" is back at Spark's default).
** Fills keys[i], values[i] (static or the catalog's strings, borrowed while
** the catalog lives) for up to cap settings; returns how many there are.
** The caller sets them (dp_sc_config_set) before dp_sq_start. */
int dp_spark_stream_confs(const dp_catalog *c, const char **keys, const char **values, int cap);

#endif /* DP_SPARK_STREAM_RULES_H */
