/*
** prune_test.c — column pruning: the demand analysis (plan/prune.c) on the
** Nexmark q0 plan, and the pruned run (exec/narrow.c: the nexmark scan asks
** for the read fields only, the filter compacts only those) against an
** unpruned one that reads every column whole, value by value; the demand
** through a join, a projection that leaves its unread columns unevaluated,
** and a join whose stores keep only the columns read.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "exec/exec.h"
#include "exec/exec_int.h"
#include "plan/analyze.h"
#include "plan/prune.h"
#include "test.h"

#define NEXMARK                                                                            \
  "CREATE TABLE datagen (event_type INT,"                                                  \
  " person ROW<id BIGINT, name STRING, dateTime TIMESTAMP(3), extra STRING>,"              \
  " auction ROW<id BIGINT, itemName STRING, dateTime TIMESTAMP(3), seller BIGINT>,"        \
  " bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,"      \
  " dateTime TIMESTAMP(3), extra STRING>,"                                                 \
  " dateTime AS CASE WHEN event_type = 0 THEN person.dateTime"                             \
  " WHEN event_type = 1 THEN auction.dateTime ELSE bid.dateTime END,"                      \
  " WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)"                             \
  " WITH ('connector' = 'nexmark', 'events.num' = '3000', 'seed' = '7');\n"

typedef struct tree {
  dipper *db;
  dipper_program *prog;
  dp_arena *arena;
  dp_diags diags;
  dp_exec ex;
  dp_op *root;
} tree;

static int tree_open(tree *t, const char *sql) {
  memset(t, 0, sizeof *t);
  int rc = dipper_open(&t->db, NULL);
  if (rc) return rc;
  rc = dipper_compile(t->db, sql, (size_t)-1, "t.sql", &t->prog);
  if (rc) {
    fprintf(stderr, "compile: %s\n", dipper_errmsg(t->db));
    return rc;
  }
  dp_program_stmt *s = &t->prog->stmts[t->prog->n - 1];
  t->arena = dp_arena_new(0);
  dp_diags_init(&t->diags, t->arena, "t.sql", t->prog->text, strlen(t->prog->text));
  t->ex.db = t->db;
  t->ex.query = &s->plan;
  t->ex.root = s->plan.roots[0];
  t->ex.arena = dp_arena_new(0);
  t->ex.batch_arena = dp_arena_new(0);
  t->ex.diags = &t->diags;
  int nwm = s->plan.nwatermarks > 0 ? s->plan.nwatermarks : 1;
  t->ex.max_event_time = dp_arena_alloc(t->ex.arena, (size_t)nwm * sizeof(int64_t));
  for (int i = 0; i < nwm; i++) t->ex.max_event_time[i] = DP_WATERMARK_NONE;
  t->ex.watermark = DP_WATERMARK_NONE;
  t->ex.late_watermark = DP_WATERMARK_NONE;
  t->ex.output_mode = dp_analyze_output_mode(&s->plan, t->ex.root);
  return dp_op_build(&t->ex, t->ex.root, &t->root);
}

static void close_ops(dp_op *op) {
  if (!op) return;
  if (op->cls && op->cls->close) op->cls->close(op);
  for (int i = 0; i < op->nchildren; i++) close_ops(op->children[i]);
}

static void tree_close(tree *t) {
  close_ops(t->root);
  dp_arena_free(t->ex.arena);
  dp_arena_free(t->ex.batch_arena);
  dp_arena_free(t->arena);
  dipper_program_free(t->prog);
  dipper_close(t->db);
}

static const dp_plan *find_kind(const dp_plan *p, dp_plan_kind k) {
  if (p->kind == k) return p;
  for (int i = 0; i < p->ninputs; i++) {
    const dp_plan *f = find_kind(p->inputs[i], k);
    if (f) return f;
  }
  return NULL;
}

static void plan_scans(dp_op *op, void *user) {
  (void)user;
  if (op->cls != &dp_op_scan) return;
  bool data = false, ended = false;
  CHECK_EQ(dp_scan_plan(op, 0, true, &data, &ended), DIPPER_OK);
}

/* Every row the query gives in one batch-mode pull: `cols` int64 values per
** row (a ROW column's field when field >= 0), appended to out. */
typedef struct pick { int col, field; } pick;

static int64_t pull(tree *t, const pick *cols, int ncols, int64_t *out, int64_t cap) {
  dp_op_walk(t->root, plan_scans, NULL);
  int64_t n = 0;
  for (;;) {
    dp_batch *b = NULL;
    if (t->root->cls->next(t->root, &b) != DIPPER_OK) return -1;
    if (!b) break;
    for (int64_t r = 0; r < b->nrows; r++)
      for (int c = 0; c < ncols; c++) {
        const dp_vector *v = b->cols[cols[c].col];
        if (cols[c].field >= 0) {
          if (dp_vector_is_null(v, r)) {
            if (n < cap) out[n++] = INT64_MIN;
            continue;
          }
          v = v->children[cols[c].field];
        }
        if (n < cap) out[n++] = dp_vector_is_null(v, r) ? INT64_MIN : dp_vector_get_i64(v, r);
      }
  }
  return n;
}

TEST(demand_of_the_q0_scan) {
  tree t;
  CHECK_EQ(tree_open(&t, NEXMARK
                     "SELECT bid.auction, bid.bidder, bid.price, dateTime, bid.extra FROM datagen "
                     "WHERE event_type = 2"),
           DIPPER_OK);
  const dp_plan *scan = find_kind(t.ex.root, DP_P_SCAN);
  CHECK(scan != NULL);
  dp_col_need *need = NULL;
  CHECK_EQ(dp_prune_need(t.ex.arena, t.ex.root, scan, &need), DIPPER_OK);
  CHECK(need != NULL);
  if (scan && need) {
    CHECK_EQ(scan->schema.ncols, 4);
    CHECK(need[0].whole);                                   /* event_type: filter, CASE */
    CHECK(!need[1].whole && need[1].fields == (1u << 2));   /* person.dateTime */
    CHECK(!need[2].whole && need[2].fields == (1u << 2));   /* auction.dateTime */
    /* bid: auction, bidder, price, dateTime, extra; not channel nor url */
    CHECK(!need[3].whole && need[3].fields == (1u << 0 | 1u << 1 | 1u << 2 | 1u << 5 | 1u << 6));
    /* the root reads its own columns whole */
    dp_col_need *top = NULL;
    CHECK_EQ(dp_prune_need(t.ex.arena, t.ex.root, t.ex.root, &top), DIPPER_OK);
    CHECK(top && dp_prune_is_all(top, t.ex.root->schema.ncols));
  }
  tree_close(&t);
}

TEST(reading_all_fields_is_reading_whole) {
  tree t;
  CHECK_EQ(tree_open(&t, NEXMARK
                     "SELECT person.id, person.name, person.dateTime, person.extra, bid "
                     "FROM datagen"),
           DIPPER_OK);
  const dp_plan *scan = find_kind(t.ex.root, DP_P_SCAN);
  dp_col_need *need = NULL;
  CHECK_EQ(dp_prune_need(t.ex.arena, t.ex.root, scan, &need), DIPPER_OK);
  if (need) {
    CHECK(need[1].whole); /* every field of person */
    CHECK(!need[2].whole && need[2].fields == (1u << 2)); /* the CASE's auction.dateTime */
    CHECK(need[3].whole);
  }
  tree_close(&t);
}

enum { CAP = 3000 * 4 };

/* The pruned run gives the values of the run that reads whole ROWs. */
TEST(pruned_run_matches_whole_rows) {
  int64_t *a = calloc(CAP, sizeof *a), *b = calloc(CAP, sizeof *b);
  tree t;
  CHECK_EQ(tree_open(&t, NEXMARK
                     "SELECT bid.auction, bid.price, dateTime FROM datagen WHERE event_type = 2"),
           DIPPER_OK);
  pick pa[] = {{0, -1}, {1, -1}, {2, -1}};
  int64_t na = pull(&t, pa, 3, a, CAP);
  tree_close(&t);
  CHECK_EQ(tree_open(&t, NEXMARK "SELECT * FROM datagen WHERE event_type = 2"), DIPPER_OK);
  /* columns: event_type, person, auction, bid, dateTime */
  pick pb[] = {{3, 0}, {3, 2}, {4, -1}};
  int64_t nb = pull(&t, pb, 3, b, CAP);
  tree_close(&t);
  CHECK(na > 3 * 2000); /* 46 of every 50 events are bids */
  CHECK_EQ(na, nb);
  int64_t differ = 0;
  for (int64_t i = 0; i < na && i < nb; i++) differ += a[i] != b[i];
  CHECK_EQ(differ, 0);
  free(a);
  free(b);
}

/* Rows whose ROWs are NULL pass the filter too: the compacted ROW keeps
** its NULLs, its read fields their values. */
TEST(pruned_rows_keep_null_rows) {
  int64_t *a = calloc(CAP, sizeof *a), *b = calloc(CAP, sizeof *b);
  tree t;
  CHECK_EQ(tree_open(&t, NEXMARK
                     "SELECT bid.price, person.id, event_type FROM datagen WHERE event_type <> 1"),
           DIPPER_OK);
  pick pa[] = {{0, -1}, {1, -1}, {2, -1}};
  int64_t na = pull(&t, pa, 3, a, CAP);
  tree_close(&t);
  CHECK_EQ(tree_open(&t, NEXMARK "SELECT * FROM datagen WHERE event_type <> 1"), DIPPER_OK);
  pick pb[] = {{3, 2}, {1, 0}, {0, -1}};
  int64_t nb = pull(&t, pb, 3, b, CAP);
  tree_close(&t);
  CHECK(na > 3 * 2000);
  CHECK_EQ(na, nb);
  int64_t differ = 0, null_bids = 0;
  for (int64_t i = 0; i < na && i < nb; i++) differ += a[i] != b[i];
  for (int64_t i = 0; i < na; i += 3) null_bids += a[i] == INT64_MIN;
  CHECK_EQ(differ, 0);
  CHECK_EQ(null_bids, 60); /* one person in every 50 events */
  free(a);
  free(b);
}

/* A HOP window above a pruned filter: the unread columns it repeats are
** NULL, the read ones as in the whole run. */
TEST(window_repeats_only_read_columns) {
  int64_t *a = calloc(CAP * 4, sizeof *a), *b = calloc(CAP * 4, sizeof *b);
  tree t;
  CHECK_EQ(tree_open(&t, NEXMARK
                     "SELECT bid.auction AS auction, window_start FROM TABLE(HOP(TABLE datagen, "
                     "DESCRIPTOR(dateTime), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) "
                     "WHERE event_type = 2"),
           DIPPER_OK);
  pick pa[] = {{0, -1}, {1, -1}};
  int64_t na = pull(&t, pa, 2, a, CAP * 4);
  tree_close(&t);
  CHECK_EQ(tree_open(&t, NEXMARK
                     "SELECT bid, window_start FROM TABLE(HOP(TABLE datagen, "
                     "DESCRIPTOR(dateTime), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) "
                     "WHERE event_type = 2"),
           DIPPER_OK);
  pick pb[] = {{0, 0}, {1, -1}};
  int64_t nb = pull(&t, pb, 2, b, CAP * 4);
  tree_close(&t);
  CHECK(na > 2 * 2000);
  CHECK_EQ(na, nb);
  int64_t differ = 0;
  for (int64_t i = 0; i < na && i < nb; i++) differ += a[i] != b[i];
  CHECK_EQ(differ, 0);
  free(a);
  free(b);
}

/* ---- joins ---- */

#define VIEWS                                                                              \
  "CREATE VIEW bids AS SELECT bid.auction AS auction, bid.bidder AS bidder,"               \
  " bid.price AS price, bid.channel AS channel, bid.url AS url, dateTime,"                 \
  " bid.extra AS extra FROM datagen WHERE event_type = 2;\n"                               \
  "CREATE VIEW auctions AS SELECT auction.id AS id, auction.itemName AS itemName,"         \
  " auction.seller AS seller, UPPER(auction.itemName) AS shout, dateTime"                  \
  " FROM datagen WHERE event_type = 1;\n"
#define JOIN_ON                                                                            \
  " FROM bids B JOIN auctions A ON B.auction = A.id"                                       \
  " AND B.dateTime BETWEEN A.dateTime AND A.dateTime + INTERVAL '10' SECOND"

/* The join's input of side s (a Project here). */
static const dp_plan *join_input(const dp_plan *root, int s) {
  const dp_plan *j = find_kind(root, DP_P_JOIN);
  return j ? j->inputs[s] : NULL;
}

TEST(demand_through_a_join) {
  tree t;
  CHECK_EQ(tree_open(&t, NEXMARK VIEWS "SELECT B.price, A.seller" JOIN_ON), DIPPER_OK);
  const dp_plan *bp = join_input(t.ex.root, 0), *ap = join_input(t.ex.root, 1);
  CHECK(bp && ap && bp->kind == DP_P_PROJECT && ap->kind == DP_P_PROJECT);
  dp_col_need *nb = NULL, *na = NULL;
  CHECK_EQ(dp_prune_need(t.ex.arena, t.ex.root, bp, &nb), DIPPER_OK);
  CHECK_EQ(dp_prune_need(t.ex.arena, t.ex.root, ap, &na), DIPPER_OK);
  if (nb && na) {
    /* bids: auction (the key), price (read above), dateTime (the bound) */
    bool want_b[] = {true, false, true, false, false, true, false};
    for (int c = 0; c < 7; c++) CHECK_EQ(dp_col_needed(&nb[c]), want_b[c]);
    /* auctions: id (the key), seller (read above), dateTime; not itemName, shout */
    bool want_a[] = {true, false, true, false, true};
    for (int c = 0; c < 5; c++) CHECK_EQ(dp_col_needed(&na[c]), want_a[c]);
  }
  tree_close(&t);
}

static dp_op *op_of(dp_op *op, const dp_plan *p) {
  if (op->plan == p) return op;
  for (int i = 0; i < op->nchildren; i++) {
    dp_op *f = op_of(op->children[i], p);
    if (f) return f;
  }
  return NULL;
}

/* The projection below the join evaluates the columns read only: the
** others (UPPER(itemName) among them) come out all NULL. */
TEST(projection_leaves_unread_columns_unevaluated) {
  tree t;
  CHECK_EQ(tree_open(&t, NEXMARK VIEWS "SELECT B.price, A.seller" JOIN_ON), DIPPER_OK);
  dp_op *proj = op_of(t.root, join_input(t.ex.root, 1));
  CHECK(proj != NULL);
  dp_op_walk(t.root, plan_scans, NULL);
  int64_t rows = 0, item_nulls = 0, shout_nulls = 0, seller_nulls = 0;
  for (;;) {
    dp_batch *b = NULL;
    if (!proj || proj->cls->next(proj, &b) != DIPPER_OK || !b) break;
    rows += b->nrows;
    item_nulls += b->cols[1]->null_count;
    shout_nulls += b->cols[3]->null_count;
    seller_nulls += b->cols[2]->null_count;
  }
  CHECK(rows > 50); /* 3 of every 50 events are auctions */
  CHECK_EQ(item_nulls, rows); /* itemName and shout: NULL in every row */
  CHECK_EQ(shout_nulls, rows);
  CHECK_EQ(seller_nulls, 0);
  tree_close(&t);
}

/* The join of the pruned inputs gives the values of the join that reads
** every column, pair by pair and in the same order. */
TEST(pruned_join_matches_whole_rows) {
  int64_t *a = calloc(CAP, sizeof *a), *b = calloc(CAP, sizeof *b);
  tree t;
  CHECK_EQ(tree_open(&t, NEXMARK VIEWS "SELECT B.price, A.seller, A.dateTime" JOIN_ON),
           DIPPER_OK);
  pick pa[] = {{0, -1}, {1, -1}, {2, -1}};
  int64_t na = pull(&t, pa, 3, a, CAP);
  tree_close(&t);
  CHECK_EQ(tree_open(&t, NEXMARK VIEWS "SELECT *" JOIN_ON), DIPPER_OK);
  /* bids' 7 columns, then auctions': id, itemName, seller, shout, dateTime */
  pick pb[] = {{2, -1}, {9, -1}, {11, -1}};
  int64_t nb = pull(&t, pb, 3, b, CAP);
  tree_close(&t);
  CHECK(na > 3 * 100);
  CHECK_EQ(na, nb);
  int64_t differ = 0;
  for (int64_t i = 0; i < na && i < nb; i++) differ += a[i] != b[i];
  CHECK_EQ(differ, 0);
  free(a);
  free(b);
}

int main(void) { return RUN_TESTS(); }
