/*
 * strategy.h - the seam where a search strategy plugs into the tuning run: which candidates
 * of a case are measured, in which order, and when the case is done.
 *
 * The run (sweep.c) owns everything else: the worker, the database, the progress line. For
 * each case (one size of one layout) it initialises the strategy over the candidate set,
 * then asks for the next pick until the strategy says it is done, and tells the strategy
 * what became of each pick. A pick the run need not or cannot measure is not measured: a
 * candidate that did not compile, and one the database already holds a measurement of for
 * this case at least as many repetitions as the pick asks for (so a rerun resumes where the
 * last one stopped; a failure stored is final whatever its repetitions). Every pick,
 * measured or not, counts as done on the progress line, whose total is the strategy's
 * 'planned' per case.
 *
 * Budgets are per case: at most 'budget' distinct candidates (0: no limit), and when
 * 'budget_s' seconds of the case have passed (0: no limit) the run tells next() that time is
 * up; a strategy then ends the case, after at most one more pick that gives its leader a
 * measurement at the full repetition rule (halving), so that best has one to choose.
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
    uint64_t seed;            /* --strategy-seed: for strategies that draw */
    long budget;              /* --budget N: distinct candidates at most; 0: no limit */
    int start;                /* the best known candidate for this case, or -1 (local) */
    int start2;               /* the best known at the nearest size on start's other side of
                               * the case's size, or -1 (local: the second start) */
} strategy_case;

/* The full repetition rule, as the tuner has always timed a candidate: 10 to 200 timed
 * repetitions, up to 0.25 s of GPU time. Only measurements of at least STORE_FULL_REPS
 * (= STRATEGY_FULL_MIN) repetitions are candidates for best (store_tune.h), so that best
 * compares like with like; halving's brief rounds time fewer. */
#define STRATEGY_FULL_MIN 10
#define STRATEGY_FULL_MAX 200
#define STRATEGY_FULL_BUDGET_S 0.25

/* What to measure next: the candidate and how (the worker's repetition rule, measure_req). */
typedef struct strategy_pick {
    int cand;                 /* index into strategy_case.c */
    int min_reps, max_reps;   /* timed repetitions */
    double budget_s;          /* stop repeating after this much timed GPU time */
} strategy_pick;

/* What became of a pick. */
enum {
    STRATEGY_UNCOMPILED,      /* not measured: the candidate did not compile */
    STRATEGY_STORED,          /* not measured: the database holds it already (with at least
                               * the pick's repetitions, or a failure) */
    STRATEGY_MEASURED,        /* measured now; m says how it went (m->status "ok" or not) */
};

typedef struct strategy_result {
    int cand;
    int outcome;              /* STRATEGY_* */
    const store_measurement *m;   /* STRATEGY_MEASURED: what was stored; STRATEGY_STORED:
                                   * what the database holds (status, times, reps); else NULL */
} strategy_result;

typedef struct strategy strategy;

typedef struct strategy_ops {
    const char *name;
    /* The picks it makes of a case of 'n' candidates with 'budget' (0: none), at most: the
     * progress line's total. */
    long (*planned)(int n, long budget);
    /* Start the search of a case; s->state is the strategy's own. */
    int (*init)(strategy *s, const strategy_case *cs, rt_err *e);
    /* The next pick into *p: 1, or 0 when the case is done. 'time_up': the case's budget
     * of seconds is spent. */
    int (*next)(strategy *s, int time_up, strategy_pick *p);
    /* The outcome of the last pick, before the next is asked for. */
    void (*observe)(strategy *s, const strategy_result *r);
    /* Free what init made and set s->state to NULL; harmless when it is NULL already. */
    void (*fini)(strategy *s);
    /* Optional (NULL: none): up to 'max' candidates it means to pick after the last pick, in
     * its order, into idx; returns how many. Advisory, and may go stale with what the next
     * observations teach it: a run that compiles candidates as they are picked (any strategy
     * but exhaustive, tune.c) compiles these together with the pick, on its threads. */
    int (*ahead)(strategy *s, int *idx, int max);
} strategy_ops;

struct strategy {
    const strategy_ops *ops;
    void *state;
};

/* Every candidate once, in the space's order (the first 'budget' of them): the default. */
extern const strategy_ops strategy_exhaustive;
/* A seeded sample without replacement of the compiled candidates, up to the budget. */
extern const strategy_ops strategy_random;
/* Successive halving: every candidate (a seeded sample of 'budget' of them) briefly, the best
 * third again with more repetitions, until three or fewer are left, which are timed at the
 * full rule. */
extern const strategy_ops strategy_halving;
/* Local search from 'start' over neighbouring parameter values, to a local optimum. */
extern const strategy_ops strategy_local;

/* What a run (and a replay) without --strategy searches with (docs/tuning.md, "Which
 * strategy is the default"). */
#define STRATEGY_DEFAULT "exhaustive"

/* The strategy named 'name', or NULL; STRATEGY_NAMES lists them for messages. */
const strategy_ops *strategy_find(const char *name);
#define STRATEGY_NAMES "exhaustive, random, halving, local"

/* The budget of configs of a case of 'n' candidates: 'budget' (0: no limit), or, with pct > 0
 * (--budget P%), pct percent of n rounded up, at least 1 and at most n. The one place a
 * percentage becomes a count, where the run learns a case's candidates; the strategies see a
 * count either way. */
long strategy_budget(long budget, double pct, int n);

/* The same with a floor (--budget P%,N): a share of at least 'min' configs (0: none), at most
 * n, so that a small space is not searched with a handful of picks (15% of 33 is 5). */
long strategy_budget_min(long budget, double pct, long min, int n);

/* The pick of candidate 'cand' at the full repetition rule. */
strategy_pick strategy_full(int ci);

/* A splitmix64 step: the strategies' reproducible random numbers. */
uint64_t strategy_rand(uint64_t *state);

/* Local's second start (strategy_case.start2): the known winners at the nearest size below
 * a case's size and the nearest above (candidates' indices, -1: none), as a run (sweep.c)
 * or a replay (replay.c) meets them. */
typedef struct strategy_side {
    int below, above;
    long long nb, na;
} strategy_side;
#define STRATEGY_SIDE_NONE {-1, -1, 0, 0}

/* Candidate j, a winner at size n, for a case of size case_n (n == case_n: neither side). */
void strategy_side_add(strategy_side *s, int j, long long n, long long case_n);

/* The winner on the other side of the case's size from 'start', or -1. */
int strategy_side_other(const strategy_side *s, int start);

/* A seeded shuffle of the compiled candidates of 'cs' into idx (cs->n entries); returns how
 * many there are. The case's size is mixed into the seed, so each case draws its own. */
int strategy_shuffle(const strategy_case *cs, int *idx);

#endif
