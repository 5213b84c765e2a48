/*
** run.c — the run API of dipper.h: queries of a program, their micro-batches
** and progress, dipper_run's scheduling by trigger, and dipper_interrupt.
**
** Owns: dipper_query (per INSERT or bare SELECT: an embedded driver, or on
** Spark a dp_spark_query of spark_run.c; plus when its trigger next wants a
** batch, its last progress reports, and the handle's list of live queries),
** and the query management calls (status, await, stop, recent progress,
** ids, the active list) on both engines.  Does not own: the micro-batch
** itself (exec/driver.c, or Spark), or the operators.
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
** an interrupt is seen within SLICE_US; while it sleeps, it polls the
** inputs that can say when rows came (a Kafka consumer's queue: connector.h,
** wait_fd), and a query waiting as fast as possible on one that does is due
** at once.  A streaming query on Spark runs by
** its own trigger on the server: it is due for a look every SPARK_POLL_US,
** and an interrupted run stops it (and any other still running) before
** returning.
*/
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/dipper_int.h"
#include "core/grow.h"
#include "exec/exec.h"
#include "exec/exec_int.h"
#include "spark/streaming.h"

#define POLL_US INT64_C(10000)  /* Spark polls idle sources every 10 ms too */
#define SLICE_US INT64_C(50000)
/* The look at an idle query whose inputs all have a wait_fd: a record
** wakes it sooner. */
#define IDLE_WAKE_US INT64_C(100000)

/* How often dipper_run looks at a streaming query that runs on Spark: Spark
** runs it by its own trigger, and each look costs two calls to the server. */
#define SPARK_POLL_US INT64_C(500000)

struct dipper_query {
  dipper *db;
  const dipper_program *prog;
  dp_driver *dr;       /* the embedded engine, or */
  dp_spark_query *sq;  /* Spark */
  int64_t started;   /* monotonic µs */
  int64_t next_due;  /* monotonic µs */
  bool over;         /* ended: finished, stopped or failed */
  bool stopped;      /* by dipper_query_stop or an interrupted dipper_run */
  int failed;        /* the code it failed with */
  dipper_query *next_live; /* the handle's list of queries (db->queries) */
  dp_progress_ring recent;
};

static const dp_span nowhere = {0, 0, 0, 0};

/* A streaming query whose sink keeps what it wrote (files, a topic) and no
** checkpoint folder: a run again reads its input from the start and writes
** it there again.  Said once, when it starts. */
static void note_without_checkpoint(dipper *db, const dp_query_plan *q, const dp_plan *root,
                                    const char *name) {
  if (!q->streaming || root->kind != DP_P_SINK || !root->u.sink.table) return;
  if (dp_catalog_option(db->catalog, "execution.checkpointing.dir")) return;
  const char *c = root->u.sink.table->connector;
  if (!c || (strcmp(c, "filesystem") != 0 && strcmp(c, "kafka") != 0 && strcmp(c, "kinesis") != 0))
    return;
  dp_session_log(db, DIPPER_LOG_NOTE,
             "query `%s` runs without a checkpoint folder: run again after it stops, it reads "
             "its input from the start and writes those rows to `%s` again; SET "
             "'execution.checkpointing.dir' = '/some/dir' to resume where it stopped instead",
             name, root->u.sink.table->name);
}

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

/* The whole report, as the library's callbacks and events hand it out. */
static void query_progress(const dipper_query *q, dipper_progress *p) {
  if (q->sq)
    dp_spark_query_progress(q->sq, p);
  else
    dp_driver_progress(q->dr, p);
  p->size = sizeof *p;
}

/* Copy the library's struct `full` (of `full_size` bytes, a size_t first)
** into the caller's `dst`, whose own size_t says how large it is: at most
** that many bytes are written, and dst's size becomes the number filled
** ("Structs that grow" in dipper.h).  DIPPER_MISUSE when dst's size cannot
** even hold the size field (0: the caller did not set it). */
static int copy_sized(void *dst, const void *full, size_t full_size) {
  size_t have;
  memcpy(&have, dst, sizeof have);
  if (have < sizeof have) return DIPPER_MISUSE;
  size_t n = have < full_size ? have : full_size;
  memcpy((char *)dst + sizeof have, (const char *)full + sizeof have, n - sizeof have);
  memcpy(dst, &n, sizeof n);
  return DIPPER_OK;
}

static bool spark_streaming(const dipper_query *q) {
  return q->sq && dp_spark_query_streaming(q->sq);
}

/* One step; every progress report it brings is kept in q->recent. */
static int query_step(dipper_query *q, bool *ran, bool *done) {
  *ran = false;
  *done = q->over;
  if (q->failed) return q->failed;
  if (q->over) return DIPPER_OK;
  int rc;
  if (q->sq) {
    rc = dp_spark_query_step(q->sq, &q->recent, ran, done);
  } else {
    rc = dp_driver_step(q->dr, ran, done);
    if (rc == DIPPER_OK && *ran) {
      dipper_progress p;
      dp_driver_progress(q->dr, &p);
      dp_progress_ring_push(&q->recent, &p);
    }
  }
  if (rc != DIPPER_OK) q->failed = rc;
  if (rc != DIPPER_OK || *done) q->over = true;
  return rc;
}

/* A step of a run loop (dipper_run, dipper_query_await, dipper_listen),
** which waits on the inputs' wait_fds between steps when the query runs as
** fast as possible: its sources may then plan an idle input at what they
** have (connector.h, `woken`); a hand step (dipper_query_step) may not. */
static const dp_trigger *query_trigger(const dipper_query *q);
static int loop_step(dipper_query *q, bool *ran, bool *done) {
  if (q->dr && !q->over) {
    const dp_trigger *t = query_trigger(q);
    bool woken = t->kind == DP_TRIGGER_DEFAULT || (t->kind == DP_TRIGGER_PROCESSING_TIME && t->interval <= 0);
    dp_driver_set_woken(q->dr, woken);
  }
  return query_step(q, ran, done);
}

/* Hand the reports pushed since `since` to fn (at most the ring's worth). */
static void report_since(const dipper_query *q, int64_t since, dipper_progress_fn fn, void *user) {
  if (!fn) return;
  if (q->recent.pushed - since > DIPPER_RECENT_PROGRESS)
    since = q->recent.pushed - DIPPER_RECENT_PROGRESS;
  for (int64_t k = since; k < q->recent.pushed; k++)
    fn(user, &q->recent.items[k % DIPPER_RECENT_PROGRESS]);
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

static void unlink_query(dipper_query *q) {
  for (dipper_query **at = &q->db->queries; *at; at = &(*at)->next_live)
    if (*at == q) {
      *at = q->next_live;
      return;
    }
}

void dipper_query_free_all(dipper_query **qs, int n) {
  if (!qs) return;
  for (int i = 0; i < n; i++)
    if (qs[i]) {
      unlink_query(qs[i]);
      dp_driver_free(qs[i]->dr);
      dp_spark_query_free(qs[i]->sq); /* stops a Spark query still running */
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
      /* On the handle's list at once: a failure below frees it through
      ** dipper_query_free_all, which unlinks it. */
      dipper_query **tail = &db->queries;
      while (*tail) tail = &(*tail)->next_live;
      *tail = q;
      q->db = db;
      q->prog = prog;
      q->started = q->next_due = now;
      int rc = spark ? dp_spark_query_new(db, &ps->plan, root, label, &q->sq)
                     : dp_driver_new(db, &ps->plan, root, label, &q->dr);
      if (rc == DIPPER_OK && !spark) note_without_checkpoint(db, &ps->plan, root, label);
      if (rc == DIPPER_OK) dp_api_log_warnings(db, prog, i, r);
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
  if (q->dr && !q->over) dp_driver_set_woken(q->dr, false);
  int rc = query_step(q, &ran, &done);
  if (finished) *finished = done ? 1 : 0;
  if (rc != DIPPER_OK) return report(q->db, q, rc);
  return DIPPER_OK;
}

int dipper_query_progress(const dipper_query *q, dipper_progress *out) {
  if (!q || !out) return DIPPER_MISUSE;
  dipper_progress p;
  query_progress(q, &p);
  return copy_sized(out, &p, sizeof p);
}

/* dipper_interrupt runs in a signal handler while the flag is read by the
** thread that runs the queries (and by librdkafka's callbacks on its own
** threads): a C11 atomic, and one that is lock-free, since only a lock-free
** atomic may be touched from a signal handler (C11 7.14.1.1). */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "dipper_interrupt needs a lock-free atomic_int");

void dipper_interrupt(dipper *db) {
  if (db) atomic_store(&db->interrupted, 1);
}

bool dp_api_interrupted(dipper *db) { return db && atomic_load(&db->interrupted) != 0; }

bool dp_api_honour_interrupt(dipper *db) {
  return db && atomic_exchange(&db->interrupted, 0) != 0;
}

static void sleep_micros(int64_t us) {
  struct timespec ts = {(time_t)(us / DP_MICROS_PER_SECOND),
                        (long)(us % DP_MICROS_PER_SECOND) * 1000};
  /* A signal (SIGINT for dipper_interrupt) ends the nap early, which is the
  ** point: the loop looks at the flag before sleeping again. */
  nanosleep(&ts, NULL);
}

/* A sleep that ends early when an input of a waiting query has rows: the
** wake-up descriptors of every waiting query, however many (a Kafka source
** split over N workers has one per split), on the heap for one nap. */
typedef struct napper {
  struct pollfd *fds;
  dipper_query **of;
  int *raw; /* one query's descriptors, before they join fds */
  int n, fds_cap, of_cap, raw_cap;
} napper;

/* The inputs q waits on: only an embedded query whose trigger is as fast
** as possible (one due at an interval would wake for nothing, its pipe
** not drained until it runs).  Out of memory, q is left out: its nap ends
** when it is next due, as for a query whose inputs have no descriptor. */
static void nap_add(napper *z, dipper_query *q) {
  if (q->over || !q->dr) return;
  const dp_trigger *t = query_trigger(q);
  if (t->kind == DP_TRIGGER_PROCESSING_TIME && t->interval > 0) return;
  bool all;
  int k = dp_driver_wait_fds(q->dr, NULL, 0, &all);
  if (k <= 0 || dp_grow_i(&z->raw, &z->raw_cap, k, sizeof *z->raw, 8) ||
      dp_grow_i(&z->fds, &z->fds_cap, z->n + k, sizeof *z->fds, 8) ||
      dp_grow_i(&z->of, &z->of_cap, z->n + k, sizeof *z->of, 8))
    return;
  int room = k;
  k = dp_driver_wait_fds(q->dr, z->raw, room, &all);
  if (k > room) k = room;
  for (int i = 0; i < k; i++) {
    z->fds[z->n] = (struct pollfd){.fd = z->raw[i], .events = POLLIN};
    z->of[z->n++] = q;
  }
}

/* Sleep up to `us` (at most a slice), or until a descriptor has input;
** then z is emptied. */
static void nap(napper *z, int64_t us) {
  if (us > SLICE_US) us = SLICE_US;
  if (z->n == 0) {
    sleep_micros(us);
  } else {
    /* poll's timeout is in ms: rounded up, so that a query is not stepped
    ** before it is due only to sleep again. */
    int ms = (int)((us + 999) / 1000);
    if (poll(z->fds, (nfds_t)z->n, ms) > 0) /* else a timeout, or EINTR: a signal */
      for (int i = 0; i < z->n; i++)
        if (z->fds[i].revents) z->of[i]->next_due = 0;
  }
  free(z->fds);
  free(z->of);
  free(z->raw);
  *z = (napper){0};
}

/* When the query's trigger next wants a step, given that one ran (or found
** nothing) between `before` and `after`. */
static int64_t next_due(const dipper_query *q, bool ran, int64_t before, int64_t after) {
  if (spark_streaming(q)) return dp_spark_query_waits(q->sq) ? after : after + SPARK_POLL_US;
  const dp_trigger *t = query_trigger(q);
  if (t->kind == DP_TRIGGER_PROCESSING_TIME && t->interval > 0) {
    int64_t k = (before - q->started) / t->interval + 1;
    int64_t due = q->started + k * t->interval;
    return due > after ? due : after;
  }
  if (ran) return after;
  /* Inputs that all wake the run when rows come need no quick look. */
  bool all = false;
  if (q->dr) (void)dp_driver_wait_fds(q->dr, NULL, 0, &all);
  return after + (all ? IDLE_WAKE_US : POLL_US);
}

/* Stop every query that still runs (an interrupted run) and hand out the
** reports the stop brought.  The first failure's code, or DIPPER_OK. */
static int stop_all(dipper_query **qs, int n, dipper_progress_fn fn, void *user) {
  int first = DIPPER_OK;
  for (int i = 0; i < n; i++) {
    dipper_query *q = qs[i];
    if (q->over) continue;
    int64_t since = q->recent.pushed;
    q->stopped = q->over = true;
    int rc = q->sq ? dp_spark_query_stop(q->sq, &q->recent) : DIPPER_OK;
    report_since(q, since, fn, user);
    if (rc != DIPPER_OK && first == DIPPER_OK) {
      report(q->db, q, rc);
      first = rc;
    }
  }
  return first;
}

int dipper_run(dipper_program *prog, dipper_progress_fn fn, void *user) {
  dipper_query **qs = NULL;
  int n = 0;
  int rc = dipper_query_start(prog, &qs, &n);
  if (rc != DIPPER_OK) return rc;
  dipper *db = prog->db;
  for (;;) {
    if (dp_api_interrupted(db)) {
      rc = DIPPER_INTERRUPTED;
      break;
    }
    int64_t now = dp_mono_micros();
    int64_t soonest = INT64_MAX;
    bool running = false;
    for (int i = 0; i < n && rc == DIPPER_OK; i++) {
      dipper_query *q = qs[i];
      if (q->over) continue;
      running = true;
      if (now >= q->next_due) {
        bool ran = false, done = false;
        int64_t before = dp_mono_micros();
        int64_t since = q->recent.pushed;
        rc = loop_step(q, &ran, &done);
        if (rc != DIPPER_OK) {
          report(db, q, rc);
          break;
        }
        int64_t after = dp_mono_micros();
        report_since(q, since, fn, user);
        q->next_due = next_due(q, ran, before, after);
        now = after;
        if (dp_api_interrupted(db)) break;
      }
      if (q->next_due < soonest) soonest = q->next_due;
    }
    if (rc != DIPPER_OK || !running) break;
    if (dp_api_interrupted(db)) continue;
    now = dp_mono_micros();
    if (soonest > now) {
      napper z = {0};
      for (int i = 0; i < n; i++) nap_add(&z, qs[i]);
      nap(&z, soonest - now);
    }
  }
  if (rc == DIPPER_INTERRUPTED) {
    /* Stop cleanly: Spark ends each query's batch and keeps its checkpoint. */
    int stop_rc = stop_all(qs, n, fn, user);
    if (stop_rc != DIPPER_OK) rc = stop_rc;
  }
  if (fn)
    for (int i = 0; i < n; i++) {
      dipper_progress p;
      query_progress(qs[i], &p);
      fn(user, &p);
    }
  dipper_query_free_all(qs, n);
  if (rc == DIPPER_INTERRUPTED) {
    (void)dp_api_honour_interrupt(db); /* the handle may run again */
    fail_unplaced(db, DIPPER_INTERRUPTED, "the run was interrupted (dipper_interrupt)");
  } else if (rc != DIPPER_OK) {
    (void)dp_api_honour_interrupt(db);
  }
  return rc;
}

/* ---- managing queries ---- */

/* The whole status of q, into st (its size set). */
static int query_status(dipper_query *q, dipper_status *st) {
  memset(st, 0, sizeof *st);
  st->size = sizeof *st;
  if (q->sq) {
    int rc = dp_spark_query_status(q->sq, st);
    st->size = sizeof *st;
    if (rc != DIPPER_OK) return report(q->db, q, rc);
    if (q->stopped && !st->active) snprintf(st->message, sizeof st->message, "Stopped");
    return DIPPER_OK;
  }
  dipper_progress p;
  query_progress(q, &p);
  st->active = !q->over;
  snprintf(st->message, sizeof st->message, "%s",
           q->failed    ? "Failed"
           : q->stopped ? "Stopped"
           : q->over    ? "Finished"
           : p.batch_id < 0 ? "Waiting for the first batch"
                            : "Waiting for the next trigger");
  return DIPPER_OK;
}

int dipper_query_status(dipper_query *q, dipper_status *out) {
  if (!q || !out) return DIPPER_MISUSE;
  size_t have;
  memcpy(&have, out, sizeof have);
  if (have < sizeof have) return DIPPER_MISUSE;
  begin_call(q->db, q->prog);
  dipper_status st;
  int rc = query_status(q, &st);
  if (rc != DIPPER_OK) return rc;
  return copy_sized(out, &st, sizeof st);
}

int dipper_query_await(dipper_query *q, int64_t timeout_ms, int *terminated) {
  if (terminated) *terminated = 0;
  if (!q || !terminated) return DIPPER_MISUSE;
  dipper *db = q->db;
  begin_call(db, q->prog);
  if (spark_streaming(q)) {
    bool t = false;
    int rc = dp_spark_query_await(q->sq, &q->recent, timeout_ms, &t);
    *terminated = t ? 1 : 0;
    if (t) q->over = true;
    if (rc == DIPPER_INTERRUPTED) (void)dp_api_honour_interrupt(db);
    if (rc != DIPPER_OK && rc != DIPPER_INTERRUPTED) q->failed = rc;
    return rc == DIPPER_OK ? DIPPER_OK : report(db, q, rc);
  }
  /* The embedded engine (and a batch statement on Spark) runs inside the
  ** call: step by the trigger, as dipper_run does, until the end or the
  ** deadline. */
  int64_t deadline = timeout_ms < 0 ? INT64_MAX : dp_mono_micros() + timeout_ms * 1000;
  for (;;) {
    if (q->over) break;
    if (dp_api_honour_interrupt(db))
      return fail_unplaced(db, DIPPER_INTERRUPTED,
                           "waiting for the query was interrupted (dipper_interrupt)");
    int64_t now = dp_mono_micros();
    if (now >= deadline) break;
    if (now >= q->next_due) {
      bool ran = false, done = false;
      int rc = loop_step(q, &ran, &done);
      if (rc != DIPPER_OK) {
        *terminated = 1;
        return report(db, q, rc);
      }
      int64_t after = dp_mono_micros();
      q->next_due = next_due(q, ran, now, after);
      continue;
    }
    int64_t wait = q->next_due - now;
    if (deadline - now < wait) wait = deadline - now;
    napper z = {0};
    nap_add(&z, q);
    nap(&z, wait);
  }
  *terminated = q->over ? 1 : 0;
  return DIPPER_OK;
}

int dipper_query_stop(dipper_query *q) {
  if (!q) return DIPPER_MISUSE;
  begin_call(q->db, q->prog);
  if (q->over) return DIPPER_OK;
  q->stopped = q->over = true;
  int rc = q->sq ? dp_spark_query_stop(q->sq, &q->recent) : DIPPER_OK;
  if (rc != DIPPER_OK) return report(q->db, q, rc);
  return DIPPER_OK;
}

int dipper_query_recent_progress(const dipper_query *q, dipper_progress *out, int cap, int *n) {
  if (n) *n = 0;
  if (!q || !n || cap < 0 || (cap > 0 && !out)) return DIPPER_MISUSE;
  int64_t have = q->recent.pushed < DIPPER_RECENT_PROGRESS ? q->recent.pushed
                                                            : DIPPER_RECENT_PROGRESS;
  if (have > cap) have = cap;
  size_t stride = sizeof *out;
  if (cap > 0) memcpy(&stride, out, sizeof stride);
  if (stride < sizeof out->size) return DIPPER_MISUSE;
  /* The caller's elements are `stride` bytes each (its dipper_progress). */
  char *at = (char *)out;
  for (int64_t k = q->recent.pushed - have; k < q->recent.pushed; k++, at += stride) {
    memcpy(at, &stride, sizeof stride);
    (void)copy_sized(at, &q->recent.items[k % DIPPER_RECENT_PROGRESS], sizeof *out);
  }
  *n = (int)have;
  return DIPPER_OK;
}

const char *dipper_query_name(const dipper_query *q) {
  if (!q) return NULL;
  dipper_progress p;
  query_progress(q, &p);
  return p.name;
}

const char *dipper_query_id(const dipper_query *q) {
  return q && q->sq ? dp_spark_query_id(q->sq) : NULL;
}

const char *dipper_query_run_id(const dipper_query *q) {
  return q && q->sq ? dp_spark_query_run_id(q->sq) : NULL;
}

int dipper_active_queries(dipper *db, dipper_query **out, int cap, int *n) {
  if (n) *n = 0;
  if (!db || !n || cap < 0 || (cap > 0 && !out)) return DIPPER_MISUSE;
  begin_call(db, NULL);
  char(*ids)[40] = NULL;
  int nids = 0;
  bool any_spark = false;
  for (dipper_query *q = db->queries; q; q = q->next_live) any_spark |= spark_streaming(q);
  if (any_spark) {
    /* The server's word: a query may have ended since the last look. */
    int rc = dp_spark_active_ids(db, &db->diags, &ids, &nids);
    if (rc != DIPPER_OK) {
      dp_api_diags_finish(db);
      return rc;
    }
  }
  int count = 0;
  for (dipper_query *q = db->queries; q; q = q->next_live) {
    bool active = !q->over;
    if (active && spark_streaming(q)) {
      const char *id = dp_spark_query_id(q->sq);
      active = false;
      for (int i = 0; id && i < nids && !active; i++) active = strcmp(ids[i], id) == 0;
    }
    if (!active) continue;
    if (count < cap) out[count] = q;
    count++;
  }
  free(ids);
  *n = count;
  return DIPPER_OK;
}

/* ---- the listener bus ---- */

typedef struct listen_ctx {
  dipper *db;
  dipper_event_fn fn;
  void *user;
  int left;          /* the handle's queries listened to that have not ended */
  bool user_stopped; /* fn returned non-zero */
} listen_ctx;

/* Hand one event to the user's callback; false when it asked to stop. */
static bool deliver(listen_ctx *c, dipper_event_kind kind, dipper_query *q,
                    const dipper_progress *p, const char *error, const char *json) {
  dipper_event ev = {sizeof ev, kind, q, NULL, NULL, NULL, p, error, json};
  if (q) {
    ev.name = dipper_query_name(q);
    ev.id = dipper_query_id(q);
    ev.run_id = dipper_query_run_id(q);
  }
  if (c->fn(c->user, &ev) == 0) return true;
  c->user_stopped = true;
  return false;
}

/* The message of the error q failed with, for its TERMINATED event. */
static const char *failure_text(const dipper_query *q) {
  const dp_diags *d = query_diags(q);
  if (!q->failed) return NULL;
  return d->count > 0 && d->items[d->count - 1].message ? d->items[d->count - 1].message
                                                         : dipper_strerror(q->failed);
}

/* After a step of q: the reports it took in since `since` as PROGRESS events,
** then its TERMINATED event if it ended.  false when fn asked to stop. */
static bool tell_step(listen_ctx *c, dipper_query *q, int64_t since) {
  if (q->recent.pushed - since > DIPPER_RECENT_PROGRESS)
    since = q->recent.pushed - DIPPER_RECENT_PROGRESS;
  for (int64_t k = since; k < q->recent.pushed; k++)
    if (!deliver(c, DIPPER_EVENT_PROGRESS, q, &q->recent.items[k % DIPPER_RECENT_PROGRESS], NULL,
                 NULL))
      return false;
  if (!q->over) return true;
  c->left--;
  return deliver(c, DIPPER_EVENT_TERMINATED, q, NULL, failure_text(q), NULL);
}

/* Spark: one event from the session's bus.  A non-zero return ends the
** listening (dp_spark_listen then returns DIPPER_OK). */
static int on_bus_event(void *user, const dp_sq_event *e) {
  listen_ctx *c = user;
  if (e->kind == DP_SQ_EVENT_LISTENING) {
    /* From now on every event comes: a query that ended since dipper_listen
    ** looked is caught by one more look now (on the same connection). */
    for (dipper_query *q = c->db->queries; q && c->left > 0; q = q->next_live) {
      if (q->over || !spark_streaming(q)) continue;
      bool ran = false, done = false;
      int64_t since = q->recent.pushed;
      (void)query_step(q, &ran, &done);
      if (!tell_step(c, q, since)) return DIPPER_INTERRUPTED;
    }
    return c->left > 0 ? DIPPER_OK : DIPPER_INTERRUPTED;
  }
  dipper_query *q = NULL;
  for (dipper_query *it = c->db->queries; it && !q; it = it->next_live) {
    const char *id = spark_streaming(it) ? dp_spark_query_id(it->sq) : NULL;
    if (id && e->id && strcmp(id, e->id) == 0) q = it;
  }
  dipper_event_kind kind = e->kind == DP_SQ_EVENT_PROGRESS     ? DIPPER_EVENT_PROGRESS
                           : e->kind == DP_SQ_EVENT_TERMINATED ? DIPPER_EVENT_TERMINATED
                                                               : DIPPER_EVENT_IDLE;
  if (!q) {
    /* a query of the session this handle no longer holds: told as it is */
    dipper_event ev = {sizeof ev, kind, NULL, NULL, e->id, e->run_id, NULL,
                       kind == DIPPER_EVENT_TERMINATED ? e->exception : NULL, e->json};
    if (c->fn(c->user, &ev) == 0) return DIPPER_OK;
    c->user_stopped = true;
    return DIPPER_INTERRUPTED;
  }
  bool news = false;
  const char *error = NULL;
  bool was_over = q->over;
  dp_spark_query_take_event(q->sq, e, &q->recent, &news, &error);
  if (!news || was_over) return DIPPER_OK;
  dipper_progress p;
  query_progress(q, &p);
  if (kind == DIPPER_EVENT_TERMINATED) {
    q->over = true;
    if (error) q->failed = DIPPER_REMOTE;
    c->left--;
  }
  if (!deliver(c, kind, q, kind == DIPPER_EVENT_PROGRESS ? &p : NULL, error, e->json))
    return DIPPER_INTERRUPTED;
  return c->left > 0 ? DIPPER_OK : DIPPER_INTERRUPTED; /* all ended: done */
}

/* Embedded (and batch statements on a Spark handle): run the queries by their
** triggers as dipper_run does, each new report and each end an event. */
static int listen_in_process(listen_ctx *c, int64_t deadline) {
  dipper *db = c->db;
  while (c->left > 0) {
    if (dp_api_honour_interrupt(db))
      return fail_unplaced(db, DIPPER_INTERRUPTED,
                           "listening to the queries was interrupted (dipper_interrupt)");
    int64_t now = dp_mono_micros();
    if (now >= deadline) break;
    int64_t soonest = deadline;
    for (dipper_query *q = db->queries; q; q = q->next_live) {
      if (q->over || spark_streaming(q)) continue;
      if (now >= q->next_due) {
        bool ran = false, done = false;
        int64_t since = q->recent.pushed;
        (void)loop_step(q, &ran, &done); /* a failure is the query's TERMINATED event */
        int64_t after = dp_mono_micros();
        q->next_due = next_due(q, ran, now, after);
        if (!tell_step(c, q, since)) return DIPPER_OK;
        now = after;
      }
      if (!q->over && q->next_due < soonest) soonest = q->next_due;
    }
    now = dp_mono_micros();
    if (c->left > 0 && soonest > now) {
      napper z = {0};
      for (dipper_query *q = db->queries; q; q = q->next_live)
        if (!spark_streaming(q)) nap_add(&z, q);
      nap(&z, soonest - now);
    }
  }
  return DIPPER_OK;
}

int dipper_listen(dipper *db, dipper_event_fn fn, void *user, int64_t timeout_ms) {
  if (!db || !fn) return DIPPER_MISUSE;
  begin_call(db, NULL);
  listen_ctx c = {db, fn, user, 0, false};
  int64_t deadline = timeout_ms < 0 ? INT64_MAX : dp_mono_micros() + timeout_ms * 1000;
  /* Spark's streaming queries are told by the server's bus, which does not
  ** replay: a query that has ended already would never be.  Look at each
  ** first, and again once the listener is in place (on_bus_event). */
  int on_bus = 0;
  for (dipper_query *q = db->queries; q; q = q->next_live) {
    if (q->over || !spark_streaming(q)) continue;
    bool ran = false, done = false;
    (void)query_step(q, &ran, &done); /* its reports so far are not events of this call */
    if (q->over) {
      if (!deliver(&c, DIPPER_EVENT_TERMINATED, q, NULL, failure_text(q), NULL)) return DIPPER_OK;
      continue;
    }
    on_bus++;
  }
  for (dipper_query *q = db->queries; q; q = q->next_live)
    if (!q->over && !spark_streaming(q)) c.left++;
  if (c.left > 0) {
    int rc = listen_in_process(&c, deadline);
    if (rc != DIPPER_OK || c.user_stopped) return rc;
  }
  if (on_bus == 0) return DIPPER_OK;
  c.left = on_bus;
  int64_t left_ms = timeout_ms < 0 ? -1 : (deadline - dp_mono_micros()) / 1000;
  if (timeout_ms >= 0 && left_ms <= 0) return DIPPER_OK;
  int rc = dp_spark_listen(db, on_bus_event, &c, left_ms, &db->diags);
  if (rc == DIPPER_INTERRUPTED) (void)dp_api_honour_interrupt(db);
  if (rc != DIPPER_OK) dp_api_diags_finish(db);
  return rc;
}
