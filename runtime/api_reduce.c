/*
 * api_reduce.c - rt_reduce and rt_reduce_temp: the arguments checked, the decision for n
 * (api_choose.c), the temporary storage (the stream's block, api_temp.c, or the caller's),
 * and the launches on the caller's stream; n == 0 writes the empty input's result by memsets.
 * Inside a CUDA graph capture nothing is loaded or allocated: the call is refused instead.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "api_int.h"
#include "driver.h"
#include "optype.h"
#include "plan.h"

/* ---------------------------------------------------------------- launching */

static int launch(const kernel *k, const void *d_in, void *d_out, unsigned long long n,
                  CUdeviceptr temp, CUstream s, rt_err *e)
{
    CUdeviceptr base = k->p.kind == PLAN_ONELAUNCH ? temp : temp + COUNTER_BYTES;
    return plan_launch(&k->p, (CUdeviceptr)(uintptr_t)d_in, (CUdeviceptr)(uintptr_t)d_out, n,
                       base, s, e);
}

/* n == 0: the empty input's result (optype_empty_result; a user operator's identity), by
 * memsets on the stream (no host buffer to outlive the call, no kernel): runs of 32-, 16- or
 * 8-bit words (d_out is aligned to the result's scalar). */
static int write_empty(const rt_ctx *ctx, rt_op op, rt_type type, void *d_out, CUstream s,
                       rt_err *e)
{
    unsigned char v[32];
    const user_op *u = api_user_of(ctx, op);
    size_t bytes = api_res_size(ctx, op, type);
    CUdeviceptr out = (CUdeviceptr)(uintptr_t)d_out;
    /* the widest word that divides both the size and d_out's alignment (two halves of a
     * var_mean result are 4 bytes at a 2-byte boundary) */
    size_t w = (bytes | out) % 4 == 0 ? 4 : (bytes | out) % 2 == 0 ? 2 : 1, words = bytes / w;

    if (u && !u->identity_known)
        return rt_seterr(e, RT_ENVRTC, "operator '%s', n = 0: its identity is only known "
                         "compiled, and NVRTC was not usable when it was registered",
                         u->op.name);
    memset(v, 0, sizeof v);
    if (u)
        memcpy(v, u->identity, sizeof u->identity);
    else
        optype_empty_result(op, type, v);
    for (size_t i = 0; i < words;) {
        size_t run = 1;
        while (i + run < words && !memcmp(v + w * (i + run), v + w * i, w))
            run++;
        CUresult r;
        if (w == 4) {
            unsigned int x;
            memcpy(&x, v + 4 * i, 4);
            r = cu.MemsetD32Async(out + 4 * i, x, run, s);
        } else if (w == 2) {
            unsigned short x;
            memcpy(&x, v + 2 * i, 2);
            r = api_cx.MemsetD16Async(out + 2 * i, x, run, s);
        } else {
            r = api_cx.MemsetD8Async(out + i, v[i], run, s);
        }
        if (r != CUDA_SUCCESS)
            return driver_fail(r, "writing the empty input's result (cuMemsetD*Async)", e);
        i += run;
    }
    return RT_OK;
}

/* The flat decision for n (n >= 1) launched on s with the stream's temporary block (or,
 * while capturing, the block as it is); rt_reduce's body without its checks, also run by
 * rt_reduce_keys for one segment (api_seg.c). */
int api_flat_run(rt_ctx *ctx, const char *fn, rt_op op, rt_type type, const void *d_in,
                 unsigned long long n, void *d_out, CUstream s, int capturing, rt_err *e)
{
    decision *d;
    slot *sl;
    int rc;
    if ((rc = api_get_decision(ctx, op, type, n, &d, e)) != RT_OK)
        return rc;
    api_met(ctx, 0, op, type, n, 0, d->level, d->c);
    if ((rc = api_stream_temp(ctx, fn, s, api_temp_need(d->k, n), capturing, "make a call of "
                              "this size on this stream before the capture (a warm-up), or give "
                              "rt_reduce_temp storage of rt_temp_bytes bytes", &sl, e)) != RT_OK)
        return rc;
    rc = launch(d->k, d_in, d_out, n, sl ? sl->temp : 0, s, e);
    if (sl)
        pthread_mutex_unlock(&sl->lock);
    return rc;
}

static int reduce(rt_ctx *ctx, const char *fn, rt_op op, rt_type type, const void *d_in,
                  unsigned long long n, void *d_out, int own_temp, void *d_temp,
                  size_t temp_bytes, void *stream)
{
    rt_err e;
    CUstream s = (CUstream)stream;
    decision *d;
    CUdeviceptr t = (CUdeviceptr)(uintptr_t)d_temp;
    CUresult r;
    int rc, pushed = 0, capturing = 0;
    char tn[96];

    api_begin(ctx);
    if ((rc = api_check_op_type(fn, ctx, op, type, &e)) != RT_OK
        || (rc = api_check_ctx(fn, ctx, &e)) != RT_OK
        || (rc = api_check_pointers(fn, ctx, op, type, d_in, n, d_out, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_capturing(s, fn, &capturing, &e)) != RT_OK)
        goto done;
    if (n == 0) {
        rc = write_empty(ctx, op, type, d_out, s, &e);   /* memsets: captured as nodes */
        goto done;
    }
    if (capturing && !api_decided(ctx, op, type, n)) {
        char range[64];
        api_slot_text(api_size_slot(n), range, sizeof range);
        rc = rt_seterr(&e, RT_ECAPTURE, "%s: %s %s n = %llu: the stream is capturing a CUDA "
                       "graph, and the kernel for %s is not loaded yet "
                       "(loading it is synchronous and would break the capture): make one "
                       "call of this case before the capture (a warm-up), or call "
                       "rt_temp_bytes for it", fn, api_opname(ctx, op),
                       api_typename(op, type, tn, sizeof tn), n, range);
        goto done;
    }
    if (!own_temp) {
        rc = api_flat_run(ctx, fn, op, type, d_in, n, d_out, s, capturing, &e);
        goto done;
    }
    if ((rc = api_get_decision(ctx, op, type, n, &d, &e)) != RT_OK)
        goto done;
    api_met(ctx, 0, op, type, n, 0, d->level, d->c);
    /* The caller's storage (rt_reduce_temp). */
    size_t need = api_temp_need(d->k, n);
    if (temp_bytes < need || (need && !d_temp)) {
        rc = rt_seterr(&e, RT_EINVAL, "%s: %s %s n = %llu needs %zu bytes of temporary "
                       "storage, %zu given", fn, api_opname(ctx, op),
                       api_typename(op, type, tn, sizeof tn), n,
                       need, d_temp ? temp_bytes : 0);
        goto done;
    }
    if (t % TEMP_ALIGN) {
        rc = rt_seterr(&e, RT_EINVAL, "%s: d_temp %p is not aligned to %d bytes", fn,
                       d_temp, TEMP_ALIGN);
        goto done;
    }
    if (d->k->p.kind == PLAN_ONELAUNCH
        && (r = cu.MemsetD32Async(t, 0, COUNTER_BYTES / 4, s)) != CUDA_SUCCESS) {
        rc = driver_fail(r, "clearing the counter (cuMemsetD32Async)", &e);
        goto done;
    }
    rc = launch(d->k, d_in, d_out, n, t, s, &e);
done:
    api_leave(pushed);
    return api_finish(rc, &e);
}

int rt_reduce(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in, unsigned long long n,
              void *d_out, void *stream)
{
    return reduce(ctx, "rt_reduce", op, type, d_in, n, d_out, 0, NULL, 0, stream);
}

int rt_reduce_temp(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                   unsigned long long n, void *d_out, void *d_temp, size_t temp_bytes,
                   void *stream)
{
    return reduce(ctx, "rt_reduce_temp", op, type, d_in, n, d_out, 1, d_temp, temp_bytes,
                  stream);
}
