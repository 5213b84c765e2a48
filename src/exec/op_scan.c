/*
** op_scan.c — SCAN: rows of a table, read from its connector's source.
**
** The driver plans every scan before a micro-batch (dp_scan_plan): the
** source fixes the batch's end offset and the scan reads the first chunk
** ahead, so that a batch with no input at all is known before it runs.
** next() then hands out the planned rows a chunk (up to CHUNK_ROWS) at a
** time in one reusable batch; after the micro-batch the driver commits the
** source (dp_scan_commit).
**
** Column pruning: a source that maps the scan schema's columns and ROW
** fields by name (nexmark) is asked for only what the plan above reads
** (exec/narrow.h); its batch is widened back to the node's schema without a
** copy, the unread columns all NULL.  In batch mode (`to_end`) the scan goes on
** planning and reading until the source is exhausted or has nothing more to
** give now, committing as it goes: one micro-batch reads everything.
*/
#include <stdlib.h>
#include <string.h>

#include "connectors/connector.h"
#include "exec/exec.h"
#include "exec/exec_int.h"
#include "exec/narrow.h"
#include "exec/parallel.h"

/* Rows per next(): big enough to amortise the per-batch work of every
** operator, small enough that a batch's columns stay in the caches. */
#define CHUNK_ROWS 4096

typedef struct scan_state {
  dp_source src;
  bool opened;        /* src.cls->open succeeded: close it */
  dp_batch *batch;    /* reused by every next(); of the source's schema */
  dp_narrow *narrow;  /* the source reads only some columns, or NULL */
  bool planned;       /* a batch is planned and not fully read */
  bool done;          /* the planned batch is fully read */
  bool ahead;         /* `batch` holds rows read ahead, not yet handed out */
  bool to_end;        /* batch mode: plan again after each planned batch */
  bool uncommitted;   /* rows were planned since the last commit */
  bool exhausted;
} scan_state;

/* Sources that find the scan schema's columns and ROW fields by name, so
** that a schema of fewer columns and fields makes them generate less. */
static bool prunes_columns(const dp_source_class *cls) {
  return strcmp(cls->name, "nexmark") == 0;
}

static int scan_open(dp_op *op) {
  const dp_plan *p = op->plan;
  const dp_table_def *t = p->u.scan.table;
  const char *connector = t && t->connector ? t->connector : "";
  const dp_source_class *cls = dp_source_find(connector);
  if (!cls)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "the embedded engine has no source for connector '%s' (table `%s`) yet; read "
                    "from 'datagen', 'filesystem', 'memory' or another connector it runs",
                    connector, t ? t->name : "?");
  scan_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  const dp_schema *schema = &p->schema;
  int rc = DIPPER_OK;
  if (prunes_columns(cls)) {
    rc = dp_narrow_open(op, &st->narrow);
    if (!rc && st->narrow) rc = dp_narrow_source_schema(st->narrow, op->ex->arena, &schema);
  }
  if (!rc) {
    st->batch = dp_batch_new(schema, CHUNK_ROWS);
    if (!st->batch) rc = DIPPER_NOMEM;
  }
  if (rc) {
    dp_narrow_free(st->narrow);
    free(st);
    return rc;
  }
  st->src.cls = cls;
  st->src.db = op->ex->db;
  st->src.table = t;
  st->src.schema = schema;
  st->src.diags = op->ex->diags;
  st->src.checkpoint = op->ex->checkpoint;
  rc = cls->open(&st->src);
  /* A worker of a parallel query reads its split of the source. */
  if (rc == DIPPER_OK && op->ex->par && (rc = dp_par_split(op->ex, &st->src)) != DIPPER_OK &&
      cls->close)
    cls->close(&st->src);
  if (rc != DIPPER_OK) {
    dp_batch_free(st->batch);
    dp_narrow_free(st->narrow);
    free(st);
    return rc;
  }
  st->opened = true;
  op->state = st;
  return DIPPER_OK;
}

/* Read the next chunk of the planned batch into st->batch: stops at the
** first rows or at the end of the planned batch.  In batch mode, an end that
** is not the source's end plans the next batch and goes on. */
static int read_chunk(scan_state *st) {
  dp_batch_clear(st->batch);
  while (st->planned) {
    if (!st->done) {
      bool done = false;
      int rc = st->src.cls->read(&st->src, st->batch, CHUNK_ROWS, &done);
      if (rc != DIPPER_OK) return rc;
      rc = dp_batch_sync(st->batch);
      if (rc != DIPPER_OK) return rc;
      st->done = done;
      if (st->batch->nrows > 0) return DIPPER_OK;
      if (!done) continue;
    }
    if (!st->to_end || st->exhausted) {
      st->planned = false;
      return DIPPER_OK;
    }
    /* Batch mode: commit what was read and plan the rest. */
    int rc = st->src.cls->commit(&st->src);
    if (rc != DIPPER_OK) return rc;
    st->uncommitted = false;
    bool exhausted = false;
    rc = st->src.cls->plan_batch(&st->src, 0, &exhausted);
    if (rc != DIPPER_OK) return rc;
    st->exhausted = exhausted;
    st->uncommitted = true;
    st->done = false;
    /* A planned batch that yields nothing when read ends the input for
    ** now (an unbounded source read in batch mode). */
    bool done = false;
    rc = st->src.cls->read(&st->src, st->batch, CHUNK_ROWS, &done);
    if (rc != DIPPER_OK) return rc;
    rc = dp_batch_sync(st->batch);
    if (rc != DIPPER_OK) return rc;
    st->done = done;
    if (st->batch->nrows > 0) return DIPPER_OK;
    if (done) st->planned = false;
  }
  return DIPPER_OK;
}

/* read_chunk, its time added to the batch trace's fetch time when it is on. */
static int traced_read_chunk(dp_op *op, scan_state *st) {
  if (!op->ex->trace) return read_chunk(st);
  int64_t t0 = dp_mono_micros();
  int rc = read_chunk(st);
  op->ex->trace_fetch_us += dp_mono_micros() - t0;
  return rc;
}

int dp_scan_plan(dp_op *op, int64_t max_rows, bool to_end, bool *has_data, bool *exhausted) {
  scan_state *st = op->state;
  *has_data = false;
  bool ended = false;
  int rc = st->src.cls->plan_batch(&st->src, max_rows, &ended);
  if (rc != DIPPER_OK) return rc;
  st->exhausted = ended;
  st->planned = true;
  st->done = false;
  st->to_end = to_end;
  st->uncommitted = true;
  rc = traced_read_chunk(op, st);
  if (rc != DIPPER_OK) return rc;
  st->ahead = st->batch->nrows > 0;
  *has_data = st->ahead;
  *exhausted = st->exhausted;
  return DIPPER_OK;
}

static int scan_next(dp_op *op, dp_batch **out) {
  scan_state *st = op->state;
  *out = NULL;
  if (st->ahead) {
    st->ahead = false;
  } else {
    int rc = traced_read_chunk(op, st);
    if (rc != DIPPER_OK) return rc;
  }
  if (st->batch->nrows == 0) return DIPPER_OK;
  op->metrics.rows_out += st->batch->nrows;
  if (st->narrow) return dp_narrow_widen(st->narrow, st->batch, out);
  *out = st->batch;
  return DIPPER_OK;
}

int dp_scan_commit(dp_op *op) {
  scan_state *st = op->state;
  if (!st->uncommitted) return DIPPER_OK;
  st->uncommitted = false;
  st->planned = false;
  st->ahead = false;
  return st->src.cls->commit(&st->src);
}

/* ---- checkpoints: the source's own bytes (connector.h) ---- */

bool dp_scan_resumable(const dp_op *op) {
  const scan_state *st = op->state;
  const dp_source_class *c = st->src.cls;
  return c->save_plan && c->save_position && c->restore_position && c->replay_plan;
}

void dp_scan_set_outputs_pending(dp_op *op, bool pending) {
  scan_state *st = op->state;
  if (st) st->src.outputs_pending = pending;
}

void dp_scan_set_woken(dp_op *op, bool woken) {
  scan_state *st = op->state;
  if (st) st->src.woken = woken;
}

int dp_scan_wait_fd(dp_op *op) {
  scan_state *st = op->state;
  return st->opened && st->src.cls->wait_fd ? st->src.cls->wait_fd(&st->src) : -1;
}

const char *dp_scan_connector(const dp_op *op) {
  const scan_state *st = op->state;
  return st->src.cls->name;
}

int dp_scan_save_plan(dp_op *op, dp_buf *out) {
  scan_state *st = op->state;
  return st->src.cls->save_plan(&st->src, out);
}

int dp_scan_save_position(dp_op *op, dp_buf *out) {
  scan_state *st = op->state;
  return st->src.cls->save_position(&st->src, out);
}

int dp_scan_restore_position(dp_op *op, dp_rd *in) {
  scan_state *st = op->state;
  return st->src.cls->restore_position(&st->src, in);
}

int dp_scan_replay_plan(dp_op *op, dp_rd *in) {
  scan_state *st = op->state;
  return st->src.cls->replay_plan(&st->src, in);
}

int64_t dp_scan_bad_records(const dp_op *op) {
  const scan_state *st = op->state;
  return st ? st->src.metrics.bad_records_skipped : 0;
}

static void scan_close(dp_op *op) {
  scan_state *st = op->state;
  if (!st) return;
  if (st->opened && st->src.cls->close) st->src.cls->close(&st->src);
  dp_batch_free(st->batch);
  dp_narrow_free(st->narrow);
  free(st);
  op->state = NULL;
}

const dp_op_class dp_op_scan = {
    .name = "Scan",
    .open = scan_open,
    .next = scan_next,
    .end_batch = NULL,
    .close = scan_close,
};
