-- kw2_only.lua - tools/exp/kw2_space.lua with KW = 2 alone: seg_lb over keys, B 256 or 512, R 8
-- or 16, STAGE=0, OST 0 or 1. tools/exp/dev_session30.sh `kw2` tunes it for len3 into a
-- database of its own, so that redtune_bench runs KW = 2's best under Nsight Compute (the
-- instruction count against KW = 1's 87.6 million at len3, min f32, 30M; twenty-ninth session).
local function lb_vec(case) return math.min(4, 16 // case.type_size) end
return {
  { family = "seg_lb",
    params = { LAYOUT = 1, B = {256, 512}, R = {8, 16}, V = {2, 4}, STAGE = 0, PERSIST = 0,
               OST = {0, 1}, KW = 2 },
    constraint = function(c, dev, case)
      return case.layout == "keys" and c.V == lb_vec(case)
    end },
}
