/*
** catalog_func.c — the user-defined functions of a session (plan/udf.h):
** their name index, CREATE FUNCTION's definitions kept, DROP FUNCTION, and
** the reference counts of C functions.
**
** Owns: dp_udf_def records and the catalog's reference of each C function.
** Does not own: checking a SQL function's body (bind_udf.c binds it before
** the definition gets here) nor the callbacks (api/function.c, exec/).
**
** A SQL function's body is parsed again into the catalog arena from the text
** of its CREATE statement, behind a blank copy of the script before it
** (newlines kept), as a view's query is (catalog.c says why): every span of
** the kept tree has the line and column it had where it was written, so an
** error found when a call expands it points into the definition.
*/
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "plan/catalog.h"
#include "plan/catalog_int.h"
#include "plan/udf.h"
#include "spark/jar.h"
#include "sql/parser.h"

static int lower(int ch) { return (ch >= 'A' && ch <= 'Z') ? ch + ('a' - 'A') : ch; }

static int name_cmp(const char *a, const char *b) {
  for (;; a++, b++) {
    int x = lower((unsigned char)*a), y = lower((unsigned char)*b);
    if (x != y || x == 0) return x - y;
  }
}

/* Index of name, or -(insertion point) - 1. */
static int slot(const dp_catalog *c, const char *name) {
  int lo = 0, hi = c->nfuncs - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    int cmp = name_cmp(c->funcs[mid]->name, name);
    if (cmp == 0) return mid;
    if (cmp < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -lo - 1;
}

const dp_udf_def *dp_catalog_function(const dp_catalog *c, const char *name) {
  if (!c || !name) return NULL;
  int i = slot(c, name);
  return i >= 0 ? c->funcs[i] : NULL;
}

int dp_catalog_function_count(const dp_catalog *c) { return c ? c->nfuncs : 0; }

const dp_udf_def *dp_catalog_function_at(const dp_catalog *c, int i) {
  return c && i >= 0 && i < c->nfuncs ? c->funcs[i] : NULL;
}

int dp_catalog_add_function(dp_catalog *c, dp_udf_def *f) {
  if (!c || !f || !f->name) return DIPPER_MISUSE;
  int at = slot(c, f->name);
  if (at >= 0 || dp_func_lookup(f->name)) return DIPPER_DUPLICATE;
  at = -at - 1;
  if (dp_arena_grow_i(c->arena, &c->funcs, &c->funcs_cap, c->nfuncs + 1, sizeof *c->funcs, 8))
    return DIPPER_NOMEM;
  memmove(c->funcs + at + 1, c->funcs + at, (size_t)(c->nfuncs - at) * sizeof *c->funcs);
  c->funcs[at] = f;
  c->nfuncs++;
  return DIPPER_OK;
}

int dp_catalog_drop_function(dp_catalog *c, const char *name) {
  if (!c || !name) return DIPPER_MISUSE;
  int i = slot(c, name);
  if (i < 0) return DIPPER_NAME;
  dp_udf_def *f = c->funcs[i];
  memmove(c->funcs + i, c->funcs + i + 1, (size_t)(c->nfuncs - i - 1) * sizeof *c->funcs);
  c->nfuncs--;
  if (f->cfunc) dp_cfunc_release(f->cfunc);
  f->cfunc = NULL;
  return DIPPER_OK;
}

int dp_catalog_put_cfunc(dp_catalog *c, dp_cfunc *cf) {
  if (!c || !cf) return DIPPER_MISUSE;
  if (dp_func_lookup(cf->name)) return DIPPER_DUPLICATE;
  const dp_udf_def *old = dp_catalog_function(c, cf->name);
  if (old && old->kind != DP_UDF_C) return DIPPER_DUPLICATE;
  dp_udf_def *f = dp_arena_calloc(c->arena, 1, sizeof *f);
  if (!f || !(f->name = dp_arena_strdup(c->arena, cf->name))) return DIPPER_NOMEM;
  f->kind = DP_UDF_C;
  f->temporary = true;
  f->cfunc = cf;
  if (old) dp_catalog_drop_function(c, cf->name);
  int rc = dp_catalog_add_function(c, f);
  if (rc != DIPPER_OK) f->cfunc = NULL;
  return rc;
}

void dp_catalog_free_functions(dp_catalog *c) {
  for (int i = 0; c && i < c->nfuncs; i++)
    if (c->funcs[i]->cfunc) {
      dp_cfunc_release(c->funcs[i]->cfunc);
      c->funcs[i]->cfunc = NULL;
    }
  if (c) c->nfuncs = 0;
}

/* ---- DROP FUNCTION ---- */

int dp_catalog_drop_function_stmt(dp_catalog *c, dp_diags *d, const dp_ast_drop *dr) {
  const dp_ast_ident *nm = dr->name.n > 0 ? &dr->name.parts[dr->name.n - 1] : NULL;
  if (!nm) return DIPPER_MISUSE;
  const dp_udf_def *f = dp_catalog_function(c, nm->name);
  if (!f) {
    if (dr->if_exists) return DIPPER_OK;
    if (dp_func_lookup(nm->name))
      return dp_error(d, DIPPER_NAME, nm->span,
                      "`%s` is a built-in function, which cannot be dropped", nm->name);
    return dp_error(d, DIPPER_NAME, nm->span,
                    "function `%s` does not exist (write DROP FUNCTION IF EXISTS to ignore a "
                    "missing one)",
                    nm->name);
  }
  if (dr->temporary && !f->temporary)
    return dp_error(d, DIPPER_NAME, nm->span, "function `%s` is not temporary; write DROP FUNCTION %s",
                    nm->name, nm->name);
  return dp_catalog_drop_function(c, nm->name);
}

/* ---- CREATE FUNCTION ---- */

/* The statement's text behind a blank copy of the script before it, parsed
** again into the catalog arena; its CREATE FUNCTION node in *out. */
static int reparse(dp_catalog *c, dp_diags *d, const dp_ast_stmt *s,
                   const dp_ast_create_function **out, const char **text) {
  dp_span sp = s->span;
  if (!d->text || (size_t)sp.off + sp.len > d->text_len || sp.len == 0)
    return dp_error(d, DIPPER_INTERNAL, sp,
                    "CREATE FUNCTION reached the catalog without the text of its statement");
  size_t end = (size_t)sp.off + sp.len;
  char *buf = dp_arena_alloc(c->arena, end + 1);
  if (!buf) return DIPPER_NOMEM;
  for (size_t i = 0; i < sp.off; i++)
    buf[i] = (d->text[i] == '\n' || d->text[i] == '\r') ? d->text[i] : ' ';
  memcpy(buf + sp.off, d->text + sp.off, sp.len);
  buf[end] = '\0';
  *text = buf + sp.off;
  dp_arena *scratch = dp_arena_new(0);
  if (!scratch) return DIPPER_NOMEM;
  dp_diags pd;
  dp_diags_init(&pd, scratch, d->file, buf, end);
  dp_ast_script *script = NULL;
  int rc = dp_parse(c->arena, &pd, buf, end, &script);
  if (rc == DIPPER_OK && script && script->n == 1 && script->stmts[0]->kind == DP_AS_CREATE_FUNCTION)
    *out = &script->stmts[0]->u.create_function;
  else
    rc = dp_error(d, DIPPER_INTERNAL, sp,
                  "CREATE FUNCTION did not parse again on its own (%s); please report this",
                  pd.count > 0 ? pd.items[0].message : "not one statement");
  dp_arena_free(scratch);
  return rc;
}

/* A Java function is scalar or an aggregate as its class in the jar says
** (spark/jar.h): Flink's CREATE FUNCTION has no word for it.  A jar that
** cannot be read or decoded here is left to its upload, which says why; a
** class that is not in the jar (on the server's class path) is scalar, as
** Spark's registerJava takes it (the server says so when it is not one). */
static int java_kind(dp_diags *d, dp_udf_def *f) {
  if (!f->jar) return DIPPER_OK;
  dp_buf why = DP_BUF_INIT;
  dp_java_kind k = DP_JAVA_UNKNOWN;
  int rc = dp_jar_file_kind(f->jar, f->class_name, &k, &why);
  dp_buf_free(&why);
  if (rc == DIPPER_NOMEM) return rc;
  if (rc != DIPPER_OK) return DIPPER_OK;
  if (k == DP_JAVA_AGGREGATOR)
    return dp_error(d, DIPPER_UNSUPPORTED, f->span,
                    "function %s: the class '%s' extends Spark's Aggregator, which Spark Connect "
                    "cannot register from a class name (its JavaUDF aggregate takes a "
                    "UserDefinedAggregateFunction only, and an Aggregator needs its encoders "
                    "from Scala); extend org.apache.spark.sql.expressions."
                    "UserDefinedAggregateFunction instead",
                    f->name, f->class_name);
  f->aggregate = k == DP_JAVA_UDAF;
  return DIPPER_OK;
}

int dp_catalog_create_function(dp_catalog *c, dp_diags *d, const dp_ast_stmt *s) {
  if (!c || !d || !s || s->kind != DP_AS_CREATE_FUNCTION) return DIPPER_MISUSE;
  const dp_ast_create_function *cf = &s->u.create_function;
  const dp_ast_ident *nm = cf->name.n > 0 ? &cf->name.parts[cf->name.n - 1] : NULL;
  if (!nm) return DIPPER_MISUSE;
  dp_udf_def *f = dp_arena_calloc(c->arena, 1, sizeof *f);
  if (!f || !(f->name = dp_arena_strdup(c->arena, nm->name))) return DIPPER_NOMEM;
  f->temporary = cf->temporary;
  f->span = nm->span;
  if (!cf->body) {
    f->kind = DP_UDF_JAVA;
    f->class_name = dp_arena_strdup(c->arena, cf->class_name);
    f->jar = cf->jar ? dp_arena_strdup(c->arena, cf->jar) : NULL;
    f->language = cf->language ? dp_arena_strdup(c->arena, cf->language) : NULL;
    if (!f->class_name || (cf->jar && !f->jar) || (cf->language && !f->language)) return DIPPER_NOMEM;
    int krc = java_kind(d, f);
    if (krc != DIPPER_OK) return krc;
    if (!cf->returns) return dp_catalog_add_function(c, f); /* Flink's form: no types */
  }
  const dp_ast_create_function *kept = NULL;
  int rc = reparse(c, d, s, &kept, &f->text);
  if (rc != DIPPER_OK) return rc;
  if (!cf->body) f->kind = DP_UDF_JAVA;
  else f->kind = DP_UDF_SQL;
  f->nparams = kept->nparams;
  f->params = dp_arena_calloc(c->arena, (size_t)(kept->nparams ? kept->nparams : 1), sizeof *f->params);
  if (!f->params) return DIPPER_NOMEM;
  for (int i = 0; i < kept->nparams; i++) f->params[i] = kept->params[i].name;
  f->param_types = kept->param_types;
  f->returns = kept->returns;
  f->body = kept->body;
  if (f->kind == DP_UDF_JAVA && !(f->jfn = dp_udf_java_func(c->arena, f))) return DIPPER_NOMEM;
  return dp_catalog_add_function(c, f);
}
