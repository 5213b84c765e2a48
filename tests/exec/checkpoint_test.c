/*
** checkpoint_test.c — the checkpoint folder (exec/checkpoint.h) and resuming
** through the public API.
**
** Files: a record reads back as written, mapped (dp_ckpt_map) or read; a
** flipped byte, a cut, another kind or batch in the header are
** DIPPER_CORRUPT either way; a missing one DIPPER_NAME;
** listing is in batch order without temporary files; purge removes below a
** batch; the lock refuses a second opener.  Resuming: datagen (random values
** with a seed) and nexmark queries stopped after k micro-batches and started
** again on a new handle with the same folder give, together, exactly the
** rows of a run straight through, for several k.
*/
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/diag.h"
#include "dipper.h"
#include "exec/checkpoint.h"
#include "test.h"

static char *temp_dir(void) {
  char tmpl[] = "/tmp/dipper-ckpt-XXXXXX";
  char *d = mkdtemp(tmpl);
  return d ? strdup(d) : NULL;
}

static void remove_tree(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void flip_byte(const char *path, long at) {
  int fd = open(path, O_RDWR);
  unsigned char c = 0;
  if (fd < 0) return;
  if (pread(fd, &c, 1, at) == 1) {
    c ^= 0x20;
    if (pwrite(fd, &c, 1, at) != 1) fprintf(stderr, "could not write %s\n", path);
  }
  close(fd);
}

/* dp_ckpt_map's code for a record; when it maps, its bytes are dp_ckpt_read's. */
static int map_code(dp_ckpt *c, dp_ckpt_kind kind, int64_t batch) {
  dp_ckpt_mapping m;
  int rc = dp_ckpt_map(c, kind, batch, false, &m);
  if (rc == DIPPER_OK) {
    uint8_t *got;
    size_t n;
    CHECK_EQ(dp_ckpt_read(c, kind, batch, false, &got, &n), DIPPER_OK);
    CHECK(n == m.n && (n == 0 || memcmp(got, m.payload, n) == 0));
    free(got);
  } else {
    CHECK(m.payload == NULL && m.base == NULL);
  }
  dp_ckpt_unmap(&m);
  return rc;
}

TEST(records_round_trip_and_damage_is_refused) {
  char *root = temp_dir();
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, NULL, NULL, 0);
  dp_ckpt *c = NULL;
  CHECK_EQ(dp_ckpt_open(root, "q/1", &d, &c), DIPPER_OK);
  CHECK(strstr(dp_ckpt_dir(c), "q_1") != NULL); /* a name is one path component */
  const char payload[] = "offsets of batch seven";
  CHECK_EQ(dp_ckpt_write(c, DP_CKPT_OFFSETS, 7, payload, sizeof payload), DIPPER_OK);
  CHECK_EQ(dp_ckpt_write(c, DP_CKPT_OFFSETS, 12, "", 0), DIPPER_OK);
  CHECK_EQ(dp_ckpt_write(c, DP_CKPT_OFFSETS, 3, "x", 1), DIPPER_OK);
  uint8_t *got;
  size_t n;
  CHECK_EQ(dp_ckpt_read(c, DP_CKPT_OFFSETS, 7, true, &got, &n), DIPPER_OK);
  CHECK(n == sizeof payload && memcmp(got, payload, n) == 0);
  free(got);
  CHECK_EQ(dp_ckpt_read(c, DP_CKPT_OFFSETS, 12, true, &got, &n), DIPPER_OK);
  CHECK_EQ(n, 0);
  free(got);
  CHECK_EQ(dp_ckpt_read(c, DP_CKPT_COMMIT, 7, true, &got, &n), DIPPER_NAME);
  CHECK_EQ(map_code(c, DP_CKPT_OFFSETS, 7), DIPPER_OK); /* mapped: the same bytes */
  CHECK_EQ(map_code(c, DP_CKPT_OFFSETS, 12), DIPPER_OK);
  CHECK_EQ(map_code(c, DP_CKPT_COMMIT, 7), DIPPER_NAME);
  /* listing: ascending, no temporary files */
  char stray[512];
  snprintf(stray, sizeof stray, "%s/offsets/.9.tmp", dp_ckpt_dir(c));
  FILE *f = fopen(stray, "w");
  if (f) fclose(f);
  int64_t *ids;
  int count;
  CHECK_EQ(dp_ckpt_list(c, DP_CKPT_OFFSETS, &ids, &count), DIPPER_OK);
  CHECK_EQ(count, 3);
  if (count == 3) CHECK(ids[0] == 3 && ids[1] == 7 && ids[2] == 12);
  free(ids);
  /* every byte flipped is caught: the checksum, or the header */
  char path[512];
  snprintf(path, sizeof path, "%s", dp_ckpt_path(c, DP_CKPT_OFFSETS, 7));
  struct stat sb;
  CHECK(stat(path, &sb) == 0);
  for (long at = 0; at < (long)sb.st_size; at++) {
    flip_byte(path, at);
    CHECK_EQ(dp_ckpt_read(c, DP_CKPT_OFFSETS, 7, false, &got, &n), DIPPER_CORRUPT);
    CHECK_EQ(map_code(c, DP_CKPT_OFFSETS, 7), DIPPER_CORRUPT);
    flip_byte(path, at);
  }
  CHECK_EQ(dp_ckpt_read(c, DP_CKPT_OFFSETS, 7, false, &got, &n), DIPPER_OK);
  free(got);
  /* cut short, at every length */
  for (long len = 0; len < (long)sb.st_size; len++) {
    CHECK_EQ(dp_ckpt_write(c, DP_CKPT_OFFSETS, 7, payload, sizeof payload), DIPPER_OK);
    CHECK(truncate(path, len) == 0);
    CHECK_EQ(dp_ckpt_read(c, DP_CKPT_OFFSETS, 7, false, &got, &n), DIPPER_CORRUPT);
    CHECK_EQ(map_code(c, DP_CKPT_OFFSETS, 7), DIPPER_CORRUPT);
  }
  /* a record renamed to another batch does not pass for it */
  char other[512];
  CHECK_EQ(dp_ckpt_write(c, DP_CKPT_OFFSETS, 7, payload, sizeof payload), DIPPER_OK);
  snprintf(other, sizeof other, "%s", dp_ckpt_path(c, DP_CKPT_OFFSETS, 8));
  CHECK(rename(path, other) == 0);
  int before = d.count;
  CHECK_EQ(dp_ckpt_read(c, DP_CKPT_OFFSETS, 8, true, &got, &n), DIPPER_CORRUPT);
  CHECK(d.count == before + 1 && strstr(d.items[d.count - 1].message, "offsets/8") != NULL);
  dp_ckpt_mapping m;
  CHECK_EQ(dp_ckpt_map(c, DP_CKPT_OFFSETS, 8, true, &m), DIPPER_CORRUPT);
  CHECK(d.count == before + 2 && strstr(d.items[d.count - 1].message, "offsets/8") != NULL);
  /* purge */
  dp_ckpt_purge(c, DP_CKPT_OFFSETS, 8);
  CHECK_EQ(dp_ckpt_list(c, DP_CKPT_OFFSETS, &ids, &count), DIPPER_OK);
  CHECK_EQ(count, 2);
  if (count == 2) CHECK(ids[0] == 8 && ids[1] == 12);
  free(ids);
  /* one opener at a time */
  dp_ckpt *second = NULL;
  CHECK_EQ(dp_ckpt_open(root, "q/1", &d, &second), DIPPER_IO);
  CHECK(second == NULL);
  CHECK(strstr(d.items[d.count - 1].message, "in use by another running query") != NULL);
  dp_ckpt_close(c);
  CHECK_EQ(dp_ckpt_open(root, "q/1", &d, &second), DIPPER_OK);
  dp_ckpt_close(second);
  dp_arena_free(a);
  remove_tree(root);
  free(root);
}

/* The BIGINT column 0 of every row the memory table `out` holds, appended. */
static int fetch_ids(dipper *db, int64_t *ids, int at, int cap) {
  struct ArrowSchema schema;
  struct ArrowArray array;
  if (dipper_memory_fetch(db, "out", &schema, &array) != DIPPER_OK) return at;
  const struct ArrowArray *col = array.children[0];
  const int64_t *v = col->buffers[1];
  for (int64_t r = 0; r < array.length && at < cap; r++) ids[at++] = v[col->offset + r];
  array.release(&array);
  schema.release(&schema);
  return at;
}

/* Run `sql` with the checkpoint folder `dir`: at most `steps` steps (-1:
** to the end); the ids written are appended to ids[at..). */
static int run_some(const char *dir, const char *sql, int steps, int64_t *ids, int at, int cap) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  char text[2048];
  snprintf(text, sizeof text, "SET 'execution.checkpointing.dir' = '%s';\n%s", dir, sql);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, text, (size_t)-1, "t.sql", &prog), DIPPER_OK);
  dipper_query **qs = NULL;
  int nq = 0;
  CHECK_EQ(dipper_query_start(prog, &qs, &nq), DIPPER_OK);
  CHECK_EQ(nq, 1);
  int finished = 0;
  for (int i = 0; nq == 1 && !finished && (steps < 0 || i < steps); i++) {
    dipper_progress before = {.size = sizeof before}, after = {.size = sizeof after};
    CHECK_EQ(dipper_query_progress(qs[0], &before), DIPPER_OK);
    CHECK_EQ(dipper_query_step(qs[0], &finished), DIPPER_OK);
    CHECK_EQ(dipper_query_progress(qs[0], &after), DIPPER_OK);
    /* a batch that ran wrote at least its offsets and commit records */
    if (after.batch_id != before.batch_id) CHECK(after.checkpoint_bytes > 2 * 24);
  }
  at = fetch_ids(db, ids, at, cap);
  dipper_query_free_all(qs, nq);
  dipper_program_free(prog);
  dipper_close(db);
  return at;
}

#define MAX_ROWS 20000

static void check_resumes(const char *sql) {
  int64_t *straight = calloc(MAX_ROWS, sizeof *straight);
  int64_t *resumed = calloc(MAX_ROWS, sizeof *resumed);
  char *dir = temp_dir();
  int n = run_some(dir, sql, -1, straight, 0, MAX_ROWS);
  CHECK(n > 1000);
  int total = n;
  remove_tree(dir);
  for (int k = 1; k <= 7; k += 3) {
    CHECK(mkdir(dir, 0777) == 0);
    int m = run_some(dir, sql, k, resumed, 0, MAX_ROWS);
    m = run_some(dir, sql, 2, resumed, m, MAX_ROWS);   /* stopped again */
    m = run_some(dir, sql, -1, resumed, m, MAX_ROWS);  /* and to the end */
    CHECK_EQ(m, total);
    int same = m == n;
    for (int i = 0; same && i < n; i++) same = straight[i] == resumed[i];
    CHECK(same);
    remove_tree(dir);
  }
  free(dir);
  free(straight);
  free(resumed);
}

TEST(datagen_resumes_with_the_same_values) {
  check_resumes("SET 'dipper.max-batch-rows' = '700';\n"
                "CREATE TABLE g (v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '5000', "
                "'seed' = '42');\n"
                "CREATE TABLE out (v BIGINT) WITH ('connector' = 'memory');\n"
                "INSERT INTO out SELECT v FROM g WHERE v % 3 <> 0;\n");
}

TEST(nexmark_resumes_with_the_same_events) {
  check_resumes("SET 'dipper.max-batch-rows' = '900';\n"
                "CREATE TABLE nx (event_type INT, bid ROW<auction BIGINT, bidder BIGINT, price "
                "BIGINT>) WITH ('connector' = 'nexmark', 'events.num' = '10000');\n"
                "CREATE TABLE out (p BIGINT) WITH ('connector' = 'memory');\n"
                "INSERT INTO out SELECT bid.price * 1000 + bid.bidder FROM nx WHERE event_type = 2;\n");
}

int main(void) { return RUN_TESTS(); }
