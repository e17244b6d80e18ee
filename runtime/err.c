/*
 * err.c - error records and the names of result codes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "err.h"

int rt_seterr(rt_err *e, int code, const char *fmt, ...)
{
    if (!e)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
    return code;
}

void rt_clearerr(rt_err *e)
{
    if (e) {
        e->code = RT_OK;
        e->msg[0] = '\0';
    }
}

const char *rt_strerror(int code)
{
    switch (code) {
    case RT_OK: return "RT_OK";
    case RT_ENOMEM: return "RT_ENOMEM";
    case RT_EIO: return "RT_EIO";
    case RT_ELUA: return "RT_ELUA";
    case RT_ENVRTC: return "RT_ENVRTC";
    case RT_ECUDA: return "RT_ECUDA";
    case RT_EDB: return "RT_EDB";
    case RT_ENOTFOUND: return "RT_ENOTFOUND";
    case RT_EINVAL: return "RT_EINVAL";
    case RT_EVERIFY: return "RT_EVERIFY";
    case RT_ETIMEOUT: return "RT_ETIMEOUT";
    case RT_EFAULT: return "RT_EFAULT";
    case RT_ECAPTURE: return "RT_ECAPTURE";
    default: return "RT_E(unknown)";
    }
}
