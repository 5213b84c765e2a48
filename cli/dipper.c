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

static void on_stop_signal(int sig) {
  stop_signal = sig;
  if (running_db) dipper_interrupt(running_db);
}

/* `run`: compile every input first (a script with errors runs nothing),
** then run the programs in order, each to its end. */
static int run_programs(const cli_options *opts, dipper *db) {
  dipper_program **progs = calloc((size_t)opts->ninputs + 1, sizeof *progs);
  if (!progs) {
    cli_error("out of memory");
    return CLI_EXIT_USAGE;
  }
  int status = CLI_EXIT_OK;
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
    for (int i = 0; i < opts->ninputs && rc == DIPPER_OK; i++)
      rc = dipper_run(progs[i], cli_progress_update, progress);
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
    } else if (rc != DIPPER_OK) {
      cli_print_diags(db);
      status = CLI_EXIT_SQL;
    }
  }
  cli_progress_free(progress);
  for (int i = 0; i < opts->ninputs; i++) dipper_program_free(progs[i]);
  free(progs);
  return status;
}

/* Compile each input; print the plans for `explain`.  Keeps going after an
** input with errors so that one run reports them all. */
static int run(const cli_options *opts, dipper *db) {
  int status = CLI_EXIT_OK;
  bool printed = false;
  for (int i = 0; i < opts->ninputs; i++) {
    const cli_input *in = &opts->inputs[i];
    dipper_program *prog = NULL;
    if (dipper_compile(db, in->text, in->len, in->name, &prog) != DIPPER_OK) {
      cli_print_diags(db);
      status = CLI_EXIT_SQL;
      continue;
    }
    if (opts->command == CLI_CMD_EXPLAIN && dipper_program_count(prog) > 0) {
      char *plan = NULL;
      int rc = dipper_explain(prog, opts->explain_flags, &plan);
      if (rc != DIPPER_OK) {
        cli_error("cannot explain '%s': %s", in->name, dipper_strerror(rc));
        status = CLI_EXIT_SQL;
      } else {
        if (printed) fputc('\n', stdout);
        fputs(plan, stdout);
        printed = true;
      }
      dipper_free(plan);
    }
    dipper_program_free(prog);
  }
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
        cli_error("cannot use engine '%s': %s; write 'embedded' or "
                  "sc://host:port[/;token=..;use_ssl=true]",
                  opts.engine ? opts.engine : "embedded", dipper_strerror(rc));
        status = CLI_EXIT_USAGE;
      }
    }
    if (status == CLI_EXIT_OK && opts.command == CLI_CMD_RUN && opts.engine &&
        strncmp(opts.engine, "sc://", 5) == 0) {
      cli_error("cannot run on '%s': the Spark Connect backend is not built yet; run without "
                "--engine to use the embedded engine",
                opts.engine);
      status = CLI_EXIT_USAGE;
    }
    if (status == CLI_EXIT_OK)
      status = opts.command == CLI_CMD_RUN ? run_programs(&opts, db) : run(&opts, db);
    dipper_close(db);
  }
  cli_options_free(&opts);
  return status;
}
