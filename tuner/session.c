/*
 * session.c - the worker process seen from the tuner (session.h): spawn, requests with time
 * limits, restart and re-prepare, the operator and the read yardstick.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../runtime/nvrtc.h"
#include "cands.h"
#include "measure.h"
#include "session.h"

static void kill_worker(session *w)
{
    if (w->pid > 0) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0);
    }
    if (w->to >= 0)
        close(w->to);
    if (w->from >= 0)
        close(w->from);
    w->pid = -1;
    w->to = w->from = -1;
}

static int spawn(session *w, rt_err *e)
{
    int req[2], resp[2];
    if (pipe(req) || pipe(resp))
        return rt_seterr(e, RT_EIO, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        return rt_seterr(e, RT_EIO, "fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(req[0], 0);
        dup2(resp[1], 1);
        close(req[0]); close(req[1]); close(resp[0]); close(resp[1]);
        execl(w->exe, w->exe, "worker", (char *)NULL);
        fprintf(stderr, "redtune: cannot start the worker %s: %s\n", w->exe, strerror(errno));
        _exit(127);
    }
    close(req[0]);
    close(resp[1]);
    w->pid = pid;
    w->to = req[1];
    w->from = resp[0];
    return RT_OK;
}

int session_call(session *w, uint32_t kind, const void *a, size_t alen, const void *b,
                 size_t blen, void **resp, size_t *rlen, int timeout_ms)
{
    *resp = NULL;
    if (w->pid <= 0 || proto_send(w->to, kind, a, alen, b, blen)) {
        kill_worker(w);
        return -1;
    }
    uint32_t k;
    int r = proto_recv(w->from, &k, resp, rlen, timeout_ms);
    if (r == 0 && k == kind)
        return 0;
    free(*resp);
    *resp = NULL;
    kill_worker(w);
    return r == -2 ? -2 : -1;
}

/* Send the user operator (w->operator_msg) to the worker. */
static int send_operator(session *w, rt_err *e)
{
    resp_head *oh;
    size_t len;
    int r = session_call(w, MSG_OPERATOR, w->operator_msg, w->operator_len, NULL, 0,
                         (void **)&oh, &len, 120000);
    if (r)
        return rt_seterr(e, RT_ECUDA, "the GPU worker %s taking the operator",
                         r == -2 ? "timed out" : "died");
    int rc = oh->code ? rt_seterr(e, oh->code, "%s", oh->msg) : RT_OK;
    free(oh);
    return rc;
}

int session_prepare(session *w, const prepare_req *q, const char *what, prepare_resp *out,
                    rt_err *e)
{
    prepare_resp *ph;
    size_t len;
    int r = session_call(w, MSG_PREPARE, q, sizeof *q, NULL, 0, (void **)&ph, &len, 600000);
    if (r)
        return rt_seterr(e, RT_ECUDA, "the GPU worker %s preparing %s",
                         r == -2 ? "timed out" : "died", what);
    int rc = len != sizeof *ph ? rt_seterr(e, RT_ECUDA, "the GPU worker sent a malformed answer")
           : ph->h.code ? rt_seterr(e, ph->h.code, "preparing %s: %s", what, ph->h.msg) : RT_OK;
    if (rc == RT_OK && out)
        *out = *ph;
    free(ph);
    return rc;
}

int session_start(session *w, rt_err *e)
{
    kill_worker(w);
    int rc = spawn(w, e);
    if (rc)
        return rc;
    hello_req q = {w->device};
    void *buf;
    size_t len;
    int r = session_call(w, MSG_HELLO, &q, sizeof q, NULL, 0, &buf, &len, 120000);
    if (r)
        return rt_seterr(e, RT_ECUDA, "the GPU worker %s while starting",
                         r == -2 ? "timed out" : "died");
    hello_resp *h = buf;
    if (len != sizeof *h) {
        free(buf);
        return rt_seterr(e, RT_ECUDA, "the GPU worker sent a malformed answer");
    }
    if (h->h.code) {
        rc = rt_seterr(e, h->h.code, "%s", h->h.msg);
        free(buf);
        kill_worker(w);
        return rc;
    }
    w->dev = h->dev;
    free(buf);
    if (w->operator_msg && (rc = send_operator(w, e)))
        return rc;
    if (w->has_prepared)
        rc = session_prepare(w, &w->prepared, "the data again", NULL, e);
    return rc;
}

int session_bandwidth(session *w, const char *arch, double *gbps, rt_err *e)
{
    *gbps = 0;
    uint64_t bytes = measure_bw_bytes(&w->dev);
    for (int i = 0; i < MEASURE_BW_SHAPES; i++) {
        nvrtc_output o;
        int rc = measure_bw_compile(i, arch, &o, e);
        if (rc)
            return rc;
        bw_req q = {bytes, 0, MEASURE_BW_REPS};
        bw_resp *r;
        size_t len;
        int call = session_call(w, MSG_BANDWIDTH, &q, sizeof q, o.cubin, o.size, (void **)&r, &len, 120000);
        nvrtc_output_free(&o);
        if (call) {
            rt_err tmp;
            session_start(w, &tmp);
            return rt_seterr(e, RT_ECUDA, "the bandwidth kernel %s", call == -2 ? "timed out" : "crashed the worker");
        }
        if (r->h.code) {
            rc = rt_seterr(e, r->h.code, "bandwidth kernel: %s", r->h.msg);
            free(r);
            return rc;
        }
        if (r->gbps > *gbps)
            *gbps = r->gbps;
        free(r);
    }
    return RT_OK;
}

int session_operator(session *w, const opfile *u, const char *arch, uint64_t seed, rt_err *e)
{
    nvrtc_output ref;
    int rc = cands_compile_reference(u, arch, &ref, e);
    if (rc)
        return rc;
    operator_req q;
    memset(&q, 0, sizeof q);
    q.type = u->op.type;
    q.has_sample = u->has_sample;
    q.tolerance = u->tolerance;
    snprintf(q.name, sizeof q.name, "%s", u->op.name);
    snprintf(q.file, sizeof q.file, "%s", u->op.file);
    q.cubin_size = ref.size;
    q.text_len = u->len;
    w->operator_len = sizeof q + ref.size + u->len;
    if (!(w->operator_msg = malloc(w->operator_len))) {
        nvrtc_output_free(&ref);
        return rt_seterr(e, RT_ENOMEM, "out of memory for the operator");
    }
    memcpy(w->operator_msg, &q, sizeof q);
    memcpy((char *)w->operator_msg + sizeof q, ref.cubin, ref.size);
    memcpy((char *)w->operator_msg + sizeof q + ref.size, u->text, u->len);
    nvrtc_output_free(&ref);
    if ((rc = send_operator(w, e)))
        return rc;
    prepare_req trial = {u->op.type, OP_USER, 4099, seed};
    return session_prepare(w, &trial, "the operator's trial on 4099 elements", NULL, e);
}

int session_devices(const char *exe, rt_device *devs, int max, int *count, rt_err *e)
{
    session w = SESSION_INIT(-1, exe);
    devices_resp *r = NULL;
    size_t len;
    *count = 0;
    int rc = spawn(&w, e);
    if (rc)
        return rc;
    int call = session_call(&w, MSG_DEVICES, NULL, 0, NULL, 0, (void **)&r, &len, 120000);
    if (call)
        rc = rt_seterr(e, RT_ECUDA, "the GPU worker %s listing the GPUs",
                       call == -2 ? "timed out" : "died");
    else if (len != sizeof *r || r->count < 0 || r->count > PROTO_MAX_DEVICES)
        rc = rt_seterr(e, RT_ECUDA, "the GPU worker sent a malformed answer");
    else if (r->h.code)
        rc = rt_seterr(e, r->h.code, "%s", r->h.msg);
    for (int i = 0; rc == RT_OK && i < r->count && i < max; i++)
        devs[(*count)++] = r->dev[i];
    free(r);
    session_close(&w);
    return rc;
}

void session_close(session *w)
{
    if (w->pid > 0) {
        proto_send(w->to, MSG_QUIT, NULL, 0, NULL, 0);
        close(w->to);
        w->to = -1;
        waitpid(w->pid, NULL, 0);
        w->pid = -1;
        close(w->from);
    }
    free(w->operator_msg);
    w->operator_msg = NULL;
}
