/*
 * worker_prepare.c - the case the worker measures candidates on (MSG_PREPARE): the tuning
 * size's data, made on the host for the reference and copied to the GPU; for a segmented
 * layout its segmentation and per-segment references, for an axis layout the reference of
 * every output. A user-defined operator (MSG_OPERATOR) brings its test data (the file's sample
 * function) and its reference, computed on the GPU by ordered left folds after a check of
 * its identity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/driver.h"
#include "../runtime/optype.h"
#include "axisdata.h"
#include "data.h"
#include "opfile.h"
#include "proto.h"
#include "segdata.h"
#include "worker_int.h"

#define REF_PARTS 65536                            /* partials of a user operator's reference */
#define IDENTITY_CHECKED (1u << 20)                /* elements the identity is checked on */

/* ---- a user-defined operator: its test data and its reference, computed on the GPU ---- */

/* Take the operator of MSG_OPERATOR: its file (for the sample function) and its reference
 * kernels. */
int worker_load_operator(const operator_req *q, const char *payload, rt_err *e)
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
int worker_fill(void *host, uint64_t m, uint64_t seed, uint64_t plant, int stress, rt_err *e)
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
int worker_user_reference(CUdeviceptr in, uint64_t m, void *result, rt_err *e)
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
int worker_upload_seg(const seg_data *d, int layout, int off64, CUdeviceptr *dst, rt_err *e)
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
    if ((rc = worker_upload_seg(&W.sd, q->layout, q->off64, &W.seg, e)))
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

void worker_prepare(const prepare_req *q)
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
    if ((rc = worker_fill(host, q->n, q->seed, q->seed % q->n, -1, &e)))
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
                            (rc = worker_user_reference(W.data, q->n, W.uref, &e))))
        goto done;
    W.n = q->n;
    W.data_bytes = bytes;
done:
    free(host);
    resp.h.code = rc;
    snprintf(resp.h.msg, sizeof resp.h.msg, "%s", rc ? e.msg : "");
    worker_reply(MSG_PREPARE, &resp, sizeof resp);
}
