/*
 * sweep.c - the cases of a tuning run (sweep.h). Each measurement is committed as it is
 * made, so a rerun skips what is already there; a worker that dies or hangs on a candidate
 * is replaced and prepared again, and the case goes on with the next pick.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/optype.h"
#include "proto.h"
#include "segdata.h"
#include "sweep.h"

typedef struct known {
    const cand *c;
    int ncfg;
    long long n;
    double dist;        /* |log n - log row n| of the nearest row so far */
    int start;
} known;

/* The candidate whose config is the row's (same kernel, else the same family and parameters:
 * a space edited since may still hold it), or -1. */
static int row_cand(const known *k, const store_best_row *r)
{
    for (int i = 0; i < k->ncfg; i++)
        if (k->c[i].rc == RT_OK && (!strcmp(k->c[i].hash, r->kernel_hash)
                                    || (!strcmp(k->c[i].cfg.family->name, r->family)
                                        && !strcmp(k->c[i].params, r->params))))
            return i;
    return -1;
}

/* Candidate i (-1: none) as k's start when its row, of size n, is nearer than the last. */
static void known_nearer(known *k, int i, long long n)
{
    double d = fabs(log((double)n) - log((double)k->n));
    if (i >= 0 && (k->start < 0 || d < k->dist))
        k->start = i, k->dist = d;
}

/* A best row whose config is a candidate of this case, nearer in size than the last. */
static int known_row(const store_best_row *r, void *arg)
{
    known *k = arg;
    known_nearer(k, row_cand(k, r), r->n);
    return 0;
}

/* What the best rows of GPUs of this one's name (this one's own included) tell of the case,
 * in one pass over the table (known_best):
 *   named: the case itself (operator, type spec, layout, regime), the nearest in size, and sd
 *          the nearest on each side of the case's size (local's second start);
 *   k:     a similar case, the same layout and regime with another operator or type, nearer
 *          in input bytes than the last;
 *   like:  for a segmented case, the same operator and types segmented the same way over
 *          another profile whose mean segment length is within SEG_LIKE times the case's
 *          (segdata_layout_mean), the nearest in it.
 * Each only where the row's config is a candidate of this case. */
typedef struct similar {
    known named, k, like;
    strategy_side sd;
    const char *device, *layout, *op, *type, *acc, *result;
    int hot;
    double bytes, mean;   /* mean: the case's mean segment length; 0 for flat or axis */
} similar;

/* The row's operator and type spec are the case's. */
static int same_spec(const store_best_row *r, const similar *x)
{
    return !strcmp(r->op, x->op) && !strcmp(r->type, x->type)
           && !strcmp(*r->acc ? r->acc : r->type, x->acc)
           && !strcmp(*r->result ? r->result : r->type, x->result);
}

static int similar_row(const store_best_row *r, void *arg)
{
    similar *x = arg;
    int i;
    if (r->hot != x->hot || strcmp(r->device_name, x->device))
        return 0;
    if (strcmp(r->layout, x->layout)) {
        /* The row's mean as its run measured it (best.seg_mean). */
        double m = x->mean > 0 && segdata_other_profile(r->layout, x->layout) && same_spec(r, x)
                   ? r->seg_mean : 0;
        double d = m > 0 ? fabs(log(m) - log(x->mean)) : INFINITY;
        if (d <= log(SEG_LIKE) && (x->like.start < 0 || d < x->like.dist)
            && (i = row_cand(&x->like, r)) >= 0)
            x->like.start = i, x->like.dist = d;
        return 0;
    }
    if (same_spec(r, x)) {
        if ((i = row_cand(&x->named, r)) >= 0)
            strategy_side_add(&x->sd, i, r->n, x->named.n);
        known_nearer(&x->named, i, r->n);
        return 0;
    }
    int t = optype_parse_type(r->type);
    double d = fabs(log((double)r->n * (double)(t < 0 ? 4 : optype_size((rt_type)t)))
                    - log(x->bytes));
    if ((x->k.start < 0 || d < x->k.dist) && (i = row_cand(&x->k, r)) >= 0)
        x->k.start = i, x->k.dist = d;
    return 0;
}

/* The names of the case's element, accumulator and result types, as the database keys it
 * (optype_resolve's elem, acc and res); a user operator's are its type's. */
static void case_types(const sweep *sw, const char **type, const char **acc,
                       const char **result)
{
    optype_ts ts;
    *type = *acc = *result = rt_type_name(optype_elem(sw->t));
    if (!sw->o->user && optype_resolve(sw->o->op, sw->t, &ts, NULL, 0) == 0) {
        *acc = rt_type_name(ts.acc);
        *result = rt_type_name(ts.res);
    }
}

/* The best known candidate for the case, for the local search to start from: the best row
 * at the nearest size of a GPU of this one's name (this one, or the same model tuned before:
 * a shipped database), and as *start2 the nearest on the other side of the case's size
 * (-1: none); else the nearest size of the most similar device the database holds
 * (store_find_device's fallback chain); else the nearest in input bytes of a similar case
 * of this GPU (another operator or type, the same layout and regime: `redtune replay` of the
 * stored exhaustive runs, docs/tuning.md); else, segmented, another profile's of like mean
 * length (similar_row); -1 when there is none. */
static int known_best(const sweep *sw, const cand *c, int ncfg, const char *layout, long long n,
                      int *start, int *start2, rt_err *e)
{
    known k = {c, ncfg, n, 0, -1};
    store_device_match dm;
    *start = *start2 = -1;
    const char *type, *acc, *result;
    case_types(sw, &type, &acc, &result);
    similar x = {k, k, k, STRATEGY_SIDE_NONE, sw->w->dev.name, layout, sw->op, type, acc,
                 result, sw->o->hot, (double)n * (double)optype_size(sw->t),
                 segdata_layout_mean(layout, (unsigned long long)n)};
    int rc = store_list_best(sw->s, NULL, NULL, NULL, 0, similar_row, &x, e);
    if (rc == RT_OK && x.named.start >= 0) {
        *start = x.named.start;
        *start2 = strategy_side_other(&x.sd, x.named.start);
        return RT_OK;
    }
    if (rc == RT_OK)
        rc = store_find_device_spec(sw->s, &sw->w->dev, sw->op, type, acc, result, layout,
                                    sw->o->hot, &dm, e);
    if (rc == RT_OK)
        rc = store_list_best_for_device_spec(sw->s, dm.id, sw->op, type, acc, result, layout,
                                             sw->o->hot, known_row, &k, e);
    else if (rc == RT_ENOTFOUND)
        rc = RT_OK;
    if (rc == RT_OK)
        *start = k.start >= 0 ? k.start : x.k.start >= 0 ? x.k.start : x.like.start;
    return rc;
}

/* A case's candidates as copies of some of sw->c's: c[k] = base[own[k]], n of them (c
 * malloc'd here; the copies' pointers, source and CUBIN, stay sw->c's to free). */
typedef struct view {
    cand *c;
    int *own;
    int n;
} view;

#define AHEAD_MAX 64   /* candidates compiled with a pick, at most */

/* sw->c's index of the case's candidate k: through the size's view 'fv' (when the size left
 * configs out, @max_n) and the shape's 'gv' (an axis run). */
static int owner(const view *gv, const view *fv, int k)
{
    int j = fv->c ? fv->own[k] : k;
    return gv->c ? gv->own[j] : j;
}

/* The copies again, after sw->c's entries gained CUBINs or compile errors. */
static void refresh(const sweep *sw, view *gv, view *fv)
{
    for (int k = 0; gv->c && k < gv->n; k++)
        gv->c[k] = sw->c[gv->own[k]];
    for (int k = 0; fv->c && k < fv->n; k++)
        fv->c[k] = gv->c ? gv->c[fv->own[k]] : sw->c[fv->own[k]];
}

/* A lazy run's pick 'i' has no CUBIN: compile it, and with it (on the run's threads) the
 * picks the strategy means to make next that have none either; store them; say what does
 * not compile. The time goes to pg->compile_s, not to the sweep's. */
static int compile_picked(const sweep *sw, strategy *st, int i, view *gv, view *fv, rt_err *e)
{
    int want[AHEAD_MAX + 1], next[AHEAD_MAX], nb = 0;
    want[nb++] = owner(gv, fv, i);
    int jobs = sw->o->jobs > 0 ? sw->o->jobs : 1;
    int max = 2 * jobs < 4 ? 4 : 2 * jobs > AHEAD_MAX ? AHEAD_MAX : 2 * jobs;
    int na = st->ops->ahead ? st->ops->ahead(st, next, max) : 0;
    for (int k = 0; k < na; k++) {
        int j = owner(gv, fv, next[k]), seen = 0;
        for (int b = 0; b < nb; b++)
            seen |= want[b] == j;
        if (!seen && !sw->c[j].cubin && sw->c[j].rc == RT_OK)
            want[nb++] = j;
    }
    int compiled, failed;
    double t0 = report_now();
    int rc = cands_compile_idx(sw->c, want, nb, sw->arch, jobs, sw->s, &compiled, &failed, e);
    sw->pg->compile_s += report_now() - t0;
    sw->pg->compiled += compiled;
    sw->pg->failed += failed;
    for (int b = 0; rc == RT_OK && b < nb; b++) {
        const cand *x = &sw->c[want[b]];
        if (x->rc == RT_OK)
            continue;
        report_progress_clear(sw->pg);
        cands_say_failed(x);
    }
    refresh(sw, gv, fv);
    return rc;
}

int sweep_run(const sweep *sw, rt_err *e)
{
    const tune_opts *o = sw->o;
    session *w = sw->w;
    store *s = sw->s;
    const char *op = sw->op;
    rt_type t = sw->t;
    const char *type, *acc, *result;
    char spec[96];
    case_types(sw, &type, &acc, &result);
    if (o->user)
        snprintf(spec, sizeof spec, "%s", type);
    else
        optype_spec_text(o->op, t, spec, sizeof spec);
    long long device_id = sw->device_id, run_id = sw->run_id;
    double read_gbps = sw->read_gbps;
    progress *pg = sw->pg;
    strategy st = {sw->strategy, NULL};
    int rc = RT_OK;
    int nprof = tune_groups(o), nsz = tune_nsizes(o);
    /* An axis case's candidates, its shape's expansion (own: sw->group_cands[pi]); a size's,
     * when a family's @max_n leaves some out (own malloc'd, into the shape's or sw->c). */
    view gv = {NULL, NULL, 0}, fv = {NULL, NULL, 0};
    size_t esize = optype_size(t);
    size_t acc_size = o->user ? esize : optype_acc_size(o->op, t);
    int segmented = o->layout == SEG_LAYOUT_KEYS || o->layout == SEG_LAYOUT_OFFSETS;
    double per_elem = tune_bytes_per_elem(o, t);   /* what must fit on the GPU per element */
    for (int pi = 0; pi < nprof; pi++) {
        char layout[96];
        report_layout(o, pi, layout, sizeof layout);
        /* The case's candidates: all of them, or those of the shape's own expansion. */
        const cand *cg = sw->c;
        int ncg = sw->ncfg;
        if (sw->group_cands) {
            free(gv.c);
            ncg = sw->group_ncands[pi];
            gv = (view){malloc((size_t)(ncg ? ncg : 1) * sizeof *gv.c), sw->group_cands[pi], ncg};
            if (!gv.c) {
                rc = rt_seterr(e, RT_ENOMEM, "out of memory for the candidates of %s", layout);
                goto done;
            }
            for (int k = 0; k < ncg; k++)
                gv.c[k] = sw->c[gv.own[k]];
            cg = gv.c;
        }
        long budget_g = strategy_budget_min(o->budget, o->budget_pct, o->budget_min,
                                            ncg);   /* the group's */
        for (int si = 0; si < nsz; si++) {
            long long n = tune_size(o, pi, si);
            if (!TUNE_OWNS_CASE(o, pi * nsz + si))
                continue;   /* another GPU's share (--split): not counted in the total */
            /* Families timed only up to their @max_n (oneblock: one SM cannot read more
             * quickly) are left out of larger sizes. */
            const cand *c = cg;
            int ncfg = ncg, nout = 0;
            for (int k = 0; k < ncg; k++)
                nout += cg[k].cfg.family->max_n && n > cg[k].cfg.family->max_n;
            free(fv.c);
            free(fv.own);
            fv = (view){NULL, NULL, 0};
            if (nout) {
                size_t nf = (size_t)(ncg - nout ? ncg - nout : 1);
                fv = (view){malloc(nf * sizeof *fv.c), malloc(nf * sizeof *fv.own), 0};
                if (!fv.c || !fv.own) {
                    rc = rt_seterr(e, RT_ENOMEM, "out of memory for the candidates of %s", layout);
                    goto done;
                }
                for (int k = 0; k < ncg; k++)
                    if (!(cg[k].cfg.family->max_n && n > cg[k].cfg.family->max_n)) {
                        fv.own[fv.n] = k;
                        fv.c[fv.n++] = cg[k];
                    }
                c = fv.c;
                ncfg = fv.n;
            }
            /* A share (--budget P%) of the configs this size times; the progress total
             * (tune.c) counted the group's, the difference is 'skipped'. */
            long budget = strategy_budget_min(o->budget, o->budget_pct, o->budget_min,
                                              ncfg);
            long skipped = st.ops->planned(ncg, budget_g) - st.ops->planned(ncfg, budget);
            /* An axis case's outputs, and their partials when len is split. */
            double extra = o->layout == SEG_LAYOUT_AXIS
                         ? (double)axisdata_outputs(&o->shapes[pi]) * (double)(acc_size + 16) : 0;
            char nbuf[32], what[160];
            report_fmt_n(n, nbuf, sizeof nbuf);
            if ((double)n * per_elem + extra > 0.45 * (double)w->dev.total_mem) {
                fprintf(stderr, "redtune: skipping n = %s: %.1f GiB of input does not fit beside "
                        "the buffers on this GPU\n", nbuf, n * (double)esize / (1 << 30));
                pg->done += st.ops->planned(ncg, budget_g);
                continue;
            }
            int prepared = 0;
            prepare_resp seg = {0};
            strategy_case sc = {c, ncfg, n, o->strategy_seed, budget, -1, -1};
            if (st.ops == &strategy_local
                && (rc = known_best(sw, c, ncfg, layout, n, &sc.start, &sc.start2, e)))
                goto done;
            if ((rc = st.ops->init(&st, &sc, e)))
                goto done;
            strategy_pick pick;
            long picks = 0, planned = st.ops->planned(ncfg, budget);
            double t_case = report_now(), c_case = pg->compile_s;
            /* The budget of seconds is per case and checked before each pick; the time spent
             * compiling picks is not the case's (exhaustive compiled before any case). */
            for (; st.ops->next(&st, o->budget_s > 0 && report_now() - t_case
                                     - (pg->compile_s - c_case) >= o->budget_s,
                                &pick); pg->done += picks++ < planned) {
                int i = pick.cand;
                strategy_result res = {i, STRATEGY_UNCOMPILED, NULL};
                snprintf(what, sizeof what, "[%s %s %s] n=%s %s", op, spec, layout, nbuf,
                         c[i].cfg.family->name);
                report_progress(pg, what, 0);
                if (c[i].rc) {
                    st.ops->observe(&st, &res);
                    continue;
                }
                /* Stored already: a failure whatever its repetitions, a timing with at least
                 * as many as the pick asks; one with fewer (a brief round's) is timed again. */
                int found = 0;
                char stored_status[16];
                store_measurement stored = {0};
                if ((rc = store_get_measurement(s, device_id, c[i].hash, op, type, acc, result,
                                                layout, n, o->hot, &stored, stored_status,
                                                &found, e)))
                    goto done;
                if (found && (strcmp(stored.status, "ok") || stored.reps >= pick.min_reps)) {
                    res.outcome = STRATEGY_STORED;
                    res.m = &stored;
                    st.ops->observe(&st, &res);
                    continue;
                }
                if (sw->lazy && !c[i].cubin) {
                    if ((rc = compile_picked(sw, &st, i, &gv, &fv, e)))
                        goto done;
                    if (c[i].rc) {
                        st.ops->observe(&st, &res);
                        continue;
                    }
                }
                if (!prepared) {
                    w->prepared = (prepare_req){t, o->user ? OP_USER : (int)o->op, (uint64_t)n,
                                                o->seed ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL,
                                                o->layout, segmented ? o->profiles[pi] : 0,
                                                o->off64, 0, 0, 0};
                    if (o->layout == SEG_LAYOUT_AXIS) {
                        w->prepared.outer = o->shapes[pi].outer;
                        w->prepared.len = o->shapes[pi].len;
                        w->prepared.inner = o->shapes[pi].inner;
                    }
                    w->has_prepared = 1;
                    char size[96];
                    snprintf(size, sizeof size, "n = %s (%s)", nbuf, layout);
                    double t_data = report_now();
                    if ((rc = session_prepare(w, &w->prepared, size, &seg, e)))
                        goto done;
                    pg->data_s += report_now() - t_data;
                    prepared = 1;
                }
                measure_req q = {c[i].cfg.family->plan, o->hot, pick.min_reps, pick.max_reps,
                                 pick.budget_s,
                                 o->seed ^ (uint64_t)(i + 1) * 0xd1b54a32d192ed03ULL ^ (uint64_t)n};
                measure_resp *mr = NULL;
                size_t len;
                /* Generous: verification of fresh inputs, 200 repetitions, and the flushes. */
                int timeout_ms = 60000 + (int)((n * per_elem + extra) / 1000000);
                double t_call = report_now();
                int r = session_call(w, MSG_MEASURE, &q, sizeof q, c[i].cubin, c[i].cubin_size,
                                    (void **)&mr, &len, timeout_ms);
                pg->call_s += report_now() - t_call;
                store_measurement m = {device_id, run_id, c[i].hash, op, type, layout, n, o->hot,
                                       "ok", "", 0, 0, 0, 0, 0, 0, 0, -1, (long long)seg.nseg,
                                       seg.mean, seg.spread, acc, result};
                if (r == 0) {
                    pg->check_s += mr->check_s;
                    pg->timing_s += mr->time_s;
                    m.status = mr->status;
                    m.message = mr->h.msg;
                    if (!strcmp(mr->status, "ok")) {
                        m.median_us = mr->median_us;
                        m.min_us = mr->min_us;
                        m.max_us = mr->max_us;
                        m.reps = mr->reps;
                        m.gbps = seg.bytes / (mr->median_us * 1e-6) / 1e9;
                        m.frac_bw = m.gbps / read_gbps;
                        m.verified = 1;
                        m.deterministic = mr->deterministic;
                    }
                } else {
                    m.status = r == -2 ? "timeout" : "fault";
                    m.message = r == -2 ? "the launch did not finish within the time limit; the worker was killed"
                                        : "the worker died while running this kernel";
                }
                if (strcmp(m.status, "ok") || o->verbose) {
                    report_progress_clear(pg);
                    if (strcmp(m.status, "ok"))
                        fprintf(stderr, "redtune: n=%s %s %s: %s: %s\n", nbuf, c[i].cfg.family->name,
                                c[i].params, m.status, m.message);
                    else
                        fprintf(stderr, "redtune: n=%s %-18s %-30s %10.2f us %8.1f GB/s %5.1f%%\n",
                                nbuf, c[i].cfg.family->name, c[i].params, m.median_us, m.gbps,
                                100 * m.frac_bw);
                }
                double t_store = report_now();
                rc = store_put_measurement(s, &m, e);
                pg->store_s += report_now() - t_store;
                if (rc == RT_OK) {
                    res.outcome = STRATEGY_MEASURED;
                    res.m = &m;
                    st.ops->observe(&st, &res);
                }
                free(mr);
                if (rc)
                    goto done;
                pg->measured++;
                if (w->pid <= 0 && (rc = session_start(w, e)))
                    goto done;
            }
            if (picks < planned)   /* a search that ended early: the case is done */
                pg->done += planned - picks;
            pg->done += skipped;   /* the configs @max_n left out */
            st.ops->fini(&st);
            rc = store_update_best_spec(s, device_id, op, type, acc, result, layout, n, o->hot,
                                        e);
            if (rc == RT_ENOTFOUND) {
                fprintf(stderr, "redtune: %s n=%s: no config passed verification\n", layout, nbuf);
                rc = RT_OK;
            } else if (rc) {
                goto done;
            }
        }
    }
done:
    st.ops->fini(&st);
    free(gv.c);
    free(fv.c);
    free(fv.own);
    return rc;
}
