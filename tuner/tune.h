/*
 * tune.h - `redtune --op OP`: the tuning run's options and its entry point.
 */
#ifndef RT_TUNE_H
#define RT_TUNE_H

#include "../runtime/err.h"
#include "../runtime/optype.h"
#include "axisdata.h"
#include "opfile.h"

#define TUNE_MAX_PROFILES 8
#define TUNE_MAX_SHAPES 32    /* --axis --shapes: shapes of one run */

typedef struct tune_opts {
    int device;
    rt_op op;
    rt_type type;
    const opfile *user;       /* a user-defined operator (--op-file): op and type unused */
    const char *families;     /* --family: comma-separated families to keep; NULL: all */
    const long long *sizes;
    int nsizes;
    const char *space_path;   /* NULL: the embedded default space */
    const char *db_path;
    int hot;
    int jobs;
    int verbose;
    int deterministic;        /* only families declared @deterministic yes */
    unsigned long long seed;
    const char *cmdline;
    const char *self_exe;     /* the program to exec as the worker */
    int layout;               /* SEG_LAYOUT_FLAT, _KEYS, _OFFSETS, _AXIS (segdata.h) */
    int profiles[TUNE_MAX_PROFILES];   /* segmented: the segment profiles to tune */
    int nprofiles;
    int off64;                /* segmented offsets: 64-bit */
    axis_shape shapes[TUNE_MAX_SHAPES];   /* --axis: the shapes to tune, a case each (the
                                           * sizes are unused: n = outer * len * inner) */
    int nshapes;
    const char *strategy;     /* --strategy (strategy.h); NULL: STRATEGY_DEFAULT */
    long budget;              /* --budget N: configs per case; 0: no limit */
    double budget_s;          /* --budget Ns: seconds per case; 0: no limit */
    double budget_pct;        /* --budget P%: that share of each case's configs, in (0, 100]
                               * (strategy_budget turns it into a count); 0: none */
    long budget_min;          /* --budget P%,N: that share, but at least N configs; 0: none */
    unsigned long long strategy_seed;   /* --strategy-seed (default 1): the draws of random
                                         * and halving, apart from the data's --seed */
    int split_index, split_count;   /* --split (tuner/devices.c): this GPU is share
                                     * split_index of split_count identical GPUs, which
                                     * divide the cases by cost (split.h); split_count <= 1:
                                     * it tunes every case */
    const unsigned char *split_owned;   /* set by tune_run from the two above: nonzero for
                                         * the cases of this share; NULL: every case */
} tune_opts;

/* Whether case 'ci' (group index x nsizes + size index) is this run's under --split. */
#define TUNE_OWNS_CASE(o, ci) (!(o)->split_owned || (o)->split_owned[ci])

/* The cases of a run are groups (one for flat, the profiles of a segmented run, the shapes
 * of an axis run) x sizes (one per axis shape: its n); case ci = group x tune_nsizes + size. */
static inline int tune_groups(const tune_opts *o)
{
    return o->layout == SEG_LAYOUT_FLAT ? 1 : o->layout == SEG_LAYOUT_AXIS ? o->nshapes
                                                                         : o->nprofiles;
}

static inline int tune_nsizes(const tune_opts *o)
{
    return o->layout == SEG_LAYOUT_AXIS ? 1 : o->nsizes;
}

/* The n of case (group gi, size si). */
static inline long long tune_size(const tune_opts *o, int gi, int si)
{
    return o->layout == SEG_LAYOUT_AXIS ? (long long)axisdata_n(&o->shapes[gi]) : o->sizes[si];
}

/* The bytes per element a case of 'o' (element type t) keeps on the GPU: the input, and for
 * a segmented case its key or offset and its share of the partials. */
static inline double tune_bytes_per_elem(const tune_opts *o, rt_type t)
{
    size_t esize = optype_size(t), acc = o->user ? esize : optype_acc_size(o->op, t);
    int segmented = o->layout == SEG_LAYOUT_KEYS || o->layout == SEG_LAYOUT_OFFSETS;
    return (double)esize + (segmented ? 4 + (double)acc : 0);
}

/* The operator's name, the type and whether the operator commutes, for the case of 'o'. */
void tune_case(const tune_opts *o, const char **op, rt_type *type, int *commutes);

/* `redtune --op ...`: tune, store, print the table. */
int tune_run(const tune_opts *o, rt_err *e);

#endif
