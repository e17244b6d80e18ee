/*
 * test_space.c - the Lua search spaces (tuner/space.c): every shipped space for every
 * operator and type, the default space on a fake H100, the order and filtering of the
 * expansion, derived parameters, the helpers and the sandbox, and the errors of inline
 * scripts. The bad scripts of tests/lua/ are in test_space_bad.c, the spaces by layout (axis,
 * segmented) in test_space_layout.c. Run from the source top (fixtures are found at
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

#include "tuner/space.h"
#include "tests/space_util.h"

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
                    fail_msg("%s, %s %s: %s", files[f], cs.op, cs.type, space_err.msg);
                free(v);
            }
}

static int expand_default(const rt_device *d, const space_case *cs, rt_config **v, int *n)
{
    const char *text = space_default_text();
    assert_non_null(text);
    int rc = expand_text(text, "lua/spaces/default.lua", d, cs, v, n);
    if (rc != RT_OK)
        fail_msg("default space: %s", space_err.msg);
    return rc;
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
        fail_msg("%s", space_err.msg);
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
    assert_int_equal(space_expand(NULL, 0, "x.lua", &d, &F32, &v, &n, &space_err), RT_EINVAL);
    assert_null(v);
    assert_int_equal(n, 0);
    assert_int_equal(space_expand("return {}", 9, "x.lua", NULL, &F32, &v, &n, NULL), RT_EINVAL);
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
        cmocka_unit_test(test_spaces_every_op),
    };
    return cmocka_run_group_tests_name("space", tests, NULL, NULL);
}
