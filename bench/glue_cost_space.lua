-- glue_cost_space.lua - the shipped H100 winners of min/max f32 (cold, 2^20, 2^24, 2^28 in
-- db/tuned/h100.sql), to time them as today's generator makes them (the empty marker and
-- rt_final of float min/max) against the stored kernels the bench runs (docs/results.md,
-- "All-NaN min/max: what the marker costs").
return {
  { family = "gridstride", params = { B = 512, V = 4, U = 4, G = {2, 4, 8} } },
  { family = "gridstride", params = { B = 1024, V = 4, U = 2, G = 2 } },
  { family = "tree_sequential", params = { B = 512, R = 4, LOAD_ADD = 1, WARP = 1, UNROLL = 1 } },
}
