/*
** test.h — the unit-test harness: one file per module, each test a function.
**
**   TEST(arena_grows) { ... CHECK(x == 1); CHECK_STR(a, "b"); ... }
**   int main(void) { return RUN_TESTS(); }
**
** A failed CHECK prints file:line and the expression, marks the test failed
** and goes on.  The run ends with "N passed, N failed" on a line of its own.
*/
#ifndef DP_TEST_H
#define DP_TEST_H

#include <stdio.h>
#include <string.h>

typedef void (*dp_test_fn)(void);
typedef struct dp_test_entry { const char *name; dp_test_fn fn; } dp_test_entry;

static dp_test_entry dp_tests_[512];
static int dp_ntests_;
static int dp_test_failed_;
static int dp_checks_;

/* The parameter is not called `name`: it would also replace the field. */
#define TEST(test_name)                                                   \
  static void test_##test_name(void);                                     \
  __attribute__((constructor)) static void reg_##test_name(void) {        \
    dp_tests_[dp_ntests_].name = #test_name;                              \
    dp_tests_[dp_ntests_++].fn = test_##test_name;                        \
  }                                                                       \
  static void test_##test_name(void)

#define CHECK(cond)                                                       \
  do {                                                                    \
    dp_checks_++;                                                         \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      dp_test_failed_ = 1;                                                \
    }                                                                     \
  } while (0)

#define CHECK_EQ(a, b)                                                    \
  do {                                                                    \
    long long a_ = (long long)(a), b_ = (long long)(b);                   \
    dp_checks_++;                                                         \
    if (a_ != b_) {                                                       \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", \
              __FILE__, __LINE__, #a, #b, a_, b_);                        \
      dp_test_failed_ = 1;                                                \
    }                                                                     \
  } while (0)

#define CHECK_STR(a, b)                                                   \
  do {                                                                    \
    const char *a_ = (a), *b_ = (b);                                      \
    dp_checks_++;                                                         \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                              \
      fprintf(stderr, "%s:%d: CHECK_STR failed: %s\n  got:      \"%s\"\n  expected: \"%s\"\n", \
              __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
      dp_test_failed_ = 1;                                                \
    }                                                                     \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                       \
  do {                                                                    \
    const char *h_ = (hay), *n_ = (needle);                               \
    dp_checks_++;                                                         \
    if (!h_ || !strstr(h_, n_)) {                                         \
      fprintf(stderr, "%s:%d: CHECK_CONTAINS failed: %s\n  in:     \"%s\"\n  wanted: \"%s\"\n", \
              __FILE__, __LINE__, #hay, h_ ? h_ : "(null)", n_);          \
      dp_test_failed_ = 1;                                                \
    }                                                                     \
  } while (0)

static inline int dp_run_tests_(void) {
  int passed = 0, failed = 0;
  for (int i = 0; i < dp_ntests_; i++) {
    dp_test_failed_ = 0;
    dp_tests_[i].fn();
    if (dp_test_failed_) {
      fprintf(stderr, "FAIL %s\n", dp_tests_[i].name);
      failed++;
    } else {
      passed++;
    }
  }
  if (dp_checks_ == 0) failed++; /* a file that checks nothing is a broken test */
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
#define RUN_TESTS() dp_run_tests_()

#endif /* DP_TEST_H */
