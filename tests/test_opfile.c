/*
 * test_opfile.c - user-defined operators from Lua files (tuner/opfile.c): the example files in
 * lua/ops/, every bad file in tests/ops/ with its exact message, fields given inline, the
 * lines the #line directives take, and the sample function. Run from the source top.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/codegen.h"
#include "tuner/data.h"
#include "tuner/opfile.h"

static rt_err err;   /* 16 KiB: not on the test's stack */

static void load_ok(const char *path, opfile *o)
{
    rt_clearerr(&err);
    if (opfile_load(path, o, &err) != RT_OK)
        fail_msg("%s: %s", path, err.msg);
}

/* Load 'path' and check what every operator has. */
static void expect_op(const char *path, const char *name, rt_type type, int commutative,
                      const char *identity, int identity_line, int combine_line, opfile *o)
{
    load_ok(path, o);
    assert_string_equal(o->op.name, name);
    assert_int_equal(o->op.type, type);
    assert_int_equal(o->op.commutative, commutative);
    assert_string_equal(o->op.identity, identity);
    assert_string_equal(o->op.file, path);
    assert_int_equal(o->op.identity_line, identity_line);
    assert_int_equal(o->op.combine_line, combine_line);
    assert_non_null(o->text);
    assert_int_equal(o->len, strlen(o->text));
}

static void good_files(void **state)
{
    (void)state;
    opfile o;
    /* a long string: its first line inside [[ ]] */
    expect_op("lua/ops/affine.lua", "affine", RT_U64, 0, "0x100000000ULL", 16, 20, &o);
    assert_non_null(strstr(o.op.combine, "return ((unsigned long long)(ag * af) << 32)"));
    assert_int_equal(o.has_sample, 1);
    assert_true(o.tolerance == 0);
    opfile_free(&o);
    assert_null(o.text);
    /* a Lua integer, written for CUDA: the line of its key */
    expect_op("lua/ops/satsum.lua", "satsum", RT_U32, 1, "0ULL", 10, 12, &o);
    opfile_free(&o);
    /* a one-line string, found on its line */
    expect_op("tests/ops/good_f32.lua", "maxmag", RT_F32, 1, "0", 6, 8, &o);
    assert_true(o.tolerance == 0);
    opfile_free(&o);
}

static void expect_file_error(const char *path, int code, const char *msg)
{
    opfile o;
    rt_clearerr(&err);
    int rc = opfile_load(path, &o, &err);
    if (rc != code || strcmp(err.msg, msg) != 0)
        fail_msg("%s: expected %s \"%s\", got %s \"%s\"", path, rt_strerror(code), msg,
                 rt_strerror(rc), err.msg);
    assert_null(o.text);
}

static void bad_files(void **state)
{
    (void)state;
    expect_file_error("tests/ops/bad_syntax.lua", RT_ELUA,
                      "tests/ops/bad_syntax.lua:4: '}' expected (to close '{' at line 2) "
                      "near 'type'");
    expect_file_error("tests/ops/bad_missing.lua", RT_EINVAL,
                      "tests/ops/bad_missing.lua: field 'combine' is missing (the CUDA body of "
                      "rt_combine(a, b), a the lower indices)");
    expect_file_error("tests/ops/bad_type.lua", RT_EINVAL,
                      "tests/ops/bad_type.lua: field 'commutative' must be a boolean, not a "
                      "string (true or false: whether combine(a, b) == combine(b, a))");
    expect_file_error("tests/ops/bad_builtin.lua", RT_EINVAL,
                      "tests/ops/bad_builtin.lua: name 'sum' is a built-in operator; give the "
                      "operator a name of its own");
    expect_file_error("tests/ops/bad_field.lua", RT_EINVAL,
                      "tests/ops/bad_field.lua: unknown field 'commutes' (fields: name type "
                      "identity combine commutative sample tolerance map acc finalize "
                      "result)");
    expect_file_error("tests/ops/bad_io.lua", RT_ELUA,
                      "tests/ops/bad_io.lua:2: attempt to index a nil value (global 'io')");
    expect_file_error("tests/ops/bad_loop.lua", RT_ELUA,
                      "tests/ops/bad_loop.lua:3: instruction limit exceeded");
    expect_file_error("tests/ops/bad_xpcall.lua", RT_ELUA,
                      "tests/ops/bad_xpcall.lua:2: instruction limit exceeded");
    expect_file_error("tests/ops/bad_include.lua", RT_EINVAL,
                      "tests/ops/bad_include.lua:6: field 'combine': a preprocessor directive "
                      "('#') is not allowed (docs/ops.md)");
    expect_file_error("tests/ops/bad_kernel.lua", RT_EINVAL,
                      "tests/ops/bad_kernel.lua:4: field 'identity': a ')' closes nothing open "
                      "here (docs/ops.md)");
    /* map, acc, finalize, result: each checked as strictly, at its line in the file */
    expect_file_error("tests/ops/bad_acc_big.lua", RT_EINVAL,
                      "tests/ops/bad_acc_big.lua:6: field 'acc': the struct is 40 bytes long "
                      "(8-byte aligned); at most 32 (docs/ops.md)");
    expect_file_error("tests/ops/bad_acc_type.lua", RT_EINVAL,
                      "tests/ops/bad_acc_type.lua:8: field 'acc': 'float3' is not a field type: "
                      "use float, double, [unsigned] char, short, int or long long (docs/ops.md)");
    expect_file_error("tests/ops/bad_map.lua", RT_EINVAL,
                      "tests/ops/bad_map.lua:9: field 'map': a preprocessor directive ('#') is "
                      "not allowed (docs/ops.md)");
    expect_file_error("tests/ops/bad_finalize.lua", RT_EINVAL,
                      "tests/ops/bad_finalize.lua:11: field 'finalize': a '}' closes nothing "
                      "open here (docs/ops.md)");
    expect_file_error("tests/ops/bad_result.lua", RT_EINVAL,
                      "tests/ops/bad_result.lua:9: field 'result': given without a finalize "
                      "(the default finalize returns the accumulator itself) (docs/ops.md)");
    expect_file_error("tests/ops/bad_nomap.lua", RT_EINVAL,
                      "tests/ops/bad_nomap.lua: field 'map': missing: a struct accumulator "
                      "needs a map from the element into it (docs/ops.md)");
    expect_file_error("tests/ops/nonexistent.lua", RT_EIO,
                      "tests/ops/nonexistent.lua: No such file or directory");
}

#define FIELDS_OK "name = 'x', type = 'i32', identity = 0, commutative = true, "

/* Fields given inline, wrong one way or another, and the exact message of each. */
static const struct {
    const char *text;
    int code;
    const char *msg;
} bad_inline[] = {
    {"return 42", RT_EINVAL, "op.lua: the operator file must return a table "
     "(fields: name type identity combine commutative sample tolerance map acc finalize "
     "result), not a number"},
    {"return { type = 'i32', identity = 0, combine = 'return a;', "
     "commutative = true }", RT_EINVAL,
     "op.lua: field 'name' is missing (the operator's name: a-z, 0-9 and _)"},
    {"return { name = 'Big', type = 'i32', identity = 0, "
     "combine = 'return a;', commutative = true }", RT_EINVAL,
     "op.lua: name 'Big': use a-z, 0-9 and _"},
    {"return { name = 'x', type = 'f8', identity = 0, combine = 'return a;', "
     "commutative = true }", RT_EINVAL,
     "op.lua: field 'type': unknown type 'f8' (known: f32, f64, i32, u32, i64, "
     "u64, f16, bf16, i8, u8)"},
    {"return { name = 'x', type = 'i32', identity = 0.5, "
     "combine = 'return a;', commutative = true }", RT_EINVAL,
     "op.lua: field 'identity' must be an integer for i32, not 0.5"},
    {"return { name = 'x', type = 'f32', identity = math.huge, "
     "combine = 'return a;', commutative = true }", RT_EINVAL,
     "op.lua: field 'identity' is inf; write an infinity or NaN as a CUDA "
     "expression string"},
    {"return { " FIELDS_OK "combine = '  \\n ' }", RT_EINVAL,
     "op.lua: field 'combine' is empty (the CUDA body of rt_combine(a, b), a "
     "the lower indices)"},
    {"return { " FIELDS_OK "combine = 7 }", RT_EINVAL,
     "op.lua: field 'combine' must be a string (the CUDA body of rt_combine(a, "
     "b), a the lower indices), not a number"},
    {"return { " FIELDS_OK "combine = string.rep('x', 5000) }", RT_EINVAL,
     "op.lua: field 'combine' is 5000 bytes long; at most 4095"},
    {"return { " FIELDS_OK "combine = 'return a;', tolerance = 1e-3 }",
     RT_EINVAL, "op.lua: field 'tolerance' applies to f32 and f64 only; i32 "
     "results are compared bit for bit"},
    {"return { name = 'x', type = 'f64', identity = 0, commutative = true, "
     "combine = 'return a;', tolerance = -1 }", RT_EINVAL,
     "op.lua: field 'tolerance' must be a number >= 0 (the relative error "
     "allowed), not -1"},
    {"return { " FIELDS_OK "combine = 'return a;', sample = 3 }", RT_EINVAL,
     "op.lua: field 'sample' must be a function (i, r) -> element i, not a "
     "number"},
    {"return { " FIELDS_OK "combine = 'return a;', [1] = 2 }", RT_EINVAL,
     "op.lua: unknown field '1' (fields: name type identity combine "
     "commutative sample tolerance map acc finalize result)"},
    {"local t = {} setmetatable(t, {__gc = print}) return t", RT_ELUA,
     "op.lua:1: __gc metamethods are not allowed in a sandboxed script"},
    /* CUDA text that would leave its function or reach the preprocessor */
    {"return { " FIELDS_OK "combine = 'return a; %> __global__ void k() <%' }", RT_EINVAL,
     "op.lua:1: field 'combine': a digraph (<% %> <: :> %:) is not allowed (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = [[\n  return a; %:include <x>\n]] }", RT_EINVAL,
     "op.lua:2: field 'combine': a preprocessor directive ('#') is not allowed (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = [[\nreturn a; // \\\n#include <x>\n]] }", RT_EINVAL,
     "op.lua:2: field 'combine': a line splice (backslash-newline) is not allowed (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = [[\nreturn a; /* ?\?/\n]] }", RT_EINVAL,
     "op.lua:2: field 'combine': a trigraph is not allowed (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = [[\nreturn a; /* \n}]] }", RT_EINVAL,
     "op.lua:2: field 'combine': a /* comment is not closed (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = [[\nreturn a; }\n{]] }", RT_EINVAL,
     "op.lua:2: field 'combine': a '}' closes nothing open here (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = [[\nif (a) {\nreturn a;\n]] }", RT_EINVAL,
     "op.lua:2: field 'combine': a '{' is not closed (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = [[\nreturn a + R\"x(})x\"[0];\n]] }", RT_EINVAL,
     "op.lua:2: field 'combine': a raw string literal is not allowed (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = [[\n_Pragma(\"once\") return a;\n]] }", RT_EINVAL,
     "op.lua:2: field 'combine': _Pragma is not allowed (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = [[\nreturn a + \"}\n;]] }", RT_EINVAL,
     "op.lua:2: field 'combine': a string literal is not closed on its line (docs/ops.md)"},
    {"return { name = 'x', type = 'i32', commutative = true, combine = 'return a;', "
     "identity = '0 // zero' }", RT_EINVAL,
     "op.lua:1: field 'identity': a // comment runs to the end of the text (docs/ops.md)"},
    {"return { name = 'x', type = 'i32', commutative = true, combine = 'return a;', "
     "identity = [[\\x30]] }", RT_EINVAL,
     "op.lua:1: field 'identity': a backslash outside a literal is not allowed (docs/ops.md)"},
    {"return { name = 'x', type = 'i32', commutative = true, combine = 'return a;', "
     "identity = '\\0400' }", RT_EINVAL,
     "op.lua:1: field 'identity': a '(' is not closed (docs/ops.md)"},
    /* the new fields */
    {"return { name = 'x', type = 'f16', identity = 0, combine = 'return a;', "
     "commutative = true }", RT_EINVAL,
     "op.lua: field 'acc': a f16 element needs an accumulator of 4 or 8 bytes: give acc (and "
     "a map) (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', map = 5 }", RT_EINVAL,
     "op.lua: field 'map' must be a string (the CUDA body of rt_lift(x, i): element x at "
     "index i into the accumulator), not a number"},
    {"return { " FIELDS_OK "combine = 'return a;', finalize = '' }", RT_EINVAL,
     "op.lua: field 'finalize' is empty (the CUDA body of rt_final(a): the accumulator into "
     "the result)"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'i128' }", RT_EINVAL,
     "op.lua:1: field 'acc': 'i128' is not a type: write f32, f64, i32, u32, i64, u64 or "
     "struct { T name; ... } (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'struct { int a; long b; }' }",
     RT_EINVAL, "op.lua:1: field 'acc': 'long' is not a field type: use float, double, "
     "[unsigned] char, short, int or long long (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'struct { int a; int a; }' }",
     RT_EINVAL, "op.lua:1: field 'acc': field 'a' is declared twice (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'struct { int a }' }",
     RT_EINVAL, "op.lua:1: field 'acc': ';' expected after field 'a' (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'struct { }' }",
     RT_EINVAL, "op.lua:1: field 'acc': the struct has no fields (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'struct { int a; } x' }",
     RT_EINVAL, "op.lua:1: field 'acc': text after the struct's '}' (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'struct { int a; }; int k() {' }",
     RT_EINVAL, "op.lua:1: field 'acc': a '{' is not closed (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'struct { int a; }', map = 'x' }",
     RT_EINVAL, "op.lua: field 'identity' must be a CUDA expression or brace initializer of "
     "the accumulator struct, not a number"},
    {"return { " FIELDS_OK "combine = 'return a;', result = 'struct { unsigned char c[2]; }', "
     "finalize = 'return a;' }", RT_EINVAL,
     "op.lua:1: field 'result': ';' expected after field 'c' (docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', finalize = 'return a;', result = "
     "'struct { double a, b, c, d, e; }' }", RT_EINVAL,
     "op.lua:1: field 'result': the struct is 40 bytes long (8-byte aligned); at most 32 "
     "(docs/ops.md)"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'f64', tolerance = 0.1, "
     "finalize = 'return (int)a;', result = 'i32' }", RT_EINVAL,
     "op.lua: field 'tolerance' applies to f32 and f64 only; i32 results are compared bit for "
     "bit"},
    {"return { " FIELDS_OK "combine = 'return a;', acc = 'f64', map = 'return x;', "
     "finalize = [[\nreturn a; /* ]] }", RT_EINVAL,
     "op.lua:2: field 'finalize': a /* comment is not closed (docs/ops.md)"},
    {"local t = { name = 'x', type = 'i32', commutative = true, identity = '0' }\n"
     "t['combine'] = '\\n{ return a; '\nreturn t", RT_EINVAL,
     "op.lua: field 'combine', line 2: a '{' is not closed (docs/ops.md)"},
};

#undef FIELDS_OK

static void bad_fields(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_inline / sizeof bad_inline[0]; i++) {
        opfile o;
        rt_clearerr(&err);
        int rc = opfile_parse(bad_inline[i].text, strlen(bad_inline[i].text), "op.lua", &o, &err);
        if (rc != bad_inline[i].code || strcmp(err.msg, bad_inline[i].msg) != 0)
            fail_msg("%s\nexpected %s \"%s\", got %s \"%s\"", bad_inline[i].text,
                     rt_strerror(bad_inline[i].code), bad_inline[i].msg, rt_strerror(rc), err.msg);
        assert_null(o.text);
    }
}

/* Tolerances by default, and the lines of fragments written in quotes. */
static void defaults_and_lines(void **state)
{
    (void)state;
    const char *text = "-- a comment that says identity = 0\n"
                       "return {\n"
                       "  name = 'fsum', type = 'f64', commutative = true,\n"
                       "  identity = '0.0',\n"
                       "  combine = \"return a + b;\",\n"
                       "}\n";
    opfile o;
    assert_int_equal(opfile_parse(text, strlen(text), "f.lua", &o, &err), RT_OK);
    assert_true(o.tolerance == OPFILE_TOL_F64);
    assert_int_equal(o.has_sample, 0);
    assert_int_equal(o.op.identity_line, 4);
    assert_int_equal(o.op.combine_line, 5);
    opfile_free(&o);
}

/* The #line search is linear: a file near the size limit, with a "combine =" on every line of
 * a comment and a combine written with escapes (found nowhere), reads in well under a second
 * (it took minutes); one byte over the limit is refused. */
static void big_files(void **state)
{
    (void)state;
    const char *tail = "\nreturn { name = 'q', type = 'i32', identity = 0, commutative = "
                       "true, combine = 'return\\x20a + b;' }\n";
    const char *comment = "-- combine = x\n";
    size_t n = (OPFILE_MAX_BYTES - strlen(tail)) / strlen(comment), len = 0;
    char *text = malloc(OPFILE_MAX_BYTES + 2);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++, len += strlen(comment))
        memcpy(text + len, comment, strlen(comment));
    memcpy(text + len, tail, strlen(tail) + 1);
    len += strlen(tail);
    opfile o;
    clock_t t0 = clock();
    assert_int_equal(opfile_parse(text, len, "big.lua", &o, &err), RT_OK);
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
    assert_string_equal(o.op.combine, "return a + b;");
    assert_int_equal(o.op.combine_line, 1);   /* not found: the first "combine =" */
    assert_int_equal(o.op.identity_line, (int)n + 2);
    opfile_free(&o);
    memset(text, ' ', OPFILE_MAX_BYTES + 1);
    assert_int_equal(opfile_parse(text, OPFILE_MAX_BYTES + 1, "big.lua", &o, &err), RT_EINVAL);
    assert_string_equal(err.msg, "big.lua: the operator file is 1048577 bytes long; at most "
                                 "1048576 (1 MiB)");
    free(text);
}

/* The sample function: element i is sample(i, r) with r from (seed, i) only, whatever the
 * number of threads; failures name the line and the element. */
static void sample_function(void **state)
{
    (void)state;
    opfile o;
    load_ok("lua/ops/affine.lua", &o);
    enum { N = 20000 };
    uint64_t *a = malloc(N * 8), *b = malloc(N * 8);
    assert_int_equal(opfile_sample(o.text, o.len, o.op.file, o.op.type, a, N, 42, 1, &err), RT_OK);
    assert_int_equal(opfile_sample(o.text, o.len, o.op.file, o.op.type, b, N, 42, 4, &err), RT_OK);
    assert_memory_equal(a, b, N * 8);
    uint64_t s = data_mix(42);
    for (uint64_t i = 0; i < N; i++)
        assert_true(a[i] == (data_mix(s ^ i) | (1ULL << 32)));
    opfile_free(&o);

    load_ok("tests/ops/good_f32.lua", &o);
    float *f = (float *)a;
    assert_int_equal(opfile_sample(o.text, o.len, o.op.file, o.op.type, f, 1000, 7, 2, &err),
                     RT_OK);
    for (int i = 0; i < 1000; i++)
        assert_true(f[i] >= -125.0f && f[i] <= 125.0f && f[i] * 8 == (float)(int)(f[i] * 8));
    opfile_free(&o);

    load_ok("tests/ops/bad_sample.lua", &o);
    assert_int_equal(opfile_sample(o.text, o.len, o.op.file, o.op.type, a, 1000, 7, 3, &err),
                     RT_ELUA);
    assert_string_equal(err.msg, "tests/ops/bad_sample.lua:9: no sample for 100 (making element "
                                 "100 of the test data)");
    opfile_free(&o);
    const char *text = "return { name = 'x', type = 'i32', identity = 0, commutative = true,\n"
                       "  combine = 'return a;', sample = function(i) return 'two' end }";
    assert_int_equal(opfile_sample(text, strlen(text), "s.lua", RT_I32, a, 10, 1, 1, &err),
                     RT_EINVAL);
    assert_string_equal(err.msg, "s.lua: sample(0, r) returned a string, not an integer (making "
                                 "element 0 of the test data)");
    /* a message handler that loops, in the sample function: the limit per call stops it */
    text = "return { name = 'x', type = 'i32', identity = 0, commutative = true,\n"
           "  combine = 'return a;', sample = function(i)\n"
           "    return xpcall(function() while true do end end, function() while true do end end)\n"
           "  end }";
    assert_int_equal(opfile_sample(text, strlen(text), "s.lua", RT_I32, a, 10, 1, 1, &err),
                     RT_ELUA);
    assert_string_equal(err.msg, "s.lua:3: instruction limit exceeded (making element 0 of the "
                                 "test data)");
    free(a);
    free(b);
}

/* The unit of a file's operator points into the file, and its fingerprint ignores where the
 * operator was written but not what it says. */
/* The examples with map, acc, finalize and result: the fields and their lines, the
 * tolerance of the result's type (none for a struct), and samples of narrow element types. */
static void new_fields(void **state)
{
    (void)state;
    opfile o;
    expect_op("lua/ops/matmul2.lua", "matmul2", RT_U64, 0, "{1, 0, 0, 1}", 27, 31, &o);
    assert_string_equal(o.op.acc, "struct { unsigned short a, b, c, d; }");
    assert_int_equal(o.op.acc_line, 15);
    assert_int_equal(o.op.map_line, 18);
    assert_int_equal(o.op.finalize[0], 0);
    assert_true(o.tolerance == 0);
    opfile_free(&o);
    load_ok("lua/ops/minmax.lua", &o);
    assert_int_equal(o.op.type, RT_F16);
    assert_true(o.tolerance == 0);
    opfile_free(&o);
    load_ok("lua/ops/kahan.lua", &o);
    assert_string_equal(o.op.result, "f32");
    assert_int_equal(o.op.finalize_line, 33);
    assert_true(o.tolerance == 1e-5);
    opfile_free(&o);
    /* an f64 result from an f32 element: f64's default tolerance */
    const char *text = "return { name = 'q', type = 'f32', identity = 0, commutative = true,\n"
                       "  acc = 'f64', combine = 'return a + b;' }\n";
    assert_int_equal(opfile_parse(text, strlen(text), "q.lua", &o, &err), RT_OK);
    assert_true(o.tolerance == OPFILE_TOL_F64);
    assert_string_equal(o.op.identity, "0");
    opfile_free(&o);

    /* samples of 2- and 1-byte elements: f16 and bf16 rounded to nearest even, i8 wrapped */
    static const char f16s[] =
        "local v = {1.0, -2.0, 65504, 1e6, 2^-24, 0.1, 0/0}\n"
        "return { sample = function(i, r) return v[i + 1] end }\n";
    uint16_t h[7];
    assert_int_equal(opfile_sample(f16s, strlen(f16s), "h.lua", RT_F16, h, 7, 1, 2, &err),
                     RT_OK);
    static const uint16_t want_h[7] = {0x3c00, 0xc000, 0x7bff, 0x7c00, 0x0001, 0x2e66};
    for (int i = 0; i < 6; i++)
        assert_int_equal(h[i], want_h[i]);
    assert_true((h[6] & 0x7c00) == 0x7c00 && (h[6] & 0x3ff) != 0);
    assert_int_equal(opfile_sample(f16s, strlen(f16s), "h.lua", RT_BF16, h, 6, 1, 2, &err),
                     RT_OK);
    assert_int_equal(h[0], 0x3f80);
    assert_int_equal(h[1], 0xc000);
    assert_int_equal(h[5], 0x3dcd);
    static const char i8s[] = "return { sample = function(i, r) return i * 100 - 150 end }\n";
    unsigned char c[4];
    assert_int_equal(opfile_sample(i8s, strlen(i8s), "c.lua", RT_I8, c, 4, 1, 1, &err), RT_OK);
    assert_int_equal((signed char)c[0], -150 + 256);
    assert_int_equal((signed char)c[1], -50);
    assert_int_equal((signed char)c[3], 150 - 256);
}

static void emitted_unit(void **state)
{
    (void)state;
    opfile o;
    load_ok("lua/ops/affine.lua", &o);
    rt_config c;
    config_default(family_find("tb2"), &c);
    char *src;
    assert_int_equal(codegen_emit_user(&c, &o.op, &src, &err), RT_OK);
    assert_non_null(strstr(src, "#line 16 \"lua/ops/affine.lua\"\n"
                                "return (rt_acc_t)(0x100000000ULL);"));
    assert_non_null(strstr(src, "#line 20 \"lua/ops/affine.lua\"\n    unsigned int af"));
    assert_non_null(strstr(src, "/* redtune: user operator affine, definition "));
    free(src);
    char id[RT_USER_OP_ID], id2[RT_USER_OP_ID];
    codegen_user_op_id(&o.op, id);
    rt_user_op moved = o.op;
    snprintf(moved.file, sizeof moved.file, "elsewhere/affine.lua");
    moved.combine_line = 3;
    codegen_user_op_id(&moved, id2);
    assert_string_equal(id, id2);
    moved.commutative = 1;
    codegen_user_op_id(&moved, id2);
    assert_string_not_equal(id, id2);
    assert_int_equal(strlen(id), 16);
    opfile_free(&o);
}

int test_opfile_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_files),
        cmocka_unit_test(bad_files),
        cmocka_unit_test(bad_fields),
        cmocka_unit_test(defaults_and_lines),
        cmocka_unit_test(big_files),
        cmocka_unit_test(sample_function),
        cmocka_unit_test(emitted_unit),
        cmocka_unit_test(new_fields),
    };
    return cmocka_run_group_tests_name("opfile", tests, NULL, NULL);
}
