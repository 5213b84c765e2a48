/*
** changelog.h — updating results as changes between operators (Flink's
** changelog model on the embedded engine).
**
** A batch whose rows revise earlier ones carries their change kinds in
** dp_batch.change, one TINYINT per row, the byte values of Flink's RowKind:
** +I insert, -U the old row of an update (update-before), +U its new row
** (update-after), -D a deletion.  NULL (every batch of an insert-only or an
** upsert input) means every row is +I.  Stateless operators carry the column
** along (op_project.c borrows it, op_filter.c gathers the passing rows');
** the operators that consume an updating input read it:
**   agg_retract.c   a GROUP BY over an updating input: -U/-D rows subtract
**                   from their group's states, +I/+U rows add (MIN, MAX and
**                   DISTINCT through agg_multiset.h);
**   op_join_retract.c  an equi-join (inner or outer) with an updating input:
**                   +I/+U rows are stored and joined (+I), -U/-D rows taken
**                   back (-D), an outer side's padded rows taken back and
**                   brought back as its matches come and go;
**   op_sink.c       sinks that take retractions get the kind as a leading
**                   `op` column ("+I", "-U", "+U", "-D").
** Which plan nodes emit change kinds is decided at compile time
** (plan/analyze_changelog.c: dp_stream_props.changes); dp_change_emits
** reads it.
**
** Owns: the kind constants, the upsert-to-retract operator
** (dp_op_upsert_retract, Flink's ChangelogNormalize for an aggregate's
** output: it remembers the row last emitted per group key and turns each
** upsert into -U old, +U new) and the helpers.  Does not own: the plan's
** changelog analysis (plan/), the operators that read kinds.
*/
#ifndef DP_CHANGELOG_H
#define DP_CHANGELOG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/vector.h"
#include "exec/exec.h"

enum {
  DP_CHANGE_INSERT = 0,        /* +I */
  DP_CHANGE_UPDATE_BEFORE = 1, /* -U */
  DP_CHANGE_UPDATE_AFTER = 2,  /* +U */
  DP_CHANGE_DELETE = 3,        /* -D */
};

/* The kind of row r of b. */
static inline int dp_change_of(const dp_batch *b, int64_t r) {
  return b->change ? (int)dp_vector_get_i64(b->change, r) : DP_CHANGE_INSERT;
}
/* -U and -D take a row back; +I and +U add one. */
static inline bool dp_change_retracts(int kind) {
  return kind == DP_CHANGE_UPDATE_BEFORE || kind == DP_CHANGE_DELETE;
}
/* "+I", "-U", "+U", "-D". */
const char *dp_change_name(int kind);

/* *dst (made TINYINT when NULL, cleared otherwise) = rows sel[0..n) of src;
** nothing when src is NULL.  DIPPER_OK or DIPPER_NOMEM. */
int dp_change_take(dp_vector **dst, const dp_vector *src, const int64_t *sel, int64_t n);

/* The node's output carries change kinds (-U or -D rows). */
bool dp_change_emits(const dp_plan *p);

/* The operator that turns the upserts of `inner` (an AGGREGATE's, keyed by
** its group keys) into +I / -U / +U changes: built above it when the plan
** asks that aggregate for retractions.  *out owns inner from then on. */
int dp_change_wrap_upserts(dp_exec *ex, dp_op *inner, dp_op **out);

extern const dp_op_class dp_op_upsert_retract, dp_op_agg_retract, dp_op_join_retract;

#endif /* DP_CHANGELOG_H */
