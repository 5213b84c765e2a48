/*
** diag_test.c — the diagnostics list and its rendering: exact strings with
** the caret under the right column, tabs, UTF-8, clipping, the limit.
*/
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "test.h"

static dp_span at(uint32_t off, uint32_t len, uint32_t line, uint32_t col) {
  dp_span s = {off, len, line, col};
  return s;
}

/* Render the only diagnostic of a one-error list over `text`. */
static char *render_one(const char *file, const char *text, dp_span span, const char *msg) {
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, file, text, text ? strlen(text) : 0);
  dp_error(&d, DIPPER_SYNTAX, span, "%s", msg);
  char *out = dp_diag_render(&d, &d.items[0]);
  dp_arena_free(a);
  return out;
}

TEST(error_records_and_returns_code) {
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, "q.sql", "SELECT", 6);
  CHECK_EQ(dp_error(&d, DIPPER_NAME, at(0, 6, 1, 1), "unknown column '%s'", "x"), DIPPER_NAME);
  CHECK_EQ(d.count, 1);
  CHECK_EQ(d.items[0].code, DIPPER_NAME);
  CHECK_STR(d.items[0].message, "unknown column 'x'");
  CHECK_EQ(d.items[0].span.col, 1);
  dp_arena_free(a);
}

TEST(render_points_at_the_column) {
  const char *text = "SELECT a\nFROM t\nWHERE b = 1 ORDER BY a";
  /* "ORDER BY a" starts at column 13 of line 3 */
  char *out = render_one("file.sql", text, at(28, 10, 3, 13), "ORDER BY on an unbounded input");
  CHECK_STR(out, "file.sql:3:13: error: ORDER BY on an unbounded input\n"
                 "   3 | WHERE b = 1 ORDER BY a\n"
                 "     |             ^~~~~~~~~~\n");
  free(out);
}

TEST(render_first_column_and_single_byte) {
  char *out = render_one("x.sql", "SELEC 1", at(0, 5, 1, 1), "unknown statement");
  CHECK_STR(out, "x.sql:1:1: error: unknown statement\n"
                 "   1 | SELEC 1\n"
                 "     | ^~~~~\n");
  free(out);
  /* length 0 still shows one caret */
  out = render_one("x.sql", "SELECT 1 +", at(10, 0, 1, 11), "expression expected");
  CHECK_STR(out, "x.sql:1:11: error: expression expected\n"
                 "   1 | SELECT 1 +\n"
                 "     |           ^\n");
  free(out);
}

TEST(render_clips_to_the_line_end) {
  const char *text = "SELECT 'abc\nmore' FROM t";
  char *out = render_one("s.sql", text, at(7, 17, 1, 8), "string spans lines");
  CHECK_STR(out, "s.sql:1:8: error: string spans lines\n"
                 "   1 | SELECT 'abc\n"
                 "     |        ^~~~\n");
  free(out);
}

TEST(render_keeps_tabs_in_the_padding) {
  const char *text = "SELECT\tx,\ty FROM t";
  char *out = render_one("t.sql", text, at(10, 1, 1, 11), "unknown column 'y'");
  CHECK_STR(out, "t.sql:1:11: error: unknown column 'y'\n"
                 "   1 | SELECT\tx,\ty FROM t\n"
                 "     |       \t  \t^\n");
  free(out);
}

TEST(render_counts_utf8_characters_for_alignment) {
  /* 'é' is two bytes but one column on screen */
  const char *text = "SELECT 'é' AS x, zz";
  char *out = render_one("u.sql", text, at(18, 2, 1, 19), "unknown column 'zz'");
  CHECK_STR(out, "u.sql:1:19: error: unknown column 'zz'\n"
                 "   1 | SELECT 'é' AS x, zz\n"
                 "     |                  ^~\n");
  free(out);
}

TEST(render_strips_carriage_returns_and_wide_line_numbers) {
  const char *text = "a\r\nSELECT x\r\n";
  char *out = render_one("w.sql", text, at(10, 1, 2, 8), "unknown column 'x'");
  CHECK_STR(out, "w.sql:2:8: error: unknown column 'x'\n"
                 "   2 | SELECT x\n"
                 "     |        ^\n");
  free(out);
  /* line 12345: the gutter widens with the number */
  char *many = malloc(12345 + 4);
  memset(many, '\n', 12344);
  memcpy(many + 12344, "bad", 4);
  out = render_one("big.sql", many, at(12344, 3, 12345, 1), "nonsense");
  CHECK_STR(out, "big.sql:12345:1: error: nonsense\n"
                 "12345 | bad\n"
                 "      | ^~~\n");
  free(out);
  free(many);
}

TEST(render_without_place_or_text) {
  char *out = render_one("api", "SELECT 1", at(0, 0, 0, 0), "plan has no sink");
  CHECK_STR(out, "api: error: plan has no sink\n");
  free(out);
  out = render_one(NULL, NULL, at(3, 2, 1, 4), "no text kept");
  CHECK_STR(out, "<string>:1:4: error: no text kept\n");
  free(out);
  /* a line past the end of the text shows only the header */
  out = render_one("f", "one line", at(0, 1, 9, 1), "late");
  CHECK_STR(out, "f:9:1: error: late\n");
  free(out);
}

TEST(max_limits_the_list) {
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, "f", "", 0);
  d.max = 3;
  for (int i = 0; i < 10; i++)
    CHECK_EQ(dp_error(&d, DIPPER_TYPE, at(0, 0, 0, 0), "error %d", i), DIPPER_TYPE);
  CHECK_EQ(d.count, 3);
  CHECK_STR(d.items[2].message, "error 2");
  /* the default limit is 100 */
  dp_diags_init(&d, a, "f", "", 0);
  for (int i = 0; i < 150; i++) dp_error(&d, DIPPER_TYPE, at(0, 0, 0, 0), "e%d", i);
  CHECK_EQ(d.count, 100);
  CHECK_STR(d.items[99].message, "e99");
  CHECK_STR(d.items[0].message, "e0");
  dp_arena_free(a);
}

TEST(span_join) {
  dp_span a = at(7, 1, 1, 8), b = at(11, 4, 1, 12);
  dp_span j = dp_span_join(a, b);
  CHECK_EQ(j.off, 7);
  CHECK_EQ(j.len, 8);
  CHECK_EQ(j.line, 1);
  CHECK_EQ(j.col, 8);
  j = dp_span_join(b, a); /* order does not matter */
  CHECK_EQ(j.off, 7);
  CHECK_EQ(j.len, 8);
  j = dp_span_join(at(0, 20, 1, 1), at(5, 2, 1, 6)); /* b inside a */
  CHECK_EQ(j.len, 20);
  j = dp_span_join(at(0, 0, 0, 0), b); /* no place: the other one */
  CHECK_EQ(j.off, 11);
  CHECK_EQ(j.col, 12);
}

/* Any span over any text renders without reading out of bounds (ASan
** watches) and always starts with the file:line:col header. */
TEST(render_survives_random_spans) {
  static const char pieces[][4] = {"a", "b", " ", "\t", "\n", "\r\n", "\xc3\xa9", "\xe2\x82\xac", "'"};
  uint64_t state = 12345;
  for (int round = 0; round < 3000; round++) {
    char text[200];
    size_t len = 0;
    state = state * 6364136223846793005u + 1442695040888963407u;
    int n = (int)(state >> 33) % 60;
    for (int i = 0; i < n; i++) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      const char *piece = pieces[(state >> 33) % (sizeof pieces / sizeof pieces[0])];
      memcpy(text + len, piece, strlen(piece));
      len += strlen(piece);
    }
    state = state * 6364136223846793005u + 1442695040888963407u;
    dp_span span = at((uint32_t)(state % 80), (uint32_t)((state >> 8) % 90), (uint32_t)((state >> 16) % 12),
                      (uint32_t)((state >> 24) % 70));
    dp_arena *a = dp_arena_new(0);
    dp_diags d;
    dp_diags_init(&d, a, "r.sql", text, len); /* not NUL-terminated on purpose */
    dp_error(&d, DIPPER_SYNTAX, span, "m");
    char *out = dp_diag_render(&d, &d.items[0]);
    char want[64];
    if (span.line)
      snprintf(want, sizeof want, "r.sql:%u:%u: error: m\n", span.line, span.col);
    else
      snprintf(want, sizeof want, "r.sql: error: m\n");
    CHECK(out && strncmp(out, want, strlen(want)) == 0);
    free(out);
    dp_arena_free(a);
  }
}

int main(void) { return RUN_TESTS(); }
