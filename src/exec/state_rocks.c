/*
** state_rocks.c — operator state in RocksDB through its C API (state_rocks.h
** says what is kept where and why).
*/
#include "exec/state_rocks.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "core/bytes.h"
#include "core/grow.h"
#include "core/files.h"
#include "core/vector_codec.h"
#include "exec/rows.h"

#define NSPACES 16

/* A key part to sort (key_parts): bytes in db->kp, and the row it is of. */
typedef struct part {
  uint64_t h; /* the hash: the first 8 bytes of p, as a number */
  const uint8_t *p;
  size_t off;
  uint32_t n;
  int64_t row;
  uint64_t t; /* dp_rocks_rows_expire: the chunk's greatest time (time_key) */
} part;

struct dp_rocks {
  /* the folders (state_rocks.h) */
  char *root;       /* <query folder>/rocksdb/<name>, or a temporary folder */
  char *live;       /* root/live: the open instance */
  bool temp;        /* root is removed at the end */
  bool made_live;   /* `live` is this instance's to remove at the end: it made it, or it
                       restored a checkpoint (so it holds the query folder's lock, and a
                       `live` there is a killed run's, stale) */
  int64_t from;     /* the checkpoint the next open starts from, or -1 */
  int64_t saved;    /* the checkpoint the state equals (nothing changed since), or -1 */
  dp_diags *diags;
  /* the instance: NULL until dp_rocks_begin or dp_rocks_save opens it */
  rocksdb_t *db;
  rocksdb_options_t *opts;
  rocksdb_block_based_table_options_t *table;
  rocksdb_cache_t *cache;
  rocksdb_writeoptions_t *wopts;
  rocksdb_readoptions_t *ropts;  /* point reads */
  rocksdb_readoptions_t *pref;   /* probes: prefix seeks */
  rocksdb_writebatch_t *batch;   /* chunks, in key order where it can be */
  rocksdb_writebatch_t *ibatch;  /* the time index and the meta entry */
  int64_t rows_time; /* the rows' time without a time column (dp_rocks_rows_time) */
  uint64_t seq;     /* the next chunk's number */
  bool seq_dirty;
  /* the row store */
  struct {
    const dp_schema *schema;
    dp_batch *rows, *kept; /* scratch: a chunk's rows, the ones it keeps */
  } space[NSPACES];
  dp_buf key, val, ck, kp; /* scratch: an entry's key and value, a chunk's key, key parts */
  part *parts, *parts2;
  int64_t parts_cap;
  int64_t *sel, *sel2;      /* row selections */
  int64_t *times, *times2;
  uint8_t *flags, *flags2;
  int64_t sel_cap;
};

/* The memory bounds (state_rocks.h). */
#define BLOCK_CACHE_BYTES (32u << 20)
#define WRITE_BUFFER_BYTES (16u << 20)

static const char seq_key[] = {0x00, 's', 'e', 'q'};

static dp_span no_span(void) { return (dp_span){0, 0, 0, 0}; }

static int fail(dp_rocks *db, char *err, const char *what) {
  int rc = dp_error(db->diags, DIPPER_IO, no_span(), "rocksdb state in '%s': %s: %s", db->root,
                    what, err ? err : "failed");
  rocksdb_free(err);
  return rc;
}

static void put_be64(dp_buf *b, uint64_t v) {
  uint8_t x[8];
  for (int i = 0; i < 8; i++) x[i] = (uint8_t)(v >> (56 - 8 * i));
  dp_buf_put(b, x, 8);
}
static uint64_t get_be64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}
static void put_be32(dp_buf *b, uint32_t v) {
  uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  dp_buf_put(b, x, 4);
}
static uint32_t get_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
/* Event time in key order: the sign bit flipped. */
static uint64_t time_key(int64_t t) { return (uint64_t)t ^ (UINT64_C(1) << 63); }

/* ---- folders ---- */

static int copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY), out = -1, rc = DIPPER_IO;
  if (in >= 0) out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out >= 0) {
    char buf[1 << 16];
    ssize_t n;
    rc = DIPPER_OK;
    while ((n = read(in, buf, sizeof buf)) > 0)
      if (write(out, buf, (size_t)n) != n) {
        rc = DIPPER_IO;
        break;
      }
    if (n < 0) rc = DIPPER_IO;
    if (close(out) != 0) rc = DIPPER_IO;
  }
  if (in >= 0) close(in);
  return rc;
}

/* A checkpoint's copy: SST files never change once written, so they are
** hard-linked; the MANIFEST, CURRENT, OPTIONS and logs are appended to by
** the instance that opens them, so they are copied. */
static int copy_checkpoint(const char *from, const char *to) {
  DIR *d = opendir(from);
  if (!d) return DIPPER_IO;
  int rc = DIPPER_OK;
  struct dirent *e;
  dp_buf a = DP_BUF_INIT, b = DP_BUF_INIT;
  while (!rc && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    a.len = b.len = 0;
    dp_buf_printf(&a, "%s/%s", from, e->d_name);
    dp_buf_printf(&b, "%s/%s", to, e->d_name);
    if (a.oom || b.oom) {
      rc = DIPPER_NOMEM;
      break;
    }
    size_t n = strlen(e->d_name);
    bool sst = n > 4 && !strcmp(e->d_name + n - 4, ".sst");
    if (!sst || link(a.data, b.data) != 0) rc = copy_file(a.data, b.data);
  }
  closedir(d);
  dp_buf_free(&a);
  dp_buf_free(&b);
  return rc;
}

/* ---- the instance ---- */

static void instance_close(dp_rocks *db) {
  if (db->db) rocksdb_close(db->db);
  if (db->batch) rocksdb_writebatch_destroy(db->batch);
  if (db->ibatch) rocksdb_writebatch_destroy(db->ibatch);
  if (db->pref) rocksdb_readoptions_destroy(db->pref);
  if (db->ropts) rocksdb_readoptions_destroy(db->ropts);
  if (db->wopts) rocksdb_writeoptions_destroy(db->wopts);
  if (db->opts) rocksdb_options_destroy(db->opts);
  if (db->table) rocksdb_block_based_options_destroy(db->table);
  if (db->cache) rocksdb_cache_destroy(db->cache);
  db->db = NULL;
  db->batch = db->ibatch = NULL;
  db->pref = db->ropts = NULL;
  db->wopts = NULL;
  db->opts = NULL;
  db->table = NULL;
  db->cache = NULL;
  db->seq = 0;
  db->seq_dirty = false;
}

static void set_options(dp_rocks *db) {
  db->cache = rocksdb_cache_create_lru(BLOCK_CACHE_BYTES);
  db->table = rocksdb_block_based_options_create();
  rocksdb_block_based_options_set_block_cache(db->table, db->cache);
  rocksdb_block_based_options_set_cache_index_and_filter_blocks(db->table, 1);
  rocksdb_block_based_options_set_pin_l0_filter_and_index_blocks_in_cache(db->table, 1);
  /* a probe's prefix (space, hash) through a bloom filter: an SST without
  ** it is passed over unread; every read is a prefix seek, so no filter
  ** of whole keys; 16 KB blocks keep the index blocks small */
  rocksdb_block_based_options_set_filter_policy(db->table, rocksdb_filterpolicy_create_bloom(10));
  rocksdb_block_based_options_set_whole_key_filtering(db->table, 0);
  rocksdb_block_based_options_set_block_size(db->table, 16 << 10);
  db->opts = rocksdb_options_create();
  rocksdb_options_set_block_based_table_factory(db->opts, db->table);
  rocksdb_options_set_create_if_missing(db->opts, 1);
  rocksdb_options_set_write_buffer_size(db->opts, WRITE_BUFFER_BYTES);
  rocksdb_options_set_max_write_buffer_number(db->opts, 2);
  rocksdb_options_set_max_background_jobs(db->opts, 2);
  rocksdb_options_set_max_open_files(db->opts, 256);
  rocksdb_options_set_prefix_extractor(db->opts, rocksdb_slicetransform_create_fixed_prefix(9));
  rocksdb_options_set_memtable_prefix_bloom_size_ratio(db->opts, 0.1);
  /* no compression: probes read blocks at random, and decompressing them
  ** cost more than the disk saved (measured: 15% of a join's time in LZ4) */
  rocksdb_options_set_compression(db->opts, rocksdb_no_compression);
  rocksdb_options_set_keep_log_file_num(db->opts, 2);
  db->wopts = rocksdb_writeoptions_create();
  rocksdb_writeoptions_disable_WAL(db->wopts, 1);
  db->ropts = rocksdb_readoptions_create();
  db->pref = rocksdb_readoptions_create();
  rocksdb_readoptions_set_prefix_same_as_start(db->pref, 1);
  db->batch = rocksdb_writebatch_create();
  db->ibatch = rocksdb_writebatch_create();
}

/* Open the live copy: empty, or a copy of checkpoint db->from. */
static int instance_open(dp_rocks *db) {
  dp_buf from = DP_BUF_INIT;
  if (db->from >= 0) dp_buf_printf(&from, "%s/%lld", db->root, (long long)db->from);
  if (from.oom) return DIPPER_NOMEM;
  db->made_live = true;
  int rc = dp_remove_tree(db->live) == 0 && dp_make_dirs(db->live) == 0 ? DIPPER_OK : DIPPER_IO;
  if (!rc && db->from >= 0) rc = copy_checkpoint(from.data, db->live);
  if (rc) {
    rc = dp_error(db->diags, rc, no_span(), "rocksdb state: cannot make '%s'%s%s: %s", db->live,
                  db->from >= 0 ? " from the checkpoint " : "", db->from >= 0 ? from.data : "",
                  strerror(errno));
    dp_buf_free(&from);
    return rc;
  }
  dp_buf_free(&from);
  set_options(db);
  char *err = NULL;
  db->db = rocksdb_open(db->opts, db->live, &err);
  if (!db->db) {
    rc = fail(db, err, "cannot open it");
    instance_close(db);
    return rc;
  }
  size_t n = 0;
  char *v = rocksdb_get(db->db, db->ropts, seq_key, sizeof seq_key, &n, &err);
  if (err) {
    rc = fail(db, err, "cannot read it");
    instance_close(db);
    return rc;
  }
  if (v && n == 8) db->seq = get_be64((const uint8_t *)v);
  rocksdb_free(v);
  return DIPPER_OK;
}

int dp_rocks_new(const char *query_dir, const char *name, dp_diags *d, dp_rocks **out) {
  *out = NULL;
  dp_rocks *db = calloc(1, sizeof *db);
  if (!db) return DIPPER_NOMEM;
  db->diags = d;
  db->from = db->saved = -1;
  dp_buf root = DP_BUF_INIT, live = DP_BUF_INIT;
  if (query_dir) {
    dp_buf_printf(&root, "%s/rocksdb/%s", query_dir, name);
  } else {
    const char *tmp = getenv("TMPDIR");
    dp_buf_printf(&root, "%s/dipper-rocksdb-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!root.oom && !mkdtemp(root.data)) {
      int rc = dp_error(d, DIPPER_IO, no_span(),
                        "cannot make a temporary folder for rocksdb state ('%s'): %s", root.data,
                        strerror(errno));
      dp_buf_free(&root);
      free(db);
      return rc;
    }
    db->temp = true;
  }
  dp_buf_printf(&live, "%s/live", root.data ? root.data : "");
  if (root.oom || live.oom) {
    dp_buf_free(&root);
    dp_buf_free(&live);
    free(db);
    return DIPPER_NOMEM;
  }
  db->root = root.data;
  db->live = live.data;
  *out = db;
  return DIPPER_OK;
}

void dp_rocks_free(dp_rocks *db) {
  if (!db) return;
  instance_close(db);
  /* only a folder of its own (made or restored into): a run refused before
  ** its first batch (the checkpoint folder in use) must leave the running
  ** one's alone */
  if (db->made_live) dp_remove_tree(db->live);
  if (db->temp && db->root) dp_remove_tree(db->root);
  for (int s = 0; s < NSPACES; s++) {
    dp_batch_free(db->space[s].rows);
    dp_batch_free(db->space[s].kept);
  }
  dp_buf_free(&db->key);
  dp_buf_free(&db->val);
  dp_buf_free(&db->ck);
  dp_buf_free(&db->kp);
  free(db->parts);
  free(db->parts2);
  free(db->sel);
  free(db->sel2);
  free(db->times);
  free(db->times2);
  free(db->flags);
  free(db->flags2);
  free(db->root);
  free(db->live);
  free(db);
}

void dp_rocks_space(dp_rocks *db, int space, const dp_schema *schema) {
  db->space[space].schema = schema;
}

int dp_rocks_begin(dp_rocks *db) {
  int rc = db->db ? DIPPER_OK : instance_open(db);
  if (!rc) db->saved = -1;
  return rc;
}

int dp_rocks_commit(dp_rocks *db) {
  if (db->seq_dirty) {
    dp_buf b = DP_BUF_INIT;
    put_be64(&b, db->seq);
    if (b.oom) return DIPPER_NOMEM;
    rocksdb_writebatch_put(db->ibatch, seq_key, sizeof seq_key, (const char *)b.data, b.len);
    dp_buf_free(&b);
    db->seq_dirty = false;
  }
  /* two writes: a memtable takes keys in order much faster than keys
  ** that alternate between two places (its insert starts from the last) */
  char *err = NULL;
  if (rocksdb_writebatch_count(db->batch) > 0) rocksdb_write(db->db, db->wopts, db->batch, &err);
  if (!err && rocksdb_writebatch_count(db->ibatch) > 0)
    rocksdb_write(db->db, db->wopts, db->ibatch, &err);
  rocksdb_writebatch_clear(db->batch);
  rocksdb_writebatch_clear(db->ibatch);
  return err ? fail(db, err, "cannot write") : DIPPER_OK;
}

/* Commit, flush the memtables and write a RocksDB checkpoint into `dir`
** (replaced when it exists: a batch that runs again after a restart
** writes its checkpoint again). */
static int checkpoint(dp_rocks *db, const char *dir) {
  int rc = dp_rocks_commit(db);
  if (rc) return rc;
  char *err = NULL;
  rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
  rocksdb_flushoptions_set_wait(fo, 1);
  rocksdb_flush(db->db, fo, &err);
  rocksdb_flushoptions_destroy(fo);
  if (err) return fail(db, err, "cannot flush");
  if (dp_remove_tree(dir) != 0)
    return dp_error(db->diags, DIPPER_IO, no_span(), "rocksdb state: cannot replace '%s': %s",
                    dir, strerror(errno));
  rocksdb_checkpoint_t *ck = rocksdb_checkpoint_object_create(db->db, &err);
  if (err) return fail(db, err, "cannot make a checkpoint");
  rocksdb_checkpoint_create(ck, dir, 0, &err); /* 0: always flush first */
  rocksdb_checkpoint_object_destroy(ck);
  if (err) return fail(db, err, "cannot make a checkpoint");
  return DIPPER_OK;
}

int dp_rocks_save(dp_rocks *db, int64_t batch_id, int64_t *ck) {
  if (db->saved < 0) {
    int rc = db->db ? DIPPER_OK : instance_open(db);
    dp_buf dir = DP_BUF_INIT;
    dp_buf_printf(&dir, "%s/%lld", db->root, (long long)batch_id);
    if (!rc) rc = dir.oom ? DIPPER_NOMEM : checkpoint(db, dir.data);
    dp_buf_free(&dir);
    if (rc) return rc;
    db->saved = batch_id;
  }
  *ck = db->saved;
  return DIPPER_OK;
}

int dp_rocks_restore(dp_rocks *db, int64_t ck) {
  dp_buf dir = DP_BUF_INIT;
  dp_buf_printf(&dir, "%s/%lld/CURRENT", db->root, (long long)ck);
  struct stat sb;
  bool there = !dir.oom && stat(dir.data, &sb) == 0;
  int rc = dir.oom ? DIPPER_NOMEM
           : there ? DIPPER_OK
                   : dp_error(db->diags, DIPPER_CORRUPT, no_span(),
                              "the rocksdb checkpoint '%s' is not there", dir.data);
  dp_buf_free(&dir);
  if (rc) return rc;
  instance_close(db);
  db->from = db->saved = ck;
  /* a restore runs under the checkpoint folder's lock: a `live` left by a
  ** killed run is stale, and goes at the end even if no batch opens it (a
  ** query that had ended before the kill runs none) */
  db->made_live = true;
  return DIPPER_OK;
}

/* ---- the keyed row store ---- */

void dp_rocks_refs_free(dp_rocks_refs *r) {
  free(r->first);
  free(r->count);
  dp_buf_free(&r->keys);
  dp_buf_free(&r->vals);
  free(r->koff);
  free(r->voff);
  free(r->dirty);
  free(r->row_chunk);
  free(r->row_pos);
  memset(r, 0, sizeof *r);
}

static bool grow(void **p, int64_t n, size_t size) {
  void *q = realloc(*p, (size_t)n * size);
  if (!q) return false;
  *p = q;
  return true;
}

/* Room for n rows in the selections and per-row scratch arrays. */
static int room(dp_rocks *db, int64_t n) {
  if (n <= db->sel_cap) return DIPPER_OK;
  int64_t cap = n < 2 * db->sel_cap ? 2 * db->sel_cap : n < 1024 ? 1024 : n;
  if (!grow((void **)&db->sel, cap, sizeof *db->sel) ||
      !grow((void **)&db->sel2, cap, sizeof *db->sel2) ||
      !grow((void **)&db->times, cap, sizeof *db->times) ||
      !grow((void **)&db->times2, cap, sizeof *db->times2) ||
      !grow((void **)&db->flags, cap, 1) || !grow((void **)&db->flags2, cap, 1) ||
      !grow((void **)&db->parts, cap, sizeof *db->parts) ||
      !grow((void **)&db->parts2, cap, sizeof *db->parts2))
    return DIPPER_NOMEM;
  db->sel_cap = db->parts_cap = cap;
  return DIPPER_OK;
}

/* The space's scratch batches. */
static int scratch(dp_rocks *db, int space) {
  if (db->space[space].rows) return DIPPER_OK;
  const dp_schema *s = db->space[space].schema;
  if (!s) return DIPPER_MISUSE;
  db->space[space].rows = dp_batch_new(s, 0);
  db->space[space].kept = dp_batch_new(s, 0);
  return db->space[space].rows && db->space[space].kept ? DIPPER_OK : DIPPER_NOMEM;
}

/* hash, klen, key bytes of row `row` over cols[0..nkeys) into b. */
static int put_key_part(dp_buf *b, const dp_batch *src, int64_t row, const int *cols, int nkeys) {
  const dp_vector *kc[64];
  for (int k = 0; k < nkeys; k++) kc[k] = src->cols[cols[k]];
  put_be64(b, nkeys ? dp_rows_hash(kc, nkeys, row) : 0);
  size_t at = b->len;
  put_be32(b, 0);
  for (int k = 0; k < nkeys; k++) {
    int rc = dp_vector_encode(kc[k], row, 1, b);
    if (rc) return rc;
  }
  if (b->oom) return DIPPER_NOMEM;
  uint32_t kl = (uint32_t)(b->len - at - 4);
  uint8_t *p = (uint8_t *)b->data + at;
  p[0] = (uint8_t)(kl >> 24), p[1] = (uint8_t)(kl >> 16), p[2] = (uint8_t)(kl >> 8);
  p[3] = (uint8_t)kl;
  return DIPPER_OK;
}

/* Sort a[0..n) by hash, stably (tmp: room for n): four passes of 16-bit
** digits.  Keys of equal hash stay in row order, so two keys that share
** a hash may interleave: each run of one key is then a chunk (or a probe)
** of its own, which is fine, only not as few as could be. */
static void sort_parts(part *a, part *tmp, int64_t n) {
  int64_t *count = n < 256 ? NULL : malloc(sizeof *count << 16);
  if (!count) { /* few, or no room for the counts: an insertion sort */
    for (int64_t i = 1; i < n; i++)
      for (int64_t j = i; j > 0 && a[j - 1].h > a[j].h; j--) {
        part t = a[j];
        a[j] = a[j - 1];
        a[j - 1] = t;
      }
    return;
  }
  for (int shift = 0; shift < 64; shift += 16) {
    memset(count, 0, sizeof *count << 16);
    for (int64_t i = 0; i < n; i++) count[(a[i].h >> shift) & 0xffff]++;
    int64_t at = 0;
    for (int d = 0; d < 1 << 16; d++) {
      int64_t c = count[d];
      count[d] = at;
      at += c;
    }
    for (int64_t i = 0; i < n; i++) tmp[count[(a[i].h >> shift) & 0xffff]++] = a[i];
    memcpy(a, tmp, (size_t)n * sizeof *a);
  }
  free(count);
}

static bool same_part(const part *x, const part *y) {
  return x->h == y->h && x->n == y->n && memcmp(x->p, y->p, x->n) == 0;
}

/* The key parts of rows [start, end) of b into db->parts[0..*m), sorted
** (equal keys together, in row order); skip_null leaves out the rows with
** a NULL key column. */
static int key_parts(dp_rocks *db, const dp_batch *b, int64_t start, int64_t end,
                     const int *keys, int nkeys, bool skip_null, int64_t *m) {
  *m = 0;
  int rc = room(db, end - start);
  if (rc) return rc;
  const dp_vector *kc[64];
  for (int k = 0; k < nkeys; k++) kc[k] = b->cols[keys[k]];
  dp_buf *kp = &db->kp;
  kp->len = 0;
  int64_t n = 0;
  for (int64_t r = start; r < end; r++) {
    if (skip_null && nkeys && dp_rows_any_null(kc, nkeys, r)) continue;
    size_t at = kp->len;
    if ((rc = put_key_part(kp, b, r, keys, nkeys))) return rc;
    db->parts[n++] = (part){0, NULL, at, (uint32_t)(kp->len - at), r, 0};
  }
  for (int64_t i = 0; i < n; i++) {
    db->parts[i].p = (const uint8_t *)kp->data + db->parts[i].off;
    db->parts[i].h = get_be64(db->parts[i].p);
  }
  if (n > 1) sort_parts(db->parts, db->parts2, n);
  *m = n;
  return DIPPER_OK;
}

/* One chunk: rows [a, e) of `rows`, their times and flags times[a..e),
** flags[a..e), under key part kp, with its index entry. */
static int put_chunk(dp_rocks *db, int space, const uint8_t *kp, size_t kpn, const dp_batch *rows,
                     int64_t a, int64_t e, const int64_t *times, const uint8_t *flags) {
  uint64_t seq = db->seq++;
  db->seq_dirty = true;
  dp_buf *k = &db->key, *v = &db->val;
  k->len = v->len = 0;
  dp_put_u8(k, (uint8_t)(0x10 | space));
  dp_buf_put(k, kp, kpn);
  put_be64(k, seq);
  uint32_t n = (uint32_t)(e - a);
  put_be32(v, n);
  dp_buf_put(v, flags + a, n);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t i = a; i < e; i++) {
    dp_buf_put(v, &times[i], 8);
    lo = times[i] < lo ? times[i] : lo;
    hi = times[i] > hi ? times[i] : hi;
  }
  int rc = dp_batch_encode(rows, a, n, v);
  if (rc) return rc;
  if (k->oom || v->oom) return DIPPER_NOMEM;
  rocksdb_writebatch_put(db->batch, (const char *)k->data, k->len, (const char *)v->data, v->len);
  k->len = v->len = 0;
  dp_put_u8(k, (uint8_t)(0x20 | space));
  put_be64(k, time_key(lo));
  put_be64(k, seq);
  put_be64(v, time_key(hi));
  put_be32(v, n);
  dp_buf_put(v, kp, kpn);
  if (k->oom || v->oom) return DIPPER_NOMEM;
  rocksdb_writebatch_put(db->ibatch, (const char *)k->data, k->len, (const char *)v->data, v->len);
  return DIPPER_OK;
}

void dp_rocks_rows_time(dp_rocks *db, int64_t t) { db->rows_time = t; }

int dp_rocks_rows_add(dp_rocks *db, int space, const dp_batch *b, const int *keys, int nkeys,
                      int time_col, const uint8_t *flags) {
  int64_t n = 0;
  int rc = scratch(db, space);
  if (!rc) rc = key_parts(db, b, 0, b->nrows, keys, nkeys, false, &n);
  if (rc || n == 0) return rc;
  const dp_vector *tv = time_col >= 0 ? b->cols[time_col] : NULL;
  for (int64_t i = 0; i < n; i++) {
    int64_t r = db->parts[i].row;
    db->sel[i] = r;
    db->times[i] = !tv ? db->rows_time : dp_vector_is_null(tv, r) ? INT64_MIN : dp_vector_get_i64(tv, r);
    db->flags[i] = flags ? flags[r] : 0;
  }
  dp_batch *rows = db->space[space].rows;
  dp_batch_clear(rows);
  if ((rc = dp_batch_take(rows, b, db->sel, 0, n))) return rc;
  for (int64_t a = 0; a < n && !rc;) {
    int64_t e = a + 1;
    while (e < n && same_part(&db->parts[e], &db->parts[a])) e++;
    rc = put_chunk(db, space, db->parts[a].p, db->parts[a].n, rows, a, e, db->times, db->flags);
    a = e;
  }
  return rc;
}

/* A chunk's value: n rows, their flags and times, then the rows. */
typedef struct chunk {
  uint32_t n;
  const uint8_t *flags, *times;
  dp_rd rows;
} chunk;

static bool chunk_read(const char *v, size_t vn, chunk *c) {
  if (vn < 4) return false;
  c->n = get_be32((const uint8_t *)v);
  size_t head = 4 + (size_t)c->n * 9;
  if (vn < head) return false;
  c->flags = (const uint8_t *)v + 4;
  c->times = c->flags + c->n;
  dp_rd_init(&c->rows, v + head, vn - head);
  return true;
}

static int64_t chunk_time(const chunk *c, int64_t i) {
  int64_t t;
  memcpy(&t, c->times + 8 * i, 8);
  return t;
}

static int corrupt(dp_rocks *db) {
  return dp_error(db->diags, DIPPER_CORRUPT, no_span(),
                  "rocksdb state in '%s': an entry does not read back", db->root);
}

/* Decode a fetched chunk into `into` and note where its rows are. */
static int fetch_chunk(dp_rocks_refs *r, const char *key, size_t kn, const char *val, size_t vn,
                       dp_batch *into) {
  chunk c;
  int64_t before = into->nrows;
  if (!chunk_read(val, vn, &c) || dp_batch_decode(&c.rows, into) != DIPPER_OK ||
      into->nrows - before != c.n)
    return DIPPER_CORRUPT;
  if (r->nchunks + 2 > r->chunk_cap) {
    int64_t cap = r->chunk_cap ? r->chunk_cap * 2 : 256;
    if (!grow((void **)&r->koff, cap, sizeof *r->koff) ||
        !grow((void **)&r->voff, cap, sizeof *r->voff) || !grow((void **)&r->dirty, cap, 1))
      return DIPPER_NOMEM;
    r->chunk_cap = cap;
  }
  int64_t need = r->nrows + c.n;
  if (need > r->row_cap) {
    int64_t cap = need < 2 * r->row_cap ? 2 * r->row_cap : need + 1024;
    if (!grow((void **)&r->row_chunk, cap, sizeof *r->row_chunk) ||
        !grow((void **)&r->row_pos, cap, sizeof *r->row_pos))
      return DIPPER_NOMEM;
    r->row_cap = cap;
  }
  dp_buf_put(&r->keys, key, kn);
  dp_buf_put(&r->vals, val, vn);
  if (r->keys.oom || r->vals.oom) return DIPPER_NOMEM;
  int64_t ci = r->nchunks++;
  r->dirty[ci] = 0;
  r->koff[ci + 1] = r->keys.len;
  r->voff[ci + 1] = r->vals.len;
  for (uint32_t i = 0; i < c.n; i++) {
    r->row_chunk[r->nrows] = ci;
    r->row_pos[r->nrows++] = i;
  }
  return DIPPER_OK;
}

static int end_scan(dp_rocks *db, rocksdb_iterator_t *it, int rc) {
  char *err = NULL;
  rocksdb_iter_get_error(it, &err);
  rocksdb_iter_destroy(it);
  if (err) return fail(db, err, "cannot read");
  return rc == DIPPER_CORRUPT ? corrupt(db) : rc;
}

/* The chunks of one key part (seek past tag + kp) into `into`. */
static int probe_key(dp_rocks *db, rocksdb_iterator_t *it, int space, const part *p,
                     dp_batch *into, dp_rocks_refs *refs) {
  dp_buf *k = &db->key;
  k->len = 0;
  dp_put_u8(k, (uint8_t)(0x10 | space));
  dp_buf_put(k, p->p, p->n);
  if (k->oom) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (rocksdb_iter_seek(it, k->data, k->len); !rc && rocksdb_iter_valid(it);
       rocksdb_iter_next(it)) {
    size_t kn, vn;
    const char *key = rocksdb_iter_key(it, &kn);
    if (kn != k->len + 8 || memcmp(key, k->data, k->len) != 0) break;
    const char *val = rocksdb_iter_value(it, &vn);
    rc = fetch_chunk(refs, key, kn, val, vn, into);
  }
  return rc;
}

int dp_rocks_rows_probe(dp_rocks *db, int space, const dp_batch *probe, int64_t start,
                        int64_t end, const int *pkeys, int nkeys, dp_batch *into,
                        dp_rocks_refs *refs) {
  int64_t n = end - start, m = 0;
  if (n > refs->probe_cap) {
    if (!grow((void **)&refs->first, n, sizeof *refs->first) ||
        !grow((void **)&refs->count, n, sizeof *refs->count))
      return DIPPER_NOMEM;
    refs->probe_cap = n;
  }
  if (n > 0) {
    memset(refs->first, 0, (size_t)n * sizeof *refs->first);
    memset(refs->count, 0, (size_t)n * sizeof *refs->count);
  }
  refs->nchunks = refs->nrows = 0;
  refs->keys.len = refs->vals.len = 0;
  if (!refs->koff) {
    if (!grow((void **)&refs->koff, 256, sizeof *refs->koff) ||
        !grow((void **)&refs->voff, 256, sizeof *refs->voff) ||
        !grow((void **)&refs->dirty, 256, 1))
      return DIPPER_NOMEM;
    refs->chunk_cap = 256;
  }
  refs->koff[0] = refs->voff[0] = 0;
  if (into->nrows != 0) return DIPPER_MISUSE; /* fetched row i is row i of into */
  int rc = key_parts(db, probe, start, end, pkeys, nkeys, true, &m);
  if (rc || m == 0) return rc;
  rocksdb_iterator_t *it = rocksdb_create_iterator(db->db, db->pref);
  for (int64_t a = 0; a < m && !rc;) {
    int64_t e = a + 1, f0 = into->nrows;
    while (e < m && same_part(&db->parts[e], &db->parts[a])) e++;
    rc = probe_key(db, it, space, &db->parts[a], into, refs);
    for (int64_t i = a; i < e; i++) {
      refs->first[db->parts[i].row - start] = f0;
      refs->count[db->parts[i].row - start] = into->nrows - f0;
    }
    a = e;
  }
  return end_scan(db, it, rc);
}

void dp_rocks_rows_mark(dp_rocks_refs *refs, int64_t i) {
  int64_t c = refs->row_chunk[i];
  uint8_t *flag = (uint8_t *)refs->vals.data + refs->voff[c] + 4 + refs->row_pos[i];
  if (*flag) return;
  *flag = 1;
  refs->dirty[c] = 1;
}

int dp_rocks_rows_write_marks(dp_rocks *db, dp_rocks_refs *refs) {
  for (int64_t c = 0; c < refs->nchunks; c++)
    if (refs->dirty[c]) {
      rocksdb_writebatch_put(db->batch, refs->keys.data + refs->koff[c],
                             refs->koff[c + 1] - refs->koff[c], refs->vals.data + refs->voff[c],
                             refs->voff[c + 1] - refs->voff[c]);
      refs->dirty[c] = 0;
    }
  return dp_rocks_commit(db);
}

/* One chunk that expires in part or whole, or whose unmatched rows are
** wanted: read, its expired rows removed (the unmatched ones to
** `unmatched`), the rest written back as a new chunk. */
static int expire_chunk(dp_rocks *db, int space, const char *ck, size_t ckn, const uint8_t *kp,
                        size_t kpn, int64_t upto, dp_batch *unmatched, int64_t *removed) {
  char *err = NULL;
  size_t vn = 0;
  char *v = rocksdb_get(db->db, db->ropts, ck, ckn, &vn, &err);
  if (err) return fail(db, err, "cannot read");
  dp_batch *rows = db->space[space].rows, *kept = db->space[space].kept;
  dp_batch_clear(rows);
  dp_batch_clear(kept);
  chunk c;
  int rc = !v || !chunk_read(v, vn, &c) ? DIPPER_CORRUPT : room(db, c.n);
  if (!rc) rc = dp_batch_decode(&c.rows, rows);
  if (!rc && rows->nrows != c.n) rc = DIPPER_CORRUPT;
  int64_t nkeep = 0, nun = 0;
  for (int64_t i = 0; !rc && i < c.n; i++) {
    int64_t t = chunk_time(&c, i);
    if (t > upto) {
      db->sel[nkeep] = i;
      db->times[nkeep] = t;
      db->flags[nkeep++] = c.flags[i];
    } else {
      ++*removed;
      if (!c.flags[i]) db->sel2[nun++] = i;
    }
  }
  rocksdb_free(v);
  if (!rc && unmatched && nun) rc = dp_batch_take(unmatched, rows, db->sel2, 0, nun);
  if (rc) return rc == DIPPER_CORRUPT ? corrupt(db) : rc;
  rocksdb_writebatch_delete(db->batch, ck, ckn);
  if (nkeep == 0) return DIPPER_OK;
  if ((rc = dp_batch_take(kept, rows, db->sel, 0, nkeep))) return rc;
  return put_chunk(db, space, kp, kpn, kept, 0, nkeep, db->times, db->flags);
}

/* The time index's entries [lo, hi): their chunks (key part and number)
** into db->kp and db->parts[0..*m), sorted by key; the entries go, in one
** range tombstone. */
static int expiring(dp_rocks *db, const char *lo, size_t lon, const char *hi, size_t hin,
                    int64_t *m) {
  *m = 0;
  rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
  rocksdb_readoptions_set_total_order_seek(ro, 1);
  rocksdb_readoptions_set_iterate_upper_bound(ro, hi, hin);
  rocksdb_iterator_t *it = rocksdb_create_iterator(db->db, ro);
  dp_buf *kp = &db->kp;
  kp->len = 0;
  int64_t n = 0;
  int rc = DIPPER_OK;
  for (rocksdb_iter_seek(it, lo, lon); !rc && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
    size_t kn, vn;
    const char *ik = rocksdb_iter_key(it, &kn), *iv = rocksdb_iter_value(it, &vn);
    if (kn != 17 || vn < 20) {
      rc = DIPPER_CORRUPT;
    } else if (!(rc = room(db, n + 1))) {
      size_t at = kp->len;
      dp_buf_put(kp, iv + 12, vn - 12);
      dp_buf_put(kp, ik + 9, 8);
      db->parts[n++] = (part){0, NULL, at, (uint32_t)(vn - 12 + 8),
                              get_be32((const uint8_t *)iv + 8), get_be64((const uint8_t *)iv)};
      if (kp->oom) rc = DIPPER_NOMEM;
    }
  }
  rc = end_scan(db, it, rc);
  rocksdb_readoptions_destroy(ro);
  if (rc || n == 0) return rc;
  for (int64_t i = 0; i < n; i++) {
    db->parts[i].p = (const uint8_t *)kp->data + db->parts[i].off;
    db->parts[i].h = get_be64(db->parts[i].p);
  }
  sort_parts(db->parts, db->parts2, n);
  rocksdb_writebatch_delete_range(db->ibatch, lo, lon, hi, hin);
  *m = n;
  return DIPPER_OK;
}

int dp_rocks_rows_expire(dp_rocks *db, int space, int64_t upto, dp_batch *unmatched,
                         int64_t *removed) {
  *removed = 0;
  int rc = scratch(db, space);
  if (rc) return rc;
  char lo[17], hi[17];
  size_t hin = 17;
  lo[0] = hi[0] = (char)(0x20 | space);
  memset(lo + 1, 0, 16);
  memset(hi + 9, 0, 8);
  if (upto == INT64_MAX) {
    hi[0]++;
    hin = 1;
  } else {
    uint64_t t = time_key(upto + 1);
    for (int i = 0; i < 8; i++) hi[1 + i] = (char)(uint8_t)(t >> (56 - 8 * i));
  }
  int64_t m = 0;
  if ((rc = expiring(db, lo, sizeof lo, hi, hin, &m))) return rc;
  /* the chunks in key order: a chunk whose rows all expire goes unread
  ** (unless its unmatched rows are wanted), the others are read */
  uint64_t bound = time_key(upto);
  dp_buf *ck = &db->ck;
  for (int64_t i = 0; i < m && !rc; i++) {
    const part *p = &db->parts[i];
    ck->len = 0;
    dp_put_u8(ck, (uint8_t)(0x10 | space));
    dp_buf_put(ck, p->p, p->n);
    if (ck->oom) return DIPPER_NOMEM;
    if (!unmatched && p->t <= bound) {
      rocksdb_writebatch_delete(db->batch, ck->data, ck->len);
      *removed += p->row;
    } else {
      rc = expire_chunk(db, space, ck->data, ck->len, p->p, p->n - 8, upto, unmatched, removed);
    }
  }
  return rc ? rc : dp_rocks_commit(db);
}

/* ---- keyed entries (state_rocks.h) ---- */

int dp_rocks_entry_key(dp_buf *out, int space, const dp_vector *const *cols, int ncols,
                       int64_t row) {
  dp_put_u8(out, (uint8_t)(0x10 | space));
  put_be64(out, ncols ? dp_rows_hash(cols, ncols, row) : 0);
  size_t at = out->len;
  put_be32(out, 0);
  for (int k = 0; k < ncols; k++) {
    int rc = dp_vector_encode(cols[k], row, 1, out);
    if (rc) return rc;
  }
  if (out->oom) return DIPPER_NOMEM;
  uint32_t kl = (uint32_t)(out->len - at - 4);
  uint8_t *p = (uint8_t *)out->data + at;
  p[0] = (uint8_t)(kl >> 24), p[1] = (uint8_t)(kl >> 16), p[2] = (uint8_t)(kl >> 8);
  p[3] = (uint8_t)kl;
  return DIPPER_OK;
}

int dp_rocks_entry_cols(const char *key, size_t kn, dp_vector *const *cols, int ncols) {
  if (kn < 13 || get_be32((const uint8_t *)key + 9) != kn - 13) return DIPPER_CORRUPT;
  dp_rd rd;
  dp_rd_init(&rd, key + 13, kn - 13);
  for (int k = 0; k < ncols; k++) {
    int64_t before = cols[k]->length;
    int rc = dp_vector_decode(&rd, cols[k]);
    if (rc) return rc == DIPPER_NOMEM ? rc : DIPPER_CORRUPT;
    if (cols[k]->length != before + 1) return DIPPER_CORRUPT;
  }
  return dp_rd_done(&rd) ? DIPPER_OK : DIPPER_CORRUPT;
}

int dp_rocks_get_many(dp_rocks *db, const dp_buf *keys, const size_t *offs, int64_t n,
                      int (*fn)(void *u, int64_t i, const char *v, size_t vn), void *u) {
  enum { SLICE = 512 };
  const char *kl[SLICE];
  size_t ks[SLICE], vs[SLICE];
  char *vl[SLICE], *errs[SLICE];
  int rc = DIPPER_OK;
  for (int64_t a = 0; a < n && !rc; a += SLICE) {
    int64_t m = n - a < SLICE ? n - a : SLICE;
    for (int64_t i = 0; i < m; i++) {
      kl[i] = keys->data + offs[a + i];
      ks[i] = offs[a + i + 1] - offs[a + i];
    }
    rocksdb_multi_get(db->db, db->ropts, (size_t)m, kl, ks, vl, vs, errs);
    char *err = NULL;
    for (int64_t i = 0; i < m; i++) {
      if (errs[i] && !err) err = errs[i];
      else if (errs[i]) rocksdb_free(errs[i]);
      if (!rc && !err && vl[i]) rc = fn(u, a + i, vl[i], vs[i]);
      if (vl[i]) rocksdb_free(vl[i]);
    }
    if (err) rc = fail(db, err, "cannot read");
  }
  return rc == DIPPER_CORRUPT ? corrupt(db) : rc;
}

void dp_rocks_put(dp_rocks *db, const char *key, size_t kn, const void *val, size_t vn) {
  rocksdb_writebatch_put(db->batch, key, kn, (const char *)val, vn);
}

void dp_rocks_delete(dp_rocks *db, const char *key, size_t kn) {
  rocksdb_writebatch_delete(db->batch, key, kn);
}

void dp_rocks_delete_range(dp_rocks *db, const char *lo, size_t lon, const char *hi, size_t hin) {
  rocksdb_writebatch_delete_range(db->batch, lo, lon, hi, hin);
}

int dp_rocks_index_put(dp_rocks *db, int space, int64_t t, const char *key, size_t kn) {
  dp_buf *k = &db->ck;
  k->len = 0;
  dp_put_u8(k, (uint8_t)(0x20 | space));
  put_be64(k, time_key(t));
  dp_buf_put(k, key, kn);
  if (k->oom) return DIPPER_NOMEM;
  rocksdb_writebatch_put(db->ibatch, k->data, k->len, "", 0);
  return DIPPER_OK;
}

void dp_rocks_index_delete(dp_rocks *db, int space, int64_t t, const char *key, size_t kn) {
  dp_buf *k = &db->ck;
  k->len = 0;
  dp_put_u8(k, (uint8_t)(0x20 | space));
  put_be64(k, time_key(t));
  dp_buf_put(k, key, kn);
  if (!k->oom) rocksdb_writebatch_delete(db->ibatch, k->data, k->len);
}

/* The bounds of space's time index up to `upto` (INT64_MAX: all). */
static size_t index_bounds(int space, int64_t upto, char *lo, char *hi) {
  lo[0] = hi[0] = (char)(0x20 | space);
  if (upto == INT64_MAX) {
    hi[0]++;
    return 1;
  }
  uint64_t t = time_key(upto + 1);
  for (int i = 0; i < 8; i++) hi[1 + i] = (char)(uint8_t)(t >> (56 - 8 * i));
  return 9;
}

int dp_rocks_index_due(dp_rocks *db, int space, int64_t upto, dp_buf *keys, size_t **offs,
                       int64_t *cap, int64_t *n) {
  return dp_rocks_index_due_at(db, space, upto, keys, offs, cap, n, NULL, NULL);
}

int dp_rocks_index_due_at(dp_rocks *db, int space, int64_t upto, dp_buf *keys, size_t **offs,
                          int64_t *cap, int64_t *n, int64_t **times, int64_t *tcap) {
  *n = 0;
  keys->len = 0;
  char lo[1] = {0}, hi[9];
  size_t hin = index_bounds(space, upto, lo, hi);
  rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
  rocksdb_readoptions_set_total_order_seek(ro, 1);
  rocksdb_readoptions_set_iterate_upper_bound(ro, hi, hin);
  rocksdb_iterator_t *it = rocksdb_create_iterator(db->db, ro);
  int rc = DIPPER_OK;
  int64_t m = 0;
  for (rocksdb_iter_seek(it, lo, 1); !rc && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
    size_t kn;
    const char *ik = rocksdb_iter_key(it, &kn);
    if (kn < 9 + 13) {
      rc = DIPPER_CORRUPT;
      break;
    }
    if (m + 2 > *cap) {
      int64_t c = *cap ? *cap * 2 : 1024;
      if (!grow((void **)offs, c, sizeof **offs)) {
        rc = DIPPER_NOMEM;
        break;
      }
      *cap = c;
    }
    if (times && m + 1 > *tcap) {
      int64_t c = *tcap ? *tcap * 2 : 1024;
      if (!grow((void **)times, c, sizeof **times)) {
        rc = DIPPER_NOMEM;
        break;
      }
      *tcap = c;
    }
    if (times) (*times)[m] = (int64_t)(get_be64((const uint8_t *)ik + 1) ^ (UINT64_C(1) << 63));
    (*offs)[m] = keys->len;
    dp_buf_put(keys, ik + 9, kn - 9);
    if (keys->oom) rc = DIPPER_NOMEM;
    (*offs)[++m] = keys->len;
  }
  rc = end_scan(db, it, rc);
  rocksdb_readoptions_destroy(ro);
  if (rc) return rc;
  if (m) rocksdb_writebatch_delete_range(db->ibatch, lo, 1, hi, hin);
  *n = m;
  return DIPPER_OK;
}

int dp_rocks_scan(dp_rocks *db, int space,
                  int (*fn)(void *u, const char *k, size_t kn, const char *v, size_t vn), void *u) {
  char lo[1] = {(char)(0x10 | space)}, hi[1] = {(char)((0x10 | space) + 1)};
  rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
  rocksdb_readoptions_set_total_order_seek(ro, 1);
  rocksdb_readoptions_set_iterate_upper_bound(ro, hi, 1);
  rocksdb_iterator_t *it = rocksdb_create_iterator(db->db, ro);
  int rc = DIPPER_OK;
  for (rocksdb_iter_seek(it, lo, 1); !rc && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
    size_t kn, vn;
    const char *k = rocksdb_iter_key(it, &kn), *v = rocksdb_iter_value(it, &vn);
    rc = fn(u, k, kn, v, vn);
  }
  rc = end_scan(db, it, rc);
  rocksdb_readoptions_destroy(ro);
  return rc;
}

int dp_rocks_scan_slice(dp_rocks *db, int space, const char *after, size_t an, int64_t max,
                        int (*fn)(void *u, const char *k, size_t kn, const char *v, size_t vn),
                        void *u, int64_t *n) {
  char lo[1] = {(char)(0x10 | space)}, hi[1] = {(char)((0x10 | space) + 1)};
  rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
  rocksdb_readoptions_set_total_order_seek(ro, 1);
  rocksdb_readoptions_set_iterate_upper_bound(ro, hi, 1);
  rocksdb_iterator_t *it = rocksdb_create_iterator(db->db, ro);
  int rc = DIPPER_OK;
  *n = 0;
  if (after) rocksdb_iter_seek(it, after, an);
  else rocksdb_iter_seek(it, lo, 1);
  if (after && rocksdb_iter_valid(it)) {
    size_t kn;
    const char *k = rocksdb_iter_key(it, &kn);
    if (kn == an && !memcmp(k, after, an)) rocksdb_iter_next(it);
  }
  for (; !rc && *n < max && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
    size_t kn, vn;
    const char *k = rocksdb_iter_key(it, &kn), *v = rocksdb_iter_value(it, &vn);
    rc = fn(u, k, kn, v, vn);
    ++*n;
  }
  rc = end_scan(db, it, rc);
  rocksdb_readoptions_destroy(ro);
  return rc;
}

typedef struct key_ref {
  const char *k;
  size_t n;
  int64_t i;
} key_ref;

static int cmp_key_ref(const void *a, const void *b) {
  const key_ref *x = a, *y = b;
  size_t n = x->n < y->n ? x->n : y->n;
  int c = memcmp(x->k, y->k, n);
  return c ? c : x->n < y->n ? -1 : x->n > y->n ? 1 : 0;
}

int dp_rocks_key_order(const dp_buf *keys, const size_t *offs, int64_t n, int64_t *order) {
  key_ref *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
  if (!r) return DIPPER_NOMEM;
  for (int64_t i = 0; i < n; i++) r[i] = (key_ref){keys->data + offs[i], offs[i + 1] - offs[i], i};
  if (n > 1) qsort(r, (size_t)n, sizeof *r, cmp_key_ref);
  for (int64_t i = 0; i < n; i++) order[i] = r[i].i;
  free(r);
  return DIPPER_OK;
}

int dp_rocks_entry_keys(dp_buf *out, size_t **offs, int64_t *offs_cap, const dp_vector *const *cols,
                        int ncols, const int64_t *ids, int64_t from, int64_t n) {
  if (n + 1 > *offs_cap && dp_grow(offs, offs_cap, n + 1, sizeof **offs, 1024)) return DIPPER_NOMEM;
  out->len = 0;
  (*offs)[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int rc = dp_rocks_entry_key(out, 0, cols, ncols, ids ? ids[i] : from + i);
    if (rc) return rc;
    (*offs)[i + 1] = out->len;
  }
  return DIPPER_OK;
}
