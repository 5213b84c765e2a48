/*
** run.c — the run API of dipper.h: queries of a program, their micro-batches
** and progress, dipper_run's scheduling by trigger, and dipper_interrupt.
**
** Owns: dipper_query (per INSERT or bare SELECT: an embedded driver, or on
** Spark a dp_spark_query of spark_run.c; plus when its trigger next wants a
** batch).  Does not own: the micro-batch itself (exec/driver.c, or Spark),
** or the operators.
**
** Diagnostics: a query keeps its run-time errors in its own list (its arena
** outlives any call); a call that fails copies them to the handle, where
** dipper_diag_* and dipper_errmsg read them as after a failed compile.
**
** Scheduling in dipper_run: queries take turns on one thread.  A query whose
** trigger is due runs one step; as-fast-as-possible queries are due again at
** once after a batch and after POLL_US when nothing was there to read; a
** processing-time query is due at the next multiple of its interval since
** it started (at once when a batch overran it, as in Spark).  Between turns
** the thread sleeps until the soonest due time, in slices short enough that
** an interrupt is seen within SLICE_US.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/dipper_int.h"
#include "exec/exec.h"
#include "exec/exec_int.h"

#define POLL_US INT64_C(10000)  /* Spark polls idle sources every 10 ms too */
#define SLICE_US INT64_C(50000)

struct dipper_query {
  dipper *db;
  const dipper_program *prog;
  dp_driver *dr;       /* the embedded engine, or */
  dp_spark_query *sq;  /* Spark */
  int64_t started;   /* monotonic µs */
  int64_t next_due;  /* monotonic µs */
};

static const dp_span nowhere = {0, 0, 0, 0};

static void begin_call(dipper *db, const dipper_program *prog) {
  dp_api_diags_begin(db, prog ? prog->file : NULL, prog ? prog->text : NULL,
                     prog && prog->text ? strlen(prog->text) : 0);
}

void dp_api_copy_diags(dipper *db, const dp_diags *d, int rc) {
  for (int i = 0; i < d->count; i++)
    dp_error(&db->diags, d->items[i].code, d->items[i].span, "%s",
             d->items[i].message ? d->items[i].message : dipper_strerror(d->items[i].code));
  if (d->count == 0) dp_error(&db->diags, rc, nowhere, "%s", dipper_strerror(rc));
}

/* ---- a query on either engine ---- */

static const dp_diags *query_diags(const dipper_query *q) {
  return q->sq ? dp_spark_query_diags(q->sq) : dp_driver_diags(q->dr);
}

static void query_progress(const dipper_query *q, dipper_progress *p) {
  if (q->sq)
    dp_spark_query_progress(q->sq, p);
  else
    dp_driver_progress(q->dr, p);
}

static int query_step(dipper_query *q, bool *ran, bool *done) {
  return q->sq ? dp_spark_query_step(q->sq, ran, done) : dp_driver_step(q->dr, ran, done);
}

static const dp_trigger *query_trigger(const dipper_query *q) {
  static const dp_trigger once = {DP_TRIGGER_DEFAULT, 0};
  return q->sq ? &once : dp_driver_trigger(q->dr);
}

/* Copy a query's diagnostics to the handle and return rc. */
static int report(dipper *db, const dipper_query *q, int rc) {
  dp_api_copy_diags(db, query_diags(q), rc);
  dp_api_diags_finish(db);
  return rc;
}

static int fail_unplaced(dipper *db, int rc, const char *message) {
  dp_error(&db->diags, rc, nowhere, "%s", message);
  dp_api_diags_finish(db);
  return rc;
}

void dipper_query_free_all(dipper_query **qs, int n) {
  if (!qs) return;
  for (int i = 0; i < n; i++)
    if (qs[i]) {
      dp_driver_free(qs[i]->dr);
      dp_spark_query_free(qs[i]->sq);
      free(qs[i]);
    }
  free(qs);
}

int dipper_query_start(dipper_program *prog, dipper_query ***out, int *n) {
  if (out) *out = NULL;
  if (n) *n = 0;
  if (!prog || !out || !n) return DIPPER_MISUSE;
  dipper *db = prog->db;
  begin_call(db, prog);
  bool spark = dp_api_on_spark(db);
  int count = 0;
  for (int i = 0; i < prog->n; i++)
    if (!prog->stmts[i].explain) count += prog->stmts[i].plan.nroots;
  dipper_query **qs = calloc((size_t)(count ? count : 1), sizeof *qs);
  if (!qs) return fail_unplaced(db, DIPPER_NOMEM, "out of memory starting the queries");
  int made = 0, selects = 0;
  int64_t now = dp_mono_micros();
  for (int i = 0; i < prog->n; i++) {
    const dp_program_stmt *ps = &prog->stmts[i];
    if (ps->explain) continue;
    for (int r = 0; r < ps->plan.nroots; r++) {
      const dp_plan *root = ps->plan.roots[r];
      char name[64];
      const char *label = name;
      if (root->kind == DP_P_SINK && root->u.sink.table)
        label = root->u.sink.table->name;
      else
        snprintf(name, sizeof name, "select#%d", ++selects);
      dipper_query *q = calloc(1, sizeof *q);
      if (!q) {
        dipper_query_free_all(qs, made);
        return fail_unplaced(db, DIPPER_NOMEM, "out of memory starting the queries");
      }
      qs[made++] = q;
      q->db = db;
      q->prog = prog;
      q->started = q->next_due = now;
      int rc = spark ? dp_spark_query_new(db, &ps->plan, root, label, &q->sq)
                     : dp_driver_new(db, &ps->plan, root, label, &q->dr);
      if (rc != DIPPER_OK) {
        if (!q->dr && !q->sq) {
          dipper_query_free_all(qs, made);
          return fail_unplaced(db, rc, "out of memory starting the queries");
        }
        report(db, q, rc);
        dipper_query_free_all(qs, made);
        return rc;
      }
    }
  }
  *out = qs;
  *n = made;
  return DIPPER_OK;
}

int dipper_query_step(dipper_query *q, int *finished) {
  if (finished) *finished = 0;
  if (!q) return DIPPER_MISUSE;
  begin_call(q->db, q->prog);
  bool ran = false, done = false;
  int rc = query_step(q, &ran, &done);
  if (finished) *finished = done ? 1 : 0;
  if (rc != DIPPER_OK) return report(q->db, q, rc);
  return DIPPER_OK;
}

int dipper_query_progress(const dipper_query *q, dipper_progress *out) {
  if (!q || !out) return DIPPER_MISUSE;
  query_progress(q, out);
  return DIPPER_OK;
}

void dipper_interrupt(dipper *db) {
  if (db) db->interrupted = 1;
}

static void sleep_micros(int64_t us) {
  struct timespec ts = {(time_t)(us / DP_MICROS_PER_SECOND),
                        (long)(us % DP_MICROS_PER_SECOND) * 1000};
  /* A signal (SIGINT for dipper_interrupt) ends the nap early, which is the
  ** point: the loop looks at the flag before sleeping again. */
  nanosleep(&ts, NULL);
}

/* When the query's trigger next wants a step, given that one ran (or found
** nothing) between `before` and `after`. */
static int64_t next_due(const dipper_query *q, bool ran, int64_t before, int64_t after) {
  const dp_trigger *t = query_trigger(q);
  if (t->kind == DP_TRIGGER_PROCESSING_TIME && t->interval > 0) {
    int64_t k = (before - q->started) / t->interval + 1;
    int64_t due = q->started + k * t->interval;
    return due > after ? due : after;
  }
  return ran ? after : after + POLL_US;
}

int dipper_run(dipper_program *prog, dipper_progress_fn fn, void *user) {
  dipper_query **qs = NULL;
  int n = 0;
  int rc = dipper_query_start(prog, &qs, &n);
  if (rc != DIPPER_OK) return rc;
  dipper *db = prog->db;
  for (;;) {
    if (db->interrupted) {
      rc = DIPPER_INTERRUPTED;
      break;
    }
    int64_t now = dp_mono_micros();
    int64_t soonest = INT64_MAX;
    bool running = false;
    for (int i = 0; i < n && rc == DIPPER_OK; i++) {
      dipper_query *q = qs[i];
      dipper_progress p;
      query_progress(q, &p);
      if (p.finished) continue;
      running = true;
      if (now >= q->next_due) {
        bool ran = false, done = false;
        int64_t before = dp_mono_micros();
        rc = query_step(q, &ran, &done);
        if (rc != DIPPER_OK) {
          report(db, q, rc);
          break;
        }
        int64_t after = dp_mono_micros();
        if (ran && fn) {
          query_progress(q, &p);
          fn(user, &p);
        }
        q->next_due = next_due(q, ran, before, after);
        now = after;
        if (db->interrupted) break;
      }
      if (q->next_due < soonest) soonest = q->next_due;
    }
    if (rc != DIPPER_OK || !running) break;
    if (db->interrupted) continue;
    now = dp_mono_micros();
    if (soonest > now) sleep_micros(soonest - now < SLICE_US ? soonest - now : SLICE_US);
  }
  if (fn)
    for (int i = 0; i < n; i++) {
      dipper_progress p;
      query_progress(qs[i], &p);
      fn(user, &p);
    }
  dipper_query_free_all(qs, n);
  if (rc == DIPPER_INTERRUPTED) {
    db->interrupted = 0; /* honoured: the handle may run again */
    fail_unplaced(db, DIPPER_INTERRUPTED, "the run was interrupted (dipper_interrupt)");
  }
  return rc;
}
