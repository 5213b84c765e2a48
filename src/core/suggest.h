/*
** suggest.h — "did you mean": the one edit distance and the one rule for
** picking the nearest known name, for every unknown-name message (columns,
** tables, functions, connectors, options).
**
** Names compare case-insensitively (ASCII), as SQL names do.  The distance
** is the optimal string alignment distance: Levenshtein where swapping two
** neighbours counts one edit, the commonest typo (`cuont`).  A suggestion
** must be within 1 edit for names of 2 or 3 letters, within 2 for longer
** ones, and only the same name in another case for a one-letter name: two
** edits turn a short word into many others, and any letter is one edit from
** every other letter.
**
** Owns: nothing; no allocation.  Does not own: where the candidates come
** from (each caller walks its own names through dp_closest_add).
*/
#ifndef DP_SUGGEST_H
#define DP_SUGGEST_H

/* The case-insensitive distance between a and b when it is at most `limit`;
** otherwise limit + 1 (the work stops as soon as that is certain).  Names
** longer than 64 bytes are 0 apart when equal, else limit + 1. */
int dp_edit_distance(const char *a, const char *b, int limit);

/* The nearest candidate to a name so far, fed one candidate at a time:
**   dp_closest c; dp_closest_init(&c, name);
**   for (...) dp_closest_add(&c, cand);
**   c.best   -- the first of the nearest within the limit, or NULL.
** `name` and the candidates are borrowed for as long as `c` is used. */
typedef struct dp_closest {
  const char *name;
  int limit;        /* the most edits a suggestion may be away */
  int best_dist;    /* limit + 1 until a candidate is within the limit */
  const char *best; /* NULL until then */
} dp_closest;

void dp_closest_init(dp_closest *c, const char *name);
void dp_closest_add(dp_closest *c, const char *cand); /* NULL candidates are skipped */

/* The nearest of n candidates (NULL entries skipped) to `name` under the rule
** above, or NULL (also for a NULL name).  The result is one of `cands`. */
const char *dp_closest_of(const char *name, const char *const *cands, int n);

#endif
