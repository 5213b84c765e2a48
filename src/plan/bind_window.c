/*
** bind_window.c — windows: the TVFs in FROM and the group windows of GROUP BY.
**
** TUMBLE / HOP / CUMULATE / SESSION (TABLE t, DESCRIPTOR(ts), ..) with
** positional or named arguments; legacy GROUP BY TUMBLE/HOP/SESSION(ts, ..);
** Spark's GROUP BY window(ts, ..) / session_window(ts, ..).  Each becomes a
** WINDOW node appending window_start, window_end and window_time; sizes are
** checked (positive, HOP size a multiple of the slide, CUMULATE size a
** multiple of the step).
**
** Owns: nothing beyond the statement's arena.
*/
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/suggest.h"
#include "plan/binder_int.h"

/* ------------------------------------------------------------------ */
/* FROM: window TVFs                                                   */
/* ------------------------------------------------------------------ */

static dp_plan *window_node(dp_binder *b, dp_plan *in, const dp_window_spec *spec) {
  dp_plan *w = dp_bind_new_node(b, DP_P_WINDOW, spec->span, 1, in);
  if (!w) return NULL;
  int n = in->schema.ncols;
  dp_bind_copy_schema(b, w, in, 3);
  if (!w->schema.cols) return NULL;
  const dp_type *ts3 = dp_bind_not_null(b, dp_type_timestamp(b->a, DP_T_TIMESTAMP, 3));
  const dp_type *tt = in->schema.cols[spec->time_col].type;
  /* NOT NULL like its bounds: rows without a time are in no window. */
  const dp_type *wt = dp_bind_not_null(
      b, dp_type_timestamp(b->a, tt->kind == DP_T_TIMESTAMP_LTZ ? DP_T_TIMESTAMP_LTZ : DP_T_TIMESTAMP, 3));
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
    const char *best = names ? dp_closest_of(id->name, names, sc->n) : NULL;
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
    char hint[160];
    if (dp_catalog_time_hint(hint, sizeof hint, NULL, id->name, sc->cols[found].type))
      dp_bind_err(b, DIPPER_TYPE, id->span,
                  "window time column `%s` is %s; it must be TIMESTAMP or TIMESTAMP_LTZ (convert "
                  "it with a computed column of the table, e.g. %s, and window on that)",
                  id->name, dp_bind_type_str(b, sc->cols[found].type), hint);
    else
      dp_bind_err(b, DIPPER_TYPE, id->span,
                  "window time column `%s` is %s, which holds no point in time; window on a "
                  "TIMESTAMP or TIMESTAMP_LTZ column",
                  id->name, dp_bind_type_str(b, sc->cols[found].type));
    return false;
  }
  *col = sc->cols[found].index;
  return true;
}

/* A window TVF call as written: its name, the parameters after TABLE and
** DESCRIPTOR, and the arguments by slot (0 = DATA, 1 = TIMECOL, 2.. = the
** parameters in order). */
typedef struct tvf_call {
  const char *name;
  const char *params[4];
  int nparams;
  int nslots;
  const dp_ast_expr *slot[6];
} tvf_call;

/* The window kind of t->name and its parameters. */
static bool tvf_kind(dp_binder *b, const dp_ast_expr *call, tvf_call *t, dp_window_spec *spec) {
  const char *name = t->name;
  const char **params = t->params;
  if (dp_bind_name_eq(name, "tumble")) {
    spec->kind = DP_WIN_TUMBLE;
    params[0] = "size"; params[1] = "offset"; t->nparams = 2;
  } else if (dp_bind_name_eq(name, "hop")) {
    spec->kind = DP_WIN_HOP;
    params[0] = "slide"; params[1] = "size"; params[2] = "offset"; t->nparams = 3;
  } else if (dp_bind_name_eq(name, "cumulate")) {
    spec->kind = DP_WIN_CUMULATE;
    params[0] = "step"; params[1] = "size"; params[2] = "offset"; t->nparams = 3;
  } else if (dp_bind_name_eq(name, "session")) {
    spec->kind = DP_WIN_SESSION;
    params[0] = "gap"; t->nparams = 1;
  } else {
    dp_bind_err(b, DIPPER_UNSUPPORTED, call->u.call.name.span,
                "unknown table function `%s`; the window functions are TUMBLE, HOP, "
                "CUMULATE and SESSION",
                name);
    return false;
  }
  t->nslots = 2 + t->nparams;
  return true;
}

/* Each argument, positional or named, into its slot: once, and the first a TABLE. */
static bool place_tvf_args(dp_binder *b, const dp_ast_expr *call, tvf_call *t) {
  const char *name = t->name;
  const char *const *params = t->params;
  int nparams = t->nparams;
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
      if (s < 0) {
        dp_bind_err(b, DIPPER_NAME, call->u.call.args[i]->span, "%s has no parameter `%s`", name, an);
        return false;
      }
    }
    if (s >= t->nslots) {
      dp_bind_err(b, DIPPER_TYPE, call->u.call.args[i]->span,
                  "too many arguments to %s: it takes (TABLE t, DESCRIPTOR(ts), %s%s%s%s%s)",
                  name, params[0], nparams > 1 ? ", " : "", nparams > 1 ? params[1] : "",
                  nparams > 2 ? " [, " : "", nparams > 2 ? "offset]" : "");
      return false;
    }
    if (t->slot[s]) {
      dp_bind_err(b, DIPPER_SYNTAX, call->u.call.args[i]->span,
                  "argument `%s` of %s is given twice", s == 0 ? "DATA" : s == 1 ? "TIMECOL" : params[s - 2], name);
      return false;
    }
    t->slot[s] = call->u.call.args[i];
    if (s == 0 && !(call->u.call.table_arg && call->u.call.table_arg[i])) {
      dp_bind_err(b, DIPPER_TYPE, t->slot[0]->span,
                  "the first argument of %s must be a table: TABLE %s", name,
                  t->slot[0]->kind == DP_AX_COLUMN ? t->slot[0]->u.name.parts[0].name : "t");
      return false;
    }
  }
  return true;
}

/* Every slot but the offset given (TUMBLE: TABLE, DESCRIPTOR and size). */
static bool tvf_args_complete(dp_binder *b, const dp_ast_expr *call, const tvf_call *t, dp_window_kind kind) {
  bool offset_optional = kind != DP_WIN_SESSION;
  int required = offset_optional ? t->nslots - 1 : t->nslots;
  if (kind == DP_WIN_TUMBLE) required = 3;
  for (int s = 0; s < required; s++)
    if (!t->slot[s]) {
      dp_bind_err(b, DIPPER_TYPE, call->span, "%s is missing its %s argument; write %s", t->name,
                  s == 0 ? "TABLE" : s == 1 ? "DESCRIPTOR(time column)" : t->params[s - 2],
                  kind == DP_WIN_TUMBLE ? "TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTE)"
                  : kind == DP_WIN_HOP ? "HOP(TABLE t, DESCRIPTOR(ts), slide, size)"
                  : kind == DP_WIN_CUMULATE ? "CUMULATE(TABLE t, DESCRIPTOR(ts), step, max size)"
                                            : "SESSION(TABLE t, DESCRIPTOR(ts), gap)");
      return false;
    }
  return true;
}

/* The interval parameters into the spec: size, slide, offset or gap,
** the size a multiple of the slide (step), the offset within the size. */
static bool tvf_lengths(dp_binder *b, const tvf_call *t, dp_window_spec *spec) {
  int64_t v[3] = {0, 0, 0};
  for (int k = 0; k < t->nparams; k++) {
    const dp_ast_expr *arg = t->slot[2 + k];
    if (!arg) continue;
    if (dp_bind_name_eq(t->params[k], "offset")) {
      int rc = dp_bind_interval(b->d, arg, &v[k]);
      if (rc) {
        if (!b->first_error) b->first_error = rc;
        return false;
      }
    } else if (!dp_bind_interval_arg(b, arg, dp_arena_printf(b->a, "the %s of %s", t->params[k], t->name), &v[k])) {
      return false;
    }
  }
  switch (spec->kind) {
  case DP_WIN_TUMBLE:
    spec->size = spec->slide = v[0];
    spec->offset = v[1];
    break;
  case DP_WIN_HOP:
  case DP_WIN_CUMULATE:
    spec->slide = v[0];
    spec->size = v[1];
    spec->offset = v[2];
    if (spec->size % spec->slide != 0) {
      char sz[48], sl[48];
      dp_format_duration(sz, sizeof sz, spec->size);
      dp_format_duration(sl, sizeof sl, spec->slide);
      dp_bind_err(b, DIPPER_TYPE, t->slot[3]->span,
                  spec->kind == DP_WIN_HOP
                      ? "HOP size (%s) must be a whole multiple of the slide (%s)"
                      : "CUMULATE max size (%s) must be a whole multiple of the step (%s)",
                  sz, sl);
      return false;
    }
    break;
  case DP_WIN_SESSION:
    spec->gap = v[0];
    break;
  }
  if (spec->offset != 0 && (spec->offset >= spec->size || -spec->offset >= spec->size)) {
    dp_bind_err(b, DIPPER_TYPE, t->slot[t->nslots - 1]->span,
                "the window offset must be smaller than the window size");
    return false;
  }
  return true;
}

/* SESSION's PARTITION BY in the table argument: columns of the input. */
static bool session_partition(dp_binder *b, const dp_ast_expr *call, dp_bscope *inner, dp_window_spec *spec) {
  if (call->u.call.npartition_by == 0) return true;
  if (spec->kind != DP_WIN_SESSION) {
    dp_bind_err(b, DIPPER_TYPE, call->u.call.partition_by[0]->span,
                "PARTITION BY in the table argument is only for SESSION windows");
    return false;
  }
  spec->npartition = call->u.call.npartition_by;
  spec->partition = dp_arena_calloc(b->a, (size_t)spec->npartition, sizeof(int));
  if (!spec->partition) return false;
  dp_bexpr x;
  dp_bexpr_init(&x, b, inner, 0, "PARTITION BY");
  for (int i = 0; i < spec->npartition; i++) {
    dp_expr *e = dp_bind_expr(&x, call->u.call.partition_by[i]);
    if (!e) return false;
    if ((spec->partition[i] = dp_bind_as_column(e)) < 0) {
      dp_bind_err(b, DIPPER_TYPE, e->span, "SESSION PARTITION BY takes columns");
      return false;
    }
  }
  return true;
}

/* The input's columns and window_start, window_end, window_time, under `rel`. */
static void add_tvf_columns(dp_binder *b, dp_bscope *sc, const char *rel, dp_bscope *inner, const dp_plan *in,
                            const dp_plan *w) {
  for (int i = 0; i < inner->n; i++) inner->cols[i].rel = rel;
  for (int i = 0; i < inner->n; i++) dp_bscope_add(b, sc, inner->cols[i].rel, inner->cols[i].name, inner->cols[i].type, inner->cols[i].index, inner->cols[i].expr);
  int n = in->schema.ncols;
  for (int k = 0; k < 3; k++)
    dp_bscope_add(b, sc, rel, w->schema.cols[n + k].name, w->schema.cols[n + k].type, n + k, NULL);
}

/* TUMBLE / HOP / CUMULATE / SESSION (TABLE t, DESCRIPTOR(ts), ..) in FROM:
** the kind, the arguments in their slots, the table and its time column,
** the lengths, SESSION's partitioning, then the WINDOW node and its scope. */
dp_plan *dp_bind_tvf(dp_binder *b, const dp_ast_from *f, dp_bscope *sc) {
  const dp_ast_expr *call = f->u.tvf.call;
  if (!call || call->kind != DP_AX_CALL) return dp_bind_fail(b, DIPPER_SYNTAX, f->span, "expected a table function call");
  dp_window_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.syntax = DP_WSYN_TVF;
  spec.span = f->span;
  tvf_call t;
  memset(&t, 0, sizeof t);
  t.name = call->u.call.name.parts[call->u.call.name.n - 1].name;
  if (!tvf_kind(b, call, &t, &spec) || !place_tvf_args(b, call, &t) || !tvf_args_complete(b, call, &t, spec.kind))
    return NULL;
  const dp_ast_expr *data = t.slot[0], *timecol = t.slot[1];
  if (data->kind != DP_AX_COLUMN)
    return dp_bind_fail(b, DIPPER_TYPE, data->span, "the first argument of %s must be TABLE name", t.name);
  dp_bscope inner;
  memset(&inner, 0, sizeof inner);
  dp_plan *in = dp_bind_named_relation(b, &data->u.name, NULL, data->span, &inner);
  if (!in) return NULL;
  if (timecol->kind != DP_AX_DESCRIPTOR)
    return dp_bind_fail(b, DIPPER_TYPE, timecol->span,
                        "the time argument of %s must be DESCRIPTOR(column)", t.name);
  if (timecol->u.descriptor.n != 1)
    return dp_bind_fail(b, DIPPER_TYPE, timecol->span,
                        "DESCRIPTOR of a window names exactly one time column");
  if (!time_column(b, &inner, &timecol->u.descriptor.cols[0], &spec.time_col)) return NULL;
  if (!tvf_lengths(b, &t, &spec) || !session_partition(b, call, &inner, &spec)) return NULL;
  dp_plan *w = window_node(b, in, &spec);
  if (!w) return NULL;
  const char *rel = f->alias.name.name ? f->alias.name.name : data->u.name.parts[data->u.name.n - 1].name;
  add_tvf_columns(b, sc, rel, &inner, in, w);
  return w;
}

/* ------------------------------------------------------------------ */
/* group windows (legacy GROUP BY TUMBLE(..), Spark's window(..))      */
/* ------------------------------------------------------------------ */

int dp_bind_find_group_window(const dp_ast_select *s) {
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

dp_plan *dp_bind_group_window(dp_binder *b, dp_plan *in, dp_bscope *sc, const dp_ast_expr *g,
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
  if ((spec.time_col = dp_bind_as_column(tc)) < 0 || !dp_type_is_timestamp(tc->type))
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

/* Follow column `col` of p down through filters, projections and watermarks to a
** WINDOW node: *which = 0 start, 1 end, 2 time. */
const dp_plan *dp_bind_trace_window(const dp_plan *p, int col, int *which) {
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
      if (col >= p->u.project.n || (col = dp_bind_as_column(p->u.project.exprs[col])) < 0) return NULL;
      p = p->inputs[0];
      break;
    default:
      return NULL;
    }
  }
}

