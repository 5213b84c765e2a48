/*
** binder.c — statements: the entry points of binder.h.
**
** Dispatches DDL, SET/RESET and DROP to the catalog; binds queries, INSERT
** (a SINK over the query, columns mapped and cast to the table's), statement
** sets and EXPLAIN; sets the statement's streaming flag and output mode.
** Expressions are bound in bind_expr.c, SELECT in bind_select.c, set operations in bind_query.c.
**
** Owns: nothing beyond the statement's arena.  Does not own: the catalog's
** definitions (catalog.c), the streaming properties (analyze.c).
*/
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "core/suggest.h"
#include "plan/binder_int.h"
#include "plan/udf.h"

/* ------------------------------------------------------------------ */
/* shared helpers                                                      */
/* ------------------------------------------------------------------ */

static int vbind_err(dp_binder *b, int code, dp_span span, const char *fmt, va_list ap) {
  char *msg = dp_arena_vprintf(b->d->arena ? b->d->arena : b->a, fmt, ap);
  dp_error(b->d, code, span, "%s", msg ? msg : "out of memory formatting a message");
  if (!b->first_error) b->first_error = code;
  return code;
}

bool dp_bind_out_of_memory(dp_binder *b) {
  if (!dp_arena_failed(b->a)) return false;
  if (b->first_error != DIPPER_NOMEM)
    dp_bind_err(b, DIPPER_NOMEM, (dp_span){0, 0, 0, 0}, "out of memory while binding");
  return true;
}

int dp_bind_err(dp_binder *b, int code, dp_span span, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vbind_err(b, code, span, fmt, ap);
  va_end(ap);
  return code;
}

void *dp_bind_fail(dp_binder *b, int code, dp_span span, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vbind_err(b, code, span, fmt, ap);
  va_end(ap);
  return NULL;
}

/* Names match case-insensitively, quoted or not: Flink is case-sensitive, but
** two names differing only in case are far more often a typo than intent, and
** an ambiguity is reported where it arises. */
bool dp_bind_name_eq(const char *x, const char *y) {
  if (!x || !y) return false;
  for (; *x && *y; x++, y++)
    if (tolower((unsigned char)*x) != tolower((unsigned char)*y)) return false;
  return *x == *y;
}

const char *dp_bind_type_str(dp_binder *b, const dp_type *t) {
  if (!t) return "(unknown)";
  const char *s = dp_type_format(b->a, t);
  return s ? s : "(a type)";
}

static void binder_init(dp_binder *b, dp_arena *a, dp_diags *d, const dp_catalog *cat, dp_query_plan *q) {
  memset(b, 0, sizeof *b);
  b->a = a;
  b->d = d;
  b->cat = cat;
  b->q = q;
}

/* ------------------------------------------------------------------ */
/* dp_bind_expr_over                                                   */
/* ------------------------------------------------------------------ */

int dp_bind_expr_over(dp_arena *a, dp_diags *d, const dp_catalog *cat, const dp_schema *cols,
                      const dp_ast_expr *e, dp_expr **out) {
  dp_binder b;
  binder_init(&b, a, d, cat, NULL);
  dp_bscope sc;
  memset(&sc, 0, sizeof sc);
  for (int i = 0; cols && i < cols->ncols; i++)
    dp_bscope_add(&b, &sc, NULL, cols->cols[i].name, cols->cols[i].type, i, NULL);
  dp_bexpr x;
  dp_bexpr_init(&x, &b, &sc, 0, "a column expression");
  *out = dp_bind_expr(&x, e);
  if (!*out) return b.first_error ? b.first_error : DIPPER_INTERNAL;
  return DIPPER_OK;
}

/* ------------------------------------------------------------------ */
/* INSERT                                                              */
/* ------------------------------------------------------------------ */

/* The type Flink gives output column `col` of `p` where it is narrower than
** dipper's, or NULL.  dipper types AVG of an integer column as DOUBLE and SUM
** of INT, SMALLINT or TINYINT as BIGINT, as Spark does; Flink types both as the
** argument's type.  An INSERT written for Flink (Nexmark's q4 and q17 put an
** AVG of a BIGINT into a BIGINT column) is valid there, so dipper casts such a
** column to the sink's type instead of refusing it: the value Flink writes,
** its integer quotient, is the cast's truncation toward zero.  Followed through
** the nodes that pass a column on unchanged; anything else is NULL. */
static const dp_type *flink_narrower_type(const dp_plan *p, int col) {
  while (p && col >= 0) {
    switch (p->kind) {
    case DP_P_PROJECT: {
      const dp_expr *e = p->u.project.exprs[col];
      if (e->kind != DP_E_COLUMN) return NULL;
      col = e->u.column.index;
      p = p->inputs[0];
      break;
    }
    case DP_P_FILTER: case DP_P_WATERMARK: case DP_P_SORT: case DP_P_LIMIT:
    case DP_P_DISTINCT: case DP_P_DEDUPLICATE: case DP_P_TOPN:
      p = p->inputs[0];
      break;
    case DP_P_JOIN: {
      int nleft = p->inputs[0]->schema.ncols;
      if (col >= nleft) { col -= nleft; p = p->inputs[1]; }
      else p = p->inputs[0];
      break;
    }
    case DP_P_AGGREGATE: {
      if (col < p->u.aggregate.ngroup) {
        const dp_expr *g = p->u.aggregate.group[col];
        if (g->kind != DP_E_COLUMN) return NULL;
        col = g->u.column.index;
        p = p->inputs[0];
        break;
      }
      const dp_agg_call *c = &p->u.aggregate.aggs[col - p->u.aggregate.ngroup];
      if (c->nargs != 1 || !dp_type_is_integer(c->args[0]->type)) return NULL;
      const dp_type *arg = c->args[0]->type;
      if (c->fn->id == DP_F_AVG) return arg;
      if (c->fn->id == DP_F_SUM && arg->kind != DP_T_BIGINT) return arg;
      return NULL;
    }
    default:
      return NULL;
    }
  }
  return NULL;
}

static dp_plan *bind_insert(dp_binder *b, const dp_ast_insert *ins, dp_span span) {
  const char *nm = ins->table.parts[ins->table.n - 1].name;
  dp_qname qn;
  int qrc = dp_catalog_resolve(b->cat, b->d, &ins->table, &qn);
  if (qrc != DIPPER_OK) {
    if (!b->first_error) b->first_error = qrc;
    return NULL;
  }
  const dp_table_def *t = dp_catalog_table_in(b->cat, &qn);
  if (!t) {
    if (dp_catalog_view_in(b->cat, &qn))
      return dp_bind_fail(b, DIPPER_TYPE, ins->table.span,
                          "`%s` is a view; INSERT INTO needs a table declared with CREATE TABLE", nm);
    const char *best = dp_catalog_suggest(b->cat, nm);
    if (best)
      return dp_bind_fail(b, DIPPER_NAME, ins->table.span, "unknown table `%s`; did you mean `%s`?", nm,
                          best);
    return dp_bind_fail(b, DIPPER_NAME, ins->table.span,
                        "unknown table `%s`; declare the sink with CREATE TABLE %s (...) WITH (...)",
                        nm, nm);
  }
  if (ins->npartition > 0)
    return dp_bind_fail(b, DIPPER_UNSUPPORTED, ins->table.span,
                        "INSERT with a static PARTITION spec is not supported yet; select the "
                        "partition column instead");
  dp_plan *q = dp_bind_query(b, ins->query, NULL);
  if (!q) return NULL;
  int n = t->schema.ncols;
  /* src[i]: the query column written to table column i; -1 NULL; -2 not writable. */
  int *src = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *src);
  if (!src) return NULL;
  int nwritable = 0;
  for (int i = 0; i < n; i++) {
    bool writable = !(t->cols && (t->cols[i].kind == DP_CK_COMPUTED ||
                                  (t->cols[i].kind == DP_CK_METADATA && t->cols[i].is_virtual)));
    src[i] = writable ? -1 : -2;
    if (writable) nwritable++;
  }
  if (ins->ncols > 0) {
    if (ins->ncols != q->schema.ncols)
      return dp_bind_fail(b, DIPPER_TYPE, ins->query->span,
                          "INSERT INTO %s names %d column%s but the query returns %d", t->name,
                          ins->ncols, ins->ncols == 1 ? "" : "s", q->schema.ncols);
    for (int k = 0; k < ins->ncols; k++) {
      int found = dp_schema_find(&t->schema, ins->cols[k].name);
      if (found < 0) {
        const char **names = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *names);
        for (int i = 0; names && i < n; i++) names[i] = t->schema.cols[i].name;
        const char *best = names ? dp_closest_of(ins->cols[k].name, names, n) : NULL;
        if (best)
          return dp_bind_fail(b, DIPPER_NAME, ins->cols[k].span,
                              "table `%s` has no column `%s`; did you mean `%s`?", t->name,
                              ins->cols[k].name, best);
        return dp_bind_fail(b, DIPPER_NAME, ins->cols[k].span, "table `%s` has no column `%s`",
                            t->name, ins->cols[k].name);
      }
      if (src[found] == -2)
        return dp_bind_fail(b, DIPPER_TYPE, ins->cols[k].span,
                            "column `%s` of `%s` is %s and cannot be written; leave it out of the "
                            "column list",
                            t->schema.cols[found].name, t->name,
                            t->cols[found].kind == DP_CK_COMPUTED ? "computed" : "VIRTUAL metadata");
      if (src[found] >= 0)
        return dp_bind_fail(b, DIPPER_DUPLICATE, ins->cols[k].span, "column `%s` is listed twice",
                            ins->cols[k].name);
      src[found] = k;
    }
  } else {
    if (q->schema.ncols != nwritable)
      return dp_bind_fail(b, DIPPER_TYPE, ins->query->span,
                          "INSERT INTO %s: the query returns %d column%s but the table takes %d%s; "
                          "list the target columns: INSERT INTO %s (a, b) SELECT ...",
                          t->name, q->schema.ncols, q->schema.ncols == 1 ? "" : "s", nwritable,
                          nwritable != n ? " (computed and VIRTUAL columns are not written)" : "",
                          t->name);
    for (int i = 0, k = 0; i < n; i++)
      if (src[i] == -1) src[i] = k++;
  }
  /* A projection giving exactly the written columns, in table order, cast to the table's types. */
  dp_plan *proj = dp_bind_new_node(b, DP_P_PROJECT, ins->query->span, 1, q);
  if (!proj) return NULL;
  dp_bind_schema(b, proj, nwritable);
  proj->u.project.n = nwritable;
  proj->u.project.exprs = dp_arena_calloc(b->a, (size_t)(nwritable ? nwritable : 1), sizeof(dp_expr *));
  int *col_map = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *col_map);
  if (!proj->u.project.exprs || !col_map || !proj->schema.cols) return NULL;
  bool ok = true;
  for (int i = 0, k = 0; i < n; i++) {
    col_map[i] = -1;
    if (src[i] == -2) continue;
    const dp_type *tt = t->schema.cols[i].type;
    dp_expr *e;
    if (src[i] < 0) {
      if (tt->not_null) {
        dp_bind_err(b, DIPPER_TYPE, ins->table.span,
                    "column `%s` of `%s` is NOT NULL but the INSERT gives it no value",
                    t->schema.cols[i].name, t->name);
        ok = false;
        continue;
      }
      e = dp_arena_calloc(b->a, 1, sizeof *e);
      if (!e) return NULL;
      e->kind = DP_E_LITERAL;
      e->type = tt;
      e->span = ins->table.span;
      e->u.value = dp_value_null(tt);
    } else {
      const dp_type *qt = q->schema.cols[src[i]].type;
      e = dp_arena_calloc(b->a, 1, sizeof *e);
      if (!e) return NULL;
      e->kind = DP_E_COLUMN;
      e->type = qt;
      e->span = ins->query->span;
      e->u.column.index = src[i];
      if (!dp_type_equal(qt, tt)) {
        const dp_type *ft;
        if (!dp_type_can_coerce(qt, tt) && qt->kind != DP_T_NULL &&
            !((ft = flink_narrower_type(q, src[i])) &&
              (dp_type_equal(ft, tt) || dp_type_can_coerce(ft, tt)))) {
          dp_bind_err(b, DIPPER_TYPE, ins->query->span,
                      "column `%s` of `%s` is %s but the query gives %s (column %d); CAST it in the "
                      "query",
                      t->schema.cols[i].name, t->name, dp_bind_type_str(b, tt), dp_bind_type_str(b, qt),
                      src[i] + 1);
          ok = false;
          continue;
        }
        if (!(e = dp_bind_coerce(b, e, tt, "INSERT"))) {
          ok = false;
          continue;
        }
      }
    }
    proj->u.project.exprs[k] = e;
    proj->schema.cols[k] = (dp_field){t->schema.cols[i].name, e->type};
    col_map[i] = k++;
  }
  if (!ok) return NULL;
  /* Said at the target, where the mistake is usually made; the declaration may be
     right for the tables that read it. */
  if (!dp_connector_writable(t->connector))
    return dp_bind_fail(b, DIPPER_UNSUPPORTED, ins->table.span,
                        "cannot INSERT INTO `%s`: its connector '%s' (declared at %u:%u) can only "
                        "be read; write to a table declared with a sink connector such as "
                        "'filesystem', 'kafka' or 'console'",
                        nm, t->connector, t->span.line, t->span.col);
  if (dp_connector_validate(b->d, t, true) != DIPPER_OK) {
    if (!b->first_error) b->first_error = DIPPER_OPTION;
    return NULL;
  }
  dp_plan *sink = dp_bind_new_node(b, DP_P_SINK, span, 1, dp_bind_simplify_project(b, proj));
  if (!sink) return NULL;
  sink->schema = proj->schema;
  sink->u.sink.table = t;
  sink->u.sink.col_map = col_map;
  sink->u.sink.overwrite = ins->overwrite;
  return sink;
}

/* ------------------------------------------------------------------ */
/* statements                                                          */
/* ------------------------------------------------------------------ */

/* The span of the statement's last word (END of a statement set). */
static dp_span end_of(const dp_diags *d, dp_span s) {
  if (!d->text || s.off + s.len > d->text_len || s.len == 0) return s;
  const char *t = d->text + s.off;
  uint32_t last = s.len;
  while (last > 0 && (t[last - 1] == ' ' || t[last - 1] == '\n' || t[last - 1] == '\t' ||
                      t[last - 1] == '\r' || t[last - 1] == ';'))
    last--;
  uint32_t start = last;
  while (start > 0 && isalnum((unsigned char)t[start - 1])) start--;
  dp_span r = {s.off + start, last - start, s.line, s.col};
  for (uint32_t i = 0; i < start; i++) {
    if (t[i] == '\n') {
      r.line++;
      r.col = 1;
    } else {
      r.col++;
    }
  }
  return r;
}

static void add_root(dp_binder *b, dp_query_plan *out, dp_plan *p) {
  dp_plan **g = dp_arena_grow(b->a, out->roots, (size_t)out->nroots, (size_t)out->nroots + 1, sizeof *g);
  if (!g) {
    dp_bind_err(b, DIPPER_NOMEM, p->span, "out of memory");
    return;
  }
  out->roots = g;
  out->roots[out->nroots++] = p;
}

/* CREATE TABLE t WITH (..) AS SELECT: the query bound first (its schema is
** the table's), the table made, then an INSERT INTO t of the query — the
** statement's root, run like an INSERT.  Columns, LIKE and PARTITIONED BY
** are refused: the query gives the columns (Flink's rule). */
static void bind_ctas(dp_binder *b, dp_catalog *cat, const dp_ast_stmt *s, dp_query_plan *out) {
  const dp_ast_create_table *ct = &s->u.create_table;
  if (ct->ncols > 0 || ct->has_watermark || ct->npk > 0 || ct->like.n > 0 || ct->npartition > 0) {
    dp_bind_err(b, DIPPER_UNSUPPORTED, ct->name.span,
                "CREATE TABLE ... AS SELECT takes its columns from the query: leave out the "
                "column list, WATERMARK, PRIMARY KEY, LIKE and PARTITIONED BY (or declare the "
                "table, then INSERT INTO it)");
    return;
  }
  dp_query_plan scratch;
  memset(&scratch, 0, sizeof scratch);
  dp_query_plan *saved = b->q;
  b->q = &scratch;
  dp_plan *p = dp_bind_query(b, ct->as_query, NULL);
  b->q = saved;
  if (!p) return;
  int rc = dp_catalog_create_table_as(cat, b->d, ct, &p->schema);
  if (rc) {
    if (!b->first_error) b->first_error = rc;
    return;
  }
  dp_ast_insert ins;
  memset(&ins, 0, sizeof ins);
  ins.table = ct->name;
  ins.query = ct->as_query;
  dp_plan *root = bind_insert(b, &ins, s->span);
  if (root) add_root(b, out, root);
}

static unsigned output_mode(const dp_catalog *cat) {
  const char *m = dp_catalog_option(cat, "dipper.output-mode");
  if (!m) return 0;
  if (dp_bind_name_eq(m, "append")) return DP_MODE_APPEND;
  if (dp_bind_name_eq(m, "update")) return DP_MODE_UPDATE;
  if (dp_bind_name_eq(m, "complete")) return DP_MODE_COMPLETE;
  return 0;
}

static void bind_stmt(dp_binder *b, dp_catalog *cat, const dp_ast_stmt *s, dp_query_plan *out) {
  switch (s->kind) {
  case DP_AS_CREATE_TABLE: {
    if (s->u.create_table.as_query) {
      bind_ctas(b, cat, s, out);
      break;
    }
    int rc = dp_catalog_create_table(cat, b->d, &s->u.create_table);
    if (rc && !b->first_error) b->first_error = rc;
    break;
  }
  case DP_AS_CREATE_DATABASE:
  case DP_AS_CREATE_CATALOG: {
    int rc = dp_catalog_create_namespace(cat, b->d, s);
    if (rc && !b->first_error) b->first_error = rc;
    break;
  }
  case DP_AS_ALTER_TABLE: {
    int rc = dp_catalog_alter_table(cat, b->d, &s->u.alter);
    if (rc && !b->first_error) b->first_error = rc;
    break;
  }
  case DP_AS_CREATE_VIEW: {
    const dp_ast_create_view *cv = &s->u.create_view;
    /* Bind the query now so that its errors point into the CREATE VIEW. */
    dp_query_plan scratch;
    memset(&scratch, 0, sizeof scratch);
    dp_query_plan *saved = b->q;
    b->q = &scratch;
    dp_plan *p = dp_bind_query(b, cv->query, NULL);
    b->q = saved;
    if (!p) break;
    if (cv->ncols > 0 && cv->ncols != p->schema.ncols) {
      dp_bind_err(b, DIPPER_TYPE, cv->name.span, "view `%s` names %d column%s but its query returns %d",
                  cv->name.parts[cv->name.n - 1].name, cv->ncols, cv->ncols == 1 ? "" : "s",
                  p->schema.ncols);
      break;
    }
    const char *text = NULL;
    if (b->d->text && cv->query_span.off + cv->query_span.len <= b->d->text_len)
      text = dp_arena_strndup(b->a, b->d->text + cv->query_span.off, cv->query_span.len);
    int rc = dp_catalog_create_view(cat, b->d, cv, text);
    if (rc && !b->first_error) b->first_error = rc;
    break;
  }
  case DP_AS_CREATE_FUNCTION:
    dp_bind_create_function(b, cat, s);
    break;
  case DP_AS_DROP: {
    int rc = dp_catalog_drop_stmt(cat, b->d, &s->u.drop);
    if (rc && !b->first_error) b->first_error = rc;
    break;
  }
  case DP_AS_SET: {
    int rc = dp_catalog_set(cat, b->d, &s->u.set);
    if (rc && !b->first_error) b->first_error = rc;
    break;
  }
  case DP_AS_RESET: {
    int rc = dp_catalog_reset(cat, s->u.set.key);
    if (rc) dp_bind_err(b, rc, s->u.set.key_span.line ? s->u.set.key_span : s->span,
                        "cannot reset `%s`: it is not set", s->u.set.key ? s->u.set.key : "");
    break;
  }
  case DP_AS_USE: {
    int rc = dp_catalog_use(cat, b->d, s);
    if (rc && !b->first_error) b->first_error = rc;
    break;
  }
  case DP_AS_SHOW:
    break;
  case DP_AS_DESCRIBE: {
    const dp_ast_name *n = &s->u.describe;
    const char *nm = n->n > 0 ? n->parts[n->n - 1].name : "";
    dp_qname qn;
    int qrc = dp_catalog_resolve(cat, b->d, n, &qn);
    if (qrc != DIPPER_OK) {
      if (!b->first_error) b->first_error = qrc;
    } else if (!dp_catalog_table_in(cat, &qn) && !dp_catalog_view_in(cat, &qn)) {
      const char *best = dp_catalog_suggest(cat, nm);
      if (best)
        dp_bind_err(b, DIPPER_NAME, n->span, "unknown table `%s`; did you mean `%s`?", nm, best);
      else
        dp_bind_err(b, DIPPER_NAME, n->span, "unknown table `%s`", nm);
    }
    break;
  }
  case DP_AS_QUERY: {
    dp_plan *p = dp_bind_query(b, s->u.query, NULL);
    if (p) add_root(b, out, p);
    break;
  }
  case DP_AS_INSERT: {
    dp_plan *p = bind_insert(b, &s->u.insert, s->span);
    if (p) add_root(b, out, p);
    break;
  }
  case DP_AS_STATEMENT_SET:
    if (s->u.statement_set.n == 0)
      dp_bind_err(b, DIPPER_SYNTAX, end_of(b->d, s->span),
                  "a statement set needs at least one INSERT INTO ... between BEGIN and END");
    for (int i = 0; i < s->u.statement_set.n; i++) {
      const dp_ast_stmt *ins = s->u.statement_set.inserts[i];
      if (ins->kind != DP_AS_INSERT) {
        dp_bind_err(b, DIPPER_SYNTAX, ins->span, "a statement set holds only INSERT statements");
        continue;
      }
      dp_plan *p = bind_insert(b, &ins->u.insert, ins->span);
      if (p) add_root(b, out, p);
    }
    break;
  case DP_AS_EXPLAIN:
    if (!s->u.explain.stmt) break;
    if (s->u.explain.stmt->kind != DP_AS_QUERY && s->u.explain.stmt->kind != DP_AS_INSERT &&
        s->u.explain.stmt->kind != DP_AS_STATEMENT_SET) {
      dp_bind_err(b, DIPPER_UNSUPPORTED, s->u.explain.stmt->span,
                  "EXPLAIN explains a query, an INSERT or a statement set");
      break;
    }
    bind_stmt(b, cat, s->u.explain.stmt, out);
    out->changelog_mode = s->u.explain.changelog_mode;
    break;
  }
}

int dp_bind_view_schema(dp_arena *a, dp_diags *d, const dp_catalog *cat, const dp_view_def *v,
                        const dp_schema **out) {
  *out = NULL;
  dp_query_plan scratch;
  memset(&scratch, 0, sizeof scratch);
  dp_binder b;
  binder_init(&b, a, d, cat, &scratch);
  dp_plan *p = dp_bind_query(&b, v->query, NULL);
  scratch.udfs = b.udfs; /* only the schema is kept: no C function is called */
  dp_udf_release_plan(&scratch);
  if (!p) return b.first_error ? b.first_error : DIPPER_NAME;
  dp_schema *s = dp_schema_new(a, p->schema.ncols);
  if (!s) return DIPPER_NOMEM;
  for (int i = 0; i < s->ncols; i++) {
    s->cols[i] = p->schema.cols[i];
    if (i < v->ncols) s->cols[i].name = v->cols[i];
  }
  *out = s;
  return DIPPER_OK;
}

int dp_bind_stmt(dp_arena *a, dp_diags *d, dp_catalog *cat, const dp_ast_stmt *stmt,
                 dp_query_plan *out) {
  memset(out, 0, sizeof *out);
  dp_binder b;
  binder_init(&b, a, d, cat, out);
  bind_stmt(&b, cat, stmt, out);
  out->udfs = b.udfs; /* released with the program (dp_udf_release_plan), errors or not */
  out->njava = b.njava;
  out->java = b.java;
  out->java_span = b.java_span;
  out->streaming = dp_catalog_streaming(cat);
  out->output_mode = output_mode(cat);
  if (b.first_error) {
    out->nroots = 0;
    return b.first_error;
  }
  return DIPPER_OK;
}
