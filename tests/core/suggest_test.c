/*
** suggest_test.c — "did you mean": the case-insensitive distance with a
** swap as one edit, its early stop at the limit, and the nearest-name rule
** (one edit for short names, two for longer, none across one-letter names).
*/
#include <string.h>

#include "core/suggest.h"
#include "test.h"

TEST(edit_distance) {
  CHECK_EQ(dp_edit_distance("orders", "ORDERS", 2), 0);
  CHECK_EQ(dp_edit_distance("orders", "ordrs", 2), 1);
  CHECK_EQ(dp_edit_distance("kafka", "kafak", 2), 1); /* a swap is one edit */
  CHECK_EQ(dp_edit_distance("cuont", "count", 2), 1);
  CHECK_EQ(dp_edit_distance("abc", "xyz", 2), 3);      /* limit + 1 */
  CHECK_EQ(dp_edit_distance("abc", "abcdefgh", 2), 3); /* too far by length alone */
  CHECK_EQ(dp_edit_distance("", "ab", 2), 2);
  CHECK_EQ(dp_edit_distance("kitten", "sitting", 5), 3);
  char a[80], b[80];
  memset(a, 'x', 79), a[79] = 0;
  memcpy(b, a, sizeof b);
  CHECK_EQ(dp_edit_distance(a, b, 2), 0); /* long names: equal or not */
  b[3] = 'y';
  CHECK_EQ(dp_edit_distance(a, b, 2), 3);
}

TEST(closest) {
  const char *names[] = {"datagen", "kafka", "kinesis"};
  CHECK_STR(dp_closest_of("kafak", names, 3), "kafka");
  CHECK_STR(dp_closest_of("datagne", names, 3), "datagen");
  CHECK_STR(dp_closest_of("KAFKA", names, 3), "kafka");
  CHECK(dp_closest_of("x", names, 3) == NULL);
  CHECK(dp_closest_of(NULL, names, 3) == NULL);
  const char *short_names[] = {"a", "b", "ab", "abc"};
  CHECK(dp_closest_of("c", short_names, 4) == NULL); /* one letter is no hint */
  CHECK_STR(dp_closest_of("A", short_names, 4), "a");
  CHECK_STR(dp_closest_of("abd", short_names, 4), "ab"); /* the first of the nearest */
  CHECK(dp_closest_of("xbd", short_names, 4) == NULL);  /* three letters: one edit only */
  const char *with_null[] = {NULL, "amount"};
  CHECK_STR(dp_closest_of("amuont", with_null, 2), "amount");
  dp_closest c;
  dp_closest_init(&c, "lenght");
  dp_closest_add(&c, "left");
  dp_closest_add(&c, "length");
  CHECK_STR(c.best, "length");
  CHECK_EQ(c.best_dist, 1);
}

int main(void) { return RUN_TESTS(); }
