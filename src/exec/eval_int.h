/*
** eval_int.h — what the expression evaluator's files share (eval.c and the
** kernel families eval_arith.c, eval_string.c, eval_time.c, eval_cast.c,
** eval_coll.c, eval_hash.c, eval_json.c, eval_url.c).  Not for other modules: they use eval.h.
**
** subquery.c belongs to the family: the uncorrelated subqueries left in
** expressions, run once per query run and kept in the query's cache.
**
** Operands.  An evaluated sub-expression is a dp_ev_arg: a vector with one
** row per input row, or — when the sub-expression is constant (a literal, or
** a deterministic call over constants) — a vector of one row that stands for
** every row.  So a literal is evaluated once per batch, a constant pattern
** of LIKE or a regexp is compiled once per batch, and `price > 1000` is a
** loop over one column against one number.  Kernels read operand rows with
** dp_ev_row(), which folds the two cases.
**
** Semantics chosen where Flink and Spark differ (Spark's with ANSI mode off,
** DESIGN.md §4):
**   - integer overflow wraps around in the result type (TINYINT .. BIGINT),
**     as in both Flink and Spark's non-ANSI mode; no error;
**   - division or modulo by zero gives NULL (integers, floats, decimals,
**     intervals), as in Spark's non-ANSI mode;
**   - DECIMAL arithmetic is exact in 128 bits; a result that does not fit
**     its type's precision is a DIPPER_DATA error naming the expression;
**     rounding to a smaller scale is half away from zero (HALF_UP);
**   - CAST failures (malformed text, a number too big for a DECIMAL) are
**     DIPPER_DATA errors with the value and both types; TRY_CAST gives NULL;
**     numbers narrowed to a smaller integer wrap, floats to integers
**     truncate toward zero and saturate (NaN gives 0), like Java casts;
**   - CAST to STRING writes booleans as true/false, timestamps at their
**     type's precision, ARRAY as [a, b], MAP as {k -> v}, ROW as {a, b}
**     (Spark's spelling);
**   - time zone: the session zone is UTC, so TIMESTAMP and TIMESTAMP_LTZ
**     hold the same µs and convert by copying;
**   - comparisons of FLOAT/DOUBLE follow IEEE (NaN is unequal to itself and
**     unordered) so that they stay simple loops; grouping, joins and sorts
**     (dp_vector_row_equal/_compare) treat NaN as equal to itself and
**     larger than any number, as Spark does;
**   - LN/LOG/LOG10/LOG2 of a number <= 0 give NULL (Spark); SQRT of a
**     negative number gives NaN;
**   - CASE/IF/COALESCE evaluate every branch over the whole batch and pick
**     per row; a branch that can raise an error (a CAST, DECIMAL arithmetic)
**     is evaluated only over the rows that reach it.
*/
#ifndef DP_EVAL_INT_H
#define DP_EVAL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/compiler.h"
#include "exec/eval.h"

/* One evaluation of a top-level expression over a batch. */
typedef struct dp_ev {
  dp_exec *ex;          /* diagnostics, batch start time, watermark */
  const dp_batch *in;
  int64_t nrows;        /* rows of `in` */
} dp_ev;

/* An evaluated operand; see the header comment. */
typedef struct dp_ev_arg {
  dp_vector *v;
  bool is_const;        /* one row standing for all */
  bool owned;           /* freed by dp_ev_arg_free (a batch column is borrowed) */
} dp_ev_arg;

static inline int64_t dp_ev_row(const dp_ev_arg *a, int64_t i) { return a->is_const ? 0 : i; }
static inline bool dp_ev_null(const dp_ev_arg *a, int64_t i) {
  return dp_vector_is_null(a->v, dp_ev_row(a, i));
}
static inline int64_t dp_ev_i64(const dp_ev_arg *a, int64_t i) {
  return dp_vector_get_i64(a->v, dp_ev_row(a, i));
}
static inline double dp_ev_f64(const dp_ev_arg *a, int64_t i) {
  return dp_vector_get_f64(a->v, dp_ev_row(a, i));
}
static inline dp_i128 dp_ev_dec(const dp_ev_arg *a, int64_t i) {
  return dp_vector_get_dec(a->v, dp_ev_row(a, i));
}
static inline bool dp_ev_bool(const dp_ev_arg *a, int64_t i) {
  return dp_vector_get_bool(a->v, dp_ev_row(a, i));
}
static inline const char *dp_ev_str(const dp_ev_arg *a, int64_t i, size_t *len) {
  return dp_vector_get_str(a->v, dp_ev_row(a, i), len);
}

/* Evaluate e; *out is constant when e is.  The caller frees with dp_ev_arg_free. */
int dp_ev_eval(dp_ev *c, const dp_expr *e, dp_ev_arg *out);
void dp_ev_arg_free(dp_ev_arg *a);

/* subquery.c: the value of an uncorrelated DP_E_SUBQUERY over the batch,
** running its plan the first time the query needs it (the result is kept in
** c->ex->subqueries until dp_exec_free, which calls dp_subq_cache_free). */
typedef struct dp_subq_cache dp_subq_cache;
int dp_ev_subquery(dp_ev *c, const dp_expr *e, dp_ev_arg *out);
void dp_subq_cache_free(dp_subq_cache *cache);

/* A kernel computes a call's n result rows (n == 1 when every operand is
** constant) from its evaluated arguments into a new vector of e->type. */
typedef int (*dp_ev_kernel)(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n,
                            dp_vector **out);

/* The kernel of a scalar function, or NULL when the engine does not run it. */
dp_ev_kernel dp_ev_kernel_arith(int fn_id);  /* operators, comparisons, logic, math, conditionals */
dp_ev_kernel dp_ev_kernel_string(int fn_id); /* strings, patterns, hashes, JSON */
dp_ev_kernel dp_ev_kernel_time(int fn_id);   /* date and time */
dp_ev_kernel dp_ev_kernel_coll(int fn_id);   /* arrays, maps, rows */
/* JSON (eval_json.c) and URLs (eval_url.c); dp_ev_kernel_string asks them. */
dp_ev_kernel dp_ev_kernel_json(int fn_id);
dp_ev_kernel dp_ev_kernel_url(int fn_id);
dp_ev_kernel dp_ev_kernel_text(int fn_id);  /* STARTSWITH, ENDSWITH, INSTR, URL_ENCODE/DECODE */

/* The kernel of every scalar C function (eval_udf.c): fn->cfunc's callback. */
int dp_ev_cfunc(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out);

/* FLOOR/CEIL(x, 'UNIT') of a DATE, TIME or TIMESTAMP (eval_time.c). */
int dp_ev_time_floorceil(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n,
                         dp_vector **out);

/* CAST of an evaluated operand to `to` (n rows).  try_: NULL on failure. */
int dp_ev_cast(dp_ev *c, const dp_expr *e, const dp_ev_arg *arg, const dp_type *to, bool try_,
               int64_t n, dp_vector **out);
/* The text CAST(x AS STRING) gives for row i of v, appended to a growing
** buffer; false when out of memory. */
typedef struct dp_ev_buf {
  char *p;
  size_t len, cap;
} dp_ev_buf;
bool dp_ev_buf_put(dp_ev_buf *b, const void *s, size_t n);
bool dp_ev_buf_putc(dp_ev_buf *b, char ch);
bool dp_ev_format(dp_ev_buf *b, const dp_vector *v, int64_t i);

/* ---- building results ---- */

/* A vector of type t with room for n rows (at least one). */
dp_vector *dp_ev_new(const dp_type *t, int64_t n);
/* Give a fixed-width or BOOLEAN result of n rows (values already written)
** the validity that is the AND of the arguments' (a constant NULL argument
** makes every row NULL); length becomes n.  DIPPER_NOMEM on failure. */
int dp_ev_finish_nulls(dp_vector *out, const dp_ev_arg *args, int nargs, int64_t n);
/* Mark row i (< length) of a fixed-width result NULL. */
int dp_ev_set_null(dp_vector *v, int64_t i);
/* Does any argument row i hold NULL? */
static inline bool dp_ev_any_null(const dp_ev_arg *args, int nargs, int64_t i) {
  for (int k = 0; k < nargs; k++)
    if (dp_ev_null(&args[k], i)) return true;
  return false;
}
/* Broadcast a constant operand to n rows (a new vector). */
int dp_ev_broadcast(const dp_ev_arg *a, int64_t n, dp_vector **out);

/* Report a data error of e: DIPPER_DATA with "<what>" at e's span. */
int dp_ev_data_error(dp_ev *c, const dp_expr *e, const char *fmt, ...)
    DP_PRINTF(3, 4)
    ;
int dp_ev_fail(dp_ev *c, const dp_expr *e, int code, const char *fmt, ...)
    DP_PRINTF(4, 5)
    ;

/* ---- shared helpers ---- */

/* 10^n for 0 <= n <= 38. */
dp_i128 dp_ev_pow10(int n);
/* x rescaled from scale `from` to `to`, rounding half away from zero; false
** on overflow of 128 bits. */
bool dp_ev_rescale(dp_i128 x, int from, int to, dp_i128 *out);
/* Does |x| fit in `precision` decimal digits? */
bool dp_ev_dec_fits(dp_i128 x, int precision);
/* Write a DECIMAL's text ("-12.50") into buf (>= 48 bytes); returns length. */
int dp_ev_dec_text(char *buf, dp_i128 x, int scale);
/* Shortest text of a double that reads back the same (Java-like: 1.0, 1.5E10). */
int dp_ev_double_text(char *buf, size_t cap, double d, bool is_float);

/* Time units as spelled by the binder ('HOUR', 'DOW', ...). */
typedef enum dp_ev_unit {
  DP_EV_U_NONE, DP_EV_U_YEAR, DP_EV_U_QUARTER, DP_EV_U_MONTH, DP_EV_U_WEEK, DP_EV_U_DAY,
  DP_EV_U_HOUR, DP_EV_U_MINUTE, DP_EV_U_SECOND, DP_EV_U_MILLISECOND, DP_EV_U_MICROSECOND,
  DP_EV_U_NANOSECOND, DP_EV_U_DOW, DP_EV_U_DOY, DP_EV_U_EPOCH,
} dp_ev_unit;
dp_ev_unit dp_ev_unit_of(const char *s, size_t n);

/* Floor division and modulo for time arithmetic (negative times round down). */
static inline int64_t dp_ev_floordiv(int64_t x, int64_t y) {
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
static inline int64_t dp_ev_floormod(int64_t x, int64_t y) { return x - dp_ev_floordiv(x, y) * y; }
/* µs of a DATE, TIMESTAMP or TIMESTAMP_LTZ value (a DATE is its midnight). */
static inline int64_t dp_ev_micros_of(const dp_type *t, int64_t x) {
  return t->kind == DP_T_DATE ? x * DP_MICROS_PER_DAY : x;
}
/* Add months to µs since the epoch, clamping the day to the month's end. */
int64_t dp_ev_add_months(int64_t micros, int64_t months);

/* Hashes of eval_hash.c: digest of n bytes into out (16, 20, 28, 32, 48, 64 bytes). */
void dp_ev_md5(const void *p, size_t n, uint8_t out[16]);
void dp_ev_sha1(const void *p, size_t n, uint8_t out[20]);
void dp_ev_sha224(const void *p, size_t n, uint8_t out[28]);
void dp_ev_sha256(const void *p, size_t n, uint8_t out[32]);
void dp_ev_sha384(const void *p, size_t n, uint8_t out[48]);
void dp_ev_sha512(const void *p, size_t n, uint8_t out[64]);

#endif /* DP_EVAL_INT_H */
