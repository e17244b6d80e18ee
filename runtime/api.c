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
 * Temporary storage. The first COUNTER_BYTES of every block hold the one-launch counter,
 * which each one-launch kernel leaves zero; multipass plans get the storage after it, so the
 * counter of a block the library owns is zero for good once cleared at allocation. Blocks
 * the caller supplies (rt_reduce_temp) get the counter cleared on the stream before each
 * one-launch launch, since their contents are not ours to trust.
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

#include "api.h"
#include "codegen.h"
#include "driver.h"
#include "family.h"
#include "hash.h"
#include "nvrtc.h"
#include "optype.h"
#include "plan.h"
#include "store.h"

#define LAYOUT "flat"
#define HOT 0
#define NBUCKETS 64              /* floor(log2 n) of n >= 1 */
#define COUNTER_BYTES 256        /* the one-launch counter, at the start of temp storage */
#define TEMP_ALIGN 256           /* of caller-supplied temp storage */
#define TEMP_GRAIN (64u << 10)   /* context temp blocks are multiples of this */
#define NSLOTS 64                /* streams with a context temp block before recycling */
#define NOPS (RT_OP_COUNT + RT_USER_OPS_MAX)   /* built-in operators, then user ones */
#define MSG_MAX 4096

#define LEVEL_BUILTIN 4          /* after STORE_MATCH_EXACT, _CC, _MAJOR */

#ifndef RT_DATADIR               /* $prefix/share/redtune; build.ninja sets it */
#define RT_DATADIR "/usr/local/share/redtune"
#endif

static const char *const level_names[] = {
    "?", "exact device", "same compute capability", "same major architecture",
    "built-in default",
};

/* A loaded kernel, shared by every decision that chose it; keyed by its source hash. */
typedef struct kernel {
    struct kernel *next;
    char hash[RT_HASH_HEX];
    char family[RT_NAME_MAX];
    char params[256];
    int builtin;           /* the built-in default, generated here */
    int from_db;           /* 1: the CUBIN came from the database; 0: NVRTC compiled it here */
    int stored_src;          /* compiled from the source stored in the database */
    int nvrtc_version;     /* of the NVRTC that made the CUBIN */
    plan p;
} kernel;

/* One winner of the chosen device row. */
typedef struct best_entry {
    long long n;
    char hash[RT_HASH_HEX];
    char family[RT_NAME_MAX];
    char params[256];
    double median_us;
    double seg_mean;       /* segmented: the mean segment length it was tuned at */
} best_entry;

/* The database's answer for one (op, type): a device row and its winners, or none. */
typedef struct choice {
    int resolved;
    int level;             /* STORE_MATCH_* or LEVEL_BUILTIN */
    store_device_match dev;
    best_entry *rows;      /* ordered by n */
    int nrows, cap;
    int oom;               /* a row could not be kept */
    int foreign;           /* user operator: winners of another definition, left out */
} choice;

/* What runs for one (op, type, bucket). Immutable once published. */
typedef struct decision {
    struct decision *next;
    kernel *k;
    int level;
    const choice *c;
    const best_entry *row; /* NULL for the built-in default */
} decision;

/* What runs for one segmented case: layout, offset width, whether the pointers allow vector
 * loads, op, type, size bucket and mean-length bucket. Kept in a list under ctx->lock. */
typedef struct seg_decision {
    struct seg_decision *next;
    int layout, off64, aligned;
    rt_op op;
    rt_type type;
    unsigned nb;
    int mb;
    kernel *k;
    int level;
    const best_entry *row;   /* NULL for the built-in default */
    const char *c_name;      /* the device row's name */
    int respecialized;       /* the stored config with OFF64 or V changed, compiled here */
} seg_decision;

/* Temporary storage of one stream. 'key' identifies the stream (its driver id); 'used' and
 * 'key' are read without the lock to find the slot, and checked again under it. */
typedef struct slot {
    pthread_mutex_t lock;  /* held while the block is grown and the launches are enqueued */
    atomic_int used;
    atomic_ullong key;
    CUdeviceptr temp;
    size_t bytes;
} slot;

/* A user-defined operator registered on the context (rt_register_op). */
typedef struct user_op {
    rt_user_op op;
    char id[RT_USER_OP_ID];          /* its definition fingerprint */
    unsigned char identity[16];      /* rt_identity(), evaluated on the GPU */
    int identity_known;              /* 0 when NVRTC was missing at registration */
} user_op;

struct rt_ctx {
    store *db;
    const char *db_how;             /* how rt_open found the database (api_find_db) */
    rt_device dev;
    char arch[16];
    CUdevice cudev;
    CUcontext cuctx;
    int retained;                   /* the primary context is retained */
    int locks;                      /* the mutexes are initialised */
    pthread_mutex_t lock;           /* choices, decisions, kernels, the store, compiles */
    pthread_mutex_t slot_lock;      /* claiming and recycling slots */
    _Atomic(decision *) cache[NOPS][RT_TYPE_COUNT][NBUCKETS];
    choice choices[3][NOPS][RT_TYPE_COUNT];   /* by layout: flat, keys, offsets */
    user_op uops[RT_USER_OPS_MAX];            /* written under 'lock' before nuops counts them */
    atomic_int nuops;
    decision *decisions;
    struct seg_decision *seg_decisions;   /* segmented choices, under 'lock' */
    CUmodule check_mod[2][2];             /* seg_check by layout and offset width */
    CUfunction check_fn[2][2];
    kernel *kernels;
    int trace;                            /* REDTUNE_TRACE set: time the first-call steps */
    atomic_int nslots;
    slot slots[NSLOTS];
};

/* ---------------------------------------------------------------- tracing */

/* With REDTUNE_TRACE set (and not "0") at rt_open, the steps of choosing and loading a kernel
 * are timed on stderr, one line each: "redtune: trace: STEP: X.XXX ms". */
static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void trace(const rt_ctx *ctx, double *t, const char *fmt, ...)
{
    if (!ctx->trace)
        return;
    double now = mono_ms();
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

static void begin(const rt_ctx *ctx)
{
    last.ctx = ctx;
    last.msg[0] = '\0';
}

/* Return rc; on failure keep e's message as this thread's. */
static int finish(int rc, const rt_err *e)
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
static struct {
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxPushCurrent)(CUcontext);
    CUresult (*CtxPopCurrent)(CUcontext *);
    CUresult (*StreamGetId)(CUstream, unsigned long long *);   /* NULL before CUDA 12.0 */
} cx;

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
        {"cuCtxGetCurrent", offsetof(__typeof__(cx), CtxGetCurrent), 0},
        {"cuCtxPushCurrent_v2", offsetof(__typeof__(cx), CtxPushCurrent), 0},
        {"cuCtxPopCurrent_v2", offsetof(__typeof__(cx), CtxPopCurrent), 0},
        {"cuStreamGetId", offsetof(__typeof__(cx), StreamGetId), 1},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p && !syms[i].optional) {
            cx_code = RT_ECUDA;
            snprintf(cx_msg, sizeof cx_msg, "%s: the CUDA driver lacks %s (driver too old)",
                     file, syms[i].name);
            return;
        }
        memcpy((char *)&cx + syms[i].off, &p, sizeof p);
    }
}

static int driver_extras(rt_err *e)
{
    pthread_once(&cx_once, cx_load);
    return cx_code == RT_OK ? RT_OK : rt_seterr(e, cx_code, "%s", cx_msg);
}

/* Make the context's CUDA context current unless it is; *pushed says to undo it. */
static int enter(const rt_ctx *ctx, int *pushed, rt_err *e)
{
    CUcontext cur = NULL;
    CUresult r = cx.CtxGetCurrent(&cur);
    *pushed = 0;
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "cuCtxGetCurrent", e);
    if (cur == ctx->cuctx)
        return RT_OK;
    if ((r = cx.CtxPushCurrent(ctx->cuctx)) != CUDA_SUCCESS)
        return driver_fail(r, "cuCtxPushCurrent", e);
    *pushed = 1;
    return RT_OK;
}

static void leave(int pushed)
{
    CUcontext popped;
    if (pushed)
        cx.CtxPopCurrent(&popped);
}

/* A driver failure, with out-of-memory reported as RT_ENOMEM. */
static int cuda_fail(CUresult r, const char *what, rt_err *e)
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
        if (e && enter(ctx, &pushed, e) == RT_OK) {
            /* Pending work may still read the modules and temp storage freed below. */
            if (has_work)
                cu.CtxSynchronize();
            for (int i = 0; i < NSLOTS; i++)
                if (ctx->slots[i].temp)
                    cu.MemFree(ctx->slots[i].temp);
            for (kernel *k = ctx->kernels; k; k = k->next)
                plan_unload(&k->p);
            for (int l = 0; l < 2; l++)
                for (int w = 0; w < 2; w++)
                    if (ctx->check_mod[l][w])
                        cu.ModuleUnload(ctx->check_mod[l][w]);
            leave(pushed);
        }
        free(e);
        cu.DevicePrimaryCtxRelease(ctx->cudev);
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
    while (ctx->seg_decisions) {
        struct seg_decision *d = ctx->seg_decisions;
        ctx->seg_decisions = d->next;
        free(d);
    }
    for (int l = 0; l < 3; l++)
        for (int o = 0; o < NOPS; o++)
            for (int t = 0; t < RT_TYPE_COUNT; t++)
                free(ctx->choices[l][o][t].rows);
    store_close(ctx->db);
    if (ctx->locks) {
        pthread_mutex_destroy(&ctx->lock);
        pthread_mutex_destroy(&ctx->slot_lock);
        for (int i = 0; i < NSLOTS; i++)
            pthread_mutex_destroy(&ctx->slots[i].lock);
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

    begin(NULL);
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
    for (int i = 0; i < NSLOTS; i++) {
        pthread_mutex_init(&ctx->slots[i].lock, NULL);
        atomic_init(&ctx->slots[i].used, 0);
        atomic_init(&ctx->slots[i].key, 0);
    }
    atomic_init(&ctx->nslots, 0);
    for (int o = 0; o < NOPS; o++)
        for (int t = 0; t < RT_TYPE_COUNT; t++)
            for (int b = 0; b < NBUCKETS; b++)
                atomic_init(&ctx->cache[o][t][b], NULL);
    atomic_init(&ctx->nuops, 0);
    ctx->locks = 1;
    ctx->db_how = how;
    const char *tr = getenv("REDTUNE_TRACE");
    ctx->trace = tr && tr[0] && strcmp(tr, "0") != 0;

    /* The database first: a bad path is reported as such on a machine with no GPU too. */
    if ((rc = store_open(path, STORE_READ, &ctx->db, &e)) != RT_OK
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
    return finish(rc, &e);
}

int rt_open(const char *db_path, int device, rt_ctx **out)
{
    return rt_open_err(db_path, device, out, NULL, 0);
}

void rt_close(rt_ctx *ctx)
{
    begin(NULL);
    if (ctx)
        destroy(ctx);
}

/* ---------------------------------------------------------------- arguments */

/* The user operator of handle 'op' on ctx, or NULL (a built-in, or not registered). */
static const user_op *user_of(const rt_ctx *ctx, rt_op op)
{
    unsigned i = (unsigned)op - RT_OP_USER_FIRST;
    if (!ctx || (int)op < RT_OP_USER_FIRST || i >= (unsigned)RT_USER_OPS_MAX
        || (int)i >= atomic_load_explicit(&ctx->nuops, memory_order_acquire))
        return NULL;
    return &ctx->uops[i];
}

/* The row of ctx->cache / ctx->choices of a checked operator. */
static int op_index(rt_op op)
{
    return (int)op < RT_OP_COUNT ? (int)op : RT_OP_COUNT + ((int)op - RT_OP_USER_FIRST);
}

static const char *opname(const rt_ctx *ctx, rt_op op)
{
    const user_op *u = user_of(ctx, op);
    return u ? u->op.name : rt_op_name(op) ? rt_op_name(op) : "?";
}

/* A built-in operator, or a handle registered on ctx whose type is 'type'. With a NULL
 * context a user handle passes here, for check_ctx to report. */
static int check_op_type(const char *fn, const rt_ctx *ctx, rt_op op, rt_type type, rt_err *e)
{
    if ((unsigned)type >= RT_TYPE_COUNT)
        return rt_seterr(e, RT_EINVAL, "%s: unknown type %d (known: %s)", fn, (int)type,
                         optype_type_list());
    if ((unsigned)op < RT_OP_COUNT)
        return RT_OK;
    if ((int)op >= RT_OP_USER_FIRST && (int)op < RT_OP_USER_FIRST + RT_USER_OPS_MAX && !ctx)
        return RT_OK;
    const user_op *u = user_of(ctx, op);
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
                         u->op.name, rt_type_name(u->op.type), rt_type_name(type));
    return RT_OK;
}

/* The unit of config 'c' for (op, type): a built-in operator's, or a user operator's. */
static int emit(const rt_ctx *ctx, const rt_config *c, rt_op op, rt_type type, char **src,
                rt_err *e)
{
    const user_op *u = user_of(ctx, op);
    return u ? codegen_emit_user(c, &u->op, src, e) : codegen_emit(c, op, type, src, e);
}

static int check_ctx(const char *fn, const rt_ctx *ctx, rt_err *e)
{
    return ctx ? RT_OK : rt_seterr(e, RT_EINVAL, "%s: the context is NULL", fn);
}

static int check_pointers(const char *fn, const rt_ctx *ctx, rt_op op, rt_type type,
                          const void *d_in, unsigned long long n, const void *d_out, rt_err *e)
{
    size_t es = optype_size(type), oa = optype_is_arg(op) ? 8 : es;
    if (!d_out)
        return rt_seterr(e, RT_EINVAL, "%s: d_out is NULL", fn);
    if (!d_in && n > 0)
        return rt_seterr(e, RT_EINVAL, "%s: d_in is NULL with n = %llu", fn, n);
    if ((uintptr_t)d_in % es)
        return rt_seterr(e, RT_EINVAL, "%s: d_in %p is not aligned to its %zu-byte %s "
                         "elements", fn, d_in, es, rt_type_name(type));
    if ((uintptr_t)d_out % oa)
        return rt_seterr(e, RT_EINVAL, "%s: d_out %p is not aligned to %zu bytes (%s %s)", fn,
                         d_out, oa, opname(ctx, op), rt_type_name(type));
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
    return 0;
}

/* A user operator's winners: only those whose unit carries its definition fingerprint (the
 * tuner writes it in every unit); the others are counted in c->foreign. */
static int keep_definition(rt_ctx *ctx, const user_op *u, choice *c, rt_err *e)
{
    char mark[RT_USER_OP_ID + 32];
    int kept = 0;
    snprintf(mark, sizeof mark, ", definition %s */", u->id);
    for (int i = 0; i < c->nrows; i++) {
        char *src = NULL;
        int rc = store_get_kernel_source(ctx->db, c->rows[i].hash, &src, e);
        if (rc != RT_OK)
            return rc;
        if (strstr(src, mark))
            c->rows[kept++] = c->rows[i];
        else
            c->foreign++;
        free(src);
    }
    c->nrows = kept;
    return RT_OK;
}

/* The database's answer for (layout, op, type), read once; layout 0 is flat, 1 keys, 2
 * offsets (every profile of the layout). Caller holds ctx->lock. */
static const char *const layout_names[3] = {LAYOUT, "keys", "offsets"};

static int get_choice(rt_ctx *ctx, int layout, rt_op op, rt_type type, choice **out, rt_err *e)
{
    choice *c = &ctx->choices[layout][op_index(op)][type];
    const char *on = opname(ctx, op), *tn = rt_type_name(type);
    int rc = RT_OK;

    *out = c;
    if (c->resolved)
        return RT_OK;
    rc = store_find_device(ctx->db, &ctx->dev, on, tn, layout_names[layout], HOT, &c->dev, e);
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
    rc = store_list_best_for_device(ctx->db, c->dev.id, on, tn, layout_names[layout], HOT,
                                    collect_row, c, e);
    if (rc == RT_OK && c->oom)
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory reading the winners of %s %s",
                       store_path(ctx->db), on, tn);
    if (rc == RT_OK && user_of(ctx, op))
        rc = keep_definition(ctx, user_of(ctx, op), c, e);
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
    char *stored_src = NULL, name[RT_NAME_MAX + 8];
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
    double t = mono_ms();
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
        trace(ctx, &t, "kernel %.12s: source from the database", hash);
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
    trace(ctx, &t, "kernel %.12s: CUBIN looked up in the database", hash);
    if (rc == RT_OK) {
        rc = plan_load(&k->p, b.cubin, (rt_plan_kind)kind, optype_acc_size(op, type),
                       ctx->dev.sm_count, e);
        if (rc == RT_OK) {
            k->from_db = 1;
            k->nvrtc_version = ver;
            trace(ctx, &t, "kernel %.12s: module loaded (plan_load)", hash);
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
        trace(ctx, &t, "kernel %.12s: NVRTC loaded", hash);
        if ((rc = nvrtc_compile(src, name, ctx->arch, &o, why)) == RT_OK)
            trace(ctx, &t, "kernel %.12s: compiled by NVRTC", hash);
    }
    snprintf(nv->msg + said, sizeof nv->msg - said, "%s", why->msg);
    free(why);
    if (rc != RT_OK) {
        if (builtin)
            rc = rt_seterr(e, RT_ENVRTC, "%s %s: %s has no winner for this GPU (%s, %s) "
                           "or one of its architecture, and the built-in default "
                           "(%s %s) has to be compiled: %s", opname(ctx, op),
                           rt_type_name(type), path, ctx->dev.name, ctx->arch, family,
                           params, nv->msg);
        else
            rc = rt_seterr(e, RT_ENVRTC, "%s %s: %s holds no CUBIN for %s of kernel %.12s "
                           "(%s %s) and it cannot be compiled here: %s", opname(ctx, op),
                           rt_type_name(type), path, ctx->arch, hash, family, params,
                           nv->msg);
        goto done;
    }
    k->nvrtc_version = nvrtc_version();
    rc = plan_load(&k->p, o.cubin, (rt_plan_kind)kind, optype_acc_size(op, type),
                   ctx->dev.sm_count, e);
    if (rc != RT_OK)
        goto done;
    trace(ctx, &t, "kernel %.12s: module loaded (plan_load)", hash);
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
static int config_kernel(rt_ctx *ctx, rt_op op, rt_type type, const rt_config *cfg,
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

/* The built-in default for (op, type): gridstride B=256 V=16/size (at most 4) U=4 G=4,
 * legal for every built-in operator (they all commute) and type and for a commutative user
 * operator; a user operator that does not commute gets diffwarps with its defaults (P=8
 * C=1 W=32 PAD=1), which keeps the order of the elements. */
static int builtin_kernel(rt_ctx *ctx, rt_op op, rt_type type, kernel **out, rt_err *e)
{
    const user_op *u = user_of(ctx, op);
    const char *fam = u && !u->op.commutative ? "diffwarps" : "gridstride";
    const rt_family *f = family_find(fam);
    rt_config cfg;
    long long v = (long long)(16 / optype_size(type));
    int rc = RT_OK;

    *out = NULL;
    if (!f)
        return rt_seterr(e, RT_ENOTFOUND, "the built-in default family %s is not "
                         "built into this library%s%s", fam, family_error() ? ": " : "",
                         family_error() ? family_error() : "");
    config_default(f, &cfg);
    if (f->needs_commutative
        && ((rc = config_set(&cfg, "B", 256, e)) != RT_OK
            || (rc = config_set(&cfg, "V", v > 4 ? 4 : v, e)) != RT_OK
            || (rc = config_set(&cfg, "U", 4, e)) != RT_OK
            || (rc = config_set(&cfg, "G", 4, e)) != RT_OK))
        return rc;
    return config_kernel(ctx, op, type, &cfg, 1, out, e);
}

/* A config of family 'f' from a stored "NAME=V ..." string (unknown words are errors). */
static int params_config(const rt_family *f, const char *params, rt_config *cfg, rt_err *e)
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
static int winner_kernel(rt_ctx *ctx, rt_op op, rt_type type, const best_entry *row,
                         kernel **out, rt_err *e)
{
    const rt_family *f = family_find(row->family);
    rt_config cfg;
    if (!f || params_config(f, row->params, &cfg, e) != RT_OK) {
        rt_clearerr(e);
        return get_kernel(ctx, op, type, row->hash, row->family, row->params, NULL, 0, out, e);
    }
    int rc = config_kernel(ctx, op, type, &cfg, 0, out, e);
    if (rc == RT_OK && strcmp((*out)->hash, row->hash)) {
        double t = mono_ms();
        trace(ctx, &t, "winner %.12s (%s %s) regenerated by this library as %.12s", row->hash,
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
    int rc = RT_OK;

    pthread_mutex_lock(&ctx->lock);
    d = atomic_load_explicit(&ctx->cache[op_index(op)][type][b], memory_order_acquire);
    if (d)
        goto done;   /* another thread decided meanwhile */
    double t = mono_ms();
    if ((rc = get_choice(ctx, 0, op, type, &c, e)) != RT_OK)
        goto done;
    trace(ctx, &t, "%s %s: winners read from the database", opname(ctx, op),
          rt_type_name(type));
    if (c->level != LEVEL_BUILTIN) {
        row = pick(c, b);
        rc = winner_kernel(ctx, op, type, row, &k, e);
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
    atomic_store_explicit(&ctx->cache[op_index(op)][type][b], d, memory_order_release);
done:
    pthread_mutex_unlock(&ctx->lock);
    *out = rc == RT_OK ? d : NULL;
    return rc;
}

static unsigned bucket_of(unsigned long long n)
{
    return 63u - (unsigned)__builtin_clzll(n);   /* n >= 1 */
}

/* The decision for n >= 1: a lock-free lookup once made. */
static int get_decision(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n,
                        decision **out, rt_err *e)
{
    unsigned b = bucket_of(n);
    *out = atomic_load_explicit(&ctx->cache[op_index(op)][type][b], memory_order_acquire);
    return *out ? RT_OK : resolve(ctx, op, type, b, out, e);
}

/* ---------------------------------------------------------------- launching */

/* Bytes of temp storage for n: the counter, then the plan's partials. */
static size_t temp_need(const kernel *k, unsigned long long n)
{
    size_t plan_bytes = plan_temp_bytes(&k->p, n);
    if (k->p.kind == PLAN_ONELAUNCH)
        return plan_bytes;   /* its first COUNTER_BYTES are the counter already */
    return plan_bytes ? COUNTER_BYTES + plan_bytes : 0;
}

static int launch(const kernel *k, const void *d_in, void *d_out, unsigned long long n,
                  CUdeviceptr temp, CUstream s, rt_err *e)
{
    CUdeviceptr base = k->p.kind == PLAN_ONELAUNCH ? temp : temp + COUNTER_BYTES;
    return plan_launch(&k->p, (CUdeviceptr)(uintptr_t)d_in, (CUdeviceptr)(uintptr_t)d_out, n,
                       base, s, e);
}

/* The identity of op over type, in the result's layout (argmin/argmax: index -1). */
static void identity_bytes(rt_op op, rt_type type, unsigned char v[16])
{
    rt_op base = op == RT_ARGMIN ? RT_MIN : op == RT_ARGMAX ? RT_MAX : op;
    int k = base == RT_SUM ? 0 : base == RT_PROD ? 1 : base == RT_MIN ? 2 : 3;
    static const float f32[] = {0.0f, 1.0f, INFINITY, -INFINITY};
    static const double f64[] = {0.0, 1.0, INFINITY, -INFINITY};
    static const int i32[] = {0, 1, 2147483647, -2147483647 - 1};
    static const unsigned u32[] = {0, 1, 0xffffffffu, 0};
    static const long long i64[] = {0, 1, 9223372036854775807LL, -9223372036854775807LL - 1};
    static const unsigned long long u64[] = {0, 1, 0xffffffffffffffffULL, 0};

    memset(v, 0, 16);
    switch (type) {
    case RT_F32: memcpy(v, &f32[k], 4); break;
    case RT_F64: memcpy(v, &f64[k], 8); break;
    case RT_I32: memcpy(v, &i32[k], 4); break;
    case RT_U32: memcpy(v, &u32[k], 4); break;
    case RT_I64: memcpy(v, &i64[k], 8); break;
    default: memcpy(v, &u64[k], 8); break;
    }
    if (optype_is_arg(op)) {
        long long none = -1;
        memcpy(v + 8, &none, 8);
    }
}

/* n == 0: the identity, by 32-bit memsets on the stream (no host buffer to outlive the
 * call, no kernel). */
static int write_identity(const rt_ctx *ctx, rt_op op, rt_type type, void *d_out, CUstream s,
                          rt_err *e)
{
    unsigned char v[16];
    size_t words = optype_acc_size(op, type) / 4;
    CUdeviceptr out = (CUdeviceptr)(uintptr_t)d_out;
    const user_op *u = user_of(ctx, op);

    if (u && !u->identity_known)
        return rt_seterr(e, RT_ENVRTC, "operator '%s', n = 0: its identity is only known "
                         "compiled, and NVRTC was not usable when it was registered",
                         u->op.name);
    if (u)
        memcpy(v, u->identity, sizeof v);
    else
        identity_bytes(op, type, v);
    for (size_t w = 0; w < words;) {
        unsigned int word;
        size_t run = 1;
        memcpy(&word, v + 4 * w, 4);
        while (w + run < words && !memcmp(v + 4 * (w + run), &word, 4))
            run++;
        CUresult r = cu.MemsetD32Async(out + 4 * w, word, run, s);
        if (r != CUDA_SUCCESS)
            return driver_fail(r, "writing the identity (cuMemsetD32Async)", e);
        w += run;
    }
    return RT_OK;
}

/* What identifies a stream for its temp block: the driver's id, unique for the life of the
 * program (a handle may be reused by a new stream while work of the old one still runs);
 * with a driver older than 12.0 the handle, or the thread for the per-thread stream. */
static int stream_key(CUstream s, unsigned long long *key, rt_err *e)
{
    if (cx.StreamGetId) {
        CUresult r = cx.StreamGetId(s, key);
        return r == CUDA_SUCCESS ? RT_OK : driver_fail(r, "cuStreamGetId", e);
    }
    if (s == CU_STREAM_PER_THREAD)
        *key = (1ULL << 63) | (unsigned long long)pthread_self();
    else
        *key = (unsigned long long)(uintptr_t)s;
    return RT_OK;
}

static slot *find_slot(rt_ctx *ctx, unsigned long long key)
{
    int n = atomic_load_explicit(&ctx->nslots, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        slot *sl = &ctx->slots[i];
        if (atomic_load_explicit(&sl->used, memory_order_acquire)
            && atomic_load_explicit(&sl->key, memory_order_relaxed) == key)
            return sl;
    }
    return NULL;
}

/* Free every slot's block once the device's context is idle; caller holds slot_lock and has
 * the CUDA context current. Slot locks are taken only after slot_lock, so no deadlock. */
static int recycle(rt_ctx *ctx, rt_err *e)
{
    int n = atomic_load_explicit(&ctx->nslots, memory_order_acquire), rc = RT_OK;
    for (int i = 0; i < n; i++)
        pthread_mutex_lock(&ctx->slots[i].lock);
    CUresult r = cu.CtxSynchronize();
    if (r != CUDA_SUCCESS)
        rc = driver_fail(r, "cuCtxSynchronize (releasing temporary storage)", e);
    for (int i = 0; i < n; i++) {
        slot *sl = &ctx->slots[i];
        if (sl->temp)
            cu.MemFree(sl->temp);
        sl->temp = 0;
        sl->bytes = 0;
        atomic_store_explicit(&sl->used, 0, memory_order_release);
    }
    atomic_store_explicit(&ctx->nslots, 0, memory_order_release);
    for (int i = n - 1; i >= 0; i--)
        pthread_mutex_unlock(&ctx->slots[i].lock);
    return rc;
}

/* The slot of 'key', claimed if new; returned locked, with its key checked under the lock. */
static int lock_slot(rt_ctx *ctx, unsigned long long key, slot **out, rt_err *e)
{
    int rc = RT_OK;
    for (;;) {
        slot *sl = find_slot(ctx, key);
        if (!sl) {
            pthread_mutex_lock(&ctx->slot_lock);
            if (!(sl = find_slot(ctx, key))) {
                int n = atomic_load_explicit(&ctx->nslots, memory_order_acquire);
                if (n == NSLOTS) {
                    rc = recycle(ctx, e);
                    n = 0;
                }
                sl = &ctx->slots[n];
                atomic_store_explicit(&sl->key, key, memory_order_relaxed);
                atomic_store_explicit(&sl->used, 1, memory_order_release);
                atomic_store_explicit(&ctx->nslots, n + 1, memory_order_release);
            }
            pthread_mutex_unlock(&ctx->slot_lock);
            if (rc != RT_OK)
                return rc;
        }
        pthread_mutex_lock(&sl->lock);
        if (atomic_load_explicit(&sl->used, memory_order_acquire)
            && atomic_load_explicit(&sl->key, memory_order_relaxed) == key) {
            *out = sl;
            return RT_OK;
        }
        pthread_mutex_unlock(&sl->lock);   /* recycled meanwhile: look again */
    }
}

/* Grow a slot's block to 'need' bytes; caller holds its lock. The old block may still be in
 * use by work on this stream, so the stream is synchronised before it is freed. */
static int grow(slot *sl, size_t need, CUstream s, rt_err *e)
{
    CUresult r;
    size_t want = sl->bytes * 2 > need ? sl->bytes * 2 : need;
    want = (want + TEMP_GRAIN - 1) / TEMP_GRAIN * TEMP_GRAIN;
    if (sl->temp) {
        if ((r = cu.StreamSynchronize(s)) != CUDA_SUCCESS)
            return driver_fail(r, "cuStreamSynchronize (growing temporary storage)", e);
        cu.MemFree(sl->temp);
        sl->temp = 0;
        sl->bytes = 0;
    }
    r = cu.MemAlloc(&sl->temp, want);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && want > need)
        r = cu.MemAlloc(&sl->temp, want = need);
    if (r != CUDA_SUCCESS) {
        sl->temp = 0;
        return cuda_fail(r, "allocating temporary storage", e);
    }
    sl->bytes = want;
    /* The counter, zero from here on: every one-launch kernel leaves it zero. */
    if ((r = cu.MemsetD32Async(sl->temp, 0, COUNTER_BYTES / 4, s)) != CUDA_SUCCESS)
        return driver_fail(r, "clearing temporary storage", e);
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
    int rc, pushed = 0;

    begin(ctx);
    if ((rc = check_op_type(fn, ctx, op, type, &e)) != RT_OK
        || (rc = check_ctx(fn, ctx, &e)) != RT_OK
        || (rc = check_pointers(fn, ctx, op, type, d_in, n, d_out, &e)) != RT_OK)
        return finish(rc, &e);
    if ((rc = enter(ctx, &pushed, &e)) != RT_OK)
        return finish(rc, &e);
    if (n == 0) {
        rc = write_identity(ctx, op, type, d_out, s, &e);
        goto done;
    }
    if ((rc = get_decision(ctx, op, type, n, &d, &e)) != RT_OK)
        goto done;
    size_t need = temp_need(d->k, n);
    if (own_temp) {
        CUdeviceptr t = (CUdeviceptr)(uintptr_t)d_temp;
        CUresult r;
        if (temp_bytes < need || (need && !d_temp)) {
            rc = rt_seterr(&e, RT_EINVAL, "%s: %s %s n = %llu needs %zu bytes of temporary "
                           "storage, %zu given", fn, opname(ctx, op), rt_type_name(type), n,
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
    if ((rc = stream_key(s, &key, &e)) != RT_OK || (rc = lock_slot(ctx, key, &sl, &e)) != RT_OK)
        goto done;
    if (sl->bytes < need) {
        double t = mono_ms();
        rc = grow(sl, need, s, &e);
        trace(ctx, &t, "temporary storage of %zu bytes allocated", need);
    }
    if (rc == RT_OK)
        rc = launch(d->k, d_in, d_out, n, sl->temp, s, &e);
    pthread_mutex_unlock(&sl->lock);
done:
    leave(pushed);
    return finish(rc, &e);
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

int rt_temp_bytes(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n, size_t *bytes)
{
    rt_err e;
    decision *d;
    int rc, pushed = 0;

    begin(ctx);
    if (bytes)
        *bytes = 0;
    if ((rc = check_op_type("rt_temp_bytes", ctx, op, type, &e)) != RT_OK
        || (rc = check_ctx("rt_temp_bytes", ctx, &e)) != RT_OK)
        return finish(rc, &e);
    if (!bytes)
        return finish(rt_seterr(&e, RT_EINVAL, "rt_temp_bytes: bytes is NULL"), &e);
    if (n == 0)
        return RT_OK;
    if ((rc = enter(ctx, &pushed, &e)) != RT_OK)
        return finish(rc, &e);
    if ((rc = get_decision(ctx, op, type, n, &d, &e)) == RT_OK)
        *bytes = temp_need(d->k, n);
    leave(pushed);
    return finish(rc, &e);
}

int rt_release_temp(rt_ctx *ctx)
{
    rt_err e;
    int rc, pushed = 0;

    begin(ctx);
    if ((rc = check_ctx("rt_release_temp", ctx, &e)) != RT_OK
        || (rc = enter(ctx, &pushed, &e)) != RT_OK)
        return finish(rc, &e);
    pthread_mutex_lock(&ctx->slot_lock);
    rc = recycle(ctx, &e);
    pthread_mutex_unlock(&ctx->slot_lock);
    leave(pushed);
    return finish(rc, &e);
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

    begin(ctx);
    if (buf && len)
        buf[0] = '\0';
    if ((rc = check_op_type("rt_explain", ctx, op, type, &e)) != RT_OK
        || (rc = check_ctx("rt_explain", ctx, &e)) != RT_OK)
        return finish(rc, &e);
    if (!buf || !len)
        return finish(rt_seterr(&e, RT_EINVAL, "rt_explain: no buffer"), &e);
    const char *on = opname(ctx, op), *tn = rt_type_name(type);
    if (n == 0) {
        snprintf(buf, len, "%s %s, n = 0: no kernel; the identity is written to d_out by "
                 "memsets on the stream\n", on, tn);
        return RT_OK;
    }
    if ((rc = enter(ctx, &pushed, &e)) != RT_OK)
        return finish(rc, &e);
    if ((rc = get_decision(ctx, op, type, n, &d, &e)) != RT_OK)
        goto done;

    const kernel *k = d->k;
    char entry[768], ver[16];
    unsigned b = bucket_of(n);
    nvrtc_text(k->nvrtc_version, ver, sizeof ver);
    if (d->row)
        snprintf(entry, sizeof entry, "device \"%s\" (sm_%d%d, %d SMs), tuned n = %lld, "
                 "median %.2f us, in %s", d->c->dev.name, d->c->dev.cc_major,
                 d->c->dev.cc_minor, d->c->dev.sm_count, d->row->n, d->row->median_us,
                 store_path(ctx->db));
    else if (d->c->foreign)
        snprintf(entry, sizeof entry, "none: the %d winners for %s %s in %s are of another "
                 "definition than the registered one (%s), so none is used", d->c->foreign,
                 on, tn, store_path(ctx->db), user_of(ctx, op) ? user_of(ctx, op)->id : "?");
    else
        snprintf(entry, sizeof entry, "none: %s holds no winner for %s %s (%s, cold L2) on "
                 "a GPU of compute capability %d.x", store_path(ctx->db), on, tn, LAYOUT,
                 ctx->dev.cc_major);
    char who[RT_NAME_MAX + 64] = "";
    if (user_of(ctx, op))
        snprintf(who, sizeof who, " (user operator, definition %s)", user_of(ctx, op)->id);
    snprintf(buf, len,
             "%s %s%s, n = %llu (decided for n in [2^%u, 2^%u)):\n"
             "  kernel: %s %s (%s plan, hash %.12s)\n"
             "  database entry: %s\n"
             "  fallback level: %s (this GPU: \"%s\", %s, %d SMs)\n"
             "  CUBIN: %s%s%s\n"
             "  database: %s (%s)\n",
             on, tn, who, n, b, b + 1, k->family, k->params, family_plan_name(k->p.kind), k->hash,
             entry, level_names[d->level], ctx->dev.name, ctx->arch, ctx->dev.sm_count,
             k->from_db ? "from the database (made by NVRTC " : "compiled here by NVRTC ",
             ver,
             k->from_db ? ")" : k->builtin ? " from the built-in template"
             : k->stored_src ? " from the source stored in the database"
                             : " from the template, for the database's config",
             store_path(ctx->db), ctx->db_how);
done:
    leave(pushed);
    return finish(rc, &e);
}

/* ---------------------------------------------------------------- user-defined operators */

/* Copy a description field into dst[0..size); RT_EINVAL naming it when missing, empty or
 * too long. */
static int desc_field(const char *fn, const char *what, const char *v, char *dst, size_t size,
                      rt_err *e)
{
    if (!v || !v[0])
        return rt_seterr(e, RT_EINVAL, "%s: desc->%s is %s", fn, what, v ? "empty" : "NULL");
    size_t len = strlen(v);
    if (len >= size)
        return rt_seterr(e, RT_EINVAL, "%s: desc->%s is %zu bytes long, at most %zu", fn, what,
                         len, size - 1);
    memcpy(dst, v, len + 1);
    return RT_OK;
}

static int check_desc(const char *fn, const rt_op_desc *d, rt_user_op *u, rt_err *e)
{
    int rc;
    memset(u, 0, sizeof *u);
    if (!d)
        return rt_seterr(e, RT_EINVAL, "%s: desc is NULL", fn);
    if ((rc = desc_field(fn, "name", d->name, u->name, sizeof u->name, e)) != RT_OK)
        return rc;
    for (const char *p = u->name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return rt_seterr(e, RT_EINVAL, "%s: desc->name '%s': use a-z, 0-9 and _", fn,
                             u->name);
    if (optype_parse_op(u->name) >= 0)
        return rt_seterr(e, RT_EINVAL, "%s: desc->name '%s' is a built-in operator; give the "
                         "operator a name of its own", fn, u->name);
    if ((unsigned)d->type >= RT_TYPE_COUNT)
        return rt_seterr(e, RT_EINVAL, "%s: operator '%s': desc->type %d is not a type "
                         "(known: %s)", fn, u->name, (int)d->type, optype_type_list());
    if ((rc = desc_field(fn, "identity", d->identity, u->identity, sizeof u->identity, e))
        || (rc = desc_field(fn, "combine", d->combine, u->combine, sizeof u->combine, e)))
        return rc;
    /* Both are written into units as they are: no directive, nothing unbalanced. The body
     * shares a line with its braces, so a // comment in it must end with a newline. */
    int line;
    const char *why;
    if (codegen_check_fragment(u->identity, 1, &line, &why))
        return rt_seterr(e, RT_EINVAL, "%s: operator '%s': desc->identity, line %d: %s", fn,
                         u->name, line, why);
    if (codegen_check_fragment(u->combine, 1, &line, &why))
        return rt_seterr(e, RT_EINVAL, "%s: operator '%s': desc->combine, line %d: %s", fn,
                         u->name, line, why);
    if (d->commutative != 0 && d->commutative != 1)
        return rt_seterr(e, RT_EINVAL, "%s: operator '%s': desc->commutative is %d, not 0 or 1",
                         fn, u->name, d->commutative);
    u->type = d->type;
    u->commutative = d->commutative;
    return RT_OK;
}

/* Compile the operator's reference unit (which proves the definition compiles) and evaluate
 * rt_identity() on the GPU into u->identity. Caller holds ctx->lock, context current. */
static int eval_identity(rt_ctx *ctx, user_op *u, rt_err *e)
{
    char *src = NULL;
    nvrtc_output o;
    CUmodule mod = NULL;
    CUfunction f;
    CUdeviceptr dv = 0;
    CUresult r;
    int rc;

    memset(&o, 0, sizeof o);
    if ((rc = codegen_emit_user_check(&u->op, &src, e)) != RT_OK)
        goto done;
    rt_err *nv = malloc(sizeof *nv);
    if (!nv) {
        rc = rt_seterr(e, RT_ENOMEM, "rt_register_op: out of memory");
        goto done;
    }
    if ((rc = nvrtc_compile(src, "operator.cu", ctx->arch, &o, nv)) != RT_OK)
        rt_seterr(e, rc, "rt_register_op: operator '%s' does not compile for %s: %s",
                  u->op.name, ctx->arch, nv->msg);
    free(nv);
    if (rc != RT_OK)
        goto done;
    size_t size = optype_size(u->op.type);
    void *args[] = {&dv};
    if ((r = cu.ModuleLoadData(&mod, o.cubin)) != CUDA_SUCCESS
        || (r = cu.ModuleGetFunction(&f, mod, "rt_ref_identity_value")) != CUDA_SUCCESS
        || (r = cu.MemAlloc(&dv, 16)) != CUDA_SUCCESS
        || (r = cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL)) != CUDA_SUCCESS
        || (r = cu.CtxSynchronize()) != CUDA_SUCCESS
        || (r = cu.MemcpyDtoH(u->identity, dv, size)) != CUDA_SUCCESS) {
        rc = driver_fail(r, "rt_register_op: evaluating the identity", e);
        goto done;
    }
    u->identity_known = 1;
done:
    if (dv)
        cu.MemFree(dv);
    if (mod)
        cu.ModuleUnload(mod);
    free(src);
    nvrtc_output_free(&o);
    return rc;
}

int rt_register_op(rt_ctx *ctx, const rt_op_desc *desc, rt_op *op)
{
    rt_err e;
    rt_user_op uop;
    int rc, pushed = 0;
    const char *fn = "rt_register_op";

    begin(ctx);
    if ((rc = check_desc(fn, desc, &uop, &e)) != RT_OK
        || (rc = check_ctx(fn, ctx, &e)) != RT_OK)
        return finish(rc, &e);
    if (!op)
        return finish(rt_seterr(&e, RT_EINVAL, "%s: op is NULL", fn), &e);
    char id[RT_USER_OP_ID];
    codegen_user_op_id(&uop, id);
    if ((rc = enter(ctx, &pushed, &e)) != RT_OK)
        return finish(rc, &e);
    pthread_mutex_lock(&ctx->lock);
    int n = atomic_load_explicit(&ctx->nuops, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        if (strcmp(ctx->uops[i].op.name, uop.name))
            continue;
        if (strcmp(ctx->uops[i].id, id))
            rc = rt_seterr(&e, RT_EINVAL, "%s: operator '%s' is registered on this context "
                           "with another definition (%s; this one is %s)", fn, uop.name,
                           ctx->uops[i].id, id);
        else
            *op = (rt_op)(RT_OP_USER_FIRST + i);
        goto done;
    }
    if (n == RT_USER_OPS_MAX) {
        rc = rt_seterr(&e, RT_EINVAL, "%s: this context holds %d operators already, the most "
                       "it can", fn, RT_USER_OPS_MAX);
        goto done;
    }
    user_op *u = &ctx->uops[n];
    memset(u, 0, sizeof *u);
    u->op = uop;
    memcpy(u->id, id, sizeof id);
    rt_err nv;
    if (nvrtc_load(&nv) == RT_OK && (rc = eval_identity(ctx, u, &e)) != RT_OK)
        goto done;   /* not counted: the slot is taken again by the next registration */
    atomic_store_explicit(&ctx->nuops, n + 1, memory_order_release);
    *op = (rt_op)(RT_OP_USER_FIRST + n);
done:
    pthread_mutex_unlock(&ctx->lock);
    leave(pushed);
    return finish(rc, &e);
}

/* ---------------------------------------------------------------- for bench/ */

int api_kernel_of(rt_ctx *ctx, int op, int type, unsigned long long n, const plan **p,
                  char hash[RT_HASH_HEX], rt_err *e)
{
    decision *d;
    int rc;
    if ((rc = check_ctx("api_kernel_of", ctx, e)) != RT_OK
        || (rc = check_op_type("api_kernel_of", ctx, (rt_op)op, (rt_type)type, e)) != RT_OK)
        return rc;
    if (n == 0)
        return rt_seterr(e, RT_EINVAL, "api_kernel_of: n is 0");
    if ((rc = get_decision(ctx, (rt_op)op, (rt_type)type, n, &d, e)) != RT_OK)
        return rc;
    *p = &d->k->p;
    snprintf(hash, RT_HASH_HEX, "%s", d->k->hash);
    return RT_OK;
}

/* ---------------------------------------------------------------- segmented (docs/segmented.md) */



/* The stored winner nearest to (2^(nb + 0.5) elements, mean length 2^(mb / 2)) in log2; the
 * mean length counts twice, since it decides the algorithm and n mostly the grid. */
static const best_entry *pick_seg(const choice *c, unsigned nb, int mb)
{
    const best_entry *best = NULL;
    double tn = nb + 0.5, tm = mb / 2.0, dist = INFINITY;
    for (int i = 0; i < c->nrows; i++) {
        double m = c->rows[i].seg_mean > 0 ? c->rows[i].seg_mean : 1;
        double d = fabs(log2((double)c->rows[i].n) - tn) + 2 * fabs(log2(m) - tm);
        if (d < dist) {
            dist = d;
            best = &c->rows[i];
        }
    }
    return best;
}

/* A config from a family and a "NAME=V ..." string, with LAYOUT/OFF64 set and, when the
 * pointers are not 16-byte aligned, V = 1 (vector loads need alignment). *changed = 1 when
 * that differs from 'params'. */
static int seg_config(const char *family, const char *params, int layout, int off64,
                      int aligned, rt_config *cfg, int *changed, rt_err *e)
{
    const rt_family *f = family_find(family);
    if (!f || f->plan != PLAN_SEGMENTED)
        return rt_seterr(e, RT_EINVAL, "segmented family '%s' is not built into this library",
                         family);
    int rc = params_config(f, params, cfg, e);
    if (rc)
        return rc;
    char before[256], after[256];
    config_format(cfg, before, sizeof before);
    rt_err ignore;
    config_set(cfg, "LAYOUT", layout, &ignore);
    config_set(cfg, "OFF64", off64, &ignore);
    if (!aligned)
        config_set(cfg, "V", 1, &ignore);   /* families without V ignore it */
    config_format(cfg, after, sizeof after);
    *changed = strcmp(before, after) != 0;
    return RT_OK;
}

static int seg_decide(rt_ctx *ctx, int layout, int off64, int aligned, rt_op op, rt_type type,
                      unsigned long long n, unsigned long long nseg, seg_decision **out,
                      rt_err *e)
{
    unsigned nb = n ? bucket_of(n) : 0;
    double mean = nseg ? (double)n / (double)nseg : 1;
    int mb = mean > 1 ? (int)floor(2 * log2(mean)) : 0;
    seg_decision *d;
    int rc = RT_OK;
    pthread_mutex_lock(&ctx->lock);
    for (d = ctx->seg_decisions; d; d = d->next)
        if (d->layout == layout && d->off64 == off64 && d->aligned == aligned && d->op == op
            && d->type == type && d->nb == nb && d->mb == mb)
            goto done;
    choice *c;
    kernel *k = NULL;
    const best_entry *row = NULL;
    rt_config cfg;
    int changed = 0;
    if ((rc = get_choice(ctx, layout, op, type, &c, e)) != RT_OK)
        goto done;
    if (c->level != LEVEL_BUILTIN) {
        row = pick_seg(c, nb, mb);
        if ((rc = seg_config(row->family, row->params, layout, off64, aligned, &cfg, &changed, e)))
            goto done;
        /* Always the unit this library generates for the winner's config (winner_kernel). */
        rc = config_kernel(ctx, op, type, &cfg, 0, &k, e);
    } else {
        /* The built-in default: load-balanced tiles, scalar loads, legal for every op, type
         * and layout. */
        if ((rc = seg_config("seg_lb", "B=256 R=8 V=1 STAGE=0 PERSIST=0", layout, off64, 0, &cfg,
                             &changed, e)) == RT_OK)
            rc = config_kernel(ctx, op, type, &cfg, 1, &k, e);
    }
    if (rc != RT_OK)
        goto done;
    if (!(d = calloc(1, sizeof *d))) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory");
        goto done;
    }
    *d = (seg_decision){ctx->seg_decisions, layout, off64, aligned, op, type, nb, mb, k,
                        c->level, row, c->dev.name, changed};
    ctx->seg_decisions = d;
done:
    pthread_mutex_unlock(&ctx->lock);
    *out = rc == RT_OK ? d : NULL;
    return rc;
}

/* RT_SEG_CHECK: run templates/seg_check.cu over the keys or offsets, synchronously. */
static int seg_check(rt_ctx *ctx, const char *fn, int layout, int off64, const void *seg,
                     unsigned long long n, unsigned long long nseg, CUstream s, rt_err *e)
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
    unsigned long long got[2] = {0, 0};
    unsigned long long len = layout == 1 ? n : nseg + 1;
    unsigned long long grid = (len + 255) / 256, cap = 4ULL * (unsigned)ctx->dev.sm_count;
    grid = grid < 1 ? 1 : grid > cap ? cap : grid;
    CUdeviceptr segp = (CUdeviceptr)(uintptr_t)seg;
    void *args[] = {&segp, &n, &nseg, &bad};
    if ((r = cu.MemAlloc(&bad, sizeof got)) != CUDA_SUCCESS)
        return cuda_fail(r, "allocating the check's counters", e);
    if ((r = cu.MemsetD32Async(bad, 0, 2, s)) != CUDA_SUCCESS
        || (r = cu.MemsetD32Async(bad + 8, 0xffffffffu, 2, s)) != CUDA_SUCCESS
        || (r = cu.LaunchKernel(f, (unsigned)grid, 1, 1, 256, 1, 1, 0, s, args, NULL)) != CUDA_SUCCESS
        || (r = cu.StreamSynchronize(s)) != CUDA_SUCCESS
        || (r = cu.MemcpyDtoH(got, bad, sizeof got)) != CUDA_SUCCESS)
        rc = driver_fail(r, "running the segment check", e);
    cu.MemFree(bad);
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
    unsigned long long key;
    int rc, pushed = 0, off64 = (flags & RT_SEG_OFF64) != 0;
    size_t align_seg = layout == 1 ? 4 : off64 ? 8 : 4;

    begin(ctx);
    if ((rc = check_op_type(fn, ctx, op, type, &e)) != RT_OK
        || (rc = check_ctx(fn, ctx, &e)) != RT_OK
        || (rc = check_pointers(fn, ctx, op, type, d_in, n, d_out, &e)) != RT_OK)
        return finish(rc, &e);
    if (flags & ~(unsigned)(RT_SEG_CHECK | RT_SEG_OFF64))
        return finish(rt_seterr(&e, RT_EINVAL, "%s: unknown flags 0x%x", fn,
                                flags & ~(unsigned)(RT_SEG_CHECK | RT_SEG_OFF64)), &e);
    if (layout == 1 && off64)
        return finish(rt_seterr(&e, RT_EINVAL, "%s: RT_SEG_OFF64 is for offsets; keys are "
                                "32-bit", fn), &e);
    if (nseg == 0)
        return finish(RT_OK, &e);   /* nothing to write */
    if (!seg && (layout == 2 || n > 0))
        return finish(rt_seterr(&e, RT_EINVAL, "%s: the %s array is NULL", fn,
                                layout == 1 ? "keys" : "offsets"), &e);
    if ((uintptr_t)seg % align_seg)
        return finish(rt_seterr(&e, RT_EINVAL, "%s: the %s array %p is not aligned to %zu "
                                "bytes", fn, layout == 1 ? "keys" : "offsets", seg, align_seg), &e);
    if (layout == 2 && !off64 && n > 0x7fffffffULL)
        return finish(rt_seterr(&e, RT_EINVAL, "%s: n = %llu needs 64-bit offsets "
                                "(RT_SEG_OFF64)", fn, n), &e);
    if (layout == 1 && nseg > 0xffffffffULL)
        return finish(rt_seterr(&e, RT_EINVAL, "%s: nseg = %llu does not fit 32-bit keys", fn,
                                nseg), &e);
    if ((rc = enter(ctx, &pushed, &e)) != RT_OK)
        return finish(rc, &e);
    if ((flags & RT_SEG_CHECK)
        && (rc = seg_check(ctx, fn, layout, off64, seg, n, nseg, s, &e)) != RT_OK)
        goto done;
    int aligned = (uintptr_t)d_in % 16 == 0 && (layout == 2 || (uintptr_t)seg % 16 == 0);
    if ((rc = seg_decide(ctx, layout, off64, aligned, op, type, n, nseg, &d, &e)) != RT_OK)
        goto done;
    size_t need = plan_seg_temp_bytes(&d->k->p, n, nseg);
    if ((rc = stream_key(s, &key, &e)) != RT_OK || (rc = lock_slot(ctx, key, &sl, &e)) != RT_OK)
        goto done;
    if (sl->bytes < need)
        rc = grow(sl, need, s, &e);
    if (rc == RT_OK)
        rc = plan_seg_launch(&d->k->p, (CUdeviceptr)(uintptr_t)d_in, (CUdeviceptr)(uintptr_t)seg,
                             n, nseg, (CUdeviceptr)(uintptr_t)d_out, sl->temp, s, &e);
    pthread_mutex_unlock(&sl->lock);
done:
    leave(pushed);
    return finish(rc, &e);
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

int rt_explain_segmented(rt_ctx *ctx, int layout, rt_op op, rt_type type, unsigned long long n,
                         unsigned long long nseg, unsigned flags, char *buf, size_t len)
{
    rt_err e;
    seg_decision *d;
    int rc, pushed = 0;
    const char *fn = "rt_explain_segmented";
    begin(ctx);
    if ((rc = check_op_type(fn, ctx, op, type, &e)) != RT_OK || (rc = check_ctx(fn, ctx, &e)) != RT_OK)
        return finish(rc, &e);
    if (!buf || !len || (layout != RT_LAYOUT_KEYS && layout != RT_LAYOUT_OFFSETS))
        return finish(rt_seterr(&e, RT_EINVAL, "%s: buf is NULL or empty, or layout %d is "
                                "neither RT_LAYOUT_KEYS nor RT_LAYOUT_OFFSETS", fn, layout), &e);
    if ((rc = enter(ctx, &pushed, &e)) != RT_OK)
        return finish(rc, &e);
    rc = seg_decide(ctx, layout, (flags & RT_SEG_OFF64) != 0, 1, op, type, n, nseg, &d, &e);
    if (rc == RT_OK) {
        const kernel *k = d->k;
        char from[512];
        if (d->row)
            snprintf(from, sizeof from, "tuned on %s at n = %lld, mean segment length %.1f: "
                     "%.2f us%s", d->c_name, d->row->n, d->row->seg_mean, d->row->median_us,
                     d->respecialized ? " (re-specialised here for the offset width or "
                     "alignment)" : "");
        else
            snprintf(from, sizeof from, "no tuned entry");
        snprintf(buf, len, "%s %s %s n=%llu nseg=%llu: %s %s (plan segmented, kernel %.12s)\n"
                 "from: %s\nlevel: %s\nbinary: %s\n", layout == 1 ? "keys" : "offsets",
                 opname(ctx, op), rt_type_name(type), n, nseg, k->family, k->params, k->hash,
                 from, level_names[d->level], k->from_db ? "CUBIN from the database"
                 : "compiled by NVRTC here");
    }
    leave(pushed);
    return finish(rc, &e);
}
