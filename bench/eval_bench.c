/*
** eval_bench.c — speed of the expression evaluator on the two expressions
** at the heart of Nexmark q1/q2: a filter `price > 1000` (evaluate the mask,
** then select the rows) and a projection `price * 0.908` (BIGINT times a DECIMAL literal: DECIMAL
** arithmetic, as in Flink and Spark), over 10 M rows of
** a BIGINT and a DOUBLE column in batches of 8192 rows.
**
**   build/bench/bench_eval_bench [ROWS]
**
** Prints rows per second (single thread) for each expression.  Expressions
** are compiled from SQL through the parser and binder, as the engine does.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/eval.h"
#include "plan/binder.h"
#include "plan/catalog.h"
#include "sql/parser.h"

#define BATCH 8192

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static dp_expr *compile(dp_arena *a, dp_diags *d, dp_catalog *cat, dp_schema *s, const char *sql) {
  dp_ast_script *script = NULL;
  dp_expr *e = NULL;
  if (dp_parse(a, d, sql, strlen(sql), &script) != DIPPER_OK || !script ||
      dp_bind_expr_over(a, d, cat, s, script->stmts[0]->u.query->select->items[0].expr, &e) != DIPPER_OK) {
    fprintf(stderr, "cannot compile %s\n", sql);
    exit(1);
  }
  return e;
}

int main(int argc, char **argv) {
  int64_t total = argc > 1 ? atoll(argv[1]) : 10000000;
  dp_arena *a = dp_arena_new(4096);
  dp_diags d;
  dp_diags_init(&d, a, "bench", "", 0);
  dp_catalog *cat = dp_catalog_new();
  dp_schema *s = dp_schema_new(a, 2);
  s->cols[0] = (dp_field){"price", dp_type_of(DP_T_BIGINT)};
  s->cols[1] = (dp_field){"dprice", dp_type_of(DP_T_DOUBLE)};
  dp_expr *filter = compile(a, &d, cat, s, "SELECT price > 1000");
  dp_expr *proj = compile(a, &d, cat, s, "SELECT price * 0.908");
  dp_batch *b = dp_batch_new(s, BATCH);
  uint64_t x = 88172645463325252u;
  for (int i = 0; i < BATCH; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int64_t price = (int64_t)(x % 2000000);
    dp_vector_append_i64(b->cols[0], price);
    dp_vector_append_f64(b->cols[1], (double)price);
  }
  dp_batch_sync(b);
  dp_exec ex;
  memset(&ex, 0, sizeof ex);
  ex.diags = &d;
  int64_t *sel = malloc(BATCH * sizeof *sel);
  int64_t batches = (total + BATCH - 1) / BATCH, kept = 0;
  double sum = 0;

  double t0 = now_s();
  for (int64_t k = 0; k < batches; k++) {
    dp_vector *m = NULL;
    if (dp_eval(&ex, filter, b, &m)) return 1;
    kept += dp_eval_select(m, sel);
    dp_vector_free(m);
  }
  double t1 = now_s();
  for (int64_t k = 0; k < batches; k++) {
    dp_vector *v = NULL;
    if (dp_eval(&ex, proj, b, &v)) return 1;
    sum += (double)dp_vector_get_dec(v, k % BATCH) / 1000.0; /* DECIMAL(23, 3) */
    dp_vector_free(v);
  }
  double t2 = now_s();
  double rows = (double)(batches * BATCH);
  printf("filter  price > 1000   : %8.1f M rows/s (%lld kept)\n", rows / (t1 - t0) / 1e6, (long long)kept);
  printf("project price * 0.908  : %8.1f M rows/s (checksum %.1f)\n", rows / (t2 - t1) / 1e6, sum);
  free(sel);
  dp_batch_free(b);
  dp_catalog_free(cat);
  dp_arena_free(a);
  return 0;
}
