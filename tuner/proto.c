/*
 * proto.c - framing of the pipe protocol.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "proto.h"

typedef struct hdr {
    uint32_t magic;
    uint32_t kind;
    uint64_t len;
} hdr;

#define MAGIC 0x72746e31u   /* "rtn1" */

static int write_all(int fd, const void *p, size_t len)
{
    const char *c = p;
    while (len) {
        ssize_t w = write(fd, c, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        len -= (size_t)w;
    }
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Read exactly len bytes before 'deadline' (ms on the monotonic clock; <0: none). */
static int read_all(int fd, void *p, size_t len, double deadline)
{
    char *c = p;
    while (len) {
        if (deadline >= 0) {
            double left = deadline - now_ms();
            if (left <= 0)
                return -2;
            struct pollfd pfd = {fd, POLLIN, 0};
            int r = poll(&pfd, 1, (int)left + 1);
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0)
                return -2;
            if (r < 0)
                return -1;
        }
        ssize_t n = read(fd, c, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        c += n;
        len -= (size_t)n;
    }
    return 0;
}

int proto_send(int fd, uint32_t kind, const void *a, size_t alen, const void *b, size_t blen)
{
    hdr h = {MAGIC, kind, alen + blen};
    if (write_all(fd, &h, sizeof h) || (alen && write_all(fd, a, alen)) ||
        (blen && write_all(fd, b, blen)))
        return -1;
    return 0;
}

int proto_recv(int fd, uint32_t *kind, void **data, size_t *len, int timeout_ms)
{
    *data = NULL;
    *len = 0;
    double deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    hdr h;
    int r = read_all(fd, &h, sizeof h, deadline);
    if (r)
        return r;
    if (h.magic != MAGIC || h.len > ((uint64_t)1 << 32))
        return -1;
    void *buf = malloc(h.len ? h.len : 1);
    if (!buf)
        return -1;
    if (h.len && (r = read_all(fd, buf, h.len, deadline)) != 0) {
        free(buf);
        return r;
    }
    *kind = h.kind;
    *data = buf;
    *len = h.len;
    return 0;
}
