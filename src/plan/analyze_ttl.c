/*
** analyze_ttl.c — state bounds as Flink has them: idle state retention
** ('table.exec.state.ttl', the STATE_TTL hint) and the warning for state
** that grows forever.
**
** Flink runs a GROUP BY without a window, a regular join or a deduplication
** on a stream with state that nothing removes; it accepts them, and bounds
** their state only when the job sets a state TTL: a key (a join: a stored
** row) not written for that long, in processing time, is dropped.  dipper does
** the same: dp_analyze_ttl gives such a node its state_ttl (its hint, else
** the session option) where the embedded engine carries it out, and
** dp_validate_warnings names every node whose state stays unbounded — with
** the option that would bound it, or the reason the option does not.
**
** Owns: the state_ttl of a node, the unbounded-state warnings.  Does not own:
** the state kinds (analyze.c), the expiry itself (exec/state_ttl.h).
*/
#include <stdio.h>
#include <string.h>

#include "core/types.h"
#include "plan/analyze.h"
#include "plan/analyze_int.h"

#define TTL_KEY "table.exec.state.ttl"

/* An INNER (or CROSS) join of two append-only streams: op_join.c's two
** stores, which expire their rows by insertion.  (Flink's regular join of
** updating inputs, or outer without a time range, op_join_retract.c, is
** retract_ttl.) */
static bool ttl_join(const dp_plan *p) {
  if (p->kind != DP_P_JOIN || p->u.join.as_of || dp_analyze_retract_join(p)) return false;
  if (p->u.join.kind != DP_J_INNER && p->u.join.kind != DP_J_CROSS) return false;
  const dp_plan *L = p->inputs[0], *R = p->inputs[1];
  return !L->props.bounded && !R->props.bounded &&
         L->props.changelog == DP_CHANGELOG_INSERT_ONLY &&
         R->props.changelog == DP_CHANGELOG_INSERT_ONLY;
}

/* op_join_retract.c: a stored row not written for the TTL (stored, or the
** match count of a preserved side's row changed: Flink's OnCreateAndWrite
** over its outer-join state) is dropped, without output. */
static bool retract_ttl(const dp_plan *p) { return dp_analyze_retract_join(p); }

/* A Top-N without a window over an append-only stream (op_topn.c's update
** mode: the current top per partition). */
static bool ttl_topn(const dp_plan *p) {
  return p->kind == DP_P_TOPN && !p->inputs[0]->props.bounded &&
         p->inputs[0]->props.changelog == DP_CHANGELOG_INSERT_ONLY;
}

/* OVER on a stream (op_over.c's stream mode, whose history per partition
** a TTL drops). */
static bool ttl_over(const dp_plan *p) {
  return p->kind == DP_P_OVER && !p->inputs[0]->props.bounded;
}

/* The nodes whose state the embedded engine expires by TTL today (the
** aggregation over an updating input, and a SELECT DISTINCT or UNION planned
** as one, included: exec/agg_retract.c). */
static bool ttl_carried_out(const dp_plan *p) {
  return (p->kind == DP_P_AGGREGATE && !p->u.aggregate.window) ||
         p->kind == DP_P_DISTINCT || p->kind == DP_P_DEDUPLICATE || ttl_join(p) || retract_ttl(p) ||
         ttl_topn(p) || ttl_over(p);
}

static bool grows_forever(const dp_plan *p) {
  if (p->props.bounded) return false;
  if (p->props.state != DP_STATE_KEYS && p->props.state != DP_STATE_UNBOUNDED) return false;
  /* versions of a temporal join go as the watermark passes them */
  if (p->kind == DP_P_JOIN && p->u.join.as_of) return false;
  /* an ORDER BY of a stream is refused; it is no state question */
  return p->kind != DP_P_SORT;
}

static int64_t session_ttl(const dp_catalog *cat) {
  const char *v = cat ? dp_catalog_option(cat, TTL_KEY) : NULL;
  int64_t us = 0;
  if (!v || dp_parse_duration(v, &us) != DIPPER_OK || us < 0) return 0;
  return us;
}

static int64_t side_ttl(const dp_plan *p, int side, int64_t session) {
  int64_t h = p->ttl_hint[side];
  return h == DP_TTL_FOREVER ? 0 : h > 0 ? h : session;
}

void dp_analyze_ttl(dp_arena *a, const dp_catalog *cat, dp_plan *p) {
  p->props.state_ttl[0] = p->props.state_ttl[1] = 0;
  if (!grows_forever(p) || !ttl_carried_out(p)) return;
  int64_t session = session_ttl(cat);
  int sides = p->kind == DP_P_JOIN ? 2 : 1;
  for (int i = 0; i < sides; i++) p->props.state_ttl[i] = side_ttl(p, i, session);
  int64_t t = p->props.state_ttl[0];
  if (t <= 0 && (sides < 2 || p->props.state_ttl[1] <= 0)) return;
  const char *d = p->props.state_desc ? p->props.state_desc : "its state";
  /* "...; never dropped, grows ..." no longer holds: say what drops it */
  const char *cut = strstr(d, "; never dropped");
  int keep = cut ? (int)(cut - d) : (int)strlen(d);
  char dur[48];
  if (sides == 2) {
    char side[2][80];
    for (int i = 0; i < 2; i++) {
      dp_format_duration(dur, sizeof dur, p->props.state_ttl[i]);
      if (p->props.state_ttl[i] > 0)
        snprintf(side[i], sizeof side[i], retract_ttl(p) ? "once not written for %s" : "%s after it arrived", dur);
      else snprintf(side[i], sizeof side[i], "never");
    }
    const char *s = dp_arena_printf(a, "%.*s; a stored left row is dropped %s, a right row %s",
                                    keep, d, side[0], side[1]);
    if (s) p->props.state_desc = s;
    return;
  }
  dp_format_duration(dur, sizeof dur, t);
  const char *how = p->ttl_hint[0] > 0 ? "the STATE_TTL hint" : TTL_KEY;
  const char *s = dp_arena_printf(a, "%.*s; a %s not %s for %s is dropped (%s)", keep, d,
                                  p->kind == DP_P_DISTINCT ? "row"
                                  : p->kind == DP_P_DEDUPLICATE ? "key"
                                  : p->kind == DP_P_TOPN || p->kind == DP_P_OVER ? "partition"
                                                                                : "group",
                                  p->kind == DP_P_DISTINCT ? "seen" : "written", dur, how);
  if (s) p->props.state_desc = s;
}

static const char *phrase(const dp_plan *p) {
  switch (p->kind) {
  case DP_P_AGGREGATE: return p->u.aggregate.window ? "the window aggregation" : "the aggregation";
  case DP_P_JOIN: return "the join";
  case DP_P_ASOF_JOIN: return "the ASOF JOIN";
  case DP_P_DISTINCT:
    return p->inputs[0]->kind == DP_P_UNION && !p->inputs[0]->u.union_.all ? "UNION"
                                                                              : "SELECT DISTINCT";
  case DP_P_DEDUPLICATE: return "the deduplication";
  case DP_P_TOPN: return "the Top-N";
  case DP_P_OVER: return "the OVER aggregation";
  case DP_P_UNION: return "UNION";
  case DP_P_SETOP: return p->u.setop.except ? "EXCEPT" : "INTERSECT";
  default: return dp_plan_kind_name(p->kind);
  }
}

/* What bounds such state instead, by kind. */
static const char *instead(const dp_plan *p) {
  switch (p->kind) {
  case DP_P_AGGREGATE:
    return p->u.aggregate.window ? "declare a WATERMARK on the window's time column"
                                 : "or group by a window over an event-time column with a "
                                   "watermark";
  case DP_P_JOIN:
    return "or declare watermarks on both sides and bound their times in the ON clause";
  case DP_P_DEDUPLICATE:
  case DP_P_DISTINCT:
    return "or keep an event-time column with a watermark among the keys";
  default: return "or bound it by a window over an event-time column with a watermark";
  }
}

static void warn_node(dp_diags *w, const dp_catalog *cat, const dp_plan *p) {
  const char *what = p->props.state_desc ? p->props.state_desc : "its state";
  if (ttl_carried_out(p) && p->kind == DP_P_JOIN) {
    bool l = p->props.state_ttl[0] > 0, r = p->props.state_ttl[1] > 0;
    if (l && r) return;
    dp_error(w, DIPPER_STREAMING, p->span,
             "%s keeps %s: no watermark cleans %s and no state TTL bounds %s; SET '" TTL_KEY
             "' = '1 d' (or a hint SELECT /*+ STATE_TTL('<left>' = '1 d', '<right>' = '1 d') */ "
             "...) to drop a stored row %s, %s",
             phrase(p), what, !l && !r ? "it" : l ? "its right side" : "its left side",
             !l && !r ? "it" : "that side",
             retract_ttl(p) ? "not written for that long" : "that long after it arrived", instead(p));
    return;
  }
  if (ttl_carried_out(p)) {
    if (p->props.state_ttl[0] > 0) return;
    bool hinted_forever = p->ttl_hint[0] == DP_TTL_FOREVER;
    dp_error(w, DIPPER_STREAMING, p->span,
             "%s keeps %s: no watermark cleans it and no state TTL bounds it%s; SET '" TTL_KEY
             "' = '1 d' (or a hint "
             "SELECT /*+ STATE_TTL('<input>' = '1 d') */ ...) to drop a %s for "
             "that long, %s",
             phrase(p), what, hinted_forever ? " (its STATE_TTL hint is '0')" : "",
             p->kind == DP_P_DISTINCT ? "row not seen" : "key not written", instead(p));
    return;
  }
  bool asked = session_ttl(cat) > 0 || p->ttl_hint[0] != 0 || p->ttl_hint[1] != 0;
  dp_error(w, DIPPER_STREAMING, p->span,
           "%s keeps %s: no watermark cleans it%s, and the embedded engine carries out '" TTL_KEY
           "' for GROUP BY, DISTINCT, UNION, deduplication, OVER, equi-joins and Top-N only so far, so bound it otherwise: %s",
           phrase(p), what, asked ? " (" TTL_KEY " and STATE_TTL do not bound it yet)" : "",
           instead(p) + (strncmp(instead(p), "or ", 3) == 0 ? 3 : 0));
}

static void walk(dp_diags *w, const dp_catalog *cat, const dp_plan *p, int depth) {
  if (!p || depth > 10000) return;
  for (int i = 0; i < p->ninputs; i++) walk(w, cat, p->inputs[i], depth + 1);
  if (grows_forever(p)) warn_node(w, cat, p);
}

int dp_validate_warnings(dp_diags *w, const dp_catalog *cat, const dp_query_plan *q, int root) {
  if (!q->streaming || root < 0 || root >= q->nroots) return DIPPER_OK;
  walk(w, cat, q->roots[root], 0);
  return DIPPER_OK;
}
