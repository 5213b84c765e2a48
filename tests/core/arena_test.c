/*
** arena_test.c — the block arena and the growable buffer: alignment, growth
** past the block size, mark/release, reset, strings and printf helpers.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "dipper.h"
#include "test.h"

TEST(allocations_are_16_byte_aligned) {
  dp_arena *a = dp_arena_new(0);
  CHECK(a != NULL);
  for (size_t n = 0; n < 100; n++) {
    void *p = dp_arena_alloc(a, n);
    CHECK(p != NULL);
    CHECK_EQ((uintptr_t)p % 16, 0);
  }
  dp_arena_free(a);
}

TEST(distinct_allocations_do_not_overlap) {
  dp_arena *a = dp_arena_new(64);
  char *x = dp_arena_alloc(a, 0);
  char *y = dp_arena_alloc(a, 0);
  CHECK(x != y);
  char *p = dp_arena_alloc(a, 10), *q = dp_arena_alloc(a, 10);
  memset(p, 'p', 10);
  memset(q, 'q', 10);
  CHECK(p[9] == 'p' && q[0] == 'q');
  CHECK(q >= p + 10 || p >= q + 10);
  dp_arena_free(a);
}

TEST(grows_past_the_block_size) {
  dp_arena *a = dp_arena_new(128);
  /* many small allocations spill into new blocks and all stay usable */
  unsigned char *ptrs[1000];
  for (int i = 0; i < 1000; i++) {
    ptrs[i] = dp_arena_alloc(a, 40);
    CHECK(ptrs[i] != NULL);
    memset(ptrs[i], i & 0xff, 40);
  }
  for (int i = 0; i < 1000; i++) CHECK(ptrs[i][39] == (i & 0xff));
  /* one allocation much larger than any block so far */
  unsigned char *big = dp_arena_alloc(a, 1 << 20);
  CHECK(big != NULL);
  memset(big, 7, 1 << 20);
  CHECK(big[(1 << 20) - 1] == 7);
  CHECK(dp_arena_used(a) >= 1000 * 48 + (1 << 20));
  dp_arena_free(a);
}

TEST(calloc_zeroes_and_checks_overflow) {
  dp_arena *a = dp_arena_new(0);
  int *z = dp_arena_calloc(a, 100, sizeof(int));
  CHECK(z != NULL);
  int sum = 0;
  for (int i = 0; i < 100; i++) sum += z[i];
  CHECK_EQ(sum, 0);
  CHECK(dp_arena_calloc(a, SIZE_MAX / 2, 4) == NULL);
  CHECK(dp_arena_alloc(a, SIZE_MAX - 4) == NULL);
  CHECK(dp_arena_grow(a, NULL, 0, SIZE_MAX / 2, 8) == NULL);
  dp_arena_free(a);
}

TEST(mark_and_release) {
  dp_arena *a = dp_arena_new(256);
  char *keep = dp_arena_strdup(a, "keep me");
  size_t used = dp_arena_used(a);
  dp_arena_mark m = dp_arena_save(a);
  for (int i = 0; i < 200; i++) CHECK(dp_arena_alloc(a, 100) != NULL); /* several blocks */
  CHECK(dp_arena_used(a) > used + 200 * 100);
  dp_arena_release(a, m);
  CHECK_EQ(dp_arena_used(a), used);
  CHECK_STR(keep, "keep me");
  /* the space after the mark is handed out again */
  char *again = dp_arena_alloc(a, 16);
  dp_arena_release(a, m);
  char *same = dp_arena_alloc(a, 16);
  CHECK(again == same);
  dp_arena_free(a);
}

TEST(reset_keeps_the_first_block) {
  dp_arena *a = dp_arena_new(1024);
  void *first = dp_arena_alloc(a, 8);
  for (int i = 0; i < 100; i++) dp_arena_alloc(a, 1000);
  dp_arena_reset(a);
  CHECK_EQ(dp_arena_used(a), 0);
  void *after = dp_arena_alloc(a, 8);
  CHECK(first == after); /* same memory: the first block survived */
  dp_arena_free(a);
}

TEST(string_helpers) {
  dp_arena *a = dp_arena_new(0);
  CHECK(dp_arena_strdup(a, NULL) == NULL);
  CHECK_STR(dp_arena_strdup(a, "abc"), "abc");
  CHECK_STR(dp_arena_strndup(a, "abcdef", 3), "abc");
  CHECK_STR(dp_arena_strndup(a, "ab", 10), "ab");
  CHECK_STR(dp_arena_printf(a, "%s=%d", "x", 42), "x=42");
  char long_text[5000];
  memset(long_text, 'z', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  char *p = dp_arena_printf(a, "<%s>", long_text);
  CHECK(p && strlen(p) == sizeof long_text + 1 && p[0] == '<' && p[4999] == 'z');
  dp_arena_free(a);
}

TEST(grow_keeps_contents_and_extends_in_place) {
  dp_arena *a = dp_arena_new(4096);
  int *xs = NULL;
  size_t cap = 0;
  for (int i = 0; i < 5000; i++) {
    if ((size_t)i == cap) {
      size_t ncap = cap ? cap * 2 : 4;
      xs = dp_arena_grow(a, xs, cap, ncap, sizeof *xs);
      CHECK(xs != NULL);
      cap = ncap;
    }
    xs[i] = i;
  }
  long sum = 0;
  for (int i = 0; i < 5000; i++) sum += xs[i];
  CHECK_EQ(sum, 4999L * 5000 / 2);
  /* the newest allocation grows where it stands when the block has room */
  dp_arena_reset(a);
  char *s = dp_arena_alloc(a, 16);
  memset(s, 0xAB, 16);
  char *t = dp_arena_grow(a, s, 16, 64, 1);
  CHECK(s == t);
  /* the new part is zeroed, in place or moved, on dirty memory */
  int zero = 1;
  for (int i = 16; i < 64; i++) zero &= t[i] == 0;
  CHECK(zero);
  CHECK_EQ((unsigned char)t[15], 0xAB);
  dp_arena_reset(a);
  char *dirty = dp_arena_alloc(a, 256);
  memset(dirty, 0xCD, 256);
  dp_arena_reset(a);
  char *first = dp_arena_grow(a, NULL, 0, 100, 1);
  zero = 1;
  for (int i = 0; i < 100; i++) zero &= first[i] == 0;
  CHECK(zero);
  dp_arena_free(a);
}

/* Random allocations, marks and releases: every live allocation keeps its
** bytes, whatever was released around it. */
TEST(random_marks_keep_live_data) {
  dp_arena *a = dp_arena_new(100);
  struct live {
    unsigned char *p;
    size_t n;
    unsigned char fill;
  } lives[400];
  int nlive = 0;
  dp_arena_mark marks[16];
  int mark_at[16]; /* nlive when the mark was taken */
  int nmarks = 0;
  uint64_t state = 7;
  int bad = 0;
  for (int step = 0; step < 20000; step++) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    unsigned op = (unsigned)(state >> 60);
    if (op < 10 && nlive < 400) {
      size_t n = (size_t)(state >> 20) % 700;
      unsigned char *p = dp_arena_alloc(a, n);
      if (!p || (uintptr_t)p % 16) bad++;
      lives[nlive] = (struct live){p, n, (unsigned char)step};
      memset(p, lives[nlive].fill, n);
      nlive++;
    } else if (op < 12 && nmarks < 16) {
      marks[nmarks] = dp_arena_save(a);
      mark_at[nmarks++] = nlive;
    } else if (op < 14 && nmarks > 0) {
      nmarks--;
      dp_arena_release(a, marks[nmarks]);
      nlive = mark_at[nmarks];
    }
    if (step % 1000 == 0)
      for (int i = 0; i < nlive; i++)
        for (size_t k = 0; k < lives[i].n; k++)
          if (lives[i].p[k] != lives[i].fill) {
            bad++;
            break;
          }
  }
  CHECK_EQ(bad, 0);
  dp_arena_free(a);
}

TEST(free_null_is_safe) {
  dp_arena_free(NULL);
  CHECK(dp_arena_used(NULL) == 0);
}

TEST(buffer_appends_and_takes) {
  dp_buf b = DP_BUF_INIT;
  CHECK_STR(dp_buf_cstr(&b), "");
  CHECK_STR(b.data, ""); /* a string from here on, as buf.h promises */
  dp_buf_puts(&b, "a");
  dp_buf_putc(&b, 'b');
  dp_buf_put(&b, "cdef", 2);
  dp_buf_indent(&b, 3);
  dp_buf_printf(&b, "%d|%s", 7, "x");
  CHECK_STR(dp_buf_cstr(&b), "abcd   7|x");
  CHECK_EQ(b.len, 10);
  for (int i = 0; i < 1000; i++) dp_buf_puts(&b, "0123456789");
  CHECK_EQ(b.len, 10010);
  char *s = dp_buf_take(&b);
  CHECK(s && strlen(s) == 10010);
  CHECK(b.data == NULL && b.len == 0);
  free(s);
  char *empty = dp_buf_take(&b);
  CHECK_STR(empty, "");
  free(empty);
  dp_buf_free(&b);
}

TEST(strerror_and_version) {
  CHECK_STR(dipper_strerror(DIPPER_OK), "not an error");
  CHECK_STR(dipper_strerror(DIPPER_SYNTAX), "syntax error");
  CHECK_STR(dipper_strerror(DIPPER_INTERRUPTED), "interrupted");
  CHECK_STR(dipper_strerror(-1), "unknown error");
  CHECK_STR(dipper_strerror(DIPPER_CODE_END_), "unknown error");
  CHECK_STR(dipper_strerror(1000), "unknown error");
  CHECK_STR(dipper_version(), DIPPER_VERSION);
}

int main(void) { return RUN_TESTS(); }
