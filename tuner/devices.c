/*
 * devices.c - `redtune --device all | LIST` (devices.h): one tuning run per GPU, each in a
 * child process of its own, concurrently, into one database.
 *
 * A child is today's single-GPU run, unchanged: its own worker (so a GPU that faults or
 * hangs costs only its own candidates, and a child that dies costs only its GPU), its own
 * device and run rows, the same database file, which SQLite's locking (WAL, the busy
 * timeout, a transaction per write; tuner/store_open.c) shares between processes. The
 * parent touches neither CUDA nor the database: it lists the GPUs (through a worker),
 * forks, and prefixes each line of a child's output with its GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "devices.h"
#include "session.h"

int devices_identical(const rt_device *a, const rt_device *b)
{
    return !strcmp(a->name, b->name) && a->cc_major == b->cc_major
           && a->cc_minor == b->cc_minor && a->sm_count == b->sm_count
           && a->mem_clock_khz == b->mem_clock_khz && a->bus_width_bits == b->bus_width_bits;
}

int devices_plan_make(const char *exe, const int *want, int nwant, int all, int split,
                      const char *as_given, devices_plan *p, rt_err *e)
{
    static rt_device found[PROTO_MAX_DEVICES];   /* 24 KiB: off the stack */
    int count = 0, rc = session_devices(exe, found, PROTO_MAX_DEVICES, &count, e);
    memset(p, 0, sizeof *p);
    if (rc)
        return rc;
    for (int i = 0; i < (all ? count : nwant); i++) {
        int k = all ? i : want[i];
        if (k < 0 || k >= count) {
            char have[32];
            snprintf(have, sizeof have, count == 1 ? "0" : "0 to %d", count - 1);
            return rt_seterr(e, RT_EINVAL, "--device %s: there is no GPU %d; this machine has "
                             "%d GPU%s (%s)", as_given, k, count, count == 1 ? "" : "s", have);
        }
        p->dev[p->n++] = found[k];
    }
    /* A GPU's share: its rank among the identical GPUs listed before it, of their number. */
    for (int i = 0; i < p->n; i++) {
        p->split_count[i] = 1;
        for (int j = 0; split && j < p->n; j++)
            if (j != i && devices_identical(&p->dev[i], &p->dev[j])) {
                p->split_count[i]++;
                p->split_index[i] += j < i;
            }
    }
    return RT_OK;
}

/* One child: its process, the read ends of its stdout and stderr (-1 once closed), the part
 * of a line read so far on each. */
typedef struct child {
    pid_t pid;
    int status;            /* waitpid's, once reaped (pid 0 then) */
    int fd[2];
    size_t used[2];
    char buf[2][4096];
} child;

/* Print the whole lines of c's stream k with the GPU's prefix; 'all' prints a last partial
 * one too. A line longer than the buffer goes out in pieces. */
static void emit(child *c, int k, int ordinal, int all)
{
    FILE *to = k ? stderr : stdout;
    char *b = c->buf[k];
    size_t start = 0;
    for (size_t i = 0; i < c->used[k]; i++)
        if (b[i] == '\n') {
            fprintf(to, "[gpu %d] %.*s\n", ordinal, (int)(i - start), b + start);
            start = i + 1;
        }
    if ((all || (start == 0 && c->used[k] == sizeof c->buf[k])) && start < c->used[k]) {
        fprintf(to, "[gpu %d] %.*s\n", ordinal, (int)(c->used[k] - start), b + start);
        start = c->used[k];
    }
    memmove(b, b + start, c->used[k] - start);
    c->used[k] -= start;
    fflush(to);
}

/* Read what is there on c's stream k; at its end (or an error) the rest is printed and the
 * stream closed. */
static void drain(child *c, int k, int ordinal)
{
    for (;;) {
        ssize_t r = read(c->fd[k], c->buf[k] + c->used[k], sizeof c->buf[k] - c->used[k]);
        if (r > 0) {
            c->used[k] += (size_t)r;
            emit(c, k, ordinal, 0);
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        emit(c, k, ordinal, 1);
        close(c->fd[k]);
        c->fd[k] = -1;
        return;
    }
}

/* Start the child of GPU i: its stdout and stderr into pipes read here. */
static int start(const tune_opts *o, const devices_plan *p, int i, devices_run_fn run,
                 void *arg, child *c, rt_err *e)
{
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (pipe(out) || pipe(err)) {
        int rc = rt_seterr(e, RT_EIO, "pipe: %s", strerror(errno));
        for (int k = 0; k < 2; k++) {
            if (out[k] >= 0)
                close(out[k]);
            if (err[k] >= 0)
                close(err[k]);
        }
        return rc;
    }
    /* Not inherited by the workers the children exec; non-blocking for drain(). */
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    fcntl(err[0], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int rc = rt_seterr(e, RT_EIO, "fork: %s", strerror(errno));
        close(out[0]); close(out[1]); close(err[0]); close(err[1]);
        return rc;
    }
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]); close(out[1]); close(err[0]); close(err[1]);
        setvbuf(stdout, NULL, _IOLBF, 0);   /* lines reach the display as they are made */
        tune_opts mine = *o;
        mine.device = p->dev[i].ordinal;
        mine.split_index = p->split_index[i];
        mine.split_count = p->split_count[i];
        mine.jobs = o->jobs / p->n > 0 ? o->jobs / p->n : 1;
        rt_err ce;
        rt_clearerr(&ce);
        int st = run(&mine, arg, &ce);
        if (st && ce.msg[0])
            fprintf(stderr, "redtune: %s\n", ce.msg);
        fflush(stdout);
        fflush(stderr);
        _exit(st);   /* the parent's exit handlers and buffers are the parent's */
    }
    close(out[1]);
    close(err[1]);
    c->pid = pid;
    c->fd[0] = out[0];
    c->fd[1] = err[0];
    return RT_OK;
}

int devices_tune(const tune_opts *o, const devices_plan *p, devices_run_fn run, void *arg,
                 int *worst, rt_err *e)
{
    int rc = RT_OK, started = 0, left;
    child *c = calloc((size_t)p->n, sizeof *c);
    struct pollfd *pf = calloc((size_t)p->n * 2, sizeof *pf);
    *worst = 0;
    if (!c || !pf) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory for %d GPUs", p->n);
        goto done;
    }
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < p->n; i++)
        c[i].fd[0] = c[i].fd[1] = -1;
    printf("redtune: tuning %d GPU%s, each in its own process:", p->n, p->n == 1 ? "" : "s");
    for (int i = 0; i < p->n; i++)
        printf("%s gpu %d (%s%s)", i ? "," : "", p->dev[i].ordinal, p->dev[i].name,
               p->split_count[i] > 1 ? ", --split" : "");
    printf("\n");
    for (; started < p->n && rc == RT_OK; started++)
        if ((rc = start(o, p, started, run, arg, &c[started], e)))
            break;

    /* Until every child is reaped and its streams are closed: a child's workers may hold
     * its pipes a while after it died, so a reaped child's streams are drained, not waited
     * for. */
    for (left = started; left > 0; ) {
        int np = 0;
        for (int i = 0; i < started; i++)
            for (int k = 0; k < 2; k++)
                if (c[i].fd[k] >= 0)
                    pf[np++] = (struct pollfd){c[i].fd[k], POLLIN, 0};
        if (np && poll(pf, (nfds_t)np, 500) < 0 && errno != EINTR) {
            rc = rt_seterr(e, RT_EIO, "poll: %s", strerror(errno));
            np = 0;
        }
        for (int i = 0; i < started; i++) {
            for (int k = 0; k < 2; k++)
                if (c[i].fd[k] >= 0)
                    drain(&c[i], k, p->dev[i].ordinal);
            if (c[i].pid > 0 && waitpid(c[i].pid, &c[i].status, np ? WNOHANG : 0) == c[i].pid) {
                c[i].pid = 0;
                for (int k = 0; k < 2; k++)
                    if (c[i].fd[k] >= 0 && (drain(&c[i], k, p->dev[i].ordinal), c[i].fd[k] >= 0)) {
                        emit(&c[i], k, p->dev[i].ordinal, 1);
                        close(c[i].fd[k]);
                        c[i].fd[k] = -1;
                    }
                left--;
            }
        }
    }
    for (int i = 0; i < started; i++) {
        int st = c[i].status, code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        if (code > *worst)
            *worst = code;
        if (WIFEXITED(st) && code == 0)
            printf("redtune: gpu %d (%s): done\n", p->dev[i].ordinal, p->dev[i].name);
        else if (WIFEXITED(st))
            fprintf(stderr, "redtune: gpu %d (%s): failed, exit status %d (its lines above say "
                    "why); the other GPUs went on\n", p->dev[i].ordinal, p->dev[i].name, code);
        else
            fprintf(stderr, "redtune: gpu %d (%s): killed by signal %d; the other GPUs went "
                    "on\n", p->dev[i].ordinal, p->dev[i].name, WTERMSIG(st));
    }
    fflush(stdout);
done:
    free(c);
    free(pf);
    return rc;
}
