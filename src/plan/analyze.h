/*
** analyze.h — streaming analysis and validation of a bound plan.
**
** dp_analyze fills `props` of every node bottom-up: bounded or not, which
** columns are event-time attributes and which watermark governs them, the
** output modes the node can produce, the changelog it emits, the state it
** keeps and what bounds it.  dp_validate then refuses, in streaming mode, what
** no engine can run incrementally, each refusal saying what, why and what to
** write instead, at the clause's line:col.
*/
#ifndef DP_ANALYZE_H
#define DP_ANALYZE_H

#include "core/arena.h"
#include "core/diag.h"
#include "plan/catalog.h"
#include "plan/plan.h"

int dp_analyze(dp_arena *a, dp_diags *d, const dp_catalog *cat, dp_query_plan *q);
int dp_validate(dp_diags *d, const dp_catalog *cat, dp_query_plan *q);

/* analyze_ttl.c.  The state TTL of node p (props.state_ttl, its description
** extended), for the nodes whose state nothing else bounds: its STATE_TTL
** hint, else 'table.exec.state.ttl'.  Called by dp_analyze on every node. */
void dp_analyze_ttl(dp_arena *a, const dp_catalog *cat, dp_plan *p);
/* Warnings (code DIPPER_STREAMING, appended to w) for each node of root
** `root` of an analysed, validated plan whose state grows forever: no
** watermark cleans it and no TTL bounds it.  Flink accepts such a query, and
** so does dipper; the warning names the node and the option. */
int dp_validate_warnings(dp_diags *w, const dp_catalog *cat, const dp_query_plan *q, int root);

/* The output mode (one DP_MODE_*) an analysed root runs in: q->output_mode
** when set, else append where the root can produce it, else update (complete
** is never inferred: it re-sends the whole result every batch). */
unsigned dp_analyze_output_mode(const dp_query_plan *q, const dp_plan *root);

/* Why aggregate call c cannot take back a row of an updating input (Flink's
** retractable aggregates: COUNT, SUM, AVG of numbers), or NULL when it can.
** (plan/analyze_changelog.c) */
const char *dp_analyze_retract_refusal(const dp_agg_call *c);
/* p is an aggregation over an updating input (dp_analyze_changes). */
bool dp_analyze_retract_aggregate(const dp_plan *p);
/* p is an inner equi-join of two streams of which one at least updates. */
bool dp_analyze_retract_join(const dp_plan *p);

#endif /* DP_ANALYZE_H */
