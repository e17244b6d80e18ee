/*
 * seg_cases.cu - the segmented cases, their checks, CUB's segmented reductions and the
 * library's segmented calls, for --segmented and --paper-seg (seg.h says what each is).
 */
#include "seg.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/functional>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>

seg_buffers SB;

int grow(dbuf &b, size_t want, const char *what, rt_err *e)
{
    if (want < 256)
        want = 256;
    if (want <= b.bytes)
        return RT_OK;
    if (b.p)
        cu.MemFree(b.p);
    b.p = 0;
    b.bytes = 0;
    CUresult r = cu.MemAlloc(&b.p, want);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, what, e);
    b.bytes = want;
    return RT_OK;
}


int upload_off64(seg_case &c, rt_err *e)
{
    if (c.off64_ready)
        return RT_OK;
    size_t bytes = (c.d.nseg + 1) * 8;
    std::vector<long long> h(c.d.nseg + 1);
    segdata_offsets(&c.d, h.data(), 1);
    int rc = grow(SB.off64, bytes, "allocating 64-bit offsets", e);
    CUresult r;
    if (rc == RT_OK && (r = cu.MemcpyHtoD(SB.off64.p, h.data(), bytes)) != CUDA_SUCCESS)
        rc = driver_fail(r, "uploading 64-bit offsets", e);
    c.off64_ready = rc == RT_OK;
    return rc;
}

/* Outputs of redtune and of DeviceSegmentedReduce: nseg accumulators, then SEG_GUARD
 * poisoned ones that must stay poisoned. */
int poison_out(const seg_case &c, rt_err *e)
{
    CUresult r = cu.MemsetD8(SB.out.p, SEG_POISON, (c.d.nseg + SEG_GUARD) * c.acc);
    return r == CUDA_SUCCESS ? RT_OK : driver_fail(r, "poisoning the outputs", e);
}

/* Run 'part(lo, hi)' (1: segments [lo, hi) are right) over the segments on the host's
 * threads; 1 when every part is right. */
template <class F>
static int seg_parallel(unsigned long long nseg, F &&part)
{
    int T = (int)std::min<unsigned long long>((unsigned long long)G.host_threads, nseg / 65536 + 1);
    if (T <= 1)
        return part(0ULL, nseg);
    std::vector<int> ok((size_t)T, 1);
    std::vector<std::thread> pool;
    for (int k = 0; k < T; k++) {
        unsigned long long lo = nseg * k / T, hi = nseg * (k + 1) / T;
        pool.emplace_back([&part, &ok, k, lo, hi] { ok[(size_t)k] = part(lo, hi); });
    }
    for (std::thread &th : pool)
        th.join();
    for (int v : ok)
        if (!v)
            return 0;
    return 1;
}

/* segdata_check on every thread; on a failure once more on one thread, for its message. */
static int seg_check_all(const unsigned char *got, const seg_case &c, char *why, size_t len)
{
    int ok = seg_parallel(c.d.nseg, [&](unsigned long long lo, unsigned long long hi) {
        seg_data v = c.d;
        v.off = c.d.off + lo;
        v.nseg = hi - lo;
        return segdata_check(got + lo * c.acc, c.refs + lo, c.type, c.op, &v, NULL, 0);
    });
    return ok || segdata_check(got, c.refs, c.type, c.op, &c.d, why, len);
}

int check_direct(seg_case &c, std::string *why, int *ok, rt_err *e)
{
    size_t bytes = (c.d.nseg + SEG_GUARD) * c.acc;
    c.host_out.resize(bytes);
    CUresult r = cu.MemcpyDtoH(c.host_out.data(), SB.out.p, bytes);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "reading the outputs", e);
    *ok = 1;
    for (size_t i = c.d.nseg * c.acc; i < bytes; i++)
        if (c.host_out[i] != SEG_POISON) {
            char b[160];
            snprintf(b, sizeof b, "wrote past the last output (into guard accumulator %zu of %d "
                     "after out[nseg-1])", (i - c.d.nseg * c.acc) / c.acc, SEG_GUARD);
            *why = b;
            *ok = 0;
            return RT_OK;
        }
    char w[1024] = "";
    if (!seg_check_all(c.host_out.data(), c, w, sizeof w)) {
        *ok = 0;
        *why = w;
    }
    return RT_OK;
}

/* ReduceByKey: the runs are the non-empty segments in order; unique_out[r] is the segment's
 * key and aggregates_out[r] its reduction. */
static int poison_rbk(const seg_case &c, rt_err *e)
{
    CUresult r;
    if ((r = cu.MemsetD8(SB.aggr.p, SEG_POISON, (c.d.nseg + 1) * c.acc)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(SB.unique.p, SEG_POISON, (c.d.nseg + 1) * 4)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(SB.nruns.p, SEG_POISON, 8)) != CUDA_SUCCESS)
        return driver_fail(r, "poisoning CUB's outputs", e);
    return RT_OK;
}

static int check_rbk(seg_case &c, std::string *why, int *ok, rt_err *e)
{
    uint32_t runs = 0;
    CUresult r = cu.MemcpyDtoH(&runs, SB.nruns.p, 4);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "reading num_runs_out", e);
    *ok = 1;
    char b[1400];
    if (runs != c.nonempty) {
        snprintf(b, sizeof b, "num_runs_out is %u; the segmentation has %llu non-empty segments "
                 "(of %llu)", runs, c.nonempty, (unsigned long long)c.d.nseg);
        *why = b;
        *ok = 0;
        return RT_OK;
    }
    std::vector<uint32_t> uk(runs ? runs : 1);
    c.host_out.resize((size_t)(runs ? runs : 1) * c.acc);
    if (runs && ((r = cu.MemcpyDtoH(uk.data(), SB.unique.p, (size_t)runs * 4)) != CUDA_SUCCESS ||
                 (r = cu.MemcpyDtoH(c.host_out.data(), SB.aggr.p, (size_t)runs * c.acc)) != CUDA_SUCCESS))
        return driver_fail(r, "reading CUB's outputs", e);
    /* Segments [lo, hi) against runs from k0 on; 'why' for the first wrong one. */
    auto range = [&](unsigned long long lo, unsigned long long hi, unsigned long long k,
                     char *msg, size_t len) {
        for (unsigned long long s = lo; s < hi; s++) {
            unsigned long long a = c.d.off[s], z = c.d.off[s + 1];
            if (a == z)
                continue;
            if (uk[k] != (uint32_t)s) {
                if (msg)
                    snprintf(msg, len, "run %llu: unique key %u, expected %llu (the segment of "
                             "the %llu-th non-empty run)", k, uk[k], s, k);
                return 0;
            }
            data_ref ref;
            memset(&ref, 0, sizeof ref);
            memcpy(ref.value, c.refs[s].value, sizeof ref.value);
            ref.approx = c.refs[s].approx;
            ref.tolerance = c.refs[s].tolerance;
            char inner[1024];
            if (!data_check(c.host_out.data() + k * c.acc, &ref, c.type, c.op, z - a,
                            msg ? inner : NULL, sizeof inner)) {
                if (msg)
                    snprintf(msg, len, "run %llu = segment %llu of %llu (elements %llu..%llu): %s",
                             k, s, (unsigned long long)c.d.nseg, a, z, inner);
                return 0;
            }
            k++;
        }
        return 1;
    };
    /* The first run of each part: the non-empty segments before it. */
    int good = seg_parallel(c.d.nseg, [&](unsigned long long lo, unsigned long long hi) {
        unsigned long long k0 = 0;
        for (unsigned long long s = 0; s < lo; s++)
            k0 += c.d.off[s + 1] > c.d.off[s];
        return range(lo, hi, k0, NULL, 0);
    });
    if (!good) {
        range(0, c.d.nseg, 0, b, sizeof b);
        *why = b;
        *ok = 0;
    }
    return RT_OK;
}

/* Poison, run once, check; time; check the last repetition's outputs again. */
void seg_verify_and_time(const seg_enqueue_fn &enqueue, const seg_poison_fn &poison,
                         const seg_check_fn &check, int hot, const options &o, impl_result *res)
{
    rt_err e;
    rt_clearerr(&e);
    std::string why;
    int ok = 1, rc = poison(&e);
    CUresult r;
    if (rc == RT_OK)
        rc = enqueue(&e);
    if (rc == RT_OK && (r = cu.StreamSynchronize(G.stream)) != CUDA_SUCCESS)
        rc = driver_fail(r, "running the reduction", &e);
    if (rc == RT_OK)
        rc = check(&why, &ok, &e);
    if (rc == RT_OK && !ok) {
        res->status = ST_WRONG;
        res->msg = why;
        return;
    }
    if (rc == RT_OK) {
        int minr, maxr;
        double budget;
        reps_of(o, &minr, &maxr, &budget);
        rc = time_reps(enqueue, hot, minr, maxr, budget, &res->t, &e);
    }
    if (rc == RT_OK && (rc = check(&why, &ok, &e)) == RT_OK && !ok) {
        res->status = ST_WRONG;
        res->msg = "after the timed repetitions: " + why;
        return;
    }
    if (rc != RT_OK) {
        if (rc == RT_EFAULT)   /* the context is lost: nothing after this can run */
            die("%s: %s", g_where, e.msg);
        res->status = ST_ERROR;
        res->msg = e.msg;
        return;
    }
    res->status = ST_OK;
}

/* ---- CUB's segmented reductions ---- */

template <typename T, typename Op>
static cudaError_t cub_rbk_t(void *temp, size_t &bytes, const seg_case &c, Op op, cudaStream_t s)
{
    return cub::DeviceReduce::ReduceByKey(temp, bytes, dptr<const uint32_t>(SB.keys.p),
                                          dptr<uint32_t>(SB.unique.p), dptr<const T>(SB.in.p),
                                          dptr<T>(SB.aggr.p), dptr<uint32_t>(SB.nruns.p), op,
                                          (uint32_t)c.d.n, s);
}

template <typename T>
static cudaError_t cub_rbk_op(void *temp, size_t &bytes, const seg_case &c, cudaStream_t s)
{
    switch (c.op) {
    case RT_MIN: return cub_rbk_t<T>(temp, bytes, c, cuda::minimum<>{}, s);
    case RT_MAX: return cub_rbk_t<T>(temp, bytes, c, cuda::maximum<>{}, s);
    case RT_SUM: return cub_rbk_t<T>(temp, bytes, c, cuda::std::plus<>{}, s);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T>
static cudaError_t cub_segred_op(void *temp, size_t &bytes, const seg_case &c, cudaStream_t s)
{
    const T *in = dptr<const T>(SB.in.p);
    T *out = dptr<T>(SB.out.p);
    const int32_t *off = dptr<const int32_t>(SB.off32.p);
    ::cuda::std::int64_t ns = (::cuda::std::int64_t)c.d.nseg;
    T id;
    data_identity(c.type, c.op, &id);
    switch (c.op) {
    case RT_MIN:
        return cub::DeviceSegmentedReduce::Reduce(temp, bytes, in, out, ns, off, off + 1,
                                                  cuda::minimum<>{}, id, s);
    case RT_MAX:
        return cub::DeviceSegmentedReduce::Reduce(temp, bytes, in, out, ns, off, off + 1,
                                                  cuda::maximum<>{}, id, s);
    case RT_SUM:
        return cub::DeviceSegmentedReduce::Sum(temp, bytes, in, out, ns, off, off + 1, s);
    default: return cudaErrorInvalidValue;
    }
}

static cudaError_t cub_seg(const seg_case &c, void *temp, size_t &bytes, cudaStream_t s)
{
    bool keys = c.layout == SEG_LAYOUT_KEYS;
    switch (c.type) {
    case RT_F32: return keys ? cub_rbk_op<float>(temp, bytes, c, s) : cub_segred_op<float>(temp, bytes, c, s);
    case RT_F64: return keys ? cub_rbk_op<double>(temp, bytes, c, s) : cub_segred_op<double>(temp, bytes, c, s);
    case RT_I32: return keys ? cub_rbk_op<int32_t>(temp, bytes, c, s) : cub_segred_op<int32_t>(temp, bytes, c, s);
    case RT_U32: return keys ? cub_rbk_op<uint32_t>(temp, bytes, c, s) : cub_segred_op<uint32_t>(temp, bytes, c, s);
    case RT_I64: return keys ? cub_rbk_op<int64_t>(temp, bytes, c, s) : cub_segred_op<int64_t>(temp, bytes, c, s);
    case RT_U64: return keys ? cub_rbk_op<uint64_t>(temp, bytes, c, s) : cub_segred_op<uint64_t>(temp, bytes, c, s);
    default: return cudaErrorInvalidValue;
    }
}

const char *cub_seg_name(int layout)
{
    return layout == SEG_LAYOUT_KEYS ? "cub::DeviceReduce::ReduceByKey"
                                     : "cub::DeviceSegmentedReduce";
}

void run_cub_seg(seg_case &c, int hot, const options &o, impl_result *res, size_t *temp_bytes)
{
    cudaStream_t s = (cudaStream_t)G.stream;
    rt_err e;
    rt_clearerr(&e);
    size_t bytes = 0;
    cudaError_t cr = cub_seg(c, NULL, bytes, s);
    if (cr != cudaSuccess) {
        rt_fail(cr, (std::string(cub_seg_name(c.layout)) + " (temp storage size)").c_str(), &e);
        res->status = ST_ERROR;
        res->msg = e.msg;
        return;
    }
    *temp_bytes = bytes;
    if (grow(SB.cub_temp, bytes, "allocating CUB's temporary storage", &e)) {
        res->status = ST_ERROR;
        res->msg = e.msg;
        return;
    }
    void *tp = dptr<void>(SB.cub_temp.p);
    const char *name = cub_seg_name(c.layout);
    auto enqueue = [&](rt_err *err) {
        size_t b = bytes;
        cudaError_t lr = cub_seg(c, tp, b, s);
        return lr == cudaSuccess ? RT_OK : rt_fail(lr, name, err);
    };
    if (c.layout == SEG_LAYOUT_KEYS) {
        auto poison = [&](rt_err *err) { return poison_rbk(c, err); };
        auto check = [&](std::string *why, int *ok, rt_err *err) { return check_rbk(c, why, ok, err); };
        seg_verify_and_time(enqueue, poison, check, hot, o, res);
    } else {
        auto poison = [&](rt_err *err) { return poison_out(c, err); };
        auto check = [&](std::string *why, int *ok, rt_err *err) { return check_direct(c, why, ok, err); };
        seg_verify_and_time(enqueue, poison, check, hot, o, res);
    }
}

/* ---- the cases: segmentation, values, references, buffers ---- */

/* Device bytes one case needs: values, keys or offsets (both widths), outputs with guards,
 * CUB's unique keys and aggregates. */
static double seg_case_device_bytes(const seg_data &d, size_t esize, size_t acc)
{
    return (double)d.n * esize + (double)d.n * 4 + (double)(d.nseg + 1) * 12 +
           (double)(d.nseg + SEG_GUARD) * acc * 2 + (double)(d.nseg + 1) * 4;
}

/* Walk the cases: for each n and profile the segmentation (uploaded as keys and as 32-bit
 * offsets), for each op and type the values and references; 'fn(c, skip_why)' runs the
 * implementations (skip_why non-empty: the case does not fit on this GPU). */
void seg_walk(const options &o, const std::vector<int> &layouts,
              const std::function<void(seg_case &, const std::string &)> &fn)
{
    rt_err e;
    rt_clearerr(&e);
    CUresult r;
    size_t max_esize = 0;
    for (rt_type t : o.types)
        max_esize = std::max(max_esize, optype_size(t));
    long long max_n = 0;
    for (long long n : o.sizes)
        max_n = std::max(max_n, n);
    std::vector<unsigned char> host((size_t)max_n * max_esize);
    std::vector<uint32_t> hseg;
    for (long long n : o.sizes)
        for (int profile : o.profiles) {
            seg_case c;
            c.profile = profile;
            watch(900, "making the segmentation %s n = %s", segdata_profile_name(profile),
                  fmt_seg_n(n).c_str());
            if (segdata_make(profile, (unsigned long long)n, seg_seed(o, n, profile), &c.d))
                die("out of host memory for the segmentation %s of %lld elements",
                    segdata_profile_name(profile), n);
            alarm(0);
            c.nonempty = 0;
            for (unsigned long long s = 0; s < c.d.nseg; s++)
                c.nonempty += c.d.off[s + 1] > c.d.off[s];
            double need = seg_case_device_bytes(c.d, max_esize, max_esize);
            if (need > 0.45 * (double)G.dev.total_mem) {
                char why[160];
                snprintf(why, sizeof why, "%.1f GiB of values, segment descriptors and outputs "
                         "do not fit beside the buffers on this GPU", need / 1073741824.0);
                for (rt_op op : o.ops)
                    for (rt_type type : o.types) {
                        c.op = op;
                        c.type = type;
                        fn(c, std::string(why));
                    }
                segdata_free(&c.d);
                continue;
            }
            fprintf(stderr, "%s: n = %s, %s: %llu segments (mean length %.1f)\n", PROG,
                    fmt_seg_n(n).c_str(), segdata_profile_name(profile),
                    (unsigned long long)c.d.nseg, c.d.mean);
            /* The descriptors of both layouts wanted. */
            for (int layout : layouts) {
                size_t cnt = layout == SEG_LAYOUT_KEYS ? (size_t)n : (size_t)c.d.nseg + 1;
                hseg.resize(cnt ? cnt : 1);
                dbuf &dst = layout == SEG_LAYOUT_KEYS ? SB.keys : SB.off32;
                if (layout == SEG_LAYOUT_KEYS)
                    segdata_keys(&c.d, hseg.data());
                else
                    segdata_offsets(&c.d, hseg.data(), 0);
                if (grow(dst, cnt * 4, "allocating the segment descriptors", &e))
                    die("%s", e.msg);
                if ((r = cu.MemcpyHtoD(dst.p, hseg.data(), cnt * 4)) != CUDA_SUCCESS) {
                    driver_fail(r, "uploading the segment descriptors", &e);
                    die("%s", e.msg);
                }
            }
            c.off64_ready = false;
            for (rt_op op : o.ops)
                for (rt_type type : o.types) {
                    c.op = op;
                    c.type = type;
                    c.esize = optype_size(type);
                    c.acc = optype_acc_size(op, type);
                    watch(900, "preparing %s %s n = %s %s", rt_op_name(op), rt_type_name(type),
                          fmt_seg_n(n).c_str(), segdata_profile_name(profile));
                    uint64_t seed = value_seed(o, n, op, type);
                    data_fill(host.data(), type, op, (unsigned long long)n, seed,
                              seed % (uint64_t)n, G.host_threads);
                    if (!o.keep_nan && (op == RT_MIN || op == RT_MAX))
                        scrub_nan(host.data(), type, (unsigned long long)n, G.host_threads);
                    if (segdata_reference(host.data(), type, op, &c.d, &c.refs, G.host_threads))
                        die("out of host memory for %llu segment references",
                            (unsigned long long)c.d.nseg);
                    if (grow(SB.in, (size_t)n * c.esize, "allocating the input", &e) ||
                        grow(SB.out, (c.d.nseg + SEG_GUARD) * c.acc, "allocating the outputs", &e) ||
                        grow(SB.aggr, (c.d.nseg + 1) * c.acc, "allocating CUB's aggregates", &e) ||
                        grow(SB.unique, (c.d.nseg + 1) * 4, "allocating CUB's unique keys", &e) ||
                        grow(SB.nruns, 8, "allocating CUB's run count", &e))
                        die("%s", e.msg);
                    if ((r = cu.MemcpyHtoD(SB.in.p, host.data(), (size_t)n * c.esize)) != CUDA_SUCCESS) {
                        driver_fail(r, "copying the input", &e);
                        die("%s", e.msg);
                    }
                    alarm(0);
                    fn(c, std::string());
                    free(c.refs);
                    c.refs = NULL;
                }
            segdata_free(&c.d);
        }
}


/* ---- the library: rt_reduce_keys / rt_reduce_offsets ---- */

/* What the library picks for the case (rt_explain_segmented), with 'flags'. */
static int seg_explain(rt_ctx *ctx, const seg_case &c, int layout, unsigned flags,
                       lib_pick *k, std::string *err)
{
    char text[4096];
    int rl = layout == SEG_LAYOUT_KEYS ? RT_LAYOUT_KEYS : RT_LAYOUT_OFFSETS;
    if (rt_explain_segmented(ctx, rl, c.op, c.type, c.d.n, c.d.nseg, flags, text,
                             sizeof text) != RT_OK) {
        *err = std::string("rt_explain_segmented: ") + rt_errmsg(ctx);
        return -1;
    }
    k->have = true;
    k->text = text;
    bench_pick_parse_seg(text, &k->p);
    return 0;
}

/*
 * The library's segmented call on the case, verified and timed. Offsets are 32-bit (the
 * input CUB gets and the limit counts) unless the library's entry was tuned for 64-bit
 * ones: the library would re-specialise it for 32-bit offsets, a kernel the tuner never
 * timed, so the bench passes 64-bit offsets then, as the old bench launched the winner.
 * The library's temporary storage for the stream is allocated by the verifying call.
 */
void run_seg_lib(rt_ctx *ctx, seg_case &c, int layout, int hot, const options &o,
                 seg_redtune *out)
{
    std::string err;
    const unsigned skew = o.skewed ? RT_SEG_SKEWED : o.uniform ? RT_SEG_UNIFORM : 0;
    if (seg_explain(ctx, c, layout, skew, &out->pick, &err)) {
        out->res.status = ST_ERROR;
        out->res.msg = err;
        return;
    }
    if (layout == SEG_LAYOUT_OFFSETS && out->pick.p.parsed && out->pick.p.respecialised) {
        lib_pick wide;
        if (!seg_explain(ctx, c, layout, RT_SEG_OFF64 | skew, &wide, &err) && wide.p.parsed &&
            !wide.p.respecialised) {
            out->pick = wide;
            out->off64 = 1;
        }
    }
    char lk[256];
    bench_pick_lookup(&out->pick.p, (long long)c.d.n, lk, sizeof lk);
    out->pick.lookup = std::string(hot && out->pick.p.tuned_n > 0 ? "cold-tuned " : "") + lk;
    if (out->pick.p.flat) {
        out->pick.lookup += ", one segment: flat";
    } else if (out->pick.p.tuned_n > 0) {
        char b[64];
        snprintf(b, sizeof b, ", mean %.1f", out->pick.p.tuned_mean);
        out->pick.lookup += b;
    }
    rt_err e;
    rt_clearerr(&e);
    if (out->off64 && upload_off64(c, &e)) {
        out->res.status = ST_ERROR;
        out->res.msg = e.msg;
        return;
    }
    const void *d_in = dptr<const void>(SB.in.p);
    void *d_out = dptr<void>(SB.out.p);
    const unsigned *keys = dptr<const unsigned>(SB.keys.p);
    const void *offs = dptr<const void>(out->off64 ? SB.off64.p : SB.off32.p);
    unsigned flags = (out->off64 ? RT_SEG_OFF64 : 0) | skew;
    unsigned long long n = c.d.n, nseg = c.d.nseg;
    auto enqueue = [&](rt_err *err2) {
        int rc = layout == SEG_LAYOUT_KEYS
                     ? rt_reduce_keys(ctx, c.op, c.type, d_in, keys, n, nseg, d_out, G.stream, flags)
                     : rt_reduce_offsets(ctx, c.op, c.type, d_in, n, offs, nseg, d_out, G.stream,
                                         flags);
        return rc == RT_OK ? RT_OK
                           : rt_seterr(err2, rc, "%s: %s", layout == SEG_LAYOUT_KEYS ?
                                       "rt_reduce_keys" : "rt_reduce_offsets", rt_errmsg(ctx));
    };
    auto poison = [&](rt_err *err2) { return poison_out(c, err2); };
    auto check = [&](std::string *why, int *ok, rt_err *err2) { return check_direct(c, why, ok, err2); };
    seg_verify_and_time(enqueue, poison, check, hot, o, &out->res);
}
