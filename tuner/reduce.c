/*
 * reduce.c - `redtune reduce`: reduce the data of raw binary files on the GPU with the kernel
 * the tuned database holds, through libredtune's public API (include/redtune.h). The data is
 * read whole into host memory; --check validates the keys or offsets there, before the GPU is
 * touched (so checking works on a machine with no GPU, and RT_SEG_CHECK is not needed).
 * --shape O,L,I reduces the values as an [O, L, I] tensor along L (rt_reduce_axis).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../runtime/driver.h"
#include "../runtime/optype.h"
#include "tuner.h"

/* Read the whole file 'path' into *buf (malloc'd; NULL for an empty file), *len bytes. */
static int slurp(const char *path, void **buf, size_t *len, rt_err *e)
{
    struct stat st;
    unsigned char *b = NULL;
    size_t n = 0, cap = 0;
    int rc = RT_OK, fd;

    *buf = NULL;
    *len = 0;
    if ((fd = open(path, O_RDONLY)) < 0)
        return rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = rt_seterr(e, RT_EIO, "%s: is a directory", path);
        goto done;
    }
    if (S_ISREG(st.st_mode))
        cap = (size_t)st.st_size + 1;   /* one more, to see the end in one read */
    for (;;) {
        if (n == cap) {
            size_t want = cap ? cap * 2 : 1 << 16;
            unsigned char *nb = realloc(b, want);
            if (!nb) {
                rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory reading %zu bytes", path, want);
                goto done;
            }
            b = nb;
            cap = want;
        } else if (!b && !(b = malloc(cap))) {
            rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory reading %zu bytes", path, cap);
            goto done;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = rt_seterr(e, RT_EIO, "%s: read: %s", path, strerror(errno));
            goto done;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *buf = n ? b : NULL;
    *len = n;
    if (n)
        b = NULL;
done:
    free(b);
    close(fd);
    return rc;
}

/* Read 'path' as an array of 'es'-byte elements; an empty file or a size that is not a
 * multiple of 'es' is bad data (*bad set). */
static int load_array(const char *path, size_t es, const char *what, void **buf,
                      unsigned long long *count, int *bad, rt_err *e)
{
    size_t len;
    int rc = slurp(path, buf, &len, e);
    if (rc)
        return rc;
    if (len == 0) {
        *bad = 1;
        return rt_seterr(e, RT_EINVAL, "%s: the file is empty (0 bytes): no %s", path, what);
    }
    if (len % es) {
        *bad = 1;
        free(*buf);
        *buf = NULL;
        return rt_seterr(e, RT_EINVAL, "%s: %zu bytes is not a whole number of %zu-byte %s",
                         path, len, es, what);
    }
    *count = len / es;
    return RT_OK;
}

static long long offset_at(const void *offs, int off64, unsigned long long i)
{
    if (off64) {
        long long v;
        memcpy(&v, (const char *)offs + i * 8, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, (const char *)offs + i * 4, 4);
    return v;
}

/* The flags of the segmented call: the offsets' width, and RT_SEG_SKEWED when the file's
 * offsets (on the host already) spread as family_seg_skewed says, where a kernel with a group
 * of threads per segment would leave that group a long segment (docs/segmented.md), else
 * RT_SEG_UNIFORM (no list of long segments is needed). Keys are served by load-balanced
 * kernels whatever the flag. */
static unsigned seg_flags(const reduce_opts *o, const void *seg, unsigned long long n,
                          unsigned long long nseg)
{
    unsigned flags = o->off64 ? RT_SEG_OFF64 : 0;
    if (!o->offsets || !seg || nseg == 0)
        return flags;
    unsigned long long longest = 0;
    long long before = offset_at(seg, o->off64, 0);
    for (unsigned long long s = 1; s <= nseg; s++) {
        long long at = offset_at(seg, o->off64, s);
        if (at - before > (long long)longest)
            longest = (unsigned long long)(at - before);
        before = at;
    }
    return flags | (family_seg_skewed(longest, n, nseg) ? RT_SEG_SKEWED : RT_SEG_UNIFORM);
}

/* Append one "  FILE: RULE: COUNT ENTRIES break it, the first DETAIL" line to the message. */
static void add_rule(char *msg, size_t len, const char *file, const char *rule,
                     unsigned long long count, const char *noun, const char *detail)
{
    size_t used = strlen(msg);
    snprintf(msg + used, len - used, "\n  %s: %s: %llu %s%s break%s it, the first %s", file,
             rule, count, noun, count == 1 ? "" : "s", count == 1 ? "s" : "", detail);
}

/* --check of the keys: sorted non-decreasing, each < nseg. 0 when good; else the number of
 * rules broken, each described by a line appended to msg. */
static int check_keys(const char *file, const unsigned *keys, unsigned long long n,
                      unsigned long long nseg, char *msg, size_t len)
{
    unsigned long long unsorted = 0, big = 0, first_unsorted = 0, first_big = 0;
    for (unsigned long long i = 0; i < n; i++) {
        if (keys[i] >= nseg && big++ == 0)
            first_big = i;
        if (i > 0 && keys[i] < keys[i - 1] && unsorted++ == 0)
            first_unsorted = i;
    }
    char detail[160], rule[96];
    int broken = 0;
    if (unsorted) {
        snprintf(detail, sizeof detail, "keys[%llu] = %u after keys[%llu] = %u", first_unsorted,
                 keys[first_unsorted], first_unsorted - 1, keys[first_unsorted - 1]);
        add_rule(msg, len, file, "keys must be sorted non-decreasing", unsorted, "key", detail);
        broken++;
    }
    if (big) {
        snprintf(rule, sizeof rule, "keys must be < nseg = %llu", nseg);
        snprintf(detail, sizeof detail, "keys[%llu] = %u", first_big, keys[first_big]);
        add_rule(msg, len, file, rule, big, "key", detail);
        broken++;
    }
    return broken;
}

/* --check of the offsets[0..nseg]: each >= 0 and <= n, non-decreasing. As check_keys. */
static int check_offsets(const char *file, const void *offs, int off64, unsigned long long n,
                         unsigned long long nseg, char *msg, size_t len)
{
    unsigned long long neg = 0, past = 0, down = 0, first_neg = 0, first_past = 0, first_down = 0;
    for (unsigned long long s = 0; s <= nseg; s++) {
        long long o = offset_at(offs, off64, s);
        if (o < 0 && neg++ == 0)
            first_neg = s;
        if (o >= 0 && (unsigned long long)o > n && past++ == 0)
            first_past = s;
        if (s > 0 && o < offset_at(offs, off64, s - 1) && down++ == 0)
            first_down = s;
    }
    char detail[160], rule[96];
    int broken = 0;
    if (down) {
        snprintf(detail, sizeof detail, "offsets[%llu] = %lld after offsets[%llu] = %lld",
                 first_down, offset_at(offs, off64, first_down), first_down - 1,
                 offset_at(offs, off64, first_down - 1));
        add_rule(msg, len, file, "offsets must be non-decreasing", down, "offset", detail);
        broken++;
    }
    if (neg) {
        snprintf(detail, sizeof detail, "offsets[%llu] = %lld", first_neg,
                 offset_at(offs, off64, first_neg));
        add_rule(msg, len, file, "offsets must be >= 0", neg, "offset", detail);
        broken++;
    }
    if (past) {
        snprintf(rule, sizeof rule, "offsets must be <= n = %llu (the values)", n);
        snprintf(detail, sizeof detail, "offsets[%llu] = %lld", first_past,
                 offset_at(offs, off64, first_past));
        add_rule(msg, len, file, rule, past, "offset", detail);
        broken++;
    }
    return broken;
}

/* An IEEE half (f16) or bfloat16 (bf16) as a float: both convert exactly. */
static float half_value(rt_type type, const void *p)
{
    uint16_t h;
    uint32_t bits;
    float f;
    memcpy(&h, p, 2);
    if (type == RT_BF16) {
        bits = (uint32_t)h << 16;
        memcpy(&f, &bits, 4);
        return f;
    }
    int exp = (h >> 10) & 31, man = h & 1023;
    f = exp == 0 ? ldexpf((float)man, -24)
      : exp == 31 ? (man ? NAN : INFINITY)
      : ldexpf((float)(man | 1024), exp - 25);
    return h & 0x8000 ? -f : f;
}

/* One value of 'type' as text that reads back to the same value. */
static void format_value(rt_type type, const void *p, char *buf, size_t len)
{
    switch (type) {
    case RT_F16: case RT_BF16:
        snprintf(buf, len, "%.9g", (double)half_value(type, p));
        break;
    case RT_I8: { int8_t v; memcpy(&v, p, 1); snprintf(buf, len, "%d", v); break; }
    case RT_U8: { uint8_t v; memcpy(&v, p, 1); snprintf(buf, len, "%u", v); break; }
    case RT_F32: { float v; memcpy(&v, p, 4); snprintf(buf, len, "%.9g", (double)v); break; }
    case RT_F64: { double v; memcpy(&v, p, 8); snprintf(buf, len, "%.17g", v); break; }
    case RT_I32: { int32_t v; memcpy(&v, p, 4); snprintf(buf, len, "%" PRId32, v); break; }
    case RT_U32: { uint32_t v; memcpy(&v, p, 4); snprintf(buf, len, "%" PRIu32, v); break; }
    case RT_I64: { int64_t v; memcpy(&v, p, 8); snprintf(buf, len, "%" PRId64, v); break; }
    default: { uint64_t v; memcpy(&v, p, 8); snprintf(buf, len, "%" PRIu64, v); break; }
    }
}

/* The results as text on stdout, one per line: the value; argmin/argmax: value and index;
 * var/std_mean: the variance (or deviation) and the mean. Results are optype_res_size bytes
 * apart, their values of the resolved result type (the element type's for argmin/argmax). */
static int print_results(const reduce_opts *o, const unsigned char *res, unsigned long long count,
                         rt_err *e)
{
    size_t rs = optype_res_size(o->op, o->type);
    optype_ts ts;
    char v[64], w[64];
    if (optype_resolve(o->op, o->type, &ts, NULL, 0))
        return rt_seterr(e, RT_EINVAL, "reduce: the type spec does not resolve");
    for (unsigned long long s = 0; s < count; s++) {
        const unsigned char *r = res + s * rs;
        if (optype_is_arg(o->op) && rs == 8) {   /* RT_RESULT_INDEX */
            long long index;
            memcpy(&index, r, 8);
            printf("%lld\n", index);
        } else if (optype_is_arg(o->op)) {
            long long index;
            format_value(ts.elem, r, v, sizeof v);
            memcpy(&index, r + 8, 8);
            printf("%s %lld\n", v, index);
        } else if (rs == 2 * optype_size(ts.res) && o->op < RT_OP_COUNT
                   && optype_is_struct(o->op) && o->op != RT_MEAN) {
            format_value(ts.res, r, v, sizeof v);
            format_value(ts.res, r + optype_size(ts.res), w, sizeof w);
            printf("%s %s\n", v, w);
        } else {
            format_value(ts.res, r, v, sizeof v);
            printf("%s\n", v);
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        return rt_seterr(e, RT_EIO, "reduce: writing the results to stdout failed");
    return RT_OK;
}

/* -o FILE: not a directory, in a directory that exists; not there yet unless --force. */
static int check_output(const char *path, int force, rt_err *e)
{
    struct stat st;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!*path || (slash && !slash[1]))
        return rt_seterr(e, RT_EIO, "-o %s: not a file name", path);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return rt_seterr(e, RT_EIO, "-o %s: is a directory", path);
    if (!force && lstat(path, &st) == 0)
        return rt_seterr(e, RT_EIO, "-o %s: exists (--force overwrites it)", path);
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (stat(dir, &st) != 0)
        return rt_seterr(e, RT_EIO, "-o %s: %s: %s", path, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return rt_seterr(e, RT_EIO, "-o %s: %s is not a directory", path, dir);
    return RT_OK;
}

static int cu_check(CUresult r, const char *what, rt_err *e)
{
    return r == CUDA_SUCCESS ? RT_OK : driver_fail(r, what, e);
}

/* Device buffers of the run. */
typedef struct dev_bufs {
    CUdeviceptr in, seg, out;
    CUcontext cuctx;
    CUdevice cudev;
    int retained;
} dev_bufs;

static void dev_free(dev_bufs *d)
{
    if (d->in)
        cu.MemFree(d->in);
    if (d->seg)
        cu.MemFree(d->seg);
    if (d->out)
        cu.MemFree(d->out);
    if (d->retained)
        cu.DevicePrimaryCtxRelease(d->cudev);
}

/* Copy the data to the GPU, reduce with the library, copy the results back. */
static int gpu_reduce(rt_ctx *ctx, const reduce_opts *o, const void *vals, unsigned long long n,
                      const void *seg, size_t seg_bytes, unsigned long long nseg,
                      unsigned seg_fl, unsigned char *res, size_t res_bytes, rt_err *e)
{
    dev_bufs d;
    int rc;
    size_t es = optype_size(o->type);
    memset(&d, 0, sizeof d);
    /* rt_open loaded the driver and retained the device's primary context: allocate there. */
    if ((rc = driver_load(e))
        || (rc = cu_check(cu.DeviceGet(&d.cudev, o->device), "cuDeviceGet", e))
        || (rc = cu_check(cu.DevicePrimaryCtxRetain(&d.cuctx, d.cudev),
                          "cuDevicePrimaryCtxRetain", e)))
        goto done;
    d.retained = 1;
    if ((rc = cu_check(cu.CtxSetCurrent(d.cuctx), "cuCtxSetCurrent", e))
        || (rc = cu_check(cu.MemAlloc(&d.in, n * es), "cuMemAlloc (the values)", e))
        || (rc = cu_check(cu.MemcpyHtoD(d.in, vals, n * es), "cuMemcpyHtoD (the values)", e))
        || (rc = cu_check(cu.MemAlloc(&d.out, res_bytes > 16 ? res_bytes : 16),
                          "cuMemAlloc (the results)", e)))
        goto done;
    if (seg && ((rc = cu_check(cu.MemAlloc(&d.seg, seg_bytes), "cuMemAlloc (keys/offsets)", e))
                || (rc = cu_check(cu.MemcpyHtoD(d.seg, seg, seg_bytes),
                                  "cuMemcpyHtoD (keys/offsets)", e))))
        goto done;
    const void *pin = (const void *)(uintptr_t)d.in, *pseg = (const void *)(uintptr_t)d.seg;
    void *pout = (void *)(uintptr_t)d.out;
    /* The legacy default stream, then a synchronisation of the whole context. */
    if (o->keys)
        rc = rt_reduce_keys(ctx, o->op, o->type, pin, (const unsigned *)pseg, n, nseg, pout,
                            NULL, 0);
    else if (o->offsets)
        rc = rt_reduce_offsets(ctx, o->op, o->type, pin, n, pseg, nseg, pout, NULL, seg_fl);
    else if (o->axis)
        rc = rt_reduce_axis(ctx, o->op, o->type, pin, o->shape[0], o->shape[1], o->shape[2],
                            pout, NULL);
    else
        rc = rt_reduce(ctx, o->op, o->type, pin, n, pout, NULL);
    if (rc) {
        rc = rt_seterr(e, rc, "reduce: %s", rt_errmsg(ctx));
        goto done;
    }
    if ((rc = cu_check(cu.CtxSynchronize(), "the reduction", e)))
        goto done;
    if (res_bytes)
        rc = cu_check(cu.MemcpyDtoH(res, d.out, res_bytes), "cuMemcpyDtoH (the results)", e);
done:
    dev_free(&d);
    return rc;
}

int cmd_reduce(const reduce_opts *o, int *refused, rt_err *e)
{
    void *vals = NULL, *seg = NULL;
    unsigned char *res = NULL;
    unsigned long long n = 0, nseg = 1, count = 0;
    size_t seg_es = o->keys ? 4 : o->off64 ? 8 : 4;
    char *msg = NULL;
    rt_ctx *ctx = NULL;
    int rc, bad = 0;

    *refused = REDUCE_FAILED;
    char what[64];
    snprintf(what, sizeof what, "%s values", rt_type_name(optype_elem(o->type)));
    if ((rc = load_array(o->in, optype_size(o->type), what, &vals, &n, &bad, e)))
        goto done;
    if (o->keys) {
        if ((rc = load_array(o->keys, 4, "u32 keys", &seg, &count, &bad, e)))
            goto done;
        if (count != n) {
            bad = 1;
            rc = rt_seterr(e, RT_EINVAL, "%s: %llu keys for the %llu values of %s (one key per "
                           "value is needed)", o->keys, count, n, o->in);
            goto done;
        }
        if (o->nseg >= 0) {
            nseg = (unsigned long long)o->nseg;
        } else {   /* the largest key + 1 */
            unsigned max = 0;
            for (unsigned long long i = 0; i < n; i++)
                if (((const unsigned *)seg)[i] > max)
                    max = ((const unsigned *)seg)[i];
            nseg = (unsigned long long)max + 1;
        }
    } else if (o->offsets) {
        if ((rc = load_array(o->offsets, seg_es, o->off64 ? "i64 offsets (--off64)"
                             : "i32 offsets (--off64 for i64)", &seg, &count, &bad, e)))
            goto done;
        nseg = count - 1;
        if (o->nseg >= 0 && (unsigned long long)o->nseg != nseg) {
            bad = 1;
            rc = rt_seterr(e, RT_EINVAL, "%s: %llu offsets give nseg = %llu, not the %lld of "
                           "--nseg (nseg segments need nseg + 1 offsets)", o->offsets, count,
                           nseg, o->nseg);
            goto done;
        }
    }

    if (o->axis) {
        /* The shape must hold exactly the file's values; it names the outputs. */
        unsigned long long m, want;
        if (__builtin_mul_overflow(o->shape[0], o->shape[2], &m)
            || __builtin_mul_overflow(m, o->shape[1], &want) || want != n) {
            bad = 1;
            if (__builtin_mul_overflow(o->shape[0], o->shape[2], &m)
                || __builtin_mul_overflow(m, o->shape[1], &want))
                rc = rt_seterr(e, RT_EINVAL, "%s: %llu values, but --shape %llu,%llu,%llu "
                               "holds more than 2^64 - 1 (outer * len * inner overflows); "
                               "nothing was reduced or written", o->in, n, o->shape[0],
                               o->shape[1], o->shape[2]);
            else
                rc = rt_seterr(e, RT_EINVAL, "%s: %llu values, but --shape %llu,%llu,%llu "
                               "holds %llu (outer * len * inner); nothing was reduced or "
                               "written", o->in, n, o->shape[0], o->shape[1], o->shape[2],
                               want);
            goto done;
        }
        nseg = m;   /* the outputs */
    }

    if (o->check && seg) {
        size_t len = 8192;
        if (!(msg = malloc(len))) {
            rc = rt_seterr(e, RT_ENOMEM, "reduce: out of memory");
            goto done;
        }
        msg[0] = '\0';
        if (o->keys ? check_keys(o->keys, seg, n, nseg, msg, len)
                    : check_offsets(o->offsets, seg, o->off64, n, nseg, msg, len)) {
            bad = 1;
            rc = rt_seterr(e, RT_EINVAL, "reduce --check: the input breaks the rules of its "
                           "layout (docs/segmented.md); nothing was reduced or written:%s",
                           msg);
            goto done;
        }
    }

    /* An output that cannot be written is found before the GPU work, not after. */
    if (o->out && (rc = check_output(o->out, o->force, e)))
        goto done;

    /* The database and the GPU. */
    char why[RT_ERRMSG_MAX];
    if ((rc = rt_open_err(o->db, o->device, &ctx, why, sizeof why)) != RT_OK) {
        if (rc == RT_EDB)
            *refused = REDUCE_BAD_DB;
        rc = rt_seterr(e, rc, "%s", why);
        goto done;
    }
    /* A user operator: registered on the context, its handle then stands for it. */
    reduce_opts ou;
    if (o->user_op) {
        const rt_user_op *u = o->user_op;
        rt_op_desc d = {u->name, u->type, u->identity, u->combine, u->commutative};
        ou = *o;
        if ((rc = rt_register_op(ctx, &d, &ou.op)) != RT_OK) {
            rc = rt_seterr(e, rc, "reduce: %s: %s", u->file[0] ? u->file : u->name,
                           rt_errmsg(ctx));
            goto done;
        }
        o = &ou;
    }
    const unsigned seg_fl = seg_flags(o, seg, n, nseg);
    if (o->explain) {
        char text[4096];
        rc = seg ? rt_explain_segmented(ctx, o->keys ? RT_LAYOUT_KEYS : RT_LAYOUT_OFFSETS, o->op,
                                        o->type, n, nseg, seg_fl, text, sizeof text)
             : o->axis ? rt_explain_axis(ctx, o->op, o->type, o->shape[0], o->shape[1],
                                         o->shape[2], text, sizeof text)
                       : rt_explain(ctx, o->op, o->type, n, text, sizeof text);
        if (rc) {
            rc = rt_seterr(e, rc, "reduce --explain: %s", rt_errmsg(ctx));
            goto done;
        }
        fputs(text, stdout);
        if (text[0] && text[strlen(text) - 1] != '\n')
            fputc('\n', stdout);
        fflush(stdout);
    }
    /* What the library writes per result: the resolved result type (optype.h). */
    size_t res_bytes = (size_t)nseg * optype_res_size(o->op, o->type);
    if (!(res = malloc(res_bytes ? res_bytes : 1))) {
        rc = rt_seterr(e, RT_ENOMEM, "reduce: out of memory for %llu results", nseg);
        goto done;
    }
    if ((rc = gpu_reduce(ctx, o, vals, n, seg, (size_t)count * seg_es, nseg, seg_fl, res,
                         res_bytes, e)))
        goto done;
    rc = o->out ? store_write_file(o->out, res, res_bytes, o->force, e) : print_results(o, res, nseg, e);
done:
    if (rc && bad)
        *refused = REDUCE_BAD_DATA;
    rt_close(ctx);
    free(msg);
    free(res);
    free(vals);
    free(seg);
    return rc;
}
