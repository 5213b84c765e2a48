/*
** files.h — the few file-system steps that more than one module takes:
** making a folder with its parents, removing one with everything in it, and
** making a rename in a folder durable.
*/
#ifndef DP_FILES_H
#define DP_FILES_H

/* mkdir -p (no allocation; a path up to PATH_MAX): 0, or -1 with errno set. */
int dp_make_dirs(const char *path);
/* rm -r: 0 (also when nothing is there), or -1 with errno set. */
int dp_remove_tree(const char *path);
/* fsync of a folder, so that the names made or renamed in it survive a
** crash: 0, or -1 with errno set. */
int dp_sync_dir(const char *dir);

#endif /* DP_FILES_H */
