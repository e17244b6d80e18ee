-- r12_space.lua - seg_lb's keys register path with KW = 2 at B = 512, R 8, 12 and 16, OST 0 and
-- 1, MINB 0 and 3 (3 only at R <= 12: R = 16 spills at 40 registers). Under ptxas (min f32,
-- OST=1, KW=2): R=12 takes 42 registers, 40 with MINB = 3 and no spill, so three blocks of 512
-- an SM with 12 elements a thread; R=16 50 (two blocks), R=8 36. The H200's keys winners are
-- R=16 for len3 and rand10_50 at 30M, latency-bound under Nsight Compute (issue slots 56%,
-- DRAM 54%, occupancy 48%; thirtieth session). For tools/exp/dev_session31.sh `minb`.
local function lb_vec(case) return math.min(4, 16 // case.type_size) end
return {
  { family = "seg_lb",
    params = { LAYOUT = 1, B = 512, R = {8, 12, 16}, V = {2, 4}, STAGE = 0, PERSIST = 0,
               OST = {0, 1}, KW = 2, MINB = {0, 3} },
    constraint = function(c, dev, case)
      return case.layout == "keys" and c.V == lb_vec(case) and (c.MINB == 0 or c.R <= 12)
    end },
}
