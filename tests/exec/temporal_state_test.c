/*
** temporal_state_test.c — the event-time temporal join of two streams
** (`FOR SYSTEM_TIME AS OF` on a stream of versions, op_join.c's "versions
** in order") against a naive reference over many rows in eight
** micro-batches: the reference keeps every version and scans them all for
** each order, the operator keeps each key's versions in time order and
** drops those the watermark makes unreachable (tombstones, compacted once
** they are half its store).  Orders at or before the late watermark are
** dropped (late); late versions still count.  Each case is also checked by
** ops_state_harness.h: resumed after every batch from a whole state and
** from chains of deltas; the small ones feed every damaged blob back.
*/
#include "ops_state_harness.h"

#define NB 8
#define NONE INT64_MIN

#define DDL                                                                              \
  "CREATE TABLE rates (cur INT, rate INT, ut TIMESTAMP(3),"                              \
  " WATERMARK FOR ut AS ut - INTERVAL '1' SECOND, PRIMARY KEY (cur) NOT ENFORCED)"       \
  " WITH ('connector' = 'memory');\n"                                                    \
  "CREATE TABLE orders (id INT, cur INT, ot TIMESTAMP(3),"                               \
  " WATERMARK FOR ot AS ot - INTERVAL '1' SECOND) WITH ('connector' = 'memory');\n"

typedef struct ev {
  int id, cur, val; /* order: id; version: rate */
  int64_t t;        /* ms */
  int batch;
} ev;

static uint64_t rng_state;
static int rnd(int n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (int)(rng_state % (uint64_t)n);
}

static void put_time(dp_buf *t, int64_t ms) {
  dp_buf_printf(t, "\"2024-01-01 %02d:%02d:%02d.%03d\"", (int)(ms / 3600000), (int)(ms / 60000 % 60),
                (int)(ms / 1000 % 60), (int)(ms % 1000));
}

typedef struct data {
  ev *rates, *orders;
  int nr, no;
  char *texts[NB][2];
} data;

/* Per batch `per` versions over `ncur` keys and `per` orders over ncur + 5
** (some never have a version), times in [2b, 2b + 3) s on a grid of `grid`
** ms (ties), one in 15 of each from 4 s before (late). */
static void gen(data *d, int per, int ncur, int grid, uint64_t seed) {
  rng_state = seed;
  d->rates = malloc((size_t)(NB * per) * sizeof *d->rates);
  d->orders = malloc((size_t)(NB * per) * sizeof *d->orders);
  d->nr = d->no = 0;
  for (int b = 0; b < NB; b++)
    for (int j = 0; j < per; j++) {
      int64_t t = 2000LL * b + rnd(3000) / grid * grid;
      if (b > 1 && rnd(15) == 0) t -= 4000;
      d->rates[d->nr] = (ev){0, rnd(ncur), 100 + d->nr, t, b};
      d->nr++;
      t = 2000LL * b + rnd(3000);
      if (b > 1 && rnd(15) == 0) t -= 4000;
      d->orders[d->no] = (ev){d->no, rnd(ncur + 5), 0, t, b};
      d->no++;
    }
}

static void make_script(script *sc, const char *sql, data *d) {
  memset(sc, 0, sizeof *sc);
  sc->sql = sql;
  sc->tables[0] = "rates";
  sc->tables[1] = "orders";
  sc->nbatches = NB;
  for (int b = 0; b < NB; b++) {
    dp_buf r = DP_BUF_INIT, o = DP_BUF_INIT;
    for (int i = 0; i < d->nr; i++)
      if (d->rates[i].batch == b) {
        dp_buf_printf(&r, "{\"cur\": %d, \"rate\": %d, \"ut\": ", d->rates[i].cur, d->rates[i].val);
        put_time(&r, d->rates[i].t);
        dp_buf_printf(&r, "}\n");
      }
    for (int i = 0; i < d->no; i++)
      if (d->orders[i].batch == b) {
        dp_buf_printf(&o, "{\"id\": %d, \"cur\": %d, \"ot\": ", d->orders[i].id, d->orders[i].cur);
        put_time(&o, d->orders[i].t);
        dp_buf_printf(&o, "}\n");
      }
    d->texts[b][0] = dp_buf_cstr(&r) ? r.data : NULL;
    d->texts[b][1] = dp_buf_cstr(&o) ? o.data : NULL;
    sc->data[b][0] = d->texts[b][0];
    sc->data[b][1] = d->texts[b][1];
  }
}

static void free_data(data *d) {
  for (int b = 0; b < NB; b++) {
    free(d->texts[b][0]);
    free(d->texts[b][1]);
  }
  free(d->rates);
  free(d->orders);
}

/* Every version kept; each order, once the watermark reaches its time,
** scans them all for its key's latest at or before it (of tied ones the
** first to arrive). */
static char *reference(const data *d, bool left) {
  dp_buf out = DP_BUF_INIT;
  int *pending = malloc((size_t)d->no * sizeof *pending), np = 0;
  int64_t wm = NONE, late = NONE, maxo = NONE, maxr = NONE;
  for (int b = 0; b <= NB; b++) {
    dp_buf_printf(&out, "#%d\n", b);
    int64_t w = b == NB ? INT64_MAX : wm;
    for (int i = 0; i < d->no; i++) {
      if (d->orders[i].batch != b) continue;
      if (d->orders[i].t > maxo) maxo = d->orders[i].t;
      if (late != NONE && d->orders[i].t <= late) continue; /* late */
      pending[np++] = i;
    }
    for (int i = 0; i < d->nr; i++)
      if (d->rates[i].batch == b && d->rates[i].t > maxr) maxr = d->rates[i].t;
    int m = 0;
    dp_buf pad = DP_BUF_INIT; /* the padded rows follow the matched ones (one slice) */
    for (int k = 0; k < np; k++) {
      const ev *o = &d->orders[pending[k]];
      if (w == NONE || o->t > w) {
        pending[m++] = pending[k];
        continue;
      }
      int best = -1;
      for (int i = 0; i < d->nr; i++) {
        const ev *r = &d->rates[i];
        if (r->batch > b || r->cur != o->cur || r->t > o->t) continue;
        if (best < 0 || r->t > d->rates[best].t) best = i;
      }
      if (best >= 0) dp_buf_printf(&out, "%d, %d\n", o->id, d->rates[best].val);
      else if (left) dp_buf_printf(&pad, "%d, NULL\n", o->id);
    }
    if (pad.len > 0) dp_buf_printf(&out, "%s", dp_buf_cstr(&pad));
    dp_buf_free(&pad);
    np = m;
    late = w;
    if (maxo != NONE && maxr != NONE) {
      int64_t next = (maxo < maxr ? maxo : maxr) - 1000;
      if (next > wm) wm = next;
    }
  }
  free(pending);
  return dp_buf_cstr(&out) ? out.data : NULL;
}

static void check_case(const char *join, int per, int ncur, int grid, bool damage, uint64_t seed) {
  data d;
  gen(&d, per, ncur, grid, seed);
  char sql[1024];
  bool left = strstr(join, "LEFT") != NULL;
  snprintf(sql, sizeof sql, DDL "SELECT o.id, r.rate FROM orders o %s;", join);
  char *want = reference(&d, left);
  script sc;
  make_script(&sc, sql, &d);
  if (damage) {
    check_script(&sc, want);
  } else {
    run a;
    if (run_open(&a, &sc)) {
      bool ok = true;
      for (int b = 0; ok && b <= sc.nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
      CHECK_STR(dp_buf_cstr(&a.out), want);
      for (int k = 0; ok && k <= sc.nbatches; k++) check_resume_at(&sc, &a, k);
      if (ok) check_deltas(&sc, &a, 1, false);
      if (ok) check_deltas(&sc, &a, 3, false);
    }
    run_close(&a);
  }
  free(want);
  free_data(&d);
}

#define LEFT_JOIN "LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ot AS r ON o.cur = r.cur"
#define INNER_JOIN "JOIN rates FOR SYSTEM_TIME AS OF o.ot AS r ON o.cur = r.cur"
/* expression keys (op_join.c's ekeys) */
#define EKEY_JOIN "LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ot AS r ON o.cur * 2 = r.cur * 2"

TEST(temporal_join_small_batches_against_the_reference) {
  check_case(LEFT_JOIN, 5, 3, 500, true, 1);
  check_case(INNER_JOIN, 5, 2, 1000, true, 2);
}

/* 300 versions a batch over 40 keys: most become unreachable as the
** watermark passes them, and the store compacts mid-run. */
TEST(temporal_join_many_versions_prunes_and_compacts) {
  check_case(LEFT_JOIN, 300, 40, 100, false, 11);
  check_case(INNER_JOIN, 300, 40, 1, false, 12);
  check_case(EKEY_JOIN, 300, 40, 100, false, 13);
}

int main(void) { return RUN_TESTS(); }
