/*
 * test_space_layout.c - the spaces by layout (tuner/space.c): the axis space on every default
 * shape, the layout filter (@plan axis families for axis cases only), the shape fields an
 * axis case gives Lua, and seg_lb's FAST in the segmented spaces. Run from the source top.
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
#include "tuner/space.h"
#include "tests/space_util.h"

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
                             types[t].type, space_err.msg);
                /* A few hundred a shape at most (the columns' chunks of 256 to 4096 rows
                 * and their interleaved splits take 1x32768x1024 to 795): a sampled or
                 * exhaustive run stays minutes. */
                if (n < 1 || n > 800)
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
                        /* Splits of 131072 elements only with the interleaved rounds. */
                        if (get(&v[i], "CHUNK") == 131072)
                            assert_int_equal(get(&v[i], "IL"), 1);
                    } else {
                        long long TX = get(&v[i], "TX"), CV = get(&v[i], "CV");
                        assert_true((unsigned long long)(TX * CV) <= 2 * sh->inner
                                    && CV * types[t].size <= 16);
                        /* One interleaved walk, IL = 2 (unsplit: IL = 1's code), for
                         * commutative operators; tiles narrower than a row only split
                         * (CHUNK >= 1024) with U >= 2. */
                        long long IL = get(&v[i], "IL"), U = get(&v[i], "U"),
                                  CHUNK = get(&v[i], "CHUNK");
                        assert_true(IL == 0 || (IL == 2 && commutes));
                        if (IL == 2 && (unsigned long long)(TX * CV) < sh->inner)
                            assert_true(CHUNK >= 1024 && U >= 2);
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
        fail_msg("%s", space_err.msg);
    assert_int_equal(n, 1);
    free(v);
}

int test_space_layout_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axis_space),
        cmocka_unit_test(test_axis_layout_filter),
        cmocka_unit_test(test_axis_case_fields),
        cmocka_unit_test(test_seg_fast),
    };
    return cmocka_run_group_tests_name("space_layout", tests, NULL, NULL);
}
