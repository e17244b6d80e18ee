/*
 * test_cli_reduce.c - `redtune reduce` with no GPU: its usage errors, the data files it
 * refuses (unreadable, empty, sizes and counts that do not fit), --shape, and --check's rules
 * on keys and offsets, all found on the host before the database and the GPU, the output
 * left untouched. Runs $REDTUNE_BIN (set by tests/run.sh) from the repository root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cli_util.h"

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
    EXPECT("reduce --op sum --result index --in v.bin", 2,
           "RT_RESULT_INDEX is for argmin and argmax, not sum");
    EXPECT("--help", 0, "redtune reduce (--op OP [--type T] | --op-file FILE) --in FILE\n"
           "               [--acc T] [--result acc|element|index]\n");
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

int test_cli_reduce_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reduce_usage_errors),
        cmocka_unit_test(reduce_two_op_files),
        cmocka_unit_test(reduce_bad_files),
        cmocka_unit_test(reduce_shape),
        cmocka_unit_test_teardown(reduce_check_failures, reset_run_env),
    };
    return cmocka_run_group_tests_name("cli_reduce", tests, NULL, NULL);
}
