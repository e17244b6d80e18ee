/*
 * everyn.cu - redtune_bench --every-n (docs/bench.md, "Every n"): issue 14's sweep of n. The
 * sizes are every power of two up to --max-n and --random sizes drawn log-uniformly by --seed
 * (everyn_sizes.c, by parse_args); each is a flat case (flat.h): rt_reduce as an application
 * calls it, cub::DeviceReduce on the same input, the read limit, and the floor
 *
 *   floor(n) = t(one thread loads one element and stores it) + bytes(n) / read bandwidth,
 *
 * the first term timed once at the start as the cases are timed (cold: the L2 flushed before
 * each repetition, so the load goes to DRAM), beside the time of an empty kernel.
 *
 * The input of every size is a prefix of one array per (op, type): the tuner's data
 * (tuner/data.c) is a function of the seed and the index, so the first n elements of the
 * largest array are data_fill's array for n, but for the planted extreme of min and max,
 * which is put at seed % n for each n (host and device, one element) and taken back after.
 * So the host generates and copies the data once per (op, type), not once per size; the CPU
 * reference is still computed for each n.
 */
#include "flat.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace {

/* Device memory left free beside the input: the library's and CUB's temporary storage and
 * the modules the picks load. */
const double FREE_MARGIN = 512.0 * 1048576;

__global__ void floor_empty() {}

/* One thread, one load (from DRAM when the L2 was flushed) and one store. */
__global__ void floor_touch(const unsigned *in, unsigned *out)
{
    *out = *in;
}

struct floor_times {
    timing empty, touch;
};

/* Time the empty kernel and the one-element copy in regime 'hot', as the cases are timed. */
void time_floor(int hot, CUdeviceptr probe, const options &o, floor_times *f)
{
    rt_err e;
    rt_clearerr(&e);
    cudaStream_t s = (cudaStream_t)G.stream;
    const unsigned *in = reinterpret_cast<const unsigned *>(static_cast<uintptr_t>(probe));
    unsigned *out = reinterpret_cast<unsigned *>(static_cast<uintptr_t>(G.out));
    auto empty = [&](rt_err *err) {
        floor_empty<<<1, 1, 0, s>>>();
        cudaError_t r = cudaGetLastError();
        return r == cudaSuccess ? RT_OK : rt_fail(r, "launching the empty kernel", err);
    };
    auto touch = [&](rt_err *err) {
        floor_touch<<<1, 1, 0, s>>>(in, out);
        cudaError_t r = cudaGetLastError();
        return r == cudaSuccess ? RT_OK : rt_fail(r, "launching the one-element copy", err);
    };
    int minr, maxr;
    double budget;
    reps_of(o, &minr, &maxr, &budget);
    watch(120, "timing the floor's kernels (%s)", regime_name(hot));
    if (time_reps(empty, hot, minr, maxr, budget, &f->empty, &e) != RT_OK ||
        time_reps(touch, hot, minr, maxr, budget, &f->touch, &e) != RT_OK)
        die("%s: %s", g_where, e.msg);
    alarm(0);
    /* The copy did copy: the probe holds 0x5eed5eed. */
    unsigned got = 0;
    CUresult r = cu.MemcpyDtoH(&got, G.out, sizeof got);
    if (r != CUDA_SUCCESS) {
        driver_fail(r, "reading the one-element copy", &e);
        die("%s", e.msg);
    }
    if (got != 0x5eed5eedu)
        die("the floor's one-element copy stored 0x%08x, not 0x5eed5eed", got);
}

/* The random sizes for the header: "5, 77, 3000". */
std::string list_sizes(const std::vector<long long> &v)
{
    std::string s;
    for (size_t i = 0; i < v.size(); i++)
        s += (i ? ", " : "") + fmt_n(v[i]);
    return s;
}

/* The summary's lines (flat.cu's, plus the worst at the top and rt/floor at small n). */
const long long SMALL_N = 1LL << 16;

void print_summary(const std::vector<flat_row> &rows, const options &o)
{
    printf("\nsummary: redtune / CUB, the ratio of median times (below 1: redtune faster; "
           "* in the tables: redtune slower); redtune / floor at n <= 2^16\n");
    int slower_all = 0, pairs_all = 0;
    for (rt_op op : o.ops)
        for (rt_type type : o.types)
            for (int hot : o.regimes) {
                flat_ratios q = flat_ratios_of(rows, op, type, hot);
                printf("  %-4s %-3s %-4s: ", rt_op_name(op), rt_type_name(type), regime_name(hot));
                if (!q.pairs) {
                    printf("no size with both timed\n");
                } else {
                    printf("%2d sizes, geomean %.2f, worst %.2f (%s), best %.2f (%s); ", q.pairs,
                           q.geomean, q.hi, fmt_n(q.hi_n).c_str(), q.lo, fmt_n(q.lo_n).c_str());
                    if (q.nslower)
                        printf("SLOWER than CUB at %d size%s: %s\n", q.nslower,
                               q.nslower == 1 ? "" : "s", q.slower.c_str());
                    else
                        printf("never slower than CUB\n");
                }
                slower_all += q.nslower;
                pairs_all += q.pairs;
                /* redtune against its floor where the launch is most of the time. */
                int k = 0;
                double logsum = 0, worst = 0;
                const flat_row *w = NULL;
                for (const flat_row &c : rows) {
                    if (c.op != op || c.type != type || c.hot != hot || c.skipped ||
                        c.n > SMALL_N || c.rt.status != ST_OK)
                        continue;
                    double r = c.rt.t.median_us / c.floor_us;
                    logsum += log(r);
                    if (!k || r > worst)
                        worst = r, w = &c;
                    k++;
                }
                printf("  %-4s %-3s %-4s: ", rt_op_name(op), rt_type_name(type), regime_name(hot));
                if (!k)
                    printf("redtune / floor at n <= 2^16: no size timed\n");
                else
                    printf("redtune / floor at n <= 2^16: %2d sizes, geomean %.2f, worst %.2f "
                           "(%s: %.2f us, floor %.2f us)\n", k, exp(logsum / k), worst,
                           fmt_n(w->n).c_str(), w->rt.t.median_us, w->floor_us);
            }
    flat_print_totals(rows, slower_all, pairs_all);
}

} // namespace

int everyn_main(const options &o)
{
    rt_err e;
    rt_clearerr(&e);
    CUresult r;
    /* The database first: rt_open reports a missing or foreign file before any GPU work. */
    rt_ctx *ctx = bench_open(o);
    FILE *csv = NULL;
    if (o.csv && !(csv = fopen(o.csv, "w")))
        die("%s: %s", o.csv, strerror(errno));
    double read_gbps = bench_start(o);
    int pows = 0;
    for (long long n : o.sizes)
        pows += (n & (n - 1)) == 0;
    printf("%s: every n: the %d powers of two 2^0 .. %s and %zu random sizes drawn "
           "log-uniformly from [1, %s] with seed %llu%s%s\n", PROG, pows,
           fmt_n(o.sizes.empty() ? 1 : 1LL << (pows - 1)).c_str(), o.random_sizes.size(),
           fmt_n(o.max_n).c_str(), o.seed,
           (int)o.random_sizes.size() < o.every_random ? " (all that range holds)" : "",
           o.random_sizes.empty() ? "" : (": " + list_sizes(o.random_sizes)).c_str());

    /* The floor: launch + one DRAM round trip, timed in each regime of the cases. */
    CUdeviceptr probe = 0;
    unsigned seedval = 0x5eed5eedu;
    if ((r = cu.MemAlloc(&probe, 256)) != CUDA_SUCCESS ||
        (r = cu.MemcpyHtoD(probe, &seedval, sizeof seedval)) != CUDA_SUCCESS) {
        driver_fail(r, "allocating the floor's probe", &e);
        die("%s", e.msg);
    }
    double floor_base[2] = {0, 0};
    for (int hot : o.regimes) {
        floor_times f;
        time_floor(hot, probe, o, &f);
        floor_base[hot] = f.touch.median_us;
        printf("%s: floor, %s, timed as the cases (median of %d): an empty kernel %.2f us; one "
               "thread loading one element%s and storing it %.2f us; floor(n) = %.2f us + "
               "bytes(n) / %.1f GB/s\n", PROG, regime_name(hot), f.touch.reps, f.empty.median_us,
               hot ? " (from the L2)" : " (from DRAM)", f.touch.median_us, f.touch.median_us,
               read_gbps);
    }
    cu.MemFree(probe);

    watch(600, "choosing and loading the library's kernels (rt_explain)");
    flat_print_sources(ctx, o);
    alarm(0);
    flat_csv_header(csv, true);

    /* What fits: the device's free memory now (cuMemGetInfo) less a margin, and 70% of the
     * host's memory (the data is made there). */
    size_t free_b = 0, total_b = 0;
    if ((r = cu.MemGetInfo(&free_b, &total_b)) != CUDA_SUCCESS) {
        driver_fail(r, "cuMemGetInfo", &e);
        die("%s", e.msg);
    }
    double host_b = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    auto fits = [&](double bytes, char *why, size_t len) {
        if (bytes > (double)free_b - FREE_MARGIN) {
            snprintf(why, len, "%.1f GiB of input does not fit in the %.1f GiB free on the GPU "
                     "(cuMemGetInfo) less %.1f GiB for the buffers", bytes / 1073741824.0,
                     free_b / 1073741824.0, FREE_MARGIN / 1073741824.0);
            return false;
        }
        if (bytes > 0.7 * host_b) {
            snprintf(why, len, "%.1f GiB of input does not fit in 70%% of the host's %.1f GiB",
                     bytes / 1073741824.0, host_b / 1073741824.0);
            return false;
        }
        return true;
    };
    /* One device buffer and one host array for the largest input that fits, of any type;
     * the host array has one element more, past every prefix, where min and max have their
     * planted extreme. */
    size_t max_bytes = 0, max_host = 0;
    char why[256];
    for (rt_type type : o.types)
        for (long long n : o.sizes)
            if (fits((double)n * optype_size(type), why, sizeof why)) {
                max_bytes = std::max(max_bytes, (size_t)n * optype_size(type));
                max_host = std::max(max_host, (size_t)(n + 1) * optype_size(type));
            }
    CUdeviceptr in = 0;
    char *host = NULL;
    if (max_bytes) {
        if ((r = cu.MemAlloc(&in, max_bytes)) != CUDA_SUCCESS) {
            driver_fail(r, "allocating the input", &e);
            die("%s", e.msg);
        }
        if (!(host = (char *)malloc(max_host)))
            die("out of host memory for %.1f GiB of input", max_host / 1073741824.0);
    }

    std::vector<flat_row> rows;
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            size_t es = optype_size(type);
            long long nmax = 0;
            for (long long n : o.sizes)
                if (fits((double)n * es, why, sizeof why))
                    nmax = std::max(nmax, n);
            uint64_t seed = value_seed(o, o.max_n, op, type);
            bool extreme = op == RT_MIN || op == RT_MAX;
            if (nmax) {
                /* The data of nmax + 1 elements, planted at nmax: outside every prefix. */
                fprintf(stderr, "%s: [%s %s] the data, %s elements\n", PROG, rt_op_name(op),
                        rt_type_name(type), fmt_n(nmax).c_str());
                watch(900, "preparing %s %s n = %s", rt_op_name(op), rt_type_name(type),
                      fmt_n(nmax).c_str());
                data_fill(host, type, op, (unsigned long long)nmax + 1, seed,
                          (unsigned long long)nmax, G.host_threads);
                if (!o.keep_nan && extreme)
                    scrub_nan(host, type, (unsigned long long)nmax + 1, G.host_threads);
                if ((r = cu.MemcpyHtoD(in, host, (size_t)nmax * es)) != CUDA_SUCCESS) {
                    driver_fail(r, "copying the input", &e);
                    die("%s", e.msg);
                }
                alarm(0);
            }
            for (long long n : o.sizes) {
                flat_row base;
                base.op = op;
                base.type = type;
                base.n = n;
                base.bytes = (double)n * es;
                base.limit_us = base.bytes / (read_gbps * 1e3);
                if (n > nmax) {
                    fits(base.bytes, why, sizeof why);
                    flat_skip_case(base, why, o, csv, read_gbps, rows);
                    continue;
                }
                std::string ns = fmt_n(n);
                fprintf(stderr, "%s: [%s %s] n = %s\n", PROG, rt_op_name(op), rt_type_name(type),
                        ns.c_str());
                /* data_fill's array for n: the planted extreme at seed % n. */
                unsigned long long q = seed % (unsigned long long)n;
                unsigned char saved[16];
                if (extreme) {
                    memcpy(saved, host + q * es, es);
                    memcpy(host + q * es, host + (size_t)nmax * es, es);
                    if ((r = cu.MemcpyHtoD(in + q * es, host + q * es, es)) != CUDA_SUCCESS) {
                        driver_fail(r, "planting the extreme", &e);
                        die("%s", e.msg);
                    }
                }
                watch(900, "the reference of %s %s n = %s", rt_op_name(op), rt_type_name(type),
                      ns.c_str());
                data_ref ref;
                data_reference(host, type, op, (unsigned long long)n, &ref, G.host_threads);
                alarm(0);
                double floor_us[2] = {floor_base[0] + base.limit_us,
                                      floor_base[1] + base.limit_us};
                flat_run_case(ctx, base, in, ref, o, floor_us, csv, read_gbps, rows);
                if (extreme) {
                    memcpy(host + q * es, saved, es);
                    if ((r = cu.MemcpyHtoD(in + q * es, host + q * es, es)) != CUDA_SUCCESS) {
                        driver_fail(r, "taking the extreme back", &e);
                        die("%s", e.msg);
                    }
                }
            }
            for (int hot : o.regimes)
                flat_print_table(rows, op, type, hot, read_gbps, true);
        }
    print_summary(rows, o);

    if (csv && fclose(csv) != 0)
        die("%s: %s", o.csv, strerror(errno));
    if (in)
        cu.MemFree(in);
    free(host);
    rt_close(ctx);
    return 0;
}
