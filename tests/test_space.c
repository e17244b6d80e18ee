/*
 * test_space.c - the Lua search spaces (tuner/space.c): the default space on a fake H100, the
 * order and filtering of the expansion, derived parameters, the helpers, and every bad script
 * in tests/lua/ with its exact message. Run from the source top (fixtures are found at
 * "tests/lua/...").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/axisdata.h"
#include "tuner/sandbox.h"
#include "tuner/space.h"

static const space_case F32 = {"sum", "f32", 4, 1};
static const space_case F64 = {"sum", "f64", 8, 1};
static const space_case NONCOMM = {"first", "f32", 4, 0};

static rt_err err;   /* 16 KiB: not on the test's stack */

/* An H100 SXM as the driver describes it. */
static rt_device h100(void)
{
    rt_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "Fake NVIDIA H100 80GB HBM3");
    d.cc_major = 9;
    d.cc_minor = 0;
    d.sm_count = 132;
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.smem_per_block = 48 * 1024;
    d.smem_per_block_optin = 227 * 1024;
    d.smem_per_sm = 228 * 1024;
    d.regs_per_block = 65536;
    d.regs_per_sm = 65536;
    d.l2_bytes = 50 * 1024 * 1024;
    d.mem_clock_khz = 2619000;
    d.bus_width_bits = 5120;
    d.driver_version = 13000;
    d.total_mem = 80LL << 30;
    return d;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s (run the tests from the source top)", path);
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) {
            cap = cap * 2 + 4096;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int expand_text(const char *text, const char *name, const rt_device *dev,
                       const space_case *cs, rt_config **v, int *n)
{
    rt_clearerr(&err);
    return space_expand(text, strlen(text), name, dev, cs, v, n, &err);
}

static int expand_file(const char *path, const space_case *cs, rt_config **v, int *n)
{
    size_t len;
    char *text = slurp(path, &len);
    rt_device d = h100();
    rt_clearerr(&err);
    int rc = space_expand(text, len, path, &d, cs, v, n, &err);
    free(text);
    return rc;
}

/* Every shipped space expands for every built-in operator and a user operator's name, on
 * 4- and 8-byte and narrow types (paper.lua once called a string method the sandbox lacks
 * for the operators it had not met). */
static void test_spaces_every_op(void **state)
{
    (void)state;
    static const char *const files[] = {"lua/spaces/default.lua", "lua/spaces/paper.lua",
                                        "lua/spaces/segmented.lua",
                                        "lua/spaces/segmented_ship.lua"};
    static const char *const ops[] = {"sum", "min", "argmax", "amax", "mean", "var_mean",
                                      "var_mean_sample", "std_mean_sample", "norm2", "affine"};
    static const space_case types[] = {{NULL, "f32", 4, 1}, {NULL, "f64", 8, 1},
                                       {NULL, "bf16", 2, 1}, {NULL, "u8", 1, 1}};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++)
        for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
            for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
                space_case cs = types[t];
                cs.op = ops[o];
                rt_config *v = NULL;
                int n = 0;
                if (expand_file(files[f], &cs, &v, &n) != RT_OK)
                    fail_msg("%s, %s %s: %s", files[f], cs.op, cs.type, err.msg);
                free(v);
            }
}

static int expand_default(const rt_device *d, const space_case *cs, rt_config **v, int *n)
{
    const char *text = space_default_text();
    assert_non_null(text);
    int rc = expand_text(text, "lua/spaces/default.lua", d, cs, v, n);
    if (rc != RT_OK)
        fail_msg("default space: %s", err.msg);
    return rc;
}

/* The value of parameter 'name' in c; the test fails when the family has none. */
static long long get(const rt_config *c, const char *name)
{
    for (int i = 0; i < c->family->nparams; i++)
        if (strcmp(c->family->params[i].name, name) == 0)
            return c->values[i];
    fail_msg("family %s has no parameter %s", c->family->name, name);
    return -1;
}

static long long def(const char *family, const char *name)
{
    const rt_family *f = family_find(family);
    assert_non_null(f);
    for (int i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i].name, name) == 0)
            return f->params[i].def;
    fail_msg("family %s has no parameter %s", family, name);
    return -1;
}

static int is_family(const rt_config *c, const char *name)
{
    return strcmp(c->family->name, name) == 0;
}

static int is_pow2(long long v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

/* Every config is legal for a device with 'max_block' threads per block and 2048 per SM. */
static void check_legal(const rt_config *v, int n, int type_size, long long max_block)
{
    for (int i = 0; i < n; i++) {
        const rt_config *c = &v[i];
        long long B = get(c, "B");
        assert_true(is_pow2(B));
        assert_in_range(B, 32, max_block);
        if (is_family(c, "gridstride")) {
            long long V = get(c, "V");
            assert_true(V == 1 || V == 2 || V == 4);
            assert_true(V * type_size <= 16);
            assert_in_range(get(c, "U"), 1, 8);
            assert_in_range(get(c, "G"), 1, 16);
            assert_true(B * get(c, "G") <= 2 * 2048);
        } else if (is_family(c, "tree_sequential")) {
            assert_true(get(c, "R") >= 1);
            assert_in_range(get(c, "LOAD_ADD"), 0, 1);
            assert_in_range(get(c, "WARP"), 0, 1);
            assert_in_range(get(c, "UNROLL"), 0, 1);
        } else if (is_family(c, "tree_interleaved")) {
            assert_in_range(get(c, "DIVERGENT"), 0, 1);
        } else if (is_family(c, "oneblock")) {
            long long V = get(c, "V");
            assert_true(V == 1 || V * type_size == 16);
            assert_in_range(get(c, "U"), 1, 4);
            assert_in_range(B, 256, 1024);
        } else {
            fail_msg("unexpected family %s", c->family->name);
        }
    }
}

static void check_no_duplicates(const rt_config *v, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (v[i].family == v[j].family &&
                memcmp(v[i].values, v[j].values,
                       (size_t)v[i].family->nparams * sizeof v[i].values[0]) == 0)
                fail_msg("configs %d and %d are the same", i, j);
}

static int count_family(const rt_config *v, int n, const char *name)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += is_family(&v[i], name);
    return k;
}

static int has_seq(const rt_config *v, int n, long long B, long long R, int load_add, int warp,
                   int unroll)
{
    for (int i = 0; i < n; i++)
        if (is_family(&v[i], "tree_sequential") && get(&v[i], "B") == B &&
            get(&v[i], "R") == R && get(&v[i], "LOAD_ADD") == load_add &&
            get(&v[i], "WARP") == warp && get(&v[i], "UNROLL") == unroll)
            return 1;
    return 0;
}

static int has_interleaved(const rt_config *v, int n, long long B, int divergent)
{
    for (int i = 0; i < n; i++)
        if (is_family(&v[i], "tree_interleaved") && get(&v[i], "B") == B &&
            get(&v[i], "DIVERGENT") == divergent)
            return 1;
    return 0;
}

static int has_gridstride_v(const rt_config *v, int n, long long V)
{
    for (int i = 0; i < n; i++)
        if (is_family(&v[i], "gridstride") && get(&v[i], "V") == V)
            return 1;
    return 0;
}

static void test_default_f32(void **state)
{
    (void)state;
    rt_device d = h100();
    rt_config *v;
    int n;
    assert_int_equal(expand_default(&d, &F32, &v, &n), RT_OK);
    print_message("# default space, f32 on a fake H100: %d configs\n", n);
    assert_in_range(n, 60, 110);
    assert_int_equal(count_family(v, n, "oneblock"), 18);   /* B 256..1024 x V 1, 4 x U 1, 2, 4 */
    check_legal(v, n, 4, 1024);
    check_no_duplicates(v, n);
    assert_true(has_interleaved(v, n, 256, 0) && has_interleaved(v, n, 256, 1));
    assert_true(has_seq(v, n, 256, 1, 0, 0, 0));
    assert_true(has_seq(v, n, 256, 1, 1, 0, 0));
    assert_true(has_seq(v, n, 256, 1, 1, 1, 0));
    assert_true(has_seq(v, n, 256, 1, 1, 1, 1));
    assert_false(has_seq(v, n, 256, 1, 0, 1, 0));   /* the ladder is cumulative */
    assert_true(has_gridstride_v(v, n, 4) && has_gridstride_v(v, n, 1));
    assert_false(has_gridstride_v(v, n, 2));        /* only the widest and the scalar */
    assert_true(count_family(v, n, "gridstride") * 2 > n);
    free(v);
}

static void test_default_f64(void **state)
{
    (void)state;
    rt_device d = h100();
    rt_config *v;
    int n;
    assert_int_equal(expand_default(&d, &F64, &v, &n), RT_OK);
    print_message("# default space, f64 on a fake H100: %d configs\n", n);
    assert_in_range(n, 40, 110);
    check_legal(v, n, 8, 1024);
    check_no_duplicates(v, n);
    assert_true(has_gridstride_v(v, n, 2) && has_gridstride_v(v, n, 1));
    assert_false(has_gridstride_v(v, n, 4));
    free(v);
}

/* Without a commutative operator only the order-keeping families remain, in the same order
 * as in the commutative expansion. */
static void test_default_noncommutative(void **state)
{
    (void)state;
    rt_device d = h100();
    rt_config *v, *all;
    int n, nall;
    assert_int_equal(expand_default(&d, &NONCOMM, &v, &n), RT_OK);
    assert_int_equal(expand_default(&d, &F32, &all, &nall), RT_OK);
    assert_true(n > 0);
    int k = 0;
    for (int i = 0; i < nall; i++) {
        if (all[i].family->needs_commutative)
            continue;
        assert_true(k < n);
        assert_memory_equal(&all[i], &v[k], sizeof v[k]);
        k++;
    }
    assert_int_equal(k, n);
    for (int i = 0; i < n; i++)
        assert_false(v[i].family->needs_commutative);
    free(v);
    free(all);
}

/* A smaller device: every block still fits. */
static void test_default_small_device(void **state)
{
    (void)state;
    rt_device d = h100();
    d.max_threads_per_block = 512;
    d.max_threads_per_sm = 1536;
    d.smem_per_block = 16 * 1024;
    rt_config *v;
    int n;
    assert_int_equal(expand_default(&d, &F32, &v, &n), RT_OK);
    assert_true(n > 20);
    check_legal(v, n, 4, 512);
    free(v);
}

static void test_default_deterministic(void **state)
{
    (void)state;
    rt_device d = h100();
    rt_config *a, *b;
    int na, nb;
    assert_int_equal(expand_default(&d, &F32, &a, &na), RT_OK);
    assert_int_equal(expand_default(&d, &F32, &b, &nb), RT_OK);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, (size_t)na * sizeof *a);
    free(a);
    free(b);
}

static void expect_interleaved(const rt_config *c, long long B, long long divergent)
{
    assert_string_equal(c->family->name, "tree_interleaved");
    assert_int_equal(get(c, "B"), B);
    assert_int_equal(get(c, "DIVERGENT"), divergent);
}

static void expect_gridstride(const rt_config *c, long long B, long long V, long long U,
                              long long G)
{
    assert_string_equal(c->family->name, "gridstride");
    assert_int_equal(get(c, "B"), B);
    assert_int_equal(get(c, "V"), V);
    assert_int_equal(get(c, "U"), U);
    assert_int_equal(get(c, "G"), G);
}

/* Entries in the order listed; within one, the product in the family's declaration order
 * (B V U G, whatever the order in the script), first parameter slowest; duplicates gone. */
static void test_order(void **state)
{
    (void)state;
    rt_config *v;
    int n;
    assert_int_equal(expand_file("tests/lua/good_small.lua", &F32, &v, &n), RT_OK);
    assert_int_equal(n, 4 + 12);
    expect_interleaved(&v[0], 64, 0);
    expect_interleaved(&v[1], 64, 1);
    expect_interleaved(&v[2], 128, 0);
    expect_interleaved(&v[3], 128, 1);
    int k = 4;
    for (long long B = 128; B <= 256; B *= 2)
        for (long long V = 1; V <= 4; V *= 4)
            for (long long G = 1; G <= 3; G++)
                expect_gridstride(&v[k++], B, V, 2, G);
    free(v);

    /* f64: the constraint drops V=4 */
    assert_int_equal(expand_file("tests/lua/good_small.lua", &F64, &v, &n), RT_OK);
    assert_int_equal(n, 4 + 6);
    k = 4;
    for (long long B = 128; B <= 256; B *= 2)
        for (long long G = 1; G <= 3; G++)
            expect_gridstride(&v[k++], B, 1, 2, G);
    free(v);

    /* non-commutative: gridstride goes */
    assert_int_equal(expand_file("tests/lua/good_small.lua", &NONCOMM, &v, &n), RT_OK);
    assert_int_equal(n, 4);
    expect_interleaved(&v[3], 128, 1);
    free(v);
}

/* A parameter left out takes the family's default. */
static void test_defaults(void **state)
{
    (void)state;
    rt_device d = h100();
    rt_config *v;
    int n;
    assert_int_equal(expand_text("return { { family = 'gridstride', params = { U = {1, 8} } },"
                                 "         { family = 'gridstride' } }",
                                 "inline.lua", &d, &F32, &v, &n), RT_OK);
    long long B = def("gridstride", "B"), V = def("gridstride", "V"), G = def("gridstride", "G");
    long long U = def("gridstride", "U");
    assert_int_equal(n, U == 1 || U == 8 ? 2 : 3);
    expect_gridstride(&v[0], B, V, 1, G);
    expect_gridstride(&v[1], B, V, 8, G);
    if (n == 3)
        expect_gridstride(&v[2], B, V, U, G);
    free(v);
}

static void test_derive(void **state)
{
    (void)state;
    rt_config *v;
    int n;
    assert_int_equal(expand_file("tests/lua/good_derive.lua", &F32, &v, &n), RT_OK);
    assert_int_equal(n, 4);
    /* G = 2048 // B: B=128 gives 16, which the constraint (run after derive) drops */
    expect_gridstride(&v[0], 256, 4, 1, 8);
    expect_gridstride(&v[1], 1024, 4, 1, 2);
    assert_string_equal(v[2].family->name, "tree_sequential");
    assert_int_equal(get(&v[2], "R"), 1);
    assert_int_equal(get(&v[2], "LOAD_ADD"), 0);
    assert_int_equal(get(&v[2], "WARP"), def("tree_sequential", "WARP"));
    assert_int_equal(get(&v[3], "R"), 2);
    assert_int_equal(get(&v[3], "LOAD_ADD"), 1);
    free(v);
}

/* The sandbox, the dev and case globals, and the helpers: asserted by the script. */
static void test_sandbox_and_helpers(void **state)
{
    (void)state;
    rt_config *v = (rt_config *)&v;
    int n = -1;
    int rc = expand_file("tests/lua/good_sandbox.lua", &F32, &v, &n);
    if (rc != RT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n, 0);
    free(v);
}

static void test_helpers_expand(void **state)
{
    (void)state;
    rt_device d = h100();
    rt_config *v;
    int n;
    assert_int_equal(expand_text("return { { family = 'gridstride', params = {"
                                 " B = redtune.pow2(32, 1024), V = 1, G = 1,"
                                 " U = redtune.range(1, 8, 3) } } }",
                                 "inline.lua", &d, &F32, &v, &n), RT_OK);
    assert_int_equal(n, 6 * 3);
    for (int i = 0; i < n; i++) {
        assert_int_equal(get(&v[i], "B"), 32LL << (i / 3));
        assert_int_equal(get(&v[i], "U"), 1 + 3 * (i % 3));
    }
    free(v);
}

static void expect_text_error(const char *text, const char *name, int code, const char *msg)
{
    rt_device d = h100();
    rt_config *v = (rt_config *)&v;
    int n = -1;
    assert_int_equal(expand_text(text, name, &d, &F32, &v, &n), code);
    assert_string_equal(err.msg, msg);
    assert_null(v);
    assert_int_equal(n, 0);
}

static void test_helper_errors(void **state)
{
    (void)state;
    expect_text_error("\nreturn { { family = 'gridstride', params = { B = redtune.pow2(0, 8) } } }",
                      "inline.lua", RT_ELUA,
                      "inline.lua:2: redtune.pow2: lo must be positive, not 0");
    expect_text_error("local r = redtune.range(1, 8, 0)", "inline.lua", RT_ELUA,
                      "inline.lua:1: redtune.range: step must not be 0");
    expect_text_error("local p = redtune.pow2(1.5, 8)", "inline.lua", RT_ELUA,
                      "inline.lua:1: redtune.pow2: lo must be an integer, not 1.5");
    expect_text_error("local r = redtune.range(1, '8')", "inline.lua", RT_ELUA,
                      "inline.lua:1: redtune.range: hi must be an integer, not string");
}

/* Errors without a position get the script's line; errors inside constraints point at them. */
static void test_error_positions(void **state)
{
    (void)state;
    expect_text_error("\n\nerror('plain', 0)", "inline.lua", RT_ELUA, "inline.lua:3: plain");
    expect_text_error("error({})", "inline.lua", RT_ELUA,
                      "inline.lua:1: (error object is a table value)");
    expect_text_error("return { { family = 'gridstride',\n"
                      "  constraint = function(c) return c.X.y end } }",
                      "inline.lua", RT_ELUA,
                      "inline.lua:2: attempt to index a nil value (field 'X')");
    expect_text_error("\x1bLua\x54\x00", "inline.lua", RT_ELUA,
                      "inline.lua: attempt to load a binary chunk (mode is 't')");
}

/* Lua cuts chunknames past LUA_IDSIZE; ours come back whole. */
static void test_long_chunkname(void **state)
{
    (void)state;
    char name[200], msg[300];
    memset(name, 'd', 150);
    memcpy(name + 150, "/space.lua", 11);
    snprintf(msg, sizeof msg, "%s:2: deep", name);
    expect_text_error("\nerror('deep')", name, RT_ELUA, msg);
    snprintf(msg, sizeof msg, "%s:1: attempt to call a nil value (global 'dofile')", name);
    expect_text_error("dofile('x')", name, RT_ELUA, msg);
}

static void test_null_arguments(void **state)
{
    (void)state;
    rt_device d = h100();
    rt_config *v = (rt_config *)&v;
    int n = -1;
    assert_int_equal(space_expand(NULL, 0, "x.lua", &d, &F32, &v, &n, &err), RT_EINVAL);
    assert_null(v);
    assert_int_equal(n, 0);
    assert_int_equal(space_expand("return {}", 9, "x.lua", NULL, &F32, &v, &n, NULL), RT_EINVAL);
}

static void expect_error(const char *path, int code, const char *msg)
{
    rt_config *v = (rt_config *)&v;
    int n = -1;
    int rc = expand_file(path, &F32, &v, &n);
    if (rc != code)
        fail_msg("%s: expected %s, got %s: %s", path, rt_strerror(code), rt_strerror(rc),
                 err.msg);
    assert_int_equal(err.code, code);
    assert_string_equal(err.msg, msg);
    assert_null(v);
    assert_int_equal(n, 0);
}

static void test_bad_syntax(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_syntax.lua", RT_ELUA,
                 "tests/lua/bad_syntax.lua:4: '}' expected (to close '{' at line 3) near 'params'");
}

static void test_bad_runtime(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_runtime.lua", RT_ELUA,
                 "tests/lua/bad_runtime.lua:3: no space today");
}

static void test_bad_loop(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_loop.lua", RT_ELUA,
                 "tests/lua/bad_loop.lua:3: instruction limit exceeded");
}

static void test_bad_pcall(void **state)
{
    (void)state;
    rt_config *v;
    int n;
    assert_int_equal(expand_file("tests/lua/bad_pcall.lua", &F32, &v, &n), RT_ELUA);
    const char *prefix = "tests/lua/bad_pcall.lua:";
    const char *suffix = ": instruction limit exceeded";
    assert_memory_equal(err.msg, prefix, strlen(prefix));
    assert_true(strlen(err.msg) > strlen(suffix));
    assert_string_equal(err.msg + strlen(err.msg) - strlen(suffix), suffix);
}

static void test_bad_memory(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_memory.lua", RT_ELUA,
                 "tests/lua/bad_memory.lua: memory limit exceeded (256 MiB)");
}

/* Caught memory errors stop the script at its next instruction. */
static void test_bad_memory_pcall(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_memory_pcall.lua", RT_ELUA,
                 "tests/lua/bad_memory_pcall.lua:3: memory limit exceeded (256 MiB)");
}

static void test_bad_gc(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_gc.lua", RT_ELUA,
                 "tests/lua/bad_gc.lua:3: __gc metamethods are not allowed in a sandboxed script");
}

/* Every way of running Lua code stays under the instruction limit: a message handler (which
 * Lua runs with hooks off when the hook raised the error), __close, __tostring. */
static void test_bad_handlers(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_xpcall.lua", RT_ELUA,
                 "tests/lua/bad_xpcall.lua:3: instruction limit exceeded");
    expect_error("tests/lua/bad_close.lua", RT_ELUA,
                 "tests/lua/bad_close.lua:3: instruction limit exceeded");
    expect_error("tests/lua/bad_tostring.lua", RT_ELUA,
                 "tests/lua/bad_tostring.lua:2: instruction limit exceeded");
}

/* Time spent in C, where no instruction is counted: the time limit (here 0.3 s) stops it. */
static void test_bad_time(void **state)
{
    (void)state;
    sandbox_set_time_limit(300);
    expect_error("tests/lua/bad_sort.lua", RT_ELUA,
                 "tests/lua/bad_sort.lua:5: time limit exceeded (0.3 s)");
    expect_error("tests/lua/bad_insert.lua", RT_ELUA,
                 "tests/lua/bad_insert.lua:3: time limit exceeded (0.3 s)");
    rt_config *v;
    int n;
    assert_int_equal(expand_file("tests/lua/bad_compare.lua", &F32, &v, &n), RT_ELUA);
    const char *prefix = "tests/lua/bad_compare.lua:";
    const char *suffix = ": time limit exceeded (0.3 s)";
    assert_memory_equal(err.msg, prefix, strlen(prefix));
    assert_true(strlen(err.msg) > strlen(suffix));
    assert_string_equal(err.msg + strlen(err.msg) - strlen(suffix), suffix);
}

/* The default time limit again, whether test_bad_time passed or not. */
static int default_time_limit(void **state)
{
    (void)state;
    sandbox_set_time_limit(0);
    return 0;
}

/* The string library without the functions whose time in C nothing bounds. */
static void test_bad_string(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_find.lua", RT_ELUA,
                 "tests/lua/bad_find.lua:3: attempt to call a nil value (method 'find')");
    expect_error("tests/lua/bad_rep.lua", RT_ELUA,
                 "tests/lua/bad_rep.lua: memory limit exceeded (256 MiB)");
}

/* A script over the size limit is refused before it runs. */
static void test_bad_size(void **state)
{
    (void)state;
    rt_device dev = h100();
    rt_config *v;
    int n;
    char *text = malloc(SPACE_MAX_BYTES + 1);
    assert_non_null(text);
    memset(text, ' ', SPACE_MAX_BYTES + 1);
    rt_clearerr(&err);
    assert_int_equal(space_expand(text, SPACE_MAX_BYTES + 1, "big.lua", &dev, &F32, &v, &n, &err),
                     RT_EINVAL);
    assert_string_equal(err.msg, "big.lua: the space script is 1048577 bytes long; at most "
                                 "1048576 (1 MiB)");
    free(text);
}

static void test_bad_io(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_io.lua", RT_ELUA,
                 "tests/lua/bad_io.lua:2: attempt to index a nil value (global 'io')");
}

static void test_bad_os(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_os.lua", RT_ELUA,
                 "tests/lua/bad_os.lua:2: attempt to index a nil value (global 'os')");
}

static void test_bad_require(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_require.lua", RT_ELUA,
                 "tests/lua/bad_require.lua:2: attempt to call a nil value (global 'require')");
}

static void test_bad_dofile(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_dofile.lua", RT_ELUA,
                 "tests/lua/bad_dofile.lua:2: attempt to call a nil value (global 'dofile')");
}

static void test_bad_family(void **state)
{
    (void)state;
    char known[2048] = "", msg[4096];
    for (int i = 0; i < family_count(); i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? " " : "",
                 family_at(i)->name);
    assert_non_null(strstr(known, "gridstride"));
    snprintf(msg, sizeof msg,
             "tests/lua/bad_family.lua: unknown family 'tree_sideways' (known: %s)", known);
    expect_error("tests/lua/bad_family.lua", RT_EINVAL, msg);
}

static void test_bad_param(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_param.lua", RT_EINVAL,
                 "tests/lua/bad_param.lua: family 'gridstride' has no parameter 'Q' "
                 "(parameters: B V U G)");
}

static void test_bad_return(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_return.lua", RT_EINVAL,
                 "tests/lua/bad_return.lua: the script must return a list of family entries, "
                 "not a number");
}

static void test_bad_value(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_value.lua", RT_EINVAL,
                 "tests/lua/bad_value.lua: family 'gridstride' parameter 'V' must be an "
                 "integer, not 2.5");
}

static void test_bad_derive(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_derive.lua", RT_EINVAL,
                 "tests/lua/bad_derive.lua: family 'tree_sequential' parameter 'R' must be an "
                 "integer, not 7.8125");
    expect_text_error("return { { family = 'gridstride', derive = function(c) c.W = 1 end } }",
                      "inline.lua", RT_EINVAL,
                      "inline.lua: family 'gridstride' has no parameter 'W' "
                      "(parameters: B V U G)");
}

static void test_bad_constraint(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_constraint.lua", RT_ELUA,
                 "tests/lua/bad_constraint.lua:4: the constraint of family 'gridstride' "
                 "returned nil, not true or false");
}

static void test_bad_field(void **state)
{
    (void)state;
    expect_error("tests/lua/bad_field.lua", RT_EINVAL,
                 "tests/lua/bad_field.lua: family 'gridstride': unknown field 'constriant' "
                 "(fields: family params derive constraint)");
}


/* The axis space (lua/spaces/axis.lua) for one shape and type: its configs in *v. */
static int expand_axis(const axis_shape *sh, const char *type, int size, int commutes,
                       rt_config **v, int *n)
{
    const char *name;
    const char *text = space_for_layout(SEG_LAYOUT_AXIS, &name);
    assert_string_equal(name, "lua/spaces/axis.lua");
    space_case cs = {"sum", type, size, commutes, NULL, 0, "axis", sh->outer, sh->len,
                     sh->inner};
    rt_device d = h100();
    return expand_text(text, name, &d, &cs, v, n);
}

/* The axis space on every default shape: axis families only, a few hundred configs at most;
 * rows shapes (inner == 1) get axis_rows with lanes no more than the row has elements (and a
 * block of one lane group per row when there are few rows), columns and 3-D shapes axis_cols
 * alone with tiles no wider than inner; an operator that does not commute gets axis_cols,
 * the in-order family, on every shape. */
static void test_axis_space(void **state)
{
    (void)state;
    axis_shape shapes[16];
    int ns = axisdata_default_shapes(shapes, 16);
    assert_int_equal(ns, 11);
    static const struct { const char *type; int size; } types[] = {
        {"f32", 4}, {"f64", 8}, {"bf16", 2}, {"u8", 1}};
    for (int k = 0; k < ns; k++)
        for (size_t t = 0; t < sizeof types / sizeof *types; t++)
            for (int commutes = 0; commutes <= 1; commutes++) {
                const axis_shape *sh = &shapes[k];
                rt_config *v = NULL;
                int n = 0;
                if (expand_axis(sh, types[t].type, types[t].size, commutes, &v, &n))
                    fail_msg("%llux%llux%llu %s: %s", sh->outer, sh->len, sh->inner,
                             types[t].type, err.msg);
                /* A few hundred a shape at most (the columns' chunks of 256 to 4096 rows
                 * take 1x32768x1024 to 537): a sampled or exhaustive run stays minutes. */
                if (n < 1 || n > 600)
                    fail_msg("%llux%llux%llu %s: %d configs", sh->outer, sh->len, sh->inner,
                             types[t].type, n);
                int rows = count_family(v, n, "axis_rows"), cols = count_family(v, n, "axis_cols");
                assert_int_equal(rows + cols, n);
                if (sh->inner == 1 && commutes)
                    assert_true(rows > 0);
                else
                    assert_int_equal(rows, 0);
                assert_true(cols > 0 || (sh->inner == 1 && commutes));
                for (int i = 0; i < n; i++) {
                    assert_int_equal(v[i].family->plan, PLAN_AXIS);
                    if (!strcmp(v[i].family->name, "axis_rows")) {
                        long long L = get(&v[i], "L"), V = get(&v[i], "V"), B = get(&v[i], "B");
                        assert_true(L <= B && V * types[t].size <= 16);
                        assert_true((unsigned long long)(L * V) <= 2 * sh->len);
                    } else {
                        long long TX = get(&v[i], "TX"), CV = get(&v[i], "CV");
                        assert_true((unsigned long long)(TX * CV) <= 2 * sh->inner
                                    && CV * types[t].size <= 16);
                    }
                }
                free(v);
            }
}

/* The layout filter: flat and segmented cases never get @plan axis families, axis cases
 * only them, whatever the space lists. */
static void test_axis_layout_filter(void **state)
{
    (void)state;
    static const char text[] =
        "return { { family = 'gridstride' }, { family = 'axis_rows' },\n"
        "         { family = 'seg_per' }, { family = 'axis_cols' } }\n";
    static const char *const layouts[] = {NULL, "flat", "offsets", "axis"};
    static const char *const want[] = {"gridstride", "gridstride", "seg_per",
                                       "axis_rows axis_cols"};
    rt_device d = h100();
    for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
        space_case cs = {"sum", "f32", 4, 1, NULL, 0, layouts[l], 64, 2048, 1};
        rt_config *v = NULL;
        int n = 0;
        assert_int_equal(expand_text(text, "filter.lua", &d, &cs, &v, &n), RT_OK);
        char got[256] = "";
        for (int i = 0; i < n; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "",
                     v[i].family->name);
        assert_string_equal(got, want[l]);
        free(v);
    }
    /* The shipped flat and segmented spaces offer no axis family. */
    static const char *const files[] = {"lua/spaces/default.lua", "lua/spaces/paper.lua",
                                        "lua/spaces/segmented.lua"};
    static const char *const lay[] = {NULL, NULL, "keys"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        space_case cs = {"sum", "f32", 4, 1, NULL, 0, lay[f], 0, 0, 0};
        rt_config *v = NULL;
        int n = 0;
        assert_int_equal(expand_file(files[f], &cs, &v, &n), RT_OK);
        assert_true(n > 0);
        for (int i = 0; i < n; i++)
            assert_int_not_equal(v[i].family->plan, PLAN_AXIS);
        free(v);
    }
}

/* seg_lb's FAST: the segmented spaces offer FAST = 1 for offsets only, each beside its FAST = 0
 * twin (the same config but FAST), for commutative and non-commutative operators alike. */
static void test_seg_fast(void **state)
{
    (void)state;
    static const char *const files[] = {"lua/spaces/segmented.lua", "lua/spaces/segmented_ship.lua"};
    static const char *const layouts[] = {"keys", "offsets"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++)
        for (size_t l = 0; l < 2; l++)
            for (int commutes = 0; commutes <= 1; commutes++) {
                space_case cs = {commutes ? "min" : "affine", commutes ? "f32" : "u64",
                                 commutes ? 4 : 8, commutes, NULL, 0, layouts[l], 0, 0, 0};
                rt_config *v = NULL;
                int n = 0, fast = 0;
                assert_int_equal(expand_file(files[f], &cs, &v, &n), RT_OK);
                for (int i = 0; i < n; i++) {
                    if (strcmp(v[i].family->name, "seg_lb") || get(&v[i], "FAST") == 0)
                        continue;
                    fast++;
                    int twin = 0;
                    for (int j = 0; j < n && !twin; j++) {
                        if (v[j].family != v[i].family || get(&v[j], "FAST") != 0)
                            continue;
                        twin = 1;
                        for (int k = 0; k < v[i].family->nparams; k++)
                            if (strcmp(v[i].family->params[k].name, "FAST") &&
                                v[i].values[k] != v[j].values[k])
                                twin = 0;
                    }
                    if (!twin)
                        fail_msg("%s %s: config %d (FAST = 1) has no FAST = 0 twin", files[f],
                                 layouts[l], i);
                }
                if (l == 0 ? fast != 0 : fast == 0)
                    fail_msg("%s %s %s: %d configs with FAST = 1", files[f], layouts[l], cs.op, fast);
                free(v);
            }
}

/* Lua sees an axis case's shape: case.layout, outer, len, inner and n. */
static void test_axis_case_fields(void **state)
{
    (void)state;
    static const char text[] =
        "assert(case.layout == 'axis' and case.outer == 7 and case.len == 513\n"
        "       and case.inner == 33 and case.n == 7 * 513 * 33, 'fields')\n"
        "return { { family = 'axis_cols', params = { TX = 32, CV = 1 } } }\n";
    rt_device d = h100();
    space_case cs = {"sum", "f32", 4, 1, NULL, 0, "axis", 7, 513, 33};
    rt_config *v = NULL;
    int n = 0;
    if (expand_text(text, "fields.lua", &d, &cs, &v, &n))
        fail_msg("%s", err.msg);
    assert_int_equal(n, 1);
    free(v);
}

int test_space_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_f32),
        cmocka_unit_test(test_default_f64),
        cmocka_unit_test(test_default_noncommutative),
        cmocka_unit_test(test_default_small_device),
        cmocka_unit_test(test_default_deterministic),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_derive),
        cmocka_unit_test(test_sandbox_and_helpers),
        cmocka_unit_test(test_helpers_expand),
        cmocka_unit_test(test_helper_errors),
        cmocka_unit_test(test_error_positions),
        cmocka_unit_test(test_long_chunkname),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_bad_syntax),
        cmocka_unit_test(test_bad_runtime),
        cmocka_unit_test(test_bad_loop),
        cmocka_unit_test(test_bad_pcall),
        cmocka_unit_test(test_bad_memory),
        cmocka_unit_test(test_bad_memory_pcall),
        cmocka_unit_test(test_bad_gc),
        cmocka_unit_test(test_bad_handlers),
        cmocka_unit_test_teardown(test_bad_time, default_time_limit),
        cmocka_unit_test(test_bad_string),
        cmocka_unit_test(test_bad_size),
        cmocka_unit_test(test_bad_io),
        cmocka_unit_test(test_bad_os),
        cmocka_unit_test(test_bad_require),
        cmocka_unit_test(test_bad_dofile),
        cmocka_unit_test(test_bad_family),
        cmocka_unit_test(test_bad_param),
        cmocka_unit_test(test_bad_return),
        cmocka_unit_test(test_bad_value),
        cmocka_unit_test(test_bad_derive),
        cmocka_unit_test(test_spaces_every_op),
        cmocka_unit_test(test_bad_constraint),
        cmocka_unit_test(test_bad_field),
        cmocka_unit_test(test_axis_space),
        cmocka_unit_test(test_axis_layout_filter),
        cmocka_unit_test(test_axis_case_fields),
        cmocka_unit_test(test_seg_fast),
    };
    return cmocka_run_group_tests_name("space", tests, NULL, NULL);
}
