/*
** field_take_test.c — the bulk paths of ROW field access and dp_batch_take:
** a field whose child is NULL wherever its ROW is comes out as the child
** itself, one whose child holds values under NULL ROWs comes out masked, and
** ROW columns gathered by dp_batch_take keep every member and bit.  Each is
** checked against a row-by-row model over 1000 rows (bitmap bytes, tails).
*/
#include <stdlib.h>

#include "exec/eval_int.h"
#include "plan/binder.h"
#include "plan/catalog.h"
#include "sql/parser.h"
#include "test.h"

enum { ROWS = 1000 };

typedef struct fx {
  dp_arena *a;
  dp_diags d;
  dp_catalog *cat;
  dp_schema *s;
  dp_batch *b;
  dp_exec ex;
} fx;

/* Column r ROW<n BIGINT, s STRING> (NULL every 5th row) and k INT.  With
** `clean` the children are NULL under every NULL ROW, as sources build
** them; otherwise they keep values there, which a field must not show. */
static void fx_init(fx *f, bool clean) {
  f->a = dp_arena_new(1024);
  dp_diags_init(&f->d, f->a, "t", "", 0);
  f->cat = dp_catalog_new();
  dp_field members[2] = {{"n", dp_type_of(DP_T_BIGINT)}, {"s", dp_type_of(DP_T_STRING)}};
  f->s = dp_schema_new(f->a, 2);
  f->s->cols[0] = (dp_field){"r", dp_type_row(f->a, 2, members)};
  f->s->cols[1] = (dp_field){"k", dp_type_of(DP_T_INT)};
  f->b = dp_batch_new(f->s, 16);
  dp_vector *r = f->b->cols[0];
  for (int i = 0; i < ROWS; i++) {
    bool row_null = i % 5 == 2;
    if (row_null && clean) {
      dp_vector_append_null(r);
    } else {
      if (i % 11 == 4)
        dp_vector_append_null(r->children[0]);
      else
        dp_vector_append_i64(r->children[0], i * 10);
      char text[16];
      int len = snprintf(text, sizeof text, "s%d", i);
      dp_vector_append_str(r->children[1], text, (size_t)len);
      dp_vector_append_struct(r);
      if (row_null) dp_ev_set_null(r, i);
    }
    dp_vector_append_i64(f->b->cols[1], i % 3);
  }
  dp_batch_sync(f->b);
  f->ex = (dp_exec){0};
  f->ex.diags = &f->d;
}

static void fx_free(fx *f) {
  dp_batch_free(f->b);
  dp_catalog_free(f->cat);
  dp_arena_free(f->a);
}

static const dp_expr *bind(fx *f, const char *expr_sql) {
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT %s", expr_sql);
  dp_ast_script *script = NULL;
  if (dp_parse(f->a, &f->d, dp_arena_strdup(f->a, sql), strlen(sql), &script) != DIPPER_OK) return NULL;
  dp_expr *e = NULL;
  if (dp_bind_expr_over(f->a, &f->d, f->cat, f->s, script->stmts[0]->u.query->select->items[0].expr,
                        &e) != DIPPER_OK)
    return NULL;
  return e;
}

/* Rows that differ from the model: r.n is NULL under a NULL ROW or a NULL n. */
static int bad_n(const dp_vector *v, int64_t rows, const int64_t *sel) {
  int bad = 0;
  for (int64_t k = 0; k < rows; k++) {
    int64_t i = sel ? sel[k] : k;
    bool want_null = i % 5 == 2 || i % 11 == 4;
    if (dp_vector_is_null(v, k) != want_null) bad++;
    if (!want_null && dp_vector_get_i64(v, k) != i * 10) bad++;
  }
  return bad;
}

static int64_t count_nulls(const dp_vector *v) {
  int64_t nulls = 0;
  for (int64_t i = 0; i < v->length; i++) nulls += dp_vector_is_null(v, i);
  return nulls;
}

TEST(field_of_clean_row_is_its_child) {
  fx f;
  fx_init(&f, true);
  const dp_expr *e = bind(&f, "r.n");
  CHECK(e != NULL);
  dp_ev c = {&f.ex, f.b, ROWS};
  dp_ev_arg out;
  CHECK_EQ(dp_ev_eval(&c, e, &out), DIPPER_OK);
  CHECK(out.v == f.b->cols[0]->children[0]); /* borrowed, not copied */
  CHECK(!out.owned);
  CHECK_EQ(bad_n(out.v, ROWS, NULL), 0);
  dp_ev_arg_free(&out);
  /* dp_eval still gives the caller a vector of its own */
  dp_vector *v = NULL;
  CHECK_EQ(dp_eval(&f.ex, e, f.b, &v), DIPPER_OK);
  CHECK(v != f.b->cols[0]->children[0]);
  CHECK_EQ(bad_n(v, ROWS, NULL), 0);
  CHECK_EQ(v->null_count, count_nulls(v));
  dp_vector_free(v);
  fx_free(&f);
}

TEST(field_of_row_with_values_under_nulls_is_masked) {
  fx f;
  fx_init(&f, false);
  dp_vector *v = NULL;
  CHECK_EQ(dp_eval(&f.ex, bind(&f, "r.n"), f.b, &v), DIPPER_OK);
  CHECK_EQ(v->length, ROWS);
  CHECK_EQ(bad_n(v, ROWS, NULL), 0);
  CHECK_EQ(v->null_count, count_nulls(v));
  dp_vector_free(v);
  /* a string member: NULL under the NULL ROWs, its text elsewhere */
  CHECK_EQ(dp_eval(&f.ex, bind(&f, "r.s"), f.b, &v), DIPPER_OK);
  int bad = 0;
  for (int i = 0; i < ROWS; i++) {
    if (dp_vector_is_null(v, i) != (i % 5 == 2)) bad++;
    if (i % 5 != 2) {
      char text[16];
      int len = snprintf(text, sizeof text, "s%d", i);
      size_t got_len;
      const char *got = dp_vector_get_str(v, i, &got_len);
      if (got_len != (size_t)len || memcmp(got, text, got_len) != 0) bad++;
    }
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(v->null_count, ROWS / 5);
  dp_vector_free(v);
  fx_free(&f);
}

TEST(case_over_fields_gathers_each_branch) {
  fx f;
  fx_init(&f, true);
  dp_vector *v = NULL;
  CHECK_EQ(dp_eval(&f.ex, bind(&f, "CASE WHEN k = 0 THEN r.n WHEN k = 1 THEN -1 END"), f.b, &v),
           DIPPER_OK);
  int bad = 0;
  for (int i = 0; i < ROWS; i++) {
    bool want_null = i % 3 == 2 || (i % 3 == 0 && (i % 5 == 2 || i % 11 == 4));
    if (dp_vector_is_null(v, i) != want_null) bad++;
    if (!want_null && dp_vector_get_i64(v, i) != (i % 3 == 0 ? i * 10 : -1)) bad++;
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(v->null_count, count_nulls(v));
  dp_vector_free(v);
  fx_free(&f);
}

TEST(take_gathers_row_columns) {
  fx f;
  fx_init(&f, false);
  /* every third row from 1, appended after 3 rows already there, so that
  ** the bitmap is written both bit by bit and a byte at a time */
  int64_t sel[ROWS];
  int64_t n = 0;
  for (int64_t i = 1; i < ROWS; i += 3) sel[n++] = i;
  dp_batch *out = dp_batch_new(f.s, 4);
  int64_t first[3] = {0, 2, 4};
  CHECK_EQ(dp_batch_take(out, f.b, first, 0, 3), DIPPER_OK);
  CHECK_EQ(dp_batch_take(out, f.b, sel, 0, n), DIPPER_OK);
  CHECK_EQ(out->nrows, n + 3);
  dp_vector *r = out->cols[0];
  CHECK_EQ(r->length, n + 3);
  CHECK_EQ(r->children[0]->length, n + 3);
  CHECK_EQ(r->children[1]->length, n + 3);
  int bad = 0;
  for (int64_t k = 0; k < n + 3; k++) {
    int64_t i = k < 3 ? first[k] : sel[k - 3];
    if (dp_vector_is_null(r, k) != (i % 5 == 2)) bad++;
    /* members are gathered as they are, under NULL ROWs too */
    bool n_null = i % 11 == 4;
    if (dp_vector_is_null(r->children[0], k) != n_null) bad++;
    if (!n_null && dp_vector_get_i64(r->children[0], k) != i * 10) bad++;
    if (dp_vector_get_i64(out->cols[1], k) != i % 3) bad++;
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(r->null_count, count_nulls(r));
  CHECK_EQ(r->children[0]->null_count, count_nulls(r->children[0]));
  /* a field of the gathered ROW is masked like the original's */
  int64_t ident[ROWS];
  for (int64_t k = 0; k < n + 3; k++) ident[k] = k < 3 ? first[k] : sel[k - 3];
  dp_vector *v = NULL;
  CHECK_EQ(dp_eval(&f.ex, bind(&f, "r.n"), out, &v), DIPPER_OK);
  CHECK_EQ(bad_n(v, n + 3, ident), 0);
  dp_vector_free(v);
  dp_batch_free(out);
  fx_free(&f);
}

TEST(take_of_null_rows_appends_null_members) {
  fx f;
  fx_init(&f, true);
  /* only NULL ROWs (every 5th from 2): the members come out NULL in bulk,
  ** after 5 ordinary rows so that the bitmaps start part-way */
  int64_t sel[ROWS];
  int64_t n = 0;
  for (int64_t i = 2; i < ROWS; i += 5) sel[n++] = i;
  int64_t first[5] = {0, 1, 3, 4, 6};
  dp_batch *out = dp_batch_new(f.s, 4);
  CHECK_EQ(dp_batch_take(out, f.b, first, 0, 5), DIPPER_OK);
  CHECK_EQ(dp_batch_take(out, f.b, sel, 0, n), DIPPER_OK);
  CHECK_EQ(dp_batch_take(out, f.b, first, 0, 5), DIPPER_OK);
  int64_t total = n + 10;
  dp_vector *r = out->cols[0];
  CHECK_EQ(out->nrows, total);
  CHECK_EQ(r->children[0]->length, total);
  CHECK_EQ(r->children[1]->length, total);
  CHECK_EQ(r->null_count, n);
  CHECK_EQ(r->children[0]->null_count, n + 2); /* row 4 has a NULL n, taken twice */
  CHECK_EQ(r->children[1]->null_count, n);
  int bad = 0;
  for (int64_t k = 0; k < total; k++) {
    bool mid = k >= 5 && k < 5 + n;
    int64_t i = mid ? sel[k - 5] : first[k < 5 ? k : k - 5 - n];
    if (dp_vector_is_null(r, k) != mid) bad++;
    if (dp_vector_is_null(r->children[1], k) != mid) bad++;
    size_t len;
    const char *text = dp_vector_get_str(r->children[1], k, &len);
    if (mid && len != 0) bad++;
    char want[16];
    int want_len = snprintf(want, sizeof want, "s%lld", (long long)i);
    if (!mid && (len != (size_t)want_len || memcmp(text, want, len) != 0)) bad++;
  }
  CHECK_EQ(bad, 0);
  dp_vector *v = NULL;
  CHECK_EQ(dp_eval(&f.ex, bind(&f, "r.n"), out, &v), DIPPER_OK);
  int64_t ident[ROWS + 10];
  for (int64_t k = 0; k < total; k++) ident[k] = k >= 5 && k < 5 + n ? sel[k - 5] : first[k < 5 ? k : k - 5 - n];
  CHECK_EQ(bad_n(v, total, ident), 0);
  dp_vector_free(v);
  dp_batch_free(out);
  fx_free(&f);
}

int main(void) { return RUN_TESTS(); }
