/*
** state_ttl.c — idle state retention: keys in order of last write
** (state_ttl.h).
*/
#include "exec/state_ttl.h"

#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "dipper.h"

int dp_state_ttl_init(dp_state_ttl *t, int64_t ttl) {
  memset(t, 0, sizeof *t);
  if (ttl <= 0) return DIPPER_MISUSE;
  t->ttl = ttl;
  t->head = t->tail = -1;
  t->clock = INT64_MIN;
  return DIPPER_OK;
}

void dp_state_ttl_free(dp_state_ttl *t) {
  if (!t) return;
  free(t->slot);
  free(t->gone);
  t->gone = NULL;
  t->ngone = t->gone_cap = 0;
  t->slot = NULL;
  t->cap = t->count = 0;
  t->head = t->tail = -1;
}

/* Slots for ids below `need`; new ones unlisted. */
static int reserve(dp_state_ttl *t, int64_t need) {
  if (need <= t->cap) return DIPPER_OK;
  int64_t cap = dp_grow_cap(t->cap, need, 1024, INT64_MAX / 32);
  if (cap < 0) return DIPPER_NOMEM;
  dp_state_ttl_slot *slot = realloc(t->slot, (size_t)cap * sizeof *slot);
  if (!slot) return DIPPER_NOMEM;
  t->slot = slot;
  for (int64_t i = t->cap; i < cap; i++) t->slot[i].at = -1;
  t->cap = cap;
  return DIPPER_OK;
}

/* The base's ids leave the list at most once each (a key listed again gets
** a seq past the base), so t->gone stays within the base's count. */
static void unlink_id(dp_state_ttl *t, int64_t id) {
  if (t->tracking && !t->whole_next && t->slot[id].seq <= t->base_seq) {
    if (dp_grow(&t->gone, &t->gone_cap, t->ngone + 1, sizeof *t->gone, 64)) t->whole_next = true;
    else t->gone[t->ngone++] = id;
  }
  int64_t p = t->slot[id].prev, n = t->slot[id].next;
  if (p >= 0) t->slot[p].next = n;
  else t->head = n;
  if (n >= 0) t->slot[n].prev = p;
  else t->tail = p;
  t->slot[id].at = -1;
  t->count--;
}

static void append_id(dp_state_ttl *t, int64_t id, int64_t at) {
  t->slot[id].at = at;
  t->slot[id].seq = ++t->seq;
  t->slot[id].prev = t->tail;
  t->slot[id].next = -1;
  if (t->tail >= 0) t->slot[t->tail].next = id;
  else t->head = id;
  t->tail = id;
  t->count++;
}

int dp_state_ttl_touch(dp_state_ttl *t, int64_t id, int64_t now) {
  if (id < 0) return DIPPER_MISUSE;
  int rc = reserve(t, id + 1);
  if (rc) return rc;
  if (now > t->clock) t->clock = now;
  if (t->slot[id].at >= 0) {
    /* Already written at this time: it is in the list's last run (every
    ** key written at the latest time is), where its place does not matter. */
    if (t->slot[id].at == t->clock) return DIPPER_OK;
    /* At the tail it need not move, unless it is the base's (a delta must
    ** then say it was written again). */
    if (t->tail == id && !(t->tracking && t->slot[id].seq <= t->base_seq)) {
      t->slot[id].at = t->clock;
      return DIPPER_OK;
    }
    unlink_id(t, id);
  }
  append_id(t, id, t->clock);
  return DIPPER_OK;
}

void dp_state_ttl_remove(dp_state_ttl *t, int64_t id) {
  if (id >= 0 && id < t->cap && t->slot[id].at >= 0) unlink_id(t, id);
}

int dp_state_ttl_expire(dp_state_ttl *t, int64_t now, int64_t **ids, int64_t *n) {
  *ids = NULL;
  *n = 0;
  if (now > t->clock) t->clock = now;
  int64_t bound = t->clock - t->ttl; /* expired: last write <= bound */
  int64_t cap = 0;
  while (t->head >= 0 && t->slot[t->head].at <= bound) {
    int64_t id = t->head;
    if (dp_grow(ids, &cap, *n + 1, sizeof **ids, 64)) return DIPPER_NOMEM;
    (*ids)[(*n)++] = id;
    unlink_id(t, id);
  }
  return DIPPER_OK;
}

int dp_state_ttl_renumber(dp_state_ttl *t, const int64_t *remap, int64_t n) {
  /* Walk the old list in order and build the new one in fresh arrays. */
  dp_state_ttl fresh;
  int rc = dp_state_ttl_init(&fresh, t->ttl);
  if (rc) return rc;
  fresh.clock = t->clock;
  for (int64_t id = t->head; id >= 0 && !rc; id = t->slot[id].next) {
    int64_t to = id < n ? remap[id] : -1;
    if (to < 0) continue;
    rc = reserve(&fresh, to + 1);
    if (!rc && fresh.slot[to].at >= 0) rc = DIPPER_INTERNAL; /* two ids onto one */
    if (!rc) append_id(&fresh, to, t->slot[id].at);
  }
  if (rc) {
    dp_state_ttl_free(&fresh);
    return rc;
  }
  fresh.tracking = t->tracking;
  fresh.whole_next = true; /* the base's ids mean other keys now */
  dp_state_ttl_free(t);
  *t = fresh;
  return DIPPER_OK;
}

/* The list as it is now is the base of the next delta. */
void dp_state_ttl_mark(dp_state_ttl *t) {
  t->tracking = true;
  t->whole_next = false;
  t->base_seq = t->seq;
  t->base_count = t->count;
  t->ngone = 0;
}

/* Runs of the list from `id` to its end: time:svar (a step from the last
** run's, the first from 0), ids:uvar, each id:uvar. */
static void save_runs(const dp_state_ttl *t, int64_t id, dp_buf *out) {
  int64_t last = 0;
  while (id >= 0) {
    int64_t at = t->slot[id].at, run = 0;
    for (int64_t k = id; k >= 0 && t->slot[k].at == at; k = t->slot[k].next) run++;
    dp_put_svar(out, at - last);
    dp_put_uvar(out, (uint64_t)run);
    for (int64_t k = 0; k < run; k++, id = t->slot[id].next) dp_put_uvar(out, (uint64_t)id);
    last = at;
  }
}

/* count:uvar, clock:svar, then runs: time:svar (as a step from the last
** run's, >= 0), ids:uvar, each id:uvar — oldest first. */
void dp_state_ttl_save(const dp_state_ttl *t, dp_buf *out) {
  dp_put_uvar(out, (uint64_t)t->count);
  dp_put_svar(out, t->count > 0 ? t->clock : 0);
  save_runs(t, t->head, out);
}

int dp_state_ttl_load(dp_state_ttl *t, dp_rd *in, int64_t nids) {
  dp_state_ttl fresh;
  int rc = dp_state_ttl_init(&fresh, t->ttl);
  if (rc) return rc;
  fresh.seq = t->seq; /* listings go on counting: the base is a seq */
  uint64_t count = dp_get_uvar(in);
  int64_t clock = dp_get_svar(in);
  if (in->bad || count > (uint64_t)nids) rc = DIPPER_CORRUPT;
  if (!rc && count > 0) rc = reserve(&fresh, nids);
  int64_t at = 0;
  for (uint64_t got = 0; !rc && got < count;) {
    int64_t step = dp_get_svar(in);
    uint64_t run = dp_get_uvar(in);
    if (in->bad || (got > 0 && step < 0) || run == 0 || run > count - got) {
      rc = DIPPER_CORRUPT;
      break;
    }
    at += step;
    for (uint64_t k = 0; k < run && !rc; k++, got++) {
      uint64_t id = dp_get_uvar(in);
      if (in->bad || id >= (uint64_t)nids || fresh.slot[id].at >= 0 || at < 0 || at > clock)
        rc = DIPPER_CORRUPT;
      else
        append_id(&fresh, (int64_t)id, at);
    }
  }
  if (rc) {
    dp_state_ttl_free(&fresh);
    return rc;
  }
  fresh.clock = count > 0 ? clock : t->clock;
  fresh.tracking = t->tracking;
  fresh.whole_next = true; /* until marked: not the base of a delta */
  dp_state_ttl_free(t);
  *t = fresh;
  return DIPPER_OK;
}

static int cmp_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The first of the keys listed since the base (the list's tail from it), and
** how many; -1 and 0 when none. */
static int64_t listed_since(const dp_state_ttl *t, int64_t *n) {
  int64_t first = -1;
  *n = 0;
  for (int64_t id = t->tail; id >= 0 && t->slot[id].seq > t->base_seq; id = t->slot[id].prev) {
    first = id;
    (*n)++;
  }
  return first;
}

/* base_count:uvar count:uvar clock:svar  gone:uvar, each a step up from the
** last (ascending base ids)  then the keys listed since, as save_runs. */
int dp_state_ttl_save_delta(dp_state_ttl *t, dp_buf *out) {
  if (!t->tracking || t->whole_next) return DIPPER_MISUSE;
  int64_t nnew, first = listed_since(t, &nnew);
  (void)nnew; /* the count follows from base_count, gone and count */
  if (t->ngone > 1) qsort(t->gone, (size_t)t->ngone, sizeof *t->gone, cmp_id);
  dp_put_uvar(out, (uint64_t)t->base_count);
  dp_put_uvar(out, (uint64_t)t->count);
  dp_put_svar(out, t->clock);
  dp_put_uvar(out, (uint64_t)t->ngone);
  for (int64_t k = 0, last = 0; k < t->ngone; k++) {
    dp_put_uvar(out, (uint64_t)(t->gone[k] - last));
    last = t->gone[k];
  }
  save_runs(t, first, out);
  dp_state_ttl_mark(t);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

/* Read a delta; applied to t when `apply` (t then holds its base), else
** only checked for its framing (a section for a TTL no longer set). */
static int read_delta(dp_state_ttl *t, dp_rd *in, int64_t nids, bool apply) {
  uint64_t base_count = dp_get_uvar(in), count = dp_get_uvar(in);
  int64_t clock = dp_get_svar(in);
  uint64_t ngone = dp_get_uvar(in);
  if (in->bad || count > (uint64_t)nids || ngone > base_count) return DIPPER_CORRUPT;
  if (apply && base_count != (uint64_t)t->count) return DIPPER_CORRUPT;
  int rc = apply ? reserve(t, nids) : DIPPER_OK;
  if (rc) return rc;
  t->tracking = false; /* applying is not a change to record */
  uint64_t id = 0;
  for (uint64_t k = 0; k < ngone; k++) {
    uint64_t step = dp_get_uvar(in);
    if (in->bad || (k > 0 && step == 0) || step >= (uint64_t)nids - id) return DIPPER_CORRUPT;
    id += step;
    if (!apply) continue;
    if (id >= (uint64_t)t->cap || t->slot[id].at < 0) return DIPPER_CORRUPT;
    unlink_id(t, (int64_t)id);
  }
  uint64_t left = base_count - ngone, have = left;
  if (count < left) return DIPPER_CORRUPT;
  int64_t at = 0, floor = apply && t->tail >= 0 ? t->slot[t->tail].at : INT64_MIN;
  while (have < count) {
    int64_t step = dp_get_svar(in);
    uint64_t run = dp_get_uvar(in);
    if (in->bad || (have > left && step < 0) || run == 0 || run > count - have)
      return DIPPER_CORRUPT;
    at += step;
    if (at < 0 || at > clock || at < floor) return DIPPER_CORRUPT;
    for (uint64_t k = 0; k < run; k++, have++) {
      uint64_t to = dp_get_uvar(in);
      if (in->bad || to >= (uint64_t)nids) return DIPPER_CORRUPT;
      if (!apply) continue;
      if (t->slot[to].at >= 0) return DIPPER_CORRUPT;
      append_id(t, (int64_t)to, at);
    }
  }
  if (apply) {
    if (clock > t->clock) t->clock = clock;
    dp_state_ttl_mark(t);
  }
  return DIPPER_OK;
}

int dp_state_ttl_load_delta(dp_state_ttl *t, dp_rd *in, int64_t nids) {
  int rc = read_delta(t, in, nids, true);
  if (rc) t->whole_next = true;
  return rc;
}

void dp_state_ttl_save_section(const dp_state_ttl *t, dp_buf *out) {
  if (t->ttl <= 0) return;
  dp_put_u8(out, 'T');
  dp_state_ttl_save(t, out);
}

void dp_state_ttl_save_section_base(dp_state_ttl *t, dp_buf *out) {
  if (t->ttl <= 0) return;
  dp_state_ttl_save_section(t, out);
  dp_state_ttl_mark(t);
}

int dp_state_ttl_save_section_delta(dp_state_ttl *t, dp_buf *out) {
  if (t->ttl <= 0) return DIPPER_OK;
  int64_t nnew = 0;
  if (t->tracking && !t->whole_next) listed_since(t, &nnew);
  /* The delta costs a few bytes per key gone or listed, the list two per key. */
  if (!t->tracking || t->whole_next || t->ngone + nnew >= t->count) {
    dp_state_ttl_save_section_base(t, out);
    return out->oom ? DIPPER_NOMEM : DIPPER_OK;
  }
  dp_put_u8(out, 'U');
  return dp_state_ttl_save_delta(t, out);
}

int dp_state_ttl_load_section(dp_state_ttl *t, dp_rd *in, int64_t nids, int64_t now) {
  uint8_t kind = dp_rd_left(in) > 0 ? (uint8_t)in->p[in->pos] : 0;
  if (kind != 'T' && kind != 'U') {
    int rc = DIPPER_OK;
    for (int64_t id = 0; !rc && t->ttl > 0 && id < nids; id++) rc = dp_state_ttl_touch(t, id, now);
    if (!rc && t->ttl > 0) dp_state_ttl_mark(t);
    return rc;
  }
  dp_get_u8(in);
  if (t->ttl > 0) {
    int rc = kind == 'T' ? dp_state_ttl_load(t, in, nids) : dp_state_ttl_load_delta(t, in, nids);
    if (!rc) dp_state_ttl_mark(t);
    return rc;
  }
  dp_state_ttl scratch;
  int rc = dp_state_ttl_init(&scratch, 1);
  if (!rc) rc = kind == 'T' ? dp_state_ttl_load(&scratch, in, nids)
                            : read_delta(&scratch, in, nids, false);
  dp_state_ttl_free(&scratch);
  return rc;
}

int dp_state_ttl_expire_compact(dp_state_ttl *t, int64_t now, int64_t n, int64_t **keep,
                                int64_t *nkeep, int64_t **drop, int64_t *ndrop) {
  *keep = NULL;
  *nkeep = 0;
  int rc = dp_state_ttl_expire(t, now, drop, ndrop);
  if (rc || *ndrop == 0) return rc;
  int64_t *remap = malloc((size_t)n * sizeof *remap);
  *keep = malloc((size_t)n * sizeof **keep);
  if (!remap || !*keep) rc = DIPPER_NOMEM;
  for (int64_t k = 0; !rc && k < *ndrop; k++)
    if ((*drop)[k] >= n) rc = DIPPER_INTERNAL;
  if (!rc) {
    qsort(*drop, (size_t)*ndrop, sizeof **drop, cmp_id);
    for (int64_t id = 0, k = 0; id < n; id++) {
      if (k < *ndrop && (*drop)[k] == id) {
        remap[id] = -1;
        k++;
      } else {
        remap[id] = *nkeep;
        (*keep)[(*nkeep)++] = id;
      }
    }
    rc = dp_state_ttl_renumber(t, remap, n);
  }
  free(remap);
  if (rc) {
    free(*keep);
    free(*drop);
    *keep = *drop = NULL;
    *nkeep = *ndrop = 0;
  }
  return rc;
}
