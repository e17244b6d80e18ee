-- fixed_cost_space.lua - experiment space (fortieth session, issue 15): a few gridstride
-- configs, the same for every operator, so that sum, sumsq, var_mean and argmax f32 are timed
-- with one kernel shape at sizes from 2^16 to 2^26: what each operator adds to the fixed part
-- of a launch (the finish) and to the time per byte, apart. At 2^22 and 2^26 the H100's
-- exhaustive winners of var_mean and argmax take 2.0-2.7 us more than sum's and sumsq's
-- (docs/results.md, fortieth session).
--   build/redtune --op var_mean --type f32 --sizes 2^16,2^18,2^20,2^22,2^24,2^26 \
--       --space tools/exp/fixed_cost_space.lua
return {
  { family = "gridstride",
    params = { B = { 256, 512, 1024 }, V = { 4 }, U = { 4 }, G = { 1, 2, 4 } },
    constraint = function(c, dev, case)
      return c.B * c.G <= 2048
    end },
}
