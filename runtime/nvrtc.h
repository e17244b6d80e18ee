/*
 * nvrtc.h - CUDA source -> CUBIN through NVRTC, loaded at run time with dlopen (the newest
 * libnvrtc.so.N found: the library path, $CUDA_HOME/lib64, the configured toolkit,
 * /usr/local/cuda/lib64; REDTUNE_NVRTC names a file to use instead).
 */
#ifndef RT_NVRTC_H
#define RT_NVRTC_H

#include <stddef.h>
#include "err.h"

/* Load NVRTC once (thread-safe); RT_ENVRTC "NVRTC not found: ..." naming what was tried. */
int nvrtc_load(rt_err *e);

/* NVRTC's version as major*1000 + minor*10 (13.0 -> 13000); 0 when not loaded. */
int nvrtc_version(void);

typedef struct nvrtc_output {
    void *cubin;     /* malloc'd */
    size_t size;
    char *log;       /* malloc'd, possibly empty; also on failure */
} nvrtc_output;

/* Compile 'src' (named 'name' in diagnostics) for 'arch' ("sm_90"). On failure RT_ENVRTC with
 * the name and NVRTC's log in the message, and out->log set. Thread-safe. */
int nvrtc_compile(const char *src, const char *name, const char *arch, nvrtc_output *out,
                  rt_err *e);

void nvrtc_output_free(nvrtc_output *o);

#endif
