/*
 * bench.cu - redtune's stored winners against cub::DeviceReduce and against the read-bandwidth
 * limit, side by side, in one process and one run (docs/bench.md).
 *
 * Segmented modes (--segmented keys|offsets, --paper-seg): see "segmented" further down.
 *
 * For each case (op, type, n, regime):
 *   redtune  the winner the database holds for this device name, op, type, layout "flat" and
 *            regime at n (or, when n was not tuned, at the nearest tuned size), loaded from its
 *            stored CUBIN (or NVRTC-compiled from its stored source) and launched with
 *            plan_launch, exactly as the tuner's worker timed it;
 *   CUB      cub::DeviceReduce::Min / Max / Sum on the same input, temp storage allocated
 *            once per case outside the timed region;
 *   limit    bytes(n) / the read bandwidth measured at the start (templates/bandwidth.cu,
 *            best of the tuner's seven shapes over 4 GiB).
 *
 * The timing method is tuner/worker.c's, from the same code (tuner/measure.c): a blocking stream;
 * CUDA events around the launch sequence; two warm-ups; the median of 10..200 repetitions
 * (until 0.25 s of timed GPU time) or of --reps N; cold: before each repetition the L2 is
 * flushed by rt_bw_read over a buffer of 2 x L2 (a read, not a memset), which also keeps the
 * stream busy when the start event is recorded; hot: no flush, a short rt_spin does that.
 * Both results are checked against the CPU reference (tuner/data.c) before anything is timed
 * and again after the timed repetitions.
 *
 * The CUDA runtime (CUB) and redtune's driver-API runtime (runtime/, libcuda by dlopen) share
 * the device's primary context: cudaSetDevice + cudaFree(0) first, then the driver's
 * cuDevicePrimaryCtxRetain + cuCtxSetCurrent. cudaStream_t and CUstream are the same handle.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/version.cuh>
#include <cuda/functional>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <signal.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

extern "C" {
#include "../include/redtune.h"
#include "../runtime/api.h"
#include "../runtime/codegen.h"
#include "../runtime/device.h"
#include "../runtime/driver.h"
#include "../runtime/err.h"
#include "../runtime/family.h"
#include "../runtime/nvrtc.h"
#include "../runtime/optype.h"
#include "../runtime/plan.h"
#include "../runtime/store.h"
#include "../tuner/data.h"
#include "../tuner/measure.h"
#include "../tuner/segdata.h"
#include "../tuner/store_tune.h"
}

#include <type_traits>

namespace {

const char *const PROG = "redtune_bench";

/* ---- errors ---- */

[[noreturn]] void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", PROG);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stdout);
    exit(1);
}

[[noreturn]] void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", PROG);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(%s --help for the options)\n", PROG);
    va_end(ap);
    exit(2);
}

/* A failed CUDA runtime call, in the driver's convention: RT_EFAULT when the context is lost. */
int rt_fail(cudaError_t r, const char *what, rt_err *e)
{
    int sticky = r == cudaErrorIllegalAddress || r == cudaErrorLaunchFailure ||
                 r == cudaErrorMisalignedAddress || r == cudaErrorIllegalInstruction ||
                 r == cudaErrorInvalidAddressSpace || r == cudaErrorInvalidPc ||
                 r == cudaErrorHardwareStackError || r == cudaErrorAssert ||
                 r == cudaErrorLaunchTimeout || r == cudaErrorECCUncorrectable;
    return rt_seterr(e, sticky ? RT_EFAULT : RT_ECUDA, "%s: %s: %s", what, cudaGetErrorName(r),
                     cudaGetErrorString(r));
}

/* ---- a watchdog: a launch that never finishes ends the run with the case named ---- */

char g_where[256] = "starting";

void on_alarm(int)
{
    static const char a[] = "redtune_bench: timed out (a launch did not finish) in ";
    ssize_t w = write(2, a, sizeof a - 1);
    w = write(2, g_where, strlen(g_where));
    w = write(2, "\n", 1);
    (void)w;
    _exit(1);
}

void watch(unsigned seconds, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void watch(unsigned seconds, const char *fmt, ...)
{
    alarm(0);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_where, sizeof g_where, fmt, ap);
    va_end(ap);
    alarm(seconds);
}

/* ---- the GPU state: the worker's (tuner/measure.c), one for the whole run ---- */

measure_gpu G;

/* The device: the driver first (its text when there is no driver or no GPU), then the runtime
 * on the same device, then the driver's view of the runtime's primary context. */
void start_device(int ordinal)
{
    rt_err e;
    rt_clearerr(&e);
    if (driver_load(&e) || driver_device_query(ordinal, &G.dev, &e))
        die("%s", e.msg);
    cudaError_t cr;
    if ((cr = cudaSetDevice(ordinal)) != cudaSuccess || (cr = cudaFree(0)) != cudaSuccess) {
        rt_fail(cr, "cudaSetDevice/cudaFree(0)", &e);
        die("%s", e.msg);
    }
    /* The runtime and the driver must mean the same GPU by this ordinal. */
    cudaDeviceProp prop;
    if ((cr = cudaGetDeviceProperties(&prop, ordinal)) != cudaSuccess) {
        rt_fail(cr, "cudaGetDeviceProperties", &e);
        die("%s", e.msg);
    }
    char uuid[40];
    for (int i = 0; i < 16; i++)
        snprintf(uuid + 2 * i, 3, "%02x", (unsigned char)prop.uuid.bytes[i]);
    if (G.dev.uuid[0] && strcmp(uuid, G.dev.uuid) != 0)
        die("device %d: the CUDA runtime's device (%s, uuid %s) is not the driver's (%s, uuid %s); "
            "check CUDA_DEVICE_ORDER", ordinal, prop.name, uuid, G.dev.name, G.dev.uuid);
    /* The driver's view of the same primary context, the stream, events and buffers. */
    if (measure_start(&G, &e))
        die("%s", e.msg);
}

/* ---- timing: tuner/measure.c's measure_reps, as the worker calls it ---- */

struct timing {
    double median_us = 0, min_us = 0, max_us = 0;
    int reps = 0;
};

/* Time 'fn' (which enqueues the launch sequence) between min_reps and max_reps times, or until
 * budget_s of GPU time was timed. */
template <class F>
int time_reps(F &&fn, int hot, int min_reps, int max_reps, double budget_s, timing *m, rt_err *e)
{
    using Fn = typename std::remove_reference<F>::type;
    measure_enqueue_fn call = [](void *arg, rt_err *err) -> int {
        return (*static_cast<Fn *>(arg))(err);
    };
    measure_times t;
    int rc = measure_reps(&G, call, const_cast<void *>(static_cast<const void *>(&fn)), hot,
                          min_reps, max_reps, budget_s, &t, e);
    if (rc == RT_OK) {
        m->median_us = t.median_us;
        m->min_us = t.min_us;
        m->max_us = t.max_us;
        m->reps = t.reps;
    }
    return rc;
}

/* ---- the read yardstick: tuner/tune.c's measure_bandwidth with worker.c's do_bandwidth ---- */

double measure_bandwidth()
{
    uint64_t bytes = measure_bw_bytes(&G.dev);
    double best = 0;
    rt_err e;
    rt_clearerr(&e);
    CUresult r;
    CUdeviceptr buf = 0;
    unsigned long long n16 = bytes / 16;
    if ((r = cu.MemAlloc(&buf, n16 * 16)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(buf, 0x3c, n16 * 16)) != CUDA_SUCCESS) {
        driver_fail(r, "allocating the bandwidth buffer", &e);
        die("%s", e.msg);
    }
    printf("read yardstick (rt_bw_read, %.1f GiB, L2 flushed, %d repetitions per shape):",
           n16 * 16 / 1073741824.0, MEASURE_BW_REPS);
    for (int i = 0; i < MEASURE_BW_SHAPES; i++) {
        const char *const *shape = measure_bw_shapes[i];
        watch(300, "the read yardstick, shape %s %s %s", shape[0], shape[1], shape[2]);
        nvrtc_output o;
        if (measure_bw_compile(i, G.arch, &o, &e))
            die("%s", e.msg);
        /* The first module stays loaded: its kernels flush the L2 and keep the stream busy for
         * every timing that follows, this one included. */
        measure_bw k;
        int rc = measure_bw_load(&G, o.cubin, n16, &k, &e);
        nvrtc_output_free(&o);
        double us, gbps;
        if (rc || measure_bw_time(&G, &k, buf, n16, 0, MEASURE_BW_REPS, &us, &gbps, &e))
            die("%s", e.msg);
        printf("%s%s %s %s %.1f GB/s", i == 0 ? "\n   " : i % 4 == 0 ? ",\n   " : ", ", shape[0],
               shape[1], shape[2], gbps);
        best = std::max(best, gbps);
        measure_bw_unload(&k);
    }
    alarm(0);
    cu.MemFree(buf);
    printf("\n");
    return best;
}

/* ---- options ---- */

struct options {
    const char *db = NULL;
    const char *csv = NULL;
    int device = 0;
    int reps = 0;                           /* 0: 10..200 until 0.25 s */
    std::vector<long long> sizes;
    std::vector<rt_op> ops;
    std::vector<rt_type> types;
    std::vector<int> regimes;               /* 0 cold, 1 hot */
    unsigned long long seed = 1;
    unsigned long long spin_cycles = MEASURE_SPIN_CYCLES;  /* the tuner's (tuner/measure.c) */
    bool keep_nan = false;
    /* segmented (docs/bench.md, "Segmented") */
    int layout = SEG_LAYOUT_FLAT;           /* --segmented keys|offsets */
    bool paper_seg = false;                 /* --paper-seg: the paper's Fig. 5 experiment */
    std::vector<int> profiles;
    std::vector<int> paper_m;               /* N = m * 2^20 */
    std::vector<std::string> paper_configs; /* "family[:label] NAME=V ..." */
    bool api = false;                       /* --api: libredtune's checks (api_check) */
};

const char USAGE[] =
    "usage: redtune_bench --db FILE [--device N] [--sizes LIST] [--ops LIST] [--types LIST]\n"
    "                     [--regimes LIST] [--reps N] [--csv FILE] [--seed S] [--keep-nan]\n"
    "                     [--spin-cycles N]\n"
    "       redtune_bench --db FILE --segmented keys|offsets [--profiles LIST] [options above]\n"
    "       redtune_bench --paper-seg [--db FILE] [--paper-m LIST] [--paper-config SPEC ...]\n"
    "                     [--profiles LIST] [options above]\n"
    "\n"
    "Times redtune's stored winners (from --db) against cub::DeviceReduce and the read-bandwidth\n"
    "limit, side by side, on one GPU (docs/bench.md).\n"
    "\n"
    "  --db FILE        the redtune database holding the winners (required, except with\n"
    "                   --paper-seg; opened read-only)\n"
    "  --device N       GPU ordinal (default 0)\n"
    "  --sizes LIST     comma-separated sizes: 1000, 2^20, 4K, 16M, 1G (default every power of\n"
    "                   two 2^10 .. 2^30)\n"
    "  --ops LIST       min, sum, max (default min,sum)\n"
    "  --types LIST     f32, f64, i32, u32, i64, u64 (default f32,f64,i32)\n"
    "  --regimes LIST   cold (L2 flushed before each repetition), hot (default cold,hot)\n"
    "  --reps N         exactly N timed repetitions (default: 10 to 200, until 0.25 s, as the tuner)\n"
    "  --csv FILE       also write every row to FILE\n"
    "  --seed S         seed of the input data (default 1)\n"
    "  --keep-nan       keep the NaN the tuner's data puts among floats for min/max (CUB's\n"
    "                   operator< then gives an order-dependent result, reported WRONG)\n"
    "  --api            instead: libredtune's checks (issue 5): (a) the host cost of a cached\n"
    "                   rt_reduce, lookup against the launches; (b) its pick at sizes between\n"
    "                   tuned sizes against the neighbouring winners timed there; (c) rt_reduce\n"
    "                   end to end against the tuned medians; a PASS/MISS line per goal\n"
    "  --spin-cycles N  hot regime: cycles of rt_spin before the start event (default 20000, the\n"
    "                   tuner's; a diagnostic: a larger value shows whether a launch sequence's\n"
    "                   host work outlasts the spin)\n"
    "\n"
    "Segmented (docs/bench.md, \"Segmented\"):\n"
    "  --segmented L    keys: redtune's winner for layout keys:PROFILE against\n"
    "                   cub::DeviceReduce::ReduceByKey; offsets: the winner for offsets:PROFILE\n"
    "                   against cub::DeviceSegmentedReduce; both against the bandwidth limit of\n"
    "                   the bytes that must move (values, keys or offsets, outputs). Default\n"
    "                   sizes 2^20,2^24,30M (30M = 30*2^20); n < 2^31\n"
    "  --profiles LIST  segment profiles: one, rand10_50, len3, len1, len1000, heavy (default\n"
    "                   all; with --paper-seg: one,rand10_50,len3, the paper's three scenarios)\n"
    "  --paper-seg      the paper's Fig. 5 experiment: keys, f32 min, N = m*2^20, the paper's\n"
    "                   segmented families at fixed configs generated and compiled here (no\n"
    "                   database needed; with --db its winners get a column too), and CUB's\n"
    "                   ReduceByKey; default regime cold\n"
    "  --paper-m LIST   the m of N = m*2^20 (default 16..31)\n"
    "  --paper-config SPEC  replaces the built-in configs (give it once per config):\n"
    "                   \"FAMILY[:LABEL] NAME=V ...\", e.g. \"seg_matrix:PMatrix H=32 W=32 PERSIST=1\"\n";

bool parse_size(const char *s, long long *out)
{
    char *end;
    errno = 0;
    if (strncmp(s, "2^", 2) == 0) {
        long k = strtol(s + 2, &end, 10);
        if (*end || end == s + 2 || k < 0 || k > 40)
            return false;
        *out = 1LL << k;
        return true;
    }
    long long v = strtoll(s, &end, 10);
    if (end == s || errno || v < 1)
        return false;
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M') shift = 20, end++;
    else if (*end == 'G') shift = 30, end++;
    if (*end || v > (1LL << 40) >> shift)
        return false;
    *out = v << shift;
    return true;
}

std::vector<std::string> split(const char *s)
{
    std::vector<std::string> v;
    std::string cur;
    for (const char *p = s;; p++) {
        if (*p == ',' || *p == 0) {
            size_t a = cur.find_first_not_of(" \t"), b = cur.find_last_not_of(" \t");
            if (a != std::string::npos)
                v.push_back(cur.substr(a, b - a + 1));
            cur.clear();
            if (!*p)
                break;
        } else {
            cur += *p;
        }
    }
    return v;
}

const char *need_arg(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        usage_error("%s wants a value", argv[*i]);
    return argv[++*i];
}

options parse_args(int argc, char **argv)
{
    options o;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(USAGE, stdout);
            exit(0);
        } else if (!strcmp(a, "--api")) {
            o.api = true;
        } else if (!strcmp(a, "--db")) {
            o.db = need_arg(argc, argv, &i);
        } else if (!strcmp(a, "--csv")) {
            o.csv = need_arg(argc, argv, &i);
        } else if (!strcmp(a, "--device")) {
            const char *v = need_arg(argc, argv, &i);
            char *end;
            long d = strtol(v, &end, 10);
            if (end == v || *end || d < 0 || d > 1024)
                usage_error("--device wants a GPU ordinal, not '%s'", v);
            o.device = (int)d;
        } else if (!strcmp(a, "--reps")) {
            const char *v = need_arg(argc, argv, &i);
            char *end;
            long r = strtol(v, &end, 10);
            if (end == v || *end || r < 1 || r > 100000)
                usage_error("--reps wants a count in 1..100000, not '%s'", v);
            o.reps = (int)r;
        } else if (!strcmp(a, "--seed")) {
            const char *v = need_arg(argc, argv, &i);
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 10);
            if (end == v || *end || errno || v[0] == '-')
                usage_error("--seed wants a non-negative integer, not '%s'", v);
            o.seed = s;
        } else if (!strcmp(a, "--sizes")) {
            o.sizes.clear();
            for (const std::string &t : split(need_arg(argc, argv, &i))) {
                long long n;
                if (!parse_size(t.c_str(), &n))
                    usage_error("--sizes: '%s' is not a size (1000, 2^20, 4M; up to 2^40)", t.c_str());
                o.sizes.push_back(n);
            }
            if (o.sizes.empty())
                usage_error("--sizes: empty list");
        } else if (!strcmp(a, "--ops")) {
            o.ops.clear();
            for (const std::string &t : split(need_arg(argc, argv, &i))) {
                int op = optype_parse_op(t.c_str());
                if (op != RT_MIN && op != RT_SUM && op != RT_MAX)
                    usage_error("--ops: '%s' is not one of min, sum, max (CUB's DeviceReduce "
                                "has those three)", t.c_str());
                o.ops.push_back((rt_op)op);
            }
            if (o.ops.empty())
                usage_error("--ops: empty list");
        } else if (!strcmp(a, "--types")) {
            o.types.clear();
            for (const std::string &t : split(need_arg(argc, argv, &i))) {
                int ty = optype_parse_type(t.c_str());
                if (ty < 0 || ty > RT_U64)
                    usage_error("--types: '%s' is not one of f32, f64, i32, u32, i64, u64", t.c_str());
                o.types.push_back((rt_type)ty);
            }
            if (o.types.empty())
                usage_error("--types: empty list");
        } else if (!strcmp(a, "--regimes")) {
            o.regimes.clear();
            for (const std::string &t : split(need_arg(argc, argv, &i))) {
                if (t == "cold")
                    o.regimes.push_back(0);
                else if (t == "hot")
                    o.regimes.push_back(1);
                else
                    usage_error("--regimes: '%s' is not cold or hot", t.c_str());
            }
            if (o.regimes.empty())
                usage_error("--regimes: empty list");
        } else if (!strcmp(a, "--spin-cycles")) {
            const char *v = need_arg(argc, argv, &i);
            char *end;
            errno = 0;
            unsigned long long c = strtoull(v, &end, 10);
            if (end == v || *end || errno || v[0] == '-' || c > 2000000000ULL)
                usage_error("--spin-cycles wants a count of clock cycles, not '%s'", v);
            o.spin_cycles = c;
        } else if (!strcmp(a, "--keep-nan")) {
            o.keep_nan = true;
        } else if (!strcmp(a, "--segmented")) {
            const char *v = need_arg(argc, argv, &i);
            int l = segdata_parse_layout(v);
            if (l != SEG_LAYOUT_KEYS && l != SEG_LAYOUT_OFFSETS)
                usage_error("--segmented wants keys or offsets, not '%s'", v);
            o.layout = l;
        } else if (!strcmp(a, "--profiles")) {
            o.profiles.clear();
            for (const std::string &t : split(need_arg(argc, argv, &i))) {
                int p = segdata_parse_profile(t.c_str());
                if (p < 0)
                    usage_error("--profiles: '%s' is not one of %s", t.c_str(), segdata_profile_list());
                o.profiles.push_back(p);
            }
            if (o.profiles.empty())
                usage_error("--profiles: empty list");
        } else if (!strcmp(a, "--paper-seg")) {
            o.paper_seg = true;
        } else if (!strcmp(a, "--paper-m")) {
            o.paper_m.clear();
            for (const std::string &t : split(need_arg(argc, argv, &i))) {
                char *end;
                long m = strtol(t.c_str(), &end, 10);
                if (end == t.c_str() || *end || m < 1 || m > 2047)
                    usage_error("--paper-m: '%s' is not an m in 1..2047 (N = m*2^20)", t.c_str());
                o.paper_m.push_back((int)m);
            }
            if (o.paper_m.empty())
                usage_error("--paper-m: empty list");
        } else if (!strcmp(a, "--paper-config")) {
            o.paper_configs.push_back(need_arg(argc, argv, &i));
        } else {
            usage_error("unknown argument '%s'", a);
        }
    }
    if (o.paper_seg && o.layout != SEG_LAYOUT_FLAT)
        usage_error("--paper-seg and --segmented are two runs: give one of them");
    if (o.paper_seg && !o.sizes.empty())
        usage_error("--paper-seg takes its sizes from --paper-m (N = m*2^20), not --sizes");
    if (!o.paper_seg && (!o.paper_m.empty() || !o.paper_configs.empty()))
        usage_error("--paper-m and --paper-config go with --paper-seg");
    if (!o.paper_seg && o.layout == SEG_LAYOUT_FLAT && !o.profiles.empty())
        usage_error("--profiles goes with --segmented keys|offsets or --paper-seg");
    if (!o.db && !o.paper_seg)
        usage_error("--db FILE is required: the redtune database whose winners are timed");
    if (o.paper_seg) {
        if (o.paper_m.empty())
            for (int m = 16; m <= 31; m++)
                o.paper_m.push_back(m);
        for (int m : o.paper_m)
            o.sizes.push_back((long long)m << 20);
        if (o.profiles.empty())
            o.profiles = {0, 1, 2};   /* one, rand10_50, len3: the paper's (a), (b), (c) */
        if (o.ops.empty())
            o.ops = {RT_MIN};
        if (o.types.empty())
            o.types = {RT_F32};
        if (o.regimes.empty())
            o.regimes = {0};
    }
    if (o.layout != SEG_LAYOUT_FLAT) {
        if (o.sizes.empty())
            o.sizes = {1LL << 20, 1LL << 24, 30LL << 20};
        if (o.profiles.empty())
            for (int p = 0; p < segdata_profile_count(); p++)
                o.profiles.push_back(p);
    }
    if (o.paper_seg || o.layout != SEG_LAYOUT_FLAT)
        for (long long n : o.sizes)
            if (n >= (1LL << 31))
                usage_error("the segmented bench takes n < 2^31 (32-bit offsets and counts for "
                            "CUB); %lld is too large", n);
    if (o.sizes.empty())
        for (int k = 10; k <= 30; k++)
            o.sizes.push_back(1LL << k);
    if (o.ops.empty())
        o.ops = {RT_MIN, RT_SUM};
    if (o.types.empty())
        o.types = {RT_F32, RT_F64, RT_I32};
    if (o.regimes.empty())
        o.regimes = {0, 1};
    return o;
}

/* ---- the winners in the database ---- */

struct winner {
    std::string hash, family, params;
    long long n = 0;
    int hot = 0;
    double median_us = 0;
    long long nseg = 0;                     /* segmented: the segmentation it was tuned on */
    double seg_mean = 0;
};

struct collect_arg {
    const char *device;
    std::vector<winner> *rows;
    const char *layout = "flat";            /* "flat", "keys:PROFILE", "offsets:PROFILE" */
};

int collect(const store_best_row *r, void *arg)
{
    collect_arg *a = (collect_arg *)arg;
    if (strcmp(r->device_name, a->device) != 0 || strcmp(r->layout, a->layout) != 0)
        return 0;
    winner w;
    w.hash = r->kernel_hash;
    w.family = r->family;
    w.params = r->params;
    w.n = r->n;
    w.hot = r->hot;
    w.median_us = r->median_us;
    w.nseg = r->nseg;
    w.seg_mean = r->seg_mean;
    a->rows->push_back(w);
    return 0;
}

/* The winner for n in the regime: exact n if tuned, else the nearest tuned size by
 * |log2 n - log2 m| (a tie goes to the larger m). Several rows at one size (two GPUs of the
 * same name): the lowest stored median. NULL when the regime has no winner at all. */
const winner *lookup(const std::vector<winner> &rows, long long n, int hot)
{
    const winner *best = NULL;
    double bd = 0;
    for (const winner &w : rows) {
        if (w.hot != hot)
            continue;
        double d = fabs(log2((double)n) - log2((double)w.n));
        if (!best || d < bd - 1e-9 || (fabs(d - bd) <= 1e-9 && (w.n > best->n ||
                                       (w.n == best->n && w.median_us < best->median_us)))) {
            best = &w;
            bd = d;
        }
    }
    return best;
}

std::string fmt_n(long long n)
{
    char b[32];
    if (n > 0 && (n & (n - 1)) == 0)
        snprintf(b, sizeof b, "2^%d", __builtin_ctzll((unsigned long long)n));
    else
        snprintf(b, sizeof b, "%lld", n);
    return b;
}

/* ---- redtune's kernels: stored CUBIN, else compiled from the stored source ---- */

struct kernel {
    int rc = RT_OK;
    std::string err;
    std::vector<unsigned char> cubin;
    rt_plan_kind kind = PLAN_MULTIPASS;
    const char *origin = "";               /* "stored" or "nvrtc" */
};

std::map<std::string, kernel> g_kernels;

/* The plan of a family this binary does not know: the "// @plan" line its template carries
 * into the stored source. */
int plan_from_source(const char *src, rt_plan_kind *kind)
{
    const char *p = strstr(src, "// @plan");
    if (!p)
        return -1;
    p += strlen("// @plan");
    while (*p == ' ' || *p == '\t')
        p++;
    if (!strncmp(p, "onelaunch", 9))
        *kind = PLAN_ONELAUNCH;
    else if (!strncmp(p, "multipass", 9))
        *kind = PLAN_MULTIPASS;
    else if (!strncmp(p, "segmented", 9))
        *kind = PLAN_SEGMENTED;
    else
        return -1;
    return 0;
}

const kernel &get_kernel(store *s, const winner &w)
{
    auto it = g_kernels.find(w.hash);
    if (it != g_kernels.end())
        return it->second;
    kernel &k = g_kernels[w.hash];
    rt_err e;
    rt_clearerr(&e);
    char *src = NULL;
    const rt_family *f = family_find(w.family.c_str());
    if (f) {
        k.kind = f->plan;
    } else {
        if ((k.rc = store_get_kernel_source(s, w.hash.c_str(), &src, &e))) {
            k.err = e.msg;
            return k;
        }
        if (plan_from_source(src, &k.kind)) {
            k.rc = RT_EINVAL;
            k.err = "family " + w.family + " is unknown to this build and its source has no @plan line";
            free(src);
            return k;
        }
    }
    store_binary b;
    memset(&b, 0, sizeof b);
    int rc = store_get_binary(s, w.hash.c_str(), G.arch, nvrtc_version(), &b, &e);
    if (rc == RT_OK) {
        k.cubin.assign((unsigned char *)b.cubin, (unsigned char *)b.cubin + b.size);
        k.origin = "stored";
        store_binary_free(&b);
    } else if (rc == RT_ENOTFOUND) {
        rt_clearerr(&e);
        if (!src && (k.rc = store_get_kernel_source(s, w.hash.c_str(), &src, &e))) {
            k.err = e.msg;
            return k;
        }
        nvrtc_output o;
        if ((k.rc = nvrtc_compile(src, w.family.c_str(), G.arch, &o, &e))) {
            k.err = e.msg;
        } else {
            k.cubin.assign((unsigned char *)o.cubin, (unsigned char *)o.cubin + o.size);
            k.origin = "nvrtc";
            nvrtc_output_free(&o);
        }
    } else {
        k.rc = rc;
        k.err = e.msg;
    }
    free(src);
    return k;
}

/* ---- CUB ---- */

template <typename T, typename N>
cudaError_t cub_op(rt_op op, void *temp, size_t &bytes, const T *in, T *out, N n, cudaStream_t s)
{
    switch (op) {
    case RT_MIN: return cub::DeviceReduce::Min(temp, bytes, in, out, n, s);
    case RT_MAX: return cub::DeviceReduce::Max(temp, bytes, in, out, n, s);
    case RT_SUM: return cub::DeviceReduce::Sum(temp, bytes, in, out, n, s);
    default: return cudaErrorInvalidValue;
    }
}

/* num_items as a 32-bit count where it fits (CUB then uses 32-bit offsets, as most callers
 * get), else 64-bit. */
template <typename T>
cudaError_t cub_typed(rt_op op, void *temp, size_t &bytes, CUdeviceptr in, CUdeviceptr out,
                      unsigned long long n, cudaStream_t s)
{
    const T *i = reinterpret_cast<const T *>(static_cast<uintptr_t>(in));
    T *o = reinterpret_cast<T *>(static_cast<uintptr_t>(out));
    if (n <= 0xffffffffULL)
        return cub_op<T, uint32_t>(op, temp, bytes, i, o, (uint32_t)n, s);
    return cub_op<T, unsigned long long>(op, temp, bytes, i, o, n, s);
}

cudaError_t cub_reduce(rt_type t, rt_op op, void *temp, size_t &bytes, CUdeviceptr in,
                       CUdeviceptr out, unsigned long long n, cudaStream_t s)
{
    switch (t) {
    case RT_F32: return cub_typed<float>(op, temp, bytes, in, out, n, s);
    case RT_F64: return cub_typed<double>(op, temp, bytes, in, out, n, s);
    case RT_I32: return cub_typed<int32_t>(op, temp, bytes, in, out, n, s);
    case RT_U32: return cub_typed<uint32_t>(op, temp, bytes, in, out, n, s);
    case RT_I64: return cub_typed<int64_t>(op, temp, bytes, in, out, n, s);
    case RT_U64: return cub_typed<uint64_t>(op, temp, bytes, in, out, n, s);
    default: return cudaErrorInvalidValue;
    }
}

/* ---- one case ---- */

enum status { ST_NONE = 0, ST_OK, ST_WRONG, ST_ERROR };

const char *status_name(int s)
{
    switch (s) {
    case ST_OK: return "ok";
    case ST_WRONG: return "wrong";
    case ST_ERROR: return "error";
    default: return "none";
    }
}

struct impl_result {
    int status = ST_NONE;
    std::string msg;
    timing t;
};

struct row {
    rt_op op;
    rt_type type;
    int hot;
    long long n;
    double bytes;
    bool skipped = false;
    std::string skip_why;
    /* redtune */
    bool have_winner = false;
    winner w;
    std::string lookup;             /* "exact", "nearest", "cold-tuned exact", ... */
    const char *origin = "";
    impl_result rt;
    /* CUB */
    size_t cub_temp = 0;
    impl_result cub;
    double limit_us = 0;
};

/* Poison the output, run once, read the result. */
template <class F>
int run_once(F &&enqueue, size_t acc, void *result, rt_err *e)
{
    CUresult r;
    if ((r = cu.MemsetD8(G.out, 0xa5, 16)) != CUDA_SUCCESS)
        return driver_fail(r, "poisoning the output", e);
    int rc = enqueue(e);
    if (rc)
        return rc;
    if ((r = cu.StreamSynchronize(G.stream)) != CUDA_SUCCESS)
        return driver_fail(r, "running the reduction", e);
    if ((r = cu.MemcpyDtoH(result, G.out, acc)) != CUDA_SUCCESS)
        return driver_fail(r, "reading the result", e);
    return RT_OK;
}

/* Verify, then time, then check the result of the last repetition again. */
template <class F>
void verify_and_time(F &&enqueue, const row &c, const data_ref &ref, const options &o,
                     impl_result *res)
{
    rt_err e;
    rt_clearerr(&e);
    size_t acc = optype_size(c.type);
    unsigned char got[16];
    char why[1024] = "";
    int rc = run_once(enqueue, acc, got, &e);
    if (rc == RT_OK && !data_check(got, &ref, c.type, c.op, (unsigned long long)c.n, why, sizeof why)) {
        res->status = ST_WRONG;
        res->msg = why;
        return;
    }
    if (rc == RT_OK) {
        int minr = o.reps ? o.reps : 10, maxr = o.reps ? o.reps : 200;
        double budget = o.reps ? 0 : 0.25;
        rc = time_reps(enqueue, c.hot, minr, maxr, budget, &res->t, &e);
    }
    if (rc == RT_OK) {
        CUresult r = cu.MemcpyDtoH(got, G.out, acc);
        if (r != CUDA_SUCCESS)
            rc = driver_fail(r, "reading the result", &e);
        else if (!data_check(got, &ref, c.type, c.op, (unsigned long long)c.n, why, sizeof why)) {
            res->status = ST_WRONG;
            res->msg = std::string("after the timed repetitions: ") + why;
            return;
        }
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

void run_redtune(store *s, row &c, CUdeviceptr in, const data_ref &ref, const options &o)
{
    const kernel &k = get_kernel(s, c.w);
    if (k.rc) {
        c.rt.status = ST_ERROR;
        c.rt.msg = k.err;
        return;
    }
    c.origin = k.origin;
    rt_err e;
    rt_clearerr(&e);
    plan p;
    if (plan_load(&p, k.cubin.data(), k.kind, optype_size(c.type), G.dev.sm_count, &e)) {
        if (e.code == RT_EFAULT)
            die("%s: %s", g_where, e.msg);
        c.rt.status = ST_ERROR;
        c.rt.msg = e.msg;
        return;
    }
    unsigned long long n = (unsigned long long)c.n;
    CUresult r;
    int rc = measure_ensure_temp(&G, plan_temp_bytes(&p, n), &e);
    /* The one-launch counter in the first 256 bytes must be zero before the first launch. */
    if (rc == RT_OK && (r = cu.MemsetD8(G.temp, 0, 256)) != CUDA_SUCCESS)
        rc = driver_fail(r, "clearing the counter", &e);
    if (rc) {
        c.rt.status = ST_ERROR;
        c.rt.msg = e.msg;
    } else {
        auto enqueue = [&](rt_err *err) {
            return plan_launch(&p, in, G.out, n, G.temp, G.stream, err);
        };
        verify_and_time(enqueue, c, ref, o, &c.rt);
    }
    plan_unload(&p);
}

void run_cub(row &c, CUdeviceptr in, const data_ref &ref, const options &o)
{
    unsigned long long n = (unsigned long long)c.n;
    cudaStream_t s = (cudaStream_t)G.stream;
    rt_err e;
    rt_clearerr(&e);
    size_t bytes = 0;
    cudaError_t cr = cub_reduce(c.type, c.op, NULL, bytes, in, G.out, n, s);
    if (cr != cudaSuccess) {
        rt_fail(cr, "cub::DeviceReduce (temp storage size)", &e);
        c.cub.status = ST_ERROR;
        c.cub.msg = e.msg;
        return;
    }
    c.cub_temp = bytes;
    CUdeviceptr temp = 0;
    CUresult r = cu.MemAlloc(&temp, bytes ? bytes : 16);
    if (r != CUDA_SUCCESS) {
        driver_fail(r, "allocating CUB's temporary storage", &e);
        c.cub.status = ST_ERROR;
        c.cub.msg = e.msg;
        return;
    }
    void *tp = reinterpret_cast<void *>(static_cast<uintptr_t>(temp));
    auto enqueue = [&](rt_err *err) {
        size_t b = bytes;
        cudaError_t lr = cub_reduce(c.type, c.op, tp, b, in, G.out, n, s);
        return lr == cudaSuccess ? RT_OK : rt_fail(lr, "cub::DeviceReduce", err);
    };
    verify_and_time(enqueue, c, ref, o, &c.cub);
    cu.MemFree(temp);
}

/* The tuner's float data for min/max holds about one NaN in 4096 (redtune follows fmin/fmax
 * and ignores it); CUB's Min/Max use operator<, with which a NaN's effect depends on the
 * order of the tree. Replace them by 0 (inside the data's range, never the planted extreme)
 * before the reference is computed, so both are checked against the same exact answer. */
void scrub_nan(void *buf, rt_type t, unsigned long long n, int threads)
{
    if (t != RT_F32 && t != RT_F64)
        return;
    std::vector<std::thread> pool;
    unsigned long long chunk = (n + threads - 1) / threads;
    for (int k = 0; k < threads; k++) {
        unsigned long long a = k * chunk, b = std::min(n, a + chunk);
        if (a >= b)
            break;
        pool.emplace_back([=] {
            if (t == RT_F32) {
                float *f = (float *)buf;
                for (unsigned long long i = a; i < b; i++)
                    if (std::isnan(f[i]))
                        f[i] = 0.0f;
            } else {
                double *d = (double *)buf;
                for (unsigned long long i = a; i < b; i++)
                    if (std::isnan(d[i]))
                        d[i] = 0.0;
            }
        });
    }
    for (std::thread &th : pool)
        th.join();
}

/* ---- output ---- */

const char *regime_name(int hot) { return hot ? "hot" : "cold"; }

void csv_field(FILE *f, const std::string &s)
{
    if (s.find_first_of(",\"\n") == std::string::npos) {
        fputs(s.c_str(), f);
        return;
    }
    fputc('"', f);
    for (char ch : s) {
        if (ch == '"')
            fputc('"', f);
        fputc(ch == '\n' ? ' ' : ch, f);
    }
    fputc('"', f);
}

const char CSV_HEADER[] =
    "device,arch,op,type,regime,n,bytes,limit_us,read_gbps,"
    "redtune_status,redtune_us,redtune_min_us,redtune_max_us,redtune_reps,redtune_frac_read,"
    "family,params,kernel_hash,lookup,tuned_n,tuned_regime,tuned_median_us,cubin,"
    "cub_status,cub_us,cub_min_us,cub_max_us,cub_reps,cub_frac_read,cub_temp_bytes,"
    "ratio_redtune_cub,message\n";

void csv_row(FILE *f, const row &c, double read_gbps)
{
    if (!f)
        return;
    std::string msg;
    if (c.skipped)
        msg = c.skip_why;
    if (!c.rt.msg.empty())
        msg += "redtune: " + c.rt.msg;
    if (!c.cub.msg.empty())
        msg += std::string(msg.empty() ? "" : "; ") + "cub: " + c.cub.msg;
    csv_field(f, G.dev.name);
    fprintf(f, ",%s,%s,%s,%s,%lld,%.0f,%.4f,%.2f,", G.arch, rt_op_name(c.op), rt_type_name(c.type),
            regime_name(c.hot), c.n, c.bytes, c.limit_us, read_gbps);
    fprintf(f, "%s,", c.skipped ? "skipped" : c.have_winner ? status_name(c.rt.status) : "no-winner");
    if (c.rt.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,", c.rt.t.median_us, c.rt.t.min_us, c.rt.t.max_us,
                c.rt.t.reps, c.limit_us / c.rt.t.median_us);
    else
        fprintf(f, ",,,,,");
    if (c.have_winner) {
        csv_field(f, c.w.family);
        fputc(',', f);
        csv_field(f, c.w.params);
        fprintf(f, ",%s,%s,%lld,%s,%.3f,%s,", c.w.hash.c_str(), c.lookup.c_str(), c.w.n,
                regime_name(c.w.hot), c.w.median_us, c.origin);
    } else {
        fprintf(f, ",,,,,,,,");
    }
    fprintf(f, "%s,", c.skipped ? "skipped" : status_name(c.cub.status));
    if (c.cub.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,%zu,", c.cub.t.median_us, c.cub.t.min_us,
                c.cub.t.max_us, c.cub.t.reps, c.limit_us / c.cub.t.median_us, c.cub_temp);
    else
        fprintf(f, ",,,,,,");
    if (c.rt.status == ST_OK && c.cub.status == ST_OK)
        fprintf(f, "%.4f,", c.rt.t.median_us / c.cub.t.median_us);
    else
        fputc(',', f);
    csv_field(f, msg);
    fputc('\n', f);
    fflush(f);
}

std::string fmt_time(const impl_result &r, bool have)
{
    char b[32];
    if (!have)
        return "-";
    switch (r.status) {
    case ST_OK: snprintf(b, sizeof b, "%.2f", r.t.median_us); return b;
    case ST_WRONG: return "WRONG";
    case ST_ERROR: return "ERROR";
    default: return "-";
    }
}

void print_table(const std::vector<row> &rows, rt_op op, rt_type type, int hot, double read_gbps)
{
    printf("\n%s %s, %s; limit = bytes / %.1f GB/s; times are medians in microseconds\n",
           rt_op_name(op), rt_type_name(type),
           hot ? "hot (L2 not flushed; rt_spin before the start event)"
               : "cold (L2 flushed before each repetition)", read_gbps);
    printf("%12s %6s %11s %11s %11s %7s %8s %8s  %s\n", "n", "", "redtune", "CUB", "limit",
           "rt/CUB", "rt%read", "CUB%read", "redtune winner: family params [lookup]");
    for (const row &c : rows) {
        if (c.op != op || c.type != type || c.hot != hot)
            continue;
        if (c.skipped) {
            printf("%12lld %6s  skipped: %s\n", c.n, fmt_n(c.n).c_str(), c.skip_why.c_str());
            continue;
        }
        char ratio[32] = "-", rtp[32] = "-", cubp[32] = "-";
        if (c.rt.status == ST_OK && c.cub.status == ST_OK) {
            double q = c.rt.t.median_us / c.cub.t.median_us;
            snprintf(ratio, sizeof ratio, "%.2f%s", q, q > 1.0 ? "*" : " ");
        }
        if (c.rt.status == ST_OK)
            snprintf(rtp, sizeof rtp, "%.1f%%", 100.0 * c.limit_us / c.rt.t.median_us);
        if (c.cub.status == ST_OK)
            snprintf(cubp, sizeof cubp, "%.1f%%", 100.0 * c.limit_us / c.cub.t.median_us);
        std::string win = "(no winner in the database)";
        if (c.have_winner)
            win = c.w.family + " " + c.w.params + " [" + c.lookup + "]";
        printf("%12lld %6s %11s %11s %11.3f %7s %8s %8s  %s\n", c.n, fmt_n(c.n).c_str(),
               fmt_time(c.rt, c.have_winner).c_str(), fmt_time(c.cub, true).c_str(), c.limit_us,
               ratio, rtp, cubp, win.c_str());
        if (c.rt.status == ST_WRONG || c.rt.status == ST_ERROR)
            printf("%19s redtune %s: %s\n", "", c.rt.status == ST_WRONG ? "WRONG" : "ERROR", c.rt.msg.c_str());
        if (c.cub.status == ST_WRONG || c.cub.status == ST_ERROR)
            printf("%19s CUB %s: %s\n", "", c.cub.status == ST_WRONG ? "WRONG" : "ERROR", c.cub.msg.c_str());
    }
    fflush(stdout);
}

void print_summary(const std::vector<row> &rows, const options &o)
{
    printf("\nsummary: redtune / CUB, the ratio of median times (below 1: redtune faster; "
           "* in the tables: redtune slower)\n");
    int slower_all = 0, pairs_all = 0, wrong_rt = 0, wrong_cub = 0, errors = 0, missing = 0;
    for (rt_op op : o.ops)
        for (rt_type type : o.types)
            for (int hot : o.regimes) {
                double logsum = 0;
                int pairs = 0;
                double lo = 0, hi = 0;
                long long lo_n = 0, hi_n = 0;
                std::string slower;
                int nslower = 0;
                for (const row &c : rows) {
                    if (c.op != op || c.type != type || c.hot != hot || c.skipped)
                        continue;
                    wrong_rt += c.rt.status == ST_WRONG;
                    wrong_cub += c.cub.status == ST_WRONG;
                    errors += (c.rt.status == ST_ERROR) + (c.cub.status == ST_ERROR);
                    missing += !c.have_winner;
                    if (c.rt.status != ST_OK || c.cub.status != ST_OK)
                        continue;
                    double q = c.rt.t.median_us / c.cub.t.median_us;
                    logsum += log(q);
                    if (!pairs || q < lo)
                        lo = q, lo_n = c.n;
                    if (!pairs || q > hi)
                        hi = q, hi_n = c.n;
                    pairs++;
                    if (q > 1.0) {
                        char b[64];
                        snprintf(b, sizeof b, "%s%s (%.2f)", nslower ? ", " : "", fmt_n(c.n).c_str(), q);
                        slower += b;
                        nslower++;
                    }
                }
                printf("  %-4s %-3s %-4s: ", rt_op_name(op), rt_type_name(type), regime_name(hot));
                if (!pairs) {
                    printf("no size with both timed\n");
                    continue;
                }
                printf("%2d sizes, geomean %.2f, from %.2f (%s) to %.2f (%s); ", pairs,
                       exp(logsum / pairs), lo, fmt_n(lo_n).c_str(), hi, fmt_n(hi_n).c_str());
                if (nslower)
                    printf("SLOWER than CUB at %s\n", slower.c_str());
                else
                    printf("never slower than CUB\n");
                slower_all += nslower;
                pairs_all += pairs;
            }
    printf("  redtune slower than CUB in %d of %d cases timed side by side", slower_all, pairs_all);
    printf("; WRONG: redtune %d, CUB %d; errors %d; cases without a winner %d\n", wrong_rt,
           wrong_cub, errors, missing);
}

/* ==== segmented: --segmented keys|offsets and --paper-seg (docs/bench.md, "Segmented") ====
 *
 * One case is (n, profile, op, type): the segmentation from segdata_make (seeded, the same
 * for every op and type at this n), the values from data_fill (NaNs scrubbed for min/max as
 * above), the per-segment references from segdata_reference. Every implementation is
 * verified against them on poisoned outputs before it is timed, and again after.
 *
 *   redtune (--segmented)  the database's winner for layout "keys:PROFILE" or
 *                          "offsets:PROFILE" nearest in n, launched with plan_seg_launch
 *                          (rt_seg, then rt_seg_fix), its outputs followed by SEG_GUARD
 *                          poisoned accumulators that must stay untouched (tuner/worker.c);
 *   CUB, keys              cub::DeviceReduce::ReduceByKey over the u32 keys: unique keys,
 *                          aggregates and the run count out; its runs are the non-empty
 *                          segments in order, checked segment by segment;
 *   CUB, offsets           cub::DeviceSegmentedReduce with begin = offsets, end = offsets + 1
 *                          (32-bit): Sum for sum; for min and max ::Reduce with
 *                          cuda::minimum<> / cuda::maximum<> and redtune's identity as the
 *                          initial value, which is the kernel ::Min / ::Max instantiate (the
 *                          same operator, the same types) except that an empty float segment
 *                          gives +inf (redtune's identity) rather than FLT_MAX;
 *   limit                  segdata_bytes (values + keys or 32-bit offsets + one output per
 *                          segment) / the measured read bandwidth.
 *
 * --paper-seg times the paper's segmented families at fixed configs (paper_default_configs),
 * generated by codegen_emit and compiled by NVRTC here, on keys, N = m * 2^20. */

#define SEG_GUARD 64
#define SEG_POISON 0xa5

/* A device buffer that only grows. */
struct dbuf {
    CUdeviceptr p = 0;
    size_t bytes = 0;
};

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

struct seg_buffers {
    dbuf in, keys, off32, off64, out, unique, aggr, nruns, cub_temp;
};
seg_buffers SB;

template <typename T>
T *dptr(CUdeviceptr p)
{
    return reinterpret_cast<T *>(static_cast<uintptr_t>(p));
}

/* One case, shared by every implementation timed on it. */
struct seg_case {
    int layout = SEG_LAYOUT_KEYS;
    int profile = 0;
    rt_op op = RT_MIN;
    rt_type type = RT_F32;
    seg_data d;
    seg_ref *refs = NULL;
    size_t esize = 4, acc = 4;
    unsigned long long nonempty = 0;    /* the runs ReduceByKey must find */
    bool off64_ready = false;           /* SB.off64 holds this case's 64-bit offsets */
    std::vector<unsigned char> host_out;
};

std::string fmt_seg_n(long long n)
{
    char b[32];
    if (n > 0 && (n & (n - 1)) == 0)
        snprintf(b, sizeof b, "2^%d", __builtin_ctzll((unsigned long long)n));
    else if (n > 0 && n % (1LL << 20) == 0)
        snprintf(b, sizeof b, "%lld*2^20", n >> 20);
    else
        snprintf(b, sizeof b, "%lld", n);
    return b;
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
int seg_parallel(unsigned long long nseg, F &&part)
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
int seg_check_all(const unsigned char *got, const seg_case &c, char *why, size_t len)
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
int poison_rbk(const seg_case &c, rt_err *e)
{
    CUresult r;
    if ((r = cu.MemsetD8(SB.aggr.p, SEG_POISON, (c.d.nseg + 1) * c.acc)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(SB.unique.p, SEG_POISON, (c.d.nseg + 1) * 4)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(SB.nruns.p, SEG_POISON, 8)) != CUDA_SUCCESS)
        return driver_fail(r, "poisoning CUB's outputs", e);
    return RT_OK;
}

int check_rbk(seg_case &c, std::string *why, int *ok, rt_err *e)
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
template <class F, class P, class C>
void seg_verify_and_time(F &&enqueue, P &&poison, C &&check, int hot, const options &o,
                         impl_result *res)
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
        int minr = o.reps ? o.reps : 10, maxr = o.reps ? o.reps : 200;
        double budget = o.reps ? 0 : 0.25;
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

/* A segmented plan (redtune's winner or a paper config) on the case. */
void run_seg_plan(const plan *p, seg_case &c, int off64, int hot, const options &o,
                  impl_result *res)
{
    rt_err e;
    rt_clearerr(&e);
    int rc = measure_ensure_temp(&G, plan_seg_temp_bytes(p, c.d.n, c.d.nseg), &e);
    if (rc == RT_OK && off64 && c.layout == SEG_LAYOUT_OFFSETS)
        rc = upload_off64(c, &e);
    if (rc) {
        res->status = ST_ERROR;
        res->msg = e.msg;
        return;
    }
    CUdeviceptr seg = c.layout == SEG_LAYOUT_KEYS ? SB.keys.p : off64 ? SB.off64.p : SB.off32.p;
    unsigned long long n = c.d.n, nseg = c.d.nseg;
    auto enqueue = [&](rt_err *err) {
        return plan_seg_launch(p, SB.in.p, seg, n, nseg, SB.out.p, G.temp, G.stream, err);
    };
    auto poison = [&](rt_err *err) { return poison_out(c, err); };
    auto check = [&](std::string *why, int *ok, rt_err *err) { return check_direct(c, why, ok, err); };
    seg_verify_and_time(enqueue, poison, check, hot, o, res);
}

/* ---- CUB's segmented reductions ---- */

template <typename T, typename Op>
cudaError_t cub_rbk_t(void *temp, size_t &bytes, const seg_case &c, Op op, cudaStream_t s)
{
    return cub::DeviceReduce::ReduceByKey(temp, bytes, dptr<const uint32_t>(SB.keys.p),
                                          dptr<uint32_t>(SB.unique.p), dptr<const T>(SB.in.p),
                                          dptr<T>(SB.aggr.p), dptr<uint32_t>(SB.nruns.p), op,
                                          (uint32_t)c.d.n, s);
}

template <typename T>
cudaError_t cub_rbk_op(void *temp, size_t &bytes, const seg_case &c, cudaStream_t s)
{
    switch (c.op) {
    case RT_MIN: return cub_rbk_t<T>(temp, bytes, c, cuda::minimum<>{}, s);
    case RT_MAX: return cub_rbk_t<T>(temp, bytes, c, cuda::maximum<>{}, s);
    case RT_SUM: return cub_rbk_t<T>(temp, bytes, c, cuda::std::plus<>{}, s);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T>
cudaError_t cub_segred_op(void *temp, size_t &bytes, const seg_case &c, cudaStream_t s)
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

cudaError_t cub_seg(const seg_case &c, void *temp, size_t &bytes, cudaStream_t s)
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
double seg_case_device_bytes(const seg_data &d, size_t esize, size_t acc)
{
    return (double)d.n * esize + (double)d.n * 4 + (double)(d.nseg + 1) * 12 +
           (double)(d.nseg + SEG_GUARD) * acc * 2 + (double)(d.nseg + 1) * 4;
}

uint64_t seg_seed(const options &o, long long n, int profile)
{
    return o.seed ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL ^ 0x5e65e65e65e6ULL ^
           (uint64_t)(profile + 1) * 0xd1b54a32d192ed03ULL;
}

uint64_t value_seed(const options &o, long long n, rt_op op, rt_type type)
{
    return o.seed ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL ^
           ((uint64_t)op << 8 | (uint64_t)type) * 0xd1b54a32d192ed03ULL;
}

/* Walk the cases: for each n and profile the segmentation (uploaded as keys and as 32-bit
 * offsets), for each op and type the values and references; 'fn(c, skip_why)' runs the
 * implementations (skip_why non-empty: the case does not fit on this GPU). */
template <class F>
void seg_walk(const options &o, const std::vector<int> &layouts, F &&fn)
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

/* Loaded plans by kernel hash (the winners), loaded once. */
struct loaded_plan {
    int rc = RT_OK;
    std::string err;
    plan p;
};
std::map<std::string, loaded_plan> g_plans;

const loaded_plan &get_plan(store *s, const winner &w, size_t acc, const char **origin)
{
    auto it = g_plans.find(w.hash);
    if (it != g_plans.end()) {
        *origin = g_kernels[w.hash].origin;
        return it->second;
    }
    loaded_plan &lp = g_plans[w.hash];
    const kernel &k = get_kernel(s, w);
    *origin = k.origin;
    if (k.rc) {
        lp.rc = k.rc;
        lp.err = k.err;
        return lp;
    }
    if (k.kind != PLAN_SEGMENTED) {
        lp.rc = RT_EINVAL;
        lp.err = "the stored winner " + w.family + " is not a segmented family (@plan " +
                 family_plan_name(k.kind) + ")";
        return lp;
    }
    rt_err e;
    rt_clearerr(&e);
    if ((lp.rc = plan_load(&lp.p, k.cubin.data(), k.kind, acc, G.dev.sm_count, &e))) {
        if (e.code == RT_EFAULT)
            die("%s: %s", g_where, e.msg);
        lp.err = e.msg;
    }
    return lp;
}

/* OFF64=1 in a stored parameter string. */
int params_off64(const std::string &params)
{
    size_t at = params.find("OFF64=");
    return at != std::string::npos && (at == 0 || params[at - 1] == ' ') &&
           params.compare(at + 6, 1, "1") == 0;
}

std::string seg_layout_key(int layout, int profile)
{
    return std::string(segdata_layout_name(layout)) + ":" + segdata_profile_name(profile);
}

/* The winners for (op, type, "layout:profile"), read once. */
std::map<std::string, std::vector<winner>> g_seg_winners;

const std::vector<winner> &seg_winners(store *db, rt_op op, rt_type type, int layout, int profile)
{
    std::string key = std::string(rt_op_name(op)) + " " + rt_type_name(type) + " " +
                      seg_layout_key(layout, profile);
    auto it = g_seg_winners.find(key);
    if (it != g_seg_winners.end())
        return it->second;
    std::vector<winner> &v = g_seg_winners[key];
    if (db) {
        std::string lk = seg_layout_key(layout, profile);
        collect_arg a = {G.dev.name, &v, lk.c_str()};
        rt_err e;
        rt_clearerr(&e);
        if (store_list_best(db, G.dev.name, rt_op_name(op), rt_type_name(type), 0, collect, &a, &e))
            die("%s", e.msg);
    }
    return v;
}

/* The winner of the case's layout and profile for n in the regime (the flat bench's rules). */
struct seg_redtune {
    bool have = false;
    winner w;
    std::string lookup;
    const char *origin = "";
    int off64 = 0;
    impl_result res;
};

void run_seg_winner(store *db, seg_case &c, int layout, int hot, const options &o, seg_redtune *out)
{
    const std::vector<winner> &wins = seg_winners(db, c.op, c.type, layout, c.profile);
    long long n = (long long)c.d.n;
    const winner *w = lookup(wins, n, hot);
    const char *from = "";
    if (!w && (w = lookup(wins, n, !hot)))
        from = hot ? "cold-tuned " : "hot-tuned ";
    if (!w)
        return;
    out->have = true;
    out->w = *w;
    out->lookup = std::string(from) + (w->n == n ? "exact" : "nearest " + fmt_seg_n(w->n));
    out->off64 = layout == SEG_LAYOUT_OFFSETS && params_off64(w->params);
    const loaded_plan &lp = get_plan(db, *w, c.acc, &out->origin);
    if (lp.rc) {
        out->res.status = ST_ERROR;
        out->res.msg = lp.err;
        return;
    }
    watch(120 + (unsigned)(n / 10000000), "redtune %s %s %s n = %s %s (%s %s)", rt_op_name(c.op),
          rt_type_name(c.type), seg_layout_key(layout, c.profile).c_str(), fmt_seg_n(n).c_str(),
          regime_name(hot), w->family.c_str(), w->params.c_str());
    run_seg_plan(&lp.p, c, out->off64, hot, o, &out->res);
    alarm(0);
}

/* ---- --segmented keys|offsets ---- */

struct segrow {
    int layout = 0, profile = 0;
    rt_op op = RT_MIN;
    rt_type type = RT_F32;
    int hot = 0;
    long long n = 0;
    unsigned long long nseg = 0;
    double mean = 0, bytes = 0, limit_us = 0;
    bool skipped = false;
    std::string skip_why;
    seg_redtune rt;
    size_t cub_temp = 0;
    impl_result cub;
};

const char SEG_CSV_HEADER[] =
    "device,arch,layout,profile,op,type,regime,n,nseg,seg_mean,bytes,limit_us,read_gbps,"
    "redtune_status,redtune_us,redtune_min_us,redtune_max_us,redtune_reps,redtune_over_limit,"
    "family,params,kernel_hash,lookup,tuned_n,tuned_nseg,tuned_regime,tuned_median_us,cubin,off64,"
    "cub_impl,cub_status,cub_us,cub_min_us,cub_max_us,cub_reps,cub_over_limit,cub_temp_bytes,"
    "ratio_redtune_cub,message\n";

void seg_csv_row(FILE *f, const segrow &c, double read_gbps)
{
    if (!f)
        return;
    std::string msg = c.skipped ? c.skip_why : "";
    if (!c.skipped && !c.rt.have)
        msg = "no winner in the database for " + seg_layout_key(c.layout, c.profile);
    if (!c.rt.res.msg.empty())
        msg += "redtune: " + c.rt.res.msg;
    if (!c.cub.msg.empty())
        msg += std::string(msg.empty() ? "" : "; ") + "cub: " + c.cub.msg;
    csv_field(f, G.dev.name);
    fprintf(f, ",%s,%s,%s,%s,%s,%s,%lld,%llu,%.3f,%.0f,%.4f,%.2f,", G.arch,
            segdata_layout_name(c.layout), segdata_profile_name(c.profile), rt_op_name(c.op),
            rt_type_name(c.type), regime_name(c.hot), c.n, c.nseg, c.mean, c.bytes, c.limit_us,
            read_gbps);
    fprintf(f, "%s,", c.skipped ? "skipped" : c.rt.have ? status_name(c.rt.res.status) : "no-winner");
    if (c.rt.res.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,", c.rt.res.t.median_us, c.rt.res.t.min_us,
                c.rt.res.t.max_us, c.rt.res.t.reps, c.rt.res.t.median_us / c.limit_us);
    else
        fprintf(f, ",,,,,");
    if (c.rt.have) {
        csv_field(f, c.rt.w.family);
        fputc(',', f);
        csv_field(f, c.rt.w.params);
        fprintf(f, ",%s,%s,%lld,%lld,%s,%.3f,%s,%d,", c.rt.w.hash.c_str(), c.rt.lookup.c_str(),
                c.rt.w.n, c.rt.w.nseg, regime_name(c.rt.w.hot), c.rt.w.median_us, c.rt.origin,
                c.rt.off64);
    } else {
        fprintf(f, ",,,,,,,,,,");
    }
    fprintf(f, "%s,%s,", cub_seg_name(c.layout), c.skipped ? "skipped" : status_name(c.cub.status));
    if (c.cub.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,%zu,", c.cub.t.median_us, c.cub.t.min_us,
                c.cub.t.max_us, c.cub.t.reps, c.cub.t.median_us / c.limit_us, c.cub_temp);
    else
        fprintf(f, ",,,,,,");
    if (c.rt.res.status == ST_OK && c.cub.status == ST_OK)
        fprintf(f, "%.4f,", c.rt.res.t.median_us / c.cub.t.median_us);
    else
        fputc(',', f);
    csv_field(f, msg);
    fputc('\n', f);
    fflush(f);
}

std::string fmt_us(const impl_result &r, bool have)
{
    return fmt_time(r, have);
}

void print_seg_table(const std::vector<segrow> &rows, int layout, rt_op op, rt_type type, int hot,
                     double read_gbps)
{
    printf("\n%s, %s %s, %s; limit = bytes that must move / %.1f GB/s; medians in microseconds\n",
           layout == SEG_LAYOUT_KEYS ? "keys (CUB: DeviceReduce::ReduceByKey)"
                                     : "offsets (CUB: DeviceSegmentedReduce)",
           rt_op_name(op), rt_type_name(type),
           hot ? "hot (L2 not flushed)" : "cold (L2 flushed before each repetition)", read_gbps);
    printf("%-9s %9s %9s %8s %10s %10s %10s %7s %7s %7s  %s\n", "profile", "n", "nseg", "mean",
           "redtune", "CUB", "limit", "rt/CUB", "rt/lim", "CUB/lim",
           "redtune winner: family params [lookup]");
    for (const segrow &c : rows) {
        if (c.layout != layout || c.op != op || c.type != type || c.hot != hot)
            continue;
        if (c.skipped) {
            printf("%-9s %9s  skipped: %s\n", segdata_profile_name(c.profile),
                   fmt_seg_n(c.n).c_str(), c.skip_why.c_str());
            continue;
        }
        char ratio[32] = "-", rl[32] = "-", cl[32] = "-";
        if (c.rt.res.status == ST_OK && c.cub.status == ST_OK) {
            double q = c.rt.res.t.median_us / c.cub.t.median_us;
            snprintf(ratio, sizeof ratio, "%.2f%s", q, q > 1.0 ? "*" : " ");
        }
        if (c.rt.res.status == ST_OK)
            snprintf(rl, sizeof rl, "%.2f", c.rt.res.t.median_us / c.limit_us);
        if (c.cub.status == ST_OK)
            snprintf(cl, sizeof cl, "%.2f", c.cub.t.median_us / c.limit_us);
        std::string win = "(no winner in the database for " + seg_layout_key(layout, c.profile) + ")";
        if (c.rt.have)
            win = c.rt.w.family + " " + c.rt.w.params + " [" + c.rt.lookup + "]";
        printf("%-9s %9s %9llu %8.1f %10s %10s %10.2f %7s %7s %7s  %s\n",
               segdata_profile_name(c.profile), fmt_seg_n(c.n).c_str(), c.nseg, c.mean,
               fmt_us(c.rt.res, c.rt.have).c_str(), fmt_us(c.cub, true).c_str(), c.limit_us,
               ratio, rl, cl, win.c_str());
        if (c.rt.res.status == ST_WRONG || c.rt.res.status == ST_ERROR)
            printf("%10s redtune %s: %s\n", "", c.rt.res.status == ST_WRONG ? "WRONG" : "ERROR",
                   c.rt.res.msg.c_str());
        if (c.cub.status == ST_WRONG || c.cub.status == ST_ERROR)
            printf("%10s CUB %s: %s\n", "", c.cub.status == ST_WRONG ? "WRONG" : "ERROR",
                   c.cub.msg.c_str());
    }
    fflush(stdout);
}

/* The issue's goals (docs/bench.md): f32 min, cold, n = 30 * 2^20, the paper's three
 * scenarios. keys: redtune <= 0.65 x ReduceByKey; offsets: redtune <= 1.25 x the limit. */
const long long GOAL_N = 30LL << 20;

bool is_goal_row(const segrow &r)
{
    return r.profile <= 2 && r.op == RT_MIN && r.type == RT_F32 && r.hot == 0 && r.n == GOAL_N;
}

/* One GOAL line for 'layout' and 'profile' from its row (NULL: not run); returns 1 PASS,
 * 0 MISS, -1 not measured. */
int print_goal(const segrow *c, int layout, int profile)
{
    bool keys = layout == SEG_LAYOUT_KEYS;
    printf("GOAL %s %-9s ", segdata_layout_name(layout), segdata_profile_name(profile));
    std::string why;
    if (!c)
        why = "this run did not time f32 min cold at n = 30*2^20 with this profile";
    else if (c->skipped)
        why = c->skip_why;
    else if (!c->rt.have)
        why = "no winner in the database for " + seg_layout_key(layout, profile) + " f32 min";
    else if (c->rt.res.status != ST_OK)
        why = std::string("redtune ") + (c->rt.res.status == ST_WRONG ? "WRONG" : "ERROR") + ": " +
              c->rt.res.msg;
    else if (keys && c->cub.status != ST_OK)
        why = std::string("CUB ") + (c->cub.status == ST_WRONG ? "WRONG" : "ERROR") + ": " +
              c->cub.msg;
    if (!why.empty()) {
        printf("NOT MEASURED: %s\n", why.c_str());
        fflush(stdout);
        return -1;
    }
    double rt = c->rt.res.t.median_us;
    double base = keys ? c->cub.t.median_us : c->limit_us, bound = keys ? 0.65 : 1.25;
    double q = rt / base;
    bool ok = q <= bound;
    printf("%s: redtune %.2f us / %s %.2f us = %.3f (%s %.2f); nseg %llu; %s %s [%s]\n",
           ok ? "PASS" : "MISS", rt, keys ? "ReduceByKey" : "limit", base, q, ok ? "<=" : ">",
           bound, c->nseg, c->rt.w.family.c_str(), c->rt.w.params.c_str(), c->rt.lookup.c_str());
    fflush(stdout);
    return ok ? 1 : 0;
}

void print_seg_goals(const std::vector<segrow> &rows, int layout)
{
    bool keys = layout == SEG_LAYOUT_KEYS;
    printf("\ngoals (%s): f32 min, cold, n = 30*2^20; %s\n", segdata_layout_name(layout),
           keys ? "redtune's median <= 0.65 x cub::DeviceReduce::ReduceByKey's"
                : "redtune's median <= 1.25 x the bandwidth limit (values + 32-bit offsets + outputs)");
    int pass = 0, miss = 0, none = 0;
    for (int p = 0; p <= 2; p++) {
        const segrow *c = NULL;
        for (const segrow &r : rows)
            if (r.layout == layout && r.profile == p && is_goal_row(r))
                c = &r;
        int v = print_goal(c, layout, p);
        (v > 0 ? pass : v == 0 ? miss : none)++;
    }
    printf("goals (%s): %d PASS, %d MISS, %d not measured\n", segdata_layout_name(layout), pass,
           miss, none);
}

void print_seg_summary(const std::vector<segrow> &rows, const options &o)
{
    printf("\nsummary (%s): redtune / CUB and redtune / limit, medians (rt/CUB below 1: redtune "
           "faster)\n", segdata_layout_name(o.layout));
    int wrong_rt = 0, wrong_cub = 0, errors = 0, missing = 0, slower = 0, pairs = 0;
    for (rt_op op : o.ops)
        for (rt_type type : o.types)
            for (int hot : o.regimes) {
                double lq = 0, ll = 0;
                int np = 0, nl = 0;
                std::string slow;
                for (const segrow &c : rows) {
                    if (c.op != op || c.type != type || c.hot != hot || c.skipped)
                        continue;
                    wrong_rt += c.rt.res.status == ST_WRONG;
                    wrong_cub += c.cub.status == ST_WRONG;
                    errors += (c.rt.res.status == ST_ERROR) + (c.cub.status == ST_ERROR);
                    missing += !c.rt.have;
                    if (c.rt.res.status == ST_OK) {
                        ll += log(c.rt.res.t.median_us / c.limit_us);
                        nl++;
                    }
                    if (c.rt.res.status == ST_OK && c.cub.status == ST_OK) {
                        double q = c.rt.res.t.median_us / c.cub.t.median_us;
                        lq += log(q);
                        np++;
                        if (q > 1.0) {
                            char b[96];
                            snprintf(b, sizeof b, "%s%s %s (%.2f)", slow.empty() ? "" : ", ",
                                     segdata_profile_name(c.profile), fmt_seg_n(c.n).c_str(), q);
                            slow += b;
                            slower++;
                        }
                    }
                }
                pairs += np;
                printf("  %-4s %-3s %-4s: ", rt_op_name(op), rt_type_name(type), regime_name(hot));
                if (!np && !nl) {
                    printf("nothing of redtune's timed\n");
                    continue;
                }
                if (np)
                    printf("rt/CUB geomean %.2f over %d cases", exp(lq / np), np);
                if (nl)
                    printf("%srt/limit geomean %.2f", np ? ", " : "", exp(ll / nl));
                printf("%s%s\n", slow.empty() ? "" : "; SLOWER than CUB at ", slow.c_str());
            }
    printf("  redtune slower than CUB in %d of %d cases timed side by side; WRONG: redtune %d, "
           "CUB %d; errors %d; cases without a winner %d\n", slower, pairs, wrong_rt, wrong_cub,
           errors, missing);
}

/* ---- --paper-seg: the paper's Fig. 5 ---- */

struct paper_cfg {
    std::string label, family, params;    /* params as given */
};

/* The paper's configs (001_cc281ea25c4a6d8d.txt, section V): TB2 R=2, D=2B (61440 blocks
 * at 30*2^20: B=256); TB4-warp R=4, D=4B (30720 blocks: B=256); Matrix and Persistent
 * Matrix H=W=32 (D=1024); DiffWarps P=8 C=1 (288 threads) H=W=32 and DiffWarps16 W=16
 * (Table II); plus redtune's load-balanced seg_lb for comparison. The same configs are in
 * bench/seg_paper_space.lua for a tuner run. */
std::vector<paper_cfg> paper_default_configs()
{
    return {
        {"TB2", "seg_tb2", "B=256 R=2 PAD=1"},
        {"TB4warp", "seg_tb4warp", "B=256 R=4"},
        {"Matrix", "seg_matrix", "B=256 H=32 W=32 PAD=1 PERSIST=0"},
        {"PMatrix", "seg_matrix", "B=256 H=32 W=32 PAD=1 PERSIST=1"},
        {"DiffWarps", "seg_diffwarps", "P=8 C=1 W=32 PAD=1"},
        {"DiffWarps16", "seg_diffwarps", "P=8 C=1 W=16 PAD=1"},
        {"seg_lb", "seg_lb", "B=256 R=8 STAGE=1 PERSIST=0"},
    };
}

paper_cfg parse_paper_config(const std::string &spec)
{
    paper_cfg c;
    size_t at = spec.find_first_not_of(" \t");
    std::string t = at == std::string::npos ? "" : spec.substr(at);
    size_t sp = t.find_first_of(" \t");
    std::string head = t.substr(0, sp);
    c.params = sp == std::string::npos ? "" : t.substr(sp + 1);   /* leading blanks are skipped later */
    size_t colon = head.find(':');
    c.family = head.substr(0, colon);
    c.label = colon == std::string::npos ? c.family : head.substr(colon + 1);
    if (c.family.empty() || c.label.empty())
        usage_error("--paper-config '%s': want \"FAMILY[:LABEL] NAME=V ...\"", spec.c_str());
    return c;
}

/* One paper config compiled for (op, type): a plan, or why not. */
struct paper_kernel {
    paper_cfg cfg;
    std::string full;          /* every parameter, as config_format writes them */
    bool skip = false;         /* family unknown or not a keys family: no column value */
    int rc = RT_OK;
    std::string err;
    plan p;
};

void compile_paper(paper_kernel &k, rt_op op, rt_type type)
{
    const rt_family *f = family_find(k.cfg.family.c_str());
    if (!f) {
        k.skip = true;
        k.err = "family " + k.cfg.family + " is not in this build (no templates/" + k.cfg.family +
                ".cu embedded when it was built): skipped";
        return;
    }
    if (f->plan != PLAN_SEGMENTED || !(f->layouts & FAMILY_LAYOUT_KEYS)) {
        k.skip = true;
        k.err = "family " + k.cfg.family + " is not a segmented family with the keys layout: skipped";
        return;
    }
    rt_err e;
    rt_clearerr(&e);
    rt_config c;
    config_default(f, &c);
    config_set(&c, "LAYOUT", SEG_LAYOUT_KEYS, &e);
    config_set(&c, "OFF64", 0, &e);
    rt_clearerr(&e);
    std::string ps = k.cfg.params;
    size_t at = 0;
    while (at < ps.size()) {
        size_t end = ps.find_first_of(" \t", at);
        std::string tok = ps.substr(at, end == std::string::npos ? std::string::npos : end - at);
        at = end == std::string::npos ? ps.size() : end + 1;
        if (tok.empty())
            continue;
        size_t eq = tok.find('=');
        char *stop = NULL;
        long long v = eq == std::string::npos ? 0 : strtoll(tok.c_str() + eq + 1, &stop, 10);
        if (eq == std::string::npos || eq == 0 || !stop || *stop || stop == tok.c_str() + eq + 1) {
            k.rc = RT_EINVAL;
            k.err = "'" + tok + "' is not NAME=VALUE";
            return;
        }
        if (config_set(&c, tok.substr(0, eq).c_str(), v, &e)) {
            k.rc = e.code;
            k.err = e.msg;
            return;
        }
    }
    char buf[512];
    config_format(&c, buf, sizeof buf);
    k.full = buf;
    char *src = NULL;
    if ((k.rc = codegen_emit(&c, op, type, &src, &e))) {
        k.err = e.msg;
        return;
    }
    watch(300, "NVRTC compiling %s (%s)", k.cfg.label.c_str(), buf);
    nvrtc_output out;
    k.rc = nvrtc_compile(src, f->name, G.arch, &out, &e);
    free(src);
    alarm(0);
    if (k.rc) {
        k.err = e.msg;
        return;
    }
    k.rc = plan_load(&k.p, out.cubin, PLAN_SEGMENTED, optype_acc_size(op, type), G.dev.sm_count, &e);
    nvrtc_output_free(&out);
    if (k.rc) {
        if (e.code == RT_EFAULT)
            die("loading %s: %s", k.cfg.label.c_str(), e.msg);
        k.err = e.msg;
    }
}

struct paperrow {
    int profile = 0;
    rt_op op = RT_MIN;
    rt_type type = RT_F32;
    int hot = 0;
    long long n = 0;
    unsigned long long nseg = 0;
    double mean = 0, bytes = 0, limit_us = 0;
    bool skipped = false;
    std::string skip_why;
    std::vector<impl_result> fam;     /* per paper config (status ST_NONE: skipped) */
    size_t cub_temp = 0;
    impl_result cub;
    seg_redtune rt;                   /* with --db */
};

const char PAPER_CSV_HEADER[] =
    "device,arch,profile,op,type,regime,m,n,nseg,seg_mean,bytes,limit_us,read_gbps,impl,family,"
    "params,status,us,min_us,max_us,reps,gbps,frac_read,message\n";

void paper_csv_one(FILE *f, const paperrow &c, double read_gbps, const std::string &impl,
                   const std::string &family, const std::string &params, const impl_result &r,
                   const std::string &note)
{
    if (!f)
        return;
    csv_field(f, G.dev.name);
    fprintf(f, ",%s,%s,%s,%s,%s,%lld,%lld,%llu,%.3f,%.0f,%.4f,%.2f,", G.arch,
            segdata_profile_name(c.profile), rt_op_name(c.op), rt_type_name(c.type),
            regime_name(c.hot), c.n >> 20, c.n, c.nseg, c.mean, c.bytes, c.limit_us, read_gbps);
    csv_field(f, impl);
    fputc(',', f);
    csv_field(f, family);
    fputc(',', f);
    csv_field(f, params);
    fprintf(f, ",%s,", c.skipped ? "skipped" : r.status == ST_NONE ? "skipped" : status_name(r.status));
    if (r.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.1f,%.4f,", r.t.median_us, r.t.min_us, r.t.max_us, r.t.reps,
                c.bytes / (r.t.median_us * 1e3), c.limit_us / r.t.median_us);
    else
        fprintf(f, ",,,,,,");
    csv_field(f, c.skipped ? c.skip_why : !r.msg.empty() ? r.msg : note);
    fputc('\n', f);
    fflush(f);
}

const char *paper_scenario(int profile)
{
    switch (profile) {
    case 0: return "(a) one segment";
    case 1: return "(b) random lengths 10..50";
    case 2: return "(c) segments of 3";
    default: return "(not one of the paper's scenarios)";
    }
}

std::string fmt_ms(const impl_result &r)
{
    char b[32];
    switch (r.status) {
    case ST_OK: snprintf(b, sizeof b, "%.4f", r.t.median_us * 1e-3); return b;
    case ST_WRONG: return "WRONG";
    case ST_ERROR: return "ERROR";
    default: return "-";
    }
}

void print_paper_table(const std::vector<paperrow> &rows, const std::vector<paper_kernel> &ks,
                       int profile, rt_op op, rt_type type, int hot, bool with_db, double read_gbps)
{
    printf("\npaper Fig. 5 %s (%s): keys, %s %s, %s; milliseconds (median), N = m*2^20\n",
           paper_scenario(profile), segdata_profile_name(profile), rt_op_name(op),
           rt_type_name(type), hot ? "hot (L2 not flushed)" : "cold (L2 flushed before each repetition)");
    /* A column is 9 characters, or its label's length when that is longer. */
    auto width = [&](size_t i) { return ks[i].cfg.label.size() > 9 ? (int)ks[i].cfg.label.size() : 9; };
    printf("%4s %9s", "m", "nseg");
    for (size_t i = 0; i < ks.size(); i++)
        printf(" %*s", width(i), ks[i].cfg.label.c_str());
    printf(" %9s", "CUB-RBK");
    if (with_db)
        printf(" %9s", "redtune");
    printf(" %9s\n", "limit");
    const paperrow *at30 = NULL;
    std::vector<std::string> notes;
    for (const paperrow &c : rows) {
        if (c.profile != profile || c.op != op || c.type != type || c.hot != hot)
            continue;
        if (c.skipped) {
            printf("%4lld  skipped: %s\n", c.n >> 20, c.skip_why.c_str());
            continue;
        }
        if (c.n == 30LL << 20)
            at30 = &c;
        printf("%4lld %9llu", c.n >> 20, c.nseg);
        for (size_t i = 0; i < ks.size(); i++)
            printf(" %*s", width(i), fmt_ms(c.fam[i]).c_str());
        printf(" %9s", fmt_ms(c.cub).c_str());
        if (with_db)
            printf(" %9s", c.rt.have ? fmt_ms(c.rt.res).c_str() : "-");
        printf(" %9.4f\n", c.limit_us * 1e-3);
        char b[64];
        snprintf(b, sizeof b, "m = %lld: ", c.n >> 20);
        for (size_t i = 0; i < ks.size(); i++)
            if (c.fam[i].status == ST_WRONG || c.fam[i].status == ST_ERROR)
                notes.push_back(b + ks[i].cfg.label + " " + fmt_ms(c.fam[i]) + ": " + c.fam[i].msg);
        if (c.cub.status == ST_WRONG || c.cub.status == ST_ERROR)
            notes.push_back(b + std::string("CUB ") + fmt_ms(c.cub) + ": " + c.cub.msg);
        if (with_db && (c.rt.res.status == ST_WRONG || c.rt.res.status == ST_ERROR))
            notes.push_back(b + std::string("redtune ") + fmt_ms(c.rt.res) + ": " + c.rt.res.msg);
    }
    for (const std::string &s : notes)
        printf("  %s\n", s.c_str());
    if (at30) {
        printf("  at N = 30*2^20 (%.0f MB must move), effective GB/s (bytes / time) and %% of the "
               "read bandwidth:\n   ", at30->bytes / 1e6);
        auto one = [&](const std::string &label, const impl_result &r) {
            if (r.status == ST_OK)
                printf(" %s %.0f (%.0f%%)", label.c_str(), at30->bytes / (r.t.median_us * 1e3),
                       100 * at30->limit_us / r.t.median_us);
        };
        for (size_t i = 0; i < ks.size(); i++)
            one(ks[i].cfg.label, at30->fam[i]);
        one("CUB-RBK", at30->cub);
        if (with_db && at30->rt.have)
            one("redtune", at30->rt.res);
        printf("\n");
    }
    (void)read_gbps;
    fflush(stdout);
}

struct seg_run {
    options o;
    store *db = NULL;
    FILE *csv = NULL;
    double read_gbps = 0;
};

/* Device, NVRTC, header lines and the read yardstick: the same start as the flat bench. */
void seg_start(seg_run &R)
{
    rt_err e;
    rt_clearerr(&e);
    signal(SIGALRM, on_alarm);
    watch(300, "starting the GPU");
    start_device(R.o.device);
    G.spin_cycles = R.o.spin_cycles;
    if (nvrtc_load(&e))
        die("%s", e.msg);
    alarm(0);
    printf("%s: %s (%s, %d SMs, %.0f MiB L2, %.1f GiB), driver %d, NVRTC %d, CUB %d.%d.%d, "
           "%d host threads\n", PROG, G.dev.name, G.arch, G.dev.sm_count, G.dev.l2_bytes / 1048576.0,
           G.dev.total_mem / 1073741824.0, G.dev.driver_version, nvrtc_version(),
           CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100, G.host_threads);
    printf("%s: timing as the tuner: blocking stream, CUDA events around the launch sequence, "
           "2 warm-ups, median of %s; cold: rt_bw_read over %.0f MiB (2 x L2) before each "
           "repetition; hot: rt_spin of %llu cycles before the start event\n", PROG,
           R.o.reps ? (std::to_string(R.o.reps) + " repetitions").c_str()
                    : "10 to 200 repetitions (until 0.25 s)",
           G.flush_bytes / 1048576.0, G.spin_cycles);
    R.read_gbps = measure_bandwidth();
    printf("%s: read bandwidth %.1f GB/s (best shape; %.0f%% of the %.0f GB/s the memory clock "
           "and bus allow)\n", PROG, R.read_gbps, 100 * R.read_gbps / device_peak_gbps(&G.dev),
           device_peak_gbps(&G.dev));
}

int seg_main(seg_run &R)
{
    const options &o = R.o;
    int layout = o.layout;
    printf("%s: segmented, layout %s: redtune's winner for %s:PROFILE against %s and the "
           "bandwidth limit of the bytes that must move (values, %s, one output per segment)\n",
           PROG, segdata_layout_name(layout), segdata_layout_name(layout), cub_seg_name(layout),
           layout == SEG_LAYOUT_KEYS ? "u32 keys" : "32-bit offsets");
    /* The winners this database holds, per op, type and profile. */
    int total = 0;
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            printf("%s: database %s, %s %s, winners (cold/hot) per profile:", PROG,
                   store_path(R.db), rt_op_name(op), rt_type_name(type));
            for (int p : o.profiles) {
                const std::vector<winner> &v = seg_winners(R.db, op, type, layout, p);
                int cold = 0, hot = 0;
                for (const winner &w : v)
                    (w.hot ? hot : cold)++;
                total += cold + hot;
                printf(" %s %d/%d", segdata_profile_name(p), cold, hot);
            }
            printf("\n");
        }
    if (!total)
        fprintf(stderr, "%s: warning: %s holds no %s winner for \"%s\" and these cases; only CUB "
                "and the limit will be timed\n", PROG, o.db, segdata_layout_name(layout), G.dev.name);
    if (R.csv)
        fputs(SEG_CSV_HEADER, R.csv);

    std::vector<segrow> rows;
    seg_walk(o, {layout}, [&](seg_case &c, const std::string &skip) {
        c.layout = layout;
        for (int hot : o.regimes) {
            segrow row;
            row.layout = layout;
            row.profile = c.profile;
            row.op = c.op;
            row.type = c.type;
            row.hot = hot;
            row.n = (long long)c.d.n;
            row.nseg = c.d.nseg;
            row.mean = c.d.mean;
            row.bytes = segdata_bytes(&c.d, layout, 0, optype_size(c.type), optype_acc_size(c.op, c.type));
            row.limit_us = row.bytes / (R.read_gbps * 1e3);
            if (!skip.empty()) {
                row.skipped = true;
                row.skip_why = skip;
            } else {
                run_seg_winner(R.db, c, layout, hot, o, &row.rt);
                watch(120 + (unsigned)(row.n / 10000000), "%s %s %s n = %s %s %s", cub_seg_name(layout),
                      rt_op_name(c.op), rt_type_name(c.type), fmt_seg_n(row.n).c_str(),
                      segdata_profile_name(c.profile), regime_name(hot));
                run_cub_seg(c, hot, o, &row.cub, &row.cub_temp);
                alarm(0);
                fprintf(stderr, "%s: [%s %s %s %s] n = %s: redtune %s, CUB %s, limit %.2f us\n", PROG,
                        seg_layout_key(layout, c.profile).c_str(), rt_op_name(c.op),
                        rt_type_name(c.type), regime_name(hot), fmt_seg_n(row.n).c_str(),
                        fmt_us(row.rt.res, row.rt.have).c_str(), fmt_us(row.cub, true).c_str(),
                        row.limit_us);
            }
            seg_csv_row(R.csv, row, R.read_gbps);
            rows.push_back(row);
            if (is_goal_row(row))   /* at once too, in case the run is cut short */
                print_goal(&row, layout, row.profile);
        }
    });
    for (rt_op op : o.ops)
        for (rt_type type : o.types)
            for (int hot : o.regimes)
                print_seg_table(rows, layout, op, type, hot, R.read_gbps);
    print_seg_summary(rows, o);
    print_seg_goals(rows, layout);
    return 0;
}

int paper_main(seg_run &R)
{
    const options &o = R.o;
    std::vector<paper_cfg> cfgs;
    if (o.paper_configs.empty())
        cfgs = paper_default_configs();
    else
        for (const std::string &s : o.paper_configs)
            cfgs.push_back(parse_paper_config(s));
    printf("%s: the paper's Fig. 5 (001_cc281ea25c4a6d8d.txt): segmented %s over keys (owner "
           "array), N = m*2^20, each family at one fixed config generated and compiled here, "
           "verified per segment before timing; CUB-RBK = cub::DeviceReduce::ReduceByKey; limit = "
           "(values + keys + outputs) / read bandwidth%s\n", PROG,
           o.ops.size() == 1 && o.types.size() == 1
               ? (std::string(rt_op_name(o.ops[0])) + " " + rt_type_name(o.types[0])).c_str() : "",
           R.db ? "; redtune = the database's winner for keys:PROFILE" : "");
    /* The kernels, per (op, type). */
    std::map<std::pair<int, int>, std::vector<paper_kernel>> kernels;
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            std::vector<paper_kernel> &v = kernels[{op, type}];
            for (const paper_cfg &c : cfgs) {
                paper_kernel k;
                k.cfg = c;
                compile_paper(k, op, type);
                printf("%s: %-8s %s %s: %s%s\n", PROG, c.label.c_str(), rt_op_name(op),
                       rt_type_name(type), k.skip ? "" : k.rc ? "FAILED: " : (c.family + " " + k.full).c_str(),
                       k.skip || k.rc ? k.err.c_str() : "");
                v.push_back(k);
            }
        }
    if (R.csv)
        fputs(PAPER_CSV_HEADER, R.csv);
    std::vector<paperrow> rows;
    seg_walk(o, {SEG_LAYOUT_KEYS}, [&](seg_case &c, const std::string &skip) {
        c.layout = SEG_LAYOUT_KEYS;
        std::vector<paper_kernel> &ks = kernels[{c.op, c.type}];
        for (int hot : o.regimes) {
            paperrow row;
            row.profile = c.profile;
            row.op = c.op;
            row.type = c.type;
            row.hot = hot;
            row.n = (long long)c.d.n;
            row.nseg = c.d.nseg;
            row.mean = c.d.mean;
            row.bytes = segdata_bytes(&c.d, SEG_LAYOUT_KEYS, 0, optype_size(c.type),
                                      optype_acc_size(c.op, c.type));
            row.limit_us = row.bytes / (R.read_gbps * 1e3);
            row.fam.resize(ks.size());
            if (!skip.empty()) {
                row.skipped = true;
                row.skip_why = skip;
            } else {
                for (size_t i = 0; i < ks.size(); i++) {
                    if (ks[i].skip)
                        continue;
                    if (ks[i].rc) {
                        row.fam[i].status = ST_ERROR;
                        row.fam[i].msg = ks[i].err;
                        continue;
                    }
                    watch(120 + (unsigned)(row.n / 10000000), "paper %s %s N = %s (%s)",
                          ks[i].cfg.label.c_str(), segdata_profile_name(c.profile),
                          fmt_seg_n(row.n).c_str(), ks[i].full.c_str());
                    run_seg_plan(&ks[i].p, c, 0, hot, o, &row.fam[i]);
                    alarm(0);
                }
                watch(120 + (unsigned)(row.n / 10000000), "paper CUB ReduceByKey %s N = %s",
                      segdata_profile_name(c.profile), fmt_seg_n(row.n).c_str());
                run_cub_seg(c, hot, o, &row.cub, &row.cub_temp);
                alarm(0);
                if (R.db)
                    run_seg_winner(R.db, c, SEG_LAYOUT_KEYS, hot, o, &row.rt);
                std::string line;
                for (size_t i = 0; i < ks.size(); i++)
                    line += " " + ks[i].cfg.label + " " + fmt_ms(row.fam[i]);
                fprintf(stderr, "%s: [paper %s %s %s %s] N = %s, ms:%s CUB-RBK %s\n", PROG,
                        segdata_profile_name(c.profile), rt_op_name(c.op), rt_type_name(c.type),
                        regime_name(hot), fmt_seg_n(row.n).c_str(), line.c_str(),
                        fmt_ms(row.cub).c_str());
            }
            for (size_t i = 0; i < ks.size(); i++)
                paper_csv_one(R.csv, row, R.read_gbps, ks[i].cfg.label, ks[i].cfg.family,
                              ks[i].full.empty() ? ks[i].cfg.params : ks[i].full, row.fam[i],
                              ks[i].skip || ks[i].rc ? ks[i].err : "");
            paper_csv_one(R.csv, row, R.read_gbps, "CUB-RBK", cub_seg_name(SEG_LAYOUT_KEYS), "",
                          row.cub, "");
            if (R.db)
                paper_csv_one(R.csv, row, R.read_gbps, "redtune", row.rt.have ? row.rt.w.family : "",
                              row.rt.have ? row.rt.w.params : "", row.rt.res,
                              row.rt.have ? "[" + row.rt.lookup + "]"
                                          : "no winner in the database for " +
                                                seg_layout_key(SEG_LAYOUT_KEYS, c.profile));
            rows.push_back(row);
        }
    });
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            const std::vector<paper_kernel> &ks = kernels[{op, type}];
            for (int p : o.profiles)
                for (int hot : o.regimes)
                    print_paper_table(rows, ks, p, op, type, hot, R.db != NULL, R.read_gbps);
            for (const paper_kernel &k : ks)
                if (k.skip || k.rc)
                    printf("  %s: %s\n", k.cfg.label.c_str(), k.err.c_str());
        }
    int wrong = 0, errors = 0, timed = 0;
    for (const paperrow &c : rows) {
        for (const impl_result &r : c.fam) {
            wrong += r.status == ST_WRONG;
            errors += r.status == ST_ERROR;
            timed += r.status == ST_OK;
        }
        wrong += c.cub.status == ST_WRONG;
        errors += c.cub.status == ST_ERROR;
        timed += c.cub.status == ST_OK;
    }
    printf("\nsummary (paper-seg): %d timings, WRONG %d, errors %d\n", timed, wrong, errors);
    return 0;
}

/* The segmented modes' main: database (optional for --paper-seg), CSV, GPU, then the run. */
int segmented_main(const options &o)
{
    seg_run R;
    R.o = o;
    rt_err e;
    rt_clearerr(&e);
    if (o.db && store_open(o.db, STORE_READ, &R.db, &e))
        die("%s", e.msg);
    if (o.csv && !(R.csv = fopen(o.csv, "w")))
        die("%s: %s", o.csv, strerror(errno));
    seg_start(R);
    int rc = o.paper_seg ? paper_main(R) : seg_main(R);
    if (R.csv && fclose(R.csv) != 0)
        die("%s: %s", o.csv, strerror(errno));
    if (R.db)
        store_close(R.db);
    return rc;
}

} // namespace


/* ---- --api: libredtune's checks (issue 5) ----
 *
 * (a) host cost: the calling thread's CPU time per call over 10^5 calls (100 enqueued
 *     between synchronisations, which stay outside the clock) of a cached rt_reduce, and of
 *     plan_launch of the same loaded kernel (api_kernel_of: the launches alone, what
 *     rt_reduce calls last); the difference is the library's lookup. Goal: <= 0.3 us.
 * (b) sizes between tuned sizes: at 2m and at 2m + m/2 + 3 for each pair of neighbouring
 *     tuned sizes m < m' (cold winners of this device), every distinct winner of m and m'
 *     timed there (as the tuner times, plan_launch), and the kernel rt_reduce picks; goal: the
 *     pick within 10% of the fastest of them.
 * (c) end to end: rt_reduce, timed as the tuner times (events, L2 flushed, median), at each
 *     tuned size against the winner's tuned median; goal: within 3%. The winner timed again
 *     now with plan_launch is shown beside it (the run-to-run spread of the medians).
 */

const double GOAL_LOOKUP_US = 0.3, GOAL_BETWEEN = 1.10, GOAL_E2E = 1.03;

/* Time a loaded kernel with plan_launch at n; 0 on failure (the message printed). */
double time_plan(const plan *p, CUdeviceptr in, unsigned long long n, int maxr)
{
    rt_err e;
    rt_clearerr(&e);
    timing t;
    CUresult r;
    int rc = measure_ensure_temp(&G, plan_temp_bytes(p, n) + 256, &e);
    if (rc == RT_OK && (r = cu.MemsetD8(G.temp, 0, 256)) != CUDA_SUCCESS)
        rc = driver_fail(r, "clearing the counter", &e);
    auto enqueue = [&](rt_err *err) { return plan_launch(p, in, G.out, n, G.temp, G.stream, err); };
    if (rc == RT_OK)
        rc = time_reps(enqueue, 0, 10, maxr, 0.25, &t, &e);
    if (rc != RT_OK) {
        printf("  error timing a kernel at n = %llu: %s\n", n, e.msg);
        return 0;
    }
    return t.median_us;
}

/* Time a stored winner (by hash) at n; 0 on failure. */
double time_winner(store *db, const winner &w, rt_type type, CUdeviceptr in,
                   unsigned long long n, int maxr)
{
    const kernel &k = get_kernel(db, w);
    rt_err e;
    rt_clearerr(&e);
    plan p;
    if (k.rc || plan_load(&p, k.cubin.data(), k.kind, optype_size(type), G.dev.sm_count, &e)) {
        printf("  error loading %s %s: %s\n", w.family.c_str(), w.params.c_str(),
               k.rc ? k.err.c_str() : e.msg);
        return 0;
    }
    double us = time_plan(&p, in, n, maxr);
    plan_unload(&p);
    return us;
}

/* CPU microseconds per call of 'fn' over CALLS calls, CHUNK enqueued between syncs. */
template <class F>
double cpu_per_call(F &&fn)
{
    const int CALLS = 100000, CHUNK = 100;
    double cpu = 0;
    for (int c = 0; c < CALLS; c += CHUNK) {
        struct timespec a, b;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        for (int i = 0; i < CHUNK; i++)
            if (fn() != RT_OK)
                die("--api: a call failed during the host-cost loop");
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        cpu += (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
        cu.StreamSynchronize(G.stream);
    }
    return cpu / CALLS * 1e6;
}

int api_check(store *db, const options &o, std::map<std::pair<int, int>, std::vector<winner>> &winners)
{
    rt_err e;
    rt_clearerr(&e);
    char msg[4096];
    rt_ctx *ctx = NULL;
    if (rt_open_err(o.db, o.device, &ctx, msg, sizeof msg) != RT_OK)
        die("rt_open: %s", msg);
    int maxr = o.reps ? o.reps : 100;
    /* One input for the largest tuned size that fits, filled with small values. */
    size_t max_bytes = 1 << 20;
    for (auto &kv : winners)
        for (const winner &w : kv.second) {
            double b = (double)w.n * 2.5 * optype_size((rt_type)kv.first.second);
            if (b <= 0.4 * (double)G.dev.total_mem)
                max_bytes = std::max(max_bytes, (size_t)b);
        }
    CUdeviceptr in = 0;
    CUresult r;
    if ((r = cu.MemAlloc(&in, max_bytes)) != CUDA_SUCCESS || (r = cu.MemsetD8(in, 1, max_bytes)) != CUDA_SUCCESS) {
        driver_fail(r, "allocating the input", &e);
        die("%s", e.msg);
    }
    void *pin = (void *)(uintptr_t)in, *pout = (void *)(uintptr_t)G.out;
    bool pass_a = true, pass_b = true, pass_c = true, any_b = false, any_c = false;
    double worst_b = 0, worst_c = 0;
    std::string where_b, where_c;

    /* (a) host cost. */
    printf("\n(a) host cost of a cached rt_reduce (CPU time per call, 10^5 calls, 100 enqueued "
           "between syncs)\n%-8s %-4s %10s %12s %14s %10s %8s  %s\n", "op", "type", "n",
           "rt_reduce", "plan_launch", "lookup", "launches", "kernel");
    for (rt_op op : o.ops)
        for (rt_type type : o.types)
            for (unsigned long long n : {1024ULL, 1ULL << 20}) {
                const plan *p;
                char hash[RT_HASH_HEX];
                if (rt_reduce(ctx, op, type, pin, n, pout, G.stream) != RT_OK)
                    die("rt_reduce: %s", rt_errmsg(ctx));
                if (api_kernel_of(ctx, op, type, n, &p, hash, &e))
                    die("%s", e.msg);
                cu.StreamSynchronize(G.stream);
                if (measure_ensure_temp(&G, plan_temp_bytes(p, n) + 256, &e) ||
                    cu.MemsetD8(G.temp, 0, 256))
                    die("temporary storage: %s", e.msg);
                double t_rt = cpu_per_call([&] { return rt_reduce(ctx, op, type, pin, n, pout, G.stream); });
                double t_pl = cpu_per_call([&] { return plan_launch(p, in, G.out, n, G.temp, G.stream, &e); });
                double look = t_rt - t_pl;
                if (look > GOAL_LOOKUP_US)
                    pass_a = false;
                printf("%-8s %-4s %10llu %10.3f us %12.3f us %7.3f us %8d  %.12s\n", rt_op_name(op),
                       rt_type_name(type), n, t_rt, t_pl, look, plan_launch_count(p, n), hash);
            }
    printf("goal a: lookup part of a cached rt_reduce <= %.1f us: %s\n", GOAL_LOOKUP_US,
           pass_a ? "PASS" : "MISS");

    /* (b) between tuned sizes, and (c) end to end at tuned sizes. */
    printf("\n(b) between tuned sizes: the pick against the neighbouring winners timed there "
           "(median us, L2 flushed)\n%-6s %-4s %12s %-34s %10s %10s %7s\n", "op", "type", "n",
           "pick", "pick us", "best us", "ratio");
    std::vector<std::string> lines_c;
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            std::vector<winner> v;
            for (const winner &w : winners[{op, type}])
                if (!w.hot && (double)w.n * 2.5 * optype_size(type) <= (double)max_bytes)
                    v.push_back(w);
            std::sort(v.begin(), v.end(), [](const winner &a, const winner &b) { return a.n < b.n; });
            for (size_t i = 0; i + 1 < v.size(); i++) {
                long long m = v[i].n;
                for (long long x : {2 * m, 2 * m + m / 2 + 3}) {
                    if (x >= v[i + 1].n)
                        continue;
                    const plan *p;
                    char hash[RT_HASH_HEX];
                    if (rt_reduce(ctx, op, type, pin, (unsigned long long)x, pout, G.stream) != RT_OK
                        || api_kernel_of(ctx, op, type, (unsigned long long)x, &p, hash, &e))
                        die("rt_reduce: %s", rt_errmsg(ctx));
                    cu.StreamSynchronize(G.stream);
                    double best = 0, pick = 0;
                    std::string pick_name = "?";
                    for (const winner *w : {&v[i], &v[i + 1]}) {
                        double us = time_winner(db, *w, type, in, (unsigned long long)x, maxr);
                        if (us > 0 && (best == 0 || us < best))
                            best = us;
                        if (w->hash == hash) {
                            pick = us;
                            pick_name = w->family + " " + w->params;
                        }
                    }
                    if (pick == 0) {   /* the pick is neither neighbour: time it too */
                        pick = time_plan(p, in, (unsigned long long)x, maxr);
                        pick_name = std::string("other ") + std::string(hash, 12);
                        if (pick > 0 && pick < best)
                            best = pick;
                    }
                    if (pick <= 0 || best <= 0)
                        continue;
                    double ratio = pick / best;
                    any_b = true;
                    if (ratio > GOAL_BETWEEN)
                        pass_b = false;
                    if (ratio > worst_b) {
                        worst_b = ratio;
                        where_b = std::string(rt_op_name(op)) + " " + rt_type_name(type) + " n = " + std::to_string(x);
                    }
                    printf("%-6s %-4s %12lld %-34.34s %10.2f %10.2f %6.3fx%s\n", rt_op_name(op),
                           rt_type_name(type), x, pick_name.c_str(), pick, best, ratio,
                           ratio > GOAL_BETWEEN ? "  MISS" : "");
                }
            }
            /* (c) */
            for (const winner &w : v) {
                unsigned long long n = (unsigned long long)w.n;
                timing t;
                auto enqueue = [&](rt_err *err) {
                    int rc = rt_reduce(ctx, op, type, pin, n, pout, G.stream);
                    return rc == RT_OK ? RT_OK : rt_seterr(err, rc, "%s", rt_errmsg(ctx));
                };
                if (time_reps(enqueue, 0, 10, maxr, 0.25, &t, &e)) {
                    printf("  error timing rt_reduce at n = %llu: %s\n", n, e.msg);
                    pass_c = false;
                    continue;
                }
                double now = time_winner(db, w, type, in, n, maxr);
                double ratio = t.median_us / w.median_us;
                any_c = true;
                if (ratio > GOAL_E2E)
                    pass_c = false;
                if (ratio > worst_c) {
                    worst_c = ratio;
                    where_c = std::string(rt_op_name(op)) + " " + rt_type_name(type) + " n = " + fmt_n(w.n);
                }
                char line[512];
                snprintf(line, sizeof line, "%-6s %-4s %12s %-34.34s %10.2f %10.2f %10.2f %6.3fx%s",
                         rt_op_name(op), rt_type_name(type), fmt_n(w.n).c_str(),
                         (w.family + " " + w.params).c_str(), t.median_us, w.median_us, now, ratio,
                         ratio > GOAL_E2E ? "  MISS" : "");
                lines_c.push_back(line);
            }
        }
    printf("goal b: pick within 10%% of the best neighbouring winner between tuned sizes: %s "
           "(worst %.3fx, %s)\n", !any_b ? "MISS (nothing measured)" : pass_b ? "PASS" : "MISS",
           worst_b, where_b.c_str());
    printf("\n(c) rt_reduce end to end at tuned sizes (median us, L2 flushed) against the tuned "
           "median\n%-6s %-4s %12s %-34s %10s %10s %10s %7s\n", "op", "type", "n", "winner",
           "rt_reduce", "tuned", "now", "ratio");
    for (const std::string &l : lines_c)
        printf("%s\n", l.c_str());
    printf("goal c: rt_reduce within 3%% of the tuned median at tuned sizes: %s (worst %.3fx, "
           "%s)\n", !any_c ? "MISS (nothing measured)" : pass_c ? "PASS" : "MISS", worst_c,
           where_c.c_str());
    printf("\nsummary:\ngoal a: %s\ngoal b: %s\ngoal c: %s\n", pass_a ? "PASS" : "MISS",
           any_b && pass_b ? "PASS" : "MISS", any_c && pass_c ? "PASS" : "MISS");
    cu.MemFree(in);
    rt_close(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    options o = parse_args(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (o.paper_seg || o.layout != SEG_LAYOUT_FLAT)
        return segmented_main(o);
    rt_err e;
    rt_clearerr(&e);

    /* The database first: a missing or foreign file is reported before any GPU work. */
    store *db = NULL;
    if (store_open(o.db, STORE_READ, &db, &e))
        die("%s", e.msg);
    FILE *csv = NULL;
    if (o.csv && !(csv = fopen(o.csv, "w")))
        die("%s: %s", o.csv, strerror(errno));

    signal(SIGALRM, on_alarm);
    watch(300, "starting the GPU");
    start_device(o.device);
    G.spin_cycles = o.spin_cycles;
    if (nvrtc_load(&e))
        die("%s", e.msg);
    alarm(0);
    printf("%s: %s (%s, %d SMs, %.0f MiB L2, %.1f GiB), driver %d, NVRTC %d, CUB %d.%d.%d\n",
           PROG, G.dev.name, G.arch, G.dev.sm_count, G.dev.l2_bytes / 1048576.0,
           G.dev.total_mem / 1073741824.0, G.dev.driver_version, nvrtc_version(),
           CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100);

    /* The winners of this device name, per (op, type). */
    std::map<std::pair<int, int>, std::vector<winner>> winners;
    size_t nwin = 0;
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            std::vector<winner> &v = winners[{op, type}];
            collect_arg a = {G.dev.name, &v};
            if (store_list_best(db, G.dev.name, rt_op_name(op), rt_type_name(type), 0, collect, &a, &e))
                die("%s", e.msg);
            nwin += v.size();
            int cold = 0, hot = 0;
            for (const winner &w : v)
                (w.hot ? hot : cold)++;
            printf("%s: database %s: %s %s on this device: %d cold winners, %d hot\n", PROG,
                   store_path(db), rt_op_name(op), rt_type_name(type), cold, hot);
        }
    if (nwin == 0)
        fprintf(stderr, "%s: warning: %s holds no winner for \"%s\" and these cases; only CUB "
                "and the limit will be timed\n", PROG, o.db, G.dev.name);
    printf("%s: timing as the tuner: blocking stream, CUDA events around the launch sequence, "
           "2 warm-ups, median of %s; cold: rt_bw_read over %.0f MiB (2 x L2) before each "
           "repetition; hot: rt_spin of %llu cycles before the start event%s\n", PROG,
           o.reps ? (std::to_string(o.reps) + " repetitions").c_str()
                  : "10 to 200 repetitions (until 0.25 s)",
           G.flush_bytes / 1048576.0, G.spin_cycles,
           G.spin_cycles == MEASURE_SPIN_CYCLES ? "" : " (NOT the tuner's 20000)");

    double read_gbps = measure_bandwidth();
    if (o.api) {
        int rc = api_check(db, o, winners);
        store_close(db);
        return rc;
    }
    printf("%s: read bandwidth %.1f GB/s (best shape; %.0f%% of the %.0f GB/s the memory clock "
           "and bus allow)\n", PROG, read_gbps, 100 * read_gbps / device_peak_gbps(&G.dev),
           device_peak_gbps(&G.dev));
    if (csv)
        fputs(CSV_HEADER, csv);

    /* One input buffer for the largest case that fits beside the buffers (the tuner's rule). */
    size_t max_bytes = 0;
    for (rt_type type : o.types)
        for (long long n : o.sizes) {
            double b = (double)n * optype_size(type);
            if (b <= 0.45 * (double)G.dev.total_mem)
                max_bytes = std::max(max_bytes, (size_t)b);
        }
    CUdeviceptr in = 0;
    void *host = NULL;
    CUresult r;
    if (max_bytes) {
        if ((r = cu.MemAlloc(&in, max_bytes)) != CUDA_SUCCESS) {
            driver_fail(r, "allocating the input", &e);
            die("%s", e.msg);
        }
        if (!(host = malloc(max_bytes)))
            die("out of host memory for %.1f GiB of input", max_bytes / 1073741824.0);
    }

    std::vector<row> rows;
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            const std::vector<winner> &wins = winners[{op, type}];
            size_t esize = optype_size(type);
            for (long long n : o.sizes) {
                double bytes = (double)n * esize;
                std::string ns = fmt_n(n);
                row base;
                base.op = op;
                base.type = type;
                base.n = n;
                base.bytes = bytes;
                base.limit_us = bytes / (read_gbps * 1e3);
                if (bytes > 0.45 * (double)G.dev.total_mem) {
                    for (int hot : o.regimes) {
                        row c = base;
                        c.hot = hot;
                        c.skipped = true;
                        char why[128];
                        snprintf(why, sizeof why, "%.1f GiB of input does not fit beside the "
                                 "buffers on this GPU", bytes / 1073741824.0);
                        c.skip_why = why;
                        csv_row(csv, c, read_gbps);
                        rows.push_back(c);
                    }
                    continue;
                }
                fprintf(stderr, "%s: [%s %s] n = %s\n", PROG, rt_op_name(op), rt_type_name(type), ns.c_str());
                /* The data: the tuner's generator and reference (tuner/data.c). */
                watch(900, "preparing %s %s n = %s", rt_op_name(op), rt_type_name(type), ns.c_str());
                uint64_t seed = o.seed ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL ^
                                ((uint64_t)op << 8 | (uint64_t)type) * 0xd1b54a32d192ed03ULL;
                data_fill(host, type, op, (unsigned long long)n, seed, seed % (uint64_t)n, G.host_threads);
                if (!o.keep_nan && (op == RT_MIN || op == RT_MAX))
                    scrub_nan(host, type, (unsigned long long)n, G.host_threads);
                data_ref ref;
                data_reference(host, type, op, (unsigned long long)n, &ref, G.host_threads);
                if ((r = cu.MemcpyHtoD(in, host, (size_t)bytes)) != CUDA_SUCCESS) {
                    driver_fail(r, "copying the input", &e);
                    die("%s", e.msg);
                }
                int reps_max = o.reps ? o.reps : 200;
                unsigned limit = 120 + (unsigned)(reps_max * bytes / 1e11);
                for (int hot : o.regimes) {
                    row c = base;
                    c.hot = hot;
                    const winner *w = lookup(wins, n, hot);
                    const char *from = "";
                    if (!w && (w = lookup(wins, n, !hot)))
                        from = hot ? "cold-tuned " : "hot-tuned ";
                    if (w) {
                        c.have_winner = true;
                        c.w = *w;
                        c.lookup = std::string(from) + (w->n == n ? "exact" : "nearest " + fmt_n(w->n));
                        watch(limit, "redtune %s %s n = %s %s (%s %s)", rt_op_name(op),
                              rt_type_name(type), ns.c_str(), regime_name(hot), w->family.c_str(),
                              w->params.c_str());
                        run_redtune(db, c, in, ref, o);
                    }
                    watch(limit, "CUB %s %s n = %s %s", rt_op_name(op), rt_type_name(type),
                          ns.c_str(), regime_name(hot));
                    run_cub(c, in, ref, o);
                    alarm(0);
                    csv_row(csv, c, read_gbps);
                    rows.push_back(c);
                }
            }
            for (int hot : o.regimes)
                print_table(rows, op, type, hot, read_gbps);
        }
    print_summary(rows, o);

    if (csv && fclose(csv) != 0)
        die("%s: %s", o.csv, strerror(errno));
    if (in)
        cu.MemFree(in);
    free(host);
    store_close(db);
    return 0;
}
