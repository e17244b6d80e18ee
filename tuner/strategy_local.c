/*
 * strategy_local.c - local search (strategy.h): from the best known config of the case
 * (cs->start: the best at the nearest size on a GPU of this one's name, else a similar
 * device's, else a similar case's, found by the run; cs->start2, the best on the other side
 * of the size, is where it starts again first), time its neighbours, move to the best of
 * them while it beats the current one, and stop at a local optimum or the budget. With
 * nothing known, the centre of each family of the space (its parameters' median values) is
 * timed first and the search starts from the best of them.
 *
 * A neighbour is a candidate the space produced (so the space stays the one description of
 * what is legal) that differs from the current one in one parameter by one step of the
 * values the space has for it: the next lower and next higher value among the candidates
 * that agree in every other parameter. Every other family of the space is a neighbour too,
 * through its candidate that agrees with the current one in the most parameters of the same
 * name (of those, the nearest the family's centre, then the first). A neighbour that takes at
 * most LEAP of the current config's time (the lesser of its median and its fastest run) is
 * moved to at once, without timing the rest of the neighbourhood. After a move, the steps
 * that shortened the time in the last neighbourhood (the same parameter, the same direction)
 * are timed first, the most helpful first, then the rest in their order: a budget often ends
 * inside a neighbourhood. There the budget's last pick takes every step of the neighbourhood
 * that helped at once (for a parameter, its better direction), when two or more did and the
 * space has that candidate. Every pick is timed at the
 * full rule, so best compares like with like. A start that fails with no neighbour that
 * works restarts from the next untimed candidate in the space's order. With a budget of
 * configs (--budget N or P%) left at a local optimum the search starts again (multi-start):
 * from the centres timed first with nothing known, the fastest first (each is a family's
 * start that only lost to a better one), then from the first untimed candidate of the family
 * with the fewest timed so far (the space's order on a tie), so that a budget is spent
 * across the families rather than left unused in one basin; without a budget it stops at the
 * first local optimum.
 *
 * Why each rule (replays of stored exhaustive runs with `redtune replay`, docs/tuning.md):
 * when only the families before and after the current one in the space's order were its
 * neighbours, a search in tree_sequential could not reach gridstride past oneblock (1.37x off
 * the best at 2^16); from the space's first config with nothing known, argmax spent a quarter
 * of its budget in the tree families and a segmented case's first basin was 1.4-3x the best;
 * and a case whose best is three steps from a far worse start (offsets len3: 53 -> 14 us in
 * one step) ran out of budget timing the rest of the first neighbourhood. The step into
 * another family landed on the space's first candidate sharing B, tree_sequential's slowest
 * (sum f64 2^10: 7.6 us against 4.2), until the centre broke the tie: in the nineteenth
 * session's small-n sweeps 56 of 84 cases met issue 12's goal before, 73 after. A start
 * whose one timing was a burst (34.8 us, min 7.4) leapt away from its best neighbour (max f64
 * 2^13: 1.098x the best); LEAP against the fastest run: local:18%,6 80 of 84, worst 1.046.
 * The steps that helped first (thirty-ninth session; tools/replay_corpora.sh, 290 cases):
 * 12%,6 246 -> 251, 15%,6 255 -> 255, 18%,6 265 -> 266, no corpus worse; the live sweep of
 * that day at 18%,6 17 -> 18 of 19 (worst 1.113 -> 1.062). Moving at once at 0.7-0.9 of the
 * time instead (LEAP) lost cases at every budget. The other centres as the first restarts
 * (tools/replay_corpora.sh, 309 cases): offsets `one` of the thirty-ninth and fortieth
 * sessions' live sweeps settled in seg_stream (1.06x) and started again in seg_lb's first
 * untimed config (B=128 MP=1), never reaching the MP=0 one step from seg_lb's centre on the
 * way to the best: 12%,6 268 -> 268, 15%,6 272 -> 273, 18%,6 284 -> 286, no corpus worse
 * (nor at 10%,6, 20%,6, 12%,5 or 18%,5). The last pick's combined steps (forty-sixth session,
 * 347 cases): keys rand10_50's budget of 11 ended in seg_lb's centre neighbourhood, where
 * B = 256, R = 8 and KW each helped alone (1.11x the best); together 1.065x: 12%,6 299 -> 300,
 * 15%,6 305 -> 306, 18%,6 323 -> 324, no case worse. The same step at the end of every
 * neighbourhood (before the move) was mixed: 300, 308, 322.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategy.h"

#define MAXQ (2 * RT_MAX_PARAMS + 64)   /* the parameters' steps and the other families */
#define MAXSEEDS 64
#define LEAP 0.5   /* a neighbour this much faster is moved to at once */

typedef struct local {
    const cand *c;
    int n;
    long budget;         /* picks at most; 0: n */
    long picks;
    double *med;         /* the median of a timed candidate; INFINITY: failed or untimed */
    double *lo;          /* the lesser of its median and its fastest run (LEAP's yardstick);
                          * INFINITY: failed or untimed */
    char *timed;         /* offered already */
    const rt_family **fam;   /* the families in the space's order */
    long long (*centre)[RT_MAX_PARAMS];   /* fam[f]'s parameters' median values, over the
                                           * candidates not failed at the start (init) */
    int nfam;
    int cur;             /* the current config; -1 before the start */
    int q[MAXQ], nq, qi, built;   /* the current config's neighbours */
    double gain[RT_MAX_PARAMS][2];   /* the last neighbourhood's time ratio of a step of
                                      * parameter p down (0) or up (1), < 1 where it helped;
                                      * 1 when not timed (learn) */
    const rt_family *gain_fam;       /* the family gain[] is of; NULL: none */
    int start;
    int seeds[MAXSEEDS], nseeds, si;   /* nothing known: each family's centre first */
    int again[MAXSEEDS], nagain;       /* the other seeds: where to start again first */
    int done;
} local;

static int centre_of(const local *x, int f);
static int medians_of(const local *x, const rt_family *f, long long *med);
static double centre_dist(const rt_config *b, const long long *med);

static long planned(int n, long budget)
{
    return budget > 0 && budget < n ? budget : n;
}

static void fini(strategy *s)
{
    local *x = s->state;
    if (x) {
        free(x->med);
        free(x->lo);
        free(x->timed);
        free(x->fam);
        free(x->centre);
    }
    free(x);
    s->state = NULL;
}

static int init(strategy *s, const strategy_case *cs, rt_err *e)
{
    local *x = calloc(1, sizeof *x);
    size_t n = (size_t)(cs->n ? cs->n : 1);
    s->state = x;
    if (!x || !(x->med = malloc(sizeof *x->med * n)) || !(x->lo = malloc(sizeof *x->lo * n))
        || !(x->timed = calloc(n, 1))
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
        x->med[i] = x->lo[i] = INFINITY;
        if (cs->c[i].rc != RT_OK)
            continue;
        int k = 0;
        while (k < x->nfam && x->fam[k] != cs->c[i].cfg.family)
            k++;
        if (k == x->nfam)
            x->fam[x->nfam++] = cs->c[i].cfg.family;
    }
    int ok = !!(x->centre = malloc(sizeof *x->centre * (size_t)(x->nfam ? x->nfam : 1)));
    for (int f = 0; ok && f < x->nfam; f++)
        ok = medians_of(x, x->fam[f], x->centre[f]);
    if (!ok) {
        fini(s);
        return rt_seterr(e, RT_ENOMEM, "out of memory for the search of n = %lld", cs->size);
    }
    int s2 = cs->start2 >= 0 && cs->start2 < cs->n && cs->c[cs->start2].rc == RT_OK
             && cs->start2 != x->start ? cs->start2 : -1;
    if (x->start < 0)   /* a start that cannot run: the winner on the other side instead */
        x->start = s2;
    else if (s2 >= 0)   /* the first restart: the winner on the other side */
        x->again[x->nagain++] = s2;
    for (int f = 0; x->start < 0 && f < x->nfam && x->nseeds < MAXSEEDS; f++) {
        int j = centre_of(x, f);   /* nothing known: each family's centre first */
        if (j >= 0)
            x->seeds[x->nseeds++] = j;
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

/* The candidate of family fam[fi] that agrees with 'a' in the most parameters of the same
 * name; among those, the nearest the family's centre (centre_dist), then the first. */
static int closest_in(const local *x, int fi, const rt_config *a)
{
    const rt_family *f = x->fam[fi];
    int best = -1, best_agree = -1;
    double best_d = 0;
    for (int j = 0; j < x->n; j++) {
        const rt_config *b = &x->c[j].cfg;
        if (x->c[j].rc != RT_OK || b->family != f)
            continue;
        int agree = 0;
        for (int k = 0; k < f->nparams; k++)
            for (int l = 0; l < a->family->nparams; l++)
                if (!strcmp(f->params[k].name, a->family->params[l].name))
                    agree += b->values[k] == a->values[l];
        double d = centre_dist(b, x->centre[fi]);
        if (agree > best_agree || (agree == best_agree && d < best_d))
            best = j, best_agree = agree, best_d = d;
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

/* Before a move from x->cur: what each timed step of its neighbourhood did to its time
 * (x->gain), so that the next neighbourhood times those steps first (order_by_gain). */
static void learn(local *x)
{
    const rt_config *a = &x->c[x->cur].cfg;
    x->gain_fam = a->family;
    for (int p = 0; p < RT_MAX_PARAMS; p++)
        x->gain[p][0] = x->gain[p][1] = 1;
    if (!isfinite(x->med[x->cur]))
        return;
    for (int i = 0; i < x->nq; i++) {
        const rt_config *b = &x->c[x->q[i]].cfg;
        if (!isfinite(x->med[x->q[i]]) || b->family != a->family)
            continue;
        for (int p = 0; p < a->family->nparams; p++)
            if (differ_in(a, b, p)) {
                double r = x->med[x->q[i]] / x->med[x->cur];
                int up = b->values[p] > a->values[p];
                if (r < x->gain[p][up])
                    x->gain[p][up] = r;
            }
    }
}

/* The steps of x->cur's neighbourhood that helped in the last one (x->gain < 1) first, the
 * most helpful first; the rest in their order. */
static void order_by_gain(local *x)
{
    const rt_config *a = &x->c[x->cur].cfg;
    double key[MAXQ];
    if (x->gain_fam != a->family)
        return;
    for (int i = 0; i < x->nq; i++) {
        const rt_config *b = &x->c[x->q[i]].cfg;
        key[i] = 1;
        for (int p = 0; b->family == a->family && p < a->family->nparams; p++)
            if (differ_in(a, b, p))
                key[i] = x->gain[p][b->values[p] > a->values[p]];
    }
    for (int i = 1; i < x->nq; i++)   /* insertion sort: stable */
        for (int j = i; j > 0 && key[j] < key[j - 1]; j--) {
            double t = key[j];
            key[j] = key[j - 1];
            key[j - 1] = t;
            int u = x->q[j];
            x->q[j] = x->q[j - 1];
            x->q[j - 1] = u;
        }
}

/* The candidate that takes, from x->cur, each step of its neighbourhood timed so far that
 * shortened the time (for a parameter, the direction that helped most), when two or more
 * parameters helped and the space has it untimed; else -1. */
static int combined(const local *x)
{
    const rt_config *a = &x->c[x->cur].cfg;
    long long want[RT_MAX_PARAMS];
    double r[RT_MAX_PARAMS];
    int steps = 0;
    if (!isfinite(x->med[x->cur]))
        return -1;
    for (int p = 0; p < a->family->nparams; p++) {
        want[p] = a->values[p];
        r[p] = 1;
    }
    for (int i = 0; i < x->nq; i++) {
        const rt_config *b = &x->c[x->q[i]].cfg;
        if (!isfinite(x->med[x->q[i]]) || b->family != a->family)
            continue;
        for (int p = 0; p < a->family->nparams; p++)
            if (differ_in(a, b, p) && x->med[x->q[i]] / x->med[x->cur] < r[p]) {
                steps += r[p] == 1;
                r[p] = x->med[x->q[i]] / x->med[x->cur];
                want[p] = b->values[p];
            }
    }
    if (steps < 2)
        return -1;
    for (int j = 0; j < x->n; j++) {
        const rt_config *b = &x->c[j].cfg;
        if (x->c[j].rc != RT_OK || b->family != a->family)
            continue;
        int p = 0;
        while (p < a->family->nparams && b->values[p] == want[p])
            p++;
        if (p == a->family->nparams)
            return x->timed[j] ? -1 : j;
    }
    return -1;
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
            add(x, closest_in(x, f, a));
    order_by_gain(x);
    x->built = 1;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Each parameter's median value among family f's compiled candidates into med; 0 when out
 * of memory (f has at least one: init lists the families of compiled candidates). */
static int medians_of(const local *x, const rt_family *f, long long *med)
{
    long most = 0;
    for (int j = 0; j < x->n; j++)
        most += x->c[j].rc == RT_OK && x->c[j].cfg.family == f;
    long long *v = malloc(sizeof *v * (size_t)(most ? most : 1));
    if (!v)
        return 0;
    for (int p = 0; p < f->nparams; p++) {
        long k = 0;
        for (int j = 0; j < x->n; j++)
            if (x->c[j].rc == RT_OK && x->c[j].cfg.family == f)
                v[k++] = x->c[j].cfg.values[p];
        qsort(v, (size_t)k, sizeof *v, cmp_ll);
        med[p] = v[k / 2];
    }
    free(v);
    return 1;
}

/* How far config b is from its family's medians: 100 a parameter that differs, plus the
 * log-distance of the two values. */
static double centre_dist(const rt_config *b, const long long *med)
{
    double d = 0;
    for (int p = 0; p < b->family->nparams; p++) {
        long long u = b->values[p], w = med[p];
        d += u != w ? 100 + (u > 0 && w > 0 ? fabs(log2((double)u / (double)w)) : 1) : 0;
    }
    return d;
}

/* The candidate of family fam[fi] nearest its centre, x->centre[fi] (fewest differing
 * parameters, then the smallest sum of log-distances to the medians; the space's order on a
 * tie), or -1. */
static int centre_of(const local *x, int fi)
{
    const rt_family *f = x->fam[fi];
    int best = -1;
    double best_d = 0;
    for (int j = 0; j < x->n; j++) {
        if (x->c[j].rc != RT_OK || x->c[j].cfg.family != f)
            continue;
        double d = centre_dist(&x->c[j].cfg, x->centre[fi]);
        if (best < 0 || d < best_d)
            best = j, best_d = d;
    }
    return best;
}

/* The fastest of the seeds not started from yet (x->again), taken off the list, or -1. */
static int next_seed(local *x)
{
    if (!x->nagain)
        return -1;
    int b = 0;
    for (int i = 1; i < x->nagain; i++)
        if (x->med[x->again[i]] < x->med[x->again[b]])
            b = i;
    int j = x->again[b];
    x->again[b] = x->again[--x->nagain];
    return j;
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
            if (x->si < x->nseeds) {
                int j = x->seeds[x->si++];
                if (!x->timed[j])
                    return offer(x, j, p);
                continue;
            }
            if (x->nseeds) {   /* the seeds timed: start from their best, once */
                int b = x->seeds[0];
                for (int i = 1; i < x->nseeds; i++)
                    if (x->med[x->seeds[i]] < x->med[b])
                        b = x->seeds[i];
                x->start = isfinite(x->med[b]) ? b : -1;
                for (int i = 0; i < x->nseeds; i++)   /* the others: later starts */
                    if (x->seeds[i] != b && isfinite(x->med[x->seeds[i]]))
                        x->again[x->nagain++] = x->seeds[i];
                x->nseeds = 0;
            }
            x->cur = x->start >= 0 ? x->start : untimed(x);
            x->built = 0;
            if (x->cur < 0)
                break;
        }
        if (!x->timed[x->cur])
            return offer(x, x->cur, p);
        if (!x->built)
            neighbours(x);
        /* a neighbour far better than the current config (than its fastest run: a median
         * raised by a burst of slow runs leaps at nothing): go on from it at once */
        if (x->qi > 0 && x->med[x->q[x->qi - 1]] < x->lo[x->cur] * LEAP) {
            learn(x);
            x->cur = x->q[x->qi - 1];
            x->built = 0;
            continue;
        }
        /* the budget's last pick inside a neighbourhood: every step that helped at once */
        if (x->budget < x->n && x->picks == x->budget - 1 && x->qi < x->nq) {
            int j = combined(x);
            if (j >= 0)
                return offer(x, j, p);
        }
        while (x->qi < x->nq)
            if (!x->timed[x->q[x->qi++]])
                return offer(x, x->q[x->qi - 1], p);
        int best = x->cur;
        for (int i = 0; i < x->nq; i++)
            if (x->med[x->q[i]] < x->med[best])
                best = x->q[i];
        if (best != x->cur) {
            learn(x);
            x->cur = best;
            x->built = 0;
            continue;
        }
        if (isfinite(x->med[x->cur])) {   /* a local optimum */
            if (x->budget >= x->n
                || ((x->cur = next_seed(x)) < 0 && (x->cur = restart(x)) < 0))
                break;   /* no budget given, or nothing left */
            x->built = 0;
            x->gain_fam = NULL;   /* another basin: what helped here says nothing there */
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
    x->lo[r->cand] = ok && r->m->min_us > 0 ? fmin(r->m->min_us, x->med[r->cand])
                                            : x->med[r->cand];
    x->timed[r->cand] = 1;
}

/* The seeds not yet timed, else the current config's neighbours not yet timed: what it
 * times before it moves (unless a neighbour far better comes first, LEAP), as many as the
 * budget has picks left. Right after the current config's own pick, its neighbourhood is
 * built here, as next() would build it. */
static int ahead(strategy *s, int *idx, int max)
{
    local *x = s->state;
    int k = 0;
    if (x->done)
        return 0;
    if (max > x->budget - x->picks)   /* no more than the budget lets it pick */
        max = (int)(x->budget - x->picks);
    if (x->cur < 0) {
        for (int i = x->si; i < x->nseeds && k < max; i++)
            if (!x->timed[x->seeds[i]])
                idx[k++] = x->seeds[i];
        return k;
    }
    if (!x->built && x->timed[x->cur])
        neighbours(x);
    for (int i = x->built ? x->qi : x->nq; i < x->nq && k < max; i++)
        if (!x->timed[x->q[i]])
            idx[k++] = x->q[i];
    return k;
}

const strategy_ops strategy_local = {"local", planned, init, next, observe, fini, ahead};
