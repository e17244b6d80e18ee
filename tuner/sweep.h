/*
 * sweep.h - the cases of a tuning run, one after the other: for each segment profile (one
 * for flat) and each size, the data prepared in the worker, the strategy's picks measured
 * and each measurement committed as it is made, then the case's best recomputed.
 */
#ifndef RT_SWEEP_H
#define RT_SWEEP_H

#include "../runtime/err.h"
#include "../runtime/store.h"
#include "cands.h"
#include "report.h"
#include "session.h"
#include "strategy.h"
#include "tune.h"

/* What the run has set up before its cases: all of it owned by the caller. */
typedef struct sweep {
    const tune_opts *o;
    const strategy_ops *strategy;
    session *w;                 /* a started worker; restarted here after a fault */
    store *s;                   /* open for writing, the run begun */
    cand *c;                    /* the candidate set: compiled, or (lazy) the CUBINs the
                                 * database held, the others compiled here as picked */
    int ncfg;
    int lazy;                   /* compile candidates as they are picked, with the picks
                                 * the strategy means to make next (strategy_ops.ahead) */
    const char *arch;           /* lazy: what to compile for, on o->jobs threads */
    const char *op;             /* the case: operator name and type (tune_case) */
    rt_type t;
    long long device_id, run_id;
    double read_gbps;           /* the yardstick: measurements' share of it */
    progress *pg;               /* done, measured: counted here */
    int *const *group_cands;    /* axis runs: shape g's candidates are c[group_cands[g][k]],
                                 * k < group_ncands[g] (the space expanded for the shape);
                                 * NULL: every case has all of c */
    const int *group_ncands;
} sweep;

/* Run every case. RT_OK, or the first error that stops the run (the store, a worker that
 * cannot be started or prepared); a candidate that faults or hangs is stored as such and the
 * run goes on. */
int sweep_run(const sweep *sw, rt_err *e);

#endif
