/*
** eval_coll.c — kernels of the collection functions: ELEMENT_AT (arrays are
** 1-based, a negative index counts from the end; a missing element or key
** is NULL), CARDINALITY, ARRAY_CONTAINS, MAP_KEYS, MAP_VALUES, the
** constructors ARRAY[..], MAP[..] and ROW(..), and Flink's ARRAY_REVERSE,
** ARRAY_DISTINCT, ARRAY_POSITION, ARRAY_REMOVE, ARRAY_MAX, ARRAY_MIN and
** ARRAY_JOIN, ARRAY_SLICE, ARRAY_SORT (a stable merge sort), ELEMENT
** (array_fn), ARRAY_CONCAT, ARRAY_UNION, ARRAY_EXCEPT, ARRAY_INTERSECT,
** ARRAY_APPEND, ARRAY_PREPEND (array_multi), MAP_FROM_ARRAYS, MAP_ENTRIES
** and MAP_UNION (map_fn); functions.def has their rules.  ARRAY_DISTINCT
** and the set functions compare each element with the ones kept before it
** (a NULL equals a NULL there): arrays in SQL rows are small.
**
** Values are copied row by row into the result's child vectors; a map
** lookup is a scan of the row's entries (maps in SQL rows are small).
*/
#include <stdlib.h>
#include <string.h>

#include "exec/eval_int.h"

/* Equal, a NULL equal to a NULL only (the set functions' rule). */
static bool same_elem(const dp_vector *x, int64_t i, const dp_vector *y, int64_t j) {
  bool xn = dp_vector_is_null(x, i), yn = dp_vector_is_null(y, j);
  return xn || yn ? xn && yn : dp_vector_row_equal(x, i, y, j);
}

/* Does rows [s, end) of el hold an element same_elem to row k of x? */
static bool holds(const dp_vector *el, int64_t s, int64_t end, const dp_vector *x, int64_t k) {
  for (int64_t q = s; q < end; q++)
    if (same_elem(el, q, x, k)) return true;
  return false;
}

typedef struct sort_key {
  const dp_vector *el;
  bool asc, nulls_first;
} sort_key;

static int sort_cmp(const sort_key *k, int64_t x, int64_t y) {
  bool xn = dp_vector_is_null(k->el, x), yn = dp_vector_is_null(k->el, y);
  if (xn || yn) return xn == yn ? 0 : xn == k->nulls_first ? -1 : 1;
  int c = dp_vector_row_compare(k->el, x, k->el, y);
  return k->asc ? c : -c;
}

/* Stable bottom-up merge sort of the n row numbers in ix (tmp: n more). */
static void sort_rows(int64_t *ix, int64_t *tmp, int64_t n, const sort_key *k) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) tmp[o++] = sort_cmp(k, ix[b], ix[a]) < 0 ? ix[b++] : ix[a++];
      while (a < mid) tmp[o++] = ix[a++];
      while (b < hi) tmp[o++] = ix[b++];
    }
    memcpy(ix, tmp, (size_t)n * sizeof *ix);
  }
}

static int array_sort_row(const dp_ev_arg *args, int nargs, int64_t i, int64_t s, int64_t end, dp_vector *v) {
  const dp_vector *el = args[0].v->children[0];
  sort_key k = {el, true, true};
  if (nargs > 1) k.asc = k.nulls_first = dp_vector_get_bool(args[1].v, dp_ev_row(&args[1], i));
  if (nargs > 2) k.nulls_first = dp_vector_get_bool(args[2].v, dp_ev_row(&args[2], i));
  int64_t n = end - s;
  int64_t *ix = n ? malloc(2 * (size_t)n * sizeof *ix) : NULL;
  if (n && !ix) return DIPPER_NOMEM;
  for (int64_t q = 0; q < n; q++) ix[q] = s + q;
  sort_rows(ix, ix + n, n, &k);
  int rc = DIPPER_OK;
  for (int64_t q = 0; q < n && !rc; q++) rc = dp_vector_append_from(v->children[0], el, ix[q]);
  free(ix);
  return rc ? rc : dp_vector_append_list(v);
}

/* ARRAY_SLICE's rows [*from, *to) of an array of n elements (Flink's
** ArraySliceFunction: offsets 1-based, negative from the end, 0 the first). */
static void slice_bounds(int64_t n, int64_t start, int64_t stop, int64_t *from, int64_t *to) {
  if (n == 0) {
    *from = *to = 0;
    return;
  }
  if (start < 0) start += n + 1;
  if (stop < 0) stop += n + 1;
  if (start < 1) start = 1;
  stop = stop == 0 ? 1 : stop < n ? stop : n;
  *from = start - 1;
  *to = stop < start ? start - 1 : stop;
}

/* Row i of a Flink array function into v. */
static int array_fn(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t i, dp_vector *v) {
  int id = e->u.call.fn->id;
  const dp_vector *a = args[0].v, *el = a->children[0];
  int64_t s, end, r = dp_ev_row(&args[0], i);
  dp_vector_list_bounds(a, r, &s, &end);
  int rc = DIPPER_OK;
  const dp_vector *x = e->u.call.nargs > 1 ? args[1].v : NULL;
  int64_t xr = x ? dp_ev_row(&args[1], i) : 0;
  switch (id) {
  case DP_F_ARRAY_SLICE: {
    int64_t from, to;
    slice_bounds(end - s, dp_ev_i64(&args[1], i), e->u.call.nargs > 2 ? dp_ev_i64(&args[2], i) : end - s, &from,
                 &to);
    for (int64_t k = s + from; k < s + to && !rc; k++) rc = dp_vector_append_from(v->children[0], el, k);
    return rc ? rc : dp_vector_append_list(v);
  }
  case DP_F_ARRAY_SORT: return array_sort_row(args, e->u.call.nargs, i, s, end, v);
  case DP_F_ELEMENT:
    if (end - s > 1)
      return dp_ev_data_error(c, e, "ELEMENT of an array of %lld elements: it takes an array of at most one",
                              (long long)(end - s));
    return end == s ? dp_vector_append_null(v) : dp_vector_append_from(v, el, s);
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

/* The set functions and the others of two or more arrays, row i. */
static int array_multi(const dp_expr *e, const dp_ev_arg *args, int64_t i, dp_vector *v) {
  int id = e->u.call.fn->id, nargs = e->u.call.nargs;
  dp_vector *out = v->children[0];
  int64_t first = out->length;
  int rc = DIPPER_OK;
  int64_t s0, e0;
  dp_vector_list_bounds(args[0].v, dp_ev_row(&args[0], i), &s0, &e0);
  const dp_vector *el0 = args[0].v->children[0];
  switch (id) {
  case DP_F_ARRAY_CONCAT:
  case DP_F_ARRAY_UNION:
    for (int a = 0; a < nargs && !rc; a++) {
      int64_t s, end;
      dp_vector_list_bounds(args[a].v, dp_ev_row(&args[a], i), &s, &end);
      const dp_vector *el = args[a].v->children[0];
      for (int64_t k = s; k < end && !rc; k++)
        if (id == DP_F_ARRAY_CONCAT || !holds(out, first, out->length, el, k))
          rc = dp_vector_append_from(out, el, k);
    }
    break;
  case DP_F_ARRAY_APPEND:
  case DP_F_ARRAY_PREPEND: {
    const dp_vector *x = args[1].v;
    int64_t xr = dp_ev_row(&args[1], i);
    if (id == DP_F_ARRAY_PREPEND) rc = dp_vector_append_from(out, x, xr);
    for (int64_t k = s0; k < e0 && !rc; k++) rc = dp_vector_append_from(out, el0, k);
    if (!rc && id == DP_F_ARRAY_APPEND) rc = dp_vector_append_from(out, x, xr);
    break;
  }
  default: { /* ARRAY_EXCEPT, ARRAY_INTERSECT */
    int64_t s1, e1;
    dp_vector_list_bounds(args[1].v, dp_ev_row(&args[1], i), &s1, &e1);
    const dp_vector *el1 = args[1].v->children[0];
    for (int64_t k = s0; k < e0 && !rc; k++) {
      bool in1 = holds(el1, s1, e1, el0, k);
      if ((id == DP_F_ARRAY_EXCEPT ? !in1 : in1) && !holds(out, first, out->length, el0, k))
        rc = dp_vector_append_from(out, el0, k);
    }
    break;
  }
  }
  return rc ? rc : dp_vector_append_list(v);
}

/* Append one map of the entries (keys[kr[q]], vals[vr[q]]), q < n, in order:
** a key keeps its first position and its last value (Flink's MAP[..]). */
typedef struct map_src {
  const dp_vector *keys, *vals;
  int64_t kr, vr;
} map_src;

static int append_map(dp_vector *v, const map_src *src, int64_t n) {
  dp_vector *keys = dp_vector_map_keys(v), *vals = dp_vector_map_values(v);
  int64_t first = keys->length;
  int rc = DIPPER_OK;
  for (int64_t q = 0; q < n && !rc; q++) {
    if (holds(keys, first, keys->length, src[q].keys, src[q].kr)) continue;
    int64_t last = q;
    for (int64_t r = q + 1; r < n; r++)
      if (same_elem(src[r].keys, src[r].kr, src[q].keys, src[q].kr)) last = r;
    rc = dp_vector_append_from(keys, src[q].keys, src[q].kr);
    if (!rc) rc = dp_vector_append_from(vals, src[last].vals, src[last].vr);
    if (!rc) rc = dp_vector_append_struct(v->children[0]);
  }
  return rc ? rc : dp_vector_append_list(v);
}

static int map_fn(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t i, dp_vector *v) {
  int id = e->u.call.fn->id, nargs = e->u.call.nargs;
  int64_t s0, e0;
  dp_vector_list_bounds(args[0].v, dp_ev_row(&args[0], i), &s0, &e0);
  if (id == DP_F_MAP_ENTRIES) {
    const dp_vector *entries = args[0].v->children[0];
    dp_vector *row = v->children[0];
    int rc = DIPPER_OK;
    for (int64_t k = s0; k < e0 && !rc; k++) {
      rc = dp_vector_append_from(row->children[0], entries->children[0], k);
      if (!rc) rc = dp_vector_append_from(row->children[1], entries->children[1], k);
      if (!rc) rc = dp_vector_append_struct(row);
    }
    return rc ? rc : dp_vector_append_list(v);
  }
  int64_t n = 0;
  if (id == DP_F_MAP_FROM_ARRAYS) {
    int64_t s1, e1;
    dp_vector_list_bounds(args[1].v, dp_ev_row(&args[1], i), &s1, &e1);
    if (e1 - s1 != e0 - s0)
      return dp_ev_data_error(c, e, "MAP_FROM_ARRAYS: the array of keys has %lld elements, the array of "
                              "values %lld; they must be as long", (long long)(e0 - s0), (long long)(e1 - s1));
    n = e0 - s0;
    map_src *src = n ? malloc((size_t)n * sizeof *src) : NULL;
    if (n && !src) return DIPPER_NOMEM;
    for (int64_t q = 0; q < n; q++)
      src[q] = (map_src){args[0].v->children[0], args[1].v->children[0], s0 + q, s1 + q};
    int rc = append_map(v, src, n);
    free(src);
    return rc;
  }
  /* MAP_UNION */
  for (int a = 0; a < nargs; a++) {
    int64_t s, end;
    dp_vector_list_bounds(args[a].v, dp_ev_row(&args[a], i), &s, &end);
    n += end - s;
  }
  map_src *src = n ? malloc((size_t)n * sizeof *src) : NULL;
  if (n && !src) return DIPPER_NOMEM;
  int64_t q = 0;
  for (int a = 0; a < nargs; a++) {
    int64_t s, end;
    dp_vector_list_bounds(args[a].v, dp_ev_row(&args[a], i), &s, &end);
    const dp_vector *entries = args[a].v->children[0];
    for (int64_t k = s; k < end; k++) src[q++] = (map_src){entries->children[0], entries->children[1], k, k};
  }
  int rc = append_map(v, src, n);
  free(src);
  return rc;
}

static bool is_array_fn(int id) {
  return id == DP_F_ARRAY_REVERSE || id == DP_F_ARRAY_DISTINCT || id == DP_F_ARRAY_POSITION ||
         id == DP_F_ARRAY_REMOVE || id == DP_F_ARRAY_MAX || id == DP_F_ARRAY_MIN || id == DP_F_ARRAY_JOIN ||
         id == DP_F_ARRAY_SLICE || id == DP_F_ARRAY_SORT || id == DP_F_ELEMENT;
}

static bool is_array_multi(int id) {
  return id == DP_F_ARRAY_CONCAT || id == DP_F_ARRAY_UNION || id == DP_F_ARRAY_APPEND || id == DP_F_ARRAY_PREPEND ||
         id == DP_F_ARRAY_EXCEPT || id == DP_F_ARRAY_INTERSECT;
}

static bool is_map_fn(int id) { return id == DP_F_MAP_FROM_ARRAYS || id == DP_F_MAP_ENTRIES || id == DP_F_MAP_UNION; }

static int k_coll(dp_ev *c, const dp_expr *e, const dp_ev_arg *args, int64_t n, dp_vector **out) {
  int id = e->u.call.fn->id;
  int nargs = e->u.call.nargs;
  dp_vector *v = dp_ev_new(e->type, n);
  if (!v) return DIPPER_NOMEM;
  int rc = DIPPER_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    bool constructor = id == DP_F_ARRAY || id == DP_F_MAP || id == DP_F_ROW;
    bool first_only = id == DP_F_ARRAY_CONTAINS || id == DP_F_ARRAY_REMOVE || id == DP_F_ARRAY_APPEND ||
                      id == DP_F_ARRAY_PREPEND;
    if (!constructor && dp_ev_any_null(args, first_only ? 1 : nargs, i)) {
      rc = dp_vector_append_null(v);
      continue;
    }
    if (is_array_fn(id)) {
      rc = array_fn(c, e, args, i, v);
      continue;
    }
    if (is_array_multi(id)) {
      rc = array_multi(e, args, i, v);
      continue;
    }
    if (is_map_fn(id)) {
      rc = map_fn(c, e, args, i, v);
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
  default: return is_array_fn(fn_id) || is_array_multi(fn_id) || is_map_fn(fn_id) ? k_coll : NULL;
  }
}
