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
#include "core/files.h"
#include "core/vector_codec.h"
#include "exec/rows.h"

struct dp_rocks {
  rocksdb_t *db;
  rocksdb_options_t *opts;
  rocksdb_block_based_table_options_t *table;
  rocksdb_cache_t *cache;
  rocksdb_writeoptions_t *wopts;
  rocksdb_readoptions_t *ropts;
  rocksdb_writebatch_t *batch;
  char *dir;
  dp_diags *diags;
  uint64_t seq;     /* the next entry's sequence number */
  bool seq_dirty;
  dp_buf key, val;  /* scratch */
};

/* The memory bounds (state_rocks.h). */
#define BLOCK_CACHE_BYTES (16u << 20)
#define WRITE_BUFFER_BYTES (4u << 20)

static const char seq_key[] = {0x00, 's', 'e', 'q'};

static dp_span no_span(void) { return (dp_span){0, 0, 0, 0}; }

static int fail(dp_rocks *db, char *err, const char *what) {
  int rc = dp_error(db->diags, DIPPER_IO, no_span(), "rocksdb state in '%s': %s: %s", db->dir,
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

int dp_rocks_open(const char *dir, const char *from, dp_diags *d, dp_rocks **out) {
  *out = NULL;
  dp_rocks *db = calloc(1, sizeof *db);
  if (!db || !(db->dir = strdup(dir))) {
    free(db);
    return DIPPER_NOMEM;
  }
  db->diags = d;
  int rc = dp_remove_tree(dir) == 0 && dp_make_dirs(dir) == 0 ? DIPPER_OK : DIPPER_IO;
  if (!rc && from) rc = copy_checkpoint(from, dir);
  if (rc) {
    rc = dp_error(d, rc, no_span(), "rocksdb state: cannot make '%s'%s%s: %s", dir,
                  from ? " from the checkpoint " : "", from ? from : "", strerror(errno));
    dp_rocks_close(db, false);
    return rc;
  }
  db->cache = rocksdb_cache_create_lru(BLOCK_CACHE_BYTES);
  db->table = rocksdb_block_based_options_create();
  rocksdb_block_based_options_set_block_cache(db->table, db->cache);
  rocksdb_block_based_options_set_cache_index_and_filter_blocks(db->table, 1);
  rocksdb_block_based_options_set_pin_l0_filter_and_index_blocks_in_cache(db->table, 1);
  /* a probe's key (space, hash) through a bloom filter: an SST without it
  ** is passed over unread; 16 KB blocks keep the index blocks small */
  rocksdb_block_based_options_set_filter_policy(db->table, rocksdb_filterpolicy_create_bloom(10));
  rocksdb_block_based_options_set_block_size(db->table, 16 << 10);
  db->opts = rocksdb_options_create();
  rocksdb_options_set_block_based_table_factory(db->opts, db->table);
  rocksdb_options_set_create_if_missing(db->opts, 1);
  rocksdb_options_set_write_buffer_size(db->opts, WRITE_BUFFER_BYTES);
  rocksdb_options_set_max_write_buffer_number(db->opts, 2);
  rocksdb_options_set_max_background_jobs(db->opts, 2);
  rocksdb_options_set_max_open_files(db->opts, 256);
  rocksdb_options_set_prefix_extractor(db->opts, rocksdb_slicetransform_create_fixed_prefix(9));
  /* no compression: probes read blocks at random, and decompressing them
  ** cost more than the disk saved (measured: 15% of a join's time in LZ4) */
  rocksdb_options_set_compression(db->opts, rocksdb_no_compression);
  rocksdb_options_set_keep_log_file_num(db->opts, 2);
  db->wopts = rocksdb_writeoptions_create();
  rocksdb_writeoptions_disable_WAL(db->wopts, 1);
  db->ropts = rocksdb_readoptions_create();
  db->batch = rocksdb_writebatch_create();
  char *err = NULL;
  db->db = rocksdb_open(db->opts, dir, &err);
  if (!db->db) {
    rc = fail(db, err, "cannot open it");
    dp_rocks_close(db, false);
    return rc;
  }
  size_t n = 0;
  char *v = rocksdb_get(db->db, db->ropts, seq_key, sizeof seq_key, &n, &err);
  if (err) {
    rc = fail(db, err, "cannot read it");
    dp_rocks_close(db, false);
    return rc;
  }
  if (v && n == 8) db->seq = get_be64((const uint8_t *)v);
  rocksdb_free(v);
  *out = db;
  return DIPPER_OK;
}

void dp_rocks_close(dp_rocks *db, bool remove_dir) {
  if (!db) return;
  if (db->db) rocksdb_close(db->db);
  if (db->batch) rocksdb_writebatch_destroy(db->batch);
  if (db->ropts) rocksdb_readoptions_destroy(db->ropts);
  if (db->wopts) rocksdb_writeoptions_destroy(db->wopts);
  if (db->opts) rocksdb_options_destroy(db->opts);
  if (db->table) rocksdb_block_based_options_destroy(db->table);
  if (db->cache) rocksdb_cache_destroy(db->cache);
  if (remove_dir && db->dir) dp_remove_tree(db->dir);
  dp_buf_free(&db->key);
  dp_buf_free(&db->val);
  free(db->dir);
  free(db);
}

int dp_rocks_commit(dp_rocks *db) {
  if (db->seq_dirty) {
    dp_buf b = DP_BUF_INIT;
    put_be64(&b, db->seq);
    if (b.oom) return DIPPER_NOMEM;
    rocksdb_writebatch_put(db->batch, seq_key, sizeof seq_key, (const char *)b.data, b.len);
    dp_buf_free(&b);
    db->seq_dirty = false;
  }
  if (rocksdb_writebatch_count(db->batch) == 0) return DIPPER_OK;
  char *err = NULL;
  rocksdb_write(db->db, db->wopts, db->batch, &err);
  rocksdb_writebatch_clear(db->batch);
  return err ? fail(db, err, "cannot write") : DIPPER_OK;
}

int dp_rocks_checkpoint(dp_rocks *db, const char *dir) {
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

/* ---- the keyed row store ---- */

void dp_rocks_refs_clear(dp_rocks_refs *r) {
  r->n = 0;
  r->keys.len = r->vals.len = 0;
  if (r->koff) r->koff[0] = r->voff[0] = 0;
}

void dp_rocks_refs_free(dp_rocks_refs *r) {
  dp_buf_free(&r->keys);
  dp_buf_free(&r->vals);
  free(r->koff);
  free(r->voff);
  memset(r, 0, sizeof *r);
}

static int refs_add(dp_rocks_refs *r, const char *k, size_t kn, const char *v, size_t vn) {
  if (r->n + 2 > r->cap) {
    int64_t cap = r->cap ? r->cap * 2 : 256;
    size_t *ko = realloc(r->koff, (size_t)cap * sizeof *ko);
    if (!ko) return DIPPER_NOMEM;
    r->koff = ko;
    size_t *vo = realloc(r->voff, (size_t)cap * sizeof *vo);
    if (!vo) return DIPPER_NOMEM;
    r->voff = vo;
    if (r->cap == 0) r->koff[0] = r->voff[0] = 0;
    r->cap = cap;
  }
  dp_buf_put(&r->keys, k, kn);
  dp_buf_put(&r->vals, v, vn);
  if (r->keys.oom || r->vals.oom) return DIPPER_NOMEM;
  r->n++;
  r->koff[r->n] = r->keys.len;
  r->voff[r->n] = r->vals.len;
  return DIPPER_OK;
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

int dp_rocks_rows_add(dp_rocks *db, int space, const dp_batch *b, const int *keys, int nkeys,
                      int time_col, const uint8_t *flags) {
  dp_buf *k = &db->key, *v = &db->val;
  const dp_vector *tv = time_col >= 0 ? b->cols[time_col] : NULL;
  for (int64_t r = 0; r < b->nrows; r++) {
    int64_t t = !tv ? 0 : dp_vector_is_null(tv, r) ? INT64_MIN : dp_vector_get_i64(tv, r);
    uint64_t seq = db->seq++;
    k->len = v->len = 0;
    dp_put_u8(k, (uint8_t)(0x10 | space));
    int rc = put_key_part(k, b, r, keys, nkeys);
    if (rc) return rc;
    size_t part = k->len - 1;
    put_be64(k, time_key(t));
    put_be64(k, seq);
    dp_put_u8(v, flags ? flags[r] : 0);
    if ((rc = dp_batch_encode(b, r, 1, v))) return rc;
    if (k->oom || v->oom) return DIPPER_NOMEM;
    rocksdb_writebatch_put(db->batch, (const char *)k->data, k->len, (const char *)v->data,
                           v->len);
    /* the time index: 0x20|space time seq -> the key part */
    size_t kn = k->len;
    dp_put_u8(k, (uint8_t)(0x20 | space));
    put_be64(k, time_key(t));
    put_be64(k, seq);
    if (k->oom) return DIPPER_NOMEM;
    rocksdb_writebatch_put(db->batch, (const char *)k->data + kn, k->len - kn,
                           (const char *)k->data + 1, part);
  }
  db->seq_dirty = b->nrows > 0 || db->seq_dirty;
  return DIPPER_OK;
}

/* The least key above every key that starts with p[0..n). */
static size_t successor(char *p, size_t n) {
  uint8_t *u = (uint8_t *)p;
  while (n > 0 && u[n - 1] == 0xff) n--;
  if (n > 0) u[n - 1]++;
  return n;
}

/* Iterate [lo, hi) (hi of length 0: to the end). */
/* prefix: all of [lo, hi) shares lo's first 9 bytes (the bloom filters
** apply); else a scan in total order. */
static rocksdb_iterator_t *scan(dp_rocks *db, rocksdb_readoptions_t **ro, const char *lo,
                                size_t lon, const char *hi, size_t hin, bool prefix) {
  *ro = rocksdb_readoptions_create();
  if (prefix) rocksdb_readoptions_set_prefix_same_as_start(*ro, 1);
  else rocksdb_readoptions_set_total_order_seek(*ro, 1);
  if (hin) rocksdb_readoptions_set_iterate_upper_bound(*ro, hi, hin);
  rocksdb_iterator_t *it = rocksdb_create_iterator(db->db, *ro);
  rocksdb_iter_seek(it, lo, lon);
  return it;
}

static int end_scan(dp_rocks *db, rocksdb_iterator_t *it, rocksdb_readoptions_t *ro, int rc) {
  char *err = NULL;
  rocksdb_iter_get_error(it, &err);
  rocksdb_iter_destroy(it);
  rocksdb_readoptions_destroy(ro);
  if (err) return fail(db, err, "cannot read");
  return rc;
}

int dp_rocks_rows_find(dp_rocks *db, int space, const dp_batch *probe, int64_t row,
                       const int *pkeys, int nkeys, dp_batch *into, dp_rocks_refs *refs) {
  dp_buf *k = &db->key;
  k->len = 0;
  dp_put_u8(k, (uint8_t)(0x10 | space));
  int rc = nkeys ? put_key_part(k, probe, row, pkeys, nkeys) : DIPPER_OK;
  if (rc) return rc;
  dp_buf *hi = &db->val; /* the upper bound: past every key with the prefix */
  hi->len = 0;
  dp_buf_put(hi, k->data, k->len);
  if (k->oom || hi->oom) return DIPPER_NOMEM;
  size_t hin = successor(hi->data, hi->len);
  rocksdb_readoptions_t *ro;
  rocksdb_iterator_t *it = scan(db, &ro, k->data, k->len, hi->data, hin, k->len >= 9);
  for (; !rc && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
    size_t kn, vn;
    const char *key = rocksdb_iter_key(it, &kn), *val = rocksdb_iter_value(it, &vn);
    if (vn < 1) {
      rc = DIPPER_CORRUPT;
      break;
    }
    dp_rd in;
    dp_rd_init(&in, val + 1, vn - 1);
    rc = dp_batch_decode(&in, into);
    if (!rc) rc = refs_add(refs, key, kn, val, vn);
  }
  return end_scan(db, it, ro, rc);
}

bool dp_rocks_rows_matched(const dp_rocks_refs *refs, int64_t i) {
  return refs->vals.data[refs->voff[i]] != 0;
}

int dp_rocks_rows_mark(dp_rocks *db, dp_rocks_refs *refs, int64_t i) {
  char *v = refs->vals.data + refs->voff[i];
  if (*v) return DIPPER_OK;
  *v = 1;
  rocksdb_writebatch_put(db->batch, refs->keys.data + refs->koff[i],
                         refs->koff[i + 1] - refs->koff[i], v,
                         refs->voff[i + 1] - refs->voff[i]);
  return DIPPER_OK;
}

int dp_rocks_rows_expire(dp_rocks *db, int space, int64_t upto, dp_batch *unmatched,
                         int64_t *removed) {
  *removed = 0;
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
  rocksdb_readoptions_t *ro;
  rocksdb_iterator_t *it = scan(db, &ro, lo, sizeof lo, hi, hin, false);
  dp_buf *k = &db->key;
  int rc = DIPPER_OK;
  bool any = false;
  for (; !rc && rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
    size_t kn, vn;
    const char *ik = rocksdb_iter_key(it, &kn), *part = rocksdb_iter_value(it, &vn);
    if (kn != 17) {
      rc = DIPPER_CORRUPT;
      break;
    }
    /* the row's key: 0x10|space, the key part, time, seq */
    k->len = 0;
    dp_put_u8(k, (uint8_t)(0x10 | space));
    dp_buf_put(k, part, vn);
    dp_buf_put(k, ik + 1, 16);
    if (k->oom) {
      rc = DIPPER_NOMEM;
      break;
    }
    if (unmatched) {
      char *err = NULL;
      size_t n = 0;
      char *v = rocksdb_get(db->db, db->ropts, (const char *)k->data, k->len, &n, &err);
      if (err) {
        rc = fail(db, err, "cannot read");
        break;
      }
      if (!v || n < 1) rc = DIPPER_CORRUPT;
      if (!rc && v[0] == 0) {
        dp_rd in;
        dp_rd_init(&in, v + 1, n - 1);
        rc = dp_batch_decode(&in, unmatched);
      }
      rocksdb_free(v);
    }
    rocksdb_writebatch_delete(db->batch, (const char *)k->data, k->len);
    any = true;
    ++*removed;
  }
  rc = end_scan(db, it, ro, rc);
  /* the index entries go in one range tombstone */
  if (!rc && any)
    rocksdb_writebatch_delete_range(db->batch, (const char *)lo, sizeof lo, (const char *)hi, hin);
  if (rc == DIPPER_CORRUPT)
    return dp_error(db->diags, rc, no_span(), "rocksdb state in '%s': an entry does not read back",
                    db->dir);
  return rc ? rc : dp_rocks_commit(db);
}
