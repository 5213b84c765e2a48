/*
** datagen.c — the `datagen` source: rows made up per the table's DDL, for
** demos, tests and benchmarks (Flink's connector, with its option names).
**
** Options, per column `c`:
**   fields.c.kind       random (default) | sequence
**   fields.c.min / max  random numbers (integers: the type's range; FLOAT,
**                       DOUBLE: [0, 1); DECIMAL: [0, 10^(p-s)) by default)
**   fields.c.length     random strings and bytes (default 100, at most the
**                       VARCHAR(n)); ARRAY and MAP sizes (default 3); the
**                       strings inside an ARRAY of STRING are as long
**   fields.c.start/end  a sequence: start, start+1, ..., end; the source ends
**                       with the shortest sequence (Flink's rule)
**   fields.c.null-rate  share of NULLs, 0..1
**   fields.c.max-past   timestamps: up to this far before the clock
** and for the table:
**   rows-per-second     the rate (default 10000 when unbounded; a bounded run
**                       goes as fast as it can when it is absent or 0, and
**                       batch mode always does: there it only sets the clock)
**   number-of-rows      the total: the source is bounded
**   seed                makes every value reproducible (else seeded by time)
**
** Time.  Every TIMESTAMP, DATE and TIME column is drawn from a clock minus a
** random delay in [0, max-past]: event times are mostly increasing, and out
** of order by at most max-past, which a watermark delay of max-past covers.
** Unbounded, the clock is the current time.  Bounded, it is synthetic: it
** starts at 2024-01-01 00:00:00 UTC and advances 1/rows-per-second (100 µs
** when no rate is set) per row, so a run with a seed is reproducible to the
** byte and its windows close as the rows go by.
**
** Determinism.  Counter-based: row i of column c draws from a generator
** (splitmix64) started at a hash of (the column's base, i), the base a hash
** of the seed and the column's position, so a row is a function of (seed, i)
** alone: the values do not depend on how the rows are cut into micro-batches,
** chunks or splits.  (Before the splits, each column drew from one generator
** in row order, so row i needed the rows before it: every seeded output
** changed with the change.)  Generation is columnar: one tight loop per
** column per chunk.
**
** Splits (parallel execution, connector.h): split w of n reads the w-th
** equal share of the planned rows [start, end), as nexmark does.  A table
** without 'seed' draws its seed from the clock at open, so its splits take
** worker 0's from the plan they replay (streaming); in batch mode, where
** nothing is replayed, such a table runs on one thread.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/session.h"
#include "connectors/records.h"

#define SYNTHETIC_START INT64_C(1704067200000000) /* 2024-01-01 00:00:00 UTC, µs */
#define DEFAULT_RATE 10000.0

typedef struct gen_col {
  const dp_type *type;
  bool sequence;
  uint64_t base;           /* the column's generator: a hash of the seed and the position */
  uint64_t rng;            /* the current row's draws */
  uint64_t null_threshold; /* a draw below it is NULL; 0: never */
  bool has_min, has_max;
  double dmin, dmax;
  int64_t length;          /* strings and bytes */
  int64_t items;           /* ARRAY and MAP entries */
  int64_t seq_start, seq_end;
  int64_t max_past;        /* µs */
} gen_col;

typedef struct datagen_state {
  int ncols;
  gen_col *cols;
  int64_t total;           /* rows in all; -1: unbounded */
  double rate;             /* rows per second; 0: no limit */
  int64_t step;            /* synthetic clock: µs per row */
  bool synthetic;
  bool seeded;             /* 'seed' given */
  int64_t emitted;         /* rows read (split: rows committed) */
  int64_t planned_end;     /* the planned batch ends before this row */
  int64_t batch_start;     /* the planned batch starts at this row */
  int64_t cursor;          /* a split's next row */
  int split, nsplits;      /* this source reads split `split` of `nsplits` of each batch */
  int64_t start_mono;      /* µs, when the source opened (or would have, at its rate) */
  int64_t replay_end;      /* the next plan ends exactly here; -1: none (a batch run again) */
  dp_buf text;             /* scratch for strings */
} datagen_state;

static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* The generator of row `row` of column g: a function of (base, row). */
static uint64_t row_seed(const gen_col *g, int64_t row) {
  uint64_t z = g->base + (uint64_t)row * UINT64_C(0xD6E8FEB86659FD93);
  z = (z ^ (z >> 32)) * UINT64_C(0xD6E8FEB86659FD93);
  z = (z ^ (z >> 32)) * UINT64_C(0xD6E8FEB86659FD93);
  return z ^ (z >> 32);
}

static double next_unit(uint64_t *s) { return (double)(next_u64(s) >> 11) * 0x1.0p-53; }

/* Uniform in [lo, hi]. */
static int64_t next_range(uint64_t *s, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  uint64_t r = next_u64(s);
  if (span == UINT64_MAX) return (int64_t)r;
  uint64_t off = (uint64_t)(((unsigned __int128)r * (span + 1)) >> 64);
  return (int64_t)((uint64_t)lo + off);
}

static int64_t mono_micros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_micros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* fields.<col>.<what>, the column matched without regard to case. */
static const char *field_opt(const dp_table_def *t, const char *col, const char *what) {
  size_t clen = strlen(col), wlen = strlen(what);
  for (int i = 0; t && i < t->noptions; i++) {
    const char *k = t->options[i].key;
    size_t klen = strlen(k);
    if (klen != 7 + clen + 1 + wlen || strncmp(k, "fields.", 7) != 0) continue;
    if (strncasecmp(k + 7, col, clen) == 0 && k[7 + clen] == '.' && strcmp(k + 8 + clen, what) == 0)
      return t->options[i].value;
  }
  return NULL;
}

static void int_range(dp_type_kind k, int64_t *lo, int64_t *hi) {
  switch (k) {
  case DP_T_TINYINT: *lo = INT8_MIN, *hi = INT8_MAX; break;
  case DP_T_SMALLINT: *lo = INT16_MIN, *hi = INT16_MAX; break;
  case DP_T_INT:
  case DP_T_INTERVAL_YM: *lo = INT32_MIN, *hi = INT32_MAX; break;
  default: *lo = INT64_MIN, *hi = INT64_MAX; break;
  }
}

static double pow10d(int n) {
  double x = 1;
  while (n-- > 0) x *= 10;
  return x;
}

static int64_t clamp_i64(double d) {
  if (d >= 9.2e18) return INT64_MAX;
  if (d <= -9.2e18) return INT64_MIN;
  return (int64_t)d;
}

/* One random value of type t appended to v (nested types too). */
static int gen_random(datagen_state *st, gen_col *g, dp_vector *v, const dp_type *t,
                      int64_t clock) {
  uint64_t *s = &g->rng;
  int rc;
  switch (t->kind) {
  case DP_T_BOOLEAN: return dp_vector_append_bool(v, next_u64(s) & 1);
  case DP_T_TINYINT:
  case DP_T_SMALLINT:
  case DP_T_INT:
  case DP_T_BIGINT:
  case DP_T_INTERVAL_YM:
  case DP_T_INTERVAL_DT: {
    int64_t lo, hi;
    int_range(t->kind, &lo, &hi);
    if (t->kind == DP_T_INTERVAL_DT) lo = 0, hi = INT64_C(86400000000);
    if (g->has_min && t == g->type) lo = clamp_i64(g->dmin) > lo ? clamp_i64(g->dmin) : lo;
    if (g->has_max && t == g->type) hi = clamp_i64(g->dmax) < hi ? clamp_i64(g->dmax) : hi;
    return dp_vector_append_i64(v, next_range(s, lo, hi));
  }
  case DP_T_FLOAT:
  case DP_T_DOUBLE: {
    double lo = g->has_min && t == g->type ? g->dmin : 0, hi = g->has_max && t == g->type ? g->dmax : 1;
    return dp_vector_append_f64(v, lo + next_unit(s) * (hi - lo));
  }
  case DP_T_DECIMAL: {
    double scale = pow10d(t->scale);
    double lo = g->has_min && t == g->type ? g->dmin : 0;
    double hi = g->has_max && t == g->type ? g->dmax : pow10d(t->precision - t->scale) - 1 / scale;
    int64_t x = next_range(s, clamp_i64(ceil(lo * scale)), clamp_i64(floor(hi * scale)));
    return dp_vector_append_dec(v, (dp_i128)x);
  }
  case DP_T_STRING:
  case DP_T_BYTES: {
    int64_t n = g->length;
    if (t->kind == DP_T_STRING && t->length > 0 && n > (int64_t)t->length) n = t->length;
    st->text.len = 0;
    static const char hex[] = "0123456789abcdef";
    for (int64_t i = 0; i < n; i += 16) {
      uint64_t r = next_u64(s);
      for (int64_t j = i; j < n && j < i + 16; j++, r >>= 4)
        dp_buf_putc(&st->text, t->kind == DP_T_STRING ? hex[r & 15] : (char)(r & 0xFF));
    }
    if (st->text.oom) return DIPPER_NOMEM;
    return dp_vector_append_str(v, st->text.data ? st->text.data : "", st->text.len);
  }
  case DP_T_DATE: {
    int64_t ts = clock - (g->max_past > 0 ? next_range(s, 0, g->max_past) : 0);
    int64_t days = ts / DP_MICROS_PER_DAY - (ts % DP_MICROS_PER_DAY < 0);
    return dp_vector_append_i64(v, days);
  }
  case DP_T_TIME: {
    int64_t us = next_range(s, 0, DP_MICROS_PER_DAY - 1);
    int p = t->precision > 6 ? 6 : t->precision;
    int64_t unit = (int64_t)pow10d(6 - p);
    return dp_vector_append_i64(v, us - us % unit);
  }
  case DP_T_TIMESTAMP:
  case DP_T_TIMESTAMP_LTZ: {
    int64_t ts = clock - (g->max_past > 0 ? next_range(s, 0, g->max_past) : 0);
    int p = t->precision > 6 ? 6 : t->precision;
    int64_t unit = (int64_t)pow10d(6 - p);
    int64_t rem = ts % unit;
    if (rem < 0) rem += unit;
    return dp_vector_append_i64(v, ts - rem);
  }
  case DP_T_ROW:
    for (int i = 0; i < t->nfields; i++)
      if ((rc = gen_random(st, g, v->children[i], t->fields[i].type, clock)) != DIPPER_OK)
        return rc;
    return dp_vector_append_struct(v);
  case DP_T_ARRAY: {
    for (int64_t i = 0; i < g->items; i++)
      if ((rc = gen_random(st, g, v->children[0], t->elem, clock)) != DIPPER_OK) return rc;
    return dp_vector_append_list(v);
  }
  case DP_T_MAP: {
    dp_vector *entries = v->children[0];
    for (int64_t i = 0; i < g->items; i++) {
      if ((rc = gen_random(st, g, entries->children[0], t->elem, clock)) != DIPPER_OK ||
          (rc = gen_random(st, g, entries->children[1], t->value, clock)) != DIPPER_OK ||
          (rc = dp_vector_append_struct(entries)) != DIPPER_OK)
        return rc;
    }
    return dp_vector_append_list(v);
  }
  default: return dp_vector_append_null(v);
  }
}

static int gen_sequence(datagen_state *st, gen_col *g, dp_vector *v, int64_t row) {
  int64_t x = g->seq_start + row;
  switch (g->type->kind) {
  case DP_T_STRING: {
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%lld", (long long)x);
    return dp_vector_append_str(v, tmp, (size_t)n);
  }
  case DP_T_FLOAT:
  case DP_T_DOUBLE: return dp_vector_append_f64(v, (double)x);
  case DP_T_DECIMAL: {
    dp_i128 d = x;
    for (int i = 0; i < g->type->scale; i++) d *= 10;
    return dp_vector_append_dec(v, d);
  }
  default: (void)st; return dp_vector_append_i64(v, x);
  }
}

static void datagen_close(dp_source *s);

static bool seq_type_ok(dp_type_kind k) {
  return k == DP_T_TINYINT || k == DP_T_SMALLINT || k == DP_T_INT || k == DP_T_BIGINT ||
         k == DP_T_FLOAT || k == DP_T_DOUBLE || k == DP_T_DECIMAL || k == DP_T_STRING;
}

static int open_state(dp_source *s, datagen_state *st) {
  const dp_table_def *t = s->table;
  dp_span nowhere = {0, 0, 0, 0};
  const dp_span where = t ? t->with_span : nowhere;
  const char *tname = t ? t->name : "?";
  st->ncols = s->schema->ncols;
  st->cols = calloc(st->ncols ? (size_t)st->ncols : 1, sizeof *st->cols);
  if (!st->cols) return DIPPER_NOMEM;
  const char *seed_text = dp_table_option(t, "seed", NULL);
  st->seeded = seed_text != NULL;
  uint64_t seed = seed_text ? (uint64_t)strtoull(seed_text, NULL, 10)
                            : (uint64_t)wall_micros() ^ (uint64_t)(uintptr_t)st;
  const char *rows = dp_table_option(t, "number-of-rows", NULL);
  st->total = rows ? (int64_t)strtoll(rows, NULL, 10) : -1;
  const char *rate = dp_table_option(t, "rows-per-second", NULL);
  st->rate = rate ? strtod(rate, NULL) : 0;
  for (int i = 0; i < st->ncols; i++) {
    gen_col *g = &st->cols[i];
    const char *col = s->schema->cols[i].name;
    g->type = s->schema->cols[i].type;
    g->base = seed + (uint64_t)(i + 1) * UINT64_C(0xD1B54A32D192ED03);
    g->base = next_u64(&g->base);
    const char *kind = field_opt(t, col, "kind");
    g->sequence = kind && strcasecmp(kind, "sequence") == 0;
    const char *v;
    if ((v = field_opt(t, col, "min"))) g->has_min = true, g->dmin = strtod(v, NULL);
    if ((v = field_opt(t, col, "max"))) g->has_max = true, g->dmax = strtod(v, NULL);
    if (g->has_min && g->has_max && g->dmin > g->dmax)
      return dp_error(s->diags, DIPPER_OPTION, where,
                      "table `%s`: 'fields.%s.min' is above 'fields.%s.max'; swap them", tname, col,
                      col);
    v = field_opt(t, col, "length");
    g->length = v ? strtoll(v, NULL, 10) : 100;
    g->items = v ? g->length : 3; /* Flink's collection size */
    if ((v = field_opt(t, col, "null-rate"))) {
      double r = strtod(v, NULL);
      g->null_threshold = r >= 1 ? UINT64_MAX : (uint64_t)(r * 18446744073709551616.0);
    }
    if ((v = field_opt(t, col, "max-past"))) {
      int64_t us = 0;
      if (dp_parse_duration(v, &us) == DIPPER_OK) g->max_past = us;
    }
    if (g->sequence) {
      if (!seq_type_ok(g->type->kind))
        return dp_error(s->diags, DIPPER_OPTION, where,
                        "table `%s`: column `%s` cannot be a sequence; 'sequence' counts numbers "
                        "(or their text): use 'fields.%s.kind' = 'random'",
                        tname, col, col);
      const char *a = field_opt(t, col, "start"), *b = field_opt(t, col, "end");
      g->seq_start = a ? strtoll(a, NULL, 10) : 0;
      g->seq_end = b ? strtoll(b, NULL, 10) : INT64_MAX - 1;
      int64_t n = g->seq_end - g->seq_start + 1;
      if (st->total < 0 || n < st->total) st->total = n;
    }
  }
  st->synthetic = st->total >= 0;
  double clock_rate = st->rate > 0 ? st->rate : DEFAULT_RATE;
  st->step = (int64_t)llround(1e6 / clock_rate);
  if (st->step < 1) st->step = 1;
  if (!st->synthetic && !rate) st->rate = DEFAULT_RATE;
  /* batch mode wants the whole answer now: the rate only spaces the clock */
  if (s->db && !dp_session_streaming(s->db)) st->rate = 0;
  st->start_mono = mono_micros();
  st->replay_end = -1;
  return DIPPER_OK;
}

static int datagen_open(dp_source *s) {
  datagen_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  s->state = st;
  int rc = open_state(s, st);
  if (rc) datagen_close(s); /* the caller does not close a source that failed to open */
  return rc;
}

/* Rows per batch when nothing else caps it: an unbounded source without a
** rate would otherwise plan an endless batch. */
#define UNCAPPED_BATCH INT64_C(1) << 20

static int datagen_plan(dp_source *s, int64_t max_rows, bool *exhausted) {
  datagen_state *st = s->state;
  int64_t allowed = INT64_MAX;
  if (st->rate > 0) {
    double due = (double)(mono_micros() - st->start_mono) * st->rate / 1e6;
    int64_t due_rows = due > 9e18 ? INT64_MAX : (int64_t)due;
    allowed = due_rows > st->emitted ? due_rows - st->emitted : 0;
  }
  if (st->total >= 0 && allowed > st->total - st->emitted) allowed = st->total - st->emitted;
  if (st->total < 0 && allowed > UNCAPPED_BATCH) allowed = UNCAPPED_BATCH;
  if (max_rows > 0 && allowed > max_rows) allowed = max_rows;
  st->planned_end = st->emitted + allowed;
  if (st->replay_end >= 0) {
    st->planned_end = st->replay_end;
    st->replay_end = -1;
  }
  st->batch_start = st->cursor = st->emitted;
  if (st->nsplits > 1) { /* this split's share, in row order */
    int64_t len = st->planned_end - st->batch_start;
    st->cursor = st->batch_start + (int64_t)((__int128)len * st->split / st->nsplits);
  }
  *exhausted = st->total >= 0 && st->emitted >= st->total;
  return DIPPER_OK;
}

/* The end of this split's share of the planned batch. */
static int64_t share_end(const datagen_state *st) {
  if (st->nsplits <= 1) return st->planned_end;
  int64_t len = st->planned_end - st->batch_start;
  return st->batch_start + (int64_t)((__int128)len * (st->split + 1) / st->nsplits);
}

static int datagen_read(dp_source *s, dp_batch *out, int64_t want, bool *done) {
  datagen_state *st = s->state;
  int64_t end = share_end(st);
  int64_t n = end - st->cursor;
  if (n > want) n = want;
  if (n < 0) n = 0;
  int64_t first = st->cursor;
  int64_t now = st->synthetic ? 0 : wall_micros();
  for (int c = 0; c < st->ncols && c < out->ncols; c++) {
    gen_col *g = &st->cols[c];
    dp_vector *v = out->cols[c];
    int rc = dp_vector_reserve(v, n);
    if (rc) return rc;
    for (int64_t r = 0; r < n; r++) {
      g->rng = row_seed(g, first + r);
      if (g->null_threshold && next_u64(&g->rng) < g->null_threshold) {
        rc = dp_vector_append_null(v);
      } else if (g->sequence) {
        rc = gen_sequence(st, g, v, first + r);
      } else {
        int64_t clock = st->synthetic ? SYNTHETIC_START + (first + r) * st->step : now;
        rc = gen_random(st, g, v, g->type, clock);
      }
      if (rc) return rc;
    }
  }
  st->cursor += n;
  if (st->nsplits <= 1) st->emitted = st->cursor;
  s->metrics.rows += n;
  *done = st->cursor >= end;
  if (out->ncols > 0) return dp_batch_sync(out);
  out->nrows += n;
  return DIPPER_OK;
}

static int datagen_commit(dp_source *s) {
  datagen_state *st = s->state;
  /* One reader: the offset is the row count, kept as rows are read.  A
  ** split read its share only; the batch is committed whole. */
  if (st->nsplits > 1) st->emitted = st->cursor = st->planned_end;
  return DIPPER_OK;
}

/* Checkpoints.  The position is the row count and every column's base, so
** a resumed run goes on with the very values it would have made, seeded or
** not (the clock of an unbounded run is the real one, so its timestamps are
** those of the run that makes them).  A plan is its end; a split's plan
** also carries the bases, so that the splits of a table without 'seed'
** replay worker 0's (one reader's plan stays the end alone). */
static void put_bases(const datagen_state *st, dp_buf *out) {
  dp_put_uvar(out, (uint64_t)st->ncols);
  for (int i = 0; i < st->ncols; i++) dp_put_u64(out, st->cols[i].base);
}

static bool get_bases(datagen_state *st, dp_rd *in) {
  uint64_t ncols = dp_get_count(in, 8);
  if (in->bad || ncols != (uint64_t)st->ncols) return false;
  for (int i = 0; i < st->ncols; i++) st->cols[i].base = dp_get_u64(in);
  return !in->bad; /* a failure fails the query: no half-set bases are used */
}

static int datagen_save_plan(dp_source *s, dp_buf *out) {
  const datagen_state *st = s->state;
  dp_put_svar(out, st->planned_end);
  if (st->nsplits > 1) put_bases(st, out);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int datagen_save_position(dp_source *s, dp_buf *out) {
  const datagen_state *st = s->state;
  dp_put_svar(out, st->emitted);
  put_bases(st, out);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int datagen_corrupt(dp_source *s, const char *what) {
  dp_span nowhere = {0, 0, 0, 0};
  return dp_error(s->diags, DIPPER_CORRUPT, nowhere,
                  "table `%s`: the checkpoint's %s does not fit this datagen table", s->table->name,
                  what);
}

static int datagen_restore_position(dp_source *s, dp_rd *in) {
  datagen_state *st = s->state;
  int64_t emitted = dp_get_svar(in);
  if (in->bad || emitted < 0 || (st->total >= 0 && emitted > st->total) || !get_bases(st, in))
    return datagen_corrupt(s, "position");
  st->emitted = st->planned_end = st->cursor = emitted;
  /* the rate counts from a start as far back as the rows already made */
  if (st->rate > 0) st->start_mono = mono_micros() - (int64_t)((double)emitted * 1e6 / st->rate);
  return DIPPER_OK;
}

static int datagen_replay_plan(dp_source *s, dp_rd *in) {
  datagen_state *st = s->state;
  int64_t end = dp_get_svar(in);
  if (in->bad || end < st->emitted || (st->total >= 0 && end > st->total))
    return datagen_corrupt(s, "batch bounds");
  if (st->nsplits > 1 && !get_bases(st, in)) return datagen_corrupt(s, "batch bounds");
  st->replay_end = end;
  return DIPPER_OK;
}

/* A row is a function of (seed, row): a split generates its share alone.
** Paced plans follow the clock and an unseeded table's seed is worker 0's,
** so both need the plans replayed. */
static int datagen_split(dp_source *s, int index, int count, bool replayed, const char **why) {
  datagen_state *st = s->state;
  if (!replayed && !st->seeded) {
    *why = "a datagen table without 'seed' draws its seed at open, which the splits of a "
           "batch-mode query cannot share; set 'seed'";
    return DIPPER_UNSUPPORTED;
  }
  st->split = index;
  st->nsplits = count;
  return DIPPER_OK;
}

static void datagen_close(dp_source *s) {
  datagen_state *st = s->state;
  if (!st) return;
  free(st->cols);
  dp_buf_free(&st->text);
  free(st);
  s->state = NULL;
}

const dp_source_class dp_source_datagen = {
    .name = "datagen",
    .open = datagen_open,
    .plan_batch = datagen_plan,
    .read = datagen_read,
    .commit = datagen_commit,
    .close = datagen_close,
    .save_plan = datagen_save_plan,
    .save_position = datagen_save_position,
    .restore_position = datagen_restore_position,
    .replay_plan = datagen_replay_plan,
  .split = datagen_split,
};
