/*
 * api.c - libredtune, the runtime lookup library (include/redtune.h): open a tuned database
 * for one GPU, choose the kernel of each (operator, type, size range) through the fallback
 * chain, load it once, and launch it on the caller's stream.
 *
 * Choosing (under the context's mutex, once per (op, type, floor(log2 n))):
 *   1. the device row of the database nearest to this GPU that has winners for (op, type,
 *      layout "flat", cold L2): same name and SM count, else same compute capability, else
 *      same major architecture (store_find_device); else the built-in default (gridstride,
 *      B=256 V=16/size (at most 4) U=4 G=4, generated from the embedded template);
 *   2. among that device's winners, the tuned size m nearest to the bucket in log2:
 *      |log2 m - (k + 0.5)| least for the bucket [2^k, 2^(k+1)), the smaller m on a tie;
 *   3. the kernel's CUBIN: one stored for this arch by any NVRTC, the newest first (NVRTC is
 *      not even loaded for it), else the stored source compiled by NVRTC.
 * The decision is then published in an array of atomic pointers, so a later call reads it
 * with no lock: a reduction is a table lookup and the launches.
 *
 * The rest of the library's API lives beside this file: temporary storage per stream in
 * api_temp.c, user-defined operators in api_ops.c, the segmented calls in api_seg.c;
 * api_int.h holds what they share.
 *
 * Contexts: the library binds the device's primary context (the CUDA runtime's), and makes
 * it current around its own driver calls only when the calling thread has another one
 * current, putting the caller's back afterwards.
 */
#include <dlfcn.h>
#include <math.h>
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
#include "codegen.h"
#include "driver.h"
#include "family.h"
#include "hash.h"
#include "nvrtc.h"
#include "optype.h"
#include "plan.h"
#include "store.h"

#define MSG_MAX 4096

#ifndef RT_DATADIR               /* $prefix/share/redtune; build.ninja sets it */
#define RT_DATADIR "/usr/local/share/redtune"
#endif

const char *const api_level_names[] = {
    "?", "exact device", "same compute capability", "same major architecture",
    "built-in default",
};

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
        free(d);
    }
    for (axis_decision *d = atomic_load_explicit(&ctx->axis_decisions, memory_order_relaxed),
         *next; d; d = next) {
        next = d->next;
        free(d);
    }
    while (ctx->seg_decisions) {
        struct seg_decision *d = ctx->seg_decisions;
        ctx->seg_decisions = d->next;
        free(d);
    }
    for (int l = 0; l < NLAYOUTS; l++)
        for (int o = 0; o < NOPS; o++) {
            for (int t = 0; ctx->choices[l][o] && t < OPTYPE_SLOTS; t++)
                free(ctx->choices[l][o][t].rows);
            free(ctx->choices[l][o]);
        }
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

/* The row of ctx->cache / ctx->choices of a checked operator. */
static int op_index(rt_op op)
{
    return (int)op < RT_OP_COUNT ? (int)op : RT_OP_COUNT + ((int)op - RT_OP_USER_FIRST);
}

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
                         "RT_RESULT_ELEM, and no other bit is set", fn, (unsigned)type,
                         RT_TYPE_COUNT);
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

/* The unit of config 'c' for (op, type): a built-in operator's, or a user operator's. */
static int emit(const rt_ctx *ctx, const rt_config *c, rt_op op, rt_type type, char **src,
                rt_err *e)
{
    const user_op *u = api_user_of(ctx, op);
    return u ? codegen_emit_user(c, &u->op, src, e) : codegen_emit(c, op, type, src, e);
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

/* ---------------------------------------------------------------- choosing */

static int collect_row(const store_best_row *row, void *arg)
{
    choice *c = arg;
    if (c->nrows == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        best_entry *rows = realloc(c->rows, (size_t)cap * sizeof *rows);
        if (!rows) {
            c->oom = 1;
            return 1;   /* stops the walk */
        }
        c->rows = rows;
        c->cap = cap;
    }
    best_entry *b = &c->rows[c->nrows++];
    b->n = row->n;
    snprintf(b->hash, sizeof b->hash, "%s", row->kernel_hash);
    snprintf(b->family, sizeof b->family, "%s", row->family);
    snprintf(b->params, sizeof b->params, "%s", row->params);
    b->median_us = row->median_us;
    b->seg_mean = row->seg_mean;
    memset(b->axis, 0, sizeof b->axis);
    if (row->layout && !strncmp(row->layout, "axis:", 5)
        && sscanf(row->layout + 5, "%llux%llux%llu", &b->axis[0], &b->axis[1], &b->axis[2]) != 3)
        memset(b->axis, 0, sizeof b->axis);
    return 0;
}

/* The database's answer for (layout, op, type), read once; layout 0 is flat, 1 keys, 2
 * offsets (every profile of the layout), API_AXIS_ROWS / _COLS the `axis:OxLxI` rows of
 * inner == 1 / inner > 1. Caller holds ctx->lock. */
static const char *const layout_names[NLAYOUTS] = {LAYOUT, "keys", "offsets", "axis", "axis"};

int api_get_choice(rt_ctx *ctx, int layout, rt_op op, rt_type type, choice **out, rt_err *e)
{
    choice **row = &ctx->choices[layout][op_index(op)];
    optype_ts ts;
    int rc = RT_OK;

    *out = NULL;
    if (optype_resolve(op, type, &ts, NULL, 0))
        return rt_seterr(e, RT_EINVAL, "api_get_choice: type spec 0x%x of %s does not "
                         "resolve", (unsigned)type, api_opname(ctx, op));
    if (!*row && !(*row = calloc(OPTYPE_SLOTS, sizeof **row)))
        return rt_seterr(e, RT_ENOMEM, "out of memory");
    choice *c = &(*row)[ts.slot];
    const char *on = api_opname(ctx, op), *tn = rt_type_name(ts.elem);

    *out = c;
    if (c->resolved)
        return RT_OK;
    /* The database keys its winners by (op, element type, accumulator, result): schema
     * version 3; a version 2 file reads as accumulator = result = type. */
    const char *an = rt_type_name(ts.acc), *rn = rt_type_name(ts.res);
    /* axis_kind: 1 rows of inner == 1, 0 of inner > 1, -1 any row of the layout */
    int axis_kind = layout == API_AXIS_ROWS ? 1 : layout == API_AXIS_COLS ? 0 : -1;
    rc = store_find_device_kind(ctx->db, &ctx->dev, on, tn, an, rn, layout_names[layout],
                                axis_kind, HOT, &c->dev, e);
    if (rc == RT_ENOTFOUND) {
        rt_clearerr(e);
        c->level = LEVEL_BUILTIN;
        c->resolved = 1;
        return RT_OK;
    }
    if (rc != RT_OK)
        return rc;
    c->nrows = 0;
    c->oom = 0;
    rc = store_list_best_for_device_kind(ctx->db, c->dev.id, on, tn, an, rn,
                                         layout_names[layout], axis_kind, HOT, collect_row, c,
                                         e);
    if (rc == RT_OK && c->oom)
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory reading the winners of %s %s",
                       store_path(ctx->db), on, tn);
    if (rc == RT_OK && api_user_of(ctx, op))
        rc = api_keep_definition(ctx, api_user_of(ctx, op), c, e);
    if (rc != RT_OK) {
        free(c->rows);
        c->rows = NULL;
        c->nrows = c->cap = 0;
        return rc;
    }
    c->level = c->nrows ? c->dev.level : LEVEL_BUILTIN;
    c->resolved = 1;
    return RT_OK;
}

/* The winner for bucket [2^b, 2^(b+1)): tuned size nearest to 2^(b + 0.5) in log2. */
static const best_entry *pick(const choice *c, unsigned b)
{
    const best_entry *best = NULL;
    double target = b + 0.5, dist = INFINITY;
    for (int i = 0; i < c->nrows; i++) {
        double d = fabs(log2((double)c->rows[i].n) - target);
        if (d < dist) {
            dist = d;
            best = &c->rows[i];
        }
    }
    return best;
}

/* The launch plan a kernel's source declares ("// @plan onelaunch"); -1 when none. */
static int source_plan(const char *src)
{
    const char *p = src ? strstr(src, "// @plan") : NULL;
    if (!p)
        return -1;
    p += strlen("// @plan");
    while (*p == ' ' || *p == '\t')
        p++;
    if (!strncmp(p, "onelaunch", 9))
        return PLAN_ONELAUNCH;
    if (!strncmp(p, "multipass", 9))
        return PLAN_MULTIPASS;
    if (!strncmp(p, "segmented", 9))
        return PLAN_SEGMENTED;
    if (!strncmp(p, "axis", 4))
        return PLAN_AXIS;
    return -1;
}

/*
 * The kernel 'hash' (family, params) for (op, type), loaded: found among those loaded, or
 * its CUBIN taken from the database or compiled (see the file comment). 'src' is the source
 * when the caller has it (the built-in default), else it is read from the database.
 * Caller holds ctx->lock and has the CUDA context current.
 */
static int get_kernel(rt_ctx *ctx, rt_op op, rt_type type, const char *hash,
                      const char *family, const char *params, const char *src, int builtin,
                      kernel **out, rt_err *e)
{
    kernel *k;
    store_binary b;
    nvrtc_output o;
    char *stored_src = NULL, name[RT_NAME_MAX + 8], tn[96];
    const char *path = store_path(ctx->db);
    rt_err *nv = NULL;            /* why NVRTC cannot be used, or how it failed */
    int rc = RT_OK, ver = 0, kind;

    memset(&b, 0, sizeof b);
    memset(&o, 0, sizeof o);
    *out = NULL;
    for (k = ctx->kernels; k; k = k->next)
        if (!strcmp(k->hash, hash)) {
            *out = k;
            return RT_OK;
        }
    if (!(k = calloc(1, sizeof *k)) || !(nv = malloc(sizeof *nv))) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory loading kernel %.12s", hash);
        goto done;
    }
    rt_clearerr(nv);
    double t = api_mono_ms();
    snprintf(k->hash, sizeof k->hash, "%s", hash);
    snprintf(k->family, sizeof k->family, "%s", family);
    snprintf(k->params, sizeof k->params, "%s", params);
    k->builtin = builtin;
    snprintf(name, sizeof name, "%s.cu", family);
    if (!src) {
        /* The database is a shipped artefact: a source whose SHA-256 is not its hash was
         * altered, and is not run; nor is its CUBIN, trusted only through this row. */
        rc = store_get_checked_source(ctx->db, hash, &stored_src, e);
        if (rc != RT_OK)
            goto done;
        src = stored_src;
        k->stored_src = 1;
        api_trace(ctx, &t, "kernel %.12s: source from the database", hash);
    }

    kind = source_plan(src);
    if (kind < 0 && family_find(family))
        kind = (int)family_find(family)->plan;
    if (kind < 0) {
        rc = rt_seterr(e, RT_EINVAL, "%s: kernel %.12s: family '%s' is not built into this "
                       "library and its source declares no @plan", path, hash, family);
        goto done;
    }

    /* A CUBIN of the database for this arch, the newest NVRTC's first: no NVRTC needed (its
     * dlopen alone costs several milliseconds). */
    rc = store_get_binary_any(ctx->db, hash, ctx->arch, &b, &ver, e);
    api_trace(ctx, &t, "kernel %.12s: CUBIN looked up in the database", hash);
    if (rc == RT_OK) {
        rc = plan_load(&k->p, b.cubin, (rt_plan_kind)kind, api_acc_size(ctx, op, type),
                       ctx->dev.sm_count, e);
        if (rc == RT_OK) {
            k->from_db = 1;
            k->nvrtc_version = ver;
            api_trace(ctx, &t, "kernel %.12s: module loaded (plan_load)", hash);
            goto publish;
        }
        /* Refused by this driver (made by a newer NVRTC than it knows, say): compile. */
        snprintf(nv->msg, sizeof nv->msg, "the stored CUBIN (NVRTC %d.%d) did not load: %s; ",
                 ver / 1000, ver % 1000 / 10, e->msg);
    } else if (rc != RT_ENOTFOUND) {
        goto done;
    }
    rt_clearerr(e);

    /* Else the source, compiled by NVRTC (loaded here, at the first kernel that needs it). */
    size_t said = strlen(nv->msg);
    rt_err *why = malloc(sizeof *why);
    if (!why) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory loading kernel %.12s", hash);
        goto done;
    }
    rt_clearerr(why);
    if ((rc = nvrtc_load(why)) == RT_OK) {
        api_trace(ctx, &t, "kernel %.12s: NVRTC loaded", hash);
        if ((rc = nvrtc_compile(src, name, ctx->arch, &o, why)) == RT_OK)
            api_trace(ctx, &t, "kernel %.12s: compiled by NVRTC", hash);
    }
    snprintf(nv->msg + said, sizeof nv->msg - said, "%s", why->msg);
    free(why);
    if (rc != RT_OK) {
        if (builtin)
            rc = rt_seterr(e, RT_ENVRTC, "%s %s: %s has no winner for this GPU (%s, %s) "
                           "or one of its architecture, and the built-in default "
                           "(%s %s) has to be compiled: %s", api_opname(ctx, op),
                           api_typename(op, type, tn, sizeof tn), path, ctx->dev.name, ctx->arch, family,
                           params, nv->msg);
        else
            rc = rt_seterr(e, RT_ENVRTC, "%s %s: %s holds no CUBIN for %s of kernel %.12s "
                           "(%s %s) and it cannot be compiled here: %s", api_opname(ctx, op),
                           api_typename(op, type, tn, sizeof tn), path, ctx->arch, hash, family, params,
                           nv->msg);
        goto done;
    }
    k->nvrtc_version = nvrtc_version();
    rc = plan_load(&k->p, o.cubin, (rt_plan_kind)kind, api_acc_size(ctx, op, type),
                   ctx->dev.sm_count, e);
    if (rc != RT_OK)
        goto done;
    api_trace(ctx, &t, "kernel %.12s: module loaded (plan_load)", hash);
publish:
    k->next = ctx->kernels;
    ctx->kernels = k;
    *out = k;
    k = NULL;
done:
    free(k);
    free(nv);
    free(stored_src);
    store_binary_free(&b);
    nvrtc_output_free(&o);
    return rc;
}

/* The unit this library generates for config 'cfg' and (op, type), loaded: its CUBIN from
 * the database when one is stored under the unit's hash, else compiled (get_kernel). */
int api_config_kernel(rt_ctx *ctx, rt_op op, rt_type type, const rt_config *cfg,
                         int builtin, kernel **out, rt_err *e)
{
    char *src = NULL, hash[RT_HASH_HEX], params[256];
    int rc = emit(ctx, cfg, op, type, &src, e);
    if (rc)
        return rc;
    hash_hex(src, strlen(src), hash);
    config_format(cfg, params, sizeof params);
    rc = get_kernel(ctx, op, type, hash, cfg->family->name, params, src, builtin, out, e);
    free(src);
    return rc;
}

/* The built-in default for (op, type): gridstride B=256 V=16/size U=min(4, 16/V) G=4
 * (16-byte loads; U*V at most 16 accumulators a thread, so the halves' V=8 and the bytes'
 * V=16 do not spill; the 32/64-bit types keep V=4/2 U=4), legal for every built-in operator
 * (they all commute) and type and for a commutative user operator; a user operator that does not commute gets diffwarps with its defaults (P=8
 * C=1 W=32 PAD=1), which keeps the order of the elements. */
static int builtin_kernel(rt_ctx *ctx, rt_op op, rt_type type, kernel **out, rt_err *e)
{
    const user_op *u = api_user_of(ctx, op);
    const char *fam = u && !u->op.commutative ? "diffwarps" : "gridstride";
    const rt_family *f = family_find(fam);
    rt_config cfg;
    long long v = (long long)(16 / optype_size(type)), unroll = 16 / v < 4 ? 16 / v : 4;
    int rc = RT_OK;

    *out = NULL;
    if (!f)
        return rt_seterr(e, RT_ENOTFOUND, "the built-in default family %s is not "
                         "built into this library%s%s", fam, family_error() ? ": " : "",
                         family_error() ? family_error() : "");
    config_default(f, &cfg);
    if (f->needs_commutative
        && ((rc = config_set(&cfg, "B", 256, e)) != RT_OK
            || (rc = config_set(&cfg, "V", v, e)) != RT_OK
            || (rc = config_set(&cfg, "U", unroll, e)) != RT_OK
            || (rc = config_set(&cfg, "G", 4, e)) != RT_OK))
        return rc;
    return api_config_kernel(ctx, op, type, &cfg, 1, out, e);
}

/* A config of family 'f' from a stored "NAME=V ..." string (unknown words are errors). */
int api_params_config(const rt_family *f, const char *params, rt_config *cfg, rt_err *e)
{
    config_default(f, cfg);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", params ? params : "");
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        if (!eq)
            continue;
        *eq = '\0';
        int rc = config_set(cfg, w, atoll(eq + 1), e);
        if (rc)
            return rc;
    }
    return RT_OK;
}

/*
 * A winner of the database, loaded as the unit this library generates for its family and
 * parameters, not as the stored source: the database chooses the config, the code is the
 * library's own. A winner tuned by an older generator (another prelude, an older template)
 * thus runs with today's semantics (float min/max of only NaN, say), and its CUBIN is used
 * only when it was stored for exactly this unit (same SHA-256); otherwise the unit is
 * compiled. Only a family this library does not know (a database from a newer redtune) is
 * run from its stored source, which get_kernel checks against its hash.
 */
int api_winner_kernel(rt_ctx *ctx, rt_op op, rt_type type, const best_entry *row,
                      kernel **out, rt_err *e)
{
    const rt_family *f = family_find(row->family);
    rt_config cfg;
    if (!f || api_params_config(f, row->params, &cfg, e) != RT_OK) {
        rt_clearerr(e);
        return get_kernel(ctx, op, type, row->hash, row->family, row->params, NULL, 0, out, e);
    }
    int rc = api_config_kernel(ctx, op, type, &cfg, 0, out, e);
    if (rc == RT_OK && strcmp((*out)->hash, row->hash)) {
        double t = api_mono_ms();
        api_trace(ctx, &t, "winner %.12s (%s %s) regenerated by this library as %.12s", row->hash,
              row->family, row->params, (*out)->hash);
    }
    return rc;
}

/* Choose, load and publish the decision for (op, type, bucket b). */
static int resolve(rt_ctx *ctx, rt_op op, rt_type type, unsigned b, decision **out,
                   rt_err *e)
{
    decision *d;
    choice *c;
    kernel *k = NULL;
    const best_entry *row = NULL;
    decision_row *drow;
    char tn[96];
    int rc = RT_OK, si = api_slot(op, type);

    pthread_mutex_lock(&ctx->lock);
    drow = atomic_load_explicit(&ctx->cache[op_index(op)], memory_order_acquire);
    if (!drow) {
        if (!(drow = calloc(1, sizeof *drow))) {
            d = NULL;
            rc = rt_seterr(e, RT_ENOMEM, "out of memory");
            goto done;
        }
        for (int t = 0; t < OPTYPE_SLOTS; t++)
            for (int i = 0; i < NBUCKETS; i++)
                atomic_init(&drow->d[t][i], NULL);
        atomic_store_explicit(&ctx->cache[op_index(op)], drow, memory_order_release);
    }
    d = atomic_load_explicit(&drow->d[si][b], memory_order_acquire);
    if (d)
        goto done;   /* another thread decided meanwhile */
    double t = api_mono_ms();
    if ((rc = api_get_choice(ctx, 0, op, type, &c, e)) != RT_OK)
        goto done;
    api_trace(ctx, &t, "%s %s: winners read from the database", api_opname(ctx, op),
          api_typename(op, type, tn, sizeof tn));
    if (c->level != LEVEL_BUILTIN) {
        row = pick(c, b);
        rc = api_winner_kernel(ctx, op, type, row, &k, e);
    } else {
        rc = builtin_kernel(ctx, op, type, &k, e);
    }
    if (rc != RT_OK)
        goto done;   /* not cached: the next call tries again */
    if (!(d = calloc(1, sizeof *d))) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory");
        goto done;
    }
    d->k = k;
    d->level = c->level;
    d->c = c;
    d->row = row;
    d->next = ctx->decisions;
    ctx->decisions = d;
    atomic_store_explicit(&drow->d[si][b], d, memory_order_release);
    if (ctx->cap.log) {
        char what[RT_NAME_MAX + 128];
        snprintf(what, sizeof what, "%s %s n in [2^%u, 2^%u)", api_opname(ctx, op),
                 api_typename(op, type, tn, sizeof tn), b, b + 1);
        api_log_choice(ctx, what, c->level, row ? c->dev.name : NULL, k);
    }
done:
    pthread_mutex_unlock(&ctx->lock);
    *out = rc == RT_OK ? d : NULL;
    return rc;
}

unsigned api_bucket_of(unsigned long long n)
{
    return 63u - (unsigned)__builtin_clzll(n);   /* n >= 1 */
}

/* Whether the decision for n >= 1 is made (its kernel loaded): nothing to load. */
int api_decided(const rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n)
{
    decision_row *row = atomic_load_explicit(&ctx->cache[op_index(op)], memory_order_acquire);
    return row && atomic_load_explicit(&row->d[api_slot(op, type)][api_bucket_of(n)],
                                       memory_order_acquire) != NULL;
}

/* The decision for n >= 1: a lock-free lookup once made. */
int api_get_decision(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n,
                        decision **out, rt_err *e)
{
    unsigned b = api_bucket_of(n);
    decision_row *row = atomic_load_explicit(&ctx->cache[op_index(op)], memory_order_acquire);
    *out = row ? atomic_load_explicit(&row->d[api_slot(op, type)][b], memory_order_acquire)
               : NULL;
    return *out ? RT_OK : resolve(ctx, op, type, b, out, e);
}

/* ---------------------------------------------------------------- REDTUNE_LOG, REDTUNE_CAPTURE */

/* A new decision: a fallback (another GPU's winner, the built-in default) is a warning, a
 * winner of this GPU news at info level. 'from' is the device row's name, NULL for none. */
void api_log_choice(rt_ctx *ctx, const char *what, int level, const char *from,
                    const kernel *k)
{
    if (level == STORE_MATCH_EXACT)
        capture_log(&ctx->cap, CAPTURE_LOG_INFO, "%s: %s %s, tuned on this GPU", what,
                    k->family, k->params);
    else if (level == LEVEL_BUILTIN)
        capture_log(&ctx->cap, CAPTURE_LOG_WARN, "%s: %s holds no winner for this GPU (\"%s\", "
                    "%s) or a similar one; the built-in default %s %s runs", what,
                    store_path(ctx->db), ctx->dev.name, ctx->arch, k->family, k->params);
    else
        capture_log(&ctx->cap, CAPTURE_LOG_WARN, "%s: %s holds no winner for this GPU (\"%s\", "
                    "%s); %s %s runs, tuned on \"%s\" (%s)", what, store_path(ctx->db),
                    ctx->dev.name, ctx->arch, k->family, k->params, from ? from : "?",
                    api_level_names[level]);
}

/* The mean-length bucket of the segmented lookup (api_seg.c's seg_decide). */
static int mean_bucket(double mean)
{
    return mean > 1 ? (int)floor(2 * log2(mean)) : 0;
}

/* The case of a call, for REDTUNE_CAPTURE and REDTUNE_LOG=info. It had an exact tuned entry
 * when this GPU's winners hold one at exactly n (segmented: and in the mean-length bucket of
 * n / nseg, a factor of sqrt 2, which is what the lookup tells apart). */
void api_met(rt_ctx *ctx, int layout, rt_op op, rt_type type, unsigned long long n,
             unsigned long long nseg, int level, const choice *c)
{
    static const char *const fallbacks[] = {"?", "nearest", "same-cc", "same-major", "builtin"};
    static const char *const layouts[] = {"flat", "keys", "offsets"};
    optype_ts ts;
    if (!ctx->cap.active)
        return;
    if (optype_resolve(op, type, &ts, NULL, 0))
        return;
    char spec[64];
    int exact = 0;
    int mb = layout ? mean_bucket((double)n / (double)(nseg ? nseg : 1)) : 0;
    for (int i = 0; level == STORE_MATCH_EXACT && c && i < c->nrows && !exact; i++)
        exact = (unsigned long long)c->rows[i].n == n
                && (!layout || mean_bucket(c->rows[i].seg_mean) == mb);
    const user_op *u = api_user_of(ctx, op);
    capture_case cs = {api_opname(ctx, op), capture_type_text(op, ts.canon, spec, sizeof spec),
                       layouts[layout], n,
                       layout ? nseg : 0, exact ? NULL : fallbacks[level], u ? u->id : NULL,
                       ctx->dev.name};
    capture_case_met(&ctx->cap, &cs);
}

/* ---------------------------------------------------------------- launching */

static int launch(const kernel *k, const void *d_in, void *d_out, unsigned long long n,
                  CUdeviceptr temp, CUstream s, rt_err *e)
{
    CUdeviceptr base = k->p.kind == PLAN_ONELAUNCH ? temp : temp + COUNTER_BYTES;
    return plan_launch(&k->p, (CUdeviceptr)(uintptr_t)d_in, (CUdeviceptr)(uintptr_t)d_out, n,
                       base, s, e);
}

/* n == 0: the empty input's result (optype_empty_result; a user operator's identity), by
 * memsets on the stream (no host buffer to outlive the call, no kernel): runs of 32-, 16- or
 * 8-bit words (d_out is aligned to the result's scalar). */
static int write_empty(const rt_ctx *ctx, rt_op op, rt_type type, void *d_out, CUstream s,
                       rt_err *e)
{
    unsigned char v[32];
    const user_op *u = api_user_of(ctx, op);
    size_t bytes = api_res_size(ctx, op, type);
    CUdeviceptr out = (CUdeviceptr)(uintptr_t)d_out;
    /* the widest word that divides both the size and d_out's alignment (two halves of a
     * var_mean result are 4 bytes at a 2-byte boundary) */
    size_t w = (bytes | out) % 4 == 0 ? 4 : (bytes | out) % 2 == 0 ? 2 : 1, words = bytes / w;

    if (u && !u->identity_known)
        return rt_seterr(e, RT_ENVRTC, "operator '%s', n = 0: its identity is only known "
                         "compiled, and NVRTC was not usable when it was registered",
                         u->op.name);
    memset(v, 0, sizeof v);
    if (u)
        memcpy(v, u->identity, sizeof u->identity);
    else
        optype_empty_result(op, type, v);
    for (size_t i = 0; i < words;) {
        size_t run = 1;
        while (i + run < words && !memcmp(v + w * (i + run), v + w * i, w))
            run++;
        CUresult r;
        if (w == 4) {
            unsigned int x;
            memcpy(&x, v + 4 * i, 4);
            r = cu.MemsetD32Async(out + 4 * i, x, run, s);
        } else if (w == 2) {
            unsigned short x;
            memcpy(&x, v + 2 * i, 2);
            r = api_cx.MemsetD16Async(out + 2 * i, x, run, s);
        } else {
            r = api_cx.MemsetD8Async(out + i, v[i], run, s);
        }
        if (r != CUDA_SUCCESS)
            return driver_fail(r, "writing the empty input's result (cuMemsetD*Async)", e);
        i += run;
    }
    return RT_OK;
}

static int reduce(rt_ctx *ctx, const char *fn, rt_op op, rt_type type, const void *d_in,
                  unsigned long long n, void *d_out, int own_temp, void *d_temp,
                  size_t temp_bytes, void *stream)
{
    rt_err e;
    CUstream s = (CUstream)stream;
    decision *d;
    slot *sl = NULL;
    unsigned long long key;
    int rc, pushed = 0, capturing = 0;
    char tn[96];

    api_begin(ctx);
    if ((rc = api_check_op_type(fn, ctx, op, type, &e)) != RT_OK
        || (rc = api_check_ctx(fn, ctx, &e)) != RT_OK
        || (rc = api_check_pointers(fn, ctx, op, type, d_in, n, d_out, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_capturing(s, fn, &capturing, &e)) != RT_OK)
        goto done;
    if (n == 0) {
        rc = write_empty(ctx, op, type, d_out, s, &e);   /* memsets: captured as nodes */
        goto done;
    }
    if (capturing && !api_decided(ctx, op, type, n)) {
        unsigned b = api_bucket_of(n);
        rc = rt_seterr(&e, RT_ECAPTURE, "%s: %s %s n = %llu: the stream is capturing a CUDA "
                       "graph, and the kernel for n in [2^%u, 2^%u) is not loaded yet "
                       "(loading it is synchronous and would break the capture): make one "
                       "call of this case before the capture (a warm-up), or call "
                       "rt_temp_bytes for it", fn, api_opname(ctx, op),
                       api_typename(op, type, tn, sizeof tn), n,
                       b, b + 1);
        goto done;
    }
    if ((rc = api_get_decision(ctx, op, type, n, &d, &e)) != RT_OK)
        goto done;
    api_met(ctx, 0, op, type, n, 0, d->level, d->c);
    size_t need = api_temp_need(d->k, n);
    if (own_temp) {
        CUdeviceptr t = (CUdeviceptr)(uintptr_t)d_temp;
        CUresult r;
        if (temp_bytes < need || (need && !d_temp)) {
            rc = rt_seterr(&e, RT_EINVAL, "%s: %s %s n = %llu needs %zu bytes of temporary "
                           "storage, %zu given", fn, api_opname(ctx, op),
                           api_typename(op, type, tn, sizeof tn), n,
                           need, d_temp ? temp_bytes : 0);
            goto done;
        }
        if (t % TEMP_ALIGN) {
            rc = rt_seterr(&e, RT_EINVAL, "%s: d_temp %p is not aligned to %d bytes", fn,
                           d_temp, TEMP_ALIGN);
            goto done;
        }
        if (d->k->p.kind == PLAN_ONELAUNCH
            && (r = cu.MemsetD32Async(t, 0, COUNTER_BYTES / 4, s)) != CUDA_SUCCESS) {
            rc = driver_fail(r, "clearing the counter (cuMemsetD32Async)", &e);
            goto done;
        }
        rc = launch(d->k, d_in, d_out, n, t, s, &e);
        goto done;
    }
    if (capturing) {
        /* The stream's block as it is (the graph keeps it: api_temp.c), or none. */
        if ((rc = api_capture_temp(ctx, fn, s, need, "make a call of this size on this "
                                   "stream before the capture (a warm-up), or give "
                                   "rt_reduce_temp storage of rt_temp_bytes bytes", &sl,
                                   &e)) != RT_OK)
            goto done;
        rc = launch(d->k, d_in, d_out, n, sl ? sl->temp : 0, s, &e);
        if (sl)
            pthread_mutex_unlock(&sl->lock);
        goto done;
    }
    if ((rc = api_stream_key(s, &key, &e)) != RT_OK
        || (rc = api_lock_slot(ctx, key, 1, &sl, &e)) != RT_OK)
        goto done;
    atomic_store_explicit(&sl->handle, (uintptr_t)s, memory_order_relaxed);
    if (sl->bytes < need) {
        double t = api_mono_ms();
        rc = api_grow(ctx, sl, need, s, &e);
        api_trace(ctx, &t, "temporary storage of %zu bytes allocated", need);
    }
    if (rc == RT_OK)
        rc = launch(d->k, d_in, d_out, n, sl->temp, s, &e);
    pthread_mutex_unlock(&sl->lock);
done:
    api_leave(pushed);
    return api_finish(rc, &e);
}

int rt_reduce(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in, unsigned long long n,
              void *d_out, void *stream)
{
    return reduce(ctx, "rt_reduce", op, type, d_in, n, d_out, 0, NULL, 0, stream);
}

int rt_reduce_temp(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                   unsigned long long n, void *d_out, void *d_temp, size_t temp_bytes,
                   void *stream)
{
    return reduce(ctx, "rt_reduce_temp", op, type, d_in, n, d_out, 1, d_temp, temp_bytes,
                  stream);
}

/* ---------------------------------------------------------------- explaining */

static void nvrtc_text(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
}

int rt_explain(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n, char *buf,
               size_t len)
{
    rt_err e;
    decision *d;
    int rc, pushed = 0;

    api_begin(ctx);
    if (buf && len)
        buf[0] = '\0';
    if ((rc = api_check_op_type("rt_explain", ctx, op, type, &e)) != RT_OK
        || (rc = api_check_ctx("rt_explain", ctx, &e)) != RT_OK)
        return api_finish(rc, &e);
    if (!buf || !len)
        return api_finish(rt_seterr(&e, RT_EINVAL, "rt_explain: no buffer"), &e);
    char tnb[96], types[256];
    const char *on = api_opname(ctx, op), *tn = api_typename(op, type, tnb, sizeof tnb);
    optype_ts ts;
    if (api_user_of(ctx, op) || optype_resolve(op, type, &ts, NULL, 0))
        snprintf(types, sizeof types, "%s throughout", rt_type_name(optype_elem(type)));
    else
        snprintf(types, sizeof types, "element %s, accumulator %s (%zu-byte partials), result "
                 "%s (%zu bytes)", rt_type_name(ts.elem), rt_type_name(ts.acc),
                 api_acc_size(ctx, op, type), rt_type_name(ts.res), api_res_size(ctx, op, type));
    if (n == 0) {
        snprintf(buf, len, "%s %s, n = 0: no kernel; the empty input's result is written to "
                 "d_out by memsets on the stream\n  types: %s\n", on, tn, types);
        return RT_OK;
    }
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
    if ((rc = api_get_decision(ctx, op, type, n, &d, &e)) != RT_OK)
        goto done;

    const kernel *k = d->k;
    char entry[1024], ver[16];
    unsigned b = api_bucket_of(n);
    nvrtc_text(k->nvrtc_version, ver, sizeof ver);
    if (d->row)
        snprintf(entry, sizeof entry, "device \"%s\" (sm_%d%d, %d SMs), tuned n = %lld, "
                 "median %.2f us, in %s", d->c->dev.name, d->c->dev.cc_major,
                 d->c->dev.cc_minor, d->c->dev.sm_count, d->row->n, d->row->median_us,
                 store_path(ctx->db));
    else if (d->c->foreign)
        snprintf(entry, sizeof entry, "none: the %d winners for %s %s in %s are of another "
                 "definition than the registered one (%s), so none is used", d->c->foreign,
                 on, tn, store_path(ctx->db), api_user_of(ctx, op) ? api_user_of(ctx, op)->id : "?");
    else
        snprintf(entry, sizeof entry, "none: %s holds no winner for %s %s (%s, cold L2) on "
                 "a GPU of compute capability %d.x", store_path(ctx->db), on, tn, LAYOUT,
                 ctx->dev.cc_major);
    char who[RT_NAME_MAX + 64] = "";
    if (api_user_of(ctx, op))
        snprintf(who, sizeof who, " (user operator, definition %s)", api_user_of(ctx, op)->id);
    snprintf(buf, len,
             "%s %s%s, n = %llu (decided for n in [2^%u, 2^%u)):\n"
             "  types: %s\n"
             "  kernel: %s %s (%s plan, hash %.12s)\n"
             "  database entry: %s\n"
             "  fallback level: %s (this GPU: \"%s\", %s, %d SMs)\n"
             "  CUBIN: %s%s%s\n"
             "  database: %s (%s)\n",
             on, tn, who, n, b, b + 1, types, k->family, k->params, family_plan_name(k->p.kind), k->hash,
             entry, api_level_names[d->level], ctx->dev.name, ctx->arch, ctx->dev.sm_count,
             k->from_db ? "from the database (made by NVRTC " : "compiled here by NVRTC ",
             ver,
             k->from_db ? ")" : k->builtin ? " from the built-in template"
             : k->stored_src ? " from the source stored in the database"
                             : " from the template, for the database's config",
             store_path(ctx->db), ctx->db_how);
done:
    api_leave(pushed);
    return api_finish(rc, &e);
}

/* ---------------------------------------------------------------- for bench/ */

int api_kernel_of(rt_ctx *ctx, int op, int type, unsigned long long n, const plan **p,
                  char hash[RT_HASH_HEX], rt_err *e)
{
    decision *d;
    int rc;
    if ((rc = api_check_ctx("api_kernel_of", ctx, e)) != RT_OK
        || (rc = api_check_op_type("api_kernel_of", ctx, (rt_op)op, (rt_type)type, e)) != RT_OK)
        return rc;
    if (n == 0)
        return rt_seterr(e, RT_EINVAL, "api_kernel_of: n is 0");
    if ((rc = api_get_decision(ctx, (rt_op)op, (rt_type)type, n, &d, e)) != RT_OK)
        return rc;
    *p = &d->k->p;
    snprintf(hash, RT_HASH_HEX, "%s", d->k->hash);
    return RT_OK;
}

