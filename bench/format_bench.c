/*
** format_bench.c — the JSON and CSV decoders on the seed's payment records,
** in the two places the engine runs them:
**   scan    the filesystem source over one JSON-lines (or CSV) file: its
**           1 MiB read window, the record split and the decode, read in
**           4096-row chunks as the engine's scan reads them (no engine);
**   record  one record per call, as the Kafka source hands each message's
**           payload to the table's decoder (dp_record_decode, records.c),
**           the records laid one after another without line breaks.
**
**   scripts/bench --only format_bench      or
**   build/bench/bench_format_bench [--records N] [--runs R] [--dir D] [--only json|csv]
**   build/bench/bench_format_bench --write DIR   only write the two files
**                                                (bench/simdjson_bench.py reads them)
**   build/bench/bench_format_bench --path P      the scan alone of a JSON-lines file or
**                                                folder of these columns (bench/peers')
**
** The records are those of bench/spark_stream_bench.c's producer: createTime
** "yyyy-MM-dd HH:mm:ss.SSS", orderId, payAmount with two decimals,
** payPlatform 0/1, provinceId 0..33 (about 115 bytes as JSON).  Prints MB/s
** and M rows/s per core (bytes over this thread's CPU time, user + system;
** the file is in the page cache after the first run), the median of R runs,
** and the best run's MB/s (on a busy machine the least disturbed one), and
** the median's cycles per byte at the clock measured at start (clock_hz).
*/
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/dipper_int.h"
#include "connectors/connector.h"
#include "connectors/records.h"
#include "core/vector.h"
#include "dipper.h"

static uint64_t next_rand(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* Payment i as JSON or CSV (no line break) into buf; its length. */
static int payment(char *buf, size_t cap, bool csv, int64_t i, uint64_t *rnd) {
  int64_t event_ms = INT64_C(1704067200000) + i * 5 - (int64_t)(next_rand(rnd) % 3000);
  time_t secs = (time_t)(event_ms / 1000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  int64_t cents = (int64_t)(next_rand(rnd) % 100000) + 1;
  unsigned r = (unsigned)(next_rand(rnd) >> 32);
  char ts[64];
  snprintf(ts, sizeof ts, "%04d-%02d-%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1,
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(event_ms % 1000));
  if (csv)
    return snprintf(buf, cap, "%s,%" PRId64 ",%" PRId64 ".%02d,%u,%u", ts, i + 1, cents / 100,
                    (int)(cents % 100), r & 1u, (r >> 1) % 34u);
  return snprintf(buf, cap,
                  "{\"createTime\":\"%s\",\"orderId\":%" PRId64 ",\"payAmount\":%" PRId64
                  ".%02d,\"payPlatform\":%u,\"provinceId\":%u}",
                  ts, i + 1, cents / 100, (int)(cents % 100), r & 1u, (r >> 1) % 34u);
}

typedef struct records {
  char *text;      /* the records, each followed by '\n' */
  size_t len;
  size_t *starts;  /* n + 1 offsets */
  int64_t n;
} records;

static bool make_records(records *rs, bool csv, int64_t n) {
  rs->n = n;
  rs->len = 0;
  size_t cap = (size_t)n * 128 + 64;
  rs->text = malloc(cap);
  rs->starts = malloc(((size_t)n + 1) * sizeof *rs->starts);
  if (!rs->text || !rs->starts) return false;
  uint64_t rnd = 0x9E3779B97F4A7C15ULL;
  for (int64_t i = 0; i < n; i++) {
    rs->starts[i] = rs->len;
    int w = payment(rs->text + rs->len, cap - rs->len, csv, i, &rnd);
    if (w < 0 || (size_t)w + 2 > cap - rs->len) return false;
    rs->len += (size_t)w;
    rs->text[rs->len++] = '\n';
  }
  rs->starts[n] = rs->len;
  return true;
}

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The core's clock as this thread sees it (turbo included), from a chain of
** dependent adds (one cycle each): 0 where there is no x86-64.  The cycles
** per byte below are CPU time x this clock / bytes: the VM gives no
** hardware counters, and the nominal MHz of /proc/cpuinfo is not the
** clock the core runs at. */
static double clock_hz(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  double best = 1e9;
  unsigned long x = 0;
  for (int r = 0; r < 5; r++) {
    double t0 = cpu_now();
    for (unsigned long i = 0; i < 20000000UL; i++)
      __asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
                       "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0"
                       : "+r"(x));
    double t = cpu_now() - t0;
    if (t < best) best = t;
  }
  return 2e8 / best;
#else
  return 0;
#endif
}

static const char *const columns =
    "createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE, payPlatform INT, provinceId INT";

/* A handle with table `payments` of `connector`/`format`; NULL on failure. */
static dipper *open_table(const char *connector, const char *format, const char *path,
                          dipper_program **prog, const dp_table_def **t) {
  dipper *db = NULL;
  if (dipper_open(&db, NULL) != DIPPER_OK) return NULL;
  char sql[2048];
  if (strcmp(connector, "kafka") == 0)
    snprintf(sql, sizeof sql,
             "CREATE TABLE payments (%s) WITH ('connector' = 'kafka', 'topic' = 'payment_msg', "
             "'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = '%s');",
             columns, format);
  else
    snprintf(sql, sizeof sql,
             "SET 'execution.runtime-mode' = 'batch';\n"
             "CREATE TABLE payments (%s) WITH ('connector' = 'filesystem', 'path' = '%s', "
             "'format' = '%s');",
             columns, path, format);
  if (dipper_compile(db, sql, strlen(sql), "format_bench.sql", prog) != DIPPER_OK) {
    fprintf(stderr, "format_bench: %s\n", dipper_errmsg(db));
    dipper_close(db);
    return NULL;
  }
  *t = dp_catalog_table(db->catalog, "payments");
  return db;
}

/* The filesystem source over `path`: CPU seconds to read it all; rows in *rows. */
static double run_scan(const char *format, const char *path, int64_t *rows) {
  dipper_program *prog = NULL;
  const dp_table_def *t = NULL;
  dipper *db = open_table("filesystem", format, path, &prog, &t);
  double spent = -1;
  dp_arena *arena = dp_arena_new(0);
  if (db && t && arena) {
    dp_diags diags;
    dp_diags_init(&diags, arena, "format_bench.sql", NULL, 0);
    dp_source src = {0};
    src.cls = dp_source_find("filesystem");
    src.db = db;
    src.table = t;
    src.schema = &t->schema;
    src.diags = &diags;
    dp_batch *b = dp_batch_new(&t->schema, 4096);
    int rc = src.cls && b ? src.cls->open(&src) : DIPPER_INTERNAL;
    if (rc == DIPPER_OK) {
      double c0 = cpu_now();
      bool exhausted = false;
      while (rc == DIPPER_OK && !exhausted) {
        rc = src.cls->plan_batch(&src, INT64_MAX, &exhausted);
        bool done = false;
        while (rc == DIPPER_OK && !done) {
          dp_batch_clear(b);
          rc = src.cls->read(&src, b, 4096, &done);
        }
        if (rc == DIPPER_OK) rc = src.cls->commit(&src);
      }
      spent = cpu_now() - c0;
      *rows = src.metrics.rows;
      src.cls->close(&src);
    }
    if (rc != DIPPER_OK) {
      fprintf(stderr, "format_bench: scan of %s: %s\n", path,
              diags.count ? diags.items[0].message : dipper_strerror(rc));
      spent = -1;
    }
    dp_batch_free(b);
  }
  dp_arena_free(arena);
  dipper_program_free(prog);
  dipper_close(db);
  return spent;
}

/* One record per call, as the Kafka source decodes a message's payload. */
static double run_records(const char *format, const records *rs, int64_t *rows) {
  dipper_program *prog = NULL;
  const dp_table_def *t = NULL;
  dipper *db = open_table("kafka", format, NULL, &prog, &t);
  double spent = -1;
  dp_arena *arena = dp_arena_new(0);
  if (db && t && arena) {
    dp_diags diags;
    dp_diags_init(&diags, arena, "format_bench.sql", NULL, 0);
    dp_record_decoder rd;
    dp_batch *b = dp_batch_new(&t->schema, 4096);
    int rc = b ? dp_record_decoder_open(&rd, t, &t->schema, "json", &diags) : DIPPER_NOMEM;
    if (rc == DIPPER_OK) {
      double c0 = cpu_now();
      int64_t got = 0;
      dp_format_error err;
      for (int64_t i = 0; i < rs->n && rc == DIPPER_OK; i++) {
        if ((i & 4095) == 0) dp_batch_clear(b);
        bool skipped;
        const char *rec = rs->text + rs->starts[i];
        size_t n = rs->starts[i + 1] - rs->starts[i] - 1; /* no line break in a message */
        rc = dp_record_decode(&rd, rec, n, b, &skipped, &err);
        if (rc == DIPPER_DATA) fprintf(stderr, "format_bench: record %" PRId64 ": %s\n", i, err.msg);
        got += !skipped;
        if (rc == DIPPER_OK && ((i + 1) & 4095) == 0) rc = dp_batch_sync(b);
      }
      spent = cpu_now() - c0;
      *rows = got;
      dp_record_decoder_close(&rd);
    }
    if (rc != DIPPER_OK) spent = -1;
    dp_batch_free(b);
  }
  dp_arena_free(arena);
  dipper_program_free(prog);
  dipper_close(db);
  return spent;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static bool write_file(const char *path, const records *rs) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "format_bench: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  bool ok = fwrite(rs->text, 1, rs->len, f) == rs->len;
  ok = fclose(f) == 0 && ok;
  return ok;
}

/* Bytes of the file at path, or of the files of the folder at path. */
static int64_t path_bytes(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) return -1;
  if (!S_ISDIR(sb.st_mode)) return (int64_t)sb.st_size;
  DIR *d = opendir(path);
  if (!d) return -1;
  int64_t total = 0;
  for (struct dirent *e; (e = readdir(d));) {
    char f[4200];
    snprintf(f, sizeof f, "%s/%s", path, e->d_name);
    if (e->d_name[0] != '.' && stat(f, &sb) == 0 && S_ISREG(sb.st_mode)) total += (int64_t)sb.st_size;
  }
  closedir(d);
  return total;
}

/* --path: the scan of JSON payments someone else wrote (bench/peers' own,
** whose numbers are longer than ours), so that the decoder alone and the
** engine's pass-through are measured on the same bytes. */
static int scan_path(const char *path, int runs) {
  int64_t bytes = path_bytes(path);
  if (bytes < 0) {
    fprintf(stderr, "format_bench: cannot read %s: %s\n", path, strerror(errno));
    return 1;
  }
  double t[100];
  int64_t rows = 0;
  for (int r = 0; r < runs; r++)
    if ((t[r] = run_scan("json", path, &rows)) < 0) return 1;
  qsort(t, (size_t)runs, sizeof t[0], cmp_double);
  double med = t[runs / 2];
  double hz = clock_hz();
  printf("clock %.2f GHz (dependent adds)\n", hz / 1e9);
  printf("%-6s %-7s %10s %8s %9s %10s %9s %9s\n", "format", "path", "records", "MB", "MB/s", "M rows/s",
         "best MB/s", "cycles/B");
  printf("%-6s %-7s %10" PRId64 " %8.1f %9.0f %10.2f %9.0f %9.2f\n", "json", "scan", rows,
         (double)bytes / 1e6, (double)bytes / 1e6 / med, (double)rows / 1e6 / med,
         (double)bytes / 1e6 / t[0], med * hz / (double)bytes);
  return 0;
}

int main(int argc, char **argv) {
  int64_t n = 2000000;
  int runs = 5;
  const char *dir = NULL, *write_dir = NULL, *only = NULL, *scan = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--records") == 0 && i + 1 < argc)
      n = strtoll(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
      dir = argv[++i];
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
      only = argv[++i];
    else if (strcmp(argv[i], "--write") == 0 && i + 1 < argc)
      write_dir = argv[++i];
    else if (strcmp(argv[i], "--path") == 0 && i + 1 < argc)
      scan = argv[++i];
    else if (strcmp(argv[i], "--quick") == 0) {
      n = 200000;
      runs = 3;
    } else {
      fprintf(stderr,
              "usage: bench_format_bench [--records N] [--runs R] [--dir D] [--only json|csv]\n"
              "                          [--write DIR] [--path FILE-OR-FOLDER]\n");
      return 2;
    }
  }
  if (n <= 0 || runs <= 0 || runs > 99) return 2;
  if (scan) return scan_path(scan, runs);
  char tmpl[] = "/tmp/dipper-format-bench-XXXXXX";
  const char *where = write_dir ? write_dir : dir;
  if (!where && !(where = mkdtemp(tmpl))) {
    perror("mkdtemp");
    return 1;
  }
  static const char *const formats[] = {"json", "csv"};
  int status = 0;
  double hz = write_dir ? 0 : clock_hz();
  if (!write_dir) printf("clock %.2f GHz (dependent adds)\n", hz / 1e9);
  printf("%-6s %-7s %10s %8s %9s %10s %9s %9s\n", "format", "path", "records", "MB", "MB/s", "M rows/s",
         "best MB/s", "cycles/B");
  for (int k = 0; k < 2; k++) {
    if (only && strcmp(only, formats[k]) != 0) continue;
    records rs;
    if (!make_records(&rs, k == 1, n)) {
      fprintf(stderr, "format_bench: out of memory\n");
      return 1;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/payments.%s", where, k == 1 ? "csv" : "jsonl");
    if (!write_file(path, &rs)) return 1;
    if (write_dir) {
      printf("wrote %s: %" PRId64 " records, %zu bytes\n", path, rs.n, rs.len);
      free(rs.text);
      free(rs.starts);
      continue;
    }
    for (int mode = 0; mode < 2; mode++) {
      double t[100];
      int64_t rows = 0;
      size_t bytes = mode == 0 ? rs.len : rs.len - (size_t)rs.n; /* messages have no '\n' */
      for (int r = 0; r < runs; r++) {
        t[r] = mode == 0 ? run_scan(formats[k], path, &rows) : run_records(formats[k], &rs, &rows);
        if (t[r] < 0 || rows != n) {
          fprintf(stderr, "format_bench: %s %s failed (%" PRId64 " of %" PRId64 " rows)\n",
                  formats[k], mode ? "record" : "scan", rows, n);
          status = 1;
          break;
        }
      }
      if (status) break;
      qsort(t, (size_t)runs, sizeof t[0], cmp_double);
      double med = t[runs / 2];
      printf("%-6s %-7s %10" PRId64 " %8.1f %9.0f %10.2f %9.0f %9.2f\n", formats[k],
             mode ? "record" : "scan", n, (double)bytes / 1e6, (double)bytes / 1e6 / med,
             (double)n / 1e6 / med, (double)bytes / 1e6 / t[0], med * hz / (double)bytes);
      fflush(stdout);
    }
    if (!dir) unlink(path);
    free(rs.text);
    free(rs.starts);
    if (status) break;
  }
  if (!dir && !write_dir) rmdir(where);
  return status;
}
