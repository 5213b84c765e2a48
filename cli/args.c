/*
** args.c — the command line of `dipper`: commands, inputs and options.
**
** Grammar: dipper [OPTION]... COMMAND [OPTION | INPUT]...
** Options may come before or after the command; inputs are compiled in the
** order written.  `--` ends the options (a file named "-e" stays reachable).
*/
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *const command_names[] = {"check", "explain", "run", "shell", NULL};
static const char *const option_names[] = {"--engine", "--format", "--help", "--version",
                                           "--no-schema", "--no-streaming", "--quiet", "-e",
                                           "-h", "-q", "-v", "--verbose", NULL};

void cli_print_usage(FILE *out) {
  fputs("usage: dipper COMMAND [OPTIONS] INPUT...\n"
        "\n"
        "Compile Flink-style streaming SQL, report its errors, show its plan, run it.\n"
        "\n"
        "Commands:\n"
        "  check INPUT...     parse, bind and validate every statement; print each\n"
        "                     error with its line and column, nothing when clean\n"
        "  explain INPUT...   print the logical plan of every statement, with its\n"
        "                     schema and streaming properties\n"
        "  shell              an interactive SQL shell on one catalog: statements end\n"
        "                     with ';', line editing and history (~/.dipper_history),\n"
        "                     .help for its commands; also reads a pipe.  `dipper`\n"
        "                     alone on a terminal starts it\n"
        "  run INPUT...       run every INSERT and SELECT on the embedded engine, in\n"
        "                     micro-batches, until the inputs end or Ctrl-C; a live\n"
        "                     progress line per query on a terminal (a line every few\n"
        "                     seconds otherwise), a summary at the end.\n"
        "                     On Spark (--engine sc://...), streaming mode: each INSERT\n"
        "                     is a Spark streaming query, watched the same way until it\n"
        "                     ends (trigger available-now, once) or Ctrl-C/SIGTERM stops\n"
        "                     it.  Batch mode on Spark, or --format: each statement runs\n"
        "                     to completion in turn and each SELECT's rows are printed\n"
        "                     as a table, CSV or JSON\n"
        "\n"
        "Inputs (compiled in order; later inputs see the tables of earlier ones):\n"
        "  FILE.sql           a SQL script\n"
        "  -                  the standard input\n"
        "  -e 'SQL'           SQL text given on the command line\n"
        "\n"
        "Options (one that does not apply to the command is an error):\n"
        "  --engine ADDR      the engine to compile for and run on: embedded (the default)\n"
        "                     or a Spark Connect address\n"
        "                     sc://host:port[/;token=..;use_ssl=true]\n"
        "  --format FMT       run, shell: print SELECT results as table (the default on Spark),\n"
        "                     csv (a header, RFC 4180) or json (one object per line);\n"
        "                     check: text (the default) or json (an array of\n"
        "                     diagnostics, [] when clean); explain: text or json (each\n"
        "                     node with its schema and streaming properties)\n"
        "  --no-schema        explain: leave out each node's schema\n"
        "  --no-streaming     explain: leave out the streaming properties\n"
        "  -q, --quiet        run: no progress lines and no summary\n"
        "  -v, --verbose      run: the Kafka client's own log lines too (connections, retries)\n"
        "  -h, --help         print this help and exit\n"
        "  --version          print the version and exit\n"
        "\n"
        "Exit status: 0 clean, 1 the SQL has errors or a query failed, 2 a usage\n"
        "error or an unreadable input; run: 130 after SIGINT, 143 after SIGTERM.\n",
        out);
}

/* Levenshtein distance, capped: only small typos earn a "did you mean". */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 31 || lb > 31) return 99;
  size_t row[32];
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

static const char *closest(const char *word, const char *const *names) {
  const char *best = NULL;
  size_t best_distance = 3; /* more than two edits away is not a typo */
  for (int i = 0; names[i]; i++) {
    size_t d = edit_distance(word, names[i]);
    if (d < best_distance) {
      best_distance = d;
      best = names[i];
    }
  }
  return best;
}

static int usage_error_hint(const char *what, const char *word, const char *const *names) {
  const char *suggestion = closest(word, names);
  if (suggestion)
    cli_error("unknown %s '%s'; did you mean '%s'?", what, word, suggestion);
  else
    cli_error("unknown %s '%s'", what, word);
  fputs("Try 'dipper --help' for the commands and options.\n", stderr);
  return CLI_EXIT_USAGE;
}

static int missing_value(const char *option, const char *what) {
  cli_error("option '%s' needs %s", option, what);
  fputs("Try 'dipper --help' for the commands and options.\n", stderr);
  return CLI_EXIT_USAGE;
}

/* An option given to a command it does not apply to: refused, not ignored. */
static int not_for(const char *option, const char *command, const char *why) {
  cli_error("option '%s' does not apply to '%s': %s", option, command, why);
  fputs("Try 'dipper --help' for the commands and options.\n", stderr);
  return CLI_EXIT_USAGE;
}

/* --format's value, by command: run prints rows (table, csv, json), check
** and explain print text (the default) or JSON. */
static bool set_format(cli_options *opts, const char *v, const char *command) {
  bool run = opts->command == CLI_CMD_RUN || opts->command == CLI_CMD_SHELL;
  if (strcmp(v, "json") == 0)
    opts->format = CLI_FORMAT_JSON;
  else if (run && strcmp(v, "table") == 0)
    opts->format = CLI_FORMAT_TABLE;
  else if (run && strcmp(v, "csv") == 0)
    opts->format = CLI_FORMAT_CSV;
  else if (!run && strcmp(v, "text") == 0)
    opts->format = CLI_FORMAT_TEXT;
  else {
    if (run)
      cli_error("unknown format '%s' for %s; write table, csv or json", v, command);
    else if (strcmp(v, "table") == 0 || strcmp(v, "csv") == 0)
      cli_error("format '%s' is for the rows of run; %s prints text (the default) or json", v,
                command);
    else
      cli_error("unknown format '%s' for %s; write text or json", v, command);
    return false;
  }
  opts->format_given = opts->format != CLI_FORMAT_TEXT;
  return true;
}

static void add_input(cli_options *opts, char kind, const char *arg) {
  cli_input *in = &opts->inputs[opts->ninputs++];
  memset(in, 0, sizeof *in);
  in->kind = kind;
  in->arg = arg;
  in->name = kind == 'e' ? "<command line>" : kind == '-' ? "<stdin>" : arg;
}

int cli_parse_args(int argc, char **argv, cli_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->inputs = calloc((size_t)(argc > 0 ? argc : 1), sizeof *opts->inputs);
  if (!opts->inputs) {
    cli_error("out of memory");
    return CLI_EXIT_USAGE;
  }
  bool options_ended = false;
  /* Options that belong to one command, kept to check against it at the end
  ** (they may come before the command). */
  const char *format = NULL, *quiet_arg = NULL, *explain_arg = NULL, *verbose_arg = NULL;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    bool is_option = !options_ended && arg[0] == '-' && arg[1] != '\0';
    if (!is_option) {
      if (opts->command == CLI_CMD_NONE && !opts->help && !opts->version) {
        if (strcmp(arg, "check") == 0)
          opts->command = CLI_CMD_CHECK;
        else if (strcmp(arg, "explain") == 0)
          opts->command = CLI_CMD_EXPLAIN;
        else if (strcmp(arg, "run") == 0)
          opts->command = CLI_CMD_RUN;
        else if (strcmp(arg, "shell") == 0)
          opts->command = CLI_CMD_SHELL;
        else
          return usage_error_hint("command", arg, command_names);
      } else {
        add_input(opts, strcmp(arg, "-") == 0 && !options_ended ? '-' : 'f', arg);
      }
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      options_ended = true;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      opts->help = true;
    } else if (strcmp(arg, "--version") == 0) {
      opts->version = true;
    } else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
      opts->quiet = true;
      quiet_arg = arg;
    } else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
      opts->verbose = true;
      verbose_arg = arg;
    } else if (strcmp(arg, "--no-schema") == 0) {
      opts->explain_flags |= DIPPER_EXPLAIN_NO_SCHEMA;
      explain_arg = arg;
    } else if (strcmp(arg, "--no-streaming") == 0) {
      opts->explain_flags |= DIPPER_EXPLAIN_NO_STREAMING;
      explain_arg = arg;
    } else if (strcmp(arg, "--engine") == 0) {
      if (i + 1 >= argc) return missing_value(arg, "an address (embedded or sc://host:port)");
      opts->engine = argv[++i];
    } else if (strncmp(arg, "--engine=", 9) == 0) {
      opts->engine = arg + 9;
    } else if (strcmp(arg, "--format") == 0 || strncmp(arg, "--format=", 9) == 0) {
      const char *v = arg[8] == '=' ? arg + 9 : NULL;
      if (!v && i + 1 >= argc)
        return missing_value(arg, "a format: table, csv or json (run), text or json (check, explain)");
      format = v ? v : argv[++i]; /* checked once the command is known */
    } else if (strcmp(arg, "-e") == 0) {
      if (i + 1 >= argc) return missing_value(arg, "SQL text, e.g. -e 'SELECT 1'");
      add_input(opts, 'e', argv[++i]);
    } else if (strncmp(arg, "-e", 2) == 0) {
      add_input(opts, 'e', arg + 2);
    } else {
      return usage_error_hint("option", arg, option_names);
    }
  }
  if (opts->help || opts->version) return CLI_EXIT_OK;
  if (opts->command != CLI_CMD_RUN && opts->command != CLI_CMD_SHELL) opts->format = CLI_FORMAT_TEXT;
  /* `dipper` alone on a terminal: the shell, as sqlite3 and duckdb. */
  if (opts->command == CLI_CMD_NONE && opts->ninputs == 0 && isatty(STDIN_FILENO) == 1)
    opts->command = CLI_CMD_SHELL;
  if (opts->command == CLI_CMD_NONE) {
    cli_print_usage(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *command = opts->command == CLI_CMD_CHECK     ? "check"
                        : opts->command == CLI_CMD_EXPLAIN ? "explain"
                        : opts->command == CLI_CMD_SHELL   ? "shell"
                                                           : "run";
  if (quiet_arg && opts->command != CLI_CMD_RUN)
    return not_for(quiet_arg, command, "it belongs to run (progress lines and summary)");
  if (verbose_arg && opts->command != CLI_CMD_RUN)
    return not_for(verbose_arg, command, "it belongs to run (the Kafka client's log lines)");
  if (explain_arg && opts->command != CLI_CMD_EXPLAIN)
    return not_for(explain_arg, command, "it belongs to explain (the plan's lines)");
  if (format && !set_format(opts, format, command)) return CLI_EXIT_USAGE;
  if (opts->command == CLI_CMD_SHELL) {
    if (quiet_arg) return not_for(quiet_arg, command, "the shell shows each query's progress");
    if (opts->ninputs > 0) {
      cli_error("'shell' reads its statements from the standard input; run FILE.sql with "
                "'dipper run', or pipe it: dipper shell < FILE.sql");
      return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
  }
  if (opts->ninputs == 0) {
    cli_error("'%s' needs an input: a FILE.sql, '-' for the standard input, or -e 'SQL'",
              command);
    return CLI_EXIT_USAGE;
  }
  return CLI_EXIT_OK;
}

void cli_options_free(cli_options *opts) {
  for (int i = 0; i < opts->ninputs; i++) free(opts->inputs[i].text);
  free(opts->inputs);
  opts->inputs = NULL;
  opts->ninputs = 0;
}
