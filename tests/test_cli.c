/*
 * test_cli.c - the redtune program's usage errors, exit codes and messages, and the commands
 * that work with no GPU. Runs $REDTUNE_BIN (set by tests/run.sh) from the repository root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>

#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tuner/cli.h"
#include "tuner/segdata.h"

static char out[1 << 20];

/* Environment assignments put before the program by run() ("NAME=VALUE "), so that a test
 * that fails halfway leaves the test process's own environment as it was. */
static const char *run_env = "";

/* Run "$REDTUNE_BIN args" with stdout and stderr captured into 'out'; the exit status. */
static int run(const char *args)
{
    const char *bin = getenv("REDTUNE_BIN");
    if (!bin)
        bin = "build/redtune";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s%s %s 2>&1", run_env, bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

#define EXPECT(args, code, text)                                              \
    do {                                                                      \
        int rc_ = run(args);                                                  \
        if (rc_ != (code) || !strstr(out, (text)))                           \
            print_error("redtune %s -> %d:\n%s\n", (args), rc_, out);         \
        assert_int_equal(rc_, (code));                                        \
        assert_non_null(strstr(out, (text)));                                 \
    } while (0)

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
           "default) or element (the element type), not 'elem'");
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

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
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


/* The SHA-256 of "// src", the source of the kernel of the dumps below (the shipping
 * commands check that a kernel's hash is its source's). */
#define K1 "aa529088f8c98bbcd86484f394627a77ec1d20004fd07f2752942c87f2d8d9cd"

/* export, merge, dump, load: a dump written here, loaded, exported, merged, dumped again;
 * their exit codes (3: an input refused) and outputs written whole or not at all. */
static void ship_commands(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", args[1024], p[5][300];
    assert_non_null(mkdtemp(dir));
    const char *names[5] = {"one.sql", "one.db", "app.db", "all.db", "again.sql"};
    for (int i = 0; i < 5; i++)
        snprintf(p[i], sizeof p[i], "%s/%s", dir, names[i]);
    FILE *fp = fopen(p[0], "w");
    assert_non_null(fp);
    fputs("-- redtune dump: schema version 1\n"
          "INSERT INTO devices (id, name, uuid, ordinal, cc_major, cc_minor, sm_count, "
          "warp_size, max_threads_per_block, max_threads_per_sm, max_blocks_per_sm, "
          "smem_per_block, smem_per_block_optin, smem_per_sm, regs_per_block, regs_per_sm, "
          "l2_bytes, mem_clock_khz, bus_width_bits, driver_version, total_mem, read_gbps, "
          "first_seen, last_seen) VALUES (1, 'NVIDIA H100 80GB HBM3', 'aa', 0, 9, 0, 132, 32, "
          "1024, 2048, 32, 49152, 232448, 233472, 65536, 65536, 52428800, 2619000, 5120, "
          "13000, 85045346304, 3205.6, '2026-11-22T00:00:00Z', '2026-11-22T00:00:00Z');\n"
          "INSERT INTO kernels (hash, family, params, source, created_at) VALUES ('" K1 "', "
          "'gridstride', 'B=512', '// src', '2026-11-22T00:00:00Z');\n"
          "INSERT INTO binaries (hash, arch, nvrtc_version, cubin, registers, smem_bytes, log, "
          "created_at) VALUES ('" K1 "', 'sm_90', 13000, X'0001', 32, 0, NULL, "
          "'2026-11-22T00:00:00Z');\n"
          "INSERT INTO best (device_id, op, type, layout, n, hot, kernel_hash, median_us, "
          "min_us, max_us, reps, gbps, frac_bw, deterministic, updated_at) VALUES (1, 'min', "
          "'f32', 'flat', 1048576, 0, '" K1 "', 6.91, 6.8, 7.2, 100, 606.8, 0.189, 1, "
          "'2026-11-22T00:00:00Z');\n", fp);
    fclose(fp);

    snprintf(args, sizeof args, "load %s -o %s", p[0], p[1]);
    EXPECT(args, 0, "1 device, 1 best entries, 1 kernels, 1 CUBINs");
    EXPECT(args, 1, "exists (--force overwrites it)");
    snprintf(args, sizeof args, "export --db %s --match A100 -o %s", p[1], p[2]);
    EXPECT(args, 1, "no device matches 'A100' (it holds: NVIDIA H100 80GB HBM3)");
    assert_false(file_exists(p[2]));
    snprintf(args, sizeof args, "export --db %s --match a100 --match H100 -o %s", p[1], p[2]);
    EXPECT(args, 0, "exported into");
    snprintf(args, sizeof args, "merge %s %s -o %s", p[1], p[2], p[3]);
    EXPECT(args, 0, "merged into");
    snprintf(args, sizeof args, "dump %s -o %s", p[3], p[4]);
    EXPECT(args, 0, "dumped into");
    snprintf(args, sizeof args, "dump %s", p[1]);
    EXPECT(args, 0, "-- redtune dump: schema version 3\n");
    /* The version 1 dump's best row: acc and result are its type. */
    assert_non_null(strstr(out, "VALUES (1, 'min', 'f32', 'f32', 'f32', 'flat', 1048576, 0, '"
                                K1 "', 6.91, 6.8,"));

    /* Version 2 inputs (tests/db/v2.db, its dump v2.sql, both made by the redtune of that
     * schema): loaded, merged, exported as version 3, acc = result = type; a dump of the
     * version 2 file says version 2 and reads back. */
    snprintf(args, sizeof args, "load tests/db/v2.sql -o %s/v2.db", dir);
    EXPECT(args, 0, "1 device, 2 best entries, 2 kernels, 1 CUBINs, 3 measurements, 1 runs");
    snprintf(args, sizeof args, "merge tests/db/v2.db %s/v2.db %s -o %s/m.db", dir, p[1], dir);
    EXPECT(args, 0, "2 devices, 3 best entries, 3 kernels, 2 CUBINs, 3 measurements, 1 runs");
    snprintf(args, sizeof args, "dump %s/m.db", dir);
    EXPECT(args, 0, "-- redtune dump: schema version 3\n");
    assert_non_null(strstr(out, "c7f47c7', 'sum', 'f64', 'f64', 'f64', 'keys:len3', 16384, 0, "
                                "'ok', '', 5.25,"));
    EXPECT("dump tests/db/v2.db", 0, "-- redtune dump: schema version 2\n");
    assert_non_null(strstr(out, "INSERT INTO best (device_id, op, type, layout,"));
    snprintf(args, sizeof args, "export --db tests/db/v2.db --match h100 --with-measurements "
             "-o %s/e.db", dir);
    EXPECT(args, 0, "exported into");
    snprintf(args, sizeof args, "best --db tests/db/v2.db --format csv");
    EXPECT(args, 0, "NVIDIA H100 80GB HBM3,sm_90,a1b2,3000.0,min,f32,f32,f32,1048576,flat,");
    assert_false(file_exists("tests/db/v2.db-wal"));
    char sub[300];
    snprintf(sub, sizeof sub, "%s/v2.db", dir);
    unlink(sub);
    snprintf(sub, sizeof sub, "%s/m.db", dir);
    unlink(sub);
    snprintf(sub, sizeof sub, "%s/e.db", dir);
    unlink(sub);

    /* Refused inputs: exit 3, the file named, nothing written. */
    snprintf(args, sizeof args, "merge %s tests/db/foreign.db -o %s/x.db", p[1], dir);
    EXPECT(args, 3, "tests/db/foreign.db: not a redtune database");
    snprintf(args, sizeof args, "merge %s %s/missing.db -o %s/x.db", p[1], dir, dir);
    EXPECT(args, 3, "missing.db: No such file or directory");
    snprintf(args, sizeof args, "export --db tests/db/newer.db --match x -o %s/x.db", dir);
    EXPECT(args, 3, "tests/db/newer.db: schema version 99 is newer");
    snprintf(args, sizeof args, "dump tests/db/corrupt.db -o %s/x.sql", dir);
    EXPECT(args, 3, "tests/db/corrupt.db: corrupt database");
    snprintf(args, sizeof args, "load tests/db/not_sqlite.db -o %s/x.db", dir);
    EXPECT(args, 3, "tests/db/not_sqlite.db: not a redtune dump");
    assert_false(file_exists("tests/db/foreign.db-wal"));

    /* Usage. */
    EXPECT("export --match H100", 2, "-o FILE is required");
    snprintf(args, sizeof args, "export -o %s/x.db", dir);
    EXPECT(args, 2, "--match NAME is required");
    snprintf(args, sizeof args, "merge -o %s/x.db", dir);
    EXPECT(args, 2, "merge: no input databases");
    EXPECT("merge a.db --bogus", 2, "unknown option '--bogus'");
    EXPECT("dump a.db b.db", 2, "dump: one database at a time");

    for (int i = 0; i < 5; i++)
        unlink(p[i]);
    assert_int_equal(rmdir(dir), 0);   /* nothing else was left there */
}

/* The shipping commands and reduce refuse what the database checks find (exit 3, the file
 * and the check named), an output that is their input or a link (exit 1), and load refuses
 * /dev/zero at once. */
static void ship_refusals(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", args[1024], db[300], in[300], link_out[300];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/a.db", dir);
    snprintf(in, sizeof in, "%s/in.f32", dir);
    snprintf(link_out, sizeof link_out, "%s/out.sql", dir);
    snprintf(args, sizeof args, "load -o %s", db);
    EXPECT(args, 0, "loaded into");
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "INSERT INTO devices (id, name, ordinal, cc_major, "
                                  "cc_minor, sm_count, warp_size, max_threads_per_block, "
                                  "max_threads_per_sm, max_blocks_per_sm, smem_per_block, "
                                  "smem_per_block_optin, smem_per_sm, regs_per_block, "
                                  "regs_per_sm, l2_bytes, mem_clock_khz, bus_width_bits, "
                                  "driver_version, total_mem) VALUES (1, 'NVIDIA H100', 0, 9, "
                                  "0, 132, 32, 1024, 2048, 32, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1); "
                                  "INSERT INTO best (device_id, op, type, acc, result, "
                                  "layout, n, hot, kernel_hash, median_us, min_us, max_us, "
                                  "reps, gbps, frac_bw, deterministic) VALUES (1, 'min', 'f32', "
                                  "'f32', 'f32', 'flat', 1024, 0, 'nowhere', 1, 1, 1, 1, 1, 1, "
                                  "1)", NULL, NULL,
                                  NULL), SQLITE_OK);
    sqlite3_close(raw);
    snprintf(args, sizeof args, "export --db %s --match H100 -o %s/x.db", db, dir);
    EXPECT(args, 3, "a.db: inconsistent database (PRAGMA foreign_key_check): row 1 of table "
                    "best refers to a row of table kernels that is not there");
    snprintf(args, sizeof args, "dump %s -o %s --force", db, db);
    EXPECT(args, 1, "a.db: is the input");
    assert_int_equal(symlink("/dev/stdout", link_out), 0);
    snprintf(args, sizeof args, "dump tests/db/partial.db -o %s --force", link_out);
    EXPECT(args, 1, "out.sql: is a symbolic link");
    snprintf(args, sizeof args, "load /dev/zero -o %s/x.db", dir);
    /* The program refuses a character device before reading it (store_load itself stops at
     * the first NUL byte: test_store's test_load_bounds). */
    EXPECT(args, 3, "/dev/zero: not a regular file");
    FILE *fp = fopen(in, "wb");
    assert_non_null(fp);
    fputs("abcd", fp);
    fclose(fp);
    snprintf(args, sizeof args, "reduce --op min --in %s --db tests/db/corrupt.db", in);
    EXPECT(args, 3, "tests/db/corrupt.db: corrupt database (PRAGMA quick_check)");
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

/* ---------------------------------------------------------------- reduce */

/* Write 'len' bytes into DIR/NAME; the path into 'path'. */
static void put_file(const char *dir, const char *name, const void *data, size_t len,
                     char *path, size_t plen)
{
    snprintf(path, plen, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* 1 when 'path' holds exactly data[0..len). */
static int file_is(const char *path, const void *data, size_t len)
{
    unsigned char buf[256];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return n == len && memcmp(buf, data, len) == 0;
}

/* Two --op-file: whether the second replaces the first or is a usage error, the first is not
 * leaked (LeakSanitizer reports it under `ninja asan`). */
static void reduce_two_op_files(void **state)
{
    (void)state;
    int rc = run("reduce --op-file lua/ops/satsum.lua --op-file lua/ops/affine.lua "
                 "--in /nonexistent/v.bin");
    if (strstr(out, "LeakSanitizer"))
        fail_msg("%s", out);
    assert_true(rc == 1 || rc == 2);
}

/* Usage errors of reduce: exit 2, before any file is read (none of these exist). */
static void reduce_usage_errors(void **state)
{
    (void)state;
    EXPECT("reduce", 2, "reduce: which operator? --op is required");
    EXPECT("reduce --op sum", 2, "reduce: which data? --in FILE is required");
    EXPECT("reduce --op median --in v.bin", 2, "unknown operator 'median' (known: sum, prod");
    EXPECT("reduce --op sum --type f17 --in v.bin", 2, "unknown type 'f17' (known: f32");
    EXPECT("reduce --op amax --type i8 --in v.bin", 2, "amax of i8 is not defined");
    EXPECT("reduce --op sum --type f32 --acc f16 --in v.bin", 2,
           "sum of f32 accumulating in f16 is not defined");
    EXPECT("reduce --op sum --result all --in v.bin", 2, "--result wants acc");
    EXPECT("reduce --op-file lua/ops/affine.lua --result element --in v.bin", 2,
           "--acc and --result go with the built-in operators (--op)");
    EXPECT("reduce --op sum --in v.bin --keys k.bin --offsets o.bin", 2,
           "reduce: --keys and --offsets exclude each other");
    EXPECT("reduce --op sum --in v.bin --off64", 2, "reduce: --off64 goes with --offsets");
    EXPECT("reduce --op sum --in v.bin --keys k.bin --off64", 2,
           "reduce: --off64 goes with --offsets");
    EXPECT("reduce --op sum --in v.bin --nseg 3", 2, "reduce: --nseg goes with --keys or --offsets");
    EXPECT("reduce --op sum --in v.bin --keys k.bin --nseg -1", 2,
           "--nseg wants a number of segments (0 to 2^40), not '-1'");
    EXPECT("reduce --op sum --in v.bin --keys k.bin --nseg 4x", 2,
           "--nseg wants a number of segments (0 to 2^40), not '4x'");
    EXPECT("reduce --op sum --in v.bin --device gpu0", 2, "--device wants a GPU ordinal, not 'gpu0'");
    EXPECT("reduce --op sum --in v.bin --frobnicate", 2, "unknown option '--frobnicate'");
    EXPECT("reduce --op sum --in", 2, "option --in needs a value");
    EXPECT("reduce --op sum --in v.bin -o", 2, "option -o needs a value");
    EXPECT("reduce --op sum --in v.bin extra", 2, "reduce: unexpected argument 'extra'");
    EXPECT("reduce --op min --op-file lua/ops/affine.lua --in v.bin", 2,
           "--op-file and --op exclude each other");
    EXPECT("reduce --op-file lua/ops/affine.lua --op min --in v.bin", 2,
           "--op-file and --op exclude each other");
    EXPECT("reduce --op-file lua/ops/affine.lua --type f32 --in v.bin", 2,
           "--type f32: the operator file lua/ops/affine.lua says type u64");
    EXPECT("reduce --op-file tests/ops/no_such_op.lua --in v.bin", 1, "no_such_op.lua");
    EXPECT("--help", 0, "redtune reduce (--op OP [--type T] | --op-file FILE) --in FILE\n"
           "               [--acc T] [--result acc|element]\n");
}

/* The data files: unreadable (exit 1), empty, sizes and counts that do not fit (exit 4); the
 * message names the file; nothing is written to -o. */
static void reduce_bad_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", args[2048], v[300], odd[300], empty[300], k9[300];
    char o12[300], outp[300], want[512];
    assert_non_null(mkdtemp(dir));
    float vals[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    unsigned keys9[9] = {0, 0, 0, 1, 1, 1, 2, 2, 2};
    long long offs[2] = {0, 10};
    put_file(dir, "v.bin", vals, sizeof vals, v, sizeof v);
    put_file(dir, "odd.bin", vals, 7, odd, sizeof odd);
    put_file(dir, "empty.bin", NULL, 0, empty, sizeof empty);
    put_file(dir, "k9.bin", keys9, sizeof keys9, k9, sizeof k9);
    put_file(dir, "o12.bin", offs, 12, o12, sizeof o12);
    snprintf(outp, sizeof outp, "%s/out.bin", dir);

    snprintf(args, sizeof args, "reduce --op sum --in %s/missing.bin -o %s", dir, outp);
    snprintf(want, sizeof want, "redtune: %s/missing.bin: No such file or directory\n", dir);
    EXPECT(args, 1, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s -o %s", dir, outp);
    snprintf(want, sizeof want, "redtune: %s: is a directory\n", dir);
    EXPECT(args, 1, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s -o %s", empty, outp);
    snprintf(want, sizeof want, "redtune: %s: the file is empty (0 bytes): no f32 values\n", empty);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op min --in %s -o %s", odd, outp);
    snprintf(want, sizeof want, "redtune: %s: 7 bytes is not a whole number of 4-byte f32 "
             "values\n", odd);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op min --type u64 --in %s -o %s", o12, outp);
    snprintf(want, sizeof want, "%s: 12 bytes is not a whole number of 8-byte u64 values", o12);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s --keys %s -o %s", v, odd, outp);
    snprintf(want, sizeof want, "%s: 7 bytes is not a whole number of 4-byte u32 keys", odd);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s --keys %s -o %s", v, empty, outp);
    snprintf(want, sizeof want, "%s: the file is empty (0 bytes): no u32 keys", empty);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s --keys %s -o %s", v, k9, outp);
    snprintf(want, sizeof want, "redtune: %s: 9 keys for the 10 values of %s (one key per value "
             "is needed)\n", k9, v);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s --offsets %s --off64 -o %s", v, o12, outp);
    snprintf(want, sizeof want, "%s: 12 bytes is not a whole number of 8-byte i64 offsets", o12);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s --offsets %s -o %s", v, odd, outp);
    snprintf(want, sizeof want, "%s: 7 bytes is not a whole number of 4-byte i32 offsets", odd);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s --offsets %s -o %s", v, empty, outp);
    snprintf(want, sizeof want, "%s: the file is empty (0 bytes): no i32 offsets", empty);
    EXPECT(args, 4, want);
    assert_false(file_exists(outp));

    /* An output that cannot be written: found before the database and the GPU. */
    snprintf(args, sizeof args, "reduce --op sum --in %s --db tests/db/foreign.db -o %s/no/out.bin",
             v, dir);
    snprintf(want, sizeof want, "redtune: -o %s/no/out.bin: %s/no: No such file or directory\n",
             dir, dir);
    EXPECT(args, 1, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s --db tests/db/foreign.db -o %s", v, dir);
    EXPECT(args, 1, "is a directory");

    /* A refused database: exit 3, as for the other commands that read one. */
    snprintf(args, sizeof args, "reduce --op sum --in %s --db tests/db/foreign.db -o %s", v, outp);
    EXPECT(args, 3, "tests/db/foreign.db: not a redtune database");
    snprintf(args, sizeof args, "reduce --op sum --in %s --db %s/missing.db -o %s", v, dir, outp);
    EXPECT(args, 3, "missing.db: No such file or directory");
    assert_false(file_exists(outp));
    assert_false(file_exists("tests/db/foreign.db-wal"));

    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

/* reduce --shape O,L,I: usage errors (exit 2), a shape that does not hold the file's values
 * (exit 4, both numbers named, nothing written), before the database and the GPU. */
static void reduce_shape(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", args[2048], v[300], outp[300], want[512];
    assert_non_null(mkdtemp(dir));
    float vals[12] = {0};
    put_file(dir, "v.bin", vals, sizeof vals, v, sizeof v);
    snprintf(outp, sizeof outp, "%s/out.bin", dir);

    EXPECT("reduce --op sum --in v.bin --shape 3,4", 2,
           "--shape wants OUTER,LEN,INNER (three counts, e.g. 1024,4096,1), not '3,4'");
    EXPECT("reduce --op sum --in v.bin --shape 3,4,1,2", 2, "not '3,4,1,2'");
    EXPECT("reduce --op sum --in v.bin --shape 3,-4,1", 2, "not '3,-4,1'");
    EXPECT("reduce --op sum --in v.bin --shape 3,x,1", 2, "not '3,x,1'");
    EXPECT("reduce --op sum --in v.bin --shape 3,4,99999999999999999999", 2,
           "not '3,4,99999999999999999999'");
    EXPECT("reduce --op sum --in v.bin --shape 3,4,1 --keys k.bin", 2,
           "reduce: --shape (a reduction along an axis) excludes --keys, --offsets and --check");
    EXPECT("reduce --op sum --in v.bin --shape 3,4,1 --check", 2, "excludes --keys");

    snprintf(args, sizeof args, "reduce --op sum --in %s --shape 3,5,1 -o %s", v, outp);
    snprintf(want, sizeof want, "redtune: %s: 12 values, but --shape 3,5,1 holds 15 (outer * "
             "len * inner); nothing was reduced or written\n", v);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s --shape 0,5,1 -o %s", v, outp);
    snprintf(want, sizeof want, "redtune: %s: 12 values, but --shape 0,5,1 holds 0", v);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op sum --in %s --shape 4294967296,2,4294967296 -o %s",
             v, outp);
    snprintf(want, sizeof want, "redtune: %s: 12 values, but --shape 4294967296,2,4294967296 "
             "holds more than 2^64 - 1 (outer * len * inner overflows)", v);
    EXPECT(args, 4, want);
    assert_false(file_exists(outp));
    /* a right shape gets as far as the database */
    snprintf(args, sizeof args, "reduce --op sum --in %s --shape 2,3,2 --db tests/db/foreign.db "
             "-o %s", v, outp);
    EXPECT(args, 3, "tests/db/foreign.db: not a redtune database");
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

/* --check: every rule, its count and first entry named, exit 4, on the host before the GPU
 * (the driver is made unloadable: a check that reached the GPU would exit 1), and the output
 * untouched (absent, or an earlier file left as it was). Without --check the same files get
 * past the host to the driver. */
static void reduce_check_failures(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", args[2048], want[512], v[300], outp[300];
    char ku[300], kbig[300], kgood[300], od[300], op[300], on[300], o64[300], ogood[300];
    char db[300];
    assert_non_null(mkdtemp(dir));
    int vals[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    unsigned k_unsorted[10] = {0, 0, 1, 0, 2, 2, 1, 3, 3, 3};   /* breaks at 3 and 6 */
    unsigned k_big[10] = {0, 0, 1, 1, 2, 2, 5, 5, 9, 9};        /* >= 3 from index 6 */
    unsigned k_good[10] = {0, 0, 1, 1, 1, 4, 4, 4, 4, 6};
    int o_down[5] = {0, 4, 3, 8, 6};                            /* decreases at 2 and 4 */
    int o_past[4] = {0, 5, 11, 12};                             /* > 10 at 2 and 3 */
    int o_neg[3] = {-2, 3, 10};
    long long o_64[4] = {0, 2, 1, 10};                          /* decreases at 2 */
    int o_good[4] = {1, 3, 3, 10};                              /* offsets[nseg] == n is fine */
    put_file(dir, "v.bin", vals, sizeof vals, v, sizeof v);
    put_file(dir, "ku.bin", k_unsorted, sizeof k_unsorted, ku, sizeof ku);
    put_file(dir, "kbig.bin", k_big, sizeof k_big, kbig, sizeof kbig);
    put_file(dir, "kgood.bin", k_good, sizeof k_good, kgood, sizeof kgood);
    put_file(dir, "od.bin", o_down, sizeof o_down, od, sizeof od);
    put_file(dir, "op.bin", o_past, sizeof o_past, op, sizeof op);
    put_file(dir, "on.bin", o_neg, sizeof o_neg, on, sizeof on);
    put_file(dir, "o64.bin", o_64, sizeof o_64, o64, sizeof o64);
    put_file(dir, "ogood.bin", o_good, sizeof o_good, ogood, sizeof ogood);
    snprintf(outp, sizeof outp, "%s/out.bin", dir);
    /* An empty database: the runs that pass the host get as far as the driver. */
    snprintf(db, sizeof db, "%s/empty.db", dir);
    snprintf(args, sizeof args, "load -o %s", db);
    EXPECT(args, 0, "loaded into");
    run_env = "REDTUNE_LIBCUDA=/nonexistent/libcuda.so.1 ";

    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --keys %s --check -o %s",
             v, ku, outp);
    snprintf(want, sizeof want, "\n  %s: keys must be sorted non-decreasing: 2 keys break it, "
             "the first keys[3] = 0 after keys[2] = 1\n", ku);
    EXPECT(args, 4, want);
    assert_non_null(strstr(out, "redtune: reduce --check: the input breaks the rules of its "
                           "layout (docs/segmented.md); nothing was reduced or written:\n"));
    assert_null(strstr(out, "nseg ="));   /* the default nseg (largest key + 1) always fits */

    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --keys %s --nseg 3 --check "
             "-o %s", v, kbig, outp);
    snprintf(want, sizeof want, "\n  %s: keys must be < nseg = 3: 4 keys break it, the first "
             "keys[6] = 5\n", kbig);
    EXPECT(args, 4, want);
    assert_null(strstr(out, "sorted"));
    /* Both rules broken: both named. */
    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --keys %s --nseg 2 --check "
             "-o %s", v, ku, outp);
    EXPECT(args, 4, "keys must be sorted non-decreasing: 2 keys");
    assert_non_null(strstr(out, "keys must be < nseg = 2: 5 keys break it, the first keys[4] = 2"));

    snprintf(args, sizeof args, "reduce --op max --type i32 --in %s --offsets %s --check -o %s",
             v, od, outp);
    snprintf(want, sizeof want, "\n  %s: offsets must be non-decreasing: 2 offsets break it, the "
             "first offsets[2] = 3 after offsets[1] = 4\n", od);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op max --type i32 --in %s --offsets %s --check -o %s",
             v, op, outp);
    snprintf(want, sizeof want, "\n  %s: offsets must be <= n = 10 (the values): 2 offsets "
             "break it, the first offsets[2] = 11\n", op);
    EXPECT(args, 4, want);
    assert_null(strstr(out, "non-decreasing:"));
    snprintf(args, sizeof args, "reduce --op max --type i32 --in %s --offsets %s --check -o %s",
             v, on, outp);
    snprintf(want, sizeof want, "\n  %s: offsets must be >= 0: 1 offset breaks it, the first "
             "offsets[0] = -2\n", on);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op max --type i32 --in %s --offsets %s --off64 --check "
             "-o %s", v, o64, outp);
    snprintf(want, sizeof want, "\n  %s: offsets must be non-decreasing: 1 offset breaks it, the "
             "first offsets[2] = 1 after offsets[1] = 2\n", o64);
    EXPECT(args, 4, want);

    /* nseg that does not match the offsets: refused with or without --check. */
    snprintf(want, sizeof want, "redtune: %s: 4 offsets give nseg = 3, not the 2 of --nseg "
             "(nseg segments need nseg + 1 offsets)\n", ogood);
    snprintf(args, sizeof args, "reduce --op max --type i32 --in %s --offsets %s --nseg 2 --check "
             "-o %s", v, ogood, outp);
    EXPECT(args, 4, want);
    snprintf(args, sizeof args, "reduce --op max --type i32 --in %s --offsets %s --nseg 2 -o %s",
             v, ogood, outp);
    EXPECT(args, 4, want);
    assert_false(file_exists(outp));

    /* An earlier output is left as it was. */
    const char old[] = "earlier results";
    FILE *f = fopen(outp, "wb");
    assert_non_null(f);
    fputs(old, f);
    fclose(f);
    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --keys %s --check -o %s",
             v, ku, outp);
    EXPECT(args, 4, "keys must be sorted non-decreasing");
    assert_true(file_is(outp, old, strlen(old)));

    /* An existing output without --force: refused before the database and the GPU, as
     * export, merge, dump and load refuse it. */
    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --keys %s --nseg 7 --check "
             "--db %s -o %s", v, kgood, db, outp);
    snprintf(want, sizeof want, "redtune: -o %s: exists (--force overwrites it)\n", outp);
    EXPECT(args, 1, want);
    assert_true(file_is(outp, old, strlen(old)));

    /* Good input passes the check and goes on to the GPU: here, no driver (exit 1). */
    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --keys %s --nseg 7 --check "
             "--db %s -o %s --force", v, kgood, db, outp);
    EXPECT(args, 1, "no CUDA driver found");
    assert_true(file_is(outp, old, strlen(old)));
    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --offsets %s --nseg 3 --check "
             "--db %s", v, ogood, db);
    EXPECT(args, 1, "no CUDA driver found");
    /* Unchecked, bad keys and offsets get past the host too (the library's documented
     * behaviour: an unspecified result, no stray read or write). */
    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --keys %s --db %s -o %s "
             "--force", v, ku, db, outp);
    EXPECT(args, 1, "no CUDA driver found");
    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --offsets %s --db %s -o %s "
             "--force", v, op, db, outp);
    EXPECT(args, 1, "no CUDA driver found");
    assert_true(file_is(outp, old, strlen(old)));
    run_env = "";

    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
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

/* A directory, a FIFO or an unreadable file as the database (or dump): exit 3 from every
 * command, the same message, and no command blocks opening the FIFO. */
static void database_not_a_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", fifo[300], args[1024], want[512], unread[300];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo.db", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    run_env = "timeout 20 ";   /* a blocked open would be killed: exit 124, not 3 */
    const char *cmds[] = {
        "dump %s", "export --db %s --match x -o %s.out", "merge %s -o %s.out",
        "load %s -o %s.out", "best --db %s", "reduce --op sum --in v.bin --db %s",
        "--op min --db %s",
    };
    for (int k = 0; k < 2; k++) {
        const char *path = k ? fifo : dir;
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
            snprintf(args, sizeof args, cmds[i], path, fifo);
            if (k)
                snprintf(want, sizeof want, "redtune: %s: not a regular file\n", path);
            else
                snprintf(want, sizeof want, "redtune: %s: is a directory, not a %s\n", path,
                         i == 3 ? "dump" : "database");
            EXPECT(args, 3, want);
        }
    }
    /* Unreadable: root reads everything, so only another user can see this. */
    snprintf(unread, sizeof unread, "%s/unreadable.db", dir);
    FILE *f = fopen(unread, "w");
    assert_non_null(f);
    fclose(f);
    chmod(unread, 0);
    if (geteuid() != 0) {
        snprintf(args, sizeof args, "reduce --op sum --in v.bin --db %s", unread);
        EXPECT(args, 3, "unreadable.db: cannot read: Permission denied");
        snprintf(args, sizeof args, "dump %s", unread);
        EXPECT(args, 3, "unreadable.db: cannot read: Permission denied");
    }
    run_env = "";
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

/* A database locked by another process: a line that says redtune waits, then exit 3 when the
 * lock outlasts the busy timeout (10 s). */
static void locked_database_says_it_waits(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", db[300], args[1024], want[512];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/locked.db", dir);
    snprintf(args, sizeof args, "load -o %s", db);
    EXPECT(args, 0, "loaded into");
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "BEGIN EXCLUSIVE; CREATE TABLE lock_holder(x);", NULL, NULL,
                                  NULL), SQLITE_OK);
    snprintf(args, sizeof args, "dump %s", db);
    snprintf(want, sizeof want, "redtune: %s: waiting for another process's lock on it (up to "
             "10 s)\n", db);
    EXPECT(args, 3, want);
    assert_non_null(strstr(out, "database is locked"));
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(h);
    snprintf(args, sizeof args, "dump %s", db);
    EXPECT(args, 0, "-- redtune dump");
    assert_null(strstr(out, "waiting"));
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
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

static int reset_run_env(void **state)
{
    (void)state;
    run_env = "";
    return 0;
}

int test_cli_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(usage_errors),
        cmocka_unit_test(commands_without_gpu),
        cmocka_unit_test(bad_spaces_exit_1),
        cmocka_unit_test(no_driver_leaves_database_alone),
        cmocka_unit_test(foreign_database_refused),
        cmocka_unit_test(ship_commands),
        cmocka_unit_test(ship_refusals),
        cmocka_unit_test(user_operators_without_gpu),
        cmocka_unit_test(user_operator_illegal_family),
        cmocka_unit_test(best_shows_user_ops),
        cmocka_unit_test(reduce_usage_errors),
        cmocka_unit_test(reduce_two_op_files),
        cmocka_unit_test(reduce_bad_files),
        cmocka_unit_test(reduce_shape),
        cmocka_unit_test_teardown(reduce_check_failures, reset_run_env),
        cmocka_unit_test(option_forms),
        cmocka_unit_test(repeated_and_empty_options),
        cmocka_unit_test_teardown(database_not_a_file, reset_run_env),
        cmocka_unit_test(locked_database_says_it_waits),
        cmocka_unit_test(cli_parse_in_process),
        cmocka_unit_test(strategy_options),
        cmocka_unit_test(axis_options),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
