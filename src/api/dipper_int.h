/*
** dipper_int.h — the structs behind the public handles of dipper.h.
*/
#ifndef DP_DIPPER_INT_H
#define DP_DIPPER_INT_H

#include "core/arena.h"
#include "core/diag.h"
#include "dipper.h"
#include "plan/catalog.h"
#include "plan/plan.h"
#include "sql/ast.h"

struct dipper {
  char *engine;            /* NULL: embedded */
  dp_catalog *catalog;
  dp_arena *diag_arena;    /* diagnostics of the last call */
  dp_diags diags;
  dipper_diag *pub;        /* public copies of diags, built on demand */
  char *text;              /* copy of the last compiled text, for rendering */
  char *file;
};

/* One compiled statement. */
typedef struct dp_program_stmt {
  const dp_ast_stmt *ast;
  dp_query_plan plan;      /* no roots for DDL/SET */
  bool explain;            /* an EXPLAIN statement */
} dp_program_stmt;

struct dipper_program {
  dipper *db;              /* borrowed */
  dp_arena *arena;         /* AST, plans, copies of the text */
  const char *text;
  const char *file;
  int n;
  dp_program_stmt *stmts;
};

#endif /* DP_DIPPER_INT_H */
