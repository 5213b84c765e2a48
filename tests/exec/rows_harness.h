/*
** rows_harness.h — a small runner for the tests of the bounded-input
** operators (join_test.c, batchops_test.c): compile SQL through the public
** API, build the operator tree of the last statement's query with
** dp_op_build, and pull it through one final micro-batch (what batch mode
** does), or through several micro-batches.  Rows come back as text, one
** line per row, cells formatted as SQL literals and joined by ", ".
**
** The sources are VALUES lists, which need no connector, or files (the
** scans are planned to read to their end before each batch).
*/
#ifndef DP_ROWS_HARNESS_H
#define DP_ROWS_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "exec/exec.h"
#include "exec/exec_int.h"
#include "plan/analyze.h"

typedef struct harness {
  dipper *db;
  dipper_program *prog;
  dp_arena *arena;
  dp_diags diags;
  dp_exec ex;
  dp_op *root;
  int64_t wm_none;
  char out[65536];
  size_t len;
  int rc;           /* the code of the last failure */
} harness;

static inline void harness_print_diags(harness *h) {
  for (int i = 0; i < dipper_diag_count(h->db); i++) {
    char *r = dipper_diag_render(h->db, i);
    fprintf(stderr, "  (diagnostic) %s", r ? r : "(no render)\n");
    dipper_free(r);
  }
  for (int i = 0; i < h->diags.count; i++)
    fprintf(stderr, "  (run-time) %s\n", h->diags.items[i].message);
}

/* Compile sql and build the operators of its last query, with `checkpoint`
** (NULL: none) as the query's checkpoint folder. DIPPER_OK or a code. */
static inline int harness_open_at(harness *h, const char *sql, const char *checkpoint) {
  memset(h, 0, sizeof *h);
  h->ex.checkpoint = checkpoint;
  if ((h->rc = dipper_open(&h->db, NULL))) return h->rc;
  if ((h->rc = dipper_compile(h->db, sql, (size_t)-1, "test.sql", &h->prog))) {
    harness_print_diags(h);
    return h->rc;
  }
  dp_program_stmt *s = &h->prog->stmts[h->prog->n - 1];
  h->arena = dp_arena_new(0);
  dp_diags_init(&h->diags, h->arena, "test.sql", NULL, 0);
  h->ex.db = h->db;
  h->ex.query = &s->plan;
  h->ex.root = s->plan.roots[0];
  h->ex.arena = dp_arena_new(0);
  h->ex.batch_arena = dp_arena_new(0);
  h->ex.diags = &h->diags;
  int nwm = s->plan.nwatermarks > 0 ? s->plan.nwatermarks : 1;
  h->ex.max_event_time = dp_arena_alloc(h->ex.arena, (size_t)nwm * sizeof(int64_t));
  for (int i = 0; i < nwm; i++) h->ex.max_event_time[i] = DP_WATERMARK_NONE;
  h->ex.watermark = DP_WATERMARK_NONE;
  h->ex.output_mode = dp_analyze_output_mode(&s->plan, h->ex.root);
  if ((h->rc = dp_op_build(&h->ex, h->ex.root, &h->root))) harness_print_diags(h);
  return h->rc;
}

static inline int harness_open(harness *h, const char *sql) { return harness_open_at(h, sql, NULL); }

static inline void harness_end_batch(dp_op *op, void *user) {
  harness *h = user;
  if (op->cls && op->cls->end_batch && !h->rc) h->rc = op->cls->end_batch(op);
}

static inline void harness_plan_scan(dp_op *op, void *user) {
  harness *h = user;
  bool data = false, ended = false;
  if (op->cls == &dp_op_scan && !h->rc) h->rc = dp_scan_plan(op, 0, true, &data, &ended);
}

/* Run one micro-batch, appending its rows to h->out.  Returns a code. */
static inline int harness_batch(harness *h, bool final, int64_t watermark) {
  h->ex.final = final;
  h->ex.watermark = watermark;
  dp_op_walk(h->root, harness_plan_scan, h);
  if (h->rc) {
    harness_print_diags(h);
    return h->rc;
  }
  for (;;) {
    dp_batch *b = NULL;
    if ((h->rc = h->root->cls->next(h->root, &b))) {
      harness_print_diags(h);
      return h->rc;
    }
    if (!b) break;
    for (int64_t r = 0; r < b->nrows; r++) {
      for (int c = 0; c < b->ncols; c++) {
        dp_value v;
        const char *text = "?";
        if (dp_vector_get_value(h->ex.batch_arena, b->cols[c], r, &v))
          text = dp_value_format(h->ex.batch_arena, &v);
        h->len += (size_t)snprintf(h->out + h->len, sizeof h->out - h->len, "%s%s",
                                   c ? ", " : "", text);
      }
      h->len += (size_t)snprintf(h->out + h->len, sizeof h->out - h->len, "\n");
    }
  }
  dp_op_walk(h->root, harness_end_batch, h);
  dp_arena_reset(h->ex.batch_arena);
  h->ex.batch_id++;
  return h->rc;
}

static inline void harness_close(harness *h) {
  if (h->root) {
    /* parents first, as dp_exec_free does */
    dp_op *stack[256];
    int n = 0;
    stack[n++] = h->root;
    while (n > 0) {
      dp_op *op = stack[--n];
      if (op->cls && op->cls->close) op->cls->close(op);
      for (int i = 0; i < op->nchildren && n < 256; i++) stack[n++] = op->children[i];
    }
  }
  dp_arena_free(h->ex.arena);
  dp_arena_free(h->ex.batch_arena);
  dp_arena_free(h->arena);
  dipper_program_free(h->prog);
  dipper_close(h->db);
}

static inline int cmp_lines(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The lines of s sorted, for answers whose row order SQL leaves open. */
static inline char *sorted_lines(const char *s) {
  static char buf[65536];
  char *copy = strdup(s);
  const char *lines[4096];
  int n = 0;
  for (char *p = strtok(copy, "\n"); p && n < 4096; p = strtok(NULL, "\n")) lines[n++] = p;
  qsort(lines, (size_t)n, sizeof *lines, cmp_lines);
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < n; i++) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s\n", lines[i]);
  free(copy);
  return buf;
}

/* Compile sql, run it as batch mode does (one final batch), return its rows
** (sorted when `sort`), or "ERROR <code>: <first run-time message>". */
static inline const char *run_rows(const char *sql, bool sort) {
  static char result[65536];
  harness h;
  int rc = harness_open(&h, sql);
  if (!rc) rc = harness_batch(&h, true, DP_WATERMARK_NONE);
  if (rc)
    snprintf(result, sizeof result, "ERROR %s: %s", dipper_strerror(rc),
             h.diags.count ? h.diags.items[0].message : dipper_errmsg(h.db));
  else
    snprintf(result, sizeof result, "%s", sort ? sorted_lines(h.out) : h.out);
  harness_close(&h);
  return result;
}

/* When set, fetch_rows keeps the sink's row order instead of sorting. */
static int harness_keep_order;

/* Every row of memory table `table` as "a|b" lines, sorted: strings as they
** are, integers in decimal, timestamps as µs, NULL as NULL. */
static inline const char *fetch_rows(dipper *db, const char *table) {
  static char buf[16384];
  static char text[16384];
  struct ArrowSchema schema;
  struct ArrowArray array;
  if (dipper_memory_fetch(db, table, &schema, &array) != DIPPER_OK) return "(fetch failed)";
  size_t n = 0;
  text[0] = '\0';
  for (int64_t r = 0; r < array.length; r++) {
    for (int64_t c = 0; c < array.n_children; c++) {
      const struct ArrowArray *col = array.children[c];
      const char *fmt = schema.children[c]->format;
      const uint8_t *valid = col->buffers[0];
      int64_t i = r + col->offset;
      const char *sep = c ? "|" : "";
      if (valid && !((valid[i >> 3] >> (i & 7)) & 1)) {
        n += (size_t)snprintf(text + n, sizeof text - n, "%sNULL", sep);
      } else if (fmt[0] == 'u') {
        const int32_t *off = col->buffers[1];
        const char *data = col->buffers[2];
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%.*s", sep, off[i + 1] - off[i], data + off[i]);
      } else if (fmt[0] == 'i') {
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%d", sep, ((const int32_t *)col->buffers[1])[i]);
      } else {
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%lld", sep,
                              (long long)((const int64_t *)col->buffers[1])[i]);
      }
    }
    n += (size_t)snprintf(text + n, sizeof text - n, "\n");
  }
  schema.release(&schema);
  array.release(&array);
  snprintf(buf, sizeof buf, "%s", harness_keep_order ? text : sorted_lines(text));
  return buf;
}

/* Compile `sql` (DDL and one INSERT into memory table `out`), push each of
** pushes[] ("table:jsonlines", one micro-batch each per table), run `steps`
** micro-batches and return the rows of `out`; *late gets the late rows
** dropped. */
static inline const char *stream_rows(const char *sql, const char *const *pushes, int npushes,
                                      int steps, int64_t *late) {
  static char result[16384];
  snprintf(result, sizeof result, "(failed)");
  dipper *db = NULL;
  dipper_program *prog = NULL;
  if (dipper_open(&db, NULL)) return result;
  if (dipper_compile(db, sql, (size_t)-1, "stream.sql", &prog)) {
    snprintf(result, sizeof result, "COMPILE: %s", dipper_errmsg(db));
    dipper_close(db);
    return result;
  }
  for (int i = 0; i < npushes; i++) {
    const char *colon = strchr(pushes[i], ':');
    char table[64];
    snprintf(table, sizeof table, "%.*s", (int)(colon - pushes[i]), pushes[i]);
    dipper_memory_push_json(db, table, colon + 1, strlen(colon + 1));
  }
  dipper_query **qs = NULL;
  int nq = 0;
  int rc = dipper_query_start(prog, &qs, &nq);
  for (int i = 0; !rc && i < steps && nq == 1; i++) {
    int fin = 0;
    rc = dipper_query_step(qs[0], &fin);
  }
  if (rc) {
    snprintf(result, sizeof result, "RUN: %s", dipper_errmsg(db));
  } else {
    snprintf(result, sizeof result, "%s", fetch_rows(db, "out"));
    dipper_progress pg = {sizeof pg};
    if (late && nq == 1 && dipper_query_progress(qs[0], &pg) == DIPPER_OK) *late = pg.late_rows_dropped;
  }
  dipper_query_free_all(qs, nq);
  dipper_program_free(prog);
  dipper_close(db);
  return result;
}

#endif /* DP_ROWS_HARNESS_H */
