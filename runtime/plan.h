/*
 * plan.h - launch plans: the sequence of launches that turns n inputs into one result, as
 * both the tuner's timing and the runtime library issue it.
 *
 * multipass: rt_first over ceil(n/tile) blocks (capped at grid_per_sm * SMs when the family
 *            sets a cap), then rt_next over the partials until one block is left; the last
 *            launch writes out[0].
 * segmented: rt_seg over the tiles (of elements, merge-path items or segments, rt_meta[3]),
 *            then rt_seg_fix in one block over the tiles' carries (docs/segmented.md); a
 *            unit whose results are not its accumulators (mean, var_mean, a result in
 *            another type) has rt_seg_final too: the two write nseg accumulators into the
 *            temporary storage, and rt_seg_final turns them into out[0 .. nseg).
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
    CUfunction seg_final;                      /* segmented: rt_seg_final, NULL when the
                                                * unit finalizes in place */
    unsigned int threads, tile, grid_per_sm;   /* from the module's rt_meta; grid_per_sm is
                                                * the occupancy for PLAN_GRID_OCCUPANCY */
    unsigned int unit;                         /* segmented: what a tile counts (rt_meta[3]) */
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

/* ---- segmented plans (docs/segmented.md); 'first' is unused, 'one' is rt_seg, 'next'
 * rt_seg_fix ---- */

#define PLAN_UNIT_ELEMENTS 0u
#define PLAN_UNIT_ITEMS    1u
#define PLAN_UNIT_SEGMENTS 2u

/* Tiles of rt_seg for n elements in nseg segments (at least 1). */
unsigned long long plan_seg_tiles(const plan *p, unsigned long long n, unsigned long long nseg);

/* Bytes of one carry (key + accumulator) and of the temporary storage: one carry per tile
 * (none for families that need none), then, with rt_seg_final, nseg accumulators (each part
 * rounded up to 256 bytes); 0 when nseg is 0. */
size_t plan_seg_carry_size(const plan *p);
size_t plan_seg_temp_bytes(const plan *p, unsigned long long n, unsigned long long nseg);

/* Launches the sequence issues (0 when nseg is 0; rt_seg_final counts). */
int plan_seg_launch_count(const plan *p, unsigned long long n, unsigned long long nseg);

/* Enqueue rt_seg (and rt_seg_fix) on 's': out[0..nseg) receives the segment reductions.
 * 'seg' is the keys or offsets array; nseg == 0 launches nothing. */
int plan_seg_launch(const plan *p, CUdeviceptr in, CUdeviceptr seg, unsigned long long n,
                    unsigned long long nseg, CUdeviceptr out, CUdeviceptr temp, CUstream s,
                    rt_err *e);

#endif
