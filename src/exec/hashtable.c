/*
** hashtable.c — the group hash table of hashtable.h: batch hashing, find or
** insert, compaction, and the row compare helpers the aggregation and
** window operators share (rows are copied with core/vector.h's
** dp_vector_take).
*/
#include "exec/hashtable.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "core/grow.h"
#include "exec/eval.h"

#define HT_MIN_SLOTS 64u
#define PREFETCH_AHEAD 16
#define HT_NULL_HASH UINT64_C(0x5bd1e9955bd1e995)
#define HT_K1 UINT64_C(0x9e3779b97f4a7c15)
#define HT_K2 UINT64_C(0xbf58476d1ce4e5b9)

static inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + HT_K1 + (h << 6) + (h >> 2);
  h *= HT_K2;
  return h ^ (h >> 31);
}

/* The final avalanche: the slot index takes the low bits and the tag the
** high ones, so both must depend on every input bit. */
static inline uint64_t finish(uint64_t h) {
  h ^= h >> 33;
  h *= UINT64_C(0xff51afd7ed558ccd);
  h ^= h >> 33;
  h *= UINT64_C(0xc4ceb9fe1a85ec53);
  h ^= h >> 33;
  return h;
}

static uint64_t hash_bytes(const char *p, size_t n) {
  uint64_t h = (uint64_t)n * HT_K1;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * HT_K2;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, p, n);
  h = (h ^ w) * HT_K1;
  return h ^ (h >> 32);
}

static inline uint64_t double_bits(double d) {
  if (d == 0) d = 0; /* -0.0 groups with 0.0 */
  if (isnan(d)) return UINT64_C(0x7ff8000000000000);
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

/* h with row i of a scalar column mixed in (the loops of dp_ht_hash, one row). */
static inline uint64_t mix_value(uint64_t h, const dp_vector *v, int64_t i) {
  switch (v->phys) {
  case DP_PHYS_F32:
  case DP_PHYS_F64: return mix(h, double_bits(dp_vector_get_f64(v, i)));
  case DP_PHYS_BIT: return mix(h, dp_vector_get_bool(v, i) ? 1u : 2u);
  case DP_PHYS_D128: {
    unsigned __int128 u = (unsigned __int128)dp_vector_get_dec(v, i);
    return mix(mix(h, (uint64_t)u), (uint64_t)(u >> 64));
  }
  case DP_PHYS_VARBIN: {
    size_t len;
    const char *p = dp_vector_get_str(v, i, &len);
    return mix(h, hash_bytes(p, len));
  }
  default: return mix(h, (uint64_t)dp_vector_get_i64(v, i));
  }
}

/* hashes[i] = hash of row from + i, i < nrows (dp_ht_hash's loops). */
static void hash_rows(const dp_vector *const *cols, int ncols, int64_t from, int64_t nrows,
                      uint64_t *hashes) {
  for (int64_t i = 0; i < nrows; i++) hashes[i] = 0;
  for (int c = 0; c < ncols; c++) {
    const dp_vector *v = cols[c];
    bool nested = v->phys == DP_PHYS_STRUCT || v->phys == DP_PHYS_LIST;
    if (v->validity && v->null_count > 0 && v->phys != DP_PHYS_NULL && !nested) {
      /* A NULL row hashes alike whatever its slot holds: gathers keep the
      ** slot's bytes under a NULL bit, and so may kernels. */
      for (int64_t i = 0; i < nrows; i++)
        hashes[i] = dp_bit_get(v->validity, from + i) ? mix_value(hashes[i], v, from + i)
                                               : mix(hashes[i] * HT_K1, HT_NULL_HASH);
      continue;
    }
    /* The switch is per column; each case is a plain loop over the rows. */
    switch (v->phys) {
    case DP_PHYS_NULL:
      for (int64_t i = 0; i < nrows; i++) hashes[i] = mix(hashes[i], HT_NULL_HASH);
      break;
    case DP_PHYS_I8:
    case DP_PHYS_I16:
    case DP_PHYS_I32:
      for (int64_t i = 0; i < nrows; i++) hashes[i] = mix(hashes[i], (uint64_t)dp_vector_get_i64(v, from + i));
      break;
    case DP_PHYS_I64: {
      const int64_t *x = (const int64_t *)v->values + from;
      for (int64_t i = 0; i < nrows; i++) hashes[i] = mix(hashes[i], (uint64_t)x[i]);
      break;
    }
    case DP_PHYS_F32:
    case DP_PHYS_F64:
      for (int64_t i = 0; i < nrows; i++) hashes[i] = mix(hashes[i], double_bits(dp_vector_get_f64(v, from + i)));
      break;
    case DP_PHYS_BIT:
      for (int64_t i = 0; i < nrows; i++) hashes[i] = mix(hashes[i], dp_vector_get_bool(v, from + i) ? 1u : 2u);
      break;
    case DP_PHYS_D128: {
      const dp_i128 *x = (const dp_i128 *)v->values + from;
      for (int64_t i = 0; i < nrows; i++) {
        unsigned __int128 u = (unsigned __int128)x[i];
        hashes[i] = mix(mix(hashes[i], (uint64_t)u), (uint64_t)(u >> 64));
      }
      break;
    }
    case DP_PHYS_VARBIN:
      for (int64_t i = 0; i < nrows; i++) {
        size_t len;
        const char *p = dp_vector_get_str(v, from + i, &len);
        hashes[i] = mix(hashes[i], hash_bytes(p, len));
      }
      break;
    default: /* dp_vector_hash has its own NULL hash */
      for (int64_t i = 0; i < nrows; i++) hashes[i] = mix(hashes[i], dp_vector_hash(v, from + i, 0));
      break;
    }
  }
  for (int64_t i = 0; i < nrows; i++) hashes[i] = finish(hashes[i]);
}

void dp_ht_hash(const dp_vector *const *cols, int ncols, int64_t nrows, uint64_t *hashes) {
  hash_rows(cols, ncols, 0, nrows, hashes);
}

uint64_t dp_ht_hash_row(const dp_vector *const *cols, int ncols, int64_t row) {
  uint64_t h = 0;
  for (int c = 0; c < ncols; c++) {
    const dp_vector *v = cols[c];
    if (v->phys == DP_PHYS_NULL)
      h = mix(h, HT_NULL_HASH);
    else if (v->phys == DP_PHYS_STRUCT || v->phys == DP_PHYS_LIST)
      h = mix(h, dp_vector_hash(v, row, 0));
    else if (v->validity && !dp_bit_get(v->validity, row))
      h = mix(h * HT_K1, HT_NULL_HASH);
    else
      h = mix_value(h, v, row);
  }
  return finish(h);
}

bool dp_ht_row_equal(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j) {
  bool na = dp_vector_is_null(a, i), nb = dp_vector_is_null(b, j);
  if (na || nb) return na && nb;
  switch (a->phys) {
  case DP_PHYS_I8:
  case DP_PHYS_I16:
  case DP_PHYS_I32:
  case DP_PHYS_I64: return dp_vector_get_i64(a, i) == dp_vector_get_i64(b, j);
  case DP_PHYS_F32:
  case DP_PHYS_F64: {
    double x = dp_vector_get_f64(a, i), y = dp_vector_get_f64(b, j);
    return x == y || (isnan(x) && isnan(y));
  }
  case DP_PHYS_BIT: return dp_vector_get_bool(a, i) == dp_vector_get_bool(b, j);
  case DP_PHYS_D128: return dp_vector_get_dec(a, i) == dp_vector_get_dec(b, j);
  case DP_PHYS_VARBIN: {
    size_t la, lb;
    const char *pa = dp_vector_get_str(a, i, &la), *pb = dp_vector_get_str(b, j, &lb);
    return la == lb && memcmp(pa, pb, la) == 0;
  }
  default: return dp_vector_row_equal(a, i, b, j);
  }
}

int dp_ht_row_compare(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j) {
  bool na = dp_vector_is_null(a, i), nb = dp_vector_is_null(b, j);
  if (na || nb) return na == nb ? 0 : na ? -1 : 1;
  switch (a->phys) {
  case DP_PHYS_I8:
  case DP_PHYS_I16:
  case DP_PHYS_I32:
  case DP_PHYS_I64: {
    int64_t x = dp_vector_get_i64(a, i), y = dp_vector_get_i64(b, j);
    return x < y ? -1 : x > y;
  }
  case DP_PHYS_F32:
  case DP_PHYS_F64: {
    /* NaN sorts after every number, as in Spark. */
    double x = dp_vector_get_f64(a, i), y = dp_vector_get_f64(b, j);
    if (isnan(x) || isnan(y)) return isnan(x) == isnan(y) ? 0 : isnan(x) ? 1 : -1;
    return x < y ? -1 : x > y;
  }
  case DP_PHYS_BIT: return (int)dp_vector_get_bool(a, i) - (int)dp_vector_get_bool(b, j);
  case DP_PHYS_D128: {
    dp_i128 x = dp_vector_get_dec(a, i), y = dp_vector_get_dec(b, j);
    return x < y ? -1 : x > y;
  }
  case DP_PHYS_VARBIN: {
    size_t la, lb;
    const char *pa = dp_vector_get_str(a, i, &la), *pb = dp_vector_get_str(b, j, &lb);
    int c = memcmp(pa, pb, la < lb ? la : lb);
    if (c) return c < 0 ? -1 : 1;
    return la < lb ? -1 : la > lb;
  }
  default: return dp_vector_row_compare(a, i, b, j);
  }
}

int dp_ht_init(dp_hashtable *ht, int nkeys, const dp_type *const *types) {
  memset(ht, 0, sizeof *ht);
  ht->nkeys = nkeys;
  ht->keys = calloc((size_t)(nkeys > 0 ? nkeys : 1), sizeof *ht->keys);
  ht->slots = calloc(HT_MIN_SLOTS, sizeof *ht->slots);
  if (!ht->keys || !ht->slots) {
    dp_ht_free(ht);
    return DIPPER_NOMEM;
  }
  ht->nslots = HT_MIN_SLOTS;
  for (int k = 0; k < nkeys; k++) {
    ht->keys[k] = dp_vector_new(types[k], 0);
    if (!ht->keys[k]) {
      dp_ht_free(ht);
      return DIPPER_NOMEM;
    }
  }
  return DIPPER_OK;
}

void dp_ht_free(dp_hashtable *ht) {
  if (!ht) return;
  if (ht->keys)
    for (int k = 0; k < ht->nkeys; k++) dp_vector_free(ht->keys[k]);
  free(ht->keys);
  free(ht->hashes);
  free(ht->slots);
  memset(ht, 0, sizeof *ht);
}

static inline uint64_t slot_of(uint64_t hash, int64_t id) {
  return (hash & UINT64_C(0xffffffff00000000)) | (uint64_t)(id + 1);
}

static void place(uint64_t *slots, uint64_t mask, uint64_t hash, int64_t id) {
  uint64_t s = hash & mask;
  while (slots[s]) s = (s + 1) & mask;
  slots[s] = slot_of(hash, id);
}

/* The slots are placed again from the kept hashes, so the old array can be
** reused: realloc grows a large one in place (mremap) instead of holding
** both sizes at once, which kept a third more memory at the peak. */
static int rebuild_slots(dp_hashtable *ht, uint64_t nslots) {
  uint64_t *slots = realloc(ht->slots, nslots * sizeof *slots);
  if (!slots) return DIPPER_NOMEM;
  memset(slots, 0, nslots * sizeof *slots);
  for (int64_t g = 0; g < ht->ngroups; g++) place(slots, nslots - 1, ht->hashes[g], g);
  ht->slots = slots;
  ht->nslots = nslots;
  return DIPPER_OK;
}

static inline bool keys_equal(const dp_hashtable *ht, const dp_vector *const *cols, int64_t row,
                              int64_t id) {
  for (int k = 0; k < ht->nkeys; k++) {
    const dp_vector *a = ht->keys[k], *b = cols[k];
    if (a->phys == DP_PHYS_I64 && !a->validity && !b->validity) {
      if (((const int64_t *)a->values)[id] != ((const int64_t *)b->values)[row]) return false;
    } else if (!dp_ht_row_equal(a, id, b, row)) {
      return false;
    }
  }
  return true;
}

int64_t dp_ht_find(const dp_hashtable *ht, const dp_vector *const *cols, uint64_t hash, int64_t row) {
  uint64_t mask = ht->nslots - 1, tag = hash & UINT64_C(0xffffffff00000000);
  for (uint64_t s = hash & mask;; s = (s + 1) & mask) {
    uint64_t e = ht->slots[s];
    if (!e) return -1;
    if ((e & UINT64_C(0xffffffff00000000)) == tag) {
      int64_t id = (int64_t)(e & 0xffffffffu) - 1;
      if (keys_equal(ht, cols, row, id)) return id;
    }
  }
}

int dp_ht_add(dp_hashtable *ht, const dp_vector *const *cols, int64_t row, uint64_t hash,
              int64_t *id_out) {
  if (ht->ngroups >= (int64_t)UINT32_MAX - 1) return DIPPER_LIMIT;
  if ((uint64_t)(ht->ngroups + 1) * 2 > ht->nslots) {
    int rc = rebuild_slots(ht, ht->nslots * 2);
    if (rc) return rc;
  }
  if (dp_grow(&ht->hashes, &ht->hashes_cap, ht->ngroups + 1, sizeof *ht->hashes, 256))
    return DIPPER_NOMEM;
  for (int k = 0; k < ht->nkeys; k++) {
    int rc = dp_vector_take(ht->keys[k], cols[k], &row, 0, 1);
    if (rc) {
      for (int j = 0; j < k; j++) /* undo the partial row */
        dp_vector_truncate(ht->keys[j], ht->ngroups);
      return rc;
    }
  }
  int64_t id = ht->ngroups++;
  ht->hashes[id] = hash;
  place(ht->slots, ht->nslots - 1, hash, id);
  *id_out = id;
  return DIPPER_OK;
}

static int reserve_hashes(dp_hashtable *ht, int64_t len) {
  if (len <= ht->hashes_cap) return DIPPER_OK;
  uint64_t *h = realloc(ht->hashes, (size_t)len * sizeof *h);
  if (!h) return DIPPER_NOMEM;
  dp_prefault(h + ht->ngroups, (size_t)(len - ht->ngroups) * sizeof *h); /* hashed next */
  ht->hashes = h;
  ht->hashes_cap = len;
  return DIPPER_OK;
}

int dp_ht_reserve(dp_hashtable *ht, int64_t n) {
  if (n > (int64_t)UINT32_MAX - 1) return DIPPER_LIMIT;
  int rc = reserve_hashes(ht, n);
  uint64_t nslots = ht->nslots;
  while (nslots < (uint64_t)n * 2) nslots *= 2;
  if (rc || nslots == ht->nslots) return rc;
  if (ht->ngroups) return rebuild_slots(ht, nslots);
  uint64_t *slots = calloc(nslots, sizeof *slots);
  if (!slots) return DIPPER_NOMEM;
  dp_prefault(slots, nslots * sizeof *slots); /* every page gets a slot or two */
  free(ht->slots);
  ht->slots = slots;
  ht->nslots = nslots;
  return DIPPER_OK;
}

static int add_appended(dp_hashtable *ht, int64_t len, int64_t *dup) {
  int64_t from = ht->ngroups, n = len - from;
  if (len > (int64_t)UINT32_MAX - 1) return DIPPER_LIMIT;
  if (n == 0) return DIPPER_OK;
  int rc = reserve_hashes(ht, len);
  if (rc) return rc;
  hash_rows((const dp_vector *const *)ht->keys, ht->nkeys, from, n, ht->hashes + from);
  uint64_t nslots = ht->nslots;
  while (nslots < (uint64_t)len * 2) nslots *= 2;
  if (nslots != ht->nslots && from == 0) {
    /* an empty table (a restore): fresh zero pages, nothing to place again */
    uint64_t *slots = calloc(nslots, sizeof *slots);
    if (!slots) return DIPPER_NOMEM;
    dp_prefault(slots, nslots * sizeof *slots);
    free(ht->slots);
    ht->slots = slots;
    ht->nslots = nslots;
  } else if (nslots != ht->nslots && (rc = rebuild_slots(ht, nslots))) {
    return rc;
  }
  const uint64_t TAG = UINT64_C(0xffffffff00000000), mask = ht->nslots - 1;
  uint64_t *slots = ht->slots;
  const uint64_t *hashes = ht->hashes;
  const dp_vector *const *keys = (const dp_vector *const *)ht->keys;
  for (int64_t r = from; r < len; r++) {
#if defined(__GNUC__)
    if (r + PREFETCH_AHEAD < len) __builtin_prefetch(&slots[hashes[r + PREFETCH_AHEAD] & mask], 1);
#endif
    uint64_t hash = hashes[r], s = hash & mask;
    for (; slots[s]; s = (s + 1) & mask) {
      if ((slots[s] & TAG) != (hash & TAG)) continue;
      int64_t g = (int64_t)(slots[s] & 0xffffffffu) - 1;
      if (keys_equal(ht, keys, r, g)) {
        /* take back the rows placed: the table is as it was */
        *dup = r;
        return rebuild_slots(ht, ht->nslots);
      }
    }
    slots[s] = slot_of(hash, r);
  }
  ht->ngroups = len;
  return DIPPER_OK;
}

int dp_ht_add_appended(dp_hashtable *ht, int64_t len, int64_t *dup) {
  *dup = -1;
  if (len < ht->ngroups) return DIPPER_MISUSE;
  for (int k = 0; k < ht->nkeys; k++)
    if (ht->keys[k]->length != len) return DIPPER_MISUSE;
  int rc = add_appended(ht, len, dup);
  if (rc || *dup >= 0)
    for (int k = 0; k < ht->nkeys; k++) dp_vector_truncate(ht->keys[k], ht->ngroups);
  return rc;
}

/* The common case of streaming aggregation: up to FAST_KEYS BIGINT or
** timestamp keys, no NULL among the probe rows nor the stored keys.  The
** key comparison is then a few loads with no call and no type switch, and a
** new key is a few stores. */
#define FAST_KEYS 4

static bool fast_keys(const dp_hashtable *ht, const dp_vector *const *cols) {
  if (ht->nkeys < 1 || ht->nkeys > FAST_KEYS) return false;
  for (int k = 0; k < ht->nkeys; k++) {
    const dp_vector *a = ht->keys[k], *b = cols[k];
    if (a->phys != DP_PHYS_I64 || b->phys != DP_PHYS_I64) return false;
    if (a->validity || b->null_count != 0) return false; /* stored keys: no bitmap at all */
  }
  return true;
}

static int find_or_insert_fast(dp_hashtable *ht, const dp_vector *const *cols,
                               const uint64_t *hashes, const int64_t *rows, int64_t n,
                               int64_t *ids, int64_t *created_out) {
  const int nk = ht->nkeys;
  const int64_t *probe[FAST_KEYS];
  int64_t *stored[FAST_KEYS];
  for (int c = 0; c < nk; c++) {
    probe[c] = cols[c]->values;
    stored[c] = ht->keys[c]->values;
  }
  const uint64_t TAG = UINT64_C(0xffffffff00000000);
  int64_t created = 0;
  int rc = DIPPER_OK;
  for (int64_t k = 0; k < n; k++) {
    int64_t row = rows ? rows[k] : k;
    uint64_t hash = hashes[row];
    uint64_t mask = ht->nslots - 1;
#if defined(__GNUC__)
    if (k + PREFETCH_AHEAD < n) {
      int64_t ahead = rows ? rows[k + PREFETCH_AHEAD] : k + PREFETCH_AHEAD;
      __builtin_prefetch(&ht->slots[hashes[ahead] & mask]);
      int64_t half = rows ? rows[k + PREFETCH_AHEAD / 2] : k + PREFETCH_AHEAD / 2;
      uint64_t e = ht->slots[hashes[half] & mask];
      if (e) {
        uint64_t id = (e & 0xffffffffu) - 1;
        for (int c = 0; c < nk; c++) __builtin_prefetch(&stored[c][id]);
      }
    }
#endif
    int64_t id = -1;
    for (uint64_t s = hash & mask;; s = (s + 1) & mask) {
      uint64_t e = ht->slots[s];
      if (!e) break;
      if ((e & TAG) != (hash & TAG)) continue;
      int64_t g = (int64_t)(e & 0xffffffffu) - 1;
      bool eq = true;
      for (int c = 0; c < nk; c++) eq &= stored[c][g] == probe[c][row];
      if (eq) {
        id = g;
        break;
      }
    }
    if (id < 0) {
      if (ht->ngroups >= (int64_t)UINT32_MAX - 1) {
        rc = DIPPER_LIMIT;
        break;
      }
      if ((uint64_t)(ht->ngroups + 1) * 2 > ht->nslots && (rc = rebuild_slots(ht, ht->nslots * 2)))
        break;
      if (dp_grow(&ht->hashes, &ht->hashes_cap, ht->ngroups + 1, sizeof *ht->hashes, 256)) {
        rc = DIPPER_NOMEM;
        break;
      }
      for (int c = 0; c < nk && !rc; c++) {
        dp_vector *kv = ht->keys[c];
        if (kv->length >= kv->capacity) {
          rc = dp_vector_reserve(kv, kv->capacity > 0 ? kv->capacity : 256);
          stored[c] = kv->values;
        }
      }
      if (rc) break;
      id = ht->ngroups++;
      for (int c = 0; c < nk; c++) {
        stored[c][id] = probe[c][row];
        ht->keys[c]->length = ht->ngroups;
      }
      ht->hashes[id] = hash;
      place(ht->slots, ht->nslots - 1, hash, id);
      created++;
    }
    ids[row] = id;
  }
  *created_out = created;
  return rc;
}

int dp_ht_find_or_insert(dp_hashtable *ht, const dp_vector *const *cols, const uint64_t *hashes,
                         const int64_t *rows, int64_t n, int64_t *ids, int64_t *nnew) {
  int64_t created = 0;
  int rc = DIPPER_OK;
  if (fast_keys(ht, cols)) {
    rc = find_or_insert_fast(ht, cols, hashes, rows, n, ids, &created);
    if (nnew) *nnew = created;
    return rc;
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t row = rows ? rows[k] : k;
    uint64_t hash = hashes[row];
#if defined(__GNUC__)
    /* The slots of a big table miss the cache: ask for the slot of a row a
    ** few probes ahead while this one is compared. */
    if (k + PREFETCH_AHEAD < n) {
      int64_t ahead = rows ? rows[k + PREFETCH_AHEAD] : k + PREFETCH_AHEAD;
      __builtin_prefetch(&ht->slots[hashes[ahead] & (ht->nslots - 1)]);
      /* Halfway there, the slot is in cache: ask for the key it names. */
      int64_t half = rows ? rows[k + PREFETCH_AHEAD / 2] : k + PREFETCH_AHEAD / 2;
      uint64_t e = ht->slots[hashes[half] & (ht->nslots - 1)];
      if (e) {
        int64_t id = (int64_t)(e & 0xffffffffu) - 1;
        for (int c = 0; c < ht->nkeys && c < 4; c++) {
          int w = dp_phys_width(ht->keys[c]->phys);
          if (w) __builtin_prefetch((const char *)ht->keys[c]->values + (size_t)id * (size_t)w);
        }
      }
    }
#endif
    int64_t id = dp_ht_find(ht, cols, hash, row);
    if (id < 0) {
      rc = dp_ht_add(ht, cols, row, hash, &id);
      if (rc) break;
      created++;
    }
    ids[row] = id;
  }
  if (nnew) *nnew = created;
  return rc;
}

int dp_ht_compact(dp_hashtable *ht, const bool *keep, int64_t *remap) {
  /* Everything that can fail comes first, into new memory; the table is
  ** changed only once nothing can fail (so an out-of-memory leaves it as it
  ** was, and the caller may go on or retry). */
  int64_t n = ht->ngroups, kept = 0;
  int64_t *sel = malloc((size_t)(n > 0 ? n : 1) * sizeof *sel);
  dp_vector **fresh = calloc((size_t)(ht->nkeys > 0 ? ht->nkeys : 1), sizeof *fresh);
  for (int64_t g = 0; sel && g < n; g++)
    if (keep[g]) sel[kept++] = g;
  uint64_t nslots = HT_MIN_SLOTS;
  while (nslots < (uint64_t)kept * 2) nslots *= 2;
  uint64_t *slots = malloc(nslots * sizeof *slots);
  int rc = sel && fresh && slots ? DIPPER_OK : DIPPER_NOMEM;
  for (int k = 0; k < ht->nkeys && !rc; k++) {
    fresh[k] = dp_vector_new(ht->keys[k]->type, kept);
    rc = fresh[k] ? dp_vector_take(fresh[k], ht->keys[k], sel, 0, kept) : DIPPER_NOMEM;
  }
  if (rc) {
    for (int k = 0; fresh && k < ht->nkeys; k++) dp_vector_free(fresh[k]);
    free(fresh);
    free(slots);
    free(sel);
    return rc;
  }
  for (int64_t g = 0, at = 0; g < n; g++) {
    if (remap) remap[g] = keep[g] ? at : -1;
    at += keep[g];
  }
  for (int64_t k = 0; k < kept; k++) ht->hashes[k] = ht->hashes[sel[k]]; /* sel[k] >= k */
  for (int k = 0; k < ht->nkeys; k++) {
    dp_vector_free(ht->keys[k]);
    ht->keys[k] = fresh[k];
  }
  ht->ngroups = kept;
  memset(slots, 0, nslots * sizeof *slots);
  for (int64_t g = 0; g < kept; g++) place(slots, nslots - 1, ht->hashes[g], g);
  free(ht->slots);
  ht->slots = slots;
  ht->nslots = nslots;
  free(fresh);
  free(sel);
  return DIPPER_OK;
}
