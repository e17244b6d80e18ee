/*
 * strategy_exhaustive.c - every candidate of the case once, in the space's order (strategy.h).
 * Candidates that did not compile or that the database holds already are offered too: the
 * run skips them, and they count on the progress line, as a rerun's skipped ones always have.
 */
#include <stdlib.h>
#include "strategy.h"

typedef struct exhaustive {
    int n;        /* candidates */
    int next;     /* the next one to offer */
} exhaustive;

static long planned(int n)
{
    return n;
}

static int init(strategy *s, const strategy_case *cs, rt_err *e)
{
    exhaustive *x = malloc(sizeof *x);
    if (!x)
        return rt_seterr(e, RT_ENOMEM, "out of memory for the search of n = %lld", cs->size);
    x->n = cs->n;
    x->next = 0;
    s->state = x;
    return RT_OK;
}

static int next(strategy *s, strategy_pick *p)
{
    exhaustive *x = s->state;
    if (x->next >= x->n)
        return 0;
    /* As the tuner has always timed: 10 to 200 repetitions, up to 0.25 s of GPU time. */
    *p = (strategy_pick){x->next++, 10, 200, 0.25};
    return 1;
}

static void observe(strategy *s, const strategy_result *r)
{
    (void)s;   /* every candidate is offered whatever became of the others */
    (void)r;
}

static void fini(strategy *s)
{
    free(s->state);
    s->state = NULL;
}

const strategy_ops strategy_exhaustive = {"exhaustive", planned, init, next, observe, fini};
