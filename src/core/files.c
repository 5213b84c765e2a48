/*
** files.c — the file-system and memory steps of files.h.
*/
#define _DEFAULT_SOURCE /* madvise is not in POSIX */
#include "core/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"

int dp_make_dirs(const char *path) {
  char p[PATH_MAX];
  size_t n = strlen(path);
  if (n >= sizeof p) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(p, path, n + 1);
  for (char *q = p + 1; *q; q++) {
    if (*q != '/') continue;
    *q = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
    *q = '/';
  }
  return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

int dp_sync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  errno = err;
  return rc;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels answer EINVAL */
#endif

void dp_prefault(void *p, size_t n) {
  const uintptr_t page = 4096;
  if (!p || n < ((size_t)1 << 20)) return;
  uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), b = ((uintptr_t)p + n) & ~(page - 1);
  if (b > a) (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE); /* a hint: failure is harmless */
}

int dp_remove_tree(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(sb.st_mode)) return unlink(path);
  DIR *d = opendir(path);
  if (!d) return -1;
  int rc = 0;
  struct dirent *e;
  dp_buf p = DP_BUF_INIT;
  while (!rc && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    p.len = 0;
    dp_buf_printf(&p, "%s/%s", path, e->d_name);
    if (p.oom) {
      errno = ENOMEM;
      rc = -1;
    } else {
      rc = dp_remove_tree(p.data);
    }
  }
  int saved = errno;
  closedir(d);
  dp_buf_free(&p);
  errno = saved;
  return rc ? rc : rmdir(path);
}
