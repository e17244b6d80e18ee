/*
 * tune.c - `redtune --op OP`: the tuning run, from the first worker to the table.
 *
 * The worker (session.c) comes first, for the device the space is expanded for; order
 * matters for "loses nothing": the space is expanded (and so checked) and a user operator
 * tried before the database is opened. Then the candidates are compiled, the read yardstick
 * measured, and the cases run (sweep.c, with the strategy of strategy.h), each measurement
 * committed as it is made, so a rerun skips what is already there; the report (report.c)
 * closes the run.
 */
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../runtime/codegen.h"
#include "../runtime/nvrtc.h"
#include "../runtime/optype.h"
#include "cands.h"
#include "report.h"
#include "segdata.h"
#include "session.h"
#include "space.h"
#include "split.h"
#include "strategy.h"
#include "sweep.h"
#include "tune.h"

/* The name, type and commutativity of the case of 'o'. */
void tune_case(const tune_opts *o, const char **op, rt_type *type, int *commutes)
{
    *op = o->user ? o->user->op.name : rt_op_name(o->op);
    *type = o->user ? o->user->op.type : o->type;
    *commutes = o->user ? o->user->op.commutative : optype_commutes(o->op);
}

/* The database must not hold measurements of another operator of the same name: best is
 * chosen per operator name, and two definitions would compete in it. */
static int check_definition(store *s, const opfile *u, rt_err *e)
{
    char id[RT_USER_OP_ID], marker[128], hash[RT_HASH_HEX];
    codegen_user_op_id(&u->op, id);
    snprintf(marker, sizeof marker, "/* redtune: user operator %s, definition %s */",
             u->op.name, id);
    int found, rc = store_op_kernel_without(s, u->op.name, marker, hash, &found, e);
    if (rc == RT_OK && found)
        rc = rt_seterr(e, RT_EINVAL, "%s: %s holds measurements of another operator named '%s' "
                       "(kernel %.16s has another identity, combine or commutativity); rename "
                       "the operator, or tune into another database", u->op.file, store_path(s),
                       u->op.name, hash);
    return rc;
}

/* The configs the strategy plans for case ci: of all ncfg, or of its axis shape's gn[]. */
static long case_planned(const tune_opts *o, const strategy_ops *search, int ncfg,
                         const int *gn, int ci)
{
    int nc = o->layout == SEG_LAYOUT_AXIS ? gn[ci / tune_nsizes(o)] : ncfg;
    return search->planned(nc, strategy_budget_min(o->budget, o->budget_pct, o->budget_min, nc));
}

/* --split: which of the run's cases are this GPU's share (split.h). A case's cost is the
 * configs the strategy plans for it, each reading the case's bytes (tune_bytes_per_elem, as
 * the sweep's fit check counts them). */
static int split_share(const tune_opts *o, const strategy_ops *search, int ncfg, const int *gn,
                       rt_type t, unsigned char **owned, rt_err *e)
{
    int ncases = tune_groups(o) * tune_nsizes(o), nsz = tune_nsizes(o);
    double per_elem = tune_bytes_per_elem(o, t);
    double *cost = malloc((size_t)ncases * sizeof *cost);
    int *owner = malloc((size_t)ncases * sizeof *owner);
    int rc = RT_OK;
    *owned = calloc((size_t)ncases, 1);
    if (!cost || !owner || !*owned) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory dividing %d cases for --split", ncases);
        goto done;
    }
    for (int ci = 0; ci < ncases; ci++)
        cost[ci] = split_case_cost(case_planned(o, search, ncfg, gn, ci),
                                   (double)tune_size(o, ci / nsz, ci % nsz) * per_elem);
    if (split_assign(cost, ncases, o->split_count, owner)) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory dividing %d cases for --split", ncases);
        goto done;
    }
    for (int ci = 0; ci < ncases; ci++)
        (*owned)[ci] = owner[ci] == o->split_index;
done:
    free(cost);
    free(owner);
    if (rc) {
        free(*owned);
        *owned = NULL;
    }
    return rc;
}

int tune_run(const tune_opts *o, rt_err *e)
{
    int rc = RT_OK;
    const char *space_name;
    space_for_layout(o->layout, &space_name);
    if (o->space_path)
        space_name = o->space_path;
    rt_config *cfgs = NULL;
    int ncfg = 0;
    cand *c = NULL;
    store *s = NULL;
    session w = SESSION_INIT(o->device, o->self_exe);
    long long run_id = 0, device_id = 0;
    const char *op;
    rt_type t;
    int commutes;
    char skipped[1024] = "";
    int *gidx[TUNE_MAX_SHAPES] = {0}, gn[TUNE_MAX_SHAPES] = {0};   /* axis: each shape's */
    int axis = o->layout == SEG_LAYOUT_AXIS;
    unsigned char *split_owned = NULL;
    tune_opts split_opts;
    tune_case(o, &op, &t, &commutes);
    const char *type = rt_type_name(optype_elem(t));   /* the element type: a spec has no name */

    /* The search strategy: the one seam where another plugs in (strategy.h). */
    const strategy_ops *search = strategy_find(o->strategy ? o->strategy : STRATEGY_DEFAULT);
    if (!search) {
        rc = rt_seterr(e, RT_EINVAL, "unknown strategy '%s' (known: %s)", o->strategy,
                       STRATEGY_NAMES);
        goto done;
    }
    signal(SIGPIPE, SIG_IGN);
    if ((rc = session_start(&w, e)))
        goto done;
    char arch[16];
    device_arch(&w.dev, arch);
    /* An axis run expands the space per shape (Lua sees the shape) and compiles the union. */
    if ((rc = axis ? cands_expand_axis(o->space_path, o->families, o->deterministic, &w.dev, op,
                                       t, commutes, o->shapes, o->nshapes, &cfgs, &ncfg, gidx,
                                       gn, skipped, sizeof skipped, e)
                   : cands_expand(o->space_path, o->families, o->deterministic, &w.dev, op, t,
                                  commutes, o->layout, o->off64, &cfgs, &ncfg, skipped,
                                  sizeof skipped, e)) ||
        (rc = nvrtc_load(e)))
        goto done;
    if (o->user && (rc = session_operator(&w, o->user, arch, o->seed, e)))
        goto done;
    if ((rc = store_open(o->db_path, STORE_WRITE, &s, e)))
        goto done;
    if (o->user && (rc = check_definition(s, o->user, e)))
        goto done;
    printf("redtune: %s (%s, %d SMs, %.0f MiB L2), driver %d, NVRTC %d\n", w.dev.name, arch,
           w.dev.sm_count, w.dev.l2_bytes / 1048576.0, w.dev.driver_version, nvrtc_version());

    /* Compile ahead of the GPU work, reusing stored CUBINs; a strategy that picks a share
     * of the space (any but exhaustive) has the rest compiled as it picks them (sweep.c). */
    int lazy = search != &strategy_exhaustive;
    double t0 = report_now();
    if ((rc = o->user ? cands_make_user(cfgs, ncfg, &o->user->op, &c, e)
                      : cands_make(cfgs, ncfg, o->op, t, &c, e)))
        goto done;
    int compiled = 0, failed = 0, reused;
    if ((rc = lazy ? cands_reuse(c, ncfg, arch, s, &reused, e)
                   : cands_compile(c, ncfg, arch, o->jobs, s, &compiled, &failed, e)))
        goto done;
    if (lazy)
        printf("redtune: %d configs from %s: reused %d from the database, the others compiled "
               "as the search picks them (%d threads)\n", ncfg, space_name, reused, o->jobs);
    else
        printf("redtune: %d configs from %s: compiled %d, reused %d from the database, %d "
               "failed (%.1f s, %d threads)\n", ncfg, space_name, compiled,
               ncfg - compiled - failed, failed, report_now() - t0, o->jobs);
    if (skipped[0])
        printf("redtune: left out, since '%s' does not commute: %s\n", op, skipped);
    for (int i = 0; i < ncfg; i++)
        if (c[i].rc)
            cands_say_failed(&c[i]);

    double read_gbps;
    if ((rc = session_bandwidth(&w, arch, &read_gbps, e)))
        goto done;
    printf("redtune: measured read bandwidth %.1f GB/s (%.0f%% of the %.0f GB/s the memory "
           "clock and bus allow)\n", read_gbps, 100 * read_gbps / device_peak_gbps(&w.dev),
           device_peak_gbps(&w.dev));
    if ((rc = store_put_device(s, &w.dev, read_gbps, &device_id, e)) ||
        (rc = store_begin_run(s, device_id, o->cmdline, nvrtc_version(), &run_id, e)))
        goto done;

    int ncases = tune_groups(o) * tune_nsizes(o), owned = 0;
    long planned = 0;
    if (o->split_count > 1) {
        if ((rc = split_share(o, search, ncfg, gn, t, &split_owned, e)))
            goto done;
        split_opts = *o;
        split_opts.split_owned = split_owned;
        o = &split_opts;
    }
    for (int ci = 0; ci < ncases; ci++)
        if (TUNE_OWNS_CASE(o, ci)) {
            owned++;
            planned += case_planned(o, search, ncfg, gn, ci);
        }
    if (o->split_count > 1)
        printf("redtune: --split: %d of the %d cases here (share %d of %d), the others on "
               "identical GPUs\n", owned, ncases, o->split_index + 1, o->split_count);
    progress pg = {report_now(), 0, isatty(2), 0, planned, 0};
    sweep sw = {o, search, &w, s, c, ncfg, lazy, arch, op, t, device_id, run_id, read_gbps, &pg,
                axis ? gidx : NULL, gn};
    if ((rc = sweep_run(&sw, e)))
        goto done;
    report_progress(&pg, "done", 1);
    report_progress_clear(&pg);
    if (!pg.tty)
        fprintf(stderr, "\n");
    if ((rc = store_end_run(s, run_id, e)))
        goto done;

    if (lazy)
        printf("redtune: compiled %ld configs as the search picked them, %ld failed (%.1f s, "
               "%d threads)\n", pg.compiled, pg.failed, pg.compile_s, o->jobs);
    rc = report_table(s, o, op, type, &w.dev, arch, read_gbps, e);
    double sweep_s = report_now() - pg.t0 - pg.compile_s;
    printf("%d configs measured in this run, %.2f s; database %s\n", (int)pg.measured, sweep_s,
           o->db_path);
    if (pg.measured)
        printf("redtune: of the %.2f s: data %.2f s, checking candidates %.2f s, timing them "
               "%.2f s, the worker's messages %.2f s, the database %.2f s, the rest %.2f s\n",
               sweep_s, pg.data_s, pg.check_s, pg.timing_s,
               fmax(0, pg.call_s - pg.check_s - pg.timing_s), pg.store_s,
               fmax(0, sweep_s - pg.data_s - pg.call_s - pg.store_s));
done:
    session_close(&w);
    cands_free(c, ncfg);
    free(cfgs);
    for (int g = 0; g < TUNE_MAX_SHAPES; g++)
        free(gidx[g]);
    free(split_owned);
    store_close(s);
    return rc;
}
