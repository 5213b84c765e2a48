/*
** rocks_topn_test.c — the update-mode Top-N over RocksDB ('state.backend' =
** 'rocksdb'; exec/topn_rocks.c).
**
** Each case runs one script of micro-batches in memory and over RocksDB and
** the two outputs must be the same row for row, in order (the Top-N's
** upserts keyed by partition and rank, from which the sink's changelog is
** made); rows enter the tops, push others out (to rank N+1 and beyond, or
** down a rank), tie, and come with NULL keys.  Then the RocksDB run passes
** the harness's checks (ops_state_harness.h's check_backends): resumed after
** every batch from its saved state (the blob names a RocksDB checkpoint and
** carries the write-back cache's dirty partitions), from chains of deltas,
** every truncated or damaged blob refused or restored.  Through the cache
** (32 MB: the partitions stay in it and go into the blob), without it (one
** byte: every batch writes its partitions and the next reads them back) and
** with one that overflows now and then (the partitions split between the
** cache and RocksDB: resumed after every batch).  Under a state TTL on the test's clock, partitions expire from
** the cache and from RocksDB (through its time index) and come back afresh.
*/
#include "exec/state_rocks.h"
#define OPS_STATE_BACKENDS
#include "ops_state_harness.h"

#define S_DDL \
  "SET 'dipper.output-mode' = 'update';\n" \
  "CREATE TABLE s (k INT, item STRING, x INT) WITH ('connector' = 'memory');\n"
#define R(k, item, x) "{\"k\": " #k ", \"item\": \"" item "\", \"x\": " #x "}\n"
/* Six batches over six partitions: ties (b, f at 9; w, x at 11), a NULL x,
** rows that push the top down a rank or out of it, a partition (5) seen
** once, another (6) new in the last batch. */
#define S_BATCHES                                                                     \
  {{R(1, "a", 5) R(1, "b", 9) R(1, "c", 1) R(2, "d", 4) R(3, "e", 7) R(1, "f", 9)},     \
   {R(1, "g", 7) R(2, "h", 6) R(2, "i", 4) R(3, "j", null) R(4, "k", 2)},              \
   {R(1, "l", 2) R(2, "m", 10) R(3, "n", 7) R(1, "o", 12)},                            \
   {R(5, "p", 1) R(4, "q", 2) R(4, "r", 3) R(1, "s", 9) R(2, "t", 4)},                 \
   {R(3, "u", 8) R(1, "v", 5) R(2, "w", 11) R(2, "x", 11)},                            \
   {R(1, "y", 13) R(3, "z", 0) R(6, "aa", 5) R(4, "bb", 1)}}
#define NOCACHE "SET 'dipper.rocksdb.aggregate-cache-bytes' = '1';\n"
#define SMALLCACHE "SET 'dipper.rocksdb.aggregate-cache-bytes' = '700';\n"

/* The unsorted output of a straight run of sc. */
static char *exact_run(const script *sc) {
  run a;
  char *text = NULL;
  if (run_open(&a, sc)) {
    bool ok = true;
    for (int b = 0; ok && b <= sc->nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
    if (ok) text = strdup(dp_buf_cstr(&a.out));
  }
  run_close(&a);
  return text;
}

/* sql (after S_DDL) over RocksDB, behind `opts`: the in-memory rows in
** their order; returns them (the caller frees). */
static char *same_rows(const char *opts, const char *sql, const int64_t *clock) {
  static char mem_sql[4096], rocks_sql[4096];
  snprintf(mem_sql, sizeof mem_sql, "%s%s", S_DDL, sql);
  snprintf(rocks_sql, sizeof rocks_sql, "SET 'state.backend' = 'rocksdb';\n%s%s%s", opts, S_DDL, sql);
  script mem = {mem_sql, {"s"}, S_BATCHES, 6, clock}, rocks = {rocks_sql, {"s"}, S_BATCHES, 6, clock};
  char *want = exact_run(&mem), *got = exact_run(&rocks);
  CHECK(want && got);
  if (want && got) CHECK_STR(got, want);
  if (want) CHECK(strchr(want, ',') != NULL); /* rows came out */
  free(got);
  return want;
}

/* The whole check: the same rows in order, then check_backends. */
static void check_topn(const char *opts, const char *sql, const int64_t *clock) {
  free(same_rows(opts, sql, clock));
  static char mem_sql[4096], rocks_sql[4096];
  snprintf(mem_sql, sizeof mem_sql, "%s%s", S_DDL, sql);
  snprintf(rocks_sql, sizeof rocks_sql, "SET 'state.backend' = 'rocksdb';\n%s%s%s", opts, S_DDL, sql);
  script mem = {mem_sql, {"s"}, S_BATCHES, 6, clock}, rocks = {rocks_sql, {"s"}, S_BATCHES, 6, clock};
  check_backends(&mem, &rocks, "topn-0", NULL);
}

/* A cache that overflows in some batches and not others: the same rows,
** and resumed after every batch from its saved state.  (Not the chains of
** deltas: a resumed run's cache lacks the clean partitions, so it overflows
** at other batches and its later blobs differ, though not its rows.) */
static void check_small_cache(const char *sql, const int64_t *clock) {
  free(same_rows(SMALLCACHE, sql, clock));
  static char rocks_sql[4096];
  snprintf(rocks_sql, sizeof rocks_sql, "SET 'state.backend' = 'rocksdb';\n%s%s%s", SMALLCACHE,
           S_DDL, sql);
  script rocks = {rocks_sql, {"s"}, S_BATCHES, 6, clock};
  char dir[] = "/tmp/dipper-rocks-topn-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char a_dir[64], b_dir[64];
  snprintf(a_dir, sizeof a_dir, "%s/a", dir);
  snprintf(b_dir, sizeof b_dir, "%s/b", dir);
  run a;
  run_ckpt = a_dir;
  if (run_open(&a, &rocks)) {
    bool ok = true;
    for (int b = 0; ok && b <= rocks.nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
    run_ckpt = b_dir;
    for (int k = 0; ok && k <= rocks.nbatches; k++) check_resume_at(&rocks, &a, k);
  }
  run_close(&a);
  run_ckpt = NULL;
  CHECK_EQ(dp_remove_tree(dir), 0);
}

#define TTL10 "SET 'table.exec.state.ttl' = '10 s';\n"
#define TOP2 \
  "SELECT k, item, x, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC)" \
  " AS rn FROM s) WHERE rn <= 2;"

TEST(row_number_top_n_with_its_rank) {
  check_topn("", TOP2, NULL);
  check_topn(NOCACHE, TOP2, NULL);
  check_small_cache(TOP2, NULL);
}

/* Without the rank: only rows new to a top come out. */
TEST(top_n_without_its_rank) {
  const char *q = "SELECT k, item, x FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x"
                  " DESC, item) AS rn FROM s) WHERE rn <= 3;";
  check_topn("", q, NULL);
  check_topn(NOCACHE, q, NULL);
}

/* RANK and DENSE_RANK: ties share a rank, so a top may hold more than N rows. */
TEST(rank_and_dense_rank) {
  const char *r = "SELECT k, item, x, r FROM (SELECT *, RANK() OVER (PARTITION BY k ORDER BY x DESC)"
                  " AS r FROM s) WHERE r <= 2;";
  const char *d = "SELECT k, item, x, r FROM (SELECT *, DENSE_RANK() OVER (PARTITION BY k ORDER BY"
                  " x DESC) AS r FROM s) WHERE r <= 2;";
  check_topn("", r, NULL);
  check_topn(NOCACHE, r, NULL);
  check_topn("", d, NULL);
  check_topn(NOCACHE, d, NULL);
  check_small_cache(d, NULL);
}

/* One partition (no PARTITION BY), ascending with the NULL first; QUALIFY. */
TEST(global_top_n_and_qualify) {
  const char *g = "SELECT item, x, rn FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY x NULLS FIRST)"
                  " AS rn FROM s) WHERE rn <= 3;";
  const char *q = "SELECT k, item FROM s QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY x"
                  " DESC) <= 2;";
  check_topn("", g, NULL);
  check_topn(NOCACHE, g, NULL);
  check_topn("", q, NULL);
  check_topn(NOCACHE, q, NULL);
}

/* A TTL of 10 s on the batches' clock: partition 4 (last row at 102) and 3
** (106) expire before their rows at 113 and 117 and start afresh; 5 (113)
** expires at 125 with no row after.  The rows must differ from those
** without the TTL (something expired), and be memory's. */
TEST(top_n_under_a_state_ttl) {
  static const int64_t clock[] = {100, 102, 106, 113, 117, 125, 126};
  char *plain = same_rows("", TOP2, clock);
  char *ttl = same_rows("", TTL10 TOP2, clock);
  CHECK(plain && ttl && strcmp(plain, ttl) != 0);
  free(plain);
  free(ttl);
  check_topn("", TTL10 TOP2, clock);
  check_topn(NOCACHE, TTL10 TOP2, clock);
  check_small_cache(TTL10 TOP2, clock);
  /* the TTL on a global Top-N: its one partition expires and comes back */
  const char *g = TTL10 "SELECT item, x, rn FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY x DESC)"
                  " AS rn FROM s) WHERE rn <= 2;";
  static const int64_t gaps[] = {100, 111, 115, 130, 131, 150, 151};
  check_topn("", g, gaps);
  check_topn(NOCACHE, g, gaps);
}

int main(void) {
  (void)check_script; /* the harness's; the cases here run check_backends */
  return RUN_TESTS();
}
