/*
 * space_util.c - what the test files of the Lua search spaces share (tests/space_util.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/space.h"
#include "tests/space_util.h"

const space_case F32 = {"sum", "f32", 4, 1};
const space_case F64 = {"sum", "f64", 8, 1};
const space_case NONCOMM = {"first", "f32", 4, 0};

rt_err space_err;

rt_device h100(void)
{
    rt_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "Fake NVIDIA H100 80GB HBM3");
    d.cc_major = 9;
    d.cc_minor = 0;
    d.sm_count = 132;
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.smem_per_block = 48 * 1024;
    d.smem_per_block_optin = 227 * 1024;
    d.smem_per_sm = 228 * 1024;
    d.regs_per_block = 65536;
    d.regs_per_sm = 65536;
    d.l2_bytes = 50 * 1024 * 1024;
    d.mem_clock_khz = 2619000;
    d.bus_width_bits = 5120;
    d.driver_version = 13000;
    d.total_mem = 80LL << 30;
    return d;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s (run the tests from the source top)", path);
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) {
            cap = cap * 2 + 4096;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

int expand_text(const char *text, const char *name, const rt_device *dev,
                const space_case *cs, rt_config **v, int *n)
{
    rt_clearerr(&space_err);
    return space_expand(text, strlen(text), name, dev, cs, v, n, &space_err);
}

int expand_file(const char *path, const space_case *cs, rt_config **v, int *n)
{
    size_t len;
    char *text = slurp(path, &len);
    rt_device d = h100();
    rt_clearerr(&space_err);
    int rc = space_expand(text, len, path, &d, cs, v, n, &space_err);
    free(text);
    return rc;
}

long long get(const rt_config *c, const char *name)
{
    for (int i = 0; i < c->family->nparams; i++)
        if (strcmp(c->family->params[i].name, name) == 0)
            return c->values[i];
    fail_msg("family %s has no parameter %s", c->family->name, name);
    return -1;
}

int is_family(const rt_config *c, const char *name)
{
    return strcmp(c->family->name, name) == 0;
}

int count_family(const rt_config *v, int n, const char *name)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += is_family(&v[i], name);
    return k;
}

void expect_text_error(const char *text, const char *name, int code, const char *msg)
{
    rt_device d = h100();
    rt_config *v = (rt_config *)&v;
    int n = -1;
    assert_int_equal(expand_text(text, name, &d, &F32, &v, &n), code);
    assert_string_equal(space_err.msg, msg);
    assert_null(v);
    assert_int_equal(n, 0);
}
