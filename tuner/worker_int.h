/*
 * worker_int.h - what the worker's files share (worker.c: the process and its requests;
 * worker_prepare.c: the case's data and references; worker_measure.c, worker_seg.c,
 * worker_axis.c: a candidate's checks and timing): the worker's state and the helpers each
 * of them calls. Private to tuner/worker*.c; the tuner reaches the worker through proto.h.
 */
#ifndef RT_WORKER_INT_H
#define RT_WORKER_INT_H

#include <stddef.h>
#include <stdint.h>
#include "../runtime/codegen.h"
#include "../runtime/driver.h"
#include "../runtime/err.h"
#include "../runtime/plan.h"
#include "axisdata.h"
#include "data.h"
#include "measure.h"
#include "proto.h"
#include "segdata.h"

#define FRESH_MAX ((1u << 20) + (1u << 19) + 64)   /* elements of the fresh-input buffer */

/* Guard accumulators after a segmented output: a kernel that writes there is wrong. */
#define GUARD 64
#define POISON 0xa5

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

/* The worker process's one state (worker.c), W in every file of the worker. */
extern worker worker_state;
#define W worker_state

/* worker.c: a reply to the tuner on stdout; a timing with the shared method (measure.c). */
int worker_reply(uint32_t kind, const void *msg, size_t len);
int worker_time_reps(measure_enqueue_fn fn, void *arg, int hot, int min_reps, int max_reps,
                     double budget_s, measure_resp *m, rt_err *e);

/* worker_prepare.c: MSG_OPERATOR, MSG_PREPARE, and the test data and references that the
 * checks of a candidate make again on fresh inputs. */
int worker_load_operator(const operator_req *q, const char *payload, rt_err *e);
void worker_prepare(const prepare_req *q);
int worker_fill(void *host, uint64_t m, uint64_t seed, uint64_t plant, int stress, rt_err *e);
int worker_user_reference(CUdeviceptr in, uint64_t m, void *result, rt_err *e);
int worker_upload_seg(const seg_data *d, int layout, int off64, CUdeviceptr *dst, rt_err *e);

/* worker_measure.c: MSG_MEASURE, and what the checks of every layout share. */
void worker_measure(const measure_req *q, const void *cubin);
size_t worker_result_size(void);
int worker_stress_kind(uint64_t seed);
uint64_t worker_rnd(uint64_t *s);

/* worker_seg.c, worker_axis.c: a candidate of the prepared segmented or axis case, its
 * outcome in resp, why (a wrong result) and *rcp (an error, with e set). */
void worker_measure_seg(const measure_req *q, plan *p, measure_resp *resp, char *why,
                        size_t wlen, rt_err *e, int *rcp);
void worker_measure_axis(const measure_req *q, plan *p, measure_resp *resp, char *why,
                         size_t wlen, rt_err *e, int *rcp);

#endif
