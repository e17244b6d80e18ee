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

#include "runtime/store.h"

static char out[1 << 20];

/* Run "$REDTUNE_BIN args" with stdout and stderr captured into 'out'; the exit status. */
static int run(const char *args)
{
    const char *bin = getenv("REDTUNE_BIN");
    if (!bin)
        bin = "build/redtune";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
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
    EXPECT("--op median", 2, "unknown operator 'median' (known: sum, prod, min, max, argmin, argmax)");
    EXPECT("--op min --type f16", 2, "unknown type 'f16'");
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
    EXPECT("compile --arch sm_9x", 1, "bad architecture 'sm_9x'");
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

static void foreign_database_refused(void **state)
{
    (void)state;
    EXPECT("best --db tests/db/not_sqlite.db", 1, "not a redtune database");
    EXPECT("best --db tests/db/foreign.db", 1, "tests/db/foreign.db");
    EXPECT("best --db /nonexistent-dir/x.db", 1, "/nonexistent-dir/x.db");
}


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
          "INSERT INTO kernels (hash, family, params, source, created_at) VALUES ('k1', "
          "'gridstride', 'B=512', '// src', '2026-11-22T00:00:00Z');\n"
          "INSERT INTO binaries (hash, arch, nvrtc_version, cubin, registers, smem_bytes, log, "
          "created_at) VALUES ('k1', 'sm_90', 13000, X'0001', 32, 0, NULL, "
          "'2026-11-22T00:00:00Z');\n"
          "INSERT INTO best (device_id, op, type, layout, n, hot, kernel_hash, median_us, "
          "min_us, max_us, reps, gbps, frac_bw, deterministic, updated_at) VALUES (1, 'min', "
          "'f32', 'flat', 1048576, 0, 'k1', 6.91, 6.8, 7.2, 100, 606.8, 0.189, 1, "
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
    EXPECT(args, 0, "-- redtune dump: schema version 2\n");
    assert_non_null(strstr(out, "VALUES (1, 'min', 'f32', 'flat', 1048576, 0, 'k1', 6.91, 6.8,"));

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

int test_cli_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(usage_errors),
        cmocka_unit_test(commands_without_gpu),
        cmocka_unit_test(bad_spaces_exit_1),
        cmocka_unit_test(no_driver_leaves_database_alone),
        cmocka_unit_test(foreign_database_refused),
        cmocka_unit_test(ship_commands),
        cmocka_unit_test(user_operators_without_gpu),
        cmocka_unit_test(user_operator_illegal_family),
        cmocka_unit_test(best_shows_user_ops),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
