/*
 * split.c - `redtune --split`: the longest-processing-time-first rule over the cases'
 * estimated costs (split.h). Each GPU's process runs it on the same costs and keeps the
 * cases it gets; no process tells another anything.
 */
#include <stdlib.h>
#include "split.h"

/* The costliest first; equal costs in the order of the cases. */
static int by_cost(const void *a, const void *b, void *arg)
{
    const double *cost = arg;
    int i = *(const int *)a, j = *(const int *)b;
    if (cost[i] != cost[j])
        return cost[i] > cost[j] ? -1 : 1;
    return (i > j) - (i < j);
}

int split_assign(const double *cost, int ncases, int k, int *owner)
{
    if (ncases <= 0)
        return 0;
    int *order = malloc((size_t)ncases * sizeof *order);
    double *load = calloc((size_t)(k > 0 ? k : 1), sizeof *load);
    if (!order || !load) {
        free(order);
        free(load);
        return -1;
    }
    for (int i = 0; i < ncases; i++)
        order[i] = i;
    qsort_r(order, (size_t)ncases, sizeof *order, by_cost, (void *)cost);
    for (int r = 0; r < ncases; r++) {
        int least = 0;
        for (int s = 1; s < k; s++)
            if (load[s] < load[least])
                least = s;
        owner[order[r]] = least;
        load[least] += cost[order[r]];
    }
    free(order);
    free(load);
    return 0;
}
