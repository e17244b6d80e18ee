/*
 * api_axis.c - libredtune's reductions along an axis (docs/axis.md): rt_reduce_axis,
 * rt_axis_temp_bytes, rt_reduce_axis_temp and rt_explain_axis. A contiguous tensor viewed as
 * [outer, len, inner] is reduced along len into [outer, inner] by one rt_axis launch
 * (runtime/plan.h's axis plan).
 *
 * Choosing: the decisions are kept per (op, canonical type spec, shape class), the class
 * being the log2 buckets of outer, len and inner (0 for 0, else floor(log2 x) + 1), so a
 * batch size that varies call to call finds its decision made. A decision takes the winner
 * of the device row nearest this GPU (the fallbacks of rt_reduce, api_choose.c) among the database's
 * `axis:OxLxI` rows of the same kind (inner == 1, rows of a matrix; inner > 1, columns and
 * 3-D middle axes) whose tuned shape is nearest to the class's centre in log2 (len counts
 * twice: it decides the kernel's shape, outer and inner mostly the grid), loaded as this
 * library's unit for its family and parameters (api_winner_kernel); else a built-in default
 * chosen by the shape (api_axis_builtin), which also runs in place of a winner whose kernel
 * cannot be made here (api_builtin_instead, as for rt_reduce). Decisions are published at the
 * head of a list that calls walk with no lock.
 *
 * Temporary storage: a split launch (len cut among several blocks per tile, plan.c) needs
 * zero counters right before its partials. In the context's block per stream they lie in the
 * block's zero head (BLOCK_PAD and the one-launch counter, api_temp.c), which is plan.c's
 * counter area (plan_axis_temp_in_area): they end at temp + COUNTER_BYTES, where every
 * plan's partials start; the kernel leaves them zero. Storage the
 * caller gives (rt_reduce_axis_temp) has its counters cleared on the stream before each split
 * launch, as rt_reduce_temp clears its counter.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"

/* 0 for 0, else floor(log2 x) + 1: the class of one extent. */
static int axis_bucket(unsigned long long x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

/* The centre of a bucket in log2: b - 0.5 for [2^(b-1), 2^b); bucket 1 holds 1 alone, and
 * bucket 0 (an empty extent) stands with it. */
static double bucket_centre(int b)
{
    return b > 1 ? b - 0.5 : 0;
}

static double log2_extent(unsigned long long x)
{
    return x > 1 ? log2((double)x) : 0;
}

/* The stored winner nearest to the class (bo, bl, bi) in log2, len counted twice; NULL when
 * no row carries a shape (a layout that does not read as axis:OxLxI). */
static const best_entry *pick_axis(const choice *c, int bo, int bl, int bi)
{
    const best_entry *best = NULL;
    double dist = INFINITY;
    for (int i = 0; i < c->nrows; i++) {
        const unsigned long long *a = c->rows[i].axis;
        if (!a[0] && !a[1] && !a[2])
            continue;
        double d = fabs(log2_extent(a[0]) - bucket_centre(bo))
                   + 2 * fabs(log2_extent(a[1]) - bucket_centre(bl))
                   + fabs(log2_extent(a[2]) - bucket_centre(bi));
        if (d < dist) {
            dist = d;
            best = &c->rows[i];
        }
    }
    return best;
}

static unsigned long long pow2_floor(unsigned long long x)
{
    return x ? 1ULL << (63 - __builtin_clzll(x)) : 0;
}

void api_axis_builtin(int commutative, size_t elem_size, size_t acc_size,
                      unsigned long long outer, unsigned long long len,
                      unsigned long long inner, char *family, size_t family_len, char *params,
                      size_t params_len)
{
    (void)outer;   /* the grid follows from it; the kernel's shape does not */
    size_t es = elem_size ? elem_size : 4, as = acc_size > es ? acc_size : es;
    if (inner == 1 && commutative) {
        /* Rows: V elements a load (16 bytes), a group of L lanes per row sized so that each
         * lane gets about four vectors, one block per row at most; long rows split. */
        unsigned long long v = 16 / es > 16 ? 16 : 16 / es, l = pow2_floor(len / (v * 4));
        if (v < 1)
            v = 1;
        l = l < 1 ? 1 : l > 256 ? 256 : l;
        snprintf(family, family_len, "axis_rows");
        snprintf(params, params_len, "B=256 L=%llu V=%llu U=2 CHUNK=%d", l, v,
                 len >= 16384 ? 8192 : 0);
        return;
    }
    /* Columns (and rows of an operator that does not commute: TX = 1, a block per row in
     * B contiguous parts): CV consecutive columns a thread (16 bytes at most, no more than
     * inner), TX threads across, up to 32 (128 to 512 contiguous bytes a row group); tall
     * ones split. Short columns (len < 128: 8 row groups would walk fewer than 16 rows each
     * and then meet in shared memory): fewer row groups, down to one (TX = B, B down to 128
     * where inner is narrow), up to 4 rows in flight (32 bytes a thread), and CV accumulators
     * of at most 16 bytes in all where the accumulator is wider than the element. H100,
     * argmax on [1 x 16 x 2^22] (docs/results.md, seventeenth session, run 2's measurements
     * of the whole space): f32 B=256 TX=256 CV=1 U=4 150.5 us, bf16 132.4, against 250.9 and
     * 274.6 for B=256 TX=32 CV=4 (bf16 CV=8) U=2. */
    unsigned long long cv = 1, tx = 1, b = 256, u = 2;
    const int shortc = inner > 1 && len < 128;
    if (inner > 1) {
        const int wide = shortc && as > es;   /* CV accumulators within 16 bytes */
        for (cv = 8; cv > 1 && (cv * es > 16 || cv > inner || (wide && cv * as > 16)); cv /= 2)
            ;
        unsigned long long cols = (inner + cv - 1) / cv, txmax = shortc ? b : 32;
        while (tx < cols && tx < txmax)
            tx *= 2;
        if (shortc) {
            /* ty row groups of at least 16 rows each (one when len < 32; at most 4), TX * ty
             * threads, 128 at least (the smallest block of the default space) */
            unsigned long long ty = pow2_floor(len / 16 ? len / 16 : 1);
            if (tx * ty > b)
                tx = b / ty;
            b = tx * ty < 128 ? 128 : tx * ty;
            const unsigned long long fit = 32 / (cv * es);   /* rows within 32 bytes in flight */
            u = fit >= 4 ? 4 : fit >= 2 ? 2 : 1;
        }
    }
    snprintf(family, family_len, "axis_cols");
    snprintf(params, params_len, "B=%llu TX=%llu CV=%llu U=%llu CHUNK=%d", b, tx, cv, u,
             len >= 2048 ? 512 : 0);
}

int api_check_axis(const char *fn, const struct rt_ctx *ctx, rt_op op, rt_type type,
                   const void *d_in, unsigned long long outer, unsigned long long len,
                   unsigned long long inner, const void *d_out, rt_err *e)
{
    unsigned long long m, n;
    char tn[96];
    optype_ts ts;
    size_t es = optype_size(type), oa = es;

    if (__builtin_mul_overflow(outer, inner, &m))
        return rt_seterr(e, RT_EINVAL, "%s: outer * inner = %llu * %llu overflows 64 bits", fn,
                         outer, inner);
    if (__builtin_mul_overflow(m, len, &n))
        return rt_seterr(e, RT_EINVAL, "%s: outer * len * inner = %llu * %llu * %llu overflows "
                         "64 bits", fn, outer, len, inner);
    if (!d_in && n > 0)
        return rt_seterr(e, RT_EINVAL, "%s: d_in is NULL with outer * len * inner = %llu", fn,
                         n);
    if (!d_out && m > 0)
        return rt_seterr(e, RT_EINVAL, "%s: d_out is NULL with outer * inner = %llu outputs",
                         fn, m);
    /* d_in by the element; d_out by the result, as api_check_pointers */
    if (!api_user_of(ctx, op) && optype_resolve(op, type, &ts, NULL, 0) == 0)
        oa = optype_is_arg(op) ? 8 : optype_size(ts.res);
    if ((uintptr_t)d_in % es)
        return rt_seterr(e, RT_EINVAL, "%s: d_in %p is not aligned to its %zu-byte %s "
                         "elements", fn, d_in, es, rt_type_name(optype_elem(type)));
    if ((uintptr_t)d_out % oa)
        return rt_seterr(e, RT_EINVAL, "%s: d_out %p is not aligned to %zu bytes (%s %s)", fn,
                         d_out, oa, api_opname(ctx, op), api_typename(op, type, tn, sizeof tn));
    return RT_OK;
}

/* The case of a call for REDTUNE_CAPTURE and REDTUNE_LOG=info: layout `axis:OxLxI`, n the
 * elements, nseg the outputs (as measurements store them); len == 0 is not recorded. It had an exact tuned entry when
 * this GPU's winners hold one of exactly this shape. */
static void axis_met(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long outer,
                     unsigned long long len, unsigned long long inner, const axis_decision *d)
{
    static const char *const fallbacks[] = {"?", "nearest", "same-cc", "same-major", "builtin"};
    optype_ts ts;
    /* len == 0 is not a case to tune (as flat n == 0 is not recorded) */
    if (!ctx->cap.active || len == 0 || optype_resolve(op, type, &ts, NULL, 0))
        return;
    int exact = 0;
    int kin = d->c->has_kin || d->c->has_tkin;
    for (int i = 0; d->level == STORE_MATCH_EXACT && !kin && i < d->c->nrows && !exact; i++)
        exact = d->c->rows[i].axis[0] == outer && d->c->rows[i].axis[1] == len
                && d->c->rows[i].axis[2] == inner;
    char spec[64], layout[80];
    snprintf(layout, sizeof layout, "axis:%llux%llux%llu", outer, len, inner);
    const user_op *u = api_user_of(ctx, op);
    capture_case cs = {api_opname(ctx, op), capture_type_text(op, ts.canon, spec, sizeof spec),
                       layout, outer * len * inner, outer * inner,
                       exact ? NULL : api_kin_name(d->c, d->row) ? "sibling" : fallbacks[d->level],
                       u ? u->id : NULL, ctx->dev.name};
    capture_case_met(&ctx->cap, &cs);
}

static axis_decision *find_decision(const rt_ctx *ctx, rt_op op, rt_type canon, int bo, int bl,
                                    int bi)
{
    for (axis_decision *d = atomic_load_explicit(&((rt_ctx *)ctx)->axis_decisions,
                                                 memory_order_acquire); d; d = d->next)
        if (d->op == op && d->type == canon && d->bo == bo && d->bl == bl && d->bi == bi)
            return d;
    return NULL;
}

static void class_text(int bo, int bl, int bi, char *buf, size_t len)
{
    char part[3][40];
    const int b[3] = {bo, bl, bi};
    for (int i = 0; i < 3; i++)
        if (b[i] == 0)
            snprintf(part[i], sizeof part[i], "0");
        else if (b[i] == 1)
            snprintf(part[i], sizeof part[i], "1");
        else
            snprintf(part[i], sizeof part[i], "[2^%d, 2^%d)", b[i] - 1, b[i]);
    snprintf(buf, len, "outer %s, len %s, inner %s", part[0], part[1], part[2]);
}

/* The built-in default of an axis case as a config of the family api_axis_builtin names for
 * the shape of this call (the first of its class). */
static int axis_builtin_config(const rt_ctx *ctx, rt_op op, rt_type type,
                               unsigned long long outer, unsigned long long len,
                               unsigned long long inner, rt_config *cfg, rt_err *e)
{
    const user_op *u = api_user_of(ctx, op);
    char fam[RT_NAME_MAX], params[128];
    api_axis_builtin(u ? u->op.commutative : 1, optype_size(type), api_acc_size(ctx, op, type),
                     outer, len, inner, fam, sizeof fam, params, sizeof params);
    const rt_family *f = family_find(fam);
    if (!f)
        return rt_seterr(e, RT_ENOTFOUND, "the built-in default family %s is not built into "
                         "this library%s%s", fam, family_error() ? ": " : "",
                         family_error() ? family_error() : "");
    return config_parse(f, params, cfg, e);
}

/* The decision of an axis case, made (and its kernel loaded) the first time; while the
 * stream is capturing ('capturing' names the call) a case not made yet is RT_ECAPTURE. A
 * winner whose kernel cannot be made here (RT_ENVRTC: no CUBIN for its unit and no NVRTC, or
 * NVRTC refuses it) gives way to the built-in default of the shape, and the decision keeps
 * the winner passed over and NVRTC's reason; when the built-in cannot be made either, the
 * call fails naming both, and nothing is kept. */
int api_axis_decide(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long outer,
                    unsigned long long len, unsigned long long inner, const char *capturing,
                    axis_decision **out, rt_err *e)
{
    int bo = axis_bucket(outer), bl = axis_bucket(len), bi = axis_bucket(inner);
    int rc = RT_OK, layout = inner == 1 ? API_AXIS_ROWS : API_AXIS_COLS;
    optype_ts ts;
    char tn[96], cls[160];
    rt_type canon = optype_resolve(op, type, &ts, NULL, 0) ? type : ts.canon;
    axis_decision *d = find_decision(ctx, op, canon, bo, bl, bi);

    *out = d;
    if (d)
        return RT_OK;
    class_text(bo, bl, bi, cls, sizeof cls);
    if (capturing)
        return rt_seterr(e, RT_ECAPTURE, "%s: %s %s outer = %llu len = %llu inner = %llu: the "
                         "stream is capturing a CUDA graph, and the kernel for this shape "
                         "class (%s) is not loaded yet (loading it is synchronous and would "
                         "break the capture): make one call of this case before the capture "
                         "(a warm-up), or call rt_axis_temp_bytes for it", capturing,
                         api_opname(ctx, op), api_typename(op, type, tn, sizeof tn), outer, len,
                         inner, cls);
    pthread_mutex_lock(&ctx->lock);
    choice *c;
    kernel *k = NULL;
    const best_entry *row = NULL, *passed = NULL;
    rt_config cfg;
    char what[RT_NAME_MAX + 320], *why = NULL;
    if ((d = find_decision(ctx, op, canon, bo, bl, bi)) != NULL)
        goto done;   /* another thread decided meanwhile */
    snprintf(what, sizeof what, "axis %s %s %s", api_opname(ctx, op),
             api_typename(op, type, tn, sizeof tn), cls);
    if ((rc = api_get_choice(ctx, layout, op, type, &c, e)) != RT_OK)
        goto done;
    if (c->level != LEVEL_BUILTIN && (row = pick_axis(c, bo, bl, bi)) != NULL) {
        rc = api_winner_kernel(ctx, op, type, row, &k, e);
        /* Its kernel cannot be made here: the built-in default of the shape serves the class
         * instead, and the decision says so (level, the winner passed over, NVRTC's reason). */
        if (rc == RT_ENVRTC) {
            passed = row;
            row = NULL;
            if ((rc = axis_builtin_config(ctx, op, type, outer, len, inner, &cfg, e)) == RT_OK)
                rc = api_builtin_instead(ctx, op, type, what, passed->family, passed->params,
                                         &cfg, &k, &why, e);
        }
    } else if ((rc = axis_builtin_config(ctx, op, type, outer, len, inner, &cfg, e)) == RT_OK) {
        rc = api_config_kernel(ctx, op, type, &cfg, API_BUILTIN, &k, e);
    }
    if (rc != RT_OK)
        goto done;   /* not kept: the next call tries again */
    if (k->p.kind != PLAN_AXIS) {
        rc = rt_seterr(e, RT_EDB, "%s: the winner for axis %s %s (%s %s, kernel %.12s) is not "
                       "an axis kernel (plan %s)", store_path(ctx->db), api_opname(ctx, op),
                       api_typename(op, type, tn, sizeof tn), k->family, k->params, k->hash,
                       family_plan_name(k->p.kind));
        goto done;
    }
    if (!(d = calloc(1, sizeof *d))) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory");
        goto done;
    }
    *d = (axis_decision){atomic_load_explicit(&ctx->axis_decisions, memory_order_relaxed), op,
                         canon, bo, bl, bi, k, row ? c->level : LEVEL_BUILTIN, row, c, passed,
                         why};
    why = NULL;
    atomic_store_explicit(&ctx->axis_decisions, d, memory_order_release);
    if (ctx->cap.log && passed)
        api_log_instead(ctx, what, passed->family, passed->params, c->dev.name, c->level,
                        api_kin_desc(c, passed), d->why, k);
    else if (ctx->cap.log)
        api_log_choice(ctx, what, d->level, row ? c->dev.name : NULL, api_kin_desc(c, row), k);
done:
    pthread_mutex_unlock(&ctx->lock);
    free(why);
    *out = rc == RT_OK ? d : NULL;
    return rc;
}

static int reduce_axis(rt_ctx *ctx, const char *fn, rt_op op, rt_type type, const void *d_in,
                       unsigned long long outer, unsigned long long len,
                       unsigned long long inner, void *d_out, int own_temp, void *d_temp,
                       size_t temp_bytes, void *stream)
{
    rt_err e;
    CUstream s = (CUstream)stream;
    axis_decision *d;
    slot *sl = NULL;
    int rc, pushed = 0, capturing = 0;
    char tn[96];
    CUdeviceptr in = (CUdeviceptr)(uintptr_t)d_in, out = (CUdeviceptr)(uintptr_t)d_out;

    api_begin(ctx);
    if ((rc = api_check_op_type(fn, ctx, op, type, &e)) != RT_OK
        || (rc = api_check_ctx(fn, ctx, &e)) != RT_OK
        || (rc = api_check_axis(fn, ctx, op, type, d_in, outer, len, inner, d_out, &e)) != RT_OK)
        return api_finish(rc, &e);
    if (outer == 0 || inner == 0)
        return api_finish(RT_OK, &e);   /* no outputs: nothing to write */
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_capturing(s, fn, &capturing, &e)) != RT_OK
        || (rc = api_axis_decide(ctx, op, type, outer, len, inner, capturing ? fn : NULL, &d,
                                 &e)) != RT_OK)
        goto done;
    axis_met(ctx, op, type, outer, len, inner, d);
    const plan *p = &d->k->p;
    size_t tb = plan_axis_temp_bytes(p, outer, len, inner);
    size_t cb = plan_axis_counter_bytes(p, outer, len, inner);
    if (cb > PLAN_AXIS_COUNTER_AREA) {   /* plan.c caps split launches at 4096 counters */
        rc = rt_seterr(&e, RT_EINVAL, "%s: %zu bytes of axis counters exceed the %u of the "
                       "zero head", fn, cb, PLAN_AXIS_COUNTER_AREA);
        goto done;
    }
    if (own_temp) {
        CUdeviceptr t = (CUdeviceptr)(uintptr_t)d_temp;
        CUresult r;
        if (temp_bytes < tb || (tb && !d_temp)) {
            rc = rt_seterr(&e, RT_EINVAL, "%s: %s %s outer = %llu len = %llu inner = %llu "
                           "needs %zu bytes of temporary storage, %zu given", fn,
                           api_opname(ctx, op), api_typename(op, type, tn, sizeof tn), outer,
                           len, inner, tb, d_temp ? temp_bytes : 0);
            goto done;
        }
        if (t % TEMP_ALIGN) {
            rc = rt_seterr(&e, RT_EINVAL, "%s: d_temp %p is not aligned to %d bytes", fn,
                           d_temp, TEMP_ALIGN);
            goto done;
        }
        if (cb && (r = cu.MemsetD32Async(t, 0, cb / 4, s)) != CUDA_SUCCESS) {
            rc = driver_fail(r, "clearing the axis counters (cuMemsetD32Async)", &e);
            goto done;
        }
        rc = plan_axis_launch(p, in, out, outer, len, inner, tb ? t : 0, s, &e);
        goto done;
    }
    /* The stream's block from temp - BLOCK_PAD is plan.c's counter area, then the partials. */
    size_t need = tb ? plan_axis_area_bytes(p, outer, len, inner) - BLOCK_PAD : 0;
    if ((rc = api_stream_temp(ctx, fn, s, need, capturing, "make a call of this shape on this "
                              "stream before the capture (a warm-up), or give "
                              "rt_reduce_axis_temp storage of rt_axis_temp_bytes bytes", &sl,
                              &e)) != RT_OK)
        goto done;
    rc = plan_axis_launch(p, in, out, outer, len, inner,
                          sl && tb ? plan_axis_temp_in_area(p, sl->temp - BLOCK_PAD, outer, len,
                                                            inner) : 0, s, &e);
    if (sl)
        pthread_mutex_unlock(&sl->lock);
done:
    api_leave(pushed);
    return api_finish(rc, &e);
}

int rt_reduce_axis(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                   unsigned long long outer, unsigned long long len, unsigned long long inner,
                   void *d_out, void *stream)
{
    return reduce_axis(ctx, "rt_reduce_axis", op, type, d_in, outer, len, inner, d_out, 0,
                       NULL, 0, stream);
}

int rt_reduce_axis_temp(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                        unsigned long long outer, unsigned long long len,
                        unsigned long long inner, void *d_out, void *d_temp,
                        size_t temp_bytes, void *stream)
{
    return reduce_axis(ctx, "rt_reduce_axis_temp", op, type, d_in, outer, len, inner, d_out, 1,
                       d_temp, temp_bytes, stream);
}

int rt_axis_temp_bytes(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long outer,
                       unsigned long long len, unsigned long long inner, size_t *bytes)
{
    rt_err e;
    axis_decision *d;
    int rc, pushed = 0;
    const char *fn = "rt_axis_temp_bytes";
    unsigned long long m, n;

    api_begin(ctx);
    if (bytes)
        *bytes = 0;
    if ((rc = api_check_op_type(fn, ctx, op, type, &e)) != RT_OK
        || (rc = api_check_ctx(fn, ctx, &e)) != RT_OK)
        return api_finish(rc, &e);
    if (!bytes)
        return api_finish(rt_seterr(&e, RT_EINVAL, "%s: bytes is NULL", fn), &e);
    if (__builtin_mul_overflow(outer, inner, &m) || __builtin_mul_overflow(m, len, &n))
        return api_finish(api_check_axis(fn, ctx, op, type, NULL, outer, len, inner, NULL, &e),
                          &e);
    if (m == 0)
        return RT_OK;
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_axis_decide(ctx, op, type, outer, len, inner, NULL, &d, &e)) == RT_OK)
        *bytes = plan_axis_temp_bytes(&d->k->p, outer, len, inner);
    api_leave(pushed);
    return api_finish(rc, &e);
}

int rt_explain_axis(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long outer,
                    unsigned long long len, unsigned long long inner, char *buf, size_t len_buf)
{
    rt_err e;
    axis_decision *d;
    int rc, pushed = 0;
    const char *fn = "rt_explain_axis";
    unsigned long long m, n;

    api_begin(ctx);
    if (buf && len_buf)
        buf[0] = '\0';
    if ((rc = api_check_op_type(fn, ctx, op, type, &e)) != RT_OK
        || (rc = api_check_ctx(fn, ctx, &e)) != RT_OK)
        return api_finish(rc, &e);
    if (!buf || !len_buf)
        return api_finish(rt_seterr(&e, RT_EINVAL, "%s: no buffer", fn), &e);
    if (__builtin_mul_overflow(outer, inner, &m) || __builtin_mul_overflow(m, len, &n))
        return api_finish(api_check_axis(fn, ctx, op, type, NULL, outer, len, inner, NULL, &e),
                          &e);
    char tnb[96], types[256], cls[160];
    const char *on = api_opname(ctx, op), *tn = api_typename(op, type, tnb, sizeof tnb);
    optype_ts ts;
    if (api_user_of(ctx, op) || optype_resolve(op, type, &ts, NULL, 0))
        snprintf(types, sizeof types, "%s throughout", rt_type_name(optype_elem(type)));
    else
        snprintf(types, sizeof types, "element %s, accumulator %s (%zu-byte partials), result "
                 "%s (%zu bytes)", rt_type_name(ts.elem), rt_type_name(ts.acc),
                 api_acc_size(ctx, op, type), rt_type_name(ts.res), api_res_size(ctx, op, type));
    if (m == 0) {
        snprintf(buf, len_buf, "axis %s %s, outer = %llu len = %llu inner = %llu: no outputs, "
                 "no kernel; nothing is written\n  types: %s\n", on, tn, outer, len, inner,
                 types);
        return RT_OK;
    }
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_axis_decide(ctx, op, type, outer, len, inner, NULL, &d, &e)) != RT_OK)
        goto done;
    const kernel *k = d->k;
    const plan *p = &k->p;
    char entry[1536], ver[16], who[RT_NAME_MAX + 64] = "", kin[512];
    class_text(d->bo, d->bl, d->bi, cls, sizeof cls);
    snprintf(ver, sizeof ver, "%d.%d", k->nvrtc_version / 1000, k->nvrtc_version % 1000 / 10);
    if (d->passed)
        /* "none used": what runs is the built-in default (bench/pick.c reads "none"; the
         * shape named here is not the entry's, so bench_pick_axis_tuned leaves it). */
        snprintf(entry, sizeof entry, "none used: the winner for this shape class, %s %s "
                 "(device \"%s\" (sm_%d%d, %d SMs), tuned shape axis:%llux%llux%llu, median "
                 "%.2f us, in %s; %s%s), cannot be made here: %s; the built-in default runs "
                 "in its place", d->passed->family, d->passed->params, d->c->dev.name,
                 d->c->dev.cc_major, d->c->dev.cc_minor, d->c->dev.sm_count, d->passed->axis[0],
                 d->passed->axis[1], d->passed->axis[2], d->passed->median_us,
                 store_path(ctx->db), api_row_owner(d->c, d->passed),
                 api_kin_phrase(d->c, d->passed, kin, sizeof kin), d->why ? d->why : "?");
    else if (d->row)
        snprintf(entry, sizeof entry, "device \"%s\" (sm_%d%d, %d SMs), tuned shape "
                 "axis:%llux%llux%llu, median %.2f us, in %s; %s%s", d->c->dev.name,
                 d->c->dev.cc_major, d->c->dev.cc_minor, d->c->dev.sm_count, d->row->axis[0],
                 d->row->axis[1], d->row->axis[2], d->row->median_us, store_path(ctx->db),
                 api_row_owner(d->c, d->row), api_kin_note(ctx, d->c, d->row, op, kin, sizeof kin));
    else if (d->c->foreign)
        snprintf(entry, sizeof entry, "none: the %d winners for %s %s in %s are of another "
                 "definition than the registered one, so none is used", d->c->foreign, on, tn,
                 store_path(ctx->db));
    else
        snprintf(entry, sizeof entry, "none: %s holds no winner for %s %s (axis, inner %s, "
                 "cold L2) on a GPU of compute capability %d.x", store_path(ctx->db), on, tn,
                 inner == 1 ? "== 1" : "> 1", ctx->dev.cc_major);
    if (api_user_of(ctx, op))
        snprintf(who, sizeof who, " (user operator, definition %s)", api_user_of(ctx, op)->id);
    snprintf(buf, len_buf,
             "axis %s %s%s, outer = %llu len = %llu inner = %llu (decided for %s):\n"
             "  types: %s\n"
             "  kernel: %s %s (axis plan, hash %.12s)\n"
             "  launch: %llu tiles of %u outputs, %u split%s of len, %zu bytes of temporary "
             "storage\n"
             "  database entry: %s\n"
             "  fallback level: %s (this GPU: \"%s\", %s, %d SMs)\n"
             "  CUBIN: %s%s%s\n"
             "  database: %s (%s)\n",
             on, tn, who, outer, len, inner, cls, types, k->family, k->params, k->hash,
             plan_axis_tiles(p, outer, inner), p->tile, plan_axis_splits(p, outer, len, inner),
             plan_axis_splits(p, outer, len, inner) == 1 ? "" : "s",
             plan_axis_temp_bytes(p, outer, len, inner), entry, api_level_names[d->level],
             ctx->dev.name, ctx->arch, ctx->dev.sm_count,
             k->from_db ? "from the database (made by NVRTC " : "compiled here by NVRTC ", ver,
             k->from_db ? ")" : k->builtin ? " from the built-in template"
             : k->stored_src ? " from the source stored in the database"
                             : " from the template, for the database's config",
             store_path(ctx->db), ctx->db_how);
done:
    api_leave(pushed);
    return api_finish(rc, &e);
}
