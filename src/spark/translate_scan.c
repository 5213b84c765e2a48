/*
** translate_scan.c — the leaves of a batch plan as Spark Connect relations:
** SCAN of a filesystem table (a DataSource read with the format's options as
** Spark spells them, and the file metadata columns), of an in-memory table
** (a LocalRelation of Arrow IPC), of a datagen table (a Range with a value
** per column), and VALUES (inline(array(named_struct(..))) over a one-row
** Range).  Also the table-option lookups the sink plans of translate.c share.
**
** Owns: how a table's connector options become a Spark read.  Does not own:
** streaming sources (translate_stream.c), every other node (translate.c).
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "spark/arrow_ipc.h"
#include "spark/stream_rules.h"
#include "spark/translate_stream.h"
#include "spark/translate_int.h"

/* ---- SCAN ---- */

const char *dp_sx_table_option(const dp_table_def *t, const char *key) {
  for (int i = 0; i < t->noptions; i++)
    if (strcasecmp(t->options[i].key, key) == 0) return t->options[i].value;
  return NULL;
}

/* A format option, also under the 'value.' prefix (Flink's spelling for
** keyed formats). */
const char *dp_sx_format_option(const dp_table_def *t, const char *key) {
  const char *v = dp_sx_table_option(t, key);
  if (!v) {
    char k[128];
    snprintf(k, sizeof k, "value.%s", key);
    v = dp_sx_table_option(t, k);
  }
  return v;
}

bool dp_sx_is_true(const char *v) { return v && strcasecmp(v, "true") == 0; }

/* A user's column name as one Spark identifier: `name`, with ` doubled (a
** dot or a space in it is part of the name, not a path). */
static const char *quoted(dp_sx *x, const char *name) {
  size_t n = strlen(name), k = 0;
  char *q = dp_sx_alloc(x, 2 * n + 3);
  if (!q) return NULL;
  q[k++] = '`';
  for (size_t i = 0; i < n; i++) {
    if (name[i] == '`') q[k++] = '`';
    q[k++] = name[i];
  }
  q[k++] = '`';
  q[k] = '\0';
  return q;
}

void dp_sx_opt_add(dp_sx_opts *o, const char *k, const char *v) {
  if (v && o->n < 20) {
    o->kv[2 * o->n] = k;
    o->kv[2 * o->n + 1] = v;
    o->n++;
  }
}

/* dipper's (Flink's) CSV and JSON options as Spark's reader options. */
static int format_options(dp_sx *x, const dp_table_def *t, const char *fmt, dp_sx_opts *o, dp_span sp) {
  const char *bad = dp_sx_table_option(t, "dipper.bad-records");
  bool skip = (bad && strcasecmp(bad, "skip") == 0) ||
              (!bad && (dp_sx_is_true(dp_sx_format_option(t, "json.ignore-parse-errors")) ||
                        dp_sx_is_true(dp_sx_format_option(t, "csv.ignore-parse-errors"))));
  if (bad && strcasecmp(bad, "dead-letter") == 0)
    return dp_sx_refuse(x, sp, "table `%s`: Spark has no dead-letter file for bad records; use "
                               "'dipper.bad-records' = 'skip' or 'fail'", t->name);
  bool csv = strcmp(fmt, "csv") == 0, json = strcmp(fmt, "json") == 0;
  if (csv || json) {
    /* fail (dipper's default): Spark's FAILFAST; skip: DROPMALFORMED */
    dp_sx_opt_add(o, "mode", skip ? "DROPMALFORMED" : "FAILFAST");
    /* dipper reads "2024-01-01 10:00:00[.ffffff]" and the ISO 'T' form */
    dp_sx_opt_add(o, "timestampNTZFormat", "yyyy-MM-dd[ ]['T']HH:mm:ss[.SSSSSS]");
    dp_sx_opt_add(o, "timestampFormat", "yyyy-MM-dd[ ]['T']HH:mm:ss[.SSSSSS][XXX]");
  }
  if (csv) {
    const char *v;
    if ((v = dp_sx_format_option(t, "csv.field-delimiter"))) dp_sx_opt_add(o, "sep", strcmp(v, "\\t") == 0 ? "\t" : v);
    if ((v = dp_sx_format_option(t, "csv.quote-character"))) dp_sx_opt_add(o, "quote", v);
    if (dp_sx_is_true(dp_sx_format_option(t, "csv.disable-quote-character"))) dp_sx_opt_add(o, "quote", "");
    if (dp_sx_is_true(dp_sx_format_option(t, "csv.allow-comments"))) dp_sx_opt_add(o, "comment", "#");
    if ((v = dp_sx_format_option(t, "csv.escape-character"))) dp_sx_opt_add(o, "escape", v);
    if ((v = dp_sx_format_option(t, "csv.null-literal"))) dp_sx_opt_add(o, "nullValue", v);
    if ((v = dp_sx_format_option(t, "csv.line-delimiter")) && strcmp(v, "\\n") != 0 && strcmp(v, "\n") != 0)
      dp_sx_opt_add(o, "lineSep", v);
    dp_sx_opt_add(o, "header", dp_sx_is_true(dp_sx_format_option(t, "csv.header")) ? "true" : "false");
    for (int i = 0; i < t->schema.ncols; i++) {
      dp_type_kind k = t->schema.cols[i].type->kind;
      if (t->cols[i].kind == DP_CK_PHYSICAL && (k == DP_T_ARRAY || k == DP_T_MAP || k == DP_T_ROW))
        return dp_sx_refuse(x, t->cols[i].span,
                            "table `%s`: Spark's CSV reader has no nested column types (column `%s`); "
                            "read it as a STRING and split it, or use 'format' = 'json'",
                            t->name, t->schema.cols[i].name);
    }
  }
  if (json && dp_sx_is_true(dp_sx_format_option(t, "json.fail-on-missing-field")))
    return dp_sx_refuse(x, sp, "table `%s`: Spark's JSON reader gives NULL for a missing field and cannot "
                               "fail on it; leave out 'json.fail-on-missing-field'", t->name);
  return DIPPER_OK;
}

/* A file table's metadata column as Spark's hidden _metadata field. */
static Spark__Connect__Expression *file_metadata(dp_sx *x, const dp_table_def *t, int i) {
  const char *key = t->cols[i].metadata_key ? t->cols[i].metadata_key : t->schema.cols[i].name;
  static const struct { const char *key, *field; } m[] = {
      {"file.path", "file_path"}, {"file.name", "file_name"}, {"file.size", "file_size"},
      {"file.modification-time", "file_modification_time"},
  };
  for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
    if (strcasecmp(key, m[k].key) != 0) continue;
    Spark__Connect__Expression *e = dp_sx_col(x, dp_sx_printf(x, "_metadata.%s", m[k].field));
    if (e && k == 0) /* Spark gives a file: URI; dipper the path */
      e = dp_sx_fn3(x, "regexp_replace", e, dp_sx_lit_string(x, "^file:(//)?"), dp_sx_lit_string(x, ""));
    return dp_sx_as_type(x, e, t->schema.cols[i].type, t->cols[i].span);
  }
  dp_sx_refuse(x, t->cols[i].span, "table `%s`: the metadata column `%s` has no Spark form", t->name,
               t->schema.cols[i].name);
  return NULL;
}

static int scan_filesystem(dp_sx *x, const dp_plan *p, dp_srel *out) {
  const dp_table_def *t = p->u.scan.table;
  const char *fmt = t->format ? t->format : "json";
  const char *sfmt = NULL;
  /* avro: a directory of Avro object container files (Flink's meaning),
     read by the spark-avro data source (scripts/spark-local passes its jar)
     with the DDL schema: Spark matches the files' fields by name */
  if (!strcasecmp(fmt, "json") || !strcasecmp(fmt, "csv") || !strcasecmp(fmt, "parquet") || !strcasecmp(fmt, "orc") ||
      !strcasecmp(fmt, "avro"))
    sfmt = fmt;
  else if (!strcasecmp(fmt, "raw") || !strcasecmp(fmt, "text"))
    sfmt = "text";
  else
    return dp_sx_refuse(x, t->with_span, "table `%s`: Spark reads the formats csv, json, parquet, orc, avro "
                                         "and raw/text, not '%s'",
                        t->name, fmt);
  char lower[16];
  snprintf(lower, sizeof lower, "%s", sfmt);
  for (char *c = lower; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
  bool *keep = dp_sx_alloc(x, (size_t)(t->schema.ncols ? t->schema.ncols : 1));
  if (!keep) return x->rc;
  int nphys = 0;
  for (int i = 0; i < t->schema.ncols; i++) nphys += keep[i] = t->cols[i].kind == DP_CK_PHYSICAL;
  if (!strcmp(lower, "text") && (nphys != 1 || t->schema.cols[0].type->kind != DP_T_STRING))
    return dp_sx_refuse(x, t->with_span, "table `%s`: a raw/text table has one STRING column on Spark", t->name);
  const char *ddl = strcmp(lower, "text") ? dp_sx_schema_ddl(x, &t->schema, keep, t->span) : NULL;
  if (strcmp(lower, "text") && !ddl) return dp_sx_fail(x);
  dp_sx_opts o;
  o.n = 0;
  int rc = format_options(x, t, lower, &o, t->with_span);
  /* The loopback server shares the client's file system, and the embedded
     engine reads a relative path against the current directory: so does
     Spark, once the path is made absolute here. */
  const char *path = dp_sx_table_option(t, "path");
  if (!path) return dp_sx_refuse(x, t->with_span, "table `%s` has no 'path'", t->name);
  if (path[0] != '/' && !strstr(path, "://")) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return dp_sx_refuse(x, t->with_span, "cannot resolve the relative path '%s'", path);
    path = dp_sx_printf(x, "%s/%s", cwd, path);
  }
  if (rc != DIPPER_OK || !path) return dp_sx_fail(x);
  bool streaming = x->q && x->q->streaming && !(p->props.analyzed ? p->props.bounded : t->bounded);
  if (dp_sx_table_option(t, "source.path.regex-pattern"))
    return dp_sx_refuse(x, t->with_span, "table `%s`: Spark filters file names with a glob, not dipper's "
                                         "'source.path.regex-pattern'; keep only the wanted files in the "
                                         "directory, or read the table on the embedded engine", t->name);
  const char *mf = dp_sx_table_option(t, "source.max-files-per-trigger");
  if (streaming && mf) dp_sx_opt_add(&o, "maxFilesPerTrigger", mf);
  struct stat st;
  if (streaming && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
    /* Spark streams the files of a directory: a single file is its
       directory with a glob that matches the file's name only */
    const char *slash = strrchr(path, '/');
    char *glob = dp_sx_alloc(x, 2 * strlen(slash + 1) + 1);
    if (!glob) return dp_sx_fail(x);
    size_t k = 0;
    for (const char *c = slash + 1; *c; c++) {
      if (strchr("*?[]{}\\", *c)) glob[k++] = '\\';
      glob[k++] = *c;
    }
    dp_sx_opt_add(&o, "pathGlobFilter", glob);
    path = dp_arena_strndup(x->c->arena, path, (size_t)(slash - path > 0 ? slash - path : 1));
    if (!path) return dp_sx_fail(x);
  }
  Spark__Connect__Relation *rd = dp_sx_read_source(x, lower, ddl, o.n, o.kv, 1, &path, streaming);
  if (!rd) return dp_sx_fail(x);
  /* Name the columns: physical ones by their declared names, metadata ones
     from _metadata. */
  int relno = dp_sx_relno(x);
  const char **names = dp_sx_colnames(x, relno, p->schema.ncols);
  Spark__Connect__Expression **e = dp_sx_expr_list(x, p->schema.ncols);
  if (!names || !e) return dp_sx_fail(x);
  bool ok = true;
  for (int i = 0, k = 0; i < t->schema.ncols; i++) {
    if (t->cols[i].kind == DP_CK_COMPUTED) continue;
    Spark__Connect__Expression *v;
    if (t->cols[i].kind == DP_CK_PHYSICAL)
      v = dp_sx_col(x, !strcmp(lower, "text") ? "value" : quoted(x, t->schema.cols[i].name));
    else
      v = file_metadata(x, t, i);
    ok &= (e[k] = dp_sx_alias(x, v, names[k])) != NULL;
    k++;
  }
  if (!ok) return dp_sx_fail(x);
  out->rel = dp_sx_project(x, rd, p->schema.ncols, e);
  out->ncols = p->schema.ncols;
  out->names = names;
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

static int scan_memory(dp_sx *x, const dp_plan *p, dp_srel *out) {
  const dp_table_def *t = p->u.scan.table;
  if (x->q && x->q->streaming && p->props.analyzed && !p->props.bounded)
    return dp_sx_refuse(x, p->span, "table `%s`: a memory table is a stream on the embedded engine only; on "
                                    "Spark read a 'kafka' topic or a 'filesystem' directory, or declare it "
                                    "'bounded' = 'true'", t->name);
  Spark__Connect__Relation *r = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_LOCAL_RELATION);
  Spark__Connect__LocalRelation *lr;
  if (!r || !DP_SX_NEW(x, lr, spark__connect__local_relation__init)) return dp_sx_fail(x);
  r->local_relation = lr;
  /* The columns of the memory table's rows (physical and metadata ones:
     the scan's schema) */
  const char *ddl = dp_sx_schema_ddl(x, &p->schema, NULL, t->span);
  if (!ddl) return dp_sx_fail(x);
  lr->_schema_case = SPARK__CONNECT__LOCAL_RELATION___SCHEMA_SCHEMA;
  lr->schema = dp_sx_mut(ddl);
  if (x->c->memory_rows) {
    struct ArrowSchema as;
    struct ArrowArray aa;
    memset(&as, 0, sizeof as);
    memset(&aa, 0, sizeof aa);
    int rc = x->c->memory_rows(x->c->user, t, &as, &aa);
    if (rc != DIPPER_OK) {
      x->rc = rc;
      return rc;
    }
    dp_buf data = DP_BUF_INIT, err = DP_BUF_INIT;
    rc = dp_arrow_ipc_encode(&as, &aa, &data, &err);
    if (aa.release) aa.release(&aa);
    if (as.release) as.release(&as);
    if (rc == DIPPER_OK && !data.oom) {
      uint8_t *copy = dp_sx_alloc(x, data.len);
      if (copy && data.len) memcpy(copy, data.data, data.len);
      lr->_data_case = SPARK__CONNECT__LOCAL_RELATION___DATA_DATA;
      lr->data.data = copy;
      lr->data.len = data.len;
      if (!copy) rc = DIPPER_NOMEM;
    } else if (rc == DIPPER_OK) {
      rc = DIPPER_NOMEM;
    } else {
      dp_sx_refuse(x, t->span, "memory table `%s`: its rows cannot be sent to Spark: %s", t->name,
                   dp_buf_cstr(&err));
    }
    dp_buf_free(&data);
    dp_buf_free(&err);
    if (rc != DIPPER_OK) {
      if (!x->rc) x->rc = rc;
      return rc;
    }
  }
  /* LocalRelation's columns carry the table's names: rename them */
  int relno = dp_sx_relno(x);
  const char **names = dp_sx_colnames(x, relno, p->schema.ncols);
  Spark__Connect__Expression **e = dp_sx_expr_list(x, p->schema.ncols);
  if (!names || !e) return dp_sx_fail(x);
  for (int i = 0; i < p->schema.ncols; i++)
    e[i] = dp_sx_alias(x, dp_sx_col(x, quoted(x, p->schema.cols[i].name)), names[i]);
  out->rel = dp_sx_project(x, r, p->schema.ncols, e);
  out->ncols = p->schema.ncols;
  out->names = names;
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

/* ---- datagen, batch: a Range of number-of-rows ids and a value per column ---- */

/* 'fields.<col>.<what>' of a datagen table. */
static const char *field_option(dp_sx *x, const dp_table_def *t, const char *col, const char *what) {
  const char *k = dp_sx_printf(x, "fields.%s.%s", col, what);
  return k ? dp_sx_table_option(t, k) : NULL;
}

static int scan_datagen(dp_sx *x, const dp_plan *p, dp_srel *out) {
  const dp_table_def *t = p->u.scan.table;
  int64_t rows = -1;
  const char *v = dp_sx_table_option(t, "number-of-rows");
  if (v) rows = strtoll(v, NULL, 10);
  for (int i = 0; i < t->schema.ncols; i++) {
    const char *col = t->schema.cols[i].name, *kind = field_option(x, t, col, "kind");
    if (!kind || strcasecmp(kind, "sequence") != 0) continue;
    const char *a = field_option(x, t, col, "start"), *b = field_option(x, t, col, "end");
    if (!b) continue;
    int64_t n = strtoll(b, NULL, 10) - (a ? strtoll(a, NULL, 10) : 0) + 1;
    if (rows < 0 || n < rows) rows = n < 0 ? 0 : n; /* the shortest sequence ends the source */
  }
  if (rows < 0)
    return dp_sx_refuse(x, t->with_span, "table `%s`: a datagen source without 'number-of-rows' never ends, "
                                         "which a batch query on Spark cannot read; add 'number-of-rows'",
                        t->name);
  const char *seed_text = dp_sx_table_option(t, "seed");
  int64_t seed = seed_text ? strtoll(seed_text, NULL, 10) : (int64_t)getpid();
  const char *rate = dp_sx_table_option(t, "rows-per-second");
  double r = rate ? strtod(rate, NULL) : 0;
  int64_t step = r > 0 ? (int64_t)(1e6 / r) : 100;
  Spark__Connect__Relation *range = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_RANGE);
  Spark__Connect__Range *rg;
  if (!range || !DP_SX_NEW(x, rg, spark__connect__range__init)) return dp_sx_fail(x);
  rg->_start_case = SPARK__CONNECT__RANGE___START_START;
  rg->start = 0;
  rg->end = rows;
  rg->step = 1;
  range->range = rg;
  int relno = dp_sx_relno(x);
  const char **names = dp_sx_colnames(x, relno, p->schema.ncols);
  Spark__Connect__Expression **e = dp_sx_expr_list(x, p->schema.ncols);
  if (!names || !e) return dp_sx_fail(x);
  bool ok = true;
  for (int i = 0, k = 0; i < t->schema.ncols; i++) {
    if (t->cols[i].kind == DP_CK_COMPUTED) continue;
    if (t->cols[i].kind != DP_CK_PHYSICAL) {
      dp_sx_refuse(x, t->cols[i].span, "table `%s`: datagen has no metadata column `%s`", t->name,
                   t->schema.cols[i].name);
      ok = false;
      continue;
    }
    /* the Range's `id` numbers the rows; the synthetic clock of a bounded
       run: 2024-01-01 00:00:00 UTC plus one step a row */
    Spark__Connect__Expression *clock =
        dp_sx_fn2(x, "+", dp_sx_lit_long(x, INT64_C(1704067200000000)),
                  dp_sx_fn2(x, "*", dp_sx_col(x, "id"), dp_sx_lit_long(x, step)));
    ok &= (e[k] = dp_sx_alias(x, dp_sx_datagen_column(x, t, i, seed, "id", clock), names[k])) != NULL;
    k++;
  }
  if (!ok) return dp_sx_fail(x);
  out->rel = dp_sx_project(x, range, p->schema.ncols, e);
  out->ncols = p->schema.ncols;
  out->names = names;
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}

int dp_sx_scan(dp_sx *x, const dp_plan *p, dp_srel *out) {
  const dp_table_def *t = p->u.scan.table;
  const char *conn = t->connector ? t->connector : "";
  /* kafka, socket and streaming datagen: translate_stream.c */
  if (dp_sx_stream_reads(x, t)) return dp_sx_stream_scan(x, p, out);
  if (!strcmp(conn, "filesystem")) return scan_filesystem(x, p, out);
  if (!strcmp(conn, "memory")) return scan_memory(x, p, out);
  if (!strcmp(conn, "datagen")) return scan_datagen(x, p, out);
  if (dp_connector_changelog(t))
    return dp_sx_refuse(x, p->span,
                        "table `%s`: the Spark backend does not read '%s': Structured Streaming has "
                        "no changelog source (every row it reads is an append, never a -U or -D "
                        "of a key); run the query on the embedded engine, or read the topic as a "
                        "'kafka' table, each record a row",
                        t->name, conn);
  return dp_sx_refuse(x, p->span,
                      "table `%s`: the Spark backend does not read the '%s' connector; it reads 'filesystem', "
                      "'kafka', 'socket', 'memory' and 'datagen' tables",
                      t->name, conn);
}

/* ---- VALUES: inline(array(named_struct(..), ..)) over a one-row Range ---- */

int dp_sx_values(dp_sx *x, const dp_plan *p, dp_srel *out) {
  int nc = p->schema.ncols, nr = p->u.values.nrows;
  int relno = dp_sx_relno(x);
  const char **names = dp_sx_colnames(x, relno, nc);
  Spark__Connect__Expression **rows = dp_sx_alloc(x, (size_t)(nr ? nr : 1) * sizeof *rows);
  if (!names || !rows) return dp_sx_fail(x);
  dp_sscope empty = {0, NULL, x->outer};
  bool ok = true;
  for (int r = 0; r < nr; r++) {
    Spark__Connect__Expression **kv = dp_sx_alloc(x, (size_t)(2 * nc + 1) * sizeof *kv);
    if (!kv) return dp_sx_fail(x);
    for (int c = 0; c < nc; c++) {
      const dp_expr *cell = p->u.values.cells[r * nc + c];
      kv[2 * c] = dp_sx_lit_string(x, names[c]);
      Spark__Connect__Expression *v = dp_sx_expr(x, &empty, cell);
      if (v && !dp_type_equal(cell->type, p->schema.cols[c].type))
        v = dp_sx_cast(x, v, p->schema.cols[c].type, false, cell->span);
      ok &= (kv[2 * c + 1] = v) != NULL;
    }
    if (ok) ok = (rows[r] = dp_sx_fn(x, "named_struct", 2 * nc, kv)) != NULL;
  }
  if (!ok) return dp_sx_fail(x);
  Spark__Connect__Relation *range = dp_sx_relation(x, SPARK__CONNECT__RELATION__REL_TYPE_RANGE);
  Spark__Connect__Range *rg;
  if (!range || !DP_SX_NEW(x, rg, spark__connect__range__init)) return dp_sx_fail(x);
  rg->_start_case = SPARK__CONNECT__RANGE___START_START;
  rg->start = 0;
  rg->end = 1;
  rg->step = 1;
  range->range = rg;
  Spark__Connect__Expression **gen = dp_sx_expr_list(x, 1);
  if (!gen) return dp_sx_fail(x);
  gen[0] = dp_sx_fn1(x, "inline", dp_sx_fn(x, "array", nr, rows));
  out->rel = dp_sx_wrap_refs(x, dp_sx_project(x, range, 1, gen));
  out->ncols = nc;
  out->names = names;
  return out->rel ? DIPPER_OK : dp_sx_fail(x);
}
