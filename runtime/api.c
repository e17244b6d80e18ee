/*
 * api.c - libredtune, the runtime lookup library (include/redtune.h): open a tuned database
 * for one GPU, choose the kernel of each (operator, type, size range) through the fallback
 * chain, load it once, and launch it on the caller's stream. This file holds what every call
 * shares: contexts (opening, the default database's search, closing), this thread's message,
 * REDTUNE_TRACE, the driver entry points the library adds to driver.h's, and the argument
 * checks.
 *
 * The rest of the library's API lives beside this file: choosing a kernel per (op, type,
 * log2 bucket) through the fallback chain in api_choose.c, loading it (a stored CUBIN or
 * NVRTC) in api_kernel.c, rt_reduce / rt_reduce_temp in api_reduce.c, rt_explain in
 * api_explain.c, temporary storage per stream in api_temp.c, user-defined operators in
 * api_ops.c, the segmented calls in api_seg.c, the axis calls in api_axis.c; api_int.h holds
 * what they share.
 *
 * Contexts: the library binds the device's primary context (the CUDA runtime's), and makes
 * it current around its own driver calls only when the calling thread has another one
 * current, putting the caller's back afterwards.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_int.h"
#include "driver.h"
#include "optype.h"
#include "plan.h"
#include "store.h"

#define MSG_MAX 4096

#ifndef RT_DATADIR               /* $prefix/share/redtune; build.ninja sets it */
#define RT_DATADIR "/usr/local/share/redtune"
#endif

/* ---------------------------------------------------------------- tracing */

/* With REDTUNE_TRACE set (and not "0") at rt_open, the steps of choosing and loading a kernel
 * are timed on stderr, one line each: "redtune: trace: STEP: X.XXX ms". */
double api_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

void api_trace(const rt_ctx *ctx, double *t, const char *fmt, ...)
{
    if (!ctx->trace)
        return;
    double now = api_mono_ms();
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fprintf(stderr, "redtune: trace: %s: %.3f ms\n", what, now - *t);
    *t = now;
}

/* ---------------------------------------------------------------- messages, per thread */

/* The last call of this thread: its context, and its message when it failed. */
static _Thread_local struct {
    const rt_ctx *ctx;
    char msg[MSG_MAX];
} last;

void api_begin(const rt_ctx *ctx)
{
    last.ctx = ctx;
    last.msg[0] = '\0';
}

/* Return rc; on failure keep e's message as this thread's. */
int api_finish(int rc, const rt_err *e)
{
    if (rc != RT_OK)
        snprintf(last.msg, sizeof last.msg, "%s", e->msg);
    return rc;
}

const char *rt_errmsg(const rt_ctx *ctx)
{
    return last.ctx == ctx ? last.msg : "";
}

/* ---------------------------------------------------------------- driver entry points */

/* Entry points driver.h does not carry, from the same library (already loaded). */
struct api_cx api_cx;

static pthread_once_t cx_once = PTHREAD_ONCE_INIT;
static int cx_code = RT_OK;
static char cx_msg[512];

static void cx_load(void)
{
    const char *file = getenv("REDTUNE_LIBCUDA");
    if (!file || !*file)
        file = "libcuda.so.1";
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);   /* never closed, as in driver.c */
    if (!h) {
        cx_code = RT_ECUDA;
        snprintf(cx_msg, sizeof cx_msg, "no CUDA driver found: %s", dlerror());
        return;
    }
    static const struct { const char *name; size_t off; int optional; } syms[] = {
        {"cuCtxGetCurrent", offsetof(__typeof__(api_cx), CtxGetCurrent), 0},
        {"cuCtxPushCurrent_v2", offsetof(__typeof__(api_cx), CtxPushCurrent), 0},
        {"cuCtxPopCurrent_v2", offsetof(__typeof__(api_cx), CtxPopCurrent), 0},
        {"cuStreamGetId", offsetof(__typeof__(api_cx), StreamGetId), 1},
        {"cuMemsetD8Async", offsetof(__typeof__(api_cx), MemsetD8Async), 0},
        {"cuMemsetD16Async", offsetof(__typeof__(api_cx), MemsetD16Async), 0},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p && !syms[i].optional) {
            cx_code = RT_ECUDA;
            snprintf(cx_msg, sizeof cx_msg, "%s: the CUDA driver lacks %s (driver too old)",
                     file, syms[i].name);
            return;
        }
        memcpy((char *)&api_cx + syms[i].off, &p, sizeof p);
    }
}

static int driver_extras(rt_err *e)
{
    pthread_once(&cx_once, cx_load);
    return cx_code == RT_OK ? RT_OK : rt_seterr(e, cx_code, "%s", cx_msg);
}

/* Make the context's CUDA context current unless it is; *pushed says to undo it. */
int api_enter(const rt_ctx *ctx, int *pushed, rt_err *e)
{
    CUcontext cur = NULL;
    CUresult r = api_cx.CtxGetCurrent(&cur);
    *pushed = 0;
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "cuCtxGetCurrent", e);
    if (cur == ctx->cuctx)
        return RT_OK;
    if ((r = api_cx.CtxPushCurrent(ctx->cuctx)) != CUDA_SUCCESS)
        return driver_fail(r, "cuCtxPushCurrent", e);
    *pushed = 1;
    return RT_OK;
}

void api_leave(int pushed)
{
    CUcontext popped;
    if (pushed)
        api_cx.CtxPopCurrent(&popped);
}

/* A driver failure, with out-of-memory reported as RT_ENOMEM. */
int api_cuda_fail(CUresult r, const char *what, rt_err *e)
{
    int rc = driver_fail(r, what, e);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        rc = e->code = RT_ENOMEM;
    return rc;
}

/* ---------------------------------------------------------------- opening and closing */

static void destroy(rt_ctx *ctx)
{
    if (ctx->retained) {
        rt_err *e = malloc(sizeof *e);
        int pushed = 0, has_work = ctx->kernels != NULL;
        for (int i = 0; i < NSLOTS; i++)
            has_work |= ctx->slots[i].temp != 0;
        has_work |= ctx->kept != NULL;
        if (e && api_enter(ctx, &pushed, e) == RT_OK) {
            /* Pending work may still read the modules and temp storage freed below. */
            if (has_work)
                cu.CtxSynchronize();
            for (int i = 0; i < NSLOTS; i++)
                if (ctx->slots[i].temp)
                    cu.MemFree(ctx->slots[i].temp - BLOCK_PAD);
            for (kept_block *k = ctx->kept; k; k = k->next)
                cu.MemFree(k->temp);
            for (kernel *k = ctx->kernels; k; k = k->next)
                plan_unload(&k->p);
            for (int l = 0; l < 2; l++)
                for (int w = 0; w < 2; w++)
                    if (ctx->check_mod[l][w])
                        cu.ModuleUnload(ctx->check_mod[l][w]);
            api_leave(pushed);
        }
        free(e);
        cu.DevicePrimaryCtxRelease(ctx->cudev);
    }
    while (ctx->kept) {
        kept_block *k = ctx->kept;
        ctx->kept = k->next;
        free(k);
    }
    while (ctx->kernels) {
        kernel *k = ctx->kernels;
        ctx->kernels = k->next;
        free(k);
    }
    while (ctx->decisions) {
        decision *d = ctx->decisions;
        ctx->decisions = d->next;
        free(d->why);
        free(d);
    }
    for (axis_decision *d = atomic_load_explicit(&ctx->axis_decisions, memory_order_relaxed),
         *next; d; d = next) {
        next = d->next;
        free(d->why);
        free(d);
    }
    while (ctx->seg_decisions) {
        struct seg_decision *d = ctx->seg_decisions;
        ctx->seg_decisions = d->next;
        free(d->why);
        free(d);
    }
    api_choices_free(ctx);
    for (int o = 0; o < NOPS; o++)
        free(atomic_load_explicit(&ctx->cache[o], memory_order_relaxed));
    store_close(ctx->db);
    if (ctx->locks) {
        pthread_mutex_destroy(&ctx->lock);
        pthread_mutex_destroy(&ctx->slot_lock);
        pthread_mutex_destroy(&ctx->kept_lock);
        for (int i = 0; i < NSLOTS; i++)
            pthread_mutex_destroy(&ctx->slots[i].lock);
        capture_close(&ctx->cap);
    }
    free(ctx);
}

/* ---------------------------------------------------------------- the default database */

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int api_find_db(const char *env, const char *moddir, const char *datadir, char *path,
                size_t len, const char **how, rt_err *e)
{
    char c[4][PATH_MAX + 32];
    const char *hows[4] = {"the working directory", "beside libredtune",
                           "installed beside libredtune", "installed"};
    int have[4] = {1, 0, 0, 0};

    if (env && *env) {
        snprintf(path, len, "%s", env);
        *how = "$REDTUNE_DB";
        return RT_OK;
    }
    snprintf(c[0], sizeof c[0], "redtune.db");
    if (moddir && *moddir) {
        snprintf(c[1], sizeof c[1], "%s/redtune.db", moddir);
        snprintf(c[2], sizeof c[2], "%s/../share/redtune/redtune.db", moddir);
        have[1] = have[2] = 1;
    }
    if (datadir && *datadir) {
        snprintf(c[3], sizeof c[3], "%s/redtune.db", datadir);
        have[3] = 1;
    }
    for (int i = 0; i < 4; i++)
        if (have[i] && is_file(c[i])) {
            snprintf(path, len, "%s", c[i]);
            *how = hows[i];
            return RT_OK;
        }
    path[0] = '\0';
    *how = "";
    return rt_seterr(e, RT_EDB, "rt_open: no database: REDTUNE_DB is unset and none of "
                     "these exists: %s%s%s%s%s%s%s (ninja builds build/redtune.db; ninja "
                     "install puts it in $prefix/share/redtune)", c[0],
                     have[1] ? ", " : "", have[1] ? c[1] : "", have[2] ? ", " : "",
                     have[2] ? c[2] : "", have[3] ? ", " : "", have[3] ? c[3] : "");
}

void api_module_dir(char *dir, size_t len)
{
    Dl_info info;
    char buf[PATH_MAX], *slash;
    ssize_t n;

    dir[0] = '\0';
    if (dladdr((void *)&rt_open, &info) && info.dli_fname && strchr(info.dli_fname, '/')
        && realpath(info.dli_fname, buf)) {
        /* libredtune.so, or the program itself */
    } else if ((n = readlink("/proc/self/exe", buf, sizeof buf - 1)) > 0) {
        buf[n] = '\0';
    } else {
        return;
    }
    if ((slash = strrchr(buf, '/')) != NULL) {
        *slash = '\0';
        snprintf(dir, len, "%s", slash == buf ? "/" : buf);
    }
}

/* ---------------------------------------------------------------- opening */

int rt_open_err(const char *db_path, int device, rt_ctx **out, char *msg, size_t len)
{
    rt_err e;
    rt_ctx *ctx = NULL;
    const char *path = db_path, *how = "given";
    char found[PATH_MAX + 32], moddir[PATH_MAX];
    CUresult r;
    int rc = RT_OK;

    api_begin(NULL);
    rt_clearerr(&e);
    if (msg && len)
        msg[0] = '\0';
    if (out)
        *out = NULL;
    if (!path && out && device >= 0) {
        api_module_dir(moddir, sizeof moddir);
        if ((rc = api_find_db(getenv("REDTUNE_DB"), moddir, RT_DATADIR, found, sizeof found,
                              &how, &e)) != RT_OK)
            goto done;
        path = found;
    }
    if (!out) {
        rc = rt_seterr(&e, RT_EINVAL, "rt_open: out is NULL");
        goto done;
    }
    if (device < 0) {
        rc = rt_seterr(&e, RT_EINVAL, "rt_open: device %d: a CUDA device ordinal is 0 or more",
                       device);
        goto done;
    }
    if (!(ctx = calloc(1, sizeof *ctx))) {
        rc = rt_seterr(&e, RT_ENOMEM, "rt_open: out of memory");
        goto done;
    }
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_mutex_init(&ctx->slot_lock, NULL);
    pthread_mutex_init(&ctx->kept_lock, NULL);
    for (int i = 0; i < NSLOTS; i++) {
        pthread_mutex_init(&ctx->slots[i].lock, NULL);
        atomic_init(&ctx->slots[i].used, 0);
        atomic_init(&ctx->slots[i].key, 0);
    }
    atomic_init(&ctx->nslots, 0);
    for (int o = 0; o < NOPS; o++)
        atomic_init(&ctx->cache[o], NULL);
    atomic_init(&ctx->nuops, 0);
    atomic_init(&ctx->axis_decisions, NULL);
    capture_init(&ctx->cap, stderr);
    ctx->locks = 1;
    ctx->db_how = how;
    const char *tr = getenv("REDTUNE_TRACE");
    ctx->trace = tr && tr[0] && strcmp(tr, "0") != 0;

    /* The database first: a bad path is reported as such on a machine with no GPU too. */
    if ((rc = store_open_read(path, &ctx->db, &e)) != RT_OK
        || (rc = store_quick_check(ctx->db, &e)) != RT_OK
        || (rc = driver_load(&e)) != RT_OK || (rc = driver_extras(&e)) != RT_OK
        || (rc = driver_device_query(device, &ctx->dev, &e)) != RT_OK)
        goto done;
    device_arch(&ctx->dev, ctx->arch);
    if ((r = cu.DeviceGet(&ctx->cudev, device)) != CUDA_SUCCESS) {
        rc = driver_fail(r, "cuDeviceGet", &e);
        goto done;
    }
    if ((r = cu.DevicePrimaryCtxRetain(&ctx->cuctx, ctx->cudev)) != CUDA_SUCCESS) {
        rc = driver_fail(r, "cuDevicePrimaryCtxRetain", &e);
        goto done;
    }
    ctx->retained = 1;
    *out = ctx;
    ctx = NULL;
done:
    if (ctx)
        destroy(ctx);
    if (rc != RT_OK && msg && len)
        snprintf(msg, len, "%s", e.msg);
    return api_finish(rc, &e);
}

int rt_open(const char *db_path, int device, rt_ctx **out)
{
    return rt_open_err(db_path, device, out, NULL, 0);
}

void rt_close(rt_ctx *ctx)
{
    api_begin(NULL);
    if (ctx)
        destroy(ctx);
}

/* ---------------------------------------------------------------- arguments */

const char *api_opname(const rt_ctx *ctx, rt_op op)
{
    const user_op *u = api_user_of(ctx, op);
    return u ? u->op.name : rt_op_name(op) ? rt_op_name(op) : "?";
}

/* A built-in operator, or a handle registered on ctx whose type is 'type'. With a NULL
 * context a user handle passes here, for api_check_ctx to report. */
int api_check_op_type(const char *fn, const rt_ctx *ctx, rt_op op, rt_type type, rt_err *e)
{
    char why[160];
    optype_ts ts;
    if (((unsigned)type & 0xffu) >= RT_TYPE_COUNT)
        return rt_seterr(e, RT_EINVAL, "%s: unknown type %d (known: %s)", fn, (int)type,
                         optype_type_list());
    if (optype_elem(type) >= RT_TYPE_COUNT)
        return rt_seterr(e, RT_EINVAL, "%s: type spec 0x%x is malformed: bits 0..7 hold the "
                         "element type, 8..15 RT_ACC's accumulator + 1 (at most %d), bit 16 "
                         "RT_RESULT_ELEM, bit 17 RT_RESULT_INDEX, and no other bit is set", fn,
                         (unsigned)type, RT_TYPE_COUNT);
    if ((unsigned)op < RT_OP_COUNT)
        return optype_resolve(op, type, &ts, why, sizeof why)
            ? rt_seterr(e, RT_EINVAL, "%s: %s", fn, why) : RT_OK;
    if ((int)op >= RT_OP_USER_FIRST && (int)op < RT_OP_USER_FIRST + RT_USER_OPS_MAX && !ctx)
        return RT_OK;
    const user_op *u = api_user_of(ctx, op);
    int nu = ctx ? atomic_load_explicit(&ctx->nuops, memory_order_acquire) : 0;
    if (!u && nu)
        return rt_seterr(e, RT_EINVAL, "%s: unknown operator %d (known: %s, and the user "
                         "operators %d..%d of this context)", fn, (int)op, optype_op_list(),
                         RT_OP_USER_FIRST, RT_OP_USER_FIRST + nu - 1);
    if (!u)
        return rt_seterr(e, RT_EINVAL, "%s: unknown operator %d (known: %s)", fn, (int)op,
                         optype_op_list());
    if (u->op.type != type)
        return rt_seterr(e, RT_EINVAL, "%s: operator '%s' is registered for %s, not %s", fn,
                         u->op.name, rt_type_name(u->op.type),
                         api_typename(RT_SUM, type, why, sizeof why));
    return RT_OK;
}

const char *api_typename(rt_op op, rt_type type, char *buf, size_t len)
{
    if (rt_type_name(type))
        return rt_type_name(type);
    optype_spec_text((unsigned)op < RT_OP_COUNT ? op : RT_SUM, type, buf, len);
    return buf;
}

int api_slot(rt_op op, rt_type type)
{
    optype_ts ts;
    return optype_resolve(op, type, &ts, NULL, 0) ? 0 : ts.slot;
}

int api_check_ctx(const char *fn, const rt_ctx *ctx, rt_err *e)
{
    return ctx ? RT_OK : rt_seterr(e, RT_EINVAL, "%s: the context is NULL", fn);
}

int api_check_pointers(const char *fn, const rt_ctx *ctx, rt_op op, rt_type type,
                          const void *d_in, unsigned long long n, const void *d_out, rt_err *e)
{
    /* d_in by the element; d_out by the result: 8 for argmin/argmax ({value, index}), else
     * its scalar (var/std_mean's pair is two scalars, as rt_var_mean_f32 is laid out). */
    char tn[96];
    optype_ts ts;
    size_t es = optype_size(type), oa = es;
    if (!api_user_of(ctx, op) && optype_resolve(op, type, &ts, NULL, 0) == 0)
        oa = optype_is_arg(op) ? 8 : optype_size(ts.res);
    if (!d_out)
        return rt_seterr(e, RT_EINVAL, "%s: d_out is NULL", fn);
    if (!d_in && n > 0)
        return rt_seterr(e, RT_EINVAL, "%s: d_in is NULL with n = %llu", fn, n);
    if ((uintptr_t)d_in % es)
        return rt_seterr(e, RT_EINVAL, "%s: d_in %p is not aligned to its %zu-byte %s "
                         "elements", fn, d_in, es, rt_type_name(optype_elem(type)));
    if ((uintptr_t)d_out % oa)
        return rt_seterr(e, RT_EINVAL, "%s: d_out %p is not aligned to %zu bytes (%s %s)", fn,
                         d_out, oa, api_opname(ctx, op), api_typename(op, type, tn, sizeof tn));
    return RT_OK;
}
