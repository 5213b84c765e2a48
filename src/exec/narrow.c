/*
** narrow.c — column pruning at run time (narrow.h).
**
** Owns: the filler vectors (all-NULL, filled once to the largest length
** asked and then handed out at any shorter length by setting the length),
** the ROW shells (a dp_vector built here, never by dp_vector_new, whose
** children are partly real and partly fillers; freed here, never by
** dp_vector_free), and the views that let dp_batch_take copy only the read
** columns and fields in one call.  Does not own: deciding what is read
** (plan/prune.c).
*/
#include <stdlib.h>
#include <string.h>

#include "exec/eval.h"
#include "exec/narrow.h"

typedef enum nw_mode { NW_WHOLE, NW_NONE, NW_FIELDS } nw_mode;

typedef struct nw_col {
  nw_mode mode;
  const dp_type *type;
  dp_vector *owned;      /* WHOLE, take: the copy of the column */
  dp_vector *filler;     /* the all-NULL column, made on first use */
  dp_vector shell;       /* FIELDS: the ROW handed out */
  dp_vector **children;  /* FIELDS: the shell's children */
  dp_vector **fchild;    /* FIELDS, per field: our copy (read, take) or a filler (not read) */
  uint8_t *valid;        /* FIELDS, take: the shell's bitmap */
  size_t valid_cap;      /* bytes */
  int src_col;           /* widen: the source schema's column, or -1 */
} nw_col;

struct dp_narrow {
  int ncols;
  const dp_col_need *need;
  nw_col *cols;
  dp_batch out;          /* the node's schema; columns point into cols[] */
  int view_cap;
  dp_vector **vin, **vout; /* take: the read columns and fields, source and copy */
};

/* ---- fillers ---- */

static void set_null_length(dp_vector *v, int64_t n) {
  v->length = n;
  v->null_count = n;
  if (v->phys == DP_PHYS_STRUCT)
    for (int i = 0; i < v->nchildren; i++) set_null_length(v->children[i], n);
}

/* *slot as an all-NULL vector of type t and n rows. */
static int fill_nulls(dp_vector **slot, const dp_type *t, int64_t n) {
  if (!*slot && !(*slot = dp_vector_new(t, n))) return DIPPER_NOMEM;
  dp_vector *v = *slot;
  if (v->length < n) {
    int rc = dp_vector_append_nulls(v, n - v->length);
    if (rc) return rc;
  }
  set_null_length(v, n);
  return DIPPER_OK;
}

int dp_narrow_filler(dp_vector **slot, const dp_type *t, int64_t n) {
  return fill_nulls(slot, t, n);
}

/* ---- lifecycle ---- */

void dp_narrow_free(dp_narrow *nw) {
  if (!nw) return;
  for (int c = 0; nw->cols && c < nw->ncols; c++) {
    nw_col *col = &nw->cols[c];
    dp_vector_free(col->owned);
    dp_vector_free(col->filler);
    if (col->fchild)
      for (int j = 0; j < col->type->nfields; j++) dp_vector_free(col->fchild[j]);
    free(col->fchild);
    free(col->children);
    free(col->valid);
  }
  free(nw->cols);
  free(nw->out.cols);
  free(nw->vin);
  free(nw->vout);
  free(nw);
}

int dp_narrow_open(dp_op *op, dp_narrow **out) {
  *out = NULL;
  const dp_plan *p = op->plan;
  dp_col_need *need = NULL;
  int rc = dp_prune_need(op->ex->arena, op->ex->root, p, &need);
  if (rc) return rc;
  int n = p->schema.ncols;
  if (dp_prune_is_all(need, n)) return DIPPER_OK;
  dp_narrow *nw = calloc(1, sizeof *nw);
  if (!nw) return DIPPER_NOMEM;
  nw->ncols = n;
  nw->need = need;
  nw->cols = calloc((size_t)(n ? n : 1), sizeof *nw->cols);
  nw->out.cols = calloc((size_t)(n ? n : 1), sizeof *nw->out.cols);
  if (!nw->cols || !nw->out.cols) {
    dp_narrow_free(nw);
    return DIPPER_NOMEM;
  }
  nw->out.schema = &p->schema;
  nw->out.ncols = n;
  int views = 0;
  for (int c = 0; c < n; c++) {
    nw_col *col = &nw->cols[c];
    const dp_type *t = p->schema.cols[c].type;
    col->type = t;
    col->src_col = -1;
    if (need[c].whole) {
      col->mode = NW_WHOLE;
      views++;
    } else if (need[c].fields && t->kind == DP_T_ROW && t->nfields <= DP_PRUNE_MAX_FIELDS) {
      col->mode = NW_FIELDS;
      size_t nf = (size_t)(t->nfields ? t->nfields : 1);
      col->children = calloc(nf, sizeof *col->children);
      col->fchild = calloc(nf, sizeof *col->fchild);
      if (!col->children || !col->fchild) {
        dp_narrow_free(nw);
        return DIPPER_NOMEM;
      }
      col->shell.type = t;
      col->shell.phys = DP_PHYS_STRUCT;
      col->shell.nchildren = t->nfields;
      col->shell.children = col->children;
      views += t->nfields;
    } else {
      col->mode = NW_NONE;
    }
  }
  nw->view_cap = views ? views : 1;
  nw->vin = calloc((size_t)nw->view_cap, sizeof *nw->vin);
  nw->vout = calloc((size_t)nw->view_cap, sizeof *nw->vout);
  if (!nw->vin || !nw->vout) {
    dp_narrow_free(nw);
    return DIPPER_NOMEM;
  }
  *out = nw;
  return DIPPER_OK;
}

const dp_col_need *dp_narrow_need(const dp_narrow *nw) { return nw->need; }

static bool field_read(const dp_narrow *nw, int c, int j) {
  return (nw->need[c].fields >> (unsigned)j) & 1u;
}

/* ---- take ---- */

/* The shell's bitmap: the ROW validity of rows sel[0..n) of src. */
static int take_validity(nw_col *col, const dp_vector *src, const int64_t *sel, int64_t n) {
  dp_vector *sh = &col->shell;
  sh->validity = NULL;
  sh->null_count = 0;
  if (!src->validity || src->null_count == 0) return DIPPER_OK;
  size_t bytes = (size_t)(n + 7) / 8;
  if (bytes > col->valid_cap) {
    uint8_t *b = realloc(col->valid, bytes);
    if (!b) return DIPPER_NOMEM;
    col->valid = b;
    col->valid_cap = bytes;
  }
  memset(col->valid, 0, bytes);
  int64_t valid = 0;
  for (int64_t i = 0; i < n; i++) {
    unsigned bit = dp_bit_get(src->validity, sel[i]);
    col->valid[i >> 3] = (uint8_t)(col->valid[i >> 3] | (bit << (unsigned)(i & 7)));
    valid += bit;
  }
  sh->validity = col->valid;
  sh->null_count = n - valid;
  return DIPPER_OK;
}

int dp_narrow_take(dp_narrow *nw, const dp_batch *in, const int64_t *sel, int64_t n,
                   dp_batch **out) {
  *out = NULL;
  if (in->ncols != nw->ncols) return DIPPER_MISUSE;
  int nview = 0, rc = DIPPER_OK;
  for (int c = 0; c < nw->ncols && !rc; c++) {
    nw_col *col = &nw->cols[c];
    const dp_vector *src = in->cols[c];
    switch (col->mode) {
    case NW_WHOLE:
      if (!col->owned && !(col->owned = dp_vector_new(col->type, n))) return DIPPER_NOMEM;
      dp_vector_clear(col->owned);
      nw->vin[nview] = (dp_vector *)(uintptr_t)src; /* read only: dp_batch_take's input */
      nw->vout[nview++] = col->owned;
      nw->out.cols[c] = col->owned;
      break;
    case NW_NONE:
      rc = fill_nulls(&col->filler, col->type, n);
      nw->out.cols[c] = col->filler;
      break;
    case NW_FIELDS:
      if (src->phys != DP_PHYS_STRUCT || src->nchildren != col->type->nfields) return DIPPER_INTERNAL;
      for (int j = 0; j < col->type->nfields && !rc; j++) {
        const dp_type *ft = col->type->fields[j].type;
        if (field_read(nw, c, j)) {
          if (!col->fchild[j] && !(col->fchild[j] = dp_vector_new(ft, n))) return DIPPER_NOMEM;
          dp_vector_clear(col->fchild[j]);
          nw->vin[nview] = src->children[j];
          nw->vout[nview++] = col->fchild[j];
        } else {
          rc = fill_nulls(&col->fchild[j], ft, n);
        }
        col->children[j] = col->fchild[j];
      }
      if (!rc) rc = take_validity(col, src, sel, n);
      col->shell.length = n;
      col->shell.capacity = n;
      nw->out.cols[c] = &col->shell;
      break;
    }
  }
  if (rc) return rc;
  dp_batch vin = {NULL, nview, nw->vin, in->nrows};
  dp_batch vout = {NULL, nview, nw->vout, 0};
  rc = dp_batch_take(&vout, &vin, sel, 0, n);
  if (rc) return rc;
  nw->out.nrows = n;
  *out = &nw->out;
  return DIPPER_OK;
}

int dp_narrow_null(dp_narrow *nw, int col, int64_t n, dp_vector **out) {
  *out = NULL;
  if (col < 0 || col >= nw->ncols) return DIPPER_MISUSE;
  nw_col *c = &nw->cols[col];
  int rc = fill_nulls(&c->filler, c->type, n);
  if (rc) return rc;
  *out = c->filler;
  return DIPPER_OK;
}

/* ---- a source's schema, and widening its batches ---- */

int dp_narrow_source_schema(dp_narrow *nw, dp_arena *a, const dp_schema **out) {
  *out = NULL;
  const dp_schema *full = nw->out.schema;
  int kept = 0;
  for (int c = 0; c < nw->ncols; c++)
    if (nw->cols[c].mode != NW_NONE) kept++;
  if (kept == 0 && nw->ncols > 0) {
    /* Nothing is read (COUNT(*)): keep one column, a scalar if there is one. */
    int pick = 0;
    for (int c = nw->ncols - 1; c >= 0; c--)
      if (nw->cols[c].type->kind != DP_T_ROW) pick = c;
    nw->cols[pick].mode = NW_WHOLE;
    kept = 1;
  }
  dp_schema *s = dp_schema_new(a, kept);
  if (!s) return DIPPER_NOMEM;
  int k = 0;
  for (int c = 0; c < nw->ncols; c++) {
    nw_col *col = &nw->cols[c];
    if (col->mode == NW_NONE) continue;
    col->src_col = k;
    s->cols[k] = full->cols[c];
    if (col->mode == NW_FIELDS) {
      const dp_type *t = col->type;
      dp_field *fields = dp_arena_calloc(a, (size_t)t->nfields, sizeof *fields);
      if (!fields) return DIPPER_NOMEM;
      int nf = 0;
      for (int j = 0; j < t->nfields; j++)
        if (field_read(nw, c, j)) fields[nf++] = t->fields[j];
      const dp_type *rt = dp_type_row(a, nf, fields);
      if (!rt) return DIPPER_NOMEM;
      s->cols[k].type = rt;
    }
    k++;
  }
  *out = s;
  return DIPPER_OK;
}

int dp_narrow_widen(dp_narrow *nw, const dp_batch *src, dp_batch **out) {
  *out = NULL;
  int64_t n = src->nrows;
  for (int c = 0; c < nw->ncols; c++) {
    nw_col *col = &nw->cols[c];
    int rc = DIPPER_OK;
    if (col->mode != NW_NONE && (col->src_col < 0 || col->src_col >= src->ncols))
      return DIPPER_MISUSE;
    switch (col->mode) {
    case NW_WHOLE: nw->out.cols[c] = src->cols[col->src_col]; break;
    case NW_NONE:
      rc = fill_nulls(&col->filler, col->type, n);
      nw->out.cols[c] = col->filler;
      break;
    case NW_FIELDS: {
      const dp_vector *sv = src->cols[col->src_col];
      if (sv->phys != DP_PHYS_STRUCT) return DIPPER_INTERNAL;
      int k = 0;
      for (int j = 0; j < col->type->nfields && !rc; j++) {
        if (field_read(nw, c, j)) {
          if (k >= sv->nchildren) return DIPPER_INTERNAL;
          col->children[j] = sv->children[k++];
        } else {
          rc = fill_nulls(&col->fchild[j], col->type->fields[j].type, n);
          col->children[j] = col->fchild[j];
        }
      }
      dp_vector *sh = &col->shell;
      sh->validity = sv->validity; /* borrowed: the shell never frees it */
      sh->null_count = sv->null_count;
      sh->length = sv->length;
      sh->capacity = sv->length;
      nw->out.cols[c] = sh;
      break;
    }
    }
    if (rc) return rc;
  }
  nw->out.nrows = n;
  *out = &nw->out;
  return DIPPER_OK;
}
