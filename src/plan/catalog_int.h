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

/* A database of a catalog (catalog_ns.c). */
typedef struct dp_database_def {
  const char *catalog, *name;
  const char *comment;
  bool is_default;          /* the one USE CATALOG goes to (made with the catalog) */
} dp_database_def;

struct dp_catalog {
  dp_arena *arena;          /* every definition, name and option value lives here */
  /* Catalogs (names) and databases, each sorted by lower-cased name; the
     current ones (USE), which bare table names resolve in. */
  const char **catalogs;
  int ncatalogs, catalogs_cap;
  dp_database_def **databases;
  int ndatabases, databases_cap;
  const char *cur_catalog, *cur_database;
  /* Tables and views, each sorted by lower-cased (catalog, database, name)
     for binary search; the two share one namespace (a name is a table or a
     view, never both). */
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

/* Case-insensitive name comparison (catalog.c). */
int dp_catalog_name_cmp(const char *a, const char *b);
/* catalog_ns.c: the default catalog and database of a new catalog. */
int dp_catalog_init_namespaces(dp_catalog *c);
/* catalog.c: check and keep a table definition built by CREATE TABLE, CTAS or
** ALTER TABLE (options mapped and checked, connector and format canonical,
** boundedness), not yet added. */
int dp_catalog_finish_table(dp_catalog *c, dp_diags *d, dp_table_def *t);

/* catalog_like.c: the table CREATE TABLE .. LIKE src copies from, as the
** LIKE options (Flink's INCLUDING / EXCLUDING / OVERWRITING, default
** INCLUDING ALL OVERWRITING OPTIONS) make it: src itself, or a copy without
** the excluded features and without what the new table overwrites.
** *strict_options for INCLUDING OPTIONS (a key set twice is an error). */
int dp_catalog_like_source(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                           const dp_table_def *src, const dp_table_def **out,
                           bool *strict_options);
/* catalog_ns.c: DROP DATABASE / DROP CATALOG. */
int dp_catalog_drop_namespace(dp_catalog *c, dp_diags *d, const dp_ast_drop *dr);

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

/* Flink's legacy option keys ('connector.type', 'connector.path',
** 'format.type', 'format.field-delimiter', ...) rewritten to the new ones in
** t->options (a new array in `a`), version keys dropped; errors into d for a
** legacy key without a new form or one set twice (old and new spelling). */
int dp_connector_map_legacy(dp_arena *a, dp_diags *d, dp_table_def *t);

#endif /* DP_CATALOG_INT_H */
