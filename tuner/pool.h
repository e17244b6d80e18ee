/*
 * pool.h - a fixed thread pool for independent jobs (NVRTC compilations ahead of the GPU work).
 */
#ifndef RT_POOL_H
#define RT_POOL_H

/* Run fn(i, arg) for i in [0, njobs) on up to 'threads' threads; returns when all are done.
 * Jobs are taken in index order; fn must be thread-safe. */
void pool_run(int njobs, int threads, void (*fn)(int i, void *arg), void *arg);

/* The number of online processors (at least 1). */
int pool_cores(void);

#endif
