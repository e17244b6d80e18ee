/*
 * api_kernel.c - loading the kernel a decision chose, once per context (keyed by its source
 * hash): a database winner runs as this library's own unit for its family and parameters
 * (api_winner_kernel; the stored source only for a family it does not know, checked against
 * its hash), and the unit's CUBIN is, in order:
 *   1. one stored for this arch under the unit's hash by any NVRTC, the newest first (NVRTC
 *      is not even loaded for it),
 *   2. else the source compiled by NVRTC (loaded at the first kernel that needs it).
 * A winner whose kernel cannot be made (no CUBIN for the unit and no NVRTC, or NVRTC refuses
 * it) gives way to the built-in default of its case (api_builtin_instead), which the caller
 * records as the decision's level, with NVRTC's reason in a line (api_nvrtc_line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "codegen.h"
#include "family.h"
#include "hash.h"
#include "nvrtc.h"
#include "optype.h"
#include "plan.h"
#include "store.h"

/* What a winner's message says before NVRTC's part of it (api_nvrtc_line finds it there). */
#define NOT_HERE "and it cannot be compiled here: "

/* The unit of config 'c' for (op, type): a built-in operator's, or a user operator's. */
static int emit(const rt_ctx *ctx, const rt_config *c, rt_op op, rt_type type, char **src,
                rt_err *e)
{
    const user_op *u = api_user_of(ctx, op);
    return u ? codegen_emit_user(c, &u->op, src, e) : codegen_emit(c, op, type, src, e);
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
 * 'builtin' (API_WINNER, API_BUILTIN, API_BUILTIN_INSTEAD) says what the kernel is to the
 * case, for the message when it cannot be made. A kernel that could not be made is not
 * remembered: the next case that needs it tries again.
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
    k->builtin = builtin != API_WINNER;
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
        if (builtin == API_BUILTIN)
            rc = rt_seterr(e, RT_ENVRTC, "%s %s: %s has no winner for this GPU (%s, %s) "
                           "or one of its architecture, and the built-in default "
                           "(%s %s) has to be compiled: %s", api_opname(ctx, op),
                           api_typename(op, type, tn, sizeof tn), path, ctx->dev.name, ctx->arch, family,
                           params, nv->msg);
        else if (builtin == API_BUILTIN_INSTEAD)
            rc = rt_seterr(e, RT_ENVRTC, "%s %s: %s holds no CUBIN for %s of the built-in "
                           "default (%s %s, kernel %.12s), to run in place of the winner, "
                           NOT_HERE "%s", api_opname(ctx, op),
                           api_typename(op, type, tn, sizeof tn), path, ctx->arch, family, params,
                           hash, nv->msg);
        else
            rc = rt_seterr(e, RT_ENVRTC, "%s %s: %s holds no CUBIN for %s of kernel %.12s "
                           "(%s %s) " NOT_HERE "%s", api_opname(ctx, op),
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

/* The unit of config 'cfg' for (op, type) and its hash: what api_config_kernel looks a CUBIN
 * up under, and what tests/test_shipped.c checks the shipped dumps against. */
int api_config_unit(const rt_ctx *ctx, rt_op op, rt_type type, const rt_config *cfg,
                    char **src, char hash[RT_HASH_HEX], rt_err *e)
{
    int rc = emit(ctx, cfg, op, type, src, e);
    if (rc == RT_OK)
        hash_hex(*src, strlen(*src), hash);
    return rc;
}

/* The unit this library generates for config 'cfg' and (op, type), loaded: its CUBIN from
 * the database when one is stored under the unit's hash, else compiled (get_kernel). */
int api_config_kernel(rt_ctx *ctx, rt_op op, rt_type type, const rt_config *cfg,
                         int builtin, kernel **out, rt_err *e)
{
    char *src = NULL, hash[RT_HASH_HEX], params[256];
    int rc = api_config_unit(ctx, op, type, cfg, &src, hash, e);
    if (rc)
        return rc;
    config_format(cfg, params, sizeof params);
    rc = get_kernel(ctx, op, type, hash, cfg->family->name, params, src, builtin, out, e);
    free(src);
    return rc;
}

/* A winner's config: its family's, built into this library, with its parameters (else it
 * runs from its stored source). */
int api_winner_config(const char *family, const char *params, rt_config *cfg, rt_err *e)
{
    const rt_family *f = family_find(family);
    if (!f)
        return rt_seterr(e, RT_ENOTFOUND, "family '%s' is not built into this library", family);
    return config_parse(f, params, cfg, e);
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
    rt_config cfg;
    if (api_winner_config(row->family, row->params, &cfg, e) != RT_OK) {
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

/*
 * NVRTC's reason in a winner's message (get_kernel's: what follows NOT_HERE, else the whole
 * message), in one line: its first line, which is NVRTC's verdict ("seg_pipe.cu:
 * NVRTC_ERROR_COMPILATION for sm_90") or why NVRTC could not be loaded, and then the first
 * line of the compile log below it that says "error" (the static_assert or ptxas' complaint
 * that is the cause), so that a warning or rt_explain says why in a line.
 */
void api_nvrtc_line(const char *msg, char *buf, size_t len)
{
    const char *p = strstr(msg, NOT_HERE);
    p = p ? p + strlen(NOT_HERE) : msg;
    int first = (int)strcspn(p, "\n"), errlen = 0;
    const char *err = NULL;
    for (const char *l = p + first; *l && !err; ) {
        l++;   /* past the newline */
        int ll = (int)strcspn(l, "\n");
        char line[512];
        snprintf(line, sizeof line, "%.*s", ll, l);
        if (strstr(line, "error")) {
            err = l;
            errlen = ll;
        }
        l += ll;
    }
    snprintf(buf, len, "%.*s%s%.*s", first, p, err ? ": " : "", errlen, err ? err : "");
}

/*
 * A winner chosen for a case whose kernel cannot be made (no CUBIN for its unit and no NVRTC,
 * or NVRTC refuses the unit: a config the tuner never compiled in the variant a call needs,
 * a database of another generator) is no reason to fail the call: the built-in default of
 * the case, legal for it by construction, runs in its place. 'e' holds the winner's
 * RT_ENVRTC; on success it is cleared and *why gets its reason in one line for the decision
 * (rt_explain, REDTUNE_LOG). The decision stands for the context's life, as every decision:
 * a compile that failed fails again, and NVRTC is loaded once per process; the winner's
 * kernel is not remembered, so another case that picks it tries it again. When the built-in
 * cannot be made either (NVRTC missing, and no CUBIN of it stored), the call fails with the
 * built-in's code and both messages, the winner's first. Caller holds ctx->lock.
 */
int api_builtin_instead(rt_ctx *ctx, rt_op op, rt_type type, const char *what,
                        const char *wfamily, const char *wparams, const rt_config *cfg,
                        kernel **out, char **why, rt_err *e)
{
    char line[512], bparams[256];
    rt_err *w = malloc(sizeof *w), *b = malloc(sizeof *b);
    int rc;

    *out = NULL;
    *why = NULL;
    if (!w || !b) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory loading the built-in default in place "
                       "of %s %s", what, wfamily, wparams);
        goto done;
    }
    *w = *e;
    api_nvrtc_line(w->msg, line, sizeof line);
    rt_clearerr(e);
    rc = api_config_kernel(ctx, op, type, cfg, API_BUILTIN_INSTEAD, out, e);
    if (rc == RT_OK) {
        if (!(*why = strdup(line)))
            rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", what);
        goto done;   /* the kernel stays loaded (ctx->kernels) for the next try */
    }
    *b = *e;
    config_format(cfg, bparams, sizeof bparams);
    /* The winner's message first, cut so that the built-in's fits after it. */
    rt_seterr(e, rc, "%s: neither the database's winner (%s %s) nor the built-in default in "
              "its place (%s %s) can be made here\nthe winner: %.7000s\nthe built-in default: "
              "%s", what, wfamily, wparams, cfg->family->name, bparams, w->msg, b->msg);
    *out = NULL;
done:
    free(w);
    free(b);
    return rc;
}
