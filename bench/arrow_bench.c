/*
** arrow_bench.c — Arrow IPC decode throughput (src/spark/arrow_ipc.c), the
** cost of reading a Spark Connect result, and of importing it into dipper's
** vectors (core/vector_import.c).
**
**   build/bench/bench_arrow_bench [ROWS]          (default 1,000,000 rows)
**   build/bench/bench_arrow_bench FILE.arrows     a stream from elsewhere (pyarrow,
**                                                 Spark; LZ4/ZSTD bodies too)
**
** Without a file, the input is generated in-process and written by dipper's
** own encoder: ROWS rows of BIGINT, DOUBLE, STRING (~12 bytes), TIMESTAMP_LTZ,
** DECIMAL(18,2) and BOOLEAN, each column with 1 row in 10 null; once as one
** stream of one batch, once as Spark sends it (a stream of 10,000 rows per
** ArrowBatch, spark.sql.execution.arrow.maxRecordsPerBatch's default).
** Prints, per case, the median of 7 runs: MB/s of IPC input and rows/s, for
** decode alone and decode + import into a dp_batch.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/vector.h"
#include "core/vector_import.h"
#include "spark/arrow_ipc.h"

#define RUNS 7
#define SPARK_BATCH 10000

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void die(const char *what) {
  fprintf(stderr, "arrow_bench: %s\n", what);
  exit(1);
}

/* The generated rows [from, from+n) as a batch of `schema`. */
static void fill(dp_batch *b, int64_t from, int64_t n) {
  dp_batch_clear(b);
  for (int64_t r = from; r < from + n; r++) {
    bool null = r % 10 == 7;
    char s[32];
    int len = snprintf(s, sizeof s, "user-%07lld", (long long)(r * 7919 % 10000000));
    if (null) {
      for (int c = 0; c < b->ncols; c++) dp_vector_append_null(b->cols[c]);
      continue;
    }
    dp_vector_append_i64(b->cols[0], r);
    dp_vector_append_f64(b->cols[1], (double)r * 0.25);
    dp_vector_append_str(b->cols[2], s, (size_t)len);
    dp_vector_append_i64(b->cols[3], 1700000000000000 + r * 1000);
    dp_vector_append_dec(b->cols[4], (dp_i128)(r * 37 % 100000000));
    dp_vector_append_bool(b->cols[5], r % 3 == 0);
  }
  if (dp_batch_sync(b)) die("batch out of sync");
}

/* Encode rows in streams of `per` rows each; returns the streams. */
static dp_buf *make_streams(dp_batch *b, int64_t rows, int64_t per, int *nstreams) {
  int n = (int)((rows + per - 1) / per);
  dp_buf *out = calloc((size_t)n, sizeof *out);
  if (!out) die("out of memory");
  for (int i = 0; i < n; i++) {
    int64_t from = (int64_t)i * per, k = rows - from < per ? rows - from : per;
    fill(b, from, k);
    struct ArrowSchema s;
    struct ArrowArray a;
    if (dp_batch_export(b, &s, &a)) die("export failed");
    dp_buf err = DP_BUF_INIT;
    if (dp_arrow_ipc_encode(&s, &a, &out[i], &err)) die(dp_buf_cstr(&err));
    s.release(&s);
    a.release(&a);
  }
  *nstreams = n;
  return out;
}

/* Median seconds to decode every stream (and import when `into` is set). */
static double run(const dp_buf *streams, int n, dp_batch *into, int64_t *rows_out) {
  double t[RUNS];
  for (int k = 0; k < RUNS; k++) {
    int64_t rows = 0;
    if (into) dp_batch_clear(into);
    double t0 = now();
    for (int i = 0; i < n; i++) {
      dp_arrow_batches out;
      dp_buf err = DP_BUF_INIT;
      if (dp_arrow_ipc_decode((const uint8_t *)streams[i].data, streams[i].len, &out, &err))
        die(dp_buf_cstr(&err));
      for (int j = 0; into && j < out.n; j++)
        if (dp_batch_import(into, &out.schema, &out.arrays[j], &err)) die(dp_buf_cstr(&err));
      rows += out.rows;
      dp_arrow_batches_free(&out);
    }
    t[k] = now() - t0;
    *rows_out = rows;
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  return t[RUNS / 2];
}

static void report(const char *what, size_t bytes, int64_t rows, double secs) {
  printf("%-44s %8.1f MB/s  %7.2f M rows/s  (%.1f ms, %lld rows, %.1f MB)\n", what,
         (double)bytes / secs / 1e6, (double)rows / secs / 1e6, secs * 1e3, (long long)rows,
         (double)bytes / 1e6);
}

static int bench_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open the file");
  dp_buf data = DP_BUF_INIT;
  char chunk[1 << 16];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) dp_buf_put(&data, chunk, got);
  fclose(f);
  if (data.oom) die("out of memory");
  int64_t rows;
  double secs = run(&data, 1, NULL, &rows);
  report(path, data.len, rows, secs);
  dp_buf_free(&data);
  return 0;
}

int main(int argc, char **argv) {
  int64_t rows = 1000000;
  if (argc > 1) {
    if (strspn(argv[1], "0123456789") != strlen(argv[1])) return bench_file(argv[1]);
    rows = atoll(argv[1]);
  }
  dp_arena *arena = dp_arena_new(0);
  const char *names[] = {"id", "score", "user", "ts", "amount", "flag"};
  const dp_type *types[] = {dp_type_of(DP_T_BIGINT), dp_type_of(DP_T_DOUBLE),
                            dp_type_of(DP_T_STRING), dp_type_timestamp(arena, DP_T_TIMESTAMP_LTZ, 6),
                            dp_type_decimal(arena, 18, 2), dp_type_of(DP_T_BOOLEAN)};
  dp_schema *schema = dp_schema_new(arena, 6);
  for (int i = 0; i < 6; i++) {
    schema->cols[i].name = names[i];
    schema->cols[i].type = types[i];
  }
  dp_batch *b = dp_batch_new(schema, rows < SPARK_BATCH ? SPARK_BATCH : rows);
  dp_batch *into = dp_batch_new(schema, rows);
  if (!b || !into) die("out of memory");
  printf("Arrow IPC decode, %lld rows of BIGINT, DOUBLE, STRING(~12 B), TIMESTAMP_LTZ, "
         "DECIMAL(18,2), BOOLEAN, 10%% nulls; median of %d runs\n",
         (long long)rows, RUNS);
  int64_t per[2] = {rows, SPARK_BATCH};
  const char *label[2] = {"one stream", "streams of 10,000 rows (as Spark sends)"};
  for (int c = 0; c < 2; c++) {
    int n;
    dp_buf *streams = make_streams(b, rows, per[c], &n);
    size_t bytes = 0;
    for (int i = 0; i < n; i++) bytes += streams[i].len;
    int64_t got;
    char what[96];
    snprintf(what, sizeof what, "decode, %s", label[c]);
    report(what, bytes, rows, run(streams, n, NULL, &got));
    if (got != rows) die("row count differs");
    snprintf(what, sizeof what, "decode + import, %s", label[c]);
    report(what, bytes, rows, run(streams, n, into, &got));
    if (into->nrows != rows) die("imported row count differs");
    for (int i = 0; i < n; i++) dp_buf_free(&streams[i]);
    free(streams);
  }
  dp_batch_free(b);
  dp_batch_free(into);
  dp_arena_free(arena);
  return 0;
}
