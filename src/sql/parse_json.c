/*
** parse_json.c — the SQL/JSON call forms; see parse_json.h.
**
**   JSON_VALUE(j, path [RETURNING type] [b ON EMPTY] [b ON ERROR])
**     b: NULL | ERROR | DEFAULT expr
**     -> json_value(j, path) without clauses, else
**        json_value(j, path, CAST(NULL AS type), 'b', default, 'b', default)
**        (type STRING when not written; default NULL unless DEFAULT)
**   JSON_QUERY(j, path [wrapper] [b ON EMPTY] [b ON ERROR])
**     wrapper: WITHOUT [ARRAY] WRAPPER | WITH [CONDITIONAL|UNCONDITIONAL] [ARRAY] WRAPPER
**     b: NULL | EMPTY ARRAY | EMPTY OBJECT | ERROR
**     -> json_query(j, path [, 'WITHOUT'|'CONDITIONAL'|'UNCONDITIONAL', 'b', 'b'])
**   JSON_EXISTS(j, path [TRUE|FALSE|UNKNOWN|ERROR ON ERROR])
**     -> json_exists(j, path [, 'b'])
**   JSON_OBJECT([[KEY] k VALUE v [, ...]] [NULL|ABSENT ON NULL])
**     -> json_object('NULL'|'ABSENT', k, v, ...)       (default NULL ON NULL)
**   JSON_ARRAY([v [, ...]] [NULL|ABSENT ON NULL])
**     -> json_array('NULL'|'ABSENT', v, ...)           (default ABSENT ON NULL)
**   x IS [NOT] JSON [VALUE|SCALAR|ARRAY|OBJECT]  -> [NOT] is_json(x, 'KIND')
**   JSON_ARRAYAGG, JSON_OBJECTAGG               -> over LISTAGG (json_agg below); the object's
**                                                  keys sorted by json_query(obj, '$')
*/
#include <string.h>

#include "sql/parse_json.h"

static dp_ast_expr *node(parser *p, dp_ast_expr_kind kind, const dp_token *at_tok) {
  dp_ast_expr *e = dp_ps_alloc(p, sizeof *e);
  e->kind = kind;
  e->span = at_tok->span;
  return e;
}

static dp_ast_expr *str_lit(parser *p, const char *text, const dp_token *at_tok) {
  dp_ast_expr *e = node(p, DP_AX_LITERAL, at_tok);
  e->u.lit.kind = DP_LIT_STRING;
  e->u.lit.text = text;
  return e;
}

static dp_ast_expr *null_lit(parser *p, const dp_token *at_tok) {
  dp_ast_expr *e = node(p, DP_AX_LITERAL, at_tok);
  e->u.lit.kind = DP_LIT_NULL;
  return e;
}

static bool word(parser *p, const char *w) { return dp_ps_is_word(p, cur(p), w); }

static bool same_name(const char *a, const char *upper) {
  for (; *a && *upper; a++, upper++) {
    char c = *a >= 'a' && *a <= 'z' ? (char)(*a - 'a' + 'A') : *a;
    if (c != *upper) return false;
  }
  return !*a && !*upper;
}

static void expect_word(parser *p, const char *w, const char *what) {
  if (!dp_ps_accept_word(p, w)) dp_ps_fail_expected(p, what, NULL);
}

/* One `b ON EMPTY|ERROR` of JSON_VALUE into mode/default; false when the
** next tokens are not one. */
static bool value_behaviour(parser *p, const char *fn, dp_ast_expr **mode, dp_ast_expr **dflt,
                            bool *empty) {
  const dp_token *t = cur(p);
  const char *m;
  dp_ast_expr *d = NULL;
  if (word(p, "NULL")) m = "NULL";
  else if (word(p, "ERROR")) m = "ERROR";
  else if (word(p, "DEFAULT")) m = "DEFAULT";
  else return false;
  next(p);
  if (m[0] == 'D') d = dp_ps_expr(p);
  dp_ps_expect_kw(p, DP_KW_ON, dp_ps_fmt(p, "ON EMPTY or ON ERROR after %s in %s", m, fn));
  if (dp_ps_accept_word(p, "EMPTY")) *empty = true;
  else if (dp_ps_accept_word(p, "ERROR")) *empty = false;
  else dp_ps_fail_expected(p, dp_ps_fmt(p, "EMPTY or ERROR after ON in %s", fn), NULL);
  *mode = str_lit(p, m, t);
  *dflt = d ? d : null_lit(p, t);
  return true;
}

static void json_value(parser *p, vec *args, const dp_token *start) {
  dp_ast_expr *ret = NULL, *em = NULL, *ed = NULL, *rm = NULL, *rd = NULL;
  if (dp_ps_accept_word(p, "RETURNING")) {
    const dp_token *ts = cur(p);
    ret = node(p, DP_AX_CAST, ts);
    ret->u.cast.arg = null_lit(p, ts);
    ret->u.cast.type = dp_ps_type(p);
    ret->u.cast.type_span = span_from(p, ts);
    ret->span = ret->u.cast.type_span;
  }
  for (int k = 0; k < 2; k++) {
    dp_ast_expr *m, *d;
    bool empty;
    const dp_token *t = cur(p);
    if (!value_behaviour(p, "JSON_VALUE", &m, &d, &empty)) break;
    if (empty ? em != NULL || rm != NULL : rm != NULL)
      dp_ps_fail_at(p, DIPPER_SYNTAX, t->span,
                    "JSON_VALUE: write at most one ON EMPTY clause, then at most one ON ERROR");
    if (empty) em = m, ed = d;
    else rm = m, rd = d;
  }
  if (!ret && !em && !rm) return;
  if (!ret) {
    ret = node(p, DP_AX_CAST, start);
    ret->u.cast.arg = null_lit(p, start);
    ret->u.cast.type = dp_type_of(DP_T_STRING);
    ret->u.cast.type_span = start->span;
  }
  dp_ps_push_expr(p, args, ret);
  dp_ps_push_expr(p, args, em ? em : str_lit(p, "NULL", start));
  dp_ps_push_expr(p, args, ed ? ed : null_lit(p, start));
  dp_ps_push_expr(p, args, rm ? rm : str_lit(p, "NULL", start));
  dp_ps_push_expr(p, args, rd ? rd : null_lit(p, start));
}

/* NULL | EMPTY ARRAY | EMPTY OBJECT | ERROR, then ON EMPTY|ERROR. */
static bool query_behaviour(parser *p, const char **mode, bool *empty) {
  if (word(p, "NULL") && dp_ps_is_word(p, peek(p, 1), "ON")) *mode = "NULL", next(p);
  else if (word(p, "ERROR") && dp_ps_is_word(p, peek(p, 1), "ON")) *mode = "ERROR", next(p);
  else if (word(p, "EMPTY")) {
    next(p);
    if (dp_ps_accept_word(p, "ARRAY")) *mode = "EMPTY ARRAY";
    else if (dp_ps_accept_word(p, "OBJECT")) *mode = "EMPTY OBJECT";
    else dp_ps_fail_expected(p, "ARRAY or OBJECT after EMPTY in JSON_QUERY", NULL);
  } else {
    return false;
  }
  dp_ps_expect_kw(p, DP_KW_ON, "ON EMPTY or ON ERROR in JSON_QUERY");
  if (dp_ps_accept_word(p, "EMPTY")) *empty = true;
  else if (dp_ps_accept_word(p, "ERROR")) *empty = false;
  else dp_ps_fail_expected(p, "EMPTY or ERROR after ON in JSON_QUERY", NULL);
  return true;
}

static void json_query(parser *p, vec *args, const dp_token *start) {
  const char *wrap = NULL, *on_empty = NULL, *on_error = NULL;
  if (dp_ps_accept_word(p, "WITHOUT")) {
    wrap = "WITHOUT";
    dp_ps_accept_word(p, "ARRAY");
    expect_word(p, "WRAPPER", "WRAPPER in JSON_QUERY(... WITHOUT [ARRAY] WRAPPER)");
  } else if (word(p, "WITH")) {
    next(p);
    wrap = "UNCONDITIONAL";
    if (dp_ps_accept_word(p, "CONDITIONAL")) wrap = "CONDITIONAL";
    else dp_ps_accept_word(p, "UNCONDITIONAL");
    dp_ps_accept_word(p, "ARRAY");
    expect_word(p, "WRAPPER", "WRAPPER in JSON_QUERY(... WITH [CONDITIONAL|UNCONDITIONAL] [ARRAY] WRAPPER)");
  }
  for (int k = 0; k < 2; k++) {
    const char *m;
    bool empty;
    const dp_token *t = cur(p);
    if (!query_behaviour(p, &m, &empty)) break;
    if (empty ? on_empty || on_error : on_error != NULL)
      dp_ps_fail_at(p, DIPPER_SYNTAX, t->span,
                    "JSON_QUERY: write at most one ON EMPTY clause, then at most one ON ERROR");
    if (empty) on_empty = m;
    else on_error = m;
  }
  if (!wrap && !on_empty && !on_error) return;
  dp_ps_push_expr(p, args, str_lit(p, wrap ? wrap : "WITHOUT", start));
  dp_ps_push_expr(p, args, str_lit(p, on_empty ? on_empty : "NULL", start));
  dp_ps_push_expr(p, args, str_lit(p, on_error ? on_error : "NULL", start));
}

static void json_exists(parser *p, vec *args) {
  const dp_token *t = cur(p);
  const char *m = word(p, "TRUE") ? "TRUE" : word(p, "FALSE") ? "FALSE" : word(p, "UNKNOWN") ? "UNKNOWN"
                  : word(p, "ERROR") ? "ERROR" : NULL;
  if (!m) return;
  next(p);
  dp_ps_expect_kw(p, DP_KW_ON, "ON ERROR in JSON_EXISTS(json, path {TRUE|FALSE|UNKNOWN|ERROR} ON ERROR)");
  expect_word(p, "ERROR", "ERROR after ON in JSON_EXISTS");
  dp_ps_push_expr(p, args, str_lit(p, m, t));
}

/* [NULL|ABSENT] ON NULL at the cursor: the mode, or NULL (nothing consumed). */
static const char *on_null(parser *p) {
  if (!(word(p, "NULL") || word(p, "ABSENT")) || !dp_ps_is_word(p, peek(p, 1), "ON") ||
      !dp_ps_is_word(p, peek(p, 2), "NULL"))
    return NULL;
  const char *m = word(p, "NULL") ? "NULL" : "ABSENT";
  next(p), next(p), next(p);
  return m;
}

/* The arguments of JSON_OBJECT or JSON_ARRAY, after '('. */
static void json_build(parser *p, vec *args, bool object, const dp_token *start) {
  vec items = {0};
  const char *mode = NULL;
  while (!at(p, DP_TK_RPAREN) && !at(p, DP_TK_EOF)) {
    if ((mode = on_null(p)) != NULL) break;
    if (object) {
      accept_kw(p, DP_KW_KEY);
      dp_ps_push_expr(p, &items, dp_ps_expr(p));
      expect_word(p, "VALUE", "VALUE after the key in JSON_OBJECT(KEY k VALUE v, ...)");
    }
    dp_ps_push_expr(p, &items, dp_ps_expr(p));
    if (!accept(p, DP_TK_COMMA)) {
      mode = on_null(p);
      break;
    }
  }
  dp_ps_push_expr(p, args, str_lit(p, mode ? mode : object ? "NULL" : "ABSENT", start));
  for (int i = 0; i < items.n; i++) dp_ps_push_expr(p, args, ((dp_ast_expr **)items.items)[i]);
}

static dp_ast_expr *call_of(parser *p, const char *name, int n, dp_ast_expr **args, const dp_token *at_tok) {
  dp_ast_expr *c = node(p, DP_AX_CALL, at_tok);
  dp_ast_ident *id = dp_ps_alloc(p, sizeof *id);
  id->name = name;
  id->span = at_tok->span;
  c->u.call.name.n = 1;
  c->u.call.name.parts = id;
  c->u.call.name.span = at_tok->span;
  dp_ast_expr **a = dp_ps_alloc(p, (size_t)n * sizeof *a);
  memcpy(a, args, (size_t)n * sizeof *a);
  c->u.call.nargs = n;
  c->u.call.args = a;
  return c;
}

/* JSON_ARRAYAGG(v [ON NULL]) and JSON_OBJECTAGG([KEY] k VALUE v [ON NULL]),
** as the aggregate LISTAGG of each row's JSON text:
**   concat('[', coalesce(listagg(item, ','), ''), ']')
**   item = json_string(v), or coalesce(json_string(v), 'null') for NULL ON NULL
**   concat('{', coalesce(listagg(entry, ','), ''), '}')
**   entry = the inside of json_object(mode, k, v) ('"k":v'), NULL when empty
** so they aggregate wherever LISTAGG does, in arrival order, on every state
** backend; json_object gives a NULL key its error.  The object is then read
** by json_query(obj, '$'), which writes it with its keys sorted, as Flink. */
static void json_agg(parser *p, dp_ast_expr *e, bool object, const dp_token *start) {
  dp_ast_expr *k = NULL, *v;
  if (object) {
    accept_kw(p, DP_KW_KEY);
    k = dp_ps_expr(p);
    expect_word(p, "VALUE", "VALUE after the key in JSON_OBJECTAGG(KEY k VALUE v)");
  }
  v = dp_ps_expr(p);
  const char *mode = on_null(p);
  if (!mode) mode = object ? "NULL" : "ABSENT";
  bool keep_nulls = mode[0] == 'N';
  dp_ast_expr *item;
  if (object) {
    dp_ast_expr *oa[3] = {str_lit(p, mode, start), k, v};
    dp_ast_expr *obj = call_of(p, "json_object", 3, oa, start);
    dp_ast_expr *len_a[1] = {obj};
    dp_ast_expr *len = node(p, DP_AX_BINARY, start);
    len->u.binary.op = DP_BOP_SUB;
    len->u.binary.left = call_of(p, "char_length", 1, len_a, start);
    dp_ast_expr *two = node(p, DP_AX_LITERAL, start);
    two->u.lit.kind = DP_LIT_INTEGER;
    two->u.lit.text = "2";
    len->u.binary.right = two;
    dp_ast_expr *sa[3] = {obj, two, len};
    dp_ast_expr *na[2] = {call_of(p, "substring", 3, sa, start), str_lit(p, "", start)};
    item = call_of(p, "nullif", 2, na, start);
  } else {
    dp_ast_expr *ja[1] = {v};
    item = call_of(p, "json_string", 1, ja, start);
    if (keep_nulls) {
      dp_ast_expr *ca[2] = {item, str_lit(p, "null", start)};
      item = call_of(p, "coalesce", 2, ca, start);
    }
  }
  dp_ast_expr *la[2] = {item, str_lit(p, ",", start)};
  dp_ast_expr *ca[2] = {call_of(p, "listagg", 2, la, start), str_lit(p, "", start)};
  dp_ast_expr *parts[3] = {str_lit(p, object ? "{" : "[", start), call_of(p, "coalesce", 2, ca, start),
                           str_lit(p, object ? "}" : "]", start)};
  dp_ast_ident *id = dp_ps_alloc(p, sizeof *id);
  id->span = e->u.call.name.parts[0].span;
  e->u.call.name.parts = id;
  if (!object) {
    id->name = "concat";
    e->u.call.nargs = 3;
    e->u.call.args = dp_ps_alloc(p, 3 * sizeof *e->u.call.args);
    memcpy(e->u.call.args, parts, sizeof parts);
    return;
  }
  /* Flink writes the object with its keys sorted (as JSON_OBJECT and
     JSON_QUERY do): json_query(concat(...), '$') gives it so. */
  dp_ast_expr *whole = call_of(p, "concat", 3, parts, start);
  id->name = "json_query";
  e->u.call.nargs = 2;
  e->u.call.args = dp_ps_alloc(p, 2 * sizeof *e->u.call.args);
  e->u.call.args[0] = whole;
  e->u.call.args[1] = str_lit(p, "$", start);
}

bool dp_ps_json_call(parser *p, dp_ast_expr *e, const char *fn, const char *closing) {
  int kind = same_name(fn, "JSON_VALUE")    ? 1
             : same_name(fn, "JSON_QUERY")  ? 2
             : same_name(fn, "JSON_EXISTS") ? 3
             : same_name(fn, "JSON_OBJECT") ? 4
             : same_name(fn, "JSON_ARRAY")  ? 5
             : same_name(fn, "JSON_ARRAYAGG") ? 6
             : same_name(fn, "JSON_OBJECTAGG") ? 7
                                            : 0;
  if (!kind) return false;
  const dp_token *start = cur(p);
  vec args = {0};
  if (kind >= 6) {
    json_agg(p, e, kind == 7, start);
    dp_ps_expect(p, DP_TK_RPAREN, closing);
    return true;
  }
  if (kind <= 3) {
    dp_ps_push_expr(p, &args, dp_ps_expr(p));
    dp_ps_expect(p, DP_TK_COMMA, dp_ps_fmt(p, "',' and the path after the JSON value in %s", fn));
    dp_ps_push_expr(p, &args, dp_ps_expr(p));
    if (kind == 1) json_value(p, &args, start);
    else if (kind == 2) json_query(p, &args, start);
    else json_exists(p, &args);
  } else {
    json_build(p, &args, kind == 4, start);
  }
  dp_ps_expect(p, DP_TK_RPAREN, closing);
  e->u.call.nargs = args.n;
  e->u.call.args = args.items;
  return true;
}

dp_ast_expr *dp_ps_is_json(parser *p, dp_ast_expr *e, const dp_token *start) {
  if (!word(p, "JSON")) return NULL;
  const dp_token *jt = cur(p);
  next(p);
  const char *kind = "VALUE";
  if (dp_ps_accept_word(p, "VALUE")) kind = "VALUE";
  else if (dp_ps_accept_word(p, "SCALAR")) kind = "SCALAR";
  else if (dp_ps_accept_word(p, "ARRAY")) kind = "ARRAY";
  else if (dp_ps_accept_word(p, "OBJECT")) kind = "OBJECT";
  dp_ast_expr *arg = e->u.is.arg;
  bool negated = e->u.is.negated;
  dp_ast_expr *call = node(p, DP_AX_CALL, start);
  dp_ast_ident *id = dp_ps_alloc(p, sizeof *id);
  id->name = "is_json";
  id->span = jt->span;
  call->u.call.name.n = 1;
  call->u.call.name.parts = id;
  dp_ast_expr **a = dp_ps_alloc(p, 2 * sizeof *a);
  a[0] = arg;
  a[1] = str_lit(p, kind, jt);
  call->u.call.nargs = 2;
  call->u.call.args = a;
  call->span = span_from(p, start);
  if (!negated) return call;
  dp_ast_expr *n = node(p, DP_AX_UNARY, start);
  n->u.unary.op = DP_UOP_NOT;
  n->u.unary.arg = call;
  n->span = call->span;
  return n;
}
