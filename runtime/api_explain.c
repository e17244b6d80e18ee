/*
 * api_explain.c - what rt_reduce runs for (op, type, n), told or handed over: rt_explain's
 * text (the kernel, its database entry or the winner it replaces and why, the fallback level,
 * where its CUBIN came from), and
 * api_kernel_of, the launch plan itself for bench/.
 */
#include <stdio.h>

#include "api_int.h"
#include "family.h"
#include "optype.h"
#include "store.h"

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
    char entry[1536], ver[16], range[64];
    api_slot_text(api_size_slot(n), range, sizeof range);
    nvrtc_text(k->nvrtc_version, ver, sizeof ver);
    char kin[512];
    if (d->passed)
        /* "none used": what runs is the built-in default (bench/pick.c reads "none"). */
        snprintf(entry, sizeof entry, "none used: the winner for this size, %s %s (device "
                 "\"%s\" (sm_%d%d, %d SMs), tuned n = %lld, median %.2f us, in %s; %s%s), "
                 "cannot be made here: %s; the built-in default runs in its place",
                 d->passed->family, d->passed->params, d->c->dev.name, d->c->dev.cc_major,
                 d->c->dev.cc_minor, d->c->dev.sm_count, d->passed->n, d->passed->median_us,
                 store_path(ctx->db), api_row_owner(d->c, d->passed),
                 api_kin_phrase(d->c, d->passed, kin, sizeof kin), d->why ? d->why : "?");
    else if (d->row)
        snprintf(entry, sizeof entry, "device \"%s\" (sm_%d%d, %d SMs), tuned n = %lld, "
                 "median %.2f us, in %s; %s%s", d->c->dev.name, d->c->dev.cc_major,
                 d->c->dev.cc_minor, d->c->dev.sm_count, d->row->n, d->row->median_us,
                 store_path(ctx->db), api_row_owner(d->c, d->row),
                 api_kin_note(ctx, d->c, d->row, op, kin, sizeof kin));
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
             "%s %s%s, n = %llu (decided for %s):\n"
             "  types: %s\n"
             "  kernel: %s %s (%s plan, hash %.12s)\n"
             "  database entry: %s\n"
             "  fallback level: %s (this GPU: \"%s\", %s, %d SMs)\n"
             "  CUBIN: %s%s%s\n"
             "  database: %s (%s)\n",
             on, tn, who, n, range, types, k->family, k->params, family_plan_name(k->p.kind), k->hash,
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
