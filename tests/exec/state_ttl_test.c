/*
** state_ttl_test.c — exec/state_ttl.h: keys in order of last write, expired
** oldest first at now − ttl, renumbered with their owner, saved and loaded
** exactly; the cost of an expiry is what expires (the list is walked from
** its head only).
*/
#include <stdlib.h>
#include <string.h>

#include "dipper.h"
#include "exec/state_ttl.h"
#include "test.h"

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

int main(void) { return RUN_TESTS(); }
