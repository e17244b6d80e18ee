/*
 * api_util.c - what the test files of libredtune's public API share (tests/api_util.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/api_int.h"
#include "runtime/codegen.h"
#include "runtime/family.h"
#include "runtime/optype.h"
#include "tuner/pool.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"

/* ---------------------------------------------------------------- files and databases */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void api_util_make_dir(char dir[64])
{
    strcpy(dir, "/tmp/redtune-api-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

void api_util_remove_dir(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *api_util_slurp(const char *path, size_t *len)
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

int api_util_stderr_into(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0);
    dup2(fd, 2);
    close(fd);
    return saved;
}

char *api_util_stderr_back(const char *path, int saved)
{
    size_t len;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *text = api_util_slurp(path, &len);
    unlink(path);
    assert_non_null(text);
    return text;
}

const char *api_util_line_of(const char *text, const char *what, char *buf, size_t len)
{
    const char *p = strstr(text, what);
    buf[0] = '\0';
    if (p) {
        while (p > text && p[-1] != '\n')
            p--;
        snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
    }
    return buf;
}

rt_ctx *api_util_bare_ctx(store *s, const char *name)
{
    rt_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    ctx->db = s;
    snprintf(ctx->dev.name, sizeof ctx->dev.name, "%s", name);
    snprintf(ctx->dev.uuid, sizeof ctx->dev.uuid, "u0");
    ctx->dev.cc_major = 9;
    ctx->dev.sm_count = 132;
    pthread_mutex_init(&ctx->lock, NULL);
    return ctx;
}

void api_util_free_ctx(rt_ctx *ctx)
{
    api_choices_free(ctx);
    for (int o = 0; o < NOPS; o++)
        free(atomic_load(&ctx->cache[o]));
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

int api_util_logged(FILE *err)
{
    char said[256] = "";
    rewind(err);
    size_t got = fread(said, 1, sizeof said - 1, err);
    said[got] = '\0';
    fclose(err);
    if (got)
        printf("logged: %s\n", said);
    return got != 0;
}

rt_ctx *api_util_child_ctx(const char *db)
{
    rt_err e;
    store *s = NULL;
    if (store_open(db, STORE_READ, &s, &e) != RT_OK) {
        printf("open: %s\n", e.msg);
        return NULL;
    }
    rt_ctx *ctx = api_util_bare_ctx(s, "NVIDIA H100 80GB HBM3");
    FILE *err = tmpfile();
    if (!ctx || !err) {
        printf("out of memory or no tmpfile\n");
        if (ctx)
            api_util_free_ctx(ctx);
        if (err)
            fclose(err);
        store_close(s);
        return NULL;
    }
    snprintf(ctx->arch, sizeof ctx->arch, "sm_90");
    ctx->cap.log = CAPTURE_LOG_INFO;
    ctx->cap.err = err;
    return ctx;
}

int api_util_child_end(rt_ctx *ctx, int bad)
{
    store *s = ctx->db;
    bad |= api_util_logged(ctx->cap.err);
    api_util_free_ctx(ctx);
    store_close(s);
    return bad;
}

void api_util_copy_file(const char *from, const char *to)
{
    size_t len;
    char *buf = api_util_slurp(from, &len);
    assert_non_null(buf);
    FILE *fp = fopen(to, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(buf, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
    free(buf);
}

int api_util_same_bytes(const char *path, const char *buf, size_t len)
{
    size_t now;
    char *cur = api_util_slurp(path, &now);
    int same = cur && now == len && memcmp(cur, buf, len) == 0;
    free(cur);
    return same;
}

void api_util_make_empty_db(const char *path)
{
    rt_err e;
    store *s = NULL;
    if (store_open(path, STORE_WRITE, &s, &e) != RT_OK)
        print_error("%s\n", e.msg);
    assert_non_null(s);
    store_close(s);
}

/* ---------------------------------------------------------------- child scenarios */

int api_util_run_child(const char *what, const char *db, const char *var, const char *value,
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

__attribute__((constructor)) static void child_main(void)
{
    const char *what = getenv("REDTUNE_TEST_API_CHILD");
    const char *db = getenv("REDTUNE_TEST_API_DB");
    if (!what || !db)
        return;
    int rc = !strcmp(what, "nodriver") ? test_api_child_nodriver(db)
           : !strcmp(what, "nonvrtc") ? test_api_child_nonvrtc(db)
           : !strcmp(what, "fallback") ? test_api_child_fallback(db)
           : !strcmp(what, "axisfallback") ? test_api_child_axis_fallback(db) : 2;
    fflush(stdout);
    exit(rc);
}

/* ---------------------------------------------------------------- GPU: fixtures */

api_util_gpu_state api_util_gpu = {-1};

int api_util_gpu_setup(void **state)
{
    (void)state;
    api_util_gpu_state *g = &api_util_gpu;
    rt_err e;
    if (g->have >= 0)
        return 0;
    g->have = 0;
    if (driver_device_query(0, &g->dev, &e)) {
        snprintf(g->why, sizeof g->why, "%s", e.msg);
        return 0;
    }
    if (cu.DeviceGet(&g->cudev, 0) || cu.DevicePrimaryCtxRetain(&g->cuctx, g->cudev)
        || cu.CtxSetCurrent(g->cuctx)) {
        snprintf(g->why, sizeof g->why, "could not create a context on %s", g->dev.name);
        return 0;
    }
    if (nvrtc_load(&e)) {
        snprintf(g->why, sizeof g->why, "%s", e.msg);
        return 0;
    }
    device_arch(&g->dev, g->arch);
    strcpy(g->dir, "/tmp/redtune-api-gpu-XXXXXX");
    if (!mkdtemp(g->dir)) {
        snprintf(g->why, sizeof g->why, "mkdtemp failed");
        return 0;
    }
    g->have = 1;
    return 0;
}

int api_util_gpu_teardown(void **state)
{
    (void)state;
    api_util_gpu_state *g = &api_util_gpu;
    if (g->have == 1) {
        api_util_remove_dir(g->dir);
        cu.DevicePrimaryCtxRelease(g->cudev);
    }
    free(g->exact_bytes);
    memset(g, 0, sizeof *g);
    g->have = -1;   /* the next group probes again, with a directory of its own */
    return 0;
}

static void compile_entry(int i, void *arg)
{
    api_util_entry *en = &((api_util_entry *)arg)[i];
    rt_err *e = malloc(sizeof *e);
    if (!e) {
        en->rc = RT_ENOMEM;
        return;
    }
    en->rc = en->cubin ? nvrtc_compile(en->src, "entry.cu", api_util_gpu.arch, &en->o, e)
                       : RT_OK;
    if (en->rc)
        fprintf(stderr, "# %s\n", e->msg);
    free(e);
}

void api_util_put_entries(store *s, api_util_entry *en, int count)
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
            const char *arch = en[i].cubin == 3 ? en[i].arch_label : api_util_gpu.arch;
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

long long api_util_put_gpu(store *s, const char *name, const char *uuid, int dmajor,
                           int dminor, int dsms)
{
    rt_device d = api_util_gpu.dev;
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

int api_util_defined(int op, int t)
{
    optype_ts ts;
    return optype_resolve((rt_op)op, (rt_type)t, &ts, NULL, 0) == 0;
}

void api_util_need_exact_db(void)
{
    api_util_gpu_state *g = &api_util_gpu;
    if (g->exact_bytes)
        return;
    rt_err e;
    store *s = NULL;
    api_util_entry en[2 * RT_OP_COUNT * RT_TYPE_COUNT];
    int k = 0;
    snprintf(g->exact_db, sizeof g->exact_db, "%s/exact.db", g->dir);
    assert_int_equal(store_open(g->exact_db, STORE_WRITE, &s, &e), RT_OK);
    long long id = api_util_put_gpu(s, NULL, NULL, 0, 0, 0);
    memset(en, 0, sizeof en);
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++) {
            if (!api_util_defined(op, t))
                continue;
            en[k++] = (api_util_entry){id, op, t, "tree_sequential", API_UTIL_TS_PARAMS, 1000, 1,
                                       NULL, 4.0};
            en[k++] = (api_util_entry){id, op, t, "gridstride", API_UTIL_GS_PARAMS, 1 << 20, 0,
                                       NULL, 9.0};
        }
    api_util_put_entries(s, en, k);
    store_close(s);
    g->exact_bytes = api_util_slurp(g->exact_db, &g->exact_len);
    assert_non_null(g->exact_bytes);
}

long long api_util_put_device(store *s, const char *name, const char *uuid, int major,
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

api_util_graph_api api_util_graph;

int api_util_graph_syms(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    api_util_graph_api *g = &api_util_graph;
    *(void **)&g->BeginCapture = dlsym(h, "cuStreamBeginCapture_v2");
    *(void **)&g->EndCapture = dlsym(h, "cuStreamEndCapture");
    *(void **)&g->Instantiate = dlsym(h, "cuGraphInstantiateWithFlags");
    *(void **)&g->Launch = dlsym(h, "cuGraphLaunch");
    *(void **)&g->ExecDestroy = dlsym(h, "cuGraphExecDestroy");
    *(void **)&g->Destroy = dlsym(h, "cuGraphDestroy");
    return g->BeginCapture && g->EndCapture && g->Instantiate && g->Launch && g->ExecDestroy
           && g->Destroy;
}
