/*
 * common.h - what every mode of redtune_bench shares (docs/bench.md): the options, the errors
 * and the watchdog, the GPU state and the timing (tuner/measure.h, the worker's method), the
 * read yardstick, the CSV and table helpers, and the verification of a flat result.
 *
 * The modes, one file each: flat.cu (redtune's pick against cub::DeviceReduce), seg.cu
 * (--segmented keys|offsets), paper_seg.cu (--paper-seg), api_check.cu (--api), types.cu
 * (--type-cases), axis.cu (--axis), everyn.cu (--every-n; flat.h: the flat cases it shares
 * with flat.cu); seg_cases.cu
 * holds the segmented cases, checks and CUB calls of the two segmented modes; main.cu picks
 * the mode.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

extern "C" {
#include "../include/redtune.h"
#include "../runtime/device.h"
#include "../runtime/driver.h"
#include "../runtime/err.h"
#include "../runtime/nvrtc.h"
#include "../runtime/optype.h"
#include "../tuner/data.h"
#include "../tuner/measure.h"
#include "../tuner/segdata.h"
#include "everyn_sizes.h"
#include "pick.h"
}

extern const char *const PROG;   /* "redtune_bench" */

/* ---- options (options.cu) ---- */

/* One shape of --axis: [outer, len, inner], reduced along len (axis.cu). */
struct axis_shape {
    unsigned long long outer, len, inner;
};

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
    bool flush_write = false;               /* --flush write: cold leaves dirty lines */
    bool keep_nan = false;
    /* segmented (docs/bench.md, "Segmented") */
    int layout = SEG_LAYOUT_FLAT;           /* --segmented keys|offsets */
    bool paper_seg = false;                 /* --paper-seg: the paper's Fig. 5 experiment */
    std::vector<int> profiles;
    bool skewed = false;                    /* --skewed: the library calls pass RT_SEG_SKEWED */
    bool uniform = false;                   /* --uniform: the library calls pass RT_SEG_UNIFORM */
    std::vector<int> paper_m;               /* N = m * 2^20 */
    std::vector<std::string> paper_configs; /* "family[:label] NAME=V ..." */
    bool api = false;                       /* --api: libredtune's checks (api_check.cu) */
    bool type_cases = false;                /* --type-cases: issue 15's cases (types.cu) */
    bool axis = false;                      /* --axis: issue 16's shapes (axis.cu) */
    std::vector<axis_shape> shapes;         /* --shapes O,L,I;...; empty: the issue's */
    /* --every-n (everyn.cu): sizes holds every power of two up to max_n and the random ones */
    bool every_n = false;
    int every_random = 16;                  /* --random K */
    long long max_n = 1LL << 31;            /* --max-n N */
    std::vector<long long> random_sizes;    /* the K drawn from --seed, ascending */
};

/* The options of argv, defaults filled in; --help and usage errors exit here. */
options parse_args(int argc, char **argv);

/* ---- errors and the watchdog ---- */

/* Print "redtune_bench: message" and exit 1 (usage_error: exit 2, with a --help hint). */
[[noreturn]] void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A failed CUDA runtime call, in the driver's convention: RT_EFAULT when the context is lost. */
int rt_fail(cudaError_t r, const char *what, rt_err *e);

/* The case being run, for the watchdog's and a lost context's message. */
extern char g_where[256];

/* Arm the watchdog: a launch that does not finish within 'seconds' ends the run (exit 1)
 * with the case named. alarm(0) disarms it. */
void watch(unsigned seconds, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the GPU: the worker's state (tuner/measure.c), one for the whole run ---- */

extern measure_gpu G;

/* Driver, runtime and primary context on 'o.device', NVRTC, the first header lines and the
 * read yardstick; returns the read bandwidth in GB/s. Exits on failure. */
double bench_start(const options &o);

/* The read-only ceiling of the first 'bytes' at 'in' (rounded down to 16-byte words): the
 * fastest median of the read yardstick's shapes (rt_bw_read, compiled by bench_start) over
 * them, in regime 'hot' as the bench times it; what reading those bytes once takes, the launch,
 * the ramp and the tail included, with nothing reduced or finished. -1 (a line on stderr)
 * when no shape could be timed. */
double bench_read_ceiling_us(CUdeviceptr in, double bytes, int hot);

/* The context of the library on the same device (rt_open of --db, read-only): what an
 * application gets. Exits with the library's message on failure. */
rt_ctx *bench_open(const options &o);

struct timing {
    double median_us = 0, min_us = 0, max_us = 0;
    int reps = 0;
};

/* Time 'fn' (which enqueues the launch sequence on G.stream) with measure_reps: between
 * min_reps and max_reps times, or until budget_s of GPU time was timed. */
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

/* ---- results ---- */

enum status { ST_NONE = 0, ST_OK, ST_WRONG, ST_ERROR };

struct impl_result {
    int status = ST_NONE;
    std::string msg;
    timing t;
};

/* The repetitions of a timing: --reps N, else the tuner's 10..200 until 0.25 s. */
void reps_of(const options &o, int *minr, int *maxr, double *budget);

/* The library's pick for a case, as rt_explain / rt_explain_segmented tell it. */
struct lib_pick {
    bool have = false;          /* rt_explain answered (else res holds its error) */
    bench_pick p;               /* parsed; p.parsed 0: only 'text' is known */
    std::string text;           /* rt_explain's own text */
    std::string lookup;         /* "exact", "nearest 2^k", "same compute capability ...", ... */
};

/* The "[...]" text of a pick for the tables: family, parameters and lookup. */
std::string pick_label(const lib_pick &k);

/* ---- formatting ---- */

const char *status_name(int s);
const char *regime_name(int hot);
std::string fmt_n(long long n);          /* 2^k, else the number */
std::string fmt_seg_n(long long n);      /* 2^k, m*2^20, else the number */
std::string fmt_time(const impl_result &r, bool have);   /* median us, WRONG, ERROR, - */
void csv_field(FILE *f, const std::string &s);
/* bench_read_ceiling_us's CSV fields after the message, ",ceiling_us,redtune_frac_ceiling"
 * (ceiling / redtune's median), each empty where not measured or redtune did not run; and its
 * table columns, the ceiling in us and the limit's share of it, "-" where not measured. */
void csv_ceiling(FILE *f, double ceiling_us, const impl_result &rt);
std::string fmt_ceiling(double ceiling_us);
std::string fmt_ceiling_pct(double ceiling_us, double limit_us);

/* Replace the NaNs of the tuner's float min/max data by 0 (see common.cu). */
void scrub_nan(void *buf, rt_type t, unsigned long long n, int threads);

/* Seeds of the data: the values of (n, op, type), the segmentation of (n, profile). */
uint64_t value_seed(const options &o, long long n, rt_op op, rt_type type);
uint64_t seg_seed(const options &o, long long n, int profile);

/* ---- the modes ---- */

int flat_main(const options &o);        /* flat.cu */
int seg_main(const options &o);         /* seg.cu: --segmented keys|offsets */
int paper_main(const options &o);       /* paper_seg.cu: --paper-seg */
int api_main(const options &o);         /* api_check.cu: --api */
int types_main(const options &o);       /* types.cu: --type-cases */
int axis_main(const options &o);        /* axis.cu: --axis */
int everyn_main(const options &o);      /* everyn.cu: --every-n */

#endif
