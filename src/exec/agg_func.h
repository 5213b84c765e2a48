/*
** agg_func.h — the states of the aggregate functions, one column of states
** per aggregate call, indexed by group id (see hashtable.h).
**
** Each call of the catalog maps to a state kind chosen once (by function and
** argument layout); updates run a whole batch at a time with the kind's
** switch outside the row loop.  Every kind can merge two groups' states
** (session windows merge as rows arrive) and renumber its groups after the
** hash table compacts.
**
** Semantics worth knowing: NULL arguments are skipped (COUNT(x) counts the
** non-NULL ones); a group without values gives NULL, except COUNT and
** APPROX_COUNT_DISTINCT (0) and COLLECT (an empty ARRAY).  SUM of integers wraps on overflow like Spark's
** non-ANSI mode and Flink.  FIRST_VALUE / LAST_VALUE skip NULLs (Flink).
** APPROX_COUNT_DISTINCT is a HyperLogLog of 2^10 one-byte registers per
** group (standard error about 3%), with linear counting below 2.5 · 2^10, so
** small counts are close to exact.  DISTINCT is not handled here: the
** aggregation operator passes each (group, value) once.
**
** Memory: malloc'd, freed by dp_agg_state_free.
*/
#ifndef DP_AGG_FUNC_H
#define DP_AGG_FUNC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/bytes.h"
#include "core/vector.h"
#include "plan/plan.h"

typedef struct agg_strbuf agg_strbuf;

typedef struct dp_agg_state {
  int kind;                /* AGG_* of agg_func.c */
  const dp_type *type;     /* result type */
  const dp_type *arg_type; /* argument 0, or NULL for COUNT(*) */
  int arg_scale, res_scale;/* DECIMAL scales */
  int64_t cap;             /* groups the arrays have room for */
  int64_t *n;              /* values seen (COUNT, AVG, VAR, "has a value") */
  int64_t *i;              /* integer sums, min/max of integers and booleans */
  double *d, *d2;          /* float sums, min/max; mean and M2 of VAR */
  dp_i128 *x;              /* DECIMAL sums, min/max */
  agg_strbuf *bufs;        /* LISTAGG */
  char *sep;               /* LISTAGG: the separator first seen (for merges) */
  size_t sep_len;
  uint8_t **regs;          /* APPROX_COUNT_DISTINCT: HLL registers per group */
  /* Values kept whole (MIN/MAX of strings and nested values, FIRST/LAST,
  ** COLLECT): rows of `store`; idx[g] the chosen row (−1 none) or, for
  ** COLLECT, the chain head/tail with next[] per store row. */
  dp_vector *store;
  int64_t *idx, *tail, *next;
  int64_t next_cap;
  int64_t *cand;           /* per group, during an update: the batch row chosen */
  int64_t *touched;        /* groups whose cand is set */
  int64_t touched_cap;
} dp_agg_state;

/* Prepare the states of `call` (its types are borrowed). */
int dp_agg_state_init(dp_agg_state *s, const dp_agg_call *call);
void dp_agg_state_free(dp_agg_state *s);
/* Room for groups 0..ngroups-1; new groups start empty. */
int dp_agg_state_reserve(dp_agg_state *s, int64_t ngroups);
/* Fold rows rows[0..n) of the argument vectors into their groups gids[row].
** args[0] is absent for COUNT(*); args[1] is LISTAGG's separator. */
int dp_agg_state_update(dp_agg_state *s, const dp_vector *const *args, const int64_t *gids,
                        const int64_t *rows, int64_t n);
/* Fold group src into group dst (src is left as it was). */
int dp_agg_state_merge(dp_agg_state *s, int64_t dst, int64_t src);
/* Append the results of groups[0..n) to out (the call's result type). */
int dp_agg_state_finish(dp_agg_state *s, const int64_t *groups, int64_t n, dp_vector *out);
/* Renumber after dp_ht_compact: group g moves to remap[g] (< 0: dropped);
** remap is increasing over the kept groups. */
int dp_agg_state_compact(dp_agg_state *s, const int64_t *remap, int64_t old_n, int64_t new_n);
/* Make group g empty again (a group id reused). */
void dp_agg_state_reset(dp_agg_state *s, int64_t g);

/* Checkpoints: the states of groups 0..ngroups-1 appended to out, exactly
** (floats by their bits, the store of kept values whole): DIPPER_OK or
** DIPPER_NOMEM.  dp_agg_state_load reads them back into a state just
** initialised for the same call (dp_agg_state_init, nothing updated yet):
** DIPPER_OK; DIPPER_CORRUPT (and in->bad) for bytes that do not read back
** whole or hold what no update makes (an index past the store, a COLLECT
** chain that loops or shares rows, an HLL rank past 55); DIPPER_NOMEM.  After
** a failure the state is only fit for dp_agg_state_free.  The format is in
** agg_func.c. */
int dp_agg_state_save(const dp_agg_state *s, int64_t ngroups, dp_buf *out);
int dp_agg_state_load(dp_agg_state *s, int64_t ngroups, dp_rd *in);

#endif /* DP_AGG_FUNC_H */
