/*
** narrow.h — column pruning at run time: batches that carry real data only
** in the columns (and ROW fields) the plan above an operator reads.
**
** Owns: acting on the demand of plan/prune.h inside an operator.  A column
** no one reads is an all-NULL vector (a "filler", built once and reused at
** any length up to what it was filled to); a ROW read only through some
** fields is a shell whose other children are fillers.  The batches keep the
** node's schema, so every consumer — including one that reads every column,
** such as a sink — sees well-formed Arrow data; only the values no one reads
** are NULL.
**   - dp_narrow_take: the filter's compaction (and any row selection) of
**     the read columns only;
**   - dp_narrow_source_schema / dp_narrow_widen: a scan asks its source for
**     the read columns only and widens the source's batch to the node's
**     schema without copying;
**   - dp_narrow_null: an all-NULL column for an operator that builds its
**     output column by column (the window's gathering).
** Does not own: the analysis (plan/prune.c), nor which operators use it.
**
** Memory: malloc'd, freed by dp_narrow_free (NULL is fine).  Batches and
** vectors handed out are borrowed until the next call on the same dp_narrow.
*/
#ifndef DP_NARROW_H
#define DP_NARROW_H

#include <stdbool.h>
#include <stdint.h>

#include "core/vector.h"
#include "exec/exec.h"
#include "plan/prune.h"

typedef struct dp_narrow dp_narrow;

/* The demand on op's node (its output columns) by the root op->ex runs.
** *out is NULL when every column is read whole (nothing to narrow): callers
** keep their plain path then. */
int dp_narrow_open(dp_op *op, dp_narrow **out);
void dp_narrow_free(dp_narrow *nw);

/* Per output column of the node: what is read of it. */
const dp_col_need *dp_narrow_need(const dp_narrow *nw);

/* Rows sel[0..n) of `in` (the node's schema) into a batch of ours: the read
** columns and fields copied (dp_batch_take), the others NULL. */
int dp_narrow_take(dp_narrow *nw, const dp_batch *in, const int64_t *sel, int64_t n,
                   dp_batch **out);

/* An all-NULL vector of column `col`'s type and n rows. */
int dp_narrow_null(dp_narrow *nw, int col, int64_t n, dp_vector **out);
/* The same without a dp_narrow: *slot (NULL at first; the caller frees it
** with dp_vector_free) becomes an all-NULL vector of type t and n rows,
** grown only when n is past what it was ever filled to. */
int dp_narrow_filler(dp_vector **slot, const dp_type *t, int64_t n);

/* The schema a source should produce for the node: the read columns in
** order, each ROW with only its read fields (in `a`).  At least one column is
** kept, so that a source's batch still counts rows. */
int dp_narrow_source_schema(dp_narrow *nw, dp_arena *a, const dp_schema **out);
/* `src`, a batch of that schema, as a batch of the node's schema (columns
** borrowed from src, fillers elsewhere), valid until src or nw changes. */
int dp_narrow_widen(dp_narrow *nw, const dp_batch *src, dp_batch **out);

#endif /* DP_NARROW_H */
