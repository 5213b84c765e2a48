/*
** parse_json.h — the SQL/JSON call forms (Flink's JSON_VALUE, JSON_QUERY,
** JSON_EXISTS, JSON_OBJECT, JSON_ARRAY and `x IS [NOT] JSON [kind]`),
** rewritten into the plain calls the function catalog knows; the clauses
** become STRING literal arguments (see plan/functions.def).
*/
#ifndef DP_PARSE_JSON_H
#define DP_PARSE_JSON_H

#include "sql/parser_int.h"

/* Called after the '(' of a call named fn: when fn is one of the JSON
** functions, parse the whole call up to its ')' into e's arguments and
** return true; otherwise consume nothing and return false. */
bool dp_ps_json_call(parser *p, dp_ast_expr *e, const char *fn, const char *closing);

/* After `x IS [NOT]` (the IS node e, its arg and negation set): when the
** next word is JSON, turn e into is_json(x, 'VALUE'|'SCALAR'|'ARRAY'|
** 'OBJECT') — NOT of it when negated — and return the expression to use;
** NULL (nothing consumed) otherwise. */
dp_ast_expr *dp_ps_is_json(parser *p, dp_ast_expr *e, const dp_token *start);

#endif /* DP_PARSE_JSON_H */
