/*
** window_int.h — the window assignment arithmetic of op_window.c, shared
** with the aggregation (late rows, sessions) and the tests.
*/
#ifndef DP_WINDOW_INT_H
#define DP_WINDOW_INT_H

#include <stdint.h>

#include "plan/plan.h"

/* floor((ts − offset) / size) · size + offset, rounding toward −∞. */
int64_t dp_window_tumble_start(int64_t ts, int64_t size, int64_t offset);
/* The windows of a row at time ts, ascending by start then end: up to `max`
** into starts/ends; returns how many, or -1 when more than max. */
int dp_window_assign(const dp_window_spec *w, int64_t ts, int64_t *starts, int64_t *ends, int max);
/* The most windows one row can fall in (HOP, CUMULATE: ceil(size/slide)), or
** -1 when that is absurd (over 2^20). */
int dp_window_max_per_row(const dp_window_spec *w);

#endif /* DP_WINDOW_INT_H */
