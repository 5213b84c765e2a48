/*
** eval_coll.c — kernels of the collection functions: ELEMENT_AT (arrays are
** 1-based, a negative index counts from the end; a missing element or key
** is NULL), CARDINALITY, ARRAY_CONTAINS, MAP_KEYS, MAP_VALUES, the
** constructors ARRAY[..], MAP[..] and ROW(..), and Flink's ARRAY_REVERSE,
** ARRAY_DISTINCT, ARRAY_POSITION, ARRAY_REMOVE, ARRAY_MAX, ARRAY_MIN and
** ARRAY_JOIN (array_fn; functions.def has their rules).  ARRAY_DISTINCT
** compares each element with the ones kept before it: arrays in SQL rows
** are small.
**
** Values are copied row by row into the result's child vectors; a map
** lookup is a scan of the row's entries (maps in SQL rows are small).
*/
#include <stdlib.h>

#include "exec/eval_int.h"

/* Row i of a Flink array function into v. */
static int array_fn(const dp_expr *e, const dp_ev_arg *args, int64_t i, dp_vector *v) {
  int id = e->u.call.fn->id;
  const dp_vector *a = args[0].v, *el = a->children[0];
  int64_t s, end, r = dp_ev_row(&args[0], i);
  dp_vector_list_bounds(a, r, &s, &end);
  int rc = DIPPER_OK;
  const dp_vector *x = e->u.call.nargs > 1 ? args[1].v : NULL;
  int64_t xr = x ? dp_ev_row(&args[1], i) : 0;
  switch (id) {
  case DP_F_ARRAY_REVERSE:
    for (int64_t k = end - 1; k >= s && !rc; k--) rc = dp_vector_append_from(v->children[0], el, k);
    return rc ? rc : dp_vector_append_list(v);
  case DP_F_ARRAY_DISTINCT:
  case DP_F_ARRAY_REMOVE: {
    bool x_null = x && dp_vector_is_null(x, xr);
    for (int64_t k = s; k < end && !rc; k++) {
      bool keep = true, k_null = dp_vector_is_null(el, k);
      if (id == DP_F_ARRAY_REMOVE)
        keep = x_null ? !k_null : k_null || !dp_vector_row_equal(el, k, x, xr);
      for (int64_t q = s; q < k && keep && id == DP_F_ARRAY_DISTINCT; q++)
        keep = !(k_null ? dp_vector_is_null(el, q) : !dp_vector_is_null(el, q) && dp_vector_row_equal(el, q, el, k));
      if (keep) rc = dp_vector_append_from(v->children[0], el, k);
    }
    return rc ? rc : dp_vector_append_list(v);
  }
  case DP_F_ARRAY_POSITION: {
    int64_t at = 0;
    for (int64_t k = s; k < end && !at; k++)
      if (!dp_vector_is_null(el, k) && dp_vector_row_equal(el, k, x, xr)) at = k - s + 1;
    return dp_vector_append_i64(v, at);
  }
  case DP_F_ARRAY_MAX:
  case DP_F_ARRAY_MIN: {
    int64_t best = -1;
    for (int64_t k = s; k < end; k++) {
      if (dp_vector_is_null(el, k)) continue;
      int cmp = best < 0 ? 0 : dp_vector_row_compare(el, k, el, best);
      if (best < 0 || (id == DP_F_ARRAY_MAX ? cmp > 0 : cmp < 0)) best = k;
    }
    return best < 0 ? dp_vector_append_null(v) : dp_vector_append_from(v, el, best);
  }
  default: { /* ARRAY_JOIN */
    size_t dn, rn = 0;
    const char *d = dp_ev_str(&args[1], i, &dn);
    const char *repl = e->u.call.nargs > 2 ? dp_ev_str(&args[2], i, &rn) : NULL;
    dp_ev_buf b = {0};
    bool ok = true, first = true;
    for (int64_t k = s; k < end && ok; k++) {
      size_t len;
      const char *p;
      if (dp_vector_is_null(el, k)) {
        if (!repl) continue;
        p = repl, len = rn;
      } else {
        p = dp_vector_get_str(el, k, &len);
      }
      if (!first) ok = dp_ev_buf_put(&b, d, dn);
      first = false;
      ok = ok && dp_ev_buf_put(&b, p, len);
    }
    rc = ok ? dp_vector_append_str(v, b.p ? b.p : "", b.len) : DIPPER_NOMEM;
    free(b.p);
    return rc;
  }
  }
}

static bool is_array_fn(int id) {
  return id == DP_F_ARRAY_REVERSE || id == DP_F_ARRAY_DISTINCT || id == DP_F_ARRAY_POSITION ||
         id == DP_F_ARRAY_REMOVE || id == DP_F_ARRAY_MAX || id == DP_F_ARRAY_MIN || id == DP_F_ARRAY_JOIN;
}

static int k_coll(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  int id = e->u.call.fn->id;
  int nargs = e->u.call.nargs;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    bool constructor = id == DP_F_ARRAY || id == DP_F_MAP || id == DP_F_ROW;
    if (!constructor &&
        dp_ev_any_null(args, id == DP_F_ARRAY_CONTAINS || id == DP_F_ARRAY_REMOVE ? 1 : nargs, i)) {
      rc = dp_vector_append_null(v);
      continue;
    }
    if (is_array_fn(id)) {
      rc = array_fn(e, args, i, v);
      continue;
    }
    const dp_ev_arg *a = &args[0];
    int64_t r = dp_ev_row(a, i);
    switch (id) {
    case DP_F_ELEMENT_AT: {
      int64_t s, end;
      dp_vector_list_bounds(a->v, r, &s, &end);
      if (a->v->type->kind == DP_T_ARRAY) {
        int64_t idx = dp_ev_i64(&args[1], i), len = end - s;
        int64_t at = idx > 0 ? idx - 1 : idx < 0 ? len + idx : -1;
        rc = at < 0 || at >= len ? dp_vector_append_null(v)
                                 : dp_vector_append_from(v, a->v->children[0], s + at);
      } else {
        const dp_vector *entries = a->v->children[0];
        int64_t hit = -1;
        for (int64_t k = s; k < end && hit < 0; k++)
          if (dp_vector_row_equal(entries->children[0], k, args[1].v, dp_ev_row(&args[1], i))) hit = k;
        rc = hit < 0 ? dp_vector_append_null(v) : dp_vector_append_from(v, entries->children[1], hit);
      }
      break;
    }
    case DP_F_CARDINALITY: {
      int64_t s, end;
      dp_vector_list_bounds(a->v, r, &s, &end);
      rc = dp_vector_append_i64(v, end - s);
      break;
    }
    case DP_F_ARRAY_CONTAINS: {
      /* three-valued: NULL when not found and some element (or the value) is NULL */
      int64_t s, end;
      dp_vector_list_bounds(a->v, r, &s, &end);
      bool found = false, saw_null = dp_ev_null(&args[1], i);
      for (int64_t k = s; k < end && !found && !dp_ev_null(&args[1], i); k++) {
        if (dp_vector_is_null(a->v->children[0], k))
          saw_null = true;
        else if (dp_vector_row_equal(a->v->children[0], k, args[1].v, dp_ev_row(&args[1], i)))
          found = true;
      }
      rc = !found && saw_null ? dp_vector_append_null(v) : dp_vector_append_bool(v, found);
      break;
    }
    case DP_F_MAP_KEYS:
    case DP_F_MAP_VALUES: {
      int64_t s, end;
      dp_vector_list_bounds(a->v, r, &s, &end);
      const dp_vector *part = a->v->children[0]->children[id == DP_F_MAP_KEYS ? 0 : 1];
      for (int64_t k = s; k < end && !rc; k++) rc = dp_vector_append_from(v->children[0], part, k);
      if (!rc) rc = dp_vector_append_list(v);
      break;
    }
    case DP_F_ARRAY:
      for (int k = 0; k < nargs && !rc; k++)
        rc = dp_vector_append_from(v->children[0], args[k].v, dp_ev_row(&args[k], i));
      if (!rc) rc = dp_vector_append_list(v);
      break;
    case DP_F_MAP: {
      /* a key given twice keeps its last value (Flink's MAP[..]) */
      int64_t first = v->children[0]->length;
      for (int k = 0; k + 1 < nargs && !rc; k += 2) {
        dp_vector *keys = dp_vector_map_keys(v), *vals = dp_vector_map_values(v);
        int64_t dup = -1;
        for (int64_t q = first; q < keys->length && dup < 0; q++)
          if (dp_vector_row_equal(keys, q, args[k].v, dp_ev_row(&args[k], i))) dup = q;
        if (dup >= 0) continue; /* written already, with its last value (below) */
        int last = k;
        for (int q = k + 2; q + 1 < nargs; q += 2)
          if (dp_vector_row_equal(args[q].v, dp_ev_row(&args[q], i), args[k].v, dp_ev_row(&args[k], i)))
            last = q;
        rc = dp_vector_append_from(keys, args[k].v, dp_ev_row(&args[k], i));
        if (!rc) rc = dp_vector_append_from(vals, args[last + 1].v, dp_ev_row(&args[last + 1], i));
        if (!rc) rc = dp_vector_append_struct(v->children[0]);
      }
      if (!rc) rc = dp_vector_append_list(v);
      break;
    }
    case DP_F_ROW:
      for (int k = 0; k < nargs && k < v->nchildren && !rc; k++)
        rc = dp_vector_append_from(v->children[k], args[k].v, dp_ev_row(&args[k], i));
      if (!rc) rc = dp_vector_append_struct(v);
      break;
    default: rc = dp_ev_fail(c, e, DIPPER_INTERNAL, "no collection kernel for %s", e->u.call.fn->name); break;
    }
  }
  if (rc) {
    dp_vector_free(v);
    return rc;
  }
  *out = v;
  return DIPPER_OK;
}

dp_ev_kernel dp_ev_kernel_coll(int fn_id) {
  switch (fn_id) {
  case DP_F_ELEMENT_AT:
  case DP_F_CARDINALITY:
  case DP_F_ARRAY_CONTAINS:
  case DP_F_MAP_KEYS:
  case DP_F_MAP_VALUES:
  case DP_F_ARRAY:
  case DP_F_MAP:
  case DP_F_ROW: return k_coll;
  default: return is_array_fn(fn_id) ? k_coll : NULL;
  }
}
