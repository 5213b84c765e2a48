/*
** sc_build.h — hand-built Spark Connect relations for the client's test and
** benchmark (tests/spark/client_test.c, bench/spark_bench.c): Range, Project
** and the few expressions they use, as pyspark would send them.
** Owns: nothing but these helpers; every message lives in the given arena.
** Does not own: translating dipper's plans (src/spark/translate.c does).
*/
#ifndef DP_TEST_SC_BUILD_H
#define DP_TEST_SC_BUILD_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "spark/connect/base.pb-c.h"

static inline Spark__Connect__Relation *sb_range(dp_arena *a, int64_t start, int64_t end,
                                                 int32_t parts) {
  Spark__Connect__Range *r = dp_arena_alloc(a, sizeof *r);
  Spark__Connect__Relation *rel = dp_arena_alloc(a, sizeof *rel);
  if (!r || !rel) return NULL;
  spark__connect__range__init(r);
  r->_start_case = SPARK__CONNECT__RANGE___START_START;
  r->start = start;
  r->end = end;
  r->step = 1;
  if (parts > 0) {
    r->_num_partitions_case = SPARK__CONNECT__RANGE___NUM_PARTITIONS_NUM_PARTITIONS;
    r->num_partitions = parts;
  }
  spark__connect__relation__init(rel);
  rel->rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_RANGE;
  rel->range = r;
  return rel;
}

static inline Spark__Connect__Expression *sb_expr(dp_arena *a) {
  Spark__Connect__Expression *e = dp_arena_alloc(a, sizeof *e);
  if (e) spark__connect__expression__init(e);
  return e;
}

static inline Spark__Connect__Expression *sb_col(dp_arena *a, const char *name) {
  Spark__Connect__Expression *e = sb_expr(a);
  Spark__Connect__Expression__UnresolvedAttribute *u = dp_arena_alloc(a, sizeof *u);
  if (!e || !u) return NULL;
  spark__connect__expression__unresolved_attribute__init(u);
  u->unparsed_identifier = dp_arena_strdup(a, name);
  e->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE;
  e->unresolved_attribute = u;
  return e;
}

static inline Spark__Connect__Expression__Literal *sb_lit_new(dp_arena *a,
                                                              Spark__Connect__Expression **out) {
  Spark__Connect__Expression *e = sb_expr(a);
  Spark__Connect__Expression__Literal *l = dp_arena_alloc(a, sizeof *l);
  if (!e || !l) return NULL;
  spark__connect__expression__literal__init(l);
  e->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_LITERAL;
  e->literal = l;
  *out = e;
  return l;
}

static inline Spark__Connect__Expression *sb_long(dp_arena *a, int64_t v) {
  Spark__Connect__Expression *e = NULL;
  Spark__Connect__Expression__Literal *l = sb_lit_new(a, &e);
  if (!l) return NULL;
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_LONG;
  l->long_ = v;
  return e;
}

static inline Spark__Connect__Expression *sb_double(dp_arena *a, double v) {
  Spark__Connect__Expression *e = NULL;
  Spark__Connect__Expression__Literal *l = sb_lit_new(a, &e);
  if (!l) return NULL;
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DOUBLE;
  l->double_ = v;
  return e;
}

/* NULL of type VOID, as pyspark's lit(None). */
static inline Spark__Connect__Expression *sb_null(dp_arena *a) {
  Spark__Connect__Expression *e = NULL;
  Spark__Connect__Expression__Literal *l = sb_lit_new(a, &e);
  Spark__Connect__DataType *t = dp_arena_alloc(a, sizeof *t);
  Spark__Connect__DataType__NULL *n = dp_arena_alloc(a, sizeof *n);
  if (!l || !t || !n) return NULL;
  spark__connect__data_type__init(t);
  spark__connect__data_type__null__init(n);
  t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_NULL;
  t->null = n;
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_NULL;
  l->null = t;
  return e;
}

/* A function call by Spark's name ("*", "%", "==", "when", "timestamp_micros"). */
static inline Spark__Connect__Expression *sb_fn(dp_arena *a, const char *name, int n, ...) {
  Spark__Connect__Expression *e = sb_expr(a);
  Spark__Connect__Expression__UnresolvedFunction *f = dp_arena_alloc(a, sizeof *f);
  Spark__Connect__Expression **args = dp_arena_calloc(a, (size_t)(n > 0 ? n : 1), sizeof *args);
  if (!e || !f || !args) return NULL;
  spark__connect__expression__unresolved_function__init(f);
  f->function_name = dp_arena_strdup(a, name);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) args[i] = va_arg(ap, Spark__Connect__Expression *);
  va_end(ap);
  f->n_arguments = (size_t)n;
  f->arguments = args;
  e->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION;
  e->unresolved_function = f;
  return e;
}

/* CAST(e AS type), the type in Spark's DDL ("string", "decimal(18,2)"). */
static inline Spark__Connect__Expression *sb_cast(dp_arena *a, Spark__Connect__Expression *x,
                                                  const char *type) {
  Spark__Connect__Expression *e = sb_expr(a);
  Spark__Connect__Expression__Cast *c = dp_arena_alloc(a, sizeof *c);
  if (!e || !c) return NULL;
  spark__connect__expression__cast__init(c);
  c->expr = x;
  c->cast_to_type_case = SPARK__CONNECT__EXPRESSION__CAST__CAST_TO_TYPE_TYPE_STR;
  c->type_str = dp_arena_strdup(a, type);
  e->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_CAST;
  e->cast = c;
  return e;
}

static inline Spark__Connect__Expression *sb_alias(dp_arena *a, Spark__Connect__Expression *x,
                                                   const char *name) {
  Spark__Connect__Expression *e = sb_expr(a);
  Spark__Connect__Expression__Alias *al = dp_arena_alloc(a, sizeof *al);
  char **names = dp_arena_alloc(a, sizeof *names);
  if (!e || !al || !names) return NULL;
  spark__connect__expression__alias__init(al);
  al->expr = x;
  names[0] = dp_arena_strdup(a, name);
  al->n_name = 1;
  al->name = names;
  e->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_ALIAS;
  e->alias = al;
  return e;
}

static inline Spark__Connect__Relation *sb_project(dp_arena *a, Spark__Connect__Relation *in, int n,
                                                   Spark__Connect__Expression **exprs) {
  Spark__Connect__Project *p = dp_arena_alloc(a, sizeof *p);
  Spark__Connect__Relation *rel = dp_arena_alloc(a, sizeof *rel);
  Spark__Connect__Expression **xs = dp_arena_calloc(a, (size_t)n, sizeof *xs);
  if (!p || !rel || !xs) return NULL;
  spark__connect__project__init(p);
  p->input = in;
  memcpy(xs, exprs, (size_t)n * sizeof *xs);
  p->n_expressions = (size_t)n;
  p->expressions = xs;
  spark__connect__relation__init(rel);
  rel->rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_PROJECT;
  rel->project = p;
  return rel;
}

/* The mixed-type result of the test and the benchmark, over Range(start, end):
**   id BIGINT, d = id * 1.5 DOUBLE, s = CAST(id AS STRING),
**   ts = timestamp_micros(id * 1000003) TIMESTAMP, dec = CAST(id * 0.25 AS DECIMAL(18,2)),
**   b = (id % 2 == 0) BOOLEAN, n = CASE WHEN id % 3 == 0 THEN NULL ELSE id END BIGINT. */
#define SB_MIXED_COLUMNS 7
static inline Spark__Connect__Relation *sb_mixed(dp_arena *a, int64_t start, int64_t end, int32_t parts) {
  Spark__Connect__Relation *r = sb_range(a, start, end, parts);
  Spark__Connect__Expression *x[SB_MIXED_COLUMNS] = {
      sb_col(a, "id"),
      sb_alias(a, sb_fn(a, "*", 2, sb_col(a, "id"), sb_double(a, 1.5)), "d"),
      sb_alias(a, sb_cast(a, sb_col(a, "id"), "string"), "s"),
      sb_alias(a, sb_fn(a, "timestamp_micros", 1, sb_fn(a, "*", 2, sb_col(a, "id"), sb_long(a, 1000003))),
               "ts"),
      sb_alias(a, sb_cast(a, sb_fn(a, "*", 2, sb_col(a, "id"), sb_double(a, 0.25)), "decimal(18,2)"),
               "dec"),
      sb_alias(a, sb_fn(a, "==", 2, sb_fn(a, "%", 2, sb_col(a, "id"), sb_long(a, 2)), sb_long(a, 0)), "b"),
      sb_alias(a,
               sb_fn(a, "when", 3, sb_fn(a, "==", 2, sb_fn(a, "%", 2, sb_col(a, "id"), sb_long(a, 3)), sb_long(a, 0)),
                     sb_null(a), sb_col(a, "id")),
               "n"),
  };
  for (int i = 0; i < SB_MIXED_COLUMNS; i++)
    if (!x[i]) return NULL;
  return r ? sb_project(a, r, SB_MIXED_COLUMNS, x) : NULL;
}

#endif /* DP_TEST_SC_BUILD_H */
