/*
** functions.h — the function catalog: scalar functions, operators,
** aggregates and window functions, with their type rules.
**
** The list lives in functions.def as an X-macro, so that one table yields the
** ids, the names, the binder's type inference, EXPLAIN's spelling, and later
** the executor's kernels and the Spark name mapping.  Operators are functions
** too ("+" is DP_F_ADD): the plan has one kind of call.
*/
#ifndef DP_FUNCTIONS_H
#define DP_FUNCTIONS_H

#include <stdbool.h>

#include "core/arena.h"
#include "core/types.h"

typedef enum dp_func_kind {
  DP_FN_SCALAR,
  DP_FN_AGGREGATE,  /* COUNT, SUM, ... also usable with OVER */
  DP_FN_WINDOW,     /* ROW_NUMBER, RANK, DENSE_RANK, LAG, LEAD: only with OVER */
} dp_func_kind;

typedef struct dp_func dp_func;

/* Type inference: given the argument types, the result type, or NULL with a
** message (allocated in `a`) in *why saying what the arguments should be. */
typedef const dp_type *(*dp_func_infer)(dp_arena *a, const dp_func *fn, int nargs,
                                        const dp_type *const *args, const char **why);

struct dp_func {
  int id;               /* DP_F_* */
  const char *name;     /* canonical lower-case name: "substring", "add" */
  const char *op;       /* infix spelling for EXPLAIN ("+", "AND", "LIKE") or NULL */
  dp_func_kind kind;
  int min_args, max_args; /* max_args -1: variadic */
  bool deterministic;   /* false for CURRENT_TIMESTAMP, RAND, PROCTIME */
  dp_func_infer infer;
  const char *signature;/* for error messages and docs: "substring(STRING, INT [, INT])" */
  /* User-defined C functions only (plan/udf.h), NULL for the built-ins: id is
  ** DP_F_COUNT_, params the declared types of the min_args == max_args
  ** parameters (the casts dp_func_param_type gives), cfunc the function. */
  const dp_type *const *params;
  const struct dp_cfunc *cfunc;
  const struct dp_udf_def *java;  /* a Java function for Spark (plan/udf.h), or NULL */
};

/* DP_F_ADD, DP_F_SUBSTRING, ... defined by functions.def. */
#define DP_FUNC_ENUM_(id, ...) DP_F_##id,
typedef enum dp_func_id {
#include "plan/functions.def"
  DP_F_COUNT_
} dp_func_id;
#undef DP_FUNC_ENUM_

/* Look a function up by SQL name, case-insensitively (aliases included:
** "char_length" and "length", "substr"). NULL when unknown. */
const dp_func *dp_func_lookup(const char *name);
const dp_func *dp_func_get(dp_func_id id);
/* The closest known name within a small edit distance, for "did you mean". */
const char *dp_func_suggest(const char *name);
/* Iterate the catalog (docs, SHOW FUNCTIONS): i from 0 while non-NULL. */
const dp_func *dp_func_at(int i);

/* The type argument i of a call of fn with these argument types must be cast
** to before the call, or NULL when it is used as it is (also when the call is
** not valid: fn->infer says why).  Examples: INT + BIGINT casts argument 0 to
** BIGINT; INT + DECIMAL(5, 2) casts the INT to DECIMAL(10, 0) (the kernel
** rescales decimals itself); ts = '2024-01-01' casts the string to the
** timestamp type; sqrt(INT) casts to DOUBLE; an untyped NULL gets the type
** its parameter wants.  The result is a static or an argument's type, valid
** forever; its not_null flag means nothing: the CAST keeps the argument's
** nullability.  fn->infer gives the same result type before and after the
** casts.
**
** Conventions the binder and the executor share (see functions.def):
**   - a unit (EXTRACT, FLOOR/CEIL .. TO, TIMESTAMPADD, TIMESTAMPDIFF) is a
**     STRING literal argument spelled like dp_time_unit: 'HOUR', 'DOW', ...;
**     it comes first except for floor/ceil(ts, 'UNIT');
**   - `op` prints infix with two arguments, prefix with one, except that
**     ops starting with "IS " print after their operand. */
/* The type each argument is cast to for fn (*out: nargs entries in `a`, one
** resolution for all of them); an entry is NULL when no signature fits.
** DIPPER_OK, DIPPER_NOMEM or DIPPER_MISUSE. */
int dp_func_param_types(dp_arena *a, const dp_func *fn, int nargs, const dp_type *const *args,
                        const dp_type ***out);

/* Is `unit` (case-insensitive: 'HOUR', 'dow', ...) a unit fn accepts for an
** operand of type `operand`?  For EXTRACT, FLOOR, CEIL, TIMESTAMPADD and
** TIMESTAMPDIFF (a DATE has no HOUR; an INTERVAL YEAR TO MONTH no DAY;
** TIMESTAMPADD of hours to a DATE would have to leave the DATE type).  NULL
** when it is fine, else a message in `a` saying what to write instead.
** Other functions take no unit: always NULL. */
const char *dp_func_check_unit(dp_arena *a, const dp_func *fn, const char *unit,
                               const dp_type *operand);

#endif /* DP_FUNCTIONS_H */
