/*
** torture.c — allocation-failure injection over the compiler and the engine
** (curl's torture mode, SQLite's malloc tests).
**
** The test binary is linked with -Wl,--wrap for malloc, calloc, realloc,
** strdup and strndup, so every allocation libdipper.a makes comes through
** the wrappers below (the C library's own, and librdkafka's, do not).  Each
** scenario runs once to count its allocations, then once per allocation n
** with the n-th one failing.  Every run must end in DIPPER_OK (the failure
** was absorbed: an optional cache, say) or DIPPER_NOMEM, leave nothing
** allocated (LeakSanitizer checks at exit) and never crash; a later run in the
** same process checks that nothing global was left half-built.  Arenas run
** tight (core/arena.h): each of their allocations is a malloc of its own.
**
** usage: torture [scenario ...] [--stride N] [--from N]
**   scenarios: compile, execute, stream (default: all)
**   --stride N  fail every N-th allocation only (default: about 400 runs)
** Environment: DIPPER_TORTURE_VERBOSE=1 prints each run, DIPPER_TORTURE_STACK=1
** the stack of each failing allocation (with --from N --stride <big>: one).
*/
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/arena.h"
#include "dipper.h"

/* ---- the wrappers ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static _Atomic int64_t allocs;   /* allocations counted since arming */
static _Atomic int64_t fail_at;  /* the allocation to fail (1-based), 0: none */
static _Atomic int failed;       /* the armed allocation was reached */

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#elif defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#endif
#ifdef HAVE_ASAN
void __sanitizer_print_stack_trace(void);
#endif
static int show_stack; /* DIPPER_TORTURE_STACK: where each failing allocation is */

static int should_fail(void) {
  int64_t n = atomic_fetch_add(&allocs, 1) + 1;
  if (n == atomic_load(&fail_at)) {
    atomic_store(&failed, 1);
    errno = ENOMEM; /* as the C library's allocator says it */
#ifdef HAVE_ASAN
    if (show_stack) __sanitizer_print_stack_trace();
#endif
    return 1;
  }
  return 0;
}

void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { return should_fail() ? NULL : __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) {
  /* realloc(p, 0) frees on glibc: not a point that can fail */
  if (n == 0) return __real_realloc(p, n);
  return should_fail() ? NULL : __real_realloc(p, n);
}
char *__wrap_strdup(const char *s) { return should_fail() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) {
  return should_fail() ? NULL : __real_strndup(s, n);
}

/* ---- scenarios ---- */

/* What a run produced, as one FNV-1a hash: a run that returns DIPPER_OK
** with an allocation failed must have produced what a clean run does (no
** failure swallowed into a shorter EXPLAIN or a lost row). */
static uint64_t fingerprint;

static void mix(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) fingerprint = (fingerprint ^ c[i]) * 0x100000001b3ull;
}

typedef struct scenario {
  const char *name;
  int (*run)(char *err, size_t cap); /* a DIPPER_* code; err says where */
} scenario;

static void note(char *err, size_t cap, dipper *db, const char *what) {
  snprintf(err, cap, "%s: %s", what, db ? dipper_errmsg(db) : "no handle");
}

/* Compile, explain, free: the lexer, parser, binder, analysis, validation
** and EXPLAIN over a script that reaches most of the language. */
static const char compile_sql[] =
    "CREATE TABLE pay (id BIGINT, province INT, amount DOUBLE, note STRING,\n"
    "  ts TIMESTAMP(3), tags ARRAY<STRING>, attrs ROW<a INT, b STRING>,\n"
    "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)\n"
    "WITH ('connector' = 'datagen', 'number-of-rows' = '1000',\n"
    "      'fields.province.min' = '1', 'fields.province.max' = '9');\n"
    "CREATE TABLE prov (id INT, name STRING) WITH ('connector' = 'filesystem',\n"
    "  'path' = '/nonexistent-torture', 'format' = 'csv');\n"
    "CREATE VIEW big AS SELECT id, province, amount * 2 AS twice, UPPER(note) AS n,\n"
    "  CASE WHEN amount > 10 THEN 'big' ELSE 'small' END AS size, ts FROM pay\n"
    "  WHERE amount BETWEEN 1 AND 100 AND note LIKE 'a%' AND province IN (1, 2, 3);\n"
    "CREATE TABLE out1 (province INT, ws TIMESTAMP(3), we TIMESTAMP(3), total DOUBLE,\n"
    "  n BIGINT) WITH ('connector' = 'blackhole');\n"
    "INSERT INTO out1 SELECT province, window_start, window_end, SUM(twice), COUNT(*)\n"
    "  FROM TABLE(HOP(TABLE big, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))\n"
    "  GROUP BY province, window_start, window_end;\n"
    "SELECT p.id, q.name, COALESCE(p.note, 'x') FROM pay p JOIN prov q\n"
    "  ON p.province = q.id;\n"
    "SELECT a.id, b.id FROM pay a JOIN pay b ON a.id = b.id\n"
    "  AND a.ts BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts;\n"
    "SELECT * FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY province ORDER BY ts) AS rn\n"
    "  FROM pay) WHERE rn = 1;\n"
    "WITH t AS (SELECT province, MAX(amount) AS m FROM pay GROUP BY province)\n"
    "  SELECT province FROM t WHERE m > (SELECT AVG(amount) FROM pay)\n"
    "  UNION ALL SELECT 1;\n"
    "SELECT id, CAST(amount AS DECIMAL(10, 2)), DATE_FORMAT(ts, 'yyyy-MM-dd'),\n"
    "  attrs.a, tags[1], CARDINALITY(tags) FROM pay;\n";

static int run_compile(char *err, size_t cap) {
  dipper *db = NULL;
  int rc = dipper_open(&db, NULL);
  if (rc) {
    snprintf(err, cap, "dipper_open");
    return rc;
  }
  dipper_program *prog = NULL;
  rc = dipper_compile(db, compile_sql, (size_t)-1, "torture.sql", &prog);
  if (rc) {
    /* the diagnostics must be renderable even after a failure */
    int nd = dipper_diag_count(db);
    for (int i = 0; i < nd; i++) dipper_free(dipper_diag_render(db, i));
    note(err, cap, db, "dipper_compile");
  } else {
    char *text = NULL;
    rc = dipper_explain(prog, DIPPER_EXPLAIN_DEFAULT, &text);
    if (rc) note(err, cap, db, "dipper_explain");
    else mix(text, strlen(text));
    dipper_free(text);
  }
  dipper_program_free(prog);
  dipper_close(db);
  return rc;
}

/* Batch execution: aggregation, join, sort, a window function, set
** operations, DISTINCT and LIMIT over VALUES and a bounded generator, with
** the Arrow stream read to its end. */
static const char execute_sql[] =
    "SET 'execution.runtime-mode' = 'batch';\n"
    "CREATE TABLE gen (k INT, v BIGINT, s STRING) WITH ('connector' = 'datagen',\n"
    "  'number-of-rows' = '3000', 'fields.k.min' = '1', 'fields.k.max' = '50',\n"
    "  'fields.s.length' = '6', 'seed' = '7');\n"
    "CREATE VIEW dim AS SELECT * FROM (VALUES (1, 'one'), (2, 'two'), (3, 'three'))\n"
    "  AS t(id, name);\n"
    "SELECT g.k, d.name, COUNT(*) AS n, SUM(g.v) AS total, MIN(s), MAX(s)\n"
    "  FROM gen g LEFT JOIN dim d ON g.k = d.id GROUP BY g.k, d.name\n"
    "  ORDER BY n DESC, g.k LIMIT 20;\n"
    "SELECT k, v, RANK() OVER (PARTITION BY k ORDER BY v) FROM gen ORDER BY k, v LIMIT 50;\n"
    "SELECT DISTINCT k FROM gen EXCEPT SELECT id FROM dim;\n"
    "SELECT k, LISTAGG(s) FROM (SELECT k, s FROM gen WHERE k < 3) GROUP BY k;\n";

static int drain(struct ArrowArrayStream *st, char *err, size_t cap) {
  int rc = DIPPER_OK;
  struct ArrowSchema schema;
  if (st->get_schema(st, &schema) != 0) {
    snprintf(err, cap, "get_schema: %s", st->get_last_error(st));
    rc = DIPPER_NOMEM;
  } else {
    for (;;) {
      struct ArrowArray a;
      if (st->get_next(st, &a) != 0) {
        snprintf(err, cap, "get_next: %s", st->get_last_error(st));
        rc = DIPPER_NOMEM;
        break;
      }
      if (!a.release) break;
      char **cells = NULL;
      int frc = dipper_format_values(&schema, &a, 0, &cells);
      if (frc) {
        snprintf(err, cap, "dipper_format_values: %s", dipper_strerror(frc));
        rc = frc;
      } else {
        for (int64_t i = 0; i < a.length * a.n_children; i++) mix(cells[i], strlen(cells[i]) + 1);
      }
      dipper_free(cells);
      a.release(&a);
      if (rc) break;
    }
    schema.release(&schema);
  }
  st->release(st);
  return rc;
}

static int run_execute(char *err, size_t cap) {
  dipper *db = NULL;
  int rc = dipper_open(&db, NULL);
  if (rc) {
    snprintf(err, cap, "dipper_open");
    return rc;
  }
  dipper_program *prog = NULL;
  rc = dipper_compile(db, execute_sql, (size_t)-1, "execute.sql", &prog);
  if (rc) note(err, cap, db, "dipper_compile");
  int n = rc ? 0 : dipper_program_count(prog);
  for (int i = 0; i < n && !rc; i++) {
    struct ArrowArrayStream st;
    rc = dipper_execute(prog, i, &st);
    if (rc) note(err, cap, db, "dipper_execute");
    else rc = drain(&st, err, cap);
  }
  dipper_program_free(prog);
  dipper_close(db);
  return rc;
}

/* Streaming with checkpoints: a windowed aggregation and a deduplication
** over a bounded generator, checkpointed every batch: three batches, a stop,
** and a restart on the same folder that restores the state and runs to the
** end (its totals are the fingerprint). */
static char ckpt_dir[256];

static const char stream_sql_fmt[] =
    "SET 'execution.checkpointing.dir' = '%s';\n"
    "SET 'dipper.max-batch-rows' = '500';\n"
    "CREATE TABLE ev (k INT, v BIGINT, ts TIMESTAMP(3),\n"
    "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen',\n"
    "  'number-of-rows' = '%d', 'fields.k.min' = '1', 'fields.k.max' = '20', 'seed' = '7');\n"
    "CREATE TABLE agg (k INT, ws TIMESTAMP(3), total BIGINT) WITH ('connector' = 'blackhole');\n"
    "CREATE TABLE firsts (k INT, v BIGINT) WITH ('connector' = 'blackhole');\n"
    "EXECUTE STATEMENT SET BEGIN\n"
    "INSERT INTO agg SELECT k, window_start, SUM(v)\n"
    "  FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND))\n"
    "  GROUP BY k, window_start, window_end;\n"
    "INSERT INTO firsts SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k\n"
    "  ORDER BY ts) AS rn FROM ev) WHERE rn = 1;\n"
    "END;\n";

static void on_progress(void *user, const dipper_progress *p) {
  (void)user;
  if (!p->finished) return;
  mix(p->name, strlen(p->name));
  mix(&p->total_output_rows, sizeof p->total_output_rows);
  mix(&p->state_rows, sizeof p->state_rows);
}

/* One run on the checkpoint folder: `steps` micro-batches of each query
** (then a stop, as a kill between batches would leave it), or to the end
** when steps is 0. */
static int stream_once(int steps, char *err, size_t cap) {
  char sql[sizeof stream_sql_fmt + 300];
  snprintf(sql, sizeof sql, stream_sql_fmt, ckpt_dir, 4000);
  dipper *db = NULL;
  int rc = dipper_open(&db, NULL);
  if (rc) {
    snprintf(err, cap, "dipper_open");
    return rc;
  }
  dipper_program *prog = NULL;
  rc = dipper_compile(db, sql, (size_t)-1, "stream.sql", &prog);
  if (rc) note(err, cap, db, "dipper_compile");
  if (!rc && steps == 0 && (rc = dipper_run(prog, on_progress, NULL)))
    note(err, cap, db, "dipper_run");
  if (!rc && steps > 0) {
    dipper_query **qs = NULL;
    int n = 0;
    if ((rc = dipper_query_start(prog, &qs, &n))) note(err, cap, db, "dipper_query_start");
    for (int i = 0; i < n && !rc; i++)
      for (int k = 0, fin = 0; k < steps && !fin && !rc; k++)
        if ((rc = dipper_query_step(qs[i], &fin))) note(err, cap, db, "dipper_query_step");
    dipper_query_free_all(qs, n);
  }
  dipper_program_free(prog);
  dipper_close(db);
  return rc;
}

static int run_stream(char *err, size_t cap) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", ckpt_dir);
  if (system(cmd) != 0) return DIPPER_IO;
  int rc = stream_once(3, err, cap);   /* three batches of 500 rows, then a stop */
  if (!rc) rc = stream_once(0, err, cap); /* a restart from there to the end */
  return rc;
}

static const scenario scenarios[] = {
    {"compile", run_compile},
    {"execute", run_execute},
    {"stream", run_stream},
};

/* ---- the driver ---- */

static int torture(const scenario *sc, int64_t stride, int64_t from) {
  char err[1024] = "";
  atomic_store(&fail_at, 0);
  atomic_store(&allocs, 0);
  fingerprint = 0xcbf29ce484222325ull;
  int rc = sc->run(err, sizeof err);
  int64_t total = atomic_load(&allocs);
  uint64_t clean = fingerprint;
  if (rc) {
    fprintf(stderr, "torture %s: the run without failures failed (%s): %s\n", sc->name,
            dipper_strerror(rc), err);
    return 1;
  }
  int64_t step = stride > 0 ? stride : (total / 400 > 1 ? total / 400 : 1);
  int bad = 0, verbose = getenv("DIPPER_TORTURE_VERBOSE") != NULL;
  int64_t runs = 0, absorbed = 0;
  for (int64_t n = from > 0 ? from : 1; n <= total; n += step) {
    err[0] = 0;
    atomic_store(&allocs, 0);
    atomic_store(&failed, 0);
    atomic_store(&fail_at, n);
    fingerprint = 0xcbf29ce484222325ull;
    if (verbose) fprintf(stderr, "torture %s: failing allocation %lld\n", sc->name, (long long)n);
    rc = sc->run(err, sizeof err);
    atomic_store(&fail_at, 0);
    runs++;
    if (rc == DIPPER_OK && atomic_load(&failed) && fingerprint != clean) {
      fprintf(stderr,
              "torture %s: allocation %lld of %lld failed, the call said OK, and its output "
              "differs from a clean run's\n",
              sc->name, (long long)n, (long long)total);
      if (++bad >= 10) break;
    } else if (rc == DIPPER_OK) {
      absorbed++;
    } else if (rc != DIPPER_NOMEM) {
      fprintf(stderr,
              "torture %s: allocation %lld of %lld failed, and the call said %s instead of "
              "out of memory: %s\n",
              sc->name, (long long)n, (long long)total, dipper_strerror(rc), err);
      if (++bad >= 10) break;
    }
  }
  /* the handle's global state must still work after all that */
  err[0] = 0;
  fingerprint = 0xcbf29ce484222325ull;
  if ((rc = sc->run(err, sizeof err)) != DIPPER_OK || fingerprint != clean) {
    fprintf(stderr, "torture %s: a clean run after the failures %s: %s\n", sc->name,
            rc ? "failed" : "gave another output", err);
    bad++;
  }
  printf("torture %s: %lld allocations, %lld runs with one failing (every %lld-th), %lld "
         "absorbed, %d wrong\n",
         sc->name, (long long)total, (long long)runs, (long long)step, (long long)absorbed, bad);
  return bad != 0;
}

int main(int argc, char **argv) {
  int64_t stride = 0, from = 0;
  show_stack = getenv("DIPPER_TORTURE_STACK") != NULL;
  dp_arena_set_tight(true); /* each arena allocation a failure point of its own */
  const char *only[8];
  int nonly = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--stride") && i + 1 < argc) stride = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--from") && i + 1 < argc) from = atoll(argv[++i]);
    else if (nonly < 8) only[nonly++] = argv[i];
  }
  snprintf(ckpt_dir, sizeof ckpt_dir, "%s/dipper-torture-%d",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  int bad = 0;
  for (size_t s = 0; s < sizeof scenarios / sizeof scenarios[0]; s++) {
    int want = nonly == 0;
    for (int i = 0; i < nonly; i++) want |= !strcmp(only[i], scenarios[s].name);
    if (want) bad |= torture(&scenarios[s], stride, from);
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", ckpt_dir);
  if (system(cmd) != 0) bad = 1;
  return bad;
}
