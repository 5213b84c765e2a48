/*
** dipper.c — the public API of dipper.h: handles, the compile pipeline,
** diagnostics for callers, and EXPLAIN of a whole program.
**
** Owns: the dipper handle (its catalog, engine address and the diagnostics of
** the last call) and compiled programs (one arena each).  Does not own: the
** result code strings and dipper_version (core/error.c), parsing, binding,
** analysis or plan printing (sql/, plan/) — this file only sequences them.
**
** Lifetimes: a program's arena holds its copy of the text, the syntax tree,
** the plans and the one-line summaries of DDL/SET statements.  Diagnostics
** live in the handle's diag arena, together with a copy of the text they
** point into, so that a failed compile (whose program is freed at once) can
** still be rendered; the arena is reset at the start of every call.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dipper_int.h"
#include "plan/udf.h"
#include "core/buf.h"
#include "core/session.h"
#include "core/types.h"
#include "plan/analyze.h"
#include "plan/binder.h"
#include "plan/explain.h"
#include "sql/parser.h"

static int fail_unplaced(dipper *db, int code, const char *message);
static void diags_begin(dipper *db, const char *file, const char *text, size_t len);

int dipper_open(dipper **out, const char *engine) {
  if (!out) return DIPPER_MISUSE;
  *out = NULL;
  dipper *db = calloc(1, sizeof *db);
  if (!db) return DIPPER_NOMEM;
  db->catalog = dp_catalog_new();
  db->diag_arena = dp_arena_new(0);
  if (!db->catalog || !db->diag_arena) {
    dipper_close(db);
    return DIPPER_NOMEM;
  }
  dp_diags_init(&db->diags, db->diag_arena, NULL, NULL, 0);
  db->engine_explicit = engine != NULL;
  char why_buf[512];
  const char *why = NULL;
  if (engine && strcmp(engine, "embedded") != 0) {
    if (strncmp(engine, "sc://", 5) != 0)
      why = "it must be 'embedded' or start with 'sc://'";
    else if (!dp_spark_address_check(engine, why_buf, sizeof why_buf))
      why = why_buf;
    if (!why && !(db->engine = strdup(engine))) {
      dipper_close(db);
      return DIPPER_NOMEM;
    }
  }
  if (why) {
    /* The handle is returned anyway, so that dipper_errmsg can say why
    ** (sqlite3_open's way); it refuses every later call. */
    size_t n = strlen(engine) + strlen(why) + 160;
    db->open_error = malloc(n);
    if (!db->open_error) {
      dipper_close(db);
      return DIPPER_NOMEM;
    }
    snprintf(db->open_error, n,
             "cannot use engine '%s': %s; write 'embedded' or "
             "'sc://host:port[/;token=..;use_ssl=true]'",
             engine, why);
    db->open_failed = DIPPER_OPTION;
    diags_begin(db, NULL, NULL, 0);
    fail_unplaced(db, DIPPER_OPTION, db->open_error);
    *out = db;
    return DIPPER_OPTION;
  }
  *out = db;
  return DIPPER_OK;
}

void dipper_set_clock(dipper *db, dipper_clock_fn fn, void *user) {
  if (!db) return;
  db->clock_fn = fn;
  db->clock_user = user;
}

void dipper_set_log(dipper *db, dipper_log_fn fn, void *user) {
  if (!db) return;
  db->log_fn = fn;
  db->log_user = user;
}

void dipper_close(dipper *db) {
  if (!db) return;
  dp_spark_disconnect(db);
  dp_memory_free(db);
  dp_callbacks_free(db);
  dp_catalog_free(db->catalog);
  dp_arena_free(db->diag_arena);
  free(db->engine);
  free(db->open_error);
  free(db);
}

bool dp_api_on_spark(const dipper *db) { return dp_api_spark_address(db) != NULL; }

const char *dp_api_spark_address(const dipper *db) {
  if (!db || db->engine_explicit) return db ? db->engine : NULL;
  const char *opt = dp_catalog_option(db->catalog, "dipper.engine");
  return opt && strncmp(opt, "sc://", 5) == 0 ? opt : NULL;
}

/* ---- diagnostics ---- */

/* Exactly n bytes plus a NUL.  Not dp_arena_strndup: SQL text may hold a NUL
** byte, and the copy must keep the length the spans were measured in. */
static char *copy_bytes(dp_arena *a, const char *s, size_t n) {
  char *p = dp_arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

/* Forget the previous call's diagnostics and start a new list that names
** `file` (copied) and points into `text` (borrowed for the duration of the
** call; see keep_diag_text). */
static void diags_begin(dipper *db, const char *file, const char *text, size_t len) {
  dp_arena_reset(db->diag_arena);
  db->pub = NULL;
  db->text = NULL;
  db->file = file ? dp_arena_strdup(db->diag_arena, file) : NULL;
  dp_diags_init(&db->diags, db->diag_arena, db->file ? db->file : "<string>", text, len);
}

/* The diagnostics outlive the program that produced them: copy the text
** they point into, and build the public array once (dipper_diag_get is const). */
static int diags_finish(dipper *db) {
  if (db->diags.count == 0) return DIPPER_OK;
  if (db->diags.text) {
    db->text = copy_bytes(db->diag_arena, db->diags.text, db->diags.text_len);
    if (!db->text) return DIPPER_NOMEM;
    db->diags.text = db->text;
  }
  db->pub = dp_arena_calloc(db->diag_arena, (size_t)db->diags.count, sizeof *db->pub);
  if (!db->pub) return DIPPER_NOMEM;
  for (int i = 0; i < db->diags.count; i++) {
    const dp_diag *g = &db->diags.items[i];
    dipper_diag *p = &db->pub[i];
    p->code = g->code;
    p->message = g->message ? g->message : dipper_strerror(g->code);
    p->file = db->file;
    p->line = (int)g->span.line;
    p->col = (int)g->span.col;
    p->length = g->span.line > 0 ? (g->span.len > 0 ? (int)g->span.len : 1) : 0;
  }
  return DIPPER_OK;
}

void dp_api_diags_begin(dipper *db, const char *file, const char *text, size_t len) {
  diags_begin(db, file, text, len);
}

int dp_api_diags_finish(dipper *db) { return diags_finish(db); }

int dipper_diag_count(const dipper *db) { return db && db->pub ? db->diags.count : 0; }

const dipper_diag *dipper_diag_get(const dipper *db, int i) {
  if (!db || !db->pub || i < 0 || i >= db->diags.count) return NULL;
  return &db->pub[i];
}

const char *dipper_errmsg(const dipper *db) {
  const dipper_diag *g = dipper_diag_get(db, 0);
  return g ? g->message : "";
}

char *dipper_diag_render(const dipper *db, int i) {
  if (!db || !db->pub || i < 0 || i >= db->diags.count) return NULL;
  return dp_diag_render(&db->diags, &db->diags.items[i]);
}

void dipper_free(void *p) { free(p); }

/* ---- compile ---- */

static const char *last_part(const dp_ast_name *n) {
  return n->n > 0 ? n->parts[n->n - 1].name : "";
}

static void put_duration(dp_buf *b, int64_t micros) {
  char tmp[64];
  dp_format_duration(tmp, sizeof tmp, micros);
  dp_buf_puts(b, tmp);
}

/* The one line EXPLAIN prints for a CREATE TABLE, from the definition the
** catalog now holds (so what is shown is what later statements will see). */
static void summarize_table(dp_buf *b, const dp_catalog *cat, const char *word,
                            const dp_ast_name *n) {
  dp_buf_printf(b, "%s %s", word, last_part(n));
  dp_qname q;
  if (dp_catalog_resolve(cat, NULL, n, &q) != DIPPER_OK) return;
  const dp_table_def *t = dp_catalog_table_in(cat, &q);
  if (!t) return;
  if (t->connector) dp_buf_printf(b, " connector=%s", t->connector);
  if (t->format) dp_buf_printf(b, " format=%s", t->format);
  dp_buf_printf(b, " columns=%d", t->schema.ncols);
  if (t->watermark_col >= 0 && t->watermark_col < t->schema.ncols) {
    dp_buf_printf(b, " watermark=%s", t->schema.cols[t->watermark_col].name);
    if (t->watermark_delay >= 0) {
      dp_buf_puts(b, " delay=");
      put_duration(b, t->watermark_delay);
    } else if (t->watermark_expr) {
      dp_buf_puts(b, " expr=");
      dp_explain_expr(b, t->watermark_expr, &t->schema);
    }
  }
  if (t->npk > 0) {
    dp_buf_puts(b, " primary_key=[");
    for (int i = 0; i < t->npk; i++)
      dp_buf_printf(b, "%s%s", i ? ", " : "", t->schema.cols[t->pk[i]].name);
    dp_buf_putc(b, ']');
  }
  dp_buf_puts(b, t->bounded ? " bounded" : " unbounded");
}

static const char *drop_word(int what) {
  return what == 'V'   ? "DropView"
         : what == 'F' ? "DropFunction"
         : what == 'D' ? "DropDatabase"
         : what == 'C' ? "DropCatalog"
                       : "DropTable";
}

/* One line for statements that act on the session rather than produce rows
** into *out; NULL for queries, INSERTs and statement sets (EXPLAIN prints
** their plans).  DIPPER_OK or DIPPER_NOMEM. */
static int summarize(dp_arena *a, const dp_catalog *cat, const dp_ast_stmt *s, const char **out) {
  dp_buf b = DP_BUF_INIT;
  *out = NULL;
  switch (s->kind) {
  case DP_AS_CREATE_TABLE:
    summarize_table(&b, cat, "CreateTable", &s->u.create_table.name);
    break;
  case DP_AS_CREATE_VIEW:
    dp_buf_printf(&b, "CreateView %s", last_part(&s->u.create_view.name));
    break;
  case DP_AS_CREATE_FUNCTION:
    dp_buf_printf(&b, "CreateFunction %s", last_part(&s->u.create_function.name));
    if (s->u.create_function.class_name)
      dp_buf_printf(&b, " class=%s", s->u.create_function.class_name);
    break;
  case DP_AS_DROP:
    dp_buf_printf(&b, "%s %s", drop_word(s->u.drop.what), last_part(&s->u.drop.name));
    break;
  case DP_AS_SET:
    if (s->u.set.key)
      dp_buf_printf(&b, "Set %s=%s", s->u.set.key, s->u.set.value ? s->u.set.value : "");
    else
      dp_buf_puts(&b, "Set");
    break;
  case DP_AS_RESET:
    dp_buf_printf(&b, "Reset%s%s", s->u.set.key ? " " : "", s->u.set.key ? s->u.set.key : "");
    break;
  case DP_AS_USE:
    dp_buf_printf(&b, "Use%s %s", s->u.use.catalog ? "Catalog" : "", last_part(&s->u.use.name));
    break;
  case DP_AS_SHOW:
    dp_buf_puts(&b, s->u.show.what == 'V'   ? "ShowViews"
                    : s->u.show.what == 'C' ? "ShowCreateTable"
                    : s->u.show.what == 'W' ? "ShowCreateView"
                    : s->u.show.what == 'F' ? "ShowFunctions"
                    : s->u.show.what == 'U' ? "ShowUserFunctions"
                    : s->u.show.what == 'D' ? "ShowDatabases"
                    : s->u.show.what == 'K' ? "ShowCatalogs"
                    : s->u.show.what == 'c' ? "ShowCurrentCatalog"
                    : s->u.show.what == 'd' ? "ShowCurrentDatabase"
                                            : "ShowTables");
    break;
  case DP_AS_CREATE_DATABASE:
  case DP_AS_CREATE_CATALOG:
    dp_buf_printf(&b, "Create%s %s", s->kind == DP_AS_CREATE_CATALOG ? "Catalog" : "Database",
                  last_part(&s->u.namespace_.name));
    break;
  case DP_AS_ALTER_TABLE: {
    const dp_ast_alter *al = &s->u.alter;
    if (al->action == 'N')
      dp_buf_printf(&b, "AlterTable %s RenameTo %s", last_part(&al->name), last_part(&al->new_name));
    else
      summarize_table(&b, cat, "AlterTable", &al->name);
    break;
  }
  case DP_AS_DESCRIBE:
    dp_buf_printf(&b, "Describe %s", last_part(&s->u.describe));
    break;
  case DP_AS_INSERT:
  case DP_AS_STATEMENT_SET:
  case DP_AS_QUERY:
  case DP_AS_EXPLAIN:
    return DIPPER_OK;
  }
  const char *line = b.oom ? NULL : dp_arena_strdup(a, dp_buf_cstr(&b));
  dp_buf_free(&b);
  *out = line;
  return line ? DIPPER_OK : DIPPER_NOMEM;
}

/* The warnings of each root of a validated statement, into the program's list. */
static int collect_warnings(dipper *db, dipper_program *prog, dp_program_stmt *ps) {
  ps->warn_begin = prog->warnings.count;
  ps->warn_end = dp_arena_calloc(prog->arena, (size_t)ps->plan.nroots + 1, sizeof *ps->warn_end);
  if (!ps->warn_end) return DIPPER_NOMEM;
  for (int r = 0; r < ps->plan.nroots; r++) {
    int rc = dp_validate_warnings(&prog->warnings, db->catalog, &ps->plan, r);
    if (rc != DIPPER_OK) return rc;
    ps->warn_end[r] = prog->warnings.count;
  }
  return dp_arena_failed(prog->arena) ? DIPPER_NOMEM : DIPPER_OK;
}

/* The public form of the warnings (dipper_program_warning is const). */
static int warnings_finish(dipper_program *prog) {
  int n = prog->warnings.count;
  if (n == 0) return DIPPER_OK;
  prog->warn_pub = dp_arena_calloc(prog->arena, (size_t)n, sizeof *prog->warn_pub);
  if (!prog->warn_pub) return DIPPER_NOMEM;
  for (int i = 0; i < n; i++) {
    const dp_diag *g = &prog->warnings.items[i];
    prog->warn_pub[i] = (dipper_diag){
        .code = g->code,
        .message = g->message ? g->message : dipper_strerror(g->code),
        .file = prog->file,
        .line = (int)g->span.line,
        .col = (int)g->span.col,
        .length = g->span.line > 0 ? (g->span.len > 0 ? (int)g->span.len : 1) : 0};
  }
  return DIPPER_OK;
}

int dipper_program_warning_count(const dipper_program *prog) {
  return prog ? prog->warnings.count : 0;
}

const dipper_diag *dipper_program_warning(const dipper_program *prog, int i) {
  if (!prog || !prog->warn_pub || i < 0 || i >= prog->warnings.count) return NULL;
  return &prog->warn_pub[i];
}

char *dipper_program_warning_render(const dipper_program *prog, int i) {
  if (!prog || i < 0 || i >= prog->warnings.count) return NULL;
  return dp_diag_render_level(&prog->warnings, &prog->warnings.items[i], "warning");
}

void dp_api_log_warnings(dipper *db, const dipper_program *prog, int i, int r) {
  const dp_program_stmt *ps = &prog->stmts[i];
  if (!ps->warn_end || r < 0 || r >= ps->plan.nroots) return;
  int from = r == 0 ? ps->warn_begin : ps->warn_end[r - 1];
  for (int k = from; k < ps->warn_end[r]; k++) {
    const dp_diag *g = &prog->warnings.items[k];
    if (g->span.line > 0)
      dp_session_log(db, DIPPER_LOG_WARNING, "%s:%u:%u: %s", prog->file ? prog->file : "<string>",
                     (unsigned)g->span.line, (unsigned)g->span.col, g->message);
    else
      dp_session_log(db, DIPPER_LOG_WARNING, "%s", g->message);
  }
}

/* Bind, analyse and validate one statement.  Errors are in db->diags; the
** code is returned too, so that a failure that recorded nothing (no memory
** to record it) still fails the compile. */
static int compile_stmt(dipper *db, dipper_program *prog, dp_program_stmt *ps) {
  int rc = dp_bind_stmt(prog->arena, &db->diags, db->catalog, ps->ast, &ps->plan);
  if (rc != DIPPER_OK) return rc;
  if ((rc = summarize(prog->arena, db->catalog, ps->ast, &ps->summary))) return rc;
  if (ps->plan.nroots == 0)
    return dp_api_stmt_rows(prog->arena, &db->diags, db->catalog, ps->ast, &ps->plan, &ps->rows);
  rc = dp_analyze(prog->arena, &db->diags, db->catalog, &ps->plan);
  if (rc != DIPPER_OK) return rc;
  rc = dp_validate(&db->diags, db->catalog, &ps->plan);
  if (rc == DIPPER_OK && !ps->explain) rc = collect_warnings(db, prog, ps);
  if (rc == DIPPER_OK && !ps->explain && ps->plan.njava > 0 && !dp_api_on_spark(db)) {
    const dp_udf_def *f = ps->plan.java[0];
    return dp_error(&db->diags, DIPPER_UNSUPPORTED, ps->plan.java_span,
                    "function %s is the Java class '%s', which only Spark can run (open the "
                    "handle on sc://...); the embedded engine runs SQL functions (CREATE FUNCTION "
                    "f(a INT) RETURNS INT RETURN ..) and C functions (dipper_create_scalar_function)",
                    f->name, f->class_name);
  }
  /* On Spark, what Spark cannot run is a compile error too (with its place),
  ** never an AnalysisException at run time. */
  if (rc == DIPPER_OK && !ps->explain && dp_api_on_spark(db))
    rc = dp_spark_check_stmt(db, prog->arena, &ps->plan);
  if (rc == DIPPER_OK && ps->explain)
    rc = dp_api_stmt_rows(prog->arena, &db->diags, db->catalog, ps->ast, &ps->plan, &ps->rows);
  return rc;
}

/* Record a failure that has no place in the text (misuse, no memory). */
static int fail_unplaced(dipper *db, int code, const char *message) {
  dp_span nowhere = {0, 0, 0, 0};
  dp_error(&db->diags, code, nowhere, "%s", message);
  diags_finish(db);
  return code;
}

/* The C functions the program's statements call (plan/udf.h) let go. */
static void release_functions(dipper_program *prog) {
  for (int i = 0; prog->stmts && i < prog->n; i++) dp_udf_release_plan(&prog->stmts[i].plan);
}

int dipper_compile(dipper *db, const char *sql, size_t len, const char *filename,
                   dipper_program **out) {
  if (out) *out = NULL;
  if (!db) return DIPPER_MISUSE;
  diags_begin(db, filename, NULL, 0);
  if (!out || !sql)
    return fail_unplaced(db, DIPPER_MISUSE,
                         !out ? "dipper_compile needs a place for the program: pass &prog"
                              : "dipper_compile was given no SQL text: pass a string");
  if (db->open_failed) return fail_unplaced(db, db->open_failed, db->open_error);
  if (len == (size_t)-1) len = strlen(sql);
  if (len > UINT32_MAX - 1)
    return fail_unplaced(db, DIPPER_LIMIT, "the SQL text is larger than 4 GiB: split it");

  /* The tree is several times the size of its text; one block avoids growth
  ** for ordinary scripts, and the cap keeps a huge script from reserving
  ** memory it may never need (the arena grows on demand). */
  size_t hint = len < (1u << 17) ? len * 8 + 4096 : (size_t)1 << 20;
  dp_arena *arena = dp_arena_new(hint);
  dipper_program *prog = arena ? dp_arena_calloc(arena, 1, sizeof *prog) : NULL;
  char *text = prog ? copy_bytes(arena, sql, len) : NULL;
  /* the program keeps its own copy of the name: db->file lives only until
  ** the handle's next call */
  const char *file = text && db->file ? dp_arena_strdup(arena, db->file) : NULL;
  if (!text || (db->file && !file)) {
    dp_arena_free(arena);
    return fail_unplaced(db, DIPPER_NOMEM, "out of memory while copying the SQL text");
  }
  prog->db = db;
  prog->arena = arena;
  prog->text = text;
  prog->file = file;
  dp_diags_init(&prog->warnings, arena, file, text, len);
  db->diags.text = text;
  db->diags.text_len = len;
  dp_arena *defs = dp_catalog_arena(db->catalog);
  dp_arena_clear_failed(defs);

  dp_ast_script *script = NULL;
  int rc = dp_parse(arena, &db->diags, text, len, &script);
  /* After a syntax error the statements that did parse are not bound: a
  ** broken CREATE TABLE would make every later use of the table an error too. */
  if (rc == DIPPER_OK && script) {
    prog->n = script->n;
    prog->stmts = script->n ? dp_arena_calloc(arena, (size_t)script->n, sizeof *prog->stmts)
                            : NULL;
    if (script->n && !prog->stmts) {
      rc = DIPPER_NOMEM;
    } else {
      for (int i = 0; i < script->n; i++) {
        dp_program_stmt *ps = &prog->stmts[i];
        ps->ast = script->stmts[i];
        ps->explain = ps->ast->kind == DP_AS_EXPLAIN;
        int stmt_rc = compile_stmt(db, prog, ps);
        if (rc == DIPPER_OK) rc = stmt_rc; /* the first failure; later ones still run */
        /* ...unless memory ran out: what follows would fail for want of
        ** what this statement did not finish (a view, a table) */
        if (stmt_rc == DIPPER_NOMEM) {
          rc = DIPPER_NOMEM;
          break;
        }
      }
    }
  }
  if (rc == DIPPER_OK) rc = warnings_finish(prog);
  if (rc == DIPPER_OK && db->diags.count == 0 && !dp_arena_failed(arena) &&
      !dp_arena_failed(defs)) {
    *out = prog;
    return DIPPER_OK;
  }
  /* Memory that ran out anywhere in the compiler is the failure, whatever
  ** error it turned into on its way up ("no such type", an unknown view). */
  if (dp_arena_failed(arena) || dp_arena_failed(defs)) rc = DIPPER_NOMEM;
  int first = rc == DIPPER_NOMEM ? rc : db->diags.count > 0 ? db->diags.items[0].code : rc;
  if (first == DIPPER_OK) first = DIPPER_INTERNAL;
  if (db->diags.count == 0) {
    dp_span nowhere = {0, 0, 0, 0};
    dp_error(&db->diags, first, nowhere, "%s", dipper_strerror(first));
  }
  int kept = diags_finish(db);
  release_functions(prog);
  dp_arena_free(arena);
  return kept == DIPPER_OK ? first : kept;
}

void dipper_program_free(dipper_program *prog) {
  if (!prog) return;
  release_functions(prog);
  dp_arena_free(prog->arena);
}

int dipper_program_count(const dipper_program *prog) { return prog ? prog->n : 0; }

int dipper_program_streaming(const dipper_program *prog) {
  for (int i = 0; prog && i < prog->n; i++)
    if (!prog->stmts[i].explain && prog->stmts[i].plan.nroots > 0 && prog->stmts[i].plan.streaming)
      return 1;
  return 0;
}

int dipper_program_stmt_kind(const dipper_program *prog, int stmt, int *out) {
  if (!prog || !out || stmt < 0 || stmt >= prog->n) return DIPPER_MISUSE;
  const dp_program_stmt *ps = &prog->stmts[stmt];
  switch (ps->ast->kind) {
  case DP_AS_QUERY: *out = DIPPER_STMT_QUERY; break;
  case DP_AS_INSERT:
  case DP_AS_STATEMENT_SET: *out = DIPPER_STMT_INSERT; break;
  case DP_AS_CREATE_TABLE: /* CREATE TABLE .. AS SELECT: the INSERT of its query */
    *out = ps->plan.nroots > 0 ? DIPPER_STMT_INSERT : DIPPER_STMT_SESSION;
    break;
  default: *out = ps->rows ? DIPPER_STMT_RESULT : DIPPER_STMT_SESSION; break;
  }
  return DIPPER_OK;
}

/* ---- explain ---- */

int dipper_explain(const dipper_program *prog, unsigned flags, char **out) {
  if (!out) return DIPPER_MISUSE;
  *out = NULL;
  if (!prog) return DIPPER_MISUSE;
  dp_buf b = DP_BUF_INIT;
  if (flags & DIPPER_EXPLAIN_JSON) {
    dp_buf_puts(&b, "{\"statements\": [");
    for (int i = 0; i < prog->n; i++) {
      const dp_program_stmt *ps = &prog->stmts[i];
      dp_buf_puts(&b, i ? ",\n  " : "\n  ");
      dp_explain_stmt_json(&b, ps->summary, &ps->plan, flags, 1);
    }
    dp_buf_puts(&b, prog->n ? "\n]}\n" : "]}\n");
  }
  for (int i = 0; i < prog->n && !(flags & DIPPER_EXPLAIN_JSON); i++) {
    const dp_program_stmt *ps = &prog->stmts[i];
    if (i > 0) dp_buf_putc(&b, '\n'); /* a blank line between statements */
    if (ps->summary) {
      dp_buf_puts(&b, ps->summary);
      dp_buf_putc(&b, '\n');
    }
    if (ps->plan.nroots > 0) {
      size_t before = b.len;
      dp_explain_plan(&b, &ps->plan, flags);
      if (b.len > before && b.data[b.len - 1] != '\n') dp_buf_putc(&b, '\n');
    } else if (!ps->summary) {
      /* A statement with neither: say so rather than print nothing. */
      dp_buf_puts(&b, "(no plan)\n");
    }
  }
  if (b.oom) {
    dp_buf_free(&b);
    return DIPPER_NOMEM;
  }
  /* An empty program still yields a string the caller can free. */
  *out = b.len > 0 ? dp_buf_take(&b) : calloc(1, 1);
  return *out ? DIPPER_OK : DIPPER_NOMEM;
}
