/*
** fastscan_test.c — the decoders' fast paths (formats/fastscan.h) against
** their general path: every record decoded twice, by a decoder with the
** fast paths and by one with 'reference' set (the general path only), must
** give the same code, the same error (offset and message) and the same
** values, bit for bit.  Records: edge cases written out (numbers at the
** int64 and double limits, exponents, denormals, many digits, -0.0, escapes
** and surrogate pairs, bad UTF-8, timestamps near every bound, keys in any
** order, twice, unknown and nested, white space, SIMD block edges), then
** random records and random corruptions of them.  Plus expected values for
** the common forms, so that the two cannot agree on a wrong answer, and
** doubles checked against strtod.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "formats/fastscan.h"
#include "formats/formats.h"
#include "test.h"

static dp_arena *A;

/* xorshift64*: reproducible randomness. */
static uint64_t rnd_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void) {
  uint64_t x = rnd_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rnd_state = x;
  return x * 0x2545F4914F6CDD1DULL;
}
static unsigned rnd_below(unsigned n) { return (unsigned)(rnd() >> 33) % n; }

/* Are row r of a and b the same value (bits of doubles included)? */
static bool same_row(const dp_vector *a, const dp_vector *b, int64_t r) {
  if (dp_vector_is_null(a, r) != dp_vector_is_null(b, r)) return false;
  if (dp_vector_is_null(a, r)) return true;
  switch (a->phys) {
  case DP_PHYS_BIT: return dp_vector_get_bool(a, r) == dp_vector_get_bool(b, r);
  case DP_PHYS_I8:
  case DP_PHYS_I16:
  case DP_PHYS_I32:
  case DP_PHYS_I64: return dp_vector_get_i64(a, r) == dp_vector_get_i64(b, r);
  case DP_PHYS_F32:
  case DP_PHYS_F64: {
    double x = dp_vector_get_f64(a, r), y = dp_vector_get_f64(b, r);
    return memcmp(&x, &y, sizeof x) == 0;
  }
  case DP_PHYS_D128: return dp_vector_get_dec(a, r) == dp_vector_get_dec(b, r);
  case DP_PHYS_VARBIN: {
    size_t n1, n2;
    const char *s1 = dp_vector_get_str(a, r, &n1), *s2 = dp_vector_get_str(b, r, &n2);
    return n1 == n2 && memcmp(s1, s2, n1) == 0;
  }
  case DP_PHYS_STRUCT:
    for (int c = 0; c < a->nchildren; c++)
      if (!same_row(a->children[c], b->children[c], r)) return false;
    return true;
  case DP_PHYS_LIST: {
    int64_t s1, e1, s2, e2;
    dp_vector_list_bounds(a, r, &s1, &e1);
    dp_vector_list_bounds(b, r, &s2, &e2);
    if (e1 - s1 != e2 - s2) return false;
    for (int64_t i = 0; i < e1 - s1; i++)
      if (!same_row(a->children[0], b->children[0], s1 + i)) return false;
    return true;
  }
  default: return true;
  }
}

typedef struct pair {
  dp_batch *fast, *ref;
  dp_json_decoder *jf, *jr;
  dp_csv_decoder *cf, *cr;
  int64_t records, rows, errors;
} pair;

/* Decode rec both ways and compare; false (and a note) on a difference. */
static bool compare(pair *p, const char *rec, size_t n) {
  dp_format_error e1, e2;
  bool sk1 = false, sk2 = false;
  int r1, r2;
  if (p->jf) {
    r1 = dp_json_decode(p->jf, rec, n, p->fast, &e1);
    r2 = dp_json_decode(p->jr, rec, n, p->ref, &e2);
  } else {
    r1 = dp_csv_decode(p->cf, rec, n, p->fast, &sk1, &e1);
    r2 = dp_csv_decode(p->cr, rec, n, p->ref, &sk2, &e2);
  }
  p->records++;
  bool ok = r1 == r2 && sk1 == sk2;
  if (ok && r1 == DIPPER_DATA) {
    p->errors++;
    ok = e1.offset == e2.offset && strcmp(e1.msg, e2.msg) == 0;
  }
  if (ok && r1 == DIPPER_OK && !sk1) {
    dp_batch_sync(p->fast);
    dp_batch_sync(p->ref);
    ok = p->fast->nrows == p->ref->nrows;
    for (int c = 0; ok && c < p->fast->ncols; c++)
      ok = same_row(p->fast->cols[c], p->ref->cols[c], p->fast->nrows - 1);
    p->rows++;
  }
  for (int c = 0; c < p->fast->ncols; c++)
    ok = ok && p->fast->cols[c]->length == p->ref->cols[c]->length;
  if (!ok)
    fprintf(stderr, "differs: [%.*s]\n  fast rc %d at %lld: %s\n  ref  rc %d at %lld: %s\n",
            (int)(n > 300 ? 300 : n), rec, r1, (long long)(r1 ? e1.offset : -1),
            r1 ? e1.msg : "", r2, (long long)(r2 ? e2.offset : -1), r2 ? e2.msg : "");
  if (p->fast->nrows >= 1000) {
    dp_batch_clear(p->fast);
    dp_batch_clear(p->ref);
  }
  return ok;
}

static bool compare_str(pair *p, const char *rec) { return compare(p, rec, strlen(rec)); }

/* The schema of the tests: the payment records' columns and more. */
static dp_schema *test_schema(bool csv) {
  static const char *const names[] = {"i8",  "i16", "i32", "i64",  "f",     "d",    "ts",
                                      "ts6", "ts0", "ltz", "s",    "createTime_longer_name",
                                      "dt",  "b",   "dec", "nest"};
  int n = csv ? 15 : 16;
  dp_schema *s = dp_schema_new(A, n);
  dp_field f[2] = {{"a", dp_type_of(DP_T_INT)}, {"t", dp_type_timestamp(A, DP_T_TIMESTAMP, 3)}};
  const dp_type *row = dp_type_row(A, 2, f);
  const dp_type *types[] = {dp_type_of(DP_T_TINYINT),
                            dp_type_of(DP_T_SMALLINT),
                            dp_type_of(DP_T_INT),
                            dp_type_of(DP_T_BIGINT),
                            dp_type_of(DP_T_FLOAT),
                            dp_type_of(DP_T_DOUBLE),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 3),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 6),
                            dp_type_timestamp(A, DP_T_TIMESTAMP, 0),
                            dp_type_timestamp(A, DP_T_TIMESTAMP_LTZ, 3),
                            dp_type_of(DP_T_STRING),
                            dp_type_of(DP_T_STRING),
                            dp_type_of(DP_T_DATE),
                            dp_type_of(DP_T_BOOLEAN),
                            dp_type_decimal(A, 12, 2),
                            row};
  for (int i = 0; i < n; i++) {
    s->cols[i].name = names[i];
    s->cols[i].type = types[i];
  }
  return s;
}

static pair json_pair(const dp_schema *s) {
  pair p;
  memset(&p, 0, sizeof p);
  dp_json_options o = {false, false};
  p.jf = dp_json_decoder_new(s, NULL, &o);
  o.reference = true;
  p.jr = dp_json_decoder_new(s, NULL, &o);
  p.fast = dp_batch_new(s, 0);
  p.ref = dp_batch_new(s, 0);
  return p;
}

static pair csv_pair(const dp_schema *s) {
  pair p;
  memset(&p, 0, sizeof p);
  dp_csv_options o = dp_csv_default_options();
  p.cf = dp_csv_decoder_new(s, NULL, &o, NULL);
  o.reference = true;
  p.cr = dp_csv_decoder_new(s, NULL, &o, NULL);
  p.fast = dp_batch_new(s, 0);
  p.ref = dp_batch_new(s, 0);
  return p;
}

static void pair_free(pair *p) {
  dp_json_decoder_free(p->jf);
  dp_json_decoder_free(p->jr);
  dp_csv_decoder_free(p->cf);
  dp_csv_decoder_free(p->cr);
  dp_batch_free(p->fast);
  dp_batch_free(p->ref);
}

/* Values that stress the number, timestamp and string paths. */
static const char *const numbers[] = {
    "0", "-0", "0.0", "-0.0", "1", "-1", "127", "128", "-128", "-129", "32767", "32768",
    "-32769", "2147483647", "2147483648", "-2147483648", "-2147483649",
    "999999999999999999", "1000000000000000000", "9223372036854775807",
    "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
    "18446744073709551616", "123456789012345678901234567890", "01", "00", "-01", "1.", ".5",
    "-", "--1", "+1", "1e", "1e+", "1E+2", "1e-2", "1e2", "-1e2", "1.5e300", "1e308", "1e309",
    "-1e309", "1.7976931348623157e308", "1.7976931348623159e308", "4.9e-324", "5e-324",
    "2e-324", "2.2250738585072014e-308", "2.2250738585072011e-308", "1e-400", "0.1", "0.2",
    "0.30000000000000004", "3.141592653589793", "2.718281828459045235360287", "9007199254740993",
    "9007199254740992.0", "123.456", "-512.34", "1000.00", "0.000001", "1e22", "1e23", "1e-22",
    "1e-23", "8.98846567431158e307", "3.4028234663852886e38", "3.4028236e38", "1e39",
    "1.00000000000000000001", "0.0000000000000000000000000001", "12345678901234567890e-10",
    "1234567890123456789", "-4592935195172993661", "9999999999999999999",
    "-9999999999999999999", "10000000000000000000", "0e0", "0e-99999", "-0e5", "1e99999", "1x", "1.5.3", "0x10", "NaN",
    "Infinity", "true", "null", "\"12\"", "\"1.5\"", "\"NaN\"", "\"-Infinity\"", "[1]", "{}"};

static const char *const stamps[] = {
    "\"2024-01-01 00:00:05.000\"", "\"2024-02-29 23:59:59.999\"", "\"2023-02-29 00:00:00\"",
    "\"2023-02-28 00:00:00\"", "\"2000-02-29 12:00:00.5\"", "\"1900-02-29 00:00:00\"",
    "\"2024-13-01 00:00:00\"", "\"2024-00-01 00:00:00\"", "\"2024-01-00 00:00:00\"",
    "\"2024-01-32 00:00:00\"", "\"2024-04-31 00:00:00\"", "\"2024-01-01 24:00:00\"",
    "\"2024-01-01 23:60:00\"", "\"2024-01-01 23:59:60\"", "\"2024-01-01T00:00:00Z\"",
    "\"2024-01-01t00:00:00z\"", "\"2024-01-01 00:00:00.123456789\"",
    "\"2024-01-01 00:00:00.1234567891\"", "\"2024-01-01 00:00:00.\"", "\"2024-01-01 00:00:00.1\"",
    "\"2024-01-01 00:00:00.123456\"", "\"2024-01-01 00:00:00.1234567\"", "\" 2024-01-01 00:00:00\"",
    "\"2024-01-01 00:00:00 \"", "\"2024-1-01 00:00:00\"", "\"2024-01-01 0:00:00\"",
    "\"2024-01-01\"", "\"2024-01-01 00:00\"", "\"0000-01-01 00:00:00\"", "\"9999-12-31 23:59:59.999\"",
    "\"1969-12-31 23:59:59.999\"", "\"2024-01-01 00:00:00+01:00\"", "\"2024-01-01 00:00:00 UTC\"",
    "\"2024-01-01 00:00:00ZZ\"", "\"12024-01-01 00:00:00\"", "1704067200000", "\"1704067200000\"",
    "-1", "\"2024-01-01 00:00:00\\u0030\"", "\"2024-01-01\\u002000:00:00\"", "null", "\"\"",
    "\"2024-01-01 00:00:0a\"", "\"2024/01/01 00:00:00\""};

static const char *const strings[] = {
    "\"\"", "\"plain\"", "\"exactly 16 bytes\"", "\"fifteen bytes..\"", "\"seventeen bytes..\"",
    "\"a\\nb\"", "\"\\u00e9t\\u00E9\"", "\"\\ud83d\\ude00 grin\"", "\"\\ud83d alone\"",
    "\"\\ude00 low\"", "\"\\ud83d\\u0041\"", "\"\\u12\"", "\"\\x41\"", "\"tab\\there\"",
    "\"raw\ttab\"", "\"raw\nnewline\"", "\"h\xc3\xa9llo\"", "\"bad \xc3\x28 utf8\"", "\"\xff\"",
    "\"overlong \xc0\xaf\"", "\"surrogate \xed\xa0\x80\"", "\"\xf4\x90\x80\x80 too big\"",
    "\"0123456789abcde\\\"\"", "\"0123456789abcdef\\\\\"", "\"0123456789abcdefghijklmnopqrstuvwxyz\"",
    "\"0123456789abcdefghijklmnopqrstu\\\"vwxyz\"", "\"no end", "\"\\\"", "12", "true", "null",
    "{\"x\": [1, {\"y\": \"z\"}]}", "[1, \"two\", null]", "\"\\/\\b\\f\\r\""};

/* A random value for a column (sometimes of the wrong kind). */
/* A value of the column's form that decodes (the records that succeed). */
static const char *clean_value(int col) {
  static char buf[160];
  static const int shift[] = {57, 49, 33, 1};
  switch (col) {
  case 0:
  case 1:
  case 2:
  case 3:
    snprintf(buf, sizeof buf, "%lld", (long long)(rnd() >> shift[col]) * (rnd_below(2) ? 1 : -1));
    return buf;
  case 4:
  case 5:
  case 14:
    snprintf(buf, sizeof buf, "%u.%02u", rnd_below(1000000), rnd_below(100));
    return buf;
  case 6:
  case 7:
  case 8:
  case 9:
    snprintf(buf, sizeof buf, "\"%04u-%02u-%02u%c%02u:%02u:%02u.%0*u%s\"", 1970 + rnd_below(100),
             rnd_below(12) + 1, rnd_below(28) + 1, rnd_below(2) ? ' ' : 'T', rnd_below(24),
             rnd_below(60), rnd_below(60), (int)(rnd_below(9) & 15) + 1, rnd_below(1000000000),
             rnd_below(2) ? "" : "Z");
    return buf;
  case 10:
  case 11: return rnd_below(2) ? "\"payment \\\"q\\\" \\u00e9\"" : "\"plain text of a payment\"";
  case 12: return "\"2024-02-29\"";
  case 13: return "true";
  default: return "{\"a\": 1, \"t\": \"2024-01-01 00:00:00\"}";
  }
}

static bool clean; /* random_record writes only values that decode */

static const char *random_value(int col) {
  static char buf[160];
  if (clean) return col == 99 ? "{\"k\": [1, 2.5e3, {\"z\": null}], \"\\u00e9\": \"x\"}" : clean_value(col);
  switch (rnd_below(10) == 0 ? 99 : col) {
  case 0:
  case 1:
  case 2:
  case 3:
    if (rnd_below(3) == 0) return numbers[rnd_below(sizeof numbers / sizeof numbers[0])];
    snprintf(buf, sizeof buf, "%lld", (long long)(rnd() >> (rnd_below(64))) * (rnd_below(2) ? 1 : -1));
    return buf;
  case 4:
  case 5: {
    unsigned how = rnd_below(6);
    double d;
    uint64_t bits = rnd();
    memcpy(&d, &bits, sizeof d);
    if (how == 0 && isfinite(d)) snprintf(buf, sizeof buf, "%.17g", d);
    else if (how == 1)
      snprintf(buf, sizeof buf, "%.*f", (int)(rnd_below(6) & 7), (double)(rnd() % 10000000) / 100.0);
    else if (how == 2)
      snprintf(buf, sizeof buf, "%lld.%0*u", (long long)(rnd() % 100000),
               (int)(rnd_below(20) & 15) + 1, (unsigned)(rnd() % 100000));
    else if (how == 3)
      snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)(rnd() % 1000000),
               (int)rnd_below(80) - 40);
    else if (how == 4) snprintf(buf, sizeof buf, "%.15g", (double)rnd() / (double)(rnd() | 1));
    else return numbers[rnd_below(sizeof numbers / sizeof numbers[0])];
    return buf;
  }
  case 6:
  case 7:
  case 8:
  case 9:
  case 15:
    if (col == 15) {
      snprintf(buf, sizeof buf, "{\"t\": %s, \"a\": %u}",
               stamps[rnd_below(sizeof stamps / sizeof stamps[0])], rnd_below(100));
      return buf;
    }
    if (rnd_below(2)) return stamps[rnd_below(sizeof stamps / sizeof stamps[0])];
    snprintf(buf, sizeof buf, "\"%04u-%02u-%02u %02u:%02u:%02u.%0*u\"", rnd_below(10000), rnd_below(14),
             rnd_below(33), rnd_below(25), rnd_below(61), rnd_below(61), (int)(rnd_below(9) & 15) + 1,
             rnd_below(1000000000));
    return buf;
  case 10:
  case 11: return strings[rnd_below(sizeof strings / sizeof strings[0])];
  case 12: return rnd_below(2) ? "\"2024-02-29\"" : "\"2024-02-30\"";
  case 13: return rnd_below(2) ? "true" : "fals";
  case 14: return rnd_below(2) ? "12.345" : "1e400";
  default: {
    static const char *const any[] = {"null", "1",  "\"x\"", "[]", "{\"k\": [1, 2, {\"z\": null}]}",
                                      "-",    "tru"};
    return any[rnd_below(sizeof any / sizeof any[0])];
  }
  }
}

static const char *const ws[] = {"", "", "", " ", "\t", "\n ", "\r\n", "  "};

/* A random record of the test schema: fields in any order, some twice,
** some missing, unknown ones, white space anywhere. */
static size_t random_record(const dp_schema *s, char *out, size_t cap) {
  size_t n = 0;
  clean = rnd_below(2);
  int order[32], k = s->ncols;
  for (int i = 0; i < k; i++) order[i] = i;
  if (rnd_below(2))
    for (int i = k - 1; i > 0; i--) {
      int j = (int)rnd_below((unsigned)i + 1), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
  n += (size_t)snprintf(out + n, cap - n, "%s{", ws[rnd_below(8)]);
  bool first = true;
  for (int i = 0; i < k && n + 400 < cap; i++) {
    int c = order[i];
    if (rnd_below(12) == 0) continue; /* missing */
    const char *name = s->cols[c].name;
    char key[80];
    unsigned kind = rnd_below(20);
    if (kind == 0)
      snprintf(key, sizeof key, "\"unknown_%u\"", rnd_below(5));
    else if (kind == 1 && name[0] >= 'a' && name[0] <= 'z')
      snprintf(key, sizeof key, "\"%c%s\"", name[0] - 32, name + 1); /* case differs */
    else if (kind == 2)
      snprintf(key, sizeof key, "\"\\u%04x%s\"", (unsigned char)name[0], name + 1); /* escaped */
    else
      snprintf(key, sizeof key, "\"%s\"", name);
    n += (size_t)snprintf(out + n, cap - n, "%s%s%s%s:%s%s", first ? "" : ",", ws[rnd_below(8)], key,
                          ws[rnd_below(8)], ws[rnd_below(8)], random_value(kind == 0 ? 99 : c));
    first = false;
    if (!clean && rnd_below(40) == 0) /* twice */
      n += (size_t)snprintf(out + n, cap - n, ",\"%s\":%s", name, random_value(c));
  }
  n += (size_t)snprintf(out + n, cap - n, "%s}%s", ws[rnd_below(8)], ws[rnd_below(8)]);
  return n;
}

TEST(json_edge_cases_agree) {
  A = dp_arena_new(0);
  dp_schema *s = test_schema(false);
  pair p = json_pair(s);
  char rec[600];
  const char *const cols[] = {"i8", "i16", "i32", "i64", "f", "d", "s", "ts", "ts6", "ts0", "ltz"};
  for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
      snprintf(rec, sizeof rec, "{\"%s\":%s}", cols[c], numbers[i]);
      CHECK(compare_str(&p, rec));
      snprintf(rec, sizeof rec, "{\"%s\" : %s , \"i32\":1}", cols[c], numbers[i]);
      CHECK(compare_str(&p, rec));
      snprintf(rec, sizeof rec, "{\"%s\":%s", cols[c], numbers[i]); /* cut short */
      CHECK(compare_str(&p, rec));
    }
    for (size_t i = 0; i < sizeof stamps / sizeof stamps[0]; i++) {
      snprintf(rec, sizeof rec, "{\"%s\":%s,\"nest\":{\"t\":%s}}", cols[c], stamps[i], stamps[i]);
      CHECK(compare_str(&p, rec));
    }
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
      snprintf(rec, sizeof rec, "{\"%s\":%s}", cols[c], strings[i]);
      CHECK(compare_str(&p, rec));
      snprintf(rec, sizeof rec, "{\"%s\":%s", cols[c], strings[i]);
      CHECK(compare_str(&p, rec));
    }
  }
  /* keys: order, twice, case, escapes, unknown and nested, long names */
  static const char *const recs[] = {
      "{\"i32\":1,\"i64\":2}", "{\"i64\":2,\"i32\":1}", "{\"i32\":1,\"i32\":2}",
      "{\"I32\":1}", "{\"i3\":1}", "{\"i32x\":1}", "{\"\\u0069\\u0033\\u0032\":7}",
      "{\"i3\\u0032\":7,\"i32\":8}", "{\"createTime_longer_name\":\"x\",\"s\":\"y\"}",
      "{\"createTime_longer_nam\":\"x\"}",
      "{\"createTime_longer_name\":\"x\",\"createTime_longer_name\":\"x\"}",
      "{\"zz\":{\"a\":[1,2,{\"b\":\"\\u0041\"}],\"c\":null},\"i32\":3}", "{\"zz\":[[[[]]]],\"i32\":3}",
      "{\"zz\":{\"a\":}, \"i32\":3}", "{\"zz\":\"\\ud800\",\"i32\":3}", " \t\r\n{ \"i32\" \t:\r\n 5 \n} \n",
      "{}", "{ }", "", "   ", "[]", "{\"i32\":1,}", "{,\"i32\":1}", "{\"i32\":1} x", "{\"i32\":1}{}",
      "{\"nest\":{\"a\":1,\"t\":\"2024-01-01 00:00:00\",\"a\":2}}", "{\"nest\":{\"A\":1,\"T\":null}}",
      "{\"nest\":null}", "{\"nest\":[]}", "{\"i32\":1 \"i64\":2}", "{\"i32\" 1}", "{i32:1}",
      "{'i32':1}", "{\"i32\":1/*c*/}", "{\"s\":\"\\u0000\"}", "{\"s\":\"a\\u0000b\"}",
      "{\"i32\"", "{\"i32", "{\"", "{", "{\"i32\":", "{\"b\":true,\"dt\":\"2024-02-29\",\"dec\":1.5}",
  };
  for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) CHECK(compare_str(&p, recs[i]));
  /* a string's special byte at every place around the 16-byte blocks */
  static const char *const specials[] = {"\\\"", "\\n", "\\u00e9", "\xc3\xa9", "\t", "\xff"};
  for (size_t sp = 0; sp < sizeof specials / sizeof specials[0]; sp++)
    for (int at = 0; at < 40; at++) {
      char str[80];
      memset(str, 'x', 40);
      memcpy(str + at, specials[sp], strlen(specials[sp]));
      str[at + (int)strlen(specials[sp]) > 40 ? at + (int)strlen(specials[sp]) : 40] = '\0';
      snprintf(rec, sizeof rec, "{\"s\":\"%s\",\"i32\":1}", str);
      CHECK(compare_str(&p, rec));
      rec[strlen(rec) - 10] = '\0'; /* the string cut short */
      CHECK(compare_str(&p, rec));
    }
  CHECK(p.errors > 100 && p.rows > 100);
  pair_free(&p);
  dp_arena_free(A);
}

TEST(json_random_records_agree) {
  A = dp_arena_new(0);
  dp_schema *s = test_schema(false);
  pair p = json_pair(s);
  char rec[8192];
  int differ = 0;
  for (int i = 0; i < 30000 && differ < 5; i++) {
    size_t n = random_record(s, rec, sizeof rec);
    if (!compare(&p, rec, n)) differ++;
    /* corrupted: a byte changed, or the record cut short */
    char bad[8192];
    memcpy(bad, rec, n);
    size_t at = rnd_below((unsigned)n);
    static const char junk[] = "\"\\{}[],:0-.eE \x80\xff\nx";
    bad[at] = junk[rnd_below(sizeof junk - 1)];
    if (!compare(&p, bad, n)) differ++;
    if (!compare(&p, rec, rnd_below((unsigned)n))) differ++;
  }
  CHECK_EQ(differ, 0);
  fprintf(stderr, "%lld records: %lld rows, %lld errors\n", (long long)p.records, (long long)p.rows,
          (long long)p.errors);
  CHECK(p.rows > 1000 && p.errors > 1000);
  pair_free(&p);
  dp_arena_free(A);
}

/* The value that a one-column DOUBLE record of `text` decodes to. */
static bool decode_double(dp_json_decoder *dec, dp_batch *b, const char *text, double *out) {
  char rec[400];
  snprintf(rec, sizeof rec, "{\"d\":%s}", text);
  dp_batch_clear(b);
  if (dp_json_decode(dec, rec, strlen(rec), b, NULL) != DIPPER_OK) return false;
  *out = dp_vector_get_f64(b->cols[0], 0);
  return true;
}

TEST(doubles_round_as_strtod) {
  A = dp_arena_new(0);
  dp_schema *s = dp_schema_new(A, 1);
  s->cols[0].name = "d";
  s->cols[0].type = dp_type_of(DP_T_DOUBLE);
  dp_json_decoder *dec = dp_json_decoder_new(s, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  int bad = 0;
  for (int i = 0; i < 200000 && bad < 5; i++) {
    char text[64];
    unsigned how = rnd_below(7);
    if (how == 4) {
      /* the shortest forms of doubles of every size Java and Python print
      ** (17 digits: the 128-bit path of fastscan.h) */
      double d = (double)(rnd() >> 11) / (double)(UINT64_C(1) << 53) *
                 pow(10, (int)rnd_below(30) - 12);
      snprintf(text, sizeof text, "%.17g", d);
    } else if (how == 5) {
      /* 17 to 19 digits and an exponent near the 128-bit path's bounds */
      uint64_t m = rnd() % UINT64_C(10000000000000000000);
      snprintf(text, sizeof text, "%llue%d", (unsigned long long)m, (int)rnd_below(50) - 25);
    } else if (how == 6) {
      /* the halfway points between doubles of 2^53 to 2^64: ties and their neighbours */
      uint64_t m = ((rnd() >> 11) | (UINT64_C(1) << 52)) << rnd_below(11);
      unsigned sh = rnd_below(11) + 1;
      m = (m & ~((UINT64_C(1) << sh) - 1)) | (UINT64_C(1) << (sh - 1));
      m += (uint64_t)rnd_below(3) - 1;
      int e = (int)rnd_below(5);
      char digits[32];
      snprintf(digits, sizeof digits, "%llu", (unsigned long long)m);
      size_t nd = strlen(digits);
      if (e > 0 && (size_t)e < nd)
        snprintf(text, sizeof text, "%.*s.%s", (int)(nd - (size_t)e), digits, digits + nd - (size_t)e);
      else
        snprintf(text, sizeof text, "%s", digits);
    } else if (how == 0) {
      double d;
      uint64_t bits = rnd();
      memcpy(&d, &bits, sizeof d);
      if (!isfinite(d)) continue;
      snprintf(text, sizeof text, "%.*g", (int)rnd_below(17) + 1, d);
    } else if (how == 1) {
      snprintf(text, sizeof text, "%s%llu.%llu", rnd_below(2) ? "-" : "",
               (unsigned long long)(rnd() >> rnd_below(64)), (unsigned long long)(rnd() >> rnd_below(64)));
    } else if (how == 2) {
      snprintf(text, sizeof text, "%llue%d", (unsigned long long)(rnd() >> rnd_below(64)),
               (int)rnd_below(700) - 350);
    } else {
      snprintf(text, sizeof text, "%u.%02u", rnd_below(100000), rnd_below(100));
    }
    double want = strtod(text, NULL), got = 0;
    if (!isfinite(want)) continue;
    if (!decode_double(dec, b, text, &got) || memcmp(&got, &want, sizeof got) != 0) {
      fprintf(stderr, "%s: got %.17g, strtod %.17g\n", text, got, want);
      bad++;
    }
  }
  CHECK_EQ(bad, 0);
  double d = 1;
  CHECK(decode_double(dec, b, "-0.0", &d) && d == 0 && signbit(d));
  CHECK(decode_double(dec, b, "-0", &d) && d == 0 && signbit(d));
  CHECK(decode_double(dec, b, "4.9e-324", &d) && d == 4.9e-324 && d > 0);
  CHECK(decode_double(dec, b, "1.7976931348623157e308", &d) && d == 1.7976931348623157e308);
  CHECK(decode_double(dec, b, "512.34", &d) && d == 512.34);
  CHECK(decode_double(dec, b, "371.56036347774887", &d) && d == 371.56036347774887);
  CHECK(decode_double(dec, b, "9007199254740993", &d) && d == 9007199254740992.0); /* a tie: even */
  CHECK(decode_double(dec, b, "9007199254740995", &d) && d == 9007199254740996.0);
  CHECK(decode_double(dec, b, "1844674407370955161e19", &d) && d == 1.844674407370955161e37);
  CHECK(!decode_double(dec, b, "1e309", &d));
  dp_batch_free(b);
  dp_json_decoder_free(dec);
  dp_arena_free(A);
}

TEST(json_fast_values_expected) {
  A = dp_arena_new(0);
  dp_schema *s = test_schema(false);
  dp_json_decoder *dec = dp_json_decoder_new(s, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  dp_format_error err;
  const char *rec = "{\"i8\":-128,\"i16\":32767,\"i32\":-2147483648,\"i64\":-999999999999999999,"
                    "\"f\":1.5,\"d\":-512.34,\"ts\":\"2024-02-29 23:59:59.9999\","
                    "\"ts6\":\"1969-12-31T23:59:59.123456Z\",\"ts0\":\"2024-01-01 00:00:05.999\","
                    "\"ltz\":\"2024-01-02 03:04:05.678Z\",\"s\":\"0123456789abcdefghij\"}";
  CHECK_EQ(dp_json_decode(dec, rec, strlen(rec), b, &err), DIPPER_OK);
  dp_batch_sync(b);
  CHECK_EQ(dp_vector_get_i64(b->cols[0], 0), -128);
  CHECK_EQ(dp_vector_get_i64(b->cols[1], 0), 32767);
  CHECK_EQ(dp_vector_get_i64(b->cols[2], 0), INT32_MIN);
  CHECK_EQ(dp_vector_get_i64(b->cols[3], 0), -999999999999999999LL);
  CHECK(dp_vector_get_f64(b->cols[4], 0) == 1.5);
  CHECK(dp_vector_get_f64(b->cols[5], 0) == -512.34);
  int64_t day = dp_days_from_civil(2024, 2, 29) * DP_MICROS_PER_DAY;
  CHECK_EQ(dp_vector_get_i64(b->cols[6], 0), day + 86399 * 1000000LL + 999000);
  CHECK_EQ(dp_vector_get_i64(b->cols[7], 0), -1000000LL + 123456);
  CHECK_EQ(dp_vector_get_i64(b->cols[8], 0), 1704067205000000LL);
  CHECK_EQ(dp_vector_get_i64(b->cols[9], 0), 1704164645678000LL);
  size_t n;
  const char *str = dp_vector_get_str(b->cols[10], 0, &n);
  CHECK(n == 20 && memcmp(str, "0123456789abcdefghij", 20) == 0);
  CHECK(dp_vector_is_null(b->cols[11], 0));
  /* the errors of the general path stay: overflow, a fraction for an INT */
  rec = "{\"i64\":9223372036854775808}";
  CHECK_EQ(dp_json_decode(dec, rec, strlen(rec), b, &err), DIPPER_DATA);
  CHECK_STR(err.msg, "field `i64`: expected a whole number that fits BIGINT, got 9223372036854775808");
  CHECK_EQ(err.offset, 7);
  rec = "{\"i32\":1.5}";
  CHECK_EQ(dp_json_decode(dec, rec, strlen(rec), b, &err), DIPPER_DATA);
  CHECK_STR(err.msg, "field `i32`: expected a whole number that fits INT, got 1.5");
  rec = "{\"ts\":\"2023-02-29 00:00:00\"}";
  CHECK_EQ(dp_json_decode(dec, rec, strlen(rec), b, &err), DIPPER_DATA);
  CHECK_CONTAINS(err.msg, "field `ts`: expected a timestamp");
  CHECK_EQ(b->nrows, 1);
  CHECK_EQ(b->cols[0]->length, 1); /* the failed records left nothing */
  dp_batch_free(b);
  dp_json_decoder_free(dec);
  dp_arena_free(A);
}

/* ---- CSV ---- */

/* The record end as csv.c found it before its SSE2 search. */
static size_t record_end_bytewise(const char *p, size_t n, char quote, bool *complete) {
  bool quoted = false;
  for (size_t i = 0; i < n; i++) {
    char ch = p[i];
    if (quote && ch == quote) {
      quoted = !quoted;
    } else if (!quoted && (ch == '\n' || ch == '\r')) {
      *complete = true;
      if (ch == '\r' && i + 1 < n && p[i + 1] == '\n') return i + 2;
      return i + 1;
    }
  }
  *complete = false;
  return n;
}

TEST(csv_record_end_agrees) {
  static const char alphabet[] = "ab,\"\n\r;x";
  char text[200];
  int bad = 0;
  for (int i = 0; i < 50000; i++) {
    size_t n = rnd_below(sizeof text);
    for (size_t j = 0; j < n; j++) text[j] = alphabet[rnd_below(sizeof alphabet - 1)];
    char quote = rnd_below(4) == 0 ? '\0' : rnd_below(4) == 0 ? '\'' : '"';
    bool c1 = false, c2 = false;
    size_t e1 = dp_csv_record_end(text, n, quote, &c1), e2 = record_end_bytewise(text, n, quote, &c2);
    if (e1 != e2 || c1 != c2) bad++;
  }
  CHECK_EQ(bad, 0);
  bool complete;
  const char *crlf = "a,\"b\r\nc\",d\r\ne";
  CHECK_EQ(dp_csv_record_end(crlf, strlen(crlf), '"', &complete), 12);
  CHECK(complete);
  CHECK_EQ(dp_csv_record_end("\"x\r\n", 4, '"', &complete), 4);
  CHECK(!complete);
}

static const char *const csv_fields[] = {
    "", "0", "-0", "127", "128", "-129", "9223372036854775807", "-9223372036854775808",
    "9223372036854775808", "007", "+5", " 5", "5 ", "1.5", "-0.0", "1e5", "1e309", ".5", "5.",
    "4.9e-324", "0.30000000000000004", "123456789012345678901234567890", "NaN", "-Infinity",
    "2024-01-01 00:00:05.000", "2024-02-30 00:00:00", "2024-01-01T00:00:00Z", " 2024-01-01 00:00:00",
    "2024-01-01 00:00:00.1234567891", "1704067200000", "\"quoted\"", "\"a,b\"", "\"a\"\"b\"",
    "\"line\nbreak\"", "\"cr\r\nlf\"", "\"\"", "\"12\"", "\"unclosed", "\"x\"y", "a\"b", "true",
    "x", "\"2024-01-01 00:00:00\"", "\"  7  \""};

static size_t random_csv(const dp_schema *s, char *out, size_t cap) {
  size_t n = 0;
  clean = rnd_below(2);
  int k = s->ncols + (!clean && rnd_below(20) == 0 ? (int)rnd_below(3) - 1 : 0);
  for (int c = 0; c < k && n + 200 < cap; c++) {
    if (c) out[n++] = ',';
    const char *v;
    char buf[120];
    if (!clean && rnd_below(3) == 0) {
      v = csv_fields[rnd_below(sizeof csv_fields / sizeof csv_fields[0])];
    } else {
      const char *jv = random_value(c < s->ncols ? c : 99);
      /* the JSON forms less their quotes */
      size_t l = strlen(jv);
      if (l >= 2 && jv[0] == '"' && !strchr(jv + 1, '\\')) {
        snprintf(buf, sizeof buf, "%.*s", (int)(l - 2), jv + 1);
        v = strchr(buf, '"') || strchr(buf, ',') ? "x" : buf;
      } else {
        v = strchr(jv, ',') || strchr(jv, '"') ? "y" : jv;
      }
    }
    n += (size_t)snprintf(out + n, cap - n, "%s", v);
  }
  static const char *const ends[] = {"", "\n", "\r\n", "\r"};
  n += (size_t)snprintf(out + n, cap - n, "%s", ends[rnd_below(4)]);
  return n;
}

TEST(csv_records_agree) {
  A = dp_arena_new(0);
  dp_schema *s = test_schema(true);
  pair p = csv_pair(s);
  char rec[4096];
  int differ = 0;
  /* each edge field in each column, the others empty */
  for (int c = 0; c < s->ncols; c++)
    for (size_t f = 0; f < sizeof csv_fields / sizeof csv_fields[0]; f++) {
      size_t n = 0;
      for (int k = 0; k < s->ncols; k++)
        n += (size_t)snprintf(rec + n, sizeof rec - n, "%s%s", k ? "," : "", k == c ? csv_fields[f] : "");
      if (!compare(&p, rec, n)) differ++;
      rec[n++] = '\r';
      rec[n++] = '\n';
      if (!compare(&p, rec, n)) differ++;
    }
  for (int i = 0; i < 30000 && differ < 5; i++) {
    size_t n = random_csv(s, rec, sizeof rec);
    if (!compare(&p, rec, n)) differ++;
    if (n && !compare(&p, rec, rnd_below((unsigned)n))) differ++;
  }
  CHECK_EQ(differ, 0);
  fprintf(stderr, "%lld records: %lld rows, %lld errors\n", (long long)p.records, (long long)p.rows,
          (long long)p.errors);
  CHECK(p.rows > 1000 && p.errors > 1000);
  pair_free(&p);
  dp_arena_free(A);
}

TEST(csv_fast_values_expected) {
  A = dp_arena_new(0);
  dp_schema *s = test_schema(true);
  dp_csv_decoder *dec = dp_csv_decoder_new(s, NULL, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  dp_format_error err;
  bool skipped;
  const char *rec = "-128,32767,2147483647,9223372036854775807,0.5,-512.34,2024-01-01 00:00:05.123,"
                    "\"2024-01-01 00:00:05.123456\",,2024-01-02T03:04:05.678Z,\"a \"\"q\"\"\nline\","
                    "plain,2024-02-29,true,12.5\r\n";
  CHECK_EQ(dp_csv_decode(dec, rec, strlen(rec), b, &skipped, &err), DIPPER_OK);
  dp_batch_sync(b);
  CHECK_EQ(b->nrows, 1);
  CHECK_EQ(dp_vector_get_i64(b->cols[0], 0), -128);
  CHECK_EQ(dp_vector_get_i64(b->cols[2], 0), INT32_MAX);
  CHECK_EQ(dp_vector_get_i64(b->cols[3], 0), INT64_MAX);
  CHECK(dp_vector_get_f64(b->cols[4], 0) == 0.5);
  CHECK(dp_vector_get_f64(b->cols[5], 0) == -512.34);
  CHECK_EQ(dp_vector_get_i64(b->cols[6], 0), 1704067205123000LL);
  CHECK_EQ(dp_vector_get_i64(b->cols[7], 0), 1704067205123456LL);
  CHECK(dp_vector_is_null(b->cols[8], 0));
  CHECK_EQ(dp_vector_get_i64(b->cols[9], 0), 1704164645678000LL);
  size_t n;
  const char *str = dp_vector_get_str(b->cols[10], 0, &n);
  CHECK(n == 10 && memcmp(str, "a \"q\"\nline", 10) == 0);
  rec = "1,2,3,9223372036854775808,,,,,,,,,,,";
  CHECK_EQ(dp_csv_decode(dec, rec, strlen(rec), b, &skipped, &err), DIPPER_DATA);
  CHECK_STR(err.msg,
            "column `i64` (field 4): expected a value of type BIGINT, got \"9223372036854775808\"");
  CHECK_EQ(err.offset, 6);
  CHECK_EQ(b->cols[0]->length, 1);
  dp_batch_free(b);
  dp_csv_decoder_free(dec);
  dp_arena_free(A);
}

/* ---- whole records: the JSON shape and the CSV record fast path ---- */

/* The payment records' schema (the shape's and decode_fast's common case),
** with a STRING and, for JSON, a ROW. */
static dp_schema *payments_schema(bool csv) {
  static const char *const names[] = {"createTime", "orderId", "payAmount", "payPlatform",
                                      "provinceId", "note",    "nest"};
  int n = csv ? 6 : 7;
  dp_schema *s = dp_schema_new(A, n);
  dp_field f[2] = {{"a", dp_type_of(DP_T_INT)}, {"t", dp_type_timestamp(A, DP_T_TIMESTAMP, 3)}};
  const dp_type *types[] = {dp_type_timestamp(A, DP_T_TIMESTAMP, 3), dp_type_of(DP_T_BIGINT),
                            dp_type_of(DP_T_DOUBLE),                 dp_type_of(DP_T_INT),
                            dp_type_of(DP_T_TINYINT),                dp_type_of(DP_T_STRING),
                            dp_type_row(A, 2, f)};
  for (int i = 0; i < n; i++) {
    s->cols[i].name = names[i];
    s->cols[i].type = types[i];
  }
  return s;
}

/* A value for payments column c: mostly of the common form, now and then
** any of the lists above (wrong, odd, null). */
static const char *payment_value(int c, bool csv, int64_t i) {
  static char buf[200];
  bool odd = rnd_below(40) == 0;
  switch (c) {
  case 0:
    if (odd) return stamps[rnd_below(sizeof stamps / sizeof stamps[0])];
    /* one minute for a while, seconds and milliseconds moving; the date now and then */
    snprintf(buf, sizeof buf, "\"2024-%02d-%02d %02d:%02d:%02u.%03u\"", 1 + (int)(i / 500 % 12),
             1 + (int)(i / 100 % 28), (int)(i / 50 % 24), (int)(i / 20 % 60),
             rnd_below(200) ? rnd_below(60) : 60, rnd_below(1000));
    return buf;
  case 1:
    if (odd) return numbers[rnd_below(sizeof numbers / sizeof numbers[0])];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)(rnd() >> (1 + rnd_below(63))));
    return buf;
  case 3:
  case 4: /* INT, TINYINT: now and then out of range */
    if (odd) return numbers[rnd_below(sizeof numbers / sizeof numbers[0])];
    snprintf(buf, sizeof buf, "%d", (int)rnd_below(c == 4 ? 130 : 1000) - (c == 4 ? 2 : 500));
    return buf;
  case 2:
    if (odd) return numbers[rnd_below(sizeof numbers / sizeof numbers[0])];
    snprintf(buf, sizeof buf, "%u.%02u", rnd_below(100000), rnd_below(100));
    return buf;
  case 5:
    if (odd) return strings[rnd_below(sizeof strings / sizeof strings[0])];
    return csv ? "plain text" : "\"plain text\"";
  default:
    if (odd) return rnd_below(2) ? "null" : "{\"t\":\"2024-01-01 00:00:00\",\"a\":1}";
    return "{\"a\":7,\"t\":\"2024-01-01 00:00:00.001\"}";
  }
}

/* A JSON payment: the keys in `order` (ncol of them), sometimes an edit of
** the shape (a key left out, twice, unknown, in other case or escaped, white
** space, text after). */
static size_t payment_json(char *out, size_t cap, const int *order, int ncol, int64_t i) {
  static const char *const names[] = {"createTime", "orderId", "payAmount", "payPlatform",
                                      "provinceId", "note",    "nest"};
  static const char *const ws_after[] = {"", "", "", "", " ", "\n", "\t "};
  size_t len = 0;
  bool edit = rnd_below(6) == 0;
  unsigned what = rnd_below(9);
  len += (size_t)snprintf(out + len, cap - len, "{");
  for (int k = 0; k < ncol && len < cap - 300; k++) {
    int c = order[k];
    if (edit && what == 0 && k == ncol / 2) continue; /* missing */
    const char *name = names[c];
    char alt[64];
    if (edit && what == 1 && k == 1) {
      snprintf(alt, sizeof alt, "%c%s", name[0] ^ 0x20, name + 1); /* case */
      name = alt;
    } else if (edit && what == 2 && k == 2) {
      snprintf(alt, sizeof alt, "\\u%04x%s", (unsigned)name[0], name + 1); /* escaped */
      name = alt;
    }
    const char *w1 = edit && what == 3 ? ws_after[rnd_below(7)] : "";
    const char *w2 = edit && what == 3 ? ws_after[rnd_below(7)] : "";
    len += (size_t)snprintf(out + len, cap - len, "%s%s\"%s\"%s:%s%s", k ? "," : "", w1, name, w2,
                            w1, payment_value(c, false, i));
    if (edit && what == 4 && k == 0)
      len += (size_t)snprintf(out + len, cap - len, ",\"%s\":1", names[c]); /* twice */
    if (edit && what == 5 && k == 1)
      len += (size_t)snprintf(out + len, cap - len, ",\"unknown\":[1,{\"x\":2}]");
  }
  len += (size_t)snprintf(out + len, cap - len, "}%s", edit && what == 6 ? " x" : edit && what == 7 ? "\n" : "");
  return len;
}

TEST(json_shape_agrees) {
  A = dp_arena_new(0);
  dp_schema *s = payments_schema(false);
  pair p = json_pair(s);
  char rec[4096];
  int differ = 0;
  int order[7] = {0, 1, 2, 3, 4, 5, 6};
  int64_t i = 0;
  for (int round = 0; round < 40 && differ < 5; round++) {
    /* a producer: its own key order (sometimes the schema's), some columns only */
    if (round % 4) {
      for (int k = 6; k > 0; k--) {
        int j = (int)rnd_below((unsigned)k + 1), t = order[k];
        order[k] = order[j];
        order[j] = t;
      }
    }
    int ncol = round % 5 == 4 ? 4 : 7;
    for (int r = 0; r < 500 && differ < 5; r++, i++) {
      size_t n = payment_json(rec, sizeof rec, order, ncol, i);
      if (!compare(&p, rec, n)) differ++;
      if (rnd_below(16) == 0 && !compare(&p, rec, rnd_below((unsigned)n))) differ++; /* cut short */
      if (rnd_below(16) == 0) {                                                   /* a byte changed */
        static const char junk[] = "\"\\{}[],:0-.eE \x80\xff\nx";
        rec[rnd_below((unsigned)n)] = junk[rnd_below(sizeof junk - 1)];
        if (!compare(&p, rec, n)) differ++;
      }
    }
  }
  CHECK_EQ(differ, 0);
  fprintf(stderr, "%lld records: %lld rows, %lld errors\n", (long long)p.records, (long long)p.rows,
          (long long)p.errors);
  CHECK(p.rows > 10000 && p.errors > 1000);
  pair_free(&p);
  dp_arena_free(A);
}

/* The shape's values, and the minute's cache across records, against values
** known beforehand; and records of another shape after it. */
TEST(json_shape_values_expected) {
  A = dp_arena_new(0);
  dp_schema *s = payments_schema(false);
  dp_json_decoder *dec = dp_json_decoder_new(s, NULL, NULL);
  dp_batch *b = dp_batch_new(s, 0);
  dp_format_error err;
  static const char *const recs[] = {
      "{\"createTime\":\"2024-01-01 00:00:05.123\",\"orderId\":1,\"payAmount\":12.5,"
      "\"payPlatform\":0,\"provinceId\":3,\"note\":\"a\",\"nest\":null}",
      "{\"createTime\":\"2024-01-01 00:00:59.999\",\"orderId\":1234567890123,\"payAmount\":0.25,"
      "\"payPlatform\":1,\"provinceId\":33,\"note\":\"\",\"nest\":{\"a\":1,\"t\":null}}",
      "{\"createTime\":\"2024-01-01T00:00:07\",\"orderId\":-5,\"payAmount\":-1e2,"
      "\"payPlatform\":2,\"provinceId\":-128,\"note\":\"\\u0041\",\"nest\":{}}",
      "{\"createTime\":\"2024-01-01 00:00:60.000\",\"orderId\":1,\"payAmount\":1,"
      "\"payPlatform\":1,\"provinceId\":1,\"note\":\"x\",\"nest\":null}",
      "{\"orderId\":2,\"createTime\":\"2024-01-01 00:01:00.5\",\"payAmount\":2,"
      "\"payPlatform\":1,\"provinceId\":1,\"note\":\"x\",\"nest\":null}",
      "{\"orderId\":3,\"createTime\":\"2024-01-01 00:01:01.5\",\"payAmount\":3,"
      "\"payPlatform\":1,\"provinceId\":1,\"note\":\"x\",\"nest\":null}",
      "{\"createTime\":\"2024-01-01 00:01:02.5\",\"orderId\":4,\"payAmount\":4,"
      "\"payPlatform\":1,\"provinceId\":1000,\"note\":\"x\",\"nest\":null}",
  };
  static const int want_rc[] = {DIPPER_OK, DIPPER_OK, DIPPER_OK, DIPPER_DATA, DIPPER_OK, DIPPER_OK,
                                DIPPER_DATA};
  static const int64_t want_ts[] = {1704067205123000LL, 1704067259999000LL, 1704067207000000LL, 0,
                                    1704067260500000LL, 1704067261500000LL, 0};
  static const int64_t want_id[] = {1, 1234567890123LL, -5, 0, 2, 3, 0};
  static const double want_amount[] = {12.5, 0.25, -100.0, 0, 2, 3, 0};
  int64_t row = 0;
  for (size_t k = 0; k < sizeof recs / sizeof recs[0]; k++) {
    int rc = dp_json_decode(dec, recs[k], strlen(recs[k]), b, &err);
    CHECK_EQ(rc, want_rc[k]);
    if (rc != DIPPER_OK) continue;
    dp_batch_sync(b);
    CHECK_EQ(dp_vector_get_i64(b->cols[0], row), want_ts[k]);
    CHECK_EQ(dp_vector_get_i64(b->cols[1], row), want_id[k]);
    CHECK(dp_vector_get_f64(b->cols[2], row) == want_amount[k]);
    row++;
  }
  CHECK_EQ(b->nrows, 5);
  /* the messages of the general path, also when the shape met the record first */
  CHECK(dp_json_decode(dec, recs[6], strlen(recs[6]), b, &err) == DIPPER_DATA);
  CHECK_STR(err.msg, "field `provinceId`: expected a whole number that fits TINYINT, got 1000");
  CHECK(dp_json_decode(dec, recs[3], strlen(recs[3]), b, &err) == DIPPER_DATA);
  CHECK_STR(err.msg, "field `createTime`: expected a timestamp \"yyyy-MM-dd HH:mm:ss[.SSS]\", "
                     "ISO-8601, or epoch milliseconds, got \"2024-01-01 00:00:60.000\"");
  CHECK_EQ(err.offset, 14);
  CHECK_EQ(b->cols[0]->length, 5);
  dp_batch_free(b);
  dp_json_decoder_free(dec);
  dp_arena_free(A);
}

/* A CSV payment: the six fields, sometimes empty, quoted, one too many or few. */
static size_t payment_csv(char *out, size_t cap, int64_t i) {
  size_t len = 0;
  bool edit = rnd_below(6) == 0;
  unsigned what = rnd_below(6), at = rnd_below(6);
  for (int c = 0; c < 6; c++) {
    if (edit && what == 0 && c == (int)at) continue; /* one field fewer */
    const char *v = payment_value(c, true, i);
    char tmp[256], edited[300];
    if (c == 0 && v[0] == '"' && rnd_below(2)) { /* the timestamp unquoted */
      snprintf(tmp, sizeof tmp, "%.*s", (int)strlen(v) - 2, v + 1);
      v = tmp;
    }
    if (edit && what == 1 && c == (int)at) v = "";
    if (edit && what == 2 && c == (int)at) {
      snprintf(edited, sizeof edited, "\"%.250s\"", v);
      v = edited;
    }
    if (edit && what == 3 && c == (int)at) {
      snprintf(edited, sizeof edited, " %.250s", v);
      v = edited;
    }
    len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "," : "", v);
  }
  if (edit && what == 4) len += (size_t)snprintf(out + len, cap - len, ",1");
  if (edit && what == 5) len += (size_t)snprintf(out + len, cap - len, "\r\n");
  return len;
}

TEST(csv_record_fast_agrees) {
  A = dp_arena_new(0);
  dp_schema *s = payments_schema(true);
  pair p = csv_pair(s);
  char rec[4096];
  int differ = 0;
  for (int64_t i = 0; i < 30000 && differ < 5; i++) {
    size_t n = payment_csv(rec, sizeof rec, i);
    if (!compare(&p, rec, n)) differ++;
    if (rnd_below(16) == 0 && !compare(&p, rec, rnd_below((unsigned)n))) differ++;
    if (rnd_below(16) == 0) {
      static const char junk[] = "\",;:0-.eE \x80\xff\nx\r";
      rec[rnd_below((unsigned)n)] = junk[rnd_below(sizeof junk - 1)];
      if (!compare(&p, rec, n)) differ++;
    }
  }
  CHECK_EQ(differ, 0);
  fprintf(stderr, "%lld records: %lld rows, %lld errors\n", (long long)p.records, (long long)p.rows,
          (long long)p.errors);
  CHECK(p.rows > 10000 && p.errors > 1000);
  pair_free(&p);
  dp_arena_free(A);
}

int main(void) { return RUN_TESTS(); }
