/*
** functions_doc_test.c — docs/sql.md lists every function of the catalog.
**
** The "Functions" section of docs/sql.md is generated from the catalog by
** running this program with --markdown; the test fails when a function is
** added to functions.def without being documented, so the docs cannot drift.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/functions.h"
#include "test.h"

static const char *kind_name(dp_func_kind k) {
  switch (k) {
  case DP_FN_SCALAR: return "scalar";
  case DP_FN_AGGREGATE: return "aggregate";
  case DP_FN_WINDOW: return "window";
  }
  return "?";
}

/* Operators are documented in "Operators and precedence", not in the table. */
static int is_operator(const dp_func *fn) { return fn->op != NULL; }

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  if (buf) buf[n] = '\0';
  fclose(f);
  return buf;
}

static void print_markdown(void) {
  static const dp_func_kind kinds[] = {DP_FN_SCALAR, DP_FN_AGGREGATE, DP_FN_WINDOW};
  static const char *const titles[] = {"Scalar functions", "Aggregate functions",
                                       "Window functions (with OVER only)"};
  for (size_t k = 0; k < 3; k++) {
    printf("### %s\n\n| function | signature |\n|---|---|\n", titles[k]);
    for (int i = 0; dp_func_at(i); i++) {
      const dp_func *fn = dp_func_at(i);
      if (fn->kind != kinds[k] || is_operator(fn)) continue;
      printf("| `%s` | `%s`%s |\n", fn->name, fn->signature,
             fn->deterministic ? "" : " (non-deterministic)");
    }
    printf("\n");
  }
}

TEST(every_function_is_documented) {
  char *doc = read_file(DIPPER_SOURCE_DIR "/docs/sql.md");
  CHECK(doc != NULL);
  if (!doc) return;
  const char *section = strstr(doc, "\n## Functions");
  CHECK(section != NULL);
  if (!section) {
    free(doc);
    return;
  }
  int documented = 0;
  for (int i = 0; dp_func_at(i); i++) {
    const dp_func *fn = dp_func_at(i);
    if (is_operator(fn)) continue;
    char needle[128];
    snprintf(needle, sizeof needle, "| `%s` |", fn->name);
    if (!strstr(section, needle)) {
      fprintf(stderr, "docs/sql.md does not document %s %s (regenerate: %s)\n",
              kind_name(fn->kind), fn->name, "test_plan_functions_doc_test --markdown");
      CHECK(0 && "function missing from docs/sql.md");
    } else {
      documented++;
    }
  }
  CHECK(documented > 100);
  free(doc);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--markdown") == 0) {
    print_markdown();
    return 0;
  }
  return RUN_TESTS();
}
