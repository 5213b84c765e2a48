/*
** render.h — Arrow C Data arrays rendered as text, the same way
** tests/spark/arrow/gen.py renders the pyarrow data it writes, so that a test
** compares a decoding with its expected-values file line by line.
**
**   schema name:format[?][<children>] ...      ('?' = nullable)
**   batch I rows N
**   v | v | ...                                 one line per row
**
** Values: null; true/false; integers; floats as %.17g; strings and binaries
** quoted with bytes outside printable ASCII (and ' \) as \xNN; decimals as
** digits with the point at the scale; temporal values as their raw integer;
** month-day-nano intervals as <m>m<d>d<ns>ns, day-time as <d>d<ms>ms; lists
** [a, b]; structs {a, b}; maps {k: v}.  Reading every value also makes ASan
** check that the buffers hold what the lengths and offsets promise.
*/
#ifndef DP_TEST_ARROW_RENDER_H
#define DP_TEST_ARROW_RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "dipper.h"

static inline void render_schema_node(dp_buf *o, const struct ArrowSchema *s) {
  dp_buf_printf(o, "%s:%s%s", s->name ? s->name : "", s->format,
                (s->flags & ARROW_FLAG_NULLABLE) ? "?" : "");
  if (s->n_children == 0) return;
  dp_buf_putc(o, '<');
  for (int64_t i = 0; i < s->n_children; i++) {
    if (i) dp_buf_putc(o, ',');
    render_schema_node(o, s->children[i]);
  }
  dp_buf_putc(o, '>');
}

/* "schema ..." for a "+s" schema: its children, space separated. */
static inline void render_schema(dp_buf *o, const struct ArrowSchema *s) {
  dp_buf_puts(o, "schema");
  for (int64_t i = 0; i < s->n_children; i++) {
    dp_buf_putc(o, ' ');
    render_schema_node(o, s->children[i]);
  }
  dp_buf_putc(o, '\n');
}

static inline void render_bytes(dp_buf *o, const uint8_t *p, int64_t n) {
  dp_buf_putc(o, '\'');
  for (int64_t i = 0; i < n; i++) {
    if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '\'' && p[i] != '\\')
      dp_buf_putc(o, (char)p[i]);
    else
      dp_buf_printf(o, "\\x%02x", p[i]);
  }
  dp_buf_putc(o, '\'');
}

static inline void render_decimal(dp_buf *o, __int128 v, int scale) {
  char digits[64];
  int n = 0;
  unsigned __int128 u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
  do {
    digits[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  while (scale > 0 && n < scale + 1) digits[n++] = '0';
  if (v < 0) dp_buf_putc(o, '-');
  for (int i = n - 1; i >= 0; i--) {
    dp_buf_putc(o, digits[i]);
    if (scale > 0 && i == scale) dp_buf_putc(o, '.');
  }
}

static inline bool render_bit(const void *bits, int64_t i) {
  return (((const uint8_t *)bits)[i >> 3] >> (i & 7)) & 1;
}

static inline void render_value(dp_buf *o, const struct ArrowSchema *s, const struct ArrowArray *a,
                                int64_t i) {
  const char *f = s->format;
  i += a->offset;
  if (strcmp(f, "n") == 0 || (a->n_buffers > 0 && a->buffers[0] && !render_bit(a->buffers[0], i))) {
    dp_buf_puts(o, "null");
    return;
  }
  const void *b1 = a->n_buffers > 1 ? a->buffers[1] : NULL;
  if (strcmp(f, "b") == 0) {
    dp_buf_puts(o, render_bit(b1, i) ? "true" : "false");
  } else if (strlen(f) == 1 && strchr("cCsSiIlL", f[0])) {
    switch (f[0]) {
    case 'c': dp_buf_printf(o, "%d", ((const int8_t *)b1)[i]); break;
    case 'C': dp_buf_printf(o, "%u", ((const uint8_t *)b1)[i]); break;
    case 's': dp_buf_printf(o, "%d", ((const int16_t *)b1)[i]); break;
    case 'S': dp_buf_printf(o, "%u", ((const uint16_t *)b1)[i]); break;
    case 'i': dp_buf_printf(o, "%d", ((const int32_t *)b1)[i]); break;
    case 'I': dp_buf_printf(o, "%u", ((const uint32_t *)b1)[i]); break;
    case 'l': dp_buf_printf(o, "%lld", (long long)((const int64_t *)b1)[i]); break;
    default: dp_buf_printf(o, "%llu", (unsigned long long)((const uint64_t *)b1)[i]); break;
    }
  } else if (strcmp(f, "f") == 0) {
    dp_buf_printf(o, "%.17g", (double)((const float *)b1)[i]);
  } else if (strcmp(f, "g") == 0) {
    dp_buf_printf(o, "%.17g", ((const double *)b1)[i]);
  } else if (strcmp(f, "e") == 0) {
    dp_buf_printf(o, "h%04x", ((const uint16_t *)b1)[i]);
  } else if (strcmp(f, "u") == 0 || strcmp(f, "z") == 0) {
    const int32_t *off = b1;
    render_bytes(o, (const uint8_t *)a->buffers[2] + off[i], off[i + 1] - off[i]);
  } else if (strcmp(f, "U") == 0 || strcmp(f, "Z") == 0) {
    const int64_t *off = b1;
    render_bytes(o, (const uint8_t *)a->buffers[2] + off[i], off[i + 1] - off[i]);
  } else if (f[0] == 'w' && f[1] == ':') {
    int w = atoi(f + 2);
    render_bytes(o, (const uint8_t *)b1 + i * w, w);
  } else if (f[0] == 'd' && f[1] == ':') {
    int p = 0, sc = 0;
    sscanf(f + 2, "%d,%d", &p, &sc);
    __int128 v;
    memcpy(&v, (const uint8_t *)b1 + 16 * i, 16);
    render_decimal(o, v, sc);
  } else if (strcmp(f, "tdD") == 0 || strcmp(f, "tts") == 0 || strcmp(f, "ttm") == 0 ||
             strcmp(f, "tiM") == 0) {
    dp_buf_printf(o, "%d", ((const int32_t *)b1)[i]);
  } else if (strcmp(f, "tiD") == 0) {
    const int32_t *p = (const int32_t *)b1 + 2 * i;
    dp_buf_printf(o, "%dd%dms", p[0], p[1]);
  } else if (strcmp(f, "tin") == 0) {
    const uint8_t *p = (const uint8_t *)b1 + 16 * i;
    int32_t m, d;
    int64_t ns;
    memcpy(&m, p, 4);
    memcpy(&d, p + 4, 4);
    memcpy(&ns, p + 8, 8);
    dp_buf_printf(o, "%dm%dd%lldns", m, d, (long long)ns);
  } else if (f[0] == 't') { /* tdm, ttu, ttn, ts?:tz, tD? */
    dp_buf_printf(o, "%lld", (long long)((const int64_t *)b1)[i]);
  } else if (strcmp(f, "+l") == 0 || strcmp(f, "+L") == 0 || (f[0] == '+' && f[1] == 'w')) {
    int64_t start, end;
    if (f[1] == 'l') {
      start = ((const int32_t *)b1)[i];
      end = ((const int32_t *)b1)[i + 1];
    } else if (f[1] == 'L') {
      start = ((const int64_t *)b1)[i];
      end = ((const int64_t *)b1)[i + 1];
    } else {
      int64_t w = atoi(f + 3);
      start = i * w;
      end = start + w;
    }
    dp_buf_putc(o, '[');
    for (int64_t k = start; k < end; k++) {
      if (k > start) dp_buf_puts(o, ", ");
      render_value(o, s->children[0], a->children[0], k);
    }
    dp_buf_putc(o, ']');
  } else if (strcmp(f, "+s") == 0) {
    dp_buf_putc(o, '{');
    for (int64_t k = 0; k < s->n_children; k++) {
      if (k) dp_buf_puts(o, ", ");
      render_value(o, s->children[k], a->children[k], i);
    }
    dp_buf_putc(o, '}');
  } else if (strcmp(f, "+m") == 0) {
    const int32_t *off = b1;
    const struct ArrowSchema *es = s->children[0];
    const struct ArrowArray *ea = a->children[0];
    dp_buf_putc(o, '{');
    for (int64_t k = off[i]; k < off[i + 1]; k++) {
      if (k > off[i]) dp_buf_puts(o, ", ");
      render_value(o, es->children[0], ea->children[0], k + ea->offset);
      dp_buf_puts(o, ": ");
      render_value(o, es->children[1], ea->children[1], k + ea->offset);
    }
    dp_buf_putc(o, '}');
  } else {
    dp_buf_printf(o, "<%s?>", f);
  }
}

/* "batch I rows N" and the rows of struct array a. */
static inline void render_batch(dp_buf *o, int index, const struct ArrowSchema *s,
                                const struct ArrowArray *a) {
  dp_buf_printf(o, "batch %d rows %lld\n", index, (long long)a->length);
  for (int64_t r = 0; r < a->length; r++) {
    for (int64_t c = 0; c < s->n_children; c++) {
      if (c) dp_buf_puts(o, " | ");
      render_value(o, s->children[c], a->children[c], r + a->offset);
    }
    dp_buf_putc(o, '\n');
  }
}

#endif /* DP_TEST_ARROW_RENDER_H */
