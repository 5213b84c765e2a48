/*
** analyze_int.h — helpers shared by analyze.c and validate.c.
**
** Owns nothing: small read-only questions about an analysed plan (which
** watermark governs a column, where a column came from) and name lists for
** messages.  The module's interface is plan/analyze.h.
*/
#ifndef DP_ANALYZE_INT_H
#define DP_ANALYZE_INT_H

#include <stdbool.h>

#include "core/arena.h"
#include "core/buf.h"
#include "plan/plan.h"

/* The watermark id governing output column `col` of an analysed node, -2 for a
** processing-time attribute, -1 for an ordinary column (or a bad index). */
int dp_analyze_attr(const dp_plan *p, int col);
/* Does some output column of p carry an event-time watermark? */
bool dp_analyze_has_watermark(const dp_plan *p);
/* Is fn the operator `op` (infix spelling) or the function `name`? Either may be NULL. */
bool dp_analyze_fn_is(const dp_func *fn, const char *op, const char *name);
/* "a, b" for columns of s; allocated in a. */
const char *dp_analyze_col_list(dp_arena *a, const dp_schema *s, int n, const int *cols);
/* The column's name, or "?". */
const char *dp_analyze_col_name(const dp_schema *s, int col);
/* Trace column `col` of p through nodes that pass columns unchanged to a
** window: returns 'S' (window_start), 'E' (window_end), 'T' (window_time) or
** 0, and the WINDOW node in *win. */
int dp_analyze_window_col(const dp_plan *p, int col, const dp_plan **win);

/* Fill changes and change_kinds of every node under an analysed root
** (analyze_changelog.c). */
void dp_analyze_changes(dp_plan *root);

#endif /* DP_ANALYZE_INT_H */
