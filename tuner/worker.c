/*
 * worker.c - the process that touches the GPU. The tuner starts it as `redtune worker` and
 * talks to it over stdin/stdout (proto.h). A candidate that faults takes only the worker
 * down: it answers "fault" and exits, and the tuner starts a new one.
 *
 * Measuring (DESIGN.md): fresh seeded inputs of ragged sizes and the tuning size are checked
 * against the CPU reference before any timing (for a user-defined operator, whose combine is
 * CUDA source, against a reference computed on the GPU by ordered left folds, after a check
 * of its identity); then CUDA events around the whole launch
 * sequence, after warm-up, median of repetitions; the L2 is flushed before each repetition
 * (the flush also keeps the stream busy, so the events do not time the host's launch);
 * with 'hot' a short spin kernel keeps the stream busy instead. The method itself (GPU state,
 * flush, spin, repetitions, the read yardstick) is tuner/measure.c, shared with bench/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/driver.h"
#include "../runtime/optype.h"
#include "../runtime/plan.h"
#include "axisdata.h"
#include "data.h"
#include "measure.h"
#include "opfile.h"
#include "proto.h"
#include "segdata.h"

#define FRESH_MAX ((1u << 20) + (1u << 19) + 64)   /* elements of the fresh-input buffer */
#define REF_PARTS 65536                            /* partials of a user operator's reference */
#define IDENTITY_CHECKED (1u << 20)                /* elements the identity is checked on */

typedef struct worker {
    measure_gpu gpu;         /* context, stream, events, flush, result and temporary storage */
    /* the prepared case */
    int type, op;
    uint64_t n;
    CUdeviceptr data;
    size_t data_bytes;
    data_ref ref;
    /* the prepared segmented case (layout != flat) */
    int layout, profile, off64;
    seg_data sd;
    seg_ref *refs;
    CUdeviceptr seg, segout;
    size_t segout_bytes;
    void *host_out;          /* nseg + guard accumulators */
    /* the prepared axis case (layout axis): refs, segout and host_out hold its outputs */
    axis_shape ax;
    /* a user operator (MSG_OPERATOR) */
    operator_req uop;
    char *uop_text;
    CUmodule uop_mod;
    CUfunction ref_chunks, ref_fold, ref_identity;
    CUdeviceptr ref_parts, ref_out;
    size_t uacc, ures;       /* bytes of its accumulator and of one result */
    int ures_type;           /* the result's rt_type, -1 for a struct (compared bytewise) */
    unsigned char uref[CODEGEN_STRUCT_MAX];   /* its reference at the tuning size */
    /* scratch */
    CUdeviceptr fresh;
    void *fresh_host;
} worker;

static worker W;

static int reply(uint32_t kind, const void *msg, size_t len)
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
    reply(MSG_DEVICES, resp, sizeof *resp);
    free(resp);
}

/* Time fn(arg) with the shared method (measure.c) into m's median, min, max and reps. */
static int time_reps(measure_enqueue_fn fn, void *arg, int hot, int min_reps, int max_reps,
                     double budget_s, measure_resp *m, rt_err *e)
{
    measure_times t;
    int rc = measure_reps(&W.gpu, fn, arg, hot, min_reps, max_reps, budget_s, &t, e);
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
    reply(MSG_BANDWIDTH, &resp, sizeof resp);
    if (rc == RT_EFAULT)
        exit(3);
}

/* ---- a user-defined operator: its test data and its reference, computed on the GPU ---- */

/* Take the operator of MSG_OPERATOR: its file (for the sample function) and its reference
 * kernels. */
static int load_operator(const operator_req *q, const char *payload, rt_err *e)
{
    if (W.uop_mod) {
        cu.ModuleUnload(W.uop_mod);
        W.uop_mod = NULL;
    }
    free(W.uop_text);
    if (!(W.uop_text = malloc(q->text_len + 1)))
        return rt_seterr(e, RT_ENOMEM, "out of host memory for the operator file");
    memcpy(W.uop_text, payload + q->cubin_size, q->text_len);
    W.uop_text[q->text_len] = '\0';
    W.uop = *q;
    CUresult r;
    /* the accumulator's and the result's layouts, read from the file as the tuner did */
    opfile of;
    codegen_layout acc, res;
    const char *field;
    int line;
    char why[160];
    int rc = opfile_parse(W.uop_text, q->text_len, q->file, &of, e);
    if (rc)
        return rc;
    rc = codegen_user_fields(&of.op, &acc, &res, &field, &line, why, sizeof why);
    opfile_free(&of);
    if (rc)
        return rt_seterr(e, RT_EINVAL, "%s: field '%s': %s", q->file, field, why);
    W.uacc = acc.size;
    W.ures = res.size;
    W.ures_type = res.scalar;
    if ((r = cu.ModuleLoadData(&W.uop_mod, payload)) != CUDA_SUCCESS ||
        (r = cu.ModuleGetFunction(&W.ref_chunks, W.uop_mod, "rt_ref_chunks")) != CUDA_SUCCESS ||
        (r = cu.ModuleGetFunction(&W.ref_fold, W.uop_mod, "rt_ref_fold")) != CUDA_SUCCESS ||
        (r = cu.ModuleGetFunction(&W.ref_identity, W.uop_mod, "rt_ref_identity")) != CUDA_SUCCESS)
        return driver_fail(r, "loading the operator's reference kernels", e);
    if (!W.ref_parts && ((r = cu.MemAlloc(&W.ref_parts, (size_t)REF_PARTS * CODEGEN_STRUCT_MAX)) !=
                             CUDA_SUCCESS ||
                         (r = cu.MemAlloc(&W.ref_out, CODEGEN_STRUCT_MAX)) != CUDA_SUCCESS))
        return driver_fail(r, "allocating the reference buffers", e);
    return RT_OK;
}

/* Test data of m elements: the operator's, or the built-in generator's ('stress' >= 0: the
 * stress inputs of that kind, data.h). */
static int fill(void *host, uint64_t m, uint64_t seed, uint64_t plant, int stress, rt_err *e)
{
    if (W.op != OP_USER) {
        if (stress >= 0)
            data_fill_stress(host, W.type, W.op, m, seed, stress, W.gpu.host_threads);
        else
            data_fill(host, W.type, W.op, m, seed, plant, W.gpu.host_threads);
        return RT_OK;
    }
    if (W.uop.has_sample)
        return opfile_sample(W.uop_text, W.uop.text_len, W.uop.file, W.type, host, m, seed,
                             W.gpu.host_threads, e);
    data_fill(host, W.type, RT_SUM, m, seed, 0, W.gpu.host_threads);
    return RT_OK;
}

/* The reference of a user operator over in[0..m), m >= 1: every thread of rt_ref_chunks folds
 * a contiguous chunk left to right, then one thread folds the chunks in order. */
static int user_reference(CUdeviceptr in, uint64_t m, void *result, rt_err *e)
{
    unsigned long long n = m, chunk = (m + REF_PARTS - 1) / REF_PARTS;
    if (chunk < 64)
        chunk = 64;
    unsigned long long parts = (n + chunk - 1) / chunk;
    unsigned grid = (unsigned)((parts + 127) / 128);
    void *a1[] = {&in, &n, &chunk, &W.ref_parts};
    void *a2[] = {&W.ref_parts, &parts, &W.ref_out};
    CUresult r;
    if ((r = cu.LaunchKernel(W.ref_chunks, grid, 1, 1, 128, 1, 1, 0, W.gpu.stream, a1, NULL)) !=
            CUDA_SUCCESS ||
        (r = cu.LaunchKernel(W.ref_fold, 1, 1, 1, 1, 1, 1, 0, W.gpu.stream, a2, NULL)) !=
            CUDA_SUCCESS ||
        (r = cu.StreamSynchronize(W.gpu.stream)) != CUDA_SUCCESS ||
        (r = cu.MemcpyDtoH(result, W.ref_out, W.ures)) != CUDA_SUCCESS)
        return driver_fail(r, "computing the operator's reference", e);
    return RT_OK;
}

/* combine(identity, x) == x == combine(x, identity) for the first elements of in[0..m). */
static int check_identity(CUdeviceptr in, const void *host, uint64_t m, rt_err *e)
{
    unsigned long long n = m < IDENTITY_CHECKED ? m : IDENTITY_CHECKED, bad;
    unsigned grid = (unsigned)((n + 255) / 256);
    void *args[] = {&in, &n, &W.ref_out};
    CUresult r;
    if ((r = cu.MemsetD8(W.ref_out, 0xff, 8)) != CUDA_SUCCESS ||
        (r = cu.LaunchKernel(W.ref_identity, grid, 1, 1, 256, 1, 1, 0, W.gpu.stream, args, NULL)) !=
            CUDA_SUCCESS ||
        (r = cu.StreamSynchronize(W.gpu.stream)) != CUDA_SUCCESS ||
        (r = cu.MemcpyDtoH(&bad, W.ref_out, 8)) != CUDA_SUCCESS)
        return driver_fail(r, "checking the operator's identity", e);
    if (bad == ~0ULL)
        return RT_OK;
    char v[64];
    data_format((const char *)host + bad * optype_size(W.type), W.type, v, sizeof v);
    return rt_seterr(e, RT_EINVAL, "%s: operator '%s': the identity is not one: "
                     "combine(identity, x) or combine(x, identity) differs from x for x = %s "
                     "(element %llu of the test data)", W.uop.file, W.uop.name, v, bad);
}

/* ---- prepare: the tuning size's data, on the host for the reference and on the GPU ---- */

/* Guard accumulators after a segmented output: a kernel that writes there is wrong. */
#define GUARD 64
#define POISON 0xa5

static void seg_release(void)
{
    if (W.seg)
        cu.MemFree(W.seg);
    if (W.segout)
        cu.MemFree(W.segout);
    W.seg = W.segout = 0;
    W.segout_bytes = 0;
    free(W.refs);
    free(W.host_out);
    W.refs = NULL;
    W.host_out = NULL;
    segdata_free(&W.sd);
}

/* The keys or offsets of 'd' into device memory at *dst (allocated when *dst is 0). */
static int upload_seg(const seg_data *d, int layout, int off64, CUdeviceptr *dst, rt_err *e)
{
    size_t bytes;
    void *h = segdata_descriptor(d, layout, off64, &bytes);
    if (!h)
        return rt_seterr(e, RT_ENOMEM, "out of host memory for the segment descriptors");
    CUresult r = CUDA_SUCCESS;
    if (!*dst)
        r = cu.MemAlloc(dst, bytes);
    if (r == CUDA_SUCCESS)
        r = cu.MemcpyHtoD(*dst, h, bytes);
    free(h);
    return r == CUDA_SUCCESS ? RT_OK : driver_fail(r, "uploading the segment descriptors", e);
}

static int prepare_seg(const prepare_req *q, const void *host, prepare_resp *resp, rt_err *e)
{
    int rc = segdata_make(q->profile, q->n, q->seed ^ 0x5e65e65e65e6ULL, &W.sd);
    if (rc)
        return rt_seterr(e, rc, "out of host memory for the segmentation of %llu elements",
                         (unsigned long long)q->n);
    if (!q->off64 && q->layout == SEG_LAYOUT_OFFSETS && q->n >= (1ULL << 31))
        return rt_seterr(e, RT_EINVAL, "%llu elements need 64-bit offsets", (unsigned long long)q->n);
    if ((rc = segdata_reference(host, q->type, q->op, &W.sd, &W.refs, W.gpu.host_threads)))
        return rt_seterr(e, rc, "out of host memory for %llu segment references",
                         (unsigned long long)W.sd.nseg);
    size_t res = optype_res_size(q->op, q->type);   /* the plan finalizes every segment */
    W.segout_bytes = (W.sd.nseg + GUARD) * res;
    if (!(W.host_out = malloc(W.segout_bytes)))
        return rt_seterr(e, RT_ENOMEM, "out of host memory for %llu outputs", (unsigned long long)W.sd.nseg);
    CUresult r = cu.MemAlloc(&W.segout, W.segout_bytes);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "allocating the segment outputs", e);
    if ((rc = upload_seg(&W.sd, q->layout, q->off64, &W.seg, e)))
        return rc;
    W.layout = q->layout;
    W.profile = q->profile;
    W.off64 = q->off64;
    resp->nseg = W.sd.nseg;
    resp->mean = W.sd.mean;
    resp->spread = W.sd.spread;
    resp->bytes = segdata_bytes(&W.sd, q->layout, q->off64, optype_size(q->type), res);
    return RT_OK;
}

/* An axis case: the references of every output, the outputs (and guards) on the GPU. */
static int prepare_axis(const prepare_req *q, const void *host, prepare_resp *resp, rt_err *e)
{
    axis_shape sh = {q->outer, q->len, q->inner};
    unsigned long long n;
    if (!sh.outer || !sh.len || !sh.inner || __builtin_mul_overflow(sh.outer, sh.len, &n)
        || __builtin_mul_overflow(n, sh.inner, &n) || n != q->n)
        return rt_seterr(e, RT_EINVAL, "axis shape %llux%llux%llu does not make n = %llu",
                         (unsigned long long)q->outer, (unsigned long long)q->len,
                         (unsigned long long)q->inner, (unsigned long long)q->n);
    int rc = axisdata_reference(host, q->type, q->op, &sh, &W.refs, W.gpu.host_threads);
    if (rc)
        return rt_seterr(e, rc, "out of host memory for %llu output references",
                         axisdata_outputs(&sh));
    size_t res = optype_res_size(q->op, q->type);
    W.segout_bytes = (axisdata_outputs(&sh) + GUARD) * res;
    if (!(W.host_out = malloc(W.segout_bytes)))
        return rt_seterr(e, RT_ENOMEM, "out of host memory for %llu outputs",
                         axisdata_outputs(&sh));
    CUresult r = cu.MemAlloc(&W.segout, W.segout_bytes);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "allocating the axis outputs", e);
    W.layout = SEG_LAYOUT_AXIS;
    W.ax = sh;
    resp->nseg = axisdata_outputs(&sh);
    resp->mean = (double)sh.len;
    resp->spread = 0;
    resp->bytes = axisdata_bytes(&sh, optype_size(q->type), res);
    return RT_OK;
}

static void do_prepare(const prepare_req *q)
{
    prepare_resp resp;
    memset(&resp, 0, sizeof resp);
    rt_err e;
    rt_clearerr(&e);
    int rc = RT_OK;
    size_t bytes = q->n * optype_size(q->type);
    void *host = NULL;
    CUresult r;
    if (W.data) {
        cu.MemFree(W.data);
        W.data = 0;
        W.n = 0;
    }
    seg_release();
    W.layout = SEG_LAYOUT_FLAT;
    if ((r = cu.MemAlloc(&W.data, bytes ? bytes : 16)) != CUDA_SUCCESS) {
        W.data = 0;
        rc = driver_fail(r, "allocating the input", &e);
        goto done;
    }
    if (!(host = malloc(bytes))) {
        rc = rt_seterr(&e, RT_ENOMEM, "out of host memory for %llu elements", (unsigned long long)q->n);
        goto done;
    }
    W.type = q->type;
    W.op = q->op;
    if (W.op == OP_USER && !W.uop_mod) {
        rc = rt_seterr(&e, RT_EINVAL, "prepare of a user operator before its definition");
        goto done;
    }
    if (W.op == OP_USER && q->layout != SEG_LAYOUT_FLAT) {
        rc = rt_seterr(&e, RT_EINVAL, "segmented and axis layouts are tuned for the built-in "
                       "operators only");
        goto done;
    }
    if ((rc = fill(host, q->n, q->seed, q->seed % q->n, -1, &e)))
        goto done;
    if (q->layout == SEG_LAYOUT_AXIS) {
        if ((rc = prepare_axis(q, host, &resp, &e)) != RT_OK) {
            seg_release();
            goto done;
        }
    } else if (q->layout != SEG_LAYOUT_FLAT) {
        if ((rc = prepare_seg(q, host, &resp, &e)) != RT_OK) {
            seg_release();
            goto done;
        }
    } else {
        if (W.op != OP_USER)
            data_reference(host, q->type, q->op, q->n, &W.ref, W.gpu.host_threads);
        resp.bytes = (double)bytes;
    }
    if ((r = cu.MemcpyHtoD(W.data, host, bytes)) != CUDA_SUCCESS) {
        rc = driver_fail(r, "copying the input", &e);
        goto done;
    }
    if (W.op == OP_USER && ((rc = check_identity(W.data, host, q->n, &e)) ||
                            (rc = user_reference(W.data, q->n, W.uref, &e))))
        goto done;
    W.n = q->n;
    W.data_bytes = bytes;
done:
    free(host);
    resp.h.code = rc;
    snprintf(resp.h.msg, sizeof resp.h.msg, "%s", rc ? e.msg : "");
    reply(MSG_PREPARE, &resp, sizeof resp);
}

/* ---- measure one candidate ---- */

/* Bytes of one result (a user operator's: its result layout). */
static size_t result_size(void)
{
    return W.op == OP_USER ? W.ures : optype_res_size(W.op, W.type);
}

typedef struct run_arg {
    plan *p;
    CUdeviceptr in;
    uint64_t n;
} run_arg;

static int run_enqueue(void *arg, rt_err *e)
{
    run_arg *a = arg;
    return plan_launch(a->p, a->in, W.gpu.out, a->n, W.gpu.temp, W.gpu.stream, e);
}

/* Bytes of the accumulator (partials) and of one result written to the output. */
static size_t acc_bytes(void)
{
    return W.op == OP_USER ? W.uacc : optype_acc_size(W.op, W.type);
}

/* Run once on 'in' and fetch the result (poisoned first, so an unwritten output shows): the
 * result's bytes (optype_res_size, a user operator's result layout), not the accumulator's. */
static int run_once(plan *p, CUdeviceptr in, uint64_t n, void *result, rt_err *e)
{
    CUresult r;
    size_t res = result_size();
    if ((r = cu.MemsetD8(W.gpu.out, 0xa5, CODEGEN_STRUCT_MAX)) != CUDA_SUCCESS)
        return driver_fail(r, "poisoning the output", e);
    int rc = measure_ensure_temp(&W.gpu, plan_temp_bytes(p, n), e);
    if (rc)
        return rc;
    run_arg a = {p, in, n};
    if ((rc = run_enqueue(&a, e)) != RT_OK)
        return rc;
    if ((r = cu.StreamSynchronize(W.gpu.stream)) != CUDA_SUCCESS)
        return driver_fail(r, "running the kernel", e);
    if ((r = cu.MemcpyDtoH(result, W.gpu.out, res)) != CUDA_SUCCESS)
        return driver_fail(r, "reading the result", e);
    return RT_OK;
}

/* The check of a result against a reference (for a user operator: uref, its finalized
 * result; a scalar with data_check_user, a struct byte for byte). */
static int check(const void *got, const data_ref *ref, const void *uref, uint64_t m, char *why,
                 size_t len)
{
    if (W.op == OP_USER && W.ures_type >= 0)
        return data_check_user(got, uref, (rt_type)W.ures_type, W.uop.tolerance, W.uop.name, m,
                               why, len);
    if (W.op == OP_USER) {
        if (memcmp(got, uref, W.ures) == 0)
            return 1;
        char a[2 * CODEGEN_STRUCT_MAX + 1], b[2 * CODEGEN_STRUCT_MAX + 1];
        for (size_t i = 0; i < W.ures; i++) {
            snprintf(a + 2 * i, 3, "%02x", ((const unsigned char *)got)[i]);
            snprintf(b + 2 * i, 3, "%02x", ((const unsigned char *)uref)[i]);
        }
        snprintf(why, len, "%s over %llu %s: expected the bytes %s, got %s", W.uop.name,
                 (unsigned long long)m, rt_type_name(W.type), b, a);
        return 0;
    }
    return data_check(got, ref, W.type, W.op, m, why, len);
}

/* Check on fresh data of size m with the extreme planted at 'plant' ('stress' >= 0: the
 * stress inputs of that kind instead). */
static int check_fresh(plan *p, uint64_t m, uint64_t seed, uint64_t plant, int stress, char *why,
                       size_t len, int *ok, rt_err *e)
{
    size_t bytes = m * optype_size(W.type);
    int rc = fill(W.fresh_host, m, seed, plant, stress, e);
    if (rc)
        return rc;
    data_ref ref;
    if (W.op != OP_USER)
        data_reference(W.fresh_host, W.type, W.op, m, &ref, W.gpu.host_threads);
    CUresult r = cu.MemcpyHtoD(W.fresh, W.fresh_host, bytes);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "copying fresh input", e);
    unsigned char uref[CODEGEN_STRUCT_MAX];
    if (W.op == OP_USER && (rc = user_reference(W.fresh, m, uref, e)))
        return rc;
    unsigned char got[CODEGEN_STRUCT_MAX];
    if ((rc = run_once(p, W.fresh, m, got, e)))
        return rc;
    *ok = check(got, &ref, uref, m, why, len);
    if (!*ok && stress >= 0) {
        size_t used = strlen(why);
        snprintf(why + used, len - used, " (%s stress input)", data_stress_name(stress));
    }
    return RT_OK;
}

/* The stress kind for a candidate's extra check, from its seed; -1 where there is none (a
 * user operator, integer elements: data.h). */
static int stress_kind(uint64_t seed)
{
    if (W.op == OP_USER || !optype_is_float(W.type))
        return -1;
    return (int)(data_mix(seed) % DATA_STRESS_KINDS);
}

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 17;
}

/* ---- measure one segmented candidate ---- */

typedef struct seg_arg {
    plan *p;
    CUdeviceptr in, seg, out;
    const seg_data *d;
} seg_arg;

static int seg_enqueue(void *arg, rt_err *e)
{
    seg_arg *a = arg;
    return plan_seg_launch(a->p, a->in, a->seg, a->d->n, a->d->nseg, a->out, W.gpu.temp, W.gpu.stream, e);
}

/* Run once with the outputs (and GUARD accumulators after them) poisoned, and fetch all of
 * them into 'host'; *stray = 1 when a guard accumulator was written. */
static int seg_run_once(seg_arg *a, void *host, int *stray, rt_err *e)
{
    size_t res = result_size(), bytes = (a->d->nseg + GUARD) * res;
    CUresult r;
    if ((r = cu.MemsetD8(a->out, POISON, bytes)) != CUDA_SUCCESS)
        return driver_fail(r, "poisoning the outputs", e);
    int rc = measure_ensure_temp(&W.gpu, plan_seg_temp_bytes(a->p, a->d->n, a->d->nseg), e);
    if (rc || (rc = seg_enqueue(a, e)))
        return rc;
    if ((r = cu.StreamSynchronize(W.gpu.stream)) != CUDA_SUCCESS)
        return driver_fail(r, "running the kernel", e);
    if ((r = cu.MemcpyDtoH(host, a->out, bytes)) != CUDA_SUCCESS)
        return driver_fail(r, "reading the outputs", e);
    *stray = 0;
    for (size_t i = a->d->nseg * res; i < bytes; i++)
        if (((unsigned char *)host)[i] != POISON)
            *stray = 1;
    return RT_OK;
}

/* Check on a fresh segmentation of m elements with 'profile' ('stress' >= 0: the stress
 * inputs of that kind). */
static int seg_check_fresh(plan *p, int profile, uint64_t m, uint64_t seed, int stress, char *why,
                           size_t len, int *ok, rt_err *e)
{
    seg_data d;
    seg_ref *refs = NULL;
    void *host = NULL;
    CUdeviceptr seg = 0, out = 0;
    int rc = segdata_make(profile, m, seed, &d);
    if (rc)
        return rt_seterr(e, rc, "out of host memory for a segmentation");
    size_t res = result_size();
    if (stress >= 0)
        data_fill_stress(W.fresh_host, W.type, W.op, m, seed, stress, W.gpu.host_threads);
    else
        data_fill(W.fresh_host, W.type, W.op, m, seed, m ? seed % m : 0, W.gpu.host_threads);
    CUresult r;
    if ((rc = segdata_reference(W.fresh_host, W.type, W.op, &d, &refs, W.gpu.host_threads)))
        rc = rt_seterr(e, rc, "out of host memory for the references");
    else if (!(host = malloc((d.nseg + GUARD) * res)))
        rc = rt_seterr(e, RT_ENOMEM, "out of host memory for the outputs");
    else if ((r = cu.MemAlloc(&out, (d.nseg + GUARD) * res)) != CUDA_SUCCESS)
        rc = driver_fail(r, "allocating fresh outputs", e);
    else if (m && (r = cu.MemcpyHtoD(W.fresh, W.fresh_host, m * optype_size(W.type))) != CUDA_SUCCESS)
        rc = driver_fail(r, "copying fresh input", e);
    else
        rc = upload_seg(&d, W.layout, W.off64, &seg, e);
    if (rc == RT_OK) {
        seg_arg a = {p, W.fresh, seg, out, &d};
        int stray = 0;
        if ((rc = seg_run_once(&a, host, &stray, e)) == RT_OK) {
            char inner[900] = "";
            *ok = !stray && segdata_check(host, refs, W.type, W.op, &d, inner, sizeof inner);
            if (!*ok)
                snprintf(why, len, "%s, %llu elements in %llu segments%s%s: %s",
                         segdata_profile_name(profile), (unsigned long long)m, d.nseg,
                         stress >= 0 ? ", stress input " : "",
                         stress >= 0 ? data_stress_name(stress) : "",
                         stray ? "wrote past the last output" : inner);
        }
    }
    if (seg)
        cu.MemFree(seg);
    if (out)
        cu.MemFree(out);
    free(host);
    free(refs);
    segdata_free(&d);
    return rc;
}

static void do_measure_seg(const measure_req *q, plan *p, measure_resp *resp, char *why,
                           size_t wlen, rt_err *e, int *rcp)
{
    int rc, ok = 1;
    size_t res = result_size();
    resp->launches = plan_seg_launch_count(p, W.sd.n, W.sd.nseg);
    uint64_t s = q->seed, tile = p->tile;
    uint64_t m1 = 1 + rnd(&s) % (4 * tile + 3);
    if (m1 > FRESH_MAX / 2)
        m1 = FRESH_MAX / 2 - rnd(&s) % 1000;
    uint64_t m2 = (1u << 20) + 1 + rnd(&s) % (1u << 19);
    /* Empty segments at both ends and in runs; the tuning profile at a ragged 1.5M; one
     * segment over a few tiles; no elements at all (every segment the identity). */
    if ((rc = seg_check_fresh(p, 5, m1, rnd(&s), -1, why, wlen, &ok, e)) || !ok)
        goto done;
    if ((rc = seg_check_fresh(p, W.profile, m2, rnd(&s), -1, why, wlen, &ok, e)) || !ok)
        goto done;
    if ((rc = seg_check_fresh(p, 0, 3 * tile + 1 + rnd(&s) % tile, rnd(&s), -1, why, wlen, &ok, e)) || !ok)
        goto done;
    if ((rc = seg_check_fresh(p, 5, 0, rnd(&s), -1, why, wlen, &ok, e)) || !ok)
        goto done;
    /* Float elements: a stress input (data.h) over one segment of a few tiles. */
    int stress = stress_kind(q->seed);
    uint64_t m3 = 1 + rnd(&s) % (4 * tile + 3);
    if (m3 > FRESH_MAX / 2)
        m3 = FRESH_MAX / 2;
    if (stress >= 0 && ((rc = seg_check_fresh(p, 0, m3, rnd(&s), stress, why, wlen, &ok, e)) || !ok))
        goto done;
    seg_arg a = {p, W.data, W.seg, W.segout, &W.sd};
    int stray = 0;
    if ((rc = seg_run_once(&a, W.host_out, &stray, e)))
        goto done;
    char inner[900] = "";
    if (stray || !segdata_check(W.host_out, W.refs, W.type, W.op, &W.sd, inner, sizeof inner)) {
        snprintf(why, wlen, "%s, %llu elements in %llu segments: %s", segdata_profile_name(W.profile),
                 (unsigned long long)W.sd.n, (unsigned long long)W.sd.nseg,
                 stray ? "wrote past the last output" : inner);
        goto done;
    }
    if ((rc = time_reps(seg_enqueue, &a, q->hot, q->min_reps, q->max_reps, q->budget_s, resp, e)))
        goto done;
    /* Same input, every repetition: compare every output of the last run with the first. */
    void *last = malloc(W.sd.nseg * res + 1);
    CUresult r;
    if (!last) {
        rc = rt_seterr(e, RT_ENOMEM, "out of host memory");
        goto done;
    }
    if ((r = cu.MemcpyDtoH(last, W.segout, W.sd.nseg * res)) != CUDA_SUCCESS)
        rc = driver_fail(r, "reading the outputs", e);
    else
        resp->deterministic = memcmp(last, W.host_out, W.sd.nseg * res) == 0;
    free(last);
done:
    *rcp = rc;
}

/* ---- measure one axis candidate ---- */

/* The ragged shapes every axis candidate is checked on before it is timed (docs/axis.md):
 * tails of tiles and vectors, an odd inner, an empty axis, a long row. */
static const axis_shape ragged[] = {
    {3, 1, 17}, {2, 4099, 3}, {5, 333, 1}, {1, 1000, 17}, {4, 0, 5}, {1, 70001, 1}, {7, 513, 33},
};
#define NRAGGED (sizeof ragged / sizeof ragged[0])

typedef struct axis_arg {
    plan *p;
    CUdeviceptr in, out;
    axis_shape sh;
} axis_arg;

static int axis_enqueue(void *arg, rt_err *e)
{
    axis_arg *a = arg;
    return plan_axis_launch(a->p, a->in, a->out, a->sh.outer, a->sh.len, a->sh.inner, W.gpu.temp,
                            W.gpu.stream, e);
}

/* Run once with the outputs (and GUARD results after them) poisoned and fetch all of them
 * into 'host'; *stray = 1 when a guard was written. The temporary storage was made large
 * enough and its counters zeroed before (the kernel leaves them zero). */
static int axis_run_once(axis_arg *a, void *host, int *stray, rt_err *e)
{
    size_t res = result_size(), nout = axisdata_outputs(&a->sh), bytes = (nout + GUARD) * res;
    CUresult r;
    if ((r = cu.MemsetD8(a->out, POISON, bytes)) != CUDA_SUCCESS)
        return driver_fail(r, "poisoning the outputs", e);
    int rc = axis_enqueue(a, e);
    if (rc)
        return rc;
    if ((r = cu.StreamSynchronize(W.gpu.stream)) != CUDA_SUCCESS)
        return driver_fail(r, "running the kernel", e);
    if ((r = cu.MemcpyDtoH(host, a->out, bytes)) != CUDA_SUCCESS)
        return driver_fail(r, "reading the outputs", e);
    *stray = 0;
    for (size_t i = nout * res; i < bytes; i++)
        if (((unsigned char *)host)[i] != POISON)
            *stray = 1;
    return RT_OK;
}

/* Check on fresh data of shape 'sh' ('stress' >= 0: the stress inputs of that kind). */
static int axis_check_fresh(plan *p, const axis_shape *sh, uint64_t seed, int stress, char *why,
                            size_t len, int *ok, rt_err *e)
{
    seg_ref *refs = NULL;
    void *host = NULL;
    CUdeviceptr out = 0;
    CUresult r;
    int rc = RT_OK;
    uint64_t m = axisdata_n(sh), nout = axisdata_outputs(sh);
    size_t res = result_size();
    if (stress >= 0)
        data_fill_stress(W.fresh_host, W.type, W.op, m, seed, stress, W.gpu.host_threads);
    else
        data_fill(W.fresh_host, W.type, W.op, m, seed, m ? seed % m : 0, W.gpu.host_threads);
    if ((rc = axisdata_reference(W.fresh_host, W.type, W.op, sh, &refs, W.gpu.host_threads)))
        rc = rt_seterr(e, rc, "out of host memory for the references");
    else if (!(host = malloc((nout + GUARD) * res)))
        rc = rt_seterr(e, RT_ENOMEM, "out of host memory for the outputs");
    else if ((r = cu.MemAlloc(&out, (nout + GUARD) * res)) != CUDA_SUCCESS)
        rc = driver_fail(r, "allocating fresh outputs", e);
    else if (m && (r = cu.MemcpyHtoD(W.fresh, W.fresh_host, m * optype_size(W.type))) != CUDA_SUCCESS)
        rc = driver_fail(r, "copying fresh input", e);
    if (rc == RT_OK) {
        axis_arg a = {p, W.fresh, out, *sh};
        int stray = 0;
        if ((rc = axis_run_once(&a, host, &stray, e)) == RT_OK) {
            char inner[900] = "";
            *ok = !stray && axisdata_check(host, refs, W.type, W.op, sh, inner, sizeof inner);
            if (!*ok)
                snprintf(why, len, "shape %llux%llux%llu%s%s: %s", sh->outer, sh->len, sh->inner,
                         stress >= 0 ? ", stress input " : "",
                         stress >= 0 ? data_stress_name(stress) : "",
                         stray ? "wrote past the last output" : inner);
        }
    }
    if (out)
        cu.MemFree(out);
    free(host);
    free(refs);
    return rc;
}

/* The counters of a launch of shape 'sh' are zero again (the kernel's contract). */
static int axis_counters_zero(const plan *p, const axis_shape *sh, int *zero, rt_err *e)
{
    size_t bytes = plan_axis_counter_bytes(p, sh->outer, sh->len, sh->inner);
    *zero = 1;
    if (!bytes)
        return RT_OK;
    unsigned char *h = malloc(bytes);
    if (!h)
        return rt_seterr(e, RT_ENOMEM, "out of host memory");
    CUresult r = cu.MemcpyDtoH(h, W.gpu.temp, bytes);
    int rc = r == CUDA_SUCCESS ? RT_OK : driver_fail(r, "reading the counters", e);
    for (size_t i = 0; rc == RT_OK && i < bytes; i++)
        if (h[i])
            *zero = 0;
    free(h);
    return rc;
}

static void do_measure_axis(const measure_req *q, plan *p, measure_resp *resp, char *why,
                            size_t wlen, rt_err *e, int *rcp)
{
    int rc, ok = 1, zero = 1;
    size_t res = result_size(), nout = axisdata_outputs(&W.ax);
    CUresult r;
    resp->launches = 1;
    /* Temporary storage for the largest of the shapes, its counters zeroed once: a correct
     * kernel leaves them zero, which is checked after the tuning shape's runs. */
    size_t temp = plan_axis_temp_bytes(p, W.ax.outer, W.ax.len, W.ax.inner), counters = 0;
    for (size_t k = 0; k < NRAGGED; k++) {
        const axis_shape *sh = &ragged[k];
        size_t t = plan_axis_temp_bytes(p, sh->outer, sh->len, sh->inner);
        size_t c = plan_axis_counter_bytes(p, sh->outer, sh->len, sh->inner);
        temp = t > temp ? t : temp;
        counters = c > counters ? c : counters;
    }
    size_t c0 = plan_axis_counter_bytes(p, W.ax.outer, W.ax.len, W.ax.inner);
    counters = c0 > counters ? c0 : counters;
    if ((rc = measure_ensure_temp(&W.gpu, temp, e)))
        goto done;
    if (counters && (r = cu.MemsetD8(W.gpu.temp, 0, counters)) != CUDA_SUCCESS) {
        rc = driver_fail(r, "clearing the counters", e);
        goto done;
    }
    uint64_t s = q->seed;
    for (size_t k = 0; k < NRAGGED; k++)
        if ((rc = axis_check_fresh(p, &ragged[k], rnd(&s), -1, why, wlen, &ok, e)) || !ok)
            goto done;
    /* Float elements: a stress input (data.h) on the last ragged shape. */
    int stress = stress_kind(q->seed);
    if (stress >= 0 && ((rc = axis_check_fresh(p, &ragged[NRAGGED - 1], rnd(&s), stress, why, wlen,
                                               &ok, e)) || !ok))
        goto done;
    axis_arg a = {p, W.data, W.segout, W.ax};
    int stray = 0;
    if ((rc = axis_run_once(&a, W.host_out, &stray, e)))
        goto done;
    char inner[900] = "";
    if (stray || !axisdata_check(W.host_out, W.refs, W.type, W.op, &W.ax, inner, sizeof inner)) {
        snprintf(why, wlen, "shape %llux%llux%llu: %s", W.ax.outer, W.ax.len, W.ax.inner,
                 stray ? "wrote past the last output" : inner);
        goto done;
    }
    if ((rc = axis_counters_zero(p, &W.ax, &zero, e)))
        goto done;
    if (!zero) {
        snprintf(why, wlen, "shape %llux%llux%llu: the kernel left its split counters nonzero",
                 W.ax.outer, W.ax.len, W.ax.inner);
        goto done;
    }
    if ((rc = time_reps(axis_enqueue, &a, q->hot, q->min_reps, q->max_reps, q->budget_s, resp, e)))
        goto done;
    /* Same input, every repetition: compare every output of the last run with the first. */
    void *last = malloc(nout * res + 1);
    if (!last) {
        rc = rt_seterr(e, RT_ENOMEM, "out of host memory");
        goto done;
    }
    if ((r = cu.MemcpyDtoH(last, W.segout, nout * res)) != CUDA_SUCCESS)
        rc = driver_fail(r, "reading the outputs", e);
    else
        resp->deterministic = memcmp(last, W.host_out, nout * res) == 0;
    free(last);
    if (rc == RT_OK && (rc = axis_counters_zero(p, &W.ax, &zero, e)) == RT_OK && !zero)
        snprintf(why, wlen, "shape %llux%llux%llu: the kernel left its split counters nonzero "
                 "after the timed runs", W.ax.outer, W.ax.len, W.ax.inner);
done:
    *rcp = rc;
}

static void do_measure(const measure_req *q, const void *cubin)
{
    measure_resp resp;
    memset(&resp, 0, sizeof resp);
    resp.deterministic = -1;
    resp.registers = -1;
    rt_err e;
    rt_clearerr(&e);
    plan p;
    int loaded = 0, rc;
    char why[1024] = "";
    if (!W.n) {
        rc = rt_seterr(&e, RT_EINVAL, "measure before prepare");
        goto done;
    }
    rc = plan_load(&p, cubin, (rt_plan_kind)q->plan, acc_bytes(), W.gpu.dev.sm_count, &e);
    if (rc)
        goto done;
    loaded = 1;
    CUfunction f = p.kind == PLAN_MULTIPASS ? p.first : p.one;
    cu.FuncGetAttribute(&resp.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    int want_kind = W.layout == SEG_LAYOUT_AXIS ? PLAN_AXIS
                  : W.layout != SEG_LAYOUT_FLAT ? PLAN_SEGMENTED : -1;
    if (want_kind >= 0 ? (int)p.kind != want_kind
                       : p.kind == PLAN_SEGMENTED || p.kind == PLAN_AXIS) {
        rc = rt_seterr(&e, RT_EINVAL, "a %s plan cannot run the %s layout",
                       family_plan_name(p.kind), segdata_layout_name(W.layout));
        goto done;
    }
    if (p.kind == PLAN_AXIS) {
        do_measure_axis(q, &p, &resp, why, sizeof why, &e, &rc);
        goto done;
    }
    if (p.kind == PLAN_SEGMENTED) {
        do_measure_seg(q, &p, &resp, why, sizeof why, &e, &rc);
        goto done;
    }
    resp.launches = plan_launch_count(&p, W.n);
    CUresult r;
    if ((r = cu.MemsetD8(W.gpu.temp, 0, 256)) != CUDA_SUCCESS) {   /* the one-launch counter */
        rc = driver_fail(r, "clearing the counter", &e);
        goto done;
    }
    /* Verify: a ragged size around a few tiles with the extreme in the tail, a ragged
     * ~1.5M with it anywhere, then the tuning size itself. */
    uint64_t s = q->seed;
    uint64_t tile = p.tile;
    uint64_t m1 = 1 + rnd(&s) % (4 * tile + 3);
    if (m1 > FRESH_MAX)
        m1 = FRESH_MAX - 1 - rnd(&s) % 1000;
    uint64_t m2 = (1u << 20) + 1 + rnd(&s) % (1u << 19);
    int ok = 1;
    if ((rc = check_fresh(&p, m1, rnd(&s), m1 - 1, -1, why, sizeof why, &ok, &e)) || !ok)
        goto done;
    if ((rc = check_fresh(&p, m2, rnd(&s), rnd(&s), -1, why, sizeof why, &ok, &e)) || !ok)
        goto done;
    /* Float elements: a stress input (data.h) of a few tiles, its kind from the seed. */
    int stress = stress_kind(q->seed);
    uint64_t m3 = 1 + rnd(&s) % (4 * tile + 3);
    if (m3 > FRESH_MAX)
        m3 = FRESH_MAX;
    if (stress >= 0 && ((rc = check_fresh(&p, m3, rnd(&s), 0, stress, why, sizeof why, &ok, &e)) || !ok))
        goto done;
    unsigned char first[CODEGEN_STRUCT_MAX], last[CODEGEN_STRUCT_MAX];
    if ((rc = run_once(&p, W.data, W.n, first, &e)) != RT_OK)
        goto done;
    if (!(ok = check(first, &W.ref, W.uref, W.n, why, sizeof why)))
        goto done;
    run_arg a = {&p, W.data, W.n};
    if ((rc = time_reps(run_enqueue, &a, q->hot, q->min_reps, q->max_reps, q->budget_s, &resp, &e)))
        goto done;
    /* Same input, every repetition: the result must not move if the family is deterministic. */
    if ((r = cu.MemcpyDtoH(last, W.gpu.out, result_size())) != CUDA_SUCCESS) {
        rc = driver_fail(r, "reading the result", &e);
        goto done;
    }
    resp.deterministic = memcmp(first, last, result_size()) == 0;
done:
    if (loaded)
        plan_unload(&p);
    if (rc == RT_EFAULT)
        snprintf(resp.status, sizeof resp.status, "fault");
    else if (rc != RT_OK)
        snprintf(resp.status, sizeof resp.status, "error");
    else if (why[0])
        snprintf(resp.status, sizeof resp.status, "wrong");
    else
        snprintf(resp.status, sizeof resp.status, "ok");
    resp.h.code = RT_OK;
    snprintf(resp.h.msg, sizeof resp.h.msg, "%s", rc ? e.msg : why);
    reply(MSG_MEASURE, &resp, sizeof resp);
    if (rc == RT_EFAULT)
        exit(3);   /* the context is lost; the tuner starts a new worker */
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
            reply(MSG_HELLO, &resp, sizeof resp);
        } else if (kind == MSG_DEVICES && len == 0) {
            do_devices();
        } else if (kind == MSG_BANDWIDTH && len > sizeof(bw_req)) {
            do_bandwidth(buf, (char *)buf + sizeof(bw_req));
        } else if (kind == MSG_PREPARE && len == sizeof(prepare_req)) {
            do_prepare(buf);
        } else if (kind == MSG_OPERATOR && len >= sizeof(operator_req) &&
                   len == sizeof(operator_req) + ((operator_req *)buf)->cubin_size +
                              ((operator_req *)buf)->text_len) {
            rt_err e;
            rt_clearerr(&e);
            resp_head resp = {load_operator(buf, (char *)buf + sizeof(operator_req), &e), ""};
            if (resp.code)
                snprintf(resp.msg, sizeof resp.msg, "%s", e.msg);
            reply(MSG_OPERATOR, &resp, sizeof resp);
        } else if (kind == MSG_MEASURE && len > sizeof(measure_req)) {
            do_measure(buf, (char *)buf + sizeof(measure_req));
        } else {
            free(buf);
            return kind == MSG_QUIT ? 0 : 2;
        }
        free(buf);
    }
}
