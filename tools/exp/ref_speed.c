/*
 * ref_speed.c - experiment (issue 12, tuning time): how long the host's test data and the
 * reference of a reduction take (tuner/data.c's data_fill, tuner/data_ref.c's data_reference
 * on its inputs), per element, one thread, 2^22 elements, for the operator/type pairs whose
 * references are long double sums and the 16-bit types' fills; every candidate's
 * verification makes and reduces 1-1.5M fresh elements, a case its n once. It prints the result
 * and bound too, so two builds can be checked to agree. From the repository root, after ninja:
 *
 *     cc -O2 -std=c11 -D_GNU_SOURCE -I. -o ref_speed tools/exp/ref_speed.c build/libtuner.a \
 *         build/libredtune_int.a $(sed -n 's/^sqlite_a = //p' build/config.ninja) -ldl -lpthread -lm
 *     ./ref_speed
 *
 * (docs/results.md, ninth session: the old data_ref.c is `git show 18c12d7:tuner/data_ref.c`,
 * compiled to an object and linked first with -Wl,--allow-multiple-definition; the
 * forty-fourth session's 16-bit fills the same with `git show 0ba1db2:tuner/data.c`.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tuner/data.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
    const unsigned long long n = 1ULL << 22;
    static const struct {
        rt_type t;
        rt_op op;
        const char *name;
    } c[] = {{RT_F32, RT_SUM, "sum f32"},         {RT_BF16, RT_SUM, "sum bf16"},
             {RT_F32, RT_VAR_MEAN, "var_mean f32"}, {RT_F64, RT_SUM, "sum f64"},
             {RT_F32, RT_NORM2, "norm2 f32"},     {RT_I32, RT_SUM, "sum i32"},
             {RT_F32, RT_MIN, "min f32"},         {RT_BF16, RT_MIN, "min bf16"},
             {RT_F16, RT_SUM, "sum f16"},         {RT_F16, RT_AMAX, "amax f16"}};
    void *b = malloc(n * 8);
    if (!b)
        return 1;
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        data_ref r;
        double tf = now();
        data_fill(b, c[k].t, c[k].op, n, 7, 0, 1);
        double t0 = now();
        data_reference(b, c[k].t, c[k].op, n, &r, 1);
        double t1 = now();
        printf("%-13s fill %5.1f, reference %5.1f ns an element   approx %.17Lg  tolerance "
               "%.6g  abs_sum %.17Lg\n", c[k].name, (t0 - tf) / (double)n * 1e9,
               (t1 - t0) / (double)n * 1e9, r.approx, r.tolerance, r.abs_sum);
    }
    free(b);
    return 0;
}
