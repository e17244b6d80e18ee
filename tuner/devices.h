/*
 * devices.h - `redtune --device all | LIST`: the GPUs of a tuning run checked against what
 * the driver lists, and one tuning run per GPU, each in its own child process (with its own
 * worker), concurrently, into one database, their output merged into one display.
 */
#ifndef RT_DEVICES_H
#define RT_DEVICES_H

#include "../runtime/device.h"
#include "../runtime/err.h"
#include "proto.h"
#include "tune.h"

/* The GPUs to tune, in the order given, and each one's share of the cases (--split). */
typedef struct devices_plan {
    int n;
    rt_device dev[PROTO_MAX_DEVICES];
    int split_index[PROTO_MAX_DEVICES], split_count[PROTO_MAX_DEVICES];
} devices_plan;

/* Whether two GPUs count as identical for --split: the same name, compute capability, SM
 * count, memory clock and memory bus width, as the driver reports them. */
int devices_identical(const rt_device *a, const rt_device *b);

/*
 * The plan of a run: the machine's GPUs listed by a worker of 'exe' (session_devices), then
 * 'want' (nwant distinct ordinals) checked against them, or every GPU when 'all'. With
 * 'split', each group of identical GPUs (devices_identical) splits the cases among its
 * members (split_count its size, split_index the member's rank in the order given); without,
 * every GPU tunes every case. 'as_given' is the --device value, for messages.
 * RT_EINVAL for an ordinal that is no GPU of this machine (a usage error: exit 2); another
 * RT_E* when the GPUs cannot be listed (no driver, no GPU). Nothing is written anywhere.
 */
int devices_plan_make(const char *exe, const int *want, int nwant, int all, int split,
                      const char *as_given, devices_plan *p, rt_err *e);

/* A tuning run of one GPU, called in its child process with o->device (and split) set: an
 * exit status (0 done, 1 failed with e's message; main.c's codes otherwise). */
typedef int (*devices_run_fn)(tune_opts *o, void *arg, rt_err *e);

/*
 * Tune every GPU of 'p': one child process per GPU, forked here, each running run(o', arg)
 * where o' is 'o' with the GPU's ordinal, its --split share and o->jobs / p->n compiler
 * threads (at least 1). Each line a child prints goes to this process's stdout or stderr
 * prefixed "[gpu N] "; a closing line per GPU says how it ended. Waits for all; *worst gets
 * the highest exit status of the children, a child killed by a signal counting as 1 (so 0
 * when every GPU's run completed). RT_OK, or RT_EIO when a pipe or a process could not be
 * made (the children started so far are waited for first).
 */
int devices_tune(const tune_opts *o, const devices_plan *p, devices_run_fn run, void *arg,
                 int *worst, rt_err *e);

#endif
