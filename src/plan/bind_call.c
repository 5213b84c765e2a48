/*
** bind_call.c — function calls: aggregate calls (DISTINCT, FILTER) and OVER
** calls with their window frames, collected as marker columns; the legacy
** group-window helpers (TUMBLE_START, ...); every other call through the
** catalog.
**
** Owns: which call becomes an aggregate, an OVER call or a scalar call.
** Does not own: the plan nodes the collected calls become (bind_select.c).
*/
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/suggest.h"
#include "plan/binder_int.h"
#include "plan/udf.h"

/* ------------------------------------------------------------------ */
/* function calls                                                      */
/* ------------------------------------------------------------------ */

static bool name_is(const char *name, const char *const *list) {
  for (; *list; list++)
    if (dp_bind_name_eq(name, *list)) return true;
  return false;
}

/* COUNT(DISTINCT a, b, ...), Flink's count of distinct tuples without a
** NULL among them, as COUNT(DISTINCT t) of one value: t = IF(a IS NULL OR b
** IS NULL .., NULL, ROW(a, b, ..)), a ROW that the DISTINCT tables of the
** aggregations (exec/op_aggregate.c, agg_retract.c) hash and compare as a
** whole, NULL when one argument is.  `args` are the bound arguments; each is
** bound a second time for its IS NULL, so that no node is shared.  The one
** argument, or NULL (the binder's error is set). */
static dp_expr *distinct_tuple(dp_bexpr *inner, const dp_ast_expr *e, int nargs, dp_expr **args) {
  dp_binder *b = inner->b;
  dp_arena *a = b->a;
  dp_expr **nulls = dp_arena_calloc(a, (size_t)nargs, sizeof *nulls);
  if (!nulls) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  for (int i = 0; i < nargs; i++) {
    dp_expr *again = dp_bind_expr(inner, e->u.call.args[i]);
    if (!again) return NULL;
    if (!(nulls[i] = dp_bind_call_fn(b, dp_func_get(DP_F_IS_NULL), 1, &again, e->span))) return NULL;
  }
  dp_expr *any = dp_bind_call_fn(b, dp_func_get(DP_F_OR), nargs, nulls, e->span);
  dp_expr *row = dp_bind_call_fn(b, dp_func_get(DP_F_ROW), nargs, args, e->span);
  if (!any || !row) return NULL;
  dp_expr *none = dp_expr_literal(a, dp_value_null(dp_bind_nullable(b, row->type)));
  if (!none) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  dp_expr *ifargs[3] = {any, none, row};
  return dp_bind_call_fn(b, dp_func_get(DP_F_IF), 3, ifargs, e->span);
}

static dp_expr *bind_agg_call(dp_bexpr *x, const dp_ast_expr *e, const dp_func *fn) {
  dp_binder *b = x->b;
  if (!(x->allow & DP_BX_AGG) && x->clause && strcmp(x->clause, "an aggregate's argument") == 0)
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "aggregates cannot nest: %s(..) is inside another aggregate; compute the "
                        "inner one in a subquery",
                        fn->name);
  if (!(x->allow & DP_BX_AGG))
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "aggregate %s is not allowed in %s; aggregate in the SELECT list or HAVING, "
                        "or filter the groups with HAVING",
                        fn->name, x->clause ? x->clause : "this place");
  dp_bexpr inner = *x;
  inner.allow = 0;
  inner.clause = "an aggregate's argument";
  int nargs = e->u.call.star ? 0 : e->u.call.nargs;
  dp_expr **args = dp_arena_calloc(b->a, (size_t)(nargs ? nargs : 1), sizeof *args);
  if (!args) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = dp_bind_expr(&inner, e->u.call.args[i]))) ok = false;
  dp_expr *filter = NULL;
  if (e->u.call.filter) {
    inner.clause = "FILTER (WHERE ..)";
    if (!(filter = dp_bind_cond(&inner, e->u.call.filter))) ok = false;
  }
  if (!ok) return NULL;
  if (e->u.call.star && !dp_bind_name_eq(fn->name, "count"))
    return dp_bind_fail(b, DIPPER_TYPE, e->span, "only COUNT takes *; write %s(column)", fn->name);
  if (fn->id == DP_F_COUNT && e->u.call.distinct && nargs > 1) {
    inner.clause = "an aggregate's argument";
    if (!(args[0] = distinct_tuple(&inner, e, nargs, args))) return NULL;
    nargs = 1;
  }
  /* Type inference through a throwaway call, which also inserts implicit casts. */
  dp_expr *typed = dp_bind_call_fn(b, fn, nargs, args, e->span);
  if (!typed) return NULL;
  dp_agg_call call;
  memset(&call, 0, sizeof call);
  call.fn = fn;
  call.nargs = nargs;
  call.args = typed->u.call.args;
  call.distinct = e->u.call.distinct;
  call.filter = filter;
  call.type = typed->type;
  call.span = e->span;
  for (int k = 0; k < x->naggs; k++) {
    dp_agg_call *o = &x->aggs[k];
    if (o->fn != fn || o->nargs != nargs || o->distinct != call.distinct) continue;
    bool same = (o->filter == NULL) == (filter == NULL) && (!filter || dp_bexpr_same(o->filter, filter));
    for (int i = 0; same && i < nargs; i++) same = dp_bexpr_same(o->args[i], call.args[i]);
    if (same) return dp_bind_column_expr(b, k, DP_MARK_AGG, o->type, e->span);
  }
  if (x->naggs == x->capaggs) {
    int nc = x->capaggs ? x->capaggs * 2 : 8;
    dp_agg_call *g = dp_arena_grow(b->a, x->aggs, (size_t)x->capaggs, (size_t)nc, sizeof *g);
    if (!g) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
    x->aggs = g;
    x->capaggs = nc;
  }
  x->aggs[x->naggs] = call;
  return dp_bind_column_expr(b, x->naggs++, DP_MARK_AGG, call.type, e->span);
}

static bool bind_frame_bound(dp_bexpr *x, const dp_ast_bound *bd, bool rows, int64_t *out,
                             dp_span span) {
  dp_binder *b = x->b;
  switch (bd->kind) {
  case DP_BOUND_UNBOUNDED_PRECEDING:
    *out = -1;
    return true;
  case DP_BOUND_CURRENT_ROW:
    *out = 0;
    return true;
  case DP_BOUND_PRECEDING:
    break;
  default:
    dp_bind_err(b, DIPPER_UNSUPPORTED, span,
                "OVER frames ending after the current row (FOLLOWING) cannot be computed on a "
                "stream; end the frame at CURRENT ROW");
    return false;
  }
  const dp_ast_expr *o = bd->offset;
  if (rows) {
    if (!o || o->kind != DP_AX_LITERAL || o->u.lit.kind != DP_LIT_INTEGER) {
      dp_bind_err(b, DIPPER_TYPE, o ? o->span : span,
                  "ROWS n PRECEDING needs a non-negative integer constant n");
      return false;
    }
    *out = strtoll(o->u.lit.text, NULL, 10);
    return true;
  }
  if (o && (o->kind == DP_AX_INTERVAL || (o->kind == DP_AX_LITERAL && o->u.lit.kind == DP_LIT_STRING))) {
    int rc = dp_bind_interval(b->d, o, out);
    if (rc) {
      if (!b->first_error) b->first_error = rc;
      return false;
    }
    return true;
  }
  if (o && o->kind == DP_AX_LITERAL && o->u.lit.kind == DP_LIT_INTEGER) {
    *out = strtoll(o->u.lit.text, NULL, 10);
    return true;
  }
  dp_bind_err(b, DIPPER_TYPE, o ? o->span : span,
              "RANGE .. PRECEDING needs a constant: an interval such as INTERVAL '1' HOUR, or a number");
  return false;
}

static dp_expr *bind_over_call(dp_bexpr *x, const dp_ast_expr *e, const dp_func *fn) {
  dp_binder *b = x->b;
  const dp_ast_window *w = e->u.call.over;
  if (!(x->allow & DP_BX_OVER))
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "%s(..) OVER (..) is not allowed in %s; compute it in the SELECT list of "
                        "a subquery and filter on its alias outside",
                        fn->name, x->clause ? x->clause : "this place");
  if (w->ref_name) {
    /* OVER w, or OVER (w ORDER BY ..): the named window, refined by what is written inline */
    const dp_ast_window *named = NULL;
    for (int i = 0; i < x->nwindows; i++)
      if (dp_bind_name_eq(x->windows[i].name.name, w->ref_name)) named = x->windows[i].window;
    if (!named) {
      const char **names = dp_arena_calloc(b->a, (size_t)(x->nwindows ? x->nwindows : 1), sizeof *names);
      for (int i = 0; names && i < x->nwindows; i++) names[i] = x->windows[i].name.name;
      const char *best = names ? dp_closest_of(w->ref_name, names, x->nwindows) : NULL;
      return dp_bind_fail(b, DIPPER_NAME, w->span, "unknown window `%s`%s%s%s; define it with WINDOW %s AS (...)",
                          w->ref_name, best ? "; did you mean `" : "", best ? best : "", best ? "`" : "",
                          w->ref_name);
    }
    dp_ast_window *merged = dp_arena_alloc(b->a, sizeof *merged);
    if (!merged) return NULL;
    *merged = *named;
    if (w->npartition) {
      merged->npartition = w->npartition;
      merged->partition = w->partition;
    }
    if (w->norder) {
      merged->norder = w->norder;
      merged->order = w->order;
    }
    if (w->has_frame) {
      merged->has_frame = true;
      merged->rows = w->rows;
      merged->start = w->start;
      merged->end = w->end;
    }
    merged->ref_name = NULL;
    merged->span = w->span;
    w = merged;
  }
  dp_bexpr inner = *x;
  inner.allow = x->allow & DP_BX_AGG; /* SUM(COUNT(*)) OVER (..) is valid with GROUP BY */
  inner.clause = "an OVER call";
  dp_bover ov;
  memset(&ov, 0, sizeof ov);
  int nargs = e->u.call.star ? 0 : e->u.call.nargs;
  dp_expr **args = dp_arena_calloc(b->a, (size_t)(nargs ? nargs : 1), sizeof *args);
  if (!args) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  for (int i = 0; i < nargs; i++)
    if (!(args[i] = dp_bind_expr(&inner, e->u.call.args[i]))) ok = false;
  ov.npartition = w->npartition;
  ov.partition = dp_arena_calloc(b->a, (size_t)(w->npartition ? w->npartition : 1), sizeof(dp_expr *));
  ov.norder = w->norder;
  ov.order = dp_arena_calloc(b->a, (size_t)(w->norder ? w->norder : 1), sizeof(dp_sort_key));
  if (!ov.partition || !ov.order) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  inner.clause = "PARTITION BY";
  for (int i = 0; i < w->npartition; i++)
    if (!(ov.partition[i] = dp_bind_expr(&inner, w->partition[i]))) ok = false;
  inner.clause = "ORDER BY of OVER";
  for (int i = 0; i < w->norder; i++) {
    if (!(ov.order[i].expr = dp_bind_expr(&inner, w->order[i].expr))) ok = false;
    ov.order[i].desc = w->order[i].desc;
    ov.order[i].nulls_first = w->order[i].nulls ? w->order[i].nulls == 1 : !w->order[i].desc;
  }
  if (e->u.call.filter) {
    inner.clause = "FILTER (WHERE ..)";
    if (!(ov.call.filter = dp_bind_cond(&inner, e->u.call.filter))) ok = false;
  }
  /* aggregates inside the OVER call (SUM(COUNT(*)) OVER ..) belong to the query */
  x->aggs = inner.aggs;
  x->naggs = inner.naggs;
  x->capaggs = inner.capaggs;
  if (!ok) return NULL;
  if (fn->kind == DP_FN_WINDOW && w->norder == 0)
    return dp_bind_fail(b, DIPPER_TYPE, w->span,
                        "%s needs ORDER BY in its OVER clause: OVER (PARTITION BY .. ORDER BY ..)",
                        fn->name);
  if (w->has_frame && !w->rows && w->start.kind == DP_BOUND_PRECEDING && w->start.offset &&
      w->norder == 1 && ov.order[0].expr) {
    const dp_ast_expr *off = w->start.offset;
    bool interval = off->kind == DP_AX_INTERVAL ||
                    (off->kind == DP_AX_LITERAL && off->u.lit.kind == DP_LIT_STRING);
    bool time_key = dp_type_is_temporal(ov.order[0].expr->type);
    if (time_key && !interval)
      return dp_bind_fail(b, DIPPER_TYPE, off->span,
                          "RANGE over a %s ORDER BY key needs an INTERVAL offset, e.g. RANGE "
                          "BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW",
                          dp_bind_type_str(b, ov.order[0].expr->type));
    if (!time_key && interval)
      return dp_bind_fail(b, DIPPER_TYPE, off->span,
                          "an INTERVAL offset needs a time ORDER BY key, not %s; use ROWS n PRECEDING",
                          dp_bind_type_str(b, ov.order[0].expr->type));
  }
  if (w->has_frame && !w->rows && w->start.kind == DP_BOUND_PRECEDING && w->norder != 1)
    return dp_bind_fail(b, DIPPER_TYPE, w->span,
                        "RANGE .. PRECEDING needs exactly one ORDER BY key in the OVER clause");
  ov.has_frame = w->has_frame;
  ov.rows = w->rows;
  if (w->has_frame) {
    if (!bind_frame_bound(x, &w->start, w->rows, &ov.lower, w->span) ||
        !bind_frame_bound(x, &w->end, w->rows, &ov.upper, w->span))
      return NULL;
    if (w->end.kind == DP_BOUND_UNBOUNDED_PRECEDING)
      return dp_bind_fail(b, DIPPER_TYPE, w->span, "a frame cannot end at UNBOUNDED PRECEDING");
  } else {
    /* SQL's default frame: RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW with ORDER BY. */
    ov.rows = false;
    ov.lower = -1;
    ov.upper = 0;
  }
  dp_expr *typed = dp_bind_call_fn(b, fn, nargs, args, e->span);
  if (!typed) return NULL;
  ov.call.fn = fn;
  ov.call.nargs = nargs;
  ov.call.args = typed->u.call.args;
  ov.call.distinct = e->u.call.distinct;
  ov.call.type = typed->type;
  ov.call.span = e->span;
  ov.span = w->span;
  ov.out_col = -1;
  if (x->novers == x->capovers) {
    int nc = x->capovers ? x->capovers * 2 : 4;
    dp_bover *g = dp_arena_grow(b->a, x->overs, (size_t)x->capovers, (size_t)nc, sizeof *g);
    if (!g) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
    x->overs = g;
    x->capovers = nc;
  }
  x->overs[x->novers] = ov;
  return dp_bind_column_expr(b, x->novers++, DP_MARK_OVER, ov.call.type, e->span);
}

/* TUMBLE_START(ts, size) and friends must name the window of GROUP BY TUMBLE(ts, size). */
static bool legacy_args_match(dp_bexpr *x, const dp_ast_expr *e, const char *name) {
  dp_binder *b = x->b;
  const dp_window_spec *w = x->legacy;
  dp_window_kind kind = w->kind;
  const char *family = kind == DP_WIN_TUMBLE ? "tumble_" : kind == DP_WIN_HOP ? "hop_" : "session_";
  bool kind_ok = true;
  for (size_t i = 0; family[i]; i++)
    if (tolower((unsigned char)name[i]) != family[i]) {
      kind_ok = false;
      break;
    }
  int want = kind == DP_WIN_HOP ? 3 : 2;
  bool ok = kind_ok && e->u.call.nargs == want;
  if (ok) {
    int64_t v1 = 0, v2 = 0;
    /* a malformed interval here is reported below, in terms of the window */
    dp_diags scratch;
    dp_diags_init(&scratch, b->a, NULL, NULL, 0);
    if (dp_bind_interval(&scratch, e->u.call.args[1], &v1) != DIPPER_OK ||
        (want == 3 && dp_bind_interval(&scratch, e->u.call.args[2], &v2) != DIPPER_OK)) {
      ok = false;
    } else if (kind == DP_WIN_TUMBLE) {
      ok = v1 == w->size;
    } else if (kind == DP_WIN_HOP) {
      ok = v1 == w->slide && v2 == w->size;
    } else {
      ok = v1 == w->gap;
    }
  }
  if (!ok)
    dp_bind_err(b, DIPPER_TYPE, e->span,
                "%s(..) must repeat the time column and intervals of the GROUP BY window",
                name);
  return ok;
}

dp_expr *dp_bind_call(dp_bexpr *x, const dp_ast_expr *e) {
  dp_binder *b = x->b;
  const char *name = dp_bind_last_part(&e->u.call.name);
  static const char *const legacy_start[] = {"tumble_start", "hop_start", "session_start", NULL};
  static const char *const legacy_end[] = {"tumble_end", "hop_end", "session_end", NULL};
  static const char *const legacy_time[] = {"tumble_rowtime", "hop_rowtime", "session_rowtime",
                                            "tumble_proctime", "hop_proctime", "session_proctime", NULL};
  static const char *const group_windows[] = {"tumble", "hop", "session", "cumulate", "window",
                                              "session_window", NULL};
  bool is_start = name_is(name, legacy_start), is_end = name_is(name, legacy_end),
       is_time = name_is(name, legacy_time);
  if (is_start || is_end || is_time) {
    int col = is_start ? x->win_start : is_end ? x->win_end : x->win_time;
    if (col < 0 || !x->sc)
      return dp_bind_fail(b, DIPPER_TYPE, e->span,
                          "%s(..) is only valid with GROUP BY %.*s(..) of the same arguments", name,
                          (int)(strchr(name, '_') ? (size_t)(strchr(name, '_') - name) : strlen(name)),
                          name);
    if (x->legacy && !legacy_args_match(x, e, name)) return NULL;
    if (is_time) x->used_rowtime = true;
    for (int i = 0; i < x->sc->n; i++)
      if (x->sc->cols[i].index == col && !x->sc->cols[i].expr)
        return dp_bind_column_expr(b, col, 0, x->sc->cols[i].type, e->span);
    return dp_bind_fail(b, DIPPER_INTERNAL, e->span, "window column of %s not in scope", name);
  }
  if (name_is(name, group_windows) && !e->u.call.over)
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "%s(..) is a window: use it in FROM as TABLE(%s(TABLE t, DESCRIPTOR(ts), "
                        "..)) or in GROUP BY, not in %s",
                        name, name, x->clause ? x->clause : "an expression");
  if (dp_bind_udf_recursive(b, e)) return NULL;
  const dp_udf_def *udf = dp_catalog_function(b->cat, name);
  /* C functions and Java aggregates are catalog entries bound as the built-ins */
  if (udf && udf->kind != DP_UDF_C && !(udf->kind == DP_UDF_JAVA && udf->aggregate))
    return dp_bind_udf_call(x, e, udf);
  const dp_func *fn = udf ? dp_bind_cfunc(b, udf, e) : dp_func_lookup(name);
  if (!fn && udf) return NULL;
  if (!fn) {
    const char *best = dp_func_suggest(name);
    /* a user-defined function of a close name is the likelier meaning */
    dp_closest near;
    dp_closest_init(&near, name);
    for (int i = 0; i < dp_catalog_function_count(b->cat); i++)
      dp_closest_add(&near, dp_catalog_function_at(b->cat, i)->name);
    if (near.best && near.best_dist > 0 && near.best_dist <= 2) best = near.best;
    if (best)
      return dp_bind_fail(b, DIPPER_NAME, e->u.call.name.span,
                          "unknown function `%s`; did you mean `%s`?", name, best);
    return dp_bind_fail(b, DIPPER_NAME, e->u.call.name.span, "unknown function `%s`", name);
  }
  if (e->u.call.over) {
    if (fn->kind == DP_FN_SCALAR)
      return dp_bind_fail(b, DIPPER_TYPE, e->span,
                          "%s is not an aggregate or window function, so it cannot take OVER",
                          fn->name);
    return bind_over_call(x, e, fn);
  }
  if (fn->kind == DP_FN_WINDOW)
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "%s needs an OVER clause: %s() OVER (PARTITION BY .. ORDER BY ..)", fn->name,
                        fn->name);
  if (fn->kind == DP_FN_AGGREGATE) return bind_agg_call(x, e, fn);
  if (e->u.call.distinct || e->u.call.filter || e->u.call.star)
    return dp_bind_fail(b, DIPPER_TYPE, e->span,
                        "%s is not an aggregate: DISTINCT, FILTER and * apply to aggregates only",
                        fn->name);
  int nargs = e->u.call.nargs;
  dp_expr **args = dp_arena_calloc(b->a, (size_t)(nargs ? nargs : 1), sizeof *args);
  if (!args) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  bool ok = true;
  for (int i = 0; i < nargs; i++) {
    if (e->u.call.table_arg && e->u.call.table_arg[i])
      return dp_bind_fail(b, DIPPER_TYPE, e->u.call.args[i]->span,
                          "TABLE arguments are for window functions in FROM only");
    if (!(args[i] = dp_bind_expr(x, e->u.call.args[i]))) ok = false;
  }
  if (!ok) return NULL;
  /* TYPEOF(x [, force]) and CURRENT_DATABASE() are known here: STRING literals
     of x's type as Flink spells it ("INT NOT NULL") and of the current database */
  if (fn->id == DP_F_TYPEOF || fn->id == DP_F_CURRENT_DATABASE) {
    const char *text = NULL;
    if (fn->id == DP_F_CURRENT_DATABASE && nargs == 0)
      text = dp_arena_strdup(b->a, dp_catalog_current_database(b->cat));
    else if (fn->id == DP_F_TYPEOF && (nargs == 1 || nargs == 2)) text = dp_type_format(b->a, args[0]->type);
    if (text)
      return dp_bind_literal_expr(b, dp_value_string(text, strlen(text)), e->span);
  }
  /* Functions taking a duration accept Spark's quoted form: coalesce, if, ... are
     left alone; arguments are typed by the catalog. */
  if (fn->kind == DP_FN_SCALAR && (dp_bind_name_eq(fn->name, "coalesce") ||
                                   dp_bind_name_eq(fn->name, "greatest") ||
                                   dp_bind_name_eq(fn->name, "least")) &&
      !dp_bind_unify_n(b, nargs, args, fn->name, e->span))
    return NULL;
  return dp_bind_call_fn(b, fn, nargs, args, e->span);
}
