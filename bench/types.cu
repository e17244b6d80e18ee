/*
 * types.cu - redtune_bench --type-cases (docs/bench.md, "Types and fused operators"): the
 * performance cases of issue 15, side by side in one process, each
 *   redtune  rt_reduce with the case's operator and type spec (the library's pick for it,
 *            rt_explain's answer), on the bench's stream, as flat.cu times it;
 *   CUB      the same operation where cub::DeviceReduce has it: TransformReduce with a map
 *            (bf16 -> f32 for the sum, |x| for amax, x*x for sumsq and norm2, whose sqrt
 *            is fused into the output iterator), ArgMax (CCCL 3's interface: value and
 *            index to two outputs); var_mean has none (the column stays empty);
 *   limit    bytes / the read bandwidth measured at the start (common.cu's yardstick).
 * The data and the CPU reference are this file's own (tuner/data.c predates the half types
 * and the fused operators); both results are checked before and after the timing.
 */
#include "common.h"
#include "scalars.h"

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/transform_output_iterator.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

/* ---- the cases ---- */

enum cub_kind { CUB_NONE, CUB_SUM_BF16, CUB_AMAX_BF16, CUB_NORM2_F16, CUB_NORM2_BF16,
                CUB_SUMSQ_F32, CUB_ARGMAX_F32 };

struct tcase {
    rt_op op;
    rt_type spec;          /* what rt_reduce is given */
    long long n;
    int cub;
    const char *cub_call;  /* for the notes under the table */
};

/* Issue 15, "Performance": the sizes of its table. var_mean is the population variance
 * (RT_VAR_MEAN, torch.var_mean(x, correction=0)). */
const tcase CASES[] = {
    {RT_SUM, RT_BF16, 1LL << 28, CUB_SUM_BF16, "TransformReduce(bf16 -> f32, +)"},
    {RT_SUM, RT_BF16, 1LL << 20, CUB_SUM_BF16, "TransformReduce(bf16 -> f32, +)"},
    {RT_AMAX, RT_BF16, 1LL << 28, CUB_AMAX_BF16, "TransformReduce(|x| in f32, fmaxf)"},
    {RT_NORM2, RT_F16, 1LL << 24, CUB_NORM2_F16, "TransformReduce(x*x in f32, +), sqrtf in the output iterator"},
    {RT_NORM2, RT_BF16, 1LL << 24, CUB_NORM2_BF16, "TransformReduce(x*x in f32, +), sqrtf in the output iterator"},
    {RT_VAR_MEAN, RT_F32, 1LL << 26, CUB_NONE, "none (no CUB operation)"},
    {RT_SUMSQ, RT_F32, 1LL << 26, CUB_SUMSQ_F32, "TransformReduce(x*x, +)"},
    {RT_ARGMAX, RT_F32, 1LL << 26, CUB_ARGMAX_F32, "ArgMax(value, index outputs)"},
};

/* ---- CUB ---- */

struct to_f32 {
    __host__ __device__ float operator()(__nv_bfloat16 v) const { return __bfloat162float(v); }
    __host__ __device__ float operator()(__half v) const { return __half2float(v); }
    __host__ __device__ float operator()(float v) const { return v; }
};
struct abs_f32 {
    template <class T> __host__ __device__ float operator()(T v) const { return fabsf(to_f32{}(v)); }
};
struct square_f32 {
    template <class T> __host__ __device__ float operator()(T v) const
    {
        float f = to_f32{}(v);
        return f * f;
    }
};
struct plus_f32 {
    __host__ __device__ float operator()(float a, float b) const { return a + b; }
};
struct max_f32 {
    __host__ __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sqrt_f32 {
    __host__ __device__ float operator()(float v) const { return sqrtf(v); }
};

template <class T>
const T *dptr(CUdeviceptr p) { return reinterpret_cast<const T *>(static_cast<uintptr_t>(p)); }
template <class T>
T *dout(CUdeviceptr p) { return reinterpret_cast<T *>(static_cast<uintptr_t>(p)); }

template <class T>
cudaError_t cub_norm2(void *temp, size_t &bytes, CUdeviceptr in, CUdeviceptr out, uint32_t n,
                      cudaStream_t s)
{
    auto o = thrust::make_transform_output_iterator(dout<float>(out), sqrt_f32{});
    return cub::DeviceReduce::TransformReduce(temp, bytes, dptr<T>(in), o, n, plus_f32{},
                                              square_f32{}, 0.0f, s);
}

/* The case's CUB call; its result: f32 at out (argmax: the index, as long long, at out + 8). */
cudaError_t cub_call(int kind, void *temp, size_t &bytes, CUdeviceptr in, CUdeviceptr out,
                     unsigned long long n, cudaStream_t s)
{
    uint32_t n32 = (uint32_t)n;   /* every case has n < 2^32: 32-bit offsets, as most callers */
    switch (kind) {
    case CUB_SUM_BF16:
        return cub::DeviceReduce::TransformReduce(temp, bytes, dptr<__nv_bfloat16>(in),
                                                  dout<float>(out), n32, plus_f32{}, to_f32{},
                                                  0.0f, s);
    case CUB_AMAX_BF16:
        return cub::DeviceReduce::TransformReduce(temp, bytes, dptr<__nv_bfloat16>(in),
                                                  dout<float>(out), n32, max_f32{}, abs_f32{},
                                                  0.0f, s);
    case CUB_NORM2_F16: return cub_norm2<__half>(temp, bytes, in, out, n32, s);
    case CUB_NORM2_BF16: return cub_norm2<__nv_bfloat16>(temp, bytes, in, out, n32, s);
    case CUB_SUMSQ_F32:
        return cub::DeviceReduce::TransformReduce(temp, bytes, dptr<float>(in), dout<float>(out),
                                                  n32, plus_f32{}, square_f32{}, 0.0f, s);
    case CUB_ARGMAX_F32:
        return cub::DeviceReduce::ArgMax(temp, bytes, dptr<float>(in), dout<float>(out),
                                         dout<long long>(out + 8), (int64_t)n, s);
    default: return cudaErrorInvalidValue;
    }
}

/* ---- data and reference ---- */

/* Run body(a, b) over [0, n) in 'threads' slices; body gets its slice index too. */
template <class F>
void parallel(unsigned long long n, int threads, F &&body)
{
    std::vector<std::thread> pool;
    unsigned long long chunk = (n + threads - 1) / threads;
    for (int k = 0; k < threads; k++) {
        unsigned long long a = k * chunk, b = std::min(n, a + chunk);
        if (a >= b)
            break;
        pool.emplace_back([=, &body] { body(k, a, b); });
    }
    for (std::thread &th : pool)
        th.join();
}

/* Values chosen so that a wrong kernel shows (and the checks can be tight):
 *   sum:      integers 0..16 (exact in bf16; the f32 partials stay exact for long);
 *   amax:     |x| <= 512 of both signs, one -768 planted: max(x) is not max|x|;
 *   norm2:    integers -8..8 (exact in f16 and bf16; so are the squares' f32 partials);
 *   var_mean: 3 + uniform(-1, 1): a mean that is not 0;
 *   sumsq:    uniform(-1, 1);
 *   argmax:   integers -1000..999 and two planted 1000s: the lower index must win. */
void fill(void *buf, const tcase &c, uint64_t seed, int threads, unsigned long long plant[2])
{
    unsigned long long n = (unsigned long long)c.n;
    rt_type t = optype_elem(c.spec);
    parallel(n, threads, [&](int, unsigned long long a, unsigned long long b) {
        for (unsigned long long i = a; i < b; i++) {
            uint64_t h = data_mix(seed + i);
            double u = (double)(h >> 11) * 0x1p-53;   /* [0, 1) */
            float x;
            switch (c.op) {
            case RT_SUM: x = (float)(h % 17); break;
            case RT_AMAX: x = (float)((long long)(h % 1023) - 511); break;
            case RT_NORM2: x = (float)((long long)(h % 17) - 8); break;
            case RT_VAR_MEAN: x = (float)(3.0 + 2.0 * u - 1.0); break;
            case RT_SUMSQ: x = (float)(2.0 * u - 1.0); break;
            default: x = (float)((long long)(h % 2000) - 1000); break;   /* argmax */
            }
            if (t == RT_BF16)
                ((uint16_t *)buf)[i] = bf16_bits(x);
            else if (t == RT_F16)
                ((uint16_t *)buf)[i] = f16_bits(x);
            else
                ((float *)buf)[i] = x;
        }
    });
    plant[0] = seed % n;
    plant[1] = (plant[0] + n / 2 + 1) % n;
    if (plant[1] < plant[0])
        std::swap(plant[0], plant[1]);
    if (c.op == RT_AMAX)
        ((uint16_t *)buf)[plant[1]] = bf16_bits(-768.0f);
    if (c.op == RT_ARGMAX)
        ((float *)buf)[plant[0]] = ((float *)buf)[plant[1]] = 1000.0f;
}

struct reference {
    double v[2] = {0, 0};      /* the result; var_mean: {var, mean} */
    long long index = -1;      /* argmax */
};

/* The exact (argmax, amax) or double-precision result of the case's data. */
reference compute_reference(const void *buf, const tcase &c, int threads)
{
    unsigned long long n = (unsigned long long)c.n;
    rt_type t = optype_elem(c.spec);
    std::vector<double> part(threads, 0.0), part2(threads, 0.0);
    std::vector<long long> pidx(threads, -1);
    parallel(n, threads, [&](int k, unsigned long long a, unsigned long long b) {
        double s = 0, best = -INFINITY;
        long long bi = -1;
        for (unsigned long long i = a; i < b; i++) {
            double x = scalar_at(buf, t, i);
            switch (c.op) {
            case RT_SUM:
            case RT_VAR_MEAN: s += x; break;
            case RT_AMAX: s = std::max(s, fabs(x)); break;
            case RT_NORM2:
            case RT_SUMSQ: s += x * x; break;
            default:
                if (x > best)
                    best = x, bi = (long long)i;
                break;
            }
        }
        part[k] = c.op == RT_ARGMAX ? best : s;
        pidx[k] = bi;
    });
    reference r;
    for (int k = 0; k < threads; k++) {
        if (c.op == RT_AMAX)
            r.v[0] = std::max(r.v[0], part[k]);
        else if (c.op == RT_ARGMAX) {
            if (pidx[k] >= 0 && (r.index < 0 || part[k] > r.v[0]))
                r.v[0] = part[k], r.index = pidx[k];
        } else
            r.v[0] += part[k];
    }
    if (c.op == RT_NORM2)
        r.v[0] = sqrt(r.v[0]);
    if (c.op == RT_VAR_MEAN) {   /* two passes in double: {var, mean} */
        double mean = r.v[0] / (double)n;
        parallel(n, threads, [&](int k, unsigned long long a, unsigned long long b) {
            double q = 0;
            for (unsigned long long i = a; i < b; i++) {
                double d = scalar_at(buf, t, i) - mean;
                q += d * d;
            }
            part2[k] = q;
        });
        double q = 0;
        for (int k = 0; k < threads; k++)
            q += part2[k];
        r.v[0] = q / (double)n;
        r.v[1] = mean;
    }
    return r;
}

/* Check a result whose scalars have type 'res' (argmax: the value has 'res', the index is
 * at offset 8). Sums in f32 of 2^20..2^28 elements: relative 1e-4 (a lost block or a wrong
 * map is far outside it); amax and argmax: exact. */
bool check(const unsigned char *got, rt_type res, const tcase &c, const reference &ref,
           char *why, size_t len)
{
    double v = scalar_at(got, res, 0);
    const double tol = 1e-4;
    switch (c.op) {
    case RT_AMAX:
        if (v == ref.v[0])
            return true;
        snprintf(why, len, "expected %.9g, got %.9g", ref.v[0], v);
        return false;
    case RT_ARGMAX: {
        long long idx;
        memcpy(&idx, got + 8, 8);
        if (v == ref.v[0] && idx == ref.index)
            return true;
        snprintf(why, len, "expected %.9g at index %lld, got %.9g at index %lld", ref.v[0],
                 ref.index, v, idx);
        return false;
    }
    case RT_VAR_MEAN: {
        double m = scalar_at(got + optype_size(res), res, 0);
        double scale = fabs(ref.v[1]) + sqrt(ref.v[0]);
        if (fabs(v - ref.v[0]) <= tol * ref.v[0] && fabs(m - ref.v[1]) <= tol * scale)
            return true;
        snprintf(why, len, "expected var %.9g mean %.9g, got var %.9g mean %.9g", ref.v[0],
                 ref.v[1], v, m);
        return false;
    }
    default:
        if (fabs(v - ref.v[0]) <= tol * fabs(ref.v[0]))
            return true;
        snprintf(why, len, "expected %.9g, got %.9g (relative tolerance %g)", ref.v[0], v, tol);
        return false;
    }
}

/* ---- one case ---- */

struct trow {
    tcase c;
    int hot = 0;
    std::string label;       /* "sum bf16->f32" */
    double bytes = 0, limit_us = 0;
    rt_type rt_res = RT_F32; /* the result's scalar type from rt_reduce */
    lib_pick pick;
    std::string explain_err;
    impl_result rt;
    size_t cub_temp = 0;
    impl_result cub;         /* status ST_NONE: no CUB operation */
    double ceiling_us = -1;  /* bench_read_ceiling_us of bytes; -1: not measured (--every-n) */
};

/* Poison the result, run once, read it back. */
template <class F>
int run_once(F &&enqueue, unsigned char *result, rt_err *e)
{
    CUresult r;
    if ((r = cu.MemsetD8(G.out, 0xa5, 32)) != CUDA_SUCCESS)
        return driver_fail(r, "poisoning the output", e);
    int rc = enqueue(e);
    if (rc)
        return rc;
    if ((r = cu.StreamSynchronize(G.stream)) != CUDA_SUCCESS)
        return driver_fail(r, "running the reduction", e);
    if ((r = cu.MemcpyDtoH(result, G.out, 32)) != CUDA_SUCCESS)
        return driver_fail(r, "reading the result", e);
    return RT_OK;
}

/* Verify, time (cold: the L2 flushed before each repetition), check the last result again. */
template <class F>
void verify_and_time(F &&enqueue, const trow &w, rt_type res, const reference &ref,
                     const options &o, impl_result *out)
{
    rt_err e;
    rt_clearerr(&e);
    unsigned char got[32];
    char why[512] = "";
    int rc = run_once(enqueue, got, &e);
    if (rc == RT_OK && !check(got, res, w.c, ref, why, sizeof why)) {
        out->status = ST_WRONG;
        out->msg = why;
        return;
    }
    if (rc == RT_OK) {   /* at least 20 repetitions, as bench/torch_types.py */
        int minr = o.reps ? o.reps : 20, maxr = o.reps ? o.reps : 200;
        rc = time_reps(enqueue, w.hot, minr, maxr, o.reps ? 0 : 0.25, &out->t, &e);
    }
    if (rc == RT_OK) {
        CUresult r = cu.MemcpyDtoH(got, G.out, 32);
        if (r != CUDA_SUCCESS)
            rc = driver_fail(r, "reading the result", &e);
        else if (!check(got, res, w.c, ref, why, sizeof why)) {
            out->status = ST_WRONG;
            out->msg = std::string("after the timed repetitions: ") + why;
            return;
        }
    }
    if (rc != RT_OK) {
        if (rc == RT_EFAULT)   /* the context is lost: nothing after this can run */
            die("%s: %s", g_where, e.msg);
        out->status = ST_ERROR;
        out->msg = e.msg;
        return;
    }
    out->status = ST_OK;
}

void run_redtune(rt_ctx *ctx, trow &w, CUdeviceptr in, const reference &ref, const options &o)
{
    char text[4096];
    if (rt_explain(ctx, w.c.op, w.c.spec, (unsigned long long)w.c.n, text, sizeof text) == RT_OK) {
        w.pick.have = true;
        w.pick.text = text;
        bench_pick_parse(text, &w.pick.p);
        char lk[256];
        bench_pick_lookup(&w.pick.p, w.c.n, lk, sizeof lk);
        w.pick.lookup = lk;
    } else {
        w.explain_err = rt_errmsg(ctx);
    }
    const void *d_in = reinterpret_cast<const void *>(static_cast<uintptr_t>(in));
    void *d_out = reinterpret_cast<void *>(static_cast<uintptr_t>(G.out));
    auto enqueue = [&](rt_err *err) {
        int rc = rt_reduce(ctx, w.c.op, w.c.spec, d_in, (unsigned long long)w.c.n, d_out, G.stream);
        return rc == RT_OK ? RT_OK : rt_seterr(err, rc, "rt_reduce: %s", rt_errmsg(ctx));
    };
    verify_and_time(enqueue, w, w.rt_res, ref, o, &w.rt);
}

void run_cub(trow &w, CUdeviceptr in, const reference &ref, const options &o)
{
    if (w.c.cub == CUB_NONE)
        return;
    unsigned long long n = (unsigned long long)w.c.n;
    cudaStream_t s = (cudaStream_t)G.stream;
    rt_err e;
    rt_clearerr(&e);
    size_t bytes = 0;
    cudaError_t cr = cub_call(w.c.cub, NULL, bytes, in, G.out, n, s);
    CUdeviceptr temp = 0;
    CUresult r = CUDA_SUCCESS;
    if (cr != cudaSuccess)
        rt_fail(cr, "cub::DeviceReduce (temp storage size)", &e);
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
        cudaError_t lr = cub_call(w.c.cub, tp, b, in, G.out, n, s);
        return lr == cudaSuccess ? RT_OK : rt_fail(lr, "cub::DeviceReduce", err);
    };
    verify_and_time(enqueue, w, RT_F32, ref, o, &w.cub);
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
    "device,arch,case,op,type_spec,result,regime,n,bytes,limit_us,read_gbps,"
    "redtune_status,redtune_us,redtune_min_us,redtune_max_us,redtune_reps,redtune_frac_read,"
    "family,params,lookup,cub_call,cub_status,cub_us,cub_min_us,cub_max_us,cub_reps,"
    "cub_frac_read,cub_temp_bytes,ratio_redtune_cub,message,ceiling_us,redtune_frac_ceiling\n";

void csv_row(FILE *f, const trow &w, double read_gbps)
{
    if (!f)
        return;
    std::string msg;
    if (!w.explain_err.empty())
        msg = "rt_explain: " + w.explain_err;
    if (!w.rt.msg.empty())
        msg += std::string(msg.empty() ? "" : "; ") + "redtune: " + w.rt.msg;
    if (!w.cub.msg.empty())
        msg += std::string(msg.empty() ? "" : "; ") + "cub: " + w.cub.msg;
    csv_field(f, G.dev.name);
    fprintf(f, ",%s,", G.arch);
    csv_field(f, w.label);
    fprintf(f, ",%s,%d,%s,%s,%lld,%.0f,%.4f,%.2f,%s,", rt_op_name(w.c.op), (int)w.c.spec,
            rt_type_name(w.rt_res), regime_name(w.hot), w.c.n, w.bytes, w.limit_us, read_gbps,
            status_name(w.rt.status));
    if (w.rt.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,", w.rt.t.median_us, w.rt.t.min_us, w.rt.t.max_us,
                w.rt.t.reps, w.limit_us / w.rt.t.median_us);
    else
        fprintf(f, ",,,,,");
    if (w.pick.have && w.pick.p.parsed) {
        csv_field(f, w.pick.p.family);
        fputc(',', f);
        csv_field(f, w.pick.p.params);
        fputc(',', f);
        csv_field(f, w.pick.lookup);
        fputc(',', f);
    } else {
        fprintf(f, ",,,");
    }
    csv_field(f, w.c.cub_call);
    fprintf(f, ",%s,", w.c.cub == CUB_NONE ? "" : status_name(w.cub.status));
    if (w.cub.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,%zu,", w.cub.t.median_us, w.cub.t.min_us,
                w.cub.t.max_us, w.cub.t.reps, w.limit_us / w.cub.t.median_us, w.cub_temp);
    else
        fprintf(f, ",,,,,,");
    if (w.rt.status == ST_OK && w.cub.status == ST_OK)
        fprintf(f, "%.4f,", w.rt.t.median_us / w.cub.t.median_us);
    else
        fputc(',', f);
    csv_field(f, msg);
    csv_ceiling(f, w.ceiling_us, w.rt);
    fputc('\n', f);
    fflush(f);
}

void print_table(const std::vector<trow> &rows, const options &o, double read_gbps)
{
    bool regimes = o.regimes.size() > 1;
    printf("\ntypes and fused operators (issue 15); limit = bytes / %.1f GB/s (the read "
           "yardstick above); times are medians in microseconds; %s\n", read_gbps,
           regimes ? "cold: L2 flushed before each repetition; hot: not"
                   : o.regimes[0] ? "hot (L2 not flushed)" : "cold (L2 flushed before each repetition)");
    printf("%-26s %5s %8s %s%10s %10s %10s %9s %7s %9s %8s\n", "case", "n", "bytes",
           regimes ? "regime " : "", "redtune", "CUB", "limit", "rt%limit", "rt/CUB", "ceiling",
           "ceil%lim");
    for (const trow &w : rows) {
        char ratio[32] = "-";
        if (w.rt.status == ST_OK && w.cub.status == ST_OK) {
            double q = w.rt.t.median_us / w.cub.t.median_us;
            snprintf(ratio, sizeof ratio, "%.2f%s", q, q > 1.0 ? "*" : " ");
        }
        printf("%-26s %5s %8s ", w.label.c_str(), fmt_n(w.c.n).c_str(), fmt_bytes(w.bytes).c_str());
        if (regimes)
            printf("%-6s ", regime_name(w.hot));
        printf("%10s %10s %10.2f %9s %7s %9s %8s\n", fmt_time(w.rt, true).c_str(),
               fmt_time(w.cub, w.c.cub != CUB_NONE).c_str(), w.limit_us,
               fmt_pct(w.rt, w.limit_us).c_str(), ratio, fmt_ceiling(w.ceiling_us).c_str(),
               fmt_ceiling_pct(w.ceiling_us, w.limit_us).c_str());
    }
    printf("(* redtune slower than CUB; - no CUB operation, or not timed; ceiling: the input "
           "read once by the read yardstick's fastest shape, nothing reduced, and ceil%%lim the "
           "limit's share of it: the most a reduction of the case can reach, in %% of the "
           "limit, on this GPU)\n");
    printf("\nredtune (rt_reduce's pick, rt_explain) and CUB's call per case:\n");
    for (const trow &w : rows) {
        if (regimes && w.hot != o.regimes[0])
            continue;
        std::string pick = w.pick.have ? pick_label(w.pick) : "rt_explain failed: " + w.explain_err;
        printf("  %-26s %5s redtune %s\n  %-26s %5s CUB     %s\n", w.label.c_str(),
               fmt_n(w.c.n).c_str(), pick.c_str(), "", "", w.c.cub_call);
    }
    int bad = 0;
    for (const trow &w : rows) {
        const impl_result *r[2] = {&w.rt, &w.cub};
        const char *who[2] = {"redtune", "CUB"};
        for (int k = 0; k < 2; k++)
            if (r[k]->status == ST_WRONG || r[k]->status == ST_ERROR) {
                if (!bad++)
                    printf("\nfailures:\n");
                printf("  %s %s %s %s: %s\n", w.label.c_str(), fmt_n(w.c.n).c_str(), who[k],
                       r[k]->status == ST_WRONG ? "WRONG" : "ERROR", r[k]->msg.c_str());
            }
    }
    fflush(stdout);
}

/* --every-n: the sizes, as everyn.cu's header gives them. */
void print_everyn_header(const options &o)
{
    int pows = 0;
    for (long long n : o.sizes)
        pows += (n & (n - 1)) == 0;
    std::string rnd;
    for (size_t i = 0; i < o.random_sizes.size(); i++)
        rnd += (i ? ", " : "") + fmt_n(o.random_sizes[i]);
    printf("%s: every n: the %d powers of two 2^0 .. %s and %zu random sizes drawn "
           "log-uniformly from [1, %s] with seed %llu%s%s\n", PROG, pows,
           fmt_n(1LL << (63 - __builtin_clzll((unsigned long long)o.max_n))).c_str(),
           o.random_sizes.size(), fmt_n(o.max_n).c_str(), (unsigned long long)o.seed,
           rnd.empty() ? "" : ": ", rnd.c_str());
}

/* --every-n: per case (operator and type) the ratio redtune / CUB over the sizes both timed:
 * geometric mean, worst and best with their sizes, every size where redtune is slower. */
void print_everyn_summary(const std::vector<trow> &rows)
{
    printf("\nsummary: redtune / CUB, the ratio of median times (below 1: redtune faster)\n");
    std::vector<std::string> labels;
    for (const trow &w : rows)
        if (std::find(labels.begin(), labels.end(), w.label) == labels.end())
            labels.push_back(w.label);
    int slower_all = 0, pairs_all = 0, bad = 0;
    for (const std::string &l : labels) {
        int pairs = 0, nslower = 0, timed = 0;
        bool cub = false;
        double logsum = 0, hi = 0, lo = 0;
        long long hi_n = 0, lo_n = 0;
        std::string slower;
        for (const trow &w : rows) {
            if (w.label != l)
                continue;
            bad += w.rt.status == ST_WRONG || w.rt.status == ST_ERROR;
            timed += w.rt.status == ST_OK;
            cub = cub || w.c.cub != CUB_NONE;
            if (w.rt.status != ST_OK || w.cub.status != ST_OK)
                continue;
            double q = w.rt.t.median_us / w.cub.t.median_us;
            logsum += log(q);
            if (!pairs || q > hi)
                hi = q, hi_n = w.c.n;
            if (!pairs || q < lo)
                lo = q, lo_n = w.c.n;
            pairs++;
            if (q > 1.0) {
                char one[64];
                snprintf(one, sizeof one, "%s%s (%.2f)", nslower ? ", " : "", fmt_n(w.c.n).c_str(), q);
                slower += one;
                nslower++;
            }
        }
        printf("  %-26s: ", l.c_str());
        if (!pairs) {
            if (cub)
                printf("no size with both timed\n");
            else
                printf("no CUB operation; redtune timed at %d sizes\n", timed);
            continue;
        }
        printf("%2d sizes, geomean %.2f, worst %.2f (%s), best %.2f (%s); ", pairs,
               exp(logsum / pairs), hi, fmt_n(hi_n).c_str(), lo, fmt_n(lo_n).c_str());
        if (nslower)
            printf("SLOWER than CUB at %d size%s: %s\n", nslower, nslower == 1 ? "" : "s",
                   slower.c_str());
        else
            printf("never slower than CUB\n");
        slower_all += nslower;
        pairs_all += pairs;
    }
    printf("  redtune slower than CUB in %d of %d cases timed side by side; redtune WRONG or "
           "failed in %d\n", slower_all, pairs_all, bad);
}

bool wanted(const std::vector<long long> &v, long long x)
{
    return v.empty() || std::find(v.begin(), v.end(), x) != v.end();
}

} // namespace

int types_main(const options &o)
{
    rt_err e;
    rt_clearerr(&e);
    /* The cases the filters keep (--ops, --types, --sizes), resolved before any GPU work. */
    std::vector<tcase> cases;
    for (const tcase &c : CASES) {
        bool op_ok = o.ops.empty() || std::find(o.ops.begin(), o.ops.end(), c.op) != o.ops.end();
        bool ty_ok = o.types.empty() ||
                     std::find(o.types.begin(), o.types.end(), optype_elem(c.spec)) != o.types.end();
        if (!op_ok || !ty_ok)
            continue;
        if (!o.every_n) {
            if (wanted(o.sizes, c.n))
                cases.push_back(c);
            continue;
        }
        /* --every-n: each operator and type once, at every size of the sweep. */
        bool seen = false;
        for (const tcase &d : cases)
            seen = seen || (d.op == c.op && d.spec == c.spec);
        if (seen)
            continue;
        for (long long n : o.sizes) {
            tcase d = c;
            d.n = n;
            cases.push_back(d);
        }
    }
    if (cases.empty())
        usage_error("--type-cases: --ops, --types and --sizes leave no case (the cases: sum bf16 "
                    "2^28 and 2^20, amax bf16 2^28, norm2 f16 and bf16 2^24, var_mean f32 2^26, "
                    "sumsq f32 2^26, argmax f32 2^26)");
    rt_ctx *ctx = bench_open(o);
    FILE *csv = NULL;
    if (o.csv && !(csv = fopen(o.csv, "w")))
        die("%s: %s", o.csv, strerror(errno));
    double read_gbps = bench_start(o);
    if (csv)
        fputs(CSV_HEADER, csv);
    if (o.every_n)
        print_everyn_header(o);

    size_t max_bytes = 0;
    for (const tcase &c : cases)
        max_bytes = std::max(max_bytes, (size_t)c.n * optype_size(c.spec));
    CUdeviceptr in = 0;
    CUresult r;
    if ((r = cu.MemAlloc(&in, max_bytes)) != CUDA_SUCCESS) {
        driver_fail(r, "allocating the input", &e);
        die("%s", e.msg);
    }
    void *host = malloc(max_bytes);
    if (!host)
        die("out of host memory for %.1f GiB of input", max_bytes / 1073741824.0);

    std::vector<trow> rows;
    for (const tcase &c : cases) {
        optype_ts ts;
        char why[256];
        if (optype_resolve(c.op, c.spec, &ts, why, sizeof why) != 0)
            die("%s", why);   /* the header and runtime/optype.c disagree: a build problem */
        trow base;
        base.c = c;
        base.rt_res = ts.res;
        base.label = std::string(rt_op_name(c.op)) + " " + rt_type_name(ts.elem);
        if (ts.res != ts.elem && c.op != RT_VAR_MEAN)
            base.label += std::string("->") + rt_type_name(ts.res);
        if (c.op == RT_VAR_MEAN)
            base.label += " (population)";
        base.bytes = (double)c.n * optype_size(c.spec);
        base.limit_us = base.bytes / (read_gbps * 1e3);
        std::string ns = fmt_n(c.n);
        fprintf(stderr, "%s: [%s] n = %s\n", PROG, base.label.c_str(), ns.c_str());
        watch(900, "preparing %s n = %s", base.label.c_str(), ns.c_str());
        uint64_t seed = value_seed(o, c.n, c.op, c.spec);
        unsigned long long plant[2];
        fill(host, c, seed, G.host_threads, plant);
        reference ref = compute_reference(host, c, G.host_threads);
        if ((r = cu.MemcpyHtoD(in, host, (size_t)base.bytes)) != CUDA_SUCCESS) {
            driver_fail(r, "copying the input", &e);
            die("%s", e.msg);
        }
        int reps_max = o.reps ? o.reps : 200;
        unsigned limit = 120 + (unsigned)(reps_max * base.bytes / 1e11);
        for (int hot : o.regimes) {
            trow w = base;
            w.hot = hot;
            watch(limit + 300, "redtune %s n = %s %s (rt_explain, rt_reduce)", w.label.c_str(),
                  ns.c_str(), regime_name(hot));
            run_redtune(ctx, w, in, ref, o);
            watch(limit, "CUB %s n = %s %s", w.label.c_str(), ns.c_str(), regime_name(hot));
            run_cub(w, in, ref, o);
            if (!o.every_n) {
                watch(limit, "the read-only ceiling of %s n = %s %s", w.label.c_str(), ns.c_str(),
                      regime_name(hot));
                w.ceiling_us = bench_read_ceiling_us(in, base.bytes, hot);
            }
            alarm(0);
            csv_row(csv, w, read_gbps);
            rows.push_back(w);
        }
    }
    print_table(rows, o, read_gbps);
    if (o.every_n)
        print_everyn_summary(rows);

    if (csv && fclose(csv) != 0)
        die("%s: %s", o.csv, strerror(errno));
    cu.MemFree(in);
    free(host);
    rt_close(ctx);
    return 0;
}
