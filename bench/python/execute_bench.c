/*
** execute_bench.c — the C side of bench/python/arrow_bench.py: the query of
** bench/python/query.sql with ROWS rows run by dipper_execute and its Arrow
** C stream drained (the schema and every array taken), through
** the public API only, as a C program would.  Prints the median wall time of
** RUNS runs, the fastest, the median CPU time (of the process: on a shared
** machine the figure least moved by others' work) and rows/s; the program is compiled once, outside the timing,
** as arrow_bench.py does, so the two figures differ only by what Python adds.
**
**   python_execute_bench QUERY.sql ROWS RUNS   (scripts/python-bench builds it)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dipper.h"

#define MAX_RUNS 99

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The file's text with each "{rows}" replaced by rows; the caller frees it. */
static char *read_sql(const char *path, long long rows) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char text[8192];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  size_t cap = n + 256, len = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  for (const char *p = text; *p;) {
    const char *at = strstr(p, "{rows}");
    size_t k = at ? (size_t)(at - p) : strlen(p);
    if (len + k + 32 > cap) break;
    memcpy(out + len, p, k);
    len += k;
    if (!at) break;
    len += (size_t)snprintf(out + len, cap - len, "%lld", rows);
    p = at + 6;
  }
  out[len] = '\0';
  return out;
}

/* One run: execute the statement and take every array of its stream (the
** result in hand, as .arrow() leaves it); the rows it held, the time that
** took in *secs and its CPU time in *cpu.  Releasing the arrays is not timed
** on either side (arrow_bench.py frees its Table after the clock stops). */
#define MAX_ARRAYS 4096
static long long run_once(dipper *db, dipper_program *prog, int stmt, double *secs, double *cpu) {
  static struct ArrowArray arrays[MAX_ARRAYS];
  double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  struct ArrowArrayStream st;
  if (dipper_execute(prog, stmt, &st) != DIPPER_OK) {
    fprintf(stderr, "execute_bench: %s\n", dipper_errmsg(db));
    return -1;
  }
  struct ArrowSchema schema;
  if (st.get_schema(&st, &schema) != 0) return -1;
  long long got = 0;
  int n = 0;
  for (;;) {
    if (n == MAX_ARRAYS) return -1;
    if (st.get_next(&st, &arrays[n]) != 0) return -1;
    if (!arrays[n].release) break;
    got += arrays[n++].length;
  }
  *secs = clock_s(CLOCK_MONOTONIC) - t0;
  *cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  for (int i = 0; i < n; i++) arrays[i].release(&arrays[i]);
  schema.release(&schema);
  st.release(&st);
  return got;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: python_execute_bench QUERY.sql ROWS RUNS\n");
    return 2;
  }
  long long rows = atoll(argv[2]);
  int runs = atoi(argv[3]);
  if (runs < 1 || runs > MAX_RUNS) runs = 5;
  char *sql = read_sql(argv[1], rows);
  if (!sql) {
    fprintf(stderr, "execute_bench: cannot read %s\n", argv[1]);
    return 1;
  }
  dipper *db = NULL;
  dipper_program *prog = NULL;
  if (dipper_open(&db, NULL) != DIPPER_OK ||
      dipper_compile(db, sql, (size_t)-1, argv[1], &prog) != DIPPER_OK) {
    fprintf(stderr, "execute_bench: %s\n", db ? dipper_errmsg(db) : "out of memory");
    return 1;
  }
  int stmt = dipper_program_count(prog) - 1;
  double t[MAX_RUNS], cpu[MAX_RUNS];
  long long got = 0;
  for (int r = 0; r < runs; r++) {
    got = run_once(db, prog, stmt, &t[r], &cpu[r]);
    if (got < 0) return 1;
  }
  qsort(t, (size_t)runs, sizeof t[0], cmp_double);
  qsort(cpu, (size_t)runs, sizeof cpu[0], cmp_double);
  double med = t[runs / 2];
  printf("C dipper_execute + arrays %lld rows  wall median %.3f s, fastest %.3f s, cpu median "
         "%.3f s of %d runs  (%.1f M rows/s)\n",
         got, med, t[0], cpu[runs / 2], runs, (double)got / med / 1e6);
  dipper_program_free(prog);
  dipper_close(db);
  free(sql);
  return got == rows ? 0 : 1;
}
