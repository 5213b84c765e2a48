/*
** analyze_changelog.c — the kinds of change each node emits (Flink's
** changelogMode), after analyze.c has filled the changelog of every node.
**
** Bottom-up: an insert-only node emits [I]; an upsert one (an aggregation
** over an insert-only input, a keep-last deduplication) [I,UA], new rows
** that replace the earlier row of their key; a retract one [I,UB,UA,D].
** An aggregation over an updating input (dp_analyze_retract_aggregate)
** consumes retractions: it needs the old row of every update, so the
** aggregation it reads (through projections and filters) is asked for
** [I,UB,UA] — on the embedded engine an upsert-to-retract step above it
** (exec/changelog.c), as Flink's planner asks a GroupAggregate for
** UPDATE_BEFORE when its consumer needs it; an equi-join (inner or outer) with an
** updating input, or outer without a time range (dp_analyze_retract_join), asks both
** its inputs and emits as Flink's join: an inner one its inputs' kinds, an
** outer one [I,UB,UA,D] ([I,UA,D] into an upsert sink).  change_kinds marks the nodes
** whose batches carry the kinds (dp_batch.change) on the embedded engine.
**
** Owns: dp_stream_props.changes and .change_kinds, and which aggregate
** calls can take a row back (COUNT, SUM and AVG of numbers, MIN and MAX,
** FIRST_VALUE, LAST_VALUE and LISTAGG, and DISTINCT COUNT, SUM, AVG and
** those: exec/agg_retract.c).  Does not refuse anything (validate.c does).
*/
#include <stddef.h>

#include "plan/analyze.h"
#include "plan/analyze_int.h"

const char *dp_analyze_retract_refusal(const dp_agg_call *c) {
  int id = c->fn ? c->fn->id : -1;
  /* MIN and MAX keep the group's values with their counts
     (exec/agg_multiset.h, Flink's MinWithRetract), DISTINCT or not. */
  if (id == DP_F_MIN || id == DP_F_MAX) return NULL;
  /* FIRST_VALUE, LAST_VALUE and LISTAGG keep the values in arrival order
     (exec/agg_vlist.h, Flink's *WithRetract), DISTINCT or not; LISTAGG's
     second argument is its separator. */
  bool listed = id == DP_F_FIRST_VALUE || id == DP_F_LAST_VALUE || id == DP_F_LISTAGG;
  if (listed) return NULL;
  if (c->distinct && (c->nargs != 1 || (id != DP_F_COUNT && id != DP_F_SUM && id != DP_F_AVG)))
    return "over an updating input the embedded engine takes a row back out of a DISTINCT "
           "COUNT, SUM or AVG of one argument, and MIN, MAX, FIRST_VALUE, LAST_VALUE or "
           "LISTAGG, only; aggregate without DISTINCT, or deduplicate the rows before the "
           "inner aggregation";
  if (id == DP_F_COUNT) return NULL;
  if (id == DP_F_SUM || id == DP_F_AVG) {
    const dp_type *t = c->nargs > 0 ? c->args[0]->type : NULL;
    if (t && (dp_type_is_integer(t) || t->kind == DP_T_FLOAT || t->kind == DP_T_DOUBLE))
      return NULL;
    return "the embedded engine takes a row back out of SUM and AVG of integers and floating "
           "point numbers only; CAST the argument to DOUBLE or BIGINT";
  }
  return "only COUNT, SUM, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE and LISTAGG can take a row "
         "back out of their result on the embedded engine; compute this one before the inner "
         "aggregation";
}

bool dp_analyze_retract_aggregate(const dp_plan *p) {
  return p && p->kind == DP_P_AGGREGATE && !p->props.bounded && !p->u.aggregate.window &&
         p->inputs[0]->props.changelog != DP_CHANGELOG_INSERT_ONLY;
}

bool dp_analyze_retract_join(const dp_plan *p) {
  if (!p || p->kind != DP_P_JOIN || p->props.bounded || p->u.join.as_of) return false;
  dp_join_kind k = p->u.join.kind;
  if ((k != DP_J_INNER && k != DP_J_LEFT && k != DP_J_RIGHT && k != DP_J_FULL) ||
      p->u.join.nkeys <= 0)
    return false;
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  if (L->props.bounded || R->props.bounded) return false;
  /* Two append-only streams: an outer join without a time range (analyze.c
     makes it retract) is Flink's regular join too. */
  return L->props.changelog != DP_CHANGELOG_INSERT_ONLY ||
         R->props.changelog != DP_CHANGELOG_INSERT_ONLY ||
         (k != DP_J_INNER && p->props.changelog == DP_CHANGELOG_RETRACT);
}

static unsigned of_changelog(const dp_plan *p) {
  if (p->props.bounded) return DP_CHANGES_I;
  switch (p->props.changelog) {
  case DP_CHANGELOG_INSERT_ONLY: return DP_CHANGES_I;
  case DP_CHANGELOG_UPSERT: return DP_CHANGES_I | DP_CHANGES_UA;
  case DP_CHANGELOG_RETRACT: return DP_CHANGES_I | DP_CHANGES_UB | DP_CHANGES_UA | DP_CHANGES_D;
  }
  return DP_CHANGES_I;
}

/* p's consumer takes retractions: ask the aggregation below for them. */
static void require_retractions(dp_plan *p) {
  if (p->kind == DP_P_PROJECT || p->kind == DP_P_FILTER) {
    require_retractions(p->inputs[0]);
    p->props.changes = p->inputs[0]->props.changes;
    p->props.change_kinds = p->inputs[0]->props.change_kinds;
    return;
  }
  if (p->kind == DP_P_UNION) {
    p->props.changes = 0;
    p->props.change_kinds = false;
    for (int i = 0; i < p->ninputs; i++) {
      require_retractions(p->inputs[i]);
      p->props.changes |= p->inputs[i]->props.changes;
      p->props.change_kinds |= p->inputs[i]->props.change_kinds;
    }
    return;
  }
  if (p->kind == DP_P_AGGREGATE && p->props.changelog == DP_CHANGELOG_UPSERT) {
    p->props.changes |= DP_CHANGES_UB;
    p->props.change_kinds = true;
  }
}

/* An upsert sink (a PRIMARY KEY) above an outer regular join needs no
** UPDATE_BEFORE from it: Flink shows that join's changes as [I,UA,D]. */
static void only_after(dp_plan *p) {
  if (p->kind == DP_P_PROJECT || p->kind == DP_P_FILTER) only_after(p->inputs[0]);
  else if (!(dp_analyze_retract_join(p) && p->u.join.kind != DP_J_INNER)) return;
  p->props.changes &= ~(unsigned)DP_CHANGES_UB;
}

void dp_analyze_changes(dp_plan *p) {
  if (!p) return;
  for (int i = 0; i < p->ninputs; i++) dp_analyze_changes(p->inputs[i]);
  p->props.changes = of_changelog(p);
  /* A source of changes (upsert-kafka) carries their kinds from the start. */
  p->props.change_kinds = p->kind == DP_P_SCAN && (p->props.changes & DP_CHANGES_D) != 0;
  if (dp_analyze_retract_aggregate(p)) {
    require_retractions(p->inputs[0]);
    p->props.change_kinds = true;
  } else if (dp_analyze_retract_join(p)) {
    /* Flink's regular join: an inner one forwards its inputs' kinds, an
       outer one may emit every kind (Flink sends +I and -D). */
    require_retractions(p->inputs[0]);
    require_retractions(p->inputs[1]);
    p->props.changes = p->u.join.kind == DP_J_INNER
                           ? p->inputs[0]->props.changes | p->inputs[1]->props.changes
                           : DP_CHANGES_I | DP_CHANGES_UB | DP_CHANGES_UA | DP_CHANGES_D;
    p->props.change_kinds = true;
  } else if (p->kind == DP_P_SINK && p->u.sink.table && p->u.sink.table->npk > 0) {
    only_after(p->inputs[0]);
  } else if ((p->kind == DP_P_PROJECT || p->kind == DP_P_FILTER) &&
             p->inputs[0]->props.change_kinds) {
    p->props.changes = p->inputs[0]->props.changes;
    p->props.change_kinds = true;
  } else if (p->kind == DP_P_UNION) {
    /* each input's batches keep their kinds (exec/op_union.c) */
    for (int i = 0; i < p->ninputs; i++) {
      p->props.changes |= p->inputs[i]->props.changes;
      p->props.change_kinds |= p->inputs[i]->props.change_kinds;
    }
  }
}
