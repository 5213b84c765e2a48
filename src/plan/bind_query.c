/*
** bind_query.c — the query binder: SELECT, FROM, set operations to plan nodes.
**
** FROM: catalog tables (SCAN, then PROJECT for computed columns, then
** WATERMARK), views (re-bound from their AST at each use), CTEs, subqueries,
** joins (equi keys, USING/NATURAL, temporal FOR SYSTEM_TIME AS OF, comma joins
** taking their condition from WHERE), window TVFs.  SELECT: WHERE (with
** [NOT] EXISTS / IN subqueries turned into SEMI/ANTI joins where the
** correlation is simple), group windows of the legacy and Spark syntaxes,
** GROUP BY / aggregates / HAVING, OVER, the select list, QUALIFY, DISTINCT,
** ORDER BY (hidden sort columns), LIMIT.  The ROW_NUMBER() pattern over a
** subquery becomes DEDUPLICATE or TOPN.
**
** Owns: nothing beyond the statement's arena.  Does not own: expression
** binding (bind_expr.c) nor statements (binder.c).
*/
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan/binder_int.h"

/* ------------------------------------------------------------------ */
/* nodes                                                               */
/* ------------------------------------------------------------------ */

dp_plan *dp_bind_new_node(dp_binder *b, dp_plan_kind kind, dp_span span, int ninputs, ...) {
  dp_plan *p = dp_arena_calloc(b->a, 1, sizeof *p);
  if (!p) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory building the plan");
  p->kind = kind;
  p->span = span;
  p->ninputs = ninputs;
  if (ninputs > 0) {
    p->inputs = dp_arena_calloc(b->a, (size_t)ninputs, sizeof *p->inputs);
    if (!p->inputs) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory building the plan");
    va_list ap;
    va_start(ap, ninputs);
    for (int i = 0; i < ninputs; i++) p->inputs[i] = va_arg(ap, dp_plan *);
    va_end(ap);
  }
  return p;
}

void dp_bind_schema(dp_binder *b, dp_plan *p, int n) {
  p->schema.ncols = n;
  p->schema.cols = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *p->schema.cols);
  if (!p->schema.cols) dp_bind_err(b, DIPPER_NOMEM, p->span, "out of memory building the plan");
}

static void copy_schema(dp_binder *b, dp_plan *p, const dp_plan *from, int extra) {
  dp_bind_schema(b, p, from->schema.ncols + extra);
  if (p->schema.cols)
    memcpy(p->schema.cols, from->schema.cols, (size_t)from->schema.ncols * sizeof(dp_field));
}

static const dp_type *nullable(dp_binder *b, const dp_type *t) {
  if (!t->not_null) return t;
  const dp_type *r = dp_type_with_nullability(b->a, t, false);
  return r ? r : t;
}

static const dp_type *not_null(dp_binder *b, const dp_type *t) {
  const dp_type *r = dp_type_with_nullability(b->a, t, true);
  return r ? r : t;
}

static dp_expr *col_ref(dp_binder *b, int index, const dp_type *type, dp_span span) {
  dp_expr *e = dp_arena_calloc(b->a, 1, sizeof *e);
  if (!e) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory");
  e->kind = DP_E_COLUMN;
  e->type = type;
  e->span = span;
  e->u.column.index = index;
  return e;
}

static int as_column(const dp_expr *e) {
  return e && e->kind == DP_E_COLUMN && e->u.column.outer == 0 ? e->u.column.index : -1;
}

static const char *expr_name(dp_binder *b, int pos) {
  return dp_arena_printf(b->a, "EXPR$%d", pos);
}

/* Rewrite, in place, the columns of a fresh copy: input column i becomes
** map[i] (kept when map[i] < 0); with `decorrelate`, references one query out
** become input columns and deeper ones move one level in.  Recursion depth is
** bounded by the binder's expression depth limit. */
static void rewrite_cols(dp_expr *x, const int *map, int nmap, bool decorrelate) {
  if (!x) return;
  switch (x->kind) {
  case DP_E_COLUMN:
    if (x->u.column.outer == 0) {
      if (map && x->u.column.index >= 0 && x->u.column.index < nmap && map[x->u.column.index] >= 0)
        x->u.column.index = map[x->u.column.index];
    } else if (decorrelate && x->u.column.outer > 0) {
      x->u.column.outer--;
    }
    break;
  case DP_E_CALL:
    for (int i = 0; i < x->u.call.nargs; i++) rewrite_cols(x->u.call.args[i], map, nmap, decorrelate);
    break;
  case DP_E_CAST:
    rewrite_cols(x->u.cast.arg, map, nmap, decorrelate);
    break;
  case DP_E_CASE:
    for (int i = 0; i < x->u.case_.n; i++) {
      rewrite_cols(x->u.case_.whens[i], map, nmap, decorrelate);
      rewrite_cols(x->u.case_.thens[i], map, nmap, decorrelate);
    }
    rewrite_cols(x->u.case_.else_, map, nmap, decorrelate);
    break;
  case DP_E_FIELD:
    rewrite_cols(x->u.field.arg, map, nmap, decorrelate);
    break;
  case DP_E_SUBQUERY:
    rewrite_cols(x->u.subquery.arg, map, nmap, decorrelate);
    break;
  case DP_E_LITERAL:
    break;
  }
}

/* Copy an expression replacing input column i by map[i] (map[i] < 0: keep). */
static dp_expr *remap(dp_binder *b, const dp_expr *e, const int *map, int nmap) {
  dp_expr *c = dp_bexpr_copy(b->a, e);
  if (!c) return dp_bind_fail(b, DIPPER_NOMEM, e->span, "out of memory");
  rewrite_cols(c, map, nmap, false);
  return c;
}

/* ------------------------------------------------------------------ */
/* FROM: tables, views, CTEs                                           */
/* ------------------------------------------------------------------ */

static dp_plan *bind_from(dp_binder *b, const dp_ast_from *f, dp_bscope *sc, dp_bscope *outer);

/* Apply `AS t(a, b)` / CTE / view column names to a scope. */
static bool rename_cols(dp_binder *b, dp_bscope *sc, int ncols, const char *const *names,
                        dp_span span, const char *what) {
  if (ncols == 0) return true;
  int visible = 0;
  for (int i = 0; i < sc->n; i++)
    if (!sc->cols[i].hidden) visible++;
  if (ncols != visible) {
    dp_bind_err(b, DIPPER_TYPE, span, "%s names %d column%s but its query returns %d", what, ncols,
                ncols == 1 ? "" : "s", visible);
    return false;
  }
  for (int i = 0, k = 0; i < sc->n; i++)
    if (!sc->cols[i].hidden) sc->cols[i].name = names[k++];
  return true;
}

static const char **ident_names(dp_binder *b, int n, const dp_ast_ident *ids) {
  const char **names = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *names);
  if (names)
    for (int i = 0; i < n; i++) names[i] = ids[i].name;
  return names;
}

/* A catalog table: SCAN [+ PROJECT of computed columns] [+ WATERMARK]. */
static dp_plan *bind_table(dp_binder *b, const dp_table_def *t, const char *alias, dp_span span) {
  dp_plan *scan = dp_bind_new_node(b, DP_P_SCAN, span, 0);
  if (!scan) return NULL;
  scan->u.scan.table = t;
  scan->u.scan.alias = alias;
  int ncomputed = 0;
  for (int i = 0; i < t->schema.ncols; i++)
    if (t->cols && t->cols[i].kind == DP_CK_COMPUTED) ncomputed++;
  dp_bind_schema(b, scan, t->schema.ncols - ncomputed);
  int *map = dp_arena_calloc(b->a, (size_t)(t->schema.ncols ? t->schema.ncols : 1), sizeof *map);
  if (!map || !scan->schema.cols) return NULL;
  for (int i = 0, k = 0; i < t->schema.ncols; i++) {
    map[i] = -1;
    if (t->cols && t->cols[i].kind == DP_CK_COMPUTED) continue;
    scan->schema.cols[k] = t->schema.cols[i];
    map[i] = k++;
  }
  dp_plan *top = scan;
  if (ncomputed > 0) {
    dp_plan *proj = dp_bind_new_node(b, DP_P_PROJECT, span, 1, scan);
    if (!proj) return NULL;
    dp_bind_schema(b, proj, t->schema.ncols);
    proj->u.project.n = t->schema.ncols;
    proj->u.project.exprs = dp_arena_calloc(b->a, (size_t)t->schema.ncols, sizeof(dp_expr *));
    if (!proj->u.project.exprs || !proj->schema.cols) return NULL;
    for (int i = 0; i < t->schema.ncols; i++) {
      proj->schema.cols[i] = t->schema.cols[i];
      dp_expr *e;
      if (t->cols[i].kind == DP_CK_COMPUTED) {
        if (!t->cols[i].expr)
          return dp_bind_fail(b, DIPPER_INTERNAL, span, "computed column `%s` of `%s` is not bound",
                              t->schema.cols[i].name, t->name);
        /* computed columns read only physical and metadata columns */
        e = remap(b, t->cols[i].expr, map, t->schema.ncols);
      } else {
        e = col_ref(b, map[i], t->schema.cols[i].type, t->cols[i].span);
      }
      if (!e) return NULL;
      proj->u.project.exprs[i] = e;
    }
    top = proj;
  }
  if (t->watermark_col >= 0 && t->watermark_expr) {
    dp_plan *wm = dp_bind_new_node(b, DP_P_WATERMARK, t->watermark_span, 1, top);
    if (!wm) return NULL;
    copy_schema(b, wm, top, 0);
    wm->u.watermark.time_col = t->watermark_col;
    wm->u.watermark.expr = ncomputed > 0 ? dp_bexpr_copy(b->a, t->watermark_expr)
                                         : remap(b, t->watermark_expr, map, t->schema.ncols);
    wm->u.watermark.delay = t->watermark_delay;
    wm->u.watermark.source = t->name;
    wm->u.watermark.id = -1;
    if (b->q) {
      dp_query_plan *q = b->q;
      dp_watermark_info *g = dp_arena_grow(b->a, q->watermarks, (size_t)q->nwatermarks,
                                           (size_t)q->nwatermarks + 1, sizeof *g);
      if (!g) return dp_bind_fail(b, DIPPER_NOMEM, span, "out of memory");
      q->watermarks = g;
      wm->u.watermark.id = q->nwatermarks;
      g[q->nwatermarks].source = t->name;
      g[q->nwatermarks].column = t->schema.cols[t->watermark_col].name;
      g[q->nwatermarks].delay = t->watermark_delay;
      g[q->nwatermarks].node = wm;
      q->nwatermarks++;
    }
    top = wm;
  }
  return top;
}

static dp_plan *bind_named_relation(dp_binder *b, const dp_ast_name *name, const dp_ast_alias *alias,
                                    dp_span span, dp_bscope *sc) {
  const char *nm = name->parts[name->n - 1].name;
  const char *rel = alias && alias->name.name ? alias->name.name : nm;
  dp_plan *p = NULL;
  /* CTEs shadow catalog names. */
  for (dp_bcte *c = name->n == 1 ? b->ctes : NULL; c; c = c->next) {
    if (!dp_bind_name_eq(c->cte->name.name, nm)) continue;
    dp_bcte *saved = b->ctes;
    b->ctes = c->env;
    p = dp_bind_query(b, c->cte->query, NULL);
    b->ctes = saved;
    if (!p) return NULL;
    dp_bscope_from_plan(b, sc, p, rel);
    if (!rename_cols(b, sc, c->cte->ncols, ident_names(b, c->cte->ncols, c->cte->cols),
                     c->cte->name.span, "the WITH query"))
      return NULL;
    goto aliased;
  }
  const dp_view_def *v = dp_catalog_view(b->cat, nm);
  if (v) {
    for (int i = 0; i < b->nviews; i++)
      if (dp_bind_name_eq(b->views[i], v->name))
        return dp_bind_fail(b, DIPPER_NAME, name->span,
                            "view `%s` refers to itself through other views; break the cycle",
                            v->name);
    if (b->nviews >= (int)(sizeof b->views / sizeof b->views[0]))
      return dp_bind_fail(b, DIPPER_LIMIT, name->span, "views nested more than %d deep",
                          (int)(sizeof b->views / sizeof b->views[0]));
    b->views[b->nviews++] = v->name;
    dp_bcte *saved = b->ctes;
    b->ctes = NULL;
    int before = b->d->count;
    p = dp_bind_query(b, v->query, NULL);
    b->ctes = saved;
    b->nviews--;
    if (!p) {
      if (b->d->count > before)
        dp_bind_err(b, b->first_error ? b->first_error : DIPPER_NAME, name->span,
                    "view `%s` no longer binds (see the error above); recreate it", v->name);
      return NULL;
    }
    dp_bscope_from_plan(b, sc, p, rel);
    if (!rename_cols(b, sc, v->ncols, v->cols, name->span, "the view"))
      return NULL;
    goto aliased;
  }
  const dp_table_def *t = dp_catalog_table(b->cat, nm);
  if (!t) {
    const char *best = dp_catalog_suggest(b->cat, nm);
    if (!best) {
      const char *ctes[16];
      int nctes = 0;
      for (dp_bcte *c = b->ctes; c && nctes < 16; c = c->next) ctes[nctes++] = c->cte->name.name;
      best = dp_bind_suggest(nm, ctes, nctes);
    }
    if (best)
      return dp_bind_fail(b, DIPPER_NAME, name->span, "unknown table `%s`; did you mean `%s`?", nm,
                          best);
    return dp_bind_fail(b, DIPPER_NAME, name->span,
                        "unknown table `%s`; declare it with CREATE TABLE %s (...) WITH (...)", nm,
                        nm);
  }
  p = bind_table(b, t, alias && alias->name.name ? alias->name.name : NULL, span);
  if (!p) return NULL;
  dp_bscope_from_plan(b, sc, p, rel);
aliased:
  if (alias && alias->ncols > 0 &&
      !rename_cols(b, sc, alias->ncols, ident_names(b, alias->ncols, alias->cols), alias->name.span,
                   "the alias"))
    return NULL;
  return p;
}

/* ------------------------------------------------------------------ */
/* FROM: window TVFs                                                   */
/* ------------------------------------------------------------------ */

static dp_plan *window_node(dp_binder *b, dp_plan *in, const dp_window_spec *spec) {
  dp_plan *w = dp_bind_new_node(b, DP_P_WINDOW, spec->span, 1, in);
  if (!w) return NULL;
  int n = in->schema.ncols;
  copy_schema(b, w, in, 3);
  if (!w->schema.cols) return NULL;
  const dp_type *ts3 = not_null(b, dp_type_timestamp(b->a, DP_T_TIMESTAMP, 3));
  const dp_type *tt = in->schema.cols[spec->time_col].type;
  const dp_type *wt = dp_type_timestamp(b->a, tt->kind == DP_T_TIMESTAMP_LTZ ? DP_T_TIMESTAMP_LTZ
                                                                               : DP_T_TIMESTAMP, 3);
  w->schema.cols[n] = (dp_field){"window_start", ts3};
  w->schema.cols[n + 1] = (dp_field){"window_end", ts3};
  w->schema.cols[n + 2] = (dp_field){"window_time", wt ? wt : ts3};
  w->u.window = *spec;
  return w;
}

static bool time_column(dp_binder *b, const dp_bscope *sc, const dp_ast_ident *id, int *col) {
  int found = -1, nfound = 0;
  for (int i = 0; i < sc->n; i++)
    if (!sc->cols[i].hidden && !sc->cols[i].expr && dp_bind_name_eq(sc->cols[i].name, id->name)) {
      if (found < 0) found = i;
      nfound++;
    }
  if (nfound == 0) {
    const char **names = dp_arena_calloc(b->a, (size_t)(sc->n ? sc->n : 1), sizeof *names);
    for (int i = 0; names && i < sc->n; i++) names[i] = sc->cols[i].hidden ? NULL : sc->cols[i].name;
    const char *best = names ? dp_bind_suggest(id->name, names, sc->n) : NULL;
    if (best)
      dp_bind_err(b, DIPPER_NAME, id->span,
                  "DESCRIPTOR names `%s`, which is not a column of the table; did you mean `%s`?",
                  id->name, best);
    else
      dp_bind_err(b, DIPPER_NAME, id->span, "DESCRIPTOR names `%s`, which is not a column of the table",
                  id->name);
    return false;
  }
  if (nfound > 1) {
    dp_bind_err(b, DIPPER_NAME, id->span, "DESCRIPTOR column `%s` is ambiguous", id->name);
    return false;
  }
  if (!dp_type_is_timestamp(sc->cols[found].type)) {
    dp_bind_err(b, DIPPER_TYPE, id->span,
                "window time column `%s` is %s; it must be TIMESTAMP or TIMESTAMP_LTZ (convert it "
                "with a computed column, e.g. ts AS TO_TIMESTAMP_LTZ(%s, 3))",
                id->name, dp_bind_type_str(b, sc->cols[found].type), id->name);
    return false;
  }
  *col = sc->cols[found].index;
  return true;
}

static dp_plan *bind_tvf(dp_binder *b, const dp_ast_from *f, dp_bscope *sc) {
  const dp_ast_expr *call = f->u.tvf.call;
  if (!call || call->kind != DP_AX_CALL) return dp_bind_fail(b, DIPPER_SYNTAX, f->span, "expected a table function call");
  const char *name = call->u.call.name.parts[call->u.call.name.n - 1].name;
  dp_window_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.syntax = DP_WSYN_TVF;
  spec.span = f->span;
  const char *params[4] = {NULL, NULL, NULL, NULL};
  int nparams;
  if (dp_bind_name_eq(name, "tumble")) {
    spec.kind = DP_WIN_TUMBLE;
    params[0] = "size"; params[1] = "offset"; nparams = 2;
  } else if (dp_bind_name_eq(name, "hop")) {
    spec.kind = DP_WIN_HOP;
    params[0] = "slide"; params[1] = "size"; params[2] = "offset"; nparams = 3;
  } else if (dp_bind_name_eq(name, "cumulate")) {
    spec.kind = DP_WIN_CUMULATE;
    params[0] = "step"; params[1] = "size"; params[2] = "offset"; nparams = 3;
  } else if (dp_bind_name_eq(name, "session")) {
    spec.kind = DP_WIN_SESSION;
    params[0] = "gap"; nparams = 1;
  } else {
    return dp_bind_fail(b, DIPPER_UNSUPPORTED, call->u.call.name.span,
                        "unknown table function `%s`; the window functions are TUMBLE, HOP, "
                        "CUMULATE and SESSION",
                        name);
  }
  /* Slots: 0 = DATA, 1 = TIMECOL, 2.. = params in order. */
  const dp_ast_expr *slot[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
  int nslots = 2 + nparams;
  for (int i = 0; i < call->u.call.nargs; i++) {
    const char *an = call->u.call.arg_names ? call->u.call.arg_names[i] : NULL;
    int s = -1;
    if (!an) {
      s = i;
    } else if (dp_bind_name_eq(an, "data")) {
      s = 0;
    } else if (dp_bind_name_eq(an, "timecol")) {
      s = 1;
    } else {
      for (int k = 0; k < nparams; k++)
        if (dp_bind_name_eq(an, params[k])) s = 2 + k;
      if (s < 0)
        return dp_bind_fail(b, DIPPER_NAME, call->u.call.args[i]->span,
                            "%s has no parameter `%s`", name, an);
    }
    if (s >= nslots)
      return dp_bind_fail(b, DIPPER_TYPE, call->u.call.args[i]->span,
                          "too many arguments to %s: it takes (TABLE t, DESCRIPTOR(ts), %s%s%s%s%s)",
                          name, params[0], nparams > 1 ? ", " : "", nparams > 1 ? params[1] : "",
                          nparams > 2 ? " [, " : "", nparams > 2 ? "offset]" : "");
    if (slot[s])
      return dp_bind_fail(b, DIPPER_SYNTAX, call->u.call.args[i]->span,
                          "argument `%s` of %s is given twice", s == 0 ? "DATA" : s == 1 ? "TIMECOL" : params[s - 2], name);
    slot[s] = call->u.call.args[i];
    if (s == 0 && !(call->u.call.table_arg && call->u.call.table_arg[i]))
      return dp_bind_fail(b, DIPPER_TYPE, slot[0]->span,
                          "the first argument of %s must be a table: TABLE %s", name,
                          slot[0]->kind == DP_AX_COLUMN ? slot[0]->u.name.parts[0].name : "t");
  }
  bool offset_optional = spec.kind != DP_WIN_SESSION;
  int required = offset_optional ? nslots - 1 : nslots;
  if (spec.kind == DP_WIN_TUMBLE) required = 3;
  for (int s = 0; s < required; s++)
    if (!slot[s])
      return dp_bind_fail(b, DIPPER_TYPE, call->span, "%s is missing its %s argument; write %s", name,
                          s == 0 ? "TABLE" : s == 1 ? "DESCRIPTOR(time column)" : params[s - 2],
                          spec.kind == DP_WIN_TUMBLE ? "TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTE)"
                          : spec.kind == DP_WIN_HOP ? "HOP(TABLE t, DESCRIPTOR(ts), slide, size)"
                          : spec.kind == DP_WIN_CUMULATE ? "CUMULATE(TABLE t, DESCRIPTOR(ts), step, max size)"
                                                         : "SESSION(TABLE t, DESCRIPTOR(ts), gap)");
  if (slot[0]->kind != DP_AX_COLUMN)
    return dp_bind_fail(b, DIPPER_TYPE, slot[0]->span, "the first argument of %s must be TABLE name", name);
  dp_bscope inner;
  memset(&inner, 0, sizeof inner);
  dp_plan *in = bind_named_relation(b, &slot[0]->u.name, NULL, slot[0]->span, &inner);
  if (!in) return NULL;
  if (slot[1]->kind != DP_AX_DESCRIPTOR)
    return dp_bind_fail(b, DIPPER_TYPE, slot[1]->span,
                        "the time argument of %s must be DESCRIPTOR(column)", name);
  if (slot[1]->u.descriptor.n != 1)
    return dp_bind_fail(b, DIPPER_TYPE, slot[1]->span,
                        "DESCRIPTOR of a window names exactly one time column");
  if (!time_column(b, &inner, &slot[1]->u.descriptor.cols[0], &spec.time_col)) return NULL;
  int64_t v[3] = {0, 0, 0};
  for (int k = 0; k < nparams; k++) {
    if (!slot[2 + k]) continue;
    if (dp_bind_name_eq(params[k], "offset")) {
      int rc = dp_bind_interval(b->d, slot[2 + k], &v[k]);
      if (rc) {
        if (!b->first_error) b->first_error = rc;
        return NULL;
      }
    } else if (!dp_bind_interval_arg(b, slot[2 + k], dp_arena_printf(b->a, "the %s of %s", params[k], name),
                                     &v[k])) {
      return NULL;
    }
  }
  switch (spec.kind) {
  case DP_WIN_TUMBLE:
    spec.size = spec.slide = v[0];
    spec.offset = v[1];
    break;
  case DP_WIN_HOP:
  case DP_WIN_CUMULATE:
    spec.slide = v[0];
    spec.size = v[1];
    spec.offset = v[2];
    if (spec.size % spec.slide != 0) {
      char sz[48], sl[48];
      dp_format_duration(sz, sizeof sz, spec.size);
      dp_format_duration(sl, sizeof sl, spec.slide);
      return dp_bind_fail(b, DIPPER_TYPE, slot[3]->span,
                          spec.kind == DP_WIN_HOP
                              ? "HOP size (%s) must be a whole multiple of the slide (%s)"
                              : "CUMULATE max size (%s) must be a whole multiple of the step (%s)",
                          sz, sl);
    }
    break;
  case DP_WIN_SESSION:
    spec.gap = v[0];
    break;
  }
  if (spec.offset != 0 && (spec.offset >= spec.size || -spec.offset >= spec.size))
    return dp_bind_fail(b, DIPPER_TYPE, slot[nslots - 1]->span,
                        "the window offset must be smaller than the window size");
  if (call->u.call.npartition_by > 0) {
    if (spec.kind != DP_WIN_SESSION)
      return dp_bind_fail(b, DIPPER_TYPE, call->u.call.partition_by[0]->span,
                          "PARTITION BY in the table argument is only for SESSION windows");
    spec.npartition = call->u.call.npartition_by;
    spec.partition = dp_arena_calloc(b->a, (size_t)spec.npartition, sizeof(int));
    if (!spec.partition) return NULL;
    dp_bexpr x;
    dp_bexpr_init(&x, b, &inner, 0, "PARTITION BY");
    for (int i = 0; i < spec.npartition; i++) {
      dp_expr *e = dp_bind_expr(&x, call->u.call.partition_by[i]);
      if (!e) return NULL;
      if ((spec.partition[i] = as_column(e)) < 0)
        return dp_bind_fail(b, DIPPER_TYPE, e->span, "SESSION PARTITION BY takes columns");
    }
  }
  dp_plan *w = window_node(b, in, &spec);
  if (!w) return NULL;
  const char *rel = f->alias.name.name ? f->alias.name.name : slot[0]->u.name.parts[slot[0]->u.name.n - 1].name;
  for (int i = 0; i < inner.n; i++) inner.cols[i].rel = rel;
  for (int i = 0; i < inner.n; i++) dp_bscope_add(b, sc, inner.cols[i].rel, inner.cols[i].name, inner.cols[i].type, inner.cols[i].index, inner.cols[i].expr);
  int n = in->schema.ncols;
  for (int k = 0; k < 3; k++)
    dp_bscope_add(b, sc, rel, w->schema.cols[n + k].name, w->schema.cols[n + k].type, n + k, NULL);
  return w;
}

/* ------------------------------------------------------------------ */
/* FROM: joins                                                         */
/* ------------------------------------------------------------------ */

/* Equi keys `l.a = r.b` among the conjuncts of a join condition. */
static void extract_keys(dp_binder *b, dp_plan *j) {
  int nl = j->inputs[0]->schema.ncols;
  int n = 0, cap = 0;
  dp_expr **conj = NULL;
  j->u.join.nkeys = 0;
  if (!j->u.join.cond) return;
  dp_bind_conjuncts(b, j->u.join.cond, &n, &cap, &conj);
  j->u.join.left_keys = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof(int));
  j->u.join.right_keys = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof(int));
  if (!j->u.join.left_keys || !j->u.join.right_keys) return;
  for (int i = 0; i < n; i++) {
    dp_expr *c = conj[i];
    if (c->kind != DP_E_CALL || c->u.call.nargs != 2 || strcmp(c->u.call.fn->name, "eq") != 0)
      continue;
    int l = as_column(c->u.call.args[0]), r = as_column(c->u.call.args[1]);
    if (l < 0 || r < 0) continue;
    if (l >= nl && r < nl) {
      int t = l;
      l = r;
      r = t;
    }
    if (l < nl && r >= nl) {
      j->u.join.left_keys[j->u.join.nkeys] = l;
      j->u.join.right_keys[j->u.join.nkeys++] = r - nl;
    }
  }
}

/* L CROSS JOIN UNNEST(arr) AS t(x): an UNNEST node over L appending the
** element column(s) — ROW elements spread into their fields, MAP into key and
** value — and the ordinality with WITH ORDINALITY. */
static dp_plan *bind_unnest_join(dp_binder *b, const dp_ast_from *f, dp_bscope *sc, dp_bscope *outer) {
  const dp_ast_from *uf = f->u.join.right;
  if (f->u.join.kind != DP_JOIN_CROSS && f->u.join.kind != DP_JOIN_COMMA && f->u.join.kind != DP_JOIN_INNER)
    return dp_bind_fail(b, DIPPER_UNSUPPORTED, f->span,
                        "only CROSS JOIN UNNEST(..) is supported; rows whose array is empty are dropped");
  if (uf->u.unnest.n != 1)
    return dp_bind_fail(b, DIPPER_UNSUPPORTED, uf->span, "UNNEST takes one array or map");
  dp_bscope ls;
  memset(&ls, 0, sizeof ls);
  dp_plan *l = bind_from(b, f->u.join.left, &ls, outer);
  if (!l) return NULL;
  dp_bexpr x;
  dp_bexpr_init(&x, b, &ls, 0, "UNNEST");
  dp_expr *arg = dp_bind_expr(&x, uf->u.unnest.args[0]);
  if (!arg) return NULL;
  const dp_type *t = arg->type;
  dp_field cols[64];
  int ncols = 0;
  if (t->kind == DP_T_ARRAY && t->elem && t->elem->kind == DP_T_ROW && t->elem->nfields < 63) {
    for (int i = 0; i < t->elem->nfields; i++) cols[ncols++] = t->elem->fields[i];
  } else if (t->kind == DP_T_ARRAY) {
    cols[ncols++] = (dp_field){"f0", t->elem ? t->elem : dp_type_of(DP_T_NULL)};
  } else if (t->kind == DP_T_MAP) {
    cols[ncols++] = (dp_field){"f0", t->elem};
    cols[ncols++] = (dp_field){"f1", t->value};
  } else {
    return dp_bind_fail(b, DIPPER_TYPE, arg->span, "UNNEST needs an ARRAY or a MAP, not %s",
                        dp_bind_type_str(b, t));
  }
  if (uf->u.unnest.with_ordinality)
    cols[ncols++] = (dp_field){"ordinality", not_null(b, dp_type_of(DP_T_INT))};
  if (uf->alias.ncols > 0) {
    if (uf->alias.ncols != ncols)
      return dp_bind_fail(b, DIPPER_TYPE, uf->alias.name.span, "UNNEST gives %d column%s, the alias names %d",
                          ncols, ncols == 1 ? "" : "s", uf->alias.ncols);
    for (int i = 0; i < ncols; i++) cols[i].name = uf->alias.cols[i].name;
  }
  dp_plan *u = dp_bind_new_node(b, DP_P_UNNEST, uf->span, 1, l);
  if (!u) return NULL;
  int nl = l->schema.ncols;
  copy_schema(b, u, l, ncols);
  if (!u->schema.cols) return NULL;
  for (int i = 0; i < ncols; i++) u->schema.cols[nl + i] = cols[i];
  u->u.unnest.arg = arg;
  u->u.unnest.with_ordinality = uf->u.unnest.with_ordinality;
  for (int i = 0; i < ls.n; i++) {
    dp_bscope_add(b, sc, ls.cols[i].rel, ls.cols[i].name, ls.cols[i].type, ls.cols[i].index, ls.cols[i].expr);
    sc->cols[sc->n - 1].hidden = ls.cols[i].hidden;
  }
  for (int i = 0; i < ncols; i++)
    dp_bscope_add(b, sc, uf->alias.name.name, cols[i].name, cols[i].type, nl + i, NULL);
  return u;
}

static dp_plan *bind_join(dp_binder *b, const dp_ast_from *f, dp_bscope *sc, dp_bscope *outer) {
  if (f->u.join.right->kind == DP_AF_UNNEST) return bind_unnest_join(b, f, sc, outer);
  dp_bscope ls, rs;
  memset(&ls, 0, sizeof ls);
  memset(&rs, 0, sizeof rs);
  ls.outer = rs.outer = outer;
  dp_plan *l = bind_from(b, f->u.join.left, &ls, outer);
  dp_plan *r = bind_from(b, f->u.join.right, &rs, outer);
  if (!l || !r) return NULL;
  for (int i = 0; i < rs.n; i++) {
    if (!rs.cols[i].rel || (i > 0 && rs.cols[i - 1].rel == rs.cols[i].rel)) continue;
    for (int k = 0; k < ls.n; k++)
      if (ls.cols[k].rel && dp_bind_name_eq(ls.cols[k].rel, rs.cols[i].rel)) {
        const dp_ast_from *rf = f->u.join.right;
        dp_span at = rf->alias.name.name ? rf->alias.name.span : rf->span;
        return dp_bind_fail(b, DIPPER_DUPLICATE, at,
                            "`%s` names two inputs of this join; give each its own alias",
                            rs.cols[i].rel);
      }
  }
  dp_join_kind kind;
  switch (f->u.join.kind) {
  case DP_JOIN_INNER: kind = DP_J_INNER; break;
  case DP_JOIN_LEFT: kind = DP_J_LEFT; break;
  case DP_JOIN_RIGHT: kind = DP_J_RIGHT; break;
  case DP_JOIN_FULL: kind = DP_J_FULL; break;
  case DP_JOIN_LEFT_SEMI: kind = DP_J_SEMI; break;
  case DP_JOIN_LEFT_ANTI: kind = DP_J_ANTI; break;
  default: kind = DP_J_CROSS; break;
  }
  dp_plan *j = dp_bind_new_node(b, DP_P_JOIN, f->span, 2, l, r);
  if (!j) return NULL;
  j->u.join.kind = kind;
  int nl = l->schema.ncols, nr = r->schema.ncols;
  bool semi = kind == DP_J_SEMI || kind == DP_J_ANTI;
  bool null_left = kind == DP_J_RIGHT || kind == DP_J_FULL;
  bool null_right = kind == DP_J_LEFT || kind == DP_J_FULL;
  /* The condition sees both sides. */
  dp_bscope both;
  memset(&both, 0, sizeof both);
  both.outer = outer;
  for (int i = 0; i < ls.n; i++) {
    dp_bcol c = ls.cols[i];
    if (null_left) c.type = nullable(b, c.type);
    dp_bscope_add(b, &both, c.rel, c.name, c.type, c.index, c.expr);
    both.cols[both.n - 1].hidden = c.hidden;
  }
  for (int i = 0; i < rs.n; i++) {
    dp_bcol c = rs.cols[i];
    if (null_right) c.type = nullable(b, c.type);
    dp_expr *ce = c.expr ? dp_bexpr_shift(b->a, c.expr, nl) : NULL;
    dp_bscope_add(b, &both, c.rel, c.name, c.type, c.index >= 0 ? c.index + nl : -1, ce);
    both.cols[both.n - 1].hidden = c.hidden;
  }
  /* FOR SYSTEM_TIME AS OF o.ts: the right side is versioned, looked up at the left's time. */
  const dp_ast_from *rf = f->u.join.right;
  if (rf->kind == DP_AF_TABLE && rf->u.table.as_of) {
    dp_bexpr x;
    dp_bexpr_init(&x, b, &ls, 0, "FOR SYSTEM_TIME AS OF");
    dp_expr *as_of = dp_bind_expr(&x, rf->u.table.as_of);
    if (!as_of) return NULL;
    if (!dp_type_is_timestamp(as_of->type))
      return dp_bind_fail(b, DIPPER_TYPE, as_of->span,
                          "FOR SYSTEM_TIME AS OF needs a TIMESTAMP time column of the left side, not %s",
                          dp_bind_type_str(b, as_of->type));
    if (kind != DP_J_INNER && kind != DP_J_LEFT)
      return dp_bind_fail(b, DIPPER_UNSUPPORTED, f->span,
                          "a temporal join (FOR SYSTEM_TIME AS OF) must be an INNER or LEFT join");
    j->u.join.as_of = as_of;
  }
  dp_expr *cond = NULL;
  if (f->u.join.on) {
    dp_bexpr x;
    dp_bexpr_init(&x, b, &both, 0, "ON");
    if (!(cond = dp_bind_cond(&x, f->u.join.on))) return NULL;
  } else if (f->u.join.nusing > 0 || f->u.join.natural) {
    /* USING (k) / NATURAL: k = k, and k appears once in the output. */
    int nusing = f->u.join.nusing;
    const char **names = NULL;
    dp_span span = f->span;
    if (f->u.join.natural) {
      names = dp_arena_calloc(b->a, (size_t)(ls.n ? ls.n : 1), sizeof *names);
      if (!names) return NULL;
      nusing = 0;
      for (int i = 0; i < ls.n; i++) {
        if (ls.cols[i].hidden) continue;
        for (int k = 0; k < rs.n; k++)
          if (!rs.cols[k].hidden && dp_bind_name_eq(ls.cols[i].name, rs.cols[k].name)) {
            names[nusing++] = ls.cols[i].name;
            break;
          }
      }
    } else {
      names = ident_names(b, nusing, f->u.join.using_);
    }
    dp_expr **conds = dp_arena_calloc(b->a, (size_t)(nusing ? nusing : 1), sizeof *conds);
    if (!conds) return NULL;
    for (int u = 0; u < nusing; u++) {
      int li = -1, ri = -1;
      for (int i = 0; i < ls.n; i++)
        if (!ls.cols[i].hidden && dp_bind_name_eq(ls.cols[i].name, names[u])) li = ls.n + i;
      for (int i = 0; i < rs.n; i++)
        if (!rs.cols[i].hidden && dp_bind_name_eq(rs.cols[i].name, names[u])) ri = i;
      if (!f->u.join.natural) span = f->u.join.using_[u].span;
      if (li < 0 || ri < 0)
        return dp_bind_fail(b, DIPPER_NAME, span, "USING column `%s` is not in the %s side of the join",
                            names[u], li < 0 ? "left" : "right");
      li -= ls.n;
      dp_bcol *lc = &both.cols[li], *rc = &both.cols[ls.n + ri];
      if (lc->expr || rc->expr)
        return dp_bind_fail(b, DIPPER_UNSUPPORTED, span, "USING on a merged column is not supported");
      dp_expr *le = col_ref(b, lc->index, lc->type, span), *re = col_ref(b, rc->index, rc->type, span);
      dp_expr *args[2] = {le, re};
      if (!le || !re) return NULL;
      const dp_type *ct = dp_type_common(b->a, le->type, re->type);
      if (!ct)
        return dp_bind_fail(b, DIPPER_TYPE, span, "USING column `%s` is %s on the left and %s on the right",
                            names[u], dp_bind_type_str(b, le->type), dp_bind_type_str(b, re->type));
      args[0] = dp_bind_coerce(b, le, ct, "USING");
      args[1] = dp_bind_coerce(b, re, ct, "USING");
      if (!(conds[u] = dp_bind_call_named(b, "eq", 2, args, span))) return NULL;
      if (kind == DP_J_FULL) {
        lc->hidden = rc->hidden = true;
        dp_expr *m = dp_bind_call_named(b, "coalesce", 2, args, span);
        if (!m) return NULL;
        dp_bscope_add(b, &both, NULL, names[u], m->type, -1, m);
      } else if (kind == DP_J_RIGHT) {
        lc->hidden = true;
      } else {
        rc->hidden = true;
      }
    }
    cond = dp_bind_and(b, nusing, conds);
  } else if (kind != DP_J_CROSS) {
    return dp_bind_fail(b, DIPPER_SYNTAX, f->span, "this join needs ON <condition> or USING (columns)");
  }
  /* the merged columns of FULL JOIN .. USING come first, as `*` shows them */
  if (kind == DP_J_FULL && both.n > ls.n + rs.n) {
    int nmerged = both.n - ls.n - rs.n;
    dp_bcol *rot = dp_arena_calloc(b->a, (size_t)both.n, sizeof *rot);
    if (!rot) return NULL;
    memcpy(rot, both.cols + ls.n + rs.n, (size_t)nmerged * sizeof *rot);
    memcpy(rot + nmerged, both.cols, (size_t)(ls.n + rs.n) * sizeof *rot);
    memcpy(both.cols, rot, (size_t)both.n * sizeof *rot);
  }
  j->u.join.cond = cond;
  extract_keys(b, j);
  if (semi) {
    copy_schema(b, j, l, 0);
    for (int i = 0; i < ls.n; i++) {
      dp_bscope_add(b, sc, ls.cols[i].rel, ls.cols[i].name, ls.cols[i].type, ls.cols[i].index, ls.cols[i].expr);
      sc->cols[sc->n - 1].hidden = ls.cols[i].hidden;
    }
    return j;
  }
  dp_bind_schema(b, j, nl + nr);
  if (!j->schema.cols) return NULL;
  for (int i = 0; i < nl; i++)
    j->schema.cols[i] = (dp_field){l->schema.cols[i].name,
                                   null_left ? nullable(b, l->schema.cols[i].type) : l->schema.cols[i].type};
  for (int i = 0; i < nr; i++)
    j->schema.cols[nl + i] = (dp_field){r->schema.cols[i].name,
                                        null_right ? nullable(b, r->schema.cols[i].type) : r->schema.cols[i].type};
  for (int i = 0; i < both.n; i++) {
    dp_bscope_add(b, sc, both.cols[i].rel, both.cols[i].name, both.cols[i].type, both.cols[i].index, both.cols[i].expr);
    sc->cols[sc->n - 1].hidden = both.cols[i].hidden;
  }
  return j;
}

static dp_plan *bind_values(dp_binder *b, const dp_ast_from *f, dp_bscope *sc) {
  int nrows = f->u.values.nrows, ncols = f->u.values.ncols;
  dp_plan *p = dp_bind_new_node(b, DP_P_VALUES, f->span, 0);
  if (!p) return NULL;
  dp_expr **cells = dp_arena_calloc(b->a, (size_t)(nrows * ncols > 0 ? nrows * ncols : 1), sizeof *cells);
  dp_expr **col = dp_arena_calloc(b->a, (size_t)(nrows ? nrows : 1), sizeof *col);
  if (!cells || !col) return NULL;
  dp_bscope empty;
  memset(&empty, 0, sizeof empty);
  dp_bexpr x;
  dp_bexpr_init(&x, b, &empty, 0, "VALUES");
  bool ok = true;
  for (int i = 0; i < nrows * ncols; i++)
    if (!(cells[i] = dp_bind_expr(&x, f->u.values.cells[i]))) ok = false;
  if (!ok) return NULL;
  dp_bind_schema(b, p, ncols);
  if (!p->schema.cols) return NULL;
  for (int c = 0; c < ncols; c++) {
    const dp_type *ct = NULL;
    for (int r = 0; r < nrows; r++) {
      const dp_type *t = cells[r * ncols + c]->type;
      if (t->kind == DP_T_NULL) continue;
      if (!ct) {
        ct = t;
      } else {
        const dp_type *nt = dp_type_common(b->a, ct, t);
        if (!nt)
          return dp_bind_fail(b, DIPPER_TYPE, cells[r * ncols + c]->span,
                              "VALUES column %d mixes %s and %s; CAST them to one type", c + 1,
                              dp_bind_type_str(b, ct), dp_bind_type_str(b, t));
        ct = nt;
      }
    }
    if (!ct) ct = dp_type_of(DP_T_NULL);
    bool nn = true;
    for (int r = 0; r < nrows; r++) {
      dp_expr **cell = &cells[r * ncols + c];
      if (!(*cell)->type->not_null) nn = false;
      if (!dp_type_equal((*cell)->type, ct) && !(*cell = dp_bind_coerce(b, *cell, ct, "VALUES")))
        return NULL;
    }
    const char *nm = c < f->alias.ncols ? f->alias.cols[c].name : expr_name(b, c);
    p->schema.cols[c] = (dp_field){nm, nn ? not_null(b, ct) : nullable(b, ct)};
  }
  if (f->alias.ncols && f->alias.ncols != ncols)
    return dp_bind_fail(b, DIPPER_TYPE, f->alias.name.span, "the alias names %d columns but VALUES has %d",
                        f->alias.ncols, ncols);
  p->u.values.nrows = nrows;
  p->u.values.cells = cells;
  dp_bscope_from_plan(b, sc, p, f->alias.name.name);
  return p;
}

static dp_plan *bind_from(dp_binder *b, const dp_ast_from *f, dp_bscope *sc, dp_bscope *outer) {
  sc->outer = outer;
  if (++b->depth > DP_BIND_MAX_DEPTH) {
    b->depth--;
    return dp_bind_fail(b, DIPPER_LIMIT, f->span, "FROM clause nested too deeply");
  }
  dp_plan *p = NULL;
  switch (f->kind) {
  case DP_AF_TABLE:
    p = bind_named_relation(b, &f->u.table.name, &f->alias, f->span, sc);
    break;
  case DP_AF_SUBQUERY:
    if (f->u.subquery.lateral) {
      p = dp_bind_fail(b, DIPPER_UNSUPPORTED, f->span, "LATERAL subqueries are not supported yet");
      break;
    }
    p = dp_bind_query(b, f->u.subquery.query, NULL);
    if (p) {
      dp_bscope_from_plan(b, sc, p, f->alias.name.name);
      if (f->alias.ncols && !rename_cols(b, sc, f->alias.ncols, ident_names(b, f->alias.ncols, f->alias.cols),
                                         f->alias.name.span, "the alias"))
        p = NULL;
    }
    break;
  case DP_AF_JOIN:
    p = bind_join(b, f, sc, outer);
    break;
  case DP_AF_TVF:
    p = bind_tvf(b, f, sc);
    break;
  case DP_AF_VALUES:
    p = bind_values(b, f, sc);
    break;
  case DP_AF_UNNEST:
    p = dp_bind_fail(b, DIPPER_UNSUPPORTED, f->span,
                     "UNNEST must follow a table: FROM t CROSS JOIN UNNEST(t.arr) AS u(x)");
    break;
  }
  b->depth--;
  return p;
}

/* ------------------------------------------------------------------ */
/* WHERE: subqueries to semi/anti joins, comma-join conditions         */
/* ------------------------------------------------------------------ */

/* Does any expression of the plan (not of nested subqueries) refer outward? */
static bool plan_is_correlated(const dp_plan *p) {
  switch (p->kind) {
  case DP_P_PROJECT:
    for (int i = 0; i < p->u.project.n; i++)
      if (dp_bexpr_has_outer(p->u.project.exprs[i], 1)) return true;
    break;
  case DP_P_FILTER:
    if (dp_bexpr_has_outer(p->u.filter.cond, 1)) return true;
    break;
  case DP_P_JOIN:
    if (dp_bexpr_has_outer(p->u.join.cond, 1)) return true;
    break;
  case DP_P_AGGREGATE:
    for (int i = 0; i < p->u.aggregate.ngroup; i++)
      if (dp_bexpr_has_outer(p->u.aggregate.group[i], 1)) return true;
    for (int i = 0; i < p->u.aggregate.naggs; i++)
      for (int k = 0; k < p->u.aggregate.aggs[i].nargs; k++)
        if (dp_bexpr_has_outer(p->u.aggregate.aggs[i].args[k], 1)) return true;
    break;
  default:
    break;
  }
  for (int i = 0; i < p->ninputs; i++)
    if (plan_is_correlated(p->inputs[i])) return true;
  return false;
}

/* Rewrite a correlated condition of the subquery as a join condition over
** left ++ right: outer level-1 columns become left columns, inner ones shift
** past the left. */
static dp_expr *decorrelate(dp_binder *b, const dp_expr *e, int nl) {
  dp_expr *c = dp_bexpr_shift(b->a, e, nl);
  if (!c) return NULL;
  rewrite_cols(c, NULL, 0, true);
  return c;
}

/* [NOT] EXISTS / [NOT] IN (subquery) as the whole WHERE conjunct → SEMI/ANTI
** join, when the subquery is a projection over one filter holding all of its
** correlation; anything else stays a DP_E_SUBQUERY for the engines to refuse. */
static dp_plan *try_semi_join(dp_binder *b, dp_plan *left, dp_expr *conj) {
  if (conj->kind != DP_E_SUBQUERY || conj->u.subquery.kind == DP_SUBQ_SCALAR) return NULL;
  dp_plan *sub = conj->u.subquery.plan;
  bool is_in = conj->u.subquery.kind == DP_SUBQ_IN;
  int nl = left->schema.ncols;
  dp_plan *right = sub;
  dp_expr *val = NULL; /* IN: the compared value, over `right` */
  int n = 0, cap = 0;
  dp_expr **conj2 = NULL;
  if (is_in && !plan_is_correlated(sub)) {
    val = col_ref(b, 0, sub->schema.cols[0].type, conj->span);
  } else {
    if (right->kind != DP_P_PROJECT || right->inputs[0]->kind != DP_P_FILTER) return NULL;
    if (is_in) {
      val = right->u.project.exprs[0];
      if (dp_bexpr_has_outer(val, 1)) return NULL;
    }
    right = right->inputs[0];
    dp_bind_conjuncts(b, right->u.filter.cond, &n, &cap, &conj2);
    right = right->inputs[0];
  }
  if (!val && n == 0) return NULL;
  if (plan_is_correlated(right)) return NULL;
  dp_expr **jc = dp_arena_calloc(b->a, (size_t)n + 2, sizeof *jc);
  dp_expr **rest = dp_arena_calloc(b->a, (size_t)n + 1, sizeof *rest);
  int nj = 0, nrest = 0;
  if (!jc || !rest) return NULL;
  for (int i = 0; i < n; i++) {
    if (dp_bexpr_has_outer(conj2[i], 2)) return NULL;
    if (conj2[i]->kind == DP_E_SUBQUERY) return NULL;
    if (dp_bexpr_has_outer(conj2[i], 1)) {
      if (!(jc[nj++] = decorrelate(b, conj2[i], nl))) return NULL;
    } else {
      rest[nrest++] = conj2[i];
    }
  }
  if (!is_in && nj == 0) return NULL; /* uncorrelated EXISTS: a constant, not a join */
  if (nrest > 0) {
    dp_plan *f = dp_bind_new_node(b, DP_P_FILTER, right->span, 1, right);
    if (!f) return NULL;
    copy_schema(b, f, right, 0);
    if (!(f->u.filter.cond = dp_bind_and(b, nrest, rest))) return NULL;
    right = f;
  }
  if (is_in) {
    dp_expr *args[2] = {dp_bexpr_copy(b->a, conj->u.subquery.arg), dp_bexpr_shift(b->a, val, nl)};
    if (!args[0] || !args[1]) return NULL;
    const dp_type *ct = dp_type_common(b->a, args[0]->type, args[1]->type);
    if (ct) {
      args[0] = dp_bind_coerce(b, args[0], ct, "IN");
      args[1] = dp_bind_coerce(b, args[1], ct, "IN");
    }
    dp_expr *eq = dp_bind_call_named(b, "eq", 2, args, conj->span);
    if (!eq) return NULL;
    jc[nj++] = eq;
  }
  dp_plan *j = dp_bind_new_node(b, DP_P_JOIN, conj->span, 2, left, right);
  if (!j) return NULL;
  j->u.join.kind = conj->u.subquery.negated ? DP_J_ANTI : DP_J_SEMI;
  if (!(j->u.join.cond = dp_bind_and(b, nj, jc))) return NULL;
  extract_keys(b, j);
  copy_schema(b, j, left, 0);
  return j;
}

/* Move WHERE conjuncts that join both sides of a comma/CROSS join into its condition. */
static void push_into_cross(dp_binder *b, dp_plan *p, int off, int n, dp_expr **conj, bool *taken) {
  if (p->kind != DP_P_JOIN || p->u.join.kind != DP_J_CROSS || p->ninputs != 2) return;
  int nl = p->inputs[0]->schema.ncols, nr = p->inputs[1]->schema.ncols;
  push_into_cross(b, p->inputs[0], off, n, conj, taken);
  push_into_cross(b, p->inputs[1], off + nl, n, conj, taken);
  int total = 1 << 30;
  for (int i = 0; i < n; i++) {
    if (taken[i] || !conj[i] || conj[i]->kind == DP_E_SUBQUERY) continue;
    if (dp_bexpr_uses_range(conj[i], 0, off) || dp_bexpr_uses_range(conj[i], off + nl + nr, total))
      continue;
    if (!dp_bexpr_uses_range(conj[i], off, off + nl) || !dp_bexpr_uses_range(conj[i], off + nl, off + nl + nr))
      continue;
    dp_expr *c = dp_bexpr_shift(b->a, conj[i], -off);
    if (!c) return;
    if (p->u.join.cond) {
      dp_expr *args[2] = {p->u.join.cond, c};
      c = dp_bind_call_named(b, "and", 2, args, dp_span_join(p->u.join.cond->span, c->span));
      if (!c) return;
    }
    p->u.join.cond = c;
    p->u.join.kind = DP_J_INNER;
    taken[i] = true;
  }
  if (p->u.join.cond) extract_keys(b, p);
}

/* ------------------------------------------------------------------ */
/* ROW_NUMBER() patterns                                               */
/* ------------------------------------------------------------------ */

static bool int_literal(const dp_expr *e, int64_t *v) {
  if (!e || e->kind != DP_E_LITERAL || e->u.value.is_null || !dp_type_is_integer(e->type)) return false;
  *v = e->u.value.u.i;
  return true;
}

/* `rn = 1`, `rn <= N`, `rn < N` over PROJECT(OVER(x)) with one ranking call:
** returns the replacement plan and marks the conjunct taken, or NULL. */
static dp_plan *try_rank_pattern(dp_binder *b, dp_plan *p, int n, dp_expr **conj, bool *taken) {
  if (p->kind != DP_P_PROJECT || p->inputs[0]->kind != DP_P_OVER) return NULL;
  dp_plan *over = p->inputs[0];
  if (over->u.over.ncalls != 1) return NULL;
  const dp_over_call *call = &over->u.over.calls[0];
  const char *fname = call->fn->name;
  dp_rank_kind rk;
  if (strcmp(fname, "row_number") == 0) rk = DP_RANK_ROW_NUMBER;
  else if (strcmp(fname, "rank") == 0) rk = DP_RANK_RANK;
  else if (strcmp(fname, "dense_rank") == 0) rk = DP_RANK_DENSE_RANK;
  else return NULL;
  dp_plan *x = over->inputs[0];
  int rank_col = x->schema.ncols;
  for (int i = 0; i < n; i++) {
    if (taken[i]) continue;
    dp_expr *c = conj[i];
    if (c->kind != DP_E_CALL || c->u.call.nargs != 2) continue;
    const char *op = c->u.call.fn->name;
    dp_expr *l = c->u.call.args[0], *r = c->u.call.args[1];
    int64_t k;
    bool flipped = false;
    /* unwrap implicit casts around the rank column */
    while (l->kind == DP_E_CAST) l = l->u.cast.arg;
    while (r->kind == DP_E_CAST) r = r->u.cast.arg;
    if (!int_literal(r, &k)) {
      dp_expr *t = l;
      l = r;
      r = t;
      flipped = true;
      if (!int_literal(r, &k)) continue;
    }
    int pc = as_column(l);
    if (pc < 0 || pc >= p->u.project.n || as_column(p->u.project.exprs[pc]) != rank_col) continue;
    int64_t limit;
    if (strcmp(op, "eq") == 0 && k == 1) limit = 1;
    else if (strcmp(op, flipped ? "ge" : "le") == 0) limit = k;
    else if (strcmp(op, flipped ? "gt" : "lt") == 0) limit = k - 1;
    else continue;
    if (limit < 1)
      return dp_bind_fail(b, DIPPER_TYPE, c->span,
                          "this filter on the rank keeps no rows; write rn <= N with N >= 1");
    /* partition keys must be columns of x */
    int np = over->u.over.npartition;
    int *keys = dp_arena_calloc(b->a, (size_t)(np ? np : 1), sizeof(int));
    if (!keys) return NULL;
    for (int q = 0; q < np; q++)
      if ((keys[q] = as_column(over->u.over.partition[q])) < 0) return NULL;
    bool uses_rank = false;
    for (int q = 0; q < p->u.project.n; q++)
      if (dp_bexpr_uses_range(p->u.project.exprs[q], rank_col, rank_col + 1)) uses_rank = true;
    dp_plan *node;
    int oc = over->u.over.norder == 1 ? as_column(over->u.over.order[0].expr) : -1;
    bool dedup = limit == 1 && rk == DP_RANK_ROW_NUMBER && oc >= 0 &&
                 dp_type_is_timestamp(x->schema.cols[oc].type);
    if (dedup) {
      node = dp_bind_new_node(b, DP_P_DEDUPLICATE, c->span, 1, x);
      if (!node) return NULL;
      copy_schema(b, node, x, 0);
      node->u.dedup.nkeys = np;
      node->u.dedup.keys = keys;
      node->u.dedup.order_col = oc;
      node->u.dedup.keep_last = over->u.over.order[0].desc;
    } else {
      node = dp_bind_new_node(b, DP_P_TOPN, c->span, 1, x);
      if (!node) return NULL;
      copy_schema(b, node, x, uses_rank ? 1 : 0);
      if (uses_rank) node->schema.cols[rank_col] = over->schema.cols[rank_col];
      node->u.topn.npartition = np;
      node->u.topn.partition = keys;
      node->u.topn.nkeys = over->u.over.norder;
      node->u.topn.order = over->u.over.order;
      node->u.topn.n = limit;
      node->u.topn.rank = rk;
      node->u.topn.emit_rank = uses_rank;
    }
    /* The projection above stays; the rank column becomes 1 under deduplication. */
    dp_plan *proj = dp_bind_new_node(b, DP_P_PROJECT, p->span, 1, node);
    if (!proj) return NULL;
    copy_schema(b, proj, p, 0);
    proj->u.project.n = p->u.project.n;
    proj->u.project.exprs = dp_arena_calloc(b->a, (size_t)p->u.project.n, sizeof(dp_expr *));
    if (!proj->u.project.exprs) return NULL;
    for (int q = 0; q < p->u.project.n; q++) {
      dp_expr *e = p->u.project.exprs[q];
      if (dedup && dp_bexpr_uses_range(e, rank_col, rank_col + 1)) {
        if (as_column(e) != rank_col)
          return NULL; /* an expression over the rank: keep the general form */
        dp_expr *one = dp_arena_calloc(b->a, 1, sizeof *one);
        if (!one) return NULL;
        one->kind = DP_E_LITERAL;
        one->type = e->type;
        one->span = e->span;
        one->u.value = dp_value_int(e->type, 1);
        e = one;
      }
      proj->u.project.exprs[q] = e;
    }
    taken[i] = true;
    return proj;
  }
  return NULL;
}

/* Apply conjuncts to p: semi joins, rank patterns, then one FILTER with the rest. */
static dp_plan *apply_where(dp_binder *b, dp_plan *p, dp_expr *cond, dp_span span, bool rank_patterns) {
  int n = 0, cap = 0;
  dp_expr **conj = NULL;
  dp_bind_conjuncts(b, cond, &n, &cap, &conj);
  bool *taken = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *taken);
  if (!taken) return NULL;
  push_into_cross(b, p, 0, n, conj, taken);
  if (rank_patterns) {
    dp_plan *r = try_rank_pattern(b, p, n, conj, taken);
    if (r) p = r;
  }
  for (int i = 0; i < n; i++) {
    if (taken[i]) continue;
    dp_plan *j = try_semi_join(b, p, conj[i]);
    if (j) {
      p = j;
      taken[i] = true;
    }
  }
  dp_expr **rest = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *rest);
  int nrest = 0;
  if (!rest) return NULL;
  for (int i = 0; i < n; i++)
    if (!taken[i]) rest[nrest++] = conj[i];
  if (nrest == 0) return p;
  dp_plan *f = dp_bind_new_node(b, DP_P_FILTER, span, 1, p);
  if (!f) return NULL;
  copy_schema(b, f, p, 0);
  f->u.filter.cond = nrest == n ? cond : dp_bind_and(b, nrest, rest);
  return f->u.filter.cond ? f : NULL;
}

/* ------------------------------------------------------------------ */
/* group windows (legacy GROUP BY TUMBLE(..), Spark's window(..))      */
/* ------------------------------------------------------------------ */

static int find_group_window(const dp_ast_select *s) {
  static const char *const names[] = {"tumble", "hop", "session", "window", "session_window"};
  for (int i = 0; i < s->ngroup; i++) {
    const dp_ast_expr *g = s->group[i];
    if (g->kind != DP_AX_CALL || g->u.call.over) continue;
    const char *nm = g->u.call.name.parts[g->u.call.name.n - 1].name;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
      if (dp_bind_name_eq(nm, names[k])) return i;
  }
  return -1;
}

static dp_plan *bind_group_window(dp_binder *b, dp_plan *in, dp_bscope *sc, const dp_ast_expr *g,
                                  bool *spark) {
  const char *nm = g->u.call.name.parts[g->u.call.name.n - 1].name;
  dp_window_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.span = g->span;
  int nargs = g->u.call.nargs;
  *spark = dp_bind_name_eq(nm, "window") || dp_bind_name_eq(nm, "session_window");
  spec.syntax = *spark ? DP_WSYN_SPARK : DP_WSYN_LEGACY;
  int minargs = 2, maxargs = 2;
  if (dp_bind_name_eq(nm, "hop")) minargs = maxargs = 3;
  if (dp_bind_name_eq(nm, "window")) maxargs = 4;
  if (nargs < minargs || nargs > maxargs)
    return dp_bind_fail(b, DIPPER_TYPE, g->span, "%s takes %s",
                        nm, dp_bind_name_eq(nm, "hop") ? "(time column, slide, size)"
                            : dp_bind_name_eq(nm, "window") ? "(time column, duration [, slide [, start]])"
                            : dp_bind_name_eq(nm, "session_window") ? "(time column, gap)"
                                                                    : "(time column, size)");
  dp_bexpr x;
  dp_bexpr_init(&x, b, sc, 0, "a group window");
  dp_expr *tc = dp_bind_expr(&x, g->u.call.args[0]);
  if (!tc) return NULL;
  if ((spec.time_col = as_column(tc)) < 0 || !dp_type_is_timestamp(tc->type))
    return dp_bind_fail(b, DIPPER_TYPE, g->u.call.args[0]->span,
                        "the first argument of %s must be a TIMESTAMP or TIMESTAMP_LTZ column%s%s",
                        nm, tc->type ? ", not " : "", dp_bind_type_str(b, tc->type));
  const char *what = dp_arena_printf(b->a, "the size of %s", nm);
  if (dp_bind_name_eq(nm, "tumble")) {
    spec.kind = DP_WIN_TUMBLE;
    if (!dp_bind_interval_arg(b, g->u.call.args[1], what, &spec.size)) return NULL;
    spec.slide = spec.size;
  } else if (dp_bind_name_eq(nm, "hop")) {
    spec.kind = DP_WIN_HOP;
    if (!dp_bind_interval_arg(b, g->u.call.args[1], "the slide of HOP", &spec.slide) ||
        !dp_bind_interval_arg(b, g->u.call.args[2], "the size of HOP", &spec.size))
      return NULL;
  } else if (dp_bind_name_eq(nm, "window")) {
    if (!dp_bind_interval_arg(b, g->u.call.args[1], "the window duration", &spec.size)) return NULL;
    spec.slide = spec.size;
    if (nargs >= 3 && !dp_bind_interval_arg(b, g->u.call.args[2], "the window slide", &spec.slide))
      return NULL;
    if (nargs >= 4) {
      int rc = dp_bind_interval(b->d, g->u.call.args[3], &spec.offset);
      if (rc) {
        if (!b->first_error) b->first_error = rc;
        return NULL;
      }
    }
    spec.kind = spec.slide == spec.size ? DP_WIN_TUMBLE : DP_WIN_HOP;
  } else {
    spec.kind = DP_WIN_SESSION;
    const dp_ast_expr *gap = g->u.call.args[1];
    if (gap->kind == DP_AX_INTERVAL || (gap->kind == DP_AX_LITERAL && gap->u.lit.kind == DP_LIT_STRING)) {
      if (!dp_bind_interval_arg(b, gap, "the session gap", &spec.gap)) return NULL;
    } else if (*spark) {
      /* Spark's dynamic gap: an expression per row */
      dp_expr *ge = dp_bind_expr(&x, gap);
      if (!ge) return NULL;
      if (!dp_type_is_interval(ge->type) && !dp_type_is_string(ge->type))
        return dp_bind_fail(b, DIPPER_TYPE, gap->span,
                            "a session gap expression must give an interval or a duration string, not %s",
                            dp_bind_type_str(b, ge->type));
      spec.gap_expr = ge;
    } else {
      return dp_bind_fail(b, DIPPER_TYPE, gap->span, "the gap of SESSION must be a constant interval");
    }
  }
  if (spec.kind == DP_WIN_HOP && spec.size % spec.slide != 0) {
    char sz[48], sl[48];
    dp_format_duration(sz, sizeof sz, spec.size);
    dp_format_duration(sl, sizeof sl, spec.slide);
    return dp_bind_fail(b, DIPPER_TYPE, g->span, "window size (%s) must be a whole multiple of the slide (%s)",
                        sz, sl);
  }
  return window_node(b, in, &spec);
}

/* ------------------------------------------------------------------ */
/* aggregation rewrite                                                 */
/* ------------------------------------------------------------------ */

typedef struct agg_ctx {
  dp_binder *b;
  const dp_bscope *sc;    /* the pre-aggregation scope, for names in errors */
  int ngroup;
  dp_expr **group;
  bool failed;
} agg_ctx;

static const char *scope_name_of(const dp_bscope *sc, int index) {
  for (int i = 0; i < sc->n; i++)
    if (sc->cols[i].index == index && !sc->cols[i].expr) return sc->cols[i].name;
  return "?";
}

/* Rewrite an expression over the aggregate's input into one over its output. */
static dp_expr *agg_rewrite(agg_ctx *c, const dp_expr *e) {
  if (!e) return NULL;
  for (int i = 0; i < c->ngroup; i++)
    if (dp_bexpr_same(e, c->group[i])) return col_ref(c->b, i, c->group[i]->type, e->span);
  if (e->kind == DP_E_COLUMN) {
    if (e->u.column.outer == DP_MARK_AGG) return col_ref(c->b, c->ngroup + e->u.column.index, e->type, e->span);
    if (e->u.column.outer != 0) return dp_bexpr_copy(c->b->a, e);
    if (!c->failed) {
      const char *nm = scope_name_of(c->sc, e->u.column.index);
      dp_bind_err(c->b, DIPPER_TYPE, e->span,
                  "column `%s` is neither grouped nor aggregated; add it to GROUP BY or wrap it in an "
                  "aggregate such as MAX(%s)",
                  nm, nm);
    }
    c->failed = true;
    return NULL;
  }
  dp_expr *r = dp_arena_alloc(c->b->a, sizeof *r);
  if (!r) return NULL;
  *r = *e;
  switch (e->kind) {
  case DP_E_CALL:
    r->u.call.args = dp_arena_calloc(c->b->a, (size_t)(e->u.call.nargs ? e->u.call.nargs : 1), sizeof(dp_expr *));
    if (!r->u.call.args) return NULL;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!(r->u.call.args[i] = agg_rewrite(c, e->u.call.args[i]))) return NULL;
    break;
  case DP_E_CAST:
    if (!(r->u.cast.arg = agg_rewrite(c, e->u.cast.arg))) return NULL;
    break;
  case DP_E_FIELD:
    if (!(r->u.field.arg = agg_rewrite(c, e->u.field.arg))) return NULL;
    break;
  case DP_E_CASE:
    r->u.case_.whens = dp_arena_calloc(c->b->a, (size_t)e->u.case_.n, sizeof(dp_expr *));
    r->u.case_.thens = dp_arena_calloc(c->b->a, (size_t)e->u.case_.n, sizeof(dp_expr *));
    if (!r->u.case_.whens || !r->u.case_.thens) return NULL;
    for (int i = 0; i < e->u.case_.n; i++)
      if (!(r->u.case_.whens[i] = agg_rewrite(c, e->u.case_.whens[i])) ||
          !(r->u.case_.thens[i] = agg_rewrite(c, e->u.case_.thens[i])))
        return NULL;
    if (e->u.case_.else_ && !(r->u.case_.else_ = agg_rewrite(c, e->u.case_.else_))) return NULL;
    break;
  case DP_E_SUBQUERY:
    if (e->u.subquery.arg && !(r->u.subquery.arg = agg_rewrite(c, e->u.subquery.arg))) return NULL;
    break;
  default:
    break;
  }
  return r;
}

/* Replace OVER markers by the OVER nodes' output columns. */
static dp_expr *over_rewrite(dp_binder *b, const dp_expr *e, const dp_bover *overs) {
  if (!e) return NULL;
  if (e->kind == DP_E_COLUMN && e->u.column.outer == DP_MARK_OVER)
    return col_ref(b, overs[e->u.column.index].out_col, e->type, e->span);
  dp_expr *r = dp_arena_alloc(b->a, sizeof *r);
  if (!r) return NULL;
  *r = *e;
  switch (e->kind) {
  case DP_E_CALL:
    r->u.call.args = dp_arena_calloc(b->a, (size_t)(e->u.call.nargs ? e->u.call.nargs : 1), sizeof(dp_expr *));
    if (!r->u.call.args) return NULL;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!(r->u.call.args[i] = over_rewrite(b, e->u.call.args[i], overs))) return NULL;
    break;
  case DP_E_CAST:
    if (!(r->u.cast.arg = over_rewrite(b, e->u.cast.arg, overs))) return NULL;
    break;
  case DP_E_FIELD:
    if (!(r->u.field.arg = over_rewrite(b, e->u.field.arg, overs))) return NULL;
    break;
  case DP_E_CASE:
    r->u.case_.whens = dp_arena_calloc(b->a, (size_t)e->u.case_.n, sizeof(dp_expr *));
    r->u.case_.thens = dp_arena_calloc(b->a, (size_t)e->u.case_.n, sizeof(dp_expr *));
    if (!r->u.case_.whens || !r->u.case_.thens) return NULL;
    for (int i = 0; i < e->u.case_.n; i++)
      if (!(r->u.case_.whens[i] = over_rewrite(b, e->u.case_.whens[i], overs)) ||
          !(r->u.case_.thens[i] = over_rewrite(b, e->u.case_.thens[i], overs)))
        return NULL;
    if (e->u.case_.else_ && !(r->u.case_.else_ = over_rewrite(b, e->u.case_.else_, overs))) return NULL;
    break;
  default:
    break;
  }
  return r;
}

static bool has_marker(const dp_expr *e, int mark) {
  if (!e) return false;
  switch (e->kind) {
  case DP_E_COLUMN: return e->u.column.outer == mark;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (has_marker(e->u.call.args[i], mark)) return true;
    return false;
  case DP_E_CAST: return has_marker(e->u.cast.arg, mark);
  case DP_E_FIELD: return has_marker(e->u.field.arg, mark);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (has_marker(e->u.case_.whens[i], mark) || has_marker(e->u.case_.thens[i], mark)) return true;
    return has_marker(e->u.case_.else_, mark);
  default: return false;
  }
}

/* Follow column `col` of p down through filters, projections and watermarks to a
** WINDOW node: *which = 0 start, 1 end, 2 time. */
static const dp_plan *trace_window(const dp_plan *p, int col, int *which) {
  for (;;) {
    switch (p->kind) {
    case DP_P_WINDOW: {
      int n = p->inputs[0]->schema.ncols;
      if (col >= n) {
        *which = col - n;
        return p;
      }
      p = p->inputs[0];
      break;
    }
    case DP_P_FILTER:
    case DP_P_WATERMARK:
      p = p->inputs[0];
      break;
    case DP_P_PROJECT:
      if (col >= p->u.project.n || (col = as_column(p->u.project.exprs[col])) < 0) return NULL;
      p = p->inputs[0];
      break;
    default:
      return NULL;
    }
  }
}

static bool same_over_spec(const dp_bover *x, const dp_bover *y) {
  if (x->npartition != y->npartition || x->norder != y->norder || x->has_frame != y->has_frame ||
      x->rows != y->rows || x->lower != y->lower || x->upper != y->upper)
    return false;
  for (int i = 0; i < x->npartition; i++)
    if (!dp_bexpr_same(x->partition[i], y->partition[i])) return false;
  for (int i = 0; i < x->norder; i++)
    if (x->order[i].desc != y->order[i].desc || !dp_bexpr_same(x->order[i].expr, y->order[i].expr))
      return false;
  return true;
}

/* ------------------------------------------------------------------ */
/* SELECT                                                              */
/* ------------------------------------------------------------------ */

typedef struct out_item {
  dp_expr *expr;
  const char *name;
} out_item;

static bool add_out(dp_binder *b, out_item **items, int *n, int *cap, dp_expr *e, const char *name) {
  if (*n == *cap) {
    int nc = *cap ? *cap * 2 : 16;
    out_item *g = dp_arena_grow(b->a, *items, (size_t)*cap, (size_t)nc, sizeof *g);
    if (!g) return false;
    *items = g;
    *cap = nc;
  }
  (*items)[*n].expr = e;
  (*items)[*n].name = name;
  (*n)++;
  return true;
}

static dp_plan *make_project(dp_binder *b, dp_plan *in, int n, const out_item *items, dp_span span) {
  /* SELECT * over a subquery: a projection that changes nothing over another
     projection is left out (over other nodes it stays, to show the query's columns) */
  bool identity = n == in->schema.ncols;
  for (int i = 0; identity && i < n; i++)
    identity = as_column(items[i].expr) == i && items[i].expr->type == in->schema.cols[i].type &&
               items[i].name && in->schema.cols[i].name && strcmp(items[i].name, in->schema.cols[i].name) == 0;
  if (identity && in->kind == DP_P_PROJECT) return in;
  dp_plan *p = dp_bind_new_node(b, DP_P_PROJECT, span, 1, in);
  if (!p) return NULL;
  dp_bind_schema(b, p, n);
  p->u.project.n = n;
  p->u.project.exprs = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof(dp_expr *));
  if (!p->u.project.exprs || !p->schema.cols) return NULL;
  for (int i = 0; i < n; i++) {
    p->u.project.exprs[i] = items[i].expr;
    p->schema.cols[i] = (dp_field){items[i].name, items[i].expr->type};
  }
  return p;
}

static bool is_plain_int(const dp_ast_expr *e, int64_t *v) {
  if (e->kind != DP_AX_LITERAL || e->u.lit.kind != DP_LIT_INTEGER) return false;
  *v = strtoll(e->u.lit.text, NULL, 10);
  return true;
}

/* ORDER BY item that names an output column (alias or position): its index, else -1. */
static int order_output_ref(dp_binder *b, const dp_ast_order *o, const out_item *items, int nitems,
                            int nvisible) {
  int64_t pos;
  if (is_plain_int(o->expr, &pos)) {
    if (pos < 1 || pos > nvisible) {
      dp_bind_err(b, DIPPER_TYPE, o->expr->span, "ORDER BY position %lld is not in the select list (1..%d)",
                  (long long)pos, nvisible);
      return -2;
    }
    return (int)pos - 1;
  }
  if (o->expr->kind == DP_AX_COLUMN && o->expr->u.name.n == 1) {
    int found = -1;
    for (int i = 0; i < nitems; i++)
      if (items[i].name && dp_bind_name_eq(items[i].name, o->expr->u.name.parts[0].name)) {
        if (found >= 0) return -1; /* let the expression binder report ambiguity */
        found = i;
      }
    return found;
  }
  return -1;
}

static bool bind_limit(dp_binder *b, const dp_ast_expr *e, const char *what, int64_t *out) {
  int64_t v;
  if (!e) {
    *out = -1;
    return true;
  }
  if (!is_plain_int(e, &v) || v < 0) {
    dp_bind_err(b, DIPPER_TYPE, e->span, "%s takes a non-negative integer constant", what);
    return false;
  }
  *out = v;
  return true;
}

static dp_plan *apply_limit(dp_binder *b, dp_plan *p, const dp_ast_query *q) {
  if (!q->limit && !q->offset) return p;
  int64_t lim, off;
  if (!bind_limit(b, q->limit, "LIMIT", &lim) || !bind_limit(b, q->offset, "OFFSET", &off)) return NULL;
  dp_plan *l = dp_bind_new_node(b, DP_P_LIMIT, q->limit_span.line ? q->limit_span : q->span, 1, p);
  if (!l) return NULL;
  copy_schema(b, l, p, 0);
  l->u.limit.limit = lim;
  l->u.limit.offset = off;
  return l;
}

static const char *item_name(dp_binder *b, const dp_ast_select_item *it, int pos) {
  if (it->alias.name) return it->alias.name;
  const dp_ast_expr *e = it->expr;
  if (e->kind == DP_AX_COLUMN && e->u.name.n > 0) return e->u.name.parts[e->u.name.n - 1].name;
  if (e->kind == DP_AX_FIELD) return e->u.field.field.name;
  return expr_name(b, pos);
}

static dp_plan *bind_select(dp_binder *b, const dp_ast_select *s, const dp_ast_query *q,
                            dp_bscope *outer) {
  dp_bscope sc;
  memset(&sc, 0, sizeof sc);
  sc.outer = outer;
  dp_plan *p;
  if (s->from) {
    p = bind_from(b, s->from, &sc, outer);
  } else {
    p = dp_bind_new_node(b, DP_P_VALUES, s->span, 0);
    if (p) {
      dp_bind_schema(b, p, 0);
      p->u.values.nrows = 1;
    }
  }
  if (!p) return NULL;
  bool ok = true;

  /* WHERE */
  if (s->where) {
    dp_bexpr x;
    dp_bexpr_init(&x, b, &sc, 0, "WHERE");
    dp_expr *cond = dp_bind_cond(&x, s->where);
    if (!cond) return NULL;
    /* the ROW_NUMBER() patterns apply over subqueries, views and CTEs alike: the
       plan's shape decides */
    p = apply_where(b, p, cond, s->where->span, true);
    if (!p) return NULL;
  }

  /* Group windows of the legacy and Spark syntaxes become a WINDOW node first. */
  dp_bexpr x;
  dp_bexpr_init(&x, b, &sc, DP_BX_AGG | DP_BX_OVER, "the SELECT list");
  x.nwindows = s->nwindows;
  x.windows = s->windows;
  int gw = find_group_window(s);
  bool spark_window = false;
  int win_base = -1;
  if (gw >= 0) {
    dp_plan *w = bind_group_window(b, p, &sc, s->group[gw], &spark_window);
    if (!w) return NULL;
    p = w;
    win_base = w->inputs[0]->schema.ncols;
    for (int k = 0; k < 3; k++) {
      dp_bscope_add(b, &sc, NULL, w->schema.cols[win_base + k].name, w->schema.cols[win_base + k].type,
                    win_base + k, NULL);
      sc.cols[sc.n - 1].hidden = true;
    }
    x.win_start = win_base;
    x.win_end = win_base + 1;
    x.win_time = win_base + 2;
    if (!spark_window) x.legacy = &w->u.window;
    if (spark_window) {
      /* Spark's `window` column: a struct of start and end. */
      const dp_type *ts = w->schema.cols[win_base].type;
      dp_field fields[2] = {{"start", ts}, {"end", ts}};
      const dp_type *rt = dp_type_row(b->a, 2, fields);
      const dp_func *rowfn = dp_func_lookup("row");
      dp_expr **args = dp_arena_calloc(b->a, 2, sizeof *args);
      dp_expr *e = dp_arena_calloc(b->a, 1, sizeof *e);
      if (!rt || !rowfn || !args || !e)
        return dp_bind_fail(b, DIPPER_INTERNAL, s->group[gw]->span, "cannot build the window struct");
      args[0] = col_ref(b, win_base, ts, s->group[gw]->span);
      args[1] = col_ref(b, win_base + 1, ts, s->group[gw]->span);
      e->kind = DP_E_CALL;
      e->type = not_null(b, rt);
      e->span = s->group[gw]->span;
      e->u.call.fn = rowfn;
      e->u.call.nargs = 2;
      e->u.call.args = args;
      /* Spark names the column after the function: window, session_window. */
      const dp_ast_expr *g = s->group[gw];
      dp_bscope_add(b, &sc, NULL, g->u.call.name.parts[g->u.call.name.n - 1].name, e->type, -1, e);
    }
  }

  /* The select list, bound over the FROM row; aggregates and OVER calls are collected. */
  out_item *items = NULL;
  int nitems = 0, capitems = 0;
  for (int i = 0; i < s->nitems; i++) {
    const dp_ast_select_item *it = &s->items[i];
    if (it->expr->kind == DP_AX_STAR) {
      const dp_ast_name *qual = &it->expr->u.star.qualifier;
      int before = nitems;
      for (int k = 0; k < sc.n; k++) {
        dp_bcol *c = &sc.cols[k];
        if (c->hidden) continue;
        if (qual->n > 0 && (!c->rel || !dp_bind_name_eq(c->rel, qual->parts[qual->n - 1].name))) continue;
        dp_expr *e = c->expr ? dp_bexpr_copy(b->a, c->expr) : col_ref(b, c->index, c->type, it->span);
        if (!e || !add_out(b, &items, &nitems, &capitems, e, c->name)) return NULL;
      }
      if (nitems == before) {
        if (qual->n > 0)
          dp_bind_err(b, DIPPER_NAME, it->span, "no input is named `%s`; the inputs are listed in FROM",
                      qual->parts[qual->n - 1].name);
        else
          dp_bind_err(b, DIPPER_NAME, it->span, "SELECT * needs a FROM clause with columns");
        ok = false;
      }
      continue;
    }
    dp_expr *e = dp_bind_expr(&x, it->expr);
    if (!e) {
      ok = false; /* keep binding the other items to report their errors too */
      continue;
    }
    e->span = it->expr->span;
    if (!add_out(b, &items, &nitems, &capitems, e, item_name(b, it, i))) return NULL;
  }
  int nvisible = nitems;

  /* HAVING and ORDER BY may aggregate too. */
  dp_expr *having = NULL;
  if (s->having) {
    dp_bexpr hx = x;
    hx.allow = DP_BX_AGG;
    hx.clause = "HAVING";
    having = dp_bind_cond(&hx, s->having);
    x.aggs = hx.aggs;
    x.naggs = hx.naggs;
    x.capaggs = hx.capaggs;
    if (!having) ok = false;
  }
  int norder = q ? q->norder : 0;
  int *order_out = dp_arena_calloc(b->a, (size_t)(norder ? norder : 1), sizeof(int));
  dp_expr **order_expr = dp_arena_calloc(b->a, (size_t)(norder ? norder : 1), sizeof(dp_expr *));
  if (!order_out || !order_expr) return NULL;
  for (int i = 0; i < norder; i++) {
    int ref = ok ? order_output_ref(b, &q->order[i], items, nvisible, nvisible) : -1;
    if (ref == -2) {
      ok = false;
      continue;
    }
    order_out[i] = ref;
    if (ref >= 0) continue;
    x.clause = "ORDER BY";
    if (!(order_expr[i] = dp_bind_expr(&x, q->order[i].expr))) ok = false;
  }
  /* QUALIFY sees the FROM row, the select list's aliases and OVER calls of its own. */
  dp_expr *qualify = NULL;
  if (ok && s->qualify) {
    dp_bscope qs;
    memset(&qs, 0, sizeof qs);
    qs.outer = outer;
    for (int i = 0; i < sc.n; i++) {
      dp_bscope_add(b, &qs, sc.cols[i].rel, sc.cols[i].name, sc.cols[i].type, sc.cols[i].index, sc.cols[i].expr);
      qs.cols[qs.n - 1].hidden = sc.cols[i].hidden;
    }
    for (int i = 0; i < nvisible; i++) {
      bool taken = false;
      for (int k = 0; k < sc.n; k++)
        if (!sc.cols[k].hidden && dp_bind_name_eq(sc.cols[k].name, items[i].name)) taken = true;
      if (!taken) dp_bscope_add(b, &qs, NULL, items[i].name, items[i].expr->type, -1, items[i].expr);
    }
    dp_bexpr qx = x;
    qx.sc = &qs;
    qx.clause = "QUALIFY";
    qualify = dp_bind_cond(&qx, s->qualify);
    x.aggs = qx.aggs;
    x.naggs = qx.naggs;
    x.capaggs = qx.capaggs;
    x.overs = qx.overs;
    x.novers = qx.novers;
    x.capovers = qx.capovers;
    if (!qualify) ok = false;
  }
  if (!ok) return NULL;

  /* GROUP BY and aggregates. */
  bool aggregating = s->ngroup > 0 || x.naggs > 0 || having;
  if (aggregating) {
    int ng = 0;
    dp_expr **group = dp_arena_calloc(b->a, (size_t)s->ngroup + 4, sizeof *group);
    const char **gnames = dp_arena_calloc(b->a, (size_t)s->ngroup + 4, sizeof *gnames);
    if (!group || !gnames) return NULL;
    dp_bexpr gx;
    dp_bexpr_init(&gx, b, &sc, 0, "GROUP BY");
    for (int i = 0; i < s->ngroup; i++) {
      if (i == gw) {
        const dp_plan *w = p;
        group[ng] = col_ref(b, win_base, w->schema.cols[win_base].type, s->group[i]->span);
        gnames[ng++] = "window_start";
        group[ng] = col_ref(b, win_base + 1, w->schema.cols[win_base + 1].type, s->group[i]->span);
        gnames[ng++] = "window_end";
        if (x.used_rowtime) {
          group[ng] = col_ref(b, win_base + 2, w->schema.cols[win_base + 2].type, s->group[i]->span);
          gnames[ng++] = "window_time";
        }
        continue;
      }
      int64_t pos;
      dp_expr *g;
      int alias = -1;
      const dp_ast_expr *ge = s->group[i];
      if (ge->kind == DP_AX_COLUMN && ge->u.name.n == 1) {
        /* Spark's GROUP BY alias, when no input column has that name */
        bool is_col = false;
        for (int k = 0; k < sc.n; k++)
          if (!sc.cols[k].hidden && dp_bind_name_eq(sc.cols[k].name, ge->u.name.parts[0].name)) is_col = true;
        for (int k = 0; !is_col && k < nvisible; k++)
          if (dp_bind_name_eq(items[k].name, ge->u.name.parts[0].name) &&
              !has_marker(items[k].expr, DP_MARK_AGG) && !has_marker(items[k].expr, DP_MARK_OVER))
            alias = k;
      }
      if (is_plain_int(ge, &pos) && pos >= 1 && pos <= nvisible && !has_marker(items[pos - 1].expr, DP_MARK_AGG))
        g = dp_bexpr_copy(b->a, items[pos - 1].expr);
      else if (alias >= 0)
        g = dp_bexpr_copy(b->a, items[alias].expr);
      else
        g = dp_bind_expr(&gx, ge);
      if (!g) {
        ok = false;
        continue;
      }
      bool dup = false;
      for (int k = 0; k < ng; k++)
        if (dp_bexpr_same(group[k], g)) dup = true;
      if (dup) continue;
      int gc = as_column(g);
      gnames[ng] = gc >= 0 ? p->schema.cols[gc].name : expr_name(b, ng);
      group[ng++] = g;
    }
    if (!ok) return NULL;
    dp_span aspan = s->group_span.line ? s->group_span : x.naggs > 0 ? x.aggs[0].span : s->span;
    dp_plan *agg = dp_bind_new_node(b, DP_P_AGGREGATE, aspan, 1, p);
    if (!agg) return NULL;
    dp_bind_schema(b, agg, ng + x.naggs);
    if (!agg->schema.cols) return NULL;
    for (int i = 0; i < ng; i++) agg->schema.cols[i] = (dp_field){gnames[i], group[i]->type};
    for (int i = 0; i < x.naggs; i++)
      agg->schema.cols[ng + i] = (dp_field){expr_name(b, ng + i), x.aggs[i].type};
    agg->u.aggregate.ngroup = ng;
    agg->u.aggregate.group = group;
    agg->u.aggregate.naggs = x.naggs;
    agg->u.aggregate.aggs = x.aggs;
    agg->u.aggregate.wstart = agg->u.aggregate.wend = -1;
    /* A window aggregation groups by the window's start and end. */
    for (int i = 0; i < ng; i++) {
      int which, gc = as_column(group[i]);
      const dp_plan *w = gc >= 0 ? trace_window(p, gc, &which) : NULL;
      if (!w) continue;
      if (agg->u.aggregate.window && agg->u.aggregate.window != w) continue;
      if (which == 0) agg->u.aggregate.wstart = i;
      else if (which == 1) agg->u.aggregate.wend = i;
      else continue;
      agg->u.aggregate.window = w;
    }
    if (agg->u.aggregate.wstart < 0 || agg->u.aggregate.wend < 0) {
      if (agg->u.aggregate.window && agg->u.aggregate.window->u.window.syntax == DP_WSYN_TVF)
        return dp_bind_fail(b, DIPPER_TYPE, aspan,
                            "a window aggregation must GROUP BY both window_start and window_end");
      agg->u.aggregate.window = NULL;
      agg->u.aggregate.wstart = agg->u.aggregate.wend = -1;
    }
    agg_ctx ac = {b, &sc, ng, group, false};
    for (int i = 0; i < nitems; i++)
      if (!(items[i].expr = agg_rewrite(&ac, items[i].expr))) ok = false;
    if (having && !(having = agg_rewrite(&ac, having))) ok = false;
    if (qualify && !(qualify = agg_rewrite(&ac, qualify))) ok = false;
    for (int i = 0; i < norder; i++)
      if (order_expr[i] && !(order_expr[i] = agg_rewrite(&ac, order_expr[i]))) ok = false;
    for (int i = 0; i < x.novers; i++) {
      dp_bover *o = &x.overs[i];
      for (int k = 0; k < o->call.nargs; k++)
        if (!(o->call.args[k] = agg_rewrite(&ac, o->call.args[k]))) ok = false;
      for (int k = 0; k < o->npartition; k++)
        if (!(o->partition[k] = agg_rewrite(&ac, o->partition[k]))) ok = false;
      for (int k = 0; k < o->norder; k++)
        if (!(o->order[k].expr = agg_rewrite(&ac, o->order[k].expr))) ok = false;
      if (o->call.filter && !(o->call.filter = agg_rewrite(&ac, o->call.filter))) ok = false;
    }
    if (!ok) return NULL;
    p = agg;
    if (having) {
      dp_plan *f = dp_bind_new_node(b, DP_P_FILTER, s->having->span, 1, p);
      if (!f) return NULL;
      copy_schema(b, f, p, 0);
      f->u.filter.cond = having;
      p = f;
    }
  }

  /* OVER calls: one node per distinct window, each appending its calls. */
  if (x.novers > 0) {
    dp_plan *cur = NULL;
    int first = 0;
    for (int i = 0; i <= x.novers; i++) {
      bool flush = i == x.novers || (cur && !same_over_spec(&x.overs[first], &x.overs[i]));
      if (flush && cur) {
        int ncalls = i - first, nin = p->schema.ncols;
        copy_schema(b, cur, p, ncalls);
        cur->u.over.ncalls = ncalls;
        cur->u.over.calls = dp_arena_calloc(b->a, (size_t)ncalls, sizeof(dp_over_call));
        if (!cur->u.over.calls || !cur->schema.cols) return NULL;
        for (int k = 0; k < ncalls; k++) {
          dp_bover *o = &x.overs[first + k];
          cur->u.over.calls[k] = o->call;
          o->out_col = nin + k;
          cur->schema.cols[nin + k] = (dp_field){expr_name(b, nin + k), o->call.type};
        }
        p = cur;
        cur = NULL;
      }
      if (i == x.novers) break;
      if (!cur) {
        dp_bover *o = &x.overs[i];
        for (int k = 0; k < o->npartition; k++)
          if (has_marker(o->partition[k], DP_MARK_OVER)) return dp_bind_fail(b, DIPPER_TYPE, o->span, "OVER calls cannot nest");
        cur = dp_bind_new_node(b, DP_P_OVER, o->span, 1, p);
        if (!cur) return NULL;
        cur->u.over.npartition = o->npartition;
        cur->u.over.partition = o->partition;
        cur->u.over.norder = o->norder;
        cur->u.over.order = o->order;
        cur->u.over.has_frame = o->has_frame;
        cur->u.over.rows = o->rows;
        cur->u.over.lower = o->lower;
        cur->u.over.upper = o->upper;
        first = i;
      }
    }
    for (int i = 0; i < nitems; i++)
      if (!(items[i].expr = over_rewrite(b, items[i].expr, x.overs))) return NULL;
    for (int i = 0; i < norder; i++)
      if (order_expr[i] && !(order_expr[i] = over_rewrite(b, order_expr[i], x.overs))) return NULL;
    if (qualify && !(qualify = over_rewrite(b, qualify, x.overs))) return NULL;
  }

  /* ORDER BY expressions not in the select list become hidden columns. */
  for (int i = 0; i < norder; i++) {
    if (order_out[i] >= 0) continue;
    int found = -1;
    for (int k = 0; k < nitems; k++)
      if (dp_bexpr_same(items[k].expr, order_expr[i])) found = k;
    if (found < 0) {
      if (s->distinct)
        return dp_bind_fail(b, DIPPER_TYPE, q->order[i].span,
                            "with SELECT DISTINCT, ORDER BY expressions must appear in the select list");
      found = nitems;
      /* a hidden sort column keeps its column's name, for EXPLAIN */
      const dp_ast_expr *oe = q->order[i].expr;
      const char *hn = oe->kind == DP_AX_COLUMN ? oe->u.name.parts[oe->u.name.n - 1].name
                                                : expr_name(b, nitems);
      if (!add_out(b, &items, &nitems, &capitems, order_expr[i], hn)) return NULL;
    }
    order_out[i] = found;
  }

  /* QUALIFY filters the projection: the columns it reads become (hidden) outputs. */
  if (qualify) {
    int width = p->schema.ncols;
    int *map = dp_arena_calloc(b->a, (size_t)(width ? width : 1), sizeof *map);
    if (!map) return NULL;
    for (int c = 0; c < width; c++) {
      map[c] = -1;
      if (!dp_bexpr_uses_range(qualify, c, c + 1)) continue;
      for (int k = 0; k < nitems && map[c] < 0; k++)
        if (as_column(items[k].expr) == c) map[c] = k;
      if (map[c] < 0) {
        map[c] = nitems;
        if (!add_out(b, &items, &nitems, &capitems, col_ref(b, c, p->schema.cols[c].type, s->qualify->span),
                     p->schema.cols[c].name))
          return NULL;
      }
    }
    if (!(qualify = remap(b, qualify, map, width))) return NULL;
  }

  p = make_project(b, p, nitems, items, s->span);
  if (!p) return NULL;

  if (qualify && !(p = apply_where(b, p, qualify, s->qualify->span, true))) return NULL;

  if (s->distinct) {
    dp_plan *d = dp_bind_new_node(b, DP_P_DISTINCT, s->span, 1, p);
    if (!d) return NULL;
    copy_schema(b, d, p, 0);
    p = d;
  }
  if (norder > 0) {
    dp_plan *so = dp_bind_new_node(b, DP_P_SORT, q->order_span.line ? q->order_span : q->span, 1, p);
    if (!so) return NULL;
    copy_schema(b, so, p, 0);
    so->u.sort.nkeys = norder;
    so->u.sort.keys = dp_arena_calloc(b->a, (size_t)norder, sizeof(dp_sort_key));
    if (!so->u.sort.keys) return NULL;
    for (int i = 0; i < norder; i++) {
      dp_sort_key *k = &so->u.sort.keys[i];
      k->expr = col_ref(b, order_out[i], p->schema.cols[order_out[i]].type, q->order[i].span);
      k->desc = q->order[i].desc;
      k->nulls_first = q->order[i].nulls ? q->order[i].nulls == 1 : !q->order[i].desc;
    }
    p = so;
  }
  if (q && !(p = apply_limit(b, p, q))) return NULL;
  if (nitems > nvisible) {
    /* drop the hidden sort columns */
    out_item *vis = dp_arena_calloc(b->a, (size_t)nvisible, sizeof *vis);
    if (!vis) return NULL;
    for (int i = 0; i < nvisible; i++) {
      vis[i].name = items[i].name;
      vis[i].expr = col_ref(b, i, items[i].expr->type, items[i].expr->span);
    }
    p = make_project(b, p, nvisible, vis, s->span);
  }
  return p;
}

/* ------------------------------------------------------------------ */
/* queries and set operations                                          */
/* ------------------------------------------------------------------ */

/* ORDER BY / LIMIT over a query's output (set operations, VALUES). */
static dp_plan *order_over_output(dp_binder *b, dp_plan *p, const dp_ast_query *q) {
  if (q->norder > 0) {
    dp_bscope os;
    memset(&os, 0, sizeof os);
    dp_bscope_from_plan(b, &os, p, NULL);
    out_item *items = dp_arena_calloc(b->a, (size_t)(p->schema.ncols ? p->schema.ncols : 1), sizeof *items);
    if (!items) return NULL;
    for (int i = 0; i < p->schema.ncols; i++) items[i].name = p->schema.cols[i].name;
    dp_plan *so = dp_bind_new_node(b, DP_P_SORT, q->order_span.line ? q->order_span : q->span, 1, p);
    if (!so) return NULL;
    copy_schema(b, so, p, 0);
    so->u.sort.nkeys = q->norder;
    so->u.sort.keys = dp_arena_calloc(b->a, (size_t)q->norder, sizeof(dp_sort_key));
    if (!so->u.sort.keys) return NULL;
    for (int i = 0; i < q->norder; i++) {
      int ref = order_output_ref(b, &q->order[i], items, p->schema.ncols, p->schema.ncols);
      dp_expr *e;
      if (ref == -2) return NULL;
      if (ref >= 0) {
        e = col_ref(b, ref, p->schema.cols[ref].type, q->order[i].span);
      } else {
        dp_bexpr x;
        dp_bexpr_init(&x, b, &os, 0, "ORDER BY");
        if (!(e = dp_bind_expr(&x, q->order[i].expr))) return NULL;
      }
      so->u.sort.keys[i].expr = e;
      so->u.sort.keys[i].desc = q->order[i].desc;
      so->u.sort.keys[i].nulls_first = q->order[i].nulls ? q->order[i].nulls == 1 : !q->order[i].desc;
    }
    p = so;
  }
  return apply_limit(b, p, q);
}

/* Cast the columns of a set operation's side to the unified types. */
static dp_plan *cast_side(dp_binder *b, dp_plan *p, const dp_type *const *types, const dp_plan *names) {
  bool need = false;
  for (int i = 0; i < p->schema.ncols; i++)
    if (!dp_type_equal(p->schema.cols[i].type, types[i])) need = true;
  if (!need) return p;
  out_item *items = dp_arena_calloc(b->a, (size_t)p->schema.ncols, sizeof *items);
  if (!items) return NULL;
  for (int i = 0; i < p->schema.ncols; i++) {
    dp_expr *c = col_ref(b, i, p->schema.cols[i].type, p->span);
    items[i].expr = dp_bind_coerce(b, c, types[i], "set operation");
    items[i].name = names->schema.cols[i].name;
    if (!items[i].expr) return NULL;
  }
  return make_project(b, p, p->schema.ncols, items, p->span);
}

static dp_plan *bind_setop(dp_binder *b, const dp_ast_query *q, dp_bscope *outer) {
  dp_plan *l = dp_bind_query(b, q->left, outer);
  dp_plan *r = dp_bind_query(b, q->right, outer);
  if (!l || !r) return NULL;
  const char *opname = q->op == DP_SET_UNION ? "UNION" : q->op == DP_SET_INTERSECT ? "INTERSECT" : "EXCEPT";
  if (l->schema.ncols != r->schema.ncols)
    return dp_bind_fail(b, DIPPER_TYPE, q->right->span,
                        "the two sides of %s have %d and %d columns; they must have the same number",
                        opname, l->schema.ncols, r->schema.ncols);
  int n = l->schema.ncols;
  const dp_type **types = dp_arena_calloc(b->a, (size_t)(n ? n : 1), sizeof *types);
  if (!types) return NULL;
  for (int i = 0; i < n; i++) {
    const dp_type *lt = l->schema.cols[i].type, *rt = r->schema.cols[i].type;
    const dp_type *ct = dp_type_common(b->a, lt, rt);
    if (!ct)
      return dp_bind_fail(b, DIPPER_TYPE, q->right->span,
                          "column %d of %s is %s on the left and %s on the right; CAST one side", i + 1,
                          opname, dp_bind_type_str(b, lt), dp_bind_type_str(b, rt));
    types[i] = (lt->not_null && rt->not_null) ? not_null(b, ct) : nullable(b, ct);
  }
  if (!(l = cast_side(b, l, types, l)) || !(r = cast_side(b, r, types, l))) return NULL;
  dp_plan *p;
  if (q->op == DP_SET_UNION) {
    p = dp_bind_new_node(b, DP_P_UNION, q->span, 2, l, r);
    if (!p) return NULL;
    p->u.union_.all = q->all;
  } else {
    p = dp_bind_new_node(b, DP_P_SETOP, q->span, 2, l, r);
    if (!p) return NULL;
    p->u.setop.all = q->all;
    p->u.setop.except = q->op == DP_SET_EXCEPT;
  }
  dp_bind_schema(b, p, n);
  if (!p->schema.cols) return NULL;
  for (int i = 0; i < n; i++) p->schema.cols[i] = (dp_field){l->schema.cols[i].name, types[i]};
  if (q->op == DP_SET_UNION && !q->all) {
    dp_plan *d = dp_bind_new_node(b, DP_P_DISTINCT, q->span, 1, p);
    if (!d) return NULL;
    copy_schema(b, d, p, 0);
    p = d;
  }
  return p;
}

dp_plan *dp_bind_query(dp_binder *b, const dp_ast_query *q, dp_bscope *outer) {
  if (!q) return dp_bind_fail(b, DIPPER_INTERNAL, (dp_span){0, 0, 0, 0}, "missing query");
  if (++b->depth > DP_BIND_MAX_DEPTH) {
    b->depth--;
    return dp_bind_fail(b, DIPPER_LIMIT, q->span, "queries nested more than %d deep", DP_BIND_MAX_DEPTH);
  }
  dp_bcte *saved = b->ctes;
  for (int i = 0; i < q->nctes; i++) {
    for (int k = 0; k < i; k++)
      if (dp_bind_name_eq(q->ctes[k].name.name, q->ctes[i].name.name)) {
        b->ctes = saved;
        b->depth--;
        return dp_bind_fail(b, DIPPER_DUPLICATE, q->ctes[i].name.span,
                            "WITH defines `%s` twice", q->ctes[i].name.name);
      }
    dp_bcte *c = dp_arena_calloc(b->a, 1, sizeof *c);
    if (!c) {
      b->ctes = saved;
      b->depth--;
      return dp_bind_fail(b, DIPPER_NOMEM, q->span, "out of memory");
    }
    c->cte = &q->ctes[i];
    c->env = b->ctes;
    c->next = b->ctes;
    b->ctes = c;
  }
  dp_plan *p = NULL;
  if (q->op == DP_SET_NONE) {
    if (q->select) {
      p = bind_select(b, q->select, q, outer);
    } else if (q->values) {
      dp_bscope vs;
      memset(&vs, 0, sizeof vs);
      p = bind_values(b, q->values, &vs);
      if (p) p = order_over_output(b, p, q);
    } else if (q->left) {
      p = dp_bind_query(b, q->left, outer);
      if (p) p = order_over_output(b, p, q);
    } else {
      p = dp_bind_fail(b, DIPPER_INTERNAL, q->span, "empty query");
    }
  } else {
    p = bind_setop(b, q, outer);
    if (p) p = order_over_output(b, p, q);
  }
  b->ctes = saved;
  b->depth--;
  return p;
}
