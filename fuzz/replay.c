/*
** replay.c — runs every file of the given files and directories through a
** fuzz target's LLVMFuzzerTestOneInput once, with any compiler and no
** libFuzzer, so that the corpora replay under the sanitizers in `ctest`.
**
**   replay_sql fuzz/corpus/sql [more dirs or files]
**
** Exit status 0 when every input ran (a crash ends the process); 1 when an
** argument cannot be read or no input was found.
*/
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      uint8_t *grown = realloc(buf, cap * 2);
      if (!grown) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = grown;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "replay: out of memory reading %s\n", path);
    return -1;
  }
  /* An exact-size copy so that ASan catches any read past the input. */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    free(buf);
    return -1;
  }
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 1;
}

static int run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return run_file(path);
  DIR *dir = opendir(path);
  if (!dir) {
    fprintf(stderr, "replay: cannot open directory %s\n", path);
    return -1;
  }
  int count = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.') continue;
    size_t n = strlen(path) + strlen(e->d_name) + 2;
    char *child = malloc(n);
    if (!child) break;
    snprintf(child, n, "%s/%s", path, e->d_name);
    int r = run_path(child);
    free(child);
    if (r < 0) {
      closedir(dir);
      return -1;
    }
    count += r;
  }
  closedir(dir);
  return count;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 1;
  }
  int total = 0;
  for (int i = 1; i < argc; i++) {
    int r = run_path(argv[i]);
    if (r < 0) return 1;
    total += r;
  }
  printf("replayed %d inputs\n", total);
  return total > 0 ? 0 : 1;
}
