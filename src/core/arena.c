/*
** arena.c — block arena behind arena.h.
**
** Blocks form a chain from the newest back to the first.  Allocation bumps a
** pointer in the newest block; when it does not fit, a new block twice the
** size of the last one (or as large as the request) becomes the newest.  The
** first block is never freed before dp_arena_free, so a reset arena reuses it
** without touching malloc.
**
** Owns: its blocks.  Does not own: anything the caller malloc'd separately.
*/
#include "core/arena.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 16u
#define DEFAULT_BLOCK 4096u
/* Past this size blocks stop doubling, so a huge arena wastes at most one
** block's worth of memory. */
#define MAX_DOUBLING_BLOCK ((size_t)16 << 20)

typedef struct block {
  struct block *prev; /* older block, NULL for the first */
  size_t cap;         /* usable bytes from `data` */
  size_t used;
  unsigned char *data; /* 16-byte aligned start inside this allocation */
} block;

struct dp_arena {
  block *newest;
  block *first;
  bool failed; /* an allocation found no memory (dp_arena_failed) */
};

static size_t round_up(size_t n) { return (n + (ALIGN - 1)) & ~(size_t)(ALIGN - 1); }

static block *block_new(size_t cap, block *prev) {
  /* Room for the header, the alignment slack and the payload; refuse sizes
  ** whose sum would wrap. */
  size_t overhead = sizeof(block) + ALIGN;
  if (cap > SIZE_MAX - overhead) return NULL;
  block *b = malloc(overhead + cap);
  if (!b) return NULL;
  uintptr_t start = (uintptr_t)(b + 1);
  start = (start + (ALIGN - 1)) & ~(uintptr_t)(ALIGN - 1);
  b->data = (unsigned char *)start;
  b->prev = prev;
  b->cap = cap;
  b->used = 0;
  return b;
}

dp_arena *dp_arena_new(size_t hint) {
  dp_arena *a = malloc(sizeof *a);
  if (!a) return NULL;
  size_t cap = hint ? round_up(hint) : DEFAULT_BLOCK;
  if (cap < hint) cap = hint; /* round_up wrapped */
  a->failed = false;
  a->first = a->newest = block_new(cap, NULL);
  if (!a->first) {
    free(a);
    return NULL;
  }
  return a;
}

/* Free every block newer than `keep` (which stays). */
static void free_until(dp_arena *a, block *keep) {
  block *b = a->newest;
  while (b && b != keep) {
    block *prev = b->prev;
    free(b);
    b = prev;
  }
  a->newest = keep;
}

void dp_arena_free(dp_arena *a) {
  if (!a) return;
  free_until(a, NULL);
  free(a);
}

void dp_arena_reset(dp_arena *a) {
  if (!a) return;
  free_until(a, a->first);
  a->first->used = 0;
}

/* Tests: every allocation in a block of its own (see arena.h). */
static bool tight;

void dp_arena_set_tight(bool on) { tight = on; }

bool dp_arena_failed(const dp_arena *a) { return a && a->failed; }

void dp_arena_clear_failed(dp_arena *a) {
  if (a) a->failed = false;
}

void *dp_arena_alloc(dp_arena *a, size_t n) {
  if (!a) return NULL;
  /* A zero-byte request still gets its own address, so that distinct
  ** allocations never compare equal. */
  size_t need = round_up(n ? n : 1);
  if (need < n) return NULL;
  block *b = a->newest;
  if (tight || b->cap - b->used < need) {
    size_t cap = b->cap <= MAX_DOUBLING_BLOCK / 2 ? b->cap * 2 : MAX_DOUBLING_BLOCK;
    if (cap < need || tight) cap = need;
    b = block_new(cap, a->newest);
    if (!b) {
      a->failed = true;
      return NULL;
    }
    a->newest = b;
  }
  void *p = b->data + b->used;
  b->used += need;
  return p;
}

void *dp_arena_calloc(dp_arena *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = dp_arena_alloc(a, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

char *dp_arena_strndup(dp_arena *a, const char *s, size_t n) {
  if (!s) return NULL;
  size_t len = strnlen(s, n);
  char *p = dp_arena_alloc(a, len + 1);
  if (!p) return NULL;
  memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

char *dp_arena_strdup(dp_arena *a, const char *s) {
  if (!s) return NULL;
  return dp_arena_strndup(a, s, strlen(s));
}

/* Declared a printf-like forwarder so that the format checks of its
** callers reach the vsnprintf calls here. */
DP_PRINTF(2, 0)
char *dp_arena_vprintf(dp_arena *a, const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n < 0) {
    va_end(again);
    return NULL;
  }
  char *p = dp_arena_alloc(a, (size_t)n + 1);
  if (p) vsnprintf(p, (size_t)n + 1, fmt, again);
  va_end(again);
  return p;
}

char *dp_arena_printf(dp_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = dp_arena_vprintf(a, fmt, ap);
  va_end(ap);
  return p;
}

void *dp_arena_grow(dp_arena *a, void *old, size_t oldcap, size_t newcap, size_t elem) {
  if (!a) return NULL;
  if (elem && newcap > SIZE_MAX / elem) return NULL;
  if (newcap <= oldcap && old) return old;
  size_t old_bytes = oldcap * elem, new_bytes = newcap * elem;
  block *b = a->newest;
  /* The last allocation of the newest block can grow where it stands. */
  if (old && (unsigned char *)old + round_up(old_bytes ? old_bytes : 1) == b->data + b->used) {
    size_t start = (size_t)((unsigned char *)old - b->data);
    size_t need = round_up(new_bytes);
    if (need >= new_bytes && b->cap - start >= need) {
      b->used = start + need;
      memset((unsigned char *)old + old_bytes, 0, new_bytes - old_bytes);
      return old;
    }
  }
  unsigned char *p = dp_arena_alloc(a, new_bytes);
  if (!p) return NULL;
  if (old && old_bytes) memcpy(p, old, old_bytes);
  else old_bytes = 0;
  /* The new elements start zeroed: a struct appended field by field cannot
     keep garbage in a field added later. */
  memset(p + old_bytes, 0, new_bytes - old_bytes);
  return p;
}

dp_arena_mark dp_arena_save(dp_arena *a) {
  dp_arena_mark m = {NULL, 0};
  if (a) {
    m.block = a->newest;
    m.used = a->newest->used;
  }
  return m;
}

void dp_arena_release(dp_arena *a, dp_arena_mark m) {
  if (!a || !m.block) return;
  /* A mark taken before a reset points at a freed block; only release to
  ** marks whose block is still in the chain. */
  block *b = a->newest;
  while (b && b != m.block) b = b->prev;
  if (!b) return;
  free_until(a, b);
  if (m.used < b->used) b->used = m.used;
}

size_t dp_arena_used(const dp_arena *a) {
  size_t total = 0;
  if (!a) return 0;
  for (const block *b = a->newest; b; b = b->prev) total += b->used;
  return total;
}
