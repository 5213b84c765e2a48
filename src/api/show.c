/*
** show.c — the statements that answer with rows but run nothing: SHOW
** TABLES / VIEWS / FUNCTIONS, DESCRIBE, SET with no key, and EXPLAIN.
**
** Owns: what each of them answers, as a small table of text taken when the
** statement compiles (so a SHOW TABLES between two CREATE TABLEs lists what
** exists at that point of the script, as in a SQL client), and that table
** turned into the rows dipper_execute hands out.  Does not own: the catalog
** (plan/catalog.c), the plan text (plan/explain.c), printing (the caller).
**
** The answers, column by column (the names are the stream's column names):
**   SHOW TABLES      table_name          tables and views, sorted (Flink lists both)
**   SHOW VIEWS       view_name           sorted
**                    (both of the current database, or of FROM|IN [catalog.]db)
**   SHOW DATABASES   database name       of the current catalog, or of FROM|IN catalog
**   SHOW CATALOGS    catalog name
**   SHOW CURRENT CATALOG / DATABASE      one row: current catalog name / current database name
**   (SHOW .. [NOT] LIKE|ILIKE 'p' keeps the rows whose first column matches the pattern)
**   SHOW FUNCTIONS   function_name, kind, signature   the user's functions (SQL, C, Java:
**                    the signature ends with which), then the built-ins, each by name
**                    (SHOW USER FUNCTIONS: the user's only);
**                    operators (+, AND, LIKE) are not functions one calls by name
**   DESCRIBE t       name, type, null, key, extras, watermark  (Flink's DESCRIBE): type
**                    with *ROWTIME* / *PROCTIME* on time attributes, null a BOOLEAN,
**                    key PRI(a, b) on key columns, extras the computed column's
**                    expression or METADATA FROM 'k' [VIRTUAL], watermark its
**                    expression on the watermark column; a view gives name, type,
**                    null (NULL elsewhere)
**   SET              key, value          the session options set now, in order
**   EXPLAIN stmt     plan                one row per line of dipper_explain's text
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/dipper_int.h"
#include "core/buf.h"
#include "core/grow.h"
#include "core/vector.h"
#include "plan/binder.h"
#include "plan/explain.h"
#include "plan/functions.h"
#include "plan/udf.h"

/* A table under construction: cells appended row by row (malloc'd while it
** grows, moved into the arena by finish). */
typedef struct rows_builder {
  dp_arena *a;
  int ncols;
  const char *const *names;
  const bool *boolean;
  const char **cells;
  int ncells, cap;
  bool oom;
} rows_builder;

/* Append one cell, copied into the arena; NULL is SQL NULL. */
static void cell(rows_builder *rb, const char *text) {
  if (rb->oom) return;
  if (dp_grow_i(&rb->cells, &rb->cap, rb->ncells + 1, sizeof *rb->cells, 32)) {
    rb->oom = true;
    return;
  }
  const char *copy = text ? dp_arena_strdup(rb->a, text) : NULL;
  if (text && !copy) {
    rb->oom = true;
    return;
  }
  rb->cells[rb->ncells++] = copy;
}

/* The cell of a dp_buf: its text, or "" (an empty buffer). */
static void cell_buf(rows_builder *rb, dp_buf *b) {
  if (b->oom) rb->oom = true;
  cell(rb, dp_buf_cstr(b));
}

static int finish(rows_builder *rb, const dp_api_rows **out) {
  dp_api_rows *r = rb->oom ? NULL : dp_arena_calloc(rb->a, 1, sizeof *r);
  const char **names = r ? dp_arena_calloc(rb->a, (size_t)rb->ncols, sizeof *names) : NULL;
  bool *boolean = names ? dp_arena_calloc(rb->a, (size_t)rb->ncols, sizeof *boolean) : NULL;
  const char **cells =
      boolean && rb->ncells ? dp_arena_calloc(rb->a, (size_t)rb->ncells, sizeof *cells) : NULL;
  if (!boolean || (rb->ncells && !cells)) {
    free(rb->cells);
    return DIPPER_NOMEM;
  }
  for (int i = 0; i < rb->ncols; i++) {
    names[i] = rb->names[i];
    boolean[i] = rb->boolean && rb->boolean[i];
  }
  if (rb->ncells) memcpy(cells, rb->cells, (size_t)rb->ncells * sizeof *cells);
  free(rb->cells);
  r->ncols = rb->ncols;
  r->names = names;
  r->boolean = boolean;
  r->nrows = rb->ncells / rb->ncols;
  r->cells = cells;
  *out = r;
  return DIPPER_OK;
}

static int cmp_name(const void *x, const void *y) {
  return strcasecmp(*(const char *const *)x, *(const char *const *)y);
}

static bool in_db(const char *cat, const char *db, const dp_qname *q) {
  return !strcasecmp(cat, q->catalog) && !strcasecmp(db, q->database);
}

/* SHOW TABLES (tables and views) or SHOW VIEWS of database q: the names, sorted. */
static void show_relations(rows_builder *rb, const dp_catalog *cat, bool tables, const dp_qname *q) {
  int nt = tables ? dp_catalog_table_count(cat) : 0, nv = dp_catalog_view_count(cat);
  const char **names = malloc((size_t)(nt + nv + 1) * sizeof *names);
  if (!names) {
    rb->oom = true;
    return;
  }
  int n = 0;
  for (int i = 0; i < nt; i++) {
    const dp_table_def *t = dp_catalog_table_at(cat, i);
    if (in_db(t->catalog_name, t->database_name, q)) names[n++] = t->name;
  }
  for (int i = 0; i < nv; i++) {
    const dp_view_def *v = dp_catalog_view_at(cat, i);
    if (in_db(v->catalog_name, v->database_name, q)) names[n++] = v->name;
  }
  qsort(names, (size_t)n, sizeof *names, cmp_name);
  for (int i = 0; i < n; i++) cell(rb, names[i]);
  free(names);
}

static int cmp_func(const void *x, const void *y) {
  return strcmp((*(const dp_func *const *)x)->name, (*(const dp_func *const *)y)->name);
}

static const char *kind_word(dp_func_kind k) {
  return k == DP_FN_AGGREGATE ? "aggregate" : k == DP_FN_WINDOW ? "window" : "scalar";
}

/* User-defined functions come first, by name; the signature says which kind. */
static void show_user_functions(rows_builder *rb, const dp_catalog *cat) {
  for (int i = 0; i < dp_catalog_function_count(cat); i++) {
    const dp_udf_def *f = dp_catalog_function_at(cat, i);
    const char *sig;
    const char *kind = "scalar";
    if (f->kind == DP_UDF_C) {
      sig = dp_arena_printf(rb->a, "%s (C)", f->cfunc->fn.signature);
      kind = kind_word(f->cfunc->fn.kind);
    } else if (f->kind == DP_UDF_JAVA) {
      if (f->aggregate) kind = "aggregate";
      sig = dp_arena_printf(rb->a, "%s AS '%s'%s%s%s (Java)",
                            f->jfn ? f->jfn->signature : f->name, f->class_name,
                            f->jar ? " USING JAR '" : "", f->jar ? f->jar : "", f->jar ? "'" : "");
    } else {
      const char *p = dp_arena_printf(rb->a, "%s(", f->name);
      for (int k = 0; p && k < f->nparams; k++)
        p = dp_arena_printf(rb->a, "%s%s%s %s", p, k ? ", " : "", f->params[k],
                            dp_type_format(rb->a, f->param_types[k]));
      sig = p ? dp_arena_printf(rb->a, "%s) RETURNS %s (SQL)", p, dp_type_format(rb->a, f->returns))
              : NULL;
    }
    if (!sig) {
      rb->oom = true;
      return;
    }
    cell(rb, f->name);
    cell(rb, kind);
    cell(rb, sig);
  }
}

static void show_functions(rows_builder *rb) {
  int n = 0;
  while (dp_func_at(n)) n++;
  const dp_func **fns = malloc((size_t)(n + 1) * sizeof *fns);
  if (!fns) {
    rb->oom = true;
    return;
  }
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!dp_func_at(i)->op) fns[k++] = dp_func_at(i);
  qsort(fns, (size_t)k, sizeof *fns, cmp_func);
  for (int i = 0; i < k; i++) {
    cell(rb, fns[i]->name);
    cell(rb, kind_word(fns[i]->kind));
    cell(rb, fns[i]->signature);
  }
  free(fns);
}

/* The type without its NOT NULL (the `null` column says it). */
static const char *type_text(dp_arena *a, const dp_type *t) {
  const dp_type *nullable = t && t->not_null ? dp_type_with_nullability(a, t, false) : t;
  return nullable ? dp_type_format(a, nullable) : NULL;
}

static void describe_table(rows_builder *rb, const dp_table_def *t) {
  dp_buf pk = DP_BUF_INIT;
  if (t->npk > 0) {
    dp_buf_puts(&pk, "PRI(");
    for (int k = 0; k < t->npk; k++)
      dp_buf_printf(&pk, "%s%s", k ? ", " : "", t->schema.cols[t->pk[k]].name);
    dp_buf_putc(&pk, ')');
  }
  for (int i = 0; i < t->schema.ncols; i++) {
    const dp_field *f = &t->schema.cols[i];
    const dp_column_def *c = &t->cols[i];
    dp_buf b = DP_BUF_INIT;
    cell(rb, f->name);
    const char *type = type_text(rb->a, f->type);
    dp_buf_puts(&b, type ? type : "?");
    if (i == t->watermark_col) dp_buf_puts(&b, " *ROWTIME*");
    else if (c->kind == DP_CK_COMPUTED && c->proctime) dp_buf_puts(&b, " *PROCTIME*");
    cell_buf(rb, &b);
    dp_buf_free(&b);
    cell(rb, f->type && f->type->not_null ? "false" : "true");
    bool key = false;
    for (int k = 0; k < t->npk; k++) key |= t->pk[k] == i;
    if (key) cell_buf(rb, &pk);
    else cell(rb, NULL);
    if (c->kind == DP_CK_COMPUTED && c->expr) {
      dp_buf_puts(&b, "AS ");
      dp_explain_expr(&b, c->expr, &t->schema);
      cell_buf(rb, &b);
    } else if (c->kind == DP_CK_METADATA) {
      dp_buf_puts(&b, "METADATA");
      if (c->metadata_key) dp_buf_printf(&b, " FROM '%s'", c->metadata_key);
      if (c->is_virtual) dp_buf_puts(&b, " VIRTUAL");
      cell_buf(rb, &b);
    } else {
      cell(rb, NULL);
    }
    dp_buf_free(&b);
    if (i == t->watermark_col && t->watermark_expr) {
      dp_explain_expr(&b, t->watermark_expr, &t->schema);
      cell_buf(rb, &b);
      dp_buf_free(&b);
    } else {
      cell(rb, NULL);
    }
  }
  dp_buf_free(&pk);
}

/* An option whose value is a secret: shown as '******' (Flink masks the same
** way), so SHOW CREATE TABLE can be pasted into a ticket. */
static bool secret_option(const char *key) {
  static const char *const words[] = {"secret", "password", "token", "sasl.jaas.config"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    size_t n = strlen(words[i]);
    for (const char *p = key; *p; p++)
      if (strncasecmp(p, words[i], n) == 0) return true;
  }
  return false;
}

static void put_quoted(dp_buf *b, char q, const char *s) {
  dp_buf_putc(b, q);
  for (; *s; s++) {
    if (*s == q) dp_buf_putc(b, q);
    dp_buf_putc(b, *s);
  }
  dp_buf_putc(b, q);
}

/* SHOW CREATE TABLE: the definition the catalog holds, as a CREATE TABLE that
** compiles to it again (types as dipper prints them, computed columns and the
** watermark as EXPLAIN spells expressions, secrets masked). */
static void show_create_table(rows_builder *rb, const dp_table_def *t) {
  dp_buf b = DP_BUF_INIT;
  dp_buf_printf(&b, "CREATE %sTABLE ", t->temporary ? "TEMPORARY " : "");
  put_quoted(&b, '`', t->name);
  dp_buf_puts(&b, " (\n");
  for (int i = 0; i < t->schema.ncols; i++) {
    const dp_field *f = &t->schema.cols[i];
    const dp_column_def *c = &t->cols[i];
    dp_buf_puts(&b, "  ");
    put_quoted(&b, '`', f->name);
    if (c->kind == DP_CK_COMPUTED && c->expr) {
      dp_buf_puts(&b, " AS ");
      dp_explain_expr(&b, c->expr, &t->schema);
    } else {
      char *type = dp_type_format(rb->a, f->type);
      dp_buf_printf(&b, " %s", type ? type : "?");
      if (!type) rb->oom = true;
      if (c->kind == DP_CK_METADATA) {
        dp_buf_puts(&b, " METADATA");
        if (c->metadata_key) {
          dp_buf_puts(&b, " FROM ");
          put_quoted(&b, '\'', c->metadata_key);
        }
        if (c->is_virtual) dp_buf_puts(&b, " VIRTUAL");
      }
    }
    dp_buf_puts(&b, i + 1 < t->schema.ncols || t->watermark_col >= 0 || t->npk > 0 ? ",\n" : "\n");
  }
  if (t->watermark_col >= 0 && t->watermark_col < t->schema.ncols) {
    dp_buf_puts(&b, "  WATERMARK FOR ");
    put_quoted(&b, '`', t->schema.cols[t->watermark_col].name);
    dp_buf_puts(&b, " AS ");
    if (t->watermark_expr) {
      dp_explain_expr(&b, t->watermark_expr, &t->schema);
    } else {
      put_quoted(&b, '`', t->schema.cols[t->watermark_col].name);
    }
    dp_buf_puts(&b, t->npk > 0 ? ",\n" : "\n");
  }
  if (t->npk > 0) {
    dp_buf_puts(&b, "  PRIMARY KEY (");
    for (int k = 0; k < t->npk; k++) {
      if (k) dp_buf_puts(&b, ", ");
      put_quoted(&b, '`', t->schema.cols[t->pk[k]].name);
    }
    dp_buf_puts(&b, ") NOT ENFORCED\n");
  }
  dp_buf_puts(&b, ")");
  if (t->npartition > 0) {
    dp_buf_puts(&b, " PARTITIONED BY (");
    for (int k = 0; k < t->npartition; k++) {
      if (k) dp_buf_puts(&b, ", ");
      put_quoted(&b, '`', t->schema.cols[t->partition[k]].name);
    }
    dp_buf_putc(&b, ')');
  }
  if (t->noptions > 0) {
    dp_buf_puts(&b, " WITH (\n");
    for (int i = 0; i < t->noptions; i++) {
      const dp_option *o = &t->options[i];
      dp_buf_puts(&b, "  ");
      put_quoted(&b, '\'', o->key);
      dp_buf_puts(&b, " = ");
      put_quoted(&b, '\'', secret_option(o->key) ? "******" : o->value ? o->value : "");
      dp_buf_puts(&b, i + 1 < t->noptions ? ",\n" : "\n");
    }
    dp_buf_puts(&b, ")");
  }
  cell_buf(rb, &b);
  dp_buf_free(&b);
}

/* Each line of an EXPLAIN text is a row. */
static void explain_rows(rows_builder *rb, const dp_query_plan *plan) {
  dp_buf b = DP_BUF_INIT;
  dp_explain_plan(&b, plan, DIPPER_EXPLAIN_DEFAULT);
  if (b.oom) rb->oom = true;
  const char *text = dp_buf_cstr(&b);
  while (*text) {
    const char *eol = strchr(text, '\n');
    size_t n = eol ? (size_t)(eol - text) : strlen(text);
    char *line = dp_arena_strndup(rb->a, text, n);
    if (!line) rb->oom = true;
    else cell(rb, line);
    text += n + (eol ? 1 : 0);
  }
  dp_buf_free(&b);
}

/* SQL LIKE: '%' any run, '_' one character, '\\' escapes the next; `fold`
** for ILIKE.  Backtracks only to the last '%', so linear in practice. */
static bool like_match(const char *str, const char *pat, bool fold) {
  const char *star = NULL, *resume = NULL;
  while (*str) {
    char pc = *pat, sc = *str;
    bool esc = pc == '\\' && pat[1];
    if (esc) pc = pat[1];
    if (fold) {
      pc = (char)(pc >= 'A' && pc <= 'Z' ? pc + 32 : pc);
      sc = (char)(sc >= 'A' && sc <= 'Z' ? sc + 32 : sc);
    }
    if (!esc && pc == '%') {
      star = ++pat;
      resume = str;
    } else if (pc && ((!esc && pc == '_') || pc == sc)) {
      pat += esc ? 2 : 1;
      str++;
    } else if (star) {
      pat = star;
      str = ++resume;
    } else {
      return false;
    }
  }
  while (*pat == '%') pat++;
  return *pat == '\0';
}

/* SHOW .. [NOT] LIKE|ILIKE 'p': keep the rows whose first column matches. */
static void filter_rows(rows_builder *rb, const dp_ast_stmt *s) {
  if (!s->u.show.like || rb->oom) return;
  int n = 0, nrows = rb->ncells / rb->ncols;
  for (int r = 0; r < nrows; r++) {
    const char **row = rb->cells + r * rb->ncols;
    bool hit = row[0] && like_match(row[0], s->u.show.like, s->u.show.ilike);
    if (hit == s->u.show.not_like) continue;
    memmove(rb->cells + n * rb->ncols, row, (size_t)rb->ncols * sizeof *row);
    n++;
  }
  rb->ncells = n * rb->ncols;
}

/* The namespace of SHOW TABLES|VIEWS|FUNCTIONS [FROM db] or SHOW DATABASES
** [FROM catalog]. */
static int show_target(dp_diags *d, const dp_catalog *cat, const dp_ast_stmt *s, dp_qname *q) {
  const dp_ast_name *n = &s->u.show.name;
  q->catalog = dp_catalog_current_catalog(cat);
  q->database = dp_catalog_current_database(cat);
  q->name = NULL;
  if (n->n == 0) return DIPPER_OK;
  if (s->u.show.what == 'D') {
    for (int i = 0; dp_catalog_catalog_at(cat, i); i++)
      if (!strcasecmp(dp_catalog_catalog_at(cat, i), n->parts[0].name)) {
        q->catalog = dp_catalog_catalog_at(cat, i);
        return DIPPER_OK;
      }
    return dp_error(d, DIPPER_NAME, n->span, "catalog `%s` does not exist (SHOW CATALOGS lists them)",
                    n->parts[0].name);
  }
  /* [catalog.]database: resolve it as the database part of a table name */
  dp_ast_ident parts[3];
  memset(parts, 0, sizeof parts);
  dp_ast_name tn = {n->n + 1, parts, n->span};
  for (int i = 0; i < n->n; i++) parts[i] = n->parts[i];
  parts[n->n].name = "";
  return dp_catalog_resolve(cat, d, &tn, q);
}

static void show_namespaces(rows_builder *rb, const dp_catalog *cat, const dp_ast_stmt *s,
                            const dp_qname *q) {
  switch (s->u.show.what) {
  case 'K':
    for (int i = 0; dp_catalog_catalog_at(cat, i); i++) cell(rb, dp_catalog_catalog_at(cat, i));
    break;
  case 'D':
    for (int i = 0; dp_catalog_database_at(cat, q->catalog, i); i++)
      cell(rb, dp_catalog_database_at(cat, q->catalog, i));
    break;
  case 'c': cell(rb, dp_catalog_current_catalog(cat)); break;
  default: cell(rb, dp_catalog_current_database(cat)); break;
  }
}

/* SHOW CREATE TABLE|VIEW */
static int show_create(rows_builder *rb, dp_diags *d, const dp_catalog *cat, const dp_ast_stmt *s) {
  const dp_ast_name *n = &s->u.show.name;
  const char *name = n->n > 0 ? n->parts[n->n - 1].name : "";
  dp_span at = n->n > 0 ? n->parts[n->n - 1].span : s->span;
  dp_qname q;
  int rc = dp_catalog_resolve(cat, d, n, &q);
  if (rc != DIPPER_OK) return rc;
  const dp_table_def *t = s->u.show.what == 'C' ? dp_catalog_table_in(cat, &q) : NULL;
  const dp_view_def *v = s->u.show.what == 'W' ? dp_catalog_view_in(cat, &q) : NULL;
  if (t) {
    show_create_table(rb, t);
  } else if (v) {
    char *text = dp_arena_printf(rb->a, "CREATE %sVIEW `%s` AS %s", v->temporary ? "TEMPORARY " : "",
                                 v->name, v->text ? v->text : "");
    if (!text) rb->oom = true;
    else cell(rb, text);
  } else {
    bool table = s->u.show.what == 'C';
    const char *hint = table && dp_catalog_view_in(cat, &q)    ? ": it is a view; write SHOW CREATE VIEW"
                       : !table && dp_catalog_table_in(cat, &q) ? ": it is a table; write SHOW CREATE TABLE"
                       : table                                  ? "; SHOW TABLES lists the tables"
                                                                : "; SHOW VIEWS lists the views";
    return dp_error(d, DIPPER_NAME, at, "%s `%s` does not exist%s", table ? "table" : "view", name,
                    hint);
  }
  return DIPPER_OK;
}

int dp_api_stmt_rows(dp_arena *a, dp_diags *d, const dp_catalog *cat, const dp_ast_stmt *s,
                     const dp_query_plan *plan, const dp_api_rows **out) {
  *out = NULL;
  rows_builder rb;
  memset(&rb, 0, sizeof rb);
  rb.a = a;
  static const char *const relation[] = {"table_name"}, *const view[] = {"view_name"};
  static const char *const function[] = {"function_name", "kind", "signature"};
  static const char *const describe[] = {"name", "type", "null", "key", "extras", "watermark"};
  static const bool describe_bool[] = {false, false, true, false, false, false};
  static const char *const set[] = {"key", "value"}, *const explain[] = {"plan"};
  static const char *const create[] = {"statement"};
  static const char *const database[] = {"database name"}, *const catalog[] = {"catalog name"};
  static const char *const current_catalog[] = {"current catalog name"};
  static const char *const current_database[] = {"current database name"};
  switch (s->kind) {
  case DP_AS_SHOW: {
    int what = s->u.show.what;
    if (what == 'C' || what == 'W') {
      rb.ncols = 1;
      rb.names = create;
      int rc = show_create(&rb, d, cat, s);
      if (rc != DIPPER_OK) {
        free(rb.cells);
        return rc;
      }
      break;
    }
    dp_qname q;
    int rc = show_target(d, cat, s, &q);
    if (rc != DIPPER_OK) return rc;
    bool fn = what == 'F' || what == 'U';
    rb.ncols = fn ? 3 : 1;
    rb.names = fn ? function : what == 'V' ? view : what == 'D' ? database : what == 'K' ? catalog
             : what == 'c' ? current_catalog : what == 'd' ? current_database : relation;
    if (fn) {
      show_user_functions(&rb, cat);
      if (what == 'F') show_functions(&rb);
    } else if (what == 'T' || what == 'V') {
      show_relations(&rb, cat, what == 'T', &q);
    } else {
      show_namespaces(&rb, cat, s, &q);
    }
    filter_rows(&rb, s);
    break;
  }
  case DP_AS_DESCRIBE: {
    dp_qname q;
    int qrc = dp_catalog_resolve(cat, d, &s->u.describe, &q);
    if (qrc != DIPPER_OK) return qrc;
    rb.ncols = 6;
    rb.names = describe;
    rb.boolean = describe_bool;
    const dp_table_def *t = dp_catalog_table_in(cat, &q);
    const dp_view_def *v = t ? NULL : dp_catalog_view_in(cat, &q);
    if (t) {
      describe_table(&rb, t);
    } else if (v) {
      const dp_schema *schema = NULL;
      int rc = dp_bind_view_schema(a, d, cat, v, &schema);
      if (rc != DIPPER_OK) {
        free(rb.cells);
        return rc;
      }
      for (int i = 0; i < schema->ncols; i++) {
        const dp_type *type = schema->cols[i].type;
        cell(&rb, schema->cols[i].name);
        cell(&rb, type_text(a, type));
        cell(&rb, type && type->not_null ? "false" : "true");
        for (int k = 0; k < 3; k++) cell(&rb, NULL);
      }
    }
    break;
  }
  case DP_AS_SET:
    if (s->u.set.key) return DIPPER_OK;
    rb.ncols = 2;
    rb.names = set;
    for (int i = 0;; i++) {
      const char *key, *value;
      if (!dp_catalog_option_at(cat, i, &key, &value)) break;
      cell(&rb, key);
      cell(&rb, value);
    }
    break;
  case DP_AS_EXPLAIN:
    rb.ncols = 1;
    rb.names = explain;
    explain_rows(&rb, plan);
    break;
  default:
    return DIPPER_OK; /* no rows of its own */
  }
  return finish(&rb, out);
}

/* ---- the rows as the Arrow result of dipper_execute ---- */

int dp_api_rows_result(const dp_api_rows *r, dp_api_result *res) {
  memset(res, 0, sizeof *res);
  dp_arena *a = dp_arena_new(0);
  dp_schema *schema = a ? dp_schema_new(a, r->ncols) : NULL;
  if (!schema) {
    dp_arena_free(a);
    return DIPPER_NOMEM;
  }
  for (int c = 0; c < r->ncols; c++) {
    schema->cols[c].name = r->names[c];
    schema->cols[c].type = dp_type_of(r->boolean[c] ? DP_T_BOOLEAN : DP_T_STRING);
  }
  dp_batch *b = dp_batch_new(schema, r->nrows);
  int rc = b ? DIPPER_OK : DIPPER_NOMEM;
  for (int i = 0; rc == DIPPER_OK && i < r->nrows; i++)
    for (int c = 0; rc == DIPPER_OK && c < r->ncols; c++) {
      const char *v = r->cells[i * r->ncols + c];
      dp_vector *col = b->cols[c];
      if (!v) rc = dp_vector_append_null(col);
      else if (r->boolean[c]) rc = dp_vector_append_bool(col, strcmp(v, "true") == 0);
      else rc = dp_vector_append_str(col, v, strlen(v));
    }
  if (rc == DIPPER_OK) rc = dp_batch_sync(b);
  struct ArrowArray array = {0};
  if (rc == DIPPER_OK) rc = dp_batch_export(b, &res->schema, &array);
  if (rc == DIPPER_OK && r->nrows > 0) rc = dp_api_result_push(res, &array);
  else if (array.release) array.release(&array);
  dp_batch_free(b);
  dp_arena_free(a);
  if (rc != DIPPER_OK) dp_api_result_free(res);
  return rc;
}
