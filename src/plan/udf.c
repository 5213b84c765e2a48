/*
** udf.c — C functions as catalog entries (plan/udf.h): their dp_func, type
** rule and reference counts.
*/
#include "plan/udf.h"
#include "core/grow.h"

#include <stdlib.h>
#include <string.h>

static const dp_type *copy_type(dp_arena *a, const dp_type *t) {
  if (!t) return NULL;
  dp_type *c = dp_arena_alloc(a, sizeof *c);
  if (!c) return NULL;
  *c = *t;
  if (t->elem && !(c->elem = copy_type(a, t->elem))) return NULL;
  if (t->value && !(c->value = copy_type(a, t->value))) return NULL;
  if (t->nfields > 0) {
    dp_field *f = dp_arena_calloc(a, (size_t)t->nfields, sizeof *f);
    if (!f) return NULL;
    for (int i = 0; i < t->nfields; i++) {
      f[i].name = dp_arena_strdup(a, t->fields[i].name);
      if (!(f[i].type = copy_type(a, t->fields[i].type))) return NULL;
    }
    c->fields = f;
  }
  return c;
}

/* The type rule of every C function: its declared parameters, each argument
** implicitly castable to its parameter; the declared result, nullable. */
static const dp_type *infer(dp_arena *a, const dp_func *fn, int nargs, const dp_type *const *args,
                            const char **why) {
  const dp_cfunc *f = fn->cfunc;
  if (nargs != f->nargs) {
    if (why) *why = dp_arena_printf(a, "it takes %d argument%s", f->nargs, f->nargs == 1 ? "" : "s");
    return NULL;
  }
  for (int i = 0; i < nargs; i++)
    if (args[i]->kind != DP_T_NULL && !dp_type_equal(args[i], f->arg_types[i]) &&
        !dp_type_can_coerce(args[i], f->arg_types[i])) {
      if (why)
        *why = dp_arena_printf(a, "argument %d is %s, which does not convert to %s without a CAST",
                               i + 1, dp_type_format(a, args[i]), dp_type_format(a, f->arg_types[i]));
      return NULL;
    }
  return dp_type_with_nullability(a, f->ret, false);
}

dp_cfunc *dp_cfunc_new(const char *name, int nargs, const dp_type *const *types, const dp_type *ret,
                       bool deterministic, dipper_scalar_fn scalar, const dipper_aggregate_fns *agg,
                       void *user, dipper_free_fn destroy) {
  dp_cfunc *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  if (!(f->arena = dp_arena_new(0))) {
    free(f);
    return NULL;
  }
  dp_arena *a = f->arena;
  atomic_init(&f->refs, 1);
  f->name = dp_arena_strdup(a, name);
  f->nargs = nargs;
  f->arg_types = dp_arena_calloc(a, (size_t)(nargs ? nargs : 1), sizeof *f->arg_types);
  f->ret = copy_type(a, dp_type_with_nullability(a, ret, false));
  bool ok = f->name && f->arg_types && f->ret;
  const char *sig = dp_arena_printf(a, "%s(", name);
  for (int i = 0; ok && i < nargs; i++) {
    ok = (f->arg_types[i] = copy_type(a, dp_type_with_nullability(a, types[i], false))) != NULL;
    if (ok) sig = dp_arena_printf(a, "%s%s%s", sig, i ? ", " : "", dp_type_format(a, types[i]));
    ok = ok && sig;
  }
  if (ok) sig = dp_arena_printf(a, "%s) RETURNS %s", sig, dp_type_format(a, f->ret));
  if (!ok || !sig) {
    dp_arena_free(a);
    free(f);
    return NULL;
  }
  f->aggregate = agg != NULL;
  f->scalar = scalar;
  if (agg) {
    f->agg = *agg;
    f->state_stride = (agg->state_size + 15) & ~(size_t)15;
  }
  f->user = user;
  f->destroy = destroy;
  f->fn.id = DP_F_COUNT_;
  f->fn.name = f->name;
  f->fn.kind = agg ? DP_FN_AGGREGATE : DP_FN_SCALAR;
  f->fn.min_args = f->fn.max_args = nargs;
  f->fn.deterministic = deterministic;
  f->fn.infer = infer;
  f->fn.signature = sig;
  f->fn.params = f->arg_types;
  f->fn.cfunc = f;
  return f;
}

void dp_cfunc_retain(dp_cfunc *f) {
  if (f) atomic_fetch_add(&f->refs, 1);
}

void dp_cfunc_release(dp_cfunc *f) {
  if (!f || atomic_fetch_sub(&f->refs, 1) != 1) return;
  if (f->destroy) f->destroy(f->user);
  dp_arena_free(f->arena);
  free(f);
}

int dp_udf_refs_add(dp_arena *a, dp_udf_refs *r, dp_cfunc *f) {
  for (int i = 0; i < r->n; i++)
    if (r->items[i] == f) return DIPPER_OK;
  if (dp_arena_grow_i(a, &r->items, &r->cap, r->n + 1, sizeof *r->items, 4)) return DIPPER_NOMEM;
  dp_cfunc_retain(f);
  r->items[r->n++] = f;
  return DIPPER_OK;
}

void dp_udf_release_plan(dp_query_plan *q) {
  if (!q) return;
  for (int i = 0; i < q->udfs.n; i++) dp_cfunc_release(q->udfs.items[i]);
  q->udfs.n = 0;
}

/* The type rule of a Java function with declared types: as a C function's. */
static const dp_type *infer_java(dp_arena *a, const dp_func *fn, int nargs, const dp_type *const *args,
                                 const char **why) {
  const dp_udf_def *f = fn->java;
  if (nargs != f->nparams) {
    if (why) *why = dp_arena_printf(a, "it takes %d argument%s", f->nparams, f->nparams == 1 ? "" : "s");
    return NULL;
  }
  for (int i = 0; i < nargs; i++)
    if (args[i]->kind != DP_T_NULL && !dp_type_equal(args[i], f->param_types[i]) &&
        !dp_type_can_coerce(args[i], f->param_types[i])) {
      if (why)
        *why = dp_arena_printf(a, "argument %d is %s, which does not convert to %s without a CAST",
                               i + 1, dp_type_format(a, args[i]), dp_type_format(a, f->param_types[i]));
      return NULL;
    }
  return dp_type_with_nullability(a, f->returns, false);
}

dp_func *dp_udf_java_func(dp_arena *a, const dp_udf_def *f) {
  dp_func *fn = dp_arena_calloc(a, 1, sizeof *fn);
  if (!fn) return NULL;
  const char *sig = dp_arena_printf(a, "%s(", f->name);
  for (int i = 0; sig && i < f->nparams; i++)
    sig = dp_arena_printf(a, "%s%s%s", sig, i ? ", " : "", dp_type_format(a, f->param_types[i]));
  if (sig) sig = dp_arena_printf(a, "%s) RETURNS %s", sig, dp_type_format(a, f->returns));
  if (!sig) return NULL;
  fn->id = DP_F_COUNT_;
  fn->name = f->name;
  fn->kind = f->aggregate ? DP_FN_AGGREGATE : DP_FN_SCALAR;
  fn->min_args = fn->max_args = f->nparams;
  fn->deterministic = true;
  fn->infer = infer_java;
  fn->signature = sig;
  fn->params = f->param_types;
  fn->java = f;
  return fn;
}
