/*
** jar.c — the kind of a jar's class (jar.h): zip central directory, one
** entry inflated (zlib, raw deflate), the class file's supers.
**
** Zip (APPNOTE 4.3): the end-of-central-directory record (signature
** 0x06054b50) lies in the last 22 + 65535 bytes; it gives the central
** directory's offset, size and entry count; each central header (0x02014b50)
** names an entry, its method, sizes and the offset of its local header
** (0x04034b50), after whose name and extra field the data starts.  The sizes
** of the central header are used (a local header may defer them to a data
** descriptor).  Class file (JVMS 4.1): magic 0xCAFEBABE, versions, the
** constant pool (count - 1 entries; Long and Double take two slots), access
** flags, this_class, super_class and the interfaces as Class entries whose
** names are Utf8 entries in internal form ("a/b/C").
*/
#include "spark/jar.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dipper.h"

#define MAX_ENTRY (64u << 20)      /* a class file larger than this is not one we read */
#define MAX_JAR ((size_t)1 << 30)  /* the file read whole */
#define MAX_DEPTH 32
#define MAX_VISITS 512

static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* ---- zip ---- */

typedef struct zip {
  const uint8_t *p;
  size_t n;
  size_t cd, cd_end; /* the central directory's bytes */
  uint32_t entries;
} zip;

static int bad(dp_buf *why, const char *what) {
  dp_buf_printf(why, "not a jar (zip) file that dipper can read: %s", what);
  return DIPPER_DATA;
}

static int zip_open(zip *z, const uint8_t *p, size_t n, dp_buf *why) {
  memset(z, 0, sizeof *z);
  z->p = p;
  z->n = n;
  if (n < 22) return bad(why, "shorter than a zip's end record");
  size_t lo = n - 22 > 65535 ? n - 22 - 65535 : 0;
  for (size_t at = n - 22 + 1; at-- > lo;) {
    const uint8_t *e = p + at;
    if (u32(e) != 0x06054b50u) continue;
    if ((size_t)u16(e + 20) != n - at - 22) continue; /* the comment must end the file */
    uint32_t entries = u16(e + 10), size = u32(e + 12), off = u32(e + 16);
    if (entries == 0xFFFF || size == 0xFFFFFFFFu || off == 0xFFFFFFFFu) {
      dp_buf_printf(why, "the jar is a ZIP64 archive, which dipper's jar reader does not read");
      return DIPPER_UNSUPPORTED;
    }
    if ((size_t)off > at || (size_t)size > at - off)
      return bad(why, "its central directory lies outside the file");
    z->cd = off;
    z->cd_end = (size_t)off + size;
    z->entries = entries;
    return DIPPER_OK;
  }
  return bad(why, "no end-of-central-directory record");
}

static int inflate_raw(const uint8_t *in, size_t n, uint8_t *out, size_t want, dp_buf *why) {
  z_stream s;
  memset(&s, 0, sizeof s);
  if (inflateInit2(&s, -MAX_WBITS) != Z_OK) return DIPPER_NOMEM;
  s.next_in = (Bytef *)(uintptr_t)in;
  s.avail_in = (uInt)n;
  s.next_out = out;
  s.avail_out = (uInt)want;
  int zr = inflate(&s, Z_FINISH);
  size_t got = want - s.avail_out;
  inflateEnd(&s);
  if (zr != Z_STREAM_END || got != want) return bad(why, "a deflated entry does not inflate to its size");
  return DIPPER_OK;
}

/* The bytes of entry `name` (malloc'd into *out), or *out NULL when absent. */
static int zip_entry(const zip *z, const char *name, uint8_t **out, size_t *len, dp_buf *why) {
  *out = NULL;
  *len = 0;
  size_t at = z->cd, nl = strlen(name);
  for (uint32_t i = 0; i < z->entries; i++) {
    if (z->cd_end - at < 46 || u32(z->p + at) != 0x02014b50u)
      return bad(why, "a broken central directory entry");
    const uint8_t *h = z->p + at;
    size_t hn = u16(h + 28), he = u16(h + 30), hc = u16(h + 32);
    if (z->cd_end - at - 46 < hn + he + hc) return bad(why, "a central directory entry past its end");
    at += 46 + hn + he + hc;
    if (hn != nl || memcmp(h + 46, name, nl) != 0) continue;
    uint16_t flags = u16(h + 8), method = u16(h + 10);
    uint32_t csize = u32(h + 20), usize = u32(h + 24), lho = u32(h + 42);
    if (flags & 1u) {
      dp_buf_printf(why, "the jar's entry %s is encrypted", name);
      return DIPPER_UNSUPPORTED;
    }
    if (csize == 0xFFFFFFFFu || usize == 0xFFFFFFFFu || lho == 0xFFFFFFFFu) {
      dp_buf_printf(why, "the jar's entry %s has ZIP64 sizes, which dipper's jar reader does not read", name);
      return DIPPER_UNSUPPORTED;
    }
    if (method != 0 && method != 8) {
      dp_buf_printf(why, "the jar's entry %s is compressed with method %u (stored and deflate only)",
                    name, method);
      return DIPPER_UNSUPPORTED;
    }
    if (usize > MAX_ENTRY) return bad(why, "an entry above 64 MiB where a class file should be");
    if ((size_t)lho > z->n || z->n - lho < 30 || u32(z->p + lho) != 0x04034b50u)
      return bad(why, "a local header that is not there");
    size_t data = (size_t)lho + 30 + u16(z->p + lho + 26) + u16(z->p + lho + 28);
    if (data > z->n || z->n - data < csize) return bad(why, "an entry's data past the file's end");
    if (method == 0 && csize != usize) return bad(why, "a stored entry whose two sizes differ");
    uint8_t *buf = malloc(usize ? usize : 1);
    if (!buf) return DIPPER_NOMEM;
    int rc = DIPPER_OK;
    if (method == 0) memcpy(buf, z->p + data, usize);
    else rc = inflate_raw(z->p + data, csize, buf, usize, why);
    if (rc != DIPPER_OK) {
      free(buf);
      return rc;
    }
    *out = buf;
    *len = usize;
    return DIPPER_OK;
  }
  return DIPPER_OK;
}

/* ---- class file ---- */

/* The names (internal form, NUL-terminated, malloc'd) of a class's super
** class and interfaces: names[0] the super ("" for java/lang/Object's none). */
typedef struct supers {
  int n;
  char **names;
} supers;

static void supers_free(supers *s) {
  for (int i = 0; i < s->n; i++) free(s->names[i]);
  free(s->names);
  memset(s, 0, sizeof *s);
}

static int not_class(dp_buf *why, const char *name, const char *what) {
  dp_buf_printf(why, "the jar's %s is not a class file dipper can read: %s", name, what);
  return DIPPER_DATA;
}

/* The name of Class entry `idx` of the pool (offsets off[1..count)). */
static char *class_name_at(const uint8_t *c, size_t n, const uint32_t *off, uint16_t count,
                           uint16_t idx) {
  if (idx == 0 || idx >= count || c[off[idx]] != 7) return NULL;
  uint16_t u = be16(c + off[idx] + 1);
  if (u == 0 || u >= count || c[off[u]] != 1) return NULL;
  size_t len = be16(c + off[u] + 1);
  if (off[u] + 3 + len > n) return NULL;
  char *s = malloc(len + 1);
  if (!s) return NULL;
  memcpy(s, c + off[u] + 3, len);
  s[len] = '\0';
  return s;
}

/* The size of the constant pool entry at c[at..n) (tag included); 0 if broken. */
static size_t entry_size(const uint8_t *c, size_t n, size_t at, bool *wide) {
  *wide = false;
  switch (c[at]) {
    case 1: return n - at >= 3 ? 3 + (size_t)be16(c + at + 1) : 0;
    case 7: case 8: case 16: case 19: case 20: return 3;
    case 15: return 4;
    case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: return 5;
    case 5: case 6: *wide = true; return 9;
    default: return 0;
  }
}

static int class_supers(const uint8_t *c, size_t n, const char *name, supers *out, dp_buf *why) {
  memset(out, 0, sizeof *out);
  if (n < 10 || c[0] != 0xCA || c[1] != 0xFE || c[2] != 0xBA || c[3] != 0xBE)
    return not_class(why, name, "no 0xCAFEBABE");
  uint16_t count = be16(c + 8);
  uint32_t *off = calloc(count ? count : 1, sizeof *off);
  if (!off) return DIPPER_NOMEM;
  size_t at = 10;
  for (uint16_t i = 1; i < count; i++) {
    bool wide;
    size_t sz = at < n ? entry_size(c, n, at, &wide) : 0;
    if (sz == 0 || sz > n - at) {
      free(off);
      return not_class(why, name, "a constant pool entry that is broken or past the end");
    }
    off[i] = (uint32_t)at;
    at += sz;
    if (wide && i + 1 < count) off[++i] = (uint32_t)(at - sz); /* the unusable second slot */
  }
  if (n - at < 8) {
    free(off);
    return not_class(why, name, "it ends inside its header");
  }
  uint16_t super = be16(c + at + 4), nif = be16(c + at + 6);
  at += 8;
  if ((n - at) / 2 < nif) {
    free(off);
    return not_class(why, name, "its interfaces run past the end");
  }
  int rc = DIPPER_OK;
  out->names = calloc((size_t)nif + 1, sizeof *out->names);
  if (!out->names) rc = DIPPER_NOMEM;
  for (int i = 0; rc == DIPPER_OK && i <= nif; i++) {
    uint16_t idx = i == 0 ? super : be16(c + at + 2 * (size_t)(i - 1));
    char *s = i == 0 && idx == 0 ? strdup("") : class_name_at(c, n, off, count, idx);
    if (!s) rc = not_class(why, name, "a super class or interface that names no class");
    else out->names[out->n++] = s;
  }
  free(off);
  if (rc != DIPPER_OK) supers_free(out);
  return rc;
}

/* ---- the walk ---- */

static dp_java_kind known(const char *n) {
  static const char udf[] = "org/apache/spark/sql/api/java/UDF";
  if (strncmp(n, udf, sizeof udf - 1) == 0) {
    const char *d = n + sizeof udf - 1;
    if (*d && strspn(d, "0123456789") == strlen(d)) return DP_JAVA_SCALAR;
  }
  if (strcmp(n, "org/apache/spark/sql/expressions/UserDefinedAggregateFunction") == 0)
    return DP_JAVA_UDAF;
  if (strcmp(n, "org/apache/spark/sql/expressions/Aggregator") == 0) return DP_JAVA_AGGREGATOR;
  return DP_JAVA_UNKNOWN;
}

typedef struct walk {
  const zip *z;
  int visits;
  dp_buf *why;
} walk;

static int kind_of(walk *w, const char *name, int depth, dp_java_kind *kind) {
  *kind = known(name);
  if (*kind != DP_JAVA_UNKNOWN || !name[0] || strncmp(name, "java/", 5) == 0) return DIPPER_OK;
  if (depth > MAX_DEPTH || ++w->visits > MAX_VISITS) return DIPPER_OK; /* unknown */
  char *entry = malloc(strlen(name) + 7);
  if (!entry) return DIPPER_NOMEM;
  sprintf(entry, "%s.class", name);
  uint8_t *c = NULL;
  size_t n = 0;
  int rc = zip_entry(w->z, entry, &c, &n, w->why);
  supers s = {0, NULL};
  if (rc == DIPPER_OK && !c) *kind = DP_JAVA_ABSENT;
  if (rc == DIPPER_OK && c) rc = class_supers(c, n, entry, &s, w->why);
  free(c);
  free(entry);
  for (int i = 0; rc == DIPPER_OK && i < s.n; i++) {
    dp_java_kind k;
    rc = kind_of(w, s.names[i], depth + 1, &k);
    if (rc == DIPPER_OK && k != DP_JAVA_UNKNOWN && k != DP_JAVA_ABSENT) {
      *kind = k;
      break;
    }
  }
  supers_free(&s);
  return rc;
}

int dp_jar_class_kind(const uint8_t *jar, size_t n, const char *class_name, dp_java_kind *kind,
                      dp_buf *why) {
  *kind = DP_JAVA_UNKNOWN;
  zip z;
  int rc = zip_open(&z, jar, n, why);
  if (rc != DIPPER_OK) return rc;
  char *internal = strdup(class_name);
  if (!internal) return DIPPER_NOMEM;
  for (char *p = internal; *p; p++)
    if (*p == '.') *p = '/';
  walk w = {&z, 0, why};
  rc = known(internal) != DP_JAVA_UNKNOWN ? DIPPER_OK : kind_of(&w, internal, 0, kind);
  free(internal);
  return rc;
}

int dp_jar_file_kind(const char *path, const char *class_name, dp_java_kind *kind, dp_buf *why) {
  *kind = DP_JAVA_UNKNOWN;
  FILE *f = fopen(path, "rb");
  if (!f) {
    dp_buf_printf(why, "cannot read the jar %s: %s", path, strerror(errno));
    return DIPPER_IO;
  }
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  int rc = DIPPER_OK;
  for (;;) {
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 65536;
      uint8_t *g = nc <= MAX_JAR ? realloc(buf, nc) : NULL;
      if (!g) {
        dp_buf_printf(why, "the jar %s is larger than dipper reads (1 GiB) or memory ran out", path);
        rc = DIPPER_LIMIT;
        break;
      }
      buf = g;
      cap = nc;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (rc == DIPPER_OK && ferror(f)) {
    dp_buf_printf(why, "cannot read the jar %s: %s", path, strerror(errno));
    rc = DIPPER_IO;
  }
  fclose(f);
  if (rc == DIPPER_OK) rc = dp_jar_class_kind(buf, n, class_name, kind, why);
  free(buf);
  return rc;
}
