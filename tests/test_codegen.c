/*
 * test_codegen.c - families parsed from the templates, configs, the generated unit, hashes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/codegen.h"
#include "runtime/family.h"
#include "runtime/hash.h"
#include "runtime/nvrtc.h"
#include "tests/affine.h"
#include "tuner/opfile.h"

static void families_parse(void **state)
{
    (void)state;
    assert_null(family_error());
    assert_true(family_count() >= 3);
    const rt_family *ti = family_find("tree_interleaved");
    const rt_family *ts = family_find("tree_sequential");
    const rt_family *gs = family_find("gridstride");
    assert_non_null(ti);
    assert_non_null(ts);
    assert_non_null(gs);
    assert_null(family_find("bandwidth"));   /* a helper, not a family */
    assert_null(family_find("nope"));
    assert_int_equal(ti->plan, PLAN_MULTIPASS);
    assert_int_equal(ti->needs_commutative, 0);
    assert_int_equal(ts->plan, PLAN_MULTIPASS);
    assert_int_equal(ts->needs_commutative, 1);
    assert_int_equal(gs->plan, PLAN_ONELAUNCH);
    assert_int_equal(gs->needs_commutative, 1);
    assert_int_equal(gs->deterministic, 1);
    const char *want[] = {"B", "V", "U", "G"};
    assert_int_equal(gs->nparams, 4);
    for (int i = 0; i < 4; i++)
        assert_string_equal(gs->params[i].name, want[i]);
    for (int i = 0; i < family_count(); i++) {
        const rt_family *f = family_at(i);
        assert_true(f->summary[0] != '\0');
        assert_non_null(strstr(f->file, "templates/"));
    }
}

static void config_set_and_format(void **state)
{
    (void)state;
    rt_config c;
    rt_err e;
    config_default(family_find("gridstride"), &c);
    assert_int_equal(config_set(&c, "B", 512, &e), RT_OK);
    assert_int_equal(config_set(&c, "Q", 1, &e), RT_EINVAL);
    assert_string_equal(e.msg, "family 'gridstride' has no parameter 'Q' (parameters: B V U G)");
    char buf[128];
    config_format(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "B=512 V="));
}

static void emit_prelude(void **state)
{
    (void)state;
    rt_config c;
    rt_err e;
    config_default(family_find("gridstride"), &c);
    config_set(&c, "U", 8, &e);
    char *src;
    assert_int_equal(codegen_emit(&c, RT_MIN, RT_F64, &src, &e), RT_OK);
    assert_non_null(strstr(src, "#define RT_OP_MIN 1\n"));
    assert_non_null(strstr(src, "#define RT_TYPE_F64 1\n"));
    assert_non_null(strstr(src, "typedef double rt_value_t;"));
    assert_non_null(strstr(src, "fmin(a, b)"));
    assert_non_null(strstr(src, "0x7ff0000000000000LL"));   /* +inf, the identity of min */
    assert_non_null(strstr(src, "#define RT_U 8\n"));
    assert_non_null(strstr(src, "#line 1 \"templates/gridstride.cu\"\n"));
    /* the prelude comes before the template text */
    assert_true(strstr(src, "#define RT_U 8") < strstr(src, "#line 1"));
    free(src);

    assert_int_equal(codegen_emit(&c, RT_SUM, RT_I32, &src, &e), RT_OK);
    assert_non_null(strstr(src, "(int)((unsigned int)a + (unsigned int)b)"));   /* wraps */
    free(src);
    assert_int_equal(codegen_emit(&c, RT_MAX, RT_U64, &src, &e), RT_OK);
    assert_non_null(strstr(src, "return b > a ? b : a;"));
    free(src);
    assert_int_equal(codegen_emit(&c, (rt_op)99, RT_U64, &src, &e), RT_EINVAL);
    assert_null(src);
}

/* REDTUNE_LOADS: keep adds RT_LOAD_KEEP to the prelude (another unit, another hash, built-in
 * and user operators alike); stream and empty are the default; another value is refused with
 * the variable's name and value, no unit made. */
static void emit_loads(void **state)
{
    (void)state;
    rt_config c;
    rt_err e;
    char *def, *src;
    char hd[RT_HASH_HEX], hs[RT_HASH_HEX];
    config_default(family_find("axis_rows"), &c);
    unsetenv("REDTUNE_LOADS");
    assert_int_equal(codegen_loads(&e), CODEGEN_LOADS_STREAM);
    assert_int_equal(codegen_emit(&c, RT_SUM, RT_F32, &def, &e), RT_OK);
    assert_null(strstr(def, "RT_LOAD_KEEP 1"));
    hash_hex(def, strlen(def), hd);
    setenv("REDTUNE_LOADS", "keep", 1);
    assert_int_equal(codegen_loads(&e), CODEGEN_LOADS_KEEP);
    assert_int_equal(codegen_emit(&c, RT_SUM, RT_F32, &src, &e), RT_OK);
    assert_non_null(strstr(src, "#define RT_LOAD_KEEP 1\n"));
    assert_true(strstr(src, "#define RT_LOAD_KEEP 1") < strstr(src, "#line 1"));
    hash_hex(src, strlen(src), hs);
    assert_string_not_equal(hd, hs);
    free(src);
    rt_user_op u;
    memset(&u, 0, sizeof u);
    strcpy(u.name, "mysum");
    u.type = RT_F32;
    strcpy(u.identity, "0.0f");
    strcpy(u.combine, "return a + b;");
    u.commutative = 1;
    assert_int_equal(codegen_emit_user(&c, &u, &src, &e), RT_OK);
    assert_non_null(strstr(src, "#define RT_LOAD_KEEP 1\n"));
    free(src);
    for (int k = 0; k < 2; k++) {
        setenv("REDTUNE_LOADS", k ? "stream" : "", 1);
        assert_int_equal(codegen_emit(&c, RT_SUM, RT_F32, &src, &e), RT_OK);
        assert_string_equal(src, def);
        free(src);
    }
    setenv("REDTUNE_LOADS", "Keep", 1);
    assert_int_equal(codegen_loads(&e), -1);
    assert_int_equal(e.code, RT_EINVAL);
    src = (char *)1;
    assert_int_equal(codegen_emit(&c, RT_SUM, RT_F32, &src, &e), RT_EINVAL);
    assert_null(src);
    assert_non_null(strstr(e.msg, "REDTUNE_LOADS is 'Keep'; it takes stream"));
    unsetenv("REDTUNE_LOADS");
    free(def);
}

/* A one-segment unit (RT_BOUNDS, docs/segmented.md "One segment"): only a @bounds family
 * takes it; the define comes before the template and changes the hash, a config without it
 * emits what it always did; each width compiles (NVRTC, where it loads) for an operator with
 * an index (argmax), one with a struct accumulator (var_mean) and a narrow type. */
static void emit_bounds(void **state)
{
    (void)state;
    rt_config c;
    rt_err e;
    char *def, *src;
    char hd[RT_HASH_HEX], hs[RT_HASH_HEX];
    assert_int_equal(family_find("gridstride")->bounds, 1);
    for (int i = 0; i < family_count(); i++)
        if (strcmp(family_at(i)->name, "gridstride"))
            assert_int_equal(family_at(i)->bounds, 0);
    config_default(family_find("gridstride"), &c);
    assert_int_equal(c.bounds, 0);
    assert_int_equal(codegen_emit(&c, RT_SUM, RT_F32, &def, &e), RT_OK);
    assert_true(strstr(def, "#define RT_BOUNDS") > strstr(def, "#line 1"));   /* the template's own */
    hash_hex(def, strlen(def), hd);
    c.bounds = 2;
    assert_int_equal(codegen_emit(&c, RT_SUM, RT_F32, &src, &e), RT_OK);
    assert_non_null(strstr(src, "#define RT_BOUNDS 2\n"));
    assert_true(strstr(src, "#define RT_BOUNDS 2") < strstr(src, "#line 1"));
    hash_hex(src, strlen(src), hs);
    assert_string_not_equal(hd, hs);
    free(src);
    free(def);
    c.bounds = 3;
    src = (char *)1;
    assert_int_equal(codegen_emit(&c, RT_SUM, RT_F32, &src, &e), RT_EINVAL);
    assert_null(src);
    config_default(family_find("tree_sequential"), &c);
    c.bounds = 1;
    assert_int_equal(codegen_emit(&c, RT_SUM, RT_F32, &src, &e), RT_EINVAL);
    assert_null(src);
    assert_non_null(strstr(e.msg, "family tree_sequential cannot read its bounds on the GPU"));
    if (nvrtc_load(&e) != RT_OK) {
        print_message("# SKIP reason: %s\n", e.msg);
        return;
    }
    static const struct { rt_op op; rt_type t; int v; } cases[] = {
        {RT_ARGMAX, RT_F32, 4}, {RT_VAR_MEAN, RT_F64, 2}, {RT_SUM, RT_BF16, 8}, {RT_MIN, RT_I8, 16},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int b = 1; b <= 2; b++) {
            config_default(family_find("gridstride"), &c);
            assert_int_equal(config_set(&c, "V", cases[k].v, &e), RT_OK);
            c.bounds = b;
            assert_int_equal(codegen_emit(&c, cases[k].op, cases[k].t, &src, &e), RT_OK);
            nvrtc_output o;
            memset(&o, 0, sizeof o);
            if (nvrtc_compile(src, "bounds.cu", "sm_90", &o, &e))
                fail_msg("gridstride RT_BOUNDS %d, %s %s: %s", b, rt_op_name(cases[k].op),
                         rt_type_name(cases[k].t), e.msg);
            nvrtc_output_free(&o);
            free(src);
        }
}

static void emit_helper(void **state)
{
    (void)state;
    const char *defs[] = {"B=128", "U=2"};
    char *src;
    rt_err e;
    assert_int_equal(codegen_emit_helper("templates/bandwidth.cu", defs, 2, &src, &e), RT_OK);
    assert_non_null(strstr(src, "#define RT_B 128\n#define RT_U 2\n"));
    assert_non_null(strstr(src, "rt_bw_read"));
    free(src);
    const char *bad[] = {"B"};
    assert_int_equal(codegen_emit_helper("templates/bandwidth.cu", bad, 1, &src, &e), RT_EINVAL);
    assert_int_equal(codegen_emit_helper("templates/none.cu", defs, 2, &src, &e), RT_ENOTFOUND);
}

static void hashes(void **state)
{
    (void)state;
    char h[RT_HASH_HEX];
    hash_hex("abc", 3, h);   /* FIPS 180-4 test vectors */
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hash_hex("", 0, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hash_hex(m, strlen(m), h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    rt_config c;
    rt_err e;
    char *a, *b;
    char ha[RT_HASH_HEX], hb[RT_HASH_HEX];
    config_default(family_find("tree_sequential"), &c);
    codegen_emit(&c, RT_SUM, RT_F32, &a, &e);
    config_set(&c, "R", 4, &e);
    codegen_emit(&c, RT_SUM, RT_F32, &b, &e);
    hash_hex(a, strlen(a), ha);
    hash_hex(b, strlen(b), hb);
    assert_string_not_equal(ha, hb);
    free(b);
    config_set(&c, "R", c.family->params[1].def, &e);
    codegen_emit(&c, RT_SUM, RT_F32, &b, &e);
    hash_hex(b, strlen(b), hb);
    assert_string_equal(ha, hb);   /* the same config gives the same unit */
    free(a);
    free(b);
}

/* A non-commutative user operator: refused by the families that need commutativity, taken
 * by the others with RT_COMMUTATIVE 0. */
static void user_operator_legality(void **state)
{
    (void)state;
    rt_err e;
    char *src;
    int kept = 0;
    for (int i = 0; i < family_count(); i++) {
        rt_config c;
        config_default(family_at(i), &c);
        int rc = codegen_emit_user(&c, &affine_op, &src, &e);
        if (family_at(i)->needs_commutative) {
            assert_int_equal(rc, RT_EINVAL);
            assert_null(src);
            assert_non_null(strstr(e.msg, "needs a commutative operator; 'affine' is not"));
        } else {
            assert_int_equal(rc, RT_OK);
            assert_non_null(strstr(src, "#define RT_COMMUTATIVE 0\n"));
            assert_non_null(strstr(src, "#define RT_OP_USER 1\n"));
            assert_non_null(strstr(src, "typedef unsigned long long rt_acc_t;"));
            free(src);
            kept++;
        }
    }
    assert_true(kept >= 6);   /* tree_interleaved and the paper's families keep order */
    rt_user_op bad = affine_op;
    snprintf(bad.name, sizeof bad.name, "Bad Name");
    rt_config c;
    config_default(family_find("tb2"), &c);
    assert_int_equal(codegen_emit_user(&c, &bad, &src, &e), RT_EINVAL);
}

/* User CUDA text: what is accepted, and the line and reason of what is not. */
static void user_text_checked(void **state)
{
    (void)state;
    static const char *const good[] = {
        "return a + b;",
        "// a # in a comment, \"and a quote\n/* #include <x> ( { */ return a < b ? a : b;",
        "const char *s = \"#include \\\"x\\\" }\"; char c = '}', d = '\\'', e = L'\"';\n"
        "return a + u8\"{\"[0] * 0 + 1'000'000 * 0 + 0x1p-3 * 0;",
        "if (a) { int v[2] = {1, 2}; return (a + v[0]) * (b + v[1]); }\nreturn ::max(a, b);",
        "__int_as_float(0x7f800000)",
    };
    int line;
    const char *why;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (codegen_check_fragment(good[i], 0, &line, &why) != RT_OK)
            fail_msg("refused \"%s\": line %d: %s", good[i], line, why);
    static const struct {
        const char *text;
        int expr, line;
        const char *why;
    } bad[] = {
        {"return a;\n  #include \"/etc/passwd\"\n", 0, 2,
         "a preprocessor directive ('#') is not allowed"},
        {"return a;\n%:define X\n", 0, 2, "a preprocessor directive ('#') is not allowed"},
        {"return a; <% }", 0, 1, "a digraph (<% %> <: :> %:) is not allowed"},
        {"return a; // \\\n#include <x>", 0, 1, "a line splice (backslash-newline) is not allowed"},
        {"\n/* *\\\n/ } __global__ void k() { /* */", 0, 2,
         "a line splice (backslash-newline) is not allowed"},
        {"return a; ?\?=include", 0, 1, "a trigraph is not allowed"},
        {"return a;\n}\n__global__ void k() {\n", 0, 2, "a '}' closes nothing open here"},
        {"0); } __global__ void k() { (0", 1, 1, "a ')' closes nothing open here"},
        {"(a[1)]", 0, 1, "a ')' closes nothing open here"},
        {"return f(\n(a);", 0, 1, "a '(' is not closed"},
        {"return a; /* ", 0, 1, "a /* comment is not closed"},
        {"return \"a\nb\";", 0, 1, "a string literal is not closed on its line"},
        {"return 'a;", 0, 1, "a character literal is not closed on its line"},
        {"return R\"(})\"[0];", 0, 1, "a raw string literal is not allowed"},
        {"_Pragma(\"message(\\\"x\\\")\") return a;", 0, 1, "_Pragma is not allowed"},
        {"return a\\u0023;", 0, 1, "a backslash outside a literal is not allowed"},
        {"return a;\x01", 0, 1, "a control character is not allowed"},
        {"0 // zero", 1, 1, "a // comment runs to the end of the text"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        line = 0;
        why = NULL;
        if (codegen_check_fragment(bad[i].text, bad[i].expr, &line, &why) != RT_EINVAL ||
            line != bad[i].line || strcmp(why, bad[i].why) != 0)
            fail_msg("\"%s\": expected line %d \"%s\", got line %d \"%s\"", bad[i].text,
                     bad[i].line, bad[i].why, line, why ? why : "(accepted)");
    }
    /* every unit checks again, whoever built the operator */
    rt_user_op op = affine_op;
    snprintf(op.combine, sizeof op.combine, "return a;\n#include \"/etc/passwd\"\n");
    rt_config c;
    config_default(family_find("tb2"), &c);
    char *src = NULL;
    rt_err e;
    assert_int_equal(codegen_emit_user(&c, &op, &src, &e), RT_EINVAL);
    assert_string_equal(e.msg, "operator 'affine': combine, line 2: a preprocessor directive "
                               "('#') is not allowed");
    assert_null(src);
    assert_int_equal(codegen_emit_user_check(&op, &src, &e), RT_EINVAL);
    assert_null(src);
}

/* The operator file's name is written into #line directives as a string literal: a newline
 * in it cannot start a line of the unit's own. */
static void line_names_escaped(void **state)
{
    (void)state;
    rt_user_op op = affine_op;
    snprintf(op.file, sizeof op.file, "x\n#include \"/etc/passwd\"\n\"\\.lua");
    op.identity_line = 3;
    op.combine_line = 4;
    rt_config c;
    config_default(family_find("tb2"), &c);
    char *src;
    rt_err e;
    assert_int_equal(codegen_emit_user(&c, &op, &src, &e), RT_OK);
    assert_non_null(strstr(src, "#line 3 \"x\\012#include \\\"/etc/passwd\\\"\\012\\\"\\\\.lua\"\n"
                                "return (rt_acc_t)(0x100000000ULL);"));
    assert_null(strstr(src, "\n#include \"/etc/passwd\""));
    free(src);
}

/* The fingerprint covers each of map, acc, finalize and result; a definition without them
 * keeps the one it had before they existed (units in databases carry it). */
static void user_fields_fingerprint(void **state)
{
    (void)state;
    char base[RT_USER_OP_ID], ids[4][RT_USER_OP_ID];
    rt_user_op *op = malloc(sizeof *op);
    assert_non_null(op);
    codegen_user_op_id(&affine_op, base);
    assert_string_equal(base, "d3e628a858fc5fde");   /* as before map, acc... existed */
    for (int k = 0; k < 4; k++) {
        *op = affine_op;
        char *field = k == 0 ? op->map : k == 1 ? op->acc : k == 2 ? op->finalize : op->result;
        snprintf(field, 16, "f64");
        codegen_user_op_id(op, ids[k]);
        assert_string_not_equal(ids[k], base);
        for (int j = 0; j < k; j++)
            assert_string_not_equal(ids[k], ids[j]);
        /* the lines of a field are not part of the definition */
        op->map_line = op->acc_line = op->finalize_line = op->result_line = 7;
        char again[RT_USER_OP_ID];
        codegen_user_op_id(op, again);
        assert_string_equal(again, ids[k]);
    }
    /* text moved between fields is another definition */
    *op = affine_op;
    snprintf(op->map, sizeof op->map, "return x;");
    codegen_user_op_id(op, ids[0]);
    *op = affine_op;
    snprintf(op->finalize, sizeof op->finalize, "return x;");
    codegen_user_op_id(op, ids[1]);
    assert_string_not_equal(ids[0], ids[1]);
    free(op);
}

/* The three examples of lua/ops/ emit for gridstride (when they commute), diffwarps and
 * seg_lb, with their accumulator declared as the host laid it out, map and finalize under
 * #line into their files; the reference units too. */
static void user_examples_emit(void **state)
{
    (void)state;
    static const struct {
        const char *path, *acc, *res, *final;
        int commutes;
    } ex[] = {
        {"lua/ops/matmul2.lua",
         "struct __align__(8) rt_acc_t { unsigned short a; unsigned short b; unsigned short c; "
         "unsigned short d; };\nstatic_assert(sizeof(rt_acc_t) == 8 && sizeof(rt_acc_t) <= 32",
         "typedef rt_acc_t rt_res_t;", "{ return a; }", 0},
        {"lua/ops/minmax.lua",
         "struct __align__(8) rt_acc_t { float lo; float hi; };\n"
         "static_assert(sizeof(rt_acc_t) == 8 && sizeof(rt_acc_t) <= 32",
         "typedef rt_acc_t rt_res_t;", "{ return a; }", 1},
        {"lua/ops/kahan.lua",
         "struct __align__(8) rt_acc_t { float s; float c; };\n"
         "static_assert(sizeof(rt_acc_t) == 8 && sizeof(rt_acc_t) <= 32",
         "typedef float rt_res_t;", "#line 33 \"lua/ops/kahan.lua\"\n    return a.s + a.c;", 1},
    };
    static const char *const fams[] = {"gridstride", "diffwarps", "seg_lb"};
    rt_err e;
    for (size_t k = 0; k < sizeof ex / sizeof ex[0]; k++) {
        opfile o;
        if (opfile_load(ex[k].path, &o, &e))
            fail_msg("%s", e.msg);
        for (size_t f = 0; f < 3; f++) {
            rt_config c;
            char *src;
            config_default(family_find(fams[f]), &c);
            int rc = codegen_emit_user(&c, &o.op, &src, &e);
            if (f == 0 && !ex[k].commutes) {
                assert_int_equal(rc, RT_EINVAL);
                continue;
            }
            if (rc)
                fail_msg("%s %s: %s", ex[k].path, fams[f], e.msg);
            assert_non_null(strstr(src, ex[k].acc));
            assert_non_null(strstr(src, ex[k].res));
            assert_non_null(strstr(src, ex[k].final));
            assert_non_null(strstr(src, "rt_lift(rt_value_t x, unsigned long long i) {\n"
                                        "(void)x; (void)i;\n#line "));
            assert_non_null(strstr(src, "#define RT_OP_USER 1\n"));
            free(src);
        }
        char *src;
        assert_int_equal(codegen_emit_user_check(&o.op, &src, &e), RT_OK);
        assert_non_null(strstr(src, "out[0] = rt_final(acc);"));
        assert_non_null(strstr(src, "static __device__ __forceinline__ bool rt_same(rt_acc_t x, "
                                    "rt_acc_t y)\n{\n    return true &&\n"));
        free(src);
        opfile_free(&o);
    }
    /* a definition without the new fields is emitted as before: no conversions, no struct */
    rt_config c;
    char *src;
    config_default(family_find("diffwarps"), &c);
    assert_int_equal(codegen_emit_user(&c, &affine_op, &src, &e), RT_OK);
    assert_null(strstr(src, "rt_h2f"));
    assert_non_null(strstr(src, "typedef unsigned long long rt_acc_t;\n"));
    free(src);
}

/* Layouts as the host computes them, and what is refused. */
static void user_layouts(void **state)
{
    (void)state;
    codegen_layout l;
    int line;
    char why[160];
    assert_int_equal(codegen_layout_parse(" f64 ", &l, &line, why, sizeof why), RT_OK);
    assert_int_equal(l.scalar, RT_F64);
    assert_int_equal(l.size, 8);
    assert_int_equal(codegen_layout_parse("struct {\n  char c; /* a note */ double d;\n"
                                          "  unsigned short int s, t; // two\n"
                                          "  signed char x;\n}", &l, &line, why, sizeof why),
                     RT_OK);
    assert_int_equal(l.scalar, -1);
    assert_int_equal(l.nfields, 5);
    assert_int_equal(l.f[1].off, 8);
    assert_string_equal(l.f[2].ct, "unsigned short");
    assert_int_equal(l.f[3].off, 18);
    assert_int_equal(l.f[4].off, 20);
    assert_int_equal(l.size, 24);
    assert_int_equal(codegen_layout_parse("struct { float m; float s; unsigned n; };", &l, &line,
                                          why, sizeof why), RT_OK);
    assert_int_equal(l.size, 16);
    assert_string_equal(l.f[2].ct, "unsigned int");
    assert_int_equal(codegen_layout_parse("struct { long long a, b, c, d; }", &l, &line, why,
                                          sizeof why), RT_OK);
    assert_int_equal(l.size, 32);
    assert_int_equal(codegen_layout_parse("struct { long long a, b, c, d; char e; }", &l,
                                          &line, why, sizeof why), RT_EINVAL);
    assert_string_equal(why, "the struct is 40 bytes long (8-byte aligned); at most 32");
    assert_int_equal(codegen_layout_parse("struct {\n int a;\n unsigned signed b;\n}", &l,
                                          &line, why, sizeof why), RT_EINVAL);
    assert_int_equal(line, 3);
    assert_string_equal(why, "'unsigned signed' is not a field type: use float, double, "
                             "[unsigned] char, short, int or long long");
    assert_int_equal(codegen_layout_parse("struct { long double q; }", &l, &line, why,
                                          sizeof why), RT_EINVAL);
    assert_int_equal(codegen_layout_parse("struct { int float; }", &l, &line, why, sizeof why),
                     RT_EINVAL);
    assert_int_equal(codegen_layout_parse("struct { int struct; }", &l, &line, why, sizeof why),
                     RT_EINVAL);
    assert_string_equal(why, "a field name is expected after 'int'");
    assert_int_equal(codegen_layout_parse("f16", &l, &line, why, sizeof why), RT_EINVAL);
    assert_int_equal(codegen_layout_parse("struct { int a;", &l, &line, why, sizeof why),
                     RT_EINVAL);
    assert_string_equal(why, "the struct's '}' is missing");
}

/* The rules between the fields, for a description with no file (rt_register_op's path). */
static void user_field_rules(void **state)
{
    (void)state;
    rt_err e;
    char *src;
    rt_config c;
    config_default(family_find("diffwarps"), &c);
    rt_user_op *op = malloc(sizeof *op);
    assert_non_null(op);
    *op = affine_op;
    op->type = RT_BF16;
    assert_int_equal(codegen_emit_user(&c, op, &src, &e), RT_EINVAL);
    assert_string_equal(e.msg, "operator 'affine': acc, line 1: a bf16 element needs an "
                               "accumulator of 4 or 8 bytes: give acc (and a map)");
    snprintf(op->acc, sizeof op->acc, "u64");
    assert_int_equal(codegen_emit_user(&c, op, &src, &e), RT_OK);
    /* no map: the element widened (bf16 through rt_b2f) */
    assert_non_null(strstr(src, "{ (void)i; return (rt_acc_t)(rt_b2f(x)); }"));
    assert_non_null(strstr(src, "#define RT_FINAL_IN_PLACE 1\n"));
    free(src);
    snprintf(op->result, sizeof op->result, "u32");
    assert_int_equal(codegen_emit_user(&c, op, &src, &e), RT_EINVAL);
    assert_string_equal(e.msg, "operator 'affine': result, line 1: given without a finalize "
                               "(the default finalize returns the accumulator itself)");
    snprintf(op->finalize, sizeof op->finalize, "return (unsigned)a; // low half");
    assert_int_equal(codegen_emit_user(&c, op, &src, &e), RT_OK);
    assert_non_null(strstr(src, "typedef unsigned int rt_res_t;\n#define RT_FINAL_IS_IDENTITY 0\n"
                                "#define RT_FINAL_IN_PLACE 0\n"));
    free(src);
    snprintf(op->map, sizeof op->map, "return x; #");
    assert_int_equal(codegen_emit_user(&c, op, &src, &e), RT_EINVAL);
    assert_string_equal(e.msg, "operator 'affine': map, line 1: a preprocessor directive ('#') "
                               "is not allowed");
    op->map[0] = '\0';
    snprintf(op->acc, sizeof op->acc, "struct { float a; }");
    assert_int_equal(codegen_emit_user_check(op, &src, &e), RT_EINVAL);
    assert_string_equal(e.msg, "operator 'affine': map, line 1: missing: a struct accumulator "
                               "needs a map from the element into it");
    free(op);
}

int test_codegen_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(families_parse),
        cmocka_unit_test(config_set_and_format),
        cmocka_unit_test(emit_prelude),
        cmocka_unit_test(emit_loads),
        cmocka_unit_test(emit_bounds),
        cmocka_unit_test(emit_helper),
        cmocka_unit_test(hashes),
        cmocka_unit_test(user_operator_legality),
        cmocka_unit_test(user_text_checked),
        cmocka_unit_test(line_names_escaped),
        cmocka_unit_test(user_fields_fingerprint),
        cmocka_unit_test(user_examples_emit),
        cmocka_unit_test(user_layouts),
        cmocka_unit_test(user_field_rules),
    };
    return cmocka_run_group_tests_name("codegen", tests, NULL, NULL);
}
