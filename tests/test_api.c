/*
 * test_api.c - libredtune's public API (runtime/api*.c) and its read-only queries
 * (in runtime/store.c).
 *
 * Group "api" (CPU, runs everywhere): argument checks and their messages, per-thread
 * messages, the default database path, databases refused and left byte-identical, no CUDA
 * driver, and the fallback chain's SQL on a database of made-up devices.
 * Group "api_gpu" (skipped, and counted, with no GPU): every operator and type at n = 0, 1,
 * 1000, 2^20 + 3 on inputs one element past an aligned address, through a database made
 * here for this GPU and through the built-in default; the fallback levels; caller-supplied
 * temporary storage; more streams than the context keeps blocks for; one context used by
 * four threads at once; no NVRTC.
 *
 * driver.c and nvrtc.c load their library once per process, so the scenarios that need them
 * missing (REDTUNE_LIBCUDA / REDTUNE_NVRTC=/nonexistent) run in a fresh exec of this binary:
 * a constructor sees REDTUNE_TEST_API_CHILD, runs the scenario, and exits before main.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "include/redtune.h"
#include "runtime/api.h"
#include "runtime/api_int.h"
#include "runtime/capture.h"
#include "runtime/codegen.h"
#include "runtime/driver.h"
#include "runtime/hash.h"
#include "runtime/nvrtc.h"
#include "runtime/optype.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tuner/data.h"
#include "tuner/pool.h"
#include "tuner/opfile.h"
#include "tuner/segdata.h"
#include "tests/affine.h"
#include "tests/gpu_util.h"
#include "tests/typeref.h"

/* ---------------------------------------------------------------- helpers */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void make_dir(char dir[64])
{
    strcpy(dir, "/tmp/redtune-api-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    char *buf = NULL;
    long size;

    *len = 0;
    if (!fp)
        return NULL;
    if (fseek(fp, 0, SEEK_END) == 0 && (size = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0
        && (buf = malloc((size_t)size + 1)) != NULL) {
        *len = fread(buf, 1, (size_t)size, fp);
        if (*len != (size_t)size) {
            free(buf);
            buf = NULL;
        } else {
            buf[*len] = '\0';
        }
    }
    fclose(fp);
    return buf;
}

static void copy_file(const char *from, const char *to)
{
    size_t len;
    char *buf = slurp(from, &len);
    assert_non_null(buf);
    FILE *fp = fopen(to, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(buf, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
    free(buf);
}

/* 1 when the file at 'path' holds exactly buf[0..len). */
static int same_bytes(const char *path, const char *buf, size_t len)
{
    size_t now;
    char *cur = slurp(path, &now);
    int same = cur && now == len && memcmp(cur, buf, len) == 0;
    free(cur);
    return same;
}

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    if (!d)
        return -1;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/*
 * Run this test binary again as child scenario 'what' with the database 'db' and one more
 * environment variable; its stdout and stderr go into out. Returns its exit status.
 */
static int run_child(const char *what, const char *db, const char *var, const char *value,
                     char *out, size_t len)
{
    char self[4096];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    int fd[2], st = 0;
    size_t got = 0;

    assert_true(k > 0);
    self[k] = '\0';
    assert_int_equal(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        setenv("REDTUNE_TEST_API_CHILD", what, 1);
        setenv("REDTUNE_TEST_API_DB", db, 1);
        if (var)
            setenv(var, value, 1);
        execl(self, self, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    for (;;) {
        ssize_t r = read(fd[0], out + got, len - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got == len - 1)
            break;
    }
    out[got] = '\0';
    close(fd[0]);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* A new, empty redtune database at 'path' (the schema only). */
static void make_empty_db(const char *path)
{
    rt_err e;
    store *s = NULL;
    if (store_open(path, STORE_WRITE, &s, &e) != RT_OK)
        print_error("%s\n", e.msg);
    assert_non_null(s);
    store_close(s);
}

/* ---------------------------------------------------------------- CPU: arguments */

static void api_null_args(void **state)
{
    (void)state;
    rt_ctx *ctx = (rt_ctx *)&ctx;
    char msg[256] = "x", buf[64] = "x";
    size_t bytes = 7;
    int x = 0;

    assert_int_equal(rt_open("x.db", 0, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_open: out is NULL");
    assert_int_equal(rt_open_err(NULL, -1, &ctx, msg, sizeof msg), RT_EINVAL);
    assert_null(ctx);
    assert_string_equal(msg, "rt_open: device -1: a CUDA device ordinal is 0 or more");
    assert_string_equal(rt_errmsg(NULL), msg);
    assert_int_equal(rt_open_err(NULL, -1, NULL, NULL, 0), RT_EINVAL);   /* no buffer: fine */

    assert_int_equal(rt_reduce(NULL, RT_SUM, RT_F32, &x, 1, &x, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce: the context is NULL");
    assert_int_equal(rt_reduce_temp(NULL, RT_MIN, RT_I64, &x, 1, &x, NULL, 0, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce_temp: the context is NULL");
    assert_int_equal(rt_temp_bytes(NULL, RT_MAX, RT_U32, 10, &bytes), RT_EINVAL);
    assert_int_equal(bytes, 0);
    assert_string_equal(rt_errmsg(NULL), "rt_temp_bytes: the context is NULL");
    assert_int_equal(rt_explain(NULL, RT_ARGMIN, RT_F64, 10, buf, sizeof buf), RT_EINVAL);
    assert_string_equal(buf, "");
    assert_string_equal(rt_errmsg(NULL), "rt_explain: the context is NULL");
    assert_int_equal(rt_release_temp(NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_release_temp: the context is NULL");
    unsigned keys[1] = {0};
    assert_int_equal(rt_reduce_keys(NULL, RT_SUM, RT_F32, &x, keys, 1, 1, &x, NULL, 0), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce_keys: the context is NULL");
    assert_int_equal(rt_reduce_offsets(NULL, RT_MIN, RT_I32, &x, 1, keys, 1, &x, NULL, 0),
                     RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce_offsets: the context is NULL");
    assert_int_equal(rt_explain_segmented(NULL, RT_LAYOUT_KEYS, RT_SUM, RT_F32, 10, 2, 0, buf,
                                          sizeof buf), RT_EINVAL);
    assert_string_equal(rt_strerror(RT_ECAPTURE), "RT_ECAPTURE");
    assert_string_equal(rt_strerror(RT_ECAPTURE - 1), "RT_E(unknown)");

    /* The message belongs to the call that failed: another context sees none, and the next
     * call (here rt_close, a harmless no-op on NULL) clears it. */
    assert_string_equal(rt_errmsg((const rt_ctx *)&x), "");
    rt_close(NULL);
    assert_string_equal(rt_errmsg(NULL), "");
}

static void api_unknown_op_type(void **state)
{
    (void)state;
    int x = 0;
    size_t bytes;
    char buf[64];

    assert_int_equal(rt_reduce(NULL, (rt_op)99, RT_F32, &x, 1, &x, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce: unknown operator 99 (known: sum, prod, "
                                         "min, max, argmin, argmax, amax, asum, sumsq, norm2, "
                                         "mean, var_mean, var_mean_sample, std_mean, "
                                         "std_mean_sample)");
    assert_int_equal(rt_reduce(NULL, RT_OP_COUNT, RT_F32, &x, 1, &x, NULL), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "unknown operator 15"));
    assert_int_equal(rt_reduce(NULL, (rt_op)-1, RT_F32, &x, 1, &x, NULL), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "unknown operator -1"));
    assert_int_equal(rt_reduce(NULL, RT_SUM, (rt_type)42, &x, 1, &x, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce: unknown type 42 (known: f32, f64, i32, "
                                         "u32, i64, u64, f16, bf16, i8, u8)");
    assert_int_equal(rt_reduce_temp(NULL, RT_SUM, RT_TYPE_COUNT, &x, 1, &x, NULL, 0, NULL),
                     RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "rt_reduce_temp: unknown type 10"));
    assert_int_equal(rt_temp_bytes(NULL, (rt_op)17, RT_F32, 1, &bytes), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "rt_temp_bytes: unknown operator 17"));
    assert_int_equal(rt_explain(NULL, RT_SUM, (rt_type)-3, 1, buf, sizeof buf), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "rt_explain: unknown type -3"));
}

/* Type specs (docs/types.md): a pair the library does not define, or a spec with bits outside
 * its fields, is RT_EINVAL with the resolver's text before the context is looked at; a
 * defined spec gets as far as the NULL context. */
static void api_type_specs(void **state)
{
    (void)state;
    int x = 0;
    size_t bytes;
    char buf[64];
    unsigned keys[1] = {0};
    const struct {
        rt_op op;
        rt_type type;
        const char *expect;   /* after "FN: " */
    } bad[] = {
        {RT_VAR_MEAN, RT_U8, "var_mean of u8 is not defined: var_mean takes f16, bf16, f32, "
                             "f64"},
        {RT_NORM2, RT_I32, "norm2 of i32 is not defined: norm2 takes f16, bf16, f32, f64"},
        {RT_MEAN, RT_RESULT_ELEM(RT_I32), "mean of i32 to i32 is not defined: the mean of "
                                          "integers is f64"},
        {RT_MIN, RT_ACC(RT_F16, RT_F32), "min of f16 accumulating in f32 is not defined: min "
                                         "keeps the element type"},
        {RT_SUM, RT_ACC(RT_F64, RT_F32), "sum of f64 accumulating in f32 is not defined"},
        {RT_SUM, RT_ACC(RT_BF16, RT_I32), "sum of bf16 accumulating in i32 is not defined"},
        {RT_SUM, (rt_type)(RT_F32 | 0x20000), "type spec 0x20000 is malformed: bits 0..7 hold "
                                              "the element type, 8..15 RT_ACC's accumulator + 1 "
                                              "(at most 10), bit 16 RT_RESULT_ELEM, and no other "
                                              "bit is set"},
        {RT_SUM, (rt_type)(RT_F16 | (12 << 8)), "type spec 0xc06 is malformed"},
    };
    char want[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(rt_reduce(NULL, bad[i].op, bad[i].type, &x, 1, &x, NULL), RT_EINVAL);
        snprintf(want, sizeof want, "rt_reduce: %s", bad[i].expect);
        if (strncmp(rt_errmsg(NULL), want, strlen(want)))
            fail_msg("case %zu: '%s' is not '%s'", i, rt_errmsg(NULL), want);
        if (i < 4)   /* the resolver's whole text */
            assert_string_equal(rt_errmsg(NULL), want);
        /* every entry point checks alike */
        assert_int_equal(rt_reduce_temp(NULL, bad[i].op, bad[i].type, &x, 1, &x, NULL, 0,
                                        NULL), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_temp_bytes(NULL, bad[i].op, bad[i].type, 10, &bytes), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_explain(NULL, bad[i].op, bad[i].type, 10, buf, sizeof buf),
                         RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_reduce_keys(NULL, bad[i].op, bad[i].type, &x, keys, 1, 1, &x, NULL,
                                        0), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), "rt_reduce_keys: "));
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_reduce_offsets(NULL, bad[i].op, bad[i].type, &x, 1, keys, 1, &x,
                                           NULL, 0), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_explain_segmented(NULL, RT_LAYOUT_OFFSETS, bad[i].op, bad[i].type,
                                              10, 2, 0, buf, sizeof buf), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
    }
    const struct {
        rt_op op;
        rt_type type;
    } good[] = {
        {RT_SUM, RT_F16}, {RT_SUM, RT_ACC(RT_BF16, RT_F64)}, {RT_SUM, RT_RESULT_ELEM(RT_BF16)},
        {RT_SUM, RT_RESULT_ELEM(RT_ACC(RT_F16, RT_F64))}, {RT_MIN, RT_U8}, {RT_ARGMAX, RT_I8},
        {RT_MEAN, RT_I32}, {RT_MEAN, RT_ACC(RT_I8, RT_F64)}, {RT_VAR_MEAN_SAMPLE, RT_BF16},
        {RT_STD_MEAN, RT_RESULT_ELEM(RT_F16)}, {RT_MIN, RT_ACC(RT_F16, RT_F16)},
        {RT_SUM, RT_ACC(RT_U8, RT_U64)},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(rt_reduce(NULL, good[i].op, good[i].type, &x, 1, &x, NULL), RT_EINVAL);
        if (strcmp(rt_errmsg(NULL), "rt_reduce: the context is NULL"))
            fail_msg("good case %zu: '%s'", i, rt_errmsg(NULL));
    }
}

/* tests/typeref.h's host conversions, which the GPU tests of the halves trust: every half
 * survives the round trip through f32, and f32 rounds to nearest even, to inf from 65520 on
 * and through the subnormals. */
static void api_typeref_halves(void **state)
{
    (void)state;
    for (unsigned h = 0; h < 0x10000; h++) {
        float f = tr_f16_to_f32((uint16_t)h), b = tr_bf16_to_f32((uint16_t)h);
        if (f == f && tr_f32_to_f16(f) != h)
            fail_msg("f16 0x%04x -> %g -> 0x%04x", h, f, tr_f32_to_f16(f));
        if (b == b && tr_f32_to_bf16(b) != h)
            fail_msg("bf16 0x%04x -> %g -> 0x%04x", h, b, tr_f32_to_bf16(b));
    }
    assert_int_equal(tr_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(tr_f32_to_f16(65519.0f), 0x7bff);
    assert_int_equal(tr_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(tr_f32_to_f16(-1e9f), 0xfc00);
    assert_int_equal(tr_f32_to_f16(0x1p-25f), 0);          /* a tie: to even, 0 */
    assert_int_equal(tr_f32_to_f16(0x1.8p-25f), 1);
    assert_int_equal(tr_f32_to_f16(0x1.8p-24f), 2);        /* 1.5 units: to even, 2 */
    assert_int_equal(tr_f32_to_f16(0x1.ffcp-15f), 0x400);  /* rounds up to the least normal */
    assert_int_equal(tr_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    assert_int_equal(tr_f32_to_f16(1.0f + 0x1.8p-11f), 0x3c01);
    assert_true(tr_f16_to_f32(0x7e00) != tr_f16_to_f32(0x7e00));
    assert_int_equal(tr_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    assert_int_equal(tr_f32_to_bf16(1.0f + 0x1.8p-8f), 0x3f81);
    assert_true(tr_f16_to_f32(0x8000) == 0 && signbit(tr_f16_to_f32(0x8000)));
}

/* Pointers: d_in aligned to the element, d_out to the result (its scalar; 8 for argmin and
 * argmax), whatever the accumulator. */
static void api_result_alignment(void **state)
{
    (void)state;
    static _Alignas(16) unsigned char mem[64];
    const struct {
        rt_op op;
        rt_type type;
        int in_off, out_off;
        const char *expect;   /* NULL: accepted */
    } cases[] = {
        {RT_SUM, RT_F16, 2, 4, NULL},
        {RT_SUM, RT_F16, 1, 4, "d_in %p is not aligned to its 2-byte f16 elements"},
        {RT_SUM, RT_F16, 2, 2, "d_out %p is not aligned to 4 bytes (sum f16)"},
        {RT_SUM, RT_RESULT_ELEM(RT_F16), 2, 2, NULL},
        {RT_SUM, RT_ACC(RT_BF16, RT_F64), 0, 4,
         "d_out %p is not aligned to 8 bytes (sum bf16 (f64 accumulator))"},
        {RT_MIN, RT_U8, 1, 1, NULL},
        {RT_MIN, RT_I8, 3, 3, NULL},
        {RT_SUM, RT_I8, 1, 2, "d_out %p is not aligned to 4 bytes (sum i8)"},
        {RT_AMAX, RT_BF16, 2, 2, NULL},
        {RT_ARGMAX, RT_U8, 1, 4, "d_out %p is not aligned to 8 bytes (argmax u8)"},
        {RT_ARGMIN, RT_F16, 2, 8, NULL},
        {RT_MEAN, RT_I32, 4, 4, "d_out %p is not aligned to 8 bytes (mean i32)"},
        {RT_MEAN, RT_F16, 2, 4, NULL},
        {RT_VAR_MEAN, RT_F32, 4, 4, NULL},
        {RT_VAR_MEAN, RT_F64, 8, 4, "d_out %p is not aligned to 8 bytes (var_mean f64)"},
        {RT_STD_MEAN, RT_RESULT_ELEM(RT_BF16), 2, 2, NULL},
        {RT_SUM, RT_F32, 4, 4, NULL},
        {RT_SUM, RT_F64, 8, 4, "d_out %p is not aligned to 8 bytes (sum f64)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rt_err e;
        rt_clearerr(&e);
        const void *in = mem + cases[i].in_off, *out = mem + 32 + cases[i].out_off;
        int rc = api_check_pointers("rt_reduce", NULL, cases[i].op, cases[i].type, in, 10, out,
                                    &e);
        if (!cases[i].expect) {
            if (rc)
                fail_msg("case %zu: %s", i, e.msg);
            continue;
        }
        char want[256], text[256];
        snprintf(text, sizeof text, "rt_reduce: %s", cases[i].expect);
        snprintf(want, sizeof want, text, strstr(cases[i].expect, "d_in") ? in : out);
        assert_int_equal(rc, RT_EINVAL);
        assert_string_equal(e.msg, want);
    }
}

/* rt_register_op checks the description before the context, so every bad field is reported
 * with no GPU; a user handle with a NULL context is reported as the NULL context. */
static void api_register_op_args(void **state)
{
    (void)state;
    rt_op op = (rt_op)-5;
    char long_combine[5000];
    memset(long_combine, 'x', sizeof long_combine - 1);
    long_combine[sizeof long_combine - 1] = '\0';
    const struct {
        rt_op_desc d;
        const char *expect;
    } bad[] = {
        {{NULL, RT_U32, "0", "return a ^ b;", 1}, "rt_register_op: desc->name is NULL"},
        {{"", RT_U32, "0", "return a ^ b;", 1}, "rt_register_op: desc->name is empty"},
        {{"Xor", RT_U32, "0", "return a ^ b;", 1}, "desc->name 'Xor': use a-z, 0-9 and _"},
        {{"min", RT_U32, "0", "return a ^ b;", 1}, "desc->name 'min' is a built-in operator"},
        {{"xor", (rt_type)42, "0", "return a ^ b;", 1}, "operator 'xor': desc->type 42 is not"},
        {{"xor", RT_U32, NULL, "return a ^ b;", 1}, "rt_register_op: desc->identity is NULL"},
        {{"xor", RT_U32, "0", "", 1}, "rt_register_op: desc->combine is empty"},
        {{"xor", RT_U32, "0", long_combine, 1}, "desc->combine is 4999 bytes long, at most 4095"},
        {{"xor", RT_U32, "0", "return a ^ b;", 2}, "desc->commutative is 2, not 0 or 1"},
        {{"a_name_much_longer_than_forty_seven_characters_in_all", RT_U32, "0", "return a;", 1},
         "desc->name is 53 bytes long, at most 47"},
        {{"xor", RT_U32, "0", "return a ^ b;\n#include \"/etc/passwd\"\n", 1},
         "rt_register_op: operator 'xor': desc->combine, line 2: a preprocessor directive ('#') "
         "is not allowed"},
        {{"xor", RT_U32, "0); } __global__ void k() { (0", "return a ^ b;", 1},
         "rt_register_op: operator 'xor': desc->identity, line 1: a ')' closes nothing open "
         "here"},
        {{"xor", RT_U32, "0", "return a ^ b; // xor", 1},
         "rt_register_op: operator 'xor': desc->combine, line 1: a // comment runs to the end of "
         "the text"},
        /* map, acc, finalize, result (docs/ops.md) */
        {{"xor", RT_U32, "0", "return a ^ b;", 1, "return x;\n#pragma once\n"},
         "rt_register_op: operator 'xor': desc->map, line 2: a preprocessor directive ('#') is "
         "not allowed"},
        {{"xor", RT_U32, "{0}", "return a;", 1, "rt_acc_t r = {x}; return r;",
          "struct { double a, b, c, d, e; }"},
         "rt_register_op: operator 'xor': desc->acc, line 1: the struct is 40 bytes long "
         "(8-byte aligned); at most 32"},
        {{"xor", RT_U32, "{0}", "return a;", 1, NULL, "struct { unsigned v; }"},
         "rt_register_op: operator 'xor': desc->map, line 1: missing: a struct accumulator "
         "needs a map from the element into it"},
        {{"xor", RT_U32, "0", "return a ^ b;", 1, NULL, NULL, NULL, "u64"},
         "rt_register_op: operator 'xor': desc->result, line 1: given without a finalize"},
        {{"xor", RT_U32, "0", "return a ^ b;", 1, NULL, NULL, "return a; } {"},
         "rt_register_op: operator 'xor': desc->finalize, line 1: a '}' closes nothing open "
         "here"},
        {{"xor", RT_BF16, "0", "return a ^ b;", 1},
         "rt_register_op: operator 'xor': desc->acc, line 1: a bf16 element needs an "
         "accumulator of 4 or 8 bytes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(rt_register_op(NULL, &bad[i].d, &op), RT_EINVAL);
        if (!strstr(rt_errmsg(NULL), bad[i].expect))
            fail_msg("case %zu: '%s' lacks '%s'", i, rt_errmsg(NULL), bad[i].expect);
    }
    assert_int_equal(rt_register_op(NULL, NULL, &op), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_register_op: desc is NULL");
    rt_op_desc good = {"xor", RT_U32, "0", "return a ^ b;", 1};
    assert_int_equal(rt_register_op(NULL, &good, &op), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_register_op: the context is NULL");
    assert_int_equal(op, (rt_op)-5);   /* untouched */

    int x = 0;
    assert_int_equal(rt_reduce(NULL, (rt_op)RT_OP_USER_FIRST, RT_U32, &x, 1, &x, NULL),
                     RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce: the context is NULL");
    assert_int_equal(rt_reduce(NULL, (rt_op)(RT_OP_USER_FIRST + RT_USER_OPS_MAX), RT_U32, &x, 1,
                               &x, NULL), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "unknown operator 272"));
}

/* Messages are per thread: a failure in one thread does not show in another. */
static void *other_thread(void *arg)
{
    char *seen = arg;
    int x = 0;
    rt_reduce(NULL, (rt_op)55, RT_F32, &x, 1, &x, NULL);
    snprintf(seen, 256, "%s", rt_errmsg(NULL));
    return NULL;
}

static void api_messages_per_thread(void **state)
{
    (void)state;
    int x = 0;
    char seen[256] = "";
    pthread_t t;

    assert_int_equal(rt_reduce(NULL, RT_SUM, (rt_type)77, &x, 1, &x, NULL), RT_EINVAL);
    assert_int_equal(pthread_create(&t, NULL, other_thread, seen), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_non_null(strstr(seen, "unknown operator 55"));
    assert_non_null(strstr(rt_errmsg(NULL), "unknown type 77"));
}

/* ---------------------------------------------------------------- CPU: databases */

/* rt_open refuses 'path' with RT_EDB and 'expect' in the message, leaving it as it was. */
static void refused(const char *dir, const char *fixture, const char *expect)
{
    char path[256], msg[1024];
    size_t len = 0;
    char *before = NULL;
    rt_ctx *ctx = (rt_ctx *)&ctx;

    snprintf(path, sizeof path, "%s/%s", dir, fixture ? fixture : "missing.db");
    if (fixture) {
        char from[256];
        snprintf(from, sizeof from, "tests/db/%s", fixture);
        copy_file(from, path);
        before = slurp(path, &len);
        assert_non_null(before);
    }
    int entries = dir_entries(dir);
    int rc = rt_open_err(path, 0, &ctx, msg, sizeof msg);
    if (rc != RT_EDB || !strstr(msg, expect))
        print_error("%s: %d %s\n", path, rc, msg);
    assert_int_equal(rc, RT_EDB);
    assert_null(ctx);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, expect));
    assert_string_equal(rt_errmsg(NULL), msg);
    assert_int_equal(dir_entries(dir), entries);   /* no -wal, -shm or new file */
    if (fixture)
        assert_true(same_bytes(path, before, len));
    else
        assert_int_equal(access(path, F_OK), -1);
    free(before);
}

static void api_refuses_databases(void **state)
{
    (void)state;
    char dir[64];
    make_dir(dir);
    refused(dir, NULL, "No such file or directory");
    refused(dir, "foreign.db", ": not a redtune database (has no redtune tables)");
    refused(dir, "foreign_wal.db", ": not a redtune database (has no redtune tables)");
    refused(dir, "not_sqlite.db", ": not a redtune database (file is not SQLite)");
    refused(dir, "newer.db", ": schema version 99 is newer than this redtune");
    refused(dir, "corrupt.db", ": corrupt database (PRAGMA quick_check)");
    remove_dir(dir);
}

/* rt_open reads every page (PRAGMA quick_check): a database with a broken page is refused
 * with RT_EDB at open, not at the first query that happens to read that page. The broken
 * page is made here, by flipping bytes in a page of a real database (past its schema). */
static void api_refuses_corrupt_pages(void **state)
{
    (void)state;
    char dir[64], path[128], msg[1024];
    rt_err e;
    store *s = NULL;
    rt_ctx *ctx = NULL;

    make_dir(dir);
    snprintf(path, sizeof path, "%s/t.db", dir);
    assert_int_equal(store_open(path, STORE_WRITE, &s, &e), RT_OK);
    char src[2048];
    memset(src, 'x', sizeof src - 1);
    src[sizeof src - 1] = '\0';
    for (int i = 0; i < 64; i++) {
        char hash[16];
        snprintf(hash, sizeof hash, "k%d", i);
        assert_int_equal(store_put_kernel(s, hash, "gridstride", "B=256", src, &e), RT_OK);
    }
    store_close(s);   /* checkpointed: every page is in the file */
    size_t len = 0;
    char *bytes = slurp(path, &len);
    assert_non_null(bytes);
    assert_true(len > 16 * 4096);
    memset(bytes + len - 4096, 0xa5, 64);   /* the head of the last page */
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
    int rc = rt_open_err(path, 0, &ctx, msg, sizeof msg);
    if (rc != RT_EDB)
        print_error("%d %s\n", rc, msg);
    assert_int_equal(rc, RT_EDB);
    assert_null(ctx);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, ": corrupt database (PRAGMA quick_check)"));
    assert_true(same_bytes(path, bytes, len));
    assert_int_equal(dir_entries(dir), 1);
    free(bytes);
    remove_dir(dir);
}

/* db_path NULL: $REDTUNE_DB, else the first of the places api_find_db looks at. */
static void api_default_db_path(void **state)
{
    (void)state;
    char dir[64], path[128], cwd[4096];
    const char *old = getenv("REDTUNE_DB");
    char *saved = old ? strdup(old) : NULL;
    rt_ctx *ctx = NULL;

    make_dir(dir);
    snprintf(path, sizeof path, "%s/from_env.db", dir);
    setenv("REDTUNE_DB", path, 1);
    assert_int_equal(rt_open(NULL, 0, &ctx), RT_EDB);
    assert_null(ctx);
    assert_non_null(strstr(rt_errmsg(NULL), path));
    assert_int_equal(access(path, F_OK), -1);

    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    for (int k = 0; k < 2; k++) {
        if (k == 0)
            unsetenv("REDTUNE_DB");
        else
            setenv("REDTUNE_DB", "", 1);
        assert_int_equal(rt_open(NULL, 0, &ctx), RT_EDB);
        if (!strstr(rt_errmsg(NULL), "no database: REDTUNE_DB is unset and none of these "
                                     "exists: redtune.db, "))
            print_error("%s\n", rt_errmsg(NULL));
        assert_non_null(strstr(rt_errmsg(NULL), "no database: REDTUNE_DB is unset and none "
                                                "of these exists: redtune.db, "));
        assert_non_null(strstr(rt_errmsg(NULL), "/share/redtune/redtune.db"));
    }
    /* One in the working directory is found (and refused here: it is not a database). */
    FILE *fp = fopen("redtune.db", "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(rt_open(NULL, 0, &ctx), RT_EDB);
    assert_string_equal(rt_errmsg(NULL), "redtune.db: not a redtune database (empty file)");
    assert_int_equal(unlink("redtune.db"), 0);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(dir_entries(dir), 0);
    if (saved)
        setenv("REDTUNE_DB", saved, 1);
    else
        unsetenv("REDTUNE_DB");
    free(saved);
    remove_dir(dir);
}

/* The search order of rt_open(NULL, ...): $REDTUNE_DB, the working directory, beside the
 * library, ../share/redtune beside it, the configured datadir. */
static void api_find_db_order(void **state)
{
    (void)state;
    char dir[64], cwd[4096], mod[128], share[160], data[128], want[256], path[4096];
    const char *how;
    rt_err e;

    make_dir(dir);
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(mod, sizeof mod, "%s/lib", dir);
    snprintf(share, sizeof share, "%s/share/redtune", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    assert_int_equal(mkdir(mod, 0755), 0);
    snprintf(want, sizeof want, "%s/share", dir);
    assert_int_equal(mkdir(want, 0755), 0);
    assert_int_equal(mkdir(share, 0755), 0);
    assert_int_equal(mkdir(data, 0755), 0);
    assert_int_equal(chdir(dir), 0);

    /* None there: every place is named. */
    rt_clearerr(&e);
    assert_int_equal(api_find_db(NULL, mod, data, path, sizeof path, &how, &e), RT_EDB);
    snprintf(want, sizeof want, "none of these exists: redtune.db, %s/redtune.db, "
             "%s/../share/redtune/redtune.db, %s/redtune.db", mod, mod, data);
    if (!strstr(e.msg, want))
        print_error("%s\n", e.msg);
    assert_non_null(strstr(e.msg, want));

    /* Filled from the last place to the first: each new one wins. */
    const char *places[4][2] = {{data, "installed"}, {share, "installed beside libredtune"},
                                {mod, "beside libredtune"}, {".", "the working directory"}};
    for (int i = 0; i < 4; i++) {
        snprintf(want, sizeof want, "%s/redtune.db", places[i][0]);
        make_empty_db(want);
        assert_int_equal(api_find_db("", mod, data, path, sizeof path, &how, &e), RT_OK);
        assert_string_equal(how, places[i][1]);
        if (i == 1)
            snprintf(want, sizeof want, "%s/../share/redtune/redtune.db", mod);
        if (i == 3)
            snprintf(want, sizeof want, "redtune.db");
        assert_string_equal(path, want);
    }
    /* $REDTUNE_DB wins, whether or not the file is there. */
    assert_int_equal(api_find_db("/nonexistent/x.db", mod, data, path, sizeof path, &how, &e),
                     RT_OK);
    assert_string_equal(path, "/nonexistent/x.db");
    assert_string_equal(how, "$REDTUNE_DB");
    /* No module directory: those places are skipped. */
    assert_int_equal(unlink("redtune.db"), 0);
    assert_int_equal(api_find_db(NULL, NULL, data, path, sizeof path, &how, &e), RT_OK);
    assert_string_equal(how, "installed");

    /* The module directory of this test binary is where it lies. */
    char here[4096], exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(k > 0);
    exe[k] = '\0';
    *strrchr(exe, '/') = '\0';
    api_module_dir(here, sizeof here);
    assert_string_equal(here, exe);

    assert_int_equal(chdir(cwd), 0);
    remove_dir(dir);
}

/* Child "nodriver": REDTUNE_LIBCUDA=/nonexistent, a valid database: RT_ECUDA. */
static int child_nodriver(const char *db)
{
    rt_ctx *ctx = (rt_ctx *)&ctx;
    char msg[1024];
    int rc = rt_open_err(db, 0, &ctx, msg, sizeof msg);
    printf("rc=%d ctx=%s msg=%s\nerrmsg=%s\n", rc, ctx ? "set" : "NULL", msg, rt_errmsg(NULL));
    return rc == RT_ECUDA && !ctx && !strcmp(msg, rt_errmsg(NULL)) ? 0 : 1;
}

static void api_no_driver(void **state)
{
    (void)state;
    char dir[64], db[128], out[8192];
    size_t len;

    make_dir(dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    make_empty_db(db);
    char *before = slurp(db, &len);
    assert_non_null(before);
    int st = run_child("nodriver", db, "REDTUNE_LIBCUDA", "/nonexistent", out, sizeof out);
    if (st != 0 || !strstr(out, "msg=no CUDA driver found: /nonexistent"))
        print_error("child exit %d:\n%s\n", st, out);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "rc=-5 ctx=NULL msg=no CUDA driver found: /nonexistent"));
    assert_true(same_bytes(db, before, len));
    assert_int_equal(dir_entries(dir), 1);   /* a WAL-mode file: no -wal, -shm left */
    free(before);
    remove_dir(dir);
}

/* ---------------------------------------------------------------- CPU: the lookup queries */

static long long put_device(store *s, const char *name, const char *uuid, int major,
                            int minor, int sms)
{
    rt_device d;
    rt_err e;
    long long id = 0;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    d.cc_major = major;
    d.cc_minor = minor;
    d.sm_count = sms;
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    if (store_put_device(s, &d, 0, &id, &e) != RT_OK)
        print_error("%s\n", e.msg);
    assert_true(id > 0);
    return id;
}

/* A winner of (device, op, type) at n: kernel 'hash' (put if new) measured at 'us'. */
static void put_best(store *s, long long dev, const char *hash, const char *op,
                     const char *type, long long n, double us)
{
    rt_err e;
    char params[64];
    snprintf(params, sizeof params, "X=%lld", n);
    assert_int_equal(store_put_kernel(s, hash, "fake", params, "// @plan onelaunch\n", &e),
                     RT_OK);
    store_measurement m = {dev, 0, hash, op, type, "flat", n, 0, "ok", "", us, us, us, 10,
                           1.0, 0.5, 1, 1};
    assert_int_equal(store_put_measurement(s, &m, &e), RT_OK);
    assert_int_equal(store_update_best(s, dev, op, type, "flat", n, 0, &e), RT_OK);
}

typedef struct rows_seen {
    int count;
    long long n[8];
    char hash[8][16];
} rows_seen;

static int see_row(const store_best_row *row, void *arg)
{
    rows_seen *r = arg;
    if (r->count < 8) {
        r->n[r->count] = row->n;
        snprintf(r->hash[r->count], sizeof r->hash[0], "%s", row->kernel_hash);
    }
    r->count++;
    return 0;
}

static void api_store_lookup(void **state)
{
    (void)state;
    char dir[64], db[128];
    rt_err e;
    store *s = NULL;

    make_dir(dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long a = put_device(s, "NVIDIA H100 80GB HBM3", "aa", 9, 0, 132);
    long long b = put_device(s, "NVIDIA H100 PCIe", "bb", 9, 0, 114);
    long long c = put_device(s, "NVIDIA GH200 480GB", "cc", 9, 0, 132);
    long long d = put_device(s, "Hypothetical 9.2", "dd", 9, 2, 100);
    long long f = put_device(s, "NVIDIA A100-SXM4-80GB", "ee", 8, 0, 108);
    put_best(s, a, "k_a_min_4096", "min", "f32", 4096, 3.0);
    put_best(s, a, "k_a_min_1024", "min", "f32", 1024, 2.0);
    put_best(s, b, "k_b_min", "min", "f32", 1024, 2.5);
    put_best(s, d, "k_d_min", "min", "f32", 1024, 2.5);
    put_best(s, f, "k_f_min", "min", "f32", 1024, 2.5);
    put_best(s, b, "k_b_sum", "sum", "f32", 1024, 2.5);
    put_best(s, c, "k_c_sum", "sum", "f32", 1024, 2.5);
    put_best(s, d, "k_d_sum", "sum", "f32", 1024, 2.5);
    put_best(s, d, "k_d_max", "max", "f32", 1024, 2.5);
    put_best(s, f, "k_f_prod", "prod", "f32", 1024, 2.5);
    /* Binaries: the newest NVRTC's CUBIN of this arch wins, whatever the insertion order. */
    const char *blobs[] = {"cubin-12.4", "cubin-13.0", "cubin-13.1-sm80"};
    store_binary bin = {(void *)blobs[0], strlen(blobs[0]) + 1, -1, -1, NULL};
    assert_int_equal(store_put_binary(s, "k_a_min_1024", "sm_90", 12040, &bin, &e), RT_OK);
    bin.cubin = (void *)blobs[1];
    bin.size = strlen(blobs[1]) + 1;
    assert_int_equal(store_put_binary(s, "k_a_min_1024", "sm_90", 13000, &bin, &e), RT_OK);
    bin.cubin = (void *)blobs[2];
    bin.size = strlen(blobs[2]) + 1;
    assert_int_equal(store_put_binary(s, "k_a_min_1024", "sm_80", 13010, &bin, &e), RT_OK);
    store_close(s);
    s = NULL;

    size_t len;
    char *before = slurp(db, &len);
    assert_non_null(before);
    assert_int_equal(store_open(db, STORE_READ, &s, &e), RT_OK);
    assert_non_null(store_db(s));
    const char *file = sqlite3_db_filename(store_db(s), "main");
    assert_non_null(file);
    assert_non_null(strstr(file, "/t.db"));

    rt_device me;
    memset(&me, 0, sizeof me);
    snprintf(me.name, sizeof me.name, "NVIDIA H100 80GB HBM3");
    me.cc_major = 9;
    me.cc_minor = 0;
    me.sm_count = 132;
    store_device_match m;
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.id, a);
    assert_int_equal(m.level, STORE_MATCH_EXACT);
    assert_int_equal(m.nbest, 2);
    assert_string_equal(m.name, "NVIDIA H100 80GB HBM3");
    /* Same compute capability: the nearest SM count wins (GH200's 132 over the PCIe 114). */
    assert_int_equal(store_find_device(s, &me, "sum", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.id, c);
    assert_int_equal(m.level, STORE_MATCH_CC);
    assert_int_equal(store_find_device(s, &me, "max", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.id, d);
    assert_int_equal(m.level, STORE_MATCH_MAJOR);
    assert_int_equal(m.cc_minor, 2);
    /* Another major architecture never answers. */
    assert_int_equal(store_find_device(s, &me, "prod", "f32", "flat", 0, &m, &e),
                     RT_ENOTFOUND);
    assert_non_null(strstr(e.msg, "no device of compute capability 9.x has a winner for "
                                  "prod f32 flat cold"));
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 1, &m, &e), RT_ENOTFOUND);
    /* A same-named GPU with fewer SMs (a cut-down part) is not the exact device. */
    me.sm_count = 114;
    snprintf(me.name, sizeof me.name, "NVIDIA H100 PCIe");
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.id, b);
    assert_int_equal(m.level, STORE_MATCH_EXACT);
    me.sm_count = 120;
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.level, STORE_MATCH_CC);
    assert_int_equal(m.id, b);   /* 114 SMs is nearer 120 than 132 */

    rows_seen r = {0};
    assert_int_equal(store_list_best_for_device(s, a, "min", "f32", "flat", 0, see_row, &r, &e),
                     RT_OK);
    assert_int_equal(r.count, 2);
    assert_int_equal(r.n[0], 1024);
    assert_string_equal(r.hash[0], "k_a_min_1024");
    assert_int_equal(r.n[1], 4096);
    memset(&r, 0, sizeof r);
    assert_int_equal(store_list_best_for_device(s, a, "sum", "f32", "flat", 0, see_row, &r, &e),
                     RT_OK);
    assert_int_equal(r.count, 0);

    int ver = -1;
    assert_int_equal(store_get_binary_any(s, "k_a_min_1024", "sm_90", &bin, &ver, &e), RT_OK);
    assert_int_equal(ver, 13000);
    assert_string_equal((const char *)bin.cubin, "cubin-13.0");
    store_binary_free(&bin);
    assert_int_equal(store_get_binary_any(s, "k_a_min_1024", "sm_86", &bin, &ver, &e),
                     RT_ENOTFOUND);
    assert_null(bin.cubin);
    assert_int_equal(ver, 0);
    assert_non_null(strstr(e.msg, "no binary of kernel k_a_min_1024 for sm_86"));
    store_close(s);
    assert_true(same_bytes(db, before, len));   /* the lookups never write */
    free(before);
    remove_dir(dir);
}

/* ---------------------------------------------------------------- GPU: fixtures */

static struct {
    int have;                 /* -1 not probed, 0 no GPU, 1 yes */
    char why[RT_ERRMSG_MAX];
    rt_device dev;
    char arch[16];
    CUdevice cudev;
    CUcontext cuctx;
    char dir[64];
    char exact_db[128];       /* this GPU: tree_sequential at n=1000 (CUBIN), gridstride at 2^20 */
    size_t exact_len;
    char *exact_bytes;        /* its bytes before any rt_open */
} G = {-1};

static int gpu_setup(void **state)
{
    (void)state;
    rt_err e;
    if (G.have >= 0)
        return 0;
    G.have = 0;
    if (driver_device_query(0, &G.dev, &e)) {
        snprintf(G.why, sizeof G.why, "%s", e.msg);
        return 0;
    }
    if (cu.DeviceGet(&G.cudev, 0) || cu.DevicePrimaryCtxRetain(&G.cuctx, G.cudev)
        || cu.CtxSetCurrent(G.cuctx)) {
        snprintf(G.why, sizeof G.why, "could not create a context on %s", G.dev.name);
        return 0;
    }
    if (nvrtc_load(&e)) {
        snprintf(G.why, sizeof G.why, "%s", e.msg);
        return 0;
    }
    device_arch(&G.dev, G.arch);
    strcpy(G.dir, "/tmp/redtune-api-gpu-XXXXXX");
    if (!mkdtemp(G.dir)) {
        snprintf(G.why, sizeof G.why, "mkdtemp failed");
        return 0;
    }
    G.have = 1;
    return 0;
}

static int gpu_teardown(void **state)
{
    (void)state;
    if (G.have == 1) {
        remove_dir(G.dir);
        cu.DevicePrimaryCtxRelease(G.cudev);
    }
    free(G.exact_bytes);
    G.exact_bytes = NULL;
    return 0;
}

#define NEED_GPU() GPU_UTIL_NEED(G.have, G.why)

/* A winner to put into a test database. */
typedef struct entry {
    long long device_id;
    rt_op op;
    rt_type type;
    const char *family;
    const char *params;       /* "B=256 R=2" */
    long long n;
    int cubin;                /* 0: source only; 1: CUBIN of this NVRTC for this arch;
                               * 2: CUBIN for this arch labelled NVRTC 11.8;
                               * 3: CUBIN labelled with 'arch_label' */
    const char *arch_label;
    double median_us;         /* a made-up figure: these are fixtures, not measurements */
    /* filled by put_entries */
    char *src;
    char hash[RT_HASH_HEX];
    char fmt[256];
    nvrtc_output o;
    int rc;
} entry;

static void compile_entry(int i, void *arg)
{
    entry *en = &((entry *)arg)[i];
    rt_err *e = malloc(sizeof *e);
    if (!e) {
        en->rc = RT_ENOMEM;
        return;
    }
    en->rc = en->cubin ? nvrtc_compile(en->src, "entry.cu", G.arch, &en->o, e) : RT_OK;
    if (en->rc)
        fprintf(stderr, "# %s\n", e->msg);
    free(e);
}

/* Emit, compile (in parallel) and store the entries, with their winners. */
static void put_entries(store *s, entry *en, int count)
{
    rt_err e;
    for (int i = 0; i < count; i++) {
        rt_config cfg;
        char buf[256], *save = NULL;
        config_default(family_find(en[i].family), &cfg);
        snprintf(buf, sizeof buf, "%s", en[i].params);
        for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(tok, '=');
            assert_non_null(eq);
            *eq = '\0';
            assert_int_equal(config_set(&cfg, tok, atoll(eq + 1), &e), RT_OK);
        }
        config_format(&cfg, en[i].fmt, sizeof en[i].fmt);
        assert_int_equal(codegen_emit(&cfg, en[i].op, en[i].type, &en[i].src, &e), RT_OK);
        hash_hex(en[i].src, strlen(en[i].src), en[i].hash);
    }
    pool_run(count, pool_cores(), compile_entry, en);
    for (int i = 0; i < count; i++) {
        const char *op = rt_op_name(en[i].op), *type = rt_type_name(en[i].type);
        assert_int_equal(en[i].rc, RT_OK);
        assert_int_equal(store_put_kernel(s, en[i].hash, en[i].family, en[i].fmt, en[i].src,
                                          &e), RT_OK);
        if (en[i].cubin) {
            store_binary b = {en[i].o.cubin, en[i].o.size, -1, -1, NULL};
            const char *arch = en[i].cubin == 3 ? en[i].arch_label : G.arch;
            int ver = en[i].cubin == 2 ? 11080 : nvrtc_version();
            assert_int_equal(store_put_binary(s, en[i].hash, arch, ver, &b, &e), RT_OK);
        }
        double us = en[i].median_us;
        store_measurement m = {en[i].device_id, 0, en[i].hash, op, type, "flat", en[i].n, 0,
                               "ok", "", us, us, us, 10, 1.0, 0.5, 1, 1};
        optype_ts ts;   /* the spec the library resolves the call to: the row's key */
        assert_int_equal(optype_resolve(en[i].op, en[i].type, &ts, NULL, 0), 0);
        m.acc = rt_type_name(ts.acc);
        m.result = rt_type_name(ts.res);
        assert_int_equal(store_put_measurement(s, &m, &e), RT_OK);
        if (store_update_best_spec(s, en[i].device_id, op, type, m.acc, m.result, "flat",
                                   en[i].n, 0, &e))
            print_error("%s\n", e.msg);
        free(en[i].src);
        en[i].src = NULL;
        nvrtc_output_free(&en[i].o);
    }
}

/* A device row: this GPU, or a made-up one derived from it. */
static long long put_gpu(store *s, const char *name, const char *uuid, int dmajor, int dminor,
                         int dsms)
{
    rt_device d = G.dev;
    rt_err e;
    long long id = 0;
    if (name) {
        snprintf(d.name, sizeof d.name, "%s", name);
        snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
        d.ordinal = 7;
    }
    d.cc_major += dmajor;
    d.cc_minor += dminor;
    d.sm_count += dsms;
    if (store_put_device(s, &d, 0, &id, &e))
        print_error("%s\n", e.msg);
    assert_true(id > 0);
    return id;
}

/* Whether the library defines (op, type): the loops over every pair skip the others. */
static int defined(int op, int t)
{
    optype_ts ts;
    return optype_resolve((rt_op)op, (rt_type)t, &ts, NULL, 0) == 0;
}

#define TS_PARAMS "B=256 R=2 LOAD_ADD=1 WARP=1 UNROLL=1"
#define GS_PARAMS "B=128 V=2 U=2 G=2"

/* The database of this GPU: for every op x type, tree_sequential won at n = 1000 (its CUBIN
 * stored) and gridstride at n = 2^20 (source only: the library compiles it). */
static void need_exact_db(void)
{
    if (G.exact_bytes)
        return;
    rt_err e;
    store *s = NULL;
    entry en[2 * RT_OP_COUNT * RT_TYPE_COUNT];
    int k = 0;
    snprintf(G.exact_db, sizeof G.exact_db, "%s/exact.db", G.dir);
    assert_int_equal(store_open(G.exact_db, STORE_WRITE, &s, &e), RT_OK);
    long long id = put_gpu(s, NULL, NULL, 0, 0, 0);
    memset(en, 0, sizeof en);
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++) {
            if (!defined(op, t))
                continue;
            en[k++] = (entry){id, op, t, "tree_sequential", TS_PARAMS, 1000, 1, NULL, 4.0};
            en[k++] = (entry){id, op, t, "gridstride", GS_PARAMS, 1 << 20, 0, NULL, 9.0};
        }
    put_entries(s, en, k);
    store_close(s);
    G.exact_bytes = slurp(G.exact_db, &G.exact_len);
    assert_non_null(G.exact_bytes);
}

/* Device buffers for one checker: n_max + 1 elements of 8 bytes, a 16-byte result. */
typedef struct bufs {
    CUdeviceptr in, out;
    void *host;
    unsigned long long n_max;
    CUstream s;
    int threads;   /* host threads for data_fill / data_reference */
} bufs;

static int bufs_make(bufs *b, unsigned long long n_max, int threads, CUstream s)
{
    memset(b, 0, sizeof *b);
    b->n_max = n_max;
    b->threads = threads;
    b->s = s;
    b->host = malloc((n_max + 1) * 8);
    if (!b->host || cu.MemAlloc(&b->in, (n_max + 1) * 8) || cu.MemAlloc(&b->out, 16))
        return -1;
    return 0;
}

static void bufs_free(bufs *b)
{
    if (b->in)
        cu.MemFree(b->in);
    if (b->out)
        cu.MemFree(b->out);
    free(b->host);
}

/*
 * Reduce n elements (starting one element past an aligned address) with rt_reduce on b->s,
 * or with rt_reduce_temp when temp is non-zero, and check the result against the CPU
 * reference (n == 0: the identity). 0 when right; else 1 with 'why'.
 */
static int check_one(rt_ctx *ctx, bufs *b, rt_op op, rt_type type, unsigned long long n,
                     CUdeviceptr temp, size_t temp_bytes, char *why, size_t len)
{
    size_t es = optype_size(type), acc = optype_res_size(op, type);   /* bytes written */
    unsigned char got[32], want[32];
    data_ref ref;
    int rc;

    if (n) {
        data_fill(b->host, type, op, n + 1, 1000 + n + op * 7 + type, n / 2 + 1, b->threads);
        data_reference((char *)b->host + es, type, op, n, &ref, b->threads);
        if (cu.MemcpyHtoD(b->in, b->host, (n + 1) * es))
            return snprintf(why, len, "upload failed"), 1;
    } else {
        optype_empty_result(op, type, want);
    }
    /* Poison the result, and make sure the poison lands before the reduction (the stream
     * may be non-blocking, unordered with the legacy stream the memset runs on). */
    if (cu.MemsetD8(b->out, 0xa5, 16) || cu.CtxSynchronize())
        return snprintf(why, len, "poisoning the result failed"), 1;
    const void *in = (const void *)(uintptr_t)(b->in + es);
    void *out = (void *)(uintptr_t)b->out;
    rc = temp ? rt_reduce_temp(ctx, op, type, in, n, out, (void *)(uintptr_t)temp, temp_bytes,
                               b->s)
              : rt_reduce(ctx, op, type, in, n, out, b->s);
    if (rc)
        return snprintf(why, len, "%s %s n=%llu: %s: %s", rt_op_name(op), rt_type_name(type),
                        n, rt_strerror(rc), rt_errmsg(ctx)), 1;
    CUresult r = cu.StreamSynchronize(b->s);
    if (r == CUDA_SUCCESS)
        r = cu.MemcpyDtoH(got, b->out, acc);
    if (r != CUDA_SUCCESS)
        return snprintf(why, len, "%s %s n=%llu: CUDA error %d after the reduction",
                        rt_op_name(op), rt_type_name(type), n, (int)r), 1;
    if (n == 0) {
        if (memcmp(got, want, acc))
            return snprintf(why, len, "%s %s n=0: not the identity", rt_op_name(op),
                            rt_type_name(type)), 1;
        return 0;
    }
    char w[512];
    if (!data_check(got, &ref, type, op, n, w, sizeof w))
        return snprintf(why, len, "%s %s n=%llu: %s", rt_op_name(op), rt_type_name(type), n,
                        w), 1;
    return 0;
}

/* 5000: tree_sequential over several blocks, so its partials use the temporary storage
 * that gridstride's counter shares, on the same stream, right before a gridstride launch. */
static const unsigned long long sizes[] = {0, 1, 1000, 5000, (1u << 20) + 3};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define NMAX ((1u << 20) + 3)

/* Every op x type x size on ctx, on a non-blocking stream. */
static void check_all(rt_ctx *ctx)
{
    CUstream s;
    bufs b;
    char why[1024];
    int failures = 0;
    assert_int_equal(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(bufs_make(&b, NMAX, pool_cores(), s), 0);
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++)
            for (int k = 0; k < NSIZES && defined(op, t); k++)
                if (check_one(ctx, &b, op, t, sizes[k], 0, 0, why, sizeof why)) {
                    print_error("%s\n", why);
                    failures++;
                }
    bufs_free(&b);
    cu.StreamDestroy(s);
    assert_int_equal(failures, 0);
}

static void expect_explain(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n,
                           const char *const *want)
{
    char buf[2048];
    int rc = rt_explain(ctx, op, type, n, buf, sizeof buf);
    if (rc)
        print_error("%s\n", rt_errmsg(ctx));
    assert_int_equal(rc, RT_OK);
    for (int i = 0; want[i]; i++)
        if (!strstr(buf, want[i])) {
            print_error("%s %s n=%llu: no \"%s\" in:\n%s", rt_op_name(op), rt_type_name(type),
                        n, want[i], buf);
            fail();
        }
}

/* ---------------------------------------------------------------- GPU: tests */

static void api_gpu_database(void **state)
{
    (void)state;
    NEED_GPU();
    need_exact_db();
    rt_ctx *ctx = NULL;
    char msg[1024];
    int rc = rt_open_err(G.exact_db, 0, &ctx, msg, sizeof msg);
    if (rc)
        print_error("%s\n", msg);
    assert_int_equal(rc, RT_OK);
    check_all(ctx);
    char tuned_small[64], tuned_large[64], cubin_db[64];
    snprintf(tuned_small, sizeof tuned_small, "tuned n = 1000, median 4.00 us");
    snprintf(tuned_large, sizeof tuned_large, "tuned n = %d, median 9.00 us", 1 << 20);
    snprintf(cubin_db, sizeof cubin_db, "CUBIN: from the database (made by NVRTC %d.%d)",
             nvrtc_version() / 1000, nvrtc_version() % 1000 / 10);
    const char *small[] = {"kernel: tree_sequential " TS_PARAMS " (multipass plan",
                           "fallback level: exact device", tuned_small, cubin_db,
                           G.dev.name, NULL};
    const char *large[] = {"kernel: gridstride " GS_PARAMS " (onelaunch plan",
                           "fallback level: exact device", tuned_large,
                           "CUBIN: compiled here by NVRTC",
                           "from the template, for the database's config", NULL};
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++) {
            if (!defined(op, t))
                continue;
            expect_explain(ctx, op, t, 1, small);
            expect_explain(ctx, op, t, 1000, small);
            expect_explain(ctx, op, t, 3000, small);      /* 2^11.5: nearer 1000 than 2^20 */
            expect_explain(ctx, op, t, 5000, small);
            expect_explain(ctx, op, t, NMAX, large);
            expect_explain(ctx, op, t, 1ULL << 34, large);
        }
    const char *zero[] = {"n = 0: no kernel", NULL};
    expect_explain(ctx, RT_SUM, RT_F32, 0, zero);
    rt_close(ctx);
    assert_true(same_bytes(G.exact_db, G.exact_bytes, G.exact_len));
}

/* A stored kernel whose source was edited after it was stored (its hash kept) is never run:
 * a winner of a known family runs as the library's own unit for its config; one of an
 * unknown family is refused, RT_EDB naming the hash. */
static void api_gpu_tampered(void **state)
{
    (void)state;
    NEED_GPU();
    need_exact_db();
    char db[128], hash[RT_HASH_HEX] = "";
    sqlite3 *raw = NULL;
    sqlite3_stmt *st = NULL;
    snprintf(db, sizeof db, "%s/tampered.db", G.dir);
    copy_file(G.exact_db, db);
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(raw, "SELECT hash FROM kernels WHERE family = "
                                        "'gridstride' AND instr(source, 'op sum, type f32 */')",
                                        -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(hash, sizeof hash, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(raw, "UPDATE kernels SET source = source || '// edited' "
                                  "WHERE family = 'gridstride'", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);

    /* A family this library knows: the winner runs as the library's own unit for its
     * config, so the edited source is never compiled, and the CUBIN is taken only if it was
     * stored for exactly that unit. */
    rt_ctx *ctx = NULL;
    CUdeviceptr in, out;
    const unsigned long long n = 1 << 20;
    float *host = malloc(n * sizeof *host), got = 0;
    assert_non_null(host);
    for (unsigned long long i = 0; i < n; i++)
        host[i] = (float)(i % 7);   /* exact in f32: the sum is 3 * n minus a little */
    double want = 0;
    for (unsigned long long i = 0; i < n; i++)
        want += host[i];
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    assert_int_equal(cu.MemAlloc(&in, n * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, host, n * 4), CUDA_SUCCESS);
    int rc = rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, n,
                       (void *)(uintptr_t)out, NULL);
    if (rc)
        print_error("%d %s\n", rc, rt_errmsg(ctx));
    assert_int_equal(rc, RT_OK);
    assert_int_equal(cu.StreamSynchronize(NULL), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&got, out, 4), CUDA_SUCCESS);
    assert_true(got == (float)want);
    rt_close(ctx);

    /* A family it does not know (a database of a newer redtune): only then is the stored
     * source run, and an edited one is refused, naming its hash. */
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "UPDATE kernels SET family = 'from_the_future' "
                                  "WHERE family = 'gridstride'", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    rc = rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, n, (void *)(uintptr_t)out,
                   NULL);
    if (rc != RT_EDB || !strstr(rt_errmsg(ctx), hash))
        print_error("%d %s\n", rc, rt_errmsg(ctx));
    assert_int_equal(rc, RT_EDB);
    assert_non_null(strstr(rt_errmsg(ctx), hash));
    assert_non_null(strstr(rt_errmsg(ctx), "the SHA-256 of its source is"));
    assert_int_equal(cu.StreamSynchronize(NULL), CUDA_SUCCESS);
    free(host);
    cu.MemFree(in);
    cu.MemFree(out);
    rt_close(ctx);
}

static void api_gpu_builtin_default(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128];
    rt_err e;
    store *s = NULL;
    snprintf(db, sizeof db, "%s/foreign_gpu.db", G.dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    /* A winner for another major architecture only: it must not answer for this GPU. */
    long long id = put_gpu(s, "Imaginary GPU", "00000000000000000000000000000001", 1, 0, 0);
    entry en[] = {{id, RT_SUM, RT_F32, "gridstride", GS_PARAMS, 1000, 0, NULL, 3.0}};
    put_entries(s, en, 1);
    store_close(s);
    size_t len;
    char *before = slurp(db, &len);
    assert_non_null(before);

    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    check_all(ctx);
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++) {
            if (!defined(op, t))
                continue;
            char params[64];
            int v = (int)(16 / optype_size(t));
            snprintf(params, sizeof params, "kernel: gridstride B=256 V=%d U=%d G=4 "
                     "(onelaunch plan", v, 16 / v < 4 ? 16 / v : 4);
            const char *want[] = {params, "fallback level: built-in default",
                                  "database entry: none", "compiled here by NVRTC",
                                  "from the built-in template", NULL};
            expect_explain(ctx, op, t, 1000, want);
            expect_explain(ctx, op, t, NMAX, want);
        }
    rt_close(ctx);
    assert_true(same_bytes(db, before, len));
    free(before);
}

/* REDTUNE_CAPTURE: a reduction at a size this GPU has no winner at writes its case once;
 * one at the tuned size writes nothing. */
static void api_gpu_capture(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128], cap[160], want[512];
    rt_err e;
    store *s = NULL;
    snprintf(db, sizeof db, "%s/capture.db", G.dir);
    snprintf(cap, sizeof cap, "%s/capture.tsv", G.dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long me = put_gpu(s, NULL, NULL, 0, 0, 0);
    entry en[] = {{me, RT_SUM, RT_F32, "gridstride", GS_PARAMS, 1000, 0, NULL, 3.0}};
    put_entries(s, en, 1);
    store_close(s);

    rt_ctx *ctx = NULL;
    CUdeviceptr in, out;
    setenv("REDTUNE_CAPTURE", cap, 1);
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    unsetenv("REDTUNE_CAPTURE");
    assert_int_equal(cu.MemAlloc(&in, 5000 * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(in, 0, 5000 * 4), CUDA_SUCCESS);
    unsigned long long ns[] = {1000, 5000, 5000, 1000};
    for (int i = 0; i < 4; i++)
        assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, ns[i],
                                   (void *)(uintptr_t)out, NULL), RT_OK);
    assert_int_equal(cu.StreamSynchronize(NULL), CUDA_SUCCESS);
    rt_close(ctx);
    cu.MemFree(in);
    cu.MemFree(out);
    size_t len;
    char *got = slurp(cap, &len);
    assert_non_null(got);
    snprintf(want, sizeof want, "%ssum\tf32\tflat\t5000\t0\tnearest\t-\t%s\n",
             CAPTURE_HEADER, G.dev.name);
    assert_string_equal(got, want);
    free(got);
}

static void api_gpu_levels(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128], label[16];
    rt_err e;
    store *s = NULL;
    snprintf(db, sizeof db, "%s/levels.db", G.dir);
    snprintf(label, sizeof label, "sm_%d%d", G.dev.cc_major, G.dev.cc_minor + 1);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long me = put_gpu(s, NULL, NULL, 0, 0, 0);
    long long cc = put_gpu(s, "Other GPU, same cc", "00000000000000000000000000000002", 0, 0, 10);
    long long major = put_gpu(s, "Other GPU, same major", "00000000000000000000000000000003",
                              0, 1, 0);
    entry en[] = {
        {cc, RT_SUM, RT_F32, "tree_sequential", TS_PARAMS, 1000, 1, NULL, 5.0},
        {major, RT_MAX, RT_I32, "tree_sequential", TS_PARAMS, 1000, 3, label, 6.0},
        /* the exact device answers even where another has a nearer tuned size */
        {me, RT_ARGMIN, RT_U64, "gridstride", GS_PARAMS, 1 << 20, 1, NULL, 7.0},
        {cc, RT_ARGMIN, RT_U64, "tree_sequential", TS_PARAMS, 1000, 1, NULL, 1.0},
    };
    put_entries(s, en, (int)(sizeof en / sizeof en[0]));
    store_close(s);

    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    const char *want_cc[] = {"fallback level: same compute capability", "Other GPU, same cc",
                             "tree_sequential", "CUBIN: from the database", NULL};
    expect_explain(ctx, RT_SUM, RT_F32, 1000, want_cc);
    /* Its CUBIN is labelled for another arch: compiled here, the library's unit for the
     * winner's config. */
    const char *want_major[] = {"fallback level: same major architecture",
                                "Other GPU, same major", "compiled here by NVRTC",
                                "from the template, for the database's config", NULL};
    expect_explain(ctx, RT_MAX, RT_I32, 1000, want_major);
    const char *want_exact[] = {"fallback level: exact device", "gridstride", NULL};
    expect_explain(ctx, RT_ARGMIN, RT_U64, 1000, want_exact);
    const char *want_builtin[] = {"fallback level: built-in default", NULL};
    expect_explain(ctx, RT_PROD, RT_F64, 1000, want_builtin);

    CUstream st;
    bufs b;
    char why[1024];
    assert_int_equal(cu.StreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(bufs_make(&b, NMAX, pool_cores(), st), 0);
    const struct { rt_op op; rt_type t; } cases[] = {
        {RT_SUM, RT_F32}, {RT_MAX, RT_I32}, {RT_ARGMIN, RT_U64}, {RT_PROD, RT_F64}};
    int failures = 0;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < NSIZES; k++)
            if (check_one(ctx, &b, cases[i].op, cases[i].t, sizes[k], 0, 0, why, sizeof why)) {
                print_error("%s\n", why);
                failures++;
            }
    bufs_free(&b);
    cu.StreamDestroy(st);
    rt_close(ctx);
    assert_int_equal(failures, 0);
}

/* Caller-supplied temporary storage, garbage in it; bad pointers; the legacy stream. */
static void api_gpu_temp_and_pointers(void **state)
{
    (void)state;
    NEED_GPU();
    need_exact_db();
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(G.exact_db, 0, &ctx), RT_OK);
    CUstream st;
    bufs b;
    char why[1024];
    int failures = 0;
    size_t bytes = 0, most = 0;
    assert_int_equal(cu.StreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(bufs_make(&b, NMAX, pool_cores(), st), 0);
    for (int k = 0; k < NSIZES; k++) {
        assert_int_equal(rt_temp_bytes(ctx, RT_ARGMAX, RT_F64, sizes[k], &bytes), RT_OK);
        if (sizes[k] == 0 || sizes[k] == NMAX)   /* NMAX: gridstride, a one-launch plan */
            assert_true(sizes[k] ? bytes > 256 : bytes == 0);
        if (bytes > most)
            most = bytes;
    }
    CUdeviceptr temp;
    assert_int_equal(cu.MemAlloc(&temp, most + 4096), CUDA_SUCCESS);
    for (int round = 0; round < 2; round++)
        for (int op = 0; op < RT_OP_COUNT; op++)
            for (int k = 1; k < NSIZES; k++) {
                rt_type ty = (rt_type)((op + k) % RT_TYPE_COUNT);
                if (!defined(op, ty))
                    ty = RT_F32;
                assert_int_equal(rt_temp_bytes(ctx, op, ty, sizes[k], &bytes), RT_OK);
                assert_true(bytes <= most + 4096);
                /* garbage where the one-launch counter lives: the library clears it */
                assert_int_equal(cu.MemsetD8(temp, 0xff, most + 4096), CUDA_SUCCESS);
                if (check_one(ctx, &b, op, ty, sizes[k], temp, bytes, why, sizeof why)) {
                    print_error("caller temp: %s\n", why);
                    failures++;
                }
            }
    assert_int_equal(failures, 0);

    const void *in = (const void *)(uintptr_t)(b.in + 4);
    void *out = (void *)(uintptr_t)b.out, *t = (void *)(uintptr_t)temp;
    assert_int_equal(rt_temp_bytes(ctx, RT_SUM, RT_F32, NMAX, &bytes), RT_OK);
    assert_true(bytes > 256);
    assert_int_equal(rt_reduce_temp(ctx, RT_SUM, RT_F32, in, NMAX, out, t, bytes - 1, st),
                     RT_EINVAL);
    char need[128];
    snprintf(need, sizeof need, "rt_reduce_temp: sum f32 n = %u needs %zu bytes of temporary "
             "storage, %zu given", NMAX, bytes, bytes - 1);
    assert_string_equal(rt_errmsg(ctx), need);
    assert_int_equal(rt_reduce_temp(ctx, RT_SUM, RT_F32, in, NMAX, out,
                                    (char *)t + 16, bytes, st), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "is not aligned to 256 bytes"));
    assert_int_equal(rt_reduce_temp(ctx, RT_SUM, RT_F32, in, 0, out, NULL, 0, st), RT_OK);
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, (const char *)in + 1, 10, out, st),
                     RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "is not aligned to its 4-byte f32 elements"));
    assert_int_equal(rt_reduce(ctx, RT_ARGMIN, RT_F32, in, 10, (char *)out + 4, st), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "d_out"));
    assert_non_null(strstr(rt_errmsg(ctx), "is not aligned to 8 bytes (argmin f32)"));
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, in, 10, NULL, st), RT_EINVAL);
    assert_string_equal(rt_errmsg(ctx), "rt_reduce: d_out is NULL");
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, NULL, 10, out, st), RT_EINVAL);
    assert_string_equal(rt_errmsg(ctx), "rt_reduce: d_in is NULL with n = 10");
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, NULL, 0, out, st), RT_OK);
    assert_string_equal(rt_errmsg(ctx), "");
    assert_int_equal(rt_temp_bytes(ctx, RT_SUM, RT_F32, 10, NULL), RT_EINVAL);
    char small[8];
    assert_int_equal(rt_explain(ctx, RT_SUM, RT_F32, 10, small, sizeof small), RT_OK);
    assert_int_equal(strlen(small), sizeof small - 1);   /* cut, NUL-terminated */
    assert_int_equal(cu.StreamSynchronize(st), CUDA_SUCCESS);

    /* The legacy default stream (NULL) and the per-thread default stream. */
    for (int k = 0; k < 2 * NSIZES; k++) {
        b.s = k < NSIZES ? NULL : CU_STREAM_PER_THREAD;
        if (check_one(ctx, &b, RT_MIN, RT_F32, sizes[k % NSIZES], 0, 0, why, sizeof why)) {
            print_error("%s stream: %s\n", k < NSIZES ? "legacy" : "per-thread", why);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    cu.MemFree(temp);
    bufs_free(&b);
    cu.StreamDestroy(st);
    rt_close(ctx);
}

/* More streams than the context keeps temp blocks for: it recycles them; rt_release_temp. */
static void api_gpu_many_streams(void **state)
{
    (void)state;
    NEED_GPU();
    need_exact_db();
    enum { NS = 70 };
    rt_ctx *ctx = NULL;
    CUstream st[NS];
    CUdeviceptr out;
    bufs b;
    char why[1024];
    assert_int_equal(rt_open(G.exact_db, 0, &ctx), RT_OK);
    assert_int_equal(bufs_make(&b, NMAX, pool_cores(), NULL), 0);
    assert_int_equal(cu.MemAlloc(&out, NS * 16), CUDA_SUCCESS);
    data_ref ref;
    data_fill(b.host, RT_F32, RT_SUM, NMAX, 77, 3, b.threads);
    data_reference(b.host, RT_F32, RT_SUM, NMAX, &ref, b.threads);
    assert_int_equal(cu.MemcpyHtoD(b.in, b.host, (size_t)NMAX * 4), CUDA_SUCCESS);
    for (int i = 0; i < NS; i++) {
        assert_int_equal(cu.StreamCreate(&st[i], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
        int rc = rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)b.in, NMAX,
                           (void *)(uintptr_t)(out + 16 * i), st[i]);
        if (rc)
            print_error("%s\n", rt_errmsg(ctx));
        assert_int_equal(rc, RT_OK);
    }
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    for (int i = 0; i < NS; i++) {
        float got;
        assert_int_equal(cu.MemcpyDtoH(&got, out + 16 * i, 4), CUDA_SUCCESS);
        if (!data_check(&got, &ref, RT_F32, RT_SUM, NMAX, why, sizeof why)) {
            print_error("stream %d: %s\n", i, why);
            fail();
        }
    }
    assert_int_equal(rt_release_temp(ctx), RT_OK);
    b.s = st[0];
    assert_int_equal(check_one(ctx, &b, RT_SUM, RT_F32, NMAX, 0, 0, why, sizeof why), 0);
    for (int i = 0; i < NS; i++)
        cu.StreamDestroy(st[i]);
    cu.MemFree(out);
    bufs_free(&b);
    rt_close(ctx);
}

/* One context, four host threads, each on its own stream, racing for the first decisions. */
typedef struct worker_arg {
    rt_ctx *ctx;
    int index;
    int failures;
    char why[1024];
} worker_arg;

static void *worker(void *arg)
{
    worker_arg *w = arg;
    static const rt_op ops[] = {RT_SUM, RT_MIN, RT_ARGMAX};
    static const rt_type types[] = {RT_F32, RT_I64, RT_U32};
    CUstream s = NULL;
    bufs b;
    memset(&b, 0, sizeof b);
    if (cu.CtxSetCurrent(G.cuctx) || cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING)
        || bufs_make(&b, NMAX, 1, s)) {
        w->failures++;
        snprintf(w->why, sizeof w->why, "thread %d: setting up failed", w->index);
        goto done;
    }
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 9 * NSIZES; i++) {
            int j = (i + w->index * 5) % (9 * NSIZES);   /* each thread its own order */
            char why[1024];
            if (check_one(w->ctx, &b, ops[j / NSIZES % 3], types[j / NSIZES / 3],
                          sizes[j % NSIZES], 0, 0, why, sizeof why)) {
                if (!w->failures++)
                    snprintf(w->why, sizeof w->why, "thread %d: %s", w->index, why);
            }
        }
done:
    bufs_free(&b);
    if (s)
        cu.StreamDestroy(s);
    return NULL;
}

/* A thread with no current CUDA context: the library makes its own current for the call and
 * leaves the thread as it found it. */
typedef struct bare_arg {
    rt_ctx *ctx;
    CUdeviceptr in, out;
    int rc;
    int current_after;   /* 1: a context was current after the calls */
    char msg[1024];
} bare_arg;

static void *bare_thread(void *arg)
{
    bare_arg *a = arg;
    CUresult (*get_current)(CUcontext *) = NULL;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CUcontext cur = NULL;
    char buf[1024];
    if (h)
        *(void **)&get_current = dlsym(h, "cuCtxGetCurrent");
    a->rc = rt_reduce(a->ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)a->in, NMAX,
                      (void *)(uintptr_t)a->out, NULL);
    if (a->rc == RT_OK)
        a->rc = rt_explain(a->ctx, RT_SUM, RT_F32, NMAX, buf, sizeof buf);
    snprintf(a->msg, sizeof a->msg, "%s", rt_errmsg(a->ctx));
    a->current_after = !get_current || get_current(&cur) != CUDA_SUCCESS || cur != NULL;
    if (h)
        dlclose(h);
    return NULL;
}

static void api_gpu_threads(void **state)
{
    (void)state;
    NEED_GPU();
    need_exact_db();
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(G.exact_db, 0, &ctx), RT_OK);
    pthread_t t[4];
    worker_arg w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker_arg){ctx, i, 0, ""};
        assert_int_equal(pthread_create(&t[i], NULL, worker, &w[i]), 0);
    }
    int failures = 0;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (w[i].failures)
            print_error("%s (%d failures)\n", w[i].why, w[i].failures);
        failures += w[i].failures;
    }
    assert_int_equal(failures, 0);

    bufs b;
    char why[1024];
    data_ref ref;
    float got;
    assert_int_equal(bufs_make(&b, NMAX, pool_cores(), NULL), 0);
    data_fill(b.host, RT_F32, RT_SUM, NMAX, 99, 5, b.threads);
    data_reference(b.host, RT_F32, RT_SUM, NMAX, &ref, b.threads);
    assert_int_equal(cu.MemcpyHtoD(b.in, b.host, (size_t)NMAX * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(b.out, 0xa5, 16), CUDA_SUCCESS);
    bare_arg a = {ctx, b.in, b.out, -1, -1, ""};
    pthread_t bt;
    assert_int_equal(pthread_create(&bt, NULL, bare_thread, &a), 0);
    assert_int_equal(pthread_join(bt, NULL), 0);
    if (a.rc)
        print_error("%s\n", a.msg);
    assert_int_equal(a.rc, RT_OK);
    assert_int_equal(a.current_after, 0);
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&got, b.out, 4), CUDA_SUCCESS);
    if (!data_check(&got, &ref, RT_F32, RT_SUM, NMAX, why, sizeof why)) {
        print_error("thread with no context: %s\n", why);
        fail();
    }
    bufs_free(&b);
    rt_close(ctx);
    assert_true(same_bytes(G.exact_db, G.exact_bytes, G.exact_len));
}

/* Child "nonvrtc": REDTUNE_NVRTC=/nonexistent. A CUBIN that another NVRTC made is used; a
 * kernel with only its source, and the built-in default, give RT_ENVRTC naming both. */
static int child_nonvrtc(const char *db)
{
    rt_ctx *ctx = NULL;
    char msg[4096], buf[2048], why[1024];
    CUdevice d;
    CUcontext c;
    bufs b;
    int bad = 0;
    if (rt_open_err(db, 0, &ctx, msg, sizeof msg)) {
        printf("open: %s\n", msg);
        return 1;
    }
    if (cu.DeviceGet(&d, 0) || cu.DevicePrimaryCtxRetain(&c, d) || cu.CtxSetCurrent(c)
        || bufs_make(&b, 4096, 1, NULL)) {
        printf("no context\n");
        return 1;
    }
    for (int k = 0; k < 3; k++) {
        unsigned long long n = k == 0 ? 0 : k == 1 ? 1000 : 4095;
        if (check_one(ctx, &b, RT_SUM, RT_F32, n, 0, 0, why, sizeof why)) {
            printf("sum f32: %s\n", why);
            bad = 1;
        }
    }
    rt_explain(ctx, RT_SUM, RT_F32, 1000, buf, sizeof buf);
    printf("%s", buf);
    if (!strstr(buf, "CUBIN: from the database (made by NVRTC 11.8)")
        || !strstr(buf, "exact device"))
        bad = 1;
    int rc = rt_reduce(ctx, RT_MAX, RT_I32, (const void *)(uintptr_t)b.in, 1000,
                       (void *)(uintptr_t)b.out, NULL);
    printf("max i32: %d %s\n", rc, rt_errmsg(ctx));
    if (rc != RT_ENVRTC || !strstr(rt_errmsg(ctx), "holds no CUBIN for")
        || !strstr(rt_errmsg(ctx), "NVRTC not found: REDTUNE_NVRTC=/nonexistent"))
        bad = 1;
    rc = rt_reduce(ctx, RT_MIN, RT_F64, (const void *)(uintptr_t)b.in, 1000,
                   (void *)(uintptr_t)b.out, NULL);
    printf("min f64: %d %s\n", rc, rt_errmsg(ctx));
    if (rc != RT_ENVRTC || !strstr(rt_errmsg(ctx), "the built-in default (gridstride")
        || !strstr(rt_errmsg(ctx), "NVRTC not found"))
        bad = 1;
    cu.CtxSynchronize();
    bufs_free(&b);
    rt_close(ctx);
    cu.DevicePrimaryCtxRelease(d);
    return bad;
}

static void api_gpu_no_nvrtc(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128], out[16384];
    rt_err e;
    store *s = NULL;
    snprintf(db, sizeof db, "%s/nonvrtc.db", G.dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long id = put_gpu(s, NULL, NULL, 0, 0, 0);
    entry en[] = {
        {id, RT_SUM, RT_F32, "gridstride", GS_PARAMS, 1000, 2, NULL, 3.0},
        {id, RT_MAX, RT_I32, "tree_sequential", TS_PARAMS, 1000, 0, NULL, 3.0},
    };
    put_entries(s, en, 2);
    store_close(s);
    int st = run_child("nonvrtc", db, "REDTUNE_NVRTC", "/nonexistent", out, sizeof out);
    if (st)
        print_error("child exit %d:\n%s\n", st, out);
    assert_int_equal(st, 0);
}

/* ---------------------------------------------------------------- child scenarios */

__attribute__((constructor)) static void child_main(void)
{
    const char *what = getenv("REDTUNE_TEST_API_CHILD");
    const char *db = getenv("REDTUNE_TEST_API_DB");
    if (!what || !db)
        return;
    int rc = !strcmp(what, "nodriver") ? child_nodriver(db)
           : !strcmp(what, "nonvrtc") ? child_nonvrtc(db) : 2;
    fflush(stdout);
    exit(rc);
}

/* ---------------------------------------------------------------- groups */

/* ---- segmented calls on the GPU ---- */

/* One segmented call through the library against the per-segment reference; 'shift' moves
 * the input one element off 16-byte alignment (the library then takes scalar loads). */
static void seg_call_flags(rt_ctx *ctx, int layout, int off64, rt_op op, rt_type type,
                           int profile, unsigned long long n, int shift, unsigned extra)
{
    seg_data d;
    seg_ref *refs;
    size_t es = optype_size(type), acc = optype_acc_size(op, type);
    assert_int_equal(segdata_make(profile, n, 11 + n + profile, &d), RT_OK);
    char *host = malloc((n + 2) * es);
    assert_non_null(host);
    data_fill(host, type, op, n + 1, 5 + profile, n / 2, 2);
    assert_int_equal(segdata_reference(host + shift * es, type, op, &d, &refs, 2), RT_OK);
    size_t segbytes;
    void *hseg = segdata_descriptor(&d, layout, off64, &segbytes);
    assert_non_null(hseg);
    CUdeviceptr in, seg, out;
    assert_int_equal(cu.MemAlloc(&in, (n + 2) * es), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&seg, segbytes + 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, (d.nseg + 1) * acc), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, host, (n + 1) * es), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(seg, hseg, segbytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(out, 0xa5, (d.nseg + 1) * acc), CUDA_SUCCESS);
    const void *pin = (const void *)(uintptr_t)(in + shift * es);
    int rc = layout == RT_LAYOUT_KEYS
        ? rt_reduce_keys(ctx, op, type, pin, (const unsigned *)(uintptr_t)seg, n, d.nseg,
                         (void *)(uintptr_t)out, NULL, RT_SEG_CHECK | extra)
        : rt_reduce_offsets(ctx, op, type, pin, n, (const void *)(uintptr_t)seg, d.nseg,
                            (void *)(uintptr_t)out, NULL,
                            RT_SEG_CHECK | extra | (off64 ? RT_SEG_OFF64 : 0));
    if (rc)
        fail_msg("%s", rt_errmsg(ctx));
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    unsigned char *got = malloc((d.nseg + 1) * acc);
    assert_int_equal(cu.MemcpyDtoH(got, out, (d.nseg + 1) * acc), CUDA_SUCCESS);
    char why[1024];
    if (!segdata_check(got, refs, type, op, &d, why, sizeof why))
        fail_msg("%s %s %s %s n=%llu shift %d: %s", layout == 1 ? "keys" : "offsets",
                 rt_op_name(op), rt_type_name(type), segdata_profile_name(profile), n, shift, why);
    for (size_t b = d.nseg * acc; b < (d.nseg + 1) * acc; b++)
        assert_int_equal(got[b], 0xa5);
    cu.MemFree(in);
    cu.MemFree(seg);
    cu.MemFree(out);
    free(got);
    free(hseg);
    free(host);
    free(refs);
    segdata_free(&d);
}

static void seg_call(rt_ctx *ctx, int layout, int off64, rt_op op, rt_type type, int profile,
                     unsigned long long n, int shift)
{
    seg_call_flags(ctx, layout, off64, op, type, profile, n, shift, 0);
}

/* The built-in default (no database entry), both layouts, aligned and not, 32- and 64-bit
 * offsets, every profile; bad keys and offsets caught by RT_SEG_CHECK with nothing written;
 * nseg = 0 writes nothing. */
static void api_gpu_segmented(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128];
    snprintf(db, sizeof db, "%s/empty_seg.db", G.dir);
    make_empty_db(db);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    const rt_op ops[] = {RT_MIN, RT_SUM, RT_ARGMAX};
    const rt_type types[] = {RT_F32, RT_I64};
    for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++)
        for (int oi = 0; oi < 3; oi++)
            for (int ti = 0; ti < 2; ti++)
                for (int p = 0; p < segdata_profile_count(); p++) {
                    seg_call(ctx, layout, 0, ops[oi], types[ti], p, 100003, 0);
                    seg_call(ctx, layout, layout == 2, ops[oi], types[ti], p, 1000, 1);
                    seg_call(ctx, layout, 0, ops[oi], types[ti], p, 0, 0);
                }
    char buf[1024];
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 1000, 10, 0,
                                          buf, sizeof buf), RT_OK);
    assert_non_null(strstr(buf, "seg_lb"));
    assert_non_null(strstr(buf, "built-in default"));

    /* Bad input, checked: RT_EINVAL naming the first bad index, the output untouched. */
    unsigned hkeys[8] = {0, 1, 1, 3, 2, 4, 4, 4};      /* index 4 goes down */
    int hoff[4] = {0, 5, 3, 8};                           /* index 2 goes down */
    CUdeviceptr in, keys, offs, out;
    assert_int_equal(cu.MemAlloc(&in, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&keys, sizeof hkeys), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offs, sizeof hoff), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(in, 0, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(keys, hkeys, sizeof hkeys), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(offs, hoff, sizeof hoff), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
    void *pin = (void *)(uintptr_t)in, *pout = (void *)(uintptr_t)out;
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 5, pout, NULL, RT_SEG_CHECK), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "the first at index 4"));
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 4, pout, NULL, RT_SEG_CHECK), RT_EINVAL);   /* key 4 >= nseg */
    assert_int_equal(rt_reduce_offsets(ctx, RT_SUM, RT_F32, pin, 8, (void *)(uintptr_t)offs, 3,
                                       pout, NULL, RT_SEG_CHECK), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "the first at index 2"));
    assert_int_equal(rt_reduce_offsets(ctx, RT_SUM, RT_F32, pin, 7, (void *)(uintptr_t)offs, 1,
                                       pout, NULL, RT_SEG_CHECK), RT_OK);   /* 0..5 is fine */
    assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
    assert_int_equal(rt_reduce_offsets(ctx, RT_SUM, RT_F32, pin, 8, (void *)(uintptr_t)offs, 0,
                                       pout, NULL, 0), RT_OK);   /* nseg 0: nothing */
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, NULL, 8, 4, pout, NULL, 0), RT_EINVAL);
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 4, pout, NULL, RT_SEG_OFF64), RT_EINVAL);
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 4, pout, NULL, 0x80), RT_EINVAL);
    /* Unchecked bad input: no fault, nothing written past out[nseg). */
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 2, pout, NULL, 0), RT_OK);
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    unsigned char hout[64];
    assert_int_equal(cu.MemcpyDtoH(hout, out, 64), CUDA_SUCCESS);
    for (int b = 8; b < 64; b++)
        assert_int_equal(hout[b], 0xa5);
    cu.MemFree(in);
    cu.MemFree(keys);
    cu.MemFree(offs);
    cu.MemFree(out);
    rt_close(ctx);
}

/* n = 0 with d_in NULL (allowed: nothing is read) and segments: every segment is empty and
 * gets the identity, through the shipped winners and the built-in default alike (seg_lb
 * used to load in[0] for its ragged tile, a fault with NULL). */
static void api_gpu_seg_empty_null(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128];
    snprintf(db, sizeof db, "%s/empty_null.db", G.dir);
    make_empty_db(db);
    /* The shipped database (segmented winners for min i32), when built, and an empty one. */
    const char *dbs[2] = {db, access("build/redtune.db", R_OK) == 0 ? "build/redtune.db" : db};
    CUdeviceptr out, offs;
    const unsigned nseg = 5;
    const int ho[6] = {0, 0, 0, 0, 0, 0};
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offs, sizeof ho), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(offs, ho, sizeof ho), CUDA_SUCCESS);
    for (int d = 0; d < 2; d++) {
        rt_ctx *ctx = NULL;
        assert_int_equal(rt_open(dbs[d], 0, &ctx), RT_OK);
        for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++) {
            int got[8];
            assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
            int rc = layout == RT_LAYOUT_KEYS
                ? rt_reduce_keys(ctx, RT_MIN, RT_I32, NULL, NULL, 0, nseg,
                                 (void *)(uintptr_t)out, NULL, 0)
                : rt_reduce_offsets(ctx, RT_MIN, RT_I32, NULL, 0, (const void *)(uintptr_t)offs,
                                    nseg, (void *)(uintptr_t)out, NULL, 0);
            if (rc)
                print_error("%s\n", rt_errmsg(ctx));
            assert_int_equal(rc, RT_OK);
            assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
            assert_int_equal(cu.MemcpyDtoH(got, out, sizeof got), CUDA_SUCCESS);
            for (unsigned s = 0; s < nseg; s++)
                assert_int_equal(got[s], 0x7fffffff);
            assert_int_equal(got[nseg], (int)0xa5a5a5a5);   /* nothing past nseg */
        }
        rt_close(ctx);
    }
    cu.MemFree(out);
    cu.MemFree(offs);
}

/* Segmented and flat calls on one stream share its temporary block: the segmented carries
 * must leave the one-launch counter at its start alone, or every later one-launch rt_reduce
 * on that stream finishes early or never (found by the Python GPU tests: a reduce_offsets
 * before a flat reduction gave the flat one uninitialised memory). */
static void api_gpu_seg_then_flat(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128];
    snprintf(db, sizeof db, "%s/seg_then_flat.db", G.dir);
    make_empty_db(db);
    const char *dbs[2] = {db, access("build/redtune.db", R_OK) == 0 ? "build/redtune.db" : db};
    const unsigned long long n = 1ULL << 20;
    const unsigned nseg = 1000;
    float *hx = malloc(n * sizeof *hx);
    unsigned *hk = malloc(n * sizeof *hk);
    int *ho = malloc((nseg + 1) * sizeof *ho);
    assert_non_null(hx);
    assert_non_null(hk);
    assert_non_null(ho);
    for (unsigned long long i = 0; i < n; i++) {
        hx[i] = 1.0f;
        hk[i] = (unsigned)(i * nseg / n);
    }
    for (unsigned s = 0; s <= nseg; s++)
        ho[s] = (int)((unsigned long long)s * n / nseg);
    CUdeviceptr x, keys, offs, out, segout;
    assert_int_equal(cu.MemAlloc(&x, n * sizeof *hx), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&keys, n * sizeof *hk), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offs, (nseg + 1) * sizeof *ho), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&segout, nseg * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(x, hx, n * sizeof *hx), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(keys, hk, n * sizeof *hk), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(offs, ho, (nseg + 1) * sizeof *ho), CUDA_SUCCESS);
    for (int d = 0; d < 2; d++) {
        rt_ctx *ctx = NULL;
        assert_int_equal(rt_open(dbs[d], 0, &ctx), RT_OK);
        for (int round = 0; round < 3; round++) {
            for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++) {
                int rc = layout == RT_LAYOUT_KEYS
                    ? rt_reduce_keys(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)x,
                                     (const unsigned *)(uintptr_t)keys, n, nseg,
                                     (void *)(uintptr_t)segout, NULL, 0)
                    : rt_reduce_offsets(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)x, n,
                                        (const void *)(uintptr_t)offs, nseg,
                                        (void *)(uintptr_t)segout, NULL, 0);
                if (rc)
                    print_error("%s\n", rt_errmsg(ctx));
                assert_int_equal(rc, RT_OK);
                /* Flat sizes whose picks are one-launch and multipass alike. */
                const unsigned long long ns[3] = {n, 65536, 1000};
                for (int i = 0; i < 3; i++) {
                    float got = -1.0f;
                    assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
                    rc = rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)x, ns[i],
                                   (void *)(uintptr_t)out, NULL);
                    if (rc)
                        print_error("%s\n", rt_errmsg(ctx));
                    assert_int_equal(rc, RT_OK);
                    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
                    assert_int_equal(cu.MemcpyDtoH(&got, out, sizeof got), CUDA_SUCCESS);
                    if (got != (float)ns[i])
                        print_error("db %d round %d layout %d: sum of %llu ones gave %g\n", d,
                                    round, layout, ns[i], (double)got);
                    assert_true(got == (float)ns[i]);
                }
            }
        }
        rt_close(ctx);
    }
    cu.MemFree(x);
    cu.MemFree(keys);
    cu.MemFree(offs);
    cu.MemFree(out);
    cu.MemFree(segout);
    free(hx);
    free(hk);
    free(ho);
}

/* Float min/max through the public API: an input (or a segment) of only NaN gives NaN; only
 * an empty input (n = 0, written by the host) or an empty segment gives +-inf. Built-in
 * default kernels (an empty database), so what is checked is the current templates. */
static void api_gpu_all_nan(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128];
    snprintf(db, sizeof db, "%s/empty_nan.db", G.dir);
    make_empty_db(db);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    const unsigned long long n = 100000;
    float *hf = malloc(n * sizeof *hf);
    double *hd = malloc(n * sizeof *hd);
    assert_non_null(hf);
    assert_non_null(hd);
    for (unsigned long long i = 0; i < n; i++) {
        hf[i] = NAN;
        hd[i] = NAN;
    }
    CUdeviceptr inf, ind, out, keys, offs;
    assert_int_equal(cu.MemAlloc(&inf, n * sizeof *hf), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&ind, n * sizeof *hd), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&keys, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offs, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(inf, hf, n * sizeof *hf), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(ind, hd, n * sizeof *hd), CUDA_SUCCESS);
    void *pf = (void *)(uintptr_t)inf, *pd = (void *)(uintptr_t)ind, *po = (void *)(uintptr_t)out;
    for (int op = RT_MIN; op <= RT_MAX; op++) {
        const double empty = op == RT_MIN ? INFINITY : -INFINITY;
        float f;
        double d;
        assert_int_equal(rt_reduce(ctx, (rt_op)op, RT_F32, pf, n, po, NULL), RT_OK);
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(&f, out, 4), CUDA_SUCCESS);
        assert_true(isnan(f));
        assert_int_equal(rt_reduce(ctx, (rt_op)op, RT_F64, pd, n, po, NULL), RT_OK);
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(&d, out, 8), CUDA_SUCCESS);
        assert_true(isnan(d));
        assert_int_equal(rt_reduce(ctx, (rt_op)op, RT_F32, pf, 0, po, NULL), RT_OK);
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(&f, out, 4), CUDA_SUCCESS);
        assert_true(f == (float)empty);

        /* Segments: 0 all NaN, 1 empty, 2 holds NaN and 0.5, 3 empty (keys after the last). */
        const float hv[4] = {NAN, NAN, NAN, 0.5f};
        const unsigned hk[4] = {0, 0, 2, 2};
        const int ho[5] = {0, 2, 2, 4, 4};
        assert_int_equal(cu.MemcpyHtoD(inf, hv, sizeof hv), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyHtoD(keys, hk, sizeof hk), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyHtoD(offs, ho, sizeof ho), CUDA_SUCCESS);
        for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++) {
            float g[4];
            assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
            int rc = layout == RT_LAYOUT_KEYS
                ? rt_reduce_keys(ctx, (rt_op)op, RT_F32, pf, (const unsigned *)(uintptr_t)keys, 4, 4,
                                 po, NULL, RT_SEG_CHECK)
                : rt_reduce_offsets(ctx, (rt_op)op, RT_F32, pf, 4, (const void *)(uintptr_t)offs, 4,
                                    po, NULL, RT_SEG_CHECK);
            assert_int_equal(rc, RT_OK);
            assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
            assert_int_equal(cu.MemcpyDtoH(g, out, sizeof g), CUDA_SUCCESS);
            assert_true(isnan(g[0]));
            assert_true(g[1] == (float)empty);
            assert_true(g[2] == 0.5f);
            assert_true(g[3] == (float)empty);
        }
        assert_int_equal(cu.MemcpyHtoD(inf, hf, n * sizeof *hf), CUDA_SUCCESS);
    }
    cu.MemFree(inf);
    cu.MemFree(ind);
    cu.MemFree(out);
    cu.MemFree(keys);
    cu.MemFree(offs);
    free(hf);
    free(hd);
    rt_close(ctx);
}

/* A database tuned with --segmented: the library takes its winner (exact device). */
static void api_gpu_segmented_tuned(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128], cmd[512];
    snprintf(db, sizeof db, "%s/tuned_seg.db", G.dir);
    const char *bin = getenv("REDTUNE_BIN");
    snprintf(cmd, sizeof cmd, "%s --op min --segmented offsets --profiles len3,one --sizes 100000 "
             "--db %s > /dev/null 2>&1", bin ? bin : "build/redtune", db);
    assert_int_equal(system(cmd), 0);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    char buf[1024];
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 33333,
                                          0, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "exact device") || !strstr(buf, "mean segment length 3.0"))
        fail_msg("%s", buf);
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 1, 0,
                                          buf, sizeof buf), RT_OK);
    if (!strstr(buf, "mean segment length 100000.0"))
        fail_msg("%s", buf);
    for (int p = 0; p < segdata_profile_count(); p++) {
        seg_call(ctx, RT_LAYOUT_OFFSETS, 0, RT_MIN, RT_F32, p, 100000, 0);
        seg_call(ctx, RT_LAYOUT_OFFSETS, 1, RT_MIN, RT_F32, p, 100000, 1);
        seg_call_flags(ctx, RT_LAYOUT_OFFSETS, 0, RT_MIN, RT_F32, p, 100000, 0, RT_SEG_SKEWED);
        seg_call_flags(ctx, RT_LAYOUT_KEYS, 0, RT_MIN, RT_F32, p, 100000, 0, RT_SEG_SKEWED);
    }
    /* RT_SEG_SKEWED: the mean length 3 winner of this database is a group per segment
     * (seg_per) unless the tuner found otherwise; with the flag, only a balanced family
     * serves (the tuned "one" profile's, or the built-in seg_lb), and explain says so. */
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 33333,
                                          RT_SEG_SKEWED, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "skewed (load-balanced kernels only): seg_lb "))
        fail_msg("%s", buf);
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 33333,
                                          8u, buf, sizeof buf), RT_EINVAL);
    rt_close(ctx);
}

/* ---------------------------------------------------------------- GPU: user operators */

/* n affine maps with odd slopes, as lua/ops/affine.lua's sample makes them. */
static uint64_t *affine_data(unsigned long long n, uint64_t seed)
{
    uint64_t *h = malloc((n + 2) * sizeof *h);
    assert_non_null(h);
    for (unsigned long long i = 0; i < n + 2; i++) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        h[i] = (z ^ (z >> 31)) | (1ULL << 32);
    }
    return h;
}

static uint64_t affine_fold(const uint64_t *h, unsigned long long lo, unsigned long long hi)
{
    uint64_t acc = 0x100000000ULL;
    for (unsigned long long i = lo; i < hi; i++)
        acc = affine_combine(acc, h[i]);
    return acc;
}

/* rt_reduce with the registered affine operator 'op' over n maps starting 'shift' elements
 * past an aligned address, against a left-to-right loop. */
static void user_flat(rt_ctx *ctx, rt_op op, unsigned long long n, int shift)
{
    uint64_t *h = affine_data(n, 99 + n), got = 0;
    CUdeviceptr in, out;
    assert_int_equal(cu.MemAlloc(&in, (n + 2) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, h, (n + 2) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(out, 0xa5, 16), CUDA_SUCCESS);
    if (rt_reduce(ctx, op, RT_U64, (const void *)(uintptr_t)(in + 8 * shift), n,
                  (void *)(uintptr_t)out, NULL))
        fail_msg("n=%llu: %s", n, rt_errmsg(ctx));
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&got, out, 8), CUDA_SUCCESS);
    uint64_t want = affine_fold(h + shift, 0, n);
    if (got != want)
        fail_msg("affine n=%llu shift %d: got %016llx, want %016llx", n, shift,
                 (unsigned long long)got, (unsigned long long)want);
    cu.MemFree(in);
    cu.MemFree(out);
    free(h);
}

/* The segmented calls with the affine operator: every segment composed in order. */
static void user_seg(rt_ctx *ctx, rt_op op, int layout, int profile, unsigned long long n)
{
    seg_data d;
    size_t segbytes;
    assert_int_equal(segdata_make(profile, n, 5 + n + profile, &d), RT_OK);
    uint64_t *h = affine_data(n, 7 + profile);
    void *hseg = segdata_descriptor(&d, layout, 0, &segbytes);
    assert_non_null(hseg);
    CUdeviceptr in, seg, out;
    assert_int_equal(cu.MemAlloc(&in, (n + 2) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&seg, segbytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, (d.nseg + 1) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, h, (n + 2) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(seg, hseg, segbytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(out, 0xa5, (d.nseg + 1) * 8), CUDA_SUCCESS);
    int rc = layout == RT_LAYOUT_KEYS
        ? rt_reduce_keys(ctx, op, RT_U64, (const void *)(uintptr_t)in,
                         (const unsigned *)(uintptr_t)seg, n, d.nseg, (void *)(uintptr_t)out,
                         NULL, RT_SEG_CHECK)
        : rt_reduce_offsets(ctx, op, RT_U64, (const void *)(uintptr_t)in, n,
                            (const void *)(uintptr_t)seg, d.nseg, (void *)(uintptr_t)out, NULL,
                            RT_SEG_CHECK);
    if (rc)
        fail_msg("%s", rt_errmsg(ctx));
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    uint64_t *got = malloc((d.nseg + 1) * 8);
    assert_non_null(got);
    assert_int_equal(cu.MemcpyDtoH(got, out, (d.nseg + 1) * 8), CUDA_SUCCESS);
    for (unsigned long long sg = 0; sg < d.nseg; sg++) {
        uint64_t want = affine_fold(h, d.off[sg], d.off[sg + 1]);
        if (got[sg] != want)
            fail_msg("affine %s %s n=%llu segment %llu [%llu, %llu): got %016llx, want %016llx",
                     layout == 1 ? "keys" : "offsets", segdata_profile_name(profile), n, sg,
                     d.off[sg], d.off[sg + 1], (unsigned long long)got[sg],
                     (unsigned long long)want);
    }
    assert_int_equal(got[d.nseg], 0xa5a5a5a5a5a5a5a5ULL);
    cu.MemFree(in);
    cu.MemFree(seg);
    cu.MemFree(out);
    free(got);
    free(hseg);
    free(h);
    segdata_free(&d);
}

static void expect_in(const char *text, const char *what)
{
    if (!strstr(text, what))
        fail_msg("'%s' not in:\n%s", what, text);
}

/* User operators on a context: registration (again, clashing, not compiling), the built-in
 * defaults (diffwarps when it does not commute, gridstride when it does), flat and segmented
 * results against loops, n = 0's identity; then a database tuned with --op-file serves the
 * same definition and not another one of the same name. */
static void api_gpu_user_ops(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128], buf[2048];
    snprintf(db, sizeof db, "%s/empty_user.db", G.dir);
    make_empty_db(db);
    rt_ctx *ctx = NULL;
    rt_op aff = (rt_op)0, again = (rt_op)0, xr = (rt_op)0, other = (rt_op)0;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    rt_op_desc d_aff = {affine_op.name, affine_op.type, affine_op.identity, affine_op.combine, 0};
    assert_int_equal(rt_register_op(ctx, &d_aff, &aff), RT_OK);
    assert_int_equal(aff, RT_OP_USER_FIRST);
    assert_int_equal(rt_register_op(ctx, &d_aff, &again), RT_OK);
    assert_int_equal(again, aff);
    rt_op_desc clash = {"affine", RT_U64, "0x100000000ULL", "return a;", 0};
    assert_int_equal(rt_register_op(ctx, &clash, &other), RT_EINVAL);
    expect_in(rt_errmsg(ctx), "registered on this context with another definition");
    rt_op_desc broken = {"broken", RT_U32, "0", "return undefined_variable;", 1};
    assert_int_equal(rt_register_op(ctx, &broken, &other), RT_ENVRTC);
    expect_in(rt_errmsg(ctx), "operator 'broken' does not compile");
    expect_in(rt_errmsg(ctx), "undefined_variable");
    rt_op_desc d_xor = {"xor", RT_U32, "0", "return a ^ b;", 1};
    assert_int_equal(rt_register_op(ctx, &d_xor, &xr), RT_OK);
    assert_int_equal(xr, RT_OP_USER_FIRST + 1);   /* the failed one took no handle */

    int x = 0;
    assert_int_equal(rt_reduce(ctx, aff, RT_U32, &x, 1, &x, NULL), RT_EINVAL);
    expect_in(rt_errmsg(ctx), "operator 'affine' is registered for u64, not u32");
    assert_int_equal(rt_reduce(ctx, (rt_op)(RT_OP_USER_FIRST + 2), RT_U32, &x, 1, &x, NULL),
                     RT_EINVAL);
    expect_in(rt_errmsg(ctx), "unknown operator 258");

    user_flat(ctx, aff, 0, 0);   /* the identity map */
    user_flat(ctx, aff, 1, 1);
    user_flat(ctx, aff, 1000, 1);
    user_flat(ctx, aff, (1u << 20) + 3, 1);
    user_flat(ctx, aff, 5u << 20, 0);
    assert_int_equal(rt_explain(ctx, aff, RT_U64, 1000, buf, sizeof buf), RT_OK);
    expect_in(buf, "affine u64 (user operator, definition ");
    expect_in(buf, "kernel: diffwarps");
    expect_in(buf, "built-in default");
    size_t bytes = 1;
    assert_int_equal(rt_temp_bytes(ctx, aff, RT_U64, 5u << 20, &bytes), RT_OK);

    /* xor, commutative: gridstride; n = 0 gives 0. */
    unsigned hx[4099], want = 0, got = 1;
    for (int i = 0; i < 4099; i++)
        want ^= hx[i] = (unsigned)i * 2654435761u;
    CUdeviceptr in, out;
    assert_int_equal(cu.MemAlloc(&in, sizeof hx), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, hx, sizeof hx), CUDA_SUCCESS);
    assert_int_equal(rt_reduce(ctx, xr, RT_U32, (void *)(uintptr_t)in, 4099,
                               (void *)(uintptr_t)out, NULL), RT_OK);
    assert_int_equal(cu.MemcpyDtoH(&got, out, 4), CUDA_SUCCESS);
    assert_int_equal(got, want);
    assert_int_equal(rt_reduce(ctx, xr, RT_U32, (void *)(uintptr_t)in, 0,
                               (void *)(uintptr_t)out, NULL), RT_OK);
    assert_int_equal(cu.MemcpyDtoH(&got, out, 4), CUDA_SUCCESS);
    assert_int_equal(got, 0);
    assert_int_equal(rt_explain(ctx, xr, RT_U32, 4099, buf, sizeof buf), RT_OK);
    expect_in(buf, "kernel: gridstride");
    cu.MemFree(in);
    cu.MemFree(out);

    for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++)
        for (int p = 0; p < segdata_profile_count(); p++) {
            user_seg(ctx, aff, layout, p, 100003);
            user_seg(ctx, aff, layout, p, 999);
            user_seg(ctx, aff, layout, p, 0);
        }
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_KEYS, aff, RT_U64, 1000, 10, 0, buf,
                                          sizeof buf), RT_OK);
    expect_in(buf, "seg_lb");
    rt_close(ctx);

    /* Tuned with the operator file: the same definition takes the tuned winner. */
    char cmd[512];
    const char *bin = getenv("REDTUNE_BIN");
    snprintf(db, sizeof db, "%s/tuned_user.db", G.dir);
    snprintf(cmd, sizeof cmd, "%s --op-file lua/ops/affine.lua --space lua/spaces/paper.lua "
             "--family tb2 --sizes 100000 --db %s > /dev/null 2>&1",
             bin ? bin : "build/redtune", db);
    assert_int_equal(system(cmd), 0);
    opfile of;
    rt_err e;
    if (opfile_load("lua/ops/affine.lua", &of, &e))
        fail_msg("%s", e.msg);
    rt_op_desc d_file = {of.op.name, of.op.type, of.op.identity, of.op.combine,
                         of.op.commutative};
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    assert_int_equal(rt_register_op(ctx, &d_file, &aff), RT_OK);
    assert_int_equal(rt_explain(ctx, aff, RT_U64, 100000, buf, sizeof buf), RT_OK);
    expect_in(buf, "kernel: tb2");
    expect_in(buf, "exact device");
    user_flat(ctx, aff, 100000, 1);
    rt_close(ctx);
    opfile_free(&of);

    /* Another definition under the same name: the tuned winners are not used. */
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    assert_int_equal(rt_register_op(ctx, &d_aff, &aff), RT_OK);
    assert_int_equal(rt_explain(ctx, aff, RT_U64, 100000, buf, sizeof buf), RT_OK);
    expect_in(buf, "are of another definition than the registered one");
    expect_in(buf, "built-in default");
    user_flat(ctx, aff, 100000, 1);
    rt_close(ctx);
}

/* ---------------------------------------------------------------- GPU: CUDA graphs */

/* The graph entry points, from the driver the library loaded (driver.h carries none). */
static struct {
    CUresult (*BeginCapture)(CUstream, CUstreamCaptureMode);
    CUresult (*EndCapture)(CUstream, CUgraph *);
    CUresult (*Instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*Launch)(CUgraphExec, CUstream);
    CUresult (*ExecDestroy)(CUgraphExec);
    CUresult (*Destroy)(CUgraph);
} GR;

static int graph_syms(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    *(void **)&GR.BeginCapture = dlsym(h, "cuStreamBeginCapture_v2");
    *(void **)&GR.EndCapture = dlsym(h, "cuStreamEndCapture");
    *(void **)&GR.Instantiate = dlsym(h, "cuGraphInstantiateWithFlags");
    *(void **)&GR.Launch = dlsym(h, "cuGraphLaunch");
    *(void **)&GR.ExecDestroy = dlsym(h, "cuGraphExecDestroy");
    *(void **)&GR.Destroy = dlsym(h, "cuGraphDestroy");
    return GR.BeginCapture && GR.EndCapture && GR.Instantiate && GR.Launch && GR.ExecDestroy
           && GR.Destroy;
}

/* What the graph test captures: flat calls (tree_sequential, a multipass plan, at 1000 and
 * 5000; gridstride, a one-launch plan, at NMAX, once with the caller's storage) and a
 * segmented one by ragged offsets. */
enum { GC_FLAT = 5, GC_NSEG = 1000, GC_SEGN = 100000 };
static const struct { rt_op op; unsigned long long n; int own; } gcases[GC_FLAT] = {
    {RT_MIN, 1000, 0}, {RT_SUM, 5000, 0}, {RT_SUM, NMAX, 0}, {RT_MIN, NMAX, 0},
    {RT_SUM, NMAX, 1},
};

/* Enqueue every case on 's' into out[i * 16] (the segmented one at out + GC_FLAT * 16). */
static int graph_calls(rt_ctx *ctx, CUdeviceptr in, CUdeviceptr offsets, CUdeviceptr out,
                       CUdeviceptr temp, size_t temp_bytes, CUstream s)
{
    for (int i = 0; i < GC_FLAT; i++) {
        void *o = (void *)(uintptr_t)(out + 16 * i);
        const void *x = (const void *)(uintptr_t)in;
        int rc = gcases[i].own
            ? rt_reduce_temp(ctx, gcases[i].op, RT_F32, x, gcases[i].n, o,
                             (void *)(uintptr_t)temp, temp_bytes, s)
            : rt_reduce(ctx, gcases[i].op, RT_F32, x, gcases[i].n, o, s);
        if (rc) {
            print_error("case %d: %s: %s\n", i, rt_strerror(rc), rt_errmsg(ctx));
            return rc;
        }
    }
    int rc = rt_reduce_offsets(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, GC_SEGN,
                               (const void *)(uintptr_t)offsets, GC_NSEG,
                               (void *)(uintptr_t)(out + 16 * GC_FLAT), s, 0);
    if (rc)
        print_error("offsets: %s: %s\n", rt_strerror(rc), rt_errmsg(ctx));
    return rc;
}

/*
 * Warm up, capture the calls above on a non-blocking stream, replay the graph 100 times with
 * new input each time: its results equal those of the same calls made directly. During the
 * capture, calls that would load a kernel, allocate or synchronise fail with RT_ECAPTURE and
 * leave the capture valid. rt_release_temp does not free what the graph uses.
 */
static void api_gpu_graphs(void **state)
{
    (void)state;
    NEED_GPU();
    if (!graph_syms()) {
        print_message("# SKIP reason: the driver lacks the CUDA graph entry points\n");
        skip();
    }
    need_exact_db();
    rt_ctx *ctx = NULL;
    CUstream st, other, blocking;
    CUdeviceptr in, offsets, out_graph, out_direct, temp;
    CUgraph graph = NULL, empty = NULL;
    CUgraphExec exec = NULL;
    size_t temp_bytes = 0, outb = 16 * (GC_FLAT + GC_NSEG);
    float *host = malloc((size_t)NMAX * 4);
    int *hoff = malloc((GC_NSEG + 1) * sizeof *hoff);
    unsigned char *got = malloc(outb), *want = malloc(outb);
    assert_true(host && hoff && got && want);

    assert_int_equal(rt_open(G.exact_db, 0, &ctx), RT_OK);
    assert_int_equal(cu.StreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cu.StreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cu.StreamCreate(&blocking, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&in, (size_t)NMAX * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offsets, (GC_NSEG + 1) * sizeof *hoff), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out_graph, outb), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out_direct, outb), CUDA_SUCCESS);
    for (int s = 0; s <= GC_NSEG; s++)   /* ragged: lengths grow with s, the first ones empty */
        hoff[s] = (int)((long long)GC_SEGN * s / GC_NSEG * s / GC_NSEG);
    assert_int_equal(cu.MemcpyHtoD(offsets, hoff, (GC_NSEG + 1) * sizeof *hoff), CUDA_SUCCESS);
    assert_int_equal(rt_temp_bytes(ctx, RT_SUM, RT_F32, NMAX, &temp_bytes), RT_OK);
    assert_int_equal(cu.MemAlloc(&temp, temp_bytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(temp, 0xff, temp_bytes), CUDA_SUCCESS);   /* the library clears it */

    /* Warm-up on the stream to capture: kernels loaded, its temporary storage grown. */
    assert_int_equal(graph_calls(ctx, in, offsets, out_direct, temp, temp_bytes, st), RT_OK);
    assert_int_equal(cu.StreamSynchronize(st), CUDA_SUCCESS);

    assert_int_equal(GR.BeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(graph_calls(ctx, in, offsets, out_graph, temp, temp_bytes, st), RT_OK);
    /* A case not loaded yet: refused, nothing enqueued. */
    void *o = (void *)(uintptr_t)out_graph;
    const void *x = (const void *)(uintptr_t)in;
    assert_int_equal(rt_reduce(ctx, RT_MAX, RT_F64, x, 777, o, st), RT_ECAPTURE);
    assert_string_equal(rt_errmsg(ctx), "rt_reduce: max f64 n = 777: the stream is capturing "
                        "a CUDA graph, and the kernel for n in (2^9, 2^10) is not loaded yet "
                        "(loading it is synchronous and would break the capture): make one "
                        "call of this case before the capture (a warm-up), or call "
                        "rt_temp_bytes for it");
    assert_int_equal(rt_reduce_temp(ctx, RT_PROD, RT_F32, x, 100, o, (void *)(uintptr_t)temp,
                                    temp_bytes, st), RT_ECAPTURE);
    assert_int_equal(rt_reduce_offsets(ctx, RT_MAX, RT_F32, x, GC_SEGN,
                                       (const void *)(uintptr_t)offsets, GC_NSEG, o, st, 0),
                     RT_ECAPTURE);
    assert_non_null(strstr(rt_errmsg(ctx), "make one call of this case before the capture"));
    assert_int_equal(rt_reduce_offsets(ctx, RT_SUM, RT_F32, x, GC_SEGN,
                                       (const void *)(uintptr_t)offsets, GC_NSEG, o, st,
                                       RT_SEG_CHECK), RT_ECAPTURE);
    assert_non_null(strstr(rt_errmsg(ctx), "RT_SEG_CHECK waits for its check kernel"));
    assert_int_equal(GR.EndCapture(st, &graph), CUDA_SUCCESS);   /* still valid */
    assert_int_equal(GR.Instantiate(&exec, graph, 0), CUDA_SUCCESS);

    /* A stream with no temporary storage yet: loaded kernels, but no block to use. */
    assert_int_equal(GR.BeginCapture(other, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, x, 5000, o, other), RT_ECAPTURE);
    assert_non_null(strstr(rt_errmsg(ctx), "rt_reduce: the stream is capturing a CUDA graph, "
                           "and its temporary storage (0 bytes) is smaller than the "));
    assert_non_null(strstr(rt_errmsg(ctx), "or give rt_reduce_temp storage of rt_temp_bytes "
                           "bytes"));
    /* The caller's storage needs none of the stream's: the graph owns it. */
    assert_int_equal(rt_reduce_temp(ctx, RT_SUM, RT_F32, x, NMAX, o, (void *)(uintptr_t)temp,
                                    temp_bytes, other), RT_OK);
    assert_int_equal(GR.EndCapture(other, &empty), CUDA_SUCCESS);
    GR.Destroy(empty);
    empty = NULL;

    /* The legacy stream while a blocking stream captures: refused, that capture intact. */
    assert_int_equal(GR.BeginCapture(blocking, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, x, 5000, o, NULL), RT_ECAPTURE);
    assert_non_null(strstr(rt_errmsg(ctx), "the legacy default stream"));
    assert_int_equal(GR.EndCapture(blocking, &empty), CUDA_SUCCESS);
    GR.Destroy(empty);

    int bad = 0;
    for (int r = 0; r < 110 && !bad; r++) {
        for (unsigned i = 0; i < NMAX; i++)
            host[i] = (float)((i * 2654435761u + 977u * (unsigned)r) % 2001u) - 1000.0f;
        assert_int_equal(cu.MemcpyHtoD(in, host, (size_t)NMAX * 4), CUDA_SUCCESS);
        if (r == 100)   /* the graph's block survives; direct calls allocate again */
            assert_int_equal(rt_release_temp(ctx), RT_OK);
        assert_int_equal(cu.MemsetD8(out_graph, 0xa5, outb), CUDA_SUCCESS);
        /* The copy and the memset run on the legacy stream, which a non-blocking stream does
         * not wait for (a replay once read 0xa5a5a5a5 where its result was). */
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(GR.Launch(exec, st), CUDA_SUCCESS);
        assert_int_equal(graph_calls(ctx, in, offsets, out_direct, temp, temp_bytes, st), RT_OK);
        assert_int_equal(cu.StreamSynchronize(st), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(got, out_graph, outb), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(want, out_direct, outb), CUDA_SUCCESS);
        for (int i = 0; i < GC_FLAT; i++)
            if (memcmp(got + 16 * i, want + 16 * i, 4)) {
                float g, w;
                memcpy(&g, got + 16 * i, 4);
                memcpy(&w, want + 16 * i, 4);
                print_error("replay %d, case %d (%s n=%llu): graph %g, direct %g\n", r, i,
                            rt_op_name(gcases[i].op), gcases[i].n, g, w);
                bad = 1;
            }
        if (memcmp(got + 16 * GC_FLAT, want + 16 * GC_FLAT, 4 * GC_NSEG)) {
            print_error("replay %d: the segmented results differ\n", r);
            bad = 1;
        }
        if (r == 0) {   /* and the direct calls are right: the min of 1000, by hand */
            float m = host[0];
            for (int i = 1; i < 1000; i++)
                m = host[i] < m ? host[i] : m;
            assert_memory_equal(want, &m, 4);
        }
    }
    assert_false(bad);
    GR.ExecDestroy(exec);
    GR.Destroy(graph);
    cu.MemFree(in);
    cu.MemFree(offsets);
    cu.MemFree(out_graph);
    cu.MemFree(out_direct);
    cu.MemFree(temp);
    cu.StreamDestroy(st);
    cu.StreamDestroy(other);
    cu.StreamDestroy(blocking);
    rt_close(ctx);
    free(host);
    free(hoff);
    free(got);
    free(want);
}

/* rt_reduce's choice among a device's winners by size slot (api_choose.c): a tuned power of
 * two keeps its own winner, a power of two between tuned sizes the nearest in log2 (the larger
 * on a tie), a size strictly between two powers the next larger tuned size's, and past the
 * largest tuned size the largest. */
static void api_pick_by_size_slot(void **state)
{
    (void)state;
    best_entry rows[4];
    memset(rows, 0, sizeof rows);
    const long long tuned[4] = {1LL << 14, 1LL << 10, 3000, 1LL << 12};   /* any order */
    for (int i = 0; i < 4; i++)
        rows[i].n = tuned[i];
    struct { unsigned long long n; long long want; } cases[] = {
        {1, 1 << 10},  {7, 1 << 10},  {1024, 1 << 10},   /* below the smallest: the smallest */
        {1025, 3000},  {2048, 3000},  {3000, 3000},     /* 2^11: 3000 is nearer than 2^10 */
        {4000, 3000},     /* per slot, not per n: (2^11, 2^12) takes the first above 2^11 */
        {4096, 1 << 12},
        {5907, 1 << 14}, {8191, 1 << 14},                /* the next larger, not 2^12 */
        {8192, 1 << 14}, {16384, 1 << 14},
        {16385, 1 << 14}, {1ULL << 40, 1 << 14}, {(1ULL << 40) + 1, 1 << 14},
    };
    /* Sparse tuning (1000 and 2^20, as api_gpu_database's): between them the nearer in log2 to
     * the middle of the range, not a size 2^7 times larger. */
    best_entry sparse[2];
    memset(sparse, 0, sizeof sparse);
    sparse[0].n = 1000;
    sparse[1].n = 1LL << 20;
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(3000))->n, 1000);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(5000))->n, 1000);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(300000))->n, 1 << 20);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 19))->n, 1 << 20);
    /* A oneblock winner (@max_n 2^18) serves no n past 2^18 while another winner is left. */
    snprintf(sparse[0].family, sizeof sparse[0].family, "oneblock");
    sparse[0].n = 1 << 14;
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 15))->n, 1 << 14);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 16))->n, 1 << 14);
    sparse[1].n = 1LL << 30;   /* 2^19 is nearer 2^14 than 2^30, but past oneblock's @max_n */
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 19))->n, 1 << 30);
    assert_int_equal(api_pick_winner(sparse, 1, api_size_slot(1ULL << 30))->n, 1 << 14);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const best_entry *b = api_pick_winner(rows, 4, api_size_slot(cases[i].n));
        assert_non_null(b);
        if (b->n != cases[i].want)
            fail_msg("n = %llu: picked the winner tuned at %lld, want %lld", cases[i].n, b->n,
                     cases[i].want);
    }
    /* A tie between 2^10 and 2^12 for n = 2^11 goes to the larger. */
    rows[2].n = 1LL << 20;
    assert_int_equal(api_pick_winner(rows, 4, api_size_slot(2048))->n, 1 << 12);
    assert_null(api_pick_winner(rows, 0, api_size_slot(2048)));
    assert_int_equal(api_size_slot(1), 0);
    assert_int_equal(api_size_slot(3), 3);
    assert_int_equal(api_size_slot(4), 4);
    assert_int_equal(api_size_slot(~0ULL), 127);
    char t[64];
    api_slot_text(api_size_slot(5907), t, sizeof t);
    assert_string_equal(t, "n in (2^12, 2^13)");
    api_slot_text(api_size_slot(4096), t, sizeof t);
    assert_string_equal(t, "n = 2^12");
}

int test_api_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_null_args),
        cmocka_unit_test(api_unknown_op_type),
        cmocka_unit_test(api_register_op_args),
        cmocka_unit_test(api_type_specs),
        cmocka_unit_test(api_result_alignment),
        cmocka_unit_test(api_typeref_halves),
        cmocka_unit_test(api_messages_per_thread),
        cmocka_unit_test(api_refuses_databases),
        cmocka_unit_test(api_refuses_corrupt_pages),
        cmocka_unit_test(api_default_db_path),
        cmocka_unit_test(api_find_db_order),
        cmocka_unit_test(api_no_driver),
        cmocka_unit_test(api_store_lookup),
        cmocka_unit_test(api_pick_by_size_slot),
    };
    return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}

int test_api_gpu_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_gpu_database),
        cmocka_unit_test(api_gpu_builtin_default),
        cmocka_unit_test(api_gpu_tampered),
        cmocka_unit_test(api_gpu_levels),
        cmocka_unit_test(api_gpu_temp_and_pointers),
        cmocka_unit_test(api_gpu_many_streams),
        cmocka_unit_test(api_gpu_threads),
        cmocka_unit_test(api_gpu_no_nvrtc),
        cmocka_unit_test(api_gpu_segmented),
        cmocka_unit_test(api_gpu_all_nan),
        cmocka_unit_test(api_gpu_seg_empty_null),
        cmocka_unit_test(api_gpu_seg_then_flat),
        cmocka_unit_test(api_gpu_segmented_tuned),
        cmocka_unit_test(api_gpu_user_ops),
        cmocka_unit_test(api_gpu_capture),
        cmocka_unit_test(api_gpu_graphs),
    };
    return cmocka_run_group_tests_name("api_gpu", tests, gpu_setup, gpu_teardown);
}
