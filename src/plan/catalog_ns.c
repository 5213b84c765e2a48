/*
** catalog_ns.c — catalogs and databases as namespaces of tables and views,
** and the statements on them: CREATE / DROP CATALOG and DATABASE, USE, and
** ALTER TABLE (options and name).
**
** Owns: the list of catalogs and databases, the current ones, and how a
** name t, db.t or cat.db.t resolves (Flink's rules: a session starts in
** `default_catalog`.`default_database`; a catalog made with CREATE CATALOG
** starts with the database its 'default-database' option names, `default`
** when absent, as Flink's in-memory catalog does).  Does not own: the table
** and view index (catalog.c), connector checks (connectors.c).
**
** Catalogs are in memory, as Flink's 'generic_in_memory': a catalog kept
** elsewhere (Hive, JDBC) is refused at CREATE CATALOG with its reason.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/grow.h"
#include "plan/catalog.h"
#include "plan/catalog_int.h"

static bool name_eq(const char *a, const char *b) { return dp_catalog_name_cmp(a, b) == 0; }

static int err(dp_diags *d, int code, dp_span at, const char *fmt, ...) DP_PRINTF(4, 5);
static int err(dp_diags *d, int code, dp_span at, const char *fmt, ...) {
  if (!d) return code;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return dp_error(d, code, at, "%s", msg);
}

/* ---- the lists ---- */

static int catalog_slot(const dp_catalog *c, const char *name) {
  for (int i = 0; i < c->ncatalogs; i++)
    if (name_eq(c->catalogs[i], name)) return i;
  return -1;
}

static int database_slot(const dp_catalog *c, const char *catalog, const char *name) {
  for (int i = 0; i < c->ndatabases; i++)
    if (name_eq(c->databases[i]->catalog, catalog) && name_eq(c->databases[i]->name, name)) return i;
  return -1;
}

/* Kept sorted by name (SHOW lists them so); a session holds a handful. */
static int add_catalog(dp_catalog *c, const char *name) {
  const char *copy = dp_arena_strdup(c->arena, name);
  if (!copy || dp_arena_grow_i(c->arena, &c->catalogs, &c->catalogs_cap, c->ncatalogs + 1,
                               sizeof *c->catalogs, 4))
    return DIPPER_NOMEM;
  int at = 0;
  while (at < c->ncatalogs && dp_catalog_name_cmp(c->catalogs[at], name) < 0) at++;
  memmove(c->catalogs + at + 1, c->catalogs + at, (size_t)(c->ncatalogs - at) * sizeof *c->catalogs);
  c->catalogs[at] = copy;
  c->ncatalogs++;
  return DIPPER_OK;
}

static int add_database(dp_catalog *c, const char *catalog, const char *name, const char *comment,
                        bool is_default) {
  int k = catalog_slot(c, catalog);
  if (k < 0) return DIPPER_NAME;
  dp_database_def *db = dp_arena_calloc(c->arena, 1, sizeof *db);
  if (!db) return DIPPER_NOMEM;
  db->catalog = c->catalogs[k];
  db->is_default = is_default;
  db->name = dp_arena_strdup(c->arena, name);
  db->comment = comment ? dp_arena_strdup(c->arena, comment) : NULL;
  if (!db->name || (comment && !db->comment) ||
      dp_arena_grow_i(c->arena, &c->databases, &c->databases_cap, c->ndatabases + 1,
                      sizeof *c->databases, 4))
    return DIPPER_NOMEM;
  int at = 0;
  while (at < c->ndatabases) {
    const dp_database_def *o = c->databases[at];
    int cmp = dp_catalog_name_cmp(o->catalog, db->catalog);
    if (cmp > 0 || (cmp == 0 && dp_catalog_name_cmp(o->name, name) > 0)) break;
    at++;
  }
  memmove(c->databases + at + 1, c->databases + at,
          (size_t)(c->ndatabases - at) * sizeof *c->databases);
  c->databases[at] = db;
  c->ndatabases++;
  return DIPPER_OK;
}

int dp_catalog_init_namespaces(dp_catalog *c) {
  int rc = add_catalog(c, DP_DEFAULT_CATALOG);
  if (rc == DIPPER_OK) rc = add_database(c, DP_DEFAULT_CATALOG, DP_DEFAULT_DATABASE, NULL, true);
  if (rc != DIPPER_OK) return rc;
  c->cur_catalog = c->catalogs[0];
  c->cur_database = c->databases[0]->name;
  return DIPPER_OK;
}

const char *dp_catalog_current_catalog(const dp_catalog *c) { return c ? c->cur_catalog : NULL; }
const char *dp_catalog_current_database(const dp_catalog *c) { return c ? c->cur_database : NULL; }

bool dp_catalog_has_catalog(const dp_catalog *c, const char *catalog) {
  return c && catalog && catalog_slot(c, catalog) >= 0;
}

bool dp_catalog_has_database(const dp_catalog *c, const char *catalog, const char *database) {
  return c && catalog && database && database_slot(c, catalog, database) >= 0;
}

const char *dp_catalog_catalog_at(const dp_catalog *c, int i) {
  return c && i >= 0 && i < c->ncatalogs ? c->catalogs[i] : NULL;
}

const char *dp_catalog_database_at(const dp_catalog *c, const char *catalog, int i) {
  for (int k = 0; c && catalog && k < c->ndatabases; k++)
    if (name_eq(c->databases[k]->catalog, catalog) && i-- == 0) return c->databases[k]->name;
  return NULL;
}

/* ---- names ---- */

static int unknown_catalog(const dp_catalog *c, dp_diags *d, const dp_ast_ident *id) {
  return err(d, DIPPER_NAME, id->span,
             "catalog `%s` does not exist (SHOW CATALOGS lists them; the session starts in `%s`)",
             id->name, c->catalogs[0]);
}

int dp_catalog_resolve(const dp_catalog *c, dp_diags *d, const dp_ast_name *n, dp_qname *out) {
  memset(out, 0, sizeof *out);
  if (!c || !n || n->n < 1) return DIPPER_MISUSE;
  if (n->n > 3)
    return err(d, DIPPER_NAME, n->span,
               "`%s` has %d parts; a table is named t, database.t or catalog.database.t",
               n->parts[n->n - 1].name, n->n);
  out->name = n->parts[n->n - 1].name;
  out->catalog = c->cur_catalog;
  out->database = c->cur_database;
  if (n->n == 3) {
    int k = catalog_slot(c, n->parts[0].name);
    if (k < 0) return unknown_catalog(c, d, &n->parts[0]);
    out->catalog = c->catalogs[k];
  }
  if (n->n >= 2) {
    const dp_ast_ident *db = &n->parts[n->n - 2];
    int k = database_slot(c, out->catalog, db->name);
    if (k < 0)
      return err(d, DIPPER_NAME, db->span,
                 "database `%s` does not exist in catalog `%s` (SHOW DATABASES lists them; "
                 "CREATE DATABASE %s makes it)",
                 db->name, out->catalog, db->name);
    out->database = c->databases[k]->name;
  }
  return DIPPER_OK;
}

/* ---- CREATE / DROP ---- */

/* CREATE CATALOG c WITH ('type' = 'generic_in_memory' [, 'default-database' = 'db']) */
static int create_catalog(dp_catalog *c, dp_diags *d, const dp_ast_namespace *ns) {
  const dp_ast_ident *id = &ns->name.parts[0];
  if (catalog_slot(c, id->name) >= 0) {
    if (ns->if_not_exists) return DIPPER_OK;
    return err(d, DIPPER_DUPLICATE, id->span,
               "catalog `%s` already exists; write CREATE CATALOG IF NOT EXISTS to keep it",
               id->name);
  }
  const char *type = NULL, *dflt = "default";
  for (int i = 0; i < ns->options.n; i++) {
    const dp_ast_option *o = &ns->options.items[i];
    if (!strcmp(o->key, "type")) type = o->value;
    else if (!strcmp(o->key, "default-database")) dflt = o->value;
    else
      return err(d, DIPPER_OPTION, o->span,
                 "CREATE CATALOG takes 'type' and 'default-database', not '%s'", o->key);
  }
  if (!type)
    return err(d, DIPPER_OPTION, ns->options.span.line ? ns->options.span : id->span,
               "CREATE CATALOG needs 'type' = 'generic_in_memory'");
  if (strcmp(type, "generic_in_memory") != 0)
    return err(d, DIPPER_UNSUPPORTED, ns->options.span,
               "catalog type '%s' is not supported: dipper keeps its catalogs in the session, as "
               "Flink's 'generic_in_memory' (a Hive or JDBC catalog would need that server); "
               "write 'type' = 'generic_in_memory'",
               type);
  if (!*dflt)
    return err(d, DIPPER_OPTION, ns->options.span, "'default-database' needs a database name");
  int rc = add_catalog(c, id->name);
  if (rc == DIPPER_OK) rc = add_database(c, id->name, dflt, NULL, true);
  return rc;
}

int dp_catalog_create_namespace(dp_catalog *c, dp_diags *d, const dp_ast_stmt *s) {
  const dp_ast_namespace *ns = &s->u.namespace_;
  if (s->kind == DP_AS_CREATE_CATALOG) return create_catalog(c, d, ns);
  const dp_ast_name *n = &ns->name;
  const dp_ast_ident *id = &n->parts[n->n - 1];
  const char *catalog = c->cur_catalog;
  if (n->n == 2) {
    int k = catalog_slot(c, n->parts[0].name);
    if (k < 0) return unknown_catalog(c, d, &n->parts[0]);
    catalog = c->catalogs[k];
  }
  if (ns->options.n > 0)
    return err(d, DIPPER_UNSUPPORTED, ns->options.span,
               "database properties (WITH (...)) are not kept by dipper; leave them out");
  if (database_slot(c, catalog, id->name) >= 0) {
    if (ns->if_not_exists) return DIPPER_OK;
    return err(d, DIPPER_DUPLICATE, id->span,
               "database `%s` already exists in catalog `%s`; write CREATE DATABASE IF NOT EXISTS "
               "to keep it",
               id->name, catalog);
  }
  return add_database(c, catalog, id->name, ns->comment, false);
}

/* The tables and views of a database (all of a catalog's when db is NULL)
** leave the index. */
static void drop_contents(dp_catalog *c, const char *catalog, const char *db) {
  int n = 0;
  for (int i = 0; i < c->ntables; i++) {
    const dp_table_def *t = c->tables[i];
    if (!(name_eq(t->catalog_name, catalog) && (!db || name_eq(t->database_name, db))))
      c->tables[n++] = c->tables[i];
  }
  c->ntables = n;
  n = 0;
  for (int i = 0; i < c->nviews; i++) {
    const dp_view_def *v = c->views[i];
    if (!(name_eq(v->catalog_name, catalog) && (!db || name_eq(v->database_name, db))))
      c->views[n++] = c->views[i];
  }
  c->nviews = n;
}

static void remove_database(dp_catalog *c, int k) {
  memmove(c->databases + k, c->databases + k + 1,
          (size_t)(c->ndatabases - k - 1) * sizeof *c->databases);
  c->ndatabases--;
}

static int drop_catalog(dp_catalog *c, dp_diags *d, const dp_ast_drop *dr) {
  const dp_ast_ident *id = &dr->name.parts[dr->name.n - 1];
  int k = dr->name.n == 1 ? catalog_slot(c, id->name) : -1;
  if (k < 0) return dr->if_exists ? DIPPER_OK : unknown_catalog(c, d, id);
  if (name_eq(c->catalogs[k], c->cur_catalog))
    return err(d, DIPPER_NAME, id->span,
               "catalog `%s` is the current catalog and cannot be dropped; USE CATALOG another "
               "one first",
               id->name);
  drop_contents(c, c->catalogs[k], NULL);
  for (int i = c->ndatabases - 1; i >= 0; i--)
    if (name_eq(c->databases[i]->catalog, c->catalogs[k])) remove_database(c, i);
  memmove(c->catalogs + k, c->catalogs + k + 1, (size_t)(c->ncatalogs - k - 1) * sizeof *c->catalogs);
  c->ncatalogs--;
  return DIPPER_OK;
}

int dp_catalog_drop_namespace(dp_catalog *c, dp_diags *d, const dp_ast_drop *dr) {
  if (dr->what == 'C') return drop_catalog(c, d, dr);
  const dp_ast_name *n = &dr->name;
  const dp_ast_ident *id = &n->parts[n->n - 1];
  const char *catalog = c->cur_catalog;
  if (n->n > 2)
    return err(d, DIPPER_NAME, n->span, "a database is named [catalog.]database");
  if (n->n == 2) {
    int k = catalog_slot(c, n->parts[0].name);
    if (k < 0) return dr->if_exists ? DIPPER_OK : unknown_catalog(c, d, &n->parts[0]);
    catalog = c->catalogs[k];
  }
  int k = database_slot(c, catalog, id->name);
  if (k < 0) {
    if (dr->if_exists) return DIPPER_OK;
    return err(d, DIPPER_NAME, id->span,
               "database `%s` does not exist in catalog `%s` (write DROP DATABASE IF EXISTS to "
               "ignore a missing one)",
               id->name, catalog);
  }
  const dp_database_def *db = c->databases[k];
  if (dp_catalog_is_current(c, db->catalog, db->name))
    return err(d, DIPPER_NAME, id->span,
               "database `%s` is the current database and cannot be dropped; USE another one "
               "first",
               id->name);
  int held = 0;
  for (int i = 0; i < c->ntables; i++)
    held += name_eq(c->tables[i]->catalog_name, db->catalog) && name_eq(c->tables[i]->database_name, db->name);
  for (int i = 0; i < c->nviews; i++)
    held += name_eq(c->views[i]->catalog_name, db->catalog) && name_eq(c->views[i]->database_name, db->name);
  if (held > 0 && !dr->cascade)
    return err(d, DIPPER_NAME, id->span,
               "database `%s` is not empty (%d table%s and view%s): DROP DATABASE %s CASCADE "
               "drops them too (RESTRICT, the default, keeps a database that holds any)",
               id->name, held, held == 1 ? "" : "s", held == 1 ? "" : "s", id->name);
  drop_contents(c, db->catalog, db->name);
  remove_database(c, k);
  return DIPPER_OK;
}

/* ---- USE ---- */

int dp_catalog_use(dp_catalog *c, dp_diags *d, const dp_ast_stmt *s) {
  const dp_ast_name *n = &s->u.use.name;
  if (n->n < 1) return DIPPER_MISUSE;
  if (s->u.use.catalog) {
    int k = catalog_slot(c, n->parts[0].name);
    if (k < 0) return unknown_catalog(c, d, &n->parts[0]);
    const char *db = dp_catalog_database_at(c, c->catalogs[k], 0);
    /* the catalog's default database: the one it was made with, when it is
       still there, else its first */
    for (int i = 0; db && i < c->ndatabases; i++)
      if (name_eq(c->databases[i]->catalog, c->catalogs[k]) && c->databases[i]->is_default)
        db = c->databases[i]->name;
    if (!db)
      return err(d, DIPPER_NAME, n->parts[0].span,
                 "catalog `%s` has no database to use; CREATE DATABASE %s.db first", c->catalogs[k],
                 c->catalogs[k]);
    c->cur_catalog = c->catalogs[k];
    c->cur_database = db;
    return DIPPER_OK;
  }
  const char *catalog = c->cur_catalog;
  if (n->n == 2) {
    int k = catalog_slot(c, n->parts[0].name);
    if (k < 0) return unknown_catalog(c, d, &n->parts[0]);
    catalog = c->catalogs[k];
  }
  const dp_ast_ident *id = &n->parts[n->n - 1];
  int k = database_slot(c, catalog, id->name);
  if (k < 0) {
    if (n->n == 1 && catalog_slot(c, id->name) >= 0)
      return err(d, DIPPER_NAME, id->span,
                 "`%s` is a catalog, not a database of `%s`: write USE CATALOG %s", id->name,
                 catalog, id->name);
    return err(d, DIPPER_NAME, id->span,
               "database `%s` does not exist in catalog `%s` (SHOW DATABASES lists them)", id->name,
               catalog);
  }
  c->cur_catalog = c->databases[k]->catalog;
  c->cur_database = c->databases[k]->name;
  return DIPPER_OK;
}

/* ---- ALTER TABLE ---- */

/* SET: each key replaced or added; RESET: each key removed. */
static int alter_options(dp_catalog *c, dp_diags *d, const dp_ast_alter *al, dp_table_def *t) {
  int cap = t->noptions + al->options.n;
  dp_option *opts = dp_arena_calloc(c->arena, (size_t)(cap ? cap : 1), sizeof *opts);
  if (!opts) return DIPPER_NOMEM;
  int n = 0;
  for (int i = 0; i < t->noptions; i++) {
    bool gone = false;
    for (int k = 0; k < al->nkeys; k++) gone |= !strcmp(al->keys[k], t->options[i].key);
    if (!gone) opts[n++] = t->options[i];
  }
  for (int k = 0; k < al->nkeys; k++) {
    bool had = false;
    for (int i = 0; i < t->noptions; i++) had |= !strcmp(al->keys[k], t->options[i].key);
    if (!had)
      return err(d, DIPPER_OPTION, al->key_spans[k],
                 "table `%s` has no option '%s' to reset (SHOW CREATE TABLE %s shows its options)",
                 t->name, al->keys[k], t->name);
    if (!strcmp(al->keys[k], "connector"))
      return err(d, DIPPER_OPTION, al->key_spans[k],
                 "'connector' cannot be reset: a table needs one; SET it to another connector");
  }
  for (int j = 0; j < al->options.n; j++) {
    const dp_ast_option *o = &al->options.items[j];
    dp_option opt = {dp_arena_strdup(c->arena, o->key), dp_arena_strdup(c->arena, o->value),
                     o->span, o->value_span};
    if (!opt.key || !opt.value) return DIPPER_NOMEM;
    int at = n;
    for (int i = 0; i < n; i++)
      if (!strcmp(opts[i].key, o->key)) at = i;
    opts[at] = opt;
    if (at == n) n++;
  }
  t->options = opts;
  t->noptions = n;
  int rc = dp_connector_map_legacy(c->arena, d, t);
  return rc == DIPPER_OK ? dp_catalog_finish_table(c, d, t) : rc;
}

int dp_catalog_alter_table(dp_catalog *c, dp_diags *d, const dp_ast_alter *al) {
  const dp_ast_ident *id = &al->name.parts[al->name.n - 1];
  dp_qname q;
  int rc = dp_catalog_resolve(c, d, &al->name, &q);
  if (rc != DIPPER_OK) return al->if_exists && al->name.n > 1 ? DIPPER_OK : rc;
  const dp_table_def *old = dp_catalog_table_in(c, &q);
  if (!old) {
    if (dp_catalog_view_in(c, &q))
      return err(d, DIPPER_NAME, id->span,
                 "`%s` is a view; ALTER TABLE changes tables (drop and create the view again)",
                 id->name);
    if (al->if_exists) return DIPPER_OK;
    const char *best = dp_catalog_suggest(c, id->name);
    return err(d, DIPPER_NAME, id->span, "table `%s` does not exist%s%s%s", id->name,
               best ? "; did you mean `" : "", best ? best : "", best ? "`?" : "");
  }
  /* A new definition: plans compiled before keep the old one. */
  dp_table_def *t = dp_arena_alloc(c->arena, sizeof *t);
  if (!t) return DIPPER_NOMEM;
  *t = *old;
  if (al->action == 'N') {
    const dp_ast_ident *nn = &al->new_name.parts[al->new_name.n - 1];
    dp_qname to;
    if ((rc = dp_catalog_resolve(c, d, &al->new_name, &to)) != DIPPER_OK) return rc;
    if (!name_eq(to.catalog, q.catalog) || !name_eq(to.database, q.database))
      return err(d, DIPPER_UNSUPPORTED, al->new_name.span,
                 "RENAME TO keeps a table in its database (`%s`.`%s`); a table cannot move to "
                 "another database",
                 q.catalog, q.database);
    if (dp_catalog_table_in(c, &to) || dp_catalog_view_in(c, &to))
      return err(d, DIPPER_DUPLICATE, nn->span, "a table or view named `%s` already exists",
                 nn->name);
    if (!(t->name = dp_arena_strdup(c->arena, nn->name))) return DIPPER_NOMEM;
  } else if ((rc = alter_options(c, d, al, t)) != DIPPER_OK) {
    return rc;
  }
  dp_catalog_drop_in(c, 'T', &q);
  return dp_catalog_add_table(c, t);
}
