/*
** catalog.c — tables and views of a session, and the DDL that defines them.
**
** Owns: the catalog arena (every definition the session keeps lives there),
** the name index (tables and views share one namespace), CREATE TABLE's
** checks (columns, computed columns, watermark, primary key, partitions,
** LIKE), CREATE VIEW and DROP.  Does not own: connector knowledge
** (connectors.c), session options (options.c), expression binding (binder.c).
**
** Names are kept in two arrays sorted by lower-cased name: lookups are a
** binary search, SHOW TABLES comes out sorted, and a session holds tens of
** names, not millions, so a hash table would buy nothing.
**
** A view keeps its query as a syntax tree parsed again into the catalog arena
** from the view's own text, instead of a deep copy of the caller's tree: the
** parser already knows how to build every node kind, so no copy routine has to
** follow each change of ast.h (a missed field would dangle into a freed parse
** arena).  The text is re-parsed behind a blank prefix of the same bytes
** (newlines kept) when the script is at hand, so every span in the view's
** tree has the offset, line and column it had where the view was created.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/suggest.h"
#include "plan/binder.h"
#include "plan/catalog.h"
#include "plan/catalog_int.h"
#include "plan/plan.h"
#include "sql/parser.h"

/* ---- names ---- */

static int lower(int ch) { return (ch >= 'A' && ch <= 'Z') ? ch + ('a' - 'A') : ch; }

static int name_cmp(const char *a, const char *b) {
  for (;; a++, b++) {
    int x = lower((unsigned char)*a), y = lower((unsigned char)*b);
    if (x != y || x == 0) return x - y;
  }
}

int dp_catalog_name_cmp(const char *a, const char *b) { return name_cmp(a, b); }

static bool name_eq(const char *a, const char *b) { return name_cmp(a, b) == 0; }

/* ---- the index ---- */

dp_catalog *dp_catalog_new(void) {
  dp_catalog *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->arena = dp_arena_new(0);
  if (!c->arena || dp_catalog_init_namespaces(c) != DIPPER_OK) {
    dp_arena_free(c->arena);
    free(c);
    return NULL;
  }
  return c;
}

void dp_catalog_free(dp_catalog *c) {
  if (!c) return;
  dp_catalog_free_functions(c);
  dp_arena_free(c->arena);
  free(c);
}

dp_arena *dp_catalog_arena(dp_catalog *c) { return c->arena; }

/* Tables and views are ordered by (catalog, database, name). */
static int path_cmp(const char *cat_a, const char *db_a, const char *name_a, const dp_qname *q) {
  int r = name_cmp(cat_a, q->catalog);
  if (r == 0) r = name_cmp(db_a, q->database);
  return r ? r : name_cmp(name_a, q->name);
}

static int table_slot_q(const dp_catalog *c, const dp_qname *q) {
  int lo = 0, hi = c->ntables - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    const dp_table_def *t = c->tables[mid];
    int cmp = path_cmp(t->catalog_name, t->database_name, t->name, q);
    if (cmp == 0) return mid;
    if (cmp < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -lo - 1;
}

static int view_slot_q(const dp_catalog *c, const dp_qname *q) {
  int lo = 0, hi = c->nviews - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    const dp_view_def *v = c->views[mid];
    int cmp = path_cmp(v->catalog_name, v->database_name, v->name, q);
    if (cmp == 0) return mid;
    if (cmp < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -lo - 1;
}

static dp_qname here(const dp_catalog *c, const char *name) {
  dp_qname q = {c->cur_catalog, c->cur_database, name};
  return q;
}

const dp_table_def *dp_catalog_table_in(const dp_catalog *c, const dp_qname *q) {
  if (!c || !q || !q->name || !q->catalog || !q->database) return NULL;
  int i = table_slot_q(c, q);
  return i >= 0 ? c->tables[i] : NULL;
}

const dp_view_def *dp_catalog_view_in(const dp_catalog *c, const dp_qname *q) {
  if (!c || !q || !q->name || !q->catalog || !q->database) return NULL;
  int i = view_slot_q(c, q);
  return i >= 0 ? c->views[i] : NULL;
}

const dp_table_def *dp_catalog_table(const dp_catalog *c, const char *name) {
  if (!c || !name) return NULL;
  dp_qname q = here(c, name);
  return dp_catalog_table_in(c, &q);
}

const dp_view_def *dp_catalog_view(const dp_catalog *c, const char *name) {
  if (!c || !name) return NULL;
  dp_qname q = here(c, name);
  return dp_catalog_view_in(c, &q);
}

static bool name_taken_q(const dp_catalog *c, const dp_qname *q) {
  return dp_catalog_table_in(c, q) || dp_catalog_view_in(c, q);
}

/* Insert p at position `at` of a pointer array kept in the arena. */
static int insert_at(dp_arena *a, void ***arr, int *n, int *cap, int at, void *p) {
  if (dp_arena_grow_i(a, arr, cap, *n + 1, sizeof(void *), 16)) return DIPPER_NOMEM;
  memmove(*arr + at + 1, *arr + at, (size_t)(*n - at) * sizeof(void *));
  (*arr)[at] = p;
  (*n)++;
  return DIPPER_OK;
}

int dp_catalog_add_table(dp_catalog *c, dp_table_def *t) {
  if (!c || !t || !t->name) return DIPPER_MISUSE;
  if (!t->catalog_name) t->catalog_name = c->cur_catalog;
  if (!t->database_name) t->database_name = c->cur_database;
  dp_qname q = {t->catalog_name, t->database_name, t->name};
  if (name_taken_q(c, &q)) return DIPPER_DUPLICATE;
  int at = -table_slot_q(c, &q) - 1;
  void **arr = (void **)c->tables;
  int rc = insert_at(c->arena, &arr, &c->ntables, &c->tables_cap, at, t);
  c->tables = (dp_table_def **)arr;
  return rc;
}

int dp_catalog_add_view(dp_catalog *c, dp_view_def *v) {
  if (!c || !v || !v->name) return DIPPER_MISUSE;
  if (!v->catalog_name) v->catalog_name = c->cur_catalog;
  if (!v->database_name) v->database_name = c->cur_database;
  dp_qname q = {v->catalog_name, v->database_name, v->name};
  if (name_taken_q(c, &q)) return DIPPER_DUPLICATE;
  int at = -view_slot_q(c, &q) - 1;
  void **arr = (void **)c->views;
  int rc = insert_at(c->arena, &arr, &c->nviews, &c->views_cap, at, v);
  c->views = (dp_view_def **)arr;
  return rc;
}

/* The definition's memory stays in the arena until the catalog is freed:
** plans compiled earlier may still point at it. */
int dp_catalog_drop_in(dp_catalog *c, int what, const dp_qname *q) {
  if (!c || !q || !q->name) return DIPPER_MISUSE;
  if (what == 'T') {
    int i = table_slot_q(c, q);
    if (i < 0) return DIPPER_NAME;
    memmove(c->tables + i, c->tables + i + 1, (size_t)(c->ntables - i - 1) * sizeof *c->tables);
    c->ntables--;
    return DIPPER_OK;
  }
  if (what == 'V') {
    int i = view_slot_q(c, q);
    if (i < 0) return DIPPER_NAME;
    memmove(c->views + i, c->views + i + 1, (size_t)(c->nviews - i - 1) * sizeof *c->views);
    c->nviews--;
    return DIPPER_OK;
  }
  return DIPPER_MISUSE;
}

int dp_catalog_drop(dp_catalog *c, int what, const char *name) {
  if (!c || !name) return DIPPER_MISUSE;
  dp_qname q = here(c, name);
  return dp_catalog_drop_in(c, what, &q);
}

bool dp_catalog_is_current(const dp_catalog *c, const char *catalog, const char *database) {
  return c && catalog && database && name_eq(catalog, c->cur_catalog) &&
         name_eq(database, c->cur_database);
}

const char *dp_catalog_suggest(const dp_catalog *c, const char *name) {
  if (!c || !name) return NULL;
  dp_closest near;
  dp_closest_init(&near, name);
  for (int i = 0; i < c->ntables; i++)
    if (dp_catalog_is_current(c, c->tables[i]->catalog_name, c->tables[i]->database_name))
      dp_closest_add(&near, c->tables[i]->name);
  for (int i = 0; i < c->nviews; i++)
    if (dp_catalog_is_current(c, c->views[i]->catalog_name, c->views[i]->database_name))
      dp_closest_add(&near, c->views[i]->name);
  return near.best;
}

int dp_catalog_table_count(const dp_catalog *c) { return c ? c->ntables : 0; }
const dp_table_def *dp_catalog_table_at(const dp_catalog *c, int i) {
  return (c && i >= 0 && i < c->ntables) ? c->tables[i] : NULL;
}
int dp_catalog_view_count(const dp_catalog *c) { return c ? c->nviews : 0; }
const dp_view_def *dp_catalog_view_at(const dp_catalog *c, int i) {
  return (c && i >= 0 && i < c->nviews) ? c->views[i] : NULL;
}

/* ---- DDL helpers ---- */

/* Keep the first error code while going on to report later ones. */
static void keep(int *rc, int code) {
  if (*rc == DIPPER_OK && code != DIPPER_OK) *rc = code;
}

/* The object name of a possibly qualified name (cat.db.t → t). */
static const dp_ast_ident *last_part(const dp_ast_name *n) {
  return n->n > 0 ? &n->parts[n->n - 1] : NULL;
}

/* ", did you mean `x`?" or "" — written into buf. */
static const char *did_you_mean(char *buf, size_t cap, const char *suggestion) {
  if (!suggestion) return "";
  snprintf(buf, cap, "; did you mean `%s`?", suggestion);
  return buf;
}

static int column_index(const dp_schema *s, const char *name) {
  for (int i = 0; i < s->ncols; i++)
    if (s->cols[i].name && name_eq(s->cols[i].name, name)) return i;
  return -1;
}

static const char *closest_column(const dp_schema *s, const char *name) {
  dp_closest near;
  dp_closest_init(&near, name);
  for (int i = 0; i < s->ncols; i++) dp_closest_add(&near, s->cols[i].name);
  return near.best;
}

/* An unknown column of CREATE TABLE (watermark, key, partition). */
static int unknown_column(dp_diags *d, const dp_schema *s, const dp_ast_ident *id, const char *what,
                          const char *table) {
  char hint[160];
  return dp_error(d, DIPPER_NAME, id->span, "%s `%s` is not a column of table `%s`%s", what,
                  id->name, table, did_you_mean(hint, sizeof hint, closest_column(s, id->name)));
}

/* The first reference in `e` to a computed column of the table (kinds[i] ==
** DP_CK_COMPUTED), not descending into subqueries (which cannot see the
** table's columns anyway). */
static const dp_ast_expr *computed_ref(const dp_ast_expr *e, const dp_schema *s,
                                       const dp_column_def *cols) {
  if (!e) return NULL;
  const dp_ast_expr *hit = NULL;
#define WALK(x)                                     \
  do {                                              \
    if (!hit) hit = computed_ref((x), s, cols);     \
  } while (0)
  switch (e->kind) {
  case DP_AX_COLUMN:
    if (e->u.name.n >= 1) {
      int i = column_index(s, e->u.name.parts[0].name);
      if (i >= 0 && cols[i].kind == DP_CK_COMPUTED) return e;
    }
    return NULL;
  case DP_AX_UNARY: WALK(e->u.unary.arg); break;
  case DP_AX_BINARY: WALK(e->u.binary.left); WALK(e->u.binary.right); break;
  case DP_AX_BETWEEN: WALK(e->u.between.arg); WALK(e->u.between.lo); WALK(e->u.between.hi); break;
  case DP_AX_IN_LIST:
    WALK(e->u.in_list.arg);
    for (int i = 0; i < e->u.in_list.n; i++) WALK(e->u.in_list.items[i]);
    break;
  case DP_AX_IN_QUERY: WALK(e->u.in_query.arg); break;
  case DP_AX_IS: WALK(e->u.is.arg); WALK(e->u.is.other); break;
  case DP_AX_LIKE: WALK(e->u.like.arg); WALK(e->u.like.pattern); WALK(e->u.like.escape); break;
  case DP_AX_CASE:
    WALK(e->u.case_.operand);
    for (int i = 0; i < e->u.case_.n; i++) {
      WALK(e->u.case_.whens[i]);
      WALK(e->u.case_.thens[i]);
    }
    WALK(e->u.case_.else_);
    break;
  case DP_AX_CAST: WALK(e->u.cast.arg); break;
  case DP_AX_CALL:
    for (int i = 0; i < e->u.call.nargs; i++) WALK(e->u.call.args[i]);
    WALK(e->u.call.filter);
    if (e->u.call.over) {
      for (int i = 0; i < e->u.call.over->npartition; i++) WALK(e->u.call.over->partition[i]);
      for (int i = 0; i < e->u.call.over->norder; i++) WALK(e->u.call.over->order[i].expr);
    }
    break;
  case DP_AX_FIELD: WALK(e->u.field.arg); break;
  case DP_AX_SUBSCRIPT: WALK(e->u.subscript.arg); WALK(e->u.subscript.index); break;
  case DP_AX_EXTRACT: WALK(e->u.extract.arg); break;
  case DP_AX_CONSTRUCT:
    for (int i = 0; i < e->u.construct.n; i++) WALK(e->u.construct.items[i]);
    break;
  default: break;
  }
#undef WALK
  return hit;
}

static bool is_call_named(const dp_ast_expr *e, const char *fname, int nargs) {
  return e && e->kind == DP_AX_CALL && e->u.call.name.n == 1 &&
         name_eq(e->u.call.name.parts[0].name, fname) && e->u.call.nargs == nargs;
}

static bool is_column_ref(const dp_ast_expr *e, const char *col) {
  return e && e->kind == DP_AX_COLUMN && e->u.name.n == 1 && name_eq(e->u.name.parts[0].name, col);
}

static bool is_interval_literal(const dp_ast_expr *e) {
  return e && (e->kind == DP_AX_INTERVAL ||
               (e->kind == DP_AX_LITERAL && e->u.lit.kind == DP_LIT_STRING));
}

bool dp_catalog_time_hint(char *buf, size_t cap, const dp_schema *s, const char *col,
                          const dp_type *t) {
  const char *target = s && column_index(s, "ts") >= 0 ? "event_ts" : "ts";
  if (t && (dp_type_is_integer(t) || dp_type_is_numeric(t)))
    snprintf(buf, cap, "%s AS TO_TIMESTAMP_LTZ(%s, 3)", target, col); /* epoch millis */
  else if (t && dp_type_is_string(t))
    snprintf(buf, cap, "%s AS TO_TIMESTAMP(%s)", target, col); /* 'yyyy-MM-dd HH:mm:ss' */
  else if (t && t->kind == DP_T_DATE)
    snprintf(buf, cap, "%s AS CAST(%s AS TIMESTAMP(3))", target, col);
  else {
    snprintf(buf, cap, "%s", "");
    return false;
  }
  return true;
}

/* ---- CREATE TABLE ---- */

/* Columns of the LIKE source, then the declared ones: kinds, names and
** declared types; computed columns are typed when bound. */
static int declare_columns(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                           const dp_table_def *like, dp_table_def *t) {
  int rc = DIPPER_OK;
  int nlike = like ? like->schema.ncols : 0;
  int n = nlike + ct->ncols;
  t->schema.ncols = n;
  t->schema.cols = dp_arena_calloc(c->arena, (size_t)(n ? n : 1), sizeof *t->schema.cols);
  t->cols = dp_arena_calloc(c->arena, (size_t)(n ? n : 1), sizeof *t->cols);
  if (!t->schema.cols || !t->cols) return DIPPER_NOMEM;
  for (int i = 0; i < nlike; i++) {
    t->schema.cols[i] = like->schema.cols[i];
    t->cols[i] = like->cols[i];
  }
  for (int j = 0; j < ct->ncols; j++) {
    const dp_ast_column *ac = &ct->cols[j];
    int i = nlike + j;
    for (int k = 0; k < i; k++) {
      if (!name_eq(t->schema.cols[k].name, ac->name.name)) continue;
      if (k < nlike)
        keep(&rc, dp_error(d, DIPPER_DUPLICATE, ac->name.span,
                           "column `%s` is already declared by LIKE `%s`; rename it or leave it out "
                           "(a computed or metadata column is replaced with OVERWRITING "
                           "GENERATED / OVERWRITING METADATA)",
                           ac->name.name, like->name));
      else
        keep(&rc, dp_error(d, DIPPER_DUPLICATE, ac->name.span,
                           "column `%s` is declared twice (first at line %u, column %u); "
                           "rename one of them",
                           ac->name.name, ct->cols[k - nlike].name.span.line,
                           ct->cols[k - nlike].name.span.col));
      break;
    }
    dp_column_def *cd = &t->cols[i];
    cd->span = ac->span;
    t->schema.cols[i].name = dp_arena_strdup(c->arena, ac->name.name);
    if (!t->schema.cols[i].name) return DIPPER_NOMEM;
    switch (ac->kind) {
    case DP_COL_PHYSICAL:
      cd->kind = DP_CK_PHYSICAL;
      t->schema.cols[i].type = ac->type;
      break;
    case DP_COL_METADATA:
      cd->kind = DP_CK_METADATA;
      cd->metadata_key = dp_arena_strdup(c->arena, ac->metadata_key ? ac->metadata_key : ac->name.name);
      if (!cd->metadata_key) return DIPPER_NOMEM;
      cd->is_virtual = ac->is_virtual;
      t->schema.cols[i].type = ac->type;
      break;
    case DP_COL_COMPUTED:
      cd->kind = DP_CK_COMPUTED;
      cd->proctime = is_call_named(ac->expr, "PROCTIME", 0);
      /* A stand-in until bound; nothing can reference it meanwhile because a
         reference to a computed column is refused before binding. */
      t->schema.cols[i].type = dp_type_of(DP_T_NULL);
      break;
    }
  }
  return rc;
}

/* Types written in DDL belong to the parse arena; a table outlives it. */
static const dp_type *copy_type(dp_arena *a, const dp_type *t) {
  if (!t) return NULL;
  dp_type *out = dp_type_new(a, t->kind);
  if (!out) return NULL;
  *out = *t;
  if (t->elem && !(out->elem = copy_type(a, t->elem))) return NULL;
  if (t->value && !(out->value = copy_type(a, t->value))) return NULL;
  if (t->nfields > 0) {
    dp_field *fields = dp_arena_calloc(a, (size_t)t->nfields, sizeof *fields);
    if (!fields) return NULL;
    for (int i = 0; i < t->nfields; i++) {
      fields[i].name = dp_arena_strdup(a, t->fields[i].name);
      fields[i].type = copy_type(a, t->fields[i].type);
      if (!fields[i].name || !fields[i].type) return NULL;
    }
    out->fields = fields;
  }
  return out;
}

static int bind_computed(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct, int nlike,
                         dp_table_def *t) {
  int rc = DIPPER_OK;
  for (int j = 0; j < ct->ncols; j++) {
    const dp_ast_column *ac = &ct->cols[j];
    if (ac->kind != DP_COL_COMPUTED) continue;
    int i = nlike + j;
    const dp_ast_expr *ref = computed_ref(ac->expr, &t->schema, t->cols);
    if (ref) {
      keep(&rc, dp_error(d, DIPPER_UNSUPPORTED, ref->span,
                         "computed column `%s` refers to computed column `%s`; a computed column "
                         "may use only physical and metadata columns: repeat the expression of "
                         "`%s` instead",
                         ac->name.name, ref->u.name.parts[0].name, ref->u.name.parts[0].name));
      continue;
    }
    dp_expr *bound = NULL;
    int brc = dp_bind_expr_over(c->arena, d, c, &t->schema, ac->expr, &bound);
    if (brc != DIPPER_OK || !bound) {
      keep(&rc, brc != DIPPER_OK ? brc : DIPPER_INTERNAL);
      continue;
    }
    t->cols[i].expr = bound;
    t->schema.cols[i].type = bound->type;
  }
  return rc;
}

static int check_watermark(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                           const dp_table_def *like, dp_table_def *t) {
  t->watermark_col = -1;
  t->watermark_delay = -1;
  if (!ct->has_watermark) {
    if (like && like->watermark_col >= 0) {
      t->watermark_col = like->watermark_col;
      t->watermark_expr = like->watermark_expr;
      t->watermark_delay = like->watermark_delay;
      t->watermark_span = like->watermark_span;
    }
    return DIPPER_OK;
  }
  t->watermark_span = ct->watermark_span;
  if (like && like->watermark_col >= 0)
    return dp_error(d, DIPPER_DUPLICATE, ct->watermark_span,
                    "table `%s` already brings a watermark through LIKE `%s`; a table has one "
                    "watermark: leave this one out, or write LIKE %s (OVERWRITING WATERMARKS)",
                    t->name, like->name, like->name);
  const char *col = ct->watermark_col.name;
  int i = column_index(&t->schema, col);
  if (i < 0) return unknown_column(d, &t->schema, &ct->watermark_col, "the WATERMARK FOR column", t->name);
  const dp_type *ty = t->schema.cols[i].type;
  if (t->cols[i].proctime)
    return dp_error(d, DIPPER_TYPE, ct->watermark_span,
                    "`%s` is a processing-time column (PROCTIME()) and cannot carry a watermark; "
                    "declare the watermark on an event-time TIMESTAMP column",
                    col);
  if (t->cols[i].kind == DP_CK_COMPUTED && !t->cols[i].expr)
    return DIPPER_TYPE; /* its own binding error was reported already */
  if (!ty || !dp_type_is_timestamp(ty)) {
    char tname[96], hint[160];
    dp_type_print(tname, sizeof tname, ty);
    if (!dp_catalog_time_hint(hint, sizeof hint, &t->schema, col, ty))
      return dp_error(d, DIPPER_TYPE, ct->watermark_span,
                      "WATERMARK FOR requires a TIMESTAMP or TIMESTAMP_LTZ column; `%s` is %s, "
                      "which holds no point in time: put the watermark on a timestamp column",
                      col, tname);
    return dp_error(d, DIPPER_TYPE, ct->watermark_span,
                    "WATERMARK FOR requires a TIMESTAMP or TIMESTAMP_LTZ column; `%s` is %s. "
                    "Convert it with a computed column: %s, then WATERMARK FOR %.*s ...",
                    col, tname, hint, (int)strcspn(hint, " "), hint);
  }
  t->watermark_col = i;
  dp_expr *bound = NULL;
  int rc = dp_bind_expr_over(c->arena, d, c, &t->schema, ct->watermark_expr, &bound);
  if (rc != DIPPER_OK || !bound) return rc != DIPPER_OK ? rc : DIPPER_INTERNAL;
  if (!bound->type || bound->type->kind != ty->kind) {
    char want[96], got[96];
    dp_type_print(want, sizeof want, ty);
    dp_type_print(got, sizeof got, bound->type);
    return dp_error(d, DIPPER_TYPE, ct->watermark_expr->span,
                    "the watermark expression must return the type of `%s` (%s) but returns %s; "
                    "write WATERMARK FOR %s AS %s - INTERVAL '5' SECOND",
                    col, want, got, col, col);
  }
  t->watermark_expr = bound;
  /* The delay is known when the expression is the column minus a constant
     interval (or the column itself): Spark's withWatermark takes only that
     form, and the engines use it to drop late rows. */
  const dp_ast_expr *e = ct->watermark_expr;
  if (is_column_ref(e, col)) {
    t->watermark_delay = 0;
  } else if (e->kind == DP_AX_BINARY && (e->u.binary.op == DP_BOP_SUB || e->u.binary.op == DP_BOP_ADD) &&
             is_column_ref(e->u.binary.left, col) && is_interval_literal(e->u.binary.right)) {
    int64_t us = 0;
    rc = dp_bind_interval(d, e->u.binary.right, &us);
    if (rc != DIPPER_OK) return rc;
    int64_t delay = e->u.binary.op == DP_BOP_SUB ? us : -us;
    if (delay < 0) {
      char dur[64];
      dp_format_duration(dur, sizeof dur, delay);
      return dp_error(d, DIPPER_TYPE, e->u.binary.right->span,
                      "the watermark delay is negative (%s): the watermark would run ahead of the "
                      "event time and every row would be late; write WATERMARK FOR %s AS %s - "
                      "INTERVAL '5' SECOND with a positive interval",
                      dur, col, col);
    }
    t->watermark_delay = delay;
  }
  return DIPPER_OK;
}

static int check_primary_key(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                             const dp_table_def *like, int nlike, dp_table_def *t) {
  int ninline = 0;
  bool mirrored = true; /* the parser may also list an inline key in ct->pk */
  for (int j = 0; j < ct->ncols; j++) {
    if (!ct->cols[j].primary_key) continue;
    ninline++;
    bool listed = false;
    for (int k = 0; k < ct->npk; k++) listed |= name_eq(ct->pk[k].name, ct->cols[j].name.name);
    mirrored &= listed;
  }
  if (ct->pk_enforced)
    return dp_error(d, DIPPER_UNSUPPORTED, ct->pk_span,
                    "dipper does not enforce primary keys; write PRIMARY KEY (..) NOT ENFORCED");
  if (ninline > 0 && ct->npk > 0 && mirrored && ninline == ct->npk) ninline = 0;
  if (ninline > 0 && ct->npk > 0)
    return dp_error(d, DIPPER_DUPLICATE, ct->pk_span,
                    "the primary key is declared twice, on a column and as a constraint; keep one "
                    "PRIMARY KEY (..) NOT ENFORCED");
  if (ninline > 1)
    return dp_error(d, DIPPER_DUPLICATE, ct->pk_span.line ? ct->pk_span : ct->cols[0].span,
                    "PRIMARY KEY is written on %d columns; declare a composite key once as "
                    "PRIMARY KEY (a, b) NOT ENFORCED",
                    ninline);
  int n = ct->npk + ninline;
  if (n > 0 && like && like->npk > 0)
    return dp_error(d, DIPPER_DUPLICATE, ct->npk ? ct->pk_span : ct->cols[0].span,
                    "table `%s` already brings a primary key through LIKE `%s`; leave this one out, "
                    "or write LIKE %s (EXCLUDING CONSTRAINTS)",
                    t->name, like->name, like->name);
  if (n == 0) {
    if (like && like->npk > 0) {
      t->npk = like->npk;
      t->pk = like->pk;
    }
    return DIPPER_OK;
  }
  t->pk = dp_arena_calloc(c->arena, (size_t)n, sizeof *t->pk);
  if (!t->pk) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int k = 0; k < n; k++) {
    const dp_ast_ident *id = NULL;
    int i;
    if (ct->npk > 0) {
      id = &ct->pk[k];
      i = column_index(&t->schema, id->name);
    } else {
      int j = 0;
      while (!ct->cols[j].primary_key) j++;
      id = &ct->cols[j].name;
      i = nlike + j;
    }
    if (i < 0) {
      keep(&rc, unknown_column(d, &t->schema, id, "the PRIMARY KEY column", t->name));
      continue;
    }
    for (int m = 0; m < t->npk; m++)
      if (t->pk[m] == i) {
        keep(&rc, dp_error(d, DIPPER_DUPLICATE, id->span,
                           "column `%s` appears twice in the PRIMARY KEY; list it once", id->name));
        i = -1;
        break;
      }
    if (i < 0) continue;
    if (t->cols[i].kind != DP_CK_PHYSICAL) {
      keep(&rc, dp_error(d, DIPPER_UNSUPPORTED, id->span,
                         "the PRIMARY KEY column `%s` is a %s column; a primary key may use only "
                         "physical columns",
                         id->name, t->cols[i].kind == DP_CK_COMPUTED ? "computed" : "metadata"));
      continue;
    }
    /* A key column holds no NULL: the engines rely on it for upserts. */
    const dp_type *nn = dp_type_with_nullability(c->arena, t->schema.cols[i].type, true);
    if (!nn) return DIPPER_NOMEM;
    t->schema.cols[i].type = nn;
    t->pk[t->npk++] = i;
  }
  return rc;
}

static int check_partitions(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                            const dp_table_def *like, dp_table_def *t) {
  if (ct->npartition == 0) {
    if (like) {
      t->npartition = like->npartition;
      t->partition = like->partition;
    }
    return DIPPER_OK;
  }
  if (like && like->npartition > 0)
    return dp_error(d, DIPPER_DUPLICATE, ct->partition[0].span,
                    "table `%s` already brings PARTITIONED BY through LIKE `%s`; leave this one "
                    "out, or write LIKE %s (EXCLUDING PARTITIONS)",
                    t->name, like->name, like->name);
  t->partition = dp_arena_calloc(c->arena, (size_t)ct->npartition, sizeof *t->partition);
  if (!t->partition) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int k = 0; k < ct->npartition; k++) {
    const dp_ast_ident *id = &ct->partition[k];
    int i = column_index(&t->schema, id->name);
    if (i < 0) {
      keep(&rc, unknown_column(d, &t->schema, id, "the PARTITIONED BY column", t->name));
      continue;
    }
    bool dup = false;
    for (int m = 0; m < t->npartition; m++) dup |= t->partition[m] == i;
    if (dup) {
      keep(&rc, dp_error(d, DIPPER_DUPLICATE, id->span,
                         "column `%s` appears twice in PARTITIONED BY; list it once", id->name));
      continue;
    }
    t->partition[t->npartition++] = i;
  }
  return rc;
}

/* The LIKE source's options, then the declared ones; a declared key
** overrides the source's (Flink's default OVERWRITING OPTIONS), or is an
** error with INCLUDING OPTIONS (`strict`). */
static int copy_options(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                        const dp_table_def *like, bool strict, dp_table_def *t) {
  int nlike = like ? like->noptions : 0;
  int cap = nlike + ct->options.n;
  t->options = dp_arena_calloc(c->arena, (size_t)(cap ? cap : 1), sizeof *t->options);
  if (!t->options) return DIPPER_NOMEM;
  for (int i = 0; i < nlike; i++) t->options[t->noptions++] = like->options[i];
  int rc = DIPPER_OK;
  for (int j = 0; j < ct->options.n; j++) {
    const dp_ast_option *o = &ct->options.items[j];
    bool dup = false;
    for (int k = 0; k < j; k++)
      if (strcmp(ct->options.items[k].key, o->key) == 0) {
        keep(&rc, dp_error(d, DIPPER_DUPLICATE, o->span,
                           "option '%s' is set twice (first at line %u, column %u); keep one",
                           o->key, ct->options.items[k].span.line, ct->options.items[k].span.col));
        dup = true;
        break;
      }
    if (dup) continue;
    dp_option opt = {dp_arena_strdup(c->arena, o->key), dp_arena_strdup(c->arena, o->value),
                     o->span, o->value_span};
    if (!opt.key || !opt.value) return DIPPER_NOMEM;
    int at = t->noptions;
    for (int k = 0; k < nlike; k++)
      if (strcmp(t->options[k].key, o->key) == 0) at = k;
    if (at < nlike && strict) {
      keep(&rc, dp_error(d, DIPPER_DUPLICATE, o->span,
                         "option '%s' is also an option of LIKE `%s`, and INCLUDING OPTIONS "
                         "refuses a second value: write OVERWRITING OPTIONS to replace it, or "
                         "leave it out",
                         o->key, like->name));
      continue;
    }
    t->options[at] = opt;
    if (at == t->noptions) t->noptions++;
  }
  if (rc == DIPPER_OK) rc = dp_connector_map_legacy(c->arena, d, t);
  return rc;
}

int dp_catalog_finish_table(dp_catalog *c, dp_diags *d, dp_table_def *t) {
  t->connector = NULL;
  t->format = NULL;
  for (int i = 0; i < t->noptions; i++) {
    if (strcmp(t->options[i].key, "connector") == 0) t->connector = t->options[i].value;
    if (strcmp(t->options[i].key, "format") == 0 ||
        (strcmp(t->options[i].key, "value.format") == 0 && !t->format))
      t->format = t->options[i].value;
  }
  int rc = dp_connector_check_table(d, t);
  if (rc != DIPPER_OK) return rc;
  /* The engines look connectors and formats up by their own spelling. */
  t->connector = dp_connector_canonical(t->connector);
  if (t->format) {
    char *fmt = dp_arena_strdup(c->arena, t->format);
    if (!fmt) return DIPPER_NOMEM;
    for (char *p = fmt; *p; p++) *p = (char)lower((unsigned char)*p);
    t->format = fmt;
  }
  /* Boundedness as of the current runtime mode; the analysis asks
     dp_connector_bounded again with the mode in force when it runs. */
  t->bounded = dp_connector_bounded(t, !dp_catalog_streaming(c));
  return DIPPER_OK;
}

/* A new table's path: resolved, free, its name in the catalog arena.  1 when
** the name is taken and IF NOT EXISTS keeps the old table. */
static int new_table_path(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                          dp_table_def *t) {
  const dp_ast_ident *nm = last_part(&ct->name);
  dp_qname q;
  int rc = dp_catalog_resolve(c, d, &ct->name, &q);
  if (rc != DIPPER_OK) return rc;
  if (name_taken_q(c, &q)) {
    if (ct->if_not_exists) return 1;
    bool is_view = dp_catalog_view_in(c, &q) != NULL;
    return dp_error(d, DIPPER_DUPLICATE, nm->span,
                    "a %s named `%s` already exists; write CREATE TABLE IF NOT EXISTS to keep it, "
                    "or DROP %s %s first",
                    is_view ? "view" : "table", nm->name, is_view ? "VIEW" : "TABLE", nm->name);
  }
  t->name = dp_arena_strdup(c->arena, nm->name);
  t->catalog_name = q.catalog; /* the catalog's own strings */
  t->database_name = q.database;
  if (!t->name) return DIPPER_NOMEM;
  t->temporary = ct->temporary;
  t->span = nm->span;
  t->with_span = ct->options.span.line ? ct->options.span : nm->span;
  t->watermark_col = -1;
  t->watermark_delay = -1;
  return DIPPER_OK;
}

static int find_like(dp_catalog *c, dp_diags *d, const dp_ast_name *n, const dp_table_def **out) {
  const dp_ast_ident *ln = last_part(n);
  dp_qname q;
  int rc = dp_catalog_resolve(c, d, n, &q);
  if (rc != DIPPER_OK) return rc;
  if ((*out = dp_catalog_table_in(c, &q)) != NULL) return DIPPER_OK;
  char hint[160];
  if (dp_catalog_view_in(c, &q))
    return dp_error(d, DIPPER_NAME, ln->span, "LIKE needs a table, and `%s` is a view; name a table",
                    ln->name);
  return dp_error(d, DIPPER_NAME, ln->span, "LIKE names table `%s`, which does not exist%s",
                  ln->name, did_you_mean(hint, sizeof hint, dp_catalog_suggest(c, ln->name)));
}

int dp_catalog_create_table(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct) {
  if (!c || !d || !ct) return DIPPER_MISUSE;
  const dp_ast_ident *nm = last_part(&ct->name);
  if (!nm) return dp_error(d, DIPPER_INTERNAL, ct->options.span, "CREATE TABLE without a name");
  if (ct->as_query)
    return dp_error(d, DIPPER_INTERNAL, ct->as_query->span,
                    "CREATE TABLE ... AS SELECT reached the catalog without its query's schema");
  dp_table_def *t = dp_arena_calloc(c->arena, 1, sizeof *t);
  if (!t) return DIPPER_NOMEM;
  int rc = new_table_path(c, d, ct, t);
  if (rc != DIPPER_OK) return rc == 1 ? DIPPER_OK : rc;
  const dp_table_def *like = NULL;
  bool strict_options = false;
  if (ct->like.n > 0) {
    const dp_table_def *src = NULL;
    if ((rc = find_like(c, d, &ct->like, &src)) != DIPPER_OK) return rc;
    if ((rc = dp_catalog_like_source(c, d, ct, src, &like, &strict_options)) != DIPPER_OK) return rc;
  }

  rc = declare_columns(c, d, ct, like, t);
  if (rc == DIPPER_NOMEM) return rc;
  int nlike = like ? like->schema.ncols : 0;
  for (int i = nlike; i < t->schema.ncols; i++) {
    if (t->cols[i].kind == DP_CK_COMPUTED) continue;
    if (!t->schema.cols[i].type) {
      keep(&rc, dp_error(d, DIPPER_INTERNAL, t->cols[i].span, "column `%s` reached the catalog "
                         "without a type", t->schema.cols[i].name));
      t->schema.cols[i].type = dp_type_of(DP_T_NULL);
      continue;
    }
    const dp_type *ty = copy_type(c->arena, t->schema.cols[i].type);
    if (!ty) return DIPPER_NOMEM;
    t->schema.cols[i].type = ty;
  }
  int step = bind_computed(c, d, ct, nlike, t);
  if (step == DIPPER_NOMEM) return step;
  keep(&rc, step);
  step = check_watermark(c, d, ct, like, t);
  if (step == DIPPER_NOMEM) return step;
  keep(&rc, step);
  step = check_primary_key(c, d, ct, like, nlike, t);
  if (step == DIPPER_NOMEM) return step;
  keep(&rc, step);
  step = check_partitions(c, d, ct, like, t);
  if (step == DIPPER_NOMEM) return step;
  keep(&rc, step);
  step = copy_options(c, d, ct, like, strict_options, t);
  if (step == DIPPER_NOMEM) return step;
  keep(&rc, step);
  if (rc != DIPPER_OK) return rc;
  if ((rc = dp_catalog_finish_table(c, d, t)) != DIPPER_OK) return rc;
  return dp_catalog_add_table(c, t);
}

int dp_catalog_create_table_as(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                               const dp_schema *schema) {
  if (!c || !d || !ct || !schema) return DIPPER_MISUSE;
  dp_table_def *t = dp_arena_calloc(c->arena, 1, sizeof *t);
  if (!t) return DIPPER_NOMEM;
  int rc = new_table_path(c, d, ct, t);
  if (rc != DIPPER_OK) return rc == 1 ? DIPPER_OK : rc;
  int n = schema->ncols;
  t->schema.ncols = n;
  t->schema.cols = dp_arena_calloc(c->arena, (size_t)(n ? n : 1), sizeof *t->schema.cols);
  t->cols = dp_arena_calloc(c->arena, (size_t)(n ? n : 1), sizeof *t->cols);
  if (!t->schema.cols || !t->cols) return DIPPER_NOMEM;
  for (int i = 0; i < n; i++) {
    const char *name = schema->cols[i].name;
    for (int k = 0; name && k < i; k++)
      if (name_eq(t->schema.cols[k].name, name))
        return dp_error(d, DIPPER_DUPLICATE, ct->as_query->span,
                        "the query of CREATE TABLE ... AS SELECT returns column `%s` twice; give "
                        "each column its own name with AS",
                        name);
    if (!name || !*name)
      return dp_error(d, DIPPER_NAME, ct->as_query->span,
                      "column %d of the query of CREATE TABLE ... AS SELECT has no name; name it "
                      "with AS",
                      i + 1);
    t->schema.cols[i].name = dp_arena_strdup(c->arena, name);
    t->schema.cols[i].type = copy_type(c->arena, schema->cols[i].type);
    if (!t->schema.cols[i].name || !t->schema.cols[i].type) return DIPPER_NOMEM;
    t->cols[i].kind = DP_CK_PHYSICAL;
    t->cols[i].span = ct->as_query->span;
  }
  rc = copy_options(c, d, ct, NULL, false, t);
  if (rc == DIPPER_OK) rc = dp_catalog_finish_table(c, d, t);
  return rc == DIPPER_OK ? dp_catalog_add_table(c, t) : rc;
}

/* ---- CREATE VIEW ---- */

/* Parse the view's query again into the catalog arena.  `text` is the
** query's own text (cv->query_span of the script); when the diagnostics hold
** that script, the query is placed behind a blank copy of everything before it
** (newlines kept), so that every span of the view's tree has the offset, line
** and column it had where the view was written. */
static int reparse_query(dp_catalog *c, dp_diags *d, const dp_ast_create_view *cv,
                         const char *text, dp_view_def *v) {
  dp_span qs = cv->query_span;
  size_t qlen = text ? strlen(text) : qs.len;
  bool script_known = d->text && (size_t)qs.off + qs.len <= d->text_len && qs.len > 0;
  if (!text && script_known) text = d->text + qs.off;
  if (!text || qlen == 0)
    return dp_error(d, DIPPER_INTERNAL, cv->name.span,
                    "CREATE VIEW reached the catalog without the text of its query");
  bool same = script_known && qlen == qs.len && memcmp(d->text + qs.off, text, qlen) == 0;
  size_t prefix = same ? qs.off : 0;
  size_t end = prefix + qlen;
  char *buf = dp_arena_alloc(c->arena, end + 1);
  if (!buf) return DIPPER_NOMEM;
  for (size_t i = 0; i < prefix; i++)
    buf[i] = (d->text[i] == '\n' || d->text[i] == '\r') ? d->text[i] : ' ';
  memcpy(buf + prefix, text, qlen);
  buf[end] = '\0';
  v->text = buf + prefix;

  dp_arena *scratch = dp_arena_new(0);
  if (!scratch) return DIPPER_NOMEM;
  dp_diags pd;
  dp_diags_init(&pd, scratch, d->file, buf, end);
  dp_ast_script *script = NULL;
  int rc = dp_parse(c->arena, &pd, buf, end, &script);
  if (rc == DIPPER_OK && script && script->n == 1 && script->stmts[0]->kind == DP_AS_QUERY) {
    v->query = script->stmts[0]->u.query;
  } else if (rc == DIPPER_NOMEM) {
    dp_span nowhere = {0, 0, 0, 0};
    dp_error(d, DIPPER_NOMEM, nowhere, "out of memory while keeping view `%s`", v->name);
  } else {
    rc = dp_error(d, DIPPER_INTERNAL, qs,
                  "the query of view `%s` did not parse again on its own (%s); please report this",
                  v->name, pd.count > 0 ? pd.items[0].message : "not a single query");
  }
  dp_arena_free(scratch);
  return rc;
}

int dp_catalog_create_view(dp_catalog *c, dp_diags *d, const dp_ast_create_view *cv,
                           const char *text) {
  if (!c || !d || !cv) return DIPPER_MISUSE;
  const dp_ast_ident *nm = last_part(&cv->name);
  if (!nm) return DIPPER_MISUSE;
  bool replace = false;
  dp_qname q;
  int rc = dp_catalog_resolve(c, d, &cv->name, &q);
  if (rc != DIPPER_OK) return rc;
  if (dp_catalog_table_in(c, &q)) {
    if (cv->if_not_exists) return DIPPER_OK;
    return dp_error(d, DIPPER_DUPLICATE, nm->span,
                    "a table named `%s` already exists and views share its namespace; choose "
                    "another name for the view, or DROP TABLE %s first",
                    nm->name, nm->name);
  }
  if (dp_catalog_view_in(c, &q)) {
    if (cv->if_not_exists) return DIPPER_OK;
    if (!cv->or_replace)
      return dp_error(d, DIPPER_DUPLICATE, nm->span,
                      "view `%s` already exists; write CREATE OR REPLACE VIEW to redefine it, or "
                      "CREATE VIEW IF NOT EXISTS to keep it",
                      nm->name);
    replace = true;
  }
  dp_view_def *v = dp_arena_calloc(c->arena, 1, sizeof *v);
  if (!v) return DIPPER_NOMEM;
  v->name = dp_arena_strdup(c->arena, nm->name);
  if (!v->name) return DIPPER_NOMEM;
  v->catalog_name = q.catalog;
  v->database_name = q.database;
  v->temporary = cv->temporary;
  v->span = nm->span;
  if (cv->ncols > 0) {
    v->cols = dp_arena_calloc(c->arena, (size_t)cv->ncols, sizeof *v->cols);
    if (!v->cols) return DIPPER_NOMEM;
    for (int i = 0; i < cv->ncols; i++) {
      for (int k = 0; k < i; k++)
        if (name_eq(cv->cols[k].name, cv->cols[i].name)) {
          keep(&rc, dp_error(d, DIPPER_DUPLICATE, cv->cols[i].span,
                             "view column `%s` is named twice; give each column its own name",
                             cv->cols[i].name));
          break;
        }
      v->cols[i] = dp_arena_strdup(c->arena, cv->cols[i].name);
      if (!v->cols[i]) return DIPPER_NOMEM;
    }
    v->ncols = cv->ncols;
  }
  if (rc != DIPPER_OK) return rc;
  rc = reparse_query(c, d, cv, text, v);
  if (rc != DIPPER_OK) return rc;
  if (replace) dp_catalog_drop_in(c, 'V', &q);
  return dp_catalog_add_view(c, v);
}

/* ---- DROP ---- */

int dp_catalog_drop_stmt(dp_catalog *c, dp_diags *d, const dp_ast_drop *dr) {
  if (!c || !d || !dr) return DIPPER_MISUSE;
  const dp_ast_ident *nm = last_part(&dr->name);
  if (!nm) return DIPPER_MISUSE;
  if (dr->what == 'F') return dp_catalog_drop_function_stmt(c, d, dr);
  if (dr->what == 'D' || dr->what == 'C') return dp_catalog_drop_namespace(c, d, dr);
  const char *kind = dr->what == 'V' ? "view" : "table";
  const char *kw = dr->what == 'V' ? "VIEW" : "TABLE";
  dp_qname q;
  int rc = dp_catalog_resolve(c, d, &dr->name, &q);
  if (rc != DIPPER_OK) return dr->if_exists && dr->name.n > 1 ? DIPPER_OK : rc;
  const dp_table_def *t = dp_catalog_table_in(c, &q);
  const dp_view_def *v = dp_catalog_view_in(c, &q);
  if (dr->what == 'T' && !t && v)
    return dp_error(d, DIPPER_NAME, nm->span, "`%s` is a view, not a table; write DROP VIEW %s",
                    nm->name, nm->name);
  if (dr->what == 'V' && !v && t)
    return dp_error(d, DIPPER_NAME, nm->span, "`%s` is a table, not a view; write DROP TABLE %s",
                    nm->name, nm->name);
  if ((dr->what == 'T' && !t) || (dr->what == 'V' && !v)) {
    if (dr->if_exists) return DIPPER_OK;
    char hint[160];
    return dp_error(d, DIPPER_NAME, nm->span, "%s `%s` does not exist%s (write DROP %s IF EXISTS "
                    "to ignore a missing one)",
                    kind, nm->name, did_you_mean(hint, sizeof hint, dp_catalog_suggest(c, nm->name)),
                    kw);
  }
  bool temporary = dr->what == 'T' ? t->temporary : v->temporary;
  if (dr->temporary && !temporary)
    return dp_error(d, DIPPER_NAME, nm->span,
                    "%s `%s` is not temporary; write DROP %s %s", kind, nm->name, kw, nm->name);
  /* Views that read the table stay: like Flink, a view is re-bound at each
     use and fails then with an unknown table, naming it. */
  return dp_catalog_drop_in(c, dr->what, &q);
}
