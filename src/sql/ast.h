/*
** ast.h — the syntax tree the parser builds from SQL text.
**
** The tree says what was written, with a source span on every node, and
** nothing more: names are unresolved, types are the declared ones, and no
** semantic check has run.  The binder (plan/binder.c) turns it into the
** logical plan.  Every node lives in the parse arena.
**
** Lists are arrays with a count (`n` + pointer), never linked lists, so that
** the binder can index them.
*/
#ifndef DP_AST_H
#define DP_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/diag.h"
#include "core/types.h"

typedef struct dp_ast_expr dp_ast_expr;
typedef struct dp_ast_query dp_ast_query;
typedef struct dp_ast_from dp_ast_from;
typedef struct dp_ast_stmt dp_ast_stmt;

/* An identifier as written: `name` is the text without quotes (case kept);
** `quoted` is set for `backtick` or "double-quoted" identifiers. */
typedef struct dp_ast_ident {
  const char *name;
  bool quoted;
  dp_span span;
} dp_ast_ident;

/* A possibly qualified name a.b.c (catalog.db.table or t.col or col). */
typedef struct dp_ast_name {
  int n;
  dp_ast_ident *parts;
  dp_span span;
} dp_ast_name;

/* ---- expressions ---- */

typedef enum dp_ast_expr_kind {
  DP_AX_LITERAL,   /* lit */
  DP_AX_INTERVAL,  /* interval: INTERVAL '5' SECOND, INTERVAL '1' DAY TO HOUR, '10 seconds' is a
                      plain string literal: the binder reads it as an interval where one is wanted */
  DP_AX_COLUMN,    /* name: col, t.col, (nested access on a column is also parsed as a name
                      a.b.c; the binder decides which prefix is the column) */
  DP_AX_STAR,      /* star: *, t.* (qualifier may be empty) */
  DP_AX_UNARY,     /* unary */
  DP_AX_BINARY,    /* binary */
  DP_AX_BETWEEN,   /* between: e [NOT] BETWEEN [SYMMETRIC] lo AND hi */
  DP_AX_IN_LIST,   /* in_list: e [NOT] IN (a, b, c) */
  DP_AX_IN_QUERY,  /* in_query: e [NOT] IN (SELECT ...) */
  DP_AX_EXISTS,    /* subquery: [NOT] EXISTS (SELECT ...) — `negated` in subquery */
  DP_AX_SUBQUERY,  /* subquery: (SELECT ...) as a scalar */
  DP_AX_IS,        /* is: e IS [NOT] NULL|TRUE|FALSE|UNKNOWN, IS [NOT] DISTINCT FROM x */
  DP_AX_LIKE,      /* like: e [NOT] LIKE|SIMILAR TO|RLIKE pattern [ESCAPE c] */
  DP_AX_CASE,      /* case_: CASE [operand] WHEN .. THEN .. [ELSE ..] END */
  DP_AX_CAST,      /* cast: CAST(e AS type), TRY_CAST(e AS type), e::type */
  DP_AX_CALL,      /* call: f(args) [FILTER (WHERE ..)] [OVER (...)|OVER w] */
  DP_AX_FIELD,     /* field: e.name where e is not a plain name (e.g. f(x).a, m['k'].b) */
  DP_AX_SUBSCRIPT, /* subscript: e[index] (arrays, 1-based) or e['key'] (maps) */
  DP_AX_EXTRACT,   /* extract: EXTRACT(unit FROM e) */
  DP_AX_DESCRIPTOR,/* descriptor: DESCRIPTOR(c1, c2) — window TVF arguments only */
  DP_AX_CONSTRUCT, /* construct: ARRAY[..], MAP[k, v, ..], ROW(..) / (a, b) */
  DP_AX_PARAM,     /* param: ? placeholder (reserved; the binder refuses it for now) */
} dp_ast_expr_kind;

typedef enum dp_ast_lit_kind {
  DP_LIT_NULL,
  DP_LIT_TRUE,
  DP_LIT_FALSE,
  DP_LIT_INTEGER,   /* text: digits, fits or not — the binder sizes it */
  DP_LIT_DECIMAL,   /* text: 12.50 */
  DP_LIT_FLOAT,     /* text: 1.5e3 */
  DP_LIT_STRING,    /* text: the unescaped contents ('' → ') */
  DP_LIT_BINARY,    /* text: hex digits of X'0AFF' */
  DP_LIT_DATE,      /* text: contents of DATE '2024-01-01' */
  DP_LIT_TIME,      /* text: contents of TIME '12:00:00' */
  DP_LIT_TIMESTAMP, /* text: contents of TIMESTAMP '...' */
  DP_LIT_TIMESTAMP_LTZ, /* text: contents of TIMESTAMP_LTZ '...' */
} dp_ast_lit_kind;

/* Units of INTERVAL literals and EXTRACT/TIMESTAMPDIFF. */
#define DP_TIME_UNITS(X) \
  X(YEAR) X(QUARTER) X(MONTH) X(WEEK) X(DAY) X(HOUR) X(MINUTE) X(SECOND) \
  X(MILLISECOND) X(MICROSECOND) X(NANOSECOND) X(DOW) X(DOY) X(EPOCH)
#define DP_UNIT_ENUM_(n) DP_UNIT_##n,
typedef enum dp_time_unit { DP_UNIT_NONE = 0, DP_TIME_UNITS(DP_UNIT_ENUM_) } dp_time_unit;
#undef DP_UNIT_ENUM_

typedef enum dp_ast_unop {
  DP_UOP_NEG,  /* -e */
  DP_UOP_PLUS, /* +e */
  DP_UOP_NOT,  /* NOT e */
  DP_UOP_BITNOT,
} dp_ast_unop;

typedef enum dp_ast_binop {
  DP_BOP_OR, DP_BOP_AND,
  DP_BOP_EQ, DP_BOP_NE, DP_BOP_LT, DP_BOP_LE, DP_BOP_GT, DP_BOP_GE,
  DP_BOP_ADD, DP_BOP_SUB, DP_BOP_MUL, DP_BOP_DIV, DP_BOP_MOD,
  DP_BOP_CONCAT, /* || */
  DP_BOP_BITAND, DP_BOP_BITOR, DP_BOP_BITXOR,
  DP_BOP_OVERLAPS, /* (t1, t2) OVERLAPS (t3, t4): left and right are 2-item ROW constructs */
} dp_ast_binop;

typedef enum dp_ast_is_kind {
  DP_IS_NULL, DP_IS_TRUE, DP_IS_FALSE, DP_IS_UNKNOWN, DP_IS_DISTINCT_FROM,
} dp_ast_is_kind;

typedef enum dp_ast_like_kind { DP_LIKE, DP_SIMILAR, DP_RLIKE } dp_ast_like_kind;

/* ORDER BY item. */
typedef struct dp_ast_order {
  dp_ast_expr *expr;
  bool desc;
  int nulls; /* 0: default, 1: NULLS FIRST, 2: NULLS LAST */
  dp_span span;
} dp_ast_order;

/* A frame bound of an OVER window. */
typedef enum dp_ast_bound_kind {
  DP_BOUND_UNBOUNDED_PRECEDING,
  DP_BOUND_PRECEDING,   /* offset PRECEDING: offset is a number or an interval */
  DP_BOUND_CURRENT_ROW,
  DP_BOUND_FOLLOWING,
  DP_BOUND_UNBOUNDED_FOLLOWING,
} dp_ast_bound_kind;

typedef struct dp_ast_bound {
  dp_ast_bound_kind kind;
  dp_ast_expr *offset; /* PRECEDING/FOLLOWING only */
} dp_ast_bound;

/* OVER ( [name] PARTITION BY .. ORDER BY .. ROWS|RANGE BETWEEN .. AND .. ) */
typedef struct dp_ast_window {
  const char *ref_name;   /* OVER w, or OVER (w ...) — a WINDOW clause name; NULL if none */
  int npartition;
  dp_ast_expr **partition;
  int norder;
  dp_ast_order *order;
  bool has_frame;
  bool rows;              /* ROWS (true) or RANGE (false) */
  dp_ast_bound start, end;/* a lone bound `ROWS 5 PRECEDING` has end = CURRENT ROW */
  dp_span span;
} dp_ast_window;

struct dp_ast_expr {
  dp_ast_expr_kind kind;
  dp_span span;
  bool parens; /* written inside parentheses (matters for error spans only) */
  union {
    struct { dp_ast_lit_kind kind; const char *text; } lit;
    struct {
      const char *text;          /* the quoted value, e.g. "10" or "1 02:00:00" */
      bool negative;             /* INTERVAL -'5' or '-5' prefix written outside */
      dp_time_unit unit;         /* leading unit: SECOND in INTERVAL '5' SECOND */
      dp_time_unit to_unit;      /* DAY TO SECOND: to_unit = SECOND; else NONE */
      int precision;             /* SECOND(3), DAY(2): 0 if not written */
    } interval;
    dp_ast_name name;
    struct { dp_ast_name qualifier; /* n == 0 for a bare * */ } star;
    struct { dp_ast_unop op; dp_ast_expr *arg; } unary;
    struct { dp_ast_binop op; dp_ast_expr *left, *right; } binary;
    struct { dp_ast_expr *arg, *lo, *hi; bool negated, symmetric; } between;
    struct { dp_ast_expr *arg; int n; dp_ast_expr **items; bool negated; } in_list;
    struct { dp_ast_expr *arg; dp_ast_query *query; bool negated; } in_query;
    struct { dp_ast_query *query; bool negated; } subquery;
    struct { dp_ast_expr *arg; dp_ast_is_kind what; bool negated; dp_ast_expr *other; } is;
    struct { dp_ast_like_kind kind; dp_ast_expr *arg, *pattern, *escape; bool negated; } like;
    struct {
      dp_ast_expr *operand;     /* CASE x WHEN ... (NULL for searched CASE) */
      int n;
      dp_ast_expr **whens, **thens;
      dp_ast_expr *else_;       /* NULL if absent */
    } case_;
    struct { dp_ast_expr *arg; const dp_type *type; bool try_; dp_span type_span; } cast;
    struct {
      dp_ast_name name;         /* function name (possibly qualified) */
      int nargs;
      dp_ast_expr **args;
      bool distinct;            /* COUNT(DISTINCT x) */
      bool star;                /* COUNT(*) */
      dp_ast_expr *filter;      /* FILTER (WHERE ...) or NULL */
      dp_ast_window *over;      /* OVER ... or NULL */
      /* Named arguments `name => value` (Flink window TVFs): arg_names[i] is NULL
         for a positional argument.  NULL array when none are named. */
      const char **arg_names;
      /* Window TVF table argument `TABLE t` (or a subquery `TABLE (SELECT ..)` is not
         allowed): the args[i] is a DP_AX_COLUMN whose name is the table, with
         table_arg[i] set.  NULL array when none. */
      bool *table_arg;
      /* SESSION(TABLE t PARTITION BY k, ...): the PARTITION BY keys of the table
         argument.  npartition_by == 0 when none. */
      int npartition_by;
      dp_ast_expr **partition_by;
    } call;
    struct { dp_ast_expr *arg; dp_ast_ident field; } field;
    struct { dp_ast_expr *arg, *index; } subscript;
    struct { dp_time_unit unit; dp_ast_expr *arg; } extract;
    struct { int n; dp_ast_ident *cols; } descriptor;
    struct {
      int kind;                 /* 'A' ARRAY, 'M' MAP, 'R' ROW */
      int n;
      dp_ast_expr **items;      /* MAP: k1, v1, k2, v2, ... */
    } construct;
  } u;
};

/* ---- FROM clause ---- */

typedef enum dp_ast_from_kind {
  DP_AF_TABLE,    /* table: a catalog table or view, or a WITH name */
  DP_AF_SUBQUERY, /* subquery: (SELECT ...) [AS] alias */
  DP_AF_JOIN,     /* join */
  DP_AF_TVF,      /* tvf: TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL ..)) or a bare
                     TUMBLE(...) call in FROM; also LATERAL TABLE(udtf(..)) */
  DP_AF_UNNEST,   /* unnest: CROSS JOIN UNNEST(arr) AS t(x) */
  DP_AF_VALUES,   /* values: (VALUES (1, 'a'), (2, 'b')) AS t(a, b) */
} dp_ast_from_kind;

typedef enum dp_ast_join_kind {
  DP_JOIN_INNER, DP_JOIN_LEFT, DP_JOIN_RIGHT, DP_JOIN_FULL, DP_JOIN_CROSS,
  DP_JOIN_LEFT_SEMI, DP_JOIN_LEFT_ANTI, /* Spark spellings LEFT SEMI JOIN / LEFT ANTI JOIN */
  DP_JOIN_COMMA,  /* FROM a, b — a cross join whose condition is in WHERE */
} dp_ast_join_kind;

typedef struct dp_ast_alias {
  dp_ast_ident name;   /* name == NULL when no alias */
  int ncols;           /* AS t(a, b, c) */
  dp_ast_ident *cols;
} dp_ast_alias;

struct dp_ast_from {
  dp_ast_from_kind kind;
  dp_span span;
  dp_ast_alias alias;
  union {
    struct {
      dp_ast_name name;
      dp_ast_expr *as_of;       /* FOR SYSTEM_TIME AS OF expr, or NULL */
    } table;
    struct { dp_ast_query *query; bool lateral; } subquery;
    struct {
      dp_ast_join_kind kind;
      dp_ast_from *left, *right;
      dp_ast_expr *on;          /* NULL with USING, CROSS, comma or NATURAL */
      int nusing;
      dp_ast_ident *using_;
      bool natural;
      /* l ASOF [LEFT] JOIN r: kind is DP_JOIN_INNER or DP_JOIN_LEFT; the time
         condition is `match` (MATCH_CONDITION (l.t >= r.t)) or, when NULL, a
         conjunct of `on`; TOLERANCE expr after the join's condition, or NULL */
      bool asof;
      dp_ast_expr *match;
      dp_ast_expr *tolerance;
    } join;
    struct { dp_ast_expr *call; bool lateral; } tvf; /* call is a DP_AX_CALL */
    struct { int n; dp_ast_expr **args; bool with_ordinality; } unnest;
    struct { int nrows, ncols; dp_ast_expr **cells; /* row-major */ } values;
  } u;
};

/* ---- queries ---- */

typedef struct dp_ast_select_item {
  dp_ast_expr *expr;       /* DP_AX_STAR for * and t.* */
  dp_ast_ident alias;      /* name == NULL when none */
  dp_span span;
} dp_ast_select_item;

typedef struct dp_ast_named_window {
  dp_ast_ident name;
  dp_ast_window *window;
} dp_ast_named_window;

/* One 'key' = 'value' of a STATE_TTL hint (STATE_TTL hint
** after SELECT, Flink's form): the key names an input of the query block
** (a table, alias or view), the value is a duration; both as written. */
typedef struct dp_ast_hint_kv {
  const char *key, *value;
  dp_span span;             /* the pair */
} dp_ast_hint_kv;

typedef struct dp_ast_select {
  bool distinct;
  int nttl;                 /* STATE_TTL hint pairs, in order; 0 without the hint */
  dp_ast_hint_kv *ttl;
  int nitems;
  dp_ast_select_item *items;
  dp_ast_from *from;        /* NULL for SELECT 1 */
  dp_ast_expr *where;
  int ngroup;
  dp_ast_expr **group;      /* may hold TUMBLE(..)/HOP(..)/SESSION(..)/window(..)/session_window(..) */
  dp_span group_span;       /* the GROUP BY keyword and list */
  dp_ast_expr *having;
  int nwindows;             /* WINDOW w AS (...) */
  dp_ast_named_window *windows;
  dp_ast_expr *qualify;     /* QUALIFY ... (Top-N shorthand) or NULL */
  dp_span span;
} dp_ast_select;

typedef enum dp_ast_setop {
  DP_SET_NONE,        /* a plain SELECT: `select` is set */
  DP_SET_UNION,
  DP_SET_INTERSECT,
  DP_SET_EXCEPT,
} dp_ast_setop;

typedef struct dp_ast_cte {
  dp_ast_ident name;
  int ncols;
  dp_ast_ident *cols;
  dp_ast_query *query;
} dp_ast_cte;

/* A query expression: [WITH ...] body [ORDER BY ...] [LIMIT n] [OFFSET m].
** The body is either one SELECT (op == DP_SET_NONE), a set operation of two
** queries, or a parenthesised query / VALUES list standing alone. */
struct dp_ast_query {
  int nctes;
  dp_ast_cte *ctes;
  dp_ast_setop op;
  bool all;                 /* UNION ALL etc. */
  dp_ast_query *left, *right;
  dp_ast_select *select;    /* op == DP_SET_NONE: the SELECT, or NULL with `values` */
  dp_ast_from *values;      /* a bare VALUES (..), (..) query */
  int norder;
  dp_ast_order *order;
  dp_span order_span;       /* the ORDER BY clause, for streaming errors */
  dp_ast_expr *limit;       /* LIMIT n / FETCH FIRST n ROWS ONLY, or NULL */
  dp_ast_expr *offset;
  dp_span limit_span;
  dp_span span;
};

/* ---- statements ---- */

typedef enum dp_ast_stmt_kind {
  DP_AS_CREATE_TABLE,   /* create_table */
  DP_AS_CREATE_VIEW,    /* create_view */
  DP_AS_CREATE_FUNCTION,/* create_function: CREATE [TEMPORARY] FUNCTION f AS 'class' [LANGUAGE ..]
                           [USING JAR 'path'], or f(a T, ..) RETURNS T RETURN expr */
  DP_AS_DROP,           /* drop */
  DP_AS_SET,            /* set: SET 'k' = 'v'; SET (no key) lists */
  DP_AS_RESET,          /* reset: RESET 'k'; RESET (no key) all */
  DP_AS_INSERT,         /* insert */
  DP_AS_STATEMENT_SET,  /* statement_set: EXECUTE STATEMENT SET BEGIN ...; END / BEGIN STATEMENT SET; ... END */
  DP_AS_QUERY,          /* query: a SELECT (or WITH, VALUES, parenthesised query) */
  DP_AS_EXPLAIN,        /* explain */
  DP_AS_USE,            /* use: USE [catalog.]database, USE CATALOG catalog */
  DP_AS_SHOW,           /* show: SHOW TABLES|VIEWS|FUNCTIONS|DATABASES|CATALOGS [FROM|IN ns]
                           [[NOT] [I]LIKE 'p'], SHOW CURRENT CATALOG|DATABASE, SHOW CREATE
                           TABLE|VIEW n */
  DP_AS_DESCRIBE,       /* describe: DESCRIBE|DESC t */
  DP_AS_CREATE_DATABASE,/* namespace: CREATE DATABASE [IF NOT EXISTS] [cat.]db [COMMENT ..]
                           [WITH (..)] */
  DP_AS_CREATE_CATALOG, /* namespace: CREATE CATALOG [IF NOT EXISTS] cat WITH ('type' = ..) */
  DP_AS_ALTER_TABLE,    /* alter: ALTER TABLE [IF EXISTS] t SET (..) | RESET (..) | RENAME TO n */
} dp_ast_stmt_kind;

typedef enum dp_ast_column_kind {
  DP_COL_PHYSICAL,  /* name TYPE [NOT NULL] [COMMENT '...'] */
  DP_COL_COMPUTED,  /* name AS expr */
  DP_COL_METADATA,  /* name TYPE METADATA [FROM 'key'] [VIRTUAL] */
} dp_ast_column_kind;

typedef struct dp_ast_column {
  dp_ast_column_kind kind;
  dp_ast_ident name;
  const dp_type *type;      /* PHYSICAL, METADATA; NULL for COMPUTED */
  dp_span type_span;
  dp_ast_expr *expr;        /* COMPUTED */
  const char *metadata_key; /* METADATA FROM 'key', or NULL (then key = column name) */
  bool is_virtual;          /* METADATA ... VIRTUAL */
  bool primary_key;         /* inline `PRIMARY KEY NOT ENFORCED` */
  const char *comment;
  dp_span span;
} dp_ast_column;

typedef struct dp_ast_option {
  const char *key;          /* unquoted contents of the key string */
  const char *value;        /* unquoted contents of the value string */
  dp_span span;             /* the whole 'k' = 'v' pair */
  dp_span value_span;
} dp_ast_option;

typedef struct dp_ast_options {
  int n;
  dp_ast_option *items;
  dp_span span;
} dp_ast_options;

/* One entry of CREATE TABLE ... LIKE src (INCLUDING ALL OVERWRITING OPTIONS ...):
** Flink's merging strategy for one feature of the source table. */
typedef enum dp_like_mode { DP_LIKE_INCLUDING, DP_LIKE_EXCLUDING, DP_LIKE_OVERWRITING } dp_like_mode;
typedef enum dp_like_feature {
  DP_LIKE_ALL, DP_LIKE_CONSTRAINTS, DP_LIKE_GENERATED, DP_LIKE_METADATA, DP_LIKE_OPTIONS,
  DP_LIKE_PARTITIONS, DP_LIKE_WATERMARKS,
} dp_like_feature;
typedef struct dp_ast_like_option {
  dp_like_mode mode;
  dp_like_feature feature;
  dp_span span;
} dp_ast_like_option;

typedef struct dp_ast_create_table {
  dp_ast_name name;
  bool temporary, if_not_exists;
  int ncols;
  dp_ast_column *cols;
  /* WATERMARK FOR rowtime AS expr — at most one; has_watermark tells. */
  bool has_watermark;
  dp_ast_ident watermark_col;  /* may be a nested name in Flink; we take a column */
  dp_ast_expr *watermark_expr;
  dp_span watermark_span;
  int npk;                     /* PRIMARY KEY (a, b) NOT ENFORCED */
  dp_ast_ident *pk;
  bool pk_enforced;            /* PRIMARY KEY written without NOT ENFORCED */
  dp_span pk_span;
  int npartition;              /* PARTITIONED BY (a, b) */
  dp_ast_ident *partition;
  const char *comment;
  dp_ast_options options;      /* WITH (...) */
  dp_ast_name like;            /* LIKE other_table (n == 0 when absent) */
  int nlike_options;           /* LIKE t (INCLUDING ALL OVERWRITING OPTIONS ...), in order */
  dp_ast_like_option *like_options;
  dp_ast_query *as_query;      /* CREATE TABLE t WITH (..) AS SELECT (CTAS) or NULL */
} dp_ast_create_table;

typedef struct dp_ast_create_view {
  dp_ast_name name;
  bool temporary, if_not_exists, or_replace;
  int ncols;
  dp_ast_ident *cols;
  dp_ast_query *query;
  dp_span query_span;          /* the text of the query, for SHOW CREATE and Spark */
} dp_ast_create_view;

typedef struct dp_ast_create_function {
  dp_ast_name name;
  bool temporary, system, if_not_exists;
  const char *class_name;      /* AS 'com.example.F' */
  const char *language;        /* LANGUAGE JAVA|SCALA|PYTHON|C, or NULL */
  dp_span class_span;          /* the class name's string */
  const char *jar;             /* USING JAR 'path', or NULL */
  dp_span jar_span;
  /* A SQL function, f(a INT, b STRING) RETURNS INT RETURN expr: body is not
  ** NULL, class_name is. */
  int nparams;
  dp_ast_ident *params;        /* the parameters' names */
  const dp_type **param_types;
  dp_span *param_type_spans;
  const dp_type *returns;
  dp_span returns_span;
  dp_ast_expr *body;
} dp_ast_create_function;

typedef struct dp_ast_drop {
  int what;                    /* 'T' table, 'V' view, 'F' function, 'D' database, 'C' catalog */
  dp_ast_name name;
  bool if_exists, temporary;
  bool cascade;                /* DROP DATABASE .. CASCADE (RESTRICT is the default) */
} dp_ast_drop;

/* CREATE DATABASE / CREATE CATALOG. */
typedef struct dp_ast_namespace {
  dp_ast_name name;            /* [catalog.]database, or a catalog */
  bool if_not_exists;
  const char *comment;
  dp_ast_options options;      /* WITH (...) */
} dp_ast_namespace;

/* ALTER TABLE. */
typedef struct dp_ast_alter {
  dp_ast_name name;
  bool if_exists;
  int action;                  /* 'S' SET (options), 'R' RESET (keys), 'N' RENAME TO new_name */
  dp_ast_options options;      /* SET ('k' = 'v', ...) */
  int nkeys;                   /* RESET ('k', ...) */
  const char **keys;
  dp_span *key_spans;
  dp_ast_name new_name;
} dp_ast_alter;

typedef struct dp_ast_set {
  const char *key;             /* NULL: SET / RESET with no key */
  const char *value;           /* NULL for RESET */
  dp_span key_span, value_span;
} dp_ast_set;

typedef struct dp_ast_insert {
  dp_ast_name table;
  bool overwrite;
  int ncols;                   /* INSERT INTO t (a, b) SELECT ... */
  dp_ast_ident *cols;
  int npartition;              /* PARTITION (k = 'v') static partition spec */
  dp_ast_option *partition;
  dp_ast_query *query;
} dp_ast_insert;

typedef struct dp_ast_explain {
  bool changelog_mode;         /* EXPLAIN CHANGELOG_MODE */
  bool plan_only;              /* EXPLAIN PLAN FOR (accepted for Flink compatibility) */
  dp_ast_stmt *stmt;           /* the explained statement (query, INSERT, statement set) */
} dp_ast_explain;

struct dp_ast_stmt {
  dp_ast_stmt_kind kind;
  dp_span span;                /* the whole statement, without the ';' */
  union {
    dp_ast_create_table create_table;
    dp_ast_create_view create_view;
    dp_ast_create_function create_function;
    dp_ast_drop drop;
    dp_ast_set set;
    dp_ast_insert insert;
    struct { int n; dp_ast_stmt **inserts; } statement_set;
    dp_ast_query *query;
    dp_ast_explain explain;
    struct {
      dp_ast_name name;  /* [catalog.]database, or the catalog with USE CATALOG */
      bool catalog;
    } use;
    struct {
      /* 'T' tables, 'V' views, 'F' functions, 'U' user functions, 'D' databases,
         'K' catalogs, 'c' current catalog, 'd' current database, 'C' CREATE TABLE,
         'W' CREATE VIEW */
      int what;
      dp_ast_name name;  /* SHOW CREATE TABLE|VIEW name; SHOW .. FROM|IN name (n == 0: none) */
      const char *like;  /* [NOT] LIKE|ILIKE 'pattern', or NULL */
      bool not_like, ilike;
      dp_span like_span;
    } show;
    dp_ast_name describe;
    dp_ast_namespace namespace_;
    dp_ast_alter alter;
  } u;
};

/* A parsed script: the statements in order. */
typedef struct dp_ast_script {
  int n;
  dp_ast_stmt **stmts;
} dp_ast_script;

#endif /* DP_AST_H */
