/*
** vector_take_test.c — the row gather (dp_vector_take, dp_batch_take,
** dp_vector_append_nulls): every physical layout, picks by index with
** repeats and negative indexes (NULL rows), runs of consecutive rows
** (sel NULL) from a start, NULL ROWs and their members, nested ARRAY/MAP,
** destinations of another layout, n = 0, batches.  Results are read back
** as text (dp_value_format) against exact expectations, and a seeded
** sweep compares thousands of gathers, at every bit alignment of the
** destination, with the same rows read back one by one from the source.
** Every result also passes the layout's invariants (null_count equals the
** bitmap's zero bits, monotonic offsets, children as long as their parent).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/vector.h"
#include "test.h"

static dp_arena *A;

static const dp_type *T(dp_type_kind k) { return dp_type_of(k); }

static dp_arena *arena(void) {
  if (!A) A = dp_arena_new(0);
  return A;
}

/* Row i as text: "NULL", 42, 'x', [1, 2], {a=1}... as dp_value_format writes it. */
static const char *fmt(const dp_vector *v, int64_t i) {
  dp_value x;
  if (!dp_vector_get_value(arena(), v, i, &x)) return "(oom)";
  char *s = dp_value_format(arena(), &x);
  return s ? s : "(oom)";
}

/* Rows [from, length) joined by " | ". */
static const char *dump_from(const dp_vector *v, int64_t from) {
  dp_buf b = DP_BUF_INIT;
  for (int64_t i = from; i < v->length; i++) {
    if (i > from) dp_buf_puts(&b, " | ");
    dp_buf_puts(&b, fmt(v, i));
  }
  char *s = dp_arena_strndup(arena(), dp_buf_cstr(&b), b.len);
  dp_buf_free(&b);
  return s;
}
static const char *dump(const dp_vector *v) { return dump_from(v, 0); }

/* The layout's invariants; returns how many are broken. */
static int broken(const dp_vector *v) {
  int bad = 0;
  if (v->length > v->capacity && v->phys != DP_PHYS_NULL) bad++;
  if (v->phys == DP_PHYS_NULL) return v->null_count == v->length ? 0 : 1;
  int64_t nulls = 0;
  if (v->validity)
    for (int64_t i = 0; i < v->length; i++) nulls += !dp_bit_get(v->validity, i);
  if (nulls != v->null_count) bad++;
  if (v->phys == DP_PHYS_VARBIN || v->phys == DP_PHYS_LIST) {
    if (v->offsets[0] != 0) bad++;
    for (int64_t i = 0; i < v->length; i++)
      if (v->offsets[i + 1] < v->offsets[i]) bad++;
    if (v->phys == DP_PHYS_VARBIN && v->data_len != v->offsets[v->length]) bad++;
    if (v->phys == DP_PHYS_LIST && v->children[0]->length != v->offsets[v->length]) bad++;
  }
  if (v->phys == DP_PHYS_STRUCT)
    for (int i = 0; i < v->nchildren; i++)
      if (v->children[i]->length != v->length) bad++;
  for (int i = 0; i < v->nchildren; i++) bad += broken(v->children[i]);
  return bad;
}

/* Mark row i of v NULL after the fact (a ROW whose members keep values). */
static void set_null(dp_vector *v, int64_t i) {
  if (!v->validity) {
    v->validity = calloc((size_t)(v->capacity + 7) / 8, 1);
    for (int64_t k = 0; k < v->length; k++) dp_bit_set(v->validity, k, true);
  }
  if (dp_bit_get(v->validity, i)) v->null_count++;
  dp_bit_set(v->validity, i, false);
}

static dp_vector *ints(const dp_type *t, const char *const *rows, int n) {
  dp_vector *v = dp_vector_new(t, 0);
  for (int i = 0; i < n; i++) {
    if (!rows[i]) {
      dp_vector_append_null(v);
      continue;
    }
    dp_value x;
    CHECK(dp_value_parse(arena(), t, rows[i], strlen(rows[i]), &x));
    CHECK_EQ(dp_vector_append_value(v, &x), DIPPER_OK);
  }
  return v;
}

/* ---- exact results, layout by layout ---- */

TEST(fixed_width_every_layout) {
  static const char *const rows[] = {"1", NULL, "3", "4", "5"};
  const dp_type *types[] = {T(DP_T_TINYINT), T(DP_T_SMALLINT), T(DP_T_INT), T(DP_T_BIGINT),
                            T(DP_T_FLOAT),   T(DP_T_DOUBLE),   dp_type_decimal(arena(), 38, 2)};
  const char *want_sel[] = {"5 | 3 | NULL | NULL | 5 | 1",          "5 | 3 | NULL | NULL | 5 | 1",
                            "5 | 3 | NULL | NULL | 5 | 1",          "5 | 3 | NULL | NULL | 5 | 1",
                            ("CAST(5E0 AS FLOAT) | CAST(3E0 AS FLOAT) | NULL | NULL | "
                             "CAST(5E0 AS FLOAT) | CAST(1E0 AS FLOAT)"),
                            "5E0 | 3E0 | NULL | NULL | 5E0 | 1E0",
                            "5.00 | 3.00 | NULL | NULL | 5.00 | 1.00"};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    dp_vector *src = ints(types[t], rows, 5);
    dp_vector *dst = dp_vector_new(types[t], 1);
    int64_t sel[] = {4, 2, 1, -1, 4, 0};
    CHECK_EQ(dp_vector_take(dst, src, sel, 0, 6), DIPPER_OK);
    CHECK_STR(dump(dst), want_sel[t]);
    CHECK_EQ(dst->length, 6);
    CHECK_EQ(dst->null_count, 2);
    CHECK_EQ(broken(dst), 0);
    /* a run from a start, appended after the picks */
    CHECK_EQ(dp_vector_take(dst, src, NULL, 2, 3), DIPPER_OK);
    CHECK_EQ(dst->length, 9);
    CHECK_EQ(dst->null_count, 2);
    CHECK_EQ(broken(dst), 0);
    dp_vector_free(dst);
    dp_vector_free(src);
  }
  /* the zeroed slot of a negative index, as dp_vector_append_null writes it */
  dp_vector *src = ints(T(DP_T_BIGINT), rows, 5);
  dp_vector *dst = dp_vector_new(T(DP_T_BIGINT), 0);
  int64_t pad[] = {0, -7, 3};
  CHECK_EQ(dp_vector_take(dst, src, pad, 0, 3), DIPPER_OK);
  CHECK_EQ(((int64_t *)dst->values)[1], 0);
  CHECK_STR(dump(dst), "1 | NULL | 4");
  dp_vector_free(dst);
  dp_vector_free(src);
}

TEST(sel_from_a_start) {
  static const char *const rows[] = {"10", "11", NULL, "13"};
  dp_vector *src = ints(T(DP_T_INT), rows, 4);
  dp_vector *dst = dp_vector_new(T(DP_T_INT), 0);
  int64_t sel[] = {0, 0, 3, 2, 1, -1};
  /* sel[2..5): rows 3, 2, 1 */
  CHECK_EQ(dp_vector_take(dst, src, sel, 2, 3), DIPPER_OK);
  CHECK_STR(dump(dst), "13 | NULL | 11");
  /* sel NULL: rows 1..3 */
  CHECK_EQ(dp_vector_take(dst, src, NULL, 1, 3), DIPPER_OK);
  CHECK_STR(dump(dst), "13 | NULL | 11 | 11 | NULL | 13");
  CHECK_EQ(dst->null_count, 2);
  CHECK_EQ(broken(dst), 0);
  dp_vector_free(dst);
  dp_vector_free(src);
}

TEST(boolean_bits) {
  dp_vector *src = dp_vector_new(T(DP_T_BOOLEAN), 0);
  /* 21 rows: true when i % 3 == 0, NULL when i % 7 == 6 */
  for (int i = 0; i < 21; i++)
    CHECK_EQ(i % 7 == 6 ? dp_vector_append_null(src) : dp_vector_append_bool(src, i % 3 == 0),
             DIPPER_OK);
  dp_vector *dst = dp_vector_new(T(DP_T_BOOLEAN), 0);
  CHECK_EQ(dp_vector_append_bool(dst, true), DIPPER_OK); /* dst starts off byte alignment */
  int64_t sel[] = {0, 1, 2, 3, 6, -1, 9, 12, 13, 15, 18, 20, 19};
  CHECK_EQ(dp_vector_take(dst, src, sel, 0, 13), DIPPER_OK);
  CHECK_STR(dump(dst), "TRUE | TRUE | FALSE | FALSE | TRUE | NULL | NULL | TRUE | TRUE | NULL | "
                       "TRUE | TRUE | NULL | FALSE");
  CHECK_EQ(dst->null_count, 4);
  /* a run that starts mid-byte in the source and in the destination */
  CHECK_EQ(dp_vector_take(dst, src, NULL, 3, 17), DIPPER_OK);
  CHECK_STR(dump_from(dst, 14), "TRUE | FALSE | FALSE | NULL | FALSE | FALSE | TRUE | FALSE | "
                                "FALSE | TRUE | NULL | FALSE | TRUE | FALSE | FALSE | TRUE | "
                                "FALSE");
  CHECK_EQ(dst->null_count, 6);
  CHECK_EQ(broken(dst), 0);
  dp_vector_free(dst);
  dp_vector_free(src);
}

TEST(strings_and_bytes) {
  dp_vector *src = dp_vector_new(T(DP_T_STRING), 0);
  CHECK_EQ(dp_vector_append_str(src, "alpha", 5), DIPPER_OK);
  CHECK_EQ(dp_vector_append_str(src, "", 0), DIPPER_OK);
  CHECK_EQ(dp_vector_append_null(src), DIPPER_OK);
  CHECK_EQ(dp_vector_append_str(src, "gamma ray", 9), DIPPER_OK);
  dp_vector *dst = dp_vector_new(T(DP_T_STRING), 0);
  CHECK_EQ(dp_vector_append_str(dst, "kept", 4), DIPPER_OK);
  int64_t sel[] = {3, -1, 0, 2, 1, 3};
  CHECK_EQ(dp_vector_take(dst, src, sel, 0, 6), DIPPER_OK);
  CHECK_STR(dump(dst), "'kept' | 'gamma ray' | NULL | 'alpha' | NULL | '' | 'gamma ray'");
  CHECK_EQ(dst->null_count, 2);
  CHECK_EQ(dst->data_len, 4 + 9 + 5 + 9);
  CHECK_EQ(broken(dst), 0);
  CHECK_EQ(dp_vector_take(dst, src, NULL, 0, 4), DIPPER_OK);
  CHECK_STR(dump_from(dst, 7), "'alpha' | '' | NULL | 'gamma ray'");
  CHECK_EQ(broken(dst), 0);
  dp_vector_free(dst);
  dp_vector_free(src);

  dp_vector *bin = dp_vector_new(T(DP_T_BYTES), 0);
  CHECK_EQ(dp_vector_append_str(bin, "\x00\x01\xff", 3), DIPPER_OK);
  CHECK_EQ(dp_vector_append_str(bin, "\x7f", 1), DIPPER_OK);
  dp_vector *out = dp_vector_new(T(DP_T_BYTES), 0);
  int64_t two[] = {1, 0};
  CHECK_EQ(dp_vector_take(out, bin, two, 0, 2), DIPPER_OK);
  CHECK_EQ(out->data_len, 4);
  CHECK(memcmp(out->data, "\x7f\x00\x01\xff", 4) == 0);
  CHECK_EQ(out->offsets[1], 1);
  CHECK_EQ(out->offsets[2], 4);
  dp_vector_free(out);
  dp_vector_free(bin);
}

/* ROW<id INT, name STRING, tags ARRAY<INT>> with rows
**   0 {1, 'a', [1]}   1 NULL (members 2, 'b', [2, 2] kept under it)
**   2 {3, NULL, NULL} 3 NULL (members NULL) */
static dp_vector *row_fixture(const dp_type **type) {
  const dp_type *tags = dp_type_array(arena(), T(DP_T_INT));
  *type = dp_type_row(arena(), 3,
                      (dp_field[]){{"id", T(DP_T_INT)}, {"name", T(DP_T_STRING)}, {"tags", tags}});
  dp_vector *v = dp_vector_new(*type, 0);
  dp_vector *id = v->children[0], *name = v->children[1], *tg = v->children[2];
  /* row 0 */
  dp_vector_append_i64(id, 1);
  dp_vector_append_str(name, "a", 1);
  dp_vector_append_i64(tg->children[0], 1);
  dp_vector_append_list(tg);
  CHECK_EQ(dp_vector_append_struct(v), DIPPER_OK);
  /* row 1: a NULL ROW whose members hold values */
  dp_vector_append_i64(id, 2);
  dp_vector_append_str(name, "b", 1);
  dp_vector_append_i64(tg->children[0], 2);
  dp_vector_append_i64(tg->children[0], 2);
  dp_vector_append_list(tg);
  CHECK_EQ(dp_vector_append_struct(v), DIPPER_OK);
  set_null(v, 1);
  /* row 2 */
  dp_vector_append_i64(id, 3);
  dp_vector_append_null(name);
  dp_vector_append_null(tg);
  CHECK_EQ(dp_vector_append_struct(v), DIPPER_OK);
  /* row 3 */
  CHECK_EQ(dp_vector_append_null(v), DIPPER_OK);
  CHECK_EQ(broken(v), 0);
  return v;
}

TEST(row_with_null_rows) {
  const dp_type *t;
  dp_vector *src = row_fixture(&t);
  CHECK_STR(dump(src), "ROW(1, 'a', ARRAY[1]) | NULL | ROW(3, NULL, NULL) | NULL");
  dp_vector *dst = dp_vector_new(t, 0);
  int64_t sel[] = {2, 1, -1, 0, 3};
  CHECK_EQ(dp_vector_take(dst, src, sel, 0, 5), DIPPER_OK);
  CHECK_STR(dump(dst), "ROW(3, NULL, NULL) | NULL | NULL | ROW(1, 'a', ARRAY[1]) | NULL");
  CHECK_EQ(dst->null_count, 3);
  CHECK_EQ(broken(dst), 0);
  /* members are copied as they stand under a NULL ROW; padding nulls them */
  CHECK_STR(dump(dst->children[0]), "3 | 2 | NULL | 1 | NULL");
  CHECK_STR(dump(dst->children[2]), "NULL | ARRAY[2, 2] | NULL | ARRAY[1] | NULL");
  dp_vector_free(dst);

  /* every picked row a NULL ROW: members NULL wherever the ROW is are
  ** appended as NULLs, the others still gathered */
  dst = dp_vector_new(t, 0);
  int64_t nulls[] = {3, 1, -1};
  CHECK_EQ(dp_vector_take(dst, src, nulls, 0, 3), DIPPER_OK);
  CHECK_STR(dump(dst), "NULL | NULL | NULL");
  CHECK_EQ(dst->null_count, 3);
  CHECK_STR(dump(dst->children[0]), "NULL | 2 | NULL");
  CHECK_EQ(broken(dst), 0);
  dp_vector_free(dst);

  /* a ROW whose members are NULL wherever it is: the all-NULL shortcut */
  dp_vector *tidy = dp_vector_new(t, 0);
  int64_t drop_1[] = {0, 2, 3, 3};
  CHECK_EQ(dp_vector_take(tidy, src, drop_1, 0, 4), DIPPER_OK);
  dst = dp_vector_new(t, 0);
  int64_t only_nulls[] = {3, -2, 2, 3}; /* tidy's NULL ROWs and a padding row */
  CHECK_EQ(dp_vector_take(dst, tidy, only_nulls, 0, 2), DIPPER_OK);
  CHECK_EQ(dst->children[0]->null_count, 2);
  CHECK_EQ(dst->children[1]->null_count, 2);
  CHECK_EQ(dp_vector_take(dst, tidy, only_nulls, 2, 2), DIPPER_OK);
  CHECK_STR(dump(dst), "NULL | NULL | NULL | NULL");
  CHECK_EQ(dst->null_count, 4);
  CHECK_EQ(broken(dst), 0);
  dp_vector_free(dst);
  dp_vector_free(tidy);

  /* a run */
  dst = dp_vector_new(t, 0);
  CHECK_EQ(dp_vector_take(dst, src, NULL, 0, 4), DIPPER_OK);
  CHECK_STR(dump(dst), "ROW(1, 'a', ARRAY[1]) | NULL | ROW(3, NULL, NULL) | NULL");
  CHECK_EQ(broken(dst), 0);
  dp_vector_free(dst);
  dp_vector_free(src);
}

TEST(nested_lists_and_maps) {
  /* ARRAY<ARRAY<INT>>: ARRAY[ARRAY[1, 2], ARRAY[]], NULL, ARRAY[NULL, ARRAY[3]], [] */
  const dp_type *inner = dp_type_array(arena(), T(DP_T_INT));
  const dp_type *outer = dp_type_array(arena(), inner);
  dp_vector *src = dp_vector_new(outer, 0);
  dp_vector *in = src->children[0], *el = in->children[0];
  dp_vector_append_i64(el, 1);
  dp_vector_append_i64(el, 2);
  dp_vector_append_list(in);
  dp_vector_append_list(in);
  dp_vector_append_list(src);
  dp_vector_append_null(src);
  dp_vector_append_null(in);
  dp_vector_append_i64(el, 3);
  dp_vector_append_list(in);
  dp_vector_append_list(src);
  dp_vector_append_list(src);
  CHECK_STR(dump(src), "ARRAY[ARRAY[1, 2], ARRAY[]] | NULL | ARRAY[NULL, ARRAY[3]] | ARRAY[]");
  dp_vector *dst = dp_vector_new(outer, 0);
  int64_t sel[] = {2, 1, 0, -1, 3, 2};
  CHECK_EQ(dp_vector_take(dst, src, sel, 0, 6), DIPPER_OK);
  CHECK_STR(dump(dst), "ARRAY[NULL, ARRAY[3]] | NULL | ARRAY[ARRAY[1, 2], ARRAY[]] | NULL | "
                       "ARRAY[] | ARRAY[NULL, ARRAY[3]]");
  CHECK_EQ(dst->null_count, 2);
  CHECK_EQ(dst->children[0]->length, 6); /* NULL rows carry no elements */
  CHECK_EQ(broken(dst), 0);
  /* runs: with a NULL row in them, and without */
  CHECK_EQ(dp_vector_take(dst, src, NULL, 0, 3), DIPPER_OK);
  CHECK_EQ(dp_vector_take(dst, src, NULL, 2, 2), DIPPER_OK);
  CHECK_STR(dump_from(dst, 6), "ARRAY[ARRAY[1, 2], ARRAY[]] | NULL | ARRAY[NULL, ARRAY[3]] | "
                               "ARRAY[NULL, ARRAY[3]] | ARRAY[]");
  CHECK_EQ(broken(dst), 0);
  dp_vector_free(dst);
  /* a NULL row over elements (Arrow allows it): they are not copied */
  set_null(src, 0);
  dst = dp_vector_new(outer, 0);
  int64_t firsts[] = {0, 2, 0};
  CHECK_EQ(dp_vector_take(dst, src, firsts, 0, 3), DIPPER_OK);
  CHECK_EQ(dp_vector_take(dst, src, NULL, 0, 3), DIPPER_OK);
  CHECK_STR(dump(dst), "NULL | ARRAY[NULL, ARRAY[3]] | NULL | NULL | NULL | ARRAY[NULL, ARRAY[3]]");
  CHECK_EQ(dst->children[0]->length, 4);
  CHECK_EQ(broken(dst), 0);
  dp_vector_free(dst);
  dp_vector_free(src);

  /* MAP<STRING, ROW<x BIGINT>>: {a={1}, b=NULL}, {}, NULL */
  const dp_type *vt = dp_type_row(arena(), 1, (dp_field[]){{"x", T(DP_T_BIGINT)}});
  const dp_type *mt = dp_type_map(arena(), T(DP_T_STRING), vt);
  dp_vector *m = dp_vector_new(mt, 0);
  dp_vector *keys = dp_vector_map_keys(m), *vals = dp_vector_map_values(m);
  dp_vector_append_str(keys, "a", 1);
  dp_vector_append_i64(vals->children[0], 1);
  dp_vector_append_struct(vals);
  dp_vector_append_struct(m->children[0]);
  dp_vector_append_str(keys, "b", 1);
  dp_vector_append_null(vals);
  dp_vector_append_struct(m->children[0]);
  dp_vector_append_list(m);
  dp_vector_append_list(m);
  dp_vector_append_null(m);
  const char *first = fmt(m, 0);
  dp_vector *mo = dp_vector_new(mt, 0);
  int64_t msel[] = {2, 0, 1, 0, -1};
  CHECK_EQ(dp_vector_take(mo, m, msel, 0, 5), DIPPER_OK);
  char want[256];
  snprintf(want, sizeof want, "NULL | %s | %s | %s | NULL", first, fmt(m, 1), first);
  CHECK_STR(dump(mo), want);
  CHECK_EQ(mo->children[0]->length, 4);
  CHECK_EQ(mo->children[0]->null_count, 0); /* entries stay non-null */
  CHECK_EQ(broken(mo), 0);
  dp_vector_free(mo);
  dp_vector_free(m);
}

TEST(another_destination_layout) {
  static const char *const rows[] = {"7", NULL, "9"};
  dp_vector *src = ints(T(DP_T_BIGINT), rows, 3);
  /* a NULL-typed destination takes every row as NULL */
  dp_vector *nul = dp_vector_new(T(DP_T_NULL), 0);
  int64_t sel[] = {0, 1, -1, 2};
  CHECK_EQ(dp_vector_take(nul, src, sel, 0, 4), DIPPER_OK);
  CHECK_EQ(nul->length, 4);
  CHECK_EQ(nul->null_count, 4);
  /* a NULL-typed source gives NULLs to any column */
  dp_vector *strs = dp_vector_new(T(DP_T_STRING), 0);
  CHECK_EQ(dp_vector_take(strs, nul, NULL, 1, 2), DIPPER_OK);
  CHECK_STR(dump(strs), "NULL | NULL");
  CHECK_EQ(broken(strs), 0);
  /* BIGINT into STRING: NULL rows go (one at a time), a value is refused
  ** and leaves the rows taken before it */
  int64_t nulls_only[] = {1, -1};
  CHECK_EQ(dp_vector_take(strs, src, nulls_only, 0, 2), DIPPER_OK);
  CHECK_EQ(strs->length, 4);
  CHECK_EQ(dp_vector_take(strs, src, sel, 0, 4), DIPPER_MISUSE);
  CHECK_EQ(strs->length, 4);
  CHECK_EQ(broken(strs), 0);
  /* ROWs of another arity */
  const dp_type *r1 = dp_type_row(arena(), 1, (dp_field[]){{"a", T(DP_T_INT)}});
  const dp_type *r2 =
      dp_type_row(arena(), 2, (dp_field[]){{"a", T(DP_T_INT)}, {"b", T(DP_T_INT)}});
  dp_vector *one = dp_vector_new(r1, 0), *two = dp_vector_new(r2, 0);
  dp_vector_append_i64(one->children[0], 1);
  dp_vector_append_struct(one);
  CHECK_EQ(dp_vector_take(two, one, NULL, 0, 1), DIPPER_MISUSE);
  CHECK_EQ(two->length, 0);
  CHECK_EQ(broken(two), 0);
  dp_vector_free(one);
  dp_vector_free(two);
  dp_vector_free(strs);
  dp_vector_free(nul);
  dp_vector_free(src);
}

TEST(nothing_to_take) {
  static const char *const rows[] = {"1", NULL};
  dp_vector *src = ints(T(DP_T_INT), rows, 2);
  dp_vector *dst = dp_vector_new(T(DP_T_INT), 0);
  int64_t sel[] = {-1};
  CHECK_EQ(dp_vector_take(dst, src, sel, 0, 0), DIPPER_OK);
  CHECK_EQ(dp_vector_take(dst, src, NULL, 2, 0), DIPPER_OK);
  CHECK_EQ(dp_vector_take(dst, src, NULL, 0, -3), DIPPER_OK);
  CHECK_EQ(dst->length, 0);
  CHECK(dst->validity == NULL);
  CHECK_EQ(dp_vector_append_nulls(dst, 0), DIPPER_OK);
  CHECK_EQ(dst->length, 0);
  dp_vector_free(dst);
  dp_vector_free(src);
}

TEST(append_nulls_every_layout) {
  const dp_type *t;
  dp_vector *row = row_fixture(&t);
  CHECK_EQ(dp_vector_append_nulls(row, 11), DIPPER_OK);
  CHECK_EQ(row->length, 15);
  CHECK_EQ(row->null_count, 13);
  CHECK_EQ(row->children[2]->null_count, 13); /* 2 before */
  CHECK_STR(fmt(row, 14), "NULL");
  CHECK_EQ(broken(row), 0);
  dp_vector *b = dp_vector_new(T(DP_T_BOOLEAN), 0);
  dp_vector_append_bool(b, true);
  CHECK_EQ(dp_vector_append_nulls(b, 9), DIPPER_OK);
  dp_vector_append_bool(b, true);
  CHECK_STR(dump(b), "TRUE | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | TRUE");
  CHECK_EQ(broken(b), 0);
  dp_vector_free(b);
  dp_vector_free(row);
}

TEST(batch_take) {
  dp_schema *s = dp_arena_calloc(arena(), 1, sizeof *s);
  s->ncols = 2;
  s->cols = dp_arena_calloc(arena(), 2, sizeof *s->cols);
  s->cols[0] = (dp_field){"k", T(DP_T_BIGINT)};
  s->cols[1] = (dp_field){"v", T(DP_T_STRING)};
  dp_batch *in = dp_batch_new(s, 0), *out = dp_batch_new(s, 0);
  for (int i = 0; i < 5; i++) {
    dp_vector_append_i64(in->cols[0], i * 10);
    char txt[8];
    int len = snprintf(txt, sizeof txt, "r%d", i);
    dp_vector_append_str(in->cols[1], txt, (size_t)len);
  }
  CHECK_EQ(dp_batch_sync(in), DIPPER_OK);
  int64_t sel[] = {9, 4, -1, 0};
  CHECK_EQ(dp_batch_take(out, in, sel, 1, 3), DIPPER_OK);
  CHECK_EQ(out->nrows, 3);
  CHECK_STR(dump(out->cols[0]), "40 | NULL | 0");
  CHECK_STR(dump(out->cols[1]), "'r4' | NULL | 'r0'");
  CHECK_EQ(dp_batch_take(out, in, NULL, 3, 2), DIPPER_OK);
  CHECK_EQ(out->nrows, 5);
  CHECK_STR(dump(out->cols[1]), "'r4' | NULL | 'r0' | 'r3' | 'r4'");
  CHECK_EQ(dp_batch_take(out, in, NULL, 0, 0), DIPPER_OK);
  CHECK_EQ(out->nrows, 5);
  /* fewer source columns than the destination's: refused */
  dp_batch narrow = {s, 1, in->cols, 5};
  CHECK_EQ(dp_batch_take(out, &narrow, NULL, 0, 1), DIPPER_MISUSE);
  /* more: the destination's columns are taken */
  dp_vector *k = dp_vector_new(T(DP_T_BIGINT), 0);
  dp_batch kb = {NULL, 1, &k, 0};
  CHECK_EQ(dp_batch_take(&kb, in, NULL, 1, 2), DIPPER_OK);
  CHECK_EQ(kb.nrows, 2);
  CHECK_STR(dump(k), "10 | 20");
  /* no columns: only the row count moves */
  dp_batch none = {NULL, 0, NULL, 7};
  CHECK_EQ(dp_batch_take(&none, in, sel, 1, 3), DIPPER_OK);
  CHECK_EQ(none.nrows, 10);
  dp_vector_free(k);
  dp_batch_free(out);
  dp_batch_free(in);
}

/* ---- a seeded sweep against row-by-row reads ---- */

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint32_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 11);
}

/* One random row appended to v, NULL one time in `null_one_in` (never when
** 0); as many of the ROWs are made NULL over members that hold values, as
** expression results may be. */
static unsigned null_one_in = 4;
static int random_row(dp_vector *v) {
  if (null_one_in && next_rand() % null_one_in == 0) return dp_vector_append_null(v);
  switch (v->phys) {
  case DP_PHYS_BIT: return dp_vector_append_bool(v, next_rand() & 1);
  case DP_PHYS_I8:
  case DP_PHYS_I16:
  case DP_PHYS_I32:
  case DP_PHYS_I64:
    return dp_vector_append_i64(v, (int64_t)(next_rand() % 100) - 50);
  case DP_PHYS_F32:
  case DP_PHYS_F64: return dp_vector_append_f64(v, (double)(next_rand() % 64) / 4);
  case DP_PHYS_D128: return dp_vector_append_dec(v, (dp_i128)next_rand() * 1000003);
  case DP_PHYS_VARBIN: {
    char s[24];
    int len = (int)(next_rand() % 12);
    for (int i = 0; i < len; i++) s[i] = (char)('a' + next_rand() % 26);
    return dp_vector_append_str(v, s, (size_t)len);
  }
  case DP_PHYS_LIST: {
    int len = (int)(next_rand() % 4);
    dp_vector *elems = v->children[0];
    for (int i = 0; i < len; i++) {
      int rc;
      if (v->type->kind == DP_T_MAP) { /* entries are never NULL */
        rc = random_row(elems->children[0]);
        if (!rc) rc = random_row(elems->children[1]);
        if (!rc) rc = dp_vector_append_struct(elems);
      } else {
        rc = random_row(elems);
      }
      if (rc) return rc;
    }
    return dp_vector_append_list(v);
  }
  case DP_PHYS_STRUCT: {
    bool null_row = null_one_in && next_rand() % null_one_in == 0;
    for (int i = 0; i < v->nchildren; i++) {
      int rc = random_row(v->children[i]);
      if (rc) return rc;
    }
    int rc = dp_vector_append_struct(v);
    if (!rc && null_row) set_null(v, v->length - 1);
    return rc;
  }
  default: return dp_vector_append_null(v);
  }
}
/* n random rows of t. */
static dp_vector *random_vector(const dp_type *t, int64_t n) {
  dp_vector *v = dp_vector_new(t, 0);
  for (int64_t i = 0; i < n; i++) CHECK_EQ(random_row(v), DIPPER_OK);
  return v;
}

TEST(sweep_against_row_reads) {
  dp_arena *a = arena();
  const dp_type *row_t = dp_type_row(
      a, 3,
      (dp_field[]){
          {"b", T(DP_T_BOOLEAN)}, {"s", T(DP_T_STRING)}, {"l", dp_type_array(a, T(DP_T_INT))}});
  const dp_type *types[] = {
      T(DP_T_BOOLEAN), T(DP_T_TINYINT), T(DP_T_SMALLINT), T(DP_T_INT), T(DP_T_BIGINT),
      T(DP_T_FLOAT), T(DP_T_DOUBLE), dp_type_decimal(a, 30, 3), T(DP_T_STRING), T(DP_T_BYTES),
      dp_type_array(a, T(DP_T_STRING)), dp_type_map(a, T(DP_T_INT), T(DP_T_BOOLEAN)), row_t,
      dp_type_array(a, row_t), T(DP_T_NULL)};
  int compared = 0;
  for (size_t t = 0; t < 2 * (sizeof types / sizeof types[0]); t++) {
    /* each type twice: with NULLs at every level, then with none (the
    ** paths that skip bitmaps) */
    null_one_in = t < sizeof types / sizeof types[0] ? 4 : 0;
    dp_vector *src = random_vector(types[t % (sizeof types / sizeof types[0])], 64);
    CHECK_EQ(broken(src), 0);
    for (int trial = 0; trial < 40; trial++) {
      /* a destination that already holds 0..9 rows: every bit alignment */
      int64_t prefix = next_rand() % 10, n = next_rand() % 40, start = next_rand() % 24;
      bool by_sel = trial % 2 == 0, pad = trial % 4 == 0;
      dp_vector *dst = dp_vector_new(src->type, 0);
      CHECK_EQ(dp_vector_take(dst, src, NULL, 5, prefix), DIPPER_OK);
      int64_t sel[64];
      for (int64_t k = 0; k < start + n; k++)
        sel[k] = pad && next_rand() % 5 == 0 ? -1 : (int64_t)(next_rand() % 64);
      CHECK_EQ(dp_vector_take(dst, src, by_sel ? sel : NULL, start, n), DIPPER_OK);
      CHECK_EQ(dst->length, prefix + n);
      CHECK_EQ(broken(dst), 0);
      int bad = 0;
      for (int64_t k = 0; k < prefix; k++) bad += strcmp(fmt(dst, k), fmt(src, 5 + k)) != 0;
      for (int64_t k = 0; k < n; k++) {
        int64_t r = by_sel ? sel[start + k] : start + k;
        bad += strcmp(fmt(dst, prefix + k), r < 0 ? "NULL" : fmt(src, r)) != 0;
      }
      CHECK_EQ(bad, 0);
      compared += (int)(prefix + n);
      dp_vector_free(dst);
    }
    dp_vector_free(src);
  }
  CHECK(compared > 10000);
}

int main(void) {
  int rc = RUN_TESTS();
  dp_arena_free(A);
  return rc;
}
