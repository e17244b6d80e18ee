/*
 * test_segdata.c - segment profiles (tuner/segdata.c): they cover n exactly, are reproducible,
 * have the shapes their names promise; keys and offsets agree; the per-segment reference and
 * the check find a wrong segment and name it; seg_per SPLIT's list holds every segmentation's
 * jobs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/optype.h"
#include "runtime/plan.h"
#include "tuner/segdata.h"

static void profiles_cover_n(void **state)
{
    (void)state;
    const unsigned long long sizes[] = {0, 1, 2, 3, 31, 1000, 100003};
    for (int p = 0; p < segdata_profile_count(); p++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            seg_data d, d2;
            assert_int_equal(segdata_make(p, sizes[i], 42, &d), RT_OK);
            assert_int_equal(segdata_make(p, sizes[i], 42, &d2), RT_OK);
            assert_true(d.nseg >= 1);
            assert_int_equal(d.off[0], 0);
            assert_int_equal(d.off[d.nseg], sizes[i]);
            assert_int_equal(d.nseg, d2.nseg);
            assert_memory_equal(d.off, d2.off, (d.nseg + 1) * sizeof *d.off);
            for (unsigned long long s = 0; s < d.nseg; s++)
                assert_true(d.off[s] <= d.off[s + 1]);
            segdata_free(&d);
            segdata_free(&d2);
        }
}

static void profile_shapes(void **state)
{
    (void)state;
    seg_data d;
    assert_int_equal(segdata_make(segdata_parse_profile("one"), 1000, 1, &d), RT_OK);
    assert_int_equal(d.nseg, 1);
    segdata_free(&d);
    assert_int_equal(segdata_make(segdata_parse_profile("len3"), 1000, 1, &d), RT_OK);
    assert_int_equal(d.nseg, 334);   /* 333 of 3 and the last of 1 */
    assert_int_equal(d.off[333], 999);
    segdata_free(&d);
    assert_int_equal(segdata_make(segdata_parse_profile("rand10_50"), 100000, 1, &d), RT_OK);
    for (unsigned long long s = 0; s + 1 < d.nseg; s++)
        assert_true(d.off[s + 1] - d.off[s] >= 10 && d.off[s + 1] - d.off[s] <= 50);
    assert_true(d.mean > 25 && d.mean < 35);
    segdata_free(&d);
    /* heavy: empty segments at both ends and inside, and some long ones */
    assert_int_equal(segdata_make(segdata_parse_profile("heavy"), 100000, 1, &d), RT_OK);
    assert_int_equal(d.off[1], 0);
    assert_int_equal(d.off[d.nseg - 1], 100000);
    unsigned long long empty = 0, longest = 0;
    for (unsigned long long s = 0; s < d.nseg; s++) {
        unsigned long long len = d.off[s + 1] - d.off[s];
        empty += len == 0;
        longest = len > longest ? len : longest;
    }
    assert_true(empty > d.nseg / 20);
    assert_true(longest > 100);
    assert_true(d.spread > d.mean);
    segdata_free(&d);
    assert_int_equal(segdata_parse_profile("nope"), -1);
    assert_non_null(strstr(segdata_profile_list(), "len1000"));
    assert_int_equal(segdata_parse_layout("keys"), SEG_LAYOUT_KEYS);
    assert_int_equal(segdata_parse_layout("offsets"), SEG_LAYOUT_OFFSETS);
    assert_int_equal(segdata_parse_layout("csr"), -1);
}

static void keys_and_offsets_agree(void **state)
{
    (void)state;
    seg_data d;
    assert_int_equal(segdata_make(segdata_parse_profile("heavy"), 5000, 3, &d), RT_OK);
    uint32_t *keys = malloc(5000 * 4);
    int32_t *o32 = malloc((d.nseg + 1) * 4);
    long long *o64 = malloc((d.nseg + 1) * 8);
    segdata_keys(&d, keys);
    segdata_offsets(&d, o32, 0);
    segdata_offsets(&d, o64, 1);
    for (unsigned long long s = 0; s < d.nseg; s++) {
        assert_int_equal(o32[s], (int32_t)d.off[s]);
        assert_int_equal(o64[s], (long long)d.off[s]);
        for (unsigned long long i = d.off[s]; i < d.off[s + 1]; i++)
            assert_int_equal(keys[i], s);
    }
    for (int i = 1; i < 5000; i++)
        assert_true(keys[i - 1] <= keys[i]);
    size_t bytes;
    void *desc = segdata_descriptor(&d, SEG_LAYOUT_KEYS, 0, &bytes);
    assert_int_equal(bytes, 5000 * 4);
    assert_memory_equal(desc, keys, bytes);
    free(desc);
    desc = segdata_descriptor(&d, SEG_LAYOUT_OFFSETS, 1, &bytes);
    assert_int_equal(bytes, (d.nseg + 1) * 8);
    assert_memory_equal(desc, o64, bytes);
    free(desc);
    free(keys);
    free(o32);
    free(o64);
    segdata_free(&d);
}

static void reference_and_check(void **state)
{
    (void)state;
    seg_data d;
    assert_int_equal(segdata_make(segdata_parse_profile("heavy"), 3000, 9, &d), RT_OK);
    float v[3000];
    for (int i = 0; i < 3000; i++)
        v[i] = (float)((i * 7919) % 101);
    seg_ref *refs;
    assert_int_equal(segdata_reference(v, RT_F32, RT_ARGMIN, &d, &refs, 2), RT_OK);
    size_t acc = optype_acc_size(RT_ARGMIN, RT_F32);
    unsigned char *got = calloc(d.nseg, acc);
    for (unsigned long long s = 0; s < d.nseg; s++) {
        long long idx = -1;
        float best = INFINITY;
        for (unsigned long long i = d.off[s]; i < d.off[s + 1]; i++)
            if (v[i] < best) {
                best = v[i];
                idx = (long long)i;
            }
        memcpy(got + s * acc, &best, 4);
        memcpy(got + s * acc + 8, &idx, 8);
    }
    char why[1024] = "";
    assert_true(segdata_check(got, refs, RT_F32, RT_ARGMIN, &d, why, sizeof why));
    /* the second non-empty segment's index moved by one: named in the message */
    unsigned long long s = 0, seen = 0;
    for (; s < d.nseg; s++)
        if (d.off[s + 1] > d.off[s] && ++seen == 2)
            break;
    long long bad;
    memcpy(&bad, got + s * acc + 8, 8);
    bad++;
    memcpy(got + s * acc + 8, &bad, 8);
    assert_false(segdata_check(got, refs, RT_F32, RT_ARGMIN, &d, why, sizeof why));
    char want[64];
    snprintf(want, sizeof want, "segment %llu of %llu", s, d.nseg);
    if (!strstr(why, want))
        fail_msg("'%s' does not name %s", why, want);
    free(got);
    free(refs);
    segdata_free(&d);
}

/* The outputs are results, optype_res_size apart (var_mean of f16 to f16: 4 bytes, not the
 * 16-byte accumulator); an empty segment's is the empty result (NaN, NaN). */
static void results_of_new_ops(void **state)
{
    (void)state;
    seg_data d;
    assert_int_equal(segdata_make(segdata_parse_profile("heavy"), 5000, 3, &d), RT_OK);
    rt_type spec = RT_RESULT_ELEM(RT_F16);
    uint16_t *v = malloc(5000 * 2);
    assert_non_null(v);
    data_fill(v, spec, RT_VAR_MEAN, 5000, 8, 0, 2);
    seg_ref *refs;
    assert_int_equal(segdata_reference(v, spec, RT_VAR_MEAN, &d, &refs, 2), RT_OK);
    size_t res = optype_res_size(RT_VAR_MEAN, spec);
    assert_int_equal(res, 4);
    unsigned char *got = calloc(d.nseg, res);
    unsigned long long empty = d.nseg, full = d.nseg;
    for (unsigned long long s = 0; s < d.nseg; s++) {
        memcpy(got + s * res, refs[s].value, res);
        if (d.off[s + 1] == d.off[s])
            empty = s;
        else if (d.off[s + 1] - d.off[s] > 3)
            full = s;
    }
    assert_true(empty < d.nseg && full < d.nseg);
    uint16_t nan2[2] = {0x7e00, 0x7e00}, one = 0x3c00;
    assert_true(isnan((double)data_load(got + empty * res, RT_F16)));
    char why[1024] = "";
    assert_true(segdata_check(got, refs, spec, RT_VAR_MEAN, &d, why, sizeof why));
    memcpy(got + empty * res + 2, &one, 2);   /* an empty segment's mean is NaN */
    assert_false(segdata_check(got, refs, spec, RT_VAR_MEAN, &d, why, sizeof why));
    assert_non_null(strstr(why, ", empty)"));
    memcpy(got + empty * res, nan2, 4);
    uint16_t m;
    memcpy(&m, got + full * res + 2, 2);
    m ^= 0x0100;   /* the mean far off */
    memcpy(got + full * res + 2, &m, 2);
    assert_false(segdata_check(got, refs, spec, RT_VAR_MEAN, &d, why, sizeof why));
    char want[64];
    snprintf(want, sizeof want, "segment %llu of %llu", full, d.nseg);
    if (!strstr(why, want))
        fail_msg("'%s' does not name %s", why, want);
    free(got);
    free(refs);
    free(v);
    segdata_free(&d);
}

/* seg_per SPLIT's list (templates/seg_per.cu, per_list_at): the jobs of the segments longer
 * than the threshold, ceil(length / chunk) each. */
static unsigned long long split_jobs(const seg_data *d, unsigned int chunk, unsigned int thr)
{
    unsigned long long jobs = 0;
    for (unsigned long long s = 0; s < d->nseg; s++) {
        unsigned long long len = d->off[s + 1] - d->off[s];
        if (len > thr)
            jobs += (len + chunk - 1) / chunk;
    }
    return jobs;
}

/* The jobs fit the K = n / chunk + min(nseg, n / threshold) + 1 the kernel assumes, and
 * plan_seg_temp_bytes gives the list 16 bytes, K jobs and tickets (to a multiple of 64) and K
 * accumulators: for every profile and for lengths made to fill the list. */
static void split_list_holds_every_job(void **state)
{
    (void)state;
    static const unsigned int chunks[] = {256, 2048, 8192}, thrs[] = {1, 64, 256, 4096, 100000};
    static const unsigned long long sizes[] = {1000, 100003, 1ull << 20};
    for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++)
        for (size_t ti = 0; ti < sizeof thrs / sizeof thrs[0]; ti++) {
            plan p;
            memset(&p, 0, sizeof p);
            p.kind = PLAN_SEGMENTED;
            p.unit = PLAN_UNIT_SEGMENTS;
            p.seg_split = (CUfunction)(uintptr_t)1;   /* never called: the sizes only */
            p.split_chunk[0] = chunks[ci];
            p.split_chunk[1] = thrs[ti];
            p.acc_size = 12;
            for (size_t ni = 0; ni < sizeof sizes / sizeof sizes[0]; ni++) {
                const unsigned long long n = sizes[ni];
                /* Every profile, then lengths of threshold + 1, chunk + 1 and one segment. */
                for (int prof = 0; prof < segdata_profile_count() + 3; prof++) {
                    seg_data d;
                    if (prof < segdata_profile_count()) {
                        assert_int_equal(segdata_make(prof, n, 5 + prof, &d), RT_OK);
                    } else {
                        unsigned long long len = prof == segdata_profile_count() ? thrs[ti] + 1ull
                                               : prof == segdata_profile_count() + 1 ? chunks[ci] + 1ull : n;
                        memset(&d, 0, sizeof d);
                        d.n = n;
                        d.nseg = (n + len - 1) / len;
                        d.off = malloc((d.nseg + 1) * sizeof *d.off);
                        assert_non_null(d.off);
                        for (unsigned long long s = 0; s <= d.nseg; s++)
                            d.off[s] = s * len < n ? s * len : n;
                    }
                    unsigned long long listed = n / thrs[ti];
                    unsigned long long k = n / chunks[ci] + (d.nseg < listed ? d.nseg : listed) + 1;
                    unsigned long long jobs = split_jobs(&d, chunks[ci], thrs[ti]);
                    if (jobs > k)
                        fail_msg("chunk %u, threshold %u, n %llu, profile %d: %llu jobs, K %llu", chunks[ci],
                                 thrs[ti], n, prof, jobs, k);
                    assert_true(plan_seg_temp_bytes(&p, n, d.nseg) >= (16 + k * 20 + 63) / 64 * 64 + k * 12);
                    segdata_free(&d);
                }
            }
        }
}

/* rt_seg_fix's grid: a block per `threads` carries, at most four an SM (none when the SM count
 * is unknown), at least one. */
static void fix_grid(void **state)
{
    (void)state;
    plan p;
    memset(&p, 0, sizeof p);
    p.kind = PLAN_SEGMENTED;
    p.threads = 512;
    p.sm_count = 132;
    assert_int_equal(plan_seg_fix_grid(&p, 2), 1);
    assert_int_equal(plan_seg_fix_grid(&p, 512), 1);
    assert_int_equal(plan_seg_fix_grid(&p, 513), 2);
    assert_int_equal(plan_seg_fix_grid(&p, 5120), 10);   /* 30M elements in 6144-element tiles */
    assert_int_equal(plan_seg_fix_grid(&p, 528ull * 512), 528);
    assert_int_equal(plan_seg_fix_grid(&p, 1ull << 40), 528);
    p.threads = 288;   /* seg_diffwarps P = 8, C = 1 */
    assert_int_equal(plan_seg_fix_grid(&p, 289), 2);
    p.sm_count = 0;
    assert_int_equal(plan_seg_fix_grid(&p, 288ull * 1000), 1000);
}

int test_segdata_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(profiles_cover_n),
        cmocka_unit_test(profile_shapes),
        cmocka_unit_test(keys_and_offsets_agree),
        cmocka_unit_test(reference_and_check),
        cmocka_unit_test(results_of_new_ops),
        cmocka_unit_test(split_list_holds_every_job),
        cmocka_unit_test(fix_grid),
    };
    return cmocka_run_group_tests_name("segdata", tests, NULL, NULL);
}
