/*
 * axis.cu - redtune_bench --axis (docs/bench.md, "Along an axis"): issue 16's shapes, a
 * contiguous tensor viewed as [outer, len, inner] reduced along len, side by side in one
 * process, each
 *   redtune  rt_reduce_axis (the library's pick for the shape, rt_explain_axis's answer), on
 *            the bench's stream, with the library's own temporary storage;
 *   CUB      cub::DeviceSegmentedReduce with the rows as segments (inner == 1 only: begin
 *            offsets o * len and end offsets (o + 1) * len from a counting iterator, so that
 *            no offset array is read): Reduce with + (bf16/f16 summed in f32, as redtune's
 *            default accumulator) or min/max and redtune's identity as the initial value,
 *            ArgMax for argmax of f32; columns and the 3-D middle axis have no CUB call
 *            ("n/a": a segmented reduction reads segments of consecutive elements);
 *   limit    (bytes in + bytes out) / the read bandwidth measured at the start (common.cu's
 *            yardstick);
 *   flat     the same input reduced as one flat array of outer * len * inner elements by
 *            rt_reduce (the library's pick for that n, rt_explain's answer) with the axis
 *            call's op and type spec: one launch over the same bytes, what a kernel can
 *            reach here once the fixed cost of a launch (about 5 us cold on an H100 for 16-64
 *            MiB: the launch, the DRAM ramp, the tail) is paid, which the limit leaves out;
 *   ceiling  the same input bytes read once by the read yardstick's fastest shape (rt_bw_read:
 *            reads, reduces nothing, finishes nothing; bench_read_ceiling_us), in the same
 *            regime: what no reduction of the shape can beat on this GPU, the fixed cost of a
 *            launch included (the twelfth session's ceilings per size, docs/results.md).
 * redtune and CUB are verified output by output against a CPU reference (in double, exact
 * for min, max and argmax) on poisoned outputs before they are timed, and again after; flat
 * against tuner/data.c's reference of the whole array (data_check: exact for min, max and
 * argmax, sums within the rounding bound of a tree over n terms), as the default mode checks
 * rt_reduce. The timing of all three is the worker's (tuner/measure.c): cold by default (the
 * L2 flushed by a read of 2 x L2 before each repetition, which also keeps the stream busy),
 * median of at least 20 repetitions.
 */
#include "common.h"
#include "axis_data.h"

#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

namespace {

using axis_data::axis_ref;
using axis_data::check_all;
using axis_data::compute_reference;
using axis_data::fill;
using axis_data::out_layout;

/* ---- the cases ---- */

/* Issue 16, "Performance": rows (dim 1 of [O x L]), the same matrices' columns (dim 0 of
 * [L x I]), and the middle axis of [64 x 2048 x 512]. */
const axis_shape DEFAULT_SHAPES[] = {
    {1ULL << 20, 16, 1}, {65536, 128, 1}, {4096, 4096, 1}, {16, 1ULL << 22, 1}, {32768, 1024, 1},
    {1, 1ULL << 20, 16}, {1, 65536, 128}, {1, 4096, 4096}, {1, 16, 1ULL << 22}, {1, 32768, 1024},
    {64, 2048, 512},
};

std::string dim_text(unsigned long long v)
{
    return fmt_n((long long)v);
}

/* "[2^20 x 16] rows", "[65536 x 128] columns", "[64 x 2048 x 512] dim 1". */
std::string shape_label(const axis_shape &s)
{
    if (s.inner == 1)
        return "[" + dim_text(s.outer) + " x " + dim_text(s.len) + "] rows";
    if (s.outer == 1)
        return "[" + dim_text(s.len) + " x " + dim_text(s.inner) + "] columns";
    return "[" + dim_text(s.outer) + " x " + dim_text(s.len) + " x " + dim_text(s.inner) +
           "] dim 1";
}

/* ---- CUB ---- */

struct row_begin {
    int len;
    __host__ __device__ int operator()(int o) const { return o * len; }
};

template <class T> struct acc_of { typedef T type; };
template <> struct acc_of<__nv_bfloat16> { typedef float type; };
template <> struct acc_of<__half> { typedef float type; };

struct plus_acc {
    __host__ __device__ float operator()(float a, __nv_bfloat16 b) const { return a + __bfloat162float(b); }
    __host__ __device__ float operator()(float a, __half b) const { return a + __half2float(b); }
    template <class T> __host__ __device__ T operator()(T a, T b) const { return a + b; }
};
struct min_op {
    template <class T> __host__ __device__ T operator()(T a, T b) const { return b < a ? b : a; }
};
struct max_op {
    template <class T> __host__ __device__ T operator()(T a, T b) const { return a < b ? b : a; }
};

template <class T> T from_double(double v);
template <> float from_double<float>(double v) { return (float)v; }
template <> double from_double<double>(double v) { return v; }
template <> int32_t from_double<int32_t>(double v) { return (int32_t)v; }
template <> __nv_bfloat16 from_double<__nv_bfloat16>(double v) { return __float2bfloat16((float)v); }
template <> __half from_double<__half>(double v) { return __float2half((float)v); }

typedef thrust::transform_iterator<row_begin, thrust::counting_iterator<int>> off_it;

template <class T>
cudaError_t cub_typed(rt_op op, void *temp, size_t &bytes, CUdeviceptr in, CUdeviceptr out,
                      const axis_shape &s, cudaStream_t st)
{
    const T *d_in = reinterpret_cast<const T *>(static_cast<uintptr_t>(in));
    off_it begin(thrust::counting_iterator<int>(0), row_begin{(int)s.len});
    off_it end = begin + 1;
    int64_t nseg = (int64_t)s.outer;
    typedef typename acc_of<T>::type A;
    switch (op) {
    case RT_SUM:
        return cub::DeviceSegmentedReduce::Reduce(
            temp, bytes, d_in, reinterpret_cast<A *>(static_cast<uintptr_t>(out)), nseg, begin,
            end, plus_acc{}, (A)0, st);
    case RT_MIN:
        return cub::DeviceSegmentedReduce::Reduce(
            temp, bytes, d_in, reinterpret_cast<T *>(static_cast<uintptr_t>(out)), nseg, begin,
            end, min_op{}, from_double<T>(std::is_integral<T>::value ? 2147483647.0 : INFINITY), st);
    case RT_MAX:
        return cub::DeviceSegmentedReduce::Reduce(
            temp, bytes, d_in, reinterpret_cast<T *>(static_cast<uintptr_t>(out)), nseg, begin,
            end, max_op{}, from_double<T>(std::is_integral<T>::value ? -2147483648.0 : -INFINITY), st);
    default:
        return cudaErrorInvalidValue;
    }
}

cudaError_t cub_argmax_f32(void *temp, size_t &bytes, CUdeviceptr in, CUdeviceptr out,
                           const axis_shape &s, cudaStream_t st)
{
    off_it begin(thrust::counting_iterator<int>(0), row_begin{(int)s.len});
    return cub::DeviceSegmentedReduce::ArgMax(
        temp, bytes, reinterpret_cast<const float *>(static_cast<uintptr_t>(in)),
        reinterpret_cast<cub::KeyValuePair<int, float> *>(static_cast<uintptr_t>(out)),
        (int64_t)s.outer, begin, begin + 1, st);
}

/* Whether CUB has the case; else why not (the table's "n/a"). */
const char *cub_missing(rt_op op, rt_type t, const axis_shape &s)
{
    if (s.inner != 1)
        return "n/a (not rows: DeviceSegmentedReduce reads segments of consecutive elements)";
    if (s.outer * s.len >= (1ULL << 31))
        return "n/a (32-bit offsets)";
    if (op == RT_ARGMAX && t != RT_F32)
        return "n/a (argmax: f32 only here)";
    return NULL;
}

cudaError_t cub_call(rt_op op, rt_type t, void *temp, size_t &bytes, CUdeviceptr in,
                     CUdeviceptr out, const axis_shape &s, cudaStream_t st)
{
    if (op == RT_ARGMAX)
        return cub_argmax_f32(temp, bytes, in, out, s, st);
    switch (t) {
    case RT_F32: return cub_typed<float>(op, temp, bytes, in, out, s, st);
    case RT_F64: return cub_typed<double>(op, temp, bytes, in, out, s, st);
    case RT_I32: return cub_typed<int32_t>(op, temp, bytes, in, out, s, st);
    case RT_BF16: return cub_typed<__nv_bfloat16>(op, temp, bytes, in, out, s, st);
    case RT_F16: return cub_typed<__half>(op, temp, bytes, in, out, s, st);
    default: return cudaErrorInvalidValue;
    }
}

const char *cub_call_name(rt_op op, rt_type t)
{
    if (op == RT_ARGMAX)
        return "DeviceSegmentedReduce::ArgMax (KeyValuePair<int, float>)";
    if (op == RT_SUM)
        return optype_is_half(t) ? "DeviceSegmentedReduce::Reduce(+ in f32, 0)"
                                 : "DeviceSegmentedReduce::Reduce(+, 0)";
    return op == RT_MIN ? "DeviceSegmentedReduce::Reduce(min, +inf)"
                        : "DeviceSegmentedReduce::Reduce(max, -inf)";
}

/* ---- one case ---- */

struct arow {
    axis_shape s;
    rt_op op = RT_SUM;
    rt_type type = RT_F32;
    int hot = 0;
    std::string label;           /* "[2^20 x 16] rows" */
    double bytes_in = 0, bytes_out = 0, limit_us = 0;
    out_layout rt_out;
    std::string explain, explain_err, pick, tuned;
    impl_result rt;
    double ceiling_us = -1;      /* bench_read_ceiling_us of bytes_in; -1: not measured */
    lib_pick flat_pick;          /* rt_explain for n = outer * len * inner */
    std::string flat_explain_err;
    impl_result flat;            /* rt_reduce over the whole input */
    const char *cub_na = NULL;   /* non-NULL: no CUB call, and why */
    size_t cub_temp = 0;
    impl_result cub;
};

/* The output buffers: redtune's and CUB's, each outputs x 16 bytes, poisoned before a run. */
CUdeviceptr g_out = 0;
size_t g_out_bytes = 0;

/* Poison, run once, read back every output. */
template <class F>
int run_once(F &&enqueue, std::vector<unsigned char> &host, size_t bytes, rt_err *e)
{
    CUresult r;
    if ((r = cu.MemsetD8(g_out, 0xa5, g_out_bytes)) != CUDA_SUCCESS)
        return driver_fail(r, "poisoning the outputs", e);
    int rc = enqueue(e);
    if (rc)
        return rc;
    if ((r = cu.StreamSynchronize(G.stream)) != CUDA_SUCCESS)
        return driver_fail(r, "running the reduction", e);
    host.resize(bytes);
    if ((r = cu.MemcpyDtoH(host.data(), g_out, bytes)) != CUDA_SUCCESS)
        return driver_fail(r, "reading the outputs", e);
    return RT_OK;
}

/* Verify the 'bytes' of output that 'enqueue' writes with check(got, &why), time it in
 * regime 'hot', then check the output of the last repetition again. */
template <class F, class C>
void verify_and_time_with(F &&enqueue, size_t bytes, C &&check, int hot, const options &o,
                          impl_result *out)
{
    rt_err e;
    rt_clearerr(&e);
    std::vector<unsigned char> host;
    std::string why;
    int rc = run_once(enqueue, host, bytes, &e);
    if (rc == RT_OK && !check(host.data(), &why)) {
        out->status = ST_WRONG;
        out->msg = why;
        return;
    }
    if (rc == RT_OK) {   /* at least 20 repetitions, as bench/torch_axis.py */
        int minr = o.reps ? o.reps : 20, maxr = o.reps ? o.reps : 200;
        rc = time_reps(enqueue, hot, minr, maxr, o.reps ? 0 : 0.25, &out->t, &e);
    }
    if (rc == RT_OK) {
        CUresult r = cu.MemcpyDtoH(host.data(), g_out, bytes);
        if (r != CUDA_SUCCESS)
            rc = driver_fail(r, "reading the outputs", &e);
        else if (!check(host.data(), &why)) {
            out->status = ST_WRONG;
            out->msg = "after the timed repetitions: " + why;
            return;
        }
    }
    if (rc != RT_OK) {
        if (rc == RT_EFAULT)
            die("%s: %s", g_where, e.msg);
        out->status = ST_ERROR;
        out->msg = e.msg;
        return;
    }
    out->status = ST_OK;
}

/* An axis result: every output against the per-output reference. */
template <class F>
void verify_and_time(F &&enqueue, const arow &w, const out_layout &L, const axis_ref &ref,
                     const options &o, impl_result *out)
{
    auto check = [&](const unsigned char *got, std::string *why) {
        return check_all(got, L, w.op, ref, w.s, why);
    };
    verify_and_time_with(enqueue, (size_t)(w.s.outer * w.s.inner) * L.stride, check, w.hot, o,
                         out);
}

/* The pick, from rt_explain_axis's text (runtime/api_axis.c): "kernel: FAMILY PARAMS (axis
 * plan, hash H)" read as rt_explain's kernel line; the tuned shape from the database entry's
 * line (bench_pick_axis_tuned: "axis:OxLxI" of a winner, "built-in default" when the entry is
 * "none", also where a winner that cannot be made here gives way to it); the first line of
 * the text when the kernel line does not read. */
void read_pick(arow &w)
{
    bench_pick p;
    char tuned[128];
    bench_pick_parse(w.explain.c_str(), &p);   /* -1 at the entry line; the kernel is read */
    if (p.family[0])
        w.pick = std::string(p.family) + " " + p.params;
    else
        w.pick = w.explain.substr(0, w.explain.find('\n'));
    if (bench_pick_axis_tuned(w.explain.c_str(), tuned, sizeof tuned) == 0)
        w.tuned = tuned;
}

void run_redtune(rt_ctx *ctx, arow &w, CUdeviceptr in, const axis_ref &ref, const options &o)
{
    char text[4096];
    /* argmax: the index alone (RT_RESULT_INDEX), what torch.argmax(x, dim) gives */
    const rt_type spec = w.op == RT_ARGMAX ? RT_RESULT_INDEX(w.type) : w.type;
    if (rt_explain_axis(ctx, w.op, spec, w.s.outer, w.s.len, w.s.inner, text, sizeof text) ==
        RT_OK) {
        w.explain = text;
        read_pick(w);
    } else {
        w.explain_err = rt_errmsg(ctx);
    }
    const void *d_in = reinterpret_cast<const void *>(static_cast<uintptr_t>(in));
    void *d_out = reinterpret_cast<void *>(static_cast<uintptr_t>(g_out));
    auto enqueue = [&](rt_err *err) {
        int rc = rt_reduce_axis(ctx, w.op, spec, d_in, w.s.outer, w.s.len, w.s.inner, d_out,
                                G.stream);
        return rc == RT_OK ? RT_OK : rt_seterr(err, rc, "rt_reduce_axis: %s", rt_errmsg(ctx));
    };
    verify_and_time(enqueue, w, w.rt_out, ref, o, &w.rt);
}

/* The same input as one flat array: rt_reduce over n = outer * len * inner with the axis
 * call's op and type spec (so bf16/f16 sums accumulate and give what rt_reduce_axis gives),
 * on the bench's stream with the library's temporary storage, verified against 'ref' (the
 * whole array's, tuner/data.c) and timed as run_redtune. */
void run_flat(rt_ctx *ctx, arow &w, CUdeviceptr in, const data_ref &ref, const options &o)
{
    unsigned long long n = w.s.outer * w.s.len * w.s.inner;
    char text[4096];
    if (rt_explain(ctx, w.op, w.type, n, text, sizeof text) == RT_OK) {
        w.flat_pick.have = true;
        w.flat_pick.text = text;
        bench_pick_parse(text, &w.flat_pick.p);
        char lk[256];
        bench_pick_lookup(&w.flat_pick.p, (long long)n, lk, sizeof lk);
        /* The library chooses among cold-tuned winners only (the tuner's default regime). */
        bool cold_tuned = w.hot && w.flat_pick.p.tuned_n > 0;
        w.flat_pick.lookup = std::string(cold_tuned ? "cold-tuned " : "") + lk;
    } else {
        w.flat_explain_err = rt_errmsg(ctx);
    }
    const void *d_in = reinterpret_cast<const void *>(static_cast<uintptr_t>(in));
    void *d_out = reinterpret_cast<void *>(static_cast<uintptr_t>(g_out));
    auto enqueue = [&](rt_err *err) {
        int rc = rt_reduce(ctx, w.op, w.type, d_in, n, d_out, G.stream);
        return rc == RT_OK ? RT_OK : rt_seterr(err, rc, "rt_reduce: %s", rt_errmsg(ctx));
    };
    auto check = [&](const unsigned char *got, std::string *why) {
        char b[1024] = "";
        if (data_check(got, &ref, w.type, w.op, n, b, sizeof b))
            return true;
        *why = std::string("the whole array: ") + b;
        return false;
    };
    verify_and_time_with(enqueue, optype_res_size(w.op, w.type), check, w.hot, o, &w.flat);
}

void run_cub(arow &w, CUdeviceptr in, const axis_ref &ref, const options &o)
{
    if (w.cub_na)
        return;
    cudaStream_t st = (cudaStream_t)G.stream;
    rt_err e;
    rt_clearerr(&e);
    size_t bytes = 0;
    cudaError_t cr = cub_call(w.op, w.type, NULL, bytes, in, g_out, w.s, st);
    CUdeviceptr temp = 0;
    CUresult r = CUDA_SUCCESS;
    if (cr != cudaSuccess)
        rt_fail(cr, "cub::DeviceSegmentedReduce (temp storage size)", &e);
    else if ((r = cu.MemAlloc(&temp, bytes ? bytes : 16)) != CUDA_SUCCESS)
        driver_fail(r, "allocating CUB's temporary storage", &e);
    if (cr != cudaSuccess || r != CUDA_SUCCESS) {
        w.cub.status = ST_ERROR;
        w.cub.msg = e.msg;
        return;
    }
    w.cub_temp = bytes;
    void *tp = reinterpret_cast<void *>(static_cast<uintptr_t>(temp));
    auto enqueue = [&](rt_err *err) {
        size_t b = bytes;
        cudaError_t lr = cub_call(w.op, w.type, tp, b, in, g_out, w.s, st);
        return lr == cudaSuccess ? RT_OK : rt_fail(lr, "cub::DeviceSegmentedReduce", err);
    };
    out_layout L;
    if (w.op == RT_ARGMAX) {   /* KeyValuePair<int, float>: key, then value */
        L.stride = 8, L.idx_off = 0, L.idx_bytes = 4, L.val_off = 4, L.res = RT_F32;
    } else {
        L.res = w.op == RT_SUM && optype_is_half(w.type) ? RT_F32 : w.type;
        L.stride = optype_size(L.res);
    }
    verify_and_time(enqueue, w, L, ref, o, &w.cub);
    cu.MemFree(temp);
}

/* ---- output ---- */

std::string fmt_bytes(double b)
{
    char s[32];
    if (b >= 1073741824.0)
        snprintf(s, sizeof s, "%.1f GiB", b / 1073741824.0);
    else
        snprintf(s, sizeof s, "%.0f MiB", b / 1048576.0);
    return s;
}

std::string fmt_pct(const impl_result &r, double limit_us)
{
    char s[32];
    if (r.status != ST_OK)
        return "-";
    snprintf(s, sizeof s, "%.1f%%", 100.0 * limit_us / r.t.median_us);
    return s;
}

const char CSV_HEADER[] =
    "device,arch,case,outer,len,inner,op,type,result,regime,bytes_in,bytes_out,limit_us,"
    "read_gbps,redtune_status,redtune_us,redtune_min_us,redtune_max_us,redtune_reps,"
    "redtune_frac_limit,pick,tuned_shape,cub_call,cub_status,cub_us,cub_min_us,cub_max_us,"
    "cub_reps,cub_frac_limit,cub_temp_bytes,ratio_redtune_cub,flat_status,flat_us,flat_min_us,"
    "flat_max_us,flat_reps,flat_frac_read,flat_pick,ratio_redtune_flat,message,ceiling_us,"
    "redtune_frac_ceiling\n";

void csv_row(FILE *f, const arow &w, double read_gbps)
{
    if (!f)
        return;
    std::string msg;
    if (!w.explain_err.empty())
        msg = "rt_explain_axis: " + w.explain_err;
    if (!w.rt.msg.empty())
        msg += std::string(msg.empty() ? "" : "; ") + "redtune: " + w.rt.msg;
    if (!w.cub.msg.empty())
        msg += std::string(msg.empty() ? "" : "; ") + "cub: " + w.cub.msg;
    if (!w.flat_explain_err.empty())
        msg += std::string(msg.empty() ? "" : "; ") + "rt_explain (flat): " + w.flat_explain_err;
    if (!w.flat.msg.empty())
        msg += std::string(msg.empty() ? "" : "; ") + "flat: " + w.flat.msg;
    csv_field(f, G.dev.name);
    fprintf(f, ",%s,", G.arch);
    csv_field(f, w.label);
    fprintf(f, ",%llu,%llu,%llu,%s,%s,%s,%s,%.0f,%.0f,%.4f,%.2f,%s,", w.s.outer, w.s.len,
            w.s.inner, rt_op_name(w.op), rt_type_name(w.type), rt_type_name(w.rt_out.res),
            regime_name(w.hot), w.bytes_in, w.bytes_out, w.limit_us, read_gbps,
            status_name(w.rt.status));
    if (w.rt.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,", w.rt.t.median_us, w.rt.t.min_us, w.rt.t.max_us,
                w.rt.t.reps, w.limit_us / w.rt.t.median_us);
    else
        fprintf(f, ",,,,,");
    csv_field(f, w.pick);
    fputc(',', f);
    csv_field(f, w.tuned);
    fputc(',', f);
    csv_field(f, w.cub_na ? w.cub_na : cub_call_name(w.op, w.type));
    fprintf(f, ",%s,", w.cub_na ? "" : status_name(w.cub.status));
    if (w.cub.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,%zu,", w.cub.t.median_us, w.cub.t.min_us,
                w.cub.t.max_us, w.cub.t.reps, w.limit_us / w.cub.t.median_us, w.cub_temp);
    else
        fprintf(f, ",,,,,,");
    if (w.rt.status == ST_OK && w.cub.status == ST_OK)
        fprintf(f, "%.4f,", w.rt.t.median_us / w.cub.t.median_us);
    else
        fputc(',', f);
    /* flat_frac_read: the flat reduction's own limit (bytes in only: it writes one value), as
     * the default mode's redtune_frac_read */
    fprintf(f, "%s,", status_name(w.flat.status));
    if (w.flat.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,", w.flat.t.median_us, w.flat.t.min_us,
                w.flat.t.max_us, w.flat.t.reps,
                w.bytes_in / (read_gbps * 1e3) / w.flat.t.median_us);
    else
        fprintf(f, ",,,,,");
    csv_field(f, w.flat_pick.have ? pick_label(w.flat_pick) : std::string());
    fputc(',', f);
    if (w.rt.status == ST_OK && w.flat.status == ST_OK)
        fprintf(f, "%.4f,", w.rt.t.median_us / w.flat.t.median_us);
    else
        fputc(',', f);
    csv_field(f, msg);
    csv_ceiling(f, w.ceiling_us, w.rt);
    fputc('\n', f);
    fflush(f);
}

void print_table(const std::vector<arow> &rows, const options &o, double read_gbps)
{
    bool regimes = o.regimes.size() > 1;
    printf("\nreductions along an axis (issue 16); limit = (bytes in + bytes out) / %.1f GB/s "
           "(the read yardstick above); medians in microseconds; %s\n", read_gbps,
           regimes ? "cold: L2 flushed before each repetition; hot: not"
                   : o.regimes[0] ? "hot (L2 not flushed)"
                                  : "cold (L2 flushed before each repetition)");
    printf("%-28s %-6s %-5s %8s %s%10s %10s %9s %9s %7s %9s %9s %7s %9s %8s\n", "shape", "op",
           "type", "bytes", regimes ? "regime " : "", "redtune", "CUB", "limit", "flat",
           "rt/flat", "rt%limit", "CUB%limit", "rt/CUB", "ceiling", "ceil%lim");
    for (const arow &w : rows) {
        char ratio[32] = "-";
        if (w.rt.status == ST_OK && w.cub.status == ST_OK) {
            double q = w.rt.t.median_us / w.cub.t.median_us;
            snprintf(ratio, sizeof ratio, "%.2f%s", q, q > 1.0 ? "*" : " ");
        }
        char flat_ratio[32] = "-";
        if (w.rt.status == ST_OK && w.flat.status == ST_OK)
            snprintf(flat_ratio, sizeof flat_ratio, "%.2f", w.rt.t.median_us / w.flat.t.median_us);
        printf("%-28s %-6s %-5s %8s ", w.label.c_str(), rt_op_name(w.op), rt_type_name(w.type),
               fmt_bytes(w.bytes_in + w.bytes_out).c_str());
        if (regimes)
            printf("%-6s ", regime_name(w.hot));
        printf("%10s %10s %9.2f %9s %7s %9s %9s %7s %9s %8s\n", fmt_time(w.rt, true).c_str(),
               w.cub_na ? "n/a" : fmt_time(w.cub, true).c_str(), w.limit_us,
               w.flat.status == ST_ERROR ? "n/a" : fmt_time(w.flat, true).c_str(), flat_ratio,
               fmt_pct(w.rt, w.limit_us).c_str(), fmt_pct(w.cub, w.limit_us).c_str(), ratio,
               fmt_ceiling(w.ceiling_us).c_str(),
               fmt_ceiling_pct(w.ceiling_us, w.limit_us).c_str());
    }
    printf("(* redtune slower than CUB; n/a: CUB has no segmented reduction of the case; flat: "
           "the same input reduced as one array by rt_reduce, n/a where that call failed, the "
           "reason under failures; ceiling: the input read once by the read yardstick's fastest "
           "shape, nothing reduced, and ceil%%lim the limit's share of it: the most a reduction "
           "of the shape can reach, in %% of the limit, on this GPU)\n");
    printf("\nredtune's pick (rt_explain_axis) per case:\n");
    for (const arow &w : rows) {
        if (regimes && w.hot != o.regimes[0])
            continue;
        printf("  %-28s %-6s %-5s %s%s%s%s\n", w.label.c_str(), rt_op_name(w.op),
               rt_type_name(w.type),
               w.explain_err.empty() ? w.pick.c_str() : ("rt_explain_axis failed: " + w.explain_err).c_str(),
               w.tuned.empty() ? "" : " [", w.tuned.c_str(), w.tuned.empty() ? "" : "]");
        printf("  %-41s flat, n = %s: %s\n", "",
               fmt_n((long long)(w.s.outer * w.s.len * w.s.inner)).c_str(),
               w.flat_explain_err.empty() ? pick_label(w.flat_pick).c_str()
                                          : ("rt_explain failed: " + w.flat_explain_err).c_str());
    }
    int bad = 0;
    for (const arow &w : rows) {
        const impl_result *r[3] = {&w.rt, &w.cub, &w.flat};
        const char *who[3] = {"redtune", "CUB", "flat (rt_reduce)"};
        for (int k = 0; k < 3; k++)
            if (r[k]->status == ST_WRONG || r[k]->status == ST_ERROR) {
                if (!bad++)
                    printf("\nfailures:\n");
                printf("  %s %s %s %s %s: %s\n", w.label.c_str(), rt_op_name(w.op),
                       rt_type_name(w.type), who[k], r[k]->status == ST_WRONG ? "WRONG" : "ERROR",
                       r[k]->msg.c_str());
            }
    }
    fflush(stdout);
}

} // namespace

int axis_main(const options &o)
{
    rt_err e;
    rt_clearerr(&e);
    std::vector<axis_shape> shapes = o.shapes;
    if (shapes.empty())
        shapes.assign(std::begin(DEFAULT_SHAPES), std::end(DEFAULT_SHAPES));
    rt_ctx *ctx = bench_open(o);
    FILE *csv = NULL;
    if (o.csv && !(csv = fopen(o.csv, "w")))
        die("%s: %s", o.csv, strerror(errno));
    double read_gbps = bench_start(o);
    if (csv)
        fputs(CSV_HEADER, csv);

    size_t max_in = 0, max_out = 0;
    for (const axis_shape &s : shapes) {
        max_in = std::max(max_in, (size_t)(s.outer * s.len * s.inner) * 8);
        max_out = std::max(max_out, (size_t)(s.outer * s.inner) * 16);
    }
    CUdeviceptr in = 0;
    CUresult r;
    g_out_bytes = max_out + 256;
    if ((r = cu.MemAlloc(&in, max_in ? max_in : 16)) != CUDA_SUCCESS ||
        (r = cu.MemAlloc(&g_out, g_out_bytes)) != CUDA_SUCCESS) {
        driver_fail(r, "allocating the input and outputs", &e);
        die("%s", e.msg);
    }
    void *host = malloc(max_in ? max_in : 16);
    if (!host)
        die("out of host memory for %.1f GiB of input", max_in / 1073741824.0);

    std::vector<arow> rows;
    std::map<std::pair<double, int>, double> ceilings;
    for (const axis_shape &s : shapes) {
        for (rt_op op : o.ops) {
            for (rt_type t : o.types) {
                arow base;
                base.s = s;
                base.op = op;
                base.type = t;
                base.label = shape_label(s);
                optype_ts ts;
                char why[256];
                if (optype_resolve(op, t, &ts, why, sizeof why) != 0)
                    die("%s", why);
                base.rt_out.res = ts.res;
                base.rt_out.stride = optype_res_size(op, t);
                if (op == RT_ARGMAX)   /* RT_RESULT_INDEX: the 8-byte index alone */
                    base.rt_out.stride = 8, base.rt_out.idx_off = 0, base.rt_out.idx_bytes = 8,
                    base.rt_out.has_val = false;
                unsigned long long n = s.outer * s.len * s.inner;
                base.bytes_in = (double)n * optype_size(t);
                /* one result value per output (argmax: its 8-byte index), as torch_axis.py */
                base.bytes_out = (double)(s.outer * s.inner) *
                                 (op == RT_ARGMAX ? 8 : optype_size(ts.res));
                base.limit_us = (base.bytes_in + base.bytes_out) / (read_gbps * 1e3);
                base.cub_na = cub_missing(op, t, s);
                fprintf(stderr, "%s: [%s] %s %s\n", PROG, base.label.c_str(), rt_op_name(op),
                        rt_type_name(t));
                watch(900, "preparing %s %s %s", base.label.c_str(), rt_op_name(op),
                      rt_type_name(t));
                fill(host, op, t, n, value_seed(o, (long long)n, op, t), G.host_threads);
                axis_ref ref = compute_reference(host, op, t, s, G.host_threads);
                data_ref flat_ref;
                data_reference(host, t, op, n, &flat_ref, G.host_threads);
                if ((r = cu.MemcpyHtoD(in, host, (size_t)base.bytes_in)) != CUDA_SUCCESS) {
                    driver_fail(r, "copying the input", &e);
                    die("%s", e.msg);
                }
                int reps_max = o.reps ? o.reps : 200;
                unsigned limit = 120 + (unsigned)(reps_max * base.bytes_in / 1e11);
                for (int hot : o.regimes) {
                    arow w = base;
                    w.hot = hot;
                    watch(limit + 300, "redtune %s %s %s %s (rt_explain_axis, rt_reduce_axis)",
                          w.label.c_str(), rt_op_name(op), rt_type_name(t), regime_name(hot));
                    run_redtune(ctx, w, in, ref, o);
                    watch(limit + 300, "flat %s %s %s %s (rt_explain, rt_reduce of n = %llu)",
                          w.label.c_str(), rt_op_name(op), rt_type_name(t), regime_name(hot), n);
                    run_flat(ctx, w, in, flat_ref, o);
                    watch(limit, "CUB %s %s %s %s", w.label.c_str(), rt_op_name(op),
                          rt_type_name(t), regime_name(hot));
                    run_cub(w, in, ref, o);
                    watch(limit, "the read-only ceiling of %s %s %s", w.label.c_str(),
                          rt_type_name(t), regime_name(hot));
                    /* by bytes and regime: the operators of a shape and type share it */
                    auto key = std::make_pair(base.bytes_in, hot);
                    if (!ceilings.count(key))
                        ceilings[key] = bench_read_ceiling_us(in, base.bytes_in, hot);
                    w.ceiling_us = ceilings[key];
                    alarm(0);
                    csv_row(csv, w, read_gbps);
                    rows.push_back(w);
                }
            }
        }
    }
    print_table(rows, o, read_gbps);

    if (csv && fclose(csv) != 0)
        die("%s: %s", o.csv, strerror(errno));
    cu.MemFree(in);
    cu.MemFree(g_out);
    free(host);
    rt_close(ctx);
    return 0;
}
