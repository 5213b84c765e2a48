/*
** op_registry.c — which operator class runs which plan node kind.
**
** One line per class.  A kind with no line is refused when the query starts
** ("the embedded engine does not run Join yet"), never at run time.  Classes
** that exec.h does not declare are declared here, next to their line.
*/
#include "exec/exec.h"
#include "exec/exec_int.h"

/* op_join.c, op_sort.c, op_limit.c, op_distinct.c, op_setop.c, op_dedup.c, op_topn.c,
** op_unnest.c, op_over.c */
extern const dp_op_class dp_op_join, dp_op_sort, dp_op_limit, dp_op_distinct, dp_op_setop,
    dp_op_dedup, dp_op_topn, dp_op_unnest, dp_op_over;
/* op_asof.c */
extern const dp_op_class dp_op_asof;

static const dp_op_class *const classes[DP_P_COUNT_] = {
    [DP_P_SCAN] = &dp_op_scan,
    [DP_P_VALUES] = &dp_op_values,
    [DP_P_PROJECT] = &dp_op_project,
    [DP_P_FILTER] = &dp_op_filter,
    [DP_P_WATERMARK] = &dp_op_watermark,
    [DP_P_WINDOW] = &dp_op_window,
    [DP_P_AGGREGATE] = &dp_op_aggregate,
    [DP_P_UNION] = &dp_op_union,
    [DP_P_SINK] = &dp_op_sink,
    [DP_P_JOIN] = &dp_op_join,
    [DP_P_SORT] = &dp_op_sort,
    [DP_P_LIMIT] = &dp_op_limit,
    [DP_P_DISTINCT] = &dp_op_distinct,
    [DP_P_SETOP] = &dp_op_setop,
    [DP_P_DEDUPLICATE] = &dp_op_dedup,
    [DP_P_TOPN] = &dp_op_topn,
    [DP_P_UNNEST] = &dp_op_unnest,
    [DP_P_OVER] = &dp_op_over,
    [DP_P_ASOF_JOIN] = &dp_op_asof,
};

const dp_op_class *dp_op_class_for(dp_plan_kind k) {
  if ((int)k < 0 || k >= DP_P_COUNT_) return NULL;
  return classes[k];
}
