/*
** translate.c — logical plan nodes as Spark Connect relations (translate.h).
**
** Owns: one translator per plan node kind (below, in the order of
** DP_PLAN_KINDS), the root's mapping back to the user's column names, the
** sink plans, and dp_spark_check.  Structured relations only, never the
** `sql` relation.  Does not own: the leaves -- SCAN (of files, memory and
** datagen tables) and VALUES (translate_scan.c); expressions
** (translate_expr.c), types (translate_type.c), streaming sources and the
** streaming write (translate_stream.c).
**
** Every relation built here names its output columns uniquely (see
** translate_int.h); nodes that keep their input's columns (Filter, Sort,
** Limit, Deduplicate, WithWatermark) keep its names too.  Columns a node
** carries beyond its plan schema (the window struct of a window aggregation,
** or only its time column when the GROUP BY takes window() itself, a rank
** that is filtered on) are listed in dp_srel.hidden; positional operations
** (set operations, DISTINCT) first project them away (strip).
*/
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "spark/arrow_ipc.h"
#include "spark/stream_rules.h"
#include "spark/translate_stream.h"
#include "spark/translate_int.h"
#include "spark/translate_partition.h"

/* ---- builders ---- */

Spark__Connect__Relation *dp_sx_relation(dp_sx *x, Spark__Connect__Relation__RelTypeCase kind) {
  Spark__Connect__Relation *r;
  if (!DP_SX_NEW(x, r, spark__connect__relation__init)) return NULL;
  r->rel_type_case = kind;
  return r;
}

Spark__Connect__Relation *dp_sx_project(dp_sx *x, Spark__Connect__Relation *input, int n,
                                        Spark__Connect__Expression **exprs) {
  for (int i = 0; i < n; i++)
    if (!exprs[i]) return NULL;
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_PROJECT);
  Spark__Connect__Project *m;
  if (!r || !input || !DP_SX_NEW(x, m, spark__connect__project__init)) return NULL;
  m->input = input;
  m->n_expressions = (size_t)n;
  m->expressions = exprs;
  r->project = m;
  return r;
}

Spark__Connect__Relation *dp_sx_filter(dp_sx *x, Spark__Connect__Relation *input,
                                       Spark__Connect__Expression *cond) {
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_FILTER);
  Spark__Connect__Filter *m;
  if (!r || !input || !cond || !DP_SX_NEW(x, m, spark__connect__filter__init)) return NULL;
  m->input = input;
  m->condition = cond;
  r->filter = m;
  return r;
}

Spark__Connect__Relation *dp_sx_wrap_refs(dp_sx *x, Spark__Connect__Relation *rel) {
  if (!rel || x->nrefs == 0) return rel;
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_WITH_RELATIONS);
  Spark__Connect__WithRelations *m;
  if (!r || !DP_SX_NEW(x, m, spark__connect__with_relations__init)) return NULL;
  m->root = rel;
  m->n_references = (size_t)x->nrefs;
  m->references = x->refs;
  r->with_relations = m;
  x->nrefs = x->caprefs = 0;
  x->refs = NULL;
  return r;
}

Spark__Connect__Relation *dp_sx_read_source(dp_sx *x, const char *format, const char *schema,
                                            int nopts, const char *const *opts, int npaths,
                                            const char *const *paths, bool streaming) {
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_READ);
  Spark__Connect__Read *rd;
  Spark__Connect__Read__DataSource *ds;
  if (!r || !DP_SX_NEW(x, rd, spark__connect__read__init) || !DP_SX_NEW(x, ds, spark__connect__read__data_source__init))
    return NULL;
  ds->_format_case = SPARK__CONNECT__READ__DATA_SOURCE___FORMAT_FORMAT;
  if (!(ds->format = dp_sx_strdup(x, format))) return NULL;
  if (schema) {
    ds->_schema_case = SPARK__CONNECT__READ__DATA_SOURCE___SCHEMA_SCHEMA;
    if (!(ds->schema = dp_sx_strdup(x, schema))) return NULL;
  }
  if (nopts > 0) {
    ds->n_options = (size_t)nopts;
    if (!(ds->options = dp_sx_alloc(x, (size_t)nopts * sizeof *ds->options))) return NULL;
    for (int i = 0; i < nopts; i++) {
      Spark__Connect__Read__DataSource__OptionsEntry *o;
      if (!DP_SX_NEW(x, o, spark__connect__read__data_source__options_entry__init)) return NULL;
      o->key = dp_sx_strdup(x, opts[2 * i]);
      o->value = dp_sx_strdup(x, opts[2 * i + 1]);
      if (!o->key || !o->value) return NULL;
      ds->options[i] = o;
    }
  }
  if (npaths > 0) {
    ds->n_paths = (size_t)npaths;
    if (!(ds->paths = dp_sx_alloc(x, (size_t)npaths * sizeof *ds->paths))) return NULL;
    for (int i = 0; i < npaths; i++)
      if (!(ds->paths[i] = dp_sx_strdup(x, paths[i]))) return NULL;
  }
  rd->is_streaming = streaming;
  rd->read_type_case = SPARK__CONNECT__READ__READ_TYPE_DATA_SOURCE;
  rd->data_source = ds;
  r->read = rd;
  return r;
}

static dp_sscope scope_of(const dp_sx *x, const dp_srel *r) {
  dp_sscope s = {r->ncols, r->names, x->outer};
  return s;
}

/* An output list: room for n plan columns plus the input's hidden ones. */
Spark__Connect__Expression **dp_sx_expr_list(dp_sx *x, int n) {
  return dp_sx_alloc(x, (size_t)(n > 0 ? n : 1) * sizeof(Spark__Connect__Expression *));
}

/* Append the input's hidden columns to exprs at k; returns the new k. */
static int carry_hidden(dp_sx *x, const dp_srel *in, Spark__Connect__Expression **exprs, int k) {
  for (int i = 0; i < in->nhidden; i++) exprs[k++] = dp_sx_col(x, in->hidden[i]);
  return k;
}

/* The input's plan columns as references (NULL names left out); returns the count. */
static int pass_columns(dp_sx *x, const dp_srel *in, Spark__Connect__Expression **exprs, int k) {
  for (int i = 0; i < in->ncols; i++)
    if (in->names[i]) exprs[k++] = dp_sx_col(x, in->names[i]);
  return k;
}

int dp_sx_rename(dp_sx *x, dp_srel *in, const char *const *names) {
  Spark__Connect__Expression **e = dp_sx_expr_list(x, in->ncols + in->nhidden);
  if (!e) return x->rc;
  int k = 0;
  for (int i = 0; i < in->ncols; i++) {
    if (!in->names[i]) continue;
    e[k++] = dp_sx_alias(x, dp_sx_col(x, in->names[i]), names[i]);
  }
  k = carry_hidden(x, in, e, k);
  Spark__Connect__Relation *r = dp_sx_project(x, in->rel, k, e);
  if (!r) return x->rc ? x->rc : dp_sx_nomem(x);
  const char **nn = dp_sx_alloc(x, (size_t)(in->ncols ? in->ncols : 1) * sizeof *nn);
  if (!nn) return x->rc;
  for (int i = 0; i < in->ncols; i++) nn[i] = in->names[i] ? names[i] : NULL;
  in->rel = r;
  in->names = nn;
  return DIPPER_OK;
}

/* Only the plan columns, for positional operations; refuses NULL names. */
static int strip(dp_sx *x, dp_srel *in, dp_span span) {
  for (int i = 0; i < in->ncols; i++)
    if (!in->names[i])
      return dp_sx_refuse(x, span, "the bounds of a SESSION window exist on Spark only as keys of its "
                                   "GROUP BY; aggregate over the window first");
  in->wgroup = NULL;
  in->wrole = NULL;
  if (in->nhidden == 0) return DIPPER_OK;
  Spark__Connect__Expression **e = dp_sx_expr_list(x, in->ncols);
  if (!e) return x->rc;
  int k = pass_columns(x, in, e, 0);
  if (!(in->rel = dp_sx_project(x, in->rel, k, e))) return x->rc ? x->rc : dp_sx_nomem(x);
  in->nhidden = 0;
  in->hidden = NULL;
  return DIPPER_OK;
}

/* Forget a carried window (nodes other than FILTER and PROJECT end it); the
** hidden columns stay where they are. */
static void end_window(dp_srel *r) {
  r->wgroup = NULL;
  r->wrole = NULL;
}

static const char **append_name(dp_sx *x, const char **names, int n, const char *name) {
  const char **nn = dp_sx_alloc(x, (size_t)(n + 1) * sizeof *nn);
  if (!nn) return NULL;
  if (n) memcpy(nn, names, (size_t)n * sizeof *nn);
  nn[n] = name;
  return nn;
}

int dp_sx_fail(dp_sx *x) { return x->rc ? x->rc : dp_sx_nomem(x); }

/* protobuf-c's string fields are `char *`; ours are arena strings we never
** change after building them. */
char *dp_sx_mut(const char *s) { return (char *)(uintptr_t)s; }

/* The result of an aggregate or window call as dipper types it (Spark's
** SUM of a DECIMAL is wider, ROW_NUMBER an INT, ...). */
Spark__Connect__Expression *dp_sx_as_type(dp_sx *x, Spark__Connect__Expression *e, const dp_type *t, dp_span sp) {
  if (!e || !t || t->kind == DP_T_NULL) return e;
  return dp_sx_cast(x, e, t, false, sp);
}

/* ---- PROJECT, FILTER ---- */

static int project(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  int n = p->u.project.n;
  int relno = dp_sx_relno(x);
  const char **names = dp_sx_colnames(x, relno, n);
  Spark__Connect__Expression **e = dp_sx_expr_list(x, n + in->nhidden);
  unsigned char *role = in->wrole ? dp_sx_alloc(x, (size_t)(n ? n : 1)) : NULL;
  if (!names || !e || (in->wrole && !role)) return dp_sx_fail(x);
  dp_sscope s = scope_of(x, in);
  bool ok = true;
  int k = 0;
  for (int i = 0; i < n; i++) {
    const dp_expr *ex = p->u.project.exprs[i];
    int c = ex->kind == DP_E_COLUMN && ex->u.column.outer == 0 ? ex->u.column.index : -1;
    if (c >= 0 && c < in->ncols) {
      if (role) role[i] = in->wrole[c];
      if (!in->names[c]) { /* a SESSION bound before its GROUP BY: stays unnamed */
        names[i] = NULL;
        continue;
      }
    }
    ok &= (e[k++] = dp_sx_alias(x, dp_sx_expr(x, &s, ex), names[i])) != NULL;
  }
  k = carry_hidden(x, in, e, k);
  if (!ok) return dp_sx_fail(x);
  *out = *in;
  out->rel = dp_sx_wrap_refs(x, dp_sx_project(x, in->rel, k, e));
  out->ncols = n;
  out->names = names;
  out->wrole = role;
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

static int filter(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  dp_sscope s = scope_of(x, in);
  Spark__Connect__Expression *c = dp_sx_expr(x, &s, p->u.filter.cond);
  *out = *in;
  out->rel = dp_sx_wrap_refs(x, dp_sx_filter(x, in->rel, c));
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

/* ---- WATERMARK ---- */

static int watermark(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  *out = *in;
  int64_t delay = p->u.watermark.delay;
  if (delay < 0) {
    if (x->q && x->q->streaming)
      return dp_sx_refuse(x, p->span, "Spark's watermark is `column - constant delay`; write WATERMARK FOR %s "
                                      "AS %s - INTERVAL 'n' SECOND",
                          p->schema.cols[p->u.watermark.time_col].name, p->schema.cols[p->u.watermark.time_col].name);
    return DIPPER_OK; /* batch: a watermark changes nothing */
  }
  int tc = p->u.watermark.time_col;
  const char *tcol = in->names[tc];
  Spark__Connect__Relation *input = in->rel;
  if (x->q && x->q->streaming && p->schema.cols[tc].type->kind == DP_T_TIMESTAMP && tcol) {
    /* Spark's event time must be a TIMESTAMP (an instant), not TIMESTAMP_NTZ:
       the column becomes one under its name (the same wall clock in the
       session's UTC), and the root casts it back (finish) */
    Spark__Connect__Expression **e = dp_sx_expr_list(x, in->ncols + in->nhidden);
    if (!e) return dp_sx_fail(x);
    int k = 0;
    for (int i = 0; i < in->ncols; i++) {
      if (!in->names[i]) continue;
      Spark__Connect__Expression *c = dp_sx_col(x, in->names[i]);
      e[k++] = i == tc ? dp_sx_alias(x, dp_sx_cast(x, c, dp_type_of(DP_T_TIMESTAMP_LTZ), false, p->span), tcol) : c;
    }
    k = carry_hidden(x, in, e, k);
    if (!(input = dp_sx_project(x, in->rel, k, e))) return dp_sx_fail(x);
  }
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_WITH_WATERMARK);
  Spark__Connect__WithWatermark *w;
  if (!r || !tcol || !DP_SX_NEW(x, w, spark__connect__with_watermark__init)) return dp_sx_fail(x);
  w->input = input;
  w->event_time = dp_sx_strdup(x, tcol);
  w->delay_threshold = dp_sx_mut(dp_sx_interval_text(x, delay));
  if (!w->event_time || !w->delay_threshold) return dp_sx_fail(x);
  r->with_watermark = w;
  out->rel = r;
  end_window(out);
  return DIPPER_OK;
}

/* ---- WINDOW ---- */

Spark__Connect__Expression *dp_sx_field(dp_sx *x, Spark__Connect__Expression *e, const char *name) {
  Spark__Connect__Expression *r;
  Spark__Connect__Expression__UnresolvedExtractValue *ev;
  if (!e || !DP_SX_NEW(x, r, spark__connect__expression__init) ||
      !DP_SX_NEW(x, ev, spark__connect__expression__unresolved_extract_value__init))
    return NULL;
  r->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_EXTRACT_VALUE;
  ev->child = e;
  ev->extraction = dp_sx_lit_string(x, name);
  r->unresolved_extract_value = ev;
  return ev->extraction ? r : NULL;
}

/* The window's bound `role` from the window struct column w. */
static Spark__Connect__Expression *window_part(dp_sx *x, const char *w, int role) {
  switch (role) {
  case DP_SW_START: return dp_sx_field(x, dp_sx_col(x, w), "start");
  case DP_SW_END: return dp_sx_field(x, dp_sx_col(x, w), "end");
  default: return dp_sx_fn1(x, "window_time", dp_sx_col(x, w));
  }
}

/* A day-time interval literal of `micros`. */
static Spark__Connect__Expression *interval_lit(dp_sx *x, int64_t micros, dp_span sp) {
  dp_value v;
  memset(&v, 0, sizeof v);
  v.type = dp_type_of(DP_T_INTERVAL_DT);
  v.u.i = micros;
  return dp_sx_literal(x, &v, sp);
}

/* CUMULATE over a bounded input: a row at ts lies in the windows that start
** where its max-size window starts and end at each step boundary after ts
** up to that window's end.  window(ts, size) gives the start and the last
** end, window(ts, step) the first end (the end of ts's step); explode of
** sequence(first, last, step) makes one row per window.  Spark takes one
** window() per operator, hence three projections. */
static int cumulate(dp_sx *x, const dp_plan *p, dp_srel *in, const char *tcol, dp_srel *out) {
  const dp_window_spec *w = &p->u.window;
  int nin = in->ncols, n = p->schema.ncols;
  int relno = dp_sx_relno(x);
  const char *mname = dp_sx_colname(x, relno, n), *sname = dp_sx_colname(x, relno, n + 1);
  const char *ename = dp_sx_colname(x, relno, n + 2);
  const char **names = dp_sx_alloc(x, (size_t)n * sizeof *names);
  if (!mname || !sname || !ename || !names) return dp_sx_fail(x);
  memcpy(names, in->names, (size_t)nin * sizeof *names);
  int64_t start_max = w->size > 0 ? ((w->offset % w->size) + w->size) % w->size : 0;
  int64_t start_step = w->slide > 0 ? ((w->offset % w->slide) + w->slide) % w->slide : 0;
  Spark__Connect__Expression *wmax[4] = {
      dp_sx_col(x, tcol), dp_sx_lit_string(x, dp_sx_interval_text(x, w->size)),
      dp_sx_lit_string(x, dp_sx_interval_text(x, w->size)),
      dp_sx_lit_string(x, dp_sx_interval_text(x, start_max))};
  Spark__Connect__Expression *wstep[4] = {
      dp_sx_col(x, tcol), dp_sx_lit_string(x, dp_sx_interval_text(x, w->slide)),
      dp_sx_lit_string(x, dp_sx_interval_text(x, w->slide)),
      dp_sx_lit_string(x, dp_sx_interval_text(x, start_step))};
  Spark__Connect__Expression **e1 = dp_sx_expr_list(x, nin + in->nhidden + 1);
  Spark__Connect__Expression **e2 = dp_sx_expr_list(x, nin + in->nhidden + 2);
  Spark__Connect__Expression **e3 = dp_sx_expr_list(x, nin + in->nhidden + 2);
  Spark__Connect__Expression **e4 = dp_sx_expr_list(x, nin + in->nhidden + 3);
  if (!e1 || !e2 || !e3 || !e4) return dp_sx_fail(x);
  int k = carry_hidden(x, in, e1, pass_columns(x, in, e1, 0));
  e1[k++] = dp_sx_alias(x, dp_sx_fn(x, "window", 4, wmax), mname);
  Spark__Connect__Relation *r = dp_sx_project(x, in->rel, k, e1);
  k = carry_hidden(x, in, e2, pass_columns(x, in, e2, 0));
  e2[k++] = dp_sx_col(x, mname);
  e2[k++] = dp_sx_alias(x, dp_sx_fn(x, "window", 4, wstep), sname);
  r = dp_sx_project(x, r, k, e2);
  k = carry_hidden(x, in, e3, pass_columns(x, in, e3, 0));
  e3[k++] = dp_sx_col(x, mname);
  Spark__Connect__Expression *ends =
      dp_sx_fn3(x, "sequence", dp_sx_field(x, dp_sx_col(x, sname), "end"), dp_sx_field(x, dp_sx_col(x, mname), "end"),
                interval_lit(x, w->slide, w->span));
  e3[k++] = dp_sx_alias(x, dp_sx_fn1(x, "explode", ends), ename);
  r = dp_sx_project(x, r, k, e3);
  k = pass_columns(x, in, e4, 0);
  Spark__Connect__Expression *bounds[3] = {
      dp_sx_field(x, dp_sx_col(x, mname), "start"), dp_sx_col(x, ename),
      dp_sx_fn2(x, "-", dp_sx_col(x, ename), interval_lit(x, 1, w->span))};
  for (int i = 0; i < 3; i++) {
    names[nin + i] = dp_sx_colname(x, relno, nin + i);
    e4[k++] = dp_sx_alias(x, dp_sx_as_type(x, bounds[i], p->schema.cols[nin + i].type, w->span), names[nin + i]);
  }
  k = carry_hidden(x, in, e4, k);
  *out = *in;
  out->rel = dp_sx_project(x, r, k, e4);
  out->ncols = n;
  out->names = names;
  end_window(out); /* plain columns: the GROUP BY takes them as they are */
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

static int window(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out, bool direct) {
  const dp_window_spec *w = &p->u.window;
  int nin = in->ncols, n = p->schema.ncols; /* n == nin + 3 */
  const char *tcol = w->time_col >= 0 && w->time_col < nin ? in->names[w->time_col] : NULL;
  if (!tcol) return dp_sx_refuse(x, w->span, "internal: the window's time column is not available");
  if (w->kind == DP_WIN_CUMULATE) {
    /* Spark's window() and session_window() make tumbling, sliding and
       session windows only; on a stream the windows below cannot be closed
       by the watermark (it needs window() itself in the GROUP BY), nor the
       steps added up (no OVER on streams) */
    if (x->q && x->q->streaming && !(p->props.analyzed && p->props.bounded))
      return dp_sx_refuse(x, w->span, "Spark has no CUMULATE windows on streams; aggregate per TUMBLE window of "
                                      "the step and add the steps up in the consumer, use HOP windows (slide = "
                                      "step, size = the max size) if overlapping windows will do, or run on the "
                                      "embedded engine");
    return cumulate(x, p, in, tcol, out);
  }
  int relno = dp_sx_relno(x);
  const char **names = dp_sx_alloc(x, (size_t)n * sizeof *names);
  unsigned char *role = dp_sx_alloc(x, (size_t)n);
  const char *wname = dp_sx_colname(x, relno, n);
  if (!names || !role || !wname) return dp_sx_fail(x);
  memcpy(names, in->names, (size_t)nin * sizeof *names);
  role[nin] = DP_SW_START;
  role[nin + 1] = DP_SW_END;
  role[nin + 2] = DP_SW_TIME;
  Spark__Connect__Expression **e = dp_sx_expr_list(x, nin + in->nhidden + 4);
  if (!e) return dp_sx_fail(x);
  *out = *in;
  out->ncols = n;
  out->names = names;
  out->wrole = role;
  if (w->kind == DP_WIN_SESSION) {
    /* session_window() may only stand in a GROUP BY: carry the time (and a
       dynamic gap) to the aggregation as hidden columns */
    const char *tname = wname, *gname = dp_sx_colname(x, relno, n + 1);
    int k = pass_columns(x, in, e, 0);
    k = carry_hidden(x, in, e, k);
    e[k++] = dp_sx_alias(x, dp_sx_col(x, tcol), tname);
    Spark__Connect__Expression *gap;
    int nh = 1;
    if (w->gap_expr) {
      dp_sscope s = scope_of(x, in);
      e[k++] = dp_sx_alias(x, dp_sx_expr(x, &s, w->gap_expr), gname);
      gap = dp_sx_col(x, gname);
      nh = 2;
    } else {
      gap = dp_sx_lit_string(x, dp_sx_interval_text(x, w->gap));
    }
    out->rel = dp_sx_wrap_refs(x, dp_sx_project(x, in->rel, k, e));
    out->wgroup = dp_sx_fn2(x, "session_window", dp_sx_col(x, tname), gap);
    names[nin] = names[nin + 1] = names[nin + 2] = NULL;
    const char **hidden = dp_sx_alloc(x, (size_t)(in->nhidden + 2) * sizeof *hidden);
    if (!hidden || !out->rel || !out->wgroup) return dp_sx_fail(x);
    if (in->nhidden) memcpy(hidden, in->hidden, (size_t)in->nhidden * sizeof *hidden);
    /* the time column last: a streaming session aggregation's extra key reads it */
    if (nh == 2) hidden[in->nhidden] = gname;
    hidden[in->nhidden + nh - 1] = tname;
    out->hidden = hidden;
    out->nhidden = in->nhidden + nh;
    return DIPPER_OK;
  }
  int64_t slide = w->kind == DP_WIN_TUMBLE ? w->size : w->slide;
  int64_t start = slide > 0 ? ((w->offset % slide) + slide) % slide : 0;
  Spark__Connect__Expression *args[4] = {
      dp_sx_col(x, tcol), dp_sx_lit_string(x, dp_sx_interval_text(x, w->size)),
      dp_sx_lit_string(x, dp_sx_interval_text(x, slide)), dp_sx_lit_string(x, dp_sx_interval_text(x, start))};
  if (direct) {
    /* TUMBLE / HOP whose bounds only the GROUP BY above reads (grouped_window):
       no relation of its own; the aggregation groups by window(ts, ..)
       itself, as a hand-written Spark job does, and Spark plans the window's
       Expand right under the partial aggregation.  The bounds stay unnamed
       (nothing reads them) and the time column rides along as a hidden
       column through the projections on the way. */
    names[nin] = names[nin + 1] = names[nin + 2] = NULL;
    out->wgroup = dp_sx_fn(x, "window", 4, args);
    out->hidden = append_name(x, in->hidden, in->nhidden, tcol);
    out->nhidden = in->nhidden + 1;
    return out->wgroup && out->hidden ? DIPPER_OK : dp_sx_fail(x);
  }
  /* TUMBLE / HOP read elsewhere too (a filter, an expression, a join, a
     Top-N): window(ts, size, slide, start) as a struct column, then its
     bounds; the struct stays as a hidden column for a GROUP BY */
  int k = pass_columns(x, in, e, 0);
  k = carry_hidden(x, in, e, k);
  e[k++] = dp_sx_alias(x, dp_sx_fn(x, "window", 4, args), wname);
  Spark__Connect__Relation *r1 = dp_sx_project(x, in->rel, k, e);
  Spark__Connect__Expression **e2 = dp_sx_expr_list(x, nin + in->nhidden + 4);
  if (!r1 || !e2) return dp_sx_fail(x);
  k = pass_columns(x, in, e2, 0);
  for (int i = 0; i < 3; i++) {
    names[nin + i] = dp_sx_colname(x, relno, nin + i);
    e2[k++] = dp_sx_alias(x, window_part(x, wname, role[nin + i]), names[nin + i]);
  }
  k = carry_hidden(x, in, e2, k);
  e2[k++] = dp_sx_col(x, wname);
  out->rel = dp_sx_project(x, r1, k, e2);
  out->wgroup = dp_sx_col(x, wname);
  out->hidden = append_name(x, in->hidden, in->nhidden, wname);
  out->nhidden = in->nhidden + 1;
  return out->rel && out->hidden && out->wgroup ? DIPPER_OK : dp_sx_fail(x);
}

/* ---- AGGREGATE ---- */

/* Does e read one of the columns marked in `is_bound` (ncols of them)? */
static bool reads_bound(const dp_expr *e, const bool *is_bound, int ncols) {
  for (int i = 0; i < ncols; i++)
    if (is_bound[i] && dp_expr_uses_column(e, i)) return true;
  return false;
}

/* The TUMBLE or HOP window under aggregation p (through filters and
** projections) whose bounds nothing but p's GROUP BY reads, and only as bare
** group keys: then p groups by window(ts, ..) itself and the WINDOW node
** makes no relation (window(.., direct)).  NULL otherwise: the window's
** bounds are columns of its own Projects, which Spark keeps between the
** window's Expand and the aggregation. */
static const dp_plan *grouped_window(dp_sx *x, const dp_plan *p) {
  const dp_plan *w = p->u.aggregate.window;
  if (!w || w->kind != DP_P_WINDOW || (w->u.window.kind != DP_WIN_TUMBLE && w->u.window.kind != DP_WIN_HOP))
    return NULL;
  /* the nodes from p's input down to the window, at most 64 */
  const dp_plan *chain[64];
  int n = 0;
  for (const dp_plan *c = p->inputs[0]; c != w; c = c->inputs[0]) {
    if (n == 64 || (c->kind != DP_P_PROJECT && c->kind != DP_P_FILTER)) return NULL;
    chain[n++] = c;
  }
  /* which columns are the window's bounds, from the window up */
  int ncols = w->schema.ncols;
  bool *is_bound = dp_sx_alloc(x, (size_t)(ncols ? ncols : 1));
  if (!is_bound || ncols < 3) return NULL;
  for (int i = ncols - 3; i < ncols; i++) is_bound[i] = true;
  while (n-- > 0) {
    const dp_plan *c = chain[n];
    if (c->kind == DP_P_FILTER) {
      if (reads_bound(c->u.filter.cond, is_bound, ncols)) return NULL;
      continue;
    }
    bool *next = dp_sx_alloc(x, (size_t)(c->u.project.n ? c->u.project.n : 1));
    if (!next) return NULL;
    for (int i = 0; i < c->u.project.n; i++) {
      const dp_expr *e = c->u.project.exprs[i];
      int col = dp_expr_as_column(e);
      if (col >= 0 && col < ncols && is_bound[col])
        next[i] = true;
      else if (reads_bound(e, is_bound, ncols))
        return NULL;
    }
    is_bound = next;
    ncols = c->u.project.n;
  }
  bool grouped = false;
  for (int i = 0; i < p->u.aggregate.ngroup; i++) {
    const dp_expr *g = p->u.aggregate.group[i];
    int col = dp_expr_as_column(g);
    if (col >= 0 && col < ncols && is_bound[col])
      grouped = true;
    else if (reads_bound(g, is_bound, ncols))
      return NULL;
  }
  for (int j = 0; j < p->u.aggregate.naggs; j++) {
    const dp_agg_call *a = &p->u.aggregate.aggs[j];
    if (a->filter && reads_bound(a->filter, is_bound, ncols)) return NULL;
    for (int k = 0; k < a->nargs; k++)
      if (reads_bound(a->args[k], is_bound, ncols)) return NULL;
  }
  return grouped ? w : NULL;
}

static int aggregate(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  int ng = p->u.aggregate.ngroup, na = p->u.aggregate.naggs, n = ng + na;
  int relno = dp_sx_relno(x);
  const char **names = dp_sx_colnames(x, relno, n);
  const char *wout = dp_sx_colname(x, relno, n);
  Spark__Connect__Expression **groups = dp_sx_expr_list(x, ng + 1), **aggs = dp_sx_expr_list(x, na);
  int *wrole = dp_sx_alloc(x, (size_t)(ng ? ng : 1) * sizeof *wrole);
  if (!names || !wout || !groups || !aggs || !wrole) return dp_sx_fail(x);
  dp_sscope s = scope_of(x, in);
  bool ok = true, by_window = false;
  int kg = 0;
  for (int i = 0; i < ng; i++) {
    const dp_expr *g = p->u.aggregate.group[i];
    int c = g->kind == DP_E_COLUMN && g->u.column.outer == 0 ? g->u.column.index : -1;
    if (c >= 0 && in->wgroup && in->wrole && in->wrole[c] != DP_SW_NONE) {
      wrole[i] = in->wrole[c];
      if (!by_window) ok &= (groups[kg++] = dp_sx_alias(x, in->wgroup, wout)) != NULL;
      by_window = true;
      continue;
    }
    ok &= (groups[kg++] = dp_sx_alias(x, dp_sx_expr(x, &s, g), names[i])) != NULL;
  }
  for (int j = 0; j < na; j++) {
    const dp_agg_call *a = &p->u.aggregate.aggs[j];
    Spark__Connect__Expression *v = dp_sx_agg(x, &s, a->fn, a->nargs, a->args, a->distinct, a->filter, a->span);
    ok &= (aggs[j] = dp_sx_alias(x, dp_sx_as_type(x, v, a->type, a->span), names[ng + j])) != NULL;
  }
  if (!ok) return dp_sx_fail(x);
  if (by_window && kg == 1 && x->q && x->q->streaming && p->u.aggregate.window &&
      p->u.aggregate.window->u.window.kind == DP_WIN_SESSION)
    /* a streaming session window needs another grouping key on Spark
       ("global aggregation with session window"), one the optimizer does
       not fold away: whether the event time is set, which is true for
       every row a session window takes (it drops NULL times) */
    groups[kg++] = dp_sx_alias(x, dp_sx_fn1(x, "isnotnull", dp_sx_col(x, in->hidden[in->nhidden - 1])),
                               dp_sx_colname(x, relno, n + 1));
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_AGGREGATE);
  Spark__Connect__Aggregate *m;
  if (!r || !DP_SX_NEW(x, m, spark__connect__aggregate__init)) return dp_sx_fail(x);
  m->input = in->rel;
  m->group_type = SPARK__CONNECT__AGGREGATE__GROUP_TYPE__GROUP_TYPE_GROUPBY;
  m->n_grouping_expressions = (size_t)kg;
  m->grouping_expressions = groups;
  m->n_aggregate_expressions = (size_t)na;
  m->aggregate_expressions = aggs;
  r->aggregate = m;
  r = dp_sx_wrap_refs(x, r);
  memset(out, 0, sizeof *out);
  out->ncols = n;
  out->names = names;
  if (!by_window) {
    out->rel = r;
    return r ? DIPPER_OK : dp_sx_fail(x);
  }
  /* The window's bounds out of the grouped window struct, in the plan's order */
  Spark__Connect__Expression **e = dp_sx_expr_list(x, n);
  if (!e) return dp_sx_fail(x);
  for (int i = 0; i < n; i++) {
    if (i < ng && wrole[i] != DP_SW_NONE) {
      Spark__Connect__Expression *v = window_part(x, wout, wrole[i]);
      /* A streaming window_time stays what window_time(window) gives: an
         attribute with Spark's event-time marker, which an aggregation
         above (a chained window) needs to find its watermark.  A cast
         would drop the marker; the root casts it to dipper's type. */
      if (!(wrole[i] == DP_SW_TIME && x->q && x->q->streaming))
        v = dp_sx_as_type(x, v, p->schema.cols[i].type, p->span);
      e[i] = dp_sx_alias(x, v, names[i]);
    } else {
      e[i] = dp_sx_col(x, names[i]);
    }
  }
  out->rel = dp_sx_project(x, r, n, e);
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

/* ---- JOIN ---- */

/* The names a join's condition sees (the left's, then the right's) and the
** condition over them (NULL when there is none). */
static int join_cond(dp_sx *x, const dp_srel *l, const dp_srel *rr, const dp_expr *c,
                     const char ***names_out, Spark__Connect__Expression **cond) {
  int nl = l->ncols, nr = rr->ncols;
  const char **names = dp_sx_alloc(x, (size_t)(nl + nr + 1) * sizeof *names);
  *names_out = names;
  *cond = NULL;
  if (!names) return dp_sx_fail(x);
  if (nl) memcpy(names, l->names, (size_t)nl * sizeof *names);
  if (nr) memcpy(names + nl, rr->names, (size_t)nr * sizeof *names);
  if (!c) return DIPPER_OK;
  dp_sscope s = {nl + nr, names, x->outer};
  return (*cond = dp_sx_expr(x, &s, c)) ? DIPPER_OK : dp_sx_fail(x);
}

static int join(dp_sx *x, const dp_plan *p, dp_srel *l, dp_srel *rr, dp_srel *out) {
  if (p->u.join.as_of)
    return dp_sx_refuse(x, p->span, "Spark has no temporal join (FOR SYSTEM_TIME AS OF); join on the key and "
                                    "keep the latest version with a window function, or run on the embedded engine");
  static const Spark__Connect__Join__JoinType types[] = {
      [DP_J_INNER] = SPARK__CONNECT__JOIN__JOIN_TYPE__JOIN_TYPE_INNER,
      [DP_J_LEFT] = SPARK__CONNECT__JOIN__JOIN_TYPE__JOIN_TYPE_LEFT_OUTER,
      [DP_J_RIGHT] = SPARK__CONNECT__JOIN__JOIN_TYPE__JOIN_TYPE_RIGHT_OUTER,
      [DP_J_FULL] = SPARK__CONNECT__JOIN__JOIN_TYPE__JOIN_TYPE_FULL_OUTER,
      [DP_J_SEMI] = SPARK__CONNECT__JOIN__JOIN_TYPE__JOIN_TYPE_LEFT_SEMI,
      [DP_J_ANTI] = SPARK__CONNECT__JOIN__JOIN_TYPE__JOIN_TYPE_LEFT_ANTI,
      [DP_J_CROSS] = SPARK__CONNECT__JOIN__JOIN_TYPE__JOIN_TYPE_CROSS,
  };
  const char **names;
  Spark__Connect__Expression *cond;
  if (join_cond(x, l, rr, p->u.join.cond, &names, &cond) != DIPPER_OK) return dp_sx_fail(x);
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_JOIN);
  Spark__Connect__Join *m;
  if (!r || !DP_SX_NEW(x, m, spark__connect__join__init)) return dp_sx_fail(x);
  m->left = l->rel;
  m->right = rr->rel;
  m->join_condition = cond;
  m->join_type = types[p->u.join.kind];
  /* Spark's CROSS join takes a condition too; an INNER one without is a cross join */
  r->join = m;
  memset(out, 0, sizeof *out);
  out->rel = dp_sx_wrap_refs(x, r);
  out->ncols = p->schema.ncols;
  out->names = names;
  /* hidden columns of the sides stay in Spark's output (by name, harmless);
     list them so that positional operations drop them */
  int nh = l->nhidden + (p->u.join.kind == DP_J_SEMI || p->u.join.kind == DP_J_ANTI ? 0 : rr->nhidden);
  if (nh) {
    const char **h = dp_sx_alloc(x, (size_t)nh * sizeof *h);
    if (!h) return dp_sx_fail(x);
    if (l->nhidden) memcpy(h, l->hidden, (size_t)l->nhidden * sizeof *h);
    if (nh > l->nhidden) memcpy(h + l->nhidden, rr->hidden, (size_t)rr->nhidden * sizeof *h);
    out->hidden = h;
    out->nhidden = nh;
  }
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

/* ---- ASOF_JOIN ----
** Spark Connect's AsOfJoin (Dataset.joinAsOf): the left and right times, the
** key equalities as the join expression, `>=` backward with exact matches,
** `>` backward without, `<=` / `<` forward; the tolerance a literal of the
** times' type (a day-time interval for timestamps).  Spark picks, among right
** rows at the same distance, any one (MIN_BY): docs/spark.md says so.  On a
** stream Spark refuses it; stream_rules.c says so at compile time. */
static int asof_join(dp_sx *x, const dp_plan *p, dp_srel *l, dp_srel *rr, dp_srel *out) {
  if (strip(x, l, p->span) != DIPPER_OK || strip(x, rr, p->span) != DIPPER_OK) return dp_sx_fail(x);
  const char **names;
  Spark__Connect__Expression *cond;
  if (join_cond(x, l, rr, p->u.asof.cond, &names, &cond) != DIPPER_OK) return dp_sx_fail(x);
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_AS_OF_JOIN);
  Spark__Connect__AsOfJoin *m;
  if (!r || !DP_SX_NEW(x, m, spark__connect__as_of_join__init)) return dp_sx_fail(x);
  m->left = l->rel;
  m->right = rr->rel;
  m->left_as_of = dp_sx_col(x, l->names[p->u.asof.left_time]);
  m->right_as_of = dp_sx_col(x, rr->names[p->u.asof.right_time]);
  m->join_expr = cond;
  m->join_type = dp_sx_mut(p->u.asof.kind == DP_J_LEFT ? "left" : "inner");
  dp_asof_op op = p->u.asof.op;
  m->allow_exact_matches = op == DP_ASOF_GE || op == DP_ASOF_LE;
  m->direction = dp_sx_mut(op == DP_ASOF_GE || op == DP_ASOF_GT ? "backward" : "forward");
  if (p->u.asof.tolerance >= 0) {
    /* Spark bounds the distance strictly (< tolerance) when exact matches are
       not allowed; dipper's TOLERANCE is inclusive with every operator.  Times
       are whole units (µs, or an integer), so one unit more is the same bound. */
    int64_t tol = p->u.asof.tolerance + (m->allow_exact_matches || p->u.asof.tolerance == INT64_MAX ? 0 : 1);
    const dp_type *tt = p->inputs[0]->schema.cols[p->u.asof.left_time].type;
    m->tolerance = dp_type_is_timestamp(tt) ? interval_lit(x, tol, p->span) : dp_sx_lit_long(x, tol);
    if (!m->tolerance) return dp_sx_fail(x);
  }
  if (!m->left_as_of || !m->right_as_of) return dp_sx_fail(x);
  r->as_of_join = m;
  memset(out, 0, sizeof *out);
  out->rel = dp_sx_wrap_refs(x, r);
  out->ncols = p->schema.ncols;
  out->names = names;
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

/* ---- UNION, SETOP ---- */

static Spark__Connect__Relation *setop(dp_sx *x, Spark__Connect__Relation *l, Spark__Connect__Relation *r,
                                       Spark__Connect__SetOperation__SetOpType type, bool all) {
  Spark__Connect__Relation *rel = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_SET_OP);
  Spark__Connect__SetOperation *m;
  if (!rel || !l || !r || !DP_SX_NEW(x, m, spark__connect__set_operation__init)) return NULL;
  m->left_input = l;
  m->right_input = r;
  m->set_op_type = type;
  m->_is_all_case = SPARK__CONNECT__SET_OPERATION___IS_ALL_IS_ALL;
  m->is_all = all;
  m->_by_name_case = SPARK__CONNECT__SET_OPERATION___BY_NAME_BY_NAME;
  m->by_name = false; /* by position, as SQL */
  rel->set_op = m;
  return rel;
}

/* ---- SORT, LIMIT ---- */

static int sort(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  int n = p->u.sort.nkeys;
  Spark__Connect__Expression__SortOrder **o = dp_sx_alloc(x, (size_t)(n ? n : 1) * sizeof *o);
  if (!o) return dp_sx_fail(x);
  dp_sscope s = scope_of(x, in);
  bool ok = true;
  for (int i = 0; i < n; i++) {
    const dp_sort_key *k = &p->u.sort.keys[i];
    ok &= (o[i] = dp_sx_sort_order(x, dp_sx_expr(x, &s, k->expr), k->desc, k->nulls_first)) != NULL;
  }
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_SORT);
  Spark__Connect__Sort *m;
  if (!ok || !r || !DP_SX_NEW(x, m, spark__connect__sort__init)) return dp_sx_fail(x);
  m->input = in->rel;
  m->n_order = (size_t)n;
  m->order = o;
  m->_is_global_case = SPARK__CONNECT__SORT___IS_GLOBAL_IS_GLOBAL;
  m->is_global = true;
  r->sort = m;
  *out = *in;
  end_window(out);
  out->rel = dp_sx_wrap_refs(x, r);
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

static int limit(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  int64_t lim = p->u.limit.limit, off = p->u.limit.offset;
  if (lim > INT32_MAX || off > INT32_MAX)
    return dp_sx_refuse(x, p->span, "Spark's LIMIT and OFFSET take at most %d rows", INT32_MAX);
  *out = *in;
  end_window(out);
  if (off > 0) {
    Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_OFFSET);
    Spark__Connect__Offset *m;
    if (!r || !DP_SX_NEW(x, m, spark__connect__offset__init)) return dp_sx_fail(x);
    m->input = out->rel;
    m->offset = (int32_t)off;
    r->offset = m;
    out->rel = r;
  }
  if (lim >= 0) {
    Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_LIMIT);
    Spark__Connect__Limit *m;
    if (!r || !DP_SX_NEW(x, m, spark__connect__limit__init)) return dp_sx_fail(x);
    m->input = out->rel;
    m->limit = (int32_t)lim;
    r->limit = m;
    out->rel = r;
  }
  return DIPPER_OK;
}

/* ---- DISTINCT, DEDUPLICATE, TOPN, OVER ---- */

static Spark__Connect__Relation *deduplicate(dp_sx *x, Spark__Connect__Relation *in, int nkeys,
                                             const char **keys, bool within_watermark) {
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_DEDUPLICATE);
  Spark__Connect__Deduplicate *m;
  if (!r || !DP_SX_NEW(x, m, spark__connect__deduplicate__init)) return NULL;
  m->input = in;
  if (nkeys < 0) {
    m->_all_columns_as_keys_case = SPARK__CONNECT__DEDUPLICATE___ALL_COLUMNS_AS_KEYS_ALL_COLUMNS_AS_KEYS;
    m->all_columns_as_keys = true;
  } else {
    m->n_column_names = (size_t)nkeys;
    if (!(m->column_names = dp_sx_alloc(x, (size_t)(nkeys ? nkeys : 1) * sizeof(char *)))) return NULL;
    for (int i = 0; i < nkeys; i++) m->column_names[i] = dp_sx_mut(keys[i]);
  }
  if (within_watermark) {
    m->_within_watermark_case = SPARK__CONNECT__DEDUPLICATE___WITHIN_WATERMARK_WITHIN_WATERMARK;
    m->within_watermark = true;
  }
  r->deduplicate = m;
  return r;
}

/* A window expression: fn OVER (PARTITION BY parts ORDER BY order [frame]). */
Spark__Connect__Expression *dp_sx_over(dp_sx *x, Spark__Connect__Expression *fn, int np,
                                        Spark__Connect__Expression **parts, int no,
                                        Spark__Connect__Expression__SortOrder **order,
                                        Spark__Connect__Expression__Window__WindowFrame *frame) {
  if (!fn) return NULL;
  for (int i = 0; i < np; i++)
    if (!parts[i]) return NULL;
  for (int i = 0; i < no; i++)
    if (!order[i]) return NULL;
  Spark__Connect__Expression *e;
  Spark__Connect__Expression__Window *w;
  if (!DP_SX_NEW(x, e, spark__connect__expression__init) || !DP_SX_NEW(x, w, spark__connect__expression__window__init))
    return NULL;
  e->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_WINDOW;
  w->window_function = fn;
  w->n_partition_spec = (size_t)np;
  w->partition_spec = parts;
  w->n_order_spec = (size_t)no;
  w->order_spec = order;
  w->frame_spec = frame;
  e->window = w;
  return e;
}

/* ROW_NUMBER/RANK/DENSE_RANK() OVER (PARTITION BY keys ORDER BY ..) added as
** column rname; the rows whose rank passes `cond` kept. */
static int rank_filter(dp_sx *x, const dp_srel *in, const char *fn, int np, const int *parts, int no,
                       const dp_sort_key *order, const char *rname, const dp_type *rtype,
                       Spark__Connect__Expression *(*cond)(dp_sx *, const char *, int64_t), int64_t n,
                       Spark__Connect__Relation **out) {
  Spark__Connect__Expression **pe = dp_sx_expr_list(x, np);
  Spark__Connect__Expression__SortOrder **oe = dp_sx_alloc(x, (size_t)(no ? no : 1) * sizeof *oe);
  Spark__Connect__Expression **e = dp_sx_expr_list(x, in->ncols + in->nhidden + 1);
  if (!pe || !oe || !e) return dp_sx_fail(x);
  dp_sscope s = scope_of(x, in);
  for (int i = 0; i < np; i++) pe[i] = dp_sx_col(x, in->names[parts[i]]);
  for (int i = 0; i < no; i++)
    oe[i] = dp_sx_sort_order(x, dp_sx_expr(x, &s, order[i].expr), order[i].desc, order[i].nulls_first);
  int k = pass_columns(x, in, e, 0);
  k = carry_hidden(x, in, e, k);
  Spark__Connect__Expression *w = dp_sx_over(x, dp_sx_fn(x, fn, 0, NULL), np, pe, no, oe, NULL);
  e[k++] = dp_sx_alias(x, dp_sx_as_type(x, w, rtype, (dp_span){0, 0, 0, 0}), rname);
  Spark__Connect__Relation *r = dp_sx_wrap_refs(x, dp_sx_project(x, in->rel, k, e));
  *out = dp_sx_filter(x, r, cond(x, rname, n));
  return *out ? DIPPER_OK : dp_sx_fail(x);
}

static Spark__Connect__Expression *rank_is_one(dp_sx *x, const char *rname, int64_t n) {
  (void)n;
  return dp_sx_fn2(x, "==", dp_sx_col(x, rname), dp_sx_lit_int(x, 1));
}

static Spark__Connect__Expression *rank_at_most(dp_sx *x, const char *rname, int64_t n) {
  return dp_sx_fn2(x, "<=", dp_sx_col(x, rname), dp_sx_lit_long(x, n));
}

static int dedup(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  int nk = p->u.dedup.nkeys;
  *out = *in;
  end_window(out);
  /* a bounded input in a streaming query is read whole: the exact first row
     by time (below), as in batch mode */
  bool streaming = x->q && x->q->streaming && !(p->props.analyzed && p->props.bounded);
  if (streaming || p->u.dedup.order_col < 0) {
    if (streaming && p->u.dedup.keep_last)
      return dp_sx_refuse(x, p->span, "a streaming deduplication on Spark keeps the first row of a key, not the "
                                      "latest; order by the time column ascending (keep the first row)");
    const char **keys = dp_sx_alloc(x, (size_t)(nk ? nk : 1) * sizeof *keys);
    if (!keys) return dp_sx_fail(x);
    for (int i = 0; i < nk; i++) keys[i] = in->names[p->u.dedup.keys[i]];
    out->rel = deduplicate(x, in->rel, nk, keys, dp_spark_dedup_within_watermark(p));
    return out->rel ? DIPPER_OK : dp_sx_fail(x);
  }
  /* Batch: exactly the first (or last) row by time per key: ROW_NUMBER = 1 */
  dp_sort_key key;
  dp_expr col;
  memset(&col, 0, sizeof col);
  col.kind = DP_E_COLUMN;
  col.type = p->schema.cols[p->u.dedup.order_col].type;
  col.u.column.index = p->u.dedup.order_col;
  key.expr = &col;
  key.desc = p->u.dedup.keep_last;
  key.nulls_first = !key.desc;
  const char *rname = dp_sx_colname(x, dp_sx_relno(x), 0);
  if (!rname) return dp_sx_fail(x);
  int rc = rank_filter(x, in, "row_number", nk, p->u.dedup.keys, 1, &key, rname, NULL, rank_is_one, 1, &out->rel);
  if (rc != DIPPER_OK) return rc;
  out->hidden = append_name(x, in->hidden, in->nhidden, rname);
  out->nhidden = in->nhidden + 1;
  return out->hidden ? DIPPER_OK : dp_sx_fail(x);
}

static int topn(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  static const char *fns[] = {[DP_RANK_ROW_NUMBER] = "row_number", [DP_RANK_RANK] = "rank",
                              [DP_RANK_DENSE_RANK] = "dense_rank"};
  *out = *in;
  end_window(out);
  int relno = dp_sx_relno(x);
  const char *rname = dp_sx_colname(x, relno, in->ncols);
  if (!rname) return dp_sx_fail(x);
  const dp_type *rtype = p->u.topn.emit_rank ? p->schema.cols[p->schema.ncols - 1].type : NULL;
  int rc = rank_filter(x, in, fns[p->u.topn.rank], p->u.topn.npartition, p->u.topn.partition, p->u.topn.nkeys,
                       p->u.topn.order, rname, rtype, rank_at_most, p->u.topn.n, &out->rel);
  if (rc != DIPPER_OK) return rc;
  if (p->u.topn.emit_rank) {
    out->names = append_name(x, in->names, in->ncols, rname);
    out->ncols = in->ncols + 1;
    return out->names ? DIPPER_OK : dp_sx_fail(x);
  }
  out->hidden = append_name(x, in->hidden, in->nhidden, rname);
  out->nhidden = in->nhidden + 1;
  return out->hidden ? DIPPER_OK : dp_sx_fail(x);
}

static Spark__Connect__Expression__Window__WindowFrame__FrameBoundary *
bound(dp_sx *x, int64_t v, bool lower, bool rows, const dp_type *okey, dp_span sp) {
  Spark__Connect__Expression__Window__WindowFrame__FrameBoundary *b;
  if (!DP_SX_NEW(x, b, spark__connect__expression__window__window_frame__frame_boundary__init)) return NULL;
  if (v < 0) {
    b->boundary_case = SPARK__CONNECT__EXPRESSION__WINDOW__WINDOW_FRAME__FRAME_BOUNDARY__BOUNDARY_UNBOUNDED;
    b->unbounded = true;
  } else if (v == 0) {
    b->boundary_case = SPARK__CONNECT__EXPRESSION__WINDOW__WINDOW_FRAME__FRAME_BOUNDARY__BOUNDARY_CURRENT_ROW;
    b->current_row = true;
  } else {
    /* Spark's offsets are signed: preceding is negative */
    int64_t off = lower ? -v : v;
    Spark__Connect__Expression *e;
    if (rows) {
      /* Spark wants an INT offset for ROWS */
      e = dp_sx_lit_int(x, (int32_t)(off < INT32_MIN ? INT32_MIN : off > INT32_MAX ? INT32_MAX : off));
    } else if (okey && (dp_type_is_integer(okey) || okey->kind == DP_T_FLOAT || okey->kind == DP_T_DOUBLE ||
                        okey->kind == DP_T_DECIMAL)) {
      /* RANGE: an offset of the ORDER BY key's own type, as Spark checks */
      dp_value nv;
      memset(&nv, 0, sizeof nv);
      nv.type = okey;
      if (dp_type_is_integer(okey)) {
        nv.u.i = off;
      } else if (okey->kind == DP_T_DECIMAL) {
        dp_i128 scaled = off;
        for (int k = 0; k < okey->scale; k++) scaled *= 10;
        nv.u.dec = scaled;
      } else {
        nv.u.d = (double)off;
      }
      e = dp_sx_literal(x, &nv, sp);
    } else if (!okey || !dp_type_is_temporal(okey)) {
      e = dp_sx_lit_long(x, off);
    } else {
      dp_value iv;
      memset(&iv, 0, sizeof iv);
      iv.type = dp_type_of(DP_T_INTERVAL_DT);
      iv.u.i = off;
      e = dp_sx_literal(x, &iv, sp);
    }
    if (!e) return NULL;
    b->boundary_case = SPARK__CONNECT__EXPRESSION__WINDOW__WINDOW_FRAME__FRAME_BOUNDARY__BOUNDARY_VALUE;
    b->value = e;
  }
  return b;
}

static int over_node(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  int np = p->u.over.npartition, no = p->u.over.norder, nc = p->u.over.ncalls;
  int relno = dp_sx_relno(x);
  dp_sscope s = scope_of(x, in);
  const char **names = dp_sx_alloc(x, (size_t)(in->ncols + nc) * sizeof *names);
  Spark__Connect__Expression **e = dp_sx_expr_list(x, in->ncols + in->nhidden + nc);
  if (!names || !e) return dp_sx_fail(x);
  memcpy(names, in->names, (size_t)in->ncols * sizeof *names);
  int k = pass_columns(x, in, e, 0);
  bool ok = true;
  for (int c = 0; c < nc; c++) {
    const dp_over_call *call = &p->u.over.calls[c];
    Spark__Connect__Expression **pe = dp_sx_expr_list(x, np);
    Spark__Connect__Expression__SortOrder **oe = dp_sx_alloc(x, (size_t)(no ? no : 1) * sizeof *oe);
    if (!pe || !oe) return dp_sx_fail(x);
    for (int i = 0; i < np; i++) pe[i] = dp_sx_expr(x, &s, p->u.over.partition[i]);
    for (int i = 0; i < no; i++) {
      const dp_sort_key *sk = &p->u.over.order[i];
      oe[i] = dp_sx_sort_order(x, dp_sx_expr(x, &s, sk->expr), sk->desc, sk->nulls_first);
    }
    if (call->distinct) {
      dp_sx_refuse(x, call->span, "Spark has no DISTINCT in a window aggregate; aggregate the distinct values "
                                  "in a subquery and join");
      ok = false;
      continue;
    }
    Spark__Connect__Expression__Window__WindowFrame *frame = NULL;
    if (p->u.over.has_frame && call->fn->kind == DP_FN_AGGREGATE) {
      const dp_type *okey = no > 0 ? p->u.over.order[0].expr->type : NULL;
      if (!DP_SX_NEW(x, frame, spark__connect__expression__window__window_frame__init)) return dp_sx_fail(x);
      frame->frame_type = p->u.over.rows ? SPARK__CONNECT__EXPRESSION__WINDOW__WINDOW_FRAME__FRAME_TYPE__FRAME_TYPE_ROW
                                         : SPARK__CONNECT__EXPRESSION__WINDOW__WINDOW_FRAME__FRAME_TYPE__FRAME_TYPE_RANGE;
      frame->lower = bound(x, p->u.over.lower, true, p->u.over.rows, okey, call->span);
      frame->upper = bound(x, p->u.over.upper, false, p->u.over.rows, okey, call->span);
      if (!frame->lower || !frame->upper) return dp_sx_fail(x);
    }
    Spark__Connect__Expression *fn = dp_sx_agg(x, &s, call->fn, call->nargs, call->args, false, call->filter, call->span);
    names[in->ncols + c] = dp_sx_colname(x, relno, in->ncols + c);
    Spark__Connect__Expression *w = dp_sx_over(x, fn, np, pe, no, oe, frame);
    ok &= (e[k++] = dp_sx_alias(x, dp_sx_as_type(x, w, call->type, call->span), names[in->ncols + c])) != NULL;
  }
  k = carry_hidden(x, in, e, k);
  if (!ok) return dp_sx_fail(x);
  *out = *in;
  end_window(out);
  out->rel = dp_sx_wrap_refs(x, dp_sx_project(x, in->rel, k, e));
  out->ncols = in->ncols + nc;
  out->names = names;
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

/* ---- UNNEST: explode / posexplode, then the element's parts ---- */

static int unnest(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out) {
  const dp_type *t = p->u.unnest.arg->type;
  bool ord = p->u.unnest.with_ordinality, map = t->kind == DP_T_MAP;
  bool rows = !map && t->elem && t->elem->kind == DP_T_ROW;
  int nin = in->ncols, n = p->schema.ncols;
  int relno = dp_sx_relno(x);
  /* generator outputs: [pos,] elem | [pos,] key, value */
  const char *tmp[3];
  int ng = 0;
  if (ord) tmp[ng++] = dp_sx_colname(x, relno, n + 0);
  tmp[ng++] = dp_sx_colname(x, relno, n + 1);
  if (map) tmp[ng++] = dp_sx_colname(x, relno, n + 2);
  dp_sscope s = scope_of(x, in);
  Spark__Connect__Expression *gen = dp_sx_fn1(x, ord ? "posexplode" : "explode", dp_sx_expr(x, &s, p->u.unnest.arg));
  Spark__Connect__Expression *al = dp_sx_alias(x, gen, "g");
  Spark__Connect__Expression **e = dp_sx_expr_list(x, nin + in->nhidden + 1);
  if (!al || !e) return dp_sx_fail(x);
  al->alias->n_name = (size_t)ng;
  if (!(al->alias->name = dp_sx_alloc(x, (size_t)ng * sizeof(char *)))) return dp_sx_fail(x);
  for (int i = 0; i < ng; i++)
    if (!(al->alias->name[i] = dp_sx_mut(tmp[i]))) return dp_sx_fail(x);
  int k = pass_columns(x, in, e, 0);
  k = carry_hidden(x, in, e, k);
  e[k++] = al;
  Spark__Connect__Relation *r1 = dp_sx_wrap_refs(x, dp_sx_project(x, in->rel, k, e));
  const char **names = dp_sx_alloc(x, (size_t)n * sizeof *names);
  Spark__Connect__Expression **e2 = dp_sx_expr_list(x, n + in->nhidden);
  if (!r1 || !names || !e2) return dp_sx_fail(x);
  memcpy(names, in->names, (size_t)nin * sizeof *names);
  k = pass_columns(x, in, e2, 0);
  int col = nin, last = ord ? n - 1 : n;
  const char *elem = tmp[ord ? 1 : 0];
  if (rows) {
    for (int f = 0; f < t->elem->nfields && col < last; f++, col++) {
      names[col] = dp_sx_colname(x, relno, col);
      e2[k++] = dp_sx_alias(x, dp_sx_field(x, dp_sx_col(x, elem), t->elem->fields[f].name), names[col]);
    }
  } else {
    for (int g = ord ? 1 : 0; g < ng && col < last; g++, col++) {
      names[col] = dp_sx_colname(x, relno, col);
      e2[k++] = dp_sx_alias(x, dp_sx_col(x, tmp[g]), names[col]);
    }
  }
  if (ord) {
    names[n - 1] = dp_sx_colname(x, relno, n - 1);
    Spark__Connect__Expression *o = dp_sx_fn2(x, "+", dp_sx_col(x, tmp[0]), dp_sx_lit_int(x, 1));
    e2[k++] = dp_sx_alias(x, dp_sx_as_type(x, o, p->schema.cols[n - 1].type, p->span), names[n - 1]);
  }
  k = carry_hidden(x, in, e2, k);
  *out = *in;
  end_window(out);
  out->rel = dp_sx_project(x, r1, k, e2);
  out->ncols = n;
  out->names = names;
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

/* ---- dispatch ---- */

static int node(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out, const dp_plan *direct);

/* A stand-in for a subtree that was refused: an empty relation with fresh
** names, so that the nodes above can still be checked. */
static int placeholder(dp_sx *x, const dp_plan *p, dp_srel *out) {
  memset(out, 0, sizeof *out);
  out->rel = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_LOCAL_RELATION);
  Spark__Connect__LocalRelation *lr;
  if (!out->rel || !DP_SX_NEW(x, lr, spark__connect__local_relation__init)) return dp_sx_fail(x);
  out->rel->local_relation = lr;
  out->ncols = p->schema.ncols;
  out->names = dp_sx_colnames(x, dp_sx_relno(x), p->schema.ncols);
  return out->names ? DIPPER_OK : dp_sx_fail(x);
}

/* p's subtree; `direct` is the WINDOW node below that an aggregation above
** groups by directly (grouped_window), passed down through the filters and
** projections between them. */
static int plan(dp_sx *x, const dp_plan *p, dp_srel *out, const dp_plan *direct) {
  memset(out, 0, sizeof *out);
  dp_srel in[2];
  memset(in, 0, sizeof in);
  const dp_plan *below = p->kind == DP_P_AGGREGATE                          ? grouped_window(x, p)
                        : p->kind == DP_P_PROJECT || p->kind == DP_P_FILTER ? direct
                                                                            : NULL;
  /* children first; translate all of them even after a refusal, for check */
  int rc = DIPPER_OK;
  if (p->kind != DP_P_UNION) {
    for (int i = 0; i < p->ninputs && i < 2; i++) {
      int r = plan(x, p->inputs[i], &in[i], below);
      if (r == DIPPER_NOMEM) return r;
      if (r != DIPPER_OK) {
        rc = r;
        if (placeholder(x, p->inputs[i], &in[i]) != DIPPER_OK) return dp_sx_fail(x);
      }
    }
  }
  if (rc != DIPPER_OK) {
    /* a child was refused: translate this node over a stand-in anyway, so
       that its own refusals are reported too, and fail */
    dp_srel ignored;
    (void)node(x, p, in, &ignored, direct);
    return rc;
  }
  return node(x, p, in, out, direct);
}

int dp_sx_plan(dp_sx *x, const dp_plan *p, dp_srel *out) { return plan(x, p, out, NULL); }

static int node(dp_sx *x, const dp_plan *p, dp_srel *in, dp_srel *out, const dp_plan *direct) {
  memset(out, 0, sizeof *out);
  switch (p->kind) {
  case DP_P_SCAN: return dp_sx_scan(x, p, out);
  case DP_P_VALUES: return dp_sx_values(x, p, out);
  case DP_P_PROJECT: return project(x, p, &in[0], out);
  case DP_P_FILTER: return filter(x, p, &in[0], out);
  case DP_P_WATERMARK: return watermark(x, p, &in[0], out);
  case DP_P_WINDOW: return window(x, p, &in[0], out, p == direct);
  case DP_P_AGGREGATE: return aggregate(x, p, &in[0], out);
  case DP_P_JOIN: return join(x, p, &in[0], &in[1], out);
  case DP_P_ASOF_JOIN: return asof_join(x, p, &in[0], &in[1], out);
  case DP_P_UNION: {
    dp_srel first, next;
    bool ok = true;
    Spark__Connect__Relation *acc = NULL;
    for (int i = 0; i < p->ninputs; i++) {
      dp_srel *r = i == 0 ? &first : &next;
      int c = dp_sx_plan(x, p->inputs[i], r);
      if (c == DIPPER_NOMEM) return c;
      if (c != DIPPER_OK || strip(x, r, p->span) != DIPPER_OK) {
        ok = false;
        continue;
      }
      acc = i == 0 ? r->rel
                   : setop(x, acc, r->rel, SPARK__CONNECT__SET_OPERATION__SET_OP_TYPE__SET_OP_TYPE_UNION,
                           p->u.union_.all);
    }
    if (!ok || !acc) return dp_sx_fail(x);
    *out = first;
    out->rel = acc;
    return DIPPER_OK;
  }
  case DP_P_SETOP: {
    if (strip(x, &in[0], p->span) != DIPPER_OK || strip(x, &in[1], p->span) != DIPPER_OK) return dp_sx_fail(x);
    *out = in[0];
    out->rel = setop(x, in[0].rel, in[1].rel,
                     p->u.setop.except ? SPARK__CONNECT__SET_OPERATION__SET_OP_TYPE__SET_OP_TYPE_EXCEPT
                                       : SPARK__CONNECT__SET_OPERATION__SET_OP_TYPE__SET_OP_TYPE_INTERSECT,
                     p->u.setop.all);
    return out->rel ? DIPPER_OK : dp_sx_fail(x);
  }
  case DP_P_SORT: return sort(x, p, &in[0], out);
  case DP_P_LIMIT: return limit(x, p, &in[0], out);
  case DP_P_DISTINCT:
    if (strip(x, &in[0], p->span) != DIPPER_OK) return dp_sx_fail(x);
    *out = in[0];
    out->rel = deduplicate(x, in[0].rel, -1, NULL, false);
    return out->rel ? DIPPER_OK : dp_sx_fail(x);
  case DP_P_DEDUPLICATE: return dedup(x, p, &in[0], out);
  case DP_P_TOPN: return topn(x, p, &in[0], out);
  case DP_P_OVER: return over_node(x, p, &in[0], out);
  case DP_P_UNNEST: return unnest(x, p, &in[0], out);
  case DP_P_SINK:
  case DP_P_COUNT_: break;
  }
  return dp_sx_refuse(x, p->span, "internal: a %s node has no Spark relation here", dp_plan_kind_name(p->kind));
}

/* ---- roots ---- */

/* rel with the columns named `names` (user names, in order). */
static int finish(dp_sx *x, dp_srel *r, int n, const dp_field *cols, const int *map, dp_span sp,
                  Spark__Connect__Relation **out) {
  Spark__Connect__Expression **e = dp_sx_expr_list(x, n);
  if (!e) return dp_sx_fail(x);
  bool ok = true;
  for (int i = 0; i < n; i++) {
    int c = map ? map[i] : i;
    Spark__Connect__Expression *v;
    if (c < 0) {
      v = dp_sx_lit_null(x, cols[i].type, sp);
    } else if (c >= r->ncols || !r->names[c]) {
      dp_sx_refuse(x, sp, "the bounds of a SESSION window exist on Spark only as keys of its GROUP BY; "
                          "group by window_start and window_end");
      ok = false;
      continue;
    } else {
      v = dp_sx_col(x, r->names[c]);
      /* an event time made a TIMESTAMP for Spark's watermark (watermark())
         leaves as the TIMESTAMP_NTZ dipper declares */
      if (x->q && x->q->streaming && cols[i].type->kind == DP_T_TIMESTAMP)
        v = dp_sx_cast(x, v, cols[i].type, false, sp);
    }
    ok &= (e[i] = dp_sx_alias(x, v, cols[i].name)) != NULL;
  }
  if (!ok) return dp_sx_fail(x);
  *out = dp_sx_project(x, r->rel, n, e);
  return *out ? DIPPER_OK : dp_sx_fail(x);
}

int dp_spark_relation(dp_spark_ctx *c, const dp_query_plan *q, const dp_plan *root,
                      Spark__Connect__Relation **out) {
  dp_sx x;
  dp_sx_init(&x, c, q);
  *out = NULL;
  if (root->kind == DP_P_SINK) {
    dp_span sp = root->span;
    return dp_sx_refuse(&x, sp, "internal: an INSERT is translated by dp_spark_sink_plan");
  }
  dp_srel r;
  int rc = dp_sx_plan(&x, root, &r);
  if (rc == DIPPER_OK) rc = finish(&x, &r, root->schema.ncols, root->schema.cols, NULL, root->span, out);
  return rc != DIPPER_OK ? rc : x.rc;
}

/* ---- sinks ---- */

static Spark__Connect__Plan *write_command(dp_sx *x, const dp_table_def *t, Spark__Connect__Relation *input,
                                           bool overwrite, dp_span sp) {
  const char *fmt = t->format ? t->format : "json";
  if (strcasecmp(fmt, "json") != 0 && strcasecmp(fmt, "csv") != 0 && strcasecmp(fmt, "parquet") != 0 &&
      strcasecmp(fmt, "orc") != 0 && strcasecmp(fmt, "avro") != 0) {
    dp_sx_refuse(x, t->with_span, "table `%s`: Spark writes files as csv, json, parquet, orc or avro, not '%s'",
                 t->name, fmt);
    return NULL;
  }
  const char *path = dp_sx_table_option(t, "path");
  if (!path) {
    dp_sx_refuse(x, t->with_span, "table `%s` has no 'path'", t->name);
    return NULL;
  }
  if (path[0] != '/' && !strstr(path, "://")) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) {
      dp_sx_refuse(x, sp, "cannot resolve the relative path '%s'", path);
      return NULL;
    }
    path = dp_sx_printf(x, "%s/%s", cwd, path);
  }
  Spark__Connect__WriteOperation *w;
  Spark__Connect__Command *cmd;
  Spark__Connect__Plan *plan;
  if (!path || !DP_SX_NEW(x, w, spark__connect__write_operation__init) || !DP_SX_NEW(x, cmd, spark__connect__command__init) ||
      !DP_SX_NEW(x, plan, spark__connect__plan__init))
    return NULL;
  if (dp_sx_partition_check(x, t) != DIPPER_OK) return NULL;
  if (t->npartition > 0) {
    /* partitionBy, the folders named as the embedded sink names them (translate_partition.c) */
    int n = 0;
    const char **names = dp_sx_alloc(x, (size_t)(t->schema.ncols ? t->schema.ncols : 1) * sizeof *names);
    if (!names) return NULL;
    for (int i = 0; i < t->schema.ncols; i++)
      if (!(t->cols && (t->cols[i].kind == DP_CK_COMPUTED || (t->cols[i].kind == DP_CK_METADATA && t->cols[i].is_virtual))))
        names[n++] = t->schema.cols[i].name;
    input = dp_sx_partition_values(x, t, input, n, names);
    w->partitioning_columns = dp_sx_partition_names(x, t);
    if (!input || !w->partitioning_columns) return NULL;
    w->n_partitioning_columns = (size_t)t->npartition;
  }
  w->input = input;
  w->_source_case = SPARK__CONNECT__WRITE_OPERATION___SOURCE_SOURCE;
  char lower[16];
  snprintf(lower, sizeof lower, "%s", fmt);
  for (char *c = lower; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
  w->source = dp_sx_strdup(x, lower);
  w->save_type_case = SPARK__CONNECT__WRITE_OPERATION__SAVE_TYPE_PATH;
  w->path = dp_sx_strdup(x, path);
  w->mode = overwrite ? SPARK__CONNECT__WRITE_OPERATION__SAVE_MODE__SAVE_MODE_OVERWRITE
                      : SPARK__CONNECT__WRITE_OPERATION__SAVE_MODE__SAVE_MODE_APPEND;
  /* dipper's JSON sink writes every key, NULLs too; its CSV sink a header only when asked */
  dp_sx_opts o;
  o.n = 0;
  if (!strcmp(lower, "json")) dp_sx_opt_add(&o, "ignoreNullFields", "false");
  if (!strcmp(lower, "json") || !strcmp(lower, "csv")) {
    /* dipper's text form of times: "2024-01-01 10:00:00.250" with the
       column's precision of fraction digits (the first timestamp column's),
       and a 'Z' for TIMESTAMP_LTZ in UTC */
    int prec = 3;
    for (int i = 0; i < t->schema.ncols; i++)
      if (dp_type_is_timestamp(t->schema.cols[i].type)) {
        prec = t->schema.cols[i].type->precision > 6 ? 6 : t->schema.cols[i].type->precision;
        break;
      }
    const char *frac = prec ? dp_sx_printf(x, ".%.*s", prec, "SSSSSS") : "";
    dp_sx_opt_add(&o, "timestampNTZFormat", dp_sx_printf(x, "yyyy-MM-dd HH:mm:ss%s", frac));
    dp_sx_opt_add(&o, "timestampFormat", dp_sx_printf(x, "yyyy-MM-dd HH:mm:ss%sXXX", frac));
  }
  if (!strcmp(lower, "csv")) {
    const char *v;
    dp_sx_opt_add(&o, "header", dp_sx_is_true(dp_sx_format_option(t, "csv.header")) ? "true" : "false");
    /* Spark's CSV writer trims fields by default; dipper's keeps them */
    dp_sx_opt_add(&o, "ignoreLeadingWhiteSpace", "false");
    dp_sx_opt_add(&o, "ignoreTrailingWhiteSpace", "false");
    if ((v = dp_sx_format_option(t, "csv.field-delimiter"))) dp_sx_opt_add(&o, "sep", v);
    if ((v = dp_sx_format_option(t, "csv.null-literal"))) dp_sx_opt_add(&o, "nullValue", v);
  }
  if (!strcmp(lower, "avro")) {
    /* Flink's 'avro.codec' (null, deflate, snappy, bzip2, xz, zstandard) is
       Spark's 'compression', whose "no codec" is spelled uncompressed; both
       default to snappy */
    const char *v = dp_sx_format_option(t, "avro.codec");
    if (v) dp_sx_opt_add(&o, "compression", !strcasecmp(v, "null") ? "uncompressed" : v);
  }
  if (o.n) {
    w->n_options = (size_t)o.n;
    if (!(w->options = dp_sx_alloc(x, (size_t)o.n * sizeof *w->options))) return NULL;
    for (int i = 0; i < o.n; i++) {
      Spark__Connect__WriteOperation__OptionsEntry *e;
      if (!DP_SX_NEW(x, e, spark__connect__write_operation__options_entry__init)) return NULL;
      e->key = dp_sx_strdup(x, o.kv[2 * i]);
      e->value = dp_sx_strdup(x, o.kv[2 * i + 1]);
      w->options[i] = e;
    }
  }
  if (!w->source || !w->path) return NULL;
  cmd->command_type_case = SPARK__CONNECT__COMMAND__COMMAND_TYPE_WRITE_OPERATION;
  cmd->write_operation = w;
  plan->op_type_case = SPARK__CONNECT__PLAN__OP_TYPE_COMMAND;
  plan->command = cmd;
  return plan;
}

int dp_spark_sink_plan(dp_spark_ctx *c, const dp_query_plan *q, const dp_plan *sink, dp_spark_sink *out) {
  dp_sx x;
  dp_sx_init(&x, c, q);
  memset(out, 0, sizeof *out);
  if (sink->kind != DP_P_SINK || sink->ninputs != 1)
    return dp_sx_refuse(&x, sink->span, "internal: dp_spark_sink_plan takes an INSERT");
  const dp_table_def *t = sink->u.sink.table;
  const char *conn = t->connector ? t->connector : "";
  bool local = !strcmp(conn, "memory") || !strcmp(conn, "console") || !strcmp(conn, "blackhole") ||
               !strcmp(conn, "callback");
  bool kafka = !strcmp(conn, "kafka");
  if (!local && !kafka && strcmp(conn, "filesystem") != 0)
    return dp_sx_refuse(&x, sink->span, "table `%s`: writing to the '%s' connector on Spark is not supported in "
                                        "batch mode; write to a 'filesystem', 'kafka' or 'memory' table",
                        t->name, conn);
  dp_srel r;
  int rc = dp_sx_plan(&x, sink->inputs[0], &r);
  if (rc != DIPPER_OK) return rc;
  /* The sink table's columns (its physical ones, which the INSERT fills) */
  int n = t->schema.ncols;
  dp_field *cols = dp_sx_alloc(&x, (size_t)(n ? n : 1) * sizeof *cols);
  int *map = dp_sx_alloc(&x, (size_t)(n ? n : 1) * sizeof *map);
  if (!cols || !map) return dp_sx_fail(&x);
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (t->cols && (t->cols[i].kind == DP_CK_COMPUTED || (t->cols[i].kind == DP_CK_METADATA && t->cols[i].is_virtual)))
      continue;
    cols[k] = t->schema.cols[i];
    map[k++] = sink->u.sink.col_map[i];
  }
  rc = finish(&x, &r, k, cols, map, sink->span, &out->input);
  if (rc != DIPPER_OK) return rc;
  if (local) {
    out->kind = DP_SPARK_SINK_LOCAL;
    return x.rc;
  }
  if (q && q->streaming)
    return dp_sx_refuse(&x, sink->span, "table `%s`: a streaming write on Spark is started by the streaming "
                                        "backend; run this INSERT in batch mode ('execution.runtime-mode' = 'batch')",
                        t->name);
  out->kind = DP_SPARK_SINK_WRITE;
  if (kafka) {
    /* the records serialized by the table's format (translate_stream.c) */
    if (sink->u.sink.overwrite)
      return dp_sx_refuse(&x, sink->span, "table `%s`: a Kafka topic is appended to, never overwritten; write "
                                          "INSERT INTO instead of INSERT OVERWRITE", t->name);
    if (!(out->command = dp_sx_kafka_write(&x, t, out->input))) return dp_sx_fail(&x);
    return x.rc;
  }
  if (!(out->command = write_command(&x, t, out->input, sink->u.sink.overwrite, sink->span))) return dp_sx_fail(&x);
  return x.rc;
}

/* ---- check ---- */

int dp_spark_check(const dp_query_plan *q, dp_arena *a, dp_diags *d) {
  dp_spark_ctx c;
  memset(&c, 0, sizeof c);
  c.arena = a;
  c.diags = d;
  /* Structured Streaming's own rules first (nothing in batch mode); then
     what no relation can express */
  int rc = dp_spark_stream_check(q, d);
  if (rc == DIPPER_NOMEM) return rc;
  for (int i = 0; i < q->nroots; i++) {
    const dp_plan *root = q->roots[i];
    int r;
    if (root->kind == DP_P_SINK && q->streaming) {
      /* a streaming INSERT starts a streaming query (translate_stream.c);
         the session's trigger and checkpoint are known only when it runs */
      dp_spark_stream_opts so;
      memset(&so, 0, sizeof so);
      so.checking = true;
      Spark__Connect__Plan *plan;
      r = dp_spark_stream_start_plan(&c, q, root, &so, &plan);
    } else if (root->kind == DP_P_SINK) {
      dp_spark_sink s;
      r = dp_spark_sink_plan(&c, q, root, &s);
    } else {
      Spark__Connect__Relation *rel;
      r = dp_spark_relation(&c, q, root, &rel);
    }
    if (r == DIPPER_NOMEM) return r;
    if (r != DIPPER_OK && rc == DIPPER_OK) rc = r;
  }
  return rc;
}
