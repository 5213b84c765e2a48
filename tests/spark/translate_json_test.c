/*
** translate_json_test.c — the JSON functions and PARSE_URL on Spark
** (spark/translate_expr.c, functions_map.def), offline: the default forms
** of JSON_VALUE and JSON_EXISTS become get_json_object (isnotnull for
** EXISTS, NULL for a NULL input), PARSE_URL try_parse_url, the Flink 2.x
** string functions their Spark namesakes; the forms whose
** answers Spark cannot give are refused at compile time with the reason.
** The relation is checked in its serialized bytes (function names and
** literals appear there as they are).
*/
#include <stdlib.h>

#include "api/dipper_int.h"
#include "spark/translate.h"
#include "test.h"

static const char *DDL =
    "SET 'execution.runtime-mode' = 'batch';\n"
    "CREATE TABLE t (j STRING, u STRING, a ARRAY<INT>, s ARRAY<STRING>, m MAP<STRING, INT>, b BOOLEAN) WITH ('connector' = 'filesystem', "
    "'path' = '/tmp/dipper-json-in', 'format' = 'json');\n";

typedef struct out {
  int rc;
  char msg[1024];
  uint8_t *bytes;
  size_t n;
} out;

static void translate(const char *select, out *o) {
  memset(o, 0, sizeof *o);
  char sql[2048];
  snprintf(sql, sizeof sql, "%s%s", DDL, select);
  dipper *db = NULL;
  dipper_program *p = NULL;
  o->rc = dipper_open(&db, "embedded");
  if (!o->rc) o->rc = dipper_compile(db, sql, (size_t)-1, "<test>", &p);
  if (o->rc) snprintf(o->msg, sizeof o->msg, "%s", dipper_errmsg(db));
  if (!o->rc) {
    dp_arena *a = dp_arena_new(0);
    dp_diags d;
    dp_diags_init(&d, a, "<test>", sql, strlen(sql));
    dp_spark_ctx c = {a, &d, NULL, NULL};
    dp_query_plan *q = &p->stmts[p->n - 1].plan;
    Spark__Connect__Relation *rel = NULL;
    o->rc = dp_spark_relation(&c, q, q->roots[0], &rel);
    if (!o->rc && rel) {
      o->n = protobuf_c_message_get_packed_size(&rel->base);
      o->bytes = malloc(o->n ? o->n : 1);
      protobuf_c_message_pack(&rel->base, o->bytes);
    }
    if (d.count) snprintf(o->msg, sizeof o->msg, "%s", d.items[0].message);
    dp_arena_free(a);
  }
  dipper_program_free(p);
  dipper_close(db);
}

static bool has(const out *o, const char *s) {
  size_t k = strlen(s);
  for (size_t i = 0; o->bytes && i + k <= o->n; i++)
    if (memcmp(o->bytes + i, s, k) == 0) return true;
  return false;
}

TEST(default_forms_map_to_spark_functions) {
  out o;
  translate("SELECT JSON_VALUE(j, '$.a.b[0]') FROM t", &o);
  CHECK_EQ(o.rc, DIPPER_OK);
  CHECK(has(&o, "get_json_object"));
  free(o.bytes);
  translate("SELECT JSON_EXISTS(j, 'lax $.a' FALSE ON ERROR) FROM t", &o);
  CHECK_EQ(o.rc, DIPPER_OK);
  CHECK(has(&o, "get_json_object"));
  CHECK(has(&o, "isnotnull"));
  CHECK(has(&o, "isnull"));
  free(o.bytes);
  translate("SELECT PARSE_URL(u, 'QUERY', 'k1'), PARSE_URL(u, 'HOST') FROM t", &o);
  CHECK_EQ(o.rc, DIPPER_OK);
  CHECK(has(&o, "try_parse_url"));
  free(o.bytes);
  translate("SELECT STARTSWITH(j, 'a'), ENDSWITH(j, 'b'), INSTR(j, 'c'), URL_ENCODE(u), URL_DECODE(u) FROM t", &o);
  CHECK_EQ(o.rc, DIPPER_OK);
  CHECK(has(&o, "startswith"));
  CHECK(has(&o, "endswith"));
  CHECK(has(&o, "instr"));
  CHECK(has(&o, "url_encode"));
  CHECK(has(&o, "try_url_decode"));
  free(o.bytes);
  translate("SELECT ARRAY_REVERSE(a), ARRAY_DISTINCT(a), ARRAY_POSITION(a, 2), ARRAY_REMOVE(a, 3), ARRAY_MAX(a), "
            "ARRAY_MIN(a), ARRAY_JOIN(s, ',', '?') FROM t", &o);
  CHECK_EQ(o.rc, DIPPER_OK);
  if (o.rc) fprintf(stderr, "%s\n", o.msg);
  CHECK(has(&o, "reverse"));
  CHECK(has(&o, "array_distinct"));
  CHECK(has(&o, "array_position"));
  CHECK(has(&o, "array_remove"));
  CHECK(has(&o, "array_max"));
  CHECK(has(&o, "array_min"));
  CHECK(has(&o, "array_join"));
  free(o.bytes);
  translate("SELECT ARRAY_SLICE(a, 2, -1), ARRAY_SLICE(a, 0), ARRAY_SORT(a), ARRAY_SORT(a, FALSE), "
            "ARRAY_SORT(a, TRUE, TRUE), ARRAY_UNION(a, a), ARRAY_EXCEPT(a, a), ARRAY_INTERSECT(a, a), "
            "ARRAY_CONCAT(a, a, a), ARRAY_APPEND(a, 1), ARRAY_PREPEND(a, 1), ELEMENT(a), "
            "MAP_FROM_ARRAYS(s, a), MAP_ENTRIES(m), MAP_UNION(m) FROM t", &o);
  CHECK_EQ(o.rc, DIPPER_OK);
  if (o.rc) fprintf(stderr, "%s\n", o.msg);
  CHECK(has(&o, "slice"));
  CHECK(has(&o, "size"));
  CHECK(has(&o, "sort_array"));
  CHECK(has(&o, "array_union"));
  CHECK(has(&o, "array_except"));
  CHECK(has(&o, "array_intersect"));
  CHECK(has(&o, "concat"));
  CHECK(has(&o, "array_append"));
  CHECK(has(&o, "array_prepend"));
  CHECK(has(&o, "raise_error"));
  CHECK(has(&o, "map_from_arrays"));
  CHECK(has(&o, "map_entries"));
  free(o.bytes);
}

TEST(forms_spark_cannot_answer_are_refused) {
  static const struct {
    const char *sql, *words;
  } cases[] = {
      {"SELECT JSON_VALUE(j, '$.a' RETURNING INT) FROM t", "no RETURNING type"},
      {"SELECT JSON_VALUE(j, '$.a' DEFAULT 'x' ON EMPTY) FROM t", "ON EMPTY / ON ERROR"},
      {"SELECT JSON_VALUE(j, 'strict $.a') FROM t", "no strict mode"},
      {"SELECT JSON_EXISTS(j, '$.a' TRUE ON ERROR) FROM t", "JSON_EXISTS on Spark"},
      {"SELECT JSON_QUERY(j, '$.a') FROM t", "also returns scalars"},
      {"SELECT JSON_OBJECT('k' VALUE j) FROM t", "leaves NULL fields out"},
      {"SELECT JSON_ARRAY(j) FROM t", "one element type"},
      {"SELECT j IS JSON FROM t", "no IS JSON predicate"},
      {"SELECT JSON_STRING(j) FROM t", "to_json takes only"},
      {"SELECT ARRAY_REMOVE(a, CAST(NULL AS INT)) FROM t", "removes the NULL elements"},
      {"SELECT JSON_ARRAYAGG(j) FROM t", "to_json takes only"},
      {"SELECT ARRAY_SORT(a, TRUE, FALSE) FROM t", "Spark cannot place them otherwise"},
      {"SELECT ARRAY_SORT(a, b) FROM t", "constant order"},
      {"SELECT MAP_UNION(m, m) FROM t", "later map's value"},
      {"SELECT CURRENT_ROW_TIMESTAMP() FROM t", "not per row"},
      {"SELECT LOCALTIME FROM t", "TIME values"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    out o;
    translate(cases[i].sql, &o);
    CHECK_EQ(o.rc, DIPPER_UNSUPPORTED);
    if (!strstr(o.msg, cases[i].words)) fprintf(stderr, "%s\n  -> %s\n", cases[i].sql, o.msg);
    CHECK_CONTAINS(o.msg, cases[i].words);
    free(o.bytes);
  }
}

int main(void) { return RUN_TESTS(); }
