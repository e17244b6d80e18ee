/*
 * main.cu - redtune_bench: the kernel libredtune picks, run by rt_reduce as an application
 * runs it, against CUB and the read-bandwidth limit, side by side in one process and one run
 * (docs/bench.md). The options choose one of seven modes:
 *
 *   (default)                  flat reductions against cub::DeviceReduce (flat.cu)
 *   --segmented keys|offsets   rt_reduce_keys / rt_reduce_offsets against ReduceByKey /
 *                              DeviceSegmentedReduce (seg.cu, seg_cases.cu)
 *   --paper-seg                the paper's Fig. 5: segmented families at fixed configs
 *                              (paper_seg.cu)
 *   --api                      libredtune's own checks: host cost, picks, end to end
 *                              (api_check.cu)
 *   --type-cases               issue 15's cases: half types and fused operators against
 *                              CUB's TransformReduce / ArgMax (types.cu)
 *   --axis                     issue 16's shapes: rt_reduce_axis against
 *                              DeviceSegmentedReduce (rows) and the read limit (axis.cu)
 *   --every-n                  issue 14's sweep: rt_reduce against cub::DeviceReduce at every
 *                              power of two and seeded random sizes, with the floor (everyn.cu)
 *
 * Exit status: 0 when the run completed (WRONG results are reported, not failures), 1 on an
 * error, 2 on a usage error.
 */
#include "common.h"

int main(int argc, char **argv)
{
    options o = parse_args(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (o.paper_seg)
        return paper_main(o);
    if (o.layout != SEG_LAYOUT_FLAT)
        return seg_main(o);
    if (o.api)
        return api_main(o);
    if (o.type_cases)
        return types_main(o);
    if (o.axis)
        return axis_main(o);
    if (o.every_n)
        return everyn_main(o);
    return flat_main(o);
}
