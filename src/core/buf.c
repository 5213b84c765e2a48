/*
** buf.c — the growable text buffer behind buf.h.
**
** Growth doubles the capacity.  The first allocation failure latches `oom`
** and turns every later append into a no-op, so builders of long texts check
** for failure once, when they take the result.
*/
#include "core/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Make room for n more bytes plus the terminating NUL. */
static bool reserve(dp_buf *b, size_t n) {
  if (b->oom) return false;
  if (n > SIZE_MAX - b->len - 1) {
    b->oom = true;
    return false;
  }
  size_t need = b->len + n + 1;
  if (need <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  char *p = realloc(b->data, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->data = p;
  b->cap = cap;
  return true;
}

void dp_buf_put(dp_buf *b, const void *p, size_t n) {
  if (!reserve(b, n)) return;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

char *dp_buf_append_room(dp_buf *b, size_t n) {
  if (!reserve(b, n)) return NULL;
  char *at = b->data + b->len;
  b->len += n;
  b->data[b->len] = '\0';
  return at;
}

void dp_buf_puts(dp_buf *b, const char *s) { dp_buf_put(b, s, strlen(s)); }

void dp_buf_putc(dp_buf *b, char c) { dp_buf_put(b, &c, 1); }

/* Declared a printf-like forwarder so that the format checks of its
** callers reach the vsnprintf calls here. */
DP_PRINTF(2, 0)
void dp_buf_vprintf(dp_buf *b, const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n < 0) {
    b->oom = true;
  } else if (reserve(b, (size_t)n)) {
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
    b->len += (size_t)n;
  }
  va_end(again);
}

void dp_buf_printf(dp_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dp_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void dp_buf_indent(dp_buf *b, int n) {
  if (n <= 0 || !reserve(b, (size_t)n)) return;
  memset(b->data + b->len, ' ', (size_t)n);
  b->len += (size_t)n;
  b->data[b->len] = '\0';
}

const char *dp_buf_cstr(dp_buf *b) {
  /* buf.h promises b->data is a string after this call, even when empty */
  if (!b->data && reserve(b, 0)) b->data[0] = '\0';
  return b->data ? b->data : "";
}

char *dp_buf_take(dp_buf *b) {
  if (b->oom) {
    dp_buf_free(b);
    return NULL;
  }
  char *p = b->data;
  if (!p) {
    /* The caller always gets something it can free(). */
    p = malloc(1);
    if (p) p[0] = '\0';
  }
  b->data = NULL;
  b->len = b->cap = 0;
  return p;
}

void dp_buf_free(dp_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->oom = false;
}
