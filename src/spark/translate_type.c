/*
** translate_type.c — the type mapping table: dipper types as Spark DataType
** messages and as Spark DDL text.
**
**   dipper                      Spark
**   BOOLEAN                     boolean
**   TINYINT SMALLINT INT BIGINT byte short integer long (TINYINT ... BIGINT)
**   FLOAT DOUBLE                float double
**   DECIMAL(p, s)               decimal(p, s)
**   STRING, VARCHAR(n)          string (VARCHAR's length is dipper's check)
**   BYTES                       binary
**   DATE                        date
**   TIMESTAMP(p)                timestamp_ntz (µs; p is display only)
**   TIMESTAMP_LTZ(p)            timestamp (an instant, µs)
**   INTERVAL DAY TO SECOND      interval day to second
**   INTERVAL YEAR TO MONTH      interval year to month
**   ROW<a T, ...>               struct<a: T, ...>
**   ARRAY<T>, MAP<K, V>         array<T>, map<K, V>
**   NULL (untyped)              void
**   TIME(p)                     refused: Spark 4.1's TIME is off by default
**
** Owns: the table above.  Does not own: values (translate_expr.c).
*/
#include <string.h>

#include "core/buf.h"
#include "spark/translate_int.h"

static Spark__Connect__DataType *new_type(dp_sx *x, Spark__Connect__DataType__KindCase k) {
  Spark__Connect__DataType *d;
  if (!DP_SX_NEW(x, d, spark__connect__data_type__init)) return NULL;
  d->kind_case = k;
  return d;
}

/* The scalar kinds whose message has no parameters. */
#define SIMPLE_(x, d, KIND, member, T, init)                          \
  do {                                                                \
    T *m_;                                                            \
    if (!((d) = new_type((x), SPARK__CONNECT__DATA_TYPE__KIND_##KIND)) || !DP_SX_NEW((x), m_, init)) \
      return NULL;                                                    \
    (d)->member = m_;                                                 \
  } while (0)

static Spark__Connect__DataType *time_refused(dp_sx *x, dp_span span) {
  dp_sx_refuse(x, span,
               "Spark has no TIME type by default (Spark 4.1 keeps it behind a flag); keep the time "
               "of day as a STRING, or as a TIMESTAMP");
  return NULL;
}

Spark__Connect__DataType *dp_sx_type(dp_sx *x, const dp_type *t, dp_span span) {
  Spark__Connect__DataType *d = NULL;
  switch (t->kind) {
  case DP_T_NULL: SIMPLE_(x, d, NULL, null, Spark__Connect__DataType__NULL, spark__connect__data_type__null__init); break;
  case DP_T_BOOLEAN: SIMPLE_(x, d, BOOLEAN, boolean, Spark__Connect__DataType__Boolean, spark__connect__data_type__boolean__init); break;
  case DP_T_TINYINT: SIMPLE_(x, d, BYTE, byte, Spark__Connect__DataType__Byte, spark__connect__data_type__byte__init); break;
  case DP_T_SMALLINT: SIMPLE_(x, d, SHORT, short_, Spark__Connect__DataType__Short, spark__connect__data_type__short__init); break;
  case DP_T_INT: SIMPLE_(x, d, INTEGER, integer, Spark__Connect__DataType__Integer, spark__connect__data_type__integer__init); break;
  case DP_T_BIGINT: SIMPLE_(x, d, LONG, long_, Spark__Connect__DataType__Long, spark__connect__data_type__long__init); break;
  case DP_T_FLOAT: SIMPLE_(x, d, FLOAT, float_, Spark__Connect__DataType__Float, spark__connect__data_type__float__init); break;
  case DP_T_DOUBLE: SIMPLE_(x, d, DOUBLE, double_, Spark__Connect__DataType__Double, spark__connect__data_type__double__init); break;
  case DP_T_STRING: SIMPLE_(x, d, STRING, string, Spark__Connect__DataType__String, spark__connect__data_type__string__init); break;
  case DP_T_BYTES: SIMPLE_(x, d, BINARY, binary, Spark__Connect__DataType__Binary, spark__connect__data_type__binary__init); break;
  case DP_T_DATE: SIMPLE_(x, d, DATE, date, Spark__Connect__DataType__Date, spark__connect__data_type__date__init); break;
  case DP_T_TIMESTAMP: SIMPLE_(x, d, TIMESTAMP_NTZ, timestamp_ntz, Spark__Connect__DataType__TimestampNTZ, spark__connect__data_type__timestamp_ntz__init); break;
  case DP_T_TIMESTAMP_LTZ: SIMPLE_(x, d, TIMESTAMP, timestamp, Spark__Connect__DataType__Timestamp, spark__connect__data_type__timestamp__init); break;
  case DP_T_TIME: return time_refused(x, span);
  case DP_T_DECIMAL: {
    Spark__Connect__DataType__Decimal *m;
    if (!(d = new_type(x, SPARK__CONNECT__DATA_TYPE__KIND_DECIMAL)) ||
        !DP_SX_NEW(x, m, spark__connect__data_type__decimal__init))
      return NULL;
    m->_precision_case = SPARK__CONNECT__DATA_TYPE__DECIMAL___PRECISION_PRECISION;
    m->precision = t->precision;
    m->_scale_case = SPARK__CONNECT__DATA_TYPE__DECIMAL___SCALE_SCALE;
    m->scale = t->scale;
    d->decimal = m;
    break;
  }
  case DP_T_INTERVAL_DT: {
    /* DAY (0) TO SECOND (3): Spark's DayTimeIntervalType fields */
    Spark__Connect__DataType__DayTimeInterval *m;
    if (!(d = new_type(x, SPARK__CONNECT__DATA_TYPE__KIND_DAY_TIME_INTERVAL)) ||
        !DP_SX_NEW(x, m, spark__connect__data_type__day_time_interval__init))
      return NULL;
    m->_start_field_case = SPARK__CONNECT__DATA_TYPE__DAY_TIME_INTERVAL___START_FIELD_START_FIELD;
    m->start_field = 0;
    m->_end_field_case = SPARK__CONNECT__DATA_TYPE__DAY_TIME_INTERVAL___END_FIELD_END_FIELD;
    m->end_field = 3;
    d->day_time_interval = m;
    break;
  }
  case DP_T_INTERVAL_YM: {
    /* YEAR (0) TO MONTH (1) */
    Spark__Connect__DataType__YearMonthInterval *m;
    if (!(d = new_type(x, SPARK__CONNECT__DATA_TYPE__KIND_YEAR_MONTH_INTERVAL)) ||
        !DP_SX_NEW(x, m, spark__connect__data_type__year_month_interval__init))
      return NULL;
    m->_start_field_case = SPARK__CONNECT__DATA_TYPE__YEAR_MONTH_INTERVAL___START_FIELD_START_FIELD;
    m->start_field = 0;
    m->_end_field_case = SPARK__CONNECT__DATA_TYPE__YEAR_MONTH_INTERVAL___END_FIELD_END_FIELD;
    m->end_field = 1;
    d->year_month_interval = m;
    break;
  }
  case DP_T_ARRAY: {
    Spark__Connect__DataType__Array *m;
    if (!(d = new_type(x, SPARK__CONNECT__DATA_TYPE__KIND_ARRAY)) ||
        !DP_SX_NEW(x, m, spark__connect__data_type__array__init))
      return NULL;
    if (!(m->element_type = dp_sx_type(x, t->elem, span))) return NULL;
    m->contains_null = !t->elem->not_null;
    d->array = m;
    break;
  }
  case DP_T_MAP: {
    Spark__Connect__DataType__Map *m;
    if (!(d = new_type(x, SPARK__CONNECT__DATA_TYPE__KIND_MAP)) ||
        !DP_SX_NEW(x, m, spark__connect__data_type__map__init))
      return NULL;
    m->key_type = dp_sx_type(x, t->elem, span);
    m->value_type = dp_sx_type(x, t->value, span);
    if (!m->key_type || !m->value_type) return NULL;
    m->value_contains_null = !t->value->not_null;
    d->map = m;
    break;
  }
  case DP_T_ROW: {
    Spark__Connect__DataType__Struct *m;
    if (!(d = new_type(x, SPARK__CONNECT__DATA_TYPE__KIND_STRUCT)) ||
        !DP_SX_NEW(x, m, spark__connect__data_type__struct__init))
      return NULL;
    m->n_fields = (size_t)t->nfields;
    m->fields = dp_sx_alloc(x, (size_t)(t->nfields ? t->nfields : 1) * sizeof *m->fields);
    if (!m->fields) return NULL;
    for (int i = 0; i < t->nfields; i++) {
      Spark__Connect__DataType__StructField *f;
      if (!DP_SX_NEW(x, f, spark__connect__data_type__struct_field__init)) return NULL;
      f->name = dp_sx_strdup(x, t->fields[i].name);
      f->data_type = dp_sx_type(x, t->fields[i].type, span);
      if (!f->name || !f->data_type) return NULL;
      f->nullable = !t->fields[i].type->not_null;
      m->fields[i] = f;
    }
    d->struct_ = m;
    break;
  }
  case DP_T_COUNT_: break;
  }
  if (!d && x->rc == DIPPER_OK) dp_sx_refuse(x, span, "this type has no Spark equivalent");
  return d;
}

static void put_ident(dp_buf *b, const char *name) {
  dp_buf_putc(b, '`');
  for (const char *p = name; *p; p++) {
    if (*p == '`') dp_buf_putc(b, '`'); /* `` inside a quoted identifier */
    dp_buf_putc(b, *p);
  }
  dp_buf_putc(b, '`');
}

static bool put_type(dp_sx *x, dp_buf *b, const dp_type *t, dp_span span) {
  switch (t->kind) {
  case DP_T_NULL: dp_buf_puts(b, "VOID"); return true;
  case DP_T_BOOLEAN: dp_buf_puts(b, "BOOLEAN"); return true;
  case DP_T_TINYINT: dp_buf_puts(b, "TINYINT"); return true;
  case DP_T_SMALLINT: dp_buf_puts(b, "SMALLINT"); return true;
  case DP_T_INT: dp_buf_puts(b, "INT"); return true;
  case DP_T_BIGINT: dp_buf_puts(b, "BIGINT"); return true;
  case DP_T_FLOAT: dp_buf_puts(b, "FLOAT"); return true;
  case DP_T_DOUBLE: dp_buf_puts(b, "DOUBLE"); return true;
  case DP_T_DECIMAL: dp_buf_printf(b, "DECIMAL(%d,%d)", t->precision, t->scale); return true;
  case DP_T_STRING: dp_buf_puts(b, "STRING"); return true;
  case DP_T_BYTES: dp_buf_puts(b, "BINARY"); return true;
  case DP_T_DATE: dp_buf_puts(b, "DATE"); return true;
  case DP_T_TIMESTAMP: dp_buf_puts(b, "TIMESTAMP_NTZ"); return true;
  case DP_T_TIMESTAMP_LTZ: dp_buf_puts(b, "TIMESTAMP"); return true;
  case DP_T_INTERVAL_DT: dp_buf_puts(b, "INTERVAL DAY TO SECOND"); return true;
  case DP_T_INTERVAL_YM: dp_buf_puts(b, "INTERVAL YEAR TO MONTH"); return true;
  case DP_T_TIME: time_refused(x, span); return false;
  case DP_T_ARRAY:
    dp_buf_puts(b, "ARRAY<");
    if (!put_type(x, b, t->elem, span)) return false;
    dp_buf_putc(b, '>');
    return true;
  case DP_T_MAP:
    dp_buf_puts(b, "MAP<");
    if (!put_type(x, b, t->elem, span)) return false;
    dp_buf_puts(b, ", ");
    if (!put_type(x, b, t->value, span)) return false;
    dp_buf_putc(b, '>');
    return true;
  case DP_T_ROW:
    dp_buf_puts(b, "STRUCT<");
    for (int i = 0; i < t->nfields; i++) {
      if (i) dp_buf_puts(b, ", ");
      put_ident(b, t->fields[i].name);
      dp_buf_puts(b, ": ");
      if (!put_type(x, b, t->fields[i].type, span)) return false;
    }
    dp_buf_putc(b, '>');
    return true;
  case DP_T_COUNT_: break;
  }
  dp_sx_refuse(x, span, "this type has no Spark equivalent");
  return false;
}

static const char *finish(dp_sx *x, dp_buf *b, bool ok) {
  const char *s = NULL;
  if (ok && b->oom) dp_sx_nomem(x);
  else if (ok && !(s = dp_sx_strdup(x, dp_buf_cstr(b)))) dp_sx_nomem(x);
  dp_buf_free(b);
  return s;
}

const char *dp_sx_type_ddl(dp_sx *x, const dp_type *t, dp_span span) {
  dp_buf b = DP_BUF_INIT;
  bool ok = put_type(x, &b, t, span);
  return finish(x, &b, ok);
}

const char *dp_sx_schema_ddl(dp_sx *x, const dp_schema *s, const bool *keep, dp_span span) {
  dp_buf b = DP_BUF_INIT;
  bool ok = true, first = true;
  for (int i = 0; i < s->ncols && ok; i++) {
    if (keep && !keep[i]) continue;
    if (!first) dp_buf_puts(&b, ", ");
    first = false;
    put_ident(&b, s->cols[i].name);
    dp_buf_putc(&b, ' ');
    ok = put_type(x, &b, s->cols[i].type, span);
  }
  return finish(x, &b, ok);
}

const char *dp_spark_type_ddl(dp_spark_ctx *c, const dp_type *t, dp_span span) {
  dp_sx x;
  dp_sx_init(&x, c, NULL);
  return dp_sx_type_ddl(&x, t, span);
}
