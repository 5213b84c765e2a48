/*
** fuzz_sql.c — libFuzzer target for the SQL front end: arbitrary bytes through
** dp_parse and dp_parse_type.
**
** Besides "no crash, no leak, no undefined behaviour" it checks what the rest
** of dipper relies on: every diagnostic and every statement span lies inside
** the text, a failed parse reports at least one error, and rendering each
** diagnostic works.  A broken invariant aborts, which the fuzzer reports.
*/
#include <stdint.h>
#include <stdlib.h>

#include "core/arena.h"
#include "core/diag.h"
#include "sql/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_span(dp_span s, size_t size) {
  if (s.line == 0) return; /* no place: out of memory, or a whole-text limit */
  if ((size_t)s.off + s.len > size || s.col == 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  dp_arena *a = dp_arena_new(0);
  if (!a) return 0;
  dp_diags d;
  dp_diags_init(&d, a, "fuzz.sql", text, size);
  dp_ast_script *script = NULL;
  int rc = dp_parse(a, &d, text, size, &script);
  if (rc != DIPPER_OK && d.count == 0) abort();
  if (rc == DIPPER_OK && d.count != 0) abort();
  if (script) {
    for (int i = 0; i < script->n; i++) check_span(script->stmts[i]->span, size);
  }
  for (int i = 0; i < d.count; i++) {
    check_span(d.items[i].span, size);
    free(dp_diag_render(&d, &d.items[i]));
  }
  /* The same bytes as a type, as the C API would pass them. */
  dp_arena_reset(a);
  dp_diags_init(&d, a, "type", text, size);
  const dp_type *t = dp_parse_type(a, &d, text, size);
  if (!t && d.count == 0) abort();
  dp_arena_free(a);
  return 0;
}
