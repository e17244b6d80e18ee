/*
 * api_util.h - what the test files of libredtune's public API (tests/test_api*.c) share:
 * temporary directories and whole files, an empty database, and a fresh exec of this binary
 * for the scenarios that need a library missing; for the GPU groups, device 0's context, a
 * temporary directory, test databases of made-up winners and the database of this GPU.
 *
 * driver.c and nvrtc.c load their library once per process, so the scenarios that need them
 * missing (REDTUNE_LIBCUDA / REDTUNE_NVRTC=/nonexistent) run in a fresh exec of this binary
 * (api_util_run_child): a constructor in api_util.c sees REDTUNE_TEST_API_CHILD, runs the
 * scenario, and exits before main.
 */
#ifndef RT_TESTS_API_UTIL_H
#define RT_TESTS_API_UTIL_H

#include <stddef.h>
#include <stdio.h>

#include "include/redtune.h"
#include "runtime/driver.h"
#include "runtime/hash.h"
#include "runtime/nvrtc.h"
#include "runtime/store.h"
#include "tests/gpu_util.h"

/* ---------------------------------------------------------------- files and databases */

/* A new directory /tmp/redtune-api-XXXXXX (the test fails if it cannot be made). */
void api_util_make_dir(char dir[64]);

/* Remove 'dir' and everything under it. */
void api_util_remove_dir(const char *dir);

/* The whole file at 'path', NUL-terminated (malloc'd; NULL when unreadable), its size in *len. */
char *api_util_slurp(const char *path, size_t *len);

/* fd 2 into the new file 'path' (a mkstemp template), for the lines REDTUNE_LOG writes; the
 * old fd 2, for api_util_stderr_back. No assertion may fail in between: its words would go
 * there. */
int api_util_stderr_into(char *path);

/* fd 2 back to 'saved'; what was written to 'path' (malloc'd), the file removed. */
char *api_util_stderr_back(const char *path, int saved);

/* The line of 'text' that holds 'what', into buf ("" when none); buf. */
const char *api_util_line_of(const char *text, const char *what, char *buf, size_t len);

/* ---------------------------------------------------------------- a context with no GPU */

/* A context with no GPU on the database 's', for a GPU named 'name' (cc 9.0, 132 SMs, UUID
 * u0; no arch: set ctx->arch where the case needs one), its lock made: enough for the choices
 * (api_get_choice, api_seg_pick) and for decisions that fail before a kernel loads (a child
 * without NVRTC). NULL when out of memory; freed by api_util_free_ctx, which leaves the
 * store open. */
rt_ctx *api_util_bare_ctx(store *s, const char *name);
void api_util_free_ctx(rt_ctx *ctx);

/* What a bare context's log (ctx->cap.err = 'err', a tmpfile, closed here) wrote: 0 when
 * nothing, else 1, the text printed after "logged: ". */
int api_util_logged(FILE *err);

/* A child scenario's bare context on the database file 'db' (read only) for an H100 (sm_90),
 * its log at info into a tmpfile (ctx->cap.err) so that the scenario can tell that nothing
 * was logged; NULL, with why printed, when it cannot be made. */
rt_ctx *api_util_child_ctx(const char *db);

/* The scenario's end: 'bad', or 1 when the context logged anything; the log, the context and
 * its store closed. */
int api_util_child_end(rt_ctx *ctx, int bad);

/* Copy the file 'from' to 'to' (the test fails if it cannot). */
void api_util_copy_file(const char *from, const char *to);

/* 1 when the file at 'path' holds exactly buf[0..len). */
int api_util_same_bytes(const char *path, const char *buf, size_t len);

/* A new, empty redtune database at 'path' (the schema only). */
void api_util_make_empty_db(const char *path);

/* A device row (name, uuid, compute capability, SMs) put into s; its id. */
long long api_util_put_device(store *s, const char *name, const char *uuid, int major,
                              int minor, int sms);

/* The graph entry points, from the driver the library loaded (driver.h carries none), set by
 * api_util_graph_syms (1 when all are found). */
typedef struct api_util_graph_api {
    CUresult (*BeginCapture)(CUstream, CUstreamCaptureMode);
    CUresult (*EndCapture)(CUstream, CUgraph *);
    CUresult (*Instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*Launch)(CUgraphExec, CUstream);
    CUresult (*ExecDestroy)(CUgraphExec);
    CUresult (*Destroy)(CUgraph);
} api_util_graph_api;
extern api_util_graph_api api_util_graph;
int api_util_graph_syms(void);

/* ---------------------------------------------------------------- child scenarios */

/*
 * Run this test binary again as child scenario 'what' with the database 'db' and one more
 * environment variable; its stdout and stderr go into out. Returns its exit status.
 */
int api_util_run_child(const char *what, const char *db, const char *var, const char *value,
                       char *out, size_t len);

/* The scenarios, each defined beside the test that runs it; the child's exit status. */
int test_api_child_nodriver(const char *db);   /* tests/test_api_db.c */
int test_api_child_nonvrtc(const char *db);    /* tests/test_api_gpu.c */
int test_api_child_fallback(const char *db);   /* tests/test_api_choose.c */
int test_api_child_axis_fallback(const char *db);   /* tests/test_api_axis.c */

/* ---------------------------------------------------------------- GPU: fixtures */

/* The state of the api GPU groups, each of which sets it up and tears it down. */
typedef struct api_util_gpu_state {
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
} api_util_gpu_state;

extern api_util_gpu_state api_util_gpu;

/* The group setup: device 0's primary context made current, NVRTC loaded, a temporary
 * directory; with no GPU, api_util_gpu.have = 0 and the reason in api_util_gpu.why. */
int api_util_gpu_setup(void **state);

/* The group teardown: the directory removed, the context released, the state back to "not
 * probed" for the next group. */
int api_util_gpu_teardown(void **state);

/* In a GPU test: skip it, saying why, with no GPU. */
#define API_UTIL_NEED_GPU() GPU_UTIL_NEED(api_util_gpu.have, api_util_gpu.why)

/* A winner to put into a test database. */
typedef struct api_util_entry {
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
    /* filled by api_util_put_entries */
    char *src;
    char hash[RT_HASH_HEX];
    char fmt[256];
    nvrtc_output o;
    int rc;
} api_util_entry;

/* Emit, compile (in parallel) and store the entries, with their winners. */
void api_util_put_entries(store *s, api_util_entry *en, int count);

/* A device row: this GPU (name NULL), or a made-up one derived from it. */
long long api_util_put_gpu(store *s, const char *name, const char *uuid, int dmajor,
                           int dminor, int dsms);

/* Whether the library defines (op, type): the loops over every pair skip the others. */
int api_util_defined(int op, int t);

/* The configs of the winners in the database of this GPU. */
#define API_UTIL_TS_PARAMS "B=256 R=2 LOAD_ADD=1 WARP=1 UNROLL=1"
#define API_UTIL_GS_PARAMS "B=128 V=2 U=2 G=2"

/* The largest n of the flat tests: past 2^20, so gridstride's in the database of this GPU. */
#define API_UTIL_NMAX ((1u << 20) + 3)

/* The database of this GPU, made on first need in a group at api_util_gpu.exact_db, its bytes
 * kept in exact_bytes: for every op x type, tree_sequential won at n = 1000 (its CUBIN stored)
 * and gridstride at n = 2^20 (source only: the library compiles it). */
void api_util_need_exact_db(void);

#endif
