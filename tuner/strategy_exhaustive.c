/*
 * strategy_exhaustive.c - every candidate of the case once, in the space's order (strategy.h).
 * Candidates that did not compile or that the database holds already are offered too: the
 * run skips them, and they count on the progress line, as a rerun's skipped ones always have.
 * With a budget of N configs, the first N of the space's order; when time is up, no more.
 */
#include <stdlib.h>
#include "strategy.h"

typedef struct exhaustive {
    int n;        /* candidates */
    int next;     /* the next one to offer */
} exhaustive;

static long planned(int n, long budget)
{
    return budget > 0 && budget < n ? budget : n;
}

static int init(strategy *s, const strategy_case *cs, rt_err *e)
{
    exhaustive *x = malloc(sizeof *x);
    if (!x)
        return rt_seterr(e, RT_ENOMEM, "out of memory for the search of n = %lld", cs->size);
    x->n = (int)planned(cs->n, cs->budget);
    x->next = 0;
    s->state = x;
    return RT_OK;
}

static int next(strategy *s, int time_up, strategy_pick *p)
{
    exhaustive *x = s->state;
    if (time_up)
        x->next = x->n;   /* done stays done */
    if (x->next >= x->n)
        return 0;
    *p = strategy_full(x->next++);
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
