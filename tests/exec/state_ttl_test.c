/*
** state_ttl_test.c — exec/state_ttl.h: keys in order of last write, expired
** oldest first at now − ttl, renumbered with their owner, saved and loaded
** exactly; the cost of an expiry is what expires (the list is walked from
** its head only).  Deltas of the list (what changed since the last save or
** load) rebuild it exactly along a chain of whole sections and deltas, also
** from a chain continued by a restored list; a delta after a batch that
** touched few of many keys is a few bytes a key touched; and, through the
** aggregation (a GROUP BY under a TTL, its clock moving), a run resumed from
** every step of a chain of delta checkpoints emits what the straight run
** emits and ends in the same state, byte for byte.
*/
#include <stdlib.h>
#include <string.h>

#include "dipper.h"
#include "exec/state_ttl.h"
#include "ops_state_harness.h"

static int64_t expire(dp_state_ttl *t, int64_t now, int64_t *out, int64_t cap) {
  int64_t *ids = NULL, n = 0;
  if (dp_state_ttl_expire(t, now, &ids, &n) != DIPPER_OK) return -1;
  for (int64_t i = 0; i < n && i < cap; i++) out[i] = ids[i];
  free(ids);
  return n;
}

TEST(a_touch_renews_and_expiry_takes_the_oldest_first) {
  dp_state_ttl t;
  CHECK_EQ(dp_state_ttl_init(&t, 10), DIPPER_OK);
  CHECK_EQ(dp_state_ttl_touch(&t, 3, 100), DIPPER_OK);
  CHECK_EQ(dp_state_ttl_touch(&t, 1, 100), DIPPER_OK);
  CHECK_EQ(dp_state_ttl_touch(&t, 7, 104), DIPPER_OK);
  CHECK_EQ(dp_state_ttl_touch(&t, 3, 105), DIPPER_OK); /* renewed: now after 7 */
  int64_t got[8];
  CHECK_EQ(expire(&t, 109, got, 8), 0);                /* 100 + 10 > 109 */
  CHECK_EQ(expire(&t, 110, got, 8), 1);                /* at or before now − ttl */
  CHECK_EQ(got[0], 1);
  CHECK_EQ(expire(&t, 115, got, 8), 2);
  CHECK_EQ(got[0], 7);
  CHECK_EQ(got[1], 3);
  CHECK_EQ(t.count, 0);
  /* time never goes back: a touch at an earlier clock counts as the latest */
  CHECK_EQ(dp_state_ttl_touch(&t, 2, 50), DIPPER_OK);
  CHECK_EQ(t.slot[2].at, 115);
  CHECK_EQ(expire(&t, 124, got, 8), 0);
  CHECK_EQ(expire(&t, 125, got, 8), 1);
  dp_state_ttl_remove(&t, 2); /* not listed any more: nothing happens */
  dp_state_ttl_free(&t);
}

TEST(renumber_follows_a_compaction_and_keeps_the_order) {
  dp_state_ttl t;
  CHECK_EQ(dp_state_ttl_init(&t, 10), DIPPER_OK);
  for (int64_t id = 0; id < 6; id++) CHECK_EQ(dp_state_ttl_touch(&t, id, 100 + id), DIPPER_OK);
  dp_state_ttl_remove(&t, 4);
  /* ids 1 and 4 dropped by the owner; the rest slide down */
  int64_t remap[6] = {0, -1, 1, 2, -1, 3};
  CHECK_EQ(dp_state_ttl_renumber(&t, remap, 6), DIPPER_OK);
  CHECK_EQ(t.count, 4);
  int64_t got[8];
  CHECK_EQ(expire(&t, 115, got, 8), 4); /* 100, 102, 103, 105: all at or before 105 */
  CHECK_EQ(got[0], 0);
  CHECK_EQ(got[1], 1);
  CHECK_EQ(got[2], 2);
  CHECK_EQ(got[3], 3);
  dp_state_ttl_free(&t);
}

TEST(save_and_load_give_the_same_list) {
  dp_state_ttl t, u;
  CHECK_EQ(dp_state_ttl_init(&t, 10), DIPPER_OK);
  CHECK_EQ(dp_state_ttl_init(&u, 10), DIPPER_OK);
  int64_t order[] = {5, 2, 9, 0, 7};
  for (int i = 0; i < 5; i++) CHECK_EQ(dp_state_ttl_touch(&t, order[i], 1000 + i / 2), DIPPER_OK);
  dp_buf b = DP_BUF_INIT;
  dp_state_ttl_save(&t, &b);
  CHECK(!b.oom);
  dp_rd in;
  dp_rd_init(&in, b.data, b.len);
  CHECK_EQ(dp_state_ttl_load(&u, &in, 10), DIPPER_OK);
  CHECK_EQ(in.pos, b.len);
  CHECK_EQ(u.count, 5);
  CHECK_EQ(u.clock, t.clock);
  int64_t a[8], c[8];
  CHECK_EQ(expire(&t, 2000, a, 8), 5);
  CHECK_EQ(expire(&u, 2000, c, 8), 5);
  for (int i = 0; i < 5; i++) CHECK_EQ(a[i], c[i]);
  CHECK_EQ(a[0], 5);
  CHECK_EQ(a[4], 7);
  /* an id past the owner's keys, a truncated list: refused */
  dp_rd_init(&in, b.data, b.len);
  CHECK_EQ(dp_state_ttl_load(&u, &in, 9), DIPPER_CORRUPT);
  dp_rd_init(&in, b.data, b.len - 1);
  CHECK_EQ(dp_state_ttl_load(&u, &in, 10), DIPPER_CORRUPT);
  dp_buf_free(&b);
  dp_state_ttl_free(&t);
  dp_state_ttl_free(&u);
}

/* The cost of an expiry is what expires: with a million keys listed and one
** expired, expire visits the head and stops (counted by the keys it hands
** out and by the list it leaves, not timed). */
TEST(an_expiry_costs_what_expires) {
  dp_state_ttl t;
  CHECK_EQ(dp_state_ttl_init(&t, 10), DIPPER_OK);
  CHECK_EQ(dp_state_ttl_touch(&t, 0, 0), DIPPER_OK);
  for (int64_t id = 1; id <= 1000000; id++) CHECK_EQ(dp_state_ttl_touch(&t, id, 5), DIPPER_OK);
  int64_t got[2];
  CHECK_EQ(expire(&t, 10, got, 2), 1);
  CHECK_EQ(got[0], 0);
  CHECK_EQ(t.head, 1);
  CHECK_EQ(t.count, 1000000);
  dp_state_ttl_free(&t);
}

/* ---- deltas ---- */

/* t and u hold the same list: same order, times, count and clock. */
static void check_same_list(const dp_state_ttl *t, const dp_state_ttl *u) {
  CHECK_EQ(t->count, u->count);
  CHECK_EQ(t->clock, u->clock);
  int64_t a = t->head, b = u->head, n = 0;
  while (a >= 0 && b >= 0 && a == b && t->slot[a].at == u->slot[b].at) {
    a = t->slot[a].next;
    b = u->slot[b].next;
    n++;
  }
  CHECK(a < 0 && b < 0);
  CHECK_EQ(n, t->count);
}

static uint64_t ttl_rng = 88172645463325252u;
static int64_t rnd(int64_t n) {
  ttl_rng ^= ttl_rng << 13;
  ttl_rng ^= ttl_rng >> 7;
  ttl_rng ^= ttl_rng << 17;
  return (int64_t)(ttl_rng % (uint64_t)n);
}

#define NIDS 3000

/* One round at `now`: some keys written (new ones and old ones renewed,
** the tail's own key too), a few removed by the owner, then the expiry. */
static void round_of(dp_state_ttl *t, int64_t now, int64_t *nids) {
  int64_t w = 1 + rnd(60);
  for (int64_t i = 0; i < w; i++) {
    int64_t id = rnd(*nids + 20 < NIDS ? *nids + 20 : NIDS);
    CHECK_EQ(dp_state_ttl_touch(t, id, now), DIPPER_OK);
    if (id >= *nids) *nids = id + 1;
  }
  if (t->tail >= 0) CHECK_EQ(dp_state_ttl_touch(t, t->tail, now), DIPPER_OK);
  for (int64_t i = 0; i < 3; i++) dp_state_ttl_remove(t, rnd(*nids));
  int64_t *ids = NULL, n = 0;
  CHECK_EQ(dp_state_ttl_expire(t, now, &ids, &n), DIPPER_OK);
  free(ids);
}

/* Sections: whole at step 0 (and every 7th), else deltas; a renumbering at
** step 9 (the owner compacted: that delta is whole). */
typedef struct ttl_chain {
  dp_buf sec[40];
  int n;
} ttl_chain;

static void save_step(dp_state_ttl *t, ttl_chain *c, int step) {
  dp_buf *b = &c->sec[c->n++];
  memset(b, 0, sizeof *b);
  if (step % 7 == 0) dp_state_ttl_save_section_base(t, b);
  else CHECK_EQ(dp_state_ttl_save_section_delta(t, b), DIPPER_OK);
  CHECK(!b->oom && b->len > 0);
}

/* Sections [0, upto] of c, section i for an owner of nids[i] keys. */
static int load_chain(dp_state_ttl *u, const ttl_chain *c, int upto, const int64_t *nids) {
  for (int i = 0; i <= upto; i++) {
    dp_rd in;
    dp_rd_init(&in, c->sec[i].data, c->sec[i].len);
    int rc = dp_state_ttl_load_section(u, &in, nids[i], 0);
    if (rc) return rc;
    if (!dp_rd_done(&in)) return DIPPER_CORRUPT;
  }
  return DIPPER_OK;
}

static void renumber_half(dp_state_ttl *t, int64_t *nids) {
  int64_t *remap = malloc((size_t)*nids * sizeof *remap), k = 0;
  for (int64_t id = 0; id < *nids; id++) remap[id] = id % 3 == 1 ? -1 : k++;
  CHECK_EQ(dp_state_ttl_renumber(t, remap, *nids), DIPPER_OK);
  *nids = k;
  free(remap);
}

TEST(deltas_rebuild_the_list_exactly_along_a_chain) {
  dp_state_ttl t;
  CHECK_EQ(dp_state_ttl_init(&t, 5), DIPPER_OK);
  static ttl_chain c;
  static int64_t nids_at[40];
  c.n = 0;
  int64_t nids = 0, kinds_u = 0;
  for (int step = 0; step < 30; step++) {
    round_of(&t, 100 + step, &nids);
    if (step == 9) renumber_half(&t, &nids);
    save_step(&t, &c, step);
    nids_at[step] = nids;
    kinds_u += c.sec[step].data[0] == 'U';
    dp_state_ttl u;
    CHECK_EQ(dp_state_ttl_init(&u, 5), DIPPER_OK);
    CHECK_EQ(load_chain(&u, &c, step, nids_at), DIPPER_OK);
    check_same_list(&t, &u);
    dp_state_ttl_free(&u);
  }
  CHECK(kinds_u >= 20);           /* most steps wrote a delta */
  CHECK_EQ(c.sec[9].data[0], 'T'); /* the renumbered step: whole */
  /* a run restored at step k goes on, its own deltas on what it loaded:
  ** that chain rebuilds the list of the run that went straight on */
  for (int k = 3; k < 30; k += 8) {
    dp_state_ttl a, b;
    CHECK_EQ(dp_state_ttl_init(&a, 5), DIPPER_OK);
    CHECK_EQ(dp_state_ttl_init(&b, 5), DIPPER_OK);
    CHECK_EQ(load_chain(&a, &c, k, nids_at), DIPPER_OK);
    CHECK_EQ(load_chain(&b, &c, k, nids_at), DIPPER_OK);
    int64_t na = nids_at[k], nb = na;
    uint64_t seed = ttl_rng;
    static ttl_chain more;
    static int64_t nids_more[40];
    more.n = 0;
    for (int step = k + 1; step < k + 6; step++) {
      ttl_rng = seed + (uint64_t)step;
      round_of(&a, 200 + step, &na);
      dp_buf *d = &more.sec[more.n++];
      memset(d, 0, sizeof *d);
      CHECK_EQ(dp_state_ttl_save_section_delta(&a, d), DIPPER_OK);
      nids_more[more.n - 1] = na;
      ttl_rng = seed + (uint64_t)step;
      round_of(&b, 200 + step, &nb);
    }
    dp_state_ttl w;
    CHECK_EQ(dp_state_ttl_init(&w, 5), DIPPER_OK);
    CHECK_EQ(load_chain(&w, &c, k, nids_at), DIPPER_OK);
    CHECK_EQ(load_chain(&w, &more, more.n - 1, nids_more), DIPPER_OK);
    check_same_list(&w, &b);
    /* a delta applied to another base is refused */
    dp_state_ttl x;
    CHECK_EQ(dp_state_ttl_init(&x, 5), DIPPER_OK);
    CHECK_EQ(load_chain(&x, &c, k, nids_at), DIPPER_OK);
    int last_u = more.n - 1;
    while (last_u > 0 && more.sec[last_u].data[0] != 'U') last_u--;
    if (more.sec[last_u].data[0] == 'U') {
      dp_rd in;
      dp_rd_init(&in, more.sec[last_u].data, more.sec[last_u].len);
      int rc = dp_state_ttl_load_section(&x, &in, na, 0);
      CHECK(rc == DIPPER_CORRUPT || last_u == 0);
    }
    for (int i = 0; i < more.n; i++) dp_buf_free(&more.sec[i]);
    dp_state_ttl_free(&a);
    dp_state_ttl_free(&b);
    dp_state_ttl_free(&w);
    dp_state_ttl_free(&x);
  }
  /* every truncation of a delta is refused, never a crash */
  for (int i = 1; i < c.n; i++) {
    if (c.sec[i].data[0] != 'U') continue;
    for (size_t cut = 1; cut < c.sec[i].len; cut++) {
      dp_state_ttl u;
      CHECK_EQ(dp_state_ttl_init(&u, 5), DIPPER_OK);
      CHECK_EQ(load_chain(&u, &c, i - 1, nids_at), DIPPER_OK);
      dp_rd in;
      dp_rd_init(&in, c.sec[i].data, cut);
      CHECK_EQ(dp_state_ttl_load_section(&u, &in, nids_at[i], 0), DIPPER_CORRUPT);
      dp_state_ttl_free(&u);
    }
    break;
  }
  for (int i = 0; i < c.n; i++) dp_buf_free(&c.sec[i]);
  dp_state_ttl_free(&t);
}

/* A million keys under the TTL, a batch that writes 100 of them and adds 100:
** the whole list is megabytes, the delta a few hundred bytes. */
TEST(a_delta_after_a_small_batch_is_small) {
  dp_state_ttl t, u;
  CHECK_EQ(dp_state_ttl_init(&t, 1000000), DIPPER_OK);
  CHECK_EQ(dp_state_ttl_init(&u, 1000000), DIPPER_OK);
  for (int64_t id = 0; id < 1000000; id++)
    CHECK_EQ(dp_state_ttl_touch(&t, id, 1000 + id / 10000), DIPPER_OK);
  dp_buf whole = DP_BUF_INIT, delta = DP_BUF_INIT;
  dp_state_ttl_save_section_base(&t, &whole);
  for (int64_t i = 0; i < 100; i++) {
    CHECK_EQ(dp_state_ttl_touch(&t, i * 9973, 2000), DIPPER_OK);
    CHECK_EQ(dp_state_ttl_touch(&t, 1000000 + i, 2000), DIPPER_OK);
  }
  CHECK_EQ(dp_state_ttl_save_section_delta(&t, &delta), DIPPER_OK);
  fprintf(stderr, "  TTL of 1,000,000 keys: whole %zu bytes, delta of 100 written and 100 new %zu bytes\n",
          whole.len, delta.len);
  CHECK(whole.len > 2000000);
  CHECK_EQ(delta.data[0], 'U');
  CHECK(delta.len < 1200);
  dp_rd in;
  dp_rd_init(&in, whole.data, whole.len);
  CHECK_EQ(dp_state_ttl_load_section(&u, &in, 1000000, 0), DIPPER_OK);
  dp_rd_init(&in, delta.data, delta.len);
  CHECK_EQ(dp_state_ttl_load_section(&u, &in, 1000100, 0), DIPPER_OK);
  CHECK(dp_rd_done(&in));
  check_same_list(&t, &u);
  dp_buf_free(&whole);
  dp_buf_free(&delta);
  dp_state_ttl_free(&t);
  dp_state_ttl_free(&u);
}

/* ---- through the aggregation ---- */

#define KV_DDL                                                                           \
  "SET 'table.exec.state.ttl' = '2500 ms';\n"                                            \
  "CREATE TABLE kv (k INT, v STRING) WITH ('connector' = 'memory');\n"                   \
  "SELECT k, COUNT(*) AS c FROM kv GROUP BY k;"

/* Batch b at b seconds: keys b % 5 .. + 4 of 0..11, so that keys idle for
** 2.5 s expire and come back afresh. */
static char *kv_rows(int b) {
  dp_buf out = DP_BUF_INIT;
  for (int i = 0; i < 4; i++) dp_buf_printf(&out, "{\"k\": %d, \"v\": \"x\"}\n", (b * 3 + i * 5) % 12);
  return out.data;
}

static int clocked_batch(run *r, int b) {
  r->h->ex.batch_start_time = (int64_t)b * 1000000;
  return run_batch(r, b);
}

TEST(a_group_by_under_a_ttl_resumes_from_every_delta) {
  enum { NB_KV = 7 };
  char *data[NB_KV];
  script sc = {KV_DDL, {"kv"}, {{NULL}}, NB_KV};
  for (int b = 0; b < NB_KV; b++) sc.data[b][0] = data[b] = kv_rows(b);
  static blobs chain_[NB_KV + 1], full[NB_KV + 1];
  run a;
  bool ok = run_open(&a, &sc);
  for (int b = 0; ok && b <= NB_KV; b++) {
    ok = clocked_batch(&a, b) == DIPPER_OK;
    if (ok) save_all_as(&a, &chain_[b], b > 0);
    if (ok) CHECK(chain_[b].n == 1 && chain_[b].delta[0] == (b > 0));
  }
  run ref;
  ok = ok && run_open(&ref, &sc);
  for (int b = 0; ok && b <= NB_KV; b++) {
    ok = clocked_batch(&ref, b) == DIPPER_OK;
    if (ok) save_all(&ref, &full[b]);
  }
  run_close(&ref);
  CHECK(ok);
  /* keys idle 2.5 s or more expire and come back afresh: key 0 counts 1 at
  ** #0, is away 3 s, counts 1 again at #3 and 2 at #4 */
  CHECK_STR(dp_buf_cstr(&a.out),
            "#0\n0, 1\n5, 1\n10, 1\n3, 1\n#1\n3, 2\n8, 1\n1, 1\n6, 1\n#2\n6, 2\n11, 1\n4, 1\n"
            "9, 1\n#3\n9, 2\n2, 1\n7, 1\n0, 1\n#4\n0, 2\n5, 1\n10, 1\n3, 1\n#5\n3, 2\n8, 1\n"
            "1, 1\n6, 1\n#6\n6, 2\n11, 1\n4, 1\n9, 1\n#7\n");
  for (int k = 0; ok && k < NB_KV; k++) {
    const blobs *seq[NB_KV + 1];
    for (int i = 0; i <= k; i++) seq[i] = &chain_[i];
    run d;
    if (!run_open(&d, &sc)) break;
    CHECK_EQ(restore_seq(&d, seq, k + 1), DIPPER_OK);
    check_same_state(&d, &full[k], "a TTL'd GROUP BY from its deltas", k);
    static blobs mine[NB_KV + 1];
    int nm = 0;
    for (int b = k + 1; b <= NB_KV && ok; b++) {
      ok = clocked_batch(&d, b) == DIPPER_OK;
      if (ok) save_all_as(&d, &mine[nm++], true);
    }
    const char *want = a.out.data + a.mark[k + 1];
    CHECK_STR(dp_buf_cstr(&d.out), want);
    run_close(&d);
    /* the resumed run's own deltas, on what it restored */
    run e;
    if (ok && run_open(&e, &sc)) {
      for (int i = 0; i < nm; i++) seq[k + 1 + i] = &mine[i];
      CHECK_EQ(restore_seq(&e, seq, k + 1 + nm), DIPPER_OK);
      check_same_state(&e, &full[NB_KV], "a resumed TTL'd GROUP BY's deltas", NB_KV);
    }
    run_close(&e);
    for (int i = 0; i < nm; i++) free_blobs(&mine[i]);
  }
  run_close(&a);
  for (int b = 0; b <= NB_KV; b++) {
    free_blobs(&chain_[b]);
    free_blobs(&full[b]);
  }
  for (int b = 0; b < NB_KV; b++) free(data[b]);
}

/* DISTINCT under a TTL (the harness's clock stands still: nothing expires),
** its TTL sections deltas: resumed after every batch and from delta chains. */
TEST(distinct_under_a_ttl_through_the_checkpoint_checks) {
  static const script distinct = {
      "SET 'table.exec.state.ttl' = '1 h';\n"
      "CREATE TABLE kv (k INT, v STRING) WITH ('connector' = 'memory');\n"
      "SELECT DISTINCT k, v FROM kv;",
      {"kv"},
      {{"{\"k\": 1, \"v\": \"a\"}\n{\"k\": 2, \"v\": \"b\"}\n"},
       {"{\"k\": 1, \"v\": \"a\"}\n{\"k\": 3, \"v\": \"c\"}\n"},
       {"{\"k\": 4, \"v\": \"d\"}\n{\"k\": 2, \"v\": \"b\"}\n"}},
      3};
  /* Not check_script's damage checks: a blob cut exactly before its TTL
  ** section reads as one written before the TTL was set (the format's
  ** rule; the checkpoint file's length and CRC are what catch a cut). */
  (void)check_script;
  run a;
  bool ok = run_open(&a, &distinct);
  for (int b = 0; ok && b <= distinct.nbatches; b++) ok = run_batch(&a, b) == DIPPER_OK;
  CHECK_STR(dp_buf_cstr(&a.out), "#0\n1, 'a'\n2, 'b'\n#1\n3, 'c'\n#2\n4, 'd'\n#3\n");
  for (int k = 0; ok && k <= distinct.nbatches; k++) check_resume_at(&distinct, &a, k);
  if (ok) check_deltas(&distinct, &a, 1, false);
  if (ok) check_deltas(&distinct, &a, 2, false);
  run_close(&a);
}

/* 100,000 groups under the TTL, then a batch that writes 10 of them: the
** aggregation's delta with its TTL section is a few hundred bytes. */
TEST(a_ttl_group_by_checkpoint_after_a_small_batch_is_small) {
  dp_buf big = DP_BUF_INIT, small = DP_BUF_INIT;
  for (int i = 0; i < 100000; i++) dp_buf_printf(&big, "{\"k\": %d, \"v\": \"x\"}\n", i);
  for (int i = 0; i < 10; i++) dp_buf_printf(&small, "{\"k\": %d, \"v\": \"x\"}\n", i * 7919);
  script sc = {KV_DDL, {"kv"}, {{big.data}, {small.data}}, 2};
  run r;
  blobs base, delta, whole;
  CHECK(run_open(&r, &sc));
  CHECK_EQ(clocked_batch(&r, 0), DIPPER_OK);
  save_all(&r, &base);
  CHECK_EQ(clocked_batch(&r, 1), DIPPER_OK);
  save_all_as(&r, &delta, true);
  save_all(&r, &whole);
  CHECK_EQ(delta.n, 1);
  fprintf(stderr, "  GROUP BY under a TTL, 100,000 groups: whole state %zu bytes, a batch of 10 "
                  "rows' delta %zu bytes\n", whole.b[0].len, delta.b[0].len);
  CHECK(whole.b[0].len > 500000);
  CHECK(delta.b[0].len < 1000);
  const blobs *seq[] = {&base, &delta};
  run again;
  CHECK(run_open(&again, &sc));
  CHECK_EQ(restore_seq(&again, seq, 2), DIPPER_OK);
  check_same_state(&again, &whole, "a TTL'd GROUP BY from its delta", 1);
  run_close(&again);
  run_close(&r);
  free_blobs(&base);
  free_blobs(&delta);
  free_blobs(&whole);
  dp_buf_free(&big);
  dp_buf_free(&small);
}

int main(void) { return RUN_TESTS(); }
