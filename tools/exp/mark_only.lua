-- mark_only.lua - seg_mark alone (templates/seg_mark.cu), the entry of mark_space.lua: for
-- tools/exp/dev_session25.sh, a database whose winners are seg_mark's, run by redtune_bench
-- under Nsight Compute.
local function vec(case) return case.type_size >= 8 and 2 or 4 end
return {
  { family = "seg_mark",
    params = { B = {128, 256}, R = {8, 16}, V = {2, 4}, CH = {8, 32}, J = {4, 8}, PF = {0, 1} },
    constraint = function(c, dev, case) return case.layout == "offsets" and c.V == vec(case) end },
}
