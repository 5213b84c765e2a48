/*
** driver.c — the micro-batch loop of one running query (exec.h, steps 1–4).
**
** A step: plan every input (scans fix their batch's end and read ahead;
** VALUES are pending until read once), then decide whether a batch is due:
**   - an input has rows: a data batch under the watermark computed at the
**     end of the previous batch;
**   - no rows, but the watermark moved since the last batch and a stateful
**     operator may have something to emit or evict: a no-data batch (Spark
**     runs one too);
**   - every input exhausted (streaming): the final batch, `final` set and the
**     watermark at DP_WATERMARK_END, after which the query has finished;
**   - otherwise nothing runs (idle).
** A batch pulls the root (the sink) until it returns no batch, commits the
** sink and then the sources, computes the new global watermark — the minimum
** over this root's watermarks of (max event time − delay), DP_WATERMARK_NONE
** until every one of them has seen an event, never moving back — and calls
** every operator's end_batch, children first.  During end_batch ex->watermark
** is still the batch's own: the new one takes effect from the next batch.
** Each batch also gets ex->late_watermark, the watermark the batch before it
** ran under, by which stateful operators judge late rows (exec.h).
**
** Triggers: ONCE reads what is available in one uncapped batch and stops;
** AVAILABLE_NOW runs batches until a planning finds no new rows; the others
** run until the inputs end or the caller stops (the pacing of PROCESSING_TIME
** is run.c's business: a step runs now).  Batch mode (not streaming) is one
** batch that reads every input to its end with `final` set and the watermark
** NONE, so that no row is late and every operator emits its complete result.
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/dipper_int.h"
#include "exec/exec.h"
#include "exec/exec_int.h"

struct dp_driver {
  dipper *db;
  dp_arena *arena;       /* diagnostics and the name */
  dp_diags diags;
  dp_exec *ex;
  const char *name;
  int ninputs;
  dp_op **inputs;        /* scans and VALUES */
  int nops;
  dp_op **ops;           /* every operator, children first */
  int nwm;
  int *wm_ids;           /* the watermarks under this root */
  bool stateful;         /* some operator keeps state across batches */
  bool final_next;       /* every input is exhausted: the next batch is the last */
  bool finished;
  int failed;            /* the code of the error that stopped the query, or 0 */
  int64_t batch_watermark; /* the watermark the last batch ran under */
  int64_t next_watermark;  /* computed at the end of the last batch */
  dipper_progress progress;
};

int64_t dp_wall_micros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * DP_MICROS_PER_SECOND + ts.tv_nsec / 1000;
}

int64_t dp_mono_micros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * DP_MICROS_PER_SECOND + ts.tv_nsec / 1000;
}

/* ---- the shape of the query ---- */

static bool is_input(const dp_op *op) { return op->cls == &dp_op_scan || op->cls == &dp_op_values; }

static bool keeps_state(const dp_plan *p) {
  switch (p->kind) {
  case DP_P_AGGREGATE: case DP_P_JOIN: case DP_P_SETOP: case DP_P_SORT: case DP_P_LIMIT:
  case DP_P_DISTINCT: case DP_P_DEDUPLICATE: case DP_P_TOPN: case DP_P_OVER:
    return true;
  default:
    return p->props.analyzed && p->props.state != DP_STATE_NONE;
  }
}

typedef struct collect {
  dp_driver *dr;
  bool count_only;
} collect;

static void collect_op(dp_op *op, void *user) {
  collect *c = user;
  dp_driver *dr = c->dr;
  if (c->count_only) {
    dr->nops++;
    if (is_input(op)) dr->ninputs++;
    return;
  }
  dr->ops[dr->nops++] = op;
  if (is_input(op)) dr->inputs[dr->ninputs++] = op;
  if (keeps_state(op->plan)) dr->stateful = true;
}

static void mark_watermarks(const dp_plan *p, bool *seen, int n) {
  if (p->kind == DP_P_WATERMARK && p->u.watermark.id >= 0 && p->u.watermark.id < n)
    seen[p->u.watermark.id] = true;
  for (int i = 0; i < p->ninputs; i++) mark_watermarks(p->inputs[i], seen, n);
}

int dp_driver_new(dipper *db, const dp_query_plan *q, const dp_plan *root, const char *name,
                  dp_driver **out) {
  *out = NULL;
  dp_driver *dr = calloc(1, sizeof *dr);
  if (!dr) return DIPPER_NOMEM;
  dr->arena = dp_arena_new(0);
  if (!dr->arena) {
    free(dr);
    return DIPPER_NOMEM;
  }
  *out = dr;
  dr->db = db;
  dp_diags_init(&dr->diags, dr->arena, NULL, NULL, 0);
  dr->name = dp_arena_strdup(dr->arena, name ? name : "query");
  dr->batch_watermark = dr->next_watermark = DP_WATERMARK_NONE;
  dr->progress.batch_id = -1;
  dr->progress.watermark = DP_WATERMARK_NONE;
  if (!dr->name) return DIPPER_NOMEM;
  dr->progress.name = dr->name;

  int rc = dp_exec_open(db, q, root, &dr->diags, &dr->ex);
  if (rc != DIPPER_OK) {
    dr->failed = rc;
    return rc;
  }
  collect c = {dr, true};
  dp_op_walk(dr->ex->root_op, collect_op, &c);
  dr->ops = dp_arena_calloc(dr->arena, (size_t)dr->nops, sizeof *dr->ops);
  dr->inputs = dp_arena_calloc(dr->arena, (size_t)(dr->ninputs ? dr->ninputs : 1),
                               sizeof *dr->inputs);
  int nq = q->nwatermarks;
  bool *seen = dp_arena_calloc(dr->arena, (size_t)(nq ? nq : 1), sizeof *seen);
  dr->wm_ids = dp_arena_calloc(dr->arena, (size_t)(nq ? nq : 1), sizeof *dr->wm_ids);
  if (!dr->ops || !dr->inputs || !seen || !dr->wm_ids) {
    dr->failed = DIPPER_NOMEM;
    return DIPPER_NOMEM;
  }
  dr->nops = dr->ninputs = 0;
  c.count_only = false;
  dp_op_walk(dr->ex->root_op, collect_op, &c);
  mark_watermarks(root, seen, nq);
  for (int i = 0; i < nq; i++)
    if (seen[i]) dr->wm_ids[dr->nwm++] = i;
  return DIPPER_OK;
}

void dp_driver_free(dp_driver *dr) {
  if (!dr) return;
  dp_exec_free(dr->ex);
  dp_arena_free(dr->arena);
  free(dr);
}

const dp_diags *dp_driver_diags(const dp_driver *dr) { return &dr->diags; }

const dp_trigger *dp_driver_trigger(const dp_driver *dr) {
  static const dp_trigger fallback = {DP_TRIGGER_DEFAULT, 0};
  return dr->ex ? &dr->ex->trigger : &fallback;
}

void dp_driver_progress(const dp_driver *dr, dipper_progress *out) { *out = dr->progress; }

/* ---- watermarks ---- */

/* min over this root's inputs of (max event time − delay); NONE until each
** has seen an event; never behind `prev` (Spark's watermark only advances). */
static int64_t global_watermark(const dp_driver *dr, int64_t prev) {
  if (dr->nwm == 0) return prev;
  const dp_exec *ex = dr->ex;
  int64_t wm = INT64_MAX;
  for (int i = 0; i < dr->nwm; i++) {
    int id = dr->wm_ids[i];
    int64_t seen = ex->max_event_time[id];
    if (seen == DP_WATERMARK_NONE) return prev;
    /* The node's own delay: op_watermark.c observes the time column when it
    ** is a constant, the expression's values (delay −1) otherwise. */
    const dp_watermark_info *info = &ex->query->watermarks[id];
    int64_t delay = info->node ? info->node->u.watermark.delay : info->delay;
    if (delay < 0) delay = 0;
    int64_t w = seen < INT64_MIN + 1 + delay ? INT64_MIN + 1 : seen - delay;
    if (w < wm) wm = w;
  }
  return wm > prev ? wm : prev;
}

/* ---- one micro-batch ---- */

static int64_t input_rows(const dp_driver *dr) {
  int64_t n = 0;
  for (int i = 0; i < dr->ninputs; i++) n += dr->inputs[i]->metrics.rows_out;
  return n;
}

static int fail(dp_driver *dr, int rc) {
  if (dr->diags.count == 0) {
    dp_span nowhere = {0, 0, 0, 0};
    dp_error(&dr->diags, rc, nowhere, "micro-batch %lld of `%s` failed: %s",
             (long long)dr->ex->batch_id, dr->name, dipper_strerror(rc));
  }
  dr->failed = rc;
  return rc;
}

static int run_batch(dp_driver *dr, bool final, int64_t watermark) {
  dp_exec *ex = dr->ex;
  ex->batch_id = dr->progress.batch_id + 1;
  ex->late_watermark = dr->batch_watermark;
  ex->watermark = watermark;
  ex->final = final;
  ex->batch_start_time = dp_wall_micros();
  int64_t t0 = dp_mono_micros();
  int64_t in_before = input_rows(dr);
  int64_t out_rows = 0;
  dp_op *root = ex->root_op;
  for (;;) {
    dp_batch *b = NULL;
    int rc = root->cls->next(root, &b);
    if (rc != DIPPER_OK) return fail(dr, rc);
    if (!b) break;
    out_rows += b->nrows;
  }
  int rc = dp_sink_op_commit(root, ex->batch_id);
  if (rc != DIPPER_OK) return fail(dr, rc);
  for (int i = 0; i < dr->ninputs; i++)
    if (dr->inputs[i]->cls == &dp_op_scan && (rc = dp_scan_commit(dr->inputs[i])) != DIPPER_OK)
      return fail(dr, rc);
  dr->batch_watermark = watermark;
  if (!final && ex->query->streaming) dr->next_watermark = global_watermark(dr, dr->next_watermark);
  for (int i = 0; i < dr->nops; i++) {
    dp_op *op = dr->ops[i];
    if (op->cls->end_batch && (rc = op->cls->end_batch(op)) != DIPPER_OK) return fail(dr, rc);
  }
  dp_arena_reset(ex->batch_arena);

  int64_t took = dp_mono_micros() - t0;
  dipper_progress *p = &dr->progress;
  p->batch_id = ex->batch_id;
  p->input_rows = input_rows(dr) - in_before;
  p->output_rows = out_rows;
  p->batch_duration_us = took;
  double secs = took > 0 ? (double)took / 1e6 : 1e-6;
  p->input_rows_per_sec = (double)p->input_rows / secs;
  p->output_rows_per_sec = (double)p->output_rows / secs;
  p->watermark = dr->next_watermark;
  p->total_input_rows += p->input_rows;
  p->total_output_rows += out_rows;
  p->state_rows = 0;
  p->late_rows_dropped = 0;
  for (int i = 0; i < dr->nops; i++) {
    p->state_rows += dr->ops[i]->metrics.state_rows;
    p->late_rows_dropped += dr->ops[i]->metrics.late_dropped;
  }
  p->bad_records_skipped = 0;
  for (int i = 0; i < dr->ninputs; i++)
    if (dr->inputs[i]->cls == &dp_op_scan) p->bad_records_skipped += dp_scan_bad_records(dr->inputs[i]);
  return DIPPER_OK;
}

/* Plan every input; *has_data when one has rows, *exhausted when all ended. */
static int plan_inputs(dp_driver *dr, int64_t max_rows, bool to_end, bool *has_data,
                       bool *exhausted) {
  *has_data = false;
  *exhausted = true;
  for (int i = 0; i < dr->ninputs; i++) {
    dp_op *op = dr->inputs[i];
    bool data = false, ended = false;
    int rc = op->cls == &dp_op_scan ? dp_scan_plan(op, max_rows, to_end, &data, &ended)
                                    : dp_values_plan(op, &data, &ended);
    if (rc != DIPPER_OK) return fail(dr, rc);
    if (data) *has_data = true;
    if (!ended) *exhausted = false;
  }
  return DIPPER_OK;
}

static int finish_with(dp_driver *dr, int rc, bool *finished) {
  if (rc == DIPPER_OK) dr->progress.finished = dr->finished ? 1 : 0;
  *finished = dr->finished;
  return rc;
}

int dp_driver_step(dp_driver *dr, bool *ran, bool *finished) {
  *ran = false;
  *finished = dr->finished;
  if (dr->failed) return dr->failed;
  if (dr->finished) return DIPPER_OK;
  dp_exec *ex = dr->ex;
  int rc;
  bool has_data = false, exhausted = false;

  if (!ex->query->streaming) {
    rc = plan_inputs(dr, 0, true, &has_data, &exhausted);
    if (rc == DIPPER_OK) rc = run_batch(dr, true, DP_WATERMARK_NONE);
    *ran = rc == DIPPER_OK;
    dr->finished = rc == DIPPER_OK;
    return finish_with(dr, rc, finished);
  }

  if (dr->final_next) {
    rc = run_batch(dr, true, DP_WATERMARK_END);
    *ran = rc == DIPPER_OK;
    dr->finished = rc == DIPPER_OK;
    return finish_with(dr, rc, finished);
  }

  dp_trigger_kind trigger = ex->trigger.kind;
  rc = plan_inputs(dr, ex->max_batch_rows, false, &has_data, &exhausted);
  if (rc != DIPPER_OK) return rc;
  bool moved = dr->next_watermark != dr->batch_watermark;
  if (has_data) {
    rc = run_batch(dr, false, dr->next_watermark);
    if (rc != DIPPER_OK) return rc;
    *ran = true;
    if (exhausted)
      dr->final_next = true;
    else if (trigger == DP_TRIGGER_ONCE)
      dr->finished = true;
  } else if (exhausted) {
    rc = run_batch(dr, true, DP_WATERMARK_END);
    if (rc != DIPPER_OK) return rc;
    *ran = true;
    dr->finished = true;
  } else if (moved && dr->stateful && trigger != DP_TRIGGER_ONCE) {
    rc = run_batch(dr, false, dr->next_watermark);
    if (rc != DIPPER_OK) return rc;
    *ran = true;
  } else if (trigger == DP_TRIGGER_ONCE || trigger == DP_TRIGGER_AVAILABLE_NOW) {
    dr->finished = true; /* what was available at the start has been read */
  }
  return finish_with(dr, DIPPER_OK, finished);
}
