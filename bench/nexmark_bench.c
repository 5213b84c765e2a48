/*
** nexmark_bench.c — the embedded engine end to end on the Nexmark queries:
** q0 (pass-through), q1 (projection), q2 (filter), the windowed count at the
** core of q5, and the seed pipeline (examples/payments_local.sql on datagen,
** into a blackhole), each over N generated events.
**
**   scripts/bench --events N     or
**   build/bench/bench_nexmark_bench [--events N] [--runs R] [--query NAME]...
**
** Each query runs through the public API (dipper_open, dipper_compile,
** dipper_run) in a child process of its own, so that its peak RSS
** (getrusage's ru_maxrss) is its own and a crash is reported, not fatal.
** The SQL is read from bench/queries/ (nexmark.sql declares the source; the
** 'events.num' / 'number-of-rows' option is rewritten to N).  The engine is
** single-threaded, so events per second of CPU time (user + system) is the
** per-core throughput; wall time is shown too, and differs on a busy
** machine.  One more line, `source`, drives the nexmark generator alone (as
** the scan does: plan, read 4096-row chunks, commit) to separate its cost
** from the engine's.  With --runs R each query runs R times and the median
** by CPU time is shown.  --checkpoint compares runs with and without a
** checkpoint after every batch; --per-batch prints the CPU time of a batch
** early and late in a run whose state grows (join_big: an interval join
** that holds 2-3 M rows), to show that a batch costs what it changes.
*/
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/dipper_int.h"
#include "connectors/connector.h"
#include "core/vector.h"
#include "dipper.h"

#ifndef DIPPER_SOURCE_DIR
#define DIPPER_SOURCE_DIR "."
#endif

typedef struct bench_query {
  const char *name;
  const char *files[2];  /* SQL files of bench/queries, compiled in order */
  const char *what;
  const char *published; /* Flink's per-core figure from the Nexmark project */
} bench_query;

static const bench_query queries[] = {
    {"source", {"nexmark.sql", NULL}, "nexmark generator alone, no engine", "-"},
    {"q0", {"nexmark.sql", "q0.sql"}, "pass-through into blackhole", "~155-175 K"},
    {"q1", {"nexmark.sql", "q1.sql"}, "projection, price * 0.908", "~155-175 K"},
    {"q2", {"nexmark.sql", "q2.sql"}, "filter MOD(auction, 123) = 0", "~155-175 K"},
    {"q5_count", {"nexmark.sql", "q5_count.sql"}, "count per auction, HOP 10 s / 2 s",
     "~22 K (all q5)"},
    {"join", {"nexmark.sql", "join_interval.sql"}, "bids x auctions, interval join 10 s", "-"},
    {"join_big", {"nexmark.sql", "join_big.sql"}, "the same within 300 s: 2-3 M rows kept", "-"},
    {"dedup", {"nexmark.sql", "dedup.sql"}, "first bid per bidder (ROW_NUMBER = 1)", "-"},
    {"distinct", {"nexmark.sql", "distinct.sql"}, "DISTINCT bidder, auction per TUMBLE 10 s", "-"},
    {"session", {"nexmark.sql", "session.sql"}, "q11: bids per bidder, SESSION 10 s", "-"},
    {"payments", {"payments.sql", NULL}, "seed pipeline on datagen, HOP sums", "-"},
    {"state_big", {"state_big.sql", NULL}, "GROUP BY k over N distinct keys, kept", "-"},
    {"distinct_many", {"distinct_many.sql", NULL}, "COUNT(DISTINCT v) of 10 kept groups, N/10 values each", "-"},
    {"distinct_few", {"distinct_few.sql", NULL}, "COUNT(DISTINCT v) of 200 K kept groups, <= 8 values each", "-"},
};
#define NQUERIES (int)(sizeof queries / sizeof queries[0])

/* The queries a run without --query leaves out: join_big (its state grows for
** minutes), distinct_many and distinct_few (a state backend's cases,
** docs/benchmarks.md). */
static bool only_when_named(const char *name) {
  return strcmp(name, "join_big") == 0 || strcmp(name, "distinct_many") == 0 ||
         strcmp(name, "distinct_few") == 0;
}

/* What a child reports to the parent through a pipe. */
typedef struct result {
  int rc;
  double start_s;      /* --checkpoint, the restart: dipper_query_start, which restores */
  double start_cpu_s;  /* its CPU time (user + system): steadier on a busy machine */
  int64_t events;      /* rows the sources gave */
  int64_t rows_out;
  int64_t batches;
  int64_t ckpt_bytes, ckpt_us;  /* --checkpoint: over all batches */
  double wall_s, cpu_s;
  long max_rss_kb;
  /* --per-batch: CPU ms per batch and state rows, averaged over the first
  ** and the last batches (sum_batches), and the most any one batch took */
  double early_ms, late_ms, max_ms;
  int64_t early_state, late_state;
  char error[512];
} result;

/* ---- small helpers ---- */

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(const struct rusage *u) {
  return (double)u->ru_utime.tv_sec + (double)u->ru_utime.tv_usec / 1e6 +
         (double)u->ru_stime.tv_sec + (double)u->ru_stime.tv_usec / 1e6;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) {
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  *len = n;
  return buf;
}

/* Replace the value of option `key` ('key' = '...') with `value`, in place
** when it fits; returns the new text (maybe reallocated) or NULL. */
static char *set_option(char *sql, const char *key, const char *value) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "'%s' = '", key);
  char *at = strstr(sql, pattern);
  if (!at) return sql;
  char *start = at + strlen(pattern), *end = strchr(start, '\'');
  if (!end) return sql;
  size_t head = (size_t)(start - sql), tail = strlen(end), vlen = strlen(value);
  char *out = malloc(head + vlen + tail + 1);
  if (!out) return NULL;
  memcpy(out, sql, head);
  memcpy(out + head, value, vlen);
  memcpy(out + head + vlen, end, tail + 1);
  free(sql);
  return out;
}

static void fail(result *r, int rc, const char *what, dipper *db) {
  r->rc = rc ? rc : DIPPER_INTERNAL;
  snprintf(r->error, sizeof r->error, "%s: %s", what,
           db && dipper_errmsg(db)[0] ? dipper_errmsg(db) : dipper_strerror(r->rc));
}

/* --checkpoint: the checkpoint folder of the run, or NULL (none). */
static const char *checkpoint_dir;
/* --state-backend: 'state.backend' for every query, or NULL (the default). */
static const char *state_backend;
/* --threads: 'parallelism.default' of the run, or 0 (the default). */
static int parallelism;

/* Compile the query's files into db; NULL (and r->error) on failure. */
static dipper_program *compile_query(const bench_query *q, const char *dir, long long events,
                                     dipper *db, result *r) {
  char *sql = NULL;
  size_t total = 0;
  if (checkpoint_dir) {
    char set[4200];
    int n = snprintf(set, sizeof set, "SET 'execution.checkpointing.dir' = '%s';\n", checkpoint_dir);
    if (n < 0 || (size_t)n >= sizeof set || !(sql = strdup(set))) {
      fail(r, DIPPER_NOMEM, "the checkpoint folder", NULL);
      return NULL;
    }
    total = (size_t)n;
  }
  if (state_backend || parallelism > 0) {
    char set[200];
    int n = 0;
    if (state_backend) n = snprintf(set, sizeof set, "SET 'state.backend' = '%s';\n", state_backend);
    if (parallelism > 0 && n >= 0 && (size_t)n < sizeof set)
      n += snprintf(set + n, sizeof set - (size_t)n, "SET 'parallelism.default' = '%d';\n",
                    parallelism);
    char *joined = n > 0 && (size_t)n < sizeof set ? realloc(sql, total + (size_t)n + 1) : NULL;
    if (!joined) {
      free(sql);
      fail(r, DIPPER_NOMEM, "the state backend", NULL);
      return NULL;
    }
    sql = joined;
    memcpy(sql + total, set, (size_t)n + 1);
    total += (size_t)n;
  }
  for (int i = 0; i < 2 && q->files[i]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, q->files[i]);
    size_t n;
    char *text = read_file(path, &n);
    if (!text) {
      r->rc = DIPPER_IO;
      snprintf(r->error, sizeof r->error, "cannot read %.300s: %s", path, strerror(errno));
      free(sql);
      return NULL;
    }
    char *joined = realloc(sql, total + n + 2);
    if (!joined) {
      free(text);
      free(sql);
      fail(r, DIPPER_NOMEM, "reading the queries", NULL);
      return NULL;
    }
    sql = joined;
    memcpy(sql + total, text, n);
    total += n;
    sql[total++] = '\n';
    sql[total] = '\0';
    free(text);
  }
  char count[32];
  snprintf(count, sizeof count, "%lld", events);
  sql = set_option(sql, "events.num", count);
  if (sql) sql = set_option(sql, "number-of-rows", count);
  if (!sql) {
    fail(r, DIPPER_NOMEM, "reading the queries", NULL);
    return NULL;
  }
  dipper_program *prog = NULL;
  int rc = dipper_compile(db, sql, (size_t)-1, q->files[q->files[1] ? 1 : 0], &prog);
  free(sql);
  if (rc != DIPPER_OK) {
    fail(r, rc, "compile", db);
    return NULL;
  }
  return prog;
}

/* ---- the measured runs ---- */

/* --per-batch: each batch's CPU time and state rows, in the child. */
#define MAX_BATCH_SAMPLES 65536
static bool per_batch;
static double batch_cpu_ms[MAX_BATCH_SAMPLES];
static int64_t batch_state[MAX_BATCH_SAMPLES];
static int nbatch_samples;
static double last_cpu_s;

static void on_progress(void *user, const dipper_progress *p) {
  result *r = user;
  if (per_batch) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    double now = cpu_s(&u);
    if (nbatch_samples < MAX_BATCH_SAMPLES) {
      batch_cpu_ms[nbatch_samples] = (now - last_cpu_s) * 1e3;
      batch_state[nbatch_samples++] = p->state_rows;
    }
    last_cpu_s = now;
  }
  r->events = p->total_input_rows;
  r->rows_out = p->total_output_rows;
  r->batches = p->batch_id + 1;
  r->ckpt_bytes += p->checkpoint_bytes;
  r->ckpt_us += p->checkpoint_us;
}

/* A restart on the checkpoint folder of a finished run: the time
** dipper_query_start takes to restore the state. */
static void run_restart(const bench_query *q, const char *dir, long long events, result *r) {
  dipper *db = NULL;
  int rc = dipper_open(&db, NULL);
  if (rc != DIPPER_OK) {
    fail(r, rc, "open", NULL);
    return;
  }
  dipper_program *prog = compile_query(q, dir, events, db, r);
  if (prog) {
    dipper_query **qs = NULL;
    int n = 0;
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    double t0 = mono_s();
    rc = dipper_query_start(prog, &qs, &n);
    r->start_s = mono_s() - t0;
    getrusage(RUSAGE_SELF, &u1);
    r->start_cpu_s = cpu_s(&u1) - cpu_s(&u0);
    if (rc != DIPPER_OK) fail(r, rc, "restart", db);
    dipper_query_free_all(qs, n);
    dipper_program_free(prog);
  }
  dipper_close(db);
}

/* Averages of the first and the last twentieth of the batches (at least 3
** each), leaving out the first batch (it opens the operators) and the last
** (the end of the input: every row left in the state leaves with it). */
static void sum_batches(result *r) {
  int first = 1, last = nbatch_samples - 2, n = last - first + 1;
  if (n < 6) return;
  int k = n / 20 > 3 ? n / 20 : 3;
  for (int i = 0; i < k; i++) {
    r->early_ms += batch_cpu_ms[first + i] / k;
    r->early_state += batch_state[first + i] / k;
    r->late_ms += batch_cpu_ms[last - i] / k;
    r->late_state += batch_state[last - i] / k;
  }
  for (int i = first; i <= last; i++)
    if (batch_cpu_ms[i] > r->max_ms) r->max_ms = batch_cpu_ms[i];
}

static void run_engine(const bench_query *q, const char *dir, long long events, result *r) {
  dipper *db = NULL;
  int rc = dipper_open(&db, NULL);
  if (rc != DIPPER_OK) {
    fail(r, rc, "open", NULL);
    return;
  }
  dipper_program *prog = compile_query(q, dir, events, db, r);
  if (prog) {
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    last_cpu_s = cpu_s(&u0);
    double t0 = mono_s();
    rc = dipper_run(prog, on_progress, r);
    r->wall_s = mono_s() - t0;
    getrusage(RUSAGE_SELF, &u1);
    r->cpu_s = cpu_s(&u1) - cpu_s(&u0);
    if (per_batch) sum_batches(r);
    if (rc != DIPPER_OK) fail(r, rc, "run", db);
    dipper_program_free(prog);
  }
  dipper_close(db);
}

/* The generator alone, read the way the scan reads it. */
static void run_source(const bench_query *q, const char *dir, long long events, result *r) {
  dipper *db = NULL;
  int rc = dipper_open(&db, NULL);
  if (rc != DIPPER_OK) {
    fail(r, rc, "open", NULL);
    return;
  }
  dipper_program *prog = compile_query(q, dir, events, db, r);
  const dp_table_def *t = prog ? dp_catalog_table(db->catalog, "datagen") : NULL;
  dp_arena *arena = dp_arena_new(0);
  if (prog && (!t || !arena)) fail(r, DIPPER_INTERNAL, "the table `datagen` of nexmark.sql", db);
  if (t && arena) {
    dp_diags diags;
    dp_diags_init(&diags, arena, "nexmark.sql", NULL, 0);
    dp_schema scan = {0, dp_arena_calloc(arena, (size_t)t->schema.ncols, sizeof(dp_field))};
    for (int i = 0; i < t->schema.ncols; i++)
      if (t->cols[i].kind == DP_CK_PHYSICAL) scan.cols[scan.ncols++] = t->schema.cols[i];
    dp_source src = {0};
    src.cls = dp_source_find("nexmark");
    src.db = db;
    src.table = t;
    src.schema = &scan;
    src.diags = &diags;
    dp_batch *b = dp_batch_new(&scan, 4096);
    rc = src.cls && b ? src.cls->open(&src) : DIPPER_INTERNAL;
    if (rc == DIPPER_OK) {
      struct rusage u0, u1;
      getrusage(RUSAGE_SELF, &u0);
      double t0 = mono_s();
      bool exhausted = false;
      while (rc == DIPPER_OK && !exhausted) {
        rc = src.cls->plan_batch(&src, INT64_C(1) << 20, &exhausted);
        bool done = false;
        while (rc == DIPPER_OK && !done) {
          dp_batch_clear(b);
          rc = src.cls->read(&src, b, 4096, &done);
        }
        if (rc == DIPPER_OK) rc = src.cls->commit(&src);
        r->batches++;
      }
      r->wall_s = mono_s() - t0;
      getrusage(RUSAGE_SELF, &u1);
      r->cpu_s = cpu_s(&u1) - cpu_s(&u0);
      r->events = r->rows_out = src.metrics.rows;
      src.cls->close(&src);
    }
    if (rc != DIPPER_OK)
      snprintf(r->error, sizeof r->error, "nexmark source: %s",
               diags.count ? diags.items[0].message : dipper_strerror(rc)),
          r->rc = rc;
    dp_batch_free(b);
  }
  dp_arena_free(arena);
  dipper_program_free(prog);
  dipper_close(db);
}

/* Run one query in a child process; the parent reads its result. */
static result run_isolated(const bench_query *q, const char *dir, long long events, bool restart) {
  result r;
  memset(&r, 0, sizeof r);
  int fds[2];
  pid_t pid = -1;
  fflush(stdout);
  if (pipe(fds) == 0) pid = fork();
  if (pid == 0) {
    close(fds[0]);
    result mine;
    memset(&mine, 0, sizeof mine);
    if (restart)
      run_restart(q, dir, events, &mine);
    else if (strcmp(q->name, "source") == 0)
      run_source(q, dir, events, &mine);
    else
      run_engine(q, dir, events, &mine);
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    mine.max_rss_kb = u.ru_maxrss;
    ssize_t wrote = write(fds[1], &mine, sizeof mine);
    _exit(wrote == (ssize_t)sizeof mine ? 0 : 1);
  }
  if (pid < 0) {
    r.rc = DIPPER_IO;
    snprintf(r.error, sizeof r.error, "cannot start a child process: %s", strerror(errno));
    return r;
  }
  close(fds[1]);
  size_t got = 0;
  while (got < sizeof r) {
    ssize_t n = read(fds[0], (char *)&r + got, sizeof r - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != sizeof r) {
    memset(&r, 0, sizeof r);
    r.rc = DIPPER_INTERNAL;
    snprintf(r.error, sizeof r.error, "the run died (%s %d)",
             WIFSIGNALED(status) ? "signal" : "exit status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  }
  return r;
}

static int by_cpu(const void *a, const void *b) {
  double x = ((const result *)a)->cpu_s, y = ((const result *)b)->cpu_s;
  return (x > y) - (x < y);
}

static int by_wall(const void *a, const void *b) {
  double x = ((const result *)a)->wall_s, y = ((const result *)b)->wall_s;
  return (x > y) - (x < y);
}

/* ---- output ---- */

static void print_rate(double events, double seconds) {
  if (seconds <= 0) {
    printf(" %12s", "-");
    return;
  }
  double rate = events / seconds;
  if (rate >= 1e6)
    printf(" %10.2f M", rate / 1e6);
  else
    printf(" %10.1f K", rate / 1e3);
}

static void print_machine(void) {
  char model[256] = "unknown CPU";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "model name", 10) == 0) {
        const char *colon = strchr(line, ':');
        if (colon) {
          snprintf(model, sizeof model, "%s", colon + 2);
          model[strcspn(model, "\n")] = '\0';
        }
        break;
      }
    fclose(f);
  }
  double load = -1;
  f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1) load = -1;
    fclose(f);
  }
  printf("machine: %ld CPUs, %s; load average %.1f at start\n", sysconf(_SC_NPROCESSORS_ONLN),
         model, load);
}

/* The largest state file under root/<query>/state/ (the newest full one). */
static long long state_file_bytes(const char *root) {
  long long best = 0;
  DIR *d = opendir(root);
  if (!d) return 0;
  struct dirent *q;
  while ((q = readdir(d)) != NULL) {
    if (q->d_name[0] == '.') continue;
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/%s/state", root, q->d_name);
    DIR *s = opendir(sub);
    if (!s) continue;
    struct dirent *f;
    while ((f = readdir(s)) != NULL) {
      char path[4500];
      struct stat sb;
      snprintf(path, sizeof path, "%s/%s", sub, f->d_name);
      if (f->d_name[0] != '.' && stat(path, &sb) == 0 && sb.st_size > best) best = sb.st_size;
    }
    closedir(s);
  }
  closedir(d);
  return best;
}

/* --checkpoint: each query without a checkpoint folder and with one (state
** after every batch), side by side in each run, then a restart on that
** folder, timed: what checkpoints cost and how fast a large state comes
** back. */
static int run_checkpoint_pairs(const bool *wanted, bool any_wanted, const char *dir,
                                long long events, int runs, const char *keep, bool restart_only) {
  static const char *const dflt[] = {"q5_count", "join", "payments", "state_big"};
  printf("%-10s %12s %12s %7s %8s %11s %10s %11s %10s %11s %10s\n", "query", "ev/s/core",
         "with ckpt", "ratio", "batches", "MB/batch", "ms/batch", "state file", "restart s",
         "restore/s", "restart cpu");
  int failures = 0;
  for (int q = 0; q < NQUERIES; q++) {
    bool pick = any_wanted ? wanted[q] : false;
    for (size_t i = 0; !any_wanted && i < sizeof dflt / sizeof dflt[0]; i++)
      pick |= strcmp(queries[q].name, dflt[i]) == 0;
    if (!pick || strcmp(queries[q].name, "source") == 0) continue;
    for (int k = 0; k < runs; k++) {
      char tmp[] = "/tmp/dipper-bench-ckpt-XXXXXX";
      const char *root = keep;
      if (!root && !(root = mkdtemp(tmp))) {
        printf("%-10s cannot make a temporary folder: %s\n", queries[q].name, strerror(errno));
        return 1;
      }
      result off = {0}, on = {0};
      checkpoint_dir = NULL;
      if (!restart_only) off = run_isolated(&queries[q], dir, events, false);
      checkpoint_dir = root;
      if (!restart_only) on = run_isolated(&queries[q], dir, events, false);
      long long bytes = state_file_bytes(root);
      result again = run_isolated(&queries[q], dir, events, true);
      checkpoint_dir = NULL;
      char cmd[200];
      snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
      if (!keep && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
      printf("%-10s", queries[q].name);
      if (restart_only && !again.rc) {
        printf(" %8.1f MB %10.3f %7.0f MB/s (restart only; CPU %.3f s; peak RSS %.0f MB)\n",
               (double)bytes / 1e6, again.start_s,
               again.start_s > 0 ? (double)bytes / 1e6 / again.start_s : 0.0, again.start_cpu_s,
               (double)again.max_rss_kb / 1024.0);
        continue;
      }
      const result *bad = off.rc ? &off : on.rc ? &on : again.rc ? &again : NULL;
      if (bad) {
        printf("  FAILED: %s\n", bad->error);
        failures++;
        continue;
      }
      print_rate((double)off.events, off.cpu_s);
      print_rate((double)on.events, on.cpu_s);
      double nb = on.batches > 0 ? (double)on.batches : 1;
      printf(" %7.2f %8lld %8.2f MB %8.2f ms %8.1f MB %10.3f", off.cpu_s / on.cpu_s,
             (long long)on.batches, (double)on.ckpt_bytes / 1e6 / nb,
             (double)on.ckpt_us / 1e3 / nb, (double)bytes / 1e6, again.start_s);
      if (again.start_s > 0)
        printf(" %7.0f MB/s", (double)bytes / 1e6 / again.start_s);
      else
        printf(" %11s", "-");
      printf(" %10.3f\n", again.start_cpu_s);
    }
  }
  printf("ratio = events per CPU second with a checkpoint after every micro-batch / without "
         "(target >= 0.8);\nMB/batch, ms/batch = the checkpoint files each batch wrote and the "
         "wall time writing them (fsync'd), averaged;\nstate file = the largest state file "
         "written; restart = "
         "dipper_query_start on the folder, which restores it (target: under 1 s per GB),\n"
         "wall and CPU seconds.\n");
  printf("reproduce: scripts/build release && build/bench/bench_nexmark_bench --checkpoint "
         "--events %lld --runs %d%s%s\n",
         events, runs, state_backend ? " --state-backend " : "", state_backend ? state_backend : "");
  return failures ? 1 : 0;
}

static void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--events N] [--runs R] [--query NAME]... [--queries DIR]\n"
          "  --events N    events (rows) per query, default 10000000\n"
          "  --runs R      runs per query; the median by CPU time is shown (default 1)\n"
          "  --query NAME  run only these (source, q0, q1, q2, q5_count, join, join_big, dedup,\n"
          "                session, distinct, payments, state_big, distinct_many, distinct_few;\n"
          "                join_big, distinct_many and distinct_few only when named)\n"
          "  --queries DIR the SQL files (default " DIPPER_SOURCE_DIR "/bench/queries)\n"
          "  --checkpoint  each query without and with a checkpoint after every batch, side by\n"
          "                side, then a timed restart (default queries: q5_count, join,\n"
          "                payments, state_big)\n"
          "  --keep DIR    with --checkpoint: the checkpoint folder in DIR (new or empty), kept\n"
          "                after the run\n"
          "  --restart-only  with --keep: only the timed restart on DIR's folder (e.g. under\n"
          "                valgrind --tool=callgrind)\n"
          "  --threads 1,2 each query on each number of workers ('parallelism.default'),\n"
          "                alternating run by run, with the speedup over the first\n"
          "  --state-backend NAME  'state.backend' for every query (hashmap, in memory, the\n"
          "                default, or rocksdb: keyed state on disk, docs/sql.md)\n"
          "  --per-batch   each query's CPU time per batch while its state is small and once it\n"
          "                is large (default query: join_big)\n",
          argv0);
}

/* --per-batch: per query, the CPU time of a batch while the state is small
** and once it is large; a cost that follows the batch, not the state, stays
** flat. */
static int run_per_batch(const bool *wanted, bool any_wanted, const char *dir, long long events,
                         int runs) {
  per_batch = true;
  printf("%-9s %8s %12s %12s %12s %12s %8s %10s\n", "query", "batches", "state start",
         "ms/batch", "state end", "ms/batch", "end/start", "max ms");
  int failures = 0;
  for (int q = 0; q < NQUERIES; q++) {
    bool pick = any_wanted ? wanted[q] : strcmp(queries[q].name, "join_big") == 0;
    if (!pick || strcmp(queries[q].name, "source") == 0) continue;
    for (int k = 0; k < runs; k++) {
      result r = run_isolated(&queries[q], dir, events, false);
      printf("%-9s", queries[q].name);
      if (r.rc != DIPPER_OK) {
        printf("  FAILED: %s\n", r.error);
        failures++;
        continue;
      }
      printf(" %8lld %12lld %9.2f ms %12lld %9.2f ms %8.2f %7.1f ms\n", (long long)r.batches,
             (long long)r.early_state, r.early_ms, (long long)r.late_state, r.late_ms,
             r.early_ms > 0 ? r.late_ms / r.early_ms : 0.0, r.max_ms);
    }
  }
  printf("ms/batch = CPU time per micro-batch (user + system), averaged over the first and the "
         "last twentieth of the batches\n(at least 3; the first and the final batch aside); "
         "state = the rows the stateful operators hold then;\nmax = the most CPU one batch "
         "took (the final one aside).\n");
  printf("reproduce: scripts/build release && build/bench/bench_nexmark_bench --per-batch "
         "--events %lld\n", events);
  return failures ? 1 : 0;
}

/* The control of --threads: a fixed count of register-only loop steps
** shared among `threads` threads, timed like a query.  Its speedup is what
** the machine gives this process at that moment (other sessions' load
** included): the ceiling of any query's speedup in the same run. */
#define SPIN_STEPS 600000000UL

static void *spin_share(void *arg) {
  unsigned long n = *(const unsigned long *)arg;
  volatile unsigned long x = 0;
  for (unsigned long i = 0; i < n; i++) x += i;
  return NULL;
}

static result run_spin(int threads) {
  result r;
  memset(&r, 0, sizeof r);
  pthread_t t[256];
  unsigned long share = SPIN_STEPS / (unsigned long)threads;
  struct rusage u0, u1;
  getrusage(RUSAGE_SELF, &u0);
  double t0 = mono_s();
  int started = 0;
  for (int i = 0; i < threads; i++)
    if (pthread_create(&t[i], NULL, spin_share, &share) == 0) started++;
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  r.wall_s = mono_s() - t0;
  getrusage(RUSAGE_SELF, &u1);
  r.cpu_s = cpu_s(&u1) - cpu_s(&u0);
  r.rc = started == threads ? DIPPER_OK : DIPPER_IO;
  if (r.rc) snprintf(r.error, sizeof r.error, "cannot start %d threads", threads);
  return r;
}

static void print_spin(const int *threads, int nthreads, int runs) {
  double wall1 = 0, cpu1 = 0;
  for (int t = 0; t < nthreads; t++) {
    result all[100];
    for (int k = 0; k < runs; k++) all[k] = run_spin(threads[t]);
    qsort(all, (size_t)runs, sizeof all[0], by_wall);
    const result *r = &all[runs / 2];
    if (t == 0) {
      wall1 = r->wall_s;
      cpu1 = r->cpu_s;
    }
    printf("%-9s %7d %12s %12s %8.2f %8.2f %9s %10s %8.2fx %8.2fx\n", "(control)", threads[t], "-",
           "-", r->cpu_s, r->wall_s, "-", "-", r->wall_s > 0 ? wall1 / r->wall_s : 0.0,
           cpu1 > 0 ? r->cpu_s / cpu1 : 0.0);
  }
}

/* --threads 1,2: each query on each number of workers, alternating run by
** run, the median by wall time of each, and the speedup over the first. */
static int run_thread_sets(const bool *wanted, bool any_wanted, const char *dir, long long events,
                           int runs, const int *threads, int nthreads) {
  printf("%-9s %7s %12s %12s %8s %8s %9s %10s %9s %9s\n", "query", "threads", "ev/s wall",
         "ev/s/CPU s", "CPU s", "wall s", "peak RSS", "rows out", "speedup", "CPU x");
  int failures = 0;
  print_spin(threads, nthreads, runs);
  for (int q = 0; q < NQUERIES; q++) {
    if (any_wanted ? !wanted[q] : only_when_named(queries[q].name)) continue;
    if (strcmp(queries[q].name, "source") == 0) continue;
    static result all[8][100];
    for (int k = 0; k < runs; k++)
      for (int t = 0; t < nthreads; t++) {
        parallelism = threads[t];
        all[t][k] = run_isolated(&queries[q], dir, events, false);
      }
    double wall1 = 0, cpu1 = 0;
    long long rows1 = -1, events1 = -1;
    for (int t = 0; t < nthreads; t++) {
      qsort(all[t], (size_t)runs, sizeof all[t][0], by_wall);
      const result *r = &all[t][runs / 2];
      for (int k = 0; k < runs; k++)
        if (all[t][k].rc != DIPPER_OK) r = &all[t][k];
      printf("%-9s %7d", queries[q].name, threads[t]);
      if (r->rc != DIPPER_OK) {
        printf("  FAILED: %s\n", r->error);
        failures++;
        continue;
      }
      if (t == 0) {
        wall1 = r->wall_s;
        cpu1 = r->cpu_s;
        rows1 = (long long)r->rows_out;
        events1 = (long long)r->events;
      }
      print_rate((double)r->events, r->wall_s);
      print_rate((double)r->events, r->cpu_s);
      printf(" %8.2f %8.2f %6.0f MB %10lld %8.2fx %8.2fx\n", r->cpu_s, r->wall_s,
             (double)r->max_rss_kb / 1024.0, (long long)r->rows_out,
             r->wall_s > 0 ? wall1 / r->wall_s : 0.0, cpu1 > 0 ? r->cpu_s / cpu1 : 0.0);
      if ((long long)r->rows_out != rows1 || (long long)r->events != events1) {
        printf("          (%lld rows out from %lld events; %lld from %lld on %d thread(s))\n",
               (long long)r->rows_out, (long long)r->events, rows1, events1, threads[0]);
        failures++;
      }
    }
  }
  print_spin(threads, nthreads, runs);
  printf("speedup = wall time on %d thread(s) / wall time; CPU x = CPU time (user + system, all "
         "threads) / CPU time on %d; median of %d by wall time.\n(control) = a loop of %lu steps "
         "shared among the threads, before and after the queries: the speedup the machine\n"
         "allowed this process then (other sessions' load included), the ceiling of the queries'.\n",
         threads[0], threads[0], runs, SPIN_STEPS);
  printf("reproduce: scripts/build release && build/bench/bench_nexmark_bench --events %lld "
         "--runs %d --threads ", events, runs);
  for (int t = 0; t < nthreads; t++) printf("%s%d", t ? "," : "", threads[t]);
  for (int q = 0; q < NQUERIES; q++)
    if (any_wanted && wanted[q]) printf(" --query %s", queries[q].name);
  printf("\n");
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  long long events = 10000000;
  int runs = 1;
  const char *dir = DIPPER_SOURCE_DIR "/bench/queries";
  bool wanted[NQUERIES];
  bool any_wanted = false, checkpoints = false, restart_only = false, batches = false;
  const char *keep = NULL;
  int threads[8], nthreads = 0;
  memset(wanted, 0, sizeof wanted);
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(arg, "--events") == 0 && val) {
      char *end;
      events = strtoll(val, &end, 10);
      if (*end || events < 1) {
        fprintf(stderr, "nexmark_bench: --events takes a positive count, not '%s'\n", val);
        return 2;
      }
      i++;
    } else if (strcmp(arg, "--runs") == 0 && val) {
      runs = atoi(val);
      if (runs < 1 || runs > 100) {
        fprintf(stderr, "nexmark_bench: --runs takes 1 to 100, not '%s'\n", val);
        return 2;
      }
      i++;
    } else if (strcmp(arg, "--checkpoint") == 0) {
      checkpoints = true;
    } else if (strcmp(arg, "--per-batch") == 0) {
      batches = true;
    } else if (strcmp(arg, "--keep") == 0 && val) {
      keep = val;
      i++;
    } else if (strcmp(arg, "--state-backend") == 0 && val) {
      if (strcmp(val, "hashmap") != 0 && strcmp(val, "rocksdb") != 0) {
        fprintf(stderr, "nexmark_bench: --state-backend takes hashmap or rocksdb, not '%s'\n", val);
        return 2;
      }
      state_backend = val;
      i++;
    } else if (strcmp(arg, "--threads") == 0 && val) {
      for (const char *p = val; *p && nthreads < 8;) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n < 1 || n > 256 || (*end && *end != ',')) {
          fprintf(stderr, "nexmark_bench: --threads takes counts such as 1,2, not '%s'\n", val);
          return 2;
        }
        threads[nthreads++] = (int)n;
        p = *end ? end + 1 : end;
      }
      i++;
    } else if (strcmp(arg, "--restart-only") == 0) {
      restart_only = true;
    } else if (strcmp(arg, "--queries") == 0 && val) {
      dir = val;
      i++;
    } else if (strcmp(arg, "--query") == 0 && val) {
      int found = -1;
      for (int q = 0; q < NQUERIES; q++)
        if (strcmp(queries[q].name, val) == 0) found = q;
      if (found < 0) {
        fprintf(stderr, "nexmark_bench: no query '%s'\n", val);
        usage(argv[0]);
        return 2;
      }
      wanted[found] = any_wanted = true;
      i++;
    } else {
      usage(argv[0]);
      return 2;
    }
  }

  printf("nexmark_bench: %lld events per query through dipper_run (engine defaults), "
         "%d run(s) each%s%s%s\n",
         events, runs, runs > 1 ? ", the median by CPU time shown" : "",
         state_backend ? ", state.backend " : "", state_backend ? state_backend : "");
  print_machine();
  if (restart_only && (!checkpoints || !keep)) {
    fprintf(stderr, "nexmark_bench: --restart-only goes with --checkpoint --keep DIR\n");
    return 2;
  }
  if (checkpoints) return run_checkpoint_pairs(wanted, any_wanted, dir, events, runs, keep, restart_only);
  if (batches) return run_per_batch(wanted, any_wanted, dir, events, runs);
  if (nthreads > 0) return run_thread_sets(wanted, any_wanted, dir, events, runs, threads, nthreads);
  printf("%-9s %-36s %12s %12s %8s %8s %9s %10s   %s\n", "query", "what", "ev/s/core",
         "ev/s wall", "CPU s", "wall s", "peak RSS", "rows out", "Flink/core (published)");
  int failures = 0;
  for (int q = 0; q < NQUERIES; q++) {
    if (any_wanted ? !wanted[q] : only_when_named(queries[q].name)) continue;
    result all[100];
    for (int k = 0; k < runs; k++) all[k] = run_isolated(&queries[q], dir, events, false);
    qsort(all, (size_t)runs, sizeof all[0], by_cpu);
    const result *r = &all[runs / 2];
    for (int k = 0; k < runs; k++)
      if (all[k].rc != DIPPER_OK) r = &all[k];
    printf("%-9s %-36s", queries[q].name, queries[q].what);
    if (r->rc != DIPPER_OK) {
      printf("  FAILED: %s\n", r->error);
      failures++;
      continue;
    }
    print_rate((double)r->events, r->cpu_s);
    print_rate((double)r->events, r->wall_s);
    printf(" %8.2f %8.2f %6.0f MB %10lld   %s\n", r->cpu_s, r->wall_s,
           (double)r->max_rss_kb / 1024.0, (long long)r->rows_out, queries[q].published);
    if (r->events != events) {
      printf("          (the sources gave %lld rows, not %lld)\n", (long long)r->events, events);
      failures++;
    }
  }
  printf("ev/s = source events (all kinds) per second; per core = over the run's CPU time "
         "(user + system, one thread).\n"
         "Flink figures: published per-core throughput from the Nexmark project "
         "(GUIDE_V1 example), not measured here.\n");
  printf("reproduce: scripts/build release && build/bench/bench_nexmark_bench --events %lld "
         "--runs %d",
         events, runs);
  for (int q = 0; q < NQUERIES; q++)
    if (any_wanted && wanted[q]) printf(" --query %s", queries[q].name);
  if (state_backend) printf(" --state-backend %s", state_backend);
  printf("\n");
  return failures ? 1 : 0;
}
