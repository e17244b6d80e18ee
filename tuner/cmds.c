/*
 * cmds.c - the commands besides tuning: emit, families, compile, best, export, merge, dump,
 * load. Each is a caller only: of the candidate set (cands.h), the space (space.h), the store,
 * and tune_case for the case of the options; nothing here is called back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../runtime/codegen.h"
#include "../runtime/driver.h"
#include "../runtime/nvrtc.h"
#include "../runtime/optype.h"
#include "cands.h"
#include "space.h"
#include "tune.h"
#include "tuner.h"

int cmd_emit(const rt_config *c, rt_op op, rt_type type, const opfile *user, rt_err *e)
{
    char *src;
    int rc = user ? codegen_emit_user(c, &user->op, &src, e) : codegen_emit(c, op, type, &src, e);
    if (rc)
        return rc;
    fputs(src, stdout);
    free(src);
    return RT_OK;
}

int cmd_families(void)
{
    for (int i = 0; i < family_count(); i++) {
        const rt_family *f = family_at(i);
        printf("%s  (%s)\n  %s\n  plan: %s; needs a commutative operator: %s; deterministic: %s%s\n",
               f->name, f->file, f->summary, family_plan_name(f->plan),
               f->needs_commutative ? "yes" : "no", f->deterministic ? "yes" : "no",
               f->balanced < 0 ? "" : f->balanced ? "; balanced: yes (any segment lengths)"
                                                  : "; balanced: no (a group per segment)");
        for (int k = 0; k < f->nparams; k++)
            printf("  %-10s default %-6lld %s\n", f->params[k].name, f->params[k].def,
                   f->params[k].doc);
        printf("\n");
    }
    return RT_OK;
}

int cmd_compile(const char *arch, const tune_opts *o, const char *db, rt_err *e)
{
    store *st = NULL;
    rt_device dev;
    char devarch[16];
    int rc;
    if (arch) {
        if ((rc = device_for_arch(arch, &dev, e)))
            return rc;
    } else if ((rc = driver_device_query(0, &dev, e))) {
        char why[512];
        snprintf(why, sizeof why, "%s", e->msg);
        return rt_seterr(e, rc, "no --arch given and no GPU to take it from: %s", why);
    }
    device_arch(&dev, devarch);
    const char *op, *name;
    space_for_layout(o->layout, &name);
    if (o->space_path)
        name = o->space_path;
    rt_type type;
    int commutes;
    tune_case(o, &op, &type, &commutes);
    rt_config *cfgs = NULL;
    int n = 0;
    cand *c = NULL;
    char skipped[1024];
    if (o->layout == SEG_LAYOUT_AXIS) {   /* every shape's configs, compiled once */
        int *idx[TUNE_MAX_SHAPES], nidx[TUNE_MAX_SHAPES];
        rc = cands_expand_axis(o->space_path, o->families, o->deterministic, &dev, op, type,
                               commutes, o->shapes, o->nshapes, &cfgs, &n, idx, nidx, skipped,
                               sizeof skipped, e);
        for (int g = 0; rc == RT_OK && g < o->nshapes; g++)
            free(idx[g]);
    } else {
        rc = cands_expand(o->space_path, o->families, o->deterministic, &dev, op, type,
                          commutes, o->layout, o->off64, &cfgs, &n, skipped, sizeof skipped, e);
    }
    if (rc)
        goto done;
    if (skipped[0])
        printf("left out, since '%s' does not commute: %s\n", op, skipped);
    if (o->user) {   /* the operator itself first: one clear error rather than one per config */
        nvrtc_output ref;
        rc = cands_compile_reference(o->user, devarch, &ref, e);
        nvrtc_output_free(&ref);
        if (rc)
            goto done;
    }
    if ((rc = o->user ? cands_make_user(cfgs, n, &o->user->op, &c, e)
                      : cands_make(cfgs, n, o->op, type, &c, e)))
        goto done;
    if (db && (rc = store_open(db, STORE_WRITE, &st, e)))
        goto done;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int compiled, failed;
    if ((rc = cands_compile(c, n, devarch, o->jobs, st, &compiled, &failed, e)))
        goto done;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (int i = 0; i < n; i++) {
        if (c[i].rc)
            printf("FAILED %s %s:\n%s\n", c[i].cfg.family->name, c[i].params, c[i].err);
        else if (o->verbose)
            printf("ok     %s %-30s %6zu bytes  %s\n", c[i].cfg.family->name, c[i].params,
                   c[i].cubin_size, c[i].hash);
    }
    printf("compiled %d configs of %s for %s (%s %s, NVRTC %d): %d ok, %d failed, %.1f s on %d threads\n",
           n, name, devarch, op, rt_type_name(type), nvrtc_version(), compiled, failed,
           (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9, o->jobs);
    if (failed)
        rc = rt_seterr(e, RT_ENVRTC, "%d of %d configs failed to compile for %s", failed, n, devarch);
done:
    store_close(st);
    cands_free(c, n);
    free(cfgs);
    return rc;
}

typedef struct best_arg {
    int rows;
    const char *acc;   /* --acc: only rows accumulated in it; NULL: any */
} best_arg;

static int best_row(const store_best_row *r, void *arg)
{
    best_arg *b = arg;
    if (b->acc && strcmp(r->acc, b->acc))
        return 0;
    if (b->rows++ == 0)
        printf("%-28s %-6s %-8s %-4s %-4s %-6s %-17s %-5s %12s  %-18s %-30s %10s %9s %7s %5s "
               "%10s\n", "device", "arch", "op", "type", "acc", "result", "layout", "L2", "n",
               "family", "params", "time(us)", "GB/s", "%read", "det", "seg.mean");
    char mean[32] = "";
    if (r->nseg)
        snprintf(mean, sizeof mean, "%.1f", r->seg_mean);
    printf("%-28.28s %-6s %-8s %-4s %-4s %-6s %-17s %-5s %12lld  %-18s %-30s %10.2f %9.1f %6.1f%% "
           "%5s %10s\n", r->device_name, r->arch, r->op, r->type, r->acc, r->result, r->layout,
           r->hot ? "hot" : "flush", r->n,
           r->family, r->params, r->median_us, r->gbps, 100 * r->frac_bw,
           r->deterministic < 0 ? "?" : r->deterministic ? "yes" : "no", mean);
    return 0;
}

int cmd_best(const char *db_path, const char *device_match, const char *op, const char *type,
             const char *acc, long long n, int *refused, rt_err *e)
{
    store *s;
    int rc = store_open(db_path, STORE_READ, &s, e);
    *refused = rc == RT_EDB;
    if (rc)
        return rc;
    best_arg b = {0, acc};
    rc = store_list_best(s, device_match, op, type, n, best_row, &b, e);
    if (rc == RT_OK && b.rows == 0)
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: nothing stored as best%s", db_path,
                       op || type || acc || n > 0 || device_match ? " for that filter" : "");
    store_close(s);
    return rc;
}

/* "3 devices, 120 best entries, ..." of an output. */
static void print_counts(const char *what, const char *out, const store_ship_stats *st)
{
    printf("%s %s: %lld device%s, %lld best entries, %lld kernels, %lld CUBINs, "
           "%lld measurements, %lld runs\n", what, out, st->devices,
           st->devices == 1 ? "" : "s", st->best, st->kernels, st->binaries, st->measurements,
           st->runs);
    if (st->left_out)
        printf("left out: %lld best entries of the inputs that no verified measurement of "
               "theirs backs\n", st->left_out);
}

int cmd_export(const char *db, const char *const *match, int nmatch, int with_measurements,
               const char *out, int force, store_ship_stats *st, rt_err *e)
{
    int rc = store_export(db, match, nmatch, with_measurements, out, force, st, e);
    if (rc == RT_OK)
        print_counts("exported into", out, st);
    return rc;
}

int cmd_merge(const char *const *in, int nin, const char *out, int force,
              store_ship_stats *st, rt_err *e)
{
    int rc = store_merge(in, nin, out, force, st, e);
    if (rc == RT_OK)
        print_counts("merged into", out, st);
    return rc;
}

int cmd_load(const char *const *in, int nin, const char *out, int force,
             store_ship_stats *st, rt_err *e)
{
    int rc = store_load(in, nin, out, force, st, e);
    if (rc == RT_OK)
        print_counts("loaded into", out, st);
    return rc;
}

int cmd_dump(const char *db, const char *out, int force, store_ship_stats *st, rt_err *e)
{
    char *text = NULL;
    size_t len = 0;
    int rc = RT_OK;
    memset(st, 0, sizeof *st);
    if (out && (rc = store_check_output(out, force, &db, 1, e)) != RT_OK)
        return rc;   /* before the input is read */
    rc = store_dump(db, &text, &len, st, e);
    if (rc == RT_OK && out) {
        if ((rc = store_write_output(out, text, len, force, &db, 1, e)) == RT_OK)
            print_counts("dumped into", out, st);
    } else if (rc == RT_OK && (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)) {
        rc = rt_seterr(e, RT_EIO, "dump: writing to stdout failed");
    }
    free(text);
    return rc;
}
