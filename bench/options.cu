/*
 * options.cu - redtune_bench's command line (docs/bench.md): the usage text, the parsers of
 * sizes and lists, and the rules between the modes' options. Exits 0 after --help, 2 on a
 * usage error; needs no GPU.
 */
#include "common.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

const char USAGE[] =
    "usage: redtune_bench --db FILE [--device N] [--sizes LIST] [--ops LIST] [--types LIST]\n"
    "                     [--regimes LIST] [--reps N] [--csv FILE] [--seed S] [--keep-nan]\n"
    "                     [--spin-cycles N] [--flush read|write]\n"
    "       redtune_bench --db FILE --segmented keys|offsets [--profiles LIST] [options above]\n"
    "       redtune_bench --paper-seg [--db FILE] [--paper-m LIST] [--paper-config SPEC ...]\n"
    "                     [--profiles LIST] [options above]\n"
    "       redtune_bench --db FILE --type-cases [--ops LIST] [--types LIST] [--sizes LIST]\n"
    "                     [--regimes LIST] [--reps N] [--csv FILE] [--seed S]\n"
    "       redtune_bench --db FILE --axis [--shapes O,L,I;...] [--ops LIST] [--types LIST]\n"
    "                     [--regimes LIST] [--reps N] [--csv FILE] [--seed S]\n"
    "       redtune_bench --db FILE --every-n [--max-n N] [--random K] [--seed S] [--ops LIST]\n"
    "                     [--types LIST] [--regimes LIST] [--reps N] [--csv FILE] [--keep-nan]\n"
    "\n"
    "Times the kernel libredtune picks from --db (rt_reduce, as an application runs it) against\n"
    "cub::DeviceReduce and the read-bandwidth limit, side by side, on one GPU (docs/bench.md).\n"
    "\n"
    "  --db FILE        the redtune database, opened with rt_open (read-only; required, except\n"
    "                   with --paper-seg); its winners for another GPU are used through the\n"
    "                   library's fallback, as rt_reduce uses them\n"
    "  --device N       GPU ordinal (default 0)\n"
    "  --sizes LIST     comma-separated sizes: 1000, 2^20, 4K, 16M, 1G (default every power of\n"
    "                   two 2^10 .. 2^30)\n"
    "  --ops LIST       min, sum, max (default min,sum)\n"
    "  --types LIST     f32, f64, i32, u32, i64, u64 (default f32,f64,i32)\n"
    "  --regimes LIST   cold (L2 flushed before each repetition), hot (default cold,hot)\n"
    "  --reps N         exactly N timed repetitions (default: 10 to 200, until 0.25 s, as the tuner)\n"
    "  --csv FILE       also write every row to FILE\n"
    "  --seed S         seed of the input data and of --every-n's random sizes (default 1)\n"
    "  --keep-nan       keep the NaN the tuner's data puts among floats for min/max (CUB's\n"
    "                   operator< then gives an order-dependent result, reported WRONG)\n"
    "  --api            instead: libredtune's checks (issue 5): (a) the host cost of a cached\n"
    "                   rt_reduce, lookup against the launches; (b) its pick at sizes between\n"
    "                   tuned sizes against the neighbouring winners timed there; (c) rt_reduce\n"
    "                   end to end against the tuned medians; a PASS/MISS line per goal\n"
    "  --flush read|write  cold: the L2 flushed by reading 2 x L2 (default, the tuner's: clean\n"
    "                   lines) or by writing it (dirty lines, as after a kernel that wrote its\n"
    "                   output, and as PyTorch's and Triton's benchmarks flush; reported as\n"
    "                   \"cold-dirty\")\n"
    "  --spin-cycles N  hot regime: cycles of rt_spin before the start event (default 20000, the\n"
    "                   tuner's; a diagnostic: a larger value shows whether a launch sequence's\n"
    "                   host work outlasts the spin)\n"
    "\n"
    "Types and fused operators (docs/bench.md, \"Types and fused operators\"):\n"
    "  --type-cases     issue 15's cases, cold: sum bf16->f32 (2^28, 2^20), amax bf16 (2^28),\n"
    "                   norm2 f16 and bf16 (2^24), var_mean f32 (population; 2^26), sumsq f32\n"
    "                   and argmax f32 (2^26): rt_reduce against CUB's TransformReduce / ArgMax\n"
    "                   (none for var_mean) and the read limit; --ops, --types (any names) and\n"
    "                   --sizes choose among them; at least 20 repetitions; with --every-n\n"
    "                   each operator and type they leave at every size of the sweep\n"
    "\n"
    "Along an axis (docs/bench.md, \"Along an axis\"):\n"
    "  --axis           issue 16's shapes, cold: [O x L x I] reduced along L by rt_reduce_axis\n"
    "                   against cub::DeviceSegmentedReduce (rows, I = 1, only) and the read\n"
    "                   limit; default shapes rows 2^20x16, 65536x128, 4096x4096, 16x2^22,\n"
    "                   32768x1024, the same as columns, and 64x2048x512 along dim 1; --ops\n"
    "                   sum, min, max, argmax (default sum,min); --types f32, bf16, f16, f64,\n"
    "                   i32 (default f32,bf16); at least 20 repetitions\n"
    "  --shapes LIST    instead of those: O,L,I triples separated by ';' (sizes as --sizes:\n"
    "                   \"65536,128,1;1,4096,4096\")\n"
    "  --every-n        instead: issue 14's sweep of n, rt_reduce against cub::DeviceReduce at\n"
    "                   every power of two 2^0 .. --max-n and --random sizes drawn log-uniformly\n"
    "                   from [1, --max-n] by --seed (printed), each also against the floor:\n"
    "                   launch + one DRAM round trip + bytes / read bandwidth, measured at the\n"
    "                   start; default ops min,sum, type f32, regime cold\n"
    "  --max-n N        the largest size of --every-n, 1..2^34 (default 2^31)\n"
    "  --random K       how many random sizes --every-n adds, 0..10000 (default 16)\n"
    "\n"
    "Segmented (docs/bench.md, \"Segmented\"):\n"
    "  --segmented L    keys: rt_reduce_keys (the library's pick for n and the mean segment\n"
    "                   length) against cub::DeviceReduce::ReduceByKey; offsets: rt_reduce_offsets\n"
    "                   against cub::DeviceSegmentedReduce; both against the bandwidth limit of\n"
    "                   the bytes that must move (values, keys or offsets, outputs). Default\n"
    "                   sizes 2^20,2^24,30M (30M = 30*2^20); n < 2^31\n"
    "  --skewed         the library's calls pass RT_SEG_SKEWED (load-balanced kernels only)\n"
    "  --uniform        the library's calls pass RT_SEG_UNIFORM (no long-segment list)\n"
    "  --profiles LIST  segment profiles: one, rand10_50, len3, len1, len1000, heavy (default\n"
    "                   all; with --paper-seg: one,rand10_50,len3, the paper's three scenarios)\n"
    "  --paper-seg      the paper's Fig. 5 experiment: keys, f32 min, N = m*2^20, the paper's\n"
    "                   segmented families at fixed configs generated and compiled here (no\n"
    "                   database needed; with --db rt_reduce_keys gets a column too), and CUB's\n"
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

/* --every-n's sizes (everyn_sizes.c): every power of two up to --max-n and --random sizes. */
void everyn_sizes_of(options &o)
{
    std::vector<long long> rnd(BENCH_EVERYN_MAX_RANDOM), all(BENCH_EVERYN_MAX_SIZES);
    int k = bench_everyn_random(o.max_n, o.every_random, o.seed, rnd.data());
    o.random_sizes.assign(rnd.begin(), rnd.begin() + k);
    int m = bench_everyn_sizes(o.max_n, rnd.data(), k, all.data());
    o.sizes.assign(all.begin(), all.begin() + m);
}

} // namespace

options parse_args(int argc, char **argv)
{
    options o;
    std::vector<std::string> op_names, type_names;
    bool random_given = false, max_n_given = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(USAGE, stdout);
            exit(0);
        } else if (!strcmp(a, "--api")) {
            o.api = true;
        } else if (!strcmp(a, "--type-cases")) {
            o.type_cases = true;
        } else if (!strcmp(a, "--axis")) {
            o.axis = true;
        } else if (!strcmp(a, "--every-n")) {
            o.every_n = true;
        } else if (!strcmp(a, "--skewed")) {
            o.skewed = true;
        } else if (!strcmp(a, "--uniform")) {
            o.uniform = true;
        } else if (!strcmp(a, "--random")) {
            const char *v = need_arg(argc, argv, &i);
            char *end;
            errno = 0;
            long k = strtol(v, &end, 10);
            if (end == v || *end || errno || k < 0 || k > BENCH_EVERYN_MAX_RANDOM)
                usage_error("--random wants a count in 0..%d, not '%s'", BENCH_EVERYN_MAX_RANDOM, v);
            o.every_random = (int)k;
            random_given = true;
        } else if (!strcmp(a, "--max-n")) {
            const char *v = need_arg(argc, argv, &i);
            long long n;
            if (!parse_size(v, &n) || n > (1LL << BENCH_EVERYN_MAX_LOG2))
                usage_error("--max-n wants a size in 1..2^%d (1000, 2^20, 4M), not '%s'",
                            BENCH_EVERYN_MAX_LOG2, v);
            o.max_n = n;
            max_n_given = true;
        } else if (!strcmp(a, "--shapes")) {
            o.shapes.clear();
            std::string all = need_arg(argc, argv, &i);
            size_t at = 0;
            while (at <= all.size()) {
                size_t semi = all.find(';', at);
                std::string one = all.substr(at, semi == std::string::npos ? std::string::npos
                                                                          : semi - at);
                at = semi == std::string::npos ? all.size() + 1 : semi + 1;
                std::vector<std::string> d = split(one.c_str());
                if (d.empty())
                    continue;
                long long v[3];
                if (d.size() != 3 || !parse_size(d[0].c_str(), &v[0]) ||
                    !parse_size(d[1].c_str(), &v[1]) || !parse_size(d[2].c_str(), &v[2]))
                    usage_error("--shapes: '%s' is not O,L,I (three sizes of at least 1)",
                                one.c_str());
                if (v[0] > (1LL << 34) / v[1] || v[0] * v[1] > (1LL << 34) / v[2])
                    usage_error("--shapes: %s has more than 2^34 elements", one.c_str());
                o.shapes.push_back({(unsigned long long)v[0], (unsigned long long)v[1],
                                    (unsigned long long)v[2]});
            }
            if (o.shapes.empty())
                usage_error("--shapes: empty list");
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
            /* Checked after the loop: --type-cases, wherever it stands, takes every operator. */
            op_names = split(need_arg(argc, argv, &i));
            if (op_names.empty())
                usage_error("--ops: empty list");
        } else if (!strcmp(a, "--types")) {
            type_names = split(need_arg(argc, argv, &i));
            if (type_names.empty())
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
        } else if (!strcmp(a, "--flush")) {
            const char *v = need_arg(argc, argv, &i);
            if (!strcmp(v, "read"))
                o.flush_write = false;
            else if (!strcmp(v, "write"))
                o.flush_write = true;
            else
                usage_error("--flush wants read or write, not '%s'", v);
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
    if (o.every_n) {
        /* A mode of its own (everyn.cu): the flat cases at the sizes it makes. */
        const char *other = o.axis ? "--axis" : !o.shapes.empty() ? "--shapes"
                            : o.api ? "--api" : o.paper_seg ? "--paper-seg"
                            : o.layout != SEG_LAYOUT_FLAT ? "--segmented"
                            : !o.profiles.empty() ? "--profiles" : !o.paper_m.empty() ? "--paper-m"
                            : !o.paper_configs.empty() ? "--paper-config" : NULL;
        if (other)
            usage_error("--every-n is a mode of its own: not with %s", other);
        if (!o.sizes.empty())
            usage_error("--every-n makes its own sizes (--max-n, --random, --seed): not with "
                        "--sizes");
        if (o.type_cases && o.max_n > (1LL << 31))
            usage_error("--every-n with --type-cases goes up to --max-n 2^31 (CUB's 32-bit "
                        "counts), not %lld", o.max_n);
    } else if (random_given) {
        usage_error("--random goes with --every-n");
    } else if (max_n_given) {
        usage_error("--max-n goes with --every-n");
    }
    if (!o.shapes.empty() && !o.axis)
        usage_error("--shapes goes with --axis");
    if (o.axis) {
        /* Its own cases (axis.cu): the shapes, four operators, five types. */
        if (o.paper_seg || o.layout != SEG_LAYOUT_FLAT || o.api || o.type_cases)
            usage_error("--axis is a mode of its own: not with --paper-seg, --segmented, --api "
                        "or --type-cases");
        if (o.keep_nan || !o.sizes.empty() || !o.profiles.empty() || !o.paper_m.empty() ||
            !o.paper_configs.empty())
            usage_error("--keep-nan, --sizes, --profiles, --paper-m and --paper-config do not go "
                        "with --axis (--shapes gives its sizes)");
        if (!o.db)
            usage_error("--db FILE is required: the redtune database whose picks are timed");
        for (const std::string &t : op_names) {
            int op = optype_parse_op(t.c_str());
            if (op != RT_SUM && op != RT_MIN && op != RT_MAX && op != RT_ARGMAX)
                usage_error("--ops: '%s' is not one of sum, min, max, argmax (--axis)", t.c_str());
            o.ops.push_back((rt_op)op);
        }
        for (const std::string &t : type_names) {
            int ty = optype_parse_type(t.c_str());
            if (ty != RT_F32 && ty != RT_BF16 && ty != RT_F16 && ty != RT_F64 && ty != RT_I32)
                usage_error("--types: '%s' is not one of f32, bf16, f16, f64, i32 (--axis)",
                            t.c_str());
            o.types.push_back((rt_type)ty);
        }
        if (o.ops.empty())
            o.ops = {RT_SUM, RT_MIN};
        if (o.types.empty())
            o.types = {RT_F32, RT_BF16};
        if (o.regimes.empty())
            o.regimes = {0};
        return o;
    }
    for (const std::string &t : op_names) {
        int op = optype_parse_op(t.c_str());
        if (o.type_cases && op < 0)
            usage_error("--ops: '%s' is not an operator (%s)", t.c_str(), optype_op_list());
        if (!o.type_cases && op != RT_MIN && op != RT_SUM && op != RT_MAX)
            usage_error("--ops: '%s' is not one of min, sum, max (CUB's DeviceReduce "
                        "has those three)", t.c_str());
        o.ops.push_back((rt_op)op);
    }
    for (const std::string &t : type_names) {
        int ty = optype_parse_type(t.c_str());
        if (o.type_cases && ty < 0)
            usage_error("--types: '%s' is not a type (%s)", t.c_str(), optype_type_list());
        if (!o.type_cases && (ty < 0 || ty > RT_U64))
            usage_error("--types: '%s' is not one of f32, f64, i32, u32, i64, u64", t.c_str());
        o.types.push_back((rt_type)ty);
    }
    if (o.type_cases) {
        /* Its own cases (types.cu); --ops, --types and --sizes only choose among them. */
        if (o.paper_seg || o.layout != SEG_LAYOUT_FLAT || o.api)
            usage_error("--type-cases is a mode of its own: not with --paper-seg, --segmented "
                        "or --api");
        if (o.keep_nan || !o.profiles.empty() || !o.paper_m.empty() || !o.paper_configs.empty())
            usage_error("--keep-nan, --profiles, --paper-m and --paper-config do not go with "
                        "--type-cases");
        if (!o.db)
            usage_error("--db FILE is required: the redtune database whose picks are timed");
        if (o.regimes.empty())
            o.regimes = {0};
        if (o.every_n)
            everyn_sizes_of(o);
        return o;
    }
    if (o.paper_seg && o.layout != SEG_LAYOUT_FLAT)
        usage_error("--paper-seg and --segmented are two runs: give one of them");
    if (o.paper_seg && !o.sizes.empty())
        usage_error("--paper-seg takes its sizes from --paper-m (N = m*2^20), not --sizes");
    if (!o.paper_seg && (!o.paper_m.empty() || !o.paper_configs.empty()))
        usage_error("--paper-m and --paper-config go with --paper-seg");
    if (!o.paper_seg && o.layout == SEG_LAYOUT_FLAT && !o.profiles.empty())
        usage_error("--profiles goes with --segmented keys|offsets or --paper-seg");
    if ((o.skewed || o.uniform) && o.layout == SEG_LAYOUT_FLAT)
        usage_error("--skewed and --uniform go with --segmented keys|offsets");
    if (o.skewed && o.uniform)
        usage_error("--skewed and --uniform contradict each other");
    if (!o.db && !o.paper_seg)
        usage_error("--db FILE is required: the redtune database whose picks are timed");
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
    if (o.every_n) {
        everyn_sizes_of(o);
        if (o.types.empty())
            o.types = {RT_F32};
        if (o.regimes.empty())
            o.regimes = {0};
    }
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
