/*
 * replay.h - `redtune replay`: a search strategy run again, without a GPU, over the
 * measurements of an exhaustive tuning run (a database, or the CSV of `redtune measurements
 * --format csv`). Each case's candidates are the configs measured for it, in the order they
 * were measured (a database's) or listed (a CSV's); each pick the strategy makes is answered
 * with the stored measurement. What it prints per case: the config the strategy would have
 * chosen, its median against the best median of all, and how many of the case's configs it
 * timed, so that a strategy and a budget are judged on every stored case in a second
 * (docs/tuning.md, "Replaying a strategy"). Run-to-run noise comes in with --judge (a second
 * sweep of the same cases); the true tuning time only from the GPU's own run
 * (tools/strategy_quality.sh).
 */
#ifndef RT_REPLAY_H
#define RT_REPLAY_H

#include <stdint.h>
#include <stdio.h>
#include "../runtime/err.h"
#include "strategy.h"

typedef struct replay_opts {
    const char *const *files;    /* databases and CSV files (told apart by their first bytes) */
    int nfiles;
    const strategy_ops *strategy;
    long budget;                 /* --budget N (0: none) */
    double budget_pct;           /* --budget P% (0: none) */
    long budget_min;             /* --budget P%,N: at least N configs (0: none) */
    uint64_t seed;               /* --strategy-seed */
    const char *op, *type;       /* filters (NULL: any) */
    int csv;                     /* CSV rows instead of the table */
    int verbose;                 /* -v: each pick, its config and stored median, on stderr */
    const char *judge;           /* --judge FILE: another sweep of the same cases (NULL: none),
                                  * where the chosen config's time is judged against that
                                  * sweep's best: the noise a replay of one sweep cannot see */
    const char *prior;           /* --prior FILE: a database (NULL: none) whose winners stand
                                  * for those a tuning database would hold before the run (a
                                  * similar GPU's, or the shipped ones): local search starts
                                  * from the prior's winner of the same case at the nearest
                                  * size where the replay has chosen none of that case yet */
} replay_opts;

/* The goal of issue 12 that the verdict column judges: the chosen config within 3% of the
 * best, with at most 20% of the configs timed (a replay's stand-in for the tuning time). */
#define REPLAY_GOAL_QUALITY 1.03
#define REPLAY_GOAL_SHARE 0.20

/*
 * Replay o->strategy over every case of the files into 'out'. RT_OK; RT_EDB for a database
 * (or a --prior) that is refused (*refused = 1); RT_EIO for a CSV that cannot be read and RT_EINVAL naming
 * FILE:LINE for one that is not of measurements (*refused = 2); RT_ENOTFOUND when no row is
 * of a config this build knows.
 */
int replay_run(const replay_opts *o, FILE *out, int *refused, rt_err *e);

#endif
