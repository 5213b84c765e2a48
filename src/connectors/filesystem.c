/*
** filesystem.c — the `filesystem` connector: JSON lines and CSV files.
**
** Source.  'path' is a file or a directory.  A directory's files are read in
** name order; names starting with '.' or '_' are skipped (temporary and
** marker files, our own sink's included), and 'source.path.regex-pattern',
** when set, must match the whole path.  In batch mode everything there is
** read once and the source ends.  So it is in streaming mode too (Flink's
** rule: a filesystem table is bounded) unless 'source.monitor-interval' is
** set: then the directory is watched, listed again at that interval (and
** only when its modification time says it changed): the files that appeared
** since make up the next batch (one micro-batch per new file set, at most
** 'source.max-files-per-trigger' files), and the names already taken are
** remembered (with a hash index), so a file is read once.  A file is read
** a window at a time (1 MiB, more for a longer record) and cut into records
** (CSV quotes respected), so memory follows the batch, not the file;
** 'csv.header' = 'true' skips each file's first record.  Metadata columns: file.path, file.name,
** file.size, file.modification-time.  Bad records follow the table's policy
** with "path:line" as their place.
**
** Splits (parallel execution, connector.h): split w of n reads the files
** whose names hash to w (a remix of the name's FNV-1a, mod n), each whole and
** in its order; the order across files is then per split, not global.  Every
** split remembers every name it was shown, and queues only its own.  A
** split's plan is worker 0's: the row cap and the files its listing found
** (streaming, replayed on the others, each queueing its own), so all splits
** take a new file in the same batch; in batch mode each lists the same
** folder.  A split's position is its own (its files, where it is in the
** current one), one per worker in the commit record, and the cap is per
** split.  'source.max-files-per-trigger' counts files across splits, which
** they do not share: such a table runs on one thread.
**
** Sink.  'path' is a directory (made when missing).  Each micro-batch with
** rows becomes one file, written under a hidden temporary name
** (.part-...inprogress) and renamed at commit, so a reader of the directory
** never sees half a batch.  With a checkpoint folder (exactly-once) the file
** is part-<batch>-<tag>.<json|csv>, <tag> the query's (a hash of its
** checkpoint folder): it is fsync'd before the rename and the directory
** after, and a batch run again after a restart replaces it with the same
** rows, so each batch's rows are there once.  Without one, batch ids start
** at 0 on every run and the file is part-<batch>-<n>, <n> the first number
** free (no guarantee: a restarted run writes its input again).  A table
** with PARTITIONED BY writes through fs_partition.c: the same names and the
** same rule in every partition folder, the partition columns left out.
** On N > 1 workers (exec/parallel.h) each worker writes its own part file of
** each batch, named by both: part-<batch>-<tag>-<www>.<ext> (<www> the
** worker, three digits) or part-<batch>-<www>-<n>.<ext>, renamed at its
** commit the same way, so each batch's rows are there once (a batch run
** again runs on the same worker over the same rows: it replaces its files);
** read in name order, a batch's files give its rows in the one-thread order
** of a stateless pipeline.  A PARTITIONED BY table keeps one writer.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "core/session.h"
#include "connectors/records.h"
#include "connectors/fs_partition.h"
#include "core/files.h"

static dp_span nowhere(void) {
  dp_span s = {0, 0, 0, 0};
  return s;
}

typedef struct fs_file {
  char *path;
  const char *name; /* inside path */
  int64_t size;
  int64_t mtime;    /* µs */
} fs_file;

typedef struct fs_source {
  char *root;
  bool is_dir;
  bool bounded;
  bool listed;       /* listed at least once */
  bool has_regex;
  regex_t regex;
  dp_record_decoder dec;
  dp_bad_records bad;
  char **seen;       /* names already queued, in the order taken */
  int nseen, cap_seen;
  uint32_t *seen_slots; /* open-addressing index of `seen`: i + 1, 0 = empty */
  uint32_t seen_mask;   /* nslots - 1 (a power of two), 0 before the first name */
  /* when to list a watched directory again */
  int64_t monitor_us;   /* 'source.monitor-interval' (a watched folder), or -1: bounded */
  int64_t listed_at;    /* CLOCK_REALTIME µs of the last listing */
  struct timespec dir_mtime; /* the directory's modification time then */
  int max_files;        /* 'source.max-files-per-trigger', or 0: every new file */
  int read_end;         /* the planned batch reads the queue up to here */
  fs_file *queue;    /* files to read, in order */
  int nqueue, cap_queue, cur;
  /* the current file, read a window at a time: data holds its bytes
  ** [base, base + len), pos is the next record's place in the window */
  int fd;
  char *data;
  size_t cap, len, pos;
  uint64_t base;
  bool eof;          /* the window reaches the end of the file */
  bool loaded;
  int64_t line;
  bool header_pending;
  int64_t cap_left;  /* rows the planned batch may still take; -1: no cap */
  int64_t cap_planned; /* cap_left as planned, for the offset log */
  int plan_first, plan_end; /* the queued files when the batch was planned: the
                               scan reads ahead before the log is written */
  /* metadata: per scan column, which key, or NULL for decoded columns */
  const char **meta;
  /* checkpoints: where to start in the first queued file once loaded, and
  ** the files of a batch to plan again (replay_n >= 0) */
  size_t resume_pos;
  int64_t resume_line;
  bool resume_header_done, resuming;
  char **replay;
  int64_t replay_n, replay_cap;
  /* splits (parallel execution): this source reads the files of split
  ** `split` of `nsplits`; new_paths are the files the last plan found, all
  ** splits' (a split's plan, replayed on the others) */
  int split, nsplits;
  char **new_paths;
  int nnew, cap_new;
} fs_source;

static void fs_source_close(dp_source *s);

static int fs_source_open_state(dp_source *s, fs_source *st) {
  const dp_table_def *t = s->table;
  const char *path = dp_table_option(t, "path", NULL);
  if (!path)
    return dp_error(s->diags, DIPPER_OPTION, t->with_span,
                    "table `%s` needs 'path' = '/dir/or/file'", t->name);
  /* a file: URI, as Flink takes it ('file:///data/x' or 'file:/data/x') */
  if (!strncmp(path, "file://", 7) && path[7] == '/') path += 7;
  else if (!strncmp(path, "file:/", 6) && path[6] != '/') path += 5;
  st->root = strdup(path);
  if (!st->root) return DIPPER_NOMEM;
  /* plan/connectors.c's filesystem_bounded: the same rule, as the plan saw it */
  const char *mon = dp_table_option(t, "source.monitor-interval", NULL);
  st->bounded = s->db ? !dp_session_streaming(s->db) || !mon : true;
  struct stat sb;
  if (stat(st->root, &sb) == 0) {
    st->is_dir = S_ISDIR(sb.st_mode);
  } else if (st->bounded) {
    return dp_error(s->diags, DIPPER_IO, t->with_span,
                    "table `%s`: cannot read path '%s': %s; check the 'path' option%s", t->name,
                    path, strerror(errno),
                    s->db && dp_session_streaming(s->db)
                        ? " (a filesystem table without 'source.monitor-interval' is bounded: its "
                          "files are read once when the query starts; set the option to watch a "
                          "folder for files that come later)"
                        : "");
  } else {
    st->is_dir = true; /* a directory to be made later: watch it */
  }
  st->monitor_us = -1;
  if (mon && (dp_parse_duration(mon, &st->monitor_us) != DIPPER_OK || st->monitor_us <= 0))
    return dp_error(s->diags, DIPPER_OPTION, t->with_span,
                    "table `%s`: 'source.monitor-interval' = '%s' is not a positive duration; "
                    "write e.g. '10 s'",
                    t->name, mon);
  const char *mf = dp_table_option(t, "source.max-files-per-trigger", NULL);
  if (mf) st->max_files = atoi(mf); /* checked at compile (plan/connectors.c) */
  const char *re = dp_table_option(t, "source.path.regex-pattern", NULL);
  if (re) {
    size_t n = strlen(re);
    char *anchored = malloc(n + 5);
    if (!anchored) return DIPPER_NOMEM;
    snprintf(anchored, n + 5, "^(%s)$", re);
    int rc = regcomp(&st->regex, anchored, REG_EXTENDED | REG_NOSUB);
    free(anchored);
    if (rc != 0)
      return dp_error(s->diags, DIPPER_OPTION, t->with_span,
                      "table `%s`: 'source.path.regex-pattern' = '%s' is not a valid regular "
                      "expression",
                      t->name, re);
    st->has_regex = true;
  }
  st->meta = calloc(s->schema->ncols ? (size_t)s->schema->ncols : 1, sizeof *st->meta);
  if (!st->meta) return DIPPER_NOMEM;
  for (int i = 0; i < s->schema->ncols; i++) {
    int k = dp_schema_find(&t->schema, s->schema->cols[i].name);
    if (k >= 0 && t->cols[k].kind == DP_CK_METADATA)
      st->meta[i] = t->cols[k].metadata_key ? t->cols[k].metadata_key : t->schema.cols[k].name;
  }
  dp_bad_records_init(&st->bad, t);
  /* records.c's 'avro' is one datum per framed record (a Kafka message); a
  ** file of format 'avro' is an object container file, which is not that */
  if (t->format && strcasecmp(t->format, "avro") == 0)
    return dp_error(s->diags, DIPPER_UNSUPPORTED, t->with_span,
                    "table `%s`: 'format' = 'avro' on a filesystem table means Avro object "
                    "container files, which the embedded engine does not read; convert them to "
                    "'json' or 'csv', or run the query on Spark",
                    t->name);
  int rc = dp_record_decoder_open(&st->dec, t, s->schema, "json", s->diags);
  return rc;
}

static int fs_source_open(dp_source *s) {
  fs_source *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  st->replay_n = -1;
  st->fd = -1;
  s->state = st;
  int rc = fs_source_open_state(s, st);
  if (rc) fs_source_close(s); /* the caller does not close a source that failed to open */
  return rc;
}

static uint32_t name_hash(const char *name) {
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
  return h;
}

/* Whether this split reads the file named `name`: one split per name. */
static bool mine(const fs_source *st, const char *name) {
  if (st->nsplits <= 1) return true;
  uint64_t h = name_hash(name) * UINT64_C(0x9E3779B97F4A7C15);
  return (int)((h >> 32) % (uint64_t)st->nsplits) == st->split;
}

/* A split's plan: remember a file the plan found (every split's). */
static int note_new(fs_source *st, const char *path) {
  if (st->nsplits <= 1) return DIPPER_OK;
  if (st->nnew == st->cap_new) {
    int cap = st->cap_new ? st->cap_new * 2 : 16;
    char **p = realloc(st->new_paths, (size_t)cap * sizeof *p);
    if (!p) return DIPPER_NOMEM;
    st->new_paths = p;
    st->cap_new = cap;
  }
  if (!(st->new_paths[st->nnew] = strdup(path))) return DIPPER_NOMEM;
  st->nnew++;
  return DIPPER_OK;
}

static void forget_new(fs_source *st) {
  for (int i = 0; i < st->nnew; i++) free(st->new_paths[i]);
  st->nnew = 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool seen_before(const fs_source *st, const char *name) {
  if (!st->seen_mask) return false;
  for (uint32_t i = name_hash(name) & st->seen_mask;; i = (i + 1) & st->seen_mask) {
    uint32_t e = st->seen_slots[i];
    if (!e) return false;
    if (strcmp(st->seen[e - 1], name) == 0) return true;
  }
}

static void seen_place(uint32_t *slots, uint32_t mask, const char *name, uint32_t entry) {
  uint32_t i = name_hash(name) & mask;
  while (slots[i]) i = (i + 1) & mask;
  slots[i] = entry;
}

/* Index seen[nseen - 1]; the slots stay at most half full. */
static int seen_index_last(fs_source *st) {
  if ((uint64_t)st->nseen * 2 > (uint64_t)st->seen_mask) {
    uint64_t nslots = st->seen_mask ? ((uint64_t)st->seen_mask + 1) * 2 : 64;
    if (nslots > UINT32_MAX) return DIPPER_LIMIT;
    uint32_t *slots = calloc((size_t)nslots, sizeof *slots);
    if (!slots) return DIPPER_NOMEM;
    for (int i = 0; i < st->nseen - 1; i++)
      seen_place(slots, (uint32_t)(nslots - 1), st->seen[i], (uint32_t)i + 1);
    free(st->seen_slots);
    st->seen_slots = slots;
    st->seen_mask = (uint32_t)(nslots - 1);
  }
  seen_place(st->seen_slots, st->seen_mask, st->seen[st->nseen - 1], (uint32_t)st->nseen);
  return DIPPER_OK;
}

static int cmp_file(const void *a, const void *b) {
  return strcmp(((const fs_file *)a)->path, ((const fs_file *)b)->path);
}

static int queue_file(fs_source *st, const char *path, const char *name_in, const struct stat *sb) {
  if (st->nqueue == st->cap_queue) {
    int cap = st->cap_queue ? st->cap_queue * 2 : 16;
    fs_file *q = realloc(st->queue, (size_t)cap * sizeof *q);
    if (!q) return DIPPER_NOMEM;
    st->queue = q;
    st->cap_queue = cap;
  }
  fs_file *f = &st->queue[st->nqueue];
  f->path = strdup(path);
  if (!f->path) return DIPPER_NOMEM;
  f->name = f->path + (name_in - path);
  f->size = (int64_t)sb->st_size;
  f->mtime = (int64_t)sb->st_mtim.tv_sec * 1000000 + sb->st_mtim.tv_nsec / 1000;
  st->nqueue++;
  return DIPPER_OK;
}

static int remember(fs_source *st, const char *name) {
  if (st->nseen == st->cap_seen) {
    int cap = st->cap_seen ? st->cap_seen * 2 : 16;
    char **p = realloc(st->seen, (size_t)cap * sizeof *p);
    if (!p) return DIPPER_NOMEM;
    st->seen = p;
    st->cap_seen = cap;
  }
  if (!(st->seen[st->nseen] = strdup(name))) return DIPPER_NOMEM;
  st->nseen++;
  int rc = seen_index_last(st);
  if (rc) free(st->seen[--st->nseen]);
  return rc;
}

static int64_t realtime_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Is a listing of the watched directory due?  Every 'source.monitor-interval'
** — unless the directory has not changed: a new entry changes its
** modification time, which is only trusted once it is two seconds old (file
** systems stamp with a coarse clock, so a file made in the same tick as the
** last listing would keep the same time). */
static bool listing_due(fs_source *st) {
  if (!st->listed) return true;
  int64_t now = realtime_us();
  if (now - st->listed_at < st->monitor_us) return false;
  struct stat sb;
  if (stat(st->root, &sb) != 0) return true;
  int64_t m = (int64_t)sb.st_mtim.tv_sec * 1000000 + sb.st_mtim.tv_nsec / 1000;
  return sb.st_mtim.tv_sec != st->dir_mtime.tv_sec || sb.st_mtim.tv_nsec != st->dir_mtime.tv_nsec ||
         now - m < 2000000;
}

/* Add the files that appeared since the last listing to the queue. */
static int list_new(dp_source *s, fs_source *st) {
  struct stat sb;
  int rc;
  if (!st->is_dir) {
    if (st->listed) return DIPPER_OK;
    if (stat(st->root, &sb) != 0)
      return dp_error(s->diags, DIPPER_IO, nowhere(), "table `%s`: cannot read '%s': %s",
                      s->table->name, st->root, strerror(errno));
    const char *slash = strrchr(st->root, '/');
    const char *name = slash ? slash + 1 : st->root;
    if ((rc = note_new(st, st->root)) != DIPPER_OK) return rc;
    if (mine(st, name) && (rc = queue_file(st, st->root, name, &sb)) != DIPPER_OK) return rc;
    st->listed = true;
    return DIPPER_OK;
  }
  DIR *dir = opendir(st->root);
  if (!dir) {
    if (!st->bounded && errno == ENOENT) return DIPPER_OK; /* not made yet */
    return dp_error(s->diags, DIPPER_IO, nowhere(), "table `%s`: cannot list directory '%s': %s",
                    s->table->name, st->root, strerror(errno));
  }
  st->listed = true;
  st->listed_at = realtime_us();
  if (fstat(dirfd(dir), &sb) == 0) st->dir_mtime = sb.st_mtim;
  int first_new = st->nqueue;
  size_t rootlen = strlen(st->root);
  char *full = NULL;
  size_t full_cap = 0;
  rc = DIPPER_OK;
  struct dirent *de;
  while (rc == DIPPER_OK && (de = readdir(dir)) != NULL) {
    const char *name = de->d_name;
    if (name[0] == '.' || name[0] == '_' || seen_before(st, name)) continue;
    size_t need = rootlen + strlen(name) + 2;
    if (need > full_cap) {
      char *p = realloc(full, need);
      if (!p) {
        rc = DIPPER_NOMEM;
        break;
      }
      full = p;
      full_cap = need;
    }
    snprintf(full, need, "%s%s%s", st->root, rootlen && st->root[rootlen - 1] == '/' ? "" : "/",
             name);
    if (stat(full, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    if (st->has_regex && regexec(&st->regex, full, 0, NULL, 0) != 0) continue;
    if ((rc = remember(st, name)) != DIPPER_OK) break;
    if ((rc = note_new(st, full)) != DIPPER_OK) break;
    if (mine(st, name)) rc = queue_file(st, full, full + strlen(full) - strlen(name), &sb);
  }
  closedir(dir);
  free(full);
  if (rc == DIPPER_OK && st->nqueue - first_new > 1)
    qsort(st->queue + first_new, (size_t)(st->nqueue - first_new), sizeof *st->queue, cmp_file);
  if (rc == DIPPER_OK && st->nnew > 1)
    qsort(st->new_paths, (size_t)st->nnew, sizeof *st->new_paths, cmp_str);
  return rc;
}

static int replay_files(dp_source *s, fs_source *st);

static int fs_source_plan(dp_source *s, int64_t max_rows, bool *exhausted) {
  fs_source *st = s->state;
  *exhausted = false;
  st->cap_left = max_rows > 0 ? max_rows : -1;
  int64_t replayed = st->replay_n;
  forget_new(st);
  if (st->replay_n >= 0) {
    int rc = replay_files(s, st);
    if (rc) return rc;
  } else if (!st->listed || (!st->bounded && (!st->is_dir || listing_due(st)))) {
    /* batch mode lists once; a stream looks again when a listing is due */
    int rc = list_new(s, st);
    if (rc) return rc;
  }
  st->cap_planned = st->cap_left;
  st->plan_first = st->cur;
  st->plan_end = st->nqueue;
  /* 'source.max-files-per-trigger': a stream's batch takes the oldest new
  ** files up to the cap (a batch planned again takes what it took) */
  if (st->max_files > 0 && !st->bounded && replayed < 0 && st->plan_end - st->cur > st->max_files)
    st->plan_end = st->cur + st->max_files;
  st->read_end = st->plan_end;
  *exhausted = st->bounded && st->cur >= st->nqueue;
  return DIPPER_OK;
}

/* A window of the file: 1 MiB, or as much as its longest record needs. */
#define FS_WINDOW ((size_t)1 << 20)

/* Keep the window's unread bytes and read on after them, growing the window
** when one record fills it; st->eof once the file ends. */
static int refill(dp_source *s, fs_source *st, const fs_file *f) {
  if (st->pos > 0) {
    memmove(st->data, st->data + st->pos, st->len - st->pos);
    st->base += st->pos;
    st->len -= st->pos;
    st->pos = 0;
  }
  if (st->len == st->cap) {
    size_t cap = st->cap ? st->cap * 2 : FS_WINDOW;
    char *p = realloc(st->data, cap);
    if (!p) return DIPPER_NOMEM;
    st->data = p;
    st->cap = cap;
  }
  for (;;) {
    ssize_t got = read(st->fd, st->data + st->len, st->cap - st->len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return dp_error(s->diags, DIPPER_IO, nowhere(), "table `%s`: cannot read '%s': %s",
                      s->table->name, f->path, strerror(errno));
    if (got == 0) st->eof = true;
    st->len += (size_t)got;
    return DIPPER_OK;
  }
}

static int load_file(dp_source *s, fs_source *st, const fs_file *f) {
  st->fd = open(f->path, O_RDONLY | O_CLOEXEC);
  if (st->fd < 0)
    return dp_error(s->diags, DIPPER_IO, nowhere(), "table `%s`: cannot open '%s': %s",
                    s->table->name, f->path, strerror(errno));
  st->loaded = true;
  st->len = st->pos = 0;
  st->base = 0;
  st->eof = false;
  st->line = 0;
  st->header_pending = st->dec.header;
  if (st->resuming) {
    /* the checkpoint's place in this file: the file must still hold it */
    st->resuming = false;
    struct stat sb;
    if (fstat(st->fd, &sb) != 0 || (uint64_t)sb.st_size < (uint64_t)st->resume_pos)
      return dp_error(s->diags, DIPPER_CORRUPT, nowhere(),
                      "table `%s`: '%s' is shorter (%lld bytes) than when the checkpoint was "
                      "taken (read to byte %zu); files a source has begun must not change",
                      s->table->name, f->path, (long long)sb.st_size, st->resume_pos);
    if (lseek(st->fd, (off_t)st->resume_pos, SEEK_SET) < 0)
      return dp_error(s->diags, DIPPER_IO, nowhere(), "table `%s`: cannot seek in '%s': %s",
                      s->table->name, f->path, strerror(errno));
    st->base = st->resume_pos;
    st->line = st->resume_line;
    if (st->resume_header_done) st->header_pending = false;
  }
  return refill(s, st, f);
}

static void unload(fs_source *st) {
  if (st->loaded) close(st->fd);
  st->fd = -1;
  st->loaded = false;
  st->len = st->pos = 0;
  /* the window stays allocated for the next file */
}

static int put_meta(dp_vector *v, const char *key, const fs_file *f) {
  if (strcmp(key, "file.path") == 0) return dp_vector_append_str(v, f->path, strlen(f->path));
  if (strcmp(key, "file.name") == 0) return dp_vector_append_str(v, f->name, strlen(f->name));
  if (strcmp(key, "file.size") == 0) return dp_vector_append_i64(v, f->size);
  if (strcmp(key, "file.modification-time") == 0) return dp_vector_append_i64(v, f->mtime);
  return dp_vector_append_null(v);
}

static int fs_source_read(dp_source *s, dp_batch *out, int64_t want, bool *done) {
  fs_source *st = s->state;
  int64_t got = 0;
  dp_format_error err;
  int rc = DIPPER_OK;
  *done = false;
  while (st->cur < st->read_end) {
    const fs_file *f = &st->queue[st->cur];
    if (!st->loaded && (rc = load_file(s, st, f)) != DIPPER_OK) return rc;
    for (;;) {
      if (got >= want || st->cap_left == 0) goto out;
      if (st->pos == st->len) {
        if (st->eof) break;
        if ((rc = refill(s, st, f))) return rc;
        continue;
      }
      bool complete;
      const char *rec = st->data + st->pos;
      size_t len = dp_record_end(&st->dec, rec, st->len - st->pos, &complete);
      if (!complete && !st->eof) { /* the record goes on past the window */
        if ((rc = refill(s, st, f))) return rc;
        continue;
      }
      st->pos += len;
      st->line++;
      s->metrics.bytes += (int64_t)len;
      if (st->header_pending) {
        st->header_pending = false;
        continue;
      }
      bool skipped;
      rc = dp_record_decode(&st->dec, rec, len, out, &skipped, &err);
      if (rc == DIPPER_DATA) {
        char where[512];
        snprintf(where, sizeof where, "%s:%lld", f->path, (long long)st->line);
        if ((rc = dp_bad_record(&st->bad, s, where, &err, rec, len)) != DIPPER_OK) return rc;
        continue;
      }
      if (rc) return rc;
      if (skipped) continue;
      if (st->dec.nmeta)
        for (int c = 0; c < out->ncols; c++)
          if (st->meta[c] && (rc = put_meta(out->cols[c], st->meta[c], f)) != DIPPER_OK) return rc;
      got++;
      if (st->cap_left > 0) st->cap_left--;
    }
    unload(st);
    st->cur++;
  }
out:
  *done = st->cur >= st->read_end || st->cap_left == 0;
  s->metrics.rows += got;
  if (out->ncols > 0) return dp_batch_sync(out);
  out->nrows += got;
  return DIPPER_OK;
}

static int fs_source_commit(dp_source *s) {
  fs_source *st = s->state;
  /* files fully read leave the queue; their names stay in `seen` */
  if (st->cur > 0) {
    for (int i = 0; i < st->cur; i++) free(st->queue[i].path);
    memmove(st->queue, st->queue + st->cur, (size_t)(st->nqueue - st->cur) * sizeof *st->queue);
    st->nqueue -= st->cur;
    st->read_end -= st->cur;
    st->plan_end -= st->cur;
    st->plan_first = 0;
    st->cur = 0;
  }
  return dp_bad_records_flush(&st->bad, s);
}

static void fs_source_close(dp_source *s) {
  fs_source *st = s->state;
  if (!st) return;
  dp_record_decoder_close(&st->dec);
  dp_bad_records_close(&st->bad);
  if (st->has_regex) regfree(&st->regex);
  for (int i = 0; i < st->nseen; i++) free(st->seen[i]);
  free(st->seen);
  free(st->seen_slots);
  for (int i = 0; i < st->nqueue; i++) free(st->queue[i].path);
  free(st->queue);
  for (int64_t i = 0; i < st->replay_n; i++) free(st->replay[i]);
  free(st->replay);
  forget_new(st);
  free(st->new_paths);
  unload(st);
  free(st->data);
  free(st->meta);
  free(st->root);
  free(st);
  s->state = NULL;
}

/* ---- source checkpoints (connector.h) ----
** A position: whether the path was listed, every name taken so far, the
** files queued and not finished (path, size, modification time), and where
** the first of them was left (byte, line, header read).  A plan: the cap on
** rows and the queued files' paths; planned again, the batch takes exactly
** those files — the first ones the position had queued, then the ones the
** listing had found — and the same cap, so the same rows. */

static int fs_save_plan(dp_source *s, dp_buf *out) {
  const fs_source *st = s->state;
  dp_put_svar(out, st->cap_planned);
  if (st->nsplits > 1) { /* a split's plan: the files found, every split's */
    dp_put_uvar(out, (uint64_t)st->nnew);
    for (int i = 0; i < st->nnew; i++) dp_put_str(out, st->new_paths[i]);
    return out->oom ? DIPPER_NOMEM : DIPPER_OK;
  }
  dp_put_uvar(out, (uint64_t)(st->plan_end - st->plan_first));
  for (int i = st->plan_first; i < st->plan_end; i++) dp_put_str(out, st->queue[i].path);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int fs_save_position(dp_source *s, dp_buf *out) {
  const fs_source *st = s->state;
  dp_put_u8(out, st->listed ? 1 : 0);
  dp_put_uvar(out, (uint64_t)st->nseen);
  for (int i = 0; i < st->nseen; i++) dp_put_str(out, st->seen[i]);
  dp_put_uvar(out, (uint64_t)(st->nqueue - st->cur));
  for (int i = st->cur; i < st->nqueue; i++) {
    dp_put_str(out, st->queue[i].path);
    dp_put_svar(out, st->queue[i].size);
    dp_put_svar(out, st->queue[i].mtime);
  }
  bool begun = st->loaded && st->cur < st->nqueue;
  dp_put_uvar(out, begun ? st->base + st->pos : 0);
  dp_put_svar(out, begun ? st->line : 0);
  dp_put_u8(out, begun && !st->header_pending ? 1 : 0);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int fs_corrupt(dp_source *s, const char *what) {
  return dp_error(s->diags, DIPPER_CORRUPT, nowhere(),
                  "table `%s`: the checkpoint's %s does not fit this filesystem table",
                  s->table->name, what);
}

static int fs_restore_position(dp_source *s, dp_rd *in) {
  fs_source *st = s->state;
  bool oom = false;
  int rc = DIPPER_OK;
  st->listed = dp_get_u8(in) != 0;
  uint64_t nseen = dp_get_count(in, 1);
  for (uint64_t i = 0; i < nseen && !in->bad && !rc; i++) {
    char *name = dp_get_strdup(in, &oom);
    if (name) rc = remember(st, name);
    free(name);
  }
  uint64_t nq = dp_get_count(in, 3);
  for (uint64_t i = 0; i < nq && !in->bad && !rc && !oom; i++) {
    char *path = dp_get_strdup(in, &oom);
    struct stat sb = {0};
    sb.st_size = (off_t)dp_get_svar(in);
    int64_t mtime = dp_get_svar(in);
    if (!path) break;
    const char *slash = strrchr(path, '/');
    rc = queue_file(st, path, slash ? slash + 1 : path, &sb);
    if (!rc) st->queue[st->nqueue - 1].mtime = mtime;
    free(path);
  }
  uint64_t pos = dp_get_uvar(in);
  st->resume_line = dp_get_svar(in);
  st->resume_header_done = dp_get_u8(in) != 0;
  if (oom) return DIPPER_NOMEM;
  if (rc) return rc;
  if (in->bad) return fs_corrupt(s, "position");
  st->resume_pos = (size_t)pos;
  st->resuming = pos > 0 || st->resume_header_done;
  return DIPPER_OK;
}

static int fs_replay_plan(dp_source *s, dp_rd *in) {
  fs_source *st = s->state;
  int64_t cap = dp_get_svar(in);
  uint64_t n = dp_get_count(in, 1);
  if (in->bad) return fs_corrupt(s, "batch bounds");
  char **paths = calloc(n ? n : 1, sizeof *paths);
  if (!paths) return DIPPER_NOMEM;
  bool oom = false;
  for (uint64_t i = 0; i < n && !in->bad && !oom; i++) paths[i] = dp_get_strdup(in, &oom);
  if (in->bad || oom) {
    for (uint64_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    return oom ? DIPPER_NOMEM : fs_corrupt(s, "batch bounds");
  }
  st->replay = paths;
  st->replay_n = (int64_t)n;
  st->replay_cap = cap;
  return DIPPER_OK;
}

/* Plan the logged batch again: its files in its order, its cap. */
static int replay_files(dp_source *s, fs_source *st) {
  int rc = DIPPER_OK;
  for (int64_t i = 0; i < st->replay_n && !rc; i++) {
    const char *path = st->replay[i];
    int64_t k = st->nsplits > 1 ? st->nqueue : st->cur + i; /* a split's: every file is new */
    if (st->nsplits > 1) {
      const char *slash = strrchr(path, '/');
      const char *name = slash ? slash + 1 : path;
      rc = note_new(st, path);
      if (!rc && st->is_dir && !seen_before(st, name)) rc = remember(st, name);
      st->listed = true;
      if (rc || !mine(st, name)) continue;
    }
    if (k < st->nqueue) {
      if (strcmp(st->queue[k].path, path) != 0)
        rc = dp_error(s->diags, DIPPER_CORRUPT, nowhere(),
                      "table `%s`: the batch run again after the restart read '%s' as its file %lld, "
                      "but the checkpoint's position has '%s' there",
                      s->table->name, path, (long long)i, st->queue[k].path);
      continue;
    }
    struct stat sb;
    if (stat(path, &sb) != 0) {
      rc = dp_error(s->diags, DIPPER_IO, nowhere(),
                    "table `%s`: '%s', read by the batch that is run again after the restart, "
                    "is gone: %s; files a source has taken must stay until their batch is "
                    "committed",
                    s->table->name, path, strerror(errno));
      break;
    }
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (st->is_dir && !seen_before(st, name)) rc = remember(st, name);
    if (!rc) rc = queue_file(st, path, name, &sb);
    st->listed = true;
  }
  st->cap_left = st->replay_cap;
  for (int64_t i = 0; i < st->replay_n; i++) free(st->replay[i]);
  free(st->replay);
  st->replay = NULL;
  st->replay_n = -1;
  return rc;
}

/* Each file to the split its name hashes to (see the header). */
static int fs_source_split(dp_source *s, int index, int count, bool replayed, const char **why) {
  fs_source *st = s->state;
  (void)replayed;
  if (st->max_files > 0 && !st->bounded) {
    *why = "'source.max-files-per-trigger' counts files across the splits of a filesystem "
           "table, which they do not share";
    return DIPPER_UNSUPPORTED;
  }
  st->split = index;
  st->nsplits = count;
  return DIPPER_OK;
}

const dp_source_class dp_source_filesystem = {
    .name = "filesystem",
    .open = fs_source_open,
    .plan_batch = fs_source_plan,
    .read = fs_source_read,
    .commit = fs_source_commit,
    .close = fs_source_close,
    .save_plan = fs_save_plan,
    .save_position = fs_save_position,
    .restore_position = fs_restore_position,
    .replay_plan = fs_replay_plan,
    .split = fs_source_split,
    .split_units = true,
};

/* ---- sink ---- */

typedef struct fs_sink {
  char *dir;
  bool csv, header;
  dp_csv_options csv_opts;
  const char *ext;
  char tag[9];             /* with a checkpoint: the query's mark in part names, else "" */
  int64_t batch;           /* the batch being written, -1: none */
  FILE *tmp;
  char *tmp_path;
  dp_buf buf;              /* encoded rows not yet written out */
  int64_t rows;
  dp_fs_parts *parts;      /* PARTITIONED BY: the writer of partition folders, else NULL */
} fs_sink;

#define FLUSH_BYTES (1u << 20)

static void fs_sink_close(dp_sink *k);

/* The query's mark: a hash of its checkpoint folder, the same on every
** restart and another for another query writing to the same directory. */
static void query_tag(const char *checkpoint, char out[9]) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (const char *p = checkpoint; *p; p++) h = (h ^ (uint8_t)*p) * 16777619u;
  snprintf(out, 9, "%08x", h);
}

/* A temporary file of ours that a killed run left: ".part-<b>-<tag>.<ext>.inprogress". */
static bool our_leftover(const char *name, const char *tag) {
  size_t n = strlen(name), suffix = strlen(".inprogress");
  if (strncmp(name, ".part-", 6) != 0 || n < suffix || strcmp(name + n - suffix, ".inprogress") != 0)
    return false;
  const char *dash = strchr(name + 6, '-');
  return dash && strncmp(dash + 1, tag, 8) == 0 && (dash[9] == '.' || dash[9] == '-');
}

static int fs_sink_open_state(dp_sink *k, fs_sink *st) {
  const dp_table_def *t = k->table;
  const char *path = dp_table_option(t, "path", NULL);
  const char *name = t ? t->name : "?";
  if (!path)
    return dp_error(k->diags, DIPPER_OPTION, t ? t->with_span : nowhere(),
                    "table `%s` needs 'path' = '/output/dir'", name);
  const char *fmt = t && t->format ? t->format : "json";
  if (strcasecmp(fmt, "json") != 0 && strcasecmp(fmt, "csv") != 0)
    return dp_error(k->diags, DIPPER_UNSUPPORTED, t ? t->with_span : nowhere(),
                    "table `%s`: the embedded engine writes formats 'json' and 'csv', not '%s'; "
                    "write 'format' = 'json' or 'csv'",
                    name, fmt);
  st->csv = strcasecmp(fmt, "csv") == 0;
  st->ext = st->csv ? "csv" : "json";
  st->batch = -1;
  if (st->csv) {
    dp_record_decoder probe; /* the CSV options, read the way the source reads them */
    int rc = dp_record_decoder_open(&probe, t, k->schema, "csv", k->diags);
    if (rc) return rc;
    st->csv_opts = probe.csv_opts;
    st->header = probe.header;
    dp_record_decoder_close(&probe);
  }
  if (!(st->dir = strdup(path))) return DIPPER_NOMEM;
  if (dp_make_dirs(path) != 0)
    return dp_error(k->diags, DIPPER_IO, t ? t->with_span : nowhere(),
                    "table `%s`: cannot make the output directory '%s': %s", name, path,
                    strerror(errno));
  if (k->checkpoint) query_tag(k->checkpoint, st->tag);
  if (t && t->npartition > 0) {
    dp_fs_format how = {st->csv, st->header, st->csv_opts, st->ext};
    int rc = dp_fs_parts_open(k, path, st->tag, &how, &st->parts);
    if (rc) return rc;
  }
  if (!k->checkpoint) return DIPPER_OK;
  DIR *d = opendir(path);
  if (!d)
    return dp_error(k->diags, DIPPER_IO, nowhere(), "table `%s`: cannot list '%s': %s", name, path,
                    strerror(errno));
  /* The checkpoint folder's lock makes this run the query's only writer:
  ** what its temporary names hold is a killed run's. */
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!our_leftover(de->d_name, st->tag)) continue;
    size_t n = strlen(path) + strlen(de->d_name) + 2;
    char *full = malloc(n);
    if (!full) break;
    snprintf(full, n, "%s/%s", path, de->d_name);
    unlink(full);
    free(full);
  }
  closedir(d);
  return DIPPER_OK;
}

static int fs_sink_open(dp_sink *k) {
  fs_sink *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  k->state = st;
  int rc = fs_sink_open_state(k, st);
  if (rc) fs_sink_close(k); /* the caller does not close a sink that failed to open */
  return rc;
}

static int flush_buf(dp_sink *k, fs_sink *st) {
  if (st->buf.oom) return DIPPER_NOMEM;
  if (st->buf.len && fwrite(st->buf.data, 1, st->buf.len, st->tmp) != st->buf.len)
    return dp_error(k->diags, DIPPER_IO, nowhere(), "table `%s`: cannot write '%s': %s",
                    k->table ? k->table->name : "?", st->tmp_path, strerror(errno));
  st->buf.len = 0;
  return DIPPER_OK;
}

static int fs_sink_write(dp_sink *k, int64_t batch_id, const dp_batch *b) {
  fs_sink *st = k->state;
  int rc;
  if (st->parts) return dp_fs_parts_write(k, st->parts, batch_id, b);
  if (!st->tmp) {
    size_t n = strlen(st->dir) + 96;
    free(st->tmp_path);
    if (!(st->tmp_path = malloc(n))) return DIPPER_NOMEM;
    /* The query's tag, or the process and the sink, in the name: two sinks
    ** of a statement set may write to one directory. */
    if (st->tag[0] && k->nworkers > 1)
      snprintf(st->tmp_path, n, "%s/.part-%lld-%s-%03d.%s.inprogress", st->dir,
               (long long)batch_id, st->tag, k->worker, st->ext);
    else if (st->tag[0])
      snprintf(st->tmp_path, n, "%s/.part-%lld-%s.%s.inprogress", st->dir, (long long)batch_id,
               st->tag, st->ext);
    else
      snprintf(st->tmp_path, n, "%s/.part-%lld-%ld-%lx.%s.inprogress", st->dir,
               (long long)batch_id, (long)getpid(), (unsigned long)(uintptr_t)st, st->ext);
    st->tmp = fopen(st->tmp_path, "wb");
    if (!st->tmp)
      return dp_error(k->diags, DIPPER_IO, nowhere(), "table `%s`: cannot create '%s': %s",
                      k->table ? k->table->name : "?", st->tmp_path, strerror(errno));
    st->batch = batch_id;
    st->rows = 0;
    if (st->csv && st->header &&
        (rc = dp_csv_encode_header(k->schema, &st->csv_opts, &st->buf)) != DIPPER_OK)
      return rc;
  }
  for (int64_t r = 0; r < b->nrows; r++) {
    rc = st->csv ? dp_csv_encode_row(b, r, &st->csv_opts, &st->buf)
                 : dp_json_encode_row(b, r, &st->buf);
    if (rc) return rc;
    if (!st->csv) dp_buf_putc(&st->buf, '\n');
    if (st->buf.len >= FLUSH_BYTES && (rc = flush_buf(k, st)) != DIPPER_OK) return rc;
  }
  st->rows += b->nrows;
  return DIPPER_OK;
}

/* Put the finished temporary file in place.  With a checkpoint the name is
** the batch's own and a batch run again after a restart replaces its file
** with the same rows (rename is atomic: a reader sees one or the other);
** without one, batch ids start again at 0 on every run, so the file takes
** the first free part-<batch>-<n> — link() fails on a name that exists,
** with no window between a check and the rename for another writer. */
static int place_part(dp_sink *k, fs_sink *st) {
  size_t n = strlen(st->dir) + 64;
  char *final = malloc(n);
  if (!final) return DIPPER_NOMEM;
  int rc = DIPPER_OK, err = 0;
  if (st->tag[0]) {
    if (k->nworkers > 1)
      snprintf(final, n, "%s/part-%lld-%s-%03d.%s", st->dir, (long long)st->batch, st->tag,
               k->worker, st->ext);
    else
      snprintf(final, n, "%s/part-%lld-%s.%s", st->dir, (long long)st->batch, st->tag, st->ext);
    if (rename(st->tmp_path, final) != 0) err = errno;
  } else {
    for (int part = 0;; part++) {
      if (k->nworkers > 1)
        snprintf(final, n, "%s/part-%lld-%03d-%d.%s", st->dir, (long long)st->batch, k->worker,
                 part, st->ext);
      else
        snprintf(final, n, "%s/part-%lld-%d.%s", st->dir, (long long)st->batch, part, st->ext);
      if (link(st->tmp_path, final) == 0) break;
      if (errno != EEXIST) {
        err = errno;
        break;
      }
    }
    unlink(st->tmp_path);
  }
  if (err)
    rc = dp_error(k->diags, DIPPER_IO, nowhere(), "table `%s`: cannot rename '%s' to '%s': %s",
                  k->table ? k->table->name : "?", st->tmp_path, final, strerror(err));
  else if (st->tag[0]) {
    /* the rename is durable before the batch's commit record says so */
    if (dp_sync_dir(st->dir) != 0)
      rc = dp_error(k->diags, DIPPER_IO, nowhere(), "table `%s`: cannot sync '%s': %s",
                    k->table ? k->table->name : "?", st->dir, strerror(errno));
  }
  free(final);
  return rc;
}

static int fs_sink_commit(dp_sink *k, int64_t batch_id) {
  fs_sink *st = k->state;
  if (st->parts) return dp_fs_parts_commit(k, st->parts);
  if (!st->tmp) return DIPPER_OK; /* no rows: no file */
  (void)batch_id;
  int rc = flush_buf(k, st);
  bool bad = fflush(st->tmp) != 0;
  if (!bad && st->tag[0]) bad = fsync(fileno(st->tmp)) != 0;
  int err = errno;
  bad |= fclose(st->tmp) != 0;
  st->tmp = NULL;
  if (!rc && bad)
    rc = dp_error(k->diags, DIPPER_IO, nowhere(), "table `%s`: cannot write '%s': %s",
                  k->table ? k->table->name : "?", st->tmp_path, strerror(err ? err : errno));
  if (rc) {
    remove(st->tmp_path); /* a full disk leaves no half-written file behind */
    return rc;
  }
  return place_part(k, st);
}

static void fs_sink_close(dp_sink *k) {
  fs_sink *st = k->state;
  if (!st) return;
  if (st->tmp) {
    /* an uncommitted batch leaves nothing behind */
    fclose(st->tmp);
    remove(st->tmp_path);
  }
  free(st->tmp_path);
  dp_fs_parts_free(st->parts);
  dp_buf_free(&st->buf);
  free(st->dir);
  free(st);
  k->state = NULL;
}

/* Part files per worker, but one writer for partition folders. */
static bool fs_sink_per_worker(const dp_table_def *t) { return t && t->npartition == 0; }

const dp_sink_class dp_sink_filesystem = {
    .name = "filesystem",
    .open = fs_sink_open,
    .write = fs_sink_write,
    .commit = fs_sink_commit,
    .close = fs_sink_close,
    .per_worker = true,
    .per_worker_if = fs_sink_per_worker,
};
