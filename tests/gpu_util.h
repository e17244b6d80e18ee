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

#endif
