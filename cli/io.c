/*
** io.c — what `dipper` reads and writes: input texts and diagnostics.
**
** Colour follows the common convention: only when stderr is a terminal and
** NO_COLOR is unset or empty (https://no-color.org), so pipes and logs never
** receive escape codes.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define BOLD_RED "\033[1;31m"
#define RESET "\033[0m"

static bool stderr_in_colour(void) {
  const char *no_color = getenv("NO_COLOR");
  if (no_color && no_color[0] != '\0') return false;
  return isatty(STDERR_FILENO) == 1;
}

void cli_error(const char *fmt, ...) {
  bool colour = stderr_in_colour();
  fprintf(stderr, "dipper: %serror:%s ", colour ? BOLD_RED : "", colour ? RESET : "");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* The whole of a stream, NUL-terminated.  false with errno set on failure. */
static bool read_stream(FILE *f, char **out, size_t *outlen) {
  size_t cap = 1 << 14, len = 0;
  char *data = malloc(cap);
  if (!data) return false;
  for (;;) {
    if (cap - len < 2) {
      if (cap > ((size_t)-1) / 2) {
        free(data);
        errno = EFBIG;
        return false;
      }
      char *grown = realloc(data, cap * 2);
      if (!grown) {
        free(data);
        errno = ENOMEM;
        return false;
      }
      data = grown;
      cap *= 2;
    }
    size_t got = fread(data + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    int saved = errno ? errno : EIO;
    free(data);
    errno = saved;
    return false;
  }
  data[len] = '\0';
  *out = data;
  *outlen = len;
  return true;
}

static bool read_input(cli_input *in) {
  if (in->kind == 'e') {
    in->len = strlen(in->arg);
    in->text = malloc(in->len + 1);
    if (!in->text) return false;
    memcpy(in->text, in->arg, in->len + 1);
    return true;
  }
  if (in->kind == '-') return read_stream(stdin, &in->text, &in->len);
  FILE *f = fopen(in->arg, "rb");
  if (!f) return false;
  errno = 0;
  bool ok = read_stream(f, &in->text, &in->len);
  int saved = errno;
  fclose(f);
  errno = saved;
  return ok;
}

int cli_read_inputs(cli_options *opts) {
  for (int i = 0; i < opts->ninputs; i++) {
    cli_input *in = &opts->inputs[i];
    errno = 0;
    if (!read_input(in)) {
      cli_error("cannot read '%s': %s", in->name, strerror(errno ? errno : EIO));
      return CLI_EXIT_USAGE;
    }
  }
  return CLI_EXIT_OK;
}

/* Write a rendered diagnostic, colouring the first "error:" after the
** location (a file name may itself contain the word). */
static void put_rendered(const char *text, const char *file, bool colour) {
  const char *from = text;
  if (file && strncmp(text, file, strlen(file)) == 0) from = text + strlen(file);
  const char *word = colour ? strstr(from, "error:") : NULL;
  const char *eol = strchr(text, '\n');
  if (!word || (eol && word > eol)) {
    fputs(text, stderr);
  } else {
    fwrite(text, 1, (size_t)(word - text), stderr);
    fputs(BOLD_RED "error:" RESET, stderr);
    fputs(word + strlen("error:"), stderr);
  }
  size_t len = strlen(text);
  if (len == 0 || text[len - 1] != '\n') fputc('\n', stderr);
}

void cli_print_diags(const dipper *db) {
  bool colour = stderr_in_colour();
  int n = dipper_diag_count(db);
  for (int i = 0; i < n; i++) {
    const dipper_diag *g = dipper_diag_get(db, i);
    char *rendered = dipper_diag_render(db, i);
    if (rendered) {
      put_rendered(rendered, g->file, colour);
      dipper_free(rendered);
    } else if (g->line > 0) { /* no memory to render: the essentials still go out */
      fprintf(stderr, "%s:%d:%d: error: %s\n", g->file ? g->file : "<string>", g->line, g->col,
              g->message);
    } else {
      fprintf(stderr, "%s: error: %s\n", g->file ? g->file : "<string>", g->message);
    }
  }
}

void cli_print_run_error(const dipper *db) {
  int n = dipper_diag_count(db);
  bool placed = false;
  for (int i = 0; i < n; i++) placed |= dipper_diag_get(db, i)->line > 0;
  if (placed) {
    cli_print_diags(db);
    return;
  }
  for (int i = 0; i < n; i++) cli_error("%s", dipper_diag_get(db, i)->message);
  if (n == 0) cli_error("%s", dipper_errmsg(db));
}

/* The names of the codes as dipper.h spells them (DIPPER_SYNTAX: "SYNTAX"). */
#define CODE_NAME_(name, num, str) [num] = #name,
static const char *const code_names[] = {DIPPER_CODES(CODE_NAME_)};
#undef CODE_NAME_

/* Where the underline of g ends: the line and column (1-based, in bytes)
** just after its last byte, walking in->text from g's place. */
static void end_of(const dipper_diag *g, const cli_input *in, int *line, int *col) {
  int length = g->length > 0 ? g->length : 1;
  *line = g->line;
  *col = g->col + length;
  if (!in || !in->text) return;
  size_t at = 0;
  for (int l = 1; l < g->line && at < in->len; at++)
    if (in->text[at] == '\n') l++;
  at += (size_t)(g->col - 1);
  int l = g->line, c = g->col;
  for (int k = 0; k < length && at < in->len; k++, at++) {
    if (in->text[at] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
}

void cli_print_diags_json(const dipper *db, const cli_input *in, bool *first) {
  int n = dipper_diag_count(db);
  for (int i = 0; i < n; i++) {
    const dipper_diag *g = dipper_diag_get(db, i);
    fputs(*first ? "\n  {" : ",\n  {", stdout);
    *first = false;
    fputs("\"file\": ", stdout);
    cli_put_json_string(stdout, g->file ? g->file : in->name);
    if (g->line > 0) {
      int end_line, end_col;
      end_of(g, in, &end_line, &end_col);
      printf(", \"line\": %d, \"column\": %d, \"end_line\": %d, \"end_column\": %d", g->line,
             g->col, end_line, end_col);
    }
    bool known = g->code >= 0 && g->code < (int)(sizeof code_names / sizeof code_names[0]);
    printf(", \"severity\": \"error\", \"code\": \"%s\", \"message\": ",
           known && code_names[g->code] ? code_names[g->code] : "INTERNAL");
    cli_put_json_string(stdout, g->message ? g->message : "");
    fputc('}', stdout);
  }
}
