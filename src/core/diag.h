/*
** diag.h — diagnostics: the rich error object every layer reports through.
**
** A diagnostic has a code (enum dipper_code from dipper.h), a message saying
** what went wrong and what to write instead, and a source span.  Layers append
** diagnostics to a dp_diags list and keep going where they can, so that one
** `dipper check` run reports every independent error.
**
** Owns: nothing; messages are allocated in the list's arena.
*/
#ifndef DP_DIAG_H
#define DP_DIAG_H

#include <stdint.h>

#include "core/arena.h"
#include "core/compiler.h"
#include "dipper.h"

/* A range of the SQL text, in bytes, with the 1-based line and column of its
** start.  A span with line == 0 has no place (a plan built through the C API). */
typedef struct dp_span {
  uint32_t off, len;
  uint32_t line, col;
} dp_span;

typedef struct dp_diag {
  int code;
  dp_span span;
  const char *message;
} dp_diag;

typedef struct dp_diags {
  dp_arena *arena;    /* borrowed; messages live here */
  const char *file;   /* name of the text, borrowed */
  const char *text;   /* the text itself, for rendering; borrowed */
  size_t text_len;
  dp_diag *items;
  int count, cap;
  int max;            /* stop recording after this many (0: 100) */
} dp_diags;

void dp_diags_init(dp_diags *d, dp_arena *a, const char *file, const char *text, size_t len);

/* Append a diagnostic; returns `code` so callers can `return dp_error(...)`.
** Out of memory while recording is reported as DIPPER_NOMEM by the list. */
int dp_error(dp_diags *d, int code, dp_span span, const char *fmt, ...)
    DP_PRINTF(4, 5)
    ;

/* Render one diagnostic as "file:line:col: error: msg\n  L | text\n    | ^~~~\n".
** Returned string is malloc'd: the caller frees it with free(). */
char *dp_diag_render(const dp_diags *d, const dp_diag *g);
/* The same with another word than "error" ("warning"). */
char *dp_diag_render_level(const dp_diags *d, const dp_diag *g, const char *level);

/* A span covering a and b (a before b). */
dp_span dp_span_join(dp_span a, dp_span b);

#endif /* DP_DIAG_H */
