/*
** arrow_ipc.c — the Arrow IPC stream decoder and encoder of arrow_ipc.h.
**
** Owns: the IPC framing (continuation marker, metadata length, 8-byte
** padding, body, end-of-stream), the Arrow field ids of Message.fbs and
** Schema.fbs, buffer decompression (LZ4 frame, ZSTD), the checks that make
** decoded arrays safe to read, and the C Data output structures.  Does not
** own: FlatBuffers wire rules (flatbuf.c) or dipper's vectors
** (core/vector_import.c turns the output into dp_batch).
**
** Shape of the output.  A schema is flattened in pre-order (node 0 is the
** record batch's struct, then the fields depth-first), the order in which a
** record batch lists its field nodes and buffers.  Each decoded schema and
** each decoded batch is ONE allocation holding every ArrowSchema/ArrowArray
** struct of the tree, the child and buffer pointer arrays, and (for arrays)
** every buffer, copied or decompressed out of the message body at 64-byte
** alignment.  The block carries a count of live nodes: each node's release
** drops one, so a consumer may move a child out (as the C Data spec allows)
** and the block lives until the last node is released.
*/
#include "spark/arrow_ipc.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <lz4frame.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/compiler.h"
#include "core/grow.h"
#include "spark/flatbuf.h"

/* Limits: nesting depth, fields per schema (a malicious flatbuffer can share
** one table among many parents), rows per array (int32 offsets downstream),
** and the decompressed bytes of one record batch. */
#define MAX_DEPTH 64
#define MAX_FIELDS 65536
#define MAX_ROWS INT32_MAX
#define MAX_BATCH_BYTES ((int64_t)1 << 31)
#define MAX_FIXED_WIDTH (1 << 20)
#define ALIGN 64
#define FORMAT_CAP 80

/* Message.fbs / Schema.fbs: MessageHeader and Type union tags. */
enum { HDR_SCHEMA = 1, HDR_DICTIONARY = 2, HDR_RECORD_BATCH = 3 };
enum {
  T_NULL = 1, T_INT, T_FLOAT, T_BINARY, T_UTF8, T_BOOL, T_DECIMAL, T_DATE, T_TIME,
  T_TIMESTAMP, T_INTERVAL, T_LIST, T_STRUCT, T_UNION, T_FIXED_BINARY, T_FIXED_LIST, T_MAP,
  T_DURATION, T_LARGE_BINARY, T_LARGE_UTF8, T_LARGE_LIST
};
enum { V4 = 3, V5 = 4 }; /* MetadataVersion */

/* Physical layouts; buffers in IPC and in C Data alike. */
typedef enum layout {
  LAY_NULL,   /* no buffers */
  LAY_BOOL,   /* validity, bits */
  LAY_FIXED,  /* validity, width bytes a value */
  LAY_BIN,    /* validity, int32 offsets, bytes */
  LAY_LBIN,   /* validity, int64 offsets, bytes */
  LAY_LIST,   /* validity, int32 offsets; one child (map: a struct of two) */
  LAY_LLIST,  /* validity, int64 offsets; one child */
  LAY_FSL,    /* validity; one child, width items a value */
  LAY_STRUCT  /* validity; the children */
} layout;

static const int layout_buffers[] = {
    [LAY_NULL] = 0, [LAY_BOOL] = 2, [LAY_FIXED] = 2, [LAY_BIN] = 3, [LAY_LBIN] = 3,
    [LAY_LIST] = 2, [LAY_LLIST] = 2, [LAY_FSL] = 1, [LAY_STRUCT] = 1,
};

/* One node of a flattened schema. */
typedef struct node {
  layout lay;
  uint8_t type_id;     /* Type union tag */
  bool nullable, keys_sorted, is_map;
  int32_t width;       /* LAY_FIXED bytes; LAY_FSL list size */
  int nchildren;
  int kids;            /* index of its first entry in the kids array */
  int buf0;            /* index of its first buffer in the record batch */
  const char *name;    /* decoder: borrowed from the input; encoder: from the C schema */
  uint32_t name_len;
  char format[FORMAT_CAP];
  /* encoder only: the type's parameters */
  int16_t unit;
  int32_t precision, scale, bit_width;
  bool is_signed;
  const char *tz;
} node;

typedef struct flat_schema {
  node *nodes;  /* nodes[0] is the record batch's struct */
  int n, cap;
  int *kids;    /* children of node i: kids[nodes[i].kids ..+ nchildren] */
  int nbuffers; /* buffers a record batch carries */
} flat_schema;

static void flat_free(flat_schema *s) {
  free(s->nodes);
  free(s->kids);
  memset(s, 0, sizeof *s);
}

static int flat_add(flat_schema *s) {
  if (s->n == MAX_FIELDS) return -1;
  if (dp_grow_i(&s->nodes, &s->cap, s->n + 1, sizeof *s->nodes, 16)) return -2;
  memset(&s->nodes[s->n], 0, sizeof(node));
  return s->n++;
}

/* Children lists and buffer positions, once the nodes are in pre-order. */
static bool flat_finish(flat_schema *s) {
  s->kids = malloc((size_t)(s->n ? s->n : 1) * sizeof *s->kids);
  if (!s->kids) return false;
  /* the subtree sizes, from the back: a node's subtree is itself plus its children's */
  int *size = malloc((size_t)s->n * sizeof *size);
  if (!size) return false;
  for (int i = s->n - 1; i >= 0; i--) {
    size[i] = 1;
    int c = i + 1;
    for (int k = 0; k < s->nodes[i].nchildren; k++) {
      size[i] += size[c];
      c += size[c];
    }
  }
  int nk = 0, nb = 0;
  for (int i = 0; i < s->n; i++) {
    node *nd = &s->nodes[i];
    nd->kids = nk;
    int c = i + 1;
    for (int k = 0; k < nd->nchildren; k++) {
      s->kids[nk++] = c;
      c += size[c];
    }
    nd->buf0 = nb;
    if (i > 0) nb += layout_buffers[nd->lay]; /* node 0 is not in the batch */
  }
  s->nbuffers = nb;
  free(size);
  return true;
}

/* ---- the output blocks ---- */

typedef struct block {
  atomic_int live; /* nodes not yet released */
} block;

static size_t align_up(size_t n) { return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

static void block_unref(block *b) {
  if (atomic_fetch_sub(&b->live, 1) == 1) free(b);
}

static void release_schema(struct ArrowSchema *s) {
  if (!s || !s->release) return;
  for (int64_t i = 0; i < s->n_children; i++)
    if (s->children[i]->release) s->children[i]->release(s->children[i]);
  s->release = NULL;
  block_unref(s->private_data);
}

static void release_array(struct ArrowArray *a) {
  if (!a || !a->release) return;
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
  a->release = NULL;
  block_unref(a->private_data);
}

/* The C schema of a flattened schema, in one block. */
static int build_schema(const flat_schema *fs, struct ArrowSchema *out) {
  size_t n = (size_t)fs->n;
  size_t strings = 0;
  for (size_t i = 0; i < n; i++)
    strings += fs->nodes[i].name_len + 1 + strlen(fs->nodes[i].format) + 1;
  size_t head = align_up(sizeof(block));
  size_t structs = n * sizeof(struct ArrowSchema);
  size_t ptrs = n * sizeof(struct ArrowSchema *);
  uint8_t *mem = malloc(head + structs + ptrs + strings);
  if (!mem) return DIPPER_NOMEM;
  block *blk = (block *)mem;
  atomic_init(&blk->live, (int)n);
  struct ArrowSchema *sch = (struct ArrowSchema *)(mem + head);
  struct ArrowSchema **kid = (struct ArrowSchema **)(mem + head + structs);
  char *str = (char *)(mem + head + structs + ptrs);
  for (size_t i = 0; i < n; i++) {
    const node *nd = &fs->nodes[i];
    struct ArrowSchema *s = &sch[i];
    memset(s, 0, sizeof *s);
    size_t fl = strlen(nd->format);
    memcpy(str, nd->format, fl + 1);
    s->format = str;
    str += fl + 1;
    if (nd->name_len) memcpy(str, nd->name, nd->name_len);
    str[nd->name_len] = '\0';
    s->name = str;
    str += nd->name_len + 1;
    s->flags = (nd->nullable ? ARROW_FLAG_NULLABLE : 0) |
               (nd->keys_sorted ? ARROW_FLAG_MAP_KEYS_SORTED : 0);
    s->n_children = nd->nchildren;
    s->children = kid + nd->kids;
    for (int k = 0; k < nd->nchildren; k++) kid[nd->kids + k] = &sch[fs->kids[nd->kids + k]];
    s->private_data = blk;
    s->release = release_schema;
  }
  *out = sch[0]; /* the root moves out to the caller's struct */
  sch[0].release = NULL;
  return DIPPER_OK;
}

/* ---- decoding: the schema ---- */

typedef struct decoder {
  const uint8_t *data;
  size_t len;
  int msg;         /* message number, from 0, for messages */
  dp_buf *err;
  flat_schema fs;
  bool have_schema;
  LZ4F_dctx *lz4;
  ZSTD_DCtx *zstd;
  /* per batch scratch, reused */
  int64_t *buf_size;   /* decoded size of each buffer */
  size_t *buf_at;      /* its position in the block */
} decoder;

static int fail(decoder *d, const char *fmt, ...)
    DP_PRINTF(2, 3)
    ;
static int fail(decoder *d, const char *fmt, ...) {
  if (d->err) {
    dp_buf_printf(d->err, "Arrow IPC message %d: ", d->msg);
    va_list ap;
    va_start(ap, fmt);
    dp_buf_vprintf(d->err, fmt, ap);
    va_end(ap);
  }
  return DIPPER_PROTOCOL;
}

static char unit_char(int16_t unit) { return "smun"[unit]; }

/* The type of a Field into nd (format, layout, width). */
static int parse_type(decoder *d, const dp_fb_table *field, node *nd, const char *where) {
  bool ok = true, present = false;
  uint8_t tag = dp_fb_u8(field, 2, 0, &ok);
  dp_fb_table t;
  memset(&t, 0, sizeof t); /* an absent type table reads as all defaults */
  if (!dp_fb_table_at(field, 3, &t, &present)) {
    if (present) return fail(d, "field %s: the type table is malformed", where);
    memset(&t, 0, sizeof t);
  }
  nd->type_id = tag;
  char *f = nd->format;
  switch (tag) {
  case T_NULL: nd->lay = LAY_NULL; strcpy(f, "n"); break;
  case T_BOOL: nd->lay = LAY_BOOL; strcpy(f, "b"); break;
  case T_INT: {
    int32_t bw = dp_fb_i32(&t, 0, 0, &ok);
    bool sgn = dp_fb_u8(&t, 1, 0, &ok) != 0;
    const char *fmt = bw == 8 ? (sgn ? "c" : "C") : bw == 16 ? (sgn ? "s" : "S")
                    : bw == 32 ? (sgn ? "i" : "I") : bw == 64 ? (sgn ? "l" : "L") : NULL;
    if (!fmt) return fail(d, "field %s: integer bit width %d is not 8, 16, 32 or 64", where, (int)bw);
    nd->lay = LAY_FIXED;
    nd->width = bw / 8;
    strcpy(f, fmt);
    break;
  }
  case T_FLOAT: {
    int16_t p = dp_fb_i16(&t, 0, 0, &ok);
    if (p < 0 || p > 2) return fail(d, "field %s: floating point precision %d is unknown", where, p);
    nd->lay = LAY_FIXED;
    nd->width = 2 << p;
    strcpy(f, p == 0 ? "e" : p == 1 ? "f" : "g");
    break;
  }
  case T_BINARY: nd->lay = LAY_BIN; strcpy(f, "z"); break;
  case T_UTF8: nd->lay = LAY_BIN; strcpy(f, "u"); break;
  case T_LARGE_BINARY: nd->lay = LAY_LBIN; strcpy(f, "Z"); break;
  case T_LARGE_UTF8: nd->lay = LAY_LBIN; strcpy(f, "U"); break;
  case T_DECIMAL: {
    int32_t p = dp_fb_i32(&t, 0, 0, &ok), s = dp_fb_i32(&t, 1, 0, &ok);
    int32_t bw = dp_fb_i32(&t, 2, 128, &ok);
    if (bw != 128)
      return fail(d, "field %s: decimal of %d bits is not supported (only decimal128, as Spark sends)",
                  where, (int)bw);
    if (p < 1 || p > 38 || s < -38 || s > 38)
      return fail(d, "field %s: decimal precision %d / scale %d out of range", where, (int)p, (int)s);
    nd->lay = LAY_FIXED;
    nd->width = 16;
    snprintf(f, FORMAT_CAP, "d:%d,%d", (int)p, (int)s);
    break;
  }
  case T_DATE: {
    int16_t u = dp_fb_i16(&t, 0, 1, &ok);
    if (u != 0 && u != 1) return fail(d, "field %s: date unit %d is unknown", where, u);
    nd->lay = LAY_FIXED;
    nd->width = u == 0 ? 4 : 8;
    strcpy(f, u == 0 ? "tdD" : "tdm");
    break;
  }
  case T_TIME: {
    int16_t u = dp_fb_i16(&t, 0, 1, &ok);
    int32_t bw = dp_fb_i32(&t, 1, 32, &ok);
    if (u < 0 || u > 3 || bw != (u < 2 ? 32 : 64))
      return fail(d, "field %s: time of unit %d and %d bits is not valid", where, u, (int)bw);
    nd->lay = LAY_FIXED;
    nd->width = bw / 8;
    snprintf(f, FORMAT_CAP, "tt%c", unit_char(u));
    break;
  }
  case T_TIMESTAMP:
  case T_DURATION: {
    int16_t u = dp_fb_i16(&t, 0, tag == T_DURATION ? 1 : 0, &ok);
    if (u < 0 || u > 3) return fail(d, "field %s: time unit %d is unknown", where, u);
    nd->lay = LAY_FIXED;
    nd->width = 8;
    if (tag == T_DURATION) {
      snprintf(f, FORMAT_CAP, "tD%c", unit_char(u));
      break;
    }
    const char *tz;
    uint32_t tzn;
    if (!dp_fb_string(&t, 1, &tz, &tzn)) return fail(d, "field %s: the timezone string is malformed", where);
    if (tzn > FORMAT_CAP - 8) return fail(d, "field %s: timezone name of %u bytes is too long", where, tzn);
    for (uint32_t i = 0; i < tzn; i++)
      if (tz[i] == '\0') return fail(d, "field %s: the timezone name holds a NUL byte", where);
    snprintf(f, FORMAT_CAP, "ts%c:%.*s", unit_char(u), (int)tzn, tz ? tz : "");
    break;
  }
  case T_INTERVAL: {
    int16_t u = dp_fb_i16(&t, 0, 0, &ok);
    if (u < 0 || u > 2) return fail(d, "field %s: interval unit %d is unknown", where, u);
    nd->lay = LAY_FIXED;
    nd->width = u == 0 ? 4 : u == 1 ? 8 : 16;
    strcpy(f, u == 0 ? "tiM" : u == 1 ? "tiD" : "tin");
    break;
  }
  case T_FIXED_BINARY: {
    int32_t w = dp_fb_i32(&t, 0, 0, &ok);
    if (w < 1 || w > MAX_FIXED_WIDTH)
      return fail(d, "field %s: fixed-size binary width %d out of range", where, (int)w);
    nd->lay = LAY_FIXED;
    nd->width = w;
    snprintf(f, FORMAT_CAP, "w:%d", (int)w);
    break;
  }
  case T_LIST: nd->lay = LAY_LIST; strcpy(f, "+l"); break;
  case T_LARGE_LIST: nd->lay = LAY_LLIST; strcpy(f, "+L"); break;
  case T_FIXED_LIST: {
    int32_t n = dp_fb_i32(&t, 0, 0, &ok);
    if (n < 0 || n > MAX_FIXED_WIDTH)
      return fail(d, "field %s: fixed-size list size %d out of range", where, (int)n);
    nd->lay = LAY_FSL;
    nd->width = n;
    snprintf(f, FORMAT_CAP, "+w:%d", (int)n);
    break;
  }
  case T_STRUCT: nd->lay = LAY_STRUCT; strcpy(f, "+s"); break;
  case T_MAP:
    nd->lay = LAY_LIST;
    nd->is_map = true;
    nd->keys_sorted = dp_fb_u8(&t, 0, 0, &ok) != 0;
    strcpy(f, "+m");
    break;
  case T_UNION:
    return fail(d, "field %s: union types are not supported (Spark does not send them)", where);
  default:
    return fail(d, "field %s: Arrow type %d is not supported", where, tag);
  }
  if (!ok) return fail(d, "field %s: a type parameter lies outside its table", where);
  return DIPPER_OK;
}

static int parse_field(decoder *d, const dp_fb_table *ft, int depth, int *out_index);

/* The children of vector `slot` of table t, appended as children of nodes[parent]. */
static int parse_children(decoder *d, const dp_fb_table *t, int slot, int parent, int depth) {
  dp_fb_vec v;
  if (!dp_fb_vector(t, slot, 4, &v)) return fail(d, "the children vector of node %d is malformed", parent);
  if (v.n > MAX_FIELDS) return fail(d, "node %d has %u children, more than %d", parent, v.n, MAX_FIELDS);
  d->fs.nodes[parent].nchildren = (int)v.n;
  for (uint32_t i = 0; i < v.n; i++) {
    dp_fb_table c;
    if (!dp_fb_vec_table(&v, i, &c)) return fail(d, "child %u of node %d is malformed", i, parent);
    int idx;
    int rc = parse_field(d, &c, depth + 1, &idx);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

static int parse_field(decoder *d, const dp_fb_table *ft, int depth, int *out_index) {
  if (depth > MAX_DEPTH) return fail(d, "fields nest deeper than %d levels", MAX_DEPTH);
  int i = flat_add(&d->fs);
  if (i == -1) return fail(d, "the schema has more than %d fields", MAX_FIELDS);
  if (i == -2) return DIPPER_NOMEM;
  *out_index = i;
  char where[32];
  snprintf(where, sizeof where, "#%d", i);
  const char *name;
  uint32_t name_len;
  if (!dp_fb_string(ft, 0, &name, &name_len)) return fail(d, "field %s: the name is malformed", where);
  for (uint32_t k = 0; k < name_len; k++)
    if (name[k] == '\0') return fail(d, "field %s: the name holds a NUL byte", where);
  bool ok = true;
  bool nullable = dp_fb_u8(ft, 1, 0, &ok) != 0;
  if (!ok) return fail(d, "field %s: 'nullable' lies outside its table", where);
  if (dp_fb_has(ft, 4))
    return fail(d, "field %s: dictionary-encoded fields are not supported (Spark does not send them)", where);
  node *nd = &d->fs.nodes[i];
  nd->name = name;
  nd->name_len = name_len;
  nd->nullable = nullable;
  int rc = parse_type(d, ft, nd, where);
  if (rc) return rc;
  rc = parse_children(d, ft, 5, i, depth);
  if (rc) return rc;
  nd = &d->fs.nodes[i]; /* the array may have moved */
  int want = nd->lay == LAY_STRUCT ? nd->nchildren
           : (nd->lay == LAY_LIST || nd->lay == LAY_LLIST || nd->lay == LAY_FSL) ? 1 : 0;
  if (nd->nchildren != want)
    return fail(d, "field %s (%s) has %d children, expected %d", where, nd->format, nd->nchildren, want);
  if (nd->is_map) {
    const node *e = &d->fs.nodes[i + 1];
    if (e->lay != LAY_STRUCT || e->nchildren != 2)
      return fail(d, "field %s: a map's child must be a struct of key and value", where);
  }
  return DIPPER_OK;
}

static int decode_schema(decoder *d, const dp_fb_table *sch) {
  if (d->have_schema) return fail(d, "a second schema message in one stream");
  bool ok = true;
  if (dp_fb_i16(sch, 0, 0, &ok) != 0 || !ok)
    return fail(d, "big-endian (or malformed) schema endianness is not supported");
  int root = flat_add(&d->fs);
  if (root < 0) return DIPPER_NOMEM;
  d->fs.nodes[root].lay = LAY_STRUCT;
  strcpy(d->fs.nodes[root].format, "+s");
  d->fs.nodes[root].name = "";
  int rc = parse_children(d, sch, 1, root, 0);
  if (rc) return rc;
  if (!flat_finish(&d->fs)) return DIPPER_NOMEM;
  size_t nb = (size_t)(d->fs.nbuffers ? d->fs.nbuffers : 1);
  d->buf_size = malloc(nb * sizeof *d->buf_size);
  d->buf_at = malloc(nb * sizeof *d->buf_at);
  if (!d->buf_size || !d->buf_at) return DIPPER_NOMEM;
  d->have_schema = true;
  return DIPPER_OK;
}

/* ---- decoding: record batches ---- */

static int64_t rd_i64(const uint8_t *p) {
  int64_t v;
  memcpy(&v, p, 8);
  return v;
}

static int decompress(decoder *d, int codec, const uint8_t *src, size_t n, uint8_t *dst,
                      size_t want, int buf) {
  if (codec == 0) {
    if (!d->lz4 && LZ4F_isError(LZ4F_createDecompressionContext(&d->lz4, LZ4F_VERSION))) {
      d->lz4 = NULL;
      return DIPPER_NOMEM;
    }
    size_t done = 0, used = 0;
    size_t hint = 1;
    while (hint != 0) {
      size_t out_n = want - done, in_n = n - used;
      hint = LZ4F_decompress(d->lz4, dst + done, &out_n, src + used, &in_n, NULL);
      if (LZ4F_isError(hint)) {
        LZ4F_resetDecompressionContext(d->lz4);
        return fail(d, "buffer %d: LZ4 frame is corrupt (%s)", buf, LZ4F_getErrorName(hint));
      }
      done += out_n;
      used += in_n;
      if (hint != 0 && used == n) {
        LZ4F_resetDecompressionContext(d->lz4);
        return fail(d, "buffer %d: LZ4 frame ends early", buf);
      }
      if (hint != 0 && out_n == 0 && in_n == 0) {
        LZ4F_resetDecompressionContext(d->lz4);
        return fail(d, "buffer %d: LZ4 frame decompresses to more than the declared %zu bytes", buf, want);
      }
    }
    if (done != want)
      return fail(d, "buffer %d: LZ4 frame gave %zu bytes, declared %zu", buf, done, want);
    return DIPPER_OK;
  }
  if (!d->zstd && !(d->zstd = ZSTD_createDCtx())) return DIPPER_NOMEM;
  size_t got = ZSTD_decompressDCtx(d->zstd, dst, want, src, n);
  if (ZSTD_isError(got))
    return fail(d, "buffer %d: ZSTD data is corrupt (%s)", buf, ZSTD_getErrorName(got));
  if (got != want) return fail(d, "buffer %d: ZSTD data gave %zu bytes, declared %zu", buf, got, want);
  return DIPPER_OK;
}

/* Offsets of `rows` rows (int32 or int64), non-decreasing from >= 0 up to
** at most `limit`.  An empty buffer stands for a zero-length array. */
static bool offsets_ok(const uint8_t *p, int64_t size, int64_t rows, bool wide, int64_t limit) {
  if (rows == 0) return true;
  size_t w = wide ? 8 : 4;
  if (size < 0 || (uint64_t)size / w < (uint64_t)rows + 1) return false;
  /* o[0] >= 0 and no step down: every offset lies in [0, o[rows]] */
  int bad = 0;
  if (wide) {
    const int64_t *o = (const int64_t *)(const void *)p;
    for (int64_t i = 0; i < rows; i++) bad |= o[i + 1] < o[i];
    return !bad && o[0] >= 0 && o[rows] <= limit;
  }
  const int32_t *o = (const int32_t *)(const void *)p;
  for (int64_t i = 0; i < rows; i++) bad |= o[i + 1] < o[i];
  return !bad && o[0] >= 0 && o[rows] <= limit;
}

static const int64_t zeros64[2]; /* a mandatory buffer that is empty: one zero offset */

/* A record batch's length, its field node and buffer vectors (their counts
** checked against the schema) and its codec: -1 uncompressed, 0 LZ4 frame,
** 1 ZSTD. */
static int batch_header(decoder *d, const dp_fb_table *rb, int64_t *length, dp_fb_vec *nodes, dp_fb_vec *bufs,
                        int *codec) {
  flat_schema *fs = &d->fs;
  bool ok = true;
  *length = dp_fb_i64(rb, 0, 0, &ok);
  if (!ok || *length < 0 || *length > MAX_ROWS)
    return fail(d, "record batch length %lld is out of range", (long long)*length);
  if (!dp_fb_vector(rb, 1, 16, nodes)) return fail(d, "the field node vector is malformed");
  if (!dp_fb_vector(rb, 2, 16, bufs)) return fail(d, "the buffer vector is malformed");
  if ((int64_t)nodes->n != fs->n - 1)
    return fail(d, "%u field nodes for a schema of %d fields", nodes->n, fs->n - 1);
  if ((int64_t)bufs->n != fs->nbuffers)
    return fail(d, "%u buffers where the schema needs %d", bufs->n, fs->nbuffers);
  *codec = -1;
  dp_fb_table comp;
  bool has_comp = false;
  if (!dp_fb_table_at(rb, 3, &comp, &has_comp) && has_comp)
    return fail(d, "the compression table is malformed");
  if (has_comp) {
    *codec = dp_fb_u8(&comp, 0, 0, &ok);
    if (dp_fb_u8(&comp, 1, 0, &ok) != 0 || !ok || *codec > 1)
      return fail(d, "compression codec %d / method is not supported (LZ4_FRAME or ZSTD, per buffer)", *codec);
  }
  return DIPPER_OK;
}

/* Pass 1: the size of each buffer (decompressed) and its place in the block,
** after `*total` bytes of head and structs; *total grows to the block's size. */
static int place_buffers(decoder *d, const dp_fb_vec *bufs, int codec, const uint8_t *body, int64_t body_len,
                         size_t *total) {
  size_t start = *total;
  for (uint32_t j = 0; j < bufs->n; j++) {
    int64_t off = dp_fb_vec_i64(bufs, j, 16, 0), blen = dp_fb_vec_i64(bufs, j, 16, 8);
    if (off < 0 || blen < 0 || off > body_len || blen > body_len - off)
      return fail(d, "buffer %u (offset %lld, length %lld) lies outside the body of %lld bytes", j,
                  (long long)off, (long long)blen, (long long)body_len);
    int64_t size = blen;
    if (codec >= 0 && blen > 0) {
      if (blen < 8) return fail(d, "compressed buffer %u is shorter than its length prefix", j);
      int64_t ulen = rd_i64(body + off);
      if (ulen == -1)
        size = blen - 8;
      else if (ulen < 0 || ulen > MAX_BATCH_BYTES)
        return fail(d, "buffer %u declares %lld uncompressed bytes", j, (long long)ulen);
      else
        size = ulen;
    }
    d->buf_size[j] = size;
    d->buf_at[j] = *total;
    *total += align_up((size_t)size);
    if (*total - start > (size_t)MAX_BATCH_BYTES)
      return fail(d, "the record batch needs more than %lld bytes", (long long)MAX_BATCH_BYTES);
  }
  return DIPPER_OK;
}

/* Each field node's length and null count in range. */
static int check_field_nodes(decoder *d, const dp_fb_vec *nodes) {
  for (uint32_t i = 0; i < nodes->n; i++) {
    int64_t nl = dp_fb_vec_i64(nodes, i, 16, 0), nn = dp_fb_vec_i64(nodes, i, 16, 8);
    if (nl < 0 || nl > MAX_ROWS || nn < 0 || nn > nl)
      return fail(d, "field node %u: length %lld / null count %lld out of range", i, (long long)nl,
                  (long long)nn);
  }
  return DIPPER_OK;
}

/* Pass 2: copy or decompress each buffer into its place in mem. */
static int fill_buffers(decoder *d, const dp_fb_vec *bufs, int codec, const uint8_t *body, uint8_t *mem) {
  int rc = DIPPER_OK;
  for (uint32_t j = 0; j < bufs->n && !rc; j++) {
    int64_t off = dp_fb_vec_i64(bufs, j, 16, 0), blen = dp_fb_vec_i64(bufs, j, 16, 8);
    uint8_t *dst = mem + d->buf_at[j];
    size_t size = (size_t)d->buf_size[j];
    if (codec < 0 || blen == 0)
      memcpy(dst, body + off, size);
    else if (rd_i64(body + off) == -1)
      memcpy(dst, body + off + 8, size);
    else
      rc = decompress(d, codec, body + off + 8, (size_t)blen - 8, dst, size, (int)j);
  }
  return rc;
}

/* Point a's buffers (of node nd, not the root) into mem, and check them
** against its length and children; what is wrong, or NULL. */
static const char *node_buffers(const decoder *d, const node *nd, struct ArrowArray *a, const uint8_t *mem,
                                const dp_fb_vec *nodes) {
  const flat_schema *fs = &d->fs;
  int b0 = nd->buf0;
  const uint8_t *buf[3] = {NULL, NULL, NULL};
  int64_t size[3] = {0, 0, 0};
  for (int k = 0; k < a->n_buffers; k++) {
    size[k] = d->buf_size[b0 + k];
    buf[k] = size[k] ? mem + d->buf_at[b0 + k] : (const uint8_t *)zeros64;
  }
  int64_t len = a->length, bits = (len + 7) / 8;
  const char *what = NULL;
  if (a->null_count > 0 && size[0] < bits) what = "validity bitmap too short for its nulls";
  a->buffers[0] = a->null_count > 0 ? buf[0] : NULL;
  switch (nd->lay) {
  case LAY_BOOL:
    if (size[1] < bits) what = "boolean bitmap too short";
    break;
  case LAY_FIXED:
    if (size[1] / nd->width < len) what = "values buffer too short";
    break;
  case LAY_BIN:
  case LAY_LBIN:
    if (!offsets_ok(buf[1], size[1], len, nd->lay == LAY_LBIN, size[2]))
      what = "offsets out of order, too few or beyond the data";
    break;
  case LAY_LIST:
  case LAY_LLIST: {
    /* children come later in pre-order: read the node vector directly */
    int64_t child_len = dp_fb_vec_i64(nodes, (uint32_t)fs->kids[nd->kids] - 1, 16, 0);
    if (!offsets_ok(buf[1], size[1], len, nd->lay == LAY_LLIST, child_len))
      what = "offsets out of order, too few or beyond the child";
    break;
  }
  case LAY_FSL:
    if (dp_fb_vec_i64(nodes, (uint32_t)fs->kids[nd->kids] - 1, 16, 0) < len * nd->width)
      what = "child shorter than length x list size";
    break;
  case LAY_STRUCT:
    for (int k = 0; k < nd->nchildren; k++)
      if (dp_fb_vec_i64(nodes, (uint32_t)fs->kids[nd->kids + k] - 1, 16, 0) < len)
        what = "a child is shorter than the struct";
    break;
  default:
    break;
  }
  for (int k = 1; k < a->n_buffers; k++) a->buffers[k] = buf[k];
  return what;
}

/* Pass 3: the C structs of the block at mem (arr: n of them, then the child
** and buffer pointer arrays), each node checked against its buffers, and
** every column as long as the batch. */
static int build_arrays(decoder *d, int64_t length, const dp_fb_vec *nodes, uint8_t *mem, struct ArrowArray *arr) {
  flat_schema *fs = &d->fs;
  size_t n = (size_t)fs->n;
  block *blk = (block *)mem;
  struct ArrowArray **kid = (struct ArrowArray **)(arr + n);
  const void **bp = (const void **)(void *)(kid + (n ? n - 1 : 0));
  int rc = DIPPER_OK;
  memset(arr, 0, n * sizeof *arr);
  const void **bnext = bp;
  for (size_t i = 0; i < n && !rc; i++) {
    const node *nd = &fs->nodes[i];
    struct ArrowArray *a = &arr[i];
    a->length = i ? dp_fb_vec_i64(nodes, (uint32_t)i - 1, 16, 0) : length;
    a->null_count = i ? dp_fb_vec_i64(nodes, (uint32_t)i - 1, 16, 8) : 0;
    a->n_buffers = layout_buffers[nd->lay];
    a->buffers = bnext;
    bnext += a->n_buffers;
    a->n_children = nd->nchildren;
    a->children = kid + nd->kids;
    for (int k = 0; k < nd->nchildren; k++) kid[nd->kids + k] = &arr[fs->kids[nd->kids + k]];
    a->private_data = blk;
    a->release = release_array;
    if (i == 0) {
      a->buffers[0] = NULL;
      continue;
    }
    if (nd->lay == LAY_NULL) {
      a->null_count = a->length;
      continue;
    }
    const char *what = node_buffers(d, nd, a, mem, nodes);
    if (what) rc = fail(d, "field node %zu (%s): %s", i - 1, nd->format, what);
  }
  for (int k = 0; k < arr[0].n_children && !rc; k++)
    if (arr[0].children[k]->length != length)
      rc = fail(d, "column %d has %lld rows in a batch of %lld", k, (long long)arr[0].children[k]->length,
                (long long)length);
  return rc;
}

/* A record batch: its header, then the block sized (pass 1), filled (pass 2)
** and its structs built (pass 3). */
static int decode_batch(decoder *d, const dp_fb_table *rb, const uint8_t *body, int64_t body_len,
                        struct ArrowArray *out) {
  flat_schema *fs = &d->fs;
  int64_t length;
  dp_fb_vec nodes, bufs;
  int codec = -1;
  int rc = batch_header(d, rb, &length, &nodes, &bufs, &codec);
  if (rc) return rc;
  /* the block: its head, the structs with their child and buffer pointers, the buffers */
  size_t n = (size_t)fs->n;
  size_t cbufs = 0;
  for (size_t i = 0; i < n; i++) cbufs += (size_t)layout_buffers[fs->nodes[i].lay];
  cbufs += 1; /* the root's */
  size_t head = align_up(sizeof(block));
  size_t structs = align_up(n * sizeof(struct ArrowArray) + (n ? n - 1 : 0) * sizeof(void *) +
                            cbufs * sizeof(void *));
  size_t total = head + structs;
  if ((rc = place_buffers(d, &bufs, codec, body, body_len, &total))) return rc;
  if ((rc = check_field_nodes(d, &nodes))) return rc;
  uint8_t *mem = aligned_alloc(ALIGN, align_up(total)); /* buffers 64-byte aligned */
  if (!mem) return DIPPER_NOMEM;
  block *blk = (block *)mem;
  atomic_init(&blk->live, (int)n);
  struct ArrowArray *arr = (struct ArrowArray *)(mem + head);
  rc = fill_buffers(d, &bufs, codec, body, mem);
  if (!rc) rc = build_arrays(d, length, &nodes, mem, arr);
  if (rc) {
    free(mem);
    return rc;
  }
  *out = arr[0];
  arr[0].release = NULL;
  return DIPPER_OK;
}

/* ---- decoding: the stream ---- */

static int push_batch(dp_arrow_batches *out, int *cap, struct ArrowArray *a) {
  if (dp_grow_i(&out->arrays, cap, out->n + 1, sizeof *out->arrays, 4)) return DIPPER_NOMEM;
  out->arrays[out->n++] = *a;
  out->rows += a->length;
  return DIPPER_OK;
}

static int decode_stream(decoder *d, dp_arrow_batches *out) {
  size_t pos = 0;
  int cap = 0;
  while (pos < d->len) {
    size_t left = d->len - pos;
    if (left < 4) return fail(d, "%zu stray bytes where a message should start", left);
    uint32_t mark;
    memcpy(&mark, d->data + pos, 4);
    int32_t mlen;
    if (mark == 0xFFFFFFFFu) {
      if (left < 8) return fail(d, "the stream ends inside a message prefix");
      memcpy(&mlen, d->data + pos + 4, 4);
      pos += 8;
    } else {
      mlen = (int32_t)mark; /* the pre-1.0 prefix: the length alone */
      pos += 4;
    }
    if (mlen == 0) break; /* end-of-stream */
    if (mlen < 0 || (size_t)mlen > d->len - pos)
      return fail(d, "metadata length %d exceeds the %zu bytes left", (int)mlen, d->len - pos);
    dp_fb_table msg, hdr;
    if (!dp_fb_root(d->data + pos, (size_t)mlen, &msg)) return fail(d, "the Message flatbuffer is malformed");
    pos += (size_t)mlen;
    bool ok = true, present = false;
    int16_t version = dp_fb_i16(&msg, 0, 0, &ok);
    uint8_t kind = dp_fb_u8(&msg, 1, 0, &ok);
    int64_t body_len = dp_fb_i64(&msg, 3, 0, &ok);
    if (!ok) return fail(d, "a Message field lies outside its table");
    if (version < V4 || version > V5)
      return fail(d, "metadata version %d is not supported (V4 or V5)", version + 1);
    if (body_len < 0 || (uint64_t)body_len > d->len - pos)
      return fail(d, "body length %lld exceeds the %zu bytes left", (long long)body_len, d->len - pos);
    if (!dp_fb_table_at(&msg, 2, &hdr, &present))
      return fail(d, "the message header is %s", present ? "malformed" : "missing");
    const uint8_t *body = d->data + pos;
    pos += (size_t)body_len;
    int rc;
    if (kind == HDR_SCHEMA) {
      rc = decode_schema(d, &hdr);
      if (!rc) rc = build_schema(&d->fs, &out->schema);
    } else if (kind == HDR_RECORD_BATCH) {
      if (!d->have_schema) return fail(d, "a record batch before the schema");
      struct ArrowArray a;
      rc = decode_batch(d, &hdr, body, body_len, &a);
      if (!rc) {
        rc = push_batch(out, &cap, &a);
        if (rc) a.release(&a);
      }
    } else if (kind == HDR_DICTIONARY) {
      return fail(d, "dictionary batches are not supported (Spark does not send them)");
    } else {
      return fail(d, "message type %d is not a schema or a record batch", kind);
    }
    if (rc) return rc;
    d->msg++;
  }
  if (!d->have_schema) return fail(d, "the stream holds no schema message");
  return DIPPER_OK;
}

int dp_arrow_ipc_decode(const uint8_t *data, size_t len, dp_arrow_batches *out, dp_buf *err) {
  if (!out || (!data && len)) return DIPPER_MISUSE;
  memset(out, 0, sizeof *out);
  decoder d;
  memset(&d, 0, sizeof d);
  d.data = data;
  d.len = len;
  d.err = err;
  int rc = decode_stream(&d, out);
  flat_free(&d.fs);
  free(d.buf_size);
  free(d.buf_at);
  if (d.lz4) LZ4F_freeDecompressionContext(d.lz4);
  ZSTD_freeDCtx(d.zstd);
  if (rc) dp_arrow_batches_free(out);
  return rc;
}

void dp_arrow_batches_free(dp_arrow_batches *b) {
  if (!b) return;
  if (b->schema.release) b->schema.release(&b->schema);
  for (int i = 0; i < b->n; i++)
    if (b->arrays[i].release) b->arrays[i].release(&b->arrays[i]);
  free(b->arrays);
  memset(b, 0, sizeof *b);
}

/* ---- encoding ---- */

typedef struct encoder {
  dp_buf *err;
  flat_schema fs;
  dp_buf body;
  int64_t *nodes;  /* (length, null_count) per field */
  int64_t *bufs;   /* (offset, length) per buffer */
  int nnodes, nbufs;
} encoder;

static int enc_fail(encoder *e, int code, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;
static int enc_fail(encoder *e, int code, const char *fmt, ...) {
  if (e->err) {
    dp_buf_puts(e->err, "Arrow IPC encoder: ");
    va_list ap;
    va_start(ap, fmt);
    dp_buf_vprintf(e->err, fmt, ap);
    va_end(ap);
  }
  return code;
}

static int16_t unit_of(char c) {
  const char *p = strchr("smun", c);
  return p && c ? (int16_t)(p - "smun") : -1;
}

/* A C Data format string into nd's IPC type; false when not supported. */
static bool parse_format(const char *f, node *nd) {
  static const struct { const char *f; uint8_t id; int8_t bits; bool sgn; } ints[] = {
      {"c", T_INT, 8, true},   {"C", T_INT, 8, false},  {"s", T_INT, 16, true},
      {"S", T_INT, 16, false}, {"i", T_INT, 32, true},  {"I", T_INT, 32, false},
      {"l", T_INT, 64, true},  {"L", T_INT, 64, false},
  };
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (strcmp(f, ints[i].f) == 0) {
      nd->type_id = T_INT;
      nd->lay = LAY_FIXED;
      nd->bit_width = ints[i].bits;
      nd->width = ints[i].bits / 8;
      nd->is_signed = ints[i].sgn;
      return true;
    }
  size_t n = strlen(f);
  nd->lay = LAY_FIXED;
  if (n == 1) {
    switch (f[0]) {
    case 'n': nd->type_id = T_NULL; nd->lay = LAY_NULL; return true;
    case 'b': nd->type_id = T_BOOL; nd->lay = LAY_BOOL; return true;
    case 'e': nd->type_id = T_FLOAT; nd->unit = 0; nd->width = 2; return true;
    case 'f': nd->type_id = T_FLOAT; nd->unit = 1; nd->width = 4; return true;
    case 'g': nd->type_id = T_FLOAT; nd->unit = 2; nd->width = 8; return true;
    case 'z': nd->type_id = T_BINARY; nd->lay = LAY_BIN; return true;
    case 'u': nd->type_id = T_UTF8; nd->lay = LAY_BIN; return true;
    case 'Z': nd->type_id = T_LARGE_BINARY; nd->lay = LAY_LBIN; return true;
    case 'U': nd->type_id = T_LARGE_UTF8; nd->lay = LAY_LBIN; return true;
    default: return false;
    }
  }
  if (strcmp(f, "tdD") == 0 || strcmp(f, "tdm") == 0) {
    nd->type_id = T_DATE;
    nd->unit = f[2] == 'D' ? 0 : 1;
    nd->width = f[2] == 'D' ? 4 : 8;
    return true;
  }
  if (n == 3 && f[0] == 't' && f[1] == 't' && unit_of(f[2]) >= 0) {
    nd->type_id = T_TIME;
    nd->unit = unit_of(f[2]);
    nd->bit_width = nd->unit < 2 ? 32 : 64;
    nd->width = nd->bit_width / 8;
    return true;
  }
  if (n == 3 && f[0] == 't' && f[1] == 'D' && unit_of(f[2]) >= 0) {
    nd->type_id = T_DURATION;
    nd->unit = unit_of(f[2]);
    nd->width = 8;
    return true;
  }
  if (n >= 4 && f[0] == 't' && f[1] == 's' && unit_of(f[2]) >= 0 && f[3] == ':') {
    nd->type_id = T_TIMESTAMP;
    nd->unit = unit_of(f[2]);
    nd->tz = f + 4;
    nd->width = 8;
    return true;
  }
  if (n == 3 && f[0] == 't' && f[1] == 'i' && strchr("MDn", f[2])) {
    nd->type_id = T_INTERVAL;
    nd->unit = f[2] == 'M' ? 0 : f[2] == 'D' ? 1 : 2;
    nd->width = f[2] == 'M' ? 4 : f[2] == 'D' ? 8 : 16;
    return true;
  }
  if (f[0] == 'd' && f[1] == ':') {
    int p, s, bw = 128, used = 0;
    int got = sscanf(f + 2, "%d,%d%n", &p, &s, &used);
    if (got != 2) return false;
    if (f[2 + used] == ',' && sscanf(f + 3 + used, "%d", &bw) != 1) return false;
    if (bw != 128 || p < 1 || p > 38) return false;
    nd->type_id = T_DECIMAL;
    nd->precision = p;
    nd->scale = s;
    nd->bit_width = 128;
    nd->width = 16;
    return true;
  }
  if (f[0] == 'w' && f[1] == ':') {
    int w = atoi(f + 2);
    if (w < 1 || w > MAX_FIXED_WIDTH) return false;
    nd->type_id = T_FIXED_BINARY;
    nd->width = w;
    return true;
  }
  if (strcmp(f, "+l") == 0) { nd->type_id = T_LIST; nd->lay = LAY_LIST; return true; }
  if (strcmp(f, "+L") == 0) { nd->type_id = T_LARGE_LIST; nd->lay = LAY_LLIST; return true; }
  if (strcmp(f, "+s") == 0) { nd->type_id = T_STRUCT; nd->lay = LAY_STRUCT; return true; }
  if (strcmp(f, "+m") == 0) {
    nd->type_id = T_MAP;
    nd->lay = LAY_LIST;
    nd->is_map = true;
    return true;
  }
  if (f[0] == '+' && f[1] == 'w' && f[2] == ':') {
    int w = atoi(f + 3);
    if (w < 0 || w > MAX_FIXED_WIDTH) return false;
    nd->type_id = T_FIXED_LIST;
    nd->lay = LAY_FSL;
    nd->width = w;
    return true;
  }
  return false;
}

static int flatten_schema(encoder *e, const struct ArrowSchema *s, int depth) {
  if (depth > MAX_DEPTH) return enc_fail(e, DIPPER_LIMIT, "types nest deeper than %d levels", MAX_DEPTH);
  int i = flat_add(&e->fs);
  if (i == -2) return DIPPER_NOMEM;
  if (i < 0) return enc_fail(e, DIPPER_LIMIT, "more than %d fields", MAX_FIELDS);
  node *nd = &e->fs.nodes[i];
  const char *name = s->name ? s->name : "";
  if (!s->format || !parse_format(s->format, nd))
    return enc_fail(e, DIPPER_UNSUPPORTED, "field '%s': Arrow format '%s' cannot be encoded", name,
                    s->format ? s->format : "(null)");
  if (s->dictionary)
    return enc_fail(e, DIPPER_UNSUPPORTED, "field '%s': dictionary-encoded arrays cannot be encoded", name);
  snprintf(nd->format, FORMAT_CAP, "%s", s->format); /* for messages */
  nd->name = name;
  nd->name_len = (uint32_t)strlen(name);
  nd->nullable = (s->flags & ARROW_FLAG_NULLABLE) != 0;
  nd->keys_sorted = (s->flags & ARROW_FLAG_MAP_KEYS_SORTED) != 0;
  if (s->n_children < 0 || s->n_children > MAX_FIELDS)
    return enc_fail(e, DIPPER_MISUSE, "field '%s': %lld children", name, (long long)s->n_children);
  nd->nchildren = (int)s->n_children;
  layout lay = nd->lay;
  int want = lay == LAY_STRUCT ? nd->nchildren
           : (lay == LAY_LIST || lay == LAY_LLIST || lay == LAY_FSL) ? 1 : 0;
  if (nd->nchildren != want)
    return enc_fail(e, DIPPER_MISUSE, "field '%s' (%s) has %d children, expected %d", name, s->format,
                    nd->nchildren, want);
  bool is_map = nd->is_map;
  for (int k = 0; k < want; k++) {
    const struct ArrowSchema *c = s->children[k];
    if (is_map && (!c->format || strcmp(c->format, "+s") != 0 || c->n_children != 2))
      return enc_fail(e, DIPPER_MISUSE, "map field '%s': the child must be a struct of two", name);
    int rc = flatten_schema(e, c, depth + 1);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

/* ---- encoding: the schema message ---- */

static size_t write_type(dp_buf *m, const node *nd) {
  dp_fb_field f[3];
  int n = 0;
  switch (nd->type_id) {
  case T_INT:
    f[n++] = (dp_fb_field){0, 4, (uint64_t)nd->bit_width, 0};
    f[n++] = (dp_fb_field){1, 1, nd->is_signed, 0};
    break;
  case T_FLOAT:
  case T_DATE:
  case T_INTERVAL:
  case T_DURATION:
    f[n++] = (dp_fb_field){0, 2, (uint64_t)(uint16_t)nd->unit, 0};
    break;
  case T_TIME:
    f[n++] = (dp_fb_field){0, 2, (uint64_t)(uint16_t)nd->unit, 0};
    f[n++] = (dp_fb_field){1, 4, (uint64_t)nd->bit_width, 0};
    break;
  case T_TIMESTAMP:
    f[n++] = (dp_fb_field){0, 2, (uint64_t)(uint16_t)nd->unit, 0};
    if (nd->tz && *nd->tz) f[n++] = (dp_fb_field){1, DP_FB_REF, 0, 0};
    break;
  case T_DECIMAL:
    f[n++] = (dp_fb_field){0, 4, (uint64_t)(uint32_t)nd->precision, 0};
    f[n++] = (dp_fb_field){1, 4, (uint64_t)(uint32_t)nd->scale, 0};
    f[n++] = (dp_fb_field){2, 4, (uint64_t)nd->bit_width, 0};
    break;
  case T_FIXED_BINARY:
  case T_FIXED_LIST:
    f[n++] = (dp_fb_field){0, 4, (uint64_t)(uint32_t)nd->width, 0};
    break;
  case T_MAP:
    f[n++] = (dp_fb_field){0, 1, nd->keys_sorted, 0};
    break;
  default:
    break;
  }
  size_t pos = dp_fb_table_write(m, f, n);
  if (nd->type_id == T_TIMESTAMP && nd->tz && *nd->tz)
    dp_fb_patch(m, f[1].at, dp_fb_string_write(m, nd->tz, strlen(nd->tz)));
  return pos;
}

/* Field i and its subtree; returns the table's position. */
static size_t write_field(dp_buf *m, const flat_schema *fs, int i) {
  const node *nd = &fs->nodes[i];
  dp_fb_field f[5] = {
      {0, DP_FB_REF, 0, 0},
      {1, 1, nd->nullable, 0},
      {2, 1, nd->type_id, 0},
      {3, DP_FB_REF, 0, 0},
      {5, DP_FB_REF, 0, 0},
  };
  size_t pos = dp_fb_table_write(m, f, 5);
  dp_fb_patch(m, f[0].at, dp_fb_string_write(m, nd->name, nd->name_len));
  dp_fb_patch(m, f[3].at, write_type(m, nd));
  size_t refs = dp_fb_refs_write(m, (uint32_t)nd->nchildren);
  dp_fb_patch(m, f[4].at, refs - 4);
  for (int k = 0; k < nd->nchildren; k++)
    dp_fb_patch(m, refs + 4 * (size_t)k, write_field(m, fs, fs->kids[nd->kids + k]));
  return pos;
}

/* A Message around a header written by `header`; returns the metadata. */
static void write_message_head(dp_buf *m, uint8_t kind, int64_t body_len, dp_fb_field *hdr_ref) {
  dp_buf_put(m, "\0\0\0\0", 4); /* the root offset, patched below */
  dp_fb_field f[4] = {
      {0, 2, V5, 0},
      {1, 1, kind, 0},
      {2, DP_FB_REF, 0, 0},
      {3, 8, (uint64_t)body_len, 0},
  };
  size_t pos = dp_fb_table_write(m, f, 4);
  dp_fb_patch(m, 0, pos);
  *hdr_ref = f[2];
}

/* Frame one message: continuation, padded length, metadata, body. */
static void frame(dp_buf *out, dp_buf *meta, const void *body, size_t body_len) {
  dp_fb_align(meta, 8);
  uint32_t mark = 0xFFFFFFFFu;
  int32_t len = (int32_t)meta->len;
  dp_buf_put(out, &mark, 4);
  dp_buf_put(out, &len, 4);
  if (meta->len) dp_buf_put(out, meta->data, meta->len);
  if (body_len) dp_buf_put(out, body, body_len);
}

/* ---- encoding: the record batch ---- */

static int dp_bit(const uint8_t *bits, int64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

static int64_t count_nulls(const uint8_t *bits, int64_t off, int64_t len) {
  int64_t valid = 0, i = 0;
  for (; i < len && ((off + i) & 7); i++) valid += dp_bit(bits, off + i);
  for (; i + 64 <= len; i += 64) {
    uint64_t w;
    memcpy(&w, bits + ((off + i) >> 3), 8);
    valid += __builtin_popcountll(w);
  }
  for (; i < len; i++) valid += dp_bit(bits, off + i);
  return len - valid;
}

/* Record a buffer of the body: n bytes, then padding to 8. */
static void body_buffer(encoder *e, const void *p, size_t n) {
  int64_t *b = &e->bufs[2 * e->nbufs++];
  b[0] = (int64_t)e->body.len;
  b[1] = (int64_t)n;
  if (n) dp_buf_put(&e->body, p, n);
  dp_fb_align(&e->body, 8);
}

/* Bits [off, off+len) of src as a bitmap starting at bit 0. */
static void body_bits(encoder *e, const uint8_t *src, int64_t off, int64_t len) {
  size_t nbytes = (size_t)((len + 7) / 8);
  if ((off & 7) == 0) {
    body_buffer(e, src + (off >> 3), nbytes);
    return;
  }
  int64_t *b = &e->bufs[2 * e->nbufs++];
  b[0] = (int64_t)e->body.len;
  b[1] = (int64_t)nbytes;
  unsigned sh = (unsigned)(off & 7);
  const uint8_t *p = src + (off >> 3);
  size_t last = (size_t)((off + len - 1) >> 3) - (size_t)(off >> 3); /* last source byte */
  for (size_t k = 0; k < nbytes; k++) {
    unsigned lo = p[k] >> sh;
    unsigned hi = k + 1 <= last ? (unsigned)p[k + 1] << (8 - sh) : 0;
    dp_buf_putc(&e->body, (char)(uint8_t)(lo | hi));
  }
  dp_fb_align(&e->body, 8);
}

/* Offsets [off, off+len] rebased to start at 0. */
static void body_offsets(encoder *e, const void *src, int64_t off, int64_t len, bool wide) {
  int64_t *b = &e->bufs[2 * e->nbufs++];
  b[0] = (int64_t)e->body.len;
  b[1] = (int64_t)(len + 1) * (wide ? 8 : 4);
  if (wide) {
    const int64_t *o = (const int64_t *)src + off;
    for (int64_t i = 0; i <= len; i++) {
      int64_t v = o[i] - o[0];
      dp_buf_put(&e->body, &v, 8);
    }
  } else {
    const int32_t *o = (const int32_t *)src + off;
    for (int64_t i = 0; i <= len; i++) {
      int32_t v = o[i] - o[0];
      dp_buf_put(&e->body, &v, 4);
    }
  }
  dp_fb_align(&e->body, 8);
}

/* Node i of the flattened schema holds rows [off, off+len) of array a (off
** already includes a->offset and every parent's). */
static int encode_node(encoder *e, int i, const struct ArrowArray *a, int64_t off, int64_t len) {
  const node *nd = &e->fs.nodes[i];
  if (a->n_children != nd->nchildren || (nd->lay != LAY_NULL && a->n_buffers != layout_buffers[nd->lay]))
    return enc_fail(e, DIPPER_MISUSE, "field '%s': the array has %lld buffers and %lld children, its "
                    "format '%s' needs %d and %d", nd->name, (long long)a->n_buffers,
                    (long long)a->n_children, nd->format, layout_buffers[nd->lay], nd->nchildren);
  const uint8_t *validity = a->n_buffers > 0 ? a->buffers[0] : NULL;
  int64_t nulls = 0;
  if (nd->lay == LAY_NULL)
    nulls = len;
  else if (validity && a->null_count != 0)
    nulls = count_nulls(validity, off, len);
  int64_t *nn = &e->nodes[2 * e->nnodes++];
  nn[0] = len;
  nn[1] = nulls;
  if (nd->lay == LAY_NULL) return DIPPER_OK;
  if (nulls > 0)
    body_bits(e, validity, off, len);
  else
    body_buffer(e, NULL, 0);
  const void *b1 = a->n_buffers > 1 ? a->buffers[1] : NULL;
  int rc = DIPPER_OK;
  if (len == 0) {
    /* an empty array may come with NULL buffers: write empty ones, no reads */
    static const int64_t zero = 0;
    if (nd->lay == LAY_BIN || nd->lay == LAY_LBIN || nd->lay == LAY_LIST || nd->lay == LAY_LLIST)
      body_buffer(e, &zero, nd->lay == LAY_LBIN || nd->lay == LAY_LLIST ? 8 : 4);
    if (nd->lay == LAY_BOOL || nd->lay == LAY_FIXED || nd->lay == LAY_BIN || nd->lay == LAY_LBIN)
      body_buffer(e, NULL, 0);
    for (int k = 0; k < nd->nchildren && !rc; k++)
      rc = encode_node(e, e->fs.kids[nd->kids + k], a->children[k], 0, 0);
    return rc;
  }
  switch (nd->lay) {
  case LAY_BOOL:
    body_bits(e, b1, off, len);
    break;
  case LAY_FIXED:
    body_buffer(e, (const uint8_t *)b1 + off * nd->width, (size_t)(len * nd->width));
    break;
  case LAY_BIN:
  case LAY_LBIN: {
    bool wide = nd->lay == LAY_LBIN;
    body_offsets(e, b1, off, len, wide);
    int64_t start = wide ? ((const int64_t *)b1)[off] : ((const int32_t *)b1)[off];
    int64_t end = wide ? ((const int64_t *)b1)[off + len] : ((const int32_t *)b1)[off + len];
    body_buffer(e, (const uint8_t *)a->buffers[2] + start, (size_t)(end - start));
    break;
  }
  case LAY_LIST:
  case LAY_LLIST: {
    bool wide = nd->lay == LAY_LLIST;
    body_offsets(e, b1, off, len, wide);
    int64_t start = wide ? ((const int64_t *)b1)[off] : ((const int32_t *)b1)[off];
    int64_t end = wide ? ((const int64_t *)b1)[off + len] : ((const int32_t *)b1)[off + len];
    const struct ArrowArray *c = a->children[0];
    rc = encode_node(e, e->fs.kids[nd->kids], c, c->offset + start, end - start);
    break;
  }
  case LAY_FSL: {
    const struct ArrowArray *c = a->children[0];
    rc = encode_node(e, e->fs.kids[nd->kids], c, c->offset + off * nd->width, len * nd->width);
    break;
  }
  case LAY_STRUCT:
    for (int k = 0; k < nd->nchildren && !rc; k++) {
      const struct ArrowArray *c = a->children[k];
      rc = encode_node(e, e->fs.kids[nd->kids + k], c, c->offset + off, len);
    }
    break;
  default:
    break;
  }
  return rc;
}

int dp_arrow_ipc_encode(const struct ArrowSchema *schema, const struct ArrowArray *array,
                        dp_buf *out, dp_buf *err) {
  if (!schema || !schema->release || !out) return DIPPER_MISUSE;
  encoder e;
  memset(&e, 0, sizeof e);
  e.err = err;
  int rc = DIPPER_OK;
  if (!schema->format || strcmp(schema->format, "+s") != 0)
    rc = enc_fail(&e, DIPPER_MISUSE, "the schema must be a struct (\"+s\"), not '%s'",
                  schema->format ? schema->format : "(null)");
  if (!rc) rc = flatten_schema(&e, schema, 0);
  if (!rc && !flat_finish(&e.fs)) rc = DIPPER_NOMEM;
  dp_buf meta = DP_BUF_INIT;
  if (!rc) {
    /* the schema message: Schema { endianness = Little, fields } */
    dp_fb_field hdr;
    write_message_head(&meta, HDR_SCHEMA, 0, &hdr);
    dp_fb_field f[1] = {{1, DP_FB_REF, 0, 0}};
    size_t sch = dp_fb_table_write(&meta, f, 1);
    dp_fb_patch(&meta, hdr.at, sch);
    const node *root = &e.fs.nodes[0];
    size_t refs = dp_fb_refs_write(&meta, (uint32_t)root->nchildren);
    dp_fb_patch(&meta, f[0].at, refs - 4);
    for (int k = 0; k < root->nchildren; k++)
      dp_fb_patch(&meta, refs + 4 * (size_t)k, write_field(&meta, &e.fs, e.fs.kids[root->kids + k]));
    frame(out, &meta, NULL, 0);
  }
  if (!rc && array) {
    if (!array->release || array->n_children != schema->n_children || array->length < 0 ||
        array->offset < 0)
      rc = enc_fail(&e, DIPPER_MISUSE, "the array does not match the schema (%lld columns for %lld)",
                    (long long)array->n_children, (long long)schema->n_children);
  }
  if (!rc && array) {
    e.nodes = malloc((size_t)e.fs.n * 2 * sizeof *e.nodes);
    e.bufs = malloc((size_t)(e.fs.nbuffers ? e.fs.nbuffers : 1) * 2 * sizeof *e.bufs);
    if (!e.nodes || !e.bufs) rc = DIPPER_NOMEM;
    const node *root = &e.fs.nodes[0];
    for (int k = 0; k < root->nchildren && !rc; k++) {
      const struct ArrowArray *c = array->children[k];
      rc = encode_node(&e, e.fs.kids[root->kids + k], c, c->offset + array->offset, array->length);
    }
    if (!rc) {
      meta.len = 0;
      dp_fb_field hdr;
      write_message_head(&meta, HDR_RECORD_BATCH, (int64_t)e.body.len, &hdr);
      dp_fb_field f[3] = {{0, 8, (uint64_t)array->length, 0}, {1, DP_FB_REF, 0, 0}, {2, DP_FB_REF, 0, 0}};
      size_t rb = dp_fb_table_write(&meta, f, 3);
      dp_fb_patch(&meta, hdr.at, rb);
      dp_fb_patch(&meta, f[1].at, dp_fb_structs_write(&meta, e.nodes, (uint32_t)e.nnodes, 16));
      dp_fb_patch(&meta, f[2].at, dp_fb_structs_write(&meta, e.bufs, (uint32_t)e.nbufs, 16));
      frame(out, &meta, e.body.data, e.body.len);
    }
  }
  if (!rc) {
    static const uint8_t eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
    dp_buf_put(out, eos, sizeof eos);
  }
  if (!rc && (meta.oom || e.body.oom || out->oom)) rc = DIPPER_NOMEM;
  dp_buf_free(&meta);
  dp_buf_free(&e.body);
  free(e.nodes);
  free(e.bufs);
  flat_free(&e.fs);
  return rc;
}
