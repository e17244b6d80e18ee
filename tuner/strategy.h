/*
 * strategy.h - the seam where a search strategy plugs into the tuning run: which candidates
 * of a case are measured, in which order, and when the case is done.
 *
 * The run (sweep.c) owns everything else: the worker, the database, the progress line. For
 * each case (one size of one layout) it initialises the strategy over the candidate set,
 * then asks for the next pick until the strategy says it is done, and tells the strategy
 * what became of each pick. A pick the run need not or cannot measure is not measured: a
 * candidate that did not compile, and one the database already holds a measurement of for
 * this case (so a rerun resumes where the last one stopped). Every pick, measured or not,
 * counts as done on the progress line, whose total is the strategy's 'planned' per case.
 */
#ifndef RT_STRATEGY_H
#define RT_STRATEGY_H

#include <stdint.h>
#include "../runtime/err.h"
#include "store_tune.h"
#include "cands.h"

/* The case a strategy searches: the candidate set (in the space's order; c[i].rc != RT_OK
 * for one that did not compile) and the size. */
typedef struct strategy_case {
    const cand *c;
    int n;
    long long size;           /* elements */
    uint64_t seed;            /* --seed: for strategies that draw */
} strategy_case;

/* What to measure next: the candidate and how (the worker's repetition rule, measure_req). */
typedef struct strategy_pick {
    int cand;                 /* index into strategy_case.c */
    int min_reps, max_reps;   /* timed repetitions */
    double budget_s;          /* stop repeating after this much timed GPU time */
} strategy_pick;

/* What became of a pick. */
enum {
    STRATEGY_UNCOMPILED,      /* not measured: the candidate did not compile */
    STRATEGY_STORED,          /* not measured: the database holds it already */
    STRATEGY_MEASURED,        /* measured now; m says how it went (m->status "ok" or not) */
};

typedef struct strategy_result {
    int cand;
    int outcome;              /* STRATEGY_* */
    const store_measurement *m;   /* STRATEGY_MEASURED: what was stored; else NULL */
} strategy_result;

typedef struct strategy strategy;

typedef struct strategy_ops {
    const char *name;
    /* The picks it makes of a case of 'n' candidates, at most: the progress line's total. */
    long (*planned)(int n);
    /* Start the search of a case; s->state is the strategy's own. */
    int (*init)(strategy *s, const strategy_case *cs, rt_err *e);
    /* The next pick into *p: 1, or 0 when the case is done. */
    int (*next)(strategy *s, strategy_pick *p);
    /* The outcome of the last pick, before the next is asked for. */
    void (*observe)(strategy *s, const strategy_result *r);
    /* Free what init made and set s->state to NULL; harmless when it is NULL already. */
    void (*fini)(strategy *s);
} strategy_ops;

struct strategy {
    const strategy_ops *ops;
    void *state;
};

/* Every candidate once, in the space's order: the tuner's only strategy today. */
extern const strategy_ops strategy_exhaustive;

#endif
