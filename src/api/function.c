/*
** function.c — user-defined C functions through the public API
** (dipper_create_scalar_function, dipper_create_aggregate_function,
** dipper_drop_function) and what a callback may call while it runs.
**
** Owns: checking a registration and turning it into a catalog entry
** (plan/udf.h's dp_cfunc).  Does not own: calling the callbacks
** (exec/eval_udf.c, exec/agg_cfunc.c).
*/
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "plan/udf.h"
#include "sql/parser.h"

#define MAX_ARGS 64
#define MAX_STATE (1u << 20)

void *dipper_function_user(dipper_function_ctx *ctx) { return ctx && ctx->f ? ctx->f->user : NULL; }

int dipper_function_error(dipper_function_ctx *ctx, int64_t row, const char *message) {
  if (!ctx) return DIPPER_MISUSE;
  free(ctx->message);
  ctx->message = strdup(message ? message : "failed");
  ctx->row = row;
  return DIPPER_DATA;
}

static int misuse(dipper *db, const char *message) {
  dp_api_diags_begin(db, NULL, NULL, 0);
  dp_span nowhere = {0, 0, 0, 0};
  dp_error(&db->diags, DIPPER_MISUSE, nowhere, "%s", message);
  int rc = dp_api_diags_finish(db);
  return rc == DIPPER_OK ? DIPPER_MISUSE : rc;
}

/* One type from its SQL text, into `a`; NULL with a diagnostic naming `what`. */
static const dp_type *parse_type(dipper *db, dp_arena *a, const char *text, const char *what) {
  dp_diags d;
  dp_diags_init(&d, a, NULL, text, strlen(text));
  const dp_type *t = dp_parse_type(a, &d, text, strlen(text));
  if (!t) {
    dp_span nowhere = {0, 0, 0, 0};
    dp_error(&db->diags, DIPPER_TYPE, nowhere, "%s: '%s' is not a type (%s); write a SQL type such "
             "as INT, STRING, DECIMAL(10, 2) or ARRAY<STRING>",
             what, text, d.count > 0 ? d.items[0].message : "it does not parse");
  }
  return t;
}

static int create(dipper *db, const char *name, int nargs, const char *const *arg_types,
                  const char *return_type, unsigned flags, dipper_scalar_fn fn,
                  const dipper_aggregate_fns *agg, void *user, dipper_free_fn destroy) {
  if (!db) return DIPPER_MISUSE;
  if (db->open_failed) return db->open_failed;
  if (!name || !*name || nargs < 0 || nargs > MAX_ARGS || (nargs > 0 && !arg_types) || !return_type)
    return misuse(db, "a function needs a name, 0 to 64 argument types and a result type");
  for (int i = 0; i < nargs; i++)
    if (!arg_types[i]) return misuse(db, "a function's argument type is NULL");
  if (!agg && !fn) return misuse(db, "dipper_create_scalar_function needs a function");
  if (agg && (agg->size < sizeof *agg || !agg->init || !agg->update || !agg->combine ||
              !agg->finalize || agg->state_size == 0 || agg->state_size > MAX_STATE))
    return misuse(db, "dipper_create_aggregate_function needs size set to "
                      "sizeof(dipper_aggregate_fns), every callback, and a state of 1 byte to 1 MiB");
  if (agg && nargs > 2)
    return misuse(db, "a C aggregate takes at most 2 arguments (pack more into a ROW)");
  if (dp_func_lookup(name)) {
    dp_api_diags_begin(db, NULL, NULL, 0);
    dp_span nowhere = {0, 0, 0, 0};
    dp_error(&db->diags, DIPPER_DUPLICATE, nowhere,
             "`%s` is a built-in function; choose another name for yours", name);
    dp_api_diags_finish(db);
    return DIPPER_DUPLICATE;
  }
  dp_api_diags_begin(db, NULL, NULL, 0);
  dp_arena *a = dp_arena_new(0);
  if (!a) return DIPPER_NOMEM;
  const dp_type *types[MAX_ARGS + 1];
  int rc = DIPPER_OK;
  for (int i = 0; i < nargs && rc == DIPPER_OK; i++)
    if (!(types[i] = parse_type(db, a, arg_types[i], "an argument type"))) rc = DIPPER_TYPE;
  const dp_type *ret = rc == DIPPER_OK ? parse_type(db, a, return_type, "the result type") : NULL;
  if (rc == DIPPER_OK && !ret) rc = DIPPER_TYPE;
  dp_cfunc *f = NULL;
  if (rc == DIPPER_OK) {
    f = dp_cfunc_new(name, nargs, types, ret, (flags & DIPPER_FUNCTION_DETERMINISTIC) != 0, fn, agg,
                     user, NULL);
    if (!f) rc = DIPPER_NOMEM;
  }
  if (rc == DIPPER_OK) {
    rc = dp_catalog_put_cfunc(db->catalog, f);
    if (rc == DIPPER_DUPLICATE) {
      dp_span nowhere = {0, 0, 0, 0};
      dp_error(&db->diags, DIPPER_DUPLICATE, nowhere,
               "a SQL or Java function named `%s` exists; DROP FUNCTION %s first", name, name);
    }
    if (rc != DIPPER_OK) {
      dp_cfunc_release(f); /* no destroy yet: the caller keeps user on failure */
    } else {
      f->destroy = destroy;
    }
  }
  dp_arena_free(a);
  if (rc != DIPPER_OK && db->diags.count == 0) {
    dp_span nowhere = {0, 0, 0, 0};
    dp_error(&db->diags, rc, nowhere, "%s", dipper_strerror(rc));
  }
  int kept = dp_api_diags_finish(db);
  return rc != DIPPER_OK ? rc : kept;
}

int dipper_create_scalar_function(dipper *db, const char *name, int nargs, const char *const *arg_types,
                                  const char *return_type, unsigned flags, dipper_scalar_fn fn,
                                  void *user, dipper_free_fn destroy) {
  return create(db, name, nargs, arg_types, return_type, flags, fn, NULL, user, destroy);
}

int dipper_create_aggregate_function(dipper *db, const char *name, int nargs,
                                     const char *const *arg_types, const char *return_type,
                                     unsigned flags, const dipper_aggregate_fns *fns, void *user,
                                     dipper_free_fn destroy) {
  if (!fns) return db ? misuse(db, "dipper_create_aggregate_function needs its callbacks") : DIPPER_MISUSE;
  return create(db, name, nargs, arg_types, return_type, flags, NULL, fns, user, destroy);
}

int dipper_drop_function(dipper *db, const char *name) {
  if (!db) return DIPPER_MISUSE;
  if (db->open_failed) return db->open_failed;
  if (!name) return misuse(db, "dipper_drop_function needs a name");
  int rc = dp_catalog_drop_function(db->catalog, name);
  if (rc == DIPPER_NAME) {
    dp_api_diags_begin(db, NULL, NULL, 0);
    dp_span nowhere = {0, 0, 0, 0};
    dp_error(&db->diags, DIPPER_NAME, nowhere, "function `%s` does not exist", name);
    dp_api_diags_finish(db);
  }
  return rc;
}
