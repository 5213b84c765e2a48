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
