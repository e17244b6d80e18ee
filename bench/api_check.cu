/*
 * api_check.cu - `redtune_bench --api`: libredtune's checks (issue 5; docs/bench.md,
 * "libredtune's checks").
 *
 * These checks compare the library against the kernels it chooses from, so, alone in the
 * bench with the per-family columns of paper_seg.cu, this mode uses libredtune's internals
 * (runtime/api.h, store.h, plan.h): the database's winners of this device (store_list_best),
 * their stored CUBINs (store_get_binary, else NVRTC on the stored source), plan_launch of a
 * loaded kernel, and api_kernel_of, the kernel rt_reduce runs. The other modes time
 * rt_reduce through include/redtune.h only.
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
#include "common.h"

extern "C" {
#include "../runtime/api.h"
#include "../runtime/family.h"
#include "../runtime/plan.h"
#include "../runtime/store.h"
#include "../tuner/store_tune.h"
}

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>

namespace {

/* A winner of the database for this device name (layout flat). */
struct winner {
    std::string hash, family, params;
    long long n = 0;
    int hot = 0;
    double median_us = 0;
};

struct collect_arg {
    const char *device;
    std::vector<winner> *rows;
};

int collect(const store_best_row *r, void *arg)
{
    collect_arg *a = (collect_arg *)arg;
    if (strcmp(r->device_name, a->device) != 0 || strcmp(r->layout, "flat") != 0)
        return 0;
    winner w;
    w.hash = r->kernel_hash;
    w.family = r->family;
    w.params = r->params;
    w.n = r->n;
    w.hot = r->hot;
    w.median_us = r->median_us;
    a->rows->push_back(w);
    return 0;
}

/* A stored winner's CUBIN: the database's for this arch and NVRTC, else its stored source
 * compiled here. Its plan is its family's; a family this build does not know is an error
 * here (the library itself runs such a kernel from its source's @plan line). */
struct kernel {
    int rc = RT_OK;
    std::string err;
    std::vector<unsigned char> cubin;
    rt_plan_kind kind = PLAN_MULTIPASS;
};

std::map<std::string, kernel> g_kernels;

const kernel &get_kernel(store *s, const winner &w)
{
    auto it = g_kernels.find(w.hash);
    if (it != g_kernels.end())
        return it->second;
    kernel &k = g_kernels[w.hash];
    rt_err e;
    rt_clearerr(&e);
    const rt_family *f = family_find(w.family.c_str());
    if (!f) {
        k.rc = RT_EINVAL;
        k.err = "family " + w.family + " is not built into this bench";
        return k;
    }
    k.kind = f->plan;
    store_binary b;
    memset(&b, 0, sizeof b);
    int rc = store_get_binary(s, w.hash.c_str(), G.arch, nvrtc_version(), &b, &e);
    if (rc == RT_OK) {
        k.cubin.assign((unsigned char *)b.cubin, (unsigned char *)b.cubin + b.size);
        store_binary_free(&b);
    } else if (rc == RT_ENOTFOUND) {
        rt_clearerr(&e);
        char *src = NULL;
        nvrtc_output o;
        if ((k.rc = store_get_kernel_source(s, w.hash.c_str(), &src, &e)) ||
            (k.rc = nvrtc_compile(src, w.family.c_str(), G.arch, &o, &e))) {
            k.err = e.msg;
        } else {
            k.cubin.assign((unsigned char *)o.cubin, (unsigned char *)o.cubin + o.size);
            nvrtc_output_free(&o);
        }
        free(src);
    } else {
        k.rc = rc;
        k.err = e.msg;
    }
    return k;
}

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

int api_check(rt_ctx *ctx, store *db, const options &o,
              std::map<std::pair<int, int>, std::vector<winner>> &winners)
{
    rt_err e;
    rt_clearerr(&e);
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
    return 0;
}

} // namespace

int api_main(const options &o)
{
    rt_err e;
    rt_clearerr(&e);
    /* The database first: a missing or foreign file is reported before any GPU work. */
    store *db = NULL;
    if (store_open(o.db, STORE_READ, &db, &e))
        die("%s", e.msg);
    rt_ctx *ctx = bench_open(o);
    bench_start(o);
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
        fprintf(stderr, "%s: warning: %s holds no winner for \"%s\" and these cases; (b) and "
                "(c) need them\n", PROG, o.db, G.dev.name);
    int rc = api_check(ctx, db, o, winners);
    rt_close(ctx);
    store_close(db);
    return rc;
}
