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
#include "tests/affine.h"

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

int test_codegen_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(families_parse),
        cmocka_unit_test(config_set_and_format),
        cmocka_unit_test(emit_prelude),
        cmocka_unit_test(emit_helper),
        cmocka_unit_test(hashes),
        cmocka_unit_test(user_operator_legality),
    };
    return cmocka_run_group_tests_name("codegen", tests, NULL, NULL);
}
