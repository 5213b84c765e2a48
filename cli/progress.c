/*
** progress.c — what `dipper run` shows on stderr: one live line per query,
** redrawn in place after every micro-batch while stderr is a terminal, and a
** summary line per query at the end (always, unless --quiet).
**
** The live lines are drawn with the cursor left at the start of the first
** one, so the next redraw clears them ("\033[J") and draws again without
** scrolling.  Rows the console sink prints to the same terminal would land on
** top of them; so while live lines are up, stdout (with glibc) is a stream of
** ours that takes the lines down before it writes, and the next redraw puts
** them back under the new output.  Redraws are limited to ten a second: a
** fast query runs thousands of batches a second and the terminal would
** become the bottleneck.
**
** When stderr is not a terminal (a log, a pipe) nothing can be redrawn: a
** query's progress line is printed as a plain line instead, for its first
** micro-batch and then at most every LINE_EVERY_NS while batches run, so
** that a log of a long run shows how it went without a line per batch.
*/
#define _GNU_SOURCE /* fopencookie */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define REDRAW_EVERY_NS 100000000LL
#define LINE_EVERY_NS 5000000000LL
/* Rates are taken over the last few seconds, not since the previous redraw:
** a steady 100 rows/s in batches of 10 would otherwise read 0 on most of
** the ten redraws a second. */
#define RATE_WINDOW_NS 3000000000LL
#define NSAMPLES 64 /* > RATE_WINDOW_NS / REDRAW_EVERY_NS: the ring holds the window */

typedef struct query_line {
  char *name;
  dipper_progress last;
  /* Totals at each redraw, a ring: the rates shown are the rows that went
  ** through in the last RATE_WINDOW_NS over that wall time, what a user
  ** watching wants (the progress's own rates are per batch duration, which
  ** for a rate-limited source is the engine's speed, not the stream's). */
  struct { int64_t in, out; long long ns; } samples[NSAMPLES];
  int nsamples, next_sample;
  long long drawn_ns;
  double rate_in, rate_out;
  double elapsed; /* seconds from the start of `run` to the query's last report */
  int64_t printed_batch; /* not a terminal: the batch of the last plain line (-1: none) */
} query_line;

struct cli_progress {
  bool live, quiet;
  int n, cap;
  query_line *lines;
  int drawn;             /* live lines on the screen now */
  long long start_ns;
  FILE *real_stdout;     /* while stdout is our stream (see the header comment) */
  long long last_draw_ns;
};

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The live lines come down before anything reaches the terminal's stdout. */
static void take_down(cli_progress *cp) {
  if (cp->drawn > 0) {
    fputs("\r\033[J", stderr);
    fflush(stderr);
    cp->drawn = 0;
  }
}

#ifdef __GLIBC__
static ssize_t stdout_write(void *cookie, const char *buf, size_t size) {
  cli_progress *cp = cookie;
  take_down(cp);
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(STDOUT_FILENO, buf + done, size - done);
    if (n <= 0) return done > 0 ? (ssize_t)done : -1;
    done += (size_t)n;
  }
  return (ssize_t)size;
}

static void capture_stdout(cli_progress *cp) {
  if (!cp->live || isatty(STDOUT_FILENO) != 1) return;
  cookie_io_functions_t io = {NULL, stdout_write, NULL, NULL};
  FILE *ours = fopencookie(cp, "w", io);
  if (!ours) return;
  fflush(stdout);
  cp->real_stdout = stdout;
  stdout = ours;
}

static void release_stdout(cli_progress *cp) {
  if (!cp->real_stdout) return;
  FILE *ours = stdout;
  stdout = cp->real_stdout;
  cp->real_stdout = NULL;
  fclose(ours); /* flushes through stdout_write */
}
#else
static void capture_stdout(cli_progress *cp) { (void)cp; }
static void release_stdout(cli_progress *cp) { (void)cp; }
#endif

cli_progress *cli_progress_new(bool live, bool quiet) {
  cli_progress *cp = calloc(1, sizeof *cp);
  if (!cp) return NULL;
  cp->live = live && !quiet;
  cp->quiet = quiet;
  cp->start_ns = now_ns();
  capture_stdout(cp);
  return cp;
}

void cli_progress_free(cli_progress *cp) {
  if (!cp) return;
  release_stdout(cp);
  for (int i = 0; i < cp->n; i++) free(cp->lines[i].name);
  free(cp->lines);
  free(cp);
}


static query_line *line_for(cli_progress *cp, const char *name) {
  for (int i = 0; i < cp->n; i++)
    if (strcmp(cp->lines[i].name, name) == 0) return &cp->lines[i];
  if (cp->n == cp->cap) {
    int cap = cp->cap ? cp->cap * 2 : 4;
    query_line *grown = realloc(cp->lines, (size_t)cap * sizeof *grown);
    if (!grown) return NULL;
    cp->lines = grown;
    cp->cap = cap;
  }
  query_line *q = &cp->lines[cp->n];
  memset(q, 0, sizeof *q);
  q->printed_batch = -1;
  q->name = malloc(strlen(name) + 1);
  if (!q->name) return NULL;
  strcpy(q->name, name);
  cp->n++;
  return q;
}

/* "2024-01-01 10:00:05.000", "none" before the first event, "end of input"
** at the last batch of a bounded run. */
static void format_watermark(char *buf, size_t cap, int64_t us) {
  if (us == INT64_MIN) {
    snprintf(buf, cap, "none");
    return;
  }
  /* The last batch of a bounded run is at an infinite watermark (any year
  ** past 9999 is one): there is no time to show. */
  if (us == INT64_MAX || us > INT64_C(253402300799999999)) {
    snprintf(buf, cap, "end of input");
    return;
  }
  /* The library's text of a TIMESTAMP(3) value, as the rows print theirs:
  ** watermarks are milliseconds in every SQL dialect dipper speaks. */
  dipper_format_timestamp(us, 3, buf, cap);
}

/* 1234567 → "1.2M", 12345 → "12.3k", 123 → "123". */
static void format_count(char *buf, size_t cap, double x) {
  if (x >= 1e9)
    snprintf(buf, cap, "%.1fG", x / 1e9);
  else if (x >= 1e6)
    snprintf(buf, cap, "%.1fM", x / 1e6);
  else if (x >= 1e4)
    snprintf(buf, cap, "%.1fk", x / 1e3);
  else
    snprintf(buf, cap, "%.0f", x);
}

/* Columns of the terminal on stderr, or 0 when unknown. */
static size_t terminal_width(void) {
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

/* The progress line of one query into line[0..cap); its length. */
static size_t format_line(const query_line *q, char *line, size_t cap) {
  const dipper_progress *p = &q->last;
  char wm[48], in[16], out[16];
  format_watermark(wm, sizeof wm, p->watermark);
  format_count(in, sizeof in, q->rate_in);
  format_count(out, sizeof out, q->rate_out);
  int len = snprintf(line, cap,
                     "%s: batch %" PRId64 ", %s rows/s in, %s rows/s out, watermark %s, "
                     "state %" PRId64 ", late %" PRId64,
                     q->name, p->batch_id, in, out, wm, p->state_rows, p->late_rows_dropped);
  return len < 0 ? 0 : (size_t)len < cap ? (size_t)len : cap - 1;
}

/* Rates over the window: rows through since the oldest sample in it (the
** start of the run before the first) over the wall time since then. */
static void update_rates(cli_progress *cp, query_line *l, long long now) {
  int64_t from_in = 0, from_out = 0;
  long long from_ns = cp->start_ns;
  if (l->nsamples > 0 && now - cp->start_ns > RATE_WINDOW_NS) {
    /* The oldest sample inside the window; the newest when none is (plain
    ** lines come every LINE_EVERY_NS, longer than the window). */
    int chosen = (l->next_sample - 1 + NSAMPLES) % NSAMPLES;
    for (int k = 0; k < l->nsamples; k++) {
      int at = (l->next_sample - l->nsamples + k + NSAMPLES) % NSAMPLES;
      if (now - l->samples[at].ns <= RATE_WINDOW_NS) {
        chosen = at;
        break;
      }
    }
    from_in = l->samples[chosen].in;
    from_out = l->samples[chosen].out;
    from_ns = l->samples[chosen].ns;
  }
  long long since = now - from_ns;
  if (since > 0) {
    l->rate_in = (double)(l->last.total_input_rows - from_in) * 1e9 / (double)since;
    l->rate_out = (double)(l->last.total_output_rows - from_out) * 1e9 / (double)since;
  }
  l->samples[l->next_sample].in = l->last.total_input_rows;
  l->samples[l->next_sample].out = l->last.total_output_rows;
  l->samples[l->next_sample].ns = now;
  l->next_sample = (l->next_sample + 1) % NSAMPLES;
  if (l->nsamples < NSAMPLES) l->nsamples++;
  l->drawn_ns = now;
}

static void draw(cli_progress *cp) {
  if (cp->drawn > 0) fputs("\r\033[J", stderr);
  /* A line that wrapped would break the cursor arithmetic of the redraw:
  ** cut each to the terminal's width. */
  size_t width = terminal_width();
  for (int i = 0; i < cp->n; i++) {
    char line[512];
    size_t n = format_line(&cp->lines[i], line, sizeof line);
    if (width > 1 && n > width - 1) n = width - 1;
    if (i) fputc('\n', stderr);
    fwrite(line, 1, n, stderr);
  }
  /* Park at the start of the first line. */
  fputc('\r', stderr);
  if (cp->n > 1) fprintf(stderr, "\033[%dA", cp->n - 1);
  fflush(stderr);
  cp->drawn = cp->n;
}

void cli_progress_update(void *user, const dipper_progress *p) {
  cli_progress *cp = user;
  if (!cp || !p || !p->name) return;
  query_line *q = line_for(cp, p->name);
  if (!q) return;
  q->last = *p;
  long long now = now_ns();
  q->elapsed = (double)(now - cp->start_ns) / 1e9;
  if (cp->quiet) return;
  if (!cp->live) {
    /* A plain line: the first batch, then every LINE_EVERY_NS of batches. */
    if (p->batch_id < 0 || p->batch_id == q->printed_batch) return;
    if (q->printed_batch >= 0 && now - q->drawn_ns < LINE_EVERY_NS) return;
    update_rates(cp, q, now);
    q->printed_batch = p->batch_id;
    char line[512];
    size_t n = format_line(q, line, sizeof line);
    fwrite(line, 1, n, stderr);
    fputc('\n', stderr);
    fflush(stderr);
    return;
  }
  if (now - cp->last_draw_ns < REDRAW_EVERY_NS && !p->finished) return;
  cp->last_draw_ns = now;
  for (int i = 0; i < cp->n; i++) update_rates(cp, &cp->lines[i], now);
  draw(cp);
}

void cli_progress_finish(cli_progress *cp) {
  if (!cp) return;
  release_stdout(cp);
  take_down(cp);
  if (cp->quiet) return;
  for (int i = 0; i < cp->n; i++) {
    const query_line *q = &cp->lines[i];
    const dipper_progress *p = &q->last;
    char wm[48];
    format_watermark(wm, sizeof wm, p->watermark);
    /* A bounded run's last batch ran at the end of input, whatever
    ** watermark the batch before it computed. */
    if (p->finished && p->watermark != INT64_MIN) snprintf(wm, sizeof wm, "end of input");
    int64_t batches = p->batch_id + 1;
    fprintf(stderr,
            "%s: %s after %" PRId64 " batch%s in %.2f s: %" PRId64 " rows in, %" PRId64
            " rows out, watermark %s, %" PRId64 " state rows, %" PRId64
            " late rows dropped, %" PRId64 " bad records skipped\n",
            q->name, p->finished ? "finished" : "stopped", batches, batches == 1 ? "" : "es",
            q->elapsed, p->total_input_rows, p->total_output_rows, wm, p->state_rows,
            p->late_rows_dropped, p->bad_records_skipped);
  }
  fflush(stderr);
}
