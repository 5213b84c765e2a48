/*
** catalog_int.h — what catalog.c, options.c and connectors.c share and nobody
** else needs: the catalog struct, the session option store, and the small
** helpers for "did you mean" and connector checks at CREATE time.
**
** Owns: nothing beyond the declarations.  The public interface of the module
** is plan/catalog.h.
*/
#ifndef DP_CATALOG_INT_H
#define DP_CATALOG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/suggest.h"
#include "plan/catalog.h"

/* One SET key and its value (canonical spelling), in the catalog arena. */
typedef struct dp_session_option {
  const char *key, *value;
} dp_session_option;

struct dp_catalog {
  dp_arena *arena;          /* every definition, name and option value lives here */
  /* Tables and views, each sorted by lower-cased name for binary search; the
     two share one namespace (a name is a table or a view, never both). */
  dp_table_def **tables;
  int ntables, tables_cap;
  dp_view_def **views;
  int nviews, views_cap;
  dp_session_option *options;
  int noptions, options_cap;
  /* User-defined functions (catalog_func.c), sorted by lower-cased name; a
     namespace of their own, apart from the built-ins (which they may not shadow). */
  struct dp_udf_def **funcs;
  int nfuncs, funcs_cap;
};

/* catalog_func.c: give back the C functions' references (dp_catalog_free). */
void dp_catalog_free_functions(dp_catalog *c);

/* The role-neutral connector check CREATE TABLE runs: everything of
** dp_connector_validate except what depends on reading or writing the table
** (a Kafka source needs topic or topic-pattern, a sink needs topic; a sink-only
** connector cannot be read).  Those are checked when the table is used. */
int dp_connector_check_table(dp_diags *d, const dp_table_def *t);

/* The connector's own spelling for a 'connector' value written in any case,
** with aliases resolved ('Print' → "console"); NULL when unknown.  Static. */
const char *dp_connector_canonical(const char *name);

#endif /* DP_CATALOG_INT_H */
