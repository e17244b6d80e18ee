/*
 * test_bench_pick.c - bench/pick.c: redtune_bench reads the library's pick back from the text
 * of rt_explain, rt_explain_segmented and rt_explain_axis. The CPU group feeds it texts in the
 * form runtime/ writes them (each level, each CUBIN origin, the built-in default in place of a
 * winner that cannot be made, an axis entry's tuned shape, a text it must refuse); the GPU group feeds it the real text of
 * a context on the built database, so that a change of that text is caught here rather than
 * as "see rt_explain" in a bench run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/pick.h"
#include "include/redtune.h"
#include "runtime/driver.h"
#include "runtime/err.h"

static const char FLAT_EXACT[] =
    "min f32, n = 1048576 (decided for n = 2^20):\n"
    "  kernel: gridstride B=256 V=4 U=4 G=4 (onelaunch plan, hash 0123456789ab)\n"
    "  database entry: device \"NVIDIA H100 80GB HBM3\" (sm_90, 132 SMs), tuned n = 1048576, "
    "median 7.25 us, in build/redtune.db\n"
    "  fallback level: exact device (this GPU: \"NVIDIA H100 80GB HBM3\", sm_90, 132 SMs)\n"
    "  CUBIN: from the database (made by NVRTC 12.4)\n"
    "  database: build/redtune.db (given)\n";

static const char FLAT_CC[] =
    "sum f64, n = 3000 (decided for n in (2^11, 2^12)):\n"
    "  kernel: tree_sequential B=128 R=2 (multipass plan, hash fedcba987654)\n"
    "  database entry: device \"NVIDIA H100 80GB HBM3\" (sm_90, 132 SMs), tuned n = 2048, "
    "median 3.50 us, in h100.db\n"
    "  fallback level: same compute capability (this GPU: \"NVIDIA H200\", sm_90, 132 SMs)\n"
    "  CUBIN: compiled here by NVRTC 12.6 from the template, for the database's config\n"
    "  database: h100.db (given)\n";

static const char FLAT_KIN[] =
    "argmin f32, n = 1048576 (decided for n = 2^20):\n"
    "  types: element f32, accumulator f32 (16-byte partials), result f32 (16 bytes)\n"
    "  kernel: gridstride B=256 V=4 U=4 G=4 (onelaunch plan, hash 0123456789ab)\n"
    "  database entry: device \"NVIDIA H100 80GB HBM3\" (sm_90, 132 SMs), tuned n = 1048576, "
    "median 7.25 us, in x.db; this GPU's own row; the winner of argmax, an operator of the "
    "same cost: x.db holds none of argmin's own for this GPU or a similar "
    "one\n"
    "  fallback level: exact device (this GPU: \"NVIDIA H100 80GB HBM3\", sm_90, 132 SMs)\n"
    "  CUBIN: compiled here by NVRTC 13.0 from the template, for the database's config\n"
    "  database: x.db (given)\n";

/* a type of the same width's winner (runtime/api_choose.c's api_kin_note) */
static const char FLAT_TKIN[] =
    "min i64, n = 1048576 (decided for n = 2^20):\n"
    "  kernel: gridstride B=256 V=2 U=4 G=4 (onelaunch plan, hash 0123456789ab)\n"
    "  database entry: device \"NVIDIA H100 80GB HBM3\" (sm_90, 132 SMs), tuned n = 1048576, "
    "median 8.25 us, in x.db; this GPU's own row; the winner of min f64, a type of the same "
    "width: x.db holds none of min i64's own for this GPU or a similar one, nor of an operator "
    "of the same cost\n"
    "  fallback level: exact device (this GPU: \"NVIDIA H100 80GB HBM3\", sm_90, 132 SMs)\n"
    "  CUBIN: compiled here by NVRTC 13.0 from the template, for the database's config\n"
    "  database: x.db (given)\n";

static const char FLAT_BUILTIN[] =
    "max i32, n = 1024 (decided for n = 2^10):\n"
    "  kernel: gridstride B=256 V=4 U=4 G=4 (onelaunch plan, hash 00aa11bb22cc)\n"
    "  database entry: none: x.db holds no winner for max i32 (flat, cold L2) on a GPU of "
    "compute capability 9.x\n"
    "  fallback level: built-in default (this GPU: \"NVIDIA H200\", sm_90, 132 SMs)\n"
    "  CUBIN: compiled here by NVRTC 12.6 from the built-in template\n"
    "  database: x.db (given)\n";

static const char SEG_TUNED[] =
    "offsets min f32 n=31457280 nseg=1048576: seg_lb B=256 R=8 STAGE=1 PERSIST=0 LAYOUT=2 "
    "OFF64=0 (plan segmented, kernel 13579bdf0246)\n"
    "from: tuned on NVIDIA H100 80GB HBM3 at n = 31457280, mean segment length 30.0: 52.10 us "
    "(re-specialised here for the offset width or alignment)\n"
    "level: exact device\n"
    "binary: compiled by NVRTC here\n";

static const char SEG_NONE[] =
    "keys sum i32 n=1024 nseg=3: seg_lb B=256 R=8 (plan segmented, kernel 2468ace13579)\n"
    "from: no tuned entry\n"
    "level: built-in default\n"
    "binary: CUBIN from the database\n";

static void pick_flat_exact(void **state)
{
    (void)state;
    bench_pick p;
    char lk[256];
    assert_int_equal(bench_pick_parse(FLAT_EXACT, &p), 0);
    assert_int_equal(p.parsed, 1);
    assert_string_equal(p.family, "gridstride");
    assert_string_equal(p.params, "B=256 V=4 U=4 G=4");
    assert_string_equal(p.hash, "0123456789ab");
    assert_string_equal(p.level, "exact device");
    assert_string_equal(p.device, "NVIDIA H100 80GB HBM3");
    assert_int_equal(p.tuned_n, 1048576);
    assert_true(p.tuned_median_us > 7.24 && p.tuned_median_us < 7.26);
    assert_int_equal(p.from_db, 1);
    bench_pick_lookup(&p, 1048576, lk, sizeof lk);
    assert_string_equal(lk, "exact");
    bench_pick_lookup(&p, 1500000, lk, sizeof lk);
    assert_string_equal(lk, "nearest 2^20");
    assert_string_equal(p.kin, "");
    /* a sibling's winner (docs/api.md, "Choosing the kernel"): named after the lookup */
    assert_int_equal(bench_pick_parse(FLAT_KIN, &p), 0);
    assert_string_equal(p.kin, "argmax");
    assert_string_equal(p.params, "B=256 V=4 U=4 G=4");
    bench_pick_lookup(&p, 1048576, lk, sizeof lk);
    assert_string_equal(lk, "exact, argmax's winner");
    bench_pick_lookup(&p, 3000, lk, sizeof lk);
    assert_string_equal(lk, "nearest 2^20, argmax's winner");
    /* a type of the same width's winner */
    assert_int_equal(bench_pick_parse(FLAT_TKIN, &p), 0);
    assert_string_equal(p.kin, "min f64");
    bench_pick_lookup(&p, 1048576, lk, sizeof lk);
    assert_string_equal(lk, "exact, min f64's winner");
}

/* Another GPU's winner (the shipped H100 database on an H200): the level and device show. */
static void pick_flat_other_device(void **state)
{
    (void)state;
    bench_pick p;
    char lk[256];
    assert_int_equal(bench_pick_parse(FLAT_CC, &p), 0);
    assert_string_equal(p.family, "tree_sequential");
    assert_string_equal(p.params, "B=128 R=2");
    assert_string_equal(p.level, "same compute capability");
    assert_int_equal(p.tuned_n, 2048);
    assert_int_equal(p.from_db, 0);
    bench_pick_lookup(&p, 3000, lk, sizeof lk);
    assert_string_equal(lk, "same compute capability \"NVIDIA H100 80GB HBM3\", nearest 2^11");
    bench_pick_lookup(&p, 2048, lk, sizeof lk);
    assert_string_equal(lk, "same compute capability \"NVIDIA H100 80GB HBM3\", exact");
}

static void pick_flat_builtin(void **state)
{
    (void)state;
    bench_pick p;
    char lk[256];
    assert_int_equal(bench_pick_parse(FLAT_BUILTIN, &p), 0);
    assert_string_equal(p.level, "built-in default");
    assert_string_equal(p.device, "");
    assert_int_equal(p.tuned_n, 0);
    assert_int_equal(p.from_db, 0);
    bench_pick_lookup(&p, 1024, lk, sizeof lk);
    assert_string_equal(lk, "built-in default");
}

static void pick_segmented(void **state)
{
    (void)state;
    bench_pick p;
    char lk[256];
    assert_int_equal(bench_pick_parse_seg(SEG_TUNED, &p), 0);
    assert_string_equal(p.family, "seg_lb");
    assert_string_equal(p.params, "B=256 R=8 STAGE=1 PERSIST=0 LAYOUT=2 OFF64=0");
    assert_string_equal(p.hash, "13579bdf0246");
    assert_string_equal(p.device, "NVIDIA H100 80GB HBM3");
    assert_int_equal(p.tuned_n, 31457280);
    assert_true(p.tuned_mean > 29.9 && p.tuned_mean < 30.1);
    assert_true(p.tuned_median_us > 52.0 && p.tuned_median_us < 52.2);
    assert_int_equal(p.respecialised, 1);
    assert_int_equal(p.from_db, 0);
    bench_pick_lookup(&p, 31457280, lk, sizeof lk);
    assert_string_equal(lk, "exact");
    bench_pick_lookup(&p, 1 << 20, lk, sizeof lk);
    assert_string_equal(lk, "nearest 30*2^20");

    assert_int_equal(bench_pick_parse_seg(SEG_NONE, &p), 0);
    assert_string_equal(p.level, "built-in default");
    assert_int_equal(p.tuned_n, 0);
    assert_int_equal(p.respecialised, 0);
    assert_int_equal(p.from_db, 1);
}

/* One segment (docs/segmented.md): a flat kernel, its row a flat winner (no mean length). */
static const char SEG_ONE_OFFSETS[] =
    "offsets min f64 n=31457280 nseg=1: one segment, a flat reduction of [offsets[0], "
    "offsets[1]) with its bounds read on the GPU: gridstride B=512 V=2 U=4 G=8 (plan onelaunch, "
    "kernel 0a1b2c3d4e5f)\n"
    "from: the flat winner of a @bounds family nearest to n tuned on NVIDIA H100 80GB HBM3 at "
    "n = 16777216: 48.93 us (the flat decision for n, tree_sequential B=1024 R=4 LOAD_ADD=1 "
    "WARP=1 UNROLL=1, cannot read its bounds); this GPU's own row\n"
    "level: exact device\n"
    "binary: compiled by NVRTC here\n";

static const char SEG_ONE_KEYS[] =
    "keys sum f32 n=1000 nseg=1: one segment, the flat reduction of in[0..n) (every valid key "
    "is 0; the keys are not read): gridstride B=256 V=4 U=4 G=4 (plan onelaunch, kernel "
    "5f4e3d2c1b0a)\n"
    "from: no tuned flat entry: the built-in default\n"
    "level: built-in default\n"
    "binary: compiled by NVRTC here\n";

static void pick_one_segment(void **state)
{
    (void)state;
    bench_pick p;
    char lk[256];
    assert_int_equal(bench_pick_parse_seg(SEG_ONE_OFFSETS, &p), 0);
    assert_int_equal(p.flat, 1);
    assert_string_equal(p.family, "gridstride");
    assert_string_equal(p.params, "B=512 V=2 U=4 G=8");
    assert_string_equal(p.hash, "0a1b2c3d4e5f");
    assert_string_equal(p.device, "NVIDIA H100 80GB HBM3");
    assert_int_equal(p.tuned_n, 16777216);
    assert_true(p.tuned_median_us > 48.92 && p.tuned_median_us < 48.94);
    assert_true(p.tuned_mean == 0);
    assert_int_equal(p.respecialised, 0);
    bench_pick_lookup(&p, 31457280, lk, sizeof lk);
    assert_string_equal(lk, "nearest 2^24");
    assert_int_equal(bench_pick_parse_seg(SEG_ONE_KEYS, &p), 0);
    assert_int_equal(p.flat, 1);
    assert_string_equal(p.family, "gridstride");
    assert_string_equal(p.hash, "5f4e3d2c1b0a");
    assert_string_equal(p.level, "built-in default");
    assert_int_equal(p.tuned_n, 0);
    assert_int_equal(bench_pick_parse_seg(SEG_TUNED, &p), 0);
    assert_int_equal(p.flat, 0);
}

/* The built-in default in place of a winner whose kernel cannot be made (runtime/api_kernel.c,
 * api_builtin_instead): the texts name the winner passed over, but what runs is the built-in,
 * with no database entry, and so the bench reads it. */
static const char FLAT_INSTEAD[] =
    "min f32, n = 1048576 (decided for n = 2^20):\n"
    "  kernel: gridstride B=256 V=4 U=4 G=4 (onelaunch plan, hash 00aa11bb22cc)\n"
    "  database entry: none used: the winner for this size, gridstride B=256 V=4 U=4 G=32 "
    "(device \"NVIDIA H200\" (sm_90, 132 SMs), tuned n = 1048576, median 5.00 us, in x.db; "
    "this GPU's own row; a winner of max, an operator of the same cost), cannot be made here: "
    "gridstride.cu: NVRTC_ERROR_COMPILATION for sm_90: templates/gridstride.cu(68): error: "
    "static assertion failed with \"gridstride: G must be in 1..16\"; the built-in default runs "
    "in its place\n"
    "  fallback level: built-in default (this GPU: \"NVIDIA H200\", sm_90, 132 SMs)\n"
    "  CUBIN: compiled here by NVRTC 13.0 from the built-in template\n"
    "  database: x.db (given)\n";

static const char SEG_INSTEAD[] =
    "offsets min f32 n=1048576 nseg=349525 uniform (no long-segment list): seg_lb LAYOUT=2 "
    "OFF64=0 B=256 R=8 V=1 STAGE=0 PERSIST=0 OST=0 MP=1 FAST=0 KW=0 (plan segmented, kernel "
    "2468ace13579)\n"
    "from: no tuned entry used: the winner tuned on NVIDIA H200 at n = 1048576, mean segment "
    "length 3.0 (seg_pipe LAYOUT=2 OFF64=0 B=256 SEGS=2 LANES=1 V=4 RV=1 KB=24 H=0 LONG=128, "
    "tried re-specialised for the offset width, the alignment or uniform lengths), cannot be "
    "made here: seg_pipe.cu: NVRTC_ERROR_COMPILATION for sm_90: templates/seg_pipe.cu(109): "
    "error: static assertion failed with \"seg_pipe: KB is 1..20\"; the built-in default runs "
    "in its place\n"
    "level: built-in default\n"
    "binary: compiled by NVRTC here\n";

static const char SEG_ONE_INSTEAD[] =
    "offsets min f32 n=1048576 nseg=1: one segment, a flat reduction of [offsets[0], "
    "offsets[1]) with its bounds read on the GPU: gridstride B=256 V=4 U=4 G=4 (plan onelaunch, "
    "kernel 5f4e3d2c1b0a)\n"
    "from: no tuned flat entry used: the flat winner for n, gridstride B=256 V=4 U=4 G=32 (of "
    "the row of \"NVIDIA H200\", n = 1048576), cannot be made here: gridstride.cu: "
    "NVRTC_ERROR_COMPILATION for sm_90; the built-in default\n"
    "level: built-in default\n"
    "binary: compiled by NVRTC here\n";

static void pick_builtin_instead(void **state)
{
    (void)state;
    bench_pick p;
    char lk[256];
    assert_int_equal(bench_pick_parse(FLAT_INSTEAD, &p), 0);
    assert_string_equal(p.family, "gridstride");
    assert_string_equal(p.params, "B=256 V=4 U=4 G=4");
    assert_string_equal(p.level, "built-in default");
    assert_string_equal(p.device, "");
    assert_int_equal(p.tuned_n, 0);
    assert_string_equal(p.kin, "");
    bench_pick_lookup(&p, 1048576, lk, sizeof lk);
    assert_string_equal(lk, "built-in default");
    assert_int_equal(bench_pick_parse_seg(SEG_INSTEAD, &p), 0);
    assert_string_equal(p.family, "seg_lb");
    assert_string_equal(p.level, "built-in default");
    assert_string_equal(p.device, "");
    assert_int_equal(p.tuned_n, 0);
    assert_int_equal(p.respecialised, 0);
    assert_int_equal(bench_pick_parse_seg(SEG_ONE_INSTEAD, &p), 0);
    assert_int_equal(p.flat, 1);
    assert_string_equal(p.family, "gridstride");
    assert_string_equal(p.level, "built-in default");
    assert_string_equal(p.device, "");
    assert_int_equal(p.tuned_n, 0);
}

/* rt_explain_axis's texts (runtime/api_axis.c), as bench/axis.cu reads them: the kernel by
 * bench_pick_parse (which stops at a winner's entry line, having no "tuned n" there), the
 * tuned shape by bench_pick_axis_tuned; a winner that cannot be made names its shape, but
 * what runs is the built-in default, with no entry. */
static const char AXIS_TUNED[] =
    "axis sum f32, outer = 3000 len = 5000 inner = 1 (decided for outer [2^11, 2^12), len "
    "[2^12, 2^13), inner 1):\n"
    "  types: element f32, accumulator f32 (4-byte partials), result f32 (4 bytes)\n"
    "  kernel: axis_rows B=128 L=32 V=4 U=1 CHUNK=0 IL=0 (axis plan, hash 0123456789ab)\n"
    "  launch: 3000 tiles of 4 outputs, 1 split of len, 0 bytes of temporary storage\n"
    "  database entry: device \"NVIDIA H100 80GB HBM3\" (sm_90, 132 SMs), tuned shape "
    "axis:4096x4096x1, median 10.00 us, in x.db; this GPU's own row\n"
    "  fallback level: exact device (this GPU: \"NVIDIA H100 80GB HBM3\", sm_90, 132 SMs)\n"
    "  CUBIN: from the database (made by NVRTC 13.0)\n"
    "  database: x.db (given)\n";

static const char AXIS_BUILTIN[] =
    "axis max f32, outer = 4096 len = 4096 inner = 1 (decided for outer [2^12, 2^13), len "
    "[2^12, 2^13), inner 1):\n"
    "  types: element f32, accumulator f32 (4-byte partials), result f32 (4 bytes)\n"
    "  kernel: axis_rows B=256 L=256 V=4 U=2 CHUNK=0 IL=0 (axis plan, hash 00aa11bb22cc)\n"
    "  launch: 4096 tiles of 1 outputs, 1 split of len, 0 bytes of temporary storage\n"
    "  database entry: none: x.db holds no winner for max f32 (axis, inner == 1, cold L2) on "
    "a GPU of compute capability 9.x\n"
    "  fallback level: built-in default (this GPU: \"NVIDIA H100 80GB HBM3\", sm_90, 132 SMs)\n"
    "  CUBIN: compiled here by NVRTC 13.0 from the built-in template\n"
    "  database: x.db (given)\n";

static const char AXIS_INSTEAD[] =
    "axis min f32, outer = 1024 len = 4096 inner = 1 (decided for outer [2^10, 2^11), len "
    "[2^12, 2^13), inner 1):\n"
    "  types: element f32, accumulator f32 (4-byte partials), result f32 (4 bytes)\n"
    "  kernel: axis_rows B=256 L=256 V=4 U=2 CHUNK=0 IL=0 (axis plan, hash 5f4e3d2c1b0a)\n"
    "  launch: 1024 tiles of 1 outputs, 1 split of len, 0 bytes of temporary storage\n"
    "  database entry: none used: the winner for this shape class, axis_rows B=256 L=32 V=4 "
    "U=3 CHUNK=0 IL=0 (device \"NVIDIA H200\" (sm_90, 132 SMs), tuned shape axis:1024x4096x1, "
    "median 12.00 us, in x.db; this GPU's own row; a winner of max, an operator of the same "
    "cost), cannot be made here: axis_rows.cu: NVRTC_ERROR_COMPILATION for sm_90: "
    "templates/axis_rows.cu(72): error: static assertion failed with \"axis_rows: U must be 1, "
    "2, 4 or 8\"; the built-in default runs in its place\n"
    "  fallback level: built-in default (this GPU: \"NVIDIA H200\", sm_90, 132 SMs)\n"
    "  CUBIN: compiled here by NVRTC 13.0 from the built-in template\n"
    "  database: x.db (given)\n";

static void pick_axis(void **state)
{
    (void)state;
    bench_pick p;
    char tuned[64];
    assert_int_equal(bench_pick_parse(AXIS_TUNED, &p), -1);   /* no "tuned n" */
    assert_string_equal(p.family, "axis_rows");
    assert_string_equal(p.params, "B=128 L=32 V=4 U=1 CHUNK=0 IL=0");
    assert_int_equal(bench_pick_axis_tuned(AXIS_TUNED, tuned, sizeof tuned), 0);
    assert_string_equal(tuned, "axis:4096x4096x1");
    assert_int_equal(bench_pick_parse(AXIS_BUILTIN, &p), 0);
    assert_string_equal(p.level, "built-in default");
    assert_int_equal(bench_pick_axis_tuned(AXIS_BUILTIN, tuned, sizeof tuned), 0);
    assert_string_equal(tuned, "built-in default");
    assert_int_equal(bench_pick_parse(AXIS_INSTEAD, &p), 0);
    assert_string_equal(p.family, "axis_rows");
    assert_string_equal(p.params, "B=256 L=256 V=4 U=2 CHUNK=0 IL=0");
    assert_string_equal(p.level, "built-in default");
    assert_string_equal(p.device, "");
    assert_int_equal(p.tuned_n, 0);
    assert_string_equal(p.kin, "");
    assert_int_equal(bench_pick_axis_tuned(AXIS_INSTEAD, tuned, sizeof tuned), 0);
    assert_string_equal(tuned, "built-in default");
    /* no entry line, or one of another form: not read */
    assert_int_equal(bench_pick_axis_tuned("axis sum f32: something else\n", tuned,
                                           sizeof tuned), -1);
    assert_string_equal(tuned, "");
    assert_int_equal(bench_pick_axis_tuned("  database entry: tuned shape axis:1x2x3\n", tuned,
                                           sizeof tuned), -1);
    assert_int_equal(bench_pick_axis_tuned(AXIS_TUNED, tuned, 8), -1);   /* does not fit */
}

/* A text in another form is refused, not guessed at: the bench then shows it as it is. */
static void pick_refuses_other_text(void **state)
{
    (void)state;
    bench_pick p;
    char lk[64];
    assert_int_equal(bench_pick_parse("min f32: something else\n", &p), -1);
    assert_int_equal(p.parsed, 0);
    assert_int_equal(bench_pick_parse(NULL, &p), -1);
    assert_int_equal(bench_pick_parse_seg(FLAT_EXACT, &p), -1);
    assert_int_equal(bench_pick_parse(SEG_TUNED, &p), -1);
    /* A kernel line without its parenthesis. */
    assert_int_equal(bench_pick_parse("  kernel: gridstride B=256\n  fallback level: exact "
                                      "device\n  database entry: none\n  CUBIN: from the "
                                      "database\n", &p), -1);
    bench_pick_lookup(&p, 1024, lk, sizeof lk);
    assert_string_equal(lk, "see rt_explain");
}

static void pick_fmt_n(void **state)
{
    (void)state;
    char b[32];
    bench_fmt_n(1 << 20, b, sizeof b);
    assert_string_equal(b, "2^20");
    bench_fmt_n(30LL << 20, b, sizeof b);
    assert_string_equal(b, "30*2^20");
    bench_fmt_n(1000, b, sizeof b);
    assert_string_equal(b, "1000");
}

int test_bench_pick_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pick_flat_exact),
        cmocka_unit_test(pick_flat_other_device),
        cmocka_unit_test(pick_flat_builtin),
        cmocka_unit_test(pick_segmented),
        cmocka_unit_test(pick_one_segment),
        cmocka_unit_test(pick_builtin_instead),
        cmocka_unit_test(pick_axis),
        cmocka_unit_test(pick_refuses_other_text),
        cmocka_unit_test(pick_fmt_n),
    };
    return cmocka_run_group_tests_name("bench_pick", tests, NULL, NULL);
}

/* ---- on a GPU: the library's own text ---- */

/* The real rt_explain, rt_explain_segmented and rt_explain_axis texts of a context on
 * build/redtune.db (the shipped database: its winners, another GPU's through the fallback, or
 * the built-in default) are read back in full. */
static void pick_gpu_real_text(void **state)
{
    (void)state;
    rt_device dev;
    rt_err e;
    if (driver_load(&e) || driver_device_query(0, &dev, &e)) {
        print_message("# SKIP reason: %s\n", e.msg);
        skip();
    }
    if (access("build/redtune.db", R_OK) != 0) {
        print_message("# SKIP reason: build/redtune.db is not built\n");
        skip();
    }
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open("build/redtune.db", 0, &ctx), RT_OK);
    static const char *const levels[] = {"exact device", "same compute capability",
                                         "same major architecture", "built-in default"};
    const struct { rt_op op; rt_type type; unsigned long long n; } cases[] = {
        {RT_MIN, RT_F32, 1 << 20}, {RT_SUM, RT_F64, 1000}, {RT_PROD, RT_U64, 1 << 24}};
    char text[4096];
    bench_pick p;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rt_explain(ctx, cases[i].op, cases[i].type, cases[i].n, text,
                                    sizeof text), RT_OK);
        if (bench_pick_parse(text, &p))
            fail_msg("bench_pick_parse refused rt_explain's text:\n%s", text);
        int known = 0;
        for (int l = 0; l < 4; l++)
            known |= !strcmp(p.level, levels[l]);
        assert_true(known);
        assert_true(p.family[0] && strlen(p.hash) == 12);
        assert_int_equal(p.tuned_n > 0, strcmp(p.level, "built-in default") != 0);
    }
    for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++)
        for (unsigned long long nseg = 1; nseg <= 1ULL << 20; nseg <<= 20) {
            assert_int_equal(rt_explain_segmented(ctx, layout, RT_MIN, RT_I32, 30ULL << 20,
                                                  nseg, 0, text, sizeof text), RT_OK);
            if (bench_pick_parse_seg(text, &p))
                fail_msg("bench_pick_parse_seg refused rt_explain_segmented's text:\n%s", text);
            assert_true(p.family[0] && strlen(p.hash) == 12);
            assert_int_equal(p.tuned_n > 0, strcmp(p.level, "built-in default") != 0);
            assert_int_equal(p.flat, nseg == 1);
        }
    /* rt_explain_axis: the kernel, and the entry's tuned shape or the built-in default */
    const unsigned long long ax[][3] = {{16, 4194304, 1}, {1, 65536, 128}, {7, 513, 33}};
    for (int i = 0; i < 3; i++) {
        char tuned[64];
        assert_int_equal(rt_explain_axis(ctx, RT_SUM, RT_F32, ax[i][0], ax[i][1], ax[i][2], text,
                                         sizeof text), RT_OK);
        bench_pick_parse(text, &p);   /* -1 at a winner's entry line: the kernel is read */
        if (!p.family[0] || strlen(p.hash) != 12
            || bench_pick_axis_tuned(text, tuned, sizeof tuned))
            fail_msg("bench/axis.cu's reading refused rt_explain_axis's text:\n%s", text);
        assert_int_equal(!strncmp(tuned, "axis:", 5),
                         !strstr(text, "fallback level: built-in default"));
    }
    rt_close(ctx);
}

int test_bench_pick_gpu_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pick_gpu_real_text),
    };
    return cmocka_run_group_tests_name("bench_pick_gpu", tests, NULL, NULL);
}
