/*
** prune.c — the demand analysis of prune.h: which output columns of a node
** the plan above it reads, whole or field by field.
**
** Owns: the per-kind rules that turn a node's demand into its inputs'
** demand, and the walk of bound expressions that finds the columns (and ROW
** fields) they read.  Does not own: skipping the columns (the operators do,
** see exec/narrow.h), nor any rewrite of the plan.
**
** The walk goes from the root down every path and adds up, at the target,
** the demand each path brings; plans are small trees (a view used twice is
** bound twice), so the cost is a few hundred steps at operator open.
*/
#include <string.h>

#include "plan/prune.h"

typedef struct need_ctx {
  dp_arena *a;
  const dp_plan *target;
  dp_col_need *result;   /* target->schema.ncols entries */
  bool found;
  bool nomem;
} need_ctx;

static void need_whole(dp_col_need *n, int ncols) {
  for (int i = 0; i < ncols; i++) n[i].whole = true;
}

static void need_add(dp_col_need *dst, const dp_col_need *src) {
  dst->whole = dst->whole || src->whole;
  dst->fields |= src->fields;
}

/* Does e hold a subquery anywhere?  Its correlated references read the row
** in ways this walk does not follow: such an expression reads everything. */
static bool has_subquery(const dp_expr *e) {
  if (!e) return false;
  switch (e->kind) {
  case DP_E_SUBQUERY: return true;
  case DP_E_COLUMN: case DP_E_LITERAL: return false;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++)
      if (has_subquery(e->u.call.args[i])) return true;
    return false;
  case DP_E_CAST: return has_subquery(e->u.cast.arg);
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++)
      if (has_subquery(e->u.case_.whens[i]) || has_subquery(e->u.case_.thens[i])) return true;
    return has_subquery(e->u.case_.else_);
  case DP_E_FIELD: return has_subquery(e->u.field.arg);
  }
  return true;
}

/* Add what e reads of an input of `ncols` columns to `in`. */
static void expr_reads(const dp_expr *e, dp_col_need *in, int ncols) {
  if (!e) return;
  switch (e->kind) {
  case DP_E_COLUMN:
    if (e->u.column.outer == 0 && e->u.column.index >= 0 && e->u.column.index < ncols)
      in[e->u.column.index].whole = true;
    return;
  case DP_E_LITERAL: return;
  case DP_E_CALL:
    for (int i = 0; i < e->u.call.nargs; i++) expr_reads(e->u.call.args[i], in, ncols);
    return;
  case DP_E_CAST: expr_reads(e->u.cast.arg, in, ncols); return;
  case DP_E_CASE:
    for (int i = 0; i < e->u.case_.n; i++) {
      expr_reads(e->u.case_.whens[i], in, ncols);
      expr_reads(e->u.case_.thens[i], in, ncols);
    }
    expr_reads(e->u.case_.else_, in, ncols);
    return;
  case DP_E_FIELD: {
    const dp_expr *arg = e->u.field.arg;
    int c = dp_expr_as_column(arg);
    int f = e->u.field.index;
    if (c >= 0 && c < ncols && f >= 0 && f < DP_PRUNE_MAX_FIELDS && arg->type &&
        arg->type->kind == DP_T_ROW && arg->type->nfields <= DP_PRUNE_MAX_FIELDS) {
      in[c].fields |= UINT64_C(1) << (unsigned)f;
      return;
    }
    expr_reads(arg, in, ncols);
    return;
  }
  case DP_E_SUBQUERY: need_whole(in, ncols); return;
  }
}

/* What an expression computing an output column of demand `out` reads: a
** bare column passes a field-level demand through; anything else reads
** what its walk finds. */
static void project_reads(const dp_expr *e, const dp_col_need *out, dp_col_need *in, int ncols) {
  if (!dp_col_needed(out)) return;
  if (has_subquery(e)) {
    need_whole(in, ncols);
    return;
  }
  int c = dp_expr_as_column(e);
  if (c >= 0 && c < ncols && !out->whole) {
    in[c].fields |= out->fields;
    return;
  }
  expr_reads(e, in, ncols);
}

static void reads_expr(const dp_expr *e, dp_col_need *in, int ncols) {
  if (has_subquery(e))
    need_whole(in, ncols);
  else
    expr_reads(e, in, ncols);
}

/* What a join reads of its input k (0 left, 1 right): what its parents read
** of that input's columns in its output (left ++ right; SEMI and ANTI joins
** output the left columns only), every column its condition reads (the
** condition is over left ++ right), the equi-join keys, the AS OF time of a
** temporal join (over the left rows), and every event-time column of the
** input whole: the operator finds its time bound and version column among
** them (op_join.c), whether or not the condition names them. */
static void join_reads(const dp_plan *p, int k, const dp_col_need *need, dp_col_need *in) {
  const dp_plan *child = p->inputs[k];
  int nin = child->schema.ncols, nl = p->inputs[0]->schema.ncols;
  int off = k == 0 ? 0 : nl, nout = p->schema.ncols;
  for (int i = 0; i < nin && off + i < nout; i++) in[i] = need[off + i];
  const dp_expr *cond = p->u.join.cond;
  if (has_subquery(cond) || (k == 0 && has_subquery(p->u.join.as_of))) {
    need_whole(in, nin);
    return;
  }
  if (cond) {
    for (int i = 0; i < nin; i++)
      if (dp_expr_uses_column(cond, off + i)) in[i].whole = true;
  }
  for (int j = 0; j < p->u.join.nkeys; j++) {
    int c = k == 0 ? p->u.join.left_keys[j] : p->u.join.right_keys[j];
    if (c >= 0 && c < nin) in[c].whole = true;
  }
  if (k == 0) expr_reads(p->u.join.as_of, in, nin);
  for (int i = 0; child->props.time_attr && i < nin; i++)
    if (child->props.time_attr[i] >= 0) in[i].whole = true;
}

static void visit(need_ctx *c, const dp_plan *p, const dp_col_need *need);

/* Fill the demand on input i of p from p's own demand `need`, and go on. */
static void visit_inputs(need_ctx *c, const dp_plan *p, const dp_col_need *need) {
  for (int k = 0; k < p->ninputs && !c->nomem; k++) {
    const dp_plan *child = p->inputs[k];
    int nin = child->schema.ncols;
    dp_col_need *in = dp_arena_calloc(c->a, (size_t)(nin ? nin : 1), sizeof *in);
    if (!in) {
      c->nomem = true;
      return;
    }
    int nout = p->schema.ncols;
    switch (p->kind) {
    case DP_P_PROJECT:
      for (int i = 0; i < p->u.project.n && i < nout; i++)
        project_reads(p->u.project.exprs[i], &need[i], in, nin);
      break;
    case DP_P_FILTER:
      for (int i = 0; i < nin && i < nout; i++) in[i] = need[i];
      reads_expr(p->u.filter.cond, in, nin);
      break;
    case DP_P_WATERMARK:
      for (int i = 0; i < nin && i < nout; i++) in[i] = need[i];
      if (p->u.watermark.time_col >= 0 && p->u.watermark.time_col < nin)
        in[p->u.watermark.time_col].whole = true;
      reads_expr(p->u.watermark.expr, in, nin);
      break;
    case DP_P_WINDOW: {
      const dp_window_spec *w = &p->u.window;
      for (int i = 0; i < nin && i < nout; i++) in[i] = need[i];
      if (w->time_col >= 0 && w->time_col < nin) in[w->time_col].whole = true;
      for (int i = 0; i < w->npartition; i++)
        if (w->partition[i] >= 0 && w->partition[i] < nin) in[w->partition[i]].whole = true;
      reads_expr(w->gap_expr, in, nin);
      break;
    }
    case DP_P_AGGREGATE:
      for (int i = 0; i < p->u.aggregate.ngroup; i++) reads_expr(p->u.aggregate.group[i], in, nin);
      for (int i = 0; i < p->u.aggregate.naggs; i++) {
        const dp_agg_call *ag = &p->u.aggregate.aggs[i];
        for (int j = 0; j < ag->nargs; j++) reads_expr(ag->args[j], in, nin);
        reads_expr(ag->filter, in, nin);
      }
      break;
    case DP_P_UNNEST:
      for (int i = 0; i < nin && i < nout; i++) in[i] = need[i];
      reads_expr(p->u.unnest.arg, in, nin);
      break;
    case DP_P_UNION:
      for (int i = 0; i < nin && i < nout; i++) in[i] = need[i];
      break;
    case DP_P_JOIN:
      join_reads(p, k, need, in);
      break;
    case DP_P_SINK: /* a sink hands its input to the connector as it is */
    default:
      /* Sinks, sorts, set operations, dedup, top-N, OVER ...: everything. */
      need_whole(in, nin);
      break;
    }
    visit(c, child, in);
  }
}

static void visit(need_ctx *c, const dp_plan *p, const dp_col_need *need) {
  if (p == c->target) {
    c->found = true;
    for (int i = 0; i < p->schema.ncols; i++) need_add(&c->result[i], &need[i]);
    return; /* a node does not hold itself below */
  }
  visit_inputs(c, p, need);
}

int dp_prune_need(dp_arena *a, const dp_plan *root, const dp_plan *target, dp_col_need **out) {
  *out = NULL;
  int n = target->schema.ncols;
  need_ctx c = {a, target, NULL, false, false};
  c.result = dp_arena_calloc(a, (size_t)(n ? n : 1), sizeof *c.result);
  dp_col_need *top = root ? dp_arena_calloc(a, (size_t)(root->schema.ncols ? root->schema.ncols : 1),
                                            sizeof *top)
                          : NULL;
  if (!c.result || (root && !top)) return DIPPER_NOMEM;
  if (root) {
    need_whole(top, root->schema.ncols);
    visit(&c, root, top);
  }
  if (c.nomem) return DIPPER_NOMEM;
  if (!c.found) need_whole(c.result, n);
  /* A ROW column all of whose fields are read is read whole. */
  for (int i = 0; i < n; i++) {
    const dp_type *t = target->schema.cols[i].type;
    if (!c.result[i].whole && c.result[i].fields && t && t->kind == DP_T_ROW &&
        t->nfields <= DP_PRUNE_MAX_FIELDS) {
      uint64_t all = t->nfields == 64 ? ~UINT64_C(0) : (UINT64_C(1) << (unsigned)t->nfields) - 1;
      if ((c.result[i].fields & all) == all) c.result[i].whole = true;
    }
  }
  *out = c.result;
  return DIPPER_OK;
}

bool dp_prune_is_all(const dp_col_need *need, int ncols) {
  for (int i = 0; i < ncols; i++)
    if (!need[i].whole) return false;
  return true;
}
