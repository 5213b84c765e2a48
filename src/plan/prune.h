/*
** prune.h — which columns of a plan node's output the plan above it reads.
**
** Owns: the demand analysis behind column pruning.  Given the root an
** executor runs and one node below it, it tells, per output column of the
** node, whether some ancestor reads the column whole, only some fields of it
** (a ROW read through field accesses such as `bid.price`), or not at all.
** Does not own: acting on the answer.  The plan is not rewritten (EXPLAIN
** and the Spark backend see the plan as bound); operators that copy or make
** columns (the scan, the filter, the window, the projection, the join) ask
** for their node's demand and skip what no one reads, filling those columns
** with NULLs instead.  Modelled: projections, filters, watermarks, windows,
** aggregations, unnests, unions and joins (which read their condition's
** columns, their keys and their inputs' event-time columns besides what
** their parents read of their output).
**
** The answer is conservative: a node kind the analysis does not model reads
** every column of its inputs whole, and so does any expression holding a
** subquery.  A node reachable by more than one path gets the union.
*/
#ifndef DP_PRUNE_H
#define DP_PRUNE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "plan/plan.h"

/* The most fields of a ROW tracked one by one; wider ROWs are read whole. */
#define DP_PRUNE_MAX_FIELDS 64

/* Demand on one column: `whole`, or the ROW fields set in `fields` (bit i =
** field i), or nothing when neither. */
typedef struct dp_col_need {
  bool whole;
  uint64_t fields;
} dp_col_need;

static inline bool dp_col_needed(const dp_col_need *n) { return n->whole || n->fields != 0; }

/* Demand on every output column of `target` by the plan rooted at `root`:
** *out is an array of target->schema.ncols entries in `a`.  The root's own
** columns are all read whole (they are the query's result); a target not
** found under root gets whole demand too.  Returns DIPPER_OK or
** DIPPER_NOMEM. */
int dp_prune_need(dp_arena *a, const dp_plan *root, const dp_plan *target, dp_col_need **out);

/* Is every column of `need` (ncols entries) read whole? */
bool dp_prune_is_all(const dp_col_need *need, int ncols);

#endif /* DP_PRUNE_H */
