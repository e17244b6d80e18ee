/*
 * gpu_util.h - what the GPU test groups share: a context on device 0 and running the
 * redtune program.
 */
#ifndef RT_TESTS_GPU_UTIL_H
#define RT_TESTS_GPU_UTIL_H

#include <stddef.h>
#include "runtime/driver.h"

/* Query device 0, make its primary context current and create a blocking stream (ordered with
 * the synchronous memsets). 1 on success; 0 with the reason in why[0..len). */
int gpu_util_setup(rt_device *dev, char arch[16], CUstream *stream, char *why, size_t len);

/* Run $REDTUNE_BIN (default build/redtune) with 'args', stdout and stderr into out[0..len);
 * its exit status (128 when it did not exit). */
int gpu_util_run(const char *args, char *out, size_t len);

/* REDTUNE_TEST_SMALL=1 (tools/sanitize.sh): the kernel tests keep their sizes up to a few
 * thousand elements, so that they run under compute-sanitizer in minutes. */
int gpu_util_small(void);

/* In a test: skip it, saying why, unless have == 1 (cmocka's print_message and skip). */
#define GPU_UTIL_NEED(have, why)                                         \
    do {                                                                 \
        if ((have) != 1) {                                               \
            print_message("# SKIP reason: %s\n", (why));                 \
            skip();                                                      \
        }                                                                \
    } while (0)

/* The state of a GPU test group that needs a context on device 0 and a stream: dev, arch,
 * have_gpu (-1 until gpu_setup, its group setup, has run gpu_util_setup), no_gpu_why and
 * stream; its tests skip with GPU_UTIL_NEED(have_gpu, no_gpu_why). */
#define GPU_UTIL_TEST_STATE                                                              \
    static rt_device dev;                                                                \
    static char arch[16];                                                                \
    static int have_gpu = -1;                                                            \
    static char no_gpu_why[RT_ERRMSG_MAX];                                               \
    static CUstream stream;                                                              \
    static int gpu_setup(void **state)                                                   \
    {                                                                                    \
        (void)state;                                                                     \
        if (have_gpu < 0)                                                                \
            have_gpu = gpu_util_setup(&dev, arch, &stream, no_gpu_why, sizeof no_gpu_why); \
        return 0;                                                                        \
    }

#endif
