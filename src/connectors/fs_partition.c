/*
** fs_partition.c — the partitioned filesystem sink; see fs_partition.h.
**
** Layout.  A row goes to the folder of its partition values,
** <path>/<c1>=<v1>/<c2>=<v2>/, in the order of PARTITIONED BY; the value is
** the column's text (as CAST(x AS STRING) writes it), escaped as Flink and
** Hive escape path names, and NULL or '' is 'partition.default-name'
** (default __DEFAULT_PARTITION__, as in Flink).  The files hold the other
** columns only.  Each partition a batch touches gets one file, named as the
** unpartitioned sink names its files (part-<batch>-<tag>.<ext> with a
** checkpoint folder, else the first free part-<batch>-<n>.<ext>), written
** under a hidden temporary name in the same folder and renamed at the
** batch's commit.  With a checkpoint folder the files and their folders
** are fsync'd before the commit record, and a batch run again after a
** restart writes the same names again: in every folder it replaces, never
** adds.
**
** Commit.  With 'sink.partition-commit.policy.kind' = 'success-file' a
** partition is committed — an empty file named
** 'sink.partition-commit.success-file.name' (default _SUCCESS) written in
** its folder — at the first batch commit at which
** 'sink.partition-commit.delay' (default 0) has passed since the first row
** written into it after its last commit (trigger process-time, Flink's
** default); in batch mode at the end of the batch, whatever the delay.  A
** partition that gets rows again after its commit is committed again.  The
** partitions waiting for their commit are the entries of the table here;
** after a restart they are found again from the folders: those holding a
** part file newer than their success file (or holding no success file),
** each waiting since the oldest such part file was written.
**
** Memory: one entry per partition of the running batch and per partition
** waiting for its commit, and each touched partition's buffer of encoded
** rows (flushed at FLUSH_PART bytes, and every buffer once they hold
** FLUSH_ALL together), so a batch that touches many partitions keeps one
** file open at a time.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "connectors/fs_partition.h"
#include "core/files.h"
#include "core/grow.h"
#include "core/session.h"
#include "plan/catalog.h"

#define FLUSH_PART (256u << 10)
#define FLUSH_ALL (8u << 20)

typedef struct part {
  char *rel;          /* "dt=2024-01-01/hm=10" as on disk (escaped) */
  uint32_t hash;
  bool touched;       /* written by the running batch */
  int64_t waiting;    /* µs since which it waits for its commit, -1: none */
  char *tmp;          /* the running batch's temporary file */
  dp_buf buf;         /* encoded rows not yet in tmp */
} part;

struct dp_fs_parts {
  char *dir;
  char tag[9];
  dp_fs_format fmt;
  int nkeys;
  const int *keys;          /* partition columns (indexes of the sink's schema) */
  const char *dflt;         /* 'partition.default-name' */
  dp_schema data_schema;    /* the columns the files hold */
  int *data_cols;           /* their indexes in the sink's schema */
  dp_vector **proj;         /* data_schema.ncols vectors of the batch being written */
  bool commit_success;      /* policy success-file */
  const char *success_name;
  int64_t delay_us;
  bool batch_mode;
  int64_t batch;
  part *parts;
  int nparts, cap_parts;
  uint32_t *slots;          /* open addressing: index + 1, 0 = empty */
  uint32_t mask;
  int *touched;             /* parts the running batch wrote */
  int ntouched, cap_touched;
  size_t buffered;          /* bytes in every part's buf */
  dp_buf key, val;          /* scratch */
};

static dp_span nowhere(void) {
  dp_span s = {0, 0, 0, 0};
  return s;
}

static const char *table_name(const dp_sink *k) { return k->table ? k->table->name : "?"; }

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t mtime_us(const struct stat *sb) {
  return (int64_t)sb->st_mtim.tv_sec * 1000000 + sb->st_mtim.tv_nsec / 1000;
}

static bool needs_escape(unsigned char c) {
  return c < 0x20 || c == 0x7f || (c < 0x80 && strchr("\"#%'*/:=?\\{[]^", c) != NULL);
}

void dp_fs_partition_name(dp_buf *out, const char *name, const char *value, size_t n, bool null,
                          const char *dflt) {
  static const char hex[] = "0123456789ABCDEF";
  /* the column's name is escaped too (Flink escapes both sides of '=') */
  for (const char *c = name; *c; c++) {
    if (needs_escape((unsigned char)*c)) {
      char e[3] = {'%', hex[(unsigned char)*c >> 4], hex[*c & 15]};
      dp_buf_put(out, e, 3);
    } else {
      dp_buf_putc(out, *c);
    }
  }
  dp_buf_putc(out, '=');
  if (null || n == 0) {
    dp_buf_puts(out, dflt);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)value[i];
    if (needs_escape(c)) {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      dp_buf_put(out, e, 3);
    } else {
      dp_buf_putc(out, (char)c);
    }
  }
}

static uint32_t hash_of(const char *p, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 16777619u;
  return h;
}

static int index_rebuild(dp_fs_parts *p, uint32_t nslots) {
  uint32_t *slots = calloc(nslots, sizeof *slots);
  if (!slots) return DIPPER_NOMEM;
  free(p->slots);
  p->slots = slots;
  p->mask = nslots - 1;
  for (int i = 0; i < p->nparts; i++) {
    uint32_t s = p->parts[i].hash & p->mask;
    while (slots[s]) s = (s + 1) & p->mask;
    slots[s] = (uint32_t)i + 1;
  }
  return DIPPER_OK;
}

/* The entry of partition folder rel[0..n), made when absent (*made). */
static int part_find(dp_fs_parts *p, const char *rel, size_t n, int *out) {
  uint32_t h = hash_of(rel, n);
  if (p->slots) {
    for (uint32_t s = h & p->mask; p->slots[s]; s = (s + 1) & p->mask) {
      part *q = &p->parts[p->slots[s] - 1];
      if (q->hash == h && strlen(q->rel) == n && memcmp(q->rel, rel, n) == 0) {
        *out = (int)(p->slots[s] - 1);
        return DIPPER_OK;
      }
    }
  }
  if (dp_grow_i(&p->parts, &p->cap_parts, p->nparts + 1, sizeof *p->parts, 16)) return DIPPER_NOMEM;
  part *q = &p->parts[p->nparts];
  memset(q, 0, sizeof *q);
  if (!(q->rel = malloc(n + 1))) return DIPPER_NOMEM;
  memcpy(q->rel, rel, n);
  q->rel[n] = 0;
  q->hash = h;
  q->waiting = -1;
  p->nparts++;
  *out = p->nparts - 1;
  if (!p->slots || (uint32_t)p->nparts * 2 > p->mask + 1) {
    uint32_t nslots = 64;
    while (nslots < (uint32_t)p->nparts * 4) nslots *= 2;
    return index_rebuild(p, nslots);
  }
  uint32_t s = h & p->mask;
  while (p->slots[s]) s = (s + 1) & p->mask;
  p->slots[s] = (uint32_t)p->nparts;
  return DIPPER_OK;
}

static void part_clear(part *q) {
  free(q->rel);
  free(q->tmp);
  dp_buf_free(&q->buf);
}

static char *join_path(const char *a, const char *b, const char *c) {
  size_t n = strlen(a) + strlen(b) + (c ? strlen(c) : 0) + 3;
  char *s = malloc(n);
  if (s) snprintf(s, n, c ? "%s/%s/%s" : "%s/%s", a, b, c ? c : "");
  return s;
}

/* ---- finding a killed run's files again ---- */

/* A temporary file of ours that a killed run left: ".part-<b>-<tag>.<ext>.inprogress". */
static bool our_leftover(const char *name, const char *tag) {
  size_t n = strlen(name), suffix = strlen(".inprogress");
  if (strncmp(name, ".part-", 6) != 0 || n < suffix || strcmp(name + n - suffix, ".inprogress") != 0)
    return false;
  const char *dash = strchr(name + 6, '-');
  return dash && strncmp(dash + 1, tag, 8) == 0 && dash[9] == '.';
}

/* One partition folder: remove our leftovers; note it as waiting when it
** holds part files newer than its success file. */
static int scan_leaf(dp_fs_parts *p, const char *full, const char *rel) {
  DIR *d = opendir(full);
  if (!d) return DIPPER_OK; /* not a folder: someone else's file */
  int64_t success = -1, oldest_new = -1;
  int64_t newest = -1;
  struct dirent *de;
  int64_t *mt = NULL;
  int nmt = 0, cap = 0, rc = DIPPER_OK;
  while ((de = readdir(d)) != NULL && !rc) {
    char *f = join_path(full, de->d_name, NULL);
    if (!f) {
      rc = DIPPER_NOMEM;
      break;
    }
    struct stat sb;
    if (our_leftover(de->d_name, p->tag)) unlink(f);
    else if (stat(f, &sb) == 0 && S_ISREG(sb.st_mode)) {
      if (p->commit_success && strcmp(de->d_name, p->success_name) == 0) success = mtime_us(&sb);
      else if (strncmp(de->d_name, "part-", 5) == 0) {
        if (dp_grow_i(&mt, &cap, nmt + 1, sizeof *mt, 16)) rc = DIPPER_NOMEM;
        else mt[nmt++] = mtime_us(&sb);
      }
    }
    free(f);
  }
  closedir(d);
  for (int i = 0; i < nmt; i++) {
    if (mt[i] > newest) newest = mt[i];
    if (mt[i] > success && (oldest_new < 0 || mt[i] < oldest_new)) oldest_new = mt[i];
  }
  free(mt);
  if (rc || !p->commit_success || oldest_new < 0) return rc;
  int at;
  if ((rc = part_find(p, rel, strlen(rel), &at)) != DIPPER_OK) return rc;
  p->parts[at].waiting = oldest_new;
  return DIPPER_OK;
}

/* Walk the folders `col=...` down to the partition depth. */
static int scan(dp_fs_parts *p, const char *full, const char *rel, int depth) {
  if (depth == p->nkeys) return scan_leaf(p, full, rel);
  DIR *d = opendir(full);
  if (!d) return DIPPER_OK;
  struct dirent *de;
  int rc = DIPPER_OK;
  while ((de = readdir(d)) != NULL && !rc) {
    if (de->d_name[0] == '.' || de->d_name[0] == '_' || !strchr(de->d_name, '=')) continue;
    char *f = join_path(full, de->d_name, NULL);
    char *r = rel[0] ? join_path(rel, de->d_name, NULL) : strdup(de->d_name);
    if (!f || !r) rc = DIPPER_NOMEM;
    else rc = scan(p, f, r, depth + 1);
    free(f);
    free(r);
  }
  closedir(d);
  return rc;
}

/* ---- open ---- */

static int read_options(dp_sink *k, dp_fs_parts *p) {
  const dp_table_def *t = k->table;
  p->dflt = dp_table_option(t, "partition.default-name", "__DEFAULT_PARTITION__");
  const char *kind = dp_table_option(t, "sink.partition-commit.policy.kind", NULL);
  /* plan/connectors.c refused every other policy at CREATE TABLE */
  p->commit_success = kind != NULL;
  p->success_name = dp_table_option(t, "sink.partition-commit.success-file.name", "_SUCCESS");
  const char *delay = dp_table_option(t, "sink.partition-commit.delay", NULL);
  if (delay && dp_parse_duration(delay, &p->delay_us) != DIPPER_OK)
    return dp_error(k->diags, DIPPER_OPTION, nowhere(),
                    "table `%s`: 'sink.partition-commit.delay' = '%s' is not a duration", table_name(k),
                    delay);
  p->batch_mode = k->db && !dp_session_streaming(k->db);
  return DIPPER_OK;
}

static int plan_columns(dp_sink *k, dp_fs_parts *p) {
  const dp_table_def *t = k->table;
  int n = k->schema->ncols;
  p->nkeys = t->npartition;
  p->keys = t->partition;
  p->data_schema.cols = calloc((size_t)n, sizeof(dp_field));
  p->data_cols = calloc((size_t)n, sizeof(int));
  p->proj = calloc((size_t)n, sizeof(dp_vector *));
  if (!p->data_schema.cols || !p->data_cols || !p->proj) return DIPPER_NOMEM;
  for (int c = 0; c < n; c++) {
    bool key = false;
    for (int j = 0; j < p->nkeys; j++) key |= p->keys[j] == c;
    if (key) continue;
    p->data_cols[p->data_schema.ncols] = c;
    p->data_schema.cols[p->data_schema.ncols++] = k->schema->cols[c];
  }
  for (int j = 0; j < p->nkeys; j++)
    if (p->keys[j] < 0 || p->keys[j] >= n)
      return dp_error(k->diags, DIPPER_INTERNAL, nowhere(),
                      "table `%s`: partition column %d is not in the sink's %d columns", table_name(k),
                      p->keys[j], n);
  return DIPPER_OK;
}

int dp_fs_parts_open(dp_sink *k, const char *dir, const char *tag, const dp_fs_format *fmt,
                     dp_fs_parts **out) {
  dp_fs_parts *p = calloc(1, sizeof *p);
  *out = p;
  if (!p || !(p->dir = strdup(dir))) return DIPPER_NOMEM;
  snprintf(p->tag, sizeof p->tag, "%s", tag);
  p->fmt = *fmt;
  p->batch = -1;
  int rc = read_options(k, p);
  if (!rc) rc = plan_columns(k, p);
  /* the checkpoint folder's lock makes this run the query's only writer */
  if (!rc && p->tag[0]) rc = scan(p, p->dir, "", 0);
  return rc;
}

/* ---- write ---- */

static int io_error(dp_sink *k, const char *what, const char *path, int err) {
  return dp_error(k->diags, DIPPER_IO, nowhere(), "table `%s`: cannot %s '%s': %s", table_name(k), what,
                  path, strerror(err));
}

static int flush_part(dp_sink *k, dp_fs_parts *p, part *q) {
  if (q->buf.oom) return DIPPER_NOMEM;
  if (!q->buf.len) return DIPPER_OK;
  FILE *f = fopen(q->tmp, "ab");
  if (!f) return io_error(k, "write", q->tmp, errno);
  bool bad = fwrite(q->buf.data, 1, q->buf.len, f) != q->buf.len;
  int err = errno;
  bad |= fclose(f) != 0;
  if (bad) return io_error(k, "write", q->tmp, err ? err : errno);
  p->buffered -= q->buf.len;
  q->buf.len = 0;
  return DIPPER_OK;
}

/* The first row of the batch in partition q: its folder and an empty temporary file. */
static int part_start(dp_sink *k, dp_fs_parts *p, int at, int64_t batch_id) {
  part *q = &p->parts[at];
  char *folder = join_path(p->dir, q->rel, NULL);
  if (!folder) return DIPPER_NOMEM;
  if (dp_make_dirs(folder) != 0) {
    int rc = io_error(k, "make the partition folder", folder, errno);
    free(folder);
    return rc;
  }
  size_t n = strlen(folder) + 96;
  free(q->tmp);
  q->tmp = malloc(n);
  if (!q->tmp) {
    free(folder);
    return DIPPER_NOMEM;
  }
  if (p->tag[0])
    snprintf(q->tmp, n, "%s/.part-%lld-%s.%s.inprogress", folder, (long long)batch_id, p->tag, p->fmt.ext);
  else
    snprintf(q->tmp, n, "%s/.part-%lld-%ld-%lx.%s.inprogress", folder, (long long)batch_id, (long)getpid(),
             (unsigned long)(uintptr_t)p, p->fmt.ext);
  free(folder);
  FILE *f = fopen(q->tmp, "wb");
  if (!f || fclose(f) != 0) return io_error(k, "create", q->tmp, errno);
  q->touched = true;
  if (q->waiting < 0) q->waiting = now_us();
  if (dp_grow_i(&p->touched, &p->cap_touched, p->ntouched + 1, sizeof *p->touched, 16)) return DIPPER_NOMEM;
  p->touched[p->ntouched++] = at;
  if (p->fmt.csv && p->fmt.header) {
    size_t before = q->buf.len;
    int rc = dp_csv_encode_header(&p->data_schema, &p->fmt.csv_opts, &q->buf);
    p->buffered += q->buf.len - before;
    return rc;
  }
  return DIPPER_OK;
}

/* The folder of row r in p->key. */
static void row_folder(dp_fs_parts *p, const dp_batch *b, int64_t r) {
  p->key.len = 0;
  for (int j = 0; j < p->nkeys; j++) {
    const dp_vector *v = b->cols[p->keys[j]];
    bool null = dp_vector_is_null(v, r);
    p->val.len = 0;
    if (!null) dp_text_put_value(&p->val, v, r, "", 0);
    if (j) dp_buf_putc(&p->key, '/');
    dp_fs_partition_name(&p->key, b->schema->cols[p->keys[j]].name, p->val.data, p->val.len, null, p->dflt);
  }
}

static int flush_all(dp_sink *k, dp_fs_parts *p) {
  int rc = DIPPER_OK;
  for (int i = 0; i < p->ntouched && !rc; i++) rc = flush_part(k, p, &p->parts[p->touched[i]]);
  return rc;
}

int dp_fs_parts_write(dp_sink *k, dp_fs_parts *p, int64_t batch_id, const dp_batch *b) {
  p->batch = batch_id;
  for (int c = 0; c < p->data_schema.ncols; c++) p->proj[c] = b->cols[p->data_cols[c]];
  dp_batch data = {&p->data_schema, p->data_schema.ncols, p->proj, b->nrows};
  int rc = DIPPER_OK;
  for (int64_t r = 0; r < b->nrows && !rc; r++) {
    row_folder(p, b, r);
    if (p->key.oom || p->val.oom) return DIPPER_NOMEM;
    int at;
    if ((rc = part_find(p, p->key.data, p->key.len, &at)) != DIPPER_OK) break;
    if (!p->parts[at].touched && (rc = part_start(k, p, at, batch_id)) != DIPPER_OK) break;
    part *q = &p->parts[at];
    size_t before = q->buf.len;
    rc = p->fmt.csv ? dp_csv_encode_row(&data, r, &p->fmt.csv_opts, &q->buf) : dp_json_encode_row(&data, r, &q->buf);
    if (!p->fmt.csv) dp_buf_putc(&q->buf, '\n');
    p->buffered += q->buf.len - before;
    if (!rc && q->buf.len >= FLUSH_PART) rc = flush_part(k, p, q);
    if (!rc && p->buffered >= FLUSH_ALL) rc = flush_all(k, p);
  }
  return rc;
}

/* ---- commit ---- */

/* Put q's finished temporary file in place (as filesystem.c's place_part). */
static int place(dp_sink *k, dp_fs_parts *p, part *q) {
  int rc = flush_part(k, p, q);
  if (rc) return rc;
  char *folder = join_path(p->dir, q->rel, NULL);
  if (!folder) return DIPPER_NOMEM;
  size_t n = strlen(folder) + 64;
  char *final = malloc(n);
  if (!final) {
    free(folder);
    return DIPPER_NOMEM;
  }
  int err = 0;
  if (p->tag[0]) {
    int fd = open(q->tmp, O_RDONLY);
    if (fd < 0 || fsync(fd) != 0) err = errno;
    if (fd >= 0) close(fd);
    snprintf(final, n, "%s/part-%lld-%s.%s", folder, (long long)p->batch, p->tag, p->fmt.ext);
    if (!err && rename(q->tmp, final) != 0) err = errno;
    if (!err && dp_sync_dir(folder) != 0) err = errno;
  } else {
    for (int i = 0;; i++) {
      snprintf(final, n, "%s/part-%lld-%d.%s", folder, (long long)p->batch, i, p->fmt.ext);
      if (link(q->tmp, final) == 0) break;
      if (errno != EEXIST) {
        err = errno;
        break;
      }
    }
    unlink(q->tmp);
  }
  if (err) rc = io_error(k, "put in place", final, err);
  free(final);
  free(folder);
  return rc;
}

/* Commit partition q: its success file. */
static int commit_partition(dp_sink *k, dp_fs_parts *p, part *q) {
  char *folder = join_path(p->dir, q->rel, NULL);
  char *f = folder ? join_path(folder, p->success_name, NULL) : NULL;
  int rc = DIPPER_OK;
  if (!f) rc = DIPPER_NOMEM;
  else {
    int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || (p->tag[0] && fsync(fd) != 0)) rc = io_error(k, "write the success file", f, errno);
    if (fd >= 0) close(fd);
    if (!rc && p->tag[0] && dp_sync_dir(folder) != 0) rc = io_error(k, "sync", folder, errno);
  }
  if (!rc) q->waiting = -1;
  free(f);
  free(folder);
  return rc;
}

/* Keep only the partitions that wait for their commit. */
static int forget_done(dp_fs_parts *p) {
  int keep = 0;
  for (int i = 0; i < p->nparts; i++) {
    part *q = &p->parts[i];
    q->touched = false;
    if (q->waiting < 0) {
      part_clear(q);
      continue;
    }
    free(q->tmp);
    q->tmp = NULL;
    p->parts[keep++] = *q;
  }
  p->nparts = keep;
  p->ntouched = 0;
  p->buffered = 0;
  uint32_t nslots = 64;
  while (nslots < (uint32_t)p->nparts * 4) nslots *= 2;
  return index_rebuild(p, nslots);
}

int dp_fs_parts_commit(dp_sink *k, dp_fs_parts *p) {
  int rc = DIPPER_OK;
  for (int i = 0; i < p->ntouched && !rc; i++) rc = place(k, p, &p->parts[p->touched[i]]);
  if (rc) return rc;
  if (p->commit_success) {
    int64_t now = now_us();
    for (int i = 0; i < p->nparts && !rc; i++) {
      part *q = &p->parts[i];
      if (q->waiting >= 0 && (p->batch_mode || now >= q->waiting + p->delay_us))
        rc = commit_partition(k, p, q);
    }
  } else {
    for (int i = 0; i < p->nparts; i++) p->parts[i].waiting = -1;
  }
  if (rc) return rc;
  return forget_done(p);
}

void dp_fs_parts_free(dp_fs_parts *p) {
  if (!p) return;
  for (int i = 0; i < p->nparts; i++) {
    part *q = &p->parts[i];
    if (q->touched && q->tmp) unlink(q->tmp); /* an uncommitted batch leaves nothing behind */
    part_clear(q);
  }
  free(p->parts);
  free(p->slots);
  free(p->touched);
  free(p->data_schema.cols);
  free(p->data_cols);
  free(p->proj);
  dp_buf_free(&p->key);
  dp_buf_free(&p->val);
  free(p->dir);
  free(p);
}
