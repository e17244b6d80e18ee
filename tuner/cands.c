/*
 * cands.c - the candidate set: emit, hash, compile on the thread pool, cache in the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/codegen.h"
#include "../runtime/nvrtc.h"
#include "../runtime/optype.h"
#include "cands.h"
#include "pool.h"
#include "sandbox.h"
#include "segdata.h"
#include "store_tune.h"
#include "space.h"

/* Emit and hash every config for a built-in (user NULL) or a user-defined operator. */
static int make(const rt_config *cfgs, int n, rt_op op, rt_type type, const rt_user_op *user,
                cand **out, rt_err *e)
{
    cand *c = calloc(n > 0 ? (size_t)n : 1, sizeof *c);
    if (!c)
        return rt_seterr(e, RT_ENOMEM, "out of memory for %d candidates", n);
    for (int i = 0; i < n; i++) {
        c[i].cfg = cfgs[i];
        config_format(&cfgs[i], c[i].params, sizeof c[i].params);
        int rc = user ? codegen_emit_user(&cfgs[i], user, &c[i].src, e)
                      : codegen_emit(&cfgs[i], op, type, &c[i].src, e);
        if (rc) {
            cands_free(c, n);
            return rc;
        }
        hash_hex(c[i].src, strlen(c[i].src), c[i].hash);
    }
    *out = c;
    return RT_OK;
}

int cands_make(const rt_config *cfgs, int n, rt_op op, rt_type type, cand **out, rt_err *e)
{
    return make(cfgs, n, op, type, NULL, out, e);
}

int cands_make_user(const rt_config *cfgs, int n, const rt_user_op *user, cand **out, rt_err *e)
{
    return make(cfgs, n, RT_SUM, user->type, user, out, e);
}

static int expand_case(const char *space_path, const char *families, int deterministic,
                       const rt_device *dev, const char *op, rt_type type, int commutative,
                       int layout, int off64, const axis_shape *shape, rt_config **cfgs,
                       int *n, char *skipped, size_t skipped_len, rt_err *e);

int cands_expand(const char *space_path, const char *families, int deterministic,
                 const rt_device *dev, const char *op, rt_type type, int commutative,
                 int layout, int off64, rt_config **cfgs, int *n, char *skipped,
                 size_t skipped_len, rt_err *e)
{
    return expand_case(space_path, families, deterministic, dev, op, type, commutative, layout,
                       off64, NULL, cfgs, n, skipped, skipped_len, e);
}

static int same_config(const rt_config *a, const rt_config *b)
{
    return a->family == b->family
           && !memcmp(a->values, b->values, (size_t)a->family->nparams * sizeof a->values[0]);
}

int cands_expand_axis(const char *space_path, const char *families, int deterministic,
                      const rt_device *dev, const char *op, rt_type type, int commutative,
                      const axis_shape *shapes, int nshapes, rt_config **cfgs, int *n,
                      int **idx, int *nidx, char *skipped, size_t skipped_len, rt_err *e)
{
    rt_config *all = NULL, *one = NULL;
    int nall = 0, cap = 0, rc = RT_OK, g = 0;
    *cfgs = NULL;
    *n = 0;
    for (g = 0; g < nshapes; g++)
        idx[g] = NULL, nidx[g] = 0;
    if (skipped && skipped_len)
        skipped[0] = '\0';
    for (g = 0; g < nshapes; g++) {
        int k;
        char left[1024] = "";
        if ((rc = expand_case(space_path, families, deterministic, dev, op, type, commutative,
                              SEG_LAYOUT_AXIS, 0, &shapes[g], &one, &k, left, sizeof left, e)))
            goto done;
        /* the families left out of any shape, once each */
        char *save = NULL;
        for (char *t = strtok_r(left, " ", &save); skipped && t; t = strtok_r(NULL, " ", &save)) {
            size_t used = strlen(skipped);
            char pad[1100];
            snprintf(pad, sizeof pad, " %s ", t);
            char have[1100];
            snprintf(have, sizeof have, " %s ", skipped);
            if (!strstr(have, pad) && used < skipped_len)
                snprintf(skipped + used, skipped_len - used, "%s%s", used ? " " : "", t);
        }
        if (!(idx[g] = malloc((size_t)k * sizeof *idx[g]))) {
            rc = rt_seterr(e, RT_ENOMEM, "out of memory for the configs");
            goto done;
        }
        for (int i = 0; i < k; i++) {
            int j = 0;   /* a few hundred configs per shape: a linear search will do */
            while (j < nall && !same_config(&all[j], &one[i]))
                j++;
            if (j == nall) {
                if (nall == cap) {
                    int ncap = cap ? 2 * cap : 256;
                    rt_config *v = realloc(all, (size_t)ncap * sizeof *v);
                    if (!v) {
                        rc = rt_seterr(e, RT_ENOMEM, "out of memory for the configs");
                        goto done;
                    }
                    all = v;
                    cap = ncap;
                }
                all[nall++] = one[i];
            }
            idx[g][nidx[g]++] = j;
        }
        free(one);
        one = NULL;
    }
done:
    free(one);
    if (rc) {
        for (int i = 0; i < nshapes; i++) {
            free(idx[i]);
            idx[i] = NULL;
            nidx[i] = 0;
        }
        free(all);
        return rc;
    }
    *cfgs = all;
    *n = nall;
    return RT_OK;
}

static int expand_case(const char *space_path, const char *families, int deterministic,
                       const rt_device *dev, const char *op, rt_type type, int commutative,
                       int layout, int off64, const axis_shape *shape, rt_config **cfgs,
                       int *n, char *skipped, size_t skipped_len, rt_err *e)
{
    char *text = NULL;
    size_t len = 0;
    int rc;
    *cfgs = NULL;
    *n = 0;
    if (space_path && (rc = read_file(space_path, &text, &len, e)))
        return rc;
    const char *name, *deftext = space_for_layout(layout, &name);
    if (space_path)
        name = space_path;
    space_case cs = {op, rt_type_name(optype_elem(type)), (int)optype_size(type), commutative,
                     skipped, skipped_len, segdata_layout_name(layout), 0, 0, 0};
    if (shape) {
        cs.outer = shape->outer;
        cs.len = shape->len;
        cs.inner = shape->inner;
    }
    rc = space_expand(text ? text : deftext, text ? len : strlen(deftext), name, dev, &cs, cfgs,
                      n, e);
    free(text);
    if (rc)
        return rc;
    for (int i = 0; i < *n; i++)
        config_force_layout(&(*cfgs)[i], layout, off64);
    int k = 0;
    for (int i = 0; i < *n; i++) {
        const rt_family *f = (*cfgs)[i].family;
        if ((!families || family_listed(families, f->name)) && (!deterministic || f->deterministic))
            (*cfgs)[k++] = (*cfgs)[i];
    }
    *n = k;
    if (k > 0)
        return RT_OK;
    free(*cfgs);
    *cfgs = NULL;
    char lay[96] = "";
    if (shape)
        axisdata_layout(shape, lay, sizeof lay);
    else if (layout)
        snprintf(lay, sizeof lay, "%s", segdata_layout_name(layout));
    rc = rt_seterr(e, RT_EINVAL, "%s: the space has no %sconfig for %s %s%s%s on %s%s%s",
                   name, deterministic ? "deterministic " : "", op, rt_type_name(optype_elem(type)),
                   lay[0] ? " layout " : "", lay, dev->name, families ? " in the families " : "",
                   families ? families : "");
    if (skipped && skipped[0]) {
        size_t used = strlen(e->msg);
        snprintf(e->msg + used, sizeof e->msg - used, " (left out, since '%s' does not "
                 "commute: %s; lua/spaces/paper.lua holds the families that keep the order)",
                 op, skipped);
    }
    return rc;
}

int family_listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p; ) {
        size_t w = strcspn(p, ",");
        if (w == len && strncmp(p, name, len) == 0)
            return 1;
        p += w + (p[w] == ',');
    }
    return 0;
}

void cands_free(cand *c, int n)
{
    for (int i = 0; c && i < n; i++) {
        free(c[i].src);
        free(c[i].cubin);
        free(c[i].log);
        free(c[i].err);
    }
    free(c);
}

typedef struct compile_job {
    cand *c;
    const int *idx;   /* the candidates to compile: c[idx[k]]; NULL: c[k] */
    const char *arch;
} compile_job;

static void compile_one(int k, void *arg)
{
    compile_job *j = arg;
    cand *c = &j->c[j->idx ? j->idx[k] : k];
    if (c->cubin || c->rc != RT_OK)
        return;
    rt_err *e = malloc(sizeof *e);
    if (!e) {
        c->rc = RT_ENOMEM;
        return;
    }
    rt_clearerr(e);
    char name[128];
    snprintf(name, sizeof name, "%s.cu", c->cfg.family->name);
    nvrtc_output o;
    c->rc = nvrtc_compile(c->src, name, j->arch, &o, e);
    if (c->rc == RT_OK) {
        c->cubin = o.cubin;
        c->cubin_size = o.size;
        c->compiled = 1;
    } else {
        c->err = strdup(e->msg);
        free(o.cubin);
    }
    c->log = o.log;
    free(e);
}

int cands_reuse(cand *c, int n, const char *arch, store *s, int *reused, rt_err *e)
{
    *reused = 0;
    int rc = nvrtc_load(e);
    if (rc)
        return rc;
    int ver = nvrtc_version();
    for (int i = 0; s && i < n; i++) {
        if (c[i].cubin || c[i].rc != RT_OK)
            continue;
        store_binary b;
        rc = store_get_binary(s, c[i].hash, arch, ver, &b, e);
        if (rc == RT_OK) {
            c[i].cubin = b.cubin;
            c[i].cubin_size = b.size;
            b.cubin = NULL;
            store_binary_free(&b);
            (*reused)++;
        } else if (rc != RT_ENOTFOUND) {
            return rc;
        }
    }
    rt_clearerr(e);
    return RT_OK;
}

int cands_compile_idx(cand *c, const int *idx, int n, const char *arch, int jobs, store *s,
                      int *compiled, int *failed, rt_err *e)
{
    *compiled = *failed = 0;
    int rc = nvrtc_load(e);
    if (rc)
        return rc;
    int ver = nvrtc_version();
    compile_job job = {c, idx, arch};
    pool_run(n, jobs, compile_one, &job);
    for (int k = 0; k < n; k++) {
        cand *x = &c[idx ? idx[k] : k];
        if (x->rc != RT_OK) {
            (*failed)++;
            continue;
        }
        if (!x->compiled || x->stored)
            continue;
        (*compiled)++;
        x->stored = 1;
        if (!s)
            continue;
        store_binary b = {x->cubin, x->cubin_size, -1, -1, x->log};
        if ((rc = store_put_kernel(s, x->hash, x->cfg.family->name, x->params, x->src, e)) ||
            (rc = store_put_binary(s, x->hash, arch, ver, &b, e)))
            return rc;
    }
    return RT_OK;
}

int cands_compile(cand *c, int n, const char *arch, int jobs, store *s, int *compiled,
                  int *failed, rt_err *e)
{
    int reused;
    int rc = cands_reuse(c, n, arch, s, &reused, e);
    return rc ? rc : cands_compile_idx(c, NULL, n, arch, jobs, s, compiled, failed, e);
}

void cands_say_failed(const cand *c)
{
    fprintf(stderr, "redtune: %s %s does not compile:\n%s\n", c->cfg.family->name, c->params,
            c->err ? c->err : "(no message)");
}

int cands_compile_reference(const opfile *user, const char *arch, nvrtc_output *out, rt_err *e)
{
    char *src;
    memset(out, 0, sizeof *out);
    int rc = codegen_emit_user_check(&user->op, &src, e);
    if (rc)
        return rc;
    rc = nvrtc_compile(src, "redtune/reference.cu", arch, out, e);
    free(src);
    if (rc == RT_ENVRTC) {
        char *log = strdup(out->log ? out->log : e->msg);
        rc = rt_seterr(e, RT_ENVRTC, "%s: operator '%s' does not compile for %s:\n%s",
                       user->op.file, user->op.name, arch, log ? log : "(no log)");
        free(log);
    }
    return rc;
}
