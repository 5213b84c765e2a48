/*
** shell.c — `dipper shell`: statements typed one after another into one
** handle, as the sqlite3, duckdb and Flink SQL clients take them.
**
** Owns: reading (libedit on a terminal: line editing, history in
** ~/.dipper_history; plain lines from a pipe, with no prompt), cutting the
** input into statements (a statement ends at a ';' outside quotes and
** comments; BEGIN STATEMENT SET ... END; is one), the dot-commands, and
** running each statement the way its kind asks: SHOW, DESCRIBE, SET alone,
** EXPLAIN and a SELECT on bounded inputs print their rows in the current
** .mode (print.c); an INSERT, or a SELECT the library will not run to an end
** (DIPPER_STREAMING from dipper_execute: an unbounded input, or update
** output), runs through dipper_run with the progress lines of `run`
** (progress.c) and its rows on the console, until it ends or Ctrl-C.
**
** Each statement is compiled alone with dipper_compile into the one handle,
** so the catalog carries over, and a diagnostic's line and column count
** from the statement's own first line.  Signals: SIGINT while a query runs
** asks it to stop (dipper_interrupt: the summary says "stopped" and the
** prompt comes back); at the prompt it drops the line being typed; Ctrl-D
** (end of input) and .quit leave.  Status: 0, or 1 when the input was not a
** terminal and a statement failed (a script fed through a pipe).
*/
#include <errno.h>
#include <histedit.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"

static volatile sig_atomic_t got_sigint;
/* The handle while a query runs, for the handler (dipper_interrupt is
** async-signal-safe). */
static dipper *volatile running_db;

static void on_sigint(int sig) {
  (void)sig;
  got_sigint = 1;
  if (running_db) dipper_interrupt(running_db);
}

typedef struct shell {
  dipper *db;
  cli_format mode;
  bool interactive; /* stdin is a terminal: prompts, line editing, history */
  bool failed;      /* a statement failed */
  bool quit;
  EditLine *el;
  History *hist;
  char *history_path;
  char *sql; /* the statement being typed, lines joined */
  size_t len, cap;
} shell;

static bool continuing; /* the prompt: a statement is under way */

static char *prompt(EditLine *el) {
  (void)el;
  return continuing ? "   ...> " : "dipper> ";
}

/* ---- cutting statements ---- */

/* Skip a comment or quoted text starting at s[i]; the index after it, or i
** when s[i] starts neither.  An unclosed one runs to n. */
static size_t skip_quoted(const char *s, size_t n, size_t i) {
  if (s[i] == '-' && i + 1 < n && s[i + 1] == '-') {
    while (i < n && s[i] != '\n') i++;
    return i;
  }
  if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
    for (i += 2; i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'); i++) {}
    return i + 1 < n ? i + 2 : n;
  }
  if (s[i] == '\'' || s[i] == '"' || s[i] == '`') {
    char q = s[i]; /* a doubled quote inside reads as two quoted runs: the same end */
    for (i++; i < n && s[i] != q; i++) {}
    return i < n ? i + 1 : n;
  }
  return i;
}

static bool word_char(char c) {
  return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

/* The keyword w (any case) as a whole word at s[i]? */
static bool word_at(const char *s, size_t n, size_t i, const char *w) {
  size_t k = strlen(w);
  if (i + k > n || strncasecmp(s + i, w, k) != 0) return false;
  return (i == 0 || !word_char(s[i - 1])) && (i + k == n || !word_char(s[i + k]));
}

/* The end (just after its ';') of the first complete statement of s[0..n),
** 0 when there is none yet.  A statement set (BEGIN STATEMENT SET or
** EXECUTE STATEMENT SET BEGIN) ends at the ';' after END. */
static size_t statement_end(const char *s, size_t n) {
  size_t i = 0;
  while (i < n) { /* the first word, past blanks and comments */
    size_t j = skip_quoted(s, n, i);
    if (j != i) i = j;
    else if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') i++;
    else break;
  }
  bool set = word_at(s, n, i, "BEGIN") || word_at(s, n, i, "EXECUTE");
  bool after_end = false;
  for (; i < n; i++) {
    size_t j = skip_quoted(s, n, i);
    if (j != i) {
      i = j - 1;
      continue;
    }
    if (s[i] == ';' && (!set || after_end)) return i + 1;
    if (word_at(s, n, i, "END")) after_end = true;
  }
  return 0;
}

/* Only blanks and comments in s[0..n)? */
static bool blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t j = skip_quoted(s, n, i);
    if (j != i && (s[i] == '-' || s[i] == '/')) {
      i = j - 1;
      continue;
    }
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return false;
  }
  return true;
}

/* ---- running ---- */

/* Run statement i of prog with dipper_execute and print its rows in the
** current mode.  DIPPER_STREAMING (nothing said) when it must run as a
** stream instead. */
static int print_result(shell *sh, dipper_program *prog, int i) {
  struct ArrowArrayStream stream;
  int rc = dipper_execute(prog, i, &stream);
  if (rc != DIPPER_OK) return rc;
  struct ArrowSchema schema;
  int err = stream.get_schema(&stream, &schema);
  bool has_rows = !err && schema.n_children > 0;
  if (!err) schema.release(&schema);
  if (has_rows) err = cli_print_stream(&stream, sh->mode, stdout);
  stream.release(&stream);
  fflush(stdout);
  return err ? DIPPER_IO : DIPPER_OK;
}

/* Run the program's queries through dipper_run, with progress lines, until
** they end or Ctrl-C. */
static int run_stream(shell *sh, dipper_program *prog) {
  cli_progress *cp = cli_progress_new(isatty(STDERR_FILENO) == 1, false);
  if (!cp) return DIPPER_NOMEM;
  got_sigint = 0;
  running_db = sh->db;
  int rc = dipper_run(prog, cli_progress_update, cp);
  running_db = NULL;
  fflush(stdout);
  cli_progress_finish(cp);
  cli_progress_free(cp);
  return rc == DIPPER_INTERRUPTED ? DIPPER_OK : rc;
}

static void run_statement(shell *sh, const char *sql, size_t len) {
  dipper_program *prog = NULL;
  if (dipper_compile(sh->db, sql, len, "<shell>", &prog) != DIPPER_OK) {
    cli_print_diags(sh->db);
    sh->failed = true;
    return;
  }
  int n = dipper_program_count(prog), rc = DIPPER_OK;
  for (int i = 0; i < n && rc == DIPPER_OK; i++) {
    int kind = 0;
    dipper_program_stmt_kind(prog, i, &kind);
    if (kind == DIPPER_STMT_RESULT) {
      rc = print_result(sh, prog, i);
    } else if (kind == DIPPER_STMT_QUERY) {
      rc = print_result(sh, prog, i);
      if (rc == DIPPER_STREAMING) rc = run_stream(sh, prog);
    } else if (kind == DIPPER_STMT_INSERT) {
      rc = run_stream(sh, prog);
    }
  }
  if (rc != DIPPER_OK) {
    if (!(rc == DIPPER_IO && dipper_diag_count(sh->db) == 0)) cli_print_run_error(sh->db);
    sh->failed = true;
  }
  dipper_program_free(prog);
}

/* ---- dot-commands ---- */

/* The rows of a SHOW or DESCRIBE statement as text cells (ncols per row),
** through *cells (dipper_free) and *nrows; false after saying why. */
static bool query_cells(shell *sh, const char *sql, char ***cells, int64_t *nrows, int *ncols) {
  dipper_program *prog = NULL;
  *cells = NULL;
  *nrows = 0;
  if (dipper_compile(sh->db, sql, (size_t)-1, "<shell>", &prog) != DIPPER_OK) {
    cli_print_diags(sh->db);
    return false;
  }
  struct ArrowArrayStream st;
  bool ok = dipper_execute(prog, 0, &st) == DIPPER_OK;
  if (!ok) cli_print_run_error(sh->db);
  struct ArrowSchema schema;
  if (ok && st.get_schema(&st, &schema) == 0) {
    struct ArrowArray array;
    /* The answers of SHOW and DESCRIBE come as one batch. */
    if (st.get_next(&st, &array) == 0 && array.release) {
      ok = dipper_format_values(&schema, &array, 0, cells) == DIPPER_OK;
      *nrows = array.length;
      *ncols = (int)schema.n_children;
      array.release(&array);
    }
    schema.release(&schema);
  }
  if (ok || st.release) st.release(&st);
  dipper_program_free(prog);
  return ok;
}

static void dot_tables(shell *sh) {
  char **cells;
  int64_t n;
  int ncols;
  if (!query_cells(sh, "SHOW TABLES", &cells, &n, &ncols)) return;
  for (int64_t r = 0; r < n; r++) printf("%s\n", cells[r * ncols]);
  dipper_free(cells);
}

/* DESCRIBE of one table, or of each under its name. */
/* The CREATE statement of a table or view (kind "TABLE" or "VIEW"), as
** sqlite3's .schema prints them. */
static void print_create(shell *sh, const char *kind, const char *name) {
  char sql[600];
  snprintf(sql, sizeof sql, "SHOW CREATE %s `%s`", kind, name);
  char **cells;
  int64_t n;
  int ncols;
  if (!query_cells(sh, sql, &cells, &n, &ncols)) return;
  if (n > 0 && ncols > 0) printf("%s;\n", cells[0]);
  dipper_free(cells);
}

/* .schema [NAME]: the CREATE statements of every table and view, or of NAME. */
static void dot_schema(shell *sh, const char *name) {
  static const char *const lists[] = {"SHOW TABLES", "SHOW VIEWS"}, *const kinds[] = {"TABLE", "VIEW"};
  bool found = false;
  for (int k = 0; k < 2; k++) {
    char **cells;
    int64_t n;
    int ncols;
    if (!query_cells(sh, lists[k], &cells, &n, &ncols)) return;
    for (int64_t r = 0; r < n; r++)
      if (!name || strcasecmp(cells[r * ncols], name) == 0) {
        print_create(sh, kinds[k], cells[r * ncols]);
        found = true;
      }
    dipper_free(cells);
  }
  if (name && !found) cli_error("no table or view named `%s`; .tables lists them", name);
}

static void dot_help(void) {
  fputs("Statements end with ';' and may span lines.  SHOW, DESCRIBE, EXPLAIN and a SELECT\n"
        "on bounded inputs print their rows; an INSERT or a SELECT over a stream runs with\n"
        "a progress line until it ends or Ctrl-C (CREATE TABLE .. AS SELECT too).  CREATE,\n"
        "DROP, ALTER TABLE, USE [CATALOG] and SET change the session.  Ctrl-D or .quit leaves.\n"
        ".help                  this text\n"
        ".tables                the tables and views\n"
        ".schema [NAME]         the CREATE statement of table or view NAME, or of all\n"
        ".mode table|csv|json   how rows print (table at the start)\n"
        ".quit                  leave the shell (.exit too)\n",
        stdout);
}

static void dot_command(shell *sh, char *line) {
  char *save = NULL;
  char *cmd = strtok_r(line, " \t\r\n", &save);
  char *arg = strtok_r(NULL, " \t\r\n", &save);
  if (strcmp(cmd, ".help") == 0) {
    dot_help();
  } else if (strcmp(cmd, ".quit") == 0 || strcmp(cmd, ".exit") == 0) {
    sh->quit = true;
  } else if (strcmp(cmd, ".tables") == 0) {
    dot_tables(sh);
  } else if (strcmp(cmd, ".schema") == 0) {
    dot_schema(sh, arg);
  } else if (strcmp(cmd, ".mode") == 0) {
    if (!arg)
      printf("%s\n", sh->mode == CLI_FORMAT_CSV ? "csv" : sh->mode == CLI_FORMAT_JSON ? "json" : "table");
    else if (strcmp(arg, "table") == 0)
      sh->mode = CLI_FORMAT_TABLE;
    else if (strcmp(arg, "csv") == 0)
      sh->mode = CLI_FORMAT_CSV;
    else if (strcmp(arg, "json") == 0)
      sh->mode = CLI_FORMAT_JSON;
    else {
      cli_error("unknown mode '%s'; write table, csv or json", arg);
      sh->failed = true;
    }
  } else {
    cli_error("unknown command '%s'; .help lists them", cmd);
    sh->failed = true;
  }
  fflush(stdout);
}

/* ---- reading ---- */

static bool append(shell *sh, const char *s, size_t n) {
  if (sh->len + n + 1 > sh->cap) {
    size_t cap = sh->cap ? sh->cap : 256;
    while (cap < sh->len + n + 1) cap *= 2;
    char *grown = realloc(sh->sql, cap);
    if (!grown) return false;
    sh->sql = grown;
    sh->cap = cap;
  }
  memcpy(sh->sql + sh->len, s, n);
  sh->len += n;
  sh->sql[sh->len] = '\0';
  return true;
}

/* One line (with its '\n') into *line (borrowed until the next call); NULL
** at the end of the input.  *interrupted: Ctrl-C came while reading. */
static const char *read_line(shell *sh, char **buf, size_t *cap, bool *interrupted) {
  *interrupted = false;
  got_sigint = 0;
  if (sh->interactive) {
    int count = 0;
    const char *line = el_gets(sh->el, &count);
    if (got_sigint) {
      *interrupted = true;
      return "";
    }
    return line && count > 0 ? line : NULL;
  }
  errno = 0;
  ssize_t got = getline(buf, cap, stdin);
  if (got < 0 && errno == EINTR && got_sigint) {
    clearerr(stdin);
    *interrupted = true;
    return "";
  }
  return got < 0 ? NULL : *buf;
}

static void remember(shell *sh, const char *text, size_t n) {
  if (!sh->hist) return;
  char *entry = malloc(n + 1);
  if (!entry) return;
  memcpy(entry, text, n);
  entry[n] = '\0';
  char *start = entry;
  while (*start == ' ' || *start == '\n' || *start == '\t') start++;
  for (char *p = start; *p; p++) /* one line in history: libedit stores lines */
    if (*p == '\n') *p = ' ';
  HistEvent ev;
  if (*start) history(sh->hist, &ev, H_ENTER, start);
  free(entry);
}

/* Run every complete statement of the text typed so far. */
static void run_complete(shell *sh) {
  size_t end;
  while (!sh->quit && (end = statement_end(sh->sql, sh->len)) > 0) {
    remember(sh, sh->sql, end);
    run_statement(sh, sh->sql, end);
    memmove(sh->sql, sh->sql + end, sh->len - end + 1);
    sh->len -= end;
  }
  if (blank(sh->sql, sh->len)) sh->len = 0;
  if (sh->sql) sh->sql[sh->len] = '\0';
}

static void open_editor(shell *sh, const char *argv0) {
  sh->el = el_init(argv0, stdin, stdout, stderr);
  sh->hist = history_init();
  if (!sh->el || !sh->hist) return;
  HistEvent ev;
  history(sh->hist, &ev, H_SETSIZE, 1000);
  history(sh->hist, &ev, H_SETUNIQUE, 1);
  const char *home = getenv("HOME");
  if (home && *home) {
    size_t n = strlen(home) + sizeof "/.dipper_history";
    sh->history_path = malloc(n);
    if (sh->history_path) {
      snprintf(sh->history_path, n, "%s/.dipper_history", home);
      history(sh->hist, &ev, H_LOAD, sh->history_path);
    }
  }
  el_set(sh->el, EL_EDITOR, "emacs");
  el_set(sh->el, EL_PROMPT, prompt);
  el_set(sh->el, EL_HIST, history, sh->hist);
  /* No EL_SIGNAL: the handler below is ours, and read() returns EINTR. */
  el_source(sh->el, NULL);
}

int cli_shell(dipper *db, cli_format mode, const char *argv0) {
  shell sh = {.db = db, .mode = mode == CLI_FORMAT_TEXT ? CLI_FORMAT_TABLE : mode};
  sh.interactive = isatty(STDIN_FILENO) == 1;
  if (sh.interactive) open_editor(&sh, argv0);
  if (sh.interactive && !sh.el) {
    cli_error("cannot start line editing");
    return CLI_EXIT_USAGE;
  }
  struct sigaction sa, old_int;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  /* No SA_RESTART: a read at the prompt, a sleep between batches end at once. */
  sigaction(SIGINT, &sa, &old_int);
  if (sh.interactive)
    printf("dipper %s: statements end with ';', .help for the commands, Ctrl-D leaves\n",
           dipper_version());
  char *buf = NULL;
  size_t cap = 0;
  while (!sh.quit) {
    continuing = sh.len > 0;
    bool interrupted;
    fflush(stdout);
    const char *line = read_line(&sh, &buf, &cap, &interrupted);
    if (interrupted) { /* Ctrl-C at the prompt: the statement being typed is dropped */
      sh.len = 0;
      if (sh.interactive) {
        fputc('\n', stdout);
        el_reset(sh.el);
      }
      continue;
    }
    if (!line) break;
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (sh.len == 0 && *p == '.') {
      char *copy = strdup(p);
      if (copy) {
        remember(&sh, p, strlen(p));
        dot_command(&sh, copy);
        free(copy);
      }
      continue;
    }
    if (!append(&sh, line, strlen(line))) {
      cli_error("out of memory");
      sh.failed = true;
      break;
    }
    run_complete(&sh);
  }
  if (!sh.quit && sh.len > 0 && !blank(sh.sql, sh.len)) { /* the last one without its ';' */
    remember(&sh, sh.sql, sh.len);
    run_statement(&sh, sh.sql, sh.len);
  }
  if (sh.interactive && !sh.quit) fputc('\n', stdout);
  sigaction(SIGINT, &old_int, NULL);
  if (sh.hist) {
    HistEvent ev;
    if (sh.history_path) history(sh.hist, &ev, H_SAVE, sh.history_path);
    history_end(sh.hist);
  }
  if (sh.el) el_end(sh.el);
  free(sh.history_path);
  free(sh.sql);
  free(buf);
  fflush(stdout);
  return sh.failed && !sh.interactive ? CLI_EXIT_SQL : CLI_EXIT_OK;
}
