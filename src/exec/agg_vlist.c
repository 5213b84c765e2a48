/*
** agg_vlist.c — per group, its values in arrival order (agg_vlist.h).
**
** An entry is one live copy of a value: it sits in its group's chain
** (eprev/enext, oldest first) and in its pair's FIFO (epnext), so that a
** retraction finds the value's oldest copy through the pair in O(1) and
** unlinks it from the group's chain in O(1).  A freed entry goes on the free
** chain (through enext) and is reused by the next addition.
*/
#include "exec/agg_vlist.h"

#include <stdlib.h>
#include <string.h>

#include "core/vector_codec.h"

int dp_vlist_init(dp_vlist *m, const dp_type *t, dp_vlist_kind kind) {
  memset(m, 0, sizeof *m);
  m->kind = kind;
  m->efree = -1;
  m->types[0] = dp_type_of(DP_T_BIGINT);
  m->types[1] = t;
  if (dp_ht_init(&m->ht, 2, m->types) != DIPPER_OK) return DIPPER_NOMEM;
  m->has_ht = true;
  m->gids = dp_vector_new(m->types[0], 0);
  return m->gids ? DIPPER_OK : DIPPER_NOMEM;
}

void dp_vlist_free(dp_vlist *m) {
  if (m->has_ht) dp_ht_free(&m->ht);
  free(m->phead);
  free(m->ptail);
  free(m->plive);
  free(m->epair);
  free(m->eprev);
  free(m->enext);
  free(m->epnext);
  free(m->ghead);
  free(m->gtail);
  free(m->shown);
  for (int64_t g = 0; m->shown_str && g < m->gcap; g++) free(m->shown_str[g].p);
  free(m->shown_str);
  free(m->cur.p);
  free(m->sep);
  dp_vector_free(m->gids);
  free(m->hashes);
  free(m->ids);
  memset(m, 0, sizeof *m);
}

int dp_vlist_set_sep(dp_vlist *m, const char *p, size_t n) {
  if (m->sep) return DIPPER_OK;
  if (!(m->sep = malloc(n + 1))) return DIPPER_NOMEM;
  memcpy(m->sep, p, n);
  m->sep[n] = '\0';
  m->sep_len = (int64_t)n;
  return DIPPER_OK;
}

static int grow(int64_t **p, int64_t old, int64_t n, int64_t fill) {
  int64_t *g = realloc(*p, (size_t)n * sizeof *g);
  if (!g) return DIPPER_NOMEM;
  for (int64_t i = old; i < n; i++) g[i] = fill;
  *p = g;
  return DIPPER_OK;
}

int dp_vlist_reserve(dp_vlist *m, int64_t n) {
  if (n <= m->gcap) return DIPPER_OK;
  int64_t cap = m->gcap ? m->gcap : 64;
  while (cap < n) cap *= 2;
  if (grow(&m->ghead, m->gcap, cap, -1) || grow(&m->gtail, m->gcap, cap, -1) ||
      grow(&m->shown, m->gcap, cap, -1))
    return DIPPER_NOMEM;
  if (m->kind == DP_VLIST_LISTAGG) {
    dp_vlist_str *s = realloc(m->shown_str, (size_t)cap * sizeof *s);
    if (!s) return DIPPER_NOMEM;
    memset(s + m->gcap, 0, (size_t)(cap - m->gcap) * sizeof *s);
    m->shown_str = s;
  }
  m->gcap = cap;
  return DIPPER_OK;
}

static int reserve_pairs(dp_vlist *m, int64_t n) {
  if (n <= m->pcap) return DIPPER_OK;
  int64_t cap = m->pcap ? m->pcap : 256;
  while (cap < n) cap *= 2;
  if (grow(&m->phead, m->pcap, cap, -1) || grow(&m->ptail, m->pcap, cap, -1) ||
      grow(&m->plive, m->pcap, cap, 0))
    return DIPPER_NOMEM;
  m->pcap = cap;
  return DIPPER_OK;
}

/* A free entry (reused, or a new one). */
static int new_entry(dp_vlist *m, int64_t *e) {
  if (m->efree >= 0) {
    *e = m->efree;
    m->efree = m->enext[*e];
    return DIPPER_OK;
  }
  if (m->nent == m->ecap) {
    int64_t cap = m->ecap ? m->ecap * 2 : 256;
    if (grow(&m->epair, m->ecap, cap, -1) || grow(&m->eprev, m->ecap, cap, -1) ||
        grow(&m->enext, m->ecap, cap, -1) || grow(&m->epnext, m->ecap, cap, -1))
      return DIPPER_NOMEM;
    m->ecap = cap;
  }
  *e = m->nent++;
  return DIPPER_OK;
}

static int add(dp_vlist *m, int64_t g, int64_t p) {
  int64_t e;
  int rc = new_entry(m, &e);
  if (rc) return rc;
  m->epair[e] = p;
  m->epnext[e] = -1;
  if (m->ptail[p] >= 0) m->epnext[m->ptail[p]] = e;
  else m->phead[p] = e;
  m->ptail[p] = e;
  m->plive[p]++;
  m->eprev[e] = m->gtail[g];
  m->enext[e] = -1;
  if (m->gtail[g] >= 0) m->enext[m->gtail[g]] = e;
  else m->ghead[g] = e;
  m->gtail[g] = e;
  m->nlive++;
  return DIPPER_OK;
}

/* Unlink entry e (the oldest of its pair) from group g and free it. */
static void drop(dp_vlist *m, int64_t g, int64_t e) {
  int64_t p = m->epair[e];
  m->phead[p] = m->epnext[e];
  if (m->phead[p] < 0) m->ptail[p] = -1;
  m->plive[p]--;
  if (m->eprev[e] >= 0) m->enext[m->eprev[e]] = m->enext[e];
  else m->ghead[g] = m->enext[e];
  if (m->enext[e] >= 0) m->eprev[m->enext[e]] = m->eprev[e];
  else m->gtail[g] = m->eprev[e];
  m->epair[e] = -1;
  m->enext[e] = m->efree;
  m->efree = e;
  m->nlive--;
}

int dp_vlist_update(dp_vlist *m, const dp_vector *values, const int64_t *gids, const int64_t *rows,
                    int64_t n, const int8_t *sign) {
  if (n == 0) return DIPPER_OK;
  int64_t len = rows[n - 1] + 1; /* rows are increasing */
  if (len > m->scap) {
    uint64_t *h = realloc(m->hashes, (size_t)len * sizeof *h);
    if (h) m->hashes = h;
    int64_t *ids = realloc(m->ids, (size_t)len * sizeof *ids);
    if (ids) m->ids = ids;
    if (!h || !ids) return DIPPER_NOMEM;
    m->scap = len;
  }
  dp_vector_clear(m->gids);
  int rc = dp_vector_reserve(m->gids, len);
  for (int64_t r = 0; r < len && !rc; r++) rc = dp_vector_append_i64(m->gids, gids[r]);
  if (rc) return rc;
  const dp_vector *cols[2] = {m->gids, values};
  dp_ht_hash(cols, 2, len, m->hashes);
  if ((rc = dp_ht_find_or_insert(&m->ht, cols, m->hashes, rows, n, m->ids, NULL))) return rc;
  if ((rc = reserve_pairs(m, m->ht.ngroups))) return rc;
  for (int64_t i = 0; i < n && !rc; i++) {
    int64_t r = rows[i], p = m->ids[r], g = gids[r];
    if (sign[r] > 0) rc = add(m, g, p);
    else if (m->phead[p] >= 0) drop(m, g, m->phead[p]);
  }
  return rc;
}

/* FIRST/LAST: the pair of g's result now, -1 for none. */
static int64_t pick(const dp_vlist *m, int64_t g) {
  int64_t e = m->kind == DP_VLIST_FIRST ? m->ghead[g] : m->gtail[g];
  return e >= 0 ? m->epair[e] : -1;
}

static int str_append(dp_vlist_str *s, const char *p, int64_t n) {
  if (s->len + n + 1 > s->cap) {
    int64_t cap = s->cap ? s->cap : 64;
    while (cap < s->len + n + 1) cap *= 2;
    char *q = realloc(s->p, (size_t)cap);
    if (!q) return DIPPER_NOMEM;
    s->p = q;
    s->cap = cap;
  }
  if (n) memcpy(s->p + s->len, p, (size_t)n);
  s->len += n;
  s->p[s->len] = '\0';
  return DIPPER_OK;
}

/* LISTAGG: g's result now into m->cur. */
static int join(dp_vlist *m, int64_t g) {
  dp_vlist_str *s = &m->cur;
  s->len = 0;
  s->has = m->ghead[g] >= 0;
  const dp_vector *v = m->ht.keys[1];
  const char *sep = m->sep ? m->sep : ",";
  int64_t slen = m->sep ? m->sep_len : 1;
  for (int64_t e = m->ghead[g]; e >= 0; e = m->enext[e]) {
    size_t n;
    const char *p = dp_vector_get_str(v, m->epair[e], &n);
    if (e != m->ghead[g] && str_append(s, sep, slen)) return DIPPER_NOMEM;
    if (str_append(s, p, (int64_t)n)) return DIPPER_NOMEM;
  }
  return DIPPER_OK;
}

static bool str_equal(const dp_vlist_str *a, const dp_vlist_str *b) {
  if (a->has != b->has) return false;
  return !a->has || (a->len == b->len && (a->len == 0 || memcmp(a->p, b->p, (size_t)a->len) == 0));
}

bool dp_vlist_changed(dp_vlist *m, int64_t g) {
  if (m->kind != DP_VLIST_LISTAGG) return pick(m, g) != m->shown[g];
  /* Out of memory: say changed, and dp_vlist_put reports it. */
  if (join(m, g)) return true;
  return !str_equal(&m->cur, &m->shown_str[g]);
}

int dp_vlist_put(dp_vlist *m, int64_t g, bool old, dp_vector *out) {
  if (m->kind != DP_VLIST_LISTAGG) {
    int64_t p = old ? m->shown[g] : pick(m, g);
    return p < 0 ? dp_vector_append_null(out) : dp_vector_append_from(out, m->ht.keys[1], p);
  }
  const dp_vlist_str *s = &m->shown_str[g];
  if (!old) {
    int rc = join(m, g);
    if (rc) return rc;
    s = &m->cur;
  }
  return s->has ? dp_vector_append_str(out, s->p ? s->p : "", (size_t)s->len)
                : dp_vector_append_null(out);
}

int dp_vlist_settle(dp_vlist *m, int64_t g) {
  if (m->kind != DP_VLIST_LISTAGG) {
    m->shown[g] = pick(m, g);
    return DIPPER_OK;
  }
  int rc = join(m, g);
  if (rc) return rc;
  dp_vlist_str *s = &m->shown_str[g];
  s->len = 0;
  s->has = m->cur.has;
  if (m->cur.has && (rc = str_append(s, m->cur.p ? m->cur.p : "", m->cur.len))) return rc;
  if (!s->has && s->cap > 256) { /* an emptied group gives its buffer back */
    free(s->p);
    memset(s, 0, sizeof *s);
  }
  return DIPPER_OK;
}

void dp_vlist_clear(dp_vlist *m, int64_t g) {
  while (m->ghead[g] >= 0) {
    /* The group's oldest entry is the oldest of its own pair too. */
    drop(m, g, m->ghead[g]);
  }
}

int dp_vlist_compact(dp_vlist *m, int64_t min_dead) {
  int64_t n = m->ht.ngroups, live = 0;
  for (int64_t p = 0; p < n; p++) live += m->plive[p] > 0;
  int64_t dead = n - live;
  if (dead == 0 || dead < min_dead || (min_dead > 0 && dead <= live)) return DIPPER_OK;
  bool *keep = malloc((size_t)n * sizeof *keep);
  int64_t *remap = malloc((size_t)n * sizeof *remap);
  int rc = keep && remap ? DIPPER_OK : DIPPER_NOMEM;
  if (!rc) {
    for (int64_t p = 0; p < n; p++) keep[p] = m->plive[p] > 0;
    for (int64_t g = 0; g < m->gcap; g++)
      if (m->shown[g] >= 0) keep[m->shown[g]] = true;
    rc = dp_ht_compact(&m->ht, keep, remap);
  }
  if (!rc) {
    for (int64_t p = 0; p < n; p++) {
      int64_t q = remap[p];
      if (q < 0) continue;
      m->phead[q] = m->phead[p];
      m->ptail[q] = m->ptail[p];
      m->plive[q] = m->plive[p];
    }
    for (int64_t p = m->ht.ngroups; p < n; p++) {
      m->phead[p] = m->ptail[p] = -1;
      m->plive[p] = 0;
    }
    for (int64_t g = 0; g < m->gcap; g++) {
      if (m->shown[g] >= 0) m->shown[g] = remap[m->shown[g]];
      for (int64_t e = m->ghead[g]; e >= 0; e = m->enext[e]) m->epair[e] = remap[m->epair[e]];
    }
  }
  free(keep);
  free(remap);
  return rc;
}

int dp_vlist_save(dp_vlist *m, dp_buf *out) {
  int64_t n = m->nlive;
  int64_t *sel = malloc((size_t)(n ? n : 1) * sizeof *sel);
  dp_vector *g = dp_vector_new(m->types[0], n);
  dp_vector *v = dp_vector_new(m->types[1], n);
  int rc = sel && g && v ? DIPPER_OK : DIPPER_NOMEM;
  int64_t k = 0;
  for (int64_t gid = 0; gid < m->gcap && !rc; gid++)
    for (int64_t e = m->ghead[gid]; e >= 0 && !rc && k < n; e = m->enext[e]) {
      sel[k++] = m->epair[e];
      rc = dp_vector_append_i64(g, gid);
    }
  if (!rc && k != n) rc = DIPPER_CORRUPT; /* the chains and the count disagree: a bug */
  if (!rc) rc = dp_vector_take(v, m->ht.keys[1], sel, 0, n);
  if (!rc) {
    dp_put_uvar(out, (uint64_t)n);
    rc = dp_vector_encode(g, 0, n, out);
  }
  if (!rc) rc = dp_vector_encode(v, 0, n, out);
  if (!rc && m->kind == DP_VLIST_LISTAGG) {
    dp_put_u8(out, m->sep != NULL);
    if (m->sep) dp_put_bytes(out, m->sep, (size_t)m->sep_len);
  }
  free(sel);
  dp_vector_free(g);
  dp_vector_free(v);
  if (rc) return rc;
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

int dp_vlist_load(dp_vlist *m, int64_t ngroups, dp_rd *in) {
  if (m->ht.ngroups != 0 || m->nlive != 0) return DIPPER_CORRUPT;
  int64_t n = (int64_t)dp_get_count(in, 1);
  if (in->bad) return DIPPER_CORRUPT;
  dp_vector *g = dp_vector_new(m->types[0], 0);
  dp_vector *v = dp_vector_new(m->types[1], 0);
  int64_t *gids = malloc((size_t)(n ? n : 1) * sizeof *gids);
  int64_t *rows = malloc((size_t)(n ? n : 1) * sizeof *rows);
  int8_t *sign = malloc((size_t)(n ? n : 1));
  int rc = g && v && gids && rows && sign ? DIPPER_OK : DIPPER_NOMEM;
  for (int k = 0; k < 2 && !rc; k++) {
    dp_vector *x = k ? v : g;
    rc = dp_vector_decode(in, x);
    if (rc) rc = rc == DIPPER_NOMEM ? rc : DIPPER_CORRUPT;
    else if (x->length != n) rc = DIPPER_CORRUPT;
  }
  for (int64_t r = 0; r < n && !rc; r++) {
    if (dp_vector_is_null(g, r) || dp_vector_is_null(v, r)) rc = DIPPER_CORRUPT;
    else if ((gids[r] = dp_vector_get_i64(g, r)) < 0 || gids[r] >= ngroups) rc = DIPPER_CORRUPT;
    rows[r] = r;
    sign[r] = 1;
  }
  if (!rc && m->kind == DP_VLIST_LISTAGG) {
    uint8_t has = dp_get_u8(in);
    if (in->bad || has > 1) rc = DIPPER_CORRUPT;
    else if (has) {
      size_t len;
      const uint8_t *p = dp_get_bytes(in, &len);
      rc = in->bad ? DIPPER_CORRUPT : dp_vlist_set_sep(m, (const char *)p, len);
    }
  }
  if (!rc) rc = dp_vlist_reserve(m, ngroups);
  if (!rc) rc = dp_vlist_update(m, v, gids, rows, n, sign);
  for (int64_t x = 0; x < ngroups && !rc; x++) rc = dp_vlist_settle(m, x);
  dp_vector_free(g);
  dp_vector_free(v);
  free(gids);
  free(rows);
  free(sign);
  return rc;
}
