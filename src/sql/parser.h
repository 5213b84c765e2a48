/*
** parser.h — SQL text to syntax tree.
**
** A hand-written lexer and recursive-descent parser (precedence climbing for
** expressions).  Errors are recorded in `d` with the span of the offending
** token; the parser resynchronises at the next ';' so that one run reports
** the errors of every statement.
*/
#ifndef DP_PARSER_H
#define DP_PARSER_H

#include <stddef.h>

#include "core/arena.h"
#include "core/diag.h"
#include "sql/ast.h"

/* Parse a script of ';'-separated statements.  On success returns DIPPER_OK
** and *out (allocated in `a`).  On failure returns the first error's code,
** *out may hold the statements that did parse, and `d` has every error.
** `text` need not be NUL-terminated; it is borrowed for as long as the tree. */
int dp_parse(dp_arena *a, dp_diags *d, const char *text, size_t len, dp_ast_script **out);

/* Parse one type, e.g. "ROW<a INT, b ARRAY<STRING>>" (used by the C API and
** tests).  NULL with a diagnostic on failure. */
const dp_type *dp_parse_type(dp_arena *a, dp_diags *d, const char *text, size_t len);

#endif /* DP_PARSER_H */
