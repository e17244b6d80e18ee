/*
 * nvrtc.c - NVRTC loading and compilation. The NVRTC API is declared here by hand (a handful
 * of functions with C linkage and stable signatures) so nothing is linked.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nvrtc.h"

#ifndef RT_CUDA_HOME
#define RT_CUDA_HOME "/usr/local/cuda"
#endif

typedef int nvrtcResult;           /* NVRTC_SUCCESS == 0 */
typedef struct _nvrtcProgram *nvrtcProgram;

static struct {
    const char *(*GetErrorString)(nvrtcResult);
    nvrtcResult (*Version)(int *, int *);
    nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                 const char *const *, const char *const *);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *);
    nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_code = RT_OK;
static char load_msg[2048];
static int version;

static void *try_open(const char *dir, char *tried, size_t len)
{
    /* Newest first; NVRTC's soname carries its major version. */
    static const char *const names[] = {"libnvrtc.so.14", "libnvrtc.so.13", "libnvrtc.so.12",
                                        "libnvrtc.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1024];
        if (dir)
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        else
            snprintf(path, sizeof path, "%s", names[i]);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
        size_t used = strlen(tried);
        if (i == 0 && used + 8 < len)
            snprintf(tried + used, len - used, "%s%s/libnvrtc.so.*", used ? ", " : "",
                     dir ? dir : "(library path)");
    }
    return NULL;
}

static void load(void)
{
    char tried[1024] = "";
    void *h = NULL;
    const char *override = getenv("REDTUNE_NVRTC");
    if (override && *override) {
        h = dlopen(override, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            load_code = RT_ENVRTC;
            snprintf(load_msg, sizeof load_msg, "NVRTC not found: REDTUNE_NVRTC=%s: %s",
                     override, dlerror());
            return;
        }
    }
    const char *env_home = getenv("CUDA_HOME");
    char dir[1024];
    if (!h)
        h = try_open(NULL, tried, sizeof tried);
    if (!h && env_home && *env_home) {
        snprintf(dir, sizeof dir, "%s/lib64", env_home);
        h = try_open(dir, tried, sizeof tried);
    }
    if (!h)
        h = try_open(RT_CUDA_HOME "/lib64", tried, sizeof tried);
    if (!h)
        h = try_open("/usr/local/cuda/lib64", tried, sizeof tried);
    if (!h) {
        load_code = RT_ENVRTC;
        snprintf(load_msg, sizeof load_msg,
                 "NVRTC not found (tried %s): install the CUDA toolkit or set REDTUNE_NVRTC", tried);
        return;
    }
#define GET(field, name)                                                                  \
    if (!(*(void **)&api.field = dlsym(h, name))) {                                      \
        load_code = RT_ENVRTC;                                                           \
        snprintf(load_msg, sizeof load_msg, "NVRTC library lacks %s", name);            \
        return;                                                                          \
    }
    GET(GetErrorString, "nvrtcGetErrorString");
    GET(Version, "nvrtcVersion");
    GET(CreateProgram, "nvrtcCreateProgram");
    GET(DestroyProgram, "nvrtcDestroyProgram");
    GET(CompileProgram, "nvrtcCompileProgram");
    GET(GetProgramLogSize, "nvrtcGetProgramLogSize");
    GET(GetProgramLog, "nvrtcGetProgramLog");
    GET(GetCUBINSize, "nvrtcGetCUBINSize");
    GET(GetCUBIN, "nvrtcGetCUBIN");
#undef GET
    int major = 0, minor = 0;
    api.Version(&major, &minor);
    version = major * 1000 + minor * 10;
}

int nvrtc_load(rt_err *e)
{
    pthread_once(&once, load);
    if (load_code != RT_OK)
        return rt_seterr(e, load_code, "%s", load_msg);
    return RT_OK;
}

int nvrtc_version(void)
{
    return load_code == RT_OK ? version : 0;
}

void nvrtc_output_free(nvrtc_output *o)
{
    if (!o)
        return;
    free(o->cubin);
    free(o->log);
    memset(o, 0, sizeof *o);
}

int nvrtc_compile(const char *src, const char *name, const char *arch, nvrtc_output *out,
                  rt_err *e)
{
    memset(out, 0, sizeof *out);
    int rc = nvrtc_load(e);
    if (rc)
        return rc;
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    /* No include path to the host: not even the directory the unit is named in.
     * REDTUNE_NVRTC_LINEINFO=1 adds line tables, so that compute-sanitizer and the profilers
     * name the template's lines (tools/sanitize.sh); the code is the same. */
    const char *li = getenv("REDTUNE_NVRTC_LINEINFO");
    const char *opts[] = {archopt, "--std=c++17", "-default-device", "--no-source-include",
                          "-lineinfo"};
    int nopts = li && *li && strcmp(li, "0") ? 5 : 4;
    nvrtcProgram prog = NULL;
    nvrtcResult r = api.CreateProgram(&prog, src, name, 0, NULL, NULL);
    if (r != 0)
        return rt_seterr(e, RT_ENVRTC, "%s: nvrtcCreateProgram: %s", name, api.GetErrorString(r));
    nvrtcResult cr = api.CompileProgram(prog, nopts, opts);
    size_t loglen = 0;
    if (api.GetProgramLogSize(prog, &loglen) == 0 && loglen > 0) {
        out->log = malloc(loglen + 1);
        if (out->log && api.GetProgramLog(prog, out->log) == 0)
            out->log[loglen] = '\0';
        else if (out->log)
            out->log[0] = '\0';
    }
    if (cr != 0) {
        rc = rt_seterr(e, RT_ENVRTC, "%s: %s for %s\n%s", name, api.GetErrorString(cr), arch,
                       out->log ? out->log : "");
        goto done;
    }
    if ((r = api.GetCUBINSize(prog, &out->size)) != 0 || out->size == 0) {
        rc = rt_seterr(e, RT_ENVRTC, "%s: no CUBIN for %s: %s", name, arch, api.GetErrorString(r));
        goto done;
    }
    out->cubin = malloc(out->size);
    if (!out->cubin) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory for a %zu-byte CUBIN", name, out->size);
        goto done;
    }
    if ((r = api.GetCUBIN(prog, out->cubin)) != 0)
        rc = rt_seterr(e, RT_ENVRTC, "%s: nvrtcGetCUBIN: %s", name, api.GetErrorString(r));
done:
    api.DestroyProgram(&prog);
    if (rc != RT_OK) {
        free(out->cubin);
        out->cubin = NULL;
        out->size = 0;
    }
    return rc;
}
