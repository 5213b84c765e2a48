/*
** fuzz_arrow_ipc.c — libFuzzer target for the Arrow IPC stream decoder
** (src/spark/arrow_ipc.c) and what consumes its output.
**
** Arbitrary bytes are decoded.  On success every value of every batch is
** read (ASan checks that buffers hold what lengths and offsets promise), and
** two invariants are checked, aborting when broken:
**   - the encoder's output of a decoded batch decodes to the same rows;
**   - where the schema maps to dipper types, importing a batch into a
**     dp_batch and exporting it again gives the same rows.
** Batches whose nodes add up to more than 2^20 values are only decoded (a
** null-typed column of 2^31 rows costs no memory but would take long to walk).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/vector.h"
#include "core/vector_import.h"
#include "spark/arrow/render.h"
#include "spark/arrow_ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_VALUES (1 << 20)

/* The dipper type of an Arrow schema node, or NULL when there is none. */
static const dp_type *type_of(dp_arena *a, const struct ArrowSchema *s, int depth) {
  const char *f = s->format;
  static const struct { const char *f; dp_type_kind k; } simple[] = {
      {"n", DP_T_NULL},   {"b", DP_T_BOOLEAN}, {"c", DP_T_TINYINT}, {"s", DP_T_SMALLINT},
      {"i", DP_T_INT},    {"l", DP_T_BIGINT},  {"f", DP_T_FLOAT},   {"g", DP_T_DOUBLE},
      {"u", DP_T_STRING}, {"U", DP_T_STRING},  {"z", DP_T_BYTES},   {"Z", DP_T_BYTES},
      {"tdD", DP_T_DATE}, {"ttu", DP_T_TIME},  {"tsu:", DP_T_TIMESTAMP},
      {"tDu", DP_T_INTERVAL_DT}, {"tiM", DP_T_INTERVAL_YM},
  };
  if (depth > 32) return NULL;
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
    if (strcmp(f, simple[i].f) == 0) return dp_type_of(simple[i].k);
  if (strncmp(f, "tsu:", 4) == 0) return dp_type_of(DP_T_TIMESTAMP_LTZ);
  if (f[0] == 'd' && f[1] == ':') {
    int p = 0, sc = 0;
    if (sscanf(f + 2, "%d,%d", &p, &sc) != 2 || sc < 0 || sc > p) return NULL;
    return dp_type_decimal(a, p, sc);
  }
  if (strcmp(f, "+l") == 0) {
    const dp_type *e = type_of(a, s->children[0], depth + 1);
    return e ? dp_type_array(a, e) : NULL;
  }
  if (strcmp(f, "+m") == 0) {
    const struct ArrowSchema *e = s->children[0];
    if (strcmp(e->format, "+s") != 0 || e->n_children != 2) return NULL;
    const dp_type *k = type_of(a, e->children[0], depth + 1), *v = type_of(a, e->children[1], depth + 1);
    return k && v ? dp_type_map(a, k, v) : NULL;
  }
  if (strcmp(f, "+s") == 0) {
    int n = (int)s->n_children;
    dp_field *fields = dp_arena_calloc(a, n ? (size_t)n : 1, sizeof *fields);
    if (!fields) return NULL;
    for (int i = 0; i < n; i++) {
      fields[i].name = s->children[i]->name;
      fields[i].type = type_of(a, s->children[i], depth + 1);
      if (!fields[i].type) return NULL;
    }
    return dp_type_row(a, n, fields);
  }
  return NULL;
}

/* Every node's length, summed: what walking the batch costs. */
static int64_t work(const struct ArrowArray *a) {
  int64_t n = a->length;
  for (int64_t i = 0; i < a->n_children && n <= MAX_VALUES; i++) n += work(a->children[i]);
  return n;
}

static char *rows(const struct ArrowSchema *s, const struct ArrowArray *a) {
  dp_buf o = DP_BUF_INIT;
  render_batch(&o, 0, s, a);
  char *t = dp_buf_take(&o);
  if (!t) abort();
  return t;
}

static void check_encoder(const struct ArrowSchema *s, const struct ArrowArray *a, const char *want) {
  dp_buf ipc = DP_BUF_INIT;
  if (dp_arrow_ipc_encode(s, a, &ipc, NULL) != DIPPER_OK) abort(); /* every decoded batch encodes */
  dp_arrow_batches again;
  if (dp_arrow_ipc_decode((const uint8_t *)ipc.data, ipc.len, &again, NULL) != DIPPER_OK || again.n != 1)
    abort();
  char *got = rows(&again.schema, &again.arrays[0]);
  if (strcmp(got, want) != 0) abort();
  free(got);
  dp_arrow_batches_free(&again);
  dp_buf_free(&ipc);
}

static void check_import(const dp_schema *schema, const struct ArrowSchema *s,
                         const struct ArrowArray *a, const char *want) {
  dp_batch *b = dp_batch_new(schema, 0);
  if (!b) abort();
  int rc = dp_batch_import(b, s, a, NULL);
  if (rc == DIPPER_OK) {
    struct ArrowSchema es;
    struct ArrowArray ea;
    if (dp_batch_export(b, &es, &ea) != DIPPER_OK) abort();
    char *got = rows(&es, &ea);
    if (strcmp(got, want) != 0) abort();
    free(got);
    es.release(&es);
    ea.release(&ea);
  } else if (rc != DIPPER_LIMIT && rc != DIPPER_NOMEM) {
    abort(); /* the types were derived from the schema: they must fit */
  }
  dp_batch_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dp_arrow_batches b;
  dp_buf err = DP_BUF_INIT;
  int rc = dp_arrow_ipc_decode(data, size, &b, &err);
  if (rc != DIPPER_OK) {
    if (rc != DIPPER_PROTOCOL && rc != DIPPER_NOMEM) abort();
    if (rc == DIPPER_PROTOCOL && err.len == 0) abort(); /* an error says what */
    dp_buf_free(&err);
    return 0;
  }
  dp_arena *arena = dp_arena_new(0);
  dp_schema *schema = dp_schema_new(arena, (int)b.schema.n_children);
  for (int i = 0; schema && i < schema->ncols; i++) {
    schema->cols[i].name = b.schema.children[i]->name;
    schema->cols[i].type = type_of(arena, b.schema.children[i], 0);
    if (!schema->cols[i].type) schema = NULL;
  }
  for (int i = 0; i < b.n; i++) {
    const struct ArrowArray *a = &b.arrays[i];
    if (work(a) > MAX_VALUES) continue;
    char *want = rows(&b.schema, a);
    check_encoder(&b.schema, a, want);
    if (schema) check_import(schema, &b.schema, a, want);
    free(want);
  }
  dp_arena_free(arena);
  dp_arrow_batches_free(&b);
  dp_buf_free(&err);
  return 0;
}
