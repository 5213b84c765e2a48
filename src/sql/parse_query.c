/*
** parse_query.c — queries: VALUES, SELECT with its clauses, set operations,
** WITH, ORDER BY / LIMIT / OFFSET / FETCH on a query, and the FROM clause
** (tables, subqueries, table functions, UNNEST, joins).
**
** Owns: the query grammar.  Does not own: expressions (parse_expr.c),
** statements around a query (parse_stmt.c).
*/
#include <string.h>

#include "sql/parser_int.h"

/* --------------------------------------------------------------- queries */

static dp_ast_from *parse_from_list(parser *p);
/* VALUES (1, 'a'), (2, 'b') — also VALUES 1, 2 for one column. */
static dp_ast_from *parse_values(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_from *f = dp_ps_alloc(p, sizeof *f);
  f->kind = DP_AF_VALUES;
  vec cells = {0};
  int nrows = 0, ncols = -1;
  do {
    const dp_token *rs = cur(p);
    int before = cells.n;
    if (at(p, DP_TK_LPAREN) || (at_kw(p, DP_KW_ROW) && peek(p, 1)->kind == DP_TK_LPAREN)) {
      if (at_kw(p, DP_KW_ROW)) next(p);
      next(p);
      dp_ps_expr_list(p, &cells, DP_TK_RPAREN, "')' to close the row of VALUES");
    } else {
      dp_ps_push_expr(p, &cells, dp_ps_expr(p));
    }
    int n = cells.n - before;
    if (n == 0) dp_ps_fail_at(p, DIPPER_SYNTAX, span_from(p, rs), "a row of VALUES needs a value");
    if (ncols < 0) ncols = n;
    else if (n != ncols)
      dp_ps_fail_at(p, DIPPER_SYNTAX, span_from(p, rs),
                    "this row of VALUES has %d values but the first row has %d: every row needs "
                    "the same number",
                    n, ncols);
    nrows++;
  } while (accept(p, DP_TK_COMMA));
  f->u.values.nrows = nrows;
  f->u.values.ncols = ncols;
  f->u.values.cells = cells.items;
  f->span = span_from(p, start);
  return f;
}

/* An alias after a table: [AS] t [(a, b)]. */
static void parse_alias(parser *p, dp_ast_alias *alias) {
  bool as = accept_kw(p, DP_KW_AS);
  /* `FROM t window` names the table "window" unless a WINDOW clause follows. */
  bool window_alias = at_kw(p, DP_KW_WINDOW) &&
                      !(dp_ps_is_name_token(peek(p, 1), false) && is_kw(peek(p, 2), DP_KW_AS));
  if (!as && !window_alias && !dp_ps_is_name_token(cur(p), true)) return;
  alias->name = dp_ps_ident(p, "an alias after AS");
  if (at(p, DP_TK_LPAREN)) {
    alias->cols = dp_ps_ident_list(p, &alias->ncols, "column aliases",
                                   "')' to close the column aliases");
  }
}

static dp_ast_select *parse_select(parser *p) {
  const dp_token *start = cur(p);
  next(p);
  dp_ast_select *s = dp_ps_alloc(p, sizeof *s);
  dp_ps_select_hints(p, start, s);
  if (accept_kw(p, DP_KW_DISTINCT)) s->distinct = true;
  else accept_kw(p, DP_KW_ALL);
  vec items = {0};
  for (;;) {
    const dp_token *is = cur(p);
    if (at_kw(p, DP_KW_FROM))
      dp_ps_fail_expected(p, "a select item", items.n ? ": remove the trailing ',' before FROM" : NULL);
    dp_ast_select_item *item = dp_ps_vec_push(p, &items, sizeof *item);
    item->expr = dp_ps_expr(p);
    if (accept_kw(p, DP_KW_AS)) {
      if (at(p, DP_TK_STRING)) { /* Spark: AS 'name' is not a string but a name. */
        dp_ps_fail_expected(p, "an alias after AS", ": aliases are names; quote them in backticks");
      }
      item->alias = dp_ps_ident(p, "an alias after AS");
    } else if (dp_ps_is_name_token(cur(p), true)) {
      item->alias = dp_ps_ident_of(p, cur(p));
      next(p);
    }
    item->span = span_from(p, is);
    if (!accept(p, DP_TK_COMMA)) break;
    if (at_kw(p, DP_KW_FROM))
      dp_ps_fail_at(p, DIPPER_SYNTAX, p->toks[p->pos - 1].span,
                    "unexpected ',' before FROM: remove the trailing comma after the last select "
                    "item");
  }
  s->nitems = items.n;
  s->items = items.items;
  const dp_token *t = cur(p);
  if (dp_ps_is_name_token(t, true) || t->kind == DP_TK_INTEGER || t->kind == DP_TK_STRING ||
      t->kind == DP_TK_DECIMAL)
    dp_ps_fail_expected(p, "',' or FROM after the select item", ": is a ',' missing between select items?");
  if (accept_kw(p, DP_KW_FROM)) s->from = parse_from_list(p);
  if (accept_kw(p, DP_KW_WHERE)) s->where = dp_ps_expr(p);
  if (at_kw(p, DP_KW_GROUP)) {
    const dp_token *gs = cur(p);
    next(p);
    dp_ps_expect_kw(p, DP_KW_BY, "BY after GROUP");
    vec v = {0};
    do {
      dp_ps_push_expr(p, &v, dp_ps_expr(p));
    } while (accept(p, DP_TK_COMMA));
    s->ngroup = v.n;
    s->group = v.items;
    s->group_span = span_from(p, gs);
  }
  if (accept_kw(p, DP_KW_HAVING)) s->having = dp_ps_expr(p);
  if (at_kw(p, DP_KW_WINDOW) && dp_ps_is_name_token(peek(p, 1), false) && is_kw(peek(p, 2), DP_KW_AS)) {
    next(p);
    vec v = {0};
    do {
      dp_ast_named_window *nw = dp_ps_vec_push(p, &v, sizeof *nw);
      nw->name = dp_ps_ident(p, "a window name");
      dp_ps_expect_kw(p, DP_KW_AS, "AS after the window name");
      nw->window = dp_ps_window_spec(p);
    } while (accept(p, DP_TK_COMMA));
    s->nwindows = v.n;
    s->windows = v.items;
  }
  if (accept_kw(p, DP_KW_QUALIFY)) s->qualify = dp_ps_expr(p);
  s->span = span_from(p, start);
  return s;
}

static dp_ast_query *new_query(parser *p, const dp_token *start) {
  dp_ast_query *q = dp_ps_alloc(p, sizeof *q);
  q->span = start->span;
  return q;
}

/* SELECT * FROM (q): gives a query that already has ORDER BY / LIMIT / WITH
** room for another one, as in (SELECT .. LIMIT 5) ORDER BY a. */
static dp_ast_query *wrap_query(parser *p, dp_ast_query *inner) {
  dp_ast_query *q = dp_ps_alloc(p, sizeof *q);
  dp_ast_select *s = dp_ps_alloc(p, sizeof *s);
  dp_ast_select_item *item = dp_ps_alloc(p, sizeof *item);
  dp_ast_expr *star = dp_ps_alloc(p, sizeof *star);
  dp_ast_from *f = dp_ps_alloc(p, sizeof *f);
  star->kind = DP_AX_STAR;
  star->span = inner->span;
  item->expr = star;
  item->span = inner->span;
  f->kind = DP_AF_SUBQUERY;
  f->span = inner->span;
  f->u.subquery.query = inner;
  s->nitems = 1;
  s->items = item;
  s->from = f;
  s->span = inner->span;
  q->select = s;
  q->span = inner->span;
  return q;
}

static dp_ast_query *parse_query_primary(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_query *q;
  if (at_kw(p, DP_KW_SELECT)) {
    q = new_query(p, start);
    q->select = parse_select(p);
  } else if (at_kw(p, DP_KW_VALUES)) {
    q = new_query(p, start);
    q->values = parse_values(p);
  } else if (at(p, DP_TK_LPAREN)) {
    next(p);
    q = dp_ps_query(p);
    dp_ps_expect(p, DP_TK_RPAREN, "')' to close the parenthesised query");
    return q;
  } else {
    dp_ps_fail_expected(p, "a query (SELECT, VALUES or '(')", NULL);
  }
  q->span = span_from(p, start);
  return q;
}

static dp_ast_query *set_node(parser *p, dp_ast_setop op, bool all, dp_ast_query *l,
                              dp_ast_query *r, const dp_token *start) {
  dp_ast_query *q = new_query(p, start);
  q->op = op;
  q->all = all;
  q->left = l;
  q->right = r;
  q->span = span_from(p, start);
  return q;
}

static bool set_quantifier(parser *p) {
  if (accept_kw(p, DP_KW_ALL)) return true;
  accept_kw(p, DP_KW_DISTINCT);
  return false;
}

static dp_ast_query *parse_intersect(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_query *q = parse_query_primary(p);
  while (accept_kw(p, DP_KW_INTERSECT)) {
    bool all = set_quantifier(p);
    q = set_node(p, DP_SET_INTERSECT, all, q, parse_query_primary(p), start);
  }
  return q;
}

static dp_ast_query *parse_set_expr(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_query *q = parse_intersect(p);
  while (at_kw(p, DP_KW_UNION) || at_kw(p, DP_KW_EXCEPT)) {
    dp_ast_setop op = at_kw(p, DP_KW_UNION) ? DP_SET_UNION : DP_SET_EXCEPT;
    next(p);
    bool all = set_quantifier(p);
    q = set_node(p, op, all, q, parse_intersect(p), start);
  }
  return q;
}

static bool has_tail(const dp_ast_query *q) {
  return q->norder > 0 || q->limit || q->offset;
}

/* LIMIT n [OFFSET m] | LIMIT m, n | OFFSET m [ROW|ROWS] [FETCH FIRST|NEXT n ROW|ROWS ONLY] */
static void parse_limit(parser *p, dp_ast_expr **limit, dp_ast_expr **offset, dp_span *span) {
  const dp_token *start = cur(p);
  bool any = false;
  if (accept_kw(p, DP_KW_LIMIT)) {
    any = true;
    *limit = dp_ps_binary(p, PREC_BITOR);
    if (accept(p, DP_TK_COMMA)) { /* MySQL's LIMIT offset, count */
      *offset = *limit;
      *limit = dp_ps_binary(p, PREC_BITOR);
    } else if (accept_kw(p, DP_KW_OFFSET)) {
      *offset = dp_ps_binary(p, PREC_BITOR);
    }
  } else if (at_kw(p, DP_KW_OFFSET) || at_kw(p, DP_KW_FETCH)) {
    any = true;
    if (accept_kw(p, DP_KW_OFFSET)) {
      *offset = dp_ps_binary(p, PREC_BITOR);
      if (!accept_kw(p, DP_KW_ROWS)) accept_kw(p, DP_KW_ROW);
    }
    if (accept_kw(p, DP_KW_FETCH)) {
      if (!accept_kw(p, DP_KW_FIRST) && !accept_kw(p, DP_KW_NEXT))
        dp_ps_fail_expected(p, "FIRST or NEXT after FETCH", NULL);
      *limit = dp_ps_binary(p, PREC_BITOR);
      if (!accept_kw(p, DP_KW_ROWS) && !accept_kw(p, DP_KW_ROW))
        dp_ps_fail_expected(p, "ROWS after FETCH FIRST n", NULL);
      dp_ps_expect_kw(p, DP_KW_ONLY, "ONLY after FETCH FIRST n ROWS");
    }
  }
  if (any) *span = span_from(p, start);
}

static dp_ast_query *query_body(parser *p) {
  const dp_token *start = cur(p);
  vec ctes = {0};
  if (accept_kw(p, DP_KW_WITH)) {
    do {
      dp_ast_cte *c = dp_ps_vec_push(p, &ctes, sizeof *c);
      c->name = dp_ps_ident(p, "a name for the WITH query");
      if (at(p, DP_TK_LPAREN))
        c->cols = dp_ps_ident_list(p, &c->ncols, "column names", "')' to close the column names");
      dp_ps_expect_kw(p, DP_KW_AS, "AS after the WITH name (WITH name AS (SELECT ...))");
      dp_ps_expect(p, DP_TK_LPAREN, "'(' before the WITH query");
      c->query = dp_ps_query(p);
      dp_ps_expect(p, DP_TK_RPAREN, "')' to close the WITH query");
    } while (accept(p, DP_TK_COMMA));
  }
  dp_ast_query *q = parse_set_expr(p);
  if (ctes.n) {
    if (q->nctes) q = wrap_query(p, q);
    q->nctes = ctes.n;
    q->ctes = ctes.items;
  }
  bool order = at_kw(p, DP_KW_ORDER);
  bool limit = at_kw(p, DP_KW_LIMIT) || at_kw(p, DP_KW_OFFSET) || at_kw(p, DP_KW_FETCH);
  if ((order || limit) && has_tail(q)) q = wrap_query(p, q);
  if (order) {
    const dp_token *os = cur(p);
    next(p);
    dp_ps_expect_kw(p, DP_KW_BY, "BY after ORDER");
    dp_ps_order_list(p, &q->norder, &q->order);
    q->order_span = span_from(p, os);
  }
  parse_limit(p, &q->limit, &q->offset, &q->limit_span);
  q->span = span_from(p, start);
  return q;
}

dp_ast_query *dp_ps_query(parser *p) {
  dp_ps_enter(p);
  dp_ast_query *q = query_body(p);
  leave(p);
  return q;
}

/* ----------------------------------------------------------------- FROM */

/* After '(' in FROM: a query, or a parenthesised join? Skip nested '('. */
bool dp_ps_paren_starts_query(const parser *p) {
  int k = 1;
  while (peek(p, k)->kind == DP_TK_LPAREN) k++;
  return dp_ps_starts_query(peek(p, k));
}

static dp_ast_from *new_from(parser *p, dp_ast_from_kind kind) {
  dp_ast_from *f = dp_ps_alloc(p, sizeof *f);
  f->kind = kind;
  return f;
}

static dp_ast_from *from_primary_body(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_from *f;
  bool lateral = accept_kw(p, DP_KW_LATERAL);
  if (at_kw(p, DP_KW_TABLE) && peek(p, 1)->kind == DP_TK_LPAREN) {
    next(p);
    next(p);
    f = new_from(p, DP_AF_TVF);
    const dp_token *cs = cur(p);
    dp_ast_expr *call = dp_ps_expr(p);
    if (call->kind != DP_AX_CALL || call->parens)
      dp_ps_fail_at(p, DIPPER_SYNTAX, span_from(p, cs),
                    "TABLE(...) in FROM takes a table function call, e.g. TABLE(TUMBLE(TABLE t, "
                    "DESCRIPTOR(ts), INTERVAL '1' MINUTE))");
    dp_ps_expect(p, DP_TK_RPAREN,
                 dp_ps_fmt(p, "')' to close TABLE(%s(...))",
                           call->u.call.name.parts[call->u.call.name.n - 1].name));
    f->u.tvf.call = call;
    f->u.tvf.lateral = lateral;
  } else if (at(p, DP_TK_LPAREN) && (lateral || dp_ps_paren_starts_query(p))) {
    next(p);
    dp_ast_query *q = dp_ps_query(p);
    dp_ps_expect(p, DP_TK_RPAREN, "')' to close the subquery");
    if (!lateral && q->values && !q->nctes && !has_tail(q)) {
      f = q->values;
    } else {
      f = new_from(p, DP_AF_SUBQUERY);
      f->u.subquery.query = q;
      f->u.subquery.lateral = lateral;
    }
  } else if (lateral) {
    dp_ps_fail_expected(p, "TABLE(...) or '(' after LATERAL", NULL);
  } else if (at(p, DP_TK_LPAREN)) {
    next(p);
    f = parse_from_list(p);
    dp_ps_expect(p, DP_TK_RPAREN, "')' to close the parenthesised join");
    f->span = span_from(p, start);
    return f;
  } else if (at_kw(p, DP_KW_UNNEST) && peek(p, 1)->kind == DP_TK_LPAREN) {
    next(p);
    next(p);
    f = new_from(p, DP_AF_UNNEST);
    vec args = {0};
    dp_ps_expr_list(p, &args, DP_TK_RPAREN, "')' to close UNNEST(...)");
    if (args.n == 0) dp_ps_fail_at(p, DIPPER_SYNTAX, span_from(p, start), "UNNEST needs an array or map");
    f->u.unnest.n = args.n;
    f->u.unnest.args = args.items;
    if (at_kw(p, DP_KW_WITH) && is_kw(peek(p, 1), DP_KW_ORDINALITY)) {
      next(p);
      next(p);
      f->u.unnest.with_ordinality = true;
    }
  } else if (at_kw(p, DP_KW_VALUES)) {
    f = parse_values(p);
  } else if (at_kw(p, DP_KW_MATCH_RECOGNIZE)) {
    dp_ps_fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span, "MATCH_RECOGNIZE is not supported");
  } else {
    dp_ast_name name = dp_ps_name(p, "a table name");
    if (at(p, DP_TK_LPAREN)) {
      f = new_from(p, DP_AF_TVF);
      f->u.tvf.call = dp_ps_call(p, name, start);
    } else {
      f = new_from(p, DP_AF_TABLE);
      f->u.table.name = name;
    }
  }
  if (f->kind == DP_AF_TABLE && at_kw(p, DP_KW_FOR)) {
    next(p);
    dp_ps_expect_kw(p, DP_KW_SYSTEM_TIME, "SYSTEM_TIME after FOR (FOR SYSTEM_TIME AS OF t.ts)");
    dp_ps_expect_kw(p, DP_KW_AS, "AS OF after FOR SYSTEM_TIME");
    dp_ps_expect_kw(p, DP_KW_OF, "OF after FOR SYSTEM_TIME AS");
    f->u.table.as_of = dp_ps_binary(p, PREC_BITOR);
  }
  parse_alias(p, &f->alias);
  if (at_kw(p, DP_KW_MATCH_RECOGNIZE))
    dp_ps_fail_at(p, DIPPER_UNSUPPORTED, cur(p)->span, "MATCH_RECOGNIZE is not supported");
  if (f->kind == DP_AF_TABLE && !f->u.table.as_of && at_kw(p, DP_KW_FOR)) {
    next(p);
    dp_ps_expect_kw(p, DP_KW_SYSTEM_TIME, "SYSTEM_TIME after FOR (FOR SYSTEM_TIME AS OF t.ts)");
    dp_ps_expect_kw(p, DP_KW_AS, "AS OF after FOR SYSTEM_TIME");
    dp_ps_expect_kw(p, DP_KW_OF, "OF after FOR SYSTEM_TIME AS");
    f->u.table.as_of = dp_ps_binary(p, PREC_BITOR);
  }
  f->span = span_from(p, start);
  return f;
}

static dp_ast_from *parse_from_primary(parser *p) {
  dp_ps_enter(p);
  dp_ast_from *f = from_primary_body(p);
  leave(p);
  return f;
}

/* The join keywords before JOIN; false when the next tokens start no join.
** ASOF [LEFT [OUTER]] JOIN sets *asof. */
static bool parse_join_kind(parser *p, dp_ast_join_kind *kind, bool *natural, bool *asof) {
  *natural = accept_kw(p, DP_KW_NATURAL);
  *asof = !*natural && at_kw(p, DP_KW_ASOF) &&
          (is_kw(peek(p, 1), DP_KW_JOIN) || is_kw(peek(p, 1), DP_KW_LEFT));
  if (*asof) {
    next(p);
    *kind = DP_JOIN_INNER;
    if (accept_kw(p, DP_KW_LEFT)) {
      accept_kw(p, DP_KW_OUTER);
      *kind = DP_JOIN_LEFT;
    }
    dp_ps_expect_kw(p, DP_KW_JOIN, "JOIN after ASOF (ASOF [LEFT] JOIN)");
    return true;
  }
  if (accept_kw(p, DP_KW_JOIN)) {
    *kind = DP_JOIN_INNER;
    return true;
  }
  if (accept_kw(p, DP_KW_INNER)) *kind = DP_JOIN_INNER;
  else if (accept_kw(p, DP_KW_CROSS)) *kind = DP_JOIN_CROSS;
  else if (accept_kw(p, DP_KW_LEFT)) {
    if (accept_kw(p, DP_KW_SEMI)) *kind = DP_JOIN_LEFT_SEMI;
    else if (accept_kw(p, DP_KW_ANTI)) *kind = DP_JOIN_LEFT_ANTI;
    else {
      accept_kw(p, DP_KW_OUTER);
      *kind = DP_JOIN_LEFT;
    }
  } else if (accept_kw(p, DP_KW_RIGHT)) {
    accept_kw(p, DP_KW_OUTER);
    *kind = DP_JOIN_RIGHT;
  } else if (accept_kw(p, DP_KW_FULL)) {
    accept_kw(p, DP_KW_OUTER);
    *kind = DP_JOIN_FULL;
  } else {
    if (*natural) dp_ps_fail_expected(p, "JOIN after NATURAL", NULL);
    return false;
  }
  dp_ps_expect_kw(p, DP_KW_JOIN, "JOIN");
  return true;
}

/* After ASOF [LEFT] JOIN r: [MATCH_CONDITION (l.t >= r.t)] [ON .. | USING (..)]
** [TOLERANCE expr].  Without MATCH_CONDITION, ON holds the time condition. */
static void parse_asof_tail(parser *p, dp_ast_from *j) {
  j->u.join.asof = true;
  if (accept_kw(p, DP_KW_MATCH_CONDITION)) {
    dp_ps_expect(p, DP_TK_LPAREN, "'(' after MATCH_CONDITION (MATCH_CONDITION (l.t >= r.t))");
    j->u.join.match = dp_ps_expr(p);
    dp_ps_expect(p, DP_TK_RPAREN, "')' to close MATCH_CONDITION (...)");
  }
  if (accept_kw(p, DP_KW_ON)) {
    j->u.join.on = dp_ps_expr(p);
  } else if (accept_kw(p, DP_KW_USING)) {
    j->u.join.using_ = dp_ps_ident_list(p, &j->u.join.nusing, "join columns",
                                        "')' to close USING (...)");
  } else if (!j->u.join.match) {
    dp_ps_fail_expected(p, "MATCH_CONDITION (l.t >= r.t) or ON <condition> after the table of an "
                           "ASOF JOIN", NULL);
  }
  if (accept_kw(p, DP_KW_TOLERANCE)) j->u.join.tolerance = dp_ps_expr(p);
}

static dp_ast_from *parse_from_join(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_from *left = parse_from_primary(p);
  dp_ast_join_kind kind;
  bool natural, asof;
  while (parse_join_kind(p, &kind, &natural, &asof)) {
    dp_ast_from *j = new_from(p, DP_AF_JOIN);
    j->u.join.kind = kind;
    j->u.join.natural = natural;
    j->u.join.left = left;
    j->u.join.right = parse_from_primary(p);
    if (asof) {
      parse_asof_tail(p, j);
    } else if (kind != DP_JOIN_CROSS && !natural) {
      if (accept_kw(p, DP_KW_ON)) {
        j->u.join.on = dp_ps_expr(p);
      } else if (accept_kw(p, DP_KW_USING)) {
        j->u.join.using_ = dp_ps_ident_list(p, &j->u.join.nusing, "join columns",
                                            "')' to close USING (...)");
      } else {
        dp_ps_fail_expected(p, "ON <condition> or USING (columns) after the joined table",
                            ": write CROSS JOIN for a join without a condition");
      }
    }
    j->span = span_from(p, start);
    left = j;
  }
  return left;
}

static dp_ast_from *parse_from_list(parser *p) {
  const dp_token *start = cur(p);
  dp_ast_from *left = parse_from_join(p);
  while (accept(p, DP_TK_COMMA)) {
    dp_ast_from *j = new_from(p, DP_AF_JOIN);
    j->u.join.kind = DP_JOIN_COMMA;
    j->u.join.left = left;
    j->u.join.right = parse_from_join(p);
    j->span = span_from(p, start);
    left = j;
  }
  return left;
}
