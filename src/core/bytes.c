/*
** bytes.c — the binary codec of bytes.h.
*/
#include "core/bytes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void dp_put_u8(dp_buf *b, uint8_t v) { dp_buf_put(b, &v, 1); }

void dp_put_u32(dp_buf *b, uint32_t v) {
  uint8_t x[4];
  for (int i = 0; i < 4; i++) x[i] = (uint8_t)(v >> (8 * i));
  dp_buf_put(b, x, 4);
}

void dp_put_u64(dp_buf *b, uint64_t v) {
  uint8_t x[8];
  for (int i = 0; i < 8; i++) x[i] = (uint8_t)(v >> (8 * i));
  dp_buf_put(b, x, 8);
}

void dp_put_uvar(dp_buf *b, uint64_t v) {
  uint8_t x[10];
  size_t n = 0;
  while (v >= 0x80) {
    x[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  x[n++] = (uint8_t)v;
  dp_buf_put(b, x, n);
}

void dp_put_svar(dp_buf *b, int64_t v) {
  dp_put_uvar(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void dp_put_f64(dp_buf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  dp_put_u64(b, u);
}

void dp_put_bytes(dp_buf *b, const void *p, size_t n) {
  dp_put_uvar(b, n);
  if (n) dp_buf_put(b, p, n);
}

void dp_put_str(dp_buf *b, const char *s) { dp_put_bytes(b, s ? s : "", s ? strlen(s) : 0); }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dp_put_i64s/dp_get_i64s store values as the machine holds them: add a byte swap here"
#endif

static inline int64_t value_at(const int64_t *v, const int64_t *at, int64_t k) {
  return v[at ? at[k] : k];
}

/* The column's values - base in `width`-byte units at p. */
#define PUT_NARROW(T)                                                    \
  if (at)                                                                \
    for (int64_t k = 0; k < n; k++) {                                    \
      T x = (T)((uint64_t)v[at[k]] - (uint64_t)base);                    \
      memcpy(p + (size_t)k * sizeof(T), &x, sizeof(T));                  \
    }                                                                    \
  else                                                                   \
    for (int64_t k = 0; k < n; k++) {                                    \
      T x = (T)((uint64_t)v[k] - (uint64_t)base);                        \
      memcpy(p + (size_t)k * sizeof(T), &x, sizeof(T));                  \
    }

void dp_put_i64s(dp_buf *b, const int64_t *v, const int64_t *at, int64_t n) {
  int64_t lo = n ? value_at(v, at, 0) : 0, hi = lo;
  if (at)
    for (int64_t k = 1; k < n; k++) {
      int64_t x = v[at[k]];
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
  else
    for (int64_t k = 1; k < n; k++) {
      lo = v[k] < lo ? v[k] : lo;
      hi = v[k] > hi ? v[k] : hi;
    }
  uint64_t range = (uint64_t)hi - (uint64_t)lo;
  int width = range == 0 ? 0 : range <= UINT8_MAX ? 1 : range <= UINT16_MAX ? 2
              : range <= UINT32_MAX ? 4 : 8;
  int64_t base = lo;
  dp_put_svar(b, base);
  dp_put_u8(b, (uint8_t)width);
  if (!width || !n) return;
  uint8_t *p = (uint8_t *)dp_buf_append_room(b, (size_t)n * (size_t)width);
  if (!p) return;
  switch (width) {
  case 1: PUT_NARROW(uint8_t) break;
  case 2: PUT_NARROW(uint16_t) break;
  case 4: PUT_NARROW(uint32_t) break;
  default: PUT_NARROW(uint64_t) break;
  }
}

#define GET_WIDE(T)                                                      \
  for (int64_t k = 0; k < n; k++) {                                      \
    T x;                                                                 \
    memcpy(&x, p + (size_t)k * sizeof(T), sizeof(T));                    \
    v[at ? at[k] : k] = (int64_t)((uint64_t)base + (uint64_t)x);         \
  }
#define GET_ALL(T)                                                       \
  if (at)                                                                \
    GET_WIDE(T)                                                          \
  else                                                                   \
    for (int64_t k = 0; k < n; k++) {                                    \
      T x;                                                               \
      memcpy(&x, p + (size_t)k * sizeof(T), sizeof(T));                  \
      v[k] = (int64_t)((uint64_t)base + (uint64_t)x);                    \
    }

bool dp_get_i64s(dp_rd *r, int64_t *v, const int64_t *at, int64_t n) {
  int64_t base = dp_get_svar(r);
  uint8_t width = dp_get_u8(r);
  if (r->bad || n < 0 || (width != 0 && width != 1 && width != 2 && width != 4 && width != 8) ||
      (width && (uint64_t)n > dp_rd_left(r) / width)) {
    r->bad = true;
    return false;
  }
  const uint8_t *p = r->p + r->pos;
  r->pos += (size_t)n * width;
  switch (width) {
  case 0:
    if (at)
      for (int64_t k = 0; k < n; k++) v[at[k]] = base;
    else
      for (int64_t k = 0; k < n; k++) v[k] = base;
    break;
  case 1: GET_ALL(uint8_t) break;
  case 2: GET_ALL(uint16_t) break;
  case 4: GET_ALL(uint32_t) break;
  default:
    if (!at && base == 0) {
      if (n) memcpy(v, p, (size_t)n * 8);
      break;
    }
    GET_ALL(uint64_t)
    break;
  }
  return true;
}

void dp_rd_init(dp_rd *r, const void *p, size_t n) {
  r->p = p;
  r->n = p ? n : 0;
  r->pos = 0;
  r->bad = false;
}

static const uint8_t *take(dp_rd *r, size_t n) {
  if (r->bad || r->n - r->pos < n) {
    r->bad = true;
    return NULL;
  }
  const uint8_t *p = r->p + r->pos;
  r->pos += n;
  return p;
}

uint8_t dp_get_u8(dp_rd *r) {
  const uint8_t *p = take(r, 1);
  return p ? p[0] : 0;
}

uint32_t dp_get_u32(dp_rd *r) {
  const uint8_t *p = take(r, 4);
  uint32_t v = 0;
  for (int i = 0; p && i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}

uint64_t dp_get_u64(dp_rd *r) {
  const uint8_t *p = take(r, 8);
  uint64_t v = 0;
  for (int i = 0; p && i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

uint64_t dp_get_uvar(dp_rd *r) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const uint8_t *p = take(r, 1);
    if (!p) return 0;
    /* the tenth byte may carry only the top bit */
    if (shift == 63 && *p > 1) break;
    v |= (uint64_t)(*p & 0x7f) << shift;
    if (!(*p & 0x80)) return v;
  }
  r->bad = true;
  return 0;
}

int64_t dp_get_svar(dp_rd *r) {
  uint64_t u = dp_get_uvar(r);
  return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

double dp_get_f64(dp_rd *r) {
  uint64_t u = dp_get_u64(r);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

const uint8_t *dp_get_bytes(dp_rd *r, size_t *n) {
  uint64_t len = dp_get_uvar(r);
  *n = 0;
  if (r->bad || len > r->n - r->pos) {
    r->bad = true;
    return NULL;
  }
  *n = (size_t)len;
  return take(r, (size_t)len);
}

uint64_t dp_get_count(dp_rd *r, size_t min_item) {
  uint64_t c = dp_get_uvar(r);
  if (r->bad) return 0;
  if (min_item == 0) min_item = 1;
  if (c > (r->n - r->pos) / min_item) {
    r->bad = true;
    return 0;
  }
  return c;
}

char *dp_get_strdup(dp_rd *r, bool *oom) {
  if (oom) *oom = false;
  size_t n;
  const uint8_t *p = dp_get_bytes(r, &n);
  if (!p && r->bad) return NULL;
  char *s = malloc(n + 1);
  if (!s) {
    if (oom) *oom = true;
    return NULL;
  }
  if (n) memcpy(s, p, n);
  s[n] = '\0';
  return s;
}

/* CRC-32C, reflected polynomial 0x82F63B78.  On x86-64 with SSE 4.2 the
** processor's crc32 instruction computes exactly this one, 8 bytes a step
** (checkpoints checksum every state file they write: the table loop, a
** byte a step, cost several per cent of a query's CPU); elsewhere a table
** of 256 built once. */
static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static bool crc_hw;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DP_CRC_HW 1
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t c, const uint8_t *b,
                                                              size_t n) {
  uint64_t x = c;
  for (; n >= 8; b += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, b, 8);
    x = __builtin_ia32_crc32di(x, w);
  }
  uint32_t y = (uint32_t)x;
  for (; n > 0; b++, n--) y = __builtin_ia32_crc32qi(y, *b);
  return y;
}
#endif

static void crc_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    crc_table[i] = c;
  }
#ifdef DP_CRC_HW
  __builtin_cpu_init();
  crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

uint32_t dp_crc32c(uint32_t crc, const void *p, size_t n) {
  pthread_once(&crc_once, crc_init);
  const uint8_t *b = p;
  crc = ~crc;
#ifdef DP_CRC_HW
  if (crc_hw) return ~crc_sse42(crc, b, n);
#endif
  for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t dp_crc32c_portable(uint32_t crc, const void *p, size_t n) {
  pthread_once(&crc_once, crc_init);
  const uint8_t *b = p;
  crc = ~crc;
  for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}
