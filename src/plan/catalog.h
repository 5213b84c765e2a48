/*
** catalog.h — what the session knows: tables, views, functions, options.
**
** CREATE TABLE / VIEW / FUNCTION, DROP, SET and RESET act on the catalog as
** they are compiled.  A table definition keeps every declared column with its
** kind (physical, computed, metadata), the watermark, the primary key, the
** partition keys and the connector options, all checked when declared:
** unknown connectors, unknown or missing options, a watermark on a column
** that is not a timestamp are errors at CREATE time, with line:col.
*/
#ifndef DP_CATALOG_H
#define DP_CATALOG_H

#include <stdbool.h>

#include "core/arena.h"
#include "core/diag.h"
#include "core/types.h"
#include "sql/ast.h"

typedef struct dp_expr dp_expr;
typedef struct dp_table_def dp_table_def; /* also in plan.h; C11 allows the repeat */

typedef enum dp_col_kind { DP_CK_PHYSICAL, DP_CK_COMPUTED, DP_CK_METADATA } dp_col_kind;

typedef struct dp_column_def {
  dp_col_kind kind;
  const char *metadata_key;   /* METADATA: the connector's key ("offset", "timestamp") */
  bool is_virtual;            /* METADATA VIRTUAL: read-only, not written by sinks */
  dp_expr *expr;              /* COMPUTED: bound over the table's columns (index into schema) */
  bool proctime;              /* COMPUTED AS PROCTIME() */
  dp_span span;
} dp_column_def;

typedef struct dp_option {
  const char *key, *value;
  dp_span span, value_span;
} dp_option;

struct dp_table_def {
  const char *name;           /* the object name, without catalog and database */
  const char *catalog_name;   /* where it lives: default_catalog.default_database unless */
  const char *database_name;  /*   named (cat.db.t, db.t) or USE chose another */
  bool temporary;
  dp_schema schema;           /* every column in declared order */
  dp_column_def *cols;        /* parallel to schema.cols */
  int watermark_col;          /* -1: none */
  dp_expr *watermark_expr;    /* bound over the schema (computed columns are inputs too) */
  int64_t watermark_delay;    /* µs when the expression is `col - INTERVAL c`, else -1 */
  dp_span watermark_span;
  int npk;
  int *pk;
  int npartition;
  int *partition;
  int noptions;
  dp_option *options;
  const char *connector;      /* the value of 'connector' (lower case, 'print' → "console") */
  const char *format;         /* 'format' or 'value.format' (lower case), or NULL */
  bool bounded;               /* the source ends (bounded datagen, a file in batch mode, ...) */
  dp_span span;
  dp_span with_span;          /* the WITH (...) clause: where a missing option is reported */
};

typedef struct dp_view_def {
  const char *name;
  const char *catalog_name, *database_name; /* as for tables */
  bool temporary;
  int ncols;                  /* explicit column names, or 0 */
  const char **cols;
  const dp_ast_query *query;  /* re-bound at every use, like a macro (kept in the catalog arena) */
  const char *text;           /* the query's SQL text */
  dp_span span;
} dp_view_def;

typedef struct dp_catalog dp_catalog;

dp_catalog *dp_catalog_new(void);  /* NULL on no memory; free with dp_catalog_free */
void dp_catalog_free(dp_catalog *c);
dp_arena *dp_catalog_arena(dp_catalog *c); /* where definitions live */

/* Catalogs and databases, as Flink names them: a session starts in catalog
** `default_catalog`, database `default_database`; CREATE CATALOG / DATABASE
** add namespaces, USE moves the current one, and a table name resolves as
** t (the current database), db.t (a database of the current catalog) or
** cat.db.t.  Names compare case-insensitively. */
#define DP_DEFAULT_CATALOG "default_catalog"
#define DP_DEFAULT_DATABASE "default_database"

/* A resolved object path: strings borrowed (the catalog's or the name's). */
typedef struct dp_qname {
  const char *catalog, *database, *name;
} dp_qname;

const char *dp_catalog_current_catalog(const dp_catalog *c);
const char *dp_catalog_current_database(const dp_catalog *c);
bool dp_catalog_has_catalog(const dp_catalog *c, const char *catalog);
bool dp_catalog_has_database(const dp_catalog *c, const char *catalog, const char *database);
/* The catalogs (sorted), and the databases of one catalog (sorted): i from 0
** while non-NULL. */
const char *dp_catalog_catalog_at(const dp_catalog *c, int i);
const char *dp_catalog_database_at(const dp_catalog *c, const char *catalog, int i);
/* Resolve n (t, db.t or cat.db.t) against the current catalog and database.
** DIPPER_OK; DIPPER_NAME, with the error at n's span in d (when d is not
** NULL), for a catalog or database that does not exist or a name of more
** than three parts. */
int dp_catalog_resolve(const dp_catalog *c, dp_diags *d, const dp_ast_name *n, dp_qname *out);
/* Is the definition in the current database? */
bool dp_catalog_is_current(const dp_catalog *c, const char *catalog, const char *database);

/* Lookups are case-insensitive. NULL when absent.  The plain forms look in
** the current database; the _in forms at a resolved path. */
const dp_table_def *dp_catalog_table(const dp_catalog *c, const char *name);
const dp_view_def *dp_catalog_view(const dp_catalog *c, const char *name);
const dp_table_def *dp_catalog_table_in(const dp_catalog *c, const dp_qname *q);
const dp_view_def *dp_catalog_view_in(const dp_catalog *c, const dp_qname *q);
/* Into t->catalog_name.t->database_name (the current database when NULL). */
int dp_catalog_add_table(dp_catalog *c, dp_table_def *t);   /* DIPPER_DUPLICATE if taken */
int dp_catalog_add_view(dp_catalog *c, dp_view_def *v);
/* From the current database. */
int dp_catalog_drop(dp_catalog *c, int what /* 'T' or 'V' */, const char *name);
int dp_catalog_drop_in(dp_catalog *c, int what, const dp_qname *q);
/* The closest table or view name of the current database, for "did you mean". */
const char *dp_catalog_suggest(const dp_catalog *c, const char *name);
int dp_catalog_table_count(const dp_catalog *c);
const dp_table_def *dp_catalog_table_at(const dp_catalog *c, int i);
int dp_catalog_view_count(const dp_catalog *c);
const dp_view_def *dp_catalog_view_at(const dp_catalog *c, int i);

/* DDL: check a definition and add it to the catalog.  Computed columns and
** the watermark are bound with dp_bind_expr_over; the connector options are
** checked with dp_connector_validate.  Errors go to d with line:col. */
int dp_catalog_create_table(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct);
/* `text` is the view query's SQL text (cv->query_span of the script in d); NULL
** takes it from d->text.  The catalog keeps its own copy and syntax tree. */
int dp_catalog_create_view(dp_catalog *c, dp_diags *d, const dp_ast_create_view *cv,
                           const char *text);
int dp_catalog_drop_stmt(dp_catalog *c, dp_diags *d, const dp_ast_drop *dr);
/* CREATE DATABASE / CATALOG, USE, ALTER TABLE (catalog_ns.c): errors into d. */
int dp_catalog_create_namespace(dp_catalog *c, dp_diags *d, const dp_ast_stmt *s);
int dp_catalog_use(dp_catalog *c, dp_diags *d, const dp_ast_stmt *s);
int dp_catalog_alter_table(dp_catalog *c, dp_diags *d, const dp_ast_alter *al);
/* CREATE TABLE t WITH (..) AS SELECT: the table, its columns the query's
** (names and types of `schema`), added like CREATE TABLE's; errors into d. */
int dp_catalog_create_table_as(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                               const dp_schema *schema);

/* User-defined functions (plan/udf.h; catalog_func.c).  Lookups are
** case-insensitive, NULL when absent; the list is sorted by name. */
struct dp_udf_def;
struct dp_cfunc;
const struct dp_udf_def *dp_catalog_function(const dp_catalog *c, const char *name);
int dp_catalog_function_count(const dp_catalog *c);
const struct dp_udf_def *dp_catalog_function_at(const dp_catalog *c, int i);
/* Add a checked definition (its strings, types and body already in the
** catalog arena).  DIPPER_DUPLICATE when the name is taken. */
int dp_catalog_add_function(dp_catalog *c, struct dp_udf_def *f);
/* A C function under its name, replacing a C function of that name (whose
** reference the catalog gives back).  Takes over the caller's reference on
** DIPPER_OK; DIPPER_DUPLICATE when a built-in or a SQL or Java function has
** the name; DIPPER_NOMEM. */
int dp_catalog_put_cfunc(dp_catalog *c, struct dp_cfunc *f);
/* Remove the function (a C function's reference given back): DIPPER_NAME
** when there is none. */
int dp_catalog_drop_function(dp_catalog *c, const char *name);
/* DROP [TEMPORARY] FUNCTION [IF EXISTS] f: errors into d. */
int dp_catalog_drop_function_stmt(dp_catalog *c, dp_diags *d, const dp_ast_drop *dr);
/* CREATE FUNCTION: the statement checked by the binder, kept.  A SQL
** function's tree is parsed again into the catalog arena from the
** statement's text in d (the spans stay those of the script). */
int dp_catalog_create_function(dp_catalog *c, dp_diags *d, const dp_ast_stmt *s);

/* Session options (SET/RESET). Known keys are validated by dp_catalog_set. */
int dp_catalog_set(dp_catalog *c, dp_diags *d, const dp_ast_set *s);
int dp_catalog_reset(dp_catalog *c, const char *key); /* NULL: all */
const char *dp_catalog_option(const dp_catalog *c, const char *key); /* NULL if unset */
/* The options set now, in the order they were first set (SET alone lists
** them): i from 0 while true; key and value borrowed until the next SET/RESET. */
bool dp_catalog_option_at(const dp_catalog *c, int i, const char **key, const char **value);
bool dp_catalog_streaming(const dp_catalog *c); /* execution.runtime-mode != batch */

/* The computed column that turns column `col` of type t into an event-time
** column, as SQL that compiles: "ts AS TO_TIMESTAMP_LTZ(col, 3)" for a number
** (epoch milliseconds), "ts AS TO_TIMESTAMP(col)" for a string, a CAST for a
** DATE ("event_ts" when s already has a `ts`; s may be NULL).  false (and
** buf "") for a type that holds no point in time. */
bool dp_catalog_time_hint(char *buf, size_t cap, const dp_schema *s, const char *col,
                          const dp_type *t);

/* Parse a duration as SET values and connector options write it: "10 s",
** "10 seconds", "1 min", "500 ms", "1h", "1 min 30 s", "1.5 s"; units d, h,
** min (or m), s, ms, us, ns in short, singular or plural form; a bare number
** is milliseconds (Flink's rule).  DIPPER_OK with *micros, or DIPPER_OPTION
** on malformed, negative or overflowing text (then *micros is untouched). */
int dp_parse_duration(const char *s, int64_t *micros);

/* Connector knowledge: validate a table's WITH options (known connector,
** required options present, no unknown keys — with a suggestion — and legal
** values).  `as_sink` checks sink options instead of source ones. */
int dp_connector_validate(dp_diags *d, const dp_table_def *t, bool as_sink);
/* Can the connector `name` be written (has a sink)?  True for a name dipper
** does not know, which dp_connector_validate reports. */
bool dp_connector_writable(const char *name);
/* How many connectors take `key` as a WITH option; their names, quoted and
** comma-separated ("'kafka', 'filesystem'"), in buf (cut to cap). */
size_t dp_connector_option_users(const char *key, char *buf, size_t cap);
/* Would this table, read as a source, end on its own? */
bool dp_connector_bounded(const dp_table_def *t, bool batch_mode);
/* The table's source emits a changelog (+I, -U, +U, -D), not new rows only:
** upsert-kafka (connectors/upsert_kafka.c). */
bool dp_connector_changelog(const dp_table_def *t);

#endif /* DP_CATALOG_H */
