/*
** translate_int.h — the translator's internal interface, shared by the files
** that turn a logical plan into Spark Connect messages: translate.c (the
** relations of every plan node kind), translate_scan.c (SCAN and VALUES, the
** leaves), translate_expr.c (expressions and the
** function mapping table functions_map.def), translate_type.c (types), and
** translate_stream.c (streaming sources and sinks, helper "stream").
**
** Owns: the translation context (dp_sx), the translated relation (dp_srel)
** with its naming scheme, the expression scope, and small builders of
** messages.  Does not own: which plan nodes exist (plan/plan.h), talking to
** Spark (client.h).
**
** Naming.  Spark resolves columns by name; the plan by index.  Every
** relation the translator builds names its output columns "_c<r>_<i>" where
** r is a number unique within one translation (dp_sx_relno) and i the column
** position, through Alias in a Project.  Names therefore never clash (a join
** of two tables with a column `id` each, a self-join, duplicate user names),
** and a correlated subquery can name a column of the enclosing query
** directly: Spark resolves a name it cannot find inside a subquery against
** the outer query (Spark Connect has no explicit outer reference).  Only the
** root's last Project gives the user's names back.
**
** Memory.  Every message lives in the arena of dp_spark_ctx; protobuf-c
** structs point into it, and a sub-message may be shared by two parents (a
** column reference used twice): packing only reads.
**
** Errors.  A builder returns NULL (or a dipper code) and leaves the first
** failure in x->rc: DIPPER_NOMEM, or DIPPER_UNSUPPORTED for a refusal, which
** is also recorded in c->diags with the construct's span (dp_sx_refuse).
** Callers keep translating after a refusal where they can, so that
** dp_spark_check reports every refusal of a statement at once.
*/
#ifndef DP_SPARK_TRANSLATE_INT_H
#define DP_SPARK_TRANSLATE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/compiler.h"
#include "spark/translate.h"

typedef struct dp_sscope dp_sscope;

typedef struct dp_sx {
  dp_spark_ctx *c;
  const dp_query_plan *q;
  int rc;                     /* first failure: DIPPER_NOMEM or DIPPER_UNSUPPORTED; else OK */
  int next_rel;               /* numbering of relations, for column names */
  int64_t next_plan_id;       /* Relation.common.plan_id of subquery references */
  /* Subqueries referenced by the expressions of the relation being built:
     dp_sx_wrap_refs puts them into a WithRelations around it. */
  int nrefs, caprefs;
  Spark__Connect__Relation **refs;
  /* While a subquery is translated: the scope of the expression holding it,
     which the subquery's own scopes name as their `outer`. */
  const dp_sscope *outer;
} dp_sx;

/* The role of a column in a window carried towards an aggregation. */
enum { DP_SW_NONE = 0, DP_SW_START, DP_SW_END, DP_SW_TIME };

/* A translated relation: the message, and the unique internal name of each
** output column in plan order.  A NULL name marks a column Spark cannot
** hold at that place (the bounds of a SESSION window before its GROUP BY):
** an expression that uses it is refused.
**
** Window aggregations: Spark needs window()/session_window() in the GROUP BY
** itself (that is where a streaming aggregation finds its watermark), so a
** WINDOW node's relation carries, through FILTERs and PROJECTs, the
** expression to group by (`wgroup`) and the hidden columns it reads
** (`hidden`: appended after the plan columns by every Project on the way),
** and `wrole` says which columns are the window's start, end and time. */
typedef struct dp_srel {
  Spark__Connect__Relation *rel;
  int ncols;
  const char **names;
  unsigned char *wrole;       /* NULL, or ncols DP_SW_* */
  Spark__Connect__Expression *wgroup; /* NULL when no window is carried */
  int nhidden;
  const char **hidden;
} dp_srel;

/* Where an expression's columns come from: the input row's column names,
** then the enclosing queries' for correlated references (outer levels). */
struct dp_sscope {
  int ncols;
  const char *const *names;
  const dp_sscope *outer;
};

/* ptr = a zeroed protobuf-c message of x's arena, initialised by init; 0 when
** out of memory (x->rc is set). */
#define DP_SX_NEW(x, ptr, init) \
  ((ptr) = dp_sx_alloc((x), sizeof *(ptr)), (ptr) ? (init(ptr), 1) : 0)

/* ---- context, failures ---- */
void dp_sx_init(dp_sx *x, dp_spark_ctx *c, const dp_query_plan *q);
void *dp_sx_alloc(dp_sx *x, size_t n);     /* zeroed; NULL sets x->rc = NOMEM */
char *dp_sx_strdup(dp_sx *x, const char *s);
char *dp_sx_printf(dp_sx *x, const char *fmt, ...)
    DP_PRINTF(2, 3)
    ;
/* Record a refusal (DIPPER_UNSUPPORTED) at span; returns the code. */
int dp_sx_refuse(dp_sx *x, dp_span span, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;
int dp_sx_nomem(dp_sx *x);

/* A fresh relation number and the name of its column i: "_c<r>_<i>". */
int dp_sx_relno(dp_sx *x);
const char *dp_sx_colname(dp_sx *x, int relno, int i);
/* Names for a relation of n columns numbered relno (array in the arena). */
const char **dp_sx_colnames(dp_sx *x, int relno, int n);

/* ---- relations ---- */
/* Translate the subtree at p (any node kind but SINK). */
int dp_sx_plan(dp_sx *x, const dp_plan *p, dp_srel *out);
/* A Relation whose rel_type is `kind`; the caller sets the union member. */
Spark__Connect__Relation *dp_sx_relation(dp_sx *x, Spark__Connect__Relation__RelTypeCase kind);
/* Project(input, exprs) and Filter(input, cond). */
Spark__Connect__Relation *dp_sx_project(dp_sx *x, Spark__Connect__Relation *input, int n,
                                        Spark__Connect__Expression **exprs);
Spark__Connect__Relation *dp_sx_filter(dp_sx *x, Spark__Connect__Relation *input,
                                       Spark__Connect__Expression *cond);
/* in, renamed: a Project giving column i of `in` (plan columns only) the
** name names[i]; hidden columns are carried along. */
int dp_sx_rename(dp_sx *x, dp_srel *in, const char *const *names);
/* When expressions translated since the last call referenced subqueries,
** wrap rel into WithRelations(rel, references) and forget them. */
Spark__Connect__Relation *dp_sx_wrap_refs(dp_sx *x, Spark__Connect__Relation *rel);
/* A streaming/batch Read of a data source: format, schema DDL, options
** (pairs key, value), paths. */
Spark__Connect__Relation *dp_sx_read_source(dp_sx *x, const char *format, const char *schema,
                                            int nopts, const char *const *opts, int npaths,
                                            const char *const *paths, bool streaming);

/* ---- expressions ---- */
/* The Spark expression of e over scope s. */
Spark__Connect__Expression *dp_sx_expr(dp_sx *x, const dp_sscope *s, const dp_expr *e);
/* An aggregate call (FILTER rewritten into the argument) over scope s. */
Spark__Connect__Expression *dp_sx_agg(dp_sx *x, const dp_sscope *s, const dp_func *fn, int nargs,
                                      dp_expr *const *args, bool distinct, const dp_expr *filter,
                                      dp_span span);
Spark__Connect__Expression *dp_sx_col(dp_sx *x, const char *name);
Spark__Connect__Expression *dp_sx_alias(dp_sx *x, Spark__Connect__Expression *e, const char *name);
Spark__Connect__Expression *dp_sx_fn(dp_sx *x, const char *name, int nargs,
                                     Spark__Connect__Expression *const *args);
/* fn with 1..4 arguments given directly (NULL arguments fail cleanly). */
Spark__Connect__Expression *dp_sx_fn1(dp_sx *x, const char *name, Spark__Connect__Expression *a);
Spark__Connect__Expression *dp_sx_fn2(dp_sx *x, const char *name, Spark__Connect__Expression *a,
                                      Spark__Connect__Expression *b);
Spark__Connect__Expression *dp_sx_fn3(dp_sx *x, const char *name, Spark__Connect__Expression *a,
                                      Spark__Connect__Expression *b, Spark__Connect__Expression *c);
Spark__Connect__Expression *dp_sx_lit_string(dp_sx *x, const char *s);
Spark__Connect__Expression *dp_sx_lit_int(dp_sx *x, int32_t v);
Spark__Connect__Expression *dp_sx_lit_long(dp_sx *x, int64_t v);
Spark__Connect__Expression *dp_sx_lit_bool(dp_sx *x, bool v);
Spark__Connect__Expression *dp_sx_lit_null(dp_sx *x, const dp_type *t, dp_span span);
/* The literal of a dipper value (every type). */
Spark__Connect__Expression *dp_sx_literal(dp_sx *x, const dp_value *v, dp_span span);
/* CAST(e AS t); try_ gives TRY mode (NULL instead of an error). */
Spark__Connect__Expression *dp_sx_cast(dp_sx *x, Spark__Connect__Expression *e, const dp_type *t,
                                       bool try_, dp_span span);
/* A SortOrder of e. */
Spark__Connect__Expression__SortOrder *dp_sx_sort_order(dp_sx *x, Spark__Connect__Expression *e,
                                                        bool desc, bool nulls_first);
/* A duration as Spark's interval text: "5 seconds", "250 milliseconds". */
const char *dp_sx_interval_text(dp_sx *x, int64_t micros);

/* ---- translate.c: small helpers of the relations ---- */
Spark__Connect__Expression **dp_sx_expr_list(dp_sx *x, int n);
int dp_sx_fail(dp_sx *x);
char *dp_sx_mut(const char *s);
/* e cast to t unless it has it already (or t is NULL / the NULL type). */
Spark__Connect__Expression *dp_sx_as_type(dp_sx *x, Spark__Connect__Expression *e,
                                          const dp_type *t, dp_span sp);
Spark__Connect__Expression *dp_sx_field(dp_sx *x, Spark__Connect__Expression *e, const char *name);
Spark__Connect__Expression *dp_sx_over(dp_sx *x, Spark__Connect__Expression *fn, int np,
                                        Spark__Connect__Expression **parts, int no,
                                        Spark__Connect__Expression__SortOrder **order,
                                        Spark__Connect__Expression__Window__WindowFrame *frame);

/* ---- translate_scan.c: the leaves, and table options ---- */
/* Reader options as key, value pairs (the kv array of dp_sx_read_source). */
typedef struct dp_sx_opts {
  int n;
  const char *kv[40];
} dp_sx_opts;

const char *dp_sx_table_option(const dp_table_def *t, const char *key);
const char *dp_sx_format_option(const dp_table_def *t, const char *key);
bool dp_sx_is_true(const char *v);
void dp_sx_opt_add(dp_sx_opts *o, const char *k, const char *v);
int dp_sx_scan(dp_sx *x, const dp_plan *p, dp_srel *out);
int dp_sx_values(dp_sx *x, const dp_plan *p, dp_srel *out);

/* ---- types (translate_type.c) ---- */
Spark__Connect__DataType *dp_sx_type(dp_sx *x, const dp_type *t, dp_span span);
/* The DDL of a schema's columns: "`a` INT, `b` STRING" (what DataSource.schema
** and LocalRelation.schema take): the columns whose keep[i] is true, or all
** when keep is NULL. */
const char *dp_sx_schema_ddl(dp_sx *x, const dp_schema *s, const bool *keep, dp_span span);
const char *dp_sx_type_ddl(dp_sx *x, const dp_type *t, dp_span span);

#endif /* DP_SPARK_TRANSLATE_INT_H */
