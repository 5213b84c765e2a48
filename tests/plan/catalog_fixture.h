/*
** catalog_fixture.h — a catalog and its diagnostics for the plan tests that
** drive DDL and SET through real SQL (catalog_test.c, connectors_test.c):
** run() parses and applies the statements, EXPECT_ERROR checks the first
** diagnostic's code, words and line:col.
*/
#ifndef DP_CATALOG_FIXTURE_H
#define DP_CATALOG_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "plan/catalog.h"
#include "plan/plan.h"
#include "sql/parser.h"
#include "test.h"

typedef struct env {
  dp_arena *arena;
  dp_diags d;
  dp_catalog *cat;
  const char *sql;
} env;

static void env_init(env *e) {
  e->arena = dp_arena_new(0);
  e->cat = dp_catalog_new();
  e->sql = "";
  dp_diags_init(&e->d, e->arena, "t.sql", "", 0);
}

static void env_free(env *e) {
  dp_catalog_free(e->cat);
  dp_arena_free(e->arena);
}

/* Parse `sql` and apply each DDL/SET/RESET statement to the catalog; the
** first error code, or -1 when the SQL does not parse (a broken test). */
static int run(env *e, const char *sql) {
  e->sql = sql;
  dp_diags_init(&e->d, e->arena, "t.sql", sql, strlen(sql));
  dp_ast_script *script = NULL;
  if (dp_parse(e->arena, &e->d, sql, strlen(sql), &script) != DIPPER_OK) {
    fprintf(stderr, "parse failed: %s\n  in: %s\n", e->d.count ? e->d.items[0].message : "?", sql);
    return -1;
  }
  int first = DIPPER_OK;
  for (int i = 0; i < script->n; i++) {
    const dp_ast_stmt *s = script->stmts[i];
    int rc = DIPPER_OK;
    switch (s->kind) {
    case DP_AS_CREATE_TABLE: rc = dp_catalog_create_table(e->cat, &e->d, &s->u.create_table); break;
    case DP_AS_CREATE_VIEW: {
      /* Like the binder: the query's own text. */
      dp_span qs = s->u.create_view.query_span;
      const char *qtext = dp_arena_strndup(e->arena, sql + qs.off, qs.len);
      rc = dp_catalog_create_view(e->cat, &e->d, &s->u.create_view, qtext);
      break;
    }
    case DP_AS_DROP: rc = dp_catalog_drop_stmt(e->cat, &e->d, &s->u.drop); break;
    case DP_AS_CREATE_DATABASE:
    case DP_AS_CREATE_CATALOG: rc = dp_catalog_create_namespace(e->cat, &e->d, s); break;
    case DP_AS_USE: rc = dp_catalog_use(e->cat, &e->d, s); break;
    case DP_AS_ALTER_TABLE: rc = dp_catalog_alter_table(e->cat, &e->d, &s->u.alter); break;
    case DP_AS_SET: rc = dp_catalog_set(e->cat, &e->d, &s->u.set); break;
    case DP_AS_RESET: rc = dp_catalog_reset(e->cat, s->u.set.key); break;
    default: rc = -2; break;
    }
    if (first == DIPPER_OK) first = rc;
  }
  return first;
}

static const char *msg(const env *e) { return e->d.count ? e->d.items[0].message : "(no error)"; }

/* Line and column (1-based) of the first occurrence of `needle` in `sql`. */
static void where(const char *sql, const char *needle, unsigned *line, unsigned *col) {
  const char *p = strstr(sql, needle);
  *line = 1;
  *col = 0;
  if (!p) return;
  const char *bol = sql;
  for (const char *q = sql; q < p; q++)
    if (*q == '\n') {
      (*line)++;
      bol = q + 1;
    }
  *col = (unsigned)(p - bol) + 1;
}

/* The first diagnostic has this code, mentions `words`, and starts where
** `at` first occurs in the SQL. */
#define EXPECT_ERROR(e, rc, code, words, at)                                     \
  do {                                                                           \
    unsigned l_, c_;                                                             \
    where((e)->sql, (at), &l_, &c_);                                             \
    CHECK_EQ((rc), (code));                                                      \
    CHECK((e)->d.count >= 1);                                                    \
    CHECK_CONTAINS(msg(e), (words));                                             \
    if ((e)->d.count >= 1) {                                                     \
      CHECK_EQ((e)->d.items[0].span.line, l_);                                   \
      CHECK_EQ((e)->d.items[0].span.col, c_);                                    \
    }                                                                            \
  } while (0)

#endif /* DP_CATALOG_FIXTURE_H */
