/*
 * plan.h - launch plans: the sequence of launches that turns n inputs into one result, as
 * both the tuner's timing and the runtime library issue it.
 *
 * multipass: rt_first over ceil(n/tile) blocks (capped at grid_per_sm * SMs when the family
 *            sets a cap), then rt_next over the partials until one block is left; the last
 *            launch writes out[0].
 * onelaunch: rt_one with grid min(ceil(n/tile), grid_per_sm * SMs); partials and a counter in
 *            the temporary storage; the last block done writes out[0].
 */
#ifndef RT_PLAN_H
#define RT_PLAN_H

#include <stddef.h>
#include "driver.h"
#include "family.h"

/* rt_meta[2] of a persistent family: the grid is as many blocks as fit on the device at once
 * (SMs x the occupancy of the kernel as compiled), whatever n. */
#define PLAN_GRID_OCCUPANCY 0xffffffffu

typedef struct plan {
    CUmodule mod;
    rt_plan_kind kind;
    CUfunction first, next, one;
    unsigned int threads, tile, grid_per_sm;   /* from the module's rt_meta; grid_per_sm is
                                                * the occupancy for PLAN_GRID_OCCUPANCY */
    int sm_count;
    size_t acc_size;
} plan;

/* Load a family's CUBIN and read its rt_meta; the current context must be set. */
int plan_load(plan *p, const void *cubin, rt_plan_kind kind, size_t acc_size, int sm_count,
              rt_err *e);
void plan_unload(plan *p);

/* Blocks of the first launch for n inputs. */
unsigned long long plan_grid(const plan *p, unsigned long long n);

/* Bytes of temporary device storage for n inputs. For onelaunch its first 256 bytes are the
 * counter and must be zero before the first launch (the kernel leaves them zero). */
size_t plan_temp_bytes(const plan *p, unsigned long long n);

/* Enqueue the whole sequence on 's'; n >= 1. Errors from the launches are RT_ECUDA/RT_EFAULT. */
int plan_launch(const plan *p, CUdeviceptr in, CUdeviceptr out, unsigned long long n,
                CUdeviceptr temp, CUstream s, rt_err *e);

/* Number of launches the sequence issues for n inputs. */
int plan_launch_count(const plan *p, unsigned long long n);

#endif
