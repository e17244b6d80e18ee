/*
 * test_gpu_seg.c - every segmented family on the GPU, for every layout it implements, every
 * op and type, every segment profile, at n = 0, 1, 31, 1000, 4097 and 2^20 + 3 (not a multiple
 * of any tile), with guard outputs after the last segment; nseg = 0; order kept with a
 * non-commutative operator (affine maps); the new types and operators through rt_reduce_keys
 * and rt_reduce_offsets with the built-in default (rt_seg_final), with empty segments,
 * against tests/typeref.h. The redtune program with --segmented and `redtune reduce` are in
 * test_gpu_seg_cmd.c. Skipped, and counted, with no GPU.
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
#include <sys/wait.h>
#include <unistd.h>
#include "runtime/codegen.h"
#include "runtime/driver.h"
#include "runtime/nvrtc.h"
#include "runtime/optype.h"
#include "runtime/plan.h"
#include "tuner/data.h"
#include "tuner/pool.h"
#include "tuner/segdata.h"
#include "tuner/tuner.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/affine.h"
#include "tests/gpu_util.h"
#include "tests/typeref.h"

GPU_UTIL_TEST_STATE
#define NEED_GPU() GPU_UTIL_NEED(have_gpu, no_gpu_why)

/* The shapes each family runs; LAYOUT and OFF64 are set per layout. */
static const char *const variants[][8] = {
    {"seg_lb", "B=256", "R=8", "STAGE=1", "PERSIST=0"},
    {"seg_lb", "B=128", "R=3", "STAGE=0", "PERSIST=1"},
    {"seg_lb", "B=512", "R=8", "STAGE=0", "PERSIST=0"},
    {"seg_lb", "B=512", "R=16", "STAGE=0", "OST=1", "KW=1"},   /* KW (and OST): keys only */
    {"seg_lb", "B=256", "R=8", "V=4", "STAGE=0", "KW=2"},   /* the keys walk in 32 bits */
    /* 4096 f64 outputs staged; R = 12: three vectors a thread */
    {"seg_lb", "B=512", "R=8", "STAGE=0", "OST=1", "KW=2", "MINB=3"},
    {"seg_lb", "B=512", "R=12", "V=4", "STAGE=0", "OST=1", "KW=2", "MINB=3"},
    {"seg_lb", "B=128", "R=3", "STAGE=0", "OST=2", "KW=2", "PERSIST=1"},   /* a prefilled stage */
    {"seg_lb", "MP=0", "FAST=1", "B=256", "R=16", "V=2"},   /* FAST: offsets only */
    {"seg_lb", "FAST=1", "B=128", "R=16", "V=2", "PERSIST=1"},
    {"seg_stream", "B=256", "R=16", "V=4"},            /* offsets only */
    {"seg_stream", "B=512", "R=8", "V=2", "WS=1", "MINW=24"},
    {"seg_stream", "B=128", "R=8", "V=1", "WS=3", "PF=0"},     /* a window of 32: dense tiles take the slow path */
    {"seg_stream", "B=256", "R=8", "V=2", "CH=2"},     /* a block per two tiles a warp */
    {"seg_mark", "B=256", "R=16", "V=4"},              /* offsets only */
    {"seg_mark", "B=128", "R=8", "V=1", "J=1", "CH=3"},   /* a window of 128: dense tiles read starts from global memory */
    {"seg_mark", "B=128", "R=16", "V=4", "CH=8", "NZ=1"},   /* float min, max: rt_fold_nz in the walk */
    {"seg_mark", "B=128", "R=12", "V=4", "J=1", "CH=3", "MP=1"},   /* the marks padded */
    {"seg_mark", "B=128", "R=16", "V=4", "CH=8", "J=8", "NZ=1", "OST=1"},   /* outputs through shared memory */
    {"seg_mark", "B=256", "R=32", "V=4", "J=1", "CH=2", "OST=1"},   /* dense tiles past the buffer */
    {"seg_mark", "B=32", "R=16", "V=4", "CH=8", "J=8", "NZ=1", "MP=1"},   /* a block of one warp */
    {"seg_mark", "B=128", "R=6", "V=2", "CH=3", "J=1", "IL=2"},   /* the walk's halves side by side */
    {"seg_pipe", "B=256", "SEGS=2", "V=4", "H=4"},     /* offsets only; the first 4 without a branch */
    {"seg_pipe", "B=128", "SEGS=3", "V=1", "KB=1", "LONG=16"},   /* 1 KB stages; over 16 elements: the block's */
    {"seg_pipe", "B=128", "SEGS=2", "V=4", "LANES=4"},   /* four lanes a segment */
    {"seg_pipe", "B=128", "SEGS=8", "V=4", "NZ=1"},   /* float min, max: rt_fold_nz */
    {"seg_per", "B=256", "LANES=1", "V=1"},
    {"seg_per", "B=128", "LANES=4", "V=3"},
    {"seg_per", "B=256", "LANES=32", "V=4"},
    {"seg_per", "B=256", "LANES=256", "V=2"},
    {"seg_per", "B=256", "LANES=1", "STAGE=1", "V=4"},
    {"seg_per", "B=64", "LANES=1", "STAGE=1", "V=1"},   /* 32-element chunks */
    {"seg_per", "B=256", "LANES=1", "STAGE=2", "V=2"},   /* 8-byte copies of 4-byte types */
    {"seg_per", "B=1024", "LANES=1", "STAGE=2", "V=1"},  /* 320-element windows of 4-byte types */
    {"seg_per", "B=256", "LANES=1", "STAGE=2", "V=4", "NZ=1"},   /* rt_fold_nz from the window */
    {"seg_per", "B=256", "LANES=1", "STAGE=2", "V=4", "WIN=1"},   /* 32-element windows: a span in many */
    {"seg_per", "B=32", "LANES=1", "STAGE=2", "V=4", "GRID=1"},   /* a block an SM loops over the tiles */
    {"seg_per", "B=64", "LANES=1", "STAGE=2", "V=1", "LONG=3"},   /* warps with a long segment load directly */
    {"seg_per", "B=128", "LANES=1", "STAGE=2", "V=3"},   /* 12- and 24-byte vectors: plain copies */
    {"seg_per", "B=128", "LANES=4", "V=2", "LONG=1"},   /* over 8 elements: the block's walk */
    {"seg_per", "B=64", "LANES=1", "V=1", "LONG=3"},
    {"seg_per", "B=128", "LANES=4", "LONG=1", "SPLIT=256"},   /* over 256 elements: the grid's chunks */
    {"seg_per", "B=64", "LANES=1", "STAGE=2", "LONG=3", "SPLIT=512"},
    {"seg_per", "B=128", "LANES=1", "V=2", "SEGS=4"},   /* four segments a lane */
    {"seg_per", "B=64", "LANES=1", "V=1", "SEGS=3", "LONG=2"},
    {"seg_per", "B=256", "LANES=32", "V=4", "U=4"},   /* four rounds a lane, one tree a segment */
    {"seg_per", "B=128", "LANES=128", "V=3", "U=2"},
    {"seg_matrix", "B=256", "H=128", "W=16", "PAD=1", "PERSIST=0"},
    {"seg_matrix", "B=128", "H=64", "W=7", "PAD=0", "PERSIST=1"},
    {"seg_tb2", "B=256", "R=2", "PAD=1"},
    {"seg_tb2", "B=128", "R=1", "PAD=0"},
    {"seg_tb4warp", "B=256", "R=4"},
    {"seg_tb4warp", "B=64", "R=3"},
    {"seg_diffwarps", "P=8", "C=1", "W=32", "PAD=1"},   /* the paper's DiffWarps */
    {"seg_diffwarps", "P=8", "C=1", "W=16", "PAD=1"},   /* DiffWarps16 */
    {"seg_diffwarps", "P=3", "C=2", "W=7", "PAD=0"},    /* 448-element tiles, 96 producers */
};
#define NVARIANTS (int)(sizeof variants / sizeof variants[0])

/* The variants that implement 'layout' (with off64 for offsets); *n receives how many. */
static void make_configs(int layout, int off64, rt_config *cfgs, int *n, char names[][300])
{
    *n = 0;
    for (int v = 0; v < NVARIANTS; v++) {
        const rt_family *f = family_find(variants[v][0]);
        if (!f)
            fail_msg("family %s is not built in", variants[v][0]);
        if (!(f->layouts & (layout == SEG_LAYOUT_KEYS ? FAMILY_LAYOUT_KEYS : FAMILY_LAYOUT_OFFSETS)))
            continue;
        /* seg_lb's FAST = 1 is ignored for keys and KW = 1 and 2 for offsets: no second run
         * of a shape */
        int fast = 0, kw = 0;
        for (int k = 1; k < 8 && variants[v][k]; k++) {
            fast |= !strcmp(variants[v][k], "FAST=1");
            kw |= !strcmp(variants[v][k], "KW=1") || !strcmp(variants[v][k], "KW=2");
        }
        if ((fast && layout == SEG_LAYOUT_KEYS) || (kw && layout != SEG_LAYOUT_KEYS))
            continue;
        rt_config *c = &cfgs[*n];
        config_default(f, c);
        rt_err e;
        for (int k = 1; k < 8 && variants[v][k]; k++) {
            char name[16];
            const char *eq = strchr(variants[v][k], '=');
            snprintf(name, sizeof name, "%.*s", (int)(eq - variants[v][k]), variants[v][k]);
            if (config_set(c, name, atoll(eq + 1), &e))
                fail_msg("%s", e.msg);
        }
        config_force_layout(c, layout, off64);
        char params[256];
        config_format(c, params, sizeof params);
        snprintf(names[*n], 300, "%s %s", f->name, params);
        (*n)++;
    }
}

/* Upload the keys or offsets of 'd' into 'seg' (large enough). */
static void upload(const seg_data *d, int layout, int off64, CUdeviceptr seg)
{
    size_t bytes;
    void *h = segdata_descriptor(d, layout, off64, &bytes);
    assert_non_null(h);
    assert_int_equal(cu.MemcpyHtoD(seg, h, bytes), CUDA_SUCCESS);
    free(h);
}

#define NMAX ((1ull << 20) + 3)
#define GUARD 64

/* Every third segment (0, 3, 6, ..) made all NaN, in turn the quiet NaN, a negative one and
 * the bits of the kernels' empty marker (runtime/codegen.c: data must not forge "empty"):
 * float min/max must give NaN there, and +-inf only for empty segments. */
static void plant_nan_segments(void *host, rt_type type, const seg_data *d)
{
    static const uint32_t p32[3] = {0x7fc00000u, 0xffc00001u, 0x7fbfffffu};
    static const uint64_t p64[3] = {0x7ff8000000000000ull, 0xfff8000000000001ull, 0x7ff7ffffffffffffull};
    size_t es = optype_size(type);
    for (unsigned long long s = 0; s < d->nseg; s += 3)
        for (unsigned long long i = d->off[s]; i < d->off[s + 1]; i++)
            memcpy((char *)host + i * es, type == RT_F32 ? (const void *)&p32[s / 3 % 3]
                                                         : (const void *)&p64[s / 3 % 3], es);
}

/* The device and host buffers a test of this file allocates, given back. */
static void free_buffers(CUdeviceptr in, CUdeviceptr seg, CUdeviceptr out, CUdeviceptr temp,
                         void *host, void *got)
{
    cu.MemFree(in);
    cu.MemFree(seg);
    cu.MemFree(out);
    cu.MemFree(temp);
    free(host);
    free(got);
}

/* nan_segs: plant_nan_segments before the reference (float min/max). */
static void check_layout(rt_op op, rt_type type, int layout, int off64, int nan_segs)
{
    NEED_GPU();
    rt_err e;
    rt_config cfgs[NVARIANTS];
    char names[NVARIANTS][300];
    int nv;
    make_configs(layout, off64, cfgs, &nv, names);
    assert_true(nv >= 4);
    cand *c;
    int compiled, failed;
    assert_int_equal(cands_make(cfgs, nv, op, type, &c, &e), RT_OK);
    assert_int_equal(cands_compile(c, nv, arch, pool_cores(), NULL, &compiled, &failed, &e), RT_OK);
    for (int v = 0; v < nv; v++)
        if (c[v].rc)
            fail_msg("%s does not compile: %s", names[v], c[v].err);
    size_t acc = optype_acc_size(op, type), es = optype_size(type);
    plan p[NVARIANTS];
    for (int v = 0; v < nv; v++)
        if (plan_load(&p[v], c[v].cubin, PLAN_SEGMENTED, acc, dev.sm_count, &e))
            fail_msg("%s: %s", names[v], e.msg);
    const unsigned long long sizes[] = {0, 1, 31, 1000, 4097, NMAX};
    void *host = malloc(NMAX * es + 16);
    unsigned char *got = malloc((NMAX + 16 + GUARD) * acc);
    assert_non_null(host);
    assert_non_null(got);
    CUdeviceptr in, seg, out, temp;
    size_t temp_bytes = 64u << 20;
    assert_int_equal(cu.MemAlloc(&in, NMAX * es + 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&seg, (NMAX + 16) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, (NMAX + 16 + GUARD) * acc), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&temp, temp_bytes), CUDA_SUCCESS);
    int threads = pool_cores();
    for (int prof = 0; prof < segdata_profile_count(); prof++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            unsigned long long n = sizes[si];
            if (gpu_util_small() && n > 5000)
                continue;
            seg_data d;
            seg_ref *refs;
            assert_int_equal(segdata_make(prof, n, 31 * prof + si, &d), RT_OK);
            data_fill(host, type, op, n ? n : 1, 500 + prof * 10 + si, n / 3, threads);
            if (nan_segs)
                plant_nan_segments(host, type, &d);
            assert_int_equal(segdata_reference(host, type, op, &d, &refs, threads), RT_OK);
            if (n)
                assert_int_equal(cu.MemcpyHtoD(in, host, n * es), CUDA_SUCCESS);
            upload(&d, layout, off64, seg);
            for (int v = 0; v < nv; v++) {
                assert_true(plan_seg_temp_bytes(&p[v], n, d.nseg) <= temp_bytes);
                assert_int_equal(cu.MemsetD8(out, 0xa5, (d.nseg + GUARD) * acc), CUDA_SUCCESS);
                int rc = plan_seg_launch(&p[v], in, seg, n, d.nseg, out, temp, stream, &e);
                CUresult r = rc ? CUDA_SUCCESS : cu.StreamSynchronize(stream);
                if (rc || r != CUDA_SUCCESS)
                    fail_msg("%s %s n=%llu: %s (%d)", names[v], segdata_profile_name(prof), n,
                             rc ? e.msg : "launch failed", (int)r);
                assert_int_equal(cu.MemcpyDtoH(got, out, (d.nseg + GUARD) * acc), CUDA_SUCCESS);
                char why[1024];
                if (!segdata_check(got, refs, type, op, &d, why, sizeof why))
                    fail_msg("%s %s %s n=%llu: %s", names[v], rt_op_name(op),
                             segdata_profile_name(prof), n, why);
                for (size_t b = d.nseg * acc; b < (d.nseg + GUARD) * acc; b++)
                    if (got[b] != 0xa5)
                        fail_msg("%s %s n=%llu nseg=%llu: wrote past the last output (byte %zu)",
                                 names[v], segdata_profile_name(prof), n, d.nseg, b);
            }
            free(refs);
            segdata_free(&d);
        }
    /* nseg = 0: nothing is launched and nothing written. */
    assert_int_equal(cu.MemsetD8(out, 0xa5, GUARD * acc), CUDA_SUCCESS);
    for (int v = 0; v < nv; v++) {
        assert_int_equal(plan_seg_launch_count(&p[v], 1000, 0), 0);
        assert_int_equal(plan_seg_launch(&p[v], in, seg, 1000, 0, out, temp, stream, &e), RT_OK);
    }
    assert_int_equal(cu.StreamSynchronize(stream), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(got, out, GUARD * acc), CUDA_SUCCESS);
    for (size_t b = 0; b < GUARD * acc; b++)
        assert_int_equal(got[b], 0xa5);
    for (int v = 0; v < nv; v++)
        plan_unload(&p[v]);
    free_buffers(in, seg, out, temp, host, got);
    cands_free(c, nv);
}

#define SEG_TEST(op, type)                                                                   \
    static void seg_##op##_##type(void **state)                                             \
    {                                                                                        \
        (void)state;                                                                         \
        check_layout(op, type, SEG_LAYOUT_KEYS, 0, 0);                                       \
        check_layout(op, type, SEG_LAYOUT_OFFSETS, type == RT_I64 || type == RT_U64, 0);     \
    }
#define FOR_TYPES(op) SEG_TEST(op, RT_F32) SEG_TEST(op, RT_F64) SEG_TEST(op, RT_I32) \
    SEG_TEST(op, RT_U32) SEG_TEST(op, RT_I64) SEG_TEST(op, RT_U64)
FOR_TYPES(RT_SUM)
FOR_TYPES(RT_PROD)
FOR_TYPES(RT_MIN)
FOR_TYPES(RT_MAX)
FOR_TYPES(RT_ARGMIN)
FOR_TYPES(RT_ARGMAX)

/* Float min/max: segments that are all NaN give NaN (not +-inf, which only empty segments
 * give), every family, layout, profile and size, 32- and 64-bit offsets. */
#define SEG_NAN_TEST(op, type)                                                               \
    static void seg_all_nan_##op##_##type(void **state)                                     \
    {                                                                                        \
        (void)state;                                                                         \
        check_layout(op, type, SEG_LAYOUT_KEYS, 0, 1);                                       \
        check_layout(op, type, SEG_LAYOUT_OFFSETS, type == RT_F64, 1);                       \
    }
SEG_NAN_TEST(RT_MIN, RT_F32)
SEG_NAN_TEST(RT_MAX, RT_F32)
SEG_NAN_TEST(RT_MIN, RT_F64)
SEG_NAN_TEST(RT_MAX, RT_F64)

/* Order kept: every segmented family composes the affine maps of each segment exactly as a
 * left-to-right loop does, for every profile, both layouts. */
static void seg_order_kept(void **state)
{
    (void)state;
    NEED_GPU();
    rt_err e;
    int threads = pool_cores();
    uint64_t *host = malloc(NMAX * 8), *got = malloc((NMAX + 16) * 8);
    uint64_t *want = malloc((NMAX + 16) * 8);
    CUdeviceptr in, seg, out, temp;
    assert_int_equal(cu.MemAlloc(&in, NMAX * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&seg, (NMAX + 16) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, (NMAX + 16) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&temp, 64u << 20), CUDA_SUCCESS);
    for (int layout = SEG_LAYOUT_KEYS; layout <= SEG_LAYOUT_OFFSETS; layout++) {
        rt_config cfgs[NVARIANTS];
        char names[NVARIANTS][300];
        int nv;
        make_configs(layout, 0, cfgs, &nv, names);
        plan p[NVARIANTS];
        for (int v = 0; v < nv; v++) {
            char *src;
            nvrtc_output o;
            assert_int_equal(codegen_emit_user(&cfgs[v], &affine_op, &src, &e), RT_OK);
            int rc = nvrtc_compile(src, "affine.cu", arch, &o, &e);
            free(src);
            if (rc)
                fail_msg("%s: %s", names[v], e.msg);
            assert_int_equal(plan_load(&p[v], o.cubin, PLAN_SEGMENTED, 8, dev.sm_count, &e), RT_OK);
            nvrtc_output_free(&o);
        }
        for (int prof = 0; prof < segdata_profile_count(); prof++) {
            const unsigned long long sizes[] = {1, 4097, NMAX};
            for (int si = 0; si < 3; si++) {
                unsigned long long n = sizes[si];
                if (gpu_util_small() && n > 5000)
                    continue;
                seg_data d;
                assert_int_equal(segdata_make(prof, n, 7 + prof, &d), RT_OK);
                data_fill(host, RT_U64, RT_SUM, n, 99 + si, 0, threads);
                for (unsigned long long s = 0; s < d.nseg; s++) {
                    uint64_t w = 0x100000000ULL;
                    for (unsigned long long i = d.off[s]; i < d.off[s + 1]; i++)
                        w = affine_combine(w, host[i]);
                    want[s] = w;
                }
                assert_int_equal(cu.MemcpyHtoD(in, host, n * 8), CUDA_SUCCESS);
                upload(&d, layout, 0, seg);
                for (int v = 0; v < nv; v++) {
                    assert_int_equal(plan_seg_launch(&p[v], in, seg, n, d.nseg, out, temp, stream, &e), RT_OK);
                    assert_int_equal(cu.StreamSynchronize(stream), CUDA_SUCCESS);
                    assert_int_equal(cu.MemcpyDtoH(got, out, d.nseg * 8), CUDA_SUCCESS);
                    for (unsigned long long s = 0; s < d.nseg; s++)
                        if (got[s] != want[s])
                            fail_msg("%s %s n=%llu: segment %llu (elements %llu..%llu): expected "
                                     "%016llx, got %016llx", names[v], segdata_profile_name(prof),
                                     n, s, d.off[s], d.off[s + 1], (unsigned long long)want[s],
                                     (unsigned long long)got[s]);
                }
                segdata_free(&d);
            }
        }
        for (int v = 0; v < nv; v++)
            plan_unload(&p[v]);
    }
    free_buffers(in, seg, out, temp, host, got);
    free(want);
}

/* seg_per's long segments (LONG; with SPLIT the grid's chunks) walked from an input that is
 * not 16-byte aligned (one element past an allocation): the walk's scalar loads, i32 sum
 * (exact) and f32 min, every profile at 2^20 + 3 (heavy: segments of thousands of elements
 * among short ones). */
static void seg_per_long_unaligned(void **state)
{
    (void)state;
    NEED_GPU();
    static const char *const params[] = {"B=128 LANES=1 V=1 LONG=2", "B=256 LANES=4 V=1 LONG=1",
                                         "B=128 LANES=1 V=1 LONG=2 SPLIT=256"};
    static const struct { rt_op op; rt_type type; } cases[] = {{RT_SUM, RT_I32}, {RT_MIN, RT_F32}};
    const rt_family *f = family_find("seg_per");
    assert_non_null(f);
    rt_err e;
    int threads = pool_cores();
    const unsigned long long n = gpu_util_small() ? 4097 : NMAX;
    CUdeviceptr in, seg, out, temp;
    assert_int_equal(cu.MemAlloc(&in, (n + 16) * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&seg, (n + 16) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, (n + 16) * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&temp, 64u << 20), CUDA_SUCCESS);
    void *host = malloc((n + 1) * 4), *got = malloc((n + 16) * 4);
    assert_non_null(host);
    assert_non_null(got);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (size_t pi = 0; pi < sizeof params / sizeof params[0]; pi++) {
            rt_config cfg;
            config_default(f, &cfg);
            assert_int_equal(config_parse(f, params[pi], &cfg, &e), RT_OK);
            config_force_layout(&cfg, SEG_LAYOUT_OFFSETS, 0);
            cand *c;
            int compiled, failed;
            assert_int_equal(cands_make(&cfg, 1, cases[ci].op, cases[ci].type, &c, &e), RT_OK);
            assert_int_equal(cands_compile(c, 1, arch, 1, NULL, &compiled, &failed, &e), RT_OK);
            if (c[0].rc)
                fail_msg("seg_per %s does not compile: %s", params[pi], c[0].err);
            plan p;
            if (plan_load(&p, c[0].cubin, PLAN_SEGMENTED, 4, dev.sm_count, &e))
                fail_msg("seg_per %s: %s", params[pi], e.msg);
            for (int prof = 0; prof < segdata_profile_count(); prof++) {
                seg_data d;
                seg_ref *refs;
                assert_int_equal(segdata_make(prof, n, 41 + prof, &d), RT_OK);
                data_fill(host, cases[ci].type, cases[ci].op, n, 77 + prof, n / 3, threads);
                assert_int_equal(segdata_reference(host, cases[ci].type, cases[ci].op, &d, &refs,
                                                   threads), RT_OK);
                assert_int_equal(cu.MemcpyHtoD(in + 4, host, n * 4), CUDA_SUCCESS);
                upload(&d, SEG_LAYOUT_OFFSETS, 0, seg);
                if (plan_seg_launch(&p, in + 4, seg, n, d.nseg, out, temp, stream, &e)
                    || cu.StreamSynchronize(stream) != CUDA_SUCCESS)
                    fail_msg("seg_per %s %s: launch failed: %s", params[pi],
                             segdata_profile_name(prof), e.msg);
                assert_int_equal(cu.MemcpyDtoH(got, out, d.nseg * 4), CUDA_SUCCESS);
                char why[1024];
                if (!segdata_check(got, refs, cases[ci].type, cases[ci].op, &d, why, sizeof why))
                    fail_msg("seg_per %s %s %s, input 4 bytes past 16-byte alignment: %s",
                             params[pi], rt_op_name(cases[ci].op), segdata_profile_name(prof), why);
                free(refs);
                segdata_free(&d);
            }
            plan_unload(&p);
            cands_free(c, 1);
        }
    free_buffers(in, seg, out, temp, host, got);
}

static int cmp_u32(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

/* nseg segments over n elements: random cuts, with every seventh segment forced empty. */
static void types_segments(unsigned long long n, unsigned long long nseg, unsigned *offs,
                           unsigned *keys, unsigned seed)
{
    unsigned long long x = seed * 2654435761ull + 1;
    offs[0] = 0;
    offs[nseg] = (unsigned)n;
    for (unsigned long long s = 1; s < nseg; s++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        offs[s] = (unsigned)((x >> 20) % (n + 1));
    }
    qsort(offs + 1, nseg - 1, sizeof *offs, cmp_u32);
    for (unsigned long long s = 1; s < nseg; s++)
        if (s % 7 == 3)
            offs[s] = offs[s - 1];
    for (unsigned long long s = 0; s < nseg; s++)
        for (unsigned i = offs[s]; i < offs[s + 1]; i++)
            keys[i] = (unsigned)s;
}

/* One segmented case by keys (layout 1) or offsets (2); 0 when right, else 1 (printed). A
 * guard result after the last segment must stay untouched. */
static int types_seg_one(rt_ctx *ctx, int layout, rt_op op, rt_type spec, int kind,
                         unsigned long long n, unsigned long long nseg, unsigned char *host,
                         unsigned *offs, unsigned *keys, unsigned char *got, CUdeviceptr in,
                         CUdeviceptr seg, CUdeviceptr out)
{
    size_t es = optype_size(spec), rs = optype_res_size(op, spec);
    char why[512], tn[96];
    int bad = 0;
    optype_spec_text(op, spec, tn, sizeof tn);
    tr_fill(optype_elem(spec), kind, host, n, (unsigned)(n + nseg * 3 + op * 7 + kind));
    types_segments(n, nseg, offs, keys, (unsigned)(n ^ nseg));
    if ((n && cu.MemcpyHtoD(in, host, n * es) != CUDA_SUCCESS)
        || cu.MemcpyHtoD(seg, layout == 1 ? keys : offs,
                         (layout == 1 ? n : nseg + 1) * 4 + 4) != CUDA_SUCCESS
        || cu.MemsetD8(out, 0xa5, (nseg + 1) * rs) != CUDA_SUCCESS
        || cu.CtxSynchronize() != CUDA_SUCCESS)
        return print_error("upload failed\n"), 1;
    const void *din = (const void *)(uintptr_t)in;
    void *dout = (void *)(uintptr_t)out;
    int rc = layout == 1
        ? rt_reduce_keys(ctx, op, spec, din, (const unsigned *)(uintptr_t)seg, n, nseg, dout,
                         stream, 0)
        : rt_reduce_offsets(ctx, op, spec, din, n, (const void *)(uintptr_t)seg, nseg, dout,
                            stream, 0);
    if (rc) {
        print_error("%s %s %s n=%llu nseg=%llu: %s: %s\n", layout == 1 ? "keys" : "offsets",
                    rt_op_name(op), tn, n, nseg, rt_strerror(rc), rt_errmsg(ctx));
        return 1;
    }
    if (cu.StreamSynchronize(stream) != CUDA_SUCCESS
        || cu.MemcpyDtoH(got, out, (nseg + 1) * rs) != CUDA_SUCCESS)
        return print_error("CUDA error after the reduction\n"), 1;
    for (unsigned long long s = 0; s < nseg && bad < 5; s++)
        if (!tr_check(op, spec, host + (size_t)offs[s] * es, offs[s + 1] - offs[s], offs[s], 0,
                      got + s * rs, why, sizeof why)) {
            print_error("%s %s %s n=%llu nseg=%llu data %d, segment %llu [%u, %u): %s\n",
                        layout == 1 ? "keys" : "offsets", rt_op_name(op), tn, n, nseg, kind, s,
                        offs[s], offs[s + 1], why);
            bad++;
        }
    for (size_t i = 0; i < rs; i++)
        if (got[nseg * rs + i] != 0xa5) {
            print_error("%s %s: the guard after segment %llu was written\n", rt_op_name(op), tn,
                        nseg - 1);
            return 1;
        }
    return bad != 0;
}

/* The operators of issue 15 (as gpu_types_builtin in test_gpu.c) by keys and by offsets:
 * the built-in default seg_lb, whose units for these operators finalize in rt_seg_final. */
static void seg_types_builtin(void **state)
{
    (void)state;
    NEED_GPU();
    char dir[64] = "/tmp/redtune_segtypes_XXXXXX", db[128];
    rt_err e;
    store *st = NULL;
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/empty.db", dir);
    assert_int_equal(store_open(db, STORE_WRITE, &st, &e), RT_OK);
    store_close(st);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    const struct { unsigned long long n, nseg; } shapes[] = {
        {0, 5}, {1, 1}, {1000, 37}, {1000, 1000}, {(1u << 20) + 3, 1000}, {(1u << 20) + 3, 50000},
    };
    unsigned long long nmax = (1u << 20) + 4, smax = 50001;
    unsigned char *host = malloc(nmax * 2), *got = malloc((smax + 1) * 16);
    unsigned *offs = malloc((smax + 2) * 4), *keys = malloc(nmax * 4);
    CUdeviceptr in, seg, out;
    assert_true(host && got && offs && keys);
    assert_int_equal(cu.MemAlloc(&in, nmax * 2), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&seg, nmax * 4 + 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, (smax + 1) * 16), CUDA_SUCCESS);
    const rt_op half_ops[] = {RT_SUM, RT_AMAX, RT_NORM2, RT_MEAN, RT_VAR_MEAN, RT_ARGMAX};
    const rt_op byte_ops[] = {RT_SUM, RT_MIN, RT_MEAN};
    const rt_type types[] = {RT_F16, RT_BF16, RT_I8, RT_U8};
    int failures = 0;
    for (int layout = 1; layout <= 2; layout++)
        for (int ti = 0; ti < 4; ti++) {
            rt_type t = types[ti];
            int half = optype_is_half(t);
            const rt_op *ops = half ? half_ops : byte_ops;
            for (int oi = 0; oi < (half ? 6 : 3); oi++)
                for (int kind = TR_PLAIN; kind <= TR_NAN; kind++) {
                    rt_op op = ops[oi];
                    if (kind == TR_SUBNORMAL || (kind != TR_PLAIN && !half)
                        || (kind == TR_BIG && (t != RT_F16 || op != RT_SUM))
                        || (kind == TR_NAN && op != RT_AMAX && op != RT_ARGMAX))
                        continue;
                    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
                        if (gpu_util_small() && shapes[k].n > 5000)
                            continue;
                        failures += types_seg_one(ctx, layout, op, t, kind, shapes[k].n,
                                                  shapes[k].nseg, host, offs, keys, got, in,
                                                  seg, out);
                    }
                }
        }
    char buf[2048];
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MEAN, RT_F16, 1000, 10, 0,
                                          buf, sizeof buf), RT_OK);
    assert_non_null(strstr(buf, "types: element f16, accumulator f32 (16 bytes), result f32 "
                                "(4 bytes); a last launch, rt_seg_final"));
    rt_close(ctx);
    cu.MemFree(in);
    cu.MemFree(seg);
    cu.MemFree(out);
    free(host);
    free(got);
    free(offs);
    free(keys);
    unlink(db);
    rmdir(dir);
    assert_int_equal(failures, 0);
}

#define T(op) cmocka_unit_test(seg_##op##_RT_F32), cmocka_unit_test(seg_##op##_RT_F64), \
    cmocka_unit_test(seg_##op##_RT_I32), cmocka_unit_test(seg_##op##_RT_U32),          \
    cmocka_unit_test(seg_##op##_RT_I64), cmocka_unit_test(seg_##op##_RT_U64)

int test_gpu_seg_group(void)
{
    const struct CMUnitTest tests[] = {
        T(RT_SUM), T(RT_PROD), T(RT_MIN), T(RT_MAX), T(RT_ARGMIN), T(RT_ARGMAX),
        cmocka_unit_test(seg_all_nan_RT_MIN_RT_F32), cmocka_unit_test(seg_all_nan_RT_MAX_RT_F32),
        cmocka_unit_test(seg_all_nan_RT_MIN_RT_F64), cmocka_unit_test(seg_all_nan_RT_MAX_RT_F64),
        cmocka_unit_test(seg_order_kept),
        cmocka_unit_test(seg_per_long_unaligned),
        cmocka_unit_test(seg_types_builtin),
    };
    return cmocka_run_group_tests_name("gpu_seg", tests, gpu_setup, NULL);
}
