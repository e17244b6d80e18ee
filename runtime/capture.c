/*
 * capture.c - the cases an application met that had no exact tuned entry, appended to the
 * file REDTUNE_CAPTURE names, and the REDTUNE_LOG lines about the library's choices.
 *
 * Many processes may append to one capture file at once, with no lock: the file is opened
 * O_APPEND and every line goes out in one write() of less than PIPE_BUF bytes, so lines
 * never interleave. The header is written by a process that found the file empty, before
 * its first case, so the file's first line is always a header (two processes that both found
 * it empty write two; the second is a comment among the cases, which the reader allows).
 * A process killed inside its write() can leave a last line without its newline, which the
 * reader skips with a warning.
 *
 * Capturing never fails a reduction: a file that cannot be opened or written is warned
 * about once, whatever REDTUNE_LOG says (capturing was asked for), and capturing stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "optype.h"

#define LINE_MAX_BYTES 1024      /* well under PIPE_BUF (4096 on Linux, 512 by POSIX) */

static atomic_int bad_log_said;

void capture_init(capture *c, FILE *err)
{
    memset(c, 0, sizeof *c);
    c->err = err;
    c->fd = -1;
    pthread_mutex_init(&c->lock, NULL);
    const char *lv = getenv("REDTUNE_LOG");
    if (!lv || !*lv || !strcmp(lv, "off"))
        c->log = CAPTURE_LOG_OFF;
    else if (!strcmp(lv, "warn"))
        c->log = CAPTURE_LOG_WARN;
    else if (!strcmp(lv, "info"))
        c->log = CAPTURE_LOG_INFO;
    else if (!atomic_exchange(&bad_log_said, 1))
        fprintf(err, "redtune: warn: REDTUNE_LOG=%s is not a log level (accepted: off, warn, "
                "info; unset or empty is off); logging stays off\n", lv);
    const char *path = getenv("REDTUNE_CAPTURE");
    if (path && *path && !(c->path = strdup(path)))
        fprintf(err, "redtune: warn: REDTUNE_CAPTURE=%s: out of memory; not capturing\n", path);
    c->active = c->path != NULL || c->log >= CAPTURE_LOG_INFO;
}

void capture_close(capture *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->path);
    free(c->seen);
    pthread_mutex_destroy(&c->lock);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

void capture_log(capture *c, int level, const char *fmt, ...)
{
    if (c->log < level)
        return;
    char line[LINE_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One fprintf, so that lines of several threads do not mix within a line. */
    fprintf(c->err, "redtune: %s: %s\n", level == CAPTURE_LOG_WARN ? "warn" : "info", line);
}

/* A field with the separators and control characters made spaces; "-" when empty. */
static size_t put_field(char *buf, size_t len, size_t at, const char *s, int last)
{
    if (!s || !*s)
        s = "-";
    for (; *s && at < len; s++)
        buf[at++] = (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s;
    if (at < len)
        buf[at++] = last ? '\n' : '\t';
    return at;
}

const char *capture_type_text(int op, int spec, char *buf, size_t len)
{
    optype_ts ts;
    if (optype_resolve((rt_op)op, (rt_type)spec, &ts, NULL, 0)) {
        snprintf(buf, len, "?");
        return buf;
    }
    unsigned canon = (unsigned)ts.canon, acc = (canon >> 8) & 0xffu;   /* redtune.h's fields */
    snprintf(buf, len, "%s%s%s%s%s", rt_type_name(ts.elem), acc ? ":acc=" : "",
             acc ? rt_type_name(ts.acc) : "", canon & 0x10000u ? ":result=" : "",
             canon & 0x10000u ? rt_type_name(ts.elem) : "");
    return buf;
}

size_t capture_format(const capture_case *cs, char *buf, size_t len)
{
    char n[24], nseg[24];
    snprintf(n, sizeof n, "%llu", cs->n);
    snprintf(nseg, sizeof nseg, "%llu", cs->nseg);
    const char *f[CAPTURE_FIELDS] = {cs->op, cs->type, cs->layout, n, nseg, cs->fallback,
                                     cs->fingerprint, cs->device};
    size_t at = 0;
    for (int i = 0; i < CAPTURE_FIELDS; i++)
        at = put_field(buf, len, at, f[i], i == CAPTURE_FIELDS - 1);
    if (at >= len || buf[at - 1] != '\n')
        return 0;   /* cut short: a line is whole or not at all */
    buf[at] = '\0';
    return at;
}

/* FNV-1a of the fields that tell cases apart (not the fallback or the device: one context
 * has one device and one fallback per case); never 0, which marks a free slot. */
static unsigned long long case_hash(const capture_case *cs)
{
    unsigned long long h = 1469598103934665603ULL;
    const char *f[4] = {cs->op, cs->type, cs->layout, cs->fingerprint};
    unsigned long long v[2] = {cs->n, cs->nseg};
    for (int i = 0; i < 4; i++) {
        for (const char *s = f[i] ? f[i] : ""; *s; s++)
            h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL;
    }
    for (int i = 0; i < 2; i++)
        for (int b = 0; b < 8; b++)
            h = (h ^ ((v[i] >> (8 * b)) & 0xff)) * 1099511628211ULL;
    return h ? h : 1;
}

/* 1 when the case is new (and now remembered), 0 when met before or no longer remembered
 * (the table is full). Caller holds c->lock. */
static int first_time(capture *c, unsigned long long h)
{
    if (2 * (c->nseen + 1) > c->cap) {
        if (c->nseen >= CAPTURE_MAX_CASES) {
            if (!c->full_said++)
                fprintf(c->err, "redtune: warn: more than %d distinct cases met; the rest are "
                        "neither captured nor logged\n", CAPTURE_MAX_CASES);
            return 0;
        }
        size_t cap = c->cap ? 2 * c->cap : 256;
        unsigned long long *t = calloc(cap, sizeof *t);
        if (!t)
            return 0;   /* out of memory: the case goes unrecorded, the reduction goes on */
        for (size_t i = 0; i < c->cap; i++)
            if (c->seen[i]) {
                size_t j = c->seen[i] & (cap - 1);
                while (t[j])
                    j = (j + 1) & (cap - 1);
                t[j] = c->seen[i];
            }
        free(c->seen);
        c->seen = t;
        c->cap = cap;
    }
    size_t j = h & (c->cap - 1);
    while (c->seen[j]) {
        if (c->seen[j] == h)
            return 0;
        j = (j + 1) & (c->cap - 1);
    }
    c->seen[j] = h;
    c->nseen++;
    return 1;
}

/* Open the file at the first line to write, writing the header when it is empty. Caller
 * holds c->lock. O_NONBLOCK: a FIFO with no reader fails instead of blocking the call. */
static int open_file(capture *c)
{
    struct stat st;
    const char *why = NULL;
    int fd = open(c->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "is a directory";
    else if (st.st_size == 0) {
        errno = 0;
        if (write(fd, CAPTURE_HEADER, strlen(CAPTURE_HEADER)) != (ssize_t)strlen(CAPTURE_HEADER))
            why = errno ? strerror(errno) : "short write";
    }
    if (!why) {
        c->fd = fd;
        return 0;
    }
    fprintf(c->err, "redtune: warn: REDTUNE_CAPTURE=%s: cannot append to it: %s; cases are "
            "not captured\n", c->path, why);
    if (fd >= 0)
        close(fd);
    c->fd = -2;
    return -1;
}

void capture_case_met(capture *c, const capture_case *cs)
{
    char line[LINE_MAX_BYTES];
    pthread_mutex_lock(&c->lock);
    if (!first_time(c, case_hash(cs)))
        goto done;
    if (cs->nseg)
        capture_log(c, CAPTURE_LOG_INFO, "%s %s %s n = %llu, nseg = %llu: %s", cs->op, cs->type,
                    cs->layout, cs->n, cs->nseg, cs->fallback ? "no exact tuned entry"
                    : "exact tuned entry");
    else
        capture_log(c, CAPTURE_LOG_INFO, "%s %s n = %llu: %s", cs->op, cs->type, cs->n,
                    cs->fallback ? "no exact tuned entry" : "exact tuned entry");
    if (!cs->fallback || !c->path || c->fd == -2)
        goto done;
    size_t len = capture_format(cs, line, sizeof line);
    if (!len || (c->fd < 0 && open_file(c) != 0))
        goto done;
    errno = 0;
    if (write(c->fd, line, len) != (ssize_t)len) {
        /* A short write would leave half a line that later lines follow: stop here. */
        fprintf(c->err, "redtune: warn: REDTUNE_CAPTURE=%s: writing failed: %s; cases are no "
                "longer captured\n", c->path, errno ? strerror(errno) : "short write");
        close(c->fd);
        c->fd = -2;
    }
done:
    pthread_mutex_unlock(&c->lock);
}
