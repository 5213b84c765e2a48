/*
** sqltest.c — the runner of the SQL test corpus (tests/sql/cases/NAME.test).
**
** Each .test file holds cases: SQL text and what compiling it must give — a
** plan (lines that must occur in the EXPLAIN output, in order, or the whole
** text verbatim), an error (line:col, code, message words), or plain success.
** The format is described in tests/sql/README.md.
**
** Owns: parsing the .test format and comparing; nothing of the compiler.  It
** uses only the public API (include/dipper.h), so a case fails for the same
** reasons a user's program would.  Every case runs in a fresh handle, after
** the file's `setup` scripts (tests/sql/setup/NAME.sql, beside cases/..) have
** been compiled into that handle.
**
** Usage: sqltest [-v] [-k WORD] FILE.test...
**   -v       print the EXPLAIN output or the diagnostics of every case
**   -k WORD  run only the cases whose name contains WORD
** Ends with the line "N passed, N failed"; exits 1 on any failure, on a file
** without cases and on a malformed case.
*/
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dipper.h"

/* ---- growable text ---- */

typedef struct text {
  char *ptr;
  size_t len, cap;
} text;

static void oom(void) {
  fputs("sqltest: out of memory\n", stderr);
  exit(2);
}

static void text_put(text *t, const char *p, size_t n) {
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + n + 1) cap *= 2;
    char *grown = realloc(t->ptr, cap);
    if (!grown) oom();
    t->ptr = grown;
    t->cap = cap;
  }
  if (n) memcpy(t->ptr + t->len, p, n);
  t->len += n;
  t->ptr[t->len] = '\0';
}

static void text_puts(text *t, const char *s) { text_put(t, s, strlen(s)); }

static const char *text_str(const text *t) { return t->ptr ? t->ptr : ""; }

static char *dup_str(const char *p, size_t n) {
  char *s = malloc(n + 1);
  if (!s) oom();
  memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

/* ---- the .test format ---- */

typedef enum expect_kind {
  EXPECT_NONE,
  EXPECT_PLAN,       /* lines that must occur in EXPLAIN, in order ("!x": must not occur) */
  EXPECT_PLAN_EXACT, /* the whole EXPLAIN text */
  EXPECT_ERROR,      /* first diagnostic: line:col, code, message substrings */
  EXPECT_OK,         /* compiles; nothing more */
} expect_kind;

typedef struct test_case {
  char *name;
  int line;          /* file line of the `===` header */
  int sql_line;      /* file line of SQL line 1 */
  text sql;
  expect_kind kind;
  int expect_line;   /* file line of the `---` header */
  int nexpect;       /* expectation lines (plan lines, extra message words) */
  char **expect;
  int *expect_lines; /* file line of each */
  text exact;        /* EXPECT_PLAN_EXACT */
  int err_line, err_col, err_code;
} test_case;

typedef struct test_file {
  const char *path;
  char *setup_names;  /* the `setup` line's names, space-separated, or NULL */
  int setup_line;
  int ncases;
  test_case *cases;
} test_file;

static void case_free(test_case *tc) {
  free(tc->name);
  free(tc->sql.ptr);
  for (int i = 0; i < tc->nexpect; i++) free(tc->expect[i]);
  free(tc->expect);
  free(tc->expect_lines);
  free(tc->exact.ptr);
}

static void file_free(test_file *f) {
  for (int i = 0; i < f->ncases; i++) case_free(&f->cases[i]);
  free(f->cases);
  free(f->setup_names);
}

static char *read_whole(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  text t = {0};
  char chunk[8192];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) text_put(&t, chunk, n);
  int bad = ferror(fp);
  fclose(fp);
  if (bad) {
    free(t.ptr);
    return NULL;
  }
  if (!t.ptr) text_put(&t, "", 0);
  *len = t.len;
  return t.ptr;
}

static const char *skip_space(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

/* Copy of s without surrounding blanks. */
static char *trimmed(const char *s) {
  s = skip_space(s);
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
  return dup_str(s, n);
}

static bool is_blank(const char *s) { return *skip_space(s) == '\0'; }

static bool starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int code_by_name(const char *name, size_t n) {
#define CODE_BY_NAME_(nm, num, str) \
  if (n == strlen(#nm) && strncmp(name, #nm, n) == 0) return num;
  DIPPER_CODES(CODE_BY_NAME_)
#undef CODE_BY_NAME_
  return -1;
}

static const char *code_name(int code) {
#define CODE_NAME_(nm, num, str) \
  if (code == (num)) return #nm;
  DIPPER_CODES(CODE_NAME_)
#undef CODE_NAME_
  return "?";
}

static int malformed(const test_file *f, int line, const char *what) {
  fprintf(stderr, "%s:%d: malformed test file: %s\n", f->path, line, what);
  return -1;
}

static void add_expect(test_case *tc, const char *s, int line) {
  char **grown = realloc(tc->expect, (size_t)(tc->nexpect + 1) * sizeof *grown);
  if (!grown) oom();
  tc->expect = grown;
  int *lines = realloc(tc->expect_lines, (size_t)(tc->nexpect + 1) * sizeof *lines);
  if (!lines) oom();
  tc->expect_lines = lines;
  tc->expect[tc->nexpect] = trimmed(s);
  tc->expect_lines[tc->nexpect] = line;
  tc->nexpect++;
}

/* `--- error L:C CODE [words]`: the words become the first message substring. */
static int parse_error_header(test_file *f, test_case *tc, const char *args, int line) {
  const char *p = skip_space(args);
  char *end;
  long l = strtol(p, &end, 10);
  if (end == p || *end != ':')
    return malformed(f, line, "write `--- error LINE:COL CODE [message words]`, e.g. `--- error 2:8 NAME col`");
  p = end + 1;
  long c = strtol(p, &end, 10);
  if (end == p || (*end != ' ' && *end != '\t') || l < 0 || c < 0 || l > 100000 || c > 100000)
    return malformed(f, line, "LINE:COL must be two numbers, then a space and the code name");
  p = skip_space(end);
  const char *q = p;
  while (*q && !isspace((unsigned char)*q)) q++;
  int code = code_by_name(p, (size_t)(q - p));
  if (code <= 0)
    return malformed(f, line, "unknown code name: write one of DIPPER_CODES without the DIPPER_ prefix "
                              "(SYNTAX, NAME, TYPE, STREAMING, UNSUPPORTED, OPTION, DUPLICATE, ...)");
  tc->err_line = (int)l;
  tc->err_col = (int)c;
  tc->err_code = code;
  if (!is_blank(q)) add_expect(tc, q, line);
  return 0;
}

static int parse_expect_header(test_file *f, test_case *tc, const char *s, int line) {
  const char *p = skip_space(s + 3);
  if (tc->kind != EXPECT_NONE)
    return malformed(f, line, "a case has one expectation: start a new case with `=== name`");
  tc->expect_line = line;
  if (starts_with(p, "plan exact") && is_blank(p + 10)) {
    tc->kind = EXPECT_PLAN_EXACT;
  } else if (starts_with(p, "plan") && is_blank(p + 4)) {
    tc->kind = EXPECT_PLAN;
  } else if (starts_with(p, "ok") && is_blank(p + 2)) {
    tc->kind = EXPECT_OK;
  } else if (starts_with(p, "error") && (p[5] == ' ' || p[5] == '\t')) {
    tc->kind = EXPECT_ERROR;
    return parse_error_header(f, tc, p + 5, line);
  } else {
    return malformed(f, line, "unknown expectation: write `--- plan`, `--- plan exact`, "
                              "`--- error LINE:COL CODE [words]` or `--- ok`");
  }
  return 0;
}

static int finish_case(test_file *f, test_case *tc) {
  bool any_sql = false;
  for (const char *p = text_str(&tc->sql); *p; p++)
    if (!isspace((unsigned char)*p)) any_sql = true;
  if (!any_sql) return malformed(f, tc->line, "the case has no SQL");
  switch (tc->kind) {
  case EXPECT_NONE:
    return malformed(f, tc->line, "the case has no expectation (`--- plan`, `--- error ..`, `--- ok`)");
  case EXPECT_PLAN:
    if (tc->nexpect == 0) return malformed(f, tc->expect_line, "`--- plan` needs at least one line to find");
    break;
  case EXPECT_PLAN_EXACT:
    /* Trailing blank lines separate cases; they are not part of the plan. */
    while (tc->exact.len > 0 && isspace((unsigned char)tc->exact.ptr[tc->exact.len - 1]))
      tc->exact.ptr[--tc->exact.len] = '\0';
    if (tc->exact.len == 0) return malformed(f, tc->expect_line, "`--- plan exact` needs the plan text");
    break;
  case EXPECT_OK:
    if (tc->nexpect > 0) return malformed(f, tc->expect_line, "`--- ok` takes no lines; use `--- plan`");
    break;
  case EXPECT_ERROR:
    break;
  }
  return 0;
}

/* Split the file into cases.  Returns 0, or -1 after reporting the first
** malformed line. */
static int parse_file(test_file *f, char *data) {
  test_case *tc = NULL;
  int lineno = 0;
  char *p = data;
  while (*p) {
    char *eol = strchr(p, '\n');
    char *next = eol ? eol + 1 : p + strlen(p);
    if (eol) *eol = '\0';
    if (eol && eol > p && eol[-1] == '\r') eol[-1] = '\0';
    const char *line = p;
    p = next;
    lineno++;

    if (starts_with(line, "===")) {
      if (tc && finish_case(f, tc) != 0) return -1;
      char *name = trimmed(line + 3);
      if (!*name) {
        free(name);
        return malformed(f, lineno, "a case needs a name: `=== what it checks`");
      }
      test_case *grown = realloc(f->cases, (size_t)(f->ncases + 1) * sizeof *grown);
      if (!grown) oom();
      f->cases = grown;
      tc = &f->cases[f->ncases++];
      memset(tc, 0, sizeof *tc);
      tc->name = name;
      tc->line = lineno;
      tc->sql_line = lineno + 1;
      continue;
    }
    if (!tc) {
      if (is_blank(line) || line[0] == '#') continue;
      if (starts_with(line, "setup ") || starts_with(line, "setup\t")) {
        if (f->setup_names) return malformed(f, lineno, "one `setup` line per file: list every script on it");
        f->setup_names = trimmed(line + 6);
        f->setup_line = lineno;
        if (!*f->setup_names) return malformed(f, lineno, "`setup` needs a script name");
        continue;
      }
      return malformed(f, lineno, "before the first `=== name` only comments and `setup NAME..` may appear");
    }
    if (starts_with(line, "---")) {
      if (parse_expect_header(f, tc, line, lineno) != 0) return -1;
      continue;
    }
    switch (tc->kind) {
    case EXPECT_NONE:
      /* A comment inside the SQL becomes an empty line, so that line numbers hold. */
      text_puts(&tc->sql, line[0] == '#' ? "" : line);
      text_puts(&tc->sql, "\n");
      break;
    case EXPECT_PLAN_EXACT:
      text_puts(&tc->exact, line);
      text_puts(&tc->exact, "\n");
      break;
    default:
      if (!is_blank(line) && line[0] != '#') add_expect(tc, line, lineno);
      break;
    }
  }
  if (tc && finish_case(f, tc) != 0) return -1;
  if (f->ncases == 0) return malformed(f, lineno, "the file has no cases (`=== name`)");
  return 0;
}

/* ---- running ---- */

typedef struct run_opts {
  bool verbose;
  const char *only; /* -k */
} run_opts;

/* The setup scripts live in ../setup/ relative to the directory of the .test
** file (tests/sql/cases/x.test → tests/sql/setup/NAME.sql). */
static char *setup_path(const char *test_path, const char *name, size_t name_len) {
  const char *slash = strrchr(test_path, '/');
  size_t dir_len = slash ? (size_t)(slash - test_path) : 0;
  text t = {0};
  if (dir_len) {
    text_put(&t, test_path, dir_len);
    text_puts(&t, "/");
  }
  text_puts(&t, "../setup/");
  text_put(&t, name, name_len);
  text_puts(&t, ".sql");
  return t.ptr;
}

static void print_diags(FILE *out, const dipper *db) {
  int n = dipper_diag_count(db);
  if (n == 0) fputs("    (no diagnostics)\n", out);
  for (int i = 0; i < n; i++) {
    const dipper_diag *g = dipper_diag_get(db, i);
    char *r = dipper_diag_render(db, i);
    if (g)
      fprintf(out, "    [%s %d:%d] ", code_name(g->code), g->line, g->col);
    if (r) {
      /* Indent every line of the rendering under the case report. */
      for (const char *s = r; *s;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        fprintf(out, "%s%.*s\n", s == r ? "" : "    ", (int)len, s);
        s += len + (e ? 1 : 0);
      }
    } else if (g) {
      fprintf(out, "%s\n", g->message ? g->message : "(null)");
    }
    dipper_free(r);
  }
}

static void print_indented(FILE *out, const char *s) {
  while (*s) {
    const char *e = strchr(s, '\n');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    fprintf(out, "    | %.*s\n", (int)len, s);
    s += len + (e ? 1 : 0);
  }
}

/* Compile the setup scripts into db.  Returns 0 or prints why not. */
static int run_setup(const test_file *f, const test_case *tc, dipper *db) {
  const char *names = f->setup_names;
  while (names && *names) {
    names = skip_space(names);
    const char *e = names;
    while (*e && !isspace((unsigned char)*e)) e++;
    if (e == names) break;
    char *path = setup_path(f->path, names, (size_t)(e - names));
    size_t len = 0;
    char *sql = read_whole(path, &len);
    if (!sql) {
      fprintf(stderr, "%s:%d: case \"%s\": cannot read setup script %s: %s\n", f->path, tc->line,
              tc->name, path, strerror(errno));
      free(path);
      return -1;
    }
    dipper_program *prog = NULL;
    int rc = dipper_compile(db, sql, len, path, &prog);
    dipper_program_free(prog);
    free(sql);
    if (rc != DIPPER_OK) {
      fprintf(stderr, "%s:%d: case \"%s\": setup script %s failed (%s):\n", f->path, tc->line,
              tc->name, path, dipper_strerror(rc));
      print_diags(stderr, db);
      free(path);
      return -1;
    }
    free(path);
    names = e;
  }
  return 0;
}

/* Find every expected line in order; a line "!x" must not occur at all.
** Returns the index of the first line that fails, or -1. */
static int match_plan(const test_case *tc, const char *plan) {
  const char *cursor = plan;
  for (int i = 0; i < tc->nexpect; i++) {
    const char *want = tc->expect[i];
    if (want[0] == '!') {
      const char *absent = skip_space(want + 1);
      if (*absent && strstr(plan, absent)) return i;
      continue;
    }
    const char *hit = strstr(cursor, want);
    if (!hit) return i;
    cursor = hit + strlen(want);
  }
  return -1;
}

static void report_head(const test_file *f, const test_case *tc) {
  fprintf(stderr, "%s:%d: FAIL \"%s\"\n", f->path, tc->line, tc->name);
}

/* Name the first line where a `plan exact` text and the output part, so that
** a long plan need not be compared by eye. */
static void report_first_difference(const test_file *f, const test_case *tc, const char *plan) {
  const char *want = text_str(&tc->exact), *got = plan;
  int line = 1;
  for (;;) {
    size_t wn = strcspn(want, "\n"), gn = strcspn(got, "\n");
    if (wn != gn || memcmp(want, got, wn) != 0 || !want[wn] || !got[gn]) {
      if (wn == gn && memcmp(want, got, wn) == 0) line++; /* one text ended first */
      break;
    }
    want += wn + 1;
    got += gn + 1;
    line++;
  }
  /* The plan text starts on the line after the `--- plan exact` header. */
  fprintf(stderr, "  %s:%d: first difference, line %d of the plan\n", f->path,
          tc->expect_line + line, line);
}

/* Run one case in a fresh handle; true when it passes. */
static bool run_case(const test_file *f, const test_case *tc, const run_opts *o) {
  dipper *db = NULL;
  int rc = dipper_open(&db, NULL);
  if (rc != DIPPER_OK) {
    report_head(f, tc);
    fprintf(stderr, "  dipper_open failed: %s\n", dipper_strerror(rc));
    return false;
  }
  if (run_setup(f, tc, db) != 0) {
    dipper_close(db);
    return false;
  }
  dipper_program *prog = NULL;
  rc = dipper_compile(db, text_str(&tc->sql), tc->sql.len, f->path, &prog);
  char *plan = NULL;
  int explain_rc = DIPPER_OK;
  if (rc == DIPPER_OK) {
    explain_rc = dipper_explain(prog, DIPPER_EXPLAIN_DEFAULT, &plan);
  }
  if (o->verbose) {
    printf("%s:%d: \"%s\"\n", f->path, tc->line, tc->name);
    if (rc == DIPPER_OK && plan) {
      print_indented(stdout, plan);
    } else if (rc != DIPPER_OK) {
      fflush(stdout);
      print_diags(stdout, db);
    }
  }

  bool ok = true;
  switch (tc->kind) {
  case EXPECT_OK:
  case EXPECT_PLAN:
  case EXPECT_PLAN_EXACT:
    if (rc != DIPPER_OK) {
      report_head(f, tc);
      fprintf(stderr, "  expected success, got %s:\n", dipper_strerror(rc));
      print_diags(stderr, db);
      ok = false;
      break;
    }
    if (tc->kind == EXPECT_OK) break;
    if (explain_rc != DIPPER_OK || !plan) {
      report_head(f, tc);
      fprintf(stderr, "  dipper_explain failed: %s\n", dipper_strerror(explain_rc));
      ok = false;
      break;
    }
    if (tc->kind == EXPECT_PLAN) {
      int bad = match_plan(tc, plan);
      if (bad >= 0) {
        report_head(f, tc);
        const char *want = tc->expect[bad];
        if (want[0] == '!')
          fprintf(stderr, "  %s:%d: must not occur: %s\n", f->path, tc->expect_lines[bad], skip_space(want + 1));
        else
          fprintf(stderr, "  %s:%d: not found (after the lines before it): %s\n", f->path,
                  tc->expect_lines[bad], want);
        fputs("  actual EXPLAIN:\n", stderr);
        print_indented(stderr, plan);
        ok = false;
      }
    } else {
      size_t n = strlen(plan);
      while (n > 0 && isspace((unsigned char)plan[n - 1])) n--;
      if (n != tc->exact.len || memcmp(plan, tc->exact.ptr, n) != 0) {
        report_head(f, tc);
        report_first_difference(f, tc, plan);
        fputs("  expected EXPLAIN (exact):\n", stderr);
        print_indented(stderr, text_str(&tc->exact));
        fputs("  actual EXPLAIN:\n", stderr);
        print_indented(stderr, plan);
        ok = false;
      }
    }
    break;
  case EXPECT_ERROR: {
    const dipper_diag *g = rc != DIPPER_OK ? dipper_diag_get(db, 0) : NULL;
    int bad_word = -1;
    if (g) {
      for (int i = 0; i < tc->nexpect && bad_word < 0; i++)
        if (!g->message || !strstr(g->message, tc->expect[i])) bad_word = i;
    }
    if (!g || g->code != tc->err_code || g->line != tc->err_line || g->col != tc->err_col || bad_word >= 0) {
      report_head(f, tc);
      fprintf(stderr, "  expected error %d:%d %s", tc->err_line, tc->err_col, code_name(tc->err_code));
      for (int i = 0; i < tc->nexpect; i++) fprintf(stderr, "%s\"%s\"", i ? ", " : " with ", tc->expect[i]);
      fputc('\n', stderr);
      if (rc == DIPPER_OK) {
        fputs("  but it compiled; EXPLAIN:\n", stderr);
        if (plan) print_indented(stderr, plan);
      } else {
        fprintf(stderr, "  actual (%s), line:col relative to the case's SQL line 1 = file line %d:\n",
                dipper_strerror(rc), tc->sql_line);
        print_diags(stderr, db);
      }
      ok = false;
    }
    break;
  }
  case EXPECT_NONE:
    ok = false;
    break;
  }
  dipper_free(plan);
  dipper_program_free(prog);
  dipper_close(db);
  return ok;
}

int main(int argc, char **argv) {
  run_opts o = {false, NULL};
  int passed = 0, failed = 0, nfiles = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-v") == 0) {
      o.verbose = true;
      continue;
    }
    if (strcmp(argv[i], "-k") == 0 && i + 1 < argc) {
      o.only = argv[++i];
      continue;
    }
    nfiles++;
    test_file f = {0};
    f.path = argv[i];
    size_t len = 0;
    char *data = read_whole(f.path, &len);
    if (!data) {
      fprintf(stderr, "%s: cannot read: %s\n", f.path, strerror(errno));
      failed++;
      continue;
    }
    if (strlen(data) != len) {
      fprintf(stderr, "%s: contains a NUL byte\n", f.path);
      failed++;
    } else if (parse_file(&f, data) != 0) {
      failed++;
    } else {
      for (int c = 0; c < f.ncases; c++) {
        if (o.only && !strstr(f.cases[c].name, o.only)) continue;
        if (run_case(&f, &f.cases[c], &o))
          passed++;
        else
          failed++;
      }
    }
    file_free(&f);
    free(data);
  }
  if (nfiles == 0) {
    fputs("usage: sqltest [-v] [-k WORD] FILE.test...\n", stderr);
    return 2;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
