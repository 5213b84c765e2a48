/*
** agg_cfunc.c — the states of C aggregate functions behind agg_func.h.
**
** A C aggregate declares a state size; its states are one array of
** state_stride bytes per group (the size rounded up to 16, so that each
** state is aligned as malloc aligns), made by its init callback, folded by
** update (a batch at a time, each row with a pointer to its group's state),
** merged by combine and read out by finalize.  The state is plain bytes by
** the API's contract (dipper.h), so a checkpoint writes each group's
** state_size bytes as they are and a restore copies them back: nothing of a
** C aggregate's state needs code of its own to be saved.
**
** Owns: the state array.  Does not own: the group numbering (hashtable.h)
** and when states are created, merged or dropped (the operators).
*/
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "exec/agg_func.h"
#include "exec/udf_exec.h"

static void *state_at(const dp_agg_state *s, int64_t g) {
  return s->cstates + (size_t)g * s->cfunc->state_stride;
}

static void init_state(dp_agg_state *s, int64_t g) {
  void *p = state_at(s, g);
  memset(p, 0, s->cfunc->state_stride);
  s->cfunc->agg.init(s->cfunc->user, p);
}

int dp_agg_cfunc_init(dp_agg_state *s, const dp_agg_call *call) {
  s->kind = DP_AGG_KIND_CFUNC;
  s->cfunc = call->fn->cfunc;
  s->span = call->span;
  return s->cfunc->aggregate ? DIPPER_OK : DIPPER_INTERNAL;
}

void dp_agg_cfunc_free(dp_agg_state *s) {
  free(s->cstates);
  s->cstates = NULL;
}

int dp_agg_cfunc_grow(dp_agg_state *s, int64_t old, int64_t cap) {
  size_t w = s->cfunc->state_stride;
  uint8_t *p = realloc(s->cstates, (size_t)cap * w);
  if (!p) return DIPPER_NOMEM;
  s->cstates = p;
  for (int64_t g = old; g < cap; g++) init_state(s, g);
  return DIPPER_OK;
}

void dp_agg_cfunc_reset(dp_agg_state *s, int64_t g) {
  if (g >= 0 && g < s->cap) init_state(s, g);
}

/* A failure reported where the operator asked (s->diags), or just its code. */
static int failed(dp_agg_state *s, dipper_function_ctx *ctx, int rc, int nargs,
                  const dp_vector *const *args) {
  if (s->diags) return dp_udf_failed(s->diags, s->span, ctx, rc, nargs, args);
  free(ctx->message);
  ctx->message = NULL;
  return rc == DIPPER_NOMEM ? rc : DIPPER_DATA;
}

int dp_agg_cfunc_update(dp_agg_state *s, const dp_vector *const *args, const int64_t *gids,
                        const int64_t *rows, int64_t n) {
  const dp_cfunc *f = s->cfunc;
  if (n == 0) return DIPPER_OK;
  int nargs = f->nargs;
  dp_vector *taken[2] = {NULL, NULL};
  void **states = malloc((size_t)n * sizeof *states);
  int rc = states ? DIPPER_OK : DIPPER_NOMEM;
  for (int i = 0; i < nargs && !rc; i++) {
    if (!(taken[i] = dp_vector_new(args[i]->type, n))) rc = DIPPER_NOMEM;
    if (!rc) rc = dp_vector_take(taken[i], args[i], rows, 0, n);
  }
  for (int64_t k = 0; !rc && k < n; k++) states[k] = state_at(s, gids[rows ? rows[k] : k]);
  dp_udf_args x;
  memset(&x, 0, sizeof x);
  if (!rc) rc = dp_udf_args_export(&x, nargs, (const dp_vector *const *)taken);
  if (!rc) {
    dipper_function_ctx ctx = {f, NULL, -1};
    int urc = f->agg.update(&ctx, nargs, x.sp, x.ap, n, states);
    if (urc)
      rc = failed(s, &ctx, urc, nargs, (const dp_vector *const *)taken);
    else
      free(ctx.message);
    dp_udf_args_release(&x);
  }
  for (int i = 0; i < 2; i++) dp_vector_free(taken[i]);
  free(states);
  return rc;
}

int dp_agg_cfunc_merge(dp_agg_state *s, int64_t dst, int64_t src) {
  dipper_function_ctx ctx = {s->cfunc, NULL, -1};
  int urc = s->cfunc->agg.combine(&ctx, state_at(s, src), state_at(s, dst));
  if (urc) return failed(s, &ctx, urc, 0, NULL);
  free(ctx.message);
  return DIPPER_OK;
}

int dp_agg_cfunc_finish(dp_agg_state *s, const int64_t *groups, int64_t n, dp_vector *out) {
  if (n == 0) return DIPPER_OK;
  const dp_cfunc *f = s->cfunc;
  const void **states = malloc((size_t)n * sizeof *states);
  if (!states) return DIPPER_NOMEM;
  for (int64_t k = 0; k < n; k++) states[k] = state_at(s, groups[k]);
  dipper_function_ctx ctx = {f, NULL, -1};
  struct ArrowArray res;
  memset(&res, 0, sizeof res);
  int urc = f->agg.finalize(&ctx, n, states, &res);
  free(states);
  int rc;
  dp_vector *v = NULL;
  if (urc) {
    if (res.release) res.release(&res);
    return failed(s, &ctx, urc, 0, NULL);
  }
  free(ctx.message);
  dp_diags scratch, *d = s->diags;
  dp_arena *sa = NULL;
  if (!d) {
    if (!(sa = dp_arena_new(0))) {
      if (res.release) res.release(&res);
      return DIPPER_NOMEM;
    }
    dp_diags_init(&scratch, sa, NULL, NULL, 0);
    d = &scratch;
  }
  rc = dp_udf_import(f, &res, n, &v, d, s->span);
  if (!rc) rc = dp_vector_take(out, v, NULL, 0, n);
  dp_vector_free(v);
  dp_arena_free(sa);
  return rc;
}

int dp_agg_cfunc_renumber(dp_agg_state *s, const int64_t *remap, int64_t old_n, int64_t new_n) {
  size_t w = s->cfunc->state_stride;
  for (int64_t g = 0; g < old_n; g++) {
    int64_t to = remap[g];
    if (to >= 0 && to != g) memmove(state_at(s, to), state_at(s, g), w);
  }
  for (int64_t g = new_n; g < old_n && g < s->cap; g++) init_state(s, g);
  return DIPPER_OK;
}

/* Format: the kind byte, the state size (a check that the function is the
** one that saved), then state_size bytes per listed group. */
void dp_agg_cfunc_save(const dp_agg_state *s, const int64_t *groups, int64_t n, dp_buf *out) {
  dp_put_u8(out, (uint8_t)s->kind);
  dp_put_uvar(out, (uint64_t)s->cfunc->agg.state_size);
  for (int64_t k = 0; k < n; k++)
    dp_buf_put(out, state_at(s, groups ? groups[k] : k), s->cfunc->agg.state_size);
}

int dp_agg_cfunc_load(dp_agg_state *s, const int64_t *groups, int64_t n, dp_rd *in) {
  size_t size = s->cfunc->agg.state_size;
  if (dp_get_u8(in) != s->kind || in->bad) return DIPPER_CORRUPT;
  if (dp_get_uvar(in) != (uint64_t)size || in->bad) return DIPPER_CORRUPT;
  if (n < 0 || (uint64_t)dp_rd_left(in) / size < (uint64_t)n) return DIPPER_CORRUPT;
  for (int64_t k = 0; k < n; k++) {
    int64_t g = groups ? groups[k] : k;
    if (g < 0 || g >= s->cap) return DIPPER_CORRUPT;
    void *p = state_at(s, g);
    memset(p, 0, s->cfunc->state_stride);
    memcpy(p, in->p + in->pos, size);
    in->pos += size;
  }
  return DIPPER_OK;
}
