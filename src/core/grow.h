/*
** grow.h — growing an array by doubling, written once.
**
** Owns: the capacity rule (double from a first size until the array holds
** what is needed, overflow checked) and the reallocation of an array kept
** by a pointer and a capacity, on the heap or in an arena.
** Does not own: the count of items in use (the caller's), nor initialising
** the new room (it is left as realloc leaves it: callers that need zeros
** clear it).
**
** `arrp` is the address of the caller's array pointer (a `T **`, passed as
** is: it converts to void *); on DIPPER_OK it points to room for *cap >=
** need items of `size` bytes.  On DIPPER_NOMEM (no memory, or a size that
** does not fit a size_t) the array and *cap are as they were.
*/
#ifndef DP_GROW_H
#define DP_GROW_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"

/* The capacity that holds `need` items: `cap` (or `first` when cap is 0)
** doubled until it does; -1 when it would pass `max`. */
int64_t dp_grow_cap(int64_t cap, int64_t need, int64_t first, int64_t max);

/* Heap arrays (realloc), with an int64_t or an int capacity. */
int dp_grow(void *arrp, int64_t *cap, int64_t need, size_t size, int64_t first);
int dp_grow_i(void *arrp, int *cap, int need, size_t size, int first);

/* Arena arrays (dp_arena_grow: extended in place when last in its block). */
int dp_arena_grow_i(dp_arena *a, void *arrp, int *cap, int need, size_t size, int first);

#endif /* DP_GROW_H */
