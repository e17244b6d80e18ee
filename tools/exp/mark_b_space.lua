-- mark_b_space.lua - seg_mark with blocks of one and two warps (B = 32, 64) against B = 128 on
-- the dense offsets profiles: at B = 32 a tile's barriers and its scan are one warp's, and a
-- block of 96 registers leaves 21 warps an SM against 16-20 at B = 128 (min f32, R = 16,
-- J = 8: 96 registers; `nvcc -Xptxas -v` on `redtune emit seg_mark ...`). R 8 and 16, J 4, 8
-- and 16 (B = 32's window is J*31 starts: a 512-element tile of the heavy tail holds about
-- 112), CH 8 and 32, PF = 1, MP = 1, NZ where the glue has rt_fold_nz. For
-- tools/exp/dev_session36.sh: each case's best by B (tools/exp/nz_sum.py CSV B=128,32 and
-- B=128,64).
local function lb_vec(case) return case.type_size >= 8 and 2 or 4 end
local function nz(case)
  return (case.op == "min" or case.op == "max") and (case.type == "f32" or case.type == "f64")
end
return {
  { family = "seg_mark",
    params = { B = {32, 64, 128}, R = {8, 16}, V = {2, 4}, CH = {8, 32}, J = {4, 8, 16}, PF = 1,
               MINW = 0, NZ = {0, 1}, MP = 1 },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.R % c.V == 0
             and (c.NZ == 1) == nz(case) and (c.B < 128 or c.J < 16)
    end },
}
