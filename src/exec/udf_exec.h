/*
** udf_exec.h — calling user-defined C functions (plan/udf.h) from the
** executor: the arguments as Arrow C Data arrays, the answer back into a
** vector, and a failure as a diagnostic naming the function, its message and
** the row's arguments.
**
** Owns: the crossing of the public boundary for C functions.  Scalar calls
** are a kernel of the evaluator (eval_udf.c); aggregate states are kept by
** agg_cfunc.c behind agg_func.h.
*/
#ifndef DP_UDF_EXEC_H
#define DP_UDF_EXEC_H

#include "core/diag.h"
#include "core/vector.h"
#include "plan/udf.h"

/* The arrays of one call. */
typedef struct dp_udf_args {
  int n;
  struct ArrowSchema *schemas;
  struct ArrowArray *arrays;
  const struct ArrowSchema **sp; /* what the callback gets */
  const struct ArrowArray **ap;
} dp_udf_args;

/* Export vs[0..n) (copies).  DIPPER_OK, or DIPPER_NOMEM with nothing left. */
int dp_udf_args_export(dp_udf_args *x, int n, const dp_vector *const *vs);
void dp_udf_args_release(dp_udf_args *x);

/* The function's answer `out` (released here, whatever happens) as a new
** vector of f->ret with exactly n rows in *res.  A wrong length or layout is
** DIPPER_DATA with a message in d at span. */
int dp_udf_import(const dp_cfunc *f, struct ArrowArray *out, int64_t n, dp_vector **res, dp_diags *d,
                  dp_span span);

/* A failed callback (rc non-zero): "function f: message (row R: f(1, 'a'))"
** into d at span, DIPPER_DATA (or rc when it is DIPPER_NOMEM); args are the
** vectors the call got (row R of them is printed).  Frees ctx->message. */
int dp_udf_failed(dp_diags *d, dp_span span, dipper_function_ctx *ctx, int rc, int nargs,
                  const dp_vector *const *args);

#endif /* DP_UDF_EXEC_H */
