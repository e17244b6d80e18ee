-- mark_il_space.lua - seg_mark's walk in two halves side by side (IL = 2: two dependent chains
-- of R/2 folds a thread instead of one of R) against one walk (IL = 1), at the heavy rows'
-- two best shapes on the H100 (R = 16 J = 8 and R = 8 J = 4, B = 128, CH = 8, PF = 1, MP = 1,
-- NZ where the glue has rt_fold_nz, MINW = 0) and at B = 32 (R = 16, J = 8). The thirty-third
-- session's Nsight Compute reading of the heavy tail had 20% of the stalls `wait` (a fixed
-- latency dependency: the fold chain's). For tools/exp/dev_session36.sh il: each config's
-- time by IL from the run's CSV (tools/exp/nz_sum.py CSV IL=1,2).
local function lb_vec(case) return case.type_size >= 8 and 2 or 4 end
local function nz(case)
  return (case.op == "min" or case.op == "max") and (case.type == "f32" or case.type == "f64")
end
return {
  { family = "seg_mark",
    params = { B = {32, 128}, R = {8, 16}, V = {2, 4}, CH = 8, J = {4, 8}, PF = 1, MINW = 0,
               NZ = {0, 1}, MP = 1, IL = {1, 2} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.R % c.V == 0
             and (c.NZ == 1) == nz(case) and (c.R == 16) == (c.J == 8)
             and (c.B == 128 or c.R == 16)
    end },
}
