/*
** conn_harness.h — what the connector tests share: a handle, running SQL
** through the public API, a source opened by hand over a table the SQL
** declared, files in a scratch directory, and an exported result read back.
*/
#ifndef DP_CONN_HARNESS_H
#define DP_CONN_HARNESS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/dipper_int.h"
#include "connectors/connector.h"
#include "formats/formats.h"

/* Compile and run `sql`; on failure the first message is in *msg (static). */
static inline int h_run(dipper *db, const char *sql, const char **msg) {
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, "test.sql", &prog);
  if (rc == DIPPER_OK) rc = dipper_run(prog, NULL, NULL);
  static char saved[1024];
  snprintf(saved, sizeof saved, "%s", dipper_errmsg(db));
  if (msg) *msg = saved;
  dipper_program_free(prog);
  return rc;
}

/* A scratch directory, removed (with its files) by h_rmdir. */
static inline char *h_tempdir(void) {
  char *d = strdup("/tmp/dipper-conn-XXXXXX");
  if (!d || !mkdtemp(d)) abort();
  return d;
}

static inline void h_rmdir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
      size_t n = strlen(dir) + strlen(de->d_name) + 2;
      char *p = malloc(n);
      if (!p) abort();
      snprintf(p, n, "%s/%s", dir, de->d_name);
      struct stat sb;
      if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
        h_rmdir(p);
      else
        unlink(p);
      free(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

static inline void h_write(const char *dir, const char *name, const char *text) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "wb");
  if (!f) abort();
  fputs(text, f);
  fclose(f);
}

/* The file's text (the caller frees it), or NULL when it does not exist. */
static inline char *h_read(const char *dir, const char *name) {
  char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *f = fopen(p, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 20);
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* Names in dir, sorted, joined by spaces (static). */
static inline int h_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}
static inline const char *h_list(const char *dir) {
  static char out[4096];
  char *names[256];
  int n = 0;
  DIR *d = opendir(dir);
  out[0] = '\0';
  if (!d) return out;
  struct dirent *de;
  while ((de = readdir(d)) != NULL && n < 256)
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) names[n++] = strdup(de->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, h_cmp);
  size_t len = 0;
  for (int i = 0; i < n; i++) {
    len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? " " : "", names[i]);
    free(names[i]);
  }
  return out;
}

/* Column `col` of an exported struct array, as 64-bit integers (int32 or int64). */
static inline int64_t h_i64(const struct ArrowArray *a, const struct ArrowSchema *s, int col,
                            int64_t row) {
  const struct ArrowArray *c = a->children[col];
  const char *fmt = s->children[col]->format;
  if (fmt[0] == 'i') return ((const int32_t *)c->buffers[1])[c->offset + row];
  return ((const int64_t *)c->buffers[1])[c->offset + row];
}

static inline bool h_null(const struct ArrowArray *a, int col, int64_t row) {
  const struct ArrowArray *c = a->children[col];
  const uint8_t *bits = c->buffers[0];
  if (!bits) return false;
  int64_t i = c->offset + row;
  return !((bits[i >> 3] >> (i & 7)) & 1);
}

/* A string cell of an exported array, copied into a static buffer. */
static inline const char *h_str(const struct ArrowArray *a, int col, int64_t row) {
  static char out[256];
  const struct ArrowArray *c = a->children[col];
  const int32_t *offs = c->buffers[1];
  const char *data = c->buffers[2];
  int64_t i = c->offset + row;
  int n = offs[i + 1] - offs[i];
  snprintf(out, sizeof out, "%.*s", n, data + offs[i]);
  return out;
}

#endif /* DP_CONN_HARNESS_H */
