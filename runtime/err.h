/*
 * err.h - the one error convention: a code (RT_OK or a negative RT_E* from redtune.h) and a
 * message that names what went wrong and where, with the failing library's own text.
 */
#ifndef RT_ERR_H
#define RT_ERR_H

#include <stddef.h>
#include "../include/redtune.h"

#define RT_ERRMSG_MAX 16384

typedef struct rt_err {
    int code;
    char msg[RT_ERRMSG_MAX];
} rt_err;

/* Record an error and return its code, so that a caller can write
 * `return rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));`. 'e' may be NULL. */
int rt_seterr(rt_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clear an error record. */
void rt_clearerr(rt_err *e);

#endif
