/*
** vector_export.c — vectors and batches out through the Arrow C Data
** Interface (vector.h).
**
** Each exported node (ArrowSchema or ArrowArray) owns one private block: its
** copied buffers or name, and the storage of its children's structs.  Its
** release callback releases the children that the consumer has not moved
** away (release != NULL), frees the block and marks the node released, as
** the specification requires.  Buffers are copies, so a vector may be
** changed or freed while its export lives on.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/vector.h"

/* ---- schemas ---- */

typedef struct schema_private {
  char *name;
  char metadata[40]; /* "dipper.precision" of a TIMESTAMP, TIMESTAMP_LTZ or TIME */
  struct ArrowSchema **child_ptrs;
  struct ArrowSchema *children;
} schema_private;

static void release_schema(struct ArrowSchema *s) {
  if (!s || !s->release) return;
  schema_private *p = s->private_data;
  for (int64_t i = 0; i < s->n_children; i++) {
    struct ArrowSchema *c = s->children[i];
    if (c && c->release) c->release(c);
  }
  free(p->name);
  free(p->child_ptrs);
  free(p->children);
  free(p);
  s->release = NULL;
}

/* One node with `n` children still to be filled (released-looking until
** they are, so that releasing a half-built tree is safe). */
static int schema_node(struct ArrowSchema *out, const char *format, const char *name,
                       int64_t flags, int n) {
  memset(out, 0, sizeof *out);
  schema_private *p = calloc(1, sizeof *p);
  if (!p) return DIPPER_NOMEM;
  size_t name_len = strlen(name ? name : "");
  p->name = malloc(name_len + 1);
  p->child_ptrs = calloc(n ? (size_t)n : 1, sizeof *p->child_ptrs);
  p->children = calloc(n ? (size_t)n : 1, sizeof *p->children);
  if (!p->name || !p->child_ptrs || !p->children) {
    free(p->name);
    free(p->child_ptrs);
    free(p->children);
    free(p);
    return DIPPER_NOMEM;
  }
  memcpy(p->name, name ? name : "", name_len + 1);
  for (int i = 0; i < n; i++) p->child_ptrs[i] = &p->children[i];
  out->format = format; /* static strings from dp_type_arrow_format */
  out->name = p->name;
  out->flags = flags;
  out->n_children = n;
  out->children = p->child_ptrs;
  out->private_data = p;
  out->release = release_schema;
  return DIPPER_OK;
}

static int64_t nullable_flag(const dp_type *t) { return t->not_null ? 0 : ARROW_FLAG_NULLABLE; }

static int export_type(const dp_type *t, const char *name, int64_t flags, struct ArrowSchema *out);

static int export_children(const dp_type *t, struct ArrowSchema *out) {
  int rc = DIPPER_OK;
  struct ArrowSchema **c = out->children;
  switch (t->kind) {
  case DP_T_ROW:
    for (int i = 0; i < t->nfields && !rc; i++)
      rc = export_type(t->fields[i].type, t->fields[i].name, nullable_flag(t->fields[i].type), c[i]);
    return rc;
  case DP_T_ARRAY:
    return export_type(t->elem, "item", nullable_flag(t->elem), c[0]);
  case DP_T_MAP:
    /* Arrow: map<entries: struct<key (never null), value>> */
    rc = schema_node(c[0], "+s", "entries", 0, 2);
    if (!rc) rc = export_type(t->elem, "key", 0, c[0]->children[0]);
    if (!rc) rc = export_type(t->value, "value", nullable_flag(t->value), c[0]->children[1]);
    return rc;
  default:
    return DIPPER_OK;
  }
}

/* Arrow keeps µs for every TIMESTAMP(p) and TIME(p): the p that the text of
** a value shows (dipper_format_values) travels as the field metadata
** {"dipper.precision": "p"}, in the C Data Interface's encoding (int32
** counts and lengths, native order). */
static void put_precision(struct ArrowSchema *out, int precision) {
  schema_private *p = out->private_data;
  static const char key[] = DP_ARROW_PRECISION_KEY;
  int32_t one = 1, klen = (int32_t)(sizeof key - 1);
  char digit = (char)('0' + (precision > 9 ? 9 : precision));
  char *m = p->metadata;
  memcpy(m, &one, 4);
  memcpy(m + 4, &klen, 4);
  memcpy(m + 8, key, (size_t)klen);
  memcpy(m + 8 + klen, &one, 4);
  m[12 + klen] = digit;
  out->metadata = m;
}

static int export_type(const dp_type *t, const char *name, int64_t flags, struct ArrowSchema *out) {
  memset(out, 0, sizeof *out);
  const char *format = dp_type_arrow_format(t);
  if (!format) return DIPPER_MISUSE;
  int n = t->kind == DP_T_ROW ? t->nfields : (t->kind == DP_T_ARRAY || t->kind == DP_T_MAP) ? 1 : 0;
  int rc = schema_node(out, format, name, flags, n);
  if (!rc && (dp_type_is_timestamp(t) || t->kind == DP_T_TIME)) put_precision(out, t->precision);
  if (!rc) rc = export_children(t, out);
  if (rc && out->release) out->release(out);
  return rc;
}

int dp_type_export_schema(const dp_type *t, const char *name, struct ArrowSchema *schema) {
  if (!t || !schema) return DIPPER_MISUSE;
  return export_type(t, name, nullable_flag(t), schema);
}

/* ---- arrays ---- */

typedef struct array_private {
  const void *buffers[3];
  void *owned[3];
  struct ArrowArray **child_ptrs;
  struct ArrowArray *children;
} array_private;

static void release_array(struct ArrowArray *a) {
  if (!a || !a->release) return;
  array_private *p = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++) {
    struct ArrowArray *c = a->children[i];
    if (c && c->release) c->release(c);
  }
  for (int i = 0; i < 3; i++) free(p->owned[i]);
  free(p->child_ptrs);
  free(p->children);
  free(p);
  a->release = NULL;
}

static int array_node(struct ArrowArray *out, int64_t length, int64_t null_count, int n) {
  memset(out, 0, sizeof *out);
  array_private *p = calloc(1, sizeof *p);
  if (!p) return DIPPER_NOMEM;
  p->child_ptrs = calloc(n ? (size_t)n : 1, sizeof *p->child_ptrs);
  p->children = calloc(n ? (size_t)n : 1, sizeof *p->children);
  if (!p->child_ptrs || !p->children) {
    free(p->child_ptrs);
    free(p->children);
    free(p);
    return DIPPER_NOMEM;
  }
  for (int i = 0; i < n; i++) p->child_ptrs[i] = &p->children[i];
  out->length = length;
  out->null_count = null_count;
  out->offset = 0;
  out->buffers = p->buffers;
  out->n_children = n;
  out->children = p->child_ptrs;
  out->private_data = p;
  out->release = release_array;
  return DIPPER_OK;
}

/* Buffer k of the node: a copy of n bytes (never a NULL pointer, even when
** empty, since consumers may not accept NULL for a mandatory buffer). */
static bool put_buffer(struct ArrowArray *out, int k, const void *src, size_t n) {
  array_private *p = out->private_data;
  p->owned[k] = malloc(n ? n : 1);
  if (!p->owned[k]) return false;
  if (n) memcpy(p->owned[k], src, n);
  p->buffers[k] = p->owned[k];
  return true;
}

/* Buffer k taken over from the vector (the move variants); the caller then
** forgets its pointer.  An absent buffer becomes n zero bytes, which is
** what an empty one holds (offsets [0]). */
static bool take_buffer(struct ArrowArray *out, int k, void *src, size_t n) {
  array_private *p = out->private_data;
  p->owned[k] = src ? src : calloc(n ? n : 1, 1);
  if (!p->owned[k]) return false;
  p->buffers[k] = p->owned[k];
  return true;
}

static size_t bitmap_bytes(int64_t rows) { return (size_t)((rows + 7) / 8); }

static int export_array(dp_vector *v, bool move, struct ArrowArray *out);

/* Copy (or with `move`, take over) buffer k, n bytes at src. */
static bool buffer(struct ArrowArray *out, int k, void *src, size_t n, bool move) {
  return move ? take_buffer(out, k, src, n) : put_buffer(out, k, src, n);
}

static int fill_array(dp_vector *v, bool move, struct ArrowArray *out) {
  bool ok = true;
  int width = dp_phys_width(v->phys);
  size_t offsets_bytes = (size_t)(v->length + 1) * sizeof(int32_t);
  /* buffer 0, the validity bitmap, stays NULL when nothing is null */
  if (v->phys != DP_PHYS_NULL && v->null_count > 0 && v->validity) {
    ok = buffer(out, 0, v->validity, bitmap_bytes(v->length), move);
    if (ok && move) v->validity = NULL;
  }
  switch (v->phys) {
  case DP_PHYS_NULL:
    out->n_buffers = 0;
    break;
  case DP_PHYS_BIT:
  case DP_PHYS_I8:
  case DP_PHYS_I16:
  case DP_PHYS_I32:
  case DP_PHYS_I64:
  case DP_PHYS_F32:
  case DP_PHYS_F64:
  case DP_PHYS_D128:
    out->n_buffers = 2;
    ok = ok && buffer(out, 1, v->values,
                      v->phys == DP_PHYS_BIT ? bitmap_bytes(v->length)
                                             : (size_t)v->length * (size_t)width,
                      move);
    if (ok && move) v->values = NULL;
    break;
  case DP_PHYS_VARBIN:
    out->n_buffers = 3;
    ok = ok && buffer(out, 2, v->data, (size_t)v->data_len, move);
    if (ok && move) v->data = NULL;
    ok = ok && buffer(out, 1, v->offsets, offsets_bytes, move);
    if (ok && move) v->offsets = NULL;
    break;
  case DP_PHYS_LIST:
    out->n_buffers = 2;
    ok = ok && buffer(out, 1, v->offsets, offsets_bytes, move);
    if (ok && move) v->offsets = NULL;
    break;
  case DP_PHYS_STRUCT:
    out->n_buffers = 1;
    break;
  }
  if (!ok) return DIPPER_NOMEM;
  for (int i = 0; i < v->nchildren; i++) {
    int rc = export_array(v->children[i], move, out->children[i]);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

/* After a move the vector owns no buffer: empty, capacity 0, ready to grow
** again on the next append. */
static void reset_moved(dp_vector *v) {
  free(v->validity);
  free(v->values);
  free(v->offsets);
  free(v->data);
  v->validity = NULL;
  v->values = NULL;
  v->offsets = NULL;
  v->data = NULL;
  v->length = v->null_count = v->capacity = v->data_len = v->data_cap = 0;
}

/* A moved batch is left empty in every column, also those the export did
** not reach after a failure. */
static void reset_moved_tree(dp_vector *v) {
  for (int i = 0; i < v->nchildren; i++) reset_moved_tree(v->children[i]);
  reset_moved(v);
}

static int export_array(dp_vector *v, bool move, struct ArrowArray *out) {
  int64_t null_count = v->phys == DP_PHYS_NULL ? v->length : v->null_count;
  int rc = array_node(out, v->length, null_count, v->nchildren);
  if (!rc) rc = fill_array(v, move, out);
  if (rc && out->release) out->release(out);
  if (move) reset_moved_tree(v); /* even on failure: taken buffers are gone */
  return rc;
}

static int vector_export(dp_vector *v, bool move, struct ArrowSchema *schema,
                         struct ArrowArray *array) {
  if (!v || !schema || !array) return DIPPER_MISUSE;
  memset(array, 0, sizeof *array);
  int rc = export_type(v->type, "", nullable_flag(v->type), schema);
  if (rc) return rc;
  rc = export_array(v, move, array);
  if (rc) schema->release(schema);
  return rc;
}

int dp_vector_export(const dp_vector *v, struct ArrowSchema *schema, struct ArrowArray *array) {
  /* Without `move` nothing of *v is written; the cast only shares the code. */
  return vector_export((dp_vector *)(uintptr_t)v, false, schema, array);
}

int dp_vector_export_move(dp_vector *v, struct ArrowSchema *schema, struct ArrowArray *array) {
  return vector_export(v, true, schema, array);
}

static int batch_export(dp_batch *b, bool move, struct ArrowSchema *schema,
                        struct ArrowArray *array) {
  if (!b || !schema || !array) return DIPPER_MISUSE;
  memset(schema, 0, sizeof *schema);
  memset(array, 0, sizeof *array);
  for (int i = 0; i < b->ncols; i++)
    if (b->cols[i]->length != b->nrows) return DIPPER_MISUSE; /* call dp_batch_sync */
  /* the batch itself: a non-null struct of its columns */
  int rc = schema_node(schema, "+s", "", 0, b->ncols);
  for (int i = 0; i < b->ncols && !rc; i++) {
    const dp_type *t = b->cols[i]->type;
    rc = export_type(t, b->schema->cols[i].name, nullable_flag(t), schema->children[i]);
  }
  if (!rc) rc = array_node(array, b->nrows, 0, b->ncols);
  if (!rc) array->n_buffers = 1; /* the struct's validity: NULL, no row is null */
  for (int i = 0; i < b->ncols && !rc; i++)
    rc = export_array(b->cols[i], move, array->children[i]);
  if (rc) {
    if (schema->release) schema->release(schema);
    if (array->release) array->release(array);
  }
  if (move) {
    for (int i = 0; i < b->ncols; i++) reset_moved_tree(b->cols[i]);
    b->nrows = 0;
  }
  return rc;
}

int dp_batch_export(const dp_batch *b, struct ArrowSchema *schema, struct ArrowArray *array) {
  return batch_export((dp_batch *)(uintptr_t)b, false, schema, array);
}

int dp_batch_export_move(dp_batch *b, struct ArrowSchema *schema, struct ArrowArray *array) {
  return batch_export(b, true, schema, array);
}
