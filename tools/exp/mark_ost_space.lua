-- mark_ost_space.lua - seg_mark's OST (a tile's outputs kept in shared memory by window index
-- and stored coalesced; the walk's closed runs one predicated 32-bit shared store each, no
-- head kept) against OST = 0, at the heavy rows' shapes (B = 128, R = 8 and 16, CH = 8,
-- PF = 1, MP = 1, NZ where the glue has rt_fold_nz), J 4 and 8, MINW 0 and 32. For
-- tools/exp/dev_session35.sh `ost`: each config's time by OST from the run's CSV
-- (tools/exp/nz_sum.py CSV OST), over every offsets profile.
local function lb_vec(case) return case.type_size >= 8 and 2 or 4 end
local function nz(case)
  return (case.op == "min" or case.op == "max") and (case.type == "f32" or case.type == "f64")
end
return {
  { family = "seg_mark",
    params = { B = 128, R = {8, 16}, V = {2, 4}, CH = 8, J = {4, 8}, PF = 1, MINW = {0, 32},
               NZ = {0, 1}, MP = 1, OST = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.R % c.V == 0
             and (c.NZ == 1) == nz(case)
    end },
}
