/*
** udf.h — Java functions on Spark (plan/udf.h's DP_UDF_JAVA): the messages
** that make a session know one — its jar as an artifact (AddArtifacts) and
** its registration (Command.register_function with a JavaUDF) — built here
** without I/O; client.c sends the artifact, spark_run.c (api) drives both
** before a statement that calls one runs.
**
** Owns: the shape of those messages.  Does not own: the call in a query,
** which translates as an UnresolvedFunction of the function's name
** (translate_expr.c), nor the transport.
*/
#ifndef DP_SPARK_UDF_H
#define DP_SPARK_UDF_H

#include <stddef.h>
#include <stdint.h>

#include "plan/udf.h"
#include "spark/translate.h"

/* The Plan { command { register_function { function_name, deterministic,
** java_udf { class_name, output_type, aggregate } } } } of f (declared
** types; aggregate as the catalog read it from the jar, spark/jar.h), in
** c->arena.  DIPPER_OK, DIPPER_NOMEM, or a refusal into c->diags for a result
** type Spark has no counterpart of. */
int dp_spark_java_register_plan(dp_spark_ctx *c, const dp_udf_def *f, Spark__Connect__Plan **out);

/* The artifact name Spark files a jar under: "jars/<its file name>" (in a). */
const char *dp_spark_jar_artifact(dp_arena *a, const char *path);

/* CRC-32 (IEEE 802.3, as java.util.zip.CRC32), which AddArtifacts checks each
** chunk with (checkpoints use CRC-32C, core/bytes.h: another polynomial). */
uint32_t dp_spark_crc32(const void *p, size_t n);

/* The payload of an AddArtifactsRequest holding one artifact in one chunk
** (the request head is client.c's), in a. */
Spark__Connect__AddArtifactsRequest__Batch *dp_spark_artifact_batch(dp_arena *a, const char *name,
                                                                    const void *data, size_t len);

#endif /* DP_SPARK_UDF_H */
