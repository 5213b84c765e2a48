/*
** agg_multiset.c — per group, its values with their counts (agg_multiset.h).
**
** The extreme value is kept as it moves: an addition that makes a value
** count compares it with the best one; a retraction that takes the best
** value's last copy marks the group (best = -2), and the next reader walks
** the group's chain for the new extreme — Flink's MinWithRetract does the
** same walk of its map.  So a retraction of anything but the extreme costs
** O(1), and of the extreme O(distinct values of the group).
*/
#include "exec/agg_multiset.h"

#include <stdlib.h>
#include <string.h>

#include "core/vector_codec.h"

#define BEST_UNKNOWN (-2)

int dp_multiset_init(dp_multiset *m, const dp_type *t, int order) {
  memset(m, 0, sizeof *m);
  m->order = order;
  m->types[0] = dp_type_of(DP_T_BIGINT);
  m->types[1] = t;
  if (dp_ht_init(&m->ht, 2, m->types) != DIPPER_OK) return DIPPER_NOMEM;
  m->has_ht = true;
  m->gids = dp_vector_new(m->types[0], 0);
  return m->gids ? DIPPER_OK : DIPPER_NOMEM;
}

void dp_multiset_free(dp_multiset *m) {
  if (m->has_ht) dp_ht_free(&m->ht);
  free(m->cnt);
  free(m->next);
  free(m->head);
  free(m->best);
  free(m->shown);
  dp_vector_free(m->gids);
  free(m->hashes);
  free(m->ids);
  memset(m, 0, sizeof *m);
}

static int grow(int64_t **p, int64_t old, int64_t n, int64_t fill) {
  int64_t *g = realloc(*p, (size_t)n * sizeof *g);
  if (!g) return DIPPER_NOMEM;
  for (int64_t i = old; i < n; i++) g[i] = fill;
  *p = g;
  return DIPPER_OK;
}

int dp_multiset_reserve(dp_multiset *m, int64_t n) {
  if (n <= m->gcap) return DIPPER_OK;
  int64_t cap = m->gcap ? m->gcap : 64;
  while (cap < n) cap *= 2;
  if (grow(&m->head, m->gcap, cap, -1) || grow(&m->best, m->gcap, cap, -1) ||
      grow(&m->shown, m->gcap, cap, -1))
    return DIPPER_NOMEM;
  m->gcap = cap;
  return DIPPER_OK;
}

static int reserve_pairs(dp_multiset *m, int64_t n) {
  if (n <= m->pcap) return DIPPER_OK;
  int64_t cap = m->pcap ? m->pcap : 256;
  while (cap < n) cap *= 2;
  if (grow(&m->cnt, m->pcap, cap, 0) || grow(&m->next, m->pcap, cap, -1)) return DIPPER_NOMEM;
  m->pcap = cap;
  return DIPPER_OK;
}

/* Chain pairs [from, ngroups) into their groups. */
static void link(dp_multiset *m, int64_t from) {
  const dp_vector *g = m->ht.keys[0];
  for (int64_t p = from; p < m->ht.ngroups; p++) {
    int64_t gid = dp_vector_get_i64(g, p);
    m->next[p] = m->head[gid];
    m->head[gid] = p;
  }
}

/* Value of pair a beyond pair b's in the multiset's order. */
static bool beyond(const dp_multiset *m, int64_t a, int64_t b) {
  const dp_vector *v = m->ht.keys[1];
  return dp_ht_row_compare(v, a, v, b) * m->order > 0;
}

int dp_multiset_update(dp_multiset *m, const dp_vector *values, const int64_t *gids,
                       const int64_t *rows, int64_t n, const int8_t *sign, int8_t *moved) {
  if (n == 0) return DIPPER_OK;
  int64_t len = rows[n - 1] + 1; /* rows are increasing */
  if (len > m->scap || n > m->scap) {
    int64_t cap = len > n ? len : n;
    uint64_t *h = realloc(m->hashes, (size_t)cap * sizeof *h);
    if (h) m->hashes = h;
    int64_t *ids = realloc(m->ids, (size_t)cap * sizeof *ids);
    if (ids) m->ids = ids;
    if (!h || !ids) return DIPPER_NOMEM;
    m->scap = cap;
  }
  dp_vector_clear(m->gids);
  int rc = dp_vector_reserve(m->gids, len);
  for (int64_t r = 0; r < len && !rc; r++) rc = dp_vector_append_i64(m->gids, gids[r]);
  if (rc) return rc;
  const dp_vector *cols[2] = {m->gids, values};
  dp_ht_hash(cols, 2, len, m->hashes);
  int64_t before = m->ht.ngroups;
  if ((rc = dp_ht_find_or_insert(&m->ht, cols, m->hashes, rows, n, m->ids, NULL))) return rc;
  if ((rc = reserve_pairs(m, m->ht.ngroups))) return rc;
  link(m, before);
  for (int64_t i = 0; i < n; i++) {
    int64_t r = rows[i], p = m->ids[r], g = gids[r];
    int64_t old = m->cnt[p];
    m->cnt[p] += sign[r];
    int mv = old <= 0 && m->cnt[p] > 0 ? 1 : old > 0 && m->cnt[p] <= 0 ? -1 : 0;
    if (moved) moved[i] = (int8_t)mv;
    if (!m->order) continue;
    if (mv > 0 && (m->best[g] == -1 || (m->best[g] >= 0 && beyond(m, p, m->best[g]))))
      m->best[g] = p;
    else if (mv < 0 && m->best[g] == p)
      m->best[g] = BEST_UNKNOWN;
  }
  return DIPPER_OK;
}

int64_t dp_multiset_best(dp_multiset *m, int64_t g) {
  if (m->best[g] != BEST_UNKNOWN) return m->best[g];
  int64_t best = -1;
  for (int64_t p = m->head[g]; p >= 0; p = m->next[p])
    if (m->cnt[p] > 0 && (best < 0 || beyond(m, p, best))) best = p;
  m->best[g] = best;
  return best;
}

bool dp_multiset_changed(dp_multiset *m, int64_t g) { return dp_multiset_best(m, g) != m->shown[g]; }

void dp_multiset_settle(dp_multiset *m, int64_t g) { m->shown[g] = dp_multiset_best(m, g); }

void dp_multiset_clear(dp_multiset *m, int64_t g) {
  for (int64_t p = m->head[g]; p >= 0; p = m->next[p]) m->cnt[p] = 0;
  m->best[g] = -1;
}

int dp_multiset_compact(dp_multiset *m, int64_t min_dead) {
  int64_t n = m->ht.ngroups, live = 0;
  for (int64_t p = 0; p < n; p++) live += m->cnt[p] != 0;
  int64_t dead = n - live;
  if (dead == 0 || dead < min_dead || (min_dead > 0 && dead <= live)) return DIPPER_OK;
  bool *keep = malloc((size_t)n * sizeof *keep);
  int64_t *remap = malloc((size_t)n * sizeof *remap);
  int rc = keep && remap ? DIPPER_OK : DIPPER_NOMEM;
  if (!rc) {
    for (int64_t p = 0; p < n; p++) keep[p] = m->cnt[p] != 0;
    for (int64_t g = 0; g < m->gcap; g++) {
      if (m->shown[g] >= 0) keep[m->shown[g]] = true;
      if (m->best[g] >= 0) keep[m->best[g]] = true;
    }
    rc = dp_ht_compact(&m->ht, keep, remap);
  }
  if (!rc) {
    for (int64_t p = 0; p < n; p++)
      if (remap[p] >= 0) m->cnt[remap[p]] = m->cnt[p];
    /* the pairs added next start from nothing */
    for (int64_t p = m->ht.ngroups; p < n; p++) m->cnt[p] = 0;
    for (int64_t g = 0; g < m->gcap; g++) {
      m->head[g] = -1;
      if (m->shown[g] >= 0) m->shown[g] = remap[m->shown[g]];
      if (m->best[g] >= 0) m->best[g] = remap[m->best[g]];
    }
    link(m, 0);
  }
  free(keep);
  free(remap);
  return rc;
}

/* Pair a before pair b: by group id, then value. */
static bool pair_before(const dp_multiset *m, int64_t a, int64_t b) {
  int64_t ga = dp_vector_get_i64(m->ht.keys[0], a), gb = dp_vector_get_i64(m->ht.keys[0], b);
  if (ga != gb) return ga < gb;
  return dp_ht_row_compare(m->ht.keys[1], a, m->ht.keys[1], b) < 0;
}

/* Sort ids[0, n) by pair_before (a merge sort through tmp, stable). */
static void sort_pairs(const dp_multiset *m, int64_t *ids, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  sort_pairs(m, ids, tmp, h);
  sort_pairs(m, ids + h, tmp, n - h);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = pair_before(m, ids[j], ids[i]) ? ids[j++] : ids[i++];
  while (i < h) tmp[k++] = ids[i++];
  while (j < n) tmp[k++] = ids[j++];
  memcpy(ids, tmp, (size_t)n * sizeof *ids);
}

/* The pairs in (group, value) order, so that the bytes are the same however
** the pairs came to be numbered (a value that left and came back is a new
** pair, numbered by when compactions ran). */
int dp_multiset_save(dp_multiset *m, dp_buf *out) {
  int rc = dp_multiset_compact(m, 0);
  if (rc) return rc;
  int64_t n = m->ht.ngroups;
  int64_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
  int64_t *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
  rc = ids && tmp ? DIPPER_OK : DIPPER_NOMEM;
  if (!rc) {
    for (int64_t p = 0; p < n; p++) ids[p] = p;
    sort_pairs(m, ids, tmp, n);
    dp_put_uvar(out, (uint64_t)n);
  }
  for (int k = 0; k < 2 && !rc; k++) {
    dp_vector *v = dp_vector_new(m->types[k], n);
    rc = v ? dp_vector_take(v, m->ht.keys[k], ids, 0, n) : DIPPER_NOMEM;
    if (!rc) rc = dp_vector_encode(v, 0, n, out);
    dp_vector_free(v);
  }
  for (int64_t i = 0; i < n && !rc; i++) dp_put_svar(out, m->cnt[ids[i]]);
  free(ids);
  free(tmp);
  if (rc) return rc;
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_multiset_load(dp_multiset *m, int64_t ngroups, dp_rd *in) {
  if (m->ht.ngroups != 0) return DIPPER_CORRUPT;
  int64_t n = (int64_t)dp_get_count(in, 1);
  if (in->bad) return DIPPER_CORRUPT;
  for (int k = 0; k < 2; k++) {
    int rc = dp_vector_decode(in, m->ht.keys[k]);
    if (rc) return rc == DIPPER_NOMEM ? rc : DIPPER_CORRUPT;
    if (m->ht.keys[k]->length != n) return DIPPER_CORRUPT;
  }
  for (int64_t p = 0; p < n; p++) {
    const dp_vector *g = m->ht.keys[0];
    if (dp_vector_is_null(g, p) || dp_vector_is_null(m->ht.keys[1], p)) return DIPPER_CORRUPT;
    int64_t gid = dp_vector_get_i64(g, p);
    if (gid < 0 || gid >= ngroups) return DIPPER_CORRUPT;
  }
  int64_t dup = -1;
  int rc = dp_ht_add_appended(&m->ht, n, &dup);
  if (rc) return rc;
  if (dup >= 0) return DIPPER_CORRUPT;
  if ((rc = reserve_pairs(m, n)) || (rc = dp_multiset_reserve(m, ngroups))) return rc;
  for (int64_t p = 0; p < n && !in->bad; p++)
    if ((m->cnt[p] = dp_get_svar(in)) == 0) return DIPPER_CORRUPT;
  if (in->bad) return DIPPER_CORRUPT;
  link(m, 0);
  for (int64_t g = 0; g < ngroups; g++) {
    m->best[g] = m->order ? BEST_UNKNOWN : -1;
    dp_multiset_settle(m, g);
  }
  return DIPPER_OK;
}
