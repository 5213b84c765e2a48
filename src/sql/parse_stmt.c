/*
** parse_stmt.c — statements: CREATE TABLE / VIEW / FUNCTION (Flink's WITH
** options and Spark's USING, LIKE with its options, AS SELECT), CREATE
** DATABASE / CATALOG, ALTER TABLE, DROP, SET and RESET, SHOW, DESCRIBE, USE,
** INSERT, statement sets, EXPLAIN, and the dispatch on a statement's first
** word.
**
** Owns: the statement grammar.  Does not own: queries (parse_query.c),
** the statement loop and error recovery (parser.c).
*/
#include <string.h>

#include "sql/parser_int.h"

/* ------------------------------------------------------------ statements */

static dp_ast_stmt *new_stmt(parser *p, dp_ast_stmt_kind kind, const dp_token *start) {
  dp_ast_stmt *s = dp_ps_alloc(p, sizeof *s);
  s->kind = kind;
  s->span = start->span;
  return s;
}

static bool accept_if_not_exists(parser *p) {
  if (!at_kw(p, DP_KW_IF)) return false;
  next(p);
  dp_ps_expect_kw(p, DP_KW_NOT, "NOT EXISTS after IF");
  dp_ps_expect_kw(p, DP_KW_EXISTS, "EXISTS after IF NOT");
  return true;
}

static bool accept_if_exists(parser *p) {
  if (!at_kw(p, DP_KW_IF)) return false;
  next(p);
  dp_ps_expect_kw(p, DP_KW_EXISTS, "EXISTS after IF");
  return true;
}

static const char *parse_string(parser *p, const char *what) {
  if (!at(p, DP_TK_STRING)) dp_ps_fail_expected(p, what, NULL);
  const char *s = dp_ps_unquote(p, cur(p));
  next(p);
  return s;
}

/* WITH ('k' = 'v', ...) after WITH. */
static void parse_options(parser *p, dp_ast_options *o, const dp_token *start) {
  dp_ps_expect(p, DP_TK_LPAREN, "'(' after WITH (write WITH ('connector' = '...', ...))");
  vec v = {0};
  if (!at(p, DP_TK_RPAREN)) {
    do {
      const dp_token *ks = cur(p);
      if (ks->kind != DP_TK_STRING) {
        if (ks->kind == DP_TK_IDENT || ks->kind == DP_TK_QIDENT)
          dp_ps_fail_at(p, DIPPER_SYNTAX, ks->span,
                        "expected an option key in single quotes, found %s: write '%.*s'",
                        dp_ps_describe(p, ks), (int)ks->span.len, p->text + ks->span.off);
        dp_ps_fail_expected(p, "an option key in single quotes ('connector' = '...')", NULL);
      }
      dp_ast_option *opt = dp_ps_vec_push(p, &v, sizeof *opt);
      opt->key = dp_ps_unquote(p, ks);
      next(p);
      dp_ps_expect(p, DP_TK_EQ, "'=' after the option key");
      const dp_token *vs = cur(p);
      if (vs->kind == DP_TK_STRING) {
        opt->value = dp_ps_unquote(p, vs);
      } else if (vs->kind == DP_TK_INTEGER || vs->kind == DP_TK_DECIMAL ||
                 is_kw(vs, DP_KW_TRUE) || is_kw(vs, DP_KW_FALSE)) {
        opt->value = dp_ps_token_text(p, vs); /* lenient: 'sink.parallelism' = 2 */
      } else if (vs->kind == DP_TK_IDENT || vs->kind == DP_TK_QIDENT) {
        dp_ps_fail_at(p, DIPPER_SYNTAX, vs->span,
                      "expected an option value in single quotes, found %s: write '%.*s'",
                      dp_ps_describe(p, vs), (int)vs->span.len, p->text + vs->span.off);
      } else {
        dp_ps_fail_expected(p, "an option value in single quotes", NULL);
      }
      next(p);
      opt->value_span = vs->span;
      opt->span = span_from(p, ks);
      if (at(p, DP_TK_COMMA) && peek(p, 1)->kind == DP_TK_RPAREN)
        dp_ps_fail_at(p, DIPPER_SYNTAX, cur(p)->span,
                      "unexpected ',' before ')': remove the trailing comma after the last option");
    } while (accept(p, DP_TK_COMMA));
  }
  if (at(p, DP_TK_STRING))
    dp_ps_fail_expected(p, "',' or ')' after the option", ": is a ',' missing between options?");
  dp_ps_expect(p, DP_TK_RPAREN, "')' to close the WITH options");
  o->n = v.n;
  o->items = v.items;
  o->span = span_from(p, start);
}

static void set_primary_key(parser *p, dp_ast_create_table *ct, dp_ast_ident *cols, int n,
                            const dp_token *start) {
  if (ct->npk > 0)
    dp_ps_fail_at(p, DIPPER_DUPLICATE, start->span,
                  "a table has at most one PRIMARY KEY: list every key column in one "
                  "PRIMARY KEY (a, b) NOT ENFORCED");
  ct->npk = n;
  ct->pk = cols;
  ct->pk_enforced = true;
  if (accept_kw(p, DP_KW_NOT)) {
    dp_ps_expect_kw(p, DP_KW_ENFORCED, "ENFORCED after PRIMARY KEY ... NOT");
    ct->pk_enforced = false;
  }
  ct->pk_span = span_from(p, start);
}

/* One column: name TYPE [modifiers] | name AS expr [COMMENT '..'] */
static void parse_column(parser *p, dp_ast_create_table *ct, dp_ast_column *col) {
  const dp_token *start = cur(p);
  col->name = dp_ps_ident(p, "a column name");
  if (accept_kw(p, DP_KW_AS)) {
    col->kind = DP_COL_COMPUTED;
    col->expr = dp_ps_expr(p);
  } else {
    col->kind = DP_COL_PHYSICAL;
    const dp_token *ts = cur(p);
    col->type = dp_ps_type(p);
    col->type_span = span_from(p, ts);
    if (accept_kw(p, DP_KW_METADATA)) {
      col->kind = DP_COL_METADATA;
      if (accept_kw(p, DP_KW_FROM))
        col->metadata_key = parse_string(p, "the metadata key in single quotes after FROM");
      if (accept_kw(p, DP_KW_VIRTUAL)) col->is_virtual = true;
    }
  }
  for (;;) {
    const dp_token *ms = cur(p);
    if (at_kw(p, DP_KW_CONSTRAINT)) {
      next(p);
      dp_ps_ident(p, "a constraint name");
      if (!at_kw(p, DP_KW_PRIMARY)) dp_ps_fail_expected(p, "PRIMARY KEY after CONSTRAINT name", NULL);
    }
    if (accept_kw(p, DP_KW_PRIMARY)) {
      dp_ps_expect_kw(p, DP_KW_KEY, "KEY after PRIMARY");
      dp_ast_ident *key = dp_ps_alloc(p, sizeof *key);
      *key = col->name;
      set_primary_key(p, ct, key, 1, ms);
      col->primary_key = true;
    } else if (accept_kw(p, DP_KW_COMMENT)) {
      col->comment = parse_string(p, "a string after COMMENT");
    } else {
      break;
    }
  }
  col->span = span_from(p, start);
}

static void parse_table_elements(parser *p, dp_ast_create_table *ct) {
  vec cols = {0};
  next(p); /* ( */
  for (;;) {
    const dp_token *es = cur(p);
    /* WATERMARK and PRIMARY are also usable as column names: `watermark INT`. */
    if (at_kw(p, DP_KW_WATERMARK) &&
        (is_kw(peek(p, 1), DP_KW_FOR) || is_kw(peek(p, 2), DP_KW_AS))) {
      next(p);
      dp_ps_expect_kw(p, DP_KW_FOR, "FOR after WATERMARK (WATERMARK FOR ts AS ts - INTERVAL '5' "
                              "SECOND)");
      if (ct->has_watermark)
        dp_ps_fail_at(p, DIPPER_DUPLICATE, es->span,
                      "a table has at most one WATERMARK: keep the one for the event-time column");
      ct->has_watermark = true;
      ct->watermark_col = dp_ps_ident(p, "the event-time column after WATERMARK FOR");
      dp_ps_expect_kw(p, DP_KW_AS, "AS after WATERMARK FOR column (WATERMARK FOR ts AS ts - "
                             "INTERVAL '5' SECOND)");
      ct->watermark_expr = dp_ps_expr(p);
      ct->watermark_span = span_from(p, es);
    } else if ((at_kw(p, DP_KW_PRIMARY) &&
                (is_kw(peek(p, 1), DP_KW_KEY) || peek(p, 1)->kind == DP_TK_LPAREN)) ||
               (at_kw(p, DP_KW_CONSTRAINT) && is_kw(peek(p, 2), DP_KW_PRIMARY))) {
      if (accept_kw(p, DP_KW_CONSTRAINT)) dp_ps_ident(p, "a constraint name");
      next(p);
      dp_ps_expect_kw(p, DP_KW_KEY, "KEY after PRIMARY (PRIMARY KEY (a, b) NOT ENFORCED)");
      int n = 0;
      dp_ast_ident *key =
          dp_ps_ident_list(p, &n, "key columns", "')' to close the PRIMARY KEY columns");
      set_primary_key(p, ct, key, n, es);
    } else {
      parse_column(p, ct, dp_ps_vec_push(p, &cols, sizeof(dp_ast_column)));
    }
    if (accept(p, DP_TK_COMMA)) {
      if (at(p, DP_TK_RPAREN))
        dp_ps_fail_at(p, DIPPER_SYNTAX, p->toks[p->pos - 1].span,
                      "unexpected ',' before ')': remove the trailing comma after the last column");
      continue;
    }
    if (accept(p, DP_TK_RPAREN)) break;
    dp_ps_fail_expected(p, "',' or ')' after the column definition",
                        dp_ps_is_name_token(cur(p), false) ? ": is a ',' missing between columns?" : NULL);
  }
  ct->ncols = cols.n;
  ct->cols = cols.items;
}

/* Spark's CREATE TABLE ... USING fmt OPTIONS (k 'v'): say how dipper writes
** it (Flink's WITH clause), with the format named when it is a file format. */
static _Noreturn void spark_ddl(parser *p, const dp_token *at) {
  const dp_token *fmt = is_kw(at, DP_KW_USING) ? peek(p, 1) : NULL;
  static const char *const files[] = {"CSV", "JSON", "PARQUET", "ORC", "AVRO", "TEXT"};
  bool file = false;
  for (size_t i = 0; fmt && i < sizeof files / sizeof files[0]; i++) file |= dp_ps_is_word(p, fmt, files[i]);
  if (file)
    dp_ps_fail_at(p, DIPPER_SYNTAX, at->span,
                  "USING %.*s OPTIONS (...) is Spark's DDL; dipper writes Flink's WITH clause: "
                  "WITH ('connector' = 'filesystem', 'path' = '...', 'format' = '%.*s'), each "
                  "option as 'key' = 'value'",
                  (int)fmt->span.len, p->text + fmt->span.off, (int)fmt->span.len,
                  p->text + fmt->span.off);
  dp_ps_fail_at(p, DIPPER_SYNTAX, at->span,
                "%s is Spark's DDL; dipper writes Flink's WITH clause: WITH ('connector' = '...', "
                "'format' = '...', ...), each option as 'key' = 'value' (docs/sql.md lists the "
                "connectors)",
                is_kw(at, DP_KW_USING) ? "USING ... OPTIONS (...)" : "OPTIONS (...)");
}

/* LIKE t ( {INCLUDING|EXCLUDING|OVERWRITING} {ALL|CONSTRAINTS|GENERATED|
** METADATA|OPTIONS|PARTITIONS|WATERMARKS} ... ) after the '(': Flink's like
** options, checked here as Flink checks them. */
static void parse_like_options(parser *p, dp_ast_create_table *ct) {
  static const char *const modes[] = {"INCLUDING", "EXCLUDING", "OVERWRITING"};
  static const char *const features[] = {"ALL", "CONSTRAINTS", "GENERATED", "METADATA",
                                         "OPTIONS", "PARTITIONS", "WATERMARKS"};
  vec v = {0};
  do {
    const dp_token *ms = cur(p);
    int mode = -1, feature = -1;
    for (int i = 0; i < 3 && mode < 0; i++)
      if (dp_ps_is_word(p, ms, modes[i])) mode = i;
    if (mode < 0) dp_ps_fail_expected(p, "INCLUDING, EXCLUDING or OVERWRITING in the LIKE options", NULL);
    next(p);
    const dp_token *fs = cur(p);
    for (int i = 0; i < 7 && feature < 0; i++)
      if (is_kw(fs, DP_KW_ALL) ? i == 0 : dp_ps_is_word(p, fs, features[i])) feature = i;
    if (feature < 0)
      dp_ps_fail_expected(p, "ALL, CONSTRAINTS, GENERATED, METADATA, OPTIONS, PARTITIONS or "
                             "WATERMARKS after the merging strategy", NULL);
    next(p);
    if (mode == DP_LIKE_OVERWRITING &&
        (feature == DP_LIKE_ALL || feature == DP_LIKE_CONSTRAINTS || feature == DP_LIKE_PARTITIONS))
      dp_ps_fail_at(p, DIPPER_SYNTAX, span_from(p, ms),
                    "OVERWRITING %s is not a LIKE option: %s can only be included or excluded "
                    "(OVERWRITING applies to GENERATED, METADATA, OPTIONS and WATERMARKS)",
                    features[feature], feature == DP_LIKE_ALL ? "ALL" : features[feature]);
    for (int i = 0; i < v.n; i++) {
      const dp_ast_like_option *o = (const dp_ast_like_option *)v.items + i;
      if (o->feature == (dp_like_feature)feature)
        dp_ps_fail_at(p, DIPPER_DUPLICATE, span_from(p, ms),
                      "the LIKE options name %s twice; keep one strategy per feature",
                      features[feature]);
    }
    if (feature == DP_LIKE_ALL && v.n > 0)
      dp_ps_fail_at(p, DIPPER_SYNTAX, span_from(p, ms),
                    "%s ALL must come first in the LIKE options: it sets every feature, and the "
                    "ones after it make exceptions",
                    modes[mode]);
    dp_ast_like_option *o = dp_ps_vec_push(p, &v, sizeof *o);
    o->mode = (dp_like_mode)mode;
    o->feature = (dp_like_feature)feature;
    o->span = span_from(p, ms);
    accept(p, DP_TK_COMMA);
  } while (!at(p, DP_TK_RPAREN) && !at(p, DP_TK_EOF));
  dp_ps_expect(p, DP_TK_RPAREN, "')' to close the LIKE options");
  ct->nlike_options = v.n;
  ct->like_options = v.items;
}

static void parse_create_table(parser *p, dp_ast_stmt *s) {
  dp_ast_create_table *ct = &s->u.create_table;
  ct->if_not_exists = accept_if_not_exists(p);
  ct->name = dp_ps_name(p, "a table name");
  if (at(p, DP_TK_LPAREN)) parse_table_elements(p, ct);
  bool seen_comment = false, seen_partition = false, seen_with = false, seen_like = false;
  for (;;) {
    const dp_token *cs = cur(p);
    if (!seen_comment && accept_kw(p, DP_KW_COMMENT)) {
      seen_comment = true;
      ct->comment = parse_string(p, "a string after COMMENT");
    } else if (!seen_partition && accept_kw(p, DP_KW_PARTITIONED)) {
      seen_partition = true;
      dp_ps_expect_kw(p, DP_KW_BY, "BY after PARTITIONED");
      ct->partition = dp_ps_ident_list(p, &ct->npartition, "partition columns",
                                       "')' to close PARTITIONED BY (...)");
    } else if (!seen_with && accept_kw(p, DP_KW_WITH)) {
      seen_with = true;
      parse_options(p, &ct->options, cs);
    } else if (!seen_like && accept_kw(p, DP_KW_LIKE)) {
      seen_like = true;
      ct->like = dp_ps_name(p, "the table name after LIKE");
      if (accept(p, DP_TK_LPAREN)) parse_like_options(p, ct);
    } else if (accept_kw(p, DP_KW_AS)) {
      ct->as_query = dp_ps_query(p);
      break;
    } else if (at_kw(p, DP_KW_USING) || dp_ps_is_word(p, cs, "OPTIONS")) {
      spark_ddl(p, cs);
    } else {
      break;
    }
  }
  if (ct->ncols == 0 && ct->like.n == 0 && !ct->as_query && !at(p, DP_TK_LPAREN))
    dp_ps_fail_at(p, DIPPER_SYNTAX, s->span,
                  "CREATE TABLE needs columns (c TYPE, ...), LIKE other_table or AS SELECT ...");
}

static void parse_create_view(parser *p, dp_ast_stmt *s) {
  dp_ast_create_view *cv = &s->u.create_view;
  cv->if_not_exists = accept_if_not_exists(p);
  cv->name = dp_ps_name(p, "a view name");
  if (at(p, DP_TK_LPAREN))
    cv->cols = dp_ps_ident_list(p, &cv->ncols, "view columns", "')' to close the view columns");
  if (accept_kw(p, DP_KW_COMMENT)) parse_string(p, "a string after COMMENT");
  dp_ps_expect_kw(p, DP_KW_AS, "AS before the view's query");
  const dp_token *qs = cur(p);
  cv->query = dp_ps_query(p);
  cv->query_span = span_from(p, qs);
}

static void parse_class(parser *p, dp_ast_create_function *cf);

/* f(a INT, b STRING) RETURNS INT RETURN expr: the SQL form; or
** f(a INT, ..) RETURNS INT AS 'class' [USING JAR 'path']: a Java class whose
** types are declared (Spark needs them to check the query). */
static void parse_sql_function(parser *p, dp_ast_create_function *cf) {
  next(p); /* ( */
  vec names = {0}, types = {0}, spans = {0};
  if (!at(p, DP_TK_RPAREN)) {
    do {
      *(dp_ast_ident *)dp_ps_vec_push(p, &names, sizeof(dp_ast_ident)) =
          dp_ps_ident(p, "a parameter name");
      const dp_token *ts = cur(p);
      *(const dp_type **)dp_ps_vec_push(p, &types, sizeof(const dp_type *)) = dp_ps_type(p);
      *(dp_span *)dp_ps_vec_push(p, &spans, sizeof(dp_span)) = span_from(p, ts);
    } while (accept(p, DP_TK_COMMA));
  }
  dp_ps_expect(p, DP_TK_RPAREN, "')' to close the parameters");
  cf->nparams = names.n;
  cf->params = names.items;
  cf->param_types = types.items;
  cf->param_type_spans = spans.items;
  if (!dp_ps_accept_word(p, "RETURNS"))
    dp_ps_fail_expected(p, "RETURNS type after the parameters", "f(a INT) RETURNS INT RETURN a + 1");
  const dp_token *rs = cur(p);
  cf->returns = dp_ps_type(p);
  cf->returns_span = span_from(p, rs);
  if (accept_kw(p, DP_KW_AS)) { /* a Java class with its types declared */
    parse_class(p, cf);
    return;
  }
  if (at_kw(p, DP_KW_LANGUAGE)) {
    next(p);
    if (!dp_ps_accept_word(p, "SQL")) dp_ps_fail_expected(p, "SQL after LANGUAGE", NULL);
  }
  if (!dp_ps_accept_word(p, "RETURN"))
    dp_ps_fail_expected(p, "RETURN expression after the result type", NULL);
  cf->body = dp_ps_expr(p);
}

static void parse_create_function(parser *p, dp_ast_stmt *s) {
  dp_ast_create_function *cf = &s->u.create_function;
  cf->if_not_exists = accept_if_not_exists(p);
  cf->name = dp_ps_name(p, "a function name");
  if (at(p, DP_TK_LPAREN)) {
    parse_sql_function(p, cf);
    return;
  }
  dp_ps_expect_kw(p, DP_KW_AS, "AS 'class name' or (parameters) after the function name");
  parse_class(p, cf);
}

/* 'com.example.F' [LANGUAGE ..] [USING JAR 'path'], after AS. */
static void parse_class(parser *p, dp_ast_create_function *cf) {
  cf->class_span = cur(p)->span;
  cf->class_name = parse_string(p, "the implementing class in single quotes");
  if (accept_kw(p, DP_KW_LANGUAGE)) {
    const dp_token *t = cur(p);
    if (!dp_ps_is_word(p, t, "JAVA") && !dp_ps_is_word(p, t, "SCALA") && !dp_ps_is_word(p, t, "PYTHON") &&
        !dp_ps_is_word(p, t, "C"))
      dp_ps_fail_expected(p, "JAVA, SCALA, PYTHON or C after LANGUAGE", NULL);
    cf->language = dp_ps_token_text(p, t);
    next(p);
  }
  if (accept_kw(p, DP_KW_USING)) {
    if (!dp_ps_accept_word(p, "JAR")) dp_ps_fail_expected(p, "JAR after USING", NULL);
    cf->jar_span = cur(p)->span;
    cf->jar = parse_string(p, "the jar's path in single quotes after USING JAR");
    if (at(p, DP_TK_COMMA))
      dp_ps_fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span,
                    "CREATE FUNCTION takes one jar; put the classes into one jar");
  }
}

/* [IF NOT EXISTS] name [COMMENT '..'] [WITH (..)] of CREATE DATABASE|CATALOG. */
static void parse_namespace(parser *p, dp_ast_namespace *ns, bool catalog) {
  ns->if_not_exists = accept_if_not_exists(p);
  ns->name = dp_ps_name(p, catalog ? "a catalog name" : "a database name");
  if (catalog && ns->name.n > 1)
    dp_ps_fail_at(p, DIPPER_SYNTAX, ns->name.span, "a catalog name has one part; write CREATE CATALOG name");
  if (!catalog && ns->name.n > 2)
    dp_ps_fail_at(p, DIPPER_SYNTAX, ns->name.span,
                  "a database name is [catalog.]database; write CREATE DATABASE cat.db");
  if (!catalog && accept_kw(p, DP_KW_COMMENT)) ns->comment = parse_string(p, "a string after COMMENT");
  const dp_token *ws = cur(p);
  if (accept_kw(p, DP_KW_WITH)) parse_options(p, &ns->options, ws);
  else if (catalog)
    dp_ps_fail_expected(p, "WITH ('type' = 'generic_in_memory') after the catalog name", NULL);
}

static dp_ast_stmt *parse_create(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  bool or_replace = false, temporary, system = false;
  if (accept_kw(p, DP_KW_OR)) {
    dp_ps_expect_kw(p, DP_KW_REPLACE, "REPLACE after CREATE OR");
    or_replace = true;
  }
  temporary = accept_kw(p, DP_KW_TEMPORARY);
  if (temporary) system = accept_kw(p, DP_KW_SYSTEM);
  const dp_token *what = cur(p);
  dp_ast_stmt *s;
  if (accept_kw(p, DP_KW_TABLE)) {
    if (or_replace || system)
      dp_ps_fail_at(p, DIPPER_UNSUPPORTED, what->span,
                    "CREATE %s TABLE is not supported: DROP TABLE IF EXISTS first",
                    or_replace ? "OR REPLACE" : "TEMPORARY SYSTEM");
    s = new_stmt(p, DP_AS_CREATE_TABLE, start);
    s->u.create_table.temporary = temporary;
    parse_create_table(p, s);
  } else if (accept_kw(p, DP_KW_VIEW)) {
    if (system) dp_ps_fail_at(p, DIPPER_SYNTAX, what->span, "SYSTEM applies to functions, not views");
    s = new_stmt(p, DP_AS_CREATE_VIEW, start);
    s->u.create_view.temporary = temporary;
    s->u.create_view.or_replace = or_replace;
    parse_create_view(p, s);
  } else if (dp_ps_is_word(p, what, "DATABASE") || at_kw(p, DP_KW_CATALOG)) {
    bool catalog = at_kw(p, DP_KW_CATALOG);
    if (or_replace || temporary)
      dp_ps_fail_at(p, DIPPER_SYNTAX, what->span, "CREATE %s takes no %s",
                    catalog ? "CATALOG" : "DATABASE", or_replace ? "OR REPLACE" : "TEMPORARY");
    next(p);
    s = new_stmt(p, catalog ? DP_AS_CREATE_CATALOG : DP_AS_CREATE_DATABASE, start);
    parse_namespace(p, &s->u.namespace_, catalog);
  } else if (accept_kw(p, DP_KW_FUNCTION)) {
    if (or_replace)
      dp_ps_fail_at(p, DIPPER_UNSUPPORTED, what->span,
                    "CREATE OR REPLACE FUNCTION is not supported: DROP FUNCTION IF EXISTS first");
    s = new_stmt(p, DP_AS_CREATE_FUNCTION, start);
    s->u.create_function.temporary = temporary;
    s->u.create_function.system = system;
    parse_create_function(p, s);
  } else {
    dp_ps_fail_expected(p, "TABLE, VIEW, FUNCTION, DATABASE or CATALOG after CREATE", NULL);
  }
  return s;
}

static dp_ast_stmt *parse_drop(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_stmt *s = new_stmt(p, DP_AS_DROP, start);
  s->u.drop.temporary = accept_kw(p, DP_KW_TEMPORARY);
  if (s->u.drop.temporary) accept_kw(p, DP_KW_SYSTEM);
  if (accept_kw(p, DP_KW_TABLE)) s->u.drop.what = 'T';
  else if (accept_kw(p, DP_KW_VIEW)) s->u.drop.what = 'V';
  else if (accept_kw(p, DP_KW_FUNCTION)) s->u.drop.what = 'F';
  else if (!s->u.drop.temporary && dp_ps_accept_word(p, "DATABASE")) s->u.drop.what = 'D';
  else if (!s->u.drop.temporary && accept_kw(p, DP_KW_CATALOG)) s->u.drop.what = 'C';
  else dp_ps_fail_expected(p, "TABLE, VIEW, FUNCTION, DATABASE or CATALOG after DROP", NULL);
  s->u.drop.if_exists = accept_if_exists(p);
  s->u.drop.name = dp_ps_name(p, "the name to drop");
  if (s->u.drop.what == 'D') {
    if (dp_ps_accept_word(p, "CASCADE")) s->u.drop.cascade = true;
    else dp_ps_accept_word(p, "RESTRICT");
  }
  return s;
}

/* ALTER TABLE [IF EXISTS] t SET ('k' = 'v', ..) | RESET ('k', ..) | RENAME TO n */
static dp_ast_stmt *parse_alter(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  if (!accept_kw(p, DP_KW_TABLE)) {
    if (at_kw(p, DP_KW_VIEW) || dp_ps_is_word(p, cur(p), "DATABASE") || at_kw(p, DP_KW_FUNCTION))
      dp_ps_fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span,
                    "ALTER %.*s is not supported: ALTER TABLE changes a table's options or name; "
                    "drop and create the object again",
                    (int)cur(p)->span.len, p->text + cur(p)->span.off);
    dp_ps_fail_expected(p, "TABLE after ALTER", NULL);
  }
  dp_ast_stmt *s = new_stmt(p, DP_AS_ALTER_TABLE, start);
  dp_ast_alter *al = &s->u.alter;
  al->if_exists = accept_if_exists(p);
  al->name = dp_ps_name(p, "the table to alter");
  const dp_token *as = cur(p);
  if (accept_kw(p, DP_KW_SET)) {
    al->action = 'S';
    parse_options(p, &al->options, as);
    if (al->options.n == 0)
      dp_ps_fail_at(p, DIPPER_SYNTAX, al->options.span, "ALTER TABLE .. SET needs at least one 'key' = 'value'");
  } else if (accept_kw(p, DP_KW_RESET)) {
    al->action = 'R';
    dp_ps_expect(p, DP_TK_LPAREN, "'(' after RESET (ALTER TABLE t RESET ('key', ...))");
    vec keys = {0}, spans = {0};
    do {
      *(dp_span *)dp_ps_vec_push(p, &spans, sizeof(dp_span)) = cur(p)->span;
      *(const char **)dp_ps_vec_push(p, &keys, sizeof(const char *)) =
          parse_string(p, "an option key in single quotes");
    } while (accept(p, DP_TK_COMMA));
    dp_ps_expect(p, DP_TK_RPAREN, "')' to close the keys to reset");
    al->nkeys = keys.n;
    al->keys = keys.items;
    al->key_spans = spans.items;
  } else if (dp_ps_accept_word(p, "RENAME")) {
    if (!at_kw(p, DP_KW_TO))
      dp_ps_fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span,
                    "ALTER TABLE .. RENAME renames the table only (RENAME TO new_name); columns "
                    "cannot be renamed: create the table again");
    next(p);
    al->action = 'N';
    al->new_name = dp_ps_name(p, "the new table name after RENAME TO");
  } else if (dp_ps_is_word(p, as, "ADD") || dp_ps_is_word(p, as, "MODIFY") || at_kw(p, DP_KW_DROP)) {
    dp_ps_fail_at(p, DIPPER_UNSUPPORTED, as->span,
                  "ALTER TABLE .. %.*s (schema changes) is not supported: ALTER TABLE sets or "
                  "resets options and renames; create the table again for a new schema",
                  (int)as->span.len, p->text + as->span.off);
  } else {
    dp_ps_fail_expected(p, "SET (..), RESET (..) or RENAME TO after the table name", NULL);
  }
  return s;
}

bool dp_ps_ends_statement(const dp_token *t) {
  return t->kind == DP_TK_SEMI || t->kind == DP_TK_EOF;
}

/* A SET/RESET key or value written without quotes, as the Flink SQL client
** takes it: the raw text of the tokens up to `stop` ('=' for a key, ';' for
** a value).  Keys may not hold spaces (execution.runtime-mode). */
static const char *raw_run(parser *p, bool key, dp_span *span) {
  const dp_token *first = cur(p);
  while (!dp_ps_ends_statement(cur(p)) && !(key && at(p, DP_TK_EQ))) {
    const dp_token *t = cur(p);
    if (t->kind == DP_TK_ERROR && strncmp(t->err, "unterminated", 12) == 0) dp_ps_fail_lex(p, t);
    if (key && t != first && t->space_before)
      dp_ps_fail_at(p, DIPPER_SYNTAX, t->span,
                    "a SET key cannot hold spaces: write it in single quotes, SET 'key' = 'value'");
    next(p);
  }
  if (cur(p) == first) dp_ps_fail_expected(p, key ? "an option key" : "a value after '='", NULL);
  *span = span_from(p, first);
  return dp_ps_copy(p, p->text + first->span.off, span->len);
}

static dp_ast_stmt *parse_set(parser *p, bool reset) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_stmt *s = new_stmt(p, reset ? DP_AS_RESET : DP_AS_SET, start);
  dp_ast_set *set = &s->u.set;
  if (dp_ps_ends_statement(cur(p))) return s;
  if (at(p, DP_TK_STRING)) {
    set->key_span = cur(p)->span;
    set->key = parse_string(p, "an option key");
  } else {
    set->key = raw_run(p, true, &set->key_span);
  }
  if (reset) return s;
  dp_ps_expect(p, DP_TK_EQ, "'=' after the SET key (SET 'key' = 'value')");
  if (at(p, DP_TK_STRING) && dp_ps_ends_statement(peek(p, 1))) {
    set->value_span = cur(p)->span;
    set->value = parse_string(p, "a value");
  } else {
    set->value = raw_run(p, false, &set->value_span);
  }
  return s;
}

/* PARTITION (k = 'v', ...) of INSERT. */
static void parse_partition_spec(parser *p, dp_ast_insert *ins) {
  dp_ps_expect(p, DP_TK_LPAREN, "'(' after PARTITION");
  vec v = {0};
  do {
    const dp_token *ks = cur(p);
    dp_ast_option *o = dp_ps_vec_push(p, &v, sizeof *o);
    o->key = dp_ps_ident(p, "a partition column").name;
    dp_ps_expect(p, DP_TK_EQ, "'=' after the partition column");
    const dp_token *vs = cur(p);
    if (vs->kind == DP_TK_STRING) o->value = dp_ps_unquote(p, vs);
    else if (vs->kind == DP_TK_INTEGER || vs->kind == DP_TK_DECIMAL) o->value = dp_ps_token_text(p, vs);
    else dp_ps_fail_expected(p, "a literal partition value", NULL);
    next(p);
    o->value_span = vs->span;
    o->span = span_from(p, ks);
  } while (accept(p, DP_TK_COMMA));
  dp_ps_expect(p, DP_TK_RPAREN, "')' to close PARTITION (...)");
  ins->npartition = v.n;
  ins->partition = v.items;
}

dp_ast_stmt *dp_ps_insert(parser *p) {
  const dp_token *start = cur(p);
  if (!at_kw(p, DP_KW_INSERT)) dp_ps_fail_expected(p, "INSERT", NULL);
  next(p);
  dp_ast_stmt *s = new_stmt(p, DP_AS_INSERT, start);
  dp_ast_insert *ins = &s->u.insert;
  if (accept_kw(p, DP_KW_OVERWRITE)) ins->overwrite = true;
  else dp_ps_expect_kw(p, DP_KW_INTO, "INTO or OVERWRITE after INSERT");
  accept_kw(p, DP_KW_TABLE);
  ins->table = dp_ps_name(p, "the table to insert into");
  bool seen_partition = false, seen_cols = false;
  for (;;) {
    if (!seen_partition && accept_kw(p, DP_KW_PARTITION)) {
      seen_partition = true;
      parse_partition_spec(p, ins);
    } else if (!seen_cols && at(p, DP_TK_LPAREN) && !dp_ps_paren_starts_query(p)) {
      seen_cols = true;
      ins->cols = dp_ps_ident_list(p, &ins->ncols, "target columns",
                                   "')' to close the target columns");
    } else {
      break;
    }
  }
  if (!dp_ps_starts_query(cur(p)) && !at(p, DP_TK_LPAREN))
    dp_ps_fail_expected(p, "a query (SELECT ... or VALUES ...) after the INSERT target", NULL);
  ins->query = dp_ps_query(p);
  return s;
}

/* After BEGIN: INSERT ...; INSERT ...; END.  `semi_after_begin` for the SQL
** client's BEGIN STATEMENT SET; form. */
static void parse_set_body(parser *p, dp_ast_stmt *s) {
  vec inserts = {0};
  bool was = p->in_stmt_set;
  p->in_stmt_set = true;
  while (!at_kw(p, DP_KW_END)) {
    if (accept(p, DP_TK_SEMI)) continue;
    if (!at_kw(p, DP_KW_INSERT))
      dp_ps_fail_expected(p, "INSERT or END in the statement set",
                          ": a statement set holds only INSERT statements");
    const dp_token *is = cur(p);
    dp_ast_stmt *ins = dp_ps_insert(p);
    ins->span = span_from(p, is);
    *(dp_ast_stmt **)dp_ps_vec_push(p, &inserts, sizeof(dp_ast_stmt *)) = ins;
    if (!at_kw(p, DP_KW_END)) dp_ps_expect(p, DP_TK_SEMI, "';' after the INSERT in the statement set");
  }
  if (inserts.n == 0)
    dp_ps_fail_at(p, DIPPER_SYNTAX, cur(p)->span,
                  "a statement set needs at least one INSERT between BEGIN and END");
  next(p); /* END */
  p->in_stmt_set = was;
  s->u.statement_set.n = inserts.n;
  s->u.statement_set.inserts = inserts.items;
}

/* The statement forms that may follow EXECUTE, BEGIN or EXPLAIN and start a
** statement set. */
static dp_ast_stmt *parse_statement_set(parser *p, const dp_token *start, bool client_form) {
  dp_ast_stmt *s = new_stmt(p, DP_AS_STATEMENT_SET, start);
  dp_ps_expect_kw(p, DP_KW_STATEMENT, "STATEMENT SET");
  dp_ps_expect_kw(p, DP_KW_SET, "SET after STATEMENT");
  if (client_form) dp_ps_expect(p, DP_TK_SEMI, "';' after BEGIN STATEMENT SET");
  else dp_ps_expect_kw(p, DP_KW_BEGIN, "BEGIN after STATEMENT SET");
  parse_set_body(p, s);
  return s;
}

static dp_ast_stmt *parse_explain(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_stmt *s = new_stmt(p, DP_AS_EXPLAIN, start);
  if (accept_kw(p, DP_KW_PLAN)) {
    dp_ps_expect_kw(p, DP_KW_FOR, "FOR after EXPLAIN PLAN");
    s->u.explain.plan_only = true;
  }
  for (;;) {
    const dp_token *t = cur(p);
    if (accept_kw(p, DP_KW_CHANGELOG_MODE)) {
      s->u.explain.changelog_mode = true;
    } else if (dp_ps_is_word(p, t, "ESTIMATED_COST") || dp_ps_is_word(p, t, "JSON_EXECUTION_PLAN") ||
               dp_ps_is_word(p, t, "PLAN_ADVICE")) {
      dp_ps_fail_at(p, DIPPER_UNSUPPORTED, t->span,
                    "EXPLAIN %.*s is not supported: dipper explains the plan, with CHANGELOG_MODE "
                    "for the changelog of each node",
                    (int)t->span.len, p->text + t->span.off);
    } else {
      break;
    }
    if (!accept(p, DP_TK_COMMA)) break;
  }
  const dp_token *es = cur(p);
  dp_ast_stmt *inner;
  if (at_kw(p, DP_KW_EXECUTE) && is_kw(peek(p, 1), DP_KW_STATEMENT)) {
    next(p);
    inner = parse_statement_set(p, es, false);
  } else if (at_kw(p, DP_KW_STATEMENT)) {
    inner = parse_statement_set(p, es, false);
  } else if (at_kw(p, DP_KW_INSERT) || at_kw(p, DP_KW_SELECT) || at_kw(p, DP_KW_WITH) ||
             at_kw(p, DP_KW_VALUES) || at(p, DP_TK_LPAREN)) {
    inner = dp_ps_statement(p);
  } else {
    dp_ps_fail_expected(p, "a query, an INSERT or a statement set after EXPLAIN", NULL);
  }
  inner->span = span_from(p, es);
  s->u.explain.stmt = inner;
  return s;
}

/* What follows SHOW. */
static void parse_show(parser *p, dp_ast_stmt *s) {
  int what = 0;
  if (accept_kw(p, DP_KW_TABLES)) what = 'T';
  else if (accept_kw(p, DP_KW_VIEWS)) what = 'V';
  else if (accept_kw(p, DP_KW_FUNCTIONS)) what = 'F';
  else if (dp_ps_accept_word(p, "USER")) {
    if (!accept_kw(p, DP_KW_FUNCTIONS)) dp_ps_fail_expected(p, "FUNCTIONS after SHOW USER", NULL);
    what = 'U';
  } else if (dp_ps_accept_word(p, "DATABASES")) what = 'D';
  else if (dp_ps_accept_word(p, "CATALOGS")) what = 'K';
  else if (accept_kw(p, DP_KW_CURRENT)) {
    if (accept_kw(p, DP_KW_CATALOG)) what = 'c';
    else if (dp_ps_accept_word(p, "DATABASE")) what = 'd';
    else dp_ps_fail_expected(p, "CATALOG or DATABASE after SHOW CURRENT", NULL);
  } else if (accept_kw(p, DP_KW_CREATE)) {
    if (accept_kw(p, DP_KW_TABLE)) what = 'C';
    else if (accept_kw(p, DP_KW_VIEW)) what = 'W';
    else dp_ps_fail_expected(p, "TABLE or VIEW after SHOW CREATE", NULL);
    s->u.show.what = what;
    s->u.show.name = dp_ps_name(p, what == 'C' ? "a table name" : "a view name");
    return;
  } else {
    dp_ps_fail_expected(p, "TABLES, VIEWS, FUNCTIONS, DATABASES, CATALOGS, CURRENT or CREATE after SHOW", NULL);
  }
  s->u.show.what = what;
  if (what == 'c' || what == 'd') return;
  if (what != 'K' && (accept_kw(p, DP_KW_FROM) || accept_kw(p, DP_KW_IN))) {
    s->u.show.name = dp_ps_name(p, what == 'D' ? "a catalog name after FROM" : "a database name after FROM");
    if (s->u.show.name.n > (what == 'D' ? 1 : 2))
      dp_ps_fail_at(p, DIPPER_SYNTAX, s->u.show.name.span,
                    what == 'D' ? "SHOW DATABASES FROM takes a catalog name"
                                : "SHOW .. FROM takes [catalog.]database");
  }
  const dp_token *ls = cur(p);
  s->u.show.not_like = accept_kw(p, DP_KW_NOT);
  if (accept_kw(p, DP_KW_LIKE)) {
    s->u.show.like = parse_string(p, "a pattern in single quotes after LIKE");
  } else if (dp_ps_accept_word(p, "ILIKE")) {
    s->u.show.ilike = true;
    s->u.show.like = parse_string(p, "a pattern in single quotes after ILIKE");
  } else if (s->u.show.not_like) {
    dp_ps_fail_expected(p, "LIKE or ILIKE after NOT", NULL);
  }
  if (s->u.show.like) s->u.show.like_span = span_from(p, ls);
}

dp_ast_stmt *dp_ps_statement(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_stmt *s;
  switch ((dp_keyword)(start->kind == DP_TK_IDENT ? start->kw : DP_KW_NONE)) {
    case DP_KW_CREATE: s = parse_create(p); break;
    case DP_KW_DROP: s = parse_drop(p); break;
    case DP_KW_SET: s = parse_set(p, false); break;
    case DP_KW_RESET: s = parse_set(p, true); break;
    case DP_KW_INSERT: s = dp_ps_insert(p); break;
    case DP_KW_EXPLAIN: s = parse_explain(p); break;
    case DP_KW_EXECUTE:
      next(p);
      if (at_kw(p, DP_KW_STATEMENT)) s = parse_statement_set(p, start, false);
      else if (at_kw(p, DP_KW_INSERT)) s = dp_ps_insert(p);
      else dp_ps_fail_expected(p, "STATEMENT SET or INSERT after EXECUTE", NULL);
      break;
    case DP_KW_BEGIN:
      next(p);
      s = parse_statement_set(p, start, true);
      break;
    case DP_KW_USE:
      next(p);
      s = new_stmt(p, DP_AS_USE, start);
      if (at_kw(p, DP_KW_CATALOG) && !dp_ps_ends_statement(peek(p, 1))) {
        next(p);
        s->u.use.catalog = true;
      }
      s->u.use.name = dp_ps_name(p, "a catalog or database name after USE");
      if (s->u.use.name.n > (s->u.use.catalog ? 1 : 2))
        dp_ps_fail_at(p, DIPPER_SYNTAX, s->u.use.name.span,
                      s->u.use.catalog ? "USE CATALOG takes a catalog name"
                                       : "USE takes [catalog.]database");
      break;
    case DP_KW_SHOW:
      next(p);
      s = new_stmt(p, DP_AS_SHOW, start);
      parse_show(p, s);
      break;
    case DP_KW_DESCRIBE:
    case DP_KW_DESC:
      next(p);
      s = new_stmt(p, DP_AS_DESCRIBE, start);
      dp_ps_accept_word(p, "EXTENDED");
      s->u.describe = dp_ps_name(p, "a table or view name after DESCRIBE");
      break;
    case DP_KW_SELECT:
    case DP_KW_WITH:
    case DP_KW_VALUES:
      s = new_stmt(p, DP_AS_QUERY, start);
      s->u.query = dp_ps_query(p);
      break;
    default:
      if (dp_ps_is_word(p, start, "ALTER")) {
        s = parse_alter(p);
        break;
      }
      if (at(p, DP_TK_LPAREN)) {
        s = new_stmt(p, DP_AS_QUERY, start);
        s->u.query = dp_ps_query(p);
        break;
      }
      if (at_kw(p, DP_KW_END))
        dp_ps_fail_at(p, DIPPER_SYNTAX, start->span,
                      "END without a statement set: write EXECUTE STATEMENT SET BEGIN ... END");
      dp_ps_fail_expected(p, "a statement (SELECT, INSERT, CREATE, DROP, SET, EXPLAIN, ...)", NULL);
  }
  s->span = span_from(p, start);
  return s;
}
