/*
** op_join_retract.c — an inner equi-join of two streams of which one at
** least is updating (changelog.h): Flink's regular join over retract
** inputs.
**
** Each side keeps its live rows, a multiset, chained per join key (a hash
** table of the keys, a row's chain link and alive flag beside it).  A
** micro-batch takes the left input to its end, then the right: a +I/+U row
** is stored on its side and joined with the other side's live rows, each
** match emitted as +I; a -U/-D row takes back one equal live row of its side
** (a retraction of a row that is not there takes nothing back and emits
** nothing) and each match with the other side is emitted as -D.  So the
** batch's output is exactly L'⋈R' − L⋈R, the left batch joined with the old
** right rows plus the new left rows joined with the right batch.  A row
** with a NULL key matches nothing and is not kept.  The residual condition
** (cond beyond the keys) filters the matches, kind by kind.
**
** Removed rows stay in the store, dead, until end_batch compacts a side
** whose dead rows outnumber its live ones (and are at least 1,024), so a
** row is copied O(1) times.  Checkpoints write each side's live rows in
** store order (whole state; vector_codec), which a restore chains again in
** the same order: matches come out in the order of the run that saved.
*/
#include <stdlib.h>
#include <string.h>

#include "core/vector_codec.h"
#include "exec/changelog.h"
#include "exec/eval.h"
#include "exec/hashtable.h"

#define STATE_VERSION 1

typedef struct jside {
  int nkeys;
  const int *keys;       /* the side's key columns */
  dp_hashtable ht;       /* key -> key id */
  bool has_ht;
  int64_t *head, hcap;   /* per key id: the newest row of its chain, -1 */
  dp_batch *rows;        /* stored rows: every column of the side */
  int64_t *next, *kid, rcap;
  uint8_t *alive;
  int64_t live;
} jside;

typedef struct jr_state {
  jside side[2];
  int nl, nr;
  dp_batch *out, *kept;
  int64_t *sel, sel_cap;
  bool done;
} jr_state;

static void side_free(jside *s) {
  if (s->has_ht) dp_ht_free(&s->ht);
  dp_batch_free(s->rows);
  free(s->head);
  free(s->next);
  free(s->kid);
  free(s->alive);
  memset(s, 0, sizeof *s);
}

static void jr_close(dp_op *op) {
  jr_state *st = op->state;
  if (!st) return;
  side_free(&st->side[0]);
  side_free(&st->side[1]);
  dp_batch_free(st->out);
  dp_batch_free(st->kept);
  free(st->sel);
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
  st->out = dp_batch_new(&p->schema, 0);
  st->kept = dp_batch_new(&p->schema, 0);
  if (!st->out || !st->kept) return DIPPER_NOMEM;
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

/* Store row r of b on side s (its key already hashed). */
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
  s->rcap = cap;
  for (int c = 0; c < b->ncols && !rc; c++) rc = dp_vector_append_from(s->rows->cols[c], b->cols[c], r);
  if (rc) return rc;
  s->rows->nrows++;
  s->next[row] = s->head[id];
  s->kid[row] = id;
  s->alive[row] = 1;
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

/* Take back one live row of s equal to row r of b; false when there is none. */
static bool take_back(jside *s, const dp_batch *b, int64_t r, uint64_t hash) {
  for (int64_t m = chain_of(s, s, b, r, hash); m >= 0; m = s->next[m])
    if (s->alive[m] && same_row(s->rows, m, b, r)) {
      s->alive[m] = 0;
      s->live--;
      return true;
    }
  return false;
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

/* One input batch of side `w` (0 left, 1 right). */
static int consume_side(dp_op *op, const dp_batch *b, int w) {
  jr_state *st = op->state;
  jside *me = &st->side[w], *other = &st->side[1 - w];
  op->metrics.rows_in += b->nrows;
  const dp_vector *k[64];
  key_cols(me, b, k);
  int rc = DIPPER_OK;
  for (int64_t r = 0; r < b->nrows && !rc; r++) {
    if (null_key(me, b, r)) continue;
    uint64_t h = dp_ht_hash_row(k, me->nkeys, r);
    int kind = dp_change_of(b, r);
    bool back = dp_change_retracts(kind);
    if (back ? !take_back(me, b, r, h) : (rc = store(me, b, r, h)) != DIPPER_OK) continue;
    int out_kind = back ? DP_CHANGE_DELETE : DP_CHANGE_INSERT;
    for (int64_t m = chain_of(other, me, b, r, h); m >= 0 && !rc; m = other->next[m]) {
      if (!other->alive[m]) continue;
      rc = w == 0 ? put_match(st, b, r, other->rows, m, out_kind)
                  : put_match(st, other->rows, m, b, r, out_kind);
    }
  }
  return rc;
}

static int consume_left(dp_op *op, const dp_batch *b) { return consume_side(op, b, 0); }
static int consume_right(dp_op *op, const dp_batch *b) { return consume_side(op, b, 1); }

/* The matches that pass the join's condition (beyond the keys). */
static int apply_cond(dp_op *op, dp_batch **out) {
  jr_state *st = op->state;
  *out = st->out;
  const dp_expr *cond = op->plan->u.join.cond;
  if (!cond || st->out->nrows == 0) return DIPPER_OK;
  dp_vector *mask = NULL;
  int rc = dp_eval(op->ex, cond, st->out, &mask);
  if (!rc) rc = grow(&st->sel, &st->sel_cap, st->out->nrows, sizeof *st->sel);
  int64_t n = rc ? 0 : dp_eval_select(mask, st->sel);
  dp_vector_free(mask);
  if (rc || n == st->out->nrows) return rc;
  dp_batch_clear(st->kept);
  if ((rc = dp_batch_take(st->kept, st->out, st->sel, 0, n))) return rc;
  if ((rc = dp_change_take(&st->kept->change, st->out->change, st->sel, n))) return rc;
  st->kept->nrows = n;
  *out = st->kept;
  return DIPPER_OK;
}

static int jr_next(dp_op *op, dp_batch **out) {
  jr_state *st = op->state;
  *out = NULL;
  if (st->done) return DIPPER_OK;
  dp_batch_clear(st->out);
  int rc = dp_op_drain(op->children[0], consume_left, op);
  if (!rc) rc = dp_op_drain(op->children[1], consume_right, op);
  if (rc) return rc;
  st->done = true;
  dp_batch *b = NULL;
  if ((rc = apply_cond(op, &b))) return rc;
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
  if (!keep) return DIPPER_NOMEM;
  int64_t k = 0;
  for (int64_t r = 0; r < n; r++)
    if (s->alive[r]) keep[k++] = r;
  dp_batch *fresh = dp_batch_new(s->rows->schema, k);
  int rc = fresh ? dp_batch_take(fresh, s->rows, keep, 0, k) : DIPPER_NOMEM;
  free(keep);
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
  dp_put_u8(out, STATE_VERSION);
  for (int w = 0; w < 2; w++) {
    int rc = compact(&st->side[w]);
    if (!rc) rc = dp_batch_encode(st->side[w].rows, 0, st->side[w].rows->nrows, out);
    if (rc) return rc;
  }
  return out->oom ? DIPPER_NOMEM : DIPPER_OK;
}

static int load_side(jside *s, dp_rd *in) {
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
  return rc;
}

static int jr_restore(dp_op *op, dp_rd *in) {
  jr_state *st = op->state;
  const char *what = "its state is damaged";
  int rc = DIPPER_CORRUPT;
  if (dp_get_u8(in) != STATE_VERSION) {
    what = "its state is of another version";
  } else {
    rc = load_side(&st->side[0], in);
    if (!rc) rc = load_side(&st->side[1], in);
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
