/*
 * sbuf.h - a growing string for the code generator: appends stop at the first allocation
 * failure and 'failed' says so, so that a caller checks once at the end.
 */
#ifndef RT_SBUF_H
#define RT_SBUF_H

#include <stddef.h>

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int failed;
} sbuf;

void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_append(sbuf *b, const char *text, size_t len);

#endif
