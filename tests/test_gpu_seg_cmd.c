/*
 * test_gpu_seg_cmd.c - the redtune program on segmented data on the GPU: the tuner end to end
 * with --segmented (both layouts), and `redtune reduce` on files (flat, keys, offsets, a user
 * operator) against a CPU reference. Skipped, and counted, with no GPU.
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
#include "include/redtune.h"
#include "tests/affine.h"
#include "tests/gpu_util.h"

GPU_UTIL_TEST_STATE
#define NEED_GPU() GPU_UTIL_NEED(have_gpu, no_gpu_why)

static char out_text[1 << 20];

static int run(const char *args)
{
    return gpu_util_run(args, out_text, sizeof out_text);
}

/* The tuner with --segmented, both layouts: every candidate verified, winners stored with
 * their segmentation. */
static void seg_tuner_end_to_end(void **state)
{
    (void)state;
    NEED_GPU();
    char dir[] = "/tmp/redtune-seg-XXXXXX", args[512];
    assert_non_null(mkdtemp(dir));
    const char *layouts[] = {"keys", "offsets"};
    for (int l = 0; l < 2; l++) {
        snprintf(args, sizeof args, "--op min --segmented %s --profiles len3,heavy "
                 "--sizes 100000 --db %s/t.db", layouts[l], dir);
        int rc = run(args);
        if (rc || strstr(out_text, ": wrong:") || strstr(out_text, ": fault:"))
            print_error("%s\n", out_text);
        assert_int_equal(rc, 0);
        assert_null(strstr(out_text, ": wrong:"));
        assert_null(strstr(out_text, ": fault:"));
        char want[64];
        snprintf(want, sizeof want, "best for min f32 %s:len3", layouts[l]);
        assert_non_null(strstr(out_text, want));
        assert_non_null(strstr(out_text, "segments, mean"));
    }
    snprintf(args, sizeof args, "best --db %s/t.db --op min", dir);
    assert_int_equal(run(args), 0);
    assert_non_null(strstr(out_text, "offsets:heavy"));
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

/* ---------------------------------------------------------------- redtune reduce */

static void put_file(const char *dir, const char *name, const void *data, size_t len,
                     char *path, size_t plen)
{
    snprintf(path, plen, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The whole of 'path' (malloc'd), its size in *len. */
static unsigned char *get_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: cannot open", path);
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0, r;
    do {
        if (n == cap)
            assert_non_null(buf = realloc(buf, cap = cap ? 2 * cap : 1 << 16));
        n += r = fread(buf + n, 1, cap - n, f);
    } while (r);
    fclose(f);
    *len = n;
    return buf;
}

/* Run `redtune reduce ARGS`: exit 0 is required. --force: the tests write one -o file over
 * and over. */
static void reduce_ok(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "reduce --force %s", args);
    int rc = run(cmd);
    if (rc)
        fail_msg("redtune %s -> %d:\n%s", cmd, rc, out_text);
}

/* The raw results in 'path': exactly 'count' of 'acc' bytes. */
static unsigned char *get_results(const char *path, unsigned long long count, size_t acc)
{
    size_t len;
    unsigned char *r = get_file(path, &len);
    if (len != count * acc)
        fail_msg("%s: %zu bytes, expected %llu results of %zu bytes", path, len, count, acc);
    return r;
}

#define RN 100003u

/* `redtune reduce` on files through libredtune: flat, keys and offsets (32- and 64-bit), raw
 * (-o) and text output, checked against references computed here by plain loops. The runs
 * use an empty database (the library's built-in defaults, whatever the tree's database
 * holds), and one run the default database's search. Unchecked bad keys: exit 0 and nseg
 * results (an unspecified result, no fault). */
static void seg_reduce_command(void **state)
{
    (void)state;
    NEED_GPU();
    char dir[] = "/tmp/redtune-reduce-XXXXXX", args[2048], db[300], o[300];
    char fi[300], ff[300], fl[300], fk[300], fo[300], fo64[300], fbad[300];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/empty.db", dir);
    snprintf(o, sizeof o, "%s/out.bin", dir);
    snprintf(args, sizeof args, "load -o %s", db);
    assert_int_equal(run(args), 0);

    int32_t *vi = malloc(RN * 4);
    float *vf = malloc(RN * 4);
    int64_t *vl = malloc(RN * 8);
    uint32_t *keys = malloc(RN * 4);
    int32_t *offs = malloc((RN + 1) * 4);
    int64_t *offs64 = malloc((RN + 1) * 8);
    assert_true(vi && vf && vl && keys && offs && offs64);
    for (uint32_t i = 0; i < RN; i++) {
        vi[i] = (int32_t)((i * 7919u) % 2001u) - 1000;
        vf[i] = (float)((i * 131u) % 997u) - 400.0f;   /* many ties: the lowest index wins */
        vl[i] = (int64_t)i * 1000003 - 7;
    }
    /* Keys: segment s has (s * 37) % 13 elements (0 for s = 0, 13, 26, ...: empty). */
    uint32_t nkeys = 0;
    for (uint32_t s = 0, i = 0; i < RN; s++)
        for (uint32_t j = 0; j < (s * 37) % 13 && i < RN; j++)
            keys[i++] = nkeys = s;
    nkeys++;   /* the largest key + 1 */
    /* Offsets: from element 5, segment s has (s * 53) % 17 elements, ending 9 or more before
     * the end (elements outside [offs[0], offs[nseg]) are in no segment). */
    uint32_t noff = 0;
    offs[0] = 5;
    while ((uint32_t)offs[noff] + (noff * 53) % 17 <= RN - 9) {
        offs[noff + 1] = offs[noff] + (int32_t)((noff * 53) % 17);
        noff++;
    }
    for (uint32_t s = 0; s <= noff; s++)
        offs64[s] = offs[s];
    put_file(dir, "vi.bin", vi, RN * 4, fi, sizeof fi);
    put_file(dir, "vf.bin", vf, RN * 4, ff, sizeof ff);
    put_file(dir, "vl.bin", vl, RN * 8, fl, sizeof fl);
    put_file(dir, "keys.bin", keys, RN * 4, fk, sizeof fk);
    put_file(dir, "offs.bin", offs, (noff + 1) * 4, fo, sizeof fo);
    put_file(dir, "offs64.bin", offs64, (noff + 1) * 8, fo64, sizeof fo64);

    /* Flat sum i64, raw. */
    snprintf(args, sizeof args, "--op sum --type i64 --in %s --db %s -o %s", fl, db, o);
    reduce_ok(args);
    uint64_t lsum = 0;
    for (uint32_t i = 0; i < RN; i++)
        lsum += (uint64_t)vl[i];
    unsigned char *r = get_results(o, 1, 8);
    assert_memory_equal(r, &lsum, 8);
    free(r);

    /* Flat argmax f32, text: "value index". */
    snprintf(args, sizeof args, "--op argmax --in %s --db %s", ff, db);
    reduce_ok(args);
    uint32_t best = 0;
    for (uint32_t i = 1; i < RN; i++)
        if (vf[i] > vf[best])
            best = i;
    char want[128];
    snprintf(want, sizeof want, "%.9g %u\n", (double)vf[best], best);
    assert_string_equal(out_text, want);

    /* Keys, sum i32, 3 empty segments after the last key, checked, raw. */
    unsigned long long nseg = nkeys + 3;
    snprintf(args, sizeof args, "--op sum --type i32 --in %s --keys %s --nseg %llu --check "
             "--db %s -o %s", fi, fk, nseg, db, o);
    reduce_ok(args);
    int32_t *isum = calloc(nseg, 4);
    assert_non_null(isum);
    for (uint32_t i = 0; i < RN; i++)
        isum[keys[i]] += vi[i];
    r = get_results(o, nseg, 4);
    for (unsigned long long s = 0; s < nseg; s++) {
        int32_t g;
        memcpy(&g, r + s * 4, 4);
        if (g != isum[s])
            fail_msg("keys sum i32: segment %llu: expected %d, got %d", s, isum[s], g);
    }
    free(r);
    free(isum);

    /* Keys, argmin f32, nseg the largest key + 1, raw {value, index}: empty segments give
     * +inf and index -1. */
    snprintf(args, sizeof args, "--op argmin --in %s --keys %s --db %s -o %s", ff, fk, db, o);
    reduce_ok(args);
    r = get_results(o, nkeys, 16);
    for (uint32_t s = 0, i = 0; s < nkeys; s++) {
        float wv = INFINITY;
        long long wi = -1;
        for (; i < RN && keys[i] == s; i++)
            if (vf[i] < wv)
                wv = vf[i], wi = i;
        rt_arg_f32 g;
        memcpy(&g, r + s * 16, 16);
        if (g.value != wv || g.index != wi)
            fail_msg("keys argmin f32: segment %u: expected %g at %lld, got %g at %lld", s,
                     (double)wv, wi, (double)g.value, g.index);
    }
    free(r);

    /* Offsets (i32), max i32, checked, text: one line per segment, INT_MIN when empty. */
    snprintf(args, sizeof args, "--op max --type i32 --in %s --offsets %s --nseg %u --check "
             "--db %s", fi, fo, noff, db);
    reduce_ok(args);
    const char *line = out_text;
    for (uint32_t s = 0; s < noff; s++) {
        int32_t w = INT32_MIN;
        for (int32_t i = offs[s]; i < offs[s + 1]; i++)
            w = vi[i] > w ? vi[i] : w;
        char *end;
        long g = strtol(line, &end, 10);
        if (end == line || *end != '\n' || g != w)
            fail_msg("offsets max i32: segment %u: expected %d, got line \"%.20s\"", s, w, line);
        line = end + 1;
    }
    assert_int_equal(*line, '\0');

    /* Offsets (--off64), sum u64, checked, --explain first, raw. */
    snprintf(args, sizeof args, "--op sum --type u64 --in %s --offsets %s --off64 --check "
             "--explain --db %s -o %s", fl, fo64, db, o);
    reduce_ok(args);
    if (!strstr(out_text, "plan segmented"))
        fail_msg("--explain printed:\n%s", out_text);
    r = get_results(o, noff, 8);
    for (uint32_t s = 0; s < noff; s++) {
        uint64_t w = 0, g;
        for (int64_t i = offs64[s]; i < offs64[s + 1]; i++)
            w += (uint64_t)vl[i];
        memcpy(&g, r + s * 8, 8);
        if (g != w)
            fail_msg("offsets sum u64: segment %u: expected %llu, got %llu", s,
                     (unsigned long long)w, (unsigned long long)g);
    }
    free(r);

    /* Offsets that spread (999 one-element segments, then one of the rest): the command
     * passes RT_SEG_SKEWED, which --explain names; the uniform offsets above passed
     * RT_SEG_UNIFORM. */
    assert_null(strstr(out_text, "skewed"));
    if (!strstr(out_text, "uniform (no long-segment list)"))
        fail_msg("--explain printed:\n%s", out_text);
    int32_t skew[1001];
    for (int s = 0; s < 1000; s++)
        skew[s] = s;
    skew[1000] = (int32_t)RN;
    char fsk[300];
    put_file(dir, "skew.bin", skew, sizeof skew, fsk, sizeof fsk);
    snprintf(args, sizeof args, "--op max --type i32 --in %s --offsets %s --explain --db %s "
             "-o %s --force", fi, fsk, db, o);
    reduce_ok(args);
    if (!strstr(out_text, "skewed (load-balanced kernels only)"))
        fail_msg("--explain printed:\n%s", out_text);
    r = get_results(o, 1000, 4);
    for (uint32_t s = 0; s < 1000; s++) {
        int32_t w = INT32_MIN, g;
        for (int32_t i = skew[s]; i < skew[s + 1]; i++)
            w = vi[i] > w ? vi[i] : w;
        memcpy(&g, r + s * 4, 4);
        if (g != w)
            fail_msg("skewed offsets max i32: segment %u: expected %d, got %d", s, w, g);
    }
    free(r);

    /* A user operator from its file (affine maps: order matters), registered on the context:
     * flat and offsets (--off64), raw, against left-to-right loops. */
    uint64_t *va = malloc(RN * 8);
    assert_non_null(va);
    for (uint32_t i = 0; i < RN; i++)
        va[i] = (uint64_t)vl[i] | (1ULL << 32);
    char fa[300];
    put_file(dir, "va.bin", va, RN * 8, fa, sizeof fa);
    snprintf(args, sizeof args, "--op-file lua/ops/affine.lua --in %s --db %s -o %s --explain",
             fa, db, o);
    reduce_ok(args);
    if (!strstr(out_text, "affine u64 (user operator, definition "))
        fail_msg("--explain printed:\n%s", out_text);
    uint64_t aw = 0x100000000ULL;
    for (uint32_t i = 0; i < RN; i++)
        aw = affine_combine(aw, va[i]);
    r = get_results(o, 1, 8);
    assert_memory_equal(r, &aw, 8);
    free(r);
    snprintf(args, sizeof args, "--op-file lua/ops/affine.lua --in %s --offsets %s --off64 "
             "--check --db %s -o %s", fa, fo64, db, o);
    reduce_ok(args);
    r = get_results(o, noff, 8);
    for (uint32_t s = 0; s < noff; s++) {
        uint64_t w = 0x100000000ULL, g;
        for (int64_t i = offs64[s]; i < offs64[s + 1]; i++)
            w = affine_combine(w, va[i]);
        memcpy(&g, r + s * 8, 8);
        if (g != w)
            fail_msg("offsets affine: segment %u: expected %016llx, got %016llx", s,
                     (unsigned long long)w, (unsigned long long)g);
    }
    free(r);
    free(va);

    /* The default database (libredtune's search: $REDTUNE_DB, ./redtune.db, build/redtune.db
     * beside the program), flat min i32, text. */
    snprintf(args, sizeof args, "--op min --type i32 --in %s", fi);
    reduce_ok(args);
    int32_t imin = vi[0];
    for (uint32_t i = 1; i < RN; i++)
        imin = vi[i] < imin ? vi[i] : imin;
    snprintf(want, sizeof want, "%d\n", imin);
    assert_string_equal(out_text, want);

    /* Unchecked bad keys (unsorted, some >= nseg): exit 0 with nseg results, no fault. */
    for (uint32_t i = 0; i < RN; i++)
        keys[i] = (i * 2654435761u) % 50u;
    put_file(dir, "bad.bin", keys, RN * 4, fbad, sizeof fbad);
    snprintf(args, sizeof args, "--op sum --type i32 --in %s --keys %s --nseg 20 --db %s -o %s",
             fi, fbad, db, o);
    reduce_ok(args);
    free(get_results(o, 20, 4));
    snprintf(args, sizeof args, "reduce --op sum --type i32 --in %s --keys %s --nseg 20 --check "
             "--db %s -o %s", fi, fbad, db, o);
    assert_int_equal(run(args), 4);

    free(vi);
    free(vf);
    free(vl);
    free(keys);
    free(offs);
    free(offs64);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

int test_gpu_seg_cmd_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seg_tuner_end_to_end),
        cmocka_unit_test(seg_reduce_command),
    };
    return cmocka_run_group_tests_name("gpu_seg_cmd", tests, gpu_setup, NULL);
}
