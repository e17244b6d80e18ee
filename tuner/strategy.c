/*
 * strategy.c - what the search strategies share (strategy.h): the table of them by name,
 * the full repetition rule, and the seeded random numbers that make a draw reproducible.
 */
#include <string.h>
#include "strategy.h"

_Static_assert(STORE_FULL_REPS == STRATEGY_FULL_MIN,
               "best considers the measurements of the full repetition rule");

const strategy_ops *strategy_find(const char *name)
{
    static const strategy_ops *const all[] = {
        &strategy_exhaustive, &strategy_random, &strategy_halving, &strategy_local,
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!strcmp(all[i]->name, name))
            return all[i];
    return NULL;
}

long strategy_budget(long budget, double pct, int n)
{
    if (!(pct > 0) || n <= 0)
        return budget;
    /* pct * n before the division: exact for a whole percentage, so 20% of 80 is 16 where
     * 0.2 * 80 would round up to 17; the margin keeps a fraction's binary error (0.1%) from
     * rounding up a whole result either. */
    double x = pct * n / 100;
    long k = (long)x;
    if (x - (double)k > x * 1e-12)
        k++;
    return k < 1 ? 1 : k > n ? n : k;
}

long strategy_budget_min(long budget, double pct, long min, int n)
{
    long k = strategy_budget(budget, pct, n);
    if (pct > 0 && n > 0 && min > k)
        k = min < n ? min : n;
    return k;
}

strategy_pick strategy_full(int ci)
{
    return (strategy_pick){ci, STRATEGY_FULL_MIN, STRATEGY_FULL_MAX, STRATEGY_FULL_BUDGET_S};
}

uint64_t strategy_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int strategy_shuffle(const strategy_case *cs, int *idx)
{
    int k = 0;
    for (int i = 0; i < cs->n; i++)
        if (cs->c[i].rc == RT_OK)
            idx[k++] = i;
    uint64_t st = cs->seed ^ (uint64_t)cs->size * 0xd1b54a32d192ed03ULL;
    for (int i = k - 1; i > 0; i--) {   /* Fisher-Yates */
        int j = (int)(strategy_rand(&st) % (uint64_t)(i + 1));
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    return k;
}

void strategy_side_add(strategy_side *s, int j, long long n, long long case_n)
{
    if (n < case_n && (s->below < 0 || n > s->nb))
        s->below = j, s->nb = n;
    else if (n > case_n && (s->above < 0 || n < s->na))
        s->above = j, s->na = n;
}

int strategy_side_other(const strategy_side *s, int start)
{
    int other = start < 0 ? -1 : start == s->below ? s->above : start == s->above ? s->below : -1;
    return other == start ? -1 : other;
}
