/*
 * worker_seg.c - one segmented candidate measured (keys or offsets): checked on fresh
 * segmentations (empty segments at the ends and in runs, the tuning profile at a ragged
 * size, one segment over a few tiles, no elements, a stress input), with guard outputs that
 * must stay unwritten, then timed on the prepared case and checked for determinism.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/driver.h"
#include "../runtime/optype.h"
#include "../runtime/plan.h"
#include "data.h"
#include "measure.h"
#include "segdata.h"
#include "worker_int.h"

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
    size_t res = worker_result_size(), bytes = (a->d->nseg + GUARD) * res;
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
    size_t res = worker_result_size();
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
        rc = worker_upload_seg(&d, W.layout, W.off64, &seg, e);
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

void worker_measure_seg(const measure_req *q, plan *p, measure_resp *resp, char *why,
                        size_t wlen, rt_err *e, int *rcp)
{
    int rc, ok = 1;
    size_t res = worker_result_size();
    resp->launches = plan_seg_launch_count(p, W.sd.n, W.sd.nseg);
    uint64_t s = q->seed, tile = p->tile;
    uint64_t m1 = 1 + worker_rnd(&s) % (4 * tile + 3);
    if (m1 > FRESH_MAX / 2)
        m1 = FRESH_MAX / 2 - worker_rnd(&s) % 1000;
    uint64_t m2 = (1u << 20) + 1 + worker_rnd(&s) % (1u << 19);
    /* Empty segments at both ends and in runs; the tuning profile at a ragged 1.5M; one
     * segment over a few tiles; no elements at all (every segment the identity). */
    if ((rc = seg_check_fresh(p, 5, m1, worker_rnd(&s), -1, why, wlen, &ok, e)) || !ok)
        goto done;
    if ((rc = seg_check_fresh(p, W.profile, m2, worker_rnd(&s), -1, why, wlen, &ok, e)) || !ok)
        goto done;
    if ((rc = seg_check_fresh(p, 0, 3 * tile + 1 + worker_rnd(&s) % tile, worker_rnd(&s), -1, why,
                              wlen, &ok, e)) || !ok)
        goto done;
    if ((rc = seg_check_fresh(p, 5, 0, worker_rnd(&s), -1, why, wlen, &ok, e)) || !ok)
        goto done;
    /* Float elements: a stress input (data.h) over one segment of a few tiles. */
    int stress = worker_stress_kind(q->seed);
    uint64_t m3 = 1 + worker_rnd(&s) % (4 * tile + 3);
    if (m3 > FRESH_MAX / 2)
        m3 = FRESH_MAX / 2;
    if (stress >= 0
        && ((rc = seg_check_fresh(p, 0, m3, worker_rnd(&s), stress, why, wlen, &ok, e)) || !ok))
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
    if ((rc = worker_time_reps(seg_enqueue, &a, q->hot, q->min_reps, q->max_reps, q->budget_s,
                               resp, e)))
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
