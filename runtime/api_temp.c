/*
 * api_temp.c - libredtune's temporary storage: a block per stream, owned by the context
 * (rt_reduce, the segmented calls), and the size rt_reduce_temp needs of a caller's block.
 *
 * The first COUNTER_BYTES of every block hold the one-launch counter, which each one-launch
 * kernel leaves zero; multipass plans get the storage after it, so the counter of a block
 * the library owns is zero for good once cleared at allocation. Blocks the caller supplies
 * (rt_reduce_temp) get the counter cleared on the stream before each one-launch launch,
 * since their contents are not ours to trust.
 *
 * Before 'temp', every block has BLOCK_PAD more zero bytes (api_int.h): with the one-launch
 * counter they make a zero head of 16 KiB, where a split axis launch finds its counters
 * (which it leaves zero too), right before the partials at temp + COUNTER_BYTES.
 *
 * CUDA graphs: a launch captured on a stream uses that stream's block, which the graph then
 * holds by address; such a block is marked captured and never freed before rt_close: growing
 * the slot or recycling it moves the block to ctx->kept instead. While a stream captures
 * nothing is allocated, synchronised or claimed (api_capture_temp).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"

/* Bytes of temp storage for n: the counter, then the plan's partials. */
size_t api_temp_need(const kernel *k, unsigned long long n)
{
    size_t plan_bytes = plan_temp_bytes(&k->p, n);
    if (k->p.kind == PLAN_ONELAUNCH)
        return plan_bytes;   /* its first COUNTER_BYTES are the counter already */
    return plan_bytes ? COUNTER_BYTES + plan_bytes : 0;
}

/* What identifies a stream for its temp block: the driver's id, unique for the life of the
 * program (a handle may be reused by a new stream while work of the old one still runs);
 * with a driver older than 12.0 the handle, or the thread for the per-thread stream. */
int api_stream_key(CUstream s, unsigned long long *key, rt_err *e)
{
    if (api_cx.StreamGetId) {
        CUresult r = api_cx.StreamGetId(s, key);
        return r == CUDA_SUCCESS ? RT_OK : driver_fail(r, "cuStreamGetId", e);
    }
    if (s == CU_STREAM_PER_THREAD)
        *key = (1ULL << 63) | (unsigned long long)pthread_self();
    else
        *key = (unsigned long long)(uintptr_t)s;
    return RT_OK;
}

static slot *find_slot(rt_ctx *ctx, unsigned long long key)
{
    int n = atomic_load_explicit(&ctx->nslots, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        slot *sl = &ctx->slots[i];
        if (atomic_load_explicit(&sl->used, memory_order_acquire)
            && atomic_load_explicit(&sl->key, memory_order_relaxed) == key)
            return sl;
    }
    return NULL;
}

/* Keep a block a captured graph may use until rt_close; 0 when out of host memory (the block
 * is then leaked rather than freed under a graph). */
static int keep(rt_ctx *ctx, CUdeviceptr temp)
{
    kept_block *k = malloc(sizeof *k);
    if (!k)
        return 0;
    k->temp = temp;
    pthread_mutex_lock(&ctx->kept_lock);
    k->next = ctx->kept;
    ctx->kept = k;
    pthread_mutex_unlock(&ctx->kept_lock);
    return 1;
}

/* Free every slot's block once the device's context is idle (blocks of captured graphs are
 * kept); caller holds slot_lock and has the CUDA context current. Slot locks are taken only
 * after slot_lock, so no deadlock. */
static int recycle(rt_ctx *ctx, rt_err *e)
{
    int n = atomic_load_explicit(&ctx->nslots, memory_order_acquire), rc = RT_OK;
    for (int i = 0; i < n; i++)
        pthread_mutex_lock(&ctx->slots[i].lock);
    CUresult r = cu.CtxSynchronize();
    if (r != CUDA_SUCCESS)
        rc = driver_fail(r, "cuCtxSynchronize (releasing temporary storage)", e);
    for (int i = 0; i < n; i++) {
        slot *sl = &ctx->slots[i];
        if (sl->temp && sl->captured)
            keep(ctx, sl->temp - BLOCK_PAD);
        else if (sl->temp)
            cu.MemFree(sl->temp - BLOCK_PAD);
        sl->temp = 0;
        sl->bytes = 0;
        sl->captured = 0;
        atomic_store_explicit(&sl->used, 0, memory_order_release);
    }
    atomic_store_explicit(&ctx->nslots, 0, memory_order_release);
    for (int i = n - 1; i >= 0; i--)
        pthread_mutex_unlock(&ctx->slots[i].lock);
    return rc;
}

/* The slot of 'key', claimed if new (with 'claim'; else *out is NULL when there is none);
 * returned locked, with its key checked under the lock. */
int api_lock_slot(rt_ctx *ctx, unsigned long long key, int claim, slot **out, rt_err *e)
{
    int rc = RT_OK;
    *out = NULL;
    for (;;) {
        slot *sl = find_slot(ctx, key);
        if (!sl && !claim)
            return RT_OK;
        if (!sl) {
            pthread_mutex_lock(&ctx->slot_lock);
            if (!(sl = find_slot(ctx, key))) {
                int n = atomic_load_explicit(&ctx->nslots, memory_order_acquire);
                if (n == NSLOTS) {
                    rc = recycle(ctx, e);
                    n = 0;
                }
                sl = &ctx->slots[n];
                atomic_store_explicit(&sl->key, key, memory_order_relaxed);
                atomic_store_explicit(&sl->used, 1, memory_order_release);
                atomic_store_explicit(&ctx->nslots, n + 1, memory_order_release);
            }
            pthread_mutex_unlock(&ctx->slot_lock);
            if (rc != RT_OK)
                return rc;
        }
        pthread_mutex_lock(&sl->lock);
        if (atomic_load_explicit(&sl->used, memory_order_acquire)
            && atomic_load_explicit(&sl->key, memory_order_relaxed) == key) {
            *out = sl;
            return RT_OK;
        }
        pthread_mutex_unlock(&sl->lock);   /* recycled meanwhile: look again */
    }
}

/* Grow a slot's block to 'need' bytes; caller holds its lock, and the stream is not
 * capturing. The old block may still be in use by work on this stream, so the stream is
 * synchronised before it is freed; one a captured graph uses is kept instead. */
int api_grow(rt_ctx *ctx, slot *sl, size_t need, CUstream s, rt_err *e)
{
    CUresult r;
    size_t want = sl->bytes * 2 > need ? sl->bytes * 2 : need;
    want = (want + TEMP_GRAIN - 1) / TEMP_GRAIN * TEMP_GRAIN;
    if (sl->temp && sl->captured) {
        if (!keep(ctx, sl->temp - BLOCK_PAD))
            return rt_seterr(e, RT_ENOMEM, "out of memory growing temporary storage");
        sl->temp = 0;
        sl->bytes = 0;
        sl->captured = 0;
    } else if (sl->temp) {
        if ((r = cu.StreamSynchronize(s)) != CUDA_SUCCESS)
            return driver_fail(r, "cuStreamSynchronize (growing temporary storage)", e);
        cu.MemFree(sl->temp - BLOCK_PAD);
        sl->temp = 0;
        sl->bytes = 0;
    }
    CUdeviceptr block = 0;
    r = cu.MemAlloc(&block, BLOCK_PAD + want);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && want > need)
        r = cu.MemAlloc(&block, BLOCK_PAD + (want = need));
    if (r != CUDA_SUCCESS)
        return api_cuda_fail(r, "allocating temporary storage", e);
    sl->temp = block + BLOCK_PAD;
    sl->bytes = want;
    /* The zero head (the pad and the counter), zero from here on: every one-launch and axis
     * kernel leaves its counters zero. */
    if ((r = cu.MemsetD32Async(block, 0, (BLOCK_PAD + COUNTER_BYTES) / 4, s)) != CUDA_SUCCESS)
        return driver_fail(r, "clearing temporary storage", e);
    return RT_OK;
}

/* Whether 's' is capturing a CUDA graph (an invalidated capture counts too: what the call
 * must not do is refused either way). The legacy stream while a blocking stream of the
 * device captures is RT_ECAPTURE: work on it would join that capture, and break it. */
int api_capturing(CUstream s, const char *fn, int *capturing, rt_err *e)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = cu.StreamIsCapturing(s, &st);
    *capturing = 0;
    if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
        return rt_seterr(e, RT_ECAPTURE, "%s: the stream is the legacy default stream while "
                         "another stream of the device is capturing a CUDA graph, and work "
                         "on it would break that capture: pass the capturing stream, or one "
                         "created with CU_STREAM_NON_BLOCKING", fn);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "cuStreamIsCapturing", e);
    *capturing = st != CU_STREAM_CAPTURE_STATUS_NONE;
    return RT_OK;
}

/* The temp block of capturing stream 's' for a launch that needs 'need' bytes: its slot,
 * locked and marked captured, when it is large enough; none (*out NULL) when need is 0;
 * else RT_ECAPTURE, since allocating would break the capture ('warm' says what to do). */
int api_capture_temp(rt_ctx *ctx, const char *fn, CUstream s, size_t need, const char *warm,
                     slot **out, rt_err *e)
{
    unsigned long long key;
    slot *sl = NULL;
    int rc;

    *out = NULL;
    if (need == 0)
        return RT_OK;
    /* No cuStreamGetId here: the driver refuses it while the stream captures, and the
     * refusal invalidates the capture. The block is the one a call on this stream handle
     * made last outside a capture (a handle reused by a new stream finds the old stream's
     * block, which is ours and idle once that stream's work is done). */
    int n = atomic_load_explicit(&ctx->nslots, memory_order_acquire), found = 0;
    key = 0;
    for (int i = n - 1; i >= 0 && !found; i--)
        if (atomic_load_explicit(&ctx->slots[i].used, memory_order_acquire)
            && atomic_load_explicit(&ctx->slots[i].handle, memory_order_relaxed) == (uintptr_t)s) {
            key = atomic_load_explicit(&ctx->slots[i].key, memory_order_relaxed);
            found = 1;
        }
    rc = found ? api_lock_slot(ctx, key, 0, &sl, e) : RT_OK;
    if (rc != RT_OK)
        return rc;
    if (sl && sl->bytes >= need) {
        sl->captured = 1;
        *out = sl;
        return RT_OK;
    }
    size_t have = sl ? sl->bytes : 0;
    if (sl)
        pthread_mutex_unlock(&sl->lock);
    return rt_seterr(e, RT_ECAPTURE, "%s: the stream is capturing a CUDA graph, and its "
                     "temporary storage (%zu bytes) is smaller than the %zu bytes this call "
                     "needs; allocating would break the capture: %s", fn, have, need, warm);
}

int api_stream_temp(rt_ctx *ctx, const char *fn, CUstream s, size_t need, int capturing,
                    const char *warm, slot **out, rt_err *e)
{
    unsigned long long key;
    slot *sl;
    int rc;
    *out = NULL;
    if (capturing)   /* the stream's block as it is (the graph keeps it), or none */
        return api_capture_temp(ctx, fn, s, need, warm, out, e);
    if ((rc = api_stream_key(s, &key, e)) != RT_OK || (rc = api_lock_slot(ctx, key, 1, &sl, e)) != RT_OK)
        return rc;
    atomic_store_explicit(&sl->handle, (uintptr_t)s, memory_order_relaxed);
    if (sl->bytes < need) {
        double t = api_mono_ms();
        if ((rc = api_grow(ctx, sl, need, s, e)) != RT_OK) {
            pthread_mutex_unlock(&sl->lock);
            return rc;
        }
        api_trace(ctx, &t, "temporary storage of %zu bytes allocated", need);
    }
    *out = sl;
    return RT_OK;
}

int rt_temp_bytes(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n, size_t *bytes)
{
    rt_err e;
    decision *d;
    int rc, pushed = 0;

    api_begin(ctx);
    if (bytes)
        *bytes = 0;
    if ((rc = api_check_op_type("rt_temp_bytes", ctx, op, type, &e)) != RT_OK
        || (rc = api_check_ctx("rt_temp_bytes", ctx, &e)) != RT_OK)
        return api_finish(rc, &e);
    if (!bytes)
        return api_finish(rt_seterr(&e, RT_EINVAL, "rt_temp_bytes: bytes is NULL"), &e);
    if (n == 0)
        return RT_OK;
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_get_decision(ctx, op, type, n, &d, &e)) == RT_OK)
        *bytes = api_temp_need(d->k, n);
    api_leave(pushed);
    return api_finish(rc, &e);
}

int rt_release_temp(rt_ctx *ctx)
{
    rt_err e;
    int rc, pushed = 0;

    api_begin(ctx);
    if ((rc = api_check_ctx("rt_release_temp", ctx, &e)) != RT_OK
        || (rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    pthread_mutex_lock(&ctx->slot_lock);
    rc = recycle(ctx, &e);
    pthread_mutex_unlock(&ctx->slot_lock);
    api_leave(pushed);
    return api_finish(rc, &e);
}

