/*
** binder_int.h — private interface between the binder's files.
**
**   binder.c      statements: DDL dispatch, INSERT, statement sets, EXPLAIN
**   bind_literal.c literals and intervals (both spellings)
**   bind_expr.c   expressions: names, scopes, the dispatcher, utilities
**   bind_cast.c   casts, implicit casts, typed catalog calls
**   bind_operator.c operators (BETWEEN, IN, IS, LIKE, CASE)
**   bind_call.c   function calls, aggregate and OVER call collection
**   bind_from.c   FROM (tables, views, CTEs, joins, UNNEST, VALUES) and the
**                 WHERE rewrites: semi/anti joins, comma-join conditions, the
**                 ROW_NUMBER() deduplication / Top-N patterns
**   bind_window.c window TVFs and the legacy / Spark group windows
**   bind_select.c SELECT (GROUP BY, HAVING, OVER, select list, QUALIFY,
**                 DISTINCT, ORDER BY, LIMIT)
**   bind_query.c  set operations, WITH, subqueries in expressions
**
** Owns nothing beyond the binder's working structs; every plan node and
** expression is allocated in the statement's arena.
*/
#ifndef DP_BINDER_INT_H
#define DP_BINDER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/compiler.h"
#include "plan/binder.h"

/* Nesting of user-written constructs (subqueries, views in views, nested
** expressions) beyond which we refuse rather than recurse further. */
#define DP_BIND_MAX_DEPTH 200

/* A column a name can resolve to.  Most are input columns (`index` into the
** row of the node being bound); a few are expressions over that row (`expr`,
** e.g. the merged column of JOIN ... USING, Spark's `window` struct). */
typedef struct dp_bcol {
  const char *rel;       /* table alias or name qualifying it, or NULL */
  const char *name;
  const dp_type *type;
  int index;             /* input column; -1 when `expr` is set */
  dp_expr *expr;         /* virtual column, or NULL */
  bool hidden;           /* not found by an unqualified name nor by `*` (USING duplicates) */
} dp_bcol;

typedef struct dp_bscope {
  int n, cap;
  dp_bcol *cols;
  struct dp_bscope *outer;   /* the enclosing query's scope, for correlated names */
} dp_bscope;

/* CTEs visible at a point: a chain, innermost first. */
typedef struct dp_bcte {
  const dp_ast_cte *cte;
  struct dp_bcte *env;       /* what was visible where the CTE was defined */
  struct dp_bcte *next;
} dp_bcte;

typedef struct dp_binder {
  dp_arena *a;
  dp_diags *d;
  const dp_catalog *cat;
  dp_query_plan *q;          /* watermarks are recorded here; NULL for dp_bind_expr_over */
  dp_bcte *ctes;
  int depth;
  const char *views[32];     /* views being expanded, for cycle detection */
  int nviews;
  int first_error;
  const char *funcs[32];     /* SQL functions being expanded, for recursion (bind_udf.c) */
  int nfuncs;
  dp_udf_refs udfs;          /* C functions called, one reference each (plan/udf.h) */
  int njava, capjava;        /* Java functions called (dp_query_plan.java) */
  const struct dp_udf_def **java;
  dp_span java_span;
  /* The STATE_TTL hint of the SELECT being bound (bind_hint.c), or NULL */
  const dp_ast_select *ttl_block;
  int64_t *ttl_value;        /* per pair: µs, or DP_TTL_FOREVER */
  bool *ttl_used;            /* per pair: matched an input */
} dp_binder;

/* ---- bind_hint.c: STATE_TTL('input' = 'duration') after SELECT ---- */
typedef struct dp_bttl_saved {
  const dp_ast_select *block;
  int64_t *value;
  bool *used;
} dp_bttl_saved;
/* Enter the hints of s (durations checked); false after an error. */
bool dp_bind_ttl_begin(dp_binder *b, const dp_ast_select *s, dp_bttl_saved *saved);
/* The hint of the FROM item f (by alias, else table or view name): µs,
** DP_TTL_FOREVER, or 0 when the hint does not name it (or there is none). */
int64_t dp_bind_ttl_for(dp_binder *b, const struct dp_ast_from *f);
/* Leave the block: a hint key that named no input is an error (ok false
** skips the check); restores the enclosing block's hints. */
bool dp_bind_ttl_end(dp_binder *b, dp_bttl_saved *saved, bool ok);

/* Has the binder's arena run out of memory?  Then the binder stops at its
** next step (each dp_bind_query/from/expr and each new node asks), so that a
** type or name left NULL by the failure is never read; the error is recorded
** once.  (Failures are sticky: core/arena.h.) */
bool dp_bind_out_of_memory(dp_binder *b);

/* Marker columns standing for a collected call until its node exists. */
#define DP_MARK_AGG (-1)
#define DP_MARK_OVER (-2)

/* A collected OVER call with its window, bound over the pre-aggregation row. */
typedef struct dp_bover {
  dp_over_call call;
  int npartition;
  dp_expr **partition;
  int norder;
  dp_sort_key *order;
  bool has_frame, rows;
  int64_t lower, upper;
  dp_span span;
  int out_col;               /* output column once the OVER node is built */
} dp_bover;

/* What an expression may contain where it is being bound. */
enum {
  DP_BX_AGG = 1u << 0,       /* aggregate calls (collected into `aggs`) */
  DP_BX_OVER = 1u << 1,      /* OVER calls (collected into `overs`) */
};

typedef struct dp_bexpr {
  dp_binder *b;
  dp_bscope *sc;
  unsigned allow;
  const char *clause;        /* "WHERE", "GROUP BY", ... for messages */
  int naggs, capaggs;
  dp_agg_call *aggs;
  int novers, capovers;
  dp_bover *overs;
  /* Legacy group windows: TUMBLE_START(ts, ..) etc. resolve to these columns
  ** of the WINDOW node (-1 when there is none). */
  int win_start, win_end, win_time;
  const dp_window_spec *legacy; /* the GROUP BY window the helpers must repeat */
  bool used_rowtime;
  /* WINDOW w AS (...) of the SELECT, for OVER w. */
  int nwindows;
  const dp_ast_named_window *windows;
} dp_bexpr;

/* ---- binder.c ---- */
/* Record an error; returns NULL so expression binders can `return bind_fail(..)`. */
void *dp_bind_fail(dp_binder *b, int code, dp_span span, const char *fmt, ...)
    DP_PRINTF(4, 5)
    ;
int dp_bind_err(dp_binder *b, int code, dp_span span, const char *fmt, ...)
    DP_PRINTF(4, 5)
    ;
bool dp_bind_name_eq(const char *x, const char *y);
const char *dp_bind_type_str(dp_binder *b, const dp_type *t);

/* ---- bind_asof.c ---- */
/* The JOIN node j that bind_join built for `l ASOF [LEFT] JOIN r` (its
** condition over both sides, MATCH_CONDITION included), made an ASOF_JOIN
** node; NULL with a diagnostic when it is not one. */
dp_plan *dp_bind_asof(dp_binder *b, const dp_ast_from *f, dp_plan *j);

/* ---- bind_literal.c ---- */
dp_expr *dp_bind_literal(dp_binder *b, const dp_ast_expr *e);          /* DP_AX_LITERAL */
dp_expr *dp_bind_interval_literal(dp_binder *b, const dp_ast_expr *e); /* DP_AX_INTERVAL */
const char *dp_bind_unit_name(dp_time_unit u);                         /* "HOUR" */
/* An interval argument (either spelling), positive unless allow_zero. */
bool dp_bind_interval_arg(dp_binder *b, const dp_ast_expr *e, const char *what, int64_t *micros);

/* ---- bind_expr.c: names, the dispatcher, expression utilities ---- */
dp_expr *dp_bind_literal_expr(dp_binder *b, dp_value v, dp_span span);
dp_expr *dp_bind_new_expr(dp_binder *b, dp_expr_kind kind, const dp_type *type, dp_span span);
dp_expr *dp_bind_column_expr(dp_binder *b, int index, int outer, const dp_type *type, dp_span span);
const char *dp_bind_last_part(const dp_ast_name *n); /* "c" of a.b.c */
void dp_bexpr_init(dp_bexpr *x, dp_binder *b, dp_bscope *sc, unsigned allow, const char *clause);
dp_expr *dp_bind_expr(dp_bexpr *x, const dp_ast_expr *e);
/* Split an AND tree into conjuncts (appended to *out). */
void dp_bind_conjuncts(dp_binder *b, dp_expr *e, int *n, int *cap, dp_expr ***out);
dp_expr *dp_bind_and(dp_binder *b, int n, dp_expr **conds);

/* Expression utilities. */
bool dp_bexpr_same(const dp_expr *x, const dp_expr *y);
dp_expr *dp_bexpr_copy(dp_arena *a, const dp_expr *e);
/* Copy e, shifting input columns by `delta` (outer refs by one level when outer_down). */
dp_expr *dp_bexpr_shift(dp_arena *a, const dp_expr *e, int delta);
/* Does e use an input column in [lo, hi)?  Outer references (outer > 0) when `outer`. */
bool dp_bexpr_uses_range(const dp_expr *e, int lo, int hi);
bool dp_bexpr_has_outer(const dp_expr *e, int level);

/* ---- scopes (bind_expr.c) ---- */
dp_bcol *dp_bscope_add(dp_binder *b, dp_bscope *s, const char *rel, const char *name,
                       const dp_type *type, int index, dp_expr *expr);
/* The scope of a plan's output, every column qualified by rel. */
void dp_bscope_from_plan(dp_binder *b, dp_bscope *s, const dp_plan *p, const char *rel);

/* ---- bind_cast.c: casts and typed catalog calls ---- */
/* Cast e to t (no-op when equal); NULL with an error when not allowed. */
dp_expr *dp_bind_coerce(dp_binder *b, dp_expr *e, const dp_type *t, const char *what);
dp_expr *dp_bind_cast(dp_binder *b, dp_expr *e, const dp_type *t, bool try_, dp_span span);
/* A call of the catalog function `name` with type inference and implicit casts. */
dp_expr *dp_bind_call_named(dp_binder *b, const char *name, int nargs, dp_expr **args, dp_span span);
dp_expr *dp_bind_call_fn(dp_binder *b, const dp_func *fn, int nargs, dp_expr **args, dp_span span);
/* Cast two operands, or n, to their common type; false with an error when none. */
bool dp_bind_unify2(dp_binder *b, dp_expr **l, dp_expr **r, const char *what, dp_span span);
bool dp_bind_unify_n(dp_binder *b, int n, dp_expr **es, const char *what, dp_span span);
dp_expr *dp_bind_call2(dp_binder *b, const char *name, dp_expr *l, dp_expr *r, dp_span span);
dp_expr *dp_bind_call1(dp_binder *b, const char *name, dp_expr *arg, dp_span span);
bool dp_bind_is_comparison(dp_ast_binop op);
const char *dp_bind_binop_func(dp_ast_binop op); /* the catalog function of a binary operator */
dp_expr *dp_bind_require_bool(dp_binder *b, dp_expr *e, const char *clause);
/* Bind and require BOOLEAN (WHERE, HAVING, ON, FILTER). */
dp_expr *dp_bind_cond(dp_bexpr *x, const dp_ast_expr *e);

/* ---- bind_operator.c: operators, one binder per AST kind ---- */
dp_expr *dp_bind_binary(dp_bexpr *x, const dp_ast_expr *e);
dp_expr *dp_bind_unary(dp_bexpr *x, const dp_ast_expr *e);
dp_expr *dp_bind_between(dp_bexpr *x, const dp_ast_expr *e);
dp_expr *dp_bind_in_list(dp_bexpr *x, const dp_ast_expr *e);
dp_expr *dp_bind_is(dp_bexpr *x, const dp_ast_expr *e);
dp_expr *dp_bind_like(dp_bexpr *x, const dp_ast_expr *e);
dp_expr *dp_bind_case(dp_bexpr *x, const dp_ast_expr *e);

/* ---- bind_call.c: function, aggregate and OVER calls ---- */
dp_expr *dp_bind_call(dp_bexpr *x, const dp_ast_expr *e);

/* ---- bind_udf.c: user-defined functions ---- */
struct dp_udf_def;
/* Is e a call of a SQL function being expanded (or checked)?  Then true,
** with the error. */
bool dp_bind_udf_recursive(dp_binder *b, const dp_ast_expr *e);
/* A call of a SQL function (expanded) or of a Java one. */
dp_expr *dp_bind_udf_call(dp_bexpr *x, const dp_ast_expr *e, const struct dp_udf_def *f);
/* The catalog entry of a C function (referenced by the statement) or of a
** Java aggregate (noted on it); NULL with an error where C functions cannot
** go, or for a Java function created without its types. */
const dp_func *dp_bind_cfunc(dp_binder *b, const struct dp_udf_def *f, const dp_ast_expr *e);
/* CREATE FUNCTION: checks (a SQL body is bound over its parameters), then the catalog. */
int dp_bind_create_function(dp_binder *b, dp_catalog *cat, const dp_ast_stmt *s);

/* ---- bind_query.c: queries, and node helpers ---- */
void dp_bind_copy_schema(dp_binder *b, dp_plan *p, const dp_plan *from, int extra);
const dp_type *dp_bind_nullable(dp_binder *b, const dp_type *t);
const dp_type *dp_bind_not_null(dp_binder *b, const dp_type *t);
/* A PROJECT node without its no-ops: its input when it changes nothing (same
** columns, order, types and names), merged with a PROJECT below when either of
** the two only picks columns; else p itself. */
dp_plan *dp_bind_simplify_project(dp_binder *b, dp_plan *p);
dp_expr *dp_bind_col_ref(dp_binder *b, int index, const dp_type *type, dp_span span);
int dp_bind_as_column(const dp_expr *e);   /* input column of a bare reference, else -1 */
const char *dp_bind_expr_name(dp_binder *b, int pos); /* "EXPR$pos" */
dp_expr *dp_bind_remap(dp_binder *b, const dp_expr *e, const int *map, int nmap);
/* In place: column i becomes map[i] (map may be NULL); with decorrelate,
** outer references move one level in (level 1 becomes the input row). */
void dp_bind_rewrite_cols(dp_expr *x, const int *map, int nmap, bool decorrelate);

/* ---- bind_from.c ---- */
dp_plan *dp_bind_from(dp_binder *b, const dp_ast_from *f, dp_bscope *sc, dp_bscope *outer);
dp_plan *dp_bind_values(dp_binder *b, const dp_ast_from *f, dp_bscope *sc);
dp_plan *dp_bind_named_relation(dp_binder *b, const dp_ast_name *name, const dp_ast_alias *alias,
                                dp_span span, dp_bscope *sc);
/* WHERE/QUALIFY conjuncts over p: comma-join conditions, semi/anti joins, the
** ROW_NUMBER() patterns (when rank_patterns), then one FILTER with the rest. */
dp_plan *dp_bind_apply_where(dp_binder *b, dp_plan *p, dp_expr *cond, dp_span span, bool rank_patterns);

/* ---- bind_window.c ---- */
dp_plan *dp_bind_tvf(dp_binder *b, const dp_ast_from *f, dp_bscope *sc);
int dp_bind_find_group_window(const dp_ast_select *s); /* GROUP BY item index, or -1 */
dp_plan *dp_bind_group_window(dp_binder *b, dp_plan *in, dp_bscope *sc, const dp_ast_expr *g,
                              bool *spark);
/* Follow output column col of p down to a WINDOW node; *which: 0 start, 1 end, 2 time. */
const dp_plan *dp_bind_trace_window(const dp_plan *p, int col, int *which);

/* ---- bind_query.c ---- */
/* Bind a query; *sc (if not NULL) receives its output scope. `outer` is the
** scope of the enclosing query for correlated references. */
dp_plan *dp_bind_query(dp_binder *b, const dp_ast_query *q, dp_bscope *outer);
/* NOT IN (subquery) conjuncts of a WHERE as NOT EXISTS; the scalar
** subqueries of FILTER or PROJECT p as LEFT joins (safe: the nodes whose
** correlated references name their input row). */
dp_expr *dp_bind_rewrite_not_in(dp_binder *b, dp_expr *cond);
void dp_bind_join_scalars(dp_binder *b, dp_plan *p, const dp_plan *const safe[2]);
dp_plan *dp_bind_new_node(dp_binder *b, dp_plan_kind kind, dp_span span, int ninputs, ...);
/* Give node p `n` output columns. */
void dp_bind_schema(dp_binder *b, dp_plan *p, int n);

/* ---- bind_select.c ---- */
/* An output column of a SELECT being bound: its expression and name. */
typedef struct dp_bout {
  dp_expr *expr;
  const char *name;
} dp_bout;

dp_plan *dp_bind_make_project(dp_binder *b, dp_plan *in, int n, const dp_bout *items, dp_span span);
/* ORDER BY o as an output column of items (position, alias or the same
** expression), -1 when it is none, -2 after an error. */
int dp_bind_order_output_ref(dp_binder *b, const dp_ast_order *o, const dp_bout *items, int nitems,
                             int nvisible);
dp_plan *dp_bind_apply_limit(dp_binder *b, dp_plan *p, const dp_ast_query *q);
/* SELECT s, with the ORDER BY and LIMIT of q when q is not NULL. */
dp_plan *dp_bind_select(dp_binder *b, const dp_ast_select *s, const dp_ast_query *q,
                        dp_bscope *outer);

#endif /* DP_BINDER_INT_H */
