/*
 * plan.h - launch plans: the sequence of launches that turns n inputs into one result, as
 * both the tuner's timing and the runtime library issue it.
 *
 * multipass: rt_first over ceil(n/tile) blocks (capped at grid_per_sm * SMs when the family
 *            sets a cap), then rt_next over the partials until one block is left; the last
 *            launch writes out[0].
 * segmented: rt_seg over the tiles (of elements, merge-path items or segments, rt_meta[3]),
 *            then rt_seg_fix over the tiles' carries (docs/segmented.md); a
 *            unit whose results are not its accumulators (mean, var_mean, a result in
 *            another type) has rt_seg_final too: the two write nseg accumulators into the
 *            temporary storage, and rt_seg_final turns them into out[0 .. nseg).
 *            A unit with rt_seg_split (seg_per SPLIT) leaves its longest segments to a list
 *            in the temporary storage (after the carries and accumulators; its first 8 bytes
 *            cleared before rt_seg), and rt_seg_split, a resident grid after rt_seg, reduces
 *            them chunk by chunk.
 * onelaunch: rt_one with grid min(ceil(n/tile), grid_per_sm * SMs); partials and a counter in
 *            the temporary storage; the last block done writes out[0].
 * axis:      rt_axis over an [outer, len, inner] tensor reduced along len into [outer, inner]
 *            (docs/axis.md): grid.x the tiles of outputs, grid.y the splits of len; with
 *            more than one split, partials and a counter per tile in the temporary storage,
 *            and the last block of a tile folds its splits in order and writes its outputs.
 */
#ifndef RT_PLAN_H
#define RT_PLAN_H

#include <stddef.h>
#include "driver.h"
#include "family.h"

/* rt_meta[2] of a persistent family: the grid is as many blocks as fit on the device at once
 * (SMs x the occupancy of the kernel as compiled), whatever n. */
#define PLAN_GRID_OCCUPANCY 0xffffffffu

/* rt_meta[3] of a one-launch family: the grid is ceil(n / tile) blocks capped by grid_per_sm x
 * SMs (PLAN_GRID_TILES), or a single block whatever n (PLAN_ONE_BLOCK: templates/oneblock.cu). */
#define PLAN_GRID_TILES 0u
#define PLAN_ONE_BLOCK  1u

typedef struct plan {
    CUmodule mod;
    rt_plan_kind kind;
    CUfunction first, next, one;
    CUfunction seg_final;                      /* segmented: rt_seg_final, NULL when the
                                                * unit finalizes in place */
    CUfunction seg_split;                      /* segmented: rt_seg_split (seg_per SPLIT), NULL
                                                * when the unit has none */
    unsigned int split_chunk[2];               /* its rt_seg_split_chunk: elements a chunk,
                                                * and the length above which a segment is
                                                * on its list */
    unsigned long long split_grid;             /* its grid: SMs x its occupancy */
    unsigned int threads, tile, grid_per_sm;   /* from the module's rt_meta; grid_per_sm is
                                                * the occupancy for PLAN_GRID_OCCUPANCY */
    unsigned int unit;                         /* segmented: what a tile counts (rt_meta[3]);
                                                * axis: PLAN_AXIS_TILE_FLAT or _INNER;
                                                * one launch: PLAN_GRID_TILES or _ONE_BLOCK */
    unsigned int axis_chunk;                   /* axis: rt_meta[2], the fewest elements of
                                                * len per split (0: never split) */
    unsigned long long axis_fit;               /* axis: blocks resident at once (SMs x the
                                                * occupancy of rt_axis as compiled) */
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

/* A onelaunch plan of a kernel generated with RT_BOUNDS (a @bounds family): the one segment
 * [offsets[0], offsets[1]) of in[0..n), its bounds read on the GPU; the grid and temp as
 * plan_launch's for n. */
int plan_bounds_launch(const plan *p, CUdeviceptr in, CUdeviceptr offsets, CUdeviceptr out,
                       unsigned long long n, CUdeviceptr temp, CUstream s, rt_err *e);

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
 * (none for families that need none), then, with rt_seg_final, nseg accumulators, then, with
 * rt_seg_split, its list (each part rounded up to 256 bytes); 0 when nseg is 0. */
size_t plan_seg_carry_size(const plan *p);
size_t plan_seg_temp_bytes(const plan *p, unsigned long long n, unsigned long long nseg);

/* rt_seg_fix's grid for 'tiles' carries: a block per p->threads carries, at most four an SM
 * (the kernel takes its chunks grid-strided, so any grid is right). */
unsigned int plan_seg_fix_grid(const plan *p, unsigned long long tiles);

/* Launches the sequence issues (0 when nseg is 0; rt_seg_final and rt_seg_split count, the
 * clearing of the list does not). */
int plan_seg_launch_count(const plan *p, unsigned long long n, unsigned long long nseg);

/* Enqueue rt_seg (and rt_seg_fix) on 's': out[0..nseg) receives the segment reductions.
 * 'seg' is the keys or offsets array; nseg == 0 launches nothing. */
int plan_seg_launch(const plan *p, CUdeviceptr in, CUdeviceptr seg, unsigned long long n,
                    unsigned long long nseg, CUdeviceptr out, CUdeviceptr temp, CUstream s,
                    rt_err *e);

/* ---- axis plans (docs/axis.md); 'one' is rt_axis ----
 *
 * Kernel ABI of a family with `@plan axis`:
 *   rt_meta[4] = { threads, tile, chunk, unit }
 *     tile:  outputs per block; unit PLAN_AXIS_TILE_FLAT: `tile` consecutive outputs of the
 *            flattened [outer * inner] (rows families: a tile may span several outer rows);
 *            PLAN_AXIS_TILE_INNER: `tile` consecutive inner indices of one outer index (a
 *            tile never crosses an outer boundary; columns families).
 *     chunk: the fewest elements of len a split may get; 0: the family never splits len.
 *   extern "C" __global__ void rt_axis(const rt_value_t *in, rt_res_t *out, rt_acc_t *part,
 *                                      unsigned int *counter, unsigned long long outer,
 *                                      unsigned long long len, unsigned long long inner);
 *   grid = (min(tiles, 2^31 - 1), splits, 1); a block loops over tiles x, x + gridDim.x, ...
 *   splits == 1: out[o * inner + i] = rt_final(the in-order fold over l of
 *                rt_lift(in[(o * len + l) * inner + i], l)); part and counter unused.
 *   splits > 1 (then tiles <= PLAN_AXIS_MAX_TILES and grid.x == tiles): block (x, s) folds
 *                its part of len (split s of the kernel's own contiguous cut, in order) into
 *                part[s * outer * inner + m] for the tile's outputs m, then counts itself in
 *                counter[x]; the last block of tile x folds part[0 .. splits) in order, writes
 *                rt_final of it to out, and sets counter[x] back to 0. Grouped
 *                (plan_axis_grouped: more than PLAN_AXIS_GROUP_FROM splits and room for the
 *                counters): block (x, s) counts itself in counter[tiles + x * ng + s /
 *                PLAN_AXIS_GROUP] (ng = ceil(splits / PLAN_AXIS_GROUP)), the last of each group
 *                folds its group into part[first split of the group] and counts itself in
 *                counter[x], and the last of those folds the ng groups into out; every counter
 *                back to 0. Counters: tiles, or tiles * (ng + 1) grouped; at most
 *                PLAN_AXIS_MAX_TILES either way.
 *   len == 0 writes rt_final(rt_identity()) to every output; outer * inner == 0 launches
 *   nothing. The index given to rt_lift is the position along the axis (argmin/argmax
 *   return it, as torch's dim reductions do).
 */

#define PLAN_AXIS_TILE_FLAT  0u
#define PLAN_AXIS_TILE_INNER 1u
#define PLAN_AXIS_MAX_TILES  4096u     /* counters of a split launch: 16 KiB */
#define PLAN_AXIS_GROUP      32u       /* splits a group folds (templates/axis_common.cuh AX_GROUP) */
#define PLAN_AXIS_GROUP_FROM 256u      /* groups above this many splits (AX_GROUP_FROM) */
#define PLAN_AXIS_MAX_SPLITS 65535u

/* Tiles of outputs (grid.x before the cap) and splits of len (grid.y) for a shape. */
unsigned long long plan_axis_tiles(const plan *p, unsigned long long outer, unsigned long long inner);
unsigned int plan_axis_splits(const plan *p, unsigned long long outer, unsigned long long len,
                              unsigned long long inner);

/* 1 when a launch of this shape folds its splits in groups (the kernels' rule, above). */
int plan_axis_grouped(const plan *p, unsigned long long outer, unsigned long long len,
                      unsigned long long inner);

/* Bytes of the counters at the start of the temporary storage (0 without splits): they must
 * be zero before the launch, and the kernel leaves them zero. */
size_t plan_axis_counter_bytes(const plan *p, unsigned long long outer, unsigned long long len,
                               unsigned long long inner);

/* Bytes of temporary storage: the counters, then splits x outer x inner accumulators; 0
 * without splits. */
size_t plan_axis_temp_bytes(const plan *p, unsigned long long outer, unsigned long long len,
                            unsigned long long inner);

/* Storage that serves launches of any shape, as libredtune's per-stream block does: an area
 * of PLAN_AXIS_COUNTER_AREA bytes, zero once, then partials. A launch's temp is
 * plan_axis_temp_in_area: its counters end where the area ends and its partials start there,
 * so no launch reads the partials an earlier one left as its counters (with [counters]
 * [partials] from one base, a shape with more counters than the last one would). Every
 * counter is zero again after a launch. plan_axis_area_bytes: what such storage needs for a
 * shape (the area, then the partials). */
#define PLAN_AXIS_COUNTER_AREA (PLAN_AXIS_MAX_TILES * 4u)
CUdeviceptr plan_axis_temp_in_area(const plan *p, CUdeviceptr area, unsigned long long outer,
                                   unsigned long long len, unsigned long long inner);
size_t plan_axis_area_bytes(const plan *p, unsigned long long outer, unsigned long long len,
                            unsigned long long inner);

/* Enqueue rt_axis on 's' (nothing when outer * inner == 0; the caller checks that the
 * products do not overflow). */
int plan_axis_launch(const plan *p, CUdeviceptr in, CUdeviceptr out, unsigned long long outer,
                     unsigned long long len, unsigned long long inner, CUdeviceptr temp,
                     CUstream s, rt_err *e);

#endif
