/*
** dipper.c — main() of the `dipper` command: check and explain SQL files.
**
** Every input is compiled into one handle, in order, so a file that creates
** tables and an -e query that reads them work together.  Statuses: 0 clean,
** 1 the SQL has errors (each one printed like a compiler's), 2 a usage error
** or an unreadable input.
*/
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
    if (status == CLI_EXIT_OK) status = run(&opts, db);
    dipper_close(db);
  }
  cli_options_free(&opts);
  return status;
}
