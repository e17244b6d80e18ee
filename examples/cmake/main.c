/*
 * main.c - a program built with CMake against an installed libredtune (find_package).
 * Names the operators and types from the library, then opens the default database on GPU 0
 * and prints which kernel would reduce 2^24 f32 with min and 2^24 bf16 with sum in an f64
 * accumulator (a type spec), and what the library says of a pair it does not define (var_mean
 * of u8); without a GPU it prints why not and still exits 0 (linking and loading the library
 * is what it shows).
 */
#include <stdio.h>
#include <redtune.h>

int main(void)
{
    printf("redtune %s:", RT_VERSION_STRING);
    for (int op = 0; op < RT_OP_COUNT; op++)
        printf(" %s", rt_op_name((rt_op)op));
    printf(";");
    for (int t = 0; t < RT_TYPE_COUNT; t++)
        printf(" %s", rt_type_name((rt_type)t));
    printf("\n");

    rt_ctx *ctx;
    int rc = rt_open(NULL, 0, &ctx);
    if (rc != RT_OK) {
        printf("rt_open: %s: %s\n", rt_strerror(rc), rt_errmsg(NULL));
        return 0;
    }
    char why[2048];
    rc = rt_explain(ctx, RT_MIN, RT_F32, 1ull << 24, why, sizeof why);
    printf("%s", rc == RT_OK ? why : rt_errmsg(ctx));
    rc = rt_explain(ctx, RT_SUM, RT_ACC(RT_BF16, RT_F64), 1ull << 24, why, sizeof why);
    printf("%s", rc == RT_OK ? why : rt_errmsg(ctx));
    /* Not every operator takes every type: an undefined pair is RT_EINVAL, named. */
    rc = rt_explain(ctx, RT_VAR_MEAN, RT_U8, 1ull << 24, why, sizeof why);
    printf("%s: %s\n", rt_strerror(rc), rc == RT_OK ? why : rt_errmsg(ctx));
    rt_close(ctx);
    return 0;
}
