/*
** eval_udf.c — C functions in the evaluator (udf_exec.h): a scalar C
** function is one more kernel, called once per batch with the whole columns
** of its arguments (or once with one row when its arguments are constant
** and it is deterministic), and the crossing helpers its aggregates share.
**
** The arguments are exported as copies (dp_vector_export), so a function
** can keep nothing of dipper's buffers by mistake; the answer is copied in
** and released at once.  Both are a memcpy per buffer: small next to a
** call through a pointer per batch.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vector_import.h"
#include "exec/eval_int.h"
#include "exec/udf_exec.h"

int dp_udf_args_export(dp_udf_args *x, int n, const dp_vector *const *vs) {
  memset(x, 0, sizeof *x);
  size_t k = (size_t)(n > 0 ? n : 1);
  x->schemas = calloc(k, sizeof *x->schemas);
  x->arrays = calloc(k, sizeof *x->arrays);
  x->sp = calloc(k, sizeof *x->sp);
  x->ap = calloc(k, sizeof *x->ap);
  if (!x->schemas || !x->arrays || !x->sp || !x->ap) {
    dp_udf_args_release(x);
    return DIPPER_NOMEM;
  }
  for (int i = 0; i < n; i++) {
    int rc = dp_vector_export(vs[i], &x->schemas[i], &x->arrays[i]);
    if (rc != DIPPER_OK) {
      dp_udf_args_release(x);
      return rc;
    }
    x->n = i + 1;
    x->sp[i] = &x->schemas[i];
    x->ap[i] = &x->arrays[i];
  }
  return DIPPER_OK;
}

void dp_udf_args_release(dp_udf_args *x) {
  for (int i = 0; i < x->n; i++) {
    if (x->arrays[i].release) x->arrays[i].release(&x->arrays[i]);
    if (x->schemas[i].release) x->schemas[i].release(&x->schemas[i]);
  }
  free(x->schemas);
  free(x->arrays);
  free(x->sp);
  free(x->ap);
  memset(x, 0, sizeof *x);
}

int dp_udf_import(const dp_cfunc *f, struct ArrowArray *out, int64_t n, dp_vector **res, dp_diags *d,
                  dp_span span) {
  *res = NULL;
  if (!out->release)
    return dp_error(d, DIPPER_DATA, span,
                    "function %s returned success but no array: it must fill its output array "
                    "(with a release callback)",
                    f->name);
  int rc = DIPPER_OK;
  if (out->length != n)
    rc = dp_error(d, DIPPER_DATA, span, "function %s answered %lld rows for %lld", f->name,
                  (long long)out->length, (long long)n);
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  dp_vector *v = NULL;
  if (!rc) rc = dp_type_export_schema(f->ret, f->name, &schema);
  if (!rc && !(v = dp_vector_new(f->ret, n))) rc = DIPPER_NOMEM;
  if (!rc) {
    dp_buf err = DP_BUF_INIT;
    rc = dp_vector_import(v, &schema, out, &err);
    if (rc && rc != DIPPER_NOMEM)
      rc = dp_error(d, DIPPER_DATA, span, "function %s answered an array that is not %s: %s",
                    f->name, dp_type_format(d->arena, f->ret), dp_buf_cstr(&err));
    dp_buf_free(&err);
  }
  if (schema.release) schema.release(&schema);
  out->release(out);
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *res = v;
  return DIPPER_OK;
}

int dp_udf_failed(dp_diags *d, dp_span span, dipper_function_ctx *ctx, int rc, int nargs,
                  const dp_vector *const *args) {
  if (rc == DIPPER_NOMEM && !ctx->message) return rc;
  const dp_cfunc *f = ctx->f;
  dp_ev_buf row = {NULL, 0, 0};
  bool ok = true;
  int64_t r = ctx->row;
  if (r >= 0 && nargs > 0 && r < args[0]->length) {
    ok = dp_ev_buf_put(&row, " (row ", 6);
    char num[32];
    int len = snprintf(num, sizeof num, "%lld", (long long)r);
    ok = ok && dp_ev_buf_put(&row, num, (size_t)len) && dp_ev_buf_put(&row, ": ", 2) &&
         dp_ev_buf_put(&row, f->name, strlen(f->name)) && dp_ev_buf_putc(&row, '(');
    for (int i = 0; ok && i < nargs; i++) {
      if (i) ok = dp_ev_buf_put(&row, ", ", 2);
      bool text = dp_type_is_string(args[i]->type) && !dp_vector_is_null(args[i], r);
      ok = ok && (!text || dp_ev_buf_putc(&row, '\'')) && dp_ev_format(&row, args[i], r) &&
           (!text || dp_ev_buf_putc(&row, '\''));
    }
    ok = ok && dp_ev_buf_put(&row, "))", 2);
  } else if (r >= 0) {
    char num[40];
    int len = snprintf(num, sizeof num, " (row %lld)", (long long)r);
    ok = dp_ev_buf_put(&row, num, (size_t)len);
  }
  int code = dp_error(d, DIPPER_DATA, span, "function %s: %s%.*s", f->name,
                      ctx->message ? ctx->message : "failed (it gave no message)",
                      ok ? (int)row.len : 0, ok && row.p ? row.p : "");
  free(row.p);
  free(ctx->message);
  ctx->message = NULL;
  return code;
}

/* The kernel of every scalar C function. */
int dp_ev_cfunc(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  const dp_cfunc *f = e->u.call.fn->cfunc;
  int nargs = e->u.call.nargs;
  dp_vector **full = calloc((size_t)(nargs ? nargs : 1), sizeof *full);
  if (!full) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int i = 0; i < nargs && !rc; i++)
    if (args[i].is_const && n != 1) rc = dp_ev_broadcast(&args[i], n, &full[i]);
  const dp_vector **vs = calloc((size_t)(nargs ? nargs : 1), sizeof *vs);
  if (!vs) rc = DIPPER_NOMEM;
  for (int i = 0; !rc && i < nargs; i++) vs[i] = full[i] ? full[i] : args[i].v;
  /* An evaluation without an exec (none today) still gets a place for its message. */
  dp_diags scratch, *d = c->ex && c->ex->diags ? c->ex->diags : NULL;
  dp_arena *sa = NULL;
  if (!d && !rc) {
    if (!(sa = dp_arena_new(0))) rc = DIPPER_NOMEM;
    dp_diags_init(&scratch, sa, NULL, NULL, 0);
    d = &scratch;
  }
  dp_udf_args x;
  memset(&x, 0, sizeof x);
  if (!rc) rc = dp_udf_args_export(&x, nargs, vs);
  if (!rc) {
    dipper_function_ctx ctx = {f, NULL, -1};
    struct ArrowArray res;
    memset(&res, 0, sizeof res);
    int urc = f->scalar(&ctx, nargs, x.sp, x.ap, n, &res);
    if (urc != 0) {
      if (res.release) res.release(&res);
      rc = dp_udf_failed(d, e->span, &ctx, urc, nargs, vs);
    } else {
      free(ctx.message);
      rc = dp_udf_import(f, &res, n, out, d, e->span);
    }
    dp_udf_args_release(&x);
  }
  dp_arena_free(sa);
  for (int i = 0; i < nargs; i++) dp_vector_free(full[i]);
  free(full);
  free(vs);
  return rc;
}
