/*
** arena.h — region allocation.
**
** Everything whose lifetime is "this statement", "this query" or "this batch"
** is carved from an arena and released in one call.  Allocation never fails
** silently: dp_arena_alloc returns NULL only when malloc does, and callers
** turn that into DIPPER_NOMEM.
**
** Owns: its blocks.  Does not own: anything the caller malloc'd separately.
*/
#ifndef DP_ARENA_H
#define DP_ARENA_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/compiler.h"

typedef struct dp_arena dp_arena;

/* A position in an arena, to roll back to with dp_arena_release. */
typedef struct dp_arena_mark {
  void *block;
  size_t used;
} dp_arena_mark;

/* New arena whose first block holds at least `hint` bytes (0: a default).
** The caller frees it with dp_arena_free. NULL when out of memory. */
dp_arena *dp_arena_new(size_t hint);
void dp_arena_free(dp_arena *a);

/* Forget every allocation but keep the first block for reuse. */
void dp_arena_reset(dp_arena *a);
/* Has an allocation from `a` found no memory since it was made or last
** cleared?  Lets a caller that got NULL from a function that allocates, and
** says only "no answer" (a type that did not resolve), tell "out of memory"
** apart. */
bool dp_arena_failed(const dp_arena *a);
void dp_arena_clear_failed(dp_arena *a);
/* For tests (tests/torture): when on, every allocation gets a block of its
** own, so that each is a malloc an injected failure can hit and AddressSanitizer
** sees its bounds.  Not thread-safe: set it before any arena is used. */
void dp_arena_set_tight(bool on);

/* 16-byte aligned memory, valid until the arena is reset or freed. */
void *dp_arena_alloc(dp_arena *a, size_t n);
void *dp_arena_calloc(dp_arena *a, size_t count, size_t size); /* zeroed; checks overflow */
char *dp_arena_strdup(dp_arena *a, const char *s);             /* NULL in, NULL out */
char *dp_arena_strndup(dp_arena *a, const char *s, size_t n);  /* always NUL-terminated */
char *dp_arena_printf(dp_arena *a, const char *fmt, ...)
    DP_PRINTF(2, 3)
    ;
char *dp_arena_vprintf(dp_arena *a, const char *fmt, va_list ap);

/* Grow an array kept in the arena: returns a copy with room for `newcap`
** elements (the old memory stays until reset); elements oldcap..newcap-1
** are zeroed. */
void *dp_arena_grow(dp_arena *a, void *old, size_t oldcap, size_t newcap, size_t elem);

dp_arena_mark dp_arena_save(dp_arena *a);
void dp_arena_release(dp_arena *a, dp_arena_mark m); /* drop everything after m */

/* Bytes handed out since creation or the last reset (for memory metrics). */
size_t dp_arena_used(const dp_arena *a);

#endif /* DP_ARENA_H */
