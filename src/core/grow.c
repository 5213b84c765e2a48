/*
** grow.c — see grow.h.
*/
#include "core/grow.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dipper.h"

int64_t dp_grow_cap(int64_t cap, int64_t need, int64_t first, int64_t max) {
  if (need > max) return -1;
  int64_t c = cap > 0 ? cap : (first > 0 ? first : 1);
  if (c > max) c = max;
  while (c < need) c = c > max / 2 ? max : c * 2;
  return c;
}

/* The pointer at arrp, read and written as bytes: arrp is a T ** of the
** caller's, whose representation is a void *'s on every platform dipper
** builds for. */
static void *get_ptr(const void *arrp) {
  void *p;
  memcpy(&p, arrp, sizeof p);
  return p;
}

static void set_ptr(void *arrp, void *p) { memcpy(arrp, &p, sizeof p); }

static int grow_heap(void *arrp, int64_t cap, int64_t need, size_t size, int64_t first,
                     int64_t max, int64_t *out) {
  if (need <= cap) {
    *out = cap;
    return DIPPER_OK;
  }
  int64_t c = size ? dp_grow_cap(cap, need, first, max) : -1;
  if (c < 0 || (uint64_t)c > SIZE_MAX / size) return DIPPER_NOMEM;
  void *p = realloc(get_ptr(arrp), (size_t)c * size);
  if (!p) return DIPPER_NOMEM;
  set_ptr(arrp, p);
  *out = c;
  return DIPPER_OK;
}

int dp_grow(void *arrp, int64_t *cap, int64_t need, size_t size, int64_t first) {
  return grow_heap(arrp, *cap, need, size, first, INT64_MAX, cap);
}

int dp_grow_i(void *arrp, int *cap, int need, size_t size, int first) {
  int64_t c;
  int rc = grow_heap(arrp, *cap, need, size, first, INT_MAX, &c);
  if (!rc) *cap = (int)c;
  return rc;
}

int dp_arena_grow_i(dp_arena *a, void *arrp, int *cap, int need, size_t size, int first) {
  if (need <= *cap) return DIPPER_OK;
  int64_t c = size ? dp_grow_cap(*cap, need, first, INT_MAX) : -1;
  if (c < 0) return DIPPER_NOMEM;
  void *p = dp_arena_grow(a, get_ptr(arrp), (size_t)*cap, (size_t)c, size);
  if (!p) return DIPPER_NOMEM;
  set_ptr(arrp, p);
  *cap = (int)c;
  return DIPPER_OK;
}
