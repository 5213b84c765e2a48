/*
** cli.h — the pieces of the `dipper` command shared between its files.
**
** The command is built on include/dipper.h alone (like curl's tool on
** libcurl): nothing here may include a header from src/.
**
** Owns: command-line parsing (args.c), reading inputs and printing
** diagnostics (io.c), the progress lines of `run` (progress.c), and the
** commands themselves (dipper.c), the interactive shell (shell.c).
*/
#ifndef DIPPER_CLI_H
#define DIPPER_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "dipper.h"

/* Exit statuses, as a compiler's: the SQL is wrong (1) is not the same
** failure as the command being used wrongly (2). */
enum { CLI_EXIT_OK = 0, CLI_EXIT_SQL = 1, CLI_EXIT_USAGE = 2 };

typedef enum cli_command {
  CLI_CMD_NONE, CLI_CMD_CHECK, CLI_CMD_EXPLAIN, CLI_CMD_RUN, CLI_CMD_SHELL
} cli_command;

/* How `run` prints the rows of a SELECT that it executes itself (print.c);
** `check` and `explain` print text or JSON. */
typedef enum cli_format { CLI_FORMAT_TABLE, CLI_FORMAT_CSV, CLI_FORMAT_JSON, CLI_FORMAT_TEXT } cli_format;

/* One SQL text to compile: a file, the standard input or an -e argument. */
typedef struct cli_input {
  char kind;           /* 'f' file, '-' stdin, 'e' command-line text */
  const char *arg;     /* the file name or the -e text, borrowed from argv */
  const char *name;    /* how diagnostics name it: the path, "<stdin>", "<command line>" */
  char *text;          /* the SQL, read by cli_read_inputs; malloc'd */
  size_t len;
} cli_input;

typedef struct cli_options {
  cli_command command;
  bool help, version;
  bool quiet;          /* run: no live progress, no summary */
  bool verbose;        /* run: the library's debug lines (the Kafka client's log) too */
  const char *engine;  /* --engine ADDR, or NULL */
  bool format_given;   /* --format: run prints SELECTs with print.c even on the embedded
                          engine; check and explain print JSON */
  cli_format format;   /* run: TABLE unless given; check, explain: TEXT or JSON */
  unsigned explain_flags;
  int ninputs;
  cli_input *inputs;   /* malloc'd, argc entries at most */
} cli_options;

/* Parse argv.  Returns CLI_EXIT_OK, or CLI_EXIT_USAGE after printing what is
** wrong and a hint to stderr.  The caller frees opts->inputs with cli_options_free. */
int cli_parse_args(int argc, char **argv, cli_options *opts);
void cli_options_free(cli_options *opts);
void cli_print_usage(FILE *out);

/* Read every input's text.  CLI_EXIT_USAGE (after naming the file and the
** system's reason on stderr) when one cannot be read. */
int cli_read_inputs(cli_options *opts);

/* Print every diagnostic of the last failed call on db to stderr, the way a
** compiler does; "error:" in bold red when stderr is a terminal and NO_COLOR
** is unset. */
void cli_print_diags(const dipper *db);
/* `check --format json`: every diagnostic of the last failed call on db as
** one JSON object, `in` the text it was compiled from (for where each
** underline ends).  *first: no object printed yet (a ',' comes before the
** others); the caller writes the array's brackets. */
void cli_print_diags_json(const dipper *db, const cli_input *in, bool *first);
/* The same for a failure while running: diagnostics with a place in the SQL
** are rendered as above, the others (a server that does not answer) are
** printed as "dipper: error: message". */
void cli_print_run_error(const dipper *db);

/* ---- print.c: the rows of a result ---- */

/* Print every row of the stream in `format` to out (the stream stays the
** caller's to release).  0, or an errno value after a message on stderr. */
int cli_print_stream(struct ArrowArrayStream *st, cli_format format, FILE *out);
/* s quoted and escaped as a JSON string (the one escaper of the command). */
void cli_put_json_string(FILE *out, const char *s);

/* ---- progress.c: what `dipper run` shows on stderr ---- */

typedef struct cli_progress cli_progress;
/* live: redraw one line per query in place (stderr is a terminal); quiet:
** show nothing at all.  NULL when out of memory. */
cli_progress *cli_progress_new(bool live, bool quiet);
/* A dipper_progress_fn: remember the query's latest progress, redraw. */
void cli_progress_update(void *user, const dipper_progress *p);
/* Take the live lines down and print one summary line per query. */
void cli_progress_finish(cli_progress *cp);
void cli_progress_free(cli_progress *cp);

/* ---- shell.c: `dipper shell` ---- */

/* Read statements from stdin into db until Ctrl-D or .quit; rows print in
** `mode` (TABLE, CSV or JSON) until .mode changes it.  The exit status. */
int cli_shell(dipper *db, cli_format mode, const char *argv0);

/* "dipper: " + message on stderr, with the same colouring rule. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif /* DIPPER_CLI_H */
