/*
** udf.h — user-defined functions as the catalog keeps them: SQL functions
** (CREATE FUNCTION f(a INT) RETURNS INT RETURN expr), C functions
** (dipper_create_scalar_function / _aggregate_function) and Java functions
** for Spark (CREATE FUNCTION f(a T, ..) RETURNS T AS 'com.example.F' [USING
** JAR 'path'], or Flink's form without the types, whose calls are refused).
**
** A SQL function is a macro of the binder: each call is replaced by its body
** with the parameters bound to the (cast) arguments, so the plan holds only
** built-ins and both engines run it.  A C function is a catalog entry of its
** own (a dp_func whose `cfunc` points back here): the plan calls it and the
** embedded executor runs its callbacks (exec/eval_udf.c, exec/agg_cfunc.c).
** A Java function is a catalog entry too (`java`), which the Spark backend
** registers in its session and calls by name (spark/udf.h); a scalar one or
** an aggregate, as its class in the jar says (spark/jar.h).
**
** Lifetime of a C function: reference-counted.  The catalog holds one
** reference while the name is defined; every statement bound with a call of
** it holds one more (dp_query_plan.udfs, released by dp_udf_release_plan when
** its program is freed), so a function replaced or dropped while a program
** still uses it stays alive for that program, and its destroy callback runs
** once the last reference goes.
**
** Owns: the definitions and the call context of the C callbacks.  Does not
** own: the name index (catalog_func.c), binding calls (bind_udf.c).
*/
#ifndef DP_UDF_H
#define DP_UDF_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/arena.h"
#include "core/types.h"
#include "dipper.h"
#include "plan/functions.h"
#include "plan/plan.h"
#include "sql/ast.h"

/* A C function (scalar or aggregate). */
typedef struct dp_cfunc {
  dp_func fn;                   /* the catalog entry: fn.cfunc == this, fn.params == arg_types */
  atomic_int refs;
  dp_arena *arena;              /* the name, the types, the signature */
  const char *name;
  int nargs;
  const dp_type **arg_types;
  const dp_type *ret;
  bool aggregate;
  dipper_scalar_fn scalar;
  dipper_aggregate_fns agg;     /* aggregates: the callbacks, copied */
  size_t state_stride;          /* state_size rounded up to 16 */
  void *user;
  dipper_free_fn destroy;
} dp_cfunc;

/* A new C function with one reference (the caller's); NULL when out of
** memory.  types are copied; `agg` is NULL for a scalar function. */
dp_cfunc *dp_cfunc_new(const char *name, int nargs, const dp_type *const *types, const dp_type *ret,
                       bool deterministic, dipper_scalar_fn scalar, const dipper_aggregate_fns *agg,
                       void *user, dipper_free_fn destroy);
void dp_cfunc_retain(dp_cfunc *f);
/* Drop a reference; the last one calls destroy(user) and frees f. */
void dp_cfunc_release(dp_cfunc *f);

/* What a C callback gets as its dipper_function_ctx. */
struct dipper_function_ctx {
  const dp_cfunc *f;
  char *message;                /* dipper_function_error's, malloc'd, or NULL */
  int64_t row;                  /* its row, -1 none */
};

typedef enum dp_udf_kind { DP_UDF_SQL, DP_UDF_C, DP_UDF_JAVA } dp_udf_kind;

/* One user-defined function of the catalog. */
typedef struct dp_udf_def {
  const char *name;
  dp_udf_kind kind;
  bool temporary;
  dp_span span;                 /* the name where it was created (line 0 from the API) */
  /* SQL and typed JAVA: the parameters and the result type; SQL: the body
  ** (its tree in the catalog arena, spans as where it was written) */
  int nparams;
  const char **params;
  const dp_type **param_types;
  const dp_type *returns;
  const dp_ast_expr *body;
  const char *text;             /* the CREATE FUNCTION statement's text, as parsed again */
  /* C */
  dp_cfunc *cfunc;              /* one reference held by the catalog */
  /* JAVA: the class, and the jar to upload (or NULL: on the server's class path) */
  const char *class_name;
  const char *jar;
  const char *language;
  bool aggregate;               /* the jar's class extends Spark's UserDefinedAggregateFunction
                                   (spark/jar.h reads it at CREATE FUNCTION) */
  dp_func *jfn;                 /* declared types: the catalog entry calls are bound to (id
                                   DP_F_COUNT_, fn->java == this); NULL for Flink's untyped form */
} dp_udf_def;

/* The catalog entry of a Java function with declared types, in `a`. */
dp_func *dp_udf_java_func(dp_arena *a, const dp_udf_def *f);

/* Add a reference to f to the list (plan.h's dp_udf_refs, in `a`);
** dp_udf_release_plan gives back every reference of q's list and empties it. */
int dp_udf_refs_add(dp_arena *a, dp_udf_refs *r, dp_cfunc *f);
void dp_udf_release_plan(dp_query_plan *q);

#endif /* DP_UDF_H */
