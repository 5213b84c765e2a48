/*
** latency.c — event-to-output latency of the seed pipeline, Kafka to Kafka
** (bench/latency.sh drives it; docs/benchmarks.md, "Latency").
**
**   bench_latency --in T --out S [--rate 100000] [--seconds 30] [--warmup 5]
**                 [--step-ms 10] [--tick-us 100] [--brokers 127.0.0.1:9092] [--drain 3]
**
** Produces JSON payments to topic T at a fixed rate (event i is due at
** start + i / rate; it is never sent before it is due: each wake-up sends the
** events due by then in a burst, then sleeps with clock_nanosleep until the
** next is due, but at least --tick-us after the wake-up, so the producer
** wakes at most 10,000 times a second instead of spinning between sends on
** the engine's core), and consumes the sink topic S meanwhile, on a thread
** of its own.  Event i has createTime = 2024-01-01 00:00:00 + i * step-ms:
** event time is a function of the event's number, so the producer keeps only
** each event's send time (CLOCK_MONOTONIC, taken just before the produce
** call) and nothing travels in the record but the payment itself.
**
** What is measured: the pipeline's windows (HOP 1 min / 30 s per province,
** a 10 s bounded-out-of-orderness watermark) close when the watermark passes
** their end.  The watermark is the largest createTime seen minus 10 s, so the
** window [s, e) can close only once an event with createTime >= e + 10 s has
** been read: the first such event (the one that advances the watermark to e)
** is the window's closing event.  A window's latency is the time from the
** send of its closing event to the receipt, here, of the window's output row
** on S (each province's row counted once).  Rows whose closing event was sent
** in the first --warmup seconds are not counted; an output row that arrives
** before its closing event was sent would be a wrong answer and is counted as
** such ("early").  At the end (after --drain seconds more of consuming) it
** prints the sent rate achieved, the producer's wake-ups, this process's CPU
** seconds (producer, consumer and librdkafka's threads), the rows seen, and the latency's p50, p99,
** p99.9 and max in milliseconds, one "key value" per line.  --dump FILE
** writes one line per row measured: its window end (ms since the epoch, event
** time), its closing event's number, that event's send time and the row's
** receipt (CLOCK_MONOTONIC µs, the clock of the engine's batch trace,
** DIPPER_TRACE_BATCHES).
**
** The producer's librdkafka settings send at once (linger.ms 0); the
** consumer reads from the end of S (a fresh topic) with fetch.wait.max.ms 1,
** so the harness adds well under a millisecond of its own.
*/
#include <errno.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* 2024-01-01 00:00:00 UTC, ms since the epoch */
#define T0_MS 1704067200000LL
#define WATERMARK_DELAY_MS 10000LL

typedef struct {
  const char *brokers, *in, *out, *dump;
  double rate, seconds, warmup, drain;
  long long step_ms;
  long long tick_us;
} opts;

typedef struct {
  opts o;
  int64_t *sent_ns; /* send time of event i, 0 until sent */
  volatile long long nsent;
  int64_t start_ns;
  volatile int stop;
  double *lat_ms;
  FILE *dump; /* --dump: one line per row measured */
  long long nlat, cap, early, unparsed, rows;
  long long wakeups; /* the producer's */
} bench;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what, const char *why) {
  fprintf(stderr, "bench_latency: %s: %s\n", what, why);
  exit(1);
}

static void usage(FILE *f) {
  fprintf(f, "usage: bench_latency --in TOPIC --out TOPIC [--rate EV_PER_S] [--seconds S] [--warmup S]\n"
             "                     [--step-ms MS] [--tick-us US] [--drain S] [--brokers HOST:PORT]\n"
             "                     [--dump FILE]\n"
             "  produces JSON payments to --in at a fixed rate and measures the time from each\n"
             "  window's closing event to its output on --out (bench/latency.sh runs it)\n");
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  long long era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned)(y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (long long)doe - 719468;
}

/* "YYYY-MM-DD[ T]HH:MM:SS[.fff]" at p, in ms since the epoch; -1 if not. */
static long long parse_ts(const char *p) {
  int y, mo, d, h, mi, s, n = 0;
  if (sscanf(p, "%4d-%2d-%2d%*1[ T]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6) return -1;
  long long ms = 0;
  if (p[n] == '.') {
    int digits = 0;
    for (const char *q = p + n + 1; *q >= '0' && *q <= '9'; q++)
      if (digits < 3) ms = ms * 10 + (*q - '0'), digits++;
    while (digits++ < 3) ms *= 10;
  }
  return ((days_from_civil(y, (unsigned)mo, (unsigned)d) * 24 + h) * 60 + mi) * 60000LL + s * 1000LL + ms;
}

/* The window end of one sink row (a JSON object with "window_end"). */
static long long window_end_ms(const char *v, size_t len) {
  char buf[512];
  if (len >= sizeof buf) len = sizeof buf - 1;
  memcpy(buf, v, len);
  buf[len] = 0;
  const char *k = strstr(buf, "\"window_end\"");
  if (!k) return -1;
  k = strchr(k + 12, '"');
  return k ? parse_ts(k + 1) : -1;
}

static void record(bench *b, double ms) {
  if (b->nlat == b->cap) {
    b->cap = b->cap ? b->cap * 2 : 4096;
    b->lat_ms = realloc(b->lat_ms, (size_t)b->cap * sizeof *b->lat_ms);
    if (!b->lat_ms) die("memory", "out of memory");
  }
  b->lat_ms[b->nlat++] = ms;
}

static void on_row(bench *b, const rd_kafka_message_t *m, int64_t t) {
  b->rows++;
  long long end = m->payload ? window_end_ms(m->payload, m->len) : -1;
  if (end < 0) {
    b->unparsed++;
    return;
  }
  /* the first event with createTime >= end + delay */
  long long need = end + WATERMARK_DELAY_MS - T0_MS;
  long long i = need <= 0 ? 0 : (need + b->o.step_ms - 1) / b->o.step_ms;
  if (i >= __atomic_load_n(&b->nsent, __ATOMIC_ACQUIRE)) {
    b->early++;
    return;
  }
  int64_t sent = b->sent_ns[i];
  if (!sent) {
    b->early++;
    return;
  }
  if ((double)(sent - b->start_ns) < b->o.warmup * 1e9) return;
  record(b, (double)(t - sent) / 1e6);
  if (b->dump) fprintf(b->dump, "%lld\t%lld\t%lld\t%lld\n", end, i, (long long)(sent / 1000), (long long)(t / 1000));
}

static rd_kafka_t *make_client(bench *b, rd_kafka_type_t type) {
  char err[512];
  rd_kafka_conf_t *c = rd_kafka_conf_new();
  const char *kv[][2] = {
      {"bootstrap.servers", b->o.brokers},
      {type == RD_KAFKA_PRODUCER ? "linger.ms" : "fetch.wait.max.ms", type == RD_KAFKA_PRODUCER ? "0" : "1"},
      {type == RD_KAFKA_PRODUCER ? "acks" : "group.id", type == RD_KAFKA_PRODUCER ? "1" : "bench-latency"},
      {type == RD_KAFKA_PRODUCER ? "queue.buffering.max.messages" : "auto.offset.reset",
       type == RD_KAFKA_PRODUCER ? "1000000" : "latest"},
      {type == RD_KAFKA_PRODUCER ? "client.id" : "enable.auto.commit",
       type == RD_KAFKA_PRODUCER ? "bench-latency" : "false"},
  };
  for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++)
    if (rd_kafka_conf_set(c, kv[k][0], kv[k][1], err, sizeof err) != RD_KAFKA_CONF_OK) die(kv[k][0], err);
  rd_kafka_t *rk = rd_kafka_new(type, c, err, sizeof err);
  if (!rk) die("rd_kafka_new", err);
  return rk;
}

static void *consume(void *arg) {
  bench *b = arg;
  rd_kafka_t *rk = make_client(b, RD_KAFKA_CONSUMER);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(l, b->o.out, RD_KAFKA_PARTITION_UA);
  if (rd_kafka_subscribe(rk, l)) die("subscribe", b->o.out);
  rd_kafka_topic_partition_list_destroy(l);
  while (!b->stop) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 50);
    if (!m) continue;
    int64_t t = now_ns();
    if (!m->err) on_row(b, m, t);
    else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
      fprintf(stderr, "bench_latency: consume: %s\n", rd_kafka_message_errstr(m));
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return NULL;
}

static void sleep_until(int64_t t) {
  struct timespec ts = {.tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

/* The payment of event i, in buf. */
static int payment(const bench *b, long long i, char *buf, size_t cap) {
  long long ts = T0_MS + i * b->o.step_ms;
  time_t secs = (time_t)(ts / 1000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  return snprintf(buf, cap,
                  "{\"createTime\":\"%04d-%02d-%02d %02d:%02d:%02d.%03lld\",\"orderId\":%lld,"
                  "\"payAmount\":%lld.%02lld,\"payPlatform\":%lld,\"provinceId\":%lld}",
                  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts % 1000,
                  i, 1 + (i * 7919) % 1000, (i * 31) % 100, i % 2, i % 6);
}

static int64_t due_ns(const bench *b, long long i) { return b->start_ns + (int64_t)((double)i * 1e9 / b->o.rate); }

/* Sends every event that is due, in a burst, then sleeps (clock_nanosleep)
** until the next one is due, but at least --tick-us after this wake-up, so
** that the producer wakes at most 1e6 / tick times a second instead of
** spinning between sends (at 100,000 events/s a send is due every 10 us). */
static void produce(bench *b, rd_kafka_t *rk, long long n) {
  char buf[256];
  long long i = 0;
  while (i < n) {
    int64_t now = now_ns();
    for (; i < n && due_ns(b, i) <= now; i++) {
      int len = payment(b, i, buf, sizeof buf);
      b->sent_ns[i] = now_ns();
      for (;;) {
        rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(b->o.in), RD_KAFKA_V_VALUE(buf, (size_t)len),
                                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (!e) break;
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) die("produce", rd_kafka_err2str(e));
        rd_kafka_poll(rk, 1);
      }
      __atomic_store_n(&b->nsent, i + 1, __ATOMIC_RELEASE);
    }
    rd_kafka_poll(rk, 0);
    b->wakeups++;
    if (i >= n) break;
    int64_t next = due_ns(b, i), floor = now + b->o.tick_us * 1000;
    sleep_until(next > floor ? next : floor);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(const double *v, long long n, double p) {
  if (!n) return 0;
  long long k = (long long)((double)n * p / 100.0 + 0.999999) - 1;
  if (k < 0) k = 0;
  if (k >= n) k = n - 1;
  return v[k];
}

static void parse_args(opts *o, int argc, char **argv) {
  *o = (opts){.brokers = "127.0.0.1:9092", .rate = 100000, .seconds = 30, .warmup = 5, .drain = 3, .step_ms = 10, .tick_us = 100};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      exit(0);
    }
    if (!v) die(a, "needs a value (see --help)");
    i++;
    if (!strcmp(a, "--in")) o->in = v;
    else if (!strcmp(a, "--out")) o->out = v;
    else if (!strcmp(a, "--brokers")) o->brokers = v;
    else if (!strcmp(a, "--dump")) o->dump = v;
    else if (!strcmp(a, "--rate")) o->rate = atof(v);
    else if (!strcmp(a, "--seconds")) o->seconds = atof(v);
    else if (!strcmp(a, "--warmup")) o->warmup = atof(v);
    else if (!strcmp(a, "--drain")) o->drain = atof(v);
    else if (!strcmp(a, "--step-ms")) o->step_ms = atoll(v);
    else if (!strcmp(a, "--tick-us")) o->tick_us = atoll(v);
    else die(a, "unknown option (see --help)");
  }
  if (o->rate <= 0 || o->seconds <= 0 || o->step_ms <= 0 || o->tick_us < 0 || o->warmup < 0 || o->drain < 0)
    die("options", "--rate, --seconds and --step-ms must be positive, --tick-us, --warmup and --drain not negative");
}

int main(int argc, char **argv) {
  if (argc == 1) {
    usage(stdout); /* scripts/bench runs every bench_* without arguments */
    return 0;
  }
  bench b = {0};
  parse_args(&b.o, argc, argv);
  if (!b.o.in || !b.o.out) die("options", "--in and --out are required");
  long long n = (long long)(b.o.rate * b.o.seconds);
  b.sent_ns = calloc((size_t)n + 1, sizeof *b.sent_ns);
  if (!b.sent_ns) die("memory", "out of memory");
  if (b.o.dump) {
    if (!(b.dump = fopen(b.o.dump, "w"))) die(b.o.dump, strerror(errno));
    fputs("window_end_ms\tclosing_event\tsent_us\treceived_us\n", b.dump);
  }
  pthread_t th;
  if (pthread_create(&th, NULL, consume, &b)) die("pthread_create", strerror(errno));
  rd_kafka_t *rk = make_client(&b, RD_KAFKA_PRODUCER);
  struct timespec pause = {.tv_sec = 2}; /* the consumer's assignment */
  nanosleep(&pause, NULL);
  b.start_ns = now_ns();
  produce(&b, rk, n);
  int64_t end = now_ns();
  rd_kafka_flush(rk, 10000);
  sleep_until(now_ns() + (int64_t)(b.o.drain * 1e9));
  b.stop = 1;
  pthread_join(th, NULL);
  rd_kafka_destroy(rk);
  if (b.dump) fclose(b.dump);
  qsort(b.lat_ms, (size_t)b.nlat, sizeof *b.lat_ms, cmp_double);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("harness_cpu_s %.2f\nproducer_wakeups %lld\n",
         (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
         b.wakeups);
  printf("sent %lld\nsent_per_s %.0f\nrows %lld\nmeasured %lld\nearly %lld\nunparsed %lld\n", n,
         (double)n / ((double)(end - b.start_ns) / 1e9), b.rows, b.nlat, b.early, b.unparsed);
  printf("p50_ms %.3f\np99_ms %.3f\np99.9_ms %.3f\nmax_ms %.3f\n", pct(b.lat_ms, b.nlat, 50),
         pct(b.lat_ms, b.nlat, 99), pct(b.lat_ms, b.nlat, 99.9), b.nlat ? b.lat_ms[b.nlat - 1] : 0.0);
  free(b.lat_ms);
  free(b.sent_ns);
  return b.early || b.unparsed ? 1 : 0;
}
