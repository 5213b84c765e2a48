/*
** agg_state_cases.h — the queries and micro-batches that agg_state_test.c
** (whole states) and agg_delta_test.c (deltas) resume: every aggregate kind,
** TUMBLE, HOP and SESSION windows, DISTINCT, FILTER, the three output modes
** and a GROUP BY of the event-time column, over batches with out-of-order
** rows, NULLs, repeated values, late rows, an empty batch and the final flush.
*/
#ifndef DP_AGG_STATE_CASES_H
#define DP_AGG_STATE_CASES_H

#include "agg_fixture.h"
#include "core/vector_codec.h"

#define DDL                                                                                   \
  "CREATE TABLE bid (auction BIGINT, price BIGINT, ts TIMESTAMP(3), "                          \
  "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='memory');\n"
#define BYWIN " GROUP BY auction, window_start, window_end;"
#define TUMBLE5 "FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
#define HOP "FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND)) "
#define SESSION "FROM TABLE(SESSION(TABLE bid PARTITION BY auction, DESCRIPTOR(ts), INTERVAL '3' SECOND)) "
#define NUL INT64_MIN

#define EVERY_AGG                                                                             \
  "count(*), count(price), sum(price), avg(price), min(price), max(price), "                  \
  "first_value(price), last_value(price), count(DISTINCT price), "                            \
  "count(price) FILTER (WHERE price > 15), stddev_pop(price), var_samp(price), "              \
  "bool_and(price > 3), approx_count_distinct(price), listagg(CAST(price AS STRING)), "       \
  "collect(price), max(CAST(price AS STRING)), min(CAST(price AS STRING)), "                  \
  "bool_or(price > 25), var_pop(price), stddev_samp(price), sum(DISTINCT price), "            \
  "listagg(CAST(price AS STRING), '-') "

typedef struct query_case {
  const char *sql;
  unsigned mode;
} query_case;

static const query_case cases[] = {
    {DDL "SELECT auction, count(*), count(price), sum(price), avg(price), min(price), max(price) "
         "FROM bid GROUP BY auction;",
     DP_MODE_UPDATE},
    {DDL "SELECT auction, count(*), sum(price), min(price) FROM bid GROUP BY auction;", DP_MODE_COMPLETE},
    {DDL "SELECT auction, sum(CAST(price AS DOUBLE)), avg(CAST(price AS DOUBLE)), "
         "min(CAST(price AS DOUBLE) / 3), max(CAST(price AS DOUBLE) / 7), stddev_pop(price), "
         "stddev_samp(price), var_pop(CAST(price AS DOUBLE)), var_samp(price) FROM bid GROUP BY auction;",
     DP_MODE_UPDATE},
    {DDL "SELECT auction, sum(CAST(price AS DECIMAL(10, 2))), avg(CAST(price AS DECIMAL(10, 2))), "
         "min(CAST(price AS DECIMAL(12, 3)) / 8), max(CAST(price AS DECIMAL(10, 2))) FROM bid "
         "GROUP BY auction;",
     DP_MODE_UPDATE},
    {DDL "SELECT CAST(auction AS STRING), min(CAST(price AS STRING)), max(CAST(price AS STRING)), "
         "listagg(CAST(price AS STRING)), listagg(CAST(price AS STRING), '; '), "
         "first_value(CAST(price AS STRING)), last_value(price), collect(price), "
         "collect(CAST(price AS STRING)) FROM bid GROUP BY CAST(auction AS STRING);",
     DP_MODE_UPDATE},
    {DDL "SELECT auction, price > 20, approx_count_distinct(price), count(DISTINCT price), "
         "sum(DISTINCT price), count(price) FILTER (WHERE price > 15), "
         "sum(price) FILTER (WHERE auction <> 2), bool_and(price > 3), bool_or(price > 30), "
         "listagg(DISTINCT CAST(price AS STRING)) FROM bid GROUP BY auction, price > 20;",
     DP_MODE_UPDATE},
    {DDL "SELECT count(*), sum(price), count(DISTINCT price), collect(price) FROM bid;", DP_MODE_UPDATE},
    {DDL "SELECT auction, window_start, window_end, " EVERY_AGG TUMBLE5 BYWIN, DP_MODE_APPEND},
    {DDL "SELECT auction, window_start, window_end, " EVERY_AGG TUMBLE5 BYWIN, DP_MODE_UPDATE},
    {DDL "SELECT auction, window_start, window_end, count(*), sum(price), count(DISTINCT price), "
         "collect(price), last_value(price) " HOP BYWIN,
     DP_MODE_APPEND},
    {DDL "SELECT auction, window_start, window_end, count(*), max(price), listagg(CAST(price AS STRING)) " HOP
         BYWIN,
     DP_MODE_UPDATE},
    {DDL "SELECT auction, window_start, window_end, " EVERY_AGG SESSION BYWIN, DP_MODE_APPEND},
    {DDL "SELECT auction, window_start, window_end, " EVERY_AGG SESSION BYWIN, DP_MODE_UPDATE},
    {DDL "SELECT auction, window_start, window_end, count(DISTINCT price), sum(DISTINCT price), "
         "listagg(DISTINCT CAST(price AS STRING)), collect(DISTINCT price), count(*) " SESSION BYWIN,
     DP_MODE_UPDATE},
    /* a GROUP BY of the event-time column: groups close with the watermark */
    {DDL "SELECT auction, ts, count(*), sum(price) FROM bid GROUP BY auction, ts;", DP_MODE_APPEND},
    {DDL "SELECT window_start, window_end, count(*), count(DISTINCT auction), "
         "approx_count_distinct(auction) FROM TABLE(SESSION(TABLE bid, DESCRIPTOR(ts), INTERVAL '2' SECOND)) "
         "GROUP BY window_start, window_end;",
     DP_MODE_APPEND},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* ---- the micro-batches ---- */

#define NSTEPS 9 /* the last one is the final flush */
#define MAXROWS 16

static int64_t cells[NSTEPS][MAXROWS * 3];
static int nrows[NSTEPS];

static inline void make_data(void) {
  static bool made;
  if (made) return;
  made = true;
  uint64_t x = 12345;
  for (int s = 0; s < NSTEPS - 1; s++) {
    nrows[s] = s == 4 ? 0 : 6 + (s * 5) % 11; /* step 4 is empty */
    for (int r = 0; r < nrows[s]; r++) {
      x = x * 6364136223846793005u + 1442695040888963407u;
      uint64_t y = x >> 33;
      int64_t *c = &cells[s][r * 3];
      c[0] = (int64_t)(y % 3) + 1;
      c[1] = y % 7 == 0 ? NUL : (int64_t)((y >> 8) % 40);
      /* around 6 s per batch, some rows up to 5 s behind: some merge
      ** sessions, some are late */
      c[2] = (int64_t)s * SEC(6) + (int64_t)((y >> 16) % 4000) * 1000 - (r % 4 == 3 ? SEC(5) : 0);
    }
  }
}

/* The watermark step s runs under: the max event time before it − 1 s, as
** the driver computes it after each batch. */
static inline int64_t watermark_before(int s) {
  int64_t max = DP_WATERMARK_NONE;
  for (int k = 0; k < s && k < NSTEPS - 1; k++)
    for (int r = 0; r < nrows[k]; r++)
      if (cells[k][r * 3 + 2] > max) max = cells[k][r * 3 + 2];
  return max == DP_WATERMARK_NONE ? max : max - SEC(1);
}

static inline bool open_case(fixture *fx, const query_case *q) {
  return fixture_open(fx, q->sql, DP_P_AGGREGATE, DP_P_WATERMARK, q->mode);
}

/* Steps [from, to): each output encoded into outs[s] ("-" for none). */
static inline bool run_steps(fixture *fx, int from, int to, dp_buf *outs) {
  for (int s = from; s < to; s++) {
    bool final = s == NSTEPS - 1;
    fx->ex.watermark = watermark_before(s);
    fx->ran_watermark = s ? watermark_before(s - 1) : DP_WATERMARK_NONE;
    fx->ex.batch_id = s;
    int before = fx->diags.count;
    dp_batch *out = fixture_step(fx, final ? NULL : cells[s], final ? 0 : nrows[s], final);
    if (fx->diags.count != before) return false;
    dp_buf_free(&outs[s]);
    if (out)
      dp_batch_encode(out, 0, out->nrows, &outs[s]);
    else
      dp_buf_puts(&outs[s], "-");
  }
  return true;
}

static inline bool same_buf(const dp_buf *a, const dp_buf *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static inline int save(fixture *fx, dp_buf *blob) { return fx->top->cls->save_state(fx->top, blob); }

static inline int restore(fixture *fx, const void *p, size_t n, dp_rd *rd) {
  dp_rd_init(rd, p, n);
  return fx->top->cls->restore_state(fx->top, rd);
}

/* A fresh operator for the same plan in the same fixture (close, open). */
static inline void reopen_top(fixture *fx) {
  fx->top->cls->close(fx->top);
  CHECK_EQ(fx->top->cls->open(fx->top), DIPPER_OK);
}

#endif /* DP_AGG_STATE_CASES_H */
