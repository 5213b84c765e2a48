/*
** jar_test.c — the kind of a jar's class (spark/jar.h), offline: jars made
** here byte by byte (zip entries stored and deflated, class files with just
** their constant pool, super class and interfaces), so each case says what
** it holds.  A class that extends UserDefinedAggregateFunction (directly or
** through the jar's own classes) is an aggregate, one that implements UDFn a
** scalar, an Aggregator is told apart, a class missing from the jar is
** absent; cycles end; every truncation and many corruptions of a jar are
** refused or read without a fault (under ASan).
**
** `jar_test --seeds DIR` writes the jars as the fuzz corpus (fuzz/corpus/jar).
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dipper.h"
#include "spark/jar.h"
#include "test.h"

#define UDAF "org/apache/spark/sql/expressions/UserDefinedAggregateFunction"
#define AGGREGATOR "org/apache/spark/sql/expressions/Aggregator"
#define UDF2 "org/apache/spark/sql/api/java/UDF2"
#define OBJECT "java/lang/Object"

/* ---- bytes ---- */

typedef struct bytes {
  uint8_t p[1 << 16];
  size_t n;
} bytes;

static void put(bytes *b, const void *p, size_t n) {
  memcpy(b->p + b->n, p, n);
  b->n += n;
}
static void le16(bytes *b, unsigned v) { put(b, (uint8_t[]){(uint8_t)v, (uint8_t)(v >> 8)}, 2); }
static void le32(bytes *b, uint32_t v) {
  put(b, (uint8_t[]){(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)}, 4);
}
static void be16(bytes *b, unsigned v) { put(b, (uint8_t[]){(uint8_t)(v >> 8), (uint8_t)v}, 2); }

/* A class file: `name` extends `super` (NULL: none) implementing ifaces[0..n).
** The pool holds a Long first (two slots) so that indexes past it count. */
static void class_file(bytes *c, const char *name, const char *super, const char **ifaces, int n) {
  c->n = 0;
  put(c, (uint8_t[]){0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61}, 8);
  const char *names[10];
  int nn = 0;
  names[nn++] = name;
  if (super) names[nn++] = super;
  for (int i = 0; i < n; i++) names[nn++] = ifaces[i];
  be16(c, (unsigned)(1 + 2 + 2 * nn)); /* the Long (2 slots), then Class + Utf8 per name */
  put(c, (uint8_t[]){5, 0, 0, 0, 0, 0, 0, 0, 42}, 9);
  for (int i = 0; i < nn; i++) {
    put(c, (uint8_t[]){7}, 1);
    be16(c, (unsigned)(3 + 2 * i + 1)); /* its Utf8 follows it */
    put(c, (uint8_t[]){1}, 1);
    be16(c, (unsigned)strlen(names[i]));
    put(c, names[i], strlen(names[i]));
  }
  be16(c, 0x0021);             /* public super */
  be16(c, 3);                  /* this_class */
  be16(c, super ? 5 : 0);      /* super_class */
  be16(c, (unsigned)n);
  for (int i = 0; i < n; i++) be16(c, (unsigned)(3 + 2 * (i + (super ? 2 : 1))));
  put(c, (uint8_t[]){0, 0, 0, 0, 0, 0}, 6); /* no fields, methods, attributes */
}

/* ---- a zip, entry by entry ---- */

typedef struct jar {
  bytes z, cd;
  int entries;
} jar;

static void jar_add(jar *j, const char *name, const bytes *data, bool deflated) {
  uint8_t packed[1 << 16];
  size_t plen = data->n;
  if (deflated) {
    z_stream s;
    memset(&s, 0, sizeof s);
    CHECK_EQ(deflateInit2(&s, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    s.next_in = (Bytef *)(uintptr_t)data->p;
    s.avail_in = (uInt)data->n;
    s.next_out = packed;
    s.avail_out = sizeof packed;
    CHECK_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
    plen = sizeof packed - s.avail_out;
    deflateEnd(&s);
  } else {
    memcpy(packed, data->p, data->n);
  }
  uint32_t crc = (uint32_t)crc32(0, data->p, (uInt)data->n);
  uint32_t at = (uint32_t)j->z.n;
  le32(&j->z, 0x04034b50u);
  le16(&j->z, 20);
  le16(&j->z, 0);
  le16(&j->z, deflated ? 8 : 0);
  le32(&j->z, 0); /* time, date */
  le32(&j->z, crc);
  le32(&j->z, (uint32_t)plen);
  le32(&j->z, (uint32_t)data->n);
  le16(&j->z, (unsigned)strlen(name));
  le16(&j->z, 0);
  put(&j->z, name, strlen(name));
  put(&j->z, packed, plen);
  le32(&j->cd, 0x02014b50u);
  le16(&j->cd, 20);
  le16(&j->cd, 20);
  le16(&j->cd, 0);
  le16(&j->cd, deflated ? 8 : 0);
  le32(&j->cd, 0);
  le32(&j->cd, crc);
  le32(&j->cd, (uint32_t)plen);
  le32(&j->cd, (uint32_t)data->n);
  le16(&j->cd, (unsigned)strlen(name));
  le16(&j->cd, 0);
  le16(&j->cd, 0);
  le16(&j->cd, 0);
  le16(&j->cd, 0);
  le32(&j->cd, 0);
  le32(&j->cd, at);
  put(&j->cd, name, strlen(name));
  j->entries++;
}

static void jar_class(jar *j, const char *name, const char *super, const char **ifaces, int n,
                      bool deflated) {
  bytes *c = malloc(sizeof *c);
  class_file(c, name, super, ifaces, n);
  char entry[256];
  snprintf(entry, sizeof entry, "%s.class", name);
  jar_add(j, entry, c, deflated);
  free(c);
}

/* The finished zip (central directory and end record appended) in out. */
static void jar_end(jar *j, bytes *out) {
  *out = j->z;
  uint32_t cd = (uint32_t)out->n;
  put(out, j->cd.p, j->cd.n);
  le32(out, 0x06054b50u);
  le16(out, 0);
  le16(out, 0);
  le16(out, (unsigned)j->entries);
  le16(out, (unsigned)j->entries);
  le32(out, (uint32_t)j->cd.n);
  le32(out, cd);
  le16(out, 0);
}

static dp_java_kind kind(const bytes *b, const char *cls, int *rc) {
  dp_buf why = DP_BUF_INIT;
  dp_java_kind k = DP_JAVA_UNKNOWN;
  *rc = dp_jar_class_kind(b->p, b->n, cls, &k, &why);
  dp_buf_free(&why);
  return k;
}

/* The jar of most cases: a manifest (stored), then classes. */
static bytes *sample(void) {
  jar *j = calloc(1, sizeof *j);
  bytes *m = calloc(1, sizeof *m);
  put(m, "Manifest-Version: 1.0\r\n\r\n", 25);
  jar_add(j, "META-INF/MANIFEST.MF", m, false);
  jar_class(j, "com/ex/Agg", UDAF, NULL, 0, true);
  jar_class(j, "com/ex/Base", UDAF, NULL, 0, false);
  jar_class(j, "com/ex/Derived", "com/ex/Base", NULL, 0, true);
  jar_class(j, "com/ex/Scalar", OBJECT, (const char *[]){"java/io/Serializable", UDF2}, 2, true);
  jar_class(j, "com/ex/Iface", NULL, (const char *[]){UDF2}, 1, true);
  jar_class(j, "com/ex/ViaIface", OBJECT, (const char *[]){"com/ex/Iface"}, 1, true);
  jar_class(j, "com/ex/Typed", AGGREGATOR, NULL, 0, true);
  jar_class(j, "com/ex/Plain", OBJECT, NULL, 0, false);
  jar_class(j, "com/ex/Outside", "org/other/Thing", NULL, 0, true);
  jar_class(j, "com/ex/A", "com/ex/B", NULL, 0, true);
  jar_class(j, "com/ex/B", "com/ex/A", NULL, 0, true);
  bytes *out = malloc(sizeof *out);
  jar_end(j, out);
  free(m);
  free(j);
  return out;
}

TEST(kinds_from_the_class_files) {
  bytes *b = sample();
  int rc;
  CHECK_EQ(kind(b, "com.ex.Agg", &rc), DP_JAVA_UDAF);
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(kind(b, "com.ex.Derived", &rc), DP_JAVA_UDAF); /* through the jar's own Base */
  CHECK_EQ(kind(b, "com.ex.Scalar", &rc), DP_JAVA_SCALAR);
  CHECK_EQ(kind(b, "com.ex.ViaIface", &rc), DP_JAVA_SCALAR); /* an interface of the jar's */
  CHECK_EQ(kind(b, "com.ex.Typed", &rc), DP_JAVA_AGGREGATOR);
  CHECK_EQ(kind(b, "com.ex.Plain", &rc), DP_JAVA_UNKNOWN);
  CHECK_EQ(kind(b, "com.ex.Outside", &rc), DP_JAVA_UNKNOWN); /* its super is not in the jar */
  CHECK_EQ(kind(b, "com.ex.A", &rc), DP_JAVA_UNKNOWN);       /* a cycle ends */
  CHECK_EQ(rc, DIPPER_OK);
  CHECK_EQ(kind(b, "com.ex.Missing", &rc), DP_JAVA_ABSENT);
  CHECK_EQ(rc, DIPPER_OK);
  free(b);
}

TEST(broken_jars_are_refused_with_a_reason) {
  bytes *b = calloc(1, sizeof *b);
  put(b, "{\"not\": \"a jar\"}\n", 17);
  dp_buf why = DP_BUF_INIT;
  dp_java_kind k;
  CHECK_EQ(dp_jar_class_kind(b->p, b->n, "com.ex.Agg", &k, &why), DIPPER_DATA);
  CHECK_CONTAINS(dp_buf_cstr(&why), "not a jar (zip) file");
  dp_buf_free(&why);
  free(b);
  why = (dp_buf)DP_BUF_INIT;
  CHECK_EQ(dp_jar_file_kind("/no/such/udfs.jar", "com.ex.Agg", &k, &why), DIPPER_IO);
  CHECK_CONTAINS(dp_buf_cstr(&why), "cannot read the jar /no/such/udfs.jar");
  dp_buf_free(&why);
}

/* Every prefix, and every byte flipped in turn: refused or read, no fault. */
TEST(truncations_and_corruptions_do_not_fault) {
  bytes *b = sample();
  bytes *c = malloc(sizeof *c);
  int refused = 0;
  for (size_t n = 0; n < b->n; n++) {
    int rc;
    memcpy(c->p, b->p, n);
    c->n = n;
    (void)kind(c, "com.ex.Derived", &rc);
    if (rc != DIPPER_OK) refused++;
  }
  CHECK(refused > 0);
  for (size_t i = 0; i < b->n; i++) {
    int rc;
    *c = *b;
    c->p[i] ^= (uint8_t)(0x5A + i);
    (void)kind(c, "com.ex.Derived", &rc);
    CHECK(rc == DIPPER_OK || rc == DIPPER_DATA || rc == DIPPER_UNSUPPORTED);
  }
  free(c);
  free(b);
}

static void write_seeds(const char *dir) {
  bytes *b = sample();
  char path[512];
  snprintf(path, sizeof path, "%s/sample.jar", dir);
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(b->p, 1, b->n, f);
    fclose(f);
  }
  free(b);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--seeds") == 0) {
    write_seeds(argv[2]);
    return 0;
  }
  return RUN_TESTS();
}
