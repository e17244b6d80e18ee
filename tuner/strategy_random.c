/*
 * strategy_random.c - a seeded sample of the case's compiled candidates, without replacement,
 * up to the budget (strategy.h). The same --strategy-seed and size draw the same sample in
 * the same order, so a rerun offers what the first run did and skips what it stored.
 */
#include <stdlib.h>
#include "strategy.h"

typedef struct sample {
    int *idx;     /* the shuffled compiled candidates */
    int n;        /* how many of them are offered */
    int next;
} sample;

static long planned(int n, long budget)
{
    return budget > 0 && budget < n ? budget : n;
}

static int init(strategy *s, const strategy_case *cs, rt_err *e)
{
    sample *x = calloc(1, sizeof *x);
    if (!x || !(x->idx = malloc(sizeof *x->idx * (size_t)(cs->n ? cs->n : 1)))) {
        free(x);
        return rt_seterr(e, RT_ENOMEM, "out of memory for the search of n = %lld", cs->size);
    }
    x->n = (int)planned(strategy_shuffle(cs, x->idx), cs->budget);
    s->state = x;
    return RT_OK;
}

static int next(strategy *s, int time_up, strategy_pick *p)
{
    sample *x = s->state;
    if (time_up)
        x->next = x->n;   /* done stays done */
    if (x->next >= x->n)
        return 0;
    *p = strategy_full(x->idx[x->next++]);
    return 1;
}

static void observe(strategy *s, const strategy_result *r)
{
    (void)s;   /* the sample is drawn up front */
    (void)r;
}

static void fini(strategy *s)
{
    sample *x = s->state;
    if (x)
        free(x->idx);
    free(x);
    s->state = NULL;
}

/* The rest of the sample, in its order. */
static int ahead(strategy *s, int *idx, int max)
{
    sample *x = s->state;
    int k = 0;
    for (int i = x->next; i < x->n && k < max; i++)
        idx[k++] = x->idx[i];
    return k;
}

const strategy_ops strategy_random = {"random", planned, init, next, observe, fini, ahead};
