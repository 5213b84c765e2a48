/*
** bind_from.c — the FROM clause and the WHERE rewrites that reshape it.
**
** Catalog tables (SCAN, then PROJECT for computed columns, then WATERMARK),
** views (re-bound from their AST at each use, cycles refused), CTEs,
** subqueries, VALUES, joins (equi keys, USING/NATURAL, temporal FOR
** SYSTEM_TIME AS OF, CROSS JOIN UNNEST), and WHERE: conditions moved into
** comma/CROSS joins, [NOT] EXISTS / IN subqueries turned into SEMI/ANTI joins
** where the correlation is simple, and the ROW_NUMBER() patterns that become
** DEDUPLICATE and TOPN.
**
** Owns: nothing beyond the statement's arena.  Does not own: window TVFs
** (bind_window.c), SELECT (bind_select.c).
*/
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/suggest.h"
#include "plan/binder_int.h"

/* ------------------------------------------------------------------ */
/* FROM: tables, views, CTEs                                           */
/* ------------------------------------------------------------------ */


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
        e = dp_bind_remap(b, t->cols[i].expr, map, t->schema.ncols);
      } else {
        e = dp_bind_col_ref(b, map[i], t->schema.cols[i].type, t->cols[i].span);
      }
      if (!e) return NULL;
      proj->u.project.exprs[i] = e;
    }
    top = proj;
  }
  if (t->watermark_col >= 0 && t->watermark_expr) {
    dp_plan *wm = dp_bind_new_node(b, DP_P_WATERMARK, t->watermark_span, 1, top);
    if (!wm) return NULL;
    dp_bind_copy_schema(b, wm, top, 0);
    wm->u.watermark.time_col = t->watermark_col;
    wm->u.watermark.expr = ncomputed > 0 ? dp_bexpr_copy(b->a, t->watermark_expr)
                                         : dp_bind_remap(b, t->watermark_expr, map, t->schema.ncols);
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
      /* Every field, members included: dp_arena_grow does not zero. */
      g[q->nwatermarks] = (dp_watermark_info){.source = t->name,
                                              .column = t->schema.cols[t->watermark_col].name,
                                              .delay = t->watermark_delay,
                                              .node = wm};
      q->nwatermarks++;
    }
    top = wm;
  }
  return top;
}

dp_plan *dp_bind_named_relation(dp_binder *b, const dp_ast_name *name, const dp_ast_alias *alias,
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
  /* t, db.t or cat.db.t (plan/catalog_ns.c) */
  dp_qname q;
  int qrc = dp_catalog_resolve(b->cat, b->d, name, &q);
  if (qrc != DIPPER_OK) {
    if (!b->first_error) b->first_error = qrc;
    return NULL;
  }
  const dp_view_def *v = dp_catalog_view_in(b->cat, &q);
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
  const dp_table_def *t = dp_catalog_table_in(b->cat, &q);
  if (!t) {
    const char *best = name->n == 1 ? dp_catalog_suggest(b->cat, nm) : NULL;
    if (!best) {
      const char *ctes[16];
      int nctes = 0;
      for (dp_bcte *c = b->ctes; c && nctes < 16; c = c->next) ctes[nctes++] = c->cte->name.name;
      best = dp_closest_of(nm, ctes, nctes);
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
    int l = dp_bind_as_column(c->u.call.args[0]), r = dp_bind_as_column(c->u.call.args[1]);
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
  dp_plan *l = dp_bind_from(b, f->u.join.left, &ls, outer);
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
    cols[ncols++] = (dp_field){"ordinality", dp_bind_not_null(b, dp_type_of(DP_T_INT))};
  if (uf->alias.ncols > 0) {
    if (uf->alias.ncols != ncols)
      return dp_bind_fail(b, DIPPER_TYPE, uf->alias.name.span, "UNNEST gives %d column%s, the alias names %d",
                          ncols, ncols == 1 ? "" : "s", uf->alias.ncols);
    for (int i = 0; i < ncols; i++) cols[i].name = uf->alias.cols[i].name;
  }
  dp_plan *u = dp_bind_new_node(b, DP_P_UNNEST, uf->span, 1, l);
  if (!u) return NULL;
  int nl = l->schema.ncols;
  dp_bind_copy_schema(b, u, l, ncols);
  if (!u->schema.cols) return NULL;
  for (int i = 0; i < ncols; i++) u->schema.cols[nl + i] = cols[i];
  u->u.unnest.arg = arg;
  u->u.unnest.with_ordinality = uf->u.unnest.with_ordinality;
  for (int i = 0; i < ls.n; i++) {
    dp_bcol *added = dp_bscope_add(b, sc, ls.cols[i].rel, ls.cols[i].name, ls.cols[i].type, ls.cols[i].index, ls.cols[i].expr);
    if (added) added->hidden = ls.cols[i].hidden;
  }
  for (int i = 0; i < ncols; i++)
    dp_bscope_add(b, sc, uf->alias.name.name, cols[i].name, cols[i].type, nl + i, NULL);
  return u;
}

/* Two inputs of one join named alike (`FROM t JOIN t`) is an error. */
static bool distinct_aliases(dp_binder *b, const dp_ast_from *f, const dp_bscope *ls,
                             const dp_bscope *rs) {
  for (int i = 0; i < rs->n; i++) {
    if (!rs->cols[i].rel || (i > 0 && rs->cols[i - 1].rel == rs->cols[i].rel)) continue;
    for (int k = 0; k < ls->n; k++)
      if (ls->cols[k].rel && dp_bind_name_eq(ls->cols[k].rel, rs->cols[i].rel)) {
        const dp_ast_from *rf = f->u.join.right;
        dp_span at = rf->alias.name.name ? rf->alias.name.span : rf->span;
        dp_bind_err(b, DIPPER_DUPLICATE, at,
                    "`%s` names two inputs of this join; give each its own alias", rs->cols[i].rel);
        return false;
      }
  }
  return true;
}

static dp_join_kind join_kind_of(const dp_ast_from *f) {
  switch (f->u.join.kind) {
  case DP_JOIN_INNER: return DP_J_INNER;
  case DP_JOIN_LEFT: return DP_J_LEFT;
  case DP_JOIN_RIGHT: return DP_J_RIGHT;
  case DP_JOIN_FULL: return DP_J_FULL;
  case DP_JOIN_LEFT_SEMI: return DP_J_SEMI;
  case DP_JOIN_LEFT_ANTI: return DP_J_ANTI;
  default: return DP_J_CROSS;
  }
}

/* The scope the condition sees: the left columns, then the right ones
** (shifted past the left), nullable on a side an outer join pads. */
static void both_sides(dp_binder *b, dp_bscope *both, const dp_bscope *ls, const dp_bscope *rs,
                       int nl, bool null_left, bool null_right) {
  for (int i = 0; i < ls->n; i++) {
    dp_bcol c = ls->cols[i];
    if (null_left) c.type = dp_bind_nullable(b, c.type);
    dp_bcol *added = dp_bscope_add(b, both, c.rel, c.name, c.type, c.index, c.expr);
    if (added) added->hidden = c.hidden;
  }
  for (int i = 0; i < rs->n; i++) {
    dp_bcol c = rs->cols[i];
    if (null_right) c.type = dp_bind_nullable(b, c.type);
    dp_expr *ce = c.expr ? dp_bexpr_shift(b->a, c.expr, nl) : NULL;
    dp_bcol *added =
        dp_bscope_add(b, both, c.rel, c.name, c.type, c.index >= 0 ? c.index + nl : -1, ce);
    if (added) added->hidden = c.hidden;
  }
}

/* FOR SYSTEM_TIME AS OF o.ts: the right side is versioned, looked up at the
** left's time (an INNER or LEFT join only). */
static bool bind_temporal(dp_binder *b, const dp_ast_from *f, dp_bscope *ls, dp_plan *j) {
  const dp_ast_from *rf = f->u.join.right;
  if (rf->kind != DP_AF_TABLE || !rf->u.table.as_of) return true;
  dp_bexpr x;
  dp_bexpr_init(&x, b, ls, 0, "FOR SYSTEM_TIME AS OF");
  dp_expr *as_of = dp_bind_expr(&x, rf->u.table.as_of);
  if (!as_of) return false;
  if (!dp_type_is_timestamp(as_of->type)) {
    dp_bind_err(b, DIPPER_TYPE, as_of->span,
                "FOR SYSTEM_TIME AS OF needs a TIMESTAMP time column of the left side, not %s",
                dp_bind_type_str(b, as_of->type));
    return false;
  }
  if (j->u.join.kind != DP_J_INNER && j->u.join.kind != DP_J_LEFT) {
    dp_bind_err(b, DIPPER_UNSUPPORTED, f->span,
                "a temporal join (FOR SYSTEM_TIME AS OF) must be an INNER or LEFT join");
    return false;
  }
  j->u.join.as_of = as_of;
  return true;
}

/* USING (k) / NATURAL: k = k for each named column, and k appears once in
** the output (merged by COALESCE for FULL, else the preserved side's);
** *cond the conjunction (NULL: NATURAL with nothing in common). */
static bool bind_using(dp_binder *b, const dp_ast_from *f, dp_join_kind kind, const dp_bscope *ls,
                       const dp_bscope *rs, dp_bscope *both, dp_expr **cond) {
  int nusing = f->u.join.nusing;
  const char **names = NULL;
  dp_span span = f->span;
  if (f->u.join.natural) {
    names = dp_arena_calloc(b->a, (size_t)(ls->n ? ls->n : 1), sizeof *names);
    if (!names) return false;
    nusing = 0;
    for (int i = 0; i < ls->n; i++) {
      if (ls->cols[i].hidden) continue;
      for (int k = 0; k < rs->n; k++)
        if (!rs->cols[k].hidden && dp_bind_name_eq(ls->cols[i].name, rs->cols[k].name)) {
          names[nusing++] = ls->cols[i].name;
          break;
        }
    }
  } else {
    names = ident_names(b, nusing, f->u.join.using_);
  }
  dp_expr **conds = dp_arena_calloc(b->a, (size_t)(nusing ? nusing : 1), sizeof *conds);
  if (!conds) return false;
  for (int u = 0; u < nusing; u++) {
    int li = -1, ri = -1, nli = 0, nri = 0;
    for (int i = 0; i < ls->n; i++)
      if (!ls->cols[i].hidden && dp_bind_name_eq(ls->cols[i].name, names[u])) {
        li = ls->n + i;
        nli++;
      }
    for (int i = 0; i < rs->n; i++)
      if (!rs->cols[i].hidden && dp_bind_name_eq(rs->cols[i].name, names[u])) {
        ri = i;
        nri++;
      }
    if (!f->u.join.natural) span = f->u.join.using_[u].span;
    if (nli > 1 || nri > 1) {
      dp_bind_err(b, DIPPER_NAME, span,
                  "USING column `%s` is ambiguous: the %s side of the join has it more "
                  "than once; write the condition with ON and qualified names",
                  names[u], nli > 1 ? "left" : "right");
      return false;
    }
    if (li < 0 || ri < 0) {
      dp_bind_err(b, DIPPER_NAME, span, "USING column `%s` is not in the %s side of the join",
                  names[u], li < 0 ? "left" : "right");
      return false;
    }
    li -= ls->n;
    dp_bcol *lc = &both->cols[li], *rc = &both->cols[ls->n + ri];
    if (lc->expr || rc->expr) {
      dp_bind_err(b, DIPPER_UNSUPPORTED, span, "USING on a merged column is not supported");
      return false;
    }
    dp_expr *le = dp_bind_col_ref(b, lc->index, lc->type, span), *re = dp_bind_col_ref(b, rc->index, rc->type, span);
    dp_expr *args[2] = {le, re};
    if (!le || !re) return false;
    const dp_type *ct = dp_type_common(b->a, le->type, re->type);
    if (!ct) {
      dp_bind_err(b, DIPPER_TYPE, span, "USING column `%s` is %s on the left and %s on the right",
                  names[u], dp_bind_type_str(b, le->type), dp_bind_type_str(b, re->type));
      return false;
    }
    args[0] = dp_bind_coerce(b, le, ct, "USING");
    args[1] = dp_bind_coerce(b, re, ct, "USING");
    if (!(conds[u] = dp_bind_call_named(b, "eq", 2, args, span))) return false;
    if (kind == DP_J_FULL) {
      lc->hidden = rc->hidden = true;
      dp_expr *m = dp_bind_call_named(b, "coalesce", 2, args, span);
      if (!m) return false;
      dp_bscope_add(b, both, NULL, names[u], m->type, -1, m);
    } else if (kind == DP_J_RIGHT) {
      lc->hidden = true;
    } else {
      rc->hidden = true;
    }
  }
  *cond = dp_bind_and(b, nusing, conds);
  return true;
}

/* Move the columns past `n` (FULL JOIN .. USING's merged ones) to the front. */
static bool merged_first(dp_binder *b, dp_bscope *both, int n) {
  int nmerged = both->n - n;
  dp_bcol *rot = dp_arena_calloc(b->a, (size_t)both->n, sizeof *rot);
  if (!rot) return false;
  memcpy(rot, both->cols + n, (size_t)nmerged * sizeof *rot);
  memcpy(rot + nmerged, both->cols, (size_t)n * sizeof *rot);
  memcpy(both->cols, rot, (size_t)both->n * sizeof *rot);
  return true;
}

/* The join's schema (the left's for SEMI/ANTI, else left ++ right with the
** padded side nullable) and the scope above it, from `cols`. */
static bool join_output(dp_binder *b, dp_plan *j, const dp_bscope *cols, bool semi, bool null_left,
                        bool null_right, dp_bscope *sc) {
  const dp_plan *l = j->inputs[0], *r = j->inputs[1];
  int nl = l->schema.ncols, nr = r->schema.ncols;
  if (semi) {
    dp_bind_copy_schema(b, j, l, 0);
  } else {
    dp_bind_schema(b, j, nl + nr);
    if (!j->schema.cols) return false;
    for (int i = 0; i < nl; i++)
      j->schema.cols[i] =
          (dp_field){l->schema.cols[i].name, null_left ? dp_bind_nullable(b, l->schema.cols[i].type)
                                                       : l->schema.cols[i].type};
    for (int i = 0; i < nr; i++)
      j->schema.cols[nl + i] =
          (dp_field){r->schema.cols[i].name, null_right ? dp_bind_nullable(b, r->schema.cols[i].type)
                                                        : r->schema.cols[i].type};
  }
  for (int i = 0; i < cols->n; i++) {
    const dp_bcol *c = &cols->cols[i];
    dp_bcol *added = dp_bscope_add(b, sc, c->rel, c->name, c->type, c->index, c->expr);
    if (added) added->hidden = c->hidden;
  }
  return true;
}

static dp_plan *bind_join(dp_binder *b, const dp_ast_from *f, dp_bscope *sc, dp_bscope *outer) {
  if (f->u.join.right->kind == DP_AF_UNNEST) return bind_unnest_join(b, f, sc, outer);
  dp_bscope ls, rs;
  memset(&ls, 0, sizeof ls);
  memset(&rs, 0, sizeof rs);
  ls.outer = rs.outer = outer;
  dp_plan *l = dp_bind_from(b, f->u.join.left, &ls, outer);
  dp_plan *r = dp_bind_from(b, f->u.join.right, &rs, outer);
  if (!l || !r) return NULL;
  if (!distinct_aliases(b, f, &ls, &rs)) return NULL;
  dp_join_kind kind = join_kind_of(f);
  dp_plan *j = dp_bind_new_node(b, DP_P_JOIN, f->span, 2, l, r);
  if (!j) return NULL;
  j->u.join.kind = kind;
  j->ttl_hint[0] = dp_bind_ttl_for(b, f->u.join.left);
  j->ttl_hint[1] = dp_bind_ttl_for(b, f->u.join.right);
  int nl = l->schema.ncols;
  bool semi = kind == DP_J_SEMI || kind == DP_J_ANTI;
  bool null_left = kind == DP_J_RIGHT || kind == DP_J_FULL;
  bool null_right = kind == DP_J_LEFT || kind == DP_J_FULL;
  /* The condition sees both sides. */
  dp_bscope both;
  memset(&both, 0, sizeof both);
  both.outer = outer;
  both_sides(b, &both, &ls, &rs, nl, null_left, null_right);
  if (!bind_temporal(b, f, &ls, j)) return NULL;
  dp_expr *cond = NULL, *match = NULL;
  if (f->u.join.match) { /* ASOF JOIN .. MATCH_CONDITION (l.t >= r.t) */
    dp_bexpr x;
    dp_bexpr_init(&x, b, &both, 0, "MATCH_CONDITION");
    if (!(match = dp_bind_cond(&x, f->u.join.match))) return NULL;
  }
  if (f->u.join.on) {
    dp_bexpr x;
    dp_bexpr_init(&x, b, &both, 0, "ON");
    if (!(cond = dp_bind_cond(&x, f->u.join.on))) return NULL;
  } else if (f->u.join.nusing > 0 || f->u.join.natural) {
    if (!bind_using(b, f, kind, &ls, &rs, &both, &cond)) return NULL;
  } else if (kind != DP_J_CROSS && !match) {
    return dp_bind_fail(b, DIPPER_SYNTAX, f->span, "this join needs ON <condition> or USING (columns)");
  }
  if (match) {
    dp_expr *both_conds[2] = {match, cond};
    cond = dp_bind_and(b, cond ? 2 : 1, both_conds);
  }
  /* the merged columns of FULL JOIN .. USING come first, as `*` shows them */
  if (kind == DP_J_FULL && both.n > ls.n + rs.n && !merged_first(b, &both, ls.n + rs.n))
    return NULL;
  j->u.join.cond = cond;
  extract_keys(b, j);
  if (!join_output(b, j, semi ? &ls : &both, semi, null_left, null_right, sc)) return NULL;
  return f->u.join.asof ? dp_bind_asof(b, f, j) : j;
}

dp_plan *dp_bind_values(dp_binder *b, const dp_ast_from *f, dp_bscope *sc) {
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
    const char *nm = c < f->alias.ncols ? f->alias.cols[c].name : dp_bind_expr_name(b, c);
    p->schema.cols[c] = (dp_field){nm, nn ? dp_bind_not_null(b, ct) : dp_bind_nullable(b, ct)};
  }
  if (f->alias.ncols && f->alias.ncols != ncols)
    return dp_bind_fail(b, DIPPER_TYPE, f->alias.name.span, "the alias names %d columns but VALUES has %d",
                        f->alias.ncols, ncols);
  p->u.values.nrows = nrows;
  p->u.values.cells = cells;
  dp_bscope_from_plan(b, sc, p, f->alias.name.name);
  return p;
}

dp_plan *dp_bind_from(dp_binder *b, const dp_ast_from *f, dp_bscope *sc, dp_bscope *outer) {
  sc->outer = outer;
  if (dp_bind_out_of_memory(b)) return NULL;
  if (++b->depth > DP_BIND_MAX_DEPTH) {
    b->depth--;
    return dp_bind_fail(b, DIPPER_LIMIT, f->span, "FROM clause nested too deeply");
  }
  dp_plan *p = NULL;
  switch (f->kind) {
  case DP_AF_TABLE:
    p = dp_bind_named_relation(b, &f->u.table.name, &f->alias, f->span, sc);
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
    p = dp_bind_tvf(b, f, sc);
    break;
  case DP_AF_VALUES:
    p = dp_bind_values(b, f, sc);
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
  dp_bind_rewrite_cols(c, NULL, 0, true);
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
    val = dp_bind_col_ref(b, 0, sub->schema.cols[0].type, conj->span);
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
    dp_bind_copy_schema(b, f, right, 0);
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
  dp_bind_copy_schema(b, j, left, 0);
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
  /* A select list that is the OVER's row as it is (QUALIFY over SELECT of
  ** every column) left no projection: match it as the identity one. */
  if (p->kind == DP_P_OVER) {
    dp_plan *id = dp_bind_new_node(b, DP_P_PROJECT, p->span, 1, p);
    if (!id) return NULL;
    dp_bind_copy_schema(b, id, p, 0);
    id->u.project.n = p->schema.ncols;
    id->u.project.exprs = dp_arena_calloc(b->a, (size_t)(p->schema.ncols ? p->schema.ncols : 1),
                                          sizeof(dp_expr *));
    if (!id->u.project.exprs) return NULL;
    for (int c = 0; c < p->schema.ncols; c++)
      if (!(id->u.project.exprs[c] = dp_bind_col_ref(b, c, p->schema.cols[c].type, p->span)))
        return NULL;
    p = id;
  }
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
    int pc = dp_bind_as_column(l);
    if (pc < 0 || pc >= p->u.project.n || dp_bind_as_column(p->u.project.exprs[pc]) != rank_col) continue;
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
      if ((keys[q] = dp_bind_as_column(over->u.over.partition[q])) < 0) return NULL;
    bool uses_rank = false;
    for (int q = 0; q < p->u.project.n; q++)
      if (dp_bexpr_uses_range(p->u.project.exprs[q], rank_col, rank_col + 1)) uses_rank = true;
    dp_plan *node;
    int oc = over->u.over.norder == 1 ? dp_bind_as_column(over->u.over.order[0].expr) : -1;
    bool dedup = limit == 1 && rk == DP_RANK_ROW_NUMBER && oc >= 0 &&
                 dp_type_is_timestamp(x->schema.cols[oc].type);
    if (dedup) {
      node = dp_bind_new_node(b, DP_P_DEDUPLICATE, c->span, 1, x);
      if (!node) return NULL;
      dp_bind_copy_schema(b, node, x, 0);
      node->u.dedup.nkeys = np;
      node->u.dedup.keys = keys;
      node->u.dedup.order_col = oc;
      node->u.dedup.keep_last = over->u.over.order[0].desc;
    } else {
      node = dp_bind_new_node(b, DP_P_TOPN, c->span, 1, x);
      if (!node) return NULL;
      dp_bind_copy_schema(b, node, x, uses_rank ? 1 : 0);
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
    dp_bind_copy_schema(b, proj, p, 0);
    proj->u.project.n = p->u.project.n;
    proj->u.project.exprs = dp_arena_calloc(b->a, (size_t)p->u.project.n, sizeof(dp_expr *));
    if (!proj->u.project.exprs) return NULL;
    for (int q = 0; q < p->u.project.n; q++) {
      dp_expr *e = p->u.project.exprs[q];
      if (dedup && dp_bexpr_uses_range(e, rank_col, rank_col + 1)) {
        if (dp_bind_as_column(e) != rank_col)
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
dp_plan *dp_bind_apply_where(dp_binder *b, dp_plan *p, dp_expr *cond, dp_span span, bool rank_patterns) {
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
  dp_bind_copy_schema(b, f, p, 0);
  f->u.filter.cond = nrest == n ? cond : dp_bind_and(b, nrest, rest);
  return f->u.filter.cond ? f : NULL;
}

