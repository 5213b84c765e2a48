/*
** buf.h — a growable byte buffer for building text (EXPLAIN, messages, JSON).
** Memory is malloc'd; an allocation failure sets `oom` and later appends are
** ignored, so callers check once at the end.
*/
#ifndef DP_BUF_H
#define DP_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/compiler.h"

typedef struct dp_buf {
  char *data;   /* NUL-terminated when len > 0 or after dp_buf_cstr */
  size_t len, cap;
  bool oom;
} dp_buf;

#define DP_BUF_INIT {NULL, 0, 0, false}

void dp_buf_put(dp_buf *b, const void *p, size_t n);
/* n more bytes at the end, for the caller to fill in place (a column of
** numbers written without a copy through a staging array): where they
** start, or NULL (oom set) when they cannot be had. */
char *dp_buf_append_room(dp_buf *b, size_t n);
void dp_buf_puts(dp_buf *b, const char *s);
void dp_buf_putc(dp_buf *b, char c);
void dp_buf_printf(dp_buf *b, const char *fmt, ...)
    DP_PRINTF(2, 3)
    ;
void dp_buf_vprintf(dp_buf *b, const char *fmt, va_list ap);
void dp_buf_indent(dp_buf *b, int n); /* n spaces */
const char *dp_buf_cstr(dp_buf *b);   /* "" for an empty buffer */
char *dp_buf_take(dp_buf *b);         /* hands data to the caller (free()), resets b; NULL on oom */
void dp_buf_free(dp_buf *b);

#endif /* DP_BUF_H */
