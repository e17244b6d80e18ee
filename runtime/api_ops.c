/*
 * api_ops.c - user-defined operators registered on a context (rt_register_op): the
 * description checked, the operator compiled once and its identity evaluated on the GPU;
 * and the lookup of a handle, and of the database's winners of the same definition.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "nvrtc.h"

/* The user operator of handle 'op' on ctx, or NULL (a built-in, or not registered). */
const user_op *api_user_of(const rt_ctx *ctx, rt_op op)
{
    unsigned i = (unsigned)op - RT_OP_USER_FIRST;
    if (!ctx || (int)op < RT_OP_USER_FIRST || i >= (unsigned)RT_USER_OPS_MAX
        || (int)i >= atomic_load_explicit(&ctx->nuops, memory_order_acquire))
        return NULL;
    return &ctx->uops[i];
}

/* A user operator's winners: only those whose unit carries its definition fingerprint (the
 * tuner writes it in every unit); the others are counted in c->foreign. */
int api_keep_definition(rt_ctx *ctx, const user_op *u, choice *c, rt_err *e)
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
    /* The optional fields: NULL or "" is the default. map and finalize have lines of their
     * own in a unit; acc and result are read, and declared from what was read. */
    const struct { const char *what, *v; char *dst; size_t size; int expr; } opt[] = {
        {"map", d->map, u->map, sizeof u->map, 0},
        {"acc", d->acc, u->acc, sizeof u->acc, 1},
        {"finalize", d->finalize, u->finalize, sizeof u->finalize, 0},
        {"result", d->result, u->result, sizeof u->result, 1},
    };
    for (size_t k = 0; k < sizeof opt / sizeof opt[0]; k++) {
        if (!opt[k].v || !opt[k].v[0])
            continue;
        if ((rc = desc_field(fn, opt[k].what, opt[k].v, opt[k].dst, opt[k].size, e)))
            return rc;
        if (codegen_check_fragment(opt[k].dst, opt[k].expr, &line, &why))
            return rt_seterr(e, RT_EINVAL, "%s: operator '%s': desc->%s, line %d: %s", fn,
                             u->name, opt[k].what, line, why);
    }
    codegen_layout acc, res;
    const char *field;
    char rule[160];
    if (codegen_user_fields(u, &acc, &res, &field, &line, rule, sizeof rule))
        return rt_seterr(e, RT_EINVAL, "%s: operator '%s': desc->%s, line %d: %s", fn, u->name,
                         field, line, rule);
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
    /* one result (rt_final of the identity): its size from the layout the check read */
    codegen_layout acc, res;
    const char *field;
    int line;
    char why[160];
    size_t size = codegen_user_fields(&u->op, &acc, &res, &field, &line, why, sizeof why)
                      ? optype_size(u->op.type) : res.size;
    void *args[] = {&dv};
    if ((r = cu.ModuleLoadData(&mod, o.cubin)) != CUDA_SUCCESS
        || (r = cu.ModuleGetFunction(&f, mod, "rt_ref_identity_value")) != CUDA_SUCCESS
        || (r = cu.MemAlloc(&dv, sizeof u->identity)) != CUDA_SUCCESS
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

    api_begin(ctx);
    if ((rc = check_desc(fn, desc, &uop, &e)) != RT_OK
        || (rc = api_check_ctx(fn, ctx, &e)) != RT_OK)
        return api_finish(rc, &e);
    if (!op)
        return api_finish(rt_seterr(&e, RT_EINVAL, "%s: op is NULL", fn), &e);
    char id[RT_USER_OP_ID];
    codegen_user_op_id(&uop, id);
    if ((rc = api_enter(ctx, &pushed, &e)) != RT_OK)
        return api_finish(rc, &e);
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
    {
        codegen_layout acc, res;
        const char *field;
        int line;
        char why[160];
        if (codegen_user_fields(&u->op, &acc, &res, &field, &line, why, sizeof why)) {
            u->acc_size = u->res_size = optype_size(uop.type);   /* checked before: unreached */
        } else {
            u->acc_size = acc.size;
            u->res_size = res.size;
        }
    }
    rt_err nv;
    if (nvrtc_load(&nv) == RT_OK && (rc = eval_identity(ctx, u, &e)) != RT_OK)
        goto done;   /* not counted: the slot is taken again by the next registration */
    atomic_store_explicit(&ctx->nuops, n + 1, memory_order_release);
    *op = (rt_op)(RT_OP_USER_FIRST + n);
done:
    pthread_mutex_unlock(&ctx->lock);
    api_leave(pushed);
    return api_finish(rc, &e);
}

size_t api_acc_size(const rt_ctx *ctx, rt_op op, rt_type type)
{
    const user_op *u = api_user_of(ctx, op);
    return u ? u->acc_size : optype_acc_size(op, type);
}

size_t api_res_size(const rt_ctx *ctx, rt_op op, rt_type type)
{
    const user_op *u = api_user_of(ctx, op);
    return u ? u->res_size : optype_res_size(op, type);
}
