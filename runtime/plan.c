/*
 * plan.c - the launch sequences of the plans (multipass, onelaunch, segmented, axis).
 */
#include <string.h>
#include "plan.h"

#define ALIGN 256

static size_t align_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

static unsigned long long ceil_div(unsigned long long a, unsigned long long b)
{
    return (a + b - 1) / b;
}

static int split_load(plan *p, int sm_count, rt_err *e);

int plan_load(plan *p, const void *cubin, rt_plan_kind kind, size_t acc_size, int sm_count,
              rt_err *e)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->acc_size = acc_size;
    p->sm_count = sm_count;
    CUresult r = cu.ModuleLoadData(&p->mod, cubin);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "cuModuleLoadData", e);
    CUdeviceptr meta;
    size_t len = 0;
    unsigned int m[4];
    if ((r = cu.ModuleGetGlobal(&meta, &len, p->mod, "rt_meta")) != CUDA_SUCCESS || len != sizeof m) {
        plan_unload(p);
        return r != CUDA_SUCCESS ? driver_fail(r, "rt_meta", e)
                                 : rt_seterr(e, RT_EINVAL, "rt_meta has %zu bytes, not 16", len);
    }
    if ((r = cu.MemcpyDtoH(m, meta, sizeof m)) != CUDA_SUCCESS) {
        plan_unload(p);
        return driver_fail(r, "reading rt_meta", e);
    }
    p->threads = m[0];
    p->tile = m[1];
    p->grid_per_sm = m[2];
    p->unit = m[3];
    if (kind == PLAN_AXIS && p->unit > PLAN_AXIS_TILE_INNER) {
        plan_unload(p);
        return rt_seterr(e, RT_EINVAL, "rt_meta[3] = %u is not an axis tile unit (0, 1)", m[3]);
    }
    if (kind == PLAN_SEGMENTED && p->unit > PLAN_UNIT_SEGMENTS) {
        plan_unload(p);
        return rt_seterr(e, RT_EINVAL, "rt_meta[3] = %u is not a segmented tile unit (0, 1, 2)", m[3]);
    }
    if (kind == PLAN_ONELAUNCH && p->unit > PLAN_ONE_BLOCK) {
        plan_unload(p);
        return rt_seterr(e, RT_EINVAL, "rt_meta[3] = %u is not a one-launch grid kind (0, 1)", m[3]);
    }
    if (p->threads == 0 || p->threads > 1024 || p->tile == 0) {
        plan_unload(p);
        return rt_seterr(e, RT_EINVAL, "rt_meta {%u, %u, %u} is not a valid launch shape", m[0], m[1], m[2]);
    }
    if (kind == PLAN_SEGMENTED) {
        r = cu.ModuleGetFunction(&p->one, p->mod, "rt_seg");
        if (r == CUDA_SUCCESS && p->unit != PLAN_UNIT_SEGMENTS)
            r = cu.ModuleGetFunction(&p->next, p->mod, "rt_seg_fix");
        /* Only the units that do not finalize in place have it (templates/seg_common.cuh). */
        if (r == CUDA_SUCCESS
            && (r = cu.ModuleGetFunction(&p->seg_final, p->mod, "rt_seg_final")) != CUDA_SUCCESS) {
            p->seg_final = NULL;
            r = r == CUDA_ERROR_NOT_FOUND ? CUDA_SUCCESS : r;
        }
        /* Only seg_per with SPLIT has it (templates/seg_per.cu). */
        if (r == CUDA_SUCCESS
            && (r = cu.ModuleGetFunction(&p->seg_split, p->mod, "rt_seg_split")) != CUDA_SUCCESS) {
            p->seg_split = NULL;
            r = r == CUDA_ERROR_NOT_FOUND ? CUDA_SUCCESS : r;
        }
        if (r == CUDA_SUCCESS && p->seg_split) {
            int rc = split_load(p, sm_count, e);
            if (rc != RT_OK) {
                plan_unload(p);
                return rc;
            }
        }
    } else if (kind == PLAN_ONELAUNCH)
        r = cu.ModuleGetFunction(&p->one, p->mod, "rt_one");
    else if (kind == PLAN_AXIS)
        r = cu.ModuleGetFunction(&p->one, p->mod, "rt_axis");
    else if ((r = cu.ModuleGetFunction(&p->first, p->mod, "rt_first")) == CUDA_SUCCESS)
        r = cu.ModuleGetFunction(&p->next, p->mod, "rt_next");
    if (r != CUDA_SUCCESS) {
        plan_unload(p);
        return driver_fail(r, kind == PLAN_ONELAUNCH ? "rt_one"
                              : kind == PLAN_SEGMENTED ? "rt_seg/rt_seg_fix"
                              : kind == PLAN_AXIS ? "rt_axis" : "rt_first/rt_next", e);
    }
    if (kind == PLAN_AXIS) {
        /* rt_meta[2] is the split chunk, not a grid cap; the splits fill the blocks that are
         * resident at once. */
        p->axis_chunk = p->grid_per_sm;
        p->grid_per_sm = 0;
        int per_sm = 0;
        r = cu.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, p->one, (int)p->threads, 0);
        if (r != CUDA_SUCCESS || per_sm < 1) {
            plan_unload(p);
            return r != CUDA_SUCCESS ? driver_fail(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor", e)
                                     : rt_seterr(e, RT_EINVAL, "the kernel cannot be resident (occupancy 0)");
        }
        p->axis_fit = (unsigned long long)per_sm * (unsigned)sm_count;
        return RT_OK;
    }
    if (p->grid_per_sm == PLAN_GRID_OCCUPANCY) {
        /* Persistent: blocks per SM from the occupancy of the compiled kernel (registers and
         * shared memory decide it), not a constant. */
        int per_sm = 0;
        r = cu.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kind == PLAN_MULTIPASS ? p->first : p->one,
                                                        (int)p->threads, 0);
        if (r != CUDA_SUCCESS || per_sm < 1) {
            plan_unload(p);
            return r != CUDA_SUCCESS ? driver_fail(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor", e)
                                     : rt_seterr(e, RT_EINVAL, "the kernel cannot be resident (occupancy 0)");
        }
        p->grid_per_sm = (unsigned)per_sm;
    }
    return RT_OK;
}

void plan_unload(plan *p)
{
    if (p && p->mod) {
        cu.ModuleUnload(p->mod);
        p->mod = NULL;
    }
}

/* Blocks for m inputs at one step; capped where the family loops over tiles. */
static unsigned long long grid_for(const plan *p, unsigned long long m)
{
    if (p->kind == PLAN_ONELAUNCH && p->unit == PLAN_ONE_BLOCK)
        return 1;
    unsigned long long g = ceil_div(m, p->tile);
    if (p->grid_per_sm) {
        unsigned long long cap = (unsigned long long)p->grid_per_sm * (unsigned)p->sm_count;
        if (g > cap)
            g = cap;
    }
    if (g > 0x7fffffffULL)
        g = 0x7fffffffULL;   /* cannot happen for n < 2^40 with tile >= 512 */
    return g;
}

unsigned long long plan_grid(const plan *p, unsigned long long n) { return grid_for(p, n); }

size_t plan_temp_bytes(const plan *p, unsigned long long n)
{
    unsigned long long g1 = grid_for(p, n);
    if (p->kind == PLAN_ONELAUNCH)
        return ALIGN + align_up(g1 * p->acc_size);
    if (g1 <= 1)
        return 0;
    unsigned long long g2 = grid_for(p, g1);
    return align_up(g1 * p->acc_size) + (g2 > 1 ? align_up(g2 * p->acc_size) : 0);
}

int plan_launch_count(const plan *p, unsigned long long n)
{
    if (p->kind == PLAN_ONELAUNCH)
        return 1;
    int k = 1;
    for (unsigned long long g = grid_for(p, n); g > 1; g = grid_for(p, g))
        k++;
    return k;
}

static int launch(CUfunction f, unsigned long long grid, unsigned threads, CUstream s,
                  void **args, rt_err *e)
{
    CUresult r = cu.LaunchKernel(f, (unsigned)grid, 1, 1, threads, 1, 1, 0, s, args, NULL);
    return r == CUDA_SUCCESS ? RT_OK : driver_fail(r, "cuLaunchKernel", e);
}

int plan_launch(const plan *p, CUdeviceptr in, CUdeviceptr out, unsigned long long n,
                CUdeviceptr temp, CUstream s, rt_err *e)
{
    if (n == 0)
        return rt_seterr(e, RT_EINVAL, "plan_launch: n must be at least 1");
    unsigned long long g = grid_for(p, n);
    if (p->kind == PLAN_ONELAUNCH) {
        CUdeviceptr counter = temp, partials = temp + ALIGN;
        void *args[] = {&in, &out, &n, &partials, &counter};
        return launch(p->one, g, p->threads, s, args, e);
    }
    /* Ping-pong between two partial buffers; sizes only shrink, so the first holds g1
     * partials and the second g2. */
    CUdeviceptr buf[2] = {temp, temp + align_up(g * p->acc_size)};
    CUdeviceptr src = in, dst = g > 1 ? buf[0] : out;
    unsigned long long m = n;
    void *args[] = {&src, &dst, &m};
    int rc = launch(p->first, g, p->threads, s, args, e);
    for (int k = 1; rc == RT_OK && g > 1; k++) {
        m = g;
        g = grid_for(p, m);
        src = dst;
        dst = g > 1 ? buf[k & 1] : out;
        rc = launch(p->next, g, p->threads, s, args, e);
    }
    return rc;
}

int plan_bounds_launch(const plan *p, CUdeviceptr in, CUdeviceptr offsets, CUdeviceptr out,
                       unsigned long long n, CUdeviceptr temp, CUstream s, rt_err *e)
{
    if (p->kind != PLAN_ONELAUNCH || n == 0)
        return rt_seterr(e, RT_EINVAL, "plan_bounds_launch: a onelaunch plan and n >= 1");
    CUdeviceptr counter = temp, partials = temp + ALIGN;
    void *args[] = {&in, &out, &n, &partials, &counter, &offsets};
    return launch(p->one, grid_for(p, n), p->threads, s, args, e);
}

/* ---- segmented (docs/segmented.md) ---- */

/* rt_seg_split's chunk and threshold (rt_seg_split_chunk: SPLIT, and the length above which a
 * segment is on the list) and its grid (SMs x its occupancy). */
static int split_load(plan *p, int sm_count, rt_err *e)
{
    CUdeviceptr g;
    size_t len = 0;
    CUresult r = cu.ModuleGetGlobal(&g, &len, p->mod, "rt_seg_split_chunk");
    if (r != CUDA_SUCCESS || len != sizeof p->split_chunk)
        return r != CUDA_SUCCESS ? driver_fail(r, "rt_seg_split_chunk", e)
                                 : rt_seterr(e, RT_EINVAL, "rt_seg_split_chunk has %zu bytes, not 8", len);
    if ((r = cu.MemcpyDtoH(p->split_chunk, g, sizeof p->split_chunk)) != CUDA_SUCCESS)
        return driver_fail(r, "reading rt_seg_split_chunk", e);
    if (p->split_chunk[0] < 256 || p->split_chunk[1] == 0)
        return rt_seterr(e, RT_EINVAL, "rt_seg_split_chunk = {%u, %u}: the chunk is below 256 or the "
                         "threshold 0", p->split_chunk[0], p->split_chunk[1]);
    int per_sm = 0;
    r = cu.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, p->seg_split, (int)p->threads, 0);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor (rt_seg_split)", e);
    if (per_sm < 1)
        return rt_seterr(e, RT_EINVAL, "rt_seg_split cannot be resident (occupancy 0)");
    p->split_grid = (unsigned long long)per_sm * (unsigned)sm_count;
    return RT_OK;
}

/* Bytes of rt_seg_split's list for n elements (templates/seg_per.cu, per_list_at): 16, then
 * K jobs of 16 bytes and K tickets of 4, to a multiple of 64, then K accumulators; K =
 * floor(n / chunk) + min(nseg, floor(n / threshold)) + 1. */
static size_t split_bytes(const plan *p, unsigned long long n, unsigned long long nseg)
{
    if (!p->seg_split)
        return 0;
    unsigned long long listed = n / p->split_chunk[1];
    unsigned long long k = n / p->split_chunk[0] + (nseg < listed ? nseg : listed) + 1;
    return align_up((16 + k * 20 + 63) / 64 * 64 + k * p->acc_size);
}

unsigned long long plan_seg_tiles(const plan *p, unsigned long long n, unsigned long long nseg)
{
    unsigned long long units = p->unit == PLAN_UNIT_ELEMENTS ? n
                             : p->unit == PLAN_UNIT_ITEMS ? n + nseg : nseg;
    unsigned long long t = ceil_div(units, p->tile);
    return t ? t : 1;
}

size_t plan_seg_carry_size(const plan *p)
{
    return 8 + (p->acc_size + 7) / 8 * 8;
}

/* Bytes of the carries, at the start of the temporary storage. */
static size_t seg_carry_bytes(const plan *p, unsigned long long n, unsigned long long nseg)
{
    if (p->unit == PLAN_UNIT_SEGMENTS || nseg == 0)
        return 0;
    return align_up(plan_seg_tiles(p, n, nseg) * plan_seg_carry_size(p));
}

/* Where rt_seg_split's list starts: after the carries and rt_seg_final's accumulators. */
static size_t split_offset(const plan *p, unsigned long long n, unsigned long long nseg)
{
    return seg_carry_bytes(p, n, nseg) + (p->seg_final ? align_up(nseg * p->acc_size) : 0);
}

size_t plan_seg_temp_bytes(const plan *p, unsigned long long n, unsigned long long nseg)
{
    if (nseg == 0)
        return 0;
    return split_offset(p, n, nseg) + split_bytes(p, n, nseg);
}

unsigned int plan_seg_fix_grid(const plan *p, unsigned long long tiles)
{
    unsigned long long g = ceil_div(tiles, p->threads), cap = 4ULL * (unsigned)p->sm_count;
    return (unsigned)(g > cap && cap ? cap : g ? g : 1);
}

int plan_seg_launch_count(const plan *p, unsigned long long n, unsigned long long nseg)
{
    if (nseg == 0)
        return 0;
    return 1 + (p->unit != PLAN_UNIT_SEGMENTS && plan_seg_tiles(p, n, nseg) > 1)
             + (p->seg_final != NULL) + (p->seg_split != NULL);
}

int plan_seg_launch(const plan *p, CUdeviceptr in, CUdeviceptr seg, unsigned long long n,
                    unsigned long long nseg, CUdeviceptr out, CUdeviceptr temp, CUstream s,
                    rt_err *e)
{
    if (p->kind != PLAN_SEGMENTED)
        return rt_seterr(e, RT_EINVAL, "plan_seg_launch: not a segmented plan");
    if (nseg == 0)
        return RT_OK;
    unsigned long long tiles = plan_seg_tiles(p, n, nseg), grid = tiles;
    if (p->grid_per_sm) {
        unsigned long long cap = (unsigned long long)p->grid_per_sm * (unsigned)p->sm_count;
        if (grid > cap)
            grid = cap;
    }
    if (grid > 0x7fffffffULL)
        return rt_seterr(e, RT_EINVAL, "%llu tiles do not fit one grid", tiles);
    /* With rt_seg_final the segments' accumulators go to the temporary storage after the
     * carries, and its launch writes the results. */
    CUdeviceptr acc = p->seg_final ? temp + seg_carry_bytes(p, n, nseg) : out;
    /* With rt_seg_split its list follows, passed to both launches as the carries. */
    CUdeviceptr list = temp;
    if (p->seg_split) {
        list = temp + split_offset(p, n, nseg);
        CUresult r = cu.MemsetD32Async(list, 0, 2, s);
        if (r != CUDA_SUCCESS)
            return driver_fail(r, "clearing the list of long segments (cuMemsetD32Async)", e);
    }
    void *args[] = {&in, &seg, &n, &nseg, &acc, &list, &tiles};
    int rc = launch(p->one, grid, p->threads, s, args, e);
    if (rc == RT_OK && p->seg_split) {
        void *sargs[] = {&in, &seg, &n, &nseg, &acc, &list};
        rc = launch(p->seg_split, p->split_grid, p->threads, s, sargs, e);
    }
    if (rc == RT_OK && p->unit != PLAN_UNIT_SEGMENTS && tiles > 1) {
        void *fargs[] = {&temp, &tiles, &acc, &nseg};
        rc = launch(p->next, plan_seg_fix_grid(p, tiles), p->threads, s, fargs, e);
    }
    if (rc == RT_OK && p->seg_final) {
        unsigned long long fgrid = ceil_div(nseg, 256), cap = 4ULL * (unsigned)p->sm_count;
        fgrid = fgrid > cap && cap ? cap : fgrid;
        void *fargs[] = {&acc, &out, &nseg};
        rc = launch(p->seg_final, fgrid, 256, s, fargs, e);
    }
    return rc;
}

/* ---- axis (docs/axis.md) ---- */

unsigned long long plan_axis_tiles(const plan *p, unsigned long long outer, unsigned long long inner)
{
    if (p->unit == PLAN_AXIS_TILE_INNER)
        return outer * ceil_div(inner, p->tile);
    return ceil_div(outer * inner, p->tile);
}

unsigned int plan_axis_splits(const plan *p, unsigned long long outer, unsigned long long len,
                              unsigned long long inner)
{
    unsigned long long tiles = plan_axis_tiles(p, outer, inner);
    if (p->axis_chunk == 0 || len <= p->axis_chunk || tiles == 0 || tiles > PLAN_AXIS_MAX_TILES
        || tiles >= p->axis_fit)
        return 1;
    /* Enough blocks to fill the GPU once, no split shorter than the chunk. */
    unsigned long long s = ceil_div(p->axis_fit, tiles), most = len / p->axis_chunk;
    if (s > most)
        s = most;
    if (s > PLAN_AXIS_MAX_SPLITS)
        s = PLAN_AXIS_MAX_SPLITS;
    return s < 1 ? 1 : (unsigned)s;
}

/* The kernels' rule (templates/axis_common.cuh, ax_grouped): the splits of a tile are folded
 * in groups of PLAN_AXIS_GROUP first when there are more than PLAN_AXIS_GROUP_FROM and their
 * counters, tiles * (groups + 1), fit in PLAN_AXIS_MAX_TILES. */
/* Whether 'splits' splits of 'tiles' tiles fold in groups (plan_axis_grouped). */
static int grouped(unsigned int splits, unsigned long long tiles)
{
    return splits > PLAN_AXIS_GROUP_FROM
           && tiles * (ceil_div(splits, PLAN_AXIS_GROUP) + 1) <= PLAN_AXIS_MAX_TILES;
}

int plan_axis_grouped(const plan *p, unsigned long long outer, unsigned long long len,
                      unsigned long long inner)
{
    return grouped(plan_axis_splits(p, outer, len, inner), plan_axis_tiles(p, outer, inner));
}

/* The counters of 'splits' splits (none for one): one per tile, or one per group of each tile
 * and one for the groups. */
static size_t counter_bytes(const plan *p, unsigned int splits, unsigned long long outer,
                            unsigned long long inner)
{
    if (splits <= 1)
        return 0;
    unsigned long long n = plan_axis_tiles(p, outer, inner);
    if (grouped(splits, n))
        n *= ceil_div(splits, PLAN_AXIS_GROUP) + 1;
    return align_up(n * sizeof(unsigned int));
}

/* The partials of 'splits' splits (none for one). */
static size_t partial_bytes(const plan *p, unsigned int splits, unsigned long long outer,
                            unsigned long long inner)
{
    return splits <= 1 ? 0 : align_up((size_t)splits * outer * inner * p->acc_size);
}

size_t plan_axis_counter_bytes(const plan *p, unsigned long long outer, unsigned long long len,
                               unsigned long long inner)
{
    return counter_bytes(p, plan_axis_splits(p, outer, len, inner), outer, inner);
}

size_t plan_axis_temp_bytes(const plan *p, unsigned long long outer, unsigned long long len,
                            unsigned long long inner)
{
    unsigned int splits = plan_axis_splits(p, outer, len, inner);
    return counter_bytes(p, splits, outer, inner) + partial_bytes(p, splits, outer, inner);
}

CUdeviceptr plan_axis_temp_in_area(const plan *p, CUdeviceptr area, unsigned long long outer,
                                   unsigned long long len, unsigned long long inner)
{
    return area + PLAN_AXIS_COUNTER_AREA - plan_axis_counter_bytes(p, outer, len, inner);
}

size_t plan_axis_area_bytes(const plan *p, unsigned long long outer, unsigned long long len,
                            unsigned long long inner)
{
    return PLAN_AXIS_COUNTER_AREA
         + partial_bytes(p, plan_axis_splits(p, outer, len, inner), outer, inner);
}

int plan_axis_launch(const plan *p, CUdeviceptr in, CUdeviceptr out, unsigned long long outer,
                     unsigned long long len, unsigned long long inner, CUdeviceptr temp,
                     CUstream s, rt_err *e)
{
    if (p->kind != PLAN_AXIS)
        return rt_seterr(e, RT_EINVAL, "plan_axis_launch: not an axis plan");
    if (outer == 0 || inner == 0)
        return RT_OK;
    unsigned long long tiles = plan_axis_tiles(p, outer, inner);
    unsigned int splits = plan_axis_splits(p, outer, len, inner);
    unsigned long long grid = tiles > 0x7fffffffULL ? 0x7fffffffULL : tiles;
    CUdeviceptr counter = splits > 1 ? temp : 0;
    CUdeviceptr part = splits > 1 ? temp + counter_bytes(p, splits, outer, inner) : 0;
    void *args[] = {&in, &out, &part, &counter, &outer, &len, &inner};
    CUresult r = cu.LaunchKernel(p->one, (unsigned)grid, splits, 1, p->threads, 1, 1, 0, s, args, NULL);
    return r == CUDA_SUCCESS ? RT_OK : driver_fail(r, "cuLaunchKernel (rt_axis)", e);
}
