/*
 * session.h - the worker process seen from the tuner: spawn, requests with time limits,
 * restart after a fault or a hang, and bringing a new worker back to where the old one was
 * (the user operator sent again, the data of the case prepared again).
 *
 * The tuner never initialises CUDA itself (a CUDA context does not survive fork): the GPU
 * work is done by a fresh exec of the program as `redtune worker` (proto.h), which the
 * tuner kills when a request outlives its time limit and restarts when it dies.
 */
#ifndef RT_SESSION_H
#define RT_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../runtime/device.h"
#include "../runtime/err.h"
#include "opfile.h"
#include "proto.h"

typedef struct session {
    pid_t pid;            /* <= 0: no worker running (it died or was killed) */
    int to, from;         /* pipe ends: requests, responses */
    int device;
    const char *exe;
    rt_device dev;        /* from the worker's HELLO */
    prepare_req prepared; /* the case the worker holds, prepared again after a restart */
    int has_prepared;
    void *operator_msg;   /* MSG_OPERATOR's payload for a user operator, or NULL */
    size_t operator_len;
} session;

/* A session with no worker yet, for GPU 'device', that execs 'exe' as the worker. */
#define SESSION_INIT(device_, exe_) \
    ((session){.pid = -1, .to = -1, .from = -1, .device = (device_), .exe = (exe_)})

/* Start (or restart) the worker: HELLO (w->dev), the operator when there is one, the
 * prepared case when there is one. */
int session_start(session *w, rt_err *e);

/* Send a request and wait up to 'timeout_ms' for its response. -1: the worker died; -2: it
 * timed out (and was killed); 0: *resp holds the malloc'd response. After -1 or -2 the
 * worker is gone (w->pid <= 0) until session_start. */
int session_call(session *w, uint32_t kind, const void *a, size_t alen, const void *b,
                 size_t blen, void **resp, size_t *rlen, int timeout_ms);

/* Prepare the case 'q' in the worker ('what' names it in messages); *out (when not NULL)
 * receives its answer: the segmentation and the bytes the reduction must move. */
int session_prepare(session *w, const prepare_req *q, const char *what, prepare_resp *out,
                    rt_err *e);

/* A user operator into the worker: its reference kernels compiled for 'arch' and its file,
 * then a trial on a few thousand elements that runs the sample function and checks the
 * identity. Kept in the session, so a restarted worker gets it again. */
int session_operator(session *w, const opfile *u, const char *arch, uint64_t seed, rt_err *e);

/* The read yardstick: measure.c's shapes compiled for 'arch' and timed by the worker; the
 * best in *gbps. The first stays loaded in the worker to flush the L2. */
int session_bandwidth(session *w, const char *arch, double *gbps, rt_err *e);

/* The GPUs of the machine, as the driver sees them (CUDA_VISIBLE_DEVICES applies): a worker
 * of 'exe' started for the question alone (MSG_DEVICES; no context is made on any GPU), up
 * to 'max' records into devs, *count of them. An error when the driver cannot be loaded or
 * finds no GPU (the worker's message). */
int session_devices(const char *exe, rt_device *devs, int max, int *count, rt_err *e);

/* Ask the worker to quit and wait for it; free what the session holds. */
void session_close(session *w);

#endif
