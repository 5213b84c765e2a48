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
**
** Workers (parallel.h), when 'parallelism.default' asks for more than one
** and the plan allows: the driver's own exec is then the coordinator (the
** sink over the gather), every input and operator of every worker is in
** `inputs` and `ops`, planning goes through dp_par_plan_inputs (worker 0
** plans, the others replay its bounds) and a batch runs on the workers
** (dp_par_run) before the sink is pulled; the watermark is computed from the
** workers' maxima merged into the coordinator's.  Otherwise the query runs
** on this thread, with a note saying why.  With a checkpoint folder too
** (docs/architecture.md, "Parallel execution"): the offsets record holds
** worker 0's plans (everyone's), the commit record every worker's position
** per source, the state file a section per (worker, operator), and the
** fingerprint the number of workers, which a restart must ask for again.
**
** Checkpoints (checkpoint.h), for a streaming query whose session sets
** 'execution.checkpointing.dir': at start every input must be able to resume
** and every stateful operator to save its state, or the query is refused,
** naming the one that cannot.  Each batch writes its offsets record after
** its inputs were planned and before it runs, and its commit record (after
** a state file when one is due) once the sink, the sources and end_batch are
** done.  A restart restores the newest state and the positions of its batch,
** then runs every batch logged after it again from its offsets record
** (`replay`), before planning new ones.
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/session.h"
#include "exec/checkpoint.h"
#include "exec/exec.h"
#include "exec/batch_trace.h"
#include "exec/exec_int.h"
#include "exec/parallel.h"
#include "plan/catalog.h"
#include "plan/explain.h"

struct dp_driver {
  dipper *db;
  dp_arena *arena;       /* diagnostics and the name */
  dp_diags diags;
  dp_exec *ex;           /* the query; with workers, the coordinator: the sink */
  dp_par *par;           /* the workers (parallel.h), or NULL: one thread */
  const char *name;
  int ninputs;
  dp_op **inputs;        /* scans and VALUES (every worker's, worker by worker) */
  int ninputs0;          /* the first ninputs0 of them: one tree's (worker 0's), whose
                            plans are everyone's: the offsets record's */
  int nops;
  dp_op **ops;           /* every operator, children first (the coordinator's, then
                            every worker's) */
  int nwm;
  int *wm_ids;           /* the watermarks under this root */
  bool stateful;         /* some operator keeps state across batches */
  bool final_next;       /* every input is exhausted: the next batch is the last */
  bool finished;
  int failed;            /* the code of the error that stopped the query, or 0 */
  int64_t batch_watermark; /* the watermark the last batch ran under */
  int64_t next_watermark;  /* computed at the end of the last batch */
  dipper_progress progress;
  /* checkpoints: all unused when ckpt is NULL */
  dp_ckpt *ckpt;
  int64_t state_every;     /* µs between state files ('execution.checkpointing.interval'), 0: each batch */
  int64_t last_state_at;   /* monotonic µs of the last state file */
  int64_t state_batch;     /* the batch of the newest state (file), or -1 */
  int64_t last_full_batch; /* of the newest full state, or -1: the next is full */
  int64_t prev_full_batch; /* the one before it, or -1 */
  size_t full_bytes, delta_bytes; /* the newest full state file's size; the deltas' since */
  int deltas_since_full;
  int64_t purged_below;    /* records below this batch are gone */
  int64_t replay_next, replay_last; /* batches logged after the restored state, to run again */
  /* Deferred acknowledgements (connector.h, settle): one thread, no
  ** checkpoint folder, a sink that can settle: its commit sends the batch
  ** and the next batch runs while the acks come; the sources record no
  ** position for others (group commits) until every write is acknowledged. */
  bool defer;
  int64_t settled_at;      /* monotonic µs when the sink was last seen settled */
  dp_btrace *trace;        /* DIPPER_TRACE_BATCHES (batch_trace.h), or NULL */
  dp_btrace_rec *cur;      /* the step's record, or NULL */
};

/* Deferred acks (dp_driver.defer) older than this are waited for. */
#define SETTLE_US INT64_C(250000)

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

/* The workers' gathers and exchanges carry the node of what they move but
** keep nothing between batches. */
static bool op_keeps_state(const dp_op *op) { return !dp_par_plumbing(op) && keeps_state(op->plan); }

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
  if (op_keeps_state(op)) dr->stateful = true;
}

static void walk_all(dp_driver *dr, collect *c) {
  dp_op_walk(dr->ex->root_op, collect_op, c);
  for (int w = 0; w < dp_par_count(dr->par) && dr->par; w++)
    dp_op_walk(dp_par_worker(dr->par, w)->root_op, collect_op, c);
}

static void mark_watermarks(const dp_plan *p, bool *seen, int n) {
  if (p->kind == DP_P_WATERMARK && p->u.watermark.id >= 0 && p->u.watermark.id < n)
    seen[p->u.watermark.id] = true;
  for (int i = 0; i < p->ninputs; i++) mark_watermarks(p->inputs[i], seen, n);
}

/* ---- checkpoints (checkpoint.h) ---- */

static int ck_fail(dp_driver *dr, int rc, const char *what) {
  dp_span nowhere = {0, 0, 0, 0};
  if (rc == DIPPER_NOMEM) return dp_error(&dr->diags, rc, nowhere, "out of memory %s", what);
  return rc;
}

/* Every input resumes and every stateful operator saves its state, or the
** query cannot keep the promise of its checkpoint folder. */
static int check_checkpointable(dp_driver *dr) {
  for (int i = 0; i < dr->ninputs; i++) {
    dp_op *op = dr->inputs[i];
    if (op->cls != &dp_op_scan || dp_scan_resumable(op)) continue;
    const dp_table_def *t = op->plan->u.scan.table;
    return dp_error(&dr->diags, DIPPER_UNSUPPORTED, op->plan->span,
                    "table `%s` (connector '%s') cannot resume from a checkpoint, and the session "
                    "sets 'execution.checkpointing.dir'; read from a replayable source "
                    "(filesystem, kafka, datagen, nexmark, memory) or drop the checkpoint folder",
                    t && t->name ? t->name : "?", dp_scan_connector(op));
  }
  for (int i = 0; i < dr->nops; i++) {
    dp_op *op = dr->ops[i];
    if (!op_keeps_state(op) || op->cls->save_state) continue;
    return dp_error(&dr->diags, DIPPER_UNSUPPORTED, op->plan->span,
                    "the embedded engine cannot checkpoint the state of %s yet, and the session "
                    "sets 'execution.checkpointing.dir'; drop the checkpoint folder to run the "
                    "query without fault tolerance",
                    op->cls->name);
  }
  return DIPPER_OK;
}

/* What the state was made by: the workers when more than one, inputs,
** watermarks, windows and every operator that keeps state, one line each
** (explain.h). */
#define WORKERS_LINE "workers "

static void fingerprint(const dp_driver *dr, dp_buf *out) {
  if (dr->par) dp_buf_printf(out, WORKERS_LINE "%d\n", dp_par_count(dr->par));
  for (int i = 0; i < dr->nops; i++) {
    const dp_plan *p = dr->ops[i]->plan;
    if (dp_par_plumbing(dr->ops[i])) continue;
    if (is_input(dr->ops[i]) || keeps_state(p) || p->kind == DP_P_WATERMARK ||
        p->kind == DP_P_WINDOW)
      dp_explain_node(out, p);
  }
}

/* The workers a fingerprint names: its first line, else 1. */
static long fingerprint_workers(const uint8_t *text, size_t n) {
  size_t k = sizeof WORKERS_LINE - 1;
  if (n <= k || memcmp(text, WORKERS_LINE, k) != 0) return 1;
  long w = 0;
  for (size_t i = k; i < n && text[i] >= '0' && text[i] <= '9' && w < 100000; i++)
    w = w * 10 + (text[i] - '0');
  return w;
}

/* The first line where two fingerprints differ, copied into `out`. */
static void nth_line(const char *text, size_t len, int n, dp_buf *out) {
  const char *p = text, *end = text + len;
  for (int i = 0; i < n && p < end; i++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : end;
  }
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  dp_buf_put(out, p, (size_t)((nl ? nl : end) - p));
  if (p >= end) dp_buf_puts(out, "(nothing)");
}

static int check_fingerprint(dp_driver *dr, bool has_commits) {
  dp_buf mine = DP_BUF_INIT;
  fingerprint(dr, &mine);
  if (mine.oom) {
    dp_buf_free(&mine);
    return ck_fail(dr, DIPPER_NOMEM, "writing the checkpoint's fingerprint");
  }
  uint8_t *old = NULL;
  size_t n = 0;
  int rc = has_commits ? dp_ckpt_read(dr->ckpt, DP_CKPT_FINGERPRINT, 0, true, &old, &n) : DIPPER_NAME;
  if (rc == DIPPER_NAME) {
    rc = dp_ckpt_write(dr->ckpt, DP_CKPT_FINGERPRINT, 0, mine.data, mine.len);
  } else if (rc == DIPPER_OK &&
             fingerprint_workers(old, n) != fingerprint_workers((const uint8_t *)mine.data, mine.len)) {
    /* Each worker's state holds the keys that hash to it: another count
    ** would need every key's state moved to its new owner. */
    dp_span nowhere = {0, 0, 0, 0};
    rc = dp_error(&dr->diags, DIPPER_UNSUPPORTED, nowhere,
                  "the checkpoint in '%s' was written by the query on %ld workers, and this run "
                  "has %ld ('parallelism.default'; a query the workers cannot run has one); its "
                  "state is split by key among the workers, and re-splitting it is not done yet: "
                  "set 'parallelism.default' = '%ld' to resume, or give "
                  "'execution.checkpointing.dir' another folder to start afresh",
                  dp_ckpt_dir(dr->ckpt), fingerprint_workers(old, n),
                  fingerprint_workers((const uint8_t *)mine.data, mine.len),
                  fingerprint_workers(old, n));
  } else if (rc == DIPPER_OK && (n != mine.len || memcmp(old, mine.data, n) != 0)) {
    int line = 0;
    for (size_t i = 0; i < n && i < mine.len && old[i] == (uint8_t)mine.data[i]; i++)
      if (old[i] == '\n') line++;
    dp_buf was = DP_BUF_INIT, now = DP_BUF_INIT;
    nth_line((const char *)old, n, line, &was);
    nth_line(mine.data, mine.len, line, &now);
    dp_span nowhere = {0, 0, 0, 0};
    rc = dp_error(&dr->diags, DIPPER_CORRUPT, nowhere,
                  "the checkpoint in '%s' was written by a query whose state does not fit this "
                  "one: where it had\n  %s\nthis query has\n  %s\nremove the folder, or give "
                  "'execution.checkpointing.dir' another one, to start this query afresh",
                  dp_ckpt_dir(dr->ckpt), dp_buf_cstr(&was), dp_buf_cstr(&now));
    dp_buf_free(&was);
    dp_buf_free(&now);
  }
  free(old);
  dp_buf_free(&mine);
  return rc;
}

/* Commit record: the watermarks after the batch, the max event time per
** watermark id, the newest state file's batch, and every input's position. */
static int write_commit(dp_driver *dr, int64_t batch, bool final) {
  dp_buf b = DP_BUF_INIT;
  const dp_exec *ex = dr->ex;
  dp_put_svar(&b, dr->batch_watermark);
  dp_put_svar(&b, dr->next_watermark);
  int nq = ex->query->nwatermarks;
  dp_put_uvar(&b, (uint64_t)nq);
  for (int i = 0; i < nq; i++) dp_put_svar(&b, ex->max_event_time[i]);
  dp_put_svar(&b, dr->state_batch);
  dp_put_u8(&b, final ? 1 : 0); /* the query ended with this batch */
  dp_put_uvar(&b, (uint64_t)dr->ninputs);
  int rc = DIPPER_OK;
  for (int i = 0; i < dr->ninputs && !rc; i++) {
    dp_buf pos = DP_BUF_INIT;
    dp_op *op = dr->inputs[i];
    rc = op->cls == &dp_op_scan ? dp_scan_save_position(op, &pos)
                                : dp_values_save_position(op, &pos);
    dp_put_bytes(&b, pos.data, pos.len);
    if (pos.oom) rc = DIPPER_NOMEM;
    dp_buf_free(&pos);
  }
  if (!rc && b.oom) rc = DIPPER_NOMEM;
  if (!rc) rc = dp_ckpt_write(dr->ckpt, DP_CKPT_COMMIT, batch, b.data, b.len);
  dp_buf_free(&b);
  return rc ? ck_fail(dr, rc, "writing a commit record") : DIPPER_OK;
}

/* Keep the two newest full states and what a restart from the older one
** needs: the deltas after it, its commit record and the offsets after it. */
static void purge_old(dp_driver *dr) {
  int64_t keep = dr->prev_full_batch;
  if (keep <= dr->purged_below) return;
  dp_ckpt_purge(dr->ckpt, DP_CKPT_STATE, keep);
  dp_ckpt_purge(dr->ckpt, DP_CKPT_COMMIT, keep);
  dp_ckpt_purge(dr->ckpt, DP_CKPT_OFFSETS, keep + 1);
  dp_ckpt_purge_folders(dr->ckpt, "rocksdb", keep); /* state_rocks.h's checkpoints */
  dr->purged_below = keep;
}

static bool has_state(const dp_driver *dr) {
  for (int i = 0; i < dr->nops; i++)
    if (dr->ops[i]->cls->save_state) return true;
  return false;
}

/* A state file: u8 full (every operator's whole state: a point a restart
** can start from), then per stateful operator its class name, 'F' (whole)
** or 'D' (a delta on the state before), its length (u64) and its bytes.  A full file is due
** first (a restart goes on with the chain it restored), after DELTAS_PER_FULL deltas, and once the deltas
** since the last full one add up to its size: the deltas a restart reads
** stay below one more snapshot. */
#define DELTAS_PER_FULL 100

static int write_state(dp_driver *dr, int64_t batch) {
  bool deltas = false;
  for (int i = 0; i < dr->nops; i++) deltas |= dr->ops[i]->cls->save_delta != NULL;
  bool full = !deltas || dr->last_full_batch < 0 || dr->deltas_since_full >= DELTAS_PER_FULL ||
              dr->delta_bytes >= dr->full_bytes;
  dr->state_batch = batch;
  if (!has_state(dr)) { /* nothing to write: every batch is a full state */
    dr->prev_full_batch = dr->last_full_batch;
    dr->last_full_batch = batch;
    return DIPPER_OK;
  }
  dp_buf b = DP_BUF_INIT;
  int rc = DIPPER_OK;
  dp_put_u8(&b, full ? 1 : 0);
  for (int i = 0; i < dr->nops && !rc; i++) {
    dp_op *op = dr->ops[i];
    if (!op->cls->save_state) continue;
    bool delta = !full && op->cls->save_delta;
    /* The operator writes straight into the file's buffer after a u64
    ** length, filled in once it is known: no copy of a large state. */
    dp_put_str(&b, op->cls->name);
    dp_put_u8(&b, delta ? 'D' : 'F');
    size_t at = b.len;
    dp_put_u64(&b, 0);
    rc = delta ? op->cls->save_delta(op, &b) : op->cls->save_state(op, &b);
    if (!rc && !b.oom) {
      dp_buf len = DP_BUF_INIT;
      dp_put_u64(&len, (uint64_t)(b.len - at - 8));
      if (len.oom) rc = DIPPER_NOMEM;
      else memcpy(b.data + at, len.data, 8);
      dp_buf_free(&len);
    }
  }
  if (!rc && b.oom) rc = DIPPER_NOMEM;
  if (!rc) rc = dp_ckpt_write(dr->ckpt, DP_CKPT_STATE, batch, b.data, b.len);
  size_t written = b.len;
  dp_buf_free(&b);
  if (rc) return ck_fail(dr, rc, "writing the operators' state");
  if (full) {
    dr->prev_full_batch = dr->last_full_batch;
    dr->last_full_batch = batch;
    dr->full_bytes = written;
    dr->delta_bytes = 0;
    dr->deltas_since_full = 0;
  } else {
    dr->delta_bytes += written;
    dr->deltas_since_full++;
  }
  dr->last_state_at = dp_mono_micros();
  return DIPPER_OK;
}

/* After a committed batch: the state when due, then the commit record. */
static int checkpoint_batch(dp_driver *dr, int64_t batch, bool final) {
  bool due = dr->state_every == 0 || final || dr->state_batch < 0 ||
             dp_mono_micros() - dr->last_state_at >= dr->state_every;
  int rc = due ? write_state(dr, batch) : DIPPER_OK;
  if (!rc) rc = write_commit(dr, batch, final);
  if (!rc && due) purge_old(dr);
  return rc;
}

/* Offsets record, before the batch runs: its watermarks, when the inputs
** were planned for it their bounds, then 'T' and its processing time (the
** clock a state TTL and PROCTIME() read; a record written before it was
** kept has none, and its batch runs again at the restart's time). */
static int write_offsets(dp_driver *dr, int64_t batch, bool final, bool planned) {
  dp_buf b = DP_BUF_INIT;
  dp_put_svar(&b, dr->ex->watermark);
  dp_put_svar(&b, dr->ex->late_watermark);
  dp_put_u8(&b, final ? 1 : 0);
  dp_put_u8(&b, planned ? 1 : 0);
  dp_put_uvar(&b, (uint64_t)dr->ninputs0);
  int rc = DIPPER_OK;
  for (int i = 0; i < dr->ninputs0 && !rc; i++) {
    dp_buf plan = DP_BUF_INIT;
    if (planned && dr->inputs[i]->cls == &dp_op_scan) rc = dp_scan_save_plan(dr->inputs[i], &plan);
    dp_put_bytes(&b, plan.data, plan.len);
    if (plan.oom) rc = DIPPER_NOMEM;
    dp_buf_free(&plan);
  }
  dp_put_u8(&b, 'T');
  dp_put_svar(&b, dr->ex->batch_start_time);
  if (!rc && b.oom) rc = DIPPER_NOMEM;
  if (!rc) rc = dp_ckpt_write(dr->ckpt, DP_CKPT_OFFSETS, batch, b.data, b.len);
  dp_buf_free(&b);
  return rc ? ck_fail(dr, rc, "writing an offsets record") : DIPPER_OK;
}

static int damaged(dp_driver *dr, dp_ckpt_kind kind, int64_t batch, const char *why) {
  dp_span nowhere = {0, 0, 0, 0};
  const char *path = dp_ckpt_path(dr->ckpt, kind, batch);
  return dp_error(&dr->diags, DIPPER_CORRUPT, nowhere,
                  "checkpoint file '%s' does not fit this query (%s); remove '%s' to start the "
                  "query afresh",
                  path ? path : "?", why, dp_ckpt_dir(dr->ckpt));
}

/* One state file of a restore's chain, split by operator. */
typedef struct state_file {
  int64_t batch;
  dp_ckpt_mapping file;
  bool full;
  const uint8_t **blob; /* per operator of dr->ops (NULL: stateless) */
  size_t *len;
  bool *whole;
} state_file;

static int split_state(dp_driver *dr, state_file *f, size_t n) {
  dp_rd r;
  dp_rd_init(&r, f->file.payload, n);
  uint8_t full = dp_get_u8(&r);
  f->full = full == 1;
  for (int i = 0; i < dr->nops && !r.bad; i++) {
    dp_op *op = dr->ops[i];
    if (!op->cls->save_state) continue;
    size_t nname;
    const uint8_t *name = dp_get_bytes(&r, &nname);
    uint8_t kind = dp_get_u8(&r);
    uint64_t blen = dp_get_u64(&r);
    if (!r.bad && blen > dp_rd_left(&r)) r.bad = true;
    f->len[i] = r.bad ? 0 : (size_t)blen;
    f->blob[i] = r.bad ? NULL : r.p + r.pos;
    if (!r.bad) r.pos += (size_t)blen;
    f->whole[i] = kind == 'F';
    if (r.bad || nname != strlen(op->cls->name) || memcmp(name, op->cls->name, nname) != 0 ||
        (kind != 'F' && kind != 'D') || (kind == 'D' && (!op->cls->restore_delta || f->full)))
      return damaged(dr, DP_CKPT_STATE, f->batch, "its operators are not this query's");
  }
  if (full > 1 || !dp_rd_done(&r)) return damaged(dr, DP_CKPT_STATE, f->batch, "bytes are left over");
  return DIPPER_OK;
}

/* The state files from the newest full one at or before S up to S. */
static int read_chain(dp_driver *dr, int64_t s, state_file **out, int *count) {
  int64_t *ids;
  int nids, rc = dp_ckpt_list(dr->ckpt, DP_CKPT_STATE, &ids, &nids);
  *out = NULL;
  *count = 0;
  if (rc) return rc;
  state_file *chain = calloc((size_t)(nids ? nids : 1), sizeof *chain);
  if (!chain) rc = DIPPER_NOMEM;
  int n = 0, last = -1;
  for (int i = 0; i < nids && !rc; i++)
    if (ids[i] <= s) last = i;
  if (!rc && (last < 0 || ids[last] != s)) rc = damaged(dr, DP_CKPT_STATE, s, "it is missing");
  /* newest first, until a full one */
  for (int i = last; i >= 0 && !rc; i--) {
    state_file *f = &chain[n++];
    size_t len;
    f->batch = ids[i];
    rc = dp_ckpt_map(dr->ckpt, DP_CKPT_STATE, ids[i], true, &f->file);
    len = f->file.n;
    if (rc) break;
    size_t k = (size_t)dr->nops;
    f->blob = calloc(k ? k : 1, sizeof *f->blob);
    f->len = calloc(k ? k : 1, sizeof *f->len);
    f->whole = calloc(k ? k : 1, sizeof *f->whole);
    if (!f->blob || !f->len || !f->whole) rc = DIPPER_NOMEM;
    if (!rc) rc = split_state(dr, f, len);
    if (!rc && f->full) break;
    if (!rc && i == 0) rc = damaged(dr, DP_CKPT_STATE, ids[i], "no full state comes before it");
  }
  free(ids);
  *out = chain;
  *count = n;
  return rc;
}

static void free_chain(state_file *chain, int n) {
  for (int i = 0; chain && i < n; i++) {
    dp_ckpt_unmap(&chain[i].file);
    free(chain[i].blob);
    free(chain[i].len);
    free(chain[i].whole);
  }
  free(chain);
}

/* Restore the operators from the state chain ending at S: per operator, its
** newest whole state in the chain, then each of its deltas after it. */
static int restore_state(dp_driver *dr, int64_t s) {
  state_file *chain;
  int n;
  int rc = read_chain(dr, s, &chain, &n); /* chain[0] is S, chain[n-1] the full one */
  for (int i = 0; i < dr->nops && !rc; i++) {
    dp_op *op = dr->ops[i];
    if (!op->cls->save_state) continue;
    int from = 0;
    while (from < n - 1 && !chain[from].whole[i]) from++;
    dp_rd *deltas =
        op->cls->restore_expect && from > 0 ? malloc((size_t)from * sizeof *deltas) : NULL;
    for (int k = from - 1; deltas && k >= 0; k--)
      dp_rd_init(&deltas[from - 1 - k], chain[k].blob[i], chain[k].len[i]);
    if (deltas) op->cls->restore_expect(op, deltas, from); /* a hint: no memory, no hint */
    free(deltas);
    for (int k = from; k >= 0 && !rc; k--) {
      dp_rd one;
      dp_rd_init(&one, chain[k].blob[i], chain[k].len[i]);
      rc = k == from ? op->cls->restore_state(op, &one) : op->cls->restore_delta(op, &one);
      if (!rc && !dp_rd_done(&one)) rc = DIPPER_CORRUPT;
      if (rc == DIPPER_CORRUPT && dr->diags.count == 0)
        rc = damaged(dr, DP_CKPT_STATE, chain[k].batch, "an operator's state does not read back");
    }
  }
  if (!rc && n > 0) {
    /* The chain goes on: the next state is a delta on the one restored (an
    ** operator's deltas start from what it restored), not a full state of
    ** everything (half the time a restart took).  Nothing is purged until
    ** the next full one: then the restored full state is the one kept. */
    dr->last_full_batch = chain[n - 1].batch;
    dr->prev_full_batch = -1;
    dr->full_bytes = chain[n - 1].file.n;
    dr->delta_bytes = 0;
    for (int k = 0; k < n - 1; k++) dr->delta_bytes += chain[k].file.n;
    dr->deltas_since_full = n - 1;
  } else if (!rc) {
    dr->last_full_batch = dr->prev_full_batch = -1;
  }
  free_chain(chain, n);
  return rc;
}

/* Restore the watermarks and input positions of commits/S. */
static int restore_commit(dp_driver *dr, int64_t s, const uint8_t *data, size_t n) {
  dp_rd r;
  dp_rd_init(&r, data, n);
  dp_exec *ex = dr->ex;
  dr->batch_watermark = dp_get_svar(&r);
  dr->next_watermark = dp_get_svar(&r);
  uint64_t nq = dp_get_count(&r, 1);
  if (r.bad || nq != (uint64_t)ex->query->nwatermarks)
    return damaged(dr, DP_CKPT_COMMIT, s, "its watermarks are not this query's");
  for (uint64_t i = 0; i < nq; i++) ex->max_event_time[i] = dp_get_svar(&r);
  dp_get_svar(&r); /* the state batch: the caller's business */
  uint8_t ended = dp_get_u8(&r);
  uint64_t ni = dp_get_count(&r, 1);
  if (r.bad || ni != (uint64_t)dr->ninputs || ended > 1)
    return damaged(dr, DP_CKPT_COMMIT, s, "its inputs are not this query's");
  for (int i = 0; i < dr->ninputs; i++) {
    size_t len;
    const uint8_t *p = dp_get_bytes(&r, &len);
    if (r.bad) break;
    dp_rd one;
    dp_rd_init(&one, p, len);
    dp_op *op = dr->inputs[i];
    int rc = op->cls == &dp_op_scan ? dp_scan_restore_position(op, &one)
                                    : dp_values_restore_position(op, &one);
    if (!rc && !dp_rd_done(&one)) rc = DIPPER_CORRUPT;
    if (rc == DIPPER_CORRUPT && dr->diags.count == 0)
      return damaged(dr, DP_CKPT_COMMIT, s, "an input's position does not read back");
    if (rc) return rc;
  }
  if (!dp_rd_done(&r)) return damaged(dr, DP_CKPT_COMMIT, s, "bytes are left over");
  dr->finished = ended == 1;
  dr->progress.finished = dr->finished; /* a restart of a query that ended says so */
  dr->progress.batch_id = s;
  dr->progress.watermark = dr->next_watermark;
  return DIPPER_OK;
}

/* The newest commit record that reads back whole, or -1. */
static int newest_commit(dp_driver *dr, int64_t *c, uint8_t **data, size_t *n) {
  int64_t *ids;
  int count, rc = dp_ckpt_list(dr->ckpt, DP_CKPT_COMMIT, &ids, &count);
  *c = -1;
  *data = NULL;
  for (int i = count - 1; i >= 0 && !rc; i--) {
    rc = dp_ckpt_read(dr->ckpt, DP_CKPT_COMMIT, ids[i], false, data, n);
    if (rc == DIPPER_OK) {
      *c = ids[i];
      break;
    }
    if (rc == DIPPER_CORRUPT || rc == DIPPER_NAME) rc = DIPPER_OK; /* the one before it, then */
  }
  free(ids);
  return rc;
}

/* The state batch a commit record names. */
static int64_t commit_state_batch(const uint8_t *data, size_t n) {
  dp_rd r;
  dp_rd_init(&r, data, n);
  dp_get_svar(&r), dp_get_svar(&r);
  uint64_t nq = dp_get_count(&r, 1);
  for (uint64_t i = 0; i < nq; i++) dp_get_svar(&r);
  int64_t s = dp_get_svar(&r);
  return r.bad ? -2 : s;
}

static int recover(dp_driver *dr) {
  int64_t c;
  uint8_t *data;
  size_t n;
  int rc = newest_commit(dr, &c, &data, &n);
  if (rc) return rc;
  int64_t s = c >= 0 ? commit_state_batch(data, n) : -1;
  if (s < -1 || s > c) {
    free(data);
    return damaged(dr, DP_CKPT_COMMIT, c, "it names no state file");
  }
  if (s >= 0 && s != c) {
    free(data);
    rc = dp_ckpt_read(dr->ckpt, DP_CKPT_COMMIT, s, true, &data, &n);
    if (rc == DIPPER_NAME) return damaged(dr, DP_CKPT_COMMIT, s, "it is missing");
    if (rc) return rc;
  }
  if (s >= 0) {
    rc = has_state(dr) ? restore_state(dr, s) : DIPPER_OK;
    if (!rc) rc = restore_commit(dr, s, data, n);
    dr->state_batch = s;
    if (!has_state(dr)) dr->last_full_batch = dr->prev_full_batch = s;
    dr->last_state_at = dp_mono_micros();
  }
  free(data);
  if (rc) return rc;
  /* Every batch logged after the state runs again, in order. */
  int64_t *ids;
  int count;
  if ((rc = dp_ckpt_list(dr->ckpt, DP_CKPT_OFFSETS, &ids, &count)) != DIPPER_OK) return rc;
  dr->replay_next = s + 1;
  dr->replay_last = s;
  for (int i = 0; i < count; i++) {
    if (ids[i] <= s) continue;
    if (ids[i] != dr->replay_last + 1) {
      rc = damaged(dr, DP_CKPT_OFFSETS, dr->replay_last + 1, "it is missing");
      break;
    }
    dr->replay_last = ids[i];
  }
  free(ids);
  return rc;
}

static int checkpoint_start(dp_driver *dr) {
  int rc = check_checkpointable(dr);
  if (rc) return rc;
  const char *every = dp_session_option(dr->db, "execution.checkpointing.interval");
  if (every && dp_parse_duration(every, &dr->state_every) != DIPPER_OK) dr->state_every = 0;
  int64_t *ids;
  int count;
  if ((rc = dp_ckpt_list(dr->ckpt, DP_CKPT_COMMIT, &ids, &count)) != DIPPER_OK) return rc;
  free(ids);
  int64_t *offs;
  int noffs;
  if ((rc = dp_ckpt_list(dr->ckpt, DP_CKPT_OFFSETS, &offs, &noffs)) != DIPPER_OK) return rc;
  free(offs);
  if ((rc = check_fingerprint(dr, count > 0 || noffs > 0)) != DIPPER_OK) return rc;
  return recover(dr);
}

/* 'parallelism.default': the workers a query asks for (absent: 1). */
static int workers_wanted(dipper *db) {
  const char *v = dp_session_option(db, "parallelism.default");
  long n = v ? strtol(v, NULL, 10) : 1;
  if (n < 1) n = 1;
  if (n > DP_PAR_MAX_WORKERS) n = DP_PAR_MAX_WORKERS;
  return (int)n;
}

/* The query on the workers it asks for (parallel.h) when its plan and
** sources allow, else on one thread with a note saying why. */
static int open_query(dp_driver *dr, const dp_query_plan *q, const dp_plan *root) {
  const char *ck = dr->ckpt ? dp_ckpt_dir(dr->ckpt) : NULL;
  int n = workers_wanted(dr->db);
  const char *why = NULL;
  const char *backend = dp_session_option(dr->db, "state.backend");
  if (n > 1)
    why = backend && strcmp(backend, "rocksdb") == 0
              ? "'state.backend' = 'rocksdb' runs on one thread so far (one store per operator)"
              : dp_par_refusal(q, root);
  if (n > 1 && !why) {
    int rc = dp_par_new(dr->db, q, root, n, ck, &dr->diags, &why, &dr->par);
    if (rc == DIPPER_OK) return dp_exec_open_part(dr->db, q, root, &dr->diags, ck, dr->par, -1, &dr->ex);
    dp_par_free(dr->par);
    dr->par = NULL;
    if (rc != DIPPER_UNSUPPORTED || !why) return rc;
  }
  if (why)
    dp_session_log(dr->db, DIPPER_LOG_NOTE,
                   "query `%s` runs on one thread, not the %d workers of 'parallelism.default': %s",
                   dr->name, n, why);
  return dp_exec_open(dr->db, q, root, &dr->diags, ck, &dr->ex);
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

  dr->state_batch = dr->last_full_batch = dr->prev_full_batch = -1;
  dr->purged_below = 0;
  dr->replay_next = 0;
  dr->replay_last = -1;
  const char *ckdir = q->streaming
                          ? dp_session_option(db, "execution.checkpointing.dir")
                          : NULL;
  int rc = ckdir ? dp_ckpt_open(ckdir, dr->name, &dr->diags, &dr->ckpt) : DIPPER_OK;
  if (rc == DIPPER_OK) rc = open_query(dr, q, root);
  if (rc != DIPPER_OK) {
    dr->failed = rc;
    return rc;
  }
  collect c = {dr, true};
  walk_all(dr, &c);
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
  walk_all(dr, &c);
  /* the coordinator has no inputs: each worker's tree has the same */
  dr->ninputs0 = dr->par ? dr->ninputs / dp_par_count(dr->par) : dr->ninputs;
  if (dr->par && dr->ninputs0 * dp_par_count(dr->par) != dr->ninputs) {
    dr->failed = DIPPER_INTERNAL;
    return DIPPER_INTERNAL;
  }
  mark_watermarks(root, seen, nq);
  for (int i = 0; i < nq; i++)
    if (seen[i]) dr->wm_ids[dr->nwm++] = i;
  if (dr->ckpt && (rc = checkpoint_start(dr)) != DIPPER_OK) dr->failed = rc;
  if (rc == DIPPER_OK && q->streaming && !dr->ckpt && !dr->par && dr->ex->root_op &&
      dr->ex->root_op->cls == &dp_op_sink && dp_sink_op_defer(dr->ex->root_op))
    dr->defer = true, dr->settled_at = dp_mono_micros();
  if (rc == DIPPER_OK && q->streaming && (dr->trace = dp_btrace_open()) != NULL)
    dr->ex->trace = !dr->par; /* the fetch and produce times: one thread's */
  return rc;
}

static int settle_outputs(dp_driver *dr, int wait_ms);

void dp_driver_free(dp_driver *dr) {
  if (!dr) return;
  /* The last batches' acks before the sources close (a Kafka source's last
  ** group commit): a short wait, as the sink's own close waits. */
  if (dr->defer) (void)settle_outputs(dr, 5000);
  dp_btrace_close(dr->trace, dr->name);
  dp_exec_free(dr->ex);
  dp_par_free(dr->par);
  dp_ckpt_close(dr->ckpt);
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

/* Whether the sink's writes so far are acknowledged (waiting up to wait_ms,
** -1: the sink's commit timeout), told to every source (outputs_pending). */
static int settle_outputs(dp_driver *dr, int wait_ms) {
  bool settled = false;
  int rc = dp_sink_op_settle(dr->ex->root_op, wait_ms, &settled);
  if (settled) dr->settled_at = dp_mono_micros();
  for (int i = 0; i < dr->ninputs; i++)
    if (dr->inputs[i]->cls == &dp_op_scan) dp_scan_set_outputs_pending(dr->inputs[i], !settled);
  return rc;
}

/* The time since *t into *into, and *t moved to now (the batch trace). */
static void trace_lap(int64_t *t, int64_t *into) {
  int64_t now = dp_mono_micros();
  *into = now - *t;
  *t = now;
}

/* Run the next micro-batch.  `planned`: the inputs were planned for it
** (the final batch after they ended is not).  `logged`: its offsets record
** is on disk already (a batch run again after a restart). */
static int run_batch_as(dp_driver *dr, bool final, int64_t watermark, bool planned, bool logged) {
  dp_exec *ex = dr->ex;
  ex->batch_id = dr->progress.batch_id + 1;
  ex->late_watermark = dr->batch_watermark;
  ex->watermark = watermark;
  ex->final = final;
  int64_t ck_bytes0 = dr->ckpt ? dp_ckpt_bytes_written(dr->ckpt) : 0, ck_us = 0;
  /* a batch run again keeps the time its offsets record logged (replay_batch) */
  if (!logged) ex->batch_start_time = dp_session_now(ex->db);
  if (dr->ckpt && !logged) {
    int64_t c0 = dp_mono_micros();
    int rc = write_offsets(dr, ex->batch_id, final, planned);
    if (rc != DIPPER_OK) return fail(dr, rc);
    ck_us += dp_mono_micros() - c0;
  }
  int64_t t0 = dp_mono_micros();
  int64_t in_before = input_rows(dr);
  int64_t skipped_before = dp_sink_op_skipped(ex->root_op);
  int64_t out_rows = 0;
  dp_op *root = ex->root_op;
  /* With workers: they run the batch first; the sink then reads their output. */
  if (dr->par) {
    int rc = dp_par_run(dr->par, ex, &dr->diags);
    if (rc != DIPPER_OK) return fail(dr, rc);
  }
  for (;;) {
    dp_batch *b = NULL;
    int rc = root->cls->next(root, &b);
    if (rc != DIPPER_OK) return fail(dr, rc);
    if (!b) break;
    out_rows += b->nrows;
  }
  dp_btrace_rec *tr = dr->cur;
  int64_t tt = tr ? dp_mono_micros() : 0;
  if (tr) tr->pull_us = tt - t0;
  int rc = dp_sink_op_commit(root, ex->batch_id);
  if (rc == DIPPER_OK && dr->par) {
    rc = dp_par_commit_sinks(dr->par, ex->batch_id, &dr->diags);
    out_rows += dp_par_rows_sunk(dr->par);
  }
  /* Deferred acks: a look, and a wait when they have lagged SETTLE_US (so
  ** that group commits still go) or the batch is the last. */
  if (rc == DIPPER_OK && dr->defer)
    rc = settle_outputs(dr, final || dp_mono_micros() - dr->settled_at >= SETTLE_US ? -1 : 0);
  if (rc != DIPPER_OK) return fail(dr, rc);
  if (tr) trace_lap(&tt, &tr->flush_us);
  /* rows out: what the sink wrote, not what it was handed again */
  out_rows -= dp_sink_op_skipped(root) - skipped_before;
  for (int i = 0; i < dr->ninputs; i++)
    if (dr->inputs[i]->cls == &dp_op_scan && (rc = dp_scan_commit(dr->inputs[i])) != DIPPER_OK)
      return fail(dr, rc);
  if (tr) trace_lap(&tt, &tr->commit_us);
  dr->batch_watermark = watermark;
  if (!final && ex->query->streaming) dr->next_watermark = global_watermark(dr, dr->next_watermark);
  for (int i = 0; i < dr->nops; i++) {
    dp_op *op = dr->ops[i];
    if (op->cls->end_batch && (rc = op->cls->end_batch(op)) != DIPPER_OK) return fail(dr, rc);
  }
  if (dr->ckpt) {
    int64_t c0 = dp_mono_micros();
    if ((rc = checkpoint_batch(dr, ex->batch_id, final)) != DIPPER_OK) return fail(dr, rc);
    ck_us += dp_mono_micros() - c0;
  }
  dp_arena_reset(ex->batch_arena);
  if (dr->par) dp_par_end_batch(dr->par);
  if (tr) {
    trace_lap(&tt, &tr->end_us);
    tr->batch = ex->batch_id;
    tr->rows_in = input_rows(dr) - in_before;
    tr->rows_out = out_rows;
    tr->watermark = watermark;
    tr->next_watermark = dr->next_watermark;
  }

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
  p->checkpoint_bytes = dr->ckpt ? dp_ckpt_bytes_written(dr->ckpt) - ck_bytes0 : 0;
  p->checkpoint_us = ck_us;
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

static int run_batch(dp_driver *dr, bool final, int64_t watermark) {
  return run_batch_as(dr, final, watermark, true, false);
}

/* Plan every input; *has_data when one has rows, *exhausted when all ended. */
static int plan_inputs(dp_driver *dr, int64_t max_rows, bool to_end, bool *has_data,
                       bool *exhausted) {
  *has_data = false;
  *exhausted = true;
  if (dr->par) {
    int rc = dp_par_plan_inputs(dr->par, max_rows, to_end, has_data, exhausted, &dr->diags);
    return rc ? fail(dr, rc) : DIPPER_OK;
  }
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

/* Run again the next batch logged after the restored state, from its
** offsets record: the inputs planned to exactly its bounds, under its
** watermarks. */
static int replay_batch(dp_driver *dr) {
  int64_t b = dr->replay_next++;
  uint8_t *data;
  size_t n;
  int rc = dp_ckpt_read(dr->ckpt, DP_CKPT_OFFSETS, b, true, &data, &n);
  if (rc == DIPPER_NAME) rc = damaged(dr, DP_CKPT_OFFSETS, b, "it is missing");
  if (rc) return fail(dr, rc);
  dp_rd r;
  dp_rd_init(&r, data, n);
  int64_t wm = dp_get_svar(&r), late = dp_get_svar(&r);
  uint8_t final = dp_get_u8(&r), planned = dp_get_u8(&r);
  uint64_t ni = dp_get_count(&r, 1);
  if (r.bad || final > 1 || planned > 1 || ni != (uint64_t)dr->ninputs0 ||
      b != dr->progress.batch_id + 1)
    rc = damaged(dr, DP_CKPT_OFFSETS, b, "its inputs are not this query's");
  /* worker 0's plans: dp_par_plan_inputs replays them on the others */
  for (int i = 0; i < dr->ninputs0 && !rc; i++) {
    size_t len;
    const uint8_t *p = dp_get_bytes(&r, &len);
    if (r.bad) break;
    if (!planned || dr->inputs[i]->cls != &dp_op_scan) continue;
    dp_rd one;
    dp_rd_init(&one, p, len);
    rc = dp_scan_replay_plan(dr->inputs[i], &one);
    if (!rc && !dp_rd_done(&one)) rc = DIPPER_CORRUPT;
    if (rc == DIPPER_CORRUPT && dr->diags.count == 0)
      rc = damaged(dr, DP_CKPT_OFFSETS, b, "an input's bounds do not read back");
  }
  /* the batch's processing time, when the record has it (older ones do not) */
  int64_t now = dp_session_now(dr->ex->db);
  if (!rc && !r.bad && !dp_rd_done(&r)) {
    uint8_t tag = dp_get_u8(&r);
    int64_t t = dp_get_svar(&r);
    if (r.bad || tag != 'T') rc = damaged(dr, DP_CKPT_OFFSETS, b, "its processing time does not read back");
    else now = t;
  }
  if (!rc && !dp_rd_done(&r)) rc = damaged(dr, DP_CKPT_OFFSETS, b, "bytes are left over");
  free(data);
  if (rc) return fail(dr, rc);
  bool has_data = false, exhausted = false;
  if (planned && (rc = plan_inputs(dr, dr->ex->max_batch_rows, false, &has_data, &exhausted)))
    return rc;
  dr->batch_watermark = late;
  dr->ex->batch_start_time = now;
  if ((rc = run_batch_as(dr, final, wm, planned, true)) != DIPPER_OK) return rc;
  if (final)
    dr->finished = true;
  else if (planned && exhausted)
    dr->final_next = true;
  return DIPPER_OK;
}

int dp_driver_wait_fds(dp_driver *dr, int *fds, int cap, bool *all) {
  int n = 0;
  *all = false;
  if (dr->failed || dr->finished || dr->ninputs == 0) return 0;
  if (dr->par) return dp_par_wait_fds(dr->par, fds, cap, all);
  *all = true;
  for (int i = 0; i < dr->ninputs; i++) {
    dp_op *op = dr->inputs[i];
    int fd = op->cls == &dp_op_scan ? dp_scan_wait_fd(op) : -1;
    if (fd < 0)
      *all = false;
    else if (n++ < cap)
      fds[n - 1] = fd;
  }
  return n;
}

static int driver_step(dp_driver *dr, bool *ran, bool *finished);

/* One step; traced (DIPPER_TRACE_BATCHES) when it is a streaming query's. */
void dp_driver_set_woken(dp_driver *dr, bool woken) {
  for (int i = 0; i < dr->ninputs; i++)
    if (dr->inputs[i]->cls == &dp_op_scan) dp_scan_set_woken(dr->inputs[i], woken);
}

int dp_driver_step(dp_driver *dr, bool *ran, bool *finished) {
  if (!dr->trace || dr->failed || dr->finished) return driver_step(dr, ran, finished);
  dp_exec *ex = dr->ex;
  dr->cur = dp_btrace_add(dr->trace, dp_mono_micros());
  ex->trace_fetch_us = ex->trace_produce_us = 0;
  int rc = driver_step(dr, ran, finished);
  if (dr->cur) {
    dr->cur->fetch_us = ex->trace_fetch_us;
    dr->cur->produce_us = ex->trace_produce_us;
  }
  dr->cur = NULL;
  dp_btrace_step_end(dr->trace, dp_mono_micros());
  return rc;
}

static int driver_step(dp_driver *dr, bool *ran, bool *finished) {
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

  if (dr->replay_next <= dr->replay_last) {
    rc = replay_batch(dr);
    *ran = rc == DIPPER_OK;
    return finish_with(dr, rc, finished);
  }

  if (dr->final_next) {
    rc = run_batch_as(dr, true, DP_WATERMARK_END, false, false);
    *ran = rc == DIPPER_OK;
    dr->finished = rc == DIPPER_OK;
    return finish_with(dr, rc, finished);
  }

  dp_trigger_kind trigger = ex->trigger.kind;
  rc = plan_inputs(dr, ex->max_batch_rows, false, &has_data, &exhausted);
  if (rc != DIPPER_OK) return rc;
  if (dr->cur) dr->cur->plan_us = dp_mono_micros() - dr->cur->t_plan;
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
