/*
** files.h — the few file-system and memory steps that more than one module
** takes: making a folder with its parents, removing one with everything in
** it, making a rename in a folder durable, and faulting in a large array in
** one call.
*/
#ifndef DP_FILES_H
#define DP_FILES_H

#include <stddef.h>

/* mkdir -p (no allocation; a path up to PATH_MAX): 0, or -1 with errno set. */
int dp_make_dirs(const char *path);
/* rm -r: 0 (also when nothing is there), or -1 with errno set. */
int dp_remove_tree(const char *path);
/* fsync of a folder, so that the names made or renamed in it survive a
** crash: 0, or -1 with errno set. */
int dp_sync_dir(const char *dir);

/* A hint, before the first touch of a large array (n bytes at p) that is
** about to be written all over: fault its pages in with one call (Linux's
** madvise(MADV_POPULATE_WRITE), 5.14 on) rather than one page fault per
** 4 KB as it fills.  A restore fills hundreds of MB at once; a fault each
** 4 KB was a third of its time.  Arrays under 1 MB, and kernels without the
** call: nothing. */
void dp_prefault(void *p, size_t n);

#endif /* DP_FILES_H */
