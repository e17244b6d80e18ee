/*
 * worker_measure.c - one candidate measured (MSG_MEASURE). Fresh seeded inputs of ragged
 * sizes and the tuning size are checked against the CPU reference before any timing (for a
 * user-defined operator, whose combine is CUDA source, against its reference computed on the
 * GPU, worker_prepare.c); then CUDA events around the whole launch sequence, after warm-up,
 * median of repetitions; the L2 is flushed before each repetition (the flush also keeps the
 * stream busy, so the events do not time the host's launch); with 'hot' a short spin kernel
 * keeps the stream busy instead. The method itself (GPU state, flush, spin, repetitions, the
 * read yardstick) is tuner/measure.c, shared with bench/. This file holds the flat layout and
 * the dispatch; the segmented and axis layouts are worker_seg.c's and worker_axis.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/driver.h"
#include "../runtime/optype.h"
#include "../runtime/plan.h"
#include "data.h"
#include "measure.h"
#include "proto.h"
#include "report.h"
#include "segdata.h"
#include "worker_int.h"

/* ---- measure one candidate ---- */

/* Bytes of one result (a user operator's: its result layout). */
size_t worker_result_size(void)
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
    size_t res = worker_result_size();
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
    int rc = worker_fill(W.fresh_host, m, seed, plant, stress, e);
    if (rc)
        return rc;
    data_ref ref;
    if (W.op != OP_USER)
        data_reference(W.fresh_host, W.type, W.op, m, &ref, W.gpu.host_threads);
    CUresult r = cu.MemcpyHtoD(W.fresh, W.fresh_host, bytes);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "copying fresh input", e);
    unsigned char uref[CODEGEN_STRUCT_MAX];
    if (W.op == OP_USER && (rc = worker_user_reference(W.fresh, m, uref, e)))
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
int worker_stress_kind(uint64_t seed)
{
    if (W.op == OP_USER || !optype_is_float(W.type))
        return -1;
    return (int)(data_mix(seed) % DATA_STRESS_KINDS);
}

uint64_t worker_rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 17;
}

void worker_measure(const measure_req *q, const void *cubin)
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
    double t0 = report_now();
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
        worker_measure_axis(q, &p, &resp, why, sizeof why, &e, &rc);
        goto done;
    }
    if (p.kind == PLAN_SEGMENTED) {
        worker_measure_seg(q, &p, &resp, why, sizeof why, &e, &rc);
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
    uint64_t m1 = 1 + worker_rnd(&s) % (4 * tile + 3);
    if (m1 > FRESH_MAX)
        m1 = FRESH_MAX - 1 - worker_rnd(&s) % 1000;
    uint64_t m2 = (1u << 20) + 1 + worker_rnd(&s) % (1u << 19);
    int ok = 1;
    if ((rc = check_fresh(&p, m1, worker_rnd(&s), m1 - 1, -1, why, sizeof why, &ok, &e)) || !ok)
        goto done;
    if ((rc = check_fresh(&p, m2, worker_rnd(&s), worker_rnd(&s), -1, why, sizeof why, &ok, &e))
        || !ok)
        goto done;
    /* Float elements: a stress input (data.h) of a few tiles, its kind from the seed. */
    int stress = worker_stress_kind(q->seed);
    uint64_t m3 = 1 + worker_rnd(&s) % (4 * tile + 3);
    if (m3 > FRESH_MAX)
        m3 = FRESH_MAX;
    if (stress >= 0
        && ((rc = check_fresh(&p, m3, worker_rnd(&s), 0, stress, why, sizeof why, &ok, &e)) || !ok))
        goto done;
    unsigned char first[CODEGEN_STRUCT_MAX], last[CODEGEN_STRUCT_MAX];
    if ((rc = run_once(&p, W.data, W.n, first, &e)) != RT_OK)
        goto done;
    if (!(ok = check(first, &W.ref, W.uref, W.n, why, sizeof why)))
        goto done;
    run_arg a = {&p, W.data, W.n};
    if ((rc = worker_time_reps(run_enqueue, &a, q->hot, q->min_reps, q->max_reps, q->budget_s,
                               &resp, &e)))
        goto done;
    /* Same input, every repetition: the result must not move if the family is deterministic. */
    if ((r = cu.MemcpyDtoH(last, W.gpu.out, worker_result_size())) != CUDA_SUCCESS) {
        rc = driver_fail(r, "reading the result", &e);
        goto done;
    }
    resp.deterministic = memcmp(first, last, worker_result_size()) == 0;
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
    resp.check_s = report_now() - t0 - resp.time_s;
    resp.h.code = RT_OK;
    snprintf(resp.h.msg, sizeof resp.h.msg, "%s", rc ? e.msg : why);
    worker_reply(MSG_MEASURE, &resp, sizeof resp);
    if (rc == RT_EFAULT)
        exit(3);   /* the context is lost; the tuner starts a new worker */
}
