/*
** stream_fixture.h — hand-built plans for the tests of the streaming
** analysis, validation and EXPLAIN (analyze_test.c, validate_test.c,
** explain_test.c).
**
** Builds catalog tables and plan nodes directly with plan.h's helpers, so that
** each rule is tested on exactly the plan it is about, independent of the
** parser and binder.  The operators are test-local dp_func entries that carry
** the same infix spelling as the catalog's.  Everything lives in one arena
** per test (fx_begin / fx_end).
*/
#ifndef DP_STREAM_FIXTURE_H
#define DP_STREAM_FIXTURE_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/diag.h"
#include "core/types.h"
#include "plan/analyze.h"
#include "plan/catalog.h"
#include "plan/explain.h"
#include "plan/plan.h"

#define FX_UNUSED __attribute__((unused))

FX_UNUSED static const dp_func FX_GE = {.name = "greater_than_or_equal", .op = ">=", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_LE = {.name = "less_than_or_equal", .op = "<=", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_GT = {.name = "greater_than", .op = ">", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_EQ = {.name = "equal", .op = "=", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_AND = {.name = "and", .op = "AND", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_NOT = {.name = "not", .op = "NOT", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_ADD = {.name = "add", .op = "+", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_SUB = {.name = "subtract", .op = "-", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_MUL = {.name = "multiply", .op = "*", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_ISNULL = {.name = "is_null", .op = "IS NULL", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_BETWEEN = {.name = "between", .op = "BETWEEN", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_UPPER = {.name = "upper", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_PROCTIME = {.name = "proctime", .kind = DP_FN_SCALAR};
FX_UNUSED static const dp_func FX_SUM = {.name = "sum", .kind = DP_FN_AGGREGATE};
FX_UNUSED static const dp_func FX_COUNT = {.name = "count", .kind = DP_FN_AGGREGATE};
FX_UNUSED static const dp_func FX_ROW_NUMBER = {.name = "row_number", .kind = DP_FN_WINDOW};

static dp_arena *fx_a;
static dp_diags fx_d;
static dp_query_plan fx_q;
static dp_table_def *fx_last_table; /* the table fx_table made last, for tweaks */

static inline void fx_begin(bool streaming) {
  fx_a = dp_arena_new(0);
  dp_diags_init(&fx_d, fx_a, "test.sql", NULL, 0);
  memset(&fx_q, 0, sizeof fx_q);
  fx_q.streaming = streaming;
}

static inline void fx_end(void) {
  dp_arena_free(fx_a);
  fx_a = NULL;
}

static inline dp_span fx_span(uint32_t line, uint32_t col) {
  dp_span s = {0, 1, line, col};
  return s;
}

static inline const dp_type *fx_ts(void) { return dp_type_of(DP_T_TIMESTAMP); }
static inline const dp_type *fx_int(void) { return dp_type_of(DP_T_INT); }
static inline const dp_type *fx_bigint(void) { return dp_type_of(DP_T_BIGINT); }
static inline const dp_type *fx_double(void) { return dp_type_of(DP_T_DOUBLE); }

/* A table: "name TYPE" pairs given as (name, type) varargs, NULL-terminated. */
static inline dp_table_def *fx_table(const char *name, const char *connector, int bounded, ...) {
  dp_table_def *t = dp_arena_calloc(fx_a, 1, sizeof *t);
  t->name = name;
  t->connector = connector;
  t->format = "json";
  t->bounded = bounded != 0;
  if (bounded) {
    /* What makes a source end: the analysis asks the connector, not the flag. */
    t->connector = "datagen";
    t->noptions = 1;
    t->options = dp_arena_calloc(fx_a, 1, sizeof(dp_option));
    t->options[0].key = "number-of-rows";
    t->options[0].value = "10";
  }
  t->watermark_col = -1;
  t->watermark_delay = -1;
  int n = 0;
  dp_field fields[32];
  va_list ap;
  va_start(ap, bounded);
  for (const char *col; (col = va_arg(ap, const char *)) != NULL && n < 32;) {
    fields[n].name = col;
    fields[n].type = va_arg(ap, const dp_type *);
    n++;
  }
  va_end(ap);
  t->schema.ncols = n;
  t->schema.cols = dp_arena_calloc(fx_a, (size_t)n, sizeof(dp_field));
  memcpy(t->schema.cols, fields, (size_t)n * sizeof(dp_field));
  t->cols = dp_arena_calloc(fx_a, (size_t)n, sizeof(dp_column_def));
  fx_last_table = t;
  return t;
}

static inline void fx_schema(dp_plan *p, int n, const dp_field *cols) {
  p->schema.ncols = n;
  p->schema.cols = dp_arena_calloc(fx_a, (size_t)(n > 0 ? n : 1), sizeof(dp_field));
  if (n > 0) memcpy(p->schema.cols, cols, (size_t)n * sizeof(dp_field));
}

static inline dp_expr *fx_col(const dp_plan *in, int i) {
  return dp_expr_column(fx_a, i, in->schema.cols[i].type);
}

/* Column i of the row a join sees (left ++ right). */
static inline dp_expr *fx_jcol(const dp_plan *l, const dp_plan *r, int i) {
  int nl = l->schema.ncols;
  const dp_type *t = i < nl ? l->schema.cols[i].type : r->schema.cols[i - nl].type;
  return dp_expr_column(fx_a, i, t);
}

static inline dp_expr *fx_call(const dp_func *fn, const dp_type *t, int n, ...) {
  dp_expr **args = dp_arena_calloc(fx_a, (size_t)(n > 0 ? n : 1), sizeof *args);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, dp_expr *);
  va_end(ap);
  return dp_expr_call(fx_a, fn, t, n, args);
}

static inline dp_expr *fx_bool2(const dp_func *fn, dp_expr *l, dp_expr *r) {
  return fx_call(fn, dp_type_of(DP_T_BOOLEAN), 2, l, r);
}

static inline dp_expr *fx_interval(int64_t micros) {
  return dp_expr_literal(fx_a, dp_value_int(dp_type_of(DP_T_INTERVAL_DT), micros));
}

static inline dp_expr *fx_intlit(int64_t v) { return dp_expr_literal(fx_a, dp_value_int(fx_int(), v)); }

static inline dp_plan *fx_scan(const dp_table_def *t, uint32_t line, uint32_t col) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_SCAN, 0);
  p->u.scan.table = t;
  fx_schema(p, t->schema.ncols, t->schema.cols);
  p->span = fx_span(line, col);
  return p;
}

/* WATERMARK FOR col AS col - delay, registered in fx_q. */
static inline dp_plan *fx_watermark(dp_plan *in, int col, int64_t delay, const char *source) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_WATERMARK, 1);
  p->inputs[0] = in;
  fx_schema(p, in->schema.ncols, in->schema.cols);
  p->u.watermark.time_col = col;
  p->u.watermark.expr = fx_call(&FX_SUB, in->schema.cols[col].type, 2, fx_col(in, col),
                                fx_interval(delay));
  p->u.watermark.delay = delay;
  p->u.watermark.source = source;
  int id = fx_q.nwatermarks;
  dp_watermark_info *w = dp_arena_grow(fx_a, fx_q.watermarks, (size_t)id, (size_t)id + 1,
                                       sizeof *w);
  w[id].source = source;
  w[id].column = in->schema.cols[col].name;
  w[id].delay = delay;
  w[id].node = p;
  fx_q.watermarks = w;
  fx_q.nwatermarks = id + 1;
  p->u.watermark.id = id;
  p->span = in->span;
  return p;
}

static inline dp_plan *fx_window(dp_plan *in, dp_window_kind kind, int col, int64_t size, int64_t slide,
                          uint32_t line, uint32_t c) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_WINDOW, 1);
  p->inputs[0] = in;
  int n = in->schema.ncols;
  dp_field f[40];
  memcpy(f, in->schema.cols, (size_t)n * sizeof(dp_field));
  f[n].name = "window_start";
  f[n].type = fx_ts();
  f[n + 1].name = "window_end";
  f[n + 1].type = fx_ts();
  f[n + 2].name = "window_time";
  f[n + 2].type = fx_ts();
  fx_schema(p, n + 3, f);
  p->u.window.kind = kind;
  p->u.window.time_col = col;
  p->u.window.size = size;
  p->u.window.slide = slide;
  p->u.window.gap = kind == DP_WIN_SESSION ? size : 0;
  p->span = fx_span(line, c);
  p->u.window.span = p->span;
  return p;
}

/* GROUP BY the input columns `keys` (ngroup of them); one aggregate over
** `agg_col` (-1: COUNT(*)); `win` the WINDOW below, or NULL. */
static inline dp_plan *fx_aggregate(dp_plan *in, int ngroup, const int *keys, const dp_func *fn,
                             int agg_col, const char *agg_name, const dp_plan *win,
                             uint32_t line, uint32_t col) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_AGGREGATE, 1);
  p->inputs[0] = in;
  dp_field f[40];
  p->u.aggregate.ngroup = ngroup;
  p->u.aggregate.group = dp_arena_calloc(fx_a, (size_t)(ngroup + 1), sizeof(dp_expr *));
  p->u.aggregate.wstart = p->u.aggregate.wend = -1;
  int nin = in->schema.ncols;
  for (int i = 0; i < ngroup; i++) {
    p->u.aggregate.group[i] = fx_col(in, keys[i]);
    f[i] = in->schema.cols[keys[i]];
    if (win) {
      int wn = win->inputs[0]->schema.ncols;
      /* The window columns keep their position when the aggregate reads the WINDOW directly. */
      if (in == win && keys[i] == wn) p->u.aggregate.wstart = i;
      if (in == win && keys[i] == wn + 1) p->u.aggregate.wend = i;
      (void)nin;
    }
  }
  p->u.aggregate.window = win;
  p->u.aggregate.naggs = 1;
  p->u.aggregate.aggs = dp_arena_calloc(fx_a, 1, sizeof(dp_agg_call));
  dp_agg_call *c = &p->u.aggregate.aggs[0];
  c->fn = fn;
  if (agg_col >= 0) {
    c->nargs = 1;
    c->args = dp_arena_calloc(fx_a, 1, sizeof(dp_expr *));
    c->args[0] = fx_col(in, agg_col);
    c->type = in->schema.cols[agg_col].type;
  } else {
    c->type = fx_bigint();
  }
  f[ngroup].name = agg_name;
  f[ngroup].type = c->type;
  fx_schema(p, ngroup + 1, f);
  p->span = fx_span(line, col);
  return p;
}

/* A projection of input columns (by index) with optional new names. */
static inline dp_plan *fx_project_cols(dp_plan *in, int n, const int *cols, const char *const *names) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_PROJECT, 1);
  p->inputs[0] = in;
  dp_field f[40];
  p->u.project.n = n;
  p->u.project.exprs = dp_arena_calloc(fx_a, (size_t)n, sizeof(dp_expr *));
  for (int i = 0; i < n; i++) {
    p->u.project.exprs[i] = fx_col(in, cols[i]);
    f[i] = in->schema.cols[cols[i]];
    if (names && names[i]) f[i].name = names[i];
  }
  fx_schema(p, n, f);
  p->span = in->span;
  return p;
}

static inline dp_plan *fx_project(dp_plan *in, int n, dp_expr **exprs, const char *const *names) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_PROJECT, 1);
  p->inputs[0] = in;
  dp_field f[40];
  p->u.project.n = n;
  p->u.project.exprs = exprs;
  for (int i = 0; i < n; i++) {
    f[i].name = names[i];
    f[i].type = exprs[i]->type;
  }
  fx_schema(p, n, f);
  p->span = in->span;
  return p;
}

static inline dp_plan *fx_filter(dp_plan *in, dp_expr *cond) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_FILTER, 1);
  p->inputs[0] = in;
  fx_schema(p, in->schema.ncols, in->schema.cols);
  p->u.filter.cond = cond;
  p->span = in->span;
  return p;
}

static inline dp_plan *fx_join(dp_plan *l, dp_plan *r, dp_join_kind kind, dp_expr *cond, int lkey,
                        int rkey, uint32_t line, uint32_t col) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_JOIN, 2);
  p->inputs[0] = l;
  p->inputs[1] = r;
  dp_field f[64];
  int n = l->schema.ncols;
  memcpy(f, l->schema.cols, (size_t)n * sizeof(dp_field));
  if (kind != DP_J_SEMI && kind != DP_J_ANTI) {
    memcpy(f + n, r->schema.cols, (size_t)r->schema.ncols * sizeof(dp_field));
    n += r->schema.ncols;
  }
  fx_schema(p, n, f);
  p->u.join.kind = kind;
  p->u.join.cond = cond;
  if (lkey >= 0) {
    p->u.join.nkeys = 1;
    p->u.join.left_keys = dp_arena_calloc(fx_a, 1, sizeof(int));
    p->u.join.right_keys = dp_arena_calloc(fx_a, 1, sizeof(int));
    p->u.join.left_keys[0] = lkey;
    p->u.join.right_keys[0] = rkey;
  }
  p->span = fx_span(line, col);
  return p;
}

static inline dp_plan *fx_unary(dp_plan_kind kind, dp_plan *in, uint32_t line, uint32_t col) {
  dp_plan *p = dp_plan_new(fx_a, kind, 1);
  p->inputs[0] = in;
  fx_schema(p, in->schema.ncols, in->schema.cols);
  p->span = fx_span(line, col);
  return p;
}

static inline dp_plan *fx_sort(dp_plan *in, int col, bool desc, uint32_t line, uint32_t c) {
  dp_plan *p = fx_unary(DP_P_SORT, in, line, c);
  p->u.sort.nkeys = 1;
  p->u.sort.keys = dp_arena_calloc(fx_a, 1, sizeof(dp_sort_key));
  p->u.sort.keys[0].expr = fx_col(in, col);
  p->u.sort.keys[0].desc = desc;
  p->u.sort.keys[0].nulls_first = !desc;
  return p;
}

static inline dp_plan *fx_limit(dp_plan *in, int64_t n, uint32_t line, uint32_t c) {
  dp_plan *p = fx_unary(DP_P_LIMIT, in, line, c);
  p->u.limit.limit = n;
  p->u.limit.offset = -1;
  return p;
}

static inline dp_plan *fx_dedup(dp_plan *in, int key, int order_col, bool keep_last, uint32_t line,
                         uint32_t c) {
  dp_plan *p = fx_unary(DP_P_DEDUPLICATE, in, line, c);
  p->u.dedup.nkeys = 1;
  p->u.dedup.keys = dp_arena_calloc(fx_a, 1, sizeof(int));
  p->u.dedup.keys[0] = key;
  p->u.dedup.order_col = order_col;
  p->u.dedup.keep_last = keep_last;
  return p;
}

static inline dp_plan *fx_topn(dp_plan *in, int npart, const int *part, int order_col, int64_t n,
                        uint32_t line, uint32_t c) {
  dp_plan *p = fx_unary(DP_P_TOPN, in, line, c);
  p->u.topn.npartition = npart;
  p->u.topn.partition = dp_arena_calloc(fx_a, (size_t)(npart + 1), sizeof(int));
  memcpy(p->u.topn.partition, part, (size_t)npart * sizeof(int));
  p->u.topn.nkeys = 1;
  p->u.topn.order = dp_arena_calloc(fx_a, 1, sizeof(dp_sort_key));
  p->u.topn.order[0].expr = fx_col(in, order_col);
  p->u.topn.order[0].desc = true;
  p->u.topn.n = n;
  return p;
}

/* SUM(sum_col) OVER (PARTITION BY part ORDER BY order_col [DESC] frame). */
static inline dp_plan *fx_over(dp_plan *in, int part, int order_col, bool desc, bool rows, int64_t lower,
                        int sum_col, uint32_t line, uint32_t c) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_OVER, 1);
  p->inputs[0] = in;
  int n = in->schema.ncols;
  dp_field f[40];
  memcpy(f, in->schema.cols, (size_t)n * sizeof(dp_field));
  f[n].name = "running";
  f[n].type = in->schema.cols[sum_col].type;
  fx_schema(p, n + 1, f);
  p->u.over.npartition = 1;
  p->u.over.partition = dp_arena_calloc(fx_a, 1, sizeof(dp_expr *));
  p->u.over.partition[0] = fx_col(in, part);
  if (order_col >= 0) {
    p->u.over.norder = 1;
    p->u.over.order = dp_arena_calloc(fx_a, 1, sizeof(dp_sort_key));
    p->u.over.order[0].expr = fx_col(in, order_col);
    p->u.over.order[0].desc = desc;
    p->u.over.order[0].nulls_first = !desc;
  }
  p->u.over.has_frame = true;
  p->u.over.rows = rows;
  p->u.over.lower = lower;
  p->u.over.upper = 0;
  p->u.over.ncalls = 1;
  p->u.over.calls = dp_arena_calloc(fx_a, 1, sizeof(dp_over_call));
  p->u.over.calls[0].fn = &FX_SUM;
  p->u.over.calls[0].nargs = 1;
  p->u.over.calls[0].args = dp_arena_calloc(fx_a, 1, sizeof(dp_expr *));
  p->u.over.calls[0].args[0] = fx_col(in, sum_col);
  p->u.over.calls[0].type = f[n].type;
  p->span = fx_span(line, c);
  return p;
}

static inline dp_plan *fx_binary(dp_plan_kind kind, dp_plan *l, dp_plan *r, uint32_t line, uint32_t c) {
  dp_plan *p = dp_plan_new(fx_a, kind, 2);
  p->inputs[0] = l;
  p->inputs[1] = r;
  fx_schema(p, l->schema.ncols, l->schema.cols);
  p->span = fx_span(line, c);
  return p;
}

static inline dp_plan *fx_sink(dp_plan *in, const dp_table_def *t, uint32_t line, uint32_t c) {
  dp_plan *p = dp_plan_new(fx_a, DP_P_SINK, 1);
  p->inputs[0] = in;
  fx_schema(p, t->schema.ncols, t->schema.cols);
  p->u.sink.table = t;
  p->u.sink.col_map = dp_arena_calloc(fx_a, (size_t)t->schema.ncols + 1, sizeof(int));
  for (int i = 0; i < t->schema.ncols; i++) p->u.sink.col_map[i] = i;
  p->span = fx_span(line, c);
  return p;
}

static inline void fx_root(dp_plan *p) {
  fx_q.nroots = 1;
  fx_q.roots = dp_arena_calloc(fx_a, 1, sizeof(dp_plan *));
  fx_q.roots[0] = p;
}

/* Analyse and validate fx_q; the number of diagnostics. */
static inline int fx_check(void) {
  if (dp_analyze(fx_a, &fx_d, NULL, &fx_q) != DIPPER_OK) return -1;
  dp_validate(&fx_d, NULL, &fx_q);
  return fx_d.count;
}

/* EXPLAIN of fx_q, in the arena. */
static inline const char *fx_explain(unsigned flags) {
  dp_buf b = DP_BUF_INIT;
  dp_explain_plan(&b, &fx_q, flags);
  const char *s = dp_arena_strdup(fx_a, dp_buf_cstr(&b));
  dp_buf_free(&b);
  return s;
}

/* ---- the tables most tests use ---- */

/* payment_msg of the seed: createTime, orderId, payAmount, payPlatform, provinceId. */
static inline dp_table_def *fx_payment_table(void) {
  return fx_table("payment_msg", "kafka", false, "createTime", fx_ts(), "orderId", fx_bigint(),
                  "payAmount", fx_double(), "payPlatform", fx_int(), "provinceId", fx_int(),
                  (const char *)NULL);
}

/* Scan + WATERMARK FOR createTime AS createTime - INTERVAL '10' SECOND. */
static inline dp_plan *fx_payments(void) {
  dp_table_def *t = fx_payment_table();
  t->watermark_col = 0;
  t->watermark_delay = 10 * DP_MICROS_PER_SECOND;
  return fx_watermark(fx_scan(t, 3, 6), 0, 10 * DP_MICROS_PER_SECOND, "payment_msg");
}

/* The same table without a watermark. */
static inline dp_plan *fx_payments_raw(void) { return fx_scan(fx_payment_table(), 3, 6); }

#endif /* DP_STREAM_FIXTURE_H */
