/*
 * peers.c - the peers' times for `redtune report --peers` (peers.h), read from the benches'
 * CSV files (tuner/csv.h). Which bench wrote a file is told by its header; the columns
 * are found by name, so that a bench may add columns without breaking this reader.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/optype.h"
#include "csv.h"
#include "peers.h"

/* ---------------------------------------------------------------- the benches' files */

enum { K_FLAT, K_AXIS, K_TORCH_AXIS, K_N };

/* The columns each kind needs, in the order of the col enum below. */
static const char *const need[K_N][12] = {
    [K_FLAT] = {"device", "op", "type", "regime", "n", "bytes", "cub_status", "cub_us"},
    [K_AXIS] = {"device", "op", "type", "regime", "outer", "len", "inner", "bytes_in",
                "bytes_out", "cub_status", "cub_us", "result"},
    [K_TORCH_AXIS] = {"device", "op", "dtype", "shape", "dim", "bytes", "who", "status",
                      "median_us"},
};
#define OPT_CALL 12   /* idx[OPT_CALL]: what was timed (cub_call, implementation), or -1 */
#define NIDX 13
static const char *const kind_name[K_N] = {
    "redtune_bench's flat or --every-n CSV", "redtune_bench --axis's CSV",
    "bench/torch_axis.py's CSV"};

/* Which bench wrote the header: the kind whose columns are all there; else an error that
 * names the missing columns of the kind it comes closest to. */
static int header_kind(const csv *c, int idx[NIDX], rt_err *e)
{
    int best = 0, best_missing = CSV_MAX_FIELDS + 1;
    for (int k = 0; k < K_N; k++) {
        int missing = 0;
        for (int i = 0; i < 12 && need[k][i]; i++)
            missing += (idx[i] = csv_column(c, need[k][i])) < 0;
        if (!missing)
            return k;
        if (missing < best_missing) {
            best = k;
            best_missing = missing;
        }
    }
    char missing[256] = "";
    size_t used = 0;
    for (int i = 0; i < 12 && need[best][i]; i++)
        if (csv_column(c, need[best][i]) < 0 && used < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, "%s%s",
                                     used ? ", " : "", need[best][i]);
    return rt_seterr(e, RT_EINVAL, "--peers %s:%d: a header of no bench this report reads "
                     "(closest: %s, which lacks %s); see docs/results-format.md", c->path,
                     c->line, kind_name[best], missing);
}

static int bad(const csv *c, const char *col, const char *what, const char *v, rt_err *e)
{
    return rt_seterr(e, RT_EINVAL, "--peers %s:%d: column %s: '%s' is not %s", c->path,
                     c->line, col, v, what);
}

static int get_ll(const csv *c, int i, const char *col, long long lo, long long *out, rt_err *e)
{
    const char *v = c->f[i];
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno || x < lo) {
        char what[64];
        snprintf(what, sizeof what, "an integer of at least %lld", lo);
        return bad(c, col, what, v, e);
    }
    *out = x;
    return RT_OK;
}

static int get_pos(const csv *c, int i, const char *col, double *out, rt_err *e)
{
    const char *v = c->f[i];
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(x) || x <= 0)
        return bad(c, col, "a positive number", v, e);
    *out = x;
    return RT_OK;
}

static int get_name(const csv *c, int i, const char *col, char *dst, size_t size, rt_err *e)
{
    const char *v = c->f[i];
    if (!*v || strlen(v) >= size)
        return bad(c, col, "a name (empty or too long)", v, e);
    memcpy(dst, v, strlen(v) + 1);
    return RT_OK;
}

static int get_op(const csv *c, int i, char *dst, size_t size, rt_err *e)
{
    if (optype_parse_op(c->f[i]) < 0)
        return bad(c, "op", "an operator", c->f[i], e);
    return get_name(c, i, "op", dst, size, e);
}

static int get_type(const csv *c, int i, const char *col, char *dst, size_t size, rt_err *e)
{
    if (optype_parse_type(c->f[i]) < 0)
        return bad(c, col, "a type", c->f[i], e);
    return get_name(c, i, col, dst, size, e);
}

static int get_regime(const csv *c, int i, int *hot, rt_err *e)
{
    if (strcmp(c->f[i], "cold") && strcmp(c->f[i], "hot"))
        return bad(c, "regime", "cold or hot", c->f[i], e);
    *hot = !strcmp(c->f[i], "hot");
    return RT_OK;
}

/* torch's dtype names ("float32", "torch.bfloat16") as redtune's. */
static const char *torch_type(const char *d)
{
    static const char *const map[][2] = {
        {"float32", "f32"}, {"float64", "f64"}, {"bfloat16", "bf16"}, {"float16", "f16"},
        {"int32", "i32"}, {"int64", "i64"}, {"int8", "i8"}, {"uint8", "u8"}};
    if (!strncmp(d, "torch.", 6))
        d += 6;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(d, map[i][0]))
            return map[i][1];
    return NULL;
}

/* "AxBxC" and the reduced dimension into the database's "axis:OxLxI" and n. */
static int torch_layout(const csv *c, const char *shape, long long dim, peer_row *r,
                        rt_err *e)
{
    long long d[8];
    int nd = 0;
    const char *p = shape;
    while (*p) {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || errno || x < 1 || nd == 8)
            return bad(c, "shape", "a shape (sizes of at least 1 joined by x, at most 8)",
                       shape, e);
        d[nd++] = x;
        p = end;
        if (*p == 'x' && p[1])
            p++;
        else if (*p)
            return bad(c, "shape", "a shape (sizes of at least 1 joined by x, at most 8)",
                       shape, e);
    }
    if (!nd)
        return bad(c, "shape", "a shape (sizes of at least 1 joined by x, at most 8)", shape, e);
    if (dim < 0)
        dim += nd;
    if (dim < 0 || dim >= nd) {
        char what[64];
        snprintf(what, sizeof what, "a dimension of a %d-D shape", nd);
        char v[32];
        snprintf(v, sizeof v, "%lld", dim);
        return bad(c, "dim", what, v, e);
    }
    unsigned long long o = 1, in = 1, lim = 1ULL << 50;
    for (int i = 0; i < dim; i++)
        o = o > lim / (unsigned long long)d[i] ? lim + 1 : o * (unsigned long long)d[i];
    for (int i = (int)dim + 1; i < nd; i++)
        in = in > lim / (unsigned long long)d[i] ? lim + 1 : in * (unsigned long long)d[i];
    unsigned long long l = (unsigned long long)d[dim];
    if (o > lim || in > lim || l > lim || o * l > lim / in)
        return bad(c, "shape", "a shape of at most 2^50 elements", shape, e);
    snprintf(r->layout, sizeof r->layout, "axis:%llux%llux%llu", o, l, in);
    r->n = (long long)(o * l * in);
    return RT_OK;
}

/* One data row of kind 'k' (its columns at idx[]) into *r; *keep = 0 for a peer that did
 * not run or whose result was wrong, or the rows of redtune itself in torch_axis.py's file. */
static int parse_row(const csv *c, int k, const int idx[NIDX], peer_row *r, int *keep,
                     rt_err *e)
{
    int rc;
    double bytes = 0;

    memset(r, 0, sizeof *r);
    *keep = 1;
    if ((rc = get_name(c, idx[0], "device", r->device, sizeof r->device, e))
        || (rc = get_op(c, idx[1], r->op, sizeof r->op, e)))
        return rc;
    if (k == K_TORCH_AXIS) {
        const char *t = torch_type(c->f[idx[2]]), *who = c->f[idx[6]];
        long long dim;
        if (!t)
            return bad(c, "dtype", "a torch dtype (float32, bfloat16, float16, float64, "
                       "int32, int64, int8, uint8)", c->f[idx[2]], e);
        snprintf(r->type, sizeof r->type, "%s", t);
        if ((rc = get_ll(c, idx[4], "dim", -8, &dim, e))
            || (rc = torch_layout(c, c->f[idx[3]], dim, r, e)))
            return rc;
        if (strcmp(who, "eager") && strcmp(who, "Inductor") && strcmp(who, "redtune"))
            return bad(c, "who", "eager, Inductor or redtune", who, e);
        if (!strcmp(who, "redtune") || strcmp(c->f[idx[7]], "ok")) {
            *keep = 0;
            return RT_OK;
        }
        snprintf(r->who, sizeof r->who, "PyTorch %s", who);
        if (idx[OPT_CALL] >= 0)
            snprintf(r->call, sizeof r->call, "%s", c->f[idx[OPT_CALL]]);
        if ((rc = get_pos(c, idx[5], "bytes", &bytes, e))
            || (rc = get_pos(c, idx[8], "median_us", &r->us, e)))
            return rc;
    } else {
        if ((rc = get_type(c, idx[2], "type", r->type, sizeof r->type, e))
            || (rc = get_regime(c, idx[3], &r->hot, e)))
            return rc;
        int st = k == K_FLAT ? idx[6] : idx[9], us = k == K_FLAT ? idx[7] : idx[10];
        if (k == K_FLAT) {
            if ((rc = get_ll(c, idx[4], "n", 1, &r->n, e))
                || (rc = get_pos(c, idx[5], "bytes", &bytes, e)))
                return rc;
            snprintf(r->layout, sizeof r->layout, "flat");
            snprintf(r->result, sizeof r->result, "%s", r->type);
            snprintf(r->call, sizeof r->call, "cub::DeviceReduce");
        } else {
            long long o, l, in;
            double bi, bo;
            if ((rc = get_ll(c, idx[4], "outer", 1, &o, e))
                || (rc = get_ll(c, idx[5], "len", 1, &l, e))
                || (rc = get_ll(c, idx[6], "inner", 1, &in, e))
                || (rc = get_pos(c, idx[7], "bytes_in", &bi, e))
                || (rc = get_pos(c, idx[8], "bytes_out", &bo, e))
                || (rc = get_type(c, idx[11], "result", r->result, sizeof r->result, e)))
                return rc;
            if ((double)o * l * in > 0x1p50)
                return bad(c, "outer", "a shape of at most 2^50 elements", c->f[idx[4]], e);
            snprintf(r->layout, sizeof r->layout, "axis:%lldx%lldx%lld", o, l, in);
            r->n = o * l * in;
            bytes = bi + bo;
            if (idx[OPT_CALL] >= 0)
                snprintf(r->call, sizeof r->call, "%s", c->f[idx[OPT_CALL]]);
        }
        /* "-": the bench had no CUB call for the case (an axis of columns); else its status */
        if (strcmp(c->f[st], "ok")) {
            *keep = 0;
            return RT_OK;
        }
        snprintf(r->who, sizeof r->who, "CUB");
        if ((rc = get_pos(c, us, "cub_us", &r->us, e)))
            return rc;
    }
    r->gbps = bytes / (r->us * 1e-6) / 1e9;
    r->file = c->path;
    r->line = c->line;
    return RT_OK;
}

int peers_load(peer_set *p, const char *path, rt_err *e)
{
    csv c;
    int idx[NIDX], rc, k, keep, rows = 0, n0 = p->n;

    if ((rc = csv_open(&c, "--peers", path, e)))
        goto done;
    if ((rc = csv_next(&c, e)) < 0)
        goto done;
    if (rc == 0) {
        rc = rt_seterr(e, RT_EINVAL, "--peers %s: empty: no header row", path);
        goto done;
    }
    if ((k = header_kind(&c, idx, e)) < 0) {
        rc = k;
        goto done;
    }
    idx[OPT_CALL] = csv_column(&c, k == K_TORCH_AXIS ? "implementation" : "cub_call");
    int width = c.nf;
    while ((rc = csv_next(&c, e)) == 1) {
        if (c.nf != width) {
            rc = rt_seterr(e, RT_EINVAL, "--peers %s:%d: %d fields, the header has %d", path,
                           c.line, c.nf, width);
            goto done;
        }
        rows++;
        if (p->n == p->cap) {
            int cap = p->cap ? 2 * p->cap : 64;
            peer_row *v = realloc(p->v, (size_t)cap * sizeof *v);
            if (!v) {
                rc = rt_seterr(e, RT_ENOMEM, "--peers %s: out of memory", path);
                goto done;
            }
            p->v = v;
            p->cap = cap;
        }
        if ((rc = parse_row(&c, k, idx, &p->v[p->n], &keep, e)))
            goto done;
        p->n += keep;
    }
    if (rc < 0)
        goto done;
    rc = RT_OK;
    if (!rows)
        rc = rt_seterr(e, RT_EINVAL, "--peers %s: a header and no rows", path);
done:
    if (rc)
        p->n = n0;
    csv_close(&c);
    return rc;
}

void peers_free(peer_set *p)
{
    free(p->v);
    memset(p, 0, sizeof *p);
}
