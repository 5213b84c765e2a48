/*
** exec_test.c — exec.c and the simple operators: building operator trees
** (and refusing what the engine does not run, with the node's place),
** VALUES, PROJECT (pass-through columns borrowed, not copied), FILTER (all,
** some or none of a batch), UNION ALL, across micro-batches.
**
** The inputs are VALUES lists, which need no connector: the tree of the
** query (below any sink) is built with dp_op_build and pulled by hand.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "exec/exec.h"
#include "exec/exec_int.h"
#include "plan/analyze.h"
#include "test.h"

typedef struct tree {
  dipper *db;
  dipper_program *prog;
  dp_arena *arena;
  dp_diags diags;
  dp_exec ex;
  dp_op *root;
  char rows[8192];
  size_t len;
  int batches; /* non-empty batches pulled */
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
  t->ex.max_event_time = dp_arena_alloc(t->ex.arena, sizeof(int64_t));
  t->ex.max_event_time[0] = DP_WATERMARK_NONE;
  t->ex.watermark = DP_WATERMARK_NONE;
  t->ex.output_mode = dp_analyze_output_mode(&s->plan, t->ex.root);
  return dp_op_build(&t->ex, t->ex.root, &t->root);
}

static void end_batch(dp_op *op, void *user) {
  (void)user;
  if (op->cls->end_batch) CHECK_EQ(op->cls->end_batch(op), DIPPER_OK);
}

/* One micro-batch: every row as "a|b|..." lines appended to t->rows. */
static int tree_batch(tree *t) {
  for (;;) {
    dp_batch *b = NULL;
    int rc = t->root->cls->next(t->root, &b);
    if (rc) return rc;
    if (!b) break;
    if (b->nrows > 0) t->batches++;
    CHECK_EQ(b->ncols, t->root->plan->schema.ncols);
    for (int64_t r = 0; r < b->nrows; r++) {
      for (int c = 0; c < b->ncols; c++) {
        dp_value v;
        const char *text = "?";
        if (dp_vector_get_value(t->ex.batch_arena, b->cols[c], r, &v))
          text = dp_value_format(t->ex.batch_arena, &v);
        t->len += (size_t)snprintf(t->rows + t->len, sizeof t->rows - t->len, "%s%s",
                                   c ? "|" : "", text);
      }
      t->len += (size_t)snprintf(t->rows + t->len, sizeof t->rows - t->len, "\n");
    }
  }
  dp_op_walk(t->root, end_batch, NULL);
  dp_arena_reset(t->ex.batch_arena);
  t->ex.batch_id++;
  return DIPPER_OK;
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

#define V2 "(VALUES (1, 'x'), (2, 'y'), (3, CAST(NULL AS STRING))) AS t(a, b)"

TEST(values_rows_once_across_batches) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT a, b FROM " V2), DIPPER_OK);
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "1|'x'\n2|'y'\n3|NULL\n");
  /* A bounded input is read once: the next micro-batch has no rows. */
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "1|'x'\n2|'y'\n3|NULL\n");
  CHECK_EQ(t.batches, 1);
  tree_close(&t);
}

TEST(values_without_from_and_casts) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT 7, CAST(2 AS BIGINT) * 3, 'k'"), DIPPER_OK);
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "7|6|'k'\n");
  tree_close(&t);
}

TEST(project_reorder_borrows_the_input_vectors) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT b, a, a FROM " V2), DIPPER_OK);
  CHECK_EQ(t.root->plan->kind, DP_P_PROJECT);
  dp_op *child = t.root->children[0];
  dp_batch *in = NULL, *out = NULL;
  /* Pull the project, then compare its columns to what the VALUES holds. */
  CHECK_EQ(t.root->cls->next(t.root, &out), DIPPER_OK);
  CHECK(out != NULL);
  CHECK_EQ(child->plan->kind, DP_P_VALUES);
  in = ((dp_batch **)child->state)[0]; /* values_state's first member: its rows */
  if (out && in) {
    CHECK(out->cols[0] == in->cols[1]);
    CHECK(out->cols[1] == in->cols[0]);
    CHECK(out->cols[2] == in->cols[0]);
    CHECK_EQ(out->nrows, 3);
    CHECK(out->schema == &t.root->plan->schema);
  }
  tree_close(&t);
}

TEST(project_evaluates_expressions) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT a * 10 + 1, b, a > 1 FROM " V2), DIPPER_OK);
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "11|'x'|FALSE\n21|'y'|TRUE\n31|NULL|TRUE\n");
  CHECK_EQ(t.root->metrics.rows_out, 3);
  tree_close(&t);
}

TEST(filter_some_rows) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT a, b FROM " V2 " WHERE a <> 2"), DIPPER_OK);
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "1|'x'\n3|NULL\n");
  tree_close(&t);
}

TEST(filter_null_is_not_true) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT a FROM " V2 " WHERE b = 'y' OR b = 'x'"), DIPPER_OK);
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "1\n2\n");
  tree_close(&t);
}

TEST(filter_all_rows_passes_the_batch_on) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT * FROM " V2 " WHERE a > 0"), DIPPER_OK);
  /* The filter sits under SELECT *'s projection or is the root. */
  dp_op *f = t.root->plan->kind == DP_P_FILTER ? t.root : t.root->children[0];
  CHECK_EQ(f->plan->kind, DP_P_FILTER);
  dp_batch *in = ((dp_batch **)f->children[0]->state)[0];
  dp_batch *out = NULL;
  CHECK_EQ(f->cls->next(f, &out), DIPPER_OK);
  CHECK(out != NULL);
  if (out) {
    CHECK_EQ(out->nrows, 3);
    CHECK(out->cols == in->cols); /* no copy */
  }
  tree_close(&t);
}

TEST(filter_no_rows_gives_no_batch) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT a FROM " V2 " WHERE a > 5"), DIPPER_OK);
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "");
  CHECK_EQ(t.batches, 0);
  tree_close(&t);
  CHECK_EQ(tree_open(&t, "SELECT a FROM " V2 " WHERE FALSE"), DIPPER_OK);
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_EQ(t.batches, 0);
  tree_close(&t);
  CHECK_EQ(tree_open(&t, "SELECT a FROM " V2 " WHERE TRUE"), DIPPER_OK);
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "1\n2\n3\n");
  tree_close(&t);
}

TEST(union_all_concatenates_in_order) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT b, a FROM " V2 " WHERE a > 1 UNION ALL SELECT 'z', 9 "
                         "UNION ALL SELECT b, a + 100 FROM " V2),
           DIPPER_OK);
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "'y'|2\nNULL|3\n'z'|9\n'x'|101\n'y'|102\nNULL|103\n");
  /* The cursor starts over in the next micro-batch; the inputs are spent. */
  CHECK_EQ(tree_batch(&t), DIPPER_OK);
  CHECK_STR(t.rows, "'y'|2\nNULL|3\n'z'|9\n'x'|101\n'y'|102\nNULL|103\n");
  tree_close(&t);
}

TEST(union_renames_to_its_schema) {
  tree t;
  CHECK_EQ(tree_open(&t, "SELECT a AS first FROM " V2 " UNION ALL SELECT a + 1 FROM " V2),
           DIPPER_OK);
  dp_batch *out = NULL;
  CHECK_EQ(t.root->cls->next(t.root, &out), DIPPER_OK);
  CHECK(out && out->schema == &t.root->plan->schema);
  if (out) CHECK_STR(out->schema->cols[0].name, "first");
  tree_close(&t);
}

/* A scan of a table whose connector has no source in the engine is refused
** when the query starts, at the table's place in the query. */
TEST(unknown_source_is_refused_with_its_place) {
  dipper *db = NULL;
  CHECK_EQ(dipper_open(&db, NULL), DIPPER_OK);
  dipper_program *prog = NULL;
  const char *sql = "CREATE TABLE k (a INT) WITH ('connector' = 'socket', 'hostname' = 'h', "
                    "'port' = '9', 'format' = 'csv');\n"
                    "SELECT a FROM k;";
  int rc = dipper_compile(db, sql, (size_t)-1, "k.sql", &prog);
  if (rc) fprintf(stderr, "compile: %s\n", dipper_errmsg(db));
  CHECK_EQ(rc, DIPPER_OK);
  if (prog) {
    dp_arena *a = dp_arena_new(0);
    dp_diags d;
    dp_diags_init(&d, a, "k.sql", prog->text, strlen(prog->text));
    dp_exec *ex = NULL;
    rc = dp_exec_open(db, &prog->stmts[1].plan, prog->stmts[1].plan.roots[0], &d, NULL, &ex);
    CHECK_EQ(rc, DIPPER_UNSUPPORTED);
    CHECK(ex == NULL);
    CHECK(d.count >= 1);
    if (d.count >= 1) {
      CHECK_CONTAINS(d.items[0].message, "no source for connector 'socket'");
      CHECK_EQ(d.items[0].span.line, 2);
    }
    dp_exec_free(ex);
    dp_arena_free(a);
  }
  dipper_program_free(prog);
  dipper_close(db);
}

/* Every plan kind without an operator class is refused by name and place. */
TEST(unregistered_kinds_are_refused_by_name) {
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  dp_diags_init(&d, a, "x.sql", NULL, 0);
  dp_query_plan q;
  memset(&q, 0, sizeof q);
  dp_exec ex;
  memset(&ex, 0, sizeof ex);
  ex.arena = a;
  ex.diags = &d;
  ex.query = &q;
  int refused = 0;
  for (int k = 0; k < DP_P_COUNT_; k++) {
    if (dp_op_class_for((dp_plan_kind)k)) continue;
    dp_plan *p = dp_plan_new(a, (dp_plan_kind)k, 0);
    p->span = (dp_span){10, 4, 3, 7};
    dp_op *op = NULL;
    int before = d.count;
    CHECK_EQ(dp_op_build(&ex, p, &op), DIPPER_UNSUPPORTED);
    CHECK(op == NULL);
    CHECK_EQ(d.count, before + 1);
    char want[96];
    snprintf(want, sizeof want, "does not run %s yet", dp_plan_kind_name((dp_plan_kind)k));
    CHECK_CONTAINS(d.items[d.count - 1].message, want);
    CHECK_EQ(d.items[d.count - 1].span.line, 3);
    CHECK_EQ(d.items[d.count - 1].span.col, 7);
    refused++;
  }
  /* The simple operators are always there. */
  CHECK(dp_op_class_for(DP_P_PROJECT) == &dp_op_project);
  CHECK(dp_op_class_for(DP_P_FILTER) == &dp_op_filter);
  CHECK(dp_op_class_for(DP_P_SCAN) == &dp_op_scan);
  CHECK(dp_op_class_for(DP_P_SINK) == &dp_op_sink);
  CHECK(dp_op_class_for(DP_P_COUNT_) == NULL);
  (void)refused;
  dp_arena_free(a);
}

int main(void) { return RUN_TESTS(); }
