/*
 * test_space_bad.c - every bad script in tests/lua/ with its exact message: syntax and
 * runtime errors, the instruction, memory and time limits however the script tries to escape
 * them, the sandbox's missing libraries, unknown families, parameters and fields, values that
 * are not integers, and a script over the size limit. Run from the source top.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/sandbox.h"
#include "tuner/space.h"
#include "tests/space_util.h"

static void expect_error(const char *path, int code, const char *msg)
{
    rt_config *v = (rt_config *)&v;
    int n = -1;
    int rc = expand_file(path, &F32, &v, &n);
    if (rc != code)
        fail_msg("%s: expected %s, got %s: %s", path, rt_strerror(code), rt_strerror(rc),
                 space_err.msg);
    assert_int_equal(space_err.code, code);
    assert_string_equal(space_err.msg, msg);
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
    assert_memory_equal(space_err.msg, prefix, strlen(prefix));
    assert_true(strlen(space_err.msg) > strlen(suffix));
    assert_string_equal(space_err.msg + strlen(space_err.msg) - strlen(suffix), suffix);
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
    assert_memory_equal(space_err.msg, prefix, strlen(prefix));
    assert_true(strlen(space_err.msg) > strlen(suffix));
    assert_string_equal(space_err.msg + strlen(space_err.msg) - strlen(suffix), suffix);
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
    rt_clearerr(&space_err);
    assert_int_equal(space_expand(text, SPACE_MAX_BYTES + 1, "big.lua", &dev, &F32, &v, &n, &space_err),
                     RT_EINVAL);
    assert_string_equal(space_err.msg, "big.lua: the space script is 1048577 bytes long; at most "
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

int test_space_bad_group(void)
{
    const struct CMUnitTest tests[] = {
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
        cmocka_unit_test(test_bad_constraint),
        cmocka_unit_test(test_bad_field),
    };
    return cmocka_run_group_tests_name("space_bad", tests, NULL, NULL);
}
