/*
 * worker.c - the process that touches the GPU. The tuner starts it as `redtune worker` and
 * talks to it over stdin/stdout (proto.h). A candidate that faults takes only the worker
 * down: it answers "fault" and exits, and the tuner starts a new one.
 *
 * This file holds the process: its state, the GPU started (MSG_HELLO), the GPUs listed
 * (MSG_DEVICES), the read yardstick (MSG_BANDWIDTH) and the loop over the tuner's requests.
 * The case's data and references (MSG_OPERATOR, MSG_PREPARE) are worker_prepare.c's; a
 * candidate's checks and timing (MSG_MEASURE) worker_measure.c's, with its segmented and axis
 * layouts in worker_seg.c and worker_axis.c; worker_int.h holds what they share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/driver.h"
#include "measure.h"
#include "proto.h"
#include "report.h"
#include "worker_int.h"

worker worker_state;

int worker_reply(uint32_t kind, const void *msg, size_t len)
{
    return proto_send(1, kind, msg, len, NULL, 0);
}

static int start_device(int ordinal, rt_err *e)
{
    int rc = driver_device_query(ordinal, &W.gpu.dev, e);
    if (rc || (rc = measure_start(&W.gpu, e)))
        return rc;
    CUresult r;
    if ((r = cu.MemAlloc(&W.fresh, (size_t)FRESH_MAX * 8)) != CUDA_SUCCESS)
        return driver_fail(r, "allocating the fresh-input buffer", e);
    W.fresh_host = malloc((size_t)FRESH_MAX * 8);
    if (!W.fresh_host)
        return rt_seterr(e, RT_ENOMEM, "out of host memory for the fresh inputs");
    return RT_OK;
}

/* Every GPU's record, for the tuner's `--device all | LIST`. Queried without a context, so
 * asking costs no GPU memory and disturbs no other process on the GPUs. */
static void do_devices(void)
{
    devices_resp *resp = calloc(1, sizeof *resp);
    if (!resp)
        return;
    rt_err e;
    rt_clearerr(&e);
    int count = 0, rc = driver_device_count(&count, &e);
    if (rc == RT_OK && count > PROTO_MAX_DEVICES)
        count = PROTO_MAX_DEVICES;
    for (int i = 0; rc == RT_OK && i < count; i++)
        rc = driver_device_query(i, &resp->dev[i], &e);
    resp->h.code = rc;
    resp->count = rc ? 0 : count;
    snprintf(resp->h.msg, sizeof resp->h.msg, "%s", rc ? e.msg : "");
    worker_reply(MSG_DEVICES, resp, sizeof *resp);
    free(resp);
}

/* Time fn(arg) with the shared method (measure.c) into m's median, min, max and reps. */
int worker_time_reps(measure_enqueue_fn fn, void *arg, int hot, int min_reps, int max_reps,
                     double budget_s, measure_resp *m, rt_err *e)
{
    measure_times t;
    double t0 = report_now();
    int rc = measure_reps(&W.gpu, fn, arg, hot, min_reps, max_reps, budget_s, &t, e);
    m->time_s = report_now() - t0;
    if (rc == RT_OK) {
        m->reps = t.reps;
        m->min_us = t.min_us;
        m->max_us = t.max_us;
        m->median_us = t.median_us;
    }
    return rc;
}

/* ---- bandwidth ---- */

static void do_bandwidth(const bw_req *q, const void *cubin)
{
    bw_resp resp;
    memset(&resp, 0, sizeof resp);
    rt_err e;
    rt_clearerr(&e);
    int rc;
    CUresult r;
    CUdeviceptr buf = 0;
    unsigned long long n16 = q->bytes / 16;
    measure_bw k;
    if ((rc = measure_bw_load(&W.gpu, cubin, n16, &k, &e)))
        goto done;
    if ((r = cu.MemAlloc(&buf, n16 * 16)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(buf, 0x3c, n16 * 16)) != CUDA_SUCCESS) {
        rc = driver_fail(r, "allocating the bandwidth buffer", &e);
        goto done;
    }
    rc = measure_bw_time(&W.gpu, &k, buf, n16, q->hot, q->reps, &resp.median_us, &resp.gbps, &e);
    if (rc == RT_OK)
        resp.bytes = n16 * 16;
done:
    if (buf)
        cu.MemFree(buf);
    measure_bw_unload(&k);
    resp.h.code = rc;
    snprintf(resp.h.msg, sizeof resp.h.msg, "%s", rc ? e.msg : "");
    worker_reply(MSG_BANDWIDTH, &resp, sizeof resp);
    if (rc == RT_EFAULT)
        exit(3);
}

int worker_main(void)
{
    for (;;) {
        uint32_t kind;
        void *buf;
        size_t len;
        if (proto_recv(0, &kind, &buf, &len, -1) != 0)
            return 0;   /* the tuner went away */
        if (kind == MSG_HELLO && len == sizeof(hello_req)) {
            hello_resp resp;
            memset(&resp, 0, sizeof resp);
            rt_err e;
            rt_clearerr(&e);
            resp.h.code = start_device(((hello_req *)buf)->device, &e);
            snprintf(resp.h.msg, sizeof resp.h.msg, "%s", resp.h.code ? e.msg : "");
            resp.dev = W.gpu.dev;
            worker_reply(MSG_HELLO, &resp, sizeof resp);
        } else if (kind == MSG_DEVICES && len == 0) {
            do_devices();
        } else if (kind == MSG_BANDWIDTH && len > sizeof(bw_req)) {
            do_bandwidth(buf, (char *)buf + sizeof(bw_req));
        } else if (kind == MSG_PREPARE && len == sizeof(prepare_req)) {
            worker_prepare(buf);
        } else if (kind == MSG_OPERATOR && len >= sizeof(operator_req) &&
                   len == sizeof(operator_req) + ((operator_req *)buf)->cubin_size +
                              ((operator_req *)buf)->text_len) {
            rt_err e;
            rt_clearerr(&e);
            resp_head resp = {worker_load_operator(buf, (char *)buf + sizeof(operator_req), &e),
                              ""};
            if (resp.code)
                snprintf(resp.msg, sizeof resp.msg, "%s", e.msg);
            worker_reply(MSG_OPERATOR, &resp, sizeof resp);
        } else if (kind == MSG_MEASURE && len > sizeof(measure_req)) {
            worker_measure(buf, (char *)buf + sizeof(measure_req));
        } else {
            free(buf);
            return kind == MSG_QUIT ? 0 : 2;
        }
        free(buf);
    }
}
