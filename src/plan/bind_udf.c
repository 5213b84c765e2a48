/*
** bind_udf.c — user-defined functions in the binder: CREATE FUNCTION's
** checks, and calls of SQL, C and Java functions.
**
** A SQL function is expanded where it is called: its body is bound in a
** scope holding only its parameters, each a virtual column standing for its
** argument cast to the parameter's type, and the result is cast to the
** RETURNS type.  So the plan (and EXPLAIN) shows the expansion, both engines
** run it, and nothing of the function is left at run time.  Recursion is
** refused: the functions being expanded are kept on the binder, and a call
** of one of them (directly or through others) is an error naming the chain.
**
** Owns: the rules of a call of a user-defined function.  Does not own: the
** definitions (catalog_func.c) and C functions' callbacks (exec/).
*/
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "plan/binder_int.h"
#include "plan/udf.h"

static const char *call_name(const dp_ast_expr *e) { return dp_bind_last_part(&e->u.call.name); }

static const char *signature(dp_binder *b, const dp_udf_def *f) {
  const char *s = dp_arena_printf(b->a, "%s(", f->name);
  for (int i = 0; s && i < f->nparams; i++)
    s = dp_arena_printf(b->a, "%s%s%s %s", s, i ? ", " : "", f->params[i],
                        dp_bind_type_str(b, f->param_types[i]));
  return s ? dp_arena_printf(b->a, "%s) RETURNS %s", s, dp_bind_type_str(b, f->returns)) : "";
}

/* Is `name` being expanded now?  The chain "f → g → f" in *chain then. */
static bool expanding(dp_binder *b, const char *name, const char **chain) {
  for (int i = 0; i < b->nfuncs; i++)
    if (dp_bind_name_eq(b->funcs[i], name)) {
      const char *s = "";
      for (int k = i; s && k < b->nfuncs; k++) s = dp_arena_printf(b->a, "%s%s → ", s, b->funcs[k]);
      *chain = s ? dp_arena_printf(b->a, "%s%s", s, name) : name;
      return true;
    }
  return false;
}

/* The argument cast to its parameter's type: only what converts implicitly
** (a NULL, a quoted literal read as the type, a widening cast). */
static dp_expr *coerce_arg(dp_binder *b, const char *fname, int i, dp_expr *arg, const dp_type *t) {
  const dp_type *from = arg->type;
  bool ok = dp_type_equal(from, t) || from->kind == DP_T_NULL || dp_type_can_coerce(from, t) ||
            (arg->kind == DP_E_LITERAL && dp_type_is_string(from));
  if (!ok)
    return dp_bind_fail(b, DIPPER_TYPE, arg->span,
                        "argument %d of %s must be %s: %s does not convert to it without a CAST", i + 1,
                        fname, dp_bind_type_str(b, t), dp_bind_type_str(b, from));
  return dp_bind_coerce(b, arg, t, fname);
}

static bool plain_call(dp_binder *b, const dp_ast_expr *e, const char *what) {
  if (e->u.call.over || e->u.call.distinct || e->u.call.filter || e->u.call.star) {
    dp_bind_err(b, DIPPER_TYPE, e->span,
                "%s is %s: OVER, DISTINCT, FILTER and * apply to aggregates only", call_name(e), what);
    return false;
  }
  return true;
}

bool dp_bind_udf_recursive(dp_binder *b, const dp_ast_expr *e) {
  const char *chain = NULL, *name = call_name(e);
  if (!expanding(b, name, &chain)) return false;
  dp_bind_err(b, DIPPER_TYPE, e->span,
              "function %s calls itself (%s); recursion is not supported: write the body without a "
              "call of %s",
              name, chain, name);
  return true;
}

static dp_expr *expand_sql(dp_bexpr *x, const dp_ast_expr *e, const dp_udf_def *f) {
  dp_binder *b = x->b;
  if (!plain_call(b, e, "a scalar SQL function")) return NULL;
  if (b->nfuncs >= (int)(sizeof b->funcs / sizeof b->funcs[0]))
    return dp_bind_fail(b, DIPPER_LIMIT, e->span, "SQL functions nest more than %d deep here",
                        (int)(sizeof b->funcs / sizeof b->funcs[0]));
  int nargs = e->u.call.nargs;
  if (nargs != f->nparams)
    return dp_bind_fail(b, DIPPER_TYPE, e->span, "%s takes %d argument%s, not %d: %s", f->name,
                        f->nparams, f->nparams == 1 ? "" : "s", nargs, signature(b, f));
  dp_bscope sc;
  memset(&sc, 0, sizeof sc);
  bool ok = true;
  for (int i = 0; i < nargs; i++) {
    dp_expr *arg = dp_bind_expr(x, e->u.call.args[i]);
    if (arg) arg = coerce_arg(b, f->name, i, arg, f->param_types[i]);
    if (!arg) {
      ok = false;
      continue;
    }
    dp_bscope_add(b, &sc, NULL, f->params[i], arg->type, -1, arg);
  }
  if (!ok) return NULL;
  dp_bexpr inner;
  dp_bexpr_init(&inner, b, &sc, 0, dp_arena_printf(b->a, "the body of function %s", f->name));
  b->funcs[b->nfuncs++] = f->name;
  dp_expr *body = dp_bind_expr(&inner, f->body);
  b->nfuncs--;
  if (!body)
    return dp_bind_fail(b, b->first_error ? b->first_error : DIPPER_TYPE, e->span,
                        "this call of %s expands its body (line %u), which failed as said above",
                        f->name, (unsigned)f->body->span.line);
  const dp_type *rt = dp_type_with_nullability(b->a, f->returns, body->type->not_null);
  dp_expr *r = dp_type_equal(body->type, rt) ? body : dp_bind_cast(b, body, rt, false, e->span);
  if (r) r->span = e->span;
  return r;
}

/* A Java function's call, noted on the statement (the Spark backend
** registers it, the embedded engine refuses it); false when it cannot be
** called (Flink's form without types) or out of memory. */
static bool note_java(dp_binder *b, const dp_ast_expr *e, const dp_udf_def *f) {
  if (!f->jfn) {
    dp_bind_err(b, DIPPER_TYPE, e->span,
                "function %s (the Java class '%s') was created without its types, which "
                "dipper needs to check the query: create it as CREATE FUNCTION %s(a STRING, "
                "..) RETURNS INT AS '%s'%s",
                f->name, f->class_name, f->name, f->class_name, f->jar ? " USING JAR '..'" : "");
    return false;
  }
  for (int i = 0; i < b->njava; i++)
    if (b->java[i] == f) return true;
  if (b->njava == b->capjava) {
    int cap = b->capjava ? b->capjava * 2 : 4;
    const dp_udf_def **g = dp_arena_grow(b->a, b->java, (size_t)b->capjava, (size_t)cap, sizeof *g);
    if (!g) {
      dp_bind_err(b, DIPPER_NOMEM, e->span, "out of memory");
      return false;
    }
    b->java = g;
    b->capjava = cap;
  }
  if (b->njava == 0) b->java_span = e->span;
  b->java[b->njava++] = f;
  return true;
}

const dp_func *dp_bind_cfunc(dp_binder *b, const dp_udf_def *f, const dp_ast_expr *e) {
  if (f->kind == DP_UDF_JAVA) /* a Java aggregate: bound as the built-in ones are */
    return note_java(b, e, f) ? f->jfn : NULL;
  if (!b->q)
    return dp_bind_fail(b, DIPPER_UNSUPPORTED, e->span,
                        "C function %s cannot be used in a table's computed column or watermark: "
                        "call it in the query that reads the table",
                        f->name);
  if (dp_udf_refs_add(b->a, &b->udfs, f->cfunc) != DIPPER_OK)
    return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  return &f->cfunc->fn;
}

/* A scalar Java function: a call of its catalog entry. */
static dp_expr *bind_java(dp_bexpr *x, const dp_ast_expr *e, const dp_udf_def *f) {
  dp_binder *b = x->b;
  if (!note_java(b, e, f)) return NULL;
  if (!plain_call(b, e, "a scalar Java function")) return NULL;
  int nargs = e->u.call.nargs;
  dp_expr **args = dp_arena_calloc(b->a, (size_t)(nargs ? nargs : 1), sizeof *args);
  if (!args) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = dp_bind_expr(x, e->u.call.args[i]))) ok = false;
  if (!ok) return NULL;
  return dp_bind_call_fn(b, f->jfn, nargs, args, e->span);
}

dp_expr *dp_bind_udf_call(dp_bexpr *x, const dp_ast_expr *e, const dp_udf_def *f) {
  if (f->kind == DP_UDF_SQL) return expand_sql(x, e, f);
  return bind_java(x, e, f);
}

/* ---- CREATE FUNCTION ---- */

static int check_sql_body(dp_binder *b, const dp_ast_create_function *cf, const char *name) {
  dp_bscope sc;
  memset(&sc, 0, sizeof sc);
  for (int i = 0; i < cf->nparams; i++) {
    for (int k = 0; k < i; k++)
      if (dp_bind_name_eq(cf->params[k].name, cf->params[i].name))
        return dp_bind_err(b, DIPPER_DUPLICATE, cf->params[i].span,
                           "parameter `%s` is named twice; give each parameter its own name",
                           cf->params[i].name);
    dp_bscope_add(b, &sc, NULL, cf->params[i].name, dp_bind_nullable(b, cf->param_types[i]), i, NULL);
  }
  dp_bexpr x;
  dp_bexpr_init(&x, b, &sc, 0, dp_arena_printf(b->a, "the body of function %s", name));
  b->funcs[b->nfuncs++] = name;
  dp_expr *body = dp_bind_expr(&x, cf->body);
  b->nfuncs--;
  if (!body) return b->first_error ? b->first_error : DIPPER_TYPE;
  if (body->type->kind != DP_T_NULL && !dp_type_equal(body->type, cf->returns) &&
      !dp_type_can_cast(body->type, cf->returns))
    return dp_bind_err(b, DIPPER_TYPE, cf->body->span,
                       "the body of %s is %s, which cannot be CAST to its RETURNS type %s", name,
                       dp_bind_type_str(b, body->type), dp_bind_type_str(b, cf->returns));
  return DIPPER_OK;
}

int dp_bind_create_function(dp_binder *b, dp_catalog *cat, const dp_ast_stmt *s) {
  const dp_ast_create_function *cf = &s->u.create_function;
  const dp_ast_ident *nm = &cf->name.parts[cf->name.n - 1];
  if (dp_func_lookup(nm->name))
    return dp_bind_err(b, DIPPER_DUPLICATE, nm->span,
                       "`%s` is a built-in function; choose another name for yours", nm->name);
  const dp_udf_def *old = dp_catalog_function(cat, nm->name);
  if (old) {
    if (cf->if_not_exists) return DIPPER_OK;
    return dp_bind_err(b, DIPPER_DUPLICATE, nm->span,
                       "function `%s` already exists; DROP FUNCTION %s first, or write CREATE "
                       "FUNCTION IF NOT EXISTS to keep it",
                       nm->name, nm->name);
  }
  for (int i = 0; !cf->body && i < cf->nparams; i++)
    for (int k = 0; k < i; k++)
      if (dp_bind_name_eq(cf->params[k].name, cf->params[i].name))
        return dp_bind_err(b, DIPPER_DUPLICATE, cf->params[i].span,
                           "parameter `%s` is named twice; give each parameter its own name",
                           cf->params[i].name);
  /* The jar is read when a query that calls the function runs on Spark: a
  ** path that cannot be read is better said now, at its place. */
  if (cf->jar && access(cf->jar, R_OK) != 0)
    return dp_bind_err(b, DIPPER_IO, cf->jar_span, "cannot read the jar '%s': %s", cf->jar,
                       strerror(errno));
  if (cf->body) {
    int rc = check_sql_body(b, cf, nm->name);
    if (rc != DIPPER_OK) return rc;
  } else if (cf->language && !dp_bind_name_eq(cf->language, "JAVA") &&
             !dp_bind_name_eq(cf->language, "SCALA")) {
    return dp_bind_err(b, DIPPER_UNSUPPORTED, s->span,
                       "LANGUAGE %s functions are not supported: write the function in SQL "
                       "(CREATE FUNCTION f(a INT) RETURNS INT RETURN ..), in C "
                       "(dipper_create_scalar_function) or as a Java class for Spark",
                       cf->language);
  }
  int rc = dp_catalog_create_function(cat, b->d, s);
  if (rc != DIPPER_OK && !b->first_error) b->first_error = rc;
  return rc;
}
