/*
 * strategy_local.c - local search (strategy.h): from the best known config of the case
 * (cs->start: this device's best at the nearest size, else a similar device's, found by the
 * run; else the space's first compiled candidate), time its neighbours, move to the best of
 * them while it beats the current one, and stop at a local optimum or the budget.
 *
 * A neighbour is a candidate the space produced (so the space stays the one description of
 * what is legal) that differs from the current one in one parameter by one step of the
 * values the space has for it: the next lower and next higher value among the candidates
 * that agree in every other parameter. Every other family of the space is a neighbour too,
 * through its candidate that agrees with the current one in the most parameters of the same
 * name (the first such): when the family was a parameter whose neighbours were the families
 * before and after it in the space's order, a search that started in tree_sequential could
 * not reach gridstride past oneblock, and replays of the stored exhaustive runs (`redtune
 * replay`, docs/tuning.md) ended 1.37x off the best at 2^16; with every family one step
 * away, 1.06x at worst.
 * Every pick is timed at the full rule, so best compares like with like. A start that fails
 * with no neighbour that works restarts from the next untimed candidate in the space's order.
 * With a budget of configs (--budget N or P%) left at a local optimum the search starts again
 * (multi-start), from the first
 * untimed candidate of the family with the fewest timed so far (the space's order on a tie),
 * so that a budget is spent across the families rather than left unused in one basin
 * (tools/strategy_quality.sh: from an empty database a segmented case's first basin was 3x
 * the exhaustive best); without a budget it stops at the first local optimum.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategy.h"

#define MAXQ (2 * RT_MAX_PARAMS + 64)

typedef struct local {
    const cand *c;
    int n;
    long budget;         /* picks at most; 0: n */
    long picks;
    double *med;         /* the median of a timed candidate; INFINITY: failed or untimed */
    char *timed;         /* offered already */
    const rt_family **fam;   /* the families in the space's order */
    int nfam;
    int cur;             /* the current config; -1 before the start */
    int q[MAXQ], nq, qi, built;   /* the current config's neighbours */
    int start;
    int done;
} local;

static long planned(int n, long budget)
{
    return budget > 0 && budget < n ? budget : n;
}

static void fini(strategy *s)
{
    local *x = s->state;
    if (x) {
        free(x->med);
        free(x->timed);
        free(x->fam);
    }
    free(x);
    s->state = NULL;
}

static int init(strategy *s, const strategy_case *cs, rt_err *e)
{
    local *x = calloc(1, sizeof *x);
    size_t n = (size_t)(cs->n ? cs->n : 1);
    s->state = x;
    if (!x || !(x->med = malloc(sizeof *x->med * n)) || !(x->timed = calloc(n, 1))
        || !(x->fam = malloc(sizeof *x->fam * n))) {
        fini(s);
        return rt_seterr(e, RT_ENOMEM, "out of memory for the search of n = %lld", cs->size);
    }
    x->c = cs->c;
    x->n = cs->n;
    x->budget = planned(cs->n, cs->budget);
    x->cur = -1;
    x->start = cs->start >= 0 && cs->start < cs->n && cs->c[cs->start].rc == RT_OK ? cs->start
                                                                                : -1;
    for (int i = 0; i < cs->n; i++) {
        x->med[i] = INFINITY;
        if (cs->c[i].rc != RT_OK)
            continue;
        int k = 0;
        while (k < x->nfam && x->fam[k] != cs->c[i].cfg.family)
            k++;
        if (k == x->nfam)
            x->fam[x->nfam++] = cs->c[i].cfg.family;
    }
    return RT_OK;
}

/* 1 when configs a and b differ in parameter p alone. */
static int differ_in(const rt_config *a, const rt_config *b, int p)
{
    if (a->family != b->family)
        return 0;
    for (int k = 0; k < a->family->nparams; k++)
        if ((k == p) == (a->values[k] == b->values[k]))
            return 0;
    return 1;
}

/* The candidate of family f that agrees with 'a' in the most parameters of the same name. */
static int closest_in(const local *x, const rt_family *f, const rt_config *a)
{
    int best = -1, best_agree = -1;
    for (int j = 0; j < x->n; j++) {
        const rt_config *b = &x->c[j].cfg;
        if (x->c[j].rc != RT_OK || b->family != f)
            continue;
        int agree = 0;
        for (int k = 0; k < f->nparams; k++)
            for (int l = 0; l < a->family->nparams; l++)
                if (!strcmp(f->params[k].name, a->family->params[l].name))
                    agree += b->values[k] == a->values[l];
        if (agree > best_agree)
            best = j, best_agree = agree;
    }
    return best;
}

static void add(local *x, int j)
{
    if (j < 0 || j == x->cur)
        return;
    for (int i = 0; i < x->nq; i++)
        if (x->q[i] == j)
            return;
    if (x->nq < MAXQ)
        x->q[x->nq++] = j;
}

/* The neighbours of x->cur into x->q. */
static void neighbours(local *x)
{
    const rt_config *a = &x->c[x->cur].cfg;
    x->nq = x->qi = 0;
    for (int p = 0; p < a->family->nparams; p++) {
        int lo = -1, hi = -1;
        long long v = a->values[p];
        for (int j = 0; j < x->n; j++) {
            const rt_config *b = &x->c[j].cfg;
            if (x->c[j].rc != RT_OK || !differ_in(a, b, p))
                continue;
            long long w = b->values[p];
            if (w < v && (lo < 0 || w > x->c[lo].cfg.values[p]))
                lo = j;
            if (w > v && (hi < 0 || w < x->c[hi].cfg.values[p]))
                hi = j;
        }
        add(x, lo);
        add(x, hi);
    }
    for (int f = 0; f < x->nfam; f++)
        if (x->fam[f] != a->family)
            add(x, closest_in(x, x->fam[f], a));
    x->built = 1;
}

/* The first compiled candidate not offered yet, or -1. */
static int untimed(const local *x)
{
    for (int j = 0; j < x->n; j++)
        if (x->c[j].rc == RT_OK && !x->timed[j])
            return j;
    return -1;
}

/* A restart: the first untimed candidate of the family with the fewest timed candidates
 * (the space's order on a tie), or -1 when every one is timed. */
static int restart(const local *x)
{
    int best = -1;
    long fewest = -1;
    for (int f = 0; f < x->nfam; f++) {
        long timed = 0;
        int first = -1;
        for (int j = 0; j < x->n; j++) {
            if (x->c[j].rc != RT_OK || x->c[j].cfg.family != x->fam[f])
                continue;
            if (x->timed[j])
                timed++;
            else if (first < 0)
                first = j;
        }
        if (first >= 0 && (fewest < 0 || timed < fewest)) {
            fewest = timed;
            best = first;
        }
    }
    return best;
}

static int offer(local *x, int j, strategy_pick *p)
{
    x->timed[j] = 1;
    x->picks++;
    *p = strategy_full(j);
    return 1;
}

static int next(strategy *s, int time_up, strategy_pick *p)
{
    local *x = s->state;
    if (time_up)
        x->done = 1;
    if (x->done || x->picks >= x->budget)
        return 0;
    for (;;) {
        if (x->cur < 0) {
            x->cur = x->start >= 0 ? x->start : untimed(x);
            x->built = 0;
            if (x->cur < 0)
                break;
        }
        if (!x->timed[x->cur])
            return offer(x, x->cur, p);
        if (!x->built)
            neighbours(x);
        while (x->qi < x->nq)
            if (!x->timed[x->q[x->qi++]])
                return offer(x, x->q[x->qi - 1], p);
        int best = x->cur;
        for (int i = 0; i < x->nq; i++)
            if (x->med[x->q[i]] < x->med[best])
                best = x->q[i];
        if (best != x->cur) {
            x->cur = best;
            x->built = 0;
            continue;
        }
        if (isfinite(x->med[x->cur])) {   /* a local optimum */
            if (x->budget >= x->n || (x->cur = restart(x)) < 0)
                break;   /* no budget given, or nothing left */
            x->built = 0;
            continue;
        }
        x->start = -1;   /* nothing around the start works: the next untimed candidate */
        x->cur = -1;
        if (untimed(x) < 0)
            break;
    }
    x->done = 1;
    return 0;
}

static void observe(strategy *s, const strategy_result *r)
{
    local *x = s->state;
    int ok = r->m && r->m->status && !strcmp(r->m->status, "ok");
    x->med[r->cand] = ok ? r->m->median_us : INFINITY;
    x->timed[r->cand] = 1;
}

const strategy_ops strategy_local = {"local", planned, init, next, observe, fini};
