/*
** dipper_int.h — the structs behind the public handles of dipper.h.
**
** Private to src/api/ (and to tests and benchmarks that look inside); the CLI
** and every other caller see only the opaque types of dipper.h.
*/
#ifndef DP_DIPPER_INT_H
#define DP_DIPPER_INT_H

#include "core/arena.h"
#include "core/diag.h"
#include "dipper.h"
#include "plan/plan.h" /* before catalog.h: it declares dp_table_def */
#include "plan/catalog.h"
#include "sql/ast.h"

struct dipper {
  void *memory;            /* connectors/memory.c: named in-memory tables (pushed source
                              batches, rows written by sinks); freed by dp_memory_free */
  void *callbacks;         /* connectors/callback.c: registered dipper_batch_fn by name;
                              freed by dp_callbacks_free */
  volatile int interrupted;/* set by dipper_interrupt (a signal handler) */
  char *engine;            /* NULL: embedded */
  dp_catalog *catalog;
  dp_arena *diag_arena;    /* diagnostics of the last call; reset at every call */
  dp_diags diags;
  dipper_diag *pub;        /* public copies of diags, built when a call fails */
  char *text;              /* copy of the failed text in diag_arena, for rendering */
  char *file;              /* the filename of the last call, in diag_arena */
};

/* connectors/memory.c, connectors/callback.c: free the handle's memory tables
** and registered callbacks (dipper_close). */
void dp_memory_free(dipper *db);
void dp_callbacks_free(dipper *db);

/* One compiled statement. */
typedef struct dp_program_stmt {
  const dp_ast_stmt *ast;
  dp_query_plan plan;      /* no roots for DDL/SET */
  bool explain;            /* an EXPLAIN statement */
  const char *summary;     /* EXPLAIN's line for DDL/SET/DROP/USE/...; NULL otherwise */
} dp_program_stmt;

struct dipper_program {
  dipper *db;              /* borrowed */
  dp_arena *arena;         /* AST, plans, copies of the text */
  const char *text;
  const char *file;
  int n;
  dp_program_stmt *stmts;
};

/* dipper.c: the diagnostics of a call on db.  begin forgets the last call's
** and starts a list naming `file` whose spans point into `text` (borrowed for
** the call); finish keeps them past the call (copies the text, builds the
** public array) and returns DIPPER_OK or DIPPER_NOMEM. */
void dp_api_diags_begin(dipper *db, const char *file, const char *text, size_t len);
int dp_api_diags_finish(dipper *db);

#endif /* DP_DIPPER_INT_H */
