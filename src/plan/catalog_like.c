/*
** catalog_like.c — CREATE TABLE t (...) LIKE src (like options): what of
** `src` the new table takes, by Flink's merging strategies.
**
** Physical columns always come along.  Each feature — CONSTRAINTS (the
** primary key), GENERATED (computed columns), METADATA (metadata columns),
** OPTIONS, PARTITIONS, WATERMARKS — is INCLUDING (taken; the new table may
** not declare it again), EXCLUDING (left out) or OVERWRITING (taken unless
** the new table declares its own: a column of the same name, its own
** watermark, an option key).  ALL sets every feature first; the default is
** INCLUDING ALL OVERWRITING OPTIONS, as in Flink.
**
** Owns: the source as those options make it — `src` itself when nothing
** changes, else a copy with the excluded or overwritten parts taken out (and
** the column indexes of what stays renumbered).  Does not own: the checks of
** the merged table (catalog.c, which reports a feature declared twice).
*/
#include <stdio.h>
#include <string.h>

#include "plan/catalog.h"
#include "plan/catalog_int.h"
#include "plan/plan.h"

static bool name_eq(const char *a, const char *b) { return dp_catalog_name_cmp(a, b) == 0; }

/* The strategy of each feature after the options in order. */
static void strategies(const dp_ast_create_table *ct, dp_like_mode mode[7]) {
  for (int f = 0; f < 7; f++) mode[f] = DP_LIKE_INCLUDING;
  mode[DP_LIKE_OPTIONS] = DP_LIKE_OVERWRITING;
  for (int i = 0; i < ct->nlike_options; i++) {
    const dp_ast_like_option *o = &ct->like_options[i];
    if (o->feature == DP_LIKE_ALL)
      for (int f = 1; f < 7; f++) mode[f] = o->mode;
    else
      mode[o->feature] = o->mode;
  }
}

static bool declares(const dp_ast_create_table *ct, const char *col) {
  for (int j = 0; j < ct->ncols; j++)
    if (name_eq(ct->cols[j].name.name, col)) return true;
  return false;
}

/* Does column i of src stay? */
static bool keep_column(const dp_table_def *src, int i, const dp_like_mode mode[7],
                        const dp_ast_create_table *ct) {
  dp_col_kind k = src->cols[i].kind;
  if (k == DP_CK_PHYSICAL) return true;
  dp_like_mode m = mode[k == DP_CK_COMPUTED ? DP_LIKE_GENERATED : DP_LIKE_METADATA];
  if (m == DP_LIKE_EXCLUDING) return false;
  return !(m == DP_LIKE_OVERWRITING && declares(ct, src->schema.cols[i].name));
}

/* The columns that stay, renumbered: map[i] is the new index, -1 if gone. */
static int copy_columns(dp_arena *a, dp_diags *d, const dp_table_def *src, const int *map,
                        dp_table_def *t) {
  int n = 0;
  for (int i = 0; i < src->schema.ncols; i++) n += map[i] >= 0;
  t->schema.ncols = n;
  t->schema.cols = dp_arena_calloc(a, (size_t)(n ? n : 1), sizeof *t->schema.cols);
  t->cols = dp_arena_calloc(a, (size_t)(n ? n : 1), sizeof *t->cols);
  if (!t->schema.cols || !t->cols) return DIPPER_NOMEM;
  for (int i = 0; i < src->schema.ncols; i++) {
    if (map[i] < 0) continue;
    t->schema.cols[map[i]] = src->schema.cols[i];
    t->cols[map[i]] = src->cols[i];
    if (!src->cols[i].expr) continue;
    t->cols[map[i]].expr = dp_expr_remap(a, src->cols[i].expr, map);
    if (!t->cols[map[i]].expr)
      return dp_error(d, DIPPER_NAME, src->cols[i].span,
                      "computed column `%s` of LIKE `%s` uses a column the LIKE options leave "
                      "out; exclude GENERATED too, or keep METADATA",
                      src->schema.cols[i].name, src->name);
  }
  return DIPPER_OK;
}

static int copy_watermark(dp_arena *a, dp_diags *d, const dp_table_def *src, const int *map,
                          bool take, dp_table_def *t) {
  t->watermark_col = -1;
  t->watermark_expr = NULL;
  t->watermark_delay = -1;
  if (!take || src->watermark_col < 0) return DIPPER_OK;
  int col = map[src->watermark_col];
  dp_expr *e = col >= 0 ? dp_expr_remap(a, src->watermark_expr, map) : NULL;
  if (!e)
    return dp_error(d, DIPPER_NAME, src->watermark_span,
                    "the watermark of LIKE `%s` uses a column the LIKE options leave out; "
                    "write EXCLUDING WATERMARKS, or keep that column",
                    src->name);
  t->watermark_col = col;
  t->watermark_expr = e;
  t->watermark_delay = src->watermark_delay;
  return DIPPER_OK;
}

int dp_catalog_like_source(dp_catalog *c, dp_diags *d, const dp_ast_create_table *ct,
                           const dp_table_def *src, const dp_table_def **out,
                           bool *strict_options) {
  dp_like_mode mode[7];
  strategies(ct, mode);
  *strict_options = mode[DP_LIKE_OPTIONS] == DP_LIKE_INCLUDING;
  *out = src;
  bool same = mode[DP_LIKE_CONSTRAINTS] == DP_LIKE_INCLUDING &&
              mode[DP_LIKE_PARTITIONS] == DP_LIKE_INCLUDING &&
              mode[DP_LIKE_OPTIONS] != DP_LIKE_EXCLUDING &&
              mode[DP_LIKE_WATERMARKS] == DP_LIKE_INCLUDING;
  int *map = dp_arena_calloc(c->arena, (size_t)(src->schema.ncols ? src->schema.ncols : 1), sizeof *map);
  if (!map) return DIPPER_NOMEM;
  int n = 0;
  for (int i = 0; i < src->schema.ncols; i++) {
    map[i] = keep_column(src, i, mode, ct) ? n++ : -1;
    same &= map[i] == i;
  }
  if (same) return DIPPER_OK;
  dp_table_def *t = dp_arena_alloc(c->arena, sizeof *t);
  if (!t) return DIPPER_NOMEM;
  *t = *src;
  int rc = copy_columns(c->arena, d, src, map, t);
  if (rc != DIPPER_OK) return rc;
  bool wm = mode[DP_LIKE_WATERMARKS] == DP_LIKE_INCLUDING ||
            (mode[DP_LIKE_WATERMARKS] == DP_LIKE_OVERWRITING && !ct->has_watermark);
  if ((rc = copy_watermark(c->arena, d, src, map, wm, t)) != DIPPER_OK) return rc;
  /* key and partition columns are physical: they always stay */
  if (mode[DP_LIKE_CONSTRAINTS] == DP_LIKE_EXCLUDING || src->npk == 0) {
    t->npk = 0;
    t->pk = NULL;
  } else if (!(t->pk = dp_arena_calloc(c->arena, (size_t)src->npk, sizeof *t->pk))) {
    return DIPPER_NOMEM;
  } else {
    for (int k = 0; k < src->npk; k++) t->pk[k] = map[src->pk[k]];
  }
  if (mode[DP_LIKE_PARTITIONS] == DP_LIKE_EXCLUDING || src->npartition == 0) {
    t->npartition = 0;
    t->partition = NULL;
  } else if (!(t->partition = dp_arena_calloc(c->arena, (size_t)src->npartition, sizeof *t->partition))) {
    return DIPPER_NOMEM;
  } else {
    for (int k = 0; k < src->npartition; k++) t->partition[k] = map[src->partition[k]];
  }
  if (mode[DP_LIKE_OPTIONS] == DP_LIKE_EXCLUDING) {
    t->noptions = 0;
    t->options = NULL;
  }
  *out = t;
  return DIPPER_OK;
}
