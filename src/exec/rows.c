/*
** rows.c — row-set helpers of the bounded-input operators; see rows.h.
*/
#include "exec/rows.h"

#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/vector_codec.h"
#include "exec/eval.h"

/* ---- keys ---- */

uint64_t dp_rows_hash(const dp_vector *const *cols, int ncols, int64_t row) {
  uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
  for (int c = 0; c < ncols; c++) h = dp_vector_hash(cols[c], row, h);
  return h;
}

bool dp_rows_equal(const dp_vector *const *a, int64_t i, const dp_vector *const *b, int64_t j,
                   int ncols) {
  for (int c = 0; c < ncols; c++)
    if (!dp_vector_row_equal(a[c], i, b[c], j)) return false;
  return true;
}

bool dp_rows_any_null(const dp_vector *const *cols, int ncols, int64_t row) {
  for (int c = 0; c < ncols; c++)
    if (dp_vector_is_null(cols[c], row)) return true;
  return false;
}

/* ---- hash index ---- */

int dp_rowhash_init(dp_rowhash *h) {
  memset(h, 0, sizeof *h);
  return DIPPER_OK;
}

void dp_rowhash_free(dp_rowhash *h) {
  if (!h) return;
  free(h->heads);
  free(h->next);
  free(h->hashes);
  memset(h, 0, sizeof *h);
}

void dp_rowhash_clear(dp_rowhash *h) {
  if (h->heads) memset(h->heads, 0xff, (size_t)(h->mask + 1) * sizeof *h->heads); /* -1 */
  h->n = 0;
}

/* Double the buckets and relink every row: keeps chains short at load <= 1. */
static int rehash(dp_rowhash *h, uint64_t nbuckets) {
  int64_t *heads = malloc((size_t)nbuckets * sizeof *heads);
  if (!heads) return DIPPER_NOMEM;
  for (uint64_t b = 0; b < nbuckets; b++) heads[b] = -1;
  uint64_t mask = nbuckets - 1;
  for (int64_t id = 0; id < h->n; id++) {
    uint64_t b = h->hashes[id] & mask;
    h->next[id] = heads[b];
    heads[b] = id;
  }
  free(h->heads);
  h->heads = heads;
  h->mask = mask;
  return DIPPER_OK;
}

/* Room for at least need rows in the chains and hashes. */
static int grow_rows(dp_rowhash *h, int64_t need) {
  int64_t cap = dp_grow_cap(h->cap, need, 1024, INT64_MAX);
  int64_t *next = realloc(h->next, (size_t)cap * sizeof *next);
  if (!next) return DIPPER_NOMEM;
  h->next = next;
  uint64_t *hashes = realloc(h->hashes, (size_t)cap * sizeof *hashes);
  if (!hashes) return DIPPER_NOMEM;
  h->hashes = hashes;
  h->cap = cap;
  return DIPPER_OK;
}

/* Room for `more` row ids past h->n, and buckets for them (load <= 1),
** made once: a rebuild of a big index relinks its rows once, not once per
** doubling. */
static int reserve(dp_rowhash *h, int64_t more) {
  int64_t need = h->n + more;
  if (need > h->cap && grow_rows(h, need)) return DIPPER_NOMEM;
  uint64_t nb = h->heads ? h->mask + 1 : 1024;
  while (nb < (uint64_t)need) nb *= 2;
  if (!h->heads || nb != h->mask + 1) return rehash(h, nb);
  return DIPPER_OK;
}

int dp_rowhash_add(dp_rowhash *h, uint64_t hash) {
  if (h->n == h->cap && grow_rows(h, h->n + 1)) return DIPPER_NOMEM;
  if (!h->heads || (uint64_t)h->n >= h->mask + 1) {
    int rc = rehash(h, h->heads ? (h->mask + 1) * 2 : 1024);
    if (rc) return rc;
  }
  int64_t id = h->n++;
  uint64_t b = hash & h->mask;
  h->hashes[id] = hash;
  h->next[id] = h->heads[b];
  h->heads[b] = id;
  return DIPPER_OK;
}

/* ---- groups ---- */

int dp_groups_init(dp_groups *g, const dp_schema *key_schema) {
  memset(g, 0, sizeof *g);
  int n = key_schema->ncols;
  const dp_type **types = calloc((size_t)(n ? n : 1), sizeof *types);
  g->keys = calloc(1, sizeof *g->keys);
  if (!types || !g->keys) {
    free(types);
    free(g->keys);
    g->keys = NULL;
    return DIPPER_NOMEM;
  }
  for (int c = 0; c < n; c++) types[c] = key_schema->cols[c].type;
  int rc = dp_ht_init(&g->ht, n, types);
  free(types);
  if (rc) {
    free(g->keys);
    g->keys = NULL;
    return rc;
  }
  /* the view: the table's key vectors (ht.keys is a heap array, so the view
  ** survives copies of *g; dp_groups never compacts, which replaces them) */
  g->keys->schema = key_schema;
  g->keys->ncols = n;
  g->keys->cols = g->ht.keys;
  return DIPPER_OK;
}

void dp_groups_free(dp_groups *g) {
  if (!g) return;
  dp_ht_free(&g->ht);
  free(g->keys); /* the view only: its vectors were the table's */
  g->keys = NULL;
}

int64_t dp_groups_find(const dp_groups *g, const dp_vector *const *cols, int64_t row) {
  return dp_ht_find(&g->ht, cols, dp_ht_hash_row(cols, g->ht.nkeys, row), row);
}

int dp_groups_find_or_add(dp_groups *g, const dp_vector *const *cols, int64_t row, int64_t *id,
                          bool *is_new) {
  uint64_t h = dp_ht_hash_row(cols, g->ht.nkeys, row);
  *id = dp_ht_find(&g->ht, cols, h, row);
  *is_new = *id < 0;
  if (!*is_new) return DIPPER_OK;
  int rc = dp_ht_add(&g->ht, cols, row, h, id);
  g->keys->nrows = g->ht.ngroups;
  return rc;
}

/* ---- ordering ---- */

int dp_rows_order_compare(const dp_rows_order *o, int64_t i, int64_t j) {
  for (int k = 0; k < o->nkeys; k++) {
    const dp_vector *v = o->cols[k];
    bool ni = dp_vector_is_null(v, i), nj = dp_vector_is_null(v, j);
    int c;
    if (ni || nj) {
      if (ni && nj) continue;
      /* NULL placement is independent of the direction. */
      c = ni ? -1 : 1;
      if (!o->nulls_first[k]) c = -c;
      return c;
    }
    switch (v->phys) {
    /* the common keys inline: no call per comparison */
    case DP_PHYS_I8: case DP_PHYS_I16: case DP_PHYS_I32: case DP_PHYS_I64: {
      int64_t x = dp_vector_get_i64(v, i), y = dp_vector_get_i64(v, j);
      c = (x > y) - (x < y);
      break;
    }
    default:
      c = dp_vector_row_compare(v, i, v, j);
      break;
    }
    if (c != 0) return o->desc[k] ? -c : c;
  }
  return 0;
}

/* One integer key (the common ORDER BY of ids, counts, times): the keys are
** copied next to their rows, so that the merge passes read memory in order
** instead of chasing each row into the column. */
typedef struct keyed_row {
  int64_t key, row;
} keyed_row;

static int sort_int_key(int64_t *idx, int64_t n, const dp_rows_order *o) {
  const dp_vector *v = o->cols[0];
  keyed_row *a = malloc((size_t)n * sizeof *a), *tmp = malloc((size_t)n * sizeof *tmp);
  int64_t *nulls = malloc((size_t)n * sizeof *nulls);
  if (!a || !tmp || !nulls) {
    free(a);
    free(tmp);
    free(nulls);
    return DIPPER_NOMEM;
  }
  int64_t m = 0, nn = 0;
  bool desc = o->desc[0];
  for (int64_t k = 0; k < n; k++) {
    int64_t r = idx[k];
    if (dp_vector_is_null(v, r)) {
      nulls[nn++] = r;
      continue;
    }
    int64_t x = dp_vector_get_i64(v, r);
    /* descending: sort the complement, which reverses the order exactly */
    a[m].key = desc ? ~x : x;
    a[m++].row = r;
  }
  keyed_row *from = a, *to = tmp;
  for (int64_t w = 1; w < m; w *= 2) {
    for (int64_t s = 0; s < m; s += 2 * w) {
      int64_t mid = s + w < m ? s + w : m, e = s + 2 * w < m ? s + 2 * w : m;
      int64_t x = s, y = mid, k = s;
      while (x < mid && y < e) to[k++] = from[y].key < from[x].key ? from[y++] : from[x++];
      while (x < mid) to[k++] = from[x++];
      while (y < e) to[k++] = from[y++];
    }
    keyed_row *t = from;
    from = to;
    to = t;
  }
  int64_t k = 0;
  if (o->nulls_first[0])
    for (int64_t i = 0; i < nn; i++) idx[k++] = nulls[i];
  for (int64_t i = 0; i < m; i++) idx[k++] = from[i].row;
  if (!o->nulls_first[0])
    for (int64_t i = 0; i < nn; i++) idx[k++] = nulls[i];
  free(a);
  free(tmp);
  free(nulls);
  return DIPPER_OK;
}

/* Bottom-up merge sort: stable, no recursion, one scratch array. */
int dp_rows_sort(int64_t *idx, int64_t n, const dp_rows_order *o) {
  if (n < 2) return DIPPER_OK;
  if (o->nkeys == 1 && o->cols[0]->phys >= DP_PHYS_I8 && o->cols[0]->phys <= DP_PHYS_I64)
    return sort_int_key(idx, n, o);
  int64_t *tmp = malloc((size_t)n * sizeof *tmp);
  if (!tmp) return DIPPER_NOMEM;
  /* Insertion sort of runs of 16 first: fewer passes over short inputs. */
  const int64_t run = 16;
  for (int64_t s = 0; s < n; s += run) {
    int64_t e = s + run < n ? s + run : n;
    for (int64_t i = s + 1; i < e; i++) {
      int64_t x = idx[i], j = i;
      while (j > s && dp_rows_order_compare(o, idx[j - 1], x) > 0) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = x;
    }
  }
  int64_t *from = idx, *to = tmp;
  for (int64_t w = run; w < n; w *= 2) {
    for (int64_t s = 0; s < n; s += 2 * w) {
      int64_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n;
      int64_t a = s, b = m, k = s;
      while (a < m && b < e) to[k++] = dp_rows_order_compare(o, from[b], from[a]) < 0 ? from[b++] : from[a++];
      while (a < m) to[k++] = from[a++];
      while (b < e) to[k++] = from[b++];
    }
    int64_t *t = from;
    from = to;
    to = t;
  }
  if (from != idx) memcpy(idx, from, (size_t)n * sizeof *idx);
  free(tmp);
  return DIPPER_OK;
}

int dp_rows_order_eval(dp_exec *ex, const dp_sort_key *keys, int nkeys, const dp_batch *in,
                       dp_rows_order *o) {
  memset(o, 0, sizeof *o);
  size_t n = (size_t)(nkeys ? nkeys : 1);
  o->cols = calloc(n, sizeof *o->cols);
  bool *desc = calloc(n, sizeof *desc), *nf = calloc(n, sizeof *nf);
  o->desc = desc;
  o->nulls_first = nf;
  if (!o->cols || !desc || !nf) return DIPPER_NOMEM;
  o->nkeys = nkeys;
  for (int k = 0; k < nkeys; k++) {
    desc[k] = keys[k].desc;
    nf[k] = keys[k].nulls_first;
    int c = dp_expr_as_column(keys[k].expr);
    if (c >= 0) {
      o->cols[k] = in->cols[c];
    } else {
      dp_vector *v = NULL;
      int rc = dp_eval(ex, keys[k].expr, in, &v);
      if (rc) return rc;
      o->cols[k] = v;
    }
  }
  return DIPPER_OK;
}

void dp_rows_order_free(dp_rows_order *o, const dp_sort_key *keys) {
  for (int k = 0; o->cols && k < o->nkeys; k++)
    if (dp_expr_as_column(keys[k].expr) < 0) dp_vector_free((dp_vector *)(uintptr_t)o->cols[k]);
  free(o->cols);
  free((void *)(uintptr_t)o->desc);
  free((void *)(uintptr_t)o->nulls_first);
  memset(o, 0, sizeof *o);
}

/* ---- checkpoints ---- */

int dp_rows_save(dp_buf *out, const dp_batch *b) {
  return dp_batch_encode(b, 0, b->nrows, out);
}

int dp_rows_load(dp_rd *in, dp_batch *into) {
  int rc = dp_batch_decode(in, into);
  if (rc == DIPPER_OK && in->bad) rc = DIPPER_CORRUPT;
  return rc;
}

int dp_groups_save(dp_buf *out, const dp_groups *g) {
  return dp_rows_save(out, g->keys);
}

/* The keys go through dp_groups_find_or_add in id order, so group i is key
** row i again; a key seen twice was never written by dp_groups_save. */
int dp_groups_load(dp_rd *in, dp_groups *g) {
  if (dp_groups_count(g) != 0) return DIPPER_MISUSE;
  return dp_groups_load_more(in, g);
}

int dp_groups_load_more(dp_rd *in, dp_groups *g) {
  dp_batch *keys = dp_batch_new(g->keys->schema, 0);
  if (!keys) return DIPPER_NOMEM;
  int64_t first = dp_groups_count(g);
  int rc = dp_rows_load(in, keys);
  const dp_vector *const *cols = (const dp_vector *const *)keys->cols;
  for (int64_t r = 0; !rc && r < keys->nrows; r++) {
    int64_t id;
    bool fresh;
    rc = dp_groups_find_or_add(g, cols, r, &id, &fresh);
    if (!rc && (!fresh || id != first + r)) rc = DIPPER_CORRUPT;
  }
  dp_batch_free(keys);
  if (rc == DIPPER_CORRUPT) in->bad = true;
  return rc;
}

void dp_flags_save(dp_buf *out, const uint8_t *flags, int64_t n) {
  dp_put_bytes(out, n > 0 ? flags : NULL, (size_t)(n > 0 ? n : 0));
}

int dp_flags_load(dp_rd *in, uint8_t *flags, int64_t n) {
  size_t len = 0;
  const uint8_t *p = dp_get_bytes(in, &len);
  if (in->bad || len != (size_t)n) {
    in->bad = true;
    return DIPPER_CORRUPT;
  }
  for (size_t i = 0; i < len; i++) {
    if (p[i] > 1) {
      in->bad = true;
      return DIPPER_CORRUPT;
    }
    flags[i] = p[i];
  }
  return DIPPER_OK;
}

int dp_rowhash_add_rows(dp_rowhash *h, const dp_batch *b, const int *keys, int nkeys,
                        int64_t first) {
  const dp_vector *kc[64];
  if (nkeys > 64) return DIPPER_LIMIT;
  for (int k = 0; k < nkeys; k++) kc[k] = b->cols[keys[k]];
  if (b->nrows > first) {
    int rc = reserve(h, b->nrows - first);
    if (rc) return rc;
  }
  for (int64_t r = first; r < b->nrows; r++) {
    int rc = dp_rowhash_add(h, dp_rows_hash(kc, nkeys, r));
    if (rc) return rc;
  }
  return DIPPER_OK;
}

/* ---- deltas ---- */

void dp_rowlog_free(dp_rowlog *l) {
  if (!l) return;
  free(l->drop);
  free(l->dirty);
  memset(l, 0, sizeof *l);
}

void dp_rowlog_mark(dp_rowlog *l, int64_t n) {
  l->on = true;
  l->base_n = l->base_live = n;
  l->ndrop = l->ndirty = 0;
}

static int grow_ids(int64_t **a, int64_t *cap, int64_t need) {
  return dp_grow(a, cap, need, sizeof **a, 64);
}

/* The base position of the base row at current position p: p plus the drops
** below it, i.e. the number of j with drop[j] - j <= p (a nondecreasing
** sequence, searched by halves). */
static int64_t base_of(const dp_rowlog *l, int64_t p) {
  int64_t lo = 0, hi = l->ndrop;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (l->drop[mid] - mid <= p) lo = mid + 1;
    else hi = mid;
  }
  return p + lo;
}

int dp_rowlog_drop(dp_rowlog *l, const int64_t *pos, int64_t n) {
  if (!l->on || l->base_live == 0) return DIPPER_OK;
  int64_t m = 0;
  while (m < n && pos[m] < l->base_live) m++;
  if (m == 0) return DIPPER_OK;
  int64_t *merged = malloc((size_t)(l->ndrop + m) * sizeof *merged);
  if (!merged) return DIPPER_NOMEM;
  /* one walk: map each position onto the base (j drops below it so far)
  ** and merge the result into the sorted drops */
  int64_t j = 0, k = 0;
  for (int64_t i = 0; i < m; i++) {
    while (j < l->ndrop && l->drop[j] - j <= pos[i]) merged[k++] = l->drop[j], j++;
    merged[k++] = pos[i] + j;
  }
  while (j < l->ndrop) merged[k++] = l->drop[j++];
  free(l->drop);
  l->drop = merged;
  l->ndrop = l->drop_cap = k;
  l->base_live -= m;
  return DIPPER_OK;
}

void dp_rowlog_clear(dp_rowlog *l) {
  l->base_live = 0;
  l->ndrop = l->ndirty = 0;
}

int dp_rowlog_touch(dp_rowlog *l, int64_t pos) {
  if (!l->on || pos < 0 || pos >= l->base_live) return DIPPER_OK;
  if (grow_ids(&l->dirty, &l->dirty_cap, l->ndirty + 1)) return DIPPER_NOMEM;
  l->dirty[l->ndirty++] = base_of(l, pos);
  return DIPPER_OK;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Ascending positions as their count, the first, then each gap less one. */
static void put_ascending(dp_buf *out, const int64_t *v, int64_t n) {
  dp_put_uvar(out, (uint64_t)n);
  for (int64_t i = 0; i < n; i++) dp_put_uvar(out, (uint64_t)(i ? v[i] - v[i - 1] - 1 : v[i]));
}

/* Read them back, each below `limit`; *v malloc'd (NULL when none). */
static int get_ascending(dp_rd *in, int64_t limit, int64_t **v, int64_t *n) {
  *v = NULL;
  *n = 0;
  uint64_t count = dp_get_count(in, 1);
  if (in->bad || count > (uint64_t)limit) goto bad;
  if (count == 0) return DIPPER_OK;
  *v = malloc((size_t)count * sizeof **v);
  if (!*v) return DIPPER_NOMEM;
  uint64_t next = 0; /* the smallest value the next one may take */
  for (uint64_t i = 0; i < count; i++) {
    uint64_t gap = dp_get_uvar(in);
    if (in->bad || gap >= (uint64_t)limit - next) goto bad;
    (*v)[i] = (int64_t)(next + gap);
    next += gap + 1;
  }
  *n = (int64_t)count;
  return DIPPER_OK;
bad:
  in->bad = true;
  return DIPPER_CORRUPT;
}

/* Ascending positions as runs of consecutive ones: the count of runs, then
** per run the gap from the end of the one before and its length less one.
** A compaction or an eviction drops rows in long runs (the oldest rows, in
** arrival order), which cost a few bytes each this way, not one per row. */
static void put_ranges(dp_buf *out, const int64_t *v, int64_t n) {
  int64_t runs = 0;
  for (int64_t i = 0; i < n; i++)
    if (i == 0 || v[i] != v[i - 1] + 1) runs++;
  dp_put_uvar(out, (uint64_t)runs);
  int64_t next = 0; /* the smallest value the next run may start at */
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    while (j < n && v[j] == v[j - 1] + 1) j++;
    dp_put_uvar(out, (uint64_t)(v[i] - next));
    dp_put_uvar(out, (uint64_t)(j - i - 1));
    next = v[j - 1] + 2; /* runs are maximal: one value at least between two */
    i = j;
  }
}

/* Read them back, each below `limit`; *v malloc'd (NULL when none). */
static int get_ranges(dp_rd *in, int64_t limit, int64_t **v, int64_t *n) {
  *v = NULL;
  *n = 0;
  uint64_t runs = dp_get_count(in, 2);
  if (in->bad || runs > (uint64_t)limit) goto bad;
  int64_t cap = 0, k = 0;
  uint64_t next = 0;
  for (uint64_t r = 0; r < runs; r++) {
    uint64_t gap = dp_get_uvar(in), len = dp_get_uvar(in);
    if (in->bad || next > (uint64_t)limit || gap >= (uint64_t)limit - next ||
        len >= (uint64_t)limit - next - gap)
      goto bad;
    uint64_t from = next + gap;
    if (k + (int64_t)len + 1 > cap) {
      int64_t c = cap ? cap * 2 : 64;
      while (c < k + (int64_t)len + 1) c *= 2;
      int64_t *p = realloc(*v, (size_t)c * sizeof *p);
      if (!p) {
        free(*v);
        *v = NULL;
        return DIPPER_NOMEM;
      }
      *v = p;
      cap = c;
    }
    for (uint64_t i = 0; i <= len; i++) (*v)[k++] = (int64_t)(from + i);
    next = from + len + 2;
  }
  *n = k;
  return DIPPER_OK;
bad:
  free(*v);
  *v = NULL;
  in->bad = true;
  return DIPPER_CORRUPT;
}

/* The log's second byte: how the base rows dropped follow. */
enum { DROPS_GAPS = 0, DROPS_ALL = 1, DROPS_RANGES = 2 };

int dp_rowlog_save(dp_buf *out, const dp_rowlog *l, int64_t **at, int64_t *nat) {
  *at = NULL;
  *nat = 0;
  dp_put_uvar(out, (uint64_t)l->base_n);
  bool all = l->base_live == 0;
  dp_put_u8(out, all ? DROPS_ALL : l->ndrop > 0 ? DROPS_RANGES : DROPS_GAPS);
  if (all) return out->oom ? DIPPER_NOMEM : DIPPER_OK;
  if (l->ndrop > 0)
    put_ranges(out, l->drop, l->ndrop);
  else
    put_ascending(out, l->drop, 0);
  /* the dirty rows: sorted, once each, those still alive */
  int64_t n = l->ndirty, k = 0;
  int64_t *d = n ? malloc((size_t)n * sizeof *d) : NULL;
  if (n && !d) return DIPPER_NOMEM;
  if (n) memcpy(d, l->dirty, (size_t)n * sizeof *d);
  if (n) qsort(d, (size_t)n, sizeof *d, cmp_i64);
  int64_t j = 0;
  for (int64_t i = 0; i < n; i++) {
    if (k > 0 && d[k - 1] == d[i]) continue;
    while (j < l->ndrop && l->drop[j] < d[i]) j++;
    if (j < l->ndrop && l->drop[j] == d[i]) continue;
    d[k++] = d[i];
  }
  put_ascending(out, d, k);
  /* their current positions: the base position less the drops below it */
  j = 0;
  for (int64_t i = 0; i < k; i++) {
    while (j < l->ndrop && l->drop[j] < d[i]) j++;
    d[i] -= j;
  }
  if (k) *at = d;
  else free(d);
  *nat = k;
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_rowlog_load(dp_rd *in, int64_t n, dp_rowlog_delta *d) {
  memset(d, 0, sizeof *d);
  uint64_t base_n = dp_get_uvar(in);
  uint8_t how = dp_get_u8(in);
  if (in->bad || base_n != (uint64_t)n || how > DROPS_RANGES) {
    in->bad = true;
    return DIPPER_CORRUPT;
  }
  d->all = how == DROPS_ALL;
  if (d->all) return DIPPER_OK;
  int rc = how == DROPS_RANGES ? get_ranges(in, n, &d->drop, &d->ndrop)
                               : get_ascending(in, n, &d->drop, &d->ndrop);
  if (!rc && how == DROPS_RANGES && d->ndrop == 0) {
    in->bad = true; /* the writer writes no runs as DROPS_GAPS */
    rc = DIPPER_CORRUPT;
  }
  if (!rc) rc = get_ascending(in, n, &d->dirty, &d->ndirty);
  for (int64_t i = 0, j = 0; !rc && i < d->ndirty; i++) {
    while (j < d->ndrop && d->drop[j] < d->dirty[i]) j++;
    if (j < d->ndrop && d->drop[j] == d->dirty[i]) {
      in->bad = true;
      rc = DIPPER_CORRUPT; /* a row changed and dropped: the log was not written so */
    }
  }
  if (rc) dp_rowlog_delta_free(d);
  return rc;
}

void dp_rowlog_delta_free(dp_rowlog_delta *d) {
  free(d->drop);
  free(d->dirty);
  memset(d, 0, sizeof *d);
}

int dp_rowlog_keep(const dp_rowlog_delta *d, int64_t n, int64_t **keep, int64_t *nkeep) {
  *nkeep = 0;
  *keep = malloc((size_t)(n ? n : 1) * sizeof **keep);
  if (!*keep) return DIPPER_NOMEM;
  if (d->all) return DIPPER_OK;
  for (int64_t r = 0, j = 0; r < n; r++) {
    if (j < d->ndrop && d->drop[j] == r) {
      j++;
      continue;
    }
    (*keep)[(*nkeep)++] = r;
  }
  return DIPPER_OK;
}

int dp_rows_compact(dp_batch **b, const int64_t *keep, int64_t n) {
  if (n == (*b)->nrows) return DIPPER_OK; /* keep lists are ascending: all of them */
  dp_batch *rest = dp_batch_new((*b)->schema, 0);
  int rc = rest ? dp_batch_take(rest, *b, keep, 0, n) : DIPPER_NOMEM;
  if (rc) {
    dp_batch_free(rest);
    return rc;
  }
  dp_batch_free(*b);
  *b = rest;
  return DIPPER_OK;
}

int dp_groups_compact(dp_groups *g, const int64_t *keep, int64_t n) {
  if (n == dp_groups_count(g)) return DIPPER_OK;
  dp_groups fresh;
  int rc = dp_groups_init(&fresh, g->keys->schema);
  const dp_vector *const *cols = (const dp_vector *const *)g->keys->cols;
  for (int64_t i = 0; !rc && i < n; i++) {
    int64_t id;
    bool is_new;
    rc = dp_groups_find_or_add(&fresh, cols, keep[i], &id, &is_new);
  }
  if (rc) {
    dp_groups_free(&fresh);
    return rc;
  }
  dp_groups_free(g);
  *g = fresh;
  return DIPPER_OK;
}

int dp_rows_save_from(dp_buf *out, const dp_batch *b, int64_t first) {
  return dp_batch_encode(b, first, b->nrows - first, out);
}

int dp_rows_save_range(dp_buf *out, const dp_batch *b, int64_t first, int64_t n) {
  return dp_batch_encode(b, first, n, out);
}

int dp_groups_save_from(dp_buf *out, const dp_groups *g, int64_t first) {
  return dp_rows_save_from(out, g->keys, first);
}

int dp_state_check(dp_op *op, dp_rd *in, uint8_t version) {
  uint8_t v = dp_get_u8(in);
  if (in->bad)
    return dp_error(op->ex->diags, DIPPER_CORRUPT, op->plan->span,
                    "the checkpointed state of the %s operator is empty or cut short",
                    op->cls->name);
  if (v != version) {
    in->bad = true;
    return dp_error(op->ex->diags, DIPPER_CORRUPT, op->plan->span,
                    "the checkpointed state of the %s operator is of version %u, and this "
                    "build reads version %u; start the query from a fresh checkpoint folder",
                    op->cls->name, (unsigned)v, (unsigned)version);
  }
  return DIPPER_OK;
}

int dp_state_corrupt(dp_op *op, int rc, const char *what) {
  if (rc == DIPPER_NOMEM)
    return dp_error(op->ex->diags, DIPPER_NOMEM, op->plan->span,
                    "out of memory restoring the state of the %s operator", op->cls->name);
  return dp_error(op->ex->diags, DIPPER_CORRUPT, op->plan->span,
                  "the checkpointed state of the %s operator does not read back whole (%s); "
                  "the checkpoint is damaged or was written for another query",
                  op->cls->name, what);
}
