/*
** plan.h — the logical plan: the one IR that both engines consume.
**
** The binder builds it from the AST (or a C API caller builds it directly);
** the streaming analysis (analyze.c) fills in each node's `props`; the
** validator refuses what cannot run; EXPLAIN prints it.  After that the plan
** is immutable: the embedded executor keeps its run-time state in a separate
** tree, and the Spark backend translates it to Spark Connect relations.
**
** Expressions are bound: a column is an index into the node's input row
** (for a join, the left columns then the right ones), every expression has a
** type, every function is a catalog entry.  Everything lives in the program's
** arena.
*/
#ifndef DP_PLAN_H
#define DP_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/diag.h"
#include "core/types.h"
#include "plan/functions.h"

typedef struct dp_plan dp_plan;
typedef struct dp_expr dp_expr;
typedef struct dp_table_def dp_table_def;

/* ---- bound expressions ---- */

typedef enum dp_expr_kind {
  DP_E_COLUMN,   /* column: input column `index`; `outer` > 0 for a correlated reference
                    to the row of the enclosing query `outer` levels up */
  DP_E_LITERAL,  /* value */
  DP_E_CALL,     /* call: scalar function or operator of the catalog */
  DP_E_CAST,     /* cast: arg to `type`; try_ yields NULL instead of failing */
  DP_E_CASE,     /* case_: searched CASE (a simple CASE is rewritten to it) */
  DP_E_FIELD,    /* field: ROW field `index` of arg */
  DP_E_SUBQUERY, /* subquery: scalar, EXISTS or IN over a plan */
} dp_expr_kind;

typedef enum dp_subquery_kind { DP_SUBQ_SCALAR, DP_SUBQ_EXISTS, DP_SUBQ_IN } dp_subquery_kind;

struct dp_expr {
  dp_expr_kind kind;
  const dp_type *type;
  dp_span span;         /* where it was written (line 0 when built by the API) */
  union {
    struct { int index; int outer; } column;
    dp_value value;
    struct { const dp_func *fn; int nargs; dp_expr **args; } call;
    struct { dp_expr *arg; bool try_; } cast;
    struct { int n; dp_expr **whens, **thens; dp_expr *else_; } case_;
    struct { dp_expr *arg; int index; } field;
    struct {
      dp_subquery_kind kind;
      bool negated;     /* NOT EXISTS, NOT IN */
      dp_expr *arg;     /* IN: the left operand */
      dp_plan *plan;    /* one column for SCALAR and IN */
    } subquery;
  } u;
};

/* An aggregate call inside an AGGREGATE node: agg(args) [FILTER (WHERE f)].
** COUNT(*) has nargs == 0. */
typedef struct dp_agg_call {
  const dp_func *fn;
  int nargs;
  dp_expr **args;       /* over the aggregate's input */
  bool distinct;
  dp_expr *filter;      /* over the aggregate's input, or NULL */
  const dp_type *type;  /* result type */
  dp_span span;
} dp_agg_call;

typedef struct dp_sort_key {
  dp_expr *expr;        /* over the node's input */
  bool desc;
  bool nulls_first;     /* resolved default: NULLS FIRST for ASC, LAST for DESC */
} dp_sort_key;

/* ---- windows ---- */

typedef enum dp_window_kind { DP_WIN_TUMBLE, DP_WIN_HOP, DP_WIN_CUMULATE, DP_WIN_SESSION } dp_window_kind;

/* How the window was written; the plan is the same, EXPLAIN and error messages
** mention it, and the Spark backend keeps Spark's own `window` struct column. */
typedef enum dp_window_syntax {
  DP_WSYN_TVF,     /* FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), ...)) */
  DP_WSYN_LEGACY,  /* GROUP BY TUMBLE(ts, INTERVAL ..) with TUMBLE_START(..) etc. */
  DP_WSYN_SPARK,   /* GROUP BY window(ts, '1 minute', '30 seconds') / session_window(ts, '5 minutes') */
} dp_window_syntax;

typedef struct dp_window_spec {
  dp_window_kind kind;
  dp_window_syntax syntax;
  int time_col;         /* input column holding the event (or processing) time */
  int64_t size;         /* µs: TUMBLE/HOP size, CUMULATE max size */
  int64_t slide;        /* µs: HOP slide, CUMULATE step; == size for TUMBLE */
  int64_t offset;       /* µs: window offset (0 when none) */
  int64_t gap;          /* µs: SESSION gap, when constant */
  dp_expr *gap_expr;    /* SESSION gap as an expression over the input (Spark's dynamic
                           gap), or NULL when constant */
  int npartition;       /* SESSION ... PARTITION BY k: input columns */
  int *partition;
  dp_span span;
} dp_window_spec;

/* ---- streaming properties, filled in by dp_analyze ---- */

enum {
  DP_MODE_APPEND = 1u << 0,
  DP_MODE_UPDATE = 1u << 1,
  DP_MODE_COMPLETE = 1u << 2,
};

/* What the node's output stream carries. */
typedef enum dp_changelog {
  DP_CHANGELOG_INSERT_ONLY, /* only new rows, never revised */
  DP_CHANGELOG_UPSERT,      /* rows revised by key (update/complete modes) */
  DP_CHANGELOG_RETRACT,     /* rows revised with retractions (full outer joins etc.) */
} dp_changelog;

/* The kinds of change a node's output carries (Flink's changelogMode,
** EXPLAIN CHANGELOG_MODE): insertions, update-before (the old row of an
** update, a retraction), update-after, deletions.  An upsert stream is
** [I,UA]; a retract stream [I,UB,UA] or [I,UB,UA,D]. */
enum {
  DP_CHANGES_I = 1u << 0,
  DP_CHANGES_UB = 1u << 1,
  DP_CHANGES_UA = 1u << 2,
  DP_CHANGES_D = 1u << 3,
};

typedef enum dp_state_kind {
  DP_STATE_NONE,            /* stateless */
  DP_STATE_WATERMARK,       /* bounded: dropped as the watermark passes */
  DP_STATE_KEYS,            /* grows with the number of distinct keys, never cleaned */
  DP_STATE_UNBOUNDED,       /* grows with the input (e.g. a join without a time bound) */
  DP_STATE_BOUNDED_INPUT,   /* bounded because the inputs are (batch) */
} dp_state_kind;

#define DP_TTL_FOREVER INT64_C(-1)

typedef struct dp_stream_props {
  bool analyzed;
  bool bounded;             /* the output ends (batch, bounded sources) */
  unsigned modes;           /* DP_MODE_* the node can produce its result in */
  dp_changelog changelog;
  unsigned changes;         /* DP_CHANGES_* (plan/analyze_changelog.c) */
  bool change_kinds;        /* the embedded engine's batches out of this node carry each
                               row's change kind (dp_batch.change, exec/changelog.h) */
  /* Per output column: the watermark (index into dp_query_plan.watermarks) that
     governs it as an event-time attribute, or -1 for an ordinary column.
     Array of schema.ncols entries; NULL when the node has no time attribute. */
  int *time_attr;
  bool proctime;            /* some output column is a processing-time attribute */
  dp_state_kind state;
  const char *state_desc;   /* one line for EXPLAIN: what is kept and what removes it */
  /* Idle state retention (Flink's state TTL), µs per input (a join: left,
     right; other nodes: [0]): a key (a join: a stored row) not written for
     this long is dropped, by processing time.  0: kept forever.  From the
     node's STATE_TTL hint, else 'table.exec.state.ttl'; set by dp_analyze on
     the nodes whose state nothing else bounds. */
  int64_t state_ttl[2];
  /* Join only: the time-range condition found between the two sides (µs, relative
     to the right time: left.ts BETWEEN right.ts + lower AND right.ts + upper). */
  bool has_time_bound;
  int64_t time_lower, time_upper;
} dp_stream_props;

/* ---- plan nodes ---- */

#define DP_PLAN_KINDS(X)                                                    \
  X(SCAN, "Scan")           /* a catalog table's source */                  \
  X(VALUES, "Values")       /* literal rows */                              \
  X(PROJECT, "Project")                                                     \
  X(FILTER, "Filter")                                                       \
  X(WATERMARK, "Watermark") /* declares an event-time column and its delay */ \
  X(WINDOW, "Window")       /* assigns window_start, window_end, window_time */ \
  X(AGGREGATE, "Aggregate")                                                 \
  X(JOIN, "Join")                                                           \
  X(UNION, "Union")                                                         \
  X(SETOP, "SetOp")         /* INTERSECT / EXCEPT */                        \
  X(SORT, "Sort")                                                           \
  X(LIMIT, "Limit")                                                         \
  X(DISTINCT, "Distinct")                                                   \
  X(DEDUPLICATE, "Deduplicate") /* ROW_NUMBER() ... WHERE rn = 1 */         \
  X(TOPN, "TopN")           /* ROW_NUMBER() ... WHERE rn <= N */            \
  X(OVER, "Over")           /* agg(..) OVER (PARTITION BY .. ORDER BY ..) */\
  X(UNNEST, "Unnest")                                                       \
  X(SINK, "Sink")           /* INSERT INTO */                              \
  X(ASOF_JOIN, "AsOfJoin")  /* l ASOF [LEFT] JOIN r: the nearest right row in time */

#define DP_PLAN_ENUM_(n, s) DP_P_##n,
typedef enum dp_plan_kind { DP_PLAN_KINDS(DP_PLAN_ENUM_) DP_P_COUNT_ } dp_plan_kind;
#undef DP_PLAN_ENUM_

const char *dp_plan_kind_name(dp_plan_kind k); /* "Scan", ... */

typedef enum dp_join_kind {
  DP_J_INNER, DP_J_LEFT, DP_J_RIGHT, DP_J_FULL, DP_J_SEMI, DP_J_ANTI, DP_J_CROSS,
} dp_join_kind;

const char *dp_join_kind_name(dp_join_kind k); /* "INNER", ...: EXPLAIN's kind= */
const char *dp_join_name(dp_join_kind k);      /* "INNER JOIN", ...: for messages */

/* The time condition of an as-of join, `left time OP right time`: GE and GT
** look back (the latest right row at or before / before the left time), LE
** and LT forward (the earliest at or after / after). */
typedef enum dp_asof_op { DP_ASOF_GE, DP_ASOF_GT, DP_ASOF_LE, DP_ASOF_LT } dp_asof_op;

const char *dp_asof_op_name(dp_asof_op op); /* ">=", ">", "<=", "<" */

typedef enum dp_rank_kind { DP_RANK_ROW_NUMBER, DP_RANK_RANK, DP_RANK_DENSE_RANK } dp_rank_kind;

/* A window function call of an OVER node. */
typedef struct dp_over_call {
  const dp_func *fn;    /* an aggregate, or ROW_NUMBER/RANK/DENSE_RANK/LAG/LEAD */
  int nargs;
  dp_expr **args;
  bool distinct;
  dp_expr *filter;
  const dp_type *type;
  dp_span span;
} dp_over_call;

struct dp_plan {
  dp_plan_kind kind;
  dp_schema schema;         /* output columns, names as the user will see them */
  dp_span span;             /* the clause that produced the node */
  int ninputs;
  dp_plan **inputs;         /* children: one, two for JOIN/SETOP, n for UNION */
  dp_stream_props props;
  /* A STATE_TTL hint of the query block, µs per input as state_ttl above;
     0: no hint, DP_TTL_FOREVER: a hint of '0' (keep forever). */
  int64_t ttl_hint[2];
  union {
    struct {
      const dp_table_def *table;
      const char *alias;    /* how the query named it, or NULL */
    } scan;
    struct { int nrows; dp_expr **cells; /* row-major literals/expressions */ } values;
    struct { int n; dp_expr **exprs; } project;  /* one per output column */
    struct { dp_expr *cond; } filter;
    struct {
      int time_col;         /* the event-time column (input and output index) */
      dp_expr *expr;        /* the watermark expression over the input row */
      int64_t delay;        /* µs when expr is `col - INTERVAL c` (or `col`), else -1 */
      const char *source;   /* table or view name that declared it */
      int id;               /* index into dp_query_plan.watermarks */
    } watermark;
    dp_window_spec window;  /* output: input columns + window_start, window_end, window_time */
    struct {
      int ngroup;
      dp_expr **group;      /* output columns 0..ngroup-1 */
      int naggs;
      dp_agg_call *aggs;    /* output columns ngroup.. */
      /* A window aggregation: the WINDOW node below (through filters and projections
         only) whose window_start and window_end are group keys wstart and wend.
         NULL for a plain GROUP BY. */
      const dp_plan *window;
      int wstart, wend;
    } aggregate;
    struct {
      dp_join_kind kind;
      dp_expr *cond;        /* over left ++ right, or NULL */
      int nkeys;            /* equi-join keys found in cond: left col = right col */
      int *left_keys, *right_keys; /* right keys are right-side indexes (0-based) */
      dp_expr *as_of;       /* temporal join: FOR SYSTEM_TIME AS OF (over left), or NULL */
    } join;
    struct {
      dp_join_kind kind;    /* DP_J_INNER or DP_J_LEFT (unmatched left rows padded) */
      dp_asof_op op;        /* left_time OP right_time */
      int left_time;        /* a left input column */
      int right_time;       /* a right input column (0-based in the right input) */
      dp_expr *cond;        /* the key equalities over left ++ right, or NULL (no keys) */
      int nkeys;            /* cond's keys: left col = right col (right 0-based) */
      int *left_keys, *right_keys;
      int64_t tolerance;    /* >= 0, in the time's unit (µs for timestamps); -1: none */
    } asof;
    struct { bool all; } union_;
    struct { bool all; bool except; /* false: INTERSECT */ } setop;
    struct { int nkeys; dp_sort_key *keys; } sort;
    struct { int64_t limit; int64_t offset; /* -1 when absent */ } limit;
    struct {
      int nkeys;
      int *keys;            /* input columns that identify a row */
      int order_col;        /* the time column of ORDER BY, -1 if none */
      bool keep_last;       /* ORDER BY ts DESC: keep the latest row */
      bool within_watermark;/* Spark dropDuplicatesWithinWatermark semantics */
    } dedup;
    struct {
      int npartition;
      int *partition;       /* input columns */
      int nkeys;
      dp_sort_key *order;
      int64_t n;            /* keep rank <= n */
      dp_rank_kind rank;
      bool emit_rank;       /* output has the rank as its last column */
    } topn;
    struct {
      int npartition;
      dp_expr **partition;
      int norder;
      dp_sort_key *order;
      bool has_frame, rows;
      int64_t lower;        /* ROWS: rows before; RANGE: µs or value before; -1 unbounded */
      int64_t upper;        /* 0 = CURRENT ROW */
      int ncalls;
      dp_over_call *calls;  /* output: input columns, then one per call */
    } over;
    struct {
      dp_expr *arg;         /* the array or map, over the input */
      bool with_ordinality;
    } unnest;               /* output: input columns + element column(s) */
    struct {
      const dp_table_def *table;
      int *col_map;         /* table column i is input column col_map[i] (-1: NULL) */
      bool overwrite;
    } sink;
  } u;
};

/* A watermark known to a query: one per WATERMARK node, and one per derived
** combination.  A UNION's column is an event-time attribute when it is one in
** every input; when the inputs are governed by different watermarks the column
** gets a derived id (node NULL, nmembers > 0) whose value is the minimum of its
** members' values, so it never passes a row any input may still send.  Members
** are ids of WATERMARK nodes only (derived ids are flattened).  The executor's
** global watermark, the minimum over every WATERMARK node of a root, is never
** ahead of a derived one, so operators need not tell them apart. */
typedef struct dp_watermark_info {
  const char *source;       /* declaring table/view; "UNION" for a derived one */
  const char *column;
  int64_t delay;            /* µs, -1 if not a constant delay */
  const dp_plan *node;      /* the WATERMARK node; NULL for a derived one */
  int nmembers;             /* derived: the ids it is the minimum of; else 0 */
  const int *members;
} dp_watermark_info;

/* The C functions a bound statement calls (plan/udf.h): one reference each,
** given back by dp_udf_release_plan when the statement's program goes. */
typedef struct dp_udf_refs {
  int n, cap;
  struct dp_cfunc **items;
} dp_udf_refs;

/* The bound form of one statement. */
typedef struct dp_query_plan {
  int nroots;
  dp_plan **roots;          /* a query: one; an INSERT: one SINK; a statement set: n SINKs */
  int nwatermarks;
  dp_watermark_info *watermarks;
  bool streaming;           /* compiled in streaming mode (execution.runtime-mode) */
  unsigned output_mode;     /* DP_MODE_* chosen (dipper.output-mode or inferred); 0 = unset */
  bool changelog_mode;      /* EXPLAIN CHANGELOG_MODE: EXPLAIN prints each node's changes */
  dp_udf_refs udfs;         /* C functions called (also by DDL that bound a query) */
  int njava;                /* Java functions called (plan/udf.h's dp_udf_def), each once */
  const struct dp_udf_def **java;
  dp_span java_span;        /* the first call of one */
} dp_query_plan;

/* ---- construction helpers (plan.c) ---- */
dp_plan *dp_plan_new(dp_arena *a, dp_plan_kind kind, int ninputs);
dp_expr *dp_expr_column(dp_arena *a, int index, const dp_type *type);
dp_expr *dp_expr_literal(dp_arena *a, dp_value v);
dp_expr *dp_expr_call(dp_arena *a, const dp_func *fn, const dp_type *type, int nargs, dp_expr **args);
/* Walk every node below (and including) p, children first. */
void dp_plan_walk(dp_plan *p, void (*fn)(dp_plan *, void *), void *ud);
/* Does the expression reference input column i? */
bool dp_expr_uses_column(const dp_expr *e, int i);
/* A column index when e is a bare column reference, else -1. */
int dp_expr_as_column(const dp_expr *e);

/* ---- expression utilities (plan.c) ---- */
/* CAST(arg AS type), TRY_CAST when try_. */
dp_expr *dp_expr_cast(dp_arena *a, dp_expr *arg, const dp_type *type, bool try_);
/* A deep copy of e in `a` whose input column i (outer == 0) becomes column
** map[i]; references to this row from inside subqueries (outer == nesting
** depth) are renumbered too, copying the subquery plans that hold them.  map
** NULL: a plain copy.  NULL when e uses a column that map sends below 0, or
** out of memory. */
dp_expr *dp_expr_remap(dp_arena *a, const dp_expr *e, const int *map);
/* Same structure, functions, types, columns and literal values (subquery
** plans are compared by identity).  NULL equals only NULL. */
bool dp_expr_equal(const dp_expr *x, const dp_expr *y);
/* Built only of literals and deterministic scalar calls, casts, CASEs and
** field accesses: the same value for every row (and foldable). */
bool dp_expr_is_constant(const dp_expr *e);

/* Call fn on each expression node p holds itself (not its inputs': VALUES cells,
** projections, conditions, the watermark and session-gap expressions, group keys,
** aggregate and OVER arguments and filters, sort keys, ...) until fn returns true;
** true when it did. */
bool dp_plan_any_expr(const dp_plan *p, bool (*fn)(const dp_expr *e, void *ud), void *ud);
/* Does e (any expression of p or of its inputs) read a column of the query
** `level` or more levels out?  Nested subqueries count, one level further in. */
bool dp_expr_reads_outer(const dp_expr *e, int level);
bool dp_plan_reads_outer(const dp_plan *p, int level);

#endif /* DP_PLAN_H */
