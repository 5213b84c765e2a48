/*
** suggest.c — edit distance and the nearest-name rule of suggest.h.
*/
#include "core/suggest.h"

#include <stdbool.h>
#include <string.h>

#define MAX_NAME 64

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static bool same_name(const char *a, const char *b) {
  for (;; a++, b++) {
    int x = lower((unsigned char)*a), y = lower((unsigned char)*b);
    if (x != y) return false;
    if (x == 0) return true;
  }
}

int dp_edit_distance(const char *a, const char *b, int limit) {
  size_t na = strlen(a), nb = strlen(b);
  if (na > MAX_NAME || nb > MAX_NAME) return same_name(a, b) ? 0 : limit + 1;
  if ((na > nb ? na - nb : nb - na) > (size_t)limit) return limit + 1;
  /* Three rows of the dynamic programme: a transposition looks two back. */
  int prev2[MAX_NAME + 1], prev[MAX_NAME + 1], row[MAX_NAME + 1];
  for (size_t j = 0; j <= nb; j++) prev[j] = (int)j;
  int prev_best = 0;
  for (size_t i = 1; i <= na; i++) {
    int ai = lower((unsigned char)a[i - 1]);
    row[0] = (int)i;
    int row_best = row[0];
    for (size_t j = 1; j <= nb; j++) {
      int bj = lower((unsigned char)b[j - 1]);
      int v = prev[j - 1] + (ai == bj ? 0 : 1);
      if (prev[j] + 1 < v) v = prev[j] + 1;
      if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
      if (i > 1 && j > 1 && ai == lower((unsigned char)b[j - 2]) &&
          lower((unsigned char)a[i - 2]) == bj && prev2[j - 2] + 1 < v)
        v = prev2[j - 2] + 1;
      row[j] = v;
      if (v < row_best) row_best = v;
    }
    /* A transposition reaches two rows back: stop once neither row can lead
    ** back under the limit. */
    if (row_best > limit && prev_best > limit) return limit + 1;
    prev_best = row_best;
    memcpy(prev2, prev, (nb + 1) * sizeof prev[0]);
    memcpy(prev, row, (nb + 1) * sizeof row[0]);
  }
  return prev[nb] > limit ? limit + 1 : prev[nb];
}

void dp_closest_init(dp_closest *c, const char *name) {
  size_t n = name ? strlen(name) : 0;
  c->name = name;
  c->limit = n <= 1 ? 0 : n <= 3 ? 1 : 2;
  c->best_dist = c->limit + 1;
  c->best = NULL;
}

void dp_closest_add(dp_closest *c, const char *cand) {
  if (!c->name || !cand) return;
  int d = dp_edit_distance(c->name, cand, c->limit);
  if (d < c->best_dist) { /* ties: the first candidate wins */
    c->best_dist = d;
    c->best = cand;
  }
}

const char *dp_closest_of(const char *name, const char *const *cands, int n) {
  dp_closest c;
  dp_closest_init(&c, name);
  for (int i = 0; i < n; i++) dp_closest_add(&c, cands[i]);
  return c.best;
}
