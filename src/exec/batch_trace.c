/*
** batch_trace.c — the per-micro-batch timing trace (batch_trace.h).
*/
#include "exec/batch_trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dp_btrace *dp_btrace_open(void) {
  const char *path = getenv("DIPPER_TRACE_BATCHES");
  if (!path || !*path) return NULL;
  dp_btrace *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  if (!(t->path = strdup(path))) {
    free(t);
    return NULL;
  }
  return t;
}

dp_btrace_rec *dp_btrace_add(dp_btrace *t, int64_t t_plan) {
  if (t->n == t->cap) {
    int64_t cap = t->cap ? t->cap * 2 : 4096;
    if (cap > DP_BTRACE_MAX) cap = DP_BTRACE_MAX;
    dp_btrace_rec *p = cap > t->cap ? realloc(t->recs, (size_t)cap * sizeof *p) : NULL;
    if (!p) {
      t->dropped++;
      return NULL;
    }
    t->recs = p;
    t->cap = cap;
  }
  dp_btrace_rec *r = &t->recs[t->n++];
  memset(r, 0, sizeof *r);
  r->batch = -1;
  r->t_plan = t_plan;
  r->wait_us = t->last_end ? t_plan - t->last_end : 0;
  r->watermark = r->next_watermark = INT64_MIN;
  return r;
}

void dp_btrace_step_end(dp_btrace *t, int64_t now) { t->last_end = now; }

void dp_btrace_close(dp_btrace *t, const char *query) {
  if (!t) return;
  FILE *f = fopen(t->path, "a");
  if (f) {
    if (ftell(f) == 0)
      fputs("query\tbatch\tt_plan\twait_us\tplan_us\tfetch_us\tpull_us\tproduce_us\tflush_us\t"
            "commit_us\tend_us\trows_in\trows_out\twatermark\tnext_watermark\n",
            f);
    for (int64_t i = 0; i < t->n; i++) {
      const dp_btrace_rec *r = &t->recs[i];
      fprintf(f,
              "%s\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
              "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
              "\t%" PRId64 "\t%" PRId64 "\n",
              query, r->batch, r->t_plan, r->wait_us, r->plan_us, r->fetch_us, r->pull_us,
              r->produce_us, r->flush_us, r->commit_us, r->end_us, r->rows_in, r->rows_out,
              r->watermark, r->next_watermark);
    }
    if (t->dropped)
      fprintf(stderr, "dipper: DIPPER_TRACE_BATCHES: %" PRId64 " step(s) past the first %" PRId64
                      " were not traced\n", t->dropped, t->n);
    fclose(f);
  } else {
    fprintf(stderr, "dipper: DIPPER_TRACE_BATCHES: cannot write '%s'\n", t->path);
  }
  free(t->recs);
  free(t->path);
  free(t);
}
