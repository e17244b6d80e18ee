/*
 * common.cu - what the modes of redtune_bench share (common.h): errors and the watchdog, the
 * GPU state and its start, the read yardstick, the library's context, formatting and the
 * input data's NaN rule.
 *
 * The timing method is tuner/worker.c's, from the same code (tuner/measure.c): a blocking
 * stream; CUDA events around the launch sequence; two warm-ups; the median of 10..200
 * repetitions (until 0.25 s of timed GPU time) or of --reps N; cold: before each repetition
 * the L2 is flushed by rt_bw_read over a buffer of 2 x L2 (a read, not a memset), which also
 * keeps the stream busy when the start event is recorded; hot: no flush, a short rt_spin
 * does that.
 *
 * The CUDA runtime (CUB), the bench's driver-API state (tuner/measure.c) and libredtune's
 * context (rt_open) share the device's primary context: cudaSetDevice + cudaFree(0), then
 * the driver's cuDevicePrimaryCtxRetain + cuCtxSetCurrent; rt_open retains the same one.
 * cudaStream_t and CUstream are the same handle.
 */
#include "common.h"

#include <cub/version.cuh>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <signal.h>
#include <thread>
#include <unistd.h>
#include <vector>

const char *const PROG = "redtune_bench";

/* ---- errors ---- */

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

/* ---- the watchdog: a launch that never finishes ends the run with the case named ---- */

char g_where[256] = "starting";

static void on_alarm(int)
{
    static const char a[] = "redtune_bench: timed out (a launch did not finish) in ";
    ssize_t w = write(2, a, sizeof a - 1);
    w = write(2, g_where, strlen(g_where));
    w = write(2, "\n", 1);
    (void)w;
    _exit(1);
}

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
static void start_device(int ordinal)
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

/* ---- the read yardstick: tuner/session.c's session_bandwidth with worker.c's do_bandwidth ---- */

/* The yardstick's shapes as compiled by measure_bandwidth, for bench_read_ceiling_us. */
static std::vector<std::vector<char>> g_bw_cubins;

static double measure_bandwidth()
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
        g_bw_cubins.emplace_back((const char *)o.cubin, (const char *)o.cubin + o.size);
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

double bench_read_ceiling_us(CUdeviceptr in, double bytes, int hot)
{
    unsigned long long n16 = (unsigned long long)(bytes / 16);
    double best = -1;
    for (size_t i = 0; n16 && i < g_bw_cubins.size(); i++) {
        rt_err e;
        rt_clearerr(&e);
        measure_bw k;
        double us, gbps;
        int rc = measure_bw_load(&G, g_bw_cubins[i].data(), n16, &k, &e);
        if (rc == RT_OK) {
            rc = measure_bw_time(&G, &k, in, n16, hot, MEASURE_BW_REPS, &us, &gbps, &e);
            measure_bw_unload(&k);
        }
        if (rc != RT_OK)
            fprintf(stderr, "%s: the read-only ceiling of %.0f bytes, yardstick shape %zu: %s\n",
                    PROG, bytes, i, e.msg);
        else if (best < 0 || us < best)
            best = us;
    }
    return best;
}

double bench_start(const options &o)
{
    rt_err e;
    rt_clearerr(&e);
    signal(SIGALRM, on_alarm);
    watch(300, "starting the GPU");
    start_device(o.device);
    G.spin_cycles = o.spin_cycles;
    if (nvrtc_load(&e))
        die("%s", e.msg);
    alarm(0);
    printf("%s: %s (%s, %d SMs, %.0f MiB L2, %.1f GiB), driver %d, NVRTC %d, CUB %d.%d.%d, "
           "%d host threads\n", PROG, G.dev.name, G.arch, G.dev.sm_count, G.dev.l2_bytes / 1048576.0,
           G.dev.total_mem / 1073741824.0, G.dev.driver_version, nvrtc_version(),
           CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100, G.host_threads);
    printf("%s: timing as the tuner: blocking stream, CUDA events around the launch sequence, "
           "2 warm-ups, median of %s; cold: rt_bw_read over %.0f MiB (2 x L2) before each "
           "repetition; hot: rt_spin of %llu cycles before the start event%s\n", PROG,
           o.reps ? (std::to_string(o.reps) + " repetitions").c_str()
                  : "10 to 200 repetitions (until 0.25 s)",
           G.flush_bytes / 1048576.0, G.spin_cycles,
           G.spin_cycles == MEASURE_SPIN_CYCLES ? "" : " (NOT the tuner's 20000)");
    double read_gbps = measure_bandwidth();   /* the yardstick: always after a read flush */
    printf("%s: read bandwidth %.1f GB/s (best shape; %.0f%% of the %.0f GB/s the memory clock "
           "and bus allow)\n", PROG, read_gbps, 100 * read_gbps / device_peak_gbps(&G.dev),
           device_peak_gbps(&G.dev));
    G.flush_write = o.flush_write;
    if (o.flush_write)
        printf("%s: --flush write: cold (\"cold-dirty\") flushes with a memset of the %.0f MiB "
               "instead: the L2 full of dirty lines, which the timed kernel's reads evict (written "
               "back while it runs); the limit stays the read yardstick's\n", PROG,
               G.flush_bytes / 1048576.0);
    return read_gbps;
}

rt_ctx *bench_open(const options &o)
{
    char msg[4096];
    rt_ctx *ctx = NULL;
    if (rt_open_err(o.db, o.device, &ctx, msg, sizeof msg) != RT_OK)
        die("%s", msg);
    return ctx;
}

void reps_of(const options &o, int *minr, int *maxr, double *budget)
{
    *minr = o.reps ? o.reps : 10;
    *maxr = o.reps ? o.reps : 200;
    *budget = o.reps ? 0 : 0.25;
}

std::string pick_label(const lib_pick &k)
{
    if (!k.have)
        return "(rt_explain failed)";
    if (!k.p.parsed) {   /* the text's first line, as the library wrote it */
        return k.text.substr(0, k.text.find('\n'));
    }
    return std::string(k.p.family) + " " + k.p.params + " [" + k.lookup + "]";
}

/* ---- formatting ---- */

const char *status_name(int s)
{
    switch (s) {
    case ST_OK: return "ok";
    case ST_WRONG: return "wrong";
    case ST_ERROR: return "error";
    default: return "none";
    }
}

const char *regime_name(int hot) { return hot ? "hot" : G.flush_write ? "cold-dirty" : "cold"; }

std::string fmt_n(long long n)
{
    char b[32];
    if (n > 0 && (n & (n - 1)) == 0)
        snprintf(b, sizeof b, "2^%d", __builtin_ctzll((unsigned long long)n));
    else
        snprintf(b, sizeof b, "%lld", n);
    return b;
}

std::string fmt_seg_n(long long n)
{
    char b[32];
    bench_fmt_n(n, b, sizeof b);
    return b;
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

void csv_ceiling(FILE *f, double ceiling_us, const impl_result &rt)
{
    if (ceiling_us > 0)
        fprintf(f, ",%.3f,", ceiling_us);
    else
        fprintf(f, ",,");
    if (ceiling_us > 0 && rt.status == ST_OK)
        fprintf(f, "%.4f", ceiling_us / rt.t.median_us);
}

std::string fmt_ceiling(double ceiling_us)
{
    char s[32] = "-";
    if (ceiling_us > 0)
        snprintf(s, sizeof s, "%.2f", ceiling_us);
    return s;
}

std::string fmt_ceiling_pct(double ceiling_us, double limit_us)
{
    char s[32] = "-";
    if (ceiling_us > 0)
        snprintf(s, sizeof s, "%.1f%%", 100.0 * limit_us / ceiling_us);
    return s;
}

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

uint64_t value_seed(const options &o, long long n, rt_op op, rt_type type)
{
    return o.seed ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL ^
           ((uint64_t)op << 8 | (uint64_t)type) * 0xd1b54a32d192ed03ULL;
}

uint64_t seg_seed(const options &o, long long n, int profile)
{
    return o.seed ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL ^ 0x5e65e65e65e6ULL ^
           (uint64_t)(profile + 1) * 0xd1b54a32d192ed03ULL;
}
