/*
** fastscan.h — the fast paths of the JSON and CSV decoders (json.c, csv.c):
** scalars parsed from the input bytes in one pass, and SSE2 searches for
** the bytes that end a string or a field.
**
** Owns: the common forms only.  Each function either gives exactly the
** value the general path (text.c's dp_text_append_scalar, core/value.c's
** dp_value_parse) would give for the same text, or says "not this form"
** (NULL / false) and the caller takes the general path, which then also
** gives the errors.  So a fast path can never accept what the general one
** refuses, nor read a value differently; tests/formats/fastscan_test.c
** compares the two over random and edge-case texts.
**
**   integers   [-]digits, at most 19 of them, within BIGINT
**   doubles    the JSON number grammar with at most 19 significant digits
**              and a decimal exponent within ±22 of an exact mantissa below
**              2^53 (Clinger's fast path: one correctly rounded operation),
**              or within ±19 of a larger one (the 17-digit shortest forms:
**              the product or quotient in 128-bit integers, rounded to
**              nearest even by hand); anything else (huge exponents,
**              denormals, 20 digits) goes to strtod, which rounds correctly
**   timestamps yyyy-MM-dd[ Tt]HH:mm:ss[.f{1,9}] with all the fixed digits,
**              fraction cut to the precision as parse_time does
**
** Digits are read 8 at a time (SWAR in a 64-bit word: how many, and their
** value in three multiplies, without a branch per digit).  A timestamp of
** the same minute as the last one (its first 16 bytes equal, which were
** checked then) costs one compare and its seconds and fraction.
**
** SSE2 is the x86-64 baseline; elsewhere the loops are plain C.  Loads of 16
** bytes happen only where 16 bytes remain, so nothing is read past `end`.
*/
#ifndef DP_FORMATS_FASTSCAN_H
#define DP_FORMATS_FASTSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/types.h"
#include "core/vector.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define DP_FAST_SSE2 1
#endif

#if defined(__GNUC__)
#define DP_FAST_INLINE static inline __attribute__((always_inline))
#else
#define DP_FAST_INLINE static inline
#endif

static inline bool dp_fast_digit(char ch) { return (unsigned char)(ch - '0') < 10; }

static const uint64_t dp_fast_p10u[] = {UINT64_C(1),        UINT64_C(10),        UINT64_C(100),
                                        UINT64_C(1000),     UINT64_C(10000),     UINT64_C(100000),
                                        UINT64_C(1000000),  UINT64_C(10000000),  UINT64_C(100000000)};

/* The ASCII digits that begin the 8 bytes at p (p + 8 <= end): how many
** (0..8) and, in *val, their value.  SWAR: c - '0' in each byte; a byte is a
** digit when that is below 10.  A borrow or carry between bytes can only
** come out of a byte that is not a digit, so it never disturbs the bytes
** before the first non-digit, which are all that is read. */
DP_FAST_INLINE int dp_fast_swar8(const char *p, uint64_t *val) {
  uint64_t x;
  __builtin_memcpy(&x, p, 8);
  uint64_t t = x - UINT64_C(0x3030303030303030);
  uint64_t bad = (t | (t + UINT64_C(0x7676767676767676))) & UINT64_C(0x8080808080808080);
  int n = bad ? __builtin_ctzll(bad) >> 3 : 8;
  if (n == 0) {
    *val = 0;
    return 0;
  }
  /* the n digits to the top bytes (the first digit lowest), zeros below:
  ** an 8-digit number with leading zeros, combined pairwise */
  t <<= 8 * (8 - n);
  t = ((t & UINT64_C(0x0F0F0F0F0F0F0F0F)) * 2561) >> 8;
  t = ((t & UINT64_C(0x00FF00FF00FF00FF)) * 6553601) >> 16;
  t = ((t & UINT64_C(0x0000FFFF0000FFFF)) * UINT64_C(42949672960001)) >> 32;
  *val = t;
  return n;
}

/* The run of digits at *qp: appended to *acc (acc * 10^k + digits) and
** counted in *count, *qp past it.  More than 19 digits in all leave *acc
** meaningless (wrapped); the callers refuse those by *count. */
DP_FAST_INLINE void dp_fast_run(const char **qp, const char *end, uint64_t *acc, int *count) {
  const char *q = *qp;
  uint64_t v = *acc;
  int c = *count;
  while (end - q >= 8) {
    uint64_t w;
    int m = dp_fast_swar8(q, &w);
    v = v * dp_fast_p10u[m] + w;
    q += m;
    c += m;
    if (m < 8 || c > 19) goto done;
  }
  for (; q < end && dp_fast_digit(*q); q++, c++) {
    if (c > 19) break;
    v = v * 10 + (uint64_t)(*q - '0');
  }
done:
  *qp = q;
  *acc = v;
  *count = c;
}

/* [-]digits at p (at most 19 digits, within BIGINT): *out and the end, or NULL. */
DP_FAST_INLINE const char *dp_fast_i64(const char *p, const char *end, int64_t *out) {
  bool neg = p < end && *p == '-';
  const char *q = p + neg;
  uint64_t v = 0;
  int n = 0;
  dp_fast_run(&q, end, &v, &n);
  if (n == 0 || n > 19) return NULL;
  if (v > (uint64_t)INT64_MAX + neg) return NULL; /* out of range: the general path says so */
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return q;
}

/* dp_vector_append_i64 / _f64 for the decoders' loops: in the common case
** (room for the row, no validity bitmap yet, a 64- or 32-bit column) the
** value is stored without the checks and the switch; else the append as it
** is.  Either way the same row. */
DP_FAST_INLINE int dp_fast_put_i64(dp_vector *v, int64_t x) {
  int64_t i = v->length;
  if (i < v->capacity && !v->validity) {
    if (v->phys == DP_PHYS_I64) {
      ((int64_t *)v->values)[i] = x;
      v->length = i + 1;
      return DIPPER_OK;
    }
    if (v->phys == DP_PHYS_I32) {
      ((int32_t *)v->values)[i] = (int32_t)x;
      v->length = i + 1;
      return DIPPER_OK;
    }
  }
  return dp_vector_append_i64(v, x);
}

DP_FAST_INLINE int dp_fast_put_f64(dp_vector *v, double x) {
  int64_t i = v->length;
  if (i < v->capacity && !v->validity && v->phys == DP_PHYS_F64) {
    ((double *)v->values)[i] = x;
    v->length = i + 1;
    return DIPPER_OK;
  }
  return dp_vector_append_f64(v, x);
}

/* Does x fit the integer kind (TINYINT .. BIGINT)? */
static inline bool dp_fast_int_fits(dp_type_kind k, int64_t x) {
  switch (k) {
  case DP_T_TINYINT: return x >= INT8_MIN && x <= INT8_MAX;
  case DP_T_SMALLINT: return x >= INT16_MIN && x <= INT16_MAX;
  case DP_T_INT: return x >= INT32_MIN && x <= INT32_MAX;
  default: return true;
  }
}

#if defined(__SIZEOF_INT128__)
static inline int dp_fast_bits128(unsigned __int128 x) {
  uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
  return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

/* The double nearest q * 2^e2 (ties to even), q of at least 54 bits and
** below 2^127, `sticky` when bits below q were cut off (not zero). */
static inline double dp_fast_round(unsigned __int128 q, bool sticky, int e2) {
  int shift = dp_fast_bits128(q) - 53;
  unsigned __int128 one = 1;
  uint64_t m = (uint64_t)(q >> shift);
  unsigned __int128 low = q & ((one << shift) - 1), half = one << (shift - 1);
  if (low > half || (low == half && (sticky || (m & 1)))) m++;
  if (m == UINT64_C(1) << 53) {
    m >>= 1;
    shift++;
  }
  /* m * 2^(shift + e2) is normal here (1e-19 to 2^128): its bits directly */
  uint64_t bits = ((uint64_t)(shift + e2 + 52 + 1023) << 52) | (m & ((UINT64_C(1) << 52) - 1));
  double d;
  __builtin_memcpy(&d, &bits, sizeof d);
  return d;
}
#endif

/* mant * 10^exp10, correctly rounded, for the mantissas Clinger's fast path
** cannot take (2^53 and up: the 17-digit shortest forms that Java and
** Python print) and |exp10| <= 19, in 128-bit integer arithmetic: the
** product, or the quotient of mant shifted up by enough bits that its 55 or
** 56 bits and the remainder decide the rounding.  false: not this form. */
static inline bool dp_fast_f64_wide(uint64_t mant, int exp10, double *out) {
#if defined(__SIZEOF_INT128__)
  static const uint64_t p10[] = {UINT64_C(1),
                                 UINT64_C(10),
                                 UINT64_C(100),
                                 UINT64_C(1000),
                                 UINT64_C(10000),
                                 UINT64_C(100000),
                                 UINT64_C(1000000),
                                 UINT64_C(10000000),
                                 UINT64_C(100000000),
                                 UINT64_C(1000000000),
                                 UINT64_C(10000000000),
                                 UINT64_C(100000000000),
                                 UINT64_C(1000000000000),
                                 UINT64_C(10000000000000),
                                 UINT64_C(100000000000000),
                                 UINT64_C(1000000000000000),
                                 UINT64_C(10000000000000000),
                                 UINT64_C(100000000000000000),
                                 UINT64_C(1000000000000000000),
                                 UINT64_C(10000000000000000000)};
  if (mant == 0 || exp10 < -19 || exp10 > 19) return false;
  if (exp10 >= 0) {
    unsigned __int128 prod = (unsigned __int128)mant * p10[exp10];
    if (dp_fast_bits128(prod) <= 53) {
      *out = (double)(uint64_t)prod;
      return true;
    }
    *out = dp_fast_round(prod, false, 0);
    return true;
  }
  uint64_t den = p10[-exp10];
  int s = 55 + (64 - __builtin_clzll(den)) - (64 - __builtin_clzll(mant)); /* at most 118 bits */
  if (s < 0) s = 0;
  unsigned __int128 num = (unsigned __int128)mant << s;
  unsigned __int128 quo = num / den;
  *out = dp_fast_round(quo, num % den != 0, -s);
  return true;
#else
  (void)mant;
  (void)exp10;
  (void)out;
  return false;
#endif
}

/* A JSON number at p whose double the fast path computes exactly rounded:
** *out and the end (where scan_number of json.c would stop), or NULL. */
DP_FAST_INLINE const char *dp_fast_f64(const char *p, const char *end, double *out) {
  static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  bool neg = p < end && *p == '-';
  const char *q = p + neg;
  if (q >= end || !dp_fast_digit(*q)) return NULL;
  uint64_t mant = 0;
  int sig = 0, exp10 = 0;
  if (*q == '0') {
    q++;
  } else {
    dp_fast_run(&q, end, &mant, &sig);
    if (sig > 19) return NULL;
  }
  if (q < end && *q == '.') {
    q++;
    if (q >= end || !dp_fast_digit(*q)) return NULL;
    /* zeros before the first significant digit count in the exponent only */
    for (; mant == 0 && q < end && dp_fast_digit(*q); q++) {
      exp10--;
      if (*q != '0') {
        mant = (uint64_t)(*q - '0');
        sig = 1;
      }
    }
    const char *f = q;
    dp_fast_run(&q, end, &mant, &sig);
    if (sig > 19) return NULL;
    exp10 -= (int)(q - f);
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    q++;
    bool eneg = q < end && *q == '-';
    if (q < end && (*q == '-' || *q == '+')) q++;
    if (q >= end || !dp_fast_digit(*q)) return NULL;
    int e = 0;
    for (; q < end && dp_fast_digit(*q); q++)
      if (e < 10000) e = e * 10 + (*q - '0');
    exp10 += eneg ? -e : e;
  }
  double d;
  if (mant == 0)
    d = 0.0;
  else if (mant < (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22)
    d = exp10 < 0 ? (double)mant / pow10[-exp10] : (double)mant * pow10[exp10];
  else if (!dp_fast_f64_wide(mant, exp10, &d))
    return NULL;
  *out = neg ? -d : d;
  return q;
}

static inline int dp_fast_2(const char *p) { return (p[0] - '0') * 10 + (p[1] - '0'); }

/* The last date a decoder read and its day number: records of a stream
** mostly share their date, so the calendar is worked out once per day. */
typedef struct dp_fast_day {
  int32_t ymd; /* y * 10000 + m * 100 + d; -1: none yet */
  int64_t days;
  /* and the last minute: its text "yyyy-MM-dd HH:mm" (checked) and µs since
  ** the epoch, so that a timestamp of the same minute costs one compare and
  ** its seconds (SSE2 only; minute_len 0: none yet) */
  unsigned char minute[16];
  int minute_len;
  int64_t minute_us;
} dp_fast_day;

/* yyyy-MM-dd HH:mm:ss[.fff] at p (' ', 'T' or 't' between): µs since the
** epoch in *out and the end, or NULL.  Fraction digits past `precision` (and
** past 6) are read and dropped, as core/value.c's parse_time does. */
DP_FAST_INLINE const char *dp_fast_timestamp(const char *p, const char *end, int precision,
                                            dp_fast_day *day, int64_t *out) {
  static const unsigned char mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  static const int32_t scale[] = {100000, 10000, 1000, 100, 10, 1};
  if (end - p < 19) return NULL;
  int64_t base;
  int s;
#ifdef DP_FAST_SSE2
  __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
  if (day->minute_len &&
      _mm_movemask_epi8(_mm_cmpeq_epi8(
          v, _mm_loadu_si128((const __m128i *)(const void *)day->minute))) == 0xFFFF) {
    /* the minute of the last timestamp, which was checked then */
    if (p[16] != ':' || !dp_fast_digit(p[17]) || !dp_fast_digit(p[18])) return NULL;
    if ((s = dp_fast_2(p + 17)) > 59) return NULL;
    base = day->minute_us;
    goto fraction;
  }
  /* "yyyy-MM-dd HH:mm" in one compare: digits where digits go (x - '0' at
  ** most 9, unsigned), the punctuation where it goes */
  __m128i t = _mm_sub_epi8(v, _mm_set1_epi8('0'));
  unsigned digits = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t));
  unsigned punct = (unsigned)_mm_movemask_epi8(
      _mm_cmpeq_epi8(v, _mm_setr_epi8(0, 0, 0, 0, '-', 0, 0, '-', 0, 0, ' ', 0, 0, ':', 0, 0)));
  if ((digits & 0xDB6Fu) != 0xDB6Fu || (punct & 0x2090u) != 0x2090u) return NULL;
  if (!(punct & 0x400u) && p[10] != 'T' && p[10] != 't') return NULL;
  if (p[16] != ':' || !dp_fast_digit(p[17]) || !dp_fast_digit(p[18])) return NULL;
#else
  static const signed char digit_at[] = {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18};
  for (size_t i = 0; i < sizeof digit_at; i++)
    if (!dp_fast_digit(p[digit_at[i]])) return NULL;
  if (p[4] != '-' || p[7] != '-' || (p[10] != ' ' && p[10] != 'T' && p[10] != 't') ||
      p[13] != ':' || p[16] != ':')
    return NULL;
#endif
  int y = dp_fast_2(p) * 100 + dp_fast_2(p + 2), mo = dp_fast_2(p + 5), d = dp_fast_2(p + 8);
  int h = dp_fast_2(p + 11), mi = dp_fast_2(p + 14);
  s = dp_fast_2(p + 17);
  if (h > 23 || mi > 59 || s > 59) return NULL;
  int32_t ymd = y * 10000 + mo * 100 + d;
  if (ymd != day->ymd) {
    if (mo < 1 || mo > 12 || d < 1) return NULL;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[mo - 1] + (mo == 2 && leap)) return NULL;
    day->ymd = ymd;
    day->days = dp_days_from_civil(y, (unsigned)mo, (unsigned)d);
  }
  base = day->days * DP_MICROS_PER_DAY + (int64_t)(h * 60 + mi) * 60 * DP_MICROS_PER_SECOND;
#ifdef DP_FAST_SSE2
  _mm_storeu_si128((__m128i *)(void *)day->minute, v);
  day->minute_len = 16;
  day->minute_us = base;
fraction:;
#endif
  base += (int64_t)s * DP_MICROS_PER_SECOND;
  const char *q = p + 19;
  int64_t frac = 0;
  if (q < end && *q == '.') {
    q++;
    int n = 0;
    uint64_t w;
    if (end - q >= 8 && (n = dp_fast_swar8(q, &w)) > 0 && n < 8 && n <= precision && n <= 6) {
      /* all the digits kept: the common ".SSS" */
      *out = base + (int64_t)w * scale[n - 1];
      return q + n;
    }
    n = 0;
    for (; q < end && dp_fast_digit(*q); q++) {
      if (++n > 9) return NULL;
      if (n <= 6 && n <= precision) frac += (int64_t)(*q - '0') * scale[n - 1];
    }
    if (n == 0) return NULL;
  }
  *out = base + frac;
  return q;
}

/* The first byte of p..end that is '"', '\\', a control character or not
** ASCII (the end of a plain JSON string), or end. */
DP_FAST_INLINE const char *dp_fast_string_stop(const char *p, const char *end) {
#ifdef DP_FAST_SSE2
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    /* signed: bytes >= 0x80 are negative, so below 0x20 too */
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                             _mm_cmplt_epi8(v, space));
    unsigned mask = (unsigned)_mm_movemask_epi8(m);
    if (mask) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20 &&
         (unsigned char)*p < 0x80)
    p++;
  return p;
}

/* The first byte of p..end equal to a or b, or end. */
DP_FAST_INLINE const char *dp_fast_find2(const char *p, const char *end, char a, char b) {
#ifdef DP_FAST_SSE2
  const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b);
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    unsigned mask = (unsigned)_mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));
    if (mask) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < end && *p != a && *p != b) p++;
  return p;
}

/* The first byte of p..end equal to a, b or c, or end. */
DP_FAST_INLINE const char *dp_fast_find3(const char *p, const char *end, char a, char b, char c) {
#ifdef DP_FAST_SSE2
  const __m128i va = _mm_set1_epi8(a), vb = _mm_set1_epi8(b), vc = _mm_set1_epi8(c);
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    unsigned mask = (unsigned)_mm_movemask_epi8(_mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)), _mm_cmpeq_epi8(v, vc)));
    if (mask) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p < end && *p != a && *p != b && *p != c) p++;
  return p;
}

#endif /* DP_FORMATS_FASTSCAN_H */
