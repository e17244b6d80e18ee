/*
 * strategy_halving.c - successive halving (strategy.h). Round 0 times every compiled
 * candidate (or a seeded sample of 'budget' of them) briefly, with 3 repetitions; the best
 * third by median goes on to a round of 9 repetitions, and so on, until three or fewer are
 * left: those are timed at the full repetition rule, the last round. A candidate that fails
 * (fault, wrong, timeout) drops out at once.
 *
 * What is stored: every timing, with its repetition count, as it is made; a survivor's row
 * is replaced by its later, more repeated timing, so the row of a candidate is its last.
 * Best considers only rows of the full rule (store_tune.h), so a briefly timed loser never
 * wins on a lucky median of 3. A rerun ranks on what the database holds (each candidate's
 * latest timing), and measures only what a round asks for that the database does not hold at
 * the round's repetitions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategy.h"

#define ETA 3            /* keep 1/ETA per round; ETA or fewer: the final round */
#define BRIEF_REPS 3     /* round 0 */
#define MID_REPS 9       /* later rounds before the final one: below STRATEGY_FULL_MIN */

typedef struct halving {
    int *alive;          /* this round's candidates */
    int na;
    int pos;             /* the next of alive to offer */
    int round;
    double *med;         /* each candidate's last median; INFINITY: failed or not timed */
    int have_full;       /* a candidate has an ok timing at the full rule */
    int confirmed;       /* time was up and the leader got its full timing */
    int done;
} halving;

static long planned(int n, long budget)
{
    long a = budget > 0 && budget < n ? budget : n, total = 0;
    for (;;) {
        total += a;
        if (a <= ETA)
            return total;
        a = (a + ETA - 1) / ETA;
    }
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static void fini(strategy *s)
{
    halving *h = s->state;
    if (h) {
        free(h->alive);
        free(h->med);
    }
    free(h);
    s->state = NULL;
}

static int init(strategy *s, const strategy_case *cs, rt_err *e)
{
    halving *h = calloc(1, sizeof *h);
    size_t n = (size_t)(cs->n ? cs->n : 1);
    s->state = h;
    if (!h || !(h->alive = malloc(sizeof *h->alive * n)) || !(h->med = malloc(sizeof *h->med * n))) {
        fini(s);
        return rt_seterr(e, RT_ENOMEM, "out of memory for the search of n = %lld", cs->size);
    }
    for (int i = 0; i < cs->n; i++)
        h->med[i] = INFINITY;
    int k = strategy_shuffle(cs, h->alive);
    if (cs->budget > 0 && cs->budget < k)
        k = (int)cs->budget;
    qsort(h->alive, (size_t)k, sizeof *h->alive, cmp_int);   /* the space's order */
    h->na = k;
    return RT_OK;
}

static int final_round(const halving *h)
{
    return h->na <= ETA;
}

/* The round's candidates ranked by median (a stable insertion sort: ties keep the space's
 * order), the failed ones dropped, then the best third kept. */
static void end_round(halving *h)
{
    int k = 0;
    for (int i = 0; i < h->na; i++) {
        int c = h->alive[i], j = k++;
        if (!isfinite(h->med[c])) {
            k--;
            continue;
        }
        while (j > 0 && h->med[h->alive[j - 1]] > h->med[c]) {
            h->alive[j] = h->alive[j - 1];
            j--;
        }
        h->alive[j] = c;
    }
    if (final_round(h) || k == 0) {
        h->done = 1;
        return;
    }
    h->na = (k + ETA - 1) / ETA;
    h->pos = 0;
    h->round++;
}

/* When time is up: the best of what this round has timed (or of the last round's ranking,
 * which alive is in) gets a full timing, unless one has it already. */
static int confirm(halving *h, strategy_pick *p)
{
    if (h->have_full || h->confirmed)
        return 0;
    int lead = -1;
    for (int i = 0; i < h->na; i++) {
        int c = h->alive[i];
        if (isfinite(h->med[c]) && (lead < 0 || h->med[c] < h->med[lead]))
            lead = c;
    }
    if (lead < 0)
        return 0;
    h->confirmed = 1;
    *p = strategy_full(lead);
    return 1;
}

static int next(strategy *s, int time_up, strategy_pick *p)
{
    halving *h = s->state;
    if (time_up && !h->done) {
        h->done = 1;
        return confirm(h, p);
    }
    if (h->confirmed)
        return 0;
    while (!h->done && h->pos >= h->na)
        end_round(h);
    if (h->done)
        return 0;
    int c = h->alive[h->pos++];
    if (final_round(h))
        *p = strategy_full(c);
    else {
        int reps = h->round == 0 ? BRIEF_REPS : MID_REPS;
        *p = (strategy_pick){c, reps, reps, 0};
    }
    return 1;
}

static void observe(strategy *s, const strategy_result *r)
{
    halving *h = s->state;
    int ok = r->m && r->m->status && !strcmp(r->m->status, "ok");
    h->med[r->cand] = ok ? r->m->median_us : INFINITY;
    if (ok && (final_round(h) || h->confirmed) && r->m->reps >= STRATEGY_FULL_MIN)
        h->have_full = 1;
}

/* The rest of this round (the first round holds every candidate the case will time). */
static int ahead(strategy *s, int *idx, int max)
{
    halving *h = s->state;
    int k = 0;
    for (int i = h->pos; !h->done && i < h->na && k < max; i++)
        idx[k++] = h->alive[i];
    return k;
}

const strategy_ops strategy_halving = {"halving", planned, init, next, observe, fini, ahead};
