/*
** par_rows.h — a memory table's rows as text lines, and the lines stably
** sorted by their first fields, for the tests that compare a query on N
** workers with the same query on one thread (exec/parallel_test.c).
*/
#ifndef DP_TEST_PAR_ROWS_H
#define DP_TEST_PAR_ROWS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dipper.h"
#include "test.h"


typedef struct text {
  char *data;
  size_t len, cap;
} text;

static inline void put(text *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->data = realloc(t->data, t->cap);
    CHECK(t->data != NULL);
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
}

static inline void put_cell(text *t, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t r) {
  char buf[64];
  int64_t i = r + a->offset;
  const uint8_t *valid = a->buffers[0];
  const char *f = s->format;
  if (valid && !((valid[i >> 3] >> (i & 7)) & 1)) {
    put(t, "NULL", 4);
  } else if (strcmp(f, "l") == 0 || strncmp(f, "ts", 2) == 0) {
    put(t, buf, (size_t)snprintf(buf, sizeof buf, "%" PRId64, ((const int64_t *)a->buffers[1])[i]));
  } else if (strcmp(f, "i") == 0) {
    put(t, buf, (size_t)snprintf(buf, sizeof buf, "%d", ((const int32_t *)a->buffers[1])[i]));
  } else if (strcmp(f, "u") == 0) {
    const int32_t *off = a->buffers[1];
    put(t, (const char *)a->buffers[2] + off[i], (size_t)(off[i + 1] - off[i]));
  } else {
    put(t, "?", 1);
    put(t, f, strlen(f));
  }
}

/* Every row of the memory table as "a|b|c\n" lines. */
static inline text fetch(dipper *db, const char *table) {
  text t = {0};
  put(&t, "", 0);
  struct ArrowSchema schema;
  struct ArrowArray array;
  int rc = dipper_memory_fetch(db, table, &schema, &array);
  if (rc) fprintf(stderr, "fetch: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  for (int64_t r = 0; r < array.length; r++) {
    for (int64_t c = 0; c < array.n_children; c++) {
      if (c) put(&t, "|", 1);
      put_cell(&t, schema.children[c], array.children[c], r);
    }
    put(&t, "\n", 1);
  }
  array.release(&array);
  schema.release(&schema);
  return t;
}

/* The lines stably sorted by their text before `key_fields` '|': each
** key's lines keep their order. */
typedef struct line {
  const char *p;
  size_t len, keylen, at;
} line;

static inline int by_key(const void *a, const void *b) {
  const line *x = a, *y = b;
  size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
  int c = memcmp(x->p, y->p, n);
  if (c) return c;
  if (x->keylen != y->keylen) return x->keylen < y->keylen ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

/* finals: only each key's last line (an update stream whose micro-batches
** are cut otherwise on workers: the same final rows, other updates). */
static inline text sort_keys(const text *in, int key_fields, bool finals_only) {
  size_t n = 0;
  for (size_t i = 0; i < in->len; i++) n += in->data[i] == '\n';
  line *ls = calloc(n ? n : 1, sizeof *ls);
  CHECK(ls != NULL);
  const char *p = in->data;
  for (size_t k = 0; k < n; k++) {
    const char *nl = strchr(p, '\n');
    ls[k].p = p;
    ls[k].len = (size_t)(nl - p) + 1;
    ls[k].at = k;
    const char *q = p;
    for (int f = 0; f < key_fields && q < nl; f++) {
      const char *bar = memchr(q, '|', (size_t)(nl - q));
      q = bar ? bar + 1 : nl;
    }
    ls[k].keylen = (size_t)(q - p);
    p = nl + 1;
  }
  qsort(ls, n, sizeof *ls, by_key);
  text out = {0};
  put(&out, "", 0);
  for (size_t k = 0; k < n; k++)
    if (!finals_only || k + 1 == n || ls[k + 1].keylen != ls[k].keylen ||
        memcmp(ls[k + 1].p, ls[k].p, ls[k].keylen) != 0)
      put(&out, ls[k].p, ls[k].len);
  free(ls);
  return out;
}

#endif /* DP_TEST_PAR_ROWS_H */
