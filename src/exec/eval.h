/*
** eval.h — vectorized evaluation of bound expressions.
**
** An expression is evaluated over a whole batch at once: each function of the
** catalog has a kernel that loops over the rows of its argument vectors, with
** fast paths for the common layouts (no nulls, constant operands).  Results
** are new vectors the caller frees.
**
** Errors of the data (division by zero, a failed CAST, an integer overflow)
** are reported through the exec's diagnostics as DIPPER_DATA naming the
** expression; TRY_CAST gives NULL instead.
*/
#ifndef DP_EVAL_H
#define DP_EVAL_H

#include "core/vector.h"
#include "exec/exec.h"
#include "plan/plan.h"

/* Evaluate e over the rows of `in`; *out is a new vector of in->nrows rows
** whose type is e->type.  The caller frees it with dp_vector_free. */
int dp_eval(dp_exec *ex, const dp_expr *e, const dp_batch *in, dp_vector **out);

/* Rows of `in` for which the BOOLEAN `mask` is true (NULL counts as false):
** their indexes into sel (room for in->nrows), and the count. */
int64_t dp_eval_select(const dp_vector *mask, int64_t *sel);

/* Copying rows (dp_vector_take, dp_batch_take, dp_vector_append_from) is
** core/vector.h's. */

/* 64-bit hash of row `row` of v, mixed into `seed` (for group keys, joins);
** equal values hash equal across vectors of the same type, NULL included. */
uint64_t dp_vector_hash(const dp_vector *v, int64_t row, uint64_t seed);
/* Are row i of a and row j of b equal (NULL equals NULL: grouping semantics)? */
bool dp_vector_row_equal(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j);
/* Order of row i of a and row j of b, NULLs first; for sorts and MIN/MAX. */
int dp_vector_row_compare(const dp_vector *a, int64_t i, const dp_vector *b, int64_t j);

#endif /* DP_EVAL_H */
