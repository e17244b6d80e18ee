-- mark_nz_space.lua - seg_mark's NZ (a thread's elements after its first that continue a run
-- folded by the glue's rt_fold_nz: float min and max, fmin alone an element), MP (the marks
-- padded against bank conflicts) and J (4 and 8: a 2048-element tile of the heavy tail holds
-- up to 875 starts, J = 4's window 496) at the heavy rows' winning shape (B = 128, R = 16,
-- CH = 8, PF = 1), MINW 0 and 32. For tools/exp/dev_session34.sh `mark` and `mark2`: each
-- config's time by NZ, by MP and by J from the run's CSV (tools/exp/nz_sum.py CSV PARAM).
local function lb_vec(case) return case.type_size >= 8 and 2 or 4 end
local function nz_ok(c, case)
  return c.NZ == 0 or ((case.op == "min" or case.op == "max")
                       and (case.type == "f32" or case.type == "f64"))
end
return {
  { family = "seg_mark",
    params = { B = 128, R = 16, V = {2, 4}, CH = 8, J = {4, 8}, PF = 1, MINW = {0, 32},
               NZ = {0, 1}, MP = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.R % c.V == 0 and nz_ok(c, case)
    end },
}
