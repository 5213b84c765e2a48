/*
** explain.h — the logical plan as an indented tree of text, or as JSON.
**
** One line per node: its kind and arguments; then, indented, its schema and
** its streaming properties (bounded, event-time attributes with their
** watermark, output modes, changelog, state).  Deterministic, so that SQL tests
** can compare it.
**
** The format (SQL tests match substrings of it, so change it with care):
**
**   Sink table=sink connector=kafka
**     schema: (province_id INT, window_start TIMESTAMP(3), total DOUBLE)
**     streaming: unbounded modes=append,update changelog=insert-only time=[] state=none
**     Aggregate group=[provinceId, window_start, window_end] aggs=[SUM(payAmount)] window=HOP
**       schema: (...)
**       streaming: unbounded modes=append,update changelog=insert-only
**                  time=[window_time@wm0] state=watermark (one row per group and window; ...)
**       Window kind=HOP time=createTime size=1 min slide=30 s
**         Watermark column=createTime delay=10 s source=payment_msg
**           Scan table=payment_msg connector=kafka
**
** Node lines, by kind (optional parts in brackets):
**   Scan table=T connector=C [alias=A]
**   Values rows=N
**   Project exprs=[e1, e2 AS name, ...]          (" AS name" when the name is not the expr text)
**   Filter cond=EXPR
**   Watermark column=C delay=DUR source=T        (expr=EXPR instead of delay=DUR when not constant)
**   Window kind=TUMBLE|HOP|CUMULATE|SESSION time=C [size=DUR] [slide=DUR] [step=DUR] [gap=DUR|gap=EXPR]
**          [offset=DUR] [partition=[..]] [syntax=legacy|spark]    (size/slide: HOP; size: TUMBLE;
**          step=.. size=..: CUMULATE; gap: SESSION)
**   Aggregate group=[..] aggs=[COUNT(*), SUM(x), COUNT(DISTINCT y), SUM(x) FILTER (WHERE c)] [window=KIND]
**   Join kind=INNER|LEFT|RIGHT|FULL|SEMI|ANTI|CROSS [keys=[l=r, ..]] [cond=EXPR] [temporal as_of=EXPR]
**   AsOfJoin kind=INNER|LEFT match=LT OP RT [keys=[l=r, ..]] [tolerance=DUR]   (LT: left time,
**            RT: right time; OP >= > look back, <= < forward; tolerance in the time's unit)
**   Union all=true|false      SetOp op=INTERSECT|EXCEPT all=..
**   Sort keys=[a DESC, b]     Limit limit=N [offset=M]     Distinct
**   Deduplicate keys=[..] keep=first|last [order=C] [within_watermark]
**   TopN partition=[..] order=[c DESC] n=N rank=row_number|rank|dense_rank
**   Over partition=[..] order=[..] frame=ROWS|RANGE BETWEEN .. AND CURRENT ROW calls=[..]
**   Unnest expr=EXPR          Sink table=T connector=C
** Durations print with dp_format_duration ("10 s", "1 min", "1 min 30 s").
** Expressions print with column names, infix operators in parentheses
** "(a + 1)", calls in upper case "SUM(x)", literals in SQL spelling; in a join
** condition a name both sides have is qualified with the side's alias or table
** "(o.id = s.id)"; subqueries print as $subqueryN, their plans under the node.
** The streaming line: "bounded" or "unbounded"; modes= the DP_MODE_* set in
** the order append,update,complete; changelog=insert-only|upsert|retract;
** time=[col@wmN, ...] listing event-time attribute columns (proctime ones as
** col@proctime); state=none|watermark|keys|unbounded|bounded-input, followed
** by " (desc)" when the node keeps state.
*/
#ifndef DP_EXPLAIN_H
#define DP_EXPLAIN_H

#include "core/buf.h"
#include "plan/plan.h"

/* Flags: DIPPER_EXPLAIN_* from dipper.h (DIPPER_EXPLAIN_JSON is ignored: the
** text).  */
void dp_explain_plan(dp_buf *out, const dp_query_plan *q, unsigned flags);
/* One statement as the JSON object dipper.h's DIPPER_EXPLAIN_JSON describes:
** "summary" when summary is not NULL, "streaming" and "roots" when q has
** roots; nested lines indented for `level` (2 spaces each), the object's
** opening brace written where out ends.  The same walk as the text. */
void dp_explain_stmt_json(dp_buf *out, const char *summary, const dp_query_plan *q,
                          unsigned flags, int level);
/* s quoted and escaped as a JSON string. */
void dp_explain_json_string(dp_buf *out, const char *s);
/* One node's line and its schema line, without its inputs (a checkpoint's
** fingerprint of the operators that keep state: exec/checkpoint.c). */
void dp_explain_node(dp_buf *out, const dp_plan *p);
/* Print one expression the way EXPLAIN does ("($3 + 1)" uses column names of `in`). */
void dp_explain_expr(dp_buf *out, const dp_expr *e, const dp_schema *in);

#endif /* DP_EXPLAIN_H */
