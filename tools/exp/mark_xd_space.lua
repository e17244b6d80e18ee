-- mark_xd_space.lua - what seg_mark's stages cost on the heavy tail (HOPPER.md's method: a
-- stage done twice, the results unchanged): XD = 1 the block scan twice, 2 the window's
-- entries (marks, head records, empty segments, the count) twice, 3 both, against XD = 0, at
-- the heavy rows' two best shapes on the H100 (thirty-fifth and thirty-sixth sessions: R = 16
-- J = 8 and R = 8 J = 4, B = 128, CH = 8, PF = 1, MP = 1, NZ where the glue has rt_fold_nz,
-- MINW = 0). For tools/exp/dev_session36.sh: each config's time by XD from the run's CSV
-- (tools/exp/nz_sum.py CSV XD=0,1, XD=0,2, XD=0,3).
local function lb_vec(case) return case.type_size >= 8 and 2 or 4 end
local function nz(case)
  return (case.op == "min" or case.op == "max") and (case.type == "f32" or case.type == "f64")
end
return {
  { family = "seg_mark",
    params = { B = 128, R = {8, 16}, V = {2, 4}, CH = 8, J = {4, 8}, PF = 1, MINW = 0,
               NZ = {0, 1}, MP = 1, XD = {0, 1, 2, 3} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.R % c.V == 0
             and (c.NZ == 1) == nz(case) and (c.R == 16) == (c.J == 8)
    end },
}
