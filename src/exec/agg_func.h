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
#include "core/diag.h"
#include "core/vector.h"
#include "plan/plan.h"
#include "plan/udf.h"

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
  /* Deltas (dp_agg_state_save_delta): what changed in the store since the
  ** last dp_agg_state_mark — the rows past base_rows, COLLECT's rows below
  ** it whose next was set (each once: a chain only grows at its tail), and
  ** whether the store was rebuilt (every idx moved). */
  int64_t base_rows;
  bool store_rebuilt;
  int64_t *patched;
  int64_t npatched, patched_cap;
  /* C aggregates (agg_cfunc.c): the function, its states (state_stride bytes
  ** per group), and where a failing callback's message goes — set by the
  ** operator after dp_agg_state_init (NULL: only the code is returned). */
  const struct dp_cfunc *cfunc;
  uint8_t *cstates;
  dp_diags *diags;
  dp_span span;
} dp_agg_state;

/* The kind of a C aggregate's state (the other kinds are agg_func.c's). */
#define DP_AGG_KIND_CFUNC 64

/* Prepare the states of `call` (its types are borrowed). */
int dp_agg_state_init(dp_agg_state *s, const dp_agg_call *call);
void dp_agg_state_free(dp_agg_state *s);
/* Room for groups 0..ngroups-1; new groups start empty. */
int dp_agg_state_reserve(dp_agg_state *s, int64_t ngroups);
/* A restore's, on a state that holds no groups yet: room for exactly
** `ngroups` (no doubling), the groups below `loaded` left for the
** dp_agg_state_load of `loaded` groups that must follow to write (not zeroed
** first), the rest empty. */
int dp_agg_state_reserve_restore(dp_agg_state *s, int64_t ngroups, int64_t loaded);
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
/* Like dp_agg_state_compact, but the store is never rebuilt: what a
** restore replays, since the run that saved rebuilt it at other times (a
** rebuild is carried by the delta as the call's whole state). */
int dp_agg_state_renumber(dp_agg_state *s, const int64_t *remap, int64_t old_n, int64_t new_n);
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

/* Deltas.  dp_agg_state_mark makes the current states the base of the next
** delta (after a save, a load or a delta of either kind).
** dp_agg_state_save_delta appends the records of groups[0..n) (the caller's
** list of the groups changed since, in today's ids, each once) and the store's rows appended since: O(n + rows appended), never a
** pass over all the groups — except after the store was rebuilt, when every
** idx moved and the call's whole state over 0..ngroups is written instead
** (a rebuild happens once the store holds twice the groups' rows: amortized,
** that costs O(1) per value stored).  dp_agg_state_load_delta applies it to
** the states of the base, already renumbered for the groups dropped since
** (dp_agg_state_renumber), with room for ngroups: DIPPER_OK; DIPPER_CORRUPT
** (and in->bad) as dp_agg_state_load; DIPPER_NOMEM.  `call` is the call the
** states were initialised for (a whole state loads into a fresh one). */
void dp_agg_state_mark(dp_agg_state *s);
int dp_agg_state_save_delta(const dp_agg_state *s, const int64_t *groups, int64_t n,
                            int64_t ngroups, dp_buf *out);
int dp_agg_state_load_delta(dp_agg_state *s, const dp_agg_call *call, const int64_t *groups,
                            int64_t n, int64_t ngroups, dp_rd *in);

/* One group's states as a record of its own (a keyed store's value:
** agg_rocks.c): the kept values (MIN/MAX of strings, FIRST/LAST, COLLECT)
** carried whole, nothing shared with other groups or any mark.  A load puts
** the record into group g (reserved as needed, a group no update touched
** since its reset): DIPPER_OK; DIPPER_CORRUPT (and in->bad); DIPPER_NOMEM.
** Also reads dp_agg_state_save_delta's record of one group. */
int dp_agg_state_save_group(const dp_agg_state *s, int64_t g, dp_buf *out);
int dp_agg_state_load_group(dp_agg_state *s, const dp_agg_call *call, int64_t g, dp_rd *in);

/* agg_cfunc.c: the C aggregates' side of each call above, which agg_func.c
** hands over to when s->cfunc is set. */
int dp_agg_cfunc_init(dp_agg_state *s, const dp_agg_call *call);
void dp_agg_cfunc_free(dp_agg_state *s);
int dp_agg_cfunc_grow(dp_agg_state *s, int64_t old, int64_t cap);
void dp_agg_cfunc_reset(dp_agg_state *s, int64_t g);
int dp_agg_cfunc_update(dp_agg_state *s, const dp_vector *const *args, const int64_t *gids,
                        const int64_t *rows, int64_t n);
int dp_agg_cfunc_merge(dp_agg_state *s, int64_t dst, int64_t src);
int dp_agg_cfunc_finish(dp_agg_state *s, const int64_t *groups, int64_t n, dp_vector *out);
int dp_agg_cfunc_renumber(dp_agg_state *s, const int64_t *remap, int64_t old_n, int64_t new_n);
void dp_agg_cfunc_save(const dp_agg_state *s, const int64_t *groups, int64_t n, dp_buf *out);
int dp_agg_cfunc_load(dp_agg_state *s, const int64_t *groups, int64_t n, dp_rd *in);

#endif /* DP_AGG_FUNC_H */
