/*
** parser_test.c — the trees src/sql/parser.c builds, checked through a small
** S-expression printer (precedence shows as nesting), plus spans, every
** statement kind and every error path with its line:col.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/diag.h"
#include "core/types.h"
#include "sql/parser.h"
#include "test.h"

/* ------------------------------------------------------------ the printer */

static void pr_expr(dp_buf *b, const dp_ast_expr *e);
static void pr_query(dp_buf *b, const dp_ast_query *q);
static void pr_from(dp_buf *b, const dp_ast_from *f);

static void pr_name(dp_buf *b, const dp_ast_name *n) {
  for (int i = 0; i < n->n; i++) {
    if (i) dp_buf_putc(b, '.');
    if (n->parts[i].quoted) dp_buf_printf(b, "`%s`", n->parts[i].name);
    else dp_buf_puts(b, n->parts[i].name);
  }
}

static void pr_type(dp_buf *b, const dp_type *t) {
  char tmp[256];
  dp_type_print(tmp, sizeof tmp, t);
  dp_buf_puts(b, tmp);
}

static const char *unit_name(dp_time_unit u) {
#define UNIT_NAME_(n) #n,
  static const char *names[] = {"NONE", DP_TIME_UNITS(UNIT_NAME_)};
#undef UNIT_NAME_
  return names[u];
}

static void pr_list(dp_buf *b, int n, dp_ast_expr *const *items) {
  for (int i = 0; i < n; i++) {
    dp_buf_putc(b, ' ');
    pr_expr(b, items[i]);
  }
}

static void pr_order(dp_buf *b, int n, const dp_ast_order *o) {
  for (int i = 0; i < n; i++) {
    dp_buf_printf(b, " (%s ", o[i].desc ? "desc" : "asc");
    pr_expr(b, o[i].expr);
    if (o[i].nulls) dp_buf_puts(b, o[i].nulls == 1 ? " nulls-first" : " nulls-last");
    dp_buf_putc(b, ')');
  }
}

static void pr_bound(dp_buf *b, const dp_ast_bound *bd) {
  static const char *names[] = {"unbounded-preceding", "preceding", "current-row", "following",
                                "unbounded-following"};
  if (bd->offset) {
    dp_buf_printf(b, "(%s ", names[bd->kind]);
    pr_expr(b, bd->offset);
    dp_buf_putc(b, ')');
  } else {
    dp_buf_puts(b, names[bd->kind]);
  }
}

static void pr_window(dp_buf *b, const dp_ast_window *w) {
  dp_buf_puts(b, "(over");
  if (w->ref_name) dp_buf_printf(b, " %s", w->ref_name);
  if (w->npartition) {
    dp_buf_puts(b, " (partition");
    pr_list(b, w->npartition, w->partition);
    dp_buf_putc(b, ')');
  }
  if (w->norder) {
    dp_buf_puts(b, " (order");
    pr_order(b, w->norder, w->order);
    dp_buf_putc(b, ')');
  }
  if (w->has_frame) {
    dp_buf_printf(b, " (%s ", w->rows ? "rows" : "range");
    pr_bound(b, &w->start);
    dp_buf_putc(b, ' ');
    pr_bound(b, &w->end);
    dp_buf_putc(b, ')');
  }
  dp_buf_putc(b, ')');
}

static void pr_expr(dp_buf *b, const dp_ast_expr *e) {
  static const char *binops[] = {"OR", "AND", "=", "<>", "<", "<=", ">", ">=", "+",
                                 "-", "*", "/", "%", "||", "&", "|", "^"};
  static const char *unops[] = {"-", "+", "NOT", "~"};
  switch (e->kind) {
    case DP_AX_LITERAL:
      switch (e->u.lit.kind) {
        case DP_LIT_NULL: dp_buf_puts(b, "NULL"); break;
        case DP_LIT_TRUE: dp_buf_puts(b, "TRUE"); break;
        case DP_LIT_FALSE: dp_buf_puts(b, "FALSE"); break;
        case DP_LIT_INTEGER: dp_buf_puts(b, e->u.lit.text); break;
        case DP_LIT_DECIMAL: dp_buf_printf(b, "%sd", e->u.lit.text); break;
        case DP_LIT_FLOAT: dp_buf_printf(b, "%sf", e->u.lit.text); break;
        case DP_LIT_STRING: dp_buf_printf(b, "'%s'", e->u.lit.text); break;
        case DP_LIT_BINARY: dp_buf_printf(b, "X'%s'", e->u.lit.text); break;
        case DP_LIT_DATE: dp_buf_printf(b, "DATE'%s'", e->u.lit.text); break;
        case DP_LIT_TIME: dp_buf_printf(b, "TIME'%s'", e->u.lit.text); break;
        case DP_LIT_TIMESTAMP: dp_buf_printf(b, "TIMESTAMP'%s'", e->u.lit.text); break;
        case DP_LIT_TIMESTAMP_LTZ: dp_buf_printf(b, "TIMESTAMP_LTZ'%s'", e->u.lit.text); break;
      }
      break;
    case DP_AX_INTERVAL:
      dp_buf_printf(b, "(interval %s'%s'", e->u.interval.negative ? "-" : "", e->u.interval.text);
      if (e->u.interval.unit) dp_buf_printf(b, " %s", unit_name(e->u.interval.unit));
      if (e->u.interval.to_unit) dp_buf_printf(b, " TO %s", unit_name(e->u.interval.to_unit));
      if (e->u.interval.precision) dp_buf_printf(b, " p%d", e->u.interval.precision);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_COLUMN: pr_name(b, &e->u.name); break;
    case DP_AX_STAR:
      if (e->u.star.qualifier.n) {
        pr_name(b, &e->u.star.qualifier);
        dp_buf_putc(b, '.');
      }
      dp_buf_putc(b, '*');
      break;
    case DP_AX_UNARY:
      dp_buf_printf(b, "(%s ", unops[e->u.unary.op]);
      pr_expr(b, e->u.unary.arg);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_BINARY:
      dp_buf_printf(b, "(%s ", binops[e->u.binary.op]);
      pr_expr(b, e->u.binary.left);
      dp_buf_putc(b, ' ');
      pr_expr(b, e->u.binary.right);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_BETWEEN:
      dp_buf_printf(b, "(%sbetween%s ", e->u.between.negated ? "not-" : "",
                    e->u.between.symmetric ? "-symmetric" : "");
      pr_expr(b, e->u.between.arg);
      dp_buf_putc(b, ' ');
      pr_expr(b, e->u.between.lo);
      dp_buf_putc(b, ' ');
      pr_expr(b, e->u.between.hi);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_IN_LIST:
      dp_buf_printf(b, "(%sin ", e->u.in_list.negated ? "not-" : "");
      pr_expr(b, e->u.in_list.arg);
      pr_list(b, e->u.in_list.n, e->u.in_list.items);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_IN_QUERY:
      dp_buf_printf(b, "(%sin ", e->u.in_query.negated ? "not-" : "");
      pr_expr(b, e->u.in_query.arg);
      dp_buf_putc(b, ' ');
      pr_query(b, e->u.in_query.query);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_EXISTS:
      dp_buf_printf(b, "(%sexists ", e->u.subquery.negated ? "not-" : "");
      pr_query(b, e->u.subquery.query);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_SUBQUERY:
      dp_buf_puts(b, "(scalar ");
      pr_query(b, e->u.subquery.query);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_IS: {
      static const char *what[] = {"null", "true", "false", "unknown", "distinct-from"};
      dp_buf_printf(b, "(is-%s%s ", e->u.is.negated ? "not-" : "", what[e->u.is.what]);
      pr_expr(b, e->u.is.arg);
      if (e->u.is.other) {
        dp_buf_putc(b, ' ');
        pr_expr(b, e->u.is.other);
      }
      dp_buf_putc(b, ')');
      break;
    }
    case DP_AX_LIKE: {
      static const char *what[] = {"like", "similar", "rlike"};
      dp_buf_printf(b, "(%s%s ", e->u.like.negated ? "not-" : "", what[e->u.like.kind]);
      pr_expr(b, e->u.like.arg);
      dp_buf_putc(b, ' ');
      pr_expr(b, e->u.like.pattern);
      if (e->u.like.escape) {
        dp_buf_puts(b, " escape ");
        pr_expr(b, e->u.like.escape);
      }
      dp_buf_putc(b, ')');
      break;
    }
    case DP_AX_CASE:
      dp_buf_puts(b, "(case");
      if (e->u.case_.operand) {
        dp_buf_putc(b, ' ');
        pr_expr(b, e->u.case_.operand);
      }
      for (int i = 0; i < e->u.case_.n; i++) {
        dp_buf_puts(b, " (when ");
        pr_expr(b, e->u.case_.whens[i]);
        dp_buf_putc(b, ' ');
        pr_expr(b, e->u.case_.thens[i]);
        dp_buf_putc(b, ')');
      }
      if (e->u.case_.else_) {
        dp_buf_puts(b, " (else ");
        pr_expr(b, e->u.case_.else_);
        dp_buf_putc(b, ')');
      }
      dp_buf_putc(b, ')');
      break;
    case DP_AX_CAST:
      dp_buf_printf(b, "(%s ", e->u.cast.try_ ? "try_cast" : "cast");
      pr_expr(b, e->u.cast.arg);
      dp_buf_putc(b, ' ');
      pr_type(b, e->u.cast.type);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_CALL:
      dp_buf_puts(b, "(call ");
      pr_name(b, &e->u.call.name);
      if (e->u.call.distinct) dp_buf_puts(b, " distinct");
      if (e->u.call.star) dp_buf_puts(b, " *");
      for (int i = 0; i < e->u.call.nargs; i++) {
        dp_buf_putc(b, ' ');
        if (e->u.call.arg_names && e->u.call.arg_names[i])
          dp_buf_printf(b, "%s=>", e->u.call.arg_names[i]);
        if (e->u.call.table_arg && e->u.call.table_arg[i]) {
          dp_buf_puts(b, "(table ");
          pr_expr(b, e->u.call.args[i]);
          dp_buf_putc(b, ')');
        } else {
          pr_expr(b, e->u.call.args[i]);
        }
      }
      if (e->u.call.npartition_by) {
        dp_buf_puts(b, " (partition");
        pr_list(b, e->u.call.npartition_by, e->u.call.partition_by);
        dp_buf_putc(b, ')');
      }
      if (e->u.call.filter) {
        dp_buf_puts(b, " (filter ");
        pr_expr(b, e->u.call.filter);
        dp_buf_putc(b, ')');
      }
      if (e->u.call.over) {
        dp_buf_putc(b, ' ');
        pr_window(b, e->u.call.over);
      }
      dp_buf_putc(b, ')');
      break;
    case DP_AX_FIELD:
      dp_buf_puts(b, "(. ");
      pr_expr(b, e->u.field.arg);
      dp_buf_printf(b, " %s)", e->u.field.field.name);
      break;
    case DP_AX_SUBSCRIPT:
      dp_buf_puts(b, "([] ");
      pr_expr(b, e->u.subscript.arg);
      dp_buf_putc(b, ' ');
      pr_expr(b, e->u.subscript.index);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_EXTRACT:
      dp_buf_printf(b, "(extract %s ", unit_name(e->u.extract.unit));
      pr_expr(b, e->u.extract.arg);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_DESCRIPTOR:
      dp_buf_puts(b, "(descriptor");
      for (int i = 0; i < e->u.descriptor.n; i++)
        dp_buf_printf(b, " %s", e->u.descriptor.cols[i].name);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_CONSTRUCT:
      dp_buf_puts(b, e->u.construct.kind == 'A'   ? "(array"
                     : e->u.construct.kind == 'M' ? "(map"
                                                  : "(row");
      pr_list(b, e->u.construct.n, e->u.construct.items);
      dp_buf_putc(b, ')');
      break;
    case DP_AX_PARAM: dp_buf_putc(b, '?'); break;
  }
}

static void pr_alias(dp_buf *b, const dp_ast_alias *a) {
  if (!a->name.name) return;
  dp_buf_printf(b, " as %s", a->name.name);
  if (a->ncols) {
    dp_buf_puts(b, "(");
    for (int i = 0; i < a->ncols; i++) dp_buf_printf(b, "%s%s", i ? " " : "", a->cols[i].name);
    dp_buf_puts(b, ")");
  }
}

static void pr_from(dp_buf *b, const dp_ast_from *f) {
  static const char *joins[] = {"join", "left-join", "right-join", "full-join",
                                "cross-join", "semi-join", "anti-join", "comma"};
  switch (f->kind) {
    case DP_AF_TABLE:
      dp_buf_puts(b, "(table ");
      pr_name(b, &f->u.table.name);
      if (f->u.table.as_of) {
        dp_buf_puts(b, " (as-of ");
        pr_expr(b, f->u.table.as_of);
        dp_buf_putc(b, ')');
      }
      break;
    case DP_AF_SUBQUERY:
      dp_buf_puts(b, f->u.subquery.lateral ? "(lateral " : "(subquery ");
      pr_query(b, f->u.subquery.query);
      break;
    case DP_AF_JOIN:
      dp_buf_printf(b, "(%s%s%s ", f->u.join.natural ? "natural-" : "", f->u.join.asof ? "asof-" : "",
                    joins[f->u.join.kind]);
      pr_from(b, f->u.join.left);
      dp_buf_putc(b, ' ');
      pr_from(b, f->u.join.right);
      if (f->u.join.match) {
        dp_buf_puts(b, " (match ");
        pr_expr(b, f->u.join.match);
        dp_buf_putc(b, ')');
      }
      if (f->u.join.on) {
        dp_buf_puts(b, " (on ");
        pr_expr(b, f->u.join.on);
        dp_buf_putc(b, ')');
      }
      if (f->u.join.nusing) {
        dp_buf_puts(b, " (using");
        for (int i = 0; i < f->u.join.nusing; i++) dp_buf_printf(b, " %s", f->u.join.using_[i].name);
        dp_buf_putc(b, ')');
      }
      if (f->u.join.tolerance) {
        dp_buf_puts(b, " (tolerance ");
        pr_expr(b, f->u.join.tolerance);
        dp_buf_putc(b, ')');
      }
      break;
    case DP_AF_TVF:
      dp_buf_puts(b, f->u.tvf.lateral ? "(lateral-tvf " : "(tvf ");
      pr_expr(b, f->u.tvf.call);
      break;
    case DP_AF_UNNEST:
      dp_buf_puts(b, "(unnest");
      pr_list(b, f->u.unnest.n, f->u.unnest.args);
      if (f->u.unnest.with_ordinality) dp_buf_puts(b, " ordinality");
      break;
    case DP_AF_VALUES:
      dp_buf_puts(b, "(values");
      for (int r = 0; r < f->u.values.nrows; r++) {
        dp_buf_puts(b, " (");
        for (int c = 0; c < f->u.values.ncols; c++) {
          if (c) dp_buf_putc(b, ' ');
          pr_expr(b, f->u.values.cells[r * f->u.values.ncols + c]);
        }
        dp_buf_putc(b, ')');
      }
      break;
  }
  pr_alias(b, &f->alias);
  dp_buf_putc(b, ')');
}

static void pr_select(dp_buf *b, const dp_ast_select *s) {
  dp_buf_puts(b, s->distinct ? "(select-distinct" : "(select");
  for (int i = 0; i < s->nitems; i++) {
    dp_buf_putc(b, ' ');
    pr_expr(b, s->items[i].expr);
    if (s->items[i].alias.name) dp_buf_printf(b, " as %s", s->items[i].alias.name);
  }
  if (s->from) {
    dp_buf_puts(b, " (from ");
    pr_from(b, s->from);
    dp_buf_putc(b, ')');
  }
  if (s->where) {
    dp_buf_puts(b, " (where ");
    pr_expr(b, s->where);
    dp_buf_putc(b, ')');
  }
  if (s->ngroup) {
    dp_buf_puts(b, " (group");
    pr_list(b, s->ngroup, s->group);
    dp_buf_putc(b, ')');
  }
  if (s->having) {
    dp_buf_puts(b, " (having ");
    pr_expr(b, s->having);
    dp_buf_putc(b, ')');
  }
  for (int i = 0; i < s->nwindows; i++) {
    dp_buf_printf(b, " (window %s ", s->windows[i].name.name);
    pr_window(b, s->windows[i].window);
    dp_buf_putc(b, ')');
  }
  if (s->qualify) {
    dp_buf_puts(b, " (qualify ");
    pr_expr(b, s->qualify);
    dp_buf_putc(b, ')');
  }
  dp_buf_putc(b, ')');
}

static void pr_query(dp_buf *b, const dp_ast_query *q) {
  static const char *ops[] = {"", "union", "intersect", "except"};
  int close = 0;
  if (q->nctes) {
    dp_buf_puts(b, "(with");
    for (int i = 0; i < q->nctes; i++) {
      dp_buf_printf(b, " (%s ", q->ctes[i].name.name);
      pr_query(b, q->ctes[i].query);
      dp_buf_putc(b, ')');
    }
    dp_buf_putc(b, ' ');
    close++;
  }
  if (q->norder || q->limit || q->offset) {
    dp_buf_puts(b, "(tail ");
    close++;
  }
  if (q->op != DP_SET_NONE) {
    dp_buf_printf(b, "(%s%s ", ops[q->op], q->all ? "-all" : "");
    pr_query(b, q->left);
    dp_buf_putc(b, ' ');
    pr_query(b, q->right);
    dp_buf_putc(b, ')');
  } else if (q->select) {
    pr_select(b, q->select);
  } else if (q->values) {
    pr_from(b, q->values);
  }
  if (q->norder) {
    dp_buf_puts(b, " (order");
    pr_order(b, q->norder, q->order);
    dp_buf_putc(b, ')');
  }
  if (q->limit) {
    dp_buf_puts(b, " (limit ");
    pr_expr(b, q->limit);
    dp_buf_putc(b, ')');
  }
  if (q->offset) {
    dp_buf_puts(b, " (offset ");
    pr_expr(b, q->offset);
    dp_buf_putc(b, ')');
  }
  while (close--) dp_buf_putc(b, ')');
}

/* ------------------------------------------------------------- harness */

typedef struct parsed {
  dp_arena *arena;
  dp_diags diags;
  dp_ast_script *script;
  int code;
  char out[8192];
} parsed;

static parsed P;

static void reset(void) {
  if (P.arena) dp_arena_free(P.arena);
  memset(&P, 0, sizeof P);
  P.arena = dp_arena_new(0);
}

static int parse(const char *sql) {
  reset();
  dp_diags_init(&P.diags, P.arena, "t.sql", sql, strlen(sql));
  P.code = dp_parse(P.arena, &P.diags, sql, strlen(sql), &P.script);
  return P.code;
}

static const dp_ast_stmt *stmt0(const char *sql) {
  if (parse(sql) != DIPPER_OK || P.script->n < 1) {
    fprintf(stderr, "unexpected parse failure for: %s\n", sql);
    for (int i = 0; i < P.diags.count; i++)
      fprintf(stderr, "  %u:%u: %s\n", P.diags.items[i].span.line, P.diags.items[i].span.col,
              P.diags.items[i].message);
    return NULL;
  }
  return P.script->stmts[0];
}

static void keep(dp_buf *b) {
  snprintf(P.out, sizeof P.out, "%s", dp_buf_cstr(b));
  dp_buf_free(b);
}

/* The S-expression of `SELECT <expr>`'s single item. */
static const char *expr(const char *text) {
  char sql[2048];
  snprintf(sql, sizeof sql, "SELECT %s", text);
  const dp_ast_stmt *s = stmt0(sql);
  if (!s) return "(parse failed)";
  dp_buf b = DP_BUF_INIT;
  if (s->kind != DP_AS_QUERY || !s->u.query->select || s->u.query->select->nitems != 1)
    return "(not one item)";
  pr_expr(&b, s->u.query->select->items[0].expr);
  keep(&b);
  return P.out;
}

static const char *query(const char *sql) {
  const dp_ast_stmt *s = stmt0(sql);
  if (!s) return "(parse failed)";
  if (s->kind != DP_AS_QUERY) return "(not a query)";
  dp_buf b = DP_BUF_INIT;
  pr_query(&b, s->u.query);
  keep(&b);
  return P.out;
}

/* "line:col: message" of the first diagnostic, after a parse that must fail. */
static const char *error_of(const char *sql) {
  if (parse(sql) == DIPPER_OK || P.diags.count == 0) return "(no error)";
  const dp_diag *g = &P.diags.items[0];
  snprintf(P.out, sizeof P.out, "%u:%u: %s", g->span.line, g->span.col, g->message);
  return P.out;
}

/* The text a span covers. */
static const char *text_of(const char *sql, dp_span s) {
  static char buf[512];
  snprintf(buf, sizeof buf, "%.*s", (int)s.len, sql + s.off);
  return buf;
}

/* ------------------------------------------------------------ expressions */

TEST(precedence) {
  CHECK_STR(expr("1 + 2 * 3"), "(+ 1 (* 2 3))");
  CHECK_STR(expr("(1 + 2) * 3"), "(* (+ 1 2) 3)");
  CHECK_STR(expr("1 - 2 - 3"), "(- (- 1 2) 3)");
  CHECK_STR(expr("a OR b AND c"), "(OR a (AND b c))");
  CHECK_STR(expr("NOT a = b AND c"), "(AND (NOT (= a b)) c)");
  CHECK_STR(expr("NOT NOT a"), "(NOT (NOT a))");
  CHECK_STR(expr("a = 1 OR b <> 2 AND c >= 3"), "(OR (= a 1) (AND (<> b 2) (>= c 3)))");
  CHECK_STR(expr("a || b || c"), "(|| (|| a b) c)");
  CHECK_STR(expr("a + b || c"), "(|| (+ a b) c)");
  CHECK_STR(expr("a * b || c"), "(|| (* a b) c)");
  CHECK_STR(expr("-a * b"), "(* (- a) b)");
  CHECK_STR(expr("- - a"), "(- (- a))");
  CHECK_STR(expr("a % 2 = 0"), "(= (% a 2) 0)");
  CHECK_STR(expr("a | b & c = d"), "(= (| a (& b c)) d)");
  CHECK_STR(expr("a ^ b | c"), "(| (^ a b) c)");
  CHECK_STR(expr("~a + 1"), "(+ (~ a) 1)");
  CHECK_STR(expr("a != b"), "(<> a b)");
  CHECK_STR(expr("a < b = TRUE"), "(= (< a b) TRUE)");
  CHECK_STR(expr("a + 1 BETWEEN 2 AND 3 AND b"), "(AND (between (+ a 1) 2 3) b)");
  CHECK_STR(expr("a.b.c[1].d::INT"), "(cast (. ([] a.b.c 1) d) INT)");
  CHECK_STR(expr("-a.b[2]"), "(- ([] a.b 2))");
}

TEST(predicates) {
  CHECK_STR(expr("a NOT BETWEEN SYMMETRIC 1 AND 2"), "(not-between-symmetric a 1 2)");
  CHECK_STR(expr("a IN (1, 2, 3)"), "(in a 1 2 3)");
  CHECK_STR(expr("a NOT IN ('x')"), "(not-in a 'x')");
  CHECK_STR(expr("a IN (SELECT b FROM t)"), "(in a (select b (from (table t))))");
  CHECK_STR(expr("EXISTS (SELECT 1)"), "(exists (select 1))");
  CHECK_STR(expr("NOT EXISTS (SELECT 1)"), "(not-exists (select 1))");
  CHECK_STR(expr("(SELECT max(x) FROM t)"), "(scalar (select (call max x) (from (table t))))");
  CHECK_STR(expr("a IS NULL"), "(is-null a)");
  CHECK_STR(expr("a IS NOT NULL AND b IS TRUE"), "(AND (is-not-null a) (is-true b))");
  CHECK_STR(expr("a IS NOT FALSE"), "(is-not-false a)");
  CHECK_STR(expr("a IS UNKNOWN"), "(is-unknown a)");
  CHECK_STR(expr("a IS DISTINCT FROM b + 1"), "(is-distinct-from a (+ b 1))");
  CHECK_STR(expr("a IS NOT DISTINCT FROM b"), "(is-not-distinct-from a b)");
  CHECK_STR(expr("a <=> b"), "(is-not-distinct-from a b)");
  CHECK_STR(expr("a LIKE 'x%' ESCAPE '!'"), "(like a 'x%' escape '!')");
  CHECK_STR(expr("a NOT LIKE 'x'"), "(not-like a 'x')");
  CHECK_STR(expr("a SIMILAR TO 'x'"), "(similar a 'x')");
  CHECK_STR(expr("a RLIKE '^x' OR b"), "(OR (rlike a '^x') b)");
  CHECK_STR(expr("a NOT RLIKE 'x'"), "(not-rlike a 'x')");
}

TEST(literals) {
  CHECK_STR(expr("42"), "42");
  CHECK_STR(expr("12.50"), "12.50d");
  CHECK_STR(expr("1.5e3"), "1.5e3f");
  CHECK_STR(expr("'it''s'"), "'it's'");
  CHECK_STR(expr("X'0AFF'"), "X'0AFF'");
  CHECK_STR(expr("NULL"), "NULL");
  CHECK_STR(expr("true"), "TRUE");
  CHECK_STR(expr("DATE '2024-01-01'"), "DATE'2024-01-01'");
  CHECK_STR(expr("TIME '12:00:00'"), "TIME'12:00:00'");
  CHECK_STR(expr("TIMESTAMP '2024-01-01 00:00:00'"), "TIMESTAMP'2024-01-01 00:00:00'");
  CHECK_STR(expr("TIMESTAMP_LTZ '2024-01-01 00:00:00Z'"), "TIMESTAMP_LTZ'2024-01-01 00:00:00Z'");
  CHECK_STR(expr("?"), "?");
  CHECK_STR(expr("ARRAY[1, 2]"), "(array 1 2)");
  CHECK_STR(expr("MAP['a', 1, 'b', 2]"), "(map 'a' 1 'b' 2)");
  CHECK_STR(expr("ROW(1, 'x')"), "(row 1 'x')");
  CHECK_STR(expr("(1, 'x')"), "(row 1 'x')");
  CHECK_STR(expr("m['k']"), "([] m 'k')");
}

TEST(intervals) {
  CHECK_STR(expr("INTERVAL '5' SECOND"), "(interval '5' SECOND)");
  CHECK_STR(expr("INTERVAL '10' MINUTES"), "(interval '10' MINUTE)");
  CHECK_STR(expr("INTERVAL '1 02:00' DAY TO MINUTE"), "(interval '1 02:00' DAY TO MINUTE)");
  CHECK_STR(expr("INTERVAL '5' SECOND(3)"), "(interval '5' SECOND p3)");
  CHECK_STR(expr("INTERVAL -'5' hour"), "(interval -'5' HOUR)");
  CHECK_STR(expr("INTERVAL '10 seconds'"), "(interval '10 seconds')");
  CHECK_STR(expr("INTERVAL 10 SECONDS"), "(interval '10 SECONDS')");
  CHECK_STR(expr("INTERVAL 1 HOUR 30 minutes"), "(interval '1 HOUR 30 minutes')");
  CHECK_STR(expr("ts - INTERVAL '5' SECOND"), "(- ts (interval '5' SECOND))");
  CHECK_STR(expr("INTERVAL '2' YEAR TO MONTH"), "(interval '2' YEAR TO MONTH)");
}

TEST(calls_and_special_forms) {
  CHECK_STR(expr("count(*)"), "(call count *)");
  CHECK_STR(expr("COUNT(DISTINCT a, b)"), "(call COUNT distinct a b)");
  CHECK_STR(expr("f()"), "(call f)");
  CHECK_STR(expr("db.f(1)"), "(call db.f 1)");
  CHECK_STR(expr("sum(x) FILTER (WHERE x > 0)"), "(call sum x (filter (> x 0)))");
  CHECK_STR(expr("CURRENT_TIMESTAMP"), "(call CURRENT_TIMESTAMP)");
  CHECK_STR(expr("current_date + 1"), "(+ (call current_date) 1)");
  CHECK_STR(expr("LOCALTIMESTAMP"), "(call LOCALTIMESTAMP)");
  CHECK_STR(expr("LEFT(s, 2)"), "(call LEFT s 2)");
  CHECK_STR(expr("RIGHT(s, 2)"), "(call RIGHT s 2)");
  CHECK_STR(expr("IF(a, 1, 2)"), "(call IF a 1 2)");
  CHECK_STR(expr("PROCTIME()"), "(call PROCTIME)");
  CHECK_STR(expr("POSITION('b' IN s)"), "(call POSITION 'b' s)");
  CHECK_STR(expr("position('b', s)"), "(call position 'b' s)");
  CHECK_STR(expr("SUBSTRING(s FROM 2 FOR 3)"), "(call SUBSTRING s 2 3)");
  CHECK_STR(expr("SUBSTRING(s FROM 2)"), "(call SUBSTRING s 2)");
  CHECK_STR(expr("substring(s, 2, 3)"), "(call substring s 2 3)");
  CHECK_STR(expr("TRIM(BOTH 'x' FROM s)"), "(call TRIM s 'x')");
  CHECK_STR(expr("TRIM(LEADING FROM s)"), "(call LTRIM s)");
  CHECK_STR(expr("TRIM(TRAILING 'x' FROM s)"), "(call RTRIM s 'x')");
  CHECK_STR(expr("TRIM('x' FROM s)"), "(call TRIM s 'x')");
  CHECK_STR(expr("TRIM(s)"), "(call TRIM s)");
  CHECK_STR(expr("TRIM(both)"), "(call TRIM both)");
  CHECK_STR(expr("POSITION(a IN (1, 2) IN s)"), "(call POSITION (in a 1 2) s)");
  CHECK_STR(expr("SUBSTRING(s, 1)"), "(call SUBSTRING s 1)");
  CHECK_STR(expr("POSITION(x, POSITION(y IN z))"), "(call POSITION x (call POSITION y z))");
  CHECK_STR(expr("CAST(a AS BIGINT)"), "(cast a BIGINT)");
  CHECK_STR(expr("TRY_CAST(a AS DECIMAL(10, 2))"), "(try_cast a DECIMAL(10, 2))");
  CHECK_STR(expr("a::STRING"), "(cast a STRING)");
  CHECK_STR(expr("EXTRACT(YEAR FROM ts)"), "(extract YEAR ts)");
  CHECK_STR(expr("EXTRACT(dow FROM ts)"), "(extract DOW ts)");
  CHECK_STR(expr("CASE WHEN a = 1 THEN 'x' WHEN a = 2 THEN 'y' ELSE 'z' END"),
            "(case (when (= a 1) 'x') (when (= a 2) 'y') (else 'z'))");
  CHECK_STR(expr("CASE a WHEN 1 THEN 2 END"), "(case a (when 1 2))");
  CHECK_STR(expr("f(x).field"), "(. (call f x) field)");
  CHECK_STR(expr("t.*"), "t.*");
  CHECK_STR(expr("*"), "*");
  CHECK_STR(expr("DESCRIPTOR(ts, b)"), "(descriptor ts b)");
  CHECK_STR(expr("ROW_NUMBER() OVER (PARTITION BY a, b ORDER BY ts DESC NULLS LAST)"),
            "(call ROW_NUMBER (over (partition a b) (order (desc ts nulls-last))))");
  CHECK_STR(expr("sum(x) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND "
                 "CURRENT ROW)"),
            "(call sum x (over (order (asc ts)) (range (preceding (interval '1' HOUR)) "
            "current-row)))");
  CHECK_STR(expr("sum(x) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND "
                 "UNBOUNDED FOLLOWING)"),
            "(call sum x (over (partition k) (order (asc ts)) (rows unbounded-preceding "
            "unbounded-following)))");
  CHECK_STR(expr("sum(x) OVER (ORDER BY ts ROWS 5 PRECEDING)"),
            "(call sum x (over (order (asc ts)) (rows (preceding 5) current-row)))");
  CHECK_STR(expr("sum(x) OVER (ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING)"),
            "(call sum x (over (rows (preceding 1) (following 2))))");
  CHECK_STR(expr("sum(x) OVER w"), "(call sum x (over w))");
  CHECK_STR(expr("sum(x) OVER (w ORDER BY y)"), "(call sum x (over w (order (asc y))))");
}

TEST(keywords_as_names) {
  CHECK_STR(expr("timestamp"), "timestamp");
  CHECK_STR(expr("t.window"), "t.window");
  CHECK_STR(expr("`order`"), "`order`");
  CHECK_STR(expr("value + key"), "(+ value key)");
  CHECK_STR(expr("date"), "date");
  CHECK_STR(expr("time"), "time");
  CHECK_STR(expr("t.end"), "t.end");
  CHECK_STR(query("SELECT offset, partition, window FROM t"),
            "(select offset partition window (from (table t)))");
  CHECK_STR(query("SELECT a value FROM t"), "(select a as value (from (table t)))");
  CHECK_STR(query("SELECT \"My Col\" FROM t"), "(select `My Col` (from (table t)))");
}

/* ---------------------------------------------------------------- queries */

TEST(select_clauses) {
  CHECK_STR(query("SELECT DISTINCT a AS x, b y FROM t WHERE a > 1 GROUP BY a, b HAVING "
                  "count(*) > 1"),
            "(select-distinct a as x b as y (from (table t)) (where (> a 1)) (group a b) "
            "(having (> (call count *) 1)))");
  CHECK_STR(query("SELECT ALL 1"), "(select 1)");
  CHECK_STR(query("SELECT a FROM t QUALIFY ROW_NUMBER() OVER (ORDER BY a) = 1"),
            "(select a (from (table t)) (qualify (= (call ROW_NUMBER (over (order (asc a)))) "
            "1)))");
  CHECK_STR(query("SELECT sum(x) OVER w FROM t WINDOW w AS (PARTITION BY k ORDER BY ts)"),
            "(select (call sum x (over w)) (from (table t)) (window w (over (partition k) "
            "(order (asc ts)))))");
  CHECK_STR(query("SELECT a FROM t window"), "(select a (from (table t as window)))");
}

TEST(set_operations_and_tails) {
  CHECK_STR(query("SELECT 1 UNION ALL SELECT 2 UNION SELECT 3"),
            "(union (union-all (select 1) (select 2)) (select 3))");
  CHECK_STR(query("SELECT 1 UNION SELECT 2 INTERSECT SELECT 3"),
            "(union (select 1) (intersect (select 2) (select 3)))");
  CHECK_STR(query("SELECT 1 EXCEPT DISTINCT SELECT 2"), "(except (select 1) (select 2))");
  CHECK_STR(query("(SELECT 1 UNION SELECT 2) INTERSECT ALL SELECT 3"),
            "(intersect-all (union (select 1) (select 2)) (select 3))");
  CHECK_STR(query("SELECT a FROM t ORDER BY a DESC, b NULLS FIRST LIMIT 10 OFFSET 5"),
            "(tail (select a (from (table t))) (order (desc a) (asc b nulls-first)) "
            "(limit 10) (offset 5))");
  CHECK_STR(query("SELECT a FROM t OFFSET 5 ROWS FETCH FIRST 10 ROWS ONLY"),
            "(tail (select a (from (table t))) (limit 10) (offset 5))");
  CHECK_STR(query("SELECT a FROM t FETCH NEXT 1 ROW ONLY"),
            "(tail (select a (from (table t))) (limit 1))");
  CHECK_STR(query("SELECT 1 UNION SELECT 2 ORDER BY 1"),
            "(tail (union (select 1) (select 2)) (order (asc 1)))");
  CHECK_STR(query("(SELECT a FROM t LIMIT 5) ORDER BY a"),
            "(tail (select * (from (subquery (tail (select a (from (table t))) (limit 5))))) "
            "(order (asc a)))");
  CHECK_STR(query("WITH x AS (SELECT 1), y (c) AS (SELECT 2) SELECT * FROM x, y"),
            "(with (x (select 1)) (y (select 2)) (select * (from (comma (table x) (table y)))))");
  CHECK_STR(query("VALUES (1, 'a'), (2, 'b')"), "(values (1 'a') (2 'b'))");
  CHECK_STR(query("VALUES 1, 2"), "(values (1) (2))");
}

TEST(from_clause) {
  CHECK_STR(query("SELECT * FROM cat.db.t AS x(a, b)"),
            "(select * (from (table cat.db.t as x(a b))))");
  CHECK_STR(query("SELECT * FROM a JOIN b ON a.k = b.k LEFT OUTER JOIN c USING (k)"),
            "(select * (from (left-join (join (table a) (table b) (on (= a.k b.k))) (table c) "
            "(using k))))");
  CHECK_STR(query("SELECT * FROM a RIGHT JOIN b ON TRUE FULL OUTER JOIN c ON TRUE"),
            "(select * (from (full-join (right-join (table a) (table b) (on TRUE)) (table c) "
            "(on TRUE))))");
  CHECK_STR(query("SELECT * FROM a CROSS JOIN b NATURAL JOIN c"),
            "(select * (from (natural-join (cross-join (table a) (table b)) (table c))))");
  CHECK_STR(query("SELECT * FROM a LEFT SEMI JOIN b ON a.x = b.x LEFT ANTI JOIN c ON TRUE"),
            "(select * (from (anti-join (semi-join (table a) (table b) (on (= a.x b.x))) "
            "(table c) (on TRUE))))");
  CHECK_STR(query("SELECT * FROM a INNER JOIN (b JOIN c ON TRUE) ON TRUE"),
            "(select * (from (join (table a) (join (table b) (table c) (on TRUE)) (on TRUE))))");
  CHECK_STR(query("SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts AS r2 ON o.k = r2.k"),
            "(select * (from (join (table o) (table r (as-of o.ts) as r2) (on (= o.k r2.k)))))");
  CHECK_STR(query("SELECT * FROM (SELECT 1) s"),
            "(select * (from (subquery (select 1) as s)))");
  CHECK_STR(query("SELECT * FROM (VALUES (1, 'a')) AS t(a, b)"),
            "(select * (from (values (1 'a') as t(a b))))");
  CHECK_STR(query("SELECT * FROM t, LATERAL (SELECT t.a) u"),
            "(select * (from (comma (table t) (lateral (select t.a) as u))))");
  CHECK_STR(query("SELECT * FROM t, LATERAL TABLE(split(t.s)) AS x(w)"),
            "(select * (from (comma (table t) (lateral-tvf (call split t.s) as x(w)))))");
  CHECK_STR(query("SELECT * FROM t LEFT JOIN LATERAL TABLE(f(x)) ON TRUE"),
            "(select * (from (left-join (table t) (lateral-tvf (call f x)) (on TRUE))))");
  CHECK_STR(query("SELECT * FROM t CROSS JOIN UNNEST(t.arr) AS u(x)"),
            "(select * (from (cross-join (table t) (unnest t.arr as u(x)))))");
  CHECK_STR(query("SELECT * FROM UNNEST(a) WITH ORDINALITY"),
            "(select * (from (unnest a ordinality)))");
}

TEST(asof_joins) {
  CHECK_STR(query("SELECT * FROM l ASOF JOIN r MATCH_CONDITION (l.t >= r.t) ON l.k = r.k"),
            "(select * (from (asof-join (table l) (table r) (match (>= l.t r.t)) (on (= l.k r.k)))))");
  CHECK_STR(query("SELECT * FROM l ASOF LEFT OUTER JOIN r x MATCH_CONDITION (l.t < x.t) USING (k)"
                  " TOLERANCE INTERVAL '5' SECOND"),
            "(select * (from (asof-left-join (table l) (table r as x) (match (< l.t x.t)) (using k) "
            "(tolerance (interval '5' SECOND)))))");
  CHECK_STR(query("SELECT * FROM l ASOF JOIN r ON l.k = r.k AND l.t <= r.t TOLERANCE 3"),
            "(select * (from (asof-join (table l) (table r) (on (AND (= l.k r.k) (<= l.t r.t))) "
            "(tolerance 3))))");
  CHECK_STR(query("SELECT * FROM l ASOF JOIN r MATCH_CONDITION (l.t > r.t)"),
            "(select * (from (asof-join (table l) (table r) (match (> l.t r.t)))))");
  /* asof is a name wherever no JOIN follows it */
  CHECK_STR(query("SELECT asof FROM t AS asof"), "(select asof (from (table t as asof)))");
}

TEST(window_tvfs) {
  CHECK_STR(query("SELECT window_start, count(*) FROM TABLE(TUMBLE(TABLE bids, "
                  "DESCRIPTOR(ts), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end"),
            "(select window_start (call count *) (from (tvf (call TUMBLE (table bids) "
            "(descriptor ts) (interval '10' MINUTE)))) (group window_start window_end))");
  CHECK_STR(query("SELECT * FROM TABLE(HOP(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), "
                  "SLIDE => INTERVAL '1' MINUTE, SIZE => INTERVAL '5' MINUTE))"),
            "(select * (from (tvf (call HOP DATA=>(table t) TIMECOL=>(descriptor ts) "
            "SLIDE=>(interval '1' MINUTE) SIZE=>(interval '5' MINUTE)))))");
  CHECK_STR(query("SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), "
                  "INTERVAL '5' MINUTE))"),
            "(select * (from (tvf (call SESSION (table t) (descriptor ts) (interval '5' "
            "MINUTE) (partition k)))))");
  CHECK_STR(query("SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY (k1, k2), "
                  "DESCRIPTOR(ts), INTERVAL '5' MINUTE))"),
            "(select * (from (tvf (call SESSION (table t) (descriptor ts) (interval '5' "
            "MINUTE) (partition k1 k2)))))");
  CHECK_STR(query("SELECT * FROM CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE, "
                  "INTERVAL '1' HOUR) AS w"),
            "(select * (from (tvf (call CUMULATE (table t) (descriptor ts) (interval '1' "
            "MINUTE) (interval '1' HOUR)) as w)))");
  CHECK_STR(query("SELECT count(*) FROM t GROUP BY TUMBLE(ts, INTERVAL '1' HOUR), "
                  "window(ts, '1 minute', '30 seconds'), session_window(ts, '5 minutes')"),
            "(select (call count *) (from (table t)) (group (call TUMBLE ts (interval '1' "
            "HOUR)) (call window ts '1 minute' '30 seconds') (call session_window ts "
            "'5 minutes')))");
}

/* ------------------------------------------------------------------ spans */

TEST(spans_are_exact) {
  const char *sql = "SELECT a + b AS s, f(x)\nFROM t AS u\n  WHERE x > 1\nORDER BY s DESC\n"
                    "LIMIT 3";
  const dp_ast_stmt *s = stmt0(sql);
  if (!s) {
    CHECK(false);
    return;
  }
  const dp_ast_query *q = s->u.query;
  CHECK_STR(text_of(sql, s->span), sql);
  CHECK_STR(text_of(sql, q->span), sql);
  CHECK_STR(text_of(sql, q->order_span), "ORDER BY s DESC");
  CHECK_EQ(q->order_span.line, 4);
  CHECK_EQ(q->order_span.col, 1);
  CHECK_STR(text_of(sql, q->order[0].span), "s DESC");
  CHECK_STR(text_of(sql, q->limit_span), "LIMIT 3");
  const dp_ast_select *sel = q->select;
  CHECK_STR(text_of(sql, sel->items[0].span), "a + b AS s");
  CHECK_STR(text_of(sql, sel->items[0].expr->span), "a + b");
  CHECK_STR(text_of(sql, sel->items[0].alias.span), "s");
  CHECK_STR(text_of(sql, sel->items[1].expr->span), "f(x)");
  CHECK_STR(text_of(sql, sel->from->span), "t AS u");
  CHECK_EQ(sel->from->span.line, 2);
  CHECK_EQ(sel->from->span.col, 6);
  CHECK_STR(text_of(sql, sel->where->span), "x > 1");
  CHECK_EQ(sel->where->span.line, 3);
  CHECK_EQ(sel->where->span.col, 9);
  CHECK_STR(text_of(sql, sel->span), "SELECT a + b AS s, f(x)\nFROM t AS u\n  WHERE x > 1");

  sql = "SELECT (a + b) * c, t.x.y, CAST(z AS INT), -q FROM t GROUP BY t.x, y";
  s = stmt0(sql);
  if (!s) {
    CHECK(false);
    return;
  }
  sel = s->u.query->select;
  const dp_ast_expr *mul = sel->items[0].expr;
  CHECK_STR(text_of(sql, mul->span), "(a + b) * c");
  CHECK_STR(text_of(sql, mul->u.binary.left->span), "(a + b)");
  CHECK(mul->u.binary.left->parens);
  CHECK(!mul->parens);
  const dp_ast_expr *col = sel->items[1].expr;
  CHECK_EQ(col->u.name.n, 3);
  CHECK_STR(text_of(sql, col->u.name.span), "t.x.y");
  CHECK_STR(text_of(sql, col->u.name.parts[2].span), "y");
  CHECK_STR(text_of(sql, sel->items[2].expr->u.cast.type_span), "INT");
  CHECK_STR(text_of(sql, sel->items[3].expr->span), "-q");
  CHECK_STR(text_of(sql, sel->group_span), "GROUP BY t.x, y");

  sql = "CREATE VIEW v AS SELECT 1 UNION SELECT 2;";
  s = stmt0(sql);
  if (!s) {
    CHECK(false);
    return;
  }
  CHECK_STR(text_of(sql, s->span), "CREATE VIEW v AS SELECT 1 UNION SELECT 2");
  CHECK_STR(text_of(sql, s->u.create_view.query_span), "SELECT 1 UNION SELECT 2");
}

/* ------------------------------------------------------------- statements */

TEST(create_table_full) {
  const char *sql =
      "CREATE TEMPORARY TABLE IF NOT EXISTS cat.db.orders (\n"
      "  id BIGINT NOT NULL,\n"
      "  price DECIMAL(10, 2),\n"
      "  name VARCHAR(20) COMMENT 'the name',\n"
      "  ts TIMESTAMP(3),\n"
      "  lts TIMESTAMP(3) WITH LOCAL TIME ZONE,\n"
      "  tags ARRAY<STRING>,\n"
      "  attrs MAP<STRING, ROW<a INT, b DOUBLE PRECISION>>,\n"
      "  r ROW(x INT, y STRING),\n"
      "  `offset` BIGINT METADATA VIRTUAL,\n"
      "  kts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',\n"
      "  proc AS PROCTIME(),\n"
      "  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,\n"
      "  PRIMARY KEY (id) NOT ENFORCED\n"
      ") COMMENT 'orders' PARTITIONED BY (name) WITH (\n"
      "  'connector' = 'kafka', 'topic' = 'o''s'\n"
      ")";
  const dp_ast_stmt *s = stmt0(sql);
  if (!s) {
    CHECK(false);
    return;
  }
  CHECK_EQ(s->kind, DP_AS_CREATE_TABLE);
  const dp_ast_create_table *ct = &s->u.create_table;
  CHECK(ct->temporary);
  CHECK(ct->if_not_exists);
  CHECK_EQ(ct->name.n, 3);
  CHECK_EQ(ct->ncols, 11);
  char buf[256];
  const char *want[] = {"BIGINT NOT NULL", "DECIMAL(10, 2)", "VARCHAR(20)", "TIMESTAMP(3)",
                        "TIMESTAMP_LTZ(3)", "ARRAY<STRING>",
                        "MAP<STRING, ROW<a INT, b DOUBLE>>", "ROW<x INT, y STRING>", "BIGINT",
                        "TIMESTAMP_LTZ(3)"};
  for (int i = 0; i < 10; i++) {
    dp_type_print(buf, sizeof buf, ct->cols[i].type);
    CHECK_STR(buf, want[i]);
  }
  CHECK_STR(text_of(sql, ct->cols[1].type_span), "DECIMAL(10, 2)");
  CHECK_STR(ct->cols[2].comment, "the name");
  CHECK_EQ(ct->cols[0].kind, DP_COL_PHYSICAL);
  CHECK_EQ(ct->cols[8].kind, DP_COL_METADATA);
  CHECK_STR(ct->cols[8].name.name, "offset");
  CHECK(ct->cols[8].name.quoted);
  CHECK(ct->cols[8].is_virtual);
  CHECK(ct->cols[8].metadata_key == NULL);
  CHECK_EQ(ct->cols[9].kind, DP_COL_METADATA);
  CHECK_STR(ct->cols[9].metadata_key, "timestamp");
  CHECK(!ct->cols[9].is_virtual);
  CHECK_EQ(ct->cols[10].kind, DP_COL_COMPUTED);
  CHECK(ct->cols[10].type == NULL);
  CHECK_EQ(ct->cols[10].expr->kind, DP_AX_CALL);
  CHECK_STR(text_of(sql, ct->cols[10].span), "proc AS PROCTIME()");
  CHECK(ct->has_watermark);
  CHECK_STR(ct->watermark_col.name, "ts");
  CHECK_STR(text_of(sql, ct->watermark_expr->span), "ts - INTERVAL '5' SECOND");
  CHECK_STR(text_of(sql, ct->watermark_span), "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND");
  CHECK_EQ(ct->watermark_span.line, 13);
  CHECK_EQ(ct->npk, 1);
  CHECK_STR(ct->pk[0].name, "id");
  CHECK(!ct->pk_enforced);
  CHECK_STR(text_of(sql, ct->pk_span), "PRIMARY KEY (id) NOT ENFORCED");
  CHECK_STR(ct->comment, "orders");
  CHECK_EQ(ct->npartition, 1);
  CHECK_EQ(ct->options.n, 2);
  CHECK_STR(ct->options.items[0].key, "connector");
  CHECK_STR(ct->options.items[0].value, "kafka");
  CHECK_STR(ct->options.items[1].value, "o's");
  CHECK_STR(text_of(sql, ct->options.items[1].span), "'topic' = 'o''s'");
  CHECK_STR(text_of(sql, ct->options.items[1].value_span), "'o''s'");
  CHECK(ct->as_query == NULL);
  CHECK_EQ(ct->like.n, 0);
}

TEST(create_table_variants) {
  const dp_ast_stmt *s = stmt0("CREATE TABLE t (k STRING PRIMARY KEY NOT ENFORCED, v INT) "
                               "WITH ('connector' = 'memory') LIKE base");
  if (s) {
    CHECK(s->u.create_table.cols[0].primary_key);
    CHECK_EQ(s->u.create_table.npk, 1);
    CHECK_STR(s->u.create_table.pk[0].name, "k");
    CHECK_EQ(s->u.create_table.like.n, 1);
    CHECK(!s->u.create_table.temporary);
  }
  s = stmt0("CREATE TABLE t (a INT, CONSTRAINT pk PRIMARY KEY (a, b))");
  if (s) {
    CHECK_EQ(s->u.create_table.npk, 2);
    CHECK(s->u.create_table.pk_enforced);
  }
  s = stmt0("CREATE TABLE t (watermark INT, primary STRING, `key` INT, comment STRING)");
  if (s) {
    CHECK_EQ(s->u.create_table.ncols, 4);
    CHECK_STR(s->u.create_table.cols[0].name.name, "watermark");
    CHECK_STR(s->u.create_table.cols[1].name.name, "primary");
    CHECK(!s->u.create_table.has_watermark);
    CHECK_EQ(s->u.create_table.npk, 0);
  }
  s = stmt0("CREATE TABLE t2 (b INT) LIKE t (EXCLUDING ALL INCLUDING WATERMARKS OVERWRITING OPTIONS)");
  if (s) {
    CHECK_EQ(s->u.create_table.nlike_options, 3);
    CHECK_EQ(s->u.create_table.like_options[0].mode, DP_LIKE_EXCLUDING);
    CHECK_EQ(s->u.create_table.like_options[0].feature, DP_LIKE_ALL);
    CHECK_EQ(s->u.create_table.like_options[1].feature, DP_LIKE_WATERMARKS);
    CHECK_EQ(s->u.create_table.like_options[2].mode, DP_LIKE_OVERWRITING);
  }
  s = stmt0("CREATE DATABASE IF NOT EXISTS cat.db COMMENT 'x'");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_CREATE_DATABASE);
    CHECK_EQ(s->u.namespace_.name.n, 2);
    CHECK(s->u.namespace_.if_not_exists);
    CHECK_STR(s->u.namespace_.comment, "x");
  }
  s = stmt0("CREATE CATALOG c WITH ('type' = 'generic_in_memory')");
  if (s) CHECK_EQ(s->kind, DP_AS_CREATE_CATALOG);
  s = stmt0("DROP DATABASE IF EXISTS db CASCADE");
  if (s) {
    CHECK_EQ(s->u.drop.what, 'D');
    CHECK(s->u.drop.cascade);
  }
  s = stmt0("USE CATALOG c");
  if (s) CHECK(s->u.use.catalog);
  s = stmt0("SHOW TABLES FROM cat.db NOT LIKE 'a%'");
  if (s) {
    CHECK_EQ(s->u.show.what, 'T');
    CHECK_EQ(s->u.show.name.n, 2);
    CHECK(s->u.show.not_like);
    CHECK_STR(s->u.show.like, "a%");
  }
  s = stmt0("SHOW CURRENT DATABASE");
  if (s) CHECK_EQ(s->u.show.what, 'd');
  s = stmt0("ALTER TABLE IF EXISTS t RESET ('a', 'b')");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_ALTER_TABLE);
    CHECK_EQ(s->u.alter.action, 'R');
    CHECK_EQ(s->u.alter.nkeys, 2);
  }
  s = stmt0("ALTER TABLE t RENAME TO db.u");
  if (s) CHECK_EQ(s->u.alter.new_name.n, 2);
  s = stmt0("CREATE TABLE s WITH ('connector' = 'blackhole') AS SELECT * FROM t");
  if (s) {
    CHECK(s->u.create_table.as_query != NULL);
    CHECK_EQ(s->u.create_table.options.n, 1);
  }
  s = stmt0("CREATE TABLE t (i INTERVAL DAY TO SECOND, j INTERVAL YEAR TO MONTH, "
            "c CHAR(3), b BYTES, vb VARBINARY(4), bo BOOLEAN, f FLOAT, r REAL, ti TINYINT, "
            "si SMALLINT, it INTEGER, d DATE, tm TIME(0), ts TIMESTAMP, st STRING NULL)");
  if (s) {
    const dp_ast_create_table *ct = &s->u.create_table;
    CHECK_EQ(ct->ncols, 15);
    CHECK_EQ(ct->cols[0].type->kind, DP_T_INTERVAL_DT);
    CHECK_EQ(ct->cols[1].type->kind, DP_T_INTERVAL_YM);
    CHECK_EQ(ct->cols[2].type->kind, DP_T_STRING);
    CHECK_EQ(ct->cols[2].type->length, 3);
    CHECK_EQ(ct->cols[3].type->kind, DP_T_BYTES);
    CHECK_EQ(ct->cols[4].type->length, 4);
    CHECK_EQ(ct->cols[5].type->kind, DP_T_BOOLEAN);
    CHECK_EQ(ct->cols[7].type->kind, DP_T_FLOAT);
    CHECK_EQ(ct->cols[8].type->kind, DP_T_TINYINT);
    CHECK_EQ(ct->cols[10].type->kind, DP_T_INT);
    CHECK_EQ(ct->cols[12].type->kind, DP_T_TIME);
    CHECK_EQ(ct->cols[13].type->kind, DP_T_TIMESTAMP);
    CHECK_EQ(ct->cols[13].type->precision, 6); /* Flink's default */
    CHECK(!ct->cols[14].type->not_null);
  }
}

TEST(other_ddl) {
  const char *sql = "CREATE OR REPLACE TEMPORARY VIEW IF NOT EXISTS v (a, b) AS SELECT 1, 2";
  const dp_ast_stmt *s = stmt0(sql);
  if (s) {
    CHECK_EQ(s->kind, DP_AS_CREATE_VIEW);
    CHECK(s->u.create_view.or_replace);
    CHECK(s->u.create_view.temporary);
    CHECK(s->u.create_view.if_not_exists);
    CHECK_EQ(s->u.create_view.ncols, 2);
    CHECK_STR(text_of(sql, s->u.create_view.query_span), "SELECT 1, 2");
  }
  s = stmt0("CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS f AS 'com.x.F' LANGUAGE JAVA");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_CREATE_FUNCTION);
    CHECK(s->u.create_function.temporary);
    CHECK(s->u.create_function.system);
    CHECK(s->u.create_function.if_not_exists);
    CHECK_STR(s->u.create_function.class_name, "com.x.F");
    CHECK_STR(s->u.create_function.language, "JAVA");
  }
  s = stmt0("DROP TEMPORARY VIEW IF EXISTS db.v");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_DROP);
    CHECK_EQ(s->u.drop.what, 'V');
    CHECK(s->u.drop.if_exists);
    CHECK(s->u.drop.temporary);
    CHECK_EQ(s->u.drop.name.n, 2);
  }
  s = stmt0("DROP TABLE t");
  if (s) {
    CHECK_EQ(s->u.drop.what, 'T');
    CHECK(!s->u.drop.if_exists);
  }
  s = stmt0("DROP FUNCTION f");
  if (s) CHECK_EQ(s->u.drop.what, 'F');
}

TEST(set_and_reset) {
  const char *sql = "SET 'execution.runtime-mode' = 'batch'";
  const dp_ast_stmt *s = stmt0(sql);
  if (s) {
    CHECK_EQ(s->kind, DP_AS_SET);
    CHECK_STR(s->u.set.key, "execution.runtime-mode");
    CHECK_STR(s->u.set.value, "batch");
    CHECK_STR(text_of(sql, s->u.set.key_span), "'execution.runtime-mode'");
    CHECK_STR(text_of(sql, s->u.set.value_span), "'batch'");
  }
  sql = "SET execution.runtime-mode = batch;";
  s = stmt0(sql);
  if (s) {
    CHECK_STR(s->u.set.key, "execution.runtime-mode");
    CHECK_STR(s->u.set.value, "batch");
  }
  s = stmt0("SET dipper.trigger = processing-time 10 s");
  if (s) CHECK_STR(s->u.set.value, "processing-time 10 s");
  s = stmt0("SET table.exec.state.ttl = 1h");
  if (s) CHECK_STR(s->u.set.value, "1h");
  s = stmt0("SET");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_SET);
    CHECK(s->u.set.key == NULL);
  }
  s = stmt0("RESET 'a.b'");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_RESET);
    CHECK_STR(s->u.set.key, "a.b");
    CHECK(s->u.set.value == NULL);
  }
  s = stmt0("RESET");
  if (s) CHECK(s->u.set.key == NULL);
  s = stmt0("RESET pipeline.name");
  if (s) CHECK_STR(s->u.set.key, "pipeline.name");
}

TEST(insert_and_statement_sets) {
  const dp_ast_stmt *s = stmt0("INSERT INTO db.sink PARTITION (dt = '2024-01-01', h = 3) "
                               "(a, b) SELECT x, y FROM t");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_INSERT);
    CHECK(!s->u.insert.overwrite);
    CHECK_EQ(s->u.insert.table.n, 2);
    CHECK_EQ(s->u.insert.npartition, 2);
    CHECK_STR(s->u.insert.partition[0].key, "dt");
    CHECK_STR(s->u.insert.partition[0].value, "2024-01-01");
    CHECK_STR(s->u.insert.partition[1].value, "3");
    CHECK_EQ(s->u.insert.ncols, 2);
    CHECK(s->u.insert.query->select != NULL);
  }
  s = stmt0("INSERT OVERWRITE t (SELECT 1)");
  if (s) {
    CHECK(s->u.insert.overwrite);
    CHECK_EQ(s->u.insert.ncols, 0);
  }
  s = stmt0("INSERT INTO t VALUES (1), (2)");
  if (s) CHECK(s->u.insert.query->values != NULL);

  const char *sql = "EXECUTE STATEMENT SET BEGIN\n INSERT INTO a SELECT 1;\n INSERT INTO b "
                    "SELECT 2;\nEND;\nSELECT 3";
  if (parse(sql) == DIPPER_OK) {
    CHECK_EQ(P.script->n, 2);
    s = P.script->stmts[0];
    CHECK_EQ(s->kind, DP_AS_STATEMENT_SET);
    CHECK_EQ(s->u.statement_set.n, 2);
    CHECK_EQ(s->u.statement_set.inserts[1]->kind, DP_AS_INSERT);
    CHECK_STR(text_of(sql, s->u.statement_set.inserts[1]->span), "INSERT INTO b SELECT 2");
    CHECK_STR(text_of(sql, s->span),
              "EXECUTE STATEMENT SET BEGIN\n INSERT INTO a SELECT 1;\n INSERT INTO b SELECT "
              "2;\nEND");
    CHECK_EQ(P.script->stmts[1]->kind, DP_AS_QUERY);
  } else {
    CHECK(false);
  }
  if (parse("BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\nINSERT INTO b SELECT 2;\nEND;") ==
      DIPPER_OK) {
    CHECK_EQ(P.script->n, 1);
    CHECK_EQ(P.script->stmts[0]->kind, DP_AS_STATEMENT_SET);
    CHECK_EQ(P.script->stmts[0]->u.statement_set.n, 2);
  } else {
    CHECK(false);
  }
  s = stmt0("EXECUTE INSERT INTO a SELECT 1");
  if (s) CHECK_EQ(s->kind, DP_AS_INSERT);
}

TEST(explain_use_show_describe) {
  const dp_ast_stmt *s = stmt0("EXPLAIN CHANGELOG_MODE SELECT 1");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_EXPLAIN);
    CHECK(s->u.explain.changelog_mode);
    CHECK(!s->u.explain.plan_only);
    CHECK_EQ(s->u.explain.stmt->kind, DP_AS_QUERY);
  }
  s = stmt0("EXPLAIN PLAN FOR INSERT INTO t SELECT 1");
  if (s) {
    CHECK(s->u.explain.plan_only);
    CHECK_EQ(s->u.explain.stmt->kind, DP_AS_INSERT);
  }
  s = stmt0("EXPLAIN STATEMENT SET BEGIN INSERT INTO t SELECT 1; END");
  if (s) CHECK_EQ(s->u.explain.stmt->kind, DP_AS_STATEMENT_SET);
  s = stmt0("EXPLAIN EXECUTE STATEMENT SET BEGIN INSERT INTO t SELECT 1; END");
  if (s) CHECK_EQ(s->u.explain.stmt->kind, DP_AS_STATEMENT_SET);
  s = stmt0("USE CATALOG c");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_USE);
    CHECK_STR(s->u.use.name.parts[0].name, "c");
  }
  s = stmt0("USE db1.x");
  if (s) CHECK_EQ(s->u.use.name.n, 2);
  s = stmt0("USE catalog");
  if (s) CHECK_STR(s->u.use.name.parts[0].name, "catalog");
  s = stmt0("SHOW TABLES");
  if (s) CHECK_EQ(s->u.show.what, 'T');
  s = stmt0("show views");
  if (s) CHECK_EQ(s->u.show.what, 'V');
  s = stmt0("SHOW FUNCTIONS");
  if (s) CHECK_EQ(s->u.show.what, 'F');
  s = stmt0("DESCRIBE t");
  if (s) {
    CHECK_EQ(s->kind, DP_AS_DESCRIBE);
    CHECK_STR(s->u.describe.parts[0].name, "t");
  }
  s = stmt0("DESC db.t");
  if (s) CHECK_EQ(s->u.describe.n, 2);
}

TEST(scripts_and_comments) {
  const char *sql = "-- a pipeline\nSET 'a' = 'b';;\n/* two */ SELECT 1;\r\nSELECT 2 -- end\n";
  CHECK_EQ(parse(sql), DIPPER_OK);
  CHECK_EQ(P.script->n, 3);
  CHECK_EQ(P.script->stmts[2]->span.line, 4);
  CHECK_STR(text_of(sql, P.script->stmts[1]->span), "SELECT 1");
  CHECK_EQ(parse(""), DIPPER_OK);
  CHECK_EQ(P.script->n, 0);
  CHECK_EQ(parse(" ;; -- nothing"), DIPPER_OK);
  CHECK_EQ(P.script->n, 0);
}

TEST(parse_type_entry) {
  dp_arena *a = dp_arena_new(0);
  dp_diags d;
  const char *txt = "ROW<a INT NOT NULL, b ARRAY<MAP<STRING, BIGINT>>>";
  dp_diags_init(&d, a, NULL, txt, strlen(txt));
  const dp_type *t = dp_parse_type(a, &d, txt, strlen(txt));
  CHECK(t != NULL);
  if (t) {
    char buf[128];
    dp_type_print(buf, sizeof buf, t);
    CHECK_STR(buf, "ROW<a INT NOT NULL, b ARRAY<MAP<STRING, BIGINT>>>");
  }
  t = dp_parse_type(a, &d, "TIMESTAMP_LTZ(6)", 16);
  CHECK(t && t->kind == DP_T_TIMESTAMP_LTZ && t->precision == 6);
  t = dp_parse_type(a, &d, "INT INT", 7);
  CHECK(t == NULL);
  CHECK_EQ(d.count, 1);
  CHECK_CONTAINS(d.items[0].message, "expected the end of the type");
  t = dp_parse_type(a, &d, "DECIMAL(40, 2)", 14);
  CHECK(t == NULL);
  CHECK_CONTAINS(d.items[1].message, "between 1 and 38");
  t = dp_parse_type(a, &d, "BLOB", 4);
  CHECK(t == NULL);
  CHECK_CONTAINS(d.items[2].message, "unknown type BLOB");
  t = dp_parse_type(a, &d, "TIMESTAMP(3) WITH TIME ZONE", 27);
  CHECK(t == NULL);
  CHECK_CONTAINS(d.items[3].message, "TIMESTAMP_LTZ");
  dp_arena_free(a);
}

/* ----------------------------------------------------------------- errors */

TEST(errors_with_positions) {
  CHECK_STR(error_of("SELECT a FROM t WHERE a == 1"),
            "1:25: '==' is not SQL: compare with a single '='");
  CHECK_STR(error_of("SELECT a, b, FROM t"),
            "1:12: unexpected ',' before FROM: remove the trailing comma after the last select "
            "item");
  CHECK_STR(error_of("SELECT a b c FROM t"),
            "1:12: expected ',' or FROM after the select item, found name c: is a ',' missing "
            "between select items?");
  CHECK_STR(error_of("SELECT order FROM t"),
            "1:8: expected an expression, found keyword ORDER: ORDER is a reserved word; to use "
            "it as a name write it in backticks, `order`");
  CHECK_STR(error_of("SELECT 'abc FROM t"),
            "1:8: unterminated string: add the closing quote (write '' for a quote inside a "
            "string)");
  CHECK_STR(error_of("SELECT 1 /* x"),
            "1:10: unterminated comment: a '/*' comment needs a closing '*/'");
  CHECK_STR(error_of("SELECT *\nFROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)"),
            "2:64: expected ')' to close TABLE(TUMBLE(...)), found end of input");
  CHECK_STR(error_of("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts) INTERVAL '1' MINUTE))"),
            "1:52: expected ')' to close the argument list of TUMBLE, found keyword INTERVAL: is "
            "a ',' missing between arguments?");
  CHECK_STR(error_of("CREATE TABLE t (\n  a INT\n  b STRING\n)"),
            "3:3: expected ',' or ')' after the column definition, found name b: is a ',' "
            "missing between columns?");
  CHECK_STR(error_of("CREATE TABLE t (a INT,)"),
            "1:22: unexpected ',' before ')': remove the trailing comma after the last column");
  CHECK_STR(error_of("CREATE TABLE t (a INT) WITH (connector = 'kafka')"),
            "1:30: expected an option key in single quotes, found name connector: write "
            "'connector'");
  CHECK_STR(error_of("CREATE TABLE t (a INT) WITH ('connector' = kafka)"),
            "1:44: expected an option value in single quotes, found name kafka: write 'kafka'");
  CHECK_STR(error_of("CREATE TABLE t (a INT) WITH ('a' = 'b',)"),
            "1:39: unexpected ',' before ')': remove the trailing comma after the last option");
  CHECK_STR(error_of("CREATE TABLE t (a INT) WITH ('a' = 'b' 'c' = 'd')"),
            "1:40: expected ',' or ')' after the option, found string 'c': is a ',' missing "
            "between options?");
  CHECK_STR(error_of("CREATE TABLE t (a BLOB)"),
            "1:19: unknown type BLOB: write one of BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, "
            "FLOAT, DOUBLE, DECIMAL(p, s), STRING, VARCHAR(n), BYTES, DATE, TIME, TIMESTAMP(p), "
            "TIMESTAMP_LTZ(p), INTERVAL, ROW<...>, ARRAY<...>, MAP<...>");
  CHECK_STR(error_of("CREATE TABLE t (a TIMESTAMP(12))"),
            "1:29: the timestamp precision must be between 0 and 9, not 12");
  CHECK_STR(error_of("CREATE TABLE t (a INT, WATERMARK FOR a AS a, WATERMARK FOR a AS a)"),
            "1:46: a table has at most one WATERMARK: keep the one for the event-time column");
  CHECK_STR(error_of("CREATE TABLE t (a INT PRIMARY KEY NOT ENFORCED, PRIMARY KEY (a))"),
            "1:49: a table has at most one PRIMARY KEY: list every key column in one PRIMARY "
            "KEY (a, b) NOT ENFORCED");
  CHECK_STR(error_of("CREATE TABLE t"),
            "1:1: CREATE TABLE needs columns (c TYPE, ...), LIKE other_table or AS SELECT ...");
  CHECK_STR(error_of("SELECT * FROM a JOIN b"),
            "1:23: expected ON <condition> or USING (columns) after the joined table, found end "
            "of input: write CROSS JOIN for a join without a condition");
  CHECK_STR(error_of("SELECT * FROM a NATURAL b"), "1:25: expected JOIN after NATURAL, found name b");
  CHECK_STR(error_of("SELECT CAST(a AS) FROM t"),
            "1:17: expected a type (INT, STRING, TIMESTAMP(3), ...), found ')'");
  CHECK_STR(error_of("SELECT f(a b) FROM t"),
            "1:12: expected ')' to close the argument list of f, found name b: is a ',' missing "
            "between arguments?");
  CHECK_STR(error_of("SELECT INTERVAL 10 FROM t"),
            "1:20: expected a unit after the number (INTERVAL 10 SECONDS or INTERVAL '10' "
            "SECOND), found keyword FROM");
  CHECK_STR(error_of("SELECT INTERVAL x"),
            "1:17: expected a quoted value after INTERVAL, found name x: write INTERVAL '5' "
            "SECOND");
  CHECK_STR(error_of("SELECT MAP['a']"),
            "1:8: MAP[...] takes key, value pairs: it has 1 items, an odd number");
  CHECK_STR(error_of("VALUES (1, 2), (3)"),
            "1:16: this row of VALUES has 1 values but the first row has 2: every row needs the "
            "same number");
  CHECK_STR(error_of("SELECT * FROM TABLE(TUMBLE(TABLE (SELECT 1), DESCRIPTOR(ts), x))"),
            "1:34: a table argument of TUMBLE must name a table: write TABLE t, and put the "
            "subquery in a view or a WITH clause");
  CHECK_STR(error_of("SELECT * FROM TABLE(x)"),
            "1:21: TABLE(...) in FROM takes a table function call, e.g. TABLE(TUMBLE(TABLE t, "
            "DESCRIPTOR(ts), INTERVAL '1' MINUTE))");
  CHECK_STR(error_of("SELEC 1"),
            "1:1: expected a statement (SELECT, INSERT, CREATE, DROP, SET, EXPLAIN, ...), found "
            "name SELEC");
  CHECK_STR(error_of("SELECT 1 2"),
            "1:10: expected ',' or FROM after the select item, found number 2: is a ',' "
            "missing between select items?");
  CHECK_STR(error_of("SELECT 1 FROM t )"),
            "1:17: expected ';' or the end of the statement, found ')'");
  CHECK_STR(error_of("SELECT (1 + 2"), "1:14: expected ')' to close the parenthesis, found end of input");
  CHECK_STR(error_of("SELECT (1 + 2  \n\n"),
            "1:14: expected ')' to close the parenthesis, found end of input");
  CHECK_STR(error_of("INSERT INTO s SELECT * FROM t\nINSERT INTO u SELECT 1"),
            "2:1: expected ';' or the end of the statement, found keyword INSERT: is a ';' "
            "missing before it?");
  CHECK_STR(error_of("SELECT a FROM t WHERE a IS 3"),
            "1:28: expected NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM after IS, found number 3");
  CHECK_STR(error_of("SET 'a' 'b'"),
            "1:9: expected '=' after the SET key (SET 'key' = 'value'), found string 'b'");
  CHECK_STR(error_of("SET a b = c"),
            "1:7: a SET key cannot hold spaces: write it in single quotes, SET 'key' = 'value'");
  CHECK_STR(error_of("SET 'a' ="), "1:10: expected a value after '=', found end of input");
  CHECK_STR(error_of("INSERT t SELECT 1"),
            "1:8: expected INTO or OVERWRITE after INSERT, found name t");
  CHECK_STR(error_of("EXECUTE STATEMENT SET BEGIN SELECT 1; END"),
            "1:29: expected INSERT or END in the statement set, found keyword SELECT: a "
            "statement set holds only INSERT statements");
  CHECK_STR(error_of("EXECUTE STATEMENT SET BEGIN END"),
            "1:29: a statement set needs at least one INSERT between BEGIN and END");
  CHECK_STR(error_of("END"),
            "1:1: END without a statement set: write EXECUTE STATEMENT SET BEGIN ... END");
  CHECK_STR(error_of("EXPLAIN ESTIMATED_COST SELECT 1"),
            "1:9: EXPLAIN ESTIMATED_COST is not supported: dipper explains the plan, with "
            "CHANGELOG_MODE for the changelog of each node");
  CHECK_STR(error_of("SHOW SCHEMAS"),
            "1:6: expected TABLES, VIEWS, FUNCTIONS, DATABASES, CATALOGS, CURRENT or CREATE after "
            "SHOW, found name SCHEMAS");
  CHECK_STR(error_of("SHOW TABLES NOT 'x'"), "1:17: expected LIKE or ILIKE after NOT, found string 'x'");
  CHECK_STR(error_of("ALTER TABLE t ADD c INT"),
            "1:15: ALTER TABLE .. ADD (schema changes) is not supported: ALTER TABLE sets or "
            "resets options and renames; create the table again for a new schema");
  CHECK_STR(error_of("ALTER TABLE t RENAME c TO d"),
            "1:22: ALTER TABLE .. RENAME renames the table only (RENAME TO new_name); columns "
            "cannot be renamed: create the table again");
  CHECK_STR(error_of("CREATE CATALOG c"),
            "1:17: expected WITH ('type' = 'generic_in_memory') after the catalog name, found end "
            "of input");
  CHECK_STR(error_of("USE a.b.c"), "1:5: USE takes [catalog.]database");
  CHECK_STR(error_of("CREATE OR REPLACE TABLE t (a INT)"),
            "1:19: CREATE OR REPLACE TABLE is not supported: DROP TABLE IF EXISTS first");
  CHECK_STR(error_of("SELECT * FROM t MATCH_RECOGNIZE (x)"),
            "1:17: MATCH_RECOGNIZE is not supported");
  CHECK_STR(error_of("SELECT a FROM t ORDER a"), "1:23: expected BY after ORDER, found name a");
  CHECK_STR(error_of("CREATE TABLE t (a INT, WATERMARK a AS a)"),
            "1:34: expected FOR after WATERMARK (WATERMARK FOR ts AS ts - INTERVAL '5' SECOND), "
            "found name a");
  CHECK_STR(error_of("CREATE TABLE t (a INT, PRIMARY (a))"),
            "1:32: expected KEY after PRIMARY (PRIMARY KEY (a, b) NOT ENFORCED), found '('");
  CHECK_STR(error_of("SELECT \x01"), "1:8: unexpected byte 0x01: it has no meaning in SQL here "
                                        "(quote names in backticks, strings in single quotes)");
  CHECK_STR(error_of("SELECT CASE END"), "1:13: expected WHEN in CASE, found keyword END");
  CHECK_STR(error_of("SELECT TRIM(LEADING 'x' s)"),
            "1:25: expected FROM in TRIM(BOTH|LEADING|TRAILING [characters] FROM string), found "
            "name s");
  CHECK_STR(error_of("SELECT 1 # 2"),
            "1:10: unexpected character '#': it has no meaning in SQL here (quote names in "
            "backticks, strings in single quotes)");
  CHECK_STR(error_of("CREATE TABLE t (a INT) WITH ('x' = 'y') LIKE s (OVERWRITING ALL)"),
            "1:49: OVERWRITING ALL is not a LIKE option: ALL can only be included or excluded "
            "(OVERWRITING applies to GENERATED, METADATA, OPTIONS and WATERMARKS)");
  CHECK_STR(error_of("CREATE TABLE t (a INT) LIKE s (EXCLUDING OPTIONS INCLUDING ALL)"),
            "1:50: INCLUDING ALL must come first in the LIKE options: it sets every feature, and "
            "the ones after it make exceptions");
  CHECK_STR(error_of("CREATE TABLE t (a INT) LIKE s (EXCLUDING OPTIONS OVERWRITING OPTIONS)"),
            "1:50: the LIKE options name OPTIONS twice; keep one strategy per feature");
  CHECK_STR(error_of("CREATE TABLE t (a INT) LIKE s (INCLUDING KEYS)"),
            "1:42: expected ALL, CONSTRAINTS, GENERATED, METADATA, OPTIONS, PARTITIONS or "
            "WATERMARKS after the merging strategy, found name KEYS");
  CHECK_STR(error_of("CREATE TABLE t (a TIMESTAMP WITH TIME ZONE)"),
            "1:29: TIMESTAMP WITH TIME ZONE is not supported: write TIMESTAMP_LTZ(p) or "
            "TIMESTAMP(p) WITH LOCAL TIME ZONE");
  CHECK_STR(error_of("SELECT a AS 'x' FROM t"),
            "1:13: expected an alias after AS, found string 'x': aliases are names; quote them "
            "in backticks");
}

TEST(error_codes) {
  CHECK_EQ(parse("SELECT 1 +"), DIPPER_SYNTAX);
  CHECK_EQ(parse("CREATE OR REPLACE TABLE t (a INT)"), DIPPER_UNSUPPORTED);
  CHECK_EQ(parse("CREATE TABLE t (a INT, PRIMARY KEY (a), PRIMARY KEY (a))"), DIPPER_DUPLICATE);
}

TEST(recovery_reports_every_statement) {
  const char *sql = "SELECT 1 +;\nSELECT 2;\nSELECT FROM;\nCREATE TABLE (;\nSELECT 3";
  CHECK_EQ(parse(sql), DIPPER_SYNTAX);
  CHECK_EQ(P.diags.count, 3);
  CHECK_EQ(P.diags.items[0].span.line, 1);
  CHECK_EQ(P.diags.items[0].span.col, 11);
  CHECK_EQ(P.diags.items[1].span.line, 3);
  CHECK_EQ(P.diags.items[1].span.col, 8);
  CHECK_EQ(P.diags.items[2].span.line, 4);
  CHECK_EQ(P.diags.items[2].span.col, 14);
  /* The statements that parsed are kept. */
  CHECK_EQ(P.script->n, 2);
  CHECK_EQ(P.script->stmts[1]->span.line, 5);

  /* An error inside a statement set skips to its END, not into its body. */
  sql = "EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT 1 +;\nINSERT INTO b SELECT 2;\n"
        "END;\nSELECT 3 +";
  CHECK_EQ(parse(sql), DIPPER_SYNTAX);
  CHECK_EQ(P.diags.count, 2);
  CHECK_EQ(P.diags.items[0].span.line, 2);
  CHECK_EQ(P.diags.items[1].span.line, 5);
  CHECK_EQ(P.script->n, 0);
}

TEST(nesting_is_limited) {
  static char deep[40000];
  size_t n = 0;
  n += (size_t)snprintf(deep + n, sizeof deep - n, "SELECT ");
  for (int i = 0; i < 5000; i++) deep[n++] = '(';
  deep[n++] = '1';
  for (int i = 0; i < 5000; i++) deep[n++] = ')';
  deep[n] = 0;
  CHECK_EQ(parse(deep), DIPPER_LIMIT);
  CHECK_CONTAINS(P.diags.items[0].message, "nested too deeply");
  /* 200 levels are fine. */
  n = (size_t)snprintf(deep, sizeof deep, "SELECT ");
  for (int i = 0; i < 200; i++) deep[n++] = '(';
  deep[n++] = '1';
  for (int i = 0; i < 200; i++) deep[n++] = ')';
  deep[n] = 0;
  CHECK_EQ(parse(deep), DIPPER_OK);
  /* Deep subqueries, types and long sign chains end in a diagnostic too. */
  n = 0;
  for (int i = 0; i < 1000; i++) n += (size_t)snprintf(deep + n, sizeof deep - n, "SELECT * FROM (");
  CHECK_EQ(parse(deep), DIPPER_LIMIT);
  n = (size_t)snprintf(deep, sizeof deep, "CREATE TABLE t (a ");
  for (int i = 0; i < 3000; i++) n += (size_t)snprintf(deep + n, sizeof deep - n, "ARRAY<");
  CHECK_EQ(parse(deep), DIPPER_LIMIT);
  n = (size_t)snprintf(deep, sizeof deep, "SELECT ");
  for (int i = 0; i < 10000; i++) { /* "- " since "--" starts a comment */
    deep[n++] = '-';
    deep[n++] = ' ';
  }
  deep[n++] = '1';
  deep[n] = 0;
  CHECK_EQ(parse(deep), DIPPER_OK);
  n = (size_t)snprintf(deep, sizeof deep, "SELECT ");
  for (int i = 0; i < 3000; i++) n += (size_t)snprintf(deep + n, sizeof deep - n, "NOT ");
  CHECK_EQ(parse(deep), DIPPER_LIMIT);
}

TEST(nested_keyword_calls_stay_linear) {
  /* 120 nested plain-form calls whose first argument is parsed before the
  ** form is known: each level must be parsed once, not twice. */
  static char sql[16000];
  size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT ");
  for (int i = 0; i < 120; i++) n += (size_t)snprintf(sql + n, sizeof sql - n, "SUBSTRING(");
  n += (size_t)snprintf(sql + n, sizeof sql - n, "s");
  for (int i = 0; i < 120; i++) n += (size_t)snprintf(sql + n, sizeof sql - n, ", 1)");
  CHECK_EQ(parse(sql), DIPPER_OK);
  n = (size_t)snprintf(sql, sizeof sql, "SELECT ");
  for (int i = 0; i < 120; i++) n += (size_t)snprintf(sql + n, sizeof sql - n, "TRIM(");
  n += (size_t)snprintf(sql + n, sizeof sql - n, "s");
  for (int i = 0; i < 120; i++) n += (size_t)snprintf(sql + n, sizeof sql - n, ")");
  CHECK_EQ(parse(sql), DIPPER_OK);
}

TEST(nexmark_style_pipeline) {
  const char *sql =
      "CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3),\n"
      "  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND) WITH ('connector' = "
      "'nexmark');\n"
      "CREATE TABLE out1 (auction BIGINT, num BIGINT) WITH ('connector' = 'blackhole');\n"
      "INSERT INTO out1\n"
      "SELECT auction, num FROM (\n"
      "  SELECT auction, count(*) AS num, window_start AS starttime,\n"
      "    ROW_NUMBER() OVER (PARTITION BY window_start ORDER BY count(*) DESC) AS rn\n"
      "  FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' "
      "SECOND))\n"
      "  GROUP BY auction, window_start, window_end\n"
      ") WHERE rn <= 3;\n";
  CHECK_EQ(parse(sql), DIPPER_OK);
  CHECK_EQ(P.script->n, 3);
  CHECK_EQ(P.script->stmts[2]->kind, DP_AS_INSERT);
  CHECK_EQ(P.script->stmts[2]->span.line, 4);
}

int main(void) {
  int rc = RUN_TESTS();
  if (P.arena) dp_arena_free(P.arena);
  return rc;
}
