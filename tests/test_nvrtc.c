/*
 * test_nvrtc.c - NVRTC with no GPU: every config of the default space compiles for sm_80 and
 * sm_90, every family compiles for every operator and type, and failures carry the log.
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
#include "runtime/codegen.h"
#include "runtime/nvrtc.h"
#include "runtime/optype.h"
#include "tuner/pool.h"
#include "tuner/opfile.h"
#include "tuner/space.h"
#include "tuner/tuner.h"
#include "tests/affine.h"

static void loads(void **state)
{
    (void)state;
    rt_err e;
    int rc = nvrtc_load(&e);
    if (rc)
        print_error("%s\n", e.msg);
    assert_int_equal(rc, RT_OK);
    assert_true(nvrtc_version() >= 12000);
}

static void default_space_compiles(const char *arch, rt_type type)
{
    rt_device dev;
    rt_err e;
    assert_int_equal(device_for_arch(arch, &dev, &e), RT_OK);
    space_case cs = {"min", rt_type_name(type), (int)optype_size(type), 1};
    rt_config *cfgs;
    int n;
    const char *text = space_default_text();
    int rc = space_expand(text, strlen(text), "lua/spaces/default.lua", &dev, &cs, &cfgs, &n, &e);
    if (rc)
        print_error("%s\n", e.msg);
    assert_int_equal(rc, RT_OK);
    assert_true(n > 10);
    cand *c;
    assert_int_equal(cands_make(cfgs, n, RT_MIN, type, &c, &e), RT_OK);
    int compiled, failed;
    assert_int_equal(cands_compile(c, n, arch, pool_cores(), NULL, &compiled, &failed, &e), RT_OK);
    for (int i = 0; i < n; i++)
        if (c[i].rc)
            print_error("%s %s: %s\n", c[i].cfg.family->name, c[i].params, c[i].err);
    assert_int_equal(failed, 0);
    assert_int_equal(compiled, n);
    for (int i = 0; i < n; i++)
        assert_true(c[i].cubin_size > 0 && memcmp(c[i].cubin, "\177ELF", 4) == 0);
    cands_free(c, n);
    free(cfgs);
}

static void default_space_sm90(void **state) { (void)state; default_space_compiles("sm_90", RT_F32); }
static void default_space_sm80(void **state) { (void)state; default_space_compiles("sm_80", RT_F32); }
static void default_space_sm90_f64(void **state) { (void)state; default_space_compiles("sm_90", RT_F64); }

/* A family's defaults with V narrowed so that a vector load is at most 16 bytes, and at least
 * 2 bytes (gridstride has no 1-byte load: lua/spaces/default.lua). */
static void narrowed_default(const rt_family *f, rt_type t, rt_config *c)
{
    config_default(f, c);
    long long vmax = 16 / (long long)optype_size(t), vmin = optype_size(t) == 1 ? 2 : 1;
    for (int k = 0; k < f->nparams; k++)
        if (!strcmp(f->params[k].name, "V")) {
            if (c->values[k] > vmax)
                c->values[k] = vmax;
            if (c->values[k] < vmin && !strcmp(f->name, "gridstride"))
                c->values[k] = vmin;
        }
}

/* Every op x type: the six original operators over the six 32/64-bit types through every
 * family at its defaults; a pair that optype_resolve refuses is refused by cands_make too,
 * with the same message; every other pair (the new types and operators) through one family,
 * taken in turn so that the pairs spread over all of them. */
static void every_family_op_type(void **state)
{
    (void)state;
    rt_err e;
    int nf = family_count(), total = 0, want = 0, turn = 0;
    cand **all = calloc((size_t)RT_OP_COUNT * RT_TYPE_COUNT, sizeof *all);
    int *count = calloc((size_t)RT_OP_COUNT * RT_TYPE_COUNT, sizeof *count);
    rt_config *cfgs = calloc((size_t)nf, sizeof *cfgs);
    assert_non_null(all);
    assert_non_null(count);
    assert_non_null(cfgs);
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++) {
            int k = op * RT_TYPE_COUNT + t, m = 0;
            optype_ts ts;
            char why[256];
            if (optype_resolve((rt_op)op, (rt_type)t, &ts, why, sizeof why)) {
                config_default(family_at(0), &cfgs[0]);
                cand *c = NULL;
                assert_int_not_equal(cands_make(cfgs, 1, (rt_op)op, (rt_type)t, &c, &e), RT_OK);
                assert_null(c);
                if (!strstr(e.msg, why))
                    print_error("%s %s: '%s' lacks '%s'\n", rt_op_name((rt_op)op),
                                rt_type_name((rt_type)t), e.msg, why);
                assert_non_null(strstr(e.msg, why));
                continue;
            }
            if (op <= RT_ARGMAX && t <= RT_U64) {
                for (int f = 0; f < nf; f++)
                    narrowed_default(family_at(f), (rt_type)t, &cfgs[m++]);
            } else {
                /* a sample, to keep NVRTC's time in bounds: one family a pair, in turn, so
                 * every family (and so every plan kind) gets some of the new pairs */
                narrowed_default(family_at(turn++ % nf), (rt_type)t, &cfgs[m++]);
            }
            assert_int_equal(cands_make(cfgs, m, (rt_op)op, (rt_type)t, &all[k], &e), RT_OK);
            count[k] = m;
            want += m;
        }
    for (int k = 0; k < RT_OP_COUNT * RT_TYPE_COUNT; k++) {
        if (!count[k])
            continue;
        int compiled, failed;
        assert_int_equal(cands_compile(all[k], count[k], "sm_90", pool_cores(), NULL, &compiled,
                                       &failed, &e), RT_OK);
        for (int i = 0; i < count[k]; i++)
            if (all[k][i].rc)
                print_error("%s %s %s: %s\n", rt_op_name((rt_op)(k / RT_TYPE_COUNT)),
                            rt_type_name((rt_type)(k % RT_TYPE_COUNT)),
                            all[k][i].cfg.family->name, all[k][i].err);
        assert_int_equal(failed, 0);
        total += compiled;
        cands_free(all[k], count[k]);
    }
    assert_int_equal(total, want);
    assert_true(want > nf * 36 + nf);   /* the new pairs were compiled too */
    free(cfgs);
    free(count);
    free(all);
}

/* The order-keeping families compile with a non-commutative user operator. */
static void user_operator_compiles(void **state)
{
    (void)state;
    rt_err e;
    for (int i = 0; i < family_count(); i++) {
        if (family_at(i)->needs_commutative)
            continue;
        rt_config c;
        config_default(family_at(i), &c);
        char *src;
        nvrtc_output o;
        assert_int_equal(codegen_emit_user(&c, &affine_op, &src, &e), RT_OK);
        int rc = nvrtc_compile(src, family_at(i)->name, "sm_90", &o, &e);
        if (rc)
            print_error("%s\n", e.msg);
        assert_int_equal(rc, RT_OK);
        free(src);
        nvrtc_output_free(&o);
    }
}

/* The reference unit of a user operator compiles for every type, without warnings; one
 * whose combine does not compile says so with NVRTC's log pointing into the operator file. */
static void user_reference_compiles(void **state)
{
    (void)state;
    rt_err e;
    nvrtc_output o;
    for (int t = 0; t < RT_TYPE_COUNT; t++) {
        opfile u;
        memset(&u, 0, sizeof u);
        u.op = affine_op;
        snprintf(u.op.name, sizeof u.op.name, "plus");
        u.op.type = (rt_type)t;
        snprintf(u.op.identity, sizeof u.op.identity, "0");
        snprintf(u.op.combine, sizeof u.op.combine, "return a + b;");
        /* 1- and 2-byte elements need a wider accumulator; the default map widens them */
        if (optype_size((rt_type)t) < 4)
            snprintf(u.op.acc, sizeof u.op.acc, "%s", optype_is_float((rt_type)t) ? "f32" : "i32");
        int rc = cands_compile_reference(&u, "sm_90", &o, &e);
        if (rc)
            print_error("%s\n", e.msg);
        assert_int_equal(rc, RT_OK);
        assert_true(!o.log || !strstr(o.log, "warning"));
        nvrtc_output_free(&o);
    }
    opfile u;
    assert_int_equal(opfile_load("lua/ops/affine.lua", &u, &e), RT_OK);
    assert_int_equal(cands_compile_reference(&u, "sm_80", &o, &e), RT_OK);
    nvrtc_output_free(&o);
    opfile_free(&u);
    assert_int_equal(opfile_load("tests/ops/bad_compile.lua", &u, &e), RT_OK);
    assert_int_equal(cands_compile_reference(&u, "sm_90", &o, &e), RT_ENVRTC);
    assert_non_null(strstr(e.msg, "tests/ops/bad_compile.lua: operator 'broken' does not compile "
                                  "for sm_90:\n"));
    assert_non_null(strstr(e.msg, "tests/ops/bad_compile.lua(10): error: identifier "
                                  "\"undefined_variable\" is undefined"));
    nvrtc_output_free(&o);
    opfile_free(&u);
}

/* The examples of lua/ops/ with map, struct accumulators and finalize compile with NVRTC,
 * without warnings, in every family that takes them at its defaults (V narrowed to 16
 * bytes) and as reference units; a map that does not compile is reported at its line. */
static void user_examples_compile(void **state)
{
    (void)state;
    static const char *const paths[] = {"lua/ops/matmul2.lua", "lua/ops/minmax.lua",
                                        "lua/ops/kahan.lua"};
    rt_err e;
    nvrtc_output o;
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
        opfile u;
        if (opfile_load(paths[k], &u, &e))
            fail_msg("%s", e.msg);
        int rc = cands_compile_reference(&u, "sm_90", &o, &e);
        if (rc)
            fail_msg("%s", e.msg);
        assert_true(!o.log || !strstr(o.log, "warning"));
        nvrtc_output_free(&o);
        for (int i = 0; i < family_count(); i++) {
            if (family_at(i)->needs_commutative && !u.op.commutative)
                continue;
            rt_config c;
            config_default(family_at(i), &c);
            long long vmax = 16 / (long long)optype_size(u.op.type);
            for (int p = 0; p < family_at(i)->nparams; p++)
                if (!strcmp(family_at(i)->params[p].name, "V") && c.values[p] > vmax)
                    c.values[p] = vmax;
            char *src;
            assert_int_equal(codegen_emit_user(&c, &u.op, &src, &e), RT_OK);
            rc = nvrtc_compile(src, family_at(i)->name, "sm_90", &o, &e);
            if (rc)
                fail_msg("%s %s: %s", paths[k], family_at(i)->name, e.msg);
            if (o.log && strstr(o.log, "warning"))
                fail_msg("%s %s: %s", paths[k], family_at(i)->name, o.log);
            free(src);
            nvrtc_output_free(&o);
        }
        opfile_free(&u);
    }
    opfile u;
    assert_int_equal(opfile_load("tests/ops/bad_map_compile.lua", &u, &e), RT_OK);
    assert_int_equal(cands_compile_reference(&u, "sm_90", &o, &e), RT_ENVRTC);
    assert_non_null(strstr(e.msg, "tests/ops/bad_map_compile.lua: operator 'typo' does not "
                                  "compile for sm_90:\n"));
    assert_non_null(strstr(e.msg, "tests/ops/bad_map_compile.lua(9): error: identifier \"y\" "
                                  "is undefined"));
    nvrtc_output_free(&o);
    opfile_free(&u);
}

static void failure_carries_log(void **state)
{
    (void)state;
    rt_err e;
    nvrtc_output o;
    int rc = nvrtc_compile("extern \"C\" __global__ void k() { this is not cuda; }", "broken.cu",
                           "sm_90", &o, &e);
    assert_int_equal(rc, RT_ENVRTC);
    assert_non_null(strstr(e.msg, "broken.cu"));
    assert_non_null(strstr(e.msg, "error"));
    assert_non_null(o.log);
    assert_null(o.cubin);
    nvrtc_output_free(&o);
    rc = nvrtc_compile("extern \"C\" __global__ void k() {}", "ok.cu", "sm_1", &o, &e);
    assert_int_equal(rc, RT_ENVRTC);
    nvrtc_output_free(&o);
}

/* Units are compiled with no include path: not even the directory their name points into. */
static void no_source_include(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_nvrtc_XXXXXX", path[64], name[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/probe.h", dir);
    snprintf(name, sizeof name, "%s/unit.cu", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("int probe_value = 42;\n", f);
    fclose(f);
    nvrtc_output o;
    rt_err e;
    int rc = nvrtc_compile("#include \"probe.h\"\n"
                           "extern \"C\" __global__ void k(int *p) { *p = probe_value; }\n",
                           name, "sm_90", &o, &e);
    nvrtc_output_free(&o);
    remove(path);
    rmdir(dir);
    assert_int_equal(rc, RT_ENVRTC);
    assert_non_null(strstr(e.msg, "could not open source file \"probe.h\""));
}

int test_nvrtc_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loads),
        cmocka_unit_test(default_space_sm90),
        cmocka_unit_test(default_space_sm80),
        cmocka_unit_test(default_space_sm90_f64),
        cmocka_unit_test(every_family_op_type),
        cmocka_unit_test(user_operator_compiles),
        cmocka_unit_test(user_reference_compiles),
        cmocka_unit_test(user_examples_compile),
        cmocka_unit_test(failure_carries_log),
        cmocka_unit_test(no_source_include),
    };
    return cmocka_run_group_tests_name("nvrtc", tests, NULL, NULL);
}
