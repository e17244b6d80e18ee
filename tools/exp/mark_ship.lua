-- mark_ship.lua - the seg_mark entry of lua/spaces/segmented_ship.lua at CH = 8 (its winners'),
-- with PF 0 and 1 and MINW 0 and 32: for tools/exp/dev_session25.sh `final`, the same configs
-- tuned by two binaries (A/B).
local function lb_vec(case) return math.min(4, 16 // case.type_size) end
return {
  { family = "seg_mark",
    params = { B = 128, R = {8, 16}, V = {2, 4}, CH = 8, J = 4, PF = {0, 1}, MINW = {0, 32} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.R % c.V == 0
    end },
}
