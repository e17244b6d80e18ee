/*
 * worker_axis.c - one axis candidate measured (docs/axis.md): checked on the ragged shapes
 * and a stress input, with guard outputs that must stay unwritten and split counters that
 * the kernel must leave zero, then timed on the prepared shape and checked for determinism.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/driver.h"
#include "../runtime/optype.h"
#include "../runtime/plan.h"
#include "axisdata.h"
#include "data.h"
#include "measure.h"
#include "worker_int.h"

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
    return plan_axis_launch(a->p, a->in, a->out, a->sh.outer, a->sh.len, a->sh.inner,
                            plan_axis_temp_in_area(a->p, W.gpu.temp, a->sh.outer, a->sh.len,
                                                   a->sh.inner),
                            W.gpu.stream, e);
}

/* Run once with the outputs (and GUARD results after them) poisoned and fetch all of them
 * into 'host'; *stray = 1 when a guard was written. The temporary storage was made large
 * enough and its counters zeroed before (the kernel leaves them zero). */
static int axis_run_once(axis_arg *a, void *host, int *stray, rt_err *e)
{
    size_t res = worker_result_size(), nout = axisdata_outputs(&a->sh);
    size_t bytes = (nout + GUARD) * res;
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
    size_t res = worker_result_size();
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

/* Every counter of the area is zero again (the kernel's contract), whatever shapes ran. */
static int axis_counters_zero(int *zero, rt_err *e)
{
    size_t bytes = PLAN_AXIS_COUNTER_AREA;
    *zero = 1;
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

void worker_measure_axis(const measure_req *q, plan *p, measure_resp *resp, char *why,
                         size_t wlen, rt_err *e, int *rcp)
{
    int rc, ok = 1, zero = 1;
    size_t res = worker_result_size(), nout = axisdata_outputs(&W.ax);
    CUresult r;
    resp->launches = 1;
    /* Temporary storage for the largest of the shapes, laid out as plan.h's area: the
     * counters of every shape end where the area ends (zeroed once: a correct kernel leaves
     * them zero, which is checked after the tuning shape's runs), the partials follow. */
    size_t temp = plan_axis_area_bytes(p, W.ax.outer, W.ax.len, W.ax.inner);
    for (size_t k = 0; k < NRAGGED; k++) {
        const axis_shape *sh = &ragged[k];
        size_t t = plan_axis_area_bytes(p, sh->outer, sh->len, sh->inner);
        temp = t > temp ? t : temp;
    }
    if ((rc = measure_ensure_temp(&W.gpu, temp, e)))
        goto done;
    if ((r = cu.MemsetD8(W.gpu.temp, 0, PLAN_AXIS_COUNTER_AREA)) != CUDA_SUCCESS) {
        rc = driver_fail(r, "clearing the counters", e);
        goto done;
    }
    uint64_t s = q->seed;
    for (size_t k = 0; k < NRAGGED; k++)
        if ((rc = axis_check_fresh(p, &ragged[k], worker_rnd(&s), -1, why, wlen, &ok, e)) || !ok)
            goto done;
    /* Float elements: a stress input (data.h) on the last ragged shape. */
    int stress = worker_stress_kind(q->seed);
    if (stress >= 0 && ((rc = axis_check_fresh(p, &ragged[NRAGGED - 1], worker_rnd(&s), stress, why,
                                               wlen, &ok, e)) || !ok))
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
    if ((rc = axis_counters_zero(&zero, e)))
        goto done;
    if (!zero) {
        snprintf(why, wlen, "shape %llux%llux%llu: the kernel left its split counters nonzero",
                 W.ax.outer, W.ax.len, W.ax.inner);
        goto done;
    }
    if ((rc = worker_time_reps(axis_enqueue, &a, q->hot, q->min_reps, q->max_reps, q->budget_s,
                               resp, e)))
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
    if (rc == RT_OK && (rc = axis_counters_zero(&zero, e)) == RT_OK && !zero)
        snprintf(why, wlen, "shape %llux%llux%llu: the kernel left its split counters nonzero "
                 "after the timed runs", W.ax.outer, W.ax.len, W.ax.inner);
done:
    *rcp = rc;
}
