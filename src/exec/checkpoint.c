/*
** checkpoint.c — the files of a checkpoint folder (checkpoint.h): making and
** locking the folder, atomic writes, checked reads, listing and removal.
** What the records hold is the driver's business (driver.c).
*/
#define _DEFAULT_SOURCE /* MAP_POPULATE is Linux's, not POSIX's */
#include "exec/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/files.h"
#include "core/grow.h"
#include "dipper.h"

#define MAGIC "DPCK"
#define FORMAT_VERSION 1
#define HEADER_BYTES 20 /* magic 4, kind 1, version 1, zero 2, batch 8, length 4 */

struct dp_ckpt {
  char *dir;
  int lock_fd;
  int64_t written;  /* bytes of the records written */
  dp_diags *diags;
  dp_buf path; /* the last path built */
};

static const dp_span nowhere = {0, 0, 0, 0};

static const char *subdir(dp_ckpt_kind kind) {
  switch (kind) {
  case DP_CKPT_OFFSETS: return "offsets";
  case DP_CKPT_COMMIT: return "commits";
  case DP_CKPT_STATE: return "state";
  case DP_CKPT_FINGERPRINT: return NULL;
  }
  return NULL;
}

const char *dp_ckpt_path(dp_ckpt *c, dp_ckpt_kind kind, int64_t batch) {
  if (c->path.oom) dp_buf_free(&c->path); /* out of memory last time: try afresh */
  c->path.len = 0;
  const char *sub = subdir(kind);
  if (sub)
    dp_buf_printf(&c->path, "%s/%s/%lld", c->dir, sub, (long long)batch);
  else
    dp_buf_printf(&c->path, "%s/fingerprint", c->dir);
  return c->path.oom ? NULL : dp_buf_cstr(&c->path);
}

/* A query name as one path component: '/' and leading dots would escape. */
static void put_component(dp_buf *b, const char *name) {
  if (!name || !*name) name = "query";
  for (const char *p = name; *p; p++) {
    char ch = *p;
    if (ch == '/' || ch == '\\' || (p == name && ch == '.')) ch = '_';
    dp_buf_putc(b, ch);
  }
}

int dp_ckpt_open(const char *root, const char *name, dp_diags *d, dp_ckpt **out) {
  *out = NULL;
  dp_ckpt *c = calloc(1, sizeof *c);
  if (!c) return DIPPER_NOMEM;
  c->lock_fd = -1;
  c->diags = d;
  dp_buf dir = DP_BUF_INIT;
  dp_buf_puts(&dir, root);
  if (dir.len && dir.data[dir.len - 1] != '/') dp_buf_putc(&dir, '/');
  put_component(&dir, name);
  if (!(c->dir = dp_buf_take(&dir))) {
    free(c);
    return DIPPER_NOMEM;
  }
  static const dp_ckpt_kind kinds[] = {DP_CKPT_OFFSETS, DP_CKPT_COMMIT, DP_CKPT_STATE};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    dp_buf sub = DP_BUF_INIT;
    dp_buf_printf(&sub, "%s/%s", c->dir, subdir(kinds[i]));
    bool sub_oom = sub.oom;
    int bad = sub_oom || dp_make_dirs(dp_buf_cstr(&sub)) != 0;
    int err = sub_oom ? ENOMEM : errno;
    dp_buf_free(&sub);
    if (bad) {
      int rc = dp_error(d, sub_oom || err == ENOMEM ? DIPPER_NOMEM : DIPPER_IO, nowhere,
                        "cannot make the checkpoint folder '%s': %s; check "
                        "'execution.checkpointing.dir'",
                        c->dir, strerror(err));
      dp_ckpt_close(c);
      return rc;
    }
  }
  dp_buf lock = DP_BUF_INIT;
  dp_buf_printf(&lock, "%s/LOCK", c->dir);
  bool lock_oom = lock.oom;
  c->lock_fd = lock_oom ? -1 : open(dp_buf_cstr(&lock), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  int err = errno;
  dp_buf_free(&lock);
  if (lock_oom) err = ENOMEM;
  if (c->lock_fd < 0) {
    int rc = dp_error(d, err == ENOMEM ? DIPPER_NOMEM : DIPPER_IO, nowhere, "cannot open the lock of checkpoint folder '%s': %s",
                      c->dir, strerror(err));
    dp_ckpt_close(c);
    return rc;
  }
  if (flock(c->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    int rc = dp_error(d, DIPPER_IO, nowhere,
                      "the checkpoint folder '%s' is in use by another running query; stop it, "
                      "or give this one another 'execution.checkpointing.dir'",
                      c->dir);
    dp_ckpt_close(c);
    return rc;
  }
  *out = c;
  return DIPPER_OK;
}

void dp_ckpt_close(dp_ckpt *c) {
  if (!c) return;
  if (c->lock_fd >= 0) close(c->lock_fd); /* releases the flock */
  dp_buf_free(&c->path);
  free(c->dir);
  free(c);
}

const char *dp_ckpt_dir(const dp_ckpt *c) { return c->dir; }

int64_t dp_ckpt_bytes_written(const dp_ckpt *c) { return c->written; }

/* writev until every byte is out (a short write, EINTR). */
static int write_all(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t w = writev(fd, iov, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    size_t left = (size_t)w;
    while (n > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (char *)iov->iov_base + left;
      iov->iov_len -= left;
    }
  }
  return 0;
}

int dp_ckpt_write(dp_ckpt *c, dp_ckpt_kind kind, int64_t batch, const void *payload, size_t n) {
  if (n > UINT32_MAX)
    return dp_error(c->diags, DIPPER_LIMIT, nowhere,
                    "a checkpoint record of %zu bytes is over the 4 GiB a record may hold", n);
  /* header, payload and checksum go out with one writev: the payload (a
  ** state of many megabytes) is not copied into another buffer */
  dp_buf head = DP_BUF_INIT, tail = DP_BUF_INIT;
  dp_buf_put(&head, MAGIC, 4);
  dp_put_u8(&head, (uint8_t)kind);
  dp_put_u8(&head, FORMAT_VERSION);
  dp_put_u8(&head, 0);
  dp_put_u8(&head, 0);
  dp_put_u64(&head, (uint64_t)batch);
  dp_put_u32(&head, (uint32_t)n);
  if (!head.oom) dp_put_u32(&tail, dp_crc32c(dp_crc32c(0, head.data, head.len), payload, n));
  dp_buf final = DP_BUF_INIT, tmp = DP_BUF_INIT;
  const char *path = dp_ckpt_path(c, kind, batch);
  if (path) dp_buf_puts(&final, path);
  else final.oom = true;
  const char *slash = strrchr(dp_buf_cstr(&final), '/');
  size_t dirlen = slash ? (size_t)(slash - final.data) : 0;
  dp_buf_put(&tmp, final.data, dirlen);
  dp_buf_printf(&tmp, "/.%s.tmp", slash ? slash + 1 : final.data);
  int rc = DIPPER_OK;
  if (head.oom || tail.oom || final.oom || tmp.oom) {
    rc = DIPPER_NOMEM;
    goto done;
  }
  int fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    rc = dp_error(c->diags, DIPPER_IO, nowhere, "cannot write checkpoint file '%s': %s", tmp.data,
                  strerror(errno));
    goto done;
  }
  struct iovec iov[3] = {{head.data, head.len}, {(void *)(uintptr_t)payload, n},
                         {tail.data, tail.len}};
  bool bad = write_all(fd, iov, 3) != 0 || fsync(fd) != 0;
  int err = errno;
  bad |= close(fd) != 0;
  if (!bad && rename(tmp.data, final.data) != 0) {
    bad = true;
    err = errno;
  }
  if (bad) {
    unlink(tmp.data);
    rc = dp_error(c->diags, DIPPER_IO, nowhere,
                  "cannot write checkpoint file '%s': %s; the checkpoint folder keeps its last "
                  "complete checkpoint",
                  final.data, strerror(err ? err : EIO));
    goto done;
  }
  c->written += (int64_t)(head.len + n + tail.len);
  final.data[dirlen] = '\0';
  if (dp_sync_dir(final.data) != 0)
    rc = dp_error(c->diags, DIPPER_IO, nowhere, "cannot sync checkpoint folder '%s': %s",
                  final.data, strerror(errno));
done:
  dp_buf_free(&head);
  dp_buf_free(&tail);
  dp_buf_free(&final);
  dp_buf_free(&tmp);
  return rc;
}

static int corrupt(dp_ckpt *c, bool report, const char *path, const char *why) {
  if (!report) return DIPPER_CORRUPT;
  return dp_error(c->diags, DIPPER_CORRUPT, nowhere,
                  "checkpoint file '%s' is damaged (%s); restore the folder from a copy, or "
                  "remove '%s' to start the query afresh",
                  path, why, c->dir);
}

/* read until n bytes are in or the file ends (EINTR, short reads): the
** bytes read, or -1 on an error. */
static ssize_t read_full(int fd, void *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

/* A record's header, payload (plen bytes: the file's size less header and
** checksum, whatever the header claims) and checksum, checked: the checksum
** first, so that a damaged length or kind reads as damage. */
static int check_record(dp_ckpt *c, bool report, const char *path, dp_ckpt_kind kind, int64_t batch,
                        const uint8_t *head, const uint8_t *payload, size_t plen,
                        const uint8_t *tail) {
  if (memcmp(head, MAGIC, 4) != 0)
    return corrupt(c, report, path, "not a dipper checkpoint file, or cut short");
  dp_rd r;
  dp_rd_init(&r, head, HEADER_BYTES);
  r.pos = 4;
  uint8_t k = dp_get_u8(&r), version = dp_get_u8(&r);
  dp_get_u8(&r), dp_get_u8(&r);
  int64_t id = (int64_t)dp_get_u64(&r);
  uint32_t len = dp_get_u32(&r);
  uint32_t want = dp_get_u32(&(dp_rd){tail, 4, 0, false});
  if (dp_crc32c(dp_crc32c(0, head, HEADER_BYTES), payload, plen) != want)
    return corrupt(c, report, path, "its checksum does not match");
  if (version != FORMAT_VERSION) {
    if (!report) return DIPPER_CORRUPT;
    return dp_error(c->diags, DIPPER_CORRUPT, nowhere,
                    "checkpoint file '%s' has format version %d; this dipper reads version %d",
                    path, version, FORMAT_VERSION);
  }
  if (k != (uint8_t)kind || id != batch || (size_t)len != plen)
    return corrupt(c, report, path, "its header does not match its name or length");
  return DIPPER_OK;
}

/* Open a record and take its size: DIPPER_OK with *fd open, DIPPER_NAME
** when there is none, DIPPER_CORRUPT when it is too short to be one. */
static int open_record(dp_ckpt *c, const char *path, bool report, int *fd, size_t *size) {
  *fd = -1;
  if (!path) return DIPPER_NOMEM; /* dp_ckpt_path found no memory */
  *fd = open(path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0) {
    if (errno == ENOENT) return DIPPER_NAME;
    return dp_error(c->diags, DIPPER_IO, nowhere, "cannot read checkpoint file '%s': %s", path,
                    strerror(errno));
  }
  struct stat sb;
  int rc = DIPPER_OK;
  if (fstat(*fd, &sb) != 0)
    rc = dp_error(c->diags, DIPPER_IO, nowhere, "cannot read checkpoint file '%s': %s", path,
                  strerror(errno));
  *size = sb.st_size > 0 ? (size_t)sb.st_size : 0;
  if (!rc && *size < HEADER_BYTES + 4)
    rc = corrupt(c, report, path, "not a dipper checkpoint file, or cut short");
  if (!rc && *size - HEADER_BYTES - 4 > UINT32_MAX)
    rc = corrupt(c, report, path, "its header does not match its name or length");
  if (rc) {
    close(*fd);
    *fd = -1;
  }
  return rc;
}

/* The header, then the payload straight into the buffer handed out (its
** size known from the file's: one read, no copy of a state of many
** megabytes), then the checksum over both. */
int dp_ckpt_read(dp_ckpt *c, dp_ckpt_kind kind, int64_t batch, bool report, uint8_t **payload,
                 size_t *n) {
  *payload = NULL;
  *n = 0;
  const char *path = dp_ckpt_path(c, kind, batch);
  int fd;
  size_t size;
  int rc = open_record(c, path, report, &fd, &size);
  if (rc) return rc;
  uint8_t head[HEADER_BYTES], tail[4];
  size_t plen = size - HEADER_BYTES - 4;
  uint8_t *data = malloc(plen ? plen : 1);
  if (!data) {
    close(fd);
    return DIPPER_NOMEM;
  }
  ssize_t got = read_full(fd, head, HEADER_BYTES), got_data = 0, got_tail = 0;
  if (got == HEADER_BYTES) got_data = read_full(fd, data, plen);
  if (got_data >= 0 && (size_t)got_data == plen) got_tail = read_full(fd, tail, 4);
  if (got < 0 || got_data < 0 || got_tail < 0)
    rc = dp_error(c->diags, DIPPER_IO, nowhere, "cannot read checkpoint file '%s': %s", path,
                  strerror(errno));
  else if (got != HEADER_BYTES || (size_t)got_data != plen || got_tail != 4) /* it shrank */
    rc = corrupt(c, report, path, "not a dipper checkpoint file, or cut short");
  else
    rc = check_record(c, report, path, kind, batch, head, data, plen, tail);
  close(fd);
  if (rc) {
    free(data);
    return rc;
  }
  *n = plen;
  *payload = data;
  return DIPPER_OK;
}

/* Mapped with MAP_POPULATE: the page cache's pages themselves, in one call,
** neither copied nor faulted in one by one (a read of an 80 MB state into
** fresh memory was a tenth of its restore). */
int dp_ckpt_map(dp_ckpt *c, dp_ckpt_kind kind, int64_t batch, bool report, dp_ckpt_mapping *m) {
  memset(m, 0, sizeof *m);
  const char *path = dp_ckpt_path(c, kind, batch);
  int fd;
  size_t size;
  int rc = open_record(c, path, report, &fd, &size);
  if (rc) return rc;
  void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED)
    return dp_error(c->diags, DIPPER_IO, nowhere, "cannot map checkpoint file '%s': %s", path,
                    strerror(err));
  const uint8_t *b = p;
  size_t plen = size - HEADER_BYTES - 4;
  /* a file cut short under the mapping would fault (SIGBUS): the folder is
  ** locked by this process, and records are only ever renamed in whole */
  rc = check_record(c, report, path, kind, batch, b, b + HEADER_BYTES, plen,
                    b + HEADER_BYTES + plen);
  if (rc) {
    munmap(p, size);
    return rc;
  }
  m->payload = b + HEADER_BYTES;
  m->n = plen;
  m->base = p;
  m->size = size;
  return DIPPER_OK;
}

void dp_ckpt_unmap(dp_ckpt_mapping *m) {
  if (m && m->base) munmap(m->base, m->size);
  if (m) memset(m, 0, sizeof *m);
}

static int cmp_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* A record's name: decimal digits only (temporary files start with '.'). */
static bool record_id(const char *name, int64_t *id) {
  if (!*name) return false;
  int64_t v = 0;
  for (const char *p = name; *p; p++) {
    if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*p - '0');
  }
  *id = v;
  return true;
}

int dp_ckpt_list(dp_ckpt *c, dp_ckpt_kind kind, int64_t **ids, int *n) {
  *ids = NULL;
  *n = 0;
  dp_buf dir = DP_BUF_INIT;
  dp_buf_printf(&dir, "%s/%s", c->dir, subdir(kind));
  if (dir.oom) {
    dp_buf_free(&dir);
    return DIPPER_NOMEM;
  }
  DIR *d = opendir(dir.data);
  if (!d) {
    int rc = dp_error(c->diags, DIPPER_IO, nowhere, "cannot list checkpoint folder '%s': %s",
                      dir.data, strerror(errno));
    dp_buf_free(&dir);
    return rc;
  }
  dp_buf_free(&dir);
  int64_t *v = NULL;
  int count = 0, cap = 0, rc = DIPPER_OK;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    int64_t id;
    if (!record_id(de->d_name, &id)) continue;
    if (dp_grow_i(&v, &cap, count + 1, sizeof *v, 16)) {
      rc = DIPPER_NOMEM;
      break;
    }
    v[count++] = id;
  }
  closedir(d);
  if (rc) {
    free(v);
    return rc;
  }
  if (count > 1) qsort(v, (size_t)count, sizeof *v, cmp_id);
  *ids = v;
  *n = count;
  return DIPPER_OK;
}

void dp_ckpt_purge_folders(dp_ckpt *c, const char *sub, int64_t below) {
  dp_buf p = DP_BUF_INIT;
  dp_buf_printf(&p, "%s/%s", c->dir, sub);
  DIR *d = p.oom ? NULL : opendir(p.data);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    size_t at = p.len;
    dp_buf_printf(&p, "/%s", e->d_name);
    DIR *o = p.oom ? NULL : opendir(p.data);
    struct dirent *f;
    while (o && (f = readdir(o))) {
      char *end;
      long long id = strtoll(f->d_name, &end, 10);
      if (f->d_name[0] < '0' || f->d_name[0] > '9' || *end || id >= below) continue;
      size_t at2 = p.len;
      dp_buf_printf(&p, "/%s", f->d_name);
      if (!p.oom) dp_remove_tree(p.data);
      p.len = at2;
      if (p.data) p.data[at2] = '\0';
    }
    if (o) closedir(o);
    p.len = at;
    if (p.data) p.data[at] = '\0';
  }
  if (d) closedir(d);
  dp_buf_free(&p);
}

void dp_ckpt_purge(dp_ckpt *c, dp_ckpt_kind kind, int64_t below) {
  int64_t *ids;
  int n;
  if (dp_ckpt_list(c, kind, &ids, &n) != DIPPER_OK) return;
  for (int i = 0; i < n && ids[i] < below; i++) {
    const char *path = dp_ckpt_path(c, kind, ids[i]);
    if (path) unlink(path); /* else left for the next purge */
  }
  free(ids);
}
