-- heavy_space.lua - seg_lb's keys register path around the H200's keys heavy winner at 30M
-- (B=512 R=12 V=4 KW=2 MINB=3, OST 1 or 2: sum f32 96.1 us with OST = 2, 0.85x ReduceByKey
-- where the goal is 0.8; thirty-first session): 1536 threads an SM in blocks of 256, 384 and
-- 512 (MINB 6, 4, 3: 40 registers, no spill, under ptxas for sum f32 OST = 2), a resident grid
-- (PERSIST = 1) beside one tile a block, OST 1 and 2. Smaller blocks: a cheaper block scan and
-- more tiles in flight an SM; a resident grid: no tail of a last wave. For
-- tools/exp/dev_session32.sh `heavy`.
return {
  { family = "seg_lb",
    params = { LAYOUT = 1, B = {256, 384, 512}, R = 12, V = 4, STAGE = 0, PERSIST = {0, 1},
               OST = {1, 2}, KW = 2, MINB = {3, 4, 6} },
    constraint = function(c, dev, case)
      return case.layout == "keys" and case.type_size == 4 and c.MINB * c.B == 1536
    end },
}
