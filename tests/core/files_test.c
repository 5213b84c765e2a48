/*
** files_test.c — core/files.h: mkdir -p makes every level and accepts what
** exists, a folder syncs and a missing one fails with errno set, and
** dp_prefault changes no byte of an array (filled or fresh), whatever its
** size or alignment.
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/files.h"
#include "test.h"

TEST(make_dirs_and_sync_dir) {
  char tmpl[] = "/tmp/dipper-files-XXXXXX";
  char *root = mkdtemp(tmpl);
  CHECK(root != NULL);
  if (!root) return;
  char deep[256], cmd[300];
  snprintf(deep, sizeof deep, "%s/a/b/c", root);
  CHECK_EQ(dp_make_dirs(deep), 0);
  CHECK_EQ(dp_make_dirs(deep), 0); /* there already */
  struct stat sb;
  CHECK(stat(deep, &sb) == 0 && S_ISDIR(sb.st_mode));
  CHECK_EQ(dp_sync_dir(deep), 0);
  snprintf(deep, sizeof deep, "%s/missing", root);
  errno = 0;
  CHECK_EQ(dp_sync_dir(deep), -1);
  CHECK_EQ(errno, ENOENT);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  CHECK_EQ(system(cmd), 0);
}

TEST(prefault_keeps_every_byte) {
  /* a filled array, at an odd offset so the range ends inside pages */
  size_t n = (size_t)3 << 20;
  unsigned char *p = malloc(n + 7);
  CHECK(p != NULL);
  if (!p) return;
  for (size_t i = 0; i < n + 7; i++) p[i] = (unsigned char)(i * 31 + 7);
  dp_prefault(p + 3, n);
  size_t wrong = 0;
  for (size_t i = 0; i < n + 7; i++) wrong += p[i] != (unsigned char)(i * 31 + 7);
  CHECK_EQ(wrong, 0);
  free(p);
  /* a fresh zeroed one stays zero, and takes writes after */
  uint64_t *z = calloc((size_t)1 << 19, sizeof *z); /* 4 MB */
  CHECK(z != NULL);
  if (!z) return;
  dp_prefault(z, ((size_t)1 << 19) * sizeof *z);
  for (size_t i = 0; i < ((size_t)1 << 19); i++) wrong += z[i] != 0;
  CHECK_EQ(wrong, 0);
  z[12345] = 42;
  CHECK_EQ(z[12345], 42);
  free(z);
  /* nothing to do: small, empty, NULL */
  char small[64] = "kept";
  dp_prefault(small, sizeof small);
  dp_prefault(small, 0);
  dp_prefault(NULL, (size_t)8 << 20);
  CHECK(strcmp(small, "kept") == 0);
}

int main(void) { return RUN_TESTS(); }
