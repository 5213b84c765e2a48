/*
** spark_bench.c — the Spark Connect client's own costs against a real Spark
** Connect server (scripts/bench-spark starts one and runs this next to
** bench/spark_fetch_pyspark.py, which measures the same with pyspark).
**
**   build/bench/bench_spark_bench [--uri sc://127.0.0.1:15002] [--rows N] [--runs R]
**
** 1. Per query: building a plan (Range + a 7-column Project of mixed types,
**    as Spark Connect messages in an arena), encoding the ExecutePlan request
**    (the client's real encoder), each timed in process over many
**    iterations; then the round trip of a trivial query (Range(1)): the time
**    to its first response, and to its end, the median of R*10 runs.
** 2. Fetching a result: Range(N) with that Project (id BIGINT, DOUBLE,
**    STRING, TIMESTAMP, DECIMAL(18,2), BOOLEAN, a BIGINT that is NULL every
**    third row) through dp_sc_collect, the median of R runs: seconds, rows/s
**    and MB/s of the Arrow IPC bytes Spark sent, and this process's CPU time
**    (the client's own share of it).  Then those bytes, kept from
**    one more run, decoded again in process only: the decoder's own MB/s.
**
** Output: one "key value" line per figure (scripts/bench-spark reads them).
** With no server at the address it says so and exits 0, so that
** scripts/bench, which runs every benchmark, is not stopped by it.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../tests/spark/sc_build.h"
#include "core/arena.h"
#include "spark/arrow_ipc.h"
#include "spark/client.h"
#include "spark/uuid.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This process's CPU time (user + system): the client's own share of a fetch
** whose wall time is mostly Spark's. */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static Spark__Connect__Plan *root_plan(dp_arena *a, Spark__Connect__Relation *rel) {
  Spark__Connect__Plan *p = dp_arena_alloc(a, sizeof *p);
  if (!p) return NULL;
  spark__connect__plan__init(p);
  p->op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_ROOT;
  p->root = rel;
  return p;
}

typedef struct first_response {
  double t0, first, rows;
} first_response;

static int first_fn(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  first_response *f = user;
  if (f->first == 0) f->first = now_s() - f->t0;
  if (r->response_type_case == SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH)
    f->rows += (double)r->arrow_batch->row_count;
  return DIPPER_OK;
}

/* The arrow_batch payloads of one execution, kept for the decode timing. */
typedef struct kept {
  uint8_t **data;
  size_t *len;
  int n, cap;
  size_t bytes;
  int64_t rows;
} kept;

static int keep_fn(void *user, const Spark__Connect__ExecutePlanResponse *r) {
  kept *k = user;
  if (r->response_type_case != SPARK__CONNECT__EXECUTE_PLAN_RESPONSE__RESPONSE_TYPE_ARROW_BATCH)
    return DIPPER_OK;
  if (k->n == k->cap) {
    int cap = k->cap ? k->cap * 2 : 64;
    uint8_t **d = realloc(k->data, (size_t)cap * sizeof *d);
    if (!d) return DIPPER_NOMEM;
    k->data = d;
    size_t *l = realloc(k->len, (size_t)cap * sizeof *l);
    if (!l) return DIPPER_NOMEM;
    k->len = l;
    k->cap = cap;
  }
  size_t n = r->arrow_batch->data.len;
  uint8_t *copy = malloc(n ? n : 1);
  if (!copy) return DIPPER_NOMEM;
  if (n) memcpy(copy, r->arrow_batch->data.data, n);
  k->data[k->n] = copy;
  k->len[k->n++] = n;
  k->bytes += n;
  k->rows += r->arrow_batch->row_count;
  return DIPPER_OK;
}

static void fail(const char *what, dp_sc_error *e) {
  fprintf(stderr, "spark_bench: %s: %s\n", what, dp_buf_cstr(&e->message));
  exit(1);
}

int main(int argc, char **argv) {
  char uri_buf[80];
  const char *port = getenv("DIPPER_SPARK_PORT");
  snprintf(uri_buf, sizeof uri_buf, "sc://127.0.0.1:%s", port && port[0] ? port : "15002");
  const char *uri = uri_buf;
  long long rows = 1000000;
  int runs = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--uri") == 0 && i + 1 < argc) uri = argv[++i];
    else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) rows = atoll(argv[++i]);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--uri sc://host:port] [--rows N] [--runs R]\n", argv[0]);
      return 2;
    }
  }
  if (rows < 1 || runs < 1) {
    fprintf(stderr, "spark_bench: --rows and --runs must be positive\n");
    return 2;
  }

  dp_sc *s = NULL;
  dp_sc_error e;
  dp_sc_error_init(&e);
  int rc = dp_sc_open(&s, uri, &e);
  if (rc == DIPPER_CONNECT) {
    printf("spark_bench: skipped, %s\n", dp_buf_cstr(&e.message));
    dp_sc_error_free(&e);
    return 0;
  }
  if (rc != DIPPER_OK) fail("open", &e);
  printf("server %s spark %s\n", dp_sc_address(s), dp_sc_server_version(s));
  printf("rows %lld\n", rows);

  /* 1a. plan build: the messages of Range + Project in a reset arena. */
  dp_arena *a = dp_arena_new(1 << 16);
  if (!a) return 1;
  const int iters = 100000;
  double t = now_s();
  for (int i = 0; i < iters; i++) {
    dp_arena_reset(a);
    if (!root_plan(a, sb_mixed(a, 0, rows, 0))) return 1;
  }
  double build_ns = (now_s() - t) / iters * 1e9;

  /* 1b. encode: the ExecutePlan request as dp_sc_execute sends it. */
  dp_arena_reset(a);
  Spark__Connect__Plan *plan = root_plan(a, sb_mixed(a, 0, rows, 0));
  char op[DP_UUID_LEN + 1];
  if (!plan || dp_uuid_v4(op) != DIPPER_OK) return 1;
  size_t req_len = 0;
  t = now_s();
  for (int i = 0; i < iters; i++) {
    uint8_t *req = dp_sc__encode_execute(s, plan, op, &req_len);
    if (!req) return 1;
    free(req);
  }
  double encode_ns = (now_s() - t) / iters * 1e9;
  printf("plan_build_ns %.0f\n", build_ns);
  printf("encode_ns %.0f\n", encode_ns);
  printf("request_bytes %zu\n", req_len);

  /* 1c. submit: Range(1), time to the first response and to the end. */
  dp_arena *qa = dp_arena_new(0);
  Spark__Connect__Plan *tiny = root_plan(qa, sb_range(qa, 0, 1, 0));
  int nsub = runs * 10;
  double *firsts = calloc((size_t)nsub, sizeof *firsts), *totals = calloc((size_t)nsub, sizeof *totals);
  if (!tiny || !firsts || !totals) return 1;
  for (int i = -2; i < nsub; i++) { /* two warm-up runs */
    first_response f = {now_s(), 0, 0};
    if (dp_sc_execute(s, tiny, first_fn, &f, 0, &e) != DIPPER_OK) fail("Range(1)", &e);
    if (i >= 0) {
      firsts[i] = f.first;
      totals[i] = now_s() - f.t0;
    }
  }
  printf("submit_first_response_ms %.3f\n", median(firsts, nsub) * 1e3);
  printf("submit_total_ms %.3f\n", median(totals, nsub) * 1e3);

  /* 2. fetch: dp_sc_collect of the mixed result. */
  Spark__Connect__Relation *big = sb_mixed(qa, 0, rows, 0);
  double *fetch = calloc((size_t)runs, sizeof *fetch), *fetch_cpu = calloc((size_t)runs, sizeof *fetch_cpu);
  if (!big || !fetch || !fetch_cpu) return 1;
  for (int i = -1; i < runs; i++) { /* one warm-up run */
    dp_arrow_batches b;
    double c0 = cpu_s();
    t = now_s();
    if (dp_sc_collect(s, big, &b, &e) != DIPPER_OK) fail("collect", &e);
    double dt = now_s() - t, dc = cpu_s() - c0;
    if (b.rows != rows) {
      fprintf(stderr, "spark_bench: collect gave %lld rows, not %lld\n", (long long)b.rows, rows);
      return 1;
    }
    dp_arrow_batches_free(&b);
    if (i >= 0) {
      fetch[i] = dt;
      fetch_cpu[i] = dc;
    }
  }
  double fetch_s = median(fetch, runs), fetch_cpu_s = median(fetch_cpu, runs);

  /* The bytes of one more run, decoded in process only. */
  kept k = {0};
  if (dp_sc_execute(s, root_plan(qa, big), keep_fn, &k, 0, &e) != DIPPER_OK) fail("execute", &e);
  double *dec = calloc((size_t)runs, sizeof *dec);
  if (!dec) return 1;
  for (int r = 0; r < runs; r++) {
    t = now_s();
    for (int i = 0; i < k.n; i++) {
      dp_arrow_batches b;
      dp_buf derr = DP_BUF_INIT;
      if (dp_arrow_ipc_decode(k.data[i], k.len[i], &b, &derr) != DIPPER_OK) {
        fprintf(stderr, "spark_bench: decode: %s\n", dp_buf_cstr(&derr));
        return 1;
      }
      dp_arrow_batches_free(&b);
    }
    dec[r] = now_s() - t;
  }
  double dec_s = median(dec, runs);
  double mb = (double)k.bytes / 1e6;
  printf("arrow_bytes %zu\n", k.bytes);
  printf("arrow_batches %d\n", k.n);
  printf("fetch_s %.4f\n", fetch_s);
  printf("fetch_rows_per_s %.0f\n", (double)rows / fetch_s);
  printf("fetch_client_cpu_s %.4f\n", fetch_cpu_s);
  printf("fetch_MB_per_s %.1f\n", mb / fetch_s);
  printf("decode_s %.4f\n", dec_s);
  printf("decode_MB_per_s %.1f\n", mb / dec_s);
  printf("decode_rows_per_s %.0f\n", (double)k.rows / dec_s);

  for (int i = 0; i < k.n; i++) free(k.data[i]);
  free(k.data);
  free(k.len);
  free(firsts);
  free(totals);
  free(fetch);
  free(fetch_cpu);
  free(dec);
  dp_arena_free(qa);
  dp_arena_free(a);
  dp_sc_error_free(&e);
  dp_sc_close(s);
  return 0;
}
