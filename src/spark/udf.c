/*
** udf.c — the Spark Connect messages of Java functions (udf.h).
*/
#include "spark/udf.h"

#include <string.h>

#include "spark/translate_int.h"

int dp_spark_java_register_plan(dp_spark_ctx *c, const dp_udf_def *f, Spark__Connect__Plan **out) {
  *out = NULL;
  dp_sx x;
  dp_sx_init(&x, c, NULL);
  Spark__Connect__Plan *plan;
  Spark__Connect__Command *cmd;
  Spark__Connect__CommonInlineUserDefinedFunction *u;
  Spark__Connect__JavaUDF *j;
  if (!DP_SX_NEW(&x, plan, spark__connect__plan__init) ||
      !DP_SX_NEW(&x, cmd, spark__connect__command__init) ||
      !DP_SX_NEW(&x, u, spark__connect__common_inline_user_defined_function__init) ||
      !DP_SX_NEW(&x, j, spark__connect__java_udf__init))
    return DIPPER_NOMEM;
  if (!(u->function_name = dp_sx_strdup(&x, f->name)) ||
      !(j->class_name = dp_sx_strdup(&x, f->class_name)))
    return DIPPER_NOMEM;
  Spark__Connect__DataType *t = dp_sx_type(&x, f->returns, f->span);
  if (!t) return x.rc ? x.rc : DIPPER_UNSUPPORTED;
  j->_output_type_case = SPARK__CONNECT__JAVA_UDF___OUTPUT_TYPE_OUTPUT_TYPE;
  j->output_type = t;
  /* an aggregate: the server's registerJavaUDAF, which takes the class's own
     dataType (the call is cast to the declared type, translate_expr.c) */
  j->aggregate = f->aggregate;
  u->deterministic = true;
  u->function_case = SPARK__CONNECT__COMMON_INLINE_USER_DEFINED_FUNCTION__FUNCTION_JAVA_UDF;
  u->java_udf = j;
  cmd->command_type_case = SPARK__CONNECT__COMMAND__COMMAND_TYPE_REGISTER_FUNCTION;
  cmd->register_function = u;
  plan->op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_COMMAND;
  plan->command = cmd;
  *out = plan;
  return x.rc;
}

const char *dp_spark_jar_artifact(dp_arena *a, const char *path) {
  const char *base = strrchr(path, '/');
  return dp_arena_printf(a, "jars/%s", base ? base + 1 : path);
}

uint32_t dp_spark_crc32(const void *p, size_t n) {
  static uint32_t table[256];
  static _Atomic int ready;
  if (!ready) { /* a race writes the same values twice: harmless */
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = 1;
  }
  const uint8_t *b = p;
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) crc = table[(crc ^ b[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

Spark__Connect__AddArtifactsRequest__Batch *dp_spark_artifact_batch(dp_arena *a, const char *name,
                                                                    const void *data, size_t len) {
  Spark__Connect__AddArtifactsRequest__Batch *batch = dp_arena_calloc(a, 1, sizeof *batch);
  Spark__Connect__AddArtifactsRequest__SingleChunkArtifact *art = dp_arena_calloc(a, 1, sizeof *art);
  Spark__Connect__AddArtifactsRequest__ArtifactChunk *chunk = dp_arena_calloc(a, 1, sizeof *chunk);
  Spark__Connect__AddArtifactsRequest__SingleChunkArtifact **arts = dp_arena_calloc(a, 1, sizeof *arts);
  if (!batch || !art || !chunk || !arts) return NULL;
  spark__connect__add_artifacts_request__batch__init(batch);
  spark__connect__add_artifacts_request__single_chunk_artifact__init(art);
  spark__connect__add_artifacts_request__artifact_chunk__init(chunk);
  if (!(art->name = dp_arena_strdup(a, name))) return NULL;
  chunk->data.data = (uint8_t *)(uintptr_t)data;
  chunk->data.len = len;
  chunk->crc = (int64_t)dp_spark_crc32(data, len);
  art->data = chunk;
  arts[0] = art;
  batch->n_artifacts = 1;
  batch->artifacts = arts;
  return batch;
}
