/*
** parse_bench.c — how long the compiler front end takes: parse, bind,
** analyse and validate a 50-line streaming pipeline (three sources with
** watermarks, two sinks, a view, a window aggregation and an interval join)
** through the public API, on a fresh handle each time so that every CREATE
** TABLE is really compiled.
**
**   scripts/bench            or      build/bench/bench_parse_bench [ITERATIONS]
**   build/bench/bench_parse_bench --args   the binder's cost per argument of
**                                          IN (...) and COALESCE(...)
**
** Prints the median and 99th percentile of one compile (open + compile +
** free + close) in µs, in wall time and in this thread's CPU time, and the
** statements compiled per second.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dipper.h"

static const char pipeline[] =
    "CREATE TABLE orders (\n"
    "  order_id BIGINT, user_id BIGINT, amount DECIMAL(10, 2), currency STRING,\n"
    "  order_time TIMESTAMP(3),\n"
    "  WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND\n"
    ") WITH ('connector' = 'kafka', 'topic' = 'orders',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092',\n"
    "  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"
    "CREATE TABLE shipments (\n"
    "  shipment_id BIGINT, order_id BIGINT, carrier STRING, ship_time TIMESTAMP(3),\n"
    "  WATERMARK FOR ship_time AS ship_time - INTERVAL '5' SECOND\n"
    ") WITH ('connector' = 'kafka', 'topic' = 'shipments',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092',\n"
    "  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"
    "CREATE TABLE payment_msg (\n"
    "  createTime TIMESTAMP(3), orderId BIGINT, payAmount DOUBLE,\n"
    "  payPlatform INT, provinceId INT,\n"
    "  WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND\n"
    ") WITH ('connector' = 'kafka', 'topic' = 'payment_msg',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092',\n"
    "  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"
    "CREATE TABLE province_totals (\n"
    "  province_id  INT,\n"
    "  window_start TIMESTAMP(3),\n"
    "  window_end   TIMESTAMP(3),\n"
    "  pay_amount   DOUBLE,\n"
    "  payments     BIGINT\n"
    ") WITH ('connector' = 'kafka', 'topic' = 'province_totals',\n"
    "  'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json');\n"
    "CREATE TABLE shipped (\n"
    "  order_id BIGINT,\n"
    "  amount   DECIMAL(10, 2),\n"
    "  carrier  STRING,\n"
    "  delay_ok BOOLEAN\n"
    ") WITH ('connector' = 'blackhole');\n"
    "CREATE VIEW large_payments AS\n"
    "  SELECT createTime, orderId, payAmount, provinceId\n"
    "  FROM payment_msg\n"
    "  WHERE payAmount > 100 AND payPlatform IN (0, 1);\n"
    "INSERT INTO province_totals\n"
    "SELECT provinceId, window_start, window_end, SUM(payAmount), COUNT(*)\n"
    "FROM TABLE(HOP(TABLE large_payments, DESCRIPTOR(createTime),\n"
    "               INTERVAL '30' SECOND, INTERVAL '1' MINUTE))\n"
    "GROUP BY provinceId, window_start, window_end;\n"
    "INSERT INTO shipped\n"
    "SELECT o.order_id, o.amount, s.carrier,\n"
    "       CASE WHEN s.ship_time < o.order_time + INTERVAL '1' HOUR THEN TRUE\n"
    "            ELSE FALSE END\n"
    "FROM orders o, shipments s\n"
    "WHERE o.order_id = s.order_id\n"
    "  AND s.ship_time BETWEEN o.order_time AND o.order_time + INTERVAL '4' HOUR\n"
    "  AND o.currency = 'EUR';\n";

static double clock_us(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double now_us(void) { return clock_us(CLOCK_MONOTONIC); }

/* CPU time of this thread: unlike wall time it does not count the time the
** scheduler gives to other processes, which dominates p99 on a busy machine. */
static double cpu_us(void) { return clock_us(CLOCK_THREAD_CPUTIME_ID); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One full compile; the statement count, or -1 after printing why. */
static int compile_once(void) {
  dipper *db = NULL;
  dipper_program *prog = NULL;
  if (dipper_open(&db, NULL) != DIPPER_OK) return -1;
  int rc = dipper_compile(db, pipeline, sizeof pipeline - 1, "pipeline.sql", &prog);
  if (rc != DIPPER_OK) {
    for (int i = 0; i < dipper_diag_count(db); i++) {
      char *r = dipper_diag_render(db, i);
      fputs(r ? r : "(no memory)\n", stderr);
      dipper_free(r);
    }
    dipper_close(db);
    return -1;
  }
  int n = dipper_program_count(prog);
  dipper_program_free(prog);
  dipper_close(db);
  return n;
}

/* --args: the compile of `x IN (v1, ..., vN)` and `COALESCE(NULL, ..., x)`
** for growing N, per argument: a flat column says the binder is linear in
** the arguments (it was quadratic: every argument resolved the signature
** again). */
static int args_series(void) {
  printf("parse_bench --args: one SELECT with x IN (N values) AND COALESCE(N NULLs, x) > 0\n");
  printf("%10s %12s %16s\n", "N", "cpu ms", "ns per argument");
  for (long n = 1000; n <= 512000; n *= 2) {
    size_t cap = (size_t)n * 16 + 256;
    char *sql = malloc(cap);
    if (!sql) return 1;
    size_t len = (size_t)snprintf(sql, cap, "SELECT x FROM (VALUES (1)) AS t(x) WHERE x IN (");
    for (long i = 0; i < n; i++) len += (size_t)snprintf(sql + len, cap - len, i ? ", %ld" : "%ld", i);
    len += (size_t)snprintf(sql + len, cap - len, ") AND COALESCE(");
    for (long i = 0; i < n; i++) len += (size_t)snprintf(sql + len, cap - len, "NULL, ");
    snprintf(sql + len, cap - len, "x) > 0;");
    dipper *db = NULL;
    dipper_program *prog = NULL;
    double c0 = cpu_us();
    int rc = dipper_open(&db, NULL);
    if (!rc) rc = dipper_compile(db, sql, (size_t)-1, "args.sql", &prog);
    double ms = (cpu_us() - c0) / 1e3;
    if (rc) fprintf(stderr, "parse_bench --args: %s\n", dipper_errmsg(db));
    dipper_program_free(prog);
    dipper_close(db);
    free(sql);
    if (rc) return 1;
    printf("%10ld %12.1f %16.0f\n", n, ms, ms * 1e6 / (double)(2 * n));
  }
  printf("  reproduce:   scripts/build release && build/bench/bench_parse_bench --args\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--args") == 0) return args_series();
  long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 5000;
  if (iterations < 10 || iterations > 10000000) {
    fprintf(stderr, "usage: %s [ITERATIONS >= 10]\n", argv[0]);
    return 2;
  }
  int statements = compile_once(); /* also the warm-up, and the correctness gate */
  if (statements < 0) {
    fprintf(stderr, "parse_bench: the pipeline does not compile; nothing to measure\n");
    return 1;
  }
  for (int i = 0; i < 200; i++) compile_once();

  double *samples = malloc((size_t)iterations * sizeof *samples);
  double *cpu_samples = malloc((size_t)iterations * sizeof *cpu_samples);
  if (!samples || !cpu_samples) return 1;
  double start = now_us(), cpu_start = cpu_us();
  for (long i = 0; i < iterations; i++) {
    double t0 = now_us(), c0 = cpu_us();
    if (compile_once() != statements) return 1;
    cpu_samples[i] = cpu_us() - c0;
    samples[i] = now_us() - t0;
  }
  double total = now_us() - start, cpu_total = cpu_us() - cpu_start;
  qsort(samples, (size_t)iterations, sizeof *samples, cmp_double);
  qsort(cpu_samples, (size_t)iterations, sizeof *cpu_samples, cmp_double);
  double median = samples[iterations / 2];
  double p99 = samples[(iterations * 99) / 100];
  double cpu_median = cpu_samples[iterations / 2];
  double cpu_p99 = cpu_samples[(iterations * 99) / 100];
  int lines = 0;
  for (const char *p = pipeline; *p; p++) lines += *p == '\n';

  printf("parse_bench: compile of a %d-line, %d-statement pipeline "
         "(open + parse + bind + analyse + validate + free + close)\n",
         lines, statements);
  printf("  iterations   %ld\n", iterations);
  printf("  wall time    median %.1f us, p99 %.1f us per compile\n", median, p99);
  printf("  cpu time     median %.1f us, p99 %.1f us per compile\n", cpu_median, cpu_p99);
  printf("  throughput   %.0f statements/s wall, %.0f statements/s of cpu time\n",
         (double)statements * (double)iterations / (total / 1e6),
         (double)statements * (double)iterations / (cpu_total / 1e6));
  printf("  reproduce:   scripts/build release && build/bench/bench_parse_bench %ld\n", iterations);
  free(samples);
  free(cpu_samples);
  return 0;
}
