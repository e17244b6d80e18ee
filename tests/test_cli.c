/*
 * test_cli.c - the redtune program's usage errors, exit codes and messages, and the commands
 * that work with no GPU: families, emit, compile, user operators (--op-file), best, the rules
 * of its options (getopt_long's forms, one value per option), cli_parse in this process,
 * --strategy and --budget, --axis and --shapes. The database commands are in
 * test_cli_ship.c, reduce in test_cli_reduce.c. Runs $REDTUNE_BIN (set by tests/run.sh) from
 * the repository root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tuner/cli.h"
#include "tuner/segdata.h"
#include "tests/cli_util.h"

static void usage_errors(void **state)
{
    (void)state;
    EXPECT("", 2, "--op is required");
    EXPECT("--op median", 2, "unknown operator 'median' (known: sum, prod, min, max, argmin, "
           "argmax, amax, asum, sumsq, norm2, mean, var_mean, var_mean_sample, std_mean, "
           "std_mean_sample)");
    EXPECT("--op min --type f17", 2, "unknown type 'f17' (known: f32, f64, i32, u32, i64, u64, "
           "f16, bf16, i8, u8)");
    /* The type spec (--acc, --result): a pair the operator does not define is a usage
     * error naming it, before any database is opened. */
    EXPECT("--op var_mean --type u8 --db /nonexistent/x.db", 2,
           "var_mean of u8 is not defined: var_mean takes f16, bf16, f32, f64\n(see redtune --help)");
    EXPECT("--op sum --type bf16 --acc i32 --db /nonexistent/x.db", 2,
           "sum of bf16 accumulating in i32 is not defined");
    EXPECT("--op sum --acc f33", 2, "--acc: unknown type 'f33' (known: f32, f64");
    EXPECT("--op sum --result elem", 2, "--result wants acc (the accumulator's type, the "
           "default), element (the element type) or index (argmin/argmax: the index alone), "
           "not 'elem'");
    EXPECT("--op argmax --type bf16 --result index", 2, "--result index is not tuned: the "
           "library runs the winners of the {value, index} result for it");
    EXPECT("emit axis_rows --op sum --result index", 2, "RT_RESULT_INDEX is for argmin and "
           "argmax, not sum");
    EXPECT("--op sum --acc f64 --acc f32", 2, "--acc given twice ('f64', then 'f32')");
    EXPECT("--op-file lua/ops/affine.lua --acc f64", 2, "--acc and --result go with the built-in "
           "operators (--op)");
    EXPECT("--cases-from x.log --acc f64", 2, "--cases-from takes the operators, types, sizes "
           "and layouts from its file: --op, --op-file, --type, --acc, --result,");
    EXPECT("report --acc f64 -o x.html", 2, "unknown option '--acc'");
    EXPECT("best --acc f65", 2, "--acc: unknown type 'f65'");
    EXPECT("--op min --frobnicate", 2, "unknown option '--frobnicate'");
    EXPECT("--op", 2, "option --op needs a value");
    EXPECT("--op min --sizes 2^50", 2, "--sizes: '2^50' is not a size");
    EXPECT("--op min --device x", 2, "--device wants a GPU ordinal");
    EXPECT("--op min --jobs 0", 2, "--jobs wants a number of threads");
    EXPECT("tune", 2, "unknown command 'tune'");
    EXPECT("emit", 2, "emit needs a family");
    EXPECT("emit warpspeed", 2, "unknown family 'warpspeed' (known:");
    EXPECT("emit gridstride Q=3", 2, "family 'gridstride' has no parameter 'Q' (parameters: B V U G)");
    EXPECT("emit gridstride B=x", 2, "is not an integer");
    EXPECT("emit gridstride --op avg", 2, "unknown operator 'avg'");
    EXPECT("families extra", 2, "unexpected argument 'extra'");
    EXPECT("best --n zero", 2, "--n: 'zero' is not a size");
    EXPECT("--help", 0, "usage: redtune");
    EXPECT("--version", 0, "redtune 0.");
}

static void commands_without_gpu(void **state)
{
    (void)state;
    EXPECT("families", 0, "gridstride");
    assert_non_null(strstr(out, "tree_interleaved"));
    assert_non_null(strstr(out, "tree_sequential"));
    assert_non_null(strstr(out, "needs a commutative operator: no"));
    EXPECT("emit axis_cols --op argmax --type f64 --result index", 0,
           "typedef long long rt_res_t;\nstatic __device__ __forceinline__ double rt_in");
    EXPECT("emit gridstride --op argmin --type bf16 --result index", 0,
           "static __device__ __forceinline__ rt_res_t rt_final(rt_acc_t a) { return a.i; }");
    EXPECT("emit gridstride B=512 --op max --type i64", 0, "typedef long long rt_value_t;");
    assert_non_null(strstr(out, "#define RT_B 512"));
    EXPECT("compile --arch sm_90 --space tests/lua/good_small.lua --jobs 2", 0, "0 failed");
    EXPECT("compile --arch sm_9x", 2, "--arch: 'sm_9x' is not an architecture (sm_XY with X "
           "from 5 to 9, e.g. sm_90)");
    EXPECT("compile --arch sm_1", 2, "--arch: 'sm_1' is not an architecture");
    EXPECT("compile --arch sm_30", 2, "--arch: 'sm_30' is not an architecture");
    EXPECT("compile --arch sm_900", 2, "--arch: 'sm_900' is not an architecture");
    EXPECT("compile --arch sm_90 --space tests/lua/nonexistent.lua", 1, "tests/lua/nonexistent.lua: No such file");
}

static void bad_spaces_exit_1(void **state)
{
    (void)state;
    EXPECT("compile --arch sm_90 --space tests/lua/bad_syntax.lua", 1, "tests/lua/bad_syntax.lua:");
    EXPECT("compile --arch sm_90 --space tests/lua/bad_loop.lua", 1, "instruction limit");
    EXPECT("compile --arch sm_90 --space tests/lua/bad_io.lua", 1, "tests/lua/bad_io.lua:");
    EXPECT("compile --arch sm_90 --space tests/lua/bad_os.lua", 1, "tests/lua/bad_os.lua:");
}

/* The runtime sets OFF64 from the call, so every config of the shipped space must compile with
 * 64-bit offsets too: seg_pipe's tile shrinks where its three slots of offsets would pass its
 * 48 KB (B=256 SEGS=8 with 8-byte offsets once failed its static_assert). */
static void compile_off64(void **state)
{
    (void)state;
    EXPECT("compile --arch sm_90 --space lua/spaces/segmented_ship.lua --segmented offsets --off64 "
           "--family seg_pipe --jobs 2", 0, "0 failed");
    EXPECT("compile --arch sm_90 --space lua/spaces/segmented_ship.lua --segmented offsets --off64 "
           "--family seg_pipe --op sum --type f64 --jobs 2", 0, "0 failed");
    EXPECT("compile --arch sm_90 --off64", 2, "--off64 goes with --segmented offsets");
    EXPECT("compile --arch sm_90 --segmented keys --off64", 2, "--off64 goes with --segmented offsets");
}

static void no_driver_leaves_database_alone(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char args[512], db[300];
    snprintf(db, sizeof db, "%s/new.db", dir);
    /* Force "no driver" even on a GPU machine. */
    setenv("REDTUNE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    snprintf(args, sizeof args, "--op min --sizes 2^10 --db %s", db);
    EXPECT(args, 1, "no CUDA driver found");
    unsetenv("REDTUNE_LIBCUDA");
    assert_false(file_exists(db));
    rmdir(dir);
}

/* --op-file with no GPU: emit, compile, legality, bad files, and best on user-op rows. */
static void user_operators_without_gpu(void **state)
{
    (void)state;
    EXPECT("emit tb2 --op-file lua/ops/affine.lua", 0, "#line 20 \"lua/ops/affine.lua\"\n");
    assert_non_null(strstr(out, "#define RT_COMMUTATIVE 0\n"));
    assert_non_null(strstr(out, "typedef unsigned long long rt_value_t;"));
    EXPECT("emit gridstride --op-file lua/ops/satsum.lua --type u32", 0,
           "#define RT_COMMUTATIVE 1\n");
    EXPECT("emit gridstride --op-file lua/ops/affine.lua", 2,
           "emit gridstride: the family needs a commutative operator, and 'affine' "
           "(lua/ops/affine.lua) is not commutative");
    EXPECT("emit tb2 --op-file lua/ops/affine.lua --type f32", 2,
           "--type f32: the operator file lua/ops/affine.lua says type u64");
    EXPECT("--op min --op-file lua/ops/affine.lua", 2, "--op-file and --op exclude each other");
    EXPECT("--op-file", 2, "option --op-file needs a value");
    EXPECT("compile --arch sm_90 --op-file lua/ops/affine.lua --space tests/lua/good_small.lua "
           "--jobs 2", 0, "left out, since 'affine' does not commute: gridstride\n");
    assert_non_null(strstr(out, "(affine u64, NVRTC"));
    assert_non_null(strstr(out, " 0 failed"));
    EXPECT("compile --arch sm_90 --op-file tests/ops/bad_compile.lua "
           "--space tests/lua/good_small.lua", 1,
           "tests/ops/bad_compile.lua: operator 'broken' does not compile for sm_90:\n");
    assert_non_null(strstr(out, "tests/ops/bad_compile.lua(10): error"));
    EXPECT("compile --arch sm_90 --op-file lua/ops/affine.lua --family gridstride,tree_sequential",
           2, "--family gridstride,tree_sequential: these families need a commutative operator, "
           "and 'affine' (lua/ops/affine.lua) is not commutative");
    EXPECT("compile --arch sm_90 --op-file lua/ops/affine.lua --family tb2", 1,
           "the space has no config for affine u64 on (no GPU: generic sm_90) in the families tb2");
    EXPECT("compile --arch sm_90 --family tb2,,gridstride", 2, "is not a comma-separated list");
    EXPECT("compile --arch sm_90 --family warp", 2, "unknown family 'warp'");
    EXPECT("--op-file tests/ops/bad_syntax.lua", 1, "tests/ops/bad_syntax.lua:4: '}' expected");
    EXPECT("--op-file tests/ops/bad_missing.lua", 1,
           "tests/ops/bad_missing.lua: field 'combine' is missing");
    EXPECT("--op-file tests/ops/bad_builtin.lua", 1, "name 'sum' is a built-in operator");
    EXPECT("--op-file tests/ops/nonexistent.lua", 1, "tests/ops/nonexistent.lua: No such file");
}

/* Explicitly asking for only commutative families with a non-commutative operator: a usage
 * error before anything else, the database untouched. */
static void user_operator_illegal_family(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", args[512], db[300];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/op.db", dir);
    snprintf(args, sizeof args, "--op-file lua/ops/affine.lua --family tree_sequential --db %s",
             db);
    EXPECT(args, 2, "--family tree_sequential: the family needs a commutative operator, and "
           "'affine' (lua/ops/affine.lua) is not commutative");
    assert_false(file_exists(db));
    rmdir(dir);
}

/* `best` shows a user operator's rows, selected by its name or its file. */
static void best_shows_user_ops(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", args[512], db[300];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/best.db", dir);
    rt_err e;
    store *s;
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    rt_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "Fake GPU");
    snprintf(d.uuid, sizeof d.uuid, "feedface");
    d.cc_major = 9;
    long long dev;
    assert_int_equal(store_put_device(s, &d, 1000, &dev, &e), RT_OK);
    assert_int_equal(store_put_kernel(s, "kaff", "tb2", "B=256 R=2 PAD=1 PAD_PERIOD=32",
                                      "/* src */", &e), RT_OK);
    store_measurement m = {dev, 0, "kaff", "affine", "u64", "flat", 1 << 20, 0, "ok", "", 9.5,
                           9, 10, 20, 880, 0.3, 1, 1};
    assert_int_equal(store_put_measurement(s, &m, &e), RT_OK);
    assert_int_equal(store_update_best(s, dev, "affine", "u64", "flat", 1 << 20, 0, &e), RT_OK);
    store_close(s);
    snprintf(args, sizeof args, "best --db %s --op affine", db);
    EXPECT(args, 0, "affine   u64");
    assert_non_null(strstr(out, "tb2"));
    snprintf(args, sizeof args, "best --db %s --op-file lua/ops/affine.lua", db);
    EXPECT(args, 0, "affine   u64");
    snprintf(args, sizeof args, "best --db %s --op satsum", db);
    EXPECT(args, 1, "nothing stored as best for that filter");
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

/* best refuses a database as export, merge, dump and reduce do: exit 3. */
static void foreign_database_refused(void **state)
{
    (void)state;
    EXPECT("best --db tests/db/not_sqlite.db", 3, "not a redtune database");
    EXPECT("best --db tests/db/foreign.db", 3, "tests/db/foreign.db");
    EXPECT("best --db /nonexistent-dir/x.db", 3, "/nonexistent-dir/x.db");
    /* Tuning refuses them too, before it looks for a GPU. */
    EXPECT("--op min --sizes 1K --db tests/db/foreign.db", 3, "tests/db/foreign.db");
    EXPECT("--op min --sizes 1K --db tests/db/newer.db", 3, "tests/db/newer.db");
}

/* ---------------------------------------------------------------- getopt_long rules */

/* --name=VALUE, "--", options after operands; abbreviations, values given to flags, missing
 * values and extra operands are usage errors naming the option as given. */
static void option_forms(void **state)
{
    (void)state;
    EXPECT("best --db=tests/db/foreign.db", 3, "redtune: tests/db/foreign.db: not a redtune "
           "database");
    EXPECT("best --op=min --db=/nonexistent-dir/x.db", 3, "/nonexistent-dir/x.db");
    EXPECT("dump -- -nonexistent.db", 3, "redtune: -nonexistent.db: No such file or directory");
    EXPECT("dump -nonexistent.db", 2, "unknown option '-n'");
    EXPECT("emit --op=max -- gridstride B=128", 0, "#define RT_B 128");
    EXPECT("emit B=128 --op max gridstride", 2, "unknown family 'B=128'");
    EXPECT("--op min --dev 1", 2, "unknown option '--dev' (did you mean --device? options are "
           "never abbreviated)");
    EXPECT("--op min --de 1", 2, "unknown option '--de'");   /* ambiguous */
    EXPECT("--op min --hot=1", 2, "option --hot takes no value");
    EXPECT("--op min --bogus=1", 2, "unknown option '--bogus'");
    EXPECT("--op min -x", 2, "unknown option '-x'");
    EXPECT("--op min --sizes", 2, "option --sizes needs a value");
    EXPECT("--op min --hot extra", 2, "unexpected argument 'extra'");
    EXPECT("--op min -- --hot", 2, "unexpected argument '--hot'");
    EXPECT("best --hot", 2, "unknown option '--hot'");
    EXPECT("compile extra", 2, "compile: unexpected argument 'extra'");
    EXPECT("export --match x -o /tmp/x.db extra", 2, "export: unexpected argument 'extra' (the "
           "input is --db FILE)");
    EXPECT("reduce --op sum --in=v.bin -- extra", 2, "reduce: unexpected argument 'extra'");
    EXPECT("worker extra", 2, "worker: unexpected argument 'extra'");
    EXPECT("families --help", 0, "usage: redtune");
}

/* One value per option: a second one is refused (it used to replace the first silently);
 * --match is a list. Empty file names are named as the option that gave them. */
static void repeated_and_empty_options(void **state)
{
    (void)state;
    EXPECT("--op min --op max", 2, "redtune: --op given twice ('min', then 'max'): it takes one "
           "value\n(see redtune --help)\n");
    EXPECT("--op min --sizes 2^10 --sizes=2^12", 2, "--sizes given twice ('2^10', then '2^12')");
    EXPECT("--op min --jobs 1 --jobs 2", 2, "--jobs given twice");
    EXPECT("compile --arch sm_90 --arch sm_80", 2, "--arch given twice");
    EXPECT("best --db a.db --db b.db", 2, "--db given twice ('a.db', then 'b.db')");
    EXPECT("reduce --op sum --in v.bin -o a.bin --output b.bin", 2,
           "--output given twice ('a.bin', then 'b.bin')");
    EXPECT("reduce --op sum --in v.bin -oa.bin -o b.bin", 2, "-o given twice ('a.bin', then "
           "'b.bin')");
    EXPECT("reduce --op sum --in v.bin --in w.bin", 2, "--in given twice");
    /* Refused before either file is loaded: nothing to leak (ninja asan). */
    EXPECT("reduce --op-file lua/ops/affine.lua --op-file lua/ops/satsum.lua --in v.bin", 2,
           "--op-file given twice ('lua/ops/affine.lua', then 'lua/ops/satsum.lua')");
    EXPECT("--op-file lua/ops/affine.lua --op-file lua/ops/affine.lua", 2,
           "--op-file given twice");
    EXPECT("export --db a.db --match H100 --match A100", 2, "-o FILE is required");
    EXPECT("emit gridstride B=128 B=256", 2, "emit: parameter B given twice");
    EXPECT("best --db ''", 2, "redtune: --db: empty path\n");
    EXPECT("best --db=", 2, "redtune: --db: empty path\n");
    EXPECT("reduce --op sum --in ''", 2, "redtune: --in: empty path\n");
    EXPECT("reduce --op sum --in v.bin -o ''", 2, "redtune: -o: empty path\n");
    EXPECT("merge '' -o x.db", 2, "merge: an input is an empty path");
}

/* cli_parse itself: no exit, getopt's state reset between calls, the struct filled. */
static void cli_parse_in_process(void **state)
{
    (void)state;
    cli_args a;
    rt_err e;
    char *ok[] = {"redtune", "export", "--db=in.db", "--match", "H100", "-o", "x.db",
                  "--match=A100", "--", "--force", NULL};
    char *bad[] = {"redtune", "reduce", "--op", "sum", "--op", "min", NULL};
    char *dump[] = {"redtune", "dump", "-o", "d.sql", "--force", "--", "-x.db", NULL};
    for (int round = 0; round < 2; round++) {
        assert_int_equal(cli_parse(10, ok, &a, &e), RT_EINVAL);   /* "--force": an operand */
        assert_non_null(strstr(e.msg, "export: unexpected argument '--force'"));
        cli_free(&a);
        assert_int_equal(cli_parse(9, ok, &a, &e), RT_OK);
        assert_int_equal(a.cmd, CLI_EXPORT);
        assert_string_equal(a.db, "in.db");
        assert_string_equal(a.out, "x.db");
        assert_int_equal(a.nmatch, 2);
        assert_string_equal(a.match[1], "A100");
        cli_free(&a);
        assert_int_equal(cli_parse(6, bad, &a, &e), RT_EINVAL);
        assert_non_null(strstr(e.msg, "--op given twice ('sum', then 'min')"));
        cli_free(&a);
        assert_int_equal(cli_parse(7, dump, &a, &e), RT_OK);
        assert_int_equal(a.nfiles, 1);
        assert_string_equal(a.files[0], "-x.db");
        assert_true(a.force);
        cli_free(&a);
    }
}

/* --strategy, --budget, --strategy-seed: bad values are usage errors naming the option and
 * the value; good ones land in tune_opts (budgets per case: configs or seconds). */
static void strategy_options(void **state)
{
    (void)state;
    EXPECT("--op min --strategy annealing", 2, "redtune: --strategy: unknown strategy "
           "'annealing' (known: exhaustive, random, halving, local)\n(see redtune --help)");
    /* Each bad value, and the message naming it ('%1$s' is the value). */
    static const struct { const char *v, *why; } bad[] = {
#define NO_UNIT "redtune: --budget: '%1$s' is no number or unit (a count of configs per case, " \
    "e.g. 200, seconds per case, e.g. 60s or 5m, or a share of each case's configs, e.g. " \
    "20%% or 15%%,8 for at least 8)\n(see redtune --help)"
#define NO_SHARE "redtune: --budget: '%1$s' is no share of a case's configs: the percentage " \
    "is above 0 and at most 100\n(see redtune --help)"   /* out of (0, 100] */
#define NO_FLOOR "redtune: --budget: '%1$s': the floor after 'P%%,' is a count of configs " \
    "(15%%,8: 15%% of each case's configs, at least 8)"   /* after the share: a count */
        {"10x", NO_UNIT}, {"s", NO_UNIT}, {"0", NO_UNIT}, {"-5", NO_UNIT}, {"1.5", NO_UNIT},
        {"60sec", NO_UNIT}, {"0s", NO_UNIT}, {"", NO_UNIT}, {"1e99s", NO_UNIT},
        {"x%", NO_UNIT}, {"%", NO_UNIT}, {"20%%", NO_UNIT}, {"-20%", NO_UNIT},
        {"20%x", NO_UNIT}, {"20s%", NO_UNIT}, {"1e999%", NO_UNIT}, {"15s,8", NO_UNIT},
        {"8,8", NO_UNIT}, {"15%;8", NO_UNIT},
        {"0%", NO_SHARE}, {"150%", NO_SHARE}, {"100.5%", NO_SHARE}, {"0.0%", NO_SHARE},
        {"15%,", NO_FLOOR}, {"15%,0", NO_FLOOR}, {"15%,x", NO_FLOOR}, {"15%,8x", NO_FLOOR},
        {"15%,-3", NO_FLOOR}, {"15%,1.5", NO_FLOOR},
#undef NO_UNIT
#undef NO_SHARE
#undef NO_FLOOR
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[64], want[320];
        snprintf(args, sizeof args, "--op min --budget '%s'", bad[i].v);
        snprintf(want, sizeof want, bad[i].why, bad[i].v);
        EXPECT(args, 2, want);
    }
    EXPECT("--op min --budget 20% --budget 60s", 2, "--budget given twice ('20%', then '60s')");
    EXPECT("--op min --budget=7 --budget 8", 2, "--budget given twice ('7', then '8')");
    EXPECT("--op min --strategy-seed -1", 2, "--strategy-seed wants a non-negative integer, "
           "not '-1'");
    EXPECT("best --strategy random", 2, "unknown option '--strategy'");
    EXPECT("--help", 0, "  --budget B     per case");

    char *ok[] = {"redtune", "--op", "min", "--strategy=halving", "--budget", "60s",
                  "--strategy-seed", "42", NULL};
    char *cfg[] = {"redtune", "--op", "min", "--budget", "200", "--strategy", "local", NULL};
    char *def[] = {"redtune", "--op", "min", "--budget", "1.5m", NULL};
    cli_args a;
    rt_err e;
    assert_int_equal(cli_parse(8, ok, &a, &e), RT_OK);
    assert_string_equal(a.tune.strategy, "halving");
    assert_true(a.tune.budget_s == 60 && a.tune.budget == 0);
    assert_int_equal(a.tune.strategy_seed, 42);
    cli_free(&a);
    assert_int_equal(cli_parse(7, cfg, &a, &e), RT_OK);
    assert_string_equal(a.tune.strategy, "local");
    assert_true(a.tune.budget == 200 && a.tune.budget_s == 0);
    cli_free(&a);
    assert_int_equal(cli_parse(5, def, &a, &e), RT_OK);
    assert_null(a.tune.strategy);   /* exhaustive */
    assert_true(a.tune.budget_s == 90);
    assert_int_equal(a.tune.strategy_seed, 1);   /* reproducible by default */
    cli_free(&a);
    /* A percentage: kept as such (the run turns it into a count per case). */
    char *pct[] = {"redtune", "--op", "min", "--budget=12.5%", "--strategy", "random", NULL};
    char *all[] = {"redtune", "--op", "min", "--budget", "100%", NULL};
    assert_int_equal(cli_parse(6, pct, &a, &e), RT_OK);
    assert_true(a.tune.budget_pct == 12.5 && a.tune.budget == 0 && a.tune.budget_s == 0);
    cli_free(&a);
    assert_int_equal(cli_parse(5, all, &a, &e), RT_OK);
    assert_true(a.tune.budget_pct == 100 && a.tune.budget == 0 && a.tune.budget_min == 0);
    cli_free(&a);
    char *floor[] = {"redtune", "--op", "min", "--budget", "15%,8", NULL};
    assert_int_equal(cli_parse(5, floor, &a, &e), RT_OK);
    assert_true(a.tune.budget_pct == 15 && a.tune.budget_min == 8 && a.tune.budget == 0);
    cli_free(&a);
    /* replay takes the same options, its files, and no budget of seconds. */
    EXPECT("replay", 2, "replay: which measurements? a database or the CSV of `redtune "
           "measurements --format csv` is required");
    EXPECT("replay x.db --budget 60s", 2, "replay: --budget in seconds cannot be replayed");
    EXPECT("replay x.db --format json", 2, "replay: --format is table or csv");
    EXPECT("replay x.db --sizes 2^20", 2, "unknown option '--sizes'");
    EXPECT("replay x.db --strategy annealing", 2, "unknown strategy 'annealing'");
}


/* --axis and --shapes: the shapes parsed (O,L,I or OxLxI, ';' between them), the default set
 * when none is given, and every bad shape or combination a usage error naming it. */
static void axis_options(void **state)
{
    (void)state;
    cli_args a;
    rt_err e;
    char *ok[] = {"redtune", "--op", "sum", "--axis", "--shapes", "3,1,17;2x4099x3;5,333,1", NULL};
    assert_int_equal(cli_parse(6, ok, &a, &e), RT_OK);
    assert_int_equal(a.tune.layout, SEG_LAYOUT_AXIS);
    assert_int_equal(a.tune.nshapes, 3);
    assert_true(a.tune.shapes[1].outer == 2 && a.tune.shapes[1].len == 4099
                && a.tune.shapes[1].inner == 3);
    assert_true(a.tune.shapes[2].outer == 5 && a.tune.shapes[2].inner == 1);
    cli_free(&a);
    char *plain[] = {"redtune", "--op", "min", "--axis", NULL};
    assert_int_equal(cli_parse(4, plain, &a, &e), RT_OK);
    assert_int_equal(a.tune.layout, SEG_LAYOUT_AXIS);
    assert_int_equal(a.tune.nshapes, 0);   /* main.c takes the default shapes */
    cli_free(&a);
    axis_shape d[TUNE_MAX_SHAPES];
    assert_int_equal(axisdata_default_shapes(d, TUNE_MAX_SHAPES), 11);
    assert_true(d[0].outer == 1048576 && d[0].len == 16 && d[0].inner == 1);
    assert_true(d[10].outer == 64 && d[10].len == 2048 && d[10].inner == 512);

    static const char *const bad[][2] = {
        {"1,2", "--shapes: '1,2' is not a shape (three positive integers O,L,I: outer, len, "
                "inner; shapes separated by ';')"},
        {"1,0,3", "--shapes: '1,0,3' is not a shape"},
        {"1,2,3,4", "--shapes: '1,2,3,4' is not a shape"},
        {"1x2,3", "--shapes: '1x2,3' is not a shape"},
        {"-1,2,3", "--shapes: '-1,2,3' is not a shape"},
        {"1,2,3;", "--shapes: '' is not a shape"},
        {"1,2,3;a,b,c", "--shapes: 'a,b,c' is not a shape"},
        {" 1,2,3", "--shapes: ' 1,2,3' is not a shape"},
        {"99999999999999999999,1,1", "--shapes: '99999999999999999999,1,1' is not a shape"},
        {"4294967296,4294967296,1", "--shapes: '4294967296,4294967296,1': outer x len x inner "
                                    "overflows 64 bits\n(see redtune --help)"},
        {"2097152,2097152,2097152", "--shapes: '2097152,2097152,2097152': outer x len x inner "
                                    "overflows 64 bits"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[256];
        snprintf(args, sizeof args, "--op sum --axis --shapes '%s'", bad[i][0]);
        EXPECT(args, 2, bad[i][1]);
    }
    char many[1024] = "--op sum --axis --shapes '";
    for (int i = 0; i <= TUNE_MAX_SHAPES; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s1,%d,1", i ? ";" : "", i + 1);
    strcat(many, "'");
    EXPECT(many, 2, "--shapes: more than 32 shapes\n(see redtune --help)");
    EXPECT("--op sum --shapes 1,2,3", 2, "redtune: --shapes goes with --axis\n");
    EXPECT("--op sum --axis --sizes 1000", 2, "--axis takes its cases from --shapes: --sizes, "
           "--segmented, --profiles and --off64 do not go with it\n(see redtune --help)");
    EXPECT("--op sum --axis --segmented keys", 2, "--axis takes its cases from --shapes:");
    EXPECT("--op sum --axis --profiles one", 2, "--axis takes its cases from --shapes:");
    EXPECT("--op sum --axis --off64", 2, "--axis takes its cases from --shapes:");
    EXPECT("--op-file lua/ops/affine.lua --axis", 2, "--axis tunes the built-in operators; user "
           "operators (--op-file) are tuned unsegmented");
    EXPECT("--segmented axis --op sum", 2, "--segmented: 'axis' is not a layout (keys, offsets)");
    EXPECT("--cases-from x.log --axis", 2, "--cases-from takes the operators, types, sizes and "
           "layouts from its file: --op, --op-file, --type, --acc, --result, --sizes, "
           "--segmented, --profiles, --off64, --axis and --shapes do not go with it");
    EXPECT("--op sum --axis --shapes 1,2,3 --shapes 4,5,6", 2, "--shapes given twice");
    EXPECT("best --axis", 2, "unknown option '--axis'");
    EXPECT("--help", 0, "  --shapes LIST  the shapes of --axis, O,L,I (or OxLxI) separated by ';'");
    /* compile: the space expanded for each shape, the configs compiled once. */
    EXPECT("compile --arch sm_90 --axis --shapes '65536,128,1;64x2048x512;5,333,1' --op sum "
           "--space tests/lua/axis_small.lua --jobs 2", 0,
           "compiled 3 configs of tests/lua/axis_small.lua for sm_90 (sum f32");
    EXPECT("compile --arch sm_90 --axis --shapes 64,2048,512 --op sum --space "
           "tests/lua/axis_small.lua --family axis_rows", 1, "tests/lua/axis_small.lua: the "
           "space has no config for sum f32 layout axis:64x2048x512 on (no GPU: generic sm_90) "
           "in the families axis_rows");
}

/* The sizes of a tuning run without --sizes (cli_default_sizes): flat every power of two
 * 2^4 .. 2^14, then every second one to 2^30 (nineteen); segmented 2^14, 2^18, 2^22, 30 x 2^20;
 * never more than the room given. */
static void default_sizes(void **state)
{
    (void)state;
    long long v[CLI_MAX_SIZES];
    int n = cli_default_sizes(0, v, CLI_MAX_SIZES);
    assert_int_equal(n, 19);
    for (int i = 0; i < n; i++) {
        int k = i <= 10 ? 4 + i : 14 + 2 * (i - 10);
        if (v[i] != 1LL << k)
            fail_msg("flat size %d is %lld, want 2^%d", i, v[i], k);
    }
    assert_int_equal(cli_default_sizes(1, v, CLI_MAX_SIZES), 4);
    assert_true(v[0] == 1LL << 14 && v[1] == 1LL << 18 && v[2] == 1LL << 22 && v[3] == 30LL << 20);
    assert_int_equal(cli_default_sizes(0, v, 3), 3);
    assert_true(v[0] == 16 && v[2] == 64);
    assert_int_equal(cli_default_sizes(1, v, 0), 0);
}

int test_cli_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(usage_errors),
        cmocka_unit_test(commands_without_gpu),
        cmocka_unit_test(bad_spaces_exit_1),
        cmocka_unit_test(compile_off64),
        cmocka_unit_test(no_driver_leaves_database_alone),
        cmocka_unit_test(foreign_database_refused),
        cmocka_unit_test(user_operators_without_gpu),
        cmocka_unit_test(user_operator_illegal_family),
        cmocka_unit_test(best_shows_user_ops),
        cmocka_unit_test(option_forms),
        cmocka_unit_test(repeated_and_empty_options),
        cmocka_unit_test(cli_parse_in_process),
        cmocka_unit_test(strategy_options),
        cmocka_unit_test(axis_options),
        cmocka_unit_test(default_sizes),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
