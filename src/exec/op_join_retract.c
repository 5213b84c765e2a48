/*
** op_join_retract.c — an equi-join (inner, LEFT, RIGHT or FULL) of two
** streams of which one at least is updating (changelog.h), or an outer one
** of two append-only streams without a time range: Flink's regular join.
**
** Each side keeps its live rows, a multiset, chained per join key (a hash
** table of the keys, a row's chain link and alive flag beside it).  A
** micro-batch takes the left input to its end, then the right: a +I/+U row
** is stored on its side and joined with the other side's live rows, each
** match emitted as +I; a -U/-D row takes back one equal live row of its side
** (a retraction of a row that is not there takes nothing back and emits
** nothing) and each match with the other side is emitted as -D (an inner
** join emits each match with its input row's kind instead, +I/+U/-U/-D, as
** Flink's inner join forwards them; an outer one sends +I and -D).  So the
** batch's output is exactly L'⋈R' − L⋈R, the left batch joined with the old
** right rows plus the new left rows joined with the right batch.  A row
** with a NULL key matches nothing and is not kept.  The residual condition
** (cond beyond the keys) decides which pairs match: before a batch of one
** side is applied, every pair of its rows with the other side's live rows
** of their key is gathered and the condition evaluated over them at once
** (the other side does not change while one side's batch is applied).
**
** Outer joins, as Flink's StreamingJoinOperator: every stored row counts
** its matches (nmatch).  A row of a preserved side with no match is emitted
** padded with NULLs (+I); when its first match arrives, the padded row is
** taken back (-D) before the match is emitted (+I); when its last match
** goes (-D), the padded row comes back (+I); a retraction of the row itself
** takes back its matches or, with none, its padded row (-D).  A row of a
** preserved side with a NULL key is emitted padded at once (and taken back
** padded), never stored.
**
** Removed rows stay in the store, dead, until end_batch compacts a side
** whose dead rows outnumber its live ones (and are at least 1,024), so a
** row is copied O(1) times.  Checkpoints write each side's live rows in
** store order (whole state; vector_codec), which a restore chains again in
** the same order: matches come out in the order of the run that saved.  An
** outer join (version 4) writes each side's match counts after its rows;
** both versions end with the TTL lists (versions 1 and 2 had none).
**
** State TTL (table.exec.state.ttl / STATE_TTL per side, state_ttl.h): a
** stored row not written for its side's TTL is dropped, without output,
** before a micro-batch's inputs are read; a row is written when stored and,
** on a preserved side, when its match count changes (Flink keeps the count
** in the row's state entry).  The other side's counts stay, as in Flink.
*/
#include <stdlib.h>
#include <string.h>

#include "core/vector_codec.h"
#include "exec/changelog.h"
#include "exec/eval.h"
#include "exec/hashtable.h"
#include "exec/state_ttl.h"

/* 1 an inner join's, 2 the same with the match counts (an outer join's);
** 3 and 4 the same followed by the TTL lists (restore reads all four). */
#define STATE_VERSION 3
#define STATE_VERSION_OUTER 4

typedef struct jside {
  int nkeys;
  const int *keys;       /* the side's key columns */
  dp_hashtable ht;       /* key -> key id */
  bool has_ht;
  int64_t *head, hcap;   /* per key id: the newest row of its chain, -1 */
  dp_batch *rows;        /* stored rows: every column of the side */
  int64_t *next, *kid, rcap;
  uint8_t *alive;
  int64_t *nmatch;       /* per stored row: its live matches */
  int64_t live;
  bool outer;            /* a preserved side: unmatched rows come out padded */
  dp_state_ttl ttl;      /* ttl.ttl > 0: the stored rows by last write (state_ttl.h) */
} jside;

typedef struct jr_state {
  jside side[2];
  int nl, nr;
  bool outer;                /* LEFT, RIGHT or FULL */
  dp_batch *out, *pairs;     /* pairs: the candidate matches of a batch, for cond */
  int64_t *pstart, ps_cap;   /* per batch row r: its pairs [pstart[r], pstart[r+1]) */
  int64_t *pm, pm_cap;       /* per pair: the other side's stored row */
  uint8_t *pass;             /* per pair: it matches (cond holds) */
  int64_t pass_cap;
  bool done;
} jr_state;

static void side_free(jside *s) {
  if (s->has_ht) dp_ht_free(&s->ht);
  dp_batch_free(s->rows);
  free(s->head);
  free(s->next);
  free(s->kid);
  free(s->alive);
  free(s->nmatch);
  dp_state_ttl_free(&s->ttl);
  memset(s, 0, sizeof *s);
}

static void jr_close(dp_op *op) {
  jr_state *st = op->state;
  if (!st) return;
  side_free(&st->side[0]);
  side_free(&st->side[1]);
  dp_batch_free(st->out);
  dp_batch_free(st->pairs);
  free(st->pstart);
  free(st->pm);
  free(st->pass);
  free(st);
  op->state = NULL;
}

static int side_open(jside *s, const dp_schema *schema, int nkeys, const int *keys) {
  const dp_type *types[64];
  s->nkeys = nkeys;
  s->keys = keys;
  for (int i = 0; i < nkeys; i++) types[i] = schema->cols[keys[i]].type;
  if (dp_ht_init(&s->ht, nkeys, types) != DIPPER_OK) return DIPPER_NOMEM;
  s->has_ht = true;
  s->rows = dp_batch_new(schema, 0);
  return s->rows ? DIPPER_OK : DIPPER_NOMEM;
}

static int open_state(dp_op *op) {
  const dp_plan *p = op->plan;
  jr_state *st = calloc(1, sizeof *st);
  if (!st) return DIPPER_NOMEM;
  op->state = st;
  const dp_schema *ls = &p->inputs[0]->schema, *rs = &p->inputs[1]->schema;
  int nk = p->u.join.nkeys;
  if (nk <= 0 || nk > 64)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "a join of updating inputs needs 1 to 64 equality keys (left.k = right.k), "
                    "this one has %d",
                    nk);
  for (int i = 0; i < nk; i++)
    if (!dp_type_equal(ls->cols[p->u.join.left_keys[i]].type,
                       rs->cols[p->u.join.right_keys[i]].type))
      return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                      "the join keys `%s` and `%s` have different types; CAST one to the "
                      "other's type",
                      ls->cols[p->u.join.left_keys[i]].name, rs->cols[p->u.join.right_keys[i]].name);
  st->nl = ls->ncols;
  st->nr = rs->ncols;
  int rc = side_open(&st->side[0], ls, nk, p->u.join.left_keys);
  if (!rc) rc = side_open(&st->side[1], rs, nk, p->u.join.right_keys);
  if (rc) return rc;
  dp_join_kind k = p->u.join.kind;
  st->side[0].outer = k == DP_J_LEFT || k == DP_J_FULL;
  st->side[1].outer = k == DP_J_RIGHT || k == DP_J_FULL;
  st->outer = st->side[0].outer || st->side[1].outer;
  for (int w = 0; w < 2 && !rc; w++)
    if (p->props.state_ttl[w] > 0) rc = dp_state_ttl_init(&st->side[w].ttl, p->props.state_ttl[w]);
  if (rc) return rc;
  if (k != DP_J_INNER && !st->outer)
    return dp_error(op->ex->diags, DIPPER_UNSUPPORTED, p->span,
                    "a %s of updating inputs is not supported", dp_join_name(k));
  st->out = dp_batch_new(&p->schema, 0);
  st->pairs = dp_batch_new(&p->schema, 0);
  if (!st->out || !st->pairs) return DIPPER_NOMEM;
  st->out->change = dp_vector_new(dp_type_of(DP_T_TINYINT), 0);
  return st->out->change ? DIPPER_OK : DIPPER_NOMEM;
}

static int jr_open(dp_op *op) {
  int rc = open_state(op);
  if (rc != DIPPER_OK) jr_close(op);
  return rc;
}

static int grow(void *pp, int64_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return DIPPER_OK;
  int64_t n = *cap ? *cap : 256;
  while (n < need) n *= 2;
  char *p;
  memcpy(&p, pp, sizeof p);
  char *g = realloc(p, (size_t)n * elem);
  if (!g) return DIPPER_NOMEM;
  memcpy(pp, &g, sizeof g);
  *cap = n;
  return DIPPER_OK;
}

/* The key columns of b on side s, in key order. */
static void key_cols(const jside *s, const dp_batch *b, const dp_vector **out) {
  for (int i = 0; i < s->nkeys; i++) out[i] = b->cols[s->keys[i]];
}

static bool null_key(const jside *s, const dp_batch *b, int64_t r) {
  for (int i = 0; i < s->nkeys; i++)
    if (dp_vector_is_null(b->cols[s->keys[i]], r)) return true;
  return false;
}

/* Store row r of b on side s (its key already hashed), with no match yet. */
static int store(jside *s, const dp_batch *b, int64_t r, uint64_t hash) {
  const dp_vector *k[64];
  key_cols(s, b, k);
  int64_t id = dp_ht_find(&s->ht, k, hash, r);
  int rc = DIPPER_OK;
  if (id < 0 && (rc = dp_ht_add(&s->ht, k, r, hash, &id))) return rc;
  int64_t cap = s->hcap;
  if (id >= cap) {
    if ((rc = grow(&s->head, &s->hcap, id + 1, sizeof *s->head))) return rc;
    for (int64_t i = cap; i < s->hcap; i++) s->head[i] = -1;
  }
  int64_t row = s->rows->nrows;
  cap = s->rcap;
  if ((rc = grow(&s->next, &cap, row + 1, sizeof *s->next))) return rc;
  cap = s->rcap;
  if ((rc = grow(&s->kid, &cap, row + 1, sizeof *s->kid))) return rc;
  cap = s->rcap;
  if ((rc = grow(&s->alive, &cap, row + 1, sizeof *s->alive))) return rc;
  cap = s->rcap;
  if ((rc = grow(&s->nmatch, &cap, row + 1, sizeof *s->nmatch))) return rc;
  s->rcap = cap;
  for (int c = 0; c < b->ncols && !rc; c++) rc = dp_vector_append_from(s->rows->cols[c], b->cols[c], r);
  if (rc) return rc;
  s->rows->nrows++;
  s->next[row] = s->head[id];
  s->kid[row] = id;
  s->alive[row] = 1;
  s->nmatch[row] = 0;
  s->head[id] = row;
  s->live++;
  return DIPPER_OK;
}

static bool same_row(const dp_batch *a, int64_t i, const dp_batch *b, int64_t j) {
  for (int c = 0; c < a->ncols; c++)
    if (!dp_ht_row_equal(a->cols[c], i, b->cols[c], j)) return false;
  return true;
}

/* The first live row of s's chain for row r's key (-1: none). */
static int64_t chain_of(const jside *s, const jside *probe, const dp_batch *b, int64_t r,
                        uint64_t hash) {
  const dp_vector *k[64];
  key_cols(probe, b, k);
  int64_t id = dp_ht_find(&s->ht, k, hash, r);
  return id < 0 || id >= s->hcap ? -1 : s->head[id];
}

/* Take back one live row of s equal to row r of b: its store row, or -1
** when there is none. */
static int64_t take_back(jside *s, const dp_batch *b, int64_t r, uint64_t hash) {
  for (int64_t m = chain_of(s, s, b, r, hash); m >= 0; m = s->next[m])
    if (s->alive[m] && same_row(s->rows, m, b, r)) {
      s->alive[m] = 0;
      s->live--;
      if (s->ttl.ttl > 0) dp_state_ttl_remove(&s->ttl, m);
      return m;
    }
  return -1;
}

/* Append (left row, right row) to out as `kind`. */
static int put_match(jr_state *st, const dp_batch *l, int64_t li, const dp_batch *r, int64_t ri,
                     int kind) {
  int rc = DIPPER_OK;
  for (int c = 0; c < st->nl && !rc; c++) rc = dp_vector_append_from(st->out->cols[c], l->cols[c], li);
  for (int c = 0; c < st->nr && !rc; c++)
    rc = dp_vector_append_from(st->out->cols[st->nl + c], r->cols[c], ri);
  if (!rc) rc = dp_vector_append_i64(st->out->change, kind);
  if (!rc) st->out->nrows++;
  return rc;
}

/* Row r of b (side w) padded with NULLs for the other side, as `kind`. */
static int put_padded(jr_state *st, int w, const dp_batch *b, int64_t r, int kind) {
  int rc = DIPPER_OK;
  for (int c = 0; c < st->nl && !rc; c++)
    rc = w == 0 ? dp_vector_append_from(st->out->cols[c], b->cols[c], r)
                : dp_vector_append_null(st->out->cols[c]);
  for (int c = 0; c < st->nr && !rc; c++)
    rc = w == 1 ? dp_vector_append_from(st->out->cols[st->nl + c], b->cols[c], r)
                : dp_vector_append_null(st->out->cols[st->nl + c]);
  if (!rc) rc = dp_vector_append_i64(st->out->change, kind);
  if (!rc) st->out->nrows++;
  return rc;
}

/* The candidate matches of every row of b (side w) with the other side's
** live rows of its key, and which of them the condition passes. */
static int gather_pairs(dp_op *op, const dp_batch *b, int w) {
  jr_state *st = op->state;
  jside *me = &st->side[w], *other = &st->side[1 - w];
  int rc = grow(&st->pstart, &st->ps_cap, b->nrows + 1, sizeof *st->pstart);
  if (rc) return rc;
  const dp_vector *k[64];
  key_cols(me, b, k);
  int64_t np = 0;
  for (int64_t r = 0; r < b->nrows && !rc; r++) {
    st->pstart[r] = np;
    if (null_key(me, b, r)) continue;
    uint64_t h = dp_ht_hash_row(k, me->nkeys, r);
    for (int64_t m = chain_of(other, me, b, r, h); m >= 0 && !rc; m = other->next[m]) {
      if (!other->alive[m]) continue;
      if ((rc = grow(&st->pm, &st->pm_cap, np + 1, sizeof *st->pm))) break;
      st->pm[np++] = m;
    }
  }
  st->pstart[b->nrows] = np;
  if (!rc) rc = grow(&st->pass, &st->pass_cap, np ? np : 1, sizeof *st->pass);
  if (rc) return rc;
  const dp_expr *cond = op->plan->u.join.cond;
  memset(st->pass, 1, (size_t)np);
  if (!cond || np == 0) return DIPPER_OK;
  /* Every pair as an output row, for the condition (over the join's schema). */
  dp_batch *pb = st->pairs;
  dp_batch_clear(pb);
  for (int64_t r = 0; r < b->nrows && !rc; r++)
    for (int64_t i = st->pstart[r]; i < st->pstart[r + 1] && !rc; i++) {
      const dp_batch *l = w == 0 ? b : other->rows, *rr = w == 0 ? other->rows : b;
      int64_t li = w == 0 ? r : st->pm[i], ri = w == 0 ? st->pm[i] : r;
      for (int c = 0; c < st->nl && !rc; c++) rc = dp_vector_append_from(pb->cols[c], l->cols[c], li);
      for (int c = 0; c < st->nr && !rc; c++)
        rc = dp_vector_append_from(pb->cols[st->nl + c], rr->cols[c], ri);
      if (!rc) pb->nrows++;
    }
  dp_vector *mask = NULL;
  if (!rc) rc = dp_eval(op->ex, cond, pb, &mask);
  for (int64_t i = 0; i < np && !rc; i++)
    st->pass[i] = !dp_vector_is_null(mask, i) && dp_vector_get_bool(mask, i);
  dp_vector_free(mask);
  dp_batch_clear(pb);
  return rc;
}

/* One input batch of side `w` (0 left, 1 right). */
static int consume_side(dp_op *op, const dp_batch *b, int w) {
  jr_state *st = op->state;
  jside *me = &st->side[w], *other = &st->side[1 - w];
  op->metrics.rows_in += b->nrows;
  int rc = gather_pairs(op, b, w);
  const dp_vector *k[64];
  key_cols(me, b, k);
  int64_t now = op->ex->batch_start_time;
  for (int64_t r = 0; r < b->nrows && !rc; r++) {
    int kind = dp_change_of(b, r);
    bool back = dp_change_retracts(kind);
    /* inner: the input's kind forwarded; outer: +I and -D only (Flink's) */
    int out_kind = !st->outer ? kind : back ? DP_CHANGE_DELETE : DP_CHANGE_INSERT;
    if (null_key(me, b, r)) {
      if (me->outer) rc = put_padded(st, w, b, r, out_kind);
      continue;
    }
    uint64_t h = dp_ht_hash_row(k, me->nkeys, r);
    int64_t mine;
    if (back) {
      if ((mine = take_back(me, b, r, h)) < 0) continue; /* not there: nothing to take back */
    } else {
      mine = me->rows->nrows;
      if ((rc = store(me, b, r, h))) break;
      if (me->ttl.ttl > 0 && (rc = dp_state_ttl_touch(&me->ttl, mine, now))) break;
    }
    int64_t matched = 0;
    for (int64_t i = st->pstart[r]; i < st->pstart[r + 1] && !rc; i++) {
      if (!st->pass[i]) continue;
      int64_t m = st->pm[i];
      matched++;
      /* the other row's padded form goes before its first match, comes back after its last */
      if (!back && other->outer && other->nmatch[m] == 0)
        rc = put_padded(st, 1 - w, other->rows, m, DP_CHANGE_DELETE);
      if (!rc) rc = w == 0 ? put_match(st, b, r, other->rows, m, out_kind)
                           : put_match(st, other->rows, m, b, r, out_kind);
      other->nmatch[m] += back ? -1 : 1;
      /* a preserved row's count is written with it: its TTL starts again */
      if (!rc && other->outer && other->ttl.ttl > 0) rc = dp_state_ttl_touch(&other->ttl, m, now);
      if (!rc && back && other->outer && other->nmatch[m] == 0)
        rc = put_padded(st, 1 - w, other->rows, m, DP_CHANGE_INSERT);
    }
    if (!back) me->nmatch[mine] = matched;
    if (!rc && me->outer && matched == 0) rc = put_padded(st, w, b, r, out_kind);
  }
  return rc;
}

static int consume_left(dp_op *op, const dp_batch *b) { return consume_side(op, b, 0); }
static int consume_right(dp_op *op, const dp_batch *b) { return consume_side(op, b, 1); }

/* The stored rows not written for their side's TTL go, without output (as
** Flink's state TTL); the other side's match counts keep them, as Flink's
** do: a row that loses such a match later is not padded again. */
static int expire_ttl(jr_state *st, int64_t now) {
  for (int w = 0; w < 2; w++) {
    jside *s = &st->side[w];
    if (s->ttl.ttl <= 0) continue;
    int64_t *ids = NULL, n = 0;
    int rc = dp_state_ttl_expire(&s->ttl, now, &ids, &n);
    for (int64_t i = 0; i < n && !rc; i++) {
      int64_t m = ids[i];
      if (m >= s->rows->nrows) rc = DIPPER_INTERNAL;
      else if (s->alive[m]) {
        s->alive[m] = 0;
        s->live--;
      }
    }
    free(ids);
    if (rc) return rc;
  }
  return DIPPER_OK;
}

static int jr_next(dp_op *op, dp_batch **out) {
  jr_state *st = op->state;
  *out = NULL;
  if (st->done) return DIPPER_OK;
  dp_batch_clear(st->out);
  int rc = expire_ttl(st, op->ex->batch_start_time);
  if (!rc) rc = dp_op_drain(op->children[0], consume_left, op);
  if (!rc) rc = dp_op_drain(op->children[1], consume_right, op);
  if (rc) return rc;
  st->done = true;
  dp_batch *b = st->out;
  op->metrics.state_rows = st->side[0].live + st->side[1].live;
  if (b->nrows == 0) return DIPPER_OK;
  op->metrics.rows_out += b->nrows;
  *out = b;
  return DIPPER_OK;
}

/* Side s holding its live rows only, in store order, chained again. */
static int compact(jside *s) {
  int64_t n = s->rows->nrows;
  if (s->live == n) return DIPPER_OK;
  int64_t *keep = malloc((size_t)(s->live ? s->live : 1) * sizeof *keep);
  int64_t *remap = s->ttl.ttl > 0 ? malloc((size_t)n * sizeof *remap) : NULL;
  if (!keep || (s->ttl.ttl > 0 && !remap)) {
    free(keep);
    free(remap);
    return DIPPER_NOMEM;
  }
  int64_t k = 0;
  for (int64_t r = 0; r < n; r++) {
    if (remap) remap[r] = s->alive[r] ? k : -1;
    if (s->alive[r]) {
      s->nmatch[k] = s->nmatch[r]; /* k <= r */
      keep[k++] = r;
    }
  }
  dp_batch *fresh = dp_batch_new(s->rows->schema, k);
  int rc = fresh ? dp_batch_take(fresh, s->rows, keep, 0, k) : DIPPER_NOMEM;
  free(keep);
  if (!rc && remap) rc = dp_state_ttl_renumber(&s->ttl, remap, n);
  free(remap);
  if (rc) {
    dp_batch_free(fresh);
    return rc;
  }
  fresh->nrows = k;
  dp_batch_free(s->rows);
  s->rows = fresh;
  /* the key table keeps its ids; the chains are rebuilt in store order */
  for (int64_t i = 0; i < s->hcap; i++) s->head[i] = -1;
  const dp_vector *kc[64];
  key_cols(s, s->rows, kc);
  for (int64_t r = 0; r < k; r++) {
    uint64_t h = dp_ht_hash_row(kc, s->nkeys, r);
    int64_t id = dp_ht_find(&s->ht, kc, h, r);
    s->kid[r] = id;
    s->alive[r] = 1;
    s->next[r] = s->head[id];
    s->head[id] = r;
  }
  return DIPPER_OK;
}

static int jr_end_batch(dp_op *op) {
  jr_state *st = op->state;
  st->done = false;
  int rc = DIPPER_OK;
  for (int w = 0; w < 2 && !rc; w++) {
    jside *s = &st->side[w];
    int64_t dead = s->rows->nrows - s->live;
    if (dead >= 1024 && dead > s->live) rc = compact(s);
  }
  return rc;
}

static int jr_save(dp_op *op, dp_buf *out) {
  jr_state *st = op->state;
  dp_put_u8(out, st->outer ? STATE_VERSION_OUTER : STATE_VERSION);
  for (int w = 0; w < 2; w++) {
    jside *s = &st->side[w];
    int rc = compact(s);
    if (!rc) rc = dp_batch_encode(s->rows, 0, s->rows->nrows, out);
    if (rc) return rc;
    if (st->outer) dp_put_i64s(out, s->nmatch, NULL, s->rows->nrows);
  }
  /* the TTL lists last: which sides have one, then each list */
  uint8_t mask = (st->side[0].ttl.ttl > 0 ? 1 : 0) | (st->side[1].ttl.ttl > 0 ? 2 : 0);
  dp_put_u8(out, mask);
  for (int w = 0; w < 2; w++)
    if (mask & (1 << w)) dp_state_ttl_save(&st->side[w].ttl, out);
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int load_side(jside *s, bool outer, dp_rd *in) {
  if (s->rows->nrows != 0) return DIPPER_CORRUPT;
  dp_batch *tmp = dp_batch_new(s->rows->schema, 0);
  if (!tmp) return DIPPER_NOMEM;
  int rc = dp_batch_decode(in, tmp) == DIPPER_OK ? DIPPER_OK : DIPPER_CORRUPT;
  const dp_vector *kc[64];
  key_cols(s, tmp, kc);
  for (int64_t r = 0; r < tmp->nrows && !rc; r++) {
    if (null_key(s, tmp, r)) rc = DIPPER_CORRUPT; /* never stored */
    else rc = store(s, tmp, r, dp_ht_hash_row(kc, s->nkeys, r));
  }
  dp_batch_free(tmp);
  if (rc || !outer) return rc;
  if (!dp_get_i64s(in, s->nmatch, NULL, s->rows->nrows)) return DIPPER_CORRUPT;
  for (int64_t r = 0; r < s->rows->nrows; r++)
    if (s->nmatch[r] < 0) return DIPPER_CORRUPT;
  return DIPPER_OK;
}

/* The TTL lists jr_save wrote (none in a state of version 1 or 2).  A side
** with a TTL and no list (saved before the TTL was set) counts its rows as
** written now; a list of a side whose TTL was dropped since is read and
** forgotten (save compacts first: no row it expired is left in the store). */
static int load_ttl(jr_state *st, dp_rd *in, bool lists, int64_t now) {
  uint8_t mask = lists ? dp_get_u8(in) : 0;
  if (in->bad || mask > 3) return DIPPER_CORRUPT;
  for (int w = 0; w < 2; w++) {
    jside *s = &st->side[w];
    int64_t n = s->rows->nrows;
    int rc = DIPPER_OK;
    if (!(mask & (1 << w))) {
      for (int64_t r = 0; r < n && s->ttl.ttl > 0 && !rc; r++) rc = dp_state_ttl_touch(&s->ttl, r, now);
    } else if (s->ttl.ttl > 0) {
      rc = dp_state_ttl_load(&s->ttl, in, n);
    } else {
      dp_state_ttl scratch;
      rc = dp_state_ttl_init(&scratch, 1);
      if (!rc) rc = dp_state_ttl_load(&scratch, in, n);
      dp_state_ttl_free(&scratch);
    }
    if (rc) return rc;
  }
  return DIPPER_OK;
}

static int jr_restore(dp_op *op, dp_rd *in) {
  jr_state *st = op->state;
  const char *what = "its state is damaged";
  int rc = DIPPER_CORRUPT;
  int v = dp_get_u8(in);
  if (v != (st->outer ? STATE_VERSION_OUTER : STATE_VERSION) && v != (st->outer ? 2 : 1)) {
    what = "its state is of another version";
  } else {
    rc = load_side(&st->side[0], st->outer, in);
    if (!rc) rc = load_side(&st->side[1], st->outer, in);
    if (!rc) rc = load_ttl(st, in, v >= STATE_VERSION, op->ex->batch_start_time);
    if (!rc && !dp_rd_done(in)) rc = DIPPER_CORRUPT;
  }
  if (rc != DIPPER_CORRUPT) return rc;
  return dp_error(op->ex->diags, DIPPER_CORRUPT, op->plan->span,
                  "cannot restore the join of updating inputs from the checkpoint: %s; start "
                  "the query with a new checkpoint folder", what);
}

const dp_op_class dp_op_join_retract = {
    .name = "RetractJoin",
    .open = jr_open,
    .next = jr_next,
    .end_batch = jr_end_batch,
    .close = jr_close,
    .save_state = jr_save,
    .restore_state = jr_restore,
};
