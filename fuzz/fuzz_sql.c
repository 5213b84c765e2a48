/*
** fuzz_sql.c — libFuzzer target for the SQL front end: arbitrary bytes through
** dp_parse and dp_parse_type.
**
** Besides "no crash, no leak, no undefined behaviour" it checks what the rest
** of dipper relies on: every diagnostic and statement span lies inside the
** text, every node's span inside its parent's, a failed parse reports at
** least one error, and rendering each diagnostic works.  A broken invariant aborts, which the fuzzer reports.
*/
#include <stdint.h>
#include <stdlib.h>

#include "core/arena.h"
#include "core/diag.h"
#include "sql/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_span(dp_span s, size_t size) {
  if (s.line == 0) return; /* no place: out of memory, or a whole-text limit */
  if ((size_t)s.off + s.len > size || s.col == 0) abort();
}

/* Every node's span is non-empty and lies inside its parent's: the binder
** reports errors at them, so a stray span would underline the wrong text. */
static void inside(dp_span child, dp_span parent) {
  if (child.line == 0 || child.len == 0) abort();
  if (child.off < parent.off || child.off + child.len > parent.off + parent.len) abort();
}

static void walk_query(const dp_ast_query *q, dp_span parent);
static void walk_from(const dp_ast_from *f, dp_span parent);

static void walk_expr(const dp_ast_expr *e, dp_span parent) {
  if (!e) return;
  inside(e->span, parent);
  dp_span s = e->span;
  switch (e->kind) {
    case DP_AX_UNARY: walk_expr(e->u.unary.arg, s); break;
    case DP_AX_BINARY:
      walk_expr(e->u.binary.left, s);
      walk_expr(e->u.binary.right, s);
      break;
    case DP_AX_BETWEEN:
      walk_expr(e->u.between.arg, s);
      walk_expr(e->u.between.lo, s);
      walk_expr(e->u.between.hi, s);
      break;
    case DP_AX_IN_LIST:
      walk_expr(e->u.in_list.arg, s);
      for (int i = 0; i < e->u.in_list.n; i++) walk_expr(e->u.in_list.items[i], s);
      break;
    case DP_AX_IN_QUERY:
      walk_expr(e->u.in_query.arg, s);
      walk_query(e->u.in_query.query, s);
      break;
    case DP_AX_EXISTS:
    case DP_AX_SUBQUERY: walk_query(e->u.subquery.query, s); break;
    case DP_AX_IS:
      walk_expr(e->u.is.arg, s);
      walk_expr(e->u.is.other, s);
      break;
    case DP_AX_LIKE:
      walk_expr(e->u.like.arg, s);
      walk_expr(e->u.like.pattern, s);
      walk_expr(e->u.like.escape, s);
      break;
    case DP_AX_CASE:
      walk_expr(e->u.case_.operand, s);
      for (int i = 0; i < e->u.case_.n; i++) {
        walk_expr(e->u.case_.whens[i], s);
        walk_expr(e->u.case_.thens[i], s);
      }
      walk_expr(e->u.case_.else_, s);
      break;
    case DP_AX_CAST: walk_expr(e->u.cast.arg, s); break;
    case DP_AX_CALL:
      for (int i = 0; i < e->u.call.nargs; i++) walk_expr(e->u.call.args[i], s);
      for (int i = 0; i < e->u.call.npartition_by; i++) walk_expr(e->u.call.partition_by[i], s);
      walk_expr(e->u.call.filter, s);
      if (e->u.call.over) {
        const dp_ast_window *w = e->u.call.over;
        inside(w->span, s);
        for (int i = 0; i < w->npartition; i++) walk_expr(w->partition[i], w->span);
        for (int i = 0; i < w->norder; i++) walk_expr(w->order[i].expr, w->span);
      }
      break;
    case DP_AX_FIELD: walk_expr(e->u.field.arg, s); break;
    case DP_AX_SUBSCRIPT:
      walk_expr(e->u.subscript.arg, s);
      walk_expr(e->u.subscript.index, s);
      break;
    case DP_AX_EXTRACT: walk_expr(e->u.extract.arg, s); break;
    case DP_AX_CONSTRUCT:
      for (int i = 0; i < e->u.construct.n; i++) walk_expr(e->u.construct.items[i], s);
      break;
    default: break;
  }
}

static void walk_from(const dp_ast_from *f, dp_span parent) {
  if (!f) return;
  inside(f->span, parent);
  switch (f->kind) {
    case DP_AF_TABLE: walk_expr(f->u.table.as_of, f->span); break;
    case DP_AF_SUBQUERY: walk_query(f->u.subquery.query, f->span); break;
    case DP_AF_JOIN:
      walk_from(f->u.join.left, f->span);
      walk_from(f->u.join.right, f->span);
      walk_expr(f->u.join.on, f->span);
      break;
    case DP_AF_TVF: walk_expr(f->u.tvf.call, f->span); break;
    case DP_AF_UNNEST:
      for (int i = 0; i < f->u.unnest.n; i++) walk_expr(f->u.unnest.args[i], f->span);
      break;
    case DP_AF_VALUES:
      for (int i = 0; i < f->u.values.nrows * f->u.values.ncols; i++)
        walk_expr(f->u.values.cells[i], f->span);
      break;
  }
}

static void walk_query(const dp_ast_query *q, dp_span parent) {
  if (!q) return;
  inside(q->span, parent);
  dp_span s = q->span;
  for (int i = 0; i < q->nctes; i++) walk_query(q->ctes[i].query, s);
  walk_query(q->left, s);
  walk_query(q->right, s);
  walk_from(q->values, s);
  for (int i = 0; i < q->norder; i++) walk_expr(q->order[i].expr, s);
  walk_expr(q->limit, s);
  walk_expr(q->offset, s);
  const dp_ast_select *sel = q->select;
  if (!sel) return;
  inside(sel->span, s);
  for (int i = 0; i < sel->nitems; i++) walk_expr(sel->items[i].expr, sel->span);
  walk_from(sel->from, sel->span);
  walk_expr(sel->where, sel->span);
  for (int i = 0; i < sel->ngroup; i++) walk_expr(sel->group[i], sel->span);
  walk_expr(sel->having, sel->span);
  walk_expr(sel->qualify, sel->span);
}

static void walk_stmt(const dp_ast_stmt *st) {
  dp_span s = st->span;
  switch (st->kind) {
    case DP_AS_QUERY: walk_query(st->u.query, s); break;
    case DP_AS_INSERT: walk_query(st->u.insert.query, s); break;
    case DP_AS_CREATE_VIEW: walk_query(st->u.create_view.query, s); break;
    case DP_AS_CREATE_TABLE:
      walk_query(st->u.create_table.as_query, s);
      walk_expr(st->u.create_table.watermark_expr, s);
      for (int i = 0; i < st->u.create_table.ncols; i++) {
        inside(st->u.create_table.cols[i].span, s);
        walk_expr(st->u.create_table.cols[i].expr, st->u.create_table.cols[i].span);
      }
      break;
    case DP_AS_STATEMENT_SET:
      for (int i = 0; i < st->u.statement_set.n; i++) {
        inside(st->u.statement_set.inserts[i]->span, s);
        walk_stmt(st->u.statement_set.inserts[i]);
      }
      break;
    case DP_AS_EXPLAIN:
      inside(st->u.explain.stmt->span, s);
      walk_stmt(st->u.explain.stmt);
      break;
    default: break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  dp_arena *a = dp_arena_new(0);
  if (!a) return 0;
  dp_diags d;
  dp_diags_init(&d, a, "fuzz.sql", text, size);
  dp_ast_script *script = NULL;
  int rc = dp_parse(a, &d, text, size, &script);
  if (rc != DIPPER_OK && d.count == 0) abort();
  if (rc == DIPPER_OK && d.count != 0) abort();
  if (script) {
    for (int i = 0; i < script->n; i++) {
      check_span(script->stmts[i]->span, size);
      walk_stmt(script->stmts[i]);
    }
  }
  for (int i = 0; i < d.count; i++) {
    check_span(d.items[i].span, size);
    free(dp_diag_render(&d, &d.items[i]));
  }
  /* The same bytes as a type, as the C API would pass them. */
  dp_arena_reset(a);
  dp_diags_init(&d, a, "type", text, size);
  const dp_type *t = dp_parse_type(a, &d, text, size);
  if (!t && d.count == 0) abort();
  dp_arena_free(a);
  return 0;
}
