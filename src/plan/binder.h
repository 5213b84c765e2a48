/*
** binder.h — syntax tree to logical plan.
**
** Resolves names (tables, views, CTEs, columns, functions) against the catalog,
** infers types and inserts implicit casts, rewrites the streaming idioms into
** their plan nodes (window TVFs, legacy group windows and Spark's window() into
** WINDOW + AGGREGATE; the ROW_NUMBER() ... WHERE rn = 1 pattern into
** DEDUPLICATE and rn <= N into TOPN), and applies DDL and SET to the catalog.
*/
#ifndef DP_BINDER_H
#define DP_BINDER_H

#include "core/arena.h"
#include "core/diag.h"
#include "plan/catalog.h"
#include "plan/plan.h"
#include "sql/ast.h"

/* Bind one statement.  DDL/SET act on the catalog and leave *out with no
** roots; queries, INSERTs and statement sets produce roots.  EXPLAIN binds the
** explained statement.  Errors go to `d`; the return is the first error code. */
int dp_bind_stmt(dp_arena *a, dp_diags *d, dp_catalog *cat, const dp_ast_stmt *stmt,
                 dp_query_plan *out);

/* The columns a view returns now (its query bound against the catalog as it
** is, the view's column names applied), for DESCRIBE: *out in `a`.  Errors
** go to `d` (a view whose tables were dropped no longer binds). */
int dp_bind_view_schema(dp_arena *a, dp_diags *d, const dp_catalog *cat, const dp_view_def *v,
                        const dp_schema **out);

/* Bind an expression against a flat list of columns (computed columns and
** watermark expressions of CREATE TABLE, and the C API).  *out is NULL on
** error. */
int dp_bind_expr_over(dp_arena *a, dp_diags *d, const dp_catalog *cat, const dp_schema *cols,
                      const dp_ast_expr *e, dp_expr **out);

/* Read an interval in either spelling — INTERVAL '5' SECOND or Spark's
** '10 seconds' / '1 minute 30 seconds' — as µs.  DIPPER_OK or an error in d. */
int dp_bind_interval(dp_diags *d, const dp_ast_expr *e, int64_t *micros);

#endif /* DP_BINDER_H */
