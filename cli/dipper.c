/*
** dipper.c — main() of the `dipper` command: check, explain and run SQL files.
**
** Every input is compiled into one handle, in order, so a file that creates
** tables and an -e query that reads them work together.  Statuses: 0 clean,
** 1 the SQL has errors (each one printed like a compiler's) or a query failed
** while running, 2 a usage error or an unreadable input, and for `run` 130 or
** 143 when SIGINT or SIGTERM stopped it (after the summary, like a shell's
** 128 + signal).
*/
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The handle being run, for the signal handler: dipper_interrupt is
** async-signal-safe (it sets a flag the run loop reads between batches). */
static dipper *volatile running_db;
static volatile sig_atomic_t stop_signal;
/* The failure of the run was already told on stderr, in the command's words. */
static bool error_said;

static void on_stop_signal(int sig) {
  stop_signal = sig;
  if (running_db) dipper_interrupt(running_db);
}

/* dipper_execute refused a streaming statement (DIPPER_STREAMING): its
** message speaks of the C API.  Say what to do on the command line instead,
** at the same place in the SQL (the source line and caret of the render). */
static void print_format_refusal(const cli_options *opts, const dipper *db) {
  const dipper_diag *g = dipper_diag_get(db, 0);
  if (!g || g->line <= 0) {
    cli_print_run_error(db);
    return;
  }
  const char *why = strstr(g->message, "unbounded input") ? " and reads an unbounded input"
                    : strstr(g->message, "update or complete")
                        ? " with update or complete output, whose batches are changes"
                    : strstr(g->message, "on Spark") ? " on Spark, by its trigger"
                                                     : "";
  const char *fmt = opts->format == CLI_FORMAT_CSV    ? "csv"
                    : opts->format == CLI_FORMAT_JSON ? "json"
                                                      : "table";
  fprintf(stderr,
          "%s:%d:%d: error: --format %s prints each statement's complete result, but this one "
          "runs in streaming mode%s: run it without --format (the rows of each micro-batch "
          "print as it ends, until the input ends or Ctrl-C), or, when its inputs are bounded, "
          "put SET 'execution.runtime-mode' = 'batch' before it\n",
          g->file ? g->file : "<string>", g->line, g->col, fmt, why);
  char *rendered = dipper_diag_render(db, 0);
  const char *excerpt = rendered ? strchr(rendered, '\n') : NULL;
  if (excerpt) fputs(excerpt + 1, stderr);
  dipper_free(rendered);
}

/* Run statement i with dipper_execute and print its rows, if it has
** columns (an INSERT or DDL statement's result has none). */
static int execute_stmt(const cli_options *opts, dipper *db, dipper_program *prog, int i,
                        bool *printed) {
  struct ArrowArrayStream stream;
  int rc = dipper_execute(prog, i, &stream);
  if (rc == DIPPER_STREAMING && opts->format_given) {
    print_format_refusal(opts, db);
    error_said = true;
    return rc;
  }
  if (rc != DIPPER_OK) return rc;
  struct ArrowSchema schema;
  int err = stream.get_schema(&stream, &schema);
  bool has_rows = !err && schema.n_children > 0;
  if (!err) schema.release(&schema);
  if (has_rows) {
    if (*printed && opts->format == CLI_FORMAT_TABLE) fputc('\n', stdout);
    err = cli_print_stream(&stream, opts->format, stdout);
    *printed = true;
  }
  stream.release(&stream);
  return err ? DIPPER_IO : DIPPER_OK;
}

/* Run every statement of prog in turn with dipper_execute and print each
** one's rows. */
static int execute_program(const cli_options *opts, dipper *db, dipper_program *prog,
                           bool *printed) {
  int n = dipper_program_count(prog);
  for (int i = 0; i < n; i++) {
    int rc = execute_stmt(opts, db, prog, i, printed);
    if (rc != DIPPER_OK) return rc;
  }
  return DIPPER_OK;
}

/* Run prog through dipper_run, its queries together by their triggers.  The
** statements that answer without running (SHOW, DESCRIBE, SET alone,
** EXPLAIN: dipper_run passes over them) print their rows with this
** command's printer: those before the first query before the queries start,
** the others once they have ended. */
static int run_program(const cli_options *opts, dipper *db, dipper_program *prog,
                       cli_progress *progress, bool *printed) {
  int n = dipper_program_count(prog), first = n;
  bool queries = false;
  for (int i = n - 1; i >= 0; i--) {
    int kind = 0;
    dipper_program_stmt_kind(prog, i, &kind);
    if (kind == DIPPER_STMT_QUERY || kind == DIPPER_STMT_INSERT) first = i;
    queries |= kind == DIPPER_STMT_QUERY;
  }
  int rc = DIPPER_OK;
  for (int i = 0; i < n && rc == DIPPER_OK; i++) {
    if (i == first) {
      fflush(stdout);
      rc = dipper_run(prog, cli_progress_update, progress);
      /* The console sink ends each batch with a blank line: no separator. */
      *printed &= !queries;
      continue;
    }
    int kind = 0;
    dipper_program_stmt_kind(prog, i, &kind);
    if (kind == DIPPER_STMT_RESULT) rc = execute_stmt(opts, db, prog, i, printed);
  }
  return rc;
}

/* `run`: compile every input first (a script with errors runs nothing),
** then run the programs in order, each to its end: through dipper_run (live
** progress, SELECTs printed by the console sink; on Spark, streaming
** programs, whose queries Spark runs until they end or a signal stops them),
** or, with --format and for batch programs on Spark, statement by statement
** with this command's printer. */
/* The library's notes and warnings on stderr (not with -q), its debug lines
** with -v.  Called on the Kafka client's threads too: one fprintf a line. */
static void print_note(void *user, int level, const char *message) {
  const cli_options *opts = user;
  if (level == DIPPER_LOG_DEBUG ? !opts->verbose : opts->quiet) return;
  fprintf(stderr, "dipper: %s: %s\n",
          level == DIPPER_LOG_WARNING ? "warning" : level == DIPPER_LOG_NOTE ? "note" : "debug",
          message);
}

static int run_programs(const cli_options *opts, dipper *db, bool on_spark) {
  dipper_program **progs = calloc((size_t)opts->ninputs + 1, sizeof *progs);
  if (!progs) {
    cli_error("out of memory");
    return CLI_EXIT_USAGE;
  }
  int status = CLI_EXIT_OK;
  dipper_set_log(db, print_note, (void *)(uintptr_t)opts);
  for (int i = 0; i < opts->ninputs; i++) {
    const cli_input *in = &opts->inputs[i];
    if (dipper_compile(db, in->text, in->len, in->name, &progs[i]) != DIPPER_OK) {
      cli_print_diags(db);
      status = CLI_EXIT_SQL;
    }
  }
  cli_progress *progress =
      status == CLI_EXIT_OK ? cli_progress_new(isatty(STDERR_FILENO) == 1, opts->quiet) : NULL;
  if (status == CLI_EXIT_OK && !progress) {
    cli_error("out of memory");
    status = CLI_EXIT_USAGE;
  }
  if (status == CLI_EXIT_OK) {
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: a sleep between batches ends at once. */
    running_db = db;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int rc = DIPPER_OK;
    bool printed = false;
    for (int i = 0; i < opts->ninputs && rc == DIPPER_OK; i++) {
      bool by_statement =
          opts->format_given || (on_spark && !dipper_program_streaming(progs[i]));
      rc = by_statement ? execute_program(opts, db, progs[i], &printed)
                        : run_program(opts, db, progs[i], progress, &printed);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    running_db = NULL;
    if (fflush(stdout) != 0) {
      cli_error("cannot write the output");
      status = CLI_EXIT_USAGE;
    }
    cli_progress_finish(progress);
    if (rc == DIPPER_INTERRUPTED) {
      status = 128 + (stop_signal ? (int)stop_signal : SIGINT);
    } else if ((rc == DIPPER_IO && dipper_diag_count(db) == 0) || error_said) {
      status = CLI_EXIT_SQL; /* the printer said why */
    } else if (rc != DIPPER_OK) {
      cli_print_run_error(db);
      status = CLI_EXIT_SQL;
    }
  }
  cli_progress_free(progress);
  for (int i = 0; i < opts->ninputs; i++) dipper_program_free(progs[i]);
  free(progs);
  return status;
}

static void print_warnings(const dipper_program *prog) {
  for (int w = 0; w < dipper_program_warning_count(prog); w++) {
    char *text = dipper_program_warning_render(prog, w);
    if (text) fputs(text, stderr);
    dipper_free(text);
  }
}

/* Compile each input; print the plans for `explain`.  Keeps going after an
** input with errors so that one run reports them all.  --format json: check
** prints one array of every input's diagnostics ([] when clean), explain
** one array of {"input": NAME, "statements": [...]} (dipper_explain's JSON
** object, named), diagnostics still going to stderr. */
static int run(const cli_options *opts, dipper *db) {
  int status = CLI_EXIT_OK;
  bool json = opts->format == CLI_FORMAT_JSON;
  bool printed = false, first_diag = true;
  unsigned flags = opts->explain_flags | (json ? DIPPER_EXPLAIN_JSON : 0);
  if (json) fputc('[', stdout);
  for (int i = 0; i < opts->ninputs; i++) {
    const cli_input *in = &opts->inputs[i];
    dipper_program *prog = NULL;
    if (dipper_compile(db, in->text, in->len, in->name, &prog) != DIPPER_OK) {
      if (json && opts->command == CLI_CMD_CHECK) cli_print_diags_json(db, in, &first_diag);
      else cli_print_diags(db);
      status = CLI_EXIT_SQL;
      continue;
    }
    /* What compiles but keeps growing state: a warning, not an error (run
    ** says it when the query starts, through the log). */
    if (!opts->quiet) print_warnings(prog);
    if (opts->command == CLI_CMD_EXPLAIN && (json || dipper_program_count(prog) > 0)) {
      char *plan = NULL;
      int rc = dipper_explain(prog, flags, &plan);
      if (rc != DIPPER_OK) {
        cli_error("cannot explain '%s': %s", in->name, dipper_strerror(rc));
        status = CLI_EXIT_SQL;
      } else if (json) { /* {"statements": ...} becomes {"input": NAME, "statements": ...} */
        fputs(printed ? ",\n{\"input\": " : "\n{\"input\": ", stdout);
        cli_put_json_string(stdout, in->name);
        fputs(", ", stdout);
        size_t len = strlen(plan);
        while (len > 0 && plan[len - 1] == '\n') len--;
        fwrite(plan + 1, 1, len > 0 ? len - 1 : 0, stdout);
        printed = true;
      } else {
        if (printed) fputc('\n', stdout);
        fputs(plan, stdout);
        printed = true;
      }
      dipper_free(plan);
    }
    dipper_program_free(prog);
  }
  if (json) fputs(printed || !first_diag ? "\n]\n" : "]\n", stdout);
  if (fflush(stdout) != 0) {
    cli_error("cannot write the output");
    return CLI_EXIT_USAGE;
  }
  return status;
}

int main(int argc, char **argv) {
  cli_options opts;
  int status = cli_parse_args(argc, argv, &opts);
  if (status == CLI_EXIT_OK && opts.help) {
    cli_print_usage(stdout);
  } else if (status == CLI_EXIT_OK && opts.version) {
    printf("dipper %s\n", dipper_version());
  } else if (status == CLI_EXIT_OK) {
    status = cli_read_inputs(&opts);
    dipper *db = NULL;
    if (status == CLI_EXIT_OK) {
      int rc = dipper_open(&db, opts.engine);
      if (rc != DIPPER_OK) {
        /* A bad address still gives a handle that says what is wrong. */
        if (db)
          cli_error("%s", dipper_errmsg(db));
        else
          cli_error("cannot open engine '%s': %s", opts.engine ? opts.engine : "embedded",
                    dipper_strerror(rc));
        status = CLI_EXIT_USAGE;
      }
    }
    bool on_spark = opts.engine && strncmp(opts.engine, "sc://", 5) == 0;
    if (status == CLI_EXIT_OK && opts.command == CLI_CMD_SHELL) {
      dipper_set_log(db, print_note, NULL);
      status = cli_shell(db, opts.format_given ? opts.format : CLI_FORMAT_TABLE, argv[0]);
    } else if (status == CLI_EXIT_OK) {
      status = opts.command == CLI_CMD_RUN ? run_programs(&opts, db, on_spark)
                                           : run(&opts, db);
    }
    dipper_close(db);
  }
  cli_options_free(&opts);
  return status;
}
