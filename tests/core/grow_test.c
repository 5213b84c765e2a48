/*
** grow_test.c — core/grow: the capacity rule, heap and arena arrays, and
** failures that leave the array as it was.
*/
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "dipper.h"
#include "test.h"

TEST(capacity_doubles_from_first_until_it_holds) {
  CHECK_EQ(dp_grow_cap(0, 1, 16, INT64_MAX), 16);
  CHECK_EQ(dp_grow_cap(0, 17, 16, INT64_MAX), 32);
  CHECK_EQ(dp_grow_cap(16, 17, 4, INT64_MAX), 32);
  CHECK_EQ(dp_grow_cap(16, 100, 4, INT64_MAX), 128);
  CHECK_EQ(dp_grow_cap(0, 5, 0, INT64_MAX), 8); /* no first: from 1 */
  CHECK_EQ(dp_grow_cap(0, 10, 16, 12), 12);     /* doubling stops at max */
  CHECK_EQ(dp_grow_cap(0, 13, 16, 12), -1);     /* more than max */
  CHECK_EQ(dp_grow_cap(INT_MAX / 2 + 1, INT_MAX, 4, INT_MAX), INT_MAX);
}

TEST(heap_arrays_keep_their_items) {
  int *a = NULL;
  int cap = 0;
  for (int n = 0; n < 1000; n++) {
    CHECK_EQ(dp_grow_i(&a, &cap, n + 1, sizeof *a, 4), DIPPER_OK);
    CHECK(cap >= n + 1);
    a[n] = n * 3;
  }
  CHECK_EQ(cap, 1024);
  int ok = 1;
  for (int n = 0; n < 1000; n++) ok &= a[n] == n * 3;
  CHECK(ok);
  CHECK_EQ(dp_grow_i(&a, &cap, 10, sizeof *a, 4), DIPPER_OK); /* room already: nothing moves */
  CHECK_EQ(cap, 1024);
  free(a);

  int64_t *b = NULL, bcap = 0;
  CHECK_EQ(dp_grow(&b, &bcap, 3, sizeof *b, 0), DIPPER_OK);
  CHECK_EQ(bcap, 4);
  free(b);
}

TEST(sizes_that_cannot_be_allocated_leave_the_array_alone) {
  char *a = malloc(8);
  memcpy(a, "dipper!", 8);
  int64_t cap = 8;
  char *before = a;
  CHECK_EQ(dp_grow(&a, &cap, INT64_MAX, 16, 8), DIPPER_NOMEM); /* need * size overflows */
  CHECK(a == before);
  CHECK_EQ(cap, 8);
  CHECK_STR(a, "dipper!");
  int icap = 8;
  CHECK_EQ(dp_grow_i(&a, &icap, INT_MAX, SIZE_MAX / 4, 8), DIPPER_NOMEM);
  CHECK(a == before);
  CHECK_EQ(icap, 8);
  CHECK_EQ(dp_grow_i(&a, &icap, 9, 0, 8), DIPPER_NOMEM); /* a zero size is a misuse */
  free(a);
}

TEST(arena_arrays_grow_in_place_or_move_with_their_items) {
  dp_arena *ar = dp_arena_new(0);
  CHECK(ar != NULL);
  long *v = NULL;
  int cap = 0;
  for (int n = 0; n < 500; n++) {
    CHECK_EQ(dp_arena_grow_i(ar, &v, &cap, n + 1, sizeof *v, 2), DIPPER_OK);
    v[n] = (long)n - 7;
    if (n % 50 == 0) CHECK(dp_arena_alloc(ar, 24) != NULL); /* something after it: it moves */
  }
  int ok = 1;
  for (int n = 0; n < 500; n++) ok &= v[n] == (long)n - 7;
  CHECK(ok);
  CHECK_EQ(cap, 512);
  CHECK_EQ(dp_arena_grow_i(ar, &v, &cap, INT_MAX, SIZE_MAX / 2, 2), DIPPER_NOMEM);
  CHECK_EQ(cap, 512);
  dp_arena_free(ar);
}

int main(void) { return RUN_TESTS(); }
