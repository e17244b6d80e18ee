/*
 * api_seg.c - libredtune's segmented reductions (docs/segmented.md): rt_reduce_keys,
 * rt_reduce_offsets and rt_explain_segmented. The winner is the one nearest in n and mean
 * segment length, re-specialised for the offset width or unaligned pointers; one whose kernel
 * cannot be made here gives way to the built-in seg_lb (api_builtin_instead); RT_SEG_CHECK
 * runs a check kernel over the keys or offsets first.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "nvrtc.h"

#define SEG_FLAGS (RT_SEG_CHECK | RT_SEG_OFF64 | RT_SEG_SKEWED | RT_SEG_UNIFORM)

/* A load-balanced family (@balanced yes): a thread's work is bounded whatever the lengths. */
static int balanced(const char *family)
{
    const rt_family *f = family_find(family);
    return f && f->balanced == 1;
}

/* The stored winner nearest to (2^(nb + 0.5) elements, mean length 2^(mb / 2)) in log2; the
 * mean length counts twice, since it decides the algorithm and n mostly the grid. 'skewed'
 * (RT_SEG_SKEWED): load-balanced families only. NULL when none is left. */
static const best_entry *pick_seg(const choice *c, unsigned nb, int mb, int skewed)
{
    const best_entry *best = NULL;
    double tn = nb + 0.5, tm = mb / 2.0, dist = INFINITY;
    for (int i = 0; i < c->nrows; i++) {
        if (skewed && !balanced(c->rows[i].family))
            continue;
        double m = c->rows[i].seg_mean > 0 ? c->rows[i].seg_mean : 1;
        double d = fabs(log2((double)c->rows[i].n) - tn) + 2 * fabs(log2(m) - tm);
        if (d < dist) {
            dist = d;
            best = &c->rows[i];
        }
    }
    return best;
}

/* The winner for (n in [2^nb, 2^(nb+1)), mean length bucket mb): pick_seg among the answer of
 * the device row nearest this GPU; when that row's nearest winner has a mean length more than
 * a factor of about 2 from the call's ([2^(mb/2 - 1), 2^(mb/2 + 1.5)]: a row tuned for other
 * profiles only, as after `redtune --segmented ... --profiles rand10_50` on this GPU), the
 * winners of the nearest row that has one in that band (api_get_choice_mean), as the rows of
 * identical GPUs complete sizes (docs/api.md). *row NULL: the built-in default. */
int api_seg_pick(rt_ctx *ctx, int layout, rt_op op, rt_type type, unsigned nb, int mb,
                 int skewed, const choice **cp, const best_entry **row, rt_err *e)
{
    choice *c, *near;
    int rc;
    *cp = NULL;
    *row = NULL;
    if ((rc = api_get_choice(ctx, layout, op, type, &c, e)) != RT_OK)
        return rc;
    *cp = c;
    if (c->level == LEVEL_BUILTIN || !(*row = pick_seg(c, nb, mb, skewed)))
        return RT_OK;
    const double mlo = exp2(mb / 2.0 - 1), mhi = exp2(mb / 2.0 + 1.5);
    const double m = (*row)->seg_mean > 0 ? (*row)->seg_mean : 1;
    if (m >= mlo && m <= mhi)
        return RT_OK;
    if ((rc = api_get_choice_mean(ctx, layout, op, type, c, mb, mlo, mhi, &near, e)) != RT_OK)
        return rc;
    const best_entry *r = near ? pick_seg(near, nb, mb, skewed) : NULL;
    if (r) {
        *cp = near;
        *row = r;
    }
    return RT_OK;
}

/* A config from a family and a "NAME=V ..." string, with LAYOUT/OFF64 set, when the
 * pointers are not 16-byte aligned V = 1 (vector loads need alignment), and for 'uniform'
 * lengths (RT_SEG_UNIFORM) LONG = 0 (seg_per without its long-segment list, seg_pipe without
 * its block's pass over long segments). *changed = 1 when that differs from 'params'. */
int api_seg_config(const char *family, const char *params, int layout, int off64,
                   int aligned, int uniform, rt_config *cfg, int *changed, rt_err *e)
{
    const rt_family *f = family_find(family);
    if (!f || f->plan != PLAN_SEGMENTED)
        return rt_seterr(e, RT_EINVAL, "segmented family '%s' is not built into this library",
                         family);
    int rc = config_parse(f, params, cfg, e);
    if (rc)
        return rc;
    char before[256], after[256];
    config_format(cfg, before, sizeof before);
    rt_err ignore;
    config_set(cfg, "LAYOUT", layout, &ignore);
    config_set(cfg, "OFF64", off64, &ignore);
    if (!aligned)
        config_set(cfg, "V", 1, &ignore);   /* families without V ignore it */
    if (uniform)
        config_set(cfg, "LONG", 0, &ignore);   /* families without LONG ignore it */
    config_format(cfg, after, sizeof after);
    *changed = strcmp(before, after) != 0;
    return RT_OK;
}

/* The built-in default of a segmented case: load-balanced tiles, scalar loads, legal for every
 * op, type and layout. */
static int seg_builtin(int layout, int off64, rt_config *cfg, int *changed, rt_err *e)
{
    return api_seg_config("seg_lb", "B=256 R=8 V=1 STAGE=0 PERSIST=0", layout, off64, 0, 0,
                          cfg, changed, e);
}

/* RT_EINVAL for flags this library does not know, or RT_SEG_SKEWED with RT_SEG_UNIFORM. */
static int seg_flags_check(const char *fn, unsigned flags, rt_err *e)
{
    if (flags & ~(unsigned)SEG_FLAGS)
        return rt_seterr(e, RT_EINVAL, "%s: unknown flags 0x%x", fn, flags & ~(unsigned)SEG_FLAGS);
    if ((flags & RT_SEG_SKEWED) && (flags & RT_SEG_UNIFORM))
        return rt_seterr(e, RT_EINVAL, "%s: RT_SEG_SKEWED (the lengths may spread widely) and "
                         "RT_SEG_UNIFORM (they stay near their mean) contradict each other", fn);
    return RT_OK;
}

/* The decision of a segmented case, made (and its kernel loaded) the first time; while the
 * stream is capturing ('capturing' names the call) a case not made yet is RT_ECAPTURE. */
static int seg_decide(rt_ctx *ctx, int layout, int off64, int aligned, int skewed, int uniform,
                      rt_op op, rt_type type, unsigned long long n, unsigned long long nseg,
                      const char *capturing, seg_decision **out, rt_err *e)
{
    /* Only an offsets family gives a segment a group of threads (seg_per, its LONG): for keys
     * uniform lengths change nothing, and share the decision of a call that does not say. */
    uniform = uniform && layout == RT_LAYOUT_OFFSETS;
    unsigned nb = n ? api_bucket_of(n) : 0;
    double mean = nseg ? (double)n / (double)nseg : 1;
    int mb = mean > 1 ? (int)floor(2 * log2(mean)) : 0;
    seg_decision *d;
    optype_ts ts;
    /* Freed at done, which the lookup below jumps to: set before it. */
    char tnb[96], *why = NULL;
    int rc = RT_OK;
    /* Specs that resolve alike share a decision: keyed by the canonical spec. */
    rt_type canon = optype_resolve(op, type, &ts, NULL, 0) ? type : ts.canon;
    const char *tn = api_typename(op, type, tnb, sizeof tnb);   /* tnb unused for plain types */
    pthread_mutex_lock(&ctx->lock);
    for (d = ctx->seg_decisions; d; d = d->next)
        if (d->layout == layout && d->off64 == off64 && d->aligned == aligned
            && d->skewed == skewed && d->uniform == uniform && d->op == op && d->type == canon
            && d->nb == nb && d->mb == mb)
            goto done;
    if (capturing) {
        rc = rt_seterr(e, RT_ECAPTURE, "%s: %s %s n = %llu nseg = %llu: the stream is "
                       "capturing a CUDA graph, and the kernel for this case (n in [2^%u, "
                       "2^%u), mean segment length bucket %d%s) is not loaded yet (loading "
                       "it is synchronous and would break the capture): make one call of "
                       "this case before the capture (a warm-up)", capturing,
                       api_opname(ctx, op), tn, n, nseg, nb, nb + 1, mb,
                       aligned ? "" : ", unaligned pointers");
        goto done;
    }
    const choice *c;
    kernel *k = NULL;
    const best_entry *row = NULL, *passed = NULL;
    rt_config cfg, bcfg;
    char what[RT_NAME_MAX + 160], wparams[256 + 48];
    int changed = 0, bchanged;
    snprintf(what, sizeof what, "%s %s %s n in [2^%u, 2^%u), mean segment length in "
             "[2^%.1f, 2^%.1f)%s", layout == 1 ? "keys" : "offsets", api_opname(ctx, op),
             tn, nb, nb + 1, mb / 2.0, (mb + 1) / 2.0,
             skewed ? ", skewed lengths (load-balanced kernels only)"
             : uniform ? ", uniform lengths (no long-segment list)" : "");
    if ((rc = api_seg_pick(ctx, layout, op, type, nb, mb, skewed, &c, &row, e)) != RT_OK)
        goto done;
    if (row) {
        if ((rc = api_seg_config(row->family, row->params, layout, off64, aligned, uniform,
                                 &cfg, &changed, e)))
            goto done;
        /* Always the unit this library generates for the winner's config (winner_kernel). */
        rc = api_config_kernel(ctx, op, type, &cfg, API_WINNER, &k, e);
        /* Its kernel cannot be made here (the variant of the call never compiled when it was
         * tuned, say, OFF64=1 or V=1 or LONG=0; or no NVRTC): the built-in default serves the
         * case instead, and the decision says so. */
        if (rc == RT_ENVRTC) {
            config_format(&cfg, wparams, sizeof wparams);
            if (changed)
                strcat(wparams, " (re-specialised for this call)");
            passed = row;
            row = NULL;
            if ((rc = seg_builtin(layout, off64, &bcfg, &bchanged, e)) == RT_OK)
                rc = api_builtin_instead(ctx, op, type, what, passed->family, wparams, &bcfg, &k,
                                         &why, e);
        }
    } else if ((rc = seg_builtin(layout, off64, &bcfg, &changed, e)) == RT_OK) {
        rc = api_config_kernel(ctx, op, type, &bcfg, API_BUILTIN, &k, e);
    }
    if (rc != RT_OK)
        goto done;   /* not kept: the next call tries again */
    if (!(d = calloc(1, sizeof *d))) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory");
        goto done;
    }
    *d = (seg_decision){ctx->seg_decisions, layout, off64, aligned, skewed, uniform, op, canon,
                        nb, mb, k, row ? c->level : LEVEL_BUILTIN, row, c->dev.name, changed, c,
                        passed, why};
    why = NULL;
    ctx->seg_decisions = d;
    if (ctx->cap.log && passed)
        api_log_instead(ctx, what, passed->family, wparams, c->dev.name, c->level,
                        api_kin_desc(c, passed), d->why, k);
    else if (ctx->cap.log)
        api_log_choice(ctx, what, d->level, row ? c->dev.name : NULL, api_kin_desc(c, row), k);
done:
    pthread_mutex_unlock(&ctx->lock);
    free(why);
    *out = rc == RT_OK ? d : NULL;
    return rc;
}

/* The mean-length bucket that marks a one-segment decision (seg_one_decide) in the list. */
#define SEG_MB_ONE INT_MIN

/* docs/segmented.md, "One segment": an offsets call of one segment is a flat reduction whose
 * ends only the device knows, run by a family that reads them on the GPU (@bounds: gridstride)
 * generated with RT_BOUNDS: the flat decision for n (api_choose.c) when its family is one, else
 * the @bounds winner of its rows nearest to n, else (an operator that commutes) the built-in
 * gridstride. *out = NULL (and RT_OK) when none applies, NVRTC is missing, or a capture finds
 * the case undecided: the segmented path serves the call then. The decisions, applicable or
 * not, are kept in the segmented list under SEG_MB_ONE, keyed by the flat size slot. */
/* The one-segment decision of (off64, op, canonical spec, size slot), NULL when not made;
 * the caller holds ctx->lock. */
static seg_decision *seg_one_find(const rt_ctx *ctx, int off64, rt_op op, rt_type canon,
                                  unsigned bucket)
{
    seg_decision *d = ctx->seg_decisions;
    while (d && !(d->mb == SEG_MB_ONE && d->off64 == off64 && d->op == op && d->type == canon
                  && d->nb == bucket))
        d = d->next;
    return d;
}

static int seg_one_decide(rt_ctx *ctx, int off64, rt_op op, rt_type type, unsigned long long n,
                          int capturing, seg_decision **out, rt_err *e)
{
    optype_ts ts;
    rt_type canon = optype_resolve(op, type, &ts, NULL, 0) ? type : ts.canon;
    unsigned bucket = api_size_slot(n);
    seg_decision *d;
    decision *fd;
    kernel *k = NULL;
    int rc;
    *out = NULL;
    pthread_mutex_lock(&ctx->lock);
    d = seg_one_find(ctx, off64, op, canon, bucket);
    pthread_mutex_unlock(&ctx->lock);
    if (d || capturing) {
        *out = d && d->k ? d : NULL;
        return RT_OK;
    }
    if ((rc = api_get_decision(ctx, op, type, n, &fd, e)) != RT_OK)
        return rc;
    /* The flat decision's config when its family is @bounds; else the @bounds winner of the
     * same rows nearest to n (log scale); else, for an operator that commutes, the built-in
     * default's gridstride config. */
    const user_op *u = api_user_of(ctx, op);
    const best_entry *row = NULL;
    const rt_family *f = family_find(fd->k->family);
    const char *params = fd->k->params;
    int level = fd->level, builtin = fd->k->builtin;
    if (f && f->bounds && f->plan == PLAN_ONELAUNCH && !fd->k->stored_src)
        row = fd->row;
    else {
        f = NULL;
        double dist = INFINITY;
        for (int i = 0; fd->c && fd->c->level != LEVEL_BUILTIN && i < fd->c->nrows; i++) {
            const rt_family *rf = family_find(fd->c->rows[i].family);
            double dd = fabs(log2((double)fd->c->rows[i].n) - log2((double)n));
            if (rf && rf->bounds && rf->plan == PLAN_ONELAUNCH && dd < dist) {
                dist = dd;
                row = &fd->c->rows[i];
                f = rf;
            }
        }
        if (row) {
            params = row->params;
            level = fd->c->level;
            builtin = 0;
        } else if (!u || u->op.commutative) {
            f = family_find("gridstride");
            params = NULL;
            level = LEVEL_BUILTIN;
            builtin = 1;
        }
    }
    pthread_mutex_lock(&ctx->lock);
    if ((d = seg_one_find(ctx, off64, op, canon, bucket)) != NULL)
        goto done;   /* another thread's, made meanwhile */
    if (f) {
        rt_config cfg;
        if (params)
            rc = config_parse(f, params, &cfg, e);
        else
            api_builtin_gridstride(type, &cfg);
        if (rc != RT_OK)
            goto done;
        cfg.bounds = off64 ? 2 : 1;
        /* No shipped CUBIN holds the unit: without NVRTC the segmented path serves the call. */
        if ((rc = api_config_kernel(ctx, op, type, &cfg, builtin, &k, e)) == RT_ENVRTC) {
            rt_clearerr(e);
            rc = RT_OK;
            k = NULL;
        } else if (rc != RT_OK)
            goto done;
    }
    if (!(d = calloc(1, sizeof *d))) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory");
        goto done;
    }
    *d = (seg_decision){ctx->seg_decisions, RT_LAYOUT_OFFSETS, off64, 1, 0, 0, op, canon, bucket,
                        SEG_MB_ONE, k, level, row, fd->c ? fd->c->dev.name : NULL,
                        row != fd->row, fd->c};
    ctx->seg_decisions = d;
    if (ctx->cap.log && k) {
        char tnb[96], what[RT_NAME_MAX + 160];
        snprintf(what, sizeof what, "offsets %s %s n = %llu, one segment (the flat decision, "
                 "its bounds read on the GPU)", api_opname(ctx, op),
                 api_typename(op, type, tnb, sizeof tnb), n);
        /* The flat decision's built-in in place of its winner: say that, not "no winner". */
        if (!row && fd->passed)
            api_log_instead(ctx, what, fd->passed->family, fd->passed->params,
                            fd->c ? fd->c->dev.name : NULL, fd->c ? fd->c->level : LEVEL_BUILTIN,
                            api_kin_desc(fd->c, fd->passed), fd->why, k);
        else
            api_log_choice(ctx, what, d->level, fd->c && row ? fd->c->dev.name : NULL,
                           api_kin_desc(fd->c, row), k);
    }
done:
    pthread_mutex_unlock(&ctx->lock);
    *out = rc == RT_OK && d && d->k ? d : NULL;
    return rc;
}

/* RT_SEG_CHECK: run templates/seg_check.cu over the keys or offsets, synchronously; for
 * offsets *longest gets the longest segment. */
static int seg_check(rt_ctx *ctx, const char *fn, int layout, int off64, const void *seg,
                     unsigned long long n, unsigned long long nseg, CUstream s,
                     unsigned long long *longest, rt_err *e)
{
    int li = layout - 1, rc = RT_OK;
    CUresult r;
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->check_fn[li][off64]) {
        const char *defs[2] = {layout == 1 ? "LAYOUT=1" : "LAYOUT=2", off64 ? "OFF64=1" : "OFF64=0"};
        char *src = NULL;
        nvrtc_output o;
        memset(&o, 0, sizeof o);
        if ((rc = codegen_emit_helper("templates/seg_check.cu", defs, 2, &src, e)) == RT_OK
            && (rc = nvrtc_load(e)) == RT_OK
            && (rc = nvrtc_compile(src, "seg_check.cu", ctx->arch, &o, e)) == RT_OK) {
            if ((r = cu.ModuleLoadData(&ctx->check_mod[li][off64], o.cubin)) != CUDA_SUCCESS
                || (r = cu.ModuleGetFunction(&ctx->check_fn[li][off64], ctx->check_mod[li][off64],
                                             "rt_seg_check")) != CUDA_SUCCESS)
                rc = driver_fail(r, "loading the segment check", e);
        }
        if (rc == RT_ENVRTC)
            rc = rt_seterr(e, RT_ENVRTC, "%s: RT_SEG_CHECK compiles its check kernel with NVRTC, "
                           "which is not usable here", fn);
        free(src);
        nvrtc_output_free(&o);
    }
    CUfunction f = ctx->check_fn[li][off64];
    pthread_mutex_unlock(&ctx->lock);
    if (rc)
        return rc;
    CUdeviceptr bad = 0;
    unsigned long long got[3] = {0, 0, 0};
    unsigned long long len = layout == 1 ? n : nseg + 1;
    unsigned long long grid = (len + 255) / 256, cap = 4ULL * (unsigned)ctx->dev.sm_count;
    grid = grid < 1 ? 1 : grid > cap ? cap : grid;
    CUdeviceptr segp = (CUdeviceptr)(uintptr_t)seg;
    void *args[] = {&segp, &n, &nseg, &bad};
    if ((r = cu.MemAlloc(&bad, sizeof got)) != CUDA_SUCCESS)
        return api_cuda_fail(r, "allocating the check's counters", e);
    if ((r = cu.MemsetD32Async(bad, 0, 2, s)) != CUDA_SUCCESS
        || (r = cu.MemsetD32Async(bad + 8, 0xffffffffu, 2, s)) != CUDA_SUCCESS
        || (r = cu.MemsetD32Async(bad + 16, 0, 2, s)) != CUDA_SUCCESS
        || (r = cu.LaunchKernel(f, (unsigned)grid, 1, 1, 256, 1, 1, 0, s, args, NULL)) != CUDA_SUCCESS
        || (r = cu.StreamSynchronize(s)) != CUDA_SUCCESS
        || (r = cu.MemcpyDtoH(got, bad, sizeof got)) != CUDA_SUCCESS)
        rc = driver_fail(r, "running the segment check", e);
    cu.MemFree(bad);
    *longest = got[2];
    if (rc == RT_OK && got[0])
        rc = layout == 1
            ? rt_seterr(e, RT_EINVAL, "%s: %llu keys break the rules (sorted, each < nseg = %llu); "
                        "the first at index %llu", fn, got[0], nseg, got[1])
            : rt_seterr(e, RT_EINVAL, "%s: %llu offsets break the rules (non-decreasing, within "
                        "0..n = %llu); the first at index %llu of %llu", fn, got[0], n, got[1],
                        nseg + 1);
    return rc;
}

static int reduce_seg(rt_ctx *ctx, const char *fn, int layout, rt_op op, rt_type type,
                      const void *d_in, unsigned long long n, const void *seg,
                      unsigned long long nseg, void *d_out, void *stream, unsigned flags)
{
    rt_err e;
    CUstream s = (CUstream)stream;
    seg_decision *d;
    slot *sl = NULL;
    int rc, pushed = 0, capturing = 0, off64 = (flags & RT_SEG_OFF64) != 0;
    size_t align_seg = layout == 1 ? 4 : off64 ? 8 : 4;

    api_begin(ctx);
    if ((rc = api_check_op_type(fn, ctx, op, type, &e)) != RT_OK
        || (rc = api_check_ctx(fn, ctx, &e)) != RT_OK
        || (rc = api_check_pointers(fn, ctx, op, type, d_in, n, d_out, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = seg_flags_check(fn, flags, &e)) != RT_OK)
        return api_finish(rc, &e);
    if (layout == 1 && off64)
        return api_finish(rt_seterr(&e, RT_EINVAL, "%s: RT_SEG_OFF64 is for offsets; keys are "
                                "32-bit", fn), &e);
    if (nseg == 0)
        return api_finish(RT_OK, &e);   /* nothing to write */
    if (!seg && (layout == 2 || n > 0))
        return api_finish(rt_seterr(&e, RT_EINVAL, "%s: the %s array is NULL", fn,
                                layout == 1 ? "keys" : "offsets"), &e);
    if ((uintptr_t)seg % align_seg)
        return api_finish(rt_seterr(&e, RT_EINVAL, "%s: the %s array %p is not aligned to %zu "
                                "bytes", fn, layout == 1 ? "keys" : "offsets", seg, align_seg), &e);
    if (layout == 2 && !off64 && n > 0x7fffffffULL)
        return api_finish(rt_seterr(&e, RT_EINVAL, "%s: n = %llu needs 64-bit offsets "
                                "(RT_SEG_OFF64)", fn, n), &e);
    if (layout == 1 && nseg > 0xffffffffULL)
        return api_finish(rt_seterr(&e, RT_EINVAL, "%s: nseg = %llu does not fit 32-bit keys", fn,
                                nseg), &e);
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_capturing(s, fn, &capturing, &e)) != RT_OK)
        goto done;
    if ((flags & RT_SEG_CHECK) && capturing) {
        rc = rt_seterr(&e, RT_ECAPTURE, "%s: RT_SEG_CHECK waits for its check kernel, which "
                       "would break the stream's CUDA graph capture: check the %s in a call "
                       "before the capture, and capture calls without RT_SEG_CHECK", fn,
                       layout == 1 ? "keys" : "offsets");
        goto done;
    }
    unsigned long long longest = 0;
    if ((flags & RT_SEG_CHECK)
        && (rc = seg_check(ctx, fn, layout, off64, seg, n, nseg, s, &longest, &e)) != RT_OK)
        goto done;
    /* The check has seen the lengths: a wide spread is served as with RT_SEG_SKEWED, any
     * other as with RT_SEG_UNIFORM, whatever the caller said. */
    if (flags & RT_SEG_CHECK)
        flags = (flags & ~(RT_SEG_SKEWED | RT_SEG_UNIFORM))
              | (family_seg_skewed(longest, n, nseg) ? RT_SEG_SKEWED : RT_SEG_UNIFORM);
    /* One segment of keys: every valid key is 0, so it is the flat reduction of in[0..n),
     * the flat decision for n, the keys unread (checked first with RT_SEG_CHECK). While a
     * capture finds the flat case undecided, the segmented path says what to do. */
    if (layout == 1 && nseg == 1 && n > 0 && (!capturing || api_decided(ctx, op, type, n))) {
        rc = api_flat_run(ctx, fn, op, type, d_in, n, d_out, s, capturing, &e);
        goto done;
    }
    /* One segment of offsets: the flat decision with its bounds read on the GPU
     * (seg_one_decide). */
    if (layout == 2 && nseg == 1 && n > 0) {
        if ((rc = seg_one_decide(ctx, off64, op, type, n, capturing, &d, &e)) != RT_OK)
            goto done;
        if (d) {
            api_met(ctx, 0, op, type, n, 0, d->level, d->c);
            if ((rc = api_stream_temp(ctx, fn, s, api_temp_need(d->k, n), capturing,
                                      "make a call of this size on this stream before the "
                                      "capture (a warm-up)", &sl, &e)) != RT_OK)
                goto done;
            rc = plan_bounds_launch(&d->k->p, (CUdeviceptr)(uintptr_t)d_in,
                                    (CUdeviceptr)(uintptr_t)seg, (CUdeviceptr)(uintptr_t)d_out, n,
                                    sl ? sl->temp : 0, s, &e);
            if (sl)
                pthread_mutex_unlock(&sl->lock);
            goto done;
        }
    }
    int aligned = (uintptr_t)d_in % 16 == 0 && (layout == 2 || (uintptr_t)seg % 16 == 0);
    if ((rc = seg_decide(ctx, layout, off64, aligned, (flags & RT_SEG_SKEWED) != 0,
                         (flags & RT_SEG_UNIFORM) != 0, op, type, n, nseg,
                         capturing ? fn : NULL, &d, &e)) != RT_OK)
        goto done;
    api_met(ctx, layout, op, type, n, nseg, d->level, d->c);
    /* The carries go after the block's first COUNTER_BYTES: the one-launch counter, which
     * must stay zero for the flat calls that share this stream's block. */
    size_t carries = plan_seg_temp_bytes(&d->k->p, n, nseg);
    size_t need = carries ? COUNTER_BYTES + carries : 0;
    if ((rc = api_stream_temp(ctx, fn, s, need, capturing, "make a call of this size on this "
                              "stream before the capture (a warm-up)", &sl, &e)) != RT_OK)
        goto done;
    rc = plan_seg_launch(&d->k->p, (CUdeviceptr)(uintptr_t)d_in, (CUdeviceptr)(uintptr_t)seg, n,
                         nseg, (CUdeviceptr)(uintptr_t)d_out, sl ? sl->temp + COUNTER_BYTES : 0,
                         s, &e);
    if (sl)
        pthread_mutex_unlock(&sl->lock);
done:
    api_leave(pushed);
    return api_finish(rc, &e);
}

int rt_reduce_keys(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in, const unsigned *d_keys,
                   unsigned long long n, unsigned long long nseg, void *d_out, void *stream,
                   unsigned flags)
{
    return reduce_seg(ctx, "rt_reduce_keys", 1, op, type, d_in, n, d_keys, nseg, d_out, stream,
                      flags);
}

int rt_reduce_offsets(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                      unsigned long long n, const void *d_offsets, unsigned long long nseg,
                      void *d_out, void *stream, unsigned flags)
{
    return reduce_seg(ctx, "rt_reduce_offsets", 2, op, type, d_in, n, d_offsets, nseg, d_out,
                      stream, flags);
}

/* rt_explain_segmented's text for one segment, served by flat kernel k: 'what' says how, the
 * row it came from (NULL: the built-in default) with 'nearest' when it is not the flat
 * decision's own and 'flat' a note on that decision; 'fd', the flat decision, says which
 * winner the built-in default replaces and why, if it does (NULL: none). */
static void explain_one(rt_ctx *ctx, char *buf, size_t len, int layout, rt_op op, rt_type type,
                        unsigned long long n, const char *what, const kernel *k, int level,
                        const choice *c, const best_entry *row, int nearest, const char *flat,
                        const decision *fd)
{
    char tn[96], from[1536], kin[512];
    if (row)
        snprintf(from, sizeof from, "the flat winner%s tuned on %s at n = %lld: %.2f us%s; %s%s",
                 nearest ? " of a @bounds family nearest to n" : "", c ? c->dev.name : "?",
                 row->n, row->median_us, flat, c ? api_row_owner(c, row) : "?",
                 api_kin_note(ctx, c, row, op, kin, sizeof kin));
    else if (fd && fd->passed)
        /* Not "tuned on": bench/pick.c takes that for the entry that runs. */
        snprintf(from, sizeof from, "no tuned flat entry used: the flat winner for n, %s %s "
                 "(of the row of \"%s\", n = %lld), cannot be made here: %s; the built-in "
                 "default%s", fd->passed->family, fd->passed->params,
                 fd->c ? fd->c->dev.name : "?", fd->passed->n, fd->why ? fd->why : "?", flat);
    else
        snprintf(from, sizeof from, "no tuned flat entry%s: the built-in default%s",
                 layout == RT_LAYOUT_OFFSETS ? " of a @bounds family" : "", flat);
    snprintf(buf, len, "%s %s %s n=%llu nseg=1: one segment, %s: %s %s (plan %s, kernel "
             "%.12s)\nfrom: %s\nlevel: %s\nbinary: %s\n",
             layout == RT_LAYOUT_KEYS ? "keys" : "offsets", api_opname(ctx, op),
             api_typename(op, type, tn, sizeof tn), n, what, k->family, k->params,
             k->p.kind == PLAN_ONELAUNCH ? "onelaunch" : "multipass", k->hash, from,
             api_level_names[level], k->from_db ? "CUBIN from the database"
                                                : "compiled by NVRTC here");
}

int rt_explain_segmented(rt_ctx *ctx, int layout, rt_op op, rt_type type, unsigned long long n,
                         unsigned long long nseg, unsigned flags, char *buf, size_t len)
{
    rt_err e;
    seg_decision *d;
    int rc, pushed = 0;
    const char *fn = "rt_explain_segmented";
    api_begin(ctx);
    if ((rc = api_check_op_type(fn, ctx, op, type, &e)) != RT_OK || (rc = api_check_ctx(fn, ctx, &e)) != RT_OK)
        return api_finish(rc, &e);
    if (!buf || !len || (layout != RT_LAYOUT_KEYS && layout != RT_LAYOUT_OFFSETS))
        return api_finish(rt_seterr(&e, RT_EINVAL, "%s: buf is NULL or empty, or layout %d is "
                                "neither RT_LAYOUT_KEYS nor RT_LAYOUT_OFFSETS", fn, layout), &e);
    if ((rc = seg_flags_check(fn, flags, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    if (layout == RT_LAYOUT_KEYS && nseg == 1 && n > 0) {
        decision *fd;
        if ((rc = api_get_decision(ctx, op, type, n, &fd, &e)) == RT_OK)
            explain_one(ctx, buf, len, layout, op, type, n, "the flat reduction of in[0..n) "
                        "(every valid key is 0; the keys are not read)", fd->k, fd->level,
                        fd->c, fd->row, 0, "", fd);
        api_leave(pushed);
        return api_finish(rc, &e);
    }
    if (layout == RT_LAYOUT_OFFSETS && nseg == 1 && n > 0) {
        rc = seg_one_decide(ctx, (flags & RT_SEG_OFF64) != 0, op, type, n, 0, &d, &e);
        if (rc == RT_OK && d) {
            char flat[192] = "";
            decision *fd = NULL;   /* made by seg_one_decide: a lookup */
            if (api_get_decision(ctx, op, type, n, &fd, &e) != RT_OK)
                fd = NULL;
            if (d->respecialized && fd)
                snprintf(flat, sizeof flat, " (the flat decision for n, %s %s, cannot read its "
                         "bounds)", fd->k->family, fd->k->params);
            rt_clearerr(&e);
            explain_one(ctx, buf, len, layout, op, type, n, "a flat reduction of [offsets[0], "
                        "offsets[1]) with its bounds read on the GPU", d->k, d->level, d->c,
                        d->row, d->respecialized, flat, fd);
        }
        if (rc != RT_OK || d) {
            api_leave(pushed);
            return api_finish(rc, &e);
        }
    }
    rc = seg_decide(ctx, layout, (flags & RT_SEG_OFF64) != 0, 1, (flags & RT_SEG_SKEWED) != 0,
                    (flags & RT_SEG_UNIFORM) != 0, op, type, n, nseg, NULL, &d, &e);
    if (rc == RT_OK) {
        const kernel *k = d->k;
        char from[2048], kin[512];
        if (d->passed)
            /* "no tuned entry used": what runs is the built-in default (bench/pick.c reads
             * "no tuned" as no entry). */
            snprintf(from, sizeof from, "no tuned entry used: the winner tuned on %s at n = "
                     "%lld, mean segment length %.1f (%s %s%s), cannot be made here: %s; the "
                     "built-in default runs in its place", d->c_name, d->passed->n,
                     d->passed->seg_mean, d->passed->family, d->passed->params,
                     d->respecialized ? ", tried re-specialised for the offset width, the "
                     "alignment or uniform lengths" : "", d->why ? d->why : "?");
        else if (d->row)
            snprintf(from, sizeof from, "tuned on %s at n = %lld, mean segment length %.1f: "
                     "%.2f us%s; %s%s%s", d->c_name, d->row->n, d->row->seg_mean, d->row->median_us,
                     d->respecialized ? " (re-specialised here for the offset width, the "
                     "alignment or uniform lengths)" : "", d->c ? api_row_owner(d->c, d->row) : "?",
                     d->c && d->c->by_mean ? ", taken for its mean length: the nearer row's "
                     "winners are all more than a factor of 2 from this one" : "",
                     api_kin_note(ctx, d->c, d->row, op, kin, sizeof kin));
        else
            snprintf(from, sizeof from, "no tuned entry%s", d->skewed && d->level == LEVEL_BUILTIN
                     && d->c && d->c->nrows ? " of a load-balanced family (RT_SEG_SKEWED)" : "");
        char tn[96], types[256] = "";
        optype_ts ts;
        if (!api_user_of(ctx, op) && optype_resolve(op, type, &ts, NULL, 0) == 0)
            snprintf(types, sizeof types, "types: element %s, accumulator %s (%zu bytes), "
                     "result %s (%zu bytes)%s\n", rt_type_name(ts.elem), rt_type_name(ts.acc),
                     api_acc_size(ctx, op, type), rt_type_name(ts.res), api_res_size(ctx, op, type),
                     k->p.seg_final ? "; a last launch, rt_seg_final, writes the results from "
                     "the segments' accumulators" : "");
        snprintf(buf, len, "%s %s %s n=%llu nseg=%llu%s: %s %s (plan segmented, kernel %.12s)\n"
                 "%sfrom: %s\nlevel: %s\nbinary: %s\n", layout == 1 ? "keys" : "offsets",
                 api_opname(ctx, op), api_typename(op, type, tn, sizeof tn), n, nseg,
                 d->skewed ? " skewed (load-balanced kernels only)"
                 : d->uniform ? " uniform (no long-segment list)" : "", k->family,
                 k->params, k->hash, types, from, api_level_names[d->level], k->from_db ? "CUBIN from the database"
                 : "compiled by NVRTC here");
    }
    api_leave(pushed);
    return api_finish(rc, &e);
}

