-- ost2_space.lua - seg_lb's keys register path with the output stage prefilled (OST = 2: empty
-- keys inside a tile's stage need no store, so the walk's loop over them, a branch a warp
-- diverges on, is left for keys outside it) against OST = 1, at the shapes that won the H200's
-- keys rows at 30M (B = 512, KW = 2, R 8, 12 and 16, MINB 3 where it fits without spilling).
-- Under ptxas (sum f32, KW = 2): OST = 2 R=12 MINB=3 40 registers (as OST = 1), R=12 44, R=16
-- 48, R=8 47 (32 with OST = 1). For tools/exp/dev_session32.sh `ost2` (thirty-first session:
-- keys heavy sum 0.887x ReduceByKey, goal 0.8; heavy has an empty segment in ten).
local function lb_vec(case) return math.min(4, 16 // case.type_size) end
return {
  { family = "seg_lb",
    params = { LAYOUT = 1, B = 512, R = {8, 12, 16}, V = {2, 4}, STAGE = 0, PERSIST = 0,
               OST = {1, 2}, KW = 2, MINB = {0, 3} },
    constraint = function(c, dev, case)
      return case.layout == "keys" and c.V == lb_vec(case)
             and (c.MINB == 0 or (case.type_size == 8 and c.R == 8)
                  or (case.type_size == 4 and c.R == 12))
    end },
}
