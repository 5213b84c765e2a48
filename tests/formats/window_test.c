/*
** window_test.c — the decoders under the filesystem source's read window
** (1 MiB, grown for a longer record): JSON-lines and CSV files of records of
** every length, so that records straddle the window's end at many places,
** one record longer than the window, CRLF line ends, and CSV quoted fields
** holding quotes, delimiters and line breaks across the boundary.  Every row
** must come back with its values.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/dipper_int.h"
#include "connectors/connector.h"
#include "core/vector.h"
#include "dipper.h"
#include "test.h"

static uint64_t rnd_state = 0x2545F4914F6CDD1DULL;
static unsigned rnd_below(unsigned n) {
  uint64_t x = rnd_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rnd_state = x;
  return (unsigned)((x * 0x2545F4914F6CDD1DULL) >> 33) % n;
}

#define NREC 1200
static size_t pad_len[NREC];
static int64_t amount_cents[NREC];

/* The file of NREC records; its path in `path`. */
static bool write_records(const char *path, bool csv) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  char *pad = malloc(1200000);
  for (int i = 0; i < NREC; i++) {
    /* mostly 0..2000 bytes of text; one record longer than the window */
    size_t n = i == 700 ? 1100000 : rnd_below(2000);
    pad_len[i] = n;
    amount_cents[i] = (int64_t)rnd_below(10000000) - 5000000;
    for (size_t j = 0; j < n; j++) {
      static const char text[] = "abcdefghij,\"\n ";
      pad[j] = csv ? text[rnd_below(sizeof text - 1)] : text[rnd_below(10)];
    }
    const char *eol = i % 3 == 0 ? "\r\n" : "\n";
    int64_t c = amount_cents[i], mag = c < 0 ? -c : c;
    if (csv) {
      /* the text quoted, its quotes doubled */
      fprintf(f, "%d,\"", i);
      for (size_t j = 0; j < n; j++) {
        if (pad[j] == '"') fputc('"', f);
        fputc(pad[j], f);
      }
      fprintf(f, "\",%s%lld.%02lld,2024-01-01 00:00:%02d.%03d%s", c < 0 ? "-" : "",
              (long long)(mag / 100), (long long)(mag % 100), i % 60, i % 1000, eol);
    } else {
      fprintf(f, "{\"id\":%d,\"s\":\"%.*s\",\"amount\":%s%lld.%02lld,\"ts\":\"2024-01-01 00:00:%02d.%03d\"}%s",
              i, (int)n, pad, c < 0 ? "-" : "", (long long)(mag / 100), (long long)(mag % 100), i % 60,
              i % 1000, eol);
    }
  }
  free(pad);
  return fclose(f) == 0;
}

/* Read the file through the filesystem source; check every row. */
static void scan_and_check(const char *path, const char *format) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  char sql[1200];
  snprintf(sql, sizeof sql,
           "SET 'execution.runtime-mode' = 'batch';\n"
           "CREATE TABLE t (id INT, s STRING, amount DOUBLE, ts TIMESTAMP(3)) WITH ("
           "'connector' = 'filesystem', 'path' = '%s', 'format' = '%s');",
           path, format);
  dipper_program *prog = NULL;
  CHECK_EQ(dipper_compile(db, sql, strlen(sql), "window_test.sql", &prog), DIPPER_OK);
  const dp_table_def *t = prog ? dp_catalog_table(db->catalog, "t") : NULL;
  CHECK(t != NULL);
  if (!t) {
    dipper_program_free(prog);
    dipper_close(db);
    return;
  }
  dp_arena *arena = dp_arena_new(0);
  dp_diags diags;
  dp_diags_init(&diags, arena, "window_test.sql", NULL, 0);
  dp_source src = {0};
  src.cls = dp_source_find("filesystem");
  src.db = db;
  src.table = t;
  src.schema = &t->schema;
  src.diags = &diags;
  dp_batch *b = dp_batch_new(&t->schema, 0);
  int rc = src.cls->open(&src);
  CHECK_EQ(rc, DIPPER_OK);
  int64_t next = 0, wrong = 0;
  bool exhausted = false;
  while (rc == DIPPER_OK && !exhausted) {
    rc = src.cls->plan_batch(&src, 0, &exhausted);
    bool done = false;
    while (rc == DIPPER_OK && !done) {
      dp_batch_clear(b);
      rc = src.cls->read(&src, b, 100, &done);
      for (int64_t r = 0; rc == DIPPER_OK && r < b->nrows; r++, next++) {
        int64_t id = dp_vector_get_i64(b->cols[0], r);
        size_t n;
        dp_vector_get_str(b->cols[1], r, &n);
        double amount = dp_vector_get_f64(b->cols[2], r);
        int64_t ts = dp_vector_get_i64(b->cols[3], r);
        int64_t want_ts = 1704067200000000LL + (id % 60) * 1000000LL + (id % 1000) * 1000LL;
        if (id != next || id >= NREC || n != pad_len[id] || amount != (double)amount_cents[id] / 100.0 ||
            ts != want_ts) {
          if (wrong++ < 3)
            fprintf(stderr, "%s row %lld: id %lld, %zu bytes, amount %.17g, ts %lld\n", format,
                    (long long)next, (long long)id, n, amount, (long long)ts);
        }
      }
    }
    if (rc == DIPPER_OK) rc = src.cls->commit(&src);
  }
  if (rc != DIPPER_OK) fprintf(stderr, "%s: %s\n", format, diags.count ? diags.items[0].message : "?");
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(wrong, 0);
  CHECK_EQ(next, NREC);
  src.cls->close(&src);
  dp_batch_free(b);
  dp_arena_free(arena);
  dipper_program_free(prog);
  dipper_close(db);
}

TEST(records_across_the_window) {
  char dir[] = "/tmp/dipper-window-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[200];
  snprintf(path, sizeof path, "%s/in.jsonl", dir);
  CHECK(write_records(path, false));
  scan_and_check(path, "json");
  unlink(path);
  snprintf(path, sizeof path, "%s/in.csv", dir);
  CHECK(write_records(path, true));
  scan_and_check(path, "csv");
  unlink(path);
  rmdir(dir);
}

int main(void) { return RUN_TESTS(); }
