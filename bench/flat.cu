/*
 * flat.cu - the default mode of redtune_bench (docs/bench.md): for each case (op, type, n,
 * regime), side by side in one process,
 *   redtune  the kernel libredtune picks for (op, type, n) from --db, run by rt_reduce on the
 *            bench's stream, as an application calls it: the library's lookup, its fallback
 *            to another GPU's winners or to its built-in default, its temporary storage (one
 *            block per stream, allocated by the first, untimed, call) and its launches; what
 *            it picked is rt_explain's answer;
 *   CUB      cub::DeviceReduce::Min / Max / Sum on the same input, temp storage allocated
 *            once per case outside the timed region;
 *   limit    bytes(n) / the read bandwidth measured at the start.
 * Both results are checked against the CPU reference (tuner/data.c) before anything is
 * timed and again after the timed repetitions.
 */
#include "flat.h"

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

namespace {

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
void verify_and_time(F &&enqueue, const flat_row &c, const data_ref &ref, const options &o,
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
        int minr, maxr;
        double budget;
        reps_of(o, &minr, &maxr, &budget);
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

/* What the library picks for the case: rt_explain, read back (bench/pick.c). */
void explain(rt_ctx *ctx, flat_row &c)
{
    char text[4096];
    if (rt_explain(ctx, c.op, c.type, (unsigned long long)c.n, text, sizeof text) != RT_OK) {
        c.rt.status = ST_ERROR;
        c.rt.msg = std::string("rt_explain: ") + rt_errmsg(ctx);
        return;
    }
    c.pick.have = true;
    c.pick.text = text;
    bench_pick_parse(text, &c.pick.p);
    char lk[256];
    bench_pick_lookup(&c.pick.p, c.n, lk, sizeof lk);
    /* The library chooses among cold-tuned winners only (the tuner's default regime). */
    c.pick.lookup = std::string(c.hot && c.pick.p.tuned_n > 0 ? "cold-tuned " : "") + lk;
}

/* rt_reduce, timed on G.stream into G.out. The library's temporary storage for the stream
 * is allocated (or grown) by the verifying call, before the timed repetitions; rt_reduce
 * rather than rt_reduce_temp, whose caller-owned storage gets the one-launch counter cleared
 * by a memset before every launch: a node in the timed region an application calling
 * rt_reduce does not have. */
void run_redtune(rt_ctx *ctx, flat_row &c, CUdeviceptr in, const data_ref &ref, const options &o)
{
    const void *d_in = reinterpret_cast<const void *>(static_cast<uintptr_t>(in));
    void *d_out = reinterpret_cast<void *>(static_cast<uintptr_t>(G.out));
    unsigned long long n = (unsigned long long)c.n;
    auto enqueue = [&](rt_err *err) {
        int rc = rt_reduce(ctx, c.op, c.type, d_in, n, d_out, G.stream);
        return rc == RT_OK ? RT_OK : rt_seterr(err, rc, "rt_reduce: %s", rt_errmsg(ctx));
    };
    verify_and_time(enqueue, c, ref, o, &c.rt);
}

void run_cub(flat_row &c, CUdeviceptr in, const data_ref &ref, const options &o)
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

/* ---- output ---- */

const char CSV_HEADER[] =
    "device,arch,op,type,regime,n,bytes,limit_us,read_gbps,"
    "redtune_status,redtune_us,redtune_min_us,redtune_max_us,redtune_reps,redtune_frac_read,"
    "family,params,kernel_hash,lookup,tuned_n,tuned_regime,tuned_median_us,cubin,"
    "cub_status,cub_us,cub_min_us,cub_max_us,cub_reps,cub_frac_read,cub_temp_bytes,"
    "ratio_redtune_cub,";

void csv_row(FILE *f, const flat_row &c, double read_gbps, bool floor)
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
    if (c.pick.have && !c.pick.p.parsed)
        msg += std::string(msg.empty() ? "" : "; ") + "rt_explain: " + c.pick.text;
    csv_field(f, G.dev.name);
    fprintf(f, ",%s,%s,%s,%s,%lld,%.0f,%.4f,%.2f,", G.arch, rt_op_name(c.op), rt_type_name(c.type),
            regime_name(c.hot), c.n, c.bytes, c.limit_us, read_gbps);
    fprintf(f, "%s,", c.skipped ? "skipped" : status_name(c.rt.status));
    if (c.rt.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,", c.rt.t.median_us, c.rt.t.min_us, c.rt.t.max_us,
                c.rt.t.reps, c.limit_us / c.rt.t.median_us);
    else
        fprintf(f, ",,,,,");
    const bench_pick &p = c.pick.p;
    if (c.pick.have && p.parsed) {
        csv_field(f, p.family);
        fputc(',', f);
        csv_field(f, p.params);
        fprintf(f, ",%s,", p.hash);
        csv_field(f, c.pick.lookup);
        if (p.tuned_n > 0)
            fprintf(f, ",%lld,cold,%.3f,", p.tuned_n, p.tuned_median_us);
        else
            fprintf(f, ",,,,");
        fprintf(f, "%s,", p.from_db ? "stored" : "nvrtc");
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
    if (floor) {
        if (c.skipped)
            fputc(',', f);
        else
            fprintf(f, "%.4f,", c.floor_us);
        if (c.rt.status == ST_OK)
            fprintf(f, "%.4f,", c.rt.t.median_us / c.floor_us);
        else
            fputc(',', f);
    }
    csv_field(f, msg);
    fputc('\n', f);
    fflush(f);
}

} // namespace

void flat_print_table(const std::vector<flat_row> &rows, rt_op op, rt_type type, int hot,
                      double read_gbps, bool floor)
{
    printf("\n%s %s, %s; limit = bytes / %.1f GB/s;%s times are medians in microseconds\n",
           rt_op_name(op), rt_type_name(type),
           hot ? "hot (L2 not flushed; rt_spin before the start event)"
               : "cold (L2 flushed before each repetition)", read_gbps,
           floor ? " floor = launch + one DRAM round trip + limit;" : "");
    /* The floor's two columns are empty strings in the default mode: its lines stay as
     * they were. */
    printf("%12s %6s %11s %11s %11s%s %7s%s %8s %8s  %s\n", "n", "", "redtune", "CUB", "limit",
           floor ? "       floor" : "", "rt/CUB", floor ? " rt/floor" : "", "rt%read", "CUB%read",
           "redtune (rt_reduce's pick): family params [lookup]");
    for (const flat_row &c : rows) {
        if (c.op != op || c.type != type || c.hot != hot)
            continue;
        if (c.skipped) {
            printf("%12lld %6s  skipped: %s\n", c.n, fmt_n(c.n).c_str(), c.skip_why.c_str());
            continue;
        }
        char ratio[32] = "-", rtp[32] = "-", cubp[32] = "-", fl[32] = "", rfl[32] = "";
        if (c.rt.status == ST_OK && c.cub.status == ST_OK) {
            double q = c.rt.t.median_us / c.cub.t.median_us;
            snprintf(ratio, sizeof ratio, "%.2f%s", q, q > 1.0 ? "*" : " ");
        }
        if (c.rt.status == ST_OK)
            snprintf(rtp, sizeof rtp, "%.1f%%", 100.0 * c.limit_us / c.rt.t.median_us);
        if (c.cub.status == ST_OK)
            snprintf(cubp, sizeof cubp, "%.1f%%", 100.0 * c.limit_us / c.cub.t.median_us);
        if (floor) {
            snprintf(fl, sizeof fl, " %11.3f", c.floor_us);
            if (c.rt.status == ST_OK)
                snprintf(rfl, sizeof rfl, " %8.2f", c.rt.t.median_us / c.floor_us);
            else
                snprintf(rfl, sizeof rfl, " %8s", "-");
        }
        printf("%12lld %6s %11s %11s %11.3f%s %7s%s %8s %8s  %s\n", c.n, fmt_n(c.n).c_str(),
               fmt_time(c.rt, true).c_str(), fmt_time(c.cub, true).c_str(), c.limit_us, fl,
               ratio, rfl, rtp, cubp, pick_label(c.pick).c_str());
        if (c.rt.status == ST_WRONG || c.rt.status == ST_ERROR)
            printf("%19s redtune %s: %s\n", "", c.rt.status == ST_WRONG ? "WRONG" : "ERROR", c.rt.msg.c_str());
        if (c.cub.status == ST_WRONG || c.cub.status == ST_ERROR)
            printf("%19s CUB %s: %s\n", "", c.cub.status == ST_WRONG ? "WRONG" : "ERROR", c.cub.msg.c_str());
    }
    fflush(stdout);
}

void flat_print_totals(const std::vector<flat_row> &rows, int slower, int pairs)
{
    int wrong_rt = 0, wrong_cub = 0, errors = 0, missing = 0;
    for (const flat_row &c : rows) {
        if (c.skipped)
            continue;
        wrong_rt += c.rt.status == ST_WRONG;
        wrong_cub += c.cub.status == ST_WRONG;
        errors += (c.rt.status == ST_ERROR) + (c.cub.status == ST_ERROR);
        missing += c.pick.have && c.pick.p.parsed && c.pick.p.tuned_n <= 0;
    }
    printf("  redtune slower than CUB in %d of %d cases timed side by side", slower, pairs);
    printf("; WRONG: redtune %d, CUB %d; errors %d; cases on the built-in default (no winner "
           "the library could use) %d\n", wrong_rt, wrong_cub, errors, missing);
}

flat_ratios flat_ratios_of(const std::vector<flat_row> &rows, rt_op op, rt_type type, int hot)
{
    flat_ratios q;
    double logsum = 0;
    for (const flat_row &c : rows) {
        if (c.op != op || c.type != type || c.hot != hot || c.skipped)
            continue;
        if (c.rt.status != ST_OK || c.cub.status != ST_OK)
            continue;
        double r = c.rt.t.median_us / c.cub.t.median_us;
        logsum += log(r);
        if (!q.pairs || r < q.lo)
            q.lo = r, q.lo_n = c.n;
        if (!q.pairs || r > q.hi)
            q.hi = r, q.hi_n = c.n;
        q.pairs++;
        if (r > 1.0) {
            char b[64];
            snprintf(b, sizeof b, "%s%s (%.2f)", q.nslower ? ", " : "", fmt_n(c.n).c_str(), r);
            q.slower += b;
            q.nslower++;
        }
    }
    if (q.pairs)
        q.geomean = exp(logsum / q.pairs);
    return q;
}

namespace {

void print_summary(const std::vector<flat_row> &rows, const options &o)
{
    printf("\nsummary: redtune / CUB, the ratio of median times (below 1: redtune faster; "
           "* in the tables: redtune slower)\n");
    int slower_all = 0, pairs_all = 0;
    for (rt_op op : o.ops)
        for (rt_type type : o.types)
            for (int hot : o.regimes) {
                flat_ratios q = flat_ratios_of(rows, op, type, hot);
                printf("  %-4s %-3s %-4s: ", rt_op_name(op), rt_type_name(type), regime_name(hot));
                if (!q.pairs) {
                    printf("no size with both timed\n");
                    continue;
                }
                printf("%2d sizes, geomean %.2f, from %.2f (%s) to %.2f (%s); ", q.pairs,
                       q.geomean, q.lo, fmt_n(q.lo_n).c_str(), q.hi, fmt_n(q.hi_n).c_str());
                if (q.nslower)
                    printf("SLOWER than CUB at %s\n", q.slower.c_str());
                else
                    printf("never slower than CUB\n");
                slower_all += q.nslower;
                pairs_all += q.pairs;
            }
    flat_print_totals(rows, slower_all, pairs_all);
}

} // namespace

/* One line per (op, type): where the library's picks come from (the fallback level is one
 * per op and type: the database's device nearest to this GPU that has winners). */
void flat_print_sources(rt_ctx *ctx, const options &o)
{
    int builtin = 0;
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            char text[4096];
            bench_pick p;
            unsigned long long n = (unsigned long long)o.sizes[0];
            if (rt_explain(ctx, op, type, n, text, sizeof text) != RT_OK) {
                printf("%s: %s %s: rt_explain: %s\n", PROG, rt_op_name(op), rt_type_name(type),
                       rt_errmsg(ctx));
                continue;
            }
            if (bench_pick_parse(text, &p)) {
                printf("%s: %s %s: rt_explain at n = %s:\n%s", PROG, rt_op_name(op),
                       rt_type_name(type), fmt_n((long long)n).c_str(), text);
                continue;
            }
            builtin += p.tuned_n <= 0;
            if (p.tuned_n > 0)
                printf("%s: %s %s: the library's picks: winners of \"%s\" (%s)\n", PROG,
                       rt_op_name(op), rt_type_name(type), p.device, p.level);
            else
                printf("%s: %s %s: the library's pick: its built-in default (%s %s): the "
                       "database has no winner it can use\n", PROG, rt_op_name(op),
                       rt_type_name(type), p.family, p.params);
        }
    if (builtin)
        fprintf(stderr, "%s: warning: %s holds no winner libredtune uses on \"%s\" for %d of "
                "these operator and type pairs; redtune's column times the built-in default "
                "there\n", PROG, o.db, G.dev.name, builtin);
}

void flat_csv_header(FILE *f, bool floor)
{
    if (f)
        fprintf(f, "%s%smessage\n", CSV_HEADER, floor ? "floor_us,ratio_redtune_floor," : "");
}

void flat_skip_case(const flat_row &base, const char *why, const options &o, FILE *csv,
                    double read_gbps, std::vector<flat_row> &rows)
{
    for (int hot : o.regimes) {
        flat_row c = base;
        c.hot = hot;
        c.skipped = true;
        c.skip_why = why;
        csv_row(csv, c, read_gbps, o.every_n);
        rows.push_back(c);
    }
}

void flat_run_case(rt_ctx *ctx, const flat_row &base, CUdeviceptr in, const data_ref &ref,
                   const options &o, const double *floor_us, FILE *csv, double read_gbps,
                   std::vector<flat_row> &rows)
{
    rt_op op = base.op;
    rt_type type = base.type;
    std::string ns = fmt_n(base.n);
    int reps_max = o.reps ? o.reps : 200;
    unsigned limit = 120 + (unsigned)(reps_max * base.bytes / 1e11);
    for (int hot : o.regimes) {
        flat_row c = base;
        c.hot = hot;
        if (floor_us)
            c.floor_us = floor_us[hot];
        watch(limit + 300, "rt_explain %s %s n = %s", rt_op_name(op), rt_type_name(type),
              ns.c_str());
        explain(ctx, c);
        if (c.pick.have) {
            watch(limit, "redtune %s %s n = %s %s (%s)", rt_op_name(op), rt_type_name(type),
                  ns.c_str(), regime_name(hot), pick_label(c.pick).c_str());
            run_redtune(ctx, c, in, ref, o);
        }
        watch(limit, "CUB %s %s n = %s %s", rt_op_name(op), rt_type_name(type), ns.c_str(),
              regime_name(hot));
        run_cub(c, in, ref, o);
        alarm(0);
        csv_row(csv, c, read_gbps, floor_us != NULL);
        rows.push_back(c);
    }
}

int flat_main(const options &o)
{
    rt_err e;
    rt_clearerr(&e);
    /* The database first: rt_open reports a missing or foreign file before any GPU work. */
    rt_ctx *ctx = bench_open(o);
    FILE *csv = NULL;
    if (o.csv && !(csv = fopen(o.csv, "w")))
        die("%s: %s", o.csv, strerror(errno));
    double read_gbps = bench_start(o);
    watch(600, "choosing and loading the library's kernels (rt_explain)");
    flat_print_sources(ctx, o);
    alarm(0);
    flat_csv_header(csv, false);

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

    std::vector<flat_row> rows;
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            size_t esize = optype_size(type);
            for (long long n : o.sizes) {
                double bytes = (double)n * esize;
                std::string ns = fmt_n(n);
                flat_row base;
                base.op = op;
                base.type = type;
                base.n = n;
                base.bytes = bytes;
                base.limit_us = bytes / (read_gbps * 1e3);
                if (bytes > 0.45 * (double)G.dev.total_mem) {
                    char why[128];
                    snprintf(why, sizeof why, "%.1f GiB of input does not fit beside the "
                             "buffers on this GPU", bytes / 1073741824.0);
                    flat_skip_case(base, why, o, csv, read_gbps, rows);
                    continue;
                }
                fprintf(stderr, "%s: [%s %s] n = %s\n", PROG, rt_op_name(op), rt_type_name(type), ns.c_str());
                /* The data: the tuner's generator and reference (tuner/data.c). */
                watch(900, "preparing %s %s n = %s", rt_op_name(op), rt_type_name(type), ns.c_str());
                uint64_t seed = value_seed(o, n, op, type);
                data_fill(host, type, op, (unsigned long long)n, seed, seed % (uint64_t)n, G.host_threads);
                if (!o.keep_nan && (op == RT_MIN || op == RT_MAX))
                    scrub_nan(host, type, (unsigned long long)n, G.host_threads);
                data_ref ref;
                data_reference(host, type, op, (unsigned long long)n, &ref, G.host_threads);
                if ((r = cu.MemcpyHtoD(in, host, (size_t)bytes)) != CUDA_SUCCESS) {
                    driver_fail(r, "copying the input", &e);
                    die("%s", e.msg);
                }
                flat_run_case(ctx, base, in, ref, o, NULL, csv, read_gbps, rows);
            }
            for (int hot : o.regimes)
                flat_print_table(rows, op, type, hot, read_gbps, false);
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
